/*
 * conv_transpose_dw.c - depthwise ConvTranspose (one input and one output channel per
 * group, rank 1 or 2). Per output row and per phase r1 of the last axis, the row's taps
 * (k0 of the row's phase, k1 of phase r1, each ascending) are listed once from per-residue
 * tables; then y[o1] = bias + sum over taps of w * x[q - delta] for o1 = q*s1 + r1 - pb1,
 * vectorized along q (AVX-512: 16 positions in a register, then permuted masked stores into
 * the strided outputs; otherwise a contiguous temp row). Each output row belongs to one
 * work item and taps are summed in the same order, so results do not depend on the thread
 * count.
 */
#include <string.h>

#include "impl.h"
#include "../../runtime/pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define DW_MAX_TAPS 64

/* One axis: sizes, and its taps by residue r: k[start[r] .. start[r + 1]) ascending, with
 * delta = (k*d - r)/s (input index = q - delta). */
struct dw_axis {
	int64_t in, out, k, s, d, pb;
	int64_t *start, *kk, *dl;
	int64_t *qlo, *qhi; /* per residue: grid range whose outputs lie in [0, out) */
};

struct dw_job {
	const float *x, *w, *bias;
	float *y;
	int64_t chans;
	struct dw_axis ax[2];
	enum onnxrun__isa isa;
	char *scratch;
	size_t scratch_stride;
};

/* One output row's taps for phase r1: x row pointers already shifted by -delta. */
struct dw_taps {
	int64_t n, qa, qb; /* qa..qb: positions where every tap is inside its row */
	const float *x[DW_MAX_TAPS];
	float w[DW_MAX_TAPS];
	int64_t dl[DW_MAX_TAPS];
};

/* What one output row needs for every phase: its axis-0 taps' x rows and kernel rows. */
struct dw_row {
	int64_t n0;
	const float *xr[DW_MAX_TAPS];
	const float *wr[DW_MAX_TAPS];
	float bv;
	float *yr;
};

/* row_setup and row_taps are inlined into each ISA's rows function: called out of the
 * AVX-512 one as plain SSE code, they ran with the vector registers' upper halves dirty
 * and made the whole kernel about 3x slower on Intel CPUs. */
static inline __attribute__((always_inline)) void row_setup(const struct dw_job *j, int64_t row, struct dw_row *rw)
{
	const struct dw_axis *a0 = &j->ax[0], *a1 = &j->ax[1];
	const int64_t o0 = row % a0->out, bc = row / a0->out, ch = bc % j->chans;
	const int64_t f0 = o0 + a0->pb, r0 = ((f0 % a0->s) + a0->s) % a0->s, q0 = (f0 - r0) / a0->s;
	const float *xc = j->x + bc * a0->in * a1->in, *wc = j->w + ch * a0->k * a1->k;
	rw->n0 = 0;
	for (int64_t i = a0->start[r0]; i < a0->start[r0 + 1]; i++) {
		const int64_t i0 = q0 - a0->dl[i];
		if (i0 < 0 || i0 >= a0->in)
			continue;
		rw->xr[rw->n0] = xc + i0 * a1->in;
		rw->wr[rw->n0++] = wc + a0->kk[i] * a1->k;
	}
	rw->bv = j->bias ? j->bias[ch] : 0.0f;
	rw->yr = j->y + row * a1->out;
}

/* The row's taps for last-axis phase r1 (k0 then k1 ascending). */
static inline __attribute__((always_inline)) void row_taps(const struct dw_job *j, const struct dw_row *rw, int64_t r1,
                                                          struct dw_taps *t)
{
	const struct dw_axis *a1 = &j->ax[1];
	t->n = 0;
	t->qa = a1->qlo[r1];
	t->qb = a1->qhi[r1];
	for (int64_t i = 0; i < rw->n0; i++)
		for (int64_t e = a1->start[r1]; e < a1->start[r1 + 1] && t->n < DW_MAX_TAPS; e++) {
			const int64_t dl = a1->dl[e];
			t->dl[t->n] = dl;
			t->x[t->n] = rw->xr[i] - dl;
			t->w[t->n] = rw->wr[i][a1->kk[e]];
			t->qa = t->qa > dl ? t->qa : dl;
			t->qb = t->qb < a1->in - 1 + dl ? t->qb : a1->in - 1 + dl;
			t->n++;
		}
}

/* Scalar output at grid position q: bias + taps inside the row. */
static inline float edge_value(const struct dw_taps *t, int64_t q, int64_t in1, float bv)
{
	float acc = 0.0f;
	for (int64_t i = 0; i < t->n; i++)
		if (q - t->dl[i] >= 0 && q - t->dl[i] < in1)
			acc += t->w[i] * t->x[i][q];
	return bv + acc;
}

/* Generic rows (plain C or AVX2 codegen): interior through a temp row. */
static inline __attribute__((always_inline)) void rows_generic(const struct dw_job *j, int64_t begin, int64_t end,
                                                              float *tmp)
{
	const struct dw_axis *a1 = &j->ax[1];
	struct dw_taps t;
	struct dw_row rw;
	for (int64_t row = begin; row < end; row++)
		for (int64_t r1 = 0; r1 < a1->s; r1++) {
			if (r1 == 0)
				row_setup(j, row, &rw);
			row_taps(j, &rw, r1, &t);
			float *yr = rw.yr;
			const float bv = rw.bv;
			const int64_t qlo = a1->qlo[r1], qhi = a1->qhi[r1];
			float *yo = yr + qlo * a1->s + r1 - a1->pb;
			for (int64_t q = qlo; q <= qhi; q++) {
				if (q < t.qa || q > t.qb) {
					yo[(q - qlo) * a1->s] = edge_value(&t, q, a1->in, bv);
					continue;
				}
				const int64_t qe = t.qb < qhi ? t.qb : qhi;
				for (int64_t e = q; e <= qe; e++)
					tmp[e - q] = 0.0f;
				for (int64_t i = 0; i < t.n; i++)
					for (int64_t e = q; e <= qe; e++)
						tmp[e - q] += t.w[i] * t.x[i][e];
				for (int64_t e = q; e <= qe; e++)
					yo[(e - qlo) * a1->s] = bv + tmp[e - q];
				q = qe;
			}
		}
}

static void rows_scalar(const struct dw_job *j, int64_t b, int64_t e, float *tmp)
{
	rows_generic(j, b, e, tmp);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static void rows_avx2(const struct dw_job *j, int64_t b, int64_t e, float *tmp)
{
	rows_generic(j, b, e, tmp);
}

/* AVX-512 rows: 16 grid positions per register over all taps, then s1 permuted masked
 * stores (strides 1, 2, 4; other strides use the generic rows). */
__attribute__((target("avx512f,fma"))) static void rows_avx512(const struct dw_job *j, int64_t begin, int64_t end,
                                                              float *tmp)
{
	const struct dw_axis *a1 = &j->ax[1];
	const int64_t s1 = a1->s;
	const __mmask16 lanes = s1 == 1 ? 0xFFFF : s1 == 2 ? 0x5555 : 0x1111;
	__m512i spread[4];
	struct dw_taps t;
	struct dw_row rw;
	if (s1 != 1 && s1 != 2 && s1 != 4) {
		rows_generic(j, begin, end, tmp);
		return;
	}
	for (int h = 0; h < 4; h++) /* output window h (16 floats) takes values h*16/s1 ... */
		spread[h] = _mm512_add_epi32(_mm512_set1_epi32(h * (int)(16 / s1)),
		                             s1 == 1 ? _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) :
		                             s1 == 2 ? _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7) :
		                                       _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
	for (int64_t row = begin; row < end; row++)
		for (int64_t r1 = 0; r1 < s1; r1++) {
			if (r1 == 0)
				row_setup(j, row, &rw);
			row_taps(j, &rw, r1, &t);
			float *yr = rw.yr;
			const float bv = rw.bv;
			const int64_t qlo = a1->qlo[r1], qhi = a1->qhi[r1];
			float *yo = yr + qlo * s1 + r1 - a1->pb;
			const __m512 b = _mm512_set1_ps(bv);
			int64_t q = qlo;
			while (q <= qhi) {
				if (q >= t.qa && q + 15 <= t.qb && q + 15 <= qhi) {
					__m512 acc = _mm512_setzero_ps();
					for (int64_t i = 0; i < t.n; i++)
						acc = _mm512_fmadd_ps(_mm512_set1_ps(t.w[i]), _mm512_loadu_ps(t.x[i] + q), acc);
					acc = _mm512_add_ps(b, acc);
					for (int64_t h = 0; h < s1; h++)
						_mm512_mask_storeu_ps(yo + (q - qlo) * s1 + 16 * h, lanes,
						                      _mm512_permutexvar_ps(spread[h], acc));
					q += 16;
					continue;
				}
				if (q >= t.qa && q <= t.qb) { /* fewer than 16 inside: masked block */
					const int64_t nv = (t.qb < qhi ? t.qb : qhi) - q + 1;
					const __mmask16 lm = (__mmask16)((1u << nv) - 1);
					const __m512i nvv = _mm512_set1_epi32((int)nv);
					__m512 acc = _mm512_setzero_ps();
					for (int64_t i = 0; i < t.n; i++)
						acc = _mm512_fmadd_ps(_mm512_set1_ps(t.w[i]), _mm512_maskz_loadu_ps(lm, t.x[i] + q),
						                      acc);
					acc = _mm512_add_ps(b, acc);
					for (int64_t h = 0; h < s1; h++) {
						const __mmask16 m = lanes & _mm512_cmplt_epi32_mask(spread[h], nvv);
						if (m)
							_mm512_mask_storeu_ps(yo + (q - qlo) * s1 + 16 * h, m,
							                      _mm512_permutexvar_ps(spread[h], acc));
					}
					q += nv;
					continue;
				}
				yo[(q - qlo) * s1] = edge_value(&t, q, a1->in, bv);
				q++;
			}
		}
}
#endif

static void dw_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct dw_job *j = arg;
	float *tmp = (float *)(j->scratch + (size_t)tid * j->scratch_stride);
#if defined(__x86_64__)
	if (j->isa == ONNXRUN__ISA_AVX512)
		rows_avx512(j, begin, end, tmp);
	else if (j->isa == ONNXRUN__ISA_AVX2)
		rows_avx2(j, begin, end, tmp);
	else
#endif
		rows_scalar(j, begin, end, tmp);
}

/* Fills an axis's residue tables into buf (2*(s + 1) + 3*k words used). */
static void axis_tables(struct dw_axis *a, int64_t *buf)
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

enum onnxrun_status onnxrun__convt_run_dw(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                                          const float *x, const float *w, const float *bias, float *y)
{
	struct dw_job j;
	int64_t *tables, words = 0;
	int threads = ctx->threads < 1 ? 1 : ctx->threads;
	if (threads > onnxrun__pool_threads(onnxrun__pool_current()))
		threads = onnxrun__pool_threads(onnxrun__pool_current());
	memset(&j, 0, sizeof j);
	j.x = x;
	j.w = w;
	j.bias = bias;
	j.y = y;
	j.chans = g->out_channels;
	j.isa = onnxrun__isa_current();
	for (int a = 0; a < 2; a++) {
		const int src = g->n == 2 ? a : 0;
		const bool real = g->n == 2 || a == 1;
		struct dw_axis *ax = &j.ax[a];
		ax->in = real ? g->in[src] : 1;
		ax->out = real ? g->out[src] : 1;
		ax->k = real ? g->kernel[src] : 1;
		ax->s = real ? g->strides[src] : 1;
		ax->d = real ? g->dilations[src] : 1;
		ax->pb = real ? g->pad_begin[src] : 0;
		words += 3 * (ax->s + 1) + 2 * ax->k;
	}
	if (j.ax[0].k * j.ax[1].k > DW_MAX_TAPS)
		return ONNXRUN_ERROR_UNSUPPORTED; /* the scatter handles it */
	if (!(tables = onnxrun__malloc(ctx->env, (size_t)words * sizeof *tables)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	axis_tables(&j.ax[0], tables);
	axis_tables(&j.ax[1], tables + 3 * (j.ax[0].s + 1) + 2 * j.ax[0].k);
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, (size_t)(j.ax[1].in + 16) * sizeof(float),
	                                         &j.scratch_stride))) {
		onnxrun__free(ctx->env, tables);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	onnxrun__pool_run(onnxrun__pool_current(), threads, g->batch * j.chans * j.ax[0].out, dw_items, &j);
	onnxrun__free(ctx->env, j.scratch);
	onnxrun__free(ctx->env, tables);
	return ONNXRUN_OK;
}
