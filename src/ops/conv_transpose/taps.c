/*
 * taps.c - per-axis tap lists of the phase decomposition (taps.h).
 */
#include <string.h>

#include "taps.h"

bool onnxrun__convt_taps_fit(const struct onnxrun__convt_geom *g)
{
	int64_t nphase = 1, kprod = 1;
	for (int32_t a = 0; a < g->n; a++) {
		if (g->kernel[a] < 1 || g->strides[a] < 1 || g->kernel[a] > CONVT_MAX_KERNEL ||
		    g->strides[a] > CONVT_MAX_PHASES)
			return false;
		nphase *= g->strides[a];
		kprod *= g->kernel[a];
		if (nphase > CONVT_MAX_PHASES || kprod > CONVT_MAX_KERNEL)
			return false;
	}
	return g->n >= 1;
}

enum onnxrun_status onnxrun__convt_taps_make(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                             struct onnxrun__convt_taps *t)
{
	int64_t words = 0, r[ONNXRUN__CONVT_MAX_SPATIAL], *p;
	memset(t, 0, sizeof *t);
	if (!onnxrun__convt_taps_fit(g))
		return ONNXRUN_ERROR_UNSUPPORTED;
	t->n = g->n;
	t->kprod = t->nphase = 1;
	for (int32_t a = 0; a < g->n; a++) {
		t->kernel[a] = g->kernel[a];
		t->s[a] = g->strides[a];
		t->d[a] = g->dilations[a];
		t->kprod *= g->kernel[a];
		t->nphase *= g->strides[a];
		words += t->s[a] + 1 + t->kernel[a];
	}
	words += t->nphase;
	if (!(p = onnxrun__calloc(env, (size_t)words, sizeof *p)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	t->ntaps = p;
	p += t->nphase;
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
	for (int64_t ph = 0; ph < t->nphase; ph++) {
		int64_t nt = 1;
		convt_phase_residues(t, ph, r);
		for (int32_t a = 0; a < t->n; a++)
			nt *= t->start[a][r[a] + 1] - t->start[a][r[a]];
		t->ntaps[ph] = nt;
		t->tmax = nt > t->tmax ? nt : t->tmax;
	}
	return ONNXRUN_OK;
}

void onnxrun__convt_taps_free(const struct onnxrun_env *env, struct onnxrun__convt_taps *t)
{
	onnxrun__free(env, t->ntaps);
	t->ntaps = NULL;
}
