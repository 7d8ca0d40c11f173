/*
 * test_api.c - the public API's contract: NULL and out-of-range arguments, messages, an
 * allocator that counts bytes and sees every allocation freed, and one model shared by four
 * threads each running its own session (run under ThreadSanitizer in CI).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "platform/platform.h"
#include "onnxrun.h"

#define UPSAMPLER ONNXRUN_MODELS_DIR "/upsampler/model.onnx"
#define UPSAMPLER_IN ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0/input_0.pb"
#define UPSAMPLER_OUT ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0/output_0.pb"

/* ---- a counting allocator ---- */

struct counter {
	pthread_mutex_t lock;
	long live_blocks;
	long long live_bytes;
	long total_blocks;
	long fail_at; /* fail the fail_at-th allocation (1-based); 0 never */
};

static void *count_alloc(void *ctx, size_t size, size_t align)
{
	struct counter *c = ctx;
	void *p = NULL;
	pthread_mutex_lock(&c->lock);
	c->total_blocks++;
	if (c->fail_at && c->total_blocks == c->fail_at) {
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	if ((p = onnxrun__os_aligned_alloc(align, size)) != NULL) {
		c->live_blocks++;
		c->live_bytes += (long long)size;
	}
	pthread_mutex_unlock(&c->lock);
	return p;
}

static void count_free(void *ctx, void *ptr, size_t size)
{
	struct counter *c = ctx;
	pthread_mutex_lock(&c->lock);
	c->live_blocks--;
	c->live_bytes -= (long long)size;
	pthread_mutex_unlock(&c->lock);
	onnxrun__os_aligned_free(ptr);
}

/* Loads the upsampler, runs it on its test input and checks the expected output. */
static void run_upsampler(struct onnxrun_env *env)
{
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x, *want;
	const struct onnxrun_tensor *y;
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_OUT, &want), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_numel(y), onnxrun_tensor_numel(want));
	for (int64_t i = 0; i < onnxrun_tensor_numel(y); i++) {
		float g = ((const float *)onnxrun_tensor_data(y))[i];
		float e = ((const float *)onnxrun_tensor_data(want))[i];
		if (!(g - e <= 1e-7f + 1e-3f * (e < 0 ? -e : e) && e - g <= 1e-7f + 1e-3f * (e < 0 ? -e : e)))
			fail_msg("element %lld: expected %g got %g", (long long)i, e, g);
	}
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(want);
	onnxrun_model_free(m);
}

static void test_allocator_sees_every_allocation_freed(void **state)
{
	struct counter c = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0 };
	struct onnxrun_allocator a = { &c, count_alloc, count_free };
	struct onnxrun_env *env;
	(void)state;
	assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
	run_upsampler(env);
	/* Only the env itself is still live; the model (protobuf-c included) went through us. */
	assert_true(c.total_blocks > 20);
	assert_int_equal(c.live_blocks, 1);
	onnxrun_env_free(env);
	assert_int_equal(c.live_blocks, 0);
	assert_int_equal(c.live_bytes, 0);
}

/* Fails the N-th allocation for every N of a whole load+run: a status, never a crash or leak. */
static void test_every_failed_allocation_is_clean(void **state)
{
	(void)state;
	for (long n = 1;; n++) {
		struct counter c = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, n };
		struct onnxrun_allocator a = { &c, count_alloc, count_free };
		struct onnxrun_env *env;
		struct onnxrun_model *m = NULL;
		struct onnxrun_session *s = NULL;
		struct onnxrun_tensor *x = NULL;
		enum onnxrun_status st;
		if (onnxrun_env_create(&a, &env) != ONNXRUN_OK)
			continue; /* the env's own allocation failed */
		st = onnxrun_model_load_file(env, UPSAMPLER, &m);
		if (!st)
			st = onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x);
		if (!st)
			st = onnxrun_session_create(m, &s);
		if (!st)
			st = onnxrun_session_set_input(s, 0, x);
		if (!st)
			st = onnxrun_session_run(s);
		onnxrun_session_free(s);
		onnxrun_tensor_free(x);
		onnxrun_model_free(m);
		onnxrun_env_free(env);
		if (c.live_blocks != 0)
			fail_msg("allocation %ld failed: %ld blocks leaked (status %s)", n, c.live_blocks,
			         onnxrun_status_str(st));
		if (c.total_blocks < n)
			break; /* the N-th allocation never happened: everything succeeded */
		if (st != ONNXRUN_ERROR_OUT_OF_MEMORY)
			fail_msg("allocation %ld failed but the status is '%s'", n, onnxrun_status_str(st));
	}
}

static void test_null_and_out_of_range_arguments(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_value_info info;
	struct onnxrun_node_info node;
	const struct onnxrun_tensor *out;
	struct onnxrun_tensor *t = NULL;
	const char *domain;
	int64_t version, dims[2] = { 2, -1 };
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(NULL, UPSAMPLER, &m), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_file(env, NULL, &m), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_buffer(env, NULL, 10, NULL, &m), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 2, dims, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_null(t);
	assert_non_null(strstr(onnxrun_env_error(env), "negative"));
	assert_int_equal(onnxrun_tensor_create(env, (enum onnxrun_dtype)99, 0, NULL, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_input_info(m, 1, &info), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_output_info(m, 1, &info), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_node_info(m, 3, &node), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_opset(m, 1, &domain, &version), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_value_info(m, "nope", &info), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_create(NULL, &s), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 1, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(onnxrun_session_error(s), "out of range"));
	assert_int_equal(onnxrun_session_set_input(s, 0, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_input_by_name(s, "nope", NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(onnxrun_session_error(s), "'nope'"));
	assert_int_equal(onnxrun_session_set_threads(s, 0), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_output(s, 0, &out), ONNXRUN_ERROR_INVALID_ARGUMENT); /* no run yet */
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_INPUT);
	assert_non_null(strstr(onnxrun_session_error(s), "input 'image' is not set"));
	assert_int_equal(onnxrun_session_bind_dim(s, "N", 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(onnxrun_session_error(s), "no symbolic dim 'N'"));
	/* NULL handles are harmless to free and to ask about. */
	onnxrun_session_free(NULL);
	onnxrun_model_free(NULL);
	onnxrun_tensor_free(NULL);
	onnxrun_env_free(NULL);
	assert_string_equal(onnxrun_status_str(ONNXRUN_OK), "ok");
	assert_string_equal(onnxrun_version(), ONNXRUN_VERSION_STRING);
	assert_int_equal(onnxrun_model_input_count(NULL), 0);
	onnxrun_session_free(s);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

static void test_wrong_input_dtype_and_shape(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *t;
	const int64_t good[4] = { 1, 3, 32, 32 }, bad[4] = { 1, 3, 32, 31 };
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_DOUBLE, 4, good, &t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_string_equal(onnxrun_session_error(s), "input 'image': expected dtype float, got double");
	onnxrun_tensor_free(t);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, bad, &t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_string_equal(onnxrun_session_error(s),
	                    "input 'image': dim 3 is 31 but the model declares [1,3,32,32]");
	onnxrun_tensor_free(t);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 3, good, &t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_non_null(strstr(onnxrun_session_error(s), "expected rank 4"));
	onnxrun_tensor_free(t);
	onnxrun_session_free(s);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* ---- one model, four threads, a session each ---- */

struct worker {
	const struct onnxrun_model *model;
	const struct onnxrun_tensor *input;
	const float *expected;
	int64_t n;
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct onnxrun_session *s;
	const struct onnxrun_tensor *y;
	if (onnxrun_session_create(w->model, &s) || onnxrun_session_set_input(s, 0, w->input)) {
		w->errors++;
		return NULL;
	}
	for (int r = 0; r < 20; r++) {
		if (onnxrun_session_run(s) || onnxrun_session_output(s, 0, &y) || onnxrun_tensor_numel(y) != w->n ||
		    memcmp(onnxrun_tensor_data(y), w->expected, (size_t)w->n * sizeof(float)))
			w->errors++;
	}
	onnxrun_session_free(s);
	return NULL;
}

static void test_model_shared_by_four_threads(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	const struct onnxrun_tensor *y;
	struct worker w[4];
	pthread_t th[4];
	float *first;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x), ONNXRUN_OK);
	/* The single-threaded result every thread must reproduce bit for bit. */
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	first = malloc(onnxrun_tensor_nbytes(y));
	assert_non_null(first);
	memcpy(first, onnxrun_tensor_data(y), onnxrun_tensor_nbytes(y));
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ m, x, first, onnxrun_tensor_numel(y), 0 };
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].errors, 0);
	}
	free(first);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

static void test_profiling_counts_runs_per_node(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	uint64_t ns, runs;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_node_time(s, 0, &ns, &runs), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK); /* before profiling: not counted */
	assert_int_equal(onnxrun_session_set_profiling(s, 1), ONNXRUN_OK);
	for (int r = 0; r < 3; r++)
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	for (size_t i = 0; i < onnxrun_model_node_count(m); i++) {
		assert_int_equal(onnxrun_session_node_time(s, i, &ns, &runs), ONNXRUN_OK);
		assert_int_equal(runs, 3);
		assert_true(ns > 0);
	}
	assert_int_equal(onnxrun_session_node_time(s, onnxrun_model_node_count(m), &ns, &runs),
	                 ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_profiling(s, 0), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_node_time(s, 0, &ns, &runs), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocator_sees_every_allocation_freed),
		cmocka_unit_test(test_every_failed_allocation_is_clean),
		cmocka_unit_test(test_null_and_out_of_range_arguments),
		cmocka_unit_test(test_wrong_input_dtype_and_shape),
		cmocka_unit_test(test_model_shared_by_four_threads),
		cmocka_unit_test(test_profiling_counts_runs_per_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
