/*
 * avx512.c - the AVX-512 ISA's table: B panels packed or read in place with masked loads,
 * tile stores that spread a tile over strided outputs with permutes and masked stores, and
 * interleaved stores of two phases (the micro-kernels are in avx512_gemm.c).
 */
#include "generic.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_avx512;

/* Most taps and reads per 16 lanes that pack_parts plans (its plan is on the stack). */
#define PARTS_TAPS 64
#define PARTS 4

/* Several short runs per panel row whose reads continue one another in x (a batch of small
 * images: a grid row is a few positions, an image's rows follow one another in x): each 16
 * lanes of a row are up to PARTS masked loads merged into one vector (lanes outside x or
 * outside the runs zero), one per distinct x offset of lane 0 among the runs there, then one
 * whole store; a run per masked load and masked store where runs are not merged (dcgan_b8's
 * interior: 8 runs of 4 per 32 lanes against 2 loads per 16). The same floats as pack's
 * other loops. False (nothing written) when a row needs more reads or the panel is not
 * whole vectors. */
static T512 bool pack_parts(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                            const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	int64_t base[PARTS_TAPS][2][PARTS];
	uint16_t mask[PARTS_TAPS][2][PARTS];
	int np[PARTS_TAPS][2];
	const int nh = (int)(nr / 16);
	int most = 0;
	if (nr % 16 || nh > 2 || nt > PARTS_TAPS)
		return false;
	for (int64_t t = 0; t < nt; t++) {
		const struct onnxrun__kcopy *ct = cp + t * nrun;
		np[t][0] = np[t][1] = 0;
		for (int64_t s = 0; s < nrun; s++) {
			const int64_t lo = runs[s].col + ct[s].zlo, hi = lo + ct[s].n;
			if (ct[s].n == 0)
				continue;
			for (int h = 0; h < nh; h++) {
				const int64_t a = lo > 16 * h ? lo : 16 * h, e = hi < 16 * h + 16 ? hi : 16 * h + 16;
				const int64_t b = ct[s].src - lo + 16 * h; /* x offset of lane 16h */
				int i = 0;
				if (a >= e)
					continue;
				while (i < np[t][h] && base[t][h][i] != b)
					i++;
				if (i == np[t][h]) {
					if (i == PARTS)
						return false;
					base[t][h][i] = b;
					mask[t][h][i] = 0;
					np[t][h]++;
				}
				mask[t][h][i] |= (uint16_t)(((1u << (e - a)) - 1) << (a - 16 * h));
			}
		}
		most = np[t][0] > most ? np[t][0] : most;
		most = nh > 1 && np[t][1] > most ? np[t][1] : most;
	}
	if (2 * most > nrun) /* not fewer reads than runs: the run loop */
		return false;
	for (int64_t c = 0; c < kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int64_t t = 0; t < nt; t++) {
			float *row = bp + (c * nt + t) * nr;
			for (int h = 0; h < nh; h++) {
				__m512 v = _mm512_setzero_ps();
				for (int i = 0; i < np[t][h]; i++)
					v = _mm512_mask_loadu_ps(v, (__mmask16)mask[t][h][i], xc + base[t][h][i]);
				_mm512_storeu_ps(row + 16 * h, v);
			}
		}
	}
	return true;
}

/* A run of at most 16 positions (short rows: small spatial sizes, 3-D) is one masked load
 * (zeros outside x, never touching memory there) and one masked store, or merged with the
 * runs that continue it in x (pack_parts); longer ones go through the generic loops. */
static T512 void pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                      const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	bool short_runs = true;
	for (int64_t s = 0; s < nrun; s++)
		short_runs = short_runs && runs[s].len <= 16;
	if (!short_runs || nrun == 1) {
		generic_pack(kp, xg, nt, nr, runs, nrun, cp, bp);
		return;
	}
	if (pack_parts(kp, xg, nt, nr, runs, nrun, cp, bp))
		return;
	for (int64_t c = 0; c < kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int64_t t = 0; t < nt; t++) {
			float *row = bp + (c * nt + t) * nr;
			const struct onnxrun__kcopy *ct = cp + t * nrun;
			for (int64_t s = 0; s < nrun; s++) {
				__m512 v = _mm512_setzero_ps();
				if (ct[s].n) {
					const __mmask16 lm = (__mmask16)(((1u << ct[s].n) - 1) << ct[s].zlo);
					v = _mm512_maskz_loadu_ps(lm, xc + ct[s].src - ct[s].zlo);
				}
				_mm512_mask_storeu_ps(row + runs[s].col, (__mmask16)((1u << runs[s].len) - 1), v);
			}
		}
	}
}

static T512 void pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                           const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	for (int64_t c = 0; c < kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int64_t t = 0; t < nt; t++) {
			const struct onnxrun__kcopy *ct = &cp[t];
			const int64_t k = c * nt + t;
			float *row = bp + k * nr;
			if (ct->n == nr) {
				brows[k] = row_in_place(xc, ct, nr);
				continue;
			}
			if (ct->n == 0) {
				brows[k] = onnxrun__kzero_row;
				continue;
			}
			/* lanes [zlo, zlo + n) of the row come from x, one masked load per 16 */
			const float *src = xc + ct->src - ct->zlo;
			const uint64_t in = ((UINT64_C(1) << ct->n) - 1) << ct->zlo;
			for (int64_t h = 0; h < nr; h += 16)
				_mm512_storeu_ps(row + h, _mm512_maskz_loadu_ps((__mmask16)(in >> h), src + h));
			brows[k] = row;
		}
	}
}

static T512 void pack_halves(const struct onnxrun__kpanel *kp, int64_t nt, const float *const *p0,
                             const uint16_t *m0, float *bp)
{
	for (int64_t c = 0; c < kp->cg; c++)
		for (int64_t t = 0; t < nt; t++) {
			float *row = bp + (c * nt + t) * 32;
			for (int h = 0; h < 2; h++) {
				const __mmask16 m = (__mmask16)m0[2 * t + h];
				const float *src = m ? p0[2 * t + h] + c * kp->in_sp : onnxrun__kzero_row;
				_mm512_storeu_ps(row + 16 * h, _mm512_maskz_loadu_ps(m, src));
			}
		}
}

/* Stride 1 is a vector add + store; strides 2 and 4 spread 16/sl tile values over a
 * 16-float window (permute) and write only the phase's lanes (masked store), the last
 * window of a run with fewer lanes. */
static T512 void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                       const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	const int64_t sl = kp->sl;
	if (sl != 1 && sl != 2 && sl != 4) {
		generic_store(kp, tile, nr, mr, runs, nrun, y, ydelta, bias);
		return;
	}
	const int per = (int)(16 / sl); /* tile values per 16-float window */
	const __m512i spread = sl == 1 ? _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) :
	                       sl == 2 ? _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7) :
	                                 _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
	const __mmask16 lanes = sl == 1 ? 0xFFFF : sl == 2 ? 0x5555 : 0x1111;
	for (int64_t i = 0; i < mr; i++) {
		const __m512 b = _mm512_set1_ps(bias ? bias[i] : 0.0f);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *t = tile + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			const int64_t len = runs[s].len;
			int64_t e = 0;
			for (; e + per <= len; e += per, d += 16) {
				__m512 v = _mm512_maskz_loadu_ps((__mmask16)((1u << per) - 1), t + e);
				v = _mm512_add_ps(_mm512_permutexvar_ps(spread, v), b);
				_mm512_mask_storeu_ps(d, lanes, v);
			}
			if (e < len) { /* the last < 16/sl values (short runs: small grids), masked */
				const int64_t rem = len - e;
				__m512 v = _mm512_maskz_loadu_ps((__mmask16)((1u << rem) - 1), t + e);
				v = _mm512_add_ps(_mm512_permutexvar_ps(spread, v), b);
				_mm512_mask_storeu_ps(d, (__mmask16)(lanes & ((1u << ((rem - 1) * sl + 1)) - 1)), v);
			}
		}
	}
	/* the next m-panel's output lines, for writing: hides the read-for-ownership misses */
	for (int64_t i = mr; i < 2 * mr; i++)
		for (int64_t s = 0; s < nrun; s++) {
			const char *d = (const char *)(y + i * kp->out_sp + ydelta + runs[s].yoff);
			for (int64_t off = 0; off < runs[s].len * sl * 4; off += 64)
				__builtin_prefetch(d + off, 1);
		}
}

/* Interleaves the two tiles with permutes; whole vectors are stored non-temporally (no read
 * for ownership) for outputs larger than the caches when 64-byte aligned. */
static T512 void store_pair(const struct onnxrun__kpanel *kp, const float *t0, const float *t1, int64_t nr,
                            int64_t mr, const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta,
                            const float *bias)
{
	const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	for (int64_t i = 0; i < mr; i++) {
		const __m512 b = _mm512_set1_ps(bias ? bias[i] : 0.0f);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *a0 = t0 + i * nr + runs[s].col, *a1 = t1 + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			for (int64_t e = 0; e < runs[s].len; e += 16, d += 32) {
				const int64_t rem = runs[s].len - e < 16 ? runs[s].len - e : 16;
				const __mmask16 in = (__mmask16)((1u << rem) - 1);
				const __m512 x0 = _mm512_maskz_loadu_ps(in, a0 + e), x1 = _mm512_maskz_loadu_ps(in, a1 + e);
				const __m512 lo = _mm512_add_ps(_mm512_permutex2var_ps(x0, lo_idx, x1), b);
				const __m512 hi = _mm512_add_ps(_mm512_permutex2var_ps(x0, hi_idx, x1), b);
				if (rem == 16 && kp->stream && !((uintptr_t)d & 63)) {
					_mm512_stream_ps(d, lo);
					_mm512_stream_ps(d + 16, hi);
					continue;
				}
				if (rem == 16) { /* whole vectors: plain stores */
					_mm512_storeu_ps(d, lo);
					_mm512_storeu_ps(d + 16, hi);
					continue;
				}
				_mm512_mask_storeu_ps(d, rem >= 8 ? 0xFFFF : (__mmask16)((1u << (2 * rem)) - 1), lo);
				if (rem > 8)
					_mm512_mask_storeu_ps(d + 16, (__mmask16)((1u << (2 * (rem - 8))) - 1), hi);
			}
		}
	}
	if (kp->stream)
		return;
	/* the next m-panel's output lines, for writing (as in store) */
	for (int64_t i = mr; i < 2 * mr; i++)
		for (int64_t s = 0; s < nrun; s++) {
			const char *d = (const char *)(y + i * kp->out_sp + ydelta + runs[s].yoff);
			for (int64_t off = 0; off < runs[s].len * 2 * 4; off += 64)
				__builtin_prefetch(d + off, 1);
		}
}

/* phase.pack_img8 (kernels.h): per channel and tap, the 8 images' 4 values as masked loads
 * into two registers (images 0-3 and 4-7, 4 lanes each; a lane not valid is neither read
 * nor kept), transposed by two permutes into the panel row's quarters (lane 8k + b). */
static T512 void pack_img8(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t bstride,
                           const int64_t *src, const uint8_t *valid, float *bp)
{
	const __m512i lo = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
	const __m512i hi = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
	for (int64_t c = 0; c < kp->cg; c++) {
		const float *xc = xg + c * kp->in_sp;
		for (int64_t t = 0; t < nt; t++) {
			float *d = bp + (c * nt + t) * 32;
			const __mmask16 m = (__mmask16)(valid[t] & 15);
			if (!m) {
				_mm512_storeu_ps(d, _mm512_setzero_ps());
				_mm512_storeu_ps(d + 16, _mm512_setzero_ps());
				continue;
			}
			/* lane 4i + k of a: image i's value k, read at s + i*bstride + k */
			const char *s = (const char *)(xc + src[t]);
			const int64_t bs = bstride * (int64_t)sizeof(float);
			__m512 a = _mm512_maskz_loadu_ps(m, s);
			a = _mm512_mask_loadu_ps(a, (__mmask16)(m << 4), s + bs - 16);
			a = _mm512_mask_loadu_ps(a, (__mmask16)(m << 8), s + 2 * bs - 32);
			a = _mm512_mask_loadu_ps(a, (__mmask16)(m << 12), s + 3 * bs - 48);
			__m512 b = _mm512_maskz_loadu_ps(m, s + 4 * bs);
			b = _mm512_mask_loadu_ps(b, (__mmask16)(m << 4), s + 5 * bs - 16);
			b = _mm512_mask_loadu_ps(b, (__mmask16)(m << 8), s + 6 * bs - 32);
			b = _mm512_mask_loadu_ps(b, (__mmask16)(m << 12), s + 7 * bs - 48);
			_mm512_storeu_ps(d, _mm512_permutex2var_ps(a, lo, b));
			_mm512_storeu_ps(d + 16, _mm512_permutex2var_ps(a, hi, b));
		}
	}
}

/* phase.store_lines (kernels.h). Strides 8 and 4: per 16 positions of a run, the s tiles'
 * vectors transposed in registers into s whole output vectors of 16/s lines each (unpacks
 * within the 128-bit lanes, then 128-bit lane shuffles), the bias added after, stored whole
 * (non-temporal for streamed outputs when 64-byte aligned). Other strides and the last < 16
 * positions of a run: line after line, in order. Either way the additions of store: the same
 * bits. */
static inline __attribute__((always_inline)) T512 void put_line_vector(float *v, __m512 o, bool stream)
{
	if (stream)
		_mm512_stream_ps(v, o);
	else
		_mm512_storeu_ps(v, o);
}

static inline __attribute__((always_inline)) T512 void lines4(const float *t, int64_t tstride, __m512 b, float *d,
                                                              bool stream)
{
	const __m512 x0 = _mm512_loadu_ps(t), x1 = _mm512_loadu_ps(t + tstride), x2 = _mm512_loadu_ps(t + 2 * tstride),
	             x3 = _mm512_loadu_ps(t + 3 * tstride);
	const __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(x0, x1)), t1 = _mm512_castps_pd(_mm512_unpackhi_ps(x0, x1));
	const __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(x2, x3)), t3 = _mm512_castps_pd(_mm512_unpackhi_ps(x2, x3));
	/* u_k lane L: position 4L + k, phases 0-3; output vector L = lanes L of u0, u1, u2, u3 */
	const __m512 u0 = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)), u1 = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
	const __m512 u2 = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)), u3 = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
	const __m512 a01 = _mm512_shuffle_f32x4(u0, u1, 0x44), b01 = _mm512_shuffle_f32x4(u2, u3, 0x44);
	const __m512 a23 = _mm512_shuffle_f32x4(u0, u1, 0xEE), b23 = _mm512_shuffle_f32x4(u2, u3, 0xEE);
	put_line_vector(d, _mm512_add_ps(_mm512_shuffle_f32x4(a01, b01, 0x88), b), stream);
	put_line_vector(d + 16, _mm512_add_ps(_mm512_shuffle_f32x4(a01, b01, 0xDD), b), stream);
	put_line_vector(d + 32, _mm512_add_ps(_mm512_shuffle_f32x4(a23, b23, 0x88), b), stream);
	put_line_vector(d + 48, _mm512_add_ps(_mm512_shuffle_f32x4(a23, b23, 0xDD), b), stream);
}

static inline __attribute__((always_inline)) T512 void lines8(const float *t, int64_t tstride, __m512 b, float *d,
                                                              bool stream)
{
	const __m512 x0 = _mm512_loadu_ps(t), x1 = _mm512_loadu_ps(t + tstride), x2 = _mm512_loadu_ps(t + 2 * tstride),
	             x3 = _mm512_loadu_ps(t + 3 * tstride), x4 = _mm512_loadu_ps(t + 4 * tstride),
	             x5 = _mm512_loadu_ps(t + 5 * tstride), x6 = _mm512_loadu_ps(t + 6 * tstride),
	             x7 = _mm512_loadu_ps(t + 7 * tstride);
	/* per 128-bit lane L (positions 4L..4L+3): t0 = positions 4L, 4L+1 of phases 0, 1 */
	const __m512 t0 = _mm512_unpacklo_ps(x0, x1), t1 = _mm512_unpackhi_ps(x0, x1);
	const __m512 t2 = _mm512_unpacklo_ps(x2, x3), t3 = _mm512_unpackhi_ps(x2, x3);
	const __m512 t4 = _mm512_unpacklo_ps(x4, x5), t5 = _mm512_unpackhi_ps(x4, x5);
	const __m512 t6 = _mm512_unpacklo_ps(x6, x7), t7 = _mm512_unpackhi_ps(x6, x7);
	/* u[k] lane L: position 4L + k, phases 0-3; u[4 + k]: phases 4-7 */
	__m512 u[8];
	u[0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
	u[1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
	u[2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
	u[3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
	u[4] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t4), _mm512_castps_pd(t6)));
	u[5] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t4), _mm512_castps_pd(t6)));
	u[6] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t5), _mm512_castps_pd(t7)));
	u[7] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t5), _mm512_castps_pd(t7)));
	/* output vector 4L/2 + h (h = 0, 1: positions 4L + 2h, 4L + 2h + 1) = lanes L of u[2h],
	 * u[4 + 2h], u[2h + 1], u[4 + 2h + 1] */
	for (int h = 0; h < 2; h++) {
		const __m512 a01 = _mm512_shuffle_f32x4(u[2 * h], u[4 + 2 * h], 0x44); /* L0 L1 | L0 L1 */
		const __m512 b01 = _mm512_shuffle_f32x4(u[2 * h + 1], u[5 + 2 * h], 0x44);
		const __m512 a23 = _mm512_shuffle_f32x4(u[2 * h], u[4 + 2 * h], 0xEE); /* L2 L3 | L2 L3 */
		const __m512 b23 = _mm512_shuffle_f32x4(u[2 * h + 1], u[5 + 2 * h], 0xEE);
		__m512 o[4];
		o[0] = _mm512_add_ps(_mm512_shuffle_f32x4(a01, b01, 0x88), b); /* lane 0 of each: L0 */
		o[1] = _mm512_add_ps(_mm512_shuffle_f32x4(a01, b01, 0xDD), b); /* lane 1: L1 */
		o[2] = _mm512_add_ps(_mm512_shuffle_f32x4(a23, b23, 0x88), b);
		o[3] = _mm512_add_ps(_mm512_shuffle_f32x4(a23, b23, 0xDD), b);
		for (int l = 0; l < 4; l++)
			put_line_vector(d + 16 * (2 * l + h), o[l], stream);
	}
}

static T512 void store_lines(const struct onnxrun__kpanel *kp, const float *tiles, int64_t tstride, int64_t nr,
                             int64_t mr, const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta,
                             const float *bias)
{
	const int64_t sl = kp->sl;
	for (int64_t i = 0; i < mr; i++) {
		const float bi = bias ? bias[i] : 0.0f;
		const __m512 b = _mm512_set1_ps(bi);
		float *ym = y + i * kp->out_sp + ydelta;
		for (int64_t s = 0; s < nrun; s++) {
			const float *t = tiles + i * nr + runs[s].col;
			float *d = ym + runs[s].yoff;
			const int64_t len = runs[s].len;
			int64_t e = 0;
			if (sl == 8)
				for (; e + 16 <= len; e += 16, d += 128)
					lines8(t + e, tstride, b, d, kp->stream && !((uintptr_t)d & 63));
			if (sl == 4)
				for (; e + 16 <= len; e += 16, d += 64)
					lines4(t + e, tstride, b, d, kp->stream && !((uintptr_t)d & 63));
			for (; e < len; e++, d += sl)
				for (int64_t m = 0; m < sl; m++)
					d[m] = t[m * tstride + e] + bi;
		}
	}
	if (kp->stream)
		return;
	/* the next m-panel's output lines, for writing (as in store) */
	for (int64_t i = mr; i < 2 * mr; i++)
		for (int64_t s = 0; s < nrun; s++) {
			const char *d = (const char *)(y + i * kp->out_sp + ydelta + runs[s].yoff);
			for (int64_t off = 0; off < runs[s].len * sl * 4; off += 64)
				__builtin_prefetch(d + off, 1);
		}
}

static void store_fence(void)
{
	_mm_sfence();
}

/* The window GEMM's store (kernels.h): stride 1 an add and a store per 16 outputs; strides 2
 * and 3 interleave 16 positions of the s rows into s whole output vectors (stride 2: two
 * two-source permutes; stride 3: per vector a two-source permute of rows 0 and 1 and a
 * masked permute of row 2); the last < 16 positions with masked loads and stores. Other
 * strides: the generic loop. */
static const int32_t win3_ab[3][16] = { { 0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5 },
	                                { 21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26 },
	                                { 0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0 } };
static const int32_t win3_c[3][16] = { { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5 },
	                               { 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10 },
	                               { 10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15 } };
static const uint16_t win3_m[3] = { 0x4924, 0x2492, 0x9249 };

T512 void onnxrun__win_store_avx512(const float *tile, int64_t ldt, int64_t s, int64_t n, float *y, float bias)
{
	const __m512 bv = _mm512_set1_ps(bias);
	if (s == 1) {
		for (int64_t e = 0; e < n; e += 16) {
			const __mmask16 m = n - e >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - e)) - 1);
			_mm512_mask_storeu_ps(y + e, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, tile + e), bv));
		}
	} else if (s == 2) {
		const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
		const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
		for (int64_t e = 0; e < n; e += 16) {
			const int64_t left = n - e;
			const __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
			const __m512 a = _mm512_add_ps(_mm512_maskz_loadu_ps(m, tile + e), bv);
			const __m512 b = _mm512_add_ps(_mm512_maskz_loadu_ps(m, tile + ldt + e), bv);
			const __m512 v0 = _mm512_permutex2var_ps(a, lo, b), v1 = _mm512_permutex2var_ps(a, hi, b);
			if (left >= 16) {
				_mm512_storeu_ps(y + 2 * e, v0);
				_mm512_storeu_ps(y + 2 * e + 16, v1);
			} else {
				const int64_t outs = 2 * left;
				_mm512_mask_storeu_ps(y + 2 * e, (__mmask16)(outs >= 16 ? 0xffffu : (1u << outs) - 1), v0);
				if (outs > 16)
					_mm512_mask_storeu_ps(y + 2 * e + 16, (__mmask16)((1u << (outs - 16)) - 1), v1);
			}
		}
	} else if (s == 3) {
		for (int64_t e = 0; e < n; e += 16) {
			const int64_t left = n - e;
			const __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
			const __m512 a = _mm512_add_ps(_mm512_maskz_loadu_ps(m, tile + e), bv);
			const __m512 b = _mm512_add_ps(_mm512_maskz_loadu_ps(m, tile + ldt + e), bv);
			const __m512 c = _mm512_add_ps(_mm512_maskz_loadu_ps(m, tile + 2 * ldt + e), bv);
			for (int v = 0; v < 3; v++) {
				__m512 o = _mm512_permutex2var_ps(a, _mm512_loadu_si512(win3_ab[v]), b);
				o = _mm512_mask_permutexvar_ps(o, (__mmask16)win3_m[v], _mm512_loadu_si512(win3_c[v]), c);
				const int64_t outs = 3 * left - 16 * v;
				if (outs >= 16)
					_mm512_storeu_ps(y + 3 * e + 16 * v, o);
				else if (outs > 0)
					_mm512_mask_storeu_ps(y + 3 * e + 16 * v, (__mmask16)((1u << outs) - 1), o);
			}
		}
	} else {
		generic_win_store(tile, ldt, s, n, y, bias);
	}
}


const struct onnxrun__kernels onnxrun__kernels_avx512 = {
	.isa = ONNXRUN__ISA_AVX512,
	.name = "avx512",
	.gemm = &onnxrun__gemm_avx512,
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = pack_halves, .store = store,
	           .store_pair = store_pair, .rel2_pair = onnxrun__rel2_pair_avx512, .store_lines = store_lines,
	           .lines_strides = 1u << 4 | 1u << 8, .pack_img8 = pack_img8,
	           .store_fence = store_fence },
	.col2im_gather = onnxrun__col2im_gather_avx512,
	.window = &onnxrun__window_avx512,
	.dw_rows = onnxrun__dw_rows_avx512,
	.f64 = &onnxrun__f64_avx512,
	.widen = onnxrun__widen_avx512,
	.narrow = onnxrun__narrow_avx512,
	.d2s = { .row2 = onnxrun__d2s_row2_avx512, .row4 = onnxrun__d2s_row4_avx512,
	         .row2_stream = onnxrun__d2s_row2_avx512_stream, .row4_stream = onnxrun__d2s_row4_avx512_stream,
	         .stream_fence = store_fence },
};

#endif
