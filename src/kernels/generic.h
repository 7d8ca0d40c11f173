/*
 * generic.h - plain C bodies of the panel, store and gather routines, inlined into each ISA's
 * file (scalar.c, avx2.c, avx512.c) so that each copy is compiled, and auto-vectorised, for
 * that ISA. (Calling a plain SSE copy from AVX-512 code runs it with the upper halves of the
 * vector registers dirty, which costs Intel CPUs a penalty per instruction.)
 */
#ifndef ONNXRUN_KERNELS_GENERIC_H
#define ONNXRUN_KERNELS_GENERIC_H

#include <string.h>

#include "kernels.h"

#define ONNXRUN__INLINE static inline __attribute__((always_inline))

ONNXRUN__INLINE void generic_pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                                  const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp,
                                  float *bp)
{
	for (int64_t c = 0; c < kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int64_t t = 0; t < nt; t++) {
			float *row = bp + (c * nt + t) * nr;
			const struct onnxrun__kcopy *ct = cp + t * nrun;
			if (nrun == 1 && ct[0].n == nr) { /* one whole run: fixed-size copy */
				__builtin_prefetch(xc + ct[0].src + nr);
				__builtin_prefetch(xc + ct[0].src + nr + 16);
				__builtin_prefetch(xc + ct[0].src + 2 * nr - 1);
				if (nr == 32)
					memcpy(row, xc + ct[0].src, 32 * sizeof(float));
				else if (nr == 16) /* constant sizes are copied inline, not by a call */
					memcpy(row, xc + ct[0].src, 16 * sizeof(float));
				else
					memcpy(row, xc + ct[0].src, (size_t)nr * sizeof(float));
				continue;
			}
			for (int64_t s = 0; s < nrun; s++) {
				float *d = row + runs[s].col;
				const float *src = xc + ct[s].src;
				int32_t k = 0;
				for (; k < ct[s].zlo; k++)
					d[k] = 0.0f;
				/* x rows of many channels are too many streams for the hardware
				 * prefetcher: fetch the next panels' part of this row now */
				__builtin_prefetch(src + ct[s].n);
				__builtin_prefetch(src + ct[s].n + 16);
				__builtin_prefetch(src + ct[s].n + 31);
				for (int32_t e = 0; e < ct[s].n; e++)
					d[k + e] = src[e];
				k += ct[s].n;
				for (int32_t e = 0; e < ct[s].zhi; e++)
					d[k + e] = 0.0f;
			}
		}
	}
}

/* A B row read in place, with the next panels' part of it prefetched. */
ONNXRUN__INLINE const float *row_in_place(const float *xc, const struct onnxrun__kcopy *ct, int64_t nr)
{
	const float *p = xc + ct->src;
	__builtin_prefetch(p + nr);
	__builtin_prefetch(p + nr + 16);
	__builtin_prefetch(p + 2 * nr - 1);
	return p;
}

ONNXRUN__INLINE void generic_pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                                       const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	for (int64_t c = 0; c < kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int64_t t = 0; t < nt; t++) {
			const struct onnxrun__kcopy *ct = &cp[t];
			const int64_t k = c * nt + t;
			float *row = bp + k * nr;
			int32_t e = 0;
			if (ct->n == nr) {
				brows[k] = row_in_place(xc, ct, nr);
				continue;
			}
			if (ct->n == 0) {
				brows[k] = onnxrun__kzero_row;
				continue;
			}
			for (; e < ct->zlo; e++)
				row[e] = 0.0f;
			for (int32_t i = 0; i < ct->n; i++)
				row[e + i] = xc[ct->src + i];
			e += ct->n;
			for (; e < nr; e++)
				row[e] = 0.0f;
			brows[k] = row;
		}
	}
}

ONNXRUN__INLINE void generic_store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                                   const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta,
                                   const float *bias)
{
	const int64_t sl = kp->sl;
	for (int64_t i = 0; i < mr; i++) {
		const float b = bias ? bias[i] : 0.0f;
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *t = tile + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			if (sl == 1)
				for (int64_t e = 0; e < runs[s].len; e++)
					d[e] = t[e] + b;
			else
				for (int64_t e = 0; e < runs[s].len; e++)
					d[e * sl] = t[e] + b;
		}
	}
}

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a. */
ONNXRUN__INLINE int64_t kfloor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}
ONNXRUN__INLINE int64_t kceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

ONNXRUN__INLINE void generic_gather(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows,
                                    float *yrow, int64_t o_lo, int64_t o_hi, float bv, float *tmp, int64_t zoff,
                                    int64_t zend)
{
	const int64_t s = kg->s;
	for (int64_t r = 0; r < s; r++) {
		const int64_t qlo = kceil_div(o_lo + kg->pb - r, s);
		const int64_t qhi = kfloor_div(o_hi - 1 + kg->pb - r, s);
		const int64_t nq = qhi - qlo + 1;
		if (nq <= 0)
			continue;
		for (int64_t q = 0; q < nq; q++)
			tmp[q] = 0.0f;
		for (int64_t t0 = 0; t0 < nrows; t0++)
			for (int64_t ti = kg->t_start[r]; ti < kg->t_start[r + 1]; ti++) {
				const int64_t k = kg->t_k[ti];
				const int64_t dl = (k * kg->d - r) / s;
				/* input q - dl must lie in [zoff, zend) (held by this Z row) */
				const int64_t lo = qlo > dl + zoff ? qlo : dl + zoff;
				const int64_t hi = qhi < zend - 1 + dl ? qhi : zend - 1 + dl;
				const float *z = zrows[t0] + k * kg->ldz - zoff;
				for (int64_t q = lo; q <= hi; q++)
					tmp[q - qlo] += z[q - dl];
			}
		float *yo = yrow + qlo * s + r - kg->pb;
		for (int64_t q = 0; q < nq; q++)
			yo[q * s] = bv + tmp[q];
	}
}

/* The window GEMM's store (kernels.h, onnxrun__window_kernels): the s rows interleaved, +
 * bias. */
ONNXRUN__INLINE void generic_win_store(const float *tile, int64_t ldt, int64_t s, int64_t n, float *y, float bias)
{
	for (int64_t r = 0; r < s; r++)
		for (int64_t e = 0; e < n; e++)
			y[e * s + r] = tile[r * ldt + e] + bias;
}

#endif
