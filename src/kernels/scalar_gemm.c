/*
 * scalar_gemm.c - plain C float32 micro-kernels: up to 4 rows x 16 (or 8) columns.
 * Portable; the compiler may vectorize them with the baseline ISA.
 */
#include <math.h>

#include "kernels.h"

#if defined(__arm__) && defined(__ARM_FEATURE_FMA) && defined(__ARM_FP) && (__ARM_FP & 4)
/* 32-bit Arm with a single-precision FPU and no float SIMD (Cortex-M4F/M7/M33): each
 * multiply-add is one vfma.f32 (C11 turns contraction off; fmaf asks for the fused
 * operation, which these FPUs have). The 4 x 16 tile does not fit the 32 single registers
 * and spills; a 4 x 4 tile that fits ran the upsampler in 2.4x the instructions (four
 * times the panels, each with its preparation and store), so the tile stays. */
#define MADD(acc, x, y) fmaf((x), (y), (acc))
#else
#define MADD(acc, x, y) ((acc) + (x) * (y))
#endif

/* Tile of MR rows x NR columns over k steps (A panel rows padded to 4). */
static inline __attribute__((always_inline)) void tile(int64_t k, const float *a, const float *b,
                                                       float *c, int64_t ldc, const int mr,
                                                       const int nr)
{
	float acc[4][16];
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++)
			acc[i][j] = 0.0f;
	for (int64_t p = 0; p < k; p++, a += 4, b += nr)
		for (int i = 0; i < mr; i++)
			for (int j = 0; j < nr; j++)
				acc[i][j] = MADD(acc[i][j], a[i], b[j]);
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++)
			c[i * ldc + j] = acc[i][j];
}

#define KS(MR, NR)                                                                            \
	static void k_##MR##_##NR(int64_t k, const float *a, const float *b, float *c, int64_t ldc) \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NR);                                                    \
	}
KS(1, 16) KS(2, 16) KS(3, 16) KS(4, 16)
KS(1, 8) KS(2, 8) KS(3, 8) KS(4, 8)

const struct onnxrun__gemm_kernels onnxrun__gemm_scalar = {
	4, { 16, 8, 8 },
	{ { k_1_16, k_2_16, k_3_16, k_4_16 }, { k_1_8, k_2_8, k_3_8, k_4_8 }, { k_1_8, k_2_8, k_3_8, k_4_8 } },
	{ NULL },
	{ NULL },
	{ NULL },	{ NULL },
};
