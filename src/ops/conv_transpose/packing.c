/*
 * packing.c - float32 weights packed for the GEMM micro-kernels (packing.h).
 */
#include <string.h>

#include "border.h"
#include "impl.h"

#define S ONNXRUN__CONVT_MAX_SPATIAL
/* Packing at run time (W fed as an input) checks for a stop between channels (col2im: every
 * STOP_EVERY packed values): a W of any size is given up within microseconds. */
#define STOP_EVERY 65536

/* Element i of float32 values at any alignment (one plain load once compiled). */
static inline float load_f32(const unsigned char *p, int64_t i)
{
	float v;
	memcpy(&v, p + i * (int64_t)sizeof v, sizeof v);
	return v;
}

/* Packs W into pk->a (layouts in packing.h), or with `unpack` writes
 * W back from pk->a: the same walk, so one is exactly the other's inverse (every kernel
 * position is a tap of exactly one phase; padding rows are zeros and are not read back).
 * Packs from w_in (float32 values at any alignment, so read through memcpy) when w_out is
 * NULL, unpacks into w_out otherwise.
 * Inlined into both callers, so the direction is a constant there and the per-element
 * tests fold away; on bare metal one copy (flash: the walk runs at load, not per run).
 * kfs: scratch for taps.tmax kernel offsets. Taps are the innermost loop so that W is
 * read in order (each (c, m) row of kprod taps once) and writes stay inside one (c, panel)
 * block. */
#ifdef ONNXRUN_BAREMETAL
#define MOVE_INLINE __attribute__((noinline))
#else
#define MOVE_INLINE inline __attribute__((always_inline))
#endif
static MOVE_INLINE bool move_weights(const struct onnxrun__convt_packed *pk,
                                                               const unsigned char *w_in, float *w_out,
                                                               int64_t *kfs, struct onnxrun_op_context *stop)
{
	const bool unpack = w_out != NULL;
	const struct onnxrun__convt_taps *t = &pk->taps;
	const int64_t mr = pk->kern->mr_max, cg = pk->cin / pk->group, mg = pk->mg;
	int64_t r[S];
	for (int64_t grp = 0; grp < pk->group; grp++) {
		float *ag = pk->a + grp * pk->a_group;
		const int64_t wg = grp * cg * mg * t->kprod;
		if (!ONNXRUN__F32_ONLY && pk->layout == CONVT_LAYOUT_COL2IM) {
			/* rows R = m*kprod + kf, reduction over c */
			for (int64_t i = 0; i < pk->a_group; i++) {
				if (stop && i % STOP_EVERY == 0 && onnxrun_op_should_stop(stop))
					return false;
				int64_t panel = i / (cg * mr), c = i / mr % cg, row = panel * mr + i % mr;
				int64_t wi = wg + (c * mg + row / t->kprod) * t->kprod + row % t->kprod;
				if (unpack && row < mg * t->kprod)
					w_out[wi] = ag[i];
				else if (!unpack)
					ag[i] = row < mg * t->kprod ? load_f32(w_in, wi) : 0.0f;
			}
			continue;
		}
		if (!ONNXRUN__F32_ONLY && !ONNXRUN__KERNELS_SCALAR_ONLY && pk->layout == CONVT_LAYOUT_WINDOW) {
			/* rows (rho0, m, rho1), K entries (c, t0, t1): W[c][m][rho0 + s0*t0][rho1 + s1*t1]
			 * (rank 1: axis 0 of size 1) */
			const int64_t k0 = t->n == 2 ? t->kernel[0] : 1, k1 = t->kernel[t->n - 1];
			const int64_t s0 = t->n == 2 ? t->s[0] : 1, s1 = t->s[t->n - 1];
			const int64_t t0n = k0 / s0, t1n = k1 / s1, kk = cg * t0n * t1n, rows = mg * s0 * s1;
			for (int64_t i = 0; i < pk->a_group; i++) {
				if (stop && i % STOP_EVERY == 0 && onnxrun_op_should_stop(stop))
					return false;
				const int64_t row = i / (kk * mr) * mr + i % mr, e = i / mr % kk;
				const int64_t c = e / (t0n * t1n), t0 = e / t1n % t0n, t1 = e % t1n;
				const int64_t rho0 = row / (mg * s1), m = row / s1 % mg, rho1 = row % s1;
				const int64_t wi = wg + (c * mg + m) * t->kprod + (rho0 + s0 * t0) * k1 + rho1 + s1 * t1;
				if (unpack && row < rows)
					w_out[wi] = ag[i];
				else if (!unpack)
					ag[i] = row < rows ? load_f32(w_in, wi) : 0.0f;
			}
			continue;
		}
		for (int64_t ph = 0; ph < t->nphase; ph++) {
			const int64_t nt = t->ntaps[ph], kk = cg * nt;
			float *a = ag + pk->a_off[ph];
			convt_phase_residues(t, ph, r);
			for (int64_t tap = 0; tap < nt; tap++)
				kfs[tap] = convt_tap(t, r, tap, NULL, NULL);
			for (int64_t c = 0; c < cg; c++) {
				if (stop && onnxrun_op_should_stop(stop))
					return false;
				for (int64_t i = 0; i < pk->mpanels * mr; i++) {
					/* row i % mr of panel i / mr: channel m, or a zero row past the panel */
					const int64_t pl = i / mr, m = convt_panel_lo(mg, pk->mpanels, pl) + i % mr;
					const bool in = m < convt_panel_lo(mg, pk->mpanels, pl + 1);
					float *dst = a + pl * kk * mr + c * nt * mr + i % mr;
					const int64_t row = wg + (c * mg + m) * t->kprod;
					for (int64_t tap = 0; tap < nt; tap++) {
						if (unpack && in)
							w_out[row + kfs[tap]] = dst[tap * mr];
						else if (!unpack)
							dst[tap * mr] = in ? load_f32(w_in, row + kfs[tap]) : 0.0f;
					}
				}
			}
		}
	}
	return true;
}

/* Element i of float64 values at any alignment. */
static inline double load_f64(const unsigned char *p, int64_t i)
{
	double v;
	memcpy(&v, p + i * (int64_t)sizeof v, sizeof v);
	return v;
}

/* Packs W (float64 values at any alignment) into pk->a64 (f64 layout, packing.h; pk->a64
 * zeroed), or with w_out writes W back from it: the same walk, so one is exactly the other's
 * inverse. W is read (written) in order, each (c, m) row of kprod kernel positions once,
 * each position sent to its phase and tap (ph_of, tap_of: scratch of kprod entries each). */
static bool move_f64(const struct onnxrun__convt_packed *pk, const unsigned char *w_in, double *w_out,
                     int64_t *ph_of, int64_t *tap_of, struct onnxrun_op_context *stop)
{
	const struct onnxrun__convt_taps *t = &pk->taps;
	const int64_t cg = pk->cin / pk->group, mg = pk->mg, MB = pk->f64_mb;
	int64_t r[S];
	for (int64_t ph = 0; ph < t->nphase; ph++) {
		convt_phase_residues(t, ph, r);
		for (int64_t tap = 0; tap < t->ntaps[ph]; tap++) {
			const int64_t kf = convt_tap(t, r, tap, NULL, NULL);
			ph_of[kf] = ph;
			tap_of[kf] = tap;
		}
	}
	for (int64_t grp = 0; grp < pk->group; grp++)
		for (int64_t c = 0; c < cg; c++)
			for (int64_t m = 0; m < mg; m++) {
				const int64_t row = ((grp * cg + c) * mg + m) * t->kprod;
				if (stop && m == 0 && onnxrun_op_should_stop(stop))
					return false;
				double *dg = pk->a64 + grp * pk->a_group + m % MB;
				for (int64_t kf = 0; kf < t->kprod; kf++) {
					const int64_t ph = ph_of[kf], k = tap_of[kf] * cg + c, K = t->ntaps[ph] * cg;
					const int64_t k0 = k / CONVT_F64_KC * CONVT_F64_KC;
					const int64_t kn = K - k0 < CONVT_F64_KC ? K - k0 : CONVT_F64_KC;
					double *d = dg + pk->a_off[ph] + (k0 * pk->mpanels + m / MB * kn + k - k0) * MB;
					if (w_out)
						w_out[row + kf] = *d;
					else
						*d = load_f64(w_in, row + kf);
				}
			}
	return true;
}

void onnxrun__convt_packed_free(struct onnxrun__convt_packed *p)
{
	if (!p)
		return;
#ifndef ONNXRUN_BAREMETAL
	if (p->border) { /* the border jobs' weights (border.h): freed here, not by border.c,
	                  * which calls into this file (no call cycle between the two) */
		for (int j = 0; j < CONVT_BORDER_JOBS; j++)
			onnxrun__convt_packed_free(p->border->pk[j]);
		onnxrun__free(p->env, p->border);
	}
#endif
	onnxrun__convt_taps_free(p->env, &p->taps);
	onnxrun__free(p->env, p->a_off);
	onnxrun__free(p->env, p->a);
	onnxrun__free(p->env, p->a64);
	onnxrun__free(p->env, p);
}

enum onnxrun_status onnxrun__convt_unpack(const struct onnxrun__convt_packed *pk, void *w)
{
	int64_t *kfs;
	if (!ONNXRUN__F32_ONLY && pk->layout == CONVT_LAYOUT_F64) {
		if (!(kfs = onnxrun__malloc(pk->env, (size_t)(2 * pk->taps.kprod) * sizeof *kfs)))
			return ONNXRUN_ERROR_OUT_OF_MEMORY;
		move_f64(pk, NULL, w, kfs, kfs + pk->taps.kprod, NULL);
		onnxrun__free(pk->env, kfs);
		return ONNXRUN_OK;
	}
	if (!(kfs = onnxrun__malloc(pk->env, (size_t)(pk->taps.tmax > 0 ? pk->taps.tmax : 1) * sizeof *kfs)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	move_weights(pk, NULL, w, kfs, NULL);
	onnxrun__free(pk->env, kfs);
	return ONNXRUN_OK;
}

/* The phase and f64 layouts' panel counts and per-phase offsets, and the elements per group. */
static enum onnxrun_status layout_make(struct onnxrun__convt_packed *pk)
{
	const struct onnxrun__convt_taps *t = &pk->taps;
	const int64_t cg = pk->cin / pk->group;
	int64_t mr = pk->kern->mr_max;
	if (!ONNXRUN__F32_ONLY && pk->layout == CONVT_LAYOUT_F64)
		mr = pk->f64_mb = convt_f64_block(pk->kt->f64, pk->mg);
	if (!ONNXRUN__F32_ONLY && pk->layout == CONVT_LAYOUT_COL2IM) {
		pk->a_group = (pk->mg * t->kprod + mr - 1) / mr * mr * cg;
		return ONNXRUN_OK;
	}
	if (!ONNXRUN__F32_ONLY && !ONNXRUN__KERNELS_SCALAR_ONLY && pk->layout == CONVT_LAYOUT_WINDOW) {
		/* one panel per mr_max rows of mg * nphase, K = cg * kprod / nphase (packing.h) */
		pk->a_group = (pk->mg * t->nphase + mr - 1) / mr * mr * cg * (t->kprod / t->nphase);
		return ONNXRUN_OK;
	}
	if (!(pk->a_off = onnxrun__malloc(pk->env, (size_t)t->nphase * sizeof *pk->a_off)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	pk->mpanels = (pk->mg + mr - 1) / mr;
	for (int64_t ph = 0, off = 0; ph < t->nphase; ph++) {
		pk->a_off[ph] = off;
		off += pk->mpanels * mr * cg * t->ntaps[ph];
		pk->a_group = off;
	}
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__convt_pack(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                        const void *w, enum convt_layout layout, struct onnxrun__convt_packed **out)
{
	return onnxrun__convt_pack_stoppable(env, g, w, layout, NULL, out);
}

enum onnxrun_status onnxrun__convt_pack_stoppable(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                                  const void *w, enum convt_layout layout,
                                                  struct onnxrun_op_context *stop,
                                                  struct onnxrun__convt_packed **out)
{
	struct onnxrun__convt_packed *pk;
	enum onnxrun_status st;
	int64_t *kfs;
	bool done;
	*out = NULL;
	if (g->n < 1 || g->in_channels < 1 || g->out_channels < 1 || g->group < 1)
		return ONNXRUN_ERROR_UNSUPPORTED;
	if (!(pk = onnxrun__calloc(env, 1, sizeof *pk)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	pk->env = env;
	pk->layout = layout;
	pk->kt = onnxrun__kernels_current();
	pk->kern = pk->kt->gemm;
	pk->cin = g->in_channels;
	pk->group = g->group;
	pk->mg = g->out_channels / g->group;
	if ((st = onnxrun__convt_taps_make(env, g, &pk->taps)) || (st = layout_make(pk))) {
		onnxrun__convt_packed_free(pk);
		return st;
	}
	if (!ONNXRUN__F32_ONLY && layout == CONVT_LAYOUT_F64) {
		int64_t elems, *map;
		if (!onnxrun__mul_i64(pk->a_group, pk->group, &elems) || elems >= (INT64_C(1) << 58) ||
		    !(pk->a64 = onnxrun__calloc(env, (size_t)(elems > 0 ? elems : 1), sizeof(double))) ||
		    !(map = onnxrun__malloc(env, (size_t)(2 * pk->taps.kprod) * sizeof *map))) {
			onnxrun__convt_packed_free(pk);
			return ONNXRUN_ERROR_OUT_OF_MEMORY;
		}
		done = move_f64(pk, w, NULL, map, map + pk->taps.kprod, stop);
		onnxrun__free(env, map);
		*out = pk;
		return done ? ONNXRUN_OK : ONNXRUN_ERROR_CANCELLED;
	}
	if (!(pk->a = onnxrun__malloc_aligned(env, (size_t)(pk->a_group * pk->group) * sizeof(float))) ||
	    !(kfs = onnxrun__malloc(env, (size_t)(pk->taps.tmax > 0 ? pk->taps.tmax : 1) * sizeof *kfs))) {
		onnxrun__convt_packed_free(pk);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	done = move_weights(pk, w, NULL, kfs, stop);
	onnxrun__free(env, kfs);
	*out = pk;
	return done ? ONNXRUN_OK : ONNXRUN_ERROR_CANCELLED;
}

#ifndef ONNXRUN_BAREMETAL
enum onnxrun_status onnxrun__convt_pack_taps(const struct onnxrun__convt_packed *like, const void *w,
                                             struct onnxrun__convt_taps *taps, struct onnxrun_op_context *stop,
                                             struct onnxrun__convt_packed **out)
{
	struct onnxrun__convt_packed *pk;
	int64_t *kfs;
	bool done;
	*out = NULL;
	if (!(pk = onnxrun__calloc(like->env, 1, sizeof *pk))) {
		onnxrun__convt_taps_free(like->env, taps);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	pk->env = like->env;
	pk->layout = CONVT_LAYOUT_PHASE;
	pk->kt = like->kt;
	pk->kern = like->kern;
	pk->cin = like->cin;
	pk->group = like->group;
	pk->mg = like->mg;
	pk->taps = *taps;
	memset(taps, 0, sizeof *taps);
	if (layout_make(pk) ||
	    !(pk->a = onnxrun__malloc_aligned(pk->env, (size_t)(pk->a_group * pk->group + 1) * sizeof(float))) ||
	    !(kfs = onnxrun__malloc(pk->env, (size_t)(pk->taps.tmax > 0 ? pk->taps.tmax : 1) * sizeof *kfs))) {
		onnxrun__convt_packed_free(pk);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	done = move_weights(pk, w, NULL, kfs, stop);
	onnxrun__free(pk->env, kfs);
	*out = pk;
	return done ? ONNXRUN_OK : ONNXRUN_ERROR_CANCELLED;
}
#endif

bool onnxrun__convt_packed_matches(const struct onnxrun__convt_packed *pk, const struct onnxrun__convt_geom *g,
                                   enum convt_layout layout, const struct onnxrun__kernels *kt)
{
	if (!pk || pk->layout != layout || pk->kt != kt || pk->taps.n != g->n || pk->cin != g->in_channels ||
	    pk->group != g->group || pk->mg * g->group != g->out_channels)
		return false;
	for (int32_t a = 0; a < g->n; a++)
		if (pk->taps.kernel[a] != g->kernel[a] || pk->taps.s[a] != g->strides[a] ||
		    pk->taps.d[a] != g->dilations[a])
			return false;
	return true;
}

/* W's values (dtype: float32 or float64, the packed state's) for c: c->w, or rebuilt into
 * *owned when the model released W after packing it. */
static enum onnxrun_status w_values(const struct convt_call *c, enum onnxrun_dtype dtype, const void **out,
                                    void **owned)
{
	struct onnxrun_op_context *ctx = c->ctx;
	size_t bytes;
	enum onnxrun_status st;
	*owned = NULL;
	*out = c->w;
	if (c->w || c->w_numel == 0)
		return ONNXRUN_OK;
	/* released at load (onnxrun__op_rebuilds_input in init): rebuild from the packed state */
	if (!c->packed || (c->packed->layout == CONVT_LAYOUT_F64) != (dtype == ONNXRUN_DTYPE_DOUBLE))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, ctx->node,
		                          "weights were released without a packed copy");
	if (!onnxrun__tensor_bytes(dtype, c->w_numel, &bytes) || !(*owned = onnxrun__malloc(ctx->env, bytes)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
		                          "out of memory rebuilding the weights (%lld values)", (long long)c->w_numel);
	if ((st = onnxrun__convt_unpack(c->packed, *owned))) {
		onnxrun__free(ctx->env, *owned);
		*owned = NULL;
		return onnxrun__node_fail(ctx->err, st, ctx->node, "out of memory rebuilding the weights");
	}
	*out = *owned;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__convt_w_values(const struct convt_call *c, const float **out, float **owned)
{
	const void *v;
	void *own;
	const enum onnxrun_status st = w_values(c, ONNXRUN_DTYPE_FLOAT, &v, &own);
	*out = v;
	*owned = own;
	return st;
}

enum onnxrun_status onnxrun__convt_w_f64_values(const struct convt_call *c, const double **out, double **owned)
{
	const void *v;
	void *own;
	const enum onnxrun_status st = w_values(c, ONNXRUN_DTYPE_DOUBLE, &v, &own);
	*out = v;
	*owned = own;
	return st;
}

enum onnxrun_status onnxrun__convt_run_packed(const struct convt_call *c, enum convt_layout layout,
                                              convt_packed_fn compute)
{
	struct onnxrun__convt_packed *mine = NULL;
	const void *w;
	void *wown;
	enum onnxrun_status st;
	if (onnxrun__convt_packed_matches(c->packed, c->g, layout, c->kt))
		return compute(c, c->packed);
	if ((st = w_values(c, layout == CONVT_LAYOUT_F64 ? ONNXRUN_DTYPE_DOUBLE : ONNXRUN_DTYPE_FLOAT, &w, &wown)))
		return st;
	st = onnxrun__convt_pack_stoppable(c->ctx->env, c->g, w, layout, c->ctx, &mine);
	onnxrun__free(c->ctx->env, wown);
	if (st == ONNXRUN_ERROR_UNSUPPORTED)
		return st; /* more phases than the decomposition takes: the entry declines */
	if (st == ONNXRUN_ERROR_CANCELLED) {
		/* stopped: compute skips its work but makes its allocations (measured when the
		 * stop is the workspace measuring pass); the session reports the stop */
		(void)compute(c, mine);
		onnxrun__convt_packed_free(mine);
		return onnxrun__node_fail(c->ctx->err, st, c->ctx->node, "stopped while packing weights");
	}
	if (st)
		return onnxrun__node_fail(c->ctx->err, st, c->ctx->node, "out of memory packing weights");
	st = compute(c, mine);
	onnxrun__convt_packed_free(mine);
	return st;
}
