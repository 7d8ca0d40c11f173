/*
 * avx512_dw.c - the AVX-512 depthwise ConvTranspose rows (depthwise.h). Stride 2 with kernel
 * 4 on the last axis: both phases of 16 grid positions in two registers, interleaved into 32
 * consecutive outputs (whole stores), the last axis's taps and lane masks worked out once per
 * call. Other last axes: 16 grid positions of one phase in a register over all taps, then
 * permuted masked stores into the strided outputs.
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f,fma")))

/* Lanes lo..hi (clamped to 0..15) set. */
static inline __mmask16 dw_lanes(int64_t lo, int64_t hi)
{
	lo = lo < 0 ? 0 : lo;
	hi = hi > 15 ? 15 : hi;
	if (lo > hi)
		return 0;
	return (__mmask16)(((1u << (hi + 1)) - 1u) & ~((1u << lo) - 1u));
}

/* Most 16-position blocks of a row (dw_rows_s2). */
#define DW_S2_BLOCKS 64

/* What every row of one stride-2 call shares. Output y[2p + c] (phase c = 0, 1) sums two
 * taps per x row, kernel columns kk[c][0], kk[c][1] at x[p + off[c]] and x[p + off[c] - 1]
 * (kernel 4, dilation 1), with off[1] = off[0] + de, de 0 or 1. Blocks of positions
 * [16*k, 16*k + 16), k < nb, with the lanes inside the x row of the taps at off[0],
 * off[0] - 1, off[1], off[1] - 1, the output lanes inside the y row, and whether all of
 * those are whole. */
struct dw_s2_plan {
	int64_t kk[2][2], off[2], de, nb;
	__mmask16 lm[DW_S2_BLOCKS][4], sm[DW_S2_BLOCKS][2];
	bool whole_load[DW_S2_BLOCKS], whole_store[DW_S2_BLOCKS];
};

/* Fills the plan; false when the last axis is not of that form or its rows are too long. */
static bool dw_s2_plan_make(const struct onnxrun__kdw_axis *a1, struct dw_s2_plan *pl)
{
	const int64_t np = (a1->out + 1) / 2;
	if (a1->s != 2)
		return false;
	for (int c = 0; c < 2; c++) {
		const int64_t r1 = (((c + a1->pb) % 2) + 2) % 2, e = (c + a1->pb - r1) / 2;
		const int64_t i = a1->start[r1];
		if (a1->start[r1 + 1] - i != 2 || a1->dl[i + 1] != a1->dl[i] + 1)
			return false;
		pl->kk[c][0] = a1->kk[i];
		pl->kk[c][1] = a1->kk[i + 1];
		pl->off[c] = e - a1->dl[i];
	}
	pl->de = pl->off[1] - pl->off[0];
	pl->nb = (np + 15) / 16;
	if ((pl->de != 0 && pl->de != 1) || pl->nb > DW_S2_BLOCKS)
		return false;
	for (int64_t k = 0; k < pl->nb; k++) {
		const int64_t p = 16 * k;
		for (int t = 0; t < 4; t++) {
			const int64_t off = pl->off[t / 2] - t % 2;
			pl->lm[k][t] = dw_lanes(-off - p, a1->in - 1 - off - p);
		}
		pl->sm[k][0] = dw_lanes(0, a1->out - 1 - 2 * p);
		pl->sm[k][1] = dw_lanes(0, a1->out - 1 - 2 * p - 16);
		pl->whole_load[k] = (pl->lm[k][0] & pl->lm[k][1] & pl->lm[k][2] & pl->lm[k][3]) == 0xFFFF;
		pl->whole_store[k] = (pl->sm[k][0] & pl->sm[k][1]) == 0xFFFF;
	}
	return true;
}

/* One row: n0 x rows (xr, with their kernel rows wr) of any number, the weights loaded in
 * the loop (rows with other than one or two x rows). */
T512 static void dw_s2_row_any(const struct dw_s2_plan *pl, int64_t n0, const float *const *xr,
                               const float *const *wr, __m512 b, float *yr)
{
	const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	const int64_t o = pl->off[0], de = pl->de;
	for (int64_t k = 0; k < pl->nb; k++) {
		const int64_t p = 16 * k;
		const __mmask16 ma = pl->lm[k][0], mb = pl->lm[k][1], mc = pl->lm[k][2], md = pl->lm[k][3];
		__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
		for (int64_t i = 0; i < n0; i++) {
			const float *x = xr[i] + o;
			acc0 = _mm512_mask3_fmadd_ps(_mm512_set1_ps(wr[i][pl->kk[0][0]]), _mm512_maskz_loadu_ps(ma, x + p),
			                             acc0, ma);
			acc1 = _mm512_mask3_fmadd_ps(_mm512_set1_ps(wr[i][pl->kk[1][0]]),
			                             _mm512_maskz_loadu_ps(mc, x + p + de), acc1, mc);
			acc0 = _mm512_mask3_fmadd_ps(_mm512_set1_ps(wr[i][pl->kk[0][1]]), _mm512_maskz_loadu_ps(mb, x + p - 1),
			                             acc0, mb);
			acc1 = _mm512_mask3_fmadd_ps(_mm512_set1_ps(wr[i][pl->kk[1][1]]),
			                             _mm512_maskz_loadu_ps(md, x + p + de - 1), acc1, md);
		}
		acc0 = _mm512_add_ps(b, acc0);
		acc1 = _mm512_add_ps(b, acc1);
		_mm512_mask_storeu_ps(yr + 2 * p, pl->sm[k][0], _mm512_permutex2var_ps(acc0, ilo, acc1));
		_mm512_mask_storeu_ps(yr + 2 * p + 16, pl->sm[k][1], _mm512_permutex2var_ps(acc0, ihi, acc1));
	}
}

/* dw_s2_row for two taps per phase at x offsets o and o - 1 (kernel 4, dilation 1), phase 1's o
 * being phase 0's plus de (0 or 1): blocks at positions 16*k, so that output blocks are
 * 64-byte aligned when y's rows are; one x pointer per x row and constant displacements, so
 * that pointers and weights stay in registers. Blocks with a tap lane outside the x row mask
 * those lanes (masked loads, and FMAs that leave such a lane's sum as it is). n0 (1 or 2) and
 * de are constants where inlined. */
T512 static inline __attribute__((always_inline)) void dw_s2_row_k4(const struct dw_s2_plan *pl, int64_t n0,
                                                                    int64_t de, const float *const *xr,
                                                                    const float *const *wr, __m512 b, float *yr)
{
	const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	const int64_t o = pl->off[0];
	const float *x0 = xr[0] + o, *x1 = xr[n0 - 1] + o;
	const __m512 w0a = _mm512_set1_ps(wr[0][pl->kk[0][0]]), w0b = _mm512_set1_ps(wr[0][pl->kk[0][1]]);
	const __m512 w0c = _mm512_set1_ps(wr[0][pl->kk[1][0]]), w0d = _mm512_set1_ps(wr[0][pl->kk[1][1]]);
	const __m512 w1a = _mm512_set1_ps(wr[n0 - 1][pl->kk[0][0]]), w1b = _mm512_set1_ps(wr[n0 - 1][pl->kk[0][1]]);
	const __m512 w1c = _mm512_set1_ps(wr[n0 - 1][pl->kk[1][0]]), w1d = _mm512_set1_ps(wr[n0 - 1][pl->kk[1][1]]);
	for (int64_t k = 0; k < pl->nb; k++) {
		const int64_t p = 16 * k;
		__m512 acc0, acc1;
		if (pl->whole_load[k]) {
			acc0 = _mm512_fmadd_ps(w0a, _mm512_loadu_ps(x0 + p), _mm512_setzero_ps());
			acc1 = _mm512_fmadd_ps(w0c, _mm512_loadu_ps(x0 + p + de), _mm512_setzero_ps());
			acc0 = _mm512_fmadd_ps(w0b, _mm512_loadu_ps(x0 + p - 1), acc0);
			acc1 = _mm512_fmadd_ps(w0d, _mm512_loadu_ps(x0 + p + de - 1), acc1);
			if (n0 == 2) {
				acc0 = _mm512_fmadd_ps(w1a, _mm512_loadu_ps(x1 + p), acc0);
				acc1 = _mm512_fmadd_ps(w1c, _mm512_loadu_ps(x1 + p + de), acc1);
				acc0 = _mm512_fmadd_ps(w1b, _mm512_loadu_ps(x1 + p - 1), acc0);
				acc1 = _mm512_fmadd_ps(w1d, _mm512_loadu_ps(x1 + p + de - 1), acc1);
			}
		} else {
			const __mmask16 ma = pl->lm[k][0], mb = pl->lm[k][1], mc = pl->lm[k][2], md = pl->lm[k][3];
			acc0 = _mm512_mask3_fmadd_ps(w0a, _mm512_maskz_loadu_ps(ma, x0 + p), _mm512_setzero_ps(), ma);
			acc1 = _mm512_mask3_fmadd_ps(w0c, _mm512_maskz_loadu_ps(mc, x0 + p + de), _mm512_setzero_ps(), mc);
			acc0 = _mm512_mask3_fmadd_ps(w0b, _mm512_maskz_loadu_ps(mb, x0 + p - 1), acc0, mb);
			acc1 = _mm512_mask3_fmadd_ps(w0d, _mm512_maskz_loadu_ps(md, x0 + p + de - 1), acc1, md);
			if (n0 == 2) {
				acc0 = _mm512_mask3_fmadd_ps(w1a, _mm512_maskz_loadu_ps(ma, x1 + p), acc0, ma);
				acc1 = _mm512_mask3_fmadd_ps(w1c, _mm512_maskz_loadu_ps(mc, x1 + p + de), acc1, mc);
				acc0 = _mm512_mask3_fmadd_ps(w1b, _mm512_maskz_loadu_ps(mb, x1 + p - 1), acc0, mb);
				acc1 = _mm512_mask3_fmadd_ps(w1d, _mm512_maskz_loadu_ps(md, x1 + p + de - 1), acc1, md);
			}
		}
		acc0 = _mm512_add_ps(b, acc0);
		acc1 = _mm512_add_ps(b, acc1);
		const __m512 lo = _mm512_permutex2var_ps(acc0, ilo, acc1), hi = _mm512_permutex2var_ps(acc0, ihi, acc1);
		if (pl->whole_store[k]) {
			_mm512_storeu_ps(yr + 2 * p, lo);
			_mm512_storeu_ps(yr + 2 * p + 16, hi);
		} else {
			_mm512_mask_storeu_ps(yr + 2 * p, pl->sm[k][0], lo);
			_mm512_mask_storeu_ps(yr + 2 * p + 16, pl->sm[k][1], hi);
		}
	}
}

/* Two rows of dw_s2_row_k4 (two x rows each) that read the same two x rows with their own
 * weights (wa, wb): each x vector is loaded once for both rows and all four taps. Each row's
 * sums are those of dw_s2_row_k4. Then the next npairs - 1 pairs with the same weights, each
 * one x row (xstep floats) further and two y rows (2 * ystep) down: the weights stay in
 * registers over a whole plane's pairs. de (0 or 1) is a constant where inlined. */
T512 static inline __attribute__((always_inline)) void dw_s2_pair_k4(const struct dw_s2_plan *pl, int64_t de,
                                                                     const float *const *xr, const float *const *wa,
                                                                     const float *const *wb, __m512 b, float *ya,
                                                                     int64_t npairs, int64_t xstep, int64_t ystep)
{
	const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	const int64_t o = pl->off[0], k0 = pl->kk[0][0], k1 = pl->kk[0][1], k2 = pl->kk[1][0], k3 = pl->kk[1][1];
	const float *x0 = xr[0] + o, *x1 = xr[1] + o;
	float *yb = ya + ystep;
	/* weights: [row][x row][tap], taps at o, o - 1 (phase 0) and o + de, o + de - 1 (phase 1) */
	const __m512 a00 = _mm512_set1_ps(wa[0][k0]), a01 = _mm512_set1_ps(wa[0][k1]);
	const __m512 a02 = _mm512_set1_ps(wa[0][k2]), a03 = _mm512_set1_ps(wa[0][k3]);
	const __m512 a10 = _mm512_set1_ps(wa[1][k0]), a11 = _mm512_set1_ps(wa[1][k1]);
	const __m512 a12 = _mm512_set1_ps(wa[1][k2]), a13 = _mm512_set1_ps(wa[1][k3]);
	const __m512 b00 = _mm512_set1_ps(wb[0][k0]), b01 = _mm512_set1_ps(wb[0][k1]);
	const __m512 b02 = _mm512_set1_ps(wb[0][k2]), b03 = _mm512_set1_ps(wb[0][k3]);
	const __m512 b10 = _mm512_set1_ps(wb[1][k0]), b11 = _mm512_set1_ps(wb[1][k1]);
	const __m512 b12 = _mm512_set1_ps(wb[1][k2]), b13 = _mm512_set1_ps(wb[1][k3]);
	const __m512 z = _mm512_setzero_ps();
	for (int64_t pi = 0; pi < npairs; pi++, x0 += xstep, x1 += xstep, ya += 2 * ystep, yb += 2 * ystep) {
		for (int64_t k = 0; k < pl->nb; k++) {
			const int64_t p = 16 * k;
			__m512 pa0, pa1, pb0, pb1;
			if (pl->whole_load[k]) {
				const __m512 u0 = _mm512_loadu_ps(x0 + p), v0 = _mm512_loadu_ps(x0 + p - 1);
				const __m512 s0 = de ? _mm512_loadu_ps(x0 + p + 1) : u0, t0 = de ? u0 : v0;
				const __m512 u1 = _mm512_loadu_ps(x1 + p), v1 = _mm512_loadu_ps(x1 + p - 1);
				const __m512 s1 = de ? _mm512_loadu_ps(x1 + p + 1) : u1, t1 = de ? u1 : v1;
				pa0 = _mm512_fmadd_ps(a01, v0, _mm512_fmadd_ps(a00, u0, z));
				pa1 = _mm512_fmadd_ps(a03, t0, _mm512_fmadd_ps(a02, s0, z));
				pb0 = _mm512_fmadd_ps(b01, v0, _mm512_fmadd_ps(b00, u0, z));
				pb1 = _mm512_fmadd_ps(b03, t0, _mm512_fmadd_ps(b02, s0, z));
				pa0 = _mm512_fmadd_ps(a11, v1, _mm512_fmadd_ps(a10, u1, pa0));
				pa1 = _mm512_fmadd_ps(a13, t1, _mm512_fmadd_ps(a12, s1, pa1));
				pb0 = _mm512_fmadd_ps(b11, v1, _mm512_fmadd_ps(b10, u1, pb0));
				pb1 = _mm512_fmadd_ps(b13, t1, _mm512_fmadd_ps(b12, s1, pb1));
			} else {
				const __mmask16 ma = pl->lm[k][0], mb = pl->lm[k][1], mc = pl->lm[k][2], md = pl->lm[k][3];
				const __m512 u0 = _mm512_maskz_loadu_ps(ma, x0 + p), v0 = _mm512_maskz_loadu_ps(mb, x0 + p - 1);
				const __m512 s0 = _mm512_maskz_loadu_ps(mc, x0 + p + de);
				const __m512 t0 = _mm512_maskz_loadu_ps(md, x0 + p + de - 1);
				const __m512 u1 = _mm512_maskz_loadu_ps(ma, x1 + p), v1 = _mm512_maskz_loadu_ps(mb, x1 + p - 1);
				const __m512 s1 = _mm512_maskz_loadu_ps(mc, x1 + p + de);
				const __m512 t1 = _mm512_maskz_loadu_ps(md, x1 + p + de - 1);
				pa0 = _mm512_mask3_fmadd_ps(a01, v0, _mm512_mask3_fmadd_ps(a00, u0, z, ma), mb);
				pa1 = _mm512_mask3_fmadd_ps(a03, t0, _mm512_mask3_fmadd_ps(a02, s0, z, mc), md);
				pb0 = _mm512_mask3_fmadd_ps(b01, v0, _mm512_mask3_fmadd_ps(b00, u0, z, ma), mb);
				pb1 = _mm512_mask3_fmadd_ps(b03, t0, _mm512_mask3_fmadd_ps(b02, s0, z, mc), md);
				pa0 = _mm512_mask3_fmadd_ps(a11, v1, _mm512_mask3_fmadd_ps(a10, u1, pa0, ma), mb);
				pa1 = _mm512_mask3_fmadd_ps(a13, t1, _mm512_mask3_fmadd_ps(a12, s1, pa1, mc), md);
				pb0 = _mm512_mask3_fmadd_ps(b11, v1, _mm512_mask3_fmadd_ps(b10, u1, pb0, ma), mb);
				pb1 = _mm512_mask3_fmadd_ps(b13, t1, _mm512_mask3_fmadd_ps(b12, s1, pb1, mc), md);
			}
			pa0 = _mm512_add_ps(b, pa0);
			pa1 = _mm512_add_ps(b, pa1);
			pb0 = _mm512_add_ps(b, pb0);
			pb1 = _mm512_add_ps(b, pb1);
			const __m512 la = _mm512_permutex2var_ps(pa0, ilo, pa1), ha = _mm512_permutex2var_ps(pa0, ihi, pa1);
			const __m512 lb = _mm512_permutex2var_ps(pb0, ilo, pb1), hb = _mm512_permutex2var_ps(pb0, ihi, pb1);
			if (pl->whole_store[k]) {
				_mm512_storeu_ps(ya + 2 * p, la);
				_mm512_storeu_ps(ya + 2 * p + 16, ha);
				_mm512_storeu_ps(yb + 2 * p, lb);
				_mm512_storeu_ps(yb + 2 * p + 16, hb);
			} else {
				_mm512_mask_storeu_ps(ya + 2 * p, pl->sm[k][0], la);
				_mm512_mask_storeu_ps(ya + 2 * p + 16, pl->sm[k][1], ha);
				_mm512_mask_storeu_ps(yb + 2 * p, pl->sm[k][0], lb);
				_mm512_mask_storeu_ps(yb + 2 * p + 16, pl->sm[k][1], hb);
			}
		}
	}
}

/* Stride 2, kernel 4 and dilation 1 on the last axis (the plan): output y[2p + c] (c = 0, 1)
 * is grid position p + e of phase (c + pb) mod 2, so both phases of 16 consecutive p fill 32
 * consecutive outputs. Each phase sums its taps (k0 then k1 ascending, from zero, bias added
 * last) in its own register; two lane interleaves then give two whole 16-float stores. Rows
 * with one or two x rows keep weights in registers; two rows on the same x rows run as a
 * pair, and at stride 2 a plane's consecutive pairs run as one call (per-call setup is as
 * much work as a pair of 64-wide rows). */
T512 static void dw_rows_s2(const struct onnxrun__kdw *j, const struct dw_s2_plan *pl, int64_t begin, int64_t end)
{
	const struct onnxrun__kdw_axis *a0 = &j->ax[0], *a1 = &j->ax[1];
	const float *xr[ONNXRUN__KDW_MAX_TAPS], *wr[ONNXRUN__KDW_MAX_TAPS], *xb[2], *wb[2];
	const int64_t de = pl->de;
	int64_t row = begin;
	while (row < end) {
		/* one (batch, channel) plane: the axis-0 phase r0 and grid row q0 advance with o0 */
		const int64_t o0s = row % a0->out, bc = row / a0->out, ch = bc % j->chans;
		const int64_t f0 = o0s + a0->pb;
		int64_t r0 = ((f0 % a0->s) + a0->s) % a0->s, q0 = (f0 - r0) / a0->s;
		const float *xc = j->x + bc * a0->in * a1->in, *wc = j->w + ch * a0->k * a1->k;
		const __m512 b = _mm512_set1_ps(j->bias ? j->bias[ch] : 0.0f);
		const int64_t stop = end - row < a0->out - o0s ? end : row + a0->out - o0s;
		for (; row < stop; row++) {
			float *yr = j->y + row * a1->out;
			int64_t n0 = 0;
			for (int64_t i = a0->start[r0]; i < a0->start[r0 + 1]; i++) {
				const int64_t i0 = q0 - a0->dl[i];
				if (i0 >= 0 && i0 < a0->in) {
					xr[n0] = xc + i0 * a1->in;
					wr[n0++] = wc + a0->kk[i] * a1->k;
				}
			}
			if (n0 == 2 && r0 + 1 < a0->s && row + 1 < stop) {
				/* the next row (phase r0 + 1, same q0): the same two x rows? */
				int64_t n0b = 0;
				for (int64_t i = a0->start[r0 + 1]; i < a0->start[r0 + 2]; i++) {
					const int64_t i0 = q0 - a0->dl[i];
					if (i0 >= 0 && i0 < a0->in && n0b < 2) {
						xb[n0b] = xc + i0 * a1->in;
						wb[n0b] = wc + a0->kk[i] * a1->k;
					}
					n0b += i0 >= 0 && i0 < a0->in;
				}
				if (n0b == 2 && xb[0] == xr[0] && xb[1] == xr[1]) {
					/* stride 2 from phase 0, both phases with two taps (both inside x here):
					 * the pair at q0 + m has the same taps one x row further, while its rows
					 * are in the plane and its x rows in x */
					int64_t np = 1;
					if (a0->s == 2 && r0 == 0 && a0->start[1] - a0->start[0] == 2 &&
					    a0->start[2] - a0->start[1] == 2) {
						const int64_t last = xr[0] > xr[1] ? (xr[0] - xc) / a1->in : (xr[1] - xc) / a1->in;
						np = a0->in - last;
						np = np < (stop - row) / 2 ? np : (stop - row) / 2;
					}
					if (de)
						dw_s2_pair_k4(pl, 1, xr, wr, wb, b, yr, np, a1->in, a1->out);
					else
						dw_s2_pair_k4(pl, 0, xr, wr, wb, b, yr, np, a1->in, a1->out);
					row += 2 * np - 1;
					q0 += np - 1;
					r0++;
					goto next;
				}
			}
			if (n0 == 2 && de == 1)
				dw_s2_row_k4(pl, 2, 1, xr, wr, b, yr);
			else if (n0 == 2 && de == 0)
				dw_s2_row_k4(pl, 2, 0, xr, wr, b, yr);
			else if (n0 == 1 && de == 1)
				dw_s2_row_k4(pl, 1, 1, xr, wr, b, yr);
			else if (n0 == 1 && de == 0)
				dw_s2_row_k4(pl, 1, 0, xr, wr, b, yr);
			else
				dw_s2_row_any(pl, n0, xr, wr, b, yr);
		next:
			if (++r0 == a0->s) {
				r0 = 0;
				q0++;
			}
		}
	}
}

/* AVX-512 rows: stride 2 with kernel 4 on the last axis by dw_rows_s2; otherwise 16 grid
 * positions per register over all taps, then s1 permuted masked stores (strides 1, 2, 4;
 * other strides use the generic rows). */
T512 void onnxrun__dw_rows_avx512(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	const struct onnxrun__kdw_axis *a1 = &j->ax[1];
	const int64_t s1 = a1->s;
	const __mmask16 lanes = s1 == 1 ? 0xFFFF : s1 == 2 ? 0x5555 : 0x1111;
	__m512i spread[4];
	struct kdw_taps t;
	struct kdw_row rw;
	if (s1 == 2 && a1->k == 4 && a1->d == 1) {
		struct dw_s2_plan pl;
		if (dw_s2_plan_make(a1, &pl)) {
			dw_rows_s2(j, &pl, begin, end);
			return;
		}
	}
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
