/*
 * arena.c - onnxrun_arena_init: an allocator over one caller buffer, for microcontrollers
 * (every byte of RAM the library uses in one place) and for anyone who wants a bound.
 *
 * The buffer starts with the arena's state; the rest is a row of blocks, each with a
 * header giving its size, the previous block's size and whether it is in use. Allocation
 * takes the smallest free block that fits at the asked alignment, the lowest of equals
 * (splitting off what is left in front of and behind it): best fit, so small records fill
 * the small holes a load leaves (protobuf-c's parse, freed when the load ends) instead of
 * splitting a big hole a later block could have used (816 B less arena on the Cortex-M55's
 * upsampler than first fit, 48 B on the Cortex-M4). Freeing merges a block with free
 * neighbours. The high-water mark is the furthest byte any block in use has reached: a
 * buffer of that size would have served the same calls.
 */
#include <string.h>

#include "runtime.h"

/* One block: its header, then the caller's bytes. Sizes count the header and are
 * multiples of ARENA_GRAIN; bit 0 of size_used is set while the block is in use. */
struct arena_block {
	size_t prev_size; /* 0 for the first block */
	size_t size_used;
};

struct arena {
	unsigned char *buf;         /* the caller's buffer (the state may sit a few bytes in) */
	unsigned char *start, *end; /* the blocks */
	size_t used;                /* bytes of blocks in use, headers included */
	size_t high;                /* furthest byte in use so far, from the buffer's start */
	size_t total;               /* the buffer's size */
};

#define ARENA_GRAIN (sizeof(struct arena_block) >= 8 ? sizeof(struct arena_block) : 8)
#define HDR_SIZE (sizeof(struct arena_block))
#define MIN_BLOCK (HDR_SIZE + ARENA_GRAIN)

static size_t bsize(const struct arena_block *b)
{
	return b->size_used & ~(size_t)1;
}

static bool in_use(const struct arena_block *b)
{
	return b->size_used & 1;
}

static struct arena_block *next_of(const struct arena *a, struct arena_block *b)
{
	unsigned char *n = (unsigned char *)b + bsize(b);
	return n < a->end ? (struct arena_block *)n : NULL;
}

static void set_block(const struct arena *a, struct arena_block *b, size_t size, bool used)
{
	struct arena_block *n;
	b->size_used = size | (used ? 1u : 0u);
	if ((n = next_of(a, b)) != NULL)
		n->prev_size = size;
}

static void *arena_alloc(void *ctx, size_t size, size_t align)
{
	struct arena *a = ctx;
	struct arena_block *b, *best = NULL;
	size_t need, best_gap = 0;
	if (align < ARENA_GRAIN)
		align = ARENA_GRAIN;
	if (size > (size_t)(a->end - a->start))
		return NULL;
	need = HDR_SIZE + (size + ARENA_GRAIN - 1) / ARENA_GRAIN * ARENA_GRAIN;
	for (b = (struct arena_block *)a->start; b; b = next_of(a, b)) {
		uintptr_t at = (uintptr_t)b, payload;
		size_t gap;
		if (in_use(b))
			continue;
		payload = (at + HDR_SIZE + align - 1) & ~(uintptr_t)(align - 1);
		/* a gap in front must be able to hold a free block of its own */
		while ((gap = payload - HDR_SIZE - at) != 0 && gap < MIN_BLOCK)
			payload += align;
		if (gap + need > bsize(b))
			continue;
		if (!best || bsize(b) - gap < bsize(best) - best_gap) {
			best = b;
			best_gap = gap;
			if (bsize(b) - gap == need)
				break; /* nothing fits better */
		}
	}
	if ((b = best) != NULL) {
		const uintptr_t at = (uintptr_t)b;
		const size_t gap = best_gap;
		if (gap) { /* the front stays free as a block of its own */
			struct arena_block *nb = (struct arena_block *)(at + gap);
			const size_t rest = bsize(b) - gap;
			set_block(a, b, gap, false);
			nb->prev_size = gap;
			set_block(a, nb, rest, false);
			b = nb;
		}
		if (bsize(b) - need >= MIN_BLOCK) { /* the tail stays free */
			struct arena_block *t = (struct arena_block *)((unsigned char *)b + need);
			const size_t rest = bsize(b) - need;
			set_block(a, b, need, false);
			t->prev_size = need;
			set_block(a, t, rest, false);
		}
		set_block(a, b, bsize(b), true);
		a->used += bsize(b);
		{
			const size_t reach = (size_t)((unsigned char *)b + bsize(b) - a->buf);
			if (reach > a->high)
				a->high = reach;
		}
		return (unsigned char *)b + HDR_SIZE;
	}
	return NULL;
}

static void arena_free(void *ctx, void *ptr, size_t size)
{
	struct arena *a = ctx;
	struct arena_block *b, *n;
	(void)size;
	if (!ptr)
		return;
	b = (struct arena_block *)((unsigned char *)ptr - HDR_SIZE);
	a->used -= bsize(b);
	set_block(a, b, bsize(b), false);
	if ((n = next_of(a, b)) != NULL && !in_use(n))
		set_block(a, b, bsize(b) + bsize(n), false);
	if (b->prev_size) {
		struct arena_block *p = (struct arena_block *)((unsigned char *)b - b->prev_size);
		if (!in_use(p))
			set_block(a, p, bsize(p) + bsize(b), false);
	}
}

enum onnxrun_status onnxrun_arena_init(struct onnxrun_allocator *alloc, void *buf, size_t size)
{
	struct arena *a;
	uintptr_t start, end;
	if (!alloc || !buf)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	a = (struct arena *)(((uintptr_t)buf + _Alignof(struct arena) - 1) & ~(uintptr_t)(_Alignof(struct arena) - 1));
	start = ((uintptr_t)(a + 1) + ARENA_GRAIN - 1) & ~(uintptr_t)(ARENA_GRAIN - 1);
	end = ((uintptr_t)buf + size) & ~(uintptr_t)(ARENA_GRAIN - 1);
	if (size < sizeof *a + 2 * MIN_BLOCK + 2 * ARENA_GRAIN || end < start + MIN_BLOCK)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	memset(a, 0, sizeof *a);
	a->start = (unsigned char *)start;
	a->end = (unsigned char *)end;
	a->total = size;
	a->buf = buf;
	((struct arena_block *)start)->prev_size = 0;
	set_block(a, (struct arena_block *)start, (size_t)(end - start), false);
	a->high = (size_t)(a->start - a->buf);
	alloc->ctx = a;
	alloc->alloc = arena_alloc;
	alloc->free = arena_free;
	return ONNXRUN_OK;
}

static const struct arena *arena_of(const struct onnxrun_allocator *alloc)
{
	return alloc && alloc->alloc == arena_alloc ? alloc->ctx : NULL;
}

size_t onnxrun_arena_high_water(const struct onnxrun_allocator *alloc)
{
	const struct arena *a = arena_of(alloc);
	return a ? a->high : 0;
}

size_t onnxrun_arena_used(const struct onnxrun_allocator *alloc)
{
	const struct arena *a = arena_of(alloc);
	return a ? a->used : 0;
}
