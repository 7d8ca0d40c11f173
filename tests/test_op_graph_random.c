/*
 * test_op_graph_random.c - ConvTranspose and DepthToSpace through the whole runtime: each
 * seeded random configuration is written as real ModelProto bytes (model_builder.h), loaded
 * with onnxrun_model_load_buffer, run in a session, and its output compared with a
 * deliberately naive reference written here from the ONNX spec text:
 *  - ConvTranspose: the output size and pads computed from the spec's equations (floor
 *    division of the total padding; docs/design.md, ConvTranspose), then a direct scatter loop
 *    y[n, g*M/g + m, i*s - pad_begin + k*d] += x[n, g*C/g + c, i] * w[g*C/g + c, m, k];
 *  - DepthToSpace: the spec's reshape / 6-D transpose / reshape, as a generic permutation.
 * Also: every load-time error the op issue lists, each naming node, attribute and values.
 * float16/bfloat16 ConvTranspose shapes the float32 fast paths take (per-phase GEMM, GEMM +
 * overlap-add, depthwise; W pre-packed at load or fed at run time) run under every
 * micro-kernel ISA this CPU has, on 1 and 2 threads: within the bound of the reference,
 * bitwise equal across thread counts and to the float32 model's output rounded once; and an
 * allocation-failure sweep over such a model (clean OUT_OF_MEMORY, nothing leaked). The same
 * shapes in float64 (ops/conv_transpose/f64.c) under every ISA on 1, 2 and 4 threads: within the
 * bound, bitwise equal across thread counts.
 *
 * Counts scale with the environment variable ONNXRUN_RANDOM_SCALE (default 1 = full counts:
 * 5000 ConvTranspose and 2500 DepthToSpace configurations). A failure prints the seed and
 * the configuration, and the test then fails with the number of failures; rerun one with
 * ONNXRUN_RANDOM_SEED=<seed>.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_builder.c"
#include "kernels/kernels.h"
#include "runtime/runtime.h"
#include "isa_list.h"

#define CT_CONFIGS 5000
#define D2S_CONFIGS 2500
#define MAX_FAILURES_SHOWN 10

/* ---- small helpers ------------------------------------------------------------------------ */

struct rng {
	uint64_t s;
};

/* splitmix64 */
static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static int64_t rng_int(struct rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static bool rng_chance(struct rng *r, int percent)
{
	return rng_int(r, 0, 99) < percent;
}

/* Uniform in [-1, 1). */
static double rng_sym(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-52 - 1.0;
}

/* ONNXRUN_RANDOM_SCALE times n (at least 1): test_scale.h. */
static int scaled(int n)
{
	return th_scaled(n);
}

/* ONNXRUN_RANDOM_SEED=<seed printed by a failure>: run only that configuration (0: all). */
static uint64_t one_seed(void)
{
	const char *e = getenv("ONNXRUN_RANDOM_SEED");
	return e && *e ? strtoull(e, NULL, 0) : 0;
}

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(__printf__, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* "name=[a,b,c]" into buf. */
static void append_list(char *buf, size_t len, const char *name, const int64_t *v, int n)
{
	append(buf, len, " %s=[", name);
	for (int i = 0; i < n; i++)
		append(buf, len, "%s%lld", i ? "," : "", (long long)v[i]);
	append(buf, len, "]");
}

/* Comma-separated dims for model_builder shapes; sym0 replaces dim 0 by "N". */
static void shape_text(char *buf, size_t len, const int64_t *dims, int rank, bool sym0, int unknown_from)
{
	buf[0] = 0;
	for (int i = 0; i < rank; i++) {
		if (i == 0 && sym0)
			append(buf, len, "N");
		else if (unknown_from >= 0 && i >= unknown_from)
			append(buf, len, "%s?", i ? "," : "");
		else
			append(buf, len, "%s%lld", i ? "," : "", (long long)dims[i]);
	}
}

static int64_t prod(const int64_t *v, int n)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		p *= v[i];
	return p;
}

/* ---- ConvTranspose: configuration ------------------------------------------------------------ */

enum { AP_NOTSET, AP_SAME_UPPER, AP_SAME_LOWER, AP_VALID };
static const char *const ap_names[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" };

struct ct_cfg {
	uint64_t seed;
	int version, opset, dtype, n;
	int64_t batch, c, m, group;
	int64_t in[3], k[3], s[3], d[3], op[3], pads[6], os[3];
	int auto_pad;
	bool ap_attr;            /* auto_pad written (also when NOTSET) */
	int os_form;             /* output_shape: 0 absent, 1 spatial, 2 full (N, M, spatial) */
	bool has_s, has_d, has_op, has_pads, has_ks;
	int bias;                /* 0 none, 1 input, 2 initializer, 3 absent optional name "" */
	bool w_init, sym_batch, unknown_spatial, declare_out;
	/* reference geometry from the spec */
	int64_t out[3], pb[3], pe[3];
};

static const char *dtype_name(int t)
{
	return onnxrun_dtype_name((enum onnxrun_dtype)t);
}

static void ct_str(const struct ct_cfg *c, char *buf, size_t len)
{
	static const char *const bias[] = { "none", "input", "initializer", "absent-name" };
	buf[0] = 0;
	append(buf, len, "seed=%llu ConvTranspose-%d opset=%d %s n=%d N=%lld C=%lld M=%lld group=%lld",
	       (unsigned long long)c->seed, c->version, c->opset, dtype_name(c->dtype), c->n,
	       (long long)c->batch, (long long)c->c, (long long)c->m, (long long)c->group);
	append_list(buf, len, "in", c->in, c->n);
	append_list(buf, len, "k", c->k, c->n);
	append_list(buf, len, c->has_s ? "strides" : "(strides)", c->s, c->n);
	append_list(buf, len, c->has_d ? "dilations" : "(dilations)", c->d, c->n);
	append_list(buf, len, c->has_op ? "output_padding" : "(output_padding)", c->op, c->n);
	append(buf, len, " auto_pad=%s%s", ap_names[c->auto_pad], c->ap_attr ? "" : "(default)");
	if (c->has_pads)
		append_list(buf, len, "pads", c->pads, 2 * c->n);
	if (c->os_form)
		append_list(buf, len, c->os_form == 1 ? "output_shape" : "output_shape(full N,M,+)", c->os, c->n);
	append(buf, len, " bias=%s W=%s%s%s%s%s", bias[c->bias], c->w_init ? "initializer" : "input",
	       c->has_ks ? " kernel_shape" : "", c->sym_batch ? " X:N-symbolic" : "",
	       c->unknown_spatial ? " X:spatial-unknown" : "", c->declare_out ? " Y:declared" : "");
	append_list(buf, len, "-> ref out", c->out, c->n);
	append_list(buf, len, "pad_begin", c->pb, c->n);
	append_list(buf, len, "pad_end", c->pe, c->n);
}

/* floor(t / 2), written the long way (C's `/` truncates toward zero). */
static int64_t floor_div2(int64_t t)
{
	return t >= 0 ? t / 2 : -((-t + 1) / 2);
}

/* Output size and pads of every axis, from the ConvTranspose spec text:
 * natural = stride*(in-1) + output_padding + (kernel-1)*dilation + 1; output_shape given:
 * total = natural - output_shape, SAME_UPPER begin = floor(total/2), otherwise end =
 * floor(total/2), the other side takes the rest; SAME_*: output_shape = in*stride, same
 * split; VALID: no pads; NOTSET: out = natural - pads (an empty input axis may give 0). */
static void ct_ref_geometry(struct ct_cfg *c)
{
	for (int i = 0; i < c->n; i++) {
		int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
		int64_t want = -1;
		if (c->os_form)
			want = c->os[i];
		else if (c->auto_pad == AP_SAME_UPPER || c->auto_pad == AP_SAME_LOWER)
			want = c->in[i] * c->s[i];
		if (want >= 0) {
			int64_t total = natural - want;
			if (c->auto_pad == AP_SAME_UPPER) {
				c->pb[i] = floor_div2(total);
				c->pe[i] = total - c->pb[i];
			} else {
				c->pe[i] = floor_div2(total);
				c->pb[i] = total - c->pe[i];
			}
			c->out[i] = want;
		} else if (c->auto_pad == AP_VALID) {
			c->pb[i] = c->pe[i] = 0;
			c->out[i] = natural < 0 ? 0 : natural;
		} else {
			c->pb[i] = c->has_pads ? c->pads[i] : 0;
			c->pe[i] = c->has_pads ? c->pads[c->n + i] : 0;
			c->out[i] = natural - c->pb[i] - c->pe[i];
			if (c->out[i] < 0)
				c->out[i] = 0;
		}
	}
}

static void ct_random(struct ct_cfg *c, uint64_t seed)
{
	static const int v1_opsets[] = { 1, 6, 10 }, v11_opsets[] = { 11, 13, 18, 21 },
	                 v22_opsets[] = { 22, 23, 28 };
	static const int dtypes[] = { MB_FLOAT, MB_DOUBLE, MB_FLOAT16, MB_BFLOAT16 };
	struct rng r = { seed };
	int64_t cg, mg, max_in;
	int mode;

	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->version = (int[]){ 1, 11, 22 }[rng_int(&r, 0, 2)];
	if (c->version == 1)
		c->opset = v1_opsets[rng_int(&r, 0, 2)];
	else if (c->version == 11)
		c->opset = v11_opsets[rng_int(&r, 0, 3)];
	else
		c->opset = v22_opsets[rng_int(&r, 0, 2)];
	c->dtype = dtypes[rng_int(&r, 0, c->version == 22 ? 3 : 2)];
	c->n = (int)rng_int(&r, 0, 9);
	c->n = c->n < 3 ? 1 : c->n < 7 ? 2 : 3;
	max_in = c->n == 1 ? 9 : c->n == 2 ? 6 : 4;
	/* groups: plain, grouped, or depthwise (one input channel per group) */
	mode = (int)rng_int(&r, 0, 9);
	c->group = mode < 5 ? 1 : rng_int(&r, 2, 4);
	cg = mode >= 8 ? 1 : rng_int(&r, 1, 3);
	mg = rng_int(&r, 1, 3);
	c->c = cg * c->group;
	c->m = mg * c->group;
	c->batch = rng_int(&r, 1, 3);
	bool large = c->n < 3 && rng_chance(&r, 3); /* sizes where blocked kernels kick in */
	if (large) {
		c->group = rng_int(&r, 1, 2);
		cg = rng_int(&r, 4, 16);
		mg = rng_int(&r, 4, 16);
		c->c = cg * c->group;
		c->m = mg * c->group;
		c->batch = rng_int(&r, 1, 2);
		max_in = c->n == 1 ? 40 : 12;
	}
	for (int i = 0; i < c->n; i++) {
		c->in[i] = rng_int(&r, 1, max_in);
		c->k[i] = rng_int(&r, 1, c->n == 3 ? 3 : large ? 5 : 4);
		c->s[i] = rng_chance(&r, 35) ? 1 : rng_int(&r, 1, 3);
		c->d[i] = rng_chance(&r, 55) ? 1 : rng_int(&r, 1, 3);
		int64_t mx = c->s[i] > c->d[i] ? c->s[i] : c->d[i];
		c->op[i] = rng_chance(&r, 60) ? 0 : rng_int(&r, 0, mx - 1);
		c->has_s = c->has_s || c->s[i] != 1;
		c->has_d = c->has_d || c->d[i] != 1;
		c->has_op = c->has_op || c->op[i] != 0;
	}
	if (rng_chance(&r, 3)) /* zero-sized: an empty batch or spatial axis */
		*(rng_chance(&r, 50) ? &c->batch : &c->in[rng_int(&r, 0, c->n - 1)]) = 0;
	c->has_s = c->has_s || rng_chance(&r, 30);
	c->has_d = c->has_d || rng_chance(&r, 30);
	c->has_op = c->has_op || rng_chance(&r, 20);
	c->has_ks = rng_chance(&r, 30);
	mode = (int)rng_int(&r, 0, 99);
	if (mode < 35) { /* NOTSET with explicit pads keeping every output >= 1 */
		c->auto_pad = AP_NOTSET;
		c->has_pads = true;
		for (int i = 0; i < c->n; i++) {
			int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
			int64_t room = natural - 1 < 0 ? 0 : natural - 1;
			c->pads[i] = rng_int(&r, 0, room < 3 ? room : 3);
			room -= c->pads[i];
			c->pads[c->n + i] = rng_int(&r, 0, room < 3 ? room : 3);
		}
	} else if (mode < 42) {
		c->auto_pad = AP_NOTSET;
	} else if (mode < 75) {
		c->auto_pad = mode < 54 ? AP_SAME_UPPER : mode < 66 ? AP_SAME_LOWER : AP_VALID;
	} else { /* output_shape: around the natural size, larger ones too */
		c->auto_pad = (int)rng_int(&r, 0, 3);
		c->os_form = rng_chance(&r, 70) ? 1 : 2;
		/* explicit pads beside output_shape are ignored (only allowed with NOTSET) */
		c->has_pads = c->auto_pad == AP_NOTSET && rng_chance(&r, 30);
		for (int i = 0; i < c->n; i++) {
			int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
			c->os[i] = rng_int(&r, natural - 3 < 1 ? 1 : natural - 3, natural + 3);
		}
		for (int i = 0; c->has_pads && i < 2 * c->n; i++)
			c->pads[i] = rng_int(&r, 0, 2);
	}
	c->ap_attr = c->auto_pad != AP_NOTSET || rng_chance(&r, 30);
	c->bias = (int)rng_int(&r, 0, 2);
	if (c->bias == 0 && rng_chance(&r, 15))
		c->bias = 3;
	c->w_init = rng_chance(&r, 50);
	c->sym_batch = rng_chance(&r, 25);
	c->unknown_spatial = rng_chance(&r, 10);
	c->declare_out = !c->sym_batch && !c->unknown_spatial && rng_chance(&r, 50);
	ct_ref_geometry(c);
}

/* ---- values in any floating dtype ---------------------------------------------------------- */

/* Rounds v to the dtype (float16/bfloat16 through float32: v is already a float here). */
static double to_dtype(int dtype, double v)
{
	switch (dtype) {
	case MB_FLOAT: return (float)v;
	case MB_FLOAT16: return onnxrun__f16_to_f32(onnxrun__f32_to_f16((float)v));
	case MB_BFLOAT16: return onnxrun__bf16_to_f32(onnxrun__f32_to_bf16((float)v));
	default: return v;
	}
}

static void store(int dtype, void *data, int64_t i, double v)
{
	switch (dtype) {
	case MB_FLOAT: ((float *)data)[i] = (float)v; break;
	case MB_DOUBLE: ((double *)data)[i] = v; break;
	case MB_FLOAT16: ((uint16_t *)data)[i] = onnxrun__f32_to_f16((float)v); break;
	default: ((uint16_t *)data)[i] = onnxrun__f32_to_bf16((float)v); break;
	}
}

static double load(int dtype, const void *data, int64_t i)
{
	switch (dtype) {
	case MB_FLOAT: return ((const float *)data)[i];
	case MB_DOUBLE: return ((const double *)data)[i];
	case MB_FLOAT16: return onnxrun__f16_to_f32(((const uint16_t *)data)[i]);
	default: return onnxrun__bf16_to_f32(((const uint16_t *)data)[i]);
	}
}

/* Random values in [-1, 1) representable in dtype. */
static double *random_values(struct rng *r, int dtype, int64_t count)
{
	double *v = malloc((size_t)(count ? count : 1) * sizeof *v);
	assert_non_null(v);
	for (int64_t i = 0; i < count; i++)
		v[i] = to_dtype(dtype, rng_sym(r));
	return v;
}

/* A tensor of dtype holding v. */
static struct onnxrun_tensor *make_tensor(struct onnxrun_env *env, int dtype, int rank, const int64_t *dims,
                                          const double *v)
{
	struct onnxrun_tensor *t = NULL;
	assert_int_equal(onnxrun_tensor_create(env, (enum onnxrun_dtype)dtype, rank, dims, &t), ONNXRUN_OK);
	for (int64_t i = 0; i < onnxrun_tensor_numel(t); i++)
		store(dtype, onnxrun_tensor_data(t), i, v[i]);
	return t;
}

/* An initializer of dtype holding v, as raw_data. */
static void add_initializer(Onnx__ModelProto *m, const char *name, int dtype, int rank, const int64_t *dims,
                            const double *v)
{
	const int64_t count = prod(dims, rank);
	const size_t es = onnxrun_dtype_size((enum onnxrun_dtype)dtype);
	unsigned char *raw = malloc((size_t)(count ? count : 1) * es);
	Onnx__TensorProto *t = mb_tensor(name, dtype, (size_t)rank, dims);
	assert_non_null(raw);
	for (int64_t i = 0; i < count; i++)
		store(dtype, raw, i, v[i]);
	mb_tensor_raw_values(t, raw, (size_t)count * es);
	mb_add_initializer(m, t);
	free(raw);
}

/* ---- ConvTranspose: model, reference, comparison ------------------------------------------ */

static void ints_attr(Onnx__NodeProto *node, const char *name, const int64_t *v, int n)
{
	mb_attr_ints(node, name, (size_t)n, v);
}

static uint8_t *ct_model(const struct ct_cfg *c, const double *w, const double *b, size_t *size)
{
	int64_t xd[5] = { c->batch, c->c }, wd[5] = { c->c, c->m / c->group }, yd[5] = { c->batch, c->m };
	char shape[128];
	const int rank = c->n + 2;
	Onnx__ModelProto *m = mb_model(10);
	Onnx__NodeProto *node;
	memcpy(xd + 2, c->in, (size_t)c->n * sizeof xd[0]);
	memcpy(wd + 2, c->k, (size_t)c->n * sizeof wd[0]);
	memcpy(yd + 2, c->out, (size_t)c->n * sizeof yd[0]);
	mb_opset(m, "", c->opset);
	shape_text(shape, sizeof shape, xd, rank, c->sym_batch, c->unknown_spatial ? 2 : -1);
	mb_input(m, "x", c->dtype, shape);
	shape_text(shape, sizeof shape, wd, rank, false, -1);
	if (c->w_init)
		add_initializer(m, "w", c->dtype, rank, wd, w);
	else
		mb_input(m, "w", c->dtype, shape);
	if (c->bias == 1)
		mb_input(m, "b", c->dtype, (snprintf(shape, sizeof shape, "%lld", (long long)c->m), shape));
	else if (c->bias == 2)
		add_initializer(m, "b", c->dtype, 1, &c->m, b);
	shape_text(shape, sizeof shape, yd, rank, false, -1);
	mb_output(m, "y", c->dtype, c->declare_out ? shape : NULL);
	node = mb_node(m, "ct", "ConvTranspose", "", c->bias == 1 || c->bias == 2 ? "x,w,b" : c->bias == 3 ? "x,w," : "x,w",
	               "y");
	if (c->has_s)
		ints_attr(node, "strides", c->s, c->n);
	if (c->has_d)
		ints_attr(node, "dilations", c->d, c->n);
	if (c->has_op)
		ints_attr(node, "output_padding", c->op, c->n);
	if (c->has_ks)
		ints_attr(node, "kernel_shape", c->k, c->n);
	if (c->has_pads)
		ints_attr(node, "pads", c->pads, 2 * c->n);
	if (c->group != 1 || rng_chance(&(struct rng){ c->seed ^ 7 }, 30))
		mb_attr_int(node, "group", c->group);
	if (c->ap_attr)
		mb_attr_string(node, "auto_pad", ap_names[c->auto_pad]);
	if (c->os_form == 1) {
		ints_attr(node, "output_shape", c->os, c->n);
	} else if (c->os_form == 2) {
		int64_t full[5] = { c->batch, c->m };
		memcpy(full + 2, c->os, (size_t)c->n * sizeof full[0]);
		ints_attr(node, "output_shape", full, c->n + 2);
	}
	return mb_finish(m, size);
}

/* Reference output: sum[] gets bias + sum of products (long double), mag[] the sum of their
 * magnitudes, terms[] the number of products, per output element (row-major N, M, out...). */
static void ct_reference(const struct ct_cfg *c, const double *x, const double *w, const double *b,
                         long double *sum, long double *mag, int64_t *terms)
{
	const int n = c->n;
	const int64_t cg = c->c / c->group, mg = c->m / c->group;
	const int64_t in_sz = prod(c->in, n), k_sz = prod(c->k, n), out_sz = prod(c->out, n);
	for (int64_t nb = 0; nb < c->batch; nb++)
		for (int64_t oc = 0; oc < c->m; oc++)
			for (int64_t o = 0; o < out_sz; o++) {
				int64_t at = (nb * c->m + oc) * out_sz + o;
				sum[at] = b ? b[oc] : 0;
				mag[at] = b ? fabs(b[oc]) : 0;
				terms[at] = 0;
			}
	for (int64_t nb = 0; nb < c->batch; nb++)
	for (int64_t ic = 0; ic < c->c; ic++)
	for (int64_t ml = 0; ml < mg; ml++)
	for (int64_t i = 0; i < in_sz; i++)
	for (int64_t kk = 0; kk < k_sz; kk++) {
		const int64_t grp = ic / cg, oc = grp * mg + ml;
		int64_t irem = i, krem = kk, o = 0, stride = 1;
		bool inside = true;
		/* per axis, from the last: out index = in*stride - pad_begin + k*dilation */
		for (int a = n - 1; a >= 0; a--) {
			int64_t ia = irem % c->in[a], ka = krem % c->k[a];
			int64_t oa = ia * c->s[a] - c->pb[a] + ka * c->d[a];
			irem /= c->in[a];
			krem /= c->k[a];
			inside = inside && oa >= 0 && oa < c->out[a];
			o += oa * stride;
			stride *= c->out[a];
		}
		if (!inside)
			continue;
		const long double p = (long double)x[(nb * c->c + ic) * in_sz + i] *
		                      (long double)w[(ic * mg + ml) * k_sz + kk];
		const int64_t at = (nb * c->m + oc) * out_sz + o;
		sum[at] += p;
		mag[at] += fabsl(p);
		terms[at]++;
	}
}

/* Error bound for one output element. With p products plus the bias, every summand goes
 * through at most p + 1 roundings of unit u in any summation order (one for its product,
 * p for the additions; fused multiply-adds only remove roundings), so
 *     |computed - exact| <= gamma(p+1) * mag,   gamma(j) = j*u / (1 - j*u)
 * (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), mag = |bias| + sum |x*w|.
 * float: u = 2^-24; double: u = 2^-53. float16/bfloat16 accumulate in float32 (u = 2^-24)
 * and round once to the storage type: that adds at most u_t*(|exact| + the float32 error),
 * u_t = 2^-11 (float16) / 2^-8 (bfloat16), or half the smallest subnormal below the normal
 * range (2^-25 / 2^-134). The reference's own long double error (u = 2^-64) is added too. */
static double ct_tolerance(int dtype, long double exact, long double mag, int64_t terms)
{
	const double u = dtype == MB_DOUBLE ? 0x1p-53 : 0x1p-24;
	const double j = (double)(terms + 1);
	const double acc = (double)mag * (j * u / (1 - j * u) + 2 * j * 0x1p-64);
	double tol = acc;
	if (dtype == MB_FLOAT16)
		tol += 0x1p-11 * (fabs((double)exact) + acc) + 0x1p-25;
	else if (dtype == MB_BFLOAT16)
		tol += 0x1p-8 * (fabs((double)exact) + acc) + 0x1p-134;
	return tol;
}

struct stats {
	int runs, failures;
	int64_t elements;
	double worst[17]; /* largest |error| / tolerance seen, per dtype */
	int by_dtype[17];
	int by_version[29], by_rank[4], by_mode[7], negative_total, w_init, bias, zero_sized;
};

static void report_failure(struct stats *st, const char *cfg, const char *fmt, ...)
	__attribute__((format(__printf__, 3, 4)));
static void report_failure(struct stats *st, const char *cfg, const char *fmt, ...)
{
	va_list ap;
	if (st->failures++ >= MAX_FAILURES_SHOWN)
		return;
	va_start(ap, fmt);
	fprintf(stdout, "FAIL ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n  config: %s\n", cfg);
	va_end(ap);
}

/* Loads, runs and checks one model; the inputs are bound by name (those not initializers). */
static const struct onnxrun_tensor *run_model(struct onnxrun_env *env, const uint8_t *bytes, size_t size,
                                              struct onnxrun_tensor *const *inputs, const char *const *names,
                                              int n_inputs, struct onnxrun_model **model,
                                              struct onnxrun_session **session, struct stats *st,
                                              const char *cfg)
{
	const struct onnxrun_tensor *y = NULL;
	*model = NULL;
	*session = NULL;
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, model)) {
		report_failure(st, cfg, "load: %s", onnxrun_env_error(env));
		return NULL;
	}
	if (onnxrun_session_create(*model, session)) {
		report_failure(st, cfg, "session: %s", onnxrun_env_error(env));
		return NULL;
	}
	for (int i = 0; i < n_inputs; i++)
		if (inputs[i] && onnxrun_session_set_input_by_name(*session, names[i], inputs[i])) {
			report_failure(st, cfg, "set input %s: %s", names[i], onnxrun_session_error(*session));
			return NULL;
		}
	if (onnxrun_session_run(*session) || onnxrun_session_output(*session, 0, &y)) {
		report_failure(st, cfg, "run: %s", onnxrun_session_error(*session));
		return NULL;
	}
	return y;
}

static bool same_dims(const struct onnxrun_tensor *y, int dtype, int rank, const int64_t *dims)
{
	return (int)onnxrun_tensor_dtype(y) == dtype && onnxrun_tensor_rank(y) == rank &&
	       !memcmp(onnxrun_tensor_dims(y), dims, (size_t)rank * sizeof dims[0]);
}

static void ct_check_one(struct onnxrun_env *env, uint64_t seed, struct stats *st)
{
	struct ct_cfg c;
	char cfg[1024];
	struct rng r;
	int64_t xd[5], wd[5], yd[5];
	struct onnxrun_tensor *in[3] = { NULL, NULL, NULL };
	const char *const names[3] = { "x", "w", "b" };
	struct onnxrun_model *model;
	struct onnxrun_session *session;
	const struct onnxrun_tensor *y;
	double *x, *w, *b = NULL;
	size_t size;

	ct_random(&c, seed);
	ct_str(&c, cfg, sizeof cfg);
	r.s = seed * 31 + 17;
	xd[0] = yd[0] = c.batch;
	xd[1] = wd[0] = c.c;
	wd[1] = c.m / c.group;
	yd[1] = c.m;
	memcpy(xd + 2, c.in, (size_t)c.n * sizeof xd[0]);
	memcpy(wd + 2, c.k, (size_t)c.n * sizeof wd[0]);
	memcpy(yd + 2, c.out, (size_t)c.n * sizeof yd[0]);
	const int rank = c.n + 2;
	const int64_t ny = prod(yd, rank);
	x = random_values(&r, c.dtype, prod(xd, rank));
	w = random_values(&r, c.dtype, prod(wd, rank));
	if (c.bias == 1 || c.bias == 2)
		b = random_values(&r, c.dtype, c.m);
	uint8_t *bytes = ct_model(&c, w, b, &size);
	in[0] = make_tensor(env, c.dtype, rank, xd, x);
	if (!c.w_init)
		in[1] = make_tensor(env, c.dtype, rank, wd, w);
	if (c.bias == 1)
		in[2] = make_tensor(env, c.dtype, 1, &c.m, b);
	st->runs++;
	st->by_dtype[c.dtype]++;
	st->by_version[c.version]++;
	st->by_rank[c.n]++;
	st->by_mode[c.os_form ? 4 + c.os_form : c.auto_pad == AP_NOTSET ? (c.has_pads ? 0 : 1) : 1 + c.auto_pad]++;
	st->w_init += c.w_init;
	st->bias += c.bias == 1 || c.bias == 2;
	st->zero_sized += ny == 0 || prod(xd, rank) == 0;
	for (int i = 0; i < c.n; i++)
		if (c.pb[i] < 0 || c.pe[i] < 0) {
			st->negative_total++;
			break;
		}
	y = run_model(env, bytes, size, in, names, 3, &model, &session, st, cfg);
	if (y && !same_dims(y, c.dtype, rank, yd)) {
		char got[128];
		shape_text(got, sizeof got, onnxrun_tensor_dims(y), onnxrun_tensor_rank(y), false, -1);
		report_failure(st, cfg, "output %s [%s], expected the reference shape",
		               dtype_name(onnxrun_tensor_dtype(y)), got);
	} else if (y) {
		long double *sum = malloc((size_t)(ny ? ny : 1) * sizeof *sum);
		long double *mag = malloc((size_t)(ny ? ny : 1) * sizeof *mag);
		int64_t *terms = malloc((size_t)(ny ? ny : 1) * sizeof *terms);
		assert_true(sum && mag && terms);
		ct_reference(&c, x, w, b, sum, mag, terms);
		for (int64_t i = 0; i < ny; i++) {
			double got = load(c.dtype, onnxrun_tensor_data(y), i);
			double tol = ct_tolerance(c.dtype, sum[i], mag[i], terms[i]);
			double err = fabs(got - (double)sum[i]);
			if (!(err <= tol)) {
				report_failure(st, cfg, "y[%lld] = %.17g, reference %.17Lg, |error| %.3g > bound %.3g "
				               "(%lld products)", (long long)i, got, sum[i], err, tol,
				               (long long)terms[i]);
				break;
			}
			if (tol > 0 && err / tol > st->worst[c.dtype])
				st->worst[c.dtype] = err / tol;
		}
		st->elements += ny;
		free(sum);
		free(mag);
		free(terms);
	}
	onnxrun_session_free(session);
	onnxrun_model_free(model);
	for (int i = 0; i < 3; i++)
		onnxrun_tensor_free(in[i]);
	free(bytes);
	free(x);
	free(w);
	free(b);
}

static void test_conv_transpose_random(void **state)
{
	struct onnxrun_env *env = NULL;
	struct stats st = { 0 };
	const int count = scaled(CT_CONFIGS);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	for (int i = 0; i < count; i++)
		if (!one_seed() || one_seed() == (uint64_t)0xc7000000 + (uint64_t)i)
			ct_check_one(env, (uint64_t)0xc7000000 + (uint64_t)i, &st);
	onnxrun_env_free(env);
	printf("ConvTranspose: %d configs, %lld elements compared, %d failures\n", st.runs,
	       (long long)st.elements, st.failures);
	printf("  dtypes (configs, worst |error|/bound): float %d %.3g, double %d %.3g, float16 %d %.3g, "
	       "bfloat16 %d %.3g\n", st.by_dtype[MB_FLOAT], st.worst[MB_FLOAT], st.by_dtype[MB_DOUBLE],
	       st.worst[MB_DOUBLE], st.by_dtype[MB_FLOAT16], st.worst[MB_FLOAT16],
	       st.by_dtype[MB_BFLOAT16], st.worst[MB_BFLOAT16]);
	printf("  versions 1/11/22: %d/%d/%d; spatial rank 1/2/3: %d/%d/%d; NOTSET+pads %d, NOTSET %d, "
	       "SAME_UPPER %d, SAME_LOWER %d, VALID %d, output_shape spatial %d, full %d; negative "
	       "total padding %d; W initializer %d; bias %d; zero-sized %d\n", st.by_version[1],
	       st.by_version[11], st.by_version[22], st.by_rank[1], st.by_rank[2], st.by_rank[3],
	       st.by_mode[0], st.by_mode[1], st.by_mode[2], st.by_mode[3], st.by_mode[4], st.by_mode[5],
	       st.by_mode[6], st.negative_total, st.w_init, st.bias, st.zero_sized);
	if (st.failures)
		fail_msg("%d of %d ConvTranspose configs failed (the first %d are printed above)", st.failures,
		         st.runs, MAX_FAILURES_SHOWN);
}

/* ---- ConvTranspose float16/bfloat16 on the fast paths ------------------------------------------ */

#define HALF_FAST_CONFIGS 160

/* A float16/bfloat16 layer-like config: family 0 plain or grouped (per-phase GEMM), 1 few
 * output channels over >= 4 input channels with a longer kernel (GEMM + overlap-add, rank
 * <= 2), 2 depthwise (rank <= 2). Inputs at least as large as the dilated kernel and
 * strides no larger than the kernel, so the output-driven paths do not waste work and the
 * fast path is taken (test_op_conv_transpose checks that directly). */
static void ct_half_fast_random(struct ct_cfg *c, uint64_t seed)
{
	struct rng r = { seed };
	const int family = (int)rng_int(&r, 0, 2);
	int64_t cg, mg;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->dtype = rng_chance(&r, 50) ? MB_FLOAT16 : MB_BFLOAT16;
	c->opset = c->dtype == MB_BFLOAT16 ? 22 : (int[]){ 11, 13, 22 }[rng_int(&r, 0, 2)];
	c->version = c->opset >= 22 ? 22 : 11;
	c->n = family == 0 ? (int)rng_int(&r, 1, 3) : (int)rng_int(&r, 1, 2);
	c->batch = rng_int(&r, 1, 2);
	c->group = family == 2 ? rng_int(&r, 2, 6) : rng_int(&r, 1, 2);
	cg = family == 2 ? 1 : family == 1 ? rng_int(&r, 4, 9) : rng_int(&r, 1, 12);
	mg = family == 2 ? 1 : family == 1 ? rng_int(&r, 1, 4) : rng_int(&r, 1, 12);
	c->c = cg * c->group;
	c->m = mg * c->group;
	for (int i = 0; i < c->n; i++) {
		c->k[i] = rng_int(&r, family == 1 ? 2 : 1, c->n == 3 ? 3 : 5);
		c->s[i] = rng_int(&r, 1, c->k[i] < 3 ? c->k[i] : 3);
		c->d[i] = rng_chance(&r, 70) ? 1 : 2;
		c->in[i] = (c->k[i] - 1) * c->d[i] + 1 + rng_int(&r, 0, c->n == 1 ? 20 : c->n == 2 ? 6 : 2);
		c->op[i] = rng_chance(&r, 70) ? 0 : rng_int(&r, 0, (c->s[i] > c->d[i] ? c->s[i] : c->d[i]) - 1);
		c->has_s = c->has_d = c->has_op = true;
	}
	c->has_ks = rng_chance(&r, 30);
	if (rng_chance(&r, 70)) { /* explicit pads, leaving every output >= 1 */
		c->has_pads = true;
		for (int i = 0; i < c->n; i++) {
			int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
			c->pads[i] = rng_int(&r, 0, natural / 3 < 3 ? natural / 3 : 3);
			c->pads[c->n + i] = rng_int(&r, 0, natural / 3 < 3 ? natural / 3 : 3);
		}
	} else {
		c->auto_pad = (int)rng_int(&r, 1, 3);
		c->ap_attr = true;
	}
	c->bias = (int)rng_int(&r, 0, 2);
	c->w_init = rng_chance(&r, 50);
	ct_ref_geometry(c);
}

/* Loads the model (ISA already set) and runs it twice on `threads` threads; returns a
 * malloc'd copy of the output's bytes, NULL (after reporting) on an error. pre_packed: set
 * to whether the node holds a pre-packed state after load. */
static void *half_run(struct onnxrun_env *env, const uint8_t *bytes, size_t size, struct onnxrun_tensor *const *in,
                      int threads, bool *pre_packed, struct stats *st, const char *cfg)
{
	static const char *const names[3] = { "x", "w", "b" };
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y;
	void *copy = NULL;
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &model)) {
		report_failure(st, cfg, "load: %s", onnxrun_env_error(env));
		return NULL;
	}
	*pre_packed = model->n_nodes == 1 && model->nodes[0].op_state != NULL;
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
	for (int i = 0; i < 3; i++)
		if (in[i])
			assert_int_equal(onnxrun_session_set_input_by_name(s, names[i], in[i]), ONNXRUN_OK);
	if (onnxrun_session_run(s) || onnxrun_session_run(s) || onnxrun_session_output(s, 0, &y)) {
		report_failure(st, cfg, "run (threads %d): %s", threads, onnxrun_session_error(s));
	} else {
		size_t nb = (size_t)onnxrun_tensor_numel(y) * onnxrun_dtype_size(onnxrun_tensor_dtype(y));
		copy = malloc(nb ? nb : 1);
		assert_non_null(copy);
		memcpy(copy, onnxrun_tensor_data(y), nb);
	}
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	return copy;
}

/* One config under every ISA and on 1 and 2 threads, against the reference bound, across
 * thread counts (bitwise) and against the float32 model's output rounded once (bitwise:
 * the half path is the float32 path plus one rounding). */
static void ct_half_fast_check(struct onnxrun_env *env, uint64_t seed, struct stats *st)
{
	TEST_ALL_ISAS(isas);
	struct ct_cfg c, c32;
	char cfg[1024];
	struct rng r;
	int64_t xd[5], wd[5];
	struct onnxrun_tensor *in[3] = { NULL, NULL, NULL }, *in32[3] = { NULL, NULL, NULL };
	double *x, *w, *b = NULL;
	size_t size, size32;

	ct_half_fast_random(&c, seed);
	ct_str(&c, cfg, sizeof cfg);
	c32 = c;
	c32.dtype = MB_FLOAT;
	r.s = seed * 31 + 17;
	xd[0] = c.batch;
	xd[1] = wd[0] = c.c;
	wd[1] = c.m / c.group;
	memcpy(xd + 2, c.in, (size_t)c.n * sizeof xd[0]);
	memcpy(wd + 2, c.k, (size_t)c.n * sizeof wd[0]);
	const int rank = c.n + 2;
	const int64_t ny = c.batch * c.m * prod(c.out, c.n);
	x = random_values(&r, c.dtype, prod(xd, rank));
	w = random_values(&r, c.dtype, prod(wd, rank));
	if (c.bias)
		b = random_values(&r, c.dtype, c.m);
	uint8_t *bytes = ct_model(&c, w, b, &size), *bytes32 = ct_model(&c32, w, b, &size32);
	in[0] = make_tensor(env, c.dtype, rank, xd, x);
	in32[0] = make_tensor(env, MB_FLOAT, rank, xd, x);
	if (!c.w_init) {
		in[1] = make_tensor(env, c.dtype, rank, wd, w);
		in32[1] = make_tensor(env, MB_FLOAT, rank, wd, w);
	}
	if (c.bias == 1) {
		in[2] = make_tensor(env, c.dtype, 1, &c.m, b);
		in32[2] = make_tensor(env, MB_FLOAT, 1, &c.m, b);
	}
	long double *sum = malloc((size_t)ny * sizeof *sum), *mag = malloc((size_t)ny * sizeof *mag);
	int64_t *terms = malloc((size_t)ny * sizeof *terms);
	assert_true(sum && mag && terms);
	ct_reference(&c, x, w, b, sum, mag, terms);
	st->runs++;
	st->by_dtype[c.dtype]++;
	st->by_rank[c.n]++;
	st->w_init += c.w_init;
	st->bias += c.bias != 0;
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		uint16_t *first = NULL;
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		for (int threads = 1; threads <= 2; threads++) {
			bool packed = false, packed32 = false;
			uint16_t *y = half_run(env, bytes, size, in, threads, &packed, st, cfg);
			float *y32 = half_run(env, bytes32, size32, in32, threads, &packed32, st, cfg);
			if (!y || !y32) {
				free(y);
				free(y32);
				continue;
			}
			/* a constant W is packed at load for the GEMM implementations; the depthwise one
			 * (one input and one output channel per group, 1-D or 2-D, at most 64 taps)
			 * reads W as it is */
			const int64_t taps = c.k[0] * (c.n > 1 ? c.k[1] : 1) * (c.n > 2 ? c.k[2] : 1);
			const bool depthwise = c.n <= 2 && c.c == c.group && c.m == c.group && taps <= 64;
			const bool want = c.w_init && !depthwise;
			if (packed != want || packed32 != want)
				report_failure(st, cfg, "isa %d: W %s%s but the node %s a pre-packed state", (int)isas[ii],
				               c.w_init ? "is an initializer" : "is an input", depthwise ? " (depthwise)" : "",
				               packed ? "has" : "has no");
			for (int64_t i = 0; i < ny; i++) {
				double got = load(c.dtype, y, i), err = fabs(got - (double)sum[i]);
				double tol = ct_tolerance(c.dtype, sum[i], mag[i], terms[i]);
				uint16_t want32 = c.dtype == MB_FLOAT16 ? onnxrun__f32_to_f16(y32[i]) : onnxrun__f32_to_bf16(y32[i]);
				if (!(err <= tol)) {
					report_failure(st, cfg, "isa %d threads %d: y[%lld] = %.9g, reference %.12Lg, |error| "
					               "%.3g > bound %.3g", (int)isas[ii], threads, (long long)i, got, sum[i],
					               err, tol);
					break;
				}
				if (y[i] != want32) {
					report_failure(st, cfg, "isa %d threads %d: y[%lld] = 0x%04x, the float32 model's "
					               "%.9g rounds to 0x%04x", (int)isas[ii], threads, (long long)i, y[i],
					               (double)y32[i], want32);
					break;
				}
				if (tol > 0 && err / tol > st->worst[c.dtype])
					st->worst[c.dtype] = err / tol;
			}
			if (first && memcmp(first, y, (size_t)ny * sizeof *y))
				report_failure(st, cfg, "isa %d: 2 threads differ bitwise from 1", (int)isas[ii]);
			st->elements += ny;
			free(y32);
			if (first)
				free(y);
			else
				first = y;
		}
		free(first);
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	for (int i = 0; i < 3; i++) {
		onnxrun_tensor_free(in[i]);
		onnxrun_tensor_free(in32[i]);
	}
	free(sum);
	free(mag);
	free(terms);
	free(bytes);
	free(bytes32);
	free(x);
	free(w);
	free(b);
}

static void test_conv_transpose_half_fast(void **state)
{
	struct onnxrun_env *env = NULL;
	struct stats st = { 0 };
	const int count = scaled(HALF_FAST_CONFIGS);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	for (int i = 0; i < count; i++)
		if (!one_seed() || one_seed() == (uint64_t)0xf1600000 + (uint64_t)i)
			ct_half_fast_check(env, (uint64_t)0xf1600000 + (uint64_t)i, &st);
	onnxrun_env_free(env);
	printf("ConvTranspose float16/bfloat16 fast paths: %d configs (float16 %d, bfloat16 %d; spatial rank "
	       "1/2/3: %d/%d/%d; W initializer %d; bias %d), %lld elements compared over ISAs x threads "
	       "1/2, worst |error|/bound float16 %.3g, bfloat16 %.3g, %d failures\n", st.runs,
	       st.by_dtype[MB_FLOAT16], st.by_dtype[MB_BFLOAT16], st.by_rank[1], st.by_rank[2], st.by_rank[3],
	       st.w_init, st.bias, (long long)st.elements, st.worst[MB_FLOAT16], st.worst[MB_BFLOAT16],
	       st.failures);
	if (st.failures)
		fail_msg("%d failures in %d float16/bfloat16 fast-path configs (the first %d are printed above)",
		         st.failures, st.runs, MAX_FAILURES_SHOWN);
}

/* ---- ConvTranspose float64 on its own fast path ------------------------------------------------ */

#define F64_FAST_CONFIGS 120

/* A float64 layer-like config (the half generator's shapes: plain/grouped, few output
 * channels, depthwise), W an initializer or a graph input, bias initializer/input/absent. */
static void ct_f64_fast_random(struct ct_cfg *c, uint64_t seed)
{
	ct_half_fast_random(c, seed);
	c->dtype = MB_DOUBLE;
}

/* One float64 config through a session under every ISA on 1, 2 and 4 threads: within the
 * reference bound, and bitwise identical across thread counts. */
static void ct_f64_fast_check(struct onnxrun_env *env, uint64_t seed, struct stats *st)
{
	TEST_ALL_ISAS(isas);
	struct ct_cfg c;
	char cfg[1024];
	struct rng r;
	int64_t xd[5], wd[5];
	struct onnxrun_tensor *in[3] = { NULL, NULL, NULL };
	double *x, *w, *b = NULL;
	size_t size;

	ct_f64_fast_random(&c, seed);
	ct_str(&c, cfg, sizeof cfg);
	r.s = seed * 31 + 17;
	xd[0] = c.batch;
	xd[1] = wd[0] = c.c;
	wd[1] = c.m / c.group;
	memcpy(xd + 2, c.in, (size_t)c.n * sizeof xd[0]);
	memcpy(wd + 2, c.k, (size_t)c.n * sizeof wd[0]);
	const int rank = c.n + 2;
	const int64_t ny = c.batch * c.m * prod(c.out, c.n);
	x = random_values(&r, c.dtype, prod(xd, rank));
	w = random_values(&r, c.dtype, prod(wd, rank));
	if (c.bias)
		b = random_values(&r, c.dtype, c.m);
	uint8_t *bytes = ct_model(&c, w, b, &size);
	in[0] = make_tensor(env, c.dtype, rank, xd, x);
	if (!c.w_init)
		in[1] = make_tensor(env, c.dtype, rank, wd, w);
	if (c.bias == 1)
		in[2] = make_tensor(env, c.dtype, 1, &c.m, b);
	long double *sum = malloc((size_t)ny * sizeof *sum), *mag = malloc((size_t)ny * sizeof *mag);
	int64_t *terms = malloc((size_t)ny * sizeof *terms);
	assert_true(sum && mag && terms);
	ct_reference(&c, x, w, b, sum, mag, terms);
	st->runs++;
	st->by_rank[c.n]++;
	st->w_init += c.w_init;
	st->bias += c.bias != 0;
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		double *first = NULL;
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		for (int threads = 1; threads <= 4; threads *= 2) {
			bool packed = false;
			double *y = half_run(env, bytes, size, in, threads, &packed, st, cfg);
			if (!y)
				continue;
			for (int64_t i = 0; i < ny; i++) {
				double err = fabs(y[i] - (double)sum[i]), tol = ct_tolerance(c.dtype, sum[i], mag[i], terms[i]);
				if (!(err <= tol)) {
					report_failure(st, cfg, "isa %d threads %d: y[%lld] = %.17g, reference %.17Lg, |error| "
					               "%.3g > bound %.3g", (int)isas[ii], threads, (long long)i, y[i], sum[i],
					               err, tol);
					break;
				}
				if (tol > 0 && err / tol > st->worst[c.dtype])
					st->worst[c.dtype] = err / tol;
			}
			if (first && memcmp(first, y, (size_t)ny * sizeof *y))
				report_failure(st, cfg, "isa %d: %d threads differ bitwise from 1", (int)isas[ii], threads);
			st->elements += ny;
			if (first)
				free(y);
			else
				first = y;
		}
		free(first);
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	for (int i = 0; i < 3; i++)
		onnxrun_tensor_free(in[i]);
	free(sum);
	free(mag);
	free(terms);
	free(bytes);
	free(x);
	free(w);
	free(b);
}

static void test_conv_transpose_f64_fast(void **state)
{
	struct onnxrun_env *env = NULL;
	struct stats st = { 0 };
	const int count = scaled(F64_FAST_CONFIGS);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	for (int i = 0; i < count; i++)
		if (!one_seed() || one_seed() == (uint64_t)0xf6400000 + (uint64_t)i)
			ct_f64_fast_check(env, (uint64_t)0xf6400000 + (uint64_t)i, &st);
	onnxrun_env_free(env);
	printf("ConvTranspose float64 path: %d configs (spatial rank 1/2/3: %d/%d/%d; W initializer %d; bias %d), "
	       "%lld elements compared over ISAs x threads 1/2/4, worst |error|/bound %.3g, %d failures\n", st.runs,
	       st.by_rank[1], st.by_rank[2], st.by_rank[3], st.w_init, st.bias, (long long)st.elements,
	       st.worst[MB_DOUBLE], st.failures);
	if (st.failures)
		fail_msg("%d failures in %d float64 fast-path configs (the first %d are printed above)", st.failures,
		         st.runs, MAX_FAILURES_SHOWN);
}

/* Allocation failures on a float16 and a bfloat16 model (W pre-packed at load, and W fed at
 * run time with a depthwise one): every failure is a clean OUT_OF_MEMORY with a message, and
 * nothing stays allocated. */
static void test_conv_transpose_half_oom(void **state)
{
	struct ct_cfg c;
	int done_cfgs = 0;
	(void)state;
	/* pick configs from the fast-path generator: W initializer, W input, depthwise */
	for (uint64_t seed = 0xf1600000; done_cfgs < 4 && seed < 0xf1600000 + 400; seed++) {
		ct_half_fast_random(&c, seed);
		const bool dw = c.c == c.group && c.m == c.group;
		if ((done_cfgs == 0 && !(c.w_init && c.bias && !dw && c.dtype == MB_FLOAT16)) ||
		    (done_cfgs == 1 && !(!c.w_init && c.bias == 1 && !dw && c.dtype == MB_BFLOAT16)) ||
		    (done_cfgs == 2 && !(c.w_init && dw)) || (done_cfgs == 3 && !(!c.w_init && dw)))
			continue;
		done_cfgs++;
		char cfg[1024];
		struct rng r = { seed * 31 + 17 };
		int64_t xd[5] = { c.batch, c.c }, wd[5] = { c.c, c.m / c.group };
		memcpy(xd + 2, c.in, (size_t)c.n * sizeof xd[0]);
		memcpy(wd + 2, c.k, (size_t)c.n * sizeof wd[0]);
		double *x = random_values(&r, c.dtype, prod(xd, c.n + 2)), *w = random_values(&r, c.dtype, prod(wd, c.n + 2));
		double *b = random_values(&r, c.dtype, c.m);
		size_t size;
		uint8_t *bytes = ct_model(&c, w, c.bias ? b : NULL, &size);
		ct_str(&c, cfg, sizeof cfg);
		for (int threads = 1; threads <= 2; threads++) {
			long n, failures = 0;
			for (n = 0;; n++) {
				struct th_alloc a;
				struct onnxrun_env *env = th_env_counted(&a);
				struct onnxrun_model *model = NULL;
				struct onnxrun_session *s = NULL;
				struct onnxrun_tensor *in[3] = { NULL, NULL, NULL };
				const struct onnxrun_tensor *y;
				static const char *const names[3] = { "x", "w", "b" };
				enum onnxrun_status st;
				const char *msg = "";
				in[0] = make_tensor(env, c.dtype, c.n + 2, xd, x);
				if (!c.w_init)
					in[1] = make_tensor(env, c.dtype, c.n + 2, wd, w);
				if (c.bias == 1)
					in[2] = make_tensor(env, c.dtype, 1, &c.m, b);
				const long before = a.count;
				a.fail_at = before + n;
				if ((st = onnxrun_model_load_buffer(env, bytes, size, NULL, &model))) {
					msg = onnxrun_env_error(env);
				} else if ((st = onnxrun_session_create(model, &s))) {
					msg = "session_create failed";
				} else {
					st = onnxrun_session_set_threads(s, threads);
					for (int i = 0; !st && i < 3; i++)
						if (in[i])
							st = onnxrun_session_set_input_by_name(s, names[i], in[i]);
					if (!st)
						st = onnxrun_session_run(s);
					if (!st)
						st = onnxrun_session_run(s);
					if (!st)
						st = onnxrun_session_output(s, 0, &y);
					msg = onnxrun_session_error(s);
				}
				if (st && (st != ONNXRUN_ERROR_OUT_OF_MEMORY || !msg[0]))
					fail_msg("allocation %ld failed: status %s, message '%s': %s", n, onnxrun_status_str(st),
					         msg, cfg);
				const bool all_ran = a.count <= before + n;
				failures += st != ONNXRUN_OK;
				onnxrun_session_free(s);
				onnxrun_model_free(model);
				for (int i = 0; i < 3; i++)
					onnxrun_tensor_free(in[i]);
				onnxrun_env_free(env);
				if (a.live != 0)
					fail_msg("allocation %ld failed: %ld blocks leaked: %s", n, a.live, cfg);
				if (all_ran) {
					assert_int_equal(st, ONNXRUN_OK);
					break;
				}
			}
			printf("half ConvTranspose OOM sweep (%d thread%s): %ld allocations failed one at a time, %ld "
			       "clean failures: %s\n", threads, threads > 1 ? "s" : "", n, failures, cfg);
		}
		free(bytes);
		free(x);
		free(w);
		free(b);
	}
	assert_int_equal(done_cfgs, 4);
}

/* ---- DepthToSpace --------------------------------------------------------------------------- */

struct d2s_cfg {
	uint64_t seed;
	int version, opset, dtype, mode; /* mode: 0 absent (DCR), 1 "DCR", 2 "CRD" */
	int64_t b, dims[4];
	bool x_init, sym_batch, declare_out;
};

static void d2s_str(const struct d2s_cfg *c, char *buf, size_t len)
{
	static const char *const modes[] = { "(absent: DCR)", "DCR", "CRD" };
	buf[0] = 0;
	append(buf, len, "seed=%llu DepthToSpace-%d opset=%d %s blocksize=%lld mode=%s", (unsigned long long)c->seed,
	       c->version, c->opset, dtype_name(c->dtype), (long long)c->b, modes[c->mode]);
	append_list(buf, len, "X", c->dims, 4);
	append(buf, len, "%s%s%s", c->x_init ? " X:initializer" : "", c->sym_batch ? " X:N-symbolic" : "",
	       c->declare_out ? " Y:declared" : "");
}

static void d2s_random(struct d2s_cfg *c, uint64_t seed)
{
	static const int versions[] = { 1, 11, 13, 28 };
	static const int opsets[4][3] = { { 1, 5, 10 }, { 11, 12, 12 }, { 13, 20, 27 }, { 28, 28, 28 } };
	struct rng r = { seed };
	int vi = (int)rng_int(&r, 0, 3);
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->version = versions[vi];
	c->opset = opsets[vi][rng_int(&r, 0, 2)];
	c->dtype = (int)rng_int(&r, 1, c->version >= 13 ? 16 : 15);
	c->mode = c->version == 1 ? 0 : (int)rng_int(&r, 0, 2);
	c->b = rng_chance(&r, 90) ? rng_int(&r, 1, 4) : rng_int(&r, 5, 6);
	c->dims[0] = rng_int(&r, 1, 3);
	c->dims[1] = rng_int(&r, 1, c->b > 3 ? 2 : 3) * c->b * c->b;
	c->dims[2] = rng_int(&r, 1, 5);
	c->dims[3] = rng_chance(&r, 75) ? rng_int(&r, 1, 5) : c->dims[2];
	if (rng_chance(&r, 3))
		c->dims[rng_int(&r, 0, 3) == 1 ? 0 : rng_int(&r, 2, 3)] = 0;
	c->x_init = rng_chance(&r, 10);
	c->sym_batch = !c->x_init && rng_chance(&r, 20);
	c->declare_out = !c->sym_batch && rng_chance(&r, 40);
}

/* Fills x with random elements: bytes for numbers (NaN patterns included: the op copies
 * bits), 0/1 for bool, byte strings of length 0..6 (zero bytes included) for string. */
static void d2s_fill(struct onnxrun_tensor *x, struct rng *r)
{
	const int64_t n = onnxrun_tensor_numel(x);
	unsigned char *d = onnxrun_tensor_data(x);
	if (onnxrun_tensor_dtype(x) == ONNXRUN_DTYPE_STRING) {
		for (int64_t i = 0; i < n; i++) {
			char s[6];
			size_t len = (size_t)rng_int(r, 0, 6);
			for (size_t k = 0; k < len; k++)
				s[k] = (char)rng_int(r, 0, 255);
			assert_int_equal(onnxrun_tensor_set_string(x, i, s, len), ONNXRUN_OK);
		}
		return;
	}
	for (size_t i = 0; i < onnxrun_tensor_nbytes(x); i++)
		d[i] = (unsigned char)(onnxrun_tensor_dtype(x) == ONNXRUN_DTYPE_BOOL ? rng_int(r, 0, 1)
		                                                                     : rng_int(r, 0, 255));
}

/* The same data as an initializer (raw_data, or string_data for strings). */
static void d2s_initializer(Onnx__ModelProto *m, const struct onnxrun_tensor *x)
{
	Onnx__TensorProto *t = mb_tensor("x", (int)onnxrun_tensor_dtype(x), 4, onnxrun_tensor_dims(x));
	if (onnxrun_tensor_dtype(x) == ONNXRUN_DTYPE_STRING) {
		const struct onnxrun_string *s = onnxrun_tensor_data(x);
		for (int64_t i = 0; i < onnxrun_tensor_numel(x); i++)
			mb_tensor_string(t, s[i].data ? s[i].data : "", s[i].size);
	} else {
		mb_tensor_raw_values(t, onnxrun_tensor_data(x), onnxrun_tensor_nbytes(x));
	}
	mb_add_initializer(m, t);
}

/* Source element of output element `at` by the spec's formulas: DCR reshapes X to
 * (N, b, b, C/b^2, H, W) and transposes by (0, 3, 4, 1, 5, 2); CRD reshapes to
 * (N, C/b^2, b, b, H, W) and transposes by (0, 1, 4, 2, 5, 3); the result, read in row-major
 * order, is Y (N, C/b^2, H*b, W*b). */
static int64_t d2s_source(const struct d2s_cfg *c, int64_t at)
{
	static const int dcr[6] = { 0, 3, 4, 1, 5, 2 }, crd[6] = { 0, 1, 4, 2, 5, 3 };
	const int *perm = c->mode == 2 ? crd : dcr;
	const int64_t cc = c->dims[1] / (c->b * c->b);
	int64_t src[6], idx[6], tdims[6], src_idx[6], off = 0;
	if (c->mode == 2) {
		int64_t s[6] = { c->dims[0], cc, c->b, c->b, c->dims[2], c->dims[3] };
		memcpy(src, s, sizeof s);
	} else {
		int64_t s[6] = { c->dims[0], c->b, c->b, cc, c->dims[2], c->dims[3] };
		memcpy(src, s, sizeof s);
	}
	for (int k = 0; k < 6; k++)
		tdims[k] = src[perm[k]];
	for (int k = 5; k >= 0; k--) { /* row-major index into the transposed tensor */
		idx[k] = at % tdims[k];
		at /= tdims[k];
	}
	for (int k = 0; k < 6; k++)
		src_idx[perm[k]] = idx[k];
	for (int k = 0; k < 6; k++)
		off = off * src[k] + src_idx[k];
	return off;
}

static void d2s_check_one(struct onnxrun_env *env, uint64_t seed, struct stats *st)
{
	struct d2s_cfg c;
	char cfg[512], shape[96];
	struct rng r;
	struct onnxrun_tensor *x = NULL;
	struct onnxrun_model *model;
	struct onnxrun_session *session;
	const struct onnxrun_tensor *y;
	const char *const names[1] = { "x" };
	int64_t yd[4];
	size_t size;

	d2s_random(&c, seed);
	d2s_str(&c, cfg, sizeof cfg);
	r.s = seed * 131 + 5;
	yd[0] = c.dims[0];
	yd[1] = c.dims[1] / (c.b * c.b);
	yd[2] = c.dims[2] * c.b;
	yd[3] = c.dims[3] * c.b;
	assert_int_equal(onnxrun_tensor_create(env, (enum onnxrun_dtype)c.dtype, 4, c.dims, &x), ONNXRUN_OK);
	d2s_fill(x, &r);

	Onnx__ModelProto *m = mb_model(10);
	mb_opset(m, "", c.opset);
	if (c.x_init) {
		d2s_initializer(m, x);
	} else {
		shape_text(shape, sizeof shape, c.dims, 4, c.sym_batch, -1);
		mb_input(m, "x", c.dtype, shape);
	}
	shape_text(shape, sizeof shape, yd, 4, false, -1);
	mb_output(m, "y", c.dtype, c.declare_out ? shape : NULL);
	Onnx__NodeProto *node = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(node, "blocksize", c.b);
	if (c.mode)
		mb_attr_string(node, "mode", c.mode == 1 ? "DCR" : "CRD");
	uint8_t *bytes = mb_finish(m, &size);

	st->runs++;
	st->by_dtype[c.dtype]++;
	st->by_version[c.version]++;
	st->by_mode[c.mode]++;
	st->by_rank[c.b > 4 ? 3 : c.b - 1]++;
	st->zero_sized += prod(yd, 4) == 0;
	struct onnxrun_tensor *inputs[1] = { c.x_init ? NULL : x };
	y = run_model(env, bytes, size, inputs, names, 1, &model, &session, st, cfg);
	if (y && !same_dims(y, c.dtype, 4, yd)) {
		char got[96];
		shape_text(got, sizeof got, onnxrun_tensor_dims(y), onnxrun_tensor_rank(y), false, -1);
		report_failure(st, cfg, "output %s [%s], expected the reference shape",
		               dtype_name(onnxrun_tensor_dtype(y)), got);
	} else if (y) {
		const int64_t n = prod(yd, 4);
		const size_t es = onnxrun_dtype_size((enum onnxrun_dtype)c.dtype);
		const unsigned char *xs = onnxrun_tensor_data(x), *ys = onnxrun_tensor_data(y);
		for (int64_t i = 0; i < n; i++) {
			int64_t s = d2s_source(&c, i);
			bool ok;
			if (c.dtype == MB_STRING) {
				const struct onnxrun_string *a = (const void *)(ys + (size_t)i * es);
				const struct onnxrun_string *e = (const void *)(xs + (size_t)s * es);
				ok = a->size == e->size && (!a->size || !memcmp(a->data, e->data, a->size));
			} else {
				ok = !memcmp(ys + (size_t)i * es, xs + (size_t)s * es, es);
			}
			if (!ok) {
				report_failure(st, cfg, "y[%lld] differs from x[%lld]", (long long)i, (long long)s);
				break;
			}
		}
		st->elements += n;
	}
	onnxrun_session_free(session);
	onnxrun_model_free(model);
	onnxrun_tensor_free(x);
	free(bytes);
}

static void test_depth_to_space_random(void **state)
{
	struct onnxrun_env *env = NULL;
	struct stats st = { 0 };
	const int count = scaled(D2S_CONFIGS);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	for (int i = 0; i < count; i++)
		if (!one_seed() || one_seed() == (uint64_t)0xd2500000 + (uint64_t)i)
			d2s_check_one(env, (uint64_t)0xd2500000 + (uint64_t)i, &st);
	onnxrun_env_free(env);
	printf("DepthToSpace: %d configs, %lld elements compared, %d failures; per dtype:", st.runs,
	       (long long)st.elements, st.failures);
	for (int t = 1; t <= 16; t++)
		printf(" %s %d", dtype_name(t), st.by_dtype[t]);
	printf("\n  versions 1/11/13/28: %d/%d/%d/%d; mode absent/DCR/CRD: %d/%d/%d; blocksize 1/2/3/4+: "
	       "%d/%d/%d/%d; zero-sized %d\n", st.by_version[1], st.by_version[11], st.by_version[13],
	       st.by_version[28], st.by_mode[0], st.by_mode[1], st.by_mode[2], st.by_rank[0],
	       st.by_rank[1], st.by_rank[2], st.by_rank[3], st.zero_sized);
	for (int t = 1; t <= 16; t++)
		assert_true(st.by_dtype[t] > 0 || count < 100 || one_seed());
	if (st.failures)
		fail_msg("%d of %d DepthToSpace configs failed (the first %d are printed above)", st.failures,
		         st.runs, MAX_FAILURES_SHOWN);
}

/* ---- load-time errors ------------------------------------------------------------------------ */

/* A one-node model. Inputs are "dtype:dims" (dtype by number, dims as in model_builder);
 * attrs "name=value;..." where group/blocksize are ints, auto_pad/mode strings and the
 * rest int lists. */
static Onnx__ModelProto *one_node(const char *op, int opset, const char *const *inputs, int n_inputs,
                                  const char *attrs)
{
	static const char *const names[] = { "x", "w", "b" };
	Onnx__ModelProto *m = mb_model(10);
	char list[16] = "";
	mb_opset(m, "", opset);
	for (int i = 0; i < n_inputs; i++) {
		char *end;
		long dt = strtol(inputs[i], &end, 10);
		mb_input(m, names[i], (int)dt, end + 1);
		append(list, sizeof list, "%s%s", i ? "," : "", names[i]);
	}
	mb_output(m, "y", MB_UNDEFINED, NULL);
	Onnx__NodeProto *node = mb_node(m, "bad", op, "", list, "y");
	char *copy = mb__strdup(attrs), *next;
	for (char *a = copy; *a; a = next) {
		char *eq = strchr(a, '=');
		next = a + strcspn(a, ";");
		if (*next)
			*next++ = 0;
		assert_non_null(eq);
		*eq = 0;
		if (!strcmp(a, "group") || !strcmp(a, "blocksize")) {
			mb_attr_int(node, a, strtoll(eq + 1, NULL, 10));
		} else if (!strcmp(a, "auto_pad") || !strcmp(a, "mode")) {
			mb_attr_string(node, a, eq + 1);
		} else {
			int64_t v[8];
			size_t n = 0;
			for (char *p = eq + 1; *p && n < 8; n++) {
				v[n] = strtoll(p, &p, 10);
				p += *p == ',';
			}
			mb_attr_ints(node, a, n, v);
		}
	}
	free(copy);
	return m;
}

static void test_load_errors(void **state)
{
#define F "1:"
#define BIG "4611686018427387904"   /* 2^62 */
#define MAX "9223372036854775807"   /* INT64_MAX */
	static const struct {
		const char *op;
		int opset;
		const char *in[3];
		const char *attrs, *want; /* want NULL: loads */
	} cases[] = {
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "group=3", "C=4 input channels are not divisible by group=3" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "3,2,3,3" }, "", "W.shape[0]=3 must equal the input channels C=4" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "kernel_shape=3,2", "kernel_shape[1]=2 does not match W.shape[3]=3" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3", F "3" }, "", "B has 3 values but M = W.shape[1]*group = 2" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,1,3,3", F "3" }, "group=2", "B has 3 values but M = W.shape[1]*group = 2" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "pads=1,1", "attribute 'pads' has 2 values, expected 4" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "strides=1,1,1", "attribute 'strides' has 3 values, expected 2" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "dilations=1", "attribute 'dilations' has 1 values, expected 2" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_padding=0,0,0", "attribute 'output_padding' has 3 values, expected 2" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_shape=9,9,9", "attribute 'output_shape' has 3 values, expected 2 (spatial) or 4" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "strides=0,1", "strides[0]=0 must be >= 1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "strides=1,-2", "strides[1]=-2 must be >= 1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "dilations=0,1", "dilations[0]=0 must be >= 1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "dilations=1,-1", "dilations[1]=-1 must be >= 1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "pads=0,-1,0,0", "pads[1]=-1 must be >= 0" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "pads=4,0,3,0", "output size 0 of spatial axis 0 is < 1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "auto_pad=SAME", "auto_pad 'SAME' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "auto_pad=VALID;pads=0,0,0,0", "attribute 'pads' cannot be used with auto_pad 'VALID'" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "auto_pad=SAME_LOWER;pads=1,1,1,1", "attribute 'pads' cannot be used with auto_pad 'SAME_LOWER'" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "auto_pad=NOTSET;pads=1,1,1,1", NULL },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_shape=4,4;pads=3,3,3,3", NULL },
		{ "ConvTranspose", 11, { F "1,4,5,5", "11:4,2,3,3" }, "", "W has dtype double but X has dtype float" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3", "10:2" }, "", "B has dtype float16 but X has dtype float" },
		{ "ConvTranspose", 21, { "16:1,4,5,5", "16:4,2,3,3" }, "", "X has dtype bfloat16, not allowed in version 11" },
		{ "ConvTranspose", 10, { "16:1,4,5,5", "16:4,2,3,3" }, "", "X has dtype bfloat16, not allowed in version 1" },
		{ "ConvTranspose", 22, { "16:1,4,5,5", "16:4,2,3,3", "16:2" }, "", NULL },
		{ "ConvTranspose", 22, { "6:1,4,5,5", "6:4,2,3,3" }, "", "X has dtype int32, not allowed in version 22" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_padding=1,0", "output_padding[0]=1 must be < max(stride, dilation)=1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "strides=2,2;output_padding=0,-1", "output_padding[1]=-1 must be >= 0" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_shape=2,2,9,9", "output_shape[0]=2 does not match the batch N=1" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_shape=1,3,9,9", "output_shape[1]=3 does not match the output channels M=2" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "output_shape=-1,9", "output_shape[0]=-1 must be >= 0" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,3,3" }, "group=0", "group=0 must be >= 1" },
		{ "ConvTranspose", 11, { F "1,4", F "4,2" }, "", "X has rank 2, expected at least 3" },
		{ "ConvTranspose", 11, { F "1,4," BIG ",5", F "4,2,3,3" }, "strides=4,1", "output size of spatial axis 0 overflows int64" },
		{ "ConvTranspose", 11, { F "1,4,5,5", F "4,2,0,3" }, "dilations=" MAX ",1;pads=" MAX ",0," MAX ",0",
		  "output size of spatial axis 0 overflows int64" },
		{ "DepthToSpace", 13, { F "1,8,2,3" }, "", "attribute 'blocksize' is required" },
		{ "DepthToSpace", 13, { F "1,8,2,3" }, "blocksize=0", "blocksize=0 must be >= 1" },
		{ "DepthToSpace", 13, { F "1,8,2,3" }, "blocksize=-2", "blocksize=-2 must be >= 1" },
		{ "DepthToSpace", 13, { F "1,8,2,3" }, "blocksize=3", "C=8 channels are not divisible by blocksize^2=9" },
		{ "DepthToSpace", 13, { F "1,8,2" }, "blocksize=2", "input has rank 3, expected 4" },
		{ "DepthToSpace", 13, { F "1,8,2,3,1" }, "blocksize=2", "input has rank 5, expected 4" },
		{ "DepthToSpace", 11, { F "1,8,2,3" }, "blocksize=2;mode=FOO", "mode 'FOO' is not DCR or CRD" },
		{ "DepthToSpace", 1, { F "1,8,2,3" }, "blocksize=2;mode=CRD", "attribute 'mode' does not exist in DepthToSpace-1" },
		{ "DepthToSpace", 10, { F "1,8,2,3" }, "blocksize=2;mode=DCR", "attribute 'mode' does not exist in DepthToSpace-1" },
		{ "DepthToSpace", 12, { "16:1,8,2,3" }, "blocksize=2", "input has dtype bfloat16, not allowed in version 11" },
		{ "DepthToSpace", 13, { "16:1,8,2,3" }, "blocksize=2;mode=CRD", NULL },
		{ "DepthToSpace", 13, { F "1,4," BIG ",1" }, "blocksize=2", "output dim 2 (" BIG " * blocksize 2) overflows int64" },
	};
#undef F
#undef BIG
#undef MAX
	struct onnxrun_env *env = NULL;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int n = cases[i].in[2] ? 3 : cases[i].in[1] ? 2 : 1;
		Onnx__ModelProto *m = one_node(cases[i].op, cases[i].opset, cases[i].in, n, cases[i].attrs);
		struct onnxrun_model *model = NULL;
		size_t size;
		uint8_t *bytes = mb_finish(m, &size);
		enum onnxrun_status st = onnxrun_model_load_buffer(env, bytes, size, NULL, &model);
		const char *msg = onnxrun_env_error(env);
		char node[64];
		free(bytes);
		snprintf(node, sizeof node, "node 'bad' (%s): ", cases[i].op);
		if (!cases[i].want) {
			if (st != ONNXRUN_OK)
				fail_msg("case %zu (%s %s) should load: %s", i, cases[i].op, cases[i].attrs, msg);
			onnxrun_model_free(model);
			continue;
		}
		if (st != ONNXRUN_ERROR_INVALID_MODEL || !strstr(msg, node) || !strstr(msg, cases[i].want))
			fail_msg("case %zu (%s opset %d, %s): status %s, message \"%s\"; want INVALID_MODEL "
			         "with \"%s%s\"", i, cases[i].op, cases[i].opset, cases[i].attrs,
			         onnxrun_status_str(st), msg, node, cases[i].want);
		assert_null(model);
	}
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_conv_transpose_random),
		cmocka_unit_test(test_conv_transpose_half_fast),
		cmocka_unit_test(test_conv_transpose_f64_fast),
		cmocka_unit_test(test_conv_transpose_half_oom),
		cmocka_unit_test(test_depth_to_space_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
