/*
 * simd128_d2s.c - the WebAssembly SIMD128 DepthToSpace row interleaves for b = 2 and 4
 * (kernels.h, struct onnxrun__d2s_kernels): 32-bit lane shuffles, plain stores (SIMD128 has
 * no non-temporal store).
 */
#include "parts.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

void onnxrun__d2s_row2_simd128(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	const uint32_t *s0 = src[0], *s1 = src[1];
	uint32_t *d = dst;
	int64_t w = 0;
	for (; w + 4 <= width; w += 4, d += 8) {
		const v128_t a = wasm_v128_load(s0 + w), b = wasm_v128_load(s1 + w);
		wasm_v128_store(d, wasm_i32x4_shuffle(a, b, 0, 4, 1, 5));
		wasm_v128_store(d + 4, wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
	}
	for (; w < width; w++, d += 2) {
		d[0] = s0[w];
		d[1] = s1[w];
	}
}

void onnxrun__d2s_row4_simd128(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	uint32_t *d = dst;
	int64_t w = 0;
	for (; w + 4 <= width; w += 4, d += 16) {
		const v128_t a = wasm_v128_load(src[0] + w), b = wasm_v128_load(src[1] + w);
		const v128_t c = wasm_v128_load(src[2] + w), e = wasm_v128_load(src[3] + w);
		/* (a_w, b_w) and (c_w, e_w) pairs, then the pairs' 64-bit halves interleaved: a 4x4
		 * transpose, row w of the output being (a_w, b_w, c_w, e_w) */
		const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
		const v128_t ce_lo = wasm_i32x4_shuffle(c, e, 0, 4, 1, 5), ce_hi = wasm_i32x4_shuffle(c, e, 2, 6, 3, 7);
		wasm_v128_store(d, wasm_i64x2_shuffle(ab_lo, ce_lo, 0, 2));
		wasm_v128_store(d + 4, wasm_i64x2_shuffle(ab_lo, ce_lo, 1, 3));
		wasm_v128_store(d + 8, wasm_i64x2_shuffle(ab_hi, ce_hi, 0, 2));
		wasm_v128_store(d + 12, wasm_i64x2_shuffle(ab_hi, ce_hi, 1, 3));
	}
	for (; w < width; w++, d += 4)
		for (int j = 0; j < 4; j++)
			d[j] = src[j][w];
}

#endif
