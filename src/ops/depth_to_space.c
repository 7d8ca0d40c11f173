/*
 * depth_to_space.c - DepthToSpace (placeholder table; the implementation follows).
 */
#include "ops.h"

static enum onnxrun_status depth_to_space_infer(const struct onnxrun__node *node, const struct onnxrun__type *inputs,
                                        size_t n_inputs, struct onnxrun__type *outputs, size_t n_outputs,
                                        struct onnxrun__err *err)
{
	return onnxrun__node_fail(err, ONNXRUN_ERROR_UNSUPPORTED, node, "not implemented yet");
}

static enum onnxrun_status depth_to_space_compute(const struct onnxrun__node *node,
                                          const struct onnxrun_tensor *const *inputs, size_t n_inputs,
                                          struct onnxrun_tensor *const *outputs, size_t n_outputs,
                                          struct onnxrun__run_ctx *ctx)
{
	return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_UNSUPPORTED, node, "not implemented yet");
}

const struct onnxrun__op onnxrun__op_depth_to_space[] = {
	{ "", "DepthToSpace", 1, depth_to_space_infer, depth_to_space_compute },
	{ "", "DepthToSpace", 11, depth_to_space_infer, depth_to_space_compute },
	{ "", "DepthToSpace", 13, depth_to_space_infer, depth_to_space_compute },
	{ "", "DepthToSpace", 28, depth_to_space_infer, depth_to_space_compute },
	{ NULL, NULL, 0, NULL, NULL },
};
