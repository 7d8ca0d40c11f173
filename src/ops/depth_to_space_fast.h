/*
 * depth_to_space_fast.h - DepthToSpace fast path for 4-byte elements (depth_to_space_fast.c).
 */
#ifndef ONNXRUN_OPS_DEPTH_TO_SPACE_FAST_H
#define ONNXRUN_OPS_DEPTH_TO_SPACE_FAST_H

#include "ops.h"

/* Copies x (N, C, H, W) into y (N, C/b^2, H*b, W*b) in DCR or CRD order when the element
 * size is 4 bytes and b <= 64 (returns true); else does nothing and returns false. Shapes
 * are already checked. */
ONNXRUN__HIDDEN bool onnxrun__d2s_fast(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *x,
                                       struct onnxrun_tensor *y, int64_t b, bool crd);

#endif
