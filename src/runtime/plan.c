/*
 * plan.c - places intermediate tensors in one arena from their lifetimes.
 */
#include <stdlib.h>

#include "graph.h"

#define ALIGN 64

static size_t align_up(size_t n)
{
	return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static bool overlaps(const struct onnxrun__plan_item *a, const struct onnxrun__plan_item *b)
{
	return a->first <= b->last && b->first <= a->last;
}

/* Largest first; ties by first use, then position, so plans are deterministic. */
static int by_size(const void *pa, const void *pb)
{
	const struct onnxrun__plan_item *a = *(const struct onnxrun__plan_item *const *)pa;
	const struct onnxrun__plan_item *b = *(const struct onnxrun__plan_item *const *)pb;
	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Lowest aligned offset where `it` fits beside the already placed items live with it. */
static size_t lowest_fit(struct onnxrun__plan_item *const *placed, size_t n_placed,
                         const struct onnxrun__plan_item *it)
{
	size_t offset = 0;
	bool moved = true;
	while (moved) {
		moved = false;
		for (size_t p = 0; p < n_placed; p++) {
			const struct onnxrun__plan_item *o = placed[p];
			if (!overlaps(o, it) || !o->size)
				continue;
			if (offset < o->offset + align_up(o->size) && o->offset < offset + align_up(it->size)) {
				offset = o->offset + align_up(o->size);
				moved = true;
			}
		}
	}
	return offset;
}

enum onnxrun_status onnxrun__plan(const struct onnxrun_env *env, struct onnxrun__plan_item *items, size_t n,
                                  size_t *total)
{
	struct onnxrun__plan_item **order = onnxrun__malloc(env, (n ? n : 1) * sizeof *order);
	size_t end = 0;
	if (!order)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < n; i++) {
		order[i] = &items[i];
		if (items[i].size > SIZE_MAX / 4) {
			onnxrun__free(env, order);
			return ONNXRUN_ERROR_LIMIT;
		}
	}
	qsort(order, n, sizeof *order, by_size);
	for (size_t k = 0; k < n; k++) {
		struct onnxrun__plan_item *it = order[k];
		it->offset = it->size ? lowest_fit(order, k, it) : 0;
		if (it->size && it->offset + align_up(it->size) > end)
			end = it->offset + align_up(it->size);
	}
	onnxrun__free(env, order);
	*total = end;
	return ONNXRUN_OK;
}
