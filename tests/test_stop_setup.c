/*
 * test_stop_setup.c - cancel and deadlines cover the whole run, not only the nodes' work
 * items: prepare (shape inference of a long graph) stops at a cancel made in the middle of
 * it; an explicit onnxrun_session_prepare honours a pending cancel; prepare leaves node
 * outputs untouched (a 256 MiB output costs no resident memory before its node writes it:
 * zeroing it took seconds before the first stop check on a 1 GiB output); weights fed at
 * run time stop being packed once the run is cancelled; loads stop at a pending cancel, at
 * one made by an op's init in the middle of the graph, and at a load deadline. Each checks
 * work done or state, never time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cmocka.h>

#include "model_builder.h"
#include "onnxrun.h"

/* ---- Step (domain com.test): y = x; its infer cancels the session at node `cancel_at` ---- */

static struct {
	struct onnxrun_session *session;
	int cancel_at; /* node index whose infer cancels; -1: none */
	int infers;    /* concrete infers seen (prepare) */
	int computes;
	int64_t out_numel; /* Fill's output size */
} st;

static enum onnxrun_status step_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	const char *name = onnxrun_op_node_name(ctx);
	(void)n_in;
	(void)n_out;
	out[0] = in[0];
	if (in[0].shape.rank >= 0 && in[0].shape.dims[0] >= 0) { /* concrete: at prepare */
		st.infers++;
		if (st.cancel_at >= 0 && atoi(name + 1) == st.cancel_at)
			onnxrun_session_cancel(st.session);
	}
	return ONNXRUN_OK;
}

static enum onnxrun_status step_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	st.computes++;
	memcpy(onnxrun_tensor_data(out[0]), onnxrun_tensor_data(in[0]), onnxrun_tensor_nbytes(in[0]));
	return ONNXRUN_OK;
}

static const struct onnxrun_op step_op = { "com.test", "Step", 1, step_infer, step_compute, NULL, NULL, NULL, NULL };

#define STEPS 1000

/* x [4] -> Step n0 -> ... -> Step n999 -> y */
static struct onnxrun_model *step_model(struct onnxrun_env *env)
{
	Onnx__ModelProto *mp = mb_model(8);
	struct onnxrun_model *m = NULL;
	char in[16], out[16], name[16];
	size_t size;
	uint8_t *bytes;
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "4");
	mb_output(mp, "y", MB_FLOAT, "4");
	for (int k = 0; k < STEPS; k++) {
		snprintf(in, sizeof in, k ? "v%d" : "x", k - 1);
		snprintf(out, sizeof out, k == STEPS - 1 ? "y" : "v%d", k);
		snprintf(name, sizeof name, "n%d", k);
		mb_node(mp, name, "Step", "com.test", in, out);
	}
	bytes = mb_finish(mp, &size);
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	free(bytes);
	return m;
}

/* A cancel made while prepare infers node 500 of 1,000 stops it within 64 nodes (no node
 * computed); an explicit prepare with a cancel pending stops before inferring anything;
 * both clear the request, and the next run is complete. */
static void test_prepare_stops(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	const int64_t four = 4;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &step_op), ONNXRUN_OK);
	m = step_model(env);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 1, &four, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	memset(&st, 0, sizeof st);
	st.session = s;
	st.cancel_at = 500;
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
	assert_string_equal(onnxrun_session_error(s),
	                    "run cancelled while preparing (shape inference and memory planning) (onnxrun_session_cancel)");
	assert_true(st.infers > 500 && st.infers <= 501 + 64);
	assert_int_equal(st.computes, 0);
	/* explicit prepare with a pending request */
	st.cancel_at = -1;
	st.infers = 0;
	onnxrun_session_cancel(s);
	assert_int_equal(onnxrun_session_prepare(s), ONNXRUN_ERROR_CANCELLED);
	assert_int_equal(st.infers, 0);
	assert_int_equal(onnxrun_session_prepare(s), ONNXRUN_OK); /* the request was consumed */
	assert_int_equal(st.infers, STEPS);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(st.computes, STEPS);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* ---- loads ---- */

/* Mark (domain com.test): y = x; its init counts calls and cancels the env's load at
 * node `cancel_at`. */
static struct {
	struct onnxrun_env *env;
	int inits, cancel_at;
} ld;

static enum onnxrun_status mark_init(struct onnxrun_op_context *ctx, void **state)
{
	*state = NULL;
	if (ld.inits++ == ld.cancel_at)
		onnxrun_env_cancel_load(ld.env);
	(void)ctx;
	return ONNXRUN_OK;
}

static const struct onnxrun_op mark_op = { "com.test", "Mark", 1, step_infer, step_compute, mark_init, NULL, NULL, NULL };

/* x [4] -> Mark n0 -> ... -> Mark n(count-1) -> y */
static uint8_t *mark_model(int count, size_t *size)
{
	Onnx__ModelProto *mp = mb_model(8);
	char in[16], out[16], name[16];
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "4");
	mb_output(mp, "y", MB_FLOAT, "4");
	for (int k = 0; k < count; k++) {
		snprintf(in, sizeof in, k ? "v%d" : "x", k - 1);
		snprintf(out, sizeof out, k == count - 1 ? "y" : "v%d", k);
		snprintf(name, sizeof name, "n%d", k);
		mb_node(mp, name, "Mark", "com.test", in, out);
	}
	return mb_finish(mp, size);
}

/* A pending request stops a load before it builds anything; a request made by node 100's
 * init stops the load before node 101's; a load deadline stops it; each clears the
 * request, and the next load works. UINT64_MAX is no deadline. */
static void test_load_stops(void **state)
{
	struct onnxrun_model *m = NULL;
	size_t size;
	uint8_t *bytes = mark_model(300, &size);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &ld.env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(ld.env, &mark_op), ONNXRUN_OK);
	ld.cancel_at = -1;
	/* pending */
	onnxrun_env_cancel_load(ld.env);
	assert_int_equal(onnxrun_model_load_buffer(ld.env, bytes, size, NULL, &m), ONNXRUN_ERROR_CANCELLED);
	assert_null(m);
	assert_string_equal(onnxrun_env_error(ld.env), "load cancelled (onnxrun_env_cancel_load)");
	assert_int_equal(ld.inits, 0);
	/* withdrawn */
	onnxrun_env_cancel_load(ld.env);
	onnxrun_env_clear_cancel_load(ld.env);
	assert_int_equal(onnxrun_model_load_buffer(ld.env, bytes, size, NULL, &m), ONNXRUN_OK);
	assert_int_equal(ld.inits, 300);
	onnxrun_model_free(m);
	m = NULL;
	/* from node 100's init */
	ld.inits = 0;
	ld.cancel_at = 100;
	assert_int_equal(onnxrun_model_load_buffer(ld.env, bytes, size, NULL, &m), ONNXRUN_ERROR_CANCELLED);
	assert_null(m);
	assert_int_equal(ld.inits, 101);
	assert_string_equal(onnxrun_env_error(ld.env), "load cancelled (onnxrun_env_cancel_load)");
	/* the request was consumed */
	ld.inits = 0;
	ld.cancel_at = -1;
	assert_int_equal(onnxrun_model_load_buffer(ld.env, bytes, size, NULL, &m), ONNXRUN_OK);
	onnxrun_model_free(m);
	m = NULL;
	/* a deadline already passed when the load starts (1 us; the check after parsing
	 * sees it at the latest) */
	ld.inits = 0;
	assert_int_equal(onnxrun_env_set_load_deadline(ld.env, 1), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(ld.env, bytes, size, NULL, &m), ONNXRUN_ERROR_CANCELLED);
	assert_int_equal(ld.inits, 0);
	if (strncmp(onnxrun_env_error(ld.env), "deadline of 1e-06 s exceeded (onnxrun_env_set_load_deadline): load stopped after ",
	            strlen("deadline of 1e-06 s exceeded (onnxrun_env_set_load_deadline): load stopped after ")))
		fail_msg("%s", onnxrun_env_error(ld.env));
	assert_int_equal(onnxrun_env_set_load_deadline(ld.env, UINT64_MAX), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(ld.env, bytes, size, NULL, &m), ONNXRUN_OK);
	onnxrun_model_free(m);
	assert_int_equal(onnxrun_env_set_load_deadline(NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_env_cancel_load(NULL);
	onnxrun_env_clear_cancel_load(NULL);
	free(bytes);
	onnxrun_env_free(ld.env);
}

/* ---- Fill (domain com.test): y [numel] = 1.5, from any input ---- */

static enum onnxrun_status fill_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	(void)ctx;
	(void)in;
	(void)n_in;
	(void)n_out;
	memset(&out[0], 0, sizeof out[0]);
	out[0].dtype = ONNXRUN_DTYPE_FLOAT;
	out[0].shape.rank = 1;
	out[0].shape.dims[0] = st.out_numel;
	return ONNXRUN_OK;
}

static void fill_items(void *arg, int thread, int64_t begin, int64_t end)
{
	float *y = arg;
	(void)thread;
	for (int64_t i = begin * 4096; i < end * 4096; i++)
		y[i] = 1.5f;
}

static enum onnxrun_status fill_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	(void)in;
	(void)n_in;
	(void)n_out;
	st.computes++;
	return onnxrun_op_parallel_for(ctx, onnxrun_tensor_numel(out[0]) / 4096, fill_items, onnxrun_tensor_data(out[0]));
}

static const struct onnxrun_op fill_op = { "com.test", "Fill", 1, fill_infer, fill_compute, NULL, NULL, NULL, NULL };

/* Resident bytes of this process (Linux), -1 elsewhere. */
static long long resident_bytes(void)
{
	long long pages = -1, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld %lld", &pages, &res) != 2)
		res = -1;
	fclose(f);
#ifndef _WIN32
	return res < 0 ? -1 : res * (long long)sysconf(_SC_PAGESIZE);
#else
	return -1;
#endif
}

/* Prepare allocates a 256 MiB graph output without writing it (resident memory grows by
 * less than a quarter of it); the run's items write it whole. It used to be zeroed at
 * prepare: every page touched before the run's first stop check. */
static void test_outputs_not_touched_by_prepare(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m = NULL;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	const struct onnxrun_tensor *y;
	Onnx__ModelProto *mp = mb_model(8);
	const int64_t one = 1;
	long long before, after;
	size_t size;
	uint8_t *bytes;
	(void)state;
	if (resident_bytes() < 0)
		skip(); /* no /proc/self/statm */
	st.out_numel = (int64_t)64 << 20; /* 256 MiB of float */
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.test", 1);
	mb_input(mp, "x", MB_FLOAT, "1");
	mb_output(mp, "y", MB_FLOAT, NULL);
	mb_node(mp, "fill", "Fill", "com.test", "x", "y");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &fill_op), ONNXRUN_OK);
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	free(bytes);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 1, &one, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	before = resident_bytes();
	assert_int_equal(onnxrun_session_prepare(s), ONNXRUN_OK);
	after = resident_bytes();
	print_message("prepare of a 256 MiB output: resident +%lld KiB\n", (after - before) >> 10);
	if (after - before > (64ll << 20))
		fail_msg("prepare made %lld MiB of the 256 MiB output resident: it wrote the output", (after - before) >> 20);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	for (int64_t i = 0; i < st.out_numel; i += 999)
		if (((const float *)onnxrun_tensor_data(y))[i] != 1.5f)
			fail_msg("y[%lld] = %g", (long long)i, ((const float *)onnxrun_tensor_data(y))[i]);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* ---- packing weights fed at run time ---- */

#ifndef _WIN32
/* The env's allocator: on the first allocation of at least 8 MiB during a run (the packed
 * copy of the 16 MiB W fed at run time: nothing else is that large), cancels the session
 * and makes the caller's W unreadable. Packing that went on reading W would fault. */
static struct {
	struct onnxrun_session *session;
	void *w;
	size_t w_bytes;
	int armed, fired;
} trap;

static void *trap_alloc(void *ctx, size_t size, size_t align)
{
	void *p = NULL;
	(void)ctx;
	if (trap.armed && size >= ((size_t)8 << 20) && !trap.fired) {
		trap.fired = 1;
		onnxrun_session_cancel(trap.session);
		assert_int_equal(mprotect(trap.w, trap.w_bytes, PROT_NONE), 0);
	}
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1))
		return NULL;
	return p;
}

static void trap_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)size;
	free(p);
}

/* x [1,512,8,8], W [512,512,4,4] fed at run time (not an initializer: packed by the run)
 * -> ConvTranspose 'up' -> y [1,512,11,11]. No prepare with the inputs set, so the first run
 * sizes the ops' workspace, calling the allocator for the packed buffer: the trap cancels
 * the run there and makes W unreadable; packing must stop before it reads W and the run
 * reports CANCELLED. Then W is readable again and a run completes. */
static void test_packing_at_run_time_stops(void **state)
{
	const struct onnxrun_allocator a = { NULL, trap_alloc, trap_free };
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const int64_t xd[4] = { 1, 512, 8, 8 }, wd[4] = { 512, 512, 4, 4 };
	struct onnxrun_env *env;
	struct onnxrun_model *m = NULL;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x, *w;
	Onnx__ModelProto *mp = mb_model(8);
	size_t size;
	uint8_t *bytes;
	(void)state;
	trap.w_bytes = 512 * 512 * 16 * sizeof(float);
	assert_int_equal(posix_memalign(&trap.w, page, trap.w_bytes), 0);
	for (size_t i = 0; i < trap.w_bytes / sizeof(float); i++)
		((float *)trap.w)[i] = (float)(i % 13) * 0.01f - 0.06f;
	mb_opset(mp, "", 13);
	mb_input(mp, "x", MB_FLOAT, "1,512,8,8");
	mb_input(mp, "w", MB_FLOAT, "512,512,4,4");
	mb_output(mp, "y", MB_FLOAT, "1,512,11,11");
	mb_node(mp, "up", "ConvTranspose", NULL, "x,w", "y");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	free(bytes);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, wd, trap.w, trap.w_bytes, &w), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 1, w), ONNXRUN_OK);
	trap.session = s;
	trap.armed = 1;
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_CANCELLED);
	assert_true(trap.fired);
	trap.armed = 0;
	assert_non_null(strstr(onnxrun_session_error(s), "node 'up' (ConvTranspose): run cancelled"));
	assert_int_equal(mprotect(trap.w, trap.w_bytes, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(w);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	free(trap.w);
}
#else
static void test_packing_at_run_time_stops(void **state)
{
	(void)state;
	skip(); /* uses mprotect */
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_stops),
		cmocka_unit_test(test_load_stops),
		cmocka_unit_test(test_outputs_not_touched_by_prepare),
		cmocka_unit_test(test_packing_at_run_time_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
