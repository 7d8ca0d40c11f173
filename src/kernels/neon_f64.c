/*
 * neon_f64.c - the AArch64 NEON float64 ConvTranspose tiles, store and store_group (kernels.h,
 * struct onnxrun__f64_kernels): vectors of 2 doubles, the weights of a step loaded as vectors and
 * applied with lane-indexed fused multiply-adds (fmla v.2d, v.2d, v.d[lane]).
 */
#include "generic_f64.h"
#include "parts.h"

#if defined(__aarch64__)
#include <arm_neon.h>

/* MB channels (1, 4 or 8) x NV vectors of 2 positions (NV <= 4; 8 for one channel) in named
 * accumulators, as in neon_gemm.c, so that they stay in registers (an array indexed in loops
 * was kept on the stack): at most 16 accumulators + 4 x vectors + 4 weight vectors. Row m
 * takes its weight from lane m % 2 of weight vector m / 2. */
#define D_LOAD(m, v) (mb > m && nv > v ? vld1q_f64(tile + m * 2 * nv + 2 * v) : vdupq_n_f64(0.0))
#define D_DECL(m) \
	float64x2_t c##m##0 = D_LOAD(m, 0), c##m##1 = D_LOAD(m, 1), c##m##2 = D_LOAD(m, 2), c##m##3 = D_LOAD(m, 3);
#define D_STEP(m, W, L)                                                                        \
	if (mb > m) {                                                                          \
		c##m##0 = vfmaq_laneq_f64(c##m##0, x0, W, L);                                  \
		if (nv > 1)                                                                    \
			c##m##1 = vfmaq_laneq_f64(c##m##1, x1, W, L);                          \
		if (nv > 2)                                                                    \
			c##m##2 = vfmaq_laneq_f64(c##m##2, x2, W, L);                          \
		if (nv > 3)                                                                    \
			c##m##3 = vfmaq_laneq_f64(c##m##3, x3, W, L);                          \
	}
#define D_STORE(m)                                                                             \
	if (mb > m) {                                                                          \
		vst1q_f64(tile + m * 2 * nv, c##m##0);                                         \
		if (nv > 1)                                                                    \
			vst1q_f64(tile + m * 2 * nv + 2, c##m##1);                             \
		if (nv > 2)                                                                    \
			vst1q_f64(tile + m * 2 * nv + 4, c##m##2);                             \
		if (nv > 3)                                                                    \
			vst1q_f64(tile + m * 2 * nv + 6, c##m##3);                             \
	}
#define D_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)

ONNXRUN__INLINE void tile_body(int mb, int nv, int64_t kk, const double *xb, const double *const *xrows,
                               const double *wb, double *tile)
{
	D_ALL(D_DECL)
	for (int64_t p = 0; p < kk; p++) {
		const double *x = xrows ? xrows[p] : xb + p * 2 * nv, *w = wb + p * mb;
		const float64x2_t x0 = vld1q_f64(x), x1 = nv > 1 ? vld1q_f64(x + 2) : x0;
		const float64x2_t x2 = nv > 2 ? vld1q_f64(x + 4) : x0, x3 = nv > 3 ? vld1q_f64(x + 6) : x0;
		const float64x2_t w01 = vld1q_f64(w), w23 = vld1q_f64(w + 2);
		const float64x2_t w45 = mb > 4 ? vld1q_f64(w + 4) : w01, w67 = mb > 4 ? vld1q_f64(w + 6) : w01;
		D_STEP(0, w01, 0) D_STEP(1, w01, 1) D_STEP(2, w23, 0) D_STEP(3, w23, 1)
		D_STEP(4, w45, 0) D_STEP(5, w45, 1) D_STEP(6, w67, 0) D_STEP(7, w67, 1)
	}
	D_ALL(D_STORE)
}

/* One channel: 8 accumulators of 2 positions, the weight broadcast by fmla by element. */
#define E_DECL(v) float64x2_t e##v = nv > v ? vld1q_f64(tile + 2 * v) : vdupq_n_f64(0.0);
#define E_STEP(v)                                                                              \
	if (nv > v)                                                                            \
		e##v = vfmaq_n_f64(e##v, vld1q_f64(x + 2 * v), w);
#define E_STORE(v)                                                                             \
	if (nv > v)                                                                            \
		vst1q_f64(tile + 2 * v, e##v);

ONNXRUN__INLINE void tile1_body(int nv, int64_t kk, const double *xb, const double *const *xrows, const double *wb,
                                double *tile)
{
	D_ALL(E_DECL)
	for (int64_t p = 0; p < kk; p++) {
		const double *x = xrows ? xrows[p] : xb + p * 2 * nv, w = wb[p];
		D_ALL(E_STEP)
	}
	D_ALL(E_STORE)
}

#define F64_TILE_NEON(MB, NV)                                                                                \
	static void tile_neon_##MB##x##NV(int64_t kk, const double *xb, const double *wb, double *tile)        \
	{                                                                                                      \
		if (MB == 1)                                                                                   \
			tile1_body(NV, kk, xb, NULL, wb, tile);                                                \
		else                                                                                           \
			tile_body(MB, NV, kk, xb, NULL, wb, tile);                                             \
	}                                                                                                      \
	static void ind_neon_##MB##x##NV(int64_t kk, const double *const *xrows, const double *wb,              \
	                                 double *tile)                                                        \
	{                                                                                                      \
		if (MB == 1)                                                                                   \
			tile1_body(NV, kk, NULL, xrows, wb, tile);                                             \
		else                                                                                           \
			tile_body(MB, NV, kk, NULL, xrows, wb, tile);                                          \
	}
F64_TILE_NEON(8, 2)
F64_TILE_NEON(4, 2)
F64_TILE_NEON(4, 4)
F64_TILE_NEON(1, 2)
F64_TILE_NEON(1, 4)
F64_TILE_NEON(1, 8)

/* Stride 1: vector adds and stores (the same additions as the generic store, so the same
 * bits); other strides: the generic store. */
static void store(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0, int64_t plane, int64_t sl,
                  const double *bias)
{
	if (sl != 1) {
		generic_f64_store(tile, nw, mc, uc, y0, plane, sl, bias);
		return;
	}
	for (int64_t m = 0; m < mc; m++) {
		const double b = bias ? bias[m] : 0.0, *t = tile + m * nw;
		const float64x2_t bv = vdupq_n_f64(b);
		double *d = y0 + m * plane;
		int64_t e = 0;
		for (; e + 2 <= uc; e += 2)
			vst1q_f64(d + e, vaddq_f64(vld1q_f64(t + e), bv));
		for (; e < uc; e++)
			d[e] = t[e] + b;
	}
}

/* store_group (kernels.h). Per 2 positions of a run and each pair of phases h, h+1: their two
 * vectors of 2 values transposed (zip1/zip2) into [position][phase] pairs, plus the bias,
 * stored at the pair's place in each position's sg outputs; an odd sg's last phase, and the
 * last position of an odd run, by the plain loop. Only moves and one add per value: the same
 * bits. */
static void store_group(const double *tile, int64_t accn, int64_t nw, int64_t mc, int64_t uc, double *y0,
                        int64_t plane, int64_t sg, const double *bias)
{
	const int64_t sp = sg & ~(int64_t)1; /* the phases stored in pairs */
	for (int64_t m = 0; m < mc; m++) {
		const double bs = bias ? bias[m] : 0.0, *t = tile + m * nw;
		const float64x2_t b = vdupq_n_f64(bs);
		double *d = y0 + m * plane;
		int64_t e = 0;
		for (; e + 2 <= uc; e += 2) {
			double *dp = d + e * sg;
			for (int64_t h = 0; h < sp; h += 2) {
				const float64x2_t v0 = vld1q_f64(t + h * accn + e), v1 = vld1q_f64(t + (h + 1) * accn + e);
				vst1q_f64(dp + h, vaddq_f64(vzip1q_f64(v0, v1), b));
				vst1q_f64(dp + sg + h, vaddq_f64(vzip2q_f64(v0, v1), b));
			}
			if (sp < sg) {
				dp[sp] = t[sp * accn + e] + bs;
				dp[sg + sp] = t[sp * accn + e + 1] + bs;
			}
		}
		for (; e < uc; e++)
			for (int64_t jj = 0; jj < sg; jj++)
				d[e * sg + jj] = t[jj * accn + e] + bs;
	}
}

static const struct onnxrun__f64_tile tiles[] = {
	{ 8, 4, tile_neon_8x2, ind_neon_8x2 }, { 4, 4, tile_neon_4x2, ind_neon_4x2 }, { 4, 8, tile_neon_4x4, ind_neon_4x4 },
	{ 1, 4, tile_neon_1x2, ind_neon_1x2 }, { 1, 8, tile_neon_1x4, ind_neon_1x4 }, { 1, 16, tile_neon_1x8, ind_neon_1x8 },
};

const struct onnxrun__f64_kernels onnxrun__f64_neon = { .tiles = tiles,
                                                        .ntiles = (int)(sizeof tiles / sizeof tiles[0]),
                                                        .store = store,
                                                        .store_group = store_group };

#endif
