/*
 * neon_dw.c - the AArch64 NEON depthwise ConvTranspose rows (depthwise.h): 8 (then 4) grid
 * positions of the last axis in registers over all taps with fused multiply-adds, stored
 * into the strided outputs (contiguous for stride 1, lane by lane otherwise: NEON has no
 * masked store, and the other phases' outputs lie in between). Positions where a tap falls
 * outside its row, and the last fewer than 4 inside, take the scalar edge value.
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__aarch64__)
#include <arm_neon.h>

/* Stores 4 outputs sl floats apart. */
ONNXRUN__INLINE void store4(float *d, float32x4_t v, int64_t sl)
{
	if (sl == 1) {
		vst1q_f32(d, v);
		return;
	}
	vst1q_lane_f32(d, v, 0);
	vst1q_lane_f32(d + sl, v, 1);
	vst1q_lane_f32(d + 2 * sl, v, 2);
	vst1q_lane_f32(d + 3 * sl, v, 3);
}

void onnxrun__dw_rows_neon(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	const struct onnxrun__kdw_axis *a1 = &j->ax[1];
	const int64_t s1 = a1->s;
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
					store4(yo + (q - qlo) * s1, vaddq_f32(b, acc0), s1);
					store4(yo + (q + 4 - qlo) * s1, vaddq_f32(b, acc1), s1);
					q += 8;
					continue;
				}
				if (q >= t.qa && q + 3 <= qe) {
					float32x4_t acc = vdupq_n_f32(0.0f);
					for (int64_t i = 0; i < t.n; i++)
						acc = vfmaq_n_f32(acc, vld1q_f32(t.x[i] + q), t.w[i]);
					store4(yo + (q - qlo) * s1, vaddq_f32(b, acc), s1);
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
