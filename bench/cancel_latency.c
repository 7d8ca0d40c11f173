/*
 * cancel_latency.c - how long a run takes to stop once it is told to: the time from
 * onnxrun_session_cancel (called by a second thread a given delay after the run started)
 * to the return of onnxrun_session_run, or, with --deadline, from the deadline to the
 * return. A measurement tool, not a test.
 *
 *   cc -O2 -I include bench/cancel_latency.c build/libonnxrun.a -lprotobuf-c -lm -lpthread \
 *      -o cancel_latency
 *   ./cancel_latency MODEL [--threads N] [--shared] [--deadline] [--no-full] [--repeat R] \
 *      [DELAY_MS...]
 *
 * Inputs are filled with uniform values in [-1, 1) (fixed seed); every input needs a fully
 * known shape. DELAY_MS defaults to 1 2 5 10 20 50 100 200 500 ms after the run started.
 * --shared runs the session on a shared pool of N threads instead of its own. First one
 * full run is timed (--no-full: only prepared, for models that take minutes). Prints one
 * line per delay with the worst and median latency over R runs (default 5) and how many
 * runs ended before they could be stopped, then the worst and median latency over all
 * stopped runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxrun.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

struct shot {
	struct onnxrun_session *s;
	atomic_ullong start;  /* run start, set by the running thread; 0: not yet */
	uint64_t delay_ns;
	uint64_t fired;       /* when cancel was called */
};

static void *canceller(void *arg)
{
	struct shot *sh = arg;
	uint64_t t0;
	while (!(t0 = atomic_load(&sh->start)))
		;
	sleep_until(t0 + sh->delay_ns);
	sh->fired = now_ns();
	onnxrun_session_cancel(sh->s);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int threads = 1, shared = 0, deadline = 0, full = 1, repeat = 5, n_delays = 0;
	double delays[64];
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_pool *pool = NULL;
	struct onnxrun_tensor *in[16] = { 0 };
	uint32_t seed = 12345;
	size_t n_in;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--shared"))
			shared = 1;
		else if (!strcmp(argv[i], "--deadline"))
			deadline = 1;
		else if (!strcmp(argv[i], "--no-full"))
			full = 0;
		else if (!path)
			path = argv[i];
		else if (n_delays < 64)
			delays[n_delays++] = atof(argv[i]);
	}
	if (!path || threads < 1 || repeat < 1 || repeat > 256) {
		fprintf(stderr, "usage: cancel_latency MODEL [--threads N] [--shared] [--deadline] [--no-full] "
		                "[--repeat R] [DELAY_MS...]\n");
		return 2;
	}
	if (!n_delays) {
		const double d[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500 };
		for (n_delays = 0; n_delays < 9; n_delays++)
			delays[n_delays] = d[n_delays];
	}
	if (onnxrun_env_create(NULL, &env) || onnxrun_model_load_file(env, path, &m)) {
		fprintf(stderr, "%s\n", onnxrun_env_error(env));
		return 2;
	}
	if (onnxrun_session_create(m, &s) || onnxrun_session_set_threads(s, threads))
		return 2;
	if (shared && (onnxrun_pool_create(env, threads, &pool) || onnxrun_session_set_pool(s, pool)))
		return 2;
	n_in = onnxrun_model_input_count(m);
	for (size_t i = 0; i < n_in && i < 16; i++) {
		struct onnxrun_value_info info;
		int64_t dims[ONNXRUN_MAX_RANK];
		onnxrun_model_input_info(m, i, &info);
		for (int32_t d = 0; d < info.rank; d++)
			dims[d] = info.dims[d].value;
		if (info.dtype != ONNXRUN_DTYPE_FLOAT ||
		    onnxrun_tensor_create(env, info.dtype, info.rank, dims, &in[i])) {
			fprintf(stderr, "input '%s': only float inputs of known shape\n", info.name);
			return 2;
		}
		for (int64_t k = 0; k < onnxrun_tensor_numel(in[i]); k++) {
			seed = seed * 1664525u + 1013904223u;
			((float *)onnxrun_tensor_data(in[i]))[k] = (float)(seed >> 8) / 8388608.0f - 1.0f;
		}
		onnxrun_session_set_input(s, i, in[i]);
	}
	{ /* one full run: prepared, pages touched, and its time */
		uint64_t t0 = now_ns();
		if (full ? onnxrun_session_run(s) : onnxrun_session_prepare(s)) {
			fprintf(stderr, "%s\n", onnxrun_session_error(s));
			return 2;
		}
		printf("model %s: threads %d%s, %s %.3f ms\n", path, threads, shared ? " (shared pool)" : "",
		       full ? "full run" : "prepare", (double)(now_ns() - t0) / 1e6);
	}
	static uint64_t all[64 * 256];
	uint64_t worst = 0;
	int stopped = 0;
	printf("%10s %12s %12s %9s\n", "delay ms", "worst ms", "median ms", "finished");
	for (int d = 0; d < n_delays; d++) {
		uint64_t lat[256];
		int nl = 0, finished = 0;
		for (int r = 0; r < repeat && r < 256; r++) {
			struct shot sh = { s, 0, (uint64_t)(delays[d] * 1e6), 0 };
			pthread_t th;
			enum onnxrun_status st;
			uint64_t t1;
			if (deadline) {
				onnxrun_session_set_deadline(s, (uint64_t)(delays[d] * 1e3));
				sh.fired = now_ns() + sh.delay_ns; /* approximately: the run starts now */
				st = onnxrun_session_run(s);
				t1 = now_ns();
			} else {
				pthread_create(&th, NULL, canceller, &sh);
				atomic_store(&sh.start, now_ns());
				st = onnxrun_session_run(s);
				t1 = now_ns();
				pthread_join(th, NULL);
				onnxrun_session_clear_cancel(s); /* a request that came after the run ended */
			}
			if (st == ONNXRUN_OK) {
				finished++;
			} else if (st == ONNXRUN_ERROR_CANCELLED) {
				lat[nl++] = t1 > sh.fired ? t1 - sh.fired : 0;
			} else {
				fprintf(stderr, "%s\n", onnxrun_session_error(s));
				return 2;
			}
		}
		onnxrun_session_set_deadline(s, 0);
		qsort(lat, (size_t)nl, sizeof *lat, cmp_u64);
		if (nl && lat[nl - 1] > worst)
			worst = lat[nl - 1];
		memcpy(all + stopped, lat, (size_t)nl * sizeof *lat);
		stopped += nl;
		if (nl)
			printf("%10g %12.3f %12.3f %6d/%d\n", delays[d], (double)lat[nl - 1] / 1e6,
			       (double)lat[nl / 2] / 1e6, finished, repeat);
		else
			printf("%10g %12s %12s %6d/%d\n", delays[d], "-", "-", finished, repeat);
	}
	qsort(all, (size_t)stopped, sizeof *all, cmp_u64);
	printf("over %d stopped runs: worst %.3f ms, median %.3f ms\n", stopped, (double)worst / 1e6,
	       stopped ? (double)all[stopped / 2] / 1e6 : 0.0);
	onnxrun_session_free(s);
	onnxrun_pool_free(pool);
	for (size_t i = 0; i < n_in && i < 16; i++)
		onnxrun_tensor_free(in[i]);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	return 0;
}
