/*
 * avx512_dw.c - the AVX-512 depthwise ConvTranspose rows (depthwise.h). Stride 2 with kernel
 * 4 on the last axis: each row computed in output order, 16 outputs a register, from x
 * vectors with each value twice (one lane-crossing permute per x vector, then two in-lane
 * ones), the last axis's lane masks worked out once per call; a plane's pairs of rows over the same x rows in bands, 16 columns at a time
 * (dw_e_*). Rows under other than one or two x rows: both phases of 16 grid positions in two
 * registers, interleaved into 32 outputs (dw_s2_row_any). Other last axes: 16 grid positions
 * of one phase in a register over all taps, then permuted masked stores into the strided
 * outputs.
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

/* Most 16-position blocks of a row (dw_s2_plan). */
#define DW_S2_BLOCKS 64

/* What every row of one stride-2 call shares, for dw_s2_row_any. Output y[2p + c] (phase c = 0, 1) sums two
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

/* The rows of a stride-2 kernel-4 last axis in output order. Output o of a row sums, per x
 * row, the taps k1 = (o + pb) mod 2 at x[i] and k1 + 2 at x[i - 1], i = floor((o + pb) / 2).
 * With E[o] = x[i] and F[o] = x[i - 1] (each x value twice, in output order: one lane permute
 * of an x vector each), 16 consecutive outputs are two FMAs per x row with weight vectors
 * alternating the two kernel columns, stored as they are: no interleave of phases, and the
 * bias is where each sum starts. Per output: bias, then per x row (k0 ascending) the k1 tap,
 * then the k1 + 2 tap. */

/* Most 16-output blocks of a y row. */
#define DW_E_BLOCKS (2 * DW_S2_BLOCKS)

/* Pairs of rows per band: a band's rows are computed 16 columns at a time, down the band, so
 * that each x row's E and F vectors serve both pairs that read it (see dw_e_pairs). */
#define DW_E_BAND 4

struct dw_e_plan {
	int64_t nbo;                            /* 16-output blocks of a y row */
	int64_t src[DW_E_BLOCKS];               /* block k: x offset of E's source vector (F's: one lower) */
	__mmask16 lm[DW_E_BLOCKS];              /* source lanes inside x (of lanes 0..9 from src - 1) */
	__mmask16 ma[DW_E_BLOCKS], mb[DW_E_BLOCKS]; /* outputs whose E, F tap is inside x */
	__mmask16 sm[DW_E_BLOCKS];              /* outputs inside the y row */
	bool whole[DW_E_BLOCKS];                /* all masks full and both sources' 16 lanes inside x */
	int32_t mpat[16];                       /* lane 4j + t: source lane 2j + t (of src - 1) */
	int32_t wpa[16], wpb[16];               /* lane l: kernel columns (l + pe) & 1 and that + 2 */
	bool odd;                               /* pe = 1 (an odd begin pad) */
};

/* Fills the plan (stride 2, kernel 4, dilation 1 on the last axis); false when rows are too long. */
static bool dw_e_plan_make(const struct onnxrun__kdw_axis *a1, struct dw_e_plan *pl)
{
	const int64_t pe = ((a1->pb % 2) + 2) % 2, ph = (a1->pb - pe) / 2;
	pl->nbo = (a1->out + 15) / 16;
	pl->odd = pe == 1;
	if (a1->s != 2 || a1->k != 4 || a1->d != 1 || pl->nbo > DW_E_BLOCKS)
		return false;
	for (int l = 0; l < 16; l++) {
		pl->mpat[l] = (int32_t)(2 * (l >> 2) + (l & 3));
		pl->wpa[l] = (int32_t)((l + pe) & 1);
		pl->wpb[l] = pl->wpa[l] + 2;
	}
	for (int64_t k = 0; k < pl->nbo; k++) {
		/* lane l reads x[s + ((l + pe) >> 1)] (E) and the one before (F): E's is inside x for
		 * -2s - pe <= l <= 2(in - s) - 1 - pe, F's for lanes two higher */
		const int64_t s = 8 * k + ph, lo = -2 * s - pe, hi = 2 * (a1->in - s) - 1 - pe;
		pl->src[k] = s;
		/* both sources' 16 lanes inside x and all 16 outputs inside y: full masks (the plan
		 * is made per call, so it is kept short) */
		pl->whole[k] = s >= 1 && s + 15 < a1->in && 16 * k + 15 < a1->out;
		if (pl->whole[k]) {
			pl->lm[k] = 0x3FF;
			pl->ma[k] = pl->mb[k] = pl->sm[k] = 0xFFFF;
			continue;
		}
		const __mmask16 sm = dw_lanes(0, a1->out - 1 - 16 * k);
		pl->lm[k] = (__mmask16)(dw_lanes(1 - s, a1->in - s) & 0x3FF);
		pl->ma[k] = dw_lanes(lo, hi) & sm;
		pl->mb[k] = dw_lanes(lo + 2, hi + 2) & sm;
		pl->sm[k] = sm;
	}
	return true;
}

/* E and F of block k of x row xr (not whole: lanes outside x read as zero); pat: mpat. One
 * lane permute spreads x[s - 1 .. s + 8] so that each 128-bit lane j holds
 * x[s + 2j - 1 .. s + 2j + 2], every value E's and F's lanes 4j .. 4j + 3 take; E and F are
 * then in-lane permutes of it with immediate patterns (odd: pe = 1, a constant where inlined).
 * A lane-crossing permute takes an FMA pipe's slot on the AMD EPYC, an in-lane one does not. */
T512 static inline __attribute__((always_inline)) void dw_ef(const struct dw_e_plan *pl, __m512i pat, bool odd,
                                                             const float *xr, int64_t k, bool whole, __m512 *e,
                                                             __m512 *f)
{
	const float *s = xr + pl->src[k] - 1;
	const __m512 m = _mm512_permutexvar_ps(pat, whole ? _mm512_loadu_ps(s) : _mm512_maskz_loadu_ps(pl->lm[k], s));
	if (odd) { /* lanes 4j + i: E x[s + 2j + ((i + 1) >> 1)], F one lower */
		*e = _mm512_permute_ps(m, 0xE9); /* 1, 2, 2, 3 */
		*f = _mm512_permute_ps(m, 0x94); /* 0, 1, 1, 2 */
	} else { /* E x[s + 2j + (i >> 1)] */
		*e = _mm512_permute_ps(m, 0xA5); /* 1, 1, 2, 2 */
		*f = _mm512_permute_ps(m, 0x50); /* 0, 0, 1, 1 */
	}
}

/* acc + wa * e + wb * f, in that order; not whole: lanes outside ma (mb) skip that tap. */
T512 static inline __attribute__((always_inline)) __m512 dw_ef_fma(__m512 acc, __m512 wa, __m512 wb, __m512 e, __m512 f,
                                                                   bool whole, __mmask16 ma, __mmask16 mb)
{
	if (whole)
		return _mm512_fmadd_ps(wb, f, _mm512_fmadd_ps(wa, e, acc));
	return _mm512_mask3_fmadd_ps(wb, f, _mm512_mask3_fmadd_ps(wa, e, acc, ma), mb);
}

/* One output row over n0 (1 or 2) x rows xr[i] with weights w[i] (E tap, F tap). */
T512 static inline __attribute__((always_inline)) void dw_e_row_odd(const struct dw_e_plan *pl, bool odd, int64_t n0,
                                                                    const float *const *xr, const __m512 (*w)[2],
                                                                    __m512 b, float *yr)
{
	const __m512i pat = _mm512_loadu_si512(pl->mpat);
	for (int64_t k = 0; k < pl->nbo; k++) {
		const bool whole = pl->whole[k];
		__m512 acc = b, e, f;
		for (int64_t i = 0; i < n0; i++) {
			dw_ef(pl, pat, odd, xr[i], k, whole, &e, &f);
			acc = dw_ef_fma(acc, w[i][0], w[i][1], e, f, whole, pl->ma[k], pl->mb[k]);
		}
		if (pl->sm[k] == 0xFFFF)
			_mm512_storeu_ps(yr + 16 * k, acc);
		else
			_mm512_mask_storeu_ps(yr + 16 * k, pl->sm[k], acc);
	}
}

T512 static void dw_e_row(const struct dw_e_plan *pl, int64_t n0, const float *const *xr, const __m512 (*w)[2],
                          __m512 b, float *yr)
{
	if (pl->odd)
		dw_e_row_odd(pl, true, n0, xr, w, b, yr);
	else
		dw_e_row_odd(pl, false, n0, xr, w, b, yr);
}

/* Block k of a band of pairs: pair m (m < n) is the rows ya + 2m*ystep and the next, over x
 * rows xa + m*xstep (its x row 0) and the one above (x row 1), weights w[row][x row][tap].
 * Each x row's E and F are made once and used by the two pairs that read it. whole is a
 * constant where inlined. */
T512 static inline __attribute__((always_inline)) void dw_e_band(const struct dw_e_plan *pl, __m512i pat, bool odd,
                                                                 int64_t k, bool whole, const float *xa, int64_t xstep,
                                                                 const __m512 (*w)[2][2], __m512 b, float *ya,
                                                                 int64_t ystep, int64_t n)
{
	const __mmask16 ma = pl->ma[k], mb = pl->mb[k], sm = pl->sm[k];
	const __m512 a00 = w[0][0][0], a01 = w[0][0][1], a10 = w[0][1][0], a11 = w[0][1][1];
	const __m512 b00 = w[1][0][0], b01 = w[1][0][1], b10 = w[1][1][0], b11 = w[1][1][1];
	__m512 ep, fp, ec, fc;
	dw_ef(pl, pat, odd, xa - xstep, k, whole, &ep, &fp);
	for (int64_t m = 0; m < n; m++) {
		float *y0 = ya + 2 * m * ystep + 16 * k;
		dw_ef(pl, pat, odd, xa + m * xstep, k, whole, &ec, &fc);
		const __m512 s0 = dw_ef_fma(dw_ef_fma(b, a00, a01, ec, fc, whole, ma, mb), a10, a11, ep, fp, whole, ma, mb);
		const __m512 s1 = dw_ef_fma(dw_ef_fma(b, b00, b01, ec, fc, whole, ma, mb), b10, b11, ep, fp, whole, ma, mb);
		if (whole || sm == 0xFFFF) { /* a masked store costs more than a plain one here */
			_mm512_storeu_ps(y0, s0);
			_mm512_storeu_ps(y0 + ystep, s1);
		} else {
			_mm512_mask_storeu_ps(y0, sm, s0);
			_mm512_mask_storeu_ps(y0 + ystep, sm, s1);
		}
		ep = ec;
		fp = fc;
	}
}

/* npairs consecutive pairs at stride 2 on axis 0 (each pair's rows as dw_e_row computes them,
 * x rows 0 and 1 being consecutive rows of x), in bands of DW_E_BAND pairs, 16 columns at a
 * time down a band. The weights stay in registers over the run. */
T512 static inline __attribute__((always_inline)) void dw_e_pairs_odd(const struct dw_e_plan *pl, bool odd,
                                                                      const float *xa, int64_t xstep,
                                                                      const __m512 (*w)[2][2], __m512 b, float *ya,
                                                                      int64_t ystep, int64_t npairs)
{
	const __m512i pat = _mm512_loadu_si512(pl->mpat);
	for (int64_t m0 = 0; m0 < npairs; m0 += DW_E_BAND) {
		const int64_t n = npairs - m0 < DW_E_BAND ? npairs - m0 : DW_E_BAND;
		const float *xb = xa + m0 * xstep;
		float *yb = ya + 2 * m0 * ystep;
		for (int64_t k = 0; k < pl->nbo; k++) {
			if (pl->whole[k])
				dw_e_band(pl, pat, odd, k, true, xb, xstep, w, b, yb, ystep, n);
			else
				dw_e_band(pl, pat, odd, k, false, xb, xstep, w, b, yb, ystep, n);
		}
	}
}

T512 static void dw_e_pairs(const struct dw_e_plan *pl, const float *xa, int64_t xstep, const __m512 (*w)[2][2],
                            __m512 b, float *ya, int64_t ystep, int64_t npairs)
{
	if (pl->odd)
		dw_e_pairs_odd(pl, true, xa, xstep, w, b, ya, ystep, npairs);
	else
		dw_e_pairs_odd(pl, false, xa, xstep, w, b, ya, ystep, npairs);
}

/* Stride 2, kernel 4 and dilation 1 on the last axis, in output order (dw_e_row): rows with
 * one or two x rows; at stride 2 on axis 0, a plane's consecutive pairs of rows over the same
 * two consecutive x rows run as one dw_e_pairs call (per-call set-up is as much work as a pair
 * of 64-wide rows). Rows with other counts of x rows go to dw_s2_row_any, its plan made at
 * the first such row (most calls have none: the plan's masks are a third of a call's set-up),
 * or to the generic rows should the last axis not fit that plan. */
T512 static void dw_rows_e(const struct onnxrun__kdw *j, const struct dw_e_plan *pl, int64_t begin, int64_t end,
                           float *tmp)
{
	struct dw_s2_plan pl2;
	int pl2_state = 0; /* 0: not made yet, 1: made, -1: the last axis does not fit it */
	const struct onnxrun__kdw_axis *a0 = &j->ax[0], *a1 = &j->ax[1];
	const float *xr[ONNXRUN__KDW_MAX_TAPS], *wr[ONNXRUN__KDW_MAX_TAPS];
	int64_t kr[ONNXRUN__KDW_MAX_TAPS];
	__m512 wv[ONNXRUN__KDW_MAX_TAPS][2]; /* per kernel row of the plane: its E and F tap weights */
	const __m512i wpa = _mm512_loadu_si512(pl->wpa), wpb = _mm512_loadu_si512(pl->wpb);
	int64_t row = begin;
	while (row < end) {
		/* one (batch, channel) plane: the axis-0 phase r0 and grid row q0 advance with o0 */
		const int64_t o0s = row % a0->out, bc = row / a0->out, ch = bc % j->chans;
		const int64_t f0 = o0s + a0->pb;
		int64_t r0 = ((f0 % a0->s) + a0->s) % a0->s, q0 = (f0 - r0) / a0->s;
		const float *xc = j->x + bc * a0->in * a1->in, *wc = j->w + ch * a0->k * a1->k;
		const __m512 b = _mm512_set1_ps(j->bias ? j->bias[ch] : 0.0f);
		const int64_t stop = end - row < a0->out - o0s ? end : row + a0->out - o0s;
		for (int64_t k0 = 0; k0 < a0->k; k0++) {
			const __m512 wrow = _mm512_castps128_ps512(_mm_loadu_ps(wc + k0 * 4));
			wv[k0][0] = _mm512_permutexvar_ps(wpa, wrow);
			wv[k0][1] = _mm512_permutexvar_ps(wpb, wrow);
		}
		for (; row < stop; row++) {
			float *yr = j->y + row * a1->out;
			int64_t n0 = 0, n0b = 0;
			const float *xb[2] = { NULL, NULL };
			for (int64_t i = a0->start[r0]; i < a0->start[r0 + 1]; i++) {
				const int64_t i0 = q0 - a0->dl[i];
				if (i0 >= 0 && i0 < a0->in) {
					xr[n0] = xc + i0 * a1->in;
					kr[n0] = a0->kk[i];
					wr[n0++] = wc + a0->kk[i] * a1->k;
				}
			}
			if (n0 < 1 || n0 > 2) {
				if (pl2_state == 0)
					pl2_state = dw_s2_plan_make(a1, &pl2) ? 1 : -1;
				if (pl2_state == 1)
					dw_s2_row_any(&pl2, n0, xr, wr, b, yr);
				else
					generic_dw_rows(j, row, row + 1, tmp);
				goto next;
			}
			/* the next row (phase r0 + 1, same q0): over the same two x rows? */
			if (n0 == 2 && r0 + 1 < a0->s && row + 1 < stop) {
				for (int64_t i = a0->start[r0 + 1]; i < a0->start[r0 + 2]; i++) {
					const int64_t i0 = q0 - a0->dl[i];
					if (i0 >= 0 && i0 < a0->in) {
						if (n0b < 2) {
							xb[n0b] = xc + i0 * a1->in;
							kr[2 + n0b] = a0->kk[i];
						}
						n0b++;
					}
				}
				if (n0b != 2 || xb[0] != xr[0] || xb[1] != xr[1])
					n0b = 0;
			}
			if (n0b && xr[0] == xr[1] + a1->in) {
				/* the pair at q0 + m has the same taps one x row further, while its rows are in
				 * the plane and its x rows in x: at stride 2 from phase 0 with two taps in both
				 * phases, a run of pairs */
				int64_t np = 1;
				if (a0->s == 2 && r0 == 0 && a0->start[1] - a0->start[0] == 2 && a0->start[2] - a0->start[1] == 2) {
					np = a0->in - (xr[0] - xc) / a1->in;
					np = np < (stop - row) / 2 ? np : (stop - row) / 2;
				}
				__m512 wq[2][2][2];
				for (int r = 0; r < 2; r++)
					for (int i = 0; i < 2; i++) {
						wq[r][i][0] = wv[kr[2 * r + i]][0];
						wq[r][i][1] = wv[kr[2 * r + i]][1];
					}
				dw_e_pairs(pl, xr[0], a1->in, (const __m512(*)[2][2])wq, b, yr, a1->out, np);
				row += 2 * np - 1;
				q0 += np - 1;
				r0++;
				goto next;
			}
			{
				__m512 wq[2][2];
				for (int64_t i = 0; i < n0; i++) {
					wq[i][0] = wv[kr[i]][0];
					wq[i][1] = wv[kr[i]][1];
				}
				dw_e_row(pl, n0, xr, (const __m512(*)[2])wq, b, yr);
			}
		next:
			if (++r0 == a0->s) {
				r0 = 0;
				q0++;
			}
		}
	}
}
/* AVX-512 rows: stride 2 with kernel 4 on the last axis by dw_rows_e; otherwise 16 grid
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
		struct dw_e_plan pe;
		if (dw_e_plan_make(a1, &pe)) {
			dw_rows_e(j, &pe, begin, end, tmp);
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
