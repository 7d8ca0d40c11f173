/*
 * test_alloc_hooks.c - the env's allocator hooks see every allocation the library makes:
 * loading a model with external data (mapped and read), running it, and reading and
 * writing .pb and .npy tensor files call the C library's allocator (malloc, calloc,
 * realloc, the aligned forms) not once. The test replaces those functions in this
 * executable by counting ones that forward to glibc's own (__libc_malloc, ...), and counts
 * only while a library call runs on the test's thread. Needs glibc and no sanitizer
 * (ASan and TSan replace the same functions); elsewhere it reports itself skipped.
 * Threads are out of scope: the C library allocates each new thread's stack and
 * thread-local storage itself (docs/embedding.md, "Memory").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_builder.c"
#include "onnxrun.h"

#define D4(a, b, c, d) 4, ((const int64_t[]){ a, b, c, d })

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif
#if defined(__GLIBC__) && !defined(SANITIZED) && !defined(__EMSCRIPTEN__)
#define COUNTING 1
#endif

#ifdef COUNTING
/* glibc's allocator under its internal names */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

static _Thread_local int counting;  /* set around library calls on the test's thread */
static _Thread_local long libc_calls; /* C-library allocations while counting */

void *malloc(size_t size)
{
	libc_calls += counting;
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	libc_calls += counting;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	libc_calls += counting;
	return __libc_realloc(p, size);
}

void free(void *p)
{
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;
	libc_calls += counting;
	if (!(p = __libc_memalign(align, size)))
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	libc_calls += counting;
	return __libc_memalign(align, size);
}

void *memalign(size_t align, size_t size)
{
	libc_calls += counting;
	return __libc_memalign(align, size);
}

/* The env's hooks: glibc's allocator directly, counted separately. */
static long hook_calls;

static void *hook_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	hook_calls++;
	return __libc_memalign(align, size ? size : 1);
}

static void hook_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)size;
	__libc_free(p);
}

#define COUNT(what, call)                                                                          \
	do {                                                                                       \
		libc_calls = 0;                                                                    \
		counting = 1;                                                                      \
		call;                                                                              \
		counting = 0;                                                                      \
		if (libc_calls)                                                                    \
			fail_msg("%s: %ld allocations bypassed the env's allocator", what, libc_calls); \
	} while (0)

#define DIR ONNXRUN_TEST_TMP "/alloc_hooks"

/* Model: x [1,4,4,4] -> DepthToSpace(2) ... with an external initializer c [1,4,4,4]
 * (64 KiB-aligned size so the mapping path is taken when mmap is on): y = DepthToSpace(c). */
static void write_model(void)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t = mb_tensor("c", MB_FLOAT, D4(1, 4, 64, 64));
	Onnx__NodeProto *n;
	static float vals[4 * 64 * 64];
	size_t size;
	uint8_t *buf;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		vals[i] = (float)(i % 97) - 48.0f;
	mb_to_le(vals, sizeof vals, MB_FLOAT);
	assert_int_equal(th_mkdirs(DIR), 0);
	assert_int_equal(mb_write_file(DIR "/c.bin", vals, sizeof vals), 0);
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, "1,1,128,128");
	mb_tensor_external(t, "c.bin", 0, (int64_t)sizeof vals);
	mb_add_initializer(m, t);
	n = mb_node(m, "d2s", "DepthToSpace", "", "c", "y");
	mb_attr_int(n, "blocksize", 2);
	buf = mb_finish(m, &size);
	assert_int_equal(mb_write_file(DIR "/model.onnx", buf, size), 0);
	free(buf);
}

static void test_every_allocation_goes_through_the_hooks(void **state)
{
	const struct onnxrun_allocator a = { NULL, hook_alloc, hook_free };
	(void)state;
	write_model();
	for (int mmap_on = 0; mmap_on <= 1; mmap_on++) {
		struct onnxrun_env *env;
		struct onnxrun_model *m = NULL;
		struct onnxrun_session *s = NULL;
		struct onnxrun_tensor *t = NULL;
		const struct onnxrun_tensor *y = NULL;
		enum onnxrun_status st = ONNXRUN_OK;
		hook_calls = 0;
		COUNT("env create", st = onnxrun_env_create(&a, &env));
		assert_int_equal(st, ONNXRUN_OK);
		assert_int_equal(onnxrun_env_set_mmap(env, mmap_on), ONNXRUN_OK);
		COUNT("loading a model with external data", st = onnxrun_model_load_file(env, DIR "/model.onnx", &m));
		if (st)
			fail_msg("%s", onnxrun_env_error(env));
		COUNT("session create and run", st = onnxrun_session_create(m, &s); if (!st) st = onnxrun_session_run(s));
		if (st)
			fail_msg("%s", s ? onnxrun_session_error(s) : "session create");
		assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
		COUNT("tensor_save_pb", st = onnxrun_tensor_save_pb(env, y, DIR "/y.pb"));
		assert_int_equal(st, ONNXRUN_OK);
		COUNT("tensor_load_pb", st = onnxrun_tensor_load_pb(env, DIR "/y.pb", &t));
		assert_int_equal(st, ONNXRUN_OK);
		assert_memory_equal(onnxrun_tensor_data(t), onnxrun_tensor_data(y), onnxrun_tensor_nbytes(y));
		onnxrun_tensor_free(t);
		COUNT("tensor_save_npy", st = onnxrun_tensor_save_npy(env, y, DIR "/y.npy"));
		assert_int_equal(st, ONNXRUN_OK);
		COUNT("tensor_load_npy", st = onnxrun_tensor_load_npy(env, DIR "/y.npy", &t));
		assert_int_equal(st, ONNXRUN_OK);
		onnxrun_tensor_free(t);
		/* error paths format messages; they allocate nothing of their own either */
		COUNT("a missing file", st = onnxrun_tensor_load_pb(env, DIR "/missing.pb", &t));
		assert_int_equal(st, ONNXRUN_ERROR_IO);
		COUNT("an unwritable path", st = onnxrun_tensor_save_pb(env, y, DIR "/no/such/dir/y.pb"));
		assert_int_equal(st, ONNXRUN_ERROR_IO);
		COUNT("frees", onnxrun_session_free(s); onnxrun_model_free(m); onnxrun_env_free(env));
		assert_true(hook_calls > 10); /* the hooks did see the library's allocations */
	}
}
#else
static void test_every_allocation_goes_through_the_hooks(void **state)
{
	(void)state;
	skip(); /* replacing malloc needs glibc without a sanitizer */
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_goes_through_the_hooks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
