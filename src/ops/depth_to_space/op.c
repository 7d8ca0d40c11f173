/*
 * depth_to_space.c - DepthToSpace (ONNX versions 1, 11, 13, 28): moves blocks of channels
 * into b x b spatial blocks, DCR or CRD order, as a bitwise copy of any element type.
 */
#include <string.h>

#include "fast.h"
#include "../ops.h"
#include "../../kernels/kernels.h"

/* The fast path (fast.c) gives a bare-metal build with the scalar kernels alone nothing the
 * plain copy below lacks but stop checks between its items (no kernel rows, one thread): a
 * float32-only build (flash) leaves it out there. */
#if ONNXRUN__F32_ONLY && defined(ONNXRUN_BAREMETAL) && ONNXRUN__KERNELS_SCALAR_ONLY
#define D2S_FAST 0
#else
#define D2S_FAST 1
#endif

/* Attributes of one node: blocksize b and whether the order is CRD (else DCR). */
struct d2s_attrs {
	int64_t b;
	bool crd;
};

/* Reads blocksize (required, >= 1) and mode (absent in version 1; DCR or CRD from 11). */
static enum onnxrun_status d2s_attrs(const struct onnxrun__node *node, struct d2s_attrs *a,
                                     struct onnxrun__err *err)
{
	int version = node->op ? node->op->since_version : (int)node->opset;
	enum onnxrun_status st;
	const char *mode;
	bool found;

	if ((st = onnxrun__attr_int(node, "blocksize", 0, &a->b, &found, err)))
		return st;
	if (!found)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "attribute 'blocksize' is required");
	if (a->b < 1)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "blocksize=%lld must be >= 1", (long long)a->b);
	if (version < 11) {
		if (onnxrun__node_attr(node, "mode"))
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "attribute 'mode' does not exist in DepthToSpace-%d "
			                          "(added in version 11)", version);
		a->crd = false;
		return ONNXRUN_OK;
	}
	if ((st = onnxrun__attr_string(node, "mode", "DCR", &mode, NULL, err)))
		return st;
	if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "mode '%s' is not DCR or CRD", mode);
	a->crd = strcmp(mode, "CRD") == 0;
	return ONNXRUN_OK;
}

/* Output (N, C/b^2, H*b, W*b): dims known when the input's are (a symbolic N passes
 * through by name; with b == 1 every name passes through). Validates dtype, rank 4,
 * blocksize, mode and C % b^2. */
static enum onnxrun_status d2s_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *inputs,
				       size_t n_inputs, struct onnxrun_type *outputs, size_t n_outputs)
{
	const struct onnxrun__node *node = ctx->node;
	struct onnxrun__err *err = ctx->err;
	int version = node->op ? node->op->since_version : (int)node->opset;
	const struct onnxrun_shape *in = &inputs[0].shape;
	struct onnxrun_shape *out = &outputs[0].shape;
	enum onnxrun_dtype t = n_inputs ? inputs[0].dtype : ONNXRUN_DTYPE_UNDEFINED;
	struct d2s_attrs a;
	enum onnxrun_status st;
	int64_t bb;

	if (n_inputs != 1 || n_outputs != 1)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "has %zu inputs and %zu outputs, expected 1 and 1", n_inputs,
		                          n_outputs);
	if (!onnxrun__dtype_valid((int)t) || (t == ONNXRUN_DTYPE_BFLOAT16 && version < 13))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "input has dtype %s, not allowed in version %d (bfloat16 from "
		                          "version 13)", onnxrun_dtype_name(t), version);
	if (ONNXRUN__F32_ONLY && onnxrun__dtype_compiled_out(err, node, "input", t))
		return ONNXRUN_ERROR_UNSUPPORTED;
	if (node->outputs && node->outputs[0] < 0)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "output 0 is required but its name is empty");
	if ((st = d2s_attrs(node, &a, err)))
		return st;
	if (!onnxrun__mul_i64(a.b, a.b, &bb))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "blocksize=%lld squared overflows int64", (long long)a.b);
	if (in->rank >= 0 && in->rank != 4)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "input has rank %d, expected 4 (N, C, H, W)", (int)in->rank);
	outputs[0].dtype = t;
	onnxrun__shape_unknown(out);
	out->rank = 4;
	for (int i = 0; i < 4; i++)
		out->dims[i] = -1;
	if (in->rank < 0)
		return ONNXRUN_OK;
	if (in->dims[1] >= 0 && in->dims[1] % bb)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "C=%lld channels are not divisible by blocksize^2=%lld",
		                          (long long)in->dims[1], (long long)bb);
	for (int i = 0; i < 4; i++) {
		int64_t d = in->dims[i];
		if (d >= 0 && i == 1)
			d /= bb;
		else if (d >= 0 && i >= 2 && !onnxrun__mul_i64(d, a.b, &d))
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output dim %d (%lld * blocksize %lld) overflows int64", i,
			                          (long long)in->dims[i], (long long)a.b);
		out->dims[i] = d;
		if (d < 0 && (i == 0 || a.b == 1))
			out->params[i] = in->params[i];
	}
	return ONNXRUN_OK;
}

/* Output row (n, c', h*b + i): for each w and j, y[.., w*b + j] = x[n, ch(i, j), h, w],
 * where ch is (i*b + j)*C' + c' for DCR and c'*b*b + i*b + j for CRD (ONNX DepthToSpace's
 * reshape/transpose formulas). `src[j]` points at row h of channel ch(i, j). */
#define D2S_ROW(NAME, SIZE)                                                                  \
	static void NAME(char *dst, const char *const *src, int64_t width, int64_t b)        \
	{                                                                                    \
		for (int64_t w = 0; w < width; w++)                                          \
			for (int64_t j = 0; j < b; j++, dst += (SIZE))                       \
				memcpy(dst, src[j] + w * (SIZE), (SIZE));                    \
	}
D2S_ROW(row_1, 1)
D2S_ROW(row_2, 2)
D2S_ROW(row_4, 4)
D2S_ROW(row_8, 8)
D2S_ROW(row_16, 16)
#undef D2S_ROW

/* The same for strings: deep copies into the output's (initially empty) strings. */
static enum onnxrun_status row_str(struct onnxrun_tensor *y, int64_t at, const char *const *src,
                                   int64_t width, int64_t b)
{
	for (int64_t w = 0; w < width; w++)
		for (int64_t j = 0; j < b; j++) {
			const struct onnxrun_string *s = (const struct onnxrun_string *)src[j] + w;
			if (onnxrun__tensor_string_set(y, at++, s->data ? s->data : "", s->size))
				return ONNXRUN_ERROR_OUT_OF_MEMORY;
		}
	return ONNXRUN_OK;
}

/* Copies x (N, C, H, W) into y (N, C/b^2, H*b, W*b) row by row. */
static enum onnxrun_status d2s_compute(struct onnxrun_op_context *ctx,
					 const struct onnxrun_tensor *const *inputs, size_t n_inputs,
					 struct onnxrun_tensor *const *outputs, size_t n_outputs)
{
	const struct onnxrun__node *node = ctx->node;
	const struct onnxrun_tensor *x = inputs[0];
	struct onnxrun_tensor *y = outputs[0];
	void (*row)(char *, const char *const *, int64_t, int64_t) = NULL;
	const size_t es = onnxrun_dtype_size(x->dtype);
	struct d2s_attrs a;
	enum onnxrun_status st;
	const char *src[256];
	const char **rows = src;

	if ((st = d2s_attrs(node, &a, ctx->err)))
		return st;
	if (x->rank != 4 || y->rank != 4)
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, node, "input and output must have rank 4");
	const int64_t n = x->dims[0], cout = x->dims[1] / (a.b * a.b), h = x->dims[2], w = x->dims[3];
	if (y->dtype != x->dtype || y->dims[0] != n ||
	    y->dims[1] != cout || y->dims[2] != h * a.b || y->dims[3] != w * a.b)
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, node,
		                          "output tensor does not have the inferred type and shape");
	if (y->numel == 0)
		return ONNXRUN_OK;
	bool done;
	if (D2S_FAST && ((st = onnxrun__d2s_fast(ctx, x, y, a.b, a.crd, &done)) || done))
		return st;
	/* a float32-only build copies float32 only (d2s_infer refuses the rest), with row_4 */
	if (ONNXRUN__F32_ONLY && onnxrun__dtype_compiled_out(ctx->err, node, "input", x->dtype))
		return ONNXRUN_ERROR_UNSUPPORTED;
	switch (ONNXRUN__F32_ONLY ? 4 : x->dtype == ONNXRUN_DTYPE_STRING ? 0 : es) {
	case 1: row = row_1; break;
	case 2: row = row_2; break;
	case 4: row = row_4; break;
	case 8: row = row_8; break;
	case 16: row = row_16; break;
	default: break;
	}
	if (a.b > 256 && !(rows = onnxrun__malloc(ctx->env, (size_t)a.b * sizeof *rows)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, node, "out of memory");
	st = ONNXRUN_OK;
	const char *xd = x->data;
	char *yd = y->data;
	int64_t at = 0; /* element index of the current output row */
	for (int64_t in = 0; in < n && !st; in++)
		for (int64_t c = 0; c < cout && !st; c++)
			for (int64_t ih = 0; ih < h && !st; ih++)
				for (int64_t i = 0; i < a.b && !st; i++, at += w * a.b) {
					for (int64_t j = 0; j < a.b; j++) {
						/* DCR: ch = (i*b + j)*C' + c'; CRD: ch = c'*b*b + i*b + j */
						int64_t ch = a.crd ? (c * a.b + i) * a.b + j : (i * a.b + j) * cout + c;
						int64_t off = ((in * x->dims[1] + ch) * h + ih) * w;
						rows[j] = xd + (size_t)off * es;
					}
					if (row || ONNXRUN__F32_ONLY)
						row(yd + (size_t)at * es, rows, w, a.b);
					else
						st = row_str(y, at, rows, w, a.b);
				}
	if (rows != src)
		onnxrun__free(ctx->env, rows);
	if (st)
		return onnxrun__node_fail(ctx->err, st, node, "out of memory copying strings");
	return ONNXRUN_OK;
}

const struct onnxrun_op onnxrun__op_depth_to_space[] = {
	{ "", "DepthToSpace", 1, d2s_infer, d2s_compute, NULL, NULL, NULL, NULL },
	{ "", "DepthToSpace", 11, d2s_infer, d2s_compute, NULL, NULL, NULL, NULL },
	{ "", "DepthToSpace", 13, d2s_infer, d2s_compute, NULL, NULL, NULL, NULL },
	{ "", "DepthToSpace", 28, d2s_infer, d2s_compute, NULL, NULL, NULL, NULL },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL },
};
