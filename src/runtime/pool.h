/*
 * pool.h - a persistent thread pool for the ops: the caller plus threads-1 workers run a
 * range of work items split statically (thread t starts on items [n*t/T, n*(t+1)/T)); a
 * thread that runs out takes the items still unclaimed in the others' ranges, so a
 * descheduled thread does not hold up the run. Items must compute the same thing whichever
 * thread runs them (per-thread scratch only), which keeps results bitwise identical for
 * every thread count. Workers spin briefly, then sleep.
 */
#ifndef ONNXRUN_RUNTIME_POOL_H
#define ONNXRUN_RUNTIME_POOL_H

#include "runtime.h"

struct onnxrun__pool;

/* fn runs items [begin, end) on thread `tid` (0 = the caller); tid indexes per-thread
 * scratch only. */
typedef void (*onnxrun__pool_fn)(void *ctx, int tid, int64_t begin, int64_t end);

/* A pool of `threads` threads in all (threads - 1 are created). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__pool_create(const struct onnxrun_env *env, int threads,
                                                         struct onnxrun__pool **out);
/* Stops and joins the workers; NULL-safe. */
ONNXRUN__HIDDEN void onnxrun__pool_free(struct onnxrun__pool *p);
/* Threads in the pool (1 for NULL). */
ONNXRUN__HIDDEN int onnxrun__pool_threads(const struct onnxrun__pool *p);
/* Runs fn over items [0, n) on min(threads, max_threads, n) threads and returns when all are
 * done. p may be NULL (runs inline). Not reentrant: one run at a time per pool. */
ONNXRUN__HIDDEN void onnxrun__pool_run(struct onnxrun__pool *p, int max_threads, int64_t n,
                                       onnxrun__pool_fn fn, void *ctx);

/* The pool of the session running on this thread (set around each op's compute by the
 * session's run loop; NULL outside of it or for one thread). */
ONNXRUN__HIDDEN struct onnxrun__pool *onnxrun__pool_current(void);
ONNXRUN__HIDDEN void onnxrun__pool_set_current(struct onnxrun__pool *p);

#endif
