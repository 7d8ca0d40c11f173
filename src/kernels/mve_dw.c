/*
 * mve_dw.c - the Helium (MVE) depthwise ConvTranspose rows (depthwise.h): 8 (then 4) grid
 * positions of the last axis in registers over all taps with fused multiply-adds (vector by
 * the tap's weight in a general-purpose register), stored into the strided outputs
 * (contiguous for stride 1, one scatter store of 4 for larger strides). Positions where a
 * tap falls outside its row, and the last fewer than 4 inside, take the scalar edge value.
 */
#include "generic_dw.h"
#include "parts.h"

#if ONNXRUN__HAVE_MVE
#include <arm_mve.h>

/* Stores 4 outputs sl floats apart (off: word offsets 0, sl, 2 sl, 3 sl). */
ONNXRUN__INLINE void store4(float *d, float32x4_t v, int64_t sl, uint32x4_t off)
{
	if (sl == 1)
		vst1q_f32(d, v);
	else
		vstrwq_scatter_shifted_offset_f32(d, off, v);
}

void onnxrun__dw_rows_mve(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	const struct onnxrun__kdw_axis *a1 = &j->ax[1];
	const int64_t s1 = a1->s;
	const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)s1);
	struct kdw_taps t;
	struct kdw_row rw;
	(void)tmp; /* the positions are accumulated in registers */
	for (int64_t row = begin; row < end; row++) {
		kdw_row_setup(j, row, &rw);
		for (int64_t r1 = 0; r1 < s1; r1++) {
			kdw_row_taps(j, &rw, r1, &t);
			const int64_t qlo = a1->qlo[r1], qhi = a1->qhi[r1];
			const int64_t qe = t.qb < qhi ? t.qb : qhi; /* last position with every tap inside */
			float *yo = rw.yr + qlo * s1 + r1 - a1->pb;
			const float32x4_t b = vdupq_n_f32(rw.bv);
			int64_t q = qlo;
			while (q <= qhi) {
				if (q >= t.qa && q + 7 <= qe) {
					float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0;
					for (int64_t i = 0; i < t.n; i++) {
						acc0 = vfmaq_n_f32(acc0, vld1q_f32(t.x[i] + q), t.w[i]);
						acc1 = vfmaq_n_f32(acc1, vld1q_f32(t.x[i] + q + 4), t.w[i]);
					}
					store4(yo + (q - qlo) * s1, vaddq_f32(b, acc0), s1, off);
					store4(yo + (q + 4 - qlo) * s1, vaddq_f32(b, acc1), s1, off);
					q += 8;
					continue;
				}
				if (q >= t.qa && q + 3 <= qe) {
					float32x4_t acc = vdupq_n_f32(0.0f);
					for (int64_t i = 0; i < t.n; i++)
						acc = vfmaq_n_f32(acc, vld1q_f32(t.x[i] + q), t.w[i]);
					store4(yo + (q - qlo) * s1, vaddq_f32(b, acc), s1, off);
					q += 4;
					continue;
				}
				yo[(q - qlo) * s1] = kdw_edge_value(&t, q, a1->in, rw.bv);
				q++;
			}
		}
	}
}

#endif
