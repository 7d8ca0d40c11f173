/*
 * plan.c - places intermediate tensors in one arena from their lifetimes.
 */
#include <stdlib.h>
#include <string.h>

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

/* Above this many buffers the best-fit planner (quadratic in the count) gives way to a
 * linear scan over time, which is near-linear when few buffers live at once. */
#define LINEAR_SCAN_ABOVE 2048

/* By first use, then position: the order the linear scan meets buffers in. */
static int by_first(const void *pa, const void *pb)
{
	const struct onnxrun__plan_item *a = *(const struct onnxrun__plan_item *const *)pa;
	const struct onnxrun__plan_item *b = *(const struct onnxrun__plan_item *const *)pb;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* A free block of the arena. */
struct hole {
	size_t offset, size;
};

/* Returns [offset, offset + size) to the free list (sorted by offset), merging neighbours. */
static void release(struct hole *holes, size_t *n, size_t offset, size_t size)
{
	size_t i = 0;
	while (i < *n && holes[i].offset < offset)
		i++;
	if (i > 0 && holes[i - 1].offset + holes[i - 1].size == offset) {
		holes[i - 1].size += size;
		if (i < *n && offset + size == holes[i].offset) {
			holes[i - 1].size += holes[i].size;
			memmove(&holes[i], &holes[i + 1], (*n - i - 1) * sizeof *holes);
			(*n)--;
		}
		return;
	}
	if (i < *n && offset + size == holes[i].offset) {
		holes[i].offset = offset;
		holes[i].size += size;
		return;
	}
	memmove(&holes[i + 1], &holes[i], (*n - i) * sizeof *holes);
	holes[i] = (struct hole){ offset, size };
	(*n)++;
}

/* Linear scan: buffers in order of first use take the first free block that fits (or the
 * arena's end); a buffer's block is freed once a later buffer starts after its last use. */
static enum onnxrun_status plan_linear(const struct onnxrun_env *env, struct onnxrun__plan_item **order, size_t n,
                                       size_t *total)
{
	struct hole *holes = onnxrun__malloc(env, (n + 1) * sizeof *holes);
	struct onnxrun__plan_item **live = onnxrun__malloc(env, (n + 1) * sizeof *live);
	size_t n_holes = 0, n_live = 0, end = 0;
	if (!holes || !live) {
		onnxrun__free(env, holes);
		onnxrun__free(env, live);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	qsort(order, n, sizeof *order, by_first);
	for (size_t k = 0; k < n; k++) {
		struct onnxrun__plan_item *it = order[k];
		size_t need = align_up(it->size), h = 0;
		for (size_t j = 0; j < n_live;) /* free what died before this buffer starts */
			if (live[j]->last < it->first) {
				release(holes, &n_holes, live[j]->offset, align_up(live[j]->size));
				live[j] = live[--n_live];
			} else {
				j++;
			}
		it->offset = 0;
		if (!need)
			continue;
		while (h < n_holes && holes[h].size < need)
			h++;
		if (h < n_holes) {
			it->offset = holes[h].offset;
			holes[h].offset += need;
			holes[h].size -= need;
			if (!holes[h].size)
				memmove(&holes[h], &holes[h + 1], (--n_holes - h) * sizeof *holes);
		} else {
			it->offset = end;
			end += need;
		}
		live[n_live++] = it;
	}
	onnxrun__free(env, holes);
	onnxrun__free(env, live);
	*total = end;
	return ONNXRUN_OK;
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
	if (n > LINEAR_SCAN_ABOVE) {
		enum onnxrun_status st = plan_linear(env, order, n, total);
		onnxrun__free(env, order);
		return st;
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
