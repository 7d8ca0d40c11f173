/*
 * test_soak.c - many sessions under load for a while: worker threads each run sessions of
 * the example upsampler (ConvTranspose, DepthToSpace, ConvTranspose) on random inputs with
 * random thread counts, on their own threads or on one of two shared pools that a churn
 * thread frees and recreates; outputs bound to caller buffers or not; random deadlines;
 * a canceller thread cancels random sessions (and withdraws some requests); sessions are
 * freed and recreated every few runs. Every completed run must be bitwise equal to the
 * reference (a one-thread session, no stops, computed first); every other run must end
 * CANCELLED. Resident memory and open file descriptors must stay flat.
 *
 * Duration: ONNXRUN_SOAK_SECONDS (default 3: the CTest and TSan runs), or --seconds N.
 * A long run: ONNXRUN_SOAK_SECONDS=1800 build/tests/test_soak (docs/security.md has the
 * figures of one). Seed: ONNXRUN_SOAK_SEED (default 30), printed on failure.
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
#ifndef _WIN32
#include <dirent.h>
#include <unistd.h>
#endif

#include <cmocka.h>

#include "onnxrun.h"
#include "platform/platform.h"

#define MODEL ONNXRUN_MODELS_DIR "/upsampler/model.onnx"
#define WORKERS 4
#define INPUTS 6

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

static double soak_seconds = 3.0;
static uint64_t soak_seed = 30;

/* xorshift64* */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static struct {
	struct onnxrun_env *env;
	struct onnxrun_model *model;
	struct onnxrun_tensor *in[INPUTS];
	void *want[INPUTS]; /* reference outputs */
	size_t out_bytes;
	void *buf[WORKERS];                   /* each worker's output buffer */
	struct onnxrun_tensor *bound[WORKERS]; /* wrapping it (wrapped before the workers start:
	                                        * tensor_wrap writes the env's error message) */
	int64_t out_dims[4];
	/* the shared pools (replaced by the churn thread; set_pool is called under pool_mu) */
	pthread_mutex_t pool_mu;
	struct onnxrun_pool *pools[2];
	/* each worker's current session, for the canceller (under slot_mu) */
	pthread_mutex_t slot_mu;
	struct onnxrun_session *slot[WORKERS];
	atomic_int stop;
	/* figures */
	atomic_llong runs, ok, cancelled, bound_runs, sessions, pools_made, cancels_sent, withdrawn;
	/* 1 + a reference run's microseconds / 1000: cancel intervals and deadlines are scaled by
	 * it, so that where runs are slow (an emulator, a sanitizer) some still complete while
	 * others are stopped, as on a native build (pace 1) */
	unsigned pace;
	atomic_int failed;
	char failure[512];
} g;

static void fail_once(const char *fmt, ...)
{
	va_list ap;
	if (atomic_exchange(&g.failed, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(g.failure, sizeof g.failure, fmt, ap);
	va_end(ap);
	atomic_store(&g.stop, 1);
}

/* Resident bytes (Linux), -1 elsewhere. */
static long long resident_bytes(void)
{
	long long pages, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld %lld", &pages, &res) != 2)
		res = -1;
	fclose(f);
#ifndef _WIN32
	return res < 0 ? -1 : res * (long long)sysconf(_SC_PAGESIZE);
#else
	return -1;
#endif
}

/* Open file descriptors (Linux), -1 elsewhere. */
static int open_fds(void)
{
#ifndef _WIN32
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the listing's own descriptor */
#else
	return -1;
#endif
}

static void sleep_us(unsigned us)
{
	struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 };
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	const int id = (int)(intptr_t)arg;
	uint64_t s = soak_seed * 1000003u + (uint64_t)id + 1;
	struct onnxrun_tensor *bound = g.bound[id];
	while (!atomic_load(&g.stop)) {
		struct onnxrun_session *ss;
		const int runs = 1 + (int)(rnd(&s) % 8);
		if (onnxrun_session_create(g.model, &ss) != ONNXRUN_OK) {
			fail_once("worker %d: session create failed", id);
			break;
		}
		atomic_fetch_add(&g.sessions, 1);
		if (rnd(&s) % 2) {
			pthread_mutex_lock(&g.pool_mu);
			if (onnxrun_session_set_pool(ss, g.pools[rnd(&s) % 2]))
				fail_once("worker %d: set_pool: %s", id, onnxrun_session_error(ss));
			pthread_mutex_unlock(&g.pool_mu);
		} else if (onnxrun_session_set_threads(ss, 1 + (int)(rnd(&s) % 2))) {
			fail_once("worker %d: set_threads: %s", id, onnxrun_session_error(ss));
		}
		pthread_mutex_lock(&g.slot_mu);
		g.slot[id] = ss;
		pthread_mutex_unlock(&g.slot_mu);
		for (int r = 0; r < runs && !atomic_load(&g.stop); r++) {
			const int k = (int)(rnd(&s) % INPUTS);
			const bool bind = rnd(&s) % 2;
			const uint64_t d = rnd(&s) % 4;
			const struct onnxrun_tensor *y = NULL;
			enum onnxrun_status st;
			if (onnxrun_session_set_input(ss, 0, g.in[k]) ||
			    onnxrun_session_set_output(ss, 0, bind ? bound : NULL) ||
			    onnxrun_session_set_deadline(ss, d == 0 ? (50 + rnd(&s) % 2000) * g.pace : d == 1 ? UINT64_MAX : 0)) {
				fail_once("worker %d: setup: %s", id, onnxrun_session_error(ss));
				break;
			}
			st = onnxrun_session_run(ss);
			atomic_fetch_add(&g.runs, 1);
			atomic_fetch_add(&g.bound_runs, bind);
			if (st == ONNXRUN_ERROR_CANCELLED) {
				atomic_fetch_add(&g.cancelled, 1);
				continue;
			}
			if (st != ONNXRUN_OK) {
				fail_once("worker %d (seed %llu): run: %s", id, (unsigned long long)soak_seed,
				          onnxrun_session_error(ss));
				break;
			}
			if (onnxrun_session_output(ss, 0, &y) || (bind && y != bound) ||
			    onnxrun_tensor_nbytes(y) != g.out_bytes ||
			    memcmp(onnxrun_tensor_data(y), g.want[k], g.out_bytes)) {
				fail_once("worker %d (seed %llu): input %d%s: output differs from the reference", id,
				          (unsigned long long)soak_seed, k, bind ? " (bound)" : "");
				break;
			}
			atomic_fetch_add(&g.ok, 1);
		}
		pthread_mutex_lock(&g.slot_mu);
		g.slot[id] = NULL;
		pthread_mutex_unlock(&g.slot_mu);
		onnxrun_session_free(ss);
	}
	return NULL;
}

/* Cancels a random worker's session every 0-2 ms (times the pace); withdraws one request in
 * eight. */
static void *canceller(void *arg)
{
	uint64_t s = soak_seed * 7919u + 17;
	(void)arg;
	while (!atomic_load(&g.stop)) {
		const int id = (int)(rnd(&s) % WORKERS);
		const bool withdraw = rnd(&s) % 8 == 0;
		pthread_mutex_lock(&g.slot_mu);
		if (g.slot[id]) {
			if (withdraw) {
				onnxrun_session_clear_cancel(g.slot[id]);
				atomic_fetch_add(&g.withdrawn, 1);
			} else {
				onnxrun_session_cancel(g.slot[id]);
				atomic_fetch_add(&g.cancels_sent, 1);
			}
		}
		pthread_mutex_unlock(&g.slot_mu);
		sleep_us((unsigned)(rnd(&s) % 2000) * g.pace);
	}
	return NULL;
}

/* Replaces a shared pool (1-3 threads) every 5-50 ms; sessions still on the old one keep it
 * alive until they are freed. */
static void *churn(void *arg)
{
	uint64_t s = soak_seed * 104729u + 5;
	(void)arg;
	while (!atomic_load(&g.stop)) {
		struct onnxrun_pool *fresh, *old;
		const int i = (int)(rnd(&s) % 2);
		sleep_us(5000 + (unsigned)(rnd(&s) % 45000));
		if (onnxrun_pool_create(g.env, 1 + (int)(rnd(&s) % 3), &fresh)) {
			fail_once("pool create: %s", onnxrun_env_error(g.env));
			break;
		}
		atomic_fetch_add(&g.pools_made, 1);
		pthread_mutex_lock(&g.pool_mu);
		old = g.pools[i];
		g.pools[i] = fresh;
		pthread_mutex_unlock(&g.pool_mu);
		onnxrun_pool_free(old);
	}
	return NULL;
}

static double now_s(void)
{
	return (double)onnxrun__os_now_ns() * 1e-9;
}

static void test_soak(void **state)
{
	pthread_t w[WORKERS], c, ch;
	uint64_t s = soak_seed;
	long long rss0 = -1, rss1;
	int fds0 = -1, fds1;
	double t0, warm;
	const int64_t xd[4] = { 1, 3, 32, 32 };
	(void)state;
	memset(&g, 0, sizeof g);
	pthread_mutex_init(&g.pool_mu, NULL);
	pthread_mutex_init(&g.slot_mu, NULL);
	assert_int_equal(onnxrun_env_create(NULL, &g.env), ONNXRUN_OK);
	if (onnxrun_model_load_file(g.env, MODEL, &g.model) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(g.env));
	/* inputs and their references: a one-thread session, no deadline, nothing bound */
	{
		struct onnxrun_session *ref;
		const struct onnxrun_tensor *y;
		double ref_s = 0;
		assert_int_equal(onnxrun_session_create(g.model, &ref), ONNXRUN_OK);
		for (int k = 0; k < INPUTS; k++) {
			assert_int_equal(onnxrun_tensor_create(g.env, ONNXRUN_DTYPE_FLOAT, 4, xd, &g.in[k]), ONNXRUN_OK);
			for (int64_t i = 0; i < onnxrun_tensor_numel(g.in[k]); i++)
				((float *)onnxrun_tensor_data(g.in[k]))[i] = (float)(rnd(&s) >> 40) / 16777216.0f * 4.0f - 2.0f;
			assert_int_equal(onnxrun_session_set_input(ref, 0, g.in[k]), ONNXRUN_OK);
			ref_s -= now_s();
			assert_int_equal(onnxrun_session_run(ref), ONNXRUN_OK);
			ref_s += now_s();
			assert_int_equal(onnxrun_session_output(ref, 0, &y), ONNXRUN_OK);
			g.out_bytes = onnxrun_tensor_nbytes(y);
			memcpy(g.out_dims, onnxrun_tensor_dims(y), sizeof g.out_dims);
			g.want[k] = malloc(g.out_bytes);
			memcpy(g.want[k], onnxrun_tensor_data(y), g.out_bytes);
		}
		onnxrun_session_free(ref);
		g.pace = 1 + (unsigned)(ref_s / INPUTS * 1e3);
	}
	for (int i = 0; i < WORKERS; i++) {
		assert_non_null(g.buf[i] = onnxrun__os_aligned_alloc(64, g.out_bytes));
		assert_int_equal(onnxrun_tensor_wrap(g.env, ONNXRUN_DTYPE_FLOAT, 4, g.out_dims, g.buf[i], g.out_bytes,
		                                     &g.bound[i]), ONNXRUN_OK);
	}
	assert_int_equal(onnxrun_pool_create(g.env, 2, &g.pools[0]), ONNXRUN_OK);
	assert_int_equal(onnxrun_pool_create(g.env, 3, &g.pools[1]), ONNXRUN_OK);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&w[i], NULL, worker, (void *)(intptr_t)i), 0);
	assert_int_equal(pthread_create(&c, NULL, canceller, NULL), 0);
	assert_int_equal(pthread_create(&ch, NULL, churn, NULL), 0);
	/* the baseline after a warm-up (a tenth of the time, at most 60 s): allocator arenas
	 * and thread stacks have reached their working size by then */
	t0 = now_s();
	warm = soak_seconds / 10 < 60 ? soak_seconds / 10 : 60;
	while (!atomic_load(&g.stop) && now_s() - t0 < soak_seconds) {
		if (rss0 < 0 && now_s() - t0 >= warm) {
			rss0 = resident_bytes();
			fds0 = open_fds();
		}
		sleep_us(20000);
	}
	atomic_store(&g.stop, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(c, NULL);
	pthread_join(ch, NULL);
	rss1 = resident_bytes();
	fds1 = open_fds();
	print_message("soak %.0f s (seed %llu, pace %u): %lld runs, %lld complete and bitwise equal (%lld with bound outputs "
	              "in all), %lld cancelled (%lld cancels sent, %lld withdrawn); %lld sessions, %lld pools made; "
	              "RSS %lld -> %lld KiB, open fds %d -> %d\n",
	              soak_seconds, (unsigned long long)soak_seed, g.pace, (long long)g.runs, (long long)g.ok,
	              (long long)g.bound_runs, (long long)g.cancelled, (long long)g.cancels_sent,
	              (long long)g.withdrawn, (long long)g.sessions, (long long)g.pools_made, rss0 >> 10,
	              rss1 >> 10, fds0, fds1);
	if (atomic_load(&g.failed))
		fail_msg("%s", g.failure);
	assert_true(g.ok > 0);
	assert_true(g.cancelled > 0);
	assert_int_equal(g.ok + g.cancelled, g.runs);
	if (fds0 >= 0)
		assert_int_equal(fds1, fds0);
/* Not with the sanitizers (their quarantine and shadow memory grow on their own), nor under
 * an emulator (qemu-user's resident memory is mostly its translated code, which grows as
 * new paths run: 38 -> 76 MiB in 3 s on aarch64). Leaks there are the native runs' job. */
#if !defined(SANITIZED) && !defined(ONNXRUN_CLI_EMULATOR)
	if (rss0 >= 0 && rss1 - rss0 > (32ll << 20))
		fail_msg("resident memory grew by %lld MiB (from %lld MiB)", (rss1 - rss0) >> 20, rss0 >> 20);
#endif
	onnxrun_pool_free(g.pools[0]);
	onnxrun_pool_free(g.pools[1]);
	for (int i = 0; i < WORKERS; i++) {
		onnxrun_tensor_free(g.bound[i]);
		onnxrun__os_aligned_free(g.buf[i]);
	}
	for (int k = 0; k < INPUTS; k++) {
		onnxrun_tensor_free(g.in[k]);
		free(g.want[k]);
	}
	onnxrun_model_free(g.model);
	onnxrun_env_free(g.env);
	pthread_mutex_destroy(&g.pool_mu);
	pthread_mutex_destroy(&g.slot_mu);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak),
	};
	const char *e = getenv("ONNXRUN_SOAK_SECONDS");
	if (e && atof(e) > 0)
		soak_seconds = atof(e);
	if ((e = getenv("ONNXRUN_SOAK_SEED")))
		soak_seed = strtoull(e, NULL, 10);
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--seconds") && atof(argv[i + 1]) > 0)
			soak_seconds = atof(argv[i + 1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
