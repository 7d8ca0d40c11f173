/*
 * simd128.c - the WebAssembly SIMD128 ISA's table (built by emscripten with -msimd128; see
 * README, Platforms): its own micro-kernels (simd128_gemm.c) and DepthToSpace interleaves
 * (simd128_d2s.c) and the interleaving store of two stride-2 tiles; the panel, store, gather,
 * depthwise and conversion routines are the generic bodies compiled for SIMD128
 * (auto-vectorised); float64 uses the scalar tiles,
 * which this build also compiles with -msimd128.
 */
#include "generic.h"
#include "generic_half.h"
#include "parts.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_simd128;

static void pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                 const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	generic_pack(kp, xg, nt, nr, runs, nrun, cp, bp);
}

static void pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                      const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	generic_pack_rows(kp, xg, nt, nr, cp, bp, brows);
}

static void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	generic_store(kp, tile, nr, mr, runs, nrun, y, ydelta, bias);
}

/* Interleaves the two tiles four values at a time with lane shuffles (unpack low / high on
 * x86-64 engines) and stores whole vectors; the sums are the ones store() computes. */
static void store_pair(const struct onnxrun__kpanel *kp, const float *t0, const float *t1, int64_t nr, int64_t mr,
                       const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	for (int64_t i = 0; i < mr; i++) {
		const float bs = bias ? bias[i] : 0.0f;
		const v128_t b = wasm_f32x4_splat(bs);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *a0 = t0 + i * nr + runs[s].col, *a1 = t1 + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			const int64_t len = runs[s].len;
			int64_t e = 0;
			for (; e + 4 <= len; e += 4, d += 8) {
				const v128_t x0 = wasm_v128_load(a0 + e), x1 = wasm_v128_load(a1 + e);
				wasm_v128_store(d, wasm_f32x4_add(wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), b));
				wasm_v128_store(d + 4, wasm_f32x4_add(wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7), b));
			}
			for (; e < len; e++, d += 2) {
				d[0] = a0[e] + bs;
				d[1] = a1[e] + bs;
			}
		}
	}
}

static void store_fence(void)
{
}

static void gather(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows, float *yrow,
                   int64_t o_lo, int64_t o_hi, float bias, float *tmp, int64_t zoff, int64_t zend)
{
	generic_gather(kg, zrows, nrows, yrow, o_lo, o_hi, bias, tmp, zoff, zend);
}

static void widen(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	generic_widen(bf16, src, dst, n);
}

static void narrow(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	generic_narrow(bf16, src, dst, n);
}

const struct onnxrun__kernels onnxrun__kernels_simd128 = {
	.isa = ONNXRUN__ISA_SIMD128,
	.name = "simd128",
	.gemm = &onnxrun__gemm_simd128,
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = NULL, .store = store, .store_pair = store_pair,
	           .store_fence = store_fence },
	.col2im_gather = gather,
	.dw_rows = onnxrun__dw_rows_simd128,
	.f64 = &onnxrun__f64_scalar,
	.widen = widen,
	.narrow = narrow,
	.d2s = { .row2 = onnxrun__d2s_row2_simd128, .row4 = onnxrun__d2s_row4_simd128, .row2_stream = NULL,
	         .row4_stream = NULL, .stream_fence = NULL },
};

#endif
