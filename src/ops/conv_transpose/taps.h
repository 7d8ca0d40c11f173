/*
 * taps.h - the phase decomposition of a ConvTranspose, shared by the float32 and float64
 * implementations.
 *
 * With strides s, output position o (per axis) is o = q*s + r - pad_begin for one residue
 * (phase) r in [0, s) and grid position q. Phase r uses the taps k with k*d = r (mod s), each
 * reading x[q - delta] with delta = (k*d - r)/s. So a transposed convolution is prod(s)
 * ordinary convolutions, one per phase, over the grid positions whose outputs lie in
 * [0, out); phases are numbered row-major over the axes' residues.
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_TAPS_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_TAPS_H

#include "common.h"

/* Most phases (product of the strides) and kernel positions the decomposition is built for;
 * larger nodes are left to the scatter. */
#define CONVT_MAX_PHASES 4096
#define CONVT_MAX_KERNEL (1 << 20)

/* Per-axis taps grouped by residue: for axis a, the kernel indices of residue r are
 * k_of[a][start[a][r] .. start[a][r + 1]), ascending. Depends on the kernel, strides and
 * dilations only. */
struct onnxrun__convt_taps {
	int32_t n;
	int64_t kernel[ONNXRUN__CONVT_MAX_SPATIAL], s[ONNXRUN__CONVT_MAX_SPATIAL],
		d[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t kprod, nphase, tmax; /* kernel size, phases, most taps of any phase */
	int64_t *start[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t *k_of[ONNXRUN__CONVT_MAX_SPATIAL];
	int64_t *ntaps; /* per phase: taps (product over axes) */
};

/* True when g's kernel and strides fit CONVT_MAX_PHASES / CONVT_MAX_KERNEL. */
ONNXRUN__HIDDEN bool onnxrun__convt_taps_fit(const struct onnxrun__convt_geom *g);
/* Builds the tap lists of g (kernel, strides, dilations known). Returns OK, UNSUPPORTED (too
 * many phases or kernel positions) or OUT_OF_MEMORY. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_taps_make(const struct onnxrun_env *env,
                                                             const struct onnxrun__convt_geom *g,
                                                             struct onnxrun__convt_taps *t);
ONNXRUN__HIDDEN void onnxrun__convt_taps_free(const struct onnxrun_env *env, struct onnxrun__convt_taps *t);

/* The per-axis residues r[] of phase ph. */
static inline void convt_phase_residues(const struct onnxrun__convt_taps *t, int64_t ph, int64_t *r)
{
	for (int32_t a = t->n - 1; a >= 0; a--) {
		r[a] = convt_umod(ph, t->s[a]);
		ph = convt_udiv(ph, t->s[a]);
	}
}

/* Tap `tap` of the phase with residues r (taps numbered row-major over the axes): its
 * per-axis kernel indices (k, may be NULL) and deltas (delta, may be NULL); returns its flat
 * kernel offset. */
static inline int64_t convt_tap(const struct onnxrun__convt_taps *t, const int64_t *r, int64_t tap, int64_t *k,
                                int64_t *delta)
{
	int64_t kk[ONNXRUN__CONVT_MAX_SPATIAL], kf = 0;
	for (int32_t a = t->n - 1; a >= 0; a--) {
		const int64_t cnt = t->start[a][r[a] + 1] - t->start[a][r[a]];
		kk[a] = t->k_of[a][t->start[a][r[a]] + convt_umod(tap, cnt)];
		tap = convt_udiv(tap, cnt);
		if (k)
			k[a] = kk[a];
		if (delta) /* k*d - r >= 0: r is the residue of k*d */
			delta[a] = convt_udiv(kk[a] * t->d[a] - r[a], t->s[a]);
	}
	for (int32_t a = 0; a < t->n; a++)
		kf = kf * t->kernel[a] + kk[a];
	return kf;
}

/* The grid box of the phase with residues r: per axis, positions q in [qlo, qlo + qn) are
 * those whose outputs q*s + r - pad_begin lie in [0, out). Returns the box's positions
 * times the batch. */
static inline int64_t convt_phase_grid(const struct onnxrun__convt_geom *g, const int64_t *r, int64_t *qlo,
                                       int64_t *qn)
{
	int64_t npos = g->batch;
	for (int32_t a = 0; a < g->n; a++) {
		const int64_t lo = convt_ceil_div(g->pad_begin[a] - r[a], g->strides[a]);
		const int64_t hi = convt_floor_div(g->out[a] - 1 + g->pad_begin[a] - r[a], g->strides[a]);
		qlo[a] = lo;
		qn[a] = hi >= lo ? hi - lo + 1 : 0;
		npos *= qn[a];
	}
	return npos;
}

#endif
