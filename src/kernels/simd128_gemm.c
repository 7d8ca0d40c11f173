/*
 * simd128_gemm.c - WebAssembly SIMD128 float32 micro-kernels: up to SIMD128_MR rows x 16 (or
 * 8, 4) columns. SIMD128 has no fused multiply-add, so a step is a multiply and an add per
 * accumulator (the relaxed SIMD build fuses them: SIMD128_MADD). The tile is 2 rows x 4 vectors: 8
 * accumulators, 4 B vectors and one broadcast A value. Engines on x86-64 hold v128 values in
 * the 16 xmm registers and need one more for each product; a tile of 12 accumulators (6 x 8)
 * spilled to the stack in V8 and ran at half the rate of this one, which also beat 4 x 8 and
 * 3 x 8 (one A broadcast per 4 vectors of B instead of per 2).
 */
#include "kernels.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

/* acc + a * b. Plain SIMD128: a multiply and an add (two roundings). The relaxed SIMD build
 * (-mrelaxed-simd, js/CMakeLists.txt): f32x4.relaxed_madd, which engines run as one fused
 * multiply-add where the CPU has FMA (one rounding) and as mul + add elsewhere; results
 * differ from the plain build in the last bits (docs/web.md). clang 14 names it
 * __builtin_wasm_fma_f32x4 and writes an early opcode that js/tools/relaxed_opcodes.mjs
 * rewrites; operands in the final instruction's order: a * b + c. */
#if defined(__wasm_relaxed_simd__)
#define SIMD128_MADD(acc, a, b) __builtin_wasm_fma_f32x4((a), (b), (acc))
#else
#define SIMD128_MADD(acc, a, b) wasm_f32x4_add((acc), wasm_f32x4_mul((a), (b)))
#endif

#define SIMD128_MR 2 /* rows of the A panel (mr_max) */
#define SIMD128_NV 4 /* vectors of 4 floats in a wide tile row (nr[0] = 16) */

/* The tile's loop, B row p at the float pointer BROW(p): c[i*ldc + 4v + e] = sum over p,
 * ascending, of a[p*SIMD128_MR + i] * B[p][4v + e], one SIMD128_MADD per step. mr
 * and nv are constants once inlined, so the arrays live in registers. */
#define TILE_LOOP(BROW)                                                                         \
	v128_t acc[SIMD128_MR][SIMD128_NV];                                                     \
	for (int i = 0; i < mr; i++)                                                            \
		for (int v = 0; v < nv; v++)                                                    \
			acc[i][v] = wasm_f32x4_splat(0.0f);                                     \
	for (int64_t p = 0; p < k; p++, a += SIMD128_MR) {                                      \
		const float *brow = (BROW);                                                     \
		v128_t bv[SIMD128_NV];                                                          \
		for (int v = 0; v < nv; v++)                                                    \
			bv[v] = wasm_v128_load(brow + 4 * v);                                   \
		for (int i = 0; i < mr; i++) {                                                  \
			const v128_t ai = wasm_v128_load32_splat(a + i);                        \
			for (int v = 0; v < nv; v++)                                            \
				acc[i][v] = SIMD128_MADD(acc[i][v], ai, bv[v]);        \
		}                                                                               \
	}                                                                                       \
	for (int i = 0; i < mr; i++)                                                            \
		for (int v = 0; v < nv; v++)                                                    \
			wasm_v128_store(c + i * ldc + 4 * v, acc[i][v]);

/* B packed: row p at b + p*4*nv. */
static inline __attribute__((always_inline)) void tile(int64_t k, const float *a, const float *b, float *c,
                                                       int64_t ldc, const int mr, const int nv)
{
	TILE_LOOP(b + p * 4 * nv)
}

/* B row p at brows[p] (in place, 16 floats). */
static inline __attribute__((always_inline)) void tile_ind(int64_t k, const float *a, const float *const *brows,
                                                           float *c, int64_t ldc, const int mr)
{
	const int nv = SIMD128_NV;
	TILE_LOOP(brows[p])
}

/* B row p at base + rel[p] bytes. */
static inline __attribute__((always_inline)) void tile_rel(int64_t k, const float *a, const char *base,
                                                           const onnxrun__krel *rel, float *c, int64_t ldc, const int mr)
{
	const int nv = SIMD128_NV;
	TILE_LOOP((const float *)(const void *)(base + rel[p]))
}

#define KS(MR)                                                                                    \
	static void k_##MR##_4(int64_t k, const float *a, const float *b, float *c, int64_t ldc)  \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, 4);                                                     \
	}                                                                                         \
	static void k_##MR##_2(int64_t k, const float *a, const float *b, float *c, int64_t ldc)  \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, 2);                                                     \
	}                                                                                         \
	static void k_##MR##_1(int64_t k, const float *a, const float *b, float *c, int64_t ldc)  \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, 1);                                                     \
	}                                                                                         \
	static void ki_##MR(int64_t k, const float *a, const float *const *brows, float *c, int64_t ldc) \
	{                                                                                         \
		tile_ind(k, a, brows, c, ldc, MR);                                                \
	}                                                                                         \
	static void kr_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, float *c, \
	                    int64_t ldc)                                                          \
	{                                                                                         \
		tile_rel(k, a, base, rel, c, ldc, MR);                                            \
	}
KS(1) KS(2)

const struct onnxrun__gemm_kernels onnxrun__gemm_simd128 = {
	SIMD128_MR, { 16, 8, 4 },
	{ { k_1_4, k_2_4 }, { k_1_2, k_2_2 }, { k_1_1, k_2_1 } },
	{ ki_1, ki_2 },
	{ NULL },
	{ kr_1, kr_2 },	{ NULL },
	0, NULL, /* no rem: remainders run fn[2] per A panel */
#ifndef ONNXRUN_BAREMETAL
	NULL, /* no skip_quarter tile (kernels.h) */
#endif
};
#endif
