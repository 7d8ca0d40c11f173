/*
 * avx512_f64.c - the AVX-512 float64 ConvTranspose tiles and store (kernels.h, struct
 * onnxrun__f64_kernels).
 */
#include "generic_f64.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

/* AVX-512: MB x NV vectors of 8 doubles in registers (MB*NV <= 16 of the 32). x row p at
 * xrows[p], or (xrows NULL) at xb + p*nw. */
T512 ONNXRUN__INLINE void tile_avx512_body(int mb, int nv, int64_t kk, const double *xb, const double *const *xrows,
                                           const double *wb, double *tile)
{
	__m512d acc[ONNXRUN__F64_MB_MAX][8], xv[8];
	F64_UNROLL for (int m = 0; m < mb; m++)
		F64_UNROLL for (int v = 0; v < nv; v++)
			acc[m][v] = _mm512_loadu_pd(tile + (m * nv + v) * 8);
	for (int64_t p = 0; p < kk; p++) {
		const double *x = xrows ? xrows[p] : xb + p * 8 * nv, *w = wb + p * mb;
		if (mb >= 4) /* a no-op for the cache lines already fetched */
			_mm_prefetch((const char *)w + F64_PREFETCH_BYTES, _MM_HINT_T0);
		F64_UNROLL for (int v = 0; v < nv; v++)
			xv[v] = _mm512_loadu_pd(x + 8 * v);
		F64_UNROLL for (int m = 0; m < mb; m++) {
			const __m512d wv = _mm512_set1_pd(w[m]);
			F64_UNROLL for (int v = 0; v < nv; v++)
				acc[m][v] = _mm512_fmadd_pd(wv, xv[v], acc[m][v]);
		}
	}
	F64_UNROLL for (int m = 0; m < mb; m++)
		F64_UNROLL for (int v = 0; v < nv; v++)
			_mm512_storeu_pd(tile + (m * nv + v) * 8, acc[m][v]);
}

#define F64_TILE_AVX512(MB, NV)                                                                              \
	T512 static void tile_avx512_##MB##x##NV(int64_t kk, const double *xb, const double *wb, double *tile) \
	{                                                                                                      \
		tile_avx512_body(MB, NV, kk, xb, NULL, wb, tile);                                              \
	}                                                                                                      \
	T512 static void ind_avx512_##MB##x##NV(int64_t kk, const double *const *xrows, const double *wb,      \
	                                        double *tile)                                                  \
	{                                                                                                      \
		tile_avx512_body(MB, NV, kk, NULL, xrows, wb, tile);                                           \
	}
F64_TILE_AVX512(8, 1)
F64_TILE_AVX512(8, 2)
F64_TILE_AVX512(4, 1)
F64_TILE_AVX512(4, 2)
F64_TILE_AVX512(4, 4)
F64_TILE_AVX512(1, 1)
F64_TILE_AVX512(1, 2)
F64_TILE_AVX512(1, 4)
F64_TILE_AVX512(1, 8)

/* One vector of output at d: with stream, non-temporal where d is 64-byte aligned (a whole cache
 * line written without reading it first), else a plain store. */
T512 ONNXRUN__INLINE void put_line(double *d, __m512d v, const bool stream)
{
	if (stream && !((uintptr_t)d & 63))
		_mm512_stream_pd(d, v);
	else
		_mm512_storeu_pd(d, v);
}

/* Stride 1: masked vector adds and stores. Strides 2 and 4: 8/sl tile values spread over an
 * 8-double window (permute), only the phase's lanes written (masked store). Else the generic
 * store. With stream, the whole 64-byte-aligned vectors of stride 1 are non-temporal (the
 * partial ones of strides 2 and 4 write lanes another phase writes too: those stay plain). */
T512 ONNXRUN__INLINE void store_body(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0,
                                     int64_t plane, int64_t sl, const double *bias, const bool stream)
{
	if (sl != 1 && sl != 2 && sl != 4) {
		generic_f64_store(tile, nw, mc, uc, y0, plane, sl, bias);
		return;
	}
	const int per = (int)(8 / sl); /* tile values per 8-double window */
	const __m512i spread = sl == 1 ? _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7) :
	                       sl == 2 ? _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3) :
	                                 _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1);
	const unsigned lanes = sl == 1 ? 0xFF : sl == 2 ? 0x55 : 0x11;
	for (int64_t m = 0; m < mc; m++) {
		const __m512d b = _mm512_set1_pd(bias ? bias[m] : 0.0);
		const double *t = tile + m * nw;
		double *d = y0 + m * plane;
		for (int64_t e = 0; e < uc; e += per, d += 8) {
			const int rem = uc - e < per ? (int)(uc - e) : per;
			const __m512d v = _mm512_maskz_loadu_pd((__mmask8)((1u << rem) - 1), t + e);
			const unsigned keep = rem == per ? lanes : lanes & ((1u << (rem * sl)) - 1);
			const __m512d o = _mm512_add_pd(_mm512_permutexvar_pd(spread, v), b);
			if (keep == 0xFF)
				put_line(d, o, stream);
			else
				_mm512_mask_storeu_pd(d, (__mmask8)keep, o);
		}
	}
}

/* store_group (kernels.h). Per 8 positions of a run: the sg phases' 8 values each (one vector per
 * phase) transposed in registers into sg whole vectors of output, [position][phase] (sg = 8: an
 * 8x8 transpose; 4 and 2: the same first steps), plus the bias, stored contiguously (with
 * stream, non-temporal where 64-byte aligned); the last positions and other sg by the plain
 * loop. Only moves and one add per value: the same bits. */
T512 ONNXRUN__INLINE void store_group_body(const double *tile, int64_t accn, int64_t nw, int64_t mc, int64_t uc,
                                           double *y0, int64_t plane, int64_t sg, const double *bias,
                                           const bool stream)
{
	const __m512i lo2 = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi2 = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
	const __m512i q02 = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), q13 = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
	const __m512i half_lo = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
	const __m512i half_hi = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
	const __m512i p4lo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), p4hi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
	for (int64_t m = 0; m < mc; m++) {
		const double bs = bias ? bias[m] : 0.0, *t = tile + m * nw;
		const __m512d b = _mm512_set1_pd(bs);
		double *d = y0 + m * plane;
		int64_t e = 0;
		if (sg == 8)
			for (; e + 8 <= uc; e += 8) {
				__m512d v[8], a[8], c[8];
				for (int jj = 0; jj < 8; jj++)
					v[jj] = _mm512_loadu_pd(t + jj * accn + e);
				for (int i = 0; i < 8; i += 2) { /* a[i]: even positions of rows i, i+1; a[i+1]: odd */
					a[i] = _mm512_unpacklo_pd(v[i], v[i + 1]);
					a[i + 1] = _mm512_unpackhi_pd(v[i], v[i + 1]);
				}
				/* rows 0-3 (c[0..3]) and 4-7 (c[4..7]): positions {0,4}, {2,6}, {1,5}, {3,7} */
				for (int h = 0; h < 8; h += 4) {
					c[h] = _mm512_permutex2var_pd(a[h], q02, a[h + 2]);
					c[h + 1] = _mm512_permutex2var_pd(a[h], q13, a[h + 2]);
					c[h + 2] = _mm512_permutex2var_pd(a[h + 1], q02, a[h + 3]);
					c[h + 3] = _mm512_permutex2var_pd(a[h + 1], q13, a[h + 3]);
				}
				static const int pos[4] = { 0, 2, 1, 3 }; /* c[i] holds positions pos[i] and pos[i] + 4 */
				for (int i = 0; i < 4; i++) {
					double *dp = d + (e + pos[i]) * 8;
					put_line(dp, _mm512_add_pd(_mm512_permutex2var_pd(c[i], half_lo, c[i + 4]), b), stream);
					put_line(dp + 32, _mm512_add_pd(_mm512_permutex2var_pd(c[i], half_hi, c[i + 4]), b), stream);
				}
			}
		else if (sg == 4)
			for (; e + 8 <= uc; e += 8) {
				__m512d v[4], a[4], c[4];
				for (int jj = 0; jj < 4; jj++)
					v[jj] = _mm512_loadu_pd(t + jj * accn + e);
				for (int i = 0; i < 4; i += 2) {
					a[i] = _mm512_unpacklo_pd(v[i], v[i + 1]);
					a[i + 1] = _mm512_unpackhi_pd(v[i], v[i + 1]);
				}
				c[0] = _mm512_permutex2var_pd(a[0], p4lo, a[2]); /* positions 0, 2 */
				c[1] = _mm512_permutex2var_pd(a[1], p4lo, a[3]); /* 1, 3 */
				c[2] = _mm512_permutex2var_pd(a[0], p4hi, a[2]); /* 4, 6 */
				c[3] = _mm512_permutex2var_pd(a[1], p4hi, a[3]); /* 5, 7 */
				double *dp = d + e * 4;
				put_line(dp, _mm512_add_pd(_mm512_permutex2var_pd(c[0], half_lo, c[1]), b), stream);
				put_line(dp + 8, _mm512_add_pd(_mm512_permutex2var_pd(c[0], half_hi, c[1]), b), stream);
				put_line(dp + 16, _mm512_add_pd(_mm512_permutex2var_pd(c[2], half_lo, c[3]), b), stream);
				put_line(dp + 24, _mm512_add_pd(_mm512_permutex2var_pd(c[2], half_hi, c[3]), b), stream);
			}
		else if (sg == 2)
			for (; e + 8 <= uc; e += 8) {
				const __m512d v0 = _mm512_loadu_pd(t + e), v1 = _mm512_loadu_pd(t + accn + e);
				put_line(d + e * 2, _mm512_add_pd(_mm512_permutex2var_pd(v0, lo2, v1), b), stream);
				put_line(d + e * 2 + 8, _mm512_add_pd(_mm512_permutex2var_pd(v0, hi2, v1), b), stream);
			}
		for (; e < uc; e++)
			for (int64_t jj = 0; jj < sg; jj++)
				d[e * sg + jj] = t[jj * accn + e] + bs;
	}
}

F64_STORE_ENTRIES(T512)

static void stream_fence(void)
{
	_mm_sfence();
}

/* The 4-wide AVX2 tiles serve rows of at most 4 positions. */
static const struct onnxrun__f64_tile tiles[] = {
	{ 8, 8, tile_avx512_8x1, ind_avx512_8x1 },
	{ 8, 16, tile_avx512_8x2, ind_avx512_8x2 },
	{ 4, 4, onnxrun__f64_tile_avx2_4x1, onnxrun__f64_ind_avx2_4x1 },
	{ 4, 8, tile_avx512_4x1, ind_avx512_4x1 },
	{ 4, 16, tile_avx512_4x2, ind_avx512_4x2 },
	{ 4, 32, tile_avx512_4x4, ind_avx512_4x4 },
	{ 1, 4, onnxrun__f64_tile_avx2_1x1, onnxrun__f64_ind_avx2_1x1 },
	{ 1, 8, tile_avx512_1x1, ind_avx512_1x1 },
	{ 1, 16, tile_avx512_1x2, ind_avx512_1x2 },
	{ 1, 32, tile_avx512_1x4, ind_avx512_1x4 },
	{ 1, 64, tile_avx512_1x8, ind_avx512_1x8 },
};

const struct onnxrun__f64_kernels onnxrun__f64_avx512 = { .tiles = tiles,
	                                                   .ntiles = (int)(sizeof tiles / sizeof tiles[0]),
	                                                   .store = store,
	                                                   .store_group = store_group,
	                                                   .store_stream = store_stream,
	                                                   .store_group_stream = store_group_stream,
	                                                   .stream_fence = stream_fence };

#endif
