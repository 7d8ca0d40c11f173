/*
 * test_oom.c - allocation-failure sweeps: for every N, an allocator that fails the N-th
 * allocation (and only it) over env creation, model load, session creation, prepare and
 * two runs of a representative model. Each attempt must end in OK or a clean
 * OUT_OF_MEMORY with a message, and leave no block allocated (counting allocator). The
 * sweep stops at the first N past the last allocation made. Models: a single op
 * (ConvTranspose backend case), a multi-node graph with fan-out (models/multi_use),
 * external data (models/external_data), a symbolic batch (models/symbolic_batch, fed a
 * batch of 2) and DepthToSpace on int64 (models/d2s_dcr_int64). Each sweep runs with one
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_single_op),
		cmocka_unit_test(test_oom_multi_node),
		cmocka_unit_test(test_oom_external_data),
		cmocka_unit_test(test_oom_symbolic_batch),
		cmocka_unit_test(test_oom_d2s_int64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
