/*
 * test_loader.c - loading models through the public API: buffers and files, initializers of
 * every dtype (raw_data and typed fields), inputs with defaults, opset imports, IR versions,
 * symbolic dims, external data, unsupported constructs, malformed bytes, bad arguments and
 * allocation failures. Models are built in C with model_builder.h; expected values come
 * from the spec, never from the code under test.
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h> /* VirtualQuery, K32GetMappedFileNameA: what is mapped (mapped_count) */
#include <psapi.h>
#endif
#include "model_builder.c"

#ifndef ONNXRUN_TEST_TMP
#define ONNXRUN_TEST_TMP "/tmp"
#endif

#define D4(a, b, c, d) 4, ((const int64_t[]){ a, b, c, d })

/* ---- log capture ---- */

struct log_capture {
	int warnings;
	int total;
	char last[1024];
};

static void capture_log(void *ctx, enum onnxrun_log_level level, const char *message)
{
	struct log_capture *c = ctx;
	c->total++;
	if (level == ONNXRUN_LOG_WARNING)
		c->warnings++;
	snprintf(c->last, sizeof c->last, "%s", message ? message : "(null)");
}

/* ---- models used by several tests ---- */

/* x [1,4,2,3] float -> DepthToSpace(blocksize 2) -> y [1,1,4,6], opset `opset`. */
static Onnx__ModelProto *d2s_model(int64_t ir, const char *domain, int64_t opset)
{
	Onnx__ModelProto *m = mb_model(ir);
	Onnx__NodeProto *n;
	mb_opset(m, domain, opset);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, "1,1,4,6");
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	return m;
}

/* Runs a model with one float input x [1,4,2,3] and checks y against the DCR reference. */
static void run_d2s_and_check(struct onnxrun_env *env, const struct onnxrun_model *model)
{
	const uint64_t seed = 11;
	struct th_rng rng;
	float x[24], want[24];
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *tx;
	const struct onnxrun_tensor *y = NULL;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 24);
	th_ref_depth_to_space(x, want, sizeof(float), 1, 4, 2, 3, 2, false);
	tx = th_tensor_f32(env, D4(1, 4, 2, 3), x);
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, tx), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	th_assert_shape(y, ONNXRUN_DTYPE_FLOAT, D4(1, 1, 4, 6));
	th_assert_close(y, want, 24, seed, "DepthToSpace");
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
}

static void check_d2s_model_info(const struct onnxrun_model *model)
{
	struct onnxrun_value_info vi;
	struct onnxrun_node_info ni;
	const char *domain = NULL;
	int64_t version = 0;
	const int64_t xd[4] = { 1, 4, 2, 3 };

	assert_int_equal(onnxrun_model_ir_version(model), 8);
	assert_int_equal(onnxrun_model_opset_count(model), 1);
	assert_int_equal(onnxrun_model_opset(model, 0, &domain, &version), ONNXRUN_OK);
	assert_string_equal(domain, "");
	assert_int_equal(version, 13);

	assert_int_equal(onnxrun_model_input_count(model), 1);
	assert_int_equal(onnxrun_model_input_info(model, 0, &vi), ONNXRUN_OK);
	assert_string_equal(vi.name, "x");
	assert_int_equal(vi.dtype, ONNXRUN_DTYPE_FLOAT);
	assert_int_equal(vi.rank, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(vi.dims[i].value, xd[i]);
	}

	assert_int_equal(onnxrun_model_output_count(model), 1);
	assert_int_equal(onnxrun_model_output_info(model, 0, &vi), ONNXRUN_OK);
	assert_string_equal(vi.name, "y");
	assert_int_equal(vi.dtype, ONNXRUN_DTYPE_FLOAT);
	assert_int_equal(vi.rank, 4);
	assert_int_equal(vi.dims[3].value, 6);

	assert_int_equal(onnxrun_model_node_count(model), 1);
	assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
	assert_string_equal(ni.name, "d2s");
	assert_string_equal(ni.op_type, "DepthToSpace");
	assert_string_equal(ni.domain, "");
	assert_int_equal(ni.since_version, 13);
	assert_int_equal(ni.input_count, 1);
	assert_string_equal(ni.inputs[0], "x");
	assert_int_equal(ni.output_count, 1);
	assert_string_equal(ni.outputs[0], "y");
}

/* ---- buffer and file ---- */

static void test_load_buffer(void **state)
{
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model = th_load_ok(env, d2s_model(8, "", 13));
	(void)state;
	check_d2s_model_info(model);
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);
	assert_int_equal(a.live, 1); /* only the env itself */
	onnxrun_env_free(env);
	assert_int_equal(a.live, 0);
}

static void test_load_file(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	const char *path = ONNXRUN_TEST_TMP "/loader_d2s.onnx";
	size_t size;
	uint8_t *buf = mb_finish(d2s_model(8, "", 13), &size);
	(void)state;
	assert_int_equal(mb_write_file(path, buf, size), 0);
	free(buf);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, path, &model), ONNXRUN_OK, onnxrun_env_error(env));
	check_d2s_model_info(model);
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_load_file_missing(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	const char *path = ONNXRUN_TEST_TMP "/does_not_exist.onnx";
	(void)state;
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, path, &model), ONNXRUN_ERROR_IO, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "does_not_exist.onnx");
	onnxrun_env_free(env);
}

/* ---- initializers of every dtype ---- */

struct dtype_case {
	int dtype;
	size_t elem; /* bytes per element in onnxrun's layout */
	const void *bytes; /* 6 elements, little-endian */
};

static const float f32_vals[6] = { 1.5f, -2.25f, 0.0f, 3.0e38f, -0.0f, 1.0e-40f };
static const uint8_t u8_vals[6] = { 0, 1, 127, 128, 200, 255 };
static const int8_t i8_vals[6] = { -128, -1, 0, 1, 100, 127 };
static const uint16_t u16_vals[6] = { 0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff };
static const int16_t i16_vals[6] = { -32768, -1, 0, 1, 1234, 32767 };
static const int32_t i32_vals[6] = { INT32_MIN, -1, 0, 1, 123456789, INT32_MAX };
static const int64_t i64_vals[6] = { INT64_MIN, -1, 0, 1, (int64_t)1 << 40, INT64_MAX };
static const uint8_t bool_vals[6] = { 0, 1, 1, 0, 0, 1 };
static const uint16_t f16_vals[6] = { 0x3C00, 0xC000, 0x0000, 0x7BFF, 0x0001, 0x8000 };
static const double f64_vals[6] = { 1.5, -2.25, 0.0, 1e300, -1e-300, 4.9e-324 };
static const uint32_t u32_vals[6] = { 0, 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu };
static const uint64_t u64_vals[6] = { 0, 1, (uint64_t)1 << 63, UINT64_MAX, 0x123456789abcdefull, 42 };
static const float c64_vals[12] = { 1, 2, -3, 4.5f, 0, -0.0f, 7, 8, 9, 10, -11, 12 };
static const double c128_vals[12] = { 1, 2, -3, 4.5, 0, -0.0, 7, 8, 9, 1e200, -11, 12 };
static const uint16_t bf16_vals[6] = { 0x3F80, 0xC000, 0x0000, 0x7F7F, 0x0001, 0x8000 };
static const char *const str_vals[6] = { "", "a", "hello", "with\0zero", "\xc3\xa9t\xc3\xa9", "last" };
static const size_t str_lens[6] = { 0, 1, 5, 9, 5, 4 };

static const struct dtype_case dtype_cases[] = {
	{ MB_FLOAT, 4, f32_vals },      { MB_UINT8, 1, u8_vals },      { MB_INT8, 1, i8_vals },
	{ MB_UINT16, 2, u16_vals },     { MB_INT16, 2, i16_vals },     { MB_INT32, 4, i32_vals },
	{ MB_INT64, 8, i64_vals },      { MB_STRING, 0, str_vals },    { MB_BOOL, 1, bool_vals },
	{ MB_FLOAT16, 2, f16_vals },    { MB_DOUBLE, 8, f64_vals },    { MB_UINT32, 4, u32_vals },
	{ MB_UINT64, 8, u64_vals },     { MB_COMPLEX64, 8, c64_vals }, { MB_COMPLEX128, 16, c128_vals },
	{ MB_BFLOAT16, 2, bf16_vals },
};

/* Stores the case's 6 values in the typed field the ONNX spec assigns to the dtype. */
static void set_typed_field(Onnx__TensorProto *t, const struct dtype_case *c)
{
	int32_t i32[6];
	uint64_t u64[6];
	switch (c->dtype) {
	case MB_FLOAT:
		mb_tensor_float_data(t, 6, f32_vals);
		return;
	case MB_COMPLEX64:
		mb_tensor_float_data(t, 12, c64_vals);
		return;
	case MB_DOUBLE:
		mb_tensor_double_data(t, 6, f64_vals);
		return;
	case MB_COMPLEX128:
		mb_tensor_double_data(t, 12, c128_vals);
		return;
	case MB_INT64:
		mb_tensor_int64_data(t, 6, i64_vals);
		return;
	case MB_UINT32:
		for (int i = 0; i < 6; i++)
			u64[i] = u32_vals[i];
		mb_tensor_uint64_data(t, 6, u64);
		return;
	case MB_UINT64:
		mb_tensor_uint64_data(t, 6, u64_vals);
		return;
	case MB_STRING:
		for (int i = 0; i < 6; i++)
			mb_tensor_string(t, str_vals[i], str_lens[i]);
		return;
	default:
		break;
	}
	/* int32_data: int32, int16, int8, uint16, uint8, bool, float16 and bfloat16 (bits) */
	for (int i = 0; i < 6; i++) {
		switch (c->dtype) {
		case MB_UINT8: i32[i] = u8_vals[i]; break;
		case MB_INT8: i32[i] = i8_vals[i]; break;
		case MB_UINT16: i32[i] = u16_vals[i]; break;
		case MB_INT16: i32[i] = i16_vals[i]; break;
		case MB_INT32: i32[i] = i32_vals[i]; break;
		case MB_BOOL: i32[i] = bool_vals[i]; break;
		case MB_FLOAT16: i32[i] = f16_vals[i]; break;
		case MB_BFLOAT16: i32[i] = bf16_vals[i]; break;
		default: fail_msg("no typed field for dtype %d", c->dtype);
		}
	}
	mb_tensor_int32_data(t, 6, i32);
}

/* A model whose only node is DepthToSpace(blocksize 1) on initializer "c" [1,1,2,3]; with
 * as_input the initializer is also a graph input (a default). */
static Onnx__ModelProto *init_model(const struct dtype_case *c, bool raw, bool as_input)
{
	Onnx__ModelProto *m = mb_model(as_input ? 3 : 8);
	Onnx__TensorProto *t = mb_tensor("c", c->dtype, D4(1, 1, 2, 3));
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	if (as_input)
		mb_input(m, "c", c->dtype, "1,1,2,3");
	mb_output(m, "y", c->dtype, "1,1,2,3");
	if (raw)
		mb_tensor_raw_values(t, c->bytes, 6 * c->elem);
	else
		set_typed_field(t, c);
	mb_add_initializer(m, t);
	n = mb_node(m, "copy", "DepthToSpace", "", "c", "y");
	mb_attr_int(n, "blocksize", 1);
	return m;
}

static void check_init_output(const struct onnxrun_tensor *y, const struct dtype_case *c, const char *what)
{
	th_assert_shape(y, (enum onnxrun_dtype)c->dtype, D4(1, 1, 2, 3));
	if (c->dtype == MB_STRING) {
		const struct onnxrun_string *s = onnxrun_tensor_data(y);
		for (int i = 0; i < 6; i++) {
			if (s[i].size != str_lens[i] || (str_lens[i] && memcmp(s[i].data, str_vals[i], str_lens[i])))
				fail_msg("%s: string element %d differs (size %zu, expected %zu)", what, i, s[i].size,
				         str_lens[i]);
			assert_int_equal(s[i].data ? s[i].data[s[i].size] : 0, 0);
		}
		return;
	}
	assert_int_equal(onnxrun_tensor_nbytes(y), 6 * c->elem);
	if (memcmp(onnxrun_tensor_data(y), c->bytes, 6 * c->elem)) {
		const unsigned char *g = onnxrun_tensor_data(y), *w = c->bytes;
		for (size_t i = 0; i < 6 * c->elem; i++)
			if (g[i] != w[i])
				fail_msg("%s: dtype %s byte %zu is 0x%02x, expected 0x%02x", what,
				         onnxrun_dtype_name((enum onnxrun_dtype)c->dtype), i, g[i], w[i]);
	}
}

static void check_dtype_case(const struct dtype_case *c, bool raw, bool as_input)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y = NULL;
	char what[128];
	enum onnxrun_status st;
	snprintf(what, sizeof what, "dtype %s, %s, %s", onnxrun_dtype_name((enum onnxrun_dtype)c->dtype),
	         raw ? "raw_data" : "typed field", as_input ? "initializer is a graph input" : "constant");
	st = th_load(env, init_model(c, raw, as_input), &model);
	if (st != ONNXRUN_OK)
		fail_msg("%s: load failed: %s: %s", what, onnxrun_status_str(st), onnxrun_env_error(env));
	assert_int_equal(onnxrun_model_input_count(model), 0);
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	st = onnxrun_session_run(s);
	if (st != ONNXRUN_OK)
		fail_msg("%s: run failed: %s: %s", what, onnxrun_status_str(st), onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	check_init_output(y, c, what);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_initializer_dtypes_raw(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof dtype_cases / sizeof dtype_cases[0]; i++) {
		if (dtype_cases[i].dtype == MB_STRING)
			continue; /* strings have no raw_data form */
		check_dtype_case(&dtype_cases[i], true, false);
		check_dtype_case(&dtype_cases[i], true, true);
	}
}

static void test_initializer_dtypes_typed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof dtype_cases / sizeof dtype_cases[0]; i++) {
		check_dtype_case(&dtype_cases[i], false, false);
		check_dtype_case(&dtype_cases[i], false, true);
	}
}

/* raw_data whose size does not match the dims is a malformed initializer. */
static void test_initializer_size_mismatch(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t = mb_tensor("c", MB_FLOAT, D4(1, 1, 2, 3));
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_tensor_raw(t, f32_vals, 5 * sizeof(float));
	mb_add_initializer(m, t);
	n = mb_node(m, "copy", "DepthToSpace", "", "c", "y");
	mb_attr_int(n, "blocksize", 1);
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "'c'");
	onnxrun_env_free(env);
}

/* ---- initializers that are graph inputs: inputs with defaults ---- */

/* inputs [w (default), x]; ConvTranspose(x, w) 1x1 with C=2, M=3 on [1,2,2,2]. */
static void test_defaulted_input(void **state)
{
	const uint64_t seed = 5;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_value_info vi;
	struct onnxrun_tensor *tx, *tw2;
	const struct onnxrun_tensor *y = NULL;
	float x[8], w[6], w2[6], want[12];
	struct th_ct2d p = { 1, 2, 2, 2, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2, 2 };
	Onnx__ModelProto *m = mb_model(3);
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 8);
	th_fill(&rng, w, 6);
	th_fill(&rng, w2, 6);
	mb_opset(m, "", 11);
	mb_input(m, "w", MB_FLOAT, "2,3,1,1");
	mb_input(m, "x", MB_FLOAT, "1,2,2,2");
	mb_output(m, "y", MB_FLOAT, "1,3,2,2");
	mb_initializer_f32(m, "w", D4(2, 3, 1, 1), w);
	mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	model = th_load_ok(env, m);

	assert_int_equal(onnxrun_model_input_count(model), 1);
	assert_int_equal(onnxrun_model_input_info(model, 0, &vi), ONNXRUN_OK);
	assert_string_equal(vi.name, "x");
	TH_ASSERT_STATUS(onnxrun_model_input_info(model, 1, &vi), ONNXRUN_ERROR_INVALID_ARGUMENT, "");

	tx = th_tensor_f32(env, D4(1, 2, 2, 2), x);
	tw2 = th_tensor_f32(env, D4(2, 3, 1, 1), w2);
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, tx), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	th_ref_conv_transpose2d(&p, x, w, NULL, want);
	th_assert_close(y, want, 12, seed, "with the default weights");

	/* override the default by name */
	TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "w", tw2), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	th_ref_conv_transpose2d(&p, x, w2, NULL, want);
	th_assert_close(y, want, 12, seed, "with overridden weights");

	/* the required input can be bound by name too */
	TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "x", tx), ONNXRUN_OK, onnxrun_session_error(s));
	/* an unknown name is rejected */
	assert_int_not_equal(onnxrun_session_set_input_by_name(s, "nope", tx), ONNXRUN_OK);
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "nope");

	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_tensor_free(tw2);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* A pure initializer (not a graph input) is a constant: it cannot be overridden. */
static void test_constant_not_overridable(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *t;
	(void)state;
	model = th_load_ok(env, init_model(&dtype_cases[0], true, false));
	t = th_tensor_f32(env, D4(1, 1, 2, 3), NULL);
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	assert_int_not_equal(onnxrun_session_set_input_by_name(s, "c", t), ONNXRUN_OK);
	onnxrun_session_free(s);
	onnxrun_tensor_free(t);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* An override of a default is checked against the declared type like any input. */
/* A default whose shape contradicts the input's declaration is refused, naming both. */
static void test_default_shape_mismatch(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	const float w[6] = { 1, 2, 3, 4, 5, 6 };
	Onnx__ModelProto *m = mb_model(3);
	(void)state;
	mb_opset(m, "", 11);
	mb_input(m, "w", MB_FLOAT, "2,3,1,2");
	mb_input(m, "x", MB_FLOAT, "1,2,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(2, 3, 1, 1), w);
	mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	assert_int_equal(th_load(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL);
	assert_null(model);
	assert_string_equal(onnxrun_env_error(env), "graph input 'w' is declared with shape [2,3,1,2] but its "
	                                            "initializer has shape [2,3,1,1]");
	onnxrun_env_free(env);
}

static void test_default_override_checked(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *bad_shape, *bad_type = NULL;
	const float w[6] = { 1, 2, 3, 4, 5, 6 };
	Onnx__ModelProto *m = mb_model(3);
	(void)state;
	mb_opset(m, "", 11);
	mb_input(m, "w", MB_FLOAT, "2,3,1,1");
	mb_input(m, "x", MB_FLOAT, "1,2,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(2, 3, 1, 1), w);
	mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	model = th_load_ok(env, m);
	bad_shape = th_tensor_f32(env, D4(2, 4, 1, 1), NULL);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_INT64, D4(2, 3, 1, 1), &bad_type), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "w", bad_shape), ONNXRUN_ERROR_INVALID_INPUT,
	                 onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'w'");
	TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "w", bad_type), ONNXRUN_ERROR_INVALID_INPUT,
	                 onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'w'");
	onnxrun_session_free(s);
	onnxrun_tensor_free(bad_shape);
	onnxrun_tensor_free(bad_type);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Initializers that contradict their graph-input declaration, or share a name. */
static Onnx__ModelProto *conflict_model(int ir, int declared_dtype, const char *declared_shape, int n_inits)
{
	static const float w[6] = { 1, 2, 3, 4, 5, 6 };
	Onnx__ModelProto *m = mb_model(ir);
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	if (declared_dtype != MB_UNDEFINED)
		mb_input(m, "c", declared_dtype, declared_shape);
	mb_output(m, "y", MB_UNDEFINED, NULL);
	for (int i = 0; i < n_inits; i++)
		mb_initializer_f32(m, "c", D4(1, 1, 2, 3), w);
	n = mb_node(m, "copy", "DepthToSpace", "", "c", "y");
	mb_attr_int(n, "blocksize", 1);
	return m;
}

static void test_initializer_conflicts(void **state)
{
	static const struct {
		const char *what;
		int ir, dtype;
		const char *shape;
		int n_inits;
	} cases[] = {
		{ "declared [1,1,3,2], initializer [1,1,2,3]", 3, MB_FLOAT, "1,1,3,2", 1 },
		{ "declared rank 3, initializer rank 4", 3, MB_FLOAT, "1,2,3", 1 },
		{ "declared double, initializer float", 3, MB_DOUBLE, "1,1,2,3", 1 },
		{ "two initializers named 'c'", 8, MB_UNDEFINED, NULL, 2 },
	};
	struct onnxrun_env *env = th_env();
	char failures[2048] = "";
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_model *model = NULL;
		Onnx__ModelProto *m = conflict_model(cases[i].ir, cases[i].dtype, cases[i].shape, cases[i].n_inits);
		enum onnxrun_status st = th_load(env, m, &model);
		if (st != ONNXRUN_ERROR_INVALID_MODEL || !th_contains(onnxrun_env_error(env), "'c'")) {
			size_t len = strlen(failures);
			snprintf(failures + len, sizeof failures - len, "[%s: %s \"%s\"] ", cases[i].what,
			         onnxrun_status_str(st), onnxrun_env_error(env));
		}
		onnxrun_model_free(model);
	}
	if (failures[0]) {
		onnxrun_env_free(env);
		fail_msg("expected invalid model naming 'c': %s", failures);
	}
	/* the consistent declaration loads */
	{
		struct onnxrun_model *model = th_load_ok(env, conflict_model(3, MB_FLOAT, "1,1,2,3", 1));
		onnxrun_model_free(model);
	}
	onnxrun_env_free(env);
}

/* ---- opset imports and IR versions ---- */

static void test_opset_domain_aliases(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_node_info ni;
	const char *domain = NULL;
	int64_t version = 0;
	Onnx__ModelProto *m;
	(void)state;

	/* opset imported as "ai.onnx", node in "" */
	model = th_load_ok(env, d2s_model(8, "ai.onnx", 13));
	assert_int_equal(onnxrun_model_opset(model, 0, &domain, &version), ONNXRUN_OK);
	assert_string_equal(domain, "");
	assert_int_equal(version, 13);
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);

	/* opset imported as "", node in "ai.onnx" */
	m = d2s_model(8, "", 13);
	free(m->graph->node[0]->domain);
	m->graph->node[0]->domain = mb__strdup("ai.onnx");
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
	assert_string_equal(ni.domain, "");
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);

	/* an imported domain no node uses is harmless */
	m = d2s_model(8, "", 13);
	mb_opset(m, "com.unused", 3);
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_opset_count(model), 2);
	onnxrun_model_free(model);

	/* opset import with the domain field absent */
	model = th_load_ok(env, d2s_model(8, NULL, 13));
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_since_version_resolution(void **state)
{
	static const struct {
		int64_t opset;
		int64_t since;
	} cases[] = { { 1, 1 }, { 10, 1 }, { 11, 11 }, { 12, 11 }, { 13, 13 }, { 27, 13 }, { 28, 28 } };
	struct onnxrun_env *env = th_env();
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_model *model = th_load_ok(env, d2s_model(8, "", cases[i].opset));
		struct onnxrun_node_info ni;
		assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
		if (ni.since_version != cases[i].since)
			fail_msg("opset %lld: DepthToSpace since_version %lld, expected %lld",
			         (long long)cases[i].opset, (long long)ni.since_version, (long long)cases[i].since);
		onnxrun_model_free(model);
	}
	onnxrun_env_free(env);
}

static void test_ir_version_too_old(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	enum onnxrun_status st;
	(void)state;
	st = th_load(env, d2s_model(2, "", 13), &model);
	assert_null(model);
	if (st != ONNXRUN_ERROR_INVALID_MODEL && st != ONNXRUN_ERROR_UNSUPPORTED)
		fail_msg("IR version 2: status %s (%s)", onnxrun_status_str(st), onnxrun_env_error(env));
	TH_ASSERT_MSG_IHAS(onnxrun_env_error(env), "ir");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "2");
	/* an absent ir_version is no better */
	{
		Onnx__ModelProto *m = d2s_model(8, "", 13);
		m->has_ir_version = 0;
		m->ir_version = 0;
		assert_int_not_equal(th_load(env, m, &model), ONNXRUN_OK);
		assert_null(model);
	}
	onnxrun_env_free(env);
}

static void test_ir_version_newer_warns(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct log_capture cap = { 0 };
	(void)state;
	onnxrun_env_set_log(env, capture_log, &cap);
	/* a known IR version loads silently */
	model = th_load_ok(env, d2s_model(8, "", 13));
	assert_int_equal(cap.warnings, 0);
	onnxrun_model_free(model);
	/* a much newer one loads with a warning */
	model = th_load_ok(env, d2s_model(1000, "", 13));
	assert_int_equal(onnxrun_model_ir_version(model), 1000);
	if (cap.warnings < 1)
		fail_msg("no warning for IR version 1000 (%d log calls)", cap.total);
	TH_ASSERT_MSG_HAS(cap.last, "1000");
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);
	/* removing the callback is harmless */
	onnxrun_env_set_log(env, NULL, NULL);
	model = th_load_ok(env, d2s_model(1000, "", 13));
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* docs/design.md, 'Opsets and IR versions': opsets newer than 28 are refused by default
 * (test_metadata.c); allowed, they warn and the newest version is used. */
static void test_opset_newer_warns(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_node_info ni;
	struct log_capture cap = { 0 };
	(void)state;
	onnxrun_env_set_log(env, capture_log, &cap);
	assert_int_equal(onnxrun_env_set_allow_newer_opset(env, 1), ONNXRUN_OK);
	model = th_load_ok(env, d2s_model(8, "", 99));
	if (cap.warnings < 1)
		fail_msg("no warning for opset 99 (%d log calls)", cap.total);
	assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
	assert_int_equal(ni.since_version, 28);
	run_d2s_and_check(env, model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_missing_default_opset(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = d2s_model(8, "com.other", 1);
	(void)state;
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_IHAS(onnxrun_env_error(env), "opset");

	/* no opset import at all */
	m = d2s_model(8, "", 13);
	onnx__operator_set_id_proto__free_unpacked(m->opset_import[0], NULL);
	free(m->opset_import);
	m->opset_import = NULL;
	m->n_opset_import = 0;
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	assert_null(model);
	onnxrun_env_free(env);
}

/* The same domain imported twice is malformed. */
static void test_duplicate_opset(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = d2s_model(8, "", 13);
	(void)state;
	mb_opset(m, "ai.onnx", 11);
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	onnxrun_env_free(env);
}

/* ---- symbolic dims ---- */

static void test_dim_param_info(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_value_info vi;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "batch,8,?,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_input_info(model, 0, &vi), ONNXRUN_OK);
	assert_int_equal(vi.rank, 4);
	assert_int_equal(vi.dims[0].value, -1);
	assert_non_null(vi.dims[0].param);
	assert_string_equal(vi.dims[0].param, "batch");
	assert_int_equal(vi.dims[1].value, 8);
	assert_int_equal(vi.dims[2].value, -1);
	assert_null(vi.dims[2].param);
	assert_int_equal(vi.dims[3].value, 3);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- external data ---- */

#define EXT_DIR ONNXRUN_TEST_TMP "/ext"

static void make_dir(const char *path)
{
	assert_int_equal(th_mkdirs(path), 0);
}

/* Model: initializer "c" float [1,1,2,3] stored externally at location (offset, length),
 * DepthToSpace(blocksize 1) -> y. */
static uint8_t *ext_model(const char *location, int64_t offset, int64_t length, size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t = mb_tensor("c", MB_FLOAT, D4(1, 1, 2, 3));
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, "1,1,2,3");
	mb_tensor_external(t, location, offset, length);
	mb_add_initializer(m, t);
	n = mb_node(m, "copy", "DepthToSpace", "", "c", "y");
	mb_attr_int(n, "blocksize", 1);
	return mb_finish(m, size);
}

static const float ext_vals[6] = { 0.5f, -1.0f, 2.0f, -4.0f, 8.25f, 1e-3f };

/* Writes EXT_DIR/w.bin: 100 bytes of 0xAB, the 24 data bytes, 8 more bytes of 0xAB; and
 * EXT_DIR/whole.bin holding exactly the data. */
static void write_weights(void)
{
	unsigned char buf[132], le[sizeof ext_vals];
	make_dir(EXT_DIR "/sub");
	memcpy(le, ext_vals, sizeof ext_vals);
	mb_to_le(le, sizeof le, MB_FLOAT); /* external data is little-endian */
	memset(buf, 0xAB, sizeof buf);
	memcpy(buf + 100, le, sizeof le);
	assert_int_equal(mb_write_file(EXT_DIR "/w.bin", buf, sizeof buf), 0);
	assert_int_equal(mb_write_file(EXT_DIR "/whole.bin", le, sizeof le), 0);
	assert_int_equal(mb_write_file(EXT_DIR "/sub/whole.bin", le, sizeof le), 0);
}

static void run_ext_and_check(struct onnxrun_env *env, const struct onnxrun_model *model)
{
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y = NULL;
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	th_assert_shape(y, ONNXRUN_DTYPE_FLOAT, D4(1, 1, 2, 3));
	assert_memory_equal(onnxrun_tensor_data(y), ext_vals, sizeof ext_vals);
	onnxrun_session_free(s);
}

static void test_external_data_file(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	size_t size;
	uint8_t *buf;
	(void)state;
	write_weights();

	/* offset and length */
	buf = ext_model("w.bin", 100, 24, &size);
	assert_int_equal(mb_write_file(EXT_DIR "/model.onnx", buf, size), 0);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, EXT_DIR "/model.onnx", &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	run_ext_and_check(env, model);
	onnxrun_model_free(model);
	model = NULL;
	/* the same bytes from a buffer with base_dir */
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, EXT_DIR, &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	run_ext_and_check(env, model);
	onnxrun_model_free(model);
	model = NULL;
	free(buf);

	/* no offset, no length: the whole file */
	buf = ext_model("whole.bin", -1, -1, &size);
	assert_int_equal(mb_write_file(EXT_DIR "/model2.onnx", buf, size), 0);
	free(buf);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, EXT_DIR "/model2.onnx", &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	run_ext_and_check(env, model);
	onnxrun_model_free(model);
	model = NULL;

	/* a subfolder of the model's folder is fine */
	buf = ext_model("sub/whole.bin", 0, 24, &size);
	assert_int_equal(mb_write_file(EXT_DIR "/model3.onnx", buf, size), 0);
	free(buf);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, EXT_DIR "/model3.onnx", &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	run_ext_and_check(env, model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Loads the model bytes from EXT_DIR/<file> and expects a failure with `want` (or any
 * failure when want is ONNXRUN_OK) whose message mentions `needle`. */
static void expect_ext_failure(struct onnxrun_env *env, const char *file, uint8_t *buf, size_t size,
                               enum onnxrun_status want, const char *needle)
{
	char path[512];
	struct onnxrun_model *model = NULL;
	enum onnxrun_status st;
	snprintf(path, sizeof path, "%s/%s", EXT_DIR, file);
	assert_int_equal(mb_write_file(path, buf, size), 0);
	free(buf);
	st = onnxrun_model_load_file(env, path, &model);
	if (st == ONNXRUN_OK) {
		onnxrun_model_free(model);
		fail_msg("%s loaded, expected an error mentioning '%s'", file, needle);
	}
	if (want != ONNXRUN_OK)
		TH_ASSERT_STATUS(st, want, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), needle);
}

static void test_external_data_rejected(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	size_t size;
	uint8_t *buf;
	(void)state;
	write_weights();

	/* from a buffer without base_dir */
	buf = ext_model("w.bin", 100, 24, &size);
	assert_int_not_equal(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_OK);
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "'c'");
	TH_ASSERT_MSG_IHAS(onnxrun_env_error(env), "external");
	free(buf);

	/* an absolute path, even to a file that exists */
	buf = ext_model(EXT_DIR "/w.bin", 100, 24, &size);
	expect_ext_failure(env, "abs.onnx", buf, size, ONNXRUN_ERROR_INVALID_MODEL, "'c'");

	/* escaping the folder with "..", even to a file that exists */
	buf = ext_model("../w.bin", 100, 24, &size);
	expect_ext_failure(env, "sub/dotdot.onnx", buf, size, ONNXRUN_ERROR_INVALID_MODEL, "'c'");
	buf = ext_model("sub/../../ext/w.bin", 100, 24, &size);
	expect_ext_failure(env, "dotdot2.onnx", buf, size, ONNXRUN_ERROR_INVALID_MODEL, "'c'");

	/* length that does not match the dims */
	buf = ext_model("w.bin", 100, 20, &size);
	expect_ext_failure(env, "badlen.onnx", buf, size, ONNXRUN_ERROR_INVALID_MODEL, "'c'");
	/* offset + length past the end of the file */
	buf = ext_model("w.bin", 120, 24, &size);
	expect_ext_failure(env, "badoff.onnx", buf, size, ONNXRUN_OK, "'c'");
	/* a file that does not exist */
	buf = ext_model("missing.bin", 0, 24, &size);
	expect_ext_failure(env, "missing.onnx", buf, size, ONNXRUN_OK, "missing.bin");
	onnxrun_env_free(env);
}

/* ---- zero-copy loading: raw_data moved, external data mapped ---- */

#define BIG_H 256
#define BIG_W 256 /* 256 KiB of float: above the 64 KiB mapping threshold */

static float big_vals[BIG_H * BIG_W];

static void fill_big(void)
{
	for (int i = 0; i < BIG_H * BIG_W; i++)
		big_vals[i] = (float)((i * 7919) % 1000) - 500.25f;
}

/* DepthToSpace(blocksize 1) of initializer "c" float [1,1,BIG_H,BIG_W]: raw_data when
 * location is NULL, else external at (location, offset). */
static uint8_t *big_model(const char *location, int64_t offset, size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t = mb_tensor("c", MB_FLOAT, D4(1, 1, BIG_H, BIG_W));
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, "1,1,256,256");
	if (location)
		mb_tensor_external(t, location, offset, (int64_t)sizeof big_vals);
	else
		mb_tensor_raw_values(t, big_vals, sizeof big_vals);
	mb_add_initializer(m, t);
	n = mb_node(m, "copy", "DepthToSpace", "", "c", "y");
	mb_attr_int(n, "blocksize", 1);
	return mb_finish(m, size);
}

static void run_big_and_check(const struct onnxrun_model *model, const char *what)
{
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y = NULL;
	assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	if (memcmp(onnxrun_tensor_data(y), big_vals, sizeof big_vals) != 0)
		fail_msg("%s: the output differs from the initializer's bytes", what);
	onnxrun_session_free(s);
}

/* How many lines of /proc/self/maps name a path ending in `suffix`. */
#ifdef _WIN32
/* The views of files whose name ends in suffix ('/' matching '\\') in this process's
 * address space. */
static int mapped_count(const char *suffix)
{
	char want[64], name[1024];
	size_t ls = strlen(suffix);
	MEMORY_BASIC_INFORMATION mi;
	int n = 0;
	assert_true(ls < sizeof want);
	for (size_t i = 0; i <= ls; i++)
		want[i] = suffix[i] == '/' ? '\\' : suffix[i];
	for (char *p = NULL; VirtualQuery(p, &mi, sizeof mi) == sizeof mi; p = (char *)mi.BaseAddress + mi.RegionSize) {
		DWORD len;
		if (mi.Type != MEM_MAPPED || mi.AllocationBase != mi.BaseAddress)
			continue;
		len = K32GetMappedFileNameA(GetCurrentProcess(), p, name, sizeof name);
		if (len >= ls && len < sizeof name && strcmp(name + len - ls, want) == 0)
			n++;
	}
	return n;
}
#else
static int mapped_count(const char *suffix)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;
	size_t ls = strlen(suffix);
	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		size_t len = strcspn(line, "\n");
		line[len] = '\0';
		if (len >= ls && strcmp(line + len - ls, suffix) == 0)
			n++;
	}
	fclose(f);
	return n;
}
#endif

/* A raw_data initializer is moved out of the parsed message, not copied: loading it from a
 * buffer never holds two copies of its bytes. bool bytes are still normalized to 0/1. */
static void test_raw_initializer_moved(void **state)
{
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model = NULL;
	size_t size;
	uint8_t *buf;
	(void)state;
	fill_big();
	buf = big_model(NULL, 0, &size);
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	if (a.peak_bytes >= sizeof big_vals + sizeof big_vals / 2)
		fail_msg("loading a %zu-byte raw initializer peaked at %zu allocated bytes: copied, not moved",
		         sizeof big_vals, a.peak_bytes);
	assert_true(a.live_bytes >= sizeof big_vals); /* the model holds the bytes */
	run_big_and_check(model, "raw_data moved");
	onnxrun_model_free(model);
	free(buf);
	assert_int_equal(a.live, 1); /* only the env is left */
	onnxrun_env_free(env);

	/* bool raw bytes other than 0/1 read as true, in a moved block too */
	{
		static const uint8_t raw[6] = { 0, 2, 255, 1, 0, 7 }, want[6] = { 0, 1, 1, 1, 0, 1 };
		Onnx__ModelProto *m = mb_model(8);
		Onnx__TensorProto *t = mb_tensor("c", MB_BOOL, D4(1, 1, 2, 3));
		struct onnxrun_session *s = NULL;
		const struct onnxrun_tensor *y = NULL;
		env = th_env();
		mb_opset(m, "", 13);
		mb_output(m, "y", MB_BOOL, "1,1,2,3");
		mb_tensor_raw(t, raw, sizeof raw);
		mb_add_initializer(m, t);
		mb_attr_int(mb_node(m, "copy", "DepthToSpace", "", "c", "y"), "blocksize", 1);
		model = th_load_ok(env, m);
		assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
		TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
		TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
		assert_memory_equal(onnxrun_tensor_data(y), want, sizeof want);
		onnxrun_session_free(s);
		onnxrun_model_free(model);
		onnxrun_env_free(env);
	}
}

/* Loads EXT_DIR/<model> with mapping on or off and checks the data, whether big.bin is
 * mapped while the model lives, and that nothing stays mapped or allocated after. */
static void check_big_ext(const char *model_file, bool mmap_on, bool want_mapped)
{
	char path[512];
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model = NULL;
	snprintf(path, sizeof path, "%s/%s", EXT_DIR, model_file);
	assert_int_equal(onnxrun_env_set_mmap(env, mmap_on), ONNXRUN_OK);
	assert_int_equal(mapped_count("/big.bin"), 0);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, path, &model), ONNXRUN_OK, onnxrun_env_error(env));
	if ((mapped_count("/big.bin") > 0) != want_mapped)
		fail_msg("%s (mmap %s): external data is %smapped", model_file, mmap_on ? "on" : "off",
		         want_mapped ? "not " : "");
	/* mapped bytes are not allocated; copied ones are */
	if (want_mapped ? a.live_bytes >= sizeof big_vals : a.live_bytes < sizeof big_vals)
		fail_msg("%s: %zu bytes allocated after loading %zu bytes of external data %s", model_file,
		         a.live_bytes, sizeof big_vals, want_mapped ? "mapped" : "copied");
	run_big_and_check(model, model_file);
	onnxrun_model_free(model);
	assert_int_equal(mapped_count("/big.bin"), 0);
	assert_int_equal(a.live, 1);
	onnxrun_env_free(env);
}

static void test_external_data_mapped(void **state)
{
#if defined(__EMSCRIPTEN__)
	/* emscripten's mmap copies the file into memory: nothing stays mapped to check */
	(void)state;
	skip();
#endif
	static unsigned char file[4096 + 64 + sizeof big_vals], le[sizeof big_vals];
	size_t size;
	uint8_t *buf;
	(void)state;
	fill_big();
	memcpy(le, big_vals, sizeof le);
	mb_to_le(le, sizeof le, MB_FLOAT); /* external data is little-endian */
	make_dir(EXT_DIR);
	memset(file, 0x5A, sizeof file);
	memcpy(file + 4096 + 64, le, sizeof le); /* at 4160: 64-aligned, mid-page */
	assert_int_equal(mb_write_file(EXT_DIR "/big.bin", file, sizeof file), 0);
	buf = big_model("big.bin", 4096 + 64, &size);
	assert_int_equal(mb_write_file(EXT_DIR "/big_a.onnx", buf, size), 0);
	free(buf);
	memcpy(file + 4, le, sizeof le); /* at 4: not 64-aligned: copied */
	assert_int_equal(mb_write_file(EXT_DIR "/big.bin", file, sizeof file), 0);
	buf = big_model("big.bin", 4, &size);
	assert_int_equal(mb_write_file(EXT_DIR "/big_u.onnx", buf, size), 0);
	free(buf);

	check_big_ext("big_u.onnx", true, false);
	check_big_ext("big_u.onnx", false, false);
	/* rewrite the aligned copy (the unaligned write above overlapped it) */
	memcpy(file + 4096 + 64, le, sizeof le);
	assert_int_equal(mb_write_file(EXT_DIR "/big.bin", file, sizeof file), 0);
	/* a big-endian host swaps float bytes into its order: a copy, never a mapping */
	check_big_ext("big_a.onnx", true, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	check_big_ext("big_a.onnx", false, false);
	assert_int_equal(onnxrun_env_set_mmap(NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
}

/* ---- constructs onnxrun does not implement ---- */

static void test_subgraph_attribute_unsupported(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = d2s_model(8, "", 13);
	Onnx__GraphProto *g = mb_graph("body");
	(void)state;
	mb_graph_node(g, "inner", "DepthToSpace", "", "a", "b");
	mb_attr_graph(m->graph->node[0], "body", g);
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "d2s");
	TH_ASSERT_MSG_IHAS(onnxrun_env_error(env), "graph");
	onnxrun_env_free(env);
}

static void test_sparse_initializer_unsupported(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_sparse_initializer(m, "sp", D4(1, 1, 2, 3), MB_FLOATS(1.0f, 2.0f), (const int64_t[]){ 1, 4 });
	n = mb_node(m, "copy", "DepthToSpace", "", "sp", "y");
	mb_attr_int(n, "blocksize", 1);
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_IHAS(onnxrun_env_error(env), "sparse");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "sp");
	onnxrun_env_free(env);
}

static void test_local_function_unsupported(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__FunctionProto *f;
	(void)state;
	mb_opset(m, "", 13);
	mb_opset(m, "com.fn", 1);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	f = mb_function(m, "com.fn", "MyD2S", "a", "b");
	{
		Onnx__NodeProto *inner = mb__alloc(sizeof *inner);
		onnx__node_proto__init(inner);
		inner->op_type = mb__strdup("DepthToSpace");
		inner->input = mb__split("a", &inner->n_input);
		inner->output = mb__split("b", &inner->n_output);
		MB__PUSH(f->node, f->n_node, inner);
	}
	{
		/* functions carry their own opset imports */
		Onnx__OperatorSetIdProto *o = mb__alloc(sizeof *o);
		onnx__operator_set_id_proto__init(o);
		o->domain = mb__strdup("");
		o->has_version = 1;
		o->version = 13;
		MB__PUSH(f->opset_import, f->n_opset_import, o);
	}
	mb_node(m, "call", "MyD2S", "com.fn", "x", "y");
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "MyD2S");
	TH_ASSERT_MSG_IHAS(onnxrun_env_error(env), "function");
	onnxrun_env_free(env);
}

/* Every unsupported node is named in one load error. */
static void test_unsupported_ops_all_reported(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	const char *msg;
	(void)state;
	mb_opset(m, "", 13);
	mb_opset(m, "com.x", 1);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_node(m, "relu1", "Relu", "", "x", "a");
	mb_node(m, "foo1", "Foo", "com.x", "a", "b");
	n = mb_node(m, "d2s", "DepthToSpace", "", "b", "y");
	mb_attr_int(n, "blocksize", 2);
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	assert_null(model);
	msg = onnxrun_env_error(env);
	TH_ASSERT_MSG_HAS(msg, "Relu");
	TH_ASSERT_MSG_HAS(msg, "relu1");
	TH_ASSERT_MSG_HAS(msg, "Foo");
	TH_ASSERT_MSG_HAS(msg, "foo1");
	TH_ASSERT_MSG_HAS(msg, "com.x");
	onnxrun_env_free(env);
}

/* DepthToSpace in another (imported) domain is not the ONNX op: unsupported. */
static void test_op_in_other_domain(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	Onnx__ModelProto *m = d2s_model(8, "", 13);
	(void)state;
	mb_opset(m, "com.x", 1);
	free(m->graph->node[0]->domain);
	m->graph->node[0]->domain = mb__strdup("com.x");
	TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "com.x");
	onnxrun_env_free(env);
}

/* ---- malformed bytes and bad arguments ---- */

static void test_truncated_bytes(void **state)
{
	struct onnxrun_env *env = th_env();
	size_t size;
	uint8_t *buf = mb_finish(d2s_model(8, "", 13), &size);
	(void)state;
	for (size_t len = 1; len < size; len++) {
		struct onnxrun_model *model = NULL;
		uint8_t *copy = malloc(len); /* exact size so valgrind sees over-reads */
		enum onnxrun_status st;
		memcpy(copy, buf, len);
		st = onnxrun_model_load_buffer(env, copy, len, NULL, &model);
		free(copy);
		if (st != ONNXRUN_ERROR_INVALID_MODEL) {
			onnxrun_model_free(model);
			fail_msg("truncated to %zu of %zu bytes: status %s (%s)", len, size, onnxrun_status_str(st),
			         onnxrun_env_error(env));
		}
		assert_null(model);
	}
	free(buf);
	onnxrun_env_free(env);
}

static void test_corrupt_bytes(void **state)
{
	const uint64_t seed = 1234;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	uint8_t junk[16];
	size_t size;
	uint8_t *buf = mb_finish(d2s_model(8, "", 13), &size);
	(void)state;
	memset(junk, 0xFF, sizeof junk);
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, junk, sizeof junk, NULL, &model),
	                 ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	assert_null(model);
	/* single-byte mutations: any documented load status, never a crash (run under valgrind) */
	th_rng_seed(&rng, seed);
	for (int iter = 0; iter < 400; iter++) {
		uint8_t *copy = malloc(size);
		size_t pos = (size_t)(th_rng_next(&rng) % size);
		enum onnxrun_status st;
		memcpy(copy, buf, size);
		copy[pos] = (uint8_t)th_rng_next(&rng);
		model = NULL;
		st = onnxrun_model_load_buffer(env, copy, size, NULL, &model);
		free(copy);
		if (st == ONNXRUN_OK) {
			onnxrun_model_free(model);
			continue;
		}
		if (st != ONNXRUN_ERROR_INVALID_MODEL && st != ONNXRUN_ERROR_UNSUPPORTED && st != ONNXRUN_ERROR_LIMIT)
			fail_msg("seed %llu iteration %d (byte %zu): status %s (%s)", (unsigned long long)seed, iter, pos,
			         onnxrun_status_str(st), onnxrun_env_error(env));
		if (!onnxrun_env_error(env)[0])
			fail_msg("seed %llu iteration %d: failure without a message", (unsigned long long)seed, iter);
		assert_null(model);
	}
	free(buf);
	onnxrun_env_free(env);
}

static void test_empty_buffer(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	uint8_t byte = 0;
	enum onnxrun_status st;
	(void)state;
	st = onnxrun_model_load_buffer(env, &byte, 0, NULL, &model);
	if (st != ONNXRUN_ERROR_INVALID_MODEL && st != ONNXRUN_ERROR_INVALID_ARGUMENT)
		fail_msg("empty buffer: status %s (%s)", onnxrun_status_str(st), onnxrun_env_error(env));
	assert_null(model);
	st = onnxrun_model_load_buffer(env, NULL, 0, NULL, &model);
	if (st != ONNXRUN_ERROR_INVALID_MODEL && st != ONNXRUN_ERROR_INVALID_ARGUMENT)
		fail_msg("NULL empty buffer: status %s (%s)", onnxrun_status_str(st), onnxrun_env_error(env));
	assert_null(model);
	/* an empty file */
	assert_int_equal(mb_write_file(ONNXRUN_TEST_TMP "/empty.onnx", "", 0), 0);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, ONNXRUN_TEST_TMP "/empty.onnx", &model),
	                 ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
	assert_null(model);
	/* a model without a graph */
	{
		Onnx__ModelProto *m = d2s_model(8, "", 13);
		onnx__graph_proto__free_unpacked(m->graph, NULL);
		m->graph = NULL;
		TH_ASSERT_STATUS(th_load(env, m, &model), ONNXRUN_ERROR_INVALID_MODEL, onnxrun_env_error(env));
		assert_null(model);
	}
	onnxrun_env_free(env);
}

static void test_null_arguments(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	struct onnxrun_value_info vi;
	struct onnxrun_node_info ni;
	const char *domain;
	int64_t version;
	size_t size;
	uint8_t *buf = mb_finish(d2s_model(8, "", 13), &size);
	(void)state;
	assert_int_equal(onnxrun_model_load_buffer(NULL, buf, size, NULL, &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_buffer(env, NULL, size, NULL, &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_buffer(env, buf, size, NULL, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_file(NULL, "x.onnx", &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_file(env, NULL, &model), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_load_file(env, "x.onnx", NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_null(model);

	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_OK, onnxrun_env_error(env));
	assert_int_equal(onnxrun_model_input_info(model, 0, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_input_info(model, 1, &vi), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_input_info(NULL, 0, &vi), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_output_info(model, 1, &vi), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_node_info(model, 1, &ni), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_node_info(model, 0, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_opset(model, 1, &domain, &version), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_value_info(model, NULL, &vi), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_value_info(model, "no_such_value", &vi), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_create(NULL, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_create(model, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	/* counts of NULL are 0 */
	assert_int_equal(onnxrun_model_input_count(NULL), 0);
	assert_int_equal(onnxrun_model_node_count(NULL), 0);
	onnxrun_model_free(model);
	onnxrun_model_free(NULL);
	onnxrun_session_free(NULL);
	free(buf);
	onnxrun_env_free(env);
}

/* Failing each allocation in turn: OUT_OF_MEMORY, nothing leaked, then success. Runs
 * through every allocation and reports the first wrong status and the first leak. */
static void test_load_out_of_memory(void **state)
{
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	size_t size;
	uint8_t *buf = mb_finish(d2s_model(8, "", 13), &size);
	long k, bad_status_at = -1, leak_at = -1, wrong = 0;
	char bad_msg[1200] = "";
	bool loaded = false;
	(void)state;
	for (k = 0; k < 100000 && !loaded; k++) {
		struct onnxrun_model *model = NULL;
		enum onnxrun_status st;
		a.count = 0;
		a.fail_at = k;
		st = onnxrun_model_load_buffer(env, buf, size, NULL, &model);
		a.fail_at = -1;
		if (st == ONNXRUN_OK) {
			assert_true(a.count <= k); /* the failing allocation was never reached */
			onnxrun_model_free(model);
			loaded = true;
		} else if (st != ONNXRUN_ERROR_OUT_OF_MEMORY) {
			wrong++;
			if (bad_status_at < 0) {
				bad_status_at = k;
				snprintf(bad_msg, sizeof bad_msg, "%s (%s)", onnxrun_status_str(st), onnxrun_env_error(env));
			}
		}
		if (a.live != 1 && leak_at < 0)
			leak_at = k;
		a.live = 1; /* count leaks per iteration only */
	}
	assert_true(loaded);
	if (bad_status_at >= 0)
		fail_msg("%ld of %ld failed allocations gave another status than out of memory; first at "
		         "allocation %ld: %s", wrong, k - 1, bad_status_at, bad_msg);
	if (leak_at >= 0)
		fail_msg("failing allocation %ld leaked memory", leak_at);
	onnxrun_env_free(env);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_buffer),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_file_missing),
		cmocka_unit_test(test_initializer_dtypes_raw),
		cmocka_unit_test(test_initializer_dtypes_typed),
		cmocka_unit_test(test_initializer_size_mismatch),
		cmocka_unit_test(test_defaulted_input),
		cmocka_unit_test(test_constant_not_overridable),
		cmocka_unit_test(test_default_override_checked),
		cmocka_unit_test(test_default_shape_mismatch),
		cmocka_unit_test(test_initializer_conflicts),
		cmocka_unit_test(test_opset_domain_aliases),
		cmocka_unit_test(test_since_version_resolution),
		cmocka_unit_test(test_ir_version_too_old),
		cmocka_unit_test(test_ir_version_newer_warns),
		cmocka_unit_test(test_opset_newer_warns),
		cmocka_unit_test(test_missing_default_opset),
		cmocka_unit_test(test_duplicate_opset),
		cmocka_unit_test(test_dim_param_info),
		cmocka_unit_test(test_external_data_file),
		cmocka_unit_test(test_external_data_rejected),
		cmocka_unit_test(test_raw_initializer_moved),
		cmocka_unit_test(test_external_data_mapped),
		cmocka_unit_test(test_subgraph_attribute_unsupported),
		cmocka_unit_test(test_sparse_initializer_unsupported),
		cmocka_unit_test(test_local_function_unsupported),
		cmocka_unit_test(test_unsupported_ops_all_reported),
		cmocka_unit_test(test_op_in_other_domain),
		cmocka_unit_test(test_truncated_bytes),
		cmocka_unit_test(test_corrupt_bytes),
		cmocka_unit_test(test_empty_buffer),
		cmocka_unit_test(test_null_arguments),
		cmocka_unit_test(test_load_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
