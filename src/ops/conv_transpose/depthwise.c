/*
 * depthwise.c - depthwise ConvTranspose (one input and one output channel per group, rank 1
 * or 2): builds the per-axis residue tables of the taps (struct onnxrun__kdw_axis) and runs
 * the output rows over the thread pool, in work items of whole rows, through the kernel
 * table's rows routine (kernels/depthwise.h; kernels/generic_dw.h has the algorithm). Each
 * output row belongs to one work item and taps are summed in the same order, so results do
 * not depend on the thread count.
 */
#include <string.h>

#include "impl.h"

/* Outputs per work item (64 KiB of float32). */
#define DW_ITEM_FLOATS 16384

/* One run: the kernel's inputs, the rows routine of the ISA in use, per-thread scratch. */
struct dw_job {
	struct onnxrun__kdw k;
	onnxrun__dw_rows_fn rowsfn;
	char *scratch;
	size_t scratch_stride;
	int64_t rows, per_item; /* output rows, and rows per work item */
};

static void dw_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct dw_job *j = arg;
	const int64_t rb = begin * j->per_item, re = end * j->per_item < j->rows ? end * j->per_item : j->rows;
	j->rowsfn(&j->k, rb, re, (float *)(j->scratch + (size_t)tid * j->scratch_stride));
}

/* Fills an axis's residue tables into buf (2*(s + 1) + 3*k words used). */
static void axis_tables(struct onnxrun__kdw_axis *a, int64_t *buf)
{
	a->start = buf;
	a->qlo = buf + a->s + 1;
	a->qhi = a->qlo + a->s;
	a->kk = a->qhi + a->s;
	a->dl = a->kk + a->k;
	memset(a->start, 0, (size_t)(a->s + 1) * sizeof *a->start);
	for (int64_t k = 0; k < a->k; k++)
		a->start[(k * a->d) % a->s + 1]++;
	for (int64_t r = 0; r < a->s; r++) {
		a->start[r + 1] += a->start[r];
		/* o = q*s + r - pb in [0, out) */
		a->qlo[r] = convt_ceil_div(a->pb - r, a->s);
		a->qhi[r] = convt_floor_div(a->out - 1 + a->pb - r, a->s);
	}
	for (int64_t r = 0, fill = 0; r < a->s; r++)
		for (int64_t k = 0; k < a->k; k++)
			if ((k * a->d) % a->s == r) {
				a->kk[fill] = k;
				a->dl[fill++] = (k * a->d - r) / a->s;
			}
}

static enum onnxrun_status dw_compute(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                                      const struct onnxrun__kernels *kt, const float *x, const float *w,
                                      const float *bias, float *y)
{
	struct dw_job j;
	int64_t *tables, words = 0;
	const int threads = onnxrun__op_plan_threads(ctx);
	enum onnxrun_status st;
	memset(&j, 0, sizeof j);
	j.k.x = x;
	j.k.w = w;
	j.k.bias = bias;
	j.k.y = y;
	j.k.chans = g->out_channels;
	j.rowsfn = kt->dw_rows;
	for (int a = 0; a < 2; a++) {
		const int src = g->n == 2 ? a : 0;
		const bool real = g->n == 2 || a == 1;
		struct onnxrun__kdw_axis *ax = &j.k.ax[a];
		ax->in = real ? g->in[src] : 1;
		ax->out = real ? g->out[src] : 1;
		ax->k = real ? g->kernel[src] : 1;
		ax->s = real ? g->strides[src] : 1;
		ax->d = real ? g->dilations[src] : 1;
		ax->pb = real ? g->pad_begin[src] : 0;
		words += 3 * (ax->s + 1) + 2 * ax->k;
	}
	if (!(tables = onnxrun__malloc(ctx->env, (size_t)words * sizeof *tables)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	axis_tables(&j.k.ax[0], tables);
	axis_tables(&j.k.ax[1], tables + 3 * (j.k.ax[0].s + 1) + 2 * j.k.ax[0].k);
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, (size_t)(j.k.ax[1].in + 16) * sizeof(float),
	                                         &j.scratch_stride))) {
		onnxrun__free(ctx->env, tables);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	/* Work items of whole rows, about DW_ITEM_FLOATS outputs each: per-item costs (claiming the
	 * item, the rows routine's per-call set-up) stay small next to the rows' own work. */
	j.rows = g->batch * j.k.chans * j.k.ax[0].out;
	j.per_item = DW_ITEM_FLOATS / (j.k.ax[1].out > 0 ? j.k.ax[1].out : 1);
	j.per_item = j.per_item < 1 ? 1 : j.per_item;
	st = onnxrun__op_parallel(ctx, threads, (j.rows + j.per_item - 1) / j.per_item, dw_items, &j);
	onnxrun__free(ctx->env, j.scratch);
	onnxrun__free(ctx->env, tables);
	return st;
}

/* ---- the entry ---------------------------------------------------------------------------- */

static const char *dw_accepts(const struct convt_query *q)
{
	const struct onnxrun__convt_geom *g = q->g;
	if (g->n < 1 || g->n > 2)
		return "not 1-D or 2-D";
	if (g->in_channels != g->group || g->out_channels != g->group)
		return "not one input and one output channel per group";
	if (convt_product(g->kernel, g->n) > ONNXRUN__KDW_MAX_TAPS)
		return "more kernel positions than the depthwise rows take";
	return onnxrun__convt_positions_decline(g, true);
}

static enum onnxrun_status dw_run(const struct convt_call *c)
{
	const float *w;
	float *wown;
	enum onnxrun_status st;
	if ((st = onnxrun__convt_w_values(c, &w, &wown)))
		return st;
	st = dw_compute(c->ctx, c->g, c->kt, c->x, w, c->b, c->y);
	onnxrun__free(c->ctx->env, wown);
	return st;
}

const struct convt_impl onnxrun__convt_depthwise = { "float32 depthwise", ONNXRUN_DTYPE_FLOAT, dw_accepts, CONVT_LAYOUT_NONE,
	                                             dw_run, NULL };
