/*
 * scalar_gemm.c - plain C float32 micro-kernels: up to 4 rows x 16 (or 8) columns.
 * Portable; the compiler may vectorize them with the baseline ISA.
 *
 * On an M-profile Arm CPU with a floating-point unit (Cortex-M4F, M7, M33, M55 without
 * Helium's use) the tile is computed in blocks of 4 columns, 16 sums in named variables with
 * fused multiply-adds: the FPU has 32 single-precision registers and no vector ISA, and a
 * 4 x 16 tile's 64 sums were kept on the stack (a 476-byte frame, every multiply-add a
 * vmul.f32 + vadd.f32 with loads and stores between: docs/kernels.md, Cortex-M4).
 */
#include "kernels.h"

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FEATURE_FMA)
#define SCALAR_MCU_BLOCKS 1
#else
#define SCALAR_MCU_BLOCKS 0
#endif

#if SCALAR_MCU_BLOCKS
/* Columns j0..j0+3 of an mr-row tile: 16 sums + 4 B values + 1 A value in s0-s31, each sum
 * one fused multiply-add per k step in k order. */
#define MCU_ROW(i)                                                                              \
	if (mr > i) {                                                                           \
		const float ai = a[i];                                                          \
		c##i##0 = __builtin_fmaf(ai, b0, c##i##0);                                      \
		c##i##1 = __builtin_fmaf(ai, b1, c##i##1);                                      \
		c##i##2 = __builtin_fmaf(ai, b2, c##i##2);                                      \
		c##i##3 = __builtin_fmaf(ai, b3, c##i##3);                                      \
	}
#define MCU_STORE(i)                                                                            \
	if (mr > i) {                                                                           \
		c[i * ldc + 0] = c##i##0;                                                       \
		c[i * ldc + 1] = c##i##1;                                                       \
		c[i * ldc + 2] = c##i##2;                                                       \
		c[i * ldc + 3] = c##i##3;                                                       \
	}
static inline __attribute__((always_inline)) void block4(int64_t k, const float *a, const float *b, float *c,
                                                         int64_t ldc, const int mr, const int32_t nr)
{
	float c00 = 0.0f, c01 = 0.0f, c02 = 0.0f, c03 = 0.0f, c10 = 0.0f, c11 = 0.0f, c12 = 0.0f, c13 = 0.0f;
	float c20 = 0.0f, c21 = 0.0f, c22 = 0.0f, c23 = 0.0f, c30 = 0.0f, c31 = 0.0f, c32 = 0.0f, c33 = 0.0f;
	for (int32_t p = 0; p < (int32_t)k; p++, a += 4, b += nr) {
		const float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
		MCU_ROW(0) MCU_ROW(1) MCU_ROW(2) MCU_ROW(3)
	}
	MCU_STORE(0) MCU_STORE(1) MCU_STORE(2) MCU_STORE(3)
}
/* One block function per row count, shared by both widths (the B row stride is a run-time
 * value): a quarter of the code of one copy per kernel, which the -Os flash build needs. */
#define MCU_BLOCK(MR)                                                                           \
	static __attribute__((noinline)) void block4_##MR(int64_t k, const float *a, const float *b, \
	                                                  float *c, int64_t ldc, int32_t nr)     \
	{                                                                                       \
		block4(k, a, b, c, ldc, MR, nr);                                                \
	}
MCU_BLOCK(1) MCU_BLOCK(2) MCU_BLOCK(3) MCU_BLOCK(4)
#endif

/* Tile of MR rows x NR columns over k steps (A panel rows padded to 4). */
static inline __attribute__((always_inline)) void tile(int64_t k, const float *a, const float *b,
                                                       float *c, int64_t ldc, const int mr,
                                                       const int nr)
{
#if SCALAR_MCU_BLOCKS
	for (int j0 = 0; j0 < nr; j0 += 4)
		(mr == 1 ? block4_1 : mr == 2 ? block4_2 : mr == 3 ? block4_3 : block4_4)(k, a, b + j0, c + j0, ldc, nr);
#else
	float acc[4][16];
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++)
			acc[i][j] = 0.0f;
	for (int64_t p = 0; p < k; p++, a += 4, b += nr)
		for (int i = 0; i < mr; i++)
			for (int j = 0; j < nr; j++)
				acc[i][j] += a[i] * b[j];
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++)
			c[i * ldc + j] = acc[i][j];
#endif
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
	0, NULL, /* no rem: remainders run fn[2] per A panel */
#ifndef ONNXRUN_BAREMETAL
	NULL, /* no skip_quarter tile (kernels.h) */
#endif
};
