/*
 * neon.c - the AArch64 Advanced SIMD (NEON) ISA's table. Advanced SIMD is part of every
 * AArch64 CPU, so the build decides (no run-time check). Its own entries: the micro-kernels
 * (neon_gemm.c), stride-1 tile stores as vector adds, the interleaved store of two phases
 * with st2, the col2im overlap-add in vectors, the DepthToSpace interleaves (neon_d2s.c), the
 * float64 tiles (neon_f64.c), the depthwise rows (neon_dw.c) and the float16/bfloat16
 * conversions (neon_half.c). The panel packing is the generic body compiled for AArch64.
 */
#include "generic.h"
#include "parts.h"

#if defined(__aarch64__)
#include <arm_neon.h>

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_neon;

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

/* Stride 1: a run is 4 tile values + bias per vector add and store. Other strides: the
 * generic store (a single tile fills only every sl-th output, and NEON has no masked or
 * scattered store that beats storing lanes one by one). The same additions as the generic
 * store, so the same bits. */
static void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	if (kp->sl != 1) {
		generic_store(kp, tile, nr, mr, runs, nrun, y, ydelta, bias);
		return;
	}
	for (int64_t i = 0; i < mr; i++) {
		const float b = bias ? bias[i] : 0.0f;
		const float32x4_t bv = vdupq_n_f32(b);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *t = tile + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			const int64_t len = runs[s].len;
			int64_t e = 0;
			for (; e + 4 <= len; e += 4)
				vst1q_f32(d + e, vaddq_f32(vld1q_f32(t + e), bv));
			for (; e < len; e++)
				d[e] = t[e] + b;
		}
	}
}

/* Two tiles whose outputs alternate (stride 2): st2 writes t0's value e and t1's value e next
 * to each other, 8 outputs per store. */
static void store_pair(const struct onnxrun__kpanel *kp, const float *t0, const float *t1, int64_t nr, int64_t mr,
                       const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	for (int64_t i = 0; i < mr; i++) {
		const float b = bias ? bias[i] : 0.0f;
		const float32x4_t bv = vdupq_n_f32(b);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *a0 = t0 + i * nr + runs[s].col, *a1 = t1 + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			const int64_t len = runs[s].len;
			int64_t e = 0;
			for (; e + 4 <= len; e += 4) {
				const float32x4x2_t v = { { vaddq_f32(vld1q_f32(a0 + e), bv), vaddq_f32(vld1q_f32(a1 + e), bv) } };
				vst2q_f32(d + 2 * e, v);
			}
			for (; e < len; e++) {
				d[2 * e] = a0[e] + b;
				d[2 * e + 1] = a1[e] + b;
			}
		}
	}
}

static void store_fence(void)
{
}

/* The generic overlap-add (generic.h) with its inner loops in vectors: each tmp[q] still gets
 * the taps' values added one at a time in the same order, and each output is bias + tmp[q],
 * so the result is the scalar one bit for bit. (gcc -O2 leaves the generic loops scalar: it
 * would need a run-time check that tmp and the Z row do not overlap.) */
static void gather(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows, float *yrow,
                   int64_t o_lo, int64_t o_hi, float bias, float *tmp, int64_t zoff, int64_t zend)
{
	const int64_t s = kg->s;
	const float32x4_t bv = vdupq_n_f32(bias);
	for (int64_t r = 0; r < s; r++) {
		const int64_t qlo = kceil_div(o_lo + kg->pb - r, s);
		const int64_t qhi = kfloor_div(o_hi - 1 + kg->pb - r, s);
		const int64_t nq = qhi - qlo + 1;
		if (nq <= 0)
			continue;
		memset(tmp, 0, (size_t)nq * sizeof *tmp);
		for (int64_t t0 = 0; t0 < nrows; t0++)
			for (int64_t ti = kg->t_start[r]; ti < kg->t_start[r + 1]; ti++) {
				const int64_t k = kg->t_k[ti];
				const int64_t dl = (k * kg->d - r) / s;
				/* input q - dl must lie in [zoff, zend) (held by this Z row) */
				const int64_t lo = qlo > dl + zoff ? qlo : dl + zoff;
				const int64_t hi = qhi < zend - 1 + dl ? qhi : zend - 1 + dl;
				const float *z = zrows[t0] + k * kg->ldz - zoff + lo - dl;
				float *acc = tmp + (lo - qlo);
				int64_t i = 0;
				for (; i + 4 <= hi - lo + 1; i += 4)
					vst1q_f32(acc + i, vaddq_f32(vld1q_f32(acc + i), vld1q_f32(z + i)));
				for (; i < hi - lo + 1; i++)
					acc[i] += z[i];
			}
		float *yo = yrow + qlo * s + r - kg->pb;
		int64_t q = 0;
		if (s == 1)
			for (; q + 4 <= nq; q += 4)
				vst1q_f32(yo + q, vaddq_f32(bv, vld1q_f32(tmp + q)));
		for (; q < nq; q++)
			yo[q * s] = bias + tmp[q];
	}
}

const struct onnxrun__kernels onnxrun__kernels_neon = {
	.isa = ONNXRUN__ISA_NEON,
	.name = "neon",
	.gemm = &onnxrun__gemm_neon,
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = NULL, .store = store,
	           .store_pair = store_pair, .store_fence = store_fence },
	.col2im_gather = gather,
	.dw_rows = onnxrun__dw_rows_neon,
	.f64 = &onnxrun__f64_neon,
	.widen = onnxrun__widen_neon,
	.narrow = onnxrun__narrow_neon,
	.d2s = { .row2 = onnxrun__d2s_row2_neon, .row4 = onnxrun__d2s_row4_neon, .row2_stream = NULL,
	         .row4_stream = NULL, .stream_fence = NULL },
};

#endif
