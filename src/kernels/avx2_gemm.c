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

const struct onnxrun__gemm_kernels onnxrun__gemm_avx2 = {
	6, { 16, 8, 8 },
	{ { k_1_2, k_2_2, k_3_2, k_4_2, k_5_2, k_6_2 }, { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1 },
	  { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1 } },
	{ NULL },
	{ NULL },
	{ NULL },	{ NULL },
	0, NULL, /* no rem: remainders run fn[2] per A panel */
};
#endif
