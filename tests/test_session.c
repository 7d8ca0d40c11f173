/*
 * test_session.c - sessions through the public API: multi-node graphs (fan-out, outputs that
 * are intermediates or inputs), symbolic batch re-planning, empty batches, input checks,
 * bound dims, the memory planner's reuse, determinism, threads, bad arguments and
 * allocation failures. Expected values come from naive reference loops (model_builder.c).
 */
#include <pthread.h>

#include "model_builder.c"

#define D4(a, b, c, d) 4, ((const int64_t[]){ a, b, c, d })

static struct onnxrun_session *new_session(struct onnxrun_env *env, const struct onnxrun_model *model)
{
	struct onnxrun_session *s = NULL;
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	assert_non_null(s);
	return s;
}

static const struct onnxrun_tensor *output(struct onnxrun_session *s, size_t i)
{
	const struct onnxrun_tensor *t = NULL;
	TH_ASSERT_STATUS(onnxrun_session_output(s, i, &t), ONNXRUN_OK, onnxrun_session_error(s));
	assert_non_null(t);
	return t;
}

#define RUN_OK(s) TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s))
#define SET_OK(s, i, t) TH_ASSERT_STATUS(onnxrun_session_set_input((s), (i), (t)), ONNXRUN_OK, onnxrun_session_error(s))

/* ---- the "up" model: symbolic batch ----
 * x [N,4,3,3] -> A: ConvTranspose(w [4,8,3,3], b [8]) strides 2, pads 1 -> t [N,8,5,5]
 *             -> B: DepthToSpace(blocksize 2, DCR)                    -> y [N,2,10,10]
 */
struct up_model {
	float w[288], b[8];
};

static Onnx__ModelProto *up_model(struct up_model *u, uint64_t seed)
{
	struct th_rng rng;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	th_rng_seed(&rng, seed);
	th_fill(&rng, u->w, 288);
	th_fill(&rng, u->b, 8);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "N,4,3,3");
	mb_output(m, "y", MB_FLOAT, "N,2,10,10");
	mb_initializer_f32(m, "w", D4(4, 8, 3, 3), u->w);
	mb_initializer_f32(m, "b", 1, (const int64_t[]){ 8 }, u->b);
	n = mb_node(m, "A", "ConvTranspose", "", "x,w,b", "t");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	mb_attr_ints(n, "pads", MB_INTS(1, 1, 1, 1));
	mb_attr_ints(n, "kernel_shape", MB_INTS(3, 3));
	n = mb_node(m, "B", "DepthToSpace", "", "t", "y");
	mb_attr_int(n, "blocksize", 2);
	return m;
}

/* Reference y for batch n: returns a malloc'd [n,2,10,10] buffer. */
static float *up_reference(const struct up_model *u, int64_t n, const float *x)
{
	struct th_ct2d p = { n, 4, 3, 3, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 5, 5 };
	float *t = malloc((size_t)n * 200 * sizeof(float) + 1);
	float *y = malloc((size_t)n * 200 * sizeof(float) + 1);
	th_ref_conv_transpose2d(&p, x, u->w, u->b, t);
	th_ref_depth_to_space(t, y, sizeof(float), n, 8, 5, 5, 2, false);
	free(t);
	return y;
}

/* Binds a fresh random x of batch n, runs, checks y; returns the planned bytes. */
static uint64_t run_up_batch(struct onnxrun_env *env, struct onnxrun_session *s, const struct up_model *u,
                             int64_t n, uint64_t seed)
{
	struct th_rng rng;
	float *x = malloc((size_t)n * 36 * sizeof(float) + 1), *want;
	struct onnxrun_tensor *tx;
	struct onnxrun_value_info vi;
	uint64_t bytes = 0;
	char what[64];
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, (size_t)n * 36);
	tx = th_tensor_f32(env, D4(n, 4, 3, 3), x);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	snprintf(what, sizeof what, "batch %lld", (long long)n);
	print_message("%s, seed %llu\n", what, (unsigned long long)seed);
	want = up_reference(u, n, x);
	th_assert_shape(output(s, 0), ONNXRUN_DTYPE_FLOAT, D4(n, 2, 10, 10));
	th_assert_close(output(s, 0), want, (size_t)n * 200, seed, what);
	TH_ASSERT_STATUS(onnxrun_session_value_info(s, "t", &vi), ONNXRUN_OK, onnxrun_session_error(s));
	assert_int_equal(vi.rank, 4);
	assert_int_equal(vi.dims[0].value, n);
	assert_int_equal(vi.dims[1].value, 8);
	assert_int_equal(vi.dims[2].value, 5);
	TH_ASSERT_STATUS(onnxrun_session_planned_bytes(s, &bytes), ONNXRUN_OK, onnxrun_session_error(s));
	free(want);
	free(x);
	onnxrun_tensor_free(tx);
	return bytes;
}

static void test_symbolic_batch_replans(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 1));
	struct onnxrun_session *s = new_session(env, model);
	uint64_t b2, b1, b2again;
	(void)state;
	b2 = run_up_batch(env, s, &u, 2, 100);
	b1 = run_up_batch(env, s, &u, 1, 101);
	b2again = run_up_batch(env, s, &u, 2, 102);
	print_message("planned bytes: batch 2 %llu, batch 1 %llu, batch 2 %llu\n", (unsigned long long)b2,
	              (unsigned long long)b1, (unsigned long long)b2again);
	/* at least the output plus the live intermediate t: n*(200 + 200) floats */
	assert_true(b2 >= 2 * 400 * sizeof(float));
	assert_true(b1 >= 1 * 400 * sizeof(float));
	assert_true(b1 < b2);
	assert_true(b2again == b2);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_batch_zero(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 2));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *tx = th_tensor_f32(env, D4(0, 4, 3, 3), NULL);
	const struct onnxrun_tensor *y;
	(void)state;
	SET_OK(s, 0, tx);
	RUN_OK(s);
	y = output(s, 0);
	th_assert_shape(y, ONNXRUN_DTYPE_FLOAT, D4(0, 2, 10, 10));
	assert_int_equal(onnxrun_tensor_numel(y), 0);
	assert_int_equal(onnxrun_tensor_nbytes(y), 0);
	/* and back to a real batch in the same session */
	run_up_batch(env, s, &u, 1, 7);
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* The input is borrowed: changing its data changes the next run's result. */
static void test_input_is_borrowed(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 3));
	struct onnxrun_session *s = new_session(env, model);
	float x[36], *want;
	struct onnxrun_tensor *tx;
	struct th_rng rng;
	(void)state;
	th_rng_seed(&rng, 3);
	th_fill(&rng, x, 36);
	assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, D4(1, 4, 3, 3), x, sizeof x, &tx), ONNXRUN_OK);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	want = up_reference(&u, 1, x);
	th_assert_close(output(s, 0), want, 200, 3, "first data");
	free(want);
	th_fill(&rng, x, 36);
	RUN_OK(s);
	want = up_reference(&u, 1, x);
	th_assert_close(output(s, 0), want, 200, 3, "changed data, same tensor");
	free(want);
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Two sessions of one model keep separate state. */
static void test_two_sessions(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 4));
	struct onnxrun_session *s1 = new_session(env, model), *s2 = new_session(env, model);
	float x1[72], x2[36], *w1, *w2;
	struct onnxrun_tensor *t1, *t2;
	struct th_rng rng;
	(void)state;
	th_rng_seed(&rng, 4);
	th_fill(&rng, x1, 72);
	th_fill(&rng, x2, 36);
	t1 = th_tensor_f32(env, D4(2, 4, 3, 3), x1);
	t2 = th_tensor_f32(env, D4(1, 4, 3, 3), x2);
	SET_OK(s1, 0, t1);
	SET_OK(s2, 0, t2);
	RUN_OK(s1);
	RUN_OK(s2);
	w1 = up_reference(&u, 2, x1);
	w2 = up_reference(&u, 1, x2);
	th_assert_close(output(s1, 0), w1, 400, 4, "session 1");
	th_assert_close(output(s2, 0), w2, 200, 4, "session 2");
	free(w1);
	free(w2);
	onnxrun_session_free(s1);
	onnxrun_session_free(s2);
	onnxrun_tensor_free(t1);
	onnxrun_tensor_free(t2);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* prepare with one shape, then bind another: run re-infers and re-plans. */
static void test_prepare_then_reshape(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 15));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *t1 = th_tensor_f32(env, D4(1, 4, 3, 3), NULL);
	uint64_t b1 = 0, b3;
	(void)state;
	SET_OK(s, 0, t1);
	TH_ASSERT_STATUS(onnxrun_session_prepare(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_planned_bytes(s, &b1), ONNXRUN_OK, onnxrun_session_error(s));
	b3 = run_up_batch(env, s, &u, 3, 15);
	assert_true(b3 > b1);
	onnxrun_session_free(s);
	onnxrun_tensor_free(t1);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- multi-node graphs ---- */

/*
 * x [1,4,2,2] -> A: DepthToSpace(2) -> t [1,1,4,4]
 *   t -> B: ConvTranspose(w1 [1,2,2,2]) strides 2 -> y1 [1,2,8,8]
 *   t -> C: ConvTranspose(w2 [1,3,3,3], b2 [3])   -> y2 [1,3,6,6]
 */
static void test_value_consumed_twice(void **state)
{
	const uint64_t seed = 21;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *tx;
	float x[16], t[16], w1[8], w2[27], b2[3], y1[128], y2[108];
	struct th_ct2d pb = { 1, 1, 4, 4, 2, 2, 2, 1, 2, 2, 1, 1, 0, 0, 8, 8 };
	struct th_ct2d pc = { 1, 1, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 0, 0, 6, 6 };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 16);
	th_fill(&rng, w1, 8);
	th_fill(&rng, w2, 27);
	th_fill(&rng, b2, 3);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,2");
	mb_output(m, "y1", MB_FLOAT, NULL);
	mb_output(m, "y2", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w1", D4(1, 2, 2, 2), w1);
	mb_initializer_f32(m, "w2", D4(1, 3, 3, 3), w2);
	mb_initializer_f32(m, "b2", 1, (const int64_t[]){ 3 }, b2);
	n = mb_node(m, "A", "DepthToSpace", "", "x", "t");
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, "B", "ConvTranspose", "", "t,w1", "y1");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	mb_node(m, "C", "ConvTranspose", "", "t,w2,b2", "y2");
	model = th_load_ok(env, m);
	s = new_session(env, model);
	tx = th_tensor_f32(env, D4(1, 4, 2, 2), x);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	th_ref_depth_to_space(x, t, sizeof(float), 1, 4, 2, 2, 2, false);
	th_ref_conv_transpose2d(&pb, t, w1, NULL, y1);
	th_ref_conv_transpose2d(&pc, t, w2, b2, y2);
	assert_int_equal(onnxrun_model_output_count(model), 2);
	th_assert_shape(output(s, 0), ONNXRUN_DTYPE_FLOAT, D4(1, 2, 8, 8));
	th_assert_close(output(s, 0), y1, 128, seed, "y1");
	th_assert_shape(output(s, 1), ONNXRUN_DTYPE_FLOAT, D4(1, 3, 6, 6));
	th_assert_close(output(s, 1), y2, 108, seed, "y2");
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/*
 * x [1,4,4,4] -> A: ConvTranspose 1x1 (w [4,4,1,1]) -> t (graph output 0)
 *   -> B, C, D: DepthToSpace(1) copies -> u -> v -> y (graph output 1)
 * Same sizes everywhere, so a planner that forgets t is an output would reuse its slot.
 */
static void test_intermediate_is_output(void **state)
{
	const uint64_t seed = 22;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *tx;
	float x[64], w[16], t[64];
	struct th_ct2d p = { 1, 4, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 0, 0, 4, 4 };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 64);
	th_fill(&rng, w, 16);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,4,4");
	mb_output(m, "t", MB_FLOAT, NULL);
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(4, 4, 1, 1), w);
	mb_node(m, "A", "ConvTranspose", "", "x,w", "t");
	n = mb_node(m, "B", "DepthToSpace", "", "t", "u");
	mb_attr_int(n, "blocksize", 1);
	n = mb_node(m, "C", "DepthToSpace", "", "u", "v");
	mb_attr_int(n, "blocksize", 1);
	n = mb_node(m, "D", "DepthToSpace", "", "v", "y");
	mb_attr_int(n, "blocksize", 1);
	model = th_load_ok(env, m);
	s = new_session(env, model);
	tx = th_tensor_f32(env, D4(1, 4, 4, 4), x);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	th_ref_conv_transpose2d(&p, x, w, NULL, t);
	th_assert_close(output(s, 0), t, 64, seed, "t (intermediate and output)");
	th_assert_close(output(s, 1), t, 64, seed, "y");
	assert_ptr_not_equal(onnxrun_tensor_data(output(s, 0)), onnxrun_tensor_data(output(s, 1)));
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* outputs [x, y, x2]: x is a graph input listed as an output too; y = DepthToSpace(x). */
static void test_output_is_input(void **state)
{
	const uint64_t seed = 23;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *tx;
	float x[24], y[24];
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 24);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, "1,1,4,6");
	n = mb_node(m, "A", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	mb_attr_string(n, "mode", "CRD");
	model = th_load_ok(env, m);
	assert_int_equal(onnxrun_model_input_count(model), 1);
	assert_int_equal(onnxrun_model_output_count(model), 2);
	s = new_session(env, model);
	tx = th_tensor_f32(env, D4(1, 4, 2, 3), x);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	th_ref_depth_to_space(x, y, sizeof(float), 1, 4, 2, 3, 2, true);
	th_assert_shape(output(s, 0), ONNXRUN_DTYPE_FLOAT, D4(1, 4, 2, 3));
	assert_memory_equal(onnxrun_tensor_data(output(s, 0)), x, sizeof x);
	th_assert_close(output(s, 1), y, 24, seed, "y");
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/*
 * Strings through two nodes: s [1,4,1,2] -> DepthToSpace(2, CRD) -> mid -> DepthToSpace(1) -> y.
 * Run twice with different contents (no stale or leaked strings under valgrind).
 */
static void test_string_pipeline(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *tx = NULL;
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	char in[8][32], want[8][32];
	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "s", MB_STRING, "1,4,1,2");
	mb_output(m, "y", MB_STRING, "1,1,2,4");
	n = mb_node(m, "A", "DepthToSpace", "", "s", "mid");
	mb_attr_int(n, "blocksize", 2);
	mb_attr_string(n, "mode", "CRD");
	n = mb_node(m, "B", "DepthToSpace", "", "mid", "y");
	mb_attr_int(n, "blocksize", 1);
	model = th_load_ok(env, m);
	s = new_session(env, model);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_STRING, D4(1, 4, 1, 2), &tx), ONNXRUN_OK);
	for (int run = 0; run < 2; run++) {
		const struct onnxrun_string *y;
		for (int i = 0; i < 8; i++) {
			snprintf(in[i], sizeof in[i], run ? "second run, element %d" : "e%d", i);
			assert_int_equal(onnxrun_tensor_set_string(tx, i, in[i], strlen(in[i])), ONNXRUN_OK);
		}
		th_ref_depth_to_space(in, want, sizeof in[0], 1, 4, 1, 2, 2, true);
		SET_OK(s, 0, tx);
		RUN_OK(s);
		th_assert_shape(output(s, 0), ONNXRUN_DTYPE_STRING, D4(1, 1, 2, 4));
		y = onnxrun_tensor_data(output(s, 0));
		for (int i = 0; i < 8; i++)
			if (y[i].size != strlen(want[i]) || memcmp(y[i].data, want[i], y[i].size))
				fail_msg("run %d: y[%d] = '%s', expected '%s'", run, i, y[i].data ? y[i].data : "(null)",
				         want[i]);
	}
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Output tensors carry the name of their graph value. */
static void test_output_names(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 12));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *tx = th_tensor_f32(env, D4(1, 4, 3, 3), NULL);
	(void)state;
	SET_OK(s, 0, tx);
	RUN_OK(s);
	assert_string_equal(onnxrun_tensor_name(output(s, 0)), "y");
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- input checks ---- */

static void test_wrong_dtype(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 5));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *t = NULL;
	(void)state;
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_DOUBLE, D4(1, 4, 3, 3), &t), ONNXRUN_OK);
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, t), ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'x'");
	TH_ASSERT_STATUS(onnxrun_session_set_input_by_name(s, "x", t), ONNXRUN_ERROR_INVALID_INPUT,
	                 onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'x'");
	onnxrun_tensor_free(t);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_wrong_shape(void **state)
{
	static const struct {
		int32_t rank;
		int64_t dims[5];
	} cases[] = {
		{ 3, { 4, 3, 3 } },       /* rank 3 */
		{ 5, { 1, 4, 3, 3, 1 } }, /* rank 5 */
		{ 4, { 1, 5, 3, 3 } },    /* C differs */
		{ 4, { 1, 4, 4, 3 } },    /* H differs */
		{ 4, { 1, 4, 3, 2 } },    /* W differs */
	};
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 6));
	struct onnxrun_session *s = new_session(env, model);
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_tensor *t = th_tensor_f32(env, cases[i].rank, cases[i].dims, NULL);
		enum onnxrun_status st = onnxrun_session_set_input(s, 0, t);
		if (st != ONNXRUN_ERROR_INVALID_INPUT)
			fail_msg("case %zu: status %s (%s), expected invalid input", i, onnxrun_status_str(st),
			         onnxrun_session_error(s));
		TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'x'");
		onnxrun_tensor_free(t);
	}
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* The first failure among set_input, run must be INVALID_INPUT mentioning `needle`. */
static void expect_set_or_run_fails(struct onnxrun_session *s, size_t i, const struct onnxrun_tensor *t,
                                    const char *needle)
{
	enum onnxrun_status st = onnxrun_session_set_input(s, i, t);
	if (st == ONNXRUN_OK)
		st = onnxrun_session_run(s);
	TH_ASSERT_STATUS(st, ONNXRUN_ERROR_INVALID_INPUT, onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), needle);
}

static void test_bind_dim(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 7));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *t3 = th_tensor_f32(env, D4(3, 4, 3, 3), NULL);
	struct onnxrun_value_info vi;
	uint64_t bytes = 0;
	(void)state;
	/* bound dims alone let prepare infer and plan */
	TH_ASSERT_STATUS(onnxrun_session_bind_dim(s, "N", 2), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_prepare(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_value_info(s, "y", &vi), ONNXRUN_OK, onnxrun_session_error(s));
	assert_int_equal(vi.rank, 4);
	assert_int_equal(vi.dims[0].value, 2);
	assert_int_equal(vi.dims[3].value, 10);
	TH_ASSERT_STATUS(onnxrun_session_planned_bytes(s, &bytes), ONNXRUN_OK, onnxrun_session_error(s));
	assert_true(bytes >= 2 * 200 * sizeof(float));
	/* an input that disagrees with the bound dim */
	expect_set_or_run_fails(s, 0, t3, "N");
	/* bad bindings */
	assert_int_equal(onnxrun_session_bind_dim(s, "N", -1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_bind_dim(s, NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_not_equal(onnxrun_session_bind_dim(s, "no_such_dim", 1), ONNXRUN_OK);
	onnxrun_tensor_free(t3);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Two independent DepthToSpace nodes (blocksize 2): input a -> output ya (node "P"),
 * input b -> output yb (node "Q"); both inputs declared with `shape`. */
static Onnx__ModelProto *two_d2s_model(const char *a, const char *ya, const char *b, const char *yb,
                                       const char *shape)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	mb_input(m, a, MB_FLOAT, shape);
	mb_input(m, b, MB_FLOAT, shape);
	mb_output(m, ya, MB_FLOAT, NULL);
	mb_output(m, yb, MB_FLOAT, NULL);
	n = mb_node(m, "P", "DepthToSpace", "", a, ya);
	mb_attr_int(n, "blocksize", 2);
	n = mb_node(m, "Q", "DepthToSpace", "", b, yb);
	mb_attr_int(n, "blocksize", 2);
	return m;
}

/* One dim_param shared by two inputs must get one value. */
static void test_shared_dim_conflict(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *a = th_tensor_f32(env, D4(2, 4, 1, 1), NULL);
	struct onnxrun_tensor *b = th_tensor_f32(env, D4(3, 4, 1, 1), NULL);
	enum onnxrun_status st;
	(void)state;
	model = th_load_ok(env, two_d2s_model("p", "yp", "q", "yq", "N,4,1,1"));
	s = new_session(env, model);
	st = onnxrun_session_set_input(s, 0, a);
	TH_ASSERT_STATUS(st, ONNXRUN_OK, onnxrun_session_error(s));
	expect_set_or_run_fails(s, 1, b, "N");
	onnxrun_session_free(s);
	onnxrun_tensor_free(a);
	onnxrun_tensor_free(b);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_missing_input(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *a = th_tensor_f32(env, D4(1, 4, 1, 1), NULL);
	enum onnxrun_status st;
	(void)state;
	model = th_load_ok(env, two_d2s_model("first", "y1", "second_input", "y2", "1,4,1,1"));
	s = new_session(env, model);
	st = onnxrun_session_run(s);
	assert_int_not_equal(st, ONNXRUN_OK);
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'first'");
	SET_OK(s, 0, a);
	st = onnxrun_session_run(s);
	if (st != ONNXRUN_ERROR_INVALID_INPUT && st != ONNXRUN_ERROR_INVALID_ARGUMENT)
		fail_msg("missing input: status %s (%s)", onnxrun_status_str(st), onnxrun_session_error(s));
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'second_input'");
	onnxrun_session_free(s);
	onnxrun_tensor_free(a);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_bad_arguments(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 8));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *tx = th_tensor_f32(env, D4(1, 4, 3, 3), NULL);
	const struct onnxrun_tensor *y = NULL;
	struct onnxrun_value_info vi;
	uint64_t bytes;
	(void)state;
	/* no output before the first run */
	assert_int_not_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 1, tx), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_input(s, 0, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_input(NULL, 0, tx), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_input_by_name(s, NULL, tx), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_run(NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_prepare(NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	TH_ASSERT_STATUS(onnxrun_session_output(s, 1, &y), ONNXRUN_ERROR_INVALID_ARGUMENT, onnxrun_session_error(s));
	assert_int_equal(onnxrun_session_output(s, (size_t)-1, &y), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_output(s, 0, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_output(NULL, 0, &y), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_value_info(s, "no_such_value", &vi), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_planned_bytes(s, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_planned_bytes(NULL, &bytes), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_threads(s, 0), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_threads(s, -3), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_set_threads(NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	/* the session still works after all that */
	RUN_OK(s);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- planner ----
 * x [1,4,8,8] -> A: ConvTranspose 1x1 4->16 -> t1 [1,16,8,8] (4096 B)
 *             -> B: ConvTranspose 1x1 16->1 -> t2 [1,1,8,8]  (256 B)
 *             -> C: ConvTranspose 1x1 1->16 -> t3 [1,16,8,8] (4096 B)
 *             -> D: ConvTranspose 1x1 16->1 -> y  [1,1,8,8]  (256 B)
 * t1 is dead once B ran, so t3 can take its place.
 */
static void test_planner_reuse(void **state)
{
	const uint64_t seed = 31;
	struct th_rng rng;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *tx;
	float x[256], wa[64], wb[16], wc[16], wd[16], t1[1024], t2[64], t3[1024], y[64];
	struct th_ct2d pa = { 1, 4, 8, 8, 16, 1, 1, 1, 1, 1, 1, 1, 0, 0, 8, 8 };
	struct th_ct2d pb = { 1, 16, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 8, 8 };
	struct th_ct2d pc = { 1, 1, 8, 8, 16, 1, 1, 1, 1, 1, 1, 1, 0, 0, 8, 8 };
	const uint64_t s1 = 1024 * 4, s2 = 64 * 4, s3 = 1024 * 4;
	uint64_t bytes = 0, lower, upper;
	Onnx__ModelProto *m = mb_model(8);
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, x, 256);
	th_fill(&rng, wa, 64);
	th_fill(&rng, wb, 16);
	th_fill(&rng, wc, 16);
	th_fill(&rng, wd, 16);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,8,8");
	mb_output(m, "y", MB_FLOAT, "1,1,8,8");
	mb_initializer_f32(m, "wa", D4(4, 16, 1, 1), wa);
	mb_initializer_f32(m, "wb", D4(16, 1, 1, 1), wb);
	mb_initializer_f32(m, "wc", D4(1, 16, 1, 1), wc);
	mb_initializer_f32(m, "wd", D4(16, 1, 1, 1), wd);
	mb_node(m, "A", "ConvTranspose", "", "x,wa", "t1");
	mb_node(m, "B", "ConvTranspose", "", "t1,wb", "t2");
	mb_node(m, "C", "ConvTranspose", "", "t2,wc", "t3");
	mb_node(m, "D", "ConvTranspose", "", "t3,wd", "y");
	model = th_load_ok(env, m);
	s = new_session(env, model);
	tx = th_tensor_f32(env, D4(1, 4, 8, 8), x);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	th_ref_conv_transpose2d(&pa, x, wa, NULL, t1);
	th_ref_conv_transpose2d(&pb, t1, wb, NULL, t2);
	th_ref_conv_transpose2d(&pc, t2, wc, NULL, t3);
	th_ref_conv_transpose2d(&pb, t3, wd, NULL, y);
	th_assert_close(output(s, 0), y, 64, seed, "y");

	TH_ASSERT_STATUS(onnxrun_session_planned_bytes(s, &bytes), ONNXRUN_OK, onnxrun_session_error(s));
	/* B reads t1 while writing t2; C reads t2 while writing t3 */
	lower = s1 + s2 > s2 + s3 ? s1 + s2 : s2 + s3;
	upper = s1 + s2 + s3; /* no reuse at all */
	print_message("planned %llu bytes; live-pair bound %llu, no-reuse sum %llu\n", (unsigned long long)bytes,
	              (unsigned long long)lower, (unsigned long long)upper);
	if (bytes < lower)
		fail_msg("planned %llu bytes < %llu that t2 and t3 need together", (unsigned long long)bytes,
		         (unsigned long long)lower);
	if (bytes >= upper)
		fail_msg("planned %llu bytes >= %llu, the sum of all intermediates: no buffer reuse",
		         (unsigned long long)bytes, (unsigned long long)upper);
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- determinism and threads ---- */

static void test_runs_identical(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 9));
	struct onnxrun_session *s = new_session(env, model);
	float x[4 * 36], first[4 * 200];
	struct onnxrun_tensor *tx;
	struct th_rng rng;
	static const int threads[] = { 1, 2, 3, 4, 8 };
	(void)state;
	th_rng_seed(&rng, 9);
	th_fill(&rng, x, 4 * 36);
	tx = th_tensor_f32(env, D4(4, 4, 3, 3), x);
	SET_OK(s, 0, tx);
	RUN_OK(s);
	memcpy(first, onnxrun_tensor_data(output(s, 0)), sizeof first);
	RUN_OK(s);
	assert_memory_equal(onnxrun_tensor_data(output(s, 0)), first, sizeof first);
	for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
		TH_ASSERT_STATUS(onnxrun_session_set_threads(s, threads[i]), ONNXRUN_OK, onnxrun_session_error(s));
		RUN_OK(s);
		if (memcmp(onnxrun_tensor_data(output(s, 0)), first, sizeof first))
			fail_msg("%d threads: output differs bitwise from the first run", threads[i]);
	}
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* One model shared by threads, each with its own session: results match the reference.
 * Tensors are made before the threads start (tensor creation writes the env's message). */
struct worker {
	const struct onnxrun_model *model;
	const struct onnxrun_tensor *tx;
	const float *want;
	size_t n_out;
	int errors;
	char msg[256];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y = NULL;
	if (onnxrun_session_create(w->model, &s)) {
		w->errors++;
		snprintf(w->msg, sizeof w->msg, "session_create failed");
		return NULL;
	}
	for (int iter = 0; iter < 20 && !w->errors; iter++) {
		const float *got;
		if (onnxrun_session_set_input(s, 0, w->tx) || onnxrun_session_run(s) ||
		    onnxrun_session_output(s, 0, &y)) {
			w->errors++;
			snprintf(w->msg, sizeof w->msg, "iteration %d: %s", iter, onnxrun_session_error(s));
			break;
		}
		got = onnxrun_tensor_data(y);
		for (size_t i = 0; i < w->n_out; i++) {
			if (fabsf(got[i] - w->want[i]) > 1e-5f + 1e-5f * fabsf(w->want[i])) {
				w->errors++;
				snprintf(w->msg, sizeof w->msg, "iteration %d element %zu: %g, expected %g", iter, i,
				         (double)got[i], (double)w->want[i]);
				break;
			}
		}
	}
	onnxrun_session_free(s);
	return NULL;
}

static void test_shared_model_threads(void **state)
{
#if defined(__EMSCRIPTEN__)
	/* the WebAssembly build has no threads (README, Platforms) */
	(void)state;
	skip();
#endif
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 13));
	struct worker w[4];
	struct onnxrun_tensor *tx[4];
	float *x[4], *want[4];
	pthread_t tid[4];
	(void)state;
	for (int i = 0; i < 4; i++) {
		int64_t batch = 1 + i;
		struct th_rng rng;
		th_rng_seed(&rng, 500 + (uint64_t)i);
		x[i] = malloc((size_t)batch * 36 * sizeof(float));
		th_fill(&rng, x[i], (size_t)batch * 36);
		want[i] = up_reference(&u, batch, x[i]);
		tx[i] = th_tensor_f32(env, D4(batch, 4, 3, 3), x[i]);
		w[i] = (struct worker){ model, tx[i], want[i], (size_t)batch * 200, 0, "" };
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	for (int i = 0; i < 4; i++)
		if (w[i].errors)
			fail_msg("thread %d (batch %d, seed %d): %s", i, 1 + i, 500 + i, w[i].msg);
	for (int i = 0; i < 4; i++) {
		onnxrun_tensor_free(tx[i]);
		free(x[i]);
		free(want[i]);
	}
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Only graph inputs can be bound: not intermediates, outputs or unknown names. */
static void test_bind_non_input(void **state)
{
	struct up_model u;
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 14));
	struct onnxrun_session *s = new_session(env, model);
	struct onnxrun_tensor *t = th_tensor_f32(env, D4(1, 8, 5, 5), NULL);
	(void)state;
	assert_int_not_equal(onnxrun_session_set_input_by_name(s, "t", t), ONNXRUN_OK);
	TH_ASSERT_MSG_HAS(onnxrun_session_error(s), "'t'");
	assert_int_not_equal(onnxrun_session_set_input_by_name(s, "y", t), ONNXRUN_OK);
	assert_int_not_equal(onnxrun_session_set_input_by_name(s, "w", t), ONNXRUN_OK);
	onnxrun_session_free(s);
	onnxrun_tensor_free(t);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* ---- allocation failures ---- */

static void test_session_out_of_memory(void **state)
{
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct up_model u;
	struct onnxrun_model *model = th_load_ok(env, up_model(&u, 10));
	struct onnxrun_tensor *tx = th_tensor_f32(env, D4(2, 4, 3, 3), NULL);
	long base = a.live, k, wrong = 0, bad_at = -1, leak_at = -1, stuck_at = -1;
	char bad_msg[1200] = "", stuck_msg[1200] = "";
	bool done = false;
	(void)state;
	for (k = 0; k < 100000 && !done; k++) {
		struct onnxrun_session *s = NULL;
		enum onnxrun_status st;
		bool bound = false;
		a.count = 0;
		a.fail_at = k;
		st = onnxrun_session_create(model, &s);
		if (st == ONNXRUN_OK) {
			st = onnxrun_session_set_input(s, 0, tx);
			bound = st == ONNXRUN_OK;
			if (bound)
				st = onnxrun_session_run(s);
		}
		a.fail_at = -1;
		if (st == ONNXRUN_OK) {
			done = true;
		} else if (st != ONNXRUN_ERROR_OUT_OF_MEMORY) {
			wrong++;
			if (bad_at < 0) {
				bad_at = k;
				snprintf(bad_msg, sizeof bad_msg, "%s (%s)", onnxrun_status_str(st),
				         s ? onnxrun_session_error(s) : onnxrun_env_error(env));
			}
		}
		/* a run that failed for memory leaves a usable session */
		if (bound && st != ONNXRUN_OK) {
			enum onnxrun_status again = onnxrun_session_run(s);
			if (again != ONNXRUN_OK && stuck_at < 0) {
				stuck_at = k;
				snprintf(stuck_msg, sizeof stuck_msg, "%s (%s)", onnxrun_status_str(again),
				         onnxrun_session_error(s));
			}
		}
		onnxrun_session_free(s);
		if (a.live != base && leak_at < 0)
			leak_at = k;
		a.live = base;
	}
	assert_true(done);
	if (bad_at >= 0)
		fail_msg("%ld of %ld failed allocations gave another status than out of memory; first at "
		         "allocation %ld: %s", wrong, k - 1, bad_at, bad_msg);
	if (stuck_at >= 0)
		fail_msg("allocation %ld failed in run; the next run gave %s", stuck_at, stuck_msg);
	if (leak_at >= 0)
		fail_msg("failing allocation %ld leaked memory", leak_at);
	onnxrun_tensor_free(tx);
	onnxrun_model_free(model);
	assert_int_equal(a.live, 1);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbolic_batch_replans),
		cmocka_unit_test(test_batch_zero),
		cmocka_unit_test(test_input_is_borrowed),
		cmocka_unit_test(test_two_sessions),
		cmocka_unit_test(test_prepare_then_reshape),
		cmocka_unit_test(test_value_consumed_twice),
		cmocka_unit_test(test_intermediate_is_output),
		cmocka_unit_test(test_output_is_input),
		cmocka_unit_test(test_string_pipeline),
		cmocka_unit_test(test_output_names),
		cmocka_unit_test(test_wrong_dtype),
		cmocka_unit_test(test_wrong_shape),
		cmocka_unit_test(test_bind_dim),
		cmocka_unit_test(test_shared_dim_conflict),
		cmocka_unit_test(test_missing_input),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_planner_reuse),
		cmocka_unit_test(test_runs_identical),
		cmocka_unit_test(test_shared_model_threads),
		cmocka_unit_test(test_bind_non_input),
		cmocka_unit_test(test_session_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
