/*
 * case_probe.c - the machine's own time for one suite case's unavoidable work: its FLOPs as
 * vector FMAs at the FMA probe's rate (bench/peak.c's loop: NACC independent accumulator
 * chains) and its tensors' memory traffic (read X, W and B once, write Y once, whole aligned
 * 64-byte lines), nothing else: no packing, no staging, no partial sums, no second pass.
 * bench/case_probe.sh runs it against onnxrun_bench case by case; where onnxrun's time is
 * close to this probe's "both", what bounds the case is the machine, not onnxrun's data flow.
 *
 *   cc -O2 -mavx512f -mfma -pthread bench/case_probe.c -o case_probe   (or -mavx2 -mfma)
 *   ./case_probe --flops F --read BYTES --write BYTES [--f64] [--case NAME] [--threads T] [--runs R]
 *                [--warmup W] [--min-time-ms MS] [--warmup-ms MS] [--mode both|fma|traffic]
 *
 * Modes: "fma" does only the FMAs (FLOPs / (2 * lanes) vector FMAs), "traffic" only the
 * loads and stores, "both" interleaves them finely: the work is cut into steps of a few
 * lines, each step doing its share of loads, stores and FMA groups (Bresenham counts, no
 * divisions), so an ideal implementation's overlap of arithmetic and memory is what is
 * timed. Loaded lines feed the accumulators (so they are not optimized away); stores write
 * accumulators. Threads split every stream evenly (contiguous slices, like a static
 * schedule); each timed run is one pass between two barriers, the buffers warm from the
 * previous pass like a session's tensors between runs. Like onnxrun_bench: at least W warm-up
 * runs and WMS ms of them, then at least R timed runs and MS ms of them. Prints one JSON
 * object: the median and minimum of the timed runs in milliseconds (and NAME as "case", for
 * bench/run.sh; `bench/report.py probe-args META.json` gives a case's other arguments).
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_pool.h"

#define NACC 12
#define LINE 64
#define LINES_PER_STEP 4

#if defined(__AVX512F__)
#define LANES32 16
#define LANES64 8
#define VF __m512
#define VD __m512d
#define FMA_F(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FMA_D(a, b, c) _mm512_fmadd_pd(a, b, c)
#define SET1_F _mm512_set1_ps
#define SET1_D _mm512_set1_pd
#define LOAD_F(p) _mm512_load_ps(p)
#define LOAD_D(p) _mm512_load_pd(p)
#define STORE_F(p, v) _mm512_store_ps(p, v)
#define STORE_D(p, v) _mm512_store_pd(p, v)
#define VEC_PER_LINE 1
#elif defined(__AVX2__) && defined(__FMA__)
#define LANES32 8
#define LANES64 4
#define VF __m256
#define VD __m256d
#define FMA_F(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FMA_D(a, b, c) _mm256_fmadd_pd(a, b, c)
#define SET1_F _mm256_set1_ps
#define SET1_D _mm256_set1_pd
#define LOAD_F(p) _mm256_load_ps(p)
#define LOAD_D(p) _mm256_load_pd(p)
#define STORE_F(p, v) _mm256_store_ps(p, v)
#define STORE_D(p, v) _mm256_store_pd(p, v)
#define VEC_PER_LINE 2
#else
#error "case_probe needs AVX-512 or AVX2 with FMA (-mavx512f -mfma or -mavx2 -mfma)"
#endif

enum mode { MODE_BOTH, MODE_FMA, MODE_TRAFFIC };

/* One thread's share: its lines of the read and write buffers and its FMA groups. */
struct share {
	const char *rd;
	char *wr;
	int64_t nread, nwrite, ngroups; /* lines, lines, groups of NACC vector FMAs */
};

struct job {
	int nthreads, f64;
	enum mode mode;
	struct share *shares;
	double sink;
};

/* Spreads n items over `steps` steps: count for this step, error carried (no divisions). */
struct spread {
	int64_t base, rem, err, steps;
};
static void spread_init(struct spread *s, int64_t n, int64_t steps)
{
	s->steps = steps;
	s->base = steps ? n / steps : 0;
	s->rem = steps ? n % steps : 0;
	s->err = 0;
}
static int64_t spread_next(struct spread *s)
{
	s->err += s->rem;
	if (s->err >= s->steps) {
		s->err -= s->steps;
		return s->base + 1;
	}
	return s->base;
}

/* The same pass, once per element type: TYPE vectors V with FMA/LOAD/STORE macros. */
#define DEFINE_PASS(name, T, V, FMA, SET1, LOAD, STORE)                                          \
	static double name(const struct share *sh, enum mode mode)                              \
	{                                                                                        \
		V acc[NACC];                                                                     \
		const V a = SET1((T)0.9999), b = SET1((T)1e-4);                                   \
		for (int i = 0; i < NACC; i++)                                                   \
			acc[i] = SET1((T)i);                                                     \
		int64_t nread = mode == MODE_FMA ? 0 : sh->nread;                               \
		int64_t nwrite = mode == MODE_FMA ? 0 : sh->nwrite;                             \
		int64_t ngroups = mode == MODE_TRAFFIC ? 0 : sh->ngroups;                       \
		int64_t lines = nread > nwrite ? nread : nwrite;                                 \
		int64_t steps = (lines + LINES_PER_STEP - 1) / LINES_PER_STEP;                   \
		if (steps == 0)                                                                  \
			steps = ngroups ? 1 : 0;                                                 \
		struct spread sr, sw, sg;                                                        \
		spread_init(&sr, nread, steps);                                                  \
		spread_init(&sw, nwrite, steps);                                                 \
		spread_init(&sg, ngroups, steps);                                                \
		const T *rp = (const T *)sh->rd;                                                 \
		T *wp = (T *)sh->wr;                                                             \
		const int64_t per_vec = (int64_t)(sizeof(V) / sizeof(T));                       \
		for (int64_t st = 0; st < steps; st++) {                                        \
			int64_t k = spread_next(&sr);                                            \
			for (; k >= 4; k -= 4, rp += 4 * VEC_PER_LINE * per_vec)                 \
				_Pragma("GCC unroll 8") for (int v = 0; v < 4 * VEC_PER_LINE; v++)  \
					acc[v] = FMA(acc[v], a, LOAD(rp + v * per_vec));         \
			for (; k > 0; k--, rp += VEC_PER_LINE * per_vec)                         \
				_Pragma("GCC unroll 2") for (int v = 0; v < VEC_PER_LINE; v++)      \
					acc[v] = FMA(acc[v], a, LOAD(rp + v * per_vec));         \
			for (int64_t g = spread_next(&sg); g > 0; g--)                           \
				_Pragma("GCC unroll 12") for (int i = 0; i < NACC; i++)             \
					acc[i] = FMA(acc[i], a, b);                              \
			k = spread_next(&sw);                                                    \
			for (; k >= 4; k -= 4, wp += 4 * VEC_PER_LINE * per_vec)                 \
				_Pragma("GCC unroll 8") for (int v = 0; v < 4 * VEC_PER_LINE; v++)  \
					STORE(wp + v * per_vec, acc[v]);                         \
			for (; k > 0; k--, wp += VEC_PER_LINE * per_vec)                         \
				_Pragma("GCC unroll 2") for (int v = 0; v < VEC_PER_LINE; v++)      \
					STORE(wp + v * per_vec, acc[v]);                         \
		}                                                                                \
		T out[sizeof(V) / sizeof(T)];                                                    \
		V sum = acc[0];                                                                  \
		for (int i = 1; i < NACC; i++)                                                   \
			sum = FMA(sum, a, acc[i]);                                               \
		memcpy(out, &sum, sizeof out);                                                   \
		return (double)out[0];                                                           \
	}

DEFINE_PASS(pass_f32, float, VF, FMA_F, SET1_F, LOAD_F, STORE_F)
DEFINE_PASS(pass_f64, double, VD, FMA_D, SET1_D, LOAD_D, STORE_D)

static void do_work(void *ctx, int id)
{
	struct job *j = ctx;
	const struct share *sh = &j->shares[id];
	double s = j->f64 ? pass_f64(sh, j->mode) : pass_f32(sh, j->mode);
	if (id == 0)
		j->sink += s;
}

static int64_t parse_i64(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end); /* accepts 1e9 as well as 1000000000 */
	if (*end || v < 0 || v > 9e15) {
		fprintf(stderr, "case_probe: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (int64_t)v;
}

static void usage(void)
{
	fprintf(stderr, "usage: case_probe --flops F --read BYTES --write BYTES [--f64] [--case NAME] [--threads T]\n"
	                "                  [--runs R] [--warmup W] [--min-time-ms MS] [--warmup-ms MS]\n"
	                "                  [--mode both|fma|traffic]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int64_t flops = -1, rbytes = -1, wbytes = -1;
	int threads = 1, runs = 200, warmup = 20, f64 = 0;
	double min_time_ms = 0, warmup_ms = 0;
	const char *case_name = NULL;
	enum mode mode = MODE_BOTH;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--f64"))
			f64 = 1;
		else if (!v)
			usage();
		else if (!strcmp(argv[i], "--case"))
			case_name = v, i++;
		else if (!strcmp(argv[i], "--flops"))
			flops = parse_i64(v, "--flops"), i++;
		else if (!strcmp(argv[i], "--read"))
			rbytes = parse_i64(v, "--read"), i++;
		else if (!strcmp(argv[i], "--write"))
			wbytes = parse_i64(v, "--write"), i++;
		else if (!strcmp(argv[i], "--threads"))
			threads = (int)parse_i64(v, "--threads"), i++;
		else if (!strcmp(argv[i], "--runs"))
			runs = (int)parse_i64(v, "--runs"), i++;
		else if (!strcmp(argv[i], "--warmup"))
			warmup = (int)parse_i64(v, "--warmup"), i++;
		else if (!strcmp(argv[i], "--min-time-ms"))
			min_time_ms = (double)parse_i64(v, "--min-time-ms"), i++;
		else if (!strcmp(argv[i], "--warmup-ms"))
			warmup_ms = (double)parse_i64(v, "--warmup-ms"), i++;
		else if (!strcmp(argv[i], "--mode")) {
			mode = !strcmp(v, "both") ? MODE_BOTH : !strcmp(v, "fma") ? MODE_FMA
			     : !strcmp(v, "traffic")                         ? MODE_TRAFFIC
			                                                    : (usage(), MODE_BOTH);
			i++;
		} else
			usage();
	}
	if (flops < 0 || rbytes < 0 || wbytes < 0 || threads < 1 || threads > 256 || runs < 1)
		usage();

	const int lanes = f64 ? LANES64 : LANES32;
	const int64_t nread = (rbytes + LINE - 1) / LINE, nwrite = (wbytes + LINE - 1) / LINE;
	const int64_t ngroups = (flops / (2 * lanes) + NACC / 2) / NACC;
	char *rd = aligned_alloc(LINE, (size_t)(nread ? nread : 1) * LINE);
	char *wr = aligned_alloc(LINE, (size_t)(nwrite ? nwrite : 1) * LINE);
	if (!rd || !wr) {
		fprintf(stderr, "case_probe: out of memory\n");
		return 1;
	}
	/* small values: the accumulators stay normal numbers (no denormal slow paths) */
	if (f64)
		for (int64_t i = 0; i < nread * LINE / 8; i++)
			((double *)rd)[i] = 1e-3;
	else
		for (int64_t i = 0; i < nread * LINE / 4; i++)
			((float *)rd)[i] = 1e-3f;
	memset(wr, 0, (size_t)(nwrite ? nwrite : 1) * LINE);

	struct job j;
	memset(&j, 0, sizeof j);
	j.nthreads = threads;
	j.f64 = f64;
	j.mode = mode;
	j.shares = calloc((size_t)threads, sizeof *j.shares);
	for (int t = 0; t < threads; t++) {
		int64_t r0 = nread * t / threads, r1 = nread * (t + 1) / threads;
		int64_t w0 = nwrite * t / threads, w1 = nwrite * (t + 1) / threads;
		int64_t g0 = ngroups * t / threads, g1 = ngroups * (t + 1) / threads;
		j.shares[t] = (struct share){rd + r0 * LINE, wr + w0 * LINE, r1 - r0, w1 - w0, g1 - g0};
	}
	struct probe_pool pool;
	probe_pool_start(&pool, threads, do_work, &j);

	double spent = 0;
	for (int r = 0; r < warmup || 1e3 * spent < warmup_ms; r++)
		spent += probe_pool_run(&pool);
	size_t cap = (size_t)runs, n = 0;
	double *t = malloc(cap * sizeof *t);
	for (spent = 0; t && ((int)n < runs || 1e3 * spent < min_time_ms); n++) {
		if (n == cap) {
			double *bigger = realloc(t, 2 * cap * sizeof *t);
			if (!bigger)
				break;
			t = bigger, cap *= 2;
		}
		t[n] = probe_pool_run(&pool);
		spent += t[n];
	}
	if (!t) {
		fprintf(stderr, "case_probe: out of memory\n");
		return 1;
	}
	runs = (int)n;
	qsort(t, n, sizeof *t, probe_cmp_double);

	probe_pool_stop(&pool);
	printf("{");
	if (case_name) /* a name from the suite: letters, digits and underscores */
		printf("\"case\":\"%s\",", case_name);
	printf("\"mode\":\"%s\",\"dtype\":\"%s\",\"threads\":%d,\"flops\":%lld,\"read_bytes\":%lld,"
	       "\"write_bytes\":%lld,\"vector_fmas\":%lld,\"runs\":%d,\"median_ms\":%.6f,\"min_ms\":%.6f,"
	       "\"sink\":%g}\n",
	       mode == MODE_BOTH ? "both" : mode == MODE_FMA ? "fma" : "traffic", f64 ? "float64" : "float32",
	       threads, (long long)flops, (long long)rbytes, (long long)wbytes,
	       (long long)(ngroups * NACC), runs, 1e3 * t[runs / 2], 1e3 * t[0], j.sink);
	free(t);
	free(j.shares);
	free(rd);
	free(wr);
	return 0;
}
