/*
 * avx512_dw.c - the AVX-512 depthwise ConvTranspose rows (depthwise.h): 16 grid positions of
 * the last axis in a register over all taps, then permuted masked stores into the strided
 * outputs.
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f,fma")))

/* AVX-512 rows: 16 grid positions per register over all taps, then s1 permuted masked
 * stores (strides 1, 2, 4; other strides use the generic rows). */
T512 void onnxrun__dw_rows_avx512(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	const struct onnxrun__kdw_axis *a1 = &j->ax[1];
	const int64_t s1 = a1->s;
	const __mmask16 lanes = s1 == 1 ? 0xFFFF : s1 == 2 ? 0x5555 : 0x1111;
	__m512i spread[4];
	struct kdw_taps t;
	struct kdw_row rw;
	if (s1 != 1 && s1 != 2 && s1 != 4) {
		generic_dw_rows(j, begin, end, tmp);
		return;
	}
	for (int h = 0; h < 4; h++) /* output window h (16 floats) takes values h*16/s1 ... */
		spread[h] = _mm512_add_epi32(_mm512_set1_epi32(h * (int)(16 / s1)),
		                             s1 == 1 ? _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) :
		                             s1 == 2 ? _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7) :
		                                       _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
	for (int64_t row = begin; row < end; row++) {
		kdw_row_setup(j, row, &rw);
		for (int64_t r1 = 0; r1 < s1; r1++) {
			kdw_row_taps(j, &rw, r1, &t);
			float *yr = rw.yr;
			const float bv = rw.bv;
			const int64_t qlo = a1->qlo[r1], qhi = a1->qhi[r1];
			float *yo = yr + qlo * s1 + r1 - a1->pb;
			const __m512 b = _mm512_set1_ps(bv);
			int64_t q = qlo;
			while (q <= qhi) {
				if (q >= t.qa && q + 15 <= t.qb && q + 15 <= qhi) {
					__m512 acc = _mm512_setzero_ps();
					for (int64_t i = 0; i < t.n; i++)
						acc = _mm512_fmadd_ps(_mm512_set1_ps(t.w[i]), _mm512_loadu_ps(t.x[i] + q), acc);
					acc = _mm512_add_ps(b, acc);
					for (int64_t h = 0; h < s1; h++)
						_mm512_mask_storeu_ps(yo + (q - qlo) * s1 + 16 * h, lanes,
						                      _mm512_permutexvar_ps(spread[h], acc));
					q += 16;
					continue;
				}
				if (q >= t.qa && q <= t.qb) { /* fewer than 16 inside: masked block */
					const int64_t nv = (t.qb < qhi ? t.qb : qhi) - q + 1;
					const __mmask16 lm = (__mmask16)((1u << nv) - 1);
					const __m512i nvv = _mm512_set1_epi32((int)nv);
					__m512 acc = _mm512_setzero_ps();
					for (int64_t i = 0; i < t.n; i++)
						acc = _mm512_fmadd_ps(_mm512_set1_ps(t.w[i]), _mm512_maskz_loadu_ps(lm, t.x[i] + q),
						                      acc);
					acc = _mm512_add_ps(b, acc);
					for (int64_t h = 0; h < s1; h++) {
						const __mmask16 m = lanes & _mm512_cmplt_epi32_mask(spread[h], nvv);
						if (m)
							_mm512_mask_storeu_ps(yo + (q - qlo) * s1 + 16 * h, m,
							                      _mm512_permutexvar_ps(spread[h], acc));
					}
					q += nv;
					continue;
				}
				yo[(q - qlo) * s1] = kdw_edge_value(&t, q, a1->in, bv);
				q++;
			}
		}
	}
}
#endif
