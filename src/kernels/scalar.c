/*
 * scalar.c - the scalar ISA: every routine of the kernel table in plain C (the micro-kernels
 * are in scalar_gemm.c). It runs on any CPU and is the template for a new ISA
 * (docs/kernels.md): copy this file set, replace what the new instructions do better, add
 * the table to cpu.c.
 */
#include "generic.h"
#include "generic_half.h"
#include "parts.h"

_Alignas(64) const float onnxrun__kzero_row[ONNXRUN__GEMM_NR_MAX];

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_scalar;

static void pack(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                 const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp)
{
	generic_pack(kp, xg, nt, nr, runs, nrun, cp, bp);
}

#if !ONNXRUN__KERNELS_SCALAR_ONLY
/* never called through this table (its gemm has no ind[]): the reference of other ISAs'
 * pack_rows (tests/mcu/test_mcu_kernels.c), left out where no table reads rows in place */
static void pack_rows(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
                      const struct onnxrun__kcopy *cp, float *bp, const float **brows)
{
	generic_pack_rows(kp, xg, nt, nr, cp, bp, brows);
}
#endif

static void store(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias)
{
	generic_store(kp, tile, nr, mr, runs, nrun, y, ydelta, bias);
}

static void store_fence(void)
{
}

#ifndef ONNXRUN_FLOAT32_ONLY
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
#endif

const struct onnxrun__kernels onnxrun__kernels_scalar = {
	.isa = ONNXRUN__ISA_SCALAR,
	.name = "scalar",
	.gemm = &onnxrun__gemm_scalar,
#if !ONNXRUN__KERNELS_SCALAR_ONLY
	.phase = { .pack = pack, .pack_rows = pack_rows, .pack_halves = NULL, .store = store, .store_pair = NULL,
	           .store_fence = store_fence },
#else
	.phase = { .pack = pack, .pack_rows = NULL, .pack_halves = NULL, .store = store, .store_pair = NULL,
	           .store_fence = store_fence },
#endif
#ifndef ONNXRUN_FLOAT32_ONLY
	/* the ConvTranspose entries that call these are left out of a float32-only build
	 * (ops/conv_transpose/op.c), and so, with them NULL here, is their code */
	.col2im_gather = gather,
	.dw_rows = onnxrun__dw_rows_scalar,
	.f64 = &onnxrun__f64_scalar,
	.widen = widen,
	.narrow = narrow,
#endif
	.d2s = { .row2 = NULL, .row4 = NULL, .row2_stream = NULL, .row4_stream = NULL, .stream_fence = NULL },
};
