/*
 * geometry.c - ConvTranspose attribute validation, output shape and pads
 * (ONNX ConvTranspose-1/11/22, as decided in docs/design.md, 'ConvTranspose semantics').
 */
#include <string.h>

#include "geometry.h"

#define S ONNXRUN__CONVT_MAX_SPATIAL

enum auto_pad { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

struct ints_attr {
	const char *name;
	const int64_t *v;
	size_t count;
	bool found;
};

/* The node's attributes, raw (lengths checked later, once the spatial rank is known). */
struct convt_attrs {
	enum auto_pad auto_pad;
	int64_t group;
	struct ints_attr kernel_shape, strides, dilations, pads, output_padding, output_shape;
};

/* floor(t / 2) for any sign of t (C's `/` truncates toward zero). */
static int64_t floor_half(int64_t t)
{
	return (t - (t & 1)) / 2;
}

/* Checks that the dtypes of X, W and B agree and are allowed in this version. */
static enum onnxrun_status check_dtypes(const struct onnxrun__node *node, const struct onnxrun_type *x,
                                        const struct onnxrun_type *w, const struct onnxrun_type *b,
                                        struct onnxrun__err *err)
{
	int version = node->op ? node->op->since_version : (int)node->opset;
	enum onnxrun_dtype t = x->dtype;
	if (t == ONNXRUN_DTYPE_UNDEFINED || w->dtype == ONNXRUN_DTYPE_UNDEFINED)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node, "input %s is missing",
		                          t == ONNXRUN_DTYPE_UNDEFINED ? "X" : "W");
	if (!(t == ONNXRUN_DTYPE_FLOAT || t == ONNXRUN_DTYPE_DOUBLE || t == ONNXRUN_DTYPE_FLOAT16 ||
	      (t == ONNXRUN_DTYPE_BFLOAT16 && version >= 22)))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "X has dtype %s, not allowed in version %d (float, double, "
		                          "float16; bfloat16 from version 22)",
		                          onnxrun_dtype_name(t), version);
	if (ONNXRUN__F32_ONLY && onnxrun__dtype_compiled_out(err, node, "X", t))
		return ONNXRUN_ERROR_UNSUPPORTED;
	if (w->dtype != t)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "W has dtype %s but X has dtype %s", onnxrun_dtype_name(w->dtype),
		                          onnxrun_dtype_name(t));
	if (b && b->dtype != t)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "B has dtype %s but X has dtype %s", onnxrun_dtype_name(b->dtype),
		                          onnxrun_dtype_name(t));
	return ONNXRUN_OK;
}

/* Reads group, auto_pad and the list attributes (borrowed). */
static enum onnxrun_status read_attrs(const struct onnxrun__node *node, struct convt_attrs *a,
                                      struct onnxrun__err *err)
{
	static const char *const pad_names[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" };
	struct ints_attr *lists[] = { &a->kernel_shape, &a->strides, &a->dilations,
		                      &a->pads, &a->output_padding, &a->output_shape };
	static const char *const list_names[] = { "kernel_shape", "strides", "dilations",
		                                  "pads", "output_padding", "output_shape" };
	const char *pad;
	enum onnxrun_status st;
	size_t i;

	if ((st = onnxrun__attr_int(node, "group", 1, &a->group, NULL, err)))
		return st;
	if (a->group < 1)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node, "group=%lld must be >= 1",
		                          (long long)a->group);
	if ((st = onnxrun__attr_string(node, "auto_pad", "NOTSET", &pad, NULL, err)))
		return st;
	for (i = 0; i < 4 && strcmp(pad, pad_names[i]); i++)
		;
	if (i == 4)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", pad);
	a->auto_pad = (enum auto_pad)i;
	for (i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		lists[i]->name = list_names[i];
		st = onnxrun__attr_ints(node, list_names[i], &lists[i]->v, &lists[i]->count,
		                        &lists[i]->found, err);
		if (st)
			return st;
	}
	/* ONNX: pads "cannot be used simultaneously with auto_pad" (ONNX's own shape inference
	 * rejects it too); with output_shape they are only ignored. */
	if (a->pads.found && a->auto_pad != PAD_NOTSET)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "attribute 'pads' cannot be used with auto_pad '%s' (only with "
		                          "NOTSET)", pad);
	return ONNXRUN_OK;
}

/* Spatial rank n from X, W, or else the first list attribute present; checks ranks. */
static enum onnxrun_status resolve_rank(const struct onnxrun__node *node, const struct onnxrun_type *x,
                                        const struct onnxrun_type *w, const struct convt_attrs *a,
                                        int32_t *n, struct onnxrun__err *err)
{
	const struct ints_attr *lists[] = { &a->kernel_shape, &a->strides, &a->dilations,
		                            &a->output_padding, &a->pads };
	*n = -1;
	if (x->shape.rank >= 0 && x->shape.rank < 3)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "X has rank %d, expected at least 3 (N, C, D1, ...)",
		                          (int)x->shape.rank);
	if (w->shape.rank >= 0 && w->shape.rank < 3)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "W has rank %d, expected at least 3 (C, M/group, k1, ...)",
		                          (int)w->shape.rank);
	if (x->shape.rank >= 0 && w->shape.rank >= 0 && x->shape.rank != w->shape.rank)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "W has rank %d but X has rank %d", (int)w->shape.rank,
		                          (int)x->shape.rank);
	if (x->shape.rank >= 0 || w->shape.rank >= 0) {
		*n = (x->shape.rank >= 0 ? x->shape.rank : w->shape.rank) - 2;
		return ONNXRUN_OK;
	}
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		if (!lists[i]->found)
			continue;
		size_t c = lists[i] == &a->pads ? lists[i]->count / 2 : lists[i]->count;
		if (c < 1 || c > S)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "attribute '%s' has %zu values, expected 1 to %d per side",
			                          lists[i]->name, lists[i]->count, S);
		*n = (int32_t)c;
		return ONNXRUN_OK;
	}
	return ONNXRUN_OK;
}

/* "<list>[i]=v must be >= min": one message for every list attribute's value check. */
static enum onnxrun_status below_min(const struct onnxrun__node *node, const char *list, size_t i, int64_t v,
                                     int min, struct onnxrun__err *err)
{
	return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node, "%s[%zu]=%lld must be >= %d", list, i,
	                          (long long)v, min);
}

/* Checks the lengths and values of the list attributes for spatial rank n and copies them
 * (with their defaults) into g. */
static enum onnxrun_status check_lists(const struct onnxrun__node *node, const struct convt_attrs *a,
                                       int32_t n, struct onnxrun__convt_geom *g, struct onnxrun__err *err)
{
	const struct ints_attr *per_axis[] = { &a->kernel_shape, &a->strides, &a->dilations,
		                               &a->output_padding };
	size_t un = (size_t)n;
	for (size_t i = 0; i < sizeof per_axis / sizeof per_axis[0]; i++)
		if (per_axis[i]->found && per_axis[i]->count != un)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "attribute '%s' has %zu values, expected %zu (one per "
			                          "spatial axis)", per_axis[i]->name, per_axis[i]->count, un);
	if (a->pads.found && a->pads.count != 2 * un)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "attribute 'pads' has %zu values, expected %zu (begins then ends)",
		                          a->pads.count, 2 * un);
	if (a->output_shape.found && a->output_shape.count != un && a->output_shape.count != un + 2)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "attribute 'output_shape' has %zu values, expected %zu (spatial) "
		                          "or %zu (N, M, spatial)", a->output_shape.count, un, un + 2);
	for (size_t i = 0; i < un; i++) {
		int64_t s = a->strides.found ? a->strides.v[i] : 1;
		int64_t d = a->dilations.found ? a->dilations.v[i] : 1;
		int64_t op = a->output_padding.found ? a->output_padding.v[i] : 0;
		if (s < 1)
			return below_min(node, "strides", i, s, 1, err);
		if (d < 1)
			return below_min(node, "dilations", i, d, 1, err);
		if (op < 0)
			return below_min(node, "output_padding", i, op, 0, err);
		if (op >= (s > d ? s : d))
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output_padding[%zu]=%lld must be < max(stride, dilation)=%lld",
			                          i, (long long)op, (long long)(s > d ? s : d));
		if (a->kernel_shape.found && a->kernel_shape.v[i] < 0)
			return below_min(node, "kernel_shape", i, a->kernel_shape.v[i], 0, err);
		g->strides[i] = s;
		g->dilations[i] = d;
		g->output_padding[i] = op;
		g->pad_begin[i] = a->pads.found ? a->pads.v[i] : 0;
		g->pad_end[i] = a->pads.found ? a->pads.v[un + i] : 0;
	}
	for (size_t i = 0; a->pads.found && i < 2 * un; i++)
		if (a->pads.v[i] < 0)
			return below_min(node, "pads", i, a->pads.v[i], 0, err);
	for (size_t i = 0; a->output_shape.found && i < a->output_shape.count; i++)
		if (a->output_shape.v[i] < 0)
			return below_min(node, "output_shape", i, a->output_shape.v[i], 0, err);
	return ONNXRUN_OK;
}

/* Batch, channel and group checks: C % group, W.shape[0] == C, M = W.shape[1] * group,
 * B of length M. */
static enum onnxrun_status check_channels(const struct onnxrun__node *node, const struct onnxrun_type *x,
                                          const struct onnxrun_type *w, const struct onnxrun_type *b,
                                          int64_t group, struct onnxrun__convt_geom *g,
                                          struct onnxrun__err *err)
{
	int64_t c = x->shape.rank >= 0 ? x->shape.dims[1] : -1;
	int64_t w0 = w->shape.rank >= 0 ? w->shape.dims[0] : -1;
	int64_t w1 = w->shape.rank >= 0 ? w->shape.dims[1] : -1;
	int64_t m = -1;
	g->batch = x->shape.rank >= 0 ? x->shape.dims[0] : -1;
	if (c >= 0 && c % group)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "C=%lld input channels are not divisible by group=%lld",
		                          (long long)c, (long long)group);
	if (c >= 0 && w0 >= 0 && w0 != c)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "W.shape[0]=%lld must equal the input channels C=%lld",
		                          (long long)w0, (long long)c);
	if (w0 >= 0 && w0 % group)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "W.shape[0]=%lld is not divisible by group=%lld", (long long)w0,
		                          (long long)group);
	if (w1 >= 0 && !onnxrun__mul_i64(w1, group, &m))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "output channels W.shape[1]*group overflow int64");
	if (b && b->shape.rank >= 0) {
		int64_t blen = b->shape.rank == 1 ? b->shape.dims[0] : -1;
		if (b->shape.rank != 1)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "B has rank %d, expected 1", (int)b->shape.rank);
		if (blen >= 0 && m >= 0 && blen != m)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "B has %lld values but M = W.shape[1]*group = %lld",
			                          (long long)blen, (long long)m);
		if (blen >= 0 && m < 0 && blen % group)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "B has %lld values, not divisible by group=%lld",
			                          (long long)blen, (long long)group);
		if (m < 0)
			m = blen;
	}
	g->in_channels = c >= 0 ? c : w0;
	g->out_channels = m;
	return ONNXRUN_OK;
}

/* natural = s*(in-1) + op + (k-1)*d + 1 (ONNX ConvTranspose output-size equation with zero
 * pads); false on int64 overflow. */
static bool natural_size(int64_t s, int64_t in, int64_t op, int64_t k, int64_t d, int64_t *out)
{
	int64_t a, b;
	return onnxrun__mul_i64(s, in - 1, &a) && onnxrun__mul_i64(k - 1, d, &b) &&
	       onnxrun__add_i64(a, b, &a) && onnxrun__add_i64(a, op, &a) && onnxrun__add_i64(a, 1, out);
}

/* Output size and pads of spatial axis i given in (X) and k (kernel), either may be -1.
 * `degenerate`: some known input spatial or kernel dim is 0 (then too-small outputs are
 * empty instead of an error). */
static enum onnxrun_status axis_geometry(const struct onnxrun__node *node, const struct convt_attrs *a,
                                         size_t i, bool degenerate, struct onnxrun__convt_geom *g,
                                         struct onnxrun__err *err)
{
	int64_t in = g->in[i], k = g->kernel[i], natural = -1, out = -1, total;
	size_t os_skip = a->output_shape.count == (size_t)g->n + 2 ? 2 : 0;
	bool known = in >= 0 && k >= 0;
	if (known && !natural_size(g->strides[i], in, g->output_padding[i], k, g->dilations[i], &natural))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "output size of spatial axis %zu overflows int64", i);
	if (a->output_shape.found || a->auto_pad == PAD_SAME_UPPER || a->auto_pad == PAD_SAME_LOWER) {
		/* total = natural - output_shape; SAME_UPPER: begin = floor(total/2), else
		 * end = floor(total/2); the other side takes the rest (total may be < 0). */
		if (a->output_shape.found)
			out = a->output_shape.v[os_skip + i];
		else if (in >= 0 && !onnxrun__mul_i64(in, g->strides[i], &out))
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output size of spatial axis %zu overflows int64", i);
		if (known && out >= 0) {
			if (!onnxrun__add_i64(natural, -out, &total))
				return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
				                          "total padding of spatial axis %zu overflows "
				                          "int64", i);
			if (a->auto_pad == PAD_SAME_UPPER) {
				g->pad_begin[i] = floor_half(total);
				g->pad_end[i] = total - g->pad_begin[i];
			} else {
				g->pad_end[i] = floor_half(total);
				g->pad_begin[i] = total - g->pad_end[i];
			}
		}
	} else if (a->auto_pad == PAD_VALID) {
		g->pad_begin[i] = g->pad_end[i] = 0;
		out = known && natural < 0 ? 0 : natural;
	} else if (known) {
		/* NOTSET: out = natural - pad_begin - pad_end (natural may be negative when a
		 * dim is 0, so the subtraction is checked too). */
		if (!onnxrun__add_i64(natural, -g->pad_begin[i], &out) ||
		    !onnxrun__add_i64(out, -g->pad_end[i], &out))
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output size of spatial axis %zu overflows int64 (pads "
			                          "%lld+%lld)", i, (long long)g->pad_begin[i],
			                          (long long)g->pad_end[i]);
		if (out < 1 && !degenerate)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output size %lld of spatial axis %zu is < 1 (input %lld, "
			                          "kernel %lld, stride %lld, dilation %lld, output_padding "
			                          "%lld, pads %lld+%lld)", (long long)out, i, (long long)in,
			                          (long long)k, (long long)g->strides[i],
			                          (long long)g->dilations[i], (long long)g->output_padding[i],
			                          (long long)g->pad_begin[i], (long long)g->pad_end[i]);
		if (out < 0)
			out = 0;
	}
	g->out[i] = out;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__convt_geom_make(const struct onnxrun__node *node, const struct onnxrun_type *inputs,
                                             size_t n_inputs, struct onnxrun__convt_geom *g,
                                             struct onnxrun__err *err)
{
	const struct onnxrun_type *x = &inputs[0], *w = &inputs[1], *b = NULL;
	struct convt_attrs a;
	enum onnxrun_status st;
	bool degenerate = false;
	int32_t n;

	memset(g, 0, sizeof *g);
	g->n = -1;
	if (n_inputs < 2 || n_inputs > 3)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "has %zu inputs, expected 2 or 3 (X, W, optional B)", n_inputs);
	if (node->outputs && node->n_outputs >= 1 && node->outputs[0] < 0)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "output 0 is required but its name is empty");
	if (n_inputs == 3 && inputs[2].dtype != ONNXRUN_DTYPE_UNDEFINED)
		b = &inputs[2];
	g->has_bias = b != NULL;
	if ((st = check_dtypes(node, x, w, b, err)) || (st = read_attrs(node, &a, err)) ||
	    (st = resolve_rank(node, x, w, &a, &n, err)) ||
	    (st = check_channels(node, x, w, b, a.group, g, err)))
		return st;
	g->group = a.group;
	if (n < 0)
		return ONNXRUN_OK; /* nothing spatial known */
	if (n > S)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "%d spatial axes, at most %d supported", (int)n, S);
	g->n = n;
	if ((st = check_lists(node, &a, n, g, err)))
		return st;
	if (a.output_shape.count == (size_t)n + 2) {
		int64_t on = a.output_shape.v[0], om = a.output_shape.v[1];
		if (g->batch >= 0 && on != g->batch)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output_shape[0]=%lld does not match the batch N=%lld",
			                          (long long)on, (long long)g->batch);
		if (g->out_channels >= 0 && om != g->out_channels)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "output_shape[1]=%lld does not match the output channels "
			                          "M=%lld", (long long)om, (long long)g->out_channels);
	}
	for (int32_t i = 0; i < n; i++) {
		int64_t wk = w->shape.rank >= 0 ? w->shape.dims[2 + i] : -1;
		int64_t ks = a.kernel_shape.found ? a.kernel_shape.v[i] : -1;
		if (wk >= 0 && ks >= 0 && wk != ks)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "kernel_shape[%d]=%lld does not match W.shape[%d]=%lld",
			                          (int)i, (long long)ks, (int)i + 2, (long long)wk);
		g->kernel[i] = wk >= 0 ? wk : ks;
		g->in[i] = x->shape.rank >= 0 ? x->shape.dims[2 + i] : -1;
		degenerate = degenerate || g->in[i] == 0 || g->kernel[i] == 0;
	}
	g->concrete = g->batch >= 0 && g->in_channels >= 0 && g->out_channels >= 0;
	for (int32_t i = 0; i < n; i++) {
		if ((st = axis_geometry(node, &a, (size_t)i, degenerate, g, err)))
			return st;
		g->concrete = g->concrete && g->in[i] >= 0 && g->kernel[i] >= 0 && g->out[i] >= 0;
	}
	return ONNXRUN_OK;
}
