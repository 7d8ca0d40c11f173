/*
 * pool.h - a persistent thread pool for the ops: the caller plus threads-1 workers run a
 * range of work items split statically (thread t starts on items [n*t/T, n*(t+1)/T)); a
 * thread that runs out takes the items still unclaimed in the others' ranges, so a
 * descheduled thread does not hold up the run. Items must compute the same thing whichever
 * thread runs them and however the items are grouped into calls (per-thread scratch only),
 * which keeps results bitwise identical for every thread count. Workers spin briefly, then
 * sleep; they block every signal, so a process's signal handlers run on its own threads.
 *
 * Stopping: a session run publishes a run control (onnxrun__runctl) that every pool run
 * checks before each work item (and, for a shared pool, while waiting for it). Once the
 * session's cancel request is seen or its deadline passes, no further item starts; the
 * items already running finish, and the session discards what the op computed.
 *
 * Sharing (onnxrun_pool, public): several sessions may run ops on one pool from their own
 * threads. The pool runs one op at a time: a caller waits for it in FIFO order. Items
 * compute the same thing on whichever thread runs them, so sharing does not change bits.
 */
#ifndef ONNXRUN_RUNTIME_POOL_H
#define ONNXRUN_RUNTIME_POOL_H

#include <stdatomic.h>

#include "runtime.h"

struct onnxrun__pool;

/* fn runs items [begin, end) on thread `tid` (0 = the caller); tid indexes per-thread
 * scratch only. */
typedef void (*onnxrun__pool_fn)(void *ctx, int tid, int64_t begin, int64_t end);

/* Why a run stopped (onnxrun__runctl.stopped). */
enum {
	ONNXRUN__STOP_NONE = 0,
	ONNXRUN__STOP_CANCEL = 1,   /* the session's cancel request */
	ONNXRUN__STOP_DEADLINE = 2, /* the run's deadline passed */
	ONNXRUN__STOP_MEASURE = 3,  /* prepare's workspace measuring pass: ops skip their work */
};

/* The stop state of one session run, shared by every thread working for it. */
struct onnxrun__runctl {
	atomic_int *cancel;   /* the session's request (onnxrun_session_cancel); never NULL */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC time the run must stop at; 0: none */
	atomic_int stopped;   /* ONNXRUN__STOP_*: the first reason a check saw */
};

/* True when the run must stop: already stopped, cancel requested, or deadline passed (the
 * first reason seen is recorded in c->stopped). c may be NULL (never stops). */
ONNXRUN__HIDDEN bool onnxrun__runctl_check(struct onnxrun__runctl *c);
/* CLOCK_MONOTONIC in nanoseconds. */
ONNXRUN__HIDDEN uint64_t onnxrun__now_ns(void);

/* A pool of `threads` threads in all (threads - 1 are created). shared: callers on several
 * threads may run on it at once (they take turns, one op at a time). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__pool_create(const struct onnxrun_env *env, int threads,
                                                         struct onnxrun__pool **out);
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__pool_create_shared(const struct onnxrun_env *env, int threads,
                                                                struct onnxrun__pool **out);
/* Stops and joins the workers; NULL-safe. No run may be in progress. */
ONNXRUN__HIDDEN void onnxrun__pool_free(struct onnxrun__pool *p);
/* Threads in the pool (1 for NULL). */
ONNXRUN__HIDDEN int onnxrun__pool_threads(const struct onnxrun__pool *p);
/* Runs fn over items [0, n) on min(threads, max_threads, n) threads and returns when all are
 * done. p may be NULL (runs inline). A private pool runs one job at a time; a shared one
 * queues its callers. Called from inside a work item, it runs the items inline on the
 * calling thread (with that thread's tid). */
ONNXRUN__HIDDEN void onnxrun__pool_run(struct onnxrun__pool *p, int max_threads, int64_t n,
                                       onnxrun__pool_fn fn, void *ctx);
/* onnxrun__pool_run with a run control (NULL: never stops), checked before each item (and
 * between inline calls, which then grow from one item while each takes under 0.25 ms): once
 * it says stop, no further item starts. Returns false when the run was stopped (some items
 * may not have run). The ops reach it through onnxrun__op_parallel and
 * onnxrun_op_parallel_for with the session's pool and run control. */
ONNXRUN__HIDDEN bool onnxrun__pool_run_ctl(struct onnxrun__pool *p, int max_threads, int64_t n,
                                           onnxrun__pool_fn fn, void *ctx, struct onnxrun__runctl *ctl);

/* The public pool's engine (NULL for NULL), and a new reference to it (dropped with
 * onnxrun_pool_free). */
ONNXRUN__HIDDEN struct onnxrun__pool *onnxrun__shared_pool(const struct onnxrun_pool *sp);
ONNXRUN__HIDDEN void onnxrun__shared_pool_ref(struct onnxrun_pool *sp);

#endif
