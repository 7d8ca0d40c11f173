/*
 * test_op_parallel.c - onnxrun_op_parallel_for, the way custom ops (like the built-ins) use
 * the session's threads: every item runs exactly once, on a thread index below
 * onnxrun_op_threads, with 1-4 own threads and with a shared pool; results bitwise equal
 * for every count (a prefix-sum per block, whose float rounding depends on the order of
 * additions, so a split that changed the order would show); a call from inside an item
 * runs inline on that item's thread; empty ranges and bad arguments. Run under
 * ThreadSanitizer in CI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_builder.h"
#include "onnxrun.h"
#include "platform/platform.h"

#define BLOCK 61 /* elements per work item */

struct scan_job {
	struct onnxrun_op_context *ctx;
	const float *x;
	float *y;
	int64_t n;
	int threads;
	atomic_int *hits;     /* per item */
	atomic_int bad;       /* a thread index out of range, or a nested item on another thread */
	atomic_int nested;    /* items of nested calls run */
	int nest;             /* item 0 calls onnxrun_op_parallel_for again */
};

static _Thread_local int my_thread = -1;

static void nested_items(void *arg, int thread, int64_t begin, int64_t end)
{
	struct scan_job *j = arg;
	if (thread != my_thread)
		atomic_store(&j->bad, 1);
	atomic_fetch_add(&j->nested, (int)(end - begin));
}

/* Items: blocks of BLOCK elements, y = running sum of x within the block. */
static void scan_items(void *arg, int thread, int64_t begin, int64_t end)
{
	struct scan_job *j = arg;
	if (thread < 0 || thread >= j->threads)
		atomic_store(&j->bad, 1);
	for (int64_t it = begin; it < end; it++) {
		const int64_t a = it * BLOCK, e = a + BLOCK < j->n ? a + BLOCK : j->n;
		float sum = 0.0f;
		atomic_fetch_add(&j->hits[it], 1);
		for (int64_t i = a; i < e; i++) {
			sum += j->x[i];
			j->y[i] = sum;
		}
		if (it == 0 && j->nest) {
			my_thread = thread;
			if (onnxrun_op_parallel_for(j->ctx, 10, nested_items, j) != ONNXRUN_OK)
				atomic_store(&j->bad, 1);
			my_thread = -1;
		}
	}
}

static struct {
	int nest;
	int hits_ok;   /* each item exactly once */
	int bad;
	int nested;
	int threads;
	enum onnxrun_status empty, null_fn, negative, null_ctx;
	int should_stop;
} seen;

static enum onnxrun_status scan_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	out[0] = in[0];
	return ONNXRUN_OK;
}

static void never(void *arg, int thread, int64_t begin, int64_t end)
{
	(void)thread;
	(void)begin;
	(void)end;
	atomic_store(&((struct scan_job *)arg)->bad, 1);
}

static enum onnxrun_status scan_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	struct scan_job j;
	const int64_t n = onnxrun_tensor_numel(in[0]), items = (n + BLOCK - 1) / BLOCK;
	enum onnxrun_status st;
	(void)n_in;
	(void)n_out;
	memset(&j, 0, sizeof j);
	j.ctx = ctx;
	j.x = onnxrun_tensor_data(in[0]);
	j.y = onnxrun_tensor_data(out[0]);
	j.n = n;
	j.threads = onnxrun_op_threads(ctx);
	j.nest = seen.nest;
	j.hits = calloc((size_t)items + 1, sizeof *j.hits);
	seen.empty = onnxrun_op_parallel_for(ctx, 0, never, &j);
	seen.null_fn = onnxrun_op_parallel_for(ctx, 5, NULL, &j);
	seen.negative = onnxrun_op_parallel_for(ctx, -1, never, &j);
	seen.null_ctx = onnxrun_op_parallel_for(NULL, 5, never, &j);
	seen.should_stop = onnxrun_op_should_stop(ctx);
	st = onnxrun_op_parallel_for(ctx, items, scan_items, &j);
	seen.hits_ok = 1;
	for (int64_t i = 0; i < items; i++)
		seen.hits_ok &= atomic_load(&j.hits[i]) == 1;
	seen.bad = atomic_load(&j.bad);
	seen.nested = atomic_load(&j.nested);
	seen.threads = j.threads;
	free(j.hits);
	return st;
}

static const struct onnxrun_op scan_op = { "com.test", "BlockScan", 1, scan_infer, scan_compute, NULL, NULL, NULL, NULL };

static void test_parallel_for(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_tensor *x;
	const int64_t n = 100003;
	float *want = malloc((size_t)n * sizeof *want);
	Onnx__ModelProto *mp = mb_model(8);
	uint32_t seed = 42;
	size_t size;
	uint8_t *bytes;
	(void)state;
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "N");
	mb_output(mp, "y", MB_FLOAT, "N");
	mb_node(mp, "scan", "BlockScan", "com.test", "x", "y");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &scan_op), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 1, &n, &x), ONNXRUN_OK);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		((float *)onnxrun_tensor_data(x))[i] = (float)(seed >> 8) / 16777216.0f * 200.0f - 100.0f;
	}
	/* the reference: the same running sums, in order */
	for (int64_t a = 0; a < n; a += BLOCK) {
		float sum = 0.0f;
		for (int64_t i = a; i < n && i < a + BLOCK; i++) {
			sum += ((const float *)onnxrun_tensor_data(x))[i];
			want[i] = sum;
		}
	}
	for (int shared = 0; shared <= 1; shared++)
		for (int threads = 1; threads <= 4; threads++)
			for (int nest = 0; nest <= 1; nest++) {
				struct onnxrun_session *s;
				struct onnxrun_pool *pool = NULL;
				const struct onnxrun_tensor *y;
				assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
				if (shared) {
					assert_int_equal(onnxrun_pool_create(env, threads, &pool), ONNXRUN_OK);
					assert_int_equal(onnxrun_session_set_pool(s, pool), ONNXRUN_OK);
					onnxrun_pool_free(pool);
				} else {
					assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
				}
				assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
				memset(&seen, 0, sizeof seen);
				seen.nest = nest;
				if (onnxrun_session_run(s) != ONNXRUN_OK)
					fail_msg("%s", onnxrun_session_error(s));
				assert_int_equal(seen.threads, threads);
				assert_true(seen.hits_ok);
				assert_int_equal(seen.bad, 0);
				assert_int_equal(seen.nested, nest ? 10 : 0);
				assert_int_equal(seen.empty, ONNXRUN_OK);
				assert_int_equal(seen.null_fn, ONNXRUN_ERROR_INVALID_ARGUMENT);
				assert_int_equal(seen.negative, ONNXRUN_ERROR_INVALID_ARGUMENT);
				assert_int_equal(seen.null_ctx, ONNXRUN_ERROR_INVALID_ARGUMENT);
				assert_int_equal(seen.should_stop, 0);
				assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
				if (memcmp(onnxrun_tensor_data(y), want, (size_t)n * sizeof *want))
					fail_msg("threads %d shared %d nest %d: results differ from the in-order sums (seed 42)",
					         threads, shared, nest);
				onnxrun_session_free(s);
			}
	assert_int_equal(onnxrun_op_should_stop(NULL), 0);
	free(want);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* ---- huge ranges ---- */

/* Every call's range, checked against [0, n); the first calls are counted, then the
 * session is cancelled (the range is far too large to finish). */
static struct {
	struct onnxrun_session *session;
	int64_t n;
	atomic_llong calls;
	atomic_int out_of_range;
	atomic_llong first_bad_begin;
	atomic_int thread_seen; /* bit t: thread t made a call */
	int threads;
	enum onnxrun_status st;
} huge;

static void sleep_us(unsigned us)
{
	const uint64_t end = onnxrun__os_now_ns() + (uint64_t)us * 1000u;
	while (onnxrun__os_now_ns() < end)
		;
}

static void huge_items(void *arg, int thread, int64_t begin, int64_t end)
{
	(void)arg;
	(void)thread;
	if (begin < 0 || end > huge.n || begin >= end) {
		if (!atomic_exchange(&huge.out_of_range, 1))
			atomic_store(&huge.first_bad_begin, begin);
	}
	atomic_fetch_or(&huge.thread_seen, 1 << thread);
	/* cancel once every thread has started on its range (or after very many calls) */
	if (atomic_fetch_add(&huge.calls, 1) >= 64 &&
	    (atomic_load(&huge.thread_seen) == (1 << huge.threads) - 1 || atomic_load(&huge.calls) > 1000000))
		onnxrun_session_cancel(huge.session);
	else
		sleep_us(20); /* gives the pool's workers time to wake and take their ranges */
}

static enum onnxrun_status huge_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	(void)in;
	(void)n_in;
	(void)out;
	(void)n_out;
	huge.st = onnxrun_op_parallel_for(ctx, huge.n, huge_items, NULL);
	return huge.st;
}

static const struct onnxrun_op huge_op = { "com.test", "Huge", 1, scan_infer, huge_compute, NULL, NULL, NULL, NULL };

/* Regression: a range of n items with n > INT64_MAX / threads (2^62 at 4 threads, and up to
 * INT64_MAX) is split without overflow: every call, on every thread, gets items inside
 * [0, n). The split
 * computed n * t / T in int64 and handed threads negative item numbers. */
static void test_huge_ranges(void **state)
{
	const int64_t sizes[] = { INT64_C(1) << 62, INT64_MAX, INT64_MAX / 3 + 1 };
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_tensor *x;
	const int64_t one = 1;
	Onnx__ModelProto *mp = mb_model(8);
	size_t size;
	uint8_t *bytes;
	(void)state;
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "1");
	mb_output(mp, "y", MB_FLOAT, "1");
	mb_node(mp, "huge", "Huge", "com.test", "x", "y");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &huge_op), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 1, &one, &x), ONNXRUN_OK);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
		for (int shared = 0; shared <= 1; shared++)
			for (int threads = 1; threads <= 4; threads++) {
				struct onnxrun_session *s;
				struct onnxrun_pool *pool = NULL;
				assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
				if (shared) {
					assert_int_equal(onnxrun_pool_create(env, threads, &pool), ONNXRUN_OK);
					assert_int_equal(onnxrun_session_set_pool(s, pool), ONNXRUN_OK);
					onnxrun_pool_free(pool);
				} else {
					assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
				}
				assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
				huge.session = s;
				huge.n = sizes[k];
				atomic_store(&huge.calls, 0);
				atomic_store(&huge.out_of_range, 0);
				atomic_store(&huge.thread_seen, 0);
				huge.threads = threads;
				assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
				assert_int_equal(huge.st, ONNXRUN_ERROR_CANCELLED);
				assert_true(atomic_load(&huge.calls) > 64);
				if (atomic_load(&huge.out_of_range))
					fail_msg("n = %lld, %d threads%s: a call got items from %lld, outside [0, n)",
					         (long long)sizes[k], threads, shared ? " (shared pool)" : "",
					         (long long)atomic_load(&huge.first_bad_begin));
				onnxrun_session_free(s);
			}
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parallel_for),
		cmocka_unit_test(test_huge_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
