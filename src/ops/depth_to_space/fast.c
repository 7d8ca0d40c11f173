/*
 * fast.c - DepthToSpace for 4-byte elements: each output row interleaves b input rows
 * (y[w*b + j] = src_j[w]), with the kernel table's row for b where the ISA has one (streaming
 * stores for large outputs where it has those), strided copies otherwise. Output rows are
 * split over the session's thread pool. A pure copy: results are bitwise identical whatever
 * the ISA or thread count.
 */
#include <stdint.h>
#include <string.h>

#include "fast.h"
#include "../../kernels/kernels.h"

/* Plain C: one strided pass per source row. */
static void row_generic(uint32_t *dst, const uint32_t *const *src, int64_t width, int64_t b)
{
	for (int64_t j = 0; j < b; j++) {
		const uint32_t *s = src[j];
		uint32_t *d = dst + j;
		for (int64_t w = 0; w < width; w++)
			d[w * b] = s[w];
	}
}

static size_t stream_min = (size_t)8 << 20;

void onnxrun__d2s_set_stream_min(size_t bytes)
{
	stream_min = bytes;
}

size_t onnxrun__d2s_stream_min(void)
{
	return stream_min;
}

struct d2s_job {
	const uint32_t *x;
	uint32_t *y;
	int64_t c, cout, h, w, b, rows_per_item, rows;
	bool crd;
	/* the kernel table's row for b (NULL: row_generic) and, for outputs of at least
	 * stream_min bytes, its streaming row (for 64-byte-aligned rows) and fence */
	onnxrun__d2s_row_fn row, row_stream;
	void (*fence)(void);
};

/* Output rows [r0, r1): row = ((n*C' + c')*H + h)*b + i. */
static void d2s_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct d2s_job *j = arg;
	const uint32_t *src[64];
	(void)tid;
	for (int64_t row = begin * j->rows_per_item; row < end * j->rows_per_item && row < j->rows; row++) {
		const int64_t i = row % j->b, h = row / j->b % j->h, c = row / j->b / j->h % j->cout;
		const int64_t n = row / j->b / j->h / j->cout;
		uint32_t *dst = j->y + row * j->w * j->b;
		for (int64_t jj = 0; jj < j->b; jj++) {
			/* DCR: ch = (i*b + j)*C' + c'; CRD: ch = c'*b*b + i*b + j */
			int64_t ch = j->crd ? (c * j->b + i) * j->b + jj : (i * j->b + jj) * j->cout + c;
			src[jj] = j->x + ((n * j->c + ch) * j->h + h) * j->w;
		}
		if (j->row_stream && ((uintptr_t)dst & 63) == 0)
			j->row_stream(dst, src, j->w);
		else if (j->row)
			j->row(dst, src, j->w);
		else
			row_generic(dst, src, j->w, j->b);
	}
	if (j->row_stream)
		j->fence(); /* streaming stores visible before the pool reports the item done */
}

enum onnxrun_status onnxrun__d2s_fast(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *x,
                                      struct onnxrun_tensor *y, int64_t b, bool crd, bool *done)
{
	const struct onnxrun__d2s_kernels *dk = &onnxrun__kernels_current()->d2s;
	struct d2s_job j;
	int threads = onnxrun__op_plan_threads(ctx);
	int64_t items;
	*done = false;
	if (onnxrun_dtype_size(x->dtype) != 4 || x->dtype == ONNXRUN_DTYPE_STRING || b > 64 || b < 1)
		return ONNXRUN_OK;
	j.x = x->data;
	j.y = y->data;
	j.c = x->dims[1];
	j.cout = x->dims[1] / (b * b);
	j.h = x->dims[2];
	j.w = x->dims[3];
	j.b = b;
	j.crd = crd;
	j.row = b == 2 ? dk->row2 : b == 4 ? dk->row4 : NULL;
	j.row_stream = b == 2 ? dk->row2_stream : b == 4 ? dk->row4_stream : NULL;
	if (y->nbytes < stream_min)
		j.row_stream = NULL;
	j.fence = dk->stream_fence;
	j.rows = x->dims[0] * j.cout * j.h * b;
	/* items of about 16 KiB of output each */
	j.rows_per_item = 4096 / (j.w * b) + 1;
	items = (j.rows + j.rows_per_item - 1) / j.rows_per_item;
	/* small tensors: one thread (waking workers costs more than the copy) */
	if (y->nbytes < (size_t)256 * 1024)
		threads = 1;
	*done = true;
	return onnxrun__op_parallel(ctx, threads, items, d2s_items, &j);
}
