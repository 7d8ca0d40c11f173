/*
 * onnxrun_bench - in-process timer for one model, using only the public API (onnxrun.h).
 *
 *   onnxrun_bench MODEL [--case NAME] [--threads T] [--runs R] [--warmup W]
 *                       [--input X.bin] [--seed S] [--output Y.bin] [--budget-s SEC]
 *                       [--min-time-ms MS] [--warmup-ms WMS]
 *   onnxrun_bench MODEL --scaling T2 [--threads T] [--runs R] [--warmup W] [--input X.bin] ...
 *   onnxrun_bench --baseline
 *
 * Loads MODEL, creates a session, sets T threads, binds input 0 (raw little-endian float32,
 * or float64 when the model's input 0 is float64, from --input, or uniform [-1, 1) from a
 * fixed-seed xorshift generator), does W warm-up
 * runs (default 3) and R timed runs (default 20), each timed with clock_gettime
 * (CLOCK_MONOTONIC) around onnxrun_session_run alone, and prints one JSON line:
 *
 *   {"case":..., "threads":T, "median_ms":..., "min_ms":..., "runs":R, "peak_rss_kb":...,
 *    "warmup":W, "mean_ms":..., "max_ms":..., "load_ms":..., "runs_requested":R0, "cpu_s":...}
 *
 * cpu_s is the process's user + system CPU time (getrusage), which bench/run.sh subtracts
 * from the machine's busy time over the same interval to tell how much else was running.
 *
 * peak_rss_kb is getrusage(RUSAGE_SELF).ru_maxrss at the end, so run one process per case
 * (bench/run.sh does). --output writes output 0 as raw float32 (float64 for a float64 model)
 * after the last timed run.
 * --budget-s caps the timed phase: when one warm-up run shows that R runs would take longer
 * than SEC seconds, fewer runs are done (at least 3) and "runs" says how many; "runs_requested"
 * keeps the asked-for count. --min-time-ms MS raises the count instead, so the timed runs
 * span at least MS milliseconds by the last warm-up run's time (at most 100000 runs; the
 * budget still caps it): a median over a longer window is not decided by one sub-second slow
 * spell of a shared host. --warmup-ms WMS goes on warming up past W runs until the warm-up
 * has taken WMS milliseconds ("warmup" in the JSON says how many runs it took): ONNX Runtime
 * ran some cases 20-40% faster after a few hundred runs than in its first 20, and both tools
 * get the same treatment. --baseline prints the peak RSS of this process with the
 * library linked but no model loaded (the RSS floor of the tool itself).
 *
 * --scaling T2 measures how much T2 threads gain over T (default 1) on this model, in a way
 * a shared host's slow spells hit both sides of equally: two sessions (T and T2 threads) of
 * the same model, W warm-up runs each, then pairs of blocks: a block is SCALING_BLOCK
 * back-to-back runs of one session, the first untimed (it wakes that session's pool workers,
 * asleep while the other session ran), and the session going first alternates from pair to
 * pair. R timed runs per session in all. It prints one JSON line:
 *
 *   {"scaling":true, "case":..., "threads":T, "threads2":T2, "median_ms":..., "median2_ms":...,
 *    "min_ms":..., "min2_ms":..., "speedup_median":..., "speedup_pairs":..., "runs":R, ...}
 *
 * speedup_median is median_ms / median2_ms; speedup_pairs is the median over the block pairs
 * of (T block's median / T2 block's median), the two blocks of a pair adjacent in time.
 *
 * Exit status: 0 on success, 2 on any error (message on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "onnxrun.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss; /* kilobytes on Linux */
}

/* CPU seconds (user + system) this process has used, all threads. */
static double cpu_seconds(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "onnxrun_bench: error: %s%s%s\n", what, detail && *detail ? ": " : "",
	        detail ? detail : "");
	exit(2);
}

/* JSON string body with the few escapes a case name could need. */
static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static long parse_long(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || end == v || x < lo || x > hi)
		die("bad value for option", opt);
	return x;
}

static double run_once(struct onnxrun_session *sess, const char *what)
{
	double a = now_ms();
	if (onnxrun_session_run(sess) != ONNXRUN_OK)
		die(what, onnxrun_session_error(sess));
	return now_ms() - a;
}

static double median_of(double *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define SCALING_BLOCK 5 /* runs per block of --scaling, the first untimed */
#define MAX_RUNS 100000

/* The timed run count: raised so the runs span min_ms (one run taking est_ms), then capped
 * so they fit budget_s (at least 3). */
static long fit_runs(long runs, double est_ms, long min_ms, long budget_s)
{
	est_ms = est_ms > 0 ? est_ms : 1e-3;
	if (min_ms > 0 && (double)min_ms / est_ms > (double)runs) {
		const double want = ceil((double)min_ms / est_ms);
		runs = want > MAX_RUNS ? MAX_RUNS : (long)want;
	}
	if (budget_s > 0) {
		const long fit = (long)((double)budget_s * 1e3 / est_ms);
		if (fit < runs)
			runs = fit < 3 ? 3 : fit;
	}
	return runs;
}

/* Warm-up: at least `warmup` runs of sess (and of sess2, alternating, when not NULL), going on
 * until they have taken warmup_ms in all (at most MAX_RUNS); returns how many were done and
 * sets *last_ms to the last one's time (both sessions' together). */
static long warm_up(struct onnxrun_session *sess, struct onnxrun_session *sess2, long warmup, long warmup_ms,
                    double *last_ms)
{
	const double t0 = now_ms();
	long n = 0;
	*last_ms = 0;
	while (n < MAX_RUNS && (n < warmup || now_ms() - t0 < (double)warmup_ms)) {
		*last_ms = run_once(sess, "warm-up run");
		if (sess2)
			*last_ms += run_once(sess2, "warm-up run");
		n++;
	}
	return n;
}

/* --scaling: sess (T threads) and a second session of the same model with T2 threads, runs
 * interleaved in pairs (see the header comment). Prints the JSON line. */
static void run_scaling(struct onnxrun_model *model, struct onnxrun_session *sess, struct onnxrun_tensor *xt,
                        const char *case_name, long threads, long threads2, long runs, long warmup,
                        long warmup_ms, long budget_s, long min_ms, double load_ms)
{
	struct onnxrun_session *sess2 = NULL;
	if (onnxrun_session_create(model, &sess2) != ONNXRUN_OK)
		die("creating the second session", NULL);
	if (onnxrun_session_set_threads(sess2, (int)threads2) != ONNXRUN_OK)
		die("setting threads", onnxrun_session_error(sess2));
	if (onnxrun_session_set_input(sess2, 0, xt) != ONNXRUN_OK)
		die("binding input", onnxrun_session_error(sess2));
	double pair_ms = 0;
	warmup = warm_up(sess, sess2, warmup > 0 ? warmup : 1, warmup_ms, &pair_ms);
	const long runs_requested = runs;
	runs = fit_runs(runs, pair_ms * SCALING_BLOCK / (SCALING_BLOCK - 1), min_ms, budget_s);
	double *t1 = malloc((size_t)runs * sizeof *t1), *t2 = malloc((size_t)runs * sizeof *t2);
	double *r = malloc((size_t)runs * sizeof *r);
	if (!t1 || !t2 || !r)
		die("out of memory", NULL);
	long nblocks = 0;
	for (long i = 0; i < runs; i += SCALING_BLOCK - 1, nblocks++) {
		const long n = runs - i < SCALING_BLOCK - 1 ? runs - i : SCALING_BLOCK - 1;
		double b1[SCALING_BLOCK], b2[SCALING_BLOCK];
		for (int side = 0; side < 2; side++) {
			const int two = (side + (int)nblocks) % 2; /* which session runs this block */
			struct onnxrun_session *s = two ? sess2 : sess;
			(void)run_once(s, "timed run"); /* wakes the pool */
			for (long e = 0; e < n; e++) {
				const double t = run_once(s, "timed run");
				(two ? t2 : t1)[i + e] = t;
				(two ? b2 : b1)[e] = t;
			}
		}
		r[nblocks] = median_of(b1, n) / median_of(b2, n);
	}
	const double pairs = median_of(r, nblocks), m1 = median_of(t1, runs), m2 = median_of(t2, runs);
	printf("{\"scaling\":true,\"case\":");
	put_json_string(case_name);
	printf(",\"threads\":%ld,\"threads2\":%ld,\"median_ms\":%.6f,\"median2_ms\":%.6f,\"min_ms\":%.6f,"
	       "\"min2_ms\":%.6f,\"speedup_median\":%.4f,\"speedup_pairs\":%.4f,\"runs\":%ld,"
	       "\"runs_requested\":%ld,\"warmup\":%ld,\"load_ms\":%.3f,\"peak_rss_kb\":%ld,\"cpu_s\":%.3f}\n",
	       threads, threads2, m1, m2, t1[0], t2[0], m1 / m2, pairs, runs, runs_requested, warmup, load_ms,
	       peak_rss_kb(), cpu_seconds());
	free(t1);
	free(t2);
	free(r);
	onnxrun_session_free(sess2);
}

/* The default mode: W warm-up runs, then R timed runs of sess (fewer under the budget);
 * writes output 0 if asked; prints the JSON line. */
static void run_timed(struct onnxrun_session *sess, const char *case_name, long threads, long runs, long warmup,
                      long warmup_ms, long budget_s, long min_ms, double load_ms, const char *output_path)
{
	double last_ms = 0;
	warmup = warm_up(sess, NULL, warmup, warmup_ms, &last_ms);
	const long runs_requested = runs;
	if (budget_s > 0 || min_ms > 0) {
		if (warmup == 0) /* need one run's time to apply the budget or the minimum time */
			last_ms = run_once(sess, "probe run");
		runs = fit_runs(runs, last_ms, min_ms, budget_s);
	}

	double *t = malloc((size_t)runs * sizeof *t);
	if (!t)
		die("out of memory", NULL);
	for (long i = 0; i < runs; i++)
		t[i] = run_once(sess, "timed run");
	double sum = 0;
	for (long i = 0; i < runs; i++)
		sum += t[i];
	const double median = median_of(t, runs);

	if (output_path) {
		const struct onnxrun_tensor *y = NULL;
		if (onnxrun_session_output(sess, 0, &y) != ONNXRUN_OK)
			die("reading output", onnxrun_session_error(sess));
		if (onnxrun_tensor_dtype(y) != ONNXRUN_DTYPE_FLOAT && onnxrun_tensor_dtype(y) != ONNXRUN_DTYPE_DOUBLE)
			die("output 0 is neither float32 nor float64", output_path);
		FILE *f = fopen(output_path, "wb");
		if (!f)
			die("opening output file", output_path);
		size_t yb = onnxrun_tensor_nbytes(y);
		if (yb && fwrite(onnxrun_tensor_data(y), 1, yb, f) != yb)
			die("writing output file", output_path);
		if (fclose(f) != 0)
			die("writing output file", output_path);
	}

	long rss = peak_rss_kb();
	printf("{\"case\":");
	put_json_string(case_name);
	printf(",\"threads\":%ld,\"median_ms\":%.6f,\"min_ms\":%.6f,\"runs\":%ld,\"peak_rss_kb\":%ld,"
	       "\"warmup\":%ld,\"mean_ms\":%.6f,\"max_ms\":%.6f,\"load_ms\":%.3f,\"runs_requested\":%ld,"
	       "\"cpu_s\":%.3f}\n",
	       threads, median, t[0], runs, rss, warmup, sum / (double)runs, t[runs - 1], load_ms,
	       runs_requested, cpu_seconds());

	free(t);
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: onnxrun_bench MODEL [--case NAME] [--threads T] [--runs R] [--warmup W]\n"
	        "                     [--input X.bin] [--seed S] [--output Y.bin] [--budget-s SEC]\n"
	        "                     [--min-time-ms MS] [--warmup-ms WMS]\n"
	        "       onnxrun_bench MODEL --scaling T2 [--threads T] [--runs R] [--warmup W] ...\n"
	        "       onnxrun_bench --baseline\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *model_path = NULL, *case_name = NULL, *input_path = NULL, *output_path = NULL;
	long threads = 1, runs = 20, warmup = 3, budget_s = 0, threads2 = 0, min_ms = 0, warmup_ms = 0;
	uint64_t seed = 0x0DDBA11CAFEULL;
	int baseline = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--baseline")) {
			baseline = 1;
			continue;
		}
		if (a[0] != '-') {
			if (model_path)
				usage();
			model_path = a;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--case"))
			case_name = v;
		else if (!strcmp(a, "--threads"))
			threads = parse_long(a, v, 1, 1024);
		else if (!strcmp(a, "--scaling"))
			threads2 = parse_long(a, v, 1, 1024);
		else if (!strcmp(a, "--runs"))
			runs = parse_long(a, v, 1, 1000000);
		else if (!strcmp(a, "--warmup"))
			warmup = parse_long(a, v, 0, 1000000);
		else if (!strcmp(a, "--budget-s"))
			budget_s = parse_long(a, v, 0, 1000000);
		else if (!strcmp(a, "--warmup-ms"))
			warmup_ms = parse_long(a, v, 0, 3600000);
		else if (!strcmp(a, "--min-time-ms"))
			min_ms = parse_long(a, v, 0, 3600000);
		else if (!strcmp(a, "--input"))
			input_path = v;
		else if (!strcmp(a, "--output"))
			output_path = v;
		else if (!strcmp(a, "--seed"))
			seed = (uint64_t)parse_long(a, v, 1, 0x7fffffffffffffffL);
		else
			usage();
	}

	struct onnxrun_env *env = NULL;
	if (onnxrun_env_create(NULL, &env) != ONNXRUN_OK)
		die("creating env", NULL);
	if (baseline) {
		printf("{\"baseline\":\"onnxrun\",\"peak_rss_kb\":%ld}\n", peak_rss_kb());
		onnxrun_env_free(env);
		return 0;
	}
	if (!model_path)
		usage();
	if (!case_name)
		case_name = model_path;

	double t0 = now_ms();
	struct onnxrun_model *model = NULL;
	if (onnxrun_model_load_file(env, model_path, &model) != ONNXRUN_OK)
		die("loading model", onnxrun_env_error(env));
	struct onnxrun_session *sess = NULL;
	if (onnxrun_session_create(model, &sess) != ONNXRUN_OK)
		die("creating session", model_path);
	if (onnxrun_session_set_threads(sess, (int)threads) != ONNXRUN_OK)
		die("setting threads", onnxrun_session_error(sess));
	double load_ms = now_ms() - t0;

	if (onnxrun_model_input_count(model) != 1)
		die("the model must have exactly one input to feed", model_path);
	struct onnxrun_value_info in;
	if (onnxrun_model_input_info(model, 0, &in) != ONNXRUN_OK)
		die("reading input info", onnxrun_env_error(env));
	if (in.dtype != ONNXRUN_DTYPE_FLOAT && in.dtype != ONNXRUN_DTYPE_DOUBLE)
		die("input 0 is neither float32 nor float64", in.name);
	int64_t dims[ONNXRUN_MAX_RANK];
	int64_t numel = 1;
	for (int32_t d = 0; d < in.rank; d++) {
		if (in.dims[d].value < 0)
			die("input 0 has a symbolic dim", in.name);
		dims[d] = in.dims[d].value;
		numel *= dims[d];
	}
	const size_t esize = onnxrun_dtype_size(in.dtype);
	size_t nbytes = (size_t)numel * esize;
	void *x = malloc(nbytes ? nbytes : 1);
	if (!x)
		die("out of memory for the input", NULL);
	if (input_path) {
		FILE *f = fopen(input_path, "rb");
		if (!f)
			die("opening input", input_path);
		if (fread(x, 1, nbytes, f) != nbytes || fgetc(f) != EOF)
			die("input file size does not match the model's input", input_path);
		fclose(f);
	} else {
		uint64_t s = seed;
		for (int64_t i = 0; i < numel; i++) {
			const double v = (double)(xorshift64(&s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
			if (in.dtype == ONNXRUN_DTYPE_DOUBLE)
				((double *)x)[i] = v;
			else
				((float *)x)[i] = (float)v;
		}
	}
	struct onnxrun_tensor *xt = NULL;
	if (onnxrun_tensor_wrap(env, in.dtype, in.rank, dims, x, nbytes, &xt) != ONNXRUN_OK)
		die("wrapping input", onnxrun_env_error(env));
	if (onnxrun_session_set_input(sess, 0, xt) != ONNXRUN_OK)
		die("binding input", onnxrun_session_error(sess));

	if (threads2) {
		if (output_path)
			die("--output does not go with --scaling", NULL);
		run_scaling(model, sess, xt, case_name, threads, threads2, runs, warmup, warmup_ms, budget_s, min_ms, load_ms);
	} else {
		run_timed(sess, case_name, threads, runs, warmup, warmup_ms, budget_s, min_ms, load_ms, output_path);
	}
	onnxrun_tensor_free(xt);
	free(x);
	onnxrun_session_free(sess);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return 0;
}
