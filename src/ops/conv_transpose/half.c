/*
 * half.c - the float16/bfloat16 entry: X, the bias (and W when it was not packed at load)
 * are widened into float32 scratch, the node runs through the float32 entries of the list
 * into a float32 output, and each output is rounded once to the storage type (round to
 * nearest even). The
 * conversions are those of src/runtime (onnxrun__f16_to_f32 ...), run by the kernel table's
 * widen/narrow entries of the ISA in use (vectorised, bitwise equal for every input:
 * test_f16.c), and split over the thread pool.
 */
#include <string.h>

#include "impl.h"

#define CHUNK 16384 /* elements per conversion work item */

/* For tests: one ISA's conversions (the best supported one not above isa). */
void onnxrun__convt_half_widen(enum onnxrun__isa isa, bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	onnxrun__kernels_for(isa)->widen(bf16, src, dst, n);
}

void onnxrun__convt_half_narrow(enum onnxrun__isa isa, bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	onnxrun__kernels_for(isa)->narrow(bf16, src, dst, n);
}

float *onnxrun__convt_widen_new(const struct onnxrun_env *env, const struct onnxrun_tensor *t)
{
	size_t bytes;
	float *out;
	if (!onnxrun__tensor_bytes(ONNXRUN_DTYPE_FLOAT, t->numel > 0 ? t->numel : 1, &bytes) ||
	    !(out = onnxrun__malloc(env, bytes)))
		return NULL;
	onnxrun__kernels_current()->widen(t->dtype == ONNXRUN_DTYPE_BFLOAT16, t->data, out, t->numel);
	return out;
}

/* One conversion over the pool, CHUNK elements per item. */
struct convert_job {
	const struct onnxrun__kernels *kt;
	bool bf16, narrow;
	const void *src;
	void *dst;
	int64_t n;
};

static void convert_items(void *ctx, int tid, int64_t begin, int64_t end)
{
	const struct convert_job *j = ctx;
	const int64_t lo = begin * CHUNK, hi = end * CHUNK < j->n ? end * CHUNK : j->n;
	(void)tid;
	if (j->narrow)
		j->kt->narrow(j->bf16, (const float *)j->src + lo, (uint16_t *)j->dst + lo, hi - lo);
	else
		j->kt->widen(j->bf16, (const uint16_t *)j->src + lo, (float *)j->dst + lo, hi - lo);
}

static enum onnxrun_status convert(const struct convt_call *c, bool bf16, bool narrow, const void *src, void *dst,
                                   int64_t n)
{
	struct convert_job j = { c->kt, bf16, narrow, src, dst, n };
	return onnxrun__op_parallel(c->ctx, n <= CHUNK ? 1 : onnxrun__op_plan_threads(c->ctx), (n + CHUNK - 1) / CHUNK,
	                            convert_items, &j);
}

/* ---- the entry ---------------------------------------------------------------------------- */

/* Float offsets of the scratch parts, each rounded up to 64 bytes: x, y, bias, w. */
struct half_scratch {
	int64_t x, y, b, w, total;
};

static bool scratch_layout(int64_t nx, int64_t ny, int64_t nb, int64_t nw, struct half_scratch *s)
{
	const int64_t parts[4] = { nx, ny, nb, nw };
	int64_t *at[4] = { &s->x, &s->y, &s->b, &s->w }, off = 0;
	for (int i = 0; i < 4; i++) {
		*at[i] = off;
		if (parts[i] > INT64_MAX / 8 - off - 16)
			return false;
		off += (parts[i] + 15) / 16 * 16;
	}
	s->total = off;
	return true;
}

static enum onnxrun_status first_failure(enum onnxrun_status a, enum onnxrun_status b)
{
	return a ? a : b;
}

static const char *half_accepts(const struct convt_query *q)
{
	return convt_is_half(q->dtype) ? NULL : "not float16 or bfloat16";
}

/* Widens X and the bias (and W, unless the op's state holds it packed: the float32 entries
 * rebuild it from there if they need it) into float32 scratch, runs the node through the
 * float32 entries, and rounds each output once. */
static enum onnxrun_status half_run(const struct convt_call *c)
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const bool bf16 = c->dtype == ONNXRUN_DTYPE_BFLOAT16, need_w = c->packed == NULL;
	const int64_t nx = g->batch * g->in_channels * convt_product(g->in, g->n);
	const int64_t ny = g->batch * g->out_channels * convt_product(g->out, g->n);
	struct convt_call c32 = *c;
	struct half_scratch at;
	enum onnxrun_status st;
	float *buf;
	size_t bytes;

	if (!scratch_layout(nx, ny, c->b ? g->out_channels : 0, need_w ? c->w_numel : 0, &at) ||
	    !onnxrun__tensor_bytes(ONNXRUN_DTYPE_FLOAT, at.total, &bytes))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_LIMIT, ctx->node, "scratch size overflows");
	if (!(buf = onnxrun__malloc(ctx->env, bytes)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
		                          "out of memory allocating %zu bytes of float32 scratch", bytes);
	/* A stopped run (cancel, deadline, or prepare's measuring of the ops' workspace) skips
	 * the work of each step, not the steps: the float32 entry still plans and allocates what
	 * a run would, and the first failure is the status. */
	st = convert(c, bf16, false, c->x, buf + at.x, nx);
	if (c->b && (!st || st == ONNXRUN_ERROR_CANCELLED))
		st = first_failure(st, convert(c, bf16, false, c->b, buf + at.b, g->out_channels));
	if (need_w && (!st || st == ONNXRUN_ERROR_CANCELLED))
		st = first_failure(st, convert(c, bf16, false, c->w, buf + at.w, c->w_numel));
	c32.dtype = ONNXRUN_DTYPE_FLOAT;
	c32.x = buf + at.x;
	c32.b = c->b ? buf + at.b : NULL;
	c32.w = need_w ? buf + at.w : NULL;
	c32.y = buf + at.y;
	if (!st || st == ONNXRUN_ERROR_CANCELLED)
		st = first_failure(st, c->run_list(&c32));
	if (!st)
		st = convert(c, bf16, true, buf + at.y, c->y, ny);
	onnxrun__free(ctx->env, buf);
	return st;
}

const struct convt_impl onnxrun__convt_half = { "float16/bfloat16 through float32", ONNXRUN_DTYPE_UNDEFINED,
	                                        half_accepts, CONVT_LAYOUT_NONE, half_run, NULL };
