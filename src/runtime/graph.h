/*
 * graph.h - load-time graph passes (resolve, order, infer), the memory planner and the
 * session internals shared between runtime files.
 */
#ifndef ONNXRUN_GRAPH_H
#define ONNXRUN_GRAPH_H

#include "runtime.h"

/* Finds each node's kernel; every unsupported node is listed in one UNSUPPORTED error. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__graph_resolve(struct onnxrun_model *m, struct onnxrun__err *err);
/* Reorders m->nodes topologically (Kahn, ties in file order); a cycle is INVALID_MODEL. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__graph_order(struct onnxrun_model *m, struct onnxrun__err *err);
/* Infers node k's output types out[] (n_outputs of them) from its input types in[]
 * (n_inputs; an absent input unknown). Inferred types are checked against, and completed
 * by, the declared ones. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__graph_infer_node(const struct onnxrun_model *m, size_t k,
                                                              const struct onnxrun_type *in,
                                                              struct onnxrun_type *out,
                                                              struct onnxrun__err *err);
/* Largest n_inputs + n_outputs over the nodes: the in and out types a node's inference needs. */
ONNXRUN__HIDDEN size_t onnxrun__graph_max_io(const struct onnxrun_model *m);
/* Load-time inference over the whole graph into each value's `type`. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__graph_infer(struct onnxrun_model *m, struct onnxrun__err *err);

/* Calls each node's op->init (pre-packing and the like) once the graph is inferred. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__graph_init_ops(struct onnxrun_model *m, struct onnxrun__err *err);

/* ---- memory planning (plan.c) ---- */

/* One buffer to place: bytes needed and the node interval [first, last] it is live in. */
struct onnxrun__plan_item {
	size_t size;
	size_t first;
	size_t last;
	size_t offset; /* result */
};

/* Assigns offsets (64-byte aligned) so that items whose lifetimes overlap never share
 * bytes; returns the arena size in *total. Greedy: largest first, lowest fitting offset. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__plan(const struct onnxrun_env *env, struct onnxrun__plan_item *items,
                                                  size_t n, size_t *total);

#endif
