/*
 * scatter.c - the plain scatter, last in the list: every input element times every tap,
 * added into the outputs it reaches (the transpose of Conv's gather), for float32 and
 * float64 on any geometry. Split over the thread pool by output plane.
 */
#include <string.h>

#include "impl.h"

/* One typed row update of the scatter: y[t*ystride] += wv * x[t] for t < count, element
 * offsets into the output, input and weight arrays. */
struct convt_arrays {
	void (*row)(const struct convt_arrays *a, int64_t y_off, int64_t x_off, int64_t w_off,
	            int64_t count, int64_t ystride);
	const void *x, *w;
	void *y;
};

/* row_f32 and row_f64: the row update for one element type. */
#define SCATTER_ROW(name, T)                                                                    \
	static void name(const struct convt_arrays *a, int64_t y_off, int64_t x_off, int64_t w_off,   \
	                 int64_t count, int64_t ystride)                                               \
	{                                                                                             \
		T *y = (T *)a->y + y_off;                                                             \
		const T *x = (const T *)a->x + x_off;                                                 \
		const T wv = ((const T *)a->w)[w_off];                                                \
		for (int64_t t = 0; t < count; t++)                                                   \
			y[t * ystride] += wv * x[t];                                                  \
	}
SCATTER_ROW(row_f32, float)
SCATTER_ROW(row_f64, double)

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
	const int64_t in_sz = convt_product(g->in, n), k_sz = convt_product(g->kernel, n), out_sz = convt_product(g->out, n);
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
			int64_t lo = convt_ceil_div(-off, s_last), hi = convt_ceil_div(out_last - off, s_last);
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
static enum onnxrun_status convt_scatter(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                          const struct convt_arrays *arr)
{
	const int64_t in_sz = convt_product(g->in, g->n), k_sz = convt_product(g->kernel, g->n), out_sz = convt_product(g->out, g->n);
	const int64_t planes = g->batch * g->out_channels;
	int threads = onnxrun__op_plan_threads(ctx);
	double work;

	if (in_sz == 0 || k_sz == 0 || out_sz == 0 || planes == 0 || g->in_channels == 0)
		return ONNXRUN_OK;
	/* multiply-adds in all: below ~64K, waking the workers costs more than it saves */
	work = (double)planes * (double)(g->in_channels / g->group) * (double)k_sz * (double)in_sz;
	if (work < 65536.0)
		threads = 1;
	return onnxrun__op_parallel(ctx, threads, planes, scatter_items, &(struct scatter_job){ g, arr });
}

/* Fills each output channel plane with its bias (or zero), for float and double. */
static void fill_bias(const struct onnxrun__convt_geom *g, enum onnxrun_dtype dtype, const void *b, void *y)
{
	const int64_t out_sz = convt_product(g->out, g->n);
	for (int64_t p = 0; p < g->batch * g->out_channels; p++) {
		const int64_t ch = p % g->out_channels;
		if (dtype == ONNXRUN_DTYPE_FLOAT || ONNXRUN__F32_ONLY) {
			float *dst = (float *)y + p * out_sz, v = b ? ((const float *)b)[ch] : 0.0f;
			for (int64_t i = 0; i < out_sz; i++)
				dst[i] = v;
		} else {
			double *dst = (double *)y + p * out_sz, v = b ? ((const double *)b)[ch] : 0.0;
			for (int64_t i = 0; i < out_sz; i++)
				dst[i] = v;
		}
	}
}

static const char *scatter_accepts(const struct convt_query *q)
{
	return q->dtype == ONNXRUN_DTYPE_FLOAT || q->dtype == ONNXRUN_DTYPE_DOUBLE ? NULL : "not float or double";
}

static enum onnxrun_status scatter_run(const struct convt_call *c)
{
	const bool f32 = c->dtype == ONNXRUN_DTYPE_FLOAT;
	const void *w;
	void *wown;
	enum onnxrun_status st;
	if (f32) { /* W may have been released after packing */
		const float *wf;
		float *own;
		st = onnxrun__convt_w_values(c, &wf, &own);
		w = wf;
		wown = own;
	} else if (!ONNXRUN__F32_ONLY) {
		const double *wd;
		double *own;
		st = onnxrun__convt_w_f64_values(c, &wd, &own);
		w = wd;
		wown = own;
	} else {
		return ONNXRUN_ERROR_UNSUPPORTED; /* not reached: infer refused the dtype */
	}
	if (st)
		return st;
	fill_bias(c->g, c->dtype, c->b, c->y);
	st = convt_scatter(c->ctx, c->g,
	                   &(struct convt_arrays){ f32 || ONNXRUN__F32_ONLY ? row_f32 : row_f64, c->x, w, c->y });
	onnxrun__free(c->ctx->env, wown);
	return st;
}

const struct convt_impl onnxrun__convt_scatter = { "scatter", ONNXRUN_DTYPE_UNDEFINED, scatter_accepts, CONVT_LAYOUT_NONE,
	                                           scatter_run, NULL };
