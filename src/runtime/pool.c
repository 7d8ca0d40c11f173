/*
 * pool.c - persistent thread pool: a generation counter announces a job; workers spin on
 * it for a short while, then wait on a condition variable. The caller runs share 0 and
 * waits for the others the same way. A shared pool hands itself to one caller at a time,
 * in FIFO order (a queue of waiters under a mutex).
 */
#include "pool.h"
#include "../kernels/relax.h"

#define SPIN_ITERS 4000
/* Inline runs check for a stop at least this often: calls cover more items while each
 * takes under half of it. */
#define INLINE_CHECK_NS 500000u
/* A caller waiting for a shared pool looks at its stop state this often. */
#define QUEUE_CHECK_NS 1000000u

/* Set while this thread runs work items (always on workers), and its tid then: a pool run
 * started from inside an item runs inline instead of waiting for the pool it is part of. */
#if ONNXRUN__OS_THREADS
static _Thread_local int in_item;
static _Thread_local int item_tid;
#else
/* one thread (bare metal): no thread-local storage needed, none is available */
static int in_item;
static int item_tid;
#endif

uint64_t onnxrun__now_ns(void)
{
	return onnxrun__os_now_ns();
}

bool onnxrun__runctl_check(struct onnxrun__runctl *c)
{
	int why = ONNXRUN__STOP_NONE, none = ONNXRUN__STOP_NONE;
	if (!c)
		return false;
	if (atomic_load_explicit(&c->stopped, memory_order_relaxed))
		return true;
	if (atomic_load_explicit(c->cancel, memory_order_relaxed))
		why = ONNXRUN__STOP_CANCEL;
	else if (c->deadline_ns && onnxrun__now_ns() >= c->deadline_ns)
		why = ONNXRUN__STOP_DEADLINE;
	if (!why)
		return false;
	atomic_compare_exchange_strong_explicit(&c->stopped, &none, why, memory_order_relaxed,
	                                        memory_order_relaxed);
	return true;
}

struct worker {
	struct onnxrun__pool *pool;
	int tid;
	struct onnxrun__os_thread th;
};

struct counter {
	_Alignas(64) atomic_llong i;
};

/* A caller waiting for a shared pool (on its own stack). */
struct waiter {
	struct waiter *next;
	bool granted; /* the pool was handed to it */
};

struct onnxrun__pool {
	const struct onnxrun_env *env;
	int threads;
	struct worker *workers;
	onnxrun__os_mutex mu;
	onnxrun__os_cond wake, done;
	atomic_uint gen;     /* bumped once per job (and to quit) */
	atomic_int pending;  /* workers still running the current job */
	atomic_bool quit;
	/* the current job */
	onnxrun__pool_fn fn;
	void *ctx;
	int64_t n;
	int active; /* threads taking part */
	struct counter *next; /* per thread: next unclaimed item of its range */
	struct onnxrun__runctl *ctl; /* checked before each item; may be NULL */
	/* shared pools: who holds the pool, who waits for it */
	bool shared;
	onnxrun__os_mutex qmu;
	onnxrun__os_cond qcv;
	bool busy;
	struct waiter *head, *tail;
};

#if ONNXRUN__OS_THREADS
/* n * t / T without overflow for every n >= 0 and 0 <= t <= T: with n = q T + r,
 * n t / T = q t + r t / T exactly, and r t < T^2 fits. */
static int64_t split_point(int64_t n, int t, int T)
{
	return n / T * t + n % T * t / T;
}

/* Thread t owns items [n*t/T, n*(t+1)/T) and claims them one at a time from the front of
 * its range; when its range is empty it claims what is left of the others' ranges. Each
 * item is run exactly once, unless the run is stopped: then no thread claims another
 * item. Which thread runs an item does not change what it computes. */
static void run_share(struct onnxrun__pool *p, int tid)
{
	struct onnxrun__runctl *ctl = p->ctl;
	for (int k = 0; k < p->active; k++) {
		const int v = (tid + k) % p->active;
		const int64_t e = split_point(p->n, v + 1, p->active);
		for (;;) {
			int64_t i;
			if (ctl && onnxrun__runctl_check(ctl))
				return;
			i = atomic_fetch_add_explicit(&p->next[v].i, 1, memory_order_relaxed);
			if (i >= e)
				break;
			p->fn(p->ctx, tid, i, i + 1);
		}
	}
}

#endif

/* Items [0, n) on this thread. Without a run control, one call; with one, calls that
 * cover more items while each takes under INLINE_CHECK_NS / 2 (fewer when they take over
 * twice that), with the stop check between calls. */
static void run_inline(onnxrun__pool_fn fn, void *ctx, int tid, int64_t n, struct onnxrun__runctl *ctl)
{
	const int saved_in = in_item, saved_tid = item_tid;
	in_item = 1;
	item_tid = tid;
	if (!ctl) {
		fn(ctx, tid, 0, n);
	} else {
		int64_t i = 0, chunk = 1;
		while (i < n && !onnxrun__runctl_check(ctl)) {
			const int64_t e = n - i <= chunk ? n : i + chunk;
			const uint64_t t0 = onnxrun__now_ns();
			uint64_t dt;
			fn(ctx, tid, i, e);
			dt = onnxrun__now_ns() - t0;
			i = e;
			if (dt < INLINE_CHECK_NS / 2 && chunk < (INT64_C(1) << 40))
				chunk *= 2;
			else if (dt > 2 * (uint64_t)INLINE_CHECK_NS && chunk > 1)
				chunk /= 2;
		}
	}
	in_item = saved_in;
	item_tid = saved_tid;
}

#if ONNXRUN__OS_THREADS
static void worker_main(void *arg)
{
	struct worker *w = arg;
	struct onnxrun__pool *p = w->pool;
	unsigned seen = 0;
	in_item = 1;
	item_tid = w->tid;
	for (;;) {
		unsigned g;
		int spins = 0;
		while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen && spins < SPIN_ITERS) {
			onnxrun__cpu_relax();
			spins++;
		}
		if (g == seen) {
			onnxrun__os_mutex_lock(&p->mu);
			while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen)
				onnxrun__os_cond_wait(&p->wake, &p->mu);
			onnxrun__os_mutex_unlock(&p->mu);
		}
		seen = g;
		if (atomic_load_explicit(&p->quit, memory_order_acquire))
			return;
		if (w->tid < p->active)
			run_share(p, w->tid);
		if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
			onnxrun__os_mutex_lock(&p->mu);
			onnxrun__os_cond_signal(&p->done);
			onnxrun__os_mutex_unlock(&p->mu);
		}
	}
}

#endif

static enum onnxrun_status pool_create(const struct onnxrun_env *env, int threads, bool shared,
                                       struct onnxrun__pool **out)
{
	struct onnxrun__pool *p;
	int started = 0;
	if (threads < 1 || !ONNXRUN__OS_THREADS)
		threads = 1;
	if (!(p = onnxrun__calloc(env, 1, sizeof *p)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	p->env = env;
	p->threads = threads;
	p->shared = shared;
	atomic_init(&p->gen, 0);
	atomic_init(&p->pending, 0);
	atomic_init(&p->quit, false);
	if (threads > 1 && (!(p->workers = onnxrun__calloc(env, (size_t)threads, sizeof *p->workers)) ||
	                    !(p->next = onnxrun__calloc(env, (size_t)threads, sizeof *p->next)))) {
		onnxrun__free(env, p->workers);
		onnxrun__free(env, p);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	onnxrun__os_mutex_init(&p->mu);
	onnxrun__os_cond_init(&p->wake);
	onnxrun__os_cond_init(&p->done);
	onnxrun__os_mutex_init(&p->qmu);
	onnxrun__os_cond_init(&p->qcv);
	/* on POSIX, workers start with every signal blocked: handlers run on the caller's threads */
#if ONNXRUN__OS_THREADS
	for (int t = 1; t < threads; t++, started++) {
		p->workers[t].pool = p;
		p->workers[t].tid = t;
		if (onnxrun__os_thread_start(&p->workers[t].th, worker_main, &p->workers[t]))
			break;
	}
#endif
	p->threads = started + 1; /* fewer threads if creation failed: still correct */
	*out = p;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__pool_create(const struct onnxrun_env *env, int threads, struct onnxrun__pool **out)
{
	return pool_create(env, threads, false, out);
}

enum onnxrun_status onnxrun__pool_create_shared(const struct onnxrun_env *env, int threads,
                                                struct onnxrun__pool **out)
{
	return pool_create(env, threads, true, out);
}

void onnxrun__pool_free(struct onnxrun__pool *p)
{
	if (!p)
		return;
	if (ONNXRUN__OS_THREADS && p->threads > 1) {
		onnxrun__os_mutex_lock(&p->mu);
		atomic_store_explicit(&p->quit, true, memory_order_release);
		atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
		onnxrun__os_cond_broadcast(&p->wake);
		onnxrun__os_mutex_unlock(&p->mu);
		for (int t = 1; t < p->threads; t++)
			onnxrun__os_thread_join(&p->workers[t].th);
	}
	onnxrun__os_mutex_destroy(&p->mu);
	onnxrun__os_cond_destroy(&p->wake);
	onnxrun__os_cond_destroy(&p->done);
	onnxrun__os_mutex_destroy(&p->qmu);
	onnxrun__os_cond_destroy(&p->qcv);
	onnxrun__free(p->env, p->workers);
	onnxrun__free(p->env, p->next);
	onnxrun__free(p->env, p);
}

int onnxrun__pool_threads(const struct onnxrun__pool *p)
{
	return p ? p->threads : 1;
}

#if ONNXRUN__OS_THREADS
/* Takes a shared pool, waiting in FIFO order behind the callers already waiting. Returns
 * false, without the pool, when ctl says stop while waiting. */
static bool pool_acquire(struct onnxrun__pool *p, struct onnxrun__runctl *ctl)
{
	struct waiter me = { NULL, false };
	bool got = true;
	onnxrun__os_mutex_lock(&p->qmu);
	if (!p->busy) {
		p->busy = true;
		onnxrun__os_mutex_unlock(&p->qmu);
		return true;
	}
	if (p->tail)
		p->tail->next = &me;
	else
		p->head = &me;
	p->tail = &me;
	while (!me.granted) {
		if (ctl && onnxrun__runctl_check(ctl)) {
			struct waiter **w = &p->head, *prev = NULL;
			while (*w != &me) {
				prev = *w;
				w = &(*w)->next;
			}
			*w = me.next;
			if (p->tail == &me)
				p->tail = prev;
			got = false;
			break;
		}
		if (ctl)
			onnxrun__os_cond_wait_ns(&p->qcv, &p->qmu, QUEUE_CHECK_NS);
		else
			onnxrun__os_cond_wait(&p->qcv, &p->qmu);
	}
	onnxrun__os_mutex_unlock(&p->qmu);
	return got;
}

/* Hands a shared pool to the first waiter, or marks it free. */
static void pool_release(struct onnxrun__pool *p)
{
	onnxrun__os_mutex_lock(&p->qmu);
	if (p->head) {
		struct waiter *w = p->head;
		p->head = w->next;
		if (!p->head)
			p->tail = NULL;
		w->granted = true;
		onnxrun__os_cond_broadcast(&p->qcv);
	} else {
		p->busy = false;
	}
	onnxrun__os_mutex_unlock(&p->qmu);
}

#endif

bool onnxrun__pool_run_ctl(struct onnxrun__pool *p, int max_threads, int64_t n, onnxrun__pool_fn fn, void *ctx,
                           struct onnxrun__runctl *ctl)
{
	int active = onnxrun__pool_threads(p);
	if (max_threads < active)
		active = max_threads;
	if (n < active)
		active = (int)n;
	if (n <= 0)
		return !onnxrun__runctl_check(ctl);
	if (in_item) { /* from inside a work item: this thread is part of a run already */
		run_inline(fn, ctx, item_tid, n, ctl);
		return !onnxrun__runctl_check(ctl);
	}
	if (active <= 1) {
		run_inline(fn, ctx, 0, n, ctl);
		return !onnxrun__runctl_check(ctl);
	}
#if ONNXRUN__OS_THREADS
	int spins = 0;
	if (p->shared && !pool_acquire(p, ctl))
		return false;
	p->fn = fn;
	p->ctx = ctx;
	p->n = n;
	p->active = active;
	p->ctl = ctl;
	for (int t = 0; t < active; t++)
		atomic_store_explicit(&p->next[t].i, split_point(n, t, active), memory_order_relaxed);
	atomic_store_explicit(&p->pending, p->threads - 1, memory_order_relaxed);
	onnxrun__os_mutex_lock(&p->mu);
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
	onnxrun__os_cond_broadcast(&p->wake);
	onnxrun__os_mutex_unlock(&p->mu);
	in_item = 1;
	item_tid = 0;
	run_share(p, 0);
	in_item = 0;
	while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0 && spins < SPIN_ITERS) {
		onnxrun__cpu_relax();
		spins++;
	}
	if (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) {
		onnxrun__os_mutex_lock(&p->mu);
		while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0)
			onnxrun__os_cond_wait(&p->done, &p->mu);
		onnxrun__os_mutex_unlock(&p->mu);
	}
	if (p->shared)
		pool_release(p);
#endif
	return !onnxrun__runctl_check(ctl);
}

void onnxrun__pool_run(struct onnxrun__pool *p, int max_threads, int64_t n, onnxrun__pool_fn fn, void *ctx)
{
	onnxrun__pool_run_ctl(p, max_threads, n, fn, ctx, NULL);
}

/* ---- the public shared pool: a reference-counted shared onnxrun__pool ---- */

struct onnxrun_pool {
	const struct onnxrun_env *env;
	struct onnxrun__pool *pool;
	atomic_int refs; /* the creator's reference plus one per session using it */
};

enum onnxrun_status onnxrun_pool_create(struct onnxrun_env *env, int threads, struct onnxrun_pool **out)
{
	struct onnxrun_pool *sp;
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (!out || threads < 1 || threads > 4096)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "pool: threads must be from 1 to 4096, not %d", threads);
	if (!(sp = onnxrun__calloc(env, 1, sizeof *sp)))
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory creating a pool");
	if (onnxrun__pool_create_shared(env, threads, &sp->pool)) {
		onnxrun__free(env, sp);
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory creating a pool");
	}
	sp->env = env;
	atomic_init(&sp->refs, 1);
	*out = sp;
	return ONNXRUN_OK;
}

void onnxrun__shared_pool_ref(struct onnxrun_pool *sp)
{
	atomic_fetch_add_explicit(&sp->refs, 1, memory_order_relaxed);
}

void onnxrun_pool_free(struct onnxrun_pool *sp)
{
	if (!sp || atomic_fetch_sub_explicit(&sp->refs, 1, memory_order_acq_rel) != 1)
		return;
	onnxrun__pool_free(sp->pool);
	onnxrun__free(sp->env, sp);
}

int onnxrun_pool_threads(const struct onnxrun_pool *sp)
{
	return sp ? sp->pool->threads : 0;
}

struct onnxrun__pool *onnxrun__shared_pool(const struct onnxrun_pool *sp)
{
	return sp ? sp->pool : NULL;
}
