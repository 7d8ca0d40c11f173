/*
 * avx512_col2im.c - the AVX-512 overlap-add of the GEMM + col2im path (kernels.h, struct
 * onnxrun__kgather): blocks of 16 grid positions per residue, each residue's sum over its
 * taps kept in a register; for strides 1 to 4 the s residues interleaved with permutes into
 * s whole output vectors, for strides of 16 and more blocks of 16 residues transposed into
 * 16 output vectors; masked loads where taps reach past Z's columns, masked stores at the
 * row's ends. Strides 5 to 15 take the generic loop. Every output adds its taps in the
 * generic order (rows, then the residue's taps ascending, from 0.0f, then the bias), so the
 * results are the same bits as the generic loop's.
 */
#include "generic.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

#define MAX_S 4      /* strides with an interleave */
#define MAX_TERMS 32 /* most (row, tap) terms of one residue on the vector path */

/* Output vector j of stride s (row 0 of the tables is s = 2, j = 0; s = 3 starts at row 2, s = 4
 * at row 5), lane e: residue (16j + e) % s, grid offset l = (16j + e) / s. IDX_A: l, + 16 for
 * residue 1 (a two-source permute of residues 0 and 1); IDX_B: l, + 16 for residue 3 (of
 * residues 2 and 3); HI_RES: the lanes of residues 2 and 3. */
static const int32_t IDX_A[9][16] = {
	{ 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23 },
	{ 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31 },
	{ 0, 16, 0, 1, 17, 1, 2, 18, 2, 3, 19, 3, 4, 20, 4, 5 },
	{ 21, 5, 6, 22, 6, 7, 23, 7, 8, 24, 8, 9, 25, 9, 10, 26 },
	{ 10, 11, 27, 11, 12, 28, 12, 13, 29, 13, 14, 30, 14, 15, 31, 15 },
	{ 0, 16, 0, 0, 1, 17, 1, 1, 2, 18, 2, 2, 3, 19, 3, 3 },
	{ 4, 20, 4, 4, 5, 21, 5, 5, 6, 22, 6, 6, 7, 23, 7, 7 },
	{ 8, 24, 8, 8, 9, 25, 9, 9, 10, 26, 10, 10, 11, 27, 11, 11 },
	{ 12, 28, 12, 12, 13, 29, 13, 13, 14, 30, 14, 14, 15, 31, 15, 15 },
};
static const int32_t IDX_B[9][16] = {
	{ 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7 },
	{ 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15 },
	{ 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5 },
	{ 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10 },
	{ 10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15 },
	{ 0, 0, 0, 16, 1, 1, 1, 17, 2, 2, 2, 18, 3, 3, 3, 19 },
	{ 4, 4, 4, 20, 5, 5, 5, 21, 6, 6, 6, 22, 7, 7, 7, 23 },
	{ 8, 8, 8, 24, 9, 9, 9, 25, 10, 10, 10, 26, 11, 11, 11, 27 },
	{ 12, 12, 12, 28, 13, 13, 13, 29, 14, 14, 14, 30, 15, 15, 15, 31 },
};
static const uint16_t HI_RES[9] = { 0x0000, 0x0000, 0x4924, 0x2492, 0x9249, 0xCCCC, 0xCCCC, 0xCCCC, 0xCCCC };

/* The terms of one residue of a row: term t's value for grid position q is p[t][q], for q
 * in [lo[t], hi[t]) (Z's columns). */
struct residue {
	const float *p[MAX_TERMS];
	int64_t lo[MAX_TERMS], hi[MAX_TERMS], n;
};

/* Residue r's terms (rows, then the residue's taps ascending: the generic order), narrowing
 * [*qa, *qz) to where every term is inside Z. False when it has more than MAX_TERMS. */
static bool residue_terms(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows, int64_t r,
                          int64_t zoff, int64_t zend, struct residue *res, int64_t *qa, int64_t *qz)
{
	if ((kg->t_start[r + 1] - kg->t_start[r]) * nrows > MAX_TERMS)
		return false;
	res->n = 0;
	for (int64_t t0 = 0; t0 < nrows; t0++)
		for (int64_t ti = kg->t_start[r]; ti < kg->t_start[r + 1]; ti++) {
			const int64_t k = kg->t_k[ti], dl = (k * kg->d - r) / kg->s, t = res->n++;
			/* z[i - zoff] holds input i = q - dl, for q in [zoff + dl, zend + dl) */
			res->lo[t] = zoff + dl;
			res->hi[t] = zend + dl;
			res->p[t] = zrows[t0] + k * kg->ldz - zoff - dl;
			*qa = res->lo[t] > *qa ? res->lo[t] : *qa;
			*qz = res->hi[t] < *qz ? res->hi[t] : *qz;
		}
	return true;
}

/* Lanes l of a block at grid q whose q + l lies in [lo, hi). */
static inline __attribute__((always_inline)) __mmask16 lanes_in(int64_t q, int64_t lo, int64_t hi)
{
	const int64_t a = lo - q < 0 ? 0 : lo - q > 16 ? 16 : lo - q;
	const int64_t b = hi - q < 0 ? 0 : hi - q > 16 ? 16 : hi - q;
	return (__mmask16)(((1u << b) - 1) & ~((1u << a) - 1));
}

/* bias + the sum of a residue's terms at grid positions [q, q + 16), from +0.0f in term order;
 * unless whole (every term inside Z on every lane), a term's lanes outside Z load zeros
 * (adding +0.0f to a sum that started at +0.0f leaves its bits as they are). */
static inline __attribute__((always_inline)) T512 __m512 residue_sum(const struct residue *res, int64_t q, bool whole,
                                                                     __m512 bv)
{
	__m512 acc = _mm512_setzero_ps();
	if (whole)
		for (int64_t t = 0; t < res->n; t++)
			acc = _mm512_add_ps(acc, _mm512_loadu_ps(res->p[t] + q));
	else
		for (int64_t t = 0; t < res->n; t++)
			acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(lanes_in(q, res->lo[t], res->hi[t]), res->p[t] + q));
	return _mm512_add_ps(bv, acc);
}

/* The blocks of grid positions [q, q + 16) for q from q0 below q1 (stride s, a constant once
 * inlined); [qa, qz): where every residue's terms are inside Z. */
static inline __attribute__((always_inline)) T512 void blocks(const struct residue *res, int64_t qa, int64_t qz,
                                                              int64_t q0, int64_t q1, int64_t o_lo, int64_t o_hi,
                                                              int64_t pb, float bias, float *yrow, const int64_t s)
{
	const int64_t t0 = s == 2 ? 0 : s == 3 ? 2 : 5; /* this stride's rows of the tables */
	__m512i idx_a[MAX_S], idx_b[MAX_S];
	for (int64_t j = 0; j < s && s > 1; j++) {
		idx_a[j] = _mm512_loadu_si512(IDX_A[t0 + j]);
		idx_b[j] = _mm512_loadu_si512(IDX_B[t0 + j]);
	}
	const __m512 bv = _mm512_set1_ps(bias);
	for (int64_t q = q0; q < q1; q += 16) {
		const bool whole = q >= qa && q + 16 <= qz;
		__m512 v[MAX_S];
		for (int64_t r = 0; r < s; r++)
			v[r] = residue_sum(&res[r], q, whole, bv);
		const int64_t o = q * s - pb; /* the block's first output */
		for (int64_t j = 0; j < s; j++) {
			__m512 out = v[0];
			if (s >= 2)
				out = _mm512_permutex2var_ps(v[0], idx_a[j], v[1]);
			if (s == 3)
				out = _mm512_mask_permutexvar_ps(out, (__mmask16)HI_RES[t0 + j], idx_b[j], v[2]);
			else if (s == 4)
				out = _mm512_mask_blend_ps((__mmask16)HI_RES[t0 + j], out, _mm512_permutex2var_ps(v[2], idx_b[j], v[3]));
			const int64_t oj = o + 16 * j;
			if (oj >= o_lo && oj + 16 <= o_hi)
				_mm512_storeu_ps(yrow + oj, out);
			else
				_mm512_mask_storeu_ps(yrow + oj, lanes_in(oj, o_lo, o_hi), out);
		}
	}
}

/* A 16 x 16 transpose in registers: v[i] lane e becomes v[e] lane i. */
static inline __attribute__((always_inline)) T512 void transpose16(__m512 v[16])
{
	__m512 t[16], u[16];
	for (int i = 0; i < 8; i++) { /* 32-bit interleave of row pairs */
		t[2 * i] = _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]);
	}
	for (int i = 0; i < 4; i++) { /* 64-bit interleave: 128-bit lane L of u[4i + k] is
	                                 * column 4L + k of rows 4i .. 4i + 3 */
		const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
		const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
		u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
		u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
		u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
		u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
	}
	for (int k = 0; k < 4; k++) { /* gather lane L of u[k], u[4 + k], u[8 + k], u[12 + k] */
		const __m512 w0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88), w1 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
		const __m512 w2 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
		const __m512 w3 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
		v[k] = _mm512_shuffle_f32x4(w0, w2, 0x88);
		v[4 + k] = _mm512_shuffle_f32x4(w1, w3, 0x88);
		v[8 + k] = _mm512_shuffle_f32x4(w0, w2, 0xDD);
		v[12 + k] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
	}
}

/* Strides of 16 and more: blocks of 16 residues x 16 grid positions. Each residue's sum over
 * its terms is a vector over the positions (as in blocks()); a transpose turns the 16 sums
 * into, per grid position, the 16 consecutive outputs of the 16 residues: whole vector
 * stores instead of one scalar store per output, s floats apart. False (nothing written)
 * when a residue has more than MAX_TERMS terms. */
static T512 bool wide_blocks(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows,
                             float *yrow, int64_t o_lo, int64_t o_hi, float bias, int64_t zoff, int64_t zend)
{
	const int64_t s = kg->s, pb = kg->pb;
	const int64_t q0 = kfloor_div(o_lo + pb, s), q1 = kfloor_div(o_hi - 1 + pb, s) + 1;
	const __m512 bv = _mm512_set1_ps(bias);
	struct residue res[16];
	for (int64_t r = 0; r < s; r++)
		if ((kg->t_start[r + 1] - kg->t_start[r]) * nrows > MAX_TERMS)
			return false;
	for (int64_t r0 = 0; r0 < s; r0 += 16) {
		const int64_t nres = s - r0 < 16 ? s - r0 : 16;
		int64_t qa = INT64_MIN, qz = INT64_MAX;
		for (int64_t i = 0; i < nres; i++)
			(void)residue_terms(kg, zrows, nrows, r0 + i, zoff, zend, &res[i], &qa, &qz);
		const __mmask16 res_lanes = (__mmask16)((1u << nres) - 1);
		for (int64_t q = q0; q < q1; q += 16) {
			const bool whole = q >= qa && q + 16 <= qz;
			__m512 v[16];
			for (int64_t i = 0; i < 16; i++)
				v[i] = i < nres ? residue_sum(&res[i], q, whole, bv) : bv;
			transpose16(v);
			for (int64_t l = 0; l < 16; l++) {
				const int64_t o = (q + l) * s + r0 - pb; /* residue r0's output at grid q + l */
				if (nres == 16 && o >= o_lo && o + 16 <= o_hi)
					_mm512_storeu_ps(yrow + o, v[l]);
				else
					_mm512_mask_storeu_ps(yrow + o, res_lanes & lanes_in(o, o_lo, o_hi), v[l]);
			}
		}
	}
	return true;
}

T512 void onnxrun__col2im_gather_avx512(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows,
                                        float *yrow, int64_t o_lo, int64_t o_hi, float bias, float *tmp, int64_t zoff,
                                        int64_t zend)
{
	const int64_t s = kg->s, pb = kg->pb;
	if (s >= 16 && o_lo + pb >= 0 && wide_blocks(kg, zrows, nrows, yrow, o_lo, o_hi, bias, zoff, zend))
		return;
	struct residue res[MAX_S];
	int64_t qa = INT64_MIN, qz = INT64_MAX;
	bool fits = s <= MAX_S && o_lo + pb >= 0;
	for (int64_t r = 0; r < s && fits; r++)
		fits = residue_terms(kg, zrows, nrows, r, zoff, zend, &res[r], &qa, &qz);
	if (!fits) {
		generic_gather(kg, zrows, nrows, yrow, o_lo, o_hi, bias, tmp, zoff, zend);
		return;
	}
	/* blocks of grid positions [q, q + 16) of every residue, outputs [q*s - pb, (q + 16)*s - pb),
	 * from the block of output o_lo to that of o_hi - 1; a block's outputs outside [o_lo, o_hi)
	 * are not stored */
	const int64_t q0 = kfloor_div(o_lo + pb, s), q1 = kfloor_div(o_hi - 1 + pb, s) + 1;
	switch (s) { /* the stride as a constant: the residues' sums and the tables stay in registers */
	case 1:
		blocks(res, qa, qz, q0, q1, o_lo, o_hi, pb, bias, yrow, 1);
		break;
	case 2:
		blocks(res, qa, qz, q0, q1, o_lo, o_hi, pb, bias, yrow, 2);
		break;
	case 3:
		blocks(res, qa, qz, q0, q1, o_lo, o_hi, pb, bias, yrow, 3);
		break;
	default:
		blocks(res, qa, qz, q0, q1, o_lo, o_hi, pb, bias, yrow, 4);
		break;
	}
}

#endif
