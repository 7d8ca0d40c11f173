/*
 * avx2.c - the AVX2+FMA ISA's table: the generic routines compiled for AVX2 (the
 * micro-kernels are in avx2_gemm.c; it has no in-place B kernels, so pack_rows is never
 * called and stays the generic one).
 */
#include "generic.h"
#include "parts.h"

#if defined(__x86_64__)

#define T256 __attribute__((target("avx2,fma")))

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_avx2;

static T256 void pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                      const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	generic_pack(kp, xg, nt, nr, runs, nrun, cp, bp);
}

static T256 void pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                           const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	generic_pack_rows(kp, xg, nt, nr, cp, bp, brows);
}

/* The store is the generic body compiled for the baseline ISA, as the AVX2 phase path has
 * always used it. */
static void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	generic_store(kp, tile, nr, mr, runs, nrun, y, ydelta, bias);
}

static void store_fence(void)
{
}

static T256 void gather(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows, float *yrow,
                        int64_t o_lo, int64_t o_hi, float bias, float *tmp, int64_t zoff, int64_t zend)
{
	generic_gather(kg, zrows, nrows, yrow, o_lo, o_hi, bias, tmp, zoff, zend);
}

const struct onnxrun__kernels onnxrun__kernels_avx2 = {
	.isa = ONNXRUN__ISA_AVX2,
	.name = "avx2",
	.gemm = &onnxrun__gemm_avx2,
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = NULL, .store = store, .store_pair = NULL,
	           .store_fence = store_fence },
	.col2im_gather = gather,
	.dw_rows = onnxrun__dw_rows_avx2,
	.f64 = &onnxrun__f64_avx2,
	.widen = onnxrun__widen_avx2,
	.narrow = onnxrun__narrow_avx2,
	.d2s = { .row2 = onnxrun__d2s_row2_avx2, .row4 = NULL, .row2_stream = NULL, .row4_stream = NULL,
	         .stream_fence = NULL },
};

#endif
