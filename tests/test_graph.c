/*
 * test_graph.c - graph ordering and load-time shape inference through the public API:
 * Kahn's order with ties broken by file order, cycles, self-loops, dangling inputs,
 * duplicate producers, symbolic shape inference and declared-shape checks.
 */
#include "model_builder.c"

#define D4(a, b, c, d) 4, ((const int64_t[]){ a, b, c, d })

/* Asserts the model's execution order is exactly the given node names. */
static void assert_order(const struct onnxrun_model *model, size_t n, const char *const *names)
{
	char got[512] = "";
	bool same = onnxrun_model_node_count(model) == n;
	for (size_t i = 0; i < onnxrun_model_node_count(model); i++) {
		struct onnxrun_node_info ni;
		assert_int_equal(onnxrun_model_node_info(model, i, &ni), ONNXRUN_OK);
		if (i >= n || strcmp(ni.name, names[i]))
			same = false;
		strncat(got, ni.name, sizeof got - strlen(got) - 2);
		strcat(got, " ");
	}
	if (!same) {
		char want[512] = "";
		for (size_t i = 0; i < n; i++) {
			strncat(want, names[i], sizeof want - strlen(want) - 2);
			strcat(want, " ");
		}
		fail_msg("execution order is [%s], expected [%s]", got, want);
	}
}

/* Runs a model with one float input and one float output; returns the output copied into
 * a malloc'd buffer and its shape. */
static float *run1(struct onnxrun_env *env, const struct onnxrun_model *model, int32_t rank, const int64_t *dims,
                   const float *x, int32_t out_rank, const int64_t *out_dims)
{
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *tx = th_tensor_f32(env, rank, dims, x);
	const struct onnxrun_tensor *y = NULL;
	float *copy;
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, tx), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	th_assert_shape(y, ONNXRUN_DTYPE_FLOAT, out_rank, out_dims);
	copy = malloc(onnxrun_tensor_nbytes(y) + 1);
	memcpy(copy, onnxrun_tensor_data(y), onnxrun_tensor_nbytes(y));
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	return copy;
}

static void expect_load_error(Onnx__ModelProto *m, enum onnxrun_status want, const char *const *needles,
                              size_t n_needles)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	enum onnxrun_status st = th_load(env, m, &model);
	if (st == ONNXRUN_OK) {
		onnxrun_model_free(model);
		onnxrun_env_free(env);
		fail_msg("the model loaded; expected %s", onnxrun_status_str(want));
	}
	TH_ASSERT_STATUS(st, want, onnxrun_env_error(env));
	assert_null(model);
	for (size_t i = 0; i < n_needles; i++)
		TH_ASSERT_MSG_HAS(onnxrun_env_error(env), needles[i]);
	onnxrun_env_free(env);
}

/* ---- ordering ---- */

/*
 * Chain x -> A -> t1 -> B -> t2 -> C -> y, listed in the file as C, B, A.
 *  A: ConvTranspose(x [1,2,3,3], w1 [2,4,3,3]) strides 2          -> t1 [1,4,7,7]
 *  B: DepthToSpace(blocksize 2, CRD)                               -> t2 [1,1,14,14]
 *  C: ConvTranspose(t2, w2 [1,2,2,2], b2 [2]) pads (1,0,0,1)       -> y  [1,2,14,14]
 */
static void test_out_of_order_chain(void **state)
{
	const uint64_t seed = 42;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	float x[18], w1[72], w2[8], b2[2], t1[196], t2[196], want[392], *got;
	struct th_ct2d pa = { 1, 2, 3, 3, 4, 3, 3, 1, 2, 2, 1, 1, 0, 0, 7, 7 };
	struct th_ct2d pc = { 1, 1, 14, 14, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 14, 14 };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	static const char *const order[] = { "A", "B", "C" };
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 18);
	th_fill(&rng, w1, 72);
	th_fill(&rng, w2, 8);
	th_fill(&rng, b2, 2);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,2,3,3");
	mb_output(m, "y", MB_FLOAT, "1,2,14,14");
	mb_initializer_f32(m, "w1", D4(2, 4, 3, 3), w1);
	mb_initializer_f32(m, "w2", D4(1, 2, 2, 2), w2);
	mb_initializer_f32(m, "b2", 1, (const int64_t[]){ 2 }, b2);
	n = mb_node(m, "C", "ConvTranspose", "", "t2,w2,b2", "y");
	mb_attr_ints(n, "pads", MB_INTS(1, 0, 0, 1));
	n = mb_node(m, "B", "DepthToSpace", "", "t1", "t2");
	mb_attr_int(n, "blocksize", 2);
	mb_attr_string(n, "mode", "CRD");
	n = mb_node(m, "A", "ConvTranspose", "", "x,w1", "t1");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	model = th_load_ok(env, m);
	assert_order(model, 3, order);

	th_ref_conv_transpose2d(&pa, x, w1, NULL, t1);
	th_ref_depth_to_space(t1, t2, sizeof(float), 1, 4, 7, 7, 2, true);
	th_ref_conv_transpose2d(&pc, t2, w2, b2, want);
	got = run1(env, model, D4(1, 2, 3, 3), x, D4(1, 2, 14, 14));
	for (size_t i = 0; i < 392; i++)
		if (fabsf(got[i] - want[i]) > 1e-4f)
			fail_msg("seed %llu: y[%zu] = %g, expected %g", (unsigned long long)seed, i, (double)got[i],
			         (double)want[i]);
	free(got);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/*
 * Diamond: A: a = D2S(x); B: b = D2S(a); C: c = D2S(a); D: y = ConvTranspose(b, c), all
 * DepthToSpace with blocksize 1 (copies), x [2,2,1,1], so y[n,m] = sum_c x[n,c] * x[c,m].
 * `file` gives the file order of the nodes as letters.
 */
static Onnx__ModelProto *diamond(const char *file)
{
	Onnx__ModelProto *m = mb_model(8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "2,2,1,1");
	mb_output(m, "y", MB_FLOAT, "2,2,1,1");
	for (const char *p = file; *p; p++) {
		Onnx__NodeProto *n = NULL;
		switch (*p) {
		case 'A': n = mb_node(m, "A", "DepthToSpace", "", "x", "a"); break;
		case 'B': n = mb_node(m, "B", "DepthToSpace", "", "a", "b"); break;
		case 'C': n = mb_node(m, "C", "DepthToSpace", "", "a", "c"); break;
		case 'D': mb_node(m, "D", "ConvTranspose", "", "b,c", "y"); break;
		default: break;
		}
		if (n)
			mb_attr_int(n, "blocksize", 1);
	}
	return m;
}

static void check_diamond_run(struct onnxrun_env *env, const struct onnxrun_model *model)
{
	const float x[4] = { 1.0f, -2.0f, 0.5f, 3.0f };
	float want[4], *got;
	for (int n = 0; n < 2; n++)
		for (int mm = 0; mm < 2; mm++)
			want[n * 2 + mm] = x[n * 2 + 0] * x[0 * 2 + mm] + x[n * 2 + 1] * x[1 * 2 + mm];
	got = run1(env, model, D4(2, 2, 1, 1), x, D4(2, 2, 1, 1));
	for (int i = 0; i < 4; i++)
		if (fabsf(got[i] - want[i]) > 1e-6f)
			fail_msg("diamond: y[%d] = %g, expected %g", i, (double)got[i], (double)want[i]);
	free(got);
}

static void test_diamond_order(void **state)
{
	static const struct {
		const char *file;
		const char *order[4];
	} cases[] = {
		{ "DCBA", { "A", "C", "B", "D" } }, /* B and C become ready together: C is first in the file */
		{ "DBCA", { "A", "B", "C", "D" } },
		{ "ABCD", { "A", "B", "C", "D" } },
		{ "ACBD", { "A", "C", "B", "D" } },
		{ "CADB", { "A", "C", "B", "D" } },
	};
	struct onnxrun_env *env = th_env();
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_model *model = th_load_ok(env, diamond(cases[i].file));
		print_message("file order %s\n", cases[i].file);
		assert_order(model, 4, cases[i].order);
		check_diamond_run(env, model);
		onnxrun_model_free(model);
	}
	onnxrun_env_free(env);
}

/*
 * A file that is already in a valid topological order keeps it (ties broken by file order
 * means: always run the ready node that comes first in the file). File order A, B, C, D:
 *  A: a = D2S(x); B: b = D2S(a); C: c = D2S(x); D: y = ConvTranspose(b, c).
 * A breadth-first (FIFO) Kahn would give A, C, B, D.
 */
static void test_valid_file_order_kept(void **state)
{
	static const char *const order[] = { "A", "B", "C", "D" };
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "2,2,1,1");
	mb_output(m, "y", MB_FLOAT, "2,2,1,1");
	n = mb_node(m, "A", "DepthToSpace", "", "x", "a");
	mb_attr_int(n, "blocksize", 1);
	n = mb_node(m, "B", "DepthToSpace", "", "a", "b");
	mb_attr_int(n, "blocksize", 1);
	n = mb_node(m, "C", "DepthToSpace", "", "x", "c");
	mb_attr_int(n, "blocksize", 1);
	mb_node(m, "D", "ConvTranspose", "", "b,c", "y");
	model = th_load_ok(env, m);
	assert_order(model, 4, order);
	check_diamond_run(env, model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- malformed graphs ---- */

static void test_cycle(void **state)
{
	static const char *const needles[] = { "'loopA'", "'loopB'" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "2,2,1,1");
	mb_output(m, "z", MB_FLOAT, NULL);
	mb_output(m, "t1", MB_FLOAT, NULL);
	n = mb_node(m, "ok", "DepthToSpace", "", "x", "z");
	mb_attr_int(n, "blocksize", 1);
	mb_node(m, "loopA", "ConvTranspose", "", "x,t2", "t1");
	n = mb_node(m, "loopB", "DepthToSpace", "", "t1", "t2");
	mb_attr_int(n, "blocksize", 1);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 2);
}

static void test_self_loop(void **state)
{
	static const char *const needles[] = { "'selfie'" };
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "2,2,1,1");
	mb_output(m, "t", MB_FLOAT, NULL);
	mb_node(m, "selfie", "ConvTranspose", "", "x,t", "t");
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 1);
}

static void test_dangling_input(void **state)
{
	static const char *const needles[] = { "'ghost'", "'eater'" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "eater", "DepthToSpace", "", "ghost", "y");
	mb_attr_int(n, "blocksize", 2);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 2);
}

/* A graph output nobody produces is dangling too. */
static void test_dangling_output(void **state)
{
	static const char *const needles[] = { "'nowhere'" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "nowhere", MB_FLOAT, NULL);
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 1);
}

static void test_duplicate_producer(void **state)
{
	static const char *const needles[] = { "'twice'" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "twice", MB_FLOAT, NULL);
	n = mb_node(m, "first", "DepthToSpace", "", "x", "twice");
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, "second", "DepthToSpace", "", "x", "twice");
	mb_attr_int(n, "blocksize", 1);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 1);
}

static void test_output_overwrites_graph_input(void **state)
{
	static const char *const needles[] = { "'x'" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_input(m, "u", MB_FLOAT, "1,4,2,3");
	mb_output(m, "x", MB_FLOAT, NULL);
	n = mb_node(m, "clobber", "DepthToSpace", "", "u", "x");
	mb_attr_int(n, "blocksize", 1);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 1);
}

static void test_output_overwrites_initializer(void **state)
{
	static const char *const needles[] = { "'w'" };
	const float w[4] = { 1, 2, 3, 4 };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "w", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(1, 4, 1, 1), w);
	n = mb_node(m, "clobber", "DepthToSpace", "", "x", "w");
	mb_attr_int(n, "blocksize", 1);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 1);
}

static void test_duplicate_graph_input(void **state)
{
	static const char *const needles[] = { "'x'" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 1);
}

/* "" in a node's input list is an absent optional input, kept as "" in node_info. */
static void test_absent_optional_input(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_node_info ni;
	const float w[4] = { 1, 2, 3, 4 };
	const float x[2] = { 0.5f, -1.0f };
	float *got;
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,2,1,1");
	mb_output(m, "y", MB_FLOAT, "1,2,1,1");
	mb_initializer_f32(m, "w", D4(2, 2, 1, 1), w);
	mb_node(m, "ct", "ConvTranspose", "", "x,w,", "y");
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
	assert_int_equal(ni.input_count, 3);
	assert_string_equal(ni.inputs[0], "x");
	assert_string_equal(ni.inputs[1], "w");
	assert_string_equal(ni.inputs[2], "");
	got = run1(env, model, D4(1, 2, 1, 1), x, D4(1, 2, 1, 1));
	/* y[m] = sum_c x[c] * w[c, m] */
	assert_true(fabsf(got[0] - (0.5f * 1 - 1.0f * 3)) < 1e-6f);
	assert_true(fabsf(got[1] - (0.5f * 2 - 1.0f * 4)) < 1e-6f);
	free(got);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- shape inference at load ---- */

/* Asserts value `name` has dtype float and the given dims; params[i] names dim i when
 * value[i] is -1 (NULL: no name). */
static void assert_value(const struct onnxrun_model *model, const char *name, int32_t rank, const int64_t *values,
                         const char *const *params)
{
	struct onnxrun_value_info vi;
	enum onnxrun_status st = onnxrun_model_value_info(model, name, &vi);
	if (st != ONNXRUN_OK)
		fail_msg("value_info('%s'): %s", name, onnxrun_status_str(st));
	assert_string_equal(vi.name, name);
	assert_int_equal(vi.dtype, ONNXRUN_DTYPE_FLOAT);
	if (vi.rank != rank)
		fail_msg("'%s' has rank %d, expected %d", name, (int)vi.rank, (int)rank);
	for (int32_t i = 0; i < rank; i++) {
		if (vi.dims[i].value != values[i])
			fail_msg("'%s' dim %d is %lld, expected %lld", name, (int)i, (long long)vi.dims[i].value,
			         (long long)values[i]);
		if (values[i] >= 0)
			continue;
		if (params[i] && (!vi.dims[i].param || strcmp(vi.dims[i].param, params[i])))
			fail_msg("'%s' dim %d is named '%s', expected '%s'", name, (int)i,
			         vi.dims[i].param ? vi.dims[i].param : "(null)", params[i]);
		if (!params[i] && vi.dims[i].param)
			fail_msg("'%s' dim %d is named '%s', expected no name", name, (int)i, vi.dims[i].param);
	}
}

static void test_infer_conv_transpose_symbolic(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	float w[54] = { 0 };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	static const char *const pn[4] = { "N", NULL, NULL, NULL };
	static const char *const none[4] = { NULL, NULL, NULL, NULL };
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "N,2,3,5");
	mb_input(m, "x2", MB_FLOAT, "N,2,H,5");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "y2", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(2, 3, 3, 3), w);
	/* natural = s*(in-1) + op + (k-1)*d + 1; out = natural - pad_begin - pad_end */
	n = mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	mb_attr_ints(n, "pads", MB_INTS(1, 0, 1, 0));
	mb_attr_ints(n, "output_padding", MB_INTS(1, 0));
	n = mb_node(m, "up2", "ConvTranspose", "", "x2,w", "y2");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	model = th_load_ok(env, m);
	/* H: 2*2 + 1 + 2 + 1 - 2 = 6; W: 2*4 + 0 + 2 + 1 = 11 */
	assert_value(model, "y", 4, (const int64_t[]){ -1, 3, 6, 11 }, pn);
	/* H unknown after the op: symbolic in, no name out */
	assert_value(model, "y2", 4, (const int64_t[]){ -1, 3, -1, 11 }, pn);
	assert_value(model, "x", 4, (const int64_t[]){ -1, 2, 3, 5 }, pn);
	assert_value(model, "w", 4, (const int64_t[]){ 2, 3, 3, 3 }, none);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_infer_depth_to_space_symbolic(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	static const char *const pb[4] = { "B", NULL, NULL, NULL };
	static const char *const unk[4] = { NULL, NULL, NULL, NULL };
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "B,8,2,3");
	mb_input(m, "u", MB_FLOAT, "?,8,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "v", MB_FLOAT, NULL);
	n = mb_node(m, "d1", "DepthToSpace", "", "x", "t");
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, "d2", "DepthToSpace", "", "t", "y");
	mb_attr_int(n, "blocksize", 1);
	mb_attr_string(n, "mode", "CRD");
	n = mb_node(m, "d3", "DepthToSpace", "", "u", "v");
	mb_attr_int(n, "blocksize", 2);
	model = th_load_ok(env, m);
	assert_value(model, "t", 4, (const int64_t[]){ -1, 2, 4, 6 }, pb);
	assert_value(model, "y", 4, (const int64_t[]){ -1, 2, 4, 6 }, pb);
	assert_value(model, "v", 4, (const int64_t[]){ -1, 2, 4, 6 }, unk);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* DepthToSpace [1,8,2,3] blocksize 2 gives float [1,2,4,6]; `declared` is the output. */
static Onnx__ModelProto *declared_model(int dtype, const char *declared, bool as_value_info)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,8,2,3");
	if (as_value_info) {
		mb_value_info(m, "mid", dtype, declared);
		mb_output(m, "y", MB_FLOAT, NULL);
	} else {
		mb_output(m, "y", dtype, declared);
	}
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "mid");
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, "copy", "DepthToSpace", "", "mid", "y");
	mb_attr_int(n, "blocksize", 1);
	return m;
}

static void test_declared_shape_mismatch(void **state)
{
	static const char *const ny[] = { "'y'" };
	static const char *const nmid[] = { "'mid'" };
	(void)state;
	expect_load_error(declared_model(MB_FLOAT, "1,2,4,7", false), ONNXRUN_ERROR_INVALID_MODEL, ny, 1);
	expect_load_error(declared_model(MB_FLOAT, "1,2,24", false), ONNXRUN_ERROR_INVALID_MODEL, ny, 1);
	expect_load_error(declared_model(MB_INT64, "1,2,4,6", false), ONNXRUN_ERROR_INVALID_MODEL, ny, 1);
	expect_load_error(declared_model(MB_FLOAT, "1,2,5,6", true), ONNXRUN_ERROR_INVALID_MODEL, nmid, 1);
}

/* Declarations that agree, or are less precise, load fine. */
static void test_declared_shape_compatible(void **state)
{
	static const char *const cases[] = { "1,2,4,6", "batch,2,4,6", "?,?,?,?", NULL };
	struct onnxrun_env *env = th_env();
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int vi = 0; vi < 2; vi++) {
			struct onnxrun_model *model = NULL;
			enum onnxrun_status st = th_load(env, declared_model(MB_FLOAT, cases[i], vi), &model);
			if (st != ONNXRUN_OK)
				fail_msg("declared %s %s: %s (%s)", vi ? "value_info" : "output",
				         cases[i] ? cases[i] : "(no shape)", onnxrun_status_str(st), onnxrun_env_error(env));
			onnxrun_model_free(model);
		}
	}
	onnxrun_env_free(env);
}

/* An op whose attributes make inference fail names the node at load. */
static void test_infer_error_names_node(void **state)
{
	static const char *const needles[] = { "'bad'", "DepthToSpace" };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,6,2,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "bad", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2); /* 6 is not divisible by 4 */
	expect_load_error(m, ONNXRUN_ERROR_INVALID_MODEL, needles, 2);
}

/* An input declared without a shape: inference gives unknown rank; any rank-4 input runs. */
static void test_unknown_rank_input(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_value_info vi;
	float x[24], want[24], *got;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, NULL);
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_input_info(model, 0, &vi), ONNXRUN_OK);
	assert_int_equal(vi.rank, -1);
	assert_int_equal(onnxrun_model_value_info(model, "y", &vi), ONNXRUN_OK);
	assert_int_equal(vi.dtype, ONNXRUN_DTYPE_FLOAT);
	assert_true(vi.rank == -1 || vi.rank == 4);
	th_ref_depth_to_space(x, want, sizeof(float), 2, 4, 1, 3, 2, false);
	got = run1(env, model, D4(2, 4, 1, 3), x, D4(2, 1, 2, 6));
	assert_memory_equal(got, want, sizeof want);
	free(got);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Unnamed nodes order and report like named ones (name ""). */
static void test_unnamed_nodes(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_node_info ni;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,16,1,1");
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, NULL, "DepthToSpace", "", "t", "y");
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, NULL, "DepthToSpace", "", "x", "t");
	mb_attr_int(n, "blocksize", 2);
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
	assert_string_equal(ni.name, "");
	assert_string_equal(ni.outputs[0], "t");
	assert_int_equal(onnxrun_model_node_info(model, 1, &ni), ONNXRUN_OK);
	assert_string_equal(ni.outputs[0], "y");
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_of_order_chain),
		cmocka_unit_test(test_diamond_order),
		cmocka_unit_test(test_valid_file_order_kept),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_self_loop),
		cmocka_unit_test(test_dangling_input),
		cmocka_unit_test(test_dangling_output),
		cmocka_unit_test(test_duplicate_producer),
		cmocka_unit_test(test_output_overwrites_graph_input),
		cmocka_unit_test(test_output_overwrites_initializer),
		cmocka_unit_test(test_duplicate_graph_input),
		cmocka_unit_test(test_absent_optional_input),
		cmocka_unit_test(test_infer_conv_transpose_symbolic),
		cmocka_unit_test(test_infer_depth_to_space_symbolic),
		cmocka_unit_test(test_declared_shape_mismatch),
		cmocka_unit_test(test_declared_shape_compatible),
		cmocka_unit_test(test_infer_error_names_node),
		cmocka_unit_test(test_unknown_rank_input),
		cmocka_unit_test(test_unnamed_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
