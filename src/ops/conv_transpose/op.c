/*
 * conv_transpose.c - ConvTranspose (ONNX versions 1, 11, 22): shape inference and a plain
 * scatter implementation for float, double, float16 and bfloat16 (the last two computed in
 * float32 and rounded once), split over the thread pool by output plane, used where the fast
 * paths (conv_transpose_fast.c, conv_transpose_half.c for the half types,
 * conv_transpose_f64.c for double) do not apply. Geometry and validation live in
 * conv_transpose_shape.c.
 */
#include <string.h>

#include "geometry.h"
#include "impl.h"
#include "../../runtime/pool.h"

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

/* ---- compute ------------------------------------------------------------------------------ */

/* One typed row update of the scatter: y[t*ystride] += wv * x[t] for t < count, element
 * offsets into the output, input and weight arrays. */
struct convt_arrays {
	void (*row)(const struct convt_arrays *a, int64_t y_off, int64_t x_off, int64_t w_off,
	            int64_t count, int64_t ystride);
	const void *x, *w;
	void *y;
};

static void row_f32(const struct convt_arrays *a, int64_t y_off, int64_t x_off, int64_t w_off,
                    int64_t count, int64_t ystride)
{
	float *y = (float *)a->y + y_off;
	const float *x = (const float *)a->x + x_off;
	const float wv = ((const float *)a->w)[w_off];
	for (int64_t t = 0; t < count; t++)
		y[t * ystride] += wv * x[t];
}

static void row_f64(const struct convt_arrays *a, int64_t y_off, int64_t x_off, int64_t w_off,
                    int64_t count, int64_t ystride)
{
	double *y = (double *)a->y + y_off;
	const double *x = (const double *)a->x + x_off;
	const double wv = ((const double *)a->w)[w_off];
	for (int64_t t = 0; t < count; t++)
		y[t * ystride] += wv * x[t];
}

/* ceil(a / b) for b > 0 and any sign of a. */
static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static int64_t product(const int64_t *v, int32_t n)
{
	int64_t p = 1;
	for (int32_t i = 0; i < n; i++)
		p *= v[i];
	return p;
}

/* Advances a row-major multi-index over dims[0..n); returns false after the last one. */
static bool next_index(int64_t *idx, const int64_t *dims, int32_t n)
{
	for (int32_t a = n - 1; a >= 0; a--) {
		if (++idx[a] < dims[a])
			return true;
		idx[a] = 0;
	}
	return false;
}

/* Adds into output plane p = nb*M + grp*Mg + m every x[nb, ic, i] * w[ic, m, k] of its group
 * with, per axis, o = i*stride - pad_begin + k*dilation (ONNX ConvTranspose, the transpose of
 * Conv's gather), skipping positions outside the output. The plane must hold the bias (or
 * zeros). Input channels, then taps, then input rows; the innermost loop runs over the last
 * input axis, contiguous in x. */
static void scatter_plane(const struct onnxrun__convt_geom *g, const struct convt_arrays *arr, int64_t p)
{
	const int32_t n = g->n, last = n - 1;
	const int64_t in_sz = product(g->in, n), k_sz = product(g->kernel, n), out_sz = product(g->out, n);
	const int64_t cg = g->in_channels / g->group, mg = g->out_channels / g->group;
	const int64_t in_last = g->in[last], out_last = g->out[last], s_last = g->strides[last];
	const int64_t nb = p / g->out_channels, grp = p % g->out_channels / mg, m = p % mg;
	int64_t kidx[ONNXRUN__CONVT_MAX_SPATIAL], iidx[ONNXRUN__CONVT_MAX_SPATIAL];

	for (int64_t c = 0; c < cg; c++) {
		const int64_t ic = grp * cg + c;
		const int64_t x_base = (nb * g->in_channels + ic) * in_sz;
		const int64_t y_base = p * out_sz;
		const int64_t w_base = (ic * mg + m) * k_sz;
		memset(kidx, 0, sizeof kidx);
		for (int64_t kk = 0; kk < k_sz; kk++, next_index(kidx, g->kernel, n)) {
			/* last axis: o = i*s + off must lie in [0, out_last) */
			const int64_t off = kidx[last] * g->dilations[last] - g->pad_begin[last];
			int64_t lo = ceil_div(-off, s_last), hi = ceil_div(out_last - off, s_last);
			lo = lo < 0 ? 0 : lo;
			hi = hi > in_last ? in_last : hi;
			if (lo >= hi)
				continue;
			memset(iidx, 0, sizeof iidx);
			int64_t row = 0;
			do {
				int64_t yo = 0;
				bool inside = true;
				for (int32_t a = 0; a < last && inside; a++) {
					int64_t o = iidx[a] * g->strides[a] + kidx[a] * g->dilations[a] -
					            g->pad_begin[a];
					inside = o >= 0 && o < g->out[a];
					yo = yo * g->out[a] + o;
				}
				if (inside)
					arr->row(arr, y_base + yo * out_last + lo * s_last + off,
					         x_base + row * in_last + lo, w_base + kk, hi - lo, s_last);
				row++;
			} while (next_index(iidx, g->in, last));
		}
	}
}

struct scatter_job {
	const struct onnxrun__convt_geom *g;
	const struct convt_arrays *arr;
};

static void scatter_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct scatter_job *j = arg;
	(void)tid;
	for (int64_t p = begin; p < end; p++)
		scatter_plane(j->g, j->arr, p);
}

/* The scatter over every output plane (batch x output channel), split over the session's
 * thread pool: each plane is written by one work item in the same order whatever the thread
 * count, so results are bitwise identical for every thread count. y must hold the bias. */
static void convt_scatter(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                          const struct convt_arrays *arr)
{
	const int64_t in_sz = product(g->in, g->n), k_sz = product(g->kernel, g->n), out_sz = product(g->out, g->n);
	const int64_t planes = g->batch * g->out_channels;
	int threads = ctx->threads < 1 ? 1 : ctx->threads;
	double work;

	if (in_sz == 0 || k_sz == 0 || out_sz == 0 || planes == 0 || g->in_channels == 0)
		return;
	/* multiply-adds in all: below ~64K, waking the workers costs more than it saves */
	work = (double)planes * (double)(g->in_channels / g->group) * (double)k_sz * (double)in_sz;
	if (work < 65536.0)
		threads = 1;
	onnxrun__pool_run(onnxrun__pool_current(), threads, planes, scatter_items,
	                  &(struct scatter_job){ g, arr });
}

/* Converts n float16 (or bfloat16) values to float32. */
static void widen(const uint16_t *src, float *dst, int64_t n, bool bf16)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = bf16 ? onnxrun__bf16_to_f32(src[i]) : onnxrun__f16_to_f32(src[i]);
}

/* float16/bfloat16 where no fast path applies (conv_transpose_half.c): widen X, W and B
 * to float32, run the float32 scatter, round each output once. */
static enum onnxrun_status convt_half(const struct onnxrun__node *node, const struct onnxrun__convt_geom *g,
                                      const struct onnxrun_tensor *const *inputs,
                                      struct onnxrun_tensor *y, struct onnxrun_op_context *ctx)
{
	const bool bf16 = y->dtype == ONNXRUN_DTYPE_BFLOAT16;
	const int64_t nx = inputs[0]->numel, nw = inputs[1]->numel, ny = y->numel;
	const int64_t out_sz = product(g->out, g->n);
	int64_t total;
	size_t bytes;
	float *buf, *fx, *fw, *fy;
	uint16_t *dst = y->data;

	if (!onnxrun__add_i64(nx, nw, &total) || !onnxrun__add_i64(total, ny, &total) ||
	    !onnxrun__tensor_bytes(ONNXRUN_DTYPE_FLOAT, total, &bytes))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_LIMIT, node, "scratch size overflows");
	buf = onnxrun__malloc(ctx->env, bytes);
	if (!buf)
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, node,
		                          "out of memory allocating %zu bytes of float32 scratch", bytes);
	fx = buf;
	fw = fx + nx;
	fy = fw + nw;
	widen(inputs[0]->data, fx, nx, bf16);
	widen(inputs[1]->data, fw, nw, bf16);
	for (int64_t i = 0; i < ny; i++) {
		int64_t ch = (i / out_sz) % g->out_channels;
		const uint16_t *b = g->has_bias ? inputs[2]->data : NULL;
		fy[i] = !b ? 0.0f : bf16 ? onnxrun__bf16_to_f32(b[ch]) : onnxrun__f16_to_f32(b[ch]);
	}
	convt_scatter(ctx, g, &(struct convt_arrays){ row_f32, fx, fw, fy });
	for (int64_t i = 0; i < ny; i++)
		dst[i] = bf16 ? onnxrun__f32_to_bf16(fy[i]) : onnxrun__f32_to_f16(fy[i]);
	onnxrun__free(ctx->env, buf);
	return ONNXRUN_OK;
}

/* Fills each output channel plane with its bias (or zero), for float and double. */
static void fill_bias(const struct onnxrun__convt_geom *g, const struct onnxrun_tensor *b,
                      struct onnxrun_tensor *y)
{
	const int64_t out_sz = product(g->out, g->n);
	for (int64_t p = 0; p < g->batch * g->out_channels; p++) {
		const int64_t ch = p % g->out_channels;
		if (y->dtype == ONNXRUN_DTYPE_FLOAT) {
			float *dst = (float *)y->data + p * out_sz, v = b ? ((const float *)b->data)[ch] : 0.0f;
			for (int64_t i = 0; i < out_sz; i++)
				dst[i] = v;
		} else {
			double *dst = (double *)y->data + p * out_sz, v = b ? ((const double *)b->data)[ch] : 0.0;
			for (int64_t i = 0; i < out_sz; i++)
				dst[i] = v;
		}
	}
}

/* Recomputes the geometry from the concrete inputs, checks it against the output the
 * runtime allocated, and runs the scatter for the output's dtype. */
static enum onnxrun_status convt_compute(struct onnxrun_op_context *ctx,
					 const struct onnxrun_tensor *const *inputs, size_t n_inputs,
					 struct onnxrun_tensor *const *outputs, size_t n_outputs)
{
	const struct onnxrun__node *node = ctx->node;
	struct onnxrun_type types[3];
	struct onnxrun__convt_geom g;
	struct onnxrun_tensor *y = outputs[0];
	const struct onnxrun_tensor *b = n_inputs > 2 ? inputs[2] : NULL;
	enum onnxrun_status st;

	memset(types, 0, sizeof types);
	for (size_t i = 0; i < n_inputs && i < 3; i++) {
		if (!inputs[i])
			continue;
		types[i].dtype = inputs[i]->dtype;
		types[i].shape.rank = inputs[i]->rank;
		memcpy(types[i].shape.dims, inputs[i]->dims, sizeof inputs[i]->dims);
	}
	if ((st = onnxrun__convt_geom_make(node, types, n_inputs, &g, ctx->err)))
		return st;
	if (!g.concrete || n_outputs != 1 || y->dtype != types[0].dtype || y->rank != g.n + 2 ||
	    y->dims[0] != g.batch || y->dims[1] != g.out_channels ||
	    memcmp(y->dims + 2, g.out, (size_t)g.n * sizeof g.out[0]))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, node,
		                          "output tensor does not have the inferred type and shape");
	if (y->numel == 0)
		return ONNXRUN_OK;
	if (onnxrun__convt_is_half(y->dtype)) {
		bool done;
		if ((st = onnxrun__convt_fast_half(ctx, &g, inputs, n_inputs, y, &done)) || done)
			return st;
		return convt_half(node, &g, inputs, y, ctx);
	}
	if (y->dtype == ONNXRUN_DTYPE_FLOAT || y->dtype == ONNXRUN_DTYPE_DOUBLE) {
		bool done;
		st = y->dtype == ONNXRUN_DTYPE_FLOAT ? onnxrun__convt_fast(ctx, &g, inputs, n_inputs, y, &done) :
		                                       onnxrun__convt_fast_f64(ctx, &g, inputs, n_inputs, y, &done);
		if (st || done)
			return st;
	}
	{
		const void *w = inputs[1]->data;
		float *wown = NULL;
		if (y->dtype == ONNXRUN_DTYPE_FLOAT) { /* float32 W may have been released after packing */
			const float *wf;
			if ((st = onnxrun__convt_w_values(ctx, inputs[1], &wf, &wown)))
				return st;
			w = wf;
		}
		fill_bias(&g, b, y);
		convt_scatter(ctx, &g, &(struct convt_arrays){ y->dtype == ONNXRUN_DTYPE_FLOAT ? row_f32 : row_f64,
		                                          inputs[0]->data, w, y->data });
		onnxrun__free(ctx->env, wown);
	}
	return ONNXRUN_OK;
}

const struct onnxrun_op onnxrun__op_conv_transpose[] = {
	{ "", "ConvTranspose", 1, convt_infer, convt_compute, onnxrun__convt_fast_init,
	  onnxrun__convt_fast_fini, NULL, NULL },
	{ "", "ConvTranspose", 11, convt_infer, convt_compute, onnxrun__convt_fast_init,
	  onnxrun__convt_fast_fini, NULL, NULL },
	{ "", "ConvTranspose", 22, convt_infer, convt_compute, onnxrun__convt_fast_init,
	  onnxrun__convt_fast_fini, NULL, NULL },
	{ NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL },
};
