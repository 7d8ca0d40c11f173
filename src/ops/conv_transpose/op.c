/*
 * op.c - the ConvTranspose op (ONNX versions 1, 11, 22): shape inference (the geometry and
 * its validation are geometry.c's), and compute as a walk over the list of implementations
 * (impl.h): the first that accepts the node's geometry, dtype and ISA runs it. At load, the
 * entry that will take the node's float32 runs prepares a constant W once (packed weights).
 */
#include <string.h>

#include "border.h"
#include "geometry.h"
#include "impl.h"

/* Output type: dtype of X, shape (N, M, out_1..out_n) with whatever is known; the batch
 * dim's name passes through, and so does W's output-channel name when group == 1. */
static enum onnxrun_status convt_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *inputs,
				       size_t n_inputs, struct onnxrun_type *outputs, size_t n_outputs)
{
	const struct onnxrun__node *node = ctx->node;
	struct onnxrun__err *err = ctx->err;
	const struct onnxrun_type *x = &inputs[0], *w = &inputs[1];
	struct onnxrun_shape *s;
	struct onnxrun__convt_geom g;
	enum onnxrun_status st;
	int64_t numel;

	if (n_outputs != 1)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "has %zu outputs, expected 1", n_outputs);
	if ((st = onnxrun__convt_geom_make(node, inputs, n_inputs, &g, err)))
		return st;
	outputs[0].dtype = x->dtype;
	s = &outputs[0].shape;
	onnxrun__shape_unknown(s);
	if (g.n < 0)
		return ONNXRUN_OK;
	s->rank = g.n + 2;
	s->dims[0] = g.batch;
	if (g.batch < 0 && x->shape.rank >= 0)
		s->params[0] = x->shape.params[0];
	s->dims[1] = g.out_channels;
	if (g.out_channels < 0 && g.group == 1 && w->shape.rank >= 0)
		s->params[1] = w->shape.params[1];
	for (int32_t i = 0; i < g.n; i++)
		s->dims[2 + i] = g.out[i];
	if (onnxrun__shape_concrete(s) && !onnxrun__shape_numel(s, &numel))
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "output element count overflows int64");
	return ONNXRUN_OK;
}

/* ---- the list ------------------------------------------------------------------------------ */

/* Most specific first; the scatter takes whatever the others leave. Float32-only builds
 * (small flash) keep the phase path and the scatter: the depthwise, window and col2im entries
 * are speed paths for shapes the phase path (or the scatter) computes too, and the float64
 * and float16/bfloat16 entries are for dtypes such a build refuses. The window entry needs
 * the rel tiles, which a build with the scalar table alone does not have. */
static const struct convt_impl *const impls[] = {
#if !ONNXRUN__F32_ONLY
	&onnxrun__convt_depthwise,
#if !ONNXRUN__KERNELS_SCALAR_ONLY
	&onnxrun__convt_window,
#endif
	&onnxrun__convt_col2im,
#endif
	&onnxrun__convt_phase,
#if !ONNXRUN__F32_ONLY
	&onnxrun__convt_f64,       &onnxrun__convt_half,
#endif
	&onnxrun__convt_scatter,
};
#define N_IMPLS (sizeof impls / sizeof impls[0])

static bool takes(const struct convt_impl *im, const struct onnxrun__convt_geom *g, enum onnxrun_dtype dtype,
                  const struct onnxrun__kernels *kt)
{
	const struct convt_query q = { g, dtype, kt };
	return (im->dtype == ONNXRUN_DTYPE_UNDEFINED || im->dtype == dtype) && !im->accepts(&q);
}

static enum onnxrun_status run_entry(const struct convt_impl *im, const struct convt_call *c)
{
	return im->run_packed ? onnxrun__convt_run_packed(c, im->layout, im->run_packed) : im->run(c);
}

static const struct convt_impl *pick_from(size_t first, const struct onnxrun__convt_geom *g, enum onnxrun_dtype dtype,
                                          const struct onnxrun__kernels *kt, size_t *at)
{
	for (size_t i = first; i < N_IMPLS; i++)
		if (takes(impls[i], g, dtype, kt)) {
			*at = i;
			return impls[i];
		}
	return NULL;
}

static const struct convt_impl *pick(const struct convt_call *c)
{
	size_t at;
	return pick_from(0, c->g, c->dtype, c->kt, &at);
}

/* The first entry that accepts c and does not decline while planning runs it. */
static enum onnxrun_status run_list(const struct convt_call *c)
{
	size_t at = 0;
	for (const struct convt_impl *im; (im = pick_from(at, c->g, c->dtype, c->kt, &at)) != NULL; at++) {
		enum onnxrun_status st = run_entry(im, c);
		if (st != ONNXRUN_ERROR_UNSUPPORTED)
			return st;
	}
	return onnxrun__node_fail(c->ctx->err, ONNXRUN_ERROR_UNSUPPORTED, c->ctx->node,
	                          "no implementation takes %s data", onnxrun_dtype_name(c->dtype));
}

/* ---- init / fini -------------------------------------------------------------------------- */

/* A constant W is prepared by the entry that will take the node's float32 runs (float64
 * runs for a float64 W). float16 and bfloat16 nodes run through the float32 entries
 * (half.c), so their W is prepared as its float32 widening; a float32 or float64 W then
 * lives on only as the packed weights, and compute rebuilds it for the entries that read W
 * itself. */
static enum onnxrun_status convt_init(struct onnxrun_op_context *ctx, void **state)
{
	const void *w_bytes;
	const struct onnxrun_tensor *w = onnxrun__op_constant_bytes(ctx, 1, &w_bytes);
	struct onnxrun_type types[3];
	struct onnxrun__convt_geom g;
	struct onnxrun__convt_packed *pk = NULL;
	struct onnxrun__err scratch_err;
	const struct convt_impl *im;
	enum onnxrun_status st;
	size_t n = ctx->node->n_inputs < 3 ? ctx->node->n_inputs : 3, at;
	float *wide = NULL;

	*state = NULL;
	if (!w || w->rank < 3 || (ONNXRUN__F32_ONLY && w->dtype != ONNXRUN_DTYPE_FLOAT) ||
	    (w->dtype != ONNXRUN_DTYPE_FLOAT && w->dtype != ONNXRUN_DTYPE_DOUBLE && !convt_is_half(w->dtype)))
		return ONNXRUN_OK;
	/* float32 is packed from its bytes where they are (a pending initializer stays in the
	 * model buffer and is never copied when the panels replace it); widening reads data */
	if (!ONNXRUN__F32_ONLY && convt_is_half(w->dtype) && !(w = onnxrun_op_constant_input(ctx, 1)))
		return ONNXRUN_OK;
	/* geometry from W alone: X's spatial dims do not change what is prepared */
	memset(types, 0, sizeof types);
	types[0].dtype = types[1].dtype = w->dtype;
	types[0].shape.rank = types[1].shape.rank = w->rank;
	memcpy(types[1].shape.dims, w->dims, (size_t)w->rank * sizeof *w->dims);
	types[0].shape.dims[0] = 1;
	types[0].shape.dims[1] = w->dims[0];
	for (int32_t a = 2; a < w->rank; a++)
		types[0].shape.dims[a] = -1;
	for (size_t i = 2; i < n; i++) {
		const struct onnxrun_tensor *b = onnxrun_op_constant_input(ctx, i);
		types[i].dtype = ctx->node->inputs[i] >= 0 ? w->dtype : ONNXRUN_DTYPE_UNDEFINED;
		types[i].shape.rank = 1;
		types[i].shape.dims[0] = b ? b->dims[0] : -1;
	}
	/* attribute errors are reported by infer/compute; here they only mean nothing is prepared */
	if (onnxrun__convt_geom_make(ctx->node, types, n, &g, &scratch_err) || g.n < 1)
		return ONNXRUN_OK;
	im = pick_from(0, &g, w->dtype == ONNXRUN_DTYPE_DOUBLE ? ONNXRUN_DTYPE_DOUBLE : ONNXRUN_DTYPE_FLOAT,
	               onnxrun__kernels_current(), &at);
	if (!im || im->layout == CONVT_LAYOUT_NONE)
		return ONNXRUN_OK;
	if (!ONNXRUN__F32_ONLY && convt_is_half(w->dtype) && !(wide = onnxrun__convt_widen_new(ctx->env, w)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
		                          "out of memory widening weights to float32");
	/* stoppable: the load's cancel request and deadline reach init through ctx */
#ifndef ONNXRUN_BAREMETAL
	{
		/* X's sizes known at load (static shapes): border weights only where that run splits */
		struct onnxrun_type tx[3];
		struct onnxrun__convt_geom gx;
		bool known = false;
		if (ctx->model && ctx->node->inputs[0] >= 0) {
			memcpy(tx, types, sizeof tx);
			onnxrun__value_type(&ctx->model->values[ctx->node->inputs[0]], &tx[0]);
			known = !onnxrun__convt_geom_make(ctx->node, tx, n, &gx, &scratch_err) && gx.concrete;
		}
		st = onnxrun__convt_pack_with_border(ctx->env, &g, wide ? (const void *)wide : w_bytes, im->layout,
		                                     known ? &gx : NULL, ctx, &pk);
	}
#else
	st = onnxrun__convt_pack_stoppable(ctx->env, &g, wide ? (const void *)wide : w_bytes, im->layout, ctx, &pk);
#endif
	onnxrun__free(ctx->env, wide);
	if (st == ONNXRUN_ERROR_UNSUPPORTED)
		return ONNXRUN_OK;
	if (st == ONNXRUN_ERROR_CANCELLED) {
		onnxrun__convt_packed_free(pk);
		return onnxrun__node_fail(ctx->err, st, ctx->node, "stopped while preparing the weights");
	}
	if (st)
		return onnxrun__node_fail(ctx->err, st, ctx->node, "out of memory preparing the weights (%s)", im->name);
	*state = pk;
#ifndef ONNXRUN_BAREMETAL
	/* X's sizes known at load: keep the border weights only where that run splits */
	if (pk && pk->border && ctx->model && ctx->node->inputs[0] >= 0) {
		onnxrun__value_type(&ctx->model->values[ctx->node->inputs[0]], &types[0]);
		if ((st = onnxrun__convt_border_trim(ctx->env, ctx->node, types, n, pk))) {
			onnxrun__convt_packed_free(pk);
			*state = NULL;
			return onnxrun__node_fail(ctx->err, st, ctx->node, "out of memory preparing the weights (%s)",
			                          im->name);
		}
	}
#endif
	if (pk && (w->dtype == ONNXRUN_DTYPE_FLOAT || w->dtype == ONNXRUN_DTYPE_DOUBLE))
		onnxrun__op_rebuilds_input(ctx, 1);
	return ONNXRUN_OK;
}

static void convt_fini(void *user_data, void *state)
{
	(void)user_data;
	onnxrun__convt_packed_free(state);
}

/* ---- compute ------------------------------------------------------------------------------ */

/* The geometry of the concrete inputs (checked against the output the runtime allocated)
 * and the call the implementations see. */
static ONNXRUN__MCU_NOINLINE enum onnxrun_status make_call(struct onnxrun_op_context *ctx,
                                                          const struct onnxrun_tensor *const *inputs, size_t n_inputs,
                                                          struct onnxrun_tensor *y, struct onnxrun__convt_geom *g,
                                                          struct convt_call *c)
{
	struct onnxrun_type types[3];
	enum onnxrun_status st;
	memset(types, 0, sizeof types);
	for (size_t i = 0; i < n_inputs && i < 3; i++) {
		if (!inputs[i])
			continue;
		types[i].dtype = inputs[i]->dtype;
		types[i].shape.rank = inputs[i]->rank;
		memcpy(types[i].shape.dims, inputs[i]->dims, (size_t)inputs[i]->rank * sizeof *inputs[i]->dims);
	}
	if ((st = onnxrun__convt_geom_make(ctx->node, types, n_inputs, g, ctx->err)))
		return st;
	if (!g->concrete || y->dtype != types[0].dtype || y->rank != g->n + 2 || y->dims[0] != g->batch ||
	    y->dims[1] != g->out_channels || memcmp(y->dims + 2, g->out, (size_t)g->n * sizeof g->out[0]))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, ctx->node,
		                          "output tensor does not have the inferred type and shape");
	memset(c, 0, sizeof *c);
	c->ctx = ctx;
	c->g = g;
	c->dtype = y->dtype;
	c->kt = onnxrun__kernels_current();
	c->x = inputs[0]->data;
	c->w = inputs[1]->data;
	c->w_numel = inputs[1]->numel;
	c->b = n_inputs > 2 && inputs[2] ? inputs[2]->data : NULL;
	c->y = y->data;
	c->packed = ctx->state;
	c->pick = pick;
	c->run_list = run_list;
	return ONNXRUN_OK;
}

static enum onnxrun_status convt_compute(struct onnxrun_op_context *ctx,
                                         const struct onnxrun_tensor *const *inputs, size_t n_inputs,
                                         struct onnxrun_tensor *const *outputs, size_t n_outputs)
{
	struct onnxrun__convt_geom g;
	struct convt_call c;
	enum onnxrun_status st;
	if (n_outputs != 1)
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, ctx->node, "expected one output");
	if ((st = make_call(ctx, inputs, n_inputs, outputs[0], &g, &c)))
		return st;
	if (outputs[0]->numel == 0)
		return ONNXRUN_OK;
	return run_list(&c);
}

/* ---- for tests ---------------------------------------------------------------------------- */

const char *onnxrun__convt_pick_name(const struct onnxrun__convt_geom *g, enum onnxrun_dtype dtype)
{
	size_t at;
	const struct convt_impl *im = pick_from(0, g, dtype, onnxrun__kernels_current(), &at);
	return im ? im->name : "";
}

enum onnxrun_status onnxrun__convt_run_entry(const char *name, struct onnxrun_op_context *ctx,
                                             const struct onnxrun_tensor *const *inputs, size_t n_inputs,
                                             struct onnxrun_tensor *y, bool *taken)
{
	struct onnxrun__convt_geom g;
	struct convt_call c;
	enum onnxrun_status st;
	*taken = false;
	if ((st = make_call(ctx, inputs, n_inputs, y, &g, &c)))
		return st;
	for (size_t i = 0; i < N_IMPLS; i++) {
		if (strcmp(impls[i]->name, name) || !takes(impls[i], c.g, c.dtype, c.kt))
			continue;
		st = run_entry(impls[i], &c);
		*taken = st != ONNXRUN_ERROR_UNSUPPORTED;
		return *taken ? st : ONNXRUN_OK;
	}
	return ONNXRUN_OK;
}

const struct onnxrun_op onnxrun__op_conv_transpose[] = {
	{ "", "ConvTranspose", 1, convt_infer, convt_compute, convt_init, convt_fini, NULL, NULL },
	{ "", "ConvTranspose", 11, convt_infer, convt_compute, convt_init, convt_fini, NULL, NULL },
	{ "", "ConvTranspose", 22, convt_infer, convt_compute, convt_init, convt_fini, NULL, NULL },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL },
};
