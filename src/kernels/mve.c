/*
 * mve.c - the Helium (Arm M-profile Vector Extension with floating point, MVE-F) ISA's table:
 * Cortex-M55 and M85. The build decides (-mcpu=cortex-m55 defines __ARM_FEATURE_MVE with bit
 * 1 set; no run-time check: a firmware built for Helium runs only on a CPU that has it). Its
 * own entries: the micro-kernels (mve_gemm.c), tile stores as vector adds (contiguous for
 * stride 1, scattered for larger strides), the interleaved store of two stride-2 phases with
 * vst2, the col2im overlap-add in vectors, the depthwise rows (mve_dw.c) and the
 * DepthToSpace interleaves (mve_d2s.c). The panel packing is the generic body; float64 uses
 * the scalar tiles (MVE has no float64 lanes; the scalar FPU does them) and the
 * float16/bfloat16 conversions the generic ones (docs/kernels.md, Helium, says why).
 */
#include "generic.h"
#include "generic_half.h"
#include "parts.h"

#if ONNXRUN__HAVE_MVE
#include <arm_mve.h>

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_mve;

static void pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                 const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	generic_pack(kp, xg, nt, nr, runs, nrun, cp, bp);
}

/* generic_pack_rows without its prefetches (a Cortex-M has no or a small data cache, and
 * each prefetch is an instruction per row) and with 32-bit indices (a panel's rows, taps
 * and widths are small; on a 32-bit CPU each 64-bit index costs two registers): the same
 * row pointers and packed rows. */
static void pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                      const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	const int32_t ntaps = (int32_t)nt, w = (int32_t)nr;
	for (int32_t c = 0; c < (int32_t)kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int32_t t = 0; t < ntaps; t++) {
			const struct onnxrun__kcopy *ct = &cp[t];
			const int32_t k = c * ntaps + t;
			float *row = bp + k * w;
			if (ct->n == w) {
				brows[k] = xc + ct->src;
				continue;
			}
			if (ct->n == 0) {
				brows[k] = onnxrun__kzero_row;
				continue;
			}
			memset(row, 0, (size_t)ct->zlo * sizeof *row);
			memcpy(row + ct->zlo, xc + ct->src, (size_t)ct->n * sizeof *row);
			memset(row + ct->zlo + ct->n, 0, (size_t)(w - ct->zlo - ct->n) * sizeof *row);
			brows[k] = row;
		}
	}
}

/* Word offsets 0, sl, 2 sl, 3 sl: a scatter store writes 4 outputs sl floats apart. */
ONNXRUN__INLINE uint32x4_t lane_offsets(int64_t sl)
{
	return vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)sl);
}

/* A run is 4 tile values + bias per vector add, stored contiguously (stride 1) or scattered
 * sl floats apart (vstrw with a vector of offsets: one store for 4 outputs, where NEON
 * stores lanes one by one). The same additions as the generic store, so the same bits. */
static void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	const int64_t sl = kp->sl;
	const uint32x4_t off = lane_offsets(sl);
	for (int64_t i = 0; i < mr; i++) {
		const float b = bias ? bias[i] : 0.0f;
		const float32x4_t bv = vdupq_n_f32(b);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *t = tile + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			const int64_t len = runs[s].len;
			int64_t e = 0;
			if (sl == 1)
				for (; e + 4 <= len; e += 4)
					vst1q_f32(d + e, vaddq_f32(vld1q_f32(t + e), bv));
			else
				for (; e + 4 <= len; e += 4)
					vstrwq_scatter_shifted_offset_f32(d + e * sl, off, vaddq_f32(vld1q_f32(t + e), bv));
			for (; e < len; e++)
				d[e * sl] = t[e] + b;
		}
	}
}

/* Two tiles whose outputs alternate (stride 2): vst2 writes t0's value e and t1's value e
 * next to each other, 8 outputs per store. */
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
 * so the result is the scalar one bit for bit. */
#ifndef ONNXRUN_FLOAT32_ONLY
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

static void widen(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	generic_widen(bf16, src, dst, n);
}

static void narrow(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	generic_narrow(bf16, src, dst, n);
}
#endif

const struct onnxrun__kernels onnxrun__kernels_mve = {
	.isa = ONNXRUN__ISA_MVE,
	.name = "mve",
	.gemm = &onnxrun__gemm_mve,
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = NULL, .store = store,
	           .store_pair = store_pair, .store_fence = store_fence },
#ifndef ONNXRUN_FLOAT32_ONLY
	/* the ConvTranspose entries that call these are left out of a float32-only build
	 * (ops/conv_transpose/op.c), and so, with them NULL here, is their code */
	.col2im_gather = gather,
	.dw_rows = onnxrun__dw_rows_mve,
	.f64 = &onnxrun__f64_scalar,
	.widen = widen,
	.narrow = narrow,
#endif
	.d2s = { .row2 = onnxrun__d2s_row2_mve, .row4 = onnxrun__d2s_row4_mve, .row2_stream = NULL,
	         .row4_stream = NULL, .stream_fence = NULL },
};

#endif
