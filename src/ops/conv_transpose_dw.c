/*
 * conv_transpose_dw.c - depthwise ConvTranspose (one input and one output channel per
 * group, rank 1 or 2): per output row and per phase of the last axis, a contiguous
 * multiply-add over an input row for each tap of that phase (vectorized), then one strided
 * store into the output row with the bias. Taps are added in a fixed order (k0, then k1) and
 * each output row belongs to one work item, so results do not depend on the thread count.
 */
#include <string.h>

#include "conv_transpose_fast.h"
#include "../runtime/pool.h"

struct dw_job {
	const float *x, *w, *bias;
	float *y;
	int64_t chans;
	int64_t in[2], out[2], k[2], s[2], d[2], pb[2];
	enum onnxrun__isa isa;
	char *scratch;
	size_t scratch_stride;
};

/* acc[e] += wv * src[e] for e < n: the inner loop, compiled per ISA by its callers. */
static inline __attribute__((always_inline)) void axpy(float *restrict acc, const float *restrict src,
                                                      float wv, int64_t n)
{
	for (int64_t e = 0; e < n; e++)
		acc[e] += wv * src[e];
}

/* Output rows [begin, end) (row = (b*C + ch)*out0 + o0); tmp holds out1/s1 + 1 floats. */
static inline __attribute__((always_inline)) void dw_rows(const struct dw_job *j, int64_t begin, int64_t end,
                                                         float *tmp)
{
	const int64_t in1 = j->in[1], out1 = j->out[1], s1 = j->s[1], kk = j->k[0] * j->k[1];
	for (int64_t row = begin; row < end; row++) {
		const int64_t o0 = row % j->out[0], bc = row / j->out[0], ch = bc % j->chans;
		const float *xc = j->x + bc * j->in[0] * in1, *wc = j->w + ch * kk;
		const float bv = j->bias ? j->bias[ch] : 0.0f;
		float *yr = j->y + row * out1;
		for (int64_t r1 = 0; r1 < s1; r1++) {
			const int64_t qlo = convt_ceil_div(j->pb[1] - r1, s1);
			const int64_t qhi = convt_floor_div(out1 - 1 + j->pb[1] - r1, s1);
			if (qhi < qlo)
				continue;
			memset(tmp, 0, (size_t)(qhi - qlo + 1) * sizeof *tmp);
			for (int64_t k0 = 0; k0 < j->k[0]; k0++) {
				const int64_t f0 = o0 + j->pb[0] - k0 * j->d[0];
				if (f0 < 0 || f0 % j->s[0] || f0 / j->s[0] >= j->in[0])
					continue;
				const float *xr = xc + f0 / j->s[0] * in1;
				for (int64_t k1 = 0; k1 < j->k[1]; k1++) {
					int64_t dl, lo, hi;
					if ((k1 * j->d[1]) % s1 != r1)
						continue;
					dl = (k1 * j->d[1] - r1) / s1;
					lo = qlo > dl ? qlo : dl;
					hi = qhi < in1 - 1 + dl ? qhi : in1 - 1 + dl;
					if (lo <= hi)
						axpy(tmp + (lo - qlo), xr + (lo - dl), wc[k0 * j->k[1] + k1], hi - lo + 1);
				}
			}
			float *yo = yr + qlo * s1 + r1 - j->pb[1];
			for (int64_t q = 0; q <= qhi - qlo; q++)
				yo[q * s1] = bv + tmp[q];
		}
	}
}

static void dw_scalar(const struct dw_job *j, int64_t b, int64_t e, float *tmp)
{
	dw_rows(j, b, e, tmp);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static void dw_avx2(const struct dw_job *j, int64_t b, int64_t e, float *tmp)
{
	dw_rows(j, b, e, tmp);
}

__attribute__((target("avx512f,fma"))) static void dw_avx512(const struct dw_job *j, int64_t b, int64_t e,
                                                           float *tmp)
{
	dw_rows(j, b, e, tmp);
}
#endif

static void dw_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct dw_job *j = arg;
	float *tmp = (float *)(j->scratch + (size_t)tid * j->scratch_stride);
#if defined(__x86_64__)
	if (j->isa == ONNXRUN__ISA_AVX512)
		dw_avx512(j, begin, end, tmp);
	else if (j->isa == ONNXRUN__ISA_AVX2)
		dw_avx2(j, begin, end, tmp);
	else
#endif
		dw_scalar(j, begin, end, tmp);
}

enum onnxrun_status onnxrun__convt_run_dw(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                                          const float *x, const float *w, const float *bias, float *y)
{
	struct dw_job j;
	int threads = ctx->threads < 1 ? 1 : ctx->threads;
	if (threads > onnxrun__pool_threads(onnxrun__pool_current()))
		threads = onnxrun__pool_threads(onnxrun__pool_current());
	memset(&j, 0, sizeof j);
	j.x = x;
	j.w = w;
	j.bias = bias;
	j.y = y;
	j.chans = g->out_channels;
	j.isa = onnxrun__gemm_isa();
	for (int a = 0; a < 2; a++) {
		const int src = g->n == 2 ? a : 0;
		const bool real = g->n == 2 || a == 1;
		j.in[a] = real ? g->in[src] : 1;
		j.out[a] = real ? g->out[src] : 1;
		j.k[a] = real ? g->kernel[src] : 1;
		j.s[a] = real ? g->strides[src] : 1;
		j.d[a] = real ? g->dilations[src] : 1;
		j.pb[a] = real ? g->pad_begin[src] : 0;
	}
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, (size_t)(j.out[1] / j.s[1] + 2) * sizeof(float),
	                                         &j.scratch_stride)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	onnxrun__pool_run(onnxrun__pool_current(), threads, g->batch * j.chans * j.out[0], dw_items, &j);
	onnxrun__free(ctx->env, j.scratch);
	return ONNXRUN_OK;
}
