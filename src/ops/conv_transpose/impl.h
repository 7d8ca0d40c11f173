/*
 * conv_transpose_fast.h - float32 ConvTranspose fast paths (conv_transpose_fast.c: path
 * choice, packing, init/fini, dispatch; conv_transpose_phase.c, conv_transpose_col2im.c,
 * conv_transpose_dw.c: the three paths): weights pre-packed at load for the GEMM
 * micro-kernels (gemm/), work split over the session's thread pool.
 *
 * Phase path: a transposed convolution with strides s is prod(s) ordinary convolutions,
 * one per output phase r (per axis, r = (o + pad_begin) mod s); phase r uses the taps k with
 * k*d = r (mod s), each reading x[q - delta] with delta = (k*d - r)/s at grid position q
 * (o = q*s + r - pad_begin). Each phase is an implicit GEMM: M = output channels of a group,
 * N = positions (batch x grid), K = input channels of a group x taps.
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_FAST_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_FAST_H

#include "geometry.h"
#include "../../kernels/kernels.h"

enum convt_path {
	CONVT_PATH_NONE = 0,   /* not handled: use the scatter */
	CONVT_PATH_PHASE = 1,  /* per-phase implicit GEMM */
	CONVT_PATH_COL2IM = 2, /* GEMM over all taps + overlap-add (<= 4 output channels per group,
	                        * rank <= 2, <= 64 taps per output) */
	CONVT_PATH_DW = 3,     /* direct depthwise kernel (one in and one out channel per group) */
};

/* Per-axis taps grouped by phase: for axis a, the kernel indices of residue r are
 * k_of[a][start[a][r] .. start[a][r + 1]). Independent of the input size. */
struct onnxrun__convt_taps {
	int32_t n;
	int64_t kernel[ONNXRUN__CONVT_MAX_SPATIAL], s[ONNXRUN__CONVT_MAX_SPATIAL],
		d[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t kprod, nphase, tmax; /* kernel size, phases, most taps of any phase */
	int64_t *start[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t *k_of[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t *ntaps;  /* per phase: taps (product over axes) */
	int64_t *a_off;  /* per phase: float offset of its packed weights within a group's block */
	int64_t a_group; /* floats of packed weights per group */
	int64_t mpanels; /* phase path: weight panels per phase, ceil(mg / mr_max) */
};

/* First output channel of weight panel i of the phase path's n over mg channels: panels
 * split mg evenly (sizes differ by at most one), so 64 channels with 12-row kernels are
 * 11+11+11+11+10+10 rather than five 12s and a 4-row tile that reads B for few rows. Each
 * panel is packed mr_max rows wide (zero rows at its end), panel i at i * mr_max * K. */
static inline int64_t convt_panel_lo(int64_t mg, int64_t n, int64_t i)
{
	return i * mg / n;
}

/* What init prepares (or compute, per run, when W is fed at run time). */
struct onnxrun__convt_packed {
	const struct onnxrun_env *env;
	enum convt_path path;
	const struct onnxrun__kernels *kt;         /* the ISA's table the weights were packed for */
	const struct onnxrun__gemm_kernels *kern; /* kt->gemm */
	int64_t cin, mg, group; /* W is (cin, mg, kernel...) */
	struct onnxrun__convt_taps taps;
	float *a; /* packed weights, group blocks of taps.a_group floats */
};

/* Builds the packed state for W (float32, shape (cin, mg, kernel...), at any alignment: a
 * pending initializer is read in the model buffer) with the node's strides, dilations and
 * group; *out NULL (and OK) when no fast path applies. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_pack(const struct onnxrun_env *env,
                                                        const struct onnxrun__convt_geom *g,
                                                        const void *w, struct onnxrun__convt_packed **out);
ONNXRUN__HIDDEN void onnxrun__convt_packed_free(struct onnxrun__convt_packed *p);
/* True when W can be rebuilt exactly from the packed state (phase and overlap-add paths). */
ONNXRUN__HIDDEN bool onnxrun__convt_can_unpack(const struct onnxrun__convt_packed *pk);
/* Writes W (float32, shape (cin, mg, kernel...)) back from the packed state. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_unpack(const struct onnxrun__convt_packed *pk, float *w);
/* W's float32 values: the tensor's data, or, when the model released it after init packed
 * it (onnxrun__op_rebuilds_input), rebuilt from ctx->state into *owned (the caller frees
 * it with onnxrun__free). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_w_values(struct onnxrun_op_context *ctx,
                                                           const struct onnxrun_tensor *w, const float **out,
                                                           float **owned);

/* op init/fini: pre-pack a constant W (float32; float16/bfloat16 widened to float32 first). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_fast_init(struct onnxrun_op_context *ctx, void **state);
ONNXRUN__HIDDEN void onnxrun__convt_fast_fini(void *user_data, void *state);

/* Runs the fast path for float32 when one applies (*done = true), using the pre-packed
 * state when it matches, else packing W for this run. y has the inferred shape. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_fast(struct onnxrun_op_context *ctx,
                                                        const struct onnxrun__convt_geom *g,
                                                        const struct onnxrun_tensor *const *inputs,
                                                        size_t n_inputs, struct onnxrun_tensor *y,
                                                        bool *done);

/* The pieces of onnxrun__convt_fast, shared with the float16/bfloat16 path: whether every
 * dim is non-empty (the fast paths need it); the op state's pre-packed W when it was made for
 * g's W shape and attributes and the ISA in use, else NULL; whether the scatter is cheaper for
 * g with pk's path; and running pk's path on float32 data (w: W as float32, read by the
 * depthwise path only; *done false, status OK, when the path declines). */
ONNXRUN__HIDDEN bool onnxrun__convt_fast_shape_ok(const struct onnxrun__convt_geom *g);
ONNXRUN__HIDDEN const struct onnxrun__convt_packed *onnxrun__convt_prepacked(const struct onnxrun_op_context *ctx,
                                                                               const struct onnxrun__convt_geom *g);
ONNXRUN__HIDDEN bool onnxrun__convt_fast_declines(const struct onnxrun__convt_geom *g,
                                                  const struct onnxrun__convt_packed *pk);
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_fast_run(struct onnxrun_op_context *ctx,
                                                            const struct onnxrun__convt_geom *g,
                                                            const struct onnxrun__convt_packed *pk,
                                                            const float *x, const float *w, const float *bias,
                                                            float *y, bool *done);

/* float16/bfloat16 on the float32 fast path (conv_transpose_half.c): widens X, the bias and
 * (unless pre-packed) W into float32 scratch, runs the path, rounds each output once. *done
 * false (status OK) when no fast path applies: the caller runs the scatter. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_fast_half(struct onnxrun_op_context *ctx,
                                                             const struct onnxrun__convt_geom *g,
                                                             const struct onnxrun_tensor *const *inputs,
                                                             size_t n_inputs, struct onnxrun_tensor *y,
                                                             bool *done);
static inline bool onnxrun__convt_is_half(enum onnxrun_dtype dt)
{
	return dt == ONNXRUN_DTYPE_FLOAT16 || dt == ONNXRUN_DTYPE_BFLOAT16;
}
/* n float16 (bf16 false) or bfloat16 values to float32 and back, bitwise equal to
 * onnxrun__f16_to_f32 / onnxrun__f32_to_f16 / onnxrun__bf16_to_f32 / onnxrun__f32_to_bf16
 * for every input, vectorised for isa (AVX-512F; AVX2 with F16C) when this CPU has it. */
ONNXRUN__HIDDEN void onnxrun__convt_half_widen(enum onnxrun__isa isa, bool bf16, const uint16_t *src, float *dst,
                                               int64_t n);
ONNXRUN__HIDDEN void onnxrun__convt_half_narrow(enum onnxrun__isa isa, bool bf16, const float *src, uint16_t *dst,
                                                int64_t n);
/* A float32 copy of a float16/bfloat16 tensor from the env's allocator; NULL when out of memory. */
ONNXRUN__HIDDEN float *onnxrun__convt_widen_new(const struct onnxrun_env *env, const struct onnxrun_tensor *t);

/* Path runners (the packed state matches g). bias may be NULL. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_run_phase(struct onnxrun_op_context *ctx,
                                                             const struct onnxrun__convt_geom *g,
                                                             const struct onnxrun__convt_packed *pk,
                                                             const float *x, const float *bias, float *y);
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_run_col2im(struct onnxrun_op_context *ctx,
                                                              const struct onnxrun__convt_geom *g,
                                                              const struct onnxrun__convt_packed *pk,
                                                              const float *x, const float *bias, float *y);
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_run_dw(struct onnxrun_op_context *ctx,
                                                          const struct onnxrun__convt_geom *g,
                                                          const float *x, const float *w,
                                                          const float *bias, float *y);

/* Shared helpers. */
static inline int64_t convt_floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}
static inline int64_t convt_ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
/* Per-thread scratch of `bytes` each for `threads` threads (64-byte aligned slices). */
ONNXRUN__HIDDEN void *onnxrun__convt_scratch(struct onnxrun_op_context *ctx, int threads, size_t bytes,
                                             size_t *stride);

/* float64 on the phase decomposition, computed in double (conv_transpose_f64.c): register
 * tiles per ISA (onnxrun__isa_current()), W re-laid out per run, work split over the session's
 * thread pool (bitwise identical for every thread count). *done false (status OK) when the
 * shape is not handled (rank above 3, an empty dim, more than 4096 phases, or output-driven
 * work more than 8x the scatter's): the caller runs the scatter. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_fast_f64(struct onnxrun_op_context *ctx,
                                                            const struct onnxrun__convt_geom *g,
                                                            const struct onnxrun_tensor *const *inputs,
                                                            size_t n_inputs, struct onnxrun_tensor *y,
                                                            bool *done);

/* Work of the output-driven (phase/depthwise) paths over the scatter's: above 8 the
 * scatter is used (a large kernel over a tiny input, or a stride far above the kernel). */
ONNXRUN__HIDDEN double onnxrun__convt_out_driven_waste(const struct onnxrun__convt_geom *g);

#endif
