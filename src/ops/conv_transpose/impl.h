/*
 * impl.h - ConvTranspose as an ordered list of implementations (op.c walks it): each entry
 * says whether it takes a node (and why not), may prepare state once at load (packed
 * weights), and runs. The first entry that accepts runs; the plain scatter is last and
 * accepts everything, so every valid node runs.
 *
 * Entries never include or call one another; what several share lives in common.h (helpers),
 * taps.h (the phase decomposition) and packing.h (packed float32 weights).
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_IMPL_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_IMPL_H

#include "packing.h"

struct convt_impl;

/* What decides whether an entry takes a node: its geometry, dtype, and the ISA in use. At
 * load g is not concrete (X's sizes unknown). */
struct convt_query {
	const struct onnxrun__convt_geom *g;
	enum onnxrun_dtype dtype;
	const struct onnxrun__kernels *kt;
};

/* One run as an implementation sees it. Data pointers are of `dtype` (b NULL without a
 * bias); y has the inferred shape and numel > 0. */
struct convt_call {
	struct onnxrun_op_context *ctx;
	const struct onnxrun__convt_geom *g; /* concrete */
	enum onnxrun_dtype dtype;
	const struct onnxrun__kernels *kt; /* the ISA in use */
	const void *x, *b;
	void *y;
	/* W: its data, or NULL when the model released it after init packed it (w_numel
	 * elements; onnxrun__convt_w_values rebuilds it from `packed`) */
	const void *w;
	int64_t w_numel;
	/* the weights packed at load (the op's state), whichever layout; NULL if none */
	const struct onnxrun__convt_packed *packed;
	/* For entries that run the node in another dtype: the entry of the list that would take
	 * c (NULL: none), and a run of c through the list (op.c fills both). */
	const struct convt_impl *(*pick)(const struct convt_call *c);
	enum onnxrun_status (*run_list)(const struct convt_call *c);
};

/* Runs an entry's computation on weights packed in its layout. */
typedef enum onnxrun_status (*convt_packed_fn)(const struct convt_call *c, const struct onnxrun__convt_packed *pk);

struct convt_impl {
	const char *name;
	/* The one dtype the entry takes, or UNDEFINED when accepts() decides alone. */
	enum onnxrun_dtype dtype;
	/* NULL when the entry takes the node (of its dtype), else why not (a fixed string). At
	 * load the answer says whether the entry may take it. */
	const char *(*accepts)(const struct convt_query *q);
	/* What the entry prepares once from a constant W (op.c does it at load): its weights
	 * packed in this layout, or nothing (CONVT_LAYOUT_NONE). */
	enum convt_layout layout;
	/* Computes y: run, or, for an entry with a layout, run_packed on the weights packed at
	 * load when they fit this run (else packed for it). ONNXRUN_ERROR_UNSUPPORTED (with no
	 * message) means the entry declines after all, for a reason only found while planning:
	 * the next entry runs. */
	enum onnxrun_status (*run)(const struct convt_call *c);
	convt_packed_fn run_packed;
};

/* The entries, in the order op.c tries them. */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_depthwise; /* depthwise.c */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_window;    /* window.c */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_col2im;    /* col2im.c */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_phase;     /* phase.c */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_f64;       /* f64.c */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_half;      /* half.c */
ONNXRUN__HIDDEN extern const struct convt_impl onnxrun__convt_scatter;   /* scatter.c */

/* W's float32 values for c (dtype float32): c->w, or, when the model released W after
 * packing it, rebuilt from c->packed into *owned (the caller frees it with onnxrun__free).
 * Errors are recorded on the node. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_w_values(const struct convt_call *c, const float **out,
                                                           float **owned);
/* The same for a float64 W (dtype double), rebuilt from the f64 layout. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_w_f64_values(const struct convt_call *c, const double **out,
                                                               double **owned);

/* Runs compute with c's weights packed in `layout`: the op's state when it matches c's
 * geometry and ISA, else packed for this run (UNSUPPORTED, with no message, when g has more
 * phases or kernel positions than a packing takes: the entry declines). Errors are recorded
 * on the node. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_run_packed(const struct convt_call *c, enum convt_layout layout,
                                                             convt_packed_fn compute);

/* float16 (bf16 false) or bfloat16 values to float32 and back (half.c), bitwise equal to
 * onnxrun__f16_to_f32 / onnxrun__f32_to_f16 / onnxrun__bf16_to_f32 / onnxrun__f32_to_bf16
 * for every input, vectorised where the ISA has it. */
ONNXRUN__HIDDEN void onnxrun__convt_half_widen(enum onnxrun__isa isa, bool bf16, const uint16_t *src, float *dst,
                                               int64_t n);
ONNXRUN__HIDDEN void onnxrun__convt_half_narrow(enum onnxrun__isa isa, bool bf16, const float *src, uint16_t *dst,
                                                int64_t n);
/* A float32 copy of a float16/bfloat16 tensor from the env's allocator; NULL when out of memory. */
ONNXRUN__HIDDEN float *onnxrun__convt_widen_new(const struct onnxrun_env *env, const struct onnxrun_tensor *t);

/* For tests: the name of the entry op.c would run for (g, dtype) on the ISA in use, and a
 * run of one entry by name (*taken false when it declines). */
ONNXRUN__HIDDEN const char *onnxrun__convt_pick_name(const struct onnxrun__convt_geom *g, enum onnxrun_dtype dtype);
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_run_entry(const char *name, struct onnxrun_op_context *ctx,
                                                            const struct onnxrun_tensor *const *inputs,
                                                            size_t n_inputs, struct onnxrun_tensor *y, bool *taken);

#endif
