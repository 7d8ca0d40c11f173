/*
 * avx2_gemm.c - AVX2+FMA float32 micro-kernels: up to 6 rows x 16 (or 8) columns,
 * 12 ymm accumulators.
 */
#include "kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T256 __attribute__((target("avx2,fma")))

/* Tile of MR rows x NV vectors of 8 floats over k steps (A panel rows padded to 6); named
 * accumulators stay in registers. */
#define ACC_DECL(i) __m256 c##i##0 = _mm256_setzero_ps(), c##i##1 = _mm256_setzero_ps();
#define ACC_STEP(i)                                                                            \
	if (mr > i) {                                                                          \
		const __m256 ai = _mm256_broadcast_ss(a + i);                                  \
		c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);                                    \
		if (nv > 1)                                                                    \
			c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);                            \
	}
#define ACC_STORE(i)                                                                           \
	if (mr > i) {                                                                          \
		_mm256_storeu_ps(c + i * ldc, c##i##0);                                        \
		if (nv > 1)                                                                    \
			_mm256_storeu_ps(c + i * ldc + 8, c##i##1);                            \
	}
#define ACC_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5)

static inline __attribute__((always_inline)) T256 void tile(int64_t k, const float *a, const float *b,
                                                            float *c, int64_t ldc, const int mr,
                                                            const int nv)
{
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += 6, b += 8 * nv) {
		const __m256 b0 = _mm256_loadu_ps(b), b1 = nv > 1 ? _mm256_loadu_ps(b + 8) : b0;
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

#define K256(MR, NV)                                                                          \
	static T256 void k_##MR##_##NV(int64_t k, const float *a, const float *b, float *c,       \
	                                int64_t ldc)                                              \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NV);                                                    \
	}
#define K256_ROWS(NV) K256(1, NV) K256(2, NV) K256(3, NV) K256(4, NV) K256(5, NV) K256(6, NV)
K256_ROWS(1)
K256_ROWS(2)

/* Remainders of at most 4 positions over 2 A panels at once (the table's rem): the 6 rows in
 * the lanes of one vector (a masked load), each column one broadcast B value, 2 x 4
 * independent chains, each output one FMA per step in order as in the tiles above (same
 * bits). The 6 x 8 tile ran 6 chains with half its columns zero for such a remainder. More
 * columns keep the 6 x 8 tile per panel: transposed, 8 columns would read 8 broadcasts per
 * 48 products instead of 6 and 1 load. */
static T256 void rem_2_4(int64_t k, const float *const *a, int np, const float *b, float *c, int64_t ldc,
                         int ncols)
{
	const __m256i rows = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
	const float *a0 = a[0], *a1 = np > 1 ? a[1] : a[0];
	__m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;
	__m256 c10 = c00, c11 = c00, c12 = c00, c13 = c00;
	for (int64_t p = 0; p < k; p++, a0 += 6, a1 += 6, b += 8) {
		const __m256 b0 = _mm256_broadcast_ss(b), b1 = _mm256_broadcast_ss(b + 1);
		const __m256 b2 = _mm256_broadcast_ss(b + 2), b3 = _mm256_broadcast_ss(b + 3);
		const __m256 v0 = _mm256_maskload_ps(a0, rows), v1 = _mm256_maskload_ps(a1, rows);
		c00 = _mm256_fmadd_ps(v0, b0, c00);
		c01 = _mm256_fmadd_ps(v0, b1, c01);
		c02 = _mm256_fmadd_ps(v0, b2, c02);
		c03 = _mm256_fmadd_ps(v0, b3, c03);
		c10 = _mm256_fmadd_ps(v1, b0, c10);
		c11 = _mm256_fmadd_ps(v1, b1, c11);
		c12 = _mm256_fmadd_ps(v1, b2, c12);
		c13 = _mm256_fmadd_ps(v1, b3, c13);
	}
	float t[2][4][8];
	_mm256_storeu_ps(t[0][0], c00);
	_mm256_storeu_ps(t[0][1], c01);
	_mm256_storeu_ps(t[0][2], c02);
	_mm256_storeu_ps(t[0][3], c03);
	_mm256_storeu_ps(t[1][0], c10);
	_mm256_storeu_ps(t[1][1], c11);
	_mm256_storeu_ps(t[1][2], c12);
	_mm256_storeu_ps(t[1][3], c13);
	for (int g = 0; g < np; g++)
		for (int i = 0; i < 6; i++)
			for (int jj = 0; jj < ncols; jj++)
				c[(g * 6 + i) * ldc + jj] = t[g][jj][i];
}

static T256 void rem(int64_t k, const float *const *a, int np, int nc, const float *b, float *c, int64_t ldc)
{
	if (nc <= 4) {
		rem_2_4(k, a, np, b, c, ldc, nc);
		return;
	}
	for (int g = 0; g < np; g++)
		k_6_1(k, a[g], b, c + g * 6 * ldc, ldc);
}

const struct onnxrun__gemm_kernels onnxrun__gemm_avx2 = {
	6, { 16, 8, 8 },
	{ { k_1_2, k_2_2, k_3_2, k_4_2, k_5_2, k_6_2 }, { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1 },
	  { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1 } },
	{ NULL },
	{ NULL },
	{ NULL },	{ NULL },
	2, rem,
#ifndef ONNXRUN_BAREMETAL
	NULL, /* no skip_quarter tile (kernels.h) */
#endif
};
#endif
