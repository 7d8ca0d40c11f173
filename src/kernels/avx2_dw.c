/*
 * avx2_dw.c - the AVX2+FMA depthwise ConvTranspose rows (depthwise.h). Stride 2 with kernel 4
 * on the last axis: both phases of 8 grid positions in two registers, interleaved into 16
 * consecutive outputs (whole stores), the last axis's taps and lane masks worked out once per
 * call. Other last axes: the generic rows compiled for AVX2.
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T256 __attribute__((target("avx2,fma")))

/* Most 8-position blocks of a row (dw2_rows_s2). */
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

/* Stride 2, kernel 4 and dilation 1 on the last axis (the plan): output y[2p + c] (c = 0, 1)
 * is grid position p + e of phase (c + pb) mod 2, so both phases of 8 consecutive p fill 16
 * consecutive outputs. */
T256 static void dw2_rows_s2(const struct onnxrun__kdw *j, const struct dw2_plan *pl, int64_t begin, int64_t end)
{
	const struct onnxrun__kdw_axis *a0 = &j->ax[0], *a1 = &j->ax[1];
	const float *xr[ONNXRUN__KDW_MAX_TAPS], *wr[ONNXRUN__KDW_MAX_TAPS];
	int64_t row = begin;
	while (row < end) {
		/* one (batch, channel) plane: the axis-0 phase r0 and grid row q0 advance with o0 */
		const int64_t o0s = row % a0->out, bc = row / a0->out, ch = bc % j->chans;
		const int64_t f0 = o0s + a0->pb;
		int64_t r0 = ((f0 % a0->s) + a0->s) % a0->s, q0 = (f0 - r0) / a0->s;
		const float *xc = j->x + bc * a0->in * a1->in, *wc = j->w + ch * a0->k * a1->k;
		const __m256 b = _mm256_set1_ps(j->bias ? j->bias[ch] : 0.0f);
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
			if (n0 == 2 && pl->de == 1)
				dw2_row(pl, 2, 1, xr, wr, b, yr);
			else if (n0 == 2)
				dw2_row(pl, 2, 0, xr, wr, b, yr);
			else if (n0 == 1 && pl->de == 1)
				dw2_row(pl, 1, 1, xr, wr, b, yr);
			else if (n0 == 1)
				dw2_row(pl, 1, 0, xr, wr, b, yr);
			else
				dw2_row(pl, n0, pl->de, xr, wr, b, yr);
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
	if (dw2_plan_make(&j->ax[1], &pl)) {
		dw2_rows_s2(j, &pl, begin, end);
		return;
	}
	generic_dw_rows(j, begin, end, tmp);
}

#endif
