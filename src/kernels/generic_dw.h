/*
 * generic_dw.h - plain C body of the depthwise ConvTranspose rows (depthwise.h), inlined into
 * each ISA's rows routine (scalar_dw.c, avx2_dw.c, avx512_dw.c) so that each copy is compiled
 * for that ISA (generic.h says why). Per output row and per phase r1 of the last axis, the
 * row's taps (k0 of the row's phase, k1 of phase r1, each ascending) are listed once from the
 * per-residue tables; then y[o1] = bias + sum over taps of w * x[q - delta] for
 * o1 = q*s1 + r1 - pb1.
 */
#ifndef ONNXRUN_KERNELS_GENERIC_DW_H
#define ONNXRUN_KERNELS_GENERIC_DW_H

#include "generic.h"

/* One output row's taps for phase r1: x row pointers already shifted by -delta. */
struct kdw_taps {
	int64_t n, qa, qb; /* qa..qb: positions where every tap is inside its row */
	const float *x[ONNXRUN__KDW_MAX_TAPS];
	float w[ONNXRUN__KDW_MAX_TAPS];
	int64_t dl[ONNXRUN__KDW_MAX_TAPS];
};

/* What one output row needs for every phase: its axis-0 taps' x rows and kernel rows. */
struct kdw_row {
	int64_t n0;
	const float *xr[ONNXRUN__KDW_MAX_TAPS];
	const float *wr[ONNXRUN__KDW_MAX_TAPS];
	float bv;
	float *yr;
};

/* The row setup, its taps and the edge values are inlined into each ISA's rows function:
 * called out of the AVX-512 one as plain SSE code, they would run with the vector
 * registers' upper halves dirty, which costs Intel CPUs a penalty per instruction. */
ONNXRUN__INLINE void kdw_row_setup(const struct onnxrun__kdw *j, int64_t row, struct kdw_row *rw)
{
	const struct onnxrun__kdw_axis *a0 = &j->ax[0], *a1 = &j->ax[1];
	const int64_t o0 = row % a0->out, bc = row / a0->out, ch = bc % j->chans;
	const int64_t f0 = o0 + a0->pb, r0 = ((f0 % a0->s) + a0->s) % a0->s, q0 = (f0 - r0) / a0->s;
	const float *xc = j->x + bc * a0->in * a1->in, *wc = j->w + ch * a0->k * a1->k;
	rw->n0 = 0;
	for (int64_t i = a0->start[r0]; i < a0->start[r0 + 1]; i++) {
		const int64_t i0 = q0 - a0->dl[i];
		if (i0 < 0 || i0 >= a0->in)
			continue;
		rw->xr[rw->n0] = xc + i0 * a1->in;
		rw->wr[rw->n0++] = wc + a0->kk[i] * a1->k;
	}
	rw->bv = j->bias ? j->bias[ch] : 0.0f;
	rw->yr = j->y + row * a1->out;
}

/* The row's taps for last-axis phase r1 (k0 then k1 ascending). */
ONNXRUN__INLINE void kdw_row_taps(const struct onnxrun__kdw *j, const struct kdw_row *rw, int64_t r1,
                                  struct kdw_taps *t)
{
	const struct onnxrun__kdw_axis *a1 = &j->ax[1];
	t->n = 0;
	t->qa = a1->qlo[r1];
	t->qb = a1->qhi[r1];
	for (int64_t i = 0; i < rw->n0; i++)
		for (int64_t e = a1->start[r1]; e < a1->start[r1 + 1] && t->n < ONNXRUN__KDW_MAX_TAPS; e++) {
			const int64_t dl = a1->dl[e];
			t->dl[t->n] = dl;
			t->x[t->n] = rw->xr[i] - dl;
			t->w[t->n] = rw->wr[i][a1->kk[e]];
			t->qa = t->qa > dl ? t->qa : dl;
			t->qb = t->qb < a1->in - 1 + dl ? t->qb : a1->in - 1 + dl;
			t->n++;
		}
}

/* Scalar output at grid position q: bias + taps inside the row. */
ONNXRUN__INLINE float kdw_edge_value(const struct kdw_taps *t, int64_t q, int64_t in1, float bv)
{
	float acc = 0.0f;
	for (int64_t i = 0; i < t->n; i++)
		if (q - t->dl[i] >= 0 && q - t->dl[i] < in1)
			acc += t->w[i] * t->x[i][q];
	return bv + acc;
}

/* Generic rows (each ISA's codegen): interior through a temp row. */
ONNXRUN__INLINE void generic_dw_rows(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	const struct onnxrun__kdw_axis *a1 = &j->ax[1];
	struct kdw_taps t;
	struct kdw_row rw;
	for (int64_t row = begin; row < end; row++) {
		kdw_row_setup(j, row, &rw);
		for (int64_t r1 = 0; r1 < a1->s; r1++) {
			kdw_row_taps(j, &rw, r1, &t);
			float *yr = rw.yr;
			const float bv = rw.bv;
			const int64_t qlo = a1->qlo[r1], qhi = a1->qhi[r1];
			float *yo = yr + qlo * a1->s + r1 - a1->pb;
			for (int64_t q = qlo; q <= qhi; q++) {
				if (q < t.qa || q > t.qb) {
					yo[(q - qlo) * a1->s] = kdw_edge_value(&t, q, a1->in, bv);
					continue;
				}
				const int64_t qe = t.qb < qhi ? t.qb : qhi;
				for (int64_t e = q; e <= qe; e++)
					tmp[e - q] = 0.0f;
				for (int64_t i = 0; i < t.n; i++)
					for (int64_t e = q; e <= qe; e++)
						tmp[e - q] += t.w[i] * t.x[i][e];
				for (int64_t e = q; e <= qe; e++)
					yo[(e - qlo) * a1->s] = bv + tmp[e - q];
				q = qe;
			}
		}
	}
}


#endif
