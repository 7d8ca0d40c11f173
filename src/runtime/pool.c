/*
 * pool.c - persistent thread pool: a generation counter announces a job; workers spin on
 * it for a short while, then wait on a condition variable. The caller runs share 0 and
 * waits for the others the same way.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "pool.h"

#define SPIN_ITERS 4000

static _Thread_local struct onnxrun__pool *current;

struct onnxrun__pool *onnxrun__pool_current(void)
{
	return current;
}

void onnxrun__pool_set_current(struct onnxrun__pool *p)
{
	current = p;
}

struct worker {
	struct onnxrun__pool *pool;
	int tid;
	pthread_t th;
};

struct counter {
	_Alignas(64) atomic_llong i;
};

struct onnxrun__pool {
	const struct onnxrun_env *env;
	int threads;
	struct worker *workers;
	pthread_mutex_t mu;
	pthread_cond_t wake, done;
	atomic_uint gen;     /* bumped once per job (and to quit) */
	atomic_int pending;  /* workers still running the current job */
	atomic_bool quit;
	/* the current job */
	onnxrun__pool_fn fn;
	void *ctx;
	int64_t n;
	int active; /* threads taking part */
	struct counter *next; /* per thread: next unclaimed item of its range */
};

/* Thread t owns items [n*t/T, n*(t+1)/T) and claims them one at a time from the front of
 * its range; when its range is empty it claims what is left of the others' ranges. Each
 * item is run exactly once; which thread runs it does not change what it computes. */
static void run_share(struct onnxrun__pool *p, int tid)
{
	for (int k = 0; k < p->active; k++) {
		const int v = (tid + k) % p->active;
		const int64_t e = p->n * (v + 1) / p->active;
		for (;;) {
			int64_t i = atomic_fetch_add_explicit(&p->next[v].i, 1, memory_order_relaxed);
			if (i >= e)
				break;
			p->fn(p->ctx, tid, i, i + 1);
		}
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct onnxrun__pool *p = w->pool;
	unsigned seen = 0;
	for (;;) {
		unsigned g;
		int spins = 0;
		while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen && spins < SPIN_ITERS) {
			cpu_relax();
			spins++;
		}
		if (g == seen) {
			pthread_mutex_lock(&p->mu);
			while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen)
				pthread_cond_wait(&p->wake, &p->mu);
			pthread_mutex_unlock(&p->mu);
		}
		seen = g;
		if (atomic_load_explicit(&p->quit, memory_order_acquire))
			return NULL;
		if (w->tid < p->active)
			run_share(p, w->tid);
		if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->mu);
		}
	}
}

enum onnxrun_status onnxrun__pool_create(const struct onnxrun_env *env, int threads, struct onnxrun__pool **out)
{
	struct onnxrun__pool *p;
	int started = 0;
	if (threads < 1)
		threads = 1;
	if (!(p = onnxrun__calloc(env, 1, sizeof *p)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	p->env = env;
	p->threads = threads;
	atomic_init(&p->gen, 0);
	atomic_init(&p->pending, 0);
	atomic_init(&p->quit, false);
	if (threads > 1 && (!(p->workers = onnxrun__calloc(env, (size_t)threads, sizeof *p->workers)) ||
	                    !(p->next = onnxrun__calloc(env, (size_t)threads, sizeof *p->next)))) {
		onnxrun__free(env, p->workers);
		onnxrun__free(env, p);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	for (int t = 1; t < threads; t++, started++) {
		p->workers[t].pool = p;
		p->workers[t].tid = t;
		if (pthread_create(&p->workers[t].th, NULL, worker_main, &p->workers[t]))
			break;
	}
	p->threads = started + 1; /* fewer threads if creation failed: still correct */
	*out = p;
	return ONNXRUN_OK;
}

void onnxrun__pool_free(struct onnxrun__pool *p)
{
	if (!p)
		return;
	if (p->threads > 1) {
		pthread_mutex_lock(&p->mu);
		atomic_store_explicit(&p->quit, true, memory_order_release);
		atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->mu);
		for (int t = 1; t < p->threads; t++)
			pthread_join(p->workers[t].th, NULL);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	onnxrun__free(p->env, p->workers);
	onnxrun__free(p->env, p->next);
	onnxrun__free(p->env, p);
}

int onnxrun__pool_threads(const struct onnxrun__pool *p)
{
	return p ? p->threads : 1;
}

void onnxrun__pool_run(struct onnxrun__pool *p, int max_threads, int64_t n, onnxrun__pool_fn fn, void *ctx)
{
	int active = onnxrun__pool_threads(p);
	int spins = 0;
	if (max_threads < active)
		active = max_threads;
	if (n < active)
		active = (int)n;
	if (n <= 0)
		return;
	if (active <= 1) {
		fn(ctx, 0, 0, n);
		return;
	}
	p->fn = fn;
	p->ctx = ctx;
	p->n = n;
	p->active = active;
	for (int t = 0; t < active; t++)
		atomic_store_explicit(&p->next[t].i, n * t / active, memory_order_relaxed);
	atomic_store_explicit(&p->pending, p->threads - 1, memory_order_relaxed);
	pthread_mutex_lock(&p->mu);
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	run_share(p, 0);
	while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0 && spins < SPIN_ITERS) {
		cpu_relax();
		spins++;
	}
	if (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) {
		pthread_mutex_lock(&p->mu);
		while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0)
			pthread_cond_wait(&p->done, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
}
