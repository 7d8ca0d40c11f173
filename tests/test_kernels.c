/*
 * test_kernels.c - the float32 ConvTranspose fast paths (per-phase GEMM, GEMM +
 * overlap-add, depthwise) against a naive scatter reference written here from the spec,
 * for every micro-kernel ISA this CPU runs (avx512, avx2, scalar), W as an initializer
 * (pre-packed at load) and as a graph input (packed per run), on 1, 2 and 4 threads; the
 * outputs must be bitwise identical across thread counts. Tolerances follow the reduction
 * length: |got - want| <= terms * 2^-23 * sum |x*w| + 1e-6.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "model_builder.c"
#include "kernels/kernels.h"
#include "isa_list.h"

#define MAXS 3

struct cfg {
	int n;                                    /* spatial rank */
	int64_t batch, group, cg, mg;
	int64_t in[MAXS], k[MAXS], s[MAXS], d[MAXS], pb[MAXS], pe[MAXS], op[MAXS];
	bool bias, w_input;
};

static int64_t out_dim(const struct cfg *c, int a)
{
	return c->s[a] * (c->in[a] - 1) + c->op[a] + (c->k[a] - 1) * c->d[a] + 1 - c->pb[a] - c->pe[a];
}

static int64_t prod(const int64_t *v, int n)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		p *= v[i];
	return p;
}

static void cfg_str(const struct cfg *c, char *buf, size_t len)
{
	int at = snprintf(buf, len, "n=%d N=%lld group=%lld Cg=%lld Mg=%lld bias=%d w_input=%d |", c->n,
	                  (long long)c->batch, (long long)c->group, (long long)c->cg, (long long)c->mg, c->bias,
	                  c->w_input);
	for (int a = 0; a < c->n && at < (int)len; a++)
		at += snprintf(buf + at, len - (size_t)at, " in=%lld k=%lld s=%lld d=%lld pads=%lld,%lld op=%lld |",
		               (long long)c->in[a], (long long)c->k[a], (long long)c->s[a], (long long)c->d[a],
		               (long long)c->pb[a], (long long)c->pe[a], (long long)c->op[a]);
}

/* Naive scatter (ONNX ConvTranspose: o = i*s + k*d - pad_begin) in double, with sum |x*w|. */
static void reference(const struct cfg *c, const float *x, const float *w, const float *b, double *y,
                      double *mag)
{
	int64_t out[MAXS], ii[MAXS], kk[MAXS];
	const int64_t isp = prod(c->in, c->n), ksp = prod(c->k, c->n);
	const int64_t cin = c->group * c->cg, m = c->group * c->mg;
	for (int a = 0; a < c->n; a++)
		out[a] = out_dim(c, a);
	const int64_t osp = prod(out, c->n);
	for (int64_t e = 0; e < c->batch * m * osp; e++) {
		y[e] = c->bias ? b[e / osp % m] : 0.0;
		mag[e] = 0.0;
	}
	for (int64_t nb = 0; nb < c->batch; nb++)
		for (int64_t ic = 0; ic < cin; ic++)
			for (int64_t mm = 0; mm < c->mg; mm++)
				for (int64_t ip = 0; ip < isp; ip++)
					for (int64_t kp = 0; kp < ksp; kp++) {
						int64_t r = ip, q = kp, o = 0;
						bool inside = true;
						for (int a = c->n - 1; a >= 0; a--) {
							ii[a] = r % c->in[a];
							r /= c->in[a];
							kk[a] = q % c->k[a];
							q /= c->k[a];
						}
						for (int a = 0; a < c->n; a++) {
							int64_t oa = ii[a] * c->s[a] + kk[a] * c->d[a] - c->pb[a];
							inside = inside && oa >= 0 && oa < out[a];
							o = o * out[a] + oa;
						}
						if (!inside)
							continue;
						const int64_t oc = ic / c->cg * c->mg + mm;
						const double v = (double)x[(nb * cin + ic) * isp + ip] *
						                 (double)w[(ic * c->mg + mm) * ksp + kp];
						y[(nb * m + oc) * osp + o] += v;
						mag[(nb * m + oc) * osp + o] += fabs(v);
					}
}

static void add_ints(Onnx__NodeProto *node, const char *name, const int64_t *v, int n)
{
	mb_attr_ints(node, name, (size_t)n, v);
}

/* A one-node model: X input, W initializer (or input), optional B initializer. */
static struct onnxrun_model *build(struct onnxrun_env *env, const struct cfg *c, const float *w, const float *b)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *node;
	int64_t wd[MAXS + 2], pads[2 * MAXS];
	char shape[128];
	int at;
	mb_opset(m, "", 13);
	at = snprintf(shape, sizeof shape, "%lld,%lld", (long long)c->batch, (long long)(c->group * c->cg));
	for (int a = 0; a < c->n; a++)
		at += snprintf(shape + at, sizeof shape - (size_t)at, ",%lld", (long long)c->in[a]);
	mb_input(m, "x", MB_FLOAT, shape);
	wd[0] = c->group * c->cg;
	wd[1] = c->mg;
	for (int a = 0; a < c->n; a++) {
		wd[2 + a] = c->k[a];
		pads[a] = c->pb[a];
		pads[c->n + a] = c->pe[a];
	}
	if (c->w_input) {
		at = snprintf(shape, sizeof shape, "%lld,%lld", (long long)wd[0], (long long)wd[1]);
		for (int a = 0; a < c->n; a++)
			at += snprintf(shape + at, sizeof shape - (size_t)at, ",%lld", (long long)c->k[a]);
		mb_input(m, "w", MB_FLOAT, shape);
	} else {
		mb_initializer_f32(m, "w", (size_t)c->n + 2, wd, w);
	}
	if (c->bias)
		mb_initializer_f32(m, "b", 1, (int64_t[]){ c->group * c->mg }, b);
	mb_output(m, "y", MB_FLOAT, NULL);
	node = mb_node(m, "ct", "ConvTranspose", "", c->bias ? "x,w,b" : "x,w", "y");
	add_ints(node, "strides", c->s, c->n);
	add_ints(node, "dilations", c->d, c->n);
	add_ints(node, "output_padding", c->op, c->n);
	add_ints(node, "pads", pads, 2 * c->n);
	if (c->group > 1)
		mb_attr_int(node, "group", c->group);
	return th_load_ok(env, m);
}

/* Runs the model on `threads` threads; returns a malloc'd copy of y. */
static float *run(struct onnxrun_model *model, const struct cfg *c, struct onnxrun_tensor *x,
                  struct onnxrun_tensor *wt, int threads, size_t *ny)
{
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y;
	float *copy;
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "x", x), ONNXRUN_OK, onnxrun_session_error(s));
	if (c->w_input)
		TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "w", wt), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	/* a second run reuses the pool and the packed state */
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	*ny = (size_t)onnxrun_tensor_numel(y);
	copy = malloc(*ny * sizeof *copy + 1);
	memcpy(copy, onnxrun_tensor_data(y), *ny * sizeof *copy);
	onnxrun_session_free(s);
	return copy;
}

/* The thread counts check_config runs each config with (0-terminated), the first giving the
 * output the others must match bit for bit. */
static const int threads_default[] = { 1, 2, 4, 0 }, threads_1_to_3[] = { 1, 2, 3, 0 },
                 threads_1_to_4[] = { 1, 2, 3, 4, 0 };
static const int *check_threads = threads_default;

static int check_config(const struct cfg *c, uint64_t seed, long *compared)
{
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	int64_t xd[MAXS + 2], wd[MAXS + 2], out[MAXS];
	const int64_t cin = c->group * c->cg, ksp = prod(c->k, c->n);
	char desc[512];
	int failures = 0;
	xd[0] = c->batch;
	xd[1] = cin;
	wd[0] = cin;
	wd[1] = c->mg;
	for (int a = 0; a < c->n; a++) {
		xd[2 + a] = c->in[a];
		wd[2 + a] = c->k[a];
		out[a] = out_dim(c, a);
	}
	const size_t nx = th_numel(c->n + 2, xd), nw = th_numel(c->n + 2, wd);
	const size_t ny_want = (size_t)(c->batch * c->group * c->mg * prod(out, c->n));
	float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc((size_t)(c->group * c->mg) * 4);
	double *ref = malloc(ny_want * sizeof *ref), *mag = malloc(ny_want * sizeof *mag);
	th_rng_seed(&rng, seed);
	for (size_t i = 0; i < nx; i++)
		x[i] = (float)(th_rng_next(&rng) % 20001) * 1e-4f - 1.0f; /* not exact: real rounding */
	for (size_t i = 0; i < nw; i++)
		w[i] = (float)(th_rng_next(&rng) % 20001) * 1e-4f - 1.0f;
	for (int64_t i = 0; i < c->group * c->mg; i++)
		b[i] = th_rng_float(&rng);
	reference(c, x, w, b, ref, mag);
	cfg_str(c, desc, sizeof desc);
	struct onnxrun_tensor *xt = th_tensor_f32(env, c->n + 2, xd, x), *wt = th_tensor_f32(env, c->n + 2, wd, w);
	const double terms = (double)(c->cg * ksp + 1);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		struct onnxrun_model *model = build(env, c, w, b);
		float *first = NULL;
		for (int ti = 0; check_threads[ti]; ti++) {
			const int threads = check_threads[ti];
			size_t ny;
			float *y = run(model, c, xt, wt, threads, &ny);
			assert_int_equal(ny, ny_want);
			if (!first) {
				for (size_t e = 0; e < ny; e++) {
					double tol = terms * FLT_EPSILON * mag[e] + 1e-6;
					if (!(fabs((double)y[e] - ref[e]) <= tol)) {
						if (failures++ < 5)
							print_message("isa=%d element %lu: got %.9g, want %.9g (tol %.3g): "
							              "seed=%llu %s\n", (int)isas[ii], (unsigned long)e, (double)y[e], ref[e],
							              tol, (unsigned long long)seed, desc);
					}
				}
				*compared += (long)ny;
				first = y;
				continue;
			}
			if (memcmp(first, y, ny * sizeof *y)) {
				if (failures++ < 5)
					print_message("isa=%d threads=%d differs bitwise from threads=1: seed=%llu %s\n",
					              (int)isas[ii], threads, (unsigned long long)seed, desc);
			}
			free(y);
		}
		free(first);
		onnxrun_model_free(model);
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	onnxrun_tensor_free(xt);
	onnxrun_tensor_free(wt);
	onnxrun_env_free(env);
	free(x);
	free(w);
	free(b);
	free(ref);
	free(mag);
	return failures;
}

static int64_t rnd(struct th_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(th_rng_next(r) % (uint64_t)(hi - lo + 1));
}

enum family { FAM_PHASE, FAM_COL2IM, FAM_DW };

/* A random config aimed at one fast path (the ranks and channel counts decide the path). */
static void random_cfg(struct th_rng *r, enum family fam, struct cfg *c)
{
	memset(c, 0, sizeof *c);
	c->n = fam == FAM_PHASE ? (int)rnd(r, 1, 3) : (int)rnd(r, 1, 2);
	c->batch = rnd(r, 1, 3);
	c->group = rnd(r, 1, fam == FAM_DW ? 6 : 2);
	c->cg = fam == FAM_DW ? 1 : fam == FAM_COL2IM ? rnd(r, 4, 24) : rnd(r, 1, 24);
	c->mg = fam == FAM_DW ? 1 : fam == FAM_COL2IM ? rnd(r, 1, 4) : rnd(r, 5, 40);
	c->bias = rnd(r, 0, 3) != 0;
	c->w_input = rnd(r, 0, 3) == 0;
	for (int a = 0; a < c->n; a++) {
		int64_t natural;
		c->in[a] = rnd(r, 1, c->n == 1 ? 70 : c->n == 2 ? 19 : 7);
		c->k[a] = rnd(r, 1, fam == FAM_COL2IM && c->n == 1 ? 12 : 5);
		c->s[a] = rnd(r, 1, 4);
		c->d[a] = rnd(r, 0, 3) == 0 ? rnd(r, 2, 3) : 1;
		c->op[a] = rnd(r, 0, (c->s[a] > c->d[a] ? c->s[a] : c->d[a]) - 1);
		natural = c->s[a] * (c->in[a] - 1) + c->op[a] + (c->k[a] - 1) * c->d[a] + 1;
		c->pb[a] = rnd(r, 0, natural / 2 < 4 ? natural / 2 : 4);
		c->pe[a] = rnd(r, 0, (natural - 1 - c->pb[a]) < 4 ? natural - 1 - c->pb[a] : 4);
	}
	if (fam == FAM_COL2IM && c->mg * prod(c->k, c->n) < 8)
		c->k[0] += 8; /* keep it on the overlap-add path (rows = Mg x taps >= 8) */
}

static void run_family(enum family fam, int count, uint64_t base)
{
	struct th_rng r;
	long compared = 0;
	int failures = 0;
	th_rng_seed(&r, base);
	for (int i = 0; i < count; i++) {
		struct cfg c;
		random_cfg(&r, fam, &c);
		failures += check_config(&c, base * 100000 + (uint64_t)i, &compared);
	}
	print_message("%d configs, %ld elements compared per ISA-run, %d failures\n", count, compared, failures);
	assert_int_equal(failures, 0);
}

static void test_phase_random(void **state)
{
	(void)state;
	run_family(FAM_PHASE, th_scaled(150), 1);
}

static void test_col2im_random(void **state)
{
	(void)state;
	run_family(FAM_COL2IM, th_scaled(150), 2);
}

static void test_depthwise_random(void **state)
{
	(void)state;
	run_family(FAM_DW, th_scaled(150), 3);
}

/* check_config over a list (seeds seed0 + index); fails the test on any mismatch. */
static void check_configs(const struct cfg *cases, size_t n, uint64_t seed0, const char *what)
{
	long compared = 0;
	int failures = 0;
	for (size_t i = 0; i < n; i++)
		if (th_scaled_keep(i))
			failures += check_config(&cases[i], seed0 + i, &compared);
	/* %lu, not %zu: newlib's printf (the Cortex-M firmware) has no C99 length modifiers */
	print_message("%lu %s configs, %ld elements compared, %d failures\n", (unsigned long)n, what, compared,
	              failures);
	assert_int_equal(failures, 0);
}

/* Scaled-down suite shapes: each fast path's typical use, plus panel/tile remainders. */
static void test_suite_like(void **state)
{
	static const struct cfg cases[] = {
		/* dcgan k4 s2 p1 */
		{ 2, 1, 1, 48, 40, { 8, 8 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* unet k2 s2 with an output over 8 MiB (non-temporal paired stores) */
		{ 2, 1, 1, 2, 40, { 128, 128 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, true, false },
		/* unet k2 s2, batch 3 */
		{ 2, 3, 1, 16, 24, { 9, 13 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, true, false },
		/* k3 s1 p1 with W fed at run time */
		{ 2, 1, 1, 8, 17, { 21, 33 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, true },
		/* hifigan k16 s8 p4 */
		{ 1, 1, 1, 32, 24, { 37 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 0 }, true, false },
		/* istft-like: 1 output channel, long kernel */
		{ 1, 1, 1, 30, 1, { 21 }, { 64 }, { 16 }, { 1 }, { 24 }, { 24 }, { 0 }, true, false },
		/* fsrcnn-like k9 s3 p4 op2 */
		{ 2, 1, 1, 12, 1, { 17, 23 }, { 9, 9 }, { 3, 3 }, { 1, 1 }, { 4, 4 }, { 4, 4 }, { 2, 2 }, true, false },
		/* dcgan_64_3-like */
		{ 2, 1, 1, 16, 3, { 24, 20 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* 3-D k3 s2 p1 op1 */
		{ 3, 1, 1, 8, 12, { 5, 6, 7 }, { 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
		  { 1, 1, 1 }, true, false },
		/* depthwise and grouped */
		{ 2, 2, 16, 1, 1, { 20, 18 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		{ 2, 1, 4, 16, 16, { 12, 12 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* weights of a phase class over 1 MiB: each weight panel runs over several B
		 * panels (chunks of panels, partial panels, runs crossing rows and batches) */
		{ 1, 2, 1, 256, 80, { 90 }, { 16 }, { 8 }, { 1 }, { 0 }, { 0 }, { 0 }, true, false },
		{ 2, 1, 1, 128, 272, { 13, 37 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		{ 2, 1, 1, 256, 272, { 12, 45 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, false, true },
		/* the same class sizes under 1 MiB (one B panel at a time) */
		{ 1, 1, 1, 128, 72, { 90 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 0 }, true, false },
	};
	(void)state;
	check_configs(cases, sizeof cases / sizeof cases[0], 900, "suite-like");
}

/* Batch 1, 2-D and 3-D, rows of 16 or 32+ positions per phase, output channels enough for
 * the calls per panel: the per-tile staged copy of x (ops/conv_transpose/phase.c, B rows at
 * one or two bases + offset). Zero pads on both sides, rows above and below x, dilation,
 * asymmetric pads, output padding, panel remainders at row ends, several tiles and groups. */
static void test_staged_rows(void **state)
{
	static const struct cfg cases[] = {
		/* grouped k4 s2 p1: two 32-wide panels per row, one zero column each side */
		{ 2, 1, 4, 8, 32, { 20, 64 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* k3 s1 p1, a row end that is not a whole panel, 40 channels (four 10-row weight panels) */
		{ 2, 1, 1, 6, 40, { 9, 70 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* dilation 2, asymmetric pads, output padding, 33 channels */
		{ 2, 1, 1, 5, 33, { 11, 67 }, { 3, 3 }, { 2, 2 }, { 2, 2 }, { 2, 0 }, { 1, 3 }, { 1, 1 }, false, false },
		/* pads that crop most of the kernel on one side (wide zero pads in the copy) */
		{ 2, 1, 2, 4, 32, { 7, 40 }, { 5, 5 }, { 1, 1 }, { 1, 1 }, { 4, 0 }, { 0, 4 }, { 0, 0 }, true, false },
		/* stride 3 with kernel 2: a phase with no taps */
		{ 2, 1, 1, 4, 32, { 6, 40 }, { 2, 2 }, { 3, 3 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, true, false },
		/* W fed at run time */
		{ 2, 1, 1, 7, 48, { 13, 35 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, true },
		/* grid rows of half a panel (16 positions): each panel is two staged rows, one base
		 * each (rel2); rows of 48 mix one- and two-base panels; k4 s2 p1 and a pad that
		 * reads a column of zeros on the right only */
		{ 2, 1, 1, 16, 40, { 16, 16 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		{ 2, 1, 2, 6, 40, { 9, 48 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 2 }, { 2, 0 }, { 0, 0 }, true, false },
		/* 3-D: blocks of [depth row][channel][padded rows][padded columns], k3 s2 p1 op1 with
		 * 16-wide phase rows (two-base panels) and k2 s2 (one tap per phase) with 32-wide */
		{ 3, 1, 1, 12, 16, { 5, 6, 16 }, { 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
		  { 1, 1, 1 }, true, false },
		{ 3, 1, 1, 9, 12, { 4, 3, 32 }, { 2, 2, 2 }, { 2, 2, 2 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 },
		  { 0, 0, 0 }, false, false },
		/* 3-D with dilation and asymmetric pads on the middle axis (zero rows in the blocks) */
		{ 3, 1, 2, 5, 32, { 4, 5, 32 }, { 2, 3, 3 }, { 1, 1, 1 }, { 1, 2, 1 }, { 0, 3, 1 }, { 1, 0, 1 },
		  { 0, 0, 0 }, true, true },
	};
	(void)state;
	check_configs(cases, sizeof cases / sizeof cases[0], 1900, "staged-row");
}

/* 3-D layers and groups of 16 and 32 output channels (the suite's 3d_32_16, 3d_64_32 and
 * grouped_g8, scaled down): staged 16-wide phase rows (two bases per panel) and 32-wide
 * ones, phases paired across the last axis (partner classes, k3 s2 p1 op1) and phases of
 * one class stored in pairs (k2 s2, packed panels), several tiles of staged rows, with 1, 2
 * and 3 threads. */
static void test_3d_and_grouped(void **state)
{
	static const struct cfg cases[] = {
		/* 3d_32_16-like: k3 s2 p1 op1, 16 output channels, 16-wide input rows */
		{ 3, 1, 1, 8, 16, { 6, 5, 16 }, { 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
		  { 1, 1, 1 }, true, false },
		/* the same with 32 output channels and 32-wide rows, W fed at run time */
		{ 3, 1, 1, 6, 32, { 5, 3, 32 }, { 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
		  { 1, 1, 1 }, false, true },
		/* 3d_64_32-like: k2 s2, 32 output channels, 16-wide rows (every phase one class) */
		{ 3, 1, 1, 24, 32, { 4, 4, 16 }, { 2, 2, 2 }, { 2, 2, 2 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 },
		  { 0, 0, 0 }, true, false },
		/* k2 s2 with 16 output channels and rows of 7 (runs across grid rows) */
		{ 3, 1, 1, 10, 16, { 5, 6, 7 }, { 2, 2, 2 }, { 2, 2, 2 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 },
		  { 0, 0, 0 }, true, false },
		/* grouped_g8-like: k4 s2 p1, 3 groups of 32 output channels, 32-wide rows */
		{ 2, 1, 3, 8, 32, { 10, 32 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* 2 groups of 16, k3 s2 p1 op1 in 3-D */
		{ 3, 1, 2, 4, 16, { 4, 4, 16 }, { 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
		  { 1, 1, 1 }, true, false },
	};
	(void)state;
	check_threads = threads_1_to_3;
	check_configs(cases, sizeof cases / sizeof cases[0], 3100, "3-D and grouped");
	check_threads = threads_default;
}

/* Kernel = stride without pads (every phase one tap at its own grid position): the wide B
 * panels of an aligned range of positions packed together (ops/conv_transpose/phase.c,
 * dense_panel), enough output channels per phase that panels are packed, not read in
 * place. Ranges that cross from one image into the next (grid sizes not a multiple of 32),
 * several ranges per image (128 input channels: 16 panels a range), groups, remainder
 * panels, ranks 1 to 3, with 1 to 4 threads. */
static void test_dense_panels(void **state)
{
	static const struct cfg cases[] = {
		/* 1-D k4 s4, 3 images of 300 */
		{ 1, 3, 1, 128, 40, { 300 }, { 4 }, { 4 }, { 1 }, { 0 }, { 0 }, { 0 }, true, false },
		/* unet-like 2-D k2 s2: images of 11 x 40 (440 positions), several ranges */
		{ 2, 2, 1, 128, 40, { 11, 40 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, true, false },
		/* 2 groups, k3 s3 (9 phases), W fed at run time */
		{ 2, 2, 2, 20, 24, { 7, 30 }, { 3, 3 }, { 3, 3 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, false, true },
		/* 3-D k2 s2, images of 3 x 5 x 9 (135 positions) */
		{ 3, 3, 1, 64, 33, { 3, 5, 9 }, { 2, 2, 2 }, { 2, 2, 2 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 },
		  { 0, 0, 0 }, true, false },
	};
	(void)state;
	check_threads = threads_1_to_4;
	check_configs(cases, sizeof cases / sizeof cases[0], 3400, "dense-panel");
	check_threads = threads_default;
}

/* Staged x with a slot for every input row of a group (ops/conv_transpose/phase.c,
 * stage_whole): consecutive tiles stage only the rows the last one did not, a new group or a
 * tile taken out of order (another thread's range) starts afresh. Random 2-D and 3-D layers
 * of batch 1 whose last-axis phase rows are 16 or 32 wide (every panel staged: k4 s2 p1, k3
 * s2 p1 op1 and k3 s1 p1 per axis), 1 to 3 groups, enough rows for several tiles, on 1 to 4
 * threads under every ISA. */
static void test_staged_whole_rows(void **state)
{
	enum { NCASES = 12 };
	struct cfg cases[NCASES];
	struct th_rng r;
	(void)state;
	th_rng_seed(&r, 3300);
	for (int i = 0; i < NCASES; i++) {
		struct cfg *c = &cases[i];
		memset(c, 0, sizeof *c);
		c->n = (int)rnd(&r, 2, 3);
		c->batch = 1;
		c->group = rnd(&r, 1, 3);
		c->cg = rnd(&r, 2, 12);
		c->mg = rnd(&r, 12, 36);
		c->bias = rnd(&r, 0, 3) != 0;
		c->w_input = rnd(&r, 0, 3) == 0;
		for (int a = 0; a < c->n; a++) {
			const int64_t kind = rnd(&r, 0, 2); /* k4 s2 p1, k3 s2 p1 op1, k3 s1 p1 */
			c->k[a] = kind == 0 ? 4 : 3;
			c->s[a] = kind == 2 ? 1 : 2;
			c->d[a] = 1;
			c->pb[a] = c->pe[a] = 1;
			c->op[a] = kind == 1;
			c->in[a] = a == c->n - 1 ? 16 * rnd(&r, 1, 2) : rnd(&r, 3, c->n == 2 ? 40 : 10);
		}
	}
	check_threads = threads_1_to_4;
	check_configs(cases, NCASES, 3300, "whole-staged");
	check_threads = threads_default;
}

/* Rank 1 in rows mode: panels whose taps all read inside x take their B rows in place at
 * one base + offsets (ops/conv_transpose/phase.c, in_place_rel), panels at the ends of x
 * row pointers with zeros. Long rows (many interior panels), batches and groups (the base
 * moves by whole channel blocks), dilation, output padding, uneven pads. */
static void test_rows_in_place_1d(void **state)
{
	static const struct cfg cases[] = {
		/* hifigan k4 s2 p1: 300 positions per phase */
		{ 1, 1, 1, 16, 24, { 300 }, { 4 }, { 2 }, { 1 }, { 1 }, { 1 }, { 0 }, true, false },
		/* batch 2, 2 groups, k5 s3 dilation 2, uneven pads, output padding */
		{ 1, 2, 2, 8, 20, { 150 }, { 5 }, { 3 }, { 2 }, { 2 }, { 3 }, { 1 }, true, false },
		/* stride 1, k7 (every panel reads 7 taps), W fed at run time */
		{ 1, 1, 1, 6, 33, { 97 }, { 7 }, { 1 }, { 1 }, { 3 }, { 3 }, { 0 }, false, true },
	};
	(void)state;
	check_configs(cases, sizeof cases / sizeof cases[0], 2400, "rank-1 in-place");
}

/* Panel remainders of at most 8 positions (the narrowest tile) in packed panels: several
 * A panels per call of the kernels' rem (AVX-512: the phases of a class, or consecutive
 * weight panels, 4 x 4 or 2 x 8 accumulators), panels of 11 and 12 rows, groups of A panels
 * cut short at the end of an item, with 1, 2 and 4 threads moving the tile boundaries. */
static void test_remainder_panels(void **state)
{
	static const struct cfg cases[] = {
		/* hifigan k16 s8 p4: 36 positions per phase (32 + 4), 4 phases per class, 100
		 * channels (9 weight panels of 11-12 rows) */
		{ 1, 1, 1, 48, 100, { 36 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 0 }, true, false },
		/* the same with 6-position remainders (8-column tiles, an odd panel), batch 2 */
		{ 1, 2, 1, 40, 70, { 38 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 0 }, false, false },
		/* stride 1: one phase per class, remainders of 3 over consecutive weight panels */
		{ 1, 1, 1, 20, 67, { 35 }, { 3 }, { 1 }, { 1 }, { 1 }, { 1 }, { 0 }, true, false },
		/* 2-D stride 3 (no paired stores), 2 groups, W fed at run time */
		{ 2, 1, 2, 12, 50, { 5, 7 }, { 3, 3 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 1 }, { 0, 0 }, true, true },
	};
	(void)state;
	check_configs(cases, sizeof cases / sizeof cases[0], 2700, "remainder-panel");
}

/* Whole-line stores of the phases of a last axis (the table's store_lines, taken at the
 * strides of its lines_strides: AVX-512 4 and 8; ops/conv_transpose/phase.c line_classes):
 * one class of all s phases, two classes at grid positions q and q + 1 (k16 s8 p4), several
 * lines per class pair (rank 2 and 3), batches, groups, uneven pads, output padding that
 * keeps whole lines and output padding that does not (per-phase stores), remainder panels,
 * an output over 4 MiB (non-temporal stores); strides 3, 5, 6 and 7 (per-phase stores); on
 * 1 to 4 threads under every ISA. */
static void test_line_stores(void **state)
{
	static const struct cfg cases[] = {
		/* hifigan k16 s8 p4: two classes of 4 phases, 100 positions (3 panels + 4) */
		{ 1, 1, 1, 24, 30, { 100 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 0 }, true, false },
		/* k16 s8 pads 0, 8: one class of 8 phases; batch 2, W fed at run time */
		{ 1, 2, 1, 20, 13, { 70 }, { 16 }, { 8 }, { 1 }, { 0 }, { 8 }, { 0 }, false, true },
		/* k16 s8 pads 4, 5 and output padding 1: whole lines */
		{ 1, 1, 1, 12, 25, { 64 }, { 16 }, { 8 }, { 1 }, { 4 }, { 5 }, { 1 }, true, false },
		/* s8 k16 p4 with output padding 3: phases of unequal length, the per-phase stores */
		{ 1, 1, 1, 16, 24, { 40 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 3 }, true, false },
		/* k4 s4 p0: one class of 4 phases; 2 groups */
		{ 1, 1, 2, 14, 19, { 61 }, { 4 }, { 4 }, { 1 }, { 0 }, { 0 }, { 0 }, true, false },
		/* k8 s4 pads 3, 1 (uneven), batch 2 */
		{ 1, 2, 1, 16, 17, { 77 }, { 8 }, { 4 }, { 1 }, { 3 }, { 1 }, { 0 }, true, false },
		/* k8 s4 pads 2, 3, output padding 1: whole lines */
		{ 1, 1, 1, 9, 30, { 50 }, { 8 }, { 4 }, { 1 }, { 2 }, { 3 }, { 1 }, false, false },
		/* rank 2, last axis s8 k16 p4 */
		{ 2, 1, 1, 12, 20, { 4, 24 }, { 3, 16 }, { 2, 8 }, { 1, 1 }, { 1, 4 }, { 1, 4 }, { 0, 0 }, true, false },
		/* rank 2, k2 s2 on the first axis: both of its residues in one class, so two lines
		 * per class pair (last axis s4 k8 p2) */
		{ 2, 1, 1, 10, 15, { 6, 20 }, { 2, 8 }, { 2, 4 }, { 1, 1 }, { 0, 2 }, { 0, 2 }, { 0, 0 }, true, false },
		/* rank 3, four lines per class pair (k2 s2 on the first two axes, last s4 k8 p2) */
		{ 3, 2, 1, 5, 11, { 3, 4, 10 }, { 2, 2, 8 }, { 2, 2, 4 }, { 1, 1, 1 }, { 0, 0, 2 }, { 0, 0, 2 }, { 0, 0, 0 },
		  true, true },
		/* k16 s8 p4 with a 4 MiB output: non-temporal line stores */
		{ 1, 1, 1, 8, 64, { 2048 }, { 16 }, { 8 }, { 1 }, { 4 }, { 4 }, { 0 }, true, false },
		/* strides without a vector interleave: s3 k6 pads 1, 2 (batch 2, 2 groups), s5 k5
		 * output padding 1, s6 k12 pads 5, 1, s7 k14 pads 2, 5 */
		{ 1, 2, 2, 9, 14, { 50 }, { 6 }, { 3 }, { 1 }, { 1 }, { 2 }, { 0 }, true, false },
		{ 1, 1, 1, 12, 25, { 64 }, { 5 }, { 5 }, { 1 }, { 0 }, { 1 }, { 1 }, true, false },
		{ 1, 1, 1, 8, 20, { 45 }, { 12 }, { 6 }, { 1 }, { 5 }, { 1 }, { 0 }, true, false },
		{ 1, 1, 1, 10, 12, { 33 }, { 14 }, { 7 }, { 1 }, { 2 }, { 5 }, { 0 }, false, false },
	};
	(void)state;
	check_threads = threads_1_to_4;
	check_configs(cases, sizeof cases / sizeof cases[0], 2900, "line-store");
	check_threads = threads_default;
}

/* The table's phase.pack and phase.store on panels of many short runs (a batch of small
 * images: runs of 1 to 16 positions, their x reads continuing one another or not, with zeros
 * at either end), every panel width of the table, against references written from
 * kernels.h's description: pack's row c*nt + t holds each run's copied floats with their
 * zeros (the columns after the runs zero, as the phase path clears them); store writes
 * tile + bias at run.yoff + e*sl for strides 1 to 4 and nothing else, store_pair (where the
 * table has it) the two tiles' values alternately. Bit for bit. */
static void test_pack_store_short_runs(void **state)
{
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	int tables = 0, failures = 0;
	const uint64_t seed = 0x5a17;
	(void)state;
	th_rng_seed(&rng, seed);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		const struct onnxrun__kernels *kt = onnxrun__kernels_current();
		tables++;
		for (int trial = 0; trial < 600 && failures < 5; trial++) {
			struct onnxrun__kpanel kp;
			struct onnxrun__krun runs[32];
			struct onnxrun__kcopy cp[6 * 32];
			const int64_t v = rnd(&rng, 0, 2), nr = kt->gemm->nr[v], cnt = rnd(&rng, 1, nr);
			const int64_t nt = rnd(&rng, 1, 6), cg = rnd(&rng, 1, 4), in_sp = 300, lmax = rnd(&rng, 1, 16);
			const bool continuing = rnd(&rng, 0, 2) > 0;
			int64_t nrun = 0;
			for (int64_t col = 0; col < cnt; nrun++) {
				const int64_t len = rnd(&rng, 1, lmax < cnt - col ? lmax : cnt - col);
				runs[nrun].col = col;
				runs[nrun].len = len;
				runs[nrun].yoff = 0;
				col += len;
			}
			for (int64_t t = 0; t < nt; t++) {
				/* continuing: lane L of the panel reads x at base + L (a run may start in
				 * another image: a new base) */
				int64_t base = rnd(&rng, 0, in_sp - nr);
				for (int64_t r = 0; r < nrun; r++) {
					struct onnxrun__kcopy *c = &cp[t * nrun + r];
					const int64_t len = runs[r].len, zlo = rnd(&rng, 0, 3) ? 0 : rnd(&rng, 0, len);
					const int64_t n = rnd(&rng, 0, 3) ? len - zlo : rnd(&rng, 0, len - zlo);
					if (!continuing || rnd(&rng, 0, 3) == 0)
						base = rnd(&rng, 0, in_sp - nr);
					c->zlo = (onnxrun__kcount)zlo;
					c->n = (onnxrun__kcount)n;
					c->zhi = (onnxrun__kcount)(len - zlo - n);
					c->src = n ? base + runs[r].col + zlo : -1;
				}
			}
			kp.cg = cg;
			kp.in_sp = in_sp;
			kp.out_sp = 1;
			kp.sl = 1;
			kp.stream = false;
			const size_t nb = (size_t)(cg * nt * nr);
			float *x = malloc((size_t)(cg * in_sp) * sizeof *x), *bp = malloc(nb * sizeof *bp),
			      *ref = malloc(nb * sizeof *ref);
			assert_true(x && bp && ref);
			for (int64_t e = 0; e < cg * in_sp; e++)
				x[e] = e % 11 == 5 ? -0.0f : th_rng_float(&rng);
			for (size_t e = 0; e < nb; e++)
				bp[e] = ref[e] = cnt < nr ? 0.0f : NAN; /* the phase path clears a short panel */
			for (int64_t c = 0; c < cg; c++)
				for (int64_t t = 0; t < nt; t++)
					for (int64_t r = 0; r < nrun; r++) {
						const struct onnxrun__kcopy *q = &cp[t * nrun + r];
						float *row = ref + (c * nt + t) * nr + runs[r].col;
						for (int64_t e = 0; e < runs[r].len; e++)
							row[e] = e >= q->zlo && e < q->zlo + q->n ? x[c * in_sp + q->src + e - q->zlo] : 0.0f;
					}
			kt->phase.pack(&kp, x, nt, nr, runs, nrun, cp, bp);
			if (memcmp(bp, ref, nb * sizeof *bp)) {
				failures++;
				print_message("%s: pack differs from the reference: seed 0x%llx trial %d nr=%lld runs=%lld nt=%lld\n",
				              kt->name, (unsigned long long)seed, trial, (long long)nr, (long long)nrun, (long long)nt);
			}
			/* store: the same runs at gaps of 0 to 2 outputs, stride 1 to 4 */
			const int64_t sl = rnd(&rng, 1, 4), mr = rnd(&rng, 1, kt->gemm->mr_max), ydelta = rnd(&rng, 0, 3);
			const bool with_bias = rnd(&rng, 0, 1);
			int64_t yoff = 0;
			for (int64_t r = 0; r < nrun; r++) {
				runs[r].yoff = yoff;
				yoff += (runs[r].len - 1) * sl + 1 + rnd(&rng, 0, 2);
			}
			kp.sl = sl;
			kp.out_sp = yoff + ydelta + rnd(&rng, 0, 5);
			const size_t ny = (size_t)(2 * mr * kp.out_sp);
			float *tile = malloc((size_t)(mr * nr) * sizeof *tile), *bias = malloc((size_t)mr * sizeof *bias);
			float *y = malloc(ny * sizeof *y), *yref = malloc(ny * sizeof *yref);
			assert_true(tile && bias && y && yref);
			for (int64_t e = 0; e < mr * nr; e++)
				tile[e] = e % 7 == 3 ? -0.0f : th_rng_float(&rng);
			for (int64_t e = 0; e < mr; e++)
				bias[e] = th_rng_float(&rng);
			for (size_t e = 0; e < ny; e++)
				y[e] = yref[e] = (float)e;
			for (int64_t i = 0; i < mr; i++)
				for (int64_t r = 0; r < nrun; r++)
					for (int64_t e = 0; e < runs[r].len; e++)
						yref[i * kp.out_sp + ydelta + runs[r].yoff + e * sl] =
							tile[i * nr + runs[r].col + e] + (with_bias ? bias[i] : 0.0f);
			kt->phase.store(&kp, tile, nr, mr, runs, nrun, y, ydelta, with_bias ? bias : NULL);
			if (memcmp(y, yref, ny * sizeof *y)) {
				failures++;
				print_message("%s: store differs from the reference: seed 0x%llx trial %d nr=%lld runs=%lld sl=%lld "
				              "mr=%lld\n", kt->name, (unsigned long long)seed, trial, (long long)nr, (long long)nrun,
				              (long long)sl, (long long)mr);
			}
			/* store_pair: a second tile's values right after each of the first's (stride 2) */
			if (kt->phase.store_pair) {
				float *tile1 = malloc((size_t)(mr * nr) * sizeof *tile1);
				assert_non_null(tile1);
				for (int64_t e = 0; e < mr * nr; e++)
					tile1[e] = e % 5 == 1 ? -0.0f : th_rng_float(&rng);
				yoff = 0;
				for (int64_t r = 0; r < nrun; r++) {
					runs[r].yoff = yoff;
					yoff += 2 * runs[r].len + rnd(&rng, 0, 2);
				}
				kp.sl = 2;
				kp.out_sp = yoff + ydelta + rnd(&rng, 0, 5);
				const size_t np2 = (size_t)(2 * mr * kp.out_sp);
				float *y2 = malloc(np2 * sizeof *y2), *y2ref = malloc(np2 * sizeof *y2ref);
				assert_true(y2 && y2ref);
				for (size_t e = 0; e < np2; e++)
					y2[e] = y2ref[e] = (float)e;
				for (int64_t i = 0; i < mr; i++)
					for (int64_t r = 0; r < nrun; r++)
						for (int64_t e = 0; e < runs[r].len; e++) {
							float *d = y2ref + i * kp.out_sp + ydelta + runs[r].yoff + 2 * e;
							d[0] = tile[i * nr + runs[r].col + e] + (with_bias ? bias[i] : 0.0f);
							d[1] = tile1[i * nr + runs[r].col + e] + (with_bias ? bias[i] : 0.0f);
						}
				kt->phase.store_pair(&kp, tile, tile1, nr, mr, runs, nrun, y2, ydelta, with_bias ? bias : NULL);
				if (memcmp(y2, y2ref, np2 * sizeof *y2)) {
					failures++;
					print_message("%s: store_pair differs from the reference: seed 0x%llx trial %d nr=%lld runs=%lld "
					              "mr=%lld\n", kt->name, (unsigned long long)seed, trial, (long long)nr,
					              (long long)nrun, (long long)mr);
				}
				free(tile1);
				free(y2);
				free(y2ref);
			}
			free(x);
			free(bp);
			free(ref);
			free(tile);
			free(bias);
			free(y);
			free(yref);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("pack and store on short runs checked in %d kernel tables, %d failures\n", tables, failures);
	assert_int_equal(failures, 0);
}

/* The table's store_lines against sl calls of its store, bit for bit (bias or none: -0.0 +
 * 0.0 included), strides 3 to 16, runs of 1 to 32 positions at any output offset, mr 1 to
 * mr_max rows, plain and streamed outputs. */
static void test_store_lines_kernel(void **state)
{
#ifdef ONNXRUN_BAREMETAL /* no bare-metal table has store_lines */
	(void)state;
	skip();
#else
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	int tables = 0, failures = 0;
	(void)state;
	th_rng_seed(&rng, 0x11e5);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		const struct onnxrun__kernels *kt = onnxrun__kernels_current();
		if (!kt->phase.store_lines)
			continue;
		tables++;
		const int64_t nr = 32, mr_max = kt->gemm->mr_max, tstride = mr_max * nr + 3;
		for (int trial = 0; trial < 400 && failures < 5; trial++) {
			struct onnxrun__kpanel kp;
			struct onnxrun__krun runs[4];
			const int64_t sl = rnd(&rng, 3, 16), mr = rnd(&rng, 1, mr_max), nrun = rnd(&rng, 1, 4);
			const bool with_bias = rnd(&rng, 0, 1);
			int64_t col = 0, yoff = rnd(&rng, 0, 40);
			for (int64_t r = 0; r < nrun; r++) { /* runs of the 32 columns, gaps between outputs */
				runs[r].col = col;
				runs[r].len = r == nrun - 1 ? nr - col : rnd(&rng, 1, nr - col - (nrun - 1 - r));
				runs[r].yoff = yoff;
				col += runs[r].len;
				yoff += runs[r].len * sl + rnd(&rng, 0, 2) * 16 + rnd(&rng, 0, 1);
			}
			kp.cg = 1;
			kp.in_sp = 1;
			kp.sl = sl;
			kp.out_sp = yoff + rnd(&rng, 0, 20);
			kp.stream = rnd(&rng, 0, 1);
			const size_t ny = (size_t)(2 * mr * kp.out_sp) + 64, nt = (size_t)(sl * tstride);
			float *tiles = malloc(nt * sizeof *tiles), *bias = malloc(16 * sizeof *bias);
			float *raw0 = malloc((ny + 16) * sizeof(float)), *raw1 = malloc((ny + 16) * sizeof(float));
			assert_true(tiles && bias && raw0 && raw1);
			/* 64-byte aligned outputs so whole vectors may be streamed */
			float *y0 = raw0 + (16 - ((uintptr_t)raw0 / sizeof(float)) % 16) % 16;
			float *y1 = raw1 + (16 - ((uintptr_t)raw1 / sizeof(float)) % 16) % 16;
			for (size_t e = 0; e < nt; e++)
				tiles[e] = e % 7 == 3 ? -0.0f : th_rng_float(&rng);
			for (int e = 0; e < 16; e++)
				bias[e] = th_rng_float(&rng);
			for (size_t e = 0; e < ny; e++)
				y0[e] = y1[e] = (float)e;
			for (int64_t m = 0; m < sl; m++)
				kt->phase.store(&kp, tiles + m * tstride, nr, mr, runs, nrun, y0, m, with_bias ? bias : NULL);
			kt->phase.store_lines(&kp, tiles, tstride, nr, mr, runs, nrun, y1, 0, with_bias ? bias : NULL);
			if (kp.stream)
				kt->phase.store_fence();
			if (memcmp(y0, y1, ny * sizeof *y0)) {
				failures++;
				print_message("%s: store_lines differs from store: sl=%lld mr=%lld runs=%lld bias=%d stream=%d\n",
				              kt->name, (long long)sl, (long long)mr, (long long)nrun, with_bias, kp.stream);
			}
			free(tiles);
			free(bias);
			free(raw0);
			free(raw1);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("store_lines checked in %d kernel tables, %d failures\n", tables, failures);
	assert_int_equal(failures, 0);
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_true(tables >= 1);
#endif
}

/* phase.pack_img8 (kernels.h; AVX-512): every panel value against the spec's formula (x's
 * value where the quarter's bit is set, else +0), random channels, taps, image strides and
 * masks, with columns that start before x's row (the bits of those quarters clear, as
 * phase.c sets them at a left edge); the floats past the panel untouched. */
static void test_pack_img8(void **state)
{
#ifdef ONNXRUN_BAREMETAL /* no bare-metal table has it */
	(void)state;
	skip();
#else
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	int tables = 0, failures = 0;
	(void)state;
	th_rng_seed(&rng, 0x1a98);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		const struct onnxrun__kernels *kt = onnxrun__kernels_current();
		if (!kt->phase.pack_img8)
			continue;
		tables++;
		for (int trial = 0; trial < 300 && failures < 5; trial++) {
			struct onnxrun__kpanel kp;
			int64_t src[32];
			uint8_t valid[32];
			const int64_t nt = rnd(&rng, 1, 32), row = rnd(&rng, 4, 9);
			kp.cg = rnd(&rng, 1, 5);
			kp.in_sp = row * rnd(&rng, 1, 4) + rnd(&rng, 0, 3);
			kp.out_sp = 1;
			kp.sl = 1;
			kp.stream = false;
			const int64_t bstride = kp.cg * kp.in_sp + rnd(&rng, 0, 5), nx = 8 * bstride + 8;
			const size_t np = (size_t)(kp.cg * nt * 32);
			float *x = malloc((size_t)nx * sizeof *x), *bp = malloc((np + 16) * sizeof *bp);
			assert_true(x && bp);
			for (int64_t e = 0; e < nx; e++)
				x[e] = th_rng_float(&rng);
			for (size_t e = 0; e < np + 16; e++)
				bp[e] = -1.0f;
			for (int64_t t = 0; t < nt; t++) {
				/* a row of `row` columns inside each channel plane, quarter 0 at column c0 */
				const int64_t base = rnd(&rng, 0, kp.in_sp - row), c0 = rnd(&rng, -3, row - 1);
				src[t] = base + c0;
				valid[t] = 0;
				for (int k = 0; k < 4; k++)
					if (c0 + k >= 0 && c0 + k < row && rnd(&rng, 0, 5))
						valid[t] |= (uint8_t)(1u << k);
				if (!rnd(&rng, 0, 7))
					valid[t] = 0;
			}
			kt->phase.pack_img8(&kp, x, nt, bstride, src, valid, bp);
			for (int64_t c = 0; c < kp.cg; c++)
				for (int64_t t = 0; t < nt; t++)
					for (int k = 0; k < 4; k++)
						for (int b = 0; b < 8; b++) {
							const float want = valid[t] >> k & 1 ? x[c * kp.in_sp + b * bstride + src[t] + k] : 0.0f;
							const float got = bp[(c * nt + t) * 32 + 8 * k + b];
							if (memcmp(&want, &got, sizeof want) && failures++ < 5)
								print_message("%s: pack_img8 c=%lld t=%lld k=%d b=%d: %g, want %g\n", kt->name,
								              (long long)c, (long long)t, k, b, (double)got, (double)want);
						}
			for (size_t e = np; e < np + 16; e++)
				if (bp[e] != -1.0f && failures++ < 5)
					print_message("%s: pack_img8 wrote past the panel\n", kt->name);
			free(x);
			free(bp);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("pack_img8 checked in %d kernel tables, %d failures\n", tables, failures);
	assert_int_equal(failures, 0);
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_true(tables >= 1);
#endif
}

/* The wide tile that leaves out one quarter's multiply-adds on some steps (kernels.h,
 * skip_quarter): B zero in that quarter's 8 columns on the steps of the mask, every other B and A
 * value random; each output against a double reference of the whole sum, and bit for bit
 * against fn[0][mr - 1] on the same panels (a chain from +0 that adds products with zero
 * gets the same bits as one without them, the weights being finite). k of 1 to 300 steps
 * (not always whole periods), mr 1 to mr_max, every quarter, periods 1 to 32, a random
 * mask; C rows mr on and the columns past nr untouched. */
static void test_gemm_skip(void **state)
{
#ifdef ONNXRUN_BAREMETAL /* no bare-metal table has it */
	(void)state;
	skip();
#else
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	int tables = 0, failures = 0;
	const uint64_t seed = 0x5c1f;
	(void)state;
	th_rng_seed(&rng, seed);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		const struct onnxrun__kernels *kt = onnxrun__kernels_current();
		if (!kt->gemm->skip_quarter)
			continue;
		tables++;
		const int64_t mrx = kt->gemm->mr_max, nr = kt->gemm->nr[0], ldc = nr + 5;
		assert_int_equal(nr, 32);
		for (int trial = 0; trial < 400 && failures < 5; trial++) {
			const int64_t k = rnd(&rng, 1, 300), mr = rnd(&rng, 1, mrx);
			const int quarter = (int)rnd(&rng, 0, 3), period = (int)rnd(&rng, 1, rnd(&rng, 0, 1) ? 4 : 32);
			const uint32_t mask = (uint32_t)(th_rng_next(&rng) & (period == 32 ? 0xffffffffu : (1u << period) - 1));
			float *a = malloc((size_t)(k * mrx) * sizeof *a), *b = malloc((size_t)(k * nr) * sizeof *b);
			float *c0 = malloc((size_t)(mrx * ldc) * sizeof *c0), *c1 = malloc((size_t)(mrx * ldc) * sizeof *c1);
			assert_true(a && b && c0 && c1);
			for (int64_t p = 0; p < k; p++)
				for (int64_t i = 0; i < mrx; i++) /* the panel's rows from mr on are zero, as packed */
					a[p * mrx + i] = i < mr ? th_rng_float(&rng) : 0.0f;
			for (int64_t p = 0; p < k; p++)
				for (int64_t e = 0; e < nr; e++)
					b[p * nr + e] = e / 8 == quarter && (mask >> (p % period) & 1) ? 0.0f : th_rng_float(&rng);
			for (int64_t e = 0; e < mrx * ldc; e++)
				c0[e] = c1[e] = -7.0f;
			kt->gemm->skip_quarter(k, a, mr, b, c1, ldc, quarter, period, mask);
			kt->gemm->fn[0][mr - 1](k, a, b, c0, ldc);
			bool bad = false;
			for (int64_t i = 0; i < mrx && !bad; i++)
				for (int64_t e = 0; e < ldc; e++) {
					const float got = c1[i * ldc + e];
					if (i >= mr || e >= nr) {
						bad |= got != -7.0f;
						continue;
					}
					double want = 0.0, mag = 0.0;
					for (int64_t p = 0; p < k; p++) {
						const double t = (double)a[p * mrx + i] * b[p * nr + e];
						want += t;
						mag += fabs(t);
					}
					bad |= memcmp(&got, &c0[i * ldc + e], sizeof got) != 0;
					bad |= fabs(got - want) > (double)k * FLT_EPSILON * mag + 1e-6;
				}
			if (bad) {
				failures++;
				print_message("%s: gemm skip differs (seed %#llx, trial %d): k=%lld mr=%lld quarter=%d period=%d "
				              "mask=%#x\n",
				              kt->name, (unsigned long long)seed, trial, (long long)k, (long long)mr, quarter,
				              period, mask);
			}
			free(a);
			free(b);
			free(c0);
			free(c1);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("gemm skip checked in %d kernel tables, %d failures\n", tables, failures);
	assert_int_equal(failures, 0);
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_true(tables >= 1);
#endif
}

/* The window GEMM's tiles that copy staged rows meanwhile (kernels.h, window):
 * tile_copy_half[mr - 1] against a double reference of its nr[1] columns and bit for bit
 * against tile_copy[mr - 1]'s first nr[1] columns, both given the same rows to copy: the
 * same pieces copied (and no more), and the copy state left at the same place. k of 1 to
 * 300 steps, B rows at random offsets (any float alignment), mr 1 to mr_max rows, list
 * entries of 1 to 3 rows at random steps. */
static void test_window_tiles(void **state)
{
#ifdef ONNXRUN_BAREMETAL /* no bare-metal table has window tiles */
	(void)state;
	skip();
#else
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	int tables = 0, failures = 0;
	const uint64_t seed = 0x3f1d;
	(void)state;
	th_rng_seed(&rng, seed);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		const struct onnxrun__kernels *kt = onnxrun__kernels_current();
		if (!kt->window || !kt->window->tile_copy[0] || !kt->window->tile_copy_half[0])
			continue;
		tables++;
		const int64_t mrx = kt->gemm->mr_max, nr = kt->gemm->nr[0], nh = kt->gemm->nr[1];
		for (int trial = 0; trial < 300 && failures < 5; trial++) {
			const int64_t k = rnd(&rng, 1, 300), mr = rnd(&rng, 1, mrx), nb = 4096, nrows = rnd(&rng, 0, 6);
			float *a = malloc((size_t)(k * mrx) * sizeof *a), *b = malloc((size_t)nb * sizeof *b);
			float *c0 = malloc((size_t)(mrx * nr) * sizeof *c0), *c1 = malloc((size_t)(mrx * nr) * sizeof *c1);
			float *src = malloc(8 * 240 * sizeof *src), *d0 = malloc(8 * 240 * sizeof *d0),
			      *d1 = malloc(8 * 240 * sizeof *d1);
			onnxrun__krel *rel = malloc((size_t)k * sizeof *rel);
			struct onnxrun__win_row rows0[8], rows1[8];
			assert_true(a && b && c0 && c1 && src && d0 && d1 && rel);
			for (int64_t e = 0; e < k * mrx; e++)
				a[e] = th_rng_float(&rng);
			for (int64_t e = 0; e < nb; e++)
				b[e] = th_rng_float(&rng);
			for (int64_t e = 0; e < 8 * 240; e++) {
				src[e] = th_rng_float(&rng); /* in [-1, 1) */
				d0[e] = d1[e] = 2.0f;
			}
			for (int64_t p = 0; p < k; p++)
				rel[p] = (onnxrun__krel)(rnd(&rng, 0, nb - nr) * (int64_t)sizeof(float));
			int64_t total = 0; /* pieces of all rows */
			for (int64_t r = 0; r < nrows; r++) {
				const int64_t n = rnd(&rng, 1, 70), reps = rnd(&rng, 1, 3);
				/* entry r's rows i at src + 240r + i*src_step, dst + 240r + i*dst_step */
				rows0[r].src = rows1[r].src = src + r * 240;
				rows0[r].dst = d0 + r * 240;
				rows1[r].dst = d1 + r * 240;
				rows0[r].n = rows1[r].n = n;
				rows0[r].reps = rows1[r].reps = reps;
				rows0[r].src_step = rows1[r].src_step = rnd(&rng, n, 80);
				rows0[r].dst_step = rows1[r].dst_step = rnd(&rng, n, 80);
				total += reps * ((n + 15) / 16);
			}
			const int64_t pieces = rnd(&rng, 0, total + 2), every = rnd(&rng, 1, k + 1);
			struct onnxrun__win_copy cp0 = { rows0, rows0 + nrows, 0, pieces, every, 0 };
			struct onnxrun__win_copy cp1 = { rows1, rows1 + nrows, 0, pieces, every, 0 };
			kt->window->tile_copy[mr - 1](k, a, (const char *)b, rel, c0, nr, &cp0);
			kt->window->tile_copy_half[mr - 1](k, a, (const char *)b, rel, c1, nr, &cp1);
			bool bad = cp0.row - rows0 != cp1.row - rows1 || cp0.rep != cp1.rep || cp0.off != cp1.off ||
			           cp0.pieces != cp1.pieces || memcmp(d0, d1, 8 * 240 * sizeof *d0);
			/* the pieces copied: whole rows in order, then part of one; nothing else written */
			int64_t done = 0, at = 0, wrote = 0;
			for (int64_t r = 0; r < nrows && !bad; r++)
				for (int64_t i = 0; i < rows1[r].reps; i++)
					for (int64_t e = 0; e < rows1[r].n; e += 16, at++) {
						const bool copied = at < pieces && at < (k + every - 1) / every; /* one after each every steps, the last block too */
						const int64_t len = rows1[r].n - e < 16 ? rows1[r].n - e : 16;
						const int64_t so = r * 240 + i * rows1[r].src_step + e, dof = r * 240 + i * rows1[r].dst_step + e;
						for (int64_t q = 0; q < len; q++)
							bad |= d1[dof + q] != (copied ? src[so + q] : 2.0f);
						done += copied;
						wrote += copied ? len : 0;
					}
			for (int64_t e = 0; e < 8 * 240; e++)
				wrote -= d1[e] != 2.0f;
			bad |= cp1.pieces != pieces - done || wrote != 0;
			for (int64_t i = 0; i < mr && !bad; i++)
				for (int64_t e = 0; e < nh; e++) {
					double want = 0.0, mag = 0.0;
					for (int64_t p = 0; p < k; p++) {
						const double t = (double)a[p * mrx + i] * b[rel[p] / (int64_t)sizeof(float) + e];
						want += t;
						mag += fabs(t);
					}
					const float got = c1[i * nr + e];
					bad |= memcmp(&got, &c0[i * nr + e], sizeof got) != 0;
					bad |= fabs(got - want) > (double)k * FLT_EPSILON * mag + 1e-6;
				}
			if (bad) {
				failures++;
				print_message("%s: window tile_copy_half differs (seed %#llx, trial %d): k=%lld mr=%lld rows=%lld "
				              "pieces=%lld every=%lld\n",
				              kt->name, (unsigned long long)seed, trial, (long long)k, (long long)mr,
				              (long long)nrows, (long long)pieces, (long long)every);
			}
			free(a);
			free(b);
			free(c0);
			free(c1);
			free(src);
			free(d0);
			free(d1);
			free(rel);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("window tiles checked in %d kernel tables, %d failures\n", tables, failures);
	assert_int_equal(failures, 0);
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_true(tables >= 1);
#endif
}

/* The window tile that writes y from its registers (kernels.h, tile_out), bit for bit against
 * tile_copy (tile_copy_half with half) followed by a plain loop writing the spec's outputs
 * (tile value + bias, the run's masked outputs of its groups), and where the runs are whole
 * columns against store on them: the same pieces copied, the copy state left at the same
 * place, nothing else in y written. s 1 to 3, mr a multiple of s, 1 to 4 runs with random
 * groups, partly trimmed outputs at the first and last. */
static void test_window_tile_out(void **state)
{
#ifdef ONNXRUN_BAREMETAL /* no bare-metal table has window tiles */
	(void)state;
	skip();
#else
	TEST_ALL_ISAS(isas);
	struct th_rng rng;
	int tables = 0, failures = 0;
	const uint64_t seed = 0x70e1;
	(void)state;
	th_rng_seed(&rng, seed);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		const struct onnxrun__kernels *kt = onnxrun__kernels_current();
		if (!kt->window || !kt->window->tile_out)
			continue;
		tables++;
		const int64_t mrx = kt->gemm->mr_max, nr = kt->gemm->nr[0], nh = kt->gemm->nr[1];
		for (int trial = 0; trial < 400 && failures < 5; trial++) {
			const int64_t s = rnd(&rng, 1, 3), mr = s * rnd(&rng, 1, mrx / s), groups = mr / s;
			const int64_t k = rnd(&rng, 1, 200), nb = 4096, nrows = rnd(&rng, 0, 4);
			const bool half = rnd(&rng, 0, 1), whole = rnd(&rng, 0, 1);
			const int64_t ncols = half ? nh : nr, ny = 128 + 12 * 400 + 128;
			float *a = malloc((size_t)(k * mrx) * sizeof *a), *b = malloc((size_t)nb * sizeof *b);
			float *c = malloc((size_t)(mrx * nr) * sizeof *c);
			float *y0 = malloc((size_t)ny * sizeof *y0), *y1 = malloc((size_t)ny * sizeof *y1),
			      *y2 = malloc((size_t)ny * sizeof *y2);
			float *src = malloc(4 * 240 * sizeof *src), *d0 = malloc(4 * 240 * sizeof *d0),
			      *d1 = malloc(4 * 240 * sizeof *d1);
			onnxrun__krel *rel = malloc((size_t)k * sizeof *rel);
			struct onnxrun__win_row rows0[4], rows1[4];
			struct onnxrun__win_seg seg[4];
			int64_t yg[12], cbs[4], lens[4], nseg = 0;
			float bias[12];
			assert_true(a && b && c && y0 && y1 && y2 && src && d0 && d1 && rel);
			for (int64_t e = 0; e < k * mrx; e++)
				a[e] = th_rng_float(&rng);
			for (int64_t e = 0; e < nb; e++)
				b[e] = th_rng_float(&rng);
			for (int64_t e = 0; e < 4 * 240; e++) {
				src[e] = th_rng_float(&rng);
				d0[e] = d1[e] = -1.0f;
			}
			for (int64_t e = 0; e < ny; e++)
				y0[e] = y1[e] = y2[e] = (float)e;
			for (int64_t p = 0; p < k; p++)
				rel[p] = (onnxrun__krel)(rnd(&rng, 0, nb - nr) * (int64_t)sizeof(float));
			for (int64_t g = 0; g < groups; g++) {
				yg[g] = 128 + g * 400;
				bias[g] = th_rng_float(&rng);
			}
			for (int64_t r = 0; r < nrows; r++) {
				rows0[r].src = rows1[r].src = src + r * 240;
				rows0[r].dst = d0 + r * 240;
				rows1[r].dst = d1 + r * 240;
				rows0[r].n = rows1[r].n = rnd(&rng, 1, 70);
				rows0[r].reps = rows1[r].reps = rnd(&rng, 1, 3);
				rows0[r].src_step = rows1[r].src_step = rnd(&rng, rows0[r].n, 80);
				rows0[r].dst_step = rows1[r].dst_step = rnd(&rng, rows0[r].n, 80);
			}
			const int64_t pieces = rnd(&rng, 0, 24), every = rnd(&rng, 1, k + 1);
			struct onnxrun__win_copy cp0 = { rows0, rows0 + nrows, 0, pieces, every, 0 };
			struct onnxrun__win_copy cp1 = { rows1, rows1 + nrows, 0, pieces, every, 0 };
			/* runs: columns [cb, cb + len) with gaps, outputs of each at (run r) yg + 100r + q - s*cb */
			for (int64_t cb = rnd(&rng, 0, 3); cb < ncols && nseg < 4;) {
				const int64_t len = rnd(&rng, 1, ncols - cb);
				int64_t qlo = s * cb, qhi = s * (cb + len);
				if (!whole) {
					qlo += nseg == 0 ? rnd(&rng, 0, s - 1) : 0;
					qhi -= cb + len >= ncols - 2 ? rnd(&rng, 0, s - 1) : 0;
				}
				seg[nseg].d = nseg * 100 - s * cb;
				seg[nseg].groups = (uint32_t)rnd(&rng, 0, (1 << groups) - 1) | (whole ? (1u << groups) - 1 : 0);
				for (int w = 0; w < 6; w++) {
					const int64_t lo = qlo - 16 * w > 0 ? qlo - 16 * w : 0, hi = qhi - 16 * w < 16 ? qhi - 16 * w : 16;
					seg[nseg].mask[w] = (uint16_t)(hi > lo ? ((1u << hi) - 1) & ~((1u << lo) - 1) : 0);
				}
				cbs[nseg] = cb;
				lens[nseg++] = len;
				cb += len + rnd(&rng, 0, 3);
			}
			const struct onnxrun__win_out out = { y1, yg, bias, seg, nseg, s };
			(half ? kt->window->tile_copy_half : kt->window->tile_copy)[mr - 1](k, a, (const char *)b, rel, c, nr,
			                                                                   &cp0);
			kt->window->tile_out(k, a, mr, half, (const char *)b, rel, &cp1, &out);
			for (int64_t r = 0; r < nseg; r++) /* the plain loop */
				for (int64_t g = 0; g < groups; g++)
					for (int64_t q = 0; q < 16 * 6 && seg[r].groups >> g & 1; q++)
						if (seg[r].mask[q / 16] >> (q % 16) & 1)
							y0[yg[g] + seg[r].d + q] = c[(g * s + q % s) * nr + q / s] + bias[g];
			if (whole) /* store on each run's columns */
				for (int64_t r = 0; r < nseg; r++)
					for (int64_t g = 0; g < groups; g++)
						kt->window->store(c + g * s * nr + cbs[r], nr, s, lens[r], y2 + yg[g] + r * 100, bias[g]);
			bool bad = cp0.row - rows0 != cp1.row - rows1 || cp0.rep != cp1.rep || cp0.off != cp1.off ||
			           cp0.pieces != cp1.pieces || memcmp(d0, d1, 4 * 240 * sizeof *d0) ||
			           memcmp(y0, y1, (size_t)ny * sizeof *y0) ||
			           (whole && memcmp(y2, y1, (size_t)ny * sizeof *y0));
			if (bad) {
				failures++;
				print_message("%s: window tile_out differs (seed %#llx, trial %d): s=%lld mr=%lld k=%lld half=%d "
				              "runs=%lld whole=%d\n",
				              kt->name, (unsigned long long)seed, trial, (long long)s, (long long)mr, (long long)k,
				              half, (long long)nseg, whole);
			}
			free(a);
			free(b);
			free(c);
			free(y0);
			free(y1);
			free(y2);
			free(src);
			free(d0);
			free(d1);
			free(rel);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("window tile_out checked in %d kernel tables, %d failures\n", tables, failures);
	assert_int_equal(failures, 0);
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_true(tables >= 1);
#endif
}

/* GEMM + overlap-add with strides of 16 and more (blocks of 16 residues transposed into
 * output vectors): whole and partial residue blocks (s = 16, 20, 37), dilation, pads that
 * cut into the first and last blocks, output padding, batches and groups, rank 2. */
static void test_col2im_wide_strides(void **state)
{
	static const struct cfg cases[] = {
		{ 1, 1, 1, 8, 2, { 33 }, { 40 }, { 20 }, { 1 }, { 7 }, { 3 }, { 5 }, true, false },
		{ 1, 2, 2, 6, 1, { 50 }, { 75 }, { 37 }, { 1 }, { 0 }, { 0 }, { 0 }, false, false },
		{ 1, 1, 1, 5, 3, { 29 }, { 20 }, { 17 }, { 2 }, { 9 }, { 30 }, { 0 }, true, true },
		{ 1, 1, 1, 12, 1, { 70 }, { 64 }, { 16 }, { 1 }, { 24 }, { 24 }, { 0 }, true, false },
		{ 2, 1, 1, 8, 1, { 5, 9 }, { 16, 32 }, { 16, 16 }, { 1, 1 }, { 3, 8 }, { 5, 8 }, { 0, 2 }, true, false },
	};
	(void)state;
	check_configs(cases, sizeof cases / sizeof cases[0], 2600, "wide-stride overlap-add");
}

/* GEMM + overlap-add, rank 1, on 1 to 4 threads: the chunks end where each thread's range of
 * the pool's split costs the same (ops/conv_transpose/col2im.c, plan_chunks_1d), so ranges
 * start mid-chunk, after empty chunks, with the kernel's reach computed again: istft-like
 * lengths, a kernel that is not a multiple of the stride, dilation, uneven pads, output
 * padding, batches and groups, and inputs too short for every thread. */
static void test_col2im_thread_ranges(void **state)
{
	static const struct cfg cases[] = {
		{ 1, 1, 1, 12, 1, { 400 }, { 64 }, { 16 }, { 1 }, { 24 }, { 24 }, { 0 }, true, false },
		{ 1, 1, 1, 9, 2, { 203 }, { 50 }, { 16 }, { 1 }, { 7 }, { 30 }, { 3 }, true, false },
		{ 1, 2, 2, 6, 1, { 277 }, { 24 }, { 8 }, { 2 }, { 0 }, { 5 }, { 1 }, false, false },
		{ 1, 1, 1, 8, 3, { 131 }, { 40 }, { 20 }, { 1 }, { 39 }, { 2 }, { 0 }, true, true },
		{ 1, 1, 1, 5, 1, { 37 }, { 32 }, { 16 }, { 1 }, { 16 }, { 16 }, { 0 }, true, false },
	};
	(void)state;
	check_threads = threads_1_to_4;
	check_configs(cases, sizeof cases / sizeof cases[0], 3100, "rank-1 overlap-add thread-range");
	check_threads = threads_default;
}

/* Depthwise rows wide enough for whole 16-position blocks next to the masked and scalar
 * ends: even and odd begin pads, output padding, dilation, rank 1, W fed at run time, and
 * the suite's case (64 channels, 4 MiB output). The random configs are mostly narrower. */
static void test_depthwise_wide(void **state)
{
	static const struct cfg cases[] = {
		/* the suite's dw case, smaller: k4 s2 p1 (odd pad), 64 wide */
		{ 2, 1, 5, 1, 1, { 6, 64 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* even pad, output padding, 49 wide (3 blocks + ends) */
		{ 2, 2, 3, 1, 1, { 5, 49 }, { 4, 3 }, { 2, 2 }, { 1, 1 }, { 2, 2 }, { 0, 1 }, { 1, 1 }, true, false },
		/* dilation 3, no pad, 80 wide */
		{ 2, 1, 2, 1, 1, { 4, 80 }, { 3, 3 }, { 2, 2 }, { 3, 3 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, false, false },
		/* rank 1, k2 s2 (one tap per phase), 130 wide */
		{ 1, 2, 4, 1, 1, { 130 }, { 2 }, { 2 }, { 1 }, { 0 }, { 0 }, { 0 }, true, false },
		/* the suite's dw case itself (64 channels, 4 MiB output) */
		{ 2, 1, 64, 1, 1, { 64, 64 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		/* kernel 4, stride 2 with even begin pads (both phases read the same x columns), no
		 * pad and an odd output width, pad 3 (phase 1 reads one column further) */
		{ 2, 1, 3, 1, 1, { 5, 40 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 2, 2 }, { 2, 2 }, { 0, 0 }, true, false },
		{ 2, 2, 2, 1, 1, { 4, 37 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 1, 1 }, false, false },
		{ 2, 1, 2, 1, 1, { 3, 45 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 3, 1 }, { 1, 3 }, { 0, 0 }, true, false },
		/* kernel 4 stride 2 on the last axis under three x rows (kernel 5), under none
		 * (kernel 1, stride 3), and under stride 3 with kernel 4 */
		{ 2, 1, 2, 1, 1, { 6, 40 }, { 5, 4 }, { 2, 2 }, { 1, 1 }, { 2, 1 }, { 2, 1 }, { 0, 0 }, true, false },
		{ 2, 1, 2, 1, 1, { 4, 33 }, { 1, 4 }, { 3, 2 }, { 1, 1 }, { 0, 1 }, { 0, 1 }, { 1, 0 }, true, false },
		{ 2, 1, 2, 1, 1, { 5, 36 }, { 4, 4 }, { 3, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, false, false },
		/* rank 1, wide crop on the left, W fed at run time */
		{ 1, 1, 3, 1, 1, { 97 }, { 5 }, { 2 }, { 1 }, { 4 }, { 1 }, { 1 }, true, true },
		/* kernel 6 stride 2 over kernel 4 stride 2: three taps per phase on axis 0, two of
		 * them inside x at the top and bottom rows (pairs that must not run on as a plane's
		 * run of pairs), and a tall plane of pairs with a batch of 2 */
		{ 2, 1, 2, 1, 1, { 7, 40 }, { 6, 4 }, { 2, 2 }, { 1, 1 }, { 2, 1 }, { 2, 1 }, { 0, 0 }, true, false },
		{ 2, 2, 3, 1, 1, { 40, 36 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
	};
	(void)state;
	check_configs(cases, sizeof cases / sizeof cases[0], 2900, "wide depthwise");
}

/* Depthwise k4 s2 rows whose work items (16384 outputs of whole rows: 81 and 82 rows here)
 * end inside a plane between the two rows of a pair, so those rows run one by one (the AVX-512
 * dw_e_row) next to the plane's runs of pairs; odd and even begin pads, an odd output width,
 * 1 to 4 threads. */
static void test_depthwise_split_pairs(void **state)
{
	static const struct cfg cases[] = {
		{ 2, 2, 3, 1, 1, { 50, 100 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, true, false },
		{ 2, 1, 4, 1, 1, { 41, 99 }, { 4, 4 }, { 2, 2 }, { 1, 1 }, { 2, 1 }, { 2, 1 }, { 1, 1 }, true, true },
	};
	(void)state;
	check_threads = threads_1_to_4;
	check_configs(cases, sizeof cases / sizeof cases[0], 3300, "split-pair depthwise");
	check_threads = threads_default;
}

/* DepthToSpace, 4-byte elements: every ISA's interleave (b = 2, 4 with SIMD bodies and
 * tails, other b strided) and 1/2 threads against the spec's index formula, exactly. */
static void test_depth_to_space(void **state)
{
	TEST_ALL_ISAS(isas);
	struct th_rng r;
	(void)state;
	th_rng_seed(&r, 77);
	for (int it = 0; it < 120; it++) {
		const int64_t b = rnd(&r, 1, 5), n = rnd(&r, 1, 2), cout = rnd(&r, 1, 3);
		const int64_t h = rnd(&r, 1, 9), w = it < 20 ? 16 * rnd(&r, 1, 4) : rnd(&r, 1, 70);
		const int64_t c = cout * b * b;
		const bool crd = rnd(&r, 0, 1) == 1;
		const int64_t xd[4] = { n, c, h, w }, big = it % 10 == 0 ? 64 : 1;
		int64_t xdb[4] = { n, c, h * big, w };
		const size_t nx = th_numel(4, xdb);
		float *x = malloc(nx * sizeof *x), *want = malloc(nx * sizeof *want);
		for (size_t i = 0; i < nx; i++)
			x[i] = (float)i + 0.5f;
		(void)xd;
		/* y[n, c', h*b + i, w*b + j] = x[n, ch, h, w] */
		for (int64_t in = 0; in < n; in++)
			for (int64_t cc = 0; cc < cout; cc++)
				for (int64_t hh = 0; hh < h * big; hh++)
					for (int64_t i = 0; i < b; i++)
						for (int64_t ww = 0; ww < w; ww++)
							for (int64_t j = 0; j < b; j++) {
								int64_t ch = crd ? cc * b * b + i * b + j : (i * b + j) * cout + cc;
								want[(((in * cout + cc) * h * big + hh) * b + i) * w * b + ww * b + j] =
									x[((in * c + ch) * h * big + hh) * w + ww];
							}
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			struct onnxrun_env *env = th_env();
			Onnx__ModelProto *m = mb_model(8);
			Onnx__NodeProto *node;
			char shape[96];
			if (!onnxrun__isa_supported(isas[ii])) {
				onnxrun_env_free(env);
				mb_free(m);
				continue;
			}
			onnxrun__isa_set(isas[ii]);
			mb_opset(m, "", 13);
			snprintf(shape, sizeof shape, "%lld,%lld,%lld,%lld", (long long)n, (long long)c, (long long)(h * big),
			         (long long)w);
			mb_input(m, "x", MB_FLOAT, shape);
			mb_output(m, "y", MB_FLOAT, NULL);
			node = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
			mb_attr_int(node, "blocksize", b);
			mb_attr_string(node, "mode", crd ? "CRD" : "DCR");
			struct onnxrun_model *model = th_load_ok(env, m);
			struct onnxrun_tensor *xt = th_tensor_f32(env, 4, xdb, x);
			for (int threads = 1; threads <= 2; threads++) {
				struct onnxrun_session *s = NULL;
				const struct onnxrun_tensor *y;
				assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
				assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
				assert_int_equal(onnxrun_session_set_input(s, 0, xt), ONNXRUN_OK);
				TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
				assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
				assert_int_equal((size_t)onnxrun_tensor_numel(y), nx);
				if (memcmp(onnxrun_tensor_data(y), want, nx * sizeof *want))
					fail_msg("isa=%d threads=%d b=%lld crd=%d n=%lld c=%lld h=%lld w=%lld differs", (int)isas[ii],
					         threads, (long long)b, crd, (long long)n, (long long)c, (long long)(h * big),
					         (long long)w);
				onnxrun_session_free(s);
			}
			onnxrun_tensor_free(xt);
			onnxrun_model_free(model);
			onnxrun_env_free(env);
		}
		free(x);
		free(want);
	}
	onnxrun__isa_set(TEST_BEST_ISA);
}

/* ONNXRUN_KERNEL picks the ISA when nothing forced one; unsupported ISAs fall back. */
static void test_isa_selection(void **state)
{
	(void)state;
	assert_int_equal(onnxrun__isa_set(ONNXRUN__ISA_SCALAR), ONNXRUN__ISA_SCALAR);
	assert_int_equal(onnxrun__isa_current(), ONNXRUN__ISA_SCALAR);
	assert_int_equal(onnxrun__kernels_for(ONNXRUN__ISA_SCALAR)->isa, ONNXRUN__ISA_SCALAR);
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX2))
		assert_int_equal(onnxrun__isa_set(ONNXRUN__ISA_AVX2), ONNXRUN__ISA_AVX2);
	if (!onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_int_not_equal(onnxrun__isa_set(ONNXRUN__ISA_AVX512), ONNXRUN__ISA_AVX512);
	if (onnxrun__isa_supported(ONNXRUN__ISA_SIMD128)) {
		assert_int_equal(onnxrun__isa_set(ONNXRUN__ISA_SIMD128), ONNXRUN__ISA_SIMD128);
		assert_string_equal(onnxrun__kernels_current()->name, "simd128");
	}
	if (onnxrun__isa_supported(ONNXRUN__ISA_NEON)) {
		assert_int_equal(onnxrun__isa_set(ONNXRUN__ISA_NEON), ONNXRUN__ISA_NEON);
		assert_string_equal(onnxrun__kernels_current()->name, "neon");
	}
	if (onnxrun__isa_supported(ONNXRUN__ISA_MVE)) {
		assert_int_equal(onnxrun__isa_set(ONNXRUN__ISA_MVE), ONNXRUN__ISA_MVE);
		assert_string_equal(onnxrun__kernels_current()->name, "mve");
	}
	onnxrun__isa_set(TEST_BEST_ISA);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isa_selection),
		cmocka_unit_test(test_suite_like),
		cmocka_unit_test(test_staged_rows),
		cmocka_unit_test(test_rows_in_place_1d),
		cmocka_unit_test(test_3d_and_grouped),
		cmocka_unit_test(test_dense_panels),
		cmocka_unit_test(test_staged_whole_rows),
		cmocka_unit_test(test_remainder_panels),
		cmocka_unit_test(test_line_stores),
		cmocka_unit_test(test_pack_store_short_runs),
		cmocka_unit_test(test_store_lines_kernel),
		cmocka_unit_test(test_gemm_skip),
		cmocka_unit_test(test_pack_img8),
		cmocka_unit_test(test_window_tiles),
		cmocka_unit_test(test_window_tile_out),
		cmocka_unit_test(test_phase_random),
		cmocka_unit_test(test_col2im_random),
		cmocka_unit_test(test_col2im_wide_strides),
		cmocka_unit_test(test_col2im_thread_ranges),
		cmocka_unit_test(test_depthwise_random),
		cmocka_unit_test(test_depthwise_wide),
		cmocka_unit_test(test_depthwise_split_pairs),
		cmocka_unit_test(test_depth_to_space),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
