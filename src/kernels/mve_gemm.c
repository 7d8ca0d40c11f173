/*
 * mve_gemm.c - Helium (MVE) float32 micro-kernels: up to 6 rows x 32 (or 16, or 8) columns,
 * sized for MVE's 8 vector registers (q0-q7) of 4 floats. MVE multiplies a vector by a
 * scalar held in a general-purpose register (vfma.f32 Qd, Qn, Rm), so A values are plain
 * word loads and need no vector register: only accumulators and B vectors live in q0-q7.
 * A tile is computed in blocks of 8 columns; a block's pass covers 3 rows: 3 rows x 2
 * vectors = 6 accumulators + 2 B vectors = 8 registers. A 4-6 row tile is two passes over k
 * (rows 0-2, then 3-5), each output still one fused multiply-add per step in k order.
 * The 32-wide tile also reads B rows in place (row pointers, `ind`) and at base + offset
 * (`rel`), so the phase path need not pack panels. The three-row loop is inline assembly
 * (pass8); the 1-2 row remainders are intrinsics.
 */
#include "kernels.h"

#if ONNXRUN__HAVE_MVE
#include <arm_mve.h>

_Static_assert(sizeof(onnxrun__krel) == 4, "the base + offset loop loads 32-bit offsets (ASM_REL)");

/* Rows of the packed A panel (the kernels' mr_max). */
#define MVE_MR 6

#define KINLINE static inline __attribute__((always_inline))

/* How a kernel finds B row p: packed (b + p*nr), row pointers, or base + byte offset. */
enum brow_mode { B_PACKED, B_ROWS, B_REL };

struct bsrc {
	const float *b;
	const float *const *rows;
	const char *base;
	const onnxrun__krel *rel;
};

KINLINE const float *brow(enum brow_mode mode, const struct bsrc *s, int32_t p, int nr)
{
	if (mode == B_ROWS)
		return s->rows[p];
	if (mode == B_REL)
		return (const float *)(const void *)(s->base + s->rel[p]);
	return s->b + p * nr;
}

/* The loop of three rows of an 8-wide tile in assembly, so that it is the same on every
 * compiler: per k step, two B vector loads (each post-incremented or from the step's row
 * address), the three A values with one ldrd (post-incremented to the next group) and one
 * ldr, six vfma, and the low-overhead loop branch (le): 10 instructions (11 with B row
 * pointers, 12 with base + offset) for 24 multiply-adds, every value in a register (gcc 12
 * compiles the intrinsic version to 14, with a register copy, a separate pointer add and
 * three single loads). Accumulators and B vectors are the asm's vector operands (the
 * compiler keeps the 8 in q0-q7); k > 0 (dls with 0 would run the body once). */
#define ASM_STEP_FMAS                                                                                       \
	"ldr %[t2], [%[a], #8]\n\t"                                                                          \
	"ldrd %[t0], %[t1], [%[a]], #24\n\t"                                                                 \
	"vfma.f32 %q[c00], %q[b0], %[t0]\n\t"                                                                \
	"vfma.f32 %q[c01], %q[b1], %[t0]\n\t"                                                                \
	"vfma.f32 %q[c10], %q[b0], %[t1]\n\t"                                                                \
	"vfma.f32 %q[c11], %q[b1], %[t1]\n\t"                                                                \
	"vfma.f32 %q[c20], %q[b0], %[t2]\n\t"                                                                \
	"vfma.f32 %q[c21], %q[b1], %[t2]\n\t"                                                                \
	"le lr, 1b"
#define ASM_OUTS                                                                                            \
	[c00] "+w"(c00), [c01] "+w"(c01), [c10] "+w"(c10), [c11] "+w"(c11), [c20] "+w"(c20), [c21] "+w"(c21), \
	[b0] "=&w"(b0), [b1] "=&w"(b1), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [a] "+r"(a)

/* One 3-row pass's loop per way of finding B (the offsets are immediates, so one variant
 * per B row stride or column offset). Packed: columns j..j+7 of row p at b + p*nr (b already
 * at column j), post-incremented by the row. Row pointers: row p at rows[p], columns at
 * byte offset OFF = 4j. Base + offset: row p at base + rel[p] (base already at column j). */
#define ASM_PACKED(STEP)                                                                                    \
	__asm__("dls lr, %[k]\n"                                                                             \
	        "1:\n\t"                                                                                     \
	        "vldrw.u32 %q[b1], [%[b], #16]\n\t"                                                          \
	        "vldrw.u32 %q[b0], [%[b]], #" #STEP "\n\t" ASM_STEP_FMAS                                     \
	        : ASM_OUTS, [b] "+r"(b)                                                                      \
	        : [k] "r"(k)                                                                                 \
	        : "lr", "memory")
#define ASM_ROWS(OFF)                                                                                       \
	__asm__("dls lr, %[k]\n"                                                                             \
	        "1:\n\t"                                                                                     \
	        "ldr %[b], [%[rows]], #4\n\t"                                                                \
	        "vldrw.u32 %q[b0], [%[b], #" #OFF "]\n\t"                                                    \
	        "vldrw.u32 %q[b1], [%[b], #" #OFF " + 16]\n\t" ASM_STEP_FMAS                                 \
	        : ASM_OUTS, [b] "=&r"(b), [rows] "+r"(rows)                                                  \
	        : [k] "r"(k)                                                                                 \
	        : "lr", "memory")
#define ASM_REL                                                                                             \
	__asm__("dls lr, %[k]\n"                                                                             \
	        "1:\n\t"                                                                                     \
	        "ldr %[b], [%[rel]], #4\n\t" /* the offset (32-bit on bare metal) */                         \
	        "add %[b], %[base]\n\t"                                                                      \
	        "vldrw.u32 %q[b0], [%[b]]\n\t"                                                               \
	        "vldrw.u32 %q[b1], [%[b], #16]\n\t" ASM_STEP_FMAS                                            \
	        : ASM_OUTS, [b] "=&r"(b), [rel] "+r"(rel)                                                    \
	        : [k] "r"(k), [base] "r"(s->base)                                                            \
	        : "lr", "memory")

/* Rows [r0, r0 + n) (n <= 3) of columns j..j+7 of an nr-wide tile (s already at column j
 * for packed and base + offset B): accumulators named so they stay in registers; rows
 * beyond n are dead code once n is a constant. The loop counter is 32-bit (k * MVE_MR
 * floats fit in a 32-bit address space). */
KINLINE void pass8(enum brow_mode mode, const struct bsrc *s, int32_t k, const float *a, int r0, int n, float *c,
                   int32_t ldc, const int nr, const int j)
{
	float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
	a += r0;
	if (n == 3 && k > 0) {
		float32x4_t b0, b1;
		uint32_t t0, t1, t2;
		if (mode == B_PACKED) {
			const float *b = s->b;
			if (nr == 8)
				ASM_PACKED(32);
			else if (nr == 16)
				ASM_PACKED(64);
			else
				ASM_PACKED(128);
		} else if (mode == B_ROWS) {
			const float *const *rows = s->rows;
			const float *b;
			if (j == 0)
				ASM_ROWS(0);
			else if (j == 8)
				ASM_ROWS(32);
			else if (j == 16)
				ASM_ROWS(64);
			else
				ASM_ROWS(96);
		} else {
			const onnxrun__krel *rel = s->rel;
			const char *b;
			ASM_REL;
		}
	} else {
		for (int32_t p = 0; p < k; p++, a += MVE_MR) {
			const float *b = brow(mode, s, p, nr) + (mode == B_ROWS ? j : 0);
			const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
			c00 = vfmaq_n_f32(c00, b0, a[0]);
			c01 = vfmaq_n_f32(c01, b1, a[0]);
			if (n > 1) {
				c10 = vfmaq_n_f32(c10, b0, a[1]);
				c11 = vfmaq_n_f32(c11, b1, a[1]);
			}
		}
	}
	c += r0 * ldc;
	vst1q_f32(c, c00);
	vst1q_f32(c + 4, c01);
	if (n > 1) {
		vst1q_f32(c + ldc, c10);
		vst1q_f32(c + ldc + 4, c11);
	}
	if (n > 2) {
		vst1q_f32(c + 2 * ldc, c20);
		vst1q_f32(c + 2 * ldc + 4, c21);
	}
}

/* mr rows of an nr-wide tile (nr a multiple of 8; see kernels.h for the layout): 8-column
 * blocks, each its own pass(es) over k reading columns j..j+7 of every B row. Wide tiles
 * (32) mean few panels per output row: the phase path's per-panel work (planning the
 * panel, row pointers, the store call) is the larger cost on a Cortex-M. */
KINLINE void tile8(enum brow_mode mode, const struct bsrc *s, int64_t k, const float *a, float *c, int64_t ldc,
                   const int mr, const int nr)
{
	for (int j = 0; j < nr; j += 8) {
		struct bsrc sj = *s;
		if (mode == B_PACKED)
			sj.b += j;
		else if (mode == B_REL)
			sj.base += j * (int)sizeof(float);
		pass8(mode, &sj, (int32_t)k, a, 0, mr < 3 ? mr : 3, c + j, (int32_t)ldc, nr, j);
		if (mr > 3)
			pass8(mode, &sj, (int32_t)k, a, 3, mr - 3, c + j, (int32_t)ldc, nr, j);
	}
}

#define KM(MR)                                                                                                \
	static void k32_##MR(int64_t k, const float *a, const float *b, float *c, int64_t ldc)                \
	{                                                                                                     \
		const struct bsrc s = { b, NULL, NULL, NULL };                                                \
		tile8(B_PACKED, &s, k, a, c, ldc, MR, 32);                                                    \
	}                                                                                                     \
	static void k16_##MR(int64_t k, const float *a, const float *b, float *c, int64_t ldc)                \
	{                                                                                                     \
		const struct bsrc s = { b, NULL, NULL, NULL };                                                \
		tile8(B_PACKED, &s, k, a, c, ldc, MR, 16);                                                    \
	}                                                                                                     \
	static void k8_##MR(int64_t k, const float *a, const float *b, float *c, int64_t ldc)                 \
	{                                                                                                     \
		const struct bsrc s = { b, NULL, NULL, NULL };                                                \
		tile8(B_PACKED, &s, k, a, c, ldc, MR, 8);                                                     \
	}                                                                                                     \
	static void ki_##MR(int64_t k, const float *a, const float *const *brows, float *c, int64_t ldc)      \
	{                                                                                                     \
		const struct bsrc s = { NULL, brows, NULL, NULL };                                            \
		tile8(B_ROWS, &s, k, a, c, ldc, MR, 32);                                                      \
	}                                                                                                     \
	static void kr_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, float *c,  \
	                    int64_t ldc)                                                                      \
	{                                                                                                     \
		const struct bsrc s = { NULL, NULL, base, rel };                                              \
		tile8(B_REL, &s, k, a, c, ldc, MR, 32);                                                       \
	}
KM(1) KM(2) KM(3) KM(4) KM(5) KM(6)

/* No masked half-row loads (ind2 NULL: the phase path packs those panels); the wide rows
 * are not split over two bases (rel2 NULL). */
const struct onnxrun__gemm_kernels onnxrun__gemm_mve = {
	MVE_MR, { 32, 16, 8 },
	{ { k32_1, k32_2, k32_3, k32_4, k32_5, k32_6 }, { k16_1, k16_2, k16_3, k16_4, k16_5, k16_6 },
	  { k8_1, k8_2, k8_3, k8_4, k8_5, k8_6 } },
	{ ki_1, ki_2, ki_3, ki_4, ki_5, ki_6 },
	{ NULL },
	{ kr_1, kr_2, kr_3, kr_4, kr_5, kr_6 },	{ NULL },
	0, NULL, /* no rem: remainders run fn[2] per A panel */
#ifndef ONNXRUN_BAREMETAL
	NULL, /* no skip_quarter tile (kernels.h) */
#endif
};
#endif
