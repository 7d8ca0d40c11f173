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

/* 1 in a float32-only build (CMake option ONNXRUN_FLOAT32_ONLY, for microcontrollers with
 * little flash): the ops keep only their float32 paths and refuse every other dtype at load
 * with ONNXRUN_ERROR_UNSUPPORTED (onnxrun__dtype_compiled_out). A constant, so the other
 * paths fold away and a full build is unchanged. */
#ifdef ONNXRUN_FLOAT32_ONLY
#define ONNXRUN__F32_ONLY 1
#else
#define ONNXRUN__F32_ONLY 0
#endif

/* Keeps a planning helper out of line on bare metal: its locals then live only while it
 * runs, not in the frame its caller keeps while the kernels run below it (a microcontroller's
 * stack is a few KiB). Elsewhere the compiler decides, as before. */
#ifdef ONNXRUN_BAREMETAL
#define ONNXRUN__MCU_NOINLINE __attribute__((noinline))
#else
#define ONNXRUN__MCU_NOINLINE
#endif

/* The threads an op plans its work for: onnxrun_op_threads, and on bare metal 1, a constant
 * (the one thread runs every item there whatever the session's setting), so the planning for
 * several threads folds away (flash) and per-thread scratch is sized once (RAM). Results are
 * the same for any thread count. */
#ifdef ONNXRUN_BAREMETAL
#define onnxrun__op_plan_threads(ctx) ((void)(ctx), 1)
#else
#define onnxrun__op_plan_threads(ctx) onnxrun_op_threads(ctx)
#endif

/* In a float32-only build, records on err that node's `what` has dtype t, which this build
 * leaves out, and returns ONNXRUN_ERROR_UNSUPPORTED; ONNXRUN_OK when t is built. One copy
 * there (registry.c), for every op. */
#if ONNXRUN__F32_ONLY
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__dtype_compiled_out(struct onnxrun__err *err,
                                                              const struct onnxrun__node *node, const char *what,
                                                              enum onnxrun_dtype t);
#else
static inline enum onnxrun_status onnxrun__dtype_compiled_out(struct onnxrun__err *err,
                                                            const struct onnxrun__node *node,
                                                            const char *what, enum onnxrun_dtype t)
{
	(void)err;
	(void)node;
	(void)what;
	(void)t;
	return ONNXRUN_OK;
}
#endif

#define ONNXRUN__DECLARE_OP(sym) ONNXRUN__HIDDEN extern const struct onnxrun_op onnxrun__op_##sym[];
ONNXRUN__BUILTIN_OPS(ONNXRUN__DECLARE_OP)
#undef ONNXRUN__DECLARE_OP

#endif
