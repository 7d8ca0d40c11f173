/*
 * common.c - helpers every ConvTranspose implementation uses (common.h).
 */
#include "common.h"

bool onnxrun__convt_has_positions(const struct onnxrun__convt_geom *g)
{
	if (!g->concrete || g->batch < 1 || g->n < 1)
		return false;
	for (int32_t a = 0; a < g->n; a++)
		if (g->in[a] < 1 || g->out[a] < 1)
			return false;
	return true;
}

convt_real onnxrun__convt_out_driven_waste(const struct onnxrun__convt_geom *g)
{
	convt_real fast = 1, scatter = 1;
	for (int32_t a = 0; a < g->n; a++) {
		fast *= (convt_real)g->out[a] * (convt_real)((g->kernel[a] + g->strides[a] - 1) / g->strides[a]);
		scatter *= (convt_real)g->in[a] * (convt_real)g->kernel[a];
	}
	return fast / (scatter > 0 ? scatter : 1);
}

const char *onnxrun__convt_positions_decline(const struct onnxrun__convt_geom *g, bool waste)
{
	if (!g->concrete)
		return NULL;
	if (!onnxrun__convt_has_positions(g))
		return "an empty dimension";
	if (waste && onnxrun__convt_out_driven_waste(g) > CONVT_MAX_WASTE)
		return "far more work per output than the scatter's per input";
	return NULL;
}

/* Threads' scratch areas start a cache line apart; on bare metal (one thread, no cache to
 * share) at the library's 16-byte block alignment, not rounded up further (RAM). */
#ifdef ONNXRUN_BAREMETAL
#define SCRATCH_ALIGN 16
#else
#define SCRATCH_ALIGN 64
#endif

void *onnxrun__convt_scratch(struct onnxrun_op_context *ctx, int threads, size_t bytes, size_t *stride)
{
	*stride = (bytes + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
	return onnxrun__malloc(ctx->env, *stride * (size_t)threads);
}

#if UINTPTR_MAX <= 0xffffffffu
int64_t onnxrun__convt_udiv32(int64_t a, int64_t b)
{
	if ((uint64_t)a <= UINT32_MAX && (uint64_t)b <= UINT32_MAX)
		return (int64_t)((uint32_t)a / (uint32_t)b);
	return a / b;
}
#endif
