/*
 * test_inspect.c - onnxrun_model_inspect_file/_buffer and the unsupported-node list:
 * every unsupported node is listed (500 of them, beyond what the load error can hold) in
 * file order with its name, op type, domain and opset; types after an unsupported node
 * are declared or guessed; ops that reject guessed types do not fail the inspection but
 * the same op on real types does; an inspected model answers queries and never runs;
 * invalid models and bad arguments still fail; allocation failures are clean. Expected
 * values come from the models the tests build, never from the code under test.
 */
#include "model_builder.c"

#define UNSUPPORTED_ONNX ONNXRUN_TEST_DATA "/../bad/unsupported.onnx"

/* Packs and frees m, inspects it from the buffer and returns the status. */
static enum onnxrun_status inspect(struct onnxrun_env *env, Onnx__ModelProto *m, struct onnxrun_model **out)
{
	size_t size;
	uint8_t *buf = mb_finish(m, &size);
	enum onnxrun_status st = onnxrun_model_inspect_buffer(env, buf, size, NULL, out);
	free(buf);
	return st;
}

static struct onnxrun_model *inspect_ok(struct onnxrun_env *env, Onnx__ModelProto *m)
{
	struct onnxrun_model *model = NULL;
	TH_ASSERT_STATUS(inspect(env, m, &model), ONNXRUN_OK, onnxrun_env_error(env));
	assert_non_null(model);
	return model;
}

/* Asserts entry i of the list: node name, op type, domain, opset; and that node_index
 * names the same node in onnxrun_model_node_info, with since_version 0. */
static void assert_entry(const struct onnxrun_model *m, size_t i, const char *name, const char *op,
                         const char *domain, int64_t opset)
{
	struct onnxrun_unsupported_info u;
	struct onnxrun_node_info n;

	assert_int_equal(onnxrun_model_unsupported(m, i, &u), ONNXRUN_OK);
	assert_string_equal(u.node_name, name);
	assert_string_equal(u.op_type, op);
	assert_string_equal(u.domain, domain);
	assert_int_equal(u.opset, opset);
	assert_int_equal(onnxrun_model_node_info(m, u.node_index, &n), ONNXRUN_OK);
	assert_string_equal(n.name, name);
	assert_string_equal(n.op_type, op);
	assert_int_equal(n.since_version, 0);
}

/* The value's dtype and rank as the model reports them. */
static void assert_value(const struct onnxrun_model *m, const char *name, enum onnxrun_dtype dtype,
                         int32_t rank)
{
	struct onnxrun_value_info vi;

	assert_int_equal(onnxrun_model_value_info(m, name, &vi), ONNXRUN_OK);
	if (vi.dtype != dtype || vi.rank != rank)
		fail_msg("value '%s': %s rank %d, expected %s rank %d", name, onnxrun_dtype_name(vi.dtype),
		         (int)vi.rank, onnxrun_dtype_name(dtype), (int)rank);
}

/* The fixture behind the README's example: Relu (ai.onnx 13) then Foo (com.example 1). */
static void test_fixture(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	struct onnxrun_unsupported_info u;
	(void)state;
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, UNSUPPORTED_ONNX, &model), ONNXRUN_ERROR_UNSUPPORTED,
	                 onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_STATUS(onnxrun_model_inspect_file(env, UNSUPPORTED_ONNX, &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	assert_string_equal(onnxrun_env_error(env), "");
	assert_int_equal(onnxrun_model_unsupported_count(model), 2);
	assert_entry(model, 0, "relu1", "Relu", "", 13);
	assert_entry(model, 1, "foo1", "Foo", "com.example", 1);
	/* x is float [1,4,2,2]; r is guessed from it (dtype, no shape); y is declared float */
	assert_value(model, "x", ONNXRUN_DTYPE_FLOAT, 4);
	assert_value(model, "r", ONNXRUN_DTYPE_FLOAT, -1);
	assert_value(model, "y", ONNXRUN_DTYPE_FLOAT, -1);
	assert_int_equal(onnxrun_model_node_count(model), 2);
	assert_int_equal(onnxrun_model_input_count(model), 1);
	assert_int_equal(onnxrun_model_output_count(model), 1);
	/* out of range and NULL: INVALID_ARGUMENT, nothing written */
	memset(&u, 0x5a, sizeof u);
	assert_int_equal(onnxrun_model_unsupported(model, 2, &u), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(u.opset, 0x5a5a5a5a5a5a5a5a);
	assert_int_equal(onnxrun_model_unsupported(model, 0, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_unsupported(NULL, 0, &u), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_unsupported_count(NULL), 0);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

#define MANY 500

/* 500 distinct unsupported ops, written in the file in reverse execution order: the load
 * error cannot name them all, the list does, in file order, each with its node index. */
static void test_five_hundred(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = mb_model(8);
	char name[32], op[32], in[32], out[32];
	size_t size;
	uint8_t *buf;
	(void)state;
	mb_opset(m, "", 13);
	mb_opset(m, "com.many", 3);
	mb_input(m, "v0", MB_FLOAT, "1,2");
	mb_output(m, "v500", MB_FLOAT, "1,2");
	/* file position f holds the node computing v(500-f) from v(499-f) */
	for (int f = 0; f < MANY; f++) {
		int step = MANY - 1 - f;
		snprintf(name, sizeof name, "node%d", step);
		snprintf(op, sizeof op, "Op%d", step);
		snprintf(in, sizeof in, "v%d", step);
		snprintf(out, sizeof out, "v%d", step + 1);
		mb_node(m, name, op, step % 2 ? "com.many" : "", in, out);
	}
	buf = mb_finish(m, &size);
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_ERROR_UNSUPPORTED,
	                 onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "500 unsupported nodes: ");
	TH_ASSERT_STATUS(onnxrun_model_inspect_buffer(env, buf, size, NULL, &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	free(buf);
	assert_int_equal(onnxrun_model_unsupported_count(model), MANY);
	assert_int_equal(onnxrun_model_node_count(model), MANY);
	for (int f = 0; f < MANY; f++) {
		struct onnxrun_unsupported_info u;
		int step = MANY - 1 - f;
		snprintf(name, sizeof name, "node%d", step);
		snprintf(op, sizeof op, "Op%d", step);
		assert_entry(model, (size_t)f, name, op, step % 2 ? "com.many" : "", step % 2 ? 3 : 13);
		assert_int_equal(onnxrun_model_unsupported(model, (size_t)f, &u), ONNXRUN_OK);
		assert_int_equal(u.node_index, (size_t)step); /* the chain runs in step order */
	}
	/* the declared output keeps its type; the values before it are guessed float */
	assert_value(model, "v250", ONNXRUN_DTYPE_FLOAT, -1);
	assert_value(model, "v500", ONNXRUN_DTYPE_FLOAT, 2);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* x -> Cast (unsupported; declared int64 output) -> ConvTranspose: the op rejects the
 * guessed int64 X but the inspection goes on; the ConvTranspose after it is inferred. */
static Onnx__ModelProto *cast_then_conv(bool declare_int64)
{
	Onnx__ModelProto *m = mb_model(8);
	const float w[2 * 1 * 2 * 2] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,2,3,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "z", MB_FLOAT, NULL);
	if (declare_int64)
		mb_value_info(m, "c", MB_INT64, "1,2,3,3");
	mb_initializer_f32(m, "w", 4, (const int64_t[]){ 2, 1, 2, 2 }, w);
	mb_node(m, "cast", "Cast", "", "x", "c");
	mb_node(m, "up", "ConvTranspose", "", "c,w", "y");
	/* a ConvTranspose fed by the real input: inferred as usual */
	mb_node(m, "up2", "ConvTranspose", "", "x,w", "z");
	return m;
}

static void test_guessed_types(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_value_info vi;
	struct onnxrun_node_info ni;
	(void)state;
	/* undeclared: c guessed float with unknown shape; up infers float of unknown dims */
	model = inspect_ok(env, cast_then_conv(false));
	assert_int_equal(onnxrun_model_unsupported_count(model), 1);
	assert_entry(model, 0, "cast", "Cast", "", 13);
	assert_value(model, "c", ONNXRUN_DTYPE_FLOAT, -1);
	assert_int_equal(onnxrun_model_value_info(model, "y", &vi), ONNXRUN_OK);
	assert_int_equal(vi.dtype, ONNXRUN_DTYPE_FLOAT);
	/* z: [1,2,3,3] * W [2,1,2,2] (group 1: 1 output channel), stride 1 -> [1,1,4,4] */
	assert_int_equal(onnxrun_model_value_info(model, "z", &vi), ONNXRUN_OK);
	assert_int_equal(vi.rank, 4);
	assert_int_equal(vi.dims[1].value, 1);
	assert_int_equal(vi.dims[2].value, 4);
	assert_int_equal(vi.dims[3].value, 4);
	for (size_t i = 0; i < onnxrun_model_node_count(model); i++) {
		assert_int_equal(onnxrun_model_node_info(model, i, &ni), ONNXRUN_OK);
		if (strcmp(ni.name, "cast") != 0)
			assert_true(ni.since_version >= 1);
	}
	onnxrun_model_free(model);
	/* declared int64: ConvTranspose rejects an int64 X, the inspection does not fail and
	 * c keeps its declared type */
	model = inspect_ok(env, cast_then_conv(true));
	assert_string_equal(onnxrun_env_error(env), "");
	assert_int_equal(onnxrun_model_value_info(model, "c", &vi), ONNXRUN_OK);
	assert_int_equal(vi.dtype, ONNXRUN_DTYPE_INT64);
	assert_int_equal(vi.rank, 4);
	assert_int_equal(vi.dims[3].value, 3);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* An op that rejects real (not guessed) types still fails the inspection. */
static void test_invalid_models_still_fail(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "r", MB_FLOAT, NULL);
	mb_node(m, "relu", "Relu", "", "x", "r");
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 3); /* 3 * 3 does not divide 4 channels */
	TH_ASSERT_STATUS(inspect(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "d2s");
	/* structure errors, named as by the load */
	TH_ASSERT_STATUS(onnxrun_model_inspect_file(env, ONNXRUN_TEST_DATA "/../bad/cycle.onnx", &model),
	                 ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "cycle");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "cycle.onnx");
	/* a domain without an opset import is invalid, not unsupported */
	m = mb_model(8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_node(m, "foo", "Foo", "com.nowhere", "x", "y");
	TH_ASSERT_STATUS(inspect(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "com.nowhere");
	/* constructs the loader rejects stay UNSUPPORTED */
	m = mb_model(8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "iffy", "If", "", "x", "y");
	mb_attr_graph(n, "then_branch", mb_graph("then"));
	TH_ASSERT_STATUS(inspect(env, m, &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "iffy");
	/* bad arguments */
	assert_int_equal(onnxrun_model_inspect_file(NULL, UNSUPPORTED_ONNX, &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_inspect_file(env, NULL, &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_inspect_file(env, UNSUPPORTED_ONNX, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_inspect_buffer(env, NULL, 5, NULL, &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	TH_ASSERT_STATUS(onnxrun_model_inspect_file(env, ONNXRUN_TEST_DATA "/no-such.onnx", &model),
	                 ONNXRUN_ERROR_IO, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "no-such.onnx");
	assert_null(model);
	onnxrun_env_free(env);
}

/* A registered custom op is an implementation: not listed. */
static enum onnxrun_status same_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	out[0] = in[0];
	return ONNXRUN_OK;
}

static enum onnxrun_status no_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                      size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	(void)in;
	(void)n_in;
	(void)out;
	(void)n_out;
	return onnxrun_op_fail(ctx, ONNXRUN_ERROR_RUNTIME, "not for running");
}

static void test_custom_op_not_listed(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_op op = { "com.example", "Foo", 1, same_infer, no_compute, NULL, NULL, NULL, NULL };
	(void)state;
	assert_int_equal(onnxrun_env_register_op(env, &op), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_model_inspect_file(env, UNSUPPORTED_ONNX, &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	assert_int_equal(onnxrun_model_unsupported_count(model), 1);
	assert_entry(model, 0, "relu1", "Relu", "", 13);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* A model that loads: the inspection describes it the same way, lists nothing, and its
 * sessions refuse to run while the loaded model's run. */
static void test_inspected_model_never_runs(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *loaded = NULL, *inspected = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *x, *w;
	const char *path = ONNXRUN_TEST_DATA "/test_convtranspose/model.onnx";
	(void)state;
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, path, &loaded), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_model_inspect_file(env, path, &inspected), ONNXRUN_OK, onnxrun_env_error(env));
	assert_int_equal(onnxrun_model_unsupported_count(loaded), 0);
	assert_int_equal(onnxrun_model_unsupported_count(inspected), 0);
	assert_int_equal(onnxrun_model_node_count(inspected), onnxrun_model_node_count(loaded));
	for (size_t i = 0; i < onnxrun_model_node_count(loaded); i++) {
		struct onnxrun_node_info a, b;
		struct onnxrun_value_info va, vb;
		assert_int_equal(onnxrun_model_node_info(loaded, i, &a), ONNXRUN_OK);
		assert_int_equal(onnxrun_model_node_info(inspected, i, &b), ONNXRUN_OK);
		assert_string_equal(a.op_type, b.op_type);
		assert_int_equal(a.since_version, b.since_version);
		assert_int_equal(onnxrun_model_value_info(loaded, a.outputs[0], &va), ONNXRUN_OK);
		assert_int_equal(onnxrun_model_value_info(inspected, b.outputs[0], &vb), ONNXRUN_OK);
		assert_int_equal(va.dtype, vb.dtype);
		assert_int_equal(va.rank, vb.rank);
		for (int32_t d = 0; d < va.rank; d++)
			assert_int_equal(va.dims[d].value, vb.dims[d].value);
	}
	TH_ASSERT_STATUS(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_DATA "/test_convtranspose/test_data_set_0/input_0.pb", &x),
	                 ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_DATA "/test_convtranspose/test_data_set_0/input_1.pb", &w),
	                 ONNXRUN_OK, onnxrun_env_error(env));
	assert_int_equal(onnxrun_session_create(inspected, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 1, w), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_prepare(s), ONNXRUN_ERROR_INVALID_ARGUMENT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "onnxrun_model_inspect_file");
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_ARGUMENT, onnxrun_session_error(s));
	onnxrun_session_free(s);
	s = NULL;
	assert_int_equal(onnxrun_session_create(loaded, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 1, w), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(w);
	onnxrun_model_free(inspected);
	onnxrun_model_free(loaded);
	onnxrun_env_free(env);
}

/* Failing each allocation of an inspection in turn: OK or a clean OUT_OF_MEMORY with a
 * message, and nothing left allocated. */
static void test_out_of_memory(void **state)
{
	long n;
	(void)state;
	for (n = 0;; n++) {
		struct th_alloc a;
		struct onnxrun_env *env = th_env_counted(&a);
		struct onnxrun_model *model = NULL;
		enum onnxrun_status st;
		long made;
		a.fail_at = a.count + n;
		st = onnxrun_model_inspect_file(env, UNSUPPORTED_ONNX, &model);
		made = a.count;
		if (st != ONNXRUN_OK && (st != ONNXRUN_ERROR_OUT_OF_MEMORY || !onnxrun_env_error(env)[0]))
			fail_msg("allocation %ld failed: status %d, message '%s'", n, (int)st, onnxrun_env_error(env));
		if (st == ONNXRUN_OK)
			assert_int_equal(onnxrun_model_unsupported_count(model), 2);
		onnxrun_model_free(model);
		onnxrun_env_free(env);
		if (a.live != 0)
			fail_msg("%ld blocks leaked when allocation %ld failed", a.live, n);
		if (st == ONNXRUN_OK && made <= a.fail_at)
			break; /* allocation n was never made: every one has been failed once */
	}
	print_message("inspection: %ld allocations, each failed once\n", n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_five_hundred),
		cmocka_unit_test(test_guessed_types),
		cmocka_unit_test(test_invalid_models_still_fail),
		cmocka_unit_test(test_custom_op_not_listed),
		cmocka_unit_test(test_inspected_model_never_runs),
		cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
