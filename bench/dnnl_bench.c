/*
 * dnnl_bench - oneDNN's deconvolution primitive on a suite case, same protocol as onnxrun_bench.
 *
 *   dnnl_bench MODEL --layout blocked|nchw [--case NAME] [--threads T] [--runs R] [--warmup W]
 *                    [--input X.bin] [--output Y.bin] [--budget-s SEC] [--min-time-ms MS]
 *                    [--warmup-ms WMS] [--check]
 *   dnnl_bench --baseline
 *
 * oneDNN has no ONNX reader: MODEL is the generated model.onnx, and the case is read from the
 * files bench/make_models.py writes beside it: deconv.txt (dtype, shapes and attributes, one
 * "key value..." line each), w.bin and b.bin (W and B as stored in model.onnx, raw
 * little-endian float32, ONNX layout). A case without deconv.txt (DepthToSpace) or one the
 * primitive cannot express prints {"case":..., "layout":..., "na":"reason"} and exits 0.
 *
 * The primitive: dnnl_deconvolution_forward, direct algorithm, f32, forward_inference, on the
 * CPU engine. The ONNX attributes map as follows: strides as they are; dilations d -> d - 1
 * (oneDNN counts the gaps); pads begin -> padding_l; pads end - output_padding -> padding_r
 * (output_padding adds rows at the end, a negative end padding); group > 1 -> grouped weights
 * (dims goi[d][h]w). ONNX stores W as (C_in, M / group, k...), i.e. g, i, o, k... in memory:
 * the user weights are described with the permuted tags (iow / iohw / iodhw, giow / giohw /
 * giodhw as oneDNN calls them) and reordered once to whatever the primitive wants.
 *
 * --layout blocked: source, weights and destination with format_tag any, so the primitive
 *   picks its preferred (blocked) layouts; the input is reordered into that layout before the
 *   timing and the output back to NCHW after it. No reorder is timed: oneDNN's best case, a
 *   network that stays in blocked layouts from layer to layer.
 * --layout nchw: source and destination plain (abc / abcd / abcde, what an ONNX user holds),
 *   weights format_tag any (reordered once at setup, as every runtime prepacks its weights).
 *
 * Timing, like onnxrun_bench: W warm-up runs (default 3), going on until they have taken WMS
 * milliseconds; then R timed runs (default 20, more so they span MS, fewer to fit SEC), each
 * one dnnl_primitive_execute + dnnl_stream_wait timed with clock_gettime(CLOCK_MONOTONIC).
 * Prints one JSON line with the fields of onnxrun_bench's plus "layout", "impl" (the
 * implementation oneDNN chose), "src_fmt" / "wei_fmt" / "dst_fmt" (the layouts, oneDNN's
 * notation: upper case = blocked dimension) and "omp_threads".
 *
 * Threads: Debian's libdnnl is built with the OpenMP runtime (libgomp): T is set with
 * omp_set_num_threads before the primitive is created (bench/run.sh also sets
 * OMP_NUM_THREADS=T). Another CPU runtime is refused with a message.
 *
 * --check: builds the primitive and prints {"case":..., "layout":..., "check":"ok", "impl":...}
 * (or the "na" line) without timing. --output writes the output as raw float32 NCHW.
 * --baseline prints the RSS floor of this tool (CPU engine created, no primitive).
 *
 * Exit status: 0 on success and on "na", 2 on any error (message on stderr).
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

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#endif

#define MAX_RUNS 100000
#define MAX_SPATIAL 3

static const char *g_case = "";
static const char *g_layout = "";

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
	return ru.ru_maxrss;
}

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

static double median_of(double *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "dnnl_bench: error: %s%s%s%s%s\n", *g_case ? g_case : "", *g_case ? ": " : "", what,
	        detail && *detail ? ": " : "", detail ? detail : "");
	exit(2);
}

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

/* The case cannot be run by oneDNN: say why on stdout and exit 0. */
static void not_applicable(const char *reason)
{
	printf("{\"case\":");
	put_json_string(g_case);
	printf(",\"layout\":");
	put_json_string(g_layout);
	printf(",\"na\":");
	put_json_string(reason);
	printf("}\n");
	exit(0);
}

#define DNNL_CHECK(call, what)                                                                                       \
	do {                                                                                                         \
		dnnl_status_t st_ = (call);                                                                          \
		if (st_ != dnnl_success)                                                                             \
			die(what, dnnl_status2str(st_));                                                             \
	} while (0)

static long parse_long(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || end == v || x < lo || x > hi)
		die("bad value for option", opt);
	return x;
}

/* ---- the case, from deconv.txt */

struct deconv_case {
	char dtype[16];
	int rank; /* of X and Y: 3, 4 or 5 */
	int64_t x[MAX_SPATIAL + 2], w[MAX_SPATIAL + 2], y[MAX_SPATIAL + 2];
	int64_t group;
	int64_t strides[MAX_SPATIAL], dilations[MAX_SPATIAL], pads[2 * MAX_SPATIAL], opad[MAX_SPATIAL];
	int bias;
};

/* Reads "key v1 v2 ..." into out[] (at most max values); returns the count. */
static int read_ints(const char *line, const char *key, int64_t *out, int max)
{
	size_t kl = strlen(key);
	if (strncmp(line, key, kl) || line[kl] != ' ')
		return -1;
	const char *p = line + kl;
	int n = 0;
	for (;;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p)
			break;
		if (errno || n == max)
			die("bad line in deconv.txt", line);
		out[n++] = (int64_t)v;
		p = end;
	}
	return n;
}

static void read_case(const char *dir, struct deconv_case *c)
{
	char path[4200], line[512];
	snprintf(path, sizeof path, "%s/deconv.txt", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		/* bench/make_models.py writes deconv.txt for every ConvTranspose case */
		not_applicable("not a ConvTranspose case (no deconv.txt): DepthToSpace is not a "
		               "deconvolution, the one oneDNN primitive timed here");
	}
	memset(c, 0, sizeof *c);
	c->group = 1;
	int nx = -1, nw = -1, ny = -1, ns = -1, nd = -1, np = -1, no = -1;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		int64_t b[1];
		if (!strncmp(line, "dtype ", 6))
			snprintf(c->dtype, sizeof c->dtype, "%.15s", line + 6);
		else if (!strncmp(line, "x ", 2))
			nx = read_ints(line, "x", c->x, MAX_SPATIAL + 2);
		else if (!strncmp(line, "w ", 2))
			nw = read_ints(line, "w", c->w, MAX_SPATIAL + 2);
		else if (!strncmp(line, "y ", 2))
			ny = read_ints(line, "y", c->y, MAX_SPATIAL + 2);
		else if (!strncmp(line, "group ", 6)) {
			if (read_ints(line, "group", &c->group, 1) != 1)
				die("bad line in deconv.txt", line);
		} else if (!strncmp(line, "strides ", 8))
			ns = read_ints(line, "strides", c->strides, MAX_SPATIAL);
		else if (!strncmp(line, "dilations ", 10))
			nd = read_ints(line, "dilations", c->dilations, MAX_SPATIAL);
		else if (!strncmp(line, "pads ", 5))
			np = read_ints(line, "pads", c->pads, 2 * MAX_SPATIAL);
		else if (!strncmp(line, "output_padding ", 15))
			no = read_ints(line, "output_padding", c->opad, MAX_SPATIAL);
		else if (!strncmp(line, "bias ", 5)) {
			if (read_ints(line, "bias", b, 1) != 1)
				die("bad line in deconv.txt", line);
			c->bias = b[0] != 0;
		} else if (line[0])
			die("unknown line in deconv.txt", line);
	}
	fclose(f);
	if (nx < 3 || nw != nx || ny != nx)
		die("deconv.txt: x, w and y must have the same rank, 3 to 5", path);
	c->rank = nx;
	const int sp = nx - 2;
	if (ns != sp || nd != sp || np != 2 * sp || no != sp)
		die("deconv.txt: strides, dilations, pads and output_padding must match the spatial rank", path);
	if (c->group < 1 || c->x[1] % c->group || c->w[0] != c->x[1])
		die("deconv.txt: W.shape[0] must be C and C a multiple of group", path);
}

static void *read_file_exact(const char *path, size_t nbytes)
{
	void *p = malloc(nbytes ? nbytes : 1);
	if (!p)
		die("out of memory", path);
	FILE *f = fopen(path, "rb");
	if (!f)
		die("opening", path);
	if (fread(p, 1, nbytes, f) != nbytes || fgetc(f) != EOF)
		die("file size does not match the case's tensor", path);
	fclose(f);
	return p;
}

static int64_t numel(const int64_t *d, int n)
{
	int64_t e = 1;
	for (int i = 0; i < n; i++)
		e *= d[i];
	return e;
}

/* oneDNN's name for a blocked layout: dimensions outermost first, upper case if blocked,
 * then the inner blocks (e.g. aBcd16b: channels in blocks of 16). */
static void fmt_str(const dnnl_memory_desc_t *md, char *out, size_t cap)
{
	if (md->format_kind != dnnl_blocked) {
		snprintf(out, cap, "format_kind %d", (int)md->format_kind);
		return;
	}
	const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
	int order[DNNL_MAX_NDIMS], blocked[DNNL_MAX_NDIMS] = {0};
	for (int i = 0; i < md->ndims; i++)
		order[i] = i;
	for (int i = 0; i < md->ndims; i++) /* stable sort by stride, largest first */
		for (int j = i + 1; j < md->ndims; j++)
			if (b->strides[order[j]] > b->strides[order[i]]) {
				int t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
	for (int k = 0; k < b->inner_nblks; k++)
		blocked[b->inner_idxs[k]] = 1;
	size_t n = 0;
	for (int i = 0; i < md->ndims && n + 1 < cap; i++)
		out[n++] = (char)((blocked[order[i]] ? 'A' : 'a') + order[i]);
	out[n] = 0;
	for (int k = 0; k < b->inner_nblks && n + 8 < cap; k++)
		n += (size_t)snprintf(out + n, cap - n, "%lld%c", (long long)b->inner_blks[k], 'a' + (int)b->inner_idxs[k]);
}

/* ---- oneDNN plumbing */

static dnnl_engine_t g_eng;
static dnnl_stream_t g_stream;

static dnnl_memory_t make_mem(const dnnl_memory_desc_t *md, void *handle)
{
	dnnl_memory_t m;
	DNNL_CHECK(dnnl_memory_create(&m, md, g_eng, handle ? handle : DNNL_MEMORY_ALLOCATE), "creating memory");
	return m;
}

/* A memory with layout `want` holding the contents of `from` (a reorder, or `from` itself). */
static dnnl_memory_t reorder_to(dnnl_memory_t from, const dnnl_memory_desc_t *from_md, const dnnl_memory_desc_t *want)
{
	if (dnnl_memory_desc_equal(from_md, want))
		return from;
	dnnl_memory_t to = make_mem(want, NULL);
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, from_md, g_eng, want, g_eng, NULL), "creating a reorder");
	DNNL_CHECK(dnnl_primitive_create(&r, rpd), "creating a reorder");
	dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
	DNNL_CHECK(dnnl_primitive_execute(r, g_stream, 2, args), "running a reorder");
	DNNL_CHECK(dnnl_stream_wait(g_stream), "running a reorder");
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(rpd);
	return to;
}

static double run_once(dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *args)
{
	const double a = now_ms();
	DNNL_CHECK(dnnl_primitive_execute(p, g_stream, nargs, args), "running the deconvolution");
	DNNL_CHECK(dnnl_stream_wait(g_stream), "running the deconvolution");
	return now_ms() - a;
}

/* As in onnxrun_bench: raised so the runs span min_ms, capped to fit budget_s (>= 3). */
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

static void usage(void)
{
	fprintf(stderr,
	        "usage: dnnl_bench MODEL --layout blocked|nchw [--case NAME] [--threads T] [--runs R]\n"
	        "                  [--warmup W] [--input X.bin] [--output Y.bin] [--budget-s SEC]\n"
	        "                  [--min-time-ms MS] [--warmup-ms WMS] [--check]\n"
	        "       dnnl_bench --baseline\n");
	exit(2);
}

static const dnnl_format_tag_t PLAIN[6] = {dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde};

int main(int argc, char **argv)
{
	const char *model_path = NULL, *input_path = NULL, *output_path = NULL, *layout = NULL;
	long threads = 1, runs = 20, warmup = 3, budget_s = 0, min_ms = 0, warmup_ms = 0;
	int baseline = 0, check = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--baseline")) {
			baseline = 1;
			continue;
		}
		if (!strcmp(a, "--check")) {
			check = 1;
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
			g_case = v;
		else if (!strcmp(a, "--layout"))
			layout = v;
		else if (!strcmp(a, "--threads"))
			threads = parse_long(a, v, 1, 1024);
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
		else
			usage();
	}

#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
	omp_set_num_threads((int)threads);
#else
	die("this libdnnl is not built with the OpenMP CPU runtime; dnnl_bench sets threads through OpenMP only",
	    NULL);
#endif
	const double t0 = now_ms();
	DNNL_CHECK(dnnl_engine_create(&g_eng, dnnl_cpu, 0), "creating the CPU engine");
	DNNL_CHECK(dnnl_stream_create(&g_stream, g_eng, dnnl_stream_default_flags), "creating a stream");
	if (baseline) {
		printf("{\"baseline\":\"dnnl\",\"peak_rss_kb\":%ld}\n", peak_rss_kb());
		return 0;
	}
	if (!model_path || !layout)
		usage();
	if (strcmp(layout, "blocked") && strcmp(layout, "nchw"))
		die("--layout must be blocked or nchw", layout);
	g_layout = layout;
	if (!*g_case)
		g_case = model_path;
	const int blocked = !strcmp(layout, "blocked");

	/* the case directory: the model's */
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", model_path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	struct deconv_case c;
	read_case(dir, &c);
	if (strcmp(c.dtype, "float32")) {
		char why[128];
		snprintf(why, sizeof why, "%s: oneDNN has no %s deconvolution on CPU", c.dtype, c.dtype);
		not_applicable(why);
	}
	const int sp = c.rank - 2;
	for (int i = 0; i < sp; i++)
		if (c.dilations[i] < 1 || c.strides[i] < 1)
			die("deconv.txt: strides and dilations must be >= 1", NULL);

	/* ONNX -> oneDNN geometry (see the header comment) */
	const int64_t g = c.group, m = c.w[1] * g;
	dnnl_dims_t xd, yd, wd, bd = {m}, strides, dil, pl, pr;
	for (int i = 0; i < c.rank; i++) {
		xd[i] = c.x[i];
		yd[i] = c.y[i];
	}
	if (yd[1] != m)
		die("deconv.txt: y's channels are not W.shape[1] * group", NULL);
	int wn;
	dnnl_format_tag_t wtag_onnx;
	if (g == 1) { /* dims (o, i, k...); ONNX memory (i, o, k...) */
		wn = c.rank;
		wd[0] = m;
		wd[1] = c.x[1];
		for (int i = 0; i < sp; i++)
			wd[2 + i] = c.w[2 + i];
		wtag_onnx = sp == 1 ? dnnl_bac : sp == 2 ? dnnl_bacd : dnnl_bacde;
	} else { /* dims (g, o/g, i/g, k...); ONNX memory (g, i/g, o/g, k...) */
		wn = c.rank + 1;
		wd[0] = g;
		wd[1] = c.w[1];
		wd[2] = c.x[1] / g;
		for (int i = 0; i < sp; i++)
			wd[3 + i] = c.w[2 + i];
		wtag_onnx = sp == 1 ? dnnl_acbd : sp == 2 ? dnnl_acbde : dnnl_acbdef;
	}
	for (int i = 0; i < sp; i++) {
		strides[i] = c.strides[i];
		dil[i] = c.dilations[i] - 1;
		pl[i] = c.pads[i];
		pr[i] = c.pads[sp + i] - c.opad[i];
		/* oneDNN's output size must be the ONNX one */
		const int64_t out = (c.x[2 + i] - 1) * strides[i] + (c.w[2 + i] - 1) * c.dilations[i] + 1 - pl[i] - pr[i];
		if (out != c.y[2 + i])
			die("deconv.txt: y does not follow from x, W and the attributes", NULL);
	}

	dnnl_memory_desc_t x_user, y_user, w_user, b_md, x_any, y_any, w_any;
	DNNL_CHECK(dnnl_memory_desc_init_by_tag(&x_user, c.rank, xd, dnnl_f32, PLAIN[c.rank]), "describing X");
	DNNL_CHECK(dnnl_memory_desc_init_by_tag(&y_user, c.rank, yd, dnnl_f32, PLAIN[c.rank]), "describing Y");
	DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w_user, wn, wd, dnnl_f32, wtag_onnx), "describing W");
	DNNL_CHECK(dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a), "describing B");
	DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w_any, wn, wd, dnnl_f32, dnnl_format_tag_any), "describing W");
	if (blocked) {
		DNNL_CHECK(dnnl_memory_desc_init_by_tag(&x_any, c.rank, xd, dnnl_f32, dnnl_format_tag_any), "describing X");
		DNNL_CHECK(dnnl_memory_desc_init_by_tag(&y_any, c.rank, yd, dnnl_f32, dnnl_format_tag_any), "describing Y");
	} else {
		x_any = x_user;
		y_any = y_user;
	}

	dnnl_deconvolution_desc_t dd;
	dnnl_status_t st = dnnl_dilated_deconvolution_forward_desc_init(&dd, dnnl_forward_inference,
	                                                                dnnl_deconvolution_direct, &x_any, &w_any,
	                                                                c.bias ? &b_md : NULL, &y_any, strides, dil, pl, pr);
	dnnl_primitive_desc_t pd = NULL;
	if (st == dnnl_success)
		st = dnnl_primitive_desc_create(&pd, &dd, NULL, g_eng, NULL);
	if (st != dnnl_success) {
		char why[256];
		int neg = 0;
		for (int i = 0; i < sp; i++)
			neg |= pr[i] < 0;
		snprintf(why, sizeof why, "oneDNN refused the deconvolution (%s)%s", dnnl_status2str(st),
		         neg ? ": output_padding > end pads gives a negative right padding" : "");
		not_applicable(why);
	}
	const char *impl = "";
	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
	const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	const dnnl_memory_desc_t *wei_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
	const dnnl_memory_desc_t *bia_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
	char sf[64], wf[64], df[64];
	fmt_str(src_md, sf, sizeof sf);
	fmt_str(wei_md, wf, sizeof wf);
	fmt_str(dst_md, df, sizeof df);
	if (check) {
		printf("{\"case\":");
		put_json_string(g_case);
		printf(",\"layout\":\"%s\",\"check\":\"ok\",\"impl\":", layout);
		put_json_string(impl);
		printf(",\"src_fmt\":\"%s\",\"wei_fmt\":\"%s\",\"dst_fmt\":\"%s\"}\n", sf, wf, df);
		return 0;
	}

	/* data: the same input.bin, w.bin and b.bin as every other tool (X, W, B of model.onnx) */
	char path[4200];
	const size_t xbytes = (size_t)numel(c.x, c.rank) * 4, ybytes = (size_t)numel(c.y, c.rank) * 4;
	const size_t wbytes = (size_t)numel(c.w, c.rank) * 4;
	float *x = NULL;
	if (input_path) {
		x = read_file_exact(input_path, xbytes);
	} else {
		x = malloc(xbytes);
		if (!x)
			die("out of memory for the input", NULL);
		uint64_t s = 0x0DDBA11CAFEULL;
		for (size_t i = 0; i < xbytes / 4; i++) { /* the xorshift values onnxrun_bench uses */
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			x[i] = (float)((double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0);
		}
	}
	snprintf(path, sizeof path, "%s/w.bin", dir);
	float *w = read_file_exact(path, wbytes);
	float *b = NULL;
	if (c.bias) {
		snprintf(path, sizeof path, "%s/b.bin", dir);
		b = read_file_exact(path, (size_t)m * 4);
	}

	dnnl_memory_t x_mem_user = make_mem(&x_user, x), w_mem_user = make_mem(&w_user, w);
	dnnl_memory_t src = reorder_to(x_mem_user, &x_user, src_md);
	dnnl_memory_t wei = reorder_to(w_mem_user, &w_user, wei_md);
	dnnl_memory_t bia = c.bias ? make_mem(bia_md, b) : NULL;
	dnnl_memory_t dst = make_mem(dst_md, NULL);
	dnnl_primitive_t prim;
	DNNL_CHECK(dnnl_primitive_create(&prim, pd), "creating the deconvolution");
	dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}, {DNNL_ARG_BIAS, bia}};
	const int nargs = c.bias ? 4 : 3;
	const double load_ms = now_ms() - t0;

	/* warm-up, then the timed runs: as in onnxrun_bench */
	const double tw = now_ms();
	double last_ms = 0;
	long nwarm = 0;
	while (nwarm < MAX_RUNS && (nwarm < warmup || now_ms() - tw < (double)warmup_ms)) {
		last_ms = run_once(prim, nargs, args);
		nwarm++;
	}
	const long runs_requested = runs;
	if (budget_s > 0 || min_ms > 0) {
		if (nwarm == 0)
			last_ms = run_once(prim, nargs, args);
		runs = fit_runs(runs, last_ms, min_ms, budget_s);
	}
	double *t = malloc((size_t)runs * sizeof *t);
	if (!t)
		die("out of memory", NULL);
	for (long i = 0; i < runs; i++)
		t[i] = run_once(prim, nargs, args);
	double sum = 0;
	for (long i = 0; i < runs; i++)
		sum += t[i];
	const double median = median_of(t, runs);

	if (output_path) { /* back to NCHW, after the timing */
		float *y = malloc(ybytes);
		if (!y)
			die("out of memory for the output", NULL);
		dnnl_memory_t y_mem_user = make_mem(&y_user, y);
		dnnl_primitive_desc_t rpd;
		dnnl_primitive_t r;
		DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, dst_md, g_eng, &y_user, g_eng, NULL), "creating a reorder");
		DNNL_CHECK(dnnl_primitive_create(&r, rpd), "creating a reorder");
		dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, y_mem_user}};
		DNNL_CHECK(dnnl_primitive_execute(r, g_stream, 2, ra), "running a reorder");
		DNNL_CHECK(dnnl_stream_wait(g_stream), "running a reorder");
		FILE *f = fopen(output_path, "wb");
		if (!f)
			die("opening output file", output_path);
		if (fwrite(y, 1, ybytes, f) != ybytes || fclose(f) != 0)
			die("writing output file", output_path);
		dnnl_primitive_destroy(r);
		dnnl_primitive_desc_destroy(rpd);
		dnnl_memory_destroy(y_mem_user);
		free(y);
	}

	int omp_threads = 0;
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
	omp_threads = omp_get_max_threads();
#endif
	const dnnl_version_t *ver = dnnl_version();
	printf("{\"case\":");
	put_json_string(g_case);
	printf(",\"threads\":%ld,\"median_ms\":%.6f,\"min_ms\":%.6f,\"runs\":%ld,\"peak_rss_kb\":%ld,"
	       "\"warmup\":%ld,\"mean_ms\":%.6f,\"max_ms\":%.6f,\"load_ms\":%.3f,\"runs_requested\":%ld,"
	       "\"cpu_s\":%.3f,\"layout\":\"%s\",\"impl\":",
	       threads, median, t[0], runs, peak_rss_kb(), nwarm, sum / (double)runs, t[runs - 1], load_ms,
	       runs_requested, cpu_seconds(), layout);
	put_json_string(impl);
	printf(",\"src_fmt\":\"%s\",\"wei_fmt\":\"%s\",\"dst_fmt\":\"%s\",\"omp_threads\":%d,\"dnnl_version\":\"%d.%d.%d\"}\n",
	       sf, wf, df, omp_threads, ver->major, ver->minor, ver->patch);

	free(t);
	dnnl_primitive_destroy(prim);
	dnnl_primitive_desc_destroy(pd);
	if (src != x_mem_user)
		dnnl_memory_destroy(src);
	if (wei != w_mem_user)
		dnnl_memory_destroy(wei);
	dnnl_memory_destroy(x_mem_user);
	dnnl_memory_destroy(w_mem_user);
	if (bia)
		dnnl_memory_destroy(bia);
	dnnl_memory_destroy(dst);
	free(x);
	free(w);
	free(b);
	dnnl_stream_destroy(g_stream);
	dnnl_engine_destroy(g_eng);
	return 0;
}
