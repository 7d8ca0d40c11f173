/*
 * neon_gemm.c - AArch64 NEON float32 micro-kernels: up to 8 rows x 12 (or 8, or 4) columns.
 * A step loads the 8 packed A values of the step as two vectors and the B row as up to three
 * vectors of 4 floats, then multiplies each B vector by each A value with a lane-indexed
 * fused multiply-add (fmla v.4s, v.4s, v.s[lane]), so A needs no broadcast: 24 accumulators
 * + 3 B vectors + 2 A vectors = 29 of the 32 vector registers, 24 fmla per 5 loads.
 */
#include "kernels.h"

#if defined(__aarch64__)
#include <arm_neon.h>

/* Rows of the packed A panel (the kernels' mr_max). */
#define NEON_MR 8

/* Tile of mr rows x nv vectors of 4 floats (see kernels.h for the layout). The accumulators
 * are named variables (not an array) so they stay in registers; the rows and vectors beyond
 * mr/nv are dead code once mr and nv are constants. Row i takes its A value from lane i % 4
 * of a0 (rows 0-3) or a1 (rows 4-7). */
#define ACC_DECL(i) float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define ACC_STEP(i, AV, L)                                                                     \
	if (mr > i) {                                                                          \
		c##i##0 = vfmaq_laneq_f32(c##i##0, b0, AV, L);                                 \
		if (nv > 1)                                                                    \
			c##i##1 = vfmaq_laneq_f32(c##i##1, b1, AV, L);                         \
		if (nv > 2)                                                                    \
			c##i##2 = vfmaq_laneq_f32(c##i##2, b2, AV, L);                         \
	}
#define ACC_STORE(i)                                                                           \
	if (mr > i) {                                                                          \
		vst1q_f32(c + i * ldc, c##i##0);                                               \
		if (nv > 1)                                                                    \
			vst1q_f32(c + i * ldc + 4, c##i##1);                                   \
		if (nv > 2)                                                                    \
			vst1q_f32(c + i * ldc + 8, c##i##2);                                   \
	}
#define ACC_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define STEP_ALL                                                                               \
	ACC_STEP(0, a0, 0) ACC_STEP(1, a0, 1) ACC_STEP(2, a0, 2) ACC_STEP(3, a0, 3)             \
	ACC_STEP(4, a1, 0) ACC_STEP(5, a1, 1) ACC_STEP(6, a1, 2) ACC_STEP(7, a1, 3)

/* One k step from the A group at a and the B row at b: loads, then the fmla of every live
 * accumulator (an A vector holding only padding rows is not loaded). */
#define STEP(a, b)                                                                             \
	do {                                                                                   \
		const float32x4_t a0 = vld1q_f32(a), a1 = mr > 4 ? vld1q_f32((a) + 4) : a0;    \
		const float32x4_t b0 = vld1q_f32(b);                                           \
		const float32x4_t b1 = nv > 1 ? vld1q_f32((b) + 4) : b0;                       \
		const float32x4_t b2 = nv > 2 ? vld1q_f32((b) + 8) : b0;                       \
		STEP_ALL                                                                       \
	} while (0)

/* B packed: row p at b + p*4*nv. */
static inline __attribute__((always_inline)) void tile(int64_t k, const float *a, const float *b, float *c,
                                                       int64_t ldc, const int mr, const int nv)
{
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += NEON_MR, b += 4 * nv)
		STEP(a, b);
	ACC_ALL(ACC_STORE)
}

/* The wide tile with B row p at brows[p] (read in place). */
static inline __attribute__((always_inline)) void tile_ind(int64_t k, const float *a, const float *const *brows,
                                                           float *c, int64_t ldc, const int mr)
{
	const int nv = 3;
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += NEON_MR)
		STEP(a, brows[p]);
	ACC_ALL(ACC_STORE)
}

/* The wide tile with B row p at base + rel[p] bytes (the staged copy of x). */
static inline __attribute__((always_inline)) void tile_rel(int64_t k, const float *a, const char *base,
                                                           const onnxrun__krel *rel, float *c, int64_t ldc, const int mr)
{
	const int nv = 3;
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += NEON_MR)
		STEP(a, (const float *)(const void *)(base + rel[p]));
	ACC_ALL(ACC_STORE)
}

#define KN(MR, NV)                                                                            \
	static void k_##MR##_##NV(int64_t k, const float *a, const float *b, float *c, int64_t ldc) \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NV);                                                    \
	}
#define KN_ROWS(NV) KN(1, NV) KN(2, NV) KN(3, NV) KN(4, NV) KN(5, NV) KN(6, NV) KN(7, NV) KN(8, NV)
KN_ROWS(1)
KN_ROWS(2)
KN_ROWS(3)

#define KNI(MR)                                                                               \
	static void ki_##MR(int64_t k, const float *a, const float *const *brows, float *c, int64_t ldc) \
	{                                                                                         \
		tile_ind(k, a, brows, c, ldc, MR);                                                \
	}                                                                                         \
	static void kr_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, float *c, \
	                    int64_t ldc)                                                          \
	{                                                                                         \
		tile_rel(k, a, base, rel, c, ldc, MR);                                            \
	}
KNI(1) KNI(2) KNI(3) KNI(4) KNI(5) KNI(6) KNI(7) KNI(8)

/* No masked loads in NEON: no half-row kernels (ind2 NULL; the phase path packs instead);
 * its 12-wide rows do not split into two vector halves (rel2 NULL). */
const struct onnxrun__gemm_kernels onnxrun__gemm_neon = {
	NEON_MR, { 12, 8, 4 },
	{ { k_1_3, k_2_3, k_3_3, k_4_3, k_5_3, k_6_3, k_7_3, k_8_3 },
	  { k_1_2, k_2_2, k_3_2, k_4_2, k_5_2, k_6_2, k_7_2, k_8_2 },
	  { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1, k_7_1, k_8_1 } },
	{ ki_1, ki_2, ki_3, ki_4, ki_5, ki_6, ki_7, ki_8 },
	{ NULL },
	{ kr_1, kr_2, kr_3, kr_4, kr_5, kr_6, kr_7, kr_8 },	{ NULL },
	0, NULL, /* no rem: remainders run fn[2] per A panel */
#ifndef ONNXRUN_BAREMETAL
	NULL, /* no skip_quarter tile (kernels.h) */
#endif
};
#endif
