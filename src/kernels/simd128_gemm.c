/*
 * simd128_gemm.c - WebAssembly SIMD128 float32 micro-kernels: up to SIMD128_MR rows x 8 (or
 * 4) columns. SIMD128 has no fused multiply-add (relaxed SIMD is not in every engine), so a
 * step is a multiply and an add; wasm engines on x86-64 map v128 onto the 16 xmm registers,
 * so a tile keeps its accumulators, two B vectors and one broadcast A in 16 registers.
 */
#include "kernels.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

/* Rows of the A panel (mr_max): 6 rows x 2 vectors = 12 accumulators. */
#define SIMD128_MR 6

#define ACC_DECL(i) v128_t c##i##0 = wasm_f32x4_splat(0.0f), c##i##1 = c##i##0;
#define ACC_STEP(i)                                                                            \
	if (mr > i) {                                                                          \
		const v128_t ai = wasm_v128_load32_splat(a + i);                               \
		c##i##0 = wasm_f32x4_add(c##i##0, wasm_f32x4_mul(ai, b0));                     \
		if (nv > 1)                                                                    \
			c##i##1 = wasm_f32x4_add(c##i##1, wasm_f32x4_mul(ai, b1));             \
	}
#define ACC_STORE(i)                                                                           \
	if (mr > i) {                                                                          \
		wasm_v128_store(c + i * ldc, c##i##0);                                         \
		if (nv > 1)                                                                    \
			wasm_v128_store(c + i * ldc + 4, c##i##1);                             \
	}
#define ACC_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5)

/* Tile of mr rows x nv vectors of 4 floats over k steps, B packed (b[p*4*nv + j]). */
static inline __attribute__((always_inline)) void tile(int64_t k, const float *a, const float *b, float *c,
                                                       int64_t ldc, const int mr, const int nv)
{
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += SIMD128_MR, b += 4 * nv) {
		const v128_t b0 = wasm_v128_load(b), b1 = nv > 1 ? wasm_v128_load(b + 4) : b0;
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

/* The same with B row p at brows[p] (in place, 8 floats). */
static inline __attribute__((always_inline)) void tile_ind(int64_t k, const float *a, const float *const *brows,
                                                           float *c, int64_t ldc, const int mr)
{
	const int nv = 2;
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += SIMD128_MR) {
		const float *b = brows[p];
		const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

/* The same with B row p at base + rel[p] bytes. */
static inline __attribute__((always_inline)) void tile_rel(int64_t k, const float *a, const char *base,
                                                           const int64_t *rel, float *c, int64_t ldc, const int mr)
{
	const int nv = 2;
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += SIMD128_MR) {
		const float *b = (const float *)(const void *)(base + rel[p]);
		const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

#define KS(MR, NV)                                                                            \
	static void k_##MR##_##NV(int64_t k, const float *a, const float *b, float *c, int64_t ldc) \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NV);                                                    \
	}                                                                                         \
	static void ki_##MR##_##NV(int64_t k, const float *a, const float *const *brows, float *c, \
	                           int64_t ldc)                                                   \
	{                                                                                         \
		tile_ind(k, a, brows, c, ldc, MR);                                                \
	}                                                                                         \
	static void kr_##MR##_##NV(int64_t k, const float *a, const char *base, const int64_t *rel, \
	                           float *c, int64_t ldc)                                         \
	{                                                                                         \
		tile_rel(k, a, base, rel, c, ldc, MR);                                            \
	}
#define KS1(MR, NV)                                                                           \
	static void k_##MR##_##NV(int64_t k, const float *a, const float *b, float *c, int64_t ldc) \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NV);                                                    \
	}
KS(1, 2) KS(2, 2) KS(3, 2) KS(4, 2) KS(5, 2) KS(6, 2)
KS1(1, 1) KS1(2, 1) KS1(3, 1) KS1(4, 1) KS1(5, 1) KS1(6, 1)

const struct onnxrun__gemm_kernels onnxrun__gemm_simd128 = {
	SIMD128_MR, { 8, 4, 4 },
	{ { k_1_2, k_2_2, k_3_2, k_4_2, k_5_2, k_6_2 }, { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1 },
	  { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1 } },
	{ ki_1_2, ki_2_2, ki_3_2, ki_4_2, ki_5_2, ki_6_2 },
	{ NULL },
	{ kr_1_2, kr_2_2, kr_3_2, kr_4_2, kr_5_2, kr_6_2 },
};
#endif
