/*
 * test_op_conv_transpose.c - ConvTranspose: shape inference (every auto_pad mode, output_shape
 * forms, symbolic dims), every validation error, fixed examples, and seeded random configs
 * compared with a deliberately naive scatter reference written from the ONNX spec; float16 /
 * bfloat16 configs shaped like layers must be taken by the float32 fast path (W packed per
 * run here), under every micro-kernel ISA, within the same bound; a config the fast path
 * declines falls back to the scatter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_scale.h"
#include "ops/conv_transpose/border.h"
#include "ops/conv_transpose/impl.h"
#include "ops/ops.h"
#include "runtime/pool.h"
#include "isa_list.h"

/* ---- hand-built nodes ------------------------------------------------------------------- */

#define MAX_ATTRS 12
#define MAX_INTS 16

struct tnode {
	struct onnxrun__node node;
	struct onnxrun__attr attrs[MAX_ATTRS];
	int64_t ints[MAX_ATTRS][MAX_INTS];
};

/* The table entry the registry would pick for this opset. */
static const struct onnxrun_op *pick_op(int opset)
{
	const struct onnxrun_op *best = NULL;
	for (const struct onnxrun_op *op = onnxrun__op_conv_transpose; op->op_type; op++)
		if (op->since_version <= opset)
			best = op;
	return best;
}

static void tnode_init(struct tnode *t, int opset)
{
	memset(t, 0, sizeof *t);
	t->node.name = (char *)"up1";
	t->node.op_type = (char *)"ConvTranspose";
	t->node.domain = (char *)"";
	t->node.opset = opset;
	t->node.attrs = t->attrs;
	t->node.op = pick_op(opset);
	assert_non_null(t->node.op);
}

static struct onnxrun__attr *new_attr(struct tnode *t, const char *name, enum onnxrun__attr_type type)
{
	struct onnxrun__attr *a = &t->attrs[t->node.n_attrs++];
	assert_true(t->node.n_attrs <= MAX_ATTRS);
	a->name = (char *)name;
	a->type = type;
	return a;
}

static void set_ints(struct tnode *t, const char *name, size_t count, const int64_t *v)
{
	struct onnxrun__attr *a = new_attr(t, name, ONNXRUN__ATTR_INTS);
	int64_t *store = t->ints[t->node.n_attrs - 1];
	assert_true(count <= MAX_INTS);
	if (count)
		memcpy(store, v, count * sizeof *v);
	a->ints = store;
	a->count = count;
}

static void set_int(struct tnode *t, const char *name, int64_t v)
{
	new_attr(t, name, ONNXRUN__ATTR_INT)->i = v;
}

static void set_str(struct tnode *t, const char *name, const char *s)
{
	struct onnxrun__attr *a = new_attr(t, name, ONNXRUN__ATTR_STRING);
	a->s.data = (char *)s;
	a->s.size = strlen(s);
}

#define INTS(...) (sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), ((const int64_t[]){ __VA_ARGS__ })

/* A type; dims of -1 are unknown. rank -1: unknown rank. */
static struct onnxrun_type ty(enum onnxrun_dtype dt, int32_t rank, const int64_t *dims)
{
	struct onnxrun_type t;
	memset(&t, 0, sizeof t);
	t.dtype = dt;
	t.shape.rank = rank;
	for (int32_t i = 0; i < rank; i++)
		t.shape.dims[i] = dims[i];
	return t;
}

#define F ONNXRUN_DTYPE_FLOAT
#define TY(dt, ...) ty(dt, (int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (const int64_t[]){ __VA_ARGS__ })

static enum onnxrun_status run_infer(struct tnode *t, struct onnxrun_type *in, size_t n_in,
                                     struct onnxrun_type *out, struct onnxrun__err *err)
{
	memset(out, 0, sizeof *out);
	out->shape.rank = -1;
	err->msg[0] = 0;
	return t->node.op->infer(&(struct onnxrun_op_context){ &t->node, err, NULL, 1, NULL, NULL, NULL, NULL, NULL }, in, n_in, out, 1);
}

/* Asserts a successful infer with the given output dims (-1 = unknown). */
static void expect_shape(struct tnode *t, struct onnxrun_type *in, size_t n_in, int32_t rank,
                         const int64_t *dims)
{
	struct onnxrun_type out;
	struct onnxrun__err err;
	enum onnxrun_status st = run_infer(t, in, n_in, &out, &err);
	if (st)
		fail_msg("infer failed: %s", err.msg);
	assert_int_equal(out.dtype, in[0].dtype);
	assert_int_equal(out.shape.rank, rank);
	for (int32_t i = 0; i < rank; i++)
		if (out.shape.dims[i] != dims[i])
			fail_msg("dim %d: got %lld, want %lld", (int)i, (long long)out.shape.dims[i],
			         (long long)dims[i]);
}
#define EXPECT_SHAPE(t, in, n_in, ...) \
	expect_shape(t, in, n_in, (int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
	             (const int64_t[]){ __VA_ARGS__ })

/* Asserts infer fails with status and a message naming the node and containing `what`. */
static void expect_error(struct tnode *t, struct onnxrun_type *in, size_t n_in, enum onnxrun_status want,
                         const char *what)
{
	struct onnxrun_type out;
	struct onnxrun__err err;
	enum onnxrun_status st = run_infer(t, in, n_in, &out, &err);
	if (st != want)
		fail_msg("status %d, want %d (%s); message: %s", (int)st, (int)want, what, err.msg);
	if (!strstr(err.msg, "node 'up1' (ConvTranspose): ") || !strstr(err.msg, what))
		fail_msg("message '%s' does not name the node or contain '%s'", err.msg, what);
}

/* X (1,1,3,3), W (1,2,3,3), no bias: the ONNX documentation's base case. */
static void base2d(struct tnode *t, struct onnxrun_type in[3], int opset)
{
	tnode_init(t, opset);
	in[0] = TY(F, 1, 1, 3, 3);
	in[1] = TY(F, 1, 2, 3, 3);
	in[2] = ty(ONNXRUN_DTYPE_UNDEFINED, -1, NULL);
}

/* ---- shape inference -------------------------------------------------------------------- */

static void test_infer_basic(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3];
	(void)state;
	base2d(&t, in, 11);
	EXPECT_SHAPE(&t, in, 2, 1, 2, 5, 5);
	EXPECT_SHAPE(&t, in, 3, 1, 2, 5, 5); /* absent B as UNDEFINED */
	set_ints(&t, "strides", INTS(3, 2));
	set_ints(&t, "output_padding", INTS(1, 1));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 10, 8); /* ONNX example: 3*2+1+3 = 10, 2*2+1+3 = 8 */
	base2d(&t, in, 11);
	set_ints(&t, "strides", INTS(3, 2));
	set_ints(&t, "pads", INTS(1, 2, 1, 2));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 7, 3);
	base2d(&t, in, 11);
	set_ints(&t, "dilations", INTS(2, 2));
	set_ints(&t, "kernel_shape", INTS(3, 3));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 7, 7);
	base2d(&t, in, 1);
	in[2] = TY(F, 2);
	EXPECT_SHAPE(&t, in, 3, 1, 2, 5, 5);
}

static void test_infer_auto_pad(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3];
	(void)state;
	static const char *const modes[] = { "SAME_UPPER", "SAME_LOWER" };
	for (int i = 0; i < 2; i++) {
		base2d(&t, in, 11);
		set_str(&t, "auto_pad", modes[i]);
		set_ints(&t, "strides", INTS(2, 2));
		EXPECT_SHAPE(&t, in, 2, 1, 2, 6, 6); /* in * stride */
		/* stride 3, kernel 1: natural 7 < 9 = in*stride, total padding -2 */
		tnode_init(&t, 22);
		in[1] = TY(F, 1, 2, 1, 1);
		set_str(&t, "auto_pad", modes[i]);
		set_ints(&t, "strides", INTS(3, 3));
		EXPECT_SHAPE(&t, in, 2, 1, 2, 9, 9);
	}
	base2d(&t, in, 11);
	set_str(&t, "auto_pad", "VALID");
	set_ints(&t, "strides", INTS(2, 1));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 7, 5);
	set_ints(&t, "pads", INTS(0, 0, 0, 0)); /* ONNX: pads cannot be used with auto_pad */
	expect_error(&t, in, 2, ONNXRUN_ERROR_INVALID_MODEL,
	             "attribute 'pads' cannot be used with auto_pad 'VALID' (only with NOTSET)");
	base2d(&t, in, 11);
	set_str(&t, "auto_pad", "NOTSET");
	EXPECT_SHAPE(&t, in, 2, 1, 2, 5, 5);
}

static void test_infer_output_shape(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3];
	(void)state;
	base2d(&t, in, 11);
	set_ints(&t, "strides", INTS(3, 2));
	set_ints(&t, "output_shape", INTS(10, 8));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 10, 8);
	base2d(&t, in, 11);
	set_ints(&t, "strides", INTS(3, 2));
	set_ints(&t, "output_shape", INTS(1, 2, 10, 8)); /* full form */
	EXPECT_SHAPE(&t, in, 2, 1, 2, 10, 8);
	base2d(&t, in, 11);
	set_ints(&t, "output_shape", INTS(12, 2)); /* larger and smaller than natural 5 */
	set_str(&t, "auto_pad", "SAME_UPPER");
	EXPECT_SHAPE(&t, in, 2, 1, 2, 12, 2);
	base2d(&t, in, 11);
	set_ints(&t, "output_shape", INTS(0, 3));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 0, 3);
}

static void test_infer_ranks_groups(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3];
	(void)state;
	tnode_init(&t, 11); /* 1-D */
	in[0] = TY(F, 2, 3, 5);
	in[1] = TY(F, 3, 4, 3);
	set_ints(&t, "strides", INTS(2));
	EXPECT_SHAPE(&t, in, 2, 2, 4, 11);
	tnode_init(&t, 11); /* 3-D */
	in[0] = TY(F, 1, 2, 3, 4, 5);
	in[1] = TY(F, 2, 1, 3, 2, 1);
	set_ints(&t, "pads", INTS(1, 0, 0, 0, 1, 0));
	EXPECT_SHAPE(&t, in, 2, 1, 1, 4, 4, 5);
	tnode_init(&t, 11); /* groups: M = W.shape[1] * group */
	in[0] = TY(F, 1, 4, 3, 3);
	in[1] = TY(F, 4, 3, 2, 2);
	in[2] = TY(F, 6);
	set_int(&t, "group", 2);
	EXPECT_SHAPE(&t, in, 3, 1, 6, 4, 4);
	tnode_init(&t, 11); /* depthwise */
	in[0] = TY(F, 1, 4, 3, 3);
	in[1] = TY(F, 4, 1, 2, 2);
	set_int(&t, "group", 4);
	EXPECT_SHAPE(&t, in, 2, 1, 4, 4, 4);
	tnode_init(&t, 22); /* every spatial rank up to the limit */
	int64_t xd[ONNXRUN_MAX_RANK], wd[ONNXRUN_MAX_RANK], yd[ONNXRUN_MAX_RANK];
	for (int i = 0; i < ONNXRUN_MAX_RANK; i++) {
		xd[i] = 1;
		wd[i] = 1;
		yd[i] = 1;
	}
	in[0] = ty(F, ONNXRUN_MAX_RANK, xd);
	in[1] = ty(F, ONNXRUN_MAX_RANK, wd);
	expect_shape(&t, in, 2, ONNXRUN_MAX_RANK, yd);
}

static void test_infer_symbolic(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3], out;
	struct onnxrun__err err;
	(void)state;
	base2d(&t, in, 11);
	in[0].shape.dims[0] = -1;
	in[0].shape.params[0] = "N";
	in[0].shape.dims[3] = -1;
	in[0].shape.params[3] = "W";
	set_int(&t, "group", 1);
	assert_int_equal(run_infer(&t, in, 2, &out, &err), ONNXRUN_OK);
	assert_int_equal(out.shape.rank, 4);
	assert_int_equal(out.shape.dims[0], -1);
	assert_string_equal(out.shape.params[0], "N");
	assert_int_equal(out.shape.dims[1], 2);
	assert_int_equal(out.shape.dims[2], 5);
	assert_int_equal(out.shape.dims[3], -1);
	assert_null(out.shape.params[3]);

	/* output_shape makes spatial dims known even when the input's are not */
	set_ints(&t, "output_shape", INTS(4, 9));
	EXPECT_SHAPE(&t, in, 2, -1, 2, 4, 9);

	/* unknown X rank: rank from W; unknown C: still checks W against group */
	base2d(&t, in, 11);
	in[0] = ty(F, -1, NULL);
	EXPECT_SHAPE(&t, in, 2, -1, 2, -1, -1);
	set_int(&t, "group", 3);
	in[1] = TY(F, 3, 2, 3, 3);
	EXPECT_SHAPE(&t, in, 2, -1, 6, -1, -1);

	/* unknown W: M from B, kernel from kernel_shape */
	base2d(&t, in, 11);
	in[1] = ty(F, -1, NULL);
	in[2] = TY(F, 7);
	set_ints(&t, "kernel_shape", INTS(2, 4));
	EXPECT_SHAPE(&t, in, 3, 1, 7, 4, 6);

	/* W's symbolic M passes through by name with group 1 */
	base2d(&t, in, 11);
	in[1].shape.dims[1] = -1;
	in[1].shape.params[1] = "M";
	assert_int_equal(run_infer(&t, in, 2, &out, &err), ONNXRUN_OK);
	assert_int_equal(out.shape.dims[1], -1);
	assert_string_equal(out.shape.params[1], "M");

	/* nothing known: rank unknown, dtype known; rank from attributes */
	tnode_init(&t, 11);
	in[0] = ty(F, -1, NULL);
	in[1] = ty(F, -1, NULL);
	assert_int_equal(run_infer(&t, in, 2, &out, &err), ONNXRUN_OK);
	assert_int_equal(out.dtype, F);
	assert_int_equal(out.shape.rank, -1);
	set_ints(&t, "strides", INTS(2, 2, 2));
	EXPECT_SHAPE(&t, in, 2, -1, -1, -1, -1, -1);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_errors_shapes(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3];
	const enum onnxrun_status bad = ONNXRUN_ERROR_INVALID_MODEL;
	(void)state;

	tnode_init(&t, 11);
	in[0] = TY(F, 1, 3, 4, 4);
	in[1] = TY(F, 3, 1, 2, 2);
	set_int(&t, "group", 2);
	expect_error(&t, in, 2, bad, "C=3 input channels are not divisible by group=2");
	base2d(&t, in, 11);
	in[1].shape.dims[0] = 2;
	expect_error(&t, in, 2, bad, "W.shape[0]=2 must equal the input channels C=1");
	base2d(&t, in, 11);
	set_ints(&t, "kernel_shape", INTS(3, 2));
	expect_error(&t, in, 2, bad, "kernel_shape[1]=2 does not match W.shape[3]=3");
	base2d(&t, in, 11);
	in[2] = TY(F, 3);
	expect_error(&t, in, 3, bad, "B has 3 values but M = W.shape[1]*group = 2");
	in[2] = TY(F, 1, 2);
	expect_error(&t, in, 3, bad, "B has rank 2, expected 1");
	base2d(&t, in, 11);
	in[0] = TY(F, 1, 1);
	expect_error(&t, in, 2, bad, "X has rank 2, expected at least 3");
	base2d(&t, in, 11);
	in[1] = TY(F, 1, 2, 3);
	expect_error(&t, in, 2, bad, "W has rank 3 but X has rank 4");
	base2d(&t, in, 11);
	expect_error(&t, in, 1, bad, "has 1 inputs, expected 2 or 3");
	base2d(&t, in, 11);
	set_ints(&t, "output_shape", INTS(2, 2, 5, 5));
	expect_error(&t, in, 2, bad, "output_shape[0]=2 does not match the batch N=1");
	base2d(&t, in, 11);
	set_ints(&t, "output_shape", INTS(1, 3, 5, 5));
	expect_error(&t, in, 2, bad, "output_shape[1]=3 does not match the output channels M=2");
	base2d(&t, in, 11);
	in[0].shape.dims[2] = INT64_MAX / 2;
	set_ints(&t, "strides", INTS(4, 1));
	expect_error(&t, in, 2, bad, "output size of spatial axis 0 overflows int64");
}

static void test_errors_attributes(void **state)
{
	static const struct {
		const char *name;
		size_t count;
		int64_t v[6];
		const char *what;
	} cases[] = {
		{ "pads", 2, { 0, 0 }, "attribute 'pads' has 2 values, expected 4 (begins then ends)" },
		{ "strides", 3, { 1, 1, 1 }, "attribute 'strides' has 3 values, expected 2" },
		{ "dilations", 1, { 1 }, "attribute 'dilations' has 1 values, expected 2" },
		{ "output_padding", 3, { 0, 0, 0 }, "attribute 'output_padding' has 3 values, expected 2" },
		{ "kernel_shape", 1, { 3 }, "attribute 'kernel_shape' has 1 values, expected 2" },
		{ "output_shape", 3, { 1, 5, 5 }, "attribute 'output_shape' has 3 values, expected 2" },
		{ "strides", 2, { 1, 0 }, "strides[1]=0 must be >= 1" },
		{ "dilations", 2, { -1, 1 }, "dilations[0]=-1 must be >= 1" },
		{ "pads", 4, { 0, 0, -1, 0 }, "pads[2]=-1 must be >= 0" },
		{ "pads", 4, { 3, 0, 2, 0 }, "output size 0 of spatial axis 0 is < 1" },
		{ "output_padding", 2, { 1, 0 }, "output_padding[0]=1 must be < max(stride, dilation)=1" },
		{ "output_padding", 2, { 0, -1 }, "output_padding[1]=-1 must be >= 0" },
		{ "output_shape", 2, { 5, -2 }, "output_shape[1]=-2 must be >= 0" },
		{ "kernel_shape", 2, { -3, 3 }, "kernel_shape[0]=-3 must be >= 0" },
	};
	struct tnode t;
	struct onnxrun_type in[3];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		base2d(&t, in, 11);
		set_ints(&t, cases[i].name, cases[i].count, cases[i].v);
		expect_error(&t, in, 2, ONNXRUN_ERROR_INVALID_MODEL, cases[i].what);
	}
	/* the message quoted in docs/design.md, 'Errors and statuses' */
	base2d(&t, in, 11);
	set_ints(&t, "strides", INTS(2, 1));
	set_ints(&t, "output_padding", INTS(2, 0));
	expect_error(&t, in, 2, ONNXRUN_ERROR_INVALID_MODEL,
	             "node 'up1' (ConvTranspose): output_padding[0]=2 must be < max(stride, dilation)=2");
	base2d(&t, in, 11);
	set_str(&t, "auto_pad", "SAME");
	expect_error(&t, in, 2, ONNXRUN_ERROR_INVALID_MODEL,
	             "auto_pad 'SAME' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
	base2d(&t, in, 11);
	set_int(&t, "group", 0);
	expect_error(&t, in, 2, ONNXRUN_ERROR_INVALID_MODEL, "group=0 must be >= 1");
	base2d(&t, in, 11);
	set_int(&t, "strides", 2);
	expect_error(&t, in, 2, ONNXRUN_ERROR_INVALID_MODEL, "attribute 'strides' must be of type ints");
	/* explicit pads may empty the output when an input spatial dim is 0 */
	base2d(&t, in, 11);
	in[0].shape.dims[3] = 0;
	set_ints(&t, "pads", INTS(4, 4, 4, 4));
	EXPECT_SHAPE(&t, in, 2, 1, 2, 0, 0);
}

static void test_errors_dtypes(void **state)
{
	struct tnode t;
	struct onnxrun_type in[3];
	const enum onnxrun_status bad = ONNXRUN_ERROR_INVALID_MODEL;
	(void)state;
	static const int opsets[] = { 1, 11, 21 };
	for (int i = 0; i < 3; i++) {
		base2d(&t, in, opsets[i]);
		in[0].dtype = in[1].dtype = ONNXRUN_DTYPE_BFLOAT16;
		expect_error(&t, in, 2, bad, "X has dtype bfloat16, not allowed in version");
		in[0].dtype = in[1].dtype = ONNXRUN_DTYPE_FLOAT16;
		EXPECT_SHAPE(&t, in, 2, 1, 2, 5, 5);
		in[0].dtype = in[1].dtype = ONNXRUN_DTYPE_DOUBLE;
		EXPECT_SHAPE(&t, in, 2, 1, 2, 5, 5);
	}
	base2d(&t, in, 22);
	in[0].dtype = in[1].dtype = ONNXRUN_DTYPE_BFLOAT16;
	EXPECT_SHAPE(&t, in, 2, 1, 2, 5, 5);
	in[0].dtype = in[1].dtype = ONNXRUN_DTYPE_INT32;
	expect_error(&t, in, 2, bad, "X has dtype int32, not allowed in version 22");
	base2d(&t, in, 22);
	in[1].dtype = ONNXRUN_DTYPE_DOUBLE;
	expect_error(&t, in, 2, bad, "W has dtype double but X has dtype float");
	base2d(&t, in, 22);
	in[2] = TY(ONNXRUN_DTYPE_FLOAT16, 2);
	expect_error(&t, in, 3, bad, "B has dtype float16 but X has dtype float");
	base2d(&t, in, 22);
	in[1].dtype = ONNXRUN_DTYPE_UNDEFINED;
	expect_error(&t, in, 2, bad, "input W is missing");
}

/* ---- compute: fixed cases ----------------------------------------------------------------- */

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

static struct onnxrun_tensor *new_tensor(struct onnxrun_env *env, const struct onnxrun_type *t)
{
	struct onnxrun_tensor *out = NULL;
	assert_int_equal(onnxrun_tensor_create(env, t->dtype, t->shape.rank, t->shape.dims, &out), ONNXRUN_OK);
	return out;
}

/* A thread pool of `threads` for an op context's `pool` (as a session gives compute); NULL
 * for one thread. */
static struct onnxrun__pool *pool_begin(struct onnxrun_env *env, int threads)
{
	struct onnxrun__pool *pool = NULL;
	if (threads > 1)
		assert_int_equal(onnxrun__pool_create(env, threads, &pool), ONNXRUN_OK);
	return pool;
}

static void pool_end(struct onnxrun__pool *pool)
{
	onnxrun__pool_free(pool);
}

/* Infers, allocates the output (filled with NaN bytes so unwritten elements show) and
 * computes on `threads` threads. Returns the output; the caller frees it. */
static struct onnxrun_tensor *run_node_threads(struct onnxrun_env *env, struct tnode *t, struct onnxrun_type *in,
                                               size_t n_in, struct onnxrun_tensor *const *tensors, int threads)
{
	struct onnxrun_type out;
	struct onnxrun__err err;
	struct onnxrun_op_context ctx = { &t->node, &err, env, threads, NULL, NULL, NULL, NULL, NULL };
	struct onnxrun_tensor *y;
	struct onnxrun__pool *pool;
	enum onnxrun_status st = run_infer(t, in, n_in, &out, &err);
	if (st)
		fail_msg("infer failed: %s", err.msg);
	y = new_tensor(env, &out);
	if (y->nbytes)
		memset(y->data, 0xff, y->nbytes);
	pool = pool_begin(env, threads);
	ctx.pool = pool;
	st = t->node.op->compute(&ctx, (const struct onnxrun_tensor *const *)tensors, n_in, &y, 1);
	pool_end(pool);
	if (st)
		fail_msg("compute failed: %s", err.msg);
	return y;
}

static struct onnxrun_tensor *run_node(struct onnxrun_env *env, struct tnode *t, struct onnxrun_type *in,
                                       size_t n_in, struct onnxrun_tensor *const *tensors)
{
	return run_node_threads(env, t, in, n_in, tensors, 1);
}

static void test_compute_onnx_example(void **state)
{
	static const float want[25] = { 0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15,
		                        9, 20, 33, 24, 13, 6, 13, 21, 15, 8 };
	struct fixture *f = *state;
	struct tnode t;
	struct onnxrun_type in[3];
	struct onnxrun_tensor *x, *w, *y;
	base2d(&t, in, 11);
	x = new_tensor(f->env, &in[0]);
	w = new_tensor(f->env, &in[1]);
	for (int i = 0; i < 9; i++)
		((float *)x->data)[i] = (float)i;
	for (int i = 0; i < 18; i++)
		((float *)w->data)[i] = 1.0f;
	y = run_node(f->env, &t, in, 2, (struct onnxrun_tensor *[]){ x, w });
	assert_int_equal(y->numel, 50);
	for (int i = 0; i < 50; i++)
		assert_true(((float *)y->data)[i] == want[i % 25]);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(w);
	onnxrun_tensor_free(y);
}

/* SAME_UPPER / SAME_LOWER with a stride larger than the kernel: negative total padding
 * (1-D, in 3, stride 2, kernel 1: natural 5, output 6, total -1). SAME_UPPER: begin
 * floor(-1/2) = -1, so x[i] lands on 2i+1; SAME_LOWER: end = -1, begin = 0, x[i] on 2i.
 * Positions nothing lands on hold the bias. */
static void test_compute_negative_total(void **state)
{
	struct fixture *f = *state;
	struct tnode t;
	struct onnxrun_type in[3] = { TY(F, 1, 1, 3), TY(F, 1, 1, 1), TY(F, 1) };
	static const float upper[6] = { 10, 11, 10, 12, 10, 13 }, lower[6] = { 11, 10, 12, 10, 13, 10 };
	for (int mode = 0; mode < 3; mode++) {
		struct onnxrun_tensor *x = new_tensor(f->env, &in[0]), *w = new_tensor(f->env, &in[1]);
		struct onnxrun_tensor *b = new_tensor(f->env, &in[2]), *y;
		tnode_init(&t, 22);
		if (mode < 2)
			set_str(&t, "auto_pad", mode == 0 ? "SAME_UPPER" : "SAME_LOWER");
		else
			set_ints(&t, "output_shape", INTS(6)); /* NOTSET split, as SAME_LOWER */
		set_ints(&t, "strides", INTS(2));
		for (int i = 0; i < 3; i++)
			((float *)x->data)[i] = (float)(i + 1);
		((float *)w->data)[0] = 1.0f;
		((float *)b->data)[0] = 10.0f;
		y = run_node(f->env, &t, in, 3, (struct onnxrun_tensor *[]){ x, w, b });
		assert_int_equal(y->numel, 6);
		for (int i = 0; i < 6; i++)
			assert_true(((float *)y->data)[i] == (mode == 0 ? upper : lower)[i]);
		onnxrun_tensor_free(x);
		onnxrun_tensor_free(w);
		onnxrun_tensor_free(b);
		onnxrun_tensor_free(y);
	}
}

/* Zero-sized dims: empty input spatial dim -> bias only; N = 0 -> empty; C = 0 -> bias. */
static void test_compute_zero_sized(void **state)
{
	struct fixture *f = *state;
	static const int64_t xs[3][3] = { { 1, 1, 0 }, { 0, 1, 4 }, { 2, 0, 3 } };
	static const int64_t ws[3][3] = { { 1, 2, 3 }, { 1, 2, 3 }, { 0, 1, 2 } };
	static const int64_t ys[3][3] = { { 1, 2, 1 }, { 0, 2, 9 }, { 2, 2, 6 } };
	for (int c = 0; c < 3; c++) {
		struct tnode t;
		struct onnxrun_type in[3] = { ty(F, 3, xs[c]), ty(F, 3, ws[c]), TY(F, 2) };
		struct onnxrun_tensor *x = new_tensor(f->env, &in[0]), *w = new_tensor(f->env, &in[1]);
		struct onnxrun_tensor *b = new_tensor(f->env, &in[2]), *y;
		tnode_init(&t, 11);
		set_ints(&t, "strides", INTS(2));
		if (c == 2)
			set_int(&t, "group", 2);
		((float *)b->data)[0] = 1.5f;
		((float *)b->data)[1] = -2.0f;
		for (int64_t i = 0; i < w->numel; i++)
			((float *)w->data)[i] = 1.0f;
		y = run_node(f->env, &t, in, 3, (struct onnxrun_tensor *[]){ x, w, b });
		assert_int_equal(y->rank, 3);
		for (int i = 0; i < 3; i++)
			assert_int_equal(y->dims[i], ys[c][i]);
		for (int64_t i = 0; i < y->numel; i++)
			assert_true(((float *)y->data)[i] == ((i / ys[c][2]) % 2 ? -2.0f : 1.5f));
		onnxrun_tensor_free(x);
		onnxrun_tensor_free(w);
		onnxrun_tensor_free(b);
		onnxrun_tensor_free(y);
	}
}

/* ---- compute: seeded random configs against the naive reference ---------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static int64_t rng_int(uint64_t *s, int64_t lo, int64_t hi) /* inclusive */
{
	return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static double rng_unit(uint64_t *s) /* [-1, 1) */
{
	return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

enum { MODE_PADS, MODE_VALID, MODE_SAME_UPPER, MODE_SAME_LOWER, MODE_OUT_SHAPE, MODE_OUT_SHAPE_FULL };
static const char *const mode_names[] = { "pads", "VALID", "SAME_UPPER", "SAME_LOWER", "output_shape",
	                                  "output_shape(full)" };

struct cfg {
	uint64_t seed;
	int n, mode, opset;
	const char *os_pad; /* auto_pad used together with output_shape */
	enum onnxrun_dtype dt;
	bool bias, kernel_attr;
	int64_t batch, group, cg, mg;
	int64_t in[5], k[5], s[5], d[5], op[5], pads[10], os[5];
	/* reference geometry */
	int64_t out[5], pb[5];
};

static void cfg_str(const struct cfg *c, char *buf, size_t len)
{
	int at = snprintf(buf, len, "seed=%llu dtype=%s opset=%d mode=%s%s%s N=%lld group=%lld Cg=%lld "
	                  "Mg=%lld bias=%d", (unsigned long long)c->seed, onnxrun_dtype_name(c->dt),
	                  c->opset, mode_names[c->mode], c->os_pad ? "+" : "", c->os_pad ? c->os_pad : "",
	                  (long long)c->batch, (long long)c->group, (long long)c->cg, (long long)c->mg,
	                  (int)c->bias);
	for (int i = 0; i < c->n && at > 0 && (size_t)at < len; i++)
		at += snprintf(buf + at, len - (size_t)at,
		               " | in=%lld k=%lld s=%lld d=%lld op=%lld pads=%lld,%lld os=%lld out=%lld",
		               (long long)c->in[i], (long long)c->k[i], (long long)c->s[i], (long long)c->d[i],
		               (long long)c->op[i], (long long)c->pads[i], (long long)c->pads[c->n + i],
		               (long long)c->os[i], (long long)c->out[i]);
}

/* The spec's output size and begin pads, written independently of the library: natural =
 * s*(in-1) + op + ((k-1)*d + 1); with output_shape or SAME_*, total = natural - out and the
 * halves use floor(); otherwise out = natural - pads (VALID: pads 0). */
static void ref_geometry(struct cfg *c)
{
	for (int i = 0; i < c->n; i++) {
		int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + ((c->k[i] - 1) * c->d[i] + 1);
		bool upper = c->mode == MODE_SAME_UPPER || (c->os_pad && !strcmp(c->os_pad, "SAME_UPPER"));
		if (c->mode >= MODE_SAME_UPPER) {
			int64_t out = c->mode >= MODE_OUT_SHAPE ? c->os[i] : c->in[i] * c->s[i];
			int64_t total = natural - out;
			int64_t half = (int64_t)floor((double)total / 2.0);
			c->out[i] = out;
			c->pb[i] = upper ? half : total - half;
		} else if (c->mode == MODE_VALID) {
			c->out[i] = natural;
			c->pb[i] = 0;
		} else {
			c->out[i] = natural - c->pads[i] - c->pads[c->n + i];
			c->pb[i] = c->pads[i];
		}
	}
}

/* A random config with a valid (>= 1) output size. */
static void random_cfg(struct cfg *c, uint64_t seed)
{
	static const enum onnxrun_dtype dts[] = { ONNXRUN_DTYPE_FLOAT, ONNXRUN_DTYPE_DOUBLE,
		                                  ONNXRUN_DTYPE_FLOAT16, ONNXRUN_DTYPE_BFLOAT16 };
	static const char *const os_pads[] = { NULL, "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" };
	static const int opsets[] = { 1, 11, 22 };
	uint64_t s = seed;
	bool ok;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->n = rng_int(&s, 0, 9) ? (int)rng_int(&s, 1, 3) : (int)rng_int(&s, 4, 5);
	c->dt = dts[rng_int(&s, 0, 3)];
	c->opset = c->dt == ONNXRUN_DTYPE_BFLOAT16 ? 22 : opsets[rng_int(&s, 0, 2)];
	c->mode = (int)rng_int(&s, 0, 5);
	c->os_pad = c->mode >= MODE_OUT_SHAPE ? os_pads[rng_int(&s, 0, 4)] : NULL;
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 2);
	c->group = rng_int(&s, 1, 3);
	c->cg = rng_int(&s, 1, c->n >= 3 ? 2 : 3);
	c->mg = rng_int(&s, 1, c->n >= 3 ? 2 : 3);
	do {
		ok = true;
		for (int i = 0; i < c->n; i++) {
			int64_t mx;
			c->in[i] = rng_int(&s, 1, c->n >= 4 ? 2 : c->n == 3 ? 4 : 6);
			c->k[i] = rng_int(&s, 1, c->n >= 4 ? 2 : c->n == 3 ? 3 : 5);
			c->s[i] = rng_int(&s, 1, 4);
			c->d[i] = rng_int(&s, 1, 3);
			mx = c->s[i] > c->d[i] ? c->s[i] : c->d[i];
			c->op[i] = rng_int(&s, 0, 2) ? 0 : rng_int(&s, 0, mx - 1);
			c->pads[i] = rng_int(&s, 0, 3);
			c->pads[c->n + i] = rng_int(&s, 0, 3);
			c->os[i] = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1 +
			           rng_int(&s, -4, 4);
			if (c->os[i] < 1)
				c->os[i] = 1;
		}
		ref_geometry(c);
		for (int i = 0; i < c->n; i++)
			ok = ok && c->out[i] >= 1;
	} while (!ok);
}

static void build_node(const struct cfg *c, struct tnode *t, struct onnxrun_type in[3])
{
	int64_t xd[7] = { c->batch, c->group * c->cg }, wd[7] = { c->group * c->cg, c->mg }, os[7];
	static const char *const autopads[] = { NULL, "VALID", "SAME_UPPER", "SAME_LOWER" };
	tnode_init(t, c->opset);
	for (int i = 0; i < c->n; i++) {
		xd[2 + i] = c->in[i];
		wd[2 + i] = c->k[i];
	}
	in[0] = ty(c->dt, c->n + 2, xd);
	in[1] = ty(c->dt, c->n + 2, wd);
	in[2] = TY(c->dt, c->group * c->mg);
	if (c->group > 1 || rng_int(&(uint64_t){ c->seed ^ 7 }, 0, 1))
		set_int(t, "group", c->group);
	if (c->kernel_attr)
		set_ints(t, "kernel_shape", (size_t)c->n, c->k);
	set_ints(t, "strides", (size_t)c->n, c->s);
	set_ints(t, "dilations", (size_t)c->n, c->d);
	set_ints(t, "output_padding", (size_t)c->n, c->op);
	/* ignored with output_shape; ONNX allows pads only with auto_pad NOTSET */
	if (c->mode == MODE_PADS || (c->mode >= MODE_OUT_SHAPE && (!c->os_pad || !strcmp(c->os_pad, "NOTSET"))))
		set_ints(t, "pads", 2 * (size_t)c->n, c->pads);
	if (c->mode < MODE_OUT_SHAPE && autopads[c->mode])
		set_str(t, "auto_pad", autopads[c->mode]);
	if (c->mode == MODE_OUT_SHAPE) {
		set_ints(t, "output_shape", (size_t)c->n, c->os);
	} else if (c->mode == MODE_OUT_SHAPE_FULL) {
		os[0] = c->batch;
		os[1] = c->group * c->mg;
		memcpy(os + 2, c->os, (size_t)c->n * sizeof os[0]);
		set_ints(t, "output_shape", (size_t)c->n + 2, os);
	}
	if (c->os_pad)
		set_str(t, "auto_pad", c->os_pad);
}

static double get_value(const struct onnxrun_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case ONNXRUN_DTYPE_FLOAT: return ((const float *)t->data)[i];
	case ONNXRUN_DTYPE_DOUBLE: return ((const double *)t->data)[i];
	case ONNXRUN_DTYPE_FLOAT16: return onnxrun__f16_to_f32(((const uint16_t *)t->data)[i]);
	default: return onnxrun__bf16_to_f32(((const uint16_t *)t->data)[i]);
	}
}

/* Stores v rounded to the tensor's dtype. */
static void set_value(struct onnxrun_tensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case ONNXRUN_DTYPE_FLOAT: ((float *)t->data)[i] = (float)v; break;
	case ONNXRUN_DTYPE_DOUBLE: ((double *)t->data)[i] = v; break;
	case ONNXRUN_DTYPE_FLOAT16: ((uint16_t *)t->data)[i] = onnxrun__f32_to_f16((float)v); break;
	default: ((uint16_t *)t->data)[i] = onnxrun__f32_to_bf16((float)v); break;
	}
}

/* The spec's definition as a direct scatter, in long double, with the sum of |terms| per
 * output for the error bound: for each n, group g, input channel c, input position i and
 * kernel position k, out[n, g*Mg + m, i*s - pad_begin + k*d] += x * w. */
static void ref_scatter(const struct cfg *c, const struct onnxrun_tensor *x, const struct onnxrun_tensor *w,
                        const struct onnxrun_tensor *b, long double *ref, long double *abssum)
{
	int64_t in_sz = 1, k_sz = 1, out_sz = 1, m_all = c->group * c->mg, c_all = c->group * c->cg;
	for (int a = 0; a < c->n; a++) {
		in_sz *= c->in[a];
		k_sz *= c->k[a];
		out_sz *= c->out[a];
	}
	for (int64_t o = 0; o < c->batch * m_all * out_sz; o++) {
		ref[o] = c->bias ? get_value(b, (o / out_sz) % m_all) : 0.0;
		abssum[o] = fabsl(ref[o]);
	}
	for (int64_t nb = 0; nb < c->batch; nb++)
	for (int64_t g = 0; g < c->group; g++)
	for (int64_t ci = 0; ci < c->cg; ci++)
	for (int64_t ip = 0; ip < in_sz; ip++)
	for (int64_t m = 0; m < c->mg; m++)
	for (int64_t kp = 0; kp < k_sz; kp++) {
		int64_t rem_i = ip, rem_k = kp, opos = 0, mul = 1;
		bool inside = true;
		for (int a = c->n - 1; a >= 0; a--) {
			int64_t i = rem_i % c->in[a], k = rem_k % c->k[a];
			int64_t o = i * c->s[a] - c->pb[a] + k * c->d[a];
			rem_i /= c->in[a];
			rem_k /= c->k[a];
			inside = inside && o >= 0 && o < c->out[a];
			opos += o * mul;
			mul *= c->out[a];
		}
		if (!inside)
			continue;
		int64_t ic = g * c->cg + ci, oc = g * c->mg + m;
		long double term = (long double)get_value(x, (nb * c_all + ic) * in_sz + ip) *
		                   get_value(w, (ic * c->mg + m) * k_sz + kp);
		ref[(nb * m_all + oc) * out_sz + opos] += term;
		abssum[(nb * m_all + oc) * out_sz + opos] += fabsl(term);
	}
}

/* Error bound for one output: the implementation sums at most K = Cg*prod(k) + 1 terms
 * (bias included) in float32 (double for double): |err| <= gamma_K * sum|terms|, gamma_K =
 * K*u/(1 - K*u) (recursive summation with rounded products). float16/bfloat16 then round
 * once: + u_half * |value| + half the smallest subnormal. The long double reference adds
 * its own (tiny) gamma. */
static double tolerance(const struct cfg *c, long double value, long double abssum)
{
	double k = (double)c->cg, u = c->dt == ONNXRUN_DTYPE_DOUBLE ? 0x1p-53 : 0x1p-24, acc, tol;
	for (int a = 0; a < c->n; a++)
		k *= (double)c->k[a];
	k += 1;
	acc = k * u / (1 - k * u) * (double)abssum;
	tol = acc + k * 0x1p-63 / (1 - k * 0x1p-63) * (double)abssum;
	if (c->dt == ONNXRUN_DTYPE_FLOAT16)
		tol += 0x1p-11 * (fabs((double)value) + acc) + 0x1p-25;
	else if (c->dt == ONNXRUN_DTYPE_BFLOAT16)
		tol += 0x1p-8 * (fabs((double)value) + acc) + 0x1p-134;
	return tol;
}

/* Fills x, w, b of a built node with the config's values in [-1, 1). */
static void fill_inputs(const struct cfg *c, struct onnxrun_tensor *x, struct onnxrun_tensor *w,
                        struct onnxrun_tensor *b)
{
	uint64_t s = c->seed * 31 + 1;
	for (int64_t i = 0; i < x->numel; i++)
		set_value(x, i, rng_unit(&s));
	for (int64_t i = 0; i < w->numel; i++)
		set_value(w, i, rng_unit(&s));
	for (int64_t i = 0; i < b->numel; i++)
		set_value(b, i, rng_unit(&s));
}

/* Runs one config; returns false (after printing it) on a mismatch. Adds the number of
 * elements compared to *compared. */
static bool check_cfg(struct onnxrun_env *env, struct cfg *c, int64_t *compared)
{
	struct tnode t;
	struct onnxrun_type in[3];
	struct onnxrun_tensor *x, *w, *b, *y;
	long double *ref, *abssum;
	char desc[1024];
	bool ok = true;

	build_node(c, &t, in);
	cfg_str(c, desc, sizeof desc);
	x = new_tensor(env, &in[0]);
	w = new_tensor(env, &in[1]);
	b = new_tensor(env, &in[2]);
	fill_inputs(c, x, w, b);
	y = run_node(env, &t, in, c->bias ? 3 : 2, (struct onnxrun_tensor *[]){ x, w, b });
	if (y->dims[0] != c->batch || y->dims[1] != c->group * c->mg) {
		print_error("batch/channel mismatch: %s\n", desc);
		ok = false;
	}
	for (int a = 0; a < c->n && ok; a++)
		if (y->dims[2 + a] != c->out[a]) {
			print_error("axis %d: size %lld, want %lld: %s\n", a, (long long)y->dims[2 + a],
			            (long long)c->out[a], desc);
			ok = false;
		}
	if (ok) {
		ref = calloc((size_t)y->numel, sizeof *ref);
		abssum = calloc((size_t)y->numel, sizeof *abssum);
		assert_non_null(ref);
		assert_non_null(abssum);
		ref_scatter(c, x, w, b, ref, abssum);
		for (int64_t i = 0; i < y->numel && ok; i++) {
			double got = get_value(y, i), tol = tolerance(c, ref[i], abssum[i]);
			if (!(fabs(got - (double)ref[i]) <= tol)) {
				print_error("element %lld: got %.9g, want %.9Lg (tol %.3g): %s\n", (long long)i,
				            got, ref[i], tol, desc);
				ok = false;
			}
		}
		free(ref);
		free(abssum);
		*compared += y->numel;
	}
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(w);
	onnxrun_tensor_free(b);
	onnxrun_tensor_free(y);
	return ok;
}

#define N_RANDOM 2000

static void test_random_vs_reference(void **state)
{
	struct fixture *f = *state;
	int failures = 0, runs = 0, per_mode[6] = { 0 }, per_rank[6] = { 0 };
	int64_t compared = 0;
	const uint64_t count = (uint64_t)th_scaled(N_RANDOM);
	for (uint64_t seed = 1; seed <= count && failures < 5; seed++, runs++) {
		struct cfg c;
		random_cfg(&c, seed);
		per_mode[c.mode]++;
		per_rank[c.n]++;
		failures += !check_cfg(f->env, &c, &compared);
	}
	print_message("%d random configs (pads %d, VALID %d, SAME_UPPER %d, SAME_LOWER %d, "
	              "output_shape %d + %d full; 1-D %d, 2-D %d, 3-D %d, 4-D %d, 5-D %d), %lld "
	              "elements compared, %d failures\n", runs, per_mode[0], per_mode[1], per_mode[2],
	              per_mode[3], per_mode[4], per_mode[5], per_rank[1], per_rank[2], per_rank[3],
	              per_rank[4], per_rank[5], (long long)compared, failures);
	assert_int_equal(failures, 0);
}

/* ---- float16/bfloat16 on the float32 fast path ------------------------------------------- */

/* Layer-like half configs: plain/grouped (per-phase GEMM), >= 4 input and <= 4 output
 * channels per group with >= 8 rows (GEMM + overlap-add), depthwise; inputs no smaller
 * than the dilated kernel, strides no larger than the kernel (else the output-driven paths
 * would mostly compute gaps, and the scatter is chosen). */
static void random_fast_half_cfg(struct cfg *c, uint64_t seed)
{
	uint64_t s = seed;
	const int family = (int)rng_int(&s, 0, 2);
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->dt = rng_int(&s, 0, 1) ? ONNXRUN_DTYPE_FLOAT16 : ONNXRUN_DTYPE_BFLOAT16;
	c->opset = c->dt == ONNXRUN_DTYPE_BFLOAT16 ? 22 : (int)rng_int(&s, 0, 1) ? 11 : 22;
	c->n = family == 0 ? (int)rng_int(&s, 1, 3) : (int)rng_int(&s, 1, 2);
	c->mode = (int)rng_int(&s, 0, 3); /* pads, VALID, SAME_UPPER, SAME_LOWER */
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 2);
	c->group = family == 2 ? rng_int(&s, 2, 5) : rng_int(&s, 1, 2);
	c->cg = family == 2 ? 1 : family == 1 ? rng_int(&s, 4, 8) : rng_int(&s, 1, 10);
	c->mg = family == 2 ? 1 : family == 1 ? rng_int(&s, 2, 4) : rng_int(&s, 1, 10);
	for (int i = 0; i < c->n; i++) {
		c->k[i] = rng_int(&s, family == 1 ? 2 : 1, c->n == 3 ? 3 : 4);
		c->s[i] = rng_int(&s, 1, c->k[i] < 3 ? c->k[i] : 3); /* a stride above the kernel: gaps */
		c->d[i] = rng_int(&s, 0, 3) ? 1 : 2;
		c->in[i] = (c->k[i] - 1) * c->d[i] + 1 + rng_int(&s, 0, c->n == 1 ? 16 : c->n == 2 ? 5 : 2);
		c->op[i] = rng_int(&s, 0, 2) ? 0 : rng_int(&s, 0, (c->s[i] > c->d[i] ? c->s[i] : c->d[i]) - 1);
		const int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
		c->pads[i] = natural > 1 ? rng_int(&s, 0, 1) : 0;
		c->pads[c->n + i] = natural - c->pads[i] > 1 ? rng_int(&s, 0, 1) : 0;
	}
	if (family == 1 && c->mg * c->k[0] * (c->n == 2 ? c->k[1] : 1) < 8)
		c->k[0] = c->in[0] = 8 / c->mg + 1; /* >= 8 rows of Mg x taps */
	ref_geometry(c);
}

/* Compares y with the reference bound; prints the first mismatch (with `what`). */
static bool within_bound(const struct cfg *c, const struct onnxrun_tensor *y, const long double *ref,
                         const long double *abssum, const char *what, const char *desc)
{
	for (int64_t i = 0; i < y->numel; i++) {
		double got = get_value(y, i), tol = tolerance(c, ref[i], abssum[i]);
		if (!(fabs(got - (double)ref[i]) <= tol)) {
			print_error("%s element %lld: got %.17g, want %.17Lg (tol %.3g): %s\n", what, (long long)i, got,
			            ref[i], tol, desc);
			return false;
		}
	}
	return true;
}

/* One config's node, inputs (fill_inputs), output and reference sums, for the checks below
 * that run an implementation entry directly. */
struct entry_case {
	struct tnode t;
	struct onnxrun_type in[3], out;
	struct onnxrun__convt_geom g;
	struct onnxrun_tensor *x, *w, *b, *y;
	size_t n_in;
	long double *ref, *abssum;
	char desc[1024];
};

static void entry_case_begin(struct onnxrun_env *env, const struct cfg *c, struct entry_case *k)
{
	struct onnxrun__err err;
	build_node(c, &k->t, k->in);
	cfg_str(c, k->desc, sizeof k->desc);
	k->n_in = c->bias ? 3 : 2;
	k->x = new_tensor(env, &k->in[0]);
	k->w = new_tensor(env, &k->in[1]);
	k->b = new_tensor(env, &k->in[2]);
	fill_inputs(c, k->x, k->w, k->b);
	if (run_infer(&k->t, k->in, k->n_in, &k->out, &err) ||
	    onnxrun__convt_geom_make(&k->t.node, k->in, k->n_in, &k->g, &err))
		fail_msg("infer failed: %s: %s", err.msg, k->desc);
	k->y = new_tensor(env, &k->out);
	k->ref = calloc((size_t)k->y->numel, sizeof *k->ref);
	k->abssum = calloc((size_t)k->y->numel, sizeof *k->abssum);
	assert_true(k->ref && k->abssum);
	ref_scatter(c, k->x, k->w, k->b, k->ref, k->abssum);
}

static void entry_case_end(struct entry_case *k)
{
	free(k->ref);
	free(k->abssum);
	onnxrun_tensor_free(k->x);
	onnxrun_tensor_free(k->w);
	onnxrun_tensor_free(k->b);
	onnxrun_tensor_free(k->y);
}

/* Runs the implementation entry `entry` directly on each of the thread counts (isa already
 * set): it must run exactly when `must_run` says, and when it runs, match the reference bound
 * and give the same bits on every thread count. Counts the 1-thread runs in *ran. Returns
 * false (after printing) otherwise. */
static bool check_entry_threads(struct onnxrun_env *env, const struct cfg *c, struct entry_case *k,
                                const char *entry, const int *thread_counts, size_t n_counts, bool must_run,
                                enum onnxrun__isa isa, int64_t *compared, int *ran)
{
	struct onnxrun__err err;
	void *first = NULL;
	char what[64];
	bool ok = true;
	for (size_t ti = 0; ti < n_counts && ok; ti++) {
		const int threads = thread_counts[ti];
		struct onnxrun_op_context ctx = { &k->t.node, &err, env, threads, NULL, NULL, NULL, NULL, NULL };
		struct onnxrun__pool *pool = pool_begin(env, threads);
		bool done = false;
		ctx.pool = pool;
		enum onnxrun_status st;
		memset(k->y->data, 0xff, k->y->nbytes);
		st = onnxrun__convt_run_entry(entry, &ctx, (const struct onnxrun_tensor *const[]){ k->x, k->w, k->b },
		                              k->n_in, k->y, &done);
		pool_end(pool);
		if (st)
			fail_msg("%s failed: %s: %s", entry, err.msg, k->desc);
		snprintf(what, sizeof what, "isa %d threads %d", (int)isa, threads);
		if (done != must_run) {
			print_error("%s: the %s entry %s: %s\n", what, entry, done ? "ran" : "declined", k->desc);
			ok = false;
			break;
		}
		if (!done)
			break;
		*ran += threads == 1;
		ok = within_bound(c, k->y, k->ref, k->abssum, what, k->desc);
		if (!first) {
			first = malloc(k->y->nbytes);
			assert_non_null(first);
			memcpy(first, k->y->data, k->y->nbytes);
		} else if (memcmp(first, k->y->data, k->y->nbytes)) {
			print_error("%s: %s differs bitwise from %d thread(s): %s\n", what, entry, thread_counts[0], k->desc);
			ok = false;
		}
		*compared += k->y->numel;
	}
	free(first);
	return ok;
}

/* Runs the fast path directly (no pre-packed state) and checks it was taken and matches the
 * reference; returns false (after printing) otherwise. */
static bool check_fast_half(struct onnxrun_env *env, struct cfg *c, enum onnxrun__isa isa, int64_t *compared)
{
	static const int one_thread[] = { 1 };
	struct entry_case k;
	int ran = 0;
	bool ok = true;
	entry_case_begin(env, c, &k);
	if (!strcmp(onnxrun__convt_pick_name(&k.g, ONNXRUN_DTYPE_FLOAT), "scatter")) {
		print_error("isa %d: the fast path declined: %s\n", (int)isa, k.desc);
		ok = false;
	}
	ok = ok && check_entry_threads(env, c, &k, "float16/bfloat16 through float32", one_thread, 1, true, isa,
	                               compared, &ran);
	entry_case_end(&k);
	return ok;
}

/* Rank 2 with a first axis of ones (in 1, kernel 1, out 1) and few output channels, the
 * overlap-add path's shape: float, float16, bfloat16 against the reference (the path once
 * took it for rank 1 and wrote only the first output of the row). */
static void test_degenerate_first_axis(void **state)
{
	static const enum onnxrun_dtype dts[] = { ONNXRUN_DTYPE_FLOAT, ONNXRUN_DTYPE_FLOAT16, ONNXRUN_DTYPE_BFLOAT16 };
	struct fixture *f = *state;
	const enum onnxrun__isa saved = onnxrun__isa_current();
	int64_t compared = 0, fast = 0;
	for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
		struct cfg c;
		memset(&c, 0, sizeof c);
		c.seed = 91 + i;
		c.n = 2;
		c.dt = dts[i];
		c.opset = 22;
		c.bias = i != 1;
		c.batch = 1;
		c.group = 2;
		c.cg = 10;
		c.mg = 4;
		c.in[0] = c.k[0] = c.s[0] = c.d[0] = 1;
		c.in[1] = 5;
		c.k[1] = 2;
		c.s[1] = 1;
		c.d[1] = 2;
		ref_geometry(&c);
		assert_true(check_cfg(f->env, &c, &compared));
		if (c.dt == ONNXRUN_DTYPE_FLOAT)
			continue;
		/* the half path runs the float32 one: it must take the shape, under every ISA */
		for (int isa = ONNXRUN__ISA_SCALAR; isa < ONNXRUN__ISA_COUNT; isa++) {
			if (!onnxrun__isa_supported((enum onnxrun__isa)isa))
				continue;
			onnxrun__isa_set((enum onnxrun__isa)isa);
			assert_true(check_fast_half(f->env, &c, (enum onnxrun__isa)isa, &compared));
			fast++;
		}
		onnxrun__isa_set(saved);
	}
	assert_int_equal(compared, (3 + fast) * 8 * 7);
}

#define N_FAST_HALF 300

static void test_fast_half_vs_reference(void **state)
{
	TEST_ALL_ISAS(isas);
	struct fixture *f = *state;
	int failures = 0, runs = 0, per_rank[4] = { 0 }, per_dt[17] = { 0 };
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= N_FAST_HALF && failures < 5; seed++, runs++) {
		struct cfg c;
		random_fast_half_cfg(&c, 0x4a1f0000 + seed);
		per_rank[c.n]++;
		per_dt[c.dt]++;
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			failures += !check_fast_half(f->env, &c, isas[ii], &compared);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d float16 (%d) / bfloat16 (%d) configs on the fast path (1-D %d, 2-D %d, 3-D %d), %lld "
	              "elements compared over the ISAs, %d failures\n", runs, per_dt[ONNXRUN_DTYPE_FLOAT16],
	              per_dt[ONNXRUN_DTYPE_BFLOAT16], per_rank[1], per_rank[2], per_rank[3], (long long)compared,
	              failures);
	assert_int_equal(failures, 0);
}

/* A long kernel over a one-element input: the output-driven fast path would do 9x the
 * scatter's work and declines; compute then runs the scatter, which must still be right. */
static void test_fast_half_declines(void **state)
{
	struct fixture *f = *state;
	for (int bf = 0; bf < 2; bf++) {
		struct cfg c;
		struct tnode t;
		struct onnxrun_type in[3], out;
		struct onnxrun__convt_geom g;
		struct onnxrun__err err;
		struct onnxrun_op_context ctx = { NULL, &err, f->env, 1, NULL, NULL, NULL, NULL, NULL };
		bool done = true;
		int64_t compared = 0;
		memset(&c, 0, sizeof c);
		c.seed = 77;
		c.n = 1;
		c.dt = bf ? ONNXRUN_DTYPE_BFLOAT16 : ONNXRUN_DTYPE_FLOAT16;
		c.opset = 22;
		c.bias = true;
		c.batch = c.group = 1;
		c.cg = 3;
		c.mg = 2;
		c.in[0] = 1;
		c.k[0] = 9;
		c.s[0] = c.d[0] = 1;
		ref_geometry(&c);
		build_node(&c, &t, in);
		ctx.node = &t.node;
		struct onnxrun_tensor *x = new_tensor(f->env, &in[0]), *w = new_tensor(f->env, &in[1]);
		struct onnxrun_tensor *b = new_tensor(f->env, &in[2]), *y;
		memset(x->data, 0, x->nbytes);
		memset(w->data, 0, w->nbytes);
		memset(b->data, 0, b->nbytes);
		assert_int_equal(run_infer(&t, in, 3, &out, &err), ONNXRUN_OK);
		assert_int_equal(onnxrun__convt_geom_make(&t.node, in, 3, &g, &err), ONNXRUN_OK);
		y = new_tensor(f->env, &out);
		/* float16/bfloat16 run through the float32 list, which leaves this one to the scatter */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "scatter");
		(void)ctx;
		(void)done;
		onnxrun_tensor_free(x);
		onnxrun_tensor_free(w);
		onnxrun_tensor_free(b);
		onnxrun_tensor_free(y);
		/* the same config through compute (scatter), against the reference */
		assert_true(check_cfg(f->env, &c, &compared));
		assert_int_equal(compared, 9 * 2);
	}
}

/* ---- float64 on its own entry (ops/conv_transpose/f64.c) and the threaded scatter -------- */

/* Layer-like float64 configs: family 0-1 plain or grouped (up to 20 channels each way, so
 * channel blocks of every tile width have tails), 2 depthwise; rank 1-3; inputs no smaller
 * than the dilated kernel and strides no larger than the kernel, so the output-driven path
 * does at most ~3x the scatter's work and must take them. */
static void random_fast_f64_cfg(struct cfg *c, uint64_t seed)
{
	static const int opsets[] = { 1, 11, 22 };
	uint64_t s = seed;
	const int family = (int)rng_int(&s, 0, 2);
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->dt = ONNXRUN_DTYPE_DOUBLE;
	c->opset = opsets[rng_int(&s, 0, 2)];
	c->n = (int)rng_int(&s, 1, 3);
	c->mode = (int)rng_int(&s, 0, 3); /* pads, VALID, SAME_UPPER, SAME_LOWER */
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 2);
	c->group = family == 2 ? rng_int(&s, 1, 5) : rng_int(&s, 1, 3);
	c->cg = family == 2 ? 1 : rng_int(&s, 1, c->n == 3 ? 6 : 20);
	c->mg = family == 2 ? 1 : rng_int(&s, 1, c->n == 3 ? 10 : 20);
	for (int i = 0; i < c->n; i++) {
		c->k[i] = rng_int(&s, 1, c->n == 3 ? 3 : 5);
		c->s[i] = rng_int(&s, 1, c->k[i] < 4 ? c->k[i] : 4);
		c->d[i] = rng_int(&s, 0, 2) ? 1 : rng_int(&s, 2, 3);
		c->in[i] = (c->k[i] - 1) * c->d[i] + 1 + rng_int(&s, 0, c->n == 1 ? 40 : c->n == 2 ? 12 : 3);
		c->op[i] = rng_int(&s, 0, 2) ? 0 : rng_int(&s, 0, (c->s[i] > c->d[i] ? c->s[i] : c->d[i]) - 1);
		const int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
		const int64_t most = (natural - 1) / 2 < 3 ? (natural - 1) / 2 : 3;
		c->pads[i] = rng_int(&s, 0, most);
		c->pads[c->n + i] = rng_int(&s, 0, most);
	}
	ref_geometry(c);
}

/* The float64 path on 1, 2 and 4 threads: it must take every config of random_fast_f64_cfg. */
static bool check_fast_f64(struct onnxrun_env *env, struct cfg *c, enum onnxrun__isa isa, int64_t *compared)
{
	static const int thread_counts[] = { 1, 2, 4 };
	struct entry_case k;
	int ran = 0;
	entry_case_begin(env, c, &k);
	const bool ok = check_entry_threads(env, c, &k, "float64 phase", thread_counts,
	                                    sizeof thread_counts / sizeof thread_counts[0], true, isa, compared, &ran);
	entry_case_end(&k);
	return ok;
}

#define N_FAST_F64 200

static void test_fast_f64_vs_reference(void **state)
{
	TEST_ALL_ISAS(isas);
	struct fixture *f = *state;
	int failures = 0, runs = 0, per_rank[4] = { 0 }, depthwise = 0, grouped = 0, bias = 0, isas_run = 0;
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= N_FAST_F64 && failures < 5; seed++, runs++) {
		struct cfg c;
		random_fast_f64_cfg(&c, 0x64f00000 + seed);
		per_rank[c.n]++;
		depthwise += c.cg == 1 && c.mg == 1 && c.group > 1;
		grouped += c.group > 1;
		bias += c.bias;
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			isas_run += seed == 1;
			failures += !check_fast_f64(f->env, &c, isas[ii], &compared);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d float64 configs on the float64 path (1-D %d, 2-D %d, 3-D %d; grouped %d, depthwise %d, "
	              "bias %d) x %d ISAs x threads 1/2/4, %lld elements compared, %d failures\n", runs, per_rank[1],
	              per_rank[2], per_rank[3], grouped, depthwise, bias, isas_run, (long long)compared, failures);
	assert_int_equal(failures, 0);
}

/* The float64 path where it reads x through row pointers (f64.c, cache_lines and pack_lines):
 * panels that are one run of a grid line read each x line packed once per input channel for
 * the taps that differ only along the last axis (zeros where the line crosses an edge of x),
 * those taps' rows pointing into it at their shifts, or at a zero row where the line lies
 * outside x; whole lines kept in a per-thread cache across panels and items (tagged by batch,
 * group and line: batch 2 and groups read other lines at the same offsets), or where they
 * pass its size (a 1-D line of 64 channels x 1100) each panel's own stretch. Rank 1-3,
 * last-axis grids a multiple of every tile width (every panel through lines) and not (panels
 * across grid lines, packed per chunk), stride 1 and 2 with pads (2 taps per line: through the
 * cache), dilation 2, groups, channel tails; 1-4 threads bitwise against the spec reference,
 * every ISA this CPU runs. */
/* A float64 config by its last axis and the sizes shared by every axis (the other axes: 9
 * inputs in rank 2, 5 in rank 3). */
struct f64_case {
	int n;
	int64_t in, k, s, d, pb, pe, group, cg, mg, batch;
};

/* Runs each case on the float64 entry on every ISA and threads 1-4, bitwise across the thread
 * counts and against the reference (seeds seed0 + case index); prints what was compared under
 * label and fails the test on any difference. */
static void check_f64_cases(struct fixture *f, const struct f64_case *cases, size_t ncases, uint64_t seed0,
                            const char *label)
{
	TEST_ALL_ISAS(isas);
	static const int threads[] = { 1, 2, 3, 4 };
	const size_t nthreads = sizeof threads / sizeof threads[0];
	int failures = 0, isas_run = 0;
	int64_t compared = 0;
	for (size_t ci = 0; ci < ncases; ci++) {
		struct cfg c;
		memset(&c, 0, sizeof c);
		c.seed = seed0 + ci;
		c.dt = ONNXRUN_DTYPE_DOUBLE;
		c.opset = 22;
		c.n = cases[ci].n;
		c.bias = ci % 2 == 0;
		c.kernel_attr = true;
		c.batch = cases[ci].batch;
		c.group = cases[ci].group;
		c.cg = cases[ci].cg;
		c.mg = cases[ci].mg;
		for (int a = 0; a < c.n; a++) {
			c.in[a] = a == c.n - 1 ? cases[ci].in : (c.n == 3 ? 5 : 9);
			c.k[a] = cases[ci].k;
			c.s[a] = cases[ci].s;
			c.d[a] = cases[ci].d;
			c.pads[a] = cases[ci].pb;
			c.pads[c.n + a] = cases[ci].pe;
		}
		ref_geometry(&c);
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			isas_run += ci == 0;
			struct entry_case k;
			int ran = 0;
			entry_case_begin(f->env, &c, &k);
			failures += !check_entry_threads(f->env, &c, &k, "float64 phase", threads, nthreads, true, isas[ii],
			                                 &compared, &ran);
			entry_case_end(&k);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d float64 %s configs x %d ISAs x threads 1-4, %lld elements compared, %d failures\n", (int)ncases,
	              label, isas_run, (long long)compared, failures);
	assert_int_equal(failures, 0);
}

static void test_f64_packed_lines(void **state)
{
	/* rank, in (last axis), k, s, d, pad begin/end, group, cg, mg, batch */
	static const struct f64_case cases[] = {
		{ 2, 64, 3, 1, 1, 1, 1, 1, 9, 16, 1 },  /* k3s1p1: whole panels, edge columns and lines */
		{ 2, 40, 3, 1, 1, 1, 1, 1, 7, 13, 2 },  /* grid lines of 40: panels across lines too */
		{ 2, 32, 4, 2, 1, 1, 1, 2, 6, 10, 1 },  /* k4s2p1, grouped: 2 taps per line, cached */
		{ 2, 32, 6, 2, 1, 2, 2, 2, 6, 10, 1 },  /* k6s2p2, grouped: 3 taps per line */
		{ 2, 48, 3, 1, 2, 2, 0, 1, 5, 8, 1 },   /* dilation 2, unequal pads */
		{ 2, 66, 5, 1, 1, 0, 4, 3, 3, 4, 2 },   /* wide kernel, few channels, 3 groups */
		{ 1, 130, 3, 1, 1, 1, 1, 1, 20, 17, 2 }, /* 1-D: one grid line */
		{ 3, 32, 3, 1, 1, 1, 1, 1, 4, 8, 1 },   /* 3-D */
		{ 1, 1100, 3, 1, 1, 1, 1, 1, 64, 9, 1 }, /* lines past the cache: per panel */
		{ 2, 32, 4, 2, 1, 1, 1, 1, 7, 9, 2 },   /* k4s2p1, batch 2: 2 taps per line, cached */
	};
	check_f64_cases(*state, cases, sizeof cases / sizeof cases[0], 0x64a00000, "row-pointer");
}

/* Groups of phases (whole output lines per item, f64.c) with too few items for the threads at
 * the usual block length: cut into shorter blocks, else stored phase by phase. k4s2p1 on a
 * 9 x 32 input: 288 positions per phase, 3 blocks of 128 (2 x 3 group items per batch and
 * group) or 5 of 64 (10 items): short blocks on 2 threads, phase by phase on 3-4; with 2
 * batches or groups, grouped at the usual length on 2-3 threads, short blocks on 4. */
static void test_f64_group_short_blocks(void **state)
{
	static const struct f64_case cases[] = {
		{ 2, 32, 4, 2, 1, 1, 1, 1, 8, 8, 1 },   /* the shape above */
		{ 2, 32, 4, 2, 1, 1, 1, 1, 13, 20, 1 }, /* channel blocks with tails */
		{ 2, 32, 4, 2, 1, 1, 1, 1, 8, 12, 2 },  /* batch 2 */
		{ 2, 32, 4, 2, 1, 1, 1, 2, 5, 8, 1 },   /* 2 groups */
	};
	check_f64_cases(*state, cases, sizeof cases / sizeof cases[0], 0x64c00000, "phase-group");
}

/* Groups of phases along a last axis of stride 8 and 4 (f64.c: whole output lines per item,
 * through the table's store_group where it has one: AVX-512 transposes 8 or 4 phases' values in
 * registers). hifigan's k16s8p4 with 128 output channels: its sums over 512 KiB at 128 positions,
 * so grouped in 64-position blocks even on 1 thread (with a store_group; else phase by phase);
 * fewer channels: 128-position blocks; grid
 * lines not a multiple of 8 (the positions past the last 8 stored one by one). */
static void test_f64_group_lines(void **state)
{
	/* rank, in (last axis), k, s, d, pad begin/end, group, cg, mg, batch */
	static const struct f64_case cases[] = {
		{ 1, 100, 16, 8, 1, 4, 4, 1, 4, 128, 1 }, /* hifigan-like: 64-position blocks on 1 thread */
		{ 1, 45, 16, 8, 1, 4, 4, 1, 6, 20, 2 },   /* 128-position blocks, tails, batch 2 */
		{ 1, 61, 8, 4, 1, 2, 2, 2, 5, 13, 1 },    /* stride 4, 2 groups */
		{ 2, 27, 8, 4, 1, 2, 2, 1, 4, 9, 1 },     /* 2-D: groups of 4 along the last axis */
		{ 1, 77, 2, 2, 1, 0, 0, 1, 7, 11, 1 },    /* stride 2 */
	};
	check_f64_cases(*state, cases, sizeof cases / sizeof cases[0], 0x64d00000, "phase-group-lines");
}

/* Each table's store_group (AVX-512, AVX2, NEON) and store_group_stream (AVX-512, AVX2) against
 * the plain loop of its contract (kernels.h): the same bits, nothing written outside the group's
 * lines, for 2-8 phases (odd ones too), runs of 1-37 positions (whole vectors and tails), 1-3
 * channels, with and without a bias, the output at a 64-byte boundary and 1 or 8 doubles past
 * it (the streamed entry's whole aligned vectors and its plain ones). */
static void test_f64_store_group_bits(void **state)
{
	(void)state;
	enum { NW = 48, MC = 3, SG = 8, ACCN = MC * NW + 5, PLANE = NW * SG + 3, PAD = 8 };
	TEST_ALL_ISAS(isas);
	static double acc[SG * ACCN];
	static _Alignas(64) double y0[MC * PLANE + PAD], y1[MC * PLANE + PAD];
	static const int64_t sgs[] = { 2, 3, 4, 8 }, ucs[] = { 1, 7, 8, 9, 16, 23, 37 }, offs[] = { 0, 1, 8 };
	const double bias[MC] = { 0.25, -3.5, 1e-3 };
	uint64_t s = 0x64e00001;
	int checked = 0, streamed = 0;
	for (size_t i = 0; i < sizeof acc / sizeof acc[0]; i++)
		acc[i] = rng_unit(&s) * ldexp(1.0, (int)rng_int(&s, -20, 20));
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]) || onnxrun__kernels_for(isas[ii])->isa != isas[ii])
			continue;
		const struct onnxrun__f64_kernels *fk = onnxrun__kernels_for(isas[ii])->f64;
		for (int st = 0; st < 2; st++) {
			const onnxrun__f64_store_group_fn fn = st ? fk->store_group_stream : fk->store_group;
			if (!fn)
				continue;
			for (size_t si = 0; si < sizeof sgs / sizeof sgs[0]; si++)
				for (size_t ui = 0; ui < sizeof ucs / sizeof ucs[0]; ui++)
					for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++)
						for (int64_t mc = 1; mc <= MC; mc++)
							for (int wb = 0; wb < 2; wb++) {
								const int64_t sg = sgs[si], uc = ucs[ui], off = offs[oi];
								for (size_t i = 0; i < sizeof y0 / sizeof y0[0]; i++)
									y0[i] = y1[i] = -777.0;
								for (int64_t m = 0; m < mc; m++)
									for (int64_t e = 0; e < uc; e++)
										for (int64_t jj = 0; jj < sg; jj++)
											y0[off + m * PLANE + e * sg + jj] =
											        acc[jj * ACCN + m * NW + e] + (wb ? bias[m] : 0.0);
								fn(acc, ACCN, NW, mc, uc, y1 + off, PLANE, sg, wb ? bias : NULL);
								if (st)
									fk->stream_fence();
								if (memcmp(y0, y1, sizeof y0))
									fail_msg("isa %d: float64 store_group%s sg %lld, %lld positions, %lld "
									         "channels, bias %d, offset %lld differs from the plain loop",
									         (int)isas[ii], st ? "_stream" : "", (long long)sg, (long long)uc,
									         (long long)mc, wb, (long long)off);
								checked++;
								streamed += st;
							}
		}
	}
	print_message("%d float64 store_group calls (%d streamed): bitwise equal to the plain loop\n", checked,
	              streamed);
#if defined(__x86_64__) && !ONNXRUN__KERNELS_SCALAR_ONLY
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512) || onnxrun__isa_supported(ONNXRUN__ISA_AVX2))
		assert_true(checked > 0 && streamed > 0);
#endif
#if defined(__aarch64__) && !ONNXRUN__KERNELS_SCALAR_ONLY
	if (onnxrun__isa_supported(ONNXRUN__ISA_NEON))
		assert_true(checked > 0);
#endif
}

/* Each table's store and store_stream against the plain loop of their contract (kernels.h):
 * the same bits, nothing written between a phase's positions or past the run, for strides 1-4
 * (the streamed whole vectors are stride 1's), runs of 1-37 positions, 1-3 channels, with and
 * without a bias, the output at a 64-byte boundary and 1 or 8 doubles past it. */
static void test_f64_store_stream_bits(void **state)
{
	(void)state;
	enum { NW = 48, MC = 3, SLX = 4, PLANE = NW * SLX + 3, PAD = 8 };
	TEST_ALL_ISAS(isas);
	static double tile[MC * NW];
	static _Alignas(64) double y0[MC * PLANE + PAD], y1[MC * PLANE + PAD];
	static const int64_t ucs[] = { 1, 7, 8, 9, 16, 23, 37 }, offs[] = { 0, 1, 8 };
	const double bias[MC] = { -0.75, 2.5, 3e-4 };
	uint64_t s = 0x64f00001;
	int checked = 0, streamed = 0;
	for (size_t i = 0; i < sizeof tile / sizeof tile[0]; i++)
		tile[i] = rng_unit(&s) * ldexp(1.0, (int)rng_int(&s, -20, 20));
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]) || onnxrun__kernels_for(isas[ii])->isa != isas[ii])
			continue;
		const struct onnxrun__f64_kernels *fk = onnxrun__kernels_for(isas[ii])->f64;
		for (int st = 0; st < 2; st++) {
			const onnxrun__f64_store_fn fn = st ? fk->store_stream : fk->store;
			if (!fn)
				continue;
			for (int64_t sl = 1; sl <= SLX; sl++)
				for (size_t ui = 0; ui < sizeof ucs / sizeof ucs[0]; ui++)
					for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++)
						for (int64_t mc = 1; mc <= MC; mc++)
							for (int wb = 0; wb < 2; wb++) {
								const int64_t uc = ucs[ui], off = offs[oi];
								for (size_t i = 0; i < sizeof y0 / sizeof y0[0]; i++)
									y0[i] = y1[i] = -777.0;
								for (int64_t m = 0; m < mc; m++)
									for (int64_t e = 0; e < uc; e++)
										y0[off + m * PLANE + e * sl] = tile[m * NW + e] + (wb ? bias[m] : 0.0);
								fn(tile, NW, mc, uc, y1 + off, PLANE, sl, wb ? bias : NULL);
								if (st)
									fk->stream_fence();
								if (memcmp(y0, y1, sizeof y0))
									fail_msg("isa %d: float64 store%s stride %lld, %lld positions, %lld "
									         "channels, bias %d, offset %lld differs from the plain loop",
									         (int)isas[ii], st ? "_stream" : "", (long long)sl, (long long)uc,
									         (long long)mc, wb, (long long)off);
								checked++;
								streamed += st;
							}
		}
	}
	print_message("%d float64 store calls (%d streamed): bitwise equal to the plain loop\n", checked, streamed);
	assert_true(checked > 0);
#if defined(__x86_64__) && !ONNXRUN__KERNELS_SCALAR_ONLY
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512) || onnxrun__isa_supported(ONNXRUN__ISA_AVX2))
		assert_true(streamed > 0);
#endif
}

/* Outputs at least the size from which the float64 path streams them (the detected L2: the
 * tables' store_stream and store_group_stream on x86), sized from that threshold: k3s1p1 (stride
 * 1, whole vectors streamed), unet's k2s2 (groups of 2 phases, whole output lines streamed) and
 * hifigan's k16s8p4 (groups of 8, which keep plain stores), each against the reference on every
 * ISA and threads 1-4; where a table of the build and CPU has the streamed stores. */
static void test_f64_streamed_outputs(void **state)
{
	TEST_ALL_ISAS(isas);
	int streaming = 0;
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++)
		streaming += onnxrun__isa_supported(isas[ii]) && onnxrun__kernels_for(isas[ii])->isa == isas[ii] &&
		             onnxrun__kernels_for(isas[ii])->f64->store_stream;
	if (!streaming) { /* (no x86 table here: MBs of float64 outputs on emulated boards for nothing) */
		print_message("no kernel table of this build and CPU streams float64 outputs: nothing to check\n");
		return;
	}
	const int64_t min = (int64_t)onnxrun__tuning()->stream_output_bytes, d = (int64_t)sizeof(double);
	const int64_t w1 = min / (64 * 9 * d) + 37, w2 = min / (32 * 18 * 2 * d) + 5, w8 = min / (24 * 8 * d) + 3;
	/* rank, in (last axis), k, s, d, pad begin/end, group, cg, mg, batch; the other axes 9 */
	const struct f64_case cases[] = {
		{ 2, w1, 3, 1, 1, 1, 1, 1, 4, 64, 1 },
		{ 2, w2, 2, 2, 1, 0, 0, 1, 4, 32, 1 },
		{ 1, w8, 16, 8, 1, 4, 4, 1, 3, 24, 1 },
	};
	/* their output bytes: mg x other axes' outputs x the last axis' ((in - 1)s - pads + k) */
	const int64_t out[] = { 64 * 9 * w1 * d, 32 * 18 * (2 * w2) * d, 24 * (8 * w8) * d };
	for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
		assert_true(out[i] >= min);
	check_f64_cases(*state, cases, sizeof cases / sizeof cases[0], 0x64f10000, "streamed-output");
}

/* Each float64 tile's ind entry (x rows through pointers) against its contiguous entry on the
 * same rows copied: the same bits, in every table this CPU runs, with rows scattered in memory,
 * several pointing at one shared row, values of every magnitude, in chunks of varying length. */
static void test_f64_tile_ind_bits(void **state)
{
	(void)state;
	enum { KK = 37 };
	TEST_ALL_ISAS(isas);
	static double xs[KK * 3 * ONNXRUN__F64_NW_MAX], packed[KK * ONNXRUN__F64_NW_MAX], w[KK * ONNXRUN__F64_MB_MAX];
	static double t0[ONNXRUN__F64_MB_MAX * ONNXRUN__F64_NW_MAX], t1[ONNXRUN__F64_MB_MAX * ONNXRUN__F64_NW_MAX];
	const double *rows[KK];
	uint64_t s = 0x64b00001;
	int tiles = 0, tables = 0;
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
		xs[i] = rng_unit(&s) * ldexp(1.0, (int)rng_int(&s, -30, 30));
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		w[i] = rng_unit(&s);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		if (!onnxrun__isa_supported(isas[ii]) || onnxrun__kernels_for(isas[ii])->isa != isas[ii])
			continue;
		const struct onnxrun__f64_kernels *fk = onnxrun__kernels_for(isas[ii])->f64;
		tables++;
		for (int ti = 0; ti < fk->ntiles; ti++) {
			const struct onnxrun__f64_tile *tl = &fk->tiles[ti];
			if (!tl->ind)
				continue;
			tiles++;
			for (int64_t p = 0; p < KK; p++) {
				/* rows at odd offsets in a larger buffer, every fifth the same row */
				rows[p] = p % 5 == 4 ? rows[0] : xs + rng_int(&s, 0, (int64_t)(sizeof xs / sizeof xs[0]) - tl->nw);
				memcpy(packed + p * tl->nw, rows[p], (size_t)tl->nw * sizeof *packed);
			}
			for (int e = 0; e < tl->mb * tl->nw; e++)
				t0[e] = t1[e] = rng_unit(&s);
			for (int64_t k0 = 0, kn = 1; k0 < KK; k0 += kn, kn = kn * 2 + 1) {
				kn = kn < KK - k0 ? kn : KK - k0;
				tl->fn(kn, packed + k0 * tl->nw, w + k0 * tl->mb, t0);
				tl->ind(kn, rows + k0, w + k0 * tl->mb, t1);
			}
			if (memcmp(t0, t1, (size_t)(tl->mb * tl->nw) * sizeof *t0))
				fail_msg("isa %d: float64 tile %dx%d: ind differs from the packed tile", (int)isas[ii], tl->mb,
				         tl->nw);
		}
	}
	print_message("%d float64 tiles with row pointers in %d tables: bitwise equal to the packed tiles\n", tiles,
	              tables);
#if ONNXRUN__KERNELS_SCALAR_ONLY
	assert_int_equal(tiles, 0); /* the scalar table alone has none (flash) */
#else
	assert_true(tiles > 0);
#endif
}

/* ---- the float32 window GEMM (window.c) ----------------------------------------------------- */

/* Draws axis i's pads (each at most the kernel and at most half the natural output less one,
 * so that the output keeps a position) and an output_shape within a stride of the natural
 * size, at least 1. */
static void random_axis_pads(struct cfg *c, int i, uint64_t *s)
{
	const int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + c->k[i];
	const int64_t most = (natural - 1) / 2 < c->k[i] ? (natural - 1) / 2 : c->k[i];
	c->pads[i] = rng_int(s, 0, most);
	c->pads[c->n + i] = rng_int(s, 0, most);
	c->os[i] = natural + rng_int(s, -c->s[i], c->s[i]);
	c->os[i] = c->os[i] < 1 ? 1 : c->os[i];
}

/* Configs for the window GEMM: rank 1-2, every kernel a multiple (1-4) of its stride, dilation
 * 1, 4-10 input channels per group, output channels per group x phases in [8, 12], grouped
 * or not, pads (with output_padding), VALID, SAME_* and output_shape (which can make the
 * begin pad negative). Rank 2 sizes up to 20 per axis (several bands of grid rows), rank 1
 * up to 150 (a row of several tile widths with a remainder). */
static void random_window_cfg(struct cfg *c, uint64_t seed)
{
	static const int64_t rows_of[][2] = { { 1, 8 }, { 1, 9 }, { 1, 10 }, { 1, 12 }, { 2, 4 }, { 2, 5 }, { 2, 6 },
		                              { 3, 3 }, { 3, 4 }, { 4, 2 }, { 4, 3 }, { 6, 2 } }; /* (mg, phases) */
	uint64_t s = seed;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->dt = ONNXRUN_DTYPE_FLOAT;
	c->opset = 11;
	c->n = (int)rng_int(&s, 1, 2);
	c->mode = (int)rng_int(&s, 0, 4); /* pads, VALID, SAME_UPPER, SAME_LOWER, output_shape */
	c->os_pad = c->mode == MODE_OUT_SHAPE ? (rng_int(&s, 0, 1) ? "SAME_UPPER" : "NOTSET") : NULL;
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 2);
	c->group = rng_int(&s, 0, 2) ? 1 : rng_int(&s, 2, 3);
	c->cg = rng_int(&s, 4, 10);
	for (;;) {
		const int64_t *rp = rows_of[rng_int(&s, 0, 11)];
		c->mg = rp[0];
		if (c->n == 1) {
			c->s[0] = rp[1];
			break;
		}
		/* phases = s0 * s1 */
		for (int64_t s0 = 1; s0 <= rp[1]; s0++)
			if (rp[1] % s0 == 0 && rng_int(&s, 0, 1)) {
				c->s[0] = s0;
				c->s[1] = rp[1] / s0;
				break;
			}
		if (c->s[0])
			break;
	}
	for (int i = 0; i < c->n; i++) {
		c->k[i] = c->s[i] * rng_int(&s, 1, 4);
		c->d[i] = 1;
		c->in[i] = rng_int(&s, 1, c->n == 1 ? 150 : 20);
		c->op[i] = rng_int(&s, 0, 1) ? 0 : rng_int(&s, 0, c->s[i] - 1);
		random_axis_pads(c, i, &s);
	}
	ref_geometry(c);
}

/* random_window_cfg with the last axis' kernel 5-20 times its stride: staged rows with pads
 * of up to 19 floats a side, and more rows per band than grid rows per panel. */
static void random_window_long_cfg(struct cfg *c, uint64_t seed)
{
	uint64_t s = seed ^ 0x5bd1e995u;
	random_window_cfg(c, seed);
	const int i = c->n - 1;
	c->k[i] = c->s[i] * rng_int(&s, 5, 20);
	random_axis_pads(c, i, &s);
	ref_geometry(c);
}

/* 2-D random_window_cfg with rows of 24-80 inputs and 1-6 of them: grid rows of one to a few
 * tile widths, so that panels lie in the first or last grid row alone (which run only the rows
 * of the rho0 whose outputs lie inside y), with the top and bottom pads of every mode. */
static void random_window_wide_cfg(struct cfg *c, uint64_t seed)
{
	uint64_t s = seed ^ 0x27d4eb2fu;
	for (uint64_t k = 0;; k++) {
		random_window_cfg(c, seed * 16 + k);
		if (c->n == 2)
			break;
	}
	c->seed = seed; /* (this generator's: the failure message names it) */
	c->in[0] = rng_int(&s, 1, 6);
	c->in[1] = rng_int(&s, 24, 80);
	for (int i = 0; i < 2; i++)
		random_axis_pads(c, i, &s);
	ref_geometry(c);
}

/* Runs the window GEMM on 1-4 threads (isa already set): where the kernel table has `rel`
 * tiles of at least output channels x phases rows it must be picked, match the reference
 * within its bound and give the same bits on every thread count; elsewhere it must decline.
 * Returns false (after printing) otherwise. */
static bool check_window(struct onnxrun_env *env, struct cfg *c, enum onnxrun__isa isa, int64_t *compared,
                         int *taken)
{
	static const int thread_counts[] = { 1, 2, 3, 4 };
	const struct onnxrun__gemm_kernels *kn = onnxrun__kernels_current()->gemm;
	const bool should = kn->rel[0] && kn->mr_max >= c->mg * c->s[0] * (c->n == 2 ? c->s[1] : 1);
	struct entry_case k;
	bool ok = true;
	entry_case_begin(env, c, &k);
	if (should && strcmp(onnxrun__convt_pick_name(&k.g, ONNXRUN_DTYPE_FLOAT), "float32 window GEMM")) {
		print_error("isa %d: not picked: %s\n", (int)isa, k.desc);
		ok = false;
	}
	ok = ok && check_entry_threads(env, c, &k, "float32 window GEMM", thread_counts,
	                               sizeof thread_counts / sizeof thread_counts[0], should, isa, compared, taken);
	entry_case_end(&k);
	return ok;
}

#define N_WINDOW 300

/* Runs configs [1, n] of gen (random_window_cfg or random_window_long_cfg; seed base) on
 * every ISA; fails the test on any mismatch, and on a CPU with AVX-512 unless every config
 * ran the entry. */
static void run_window_configs(struct onnxrun_env *env, void (*gen)(struct cfg *, uint64_t), uint64_t base, int n)
{
	TEST_ALL_ISAS(isas);
	int failures = 0, runs = 0, per_rank[3] = { 0 }, grouped = 0, taken = 0;
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= (uint64_t)n && failures < 5; seed++, runs++) {
		struct cfg c;
		gen(&c, base + seed);
		per_rank[c.n]++;
		grouped += c.group > 1;
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			failures += !check_window(env, &c, isas[ii], &compared, &taken);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d window GEMM configs (1-D %d, 2-D %d, grouped %d), taken %d times over the ISAs x threads "
	              "1-4, %lld elements compared, %d failures\n", runs, per_rank[1], per_rank[2], grouped, taken,
	              (long long)compared, failures);
	assert_int_equal(failures, 0);
	/* on a CPU with AVX-512 every config runs the entry */
	if (onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		assert_true(taken >= runs);
}

static void test_window_vs_reference(void **state)
{
	struct fixture *f = *state;
	run_window_configs(f->env, random_window_cfg, 0x3d000000, N_WINDOW);
	run_window_configs(f->env, random_window_long_cfg, 0x3f000000, 60);
	run_window_configs(f->env, random_window_wide_cfg, 0x3f400000, 80);
}

/* ---- the phase path without padded taps (border.h) ---------------------------------------- */

#ifndef ONNXRUN_BAREMETAL
/* A float32 config on a small grid with pads (asymmetric, dilations, output_padding,
 * groups, batches of up to 12 images so that the border jobs' panels fill): 1-D to 3-D. */
static void random_border_cfg(struct cfg *c, uint64_t seed)
{
	uint64_t s = seed;
	bool ok;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->n = (int)rng_int(&s, 1, 9) <= 1 ? 1 : (int)rng_int(&s, 2, 3);
	c->dt = ONNXRUN_DTYPE_FLOAT;
	c->opset = 11;
	c->mode = MODE_PADS;
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 12);
	c->group = rng_int(&s, 1, 2);
	c->cg = rng_int(&s, 1, 3);
	c->mg = rng_int(&s, 1, 5);
	do {
		ok = true;
		for (int i = 0; i < c->n; i++) {
			const bool last = i == c->n - 1;
			c->in[i] = rng_int(&s, 1, last && c->n < 3 ? 10 : 5);
			c->k[i] = rng_int(&s, 1, 5);
			c->s[i] = rng_int(&s, 1, 3);
			c->d[i] = rng_int(&s, 1, 2);
			const int64_t mx = c->s[i] > c->d[i] ? c->s[i] : c->d[i];
			c->op[i] = rng_int(&s, 0, 2) ? 0 : rng_int(&s, 0, mx - 1);
			c->pads[i] = rng_int(&s, 0, 3);
			c->pads[c->n + i] = rng_int(&s, 0, 3);
		}
		ref_geometry(c);
		for (int i = 0; i < c->n; i++)
			ok = ok && c->out[i] >= 1;
	} while (!ok);
}

/* Multiply-adds of config c counted from the spec, independently of the library: for every
 * output position and every kernel position k with o + pad_begin - k*d a multiple of s on
 * each axis (a tap of o's phase), times Cg x Mg x group x N. `inside0`: only those whose
 * first-axis input index (o + pad_begin - k*d) / s lies inside x (the split leaves out the
 * others; along the other axes it keeps every tap). */
static int64_t spec_fmas(const struct cfg *c, bool inside0)
{
	int64_t out_sz = 1, k_sz = 1, total = 0;
	for (int a = 0; a < c->n; a++) {
		out_sz *= c->out[a];
		k_sz *= c->k[a];
	}
	for (int64_t op = 0; op < out_sz; op++)
		for (int64_t kp = 0; kp < k_sz; kp++) {
			int64_t ro = op, rk = kp;
			bool tap = true;
			for (int a = c->n - 1; a >= 0; a--) {
				const int64_t o = ro % c->out[a], k = rk % c->k[a], v = o + c->pb[a] - k * c->d[a];
				ro /= c->out[a];
				rk /= c->k[a];
				const int64_t i = v >= 0 ? v / c->s[a] : -((-v + c->s[a] - 1) / c->s[a]);
				tap = tap && i * c->s[a] == v && (a > 0 || !inside0 || (i >= 0 && i < c->in[a]));
			}
			total += tap;
		}
	return total * c->cg * c->mg * c->group * c->batch;
}

/* Runs the phase entry on `threads` threads with `state` as the node's packed weights (NULL:
 * packed for the run) into k->y; *done false when it declines. */
static enum onnxrun_status run_phase(struct onnxrun_env *env, struct entry_case *k, int threads, void *state,
                                     bool *done)
{
	struct onnxrun__err err;
	struct onnxrun_op_context ctx = { &k->t.node, &err, env, threads, state, NULL, NULL, NULL, NULL };
	struct onnxrun__pool *pool = pool_begin(env, threads);
	enum onnxrun_status st;
	ctx.pool = pool;
	memset(k->y->data, 0xff, k->y->nbytes);
	st = onnxrun__convt_run_entry("float32 phase GEMM", &ctx,
	                              (const struct onnxrun_tensor *const[]){ k->x, k->w, k->b }, k->n_in, k->y, done);
	pool_end(pool);
	if (st)
		fail_msg("phase entry failed: %s: %s", err.msg, k->desc);
	return st;
}

/* One config on the ISA in use: the planned multiply-adds against spec_fmas (the split's
 * count where it applies, else every tap's), and the phase entry on 1, 2 and 3 threads, with
 * W packed for the run and packed as at load (X's sizes unknown), within the reference
 * bound and bitwise the same on every thread count. *split counts configs that split. */
static bool check_border(struct onnxrun_env *env, struct cfg *c, enum onnxrun__isa isa, int64_t *compared,
                         int *split, int *ran)
{
	static const int thread_counts[] = { 1, 2, 3 };
	struct entry_case k;
	struct onnxrun__convt_packed *pk = NULL, *pk_load = NULL;
	struct onnxrun__convt_geom gl;
	struct onnxrun_type lt[3];
	struct onnxrun__err err;
	bool ok = true, splits = false, done = false;
	entry_case_begin(env, c, &k);
	run_phase(env, &k, 1, NULL, &done);
	if (!done) { /* the phase path declines the shape (far more work than the scatter) */
		entry_case_end(&k);
		return true;
	}
	assert_int_equal(onnxrun__convt_pack_with_border(env, &k.g, k.w->data, CONVT_LAYOUT_PHASE, NULL, NULL, &pk), ONNXRUN_OK);
	const int64_t planned = onnxrun__convt_phase_fmas(env, &k.g, pk, &splits);
	const int64_t want = spec_fmas(c, splits), dense = spec_fmas(c, false);
	if (planned != want || (splits && planned >= dense)) {
		print_error("isa %d: planned %lld multiply-adds, the spec counts %lld (every tap %lld), split %d: %s\n",
		            (int)isa, (long long)planned, (long long)want, (long long)dense, (int)splits, k.desc);
		ok = false;
	}
	*split += splits;
	onnxrun__convt_packed_free(pk);
	/* W packed as convt_init does: X's batch 1 and spatial sizes unknown */
	memcpy(lt, k.in, sizeof lt);
	lt[0].shape.dims[0] = 1;
	for (int a = 0; a < c->n; a++)
		lt[0].shape.dims[2 + a] = -1;
	assert_int_equal(onnxrun__convt_geom_make(&k.t.node, lt, k.n_in, &gl, &err), ONNXRUN_OK);
	assert_int_equal(onnxrun__convt_pack_with_border(env, &gl, k.w->data, CONVT_LAYOUT_PHASE, NULL, NULL, &pk_load), ONNXRUN_OK);
	for (int load = 0; load < 2 && ok; load++) {
		void *first = malloc(k.y->nbytes);
		assert_non_null(first);
		for (size_t ti = 0; ti < sizeof thread_counts / sizeof thread_counts[0] && ok; ti++) {
			char what[64];
			run_phase(env, &k, thread_counts[ti], load ? pk_load : NULL, &done);
			snprintf(what, sizeof what, "isa %d threads %d%s", (int)isa, thread_counts[ti],
			         load ? " packed at load" : "");
			ok = done && within_bound(c, k.y, k.ref, k.abssum, what, k.desc);
			if (ti == 0)
				memcpy(first, k.y->data, k.y->nbytes);
			else if (ok && memcmp(first, k.y->data, k.y->nbytes)) {
				print_error("%s: differs bitwise from 1 thread: %s\n", what, k.desc);
				ok = false;
			}
			*compared += k.y->numel;
			*ran += thread_counts[ti] == 1;
		}
		free(first);
	}
	onnxrun__convt_packed_free(pk_load);
	entry_case_end(&k);
	return ok;
}

#define N_BORDER 250

static void test_border_vs_reference(void **state)
{
	struct fixture *f = *state;
	TEST_ALL_ISAS(isas);
	int failures = 0, runs = 0, split = 0, ran = 0, per_rank[4] = { 0 };
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= N_BORDER && failures < 5; seed++, runs++) {
		struct cfg c;
		random_border_cfg(&c, 0x4b000000 + seed);
		per_rank[c.n]++;
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			failures += !check_border(f->env, &c, isas[ii], &compared, &split, &ran);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d padded small-grid configs (1-D %d, 2-D %d, 3-D %d): the phase path ran %d times over the "
	              "ISAs, split %d times, %lld elements compared, %d failures\n", runs, per_rank[1], per_rank[2],
	              per_rank[3], ran, split, (long long)compared, failures);
	assert_int_equal(failures, 0);
	/* the split is exercised, not only the whole path (how often depends on the panel width:
	 * 33 of 250 configs on x86-64's tables, 15 with the scalar table alone, s390x) */
	assert_true(split > 0);
}

/* A batch of 4x4 images through k4 s2 p1 (the shape of dcgan_b8): on every ISA the split
 * applies and plans exactly the in-range taps of the first axis, 14 of 16 (position, tap)
 * pairs per residue row. */
static void test_border_dcgan_shape(void **state)
{
	struct fixture *f = *state;
	TEST_ALL_ISAS(isas);
	struct cfg c;
	memset(&c, 0, sizeof c);
	c.seed = 7;
	c.n = 2;
	c.dt = ONNXRUN_DTYPE_FLOAT;
	c.opset = 11;
	c.mode = MODE_PADS;
	c.batch = 8;
	c.group = 1;
	c.cg = 5;
	c.mg = 3;
	for (int a = 0; a < 2; a++) {
		c.in[a] = 4;
		c.k[a] = 4;
		c.s[a] = 2;
		c.d[a] = 1;
		c.pads[a] = c.pads[2 + a] = 1;
	}
	ref_geometry(&c);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		int64_t compared = 0;
		int split = 0, ran = 0;
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		assert_true(check_border(f->env, &c, isas[ii], &compared, &split, &ran));
		assert_int_equal(split, 1);
		assert_int_equal(spec_fmas(&c, true) * 16, spec_fmas(&c, false) * 14);
	}
	onnxrun__isa_set(TEST_BEST_ISA);
}

/* check_border on every ISA the CPU has: fails the test, naming what and the seed, on a
 * mismatch, and where the phase path did not run the config. */
static void check_border_isas(struct onnxrun_env *env, struct cfg *c, const char *what)
{
	TEST_ALL_ISAS(isas);
	for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
		int64_t compared = 0;
		int split = 0, ran = 0;
		if (!onnxrun__isa_supported(isas[ii]))
			continue;
		onnxrun__isa_set(isas[ii]);
		if (!check_border(env, c, isas[ii], &compared, &split, &ran))
			fail_msg("%s, seed 0x%llx, isa %d", what, (unsigned long long)c->seed, (int)isas[ii]);
		assert_true(ran > 0);
	}
	onnxrun__isa_set(TEST_BEST_ISA);
}

/* Classes of several phases stored in pairs (phase.c, pair_classes): k2 s2 on the axes
 * before the last puts all their residues in one class per last-axis residue, and k4 s2 p1
 * on the last axis makes those two classes' outputs interleave; on one thread each phase
 * of the one class is stored with its mate of the other (on more threads they stay apart).
 * 2-D and 3-D, against the reference and bitwise the same on 1, 2 and 3 threads. */
static void test_phase_class_pairs(void **state)
{
	struct fixture *f = *state;
	for (int n = 2; n <= 3; n++) {
		struct cfg c;
		memset(&c, 0, sizeof c);
		c.seed = 0x9a1 + (uint64_t)n;
		c.n = n;
		c.dt = ONNXRUN_DTYPE_FLOAT;
		c.opset = 11;
		c.mode = MODE_PADS;
		c.bias = 1;
		c.batch = 3;
		c.group = 1;
		c.cg = 6;
		c.mg = 13;
		for (int a = 0; a < n; a++) {
			const bool last = a == n - 1;
			c.in[a] = last ? 7 : 3 + a;
			c.k[a] = last ? 4 : 2;
			c.s[a] = 2;
			c.d[a] = 1;
			c.pads[a] = c.pads[n + a] = last ? 1 : 0;
		}
		ref_geometry(&c);
		check_border_isas(f->env, &c, "class pairs");
	}
}

/* Phases stored in pairs along a stride-2 last axis, where AVX-512 computes the second tile
 * and stores both from its registers (phase.rel2_pair): grid rows of 32 (one run per panel:
 * k2 s2, both phases of a class sharing B) and of 16 (two runs: k3 s2 p1 op1, a class and its
 * partner, staged), with and without bias, two and three weight panels, several grid planes
 * (a panel continuing the previous one two rows on, and the last rows of a plane): within the
 * reference bound and bitwise the same on 1, 2 and 3 threads, on every ISA. */
static void test_phase_pair_stores(void **state)
{
	struct fixture *f = *state;
	for (int v = 0; v < 4; v++) {
		struct cfg c;
		const bool k3 = v >= 2;
		memset(&c, 0, sizeof c);
		c.seed = 0x5a17 + (uint64_t)v;
		c.n = k3 ? 3 : 2;
		c.dt = ONNXRUN_DTYPE_FLOAT;
		c.opset = 11;
		c.mode = MODE_PADS;
		c.bias = v & 1;
		c.batch = 1;
		c.group = 1;
		c.cg = k3 ? 5 : 7;
		c.mg = v == 0 ? 20 : v == 3 ? 16 : 27;
		for (int a = 0; a < c.n; a++) {
			const bool last = a == c.n - 1;
			c.in[a] = last ? (k3 ? 16 : 32) : k3 ? 3 + 3 * a : 5;
			c.k[a] = k3 ? 3 : 2;
			c.s[a] = 2;
			c.d[a] = 1;
			c.op[a] = k3 ? 1 : 0;
			c.pads[a] = c.pads[c.n + a] = k3 ? 1 : 0;
		}
		ref_geometry(&c);
		check_border_isas(f->env, &c, "pair stores");
	}
}

/* Grids 8 wide on the last axis (one 8-lane quarter of a 32-wide B panel per grid row), so
 * that a wide panel's quarter can be one first-axis edge row that reads padding on some taps:
 * where the tuning enables the gemm's skip_quarter tile (kernels.h, AMD Zen 4 with AVX-512) such panels
 * leave those multiply-adds out, elsewhere they run whole; either way within the reference
 * bound and bitwise the same on 1, 2 and 3 threads. Many output channels, so that the B
 * panels are packed (the skip_quarter tile's panels), few input channels to keep the reference
 * quick: 2-D and 3-D, k4 s2 p1 (the dcgan shape) and random kernels, strides, pads. */
static void random_quarter_cfg(struct cfg *c, uint64_t seed)
{
	uint64_t s = seed;
	bool ok;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->n = rng_int(&s, 0, 4) ? 2 : 3;
	c->dt = ONNXRUN_DTYPE_FLOAT;
	c->opset = 11;
	c->mode = MODE_PADS;
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 3);
	c->group = rng_int(&s, 0, 3) ? 1 : 2;
	c->cg = rng_int(&s, 1, 4);
	c->mg = rng_int(&s, 24, 80);
	const bool dcgan = rng_int(&s, 0, 1);
	do {
		ok = true;
		for (int i = 0; i < c->n; i++) {
			const bool last = i == c->n - 1;
			c->in[i] = last ? (rng_int(&s, 0, 3) ? 8 : rng_int(&s, 4, 16)) : rng_int(&s, 1, c->n == 3 ? 4 : 12);
			c->k[i] = dcgan ? 4 : rng_int(&s, 1, 5);
			c->s[i] = dcgan ? 2 : rng_int(&s, 1, 3);
			c->d[i] = dcgan ? 1 : rng_int(&s, 1, 2);
			c->pads[i] = dcgan ? 1 : rng_int(&s, 0, 3);
			c->pads[c->n + i] = dcgan ? 1 : rng_int(&s, 0, 3);
		}
		ref_geometry(c);
		for (int i = 0; i < c->n; i++)
			ok = ok && c->out[i] >= 1;
	} while (!ok);
}

#define N_QUARTER 40

static void test_quarter_skip_vs_reference(void **state)
{
	struct fixture *f = *state;
	TEST_ALL_ISAS(isas);
	int failures = 0, split = 0, ran = 0;
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= N_QUARTER && failures < 5; seed++) {
		struct cfg c;
		random_quarter_cfg(&c, 0x51000000 + seed);
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			failures += !check_border(f->env, &c, isas[ii], &compared, &split, &ran);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d configs with grids 8 wide: the phase path ran %d times over the ISAs, %lld elements "
	              "compared, %d failures\n", N_QUARTER, ran, (long long)compared, failures);
	assert_int_equal(failures, 0);
	assert_true(ran > 0);
}

/* Batches of 8 images whose phase grids are 4 wide along the last axis (phase.c,
 * img_inner_wanted): where the ISA's table has the skip_quarter tile and the tuning enables
 * it (AVX-512 on AMD family 0x19), the border split's jobs order their positions with the
 * image innermost, so that the last axis's edge column is one 8-lane quarter of each B panel
 * (packed 8 images per quarter, stored element by element) and its padded taps are left
 * out; elsewhere the jobs keep their runs. k4 s2 p1 on 4-wide inputs (dcgan_b8's shape,
 * first axes of 3-7) takes the layout exactly where the tile is enabled; random kernels,
 * strides and pads whose last-axis grids are 4 wide take it or not by the rule. Either way
 * within the reference bound and bitwise the same on 1, 2 and 3 threads (check_border). */
static void random_img_inner_cfg(struct cfg *c, uint64_t seed, bool dcgan)
{
	uint64_t s = seed;
	bool ok;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->n = dcgan || rng_int(&s, 0, 3) ? 2 : 3;
	c->dt = ONNXRUN_DTYPE_FLOAT;
	c->opset = 11;
	c->mode = MODE_PADS;
	c->bias = rng_int(&s, 0, 1);
	c->kernel_attr = rng_int(&s, 0, 1);
	c->batch = 8;
	c->group = rng_int(&s, 0, 3) ? 1 : 2;
	c->cg = rng_int(&s, 1, 5);
	c->mg = rng_int(&s, 1, 30);
	do {
		ok = true;
		for (int i = 0; i < c->n; i++) {
			const bool last = i == c->n - 1;
			c->in[i] = last ? (dcgan ? 4 : rng_int(&s, 2, 6)) : rng_int(&s, dcgan ? 3 : 2, c->n == 3 ? 4 : 7);
			c->k[i] = dcgan ? 4 : rng_int(&s, 2, 6);
			c->s[i] = dcgan ? 2 : rng_int(&s, 1, 2);
			c->d[i] = 1;
			c->pads[i] = dcgan ? 1 : rng_int(&s, 0, 2);
			c->pads[c->n + i] = dcgan ? 1 : rng_int(&s, 0, 2);
		}
		ref_geometry(c);
		for (int i = 0; i < c->n; i++)
			ok = ok && c->out[i] >= 1;
		/* every last-axis residue's grid 4 wide: out = 4 * s */
		ok = ok && c->out[c->n - 1] == 4 * c->s[c->n - 1];
	} while (!ok);
}

#define N_IMG_INNER 36

static void test_img_inner_vs_reference(void **state)
{
	struct fixture *f = *state;
	TEST_ALL_ISAS(isas);
	int failures = 0, split = 0, ran = 0, taken = 0, taken_random = 0, enabled = 0;
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= N_IMG_INNER && failures < 5; seed++) {
		struct cfg c;
		const bool dcgan = seed <= N_IMG_INNER / 3;
		random_img_inner_cfg(&c, 0x1a9e0000 + seed, dcgan);
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			struct entry_case k;
			struct onnxrun__convt_packed *pk = NULL;
			char desc[512];
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__isa_set(isas[ii]);
			failures += !check_border(f->env, &c, isas[ii], &compared, &split, &ran);
			entry_case_begin(f->env, &c, &k);
			assert_int_equal(onnxrun__convt_pack_with_border(f->env, &k.g, k.w->data, CONVT_LAYOUT_PHASE, NULL,
			                                                 NULL, &pk),
			                 ONNXRUN_OK);
			const bool on = pk->kern->skip_quarter && pk->kt->phase.pack_img8 && pk->kern->nr[0] == 32 &&
			                onnxrun__tuning()->skip_quarters;
			const int jobs = onnxrun__convt_phase_img_inner_jobs(f->env, &k.g, pk);
			cfg_str(&c, desc, sizeof desc);
			assert_true(jobs >= 0);
			if (jobs > 0 && !on) {
				print_error("isa %d: %d jobs with the image innermost without the skip_quarter tile: %s\n",
				            (int)isas[ii], jobs, desc);
				failures++;
			}
			/* dcgan's shape: the interior and both border jobs */
			if (dcgan && on && jobs != 3) {
				print_error("isa %d: %d jobs with the image innermost, want 3: %s\n", (int)isas[ii], jobs, desc);
				failures++;
			}
			taken += jobs > 0;
			taken_random += jobs > 0 && !dcgan;
			enabled += on;
			onnxrun__convt_packed_free(pk);
			entry_case_end(&k);
		}
	}
	onnxrun__isa_set(TEST_BEST_ISA);
	print_message("%d batches of 8 with 4-wide last-axis grids: the phase path ran %d times over the ISAs, split "
	              "%d times, the image innermost in %d (%d random shapes; the tile enabled in %d), %lld elements "
	              "compared, %d failures\n",
	              N_IMG_INNER, ran, split, taken, taken_random, enabled, (long long)compared, failures);
	assert_int_equal(failures, 0);
	assert_true(ran > 0);
	if (enabled) /* the random shapes reach the layout too, not only dcgan's */
		assert_true(taken_random > 0);
	else
		assert_int_equal(taken, 0);
}

/* Border weights packed at load (X's sizes unknown) are kept when X's inferred type is
 * known and its run splits (8 images of 4x4 at k4 s2 p1), dropped when it would not (one
 * 128x128 image: its border rows are under 1% of the work on any ISA's panel width, below
 * the split's 3%; one 8x8 image splits with NEON's 16-wide panels, not AVX-512's 32); given
 * X's concrete sizes before packing, those of the 128x128 image are not packed at all. */
static void test_border_trim(void **state)
{
	struct fixture *f = *state;
	for (int img = 0; img < 2; img++) {
		struct cfg c;
		struct entry_case k;
		struct onnxrun__convt_packed *pk = NULL;
		struct onnxrun__convt_geom gl;
		struct onnxrun_type lt[3];
		struct onnxrun__err err;
		memset(&c, 0, sizeof c);
		c.seed = 11;
		c.n = 2;
		c.dt = ONNXRUN_DTYPE_FLOAT;
		c.opset = 11;
		c.mode = MODE_PADS;
		c.batch = img ? 1 : 8;
		c.group = 1;
		c.cg = 2;
		c.mg = 3;
		for (int a = 0; a < 2; a++) {
			c.in[a] = img ? 128 : 4;
			c.k[a] = 4;
			c.s[a] = 2;
			c.d[a] = 1;
			c.pads[a] = c.pads[2 + a] = 1;
		}
		ref_geometry(&c);
		entry_case_begin(f->env, &c, &k);
		memcpy(lt, k.in, sizeof lt);
		lt[0].shape.dims[0] = 1;
		lt[0].shape.dims[2] = lt[0].shape.dims[3] = -1;
		assert_int_equal(onnxrun__convt_geom_make(&k.t.node, lt, k.n_in, &gl, &err), ONNXRUN_OK);
		assert_int_equal(onnxrun__convt_pack_with_border(f->env, &gl, k.w->data, CONVT_LAYOUT_PHASE, NULL, NULL, &pk), ONNXRUN_OK);
		assert_non_null(pk->border);
		assert_int_equal(onnxrun__convt_border_trim(f->env, &k.t.node, k.in, k.n_in, pk), ONNXRUN_OK);
		if (img)
			assert_null(pk->border);
		else
			assert_non_null(pk->border);
		onnxrun__convt_packed_free(pk);
		/* the same decision before packing, given X's concrete sizes: the 128x128 image's
		 * border weights never packed, the batch's packed and used by its run */
		pk = NULL;
		assert_int_equal(onnxrun__convt_pack_with_border(f->env, &gl, k.w->data, CONVT_LAYOUT_PHASE, &k.g, NULL, &pk),
		                 ONNXRUN_OK);
		if (img) {
			assert_null(pk->border);
		} else {
			struct onnxrun__convt_border_run run;
			assert_non_null(pk->border);
			assert_int_equal(onnxrun__convt_border_plan(f->env, &k.g, pk, &run), 1);
			onnxrun__free(f->env, run.box);
		}
		onnxrun__convt_packed_free(pk);
		entry_case_end(&k);
	}
}
#endif

/* An allocator whose blocks start as NaN bytes (0xff), as reused heap memory may hold. Over
 * malloc (a microcontroller build has no aligned allocation of its own): the block is aligned
 * inside a larger one whose start is kept just before it. */
static void *nan_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	if (align < sizeof(void *))
		align = sizeof(void *);
	unsigned char *raw = malloc(size + align + sizeof(void *));
	if (!raw)
		return NULL;
	uintptr_t at = ((uintptr_t)(raw + sizeof(void *)) + align - 1) & ~(uintptr_t)(align - 1);
	void **p = (void **)at;
	p[-1] = raw;
	memset(p, 0xff, size);
	return p;
}

static void nan_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)size;
	if (p)
		free(((void **)p)[-1]);
}

/* The window GEMM's staged rows hold their zero pads from each thread's first item on (the
 * items copy only x's values): with scratch that starts as NaN, an output whose taps reach a
 * pad would read NaN if a pad slot were left unwritten. */
static void test_window_pads_from_nan_scratch(void **state)
{
	(void)state;
	const struct onnxrun_allocator nan_heap = { NULL, nan_alloc, nan_free };
	struct onnxrun_env *env = NULL;
	assert_int_equal(onnxrun_env_create(&nan_heap, &env), ONNXRUN_OK);
	run_window_configs(env, random_window_cfg, 0x3e000000, 100);
	run_window_configs(env, random_window_long_cfg, 0x3e800000, 40);
	onnxrun_env_free(env);
}

/* Configs the fast paths leave to the scatter, with enough work (>= 64K multiply-adds) that
 * the scatter splits its planes over the threads: float64 of rank 4-5 (the float64 path stops
 * at rank 3), and float / float16 / float64 long kernels over 1-2 inputs (the output-driven
 * paths would do > 8x the work and decline). */
static void random_scatter_cfg(struct cfg *c, uint64_t seed)
{
	static const enum onnxrun_dtype dts[] = { ONNXRUN_DTYPE_FLOAT, ONNXRUN_DTYPE_FLOAT16, ONNXRUN_DTYPE_DOUBLE };
	uint64_t s = seed;
	const bool long_kernel = rng_int(&s, 0, 1);
	int64_t work;
	memset(c, 0, sizeof *c);
	c->seed = seed;
	c->dt = long_kernel ? dts[rng_int(&s, 0, 2)] : ONNXRUN_DTYPE_DOUBLE;
	c->opset = 22;
	c->bias = rng_int(&s, 0, 1);
	c->batch = rng_int(&s, 1, 2);
	c->group = rng_int(&s, 1, 2);
	c->cg = rng_int(&s, 1, 4);
	c->mg = long_kernel ? rng_int(&s, 5, 6) : rng_int(&s, 2, 6); /* > 4: not the overlap-add's */
	c->n = long_kernel ? 1 : (int)rng_int(&s, 4, 5);
	for (int i = 0; i < c->n; i++) {
		c->in[i] = long_kernel ? rng_int(&s, 1, 2) : rng_int(&s, 2, 4);
		c->k[i] = long_kernel ? rng_int(&s, 40, 80) : rng_int(&s, 1, 3);
		c->s[i] = long_kernel ? 1 : rng_int(&s, 1, 3);
		c->d[i] = long_kernel ? 1 : rng_int(&s, 1, 2);
		c->pads[i] = rng_int(&s, 0, 1);
	}
	do { /* more input channels until the scatter is worth splitting */
		work = c->batch * c->group * c->mg * c->cg;
		for (int i = 0; i < c->n; i++)
			work *= c->in[i] * c->k[i];
		c->cg += work < 70000;
	} while (work < 70000);
	ref_geometry(c);
}

/* The fast path of the config's dtype declines it (so compute runs the scatter). */
static void assert_fast_declines(struct onnxrun_env *env, struct tnode *t, struct onnxrun_type *in, size_t n_in,
                                 struct onnxrun_tensor *const *tensors, const char *desc)
{
	struct onnxrun_type out;
	struct onnxrun__convt_geom g;
	struct onnxrun__err err;
	struct onnxrun_op_context ctx = { &t->node, &err, env, 1, NULL, NULL, NULL, NULL, NULL };
	const struct onnxrun_tensor *const *ins = (const struct onnxrun_tensor *const *)tensors;
	struct onnxrun_tensor *y;
	const char *name;
	(void)ctx;
	(void)ins;
	if (run_infer(t, in, n_in, &out, &err) || onnxrun__convt_geom_make(&t->node, in, n_in, &g, &err))
		fail_msg("infer failed: %s: %s", err.msg, desc);
	/* float16/bfloat16 run through the float32 list */
	name = onnxrun__convt_pick_name(&g, out.dtype == ONNXRUN_DTYPE_DOUBLE ? out.dtype : ONNXRUN_DTYPE_FLOAT);
	if (strcmp(name, "scatter"))
		fail_msg("'%s' took a scatter config: %s", name, desc);
	y = NULL;
	(void)y;
}

/* The scatter (through compute) on 1, 2 and 4 threads: within the bound, same bits. */
static bool check_scatter_threads(struct onnxrun_env *env, struct cfg *c, int64_t *compared)
{
	struct tnode t;
	struct onnxrun_type in[3];
	struct onnxrun_tensor *x, *w, *b, *y[3];
	long double *ref, *abssum;
	char desc[1024];
	bool ok = true;

	build_node(c, &t, in);
	cfg_str(c, desc, sizeof desc);
	x = new_tensor(env, &in[0]);
	w = new_tensor(env, &in[1]);
	b = new_tensor(env, &in[2]);
	fill_inputs(c, x, w, b);
	assert_fast_declines(env, &t, in, c->bias ? 3 : 2, (struct onnxrun_tensor *[]){ x, w, b }, desc);
	for (int i = 0; i < 3; i++)
		y[i] = run_node_threads(env, &t, in, c->bias ? 3 : 2, (struct onnxrun_tensor *[]){ x, w, b }, 1 << i);
	ref = calloc((size_t)y[0]->numel, sizeof *ref);
	abssum = calloc((size_t)y[0]->numel, sizeof *abssum);
	assert_true(ref && abssum);
	ref_scatter(c, x, w, b, ref, abssum);
	ok = within_bound(c, y[0], ref, abssum, "scatter threads 1", desc);
	for (int i = 1; i < 3 && ok; i++)
		if (memcmp(y[0]->data, y[i]->data, y[0]->nbytes)) {
			print_error("scatter: %d threads differ bitwise from 1: %s\n", 1 << i, desc);
			ok = false;
		}
	*compared += y[0]->numel;
	free(ref);
	free(abssum);
	for (int i = 0; i < 3; i++)
		onnxrun_tensor_free(y[i]);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(w);
	onnxrun_tensor_free(b);
	return ok;
}

#define N_SCATTER_THREADS 40

static void test_scatter_threads(void **state)
{
	struct fixture *f = *state;
	int failures = 0, runs = 0, per_dt[17] = { 0 };
	int64_t compared = 0;
	for (uint64_t seed = 1; seed <= N_SCATTER_THREADS && failures < 5; seed++, runs++) {
		struct cfg c;
		random_scatter_cfg(&c, 0x5ca70000 + seed);
		per_dt[c.dt]++;
		failures += !check_scatter_threads(f->env, &c, &compared);
	}
	print_message("%d scatter configs (float %d, float16 %d, double %d) on threads 1/2/4, %lld elements "
	              "compared, %d failures\n", runs, per_dt[ONNXRUN_DTYPE_FLOAT], per_dt[ONNXRUN_DTYPE_FLOAT16],
	              per_dt[ONNXRUN_DTYPE_DOUBLE], (long long)compared, failures);
	assert_int_equal(failures, 0);
}

/* ---- which implementation takes a node (impl.h) ---------------------------------------- */

/* A concrete geometry: n spatial axes of size `in`, kernel k, stride s, no padding. */
static struct onnxrun__convt_geom geom_of(int32_t n, int64_t c, int64_t m, int64_t group, int64_t in, int64_t k,
                                          int64_t s)
{
	struct onnxrun__convt_geom g;
	memset(&g, 0, sizeof g);
	g.n = n;
	g.batch = 1;
	g.in_channels = c;
	g.out_channels = m;
	g.group = group;
	g.concrete = true;
	for (int32_t a = 0; a < n; a++) {
		g.in[a] = in;
		g.kernel[a] = k;
		g.strides[a] = s;
		g.dilations[a] = 1;
		g.out[a] = (in - 1) * s + k;
	}
	return g;
}

static void test_implementation_choice(void **state)
{
	const enum onnxrun__isa saved = onnxrun__isa_current();
	(void)state;
	for (int isa = ONNXRUN__ISA_SCALAR; isa < ONNXRUN__ISA_COUNT; isa++) {
		struct onnxrun__convt_geom g;
		if (!onnxrun__isa_supported((enum onnxrun__isa)isa))
			continue;
		onnxrun__isa_set((enum onnxrun__isa)isa);
		g = geom_of(2, 64, 64, 64, 16, 4, 2); /* depthwise */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "float32 depthwise");
		g = geom_of(2, 64, 64, 64, 16, 9, 1); /* depthwise with 81 taps: the phase GEMM */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "float32 phase GEMM");
		g = geom_of(2, 56, 1, 1, 32, 9, 3); /* few output channels from many, k a multiple of s */
		/* one GEMM of 9 rows (phases x channels) where the ISA has rel tiles that many rows
		 * high (AVX-512), else GEMM + overlap-add */
		{
			const struct onnxrun__gemm_kernels *kn = onnxrun__kernels_current()->gemm;
			const bool window = kn->rel[0] && kn->mr_max >= 9;
			assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT),
			                    window ? "float32 window GEMM" : "float32 GEMM + overlap-add");
			if (isa == ONNXRUN__ISA_AVX512)
				assert_true(window);
		}
		g = geom_of(2, 56, 1, 1, 32, 8, 3); /* the same with k not a multiple of s */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "float32 GEMM + overlap-add");
		g = geom_of(2, 64, 32, 1, 8, 4, 2); /* channel-heavy */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "float32 phase GEMM");
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_DOUBLE), "float64 phase");
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT16), "float16/bfloat16 through float32");
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_BFLOAT16), "float16/bfloat16 through float32");
		g = geom_of(3, 8, 8, 1, 4, 3, 2); /* 3-D */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "float32 phase GEMM");
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_DOUBLE), "float64 phase");
		g = geom_of(4, 2, 2, 1, 3, 2, 2); /* float64 stops at rank 3 */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_DOUBLE), "scatter");
		g = geom_of(1, 3, 2, 1, 1, 9, 1); /* a long kernel over one element: 9x the scatter's work */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "scatter");
		g = geom_of(2, 4, 4, 1, 4, 2, 128); /* 16384 phases */
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "scatter");
		g = geom_of(2, 4, 4, 1, 0, 2, 2); /* empty input: only the scatter (writes the bias) */
		g.out[0] = g.out[1] = 2;
		assert_string_equal(onnxrun__convt_pick_name(&g, ONNXRUN_DTYPE_FLOAT), "scatter");
	}
	onnxrun__isa_set(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_infer_basic),
		cmocka_unit_test(test_implementation_choice),
		cmocka_unit_test(test_infer_auto_pad),
		cmocka_unit_test(test_infer_output_shape),
		cmocka_unit_test(test_infer_ranks_groups),
		cmocka_unit_test(test_infer_symbolic),
		cmocka_unit_test(test_errors_shapes),
		cmocka_unit_test(test_errors_attributes),
		cmocka_unit_test(test_errors_dtypes),
		cmocka_unit_test_setup_teardown(test_compute_onnx_example, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_negative_total, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compute_zero_sized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_half_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_half_declines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_degenerate_first_axis, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_f64_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_f64_packed_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_f64_group_short_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_f64_group_lines, setup, teardown),
		cmocka_unit_test(test_f64_store_group_bits),
		cmocka_unit_test(test_f64_store_stream_bits),
		cmocka_unit_test_setup_teardown(test_f64_streamed_outputs, setup, teardown),
		cmocka_unit_test(test_f64_tile_ind_bits),
		cmocka_unit_test_setup_teardown(test_scatter_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_vs_reference, setup, teardown),
		cmocka_unit_test(test_window_pads_from_nan_scratch),
#ifndef ONNXRUN_BAREMETAL
		cmocka_unit_test_setup_teardown(test_border_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_border_dcgan_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quarter_skip_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_img_inner_vs_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_border_trim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phase_class_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phase_pair_stores, setup, teardown),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
