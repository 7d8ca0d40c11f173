/*
 * test_op_depth_to_space.c - DepthToSpace: shape inference, every validation error, the ONNX
 * documentation examples, and seeded random configs over all 17 dtypes compared with the
 * spec's reshape/transpose definition, computed by a generic 6-D transpose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_scale.h"
#include "ops/ops.h"

/* ---- hand-built nodes ------------------------------------------------------------------- */

struct tnode {
	struct onnxrun__node node;
	struct onnxrun__attr attrs[4];
};

static void tnode_init(struct tnode *t, int opset)
{
	memset(t, 0, sizeof *t);
	t->node.name = (char *)"d2s";
	t->node.op_type = (char *)"DepthToSpace";
	t->node.domain = (char *)"";
	t->node.opset = opset;
	t->node.attrs = t->attrs;
	for (const struct onnxrun_op *op = onnxrun__op_depth_to_space; op->op_type; op++)
		if (op->since_version <= opset)
			t->node.op = op;
	assert_non_null(t->node.op);
}

static void set_int(struct tnode *t, const char *name, int64_t v)
{
	struct onnxrun__attr *a = &t->attrs[t->node.n_attrs++];
	a->name = (char *)name;
	a->type = ONNXRUN__ATTR_INT;
	a->i = v;
}

static void set_str(struct tnode *t, const char *name, const char *s)
{
	struct onnxrun__attr *a = &t->attrs[t->node.n_attrs++];
	a->name = (char *)name;
	a->type = ONNXRUN__ATTR_STRING;
	a->s.data = (char *)s;
	a->s.size = strlen(s);
}

static struct onnxrun_type ty4(enum onnxrun_dtype dt, int64_t n, int64_t c, int64_t h, int64_t w)
{
	struct onnxrun_type t;
	memset(&t, 0, sizeof t);
	t.dtype = dt;
	t.shape.rank = 4;
	t.shape.dims[0] = n;
	t.shape.dims[1] = c;
	t.shape.dims[2] = h;
	t.shape.dims[3] = w;
	return t;
}

static enum onnxrun_status run_infer(struct tnode *t, struct onnxrun_type *in, struct onnxrun_type *out,
                                     struct onnxrun__err *err)
{
	memset(out, 0, sizeof *out);
	out->shape.rank = -1;
	err->msg[0] = 0;
	return t->node.op->infer(&(struct onnxrun_op_context){ &t->node, err, NULL, 1, NULL, NULL, NULL, NULL, NULL }, in, 1, out, 1);
}

static void expect_dims(struct tnode *t, struct onnxrun_type *in, int64_t n, int64_t c, int64_t h, int64_t w)
{
	struct onnxrun_type out;
	struct onnxrun__err err;
	const int64_t want[4] = { n, c, h, w };
	if (run_infer(t, in, &out, &err))
		fail_msg("infer failed: %s", err.msg);
	assert_int_equal(out.dtype, in->dtype);
	assert_int_equal(out.shape.rank, 4);
	for (int i = 0; i < 4; i++)
		if (out.shape.dims[i] != want[i])
			fail_msg("dim %d: got %lld, want %lld", i, (long long)out.shape.dims[i], (long long)want[i]);
}

static void expect_error(struct tnode *t, struct onnxrun_type *in, const char *what)
{
	struct onnxrun_type out;
	struct onnxrun__err err;
	enum onnxrun_status st = run_infer(t, in, &out, &err);
	if (st != ONNXRUN_ERROR_INVALID_MODEL)
		fail_msg("status %d, want INVALID_MODEL (%s); message: %s", (int)st, what, err.msg);
	if (!strstr(err.msg, "node 'd2s' (DepthToSpace): ") || !strstr(err.msg, what))
		fail_msg("message '%s' does not name the node or contain '%s'", err.msg, what);
}

#define F ONNXRUN_DTYPE_FLOAT

/* ---- shape inference and errors ---------------------------------------------------------- */

static void test_infer(void **state)
{
	struct tnode t;
	struct onnxrun_type in = ty4(F, 1, 8, 2, 3), out;
	struct onnxrun__err err;
	(void)state;
	static const int opsets[] = { 1, 11, 13, 28, 30 };
	for (int i = 0; i < 5; i++) {
		tnode_init(&t, opsets[i]);
		set_int(&t, "blocksize", 2);
		expect_dims(&t, &in, 1, 2, 4, 6);
	}
	tnode_init(&t, 13);
	set_int(&t, "blocksize", 3);
	set_str(&t, "mode", "CRD");
	in = ty4(ONNXRUN_DTYPE_STRING, 2, 18, 0, 5);
	expect_dims(&t, &in, 2, 2, 0, 15);

	/* symbolic: N passes by name; C, H, W computed when known */
	in = ty4(F, -1, 8, -1, 3);
	in.shape.params[0] = "N";
	in.shape.params[2] = "H";
	tnode_init(&t, 13);
	set_int(&t, "blocksize", 2);
	assert_int_equal(run_infer(&t, &in, &out, &err), ONNXRUN_OK);
	assert_int_equal(out.shape.rank, 4);
	assert_int_equal(out.shape.dims[0], -1);
	assert_string_equal(out.shape.params[0], "N");
	assert_int_equal(out.shape.dims[1], 2);
	assert_int_equal(out.shape.dims[2], -1);
	assert_null(out.shape.params[2]);
	assert_int_equal(out.shape.dims[3], 6);
	in.shape.dims[1] = -1;
	expect_dims(&t, &in, -1, -1, -1, 6);
	/* blocksize 1: every name passes */
	tnode_init(&t, 13);
	set_int(&t, "blocksize", 1);
	assert_int_equal(run_infer(&t, &in, &out, &err), ONNXRUN_OK);
	assert_string_equal(out.shape.params[2], "H");
	/* unknown rank: the output still has rank 4 */
	in.shape.rank = -1;
	expect_dims(&t, &in, -1, -1, -1, -1);
	/* every dtype; bfloat16 from 13 */
	for (int dt = 1; dt <= ONNXRUN_DTYPE_BFLOAT16; dt++) {
		in = ty4((enum onnxrun_dtype)dt, 1, 4, 1, 1);
		tnode_init(&t, 13);
		set_int(&t, "blocksize", 2);
		expect_dims(&t, &in, 1, 1, 2, 2);
	}
}

static void test_errors(void **state)
{
	struct tnode t;
	struct onnxrun_type in = ty4(F, 1, 8, 2, 3), out;
	struct onnxrun__err err;
	(void)state;
	tnode_init(&t, 11);
	expect_error(&t, &in, "attribute 'blocksize' is required");
	set_int(&t, "blocksize", 0);
	expect_error(&t, &in, "blocksize=0 must be >= 1");
	tnode_init(&t, 11);
	set_int(&t, "blocksize", 3);
	expect_error(&t, &in, "C=8 channels are not divisible by blocksize^2=9");
	tnode_init(&t, 11);
	set_int(&t, "blocksize", 2);
	in.shape.rank = 3;
	expect_error(&t, &in, "input has rank 3, expected 4");
	in.shape.rank = 5;
	expect_error(&t, &in, "input has rank 5, expected 4");
	in = ty4(F, 1, 8, 2, 3);
	tnode_init(&t, 1);
	set_int(&t, "blocksize", 2);
	set_str(&t, "mode", "DCR");
	expect_error(&t, &in, "attribute 'mode' does not exist in DepthToSpace-1");
	tnode_init(&t, 11);
	set_int(&t, "blocksize", 2);
	set_str(&t, "mode", "dcr");
	expect_error(&t, &in, "mode 'dcr' is not DCR or CRD");
	tnode_init(&t, 28);
	set_int(&t, "blocksize", 2);
	set_int(&t, "mode", 1);
	expect_error(&t, &in, "attribute 'mode' must be of type string");
	tnode_init(&t, 11);
	set_int(&t, "blocksize", 2);
	in.dtype = ONNXRUN_DTYPE_BFLOAT16;
	expect_error(&t, &in, "input has dtype bfloat16, not allowed in version 11");
	in.dtype = ONNXRUN_DTYPE_UNDEFINED;
	expect_error(&t, &in, "input has dtype undefined");
	in = ty4(F, 1, 4, INT64_MAX / 2 + 1, 1);
	expect_error(&t, &in, "output dim 2");
	tnode_init(&t, 13);
	set_int(&t, "blocksize", (int64_t)1 << 32);
	expect_error(&t, &in, "squared overflows int64");
	assert_int_equal(t.node.op->infer(&(struct onnxrun_op_context){ &t.node, &err, NULL, 1, NULL, NULL, NULL, NULL, NULL }, &in, 0, &out, 1),
	                 ONNXRUN_ERROR_INVALID_MODEL);
}

/* ---- compute ------------------------------------------------------------------------------- */

struct fixture {
	struct onnxrun_env *env;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	if (!f || onnxrun_env_create(NULL, &f->env))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	onnxrun_env_free(f->env);
	free(f);
	return 0;
}

/* Infers, allocates the output (non-string outputs filled with 0xa5 bytes so unwritten
 * elements show) and computes. */
static struct onnxrun_tensor *run_node(struct onnxrun_env *env, struct tnode *t, const struct onnxrun_tensor *x)
{
	struct onnxrun_type in, out;
	struct onnxrun__err err;
	struct onnxrun_op_context ctx = { &t->node, &err, env, 1, NULL, NULL, NULL, NULL, NULL };
	struct onnxrun_tensor *y = NULL;
	memset(&in, 0, sizeof in);
	in.dtype = x->dtype;
	in.shape.rank = x->rank;
	memcpy(in.shape.dims, x->dims, (size_t)x->rank * sizeof *x->dims);
	if (run_infer(t, &in, &out, &err))
		fail_msg("infer failed: %s", err.msg);
	assert_int_equal(onnxrun_tensor_create(env, out.dtype, out.shape.rank, out.shape.dims, &y), ONNXRUN_OK);
	if (y->dtype != ONNXRUN_DTYPE_STRING && y->nbytes)
		memset(y->data, 0xa5, y->nbytes);
	if (t->node.op->compute(&ctx, &x, 1, &y, 1))
		fail_msg("compute failed: %s", err.msg);
	return y;
}

/* The DepthToSpace examples of the ONNX operator documentation: x[0, c, h, w] = 9c + 3h + w. */
static void test_onnx_examples(void **state)
{
	static const float dcr[48] = { 0, 18, 1, 19, 2, 20, 36, 54, 37, 55, 38, 56, 3, 21, 4, 22,
		                       5, 23, 39, 57, 40, 58, 41, 59, 9, 27, 10, 28, 11, 29, 45, 63,
		                       46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68 };
	static const float crd[48] = { 0, 9, 1, 10, 2, 11, 18, 27, 19, 28, 20, 29, 3, 12, 4, 13,
		                       5, 14, 21, 30, 22, 31, 23, 32, 36, 45, 37, 46, 38, 47, 54, 63,
		                       55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68 };
	struct fixture *f = *state;
	struct onnxrun_tensor *x, *y;
	struct tnode t;
	assert_int_equal(onnxrun_tensor_create(f->env, F, 4, (const int64_t[]){ 1, 8, 2, 3 }, &x), ONNXRUN_OK);
	for (int i = 0; i < 48; i++)
		((float *)x->data)[i] = (float)(9 * (i / 6) + i % 6);
	for (int mode = 0; mode < 3; mode++) {
		tnode_init(&t, mode == 0 ? 1 : 11);
		set_int(&t, "blocksize", 2);
		if (mode)
			set_str(&t, "mode", mode == 1 ? "DCR" : "CRD");
		y = run_node(f->env, &t, x);
		assert_memory_equal(y->data, mode < 2 ? dcr : crd, sizeof dcr);
		onnxrun_tensor_free(y);
	}
	onnxrun_tensor_free(x);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static int64_t rng_int(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* The spec's definition, literally: view x as 6-D (DCR: [N, b, b, C/b^2, H, W], CRD:
 * [N, C/b^2, b, b, H, W]), transpose by perm (DCR [0,3,4,1,5,2], CRD [0,1,4,2,5,3]) and
 * read the result in row-major order. Returns, for output element o, the input element. */
static int64_t ref_source(const int64_t *xd, int64_t b, bool crd, int64_t o)
{
	static const int dcr_perm[6] = { 0, 3, 4, 1, 5, 2 }, crd_perm[6] = { 0, 1, 4, 2, 5, 3 };
	const int *perm = crd ? crd_perm : dcr_perm;
	const int64_t c2 = xd[1] / (b * b);
	const int64_t dcr6[6] = { xd[0], b, b, c2, xd[2], xd[3] }, crd6[6] = { xd[0], c2, b, b, xd[2], xd[3] };
	const int64_t *d6 = crd ? crd6 : dcr6;
	int64_t oidx[6], iidx[6], flat = 0;
	for (int a = 5; a >= 0; a--) { /* output dims are d6[perm[a]] */
		oidx[a] = o % d6[perm[a]];
		o /= d6[perm[a]];
	}
	for (int a = 0; a < 6; a++)
		iidx[perm[a]] = oidx[a];
	for (int a = 0; a < 6; a++)
		flat = flat * d6[a] + iidx[a];
	return flat;
}

/* Runs one random config; false (after printing seed and config) on a mismatch. */
static bool check_random(struct onnxrun_env *env, uint64_t seed)
{
	uint64_t s = seed;
	const int opset = (int[]){ 1, 11, 13, 28 }[rng_int(&s, 0, 3)];
	enum onnxrun_dtype dt = (enum onnxrun_dtype)rng_int(&s, 1, ONNXRUN_DTYPE_BFLOAT16);
	const int64_t b = rng_int(&s, 1, 4);
	const bool crd = opset >= 11 && rng_int(&s, 0, 1), set_mode = opset >= 11 && (crd || rng_int(&s, 0, 1));
	int64_t xd[4] = { rng_int(&s, 0, 2), rng_int(&s, 0, 3) * b * b, rng_int(&s, 0, 4), rng_int(&s, 0, 4) };
	struct onnxrun_tensor *x, *y;
	size_t es;
	struct tnode t;
	bool ok = true;
	char desc[256];

	if (dt == ONNXRUN_DTYPE_BFLOAT16 && opset < 13)
		dt = ONNXRUN_DTYPE_UINT16;
	if (rng_int(&s, 0, 9)) /* mostly non-empty */
		for (int i = 0; i < 4; i++)
			xd[i] = xd[i] ? xd[i] : (i == 1 ? b * b : 1);
	snprintf(desc, sizeof desc, "seed=%llu opset=%d dtype=%s blocksize=%lld mode=%s x=[%lld,%lld,%lld,%lld]",
	         (unsigned long long)seed, opset, onnxrun_dtype_name(dt), (long long)b, crd ? "CRD" : "DCR",
	         (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3]);
	tnode_init(&t, opset);
	set_int(&t, "blocksize", b);
	if (set_mode)
		set_str(&t, "mode", crd ? "CRD" : "DCR");
	assert_int_equal(onnxrun_tensor_create(env, dt, 4, xd, &x), ONNXRUN_OK);
	es = onnxrun_dtype_size(dt);
	for (int64_t i = 0; i < x->numel; i++) {
		if (dt == ONNXRUN_DTYPE_STRING) {
			char buf[8];
			size_t len = (size_t)rng_int(&s, 0, 7);
			for (size_t k = 0; k < len; k++)
				buf[k] = (char)rng_int(&s, 0, 255);
			assert_int_equal(onnxrun_tensor_set_string(x, i, buf, len), ONNXRUN_OK);
		} else {
			for (size_t k = 0; k < es; k++)
				((unsigned char *)x->data)[(size_t)i * es + k] = (unsigned char)rng_next(&s);
		}
	}
	y = run_node(env, &t, x);
	if (y->dims[0] != xd[0] || y->dims[1] != xd[1] / (b * b) || y->dims[2] != xd[2] * b ||
	    y->dims[3] != xd[3] * b)
		ok = false;
	for (int64_t o = 0; o < y->numel && ok; o++) {
		int64_t src = ref_source(xd, b, crd, o);
		if (dt == ONNXRUN_DTYPE_STRING) {
			const struct onnxrun_string *ys = (const struct onnxrun_string *)y->data + o;
			const struct onnxrun_string *xs = (const struct onnxrun_string *)x->data + src;
			ok = ys->size == xs->size && (ys->size == 0 || ys->data != xs->data) &&
			     (!ys->size || !memcmp(ys->data, xs->data, ys->size));
		} else {
			ok = !memcmp((char *)y->data + (size_t)o * es, (char *)x->data + (size_t)src * es, es);
		}
		if (!ok)
			print_error("output element %lld differs from input element %lld: %s\n", (long long)o,
			            (long long)src, desc);
	}
	if (!ok)
		print_error("mismatch: %s\n", desc);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(y);
	return ok;
}

#define N_RANDOM 2000

static void test_random_vs_reference(void **state)
{
	struct fixture *f = *state;
	int failures = 0, runs = 0;
	for (uint64_t seed = 1; seed <= (uint64_t)th_scaled(N_RANDOM) && failures < 5; seed++, runs++)
		failures += !check_random(f->env, seed);
	print_message("%d random configs, %d failures\n", runs, failures);
	assert_int_equal(failures, 0);
}

/* Large blocksize (more source rows than the on-stack table holds). */
static void test_large_blocksize(void **state)
{
	struct fixture *f = *state;
	const int64_t b = 300;
	struct onnxrun_tensor *x, *y;
	struct tnode t;
	assert_int_equal(onnxrun_tensor_create(f->env, ONNXRUN_DTYPE_UINT8, 4, (const int64_t[]){ 1, b * b, 1, 1 }, &x),
	                 ONNXRUN_OK);
	for (int64_t i = 0; i < x->numel; i++)
		((uint8_t *)x->data)[i] = (uint8_t)(i * 7);
	tnode_init(&t, 13);
	set_int(&t, "blocksize", b);
	y = run_node(f->env, &t, x);
	for (int64_t o = 0; o < y->numel; o++) /* DCR, C' = 1: y[0,0,i,j] = x[0, i*b + j] */
		assert_int_equal(((uint8_t *)y->data)[o], (uint8_t)(o * 7));
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_infer),
		cmocka_unit_test(test_errors),
		cmocka_unit_test_setup_teardown(test_onnx_examples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_blocksize, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
