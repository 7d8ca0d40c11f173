/*
 * avx2_f64.c - the AVX2+FMA float64 ConvTranspose tiles, store and store_group (kernels.h, struct
 * onnxrun__f64_kernels).
 */
#include "generic_f64.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T256 __attribute__((target("avx2,fma")))

/* AVX2+FMA: MB x NV vectors of 4 doubles in registers (MB*NV <= 12 of the 16). x row p at
 * xrows[p], or (xrows NULL) at xb + p*nw. */
T256 ONNXRUN__INLINE void tile_avx2_body(int mb, int nv, int64_t kk, const double *xb, const double *const *xrows,
                                         const double *wb, double *tile)
{
	__m256d acc[ONNXRUN__F64_MB_MAX][8], xv[8];
	F64_UNROLL for (int m = 0; m < mb; m++)
		F64_UNROLL for (int v = 0; v < nv; v++)
			acc[m][v] = _mm256_loadu_pd(tile + (m * nv + v) * 4);
	for (int64_t p = 0; p < kk; p++) {
		const double *x = xrows ? xrows[p] : xb + p * 4 * nv, *w = wb + p * mb;
		if (mb >= 4) /* a no-op for the cache lines already fetched */
			_mm_prefetch((const char *)w + F64_PREFETCH_BYTES, _MM_HINT_T0);
		F64_UNROLL for (int v = 0; v < nv; v++)
			xv[v] = _mm256_loadu_pd(x + 4 * v);
		F64_UNROLL for (int m = 0; m < mb; m++) {
			const __m256d wv = _mm256_broadcast_sd(w + m);
			F64_UNROLL for (int v = 0; v < nv; v++)
				acc[m][v] = _mm256_fmadd_pd(wv, xv[v], acc[m][v]);
		}
	}
	F64_UNROLL for (int m = 0; m < mb; m++)
		F64_UNROLL for (int v = 0; v < nv; v++)
			_mm256_storeu_pd(tile + (m * nv + v) * 4, acc[m][v]);
}

#define F64_TILE_AVX2(LINKAGE, NAME, IND, MB, NV)                                                            \
	T256 LINKAGE void NAME(int64_t kk, const double *xb, const double *wb, double *tile)                   \
	{                                                                                                      \
		tile_avx2_body(MB, NV, kk, xb, NULL, wb, tile);                                                \
	}                                                                                                      \
	T256 LINKAGE void IND(int64_t kk, const double *const *xrows, const double *wb, double *tile)          \
	{                                                                                                      \
		tile_avx2_body(MB, NV, kk, NULL, xrows, wb, tile);                                             \
	}
F64_TILE_AVX2(static, tile_avx2_6x1, ind_avx2_6x1, 6, 1)
F64_TILE_AVX2(static, tile_avx2_6x2, ind_avx2_6x2, 6, 2)
/* also in the AVX-512 list */
F64_TILE_AVX2(, onnxrun__f64_tile_avx2_4x1, onnxrun__f64_ind_avx2_4x1, 4, 1)
F64_TILE_AVX2(static, tile_avx2_4x2, ind_avx2_4x2, 4, 2)
F64_TILE_AVX2(static, tile_avx2_4x3, ind_avx2_4x3, 4, 3)
/* also in the AVX-512 list */
F64_TILE_AVX2(, onnxrun__f64_tile_avx2_1x1, onnxrun__f64_ind_avx2_1x1, 1, 1)
F64_TILE_AVX2(static, tile_avx2_1x2, ind_avx2_1x2, 1, 2)
F64_TILE_AVX2(static, tile_avx2_1x4, ind_avx2_1x4, 1, 4)
F64_TILE_AVX2(static, tile_avx2_1x8, ind_avx2_1x8, 1, 8)

/* One vector of output at d: with stream, non-temporal where d is 32-byte aligned (the line's
 * halves combine in the write-combining buffer; no read for ownership), else a plain store. */
T256 ONNXRUN__INLINE void put_half_line(double *d, __m256d v, const bool stream)
{
	if (stream && !((uintptr_t)d & 31))
		_mm256_stream_pd(d, v);
	else
		_mm256_storeu_pd(d, v);
}

/* Stride 1: vector adds and stores (with stream, non-temporal where aligned); other strides:
 * plain C. */
T256 ONNXRUN__INLINE void store_body(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0,
                                     int64_t plane, int64_t sl, const double *bias, const bool stream)
{
	if (sl != 1) {
		generic_f64_store(tile, nw, mc, uc, y0, plane, sl, bias);
		return;
	}
	for (int64_t m = 0; m < mc; m++) {
		const double b = bias ? bias[m] : 0.0, *t = tile + m * nw;
		const __m256d bv = _mm256_set1_pd(b);
		double *d = y0 + m * plane;
		int64_t e = 0;
		for (; e + 4 <= uc; e += 4)
			put_half_line(d + e, _mm256_add_pd(_mm256_loadu_pd(t + e), bv), stream);
		for (; e < uc; e++)
			d[e] = t[e] + b;
	}
}

/* store_group (kernels.h). Per 4 positions of a run: the sg phases' 4 values each (one vector
 * per phase) transposed in registers into whole vectors of output, [position][phase]: sg = 4
 * a 4x4 transpose (unpacks, then 128-bit lane permutes), sg = 8 two of them (phases 0-3 and
 * 4-7 of each position side by side), sg = 2 the first steps; plus the bias, stored
 * contiguously (with stream, non-temporal where aligned); the last positions and other sg by
 * the plain loop. Only moves and one add per value: the same bits. */
T256 ONNXRUN__INLINE void store_group_body(const double *tile, int64_t accn, int64_t nw, int64_t mc, int64_t uc,
                                           double *y0, int64_t plane, int64_t sg, const double *bias,
                                           const bool stream)
{
	for (int64_t m = 0; m < mc; m++) {
		const double bs = bias ? bias[m] : 0.0, *t = tile + m * nw;
		const __m256d b = _mm256_set1_pd(bs);
		double *d = y0 + m * plane;
		int64_t e = 0;
		if (sg == 4 || sg == 8)
			for (; e + 4 <= uc; e += 4)
				for (int64_t h = 0; h < sg; h += 4) { /* phases h..h+3 of positions e..e+3 */
					const double *th = t + h * accn + e;
					const __m256d v0 = _mm256_loadu_pd(th), v1 = _mm256_loadu_pd(th + accn);
					const __m256d v2 = _mm256_loadu_pd(th + 2 * accn), v3 = _mm256_loadu_pd(th + 3 * accn);
					const __m256d a0 = _mm256_unpacklo_pd(v0, v1), a1 = _mm256_unpackhi_pd(v0, v1); /* positions {0,2}, {1,3} */
					const __m256d a2 = _mm256_unpacklo_pd(v2, v3), a3 = _mm256_unpackhi_pd(v2, v3);
					double *dp = d + e * sg + h;
					put_half_line(dp, _mm256_add_pd(_mm256_permute2f128_pd(a0, a2, 0x20), b), stream);
					put_half_line(dp + sg, _mm256_add_pd(_mm256_permute2f128_pd(a1, a3, 0x20), b), stream);
					put_half_line(dp + 2 * sg, _mm256_add_pd(_mm256_permute2f128_pd(a0, a2, 0x31), b), stream);
					put_half_line(dp + 3 * sg, _mm256_add_pd(_mm256_permute2f128_pd(a1, a3, 0x31), b), stream);
				}
		else if (sg == 2)
			for (; e + 4 <= uc; e += 4) {
				const __m256d v0 = _mm256_loadu_pd(t + e), v1 = _mm256_loadu_pd(t + accn + e);
				const __m256d lo = _mm256_unpacklo_pd(v0, v1), hi = _mm256_unpackhi_pd(v0, v1);
				put_half_line(d + e * 2, _mm256_add_pd(_mm256_permute2f128_pd(lo, hi, 0x20), b), stream);
				put_half_line(d + e * 2 + 4, _mm256_add_pd(_mm256_permute2f128_pd(lo, hi, 0x31), b), stream);
			}
		for (; e < uc; e++)
			for (int64_t jj = 0; jj < sg; jj++)
				d[e * sg + jj] = t[jj * accn + e] + bs;
	}
}

F64_STORE_ENTRIES(T256)

static void stream_fence(void)
{
	_mm_sfence();
}

static const struct onnxrun__f64_tile tiles[] = {
	{ 6, 4, tile_avx2_6x1, ind_avx2_6x1 },
	{ 6, 8, tile_avx2_6x2, ind_avx2_6x2 },
	{ 4, 4, onnxrun__f64_tile_avx2_4x1, onnxrun__f64_ind_avx2_4x1 },
	{ 4, 8, tile_avx2_4x2, ind_avx2_4x2 },
	{ 4, 12, tile_avx2_4x3, ind_avx2_4x3 },
	{ 1, 4, onnxrun__f64_tile_avx2_1x1, onnxrun__f64_ind_avx2_1x1 },
	{ 1, 8, tile_avx2_1x2, ind_avx2_1x2 },
	{ 1, 16, tile_avx2_1x4, ind_avx2_1x4 },
	{ 1, 32, tile_avx2_1x8, ind_avx2_1x8 },
};

const struct onnxrun__f64_kernels onnxrun__f64_avx2 = { .tiles = tiles,
                                                        .ntiles = (int)(sizeof tiles / sizeof tiles[0]),
                                                        .store = store,
                                                        .store_group = store_group,
                                                        .store_stream = store_stream,
                                                        .store_group_stream = store_group_stream,
                                                        .stream_fence = stream_fence };

#endif
