/*
 * kernels_avx512.c - AVX-512 float32 micro-kernels: up to 8 rows x 32 (or 16) columns,
 * 16 zmm accumulators, A broadcast from the packed panel, B loaded as 1-2 vectors per step.
 */
#include "gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f,fma")))

/* Tile of MR rows x NV vectors of 16 floats over k steps (see gemm.h for the layout). */
static inline __attribute__((always_inline)) T512 void tile(int64_t k, const float *a, const float *b,
                                                            float *c, int64_t ldc, const int mr,
                                                            const int nv)
{
	__m512 acc[8][2];
	for (int i = 0; i < mr; i++)
		for (int v = 0; v < nv; v++)
			acc[i][v] = _mm512_setzero_ps();
	for (int64_t p = 0; p < k; p++, a += 8, b += 16 * nv) {
		__m512 b0 = _mm512_loadu_ps(b), b1 = nv > 1 ? _mm512_loadu_ps(b + 16) : b0;
		for (int i = 0; i < mr; i++) {
			__m512 ai = _mm512_set1_ps(a[i]);
			acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
			if (nv > 1)
				acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
		}
	}
	for (int i = 0; i < mr; i++)
		for (int v = 0; v < nv; v++)
			_mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);
}

#define K512(MR, NV)                                                                          \
	static T512 void k_##MR##_##NV(int64_t k, const float *a, const float *b, float *c,       \
	                                int64_t ldc)                                              \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NV);                                                    \
	}
#define K512_ROWS(NV) K512(1, NV) K512(2, NV) K512(3, NV) K512(4, NV) K512(5, NV) K512(6, NV) \
	K512(7, NV) K512(8, NV)
K512_ROWS(1)
K512_ROWS(2)

const struct onnxrun__gemm_kernels onnxrun__gemm_avx512 = {
	ONNXRUN__ISA_AVX512, 8, { 32, 16 },
	{ { k_1_2, k_2_2, k_3_2, k_4_2, k_5_2, k_6_2, k_7_2, k_8_2 },
	  { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1, k_7_1, k_8_1 } },
};
#else
const struct onnxrun__gemm_kernels onnxrun__gemm_avx512 = { ONNXRUN__ISA_SCALAR, 0, { 0, 0 }, { { 0 } } };
#endif
