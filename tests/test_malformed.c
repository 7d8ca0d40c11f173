/*
 * test_malformed.c - hostile models and inputs: every case must fail cleanly with the
 * right status class and a message naming the culprit (node, attribute, tensor, input or
 * file). Models are built with model_builder.h (or as raw bytes); the raw files in
 * tests/malformed (made by make_malformed.py) and the fuzzers' regression inputs there go
 * through the public file API. Run under ASan/UBSan in CI, so "cleanly" includes no
 * overflow, no undefined behaviour and no leak.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"
#include "model_builder.c"

#define MALFORMED_DIR ONNXRUN_TEST_DATA "/../malformed"

/* ---- helpers ---- */

/* Loads m (packed and freed here) from a buffer and asserts status and message parts
 * (needle2 may be NULL). */
static void expect_load(Onnx__ModelProto *m, const char *base_dir, enum onnxrun_status want,
                        const char *needle1, const char *needle2)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	size_t size;
	uint8_t *buf = mb_finish(m, &size);
	enum onnxrun_status st = onnxrun_model_load_buffer(env, buf, size, base_dir, &model);
	free(buf);
	TH_ASSERT_STATUS(st, want, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), needle1);
	if (needle2)
		TH_ASSERT_MSG_HAS(onnxrun_env_error(env), needle2);
	onnxrun_env_free(env);
}

static void expect_bytes(const void *bytes, size_t size, enum onnxrun_status want, const char *needle)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	enum onnxrun_status st = onnxrun_model_load_buffer(env, bytes, size, NULL, &model);
	TH_ASSERT_STATUS(st, want, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), needle);
	onnxrun_env_free(env);
}

/* X [1,2,3,3] float -> ConvTranspose 'up' (W [2,1,2,2]) -> y; callers add attributes. */
static Onnx__ModelProto *convt_model(Onnx__NodeProto **node)
{
	static const float w[8] = { 0 };
	Onnx__ModelProto *m = mb_model(8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,2,3,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", 4, (const int64_t[]){ 2, 1, 2, 2 }, w);
	*node = mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	return m;
}

/* X [1,8,2,2] float -> DepthToSpace 'd2s' -> y; callers add attributes. */
static Onnx__ModelProto *d2s_model(Onnx__NodeProto **node)
{
	Onnx__ModelProto *m = mb_model(8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,8,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	*node = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	return m;
}

/* A model with one float initializer 'w' built by the caller, consumed by ConvTranspose. */
static Onnx__ModelProto *with_weight(Onnx__TensorProto *w)
{
	Onnx__ModelProto *m = mb_model(8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,2,3,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_add_initializer(m, w);
	mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	return m;
}

/* ---- protobuf level ---- */

static void test_empty_buffer(void **state)
{
	(void)state;
	expect_bytes("", 0, ONNXRUN_ERROR_INVALID_MODEL, "empty");
}

static void test_truncated(void **state)
{
	Onnx__NodeProto *n;
	size_t size;
	uint8_t *buf = mb_finish(convt_model(&n), &size);
	(void)state;
	for (size_t cut = 1; cut < size; cut += 7) {
		struct onnxrun_env *env = th_env();
		struct onnxrun_model *model = NULL;
		enum onnxrun_status st = onnxrun_model_load_buffer(env, buf, cut, NULL, &model);
		/* Some prefixes are valid protobuf (a message may end at any field boundary):
		 * then the model must still be rejected for what is missing. */
		assert_int_not_equal(st, ONNXRUN_OK);
		assert_true(st == ONNXRUN_ERROR_INVALID_MODEL || st == ONNXRUN_ERROR_UNSUPPORTED);
		assert_true(onnxrun_env_error(env)[0] != '\0');
		onnxrun_env_free(env);
	}
	free(buf);
}

static void test_wrong_wire_type(void **state)
{
	/* field 1 (ir_version, a varint) sent length-delimited, then graph (7) as a varint */
	static const uint8_t a[] = { 0x0a, 0x01, 0x07 }, b[] = { 0x08, 0x07, 0x38, 0x01 };
	(void)state;
	expect_bytes(a, sizeof a, ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt");
	expect_bytes(b, sizeof b, ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt");
}

static void test_overlong_varint(void **state)
{
	static const uint8_t a[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	(void)state;
	expect_bytes(a, sizeof a, ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt");
}

static void test_length_overrun(void **state)
{
	static const uint8_t a[] = { 0x08, 0x08, 0x3a, 0xe8, 0x07, 0x00, 0x00 }; /* graph: 1000 bytes */
	(void)state;
	expect_bytes(a, sizeof a, ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt");
}

static void test_ir_version_and_graph(void **state)
{
	Onnx__ModelProto *m = mb_model(2);
	(void)state;
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "ir_version 2", NULL);
	m = mb_model(8);
	onnx__graph_proto__free_unpacked(m->graph, NULL);
	m->graph = NULL;
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "no graph", NULL);
}

/* ---- declarations and tensors ---- */

static void test_negative_declared_dim(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,-8,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "x", "y"), "blocksize", 2);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "graph input 'x'", "negative");
}

static void test_declared_rank_limit(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,1,1,1,1,1,1,1,1,1,1,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "x", "y"), "blocksize", 2);
	expect_load(m, NULL, ONNXRUN_ERROR_LIMIT, "graph input 'x'", "rank 13");
}

static void test_unknown_elem_type(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", 42, "1,8,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "x", "y"), "blocksize", 2);
	expect_load(m, NULL, ONNXRUN_ERROR_UNSUPPORTED, "graph input 'x'", "elem_type 42");
}

static void test_initializer_negative_dim(void **state)
{
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 2, (const int64_t[]){ 2, -1 });
	(void)state;
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "negative");
}

static void test_initializer_dims_overflow(void **state)
{
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 3, (const int64_t[]){ 1ll << 32, 1ll << 32, 4 });
	(void)state;
	mb_tensor_raw(w, "\0\0\0\0", 4);
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_LIMIT, "tensor 'w'", "overflows");
}

static void test_initializer_bytes_overflow(void **state)
{
	/* 2^61 elements fit int64, but not 8-byte elements in size_t/int64 */
	Onnx__TensorProto *w = mb_tensor("w", MB_DOUBLE, 1, (const int64_t[]){ 1ll << 61 });
	(void)state;
	mb_tensor_raw(w, "\0\0\0\0\0\0\0\0", 8);
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_LIMIT, "tensor 'w'", "overflows");
}

static void test_huge_claim_tiny_data(void **state)
{
	/* 10^12 floats claimed, 16 bytes present: rejected from the sizes, nothing allocated */
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model = NULL;
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 4, (const int64_t[]){ 2, 1, 1000000, 1000000 });
	size_t size;
	uint8_t *buf;
	(void)state;
	mb_tensor_raw(w, "0123456789abcdef", 16);
	buf = mb_finish(with_weight(w), &size);
#if SIZE_MAX > 0xffffffffu
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_ERROR_INVALID_MODEL,
	                 onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "tensor 'w': raw_data has 16 bytes, expected 8000000000000");
#else
	/* 8 * 10^12 bytes do not fit a 32-bit size_t: a size limit, found first */
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_ERROR_LIMIT,
	                 onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env),
	                  "tensor 'w': byte size of 2000000000000 float elements overflows (more than a 32-bit size_t holds)");
#endif
	assert_int_equal(a.live, 1); /* the env */
	free(buf);
	onnxrun_env_free(env);
}

static void test_raw_data_short(void **state)
{
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 4, (const int64_t[]){ 2, 1, 2, 2 });
	(void)state;
	mb_tensor_raw(w, "0123456789abcdef0123456789abcde", 31);
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "31 bytes, expected 32");
}

static void test_missing_initializer_data(void **state)
{
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 4, (const int64_t[]){ 2, 1, 2, 2 });
	(void)state;
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "has no data");
}

static void test_typed_data_count(void **state)
{
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 1, (const int64_t[]){ 3 });
	(void)state;
	mb_tensor_float_data(w, 2, (const float[]){ 1, 2 });
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "float_data has 2 values");
}

static void test_string_too_few(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *s = mb_tensor("s", MB_STRING, 4, (const int64_t[]){ 1, 4, 1, 1 });
	(void)state;
	mb_tensor_string(s, "a", 1);
	mb_tensor_string(s, "b", 1);
	mb_opset(m, "", 13);
	mb_add_initializer(m, s);
	mb_output(m, "y", MB_STRING, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "s", "y"), "blocksize", 2);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 's'", "string_data has 2 values, expected 4");
}

static void test_unknown_dtype(void **state)
{
	Onnx__TensorProto *w = mb_tensor("w", 99, 1, (const int64_t[]){ 1 });
	Onnx__TensorProto *f8 = mb_tensor("w", 17, 1, (const int64_t[]){ 1 });
	Onnx__TensorProto *u = mb_tensor("w", MB_UNDEFINED, 1, (const int64_t[]){ 1 });
	(void)state;
	mb_tensor_raw(w, "\0", 1);
	mb_tensor_raw(f8, "\0", 1);
	mb_tensor_raw(u, "\0", 1);
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "unknown data_type 99");
	expect_load(with_weight(f8), NULL, ONNXRUN_ERROR_UNSUPPORTED, "tensor 'w'", "float8e4m3fn");
	expect_load(with_weight(u), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "not set");
}

static void test_initializer_rank_limit(void **state)
{
	int64_t dims[13];
	Onnx__TensorProto *w;
	(void)state;
	for (int i = 0; i < 13; i++)
		dims[i] = 1;
	w = mb_tensor("w", MB_FLOAT, 13, dims);
	mb_tensor_raw(w, "\0\0\0\0", 4);
	expect_load(with_weight(w), NULL, ONNXRUN_ERROR_LIMIT, "tensor 'w'", "rank 13");
}

static void test_duplicate_initializer(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_initializer_f32(m, "w", 1, (const int64_t[]){ 1 }, (const float[]){ 0 });
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "initializer 'w'", "twice");
}

/* ---- graph structure ---- */

static void test_cycle(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "a", "DepthToSpace", "", "b_out", "a_out"), "blocksize", 1);
	mb_attr_int(mb_node(m, "b", "DepthToSpace", "", "a_out", "b_out"), "blocksize", 1);
	mb_attr_int(mb_node(m, "c", "DepthToSpace", "", "x", "y"), "blocksize", 1);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "cycle", "'a'");
}

static void test_self_loop(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "loop", "DepthToSpace", "", "y", "y"), "blocksize", 1);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "'loop'", NULL);
}

static void test_duplicate_producer(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "first", "DepthToSpace", "", "x", "y"), "blocksize", 1);
	mb_attr_int(mb_node(m, "second", "DepthToSpace", "", "x", "y"), "blocksize", 1);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'second'", "already produced by node 'first'");
}

static void test_dangling_input(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "ghost", "y"), "blocksize", 1);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'd2s'", "'ghost'");
}

static void test_output_not_produced(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_output(m, "nowhere", MB_FLOAT, NULL);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "graph output 'nowhere'", NULL);
}

/* Fuzzer find: a required output left unnamed ("") crashed compute (NULL output). */
static void test_absent_required_output(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = d2s_model(&n);
	(void)state;
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, "unnamed_out", "DepthToSpace", "", "x", "");
	MB__PUSH(n->output, n->n_output, mb__strdup(""));
	mb_attr_int(n, "blocksize", 2);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'unnamed_out' (DepthToSpace)", "output 0");
	m = convt_model(&n);
	n = mb_node(m, "up2", "ConvTranspose", "", "x,w", "");
	MB__PUSH(n->output, n->n_output, mb__strdup(""));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up2' (ConvTranspose)", "output 0");
}

static void test_unsupported_op(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_node(m, "r", "Relu", "", "x", "y");
	expect_load(m, NULL, ONNXRUN_ERROR_UNSUPPORTED, "node 'r' (Relu", NULL);
}

static void test_too_many_node_inputs(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "wide", "DepthToSpace", "", "", "y");
	n->input = mb__alloc(100001 * sizeof *n->input);
	for (n->n_input = 0; n->n_input < 100001; n->n_input++)
		n->input[n->n_input] = mb__strdup("x");
	expect_load(m, NULL, ONNXRUN_ERROR_LIMIT, "node 'wide'", "too many inputs");
}

/* CPU seconds of this process (wall-clock where no CPU clock exists): other processes on
 * a busy machine do not count. */
static double cpu_seconds(void)
{
	struct timespec t;
#ifdef CLOCK_PROCESS_CPUTIME_ID
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0)
		return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
#endif
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Builds a model with n graph inputs and n + 1 distinct symbolic dims, loads it, feeds every
 * input and runs it; returns the CPU seconds of load + run (the model is built before). */
static double inputs_and_params_seconds(size_t n)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *x;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__GraphProto *g = m->graph;
	char name[32], shape[48];
	double t0, t1;
	mb_opset(m, "", 13);
	g->input = mb__alloc(n * sizeof *g->input);
	for (g->n_input = 0; g->n_input < n; g->n_input++) {
		snprintf(name, sizeof name, "i%zu", g->n_input);
		snprintf(shape, sizeof shape, "N,P%zu,1,1", g->n_input);
		g->input[g->n_input] = mb_value(name, MB_FLOAT, shape);
	}
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "i0", "y"), "blocksize", 1);
	t0 = cpu_seconds();
	model = th_load_ok(env, m);
	x = th_tensor_f32(env, 4, (const int64_t[]){ 1, 1, 1, 1 }, NULL);
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(onnxrun_session_set_input(s, i, x), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	t1 = cpu_seconds();
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return t1 - t0;
}

/* 50,000 graph inputs with 50,001 distinct symbolic dims: interning the names at load and
 * checking them at prepare must stay linear (they were quadratic: minutes for this). No
 * time limit: the CPU time of 10x the inputs must stay under 50x that of 5,000 (linear
 * work gives about 10x, quadratic about 100x), the smaller size measured best of 3. */
static void test_many_inputs_and_params(void **state)
{
	double small = 1e30, large, ratio;
	(void)state;
	for (int r = 0; r < 3; r++) {
		const double t = inputs_and_params_seconds(5000);
		small = t < small ? t : small;
	}
	large = inputs_and_params_seconds(50000);
	ratio = large / (small > 1e-4 ? small : 1e-4);
	print_message("5000 inputs: %.3f s CPU, 50000 inputs: %.3f s CPU, ratio %.1f (linear ~10, quadratic ~100)\n",
	              small, large, ratio);
	if (ratio > 50.0)
		fail_msg("10x the inputs cost %.1fx the CPU time: load or prepare is no longer linear", ratio);
}

/* 20,000 nodes checked against 20,000 local functions and 20,000 sparse initializers:
 * hashed, so linear (it was nodes x functions + inputs x sparse initializers); the node
 * that calls a function, and the one that reads a sparse initializer, are still named. */
static void test_many_functions_and_sparse(void **state)
{
	enum { N = 20000 };
	Onnx__ModelProto *m;
	Onnx__GraphProto *g;
	char name[32];
	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		m = mb_model(8);
		g = m->graph;
		mb_opset(m, "", 13);
		mb_opset(m, "com.x", 1);
		mb_input(m, "x", MB_FLOAT, "1,1,1,1");
		m->functions = mb__alloc(N * sizeof *m->functions);
		for (m->n_functions = 0; m->n_functions < N; m->n_functions++) {
			Onnx__FunctionProto *f = mb__alloc(sizeof *f);
			onnx__function_proto__init(f);
			snprintf(name, sizeof name, "f%zu", m->n_functions);
			f->name = mb__strdup(name);
			f->domain = mb__strdup("com.x");
			m->functions[m->n_functions] = f;
		}
		g->sparse_initializer = mb__alloc(N * sizeof *g->sparse_initializer);
		for (g->n_sparse_initializer = 0; g->n_sparse_initializer < N; g->n_sparse_initializer++) {
			Onnx__SparseTensorProto *sp = mb__alloc(sizeof *sp);
			onnx__sparse_tensor_proto__init(sp);
			snprintf(name, sizeof name, "sp%zu", g->n_sparse_initializer);
			sp->values = mb_tensor(name, MB_FLOAT, 1, (const int64_t[]){ 0 });
			g->sparse_initializer[g->n_sparse_initializer] = sp;
		}
		g->node = mb__alloc((N + 1) * sizeof *g->node);
		for (g->n_node = 0; g->n_node < N; g->n_node++) {
			Onnx__GraphProto one = ONNX__GRAPH_PROTO__INIT; /* mb_graph_node appends here */
			char in[32], out[32];
			snprintf(name, sizeof name, "n%zu", g->n_node);
			snprintf(in, sizeof in, "v%zu", g->n_node);
			snprintf(out, sizeof out, "v%zu", g->n_node + 1);
			mb_attr_int(mb_graph_node(&one, name, "DepthToSpace", "", g->n_node ? in : "x", out),
			            "blocksize", 1);
			g->node[g->n_node] = one.node[0];
			free(one.node);
		}
		if (pass == 0)
			mb_node(m, "calls", "f19999", "com.x", "x", "fy");
		else
			mb_node(m, "reads", "DepthToSpace", "", "sp19999", "fy");
		mb_output(m, "fy", MB_FLOAT, NULL);
		if (pass == 0)
			expect_load(m, NULL, ONNXRUN_ERROR_UNSUPPORTED, "node 'calls'", "local function 'f19999'");
		else
			expect_load(m, NULL, ONNXRUN_ERROR_UNSUPPORTED, "node 'reads'", "'sp19999' is a sparse initializer");
	}
}

/* ---- attributes ---- */

static void test_d2s_blocksize(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = d2s_model(&n);
	(void)state;
	mb_attr_int(n, "blocksize", 0);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'd2s' (DepthToSpace)", "blocksize=0");
	m = d2s_model(&n);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'd2s' (DepthToSpace)", "'blocksize' is required");
	m = d2s_model(&n);
	mb_attr_int(n, "blocksize", 3);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'd2s' (DepthToSpace)", "not divisible");
	m = d2s_model(&n);
	mb_attr_int(n, "blocksize", 1ll << 32); /* squared overflows int64 */
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'd2s' (DepthToSpace)", "overflows");
}

static void test_d2s_mode(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = d2s_model(&n);
	(void)state;
	mb_attr_int(n, "blocksize", 2);
	mb_attr_string(n, "mode", "XYZ");
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'd2s'", "mode 'XYZ'");
}

static void test_convt_group(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_int(n, "group", 0);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up' (ConvTranspose)", "group=0");
	m = convt_model(&n);
	mb_attr_int(n, "group", 3);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up' (ConvTranspose)", "group=3");
}

static void test_convt_stride_zero(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "strides", MB_INTS(1, 0));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "strides[1]=0");
}

static void test_convt_dilation_zero(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "dilations", MB_INTS(0, 1));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "dilations[0]=0");
}

static void test_convt_negative_pads(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "pads", MB_INTS(0, -1, 0, 0));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "pads[1]=-1");
}

static void test_convt_huge_pads(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "pads", MB_INTS(INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "output size");
}

static void test_convt_output_padding(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "output_padding", MB_INTS(1, 0));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "output_padding[0]=1");
}

static void test_convt_output_shape_length(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "output_shape", MB_INTS(4, 4, 4));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "'output_shape' has 3 values");
}

static void test_convt_kernel_mismatch(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_ints(n, "kernel_shape", MB_INTS(3, 3));
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "kernel_shape[0]=3");
}

static void test_attribute_wrong_type(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_float(n, "group", 1.0f);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "'group'");
}

static void test_attribute_twice(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_int(n, "group", 1);
	mb_attr_int(n, "group", 1);
	expect_load(m, NULL, ONNXRUN_ERROR_INVALID_MODEL, "node 'up'", "'group' is given twice");
}

static void test_attribute_subgraph(void **state)
{
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	(void)state;
	mb_attr_graph(n, "body", mb_graph("inner"));
	expect_load(m, NULL, ONNXRUN_ERROR_UNSUPPORTED, "node 'up'", "'body'");
}

/* ---- limits ---- */

/* The memory cap: output_shape of 10^6 x 10^6 floats (4 TB) loads (shapes are only
 * numbers) but prepare refuses it before allocating anything large. */
static void test_output_shape_absurd(void **state)
{
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	Onnx__NodeProto *n;
	Onnx__ModelProto *m = convt_model(&n);
	size_t before;
	(void)state;
	mb_attr_ints(n, "output_shape", MB_INTS(1000000, 1000000));
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	before = a.live_bytes;
	TH_ASSERT_STATUS(onnxrun_session_prepare(s), ONNXRUN_ERROR_LIMIT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "node 'up' (ConvTranspose)");
#if SIZE_MAX > 0xffffffffu
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "output 'y' needs 4000000000000 bytes");
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "limit of 8589934592 bytes");
#else
	/* 4 * 10^12 bytes are more than a 32-bit size_t: refused before the cap is looked at */
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s),
	                  "output 'y': byte size of 1000000000000 float elements overflows (more than a 32-bit size_t holds)");
#endif
	assert_true(a.live_bytes - before < 65536);
	/* 10^12 output elements with 2^20 spatial: fits int64, but not the cap either */
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	assert_int_equal(a.live, 1); /* the env */
	onnxrun_env_free(env);
}

/* A session cap below the plan: LIMIT with bytes needed and the cap; raising it runs. */
static void test_session_cap(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *x;
	Onnx__NodeProto *n;
	(void)state;
	model = th_load_ok(env, convt_model(&n));
	x = th_tensor_f32(env, 4, (const int64_t[]){ 1, 2, 3, 3 }, NULL);
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_max_memory(s, 32), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_ERROR_LIMIT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "output 'y' needs 64 bytes, above the memory limit of 32");
	assert_int_equal(onnxrun_session_set_max_memory(s, 64), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	assert_int_equal(onnxrun_session_set_max_memory(NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Arena + outputs over the cap while each tensor fits: the total is reported. */
static void test_session_cap_total(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,16,4,4");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "a", "DepthToSpace", "", "x", "t"), "blocksize", 1);
	mb_attr_int(mb_node(m, "b", "DepthToSpace", "", "t", "y"), "blocksize", 2);
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_set_max_memory(env, 1500), ONNXRUN_OK); /* read at prepare */
	TH_ASSERT_STATUS(onnxrun_session_prepare(s), ONNXRUN_ERROR_LIMIT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "planned memory of 2048 bytes (arena 1024 + outputs 1024)");
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "limit of 1500 bytes");
	assert_int_equal(onnxrun_session_set_max_memory(s, 2048), ONNXRUN_OK); /* session wins */
	TH_ASSERT_STATUS(onnxrun_session_prepare(s), ONNXRUN_OK, onnxrun_session_error(s));
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* The env cap on initializer bytes at load: the tensor that passes it is named. */
static void test_initializer_cap(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__NodeProto *n;
	size_t size;
	uint8_t *buf = mb_finish(convt_model(&n), &size);
	(void)state;
	assert_int_equal(onnxrun_env_set_max_memory(env, 16), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_ERROR_LIMIT,
	                 onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "tensor 'w': needs 32 bytes");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "memory limit of 16 bytes");
	assert_int_equal(onnxrun_env_set_max_memory(env, 0), ONNXRUN_OK); /* back to the default */
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	assert_int_equal(onnxrun_env_set_max_memory(NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_model_free(model);
	free(buf);
	onnxrun_env_free(env);
}

/* ---- external data ---- */

static char ext_dir[512];

/* A fresh folder ONNXRUN_TEST_TMP/malformed_ext holding w.bin (32 bytes). */
static const char *make_ext_dir(void)
{
	char path[600];
	snprintf(ext_dir, sizeof ext_dir, "%s/malformed_ext", ONNXRUN_TEST_TMP);
	onnxrun__os_mkdir(ext_dir);
	snprintf(path, sizeof path, "%s/w.bin", ext_dir);
	assert_int_equal(mb_write_file(path, "0123456789abcdef0123456789abcdef", 32), 0);
	return ext_dir;
}

static Onnx__ModelProto *ext_model(const char *location, int64_t offset, int64_t length)
{
	Onnx__TensorProto *w = mb_tensor("w", MB_FLOAT, 4, (const int64_t[]){ 2, 1, 2, 2 });
	mb_tensor_external(w, location, offset, length);
	return with_weight(w);
}

static void test_external_paths(void **state)
{
	const char *dir = make_ext_dir();
	char link[600], outside[600];
	(void)state;
	expect_load(ext_model("/etc/passwd", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "absolute");
	expect_load(ext_model("../malformed_ext/w.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "leaves the model's folder");
	expect_load(ext_model("sub/../../x.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "leaves the model's folder");
#ifdef _WIN32
	/* drive letters and backslashes (no symbolic link or FIFO: creating one needs a
	 * privilege, and there are no FIFOs in the file system) */
	(void)link;
	(void)outside;
	expect_load(ext_model("C:\\Windows\\win.ini", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "absolute");
	expect_load(ext_model("c:w.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "absolute");
	expect_load(ext_model("\\w.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "absolute");
	expect_load(ext_model("..\\malformed_ext\\w.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "leaves the model's folder");
	expect_load(ext_model("sub\\..\\..\\x.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "leaves the model's folder");
#else
	/* a symlink inside the folder pointing outside it */
	snprintf(outside, sizeof outside, "%s/malformed_outside.bin", ONNXRUN_TEST_TMP);
	assert_int_equal(mb_write_file(outside, "0123456789abcdef0123456789abcdef", 32), 0);
	snprintf(link, sizeof link, "%s/link.bin", dir);
	unlink(link);
	assert_int_equal(symlink(outside, link), 0);
	expect_load(ext_model("link.bin", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "resolves outside the model's folder");
	/* a FIFO inside the folder: refused without opening it (opening would block) */
	snprintf(link, sizeof link, "%s/fifo.bin", dir);
	unlink(link);
	assert_int_equal(mkfifo(link, 0600), 0);
	expect_load(ext_model("fifo.bin", -1, -1), dir, ONNXRUN_ERROR_IO, "tensor 'w'", "not a regular file");
#endif
	expect_load(ext_model(".", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "resolves outside");
	expect_load(ext_model("w.bin", -1, -1), NULL, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "no folder");
	expect_load(ext_model("missing.bin", -1, -1), dir, ONNXRUN_ERROR_IO, "tensor 'w'", "missing.bin");
	expect_load(ext_model("", -1, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "no location");
}

static void test_external_ranges(void **state)
{
	const char *dir = make_ext_dir();
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	size_t size;
	uint8_t *buf;
	(void)state;
	expect_load(ext_model("w.bin", 40, -1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "offset 40 is beyond the end");
	expect_load(ext_model("w.bin", 8, 32), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "offset 8 + length 32 is beyond the end");
	expect_load(ext_model("w.bin", INT64_MAX, 1), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'", "beyond");
	expect_load(ext_model("w.bin", 0, 16), dir, ONNXRUN_ERROR_INVALID_MODEL, "tensor 'w'",
	            "16 bytes, expected 32");
	/* the good case loads */
	buf = mb_finish(ext_model("w.bin", 0, 32), &size);
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, dir, &model), ONNXRUN_OK, onnxrun_env_error(env));
	onnxrun_model_free(model);
	free(buf);
	onnxrun_env_free(env);
}

/* ---- inputs: wrong dtype, rank, shape ---- */

static void test_wrong_inputs(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *i64 = NULL, *r3 = NULL, *shape = NULL;
	Onnx__NodeProto *n;
	(void)state;
	model = th_load_ok(env, convt_model(&n));
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_INT64, 4, (const int64_t[]){ 1, 2, 3, 3 }, &i64),
	                 ONNXRUN_OK);
	r3 = th_tensor_f32(env, 3, (const int64_t[]){ 2, 3, 3 }, NULL);
	shape = th_tensor_f32(env, 4, (const int64_t[]){ 1, 2, 3, 4 }, NULL);
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, i64), ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "input 'x': expected dtype float, got int64");
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, r3), ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "input 'x': expected rank 4");
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, shape), ONNXRUN_ERROR_INVALID_INPUT,
	                 onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "input 'x': dim 3 is 4");
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "input 'x' is not set");
	onnxrun_session_free(s);
	onnxrun_tensor_free(i64);
	onnxrun_tensor_free(r3);
	onnxrun_tensor_free(shape);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Input files: a .npy of the wrong dtype and a .pb of the wrong shape, loaded from disk. */
static void test_wrong_input_files(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *t = NULL;
	char path[600];
	Onnx__NodeProto *n;
	(void)state;
	model = th_load_ok(env, convt_model(&n));
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	snprintf(path, sizeof path, "%s/npy/i8_5.npy", ONNXRUN_TEST_DATA);
	TH_ASSERT_STATUS(onnxrun_tensor_load_npy(env, path, &t), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, t), ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "input 'x'");
	onnxrun_tensor_free(t);
	snprintf(path, sizeof path, "%s/test_convtranspose_1d/test_data_set_0/input_0.pb", ONNXRUN_TEST_DATA);
	TH_ASSERT_STATUS(onnxrun_tensor_load_pb(env, path, &t), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, t), ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "input 'x': expected rank 4");
	onnxrun_tensor_free(t);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- tensor buffers (.npy / .pb) built in memory ---- */

static void test_npy_cap(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_tensor *t = NULL;
	char path[600];
	(void)state;
	snprintf(path, sizeof path, "%s/npy/f4_2x3.npy", ONNXRUN_TEST_DATA);
	assert_int_equal(onnxrun_env_set_max_memory(env, 8), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_tensor_load_npy(env, path, &t), ONNXRUN_ERROR_LIMIT, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "f4_2x3.npy");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "needs 24 bytes, above the memory limit of 8 bytes");
	onnxrun_env_free(env);
}

static void test_pb_cap(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_tensor *t = NULL;
	char path[600];
	(void)state;
	snprintf(path, sizeof path, "%s/test_convtranspose/test_data_set_0/input_0.pb", ONNXRUN_TEST_DATA);
	assert_int_equal(onnxrun_env_set_max_memory(env, 8), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_tensor_load_pb(env, path, &t), ONNXRUN_ERROR_LIMIT, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "input_0.pb");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "memory limit of 8 bytes");
	onnxrun_env_free(env);
}

/* ---- raw files in tests/malformed ---- */

struct file_case {
	const char *file;
	enum onnxrun_status status;
	const char *needle;
};

static const struct file_case file_cases[] = {
	{ "bad_truncated.onnx", ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt" },
	{ "bad_garbage.onnx", ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt" },
	{ "bad_wire_type.onnx", ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt" },
	{ "bad_overlong_varint.onnx", ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt" },
	{ "bad_length_overrun.onnx", ONNXRUN_ERROR_INVALID_MODEL, "truncated or corrupt" },
	{ "bad_empty.onnx", ONNXRUN_ERROR_INVALID_MODEL, "empty" },
	{ "bad_magic.npy", ONNXRUN_ERROR_INVALID_INPUT, "bad magic" },
	{ "bad_version.npy", ONNXRUN_ERROR_UNSUPPORTED, "version 4.0" },
	{ "bad_header_overrun.npy", ONNXRUN_ERROR_INVALID_INPUT, "truncated .npy header" },
	{ "bad_not_dict.npy", ONNXRUN_ERROR_INVALID_INPUT, "expected '{'" },
	{ "bad_missing_shape.npy", ONNXRUN_ERROR_INVALID_INPUT, "lacks 'shape'" },
	{ "bad_unknown_key.npy", ONNXRUN_ERROR_INVALID_INPUT, "unexpected key 'x'" },
	{ "bad_negative_dim.npy", ONNXRUN_ERROR_INVALID_INPUT, "non-negative integer dimension" },
	{ "bad_dim_overflow.npy", ONNXRUN_ERROR_LIMIT, "overflows int64" },
	{ "bad_size_overflow.npy", ONNXRUN_ERROR_LIMIT, "too large" },
	{ "bad_short_data.npy", ONNXRUN_ERROR_INVALID_INPUT, "7 bytes, expected 8" },
	{ "bad_long_data.npy", ONNXRUN_ERROR_INVALID_INPUT, "9 bytes, expected 8" },
	{ "bad_fortran.npy", ONNXRUN_ERROR_UNSUPPORTED, "Fortran" },
	{ "bad_object.npy", ONNXRUN_ERROR_UNSUPPORTED, "object arrays" },
	{ "bad_unterminated.npy", ONNXRUN_ERROR_UNSUPPORTED, "not supported" },
	{ "bad_garbage.pb", ONNXRUN_ERROR_INVALID_INPUT, "not a valid TensorProto" },
	{ "bad_raw_short.pb", ONNXRUN_ERROR_INVALID_INPUT, "tensor 't': raw_data has 15 bytes, expected 16" },
	{ "bad_huge_dims.pb", ONNXRUN_ERROR_LIMIT, "tensor 't': element count overflows" },
	{ "bad_unknown_dtype.pb", ONNXRUN_ERROR_INVALID_INPUT, "tensor 't': unknown data_type 99" },
	{ "bad_external.pb", ONNXRUN_ERROR_INVALID_INPUT, "external data is not allowed" },
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* Loads one file by its extension; a model that loads is run with zero inputs of its
 * declared shape (symbolic dims bound to 1). Returns the first failing status. */
static enum onnxrun_status load_any(struct onnxrun_env *env, const char *path)
{
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *t = NULL, *inputs[8] = { NULL };
	enum onnxrun_status st;
	if (ends_with(path, ".npy") || ends_with(path, ".pb")) {
		st = ends_with(path, ".npy") ? onnxrun_tensor_load_npy(env, path, &t) : onnxrun_tensor_load_pb(env, path, &t);
		onnxrun_tensor_free(t);
		return st;
	}
	if ((st = onnxrun_model_load_file(env, path, &model)))
		return st;
	onnxrun_env_set_max_memory(env, (uint64_t)64 << 20);
	st = onnxrun_session_create(model, &s);
	for (size_t i = 0; !st && i < onnxrun_model_input_count(model) && i < 8; i++) {
		struct onnxrun_value_info vi;
		int64_t dims[ONNXRUN_MAX_RANK];
		onnxrun_model_input_info(model, i, &vi);
		for (int32_t d = 0; d < vi.rank; d++)
			dims[d] = vi.dims[d].value >= 0 ? vi.dims[d].value : 1;
		if (vi.rank < 0 || (st = onnxrun_tensor_create(env, vi.dtype, vi.rank, dims, &inputs[i])) ||
		    (st = onnxrun_session_set_input(s, i, inputs[i])))
			st = st ? st : ONNXRUN_ERROR_INVALID_INPUT;
	}
	if (!st)
		st = onnxrun_session_run(s);
	onnxrun_session_free(s);
	for (size_t i = 0; i < 8; i++)
		onnxrun_tensor_free(inputs[i]);
	onnxrun_model_free(model);
	return st;
}

static void test_malformed_files(void **state)
{
	char path[1024];
	(void)state;
	for (size_t i = 0; i < sizeof file_cases / sizeof file_cases[0]; i++) {
		struct th_alloc a;
		struct onnxrun_env *env = th_env_counted(&a);
		enum onnxrun_status st;
		snprintf(path, sizeof path, "%s/%s", MALFORMED_DIR, file_cases[i].file);
		st = load_any(env, path);
		if (st != file_cases[i].status)
			fail_msg("%s: status %d (%s), expected %d: %s", file_cases[i].file, (int)st,
			         onnxrun_status_str(st), (int)file_cases[i].status, onnxrun_env_error(env));
		TH_ASSERT_MSG_HAS(onnxrun_env_error(env), file_cases[i].file);
		TH_ASSERT_MSG_HAS(onnxrun_env_error(env), file_cases[i].needle);
		assert_int_equal(a.live, 1); /* the env */
		onnxrun_env_free(env);
	}
}

/* Every crash_* file (fuzzer regressions): any status, but clean (ASan/UBSan, no leak). */
static void test_fuzz_regressions(void **state)
{
	DIR *dir = opendir(MALFORMED_DIR);
	struct dirent *e;
	char path[1024];
	int n = 0;
	(void)state;
	assert_non_null(dir);
	while ((e = readdir(dir))) {
		struct th_alloc a;
		struct onnxrun_env *env;
		if (strncmp(e->d_name, "crash_", 6))
			continue;
		snprintf(path, sizeof path, "%s/%s", MALFORMED_DIR, e->d_name);
		env = th_env_counted(&a);
		(void)load_any(env, path);
		if (a.live != 1) /* the env */
			fail_msg("%s: %ld blocks leaked", e->d_name, a.live);
		onnxrun_env_free(env);
		n++;
	}
	closedir(dir);
	print_message("%d fuzzer regression inputs\n", n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_buffer),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_wrong_wire_type),
		cmocka_unit_test(test_overlong_varint),
		cmocka_unit_test(test_length_overrun),
		cmocka_unit_test(test_ir_version_and_graph),
		cmocka_unit_test(test_negative_declared_dim),
		cmocka_unit_test(test_declared_rank_limit),
		cmocka_unit_test(test_unknown_elem_type),
		cmocka_unit_test(test_initializer_negative_dim),
		cmocka_unit_test(test_initializer_dims_overflow),
		cmocka_unit_test(test_initializer_bytes_overflow),
		cmocka_unit_test(test_huge_claim_tiny_data),
		cmocka_unit_test(test_raw_data_short),
		cmocka_unit_test(test_missing_initializer_data),
		cmocka_unit_test(test_typed_data_count),
		cmocka_unit_test(test_string_too_few),
		cmocka_unit_test(test_unknown_dtype),
		cmocka_unit_test(test_initializer_rank_limit),
		cmocka_unit_test(test_duplicate_initializer),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_self_loop),
		cmocka_unit_test(test_duplicate_producer),
		cmocka_unit_test(test_dangling_input),
		cmocka_unit_test(test_output_not_produced),
		cmocka_unit_test(test_absent_required_output),
		cmocka_unit_test(test_unsupported_op),
		cmocka_unit_test(test_too_many_node_inputs),
		cmocka_unit_test(test_many_inputs_and_params),
		cmocka_unit_test(test_many_functions_and_sparse),
		cmocka_unit_test(test_d2s_blocksize),
		cmocka_unit_test(test_d2s_mode),
		cmocka_unit_test(test_convt_group),
		cmocka_unit_test(test_convt_stride_zero),
		cmocka_unit_test(test_convt_dilation_zero),
		cmocka_unit_test(test_convt_negative_pads),
		cmocka_unit_test(test_convt_huge_pads),
		cmocka_unit_test(test_convt_output_padding),
		cmocka_unit_test(test_convt_output_shape_length),
		cmocka_unit_test(test_convt_kernel_mismatch),
		cmocka_unit_test(test_attribute_wrong_type),
		cmocka_unit_test(test_attribute_twice),
		cmocka_unit_test(test_attribute_subgraph),
		cmocka_unit_test(test_output_shape_absurd),
		cmocka_unit_test(test_session_cap),
		cmocka_unit_test(test_session_cap_total),
		cmocka_unit_test(test_initializer_cap),
		cmocka_unit_test(test_external_paths),
		cmocka_unit_test(test_external_ranges),
		cmocka_unit_test(test_wrong_inputs),
		cmocka_unit_test(test_wrong_input_files),
		cmocka_unit_test(test_npy_cap),
		cmocka_unit_test(test_pb_cap),
		cmocka_unit_test(test_malformed_files),
		cmocka_unit_test(test_fuzz_regressions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
