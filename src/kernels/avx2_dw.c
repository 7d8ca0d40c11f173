/*
 * avx2_dw.c - the AVX2+FMA depthwise ConvTranspose rows (depthwise.h). Stride 2 with kernel 4
 * on the last axis: rows in output order, 8 outputs a register, as in avx512_dw.c (dw2_e_*);
 * rows under other than one or two x rows: both phases of 8 grid positions in two registers,
 * interleaved into 16 outputs (dw2_row). The last axis's lane masks are worked out once per
 * call. Other last axes: the generic rows compiled for AVX2.
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T256 __attribute__((target("avx2,fma")))

/* Most 8-position blocks of a row (dw2_plan). */
#define DW2_BLOCKS 256

/* Bits lo..hi (clamped to 0..7) set. */
static inline unsigned dw2_lanes(int64_t lo, int64_t hi)
{
	lo = lo < 0 ? 0 : lo;
	hi = hi > 7 ? 7 : hi;
	if (lo > hi)
		return 0;
	return ((1u << (hi + 1)) - 1u) & ~((1u << lo) - 1u);
}

/* What every row of one stride-2 call shares. Output y[2p + c] (phase c = 0, 1) sums two
 * taps per x row, kernel columns kk[c][0], kk[c][1] at x[p + off[c]] and x[p + off[c] - 1]
 * (kernel 4, dilation 1), with off[1] = off[0] + de, de 0 or 1. Blocks of positions
 * [8*k, 8*k + 8), k < nb, with the lanes (bits) inside the x row of the taps at off[0],
 * off[0] - 1, off[1], off[1] - 1 and the output lanes inside the y row (lm[k][4] for the
 * first 8 outputs, lm[k][5] for the next 8), and whether all of those are whole. */
struct dw2_plan {
	int64_t kk[2][2], off[2], de, nb;
	unsigned char lm[DW2_BLOCKS][6];
	bool whole_load[DW2_BLOCKS], whole_store[DW2_BLOCKS];
};

/* Fills the plan; false when the last axis is not of that form or its rows are too long. */
static bool dw2_plan_make(const struct onnxrun__kdw_axis *a1, struct dw2_plan *pl)
{
	const int64_t np = (a1->out + 1) / 2;
	if (a1->s != 2 || a1->k != 4 || a1->d != 1)
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
	pl->nb = (np + 7) / 8;
	if ((pl->de != 0 && pl->de != 1) || pl->nb > DW2_BLOCKS)
		return false;
	for (int64_t k = 0; k < pl->nb; k++) {
		const int64_t p = 8 * k;
		for (int t = 0; t < 4; t++) {
			const int64_t off = pl->off[t / 2] - t % 2;
			pl->lm[k][t] = (unsigned char)dw2_lanes(-off - p, a1->in - 1 - off - p);
		}
		pl->lm[k][4] = (unsigned char)dw2_lanes(0, a1->out - 1 - 2 * p);
		pl->lm[k][5] = (unsigned char)dw2_lanes(0, a1->out - 1 - 2 * p - 8);
		pl->whole_load[k] = (pl->lm[k][0] & pl->lm[k][1] & pl->lm[k][2] & pl->lm[k][3]) == 0xFF;
		pl->whole_store[k] = (pl->lm[k][4] & pl->lm[k][5]) == 0xFF;
	}
	return true;
}

/* Lane mask vector of bits m (lane i all ones when bit i is set). */
T256 static inline __m256i dw2_mask(unsigned m)
{
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
}

/* acc + w * x[lanes of m], other lanes of acc as they are (the tap skipped there). */
T256 static inline __m256 dw2_fma_masked(__m256 w, const float *x, __m256i m, __m256 acc)
{
	return _mm256_blendv_ps(acc, _mm256_fmadd_ps(w, _mm256_maskload_ps(x, m), acc), _mm256_castsi256_ps(m));
}

/* The 16 outputs of phases 0 (a0) and 1 (a1) interleaved: y[2i + c] = ac[i]. */
T256 static inline void dw2_store(float *y, __m256 a0, __m256 a1, bool whole, const unsigned char *lm)
{
	const __m256 lo = _mm256_unpacklo_ps(a0, a1), hi = _mm256_unpackhi_ps(a0, a1);
	const __m256 o0 = _mm256_permute2f128_ps(lo, hi, 0x20), o1 = _mm256_permute2f128_ps(lo, hi, 0x31);
	if (whole) {
		_mm256_storeu_ps(y, o0);
		_mm256_storeu_ps(y + 8, o1);
	} else {
		_mm256_maskstore_ps(y, dw2_mask(lm[4]), o0);
		_mm256_maskstore_ps(y + 8, dw2_mask(lm[5]), o1);
	}
}

/* One row with n0 x rows; for n0 = 1 or 2 (constants where inlined) the weights stay in
 * registers, other counts load them in the loop. Each phase sums its taps (k0 then k1
 * ascending, from zero, bias added last). de is a constant where inlined. */
T256 static inline __attribute__((always_inline)) void dw2_row(const struct dw2_plan *pl, int64_t n0, int64_t de,
                                                               const float *const *xr, const float *const *wr,
                                                               __m256 b, float *yr)
{
	const int64_t o = pl->off[0];
	const bool few = n0 == 1 || n0 == 2;
	const float *x0 = few ? xr[0] + o : NULL, *x1 = few ? xr[n0 - 1] + o : NULL;
	__m256 w[2][4];
	for (int64_t i = 0; few && i < n0; i++)
		for (int t = 0; t < 4; t++)
			w[i][t] = _mm256_set1_ps(wr[i][pl->kk[t / 2][t % 2]]);
	for (int64_t k = 0; k < pl->nb; k++) {
		const int64_t p = 8 * k;
		__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
		if (few && pl->whole_load[k]) {
			acc0 = _mm256_fmadd_ps(w[0][0], _mm256_loadu_ps(x0 + p), acc0);
			acc1 = _mm256_fmadd_ps(w[0][2], _mm256_loadu_ps(x0 + p + de), acc1);
			acc0 = _mm256_fmadd_ps(w[0][1], _mm256_loadu_ps(x0 + p - 1), acc0);
			acc1 = _mm256_fmadd_ps(w[0][3], _mm256_loadu_ps(x0 + p + de - 1), acc1);
			if (n0 == 2) {
				acc0 = _mm256_fmadd_ps(w[1][0], _mm256_loadu_ps(x1 + p), acc0);
				acc1 = _mm256_fmadd_ps(w[1][2], _mm256_loadu_ps(x1 + p + de), acc1);
				acc0 = _mm256_fmadd_ps(w[1][1], _mm256_loadu_ps(x1 + p - 1), acc0);
				acc1 = _mm256_fmadd_ps(w[1][3], _mm256_loadu_ps(x1 + p + de - 1), acc1);
			}
		} else {
			const __m256i ma = dw2_mask(pl->lm[k][0]), mb = dw2_mask(pl->lm[k][1]);
			const __m256i mc = dw2_mask(pl->lm[k][2]), md = dw2_mask(pl->lm[k][3]);
			for (int64_t i = 0; i < n0; i++) {
				const float *x = xr[i] + o;
				acc0 = dw2_fma_masked(_mm256_set1_ps(wr[i][pl->kk[0][0]]), x + p, ma, acc0);
				acc1 = dw2_fma_masked(_mm256_set1_ps(wr[i][pl->kk[1][0]]), x + p + de, mc, acc1);
				acc0 = dw2_fma_masked(_mm256_set1_ps(wr[i][pl->kk[0][1]]), x + p - 1, mb, acc0);
				acc1 = dw2_fma_masked(_mm256_set1_ps(wr[i][pl->kk[1][1]]), x + p + de - 1, md, acc1);
			}
		}
		dw2_store(yr + 2 * p, _mm256_add_ps(b, acc0), _mm256_add_ps(b, acc1), pl->whole_store[k], pl->lm[k]);
	}
}

/* The same rows in output order (as avx512_dw.c's dw_e_*): output o sums, per x row, the
 * taps k1 = (o + pb) mod 2 at E[o] = x[i] and k1 + 2 at F[o] = x[i - 1], i = floor((o + pb) / 2),
 * E and F made by one lane permute of an x vector each; per output: bias, then per x row
 * (k0 ascending) the E tap, then the F tap. Rows with one or two x rows; a plane's run of
 * pairs in bands of DW2_E_BAND pairs, 8 columns at a time down a band. */

/* Most 8-output blocks of a y row, and pairs of rows per band. */
#define DW2_E_BLOCKS (2 * DW2_BLOCKS)
#define DW2_E_BAND 4

struct dw2_e_plan {
	int64_t nbo;                                    /* 8-output blocks of a y row */
	int64_t src[DW2_E_BLOCKS];                      /* block k: x offset of E's source (F's: one lower) */
	unsigned char lm[DW2_E_BLOCKS], lf[DW2_E_BLOCKS]; /* E's, F's source lanes inside x (of 0..4) */
	unsigned char ma[DW2_E_BLOCKS], mb[DW2_E_BLOCKS], sm[DW2_E_BLOCKS]; /* E, F taps inside x; y */
	bool whole[DW2_E_BLOCKS];                       /* every lane of every mask */
	int32_t epat[8], wpa[8], wpb[8];                /* lane l: source lane (l + pe) >> 1; columns */
};

static bool dw2_e_plan_make(const struct onnxrun__kdw_axis *a1, struct dw2_e_plan *pl)
{
	const int64_t pe = ((a1->pb % 2) + 2) % 2, ph = (a1->pb - pe) / 2;
	pl->nbo = (a1->out + 7) / 8;
	if (a1->s != 2 || a1->k != 4 || a1->d != 1 || pl->nbo > DW2_E_BLOCKS)
		return false;
	for (int l = 0; l < 8; l++) {
		pl->epat[l] = (int32_t)((l + pe) >> 1);
		pl->wpa[l] = (int32_t)((l + pe) & 1);
		pl->wpb[l] = pl->wpa[l] + 2;
	}
	for (int64_t k = 0; k < pl->nbo; k++) {
		/* lane l reads x[s + ((l + pe) >> 1)] (E) and the one before (F) */
		const int64_t s = 8 * k / 2 + ph, lo = -2 * s - pe, hi = 2 * (a1->in - s) - 1 - pe;
		pl->src[k] = s;
		pl->whole[k] = s >= 1 && s + 7 < a1->in && 8 * k + 7 < a1->out;
		if (pl->whole[k]) {
			pl->lm[k] = pl->lf[k] = 0x1F;
			pl->ma[k] = pl->mb[k] = pl->sm[k] = 0xFF;
			continue;
		}
		const unsigned sm = dw2_lanes(0, a1->out - 1 - 8 * k);
		pl->lm[k] = (unsigned char)(dw2_lanes(-s, a1->in - 1 - s) & 0x1F);
		pl->lf[k] = (unsigned char)(dw2_lanes(1 - s, a1->in - s) & 0x1F);
		pl->ma[k] = (unsigned char)(dw2_lanes(lo, hi) & sm);
		pl->mb[k] = (unsigned char)(dw2_lanes(lo + 2, hi + 2) & sm);
		pl->sm[k] = (unsigned char)sm;
	}
	return true;
}

/* E and F of block k of x row xr (not whole: lanes outside x read as zero). */
T256 static inline __attribute__((always_inline)) void dw2_ef(const struct dw2_e_plan *pl, __m256i pat, const float *xr,
                                                              int64_t k, bool whole, __m256 *e, __m256 *f)
{
	const float *s = xr + pl->src[k];
	if (whole) {
		*e = _mm256_permutevar8x32_ps(_mm256_loadu_ps(s), pat);
		*f = _mm256_permutevar8x32_ps(_mm256_loadu_ps(s - 1), pat);
	} else {
		*e = _mm256_permutevar8x32_ps(_mm256_maskload_ps(s, dw2_mask(pl->lm[k])), pat);
		*f = _mm256_permutevar8x32_ps(_mm256_maskload_ps(s - 1, dw2_mask(pl->lf[k])), pat);
	}
}

/* acc + wa * e + wb * f, in that order; not whole: lanes outside ma (mb) skip that tap. */
T256 static inline __attribute__((always_inline)) __m256 dw2_ef_fma(__m256 acc, __m256 wa, __m256 wb, __m256 e, __m256 f,
                                                                    bool whole, __m256i ma, __m256i mb)
{
	if (whole)
		return _mm256_fmadd_ps(wb, f, _mm256_fmadd_ps(wa, e, acc));
	acc = _mm256_blendv_ps(acc, _mm256_fmadd_ps(wa, e, acc), _mm256_castsi256_ps(ma));
	return _mm256_blendv_ps(acc, _mm256_fmadd_ps(wb, f, acc), _mm256_castsi256_ps(mb));
}

/* One output row over n0 (1 or 2) x rows xr[i] with weights w[i] (E tap, F tap). */
T256 static void dw2_e_row(const struct dw2_e_plan *pl, int64_t n0, const float *const *xr, const __m256 (*w)[2],
                           __m256 b, float *yr)
{
	const __m256i pat = _mm256_loadu_si256((const __m256i *)pl->epat);
	for (int64_t k = 0; k < pl->nbo; k++) {
		const bool whole = pl->whole[k];
		const __m256i ma = dw2_mask(pl->ma[k]), mb = dw2_mask(pl->mb[k]);
		__m256 acc = b, e, f;
		for (int64_t i = 0; i < n0; i++) {
			dw2_ef(pl, pat, xr[i], k, whole, &e, &f);
			acc = dw2_ef_fma(acc, w[i][0], w[i][1], e, f, whole, ma, mb);
		}
		if (pl->sm[k] == 0xFF)
			_mm256_storeu_ps(yr + 8 * k, acc);
		else
			_mm256_maskstore_ps(yr + 8 * k, dw2_mask(pl->sm[k]), acc);
	}
}

/* Block k of a band of n pairs (as avx512_dw.c's dw_e_band). */
T256 static inline __attribute__((always_inline)) void dw2_e_band(const struct dw2_e_plan *pl, __m256i pat, int64_t k,
                                                                  bool whole, const float *xa, int64_t xstep,
                                                                  const __m256 (*w)[2][2], __m256 b, float *ya,
                                                                  int64_t ystep, int64_t n)
{
	const __m256i ma = dw2_mask(pl->ma[k]), mb = dw2_mask(pl->mb[k]), sm = dw2_mask(pl->sm[k]);
	const __m256 a00 = w[0][0][0], a01 = w[0][0][1], a10 = w[0][1][0], a11 = w[0][1][1];
	const __m256 b00 = w[1][0][0], b01 = w[1][0][1], b10 = w[1][1][0], b11 = w[1][1][1];
	__m256 ep, fp, ec, fc;
	dw2_ef(pl, pat, xa - xstep, k, whole, &ep, &fp);
	for (int64_t m = 0; m < n; m++) {
		float *y0 = ya + 2 * m * ystep + 8 * k;
		dw2_ef(pl, pat, xa + m * xstep, k, whole, &ec, &fc);
		const __m256 s0 = dw2_ef_fma(dw2_ef_fma(b, a00, a01, ec, fc, whole, ma, mb), a10, a11, ep, fp, whole, ma, mb);
		const __m256 s1 = dw2_ef_fma(dw2_ef_fma(b, b00, b01, ec, fc, whole, ma, mb), b10, b11, ep, fp, whole, ma, mb);
		if (whole || pl->sm[k] == 0xFF) { /* a masked store costs more than a plain one */
			_mm256_storeu_ps(y0, s0);
			_mm256_storeu_ps(y0 + ystep, s1);
		} else {
			_mm256_maskstore_ps(y0, sm, s0);
			_mm256_maskstore_ps(y0 + ystep, sm, s1);
		}
		ep = ec;
		fp = fc;
	}
}

/* npairs consecutive pairs at stride 2 on axis 0, in bands (as avx512_dw.c's dw_e_pairs). */
T256 static void dw2_e_pairs(const struct dw2_e_plan *pl, const float *xa, int64_t xstep, const __m256 (*w)[2][2],
                             __m256 b, float *ya, int64_t ystep, int64_t npairs)
{
	const __m256i pat = _mm256_loadu_si256((const __m256i *)pl->epat);
	for (int64_t m0 = 0; m0 < npairs; m0 += DW2_E_BAND) {
		const int64_t n = npairs - m0 < DW2_E_BAND ? npairs - m0 : DW2_E_BAND;
		const float *xb = xa + m0 * xstep;
		float *yb = ya + 2 * m0 * ystep;
		for (int64_t k = 0; k < pl->nbo; k++) {
			if (pl->whole[k])
				dw2_e_band(pl, pat, k, true, xb, xstep, w, b, yb, ystep, n);
			else
				dw2_e_band(pl, pat, k, false, xb, xstep, w, b, yb, ystep, n);
		}
	}
}

/* Stride 2, kernel 4 and dilation 1 on the last axis, in output order: rows with one or two x
 * rows by dw2_e_row, a plane's run of pairs over two consecutive x rows by dw2_e_pairs, other
 * rows by dw2_row (pl2). */
T256 static void dw2_rows_e(const struct onnxrun__kdw *j, const struct dw2_e_plan *pl, const struct dw2_plan *pl2,
                            int64_t begin, int64_t end)
{
	const struct onnxrun__kdw_axis *a0 = &j->ax[0], *a1 = &j->ax[1];
	const float *xr[ONNXRUN__KDW_MAX_TAPS], *wr[ONNXRUN__KDW_MAX_TAPS];
	int64_t kr[ONNXRUN__KDW_MAX_TAPS];
	__m256 wv[ONNXRUN__KDW_MAX_TAPS][2]; /* per kernel row of the plane: its E and F tap weights */
	const __m256i wpa = _mm256_loadu_si256((const __m256i *)pl->wpa);
	const __m256i wpb = _mm256_loadu_si256((const __m256i *)pl->wpb);
	int64_t row = begin;
	while (row < end) {
		const int64_t o0s = row % a0->out, bc = row / a0->out, ch = bc % j->chans;
		const int64_t f0 = o0s + a0->pb;
		int64_t r0 = ((f0 % a0->s) + a0->s) % a0->s, q0 = (f0 - r0) / a0->s;
		const float *xc = j->x + bc * a0->in * a1->in, *wc = j->w + ch * a0->k * a1->k;
		const __m256 b = _mm256_set1_ps(j->bias ? j->bias[ch] : 0.0f);
		const int64_t stop = end - row < a0->out - o0s ? end : row + a0->out - o0s;
		for (int64_t k0 = 0; k0 < a0->k; k0++) {
			const __m256 wrow = _mm256_castps128_ps256(_mm_loadu_ps(wc + k0 * 4));
			wv[k0][0] = _mm256_permutevar8x32_ps(wrow, wpa);
			wv[k0][1] = _mm256_permutevar8x32_ps(wrow, wpb);
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
				dw2_row(pl2, n0, pl2->de, xr, wr, b, yr);
				goto next;
			}
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
				int64_t np = 1;
				if (a0->s == 2 && r0 == 0 && a0->start[1] - a0->start[0] == 2 && a0->start[2] - a0->start[1] == 2) {
					np = a0->in - (xr[0] - xc) / a1->in;
					np = np < (stop - row) / 2 ? np : (stop - row) / 2;
				}
				__m256 wq[2][2][2];
				for (int r = 0; r < 2; r++)
					for (int i = 0; i < 2; i++) {
						wq[r][i][0] = wv[kr[2 * r + i]][0];
						wq[r][i][1] = wv[kr[2 * r + i]][1];
					}
				dw2_e_pairs(pl, xr[0], a1->in, (const __m256(*)[2][2])wq, b, yr, a1->out, np);
				row += 2 * np - 1;
				q0 += np - 1;
				r0++;
				goto next;
			}
			{
				__m256 wq[2][2];
				for (int64_t i = 0; i < n0; i++) {
					wq[i][0] = wv[kr[i]][0];
					wq[i][1] = wv[kr[i]][1];
				}
				dw2_e_row(pl, n0, xr, (const __m256(*)[2])wq, b, yr);
			}
		next:
			if (++r0 == a0->s) {
				r0 = 0;
				q0++;
			}
		}
	}
}

T256 void onnxrun__dw_rows_avx2(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	struct dw2_plan pl;
	struct dw2_e_plan pe;
	if (dw2_plan_make(&j->ax[1], &pl) && dw2_e_plan_make(&j->ax[1], &pe)) {
		dw2_rows_e(j, &pe, &pl, begin, end);
		return;
	}
	generic_dw_rows(j, begin, end, tmp);
}

#endif
