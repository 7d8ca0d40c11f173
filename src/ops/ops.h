/*
 * ops.h - the built-in op list. Adding an op: one .c file in src/ops, one line in
 * ONNXRUN__BUILTIN_OPS, one test file.
 */
#ifndef ONNXRUN_OPS_H
#define ONNXRUN_OPS_H

#include "../runtime/runtime.h"

/* X(symbol): each op file defines `const struct onnxrun_op onnxrun__op_<symbol>[]`
 * terminated by an entry with op_type == NULL, one entry per since_version. */
#define ONNXRUN__BUILTIN_OPS(X) \
	X(conv_transpose)       \
	X(depth_to_space)

#define ONNXRUN__DECLARE_OP(sym) ONNXRUN__HIDDEN extern const struct onnxrun_op onnxrun__op_##sym[];
ONNXRUN__BUILTIN_OPS(ONNXRUN__DECLARE_OP)
#undef ONNXRUN__DECLARE_OP

#endif
