/*
 * conv_transpose_col2im.c - ConvTranspose with few output channels per group (rank 1 or 2):
 * Z = W^T x as one GEMM per chunk (rows: output channel x kernel tap, reduction over the
 * group's input channels, columns: input positions), then overlap-add of Z into y.
 *
 * Work items are fixed chunks of output rows along the first spatial axis; each computes Z
 * for every input row that reaches its outputs (a few rows are computed by two chunks) and
 * writes only its own outputs, adding taps in one fixed order. So results do not depend on
 * the thread count.
 */
#include <string.h>

#include "conv_transpose_fast.h"
#include "../runtime/pool.h"

/* The problem seen as 2-D: axis 0 is chunked, axis 1 is whole (size 1 for rank 1). */
struct col_job {
	const struct onnxrun__convt_packed *pk;
	const float *x, *bias;
	float *y;
	int64_t batch, cin, mout, cg, mg, rows; /* rows = mg * kprod */
	int64_t in[2], out[2], k[2], s[2], d[2], pb[2];
	int64_t chunk, nchunk, ldz_max;
	char *scratch;
	size_t scratch_stride;
};

/* Z[R, p] for input rows [ia, ib) of (b, grp): GEMM over the group's channels. */
static void col_gemm(const struct col_job *j, int64_t b, int64_t grp, int64_t ia, int64_t ib, float *z,
                     int64_t ldz, float *bp)
{
	const struct onnxrun__gemm_kernels *kn = j->pk->kern;
	const int64_t nr0 = kn->nr[0], mr_max = kn->mr_max, npos = (ib - ia) * j->in[1];
	const float *xg = j->x + ((b * j->cin + grp * j->cg) * j->in[0] + ia) * j->in[1];
	const float *ag = j->pk->a + grp * j->pk->taps.a_group;
	const int64_t plane = j->in[0] * j->in[1];
	for (int64_t p0 = 0; p0 < npos; p0 += nr0) {
		const int64_t cnt = npos - p0 < nr0 ? npos - p0 : nr0;
		const int v = cnt <= kn->nr[1] ? 1 : 0;
		const int64_t nr = kn->nr[v];
		for (int64_t c = 0; c < j->cg; c++) {
			float *d = bp + c * nr;
			memcpy(d, xg + c * plane + p0, (size_t)cnt * sizeof *d);
			for (int64_t e = cnt; e < nr; e++)
				d[e] = 0.0f;
		}
		for (int64_t r0 = 0; r0 < j->rows; r0 += mr_max) {
			const int64_t mr = j->rows - r0 < mr_max ? j->rows - r0 : mr_max;
			kn->fn[v][mr - 1](j->cg, ag + r0 * j->cg, bp, z + r0 * ldz + p0, ldz);
		}
	}
}

/* y rows [oa, ob) of (b, grp): bias, then every tap's contribution in (m, k0, k1) order. */
static void col_add(const struct col_job *j, int64_t b, int64_t grp, int64_t oa, int64_t ob, int64_t ia,
                    int64_t ib, const float *z, int64_t ldz)
{
	const int64_t kprod = j->k[0] * j->k[1], out1 = j->out[1];
	for (int64_t m = 0; m < j->mg; m++) {
		const int64_t ch = grp * j->mg + m;
		float *ym = j->y + (b * j->mout + ch) * j->out[0] * out1;
		const float bv = j->bias ? j->bias[ch] : 0.0f;
		for (int64_t e = oa * out1; e < ob * out1; e++)
			ym[e] = bv;
		for (int64_t k0 = 0; k0 < j->k[0]; k0++)
			for (int64_t k1 = 0; k1 < j->k[1]; k1++) {
				const int64_t off1 = k1 * j->d[1] - j->pb[1];
				int64_t lo = convt_ceil_div(-off1, j->s[1]);
				int64_t hi = convt_floor_div(out1 - 1 - off1, j->s[1]) + 1;
				const float *zr = z + (m * kprod + k0 * j->k[1] + k1) * ldz;
				lo = lo < 0 ? 0 : lo;
				hi = hi > j->in[1] ? j->in[1] : hi;
				for (int64_t i0 = ia; i0 < ib; i0++) {
					const int64_t o0 = i0 * j->s[0] + k0 * j->d[0] - j->pb[0];
					const float *zi = zr + (i0 - ia) * j->in[1];
					float *yr;
					if (o0 < oa || o0 >= ob)
						continue;
					yr = ym + o0 * out1 + off1;
					for (int64_t i1 = lo; i1 < hi; i1++)
						yr[i1 * j->s[1]] += zi[i1];
				}
			}
	}
}

static void col_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct col_job *j = arg;
	char *sc = j->scratch + (size_t)tid * j->scratch_stride;
	float *z = (float *)sc, *bp = z + j->rows * j->ldz_max;
	for (int64_t it = begin; it < end; it++) {
		const int64_t chunk = it % j->nchunk, bg = it / j->nchunk;
		const int64_t b = bg / j->pk->group, grp = bg % j->pk->group;
		const int64_t oa = chunk * j->chunk, ob = oa + j->chunk < j->out[0] ? oa + j->chunk : j->out[0];
		int64_t ia = convt_ceil_div(oa + j->pb[0] - (j->k[0] - 1) * j->d[0], j->s[0]);
		int64_t ib = convt_floor_div(ob - 1 + j->pb[0], j->s[0]) + 1;
		int64_t ldz, nr0 = j->pk->kern->nr[0];
		ia = ia < 0 ? 0 : ia;
		ib = ib > j->in[0] ? j->in[0] : ib;
		ib = ib < ia ? ia : ib;
		ldz = ((ib - ia) * j->in[1] + nr0 - 1) / nr0 * nr0;
		col_gemm(j, b, grp, ia, ib, z, ldz, bp);
		col_add(j, b, grp, oa, ob, ia, ib, z, ldz);
	}
}

enum onnxrun_status onnxrun__convt_run_col2im(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                                              const struct onnxrun__convt_packed *pk, const float *x,
                                              const float *bias, float *y)
{
	const int64_t nr0 = pk->kern->nr[0];
	struct col_job j;
	int threads = ctx->threads < 1 ? 1 : ctx->threads;
	int64_t irows, span;
	size_t bytes;

	if (threads > onnxrun__pool_threads(onnxrun__pool_current()))
		threads = onnxrun__pool_threads(onnxrun__pool_current());
	memset(&j, 0, sizeof j);
	j.pk = pk;
	j.x = x;
	j.bias = bias;
	j.y = y;
	j.batch = g->batch;
	j.cin = g->in_channels;
	j.mout = g->out_channels;
	j.cg = pk->cin / pk->group;
	j.mg = pk->mg;
	for (int a = 0; a < 2; a++) {
		const int src = g->n == 2 ? a : 0;
		const bool real = g->n == 2 || a == 0;
		j.in[a] = real ? g->in[src] : 1;
		j.out[a] = real ? g->out[src] : 1;
		j.k[a] = real ? g->kernel[src] : 1;
		j.s[a] = real ? g->strides[src] : 1;
		j.d[a] = real ? g->dilations[src] : 1;
		j.pb[a] = real ? g->pad_begin[src] : 0;
	}
	j.rows = j.mg * j.k[0] * j.k[1];
	/* about 1024 input positions per chunk; chunk sizes depend on the shape only */
	irows = 1024 / j.in[1];
	irows = irows < 1 ? 1 : irows;
	j.chunk = irows * j.s[0];
	j.nchunk = (j.out[0] + j.chunk - 1) / j.chunk;
	span = (j.chunk - 1 + (j.k[0] - 1) * j.d[0]) / j.s[0] + 2;
	span = span > j.in[0] ? j.in[0] : span;
	j.ldz_max = (span * j.in[1] + nr0 - 1) / nr0 * nr0;
	bytes = (size_t)(j.rows * j.ldz_max + j.cg * nr0) * sizeof(float);
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, bytes, &j.scratch_stride)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	onnxrun__pool_run(onnxrun__pool_current(), threads, j.batch * pk->group * j.nchunk, col_items, &j);
	onnxrun__free(ctx->env, j.scratch);
	return ONNXRUN_OK;
}
