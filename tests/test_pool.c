/*
 * test_pool.c - the ops' thread pool: every item runs exactly once, on one of the threads
 * taking part, for 1-4 threads, many back-to-back runs, fewer items than threads, and a NULL
 * pool running inline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <cmocka.h>

#include "runtime/pool.h"

struct job {
	atomic_int *hits;
	int *owner;
	int64_t n;
	int threads;
};

static void body(void *ctx, int tid, int64_t begin, int64_t end)
{
	struct job *j = ctx;
	for (int64_t i = begin; i < end; i++) {
		atomic_fetch_add(&j->hits[i], 1);
		j->owner[i] = tid;
	}
}

static void check(struct onnxrun__pool *p, int threads, int64_t n)
{
	struct job j = { calloc((size_t)n + 1, sizeof(atomic_int)), calloc((size_t)n + 1, sizeof(int)), n, threads };
	int active = threads < onnxrun__pool_threads(p) ? threads : onnxrun__pool_threads(p);
	active = active < n ? active : (int)n;
	onnxrun__pool_run(p, threads, n, body, &j);
	for (int64_t i = 0; i < n; i++) {
		assert_int_equal(atomic_load(&j.hits[i]), 1);
		assert_true(j.owner[i] >= 0 && j.owner[i] < (active > 1 ? active : 1));
	}
	free(j.hits);
	free(j.owner);
}

static void test_pool_split(void **state)
{
	struct onnxrun_env *env = NULL;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	for (int threads = 1; threads <= 4; threads++) {
		struct onnxrun__pool *p = NULL;
		assert_int_equal(onnxrun__pool_create(env, threads, &p), ONNXRUN_OK);
		assert_int_equal(onnxrun__pool_threads(p), threads);
		for (int64_t n = 0; n < 40; n++)
			check(p, threads, n);
		for (int rep = 0; rep < 500; rep++) /* back-to-back runs: spinning and sleeping workers */
			check(p, threads, 7 + rep % 5);
		check(p, 1, 100); /* a run limited to one thread */
		onnxrun__pool_free(p);
	}
	check(NULL, 4, 33); /* no pool: inline */
	onnxrun__pool_free(NULL);
	assert_int_equal(onnxrun__pool_threads(NULL), 1);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
