/*
 * f64.c - float64 ConvTranspose on the phase decomposition (taps.h): output position
 * o = q*s + r - pad_begin per axis, phase r reading x[q - delta] for its taps.
 *
 * One work item is (batch, group, phase, a block of grid rows (every axis but the last), a
 * chunk of output channels). Per grid row it lists the (input channel, tap) pairs whose input
 * row lies inside x; register tiles of MB output channels x NW consecutive grid positions of
 * the last axis run over that list (the kernel table's float64 tiles, for the ISA in use),
 * then the bias is added and the tile stored into the phase's strided output positions.
 * X is copied once per run with zeros around each row (so tiles read whole vectors, never a
 * bound check), W re-laid out per run as [group][phase][MB block][tap][c][MB].
 *
 * Every output element is one tile's dot product over its row's list, in list order, however
 * the items are split: results are bitwise identical for every thread count.
 */
#include <string.h>

#include "impl.h"

#define S ONNXRUN__CONVT_MAX_SPATIAL
#define F64_MAX_RANK 3
#define F64_MAX_MB ONNXRUN__F64_MB_MAX
#define F64_MAX_NW ONNXRUN__F64_NW_MAX
#define F64_MAX_RB 64

/* The tile among the ISA's (kernel table) for mg output channels per group and rows of
 * about q positions: the most channels (up to mg) the ISA has, then the narrowest width
 * covering q (else the widest). */
static const struct onnxrun__f64_tile *pick_kernel(const struct onnxrun__f64_kernels *fk, int64_t mg, int64_t q)
{
	const struct onnxrun__f64_tile *tab = fk->tiles, *best = NULL;
	const size_t n = (size_t)fk->ntiles;
	int mb = 1;
	for (size_t i = 0; i < n; i++)
		if (tab[i].mb <= mg && tab[i].mb > mb)
			mb = tab[i].mb;
	for (size_t i = 0; i < n; i++) {
		if (tab[i].mb != mb)
			continue;
		if (!best || (best->nw < q ? tab[i].nw > best->nw : tab[i].nw >= q && tab[i].nw < best->nw))
			best = &tab[i];
	}
	return best;
}

/* ---- geometry ------------------------------------------------------------------------------- */

struct f64_job {
	const struct onnxrun__convt_geom *g;
	const struct onnxrun__f64_tile *kern;
	onnxrun__f64_store_fn store;
	const double *x, *w, *bias;
	double *y, *xpad, *wpk;
	int32_t n, last;
	int64_t cg, mg, nmb, kprod, nphase, tmax, in_rows, out_sp, lp, imin;
	int64_t ys[S], rs[S]; /* output element strides; input row strides (axes but the last) */
	struct onnxrun__convt_taps tp; /* the taps of each phase */
	int64_t *qlo, *qn;             /* per phase and axis: first grid position and count */
	const int64_t *nt;             /* per phase: taps (tp.ntaps) */
	int64_t *woff, *rows, *nrb, *rb_first; /* per phase: packed-weight offset, grid rows, row
	                                        * blocks, first row block's global index */
	int64_t *tfirst, *delta; /* per phase: first tap's index into delta (n per tap: delta per axis) */
	int64_t rb, trb, mchunks, mchunk, wgroup;
	char *scratch;
	size_t scratch_stride;
};

static const char *f64_accepts(const struct convt_query *q)
{
	const struct onnxrun__convt_geom *g = q->g;
	if (g->n < 1 || g->n > F64_MAX_RANK)
		return "rank above 3";
	if (!onnxrun__convt_taps_fit(g) || g->in_channels < 1 || g->out_channels < 1 || g->group < 1)
		return "more phases or kernel positions than the decomposition takes";
	return onnxrun__convt_positions_decline(g, true);
}

/* Fills the per-phase grid boxes, tap deltas and packed-weight offsets in buf (sized by the
 * caller); the tap lists are j->tp. */
static void f64_layout(struct f64_job *j, int64_t *buf)
{
	const struct onnxrun__convt_geom *g = j->g;
	int64_t *p = buf, r[S];
	j->qlo = p;
	j->qn = p + j->nphase * S;
	p += 2 * j->nphase * S;
	j->nt = j->tp.ntaps;
	j->tmax = j->tp.tmax;
	j->woff = p;
	j->rows = p + j->nphase;
	j->nrb = p + 2 * j->nphase;
	j->rb_first = p + 3 * j->nphase;
	j->tfirst = p + 4 * j->nphase;
	j->delta = p + 5 * j->nphase;
	for (int64_t ph = 0, off = 0; ph < j->nphase; ph++) {
		const int64_t nt = j->nt[ph];
		int64_t rows = 1;
		convt_phase_residues(&j->tp, ph, r);
		convt_phase_grid(g, r, j->qlo + ph * S, j->qn + ph * S);
		for (int32_t a = 0; a < j->last; a++)
			rows *= j->qn[ph * S + a];
		if (!j->qn[ph * S + j->last])
			rows = 0;
		j->woff[ph] = off;
		off += j->nmb * j->cg * nt * j->kern->mb;
		j->rows[ph] = rows;
		j->tfirst[ph] = ph ? j->tfirst[ph - 1] + j->nt[ph - 1] : 0;
		for (int64_t t = 0; t < nt; t++)
			convt_tap(&j->tp, r, t, NULL, j->delta + (j->tfirst[ph] + t) * j->n);
	}
	j->wgroup = j->nmb * j->cg * j->kprod * j->kern->mb;
}

/* Input range of the padded rows along the last axis: every tile of every phase reads
 * x[q - delta] for q in [qlo, qlo + ceil(qn/NW)*NW). */
static void f64_pad_range(struct f64_job *j)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t s = g->strides[L], nw = j->kern->nw;
	int64_t imin = 0, imax = g->in[L] - 1;
	for (int64_t r = 0; r < s; r++) {
		const int64_t t0 = j->tp.start[L][r], t1 = j->tp.start[L][r + 1];
		/* phases of residue r along the last axis share qlo and qn there; phase r itself
		 * (residue 0 on the other axes) has them */
		const int64_t qlo = j->qlo[r * S + L], qn = j->qn[r * S + L];
		if (t0 == t1 || !qn)
			continue;
		const int64_t dmin = (j->tp.k_of[L][t0] * g->dilations[L] - r) / s;
		const int64_t dmax = (j->tp.k_of[L][t1 - 1] * g->dilations[L] - r) / s;
		imin = qlo - dmax < imin ? qlo - dmax : imin;
		const int64_t hi = qlo + (qn + nw - 1) / nw * nw - 1 - dmin;
		imax = hi > imax ? hi : imax;
	}
	j->imin = imin;
	j->lp = imax - imin + 1;
}

/* ---- per-run copies ------------------------------------------------------------------------- */

/* Padded input rows [begin, end) of batch x channels x rows: zeros, then x's row at -imin. */
static void pad_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct f64_job *j = arg;
	const int64_t in_last = j->g->in[j->last], lead = -j->imin, tail = j->lp - lead - in_last;
	(void)tid;
	for (int64_t row = begin; row < end; row++) {
		double *d = j->xpad + row * j->lp;
		memset(d, 0, (size_t)lead * sizeof *d);
		memcpy(d + lead, j->x + row * in_last, (size_t)in_last * sizeof *d);
		memset(d + lead + in_last, 0, (size_t)tail * sizeof *d);
	}
}

/* Packed weights of (group, MB block) items: for each phase, [tap][c][MB], zeros past mg. */
static void pack_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct f64_job *j = arg;
	const int64_t MB = j->kern->mb;
	int64_t r[S];
	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		const int64_t grp = it / j->nmb, mb = it % j->nmb;
		for (int64_t ph = 0; ph < j->nphase; ph++) {
			const int64_t nt = j->nt[ph];
			double *dst = j->wpk + grp * j->wgroup + j->woff[ph] + mb * j->cg * nt * MB;
			convt_phase_residues(&j->tp, ph, r);
			for (int64_t t = 0; t < nt; t++) {
				const int64_t kf = convt_tap(&j->tp, r, t, NULL, NULL);
				for (int64_t c = 0; c < j->cg; c++)
					for (int64_t mm = 0; mm < MB; mm++) {
						const int64_t m = mb * MB + mm;
						dst[(t * j->cg + c) * MB + mm] =
							m < j->mg ? j->w[((grp * j->cg + c) * j->mg + m) * j->kprod + kf] : 0.0;
					}
			}
		}
	}
}

/* ---- work items ----------------------------------------------------------------------------- */

/* The (channel, tap) list of grid row `row` of phase ph (residues r) in batch nb, group grp:
 * x pointers at the row's first grid position, weight pointers into MB block 0. Returns its
 * length; *yrow gets the row's output offset within a plane. */
static int64_t row_list(const struct f64_job *j, int64_t nb, int64_t grp, int64_t ph, const int64_t *r, int64_t row,
                        const double **xp, const double **wp, int64_t *yrow)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t nt = j->nt[ph], MB = j->kern->mb;
	const double *wph = j->wpk + grp * j->wgroup + j->woff[ph];
	int64_t q[S], cnt = 0, yo = 0;
	for (int32_t a = L - 1; a >= 0; a--) {
		q[a] = j->qlo[ph * S + a] + row % j->qn[ph * S + a];
		row /= j->qn[ph * S + a];
		yo += (q[a] * g->strides[a] + r[a] - g->pad_begin[a]) * j->ys[a];
	}
	q[L] = j->qlo[ph * S + L];
	*yrow = yo + (q[L] * g->strides[L] + r[L] - g->pad_begin[L]);
	for (int64_t t = 0; t < nt; t++) {
		const int64_t *dl = j->delta + (j->tfirst[ph] + t) * j->n;
		int64_t irow = 0;
		bool inside = true;
		for (int32_t a = 0; a < L && inside; a++) {
			const int64_t i = q[a] - dl[a];
			inside = i >= 0 && i < g->in[a];
			irow += i * j->rs[a];
		}
		if (!inside)
			continue;
		const int64_t i_last = q[L] - dl[L];
		const double *x0 = j->xpad + ((nb * g->in_channels + grp * j->cg) * j->in_rows + irow) * j->lp +
		                   (i_last - j->imin);
		/* taps outer, channels inner: the order of the packed weights */
		for (int64_t c = 0; c < j->cg; c++, cnt++) {
			xp[cnt] = x0 + c * j->in_rows * j->lp;
			wp[cnt] = wph + (t * j->cg + c) * MB;
		}
	}
	return cnt;
}

/* The phase whose row blocks hold global row block rbg: the last with rb_first <= rbg. */
static int64_t find_phase(const struct f64_job *j, int64_t rbg)
{
	int64_t lo = 0, hi = j->nphase - 1;
	while (lo < hi) {
		const int64_t mid = lo + (hi - lo + 1) / 2;
		if (j->rb_first[mid] <= rbg)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Items [begin, end): it = ((nb*group + grp)*trb + row block)*mchunks + channel chunk. The
 * lists of the block's rows are built once; each MB block of weights then runs over them. */
static void f64_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct f64_job *j = arg;
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t MB = j->kern->mb, nw = j->kern->nw, sl = g->strides[j->last], lmax = j->cg * j->tmax;
	double *tile = (double *)(j->scratch + (size_t)tid * j->scratch_stride);
	int64_t *cnt = (int64_t *)(tile + F64_MAX_MB * F64_MAX_NW), *yrow = cnt + j->rb, r[S];
	const double **xp = (const double **)(yrow + j->rb), **wp = xp + j->rb * lmax;

	for (int64_t it = begin; it < end; it++) {
		const int64_t mc = it % j->mchunks, rbg = it / j->mchunks % j->trb, nbg = it / j->mchunks / j->trb;
		const int64_t nb = nbg / g->group, grp = nbg % g->group, ph = find_phase(j, rbg);
		const int64_t row0 = (rbg - j->rb_first[ph]) * j->rb;
		const int64_t nrows = row0 + j->rb < j->rows[ph] ? j->rb : j->rows[ph] - row0;
		const int64_t mb1 = (mc + 1) * j->mchunk < j->nmb ? (mc + 1) * j->mchunk : j->nmb;
		const int64_t qn = j->qn[ph * S + j->last];
		convt_phase_residues(&j->tp, ph, r);
		for (int64_t i = 0; i < nrows; i++)
			cnt[i] = row_list(j, nb, grp, ph, r, row0 + i, xp + i * lmax, wp + i * lmax, &yrow[i]);
		for (int64_t mb = mc * j->mchunk; mb < mb1; mb++) {
			const int64_t m0 = mb * MB, mcount = j->mg - m0 < MB ? j->mg - m0 : MB;
			const int64_t woff = mb * j->cg * j->nt[ph] * MB;
			double *ym = j->y + (nb * g->out_channels + grp * j->mg + m0) * j->out_sp;
			const double *bm = j->bias ? j->bias + grp * j->mg + m0 : NULL;
			for (int64_t i = 0; i < nrows; i++)
				for (int64_t u0 = 0; u0 < qn; u0 += nw) {
					j->kern->fn(cnt[i], xp + i * lmax, wp + i * lmax, u0, woff, tile);
					j->store(tile, nw, mcount, qn - u0 < nw ? qn - u0 : nw, ym + yrow[i] + u0 * sl, j->out_sp,
					         sl, bm);
				}
		}
	}
}

/* Element counts of the per-run buffers (padded X, packed W, per-thread scratch bytes);
 * false when one overflows. */
static bool f64_sizes(const struct f64_job *j, int64_t *nxpad, int64_t *nwpk, int64_t *scratch)
{
	const struct onnxrun__convt_geom *g = j->g;
	int64_t lists;
	return onnxrun__mul_i64(g->batch, g->in_channels, nxpad) && onnxrun__mul_i64(*nxpad, j->in_rows, nxpad) &&
	       onnxrun__mul_i64(*nxpad, j->lp, nxpad) && *nxpad < (INT64_C(1) << 58) &&
	       onnxrun__mul_i64(g->group, j->wgroup, nwpk) && *nwpk < (INT64_C(1) << 58) &&
	       onnxrun__mul_i64(j->cg, j->tmax, &lists) && onnxrun__mul_i64(lists, 2 * j->rb, &lists) &&
	       lists < (INT64_C(1) << 56) &&
	       (*scratch = (F64_MAX_MB * F64_MAX_NW + 2 * j->rb) * 8 + lists * (int64_t)sizeof(double *), true);
}

/* Row blocks (rows per item: about 16K multiply-adds or 64 positions at least), their
 * per-phase counts, and the channel chunks that give every thread a few items. */
static int64_t f64_split(struct f64_job *j, int threads)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t q = j->qn[j->last], per_row = (q > 0 ? q : 1) * j->mg * j->cg * (j->tmax > 0 ? j->tmax : 1);
	int64_t items;
	j->rb = (16384 + per_row - 1) / per_row;
	j->rb = j->rb < (64 + q - 1) / (q > 0 ? q : 1) ? (64 + q - 1) / (q > 0 ? q : 1) : j->rb;
	j->rb = j->rb > F64_MAX_RB ? F64_MAX_RB : j->rb;
	j->trb = 0;
	for (int64_t ph = 0; ph < j->nphase; ph++) {
		j->nrb[ph] = (j->rows[ph] + j->rb - 1) / j->rb;
		j->rb_first[ph] = j->trb;
		j->trb += j->nrb[ph];
	}
	items = g->batch * g->group * j->trb;
	j->mchunks = 1;
	j->mchunk = j->nmb;
	if (items < 4 * threads && threads > 1) {
		int64_t want = (4 * threads + items - 1) / items;
		want = want > j->nmb ? j->nmb : want;
		j->mchunk = (j->nmb + want - 1) / want;
		j->mchunks = (j->nmb + j->mchunk - 1) / j->mchunk;
	}
	return items * j->mchunks;
}

static enum onnxrun_status f64_run(const struct convt_call *c)
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const struct onnxrun__f64_kernels *fk;
	struct f64_job j;
	enum onnxrun_status st = ONNXRUN_OK;
	int64_t *buf = NULL, words = 0, nxpad, nwpk, scratch, items;
	int threads = onnxrun_op_threads(ctx);
	double work;

	memset(&j, 0, sizeof j);
	j.g = g;
	j.n = g->n;
	j.last = g->n - 1;
	j.cg = g->in_channels / g->group;
	j.mg = g->out_channels / g->group;
	j.x = c->x;
	j.w = c->w;
	j.bias = c->b;
	j.y = c->y;
	j.kprod = j.nphase = j.in_rows = j.out_sp = 1;
	for (int32_t a = j.n - 1; a >= 0; a--) {
		j.ys[a] = j.out_sp;
		j.out_sp *= g->out[a];
		j.kprod *= g->kernel[a];
		j.nphase *= g->strides[a];
		if (a < j.last) {
			j.rs[a] = j.in_rows;
			j.in_rows *= g->in[a];
		}
	}
	fk = c->kt->f64;
	j.kern = pick_kernel(fk, j.mg, convt_ceil_div(g->out[j.last], g->strides[j.last]));
	j.store = fk->store;
	j.nmb = (j.mg + j.kern->mb - 1) / j.kern->mb;
	words = j.nphase * (2 * S + 5) + j.kprod * j.n;
	if ((st = onnxrun__convt_taps_make(ctx->env, g, &j.tp)) == ONNXRUN_ERROR_OUT_OF_MEMORY)
		goto oom;
	if (st) /* more phases than the decomposition takes: accepts() keeps them away */
		goto out;
	if (!(buf = onnxrun__calloc(ctx->env, (size_t)words, sizeof *buf)))
		goto oom;
	f64_layout(&j, buf);
	f64_pad_range(&j);
	/* multiply-adds in all: below ~64K, waking the workers costs more than it saves */
	work = (double)g->batch * (double)g->out_channels * (double)j.out_sp * (double)j.cg *
	       (double)j.kprod / (double)j.nphase;
	if (work < 65536.0)
		threads = 1;
	items = f64_split(&j, threads);
	if (!f64_sizes(&j, &nxpad, &nwpk, &scratch)) { /* absurd sizes: leave them to the scatter */
		st = ONNXRUN_ERROR_UNSUPPORTED;
		goto out;
	}
	j.xpad = onnxrun__malloc(ctx->env, (size_t)nxpad * sizeof(double));
	j.wpk = onnxrun__malloc(ctx->env, (size_t)nwpk * sizeof(double));
	j.scratch = onnxrun__convt_scratch(ctx, threads, (size_t)scratch, &j.scratch_stride);
	if (!j.xpad || !j.wpk || !j.scratch)
		goto oom;
	if (!(st = onnxrun__op_parallel(ctx, threads, g->batch * g->in_channels * j.in_rows, pad_items, &j)) &&
	    !(st = onnxrun__op_parallel(ctx, threads, g->group * j.nmb, pack_items, &j)))
		st = onnxrun__op_parallel(ctx, threads, items, f64_items, &j);
	goto out;
oom:
	st = onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
	                        "out of memory allocating float64 scratch (padded input, packed weights)");
out:
	onnxrun__free(ctx->env, j.scratch);
	onnxrun__free(ctx->env, j.wpk);
	onnxrun__free(ctx->env, j.xpad);
	onnxrun__free(ctx->env, buf);
	onnxrun__convt_taps_free(ctx->env, &j.tp);
	return st;
}

const struct convt_impl onnxrun__convt_f64 = { "float64 phase", ONNXRUN_DTYPE_DOUBLE, f64_accepts, CONVT_LAYOUT_NONE,
	                                       f64_run, NULL };
