/*
 * phase.c - the float32 phase GEMM entry: each phase of the decomposition (taps.h) is an
 * implicit GEMM, M = output channels of a group, N = positions (batch x the phase's grid),
 * K = input channels of a group x the phase's taps, on weights packed in the phase layout
 * (packing.h). For each (group, phase, panel of up to nr positions), prepare the B panel (K
 * rows of nr floats, zeros where the tap falls outside x: packed, or read in place from x as
 * row pointers or masked half-rows) and run the micro-kernel over every panel of mr output
 * channels; the epilogue adds the bias and stores into the phase's strided output positions
 * (two phases whose outputs interleave are stored together). Large weights run over several B panels at
 * a time. Every output element is written by exactly one work item, as one dot product over
 * K in order, so results do not depend on the thread count. Where border.h's rule applies,
 * the first axis's border positions run as jobs of their own without the taps that read
 * padding, together with the interior in one parallel run (phase_compute).
 */
#include <string.h>

#include "border.h"
#include "impl.h"

/* Spatial axes the phase path takes. On bare metal 3 (1-D to 3-D convolutions; the scatter
 * takes more): its per-panel segment records and plan arrays are sized by it, and on a
 * microcontroller they are RAM (32 segments of 10 axes were 2.8 KB of the upsampler's
 * workspace). */
#ifdef ONNXRUN_BAREMETAL
#define S 3
#else
#define S ONNXRUN__CONVT_MAX_SPATIAL
#endif
/* Threads the work split is planned for: a border.h job run together with the others
 * (border_items) is split as for one thread, the threads sharing out the jobs' items. */
#ifdef ONNXRUN_BAREMETAL
#define SPLIT_THREADS threads
#else
#define SPLIT_THREADS (defer ? 1 : threads)
#endif
/* Sets of B panels an item prepares: the class's and, for a pair (pair_classes), its
 * partner's. On bare metal only as many as the job uses (RAM); elsewhere always both, the
 * scratch layout the x86 tuning was measured with. */
#ifdef ONNXRUN_BAREMETAL
#define PANEL_SETS(j) (IN_PLACE && (j)->paired ? 2 : 1)
#else
#define PANEL_SETS(j) 2
#endif
/* On bare metal an item's scratch holds only what the job uses (RAM): copy plans, runs and
 * segments for the most segments a panel can have (not nr of each), tiles of as many rows
 * as the job's weight panels have (not mr_max), the second tile only when a pair is
 * stored, the row pointers only for the modes that read them, and for a staged job whose
 * panels all lie in whole grid rows (every panel at base + offset) no packed panels or
 * copy plans at all; the staging area holds the rows the tiles read.
 * Elsewhere the layout the x86 tuning was measured with. */
#if defined(ONNXRUN_BAREMETAL) || defined(ONNXRUN_SIZED_PHASE_SCRATCH)
#define SIZED_SCRATCH 1 /* ONNXRUN_SIZED_PHASE_SCRATCH: a host build's ASan checks it */
#else
#define SIZED_SCRATCH 0
#endif
/* The staging area's alignment in an item's scratch and the line in front of it that holds
 * its key (the tile it holds): a cache line on the host; on bare metal 16 bytes, which the
 * key and Helium's vector loads need (a Cortex-M55 has no cache line to keep apart; RAM). */
#ifdef ONNXRUN_BAREMETAL
#define STAGE_LINE 16
#else
#define STAGE_LINE 64
#endif
/* most B panels prepared at a time (two sets of struct panel on the stack of each item: a
 * microcontroller's stack gets fewer; one with the scalar kernels alone, where several
 * serve only caches that a Cortex-M4 does not have: plan_split) */
#ifdef ONNXRUN_BAREMETAL
#define MAX_NB (ONNXRUN__KERNELS_SCALAR_ONLY ? 1 : 4)
#else
#define MAX_NB 16
#endif
/* B panels an item prepares at a time (plan_split) */
#define ITEM_NB(j) (MAX_NB > 1 ? (j)->nb : 1)
/* Bounds on the searches that find phases sharing B panels (quadratic in the phases) and
 * phases whose outputs interleave (cubic in the classes); beyond them each phase runs
 * alone, which is correct, only slower. Layers have a few phases. */
#define GROUP_MAX_PHASES 256
#define PAIR_MAX_CLASSES 64
/* Most multiply-adds in one work item (a few milliseconds at the AVX-512 peak): the
 * smallest step at which a run can stop (onnxrun_session_cancel, deadlines). */
#define ITEM_MAX_FMAS (convt_real)(1 << 28)
/* The B panel modes beyond packing (rows and half-rows in place, offsets into a staged copy
 * of x or into x) and the paired stores: only in builds whose kernel tables may have their
 * entries (kernels.h); with the scalar table alone their planning folds away (flash). */
#define IN_PLACE (!ONNXRUN__KERNELS_SCALAR_ONLY)
/* Whole-line stores of the phases of a last axis of stride 3 to 16 (the table's store_lines,
 * line_classes): not on bare metal, where no kernel table has them (flash). */
#ifdef ONNXRUN_BAREMETAL
#define LINES 0
#define LINES_FREE(env, p) ((void)0)
#else
#define LINES IN_PLACE
#define LINES_FREE(env, p) onnxrun__free(env, p)
#endif
/* A staged x with a slot for every input row of the group (plan_staging, stage_whole), not
 * one tile's rows: each row copied once per thread instead of once per tile that reads it
 * (a tile of k3 s2 rows also stages the rows its neighbours read). Not on bare metal (RAM:
 * one tile's rows). -DSTAGE_WHOLE=0 builds the per-tile staging for A/B measurements. */
#ifndef STAGE_WHOLE
#define STAGE_WHOLE 1
#endif
/* The next group's staged rows fetched ahead (fetch_rows): not on bare metal (no whole-group
 * staging) nor in WebAssembly (no prefetch instruction: the calls would only cost). */
#if defined(ONNXRUN_BAREMETAL) || defined(__EMSCRIPTEN__)
#define FETCH_AHEAD 0
#else
#define FETCH_AHEAD 1
#endif

/* The layouts for AVX-512's skip_quarter tile (panel_skip, and border jobs with the image
 * innermost: img_segs, img_pack, tile_store): compiled out where no kernel table has that
 * tile, bare metal (flash) and WebAssembly (the web package's size limit). */
#if defined(ONNXRUN_BAREMETAL) || defined(__EMSCRIPTEN__)
#define SKIP_TILE 0
#else
#define SKIP_TILE 1
#endif

/* Where the runs of a panel start in the grid: batch b and grid position q[] of the run's
 * first element (the runs themselves, columns and output offsets, are struct onnxrun__krun). */
struct seg {
	onnxrun__koff q[S]; /* 32-bit on bare metal, like the runs (kernels.h) */
	onnxrun__koff b;
};

#if SIZED_SCRATCH
/* Element counts of an item's scratch, in its order: packed B panels, two tiles, runs and
 * segments, copy plans, row pointers and masks. */
struct scratch_counts {
	int64_t bp, tile, tile2, runs, cp, ptrs;
};

#endif

struct phase_job {
	const struct onnxrun__convt_geom *g;
	const struct onnxrun__convt_packed *pk;
	const float *x, *bias;
	float *y;
	int64_t cg, in_sp, out_sp, xs[S], ys[S];
	int64_t *qlo, *qn, *npos, *rep; /* per phase: q_lo[S], Q[S], positions, B-sharing representative */
	int64_t *yres, *rlast; /* per phase: sum of residue x output stride over the axes, last-axis residue */
	const struct onnxrun__kernels *kt;
	struct onnxrun__kpanel kp; /* what the kernels' pack and store routines need */
	int64_t nrows, trows, ntiles, mchunks, mchunk; /* mchunk: weight panels per item */
	int64_t nb; /* B panels prepared at a time */
	int64_t nclass, *classes; /* representatives of the phase classes with positions */
	bool chunk_major; /* items ordered channel chunk first (choose_order) */
	int64_t *partner; /* per class: the phase run with it and stored interleaved, or -1 */
	int64_t *mate;    /* per phase of a class with a partner: the partner's phase stored with it */
	bool paired;      /* some class has a partner */
	/* line stores (LINES, line_classes): per class leader phase, how many lines its item
	 * stores (0: none) and where they start in line_ph (the phases of each line, ordered
	 * by their output offset in it: sl per line) and line_yd (each line's ydelta from the
	 * leader's runs); line_offset: the s tiles' buffer in a thread's scratch (bytes) */
	bool lines, lines2; /* some class stores lines; some with a partner class */
	int64_t *nline, *line_at, *line_ph, *line_yd;
	size_t line_offset;
	bool halves;      /* B panels may be read in place as masked half-rows (PANEL_HALVES) */
	bool rows;        /* B panels may be read in place as whole rows (PANEL_ROWS) */
	char *scratch;
	size_t scratch_stride;
	/* staged x (rows mode, 2-D or more, batch 1): per item, the input rows (first spatial
	 * axis) it reads copied as [row][channel][the other axes, each with zero pads]: axis a
	 * (a >= 1) starts st_pad[a] elements in, is st_ext[a] long and st_str[a] apart; one
	 * channel's block is st_plane floats */
	bool staged;
	int64_t st_pad[S], st_ext[S], st_str[S], st_plane, st_rows, st_dymin, st_dymax;
	size_t st_offset; /* byte offset of the staging area in a thread's scratch */
#ifndef ONNXRUN_BAREMETAL
	int64_t border_align; /* a border.h job's tile alignment in output rows (border_align), else 0 */
#endif
#ifndef ONNXRUN_BAREMETAL
	/* STAGE_WHOLE: the area has a slot for every input row an item of the group reads
	 * (row i at slot i - st_ilo), each staged once per thread and group (stage_whole) */
	bool st_whole;
	int64_t st_ilo;
#endif
	/* rank 1, rows mode: a panel whose taps all read inside x takes its B rows in place at
	 * x + offset (rel, channel in_sp apart), for grid positions q with q - dmax >= 0 and
	 * q + nr - 1 - dmin < in (per phase: rx_d[2ph], rx_d[2ph + 1] = dmin, dmax) */
	bool in_place_rel;
	int64_t *rx_d;
	onnxrun__krel *rel; /* per phase (cg * tmax apart): byte offset of B row k from the panel's base */
	onnxrun__krel *seq; /* with the table's rel2_pair: row k of a packed wide panel, k * nr[0] floats in bytes */
#ifndef ONNXRUN_BAREMETAL
	/* dense B (plan_dense): a thread's area of dn_panels wide panels, packed together from
	 * x at dn_offset in its scratch (a key line in front) */
	bool dense;
	int64_t dn_panels;
	size_t dn_offset;
#endif
#ifndef ONNXRUN_BAREMETAL
	bool skip; /* wide packed panels may run the gemm's skip_quarter tile (panel_skip) */
	/* a border.h job's positions ordered with the image innermost (img_inner_wanted): each
	 * 8-lane quarter of a wide panel is one grid position of the 8 images (img_segs,
	 * img_pack, tile_store) */
	bool img_inner;
#endif
#if SIZED_SCRATCH
	/* the most segments of a panel, whether the second tile and the row pointers are used,
	 * and whether every panel is staged (PANEL_REL only) */
	int64_t segmax;
	bool tile2, ptrs, rel_only;
	struct scratch_counts sc; /* set by scratch_bytes, read by every item */
#endif
};

#if SIZED_SCRATCH
static void scratch_counts(const struct phase_job *j, struct scratch_counts *n)
{
	const int64_t nr0 = j->pk->kern->nr[0], kmax = j->cg * j->pk->taps.tmax, sets = PANEL_SETS(j) * j->nb;
	n->bp = IN_PLACE && j->rel_only ? 0 : sets * kmax * nr0;
	/* a tile holds the rows of one weight panel: panels split mg evenly (convt_panel_lo),
	 * so at most ceil(mg / mpanels) <= mr_max (Helium on the upsampler's second layer: 3 of
	 * 6; with the scalar kernels alone mr_max, their tiles are small: flash) */
	n->tile = IN_PLACE && j->pk->mpanels ? (j->pk->mg + j->pk->mpanels - 1) / j->pk->mpanels * nr0
	                                     : j->pk->kern->mr_max * nr0;
	n->tile2 = IN_PLACE && j->tile2 ? n->tile : 0;
	n->runs = sets * j->segmax;
	n->cp = IN_PLACE && j->rel_only ? 0 : j->pk->taps.tmax * j->segmax;
	n->ptrs = IN_PLACE && j->ptrs ? sets * 2 * kmax : 0;
}

/* An item's scratch bytes for the job as planned; keeps the counts in j->sc for the items. */
static size_t scratch_bytes(struct phase_job *j)
{
	struct scratch_counts *c = &j->sc;
	scratch_counts(j, c);
	return (size_t)(c->bp + c->tile + c->tile2) * sizeof(float) +
	       (size_t)c->runs * (sizeof(struct onnxrun__krun) + sizeof(struct seg)) +
	       (size_t)c->cp * sizeof(struct onnxrun__kcopy) + (size_t)c->ptrs * (sizeof(float *) + sizeof(uint16_t));
}
#endif

/* Where the next panel of a phase starts: position p of the phase's box (batch first) and
 * its coordinates u[]. An item's panels follow one another, so each continues from where
 * the last one ended instead of dividing p by every axis again. */
struct seg_cursor {
	int64_t p;
	int64_t u[S + 1];
};

/* Splits positions [p0, p0 + cnt) of phase ph into runs along the last axis: their columns
 * and output offsets (runs) and where they start in the grid (segs). cur: where the
 * previous call of the same phase box ended (taken when it is p0), updated. */
static int64_t make_segs(const struct phase_job *j, int64_t ph, int64_t p0, int64_t cnt, const int64_t *r,
                         struct onnxrun__krun *runs, struct seg *segs, struct seg_cursor *cur)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t n = g->n;
	const int64_t *qlo = j->qlo + ph * S, *qn = j->qn + ph * S;
	int64_t u[S + 1], dims[S + 1], nseg = 0, col = 0;
	dims[0] = g->batch;
	for (int32_t a = 0; a < n; a++)
		dims[a + 1] = qn[a];
	if (cur->p == p0) {
		for (int32_t a = 0; a <= n; a++)
			u[a] = cur->u[a];
	} else {
		int64_t p = p0;
		for (int32_t a = n; a >= 0; a--) {
			u[a] = convt_umod(p, dims[a]);
			p = convt_udiv(p, dims[a]);
		}
	}
	while (col < cnt) {
		struct seg *sg = &segs[nseg];
		struct onnxrun__krun *rn = &runs[nseg++];
		int64_t len = dims[n] - u[n];
		len = len < cnt - col ? len : cnt - col;
		sg->b = u[0];
		rn->col = col;
		rn->len = len;
		rn->yoff = u[0] * g->out_channels * j->out_sp;
		for (int32_t a = 0; a < n; a++) {
			sg->q[a] = qlo[a] + u[a + 1];
			rn->yoff += (sg->q[a] * g->strides[a] + r[a] - g->pad_begin[a]) * j->ys[a];
		}
		col += len;
		u[n] += len;
		for (int32_t a = n; a > 0 && u[a] == dims[a]; a--) {
			u[a] = 0;
			u[a - 1]++;
		}
	}
	cur->p = p0 + cnt;
	for (int32_t a = 0; a <= n; a++)
		cur->u[a] = u[a];
	return nseg;
}

#ifndef ONNXRUN_BAREMETAL
/* make_segs for a job ordered with the image innermost (j->img_inner): position p is image
 * p % batch at grid position p / batch (the last axis fastest), one run of one column each. */
static int64_t img_segs(const struct phase_job *j, int64_t ph, int64_t p0, int64_t cnt, const int64_t *r,
                        struct onnxrun__krun *runs, struct seg *segs)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t *qlo = j->qlo + ph * S, *qn = j->qn + ph * S;
	for (int64_t i = 0; i < cnt; i++) {
		int64_t p = p0 + i;
		struct seg *sg = &segs[i];
		struct onnxrun__krun *rn = &runs[i];
		sg->b = (onnxrun__koff)(p % g->batch);
		p /= g->batch;
		rn->col = (onnxrun__koff)i;
		rn->len = 1;
		rn->yoff = sg->b * g->out_channels * j->out_sp;
		for (int32_t a = g->n - 1; a >= 0; a--) {
			sg->q[a] = qlo[a] + p % qn[a];
			p /= qn[a];
			rn->yoff += (sg->q[a] * g->strides[a] + r[a] - g->pad_begin[a]) * j->ys[a];
		}
	}
	return cnt;
}
#endif

/* Copy plan of tap `tap` for each segment: where the x row is and how much of it is inside. */
static void plan_copies(const struct phase_job *j, const int64_t *delta, const struct onnxrun__krun *runs,
                        const struct seg *segs, int64_t nseg, struct onnxrun__kcopy *out)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int32_t n = g->n, last = n - 1;
	for (int64_t s = 0; s < nseg; s++) {
		const struct seg *sg = &segs[s];
		const int64_t len = runs[s].len;
		struct onnxrun__kcopy *c = &out[s];
		int64_t off = sg->b * g->in_channels * j->in_sp, i0, lo, hi;
		bool inside = true;
		for (int32_t a = 0; a < last && inside; a++) {
			int64_t i = sg->q[a] - delta[a];
			inside = i >= 0 && i < g->in[a];
			off += i * j->xs[a];
		}
		i0 = sg->q[last] - delta[last];
		lo = i0 < 0 ? -i0 : 0;
		hi = i0 + len > g->in[last] ? g->in[last] - i0 : len;
		if (!inside || lo >= hi) {
			c->src = -1;
			c->zlo = (onnxrun__kcount)len;
			c->n = c->zhi = 0;
			continue;
		}
		c->src = off + i0 + lo;
		c->zlo = (onnxrun__kcount)lo;
		c->n = (onnxrun__kcount)(hi - lo);
		c->zhi = (onnxrun__kcount)(len - hi);
	}
}


/* Positions of phase ph (in its box, batch first) whose output row R = b*out0 + o0 is < R. */
static int64_t rows_before(const struct phase_job *j, int64_t ph, const int64_t *r, int64_t R)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t q0 = j->qn[ph * S], lo = j->qlo[ph * S];
	const int64_t b = convt_udiv(R, g->out[0]), o = convt_umod(R, g->out[0]);
	int64_t u = convt_ceil_div(o + g->pad_begin[0] - r[0], g->strides[0]) - lo;
	u = u < 0 ? 0 : u > q0 ? q0 : u;
	return (b * q0 + u) * convt_udiv(j->npos[ph], g->batch * (q0 ? q0 : 1));
}

/* How a B panel is given to the micro-kernel: packed (fn), rows in place (ind), masked
 * half-rows in place (ind2), rows at base + offset (rel: in the staged copy of x, or in x
 * itself for rank 1), or half-rows at two bases + offset in the staged copy (rel2). */
enum panel_mode { PANEL_PACKED, PANEL_ROWS, PANEL_HALVES, PANEL_REL, PANEL_REL2 };

/* One B panel of an item, prepared once and run against every weight panel of the item. */
struct panel {
	struct onnxrun__krun *runs;
	struct seg *segs;
	const float **brows; /* PANEL_ROWS: one per row; PANEL_HALVES: two per row */
	uint16_t *bmask;     /* PANEL_HALVES: two per row */
	const char *base;    /* PANEL_REL: row k at base + rel[k] bytes */
	const char *base1;   /* PANEL_REL2: row k's halves at base + rel[k] and base1 + rel[k] */
	const onnxrun__krel *rel;
	float *bp;
#ifndef ONNXRUN_BAREMETAL
	float *own; /* the slot's packed panel (bp may point into the dense area instead) */
	char *dn;   /* the thread's dense area with its key line in front (NULL: not dense) */
#endif
	int64_t nseg;
	int v;
	enum panel_mode mode;
	int64_t pend; /* where the panel's positions end in its phase (panel_next_rows) */
#ifndef ONNXRUN_BAREMETAL
	/* PANEL_PACKED, wide: the gemm's skip_quarter tile leaves out columns [8*skip_q, + 8) on
	 * the steps with bit (step % skip_period) of skip_mask set (0: the plain tile) */
	uint32_t skip_mask;
	int skip_q, skip_period;
#endif
};

/* PANEL_HALVES plan of a wide panel (nr = 32): for every tap, each 16-lane half of the row
 * must read x at one offset + lane (its segments continue one another in x, as when x's
 * rows are exactly the grid's rows), lanes outside x masked off. Writes channel 0's half
 * pointers and masks (row t) and returns true when every tap fits. */
static bool halves_plan(const float *xg, int64_t nt, const struct onnxrun__krun *runs, int64_t nseg,
                        const struct onnxrun__kcopy *cp, const float **brows, uint16_t *bmask)
{
	for (int64_t t = 0; t < nt; t++) {
		const struct onnxrun__kcopy *ct = cp + t * nseg;
		int64_t base[2] = { 0, 0 };
		uint32_t mask = 0;
		for (int64_t s = 0; s < nseg; s++) {
			const int64_t lo = runs[s].col + ct[s].zlo, hi = lo + ct[s].n;
			if (ct[s].n == 0)
				continue;
			for (int h = 0; h < 2; h++) {
				const int64_t b = ct[s].src - lo + 16 * h; /* x offset of lane 16h */
				if (hi <= 16 * h || lo >= 16 * h + 16)
					continue;
				if (mask & (0xFFFFu << (16 * h)) && base[h] != b)
					return false;
				base[h] = b;
			}
			mask |= (uint32_t)(((UINT64_C(1) << ct[s].n) - 1) << lo);
		}
		for (int h = 0; h < 2; h++) {
			bmask[2 * t + h] = (uint16_t)(mask >> (16 * h));
			brows[2 * t + h] = bmask[2 * t + h] ? xg + base[h] : onnxrun__kzero_row;
		}
	}
	return true;
}

/* Stages axes a .. n-1 of one channel's block: src is x at the block's origin on axes < a,
 * d the block's. Along axis a, the pad ranges are zeros (one memset each: they are
 * contiguous); the last axis is a line of zero pads (a few floats: plain stores) around a
 * copy of x's row. The last two axes are one contiguous run of lines (st_str[n - 2] is the
 * last axis's extent), written in order: each x row, then the zeros up to the next one (the
 * row's end pads and the next line's start pads together), with no call per line (3d_32_16's
 * lines are 16 floats, 8192 of them per run). */
static void stage_axis(const struct phase_job *j, int32_t a, const float *src, float *d)
{
	const struct onnxrun__convt_geom *g = j->g;
	if (S < ONNXRUN__CONVT_MAX_SPATIAL && a >= S) /* never (phase_accepts); folds away elsewhere */
		return;
	const int64_t pad = j->st_pad[a], in = g->in[a], ext = j->st_ext[a];
	if (a == g->n - 1) {
		convt_zero_row(d, pad);
		convt_copy_row(d + pad, src, in);
		convt_zero_row(d + pad + in, ext - pad - in);
		return;
	}
	const int64_t str = j->st_str[a];
	if (a + 1 < S && a == g->n - 2) { /* (a + 1 < S: always; says so to gcc's bounds check) */
		const int64_t pl = j->st_pad[a + 1], inl = g->in[a + 1], xs = j->xs[a];
		float *o = d + pad * str + pl, *const end = d + ext * str;
		convt_zero_row(d, pad * str + pl);
		for (int64_t v = 0; v < in; v++, o += str) {
			convt_copy_row(o, src + v * xs, inl);
			convt_zero_row(o + inl, v + 1 < in ? str - inl : end - (o + inl));
		}
		return;
	}
	memset(d, 0, (size_t)(pad * str) * sizeof *d);
	for (int64_t v = 0; v < in; v++)
		stage_axis(j, a + 1, src + v * j->xs[a], d + (pad + v) * str);
	memset(d + (pad + in) * str, 0, (size_t)((ext - pad - in) * str) * sizeof *d);
}

/* Copies input rows [i0, i1] (first spatial axis) of the group (xg) into the staging area,
 * each channel's block with its zero pads; rows outside x are zeros. */
static void stage_rows(const struct phase_job *j, const float *xg, int64_t i0, int64_t i1, float *stg)
{
	for (int64_t i = i0; i <= i1; i++) {
		float *d = stg + (i - i0) * j->cg * j->st_plane;
		if (i < 0 || i >= j->g->in[0]) {
			memset(d, 0, (size_t)(j->cg * j->st_plane) * sizeof *d);
			continue;
		}
		for (int64_t c = 0; c < j->cg; c++)
			stage_axis(j, 1, xg + c * j->in_sp + i * j->xs[0], d + c * j->st_plane);
	}
}

#ifndef ONNXRUN_BAREMETAL
/* The next group's rows, fetched into L2 (prefetch locality 2: a tile ahead, they would
 * leave L1 before their copy) FETCH_LINES lines per B panel and weight panel between the
 * tiles (fetch_step), so that reading them from L3 or memory overlaps the arithmetic instead
 * of stalling the staging copy. Each channel's rows are one contiguous range of x. */
#define FETCH_LINES 16
struct row_fetch {
	const char *x; /* channel 0 at the first row */
	int64_t ch_bytes, bytes, c, cg, off; /* cg channels ch_bytes apart, bytes each; cursor c, off */
};

/* Starts fetching input rows [i0, i1] (first spatial axis; those outside x skipped) of the
 * group at xg. */
static void fetch_rows(const struct phase_job *j, struct row_fetch *f, const float *xg, int64_t i0, int64_t i1)
{
	f->c = f->cg = 0;
	i0 = i0 < 0 ? 0 : i0;
	i1 = i1 >= j->g->in[0] ? j->g->in[0] - 1 : i1;
	if (i1 < i0)
		return;
	f->x = (const char *)(xg + i0 * j->xs[0]);
	f->ch_bytes = j->in_sp * (int64_t)sizeof(float);
	f->bytes = (i1 - i0 + 1) * j->xs[0] * (int64_t)sizeof(float);
	f->cg = j->cg;
	f->off = 0;
}

static inline void fetch_step(struct row_fetch *f, int64_t lines)
{
	for (; lines > 0 && f->c < f->cg; lines--) {
		__builtin_prefetch(f->x + f->c * f->ch_bytes + f->off, 0, 2);
		f->off += 64;
		if (f->off >= f->bytes) {
			f->off = 0;
			f->c++;
		}
	}
}

/* STAGE_WHOLE: makes input rows [i0, i1] of group grp present in the thread's area, whose
 * line in front (key) holds the group, the range of rows staged and the range its first
 * call staged: consecutive tiles read overlapping rows (the kernel's reach), which are then
 * copied once instead of once per tile. A range that does not touch the staged one starts
 * the range afresh. */
static void stage_whole(const struct phase_job *j, const float *xg, int64_t grp, int64_t i0, int64_t i1,
                        int64_t *key, float *area, struct row_fetch *f)
{
	const int64_t row = j->cg * j->st_plane, lo = key[1], hi = key[2];
	bool copied = true;
	if (key[0] != grp || i1 < lo - 1 || i0 > hi + 1) {
		stage_rows(j, xg, i0, i1, area + (i0 - j->st_ilo) * row);
		key[0] = grp;
		key[1] = key[3] = i0;
		key[2] = key[4] = i1;
	} else {
		copied = i0 < lo || i1 > hi;
		if (i0 < lo)
			stage_rows(j, xg, i0, lo - 1, area + (i0 - j->st_ilo) * row);
		if (i1 > hi)
			stage_rows(j, xg, hi + 1, i1, area + (hi + 1 - j->st_ilo) * row);
		key[1] = i0 < lo ? i0 : lo;
		key[2] = i1 > hi ? i1 : hi;
	}
	/* the group's last rows staged: the next group's first tile will stage the rows this
	 * group's first tile did (key[3], key[4]); fetched while this tile computes */
	if (FETCH_AHEAD && copied && (key[2] >= j->st_ilo + j->st_rows - 1 || key[2] + 1 >= j->g->in[0]) &&
	    grp + 1 < j->g->group)
		fetch_rows(j, f, xg + j->cg * j->in_sp, key[3], key[4]);
}
#endif

/* Where grid position q (of input row i0's staging area stg) reads x for a tap at offset 0:
 * the B rows of a panel run from there by the offsets j->rel. */
static const char *staged_at(const struct phase_job *j, const float *stg, int64_t i0, const onnxrun__koff *q)
{
	int64_t e = (q[0] - i0) * j->cg * j->st_plane;
	for (int32_t a = 1; a < j->g->n; a++)
		e += (q[a] + j->st_pad[a]) * j->st_str[a];
	return (const char *)(stg + e);
}

/* The staged panel right after pn (PANEL_REL2: two grid rows of half a panel each) in the
 * same grid plane: pn's segments two rows on along the axis before the last, so its runs'
 * outputs and its bases in the staged copy move by two rows' strides; the cursor as
 * make_segs leaves it: an addition per value instead of make_segs and staged_at for every
 * panel. False (nothing changed) unless pn, a panel of this item for phase ph (phase_items
 * resets the slots' modes per item), ended at p0. */
static inline bool panel_next_rows(const struct phase_job *j, int64_t ph, int64_t p0, int64_t cnt, struct panel *pn,
                            struct seg_cursor *cur)
{
	const int32_t n = j->g->n, a = n - 2;
	const int64_t nr = j->pk->kern->nr[0];
	if (n < 2 || pn->mode != PANEL_REL2 || pn->pend != p0 || cur->p != p0 || cnt != nr || pn->nseg != 2 ||
	    j->qn[ph * S + n - 1] != nr / 2 || cur->u[n] != 0)
		return false;
	const int64_t u = cur->u[n - 1], qlo = j->qlo[ph * S + a];
	if (u + 1 >= j->qn[ph * S + a] || pn->segs[1].q[a] - qlo + 1 != u || pn->segs[0].q[a] + 1 != pn->segs[1].q[a])
		return false;
	const int64_t dy = 2 * j->g->strides[a] * j->ys[a];
	const int64_t db = 2 * (a == 0 ? j->cg * j->st_plane : j->st_str[a]) * (int64_t)sizeof(float);
	for (int k = 0; k < 2; k++) {
		pn->segs[k].q[a] += 2;
		pn->runs[k].yoff += dy;
	}
	pn->base += db;
	pn->base1 += db;
	pn->pend = p0 + cnt;
	cur->p = p0 + cnt;
	cur->u[n - 1] += 2;
	for (int32_t k = n - 1; k > 0 && cur->u[k] == j->qn[ph * S + k - 1]; k--) {
		cur->u[k] = 0;
		cur->u[k - 1]++;
	}
	return true;
}

#ifndef ONNXRUN_BAREMETAL
/* What a thread's dense area holds: the panels of positions from c0 of the group at xg
 * (xg NULL: none yet). */
struct dense_key {
	const float *xg;
	int64_t c0;
};

/* Dense B (plan_dense: every phase reads x at its own grid position, one tap): the wide panel
 * of positions [p0, p0 + nr) is x's channels at those positions. Panels are taken from a
 * thread's area holding the dn_panels panels of an aligned range of positions, packed
 * together by blocks of channels: each channel's part of the range is read as one run of
 * consecutive lines (a few streams the hardware prefetcher follows), where packing panel by
 * panel reads one or two lines from each channel's plane, planes whose lines share L1 and
 * L2 sets (64 KiB apart in unet_128: its prefetches of the next panel evict one another).
 * The same values as the panel's pack. False (nothing set) for a panel not wide or not
 * aligned. */
static bool dense_panel(const struct phase_job *j, int64_t ph, const float *xg, int64_t p0, int64_t cnt,
                        struct panel *pn)
{
	enum { CB = 8 }; /* channels read together: streams at a time */
	const int64_t nr = j->pk->kern->nr[0], span = j->dn_panels * nr, row = j->cg * nr, in_sp = j->in_sp;
	if (pn->v != 0 || cnt != nr || p0 % nr)
		return false;
	const int64_t c0 = p0 / span * span, c1 = c0 + span < j->npos[ph] ? c0 + span : j->npos[ph];
	struct dense_key *key = (struct dense_key *)pn->dn;
	float *area = (float *)(pn->dn + 64);
	if (key->xg != xg || key->c0 != c0) {
		const int64_t npan = (c1 - c0) / nr, bstride = j->g->in_channels * in_sp;
		for (int64_t cb = 0; cb < j->cg; cb += CB) {
			const int64_t ce = cb + CB < j->cg ? cb + CB : j->cg;
			int64_t b = c0 / in_sp, off = c0 % in_sp;
			for (int64_t i = 0; i < npan; i++) {
				float *d = area + i * row;
				if (off + nr <= in_sp) {
					const float *src = xg + b * bstride + off;
					if (nr == 32) /* a constant size: copied inline, not by a call */
						for (int64_t c = cb; c < ce; c++)
							memcpy(d + c * nr, src + c * in_sp, 32 * sizeof(float));
					else
						for (int64_t c = cb; c < ce; c++)
							memcpy(d + c * nr, src + c * in_sp, (size_t)nr * sizeof(float));
					off += nr;
				} else { /* the panel crosses into the next image(s) */
					for (int64_t e = 0; e < nr;) {
						const int64_t m = in_sp - off < nr - e ? in_sp - off : nr - e;
						for (int64_t c = cb; c < ce; c++)
							memcpy(d + c * nr + e, xg + b * bstride + c * in_sp + off,
							       (size_t)m * sizeof(float));
						e += m;
						off += m;
						if (off == in_sp) {
							off = 0;
							b++;
						}
					}
				}
				if (off == in_sp) {
					off = 0;
					b++;
				}
			}
		}
		key->xg = xg;
		key->c0 = c0;
	}
	pn->mode = PANEL_PACKED;
	pn->bp = area + (p0 - c0) / nr * row;
	return true;
}
#endif

#ifndef ONNXRUN_BAREMETAL
/* For a full wide panel about to be packed (copy plans cp of its nt taps, nseg runs): the
 * quarter of its 32 columns that reads padding on the most taps (the first axis's edge row
 * of a grid 8 wide), kept for the gemm's skip_quarter tile when those taps are at least half
 * of them (a tap's steps are 1 in nt of K, channel-major: bit t of the mask). Depends on the shapes
 * alone, so every thread count computes each output the same way. */
static void panel_skip(int64_t nt, const struct onnxrun__kcopy *cp, struct panel *pn)
{
	int best = 0;
	if (nt > 32)
		return;
	for (int qq = 0; qq < 4; qq++) {
		uint32_t mask = 0;
		int bits = 0;
		for (int64_t t = 0; t < nt; t++) {
			int64_t pads = 0; /* columns of the quarter tap t reads as padding */
			for (int64_t s = 0; s < pn->nseg; s++) {
				const struct onnxrun__krun *rn = &pn->runs[s];
				const struct onnxrun__kcopy *c = &cp[t * pn->nseg + s];
				/* the run's columns in the quarter, less those it copies from x */
				const int64_t lo = rn->col > 8 * qq ? rn->col : 8 * qq;
				const int64_t hi = rn->col + rn->len < 8 * qq + 8 ? rn->col + rn->len : 8 * qq + 8;
				const int64_t xlo = c->src < 0 ? hi : rn->col + c->zlo, xhi = c->src < 0 ? hi : xlo + c->n;
				const int64_t ilo = xlo > lo ? xlo : lo, ihi = xhi < hi ? xhi : hi;
				pads += (hi > lo ? hi - lo : 0) - (ihi > ilo ? ihi - ilo : 0);
			}
			mask |= (uint32_t)(pads == 8) << t;
			bits += pads == 8;
		}
		if (2 * bits >= nt && bits > best) {
			best = bits;
			pn->skip_mask = mask;
			pn->skip_q = qq;
			pn->skip_period = (int)nt;
		}
	}
}
#endif

#ifndef ONNXRUN_BAREMETAL
/* Packs a full wide panel of a job ordered with the image innermost (img_segs): column
 * 8k + b is image b at the panel's grid position k (its 4 positions along the last axis of
 * one grid row, img_inner_wanted), B row c*nt + t the tap's x values (zeros outside x), as
 * kph->pack packs the same runs (the table's pack_img8, from each tap's offset and the
 * quarters inside x). The quarter k whose column reads padding on the most taps
 * (the last axis's edge column) is kept for the skip_quarter tile when those taps are at
 * least half of them, as panel_skip keeps a first-axis edge row. */
static void img_pack(const struct phase_job *j, int64_t ph, const int64_t *r, const float *xg, struct panel *pn)
{
	const struct onnxrun__convt_geom *g = j->g;
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t last = g->n - 1;
	const int64_t nt = tp->ntaps[ph], bstride = g->in_channels * j->in_sp, in1 = g->in[last];
	const onnxrun__koff *q = pn->segs[0].q;
	int64_t src[32];   /* per tap: x offset of image 0, channel 0, quarter 0's column */
	uint8_t valid[32]; /* per tap: bit k, quarter k's column inside x */
	int best = 0;
	uint32_t qmask[4] = { 0, 0, 0, 0 };
	int bits[4] = { 0, 0, 0, 0 };
	for (int64_t t = 0; t < nt; t++) { /* nt <= 32 (img_inner_wanted) */
		int64_t delta[S], ro = 0, c0;
		bool inside = true;
		convt_tap(tp, r, t, NULL, delta);
		for (int32_t a = 0; a < last && inside; a++) {
			const int64_t i = q[a] - delta[a];
			inside = i >= 0 && i < g->in[a];
			ro += i * j->xs[a];
		}
		c0 = q[last] - delta[last]; /* x column of quarter 0 */
		src[t] = ro + c0;
		valid[t] = 0;
		for (int k = 0; k < 4; k++) {
			const bool pad = !inside || c0 + k < 0 || c0 + k >= in1;
			valid[t] |= (uint8_t)(!pad << k);
			qmask[k] |= (uint32_t)pad << t;
			bits[k] += pad;
		}
	}
	j->kt->phase.pack_img8(&j->kp, xg, nt, bstride, src, valid, pn->bp);
	pn->mode = PANEL_PACKED;
	pn->skip_mask = 0;
	if (!j->skip)
		return;
	for (int k = 0; k < 4; k++)
		if (2 * bits[k] >= nt && bits[k] > best) {
			best = bits[k];
			pn->skip_mask = qmask[k];
			pn->skip_q = k;
			pn->skip_period = (int)nt;
		}
}
#endif

/* Prepares the B panel of positions [p0, p0 + cnt) of phase ph (residues r): its segments,
 * then, for one run filling the panel, its base in the staged copy of x (stg: input rows from
 * i0) or row pointers into x (pack_rows); for two runs of half a panel each (grid rows of
 * nr/2), their two bases in the staged copy; else masked half-rows in x (halves_plan, when
 * few calls share the panel) or a packed copy. */
static void panel_prepare(const struct phase_job *j, int64_t ph, const int64_t *r, int64_t p0, int64_t cnt,
                          const float *xg, struct onnxrun__kcopy *cp, struct panel *pn, const float *stg, int64_t i0,
                          struct seg_cursor *cur)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const struct onnxrun__gemm_kernels *kn = j->pk->kern;
	const struct onnxrun__phase_kernels *kph = &j->kt->phase;
	const int64_t nt = tp->ntaps[ph];
	int64_t delta[S];
	pn->pend = p0 + cnt;
#ifndef ONNXRUN_BAREMETAL
	pn->skip_mask = 0;
#endif
	pn->v = cnt <= kn->nr[2] ? 2 : cnt <= kn->nr[1] ? 1 : 0;
	const int64_t nr = kn->nr[pn->v];
#ifndef ONNXRUN_BAREMETAL
	if (SKIP_TILE && j->img_inner) {
		pn->nseg = img_segs(j, ph, p0, cnt, r, pn->runs, pn->segs);
		if (pn->v == 0 && cnt == 32 && nr == 32) {
			pn->bp = pn->own;
			img_pack(j, ph, r, xg, pn);
			return;
		}
	} else
#endif
		pn->nseg = make_segs(j, ph, p0, cnt, r, pn->runs, pn->segs, cur);
	if (IN_PLACE && j->in_place_rel && pn->v == 0 && pn->nseg == 1 && cnt == nr &&
	    pn->segs[0].q[0] - j->rx_d[2 * ph + 1] >= 0 && pn->segs[0].q[0] + nr - 1 - j->rx_d[2 * ph] < j->g->in[0]) {
		pn->mode = PANEL_REL;
		pn->base = (const char *)(xg + pn->segs[0].b * j->g->in_channels * j->in_sp + pn->segs[0].q[0]);
		pn->rel = j->rel + ph * j->cg * tp->tmax;
		return;
	}
	if (IN_PLACE && stg && pn->v == 0 && cnt == nr &&
	    (pn->nseg == 1 || (pn->nseg == 2 && pn->runs[0].len == nr / 2 && kn->rel2[0]))) {
		pn->mode = pn->nseg == 1 ? PANEL_REL : PANEL_REL2;
		pn->base = staged_at(j, stg, i0, pn->segs[0].q);
		pn->base1 = pn->nseg == 2 ? staged_at(j, stg, i0, pn->segs[1].q) : NULL;
		pn->rel = j->rel + ph * j->cg * tp->tmax;
		return;
	}
#ifndef ONNXRUN_BAREMETAL
	pn->bp = pn->own;
	if (pn->dn && dense_panel(j, ph, xg, p0, cnt, pn))
		return;
#endif
	for (int64_t t = 0; t < nt; t++) {
		convt_tap(tp, r, t, NULL, delta);
		plan_copies(j, delta, pn->runs, pn->segs, pn->nseg, cp + t * pn->nseg);
	}
	if (IN_PLACE && pn->v == 0 && pn->nseg == 1 && cnt == nr && j->rows) {
		pn->mode = PANEL_ROWS;
		kph->pack_rows(&j->kp, xg, nt, nr, cp, pn->bp, pn->brows);
		return;
	}
	if (IN_PLACE && pn->v == 0 && nr == 32 && j->halves &&
	    halves_plan(xg, nt, pn->runs, pn->nseg, cp, pn->brows, pn->bmask)) {
		pn->mode = PANEL_HALVES;
		for (int64_t c = 1; c < j->cg; c++)
			for (int64_t i = 0; i < 2 * nt; i++) {
				pn->bmask[2 * c * nt + i] = pn->bmask[i];
				pn->brows[2 * c * nt + i] = pn->bmask[i] ? pn->brows[i] + c * j->in_sp : onnxrun__kzero_row;
			}
		return;
	}
	pn->mode = PANEL_PACKED;
#ifndef ONNXRUN_BAREMETAL
	if (SKIP_TILE && j->skip && pn->v == 0 && cnt == nr)
		panel_skip(nt, cp, pn);
#endif
	/* many short runs (small grids, batches) that continue one another in x: two masked
	 * copies per row instead of one per run */
	if (IN_PLACE && pn->v == 0 && nr == 32 && kph->pack_halves && pn->nseg > 1 &&
	    halves_plan(xg, nt, pn->runs, pn->nseg, cp, pn->brows, pn->bmask)) {
		kph->pack_halves(&j->kp, nt, pn->brows, pn->bmask, pn->bp);
		return;
	}
	if (cnt < nr)
		memset(pn->bp, 0, (size_t)(j->cg * nt * nr) * sizeof *pn->bp);
	kph->pack(&j->kp, xg, nt, nr, pn->runs, pn->nseg, cp, pn->bp);
}

/* C tile = A panel (mr rows) x B panel. */
static inline void panel_gemm(const struct onnxrun__gemm_kernels *kn, int64_t mr, int64_t kk, const float *a,
                              const struct panel *pn, float *tile)
{
	const int64_t nr = kn->nr[pn->v];
	if (!IN_PLACE)
		kn->fn[pn->v][mr - 1](kk, a, pn->bp, tile, nr);
	else if (pn->mode == PANEL_REL)
		kn->rel[mr - 1](kk, a, pn->base, pn->rel, tile, nr);
	else if (pn->mode == PANEL_REL2)
		kn->rel2[mr - 1](kk, a, pn->base, pn->base1, pn->rel, tile, nr);
	else if (pn->mode == PANEL_ROWS)
		kn->ind[mr - 1](kk, a, pn->brows, tile, nr);
	else if (pn->mode == PANEL_HALVES)
		kn->ind2[mr - 1](kk, a, pn->brows, pn->bmask, tile, nr);
#ifndef ONNXRUN_BAREMETAL
	else if (SKIP_TILE && pn->skip_mask)
		kn->skip_quarter(kk, a, mr, pn->bp, tile, nr, pn->skip_q, pn->skip_period, pn->skip_mask);
#endif
	else
		kn->fn[pn->v][mr - 1](kk, a, pn->bp, tile, nr);
}

/* Stores tile t0 (kph->store) or tiles t0 and t1 interleaved (t1 not NULL: kph->store_pair)
 * of panel pn. A job ordered with the image innermost has one run per column (img_segs):
 * the same values, element by element, the two tiles' outputs side by side. */
static inline void tile_store(const struct phase_job *j, const float *t0, const float *t1, int64_t nr, int64_t mr,
                              const struct panel *pn, float *y, int64_t ydelta, const float *bias)
{
#ifndef ONNXRUN_BAREMETAL
	if (SKIP_TILE && j->img_inner && pn->nseg == 32 && nr == 32) {
		/* a full panel (img_pack's): column 8k + b is image b's output yoff(b) + k * sl */
		const int64_t sl = j->kp.sl, w = t1 ? 2 : 1;
		for (int64_t i = 0; i < mr; i++) {
			const float bi = bias ? bias[i] : 0.0f;
			const float *a0 = t0 + i * 32, *a1 = t1 ? t1 + i * 32 : t0;
			float *ym = y + i * j->kp.out_sp + ydelta;
			for (int b = 0; b < 8; b++) {
				float *d = ym + pn->runs[b].yoff;
				for (int k = 0; k < 4; k++) {
					d[k * sl] = a0[8 * k + b] + bi;
					if (t1)
						d[k * sl + 1] = a1[8 * k + b] + bi;
				}
			}
		}
		/* the next weight panel's output lines, for writing (as the tables' stores do) */
		for (int64_t i = mr; i < 2 * mr; i++)
			for (int b = 0; b < 8; b++) {
				const float *d = y + i * j->kp.out_sp + ydelta + pn->runs[b].yoff;
				__builtin_prefetch(d, 1);
				__builtin_prefetch(d + 3 * sl + w - 1, 1);
			}
		return;
	}
	if (SKIP_TILE && j->img_inner) {
		for (int64_t i = 0; i < mr; i++) {
			const float b = bias ? bias[i] : 0.0f;
			const float *a0 = t0 + i * nr, *a1 = t1 ? t1 + i * nr : NULL;
			float *ym = y + i * j->kp.out_sp + ydelta;
			for (int64_t s = 0; s < pn->nseg; s++) {
				float *d = ym + pn->runs[s].yoff;
				d[0] = a0[pn->runs[s].col] + b;
				if (a1)
					d[1] = a1[pn->runs[s].col] + b;
			}
		}
		return;
	}
#endif
	if (t1)
		j->kt->phase.store_pair(&j->kp, t0, t1, nr, mr, pn->runs, pn->nseg, y, ydelta, bias);
	else
		j->kt->phase.store(&j->kp, t0, nr, mr, pn->runs, pn->nseg, y, ydelta, bias);
}

/* The second tile of a pair (B panel pb, the pair's runs those of pr) through the table's
 * rel2_pair, computed and stored interleaved with tile t0 in one call: for wide panels in
 * the staged copy or packed, whose runs are whole vectors; the output lines at
 * ypf (the next weight panel's, NULL after the item's last) fetched for writing. False: the
 * caller runs the gemm and store_pair. */
static bool pair_fused(const struct phase_job *j, int64_t mr, int64_t kk, const float *a, const struct panel *pb,
                       const struct panel *pr, const float *t0, float *y, int64_t ydelta, const float *bias,
                       const float *ypf)
{
	const struct onnxrun__phase_kernels *kph = &j->kt->phase;
	const int64_t nr = j->pk->kern->nr[0];
	if (!IN_PLACE || !kph->rel2_pair || pb->v != 0 || pr->v != 0)
		return false;
	if (!(pr->nseg == 1 && pr->runs[0].col == 0 && pr->runs[0].len == nr) &&
	    !(pr->nseg == 2 && pr->runs[0].len == nr / 2 && pr->runs[1].col == nr / 2 && pr->runs[1].len == nr / 2))
		return false;
	if (pb->mode == PANEL_REL || pb->mode == PANEL_REL2)
		kph->rel2_pair(&j->kp, kk, a, mr, pb->base, pb->mode == PANEL_REL2 ? pb->base1 : pb->base + nr * 2, pb->rel,
		               true, t0, pr->runs, pr->nseg, y, ydelta, bias, ypf ? ypf + ydelta : NULL);
	else if (pb->mode == PANEL_PACKED && j->seq)
		kph->rel2_pair(&j->kp, kk, a, mr, (const char *)pb->bp, (const char *)(pb->bp + nr / 2), j->seq, false, t0,
		               pr->runs, pr->nseg, y, ydelta, bias, ypf ? ypf + ydelta : NULL);
	else
		return false;
	return true;
}

/* Most A panels of one rem call (kernels.h) the phase path gathers. */
#define REM_MAX 4

/* Remainder tiles waiting for one rem call (the same B panel, the same k): each one's A
 * panel and where its tile goes. */
struct rem_list {
	const float *a[REM_MAX], *bias[REM_MAX];
	float *y[REM_MAX];
	int64_t mr[REM_MAX], ydelta[REM_MAX];
	int n;
};

/* Runs the waiting remainder tiles of panel pn (cnt positions) in one call and stores them. */
static void rem_flush(const struct phase_job *j, struct rem_list *rl, int64_t kk, int64_t cnt, const struct panel *pn,
                      float *tile)
{
	const struct onnxrun__gemm_kernels *kn = j->pk->kern;
	const int64_t nr = kn->nr[2];
	if (!rl->n)
		return;
	kn->rem(kk, rl->a, rl->n, (int)cnt, pn->bp, tile, nr);
	for (int g = 0; g < rl->n; g++)
		j->kt->phase.store(&j->kp, tile + g * kn->mr_max * nr, nr, rl->mr[g], pn->runs, pn->nseg, rl->y[g],
		                   rl->ydelta[g], rl->bias[g]);
	rl->n = 0;
}

#ifndef ONNXRUN_BAREMETAL /* LINES */
/* A line group's remainder panel (the last of an item's panels, at most nr[2] positions):
 * each class's phases go through the rem call of their own list, rl[0] for the item's class
 * (B panel last[0]) and rl[1] for its partner (last[1]); flushed every `group` tiles. */
struct line_rem {
	struct rem_list *rl[2];
	const struct panel *last[2];
	int64_t group, cnt;
	float *tile;
};

/* Adds phase q's tile of the remainder panel to its class's rem list (c: 0 the item's
 * class, 1 the partner). */
static void line_rem_add(const struct phase_job *j, const struct line_rem *lr, int c, int64_t q, const float *aq,
                         int64_t mr, float *ym, const float *bm)
{
	struct rem_list *rc = lr->rl[c];
	const int64_t lead = j->rep[q];
	rc->a[rc->n] = aq;
	rc->bias[rc->n] = bm;
	rc->y[rc->n] = ym;
	rc->mr[rc->n] = mr;
	rc->ydelta[rc->n++] = j->yres[q] - j->yres[lead];
	if (rc->n == lr->group)
		rem_flush(j, rc, j->cg * j->pk->taps.ntaps[lead], lr->cnt, lr->last[c], lr->tile);
}

/* Line stores (j->nline[ph] > 0, ph the item's class): for each of the first nwide B
 * panels and each of the class group's lines, the line's sl tiles (its phase m into tile m
 * of buf, from B panel pn, or pn2 for the partner class's phases), then one store_lines
 * call writes the lines whole. The tiles are the ones each phase's own store would take.
 * With lr, the remainder panel's tiles join the rem lists right after each phase's last
 * wide tile, while its weights are still in cache. */
static void line_panels(const struct phase_job *j, int64_t ph, int64_t grp, int64_t aoff, int64_t mr,
                        const struct panel *pn, const struct panel *pn2, int64_t nwide, float *buf, float *ym,
                        const float *bm, const struct line_rem *lr)
{
	const struct onnxrun__convt_packed *pk = j->pk;
	const struct onnxrun__gemm_kernels *kn = pk->kern;
	const int64_t sl = j->kp.sl, stride = kn->mr_max * kn->nr[0];
	const int64_t *lph = j->line_ph + j->line_at[ph], *yd = j->line_yd + j->line_at[ph] / sl;
	for (int64_t i = 0; i < (nwide > 0 ? nwide : 1); i++)
		for (int64_t l = 0; l < j->nline[ph]; l++) {
			for (int64_t m = 0; m < sl; m++) {
				const int64_t q = lph[l * sl + m], kq = j->cg * pk->taps.ntaps[q];
				const float *aq = pk->a + grp * pk->a_group + pk->a_off[q] + aoff * kq;
				if (nwide > 0)
					panel_gemm(kn, mr, kq, aq, j->rep[q] == ph ? &pn[i] : &pn2[i], buf + m * stride);
				if (lr && i == (nwide > 0 ? nwide - 1 : 0))
					line_rem_add(j, lr, j->rep[q] != ph, q, aq, mr, ym, bm);
			}
			if (nwide > 0)
				j->kt->phase.store_lines(&j->kp, buf, stride, kn->nr[pn[i].v], mr, pn[i].runs, pn[i].nseg, ym,
				                         yd[l], bm);
		}
}

#endif

/* Item it's group, tile, class and channel chunk: it = ((grp * ntiles + tile) * nclass +
 * class) * mchunks + mchunk, or with the chunk first (chunk_major: ((mchunk * group + grp) *
 * ntiles + tile) * nclass + class). */
static void item_index(const struct phase_job *j, bool chunk_major, int64_t it, int64_t *grp, int64_t *tl,
                       int64_t *cl, int64_t *mc)
{
	if (chunk_major) {
		*cl = it % j->nclass;
		it /= j->nclass;
		*tl = it % j->ntiles;
		it /= j->ntiles;
		*grp = it % j->g->group;
		*mc = it / j->g->group;
		return;
	}
	*mc = it % j->mchunks;
	it /= j->mchunks;
	*cl = it % j->nclass;
	it /= j->nclass;
	*tl = it % j->ntiles;
	*grp = it / j->ntiles;
}

/* One item: output rows [R0, R1) of one group, weight panels [plo, phi), every phase of
 * one class (phases that read the same B panels, j->rep). Up to j->nb B panels are prepared
 * at a time; then each weight panel (mr output channels of one phase) runs over all of
 * them, so large weights are read once per j->nb panels. */
static void phase_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct phase_job *j = arg;
	const struct onnxrun__convt_geom *g = j->g;
	const struct onnxrun__convt_packed *pk = j->pk;
	const struct onnxrun__convt_taps *tp = &pk->taps;
	const struct onnxrun__gemm_kernels *kn = pk->kern;
	const struct onnxrun__phase_kernels *kph = &j->kt->phase;
	const int64_t mr_max = kn->mr_max, nr0 = kn->nr[0], mg = pk->mg, kmax = j->cg * tp->tmax;
	char *sc = j->scratch + (size_t)tid * j->scratch_stride;
#if SIZED_SCRATCH
	const struct scratch_counts n = j->sc;
	const int64_t segs_max = j->segmax;
	float *bp = (float *)sc, *tile = bp + n.bp;
	float *tile2 = tile + n.tile;
	struct onnxrun__krun *runs = (struct onnxrun__krun *)(tile2 + n.tile2);
	struct seg *segs = (struct seg *)(runs + n.runs);
	struct onnxrun__kcopy *cp = (struct onnxrun__kcopy *)(segs + n.runs);
	const float **brows = (const float **)(cp + n.cp);
	uint16_t *bmask = (uint16_t *)(brows + n.ptrs);
#else
	const int64_t segs_max = nr0;
	float *bp = (float *)sc, *tile = bp + PANEL_SETS(j) * j->nb * kmax * nr0;
	float *tile2 = tile + mr_max * nr0;
	struct onnxrun__krun *runs = (struct onnxrun__krun *)(tile2 + mr_max * nr0);
	struct seg *segs = (struct seg *)(runs + PANEL_SETS(j) * j->nb * nr0);
	struct onnxrun__kcopy *cp = (struct onnxrun__kcopy *)(segs + PANEL_SETS(j) * j->nb * nr0);
	const float **brows = (const float **)(cp + tp->tmax * nr0);
	uint16_t *bmask = (uint16_t *)(brows + PANEL_SETS(j) * j->nb * 2 * kmax);
#endif
	struct panel pn[2 * MAX_NB], *pn2 = pn + j->nb;
	struct seg_cursor cur[2];
	int64_t r[S], r2[S];
#ifndef ONNXRUN_BAREMETAL
	struct row_fetch rf = { 0 };
#endif
	/* A panels per rem call: as many of its tiles (mr_max x nr[2] each, every row written)
	 * as the tile buffer holds */
#if SIZED_SCRATCH
	const int64_t tile_cap = n.tile;
#else
	const int64_t tile_cap = mr_max * nr0;
#endif
	int64_t rem_group = IN_PLACE && kn->rem ? tile_cap / (mr_max * kn->nr[2]) : 0;
	struct rem_list rl, rl2; /* rl2: a line group's partner class */
	rem_group = rem_group > kn->rem_np ? kn->rem_np : rem_group;
	rem_group = rem_group > REM_MAX ? REM_MAX : rem_group;
	rl.n = rl2.n = 0;

	for (int64_t i = 0; i < PANEL_SETS(j) * j->nb; i++) {
		pn[i].runs = runs + i * segs_max;
		pn[i].segs = segs + i * segs_max;
#if SIZED_SCRATCH
		pn[i].brows = n.ptrs ? brows + i * 2 * kmax : NULL;
		pn[i].bmask = n.ptrs ? bmask + i * 2 * kmax : NULL;
		pn[i].bp = n.bp ? bp + i * kmax * nr0 : NULL;
#else
		pn[i].brows = brows + i * 2 * kmax;
		pn[i].bmask = bmask + i * 2 * kmax;
		pn[i].bp = bp + i * kmax * nr0;
#endif
#ifndef ONNXRUN_BAREMETAL
		pn[i].own = pn[i].bp;
		pn[i].dn = j->dense ? sc + j->dn_offset : NULL;
#endif
	}
	for (int64_t it = begin; it < end; it++) {
		int64_t mc, cl, tl, grp;
		item_index(j, IN_PLACE && j->chunk_major, it, &grp, &tl, &cl, &mc);
		const int64_t R0 = tl * j->trows, R1 = R0 + j->trows < j->nrows ? R0 + j->trows : j->nrows;
		const int64_t plo = mc * j->mchunk, phi = plo + j->mchunk < pk->mpanels ? plo + j->mchunk : pk->mpanels;
		const float *xg = j->x + grp * j->cg * j->in_sp;
		float *yg = j->y + grp * mg * j->out_sp;
		const float *bg = j->bias ? j->bias + grp * mg : NULL;
		const int64_t ph = j->classes[cl], kk = j->cg * tp->ntaps[ph];
		int64_t pa, pb;
		convt_phase_residues(tp, ph, r);
		pa = rows_before(j, ph, r, R0);
		pb = R1 == j->nrows ? j->npos[ph] : rows_before(j, ph, r, R1);
		const int64_t ph2 = IN_PLACE ? j->partner[cl] : -1;
		const float *stg = NULL;
		cur[0].p = cur[1].p = -1;
		for (int64_t i = 0; i < PANEL_SETS(j) * j->nb; i++)
			pn[i].mode = PANEL_PACKED; /* no panel of this item yet (panel_next_rows) */
		if (ph2 >= 0)
			convt_phase_residues(tp, ph2, r2);
		int64_t i0 = 0;
		if (IN_PLACE && j->staged && pb > pa) {
			const int64_t s0 = g->strides[0], p0_ = g->pad_begin[0];
			const int64_t qlo_ = convt_floor_div(R0 + p0_ - (s0 - 1), s0), qhi_ = convt_floor_div(R1 - 1 + p0_, s0);
			const int64_t i1 = qhi_ - j->st_dymin;
			i0 = qlo_ - j->st_dymax;
#ifndef ONNXRUN_BAREMETAL
			if (j->st_whole && i1 >= i0 && i0 >= j->st_ilo && i1 - j->st_ilo < j->st_rows) {
				float *area = (float *)(sc + j->st_offset + STAGE_LINE);
				stage_whole(j, xg, grp, i0, i1, (int64_t *)(sc + j->st_offset), area, &rf);
				stg = area;
				i0 = j->st_ilo;
			} else
#endif
			if (i1 >= i0 && i1 - i0 < j->st_rows) {
				/* the thread's last staged tile: the classes and channel chunks of one
				 * tile are consecutive items, usually run by the same thread */
				int64_t *key = (int64_t *)(sc + j->st_offset);
				if (*key != grp * j->ntiles + tl) {
					stage_rows(j, xg, i0, i1, (float *)(sc + j->st_offset + STAGE_LINE));
					*key = grp * j->ntiles + tl;
				}
				stg = (const float *)(sc + j->st_offset + STAGE_LINE);
			}
		}
		for (int64_t c0 = pa; c0 < pb; c0 += ITEM_NB(j) * nr0) {
			int64_t np = 0, cnt = 0;
			for (int64_t p0 = c0; p0 < pb && np < ITEM_NB(j); p0 += nr0, np++) {
				cnt = pb - p0 < nr0 ? pb - p0 : nr0;
				/* a staged panel continuing the last one (panel_next_rows) without the call */
				if (!(IN_PLACE && stg && panel_next_rows(j, ph, p0, cnt, &pn[np], &cur[0])))
					panel_prepare(j, ph, r, p0, cnt, xg, cp, &pn[np], stg, i0, &cur[0]);
				if (ph2 >= 0 && !(IN_PLACE && stg && panel_next_rows(j, ph2, p0, cnt, &pn2[np], &cur[1])))
					panel_prepare(j, ph2, r2, p0, cnt, xg, cp, &pn2[np], stg, i0, &cur[1]);
			}
			/* a last panel of at most nr[2] positions (a remainder) runs rem_group A
			 * panels per call (the kernels' rem): the class's phases of one weight panel,
			 * right after their wide panels read the same weights, or consecutive weight
			 * panels; not with a stride-2 partner or stride-2 pairs (stored in pairs); a line
			 * group's partner class has its own list */
			const bool lines = LINES && j->lines && j->nline[ph];
			const bool rem = IN_PLACE && rem_group > 1 && np > 0 && pn[np - 1].v == 2 &&
			                 pn[np - 1].mode == PANEL_PACKED && !(kph->store_pair && tp->s[g->n - 1] == 2) &&
			                 (ph2 < 0 || (lines && pn2[np - 1].v == 2 && pn2[np - 1].mode == PANEL_PACKED));
			const int64_t nwide = rem ? np - 1 : np;
			for (int64_t pl = plo; pl < phi; pl++) {
				const int64_t m0 = convt_panel_lo(mg, pk->mpanels, pl);
				const int64_t mr = convt_panel_lo(mg, pk->mpanels, pl + 1) - m0, aoff = pl * mr_max;
				float *ym = yg + m0 * j->out_sp;
				const float *bm = bg ? bg + m0 : NULL;
#ifndef ONNXRUN_BAREMETAL
				if (FETCH_AHEAD)
					fetch_step(&rf, np * FETCH_LINES);
#endif
				/* the rows after the item's last weight panel are another item's (another
				 * group's channels, or past y): not fetched */
				const float *ypf = pl + 1 < phi ? ym + mr * j->out_sp : NULL;
#ifndef ONNXRUN_BAREMETAL /* LINES */
				if (lines) {
					const struct line_rem lr = { { &rl, &rl2 }, { &pn[np - 1], &pn2[np - 1] }, rem_group, cnt, tile };
					line_panels(j, ph, grp, aoff, mr, pn, pn2, nwide, (float *)(sc + j->line_offset), ym, bm,
					            rem ? &lr : NULL);
					continue;
				}
#endif
				if (ph2 >= 0) { /* each phase's mate in ph2 follows it along the last axis */
					const int64_t kk2 = j->cg * tp->ntaps[ph2];
					for (int64_t q = ph; q < tp->nphase; q++) {
						if (j->rep[q] != ph)
							continue;
						const float *a1 = pk->a + grp * pk->a_group + pk->a_off[q] + aoff * kk;
						const float *a2 = pk->a + grp * pk->a_group + pk->a_off[j->mate[q]] + aoff * kk2;
						const int64_t ydelta = j->yres[q] - j->yres[ph];
						for (int64_t i = 0; i < np; i++) {
							panel_gemm(kn, mr, kk, a1, &pn[i], tile);
							if (pair_fused(j, mr, kk2, a2, &pn2[i], &pn[i], tile, ym, ydelta, bm, ypf))
								continue;
							panel_gemm(kn, mr, kk2, a2, &pn2[i], tile2);
							tile_store(j, tile, tile2, kn->nr[pn[i].v], mr, &pn[i], ym, ydelta, bm);
						}
					}
					continue;
				}
				for (int64_t q = ph; q < tp->nphase; q++) {
					const float *aq = pk->a + grp * pk->a_group + pk->a_off[q] + aoff * kk;
					if (j->rep[q] != ph)
						continue;
					const int64_t ydelta = j->yres[q] - j->yres[ph];
					/* last-axis residues 0 and 1 of stride 2 sharing B: store interleaved */
					if (IN_PLACE && kph->store_pair && tp->s[g->n - 1] == 2 && j->rlast[q] == 0 &&
					    q + 1 < tp->nphase && j->rep[q + 1] == ph) {
						const float *aq1 = pk->a + grp * pk->a_group + pk->a_off[q + 1] + aoff * kk;
						for (int64_t i = 0; i < np; i++) {
							panel_gemm(kn, mr, kk, aq, &pn[i], tile);
							if (pair_fused(j, mr, kk, aq1, &pn[i], &pn[i], tile, ym, ydelta, bm, ypf))
								continue;
							panel_gemm(kn, mr, kk, aq1, &pn[i], tile2);
							tile_store(j, tile, tile2, kn->nr[pn[i].v], mr, &pn[i], ym, ydelta, bm);
						}
						q++;
						continue;
					}
					for (int64_t i = 0; i < nwide; i++) {
						panel_gemm(kn, mr, kk, aq, &pn[i], tile);
						tile_store(j, tile, NULL, kn->nr[pn[i].v], mr, &pn[i], ym, ydelta, bm);
					}
					if (rem) {
						rl.a[rl.n] = aq;
						rl.bias[rl.n] = bm;
						rl.y[rl.n] = ym;
						rl.mr[rl.n] = mr;
						rl.ydelta[rl.n++] = ydelta;
						if (rl.n == rem_group)
							rem_flush(j, &rl, kk, cnt, &pn[np - 1], tile);
					}
				}
			}
			if (rem)
				rem_flush(j, &rl, kk, cnt, &pn[np - 1], tile);
			if (LINES && rem && ph2 >= 0)
				rem_flush(j, &rl2, j->cg * tp->ntaps[ph2], cnt, &pn2[np - 1], tile);
		}
	}
	if (j->kp.stream)
		kph->store_fence(); /* non-temporal stores are weakly ordered */
}

/* rep[ph]: the first phase with the same grid range and the same tap offsets as ph (so the
 * same B panels); ph itself when none. */
static ONNXRUN__MCU_NOINLINE void group_phases(struct phase_job *j, int64_t *rep)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t n = j->g->n;
	int64_t r[S], rq[S], d1[S], d2[S];
	for (int64_t ph = 0; ph < tp->nphase; ph++) {
		rep[ph] = ph;
		convt_phase_residues(tp, ph, r);
		for (int64_t q = 0; q < ph && rep[ph] == ph && tp->nphase <= GROUP_MAX_PHASES; q++) {
			bool same = rep[q] == q && tp->ntaps[q] == tp->ntaps[ph] &&
			            !memcmp(j->qlo + q * S, j->qlo + ph * S, (size_t)n * sizeof(int64_t)) &&
			            !memcmp(j->qn + q * S, j->qn + ph * S, (size_t)n * sizeof(int64_t));
			convt_phase_residues(tp, q, rq);
			for (int64_t t = 0; t < tp->ntaps[ph] && same; t++) {
				convt_tap(tp, r, t, NULL, d1);
				convt_tap(tp, rq, t, NULL, d2);
				same = !memcmp(d1, d2, (size_t)n * sizeof(int64_t));
			}
			if (same)
				rep[ph] = q;
		}
	}
}

/* True when phase ph is alone in its class (no other phase shares its B panels). */
static bool class_single(const struct phase_job *j, int64_t ph)
{
	for (int64_t q = 0; q < j->pk->taps.nphase; q++)
		if (q != ph && j->rep[q] == ph)
			return false;
	return true;
}

/* Whether classes p1 and p2 pair (pair_classes) phase by phase: every phase of p1 has the
 * last-axis residue of p1, every phase of p2 that of p2, and each phase q of p1 one mate of
 * p2 with q's residues on the other axes (q's outputs at position p then lie right before
 * the mate's, as p1's before p2's). Writes mate[q] for p1's phases when they do. */
static bool classes_mate(const struct phase_job *j, int64_t p1, int64_t p2)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t last = j->g->n - 1;
	int64_t r[S], rq[S], n1 = 0, n2 = 0;
	for (int64_t q = 0; q < tp->nphase; q++) {
		if (j->rep[q] != p1 && j->rep[q] != p2)
			continue;
		if (j->rlast[q] != j->rlast[j->rep[q]])
			return false;
		if (j->rep[q] == p2) {
			n2++;
			continue;
		}
		n1++;
		convt_phase_residues(tp, q, r);
		j->mate[q] = -1;
		for (int64_t q2 = 0; q2 < tp->nphase && j->mate[q] < 0; q2++) {
			if (j->rep[q2] != p2)
				continue;
			convt_phase_residues(tp, q2, rq);
			if (!memcmp(r, rq, (size_t)last * sizeof(int64_t)))
				j->mate[q] = q2;
		}
		if (j->mate[q] < 0)
			return false;
	}
	return n1 == n2; /* and the mates distinct: one per residue set of the other axes */
}

/* Pairs classes whose outputs interleave along the last axis (stride 2, the same grid
 * shape, and position p of the second lands right after position p of the first, e.g. k4
 * s2 p1's residues 1 and 0; with several phases each, phase by phase: classes_mate): one
 * item runs both and stores whole vectors (store_pair_avx512). The first of each pair stays
 * in classes[], the second goes to partner[]. Classes of several phases pair on one thread
 * only: a pair is one item where there were two, items that the threads share (the border
 * split's interior job of dcgan_b8 has its two classes, one per thread). */
static ONNXRUN__MCU_NOINLINE void pair_classes(struct phase_job *j, int threads)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t n = j->g->n, last = n - 1;
	int64_t kept = 0;
	bool gone[PAIR_MAX_CLASSES] = { false };
	if (tp->s[last] != 2 || j->nclass > PAIR_MAX_CLASSES || j->nclass < 2)
		return;
	for (int64_t c1 = 0; c1 < j->nclass; c1++) {
		const int64_t p1 = j->classes[c1];
		if (gone[c1] || (threads > 1 && !class_single(j, p1)))
			continue;
		for (int64_t c2 = 0; c2 < j->nclass; c2++) {
			const int64_t p2 = j->classes[c2];
			bool ok = c2 != c1 && !gone[c2] && j->partner[c2] < 0 && (threads == 1 || class_single(j, p2)) &&
			          !memcmp(j->qn + p1 * S, j->qn + p2 * S, (size_t)n * sizeof(int64_t)) &&
			          !memcmp(j->qlo + p1 * S, j->qlo + p2 * S, (size_t)last * sizeof(int64_t));
			/* o = q*s + r - pad: position p of p2 is one past position p of p1 */
			ok = ok && (j->qlo[p2 * S + last] - j->qlo[p1 * S + last]) * 2 + j->rlast[p2] - j->rlast[p1] == 1;
			if (ok && classes_mate(j, p1, p2)) {
				j->partner[c1] = p2;
				gone[c2] = true;
				j->paired = true;
				break;
			}
		}
	}
	for (int64_t c = 0; c < j->nclass; c++)
		if (!gone[c]) {
			j->classes[kept] = j->classes[c];
			j->partner[kept++] = j->partner[c];
		}
	j->nclass = kept;
}

#ifndef ONNXRUN_BAREMETAL /* LINES */
/* The lines that the phases of class p1 and, if p2 >= 0, class p2 fill (line_classes):
 * split by their residues on the axes before the last, each part must hold one phase at
 * each last-axis output offset off = qlo * s + r - pad_begin in 0 .. s-1 (position p of
 * the phase then lands at p * s + off: the phases' positions p make line p together).
 * Writes each line's phases by offset (ph, s per line) and ydelta from p1's runs (yd);
 * returns the line count, 0 when they do not fill whole lines (or more than cap slots). */
static int64_t lines_fit(const struct phase_job *j, int64_t p1, int64_t p2, int64_t cap, int64_t *ph, int64_t *yd)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t n = j->g->n, last = n - 1;
	const int64_t s = tp->s[last], pad = j->g->pad_begin[last];
	int64_t r[S], rl[S], r1[S], nl = 0, cnt = 0;
	if (p2 >= 0 && (memcmp(j->qn + p1 * S, j->qn + p2 * S, (size_t)n * sizeof(int64_t)) ||
	                memcmp(j->qlo + p1 * S, j->qlo + p2 * S, (size_t)last * sizeof(int64_t))))
		return 0;
	convt_phase_residues(tp, p1, r1);
	for (int64_t q = 0; q < tp->nphase; q++) {
		if (j->rep[q] != p1 && (p2 < 0 || j->rep[q] != p2))
			continue;
		convt_phase_residues(tp, q, r);
		const int64_t off = j->qlo[q * S + last] * s + r[last] - pad;
		int64_t l = 0;
		if (off < 0 || off >= s || ++cnt > tp->nphase)
			return 0;
		for (; l < nl; l++) { /* the line of q's residues on the other axes */
			int64_t any = l * s;
			while (ph[any] < 0)
				any++;
			convt_phase_residues(tp, ph[any], rl);
			if (!memcmp(r, rl, (size_t)last * sizeof(int64_t)))
				break;
		}
		if (l == nl) {
			if ((nl + 1) * s > cap)
				return 0;
			for (int64_t m = 0; m < s; m++)
				ph[nl * s + m] = -1;
			yd[nl++] = 0;
		}
		if (ph[l * s + off] >= 0)
			return 0;
		ph[l * s + off] = q;
		if (off == 0) { /* the line's start relative to p1's runs: p * s + off(p1) */
			yd[l] = -(j->qlo[p1 * S + last] * s + r1[last] - pad);
			for (int32_t a = 0; a < last; a++)
				yd[l] += (r[a] - r1[a]) * j->ys[a];
		}
	}
	return cnt == nl * s ? nl : 0;
}

/* Groups of classes whose phases fill whole output lines along a last axis of stride 3 to
 * 16 (lines_fit), stored with the table's store_lines where it writes whole vectors at that
 * stride (lines_strides; elsewhere line after line was no faster than the per-phase stores:
 * bench/README.md): one class (k16 s8 p0: all 8 phases
 * share their B panels), or two with the same grid (k16 s8 p4: residues 4-7 at grid
 * positions q and 0-3 at q + 1 are two classes; position p of both lies in output line p).
 * The first class of two stays in classes[], the second goes to partner[] (only with
 * pairs). */
static ONNXRUN__MCU_NOINLINE bool line_classes(struct phase_job *j, struct onnxrun_op_context *ctx, bool pairs)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int64_t s = tp->s[j->g->n - 1], np = tp->nphase;
	int64_t kept = 0, used = 0;
	bool gone[PAIR_MAX_CLASSES] = { false };
	if (s < 3 || s > 16 || j->nclass > PAIR_MAX_CLASSES || !j->kt->phase.store_lines ||
	    !(j->kt->phase.lines_strides >> s & 1))
		return true;
	if (!(j->nline = onnxrun__calloc(ctx->env, (size_t)(4 * np), sizeof *j->nline)))
		return false;
	j->line_at = j->nline + np;
	j->line_ph = j->line_at + np;
	j->line_yd = j->line_ph + np;
	for (int64_t c1 = 0; c1 < j->nclass; c1++) {
		const int64_t p1 = j->classes[c1];
		int64_t *lph = j->line_ph + used, *lyd = j->line_yd + used / s, c2 = -1;
		int64_t nl = gone[c1] ? 0 : lines_fit(j, p1, -1, np - used, lph, lyd);
		for (int64_t c = 0; pairs && !gone[c1] && !nl && c < j->nclass; c++)
			if (c != c1 && !gone[c] && !j->nline[j->classes[c]] &&
			    (nl = lines_fit(j, p1, j->classes[c], np - used, lph, lyd)))
				c2 = c;
		if (!nl)
			continue;
		j->nline[p1] = nl;
		j->line_at[p1] = used;
		used += nl * s;
		j->lines = true;
		if (c2 >= 0) {
			j->partner[c1] = j->classes[c2];
			gone[c2] = true;
			j->lines2 = true;
		}
	}
	for (int64_t c = 0; c < j->nclass; c++)
		if (!gone[c]) {
			j->classes[kept] = j->classes[c];
			j->partner[kept++] = j->partner[c];
		}
	j->nclass = kept;
	return true;
}

/* Undoes line_classes: every class its own item again. */
static void line_classes_undo(struct phase_job *j, struct onnxrun_op_context *ctx)
{
	onnxrun__free(ctx->env, j->nline);
	j->nline = NULL;
	j->lines = j->lines2 = false;
	j->nclass = 0;
	for (int64_t ph = 0; ph < j->pk->taps.nphase; ph++)
		if (j->rep[ph] == ph && j->npos[ph]) {
			j->partner[j->nclass] = -1;
			j->classes[j->nclass++] = ph;
		}
}

static void plan_split(struct phase_job *j, int threads);

/* Several threads, rank 1, a class pair to which plan_split gave channel chunks (too few
 * tiles for the threads): each chunk packs its own copy of the B panels. Instead the
 * positions split: tiles of equal length (a multiple of the stride, so each phase gets the
 * same positions in each), as few as the threads and ITEM_MAX_FMAS allow, one channel chunk;
 * the pair keeps its whole-line stores and B is packed once. Only where each thread's tile
 * still holds nb B panels per phase: every thread then reads all the pair's weights, once per
 * nb panels as on one thread (hifigan_512's threads would each read all its 8 MiB of weights
 * for 50 positions, where channel chunks give each a part). False: the plan is unchanged. */
static bool line_pairs_tiles(struct phase_job *j, int threads)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t s0 = g->strides[0], nr0 = j->pk->kern->nr[0];
	const convt_real fmas = (convt_real)g->batch * (convt_real)g->out_channels * (convt_real)j->out_sp *
	                        (convt_real)j->cg * (convt_real)j->pk->taps.kprod / (convt_real)j->pk->taps.nphase;
	int64_t n = threads, t;
	if (g->n != 1 || j->mchunks < 2 || j->nrows / s0 / threads < j->nb * nr0)
		return false;
	while (fmas / (convt_real)(g->group * n) > ITEM_MAX_FMAS && j->nrows / (n + threads) >= s0)
		n += threads;
	t = (j->nrows + n - 1) / n;
	t = (t + s0 - 1) / s0 * s0;
	j->trows = t;
	j->ntiles = (j->nrows + t - 1) / t;
	j->mchunks = 1;
	j->mchunk = j->pk->mpanels;
	return true;
}

/* Several threads: a class pair in one item halves the items, which plan_split may make up
 * for with channel chunks, each packing its own copy of the B panels (hifigan_256 on 2
 * threads: pack 2.8% -> 5.3% of the run, more than the line stores saved). Rank 1 splits
 * the positions instead where it can (line_pairs_tiles); else, when that gives fewer chunks,
 * the classes run alone (single-class line groups only); otherwise the pairs stay. False
 * only when out of memory. */
static ONNXRUN__MCU_NOINLINE bool line_pairs_plan(struct phase_job *j, struct onnxrun_op_context *ctx, int threads)
{
	const int64_t chunks = j->mchunks;
	if (!j->lines2 || threads < 2)
		return true;
	if (line_pairs_tiles(j, threads))
		return true;
	line_classes_undo(j, ctx);
	if (!line_classes(j, ctx, false))
		return false;
	plan_split(j, threads);
	if (j->mchunks < chunks)
		return true;
	line_classes_undo(j, ctx);
	if (!line_classes(j, ctx, true))
		return false;
	plan_split(j, threads);
	return true;
}

#endif

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The taps of an item's phases: its class's and its partner class's. */
static double class_cost(const struct phase_job *j, int64_t cl)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	double cost = 0.0;
	for (int64_t q = 0; q < tp->nphase; q++)
		cost += j->rep[q] == j->classes[cl] || (j->partner[cl] >= 0 && j->rep[q] == j->partner[cl]) ?
		                (double)tp->ntaps[q] :
		                0.0;
	return cost;
}

/* Time at which the last of `threads` threads finishes the job's items in the pool's
 * order (runtime/pool.c: thread t owns items [n*t/T, n*(t+1)/T) and claims them from the
 * front, then claims from the other threads' ranges in turn), an item costing its tile's
 * rows times its class's taps (cost[]) times its channel chunk's panels. */
static double owner_makespan(const struct phase_job *j, int threads, bool chunk_major, const double *cost)
{
	const int64_t n = j->g->group * j->ntiles * j->nclass * j->mchunks;
	double fin[8] = { 0 }, most = 0;
	int64_t next[8], end[8];
	int from[8] = { 0 }, left = threads;
	bool done[8] = { false };
	for (int v = 0; v < threads; v++) {
		next[v] = n / threads * v + n % threads * v / threads;
		end[v] = n / threads * (v + 1) + n % threads * (v + 1) / threads;
	}
	while (left > 0) {
		int t = -1;
		for (int u = 0; u < threads; u++)
			if (!done[u] && (t < 0 || fin[u] < fin[t]))
				t = u;
		while (from[t] < threads && next[(t + from[t]) % threads] >= end[(t + from[t]) % threads])
			from[t]++;
		if (from[t] == threads) {
			done[t] = true;
			left--;
			continue;
		}
		int64_t grp, tl, cl, mc;
		item_index(j, chunk_major, next[(t + from[t]) % threads]++, &grp, &tl, &cl, &mc);
		const int64_t rows = j->nrows - tl * j->trows < j->trows ? j->nrows - tl * j->trows : j->trows;
		const int64_t plo = mc * j->mchunk, phi = plo + j->mchunk < j->pk->mpanels ? plo + j->mchunk : j->pk->mpanels;
		fin[t] += (double)rows * cost[cl] * (double)(phi - plo);
		most = fin[t] > most ? fin[t] : most;
	}
	return most;
}

/* Several threads: among tile heights near the planned one (aligned, half to one and a half
 * times), the one whose items the pool's split finishes soonest (owner_makespan: each thread
 * owns a contiguous range of items), so that no thread waits long for the other at the end
 * of the run. E.g. dcgan_128 on 2 threads: tiles of 14, 14, 14, 14 and 8 output rows x 2
 * classes give the first thread 5 items of 14 rows and the second 3 of 14 and 2 of 8 (70
 * against 58 rows' worth, and nothing left to take from the first), tiles of 16 rows 64 and
 * 64. Among heights that finish equally soon, the one nearest the planned height (the larger
 * on a tie): each tile stages its rows of x and the kernel's reach with them. Only for splits
 * of at most a few thousand items. */
static void balance_tiles(struct phase_job *j, int threads, int64_t align)
{
	const int64_t planned = j->trows;
	double cost[PAIR_MAX_CLASSES], best;
	int64_t pick, step = align;
	if (j->nclass > PAIR_MAX_CLASSES || threads > 8 ||
	    (double)j->g->group * (double)j->nclass * (2.0 * (double)j->nrows / (double)j->trows + 1.0) > 4096.0)
		return;
	for (int64_t cl = 0; cl < j->nclass; cl++)
		cost[cl] = class_cost(j, cl);
	const double at_planned = owner_makespan(j, threads, false, cost);
	while (planned / step > 16)
		step += align;
	const int64_t t0 = (planned / 2 + align - 1) / align * align, lo = t0 > align ? t0 : align;
	/* the least makespan, then the height nearest the planned one that reaches it */
	best = at_planned;
	pick = -1;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && at_planned <= best * 1.001)
			pick = planned;
		for (int64_t t = lo; t <= planned * 3 / 2 && t <= j->nrows; t += step) {
			j->trows = t;
			j->ntiles = (j->nrows + t - 1) / t;
			const double m = owner_makespan(j, threads, false, cost);
			const int64_t dt = t > planned ? t - planned : planned - t;
			const int64_t dp = pick > planned ? pick - planned : planned - pick;
			if (pass == 0 && m < best)
				best = m;
			else if (pass == 1 && m <= best * 1.001 && (pick < 0 || dt < dp || (dt == dp && t > pick)))
				pick = t;
		}
	}
	pick = pick < 0 ? planned : pick; /* never: the least makespan is reached somewhere */
	j->trows = pick;
	j->ntiles = (j->nrows + j->trows - 1) / j->trows;
}

/* Several threads and channel chunks: order the items chunk first when the pool's split
 * then finishes sooner (owner_makespan), so that each thread's range holds every tile
 * (each chunk its own output channels: no output line written by two threads). E.g.
 * hifigan_512 on 2 threads: tiles of 512 and 288 output rows, 2 classes, 2 chunks; tile
 * first gives one thread the four items of the first tile and the other those of the
 * second, which then takes one of the first's (1664 row-units against 1600 chunk first). */
static void choose_order(struct phase_job *j, int threads)
{
	double cost[PAIR_MAX_CLASSES];
	if (threads < 2 || threads > 8 || j->mchunks < 2 || j->nclass > PAIR_MAX_CLASSES ||
	    (double)j->g->group * (double)j->ntiles * (double)j->nclass * (double)j->mchunks > 4096.0)
		return;
	for (int64_t cl = 0; cl < j->nclass; cl++)
		cost[cl] = class_cost(j, cl);
	j->chunk_major = owner_makespan(j, threads, true, cost) < 0.99 * owner_makespan(j, threads, false, cost);
}

/* Whether the job's items as they are (no channel chunks) split over `threads` evenly: the
 * pool's split of them (owner_makespan) ends within 0.1% of their total cost / threads, with
 * at least two items per thread (a thread held up still leaves one to take). Then channel
 * chunks would only pack every B panel once more per chunk (dcgan_512 on 2 threads: 2
 * tiles x 2 classes of equal cost). Only for splits of at most a few thousand items. */
#ifndef ONNXRUN_BAREMETAL /* (one thread on bare metal) */
static bool items_even(const struct phase_job *j, int threads)
{
	double cost[PAIR_MAX_CLASSES];
	const int64_t items = j->g->group * j->ntiles * j->nclass;
	if (threads < 2 || threads > 8 || items < 2 * threads || j->nclass > PAIR_MAX_CLASSES || items > 4096)
		return false;
	for (int64_t cl = 0; cl < j->nclass; cl++)
		cost[cl] = class_cost(j, cl);
	/* one thread's makespan is the items' total cost */
	return owner_makespan(j, threads, false, cost) <= 1.001 * owner_makespan(j, 1, false, cost) / threads;
}
#else
#define items_even(j, threads) false
#endif

/* Work split: tiles of output rows (batch x first spatial axis) sized so that a tile's
 * output and input stay in L2, aligned so each phase's positions fill whole panels, times
 * the phase classes (which share nothing); output channels are split further only when
 * that gives too few items for the threads (each channel chunk re-packs its B panels). Any
 * split gives the same results: each output is one micro-kernel dot product over K in
 * order. */
static ONNXRUN__MCU_NOINLINE void plan_split(struct phase_job *j, int threads)
{
	const struct onnxrun__convt_geom *g = j->g;
	const int64_t nr0 = j->pk->kern->nr[0], mg = j->pk->mg;
	const int64_t per_row = j->out_sp / g->out[0], nphase = j->pk->taps.nphase;
	const struct onnxrun__tuning *tn = onnxrun__tuning();
	int64_t inner_q = 1, align, budget, items;
	for (int32_t a = 1; a < g->n; a++)
		inner_q *= (g->out[a] + g->strides[a] - 1) / g->strides[a];
	align = g->strides[0] * (nr0 / gcd64(nr0, inner_q));
#ifndef ONNXRUN_BAREMETAL
	align = j->border_align ? j->border_align : align;
#endif
	budget = (int64_t)(tn->phase_tile_bytes / sizeof(float)) / (mg + j->cg / nphase + 1) / per_row;
	j->nrows = g->batch * g->out[0];
	j->trows = budget / align * align;
	j->trows = j->trows < align ? align : j->trows;
	/* weights of a class beyond L2, which would stream from L3 for every B panel: run each
	 * weight panel over nb B panels (tuning: their bytes together) and make tiles hold that
	 * many panels per phase. Below that, one panel at a time keeps B closer. */
	j->nb = 1;
	if (MAX_NB > 1 && (size_t)(j->pk->a_group / j->nclass) * sizeof(float) > tn->phase_weights_l2) {
		const int64_t panel = (j->paired ? 2 : 1) * j->cg * j->pk->taps.tmax * nr0 * (int64_t)sizeof(float);
		int64_t rows;
		j->nb = (int64_t)tn->phase_bpanels_bytes / panel;
		j->nb = j->nb < 1 ? 1 : j->nb > MAX_NB ? MAX_NB : j->nb;
		rows = (j->nb * nr0 + inner_q - 1) / inner_q * g->strides[0];
		rows = (rows + align - 1) / align * align;
		j->trows = rows > j->trows ? rows : j->trows;
	}
	j->trows = j->trows > j->nrows ? j->nrows : j->trows;
	j->ntiles = (j->nrows + j->trows - 1) / j->trows;
	j->mchunks = 1;
	j->mchunk = j->pk->mpanels;
	items = g->group * j->ntiles * j->nclass;
	if (threads > 1 && j->nb == 1)
		balance_tiles(j, threads, align);
	/* too few items for the threads: smaller tiles first (with one B panel at a time; tiles
	 * sized for nb panels keep theirs), then channel chunks, each of which packs its own
	 * copy of the B panels (so costs more than a smaller tile), unless the items split
	 * evenly as they are (items_even) */
	if (items < 4 * threads && threads > 1 && j->nb == 1) {
		const int64_t per = g->group * j->nclass, want = (4 * threads + per - 1) / per;
		int64_t t = (j->nrows + want - 1) / want;
		t = (t + align - 1) / align * align;
		if (t < j->trows) {
			j->trows = t;
			j->ntiles = (j->nrows + j->trows - 1) / j->trows;
			items = per * j->ntiles;
		}
	}
	if (items < 4 * threads && threads > 1 && !items_even(j, threads)) {
		int64_t want = (4 * threads + items - 1) / items, panels = j->pk->mpanels;
		want = want > panels ? panels : want;
		j->mchunk = (panels + want - 1) / want;
		j->mchunks = (panels + j->mchunk - 1) / j->mchunk;
	}
	/* items of more than ITEM_MAX_FMAS multiply-adds (huge layers): smaller tiles, then
	 * channel chunks, so a cancel or deadline, checked between items, stops a run soon */
	const convt_real fmas = (convt_real)g->batch * (convt_real)g->out_channels * (convt_real)j->out_sp *
	                        (convt_real)j->cg * (convt_real)j->pk->taps.kprod / (convt_real)nphase;
	while (fmas / (convt_real)(g->group * j->ntiles * j->nclass * j->mchunks) > ITEM_MAX_FMAS) {
		if (j->trows > align) {
			j->trows = (j->trows / 2 + align - 1) / align * align;
			j->ntiles = (j->nrows + j->trows - 1) / j->trows;
		} else if (j->mchunk > 1) {
			j->mchunk = (j->mchunk + 1) / 2;
			j->mchunks = (j->pk->mpanels + j->mchunk - 1) / j->mchunk;
		} else {
			break;
		}
	}
}

/* Whether to stage x (rows mode, 2-D or more, batch 1): per tile, the x rows it reads are
 * copied once into a staging area, [row][channel][the other axes with zero pads], channel
 * blocks not a multiple of 1 KiB apart. A panel's B rows are then one table of offsets from
 * one base (kernel rel[]), or from two bases for a panel of two half-panel grid rows
 * (rel2[]): no per-panel pointers or copy plans, no masked copies at the edges, and a
 * panel's rows sit in a few KiB instead of one line per channel plane (planes of 4 KiB
 * multiples share L1 sets). Where panels fit in grid rows, only when enough calls share a
 * panel to pay for the copy (tuning: stage_calls); where grid rows are half a panel, always
 * (the alternatives plan pointers or copy for every panel); not when rows are shorter. */
static bool stage_wanted(const struct phase_job *j, int64_t uses)
{
	const struct onnxrun__convt_geom *g = j->g;
	const struct onnxrun__gemm_kernels *kn = j->pk->kern;
	const int64_t nr0 = kn->nr[0];
	bool whole = true, halves = true;
	if (!j->rows || !kn->rel[0] || g->n < 2 || g->batch != 1)
		return false;
	for (int64_t ph = 0; ph < j->pk->taps.nphase; ph++) {
		const int64_t len = j->qn[ph * S + g->n - 1];
		if (!j->npos[ph])
			continue;
		whole = whole && len >= nr0;
		halves = halves && kn->rel2[0] && len >= nr0 / 2 && len % (nr0 / 2) == 0;
	}
	return (whole && uses >= onnxrun__tuning()->stage_calls) || (!whole && halves);
}

/* Sets up the staging area (stage_wanted) when its size fits the tuning's stage_bytes and
 * its pads a few vectors (wider pads mean a kernel far wider than x): the pads, strides and
 * row count, j->rel (B row offsets per phase, channel and tap), and its place in a thread's
 * scratch after *bytes. Off bare metal, when every input row the group's tiles read fits
 * stage_bytes too, the area holds them all (STAGE_WHOLE). False only when out of memory. */
static ONNXRUN__MCU_NOINLINE bool plan_staging(struct phase_job *j, struct onnxrun_op_context *ctx,
                                               size_t *bytes)
{
	const struct onnxrun__convt_geom *g = j->g;
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t n = g->n;
	int64_t lo[S], hi[S], r[S], d[S], dymin = INT64_MAX, dymax = INT64_MIN, plane = 1;
	for (int32_t a = 1; a < n; a++) {
		lo[a] = INT64_MAX;
		hi[a] = INT64_MIN;
	}
	/* x coordinates read: q - d over every phase's q range and tap */
	for (int64_t ph = 0; ph < tp->nphase; ph++) {
		if (!j->npos[ph])
			continue;
		convt_phase_residues(tp, ph, r);
		for (int64_t t = 0; t < tp->ntaps[ph]; t++) {
			convt_tap(tp, r, t, NULL, d);
			for (int32_t a = 1; a < n; a++) {
				const int64_t l = j->qlo[ph * S + a] - d[a], h = l + j->qn[ph * S + a] - 1;
				lo[a] = l < lo[a] ? l : lo[a];
				hi[a] = h > hi[a] ? h : hi[a];
			}
			dymin = d[0] < dymin ? d[0] : dymin;
			dymax = d[0] > dymax ? d[0] : dymax;
		}
	}
	if (dymin == INT64_MAX) /* no phase with positions has a tap: nothing to read */
		return true;
	for (int32_t a = n - 1; a >= 1; a--) {
		j->st_pad[a] = lo[a] < 0 ? -lo[a] : 0;
		j->st_ext[a] = j->st_pad[a] + g->in[a] + (hi[a] >= g->in[a] ? hi[a] - g->in[a] + 1 : 0);
		if (j->st_pad[a] > 64 || j->st_ext[a] - g->in[a] > 128)
			return true;
		j->st_str[a] = plane;
		plane *= j->st_ext[a];
	}
	if ((plane * 4) % 1024 == 0)
		plane++; /* channel blocks 1 KiB apart or more would share L1 sets */
	j->st_plane = plane;
	j->st_dymin = dymin;
	j->st_dymax = dymax;
	j->st_rows = j->trows / g->strides[0] + 3 + (dymax - dymin); /* an item's rows fit (checked) */
#if SIZED_SCRATCH
	{ /* exactly the most rows a tile reads (phase_items' i0 .. i1) */
		const int64_t s0 = g->strides[0], p0 = g->pad_begin[0];
		j->st_rows = 0;
		for (int64_t R0 = 0; R0 < j->nrows; R0 += j->trows) {
			const int64_t R1 = R0 + j->trows < j->nrows ? R0 + j->trows : j->nrows;
			const int64_t rows = convt_floor_div(R1 - 1 + p0, s0) - convt_floor_div(R0 + p0 - (s0 - 1), s0) +
			                     dymax - dymin + 1;
			j->st_rows = rows > j->st_rows ? rows : j->st_rows;
		}
	}
#endif
	if ((size_t)(j->st_rows * j->cg * plane) * sizeof(float) > onnxrun__tuning()->stage_bytes)
		return true;
#ifndef ONNXRUN_BAREMETAL
	if (STAGE_WHOLE) {
		/* every row any tile reads (phase_items' i0 .. i1 over the tiles), when they fit
		 * stage_bytes together with the group's weights: rows staged once land in lines
		 * not written before, which must not push the weights out of L2 (dcgan_128: 609 KiB
		 * of rows and 512 KiB of weights keep one tile's rows) */
		const int64_t s0 = g->strides[0], p0 = g->pad_begin[0];
		const int64_t ilo = convt_floor_div(p0 - (s0 - 1), s0) - dymax;
		const int64_t ihi = convt_floor_div(j->nrows - 1 + p0, s0) - dymin;
		if ((size_t)((ihi - ilo + 1) * j->cg * plane + j->pk->a_group) * sizeof(float) <=
		    onnxrun__tuning()->stage_bytes) {
			j->st_whole = true;
			j->st_ilo = ilo;
			j->st_rows = ihi - ilo + 1;
		}
	}
#endif
	if (!(j->rel = onnxrun__calloc(ctx->env, (size_t)(tp->nphase * j->cg * tp->tmax), sizeof *j->rel)))
		return false;
	for (int64_t ph = 0; ph < tp->nphase; ph++) {
		convt_phase_residues(tp, ph, r);
		for (int64_t t = 0; t < tp->ntaps[ph]; t++) {
			int64_t off;
			convt_tap(tp, r, t, NULL, d);
			off = -d[0] * j->cg * plane;
			for (int32_t a = 1; a < n; a++)
				off -= d[a] * j->st_str[a];
			for (int64_t ch = 0; ch < j->cg; ch++)
				j->rel[ph * j->cg * tp->tmax + ch * tp->ntaps[ph] + t] =
					(onnxrun__krel)((ch * plane + off) * (int64_t)sizeof(float));
		}
	}
	j->staged = true;
#if SIZED_SCRATCH
	{
		/* panels in whole grid rows of every phase (nr0 positions from a row's start) are
		 * all staged: no packed panels, copy plans or row pointers */
		const int64_t nr0 = j->pk->kern->nr[0];
		j->rel_only = true;
		for (int64_t ph = 0; ph < tp->nphase; ph++)
			if (j->npos[ph] && j->qn[ph * S + n - 1] % nr0)
				j->rel_only = false;
		if (j->rel_only) {
			j->ptrs = false;
			*bytes = scratch_bytes(j); /* no copy plans or row pointers now */
		}
	}
#endif
	j->st_offset = (*bytes + STAGE_LINE - 1) / STAGE_LINE * STAGE_LINE;
	*bytes = j->st_offset + STAGE_LINE + (size_t)(j->st_rows * j->cg * plane) * sizeof(float);
	return true;
}

/* Rank 1 in rows mode (in_place_rel): the offsets of B row (channel, tap) from a panel's
 * first x position, per phase, and each phase's tap offset range. False only when out of
 * memory. */
static ONNXRUN__MCU_NOINLINE bool plan_in_place_rel(struct phase_job *j, struct onnxrun_op_context *ctx)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	int64_t r[S], d[S];
	/* the offsets, then rx_d (int64_t, 8-byte aligned) in the same block */
	const size_t head = ((size_t)(tp->nphase * j->cg * tp->tmax) * sizeof *j->rel + sizeof(int64_t) - 1) /
	                    sizeof(int64_t) * sizeof(int64_t);
	char *blk = onnxrun__calloc(ctx->env, head + (size_t)(2 * tp->nphase) * sizeof(int64_t), 1);
	if (!blk)
		return false;
	j->rel = (onnxrun__krel *)(void *)blk;
	j->rx_d = (int64_t *)(void *)(blk + head);
	for (int64_t ph = 0; ph < tp->nphase; ph++) {
		int64_t dmin = INT64_MAX, dmax = INT64_MIN;
		convt_phase_residues(tp, ph, r);
		for (int64_t t = 0; t < tp->ntaps[ph]; t++) {
			convt_tap(tp, r, t, NULL, d);
			dmin = d[0] < dmin ? d[0] : dmin;
			dmax = d[0] > dmax ? d[0] : dmax;
			for (int64_t ch = 0; ch < j->cg; ch++)
				j->rel[ph * j->cg * tp->tmax + ch * tp->ntaps[ph] + t] =
					(onnxrun__krel)((ch * j->in_sp - d[0]) * (int64_t)sizeof(float));
		}
		j->rx_d[2 * ph] = tp->ntaps[ph] ? dmin : 0; /* a phase without taps reads nothing */
		j->rx_d[2 * ph + 1] = tp->ntaps[ph] ? dmax : 0;
	}
	j->in_place_rel = true;
	return true;
}

#ifndef ONNXRUN_BAREMETAL
/* Whether a job of these packed weights takes the skip_quarter tile: where the table has it
 * (its 32-wide panels) and the CPU gains by it (kernels.h, the tuning's skip_quarters). */
static bool skip_wanted(const struct onnxrun__convt_packed *pk)
{
	return pk->kern->skip_quarter && pk->kern->nr[0] == 32 && onnxrun__tuning()->skip_quarters;
}

/* Dense B (dense_panel): when every phase has one tap that reads x at the phase's own grid
 * position (kernel = stride, no pads: x's positions are the grid's), and the panels would be
 * packed (not read in place or staged), one B panel at a time, a thread packs the panels of
 * an aligned range together, as many as the tuning's phase_bpanels_bytes hold (at least
 * 2). Its area goes after *bytes in a thread's scratch. */
static void plan_dense(struct phase_job *j, size_t *bytes)
{
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int64_t nr0 = j->pk->kern->nr[0];
	int64_t r[S], d[S];
	if (j->staged || j->in_place_rel || j->rows || j->halves || j->nb != 1)
		return;
	for (int64_t ph = 0; ph < tp->nphase; ph++) {
		if (!j->npos[ph])
			continue;
		if (tp->ntaps[ph] != 1)
			return;
		convt_phase_residues(tp, ph, r);
		convt_tap(tp, r, 0, NULL, d);
		for (int32_t a = 0; a < j->g->n; a++)
			if (d[a] || j->qlo[ph * S + a] || j->qn[ph * S + a] != j->g->in[a])
				return;
	}
	j->dn_panels = (int64_t)(onnxrun__tuning()->phase_bpanels_bytes / ((size_t)(j->cg * nr0) * sizeof(float)));
	j->dn_panels = j->dn_panels > 64 ? 64 : j->dn_panels;
	if (j->dn_panels < 2)
		return;
	j->dense = true;
	j->dn_offset = (*bytes + 63) / 64 * 64;
	*bytes = j->dn_offset + 64 + (size_t)(j->dn_panels * j->cg * nr0) * sizeof(float);
}
#endif

#ifdef ONNXRUN_BAREMETAL
static enum onnxrun_status phase_compute(const struct convt_call *c, const struct onnxrun__convt_packed *pk)
#else
static void border_narrow(struct phase_job *j, int64_t ph, const int64_t *r, const int64_t *box0);
static int64_t border_align(const struct phase_job *j);
static bool img_inner_wanted(const struct phase_job *j);
struct border_defer;
static enum onnxrun_status border_defer(struct onnxrun_op_context *ctx, const struct phase_job *j, int64_t *buf,
                                        int64_t items, struct border_defer *defer);

/* One job of the phase path: every phase, or with box0 (border.h) the first-axis grid
 * range box0 gives each residue, planned and kept in defer (run by phase_compute) when
 * defer is not NULL. */
static enum onnxrun_status phase_run(const struct convt_call *c, const struct onnxrun__convt_packed *pk,
                                     const int64_t *box0, struct border_defer *defer)
#endif
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const float *x = c->x, *bias = c->b;
	float *y = c->y;
	const struct onnxrun__convt_taps *tp = &pk->taps;
	const int64_t np = tp->nphase, nr0 = pk->kern->nr[0];
	struct phase_job j;
	int64_t *buf, r[S], items;
	const int threads = onnxrun__op_plan_threads(ctx);
	const struct onnxrun__tuning *tn = onnxrun__tuning();
	enum onnxrun_status st;
	size_t bytes;

	memset(&j, 0, sizeof j);
	j.g = g;
	j.pk = pk;
	j.x = x;
	j.bias = bias;
	j.y = y;
	j.cg = pk->cin / pk->group;
	j.in_sp = j.out_sp = 1;
	for (int32_t a = g->n - 1; a >= 0; a--) {
		j.xs[a] = j.in_sp;
		j.ys[a] = j.out_sp;
		j.in_sp *= g->in[a];
		j.out_sp *= g->out[a];
	}
	if (!(buf = onnxrun__calloc(ctx->env, (size_t)(np * (2 * S + 7)), sizeof *buf)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	j.qlo = buf;
	j.qn = buf + np * S;
	j.npos = buf + 2 * np * S;
	j.yres = buf + np * (2 * S + 4);
	j.rlast = j.yres + np;
	for (int64_t ph = 0; ph < np; ph++) {
		convt_phase_residues(tp, ph, r);
		j.npos[ph] = convt_phase_grid(g, r, j.qlo + ph * S, j.qn + ph * S);
#ifndef ONNXRUN_BAREMETAL
		if (box0)
			border_narrow(&j, ph, r, box0);
#endif
		for (int32_t a = 0; a < g->n; a++)
			j.yres[ph] += r[a] * j.ys[a];
		j.rlast[ph] = r[g->n - 1];
	}
#ifndef ONNXRUN_BAREMETAL
	if (box0)
		j.border_align = border_align(&j);
#endif
	j.rep = j.npos + np;
	j.classes = j.rep + np;
	group_phases(&j, j.rep);
	for (int64_t ph = 0; ph < np; ph++)
		if (j.rep[ph] == ph && j.npos[ph])
			j.classes[j.nclass++] = ph;
	j.partner = j.classes + np;
	j.mate = buf + np * (2 * S + 6);
	for (int64_t cl = 0; cl < j.nclass; cl++)
		j.partner[cl] = -1;
	j.kt = pk->kt;
#ifndef ONNXRUN_BAREMETAL
	j.skip = skip_wanted(pk);
	j.img_inner = SKIP_TILE && box0 && img_inner_wanted(&j);
	if (j.img_inner) /* one tile: the positions of a panel span the batch */
		j.border_align = g->batch * g->out[0];
#endif
#ifndef ONNXRUN_BAREMETAL /* LINES */
	if (LINES && !j.img_inner && !line_classes(&j, ctx, true)) {
		onnxrun__free(ctx->env, buf);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
#endif
	if (IN_PLACE && j.kt->phase.store_pair)
		pair_classes(&j, threads);
	j.kp.cg = j.cg;
	j.kp.in_sp = j.in_sp;
	j.kp.out_sp = j.out_sp;
	j.kp.sl = g->strides[g->n - 1];
	j.kp.stream = (uint64_t)g->batch * (uint64_t)g->out_channels * (uint64_t)j.out_sp * sizeof(float) >=
	              tn->stream_output_bytes;
	plan_split(&j, SPLIT_THREADS);
#ifndef ONNXRUN_BAREMETAL /* LINES */
	if (LINES && !line_pairs_plan(&j, ctx, SPLIT_THREADS)) {
		LINES_FREE(ctx->env, j.nline);
		onnxrun__free(ctx->env, buf);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
#endif
	/* In place, B rows come from many x lines (unaligned, often sharing L1 sets) instead of
	 * one packed block: the more micro-kernel calls share a panel, the more a packed copy
	 * pays off (tuning: half_rows_calls, in_place_calls). */
	int64_t uses;
	{
		int64_t most = 1;
		for (int64_t cl = 0; cl < j.nclass; cl++)
			for (int h = 0; h < 1 + LINES; h++) { /* the class and a line group's partner class */
				const int64_t lead = h ? j.partner[cl] : j.classes[cl];
				int64_t cnt = 0;
				for (int64_t q = 0; lead >= 0 && q < np; q++)
					cnt += j.rep[q] == lead;
				most = cnt > most ? cnt : most;
			}
		/* counted in calls of at most 8 rows, the unit the tuning's limits are given in:
		 * what they weigh is how many output channels read each panel */
		const int64_t mrc = pk->kern->mr_max < 8 ? pk->kern->mr_max : 8;
		const int64_t rows = convt_panel_lo(pk->mg, pk->mpanels, j.mchunk);
		uses = (rows + mrc - 1) / mrc * most;
		j.halves = IN_PLACE && pk->kern->ind2[0] && uses <= tn->half_rows_calls;
		j.rows = IN_PLACE && pk->kern->ind[0] && uses <= tn->in_place_calls;
	}
	items = g->group * j.ntiles * j.nclass * j.mchunks;
#if SIZED_SCRATCH
	{
		/* a panel of nr0 positions from offset o of grid rows L long has ceil((o + nr0) / L)
		 * segments, at most (L - 1 + nr0 + L - 1) / L */
		j.segmax = 1;
		for (int64_t ph = 0; ph < np; ph++) {
			const int64_t len = j.qn[ph * S + g->n - 1];
			if (j.npos[ph] && len > 0) {
				/* 2 when len >= nr0; below, nr0 <= 32 keeps it in 32 bits */
				const int64_t most = len >= nr0 ? 2 : (int32_t)(2 * len - 2 + nr0) / (int32_t)len;
				j.segmax = most > j.segmax ? most : j.segmax;
			}
		}
		j.segmax = j.segmax > nr0 ? nr0 : j.segmax;
#ifndef ONNXRUN_BAREMETAL
		if (j.img_inner) /* one run per column */
			j.segmax = nr0;
#endif
		/* the second tile: a pair, or stride-2 last-axis phases sharing B stored together
		 * (neither, nor row pointers, with the scalar kernels alone: scratch_counts) */
		if (IN_PLACE) {
			j.tile2 = j.paired;
			for (int64_t q = 0; !j.tile2 && j.kt->phase.store_pair && tp->s[g->n - 1] == 2 && q + 1 < np; q++)
				j.tile2 = j.rep[q + 1] == j.rep[q];
			j.ptrs = j.rows || j.halves || (j.kt->phase.pack_halves && nr0 == 32);
		}
	}
	bytes = scratch_bytes(&j);
#else
	bytes = (size_t)(PANEL_SETS(&j) * j.nb * j.cg * tp->tmax * nr0 + 2 * pk->kern->mr_max * nr0) * sizeof(float) +
	        (size_t)(PANEL_SETS(&j) * j.nb * nr0) * (sizeof(struct onnxrun__krun) + sizeof(struct seg)) +
	        (size_t)(tp->tmax * nr0) * sizeof(struct onnxrun__kcopy) +
	        (size_t)(PANEL_SETS(&j) * j.nb * 2 * j.cg * tp->tmax) * (sizeof(float *) + sizeof(uint16_t));
#endif
	if (IN_PLACE && stage_wanted(&j, uses) && !plan_staging(&j, ctx, &bytes)) {
		LINES_FREE(ctx->env, j.nline);
		onnxrun__free(ctx->env, buf);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	if (IN_PLACE && j.rows && g->n == 1 && pk->kern->rel[0] && !plan_in_place_rel(&j, ctx)) {
		LINES_FREE(ctx->env, j.nline);
		onnxrun__free(ctx->env, buf);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	if (IN_PLACE && j.kt->phase.rel2_pair && (j.paired || tp->s[g->n - 1] == 2)) {
		const int64_t kmax = j.cg * tp->tmax;
		if (!(j.seq = onnxrun__calloc(ctx->env, (size_t)kmax, sizeof *j.seq))) {
			LINES_FREE(ctx->env, j.nline);
			onnxrun__free(ctx->env, j.rel);
			onnxrun__free(ctx->env, buf);
			return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
		}
		for (int64_t k = 0; k < kmax; k++)
			j.seq[k] = (onnxrun__krel)(k * nr0 * (int64_t)sizeof(float));
	}
	if (LINES && j.lines) { /* the line tiles: sl of mr_max x nr[0] floats */
		j.line_offset = (bytes + 63) / 64 * 64;
		bytes = j.line_offset + (size_t)(j.kp.sl * pk->kern->mr_max * nr0) * sizeof(float);
	}
#ifndef ONNXRUN_BAREMETAL
	if (IN_PLACE)
		plan_dense(&j, &bytes);
#endif
	if (!(j.scratch = onnxrun__convt_scratch(ctx, threads, bytes, &j.scratch_stride))) {
		LINES_FREE(ctx->env, j.nline);
		onnxrun__free(ctx->env, j.seq);
		onnxrun__free(ctx->env, j.rel);
		onnxrun__free(ctx->env, buf);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	if (IN_PLACE)
		choose_order(&j, SPLIT_THREADS);
	for (int t = 0; j.staged && t < threads; t++)
		*(int64_t *)(j.scratch + (size_t)t * j.scratch_stride + j.st_offset) = -1;
#ifndef ONNXRUN_BAREMETAL
	for (int t = 0; j.dense && t < threads; t++) /* nothing packed yet */
		((struct dense_key *)(j.scratch + (size_t)t * j.scratch_stride + j.dn_offset))->xg = NULL;
	if (defer)
		return border_defer(ctx, &j, buf, items, defer);
#endif
	st = onnxrun__op_parallel(ctx, threads, items, phase_items, &j);
	onnxrun__free(ctx->env, j.scratch);
	LINES_FREE(ctx->env, j.nline);
	onnxrun__free(ctx->env, j.seq);
	onnxrun__free(ctx->env, j.rel);
	onnxrun__free(ctx->env, buf);
	return st;
}

#ifndef ONNXRUN_BAREMETAL
/* The border jobs of one run, planned (phase_run with a defer) and then run together. */
struct border_defer {
	struct phase_job *j[CONVT_BORDER_JOBS];
	int64_t *buf[CONVT_BORDER_JOBS], items[CONVT_BORDER_JOBS];
	int n;
};

/* Keeps planned job j (its buffers buf) for border_items. */
static enum onnxrun_status border_defer(struct onnxrun_op_context *ctx, const struct phase_job *j, int64_t *buf,
                                        int64_t items, struct border_defer *defer)
{
	struct phase_job *keep = onnxrun__malloc(ctx->env, sizeof *keep);
	if (!keep) {
		onnxrun__free(ctx->env, j->scratch);
		onnxrun__free(ctx->env, j->nline);
		onnxrun__free(ctx->env, j->seq);
		onnxrun__free(ctx->env, j->rel);
		onnxrun__free(ctx->env, buf);
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	}
	*keep = *j;
	defer->j[defer->n] = keep;
	defer->buf[defer->n] = buf;
	defer->items[defer->n++] = items;
	return ONNXRUN_OK;
}

/* Item `it` of the jobs run together: round robin over the jobs (the first item of each,
 * then the second...), so that the pool's contiguous ranges of items give each thread a
 * share of the large interior job and of the small border jobs alike (k4 s2 p1 on a batch
 * of 4x4 images: two interior items, one head and one tail item, half the work each way on
 * two threads). */
static void border_item(const struct border_defer *d, int64_t it, int *job, int64_t *local)
{
	for (int64_t round = 0;; round++)
		for (int k = 0; k < d->n; k++)
			if (round < d->items[k] && it-- == 0) {
				*job = k;
				*local = round;
				return;
			}
}

static void border_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct border_defer *d = arg;
	for (int64_t it = begin; it < end; it++) {
		int job = 0;
		int64_t local = 0;
		border_item(d, it, &job, &local);
		phase_items(d->j[job], tid, local, local + 1);
	}
}

/* Phase ph's grid box cut to the first-axis range box0 gives its residue r[0]. */
static void border_narrow(struct phase_job *j, int64_t ph, const int64_t *r, const int64_t *box0)
{
	const int64_t qn = j->qn[ph * S];
	j->npos[ph] = qn ? j->npos[ph] / qn * box0[2 * r[0] + 1] : 0;
	j->qlo[ph * S] = box0[2 * r[0]];
	j->qn[ph * S] = box0[2 * r[0] + 1];
}

/* A border job's tiles: whole images, as many as make each phase's positions in a tile fill
 * whole B panels (plan_split's alignment assumes every output row holds a grid row of each
 * phase; a job's phases hold a few rows of each image). Narrower panels are no way out:
 * AVX-512's 16-column tiles ran at half the wide tiles' rate per column on dcgan_b8. */
static int64_t border_align(const struct phase_job *j)
{
	const int64_t nr0 = j->pk->kern->nr[0];
	int64_t imgs = 1;
	for (int64_t ph = 0; ph < j->pk->taps.nphase; ph++)
		if (j->npos[ph]) {
			const int64_t need = nr0 / gcd64(nr0, j->npos[ph] / j->g->batch);
			imgs = imgs / gcd64(imgs, need) * need; /* both divide nr0 */
		}
	return imgs * j->g->out[0];
}

/* Whether border.h job j (narrowed, border_align set, j->skip) runs ordered with the image
 * innermost (img_segs): a batch of 8 images, so that an 8-lane quarter of a wide panel is
 * one grid position of every image, every phase's grid 4 wide along the last axis, so that a
 * panel is one grid row and its last-axis edge column one quarter, and some phase with an
 * edge column that reads padding on at least half its taps (the skip_quarter tile leaves
 * those multiply-adds out, as panel_skip does for a first-axis edge row). The job's tile is
 * then all its positions (phase_run aligns its tiles to the whole batch; a border job is
 * planned as for one thread, so the layout depends on the shapes alone). It costs a
 * transposing pack (img_pack: 8 images' values per quarter) and stores element by element
 * (tile_store), where a grid row's runs were contiguous. Only where the table has
 * skip_quarter and pack_img8 and the tuning enables the tile (AVX-512 on AMD family 0x19);
 * the other tables
 * (portable, AVX2, NEON, SIMD128, and bare metal, which has no border jobs) keep the runs of
 * make_segs. */
static bool img_inner_wanted(const struct phase_job *j)
{
	const struct onnxrun__convt_geom *g = j->g;
	const struct onnxrun__convt_taps *tp = &j->pk->taps;
	const int32_t last = g->n - 1;
	int64_t r[S], delta[S];
	bool worth = false;
	if (!j->skip || !j->kt->phase.pack_img8 || g->batch != 8 || tp->tmax > 32)
		return false;
	for (int64_t ph = 0; ph < tp->nphase; ph++) {
		if (!j->npos[ph])
			continue;
		if (j->qn[ph * S + last] != 4)
			return false;
		convt_phase_residues(tp, ph, r);
		for (int64_t k = 0; k < 4 && !worth; k++) {
			const int64_t q = j->qlo[ph * S + last] + k;
			int64_t bits = 0;
			for (int64_t t = 0; t < tp->ntaps[ph]; t++) {
				convt_tap(tp, r, t, NULL, delta);
				bits += q - delta[last] < 0 || q - delta[last] >= g->in[last];
			}
			worth = bits > 0 && 2 * bits >= tp->ntaps[ph];
		}
	}
	return worth;
}

int onnxrun__convt_phase_img_inner_jobs(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                        const struct onnxrun__convt_packed *pk)
{
	struct onnxrun__convt_border_run run;
	int count = 0;
	const int split = onnxrun__convt_border_plan(env, g, pk, &run);
	if (split <= 0)
		return split;
	for (int jb = 0; jb < CONVT_BORDER_JOBS && count >= 0; jb++) {
		const struct onnxrun__convt_packed *jp = run.pk[jb];
		struct phase_job j;
		int64_t *buf, r[S];
		if (!jp)
			continue;
		if (!(buf = onnxrun__calloc(env, (size_t)(jp->taps.nphase * (2 * S + 1)), sizeof *buf))) {
			count = -1;
			break;
		}
		memset(&j, 0, sizeof j);
		j.g = g;
		j.pk = jp;
		j.qlo = buf;
		j.qn = buf + jp->taps.nphase * S;
		j.npos = buf + 2 * jp->taps.nphase * S;
		for (int64_t ph = 0; ph < jp->taps.nphase; ph++) {
			convt_phase_residues(&jp->taps, ph, r);
			j.npos[ph] = convt_phase_grid(g, r, j.qlo + ph * S, j.qn + ph * S);
			border_narrow(&j, ph, r, run.box + 2 * jb * pk->taps.s[0]);
		}
		j.kt = jp->kt;
		j.skip = skip_wanted(jp);
		count += img_inner_wanted(&j);
		onnxrun__free(env, buf);
	}
	onnxrun__free(env, run.box);
	return count;
}

/* The phase path, split into its interior and border jobs where border.h's rule says (one
 * after the other: their outputs are disjoint), else whole. */
static enum onnxrun_status phase_compute(const struct convt_call *c, const struct onnxrun__convt_packed *pk)
{
	struct onnxrun_op_context *ctx = c->ctx;
	struct onnxrun__convt_border_run run;
	struct border_defer d;
	enum onnxrun_status st = ONNXRUN_OK;
	int64_t items = 0;
	const int split = onnxrun__convt_border_plan(ctx->env, c->g, pk, &run);
	if (split < 0)
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node, "out of memory");
	if (!split)
		return phase_run(c, pk, NULL, NULL);
	memset(&d, 0, sizeof d);
	for (int jb = 0; jb < CONVT_BORDER_JOBS && !st; jb++)
		if (run.pk[jb])
			st = phase_run(c, run.pk[jb], run.box + 2 * jb * pk->taps.s[0], &d);
	for (int k = 0; k < d.n; k++)
		items += d.items[k];
	if (!st)
		st = onnxrun__op_parallel(ctx, onnxrun__op_plan_threads(ctx), items, border_items, &d);
	for (int k = 0; k < d.n; k++) {
		onnxrun__free(ctx->env, d.j[k]->scratch);
		onnxrun__free(ctx->env, d.j[k]->nline);
		onnxrun__free(ctx->env, d.j[k]->seq);
		onnxrun__free(ctx->env, d.j[k]->rel);
		onnxrun__free(ctx->env, d.buf[k]);
		onnxrun__free(ctx->env, d.j[k]);
	}
	onnxrun__free(ctx->env, run.box);
	return st;
}
#endif

/* ---- the entry ---------------------------------------------------------------------------- */

static const char *phase_accepts(const struct convt_query *q)
{
	const struct onnxrun__convt_geom *g = q->g;
	if (S < ONNXRUN__CONVT_MAX_SPATIAL && g->n > S) /* bare metal only; folds away elsewhere */
		return "more than 3 spatial axes (the phase path's limit on bare metal)";
	if (!onnxrun__convt_taps_fit(g))
		return "more phases or kernel positions than the decomposition takes";
	return onnxrun__convt_positions_decline(g, true);
}

const struct convt_impl onnxrun__convt_phase = { "float32 phase GEMM", ONNXRUN_DTYPE_FLOAT, phase_accepts,
	                                         CONVT_LAYOUT_PHASE, NULL, phase_compute };
