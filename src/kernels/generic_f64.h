/*
 * generic_f64.h - plain C body of the float64 ConvTranspose tile store (kernels.h, struct
 * onnxrun__f64_kernels), inlined into each ISA's store (scalar_f64.c, and the AVX2 and
 * AVX-512 stores for the strides they do not vectorise) so that each copy is compiled for
 * that ISA (generic.h says why); and the x86 tables' store entries, plain and streamed.
 */
#ifndef ONNXRUN_KERNELS_GENERIC_F64_H
#define ONNXRUN_KERNELS_GENERIC_F64_H

#include "generic.h"

/* Before each loop over a tile's channels or vectors: unrolled whole (their counts are
 * constants once the body is inlined), so that the accumulator array becomes registers. Left
 * to itself gcc 12 kept the array (sized for the largest tile) on the stack for tiles of more
 * than 8 vectors and copied every accumulator through it on entry and exit of each call. */
#if defined(__GNUC__)
#define F64_UNROLL _Pragma("GCC unroll 16")
#else
#define F64_UNROLL
#endif

/* How far ahead of its step a tile of 4 or more channels fetches the packed weights (x86
 * tiles): weights beyond L2 (dcgan_512's 16 MiB) stream from L3 through the tiles, once per
 * block of panels, and waiting for them cost the 8x2 tile about a tenth of its rate (50 of
 * 58.6 GFLOP/s in a loop over a 16 MiB weight stream, 58 from L2). 2 KiB: 32 steps of 8
 * channels (bench/README.md, "Measurements behind fixed choices"). */
#define F64_PREFETCH_BYTES 2048

/* The x86 tables' store entries (kernels.h), plain and non-temporal, over the ISA file's
 * store_body and store_group_body (their last argument: stream), each compiled with ATTR (the
 * file's target attribute). */
#define F64_STORE_ENTRIES(ATTR)                                                                           \
	ATTR static void store(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0, int64_t plane, \
	                       int64_t sl, const double *bias)                                                \
	{                                                                                                 \
		store_body(tile, nw, mc, uc, y0, plane, sl, bias, false);                                 \
	}                                                                                                 \
	ATTR static void store_stream(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0,        \
	                              int64_t plane, int64_t sl, const double *bias)                      \
	{                                                                                                 \
		store_body(tile, nw, mc, uc, y0, plane, sl, bias, true);                                  \
	}                                                                                                 \
	ATTR static void store_group(const double *tile, int64_t accn, int64_t nw, int64_t mc, int64_t uc,      \
	                             double *y0, int64_t plane, int64_t sg, const double *bias)           \
	{                                                                                                 \
		store_group_body(tile, accn, nw, mc, uc, y0, plane, sg, bias, false);                     \
	}                                                                                                 \
	ATTR static void store_group_stream(const double *tile, int64_t accn, int64_t nw, int64_t mc,           \
	                                    int64_t uc, double *y0, int64_t plane, int64_t sg,            \
	                                    const double *bias)                                           \
	{                                                                                                 \
		store_group_body(tile, accn, nw, mc, uc, y0, plane, sg, bias, true);                      \
	}

ONNXRUN__INLINE void generic_f64_store(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0,
                                       int64_t plane, int64_t sl, const double *bias)
{
	for (int64_t m = 0; m < mc; m++) {
		const double b = bias ? bias[m] : 0.0, *t = tile + m * nw;
		double *d = y0 + m * plane;
		for (int64_t e = 0; e < uc; e++)
			d[e * sl] = t[e] + b;
	}
}

#endif
