/*
 * probe_pool.h - the threads of the machine probes (bench/peak.c, bench/case_probe.c): n
 * threads, the caller being thread 0, run one work function between two barriers, and
 * probe_pool_run times that on the calling thread (the second barrier waits for the slowest
 * thread, so the time is the whole pass). Header-only: each probe is one file built by one
 * `cc` line (bench/run.sh, bench/case_probe.sh).
 */
#ifndef ONNXRUN_BENCH_PROBE_POOL_H
#define ONNXRUN_BENCH_PROBE_POOL_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* One thread's part of a pass: ctx is the pool's, id in [0, nthreads). */
typedef void (*probe_work_fn)(void *ctx, int id);

struct probe_worker {
	struct probe_pool *pool;
	int id;
	pthread_t th;
};

struct probe_pool {
	pthread_barrier_t start, stop;
	int nthreads, quit;
	probe_work_fn work;
	void *ctx;
	struct probe_worker *w; /* w[1 .. nthreads-1]; w[0] unused (the caller) */
};

static inline double probe_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort comparator for doubles, ascending */
static inline int probe_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void *probe_worker_main(void *arg)
{
	struct probe_worker *w = arg;
	struct probe_pool *p = w->pool;
	for (;;) {
		pthread_barrier_wait(&p->start);
		if (p->quit)
			return NULL;
		p->work(p->ctx, w->id);
		pthread_barrier_wait(&p->stop);
	}
}

/* Starts n - 1 workers (n >= 1) waiting for passes of work(ctx, id); a probe that cannot
 * have its threads has nothing to measure, so it exits saying so. */
static inline void probe_pool_start(struct probe_pool *p, int n, probe_work_fn work, void *ctx)
{
	p->nthreads = n;
	p->quit = 0;
	p->work = work;
	p->ctx = ctx;
	p->w = calloc((size_t)n, sizeof *p->w);
	if (!p->w) {
		fprintf(stderr, "probe: out of memory\n");
		exit(2);
	}
	pthread_barrier_init(&p->start, NULL, (unsigned)n);
	pthread_barrier_init(&p->stop, NULL, (unsigned)n);
	for (int i = 1; i < n; i++) {
		p->w[i].pool = p;
		p->w[i].id = i;
		if (pthread_create(&p->w[i].th, NULL, probe_worker_main, &p->w[i]) != 0) {
			fprintf(stderr, "probe: cannot start thread %d of %d\n", i + 1, n);
			exit(2);
		}
	}
}

/* One pass on every thread; returns its wall seconds, timed on the calling thread. */
static inline double probe_pool_run(struct probe_pool *p)
{
	pthread_barrier_wait(&p->start);
	double t = probe_now_s();
	p->work(p->ctx, 0);
	pthread_barrier_wait(&p->stop);
	return probe_now_s() - t;
}

static inline void probe_pool_stop(struct probe_pool *p)
{
	p->quit = 1;
	pthread_barrier_wait(&p->start);
	for (int i = 1; i < p->nthreads; i++)
		pthread_join(p->w[i].th, NULL);
	pthread_barrier_destroy(&p->start);
	pthread_barrier_destroy(&p->stop);
	free(p->w);
}

#endif
