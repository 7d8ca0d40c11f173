/*
 * fast.h - DepthToSpace fast path for 4-byte elements (fast.c).
 */
#ifndef ONNXRUN_OPS_DEPTH_TO_SPACE_FAST_H
#define ONNXRUN_OPS_DEPTH_TO_SPACE_FAST_H

#include "../ops.h"

/* Copies x (N, C, H, W) into y (N, C/b^2, H*b, W*b) in DCR or CRD order when the element
 * size is 4 bytes and b <= 64 (*done true); else does nothing (*done false). Shapes are
 * already checked. Returns OK or CANCELLED (onnxrun_op_parallel_for). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__d2s_fast(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *x,
                                                      struct onnxrun_tensor *y, int64_t b, bool crd, bool *done);

/* Outputs of at least this many bytes are written with streaming (non-temporal) stores
 * where the kernel table has streaming rows (no read for ownership, no eviction of the
 * input); smaller outputs, likely read again soon by the next node, stay in cache. Default
 * 8 MiB. Settable for tests (not thread-safe: set it before running). */
ONNXRUN__HIDDEN void onnxrun__d2s_set_stream_min(size_t bytes);
ONNXRUN__HIDDEN size_t onnxrun__d2s_stream_min(void);

#endif
