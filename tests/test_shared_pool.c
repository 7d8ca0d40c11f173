/*
 * test_shared_pool.c - shared thread pools (onnxrun_pool_create, onnxrun_session_set_pool):
 * 8 sessions on 4 threads sharing one 2-thread pool, each run bitwise equal to a 1-thread
 * run of the same input (ConvTranspose, DepthToSpace and a custom op using
 * onnxrun_op_parallel_for, each large enough to use the pool); the thread count ops see;
 * the pool outliving its creator's reference; going back to the session's own threads;
 * argument errors. Run under ThreadSanitizer in CI.
 */
#include <pthread.h>
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
#include "test_scale.h"
#include "onnxrun.h"

/* ---- Smooth (domain com.test): each row of a [N,C,H,W] tensor averaged with the rows
 * above and below it (edges: the row itself), one work item per row ---- */

static atomic_int seen_threads; /* the largest onnxrun_op_threads seen by compute */

struct smooth_job {
	const float *x;
	float *y;
	int64_t h, w;
};

static void smooth_rows(void *arg, int thread, int64_t begin, int64_t end)
{
	const struct smooth_job *j = arg;
	(void)thread;
	for (int64_t r = begin; r < end; r++) {
		const int64_t h = r % j->h;
		const float *up = j->x + (h > 0 ? r - 1 : r) * j->w, *mid = j->x + r * j->w;
		const float *down = j->x + (h + 1 < j->h ? r + 1 : r) * j->w;
		for (int64_t i = 0; i < j->w; i++)
			j->y[r * j->w + i] = (up[i] + mid[i] + down[i]) * (1.0f / 3.0f);
	}
}

static enum onnxrun_status smooth_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                        struct onnxrun_type *out, size_t n_out)
{
	(void)n_in;
	(void)n_out;
	if (in[0].shape.rank >= 0 && in[0].shape.rank != 4)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "needs rank 4");
	out[0] = in[0];
	return ONNXRUN_OK;
}

static enum onnxrun_status smooth_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                          size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	const int64_t *d = onnxrun_tensor_dims(in[0]);
	struct smooth_job j = { onnxrun_tensor_data(in[0]), onnxrun_tensor_data(out[0]), d[2], d[3] };
	int t = onnxrun_op_threads(ctx), prev = atomic_load(&seen_threads);
	(void)n_in;
	(void)n_out;
	while (t > prev && !atomic_compare_exchange_weak(&seen_threads, &prev, t))
		;
	return onnxrun_op_parallel_for(ctx, d[0] * d[1] * d[2], smooth_rows, &j);
}

static const struct onnxrun_op smooth_op = { "com.test", "Smooth", 1, smooth_infer, smooth_compute,
	                                      NULL, NULL, NULL, NULL };

/* x [1,32,32,32] -> ConvTranspose 'up' (32->64, k4 s2 p1, bias) -> t [1,64,64,64] ->
 * DepthToSpace 'd2s' b2 -> u [1,16,128,128] -> Smooth 'smooth' -> v; outputs t and v. */
static struct onnxrun_model *load_model(struct onnxrun_env *env)
{
	Onnx__ModelProto *mp = mb_model(8);
	struct onnxrun_model *m = NULL;
	const int64_t wd[4] = { 32, 64, 4, 4 }, bd[1] = { 64 };
	float *w = malloc(32 * 64 * 16 * sizeof *w), b[64];
	uint32_t seed = 11;
	Onnx__NodeProto *n;
	size_t size;
	uint8_t *bytes;
	for (int i = 0; i < 32 * 64 * 16; i++) {
		seed = seed * 1664525u + 1013904223u;
		w[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
	}
	for (int i = 0; i < 64; i++)
		b[i] = (float)i / 64.0f - 0.5f;
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "1,32,32,32");
	mb_output(mp, "t", MB_FLOAT, NULL);
	mb_output(mp, "v", MB_FLOAT, NULL);
	mb_initializer_f32(mp, "w", 4, wd, w);
	mb_initializer_f32(mp, "b", 1, bd, b);
	n = mb_node(mp, "up", "ConvTranspose", NULL, "x,w,b", "t");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	mb_attr_ints(n, "pads", MB_INTS(1, 1, 1, 1));
	n = mb_node(mp, "d2s", "DepthToSpace", NULL, "t", "u");
	mb_attr_int(n, "blocksize", 2);
	mb_node(mp, "smooth", "Smooth", "com.test", "u", "v");
	bytes = mb_finish(mp, &size);
	free(w);
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	free(bytes);
	return m;
}

/* Input k: values from seed k (printed on failure). */
static struct onnxrun_tensor *make_input(struct onnxrun_env *env, uint32_t k)
{
	const int64_t dims[4] = { 1, 32, 32, 32 };
	struct onnxrun_tensor *x;
	uint32_t seed = 1000 + k;
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, dims, &x), ONNXRUN_OK);
	for (int64_t i = 0; i < onnxrun_tensor_numel(x); i++) {
		seed = seed * 1664525u + 1013904223u;
		((float *)onnxrun_tensor_data(x))[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
	}
	return x;
}

/* The outputs of a run, copied. */
struct result {
	size_t nbytes[2];
	unsigned char *data[2];
};

static void copy_result(struct onnxrun_session *s, struct result *r)
{
	for (size_t o = 0; o < 2; o++) {
		const struct onnxrun_tensor *y;
		assert_int_equal(onnxrun_session_output(s, o, &y), ONNXRUN_OK);
		r->nbytes[o] = onnxrun_tensor_nbytes(y);
		r->data[o] = malloc(r->nbytes[o]);
		memcpy(r->data[o], onnxrun_tensor_data(y), r->nbytes[o]);
	}
}

#define SESSIONS 8
#define THREADS 4
#define ROUNDS 6

struct worker {
	struct onnxrun_session *s[SESSIONS / THREADS];
	const struct result *want[SESSIONS / THREADS];
	uint32_t seed[SESSIONS / THREADS];
	int bad;   /* runs that failed or differed */
	char msg[256];
};

/* Runs its sessions in turn, ROUNDS times each, comparing every output's bytes. */
static void *work(void *arg)
{
	struct worker *w = arg;
	/* fewer rounds (at least 2) at a reduced ONNXRUN_RANDOM_SCALE (emulated targets) */
	const int rounds = th_scaled(ROUNDS) < 2 ? 2 : th_scaled(ROUNDS);
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < SESSIONS / THREADS; k++) {
			struct onnxrun_session *s = w->s[k];
			if (onnxrun_session_run(s) != ONNXRUN_OK) {
				snprintf(w->msg, sizeof w->msg, "seed %u: %s", w->seed[k], onnxrun_session_error(s));
				w->bad++;
				continue;
			}
			for (size_t o = 0; o < 2; o++) {
				const struct onnxrun_tensor *y;
				if (onnxrun_session_output(s, o, &y) != ONNXRUN_OK ||
				    onnxrun_tensor_nbytes(y) != w->want[k]->nbytes[o] ||
				    memcmp(onnxrun_tensor_data(y), w->want[k]->data[o], w->want[k]->nbytes[o])) {
					snprintf(w->msg, sizeof w->msg, "seed %u round %d: output %zu differs from 1 thread",
					         w->seed[k], r, o);
					w->bad++;
				}
			}
		}
	return NULL;
}

/* 8 sessions, 4 threads, one 2-thread pool: every output bitwise equal to 1 thread. */
static void test_eight_sessions_one_pool(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_pool *pool;
	struct onnxrun_tensor *x[SESSIONS];
	struct onnxrun_session *s[SESSIONS];
	struct result want[SESSIONS];
	struct worker w[THREADS];
	pthread_t th[THREADS];
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &smooth_op), ONNXRUN_OK);
	m = load_model(env);
	for (uint32_t k = 0; k < SESSIONS; k++) {
		struct onnxrun_session *ref;
		x[k] = make_input(env, k);
		assert_int_equal(onnxrun_session_create(m, &ref), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(ref, 0, x[k]), ONNXRUN_OK);
		atomic_store(&seen_threads, 0);
		assert_int_equal(onnxrun_session_run(ref), ONNXRUN_OK);
		assert_int_equal(atomic_load(&seen_threads), 1);
		copy_result(ref, &want[k]);
		onnxrun_session_free(ref);
	}
	assert_int_equal(onnxrun_pool_create(env, 2, &pool), ONNXRUN_OK);
	assert_int_equal(onnxrun_pool_threads(pool), 2);
	for (int k = 0; k < SESSIONS; k++) {
		assert_int_equal(onnxrun_session_create(m, &s[k]), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_pool(s[k], pool), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(s[k], 0, x[k]), ONNXRUN_OK);
	}
	atomic_store(&seen_threads, 0);
	for (int t = 0; t < THREADS; t++) {
		memset(&w[t], 0, sizeof w[t]);
		for (int k = 0; k < SESSIONS / THREADS; k++) {
			w[t].s[k] = s[t * (SESSIONS / THREADS) + k];
			w[t].want[k] = &want[t * (SESSIONS / THREADS) + k];
			w[t].seed[k] = 1000u + (uint32_t)(t * (SESSIONS / THREADS) + k);
		}
		assert_int_equal(pthread_create(&th[t], NULL, work, &w[t]), 0);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < THREADS; t++)
		if (w[t].bad)
			fail_msg("thread %d: %d bad runs, last: %s", t, w[t].bad, w[t].msg);
	assert_int_equal(atomic_load(&seen_threads), 2);
	onnxrun_pool_free(pool); /* the sessions still hold it */
	for (int k = 0; k < SESSIONS; k++) {
		assert_int_equal(onnxrun_session_run(s[k]), ONNXRUN_OK);
		onnxrun_session_free(s[k]); /* the last one stops the workers */
		onnxrun_tensor_free(x[k]);
		free(want[k].data[0]);
		free(want[k].data[1]);
	}
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* What ops see: the pool's thread count while attached, the session's own afterwards
 * (threads set while attached included); switching pools; results unchanged. */
static void test_attach_detach(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_pool *p3, *p1;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	struct result want;
	const int expect[5] = { 1, 3, 1, 4, 4 };
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &smooth_op), ONNXRUN_OK);
	m = load_model(env);
	x = make_input(env, 77);
	assert_int_equal(onnxrun_pool_create(env, 3, &p3), ONNXRUN_OK);
	assert_int_equal(onnxrun_pool_create(env, 1, &p1), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	for (int step = 0; step < 5; step++) {
		switch (step) {
		case 1: assert_int_equal(onnxrun_session_set_pool(s, p3), ONNXRUN_OK); break;
		case 2: assert_int_equal(onnxrun_session_set_pool(s, p1), ONNXRUN_OK); break;
		case 3: /* threads set while attached apply once detached */
			assert_int_equal(onnxrun_session_set_pool(s, p3), ONNXRUN_OK);
			assert_int_equal(onnxrun_session_set_threads(s, 4), ONNXRUN_OK);
			assert_int_equal(onnxrun_session_set_pool(s, NULL), ONNXRUN_OK);
			break;
		case 4: assert_int_equal(onnxrun_session_set_pool(s, NULL), ONNXRUN_OK); break; /* again: no change */
		}
		atomic_store(&seen_threads, 0);
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
		if (atomic_load(&seen_threads) != expect[step])
			fail_msg("step %d: ops saw %d threads, expected %d", step, atomic_load(&seen_threads), expect[step]);
		if (step == 0) {
			copy_result(s, &want);
		} else {
			for (size_t o = 0; o < 2; o++) {
				const struct onnxrun_tensor *y;
				assert_int_equal(onnxrun_session_output(s, o, &y), ONNXRUN_OK);
				assert_memory_equal(onnxrun_tensor_data(y), want.data[o], want.nbytes[o]);
			}
		}
	}
	onnxrun_pool_free(p3);
	onnxrun_pool_free(p1);
	onnxrun_session_free(s);
	free(want.data[0]);
	free(want.data[1]);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

static void test_pool_arguments(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_pool *p = NULL;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_pool_create(NULL, 2, &p), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_pool_create(env, 0, &p), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_env_error(env), "pool: threads must be from 1 to 4096, not 0");
	assert_int_equal(onnxrun_pool_create(env, 4097, &p), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_pool_create(env, 2, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_null(p);
	assert_int_equal(onnxrun_pool_threads(NULL), 0);
	assert_int_equal(onnxrun_session_set_pool(NULL, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_pool_free(NULL);
	assert_int_equal(onnxrun_pool_create(env, 2, &p), ONNXRUN_OK);
	onnxrun_pool_free(p); /* no session: stopped at once */
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eight_sessions_one_pool),
		cmocka_unit_test(test_attach_detach),
		cmocka_unit_test(test_pool_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
