/*
 * col2im.c - the float32 GEMM + overlap-add entry, for few output channels per group (rank 1 or 2):
 * Z = W^T x as one GEMM per chunk (rows: output channel x kernel tap, reduction over the
 * group's input channels, columns: input positions), then overlap-add of Z into y.
 *
 * Work items are chunks of output rows along the first spatial axis; each computes Z for
 * every input row that reaches its outputs (a few rows are computed by two chunks) and
 * writes only its own outputs, adding taps in one fixed order. So results do not depend on
 * the thread count, nor on where the chunks end (rank 1 on several threads places them so
 * that the pool's static split gives each thread the same work: plan_chunks_1d).
 */
#include <string.h>

#include "impl.h"

/* The problem seen as 2-D: axis 0 is chunked, axis 1 is whole (size 1 for rank 1). */
struct col_job {
	const struct onnxrun__convt_packed *pk;
	const float *x, *bias;
	float *y;
	int64_t cin, mout, cg, mg, rows; /* rows = mg * kprod */
	int64_t in[2], out[2], k[2], s[2], d[2], pb[2];
	const int64_t *t1_start, *t1_k; /* axis-1 taps by residue (see onnxrun__convt_taps) */
	int64_t chunk, nchunk, ldz_max, ca; /* ca: the chunked axis (0 for rank 2, 1 for rank 1) */
	int64_t shift; /* chunk c's outputs start at c * chunk - shift (clamped at 0) */
	int64_t *obound; /* or, when not NULL, chunk c's outputs are [obound[c], obound[c + 1]) */
	onnxrun__col2im_gather_fn gather; /* the ISA's last-axis overlap-add of Z rows into y */
	struct onnxrun__kgather kg;       /* axis 1 as the gather sees it */
	char *scratch;
	size_t scratch_stride;
};

/* Z[R, p] for input positions [pos0, pos0 + npos) (flattened spatial) of (b, grp): GEMM
 * over the group's channels, Z rows ldz apart. Panel by panel: its B rows (one per channel)
 * are copied into bp, where they stay in L1 while every weight panel runs over them (the
 * weights, rows x channels floats, are then read once per B panel: from L1 where they fit,
 * as for fsrcnn's 81 x 56, else from L2). */
static void col_gemm(const struct col_job *j, int64_t b, int64_t grp, int64_t pos0, int64_t npos, float *z,
                     int64_t ldz, float *bp)
{
	const struct onnxrun__gemm_kernels *kn = j->pk->kern;
	const int64_t nr0 = kn->nr[0], mr_max = kn->mr_max, plane = j->in[0] * j->in[1];
	const float *xg = j->x + (b * j->cin + grp * j->cg) * plane + pos0;
	const float *ag = j->pk->a + grp * j->pk->a_group;
	for (int64_t p0 = 0; p0 < npos; p0 += nr0) {
		const int64_t cnt = npos - p0 < nr0 ? npos - p0 : nr0;
		const int v = cnt <= kn->nr[1] ? 1 : 0;
		const int64_t nr = kn->nr[v];
		for (int64_t c = 0; c < j->cg; c++) {
			const float *src = xg + c * plane + p0;
			float *d = bp + c * nr;
			__builtin_prefetch(src + nr0 + 16);
			/* a whole panel row is a constant-size copy the compiler inlines, not a
			 * library call per 128 bytes */
			if (cnt == 32)
				memcpy(d, src, 32 * sizeof *d);
			else if (cnt == 16)
				memcpy(d, src, 16 * sizeof *d);
			else
				memcpy(d, src, (size_t)cnt * sizeof *d);
			for (int64_t e = cnt; e < nr; e++)
				d[e] = 0.0f;
		}
		for (int64_t r0 = 0; r0 < j->rows; r0 += mr_max) {
			const int64_t mr = j->rows - r0 < mr_max ? j->rows - r0 : mr_max;
			kn->fn[v][mr - 1](j->cg, ag + r0 * j->cg, bp, z + r0 * ldz + p0, ldz);
		}
	}
}

/* Output rows [oa, ob) of (b, grp) from Z (input rows [ia, ib)). Rank 2: each output row o0
 * gathers its axis-0 taps' Z rows; rank 1 (axis 0 of size 1): one row, outputs [o1a, o1b). */
static void col_add(const struct col_job *j, int64_t b, int64_t grp, int64_t oa, int64_t ob, int64_t ia,
                    int64_t ib, const float *z, int64_t ldz, float *tmp, const float **zrows)
{
	const int64_t kprod = j->k[0] * j->k[1], out1 = j->out[1];
	/* rank 1, not a rank-2 problem whose first axis happens to be all ones: that one is
	 * chunked along axis 0 and its Z columns cover whole rows */
	const bool one_d = j->ca == 1;
	for (int64_t m = 0; m < j->mg; m++) {
		const int64_t ch = grp * j->mg + m;
		float *ym = j->y + (b * j->mout + ch) * j->out[0] * out1;
		const float bv = j->bias ? j->bias[ch] : 0.0f;
		if (one_d) {
			/* Z columns are input positions [ia, ib) of the only row */
			zrows[0] = z + m * kprod * ldz;
			j->gather(&j->kg, zrows, 1, ym, oa, ob, bv, tmp, ia, ib);
			continue;
		}
		for (int64_t o0 = oa; o0 < ob; o0++) {
			int64_t nk0 = 0;
			for (int64_t k0 = 0; k0 < j->k[0]; k0++) {
				const int64_t f0 = o0 + j->pb[0] - k0 * j->d[0];
				if (f0 < 0 || f0 % j->s[0] || f0 / j->s[0] >= j->in[0])
					continue;
				/* f0 / s0 lies in [ia, ib) by the chunk's construction */
				zrows[nk0++] = z + (m * kprod + k0 * j->k[1]) * ldz + (f0 / j->s[0] - ia) * j->in[1];
			}
			j->gather(&j->kg, zrows, nk0, ym + o0 * out1, 0, out1, bv, tmp, 0, j->in[1]);
		}
	}
}

/* Items in order. Consecutive chunks of one (b, grp) share a few input rows (the kernel's
 * reach): their Z columns are kept (shifted to the front) rather than computed again. A Z
 * value is the same dot product whichever item computes it, so results stay independent
 * of the thread count. */
static void col_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct col_job *j = arg;
	const int64_t ca = j->ca, unit = ca == 0 ? j->in[1] : 1, ldz = j->ldz_max;
	char *sc = j->scratch + (size_t)tid * j->scratch_stride;
	/* the (b, grp) and input rows of the last item this thread ran, whose Z rows are still in
	 * its scratch: kept there, not in locals, so that items run by later calls on this thread
	 * reuse them too */
	int64_t *last = (int64_t *)sc, pbg = last[0], pia = last[1], pib = last[2];
	/* Z, the B panel area (col_gemm uses one panel of it), the overlap-add's scratch */
	float *z = (float *)(sc + 64), *bp = z + j->rows * j->ldz_max, *tmp = bp + j->cg * j->ldz_max;
	const float **zrows = (const float **)(tmp + (j->out[1] / j->s[1] + 2 + 15) / 16 * 16);
	for (int64_t it = begin; it < end; it++) {
		const int64_t chunk = it % j->nchunk, bg = it / j->nchunk;
		const int64_t b = bg / j->pk->group, grp = bg % j->pk->group;
		const int64_t c0 = j->obound ? j->obound[chunk] : chunk * j->chunk - j->shift;
		const int64_t c1 = j->obound ? j->obound[chunk + 1] : c0 + j->chunk;
		const int64_t oa = c0 > 0 ? c0 : 0, ob = c1 < j->out[ca] ? c1 : j->out[ca];
		if (oa >= ob) /* a planned empty chunk (plan_chunks_1d): Z stays for the next */
			continue;
		int64_t ia = convt_ceil_div(oa + j->pb[ca] - (j->k[ca] - 1) * j->d[ca], j->s[ca]);
		int64_t ib = convt_floor_div(ob - 1 + j->pb[ca], j->s[ca]) + 1;
		ia = ia < 0 ? 0 : ia;
		ib = ib > j->in[ca] ? j->in[ca] : ib;
		ib = ib < ia ? ia : ib;
		int64_t from = ia; /* input rows [ia, from) are already in Z */
		if (bg == pbg && ia >= pia && ia < pib && ib >= pib) {
			const int64_t sh = (ia - pia) * unit, keep = (pib - ia) * unit;
			if (sh > 0)
				for (int64_t row = 0; row < j->rows; row++)
					memmove(z + row * ldz, z + row * ldz + sh, (size_t)keep * sizeof *z);
			from = pib;
		}
		col_gemm(j, b, grp, from * unit, (ib - from) * unit, z + (from - ia) * unit, ldz, bp);
		col_add(j, b, grp, oa, ob, ia, ib, z, ldz, tmp, zrows);
		pbg = last[0] = bg;
		pia = last[1] = ia;
		pib = last[2] = ib;
	}
}

/* ---- rank 1 on several threads: chunks that split evenly ---------------------------------- */

/* Axis-1 outputs from input position e on (chunk boundaries at input positions: outputs
 * before e * s - pb read only positions before e); 0 at e = 0, all of them at e = in. */
static int64_t out_at(const struct col_job *j, int64_t e)
{
	const int64_t o = e * j->s[1] - j->pb[1];
	return e == 0 ? 0 : e == j->in[1] ? j->out[1] : o < 0 ? 0 : o > j->out[1] ? j->out[1] : o;
}

/* GEMM columns of a chunk of input positions [e0, e1) computed afresh: its own and the ones
 * before it that its outputs read (kernel reach). */
static int64_t fresh_cols(const struct col_job *j, int64_t e0, int64_t e1)
{
	const int64_t oa = out_at(j, e0), ob = out_at(j, e1);
	int64_t ia = convt_ceil_div(oa + j->pb[1] - (j->k[1] - 1) * j->d[1], j->s[1]);
	int64_t ib = convt_floor_div(ob - 1 + j->pb[1], j->s[1]) + 1;
	ia = ia < 0 ? 0 : ia;
	ib = ib > j->in[1] ? j->in[1] : ib;
	return oa < ob && ib > ia ? ib - ia : 0;
}

/* Micro-kernel tiles of a GEMM over cols columns, a narrow tile (at most nr[1]) counting half. */
static int64_t tile_units(const struct onnxrun__gemm_kernels *kn, int64_t cols)
{
	const int64_t r = cols % kn->nr[0];
	return cols / kn->nr[0] * 2 + (r == 0 ? 0 : r <= kn->nr[1] ? 1 : 2);
}

/* Tiles of one thread running positions [e0, e1) in chunks of ichunk: the first chunk
 * computes its columns afresh, the next ones only their own (col_items keeps Z's overlap). */
static int64_t range_units(const struct col_job *j, int64_t ichunk, int64_t e0, int64_t e1)
{
	const struct onnxrun__gemm_kernels *kn = j->pk->kern;
	const int64_t f = e1 - e0 < ichunk ? e1 : e0 + ichunk, rest = e1 - f;
	return tile_units(kn, fresh_cols(j, e0, f)) + rest / ichunk * tile_units(kn, ichunk) +
	       tile_units(kn, rest % ichunk);
}

/* Whether `threads` consecutive ranges of positions, ending at multiples of 16 (or in), each
 * cost at most `most` tiles; their ends in E[1..threads] (E[0] = 0). Each range as long as
 * the bound allows (the cost only grows with the range's end). */
static bool ranges_fit(const struct col_job *j, int64_t ichunk, int threads, int64_t most, int64_t *E)
{
	const int64_t in = j->in[1];
	E[0] = 0;
	for (int t = 0; t < threads; t++) {
		int64_t e = E[t], best = e;
		for (int64_t f = e; f < in;) {
			f = (f / 16 + 1) * 16 < in ? (f / 16 + 1) * 16 : in;
			if (range_units(j, ichunk, e, f) > most)
				break;
			best = f;
		}
		E[t + 1] = best;
	}
	return E[threads] == in;
}

/* Rank 1, 2..8 threads: the pool gives thread t the items [n*t/T, n*(t+1)/T) (runtime/pool.h).
 * Uniform chunks leave the last thread the remainder tile and the recomputed overlap at the
 * start of its range on top of an equal share (istft on 2 threads: 7 chunks of 64 positions,
 * 13 against 12 tiles' worth, then the first thread takes the last chunk afresh). Here each
 * thread gets a range of positions of the least largest cost (ranges_fit, by bisection),
 * split into chunks of ichunk from its start, and as many items as the longest range has
 * chunks: the shorter ranges begin with empty chunks. Returns the items (chunks) per
 * (batch, group) and sets j->obound, or 0 when it does not apply or is out of memory (then
 * the uniform chunks run). */
static int64_t plan_chunks_1d(struct col_job *j, struct onnxrun_op_context *ctx, int threads, int64_t ichunk)
{
	const int64_t in = j->in[1];
	int64_t E[9], lo = 1, hi, m = 0, n, at = 0;
	if (threads < 2 || threads > 8 || in / 16 > 65536)
		return 0;
	hi = range_units(j, ichunk, 0, in);
	while (lo < hi) { /* the least bound that fits (hi always fits) */
		const int64_t mid = lo + (hi - lo) / 2;
		if (ranges_fit(j, ichunk, threads, mid, E))
			hi = mid;
		else
			lo = mid + 1;
	}
	ranges_fit(j, ichunk, threads, hi, E);
	for (int t = 0; t < threads; t++) {
		const int64_t c = (E[t + 1] - E[t] + ichunk - 1) / ichunk;
		m = c > m ? c : m;
	}
	n = (int64_t)threads * m;
	if (!(j->obound = onnxrun__malloc(ctx->env, (size_t)(n + 1) * sizeof *j->obound)))
		return 0;
	for (int t = 0; t < threads; t++) {
		const int64_t c = (E[t + 1] - E[t] + ichunk - 1) / ichunk;
		for (int64_t i = 0; i < m; i++) {
			const int64_t e = i < m - c ? E[t] : E[t] + (i - (m - c)) * ichunk;
			j->obound[at++] = out_at(j, e);
		}
	}
	j->obound[n] = j->out[1];
	return n;
}

static enum onnxrun_status col2im_compute(const struct convt_call *c, const struct onnxrun__convt_packed *pk)
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const float *x = c->x, *bias = c->b;
	float *y = c->y;
	const int64_t nr0 = pk->kern->nr[0];
	struct col_job j;
	const int threads = onnxrun__op_plan_threads(ctx);
	int64_t ichunk, span, ca;
	enum onnxrun_status st;
	size_t bytes;

	j = (struct col_job){ .pk = pk, .x = x, .bias = bias, .y = y, .cin = g->in_channels, .mout = g->out_channels,
	                      .cg = pk->cin / pk->group, .mg = pk->mg };
	/* rank 2: axes (0, 1); rank 1: a size-1 axis 0 and the real axis as axis 1 */
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
	j.ca = ca = g->n == 2 ? 0 : 1;
	j.t1_start = pk->taps.start[g->n - 1];
	j.t1_k = pk->taps.k_of[g->n - 1];
	j.rows = j.mg * j.k[0] * j.k[1];
	/* chunks of about 1536 input positions (rank 2: whole rows; rank 1: 96 positions), by
	 * shape only */
	ichunk = ca == 0 ? 1536 / j.in[1] : 96;
	/* at least about 4 (rank 2) or 8 (rank 1) chunks, for threads; rank 1 in multiples of
	 * 16 positions, which the 32- and 16-wide tiles cover exactly (a chunk of 50 would run
	 * as 64 columns anyway: a 32-wide tile and a remainder padded to 32) */
	if (ca == 0 && ichunk > (j.in[0] + 3) / 4)
		ichunk = (j.in[0] + 3) / 4;
	if (ca == 1 && ichunk > (j.in[1] + 7) / 8)
		ichunk = ((j.in[1] + 7) / 8 + 15) / 16 * 16;
	ichunk = ichunk < 1 ? 1 : ichunk;
	j.chunk = ichunk * j.s[ca];
	/* rank 1: chunk boundaries shifted back by the begin pad (modulo a chunk). The end of a
	 * chunk's input positions, floor((c1 - 1 + pb) / s) + 1 for its output end c1, is then a
	 * multiple of ichunk, so each chunk's GEMM computes whole 32-wide tiles (ichunk new
	 * positions) instead of the first computing 2 x 32 and a remainder tile of a few. Rank
	 * 2 chunks whole rows: a shift would only add a chunk of one output row at the end. */
	j.shift = ca == 1 ? j.pb[ca] % j.chunk : 0;
	j.nchunk = (j.out[ca] + j.shift + j.chunk - 1) / j.chunk;
	if (ca == 1) {
		const int64_t planned = plan_chunks_1d(&j, ctx, threads, ichunk);
		j.nchunk = planned ? planned : j.nchunk;
	}
	span = (j.chunk - 1 + (j.k[ca] - 1) * j.d[ca]) / j.s[ca] + 2;
	span = span > j.in[ca] ? j.in[ca] : span;
	/* + nr0: a chunk's GEMM may start mid-row (after the kept columns) and write whole tiles */
	j.ldz_max = ((ca == 0 ? span * j.in[1] : span) + nr0 - 1) / nr0 * nr0 + nr0;
	j.gather = pk->kt->col2im_gather;
	j.kg = (struct onnxrun__kgather){ j.s[1], j.d[1], j.pb[1], j.ldz_max, j.t1_start, j.t1_k };
	/* The B panel area stays a chunk wide although col_gemm fills one panel at a time: sized
	 * for one panel, dcgan_64_3 ran 1.15x slower at 2 threads (bench/README.md; not
	 * explained, so kept as measured). */
	bytes = (size_t)(j.rows * j.ldz_max + j.cg * j.ldz_max + (j.out[1] / j.s[1] + 2 + 15) / 16 * 16) * sizeof(float) +
	        (size_t)j.k[0] * sizeof(float *) + 64 + 64; /* + the last item's rows (col_items) */
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, bytes, &j.scratch_stride))) {
		onnxrun__free(ctx->env, j.obound);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	for (int t = 0; t < threads; t++) /* no item run yet: nothing to reuse */
		*(int64_t *)(j.scratch + (size_t)t * j.scratch_stride) = -1;
	st = onnxrun__op_parallel(ctx, threads, g->batch * pk->group * j.nchunk, col_items, &j);
	onnxrun__free(ctx->env, j.scratch);
	onnxrun__free(ctx->env, j.obound);
	return st;
}

/* ---- the entry ---------------------------------------------------------------------------- */

/* Few output channels per group (GEMM rows mg x taps still fill a micro-kernel), enough
 * input channels to make the GEMM worth it, and at most COL2IM_MAX_TAPS taps per output:
 * the overlap-add computes every tap for every input position of a chunk. */
#define COL2IM_MAX_MG 4
#define COL2IM_MIN_CG 4
#define COL2IM_MAX_TAPS 64

static const char *col2im_accepts(const struct convt_query *q)
{
	const struct onnxrun__convt_geom *g = q->g;
	const int64_t cg = g->in_channels / g->group, mg = g->out_channels / g->group;
	if (g->n < 1 || g->n > 2)
		return "not 1-D or 2-D";
	if (cg < COL2IM_MIN_CG || mg > COL2IM_MAX_MG)
		return "not few output channels from many input channels per group";
	if (!onnxrun__convt_taps_fit(g))
		return "more phases or kernel positions than the decomposition takes";
	const int64_t kprod = convt_product(g->kernel, g->n), nphase = convt_product(g->strides, g->n);
	if (mg * kprod < 8 || kprod > COL2IM_MAX_TAPS * nphase)
		return "too few GEMM rows or too many taps per output";
	return onnxrun__convt_positions_decline(g, false);
}

const struct convt_impl onnxrun__convt_col2im = { "float32 GEMM + overlap-add", ONNXRUN_DTYPE_FLOAT, col2im_accepts,
	                                          CONVT_LAYOUT_COL2IM, NULL, col2im_compute };
