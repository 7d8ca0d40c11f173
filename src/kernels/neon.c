/*
 * neon.c - the AArch64 Advanced SIMD (NEON) ISA's table. Advanced SIMD is part of every
 * AArch64 CPU, so the build decides (no run-time check). The panel, store, gather and
 * conversion routines are the generic bodies compiled for AArch64 (auto-vectorised).
 */
#include "generic.h"
#include "generic_half.h"
#include "parts.h"

#if defined(__aarch64__)

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_neon;

static void pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                 const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	generic_pack(kp, xg, nt, nr, runs, nrun, cp, bp);
}

static void pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                      const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	generic_pack_rows(kp, xg, nt, nr, cp, bp, brows);
}

static void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	generic_store(kp, tile, nr, mr, runs, nrun, y, ydelta, bias);
}

static void store_fence(void)
{
}

static void gather(const struct onnxrun__kgather *kg, const float *const *zrows, int64_t nrows, float *yrow,
                   int64_t o_lo, int64_t o_hi, float bias, float *tmp, int64_t zoff, int64_t zend)
{
	generic_gather(kg, zrows, nrows, yrow, o_lo, o_hi, bias, tmp, zoff, zend);
}

static void widen(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	generic_widen(bf16, src, dst, n);
}

static void narrow(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	generic_narrow(bf16, src, dst, n);
}

const struct onnxrun__kernels onnxrun__kernels_neon = {
	.isa = ONNXRUN__ISA_NEON,
	.name = "neon",
	.gemm = &onnxrun__gemm_neon,
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = NULL, .store = store, .store_pair = NULL,
	           .store_fence = store_fence },
	.col2im_gather = gather,
	.dw_rows = onnxrun__dw_rows_neon,
	.f64 = &onnxrun__f64_scalar,
	.widen = widen,
	.narrow = narrow,
	.d2s = { .row2 = NULL, .row4 = NULL, .row2_stream = NULL, .row4_stream = NULL, .stream_fence = NULL },
};

#endif
