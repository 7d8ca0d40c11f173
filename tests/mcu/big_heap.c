/*
 * big_heap.c - newlib's heap in the board's large test memory (BIGRAM of the linker script)
 * instead of the few KiB of RAM a product firmware gives it: the cmocka tests built as
 * firmware (test_op_conv_transpose, test_op_depth_to_space) allocate their tensors and
 * references with malloc.
 */
#include <errno.h>
#include <stddef.h>

extern char __bigram_start[], __bigram_end[];

void *_sbrk(ptrdiff_t incr);

void *_sbrk(ptrdiff_t incr)
{
	static char *brk = __bigram_start;
	char *old = brk;
	if (incr > __bigram_end - brk) {
		errno = ENOMEM;
		return (void *)-1;
	}
	brk += incr;
	return old;
}

/* env_shim.h: onnxrun_env_create(NULL, ...) with an allocator over malloc */
#include <malloc.h>
#include <stdlib.h>

#include "env_shim.h"

static void *heap_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	return memalign(align, size ? size : 1);
}

static void heap_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)size;
	free(p);
}

#undef onnxrun_env_create
enum onnxrun_status mcu_env_create(const struct onnxrun_allocator *allocator, struct onnxrun_env **out)
{
	static const struct onnxrun_allocator heap = { NULL, heap_alloc, heap_free };
	return onnxrun_env_create(allocator ? allocator : &heap, out);
}
