/*
 * shared_pool.c - throughput of concurrent sessions: N sessions, each run in a loop by its
 * own thread for S seconds, either each with its own pool of T threads ("private": N*(T-1)
 * workers) or all on one shared pool of T threads ("shared": T-1 workers); and, for
 * reference, N sessions of one thread each ("1-thread"). Modes alternate for R rounds; the
 * report gives each mode's total runs per second per round and the median. Every output is
 * checked bitwise against a 1-thread run. A measurement tool, not a test.
 *
 *   cc -O2 -I include bench/shared_pool.c build/libonnxrun.a -lprotobuf-c -lm -lpthread \
 *      -o shared_pool
 *   ./shared_pool MODEL [--sessions N] [--threads T] [--seconds S] [--rounds R]
 *
 * Defaults: 4 sessions, 2 threads, 2 seconds, 5 rounds. The model's inputs must be float
 * with known shapes (filled with uniform values in [-1, 1), fixed seed).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxrun.h"

#define MAX_SESSIONS 64

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct loop {
	struct onnxrun_session *s;
	const void *want;
	size_t want_bytes;
	double until;
	atomic_int *go;
	long runs;
	int bad;
};

static void *run_loop(void *arg)
{
	struct loop *l = arg;
	while (!atomic_load(l->go))
		;
	while (now_s() < l->until) {
		const struct onnxrun_tensor *y;
		if (onnxrun_session_run(l->s) || onnxrun_session_output(l->s, 0, &y) ||
		    memcmp(onnxrun_tensor_data(y), l->want, l->want_bytes)) {
			l->bad++;
			break;
		}
		l->runs++;
	}
	return NULL;
}

enum mode { PRIVATE, SHARED, SINGLE };
static const char *const mode_name[] = { "private", "shared", "1-thread" };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int sessions = 4, threads = 2, rounds = 5;
	double seconds = 2.0, rate[3][64];
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_tensor *in[16] = { 0 };
	struct onnxrun_session *ref;
	const struct onnxrun_tensor *y;
	void *want;
	size_t want_bytes, n_in;
	uint32_t seed = 777;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sessions") && i + 1 < argc)
			sessions = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else
			path = argv[i];
	}
	if (!path || sessions < 1 || sessions > MAX_SESSIONS || threads < 1 || rounds < 1 || rounds > 64 ||
	    seconds <= 0) {
		fprintf(stderr, "usage: shared_pool MODEL [--sessions N] [--threads T] [--seconds S] [--rounds R]\n");
		return 2;
	}
	if (onnxrun_env_create(NULL, &env) || onnxrun_model_load_file(env, path, &m)) {
		fprintf(stderr, "%s\n", onnxrun_env_error(env));
		return 2;
	}
	n_in = onnxrun_model_input_count(m);
	for (size_t i = 0; i < n_in && i < 16; i++) {
		struct onnxrun_value_info info;
		int64_t dims[ONNXRUN_MAX_RANK];
		onnxrun_model_input_info(m, i, &info);
		for (int32_t d = 0; d < info.rank; d++)
			dims[d] = info.dims[d].value;
		if (info.dtype != ONNXRUN_DTYPE_FLOAT || onnxrun_tensor_create(env, info.dtype, info.rank, dims, &in[i])) {
			fprintf(stderr, "input '%s': only float inputs of known shape\n", info.name);
			return 2;
		}
		for (int64_t k = 0; k < onnxrun_tensor_numel(in[i]); k++) {
			seed = seed * 1664525u + 1013904223u;
			((float *)onnxrun_tensor_data(in[i]))[k] = (float)(seed >> 8) / 8388608.0f - 1.0f;
		}
	}
	/* the reference output: one thread */
	onnxrun_session_create(m, &ref);
	for (size_t i = 0; i < n_in; i++)
		onnxrun_session_set_input(ref, i, in[i]);
	if (onnxrun_session_run(ref) || onnxrun_session_output(ref, 0, &y)) {
		fprintf(stderr, "%s\n", onnxrun_session_error(ref));
		return 2;
	}
	want_bytes = onnxrun_tensor_nbytes(y);
	want = malloc(want_bytes);
	memcpy(want, onnxrun_tensor_data(y), want_bytes);
	onnxrun_session_free(ref);

	printf("model %s: %d sessions, %d threads each, %g s per mode and round\n", path, sessions, threads, seconds);
	for (int r = 0; r < rounds; r++)
		for (int md = 0; md < 3; md++) {
			struct onnxrun_session *s[MAX_SESSIONS];
			struct loop l[MAX_SESSIONS];
			pthread_t th[MAX_SESSIONS];
			struct onnxrun_pool *pool = NULL;
			atomic_int go;
			long total = 0;
			int bad = 0;
			double t0;
			atomic_init(&go, 0);
			if (md == SHARED)
				onnxrun_pool_create(env, threads, &pool);
			for (int k = 0; k < sessions; k++) {
				onnxrun_session_create(m, &s[k]);
				onnxrun_session_set_threads(s[k], md == SINGLE ? 1 : threads);
				if (pool)
					onnxrun_session_set_pool(s[k], pool);
				for (size_t i = 0; i < n_in; i++)
					onnxrun_session_set_input(s[k], i, in[i]);
				onnxrun_session_run(s[k]); /* prepared, pages touched, workers started */
			}
			t0 = now_s();
			for (int k = 0; k < sessions; k++) {
				l[k] = (struct loop){ s[k], want, want_bytes, t0 + seconds, &go, 0, 0 };
				pthread_create(&th[k], NULL, run_loop, &l[k]);
			}
			atomic_store(&go, 1);
			for (int k = 0; k < sessions; k++) {
				pthread_join(th[k], NULL);
				total += l[k].runs;
				bad += l[k].bad;
			}
			rate[md][r] = (double)total / (now_s() - t0);
			if (bad) {
				fprintf(stderr, "%s: %d sessions failed or differed from the 1-thread output\n", mode_name[md], bad);
				return 1;
			}
			for (int k = 0; k < sessions; k++)
				onnxrun_session_free(s[k]);
			onnxrun_pool_free(pool);
			printf("round %d %-9s %10.1f runs/s\n", r, mode_name[md], rate[md][r]);
			fflush(stdout);
		}
	for (int md = 0; md < 3; md++) {
		qsort(rate[md], (size_t)rounds, sizeof(double), cmp_double);
		printf("median %-9s %10.1f runs/s (rounds %.1f-%.1f)\n", mode_name[md], rate[md][rounds / 2], rate[md][0],
		       rate[md][rounds - 1]);
	}
	printf("shared / private: %.3f\n", rate[SHARED][rounds / 2] / rate[PRIVATE][rounds / 2]);
	free(want);
	for (size_t i = 0; i < n_in && i < 16; i++)
		onnxrun_tensor_free(in[i]);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	return 0;
}
