/*
 * conv_transpose.c - ConvTranspose (placeholder table; the implementation follows).
 */
#include "ops.h"

static enum onnxrun_status conv_transpose_infer(const struct onnxrun__node *node, const struct onnxrun__type *inputs,
                                        size_t n_inputs, struct onnxrun__type *outputs, size_t n_outputs,
                                        struct onnxrun__err *err)
{
	return onnxrun__node_fail(err, ONNXRUN_ERROR_UNSUPPORTED, node, "not implemented yet");
}

static enum onnxrun_status conv_transpose_compute(const struct onnxrun__node *node,
                                          const struct onnxrun_tensor *const *inputs, size_t n_inputs,
                                          struct onnxrun_tensor *const *outputs, size_t n_outputs,
                                          struct onnxrun__run_ctx *ctx)
{
	return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_UNSUPPORTED, node, "not implemented yet");
}

const struct onnxrun__op onnxrun__op_conv_transpose[] = {
	{ "", "ConvTranspose", 1, conv_transpose_infer, conv_transpose_compute },
	{ "", "ConvTranspose", 11, conv_transpose_infer, conv_transpose_compute },
	{ "", "ConvTranspose", 22, conv_transpose_infer, conv_transpose_compute },
	{ NULL, NULL, 0, NULL, NULL },
};
