/*
 * mcu_test.c - see mcu_test.h.
 */
#include <stdlib.h>
#include <string.h>

#include "mcu_test.h"

extern char __bigram_start[], __bigram_end[];

int mcu_failures;
static size_t big_used;

void *mcu_big_alloc(size_t size, size_t align)
{
	uintptr_t base = (uintptr_t)__bigram_start + big_used;
	uintptr_t p = (base + align - 1) & ~(uintptr_t)(align - 1);
	if (p + size > (uintptr_t)__bigram_end || p + size < p) {
		printf("test memory exhausted: %u bytes more wanted\n", (unsigned)size);
		exit(2);
	}
	big_used = p + size - (uintptr_t)__bigram_start;
	return (void *)p;
}

size_t mcu_big_mark(void)
{
	return big_used;
}

void mcu_big_release(size_t mark)
{
	big_used = mark;
}

void *mcu_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;
	void *buf;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = mcu_big_alloc((size_t)n + 1, 64);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

int mcu_file_exists(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f)
		fclose(f);
	return f != NULL;
}

int mcu_finish(const char *name)
{
	if (mcu_failures)
		printf("%s FAIL (%d checks)\n", name, mcu_failures);
	else
		printf("%s PASS\n", name);
	return mcu_failures ? 1 : 0;
}
