/*
 * f64.c - float64 ConvTranspose on the phase decomposition (taps.h): output position
 * o = q*s + r - pad_begin per axis, phase r reading x[q - delta] for its taps.
 *
 * Each phase is a GEMM: M = output channels of a group, N = the phase's grid positions
 * (flattened over all axes), K = (tap, input channel) pairs, taps outer. Positions go in
 * panels of NW (the register tile's width); one work item is (batch, group, phase, a block
 * of panels, a chunk of output channels). The item walks K in chunks: per panel it copies
 * the chunk's x values into a contiguous [k][NW] buffer (zeros where a tap falls outside
 * x), then runs the kernel table's float64 tiles (MB channels x NW positions) over it for
 * every MB block of its channels, adding into the item's accumulators. A chunk of one panel
 * stays in L1 while every channel block uses it; the weights (packing.h, f64 layout: packed
 * at load for an initializer W, else per run) stream from L2. Where 3+ taps of a phase
 * differ only along the last axis (k3s1p1: 3 of its 9), they read shifted windows of the
 * same x line: a panel that is one run of a grid line then packs each such line once per
 * input channel, NW + span values, and the tiles' ind entry reads each tap's rows through
 * pointers into it (pack_lines: a third of the copies for k3s1p1); where a thread's cache of
 * whole lines fits (cache_lines), each line is packed once whole and kept for the panels and
 * items that read it next (k3s1p1: each x value copied about once), and then lines of 2 taps
 * (dcgan_256's k4s2p1) take this path too. Last, the bias is added and each run of a panel
 * stored into the phase's strided output positions; or, where the strides[last] phases of the
 * same residues on the other axes cover whole output lines together (f64_groupable: unet's
 * k2s2, dcgan's k4s2p1), one item computes that group's phases for the same grid positions
 * and stores their values interleaved, whole lines at a time (the table's store_group:
 * register transposes on AVX-512, AVX2 and NEON), instead of each phase writing its own
 * lanes of lines the others write too; phases of a group that read the same x (f64_same_x:
 * unet's k2s2) share each packed chunk. Outputs as large as L2 are written with the table's
 * non-temporal stores where it has them (store_stream, store_group_stream).
 *
 * Every output element is one dot product over its phase's K in order (the tiles add
 * chunk after chunk to the running value), however the items are split: results are
 * bitwise identical for every thread count.
 */
#include <string.h>

#include "impl.h"

#define S ONNXRUN__CONVT_MAX_SPATIAL
#define F64_MAX_RANK 3
/* Positions per work item (whole panels): enough to read each chunk of weights from L2
 * several times per load from memory. */
#define F64_BLOCK_POSITIONS 128
/* The shortest blocks a group of phases (below) is cut into so that every thread gets several
 * items: shorter ones cost more than storing phase by phase saves. */
#define F64_GROUP_MIN_POSITIONS 64
/* The packed-lines path (pack_lines): left out of a build with the scalar table alone, whose
 * tiles have no ind entry (flash). */
#define F64_LINES (!ONNXRUN__KERNELS_SCALAR_ONLY)
/* Fewest taps per line for the packed lines: 3 (k3s1p1: the copies fall to a third) where
 * each panel packs its own stretch of the lines (pack_lines); with 2 there (dcgan's k4s2p1,
 * hifigan's k16s8) the copies halve, but the runs measured 0.92-1.12x on a busy host
 * (bench/README.md, "Measurements behind fixed choices"). 2 where the whole lines fit the
 * per-thread cache (cache_lines: dcgan_256, each x value copied once per phase instead of
 * once per tap). */
#define F64_LINE_MIN_TAPS 3
#define F64_CACHE_MIN_TAPS 2
/* Most bytes of a thread's cache of whole packed x lines (cache_lines), and most lines a phase
 * reads through it: beyond either, each panel packs its own stretch of the lines (pack_lines). */
#define F64_CACHE_BYTES (512 * 1024)
#define F64_CACHE_LINES 16
#define F64_CACHE_AHEAD 4
/* Fewer items than this per thread: each item cut into chunks of output channels until there
 * are as many. Every chunk packs the same x again (pack_chunk), so 2 rather than more:
 * dcgan_512 float64 on 2 threads (4 phase items, 2 per thread) ran 1.66-1.89x its 1-thread
 * time with each item cut in 2 chunks and 1.89-2.00x uncut (bench/README.md, "Measurements
 * behind fixed choices"). */
#define F64_CHUNKED_ITEMS 2
/* Most phases in a group (below) */
#define F64_GROUP_MAX 32
/* Most accumulator bytes per item when it computes a whole group of phases (below). */
#define F64_GROUP_ACC_BYTES (512 * 1024)

/* The tile among the ISA's (kernel table) for mg output channels per group and about q
 * positions per phase: the most channels (up to mg) the ISA has, then the width that pads q
 * the least (panels of nw positions), the widest of those. */
static const struct onnxrun__f64_tile *pick_kernel(const struct onnxrun__f64_kernels *fk, int64_t mg, int64_t q)
{
	const struct onnxrun__f64_tile *tab = fk->tiles, *best = NULL;
	const size_t n = (size_t)fk->ntiles;
	const int64_t mb = convt_f64_block(fk, mg); /* the packed weights' block */
	for (size_t i = 0; i < n; i++) {
		if (tab[i].mb != mb)
			continue;
		const int64_t pad = convt_ceil_div(q, tab[i].nw) * tab[i].nw;
		const int64_t best_pad = best ? convt_ceil_div(q, best->nw) * best->nw : 0;
		if (!best || pad < best_pad || (pad == best_pad && tab[i].nw > best->nw))
			best = &tab[i];
	}
	return best;
}

/* ---- geometry ------------------------------------------------------------------------------- */

/* A run of consecutive grid positions along the last axis, inside one panel: its first
 * position's grid coordinates, its column in the block, its length and output offset. */
struct f64_run {
	int64_t q[S];
	int64_t col, len, yoff;
};

struct f64_job {
	const struct onnxrun__convt_geom *g;
	const struct onnxrun__f64_tile *kern;
	onnxrun__f64_store_fn store;
	onnxrun__f64_store_group_fn store_group; /* NULL: store_group's plain loops */
	void (*stream_fence)(void);              /* NULL: plain stores (store, store_group) */
	const double *x, *bias;
	double *y;
	const double *wpk; /* the packed weights (packing.h, f64 layout) */
	int32_t n, last;
	int64_t cg, mg, nmb, kprod, nphase, in_sp, out_sp;
	int64_t ys[S], xs[S]; /* output and input element strides */
	struct onnxrun__convt_taps tp; /* the taps of each phase */
	int64_t *qlo, *qn;             /* per phase and axis: first grid position and count */
	const int64_t *nt;             /* per phase: taps (tp.ntaps) */
	const int64_t *woff;                 /* per phase: packed-weight offset */
	int64_t *npos, *nblk;                /* per phase: grid positions, blocks */
	int64_t *bl_phase, *bl_index;        /* per global block: its phase and index (order_blocks) */
	int64_t *tfirst, *delta; /* per phase: first tap's index into delta (n per tap: delta per axis) */
	int64_t kc, pb;          /* K entries per chunk, panels per block */
	/* phases per item: the strides[last] phases whose outputs interleave along the last axis
	 * (their grids the same size, their outputs q*s + r - pad at consecutive offsets), or 1 */
	int64_t sgrp;
	int64_t *jof;  /* per phase: its output offset within the group's interleave */
	int64_t *xcls; /* per phase: the first phase of its group that reads the same x (f64_same_x) */
	int64_t tblk, mchunks, mchunk, wgroup;
	char *scratch;
	size_t scratch_stride, acc_bytes, xbuf_bytes, runs_bytes, rows_bytes;
	/* per phase: taps per line (taps that differ only along the last axis), the span of their
	 * last-axis deltas, and whether its panels read x through packed lines (pack_lines) */
	int64_t *tl, *span, *lines;
	/* the cache of whole x lines (cache_lines; cw 0: none): doubles between channels' rows in
	 * a cached line, zero columns before x's first, lines cached per thread */
	int64_t cw, cleft, cslots;
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

/* The cache of whole x lines (cache_lines) for the phases that read packed lines: its rows'
 * width and left zeros (as far as any whole panel's taps reach), and a slot per line of the
 * phase with the most. Returns whether it fits (F64_CACHE_BYTES, F64_CACHE_LINES); else cw 0. */
static bool f64_cache_plan(struct f64_job *j)
{
	const int32_t L = j->last;
	int64_t nl = 0, first = 0, past = 0;
	j->cw = j->cleft = j->cslots = 0;
	for (int64_t ph = 0; ph < j->nphase; ph++)
		if (F64_LINES && j->lines[ph]) {
			nl = j->nt[ph] / j->tl[ph] > nl ? j->nt[ph] / j->tl[ph] : nl;
			/* the last-axis columns of x its whole panels read: grid positions less the shifts */
			int64_t dmin = 0, dmax = 0;
			for (int64_t t = 0; t < j->tl[ph]; t++) {
				const int64_t dl = j->delta[(j->tfirst[ph] + t) * j->n + L];
				dmin = t == 0 || dl < dmin ? dl : dmin;
				dmax = t == 0 || dl > dmax ? dl : dmax;
			}
			const int64_t lo = j->qlo[ph * S + L] - dmax, hi = j->qlo[ph * S + L] + j->qn[ph * S + L] - dmin;
			first = lo < first ? lo : first;
			past = hi - j->g->in[L] > past ? hi - j->g->in[L] : past;
		}
	if (!nl || nl > F64_CACHE_LINES)
		return false;
	/* whole lines: a multiple of 8 doubles, an odd one (rows an odd number of lines apart) */
	int64_t cw = (-first + j->g->in[L] + past + 7) / 8 * 8;
	cw += cw / 8 % 2 ? 0 : 8;
	if ((double)nl * (double)j->cg * (double)cw * sizeof(double) > F64_CACHE_BYTES)
		return false;
	j->cw = cw;
	j->cleft = -first;
	j->cslots = nl;
	return true;
}

/* Fills the per-phase grid boxes and tap deltas in buf (sized by the caller); the tap lists
 * are j->tp. */
static void f64_layout(struct f64_job *j, int64_t *buf)
{
	const struct onnxrun__convt_geom *g = j->g;
	int64_t *p = buf, r[S];
	j->qlo = p;
	j->qn = p + j->nphase * S;
	p += 2 * j->nphase * S;
	j->nt = j->tp.ntaps;
	j->npos = p;
	j->nblk = p + j->nphase;
	j->tfirst = p + 2 * j->nphase;
	j->jof = p + 3 * j->nphase;
	j->tl = p + 4 * j->nphase;
	j->span = p + 5 * j->nphase;
	j->lines = p + 6 * j->nphase;
	j->xcls = p + 7 * j->nphase;
	j->delta = p + 8 * j->nphase;
	for (int64_t ph = 0; ph < j->nphase; ph++) {
		const int64_t nt = j->nt[ph];
		convt_phase_residues(&j->tp, ph, r);
		convt_phase_grid(g, r, j->qlo + ph * S, j->qn + ph * S);
		j->npos[ph] = 1;
		for (int32_t a = 0; a < j->n; a++)
			j->npos[ph] *= j->qn[ph * S + a];
		j->tfirst[ph] = ph ? j->tfirst[ph - 1] + j->nt[ph - 1] : 0;
		for (int64_t t = 0; t < nt; t++)
			convt_tap(&j->tp, r, t, NULL, j->delta + (j->tfirst[ph] + t) * j->n);
		/* taps vary fastest along the last axis (convt_tap), so lines are runs of tl taps,
		 * with the same last-axis deltas in every line */
		const int32_t L = j->last;
		int64_t lo = 0, hi = 0;
		j->tl[ph] = j->tp.start[L][r[L] + 1] - j->tp.start[L][r[L]];
		for (int64_t t = 0; t < j->tl[ph] && t < nt; t++) { /* (no taps: on another axis) */
			const int64_t dl = j->delta[(j->tfirst[ph] + t) * j->n + L];
			lo = t == 0 || dl < lo ? dl : lo;
			hi = t == 0 || dl > hi ? dl : hi;
		}
		j->span[ph] = hi - lo;
		/* where taps share lines, one packed line serves tl taps; only grid lines of a whole
		 * panel or more have panels that are one run (shorter ones keep the chunk order) */
		j->lines[ph] = F64_LINES && j->kern->ind && nt > 0 && j->tl[ph] >= F64_CACHE_MIN_TAPS &&
		               j->qn[ph * S + L] >= j->kern->nw;
	}
	/* lines of fewer taps only through the cache: where it cannot hold every phase's lines,
	 * those phases pack no lines and the cache is planned again for the rest */
	if (!f64_cache_plan(j)) {
		for (int64_t ph = 0; ph < j->nphase; ph++)
			j->lines[ph] = j->lines[ph] && j->tl[ph] >= F64_LINE_MIN_TAPS;
		f64_cache_plan(j);
	}
}

/* Doubles between the packed lines of phase ph (pack_lines): nw + span rounded up to whole
 * 64-byte lines. */
static int64_t f64_line_stride(const struct f64_job *j, int64_t ph)
{
	return (j->kern->nw + j->span[ph] + 7) / 8 * 8;
}

/* ---- work items ----------------------------------------------------------------------------- */

/* The runs of positions [p0, p0 + cnt) of phase ph (residues r): split where a grid row or
 * a panel ends. Returns their number (at most cnt). */
static int64_t make_runs(const struct f64_job *j, int64_t ph, const int64_t *r, int64_t p0, int64_t cnt,
                         struct f64_run *runs)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t *qlo = j->qlo + ph * S, *qn = j->qn + ph * S, nw = j->kern->nw;
	int64_t u[S], nrun = 0;
	for (int32_t a = L; a >= 0; a--) {
		u[a] = p0 % qn[a];
		p0 /= qn[a];
	}
	for (int64_t col = 0; col < cnt;) {
		struct f64_run *rn = &runs[nrun++];
		int64_t len = qn[L] - u[L];
		len = len < cnt - col ? len : cnt - col;
		len = len < nw - col % nw ? len : nw - col % nw;
		rn->col = col;
		rn->len = len;
		rn->yoff = 0;
		for (int32_t a = 0; a <= L; a++) {
			rn->q[a] = qlo[a] + u[a];
			rn->yoff += (rn->q[a] * g->strides[a] + r[a] - g->pad_begin[a]) * j->ys[a];
		}
		col += len;
		u[L] += len;
		for (int32_t a = L; a > 0 && u[a] == qn[a]; a--) {
			u[a] = 0;
			u[a - 1]++;
		}
	}
	return nrun;
}

/* count rows of len doubles from src (rows sstep apart) to dst (rows nw apart). The rows
 * are channels apart, a stride no hardware prefetcher follows: whole panels also fetch what
 * the next panel along the row will read. */
static void copy_rows(double *dst, int64_t nw, const double *src, int64_t sstep, int64_t count, int64_t len)
{
	/* constant sizes let the compiler inline the copies of whole panels */
	if (len == 8)
		for (int64_t i = 0; i < count; i++) {
			__builtin_prefetch(src + i * sstep + 8);
			memcpy(dst + i * nw, src + i * sstep, 8 * sizeof *dst);
		}
	else if (len == 16)
		for (int64_t i = 0; i < count; i++) {
			__builtin_prefetch(src + i * sstep + 16);
			__builtin_prefetch(src + i * sstep + 24);
			memcpy(dst + i * nw, src + i * sstep, 16 * sizeof *dst);
		}
	else
		for (int64_t i = 0; i < count; i++)
			memcpy(dst + i * nw, src + i * sstep, (size_t)len * sizeof *dst);
}

/* n doubles from s to d (n < 32: at most two fixed-size copies, overlapping, which the compiler
 * inlines as moves; a call costs more than copying the few doubles of a row cut by an edge of
 * x, once per input channel). */
static inline void copy_short(double *d, const double *s, int64_t n)
{
	if (n >= 16 && n < 32) {
		memcpy(d, s, 16 * sizeof *d);
		memcpy(d + n - 16, s + n - 16, 16 * sizeof *d);
	} else if (n >= 8 && n < 16) {
		memcpy(d, s, 8 * sizeof *d);
		memcpy(d + n - 8, s + n - 8, 8 * sizeof *d);
	} else if (n >= 4 && n < 8) {
		memcpy(d, s, 4 * sizeof *d);
		memcpy(d + n - 4, s + n - 4, 4 * sizeof *d);
	} else if (n >= 2 && n < 4) {
		memcpy(d, s, 2 * sizeof *d);
		memcpy(d + n - 2, s + n - 2, 2 * sizeof *d);
	} else if (n == 1)
		*d = *s;
	else if (n >= 32)
		memcpy(d, s, (size_t)n * sizeof *d);
}

/* n zeros at d, as copy_short. */
static inline void zero_short(double *d, int64_t n)
{
	if (n >= 16 && n < 32) {
		memset(d, 0, 16 * sizeof *d);
		memset(d + n - 16, 0, 16 * sizeof *d);
	} else if (n >= 8 && n < 16) {
		memset(d, 0, 8 * sizeof *d);
		memset(d + n - 8, 0, 8 * sizeof *d);
	} else if (n >= 4 && n < 8) {
		memset(d, 0, 4 * sizeof *d);
		memset(d + n - 4, 0, 4 * sizeof *d);
	} else if (n >= 2 && n < 4) {
		memset(d, 0, 2 * sizeof *d);
		memset(d + n - 2, 0, 2 * sizeof *d);
	} else if (n == 1)
		*d = 0.0;
	else if (n >= 32)
		memset(d, 0, (size_t)n * sizeof *d);
}

/* Where tap dl's x values for run rn lie: *off, the offset in a channel plane of the run's
 * line on the other axes; *i0, the last-axis index the run's first position reads; [*lo, *hi),
 * the run's columns inside x (empty when the line lies outside x). */
static void tap_span(const struct f64_job *j, const struct f64_run *rn, const int64_t *dl, int64_t *off, int64_t *i0,
                     int64_t *lo, int64_t *hi)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t in_l = g->in[L];
	int64_t o = 0, l, h;
	bool inside = true;
	for (int32_t a = 0; a < L && inside; a++) {
		const int64_t i = rn->q[a] - dl[a];
		inside = i >= 0 && i < g->in[a];
		o += i * j->xs[a];
	}
	*i0 = rn->q[L] - dl[L];
	l = inside ? (*i0 < 0 ? -*i0 : 0) : rn->len;
	h = inside ? (in_l - *i0 < rn->len ? in_l - *i0 : rn->len) : rn->len;
	l = l > rn->len ? rn->len : l;
	*lo = l;
	*hi = h < l ? l : h;
	*off = o;
}

/* K entries [k0, k0 + kn) of phase ph, batch nb, group grp, for each run (of one panel) into
 * xbuf[k - k0][column in panel]: x[q - delta] of the entry's tap and channel, 0 where that
 * lies outside x. */
static void pack_chunk(const struct f64_job *j, int64_t nb, int64_t grp, int64_t ph, int64_t k0, int64_t kn,
                       const struct f64_run *runs, int64_t nrun, double *xbuf)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t nw = j->kern->nw, cg = j->cg;
	const double *xg = j->x + (nb * g->in_channels + grp * cg) * j->in_sp;
	for (int64_t ri = 0; ri < nrun; ri++) {
		const struct f64_run *rn = &runs[ri];
		double *dp = xbuf + rn->col % nw;
		for (int64_t k = k0; k < k0 + kn;) {
			const int64_t t = k / cg, c0 = k % cg, cn = cg - c0 < k0 + kn - k ? cg - c0 : k0 + kn - k;
			double *d = dp + (k - k0) * nw;
			int64_t off, i0, lo, hi;
			tap_span(j, rn, j->delta + (j->tfirst[ph] + t) * j->n, &off, &i0, &lo, &hi);
			if (hi == lo) /* the line lies outside x */
				for (int64_t c = 0; c < cn; c++)
					zero_short(d + c * nw, rn->len);
			else if (lo > 0 || hi < rn->len) { /* cut by an edge: a few doubles per row */
				const double *src = xg + c0 * j->in_sp + off + i0 + lo;
				for (int64_t c = 0; c < cn; c++) {
					zero_short(d + c * nw, lo);
					copy_short(d + c * nw + lo, src + c * j->in_sp, hi - lo);
					zero_short(d + c * nw + hi, rn->len - hi);
				}
			} else
				copy_rows(d, nw, xg + c0 * j->in_sp + off + i0, j->in_sp, cn, rn->len);
			k += cn;
		}
	}
}

/* The x rows of every K entry of phase ph, batch nb, group grp, for a panel that is one run rn
 * of nw positions, as pointers for the tiles' ind entry. The taps of a phase come in lines of
 * tl taps that differ only in their last-axis delta (tap index = line * tl + position along
 * the last axis), and read shifted windows of the same x line: per line and input channel one
 * row of nw + span values is packed (zeros outside x; rows ws apart in lbuf) and each tap's
 * rows point into it at its shift. A line outside x on another axis points at zero (nw zeros).
 * The tiles read the same values as from pack_chunk's rows, so the sums are the same bits. */
static void pack_lines(const struct f64_job *j, int64_t nb, int64_t grp, int64_t ph, const struct f64_run *rn,
                       double *lbuf, const double **rows, const double *zero)
{
	/* (a line's taps are consecutive in K: rows of tap t at rows + t*cg) */
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t nt = j->nt[ph], tl = j->tl[ph], nw = j->kern->nw, cg = j->cg, sp = j->in_sp;
	const int64_t wl = nw + j->span[ph], ws = f64_line_stride(j, ph);
	const double *xg = j->x + (nb * g->in_channels + grp * cg) * sp;
	for (int64_t t0 = 0; t0 < nt; t0 += tl) {
		const int64_t *dl = j->delta + (j->tfirst[ph] + t0) * j->n;
		int64_t dd[S], top = dl[L], off, i0, lo, hi;
		for (int64_t t = 1; t < tl; t++)
			top = dl[t * j->n + L] > top ? dl[t * j->n + L] : top;
		for (int32_t a = 0; a < j->n; a++)
			dd[a] = a == L ? top : dl[a];
		struct f64_run wr = *rn;
		wr.len = wl;
		tap_span(j, &wr, dd, &off, &i0, &lo, &hi);
		double *d = lbuf + t0 / tl * cg * ws;
		if (hi > lo) {
			if (lo > 0 || hi < wl)
				for (int64_t c = 0; c < cg; c++) {
					zero_short(d + c * ws, lo);
					zero_short(d + c * ws + hi, wl - hi);
				}
			copy_rows(d + lo, ws, xg + off + i0 + lo, sp, cg, hi - lo);
		}
		for (int64_t t = 0; t < tl; t++) {
			const double **rp = rows + (t0 + t) * cg, *src = d + (top - dl[t * j->n + L]);
			for (int64_t c = 0; c < cg; c++)
				rp[c] = hi > lo ? src + c * ws : zero;
		}
	}
}

/* As pack_lines, through a per-thread cache of whole x lines: each line a panel's taps read
 * (every input channel, the whole last axis, zero columns on either side as far as any tap's
 * shift reaches: rows cw doubles apart, an odd number of 64-byte lines, so a panel's rows spread
 * over every L1 set) is copied once into one of cslots slots, tagged by batch, group and line,
 * and kept while later panels and items read it: k3s1p1's items (one grid line each, in order
 * within a thread) share 2 of their 3 lines with the next, so each x value is copied about
 * once instead of 3 times, in whole rows rather than a panel's stretch of 128 KiB-apart rows.
 * tags: 3 per slot (nb, grp, the line's offset in a channel plane). The rows point at the same
 * values as pack_lines', so the sums are the same bits. */
static void cache_lines(const struct f64_job *j, int64_t nb, int64_t grp, int64_t ph, const struct f64_run *rn,
                        double *cache, int64_t *tags, const double **rows, const double *zero)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t nt = j->nt[ph], tl = j->tl[ph], cg = j->cg, sp = j->in_sp, cw = j->cw, nl = nt / tl;
	const int64_t in_l = g->in[L];
	const double *xg = j->x + (nb * g->in_channels + grp * cg) * sp;
	int64_t key[F64_CACHE_LINES], slot[F64_CACHE_LINES];
	unsigned used = 0;
	for (int64_t l = 0; l < nl; l++) { /* the lines cached already */
		const int64_t *dl = j->delta + (j->tfirst[ph] + l * tl) * j->n;
		bool inside = true;
		key[l] = 0;
		for (int32_t a = 0; a < L && inside; a++) {
			const int64_t i = rn->q[a] - dl[a];
			inside = i >= 0 && i < g->in[a];
			key[l] += i * j->xs[a];
		}
		slot[l] = inside ? -1 : -2;
		for (int64_t s = 0; s < j->cslots && slot[l] == -1; s++)
			if (tags[3 * s] == nb && tags[3 * s + 1] == grp && tags[3 * s + 2] == key[l]) {
				slot[l] = s;
				used |= 1u << s;
			}
	}
	for (int64_t l = 0; l < nl; l++) { /* the others, into slots no line of this panel holds */
		if (slot[l] != -1)
			continue;
		int64_t s = 0;
		while (used >> s & 1)
			s++;
		used |= 1u << s;
		slot[l] = s;
		tags[3 * s] = nb;
		tags[3 * s + 1] = grp;
		tags[3 * s + 2] = key[l];
		double *d = cache + s * cg * cw;
		for (int64_t c = 0; c < cg; c++, d += cw) {
			/* the rows are a channel plane apart, which no hardware prefetcher follows: the
			 * row F64_CACHE_AHEAD channels on is fetched while this one is copied */
			if (c + F64_CACHE_AHEAD < cg)
				for (int64_t i = 0; i < in_l; i += 8)
					__builtin_prefetch(xg + (c + F64_CACHE_AHEAD) * sp + key[l] + i);
			zero_short(d, j->cleft);
			memcpy(d + j->cleft, xg + c * sp + key[l], (size_t)in_l * sizeof *d);
			zero_short(d + j->cleft + in_l, cw - j->cleft - in_l);
		}
	}
	for (int64_t l = 0; l < nl; l++)
		for (int64_t t = l * tl; t < (l + 1) * tl; t++) {
			const double **rp = rows + t * cg;
			if (slot[l] < 0) {
				for (int64_t c = 0; c < cg; c++)
					rp[c] = zero;
				continue;
			}
			const double *src = cache + slot[l] * cg * cw + j->cleft + rn->q[L] -
			                    j->delta[(j->tfirst[ph] + t) * j->n + L];
			for (int64_t c = 0; c < cg; c++)
				rp[c] = src + c * cw;
		}
}

/* Whether phases a and b of a group (the same grid on the other axes) read the same x for the same
 * grid positions: the same taps' deltas on the other axes, and along the last axis deltas that
 * differ by as much as their grids' starts (k2s2: both phases of a group read x[q]). Then one
 * packed chunk serves both. */
static bool f64_same_x(const struct f64_job *j, int64_t a, int64_t b)
{
	const int32_t L = j->last;
	if (j->nt[a] != j->nt[b] || (F64_LINES && j->lines[a] != j->lines[b]))
		return false;
	for (int64_t t = 0; t < j->nt[a]; t++) {
		const int64_t *da = j->delta + (j->tfirst[a] + t) * j->n, *db = j->delta + (j->tfirst[b] + t) * j->n;
		for (int32_t x = 0; x < L; x++)
			if (da[x] != db[x])
				return false;
		if (j->qlo[a * S + L] - da[L] != j->qlo[b * S + L] - db[L])
			return false;
	}
	return true;
}

/* Whether each group of strides[last] consecutive phases (the same residues on the other axes)
 * can be one item: grids of the same size, the same start on the other axes, and outputs
 * q*s + r - pad along the last axis at consecutive offsets for the same grid position. Then
 * the item stores whole output lines (each phase's values interleaved) instead of every
 * phase writing its own lanes of the same lines. Sets jof. */
static bool f64_groupable(struct f64_job *j)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t L = j->last;
	const int64_t sl = g->strides[L];
	if (sl < 2 || sl > F64_GROUP_MAX) /* (a group's offsets are tracked in a 64-bit mask) */
		return false;
	for (int64_t ph0 = 0; ph0 < j->nphase; ph0 += sl) {
		int64_t omin = 0, seen = 0;
		for (int64_t ph = ph0; ph < ph0 + sl; ph++) {
			int64_t r[S] = { 0 }; /* (gcc 12 for Arm sees r[L] maybe unset: convt_phase_residues sets j->n >= L + 1 axes) */
			convt_phase_residues(&j->tp, ph, r);
			for (int32_t a = 0; a < j->n; a++)
				if (j->qn[ph * S + a] != j->qn[ph0 * S + a] || (a < L && j->qlo[ph * S + a] != j->qlo[ph0 * S + a]))
					return false;
			j->jof[ph] = j->qlo[ph * S + L] * sl + r[L] - g->pad_begin[L];
			omin = ph == ph0 || j->jof[ph] < omin ? j->jof[ph] : omin;
		}
		for (int64_t ph = ph0; ph < ph0 + sl; ph++) {
			j->jof[ph] -= omin;
			if (j->jof[ph] < 0 || j->jof[ph] >= sl || (seen >> j->jof[ph] & 1))
				return false;
			seen |= INT64_C(1) << j->jof[ph];
		}
		for (int64_t ph = ph0; ph < ph0 + sl; ph++) {
			j->xcls[ph] = ph;
			for (int64_t p2 = ph0; p2 < ph && j->xcls[ph] == ph; p2++)
				if (j->xcls[p2] == p2 && f64_same_x(j, p2, ph))
					j->xcls[ph] = p2;
		}
	}
	return true;
}

/* The order of the blocks: block i of every phase, phase ascending, then block i + 1. The
 * pool gives each thread a contiguous range of items, so a thread's phases write the same
 * region of y: phases interleave their outputs (position q*s + r along each axis), and with
 * phase-major ranges two threads would write alternate values of the same cache lines
 * (hifigan's stride 8: eight phases per line of doubles). bl_phase[bg], bl_index[bg]: global
 * block bg's phase and index within it. */
static void order_blocks(struct f64_job *j)
{
	int64_t bg = 0, most = 0;
	for (int64_t ph = 0; ph < j->nphase; ph += j->sgrp)
		most = j->nblk[ph] > most ? j->nblk[ph] : most;
	for (int64_t i = 0; i < most; i++)
		for (int64_t ph = 0; ph < j->nphase; ph += j->sgrp)
			if (i < j->nblk[ph]) {
				j->bl_phase[bg] = ph;
				j->bl_index[bg++] = i;
			}
}

/* The sums of phases phs[0..nph) (which read the same x: f64_same_x) for the item's positions
 * [p0, p0 + cnt) and channel blocks [mb0, mb1) into accs[s] ([block][panel][tile]); the runs
 * of phs[0] into runs. Returns their number.
 * Packed: per K chunk, each panel's chunk packed (pack_chunk) right before every phase's
 * channel blocks run over it. Lines (j->lines[ph]): per panel, its x lines packed once for the
 * whole K (pack_lines; a panel of runs across grid lines packed per chunk as above), then
 * every chunk and channel block over it; each output's products are added in the same order
 * either way. */
static int64_t compute_phase(const struct f64_job *j, int64_t nb, int64_t grp, const int64_t *phs, double *const *accs,
                             int64_t nph, int64_t p0, int64_t cnt, int64_t mb0, int64_t mb1, double *xbuf,
                             struct f64_run *runs, const double **rows, const double *zero, double *lbuf, int64_t *tags)
{
	const int64_t ph = phs[0], MB = j->kern->mb, nw = j->kern->nw, tw = MB * nw;
	const int64_t npan = (cnt + nw - 1) / nw, K = j->nt[ph] * j->cg;
	const double *wph[F64_GROUP_MAX];
	int64_t r[S], nrun;
	convt_phase_residues(&j->tp, ph, r);
	nrun = make_runs(j, ph, r, p0, cnt, runs);
	for (int64_t s = 0; s < nph; s++) {
		wph[s] = j->wpk + grp * j->wgroup + j->woff[phs[s]];
		memset(accs[s], 0, (size_t)((mb1 - mb0) * npan * tw) * sizeof *accs[s]);
	}
	if (F64_LINES && j->lines[ph]) {
		for (int64_t pn = 0, ri = 0; pn < npan; pn++) {
			const int64_t r0 = ri;
			while (ri < nrun && runs[ri].col < (pn + 1) * nw)
				ri++;
			const bool whole = ri - r0 == 1 && runs[r0].len == nw;
			if (whole && j->cw)
				cache_lines(j, nb, grp, ph, runs + r0, lbuf, tags, rows, zero);
			else if (whole)
				pack_lines(j, nb, grp, ph, runs + r0, lbuf, rows, zero);
			for (int64_t k0 = 0; k0 < K; k0 += j->kc) {
				const int64_t kn = K - k0 < j->kc ? K - k0 : j->kc;
				if (!whole) {
					if (pn == npan - 1 && cnt % nw) /* columns past the positions */
						memset(xbuf, 0, (size_t)(j->kc * nw) * sizeof *xbuf);
					pack_chunk(j, nb, grp, ph, k0, kn, runs + r0, ri - r0, xbuf);
				}
				for (int64_t s = 0; s < nph; s++)
					for (int64_t mb = mb0; mb < mb1; mb++) {
						const int64_t woff = (k0 * j->nmb + mb * kn) * MB;
						double *t = accs[s] + ((mb - mb0) * npan + pn) * tw;
						if (whole)
							j->kern->ind(kn, rows + k0, wph[s] + woff, t);
						else
							j->kern->fn(kn, xbuf, wph[s] + woff, t);
					}
			}
		}
		return nrun;
	}
	for (int64_t k0 = 0; k0 < K; k0 += j->kc) {
		const int64_t kn = K - k0 < j->kc ? K - k0 : j->kc;
		/* each panel's chunk packed right before every channel block runs over it */
		for (int64_t pn = 0, ri = 0; pn < npan; pn++) {
			const int64_t r0 = ri;
			while (ri < nrun && runs[ri].col < (pn + 1) * nw)
				ri++;
			if (pn == npan - 1 && cnt % nw) /* columns past the positions */
				memset(xbuf, 0, (size_t)(j->kc * nw) * sizeof *xbuf);
			pack_chunk(j, nb, grp, ph, k0, kn, runs + r0, ri - r0, xbuf);
			for (int64_t s = 0; s < nph; s++)
				for (int64_t mb = mb0; mb < mb1; mb++) {
					const int64_t woff = (k0 * j->nmb + mb * kn) * MB;
					j->kern->fn(kn, xbuf, wph[s] + woff, accs[s] + ((mb - mb0) * npan + pn) * tw);
				}
		}
	}
	return nrun;
}

/* The group's sums (phase of offset jj at acc + jj*accn) + bias into whole output lines:
 * y[yoff + e*sg + jj] of each run (the runs of the group's phase of offset 0). */
static void store_group(const struct f64_job *j, const double *acc, int64_t accn, int64_t npan, int64_t mb,
                        int64_t mb0, const struct f64_run *runs, int64_t nrun, double *ym, const double *bm,
                        int64_t mcount)
{
	const int64_t nw = j->kern->nw, tw = j->kern->mb * nw, sg = j->sgrp;
	for (int64_t ri = 0; ri < nrun; ri++) {
		const struct f64_run *rn = &runs[ri];
		const double *t = acc + ((mb - mb0) * npan + rn->col / nw) * tw + rn->col % nw;
		if (j->store_group) {
			j->store_group(t, accn, nw, mcount, rn->len, ym + rn->yoff, j->out_sp, sg, bm);
			continue;
		}
		for (int64_t m = 0; m < mcount; m++) {
			const double b = bm ? bm[m] : 0.0, *tm = t + m * nw;
			double *d = ym + m * j->out_sp + rn->yoff;
			if (sg == 2)
				for (int64_t e = 0; e < rn->len; e++) {
					d[2 * e] = tm[e] + b;
					d[2 * e + 1] = tm[accn + e] + b;
				}
			else
				for (int64_t e = 0; e < rn->len; e++)
					for (int64_t jj = 0; jj < sg; jj++)
						d[e * sg + jj] = tm[jj * accn + e] + b;
		}
	}
}

/* Thread tid's cache tags (cache_lines), after its zero row and lines in its scratch. */
static int64_t *f64_tags(const struct f64_job *j, int tid)
{
	char *base = j->scratch + (size_t)tid * j->scratch_stride;
	double *zero = (double *)(base + j->acc_bytes + j->xbuf_bytes + j->runs_bytes + j->rows_bytes);
	return (int64_t *)(zero + j->kern->nw + j->cslots * j->cg * j->cw);
}

/* Items [begin, end): it = ((nb*group + grp)*tblk + block)*mchunks + channel chunk; a block is
 * of one phase, or of a group of sgrp phases. */
static void f64_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct f64_job *j = arg;
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t MB = j->kern->mb, nw = j->kern->nw, sl = g->strides[j->last], tw = MB * nw;
	char *base = j->scratch + (size_t)tid * j->scratch_stride;
	double *acc = (double *)base, *xbuf = (double *)(base + j->acc_bytes);
	struct f64_run *runs = (struct f64_run *)(base + j->acc_bytes + j->xbuf_bytes);
	const double **rows = (const double **)(base + j->acc_bytes + j->xbuf_bytes + j->runs_bytes);
	double *zero = (double *)(base + j->acc_bytes + j->xbuf_bytes + j->runs_bytes + j->rows_bytes);
	double *lbuf = zero + nw;
	int64_t *tags = f64_tags(j, tid);
	if (j->rows_bytes)
		memset(zero, 0, (size_t)nw * sizeof *zero);

	for (int64_t it = begin; it < end; it++) {
		const int64_t mc = it % j->mchunks, bg = it / j->mchunks % j->tblk, nbg = it / j->mchunks / j->tblk;
		const int64_t nb = nbg / g->group, grp = nbg % g->group, ph0 = j->bl_phase[bg];
		const int64_t p0 = j->bl_index[bg] * j->pb * nw;
		const int64_t cnt = p0 + j->pb * nw < j->npos[ph0] ? j->pb * nw : j->npos[ph0] - p0;
		const int64_t npan = (cnt + nw - 1) / nw;
		const int64_t mb0 = mc * j->mchunk, mb1 = mb0 + j->mchunk < j->nmb ? mb0 + j->mchunk : j->nmb;
		const int64_t accn = (mb1 - mb0) * npan * tw;
		int64_t nrun = 0, lead = ph0;
		if (j->sgrp == 1)
			nrun = compute_phase(j, nb, grp, &ph0, &acc, 1, p0, cnt, mb0, mb1, xbuf, runs, rows, zero, lbuf, tags);
		else {
			/* the group's phases that read the same x (xcls) share each packed chunk; the set of
			 * the phase of offset 0 last, that phase first: its runs locate the output lines */
			int64_t phs[F64_GROUP_MAX];
			double *accs[F64_GROUP_MAX];
			for (int64_t ph = ph0; ph < ph0 + j->sgrp; ph++)
				lead = j->jof[ph] ? lead : ph;
			for (int64_t ph = ph0; ph < ph0 + j->sgrp; ph++) {
				if (j->xcls[ph] != ph || j->xcls[ph] == j->xcls[lead])
					continue;
				int64_t nph = 0;
				for (int64_t p2 = ph; p2 < ph0 + j->sgrp; p2++)
					if (j->xcls[p2] == ph) {
						phs[nph] = p2;
						accs[nph++] = acc + j->jof[p2] * accn;
					}
				compute_phase(j, nb, grp, phs, accs, nph, p0, cnt, mb0, mb1, xbuf, runs, rows, zero, lbuf, tags);
			}
			int64_t nph = 1;
			phs[0] = lead;
			accs[0] = acc;
			for (int64_t p2 = ph0; p2 < ph0 + j->sgrp; p2++)
				if (p2 != lead && j->xcls[p2] == j->xcls[lead]) {
					phs[nph] = p2;
					accs[nph++] = acc + j->jof[p2] * accn;
				}
			nrun = compute_phase(j, nb, grp, phs, accs, nph, p0, cnt, mb0, mb1, xbuf, runs, rows, zero, lbuf, tags);
		}
		for (int64_t mb = mb0; mb < mb1; mb++) {
			const int64_t m0 = mb * MB, mcount = j->mg - m0 < MB ? j->mg - m0 : MB;
			double *ym = j->y + (nb * g->out_channels + grp * j->mg + m0) * j->out_sp;
			const double *bm = j->bias ? j->bias + grp * j->mg + m0 : NULL;
			if (j->sgrp > 1) {
				store_group(j, acc, accn, npan, mb, mb0, runs, nrun, ym, bm, mcount);
				continue;
			}
			for (int64_t ri = 0; ri < nrun; ri++) {
				const struct f64_run *rn = &runs[ri];
				const double *t = acc + ((mb - mb0) * npan + rn->col / nw) * tw + rn->col % nw;
				j->store(t, nw, mcount, rn->len, ym + rn->yoff, j->out_sp, sl, bm);
			}
		}
	}
	if (j->stream_fence) /* non-temporal stores are weakly ordered */
		j->stream_fence();
}

/* Per-thread scratch bytes (accumulators, x chunks, runs); false when they
 * overflow. */
static bool f64_sizes(struct f64_job *j, int64_t *scratch)
{
	const int64_t nw = j->kern->nw, tw = j->kern->mb * nw;
	int64_t acc;
	if (!onnxrun__mul_i64(j->mchunk * j->sgrp, j->pb * tw, &acc) || acc >= (INT64_C(1) << 56))
		return false;
	j->acc_bytes = (size_t)acc * sizeof(double);
	j->xbuf_bytes = (size_t)(j->kc * nw) * sizeof(double);
	j->runs_bytes = (size_t)(j->pb * nw) * sizeof(struct f64_run);
	*scratch = (int64_t)(j->acc_bytes + j->xbuf_bytes + j->runs_bytes);
	/* phases that read packed lines: a row pointer per K entry, a zero row, the lines */
	int64_t kmax = 0, lmax = 0;
	for (int64_t ph = 0; ph < j->nphase; ph++)
		if (F64_LINES && j->lines[ph]) {
			const int64_t k = j->nt[ph] * j->cg, l = j->nt[ph] / j->tl[ph] * j->cg * f64_line_stride(j, ph);
			kmax = k > kmax ? k : kmax;
			lmax = l > lmax ? l : lmax;
		}
	j->rows_bytes = (size_t)kmax * sizeof(const double *);
	if (j->cw)
		lmax = j->cslots * j->cg * j->cw + 3 * j->cslots; /* the cache and its tags */
	if (kmax)
		*scratch += (int64_t)(j->rows_bytes + (size_t)(nw + lmax) * sizeof(double));
	return true;
}

/* Chunk and block sizes, blocks per phase, and the channel chunks that give every thread
 * a few items. */
static int64_t f64_split(struct f64_job *j, int threads, int64_t block_positions)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t nw = j->kern->nw;
	int64_t items;
	j->kc = CONVT_F64_KC; /* the packed weights' chunks; a panel's x chunk stays in L1 */
	j->pb = block_positions / nw > 1 ? block_positions / nw : 1;
	j->tblk = 0;
	for (int64_t ph = 0; ph < j->nphase; ph++) {
		j->nblk[ph] = (j->npos[ph] + j->pb * nw - 1) / (j->pb * nw);
		j->tblk += ph % j->sgrp ? 0 : j->nblk[ph];
	}
	items = g->batch * g->group * j->tblk;
	j->mchunks = 1;
	j->mchunk = j->nmb;
	if (items < F64_CHUNKED_ITEMS * threads && threads > 1) {
		int64_t want = (F64_CHUNKED_ITEMS * threads + items - 1) / items;
		want = want > j->nmb ? j->nmb : want;
		j->mchunk = (j->nmb + want - 1) / want;
		j->mchunks = (j->nmb + j->mchunk - 1) / j->mchunk;
	}
	return items * j->mchunks;
}

/* Whether the split (f64_split) suits a group of phases per item: its sums stay in L2, and with
 * several threads the groups give every thread several items without splitting channels
 * (measured slower at 2 threads: the items are twice as long). */
static bool f64_group_fits(const struct f64_job *j, int threads)
{
	const double acc = (double)j->mchunk * (double)(j->pb * j->kern->mb * j->kern->nw) * (double)j->sgrp;
	return acc * sizeof(double) <= F64_GROUP_ACC_BYTES &&
	       (threads == 1 || j->g->batch * j->g->group * j->tblk >= 4 * threads);
}

/* Whether the item stores (j->sgrp final) write y with the table's non-temporal stores: outputs
 * as large as L2 (the float32 phase path's threshold), so y's lines are not read before being
 * written over and do not evict the x lines, weights and sums the next items read; stored
 * phase by phase or in groups of 2 phases. Measured (bench/README.md, "Measurements behind
 * fixed choices"): k3s1p1 and unet's k2s2 0.80-0.97x; groups of 8 (hifigan's k16s8) 1.02-1.08x,
 * so those keep plain stores. */
static bool f64_streams(const struct f64_job *j, const struct onnxrun__f64_kernels *fk)
{
	const struct onnxrun__convt_geom *g = j->g;
	return fk->store_stream && j->sgrp <= 2 &&
	       (uint64_t)g->batch * (uint64_t)g->out_channels * (uint64_t)j->out_sp * sizeof(double) >=
	               onnxrun__tuning()->stream_output_bytes;
}

static enum onnxrun_status f64_compute(const struct convt_call *c, const struct onnxrun__convt_packed *pk)
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const struct onnxrun__f64_kernels *fk;
	struct f64_job j;
	enum onnxrun_status st = ONNXRUN_OK;
	int64_t *buf = NULL, words = 0, scratch, items, grid = 1;
	int threads = onnxrun__op_plan_threads(ctx);
	double work;

	memset(&j, 0, sizeof j);
	j.g = g;
	j.n = g->n;
	j.last = g->n - 1;
	j.cg = g->in_channels / g->group;
	j.mg = g->out_channels / g->group;
	j.x = c->x;
	j.bias = c->b;
	j.y = c->y;
	j.kprod = j.nphase = j.in_sp = j.out_sp = 1;
	for (int32_t a = j.n - 1; a >= 0; a--) {
		j.ys[a] = j.out_sp;
		j.out_sp *= g->out[a];
		j.xs[a] = j.in_sp;
		j.in_sp *= g->in[a];
		j.kprod *= g->kernel[a];
		j.nphase *= g->strides[a];
		grid *= convt_ceil_div(g->out[a], g->strides[a]);
	}
	fk = c->kt->f64;
	j.kern = pick_kernel(fk, j.mg, grid);
	j.store = fk->store;
	j.store_group = fk->store_group;
	j.nmb = pk->mpanels;
	j.wpk = pk->a64;
	j.woff = pk->a_off;
	j.wgroup = pk->a_group;
	words = j.nphase * (2 * S + 8) + j.kprod * j.n;
	if ((st = onnxrun__convt_taps_make(ctx->env, g, &j.tp)) == ONNXRUN_ERROR_OUT_OF_MEMORY)
		goto oom;
	if (st) /* more phases than the decomposition takes: accepts() keeps them away */
		goto out;
	if (!(buf = onnxrun__calloc(ctx->env, (size_t)words, sizeof *buf)))
		goto oom;
	f64_layout(&j, buf);
	/* multiply-adds in all: below ~64K, waking the workers costs more than it saves */
	work = (double)g->batch * (double)g->out_channels * (double)j.out_sp * (double)j.cg *
	       (double)j.kprod / (double)j.nphase;
	if (work < 65536.0)
		threads = 1;
	j.sgrp = f64_groupable(&j) ? g->strides[j.last] : 1;
	items = f64_split(&j, threads, F64_BLOCK_POSITIONS);
	/* a group's sums that would not stay in L2 (hifigan's 8 phases: 1 MiB at 128 positions), or
	 * too few groups for the threads: shorter blocks, down to F64_GROUP_MIN_POSITIONS, before
	 * giving up the group stores (below). On 1 thread only with the table's store_group (its
	 * register transposes: hifigan_256 0.85x); the plain loop's groups measured no faster than
	 * phase by phase there (bench/README.md, "Measurements behind fixed choices"). */
	while (j.sgrp > 1 && !f64_group_fits(&j, threads) && (threads > 1 || j.store_group) &&
	       j.pb / 2 * j.kern->nw >= F64_GROUP_MIN_POSITIONS)
		items = f64_split(&j, threads, j.pb / 2 * j.kern->nw);
	if (j.sgrp > 1 && !f64_group_fits(&j, threads)) {
		j.sgrp = 1;
		items = f64_split(&j, threads, F64_BLOCK_POSITIONS);
	}
	j.stream_fence = f64_streams(&j, fk) ? fk->stream_fence : NULL;
	if (j.stream_fence) {
		j.store = fk->store_stream;
		if (j.store_group && fk->store_group_stream) /* a table without it keeps its plain one */
			j.store_group = fk->store_group_stream;
	}
	if (!(j.bl_phase = onnxrun__calloc(ctx->env, (size_t)(2 * j.tblk), sizeof *j.bl_phase)))
		goto oom;
	j.bl_index = j.bl_phase + j.tblk;
	order_blocks(&j);
	if (!f64_sizes(&j, &scratch)) { /* absurd sizes: leave them to the scatter */
		st = ONNXRUN_ERROR_UNSUPPORTED;
		goto out;
	}
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, (size_t)scratch, &j.scratch_stride)))
		goto oom;
	/* nothing cached yet (x differs from run to run); the lines stay cached across a thread's
	 * calls of f64_items, which a run control or the pool makes one or a few items long */
	for (int t = 0; t < threads && j.cslots; t++) {
		int64_t *tags = f64_tags(&j, t);
		for (int64_t s = 0; s < j.cslots; s++)
			tags[3 * s] = -1;
	}
	st = onnxrun__op_parallel(ctx, threads, items, f64_items, &j);
	goto out;
oom:
	st = onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
	                        "out of memory allocating float64 scratch (panels, accumulators)");
out:
	onnxrun__free(ctx->env, j.scratch);
	onnxrun__free(ctx->env, j.bl_phase);
	onnxrun__free(ctx->env, buf);
	onnxrun__convt_taps_free(ctx->env, &j.tp);
	return st;
}

const struct convt_impl onnxrun__convt_f64 = { "float64 phase", ONNXRUN_DTYPE_DOUBLE, f64_accepts, CONVT_LAYOUT_F64,
	                                       NULL, f64_compute };
