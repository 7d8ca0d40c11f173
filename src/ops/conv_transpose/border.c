/*
 * border.c - the phase path's jobs without the taps that read padding (border.h).
 */
#ifndef ONNXRUN_BAREMETAL
#include <string.h>

#include "border.h"
#include "impl.h"

#define BT CONVT_BORDER_TAPS
#define JOBS CONVT_BORDER_JOBS

/* The split runs a node as up to JOBS phase-path jobs instead of one, each planned on its
 * own (their items then share one parallel run), with border panels that repack x for a
 * row or two of each image; it is worth that when
 * it leaves out at least this share of the work counted in whole B panels (split_costs:
 * the micro-kernels compute a panel's nr[0] columns whether or not positions fill them).
 * With k4 s2 p1 the multiply-adds left out are 1/in of the first axis: 12.5% at 4x4 inputs,
 * 6.25% at 8x8, 3.1% at 16x16; counted in panels of 32 positions, a batch of 8 4x4 images
 * keeps its 12.5% (each job's positions fill whole panels: 96 + 32 per phase), while one
 * 8x8 image saves nothing (its interior's 56 positions per phase still take two panels)
 * and keeps the whole path. */
#define MIN_SAVED 0.03
/* The border jobs' weights may add at most half the phase weights (memory): with k4 s2 p1
 * one of each residue's two taps (the head's for one residue, the tail's for the other),
 * exactly half. */
#define MAX_EXTRA_HALVES 1

/* Offset (delta, taps.h) of tap i of first-axis residue r. */
static inline int64_t delta_of(const struct onnxrun__convt_taps *t, int64_t r, int64_t i)
{
	return (t->k_of[0][t->start[0][r] + i] * t->d[0] - r) / t->s[0];
}

/* Taps of a job's border positions: L of the prefix jobs 1 .. BT-1, of the suffix jobs
 * BT .. JOBS-1; the interior job's are all (0 here). */
static inline int64_t job_taps(int j)
{
	return j == 0 ? 0 : j < BT ? j : j - (BT - 1);
}

/* Splits the first axis's grid range of each residue r (in, out, pad_begin pb of that axis)
 * among the jobs: box[2 * (j * s0 + r)] and [+1] the start and length of job j's range.
 * Position q reads x[q - delta] for each tap: the taps inside x are those with delta in
 * [q - in + 1, q], a contiguous run of the residue's (deltas ascend with the kernel index).
 * False when some position has none of them, or loses taps at both ends (x shorter than the
 * kernel's reach), or a residue has more than BT taps: the path then runs whole. */
static bool axis_boxes(const struct onnxrun__convt_taps *t, int64_t in, int64_t out, int64_t pb, int64_t *box)
{
	const int64_t s = t->s[0];
	memset(box, 0, (size_t)(JOBS * s * 2) * sizeof *box);
	for (int64_t r = 0; r < s; r++) {
		const int64_t nt = t->start[0][r + 1] - t->start[0][r];
		const int64_t lo = convt_ceil_div(pb - r, s), hi = convt_floor_div(out - 1 + pb - r, s);
		if (nt > BT)
			return false;
		for (int64_t q = lo; q <= hi; q++) {
			int64_t a = 0, b = nt - 1, j;
			while (a < nt && delta_of(t, r, a) < q - in + 1)
				a++;
			while (b >= 0 && delta_of(t, r, b) > q)
				b--;
			if (nt == 0 || (a == 0 && b == nt - 1))
				j = 0; /* a residue without taps stays whole too */
			else if (a > b || (a > 0 && b < nt - 1))
				return false;
			else
				j = a == 0 ? b + 1 : BT - 1 + (nt - a);
			int64_t *bx = box + 2 * (j * s + r);
			if (bx[1] && bx[0] + bx[1] != q)
				return false;
			if (!bx[1])
				bx[0] = q;
			bx[1]++;
		}
	}
	return true;
}

/* The first axis's taps the jobs compute (ratio to the whole path's: the other axes are the
 * same factor of both) and the taps their weights hold beyond the phase weights, per
 * position (*used) and per residue (*extra). */
static void axis_counts(const struct onnxrun__convt_taps *t, const int64_t *box, int64_t *dense, int64_t *used,
                        int64_t *extra)
{
	const int64_t s = t->s[0];
	*dense = *used = *extra = 0;
	for (int64_t r = 0; r < s; r++) {
		const int64_t nt = t->start[0][r + 1] - t->start[0][r];
		for (int j = 0; j < JOBS; j++) {
			const int64_t qn = box[2 * (j * s + r) + 1];
			*dense += qn * nt;
			*used += qn * (j ? job_taps(j) : nt);
			*extra += j && qn ? job_taps(j) : 0;
		}
	}
}

/* The work of the whole path (*dense) and of the split (*split, jobs as in box) for concrete
 * g on tap lists t: per phase and job, its taps times the B panels of nr0 positions that its
 * positions (batch x its grid box) take. */
static void split_costs(const struct onnxrun__convt_geom *g, const struct onnxrun__convt_taps *t, const int64_t *box,
                        int64_t nr0, convt_real *dense, convt_real *split)
{
	int64_t r[ONNXRUN__CONVT_MAX_SPATIAL], qlo[ONNXRUN__CONVT_MAX_SPATIAL], qn[ONNXRUN__CONVT_MAX_SPATIAL];
	*dense = *split = 0;
	for (int64_t ph = 0; ph < t->nphase; ph++) {
		convt_phase_residues(t, ph, r);
		const int64_t npos = convt_phase_grid(g, r, qlo, qn), nt0 = t->start[0][r[0] + 1] - t->start[0][r[0]];
		if (!npos || !nt0) {
			*dense += (convt_real)t->ntaps[ph] * (convt_real)((npos + nr0 - 1) / nr0);
			*split += (convt_real)t->ntaps[ph] * (convt_real)((npos + nr0 - 1) / nr0);
			continue;
		}
		*dense += (convt_real)t->ntaps[ph] * (convt_real)((npos + nr0 - 1) / nr0);
		for (int j = 0; j < JOBS; j++) {
			const int64_t np = npos / qn[0] * box[2 * (j * t->s[0] + r[0]) + 1];
			*split += (convt_real)(t->ntaps[ph] / nt0 * (j ? job_taps(j) : nt0)) * (convt_real)((np + nr0 - 1) / nr0);
		}
	}
}

/* Job j's tap lists: t's, the first axis's of each residue cut to the job's prefix or
 * suffix where the residue has positions in the job, else empty. */
static enum onnxrun_status job_taps_make(const struct onnxrun_env *env, const struct onnxrun__convt_taps *t, int j,
                                         const int64_t *box, struct onnxrun__convt_taps *o)
{
	const int64_t s0 = t->s[0], L = job_taps(j);
	int64_t words = t->nphase, *p, r[ONNXRUN__CONVT_MAX_SPATIAL], fill = 0;
	memset(o, 0, sizeof *o);
	o->n = t->n;
	o->kprod = t->kprod; /* W's row length: the offsets stay those of the whole kernel */
	o->nphase = t->nphase;
	for (int32_t a = 0; a < t->n; a++) {
		o->kernel[a] = t->kernel[a];
		o->s[a] = t->s[a];
		o->d[a] = t->d[a];
		words += t->s[a] + 1 + t->kernel[a];
	}
	if (!(p = onnxrun__calloc(env, (size_t)words, sizeof *p)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	o->ntaps = p;
	p += t->nphase;
	for (int32_t a = 0; a < t->n; a++) {
		o->start[a] = p;
		o->k_of[a] = p + t->s[a] + 1;
		p += t->s[a] + 1 + t->kernel[a];
		if (a > 0) {
			memcpy(o->start[a], t->start[a], (size_t)(t->s[a] + 1) * sizeof *p);
			memcpy(o->k_of[a], t->k_of[a], (size_t)t->kernel[a] * sizeof *p);
		}
	}
	for (int64_t q = 0; q < s0; q++) {
		const int64_t nt = t->start[0][q + 1] - t->start[0][q], i0 = j < BT ? 0 : nt - L;
		o->start[0][q] = fill;
		for (int64_t i = i0; box[2 * (j * s0 + q) + 1] && i < i0 + L; i++)
			o->k_of[0][fill++] = t->k_of[0][t->start[0][q] + i];
	}
	o->start[0][s0] = fill;
	for (int64_t ph = 0; ph < o->nphase; ph++) {
		int64_t nt = 1;
		convt_phase_residues(o, ph, r);
		for (int32_t a = 0; a < o->n; a++)
			nt *= o->start[a][r[a] + 1] - o->start[a][r[a]];
		o->ntaps[ph] = nt;
		o->tmax = nt > o->tmax ? nt : o->tmax;
	}
	return ONNXRUN_OK;
}

/* The first axis's input size, output size and begin pad to plan g's border weights for:
 * g's own when concrete; at load (X's sizes unknown) an input long enough that no position
 * loses taps at both ends, and the output the attributes' pads give it (pads from
 * output_shape or auto_pad are not known then: a run whose pads differ finds no weights
 * for its border and runs the path whole). False when there is no such output. */
static bool axis_size(const struct onnxrun__convt_geom *g, int64_t *in, int64_t *out, int64_t *pb)
{
	*pb = g->pad_begin[0];
	if (g->concrete) {
		*in = g->in[0];
		*out = g->out[0];
		return *in > 0 && *out > 0;
	}
	const int64_t reach = (g->kernel[0] - 1) * g->dilations[0];
	if (g->kernel[0] < 1 || reach > (INT64_C(1) << 20) || g->strides[0] > (INT64_C(1) << 20) ||
	    g->pad_begin[0] < 0 || g->pad_end[0] < 0 || g->pad_begin[0] > (INT64_C(1) << 20) ||
	    g->pad_end[0] > (INT64_C(1) << 20))
		return false;
	*in = 2 * (reach / g->strides[0] + 1) + 2 * (g->pad_begin[0] + g->pad_end[0]) + 8;
	*out = g->strides[0] * (*in - 1) + g->output_padding[0] + reach + 1 - g->pad_begin[0] - g->pad_end[0];
	return *out > 0;
}

enum onnxrun_status onnxrun__convt_border_pack(struct onnxrun__convt_packed *pk, const struct onnxrun__convt_geom *g,
                                               const void *w, struct onnxrun_op_context *stop)
{
	const struct onnxrun__convt_taps *t = &pk->taps;
	int64_t in, out, pb, dense, used, extra, *box;
	convt_real cost_dense = 0, cost_split = 0;
	enum onnxrun_status st = ONNXRUN_OK;
	bool cancelled = false;
	if (pk->layout != CONVT_LAYOUT_PHASE || t->n < 2 || !axis_size(g, &in, &out, &pb))
		return ONNXRUN_OK;
	if (!(box = onnxrun__malloc(pk->env, (size_t)(JOBS * t->s[0] * 2) * sizeof *box)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	/* the rule: some border to leave out, weights bounded, and for a concrete g (weights
	 * packed for one run) a worthwhile share left out */
	const bool fits = axis_boxes(t, in, out, pb, box);
	if (fits) {
		axis_counts(t, box, &dense, &used, &extra);
		if (g->concrete)
			split_costs(g, t, box, pk->kern->nr[0], &cost_dense, &cost_split);
	}
	if (!fits || extra == 0 || 2 * extra > MAX_EXTRA_HALVES * t->kernel[0] ||
	    (g->concrete && cost_split > ((convt_real)1 - (convt_real)MIN_SAVED) * cost_dense)) {
		onnxrun__free(pk->env, box);
		return ONNXRUN_OK;
	}
	if (!(pk->border = onnxrun__calloc(pk->env, 1, sizeof *pk->border))) {
		onnxrun__free(pk->env, box);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	for (int j = 1; j < JOBS && !st; j++) {
		struct onnxrun__convt_taps sub;
		bool any = false;
		for (int64_t r = 0; r < t->s[0]; r++)
			any = any || box[2 * (j * t->s[0] + r) + 1];
		if (!any)
			continue;
		if (!(st = job_taps_make(pk->env, t, j, box, &sub)))
			st = onnxrun__convt_pack_taps(pk, w, &sub, stop, &pk->border->pk[j]);
		if (st == ONNXRUN_ERROR_CANCELLED) { /* the rest allocated too, as when not stopped */
			cancelled = true;
			st = ONNXRUN_OK;
		}
	}
	onnxrun__free(pk->env, box);
	return st ? st : cancelled ? ONNXRUN_ERROR_CANCELLED : ONNXRUN_OK;
}

/* Whether concrete g's run on phase-layout pk's taps splits by the rule (its grid leaves out
 * padded taps and saves at least MIN_SAVED in whole panels): 1 with *box (the caller frees
 * it), 0 when not, -1 when out of memory. Whether the border weights fit is the caller's. */
static int run_boxes(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                     const struct onnxrun__convt_packed *pk, int64_t **box)
{
	const struct onnxrun__convt_taps *t = &pk->taps;
	convt_real cost_dense, cost_split;
	*box = NULL;
	if (pk->layout != CONVT_LAYOUT_PHASE || !g->concrete || g->n != t->n || g->n < 2)
		return 0;
	if (!(*box = onnxrun__malloc(env, (size_t)(JOBS * t->s[0] * 2) * sizeof **box)))
		return -1;
	bool ok = axis_boxes(t, g->in[0], g->out[0], g->pad_begin[0], *box);
	if (ok) {
		split_costs(g, t, *box, pk->kern->nr[0], &cost_dense, &cost_split);
		ok = cost_split <= ((convt_real)1 - (convt_real)MIN_SAVED) * cost_dense;
	}
	if (!ok) {
		onnxrun__free(env, *box);
		*box = NULL;
	}
	return ok;
}

enum onnxrun_status onnxrun__convt_pack_with_border(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                                    const void *w, enum convt_layout layout,
                                                    const struct onnxrun__convt_geom *run,
                                                    struct onnxrun_op_context *stop,
                                                    struct onnxrun__convt_packed **out)
{
	const enum onnxrun_status st = onnxrun__convt_pack_stoppable(env, g, w, layout, stop, out);
	enum onnxrun_status bst;
	int64_t *box;
	if ((st && st != ONNXRUN_ERROR_CANCELLED) || !*out || layout != CONVT_LAYOUT_PHASE)
		return st;
	/* the one run known at load does not split: no border weights to pack and drop */
	if (run && run->concrete) {
		const int split = run_boxes(env, run, *out, &box);
		onnxrun__free(env, box);
		if (split < 0) {
			onnxrun__convt_packed_free(*out);
			*out = NULL;
			return ONNXRUN_ERROR_OUT_OF_MEMORY;
		}
		if (!split)
			return st;
	}
	/* also when stopped: allocated in full, as the run that measures the workspace needs */
	if ((bst = onnxrun__convt_border_pack(*out, g, w, stop)) && bst != ONNXRUN_ERROR_CANCELLED) {
		onnxrun__convt_packed_free(*out);
		*out = NULL;
		return bst;
	}
	return bst ? bst : st;
}

void onnxrun__convt_border_free(const struct onnxrun_env *env, struct onnxrun__convt_border *b)
{
	if (!b)
		return;
	for (int j = 0; j < JOBS; j++)
		onnxrun__convt_packed_free(b->pk[j]);
	onnxrun__free(env, b);
}

int onnxrun__convt_border_plan(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                               const struct onnxrun__convt_packed *pk, struct onnxrun__convt_border_run *run)
{
	const struct onnxrun__convt_taps *t = &pk->taps;
	int64_t *box;
	memset(run, 0, sizeof *run);
	if (!pk->border)
		return 0;
	const int64_t s0 = t->s[0];
	const int rule = run_boxes(env, g, pk, &box);
	if (rule < 0)
		return -1;
	bool ok = rule > 0;
	for (int j = 0; j < JOBS && ok; j++)
		for (int64_t r = 0; r < s0 && ok; r++) {
			const struct onnxrun__convt_packed *jp = j ? pk->border->pk[j] : pk;
			if (!box[2 * (j * s0 + r) + 1])
				continue;
			/* weights packed for this residue's prefix or suffix (packed for other pads: none) */
			ok = jp && (!j || jp->taps.start[0][r + 1] - jp->taps.start[0][r] == job_taps(j));
			run->pk[j] = jp;
		}
	if (!ok) {
		onnxrun__free(env, box);
		memset(run, 0, sizeof *run);
		return 0;
	}
	run->box = box;
	return 1;
}

enum onnxrun_status onnxrun__convt_border_trim(const struct onnxrun_env *env, const struct onnxrun__node *node,
                                               const struct onnxrun_type *inputs, size_t n_inputs,
                                               struct onnxrun__convt_packed *pk)
{
	struct onnxrun__convt_geom g;
	struct onnxrun__convt_border_run run;
	struct onnxrun__err err;
	if (onnxrun__convt_geom_make(node, inputs, n_inputs, &g, &err) || !g.concrete)
		return ONNXRUN_OK;
	const int split = onnxrun__convt_border_plan(env, &g, pk, &run);
	if (split < 0)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	if (split) {
		onnxrun__free(env, run.box);
		return ONNXRUN_OK;
	}
	onnxrun__convt_border_free(env, pk->border);
	pk->border = NULL;
	return ONNXRUN_OK;
}

int64_t onnxrun__convt_phase_fmas(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                  const struct onnxrun__convt_packed *pk, bool *split)
{
	struct onnxrun__convt_border_run run;
	int64_t total = 0, r[ONNXRUN__CONVT_MAX_SPATIAL], qlo[ONNXRUN__CONVT_MAX_SPATIAL],
		qn[ONNXRUN__CONVT_MAX_SPATIAL];
	const int plan = onnxrun__convt_border_plan(env, g, pk, &run);
	if (plan < 0)
		return -1;
	*split = plan > 0;
	if (!*split)
		run.pk[0] = pk;
	for (int j = 0; j < JOBS; j++) {
		const struct onnxrun__convt_packed *jp = run.pk[j];
		for (int64_t ph = 0; jp && ph < jp->taps.nphase; ph++) {
			convt_phase_residues(&jp->taps, ph, r);
			int64_t npos = convt_phase_grid(g, r, qlo, qn);
			if (*split && qn[0])
				npos = npos / qn[0] * run.box[2 * (j * jp->taps.s[0] + r[0]) + 1];
			total += npos * jp->taps.ntaps[ph] * (pk->cin / pk->group) * pk->mg * pk->group;
		}
	}
	onnxrun__free(env, run.box);
	return total;
}

#else
/* ISO C needs a declaration in every translation unit: bare metal has no border jobs */
typedef int onnxrun__convt_border_none;
#endif
