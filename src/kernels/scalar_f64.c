/*
 * scalar_f64.c - the plain C float64 ConvTranspose tiles and store (kernels.h, struct
 * onnxrun__f64_kernels).
 */
#include "generic_f64.h"
#include "parts.h"

/* Plain C. x row p at xrows[p], or (xrows NULL) at xb + p*nw. */
ONNXRUN__INLINE void tile_c_body(int mb, int nw, int64_t kk, const double *xb, const double *const *xrows,
                                 const double *wb, double *tile)
{
	double acc[ONNXRUN__F64_MB_MAX * 16];
	memcpy(acc, tile, (size_t)(mb * nw) * sizeof *tile);
	for (int64_t p = 0; p < kk; p++) {
		const double *x = xrows ? xrows[p] : xb + p * nw, *w = wb + p * mb;
		for (int m = 0; m < mb; m++)
			for (int e = 0; e < nw; e++)
				acc[m * nw + e] += w[m] * x[e];
	}
	memcpy(tile, acc, (size_t)(mb * nw) * sizeof *tile);
}

/* Row-pointer entries (ind) only where a faster table exists too: a build with the scalar
 * table alone (a Cortex-M4) leaves them out, and the op its packed-lines path (flash). */
#if ONNXRUN__KERNELS_SCALAR_ONLY
#define F64_IND_C(MB, NW)
#define IND_C(name) NULL
#else
#define F64_IND_C(MB, NW)                                                                                    \
	static void ind_c_##MB##x##NW(int64_t kk, const double *const *xrows, const double *wb, double *tile)  \
	{                                                                                                      \
		tile_c_body(MB, NW, kk, NULL, xrows, wb, tile);                                                \
	}
#define IND_C(name) name
#endif

#define F64_TILE_C(MB, NW)                                                                                   \
	static void tile_c_##MB##x##NW(int64_t kk, const double *xb, const double *wb, double *tile)           \
	{                                                                                                      \
		tile_c_body(MB, NW, kk, xb, NULL, wb, tile);                                                   \
	}                                                                                                      \
	F64_IND_C(MB, NW)
F64_TILE_C(4, 4)
F64_TILE_C(4, 8)
F64_TILE_C(1, 4)
F64_TILE_C(1, 8)
F64_TILE_C(1, 16)

static void store(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0, int64_t plane, int64_t sl,
                  const double *bias)
{
	generic_f64_store(tile, nw, mc, uc, y0, plane, sl, bias);
}

static const struct onnxrun__f64_tile tiles[] = {
	{ 4, 4, tile_c_4x4, IND_C(ind_c_4x4) },
	{ 4, 8, tile_c_4x8, IND_C(ind_c_4x8) },
	{ 1, 4, tile_c_1x4, IND_C(ind_c_1x4) },
	{ 1, 8, tile_c_1x8, IND_C(ind_c_1x8) },
	{ 1, 16, tile_c_1x16, IND_C(ind_c_1x16) },
};

const struct onnxrun__f64_kernels onnxrun__f64_scalar = { .tiles = tiles,
                                                          .ntiles = (int)(sizeof tiles / sizeof tiles[0]),
                                                          .store = store };
