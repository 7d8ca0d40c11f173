/*
 * test_cancel.c - stopping runs: onnxrun_session_cancel from inside a work item (a cancel
 * at a known point), from another thread and before a run; deadlines; the built-in
 * ConvTranspose stopped by a deadline inside its kernel; the pool's per-item check (inline,
 * private and shared pools); a session waiting for a busy shared pool; and every time, the
 * next run is complete and bitwise equal to an uninterrupted one. Run under ThreadSanitizer
 * in CI. No timing assertions: runs that must be stopped are made to take minutes (or to
 * block until the test lets them go).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "platform/platform.h"
#include "model_builder.h"
#include "onnxrun.h"
#include "runtime/pool.h"

/* ---- Spin (domain com.test): y[i] = 2 x[i] + 1, one work item per element ---- */

/* What the items do besides computing, set by each test before a run. */
static struct {
	struct onnxrun_session *session; /* cancelled by item cancel_at */
	int64_t cancel_at;               /* -1: never */
	int64_t block_from;              /* items >= this wait for `released`; -1: never */
	unsigned sleep_us;               /* per item */
	atomic_int released;
	atomic_int blocked;   /* items waiting for `released` */
	atomic_llong ran;     /* items run */
	atomic_int cancelled; /* set just after item cancel_at cancelled */
	atomic_llong late;    /* items that started after that */
	atomic_int bad_thread; /* an item saw a thread index >= onnxrun_op_threads */
} cfg;

static void cfg_reset(struct onnxrun_session *s)
{
	cfg.session = s;
	cfg.cancel_at = -1;
	cfg.block_from = -1;
	cfg.sleep_us = 0;
	atomic_store(&cfg.released, 0);
	atomic_store(&cfg.blocked, 0);
	atomic_store(&cfg.ran, 0);
	atomic_store(&cfg.cancelled, 0);
	atomic_store(&cfg.late, 0);
	atomic_store(&cfg.bad_thread, 0);
}

static void sleep_us(unsigned us)
{
#ifdef _WIN32
	/* Windows sleeps in whole milliseconds (winpthreads' nanosleep makes 100 us none):
	 * wait on the monotonic clock instead */
	const uint64_t end = onnxrun__os_now_ns() + (uint64_t)us * 1000u;
	while (onnxrun__os_now_ns() < end)
		;
#else
	struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 };
	nanosleep(&ts, NULL);
#endif
}

struct spin_job {
	const float *x;
	float *y;
	int threads;
};

static void spin_items(void *arg, int thread, int64_t begin, int64_t end)
{
	const struct spin_job *j = arg;
	if (thread < 0 || thread >= j->threads)
		atomic_store(&cfg.bad_thread, 1);
	for (int64_t i = begin; i < end; i++) {
		atomic_fetch_add(&cfg.ran, 1);
		if (atomic_load(&cfg.cancelled))
			atomic_fetch_add(&cfg.late, 1);
		j->y[i] = 2.0f * j->x[i] + 1.0f;
		if (i == cfg.cancel_at) {
			onnxrun_session_cancel(cfg.session);
			atomic_store(&cfg.cancelled, 1);
		}
		if (cfg.block_from >= 0 && i >= cfg.block_from) {
			atomic_fetch_add(&cfg.blocked, 1);
			while (!atomic_load(&cfg.released))
				sched_yield();
		}
		if (cfg.sleep_us)
			sleep_us(cfg.sleep_us);
	}
}

static enum onnxrun_status spin_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	out[0] = in[0];
	return ONNXRUN_OK;
}

static enum onnxrun_status spin_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	struct spin_job j = { onnxrun_tensor_data(in[0]), onnxrun_tensor_data(out[0]), onnxrun_op_threads(ctx) };
	(void)n_in;
	(void)n_out;
	return onnxrun_op_parallel_for(ctx, onnxrun_tensor_numel(in[0]), spin_items, &j);
}

static const struct onnxrun_op spin_op = { "com.test", "Spin", 1, spin_infer, spin_compute, NULL, NULL, NULL, NULL };

/* x [N] -> Spin 'spin' -> y [N] */
static struct onnxrun_model *spin_model(struct onnxrun_env *env)
{
	Onnx__ModelProto *mp = mb_model(8);
	struct onnxrun_model *m = NULL;
	size_t size;
	uint8_t *bytes;
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "N");
	mb_output(mp, "y", MB_FLOAT, "N");
	mb_node(mp, "spin", "Spin", "com.test", "x", "y");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	return m;
}

struct spin_fixture {
	struct onnxrun_env *env;
	struct onnxrun_model *model;
	struct onnxrun_tensor *x;
	int64_t n;
};

static void spin_setup(struct spin_fixture *f, int64_t n)
{
	assert_int_equal(onnxrun_env_create(NULL, &f->env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(f->env, &spin_op), ONNXRUN_OK);
	f->model = spin_model(f->env);
	f->n = n;
	assert_int_equal(onnxrun_tensor_create(f->env, ONNXRUN_DTYPE_FLOAT, 1, &n, &f->x), ONNXRUN_OK);
	for (int64_t i = 0; i < n; i++)
		((float *)onnxrun_tensor_data(f->x))[i] = (float)(i % 1000) * 0.25f - 7.0f;
}

static void spin_teardown(struct spin_fixture *f)
{
	onnxrun_tensor_free(f->x);
	onnxrun_model_free(f->model);
	onnxrun_env_free(f->env);
}

/* A run after a stopped one: every item runs once and y is exact. */
static void check_full_run(struct spin_fixture *f, struct onnxrun_session *s)
{
	const struct onnxrun_tensor *y;
	cfg_reset(s);
	if (onnxrun_session_run(s) != ONNXRUN_OK)
		fail_msg("run after a stopped one: %s", onnxrun_session_error(s));
	assert_int_equal(atomic_load(&cfg.ran), f->n);
	assert_int_equal(atomic_load(&cfg.bad_thread), 0);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	for (int64_t i = 0; i < f->n; i++) {
		float x = ((const float *)onnxrun_tensor_data(f->x))[i];
		if (((const float *)onnxrun_tensor_data(y))[i] != 2.0f * x + 1.0f)
			fail_msg("element %lld: %g", (long long)i, ((const float *)onnxrun_tensor_data(y))[i]);
	}
}

/* A session with `threads` own threads, or on `pool` when not NULL. */
static struct onnxrun_session *spin_session(struct spin_fixture *f, int threads, struct onnxrun_pool *pool)
{
	struct onnxrun_session *s;
	assert_int_equal(onnxrun_session_create(f->model, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
	if (pool)
		assert_int_equal(onnxrun_session_set_pool(s, pool), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, f->x), ONNXRUN_OK);
	return s;
}

/* Item 100 of 20,000 cancels: later items are not started, the message names the node,
 * the next run is complete. Threads 1-4, own threads and a shared pool. */
static void test_cancel_from_an_item(void **state)
{
	struct spin_fixture f;
	(void)state;
	spin_setup(&f, 20000);
	for (int shared = 0; shared <= 1; shared++)
		for (int threads = 1; threads <= 4; threads++) {
			struct onnxrun_pool *pool = NULL;
			struct onnxrun_session *s;
			if (shared)
				assert_int_equal(onnxrun_pool_create(f.env, threads, &pool), ONNXRUN_OK);
			s = spin_session(&f, threads, pool);
			onnxrun_pool_free(pool); /* the session keeps it alive */
			cfg_reset(s);
			cfg.cancel_at = 100;
			assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
			assert_string_equal(onnxrun_session_error(s),
			                    "node 'spin' (Spin): run cancelled (onnxrun_session_cancel)");
			/* after the cancel: the rest of an inline call (call sizes at most double from
			 * 1, so the one holding item 100 has at most 64 items), or one item per other
			 * thread (each checked before it claimed it). With one thread the items after
			 * the cancelling one's call never run; with several, the others may have run every
			 * other item before the thread holding item 100 reaches it (seen under qemu-user
			 * on a busy machine: 20,000 ran, none after the cancel), so there only `late`
			 * tells whether work started after the cancel. */
			if (atomic_load(&cfg.late) > (threads == 1 ? 63 : threads - 1) ||
			    (threads == 1 && atomic_load(&cfg.ran) >= f.n))
				fail_msg("threads %d shared %d: %lld items ran, %lld of them after the cancel", threads,
				         shared, (long long)atomic_load(&cfg.ran), (long long)atomic_load(&cfg.late));
			const struct onnxrun_tensor *y;
			assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_ERROR_INVALID_ARGUMENT);
			check_full_run(&f, s);
			onnxrun_session_free(s);
		}
	spin_teardown(&f);
}

struct canceller {
	struct onnxrun_session *s;
};

static void *cancel_when_blocked(void *arg)
{
	struct canceller *c = arg;
	while (atomic_load(&cfg.blocked) == 0)
		sched_yield();
	onnxrun_session_cancel(c->s);
	atomic_store(&cfg.released, 1);
	return NULL;
}

/* Another thread cancels while items are running (they wait for it). */
static void test_cancel_from_another_thread(void **state)
{
	struct spin_fixture f;
	(void)state;
	spin_setup(&f, 100000);
	for (int threads = 1; threads <= 3; threads++) {
		struct onnxrun_session *s = spin_session(&f, threads, NULL);
		struct canceller c = { s };
		pthread_t th;
		cfg_reset(s);
		cfg.block_from = 5000;
		assert_int_equal(pthread_create(&th, NULL, cancel_when_blocked, &c), 0);
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
		pthread_join(th, NULL);
		assert_non_null(strstr(onnxrun_session_error(s), "node 'spin' (Spin): run cancelled"));
		assert_true(atomic_load(&cfg.ran) < f.n);
		check_full_run(&f, s);
		onnxrun_session_free(s);
	}
	spin_teardown(&f);
}

/* A request made between runs stops the next one at once and is consumed by it;
 * clear_cancel withdraws one; NULL sessions are ignored. */
static void test_cancel_before_run(void **state)
{
	struct spin_fixture f;
	struct onnxrun_session *s;
	(void)state;
	spin_setup(&f, 1000);
	s = spin_session(&f, 2, NULL);
	cfg_reset(s);
	onnxrun_session_cancel(s);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
	assert_string_equal(onnxrun_session_error(s), "run cancelled before it started (onnxrun_session_cancel)");
	assert_int_equal(atomic_load(&cfg.ran), 0);
	check_full_run(&f, s);
	onnxrun_session_cancel(s);
	onnxrun_session_cancel(s); /* requests merge */
	onnxrun_session_clear_cancel(s);
	check_full_run(&f, s);
	onnxrun_session_cancel(NULL);
	onnxrun_session_clear_cancel(NULL);
	assert_int_equal(onnxrun_session_set_deadline(NULL, 5), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_status_str(ONNXRUN_ERROR_CANCELLED), "cancelled");
	onnxrun_session_free(s);
	spin_teardown(&f);
}

/* Runs s, which has a deadline it cannot meet, and returns the error message. On a loaded
 * machine (or under an emulator) the thread can be descheduled for longer than the budget
 * between the run's start and its first checks; the run then rightly stops before its first
 * node (before it started, or while preparing). Those outcomes are retried (up to 5 runs)
 * so that the caller can check where a stop inside a node is reported. */
static const char *run_past_deadline(struct onnxrun_session *s)
{
	const char *msg;
	for (int attempt = 1;; attempt++) {
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
		msg = onnxrun_session_error(s);
		if (attempt == 5 || (!strstr(msg, "run stopped before it started") && !strstr(msg, "run stopped while preparing")))
			return msg;
		print_message("run %d: %s (descheduled before the first node; retried)\n", attempt, msg);
	}
}

/* A 2 ms budget against 20,000 items of 100 us (2 s): stopped with a deadline message
 * naming the node; without the budget the next run is complete. */
static void test_deadline(void **state)
{
	struct spin_fixture f;
	(void)state;
	spin_setup(&f, 20000);
	for (int threads = 1; threads <= 2; threads++) {
		struct onnxrun_session *s = spin_session(&f, threads, NULL);
		const char *msg;
		cfg_reset(s);
		cfg.sleep_us = 100;
		assert_int_equal(onnxrun_session_set_deadline(s, 2000), ONNXRUN_OK);
		msg = run_past_deadline(s);
		if (strncmp(msg, "node 'spin' (Spin): deadline of 0.002 s exceeded (onnxrun_session_set_deadline): run stopped",
		            strlen("node 'spin' (Spin): deadline of 0.002 s exceeded (onnxrun_session_set_deadline): run stopped")))
			fail_msg("message: %s", msg);
		assert_true(atomic_load(&cfg.ran) < f.n);
		assert_int_equal(onnxrun_session_set_deadline(s, 0), ONNXRUN_OK);
		check_full_run(&f, s);
		/* a generous budget does not stop a run */
		assert_int_equal(onnxrun_session_set_deadline(s, 3600u * 1000000u), ONNXRUN_OK);
		check_full_run(&f, s);
		onnxrun_session_free(s);
	}
	spin_teardown(&f);
}

/* Regression: budgets whose end lies past the clock's range (UINT64_MAX us, the natural
 * "no timeout", and values near UINT64_MAX / 1000 where the nanoseconds reach UINT64_MAX)
 * never stop a run; the arithmetic used to wrap and stop it at once. */
static void test_huge_deadlines(void **state)
{
	const uint64_t budgets[] = { UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 1000 + 1, UINT64_MAX / 1000,
		                     UINT64_MAX / 1000 - 1, UINT64_MAX / 2000, UINT64_MAX / 1000000 };
	struct spin_fixture f;
	struct onnxrun_session *s;
	(void)state;
	spin_setup(&f, 1000);
	s = spin_session(&f, 1, NULL);
	for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
		assert_int_equal(onnxrun_session_set_deadline(s, budgets[i]), ONNXRUN_OK);
		cfg_reset(s);
		if (onnxrun_session_run(s) != ONNXRUN_OK)
			fail_msg("deadline of %llu us: %s", (unsigned long long)budgets[i], onnxrun_session_error(s));
		assert_int_equal(atomic_load(&cfg.ran), f.n);
	}
	onnxrun_session_free(s);
	spin_teardown(&f);
}

/* Regression: profiling sums the node times of successful runs only, so total / runs is
 * a successful run's time; cancelled runs (stopped inside the node, after it did work)
 * used to add their node time without being counted. */
static void test_profiling_counts_successful_runs(void **state)
{
	struct spin_fixture f;
	struct onnxrun_session *s;
	uint64_t total, runs, total1;
	(void)state;
	spin_setup(&f, 1000);
	s = spin_session(&f, 1, NULL);
	assert_int_equal(onnxrun_session_set_profiling(s, 1), ONNXRUN_OK);
	check_full_run(&f, s);
	assert_int_equal(onnxrun_session_node_time(s, 0, &total1, &runs), ONNXRUN_OK);
	assert_int_equal(runs, 1);
	for (int r = 0; r < 10; r++) {
		cfg_reset(s);
		cfg.cancel_at = 50;
		cfg.sleep_us = 20; /* the node works for at least 1 ms before it stops */
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
		assert_true(atomic_load(&cfg.ran) > 50);
	}
	assert_int_equal(onnxrun_session_node_time(s, 0, &total, &runs), ONNXRUN_OK);
	assert_int_equal(runs, 1);
	assert_int_equal(total, total1); /* the cancelled runs added nothing */
	check_full_run(&f, s);
	assert_int_equal(onnxrun_session_node_time(s, 0, &total, &runs), ONNXRUN_OK);
	assert_int_equal(runs, 2);
	assert_true(total > total1);
	onnxrun_session_free(s);
	spin_teardown(&f);
}

/* ---- the built-in ConvTranspose stopped inside its kernel ---- */

/* x [1,128,H,W] (symbolic H, W) -> ConvTranspose 'up' (W [128,128,5,5], pads 2) -> y */
static struct onnxrun_model *conv_model(struct onnxrun_env *env)
{
	Onnx__ModelProto *mp = mb_model(8);
	struct onnxrun_model *m = NULL;
	const int64_t wd[4] = { 128, 128, 5, 5 };
	const size_t nw = 128 * 128 * 25;
	float *w = malloc(nw * sizeof *w);
	uint32_t seed = 7;
	Onnx__NodeProto *n;
	size_t size;
	uint8_t *bytes;
	for (size_t i = 0; i < nw; i++) {
		seed = seed * 1664525u + 1013904223u;
		w[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
	}
	mb_opset(mp, "", 13);
	mb_input(mp, "x", MB_FLOAT, "1,128,H,W");
	mb_output(mp, "y", MB_FLOAT, NULL);
	mb_initializer_f32(mp, "w", 4, wd, w);
	n = mb_node(mp, "up", "ConvTranspose", NULL, "x,w", "y");
	mb_attr_ints(n, "pads", MB_INTS(2, 2, 2, 2));
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	free(w);
	return m;
}

static struct onnxrun_tensor *ramp(struct onnxrun_env *env, int64_t h, int64_t w)
{
	const int64_t dims[4] = { 1, 128, h, w };
	struct onnxrun_tensor *t;
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, dims, &t), ONNXRUN_OK);
	for (int64_t i = 0; i < onnxrun_tensor_numel(t); i++)
		((float *)onnxrun_tensor_data(t))[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
	return t;
}

/* A 256x256 input (54 GFLOP: seconds at any speed this machine has) under a 5 ms budget
 * stops in node 'up'; then a 12x12 input runs bitwise equal to a fresh session. Threads 1,
 * 2 and a shared 2-thread pool. */
static void test_deadline_inside_conv_transpose(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_tensor *big, *small;
	struct onnxrun_session *ref;
	const struct onnxrun_tensor *want, *got;
	struct onnxrun_pool *pool;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	m = conv_model(env);
	big = ramp(env, 256, 256);
	small = ramp(env, 12, 12);
	assert_int_equal(onnxrun_pool_create(env, 2, &pool), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &ref), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(ref, 0, small), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(ref), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(ref, 0, &want), ONNXRUN_OK);
	for (int mode = 0; mode < 3; mode++) {
		struct onnxrun_session *s;
		const char *msg;
		assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(s, mode == 1 ? 2 : 1), ONNXRUN_OK);
		if (mode == 2)
			assert_int_equal(onnxrun_session_set_pool(s, pool), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_prepare(s), ONNXRUN_ERROR_INVALID_INPUT); /* x unset */
		assert_int_equal(onnxrun_session_set_input(s, 0, big), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_prepare(s), ONNXRUN_OK); /* the budget is for compute */
		assert_int_equal(onnxrun_session_set_deadline(s, 5000), ONNXRUN_OK);
		msg = run_past_deadline(s);
		if (!strstr(msg, "node 'up' (ConvTranspose): deadline of 0.005 s exceeded"))
			fail_msg("mode %d: %s", mode, msg);
		print_message("mode %d: %s\n", mode, msg);
		assert_int_equal(onnxrun_session_set_deadline(s, 0), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(s, 0, small), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_output(s, 0, &got), ONNXRUN_OK);
		assert_int_equal(onnxrun_tensor_nbytes(got), onnxrun_tensor_nbytes(want));
		assert_memory_equal(onnxrun_tensor_data(got), onnxrun_tensor_data(want), onnxrun_tensor_nbytes(want));
		onnxrun_session_free(s);
	}
	onnxrun_session_free(ref);
	onnxrun_pool_free(pool);
	onnxrun_tensor_free(big);
	onnxrun_tensor_free(small);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* ---- the pool's check, directly ---- */

struct count_job {
	atomic_int *hits;
	atomic_int *cancel; /* set by item `at` */
	int64_t at;
	atomic_int late; /* items started after the request was made */
};

static void count_items(void *arg, int tid, int64_t begin, int64_t end)
{
	struct count_job *j = arg;
	(void)tid;
	for (int64_t i = begin; i < end; i++) {
		if (atomic_load(j->cancel))
			atomic_fetch_add(&j->late, 1);
		atomic_fetch_add(&j->hits[i], 1);
		if (i == j->at)
			atomic_store(j->cancel, 1);
	}
}

/* With a request already made no item runs; with one made by item 10, each item runs at
 * most once, and after the request only the rest of an inline call (call sizes at most
 * double from 1, so the one holding item 10 has at most 8 items) or one item per other
 * thread; without a control every item runs once.
 * NULL pool (inline), private pools of 2 and 4 threads, a shared pool of 3. */
static void test_pool_stops_between_items(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun__pool *pools[4] = { NULL };
	const int64_t n = 100000;
	atomic_int *hits = calloc((size_t)n, sizeof *hits);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun__pool_create(env, 2, &pools[1]), ONNXRUN_OK);
	assert_int_equal(onnxrun__pool_create(env, 4, &pools[2]), ONNXRUN_OK);
	assert_int_equal(onnxrun__pool_create_shared(env, 3, &pools[3]), ONNXRUN_OK);
	for (int k = 0; k < 4; k++) {
		for (int pre = 0; pre <= 1; pre++) {
			atomic_int cancel;
			struct onnxrun__runctl ctl = { &cancel, 0, ONNXRUN__STOP_NONE };
			struct count_job j = { hits, &cancel, pre ? -1 : 10, 0 };
			const int threads = k == 0 ? 1 : onnxrun__pool_threads(pools[k]);
			int64_t ran = 0;
			atomic_init(&cancel, pre);
			for (int64_t i = 0; i < n; i++)
				atomic_store(&hits[i], 0);
			assert_false(onnxrun__pool_run_ctl(pools[k], 8, n, count_items, &j, &ctl));
			assert_int_equal(atomic_load(&ctl.stopped), ONNXRUN__STOP_CANCEL);
			for (int64_t i = 0; i < n; i++) {
				assert_true(atomic_load(&hits[i]) <= 1);
				ran += atomic_load(&hits[i]);
			}
			if (pre ? ran != 0 : ran >= n || atomic_load(&j.late) > (threads == 1 ? 7 : threads - 1))
				fail_msg("pool %d, request %s: %lld items ran, %d after the request", k,
				         pre ? "before" : "at item 10", (long long)ran, atomic_load(&j.late));
		}
		/* a deadline already passed */
		{
			atomic_int cancel;
			struct onnxrun__runctl ctl = { &cancel, 1, ONNXRUN__STOP_NONE };
			struct count_job j = { hits, &cancel, -1, 0 };
			atomic_init(&cancel, 0);
			for (int64_t i = 0; i < n; i++)
				atomic_store(&hits[i], 0);
			assert_false(onnxrun__pool_run_ctl(pools[k], 8, n, count_items, &j, &ctl));
			assert_int_equal(atomic_load(&ctl.stopped), ONNXRUN__STOP_DEADLINE);
			for (int64_t i = 0; i < n; i++)
				assert_int_equal(atomic_load(&hits[i]), 0);
		}
		/* no control, and a control that never fires: every item once */
		for (int with_ctl = 0; with_ctl <= 1; with_ctl++) {
			atomic_int cancel;
			struct onnxrun__runctl ctl = { &cancel, 0, ONNXRUN__STOP_NONE };
			struct count_job j = { hits, &cancel, -1, 0 };
			atomic_init(&cancel, 0);
			for (int64_t i = 0; i < n; i++)
				atomic_store(&hits[i], 0);
			assert_true(onnxrun__pool_run_ctl(pools[k], 8, n, count_items, &j, with_ctl ? &ctl : NULL));
			for (int64_t i = 0; i < n; i++)
				assert_int_equal(atomic_load(&hits[i]), 1);
		}
	}
	for (int k = 0; k < 4; k++)
		onnxrun__pool_free(pools[k]);
	free(hits);
	onnxrun_env_free(env);
}

/* ---- waiting for a busy shared pool ---- */

struct runner {
	struct onnxrun_session *s;
	enum onnxrun_status st;
};

static void *run_session(void *arg)
{
	struct runner *r = arg;
	r->st = onnxrun_session_run(r->s);
	return NULL;
}

/* Session A holds a shared pool (its items wait); session B, queued behind it, is
 * cancelled and returns while A still holds the pool; then A finishes normally. */
static void test_cancel_while_waiting_for_the_pool(void **state)
{
	struct spin_fixture f;
	struct onnxrun_pool *pool;
	struct runner a, b;
	pthread_t ta, tb;
	(void)state;
	spin_setup(&f, 1000);
	assert_int_equal(onnxrun_pool_create(f.env, 2, &pool), ONNXRUN_OK);
	a.s = spin_session(&f, 1, pool);
	b.s = spin_session(&f, 1, pool);
	cfg_reset(a.s);
	cfg.block_from = 0;
	assert_int_equal(pthread_create(&ta, NULL, run_session, &a), 0);
	while (atomic_load(&cfg.blocked) == 0)
		sched_yield();
	assert_int_equal(pthread_create(&tb, NULL, run_session, &b), 0);
	sleep_us(20000); /* let B queue; if it has not yet, it stops before it starts */
	onnxrun_session_cancel(b.s);
	pthread_join(tb, NULL);
	assert_int_equal(b.st, ONNXRUN_ERROR_CANCELLED);
	assert_int_equal(atomic_load(&cfg.released), 0); /* A still holds the pool */
	atomic_store(&cfg.released, 1);
	pthread_join(ta, NULL);
	assert_int_equal(a.st, ONNXRUN_OK);
	check_full_run(&f, b.s);
	onnxrun_session_free(a.s);
	onnxrun_session_free(b.s);
	onnxrun_pool_free(pool);
	spin_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_from_an_item),
		cmocka_unit_test(test_cancel_from_another_thread),
		cmocka_unit_test(test_cancel_before_run),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_huge_deadlines),
		cmocka_unit_test(test_profiling_counts_successful_runs),
		cmocka_unit_test(test_deadline_inside_conv_transpose),
		cmocka_unit_test(test_pool_stops_between_items),
		cmocka_unit_test(test_cancel_while_waiting_for_the_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
