/*
 * peak.c - this machine's limits, measured in the same run as the benchmarks.
 *
 *   cc -O2 -mavx512f -mfma -pthread bench/peak.c -o peak     (AVX-512 machine)
 *   cc -O2 -mavx2 -mfma -pthread bench/peak.c -o peak        (AVX2-only machine)
 *   ./peak [--quick]
 *
 * FP32 FMA peak: NACC independent accumulator chains (acc = acc * a + b), one vector FMA per
 * chain per iteration; NACC = 12 covers latency x throughput on current cores (e.g. 4-cycle
 * latency x 2 FMA pipes = 8 chains in flight). Counted as 2 FLOP per lane per FMA. Reported
 * for AVX-512 (16 lanes) and AVX2 (8 lanes), on 1 thread and on `nproc` threads (each running
 * the same loop); best of 10 repetitions of ~0.1 s each (the best, since other load on the
 * machine can only slow a repetition down).
 *
 * FP64 FMA peak: the same loop on doubles (8 lanes with AVX-512, 4 with AVX2), for the
 * float64 variants of the suite.
 *
 * memcpy bandwidth: memcpy between two 256 MiB buffers (both touched first so no page faults
 * are timed). Convention: bytes moved = read + write = 2 * 256 MiB per copy, in decimal GB/s
 * (1e9 bytes/s). That is the same convention bench/run.sh uses for DepthToSpace
 * (2 * tensor bytes). Write-allocate traffic (the extra read of the destination lines that
 * a cache does without non-temporal stores) is not counted. Best and median of 11 copies,
 * on 1 thread and on `nproc` threads (each copying its own contiguous slice).
 *
 * Cache-resident copy bandwidth, same convention, so that a case whose tensors fit in a cache
 * is not held to the DRAM figure: "L2" copies 256 KiB into 256 KiB per thread (a 512 KiB
 * footprint per thread, inside any current core's private L2), "L3" copies 4 MiB into 4 MiB
 * split between the threads (an 8 MiB footprint, inside a current server's shared L3). Each
 * timed repetition repeats the copy until every thread has moved ~64 MiB (a single 256 KiB
 * copy takes microseconds, shorter than the barriers around it); best of 11 repetitions.
 * The footprints are fixed rather than derived from the cache sizes because a VM can report
 * sizes that are not the host's (this 2-vCPU guest's glibc reports a 508 MiB L3). The sizes
 * the system reports (sysconf: L2 per core, L3 shared; null when unknown) are printed as
 * cache_l2_bytes and cache_l3_bytes: bench/report.py uses them to tell which level a case's
 * tensors fit in.
 *
 * Prints one JSON object on stdout (cpu_s: this process's CPU time, which bench/run.sh uses
 * to tell how busy the machine was with other work meanwhile).
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "probe_pool.h"

#define NACC 12
#define MEMCPY_BYTES (256u << 20)
#define L2_COPY_BYTES (256u << 10) /* per thread, source and destination alike */
#define L3_COPY_BYTES (4u << 20)   /* all threads together, source and destination alike */
#define CACHE_COPY_MOVED (64u << 20) /* bytes each thread copies per timed repetition */

static volatile float g_sink;

#ifdef __AVX512F__
/* Returns FLOPs done. */
static double fma_avx512(long iters)
{
	__m512 acc[NACC];
	const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
	for (int j = 0; j < NACC; j++)
		acc[j] = _mm512_set1_ps((float)j * 0.01f);
	for (long i = 0; i < iters; i++) {
		acc[0] = _mm512_fmadd_ps(acc[0], a, b);
		acc[1] = _mm512_fmadd_ps(acc[1], a, b);
		acc[2] = _mm512_fmadd_ps(acc[2], a, b);
		acc[3] = _mm512_fmadd_ps(acc[3], a, b);
		acc[4] = _mm512_fmadd_ps(acc[4], a, b);
		acc[5] = _mm512_fmadd_ps(acc[5], a, b);
		acc[6] = _mm512_fmadd_ps(acc[6], a, b);
		acc[7] = _mm512_fmadd_ps(acc[7], a, b);
		acc[8] = _mm512_fmadd_ps(acc[8], a, b);
		acc[9] = _mm512_fmadd_ps(acc[9], a, b);
		acc[10] = _mm512_fmadd_ps(acc[10], a, b);
		acc[11] = _mm512_fmadd_ps(acc[11], a, b);
	}
	__m512 s = acc[0];
	for (int j = 1; j < NACC; j++)
		s = _mm512_add_ps(s, acc[j]);
	g_sink = _mm512_reduce_add_ps(s);
	return (double)iters * NACC * 16 * 2;
}
#endif

static double fma_avx2(long iters)
{
	__m256 acc[NACC];
	const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
	for (int j = 0; j < NACC; j++)
		acc[j] = _mm256_set1_ps((float)j * 0.01f);
	for (long i = 0; i < iters; i++) {
		acc[0] = _mm256_fmadd_ps(acc[0], a, b);
		acc[1] = _mm256_fmadd_ps(acc[1], a, b);
		acc[2] = _mm256_fmadd_ps(acc[2], a, b);
		acc[3] = _mm256_fmadd_ps(acc[3], a, b);
		acc[4] = _mm256_fmadd_ps(acc[4], a, b);
		acc[5] = _mm256_fmadd_ps(acc[5], a, b);
		acc[6] = _mm256_fmadd_ps(acc[6], a, b);
		acc[7] = _mm256_fmadd_ps(acc[7], a, b);
		acc[8] = _mm256_fmadd_ps(acc[8], a, b);
		acc[9] = _mm256_fmadd_ps(acc[9], a, b);
		acc[10] = _mm256_fmadd_ps(acc[10], a, b);
		acc[11] = _mm256_fmadd_ps(acc[11], a, b);
	}
	__m256 s = acc[0];
	for (int j = 1; j < NACC; j++)
		s = _mm256_add_ps(s, acc[j]);
	float tmp[8];
	_mm256_storeu_ps(tmp, s);
	g_sink = tmp[0] + tmp[7];
	return (double)iters * NACC * 8 * 2;
}

/* The same chains on doubles (FP64 peak). */
#ifdef __AVX512F__
static double fma64_avx512(long iters)
{
	__m512d acc[NACC];
	const __m512d a = _mm512_set1_pd(0.999999), b = _mm512_set1_pd(1e-6);
	for (int j = 0; j < NACC; j++)
		acc[j] = _mm512_set1_pd((double)j * 0.01);
	for (long i = 0; i < iters; i++) {
		acc[0] = _mm512_fmadd_pd(acc[0], a, b);
		acc[1] = _mm512_fmadd_pd(acc[1], a, b);
		acc[2] = _mm512_fmadd_pd(acc[2], a, b);
		acc[3] = _mm512_fmadd_pd(acc[3], a, b);
		acc[4] = _mm512_fmadd_pd(acc[4], a, b);
		acc[5] = _mm512_fmadd_pd(acc[5], a, b);
		acc[6] = _mm512_fmadd_pd(acc[6], a, b);
		acc[7] = _mm512_fmadd_pd(acc[7], a, b);
		acc[8] = _mm512_fmadd_pd(acc[8], a, b);
		acc[9] = _mm512_fmadd_pd(acc[9], a, b);
		acc[10] = _mm512_fmadd_pd(acc[10], a, b);
		acc[11] = _mm512_fmadd_pd(acc[11], a, b);
	}
	__m512d s = acc[0];
	for (int j = 1; j < NACC; j++)
		s = _mm512_add_pd(s, acc[j]);
	g_sink = (float)_mm512_reduce_add_pd(s);
	return (double)iters * NACC * 8 * 2;
}
#endif

static double fma64_avx2(long iters)
{
	__m256d acc[NACC];
	const __m256d a = _mm256_set1_pd(0.999999), b = _mm256_set1_pd(1e-6);
	for (int j = 0; j < NACC; j++)
		acc[j] = _mm256_set1_pd((double)j * 0.01);
	for (long i = 0; i < iters; i++) {
		acc[0] = _mm256_fmadd_pd(acc[0], a, b);
		acc[1] = _mm256_fmadd_pd(acc[1], a, b);
		acc[2] = _mm256_fmadd_pd(acc[2], a, b);
		acc[3] = _mm256_fmadd_pd(acc[3], a, b);
		acc[4] = _mm256_fmadd_pd(acc[4], a, b);
		acc[5] = _mm256_fmadd_pd(acc[5], a, b);
		acc[6] = _mm256_fmadd_pd(acc[6], a, b);
		acc[7] = _mm256_fmadd_pd(acc[7], a, b);
		acc[8] = _mm256_fmadd_pd(acc[8], a, b);
		acc[9] = _mm256_fmadd_pd(acc[9], a, b);
		acc[10] = _mm256_fmadd_pd(acc[10], a, b);
		acc[11] = _mm256_fmadd_pd(acc[11], a, b);
	}
	__m256d s = acc[0];
	for (int j = 1; j < NACC; j++)
		s = _mm256_add_pd(s, acc[j]);
	double tmp[4];
	_mm256_storeu_pd(tmp, s);
	g_sink = (float)(tmp[0] + tmp[3]);
	return (double)iters * NACC * 4 * 2;
}

/* ---- the jobs the probe's threads run (bench/probe_pool.h) ---- */

typedef double (*fma_fn)(long);

struct job {
	int nthreads;
	int kind; /* 0 = fma, 1 = memcpy */
	fma_fn fma;
	long iters;
	char *dst, *src;
	size_t bytes; /* memcpy: bytes of src (and dst) split between the threads */
	int repeat;   /* memcpy: copies of its slice each thread does per repetition */
};

static void do_work(void *ctx, int id)
{
	struct job *j = ctx;
	if (j->kind == 0) {
		j->fma(j->iters);
	} else {
		size_t chunk = j->bytes / (size_t)j->nthreads;
		size_t off = chunk * (size_t)id;
		size_t n = id == j->nthreads - 1 ? j->bytes - off : chunk;
		for (int r = 0; r < j->repeat; r++)
			memcpy(j->dst + off, j->src + off, n);
	}
}

/* A job and the threads that run it. */
struct pool {
	struct job job;
	struct probe_pool threads;
};

static void pool_start(struct pool *p, int n)
{
	memset(&p->job, 0, sizeof p->job);
	p->job.nthreads = n;
	probe_pool_start(&p->threads, n, do_work, &p->job);
}

static void pool_stop(struct pool *p)
{
	probe_pool_stop(&p->threads);
}

/* Runs the pool's job on all its threads; returns wall seconds. */
static double run_job(struct pool *p)
{
	return probe_pool_run(&p->threads);
}

/* lanes: FMA lanes of f's vectors (16 / 8 for AVX-512 float / double, 8 / 4 for AVX2). */
static double fma_gflops(struct pool *p, fma_fn f, int lanes, int quick)
{
	struct job *j = &p->job;
	j->kind = 0;
	j->fma = f;
	/* calibrate on this thread: aim for ~0.25 s per repetition */
	long it = 1 << 16;
	for (;;) {
		double t = probe_now_s();
		f(it);
		t = probe_now_s() - t;
		if (t > 0.02) {
			it = (long)((double)it * (quick ? 0.03 : 0.1) / t) + 1;
			break;
		}
		it *= 4;
	}
	j->iters = it;
	double flops_per_thread = (double)it * NACC * 2 * lanes;
	double best = 0;
	for (int r = 0; r < (quick ? 3 : 10); r++) {
		double t = run_job(p);
		double g = flops_per_thread * j->nthreads / t / 1e9;
		if (g > best)
			best = g;
	}
	return best;
}

static void memcpy_gbs(struct pool *p, int quick, double *best, double *median)
{
	struct job *j = &p->job;
	j->kind = 1;
	enum { REPS = 11 };
	double t[REPS];
	int reps = quick ? 3 : REPS;
	run_job(p); /* warm */
	for (int r = 0; r < reps; r++)
		t[r] = run_job(p);
	qsort(t, (size_t)reps, sizeof t[0], probe_cmp_double);
	double moved = 2.0 * (double)j->bytes * (double)j->repeat;
	*best = moved / t[0] / 1e9;
	*median = moved / t[reps / 2] / 1e9;
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	int avx512 = 0;
#ifdef __AVX512F__
	__builtin_cpu_init();
	avx512 = __builtin_cpu_supports("avx512f");
#endif
	if (argc > 2 && !strcmp(argv[1], "--probe")) {
		/* --probe T: the widest FMA rate with T threads right now (~0.1 s), for run.sh to
		 * record next to each measurement on a host whose speed drifts */
		int n = atoi(argv[2]);
		struct pool p;
		fma_fn f = fma_avx2;
		double g;
#ifdef __AVX512F__
		if (avx512)
			f = fma_avx512;
#endif
		n = n < 1 ? 1 : n > ncpu ? ncpu : n;
		pool_start(&p, n);
		g = fma_gflops(&p, f, f == fma_avx2 ? 8 : 16, 1);
		pool_stop(&p);
		printf("{\"fma_probe_gflops\":%.2f,\"threads\":%d}\n", g, n);
		return 0;
	}

	char *src = aligned_alloc(4096, MEMCPY_BYTES), *dst = aligned_alloc(4096, MEMCPY_BYTES);
	if (!src || !dst) {
		fprintf(stderr, "peak: out of memory\n");
		return 2;
	}
	memset(src, 1, MEMCPY_BYTES);
	memset(dst, 2, MEMCPY_BYTES);
	/* the cache-sized copies reuse the start of the big buffers (L2: nproc slices of
	 * L2_COPY_BYTES, L3: L3_COPY_BYTES in all) */
	if ((size_t)ncpu * L2_COPY_BYTES > MEMCPY_BYTES || L3_COPY_BYTES > MEMCPY_BYTES) {
		fprintf(stderr, "peak: too many CPUs for the L2 copy buffers\n");
		return 2;
	}

	int counts[2] = {1, ncpu};
	int nc = ncpu > 1 ? 2 : 1;
	double f512[2] = {0, 0}, f256[2] = {0, 0}, mb[2] = {0, 0}, mm[2] = {0, 0};
	double d512[2] = {0, 0}, d256[2] = {0, 0}, l2b[2] = {0, 0}, l2m[2] = {0, 0}, l3b[2] = {0, 0},
	       l3m[2] = {0, 0};
	for (int c = 0; c < nc; c++) {
		struct pool p;
		pool_start(&p, counts[c]);
#ifdef __AVX512F__
		if (avx512) {
			f512[c] = fma_gflops(&p, fma_avx512, 16, quick);
			d512[c] = fma_gflops(&p, fma64_avx512, 8, quick);
		}
#endif
		f256[c] = fma_gflops(&p, fma_avx2, 8, quick);
		d256[c] = fma_gflops(&p, fma64_avx2, 4, quick);
		p.job.src = src;
		p.job.dst = dst;
		p.job.bytes = MEMCPY_BYTES;
		p.job.repeat = 1;
		memcpy_gbs(&p, quick, &mb[c], &mm[c]);
		p.job.bytes = (size_t)counts[c] * L2_COPY_BYTES;
		p.job.repeat = (int)(CACHE_COPY_MOVED / L2_COPY_BYTES);
		memcpy_gbs(&p, quick, &l2b[c], &l2m[c]);
		p.job.bytes = L3_COPY_BYTES;
		p.job.repeat = (int)(CACHE_COPY_MOVED / (L3_COPY_BYTES / (unsigned)counts[c]));
		memcpy_gbs(&p, quick, &l3b[c], &l3m[c]);
		pool_stop(&p);
	}
	printf("{\"threads\":[1,%d],", counts[nc - 1]);
	if (avx512)
		printf("\"fma_avx512_gflops\":[%.2f,%.2f],", f512[0], f512[nc - 1]);
	else
		printf("\"fma_avx512_gflops\":null,");
	printf("\"fma_avx2_gflops\":[%.2f,%.2f],", f256[0], f256[nc - 1]);
	if (avx512)
		printf("\"fma64_avx512_gflops\":[%.2f,%.2f],", d512[0], d512[nc - 1]);
	else
		printf("\"fma64_avx512_gflops\":null,");
	printf("\"fma64_avx2_gflops\":[%.2f,%.2f],", d256[0], d256[nc - 1]);
	printf("\"copy_l2_gbs\":[%.2f,%.2f],\"copy_l2_gbs_median\":[%.2f,%.2f],\"copy_l2_bytes_per_thread\":%u,",
	       l2b[0], l2b[nc - 1], l2m[0], l2m[nc - 1], L2_COPY_BYTES);
	printf("\"copy_l3_gbs\":[%.2f,%.2f],\"copy_l3_gbs_median\":[%.2f,%.2f],\"copy_l3_bytes\":%u,", l3b[0],
	       l3b[nc - 1], l3m[0], l3m[nc - 1], L3_COPY_BYTES);
	printf("\"memcpy_gbs\":[%.2f,%.2f],\"memcpy_gbs_median\":[%.2f,%.2f],", mb[0], mb[nc - 1], mm[0],
	       mm[nc - 1]);
	const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (l2 > 0)
		printf("\"cache_l2_bytes\":%ld,", l2);
	else
		printf("\"cache_l2_bytes\":null,");
	if (l3 > 0)
		printf("\"cache_l3_bytes\":%ld,", l3);
	else
		printf("\"cache_l3_bytes\":null,");
	printf("\"memcpy_buffer_bytes\":%u,\"memcpy_convention\":\"GB/s = 2 * buffer bytes (read + "
	       "write) / seconds / 1e9, best of copies\",\"fma_accumulators\":%d,",
	       MEMCPY_BYTES, NACC);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("\"cpu_s\":%.3f}\n", (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	                                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6);
	free(src);
	free(dst);
	return 0;
}
