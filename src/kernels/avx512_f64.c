/*
 * avx512_f64.c - the AVX-512 float64 ConvTranspose tiles and store (kernels.h, struct
 * onnxrun__f64_kernels).
 */
#include "generic_f64.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

/* AVX-512: MB x NV vectors of 8 doubles in registers (MB*NV <= 16 of the 32). x row p at
 * xrows[p], or (xrows NULL) at xb + p*nw. */
T512 ONNXRUN__INLINE void tile_avx512_body(int mb, int nv, int64_t kk, const double *xb, const double *const *xrows,
                                           const double *wb, double *tile)
{
	__m512d acc[ONNXRUN__F64_MB_MAX][8], xv[8];
	for (int m = 0; m < mb; m++)
		for (int v = 0; v < nv; v++)
			acc[m][v] = _mm512_loadu_pd(tile + (m * nv + v) * 8);
	for (int64_t p = 0; p < kk; p++) {
		const double *x = xrows ? xrows[p] : xb + p * 8 * nv, *w = wb + p * mb;
		for (int v = 0; v < nv; v++)
			xv[v] = _mm512_loadu_pd(x + 8 * v);
		for (int m = 0; m < mb; m++) {
			const __m512d wv = _mm512_set1_pd(w[m]);
			for (int v = 0; v < nv; v++)
				acc[m][v] = _mm512_fmadd_pd(wv, xv[v], acc[m][v]);
		}
	}
	for (int m = 0; m < mb; m++)
		for (int v = 0; v < nv; v++)
			_mm512_storeu_pd(tile + (m * nv + v) * 8, acc[m][v]);
}

#define F64_TILE_AVX512(MB, NV)                                                                              \
	T512 static void tile_avx512_##MB##x##NV(int64_t kk, const double *xb, const double *wb, double *tile) \
	{                                                                                                      \
		tile_avx512_body(MB, NV, kk, xb, NULL, wb, tile);                                              \
	}                                                                                                      \
	T512 static void ind_avx512_##MB##x##NV(int64_t kk, const double *const *xrows, const double *wb,      \
	                                        double *tile)                                                  \
	{                                                                                                      \
		tile_avx512_body(MB, NV, kk, NULL, xrows, wb, tile);                                           \
	}
F64_TILE_AVX512(8, 1)
F64_TILE_AVX512(8, 2)
F64_TILE_AVX512(4, 1)
F64_TILE_AVX512(4, 2)
F64_TILE_AVX512(4, 4)
F64_TILE_AVX512(1, 1)
F64_TILE_AVX512(1, 2)
F64_TILE_AVX512(1, 4)
F64_TILE_AVX512(1, 8)

/* Stride 1: masked vector adds and stores. Strides 2 and 4: 8/sl tile values spread over an
 * 8-double window (permute), only the phase's lanes written (masked store). Else the generic store. */
T512 static void store(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0, int64_t plane, int64_t sl,
                       const double *bias)
{
	if (sl != 1 && sl != 2 && sl != 4) {
		generic_f64_store(tile, nw, mc, uc, y0, plane, sl, bias);
		return;
	}
	const int per = (int)(8 / sl); /* tile values per 8-double window */
	const __m512i spread = sl == 1 ? _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7) :
	                       sl == 2 ? _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3) :
	                                 _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1);
	const unsigned lanes = sl == 1 ? 0xFF : sl == 2 ? 0x55 : 0x11;
	for (int64_t m = 0; m < mc; m++) {
		const __m512d b = _mm512_set1_pd(bias ? bias[m] : 0.0);
		const double *t = tile + m * nw;
		double *d = y0 + m * plane;
		for (int64_t e = 0; e < uc; e += per, d += 8) {
			const int rem = uc - e < per ? (int)(uc - e) : per;
			const __m512d v = _mm512_maskz_loadu_pd((__mmask8)((1u << rem) - 1), t + e);
			const unsigned keep = rem == per ? lanes : lanes & ((1u << (rem * sl)) - 1);
			_mm512_mask_storeu_pd(d, (__mmask8)keep, _mm512_add_pd(_mm512_permutexvar_pd(spread, v), b));
		}
	}
}

/* The 4-wide AVX2 tiles serve rows of at most 4 positions. */
static const struct onnxrun__f64_tile tiles[] = {
	{ 8, 8, tile_avx512_8x1, ind_avx512_8x1 },
	{ 8, 16, tile_avx512_8x2, ind_avx512_8x2 },
	{ 4, 4, onnxrun__f64_tile_avx2_4x1, onnxrun__f64_ind_avx2_4x1 },
	{ 4, 8, tile_avx512_4x1, ind_avx512_4x1 },
	{ 4, 16, tile_avx512_4x2, ind_avx512_4x2 },
	{ 4, 32, tile_avx512_4x4, ind_avx512_4x4 },
	{ 1, 4, onnxrun__f64_tile_avx2_1x1, onnxrun__f64_ind_avx2_1x1 },
	{ 1, 8, tile_avx512_1x1, ind_avx512_1x1 },
	{ 1, 16, tile_avx512_1x2, ind_avx512_1x2 },
	{ 1, 32, tile_avx512_1x4, ind_avx512_1x4 },
	{ 1, 64, tile_avx512_1x8, ind_avx512_1x8 },
};

const struct onnxrun__f64_kernels onnxrun__f64_avx512 = { tiles, (int)(sizeof tiles / sizeof tiles[0]), store };

#endif
