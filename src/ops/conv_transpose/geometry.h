/*
 * geometry.h - ConvTranspose geometry shared by its infer and compute (geometry.c computes
 * it; op.c and every implementation use it).
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_GEOMETRY_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_GEOMETRY_H

#include "../ops.h"

/* Spatial rank limit: X is (N, C, D1..Dn) and must fit ONNXRUN_MAX_RANK. */
#define ONNXRUN__CONVT_MAX_SPATIAL (ONNXRUN_MAX_RANK - 2)

/* Validated geometry of one ConvTranspose node for given input types. Every count is -1
 * when unknown (symbolic input). pad_begin/pad_end may be negative (an output larger than
 * the natural size) and are only meaningful when `concrete` is true. */
struct onnxrun__convt_geom {
	int32_t n;            /* spatial rank, -1 when unknown */
	int64_t batch;        /* N */
	int64_t in_channels;  /* C */
	int64_t out_channels; /* M = W.shape[1] * group */
	int64_t group;
	bool has_bias;
	bool concrete; /* every count below is known */
	int64_t in[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t kernel[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t strides[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t dilations[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t output_padding[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t pad_begin[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t pad_end[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t out[ONNXRUN__CONVT_MAX_SPATIAL];
};

/* Validates the node's attributes and input types (inputs[0] X, [1] W, optional [2] B,
 * which is absent when n_inputs == 2 or its dtype is UNDEFINED) against the ONNX spec and
 * docs/design.md ('ConvTranspose semantics') and fills *g. Unknown dims never fail; known ones
 * are checked. Errors name the node and the attribute or input at fault. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_geom_make(const struct onnxrun__node *node,
                                                             const struct onnxrun_type *inputs,
                                                             size_t n_inputs,
                                                             struct onnxrun__convt_geom *g,
                                                             struct onnxrun__err *err);

#endif
