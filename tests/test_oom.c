/*
 * test_oom.c - allocation-failure sweeps: for every N, an allocator that fails the N-th
 * allocation (and only it) over env creation, model load, session creation, prepare and
 * two runs of a representative model. Each attempt must end in OK or a clean
 * OUT_OF_MEMORY with a message, and leave no block allocated (counting allocator). The
 * sweep stops at the first N past the last allocation made. Models: a single op
 * (ConvTranspose backend case), a multi-node graph with fan-out (models/multi_use),
 * external data (models/external_data), a symbolic batch (models/symbolic_batch, fed a
 * batch of 2), DepthToSpace on int64 (models/d2s_dcr_int64), and ConvTranspose in float64
 * and float16 (written by the test: their fast paths allocate scratch), and float32 with W
 * released at load and rebuilt for the scatter on every run. Each sweep runs with one
 * thread and again with two (the thread pool's allocations are swept too).
 */
#include "model_builder.c"

struct oom_case {
	const char *dir; /* folder with model.onnx and test_data_set_0 */
	long attempts;   /* filled by the sweep, for the summary */
	int threads;
};

/* Loads the inputs of test_data_set_0 with a plain env (they are borrowed by the session). */
static size_t load_inputs(struct onnxrun_env *plain, const char *dir, size_t n, struct onnxrun_tensor **out)
{
	char path[1024];
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
		TH_ASSERT_STATUS(onnxrun_tensor_load_pb(plain, path, &out[i]), ONNXRUN_OK, onnxrun_env_error(plain));
	}
	return n;
}

/* One attempt with allocation number fail_at failing; returns the status and checks that
 * a failure is OUT_OF_MEMORY with a message. */
static enum onnxrun_status attempt(struct th_alloc *a, const char *dir, int threads,
                                   struct onnxrun_tensor **inputs, size_t n_inputs)
{
	struct onnxrun_allocator al = { a, th_alloc_fn, th_free_fn };
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *y;
	const char *msg = "";
	char path[1024];
	enum onnxrun_status st;
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if ((st = onnxrun_env_create(&al, &env)))
		return st; /* nothing to report a message on */
	if ((st = onnxrun_model_load_file(env, path, &model))) {
		msg = onnxrun_env_error(env);
	} else if ((st = onnxrun_session_create(model, &s))) {
		msg = "session_create: out of memory";
	} else if ((st = onnxrun_session_set_threads(s, threads))) {
		msg = onnxrun_session_error(s);
	} else {
		for (size_t i = 0; !st && i < n_inputs; i++)
			st = onnxrun_session_set_input(s, i, inputs[i]);
		if (!st)
			st = onnxrun_session_prepare(s);
		if (!st)
			st = onnxrun_session_run(s);
		if (!st)
			st = onnxrun_session_run(s);
		if (!st)
			st = onnxrun_session_output(s, 0, &y);
		msg = onnxrun_session_error(s);
	}
	if (st && st != ONNXRUN_ERROR_OUT_OF_MEMORY)
		fail_msg("%s: allocation %ld failed and gave status %d (%s): %s", dir, a->fail_at, (int)st,
		         onnxrun_status_str(st), msg);
	if (st && !msg[0])
		fail_msg("%s: allocation %ld failed without a message", dir, a->fail_at);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return st;
}

static void sweep(struct oom_case *c)
{
	struct onnxrun_env *plain = th_env();
	struct onnxrun_model *probe = NULL;
	struct onnxrun_tensor *inputs[8] = { NULL };
	char path[1024];
	size_t n_inputs;
	struct th_alloc a;
	long failures = 0;
	snprintf(path, sizeof path, "%s/model.onnx", c->dir);
	TH_ASSERT_STATUS(onnxrun_model_load_file(plain, path, &probe), ONNXRUN_OK, onnxrun_env_error(plain));
	n_inputs = load_inputs(plain, c->dir, onnxrun_model_input_count(probe), inputs);
	onnxrun_model_free(probe);
	for (long n = 0;; n++) {
		enum onnxrun_status st;
		memset(&a, 0, sizeof a);
		a.fail_at = n;
		st = attempt(&a, c->dir, c->threads, inputs, n_inputs);
		if (a.live != 0)
			fail_msg("%s: %ld blocks (%zu bytes) leaked when allocation %ld failed", c->dir, a.live,
			         a.live_bytes, n);
		if (a.count <= n) { /* allocation n was never made: the whole run succeeded */
			TH_ASSERT_STATUS(st, ONNXRUN_OK, "the run without failures");
			c->attempts = n;
			break;
		}
		failures += st != ONNXRUN_OK;
	}
	print_message("%s (%d thread%s): %ld allocations, each failed once (%ld clean failures)\n", c->dir,
	              c->threads, c->threads == 1 ? "" : "s", c->attempts, failures);
	for (size_t i = 0; i < n_inputs; i++)
		onnxrun_tensor_free(inputs[i]);
	onnxrun_env_free(plain);
}

static void test_oom_single_op(void **state)
{
	struct oom_case c = { ONNXRUN_TEST_DATA "/test_convtranspose", 0, 1 };
	(void)state;
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

static void test_oom_multi_node(void **state)
{
	struct oom_case c = { ONNXRUN_MODELS_DIR "/multi_use", 0, 1 };
	(void)state;
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

static void test_oom_external_data(void **state)
{
	struct oom_case c = { ONNXRUN_MODELS_DIR "/external_data", 0, 1 };
	(void)state;
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

static void test_oom_symbolic_batch(void **state)
{
	struct oom_case c = { ONNXRUN_MODELS_DIR "/symbolic_batch", 0, 1 };
	(void)state;
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

static void test_oom_d2s_int64(void **state)
{
	struct oom_case c = { ONNXRUN_MODELS_DIR "/d2s_dcr_int64", 0, 1 };
	(void)state;
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

/* Writes dir/model.onnx (ConvTranspose k4 s2 p1, 8 -> 8 channels, bias, W and B
 * initializers, dtype float64 or float16) and dir/test_data_set_0/input_0.pb (X 1x8x6x6). */
static void write_convt_case(const char *dir, int mb_dtype, enum onnxrun_dtype dtype)
{
	static const uint16_t f16_steps[17] = { /* -8/16 .. 8/16 in steps of 1/16, as float16 */
		0xB800, 0xB780, 0xB700, 0xB680, 0xB600, 0xB500, 0xB400, 0xB200, 0x0000,
		0x3200, 0x3400, 0x3500, 0x3600, 0x3680, 0x3700, 0x3780, 0x3800 };
	char path[1024], cmd[1200];
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *w = mb_tensor("w", mb_dtype, 4, (const int64_t[]){ 8, 8, 4, 4 });
	Onnx__TensorProto *b = mb_tensor("b", mb_dtype, 1, (const int64_t[]){ 8 });
	Onnx__NodeProto *n;
	struct onnxrun_env *env = th_env();
	struct onnxrun_tensor *x = NULL;
	const size_t es = dtype == ONNXRUN_DTYPE_DOUBLE ? 8 : 2;
	unsigned char wb[8 * 8 * 4 * 4 * 8];
	size_t size;
	uint8_t *buf;
	for (size_t i = 0; i < sizeof wb / es; i++) {
		const int step = (int)(i * 37 % 17);
		const double v = (double)(step - 8) / 16.0;
		if (es == 8)
			memcpy(wb + i * 8, &v, 8);
		else
			memcpy(wb + i * 2, &f16_steps[step], 2);
	}
	mb_tensor_raw_values(w, wb, 8 * 8 * 4 * 4 * es);
	mb_tensor_raw_values(b, wb, 8 * es);
	mb_opset(m, "", 13);
	mb_input(m, "x", mb_dtype, "1,8,6,6");
	mb_output(m, "y", mb_dtype, "1,8,12,12");
	mb_add_initializer(m, w);
	mb_add_initializer(m, b);
	n = mb_node(m, "up", "ConvTranspose", "", "x,w,b", "y");
	mb_attr_ints(n, "strides", 2, (const int64_t[]){ 2, 2 });
	mb_attr_ints(n, "pads", 4, (const int64_t[]){ 1, 1, 1, 1 });
	snprintf(cmd, sizeof cmd, "%s/test_data_set_0", dir);
	assert_int_equal(th_mkdirs(cmd), 0);
	buf = mb_finish(m, &size);
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	assert_int_equal(mb_write_file(path, buf, size), 0);
	free(buf);
	assert_int_equal(onnxrun_tensor_create(env, dtype, 4, (const int64_t[]){ 1, 8, 6, 6 }, &x), ONNXRUN_OK);
	memcpy(onnxrun_tensor_data(x), wb, (size_t)onnxrun_tensor_numel(x) * es);
	snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
	TH_ASSERT_STATUS(onnxrun_tensor_save_pb(env, x, path), ONNXRUN_OK, onnxrun_env_error(env));
	onnxrun_tensor_free(x);
	onnxrun_env_free(env);
}

/* float64 (its own phase path) and float16 (float32 scratch around the float32 path). */
static void test_oom_convt_f64_f16(void **state)
{
	struct oom_case c = { ONNXRUN_TEST_TMP "/oom_convt_f64", 0, 1 };
	(void)state;
	write_convt_case(c.dir, MB_DOUBLE, ONNXRUN_DTYPE_DOUBLE);
	sweep(&c);
	c.threads = 2;
	sweep(&c);
	c.dir = ONNXRUN_TEST_TMP "/oom_convt_f16";
	c.threads = 1;
	write_convt_case(c.dir, MB_FLOAT16, ONNXRUN_DTYPE_FLOAT16);
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

/* float32 ConvTranspose whose W is released at load (kept as packed panels), fed a 1x1 X
 * that the fast path declines: each run rebuilds W for the scatter (an allocation). */
static void test_oom_convt_rebuilt_w(void **state)
{
	struct oom_case c = { ONNXRUN_TEST_TMP "/oom_convt_rebuild", 0, 1 };
	char path[1024], cmd[1200];
	Onnx__ModelProto *m = mb_model(8);
	struct onnxrun_env *env = th_env();
	struct onnxrun_tensor *x = NULL;
	float w[8 * 8 * 4 * 4];
	size_t size;
	uint8_t *buf;
	(void)state;
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		w[i] = (float)((int)(i * 37 % 17) - 8) / 16.0f;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,8,1,1");
	mb_output(m, "y", MB_FLOAT, "1,8,4,4");
	mb_initializer_f32(m, "w", 4, (const int64_t[]){ 8, 8, 4, 4 }, w);
	mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	snprintf(cmd, sizeof cmd, "%s/test_data_set_0", c.dir);
	assert_int_equal(th_mkdirs(cmd), 0);
	buf = mb_finish(m, &size);
	snprintf(path, sizeof path, "%s/model.onnx", c.dir);
	assert_int_equal(mb_write_file(path, buf, size), 0);
	free(buf);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, (const int64_t[]){ 1, 8, 1, 1 }, &x),
	                 ONNXRUN_OK);
	memcpy(onnxrun_tensor_data(x), w, 8 * sizeof(float));
	snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", c.dir);
	TH_ASSERT_STATUS(onnxrun_tensor_save_pb(env, x, path), ONNXRUN_OK, onnxrun_env_error(env));
	onnxrun_tensor_free(x);
	onnxrun_env_free(env);
	sweep(&c);
	c.threads = 2;
	sweep(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_single_op),
		cmocka_unit_test(test_oom_multi_node),
		cmocka_unit_test(test_oom_external_data),
		cmocka_unit_test(test_oom_symbolic_batch),
		cmocka_unit_test(test_oom_d2s_int64),
		cmocka_unit_test(test_oom_convt_f64_f16),
		cmocka_unit_test(test_oom_convt_rebuilt_w),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
