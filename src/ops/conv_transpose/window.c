/*
 * window.c - the float32 window GEMM, for few output channels per group when every kernel
 * size is a multiple of its stride (rank 1 or 2, dilation 1).
 *
 * On an axis with kernel k = T*s, output o reads x at w - t for t < T, where
 * w = floor((o + pb) / s), with tap rho + s*t (rho = o + pb - s*w). So the s outputs
 * o = s*w - pb + rho, rho < s, of one "window position" w read the same T inputs, and every
 * output is one of them: the whole op is ONE GEMM per group, with
 *   rows    (rho0, output channel, rho1): mg * s0 * s1,
 *   K       (input channel, t per axis):    cg * T0 * T1 (no zero taps: the FLOPs of the op),
 *   columns the window positions (w0, w1),
 * B row (c, t0, t1) being x[c][w0 - t0][w1 - t1]. Per work item (a band of w0), x's rows
 * are staged once with their zero pads, [channel][row][slot], a row rs = nw1 + T1 - 1 slots
 * long; a column p = r*rs + j of the band (j >= nw1: junk, computed and dropped) then reads
 * B row (c, t0, t1) at stage + p + c*cs + (T0-1-t0)*rs + (T1-1-t1): one table of offsets,
 * the kernel table's rel tiles. There is no Z and no overlap-add: a tile's rows go straight
 * to their output positions (bias added), the s1 rows of one (channel, rho0) interleaved
 * into whole output lines. A panel of the first or last grid row alone runs only the rows
 * (those of the rho0 adjacent in the packing) whose outputs lie inside y. Where the kernel
 * table has tile_copy, the tiles of an item copy its own rows meanwhile, each staged row a
 * panel before the panel that reads it (win_items_overlap), so that the wait on x overlaps
 * the arithmetic; where it also has tile_out, the tiles add the bias and write their outputs
 * to y from their registers (the runs of win_segs), without a tile buffer or store calls.
 *
 * Each output is one tile column's dot product over K in one fixed order whichever band,
 * panel or lane holds it, so results do not depend on the thread count.
 */
#include <string.h>

#include "impl.h"

/* A work item's staged rows stay below this (in L2, one such buffer per thread). */
#define WIN_STAGE_BYTES (256 * 1024)
/* Rank 1 stages the whole signal as one band: longer ones go to the next entry. */
#define WIN_STAGE_MAX (2 * 1024 * 1024)
/* Entries of a thread's copy list (win_list): an item's rows, one per staged row. */
#define WIN_LIST_MAX(j) ((j)->nb + (j)->t[0] - 1)

struct win_job {
	const float *x, *bias, *a;
	float *y;
	const onnxrun__krel *rel;
	const struct onnxrun__gemm_kernels *kn;
	const onnxrun__gemm_rel_fn *tiles; /* the window tiles, else gemm rel */
	onnxrun__win_store_fn store;       /* NULL: a plain loop */
	const onnxrun__win_tile_copy_fn *tile_copy; /* NULL: each item stages its rows first */
	const onnxrun__win_tile_copy_fn *tile_half; /* tile_copy over nr[1] columns (NULL: none) */
#ifndef ONNXRUN_BAREMETAL
	onnxrun__win_tile_out_fn tile_out; /* tile_copy + store from the registers (NULL: none) */
#endif
	int64_t cin, mout, cg, mg, group, rows, kk, a_group;
	int64_t in[2], out[2], s[2], t[2], pb[2], wlo[2], nw[2];
	int64_t rs, cs, nb, nbands;
	char *scratch;
	size_t scratch_stride;
};

/* The slots of a staged row: x's columns [clo + zl, clo + zl + n) at slots [zl, zl + n), zeros
 * (the pads) around them. */
static void win_row_slots(const struct win_job *j, int64_t *zl, int64_t *n)
{
	const int64_t clo = j->wlo[1] - j->t[1] + 1, rs = j->rs;
	const int64_t zl0 = clo < 0 ? -clo : 0;
	*zl = zl0 > rs ? rs : zl0;
	*n = j->in[1] - (clo + *zl);
	*n = *n > rs - *zl ? rs - *zl : *n < 0 ? 0 : *n;
}

/* The slots past the staged rows of a band of nbr grid rows that its last panel reads (junk
 * columns, dropped, but read): up to slot `end` of each channel. */
static inline void win_zero_tail(const struct win_job *j, float *st, int64_t nbr, int64_t c0, int64_t c1)
{
	const int64_t nr = j->kn->nr[0], from = (nbr + j->t[0] - 1) * j->rs;
	int64_t end = (nbr * j->rs + nr - 1) / nr * nr + (j->t[0] - 1) * j->rs + j->t[1] - 1;
	end = end < j->cs ? end : j->cs;
	for (int64_t c = c0; c < c1 && end > from; c++)
		convt_zero_row(st + c * j->cs + from, end - from);
}

/* The pad slots of staged rows [r0, r1) of channels [c0, c1) zero. */
static void win_zero_pads(const struct win_job *j, float *st, int64_t c0, int64_t c1, int64_t r0, int64_t r1)
{
	const int64_t rs = j->rs;
	int64_t zl, n;
	win_row_slots(j, &zl, &n);
	const int64_t zr = rs - zl - n;
	if (zl <= 2 && zr <= 2) { /* pads of a float or two (T1 of 2 or 3): the stores alone */
		for (int64_t c = c0; c < c1; c++) {
			float *dc = st + c * j->cs;
			for (int64_t r = r0; r < r1; r++) {
				float *d = dc + r * rs, *e = d + zl + n;
				if (zl > 0)
					d[0] = 0.0f;
				if (zl > 1)
					d[1] = 0.0f;
				if (zr > 0)
					e[0] = 0.0f;
				if (zr > 1)
					e[1] = 0.0f;
			}
		}
		return;
	}
	for (int64_t c = c0; c < c1; c++) {
		float *dc = st + c * j->cs;
		for (int64_t r = r0; r < r1; r++) {
			convt_zero_row(dc + r * rs, zl);
			convt_zero_row(dc + r * rs + zl + n, zr);
		}
	}
}

/* A thread's staged rows before its first item: the pad slots of every row zero, and the
 * slots past the rows that the last panel's columns read. Nothing writes another value there
 * afterwards (x goes to the slots between the pads, rows move by whole rows), so the items
 * copy only x's values. */
static void win_stage_init(const struct win_job *j, float *st)
{
	win_zero_pads(j, st, 0, j->cg, 0, j->nb + j->t[0] - 1);
	win_zero_tail(j, st, j->nb, 0, j->cg);
}

/* Stages rows [from, to) of the band whose first window row is w0 (row sr: x row
 * w0 - T0 + 1 + sr) of (b, grp) into st: x's values between the pads (win_stage_init), the
 * rows outside x zero. */
static void win_stage(const struct win_job *j, int64_t b, int64_t grp, int64_t w0, int64_t from, int64_t to,
                      float *st)
{
	const int64_t clo = j->wlo[1] - j->t[1] + 1, rs = j->rs;
	int64_t zl, n;
	win_row_slots(j, &zl, &n);
	for (int64_t c = 0; c < j->cg; c++) {
		const float *xc = j->x + ((b * j->cin + grp * j->cg + c) * j->in[0]) * j->in[1];
		float *dc = st + c * j->cs;
		for (int64_t sr = from; sr < to; sr++) {
			const int64_t xr = w0 - j->t[0] + 1 + sr;
			float *d = dc + sr * rs;
			if (xr < 0 || xr >= j->in[0]) {
				memset(d, 0, (size_t)rs * sizeof *d);
				continue;
			}
			convt_copy_row(d + zl, xc + xr * j->in[1] + clo + zl, n);
		}
	}
}

/* The runs of a panel's tile columns [0, np) (panel columns p0 + e of a band): each the
 * columns [cb, cb + len) of one grid row r of the band, window positions w1 = wlo1 + jj ..
 * + len (the junk columns past a row's nw1 positions left out). */
struct win_runs {
	int64_t e, np, r, jj;        /* the walk: next column e, its grid row r and slot jj */
	int64_t cb, len, row, slot;  /* the run win_run_next found */
};
static inline void win_runs_start(const struct win_job *j, int64_t p0, int64_t np, struct win_runs *u)
{
	u->e = 0;
	u->np = np;
	u->r = p0 / j->rs;
	u->jj = p0 % j->rs;
}
static inline bool win_run_next(const struct win_job *j, struct win_runs *u)
{
	while (u->e < u->np) {
		const int64_t len = j->rs - u->jj < u->np - u->e ? j->rs - u->jj : u->np - u->e;
		u->cb = u->e;
		u->row = u->r;
		u->slot = u->jj;
		u->e += len;
		u->r++; /* the next run starts a grid row */
		u->jj = 0;
		if (u->slot < j->nw[1]) {
			u->len = u->slot + len > j->nw[1] ? j->nw[1] - u->slot : len;
			return true;
		}
	}
	return false;
}

/* The GEMM rows [*lo, *hi) that tile columns [0, np) (panel columns p0 + e of the band
 * starting at grid row w0) have outputs inside y for: all of them but where the columns lie
 * in the first or last grid row alone (rho0 = o0 - (s0*w - pb0): those with output row o0 in
 * [0, out0) over the grid rows w of the columns, the rows of one rho0 adjacent). */
static void win_rows_in(const struct win_job *j, int64_t w0, int64_t p0, int64_t np, int64_t *lo, int64_t *hi)
{
	const int64_t s0 = j->s[0], per = j->mg * j->s[1]; /* rows per rho0 */
	struct win_runs run;
	int64_t first = -1, last = -1;
	*lo = 0;
	*hi = j->rows;
	/* columns in grid rows w0 + p0 / rs .. w0 + (p0 + np - 1) / rs: neither the first nor the
	 * last grid row alone, all rows */
	if (w0 + p0 / j->rs > j->wlo[0] && w0 + (p0 + np - 1) / j->rs < j->wlo[0] + j->nw[0] - 1)
		return;
	win_runs_start(j, p0, np, &run);
	while (win_run_next(j, &run)) {
		first = first < 0 ? run.row : first;
		last = run.row;
	}
	if (first < 0)
		return;
	/* rho0 >= -(s0*w - pb0) for the last grid row, rho0 < out0 - (s0*w - pb0) for the first */
	const int64_t a = j->pb[0] - s0 * (w0 + last), e = j->out[0] + j->pb[0] - s0 * (w0 + first);
	const int64_t ra = a < 0 ? 0 : a > s0 ? s0 : a, rb = e > s0 ? s0 : e < ra ? ra : e;
	if (rb > ra) {
		*lo = ra * per;
		*hi = rb * per;
	}
}

/* Writes tile columns [0, np) (panel columns p0 + e of the band starting at grid row w0)
 * of rows [r0, r0 + mr) to y, + bias. */
static void win_store(const struct win_job *j, int64_t b, int64_t grp, int64_t w0, int64_t p0, int64_t np,
                      const float *tile, int64_t r0, int64_t mr)
{
	const int64_t s0 = j->s[0], s1 = j->s[1], out0 = j->out[0], out1 = j->out[1];
	const int64_t nr = j->kn->nr[0];
	struct win_runs run;
	win_runs_start(j, p0, np, &run);
	while (win_run_next(j, &run)) {
		const int64_t r = run.row, jj = run.slot, cb = run.cb, len = run.len;
		/* window positions w1 = wlo1 + jj .. + len, outputs s1*w1 - pb1 + rho1 */
		const int64_t ob = s1 * (j->wlo[1] + jj) - j->pb[1];
		/* positions [lo, hi) have all s1 outputs in [0, out1): one interleaving store per
		 * (channel, rho0); the few outside it, output by output */
		int64_t lo = ob < 0 ? (-ob + s1 - 1) / s1 : 0, hi = ob + s1 * len <= out1 ? len : (out1 - ob) / s1;
		lo = lo > len ? len : lo;
		hi = hi < lo ? lo : hi;
		/* tile rows i = (rho0*mg + m)*s1 + rho1 for i in [r0, r0 + mr), whole groups of s1 */
		for (int64_t i = r0, m = r0 / s1 % j->mg, rho0 = r0 / (s1 * j->mg); i < r0 + mr; i += s1) {
			const int64_t o0 = s0 * (w0 + r) - j->pb[0] + rho0;
			const int64_t ch = grp * j->mg + m;
			const float *t0 = tile + (i - r0) * nr + cb;
			if (++m == j->mg) {
				m = 0;
				rho0++;
			}
			if (o0 < 0 || o0 >= out0)
				continue;
			float *yrow = j->y + ((b * j->mout + ch) * out0 + o0) * out1;
			const float bv = j->bias ? j->bias[ch] : 0.0f;
			if (hi > lo) {
				if (j->store)
					j->store(t0 + lo, nr, s1, hi - lo, yrow + ob + s1 * lo, bv);
				else
					for (int64_t rho1 = 0; rho1 < s1; rho1++)
						for (int64_t u = lo; u < hi; u++)
							yrow[ob + s1 * u + rho1] = t0[rho1 * nr + u] + bv;
			}
			for (int64_t part = 0; part < 2; part++)
				for (int64_t u = part ? hi : 0; u < (part ? len : lo); u++)
					for (int64_t rho1 = 0; rho1 < s1; rho1++) {
						const int64_t o = ob + s1 * u + rho1;
						if (o >= 0 && o < out1)
							yrow[o] = t0[rho1 * nr + u] + bv;
					}
		}
	}
}

/* Work item `it`'s place: band `band` of the grid rows of image b's group grp (bg = b * group +
 * grp), its first grid row w0 and its nbr grid rows (fewer in the last band). */
struct win_item {
	int64_t band, bg, b, grp, w0, nbr;
};
static inline struct win_item win_item_at(const struct win_job *j, int64_t it)
{
	struct win_item w;
	w.band = it % j->nbands;
	w.bg = it / j->nbands;
	w.b = w.bg / j->group;
	w.grp = w.bg % j->group;
	w.w0 = j->wlo[0] + w.band * j->nb;
	w.nbr = j->nw[0] - w.band * j->nb < j->nb ? j->nw[0] - w.band * j->nb : j->nb;
	return w;
}

/* Items in order. Each stages its band's x rows, then runs the panels over them (staging
 * the rows as the panels come to need them was slower: fsrcnn 1.24x). The T0 - 1 rows a
 * band shares with the one before are moved from the previous item's staged rows when this
 * thread ran it (its (b, grp) and band kept at the front of the scratch), not read from x
 * again. */
static void win_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct win_job *j = arg;
	const struct onnxrun__gemm_kernels *kn = j->kn;
	const int64_t nr = kn->nr[0], mrx = kn->mr_max, rs = j->rs, t0 = j->t[0];
	int64_t *last = (int64_t *)(j->scratch + (size_t)tid * j->scratch_stride);
	float *st = (float *)(last + 16), *tile = st + j->cg * j->cs;
	for (int64_t it = begin; it < end; it++) {
		const struct win_item w = win_item_at(j, it);
		const int64_t band = w.band, bg = w.bg, b = w.b, grp = w.grp, w0 = w.w0, nbr = w.nbr;
		const int64_t np = nbr * rs, srows = nbr + t0 - 1;
		const float *ag = j->a + grp * j->a_group;
		int64_t staged = 0; /* rows [0, staged) kept from the previous band */
		if (t0 > 1 && last[0] == bg && last[1] == band - 1) {
			for (int64_t c = 0; c < j->cg; c++)
				memmove(st + c * j->cs, st + c * j->cs + j->nb * rs, (size_t)((t0 - 1) * rs) * sizeof *st);
			staged = t0 - 1;
		}
		if (last[0] < 0)
			win_stage_init(j, st);
		/* a band of fewer rows (the last): the slots past them that its last panel reads */
		if (nbr < j->nb)
			win_zero_tail(j, st, nbr, 0, j->cg);
		win_stage(j, b, grp, w0, staged, srows, st);
		for (int64_t p0 = 0; p0 < np; p0 += nr) {
			const int64_t cnt = np - p0 < nr ? np - p0 : nr;
			int64_t in_lo, in_hi;
			win_rows_in(j, w0, p0, cnt, &in_lo, &in_hi);
			for (int64_t r0 = 0; r0 < j->rows; r0 += mrx) {
				/* the panel's rows [r0, r0 + mrx) inside y: rows [lo, hi), at a[lo - r0] */
				const int64_t lo = r0 > in_lo ? r0 : in_lo, hi = r0 + mrx < in_hi ? r0 + mrx : in_hi;
				if (hi <= lo)
					continue;
				j->tiles[hi - lo - 1](j->kk, ag + r0 * j->kk + (lo - r0), (const char *)(st + p0), j->rel, tile,
				                      nr);
				win_store(j, b, grp, w0, p0, cnt, tile, lo, hi - lo);
			}
		}
		last[0] = bg;
		last[1] = band;
	}
}

/* Lists the rows item `it` stages into st (x's values between the pads, win_stage_init), an
 * entry per staged row (every channel's), rowend[sr] then the entries listed up to staged row
 * sr. All come from x: the T0 - 1 rows a band shares with the band before, moved from that
 * band's rows before any tile, cost fsrcnn 1.056x at 2 threads (the move waits; x's rows are
 * copied during the tiles). Writes the rest at once: the rows outside x zero, and for a band
 * of fewer rows (the last) the slots past them that its last panel reads. Returns the entries
 * listed (rows of win_row_slots' n floats). */
static int64_t win_list(const struct win_job *j, int64_t it, float *st, struct onnxrun__win_row *list, int64_t *rowend)
{
	const struct win_item w = win_item_at(j, it);
	const int64_t t0 = j->t[0], rs = j->rs, cg = j->cg, cs = j->cs, srows = w.nbr + t0 - 1;
	const int64_t clo = j->wlo[1] - j->t[1] + 1, xs = j->in[0] * j->in[1], x0 = w.w0 - t0 + 1; /* x row of sr 0 */
	const float *x = j->x + (w.b * j->cin + w.grp * cg) * xs;
	int64_t zl, n, ents = 0;
	win_row_slots(j, &zl, &n);
	/* staged rows [0, lo) and [hi, srows) outside x (zero), [lo, hi) from x */
	int64_t lo = x0 < 0 ? -x0 : 0, hi = j->in[0] - x0 < srows ? j->in[0] - x0 : srows;
	lo = lo < srows ? lo : srows;
	hi = hi > lo ? hi : lo;
	if (w.nbr < j->nb)
		win_zero_tail(j, st, w.nbr, 0, cg);
	for (int64_t c = 0; c < cg; c++) {
		for (int64_t sr = 0; sr < lo; sr++)
			convt_zero_row(st + c * cs + sr * rs, rs);
		for (int64_t sr = hi; sr < srows; sr++)
			convt_zero_row(st + c * cs + sr * rs, rs);
	}
	for (int64_t sr = 0; sr < srows; sr++) {
		if (sr >= lo && sr < hi && n) {
			list[ents].src = x + (x0 + sr) * j->in[1] + clo + zl;
			list[ents].dst = st + sr * rs + zl;
			list[ents].n = n;
			list[ents].reps = cg;
			list[ents].src_step = xs;
			list[ents++].dst_step = cs;
		}
		rowend[sr] = ents;
	}
	return ents;
}

/* Copies the rows of cp up to list entry `to` (and none past it). */
static void win_copy_to(struct onnxrun__win_copy *cp, const struct onnxrun__win_row *to)
{
	for (; cp->row < to; cp->row++, cp->rep = 0)
		for (const struct onnxrun__win_row *r = cp->row; cp->rep < r->reps; cp->rep++, cp->off = 0)
			convt_copy_row(r->dst + cp->rep * r->dst_step + cp->off, r->src + cp->rep * r->src_step + cp->off,
			               r->n - cp->off);
}

#ifndef ONNXRUN_BAREMETAL
/* tile_out's runs for tile columns [0, np) (panel columns p0 + e of the band starting at grid
 * row w0): the same outputs as win_store writes for rows [0, rows), each run a grid row's
 * columns with their outputs in [0, out1), group g (tile rows g*s1 ..) where its output row
 * o0 lies in [0, out0). Returns the runs. */
static int64_t win_segs(const struct win_job *j, int64_t w0, int64_t p0, int64_t np, struct onnxrun__win_seg *seg)
{
	const int64_t s0 = j->s[0], s1 = j->s[1], out0 = j->out[0], out1 = j->out[1], groups = j->rows / s1;
	int64_t ns = 0;
	struct win_runs run;
	win_runs_start(j, p0, np, &run);
	while (win_run_next(j, &run)) {
		const int64_t r = run.row, jj = run.slot, cb = run.cb, len = run.len;
		/* output o = base + q for tile output q = s1*column + rho1 */
		const int64_t base = s1 * (j->wlo[1] + jj) - j->pb[1] - s1 * cb;
		const int64_t qlo = s1 * cb > -base ? s1 * cb : -base;
		const int64_t qhi = s1 * (cb + len) < out1 - base ? s1 * (cb + len) : out1 - base;
		/* the groups whose output row lies in [0, out0): all of them but at the top and bottom */
		const int64_t o00 = s0 * (w0 + r) - j->pb[0];
		uint32_t gm = (uint32_t)(((uint64_t)1 << groups) - 1);
		if (o00 < 0 || o00 + s0 > out0) {
			gm = 0;
			for (int64_t g = 0; g < groups; g++)
				gm |= (uint32_t)(o00 + g / j->mg >= 0 && o00 + g / j->mg < out0) << g;
		}
		if (qhi <= qlo || !gm)
			continue;
		seg[ns].d = r * s0 * out1 + base;
		seg[ns].groups = gm;
		for (int64_t w = 0; w < 6; w++) { /* (vectors 2*s1 on: none) */
			const int64_t lo = qlo - 16 * w > 0 ? qlo - 16 * w : 0, hi = qhi - 16 * w < 16 ? qhi - 16 * w : 16;
			seg[ns].mask[w] = (uint16_t)(hi > lo ? ((1u << hi) - 1) & ~((1u << lo) - 1) : 0);
		}
		ns++;
	}
	return ns;
}

/* Prefetches for writing the lines of y that tile_out writes for the runs seg[0, ns), group g
 * at y + yg[g]: ahead of the tile that writes them, whose stores otherwise wait on the lines'
 * reads (y is written once per call: its lines are not in the cache). */
static void win_prefetch_out(const struct win_job *j, const int64_t *yg, const struct onnxrun__win_seg *seg, int64_t ns)
{
	for (int64_t e = 0; e < ns; e++) {
		int v0 = 0, v1 = 5;
		while (v0 < 6 && !seg[e].mask[v0])
			v0++;
		while (v1 > v0 && !seg[e].mask[v1])
			v1--;
		if (v0 == 6)
			continue;
		for (int64_t g = 0; g < j->rows / j->s[1]; g++) {
			if (!(seg[e].groups >> g & 1))
				continue;
			const float *p = j->y + yg[g] + seg[e].d;
			for (int v = v0; v <= v1; v++)
				__builtin_prefetch(p + 16 * v, 1);
			__builtin_prefetch(p + 16 * v1 + 15, 1);
		}
	}
}
#endif

/* Items in order, each copying its own rows into the thread's stage buffer while its tiles
 * run (tile_copy): the rows listed grid row by grid row, each copied by the time a panel
 * reads it (only the first panel's rows before any tile), the pieces shared out over the
 * tiles and spread over their k steps, so that the wait on x overlaps the arithmetic. One
 * buffer whose rows are copied a panel before they are read was faster than two, each item
 * copying the next item's rows into the other while its tiles read its own (dcgan_64_3:
 * 0.965x): the rows a tile reads are those the copy wrote last. The pads (win_stage_init) are
 * written during the thread's first item, its rows' as its panels come to read them, a few
 * stores between tiles rather than a loop over the buffer's cold lines before the first
 * tile. */
static void win_items_overlap(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct win_job *j = arg;
	const struct onnxrun__gemm_kernels *kn = j->kn;
	const int64_t nr = kn->nr[0], mrx = kn->mr_max, rs = j->rs, t0 = j->t[0];
	const int64_t tiles_per_panel = (j->rows + mrx - 1) / mrx;
	int64_t *last = (int64_t *)(j->scratch + (size_t)tid * j->scratch_stride), zl, n;
	float *const st = (float *)(last + 16), *const tile = st + j->cg * j->cs;
	struct onnxrun__win_row *const list = (struct onnxrun__win_row *)(tile + mrx * nr);
	int64_t *const rowend = (int64_t *)(list + WIN_LIST_MAX(j));
	int64_t *const cum = rowend + (j->nb + t0 - 1); /* cum[e]: the rows of list entries [0, e) */
	cum[0] = 0;
	win_row_slots(j, &zl, &n);
	const int64_t per_row = (n + 15) / 16; /* pieces of a listed row */
	/* last[2]: the rows with their pads (every channel; all of them: and the slots past them,
	 * win_zero_tail) */
	const int64_t srows_max = j->nb + t0 - 1;
	if (last[0] < 0)
		last[0] = last[2] = 0;
#ifndef ONNXRUN_BAREMETAL
	struct onnxrun__win_seg segs[2][ONNXRUN__GEMM_NR_MAX]; /* a panel's runs, and the next panel's */
	int64_t yg[ONNXRUN__GEMM_MR_MAX], nsegs[2];
	float bg[ONNXRUN__GEMM_MR_MAX];
	int sc = 0;
	struct onnxrun__win_out out = { j->y, yg, bg, segs[0], 0, j->s[1] };
#endif
	for (int64_t it = begin; it < end; it++) {
		const struct win_item w = win_item_at(j, it);
		const int64_t b = w.b, grp = w.grp, w0 = w.w0, nbr = w.nbr;
		const int64_t np = nbr * rs, srows = nbr + t0 - 1;
		const float *ag = j->a + grp * j->a_group;
#ifndef ONNXRUN_BAREMETAL
		if (j->tile_out) /* group g (tile rows g*s1 ..): channel g % mg's output row s0*w0 - pb0 + g / mg */
			for (int64_t g = 0; g < j->rows / j->s[1]; g++) {
				const int64_t ch = grp * j->mg + g % j->mg;
				yg[g] = ((b * j->mout + ch) * j->out[0] + j->s[0] * w0 - j->pb[0] + g / j->mg) * j->out[1];
				bg[g] = j->bias ? j->bias[ch] : 0.0f;
			}
		if (j->tile_out)
			nsegs[sc] = win_segs(j, w0, 0, np < nr ? np : nr, segs[sc]);
#endif
		const int64_t listed = win_list(j, it, st, list, rowend);
		for (int64_t e = 0; e < listed; e++)
			cum[e + 1] = cum[e] + list[e].reps;
		struct onnxrun__win_copy cp = { list, list + listed, 0, 0, 1, 0 };
		const int64_t panels = (np + nr - 1) / nr;
		int64_t tiles = panels * tiles_per_panel;
		for (int64_t p0 = 0; p0 < np; p0 += nr) {
			const int64_t cnt = np - p0 < nr ? np - p0 : nr;
			int64_t in_lo, in_hi;
			win_rows_in(j, w0, p0, cnt, &in_lo, &in_hi);
			/* staged rows this panel reads: up to grid row (last column + T1 - 1) / rs, + T0 - 1 */
			const int64_t sr = (p0 + nr - 1 + j->t[1] - 1) / rs + t0 - 1;
			if (last[2] < (sr < srows ? sr + 1 : srows)) { /* (the thread's first item) */
				/* the rows this panel reads, in lines the copy of its rows then writes */
				win_zero_pads(j, st, 0, j->cg, last[2], sr < srows ? sr + 1 : srows);
				last[2] = sr < srows ? sr + 1 : srows;
				if (last[2] == srows_max)
					win_zero_tail(j, st, j->nb, 0, j->cg);
			}
			win_copy_to(&cp, list + rowend[sr < srows ? sr : srows - 1]);
			/* the rows the next panel reads: copied by the end of this one */
			const int64_t sn = (p0 + 2 * nr - 1 + j->t[1] - 1) / rs + t0 - 1;
			const int64_t need = cum[rowend[sn < srows ? sn : srows - 1]] - cum[cp.row - list] - cp.rep;
			for (int64_t r0 = 0; r0 < j->rows; r0 += mrx, tiles--) {
				/* the panel's rows [r0, r0 + mrx) inside y: rows [lo, hi), at a[lo - r0] */
				const int64_t lo = r0 > in_lo ? r0 : in_lo, hi = r0 + mrx < in_hi ? r0 + mrx : in_hi;
				if (hi <= lo)
					continue;
				const int64_t mr = hi - lo;
				const int64_t left = ((cum[listed] - cum[cp.row - list] - cp.rep) * per_row * 16 - cp.off + 15) / 16;
				int64_t share = (left + tiles - 1) / tiles;
				if (share < need * per_row)
					share = need * per_row;
				cp.pieces = share;
				cp.every = share <= 0 ? j->kk : j->kk / share > 1 ? j->kk / share : 1;
				/* a band's last panel of at most nr[1] columns: the narrower tile, its FMAs alone */
				const bool half = j->tile_half && cnt <= kn->nr[1];
#ifndef ONNXRUN_BAREMETAL
				if (j->tile_out) { /* one row panel (r0 = 0): its groups from lo / s1 on */
					const int64_t g0 = lo / j->s[1];
					out.seg = segs[sc];
					out.nseg = nsegs[sc];
					for (int64_t e = 0; e < out.nseg; e++)
						segs[sc][e].groups >>= g0;
					out.yg = yg + g0;
					out.bias = bg + g0;
					if (p0 + nr < np) { /* the next panel's runs, their lines of y fetched meanwhile */
						nsegs[sc ^ 1] = win_segs(j, w0, p0 + nr, np - p0 - nr < nr ? np - p0 - nr : nr, segs[sc ^ 1]);
						win_prefetch_out(j, yg, segs[sc ^ 1], nsegs[sc ^ 1]);
					}
					j->tile_out(j->kk, ag + lo, mr, half, (const char *)(st + p0), j->rel, &cp, &out);
					sc ^= 1;
					continue;
				}
#endif
				const onnxrun__win_tile_copy_fn f = half ? j->tile_half[mr - 1] : j->tile_copy[mr - 1];
				f(j->kk, ag + r0 * j->kk + (lo - r0), (const char *)(st + p0), j->rel, tile, nr, &cp);
				win_store(j, b, grp, w0, p0, cnt, tile, lo, mr);
			}
		}
		win_copy_to(&cp, cp.end); /* what the tiles left (few k steps per piece) */
		if (last[2] < srows_max) { /* (a first band of fewer rows) */
			win_zero_pads(j, st, 0, j->cg, last[2], srows_max);
			win_zero_tail(j, st, j->nb, 0, j->cg);
			last[2] = srows_max;
		}
	}
}

static enum onnxrun_status win_compute(const struct convt_call *c, const struct onnxrun__convt_packed *pk)
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const struct onnxrun__gemm_kernels *kn = c->kt->gemm;
	const int threads = onnxrun__op_plan_threads(ctx);
	const int64_t mrx = kn->mr_max, nr = kn->nr[0];
	struct win_job j;
	enum onnxrun_status st;
	int64_t k[2], row_bytes;
	onnxrun__krel *rel;

	memset(&j, 0, sizeof j);
	j.x = c->x;
	j.bias = c->b;
	j.y = c->y;
	j.kn = kn;
	j.tiles = c->kt->window ? c->kt->window->tile : kn->rel;
	j.store = c->kt->window ? c->kt->window->store : NULL;
	/* (a build with the scalar table alone has none: the overlapped items left out, flash) */
	j.tile_copy = !ONNXRUN__KERNELS_SCALAR_ONLY && c->kt->window && c->kt->window->tile_copy[0]
	                      ? c->kt->window->tile_copy
	                      : NULL;
#ifndef ONNXRUN_BAREMETAL /* (none there: flash) */
	j.tile_half = j.tile_copy && c->kt->window->tile_copy_half[0] ? c->kt->window->tile_copy_half : NULL;
#endif
	j.cin = g->in_channels;
	j.mout = g->out_channels;
	j.group = g->group;
	j.cg = g->in_channels / g->group;
	j.mg = g->out_channels / g->group;
	for (int ax = 0; ax < 2; ax++) {
		const int src = g->n == 2 ? ax : 0;
		const bool real = g->n == 2 || ax == 1;
		j.in[ax] = real ? g->in[src] : 1;
		j.out[ax] = real ? g->out[src] : 1;
		k[ax] = real ? g->kernel[src] : 1;
		j.s[ax] = real ? g->strides[src] : 1;
		j.pb[ax] = real ? g->pad_begin[src] : 0;
		j.t[ax] = k[ax] / j.s[ax];
		j.wlo[ax] = convt_floor_div(j.pb[ax], j.s[ax]);
		j.nw[ax] = convt_floor_div(j.out[ax] - 1 + j.pb[ax], j.s[ax]) - j.wlo[ax] + 1;
	}
	j.rows = j.mg * j.s[0] * j.s[1];
#ifndef ONNXRUN_BAREMETAL
	/* tiles that write y from their registers: strides of 1 to 3 on the last axis */
	j.tile_out = j.tile_copy && c->kt->window->tile_out && j.s[1] <= 3 ? c->kt->window->tile_out : NULL;
#endif
	j.kk = j.cg * j.t[0] * j.t[1];
	/* a staged row's slots: x columns wlo1 - T1 + 1 .. + nw1 + T1 - 1, its first zl and last zr
	 * outside x (zero); where both ends have zeros, a row's last zero slots are the next row's
	 * first (up to T1 - 1 of them), fewer columns computed and dropped */
	j.rs = j.nw[1] + j.t[1] - 1;
#ifndef ONNXRUN_BAREMETAL /* (flash) */
	{
		const int64_t clo = j.wlo[1] - j.t[1] + 1;
		const int64_t zl = clo < 0 ? -clo : 0, zr = clo + j.rs > j.in[1] ? clo + j.rs - j.in[1] : 0;
		int64_t ov = zl < zr ? zl : zr;
		ov = ov < j.t[1] - 1 ? ov : j.t[1] - 1;
		j.rs -= ov;
	}
#endif
	/* grid rows per band: the staged rows within WIN_STAGE_BYTES, and at least 4 items per
	 * thread where the rows allow */
	row_bytes = j.cg * j.rs * (int64_t)sizeof(float);
	j.nb = (int64_t)WIN_STAGE_BYTES / row_bytes - (j.t[0] - 1);
	j.nb = j.nb < 1 ? 1 : j.nb > j.nw[0] ? j.nw[0] : j.nb;
	{
		const int64_t per = g->batch * g->group, want = 4 * threads;
		if (per * ((j.nw[0] + j.nb - 1) / j.nb) < want) {
			int64_t nb = (j.nw[0] * per + want - 1) / want;
			nb = nb < 1 ? 1 : nb;
			j.nb = nb < j.nb ? nb : j.nb;
		}
	}
	j.nbands = (j.nw[0] + j.nb - 1) / j.nb;
	/* a channel's staged rows, then the slots the last panel's columns read past them */
	j.cs = (j.nb + j.t[0] - 1) * j.rs + j.t[1] + nr;
	j.cs = (j.cs + 15) / 16 * 16;
	if (j.cs % 256 == 0)
		j.cs += 16; /* channel blocks 1 KiB apart or more would share L1 sets */
	if ((uint64_t)j.cg * (uint64_t)j.cs * sizeof(float) > WIN_STAGE_MAX)
		return ONNXRUN_ERROR_UNSUPPORTED;

	/* the weights as packed (packing.h, window layout) */
	j.a = pk->a;
	j.a_group = pk->a_group;
	if (!(rel = onnxrun__malloc(ctx->env, (size_t)j.kk * sizeof *rel)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	for (int64_t ci = 0; ci < j.cg; ci++)
		for (int64_t t0 = 0; t0 < j.t[0]; t0++)
			for (int64_t t1 = 0; t1 < j.t[1]; t1++)
				rel[(ci * j.t[0] + t0) * j.t[1] + t1] = (onnxrun__krel)(
					(ci * j.cs + (j.t[0] - 1 - t0) * j.rs + (j.t[1] - 1 - t1)) * (int64_t)sizeof(float));
	j.rel = rel;
	/* per thread: its state, the stage buffer, a tile, and with tile_copy the row list */
	if (!(j.scratch = onnxrun__convt_scratch(
	              ctx, threads,
	              16 * sizeof(int64_t) + (size_t)(j.cg * j.cs + mrx * nr) * sizeof(float) +
	                      (j.tile_copy ? (size_t)WIN_LIST_MAX(&j) * (sizeof(struct onnxrun__win_row) + sizeof(int64_t)) +
	                                             (size_t)(j.nb + j.t[0]) * sizeof(int64_t)
	                                   : 0),
	              &j.scratch_stride))) {
		onnxrun__free(ctx->env, rel);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	for (int t = 0; t < threads; t++) /* no item run yet: nothing to reuse */
		*(int64_t *)(j.scratch + (size_t)t * j.scratch_stride) = -1;
	st = onnxrun__op_parallel(ctx, threads, g->batch * g->group * j.nbands, j.tile_copy ? win_items_overlap : win_items,
	                          &j);
	onnxrun__free(ctx->env, j.scratch);
	onnxrun__free(ctx->env, rel);
	return st;
}

/* ---- the entry ---------------------------------------------------------------------------- */

/* Rows of the one GEMM (mg * s0 * s1) that fill most of one register tile: fewer leave the
 * tile mostly empty (the phase and col2im paths do better), more than mr_max read every B
 * panel once per row panel. */
#define WIN_MIN_ROWS 8
#define WIN_MIN_CG 4

static const char *win_accepts(const struct convt_query *q)
{
	const struct onnxrun__convt_geom *g = q->g;
	const struct onnxrun__gemm_kernels *kn = q->kt->gemm;
	if (g->n < 1 || g->n > 2)
		return "not 1-D or 2-D";
	if (!kn->rel[0])
		return "the kernel table has no tiles reading B at offsets";
	for (int32_t a = 0; a < g->n; a++)
		if (g->dilations[a] != 1 || g->kernel[a] < g->strides[a] || g->kernel[a] % g->strides[a])
			return "a kernel size is not a multiple of its stride (or dilation is not 1)";
	const int64_t cg = g->in_channels / g->group, rows = g->out_channels / g->group * convt_product(g->strides, g->n);
	if (cg < WIN_MIN_CG || rows < WIN_MIN_ROWS || rows > kn->mr_max)
		return "not one register tile of output channels x phases from many input channels";
	return onnxrun__convt_positions_decline(g, false);
}

const struct convt_impl onnxrun__convt_window = { "float32 window GEMM", ONNXRUN_DTYPE_FLOAT, win_accepts,
	                                          CONVT_LAYOUT_WINDOW, NULL, win_compute };
