/*
 * dw_traffic.c - what bounds the depthwise case dw_64g (64 channels, 64x64, kernel 4, stride 2,
 * pad 1; a 4 MiB output): times, in one process and alternating run by run, the kernel
 * table's depthwise rows routine (called once per plane, as ops/conv_transpose/depthwise.c
 * does with whole-plane work items) against the memory traffic no implementation avoids:
 * read x once and write y once with whole aligned 64-byte stores ("rw"), write y alone
 * ("write"), or write it with non-temporal stores ("nt"); or against the same calls with the
 * output kept in L2 ("plane": each of the 64 calls computes plane 0, so x is the L1-resident
 * 16 KiB plane and y the L2-resident 64 KiB one: the rows' arithmetic, stores and per-call
 * set-up without the L3 traffic); or against bench/peak.c's L3 copy ("copy": memcpy of a warm
 * 4 MiB buffer into another), the bandwidth bench/report.py holds the case to: its share of
 * that memory bound is 0.6255 * copy / kernel (5247232 tensor bytes against the copy's
 * 2 * 4 MiB). Prints each side's min, quartile
 * and median over the runs and the median of the per-pair ratios B/A. A measurement, not a
 * test; bench/README.md ("Depthwise: rows in output order") has the figures.
 *
 *   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DONNXRUN_BUILD_TESTS=OFF
 *   cmake --build build-bench --target onnxrun_static
 *   cc -O2 -I include -I src bench/dw_traffic.c build-bench/libonnxrun.a -lprotobuf-c -lm \
 *      -lpthread -o bench/build/dw_traffic
 *   bench/build/dw_traffic kernel rw      # A = kernel, B = read x + write y
 *   bench/build/dw_traffic kernel plane   # B = the kernel with its output in L2
 *   bench/build/dw_traffic kernel copy    # B = the L3 copy (bound = 0.6255 * B)
 *   ONNXRUN_KERNEL=avx2 bench/build/dw_traffic kernel write
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels/kernels.h"

static onnxrun__dw_rows_fn rows_fn;

static int64_t cdiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
static int64_t fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static void axis_tables(struct onnxrun__kdw_axis *a, int64_t *buf)
{
	a->start = buf;
	a->qlo = buf + a->s + 1;
	a->qhi = a->qlo + a->s;
	a->kk = a->qhi + a->s;
	a->dl = a->kk + a->k;
	memset(a->start, 0, (size_t)(a->s + 1) * sizeof *a->start);
	for (int64_t k = 0; k < a->k; k++)
		a->start[(k * a->d) % a->s + 1]++;
	for (int64_t r = 0; r < a->s; r++) {
		a->start[r + 1] += a->start[r];
		a->qlo[r] = cdiv(a->pb - r, a->s);
		a->qhi[r] = fdiv(a->out - 1 + a->pb - r, a->s);
	}
	for (int64_t r = 0, fill = 0; r < a->s; r++)
		for (int64_t k = 0; k < a->k; k++)
			if ((k * a->d) % a->s == r) {
				a->kk[fill] = k;
				a->dl[fill++] = (k * a->d - r) / a->s;
			}
}
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
#define C 64
#define IN 64
#define OUT 128
#define NREP 3000
static float *x, *w, *bias, *y, *tmp, *copy_src, *copy_dst;

__attribute__((target("avx512f"))) static void write_only(float *dst, size_t n)
{
	const __m512 v = _mm512_set1_ps(1.0f);
	for (size_t i = 0; i < n; i += 16)
		_mm512_store_ps(dst + i, v);
}
__attribute__((target("avx512f"))) static void write_nt(float *dst, size_t n)
{
	const __m512 v = _mm512_set1_ps(1.0f);
	for (size_t i = 0; i < n; i += 16)
		_mm512_stream_ps(dst + i, v);
	_mm_sfence();
}
/* read x once (1 MiB) and write y (4 MiB): the unavoidable traffic, plain stores */
__attribute__((target("avx512f"))) static void read_write(const float *src, float *dst)
{
	for (int p = 0; p < C * IN; p++) { /* one x row, 4 output rows of 128 */
		__m512 s = _mm512_setzero_ps();
		for (int k = 0; k < IN; k += 16)
			s = _mm512_add_ps(s, _mm512_load_ps(src + p * IN + k));
		float *d = dst + (size_t)p * 2 * OUT;
		for (int k = 0; k < 2 * OUT; k += 16)
			_mm512_store_ps(d + k, s);
	}
}

static void run(const char *n, struct onnxrun__kdw *j)
{
	if (!strcmp(n, "kernel"))
		for (int p = 0; p < C; p++) /* one call per plane, as the op's work items */
			rows_fn(j, p * OUT, (p + 1) * OUT, tmp);
	else if (!strcmp(n, "plane")) /* the same calls, all on plane 0 */
		for (int p = 0; p < C; p++)
			rows_fn(j, 0, OUT, tmp);
	else if (!strcmp(n, "write"))
		write_only(y, (size_t)C * OUT * OUT);
	else if (!strcmp(n, "nt"))
		write_nt(y, (size_t)C * OUT * OUT);
	else if (!strcmp(n, "rw"))
		read_write(x, y);
	else if (!strcmp(n, "copy"))
		memcpy(copy_dst, copy_src, (size_t)4 << 20);
	else {
		fprintf(stderr, "dw_traffic: unknown side %s (kernel, plane, rw, write, nt, copy)\n", n);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *an = argc > 1 ? argv[1] : "kernel", *bn = argc > 2 ? argv[2] : "rw";
	struct onnxrun__kdw j;
	int64_t tabs[2][64];
	x = aligned_alloc(64, sizeof(float) * C * IN * IN);
	w = aligned_alloc(64, sizeof(float) * C * 16);
	bias = aligned_alloc(64, sizeof(float) * C);
	y = aligned_alloc(64, sizeof(float) * C * OUT * OUT);
	tmp = aligned_alloc(64, 65536);
	copy_src = aligned_alloc(64, (size_t)4 << 20);
	copy_dst = aligned_alloc(64, (size_t)4 << 20);
	memset(copy_src, 1, (size_t)4 << 20);
	memset(copy_dst, 0, (size_t)4 << 20);
	srand(1);
	for (int i = 0; i < C * IN * IN; i++)
		x[i] = rand() / (float)RAND_MAX - 0.5f;
	for (int i = 0; i < C * 16; i++)
		w[i] = rand() / (float)RAND_MAX - 0.5f;
	for (int i = 0; i < C; i++)
		bias[i] = rand() / (float)RAND_MAX - 0.5f;
	memset(&j, 0, sizeof j);
	j.x = x, j.w = w, j.bias = bias, j.y = y, j.chans = C;
	for (int a = 0; a < 2; a++) {
		struct onnxrun__kdw_axis *ax = &j.ax[a];
		ax->in = IN, ax->out = OUT, ax->k = 4, ax->s = 2, ax->d = 1, ax->pb = 1;
		axis_tables(ax, tabs[a]);
	}
	static double to[NREP], tn[NREP];
	int nrep = NREP;
	rows_fn = onnxrun__kernels_current()->dw_rows;
	for (int i = 0; i < 200; i++) {
		run(an, &j);
		run(bn, &j);
	}
	for (int r = 0; r < nrep; r++) {
		double t0 = now();
		run(an, &j);
		double t1 = now();
		run(bn, &j);
		double t2 = now();
		to[r] = (t1 - t0) * 1e3, tn[r] = (t2 - t1) * 1e3;
	}
	double ratio[NREP];
	for (int r = 0; r < nrep; r++)
		ratio[r] = tn[r] / to[r];
	qsort(to, nrep, sizeof(double), cmpd);
	qsort(tn, nrep, sizeof(double), cmpd);
	qsort(ratio, nrep, sizeof(double), cmpd);
	printf("%s/%s: A min %.4f p25 %.4f med %.4f | B min %.4f p25 %.4f med %.4f | B/A med %.3f (p25 %.3f p75 %.3f)\n", an, bn,
	       to[0], to[nrep / 4], to[nrep / 2], tn[0], tn[nrep / 4], tn[nrep / 2], ratio[nrep / 2], ratio[nrep / 4],
	       ratio[3 * nrep / 4]);
	return 0;
}
