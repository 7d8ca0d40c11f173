/*
 * conv_transpose_fast.c - float32 ConvTranspose: path choice, weight packing (at load in
 * init when W is an initializer, else per run) and the per-phase implicit GEMM
 * (conv_transpose_fast.h explains the decomposition).
 */
#include <string.h>

#include "impl.h"
#include "../../runtime/pool.h"

#define S ONNXRUN__CONVT_MAX_SPATIAL
#define MAX_PHASES 4096

/* Row-major multi-index of `flat` over dims[0..n) into idx. */
static void unflatten(int64_t flat, const int64_t *dims, int32_t n, int64_t *idx)
{
	for (int32_t a = n - 1; a >= 0; a--) {
		idx[a] = flat % dims[a];
		flat /= dims[a];
	}
}

/* Which path handles W (cin, mg, kernel...) with these strides/dilations/group. The
 * overlap-add path computes every tap for every input position of a chunk, so it is kept
 * to kernels with at most 64 taps per output (kprod <= 64 * prod(strides)). */
static enum convt_path choose_path(int32_t n, int64_t cg, int64_t mg, int64_t kprod, int64_t nphase)
{
	if (n <= 2 && cg == 1 && mg == 1)
		return CONVT_PATH_DW;
	if (n <= 2 && mg <= 4 && mg * kprod >= 8 && cg >= 4 && kprod <= 64 * nphase)
		return CONVT_PATH_COL2IM;
	return CONVT_PATH_PHASE;
}

/* Per-axis residue lists, per-phase tap counts and packed-weight offsets. */
static enum onnxrun_status taps_make(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                     const struct onnxrun__convt_packed *pk, struct onnxrun__convt_taps *t)
{
	const int64_t mr = pk->kern->mr_max, cg = pk->cin / pk->group;
	int64_t words = 0, r[S], *p;
	memset(t, 0, sizeof *t);
	t->n = g->n;
	t->kprod = t->nphase = 1;
	t->mpanels = (pk->mg + mr - 1) / mr;
	for (int32_t a = 0; a < g->n; a++) {
		t->kernel[a] = g->kernel[a];
		t->s[a] = g->strides[a];
		t->d[a] = g->dilations[a];
		t->kprod *= g->kernel[a];
		t->nphase *= g->strides[a];
		words += t->s[a] + 1 + t->kernel[a];
		if (t->nphase > MAX_PHASES || t->kprod > (1 << 20))
			return ONNXRUN_ERROR_UNSUPPORTED;
	}
	words += 2 * t->nphase;
	if (!(p = onnxrun__calloc(env, (size_t)words, sizeof *p)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	t->ntaps = p;
	t->a_off = p + t->nphase;
	p += 2 * t->nphase;
	for (int32_t a = 0; a < g->n; a++) {
		t->start[a] = p;
		t->k_of[a] = p + t->s[a] + 1;
		p += t->s[a] + 1 + t->kernel[a];
		for (int64_t k = 0; k < t->kernel[a]; k++)
			t->start[a][(k * t->d[a]) % t->s[a] + 1]++;
		for (int64_t q = 0; q < t->s[a]; q++)
			t->start[a][q + 1] += t->start[a][q];
		for (int64_t q = 0, fill = 0; q < t->s[a]; q++)
			for (int64_t k = 0; k < t->kernel[a]; k++)
				if ((k * t->d[a]) % t->s[a] == q)
					t->k_of[a][fill++] = k;
	}
	for (int64_t ph = 0, off = 0; ph < t->nphase; ph++) {
		int64_t nt = 1;
		unflatten(ph, t->s, t->n, r);
		for (int32_t a = 0; a < t->n; a++)
			nt *= t->start[a][r[a] + 1] - t->start[a][r[a]];
		t->ntaps[ph] = nt;
		t->tmax = nt > t->tmax ? nt : t->tmax;
		t->a_off[ph] = off;
		off += t->mpanels * mr * cg * nt;
		t->a_group = off;
	}
	if (pk->path == CONVT_PATH_COL2IM)
		t->a_group = (pk->mg * t->kprod + mr - 1) / mr * mr * cg;
	return ONNXRUN_OK;
}

/* Flat kernel offset of tap `tap` of phase r; per-axis deltas into delta (may be NULL). */
static int64_t tap_info(const struct onnxrun__convt_taps *t, const int64_t *r, int64_t tap, int64_t *delta)
{
	int64_t k[S], kf = 0;
	for (int32_t a = t->n - 1; a >= 0; a--) {
		int64_t cnt = t->start[a][r[a] + 1] - t->start[a][r[a]];
		k[a] = t->k_of[a][t->start[a][r[a]] + tap % cnt];
		tap /= cnt;
		if (delta)
			delta[a] = (k[a] * t->d[a] - r[a]) / t->s[a];
	}
	for (int32_t a = 0; a < t->n; a++)
		kf = kf * t->kernel[a] + k[a];
	return kf;
}

/* Element i of float32 values at any alignment (one plain load once compiled). */
static inline float load_f32(const unsigned char *p, int64_t i)
{
	float v;
	memcpy(&v, p + i * (int64_t)sizeof v, sizeof v);
	return v;
}

/* Packs W into pk->a (layouts in conv_transpose_fast.h / gemm.h), or with `unpack` writes
 * W back from pk->a: the same walk, so one is exactly the other's inverse (every kernel
 * position is a tap of exactly one phase; padding rows are zeros and are not read back).
 * Packs from w_in (float32 values at any alignment, so read through memcpy) when w_out is
 * NULL, unpacks into w_out otherwise.
 * Inlined into both callers, so the direction is a constant there and the per-element
 * tests fold away. kfs: scratch for taps.tmax kernel offsets. Taps are the innermost loop so that W is
 * read in order (each (c, m) row of kprod taps once) and writes stay inside one (c, panel)
 * block. */
static inline __attribute__((always_inline)) void move_weights(const struct onnxrun__convt_packed *pk,
                                                               const unsigned char *w_in, float *w_out,
                                                               int64_t *kfs)
{
	const bool unpack = w_out != NULL;
	const struct onnxrun__convt_taps *t = &pk->taps;
	const int64_t mr = pk->kern->mr_max, cg = pk->cin / pk->group, mg = pk->mg;
	int64_t r[S];
	for (int64_t grp = 0; grp < pk->group; grp++) {
		float *ag = pk->a + grp * t->a_group;
		const int64_t wg = grp * cg * mg * t->kprod;
		if (pk->path == CONVT_PATH_COL2IM) {
			/* rows R = m*kprod + kf, reduction over c */
			for (int64_t i = 0; i < t->a_group; i++) {
				int64_t panel = i / (cg * mr), c = i / mr % cg, row = panel * mr + i % mr;
				int64_t wi = wg + (c * mg + row / t->kprod) * t->kprod + row % t->kprod;
				if (unpack && row < mg * t->kprod)
					w_out[wi] = ag[i];
				else if (!unpack)
					ag[i] = row < mg * t->kprod ? load_f32(w_in, wi) : 0.0f;
			}
			continue;
		}
		for (int64_t ph = 0; ph < t->nphase; ph++) {
			const int64_t nt = t->ntaps[ph], kk = cg * nt;
			float *a = ag + t->a_off[ph];
			unflatten(ph, t->s, t->n, r);
			for (int64_t tap = 0; tap < nt; tap++)
				kfs[tap] = tap_info(t, r, tap, NULL);
			for (int64_t c = 0; c < cg; c++)
				for (int64_t i = 0; i < t->mpanels * mr; i++) {
					/* row i % mr of panel i / mr: channel m, or a zero row past the panel */
					const int64_t pl = i / mr, m = convt_panel_lo(mg, t->mpanels, pl) + i % mr;
					const bool in = m < convt_panel_lo(mg, t->mpanels, pl + 1);
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

void onnxrun__convt_packed_free(struct onnxrun__convt_packed *p)
{
	if (!p)
		return;
	onnxrun__free(p->env, p->taps.ntaps);
	onnxrun__free(p->env, p->a);
	onnxrun__free(p->env, p);
}

bool onnxrun__convt_can_unpack(const struct onnxrun__convt_packed *pk)
{
	return pk && pk->a && (pk->path == CONVT_PATH_PHASE || pk->path == CONVT_PATH_COL2IM);
}

enum onnxrun_status onnxrun__convt_unpack(const struct onnxrun__convt_packed *pk, float *w)
{
	int64_t *kfs;
	if (!onnxrun__convt_can_unpack(pk))
		return ONNXRUN_ERROR_RUNTIME;
	if (!(kfs = onnxrun__malloc(pk->env, (size_t)(pk->taps.tmax > 0 ? pk->taps.tmax : 1) * sizeof *kfs)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	move_weights(pk, NULL, w, kfs);
	onnxrun__free(pk->env, kfs);
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__convt_w_values(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *w,
                                            const float **out, float **owned)
{
	enum onnxrun_status st;
	*owned = NULL;
	*out = w->data;
	if (w->data || w->numel == 0)
		return ONNXRUN_OK;
	/* released at load (onnxrun__op_rebuilds_input in init): rebuild from the packed state */
	if (!onnxrun__convt_can_unpack(ctx->state))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_RUNTIME, ctx->node,
		                          "weights were released without a packed copy");
	if (!(*owned = onnxrun__malloc(ctx->env, w->nbytes)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
		                          "out of memory rebuilding the weights (%zu bytes)", w->nbytes);
	if ((st = onnxrun__convt_unpack(ctx->state, *owned))) {
		onnxrun__free(ctx->env, *owned);
		*owned = NULL;
		return onnxrun__node_fail(ctx->err, st, ctx->node, "out of memory rebuilding the weights");
	}
	*out = *owned;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__convt_pack(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                        const void *w, struct onnxrun__convt_packed **out)
{
	struct onnxrun__convt_packed *pk;
	enum onnxrun_status st;
	int64_t kprod = 1, nphase = 1;
	*out = NULL;
	if (g->n < 1 || g->in_channels < 1 || g->out_channels < 1 || g->group < 1)
		return ONNXRUN_OK;
	for (int32_t a = 0; a < g->n; a++)
		kprod *= g->kernel[a];
	if (kprod < 1)
		return ONNXRUN_OK;
	if (!(pk = onnxrun__calloc(env, 1, sizeof *pk)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	pk->env = env;
	pk->kt = onnxrun__kernels_current();
	pk->kern = pk->kt->gemm;
	pk->cin = g->in_channels;
	pk->group = g->group;
	pk->mg = g->out_channels / g->group;
	for (int32_t a = 0; a < g->n; a++)
		nphase = nphase > (1 << 20) / g->strides[a] ? 1 << 20 : nphase * g->strides[a];
	pk->path = choose_path(g->n, pk->cin / pk->group, pk->mg, kprod, nphase);
	if ((st = taps_make(env, g, pk, &pk->taps))) {
		onnxrun__free(env, pk);
		return st == ONNXRUN_ERROR_UNSUPPORTED ? ONNXRUN_OK : st;
	}
	if (pk->path != CONVT_PATH_DW) {
		if (!(pk->a = onnxrun__malloc(env, (size_t)(pk->taps.a_group * pk->group) * sizeof(float)))) {
			onnxrun__convt_packed_free(pk);
			return ONNXRUN_ERROR_OUT_OF_MEMORY;
		}
		int64_t *kfs = onnxrun__malloc(env, (size_t)(pk->taps.tmax > 0 ? pk->taps.tmax : 1) * sizeof *kfs);
		if (!kfs) {
			onnxrun__convt_packed_free(pk);
			return ONNXRUN_ERROR_OUT_OF_MEMORY;
		}
		move_weights(pk, w, NULL, kfs);
		onnxrun__free(env, kfs);
	}
	*out = pk;
	return ONNXRUN_OK;
}

/* True when the packed state was made for this geometry's W shape and attributes. */
static bool packed_matches(const struct onnxrun__convt_packed *pk, const struct onnxrun__convt_geom *g)
{
	if (!pk || pk->taps.n != g->n || pk->cin != g->in_channels || pk->group != g->group ||
	    pk->mg * g->group != g->out_channels)
		return false;
	for (int32_t a = 0; a < g->n; a++)
		if (pk->taps.kernel[a] != g->kernel[a] || pk->taps.s[a] != g->strides[a] ||
		    pk->taps.d[a] != g->dilations[a])
			return false;
	return true;
}

void *onnxrun__convt_scratch(struct onnxrun_op_context *ctx, int threads, size_t bytes, size_t *stride)
{
	*stride = (bytes + 63) / 64 * 64;
	return onnxrun__malloc(ctx->env, *stride * (size_t)threads);
}

/* ---- init / fini -------------------------------------------------------------------------- */

enum onnxrun_status onnxrun__convt_fast_init(struct onnxrun_op_context *ctx, void **state)
{
	const void *w_bytes;
	const struct onnxrun_tensor *w = onnxrun__op_constant_bytes(ctx, 1, &w_bytes);
	struct onnxrun_type types[3];
	struct onnxrun__convt_geom g;
	struct onnxrun__convt_packed *pk;
	struct onnxrun__err scratch_err;
	enum onnxrun_status st;
	size_t n = ctx->node->n_inputs < 3 ? ctx->node->n_inputs : 3;
	float *wide = NULL;

	*state = NULL;
	if (!w || w->rank < 3 || (w->dtype != ONNXRUN_DTYPE_FLOAT && !onnxrun__convt_is_half(w->dtype)))
		return ONNXRUN_OK;
	/* float32 is packed from its bytes where they are (a pending initializer stays in the
	 * model buffer and is never copied when the panels replace it); widening reads data */
	if (w->dtype != ONNXRUN_DTYPE_FLOAT && !(w = onnxrun_op_constant_input(ctx, 1)))
		return ONNXRUN_OK;
	/* geometry from W alone: X's spatial dims do not change the packing; use ones */
	memset(types, 0, sizeof types);
	types[0].dtype = types[1].dtype = w->dtype;
	types[0].shape.rank = types[1].shape.rank = w->rank;
	memcpy(types[1].shape.dims, w->dims, sizeof w->dims);
	types[0].shape.dims[0] = 1;
	types[0].shape.dims[1] = w->dims[0];
	for (int32_t a = 2; a < w->rank; a++)
		types[0].shape.dims[a] = -1;
	for (size_t i = 2; i < n; i++) {
		const struct onnxrun_tensor *b = onnxrun_op_constant_input(ctx, i);
		types[i].dtype = ctx->node->inputs[i] >= 0 ? w->dtype : ONNXRUN_DTYPE_UNDEFINED;
		types[i].shape.rank = 1;
		types[i].shape.dims[0] = b ? b->dims[0] : -1;
	}
	/* attribute errors are reported by infer/compute; here they only disable pre-packing */
	if (onnxrun__convt_geom_make(ctx->node, types, n, &g, &scratch_err) || g.n < 1)
		return ONNXRUN_OK;
	/* float16/bfloat16: pack a float32 copy, dropped once packed */
	if (w->dtype != ONNXRUN_DTYPE_FLOAT && !(wide = onnxrun__convt_widen_new(ctx->env, w)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
		                          "out of memory widening weights to float32");
	st = onnxrun__convt_pack(ctx->env, &g, wide ? (const void *)wide : w_bytes, &pk);
	onnxrun__free(ctx->env, wide);
	if (st)
		return onnxrun__node_fail(ctx->err, st, ctx->node, "out of memory packing weights");
	*state = pk;
	/* float32 W lives on as the packed panels; compute rebuilds it for the paths that read
	 * W itself (the scatter, a forced other ISA), so the model need not keep both */
	if (w->dtype == ONNXRUN_DTYPE_FLOAT && onnxrun__convt_can_unpack(pk))
		onnxrun__op_rebuilds_input(ctx, 1);
	return ONNXRUN_OK;
}

void onnxrun__convt_fast_fini(void *user_data, void *state)
{
	(void)user_data;
	onnxrun__convt_packed_free(state);
}

/* ---- dispatch ----------------------------------------------------------------------------- */

/* The phase and depthwise paths do work per OUTPUT position (about prod(out) *
 * prod(ceil(k/s)) taps), the scatter per INPUT position (prod(in) * prod(k)). They agree
 * for layer-like shapes; a large kernel over a tiny input, or a stride far above the kernel,
 * makes the first grow without bound (found by fuzzing). Returns the ratio of the two. */
double onnxrun__convt_out_driven_waste(const struct onnxrun__convt_geom *g)
{
	double fast = 1.0, scatter = 1.0;
	for (int32_t a = 0; a < g->n; a++) {
		fast *= (double)g->out[a] * (double)((g->kernel[a] + g->strides[a] - 1) / g->strides[a]);
		scatter *= (double)g->in[a] * (double)g->kernel[a];
	}
	return fast / (scatter > 0 ? scatter : 1.0);
}

bool onnxrun__convt_fast_shape_ok(const struct onnxrun__convt_geom *g)
{
	if (g->batch < 1 || g->n < 1)
		return false;
	for (int32_t a = 0; a < g->n; a++)
		if (g->in[a] < 1 || g->out[a] < 1)
			return false;
	return true;
}

const struct onnxrun__convt_packed *onnxrun__convt_prepacked(const struct onnxrun_op_context *ctx,
                                                               const struct onnxrun__convt_geom *g)
{
	const struct onnxrun__convt_packed *pk = ctx->state;
	return packed_matches(pk, g) && pk->kt->isa == onnxrun__isa_current() ? pk : NULL;
}

bool onnxrun__convt_fast_declines(const struct onnxrun__convt_geom *g, const struct onnxrun__convt_packed *pk)
{
	/* the scatter's work follows the input: cheaper when the output-driven paths waste (the
	 * overlap-add path's work follows the input too) */
	return pk->path != CONVT_PATH_COL2IM && onnxrun__convt_out_driven_waste(g) > 8.0;
}

enum onnxrun_status onnxrun__convt_fast_run(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                                            const struct onnxrun__convt_packed *pk, const float *x,
                                            const float *w, const float *bias, float *y, bool *done)
{
	enum onnxrun_status st;
	switch (pk->path) {
	case CONVT_PATH_PHASE: st = onnxrun__convt_run_phase(ctx, g, pk, x, bias, y); break;
	case CONVT_PATH_COL2IM: st = onnxrun__convt_run_col2im(ctx, g, pk, x, bias, y); break;
	case CONVT_PATH_DW: st = onnxrun__convt_run_dw(ctx, g, x, w, bias, y); break;
	default: st = ONNXRUN_ERROR_UNSUPPORTED; break;
	}
	*done = st == ONNXRUN_OK;
	return st == ONNXRUN_ERROR_UNSUPPORTED ? ONNXRUN_OK : st;
}

enum onnxrun_status onnxrun__convt_fast(struct onnxrun_op_context *ctx, const struct onnxrun__convt_geom *g,
                                        const struct onnxrun_tensor *const *inputs, size_t n_inputs,
                                        struct onnxrun_tensor *y, bool *done)
{
	const struct onnxrun__convt_packed *pk;
	struct onnxrun__convt_packed *mine = NULL;
	const float *bias = n_inputs > 2 && inputs[2] ? inputs[2]->data : NULL, *w = inputs[1]->data;
	float *wown = NULL;
	enum onnxrun_status st;

	*done = false;
	if (y->dtype != ONNXRUN_DTYPE_FLOAT || !onnxrun__convt_fast_shape_ok(g))
		return ONNXRUN_OK;
	if (!(pk = onnxrun__convt_prepacked(ctx, g))) {
		if ((st = onnxrun__convt_w_values(ctx, inputs[1], &w, &wown)))
			return st;
		if ((st = onnxrun__convt_pack(ctx->env, g, w, &mine))) {
			onnxrun__free(ctx->env, wown);
			return onnxrun__node_fail(ctx->err, st, ctx->node, "out of memory packing weights");
		}
		pk = mine;
	}
	if (!pk || onnxrun__convt_fast_declines(g, pk)) {
		onnxrun__convt_packed_free(mine);
		onnxrun__free(ctx->env, wown);
		return ONNXRUN_OK;
	}
	/* only the depthwise path reads W, and W is never released for it */
	st = onnxrun__convt_fast_run(ctx, g, pk, inputs[0]->data, w, bias, y->data, done);
	onnxrun__convt_packed_free(mine);
	onnxrun__free(ctx->env, wown);
	return st;
}
