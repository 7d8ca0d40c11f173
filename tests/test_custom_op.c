/*
 * test_custom_op.c - custom ops through the public struct onnxrun_op: a LeakyRelu in its own
 * domain chained after ConvTranspose, error propagation from infer and compute, overriding a
 * built-in, init/fini state from a constant input, user_data_free, registration errors, an
 * output rank at prepare above the one given at load.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model_builder.h"
#include "onnxrun.h"

/* ---- LeakyRelu in domain "com.example": y = x >= 0 ? x : alpha * x ---- */

static enum onnxrun_status leaky_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                       struct onnxrun_type *out, size_t n_out)
{
	float alpha;
	enum onnxrun_status st;
	if (n_in != 1 || n_out != 1)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "needs 1 input and 1 output");
	if (in[0].dtype && in[0].dtype != ONNXRUN_DTYPE_FLOAT)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "only float is supported");
	if ((st = onnxrun_op_attr_float(ctx, "alpha", 0.01f, &alpha)))
		return st;
	if (alpha < 0)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "alpha=%g must be >= 0", alpha);
	out[0] = in[0];
	out[0].dtype = ONNXRUN_DTYPE_FLOAT;
	return ONNXRUN_OK;
}

static enum onnxrun_status leaky_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                         size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	const float *x = onnxrun_tensor_data(in[0]);
	float *y = onnxrun_tensor_data(out[0]), alpha;
	int *calls = onnxrun_op_user_data(ctx);
	enum onnxrun_status st;
	(void)n_in;
	(void)n_out;
	if ((st = onnxrun_op_attr_float(ctx, "alpha", 0.01f, &alpha)))
		return st;
	if (alpha == 0.5f)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_RUNTIME, "alpha 0.5 is refused by this test op");
	for (int64_t i = 0; i < onnxrun_tensor_numel(in[0]); i++)
		y[i] = x[i] >= 0 ? x[i] : alpha * x[i];
	if (calls)
		(*calls)++;
	return ONNXRUN_OK;
}

static int user_data_freed;

static void free_user_data(void *p)
{
	(void)p;
	user_data_freed++;
}

/* x [1,2,3,3] -> ConvTranspose (W [2,1,2,2] all 1, stride 1) -> t [1,1,4,4] -> LeakyRelu -> y */
static uint8_t *chain_model(float alpha, size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	const int64_t wd[4] = { 2, 1, 2, 2 };
	const float w[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	mb_opset(m, "", 13);
	mb_opset(m, "com.example", 1);
	mb_input(m, "x", ONNXRUN_DTYPE_FLOAT, "1,2,3,3");
	mb_output(m, "y", ONNXRUN_DTYPE_FLOAT, "1,1,4,4");
	mb_initializer_f32(m, "w", 4, wd, w);
	mb_node(m, "up", "ConvTranspose", NULL, "x,w", "t");
	n = mb_node(m, "lr", "LeakyRelu", "com.example", "t", "y");
	mb_attr_float(n, "alpha", alpha);
	return mb_finish(m, size);
}

static const struct onnxrun_op leaky = { "com.example", "LeakyRelu", 1, leaky_infer, leaky_compute,
	                                  NULL, NULL, NULL, NULL };

/* Loads chain_model(alpha) in env, runs it on a ramp around 0, returns the status. */
static enum onnxrun_status run_chain(struct onnxrun_env *env, float alpha, char *msg, size_t len, float *y_out)
{
	struct onnxrun_model *m = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *x = NULL;
	const struct onnxrun_tensor *y;
	const int64_t xd[4] = { 1, 2, 3, 3 };
	size_t size;
	uint8_t *bytes = chain_model(alpha, &size);
	enum onnxrun_status st = onnxrun_model_load_buffer(env, bytes, size, NULL, &m);
	free(bytes);
	snprintf(msg, len, "%s", onnxrun_env_error(env));
	if (st)
		return st;
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	for (int i = 0; i < 18; i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)(i - 9);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	st = onnxrun_session_run(s);
	snprintf(msg, len, "%s", onnxrun_session_error(s));
	if (!st) {
		assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
		memcpy(y_out, onnxrun_tensor_data(y), 16 * sizeof(float));
	}
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	return st;
}

static void test_leaky_relu_after_conv_transpose(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_op op = leaky;
	int calls = 0;
	float y[16], want[16] = { 0 };
	char msg[1024];
	(void)state;
	op.user_data = &calls;
	op.user_data_free = free_user_data;
	user_data_freed = 0;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &op), ONNXRUN_OK);
	assert_int_equal(run_chain(env, 0.25f, msg, sizeof msg, y), ONNXRUN_OK);
	/* Reference: scatter each input (both channels, weights 1) over its 2x2 window. */
	for (int c = 0; c < 2; c++)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				for (int a = 0; a < 2; a++)
					for (int b = 0; b < 2; b++)
						want[(i + a) * 4 + j + b] += (float)(c * 9 + i * 3 + j - 9);
	for (int i = 0; i < 16; i++) {
		float w = want[i] >= 0 ? want[i] : 0.25f * want[i];
		if (y[i] != w)
			fail_msg("element %d: expected %g got %g", i, w, y[i]);
	}
	assert_int_equal(calls, 1);
	onnxrun_env_free(env);
	assert_int_equal(user_data_freed, 1);
}

static void test_custom_op_errors_propagate(void **state)
{
	struct onnxrun_env *env;
	float y[16];
	char msg[1024];
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	/* Not registered: the load lists it as unsupported. */
	assert_int_equal(run_chain(env, 0.25f, msg, sizeof msg, y), ONNXRUN_ERROR_UNSUPPORTED);
	assert_non_null(strstr(msg, "node 'lr' (LeakyRelu, domain 'com.example' opset 1)"));
	assert_int_equal(onnxrun_env_register_op(env, &leaky), ONNXRUN_OK);
	/* infer's error at load, with the op's own message. */
	assert_int_equal(run_chain(env, -1.0f, msg, sizeof msg, y), ONNXRUN_ERROR_INVALID_MODEL);
	assert_string_equal(msg, "node 'lr' (LeakyRelu): alpha=-1 must be >= 0");
	/* compute's error at run. */
	assert_int_equal(run_chain(env, 0.5f, msg, sizeof msg, y), ONNXRUN_ERROR_RUNTIME);
	assert_string_equal(msg, "node 'lr' (LeakyRelu): alpha 0.5 is refused by this test op");
	onnxrun_env_free(env);
}

static void test_registration_errors(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_op op = leaky;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	op.compute = NULL;
	assert_int_equal(onnxrun_env_register_op(env, &op), ONNXRUN_ERROR_INVALID_ARGUMENT);
	op = leaky;
	op.since_version = 0;
	assert_int_equal(onnxrun_env_register_op(env, &op), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_env_register_op(env, &leaky), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &leaky), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(onnxrun_env_error(env), "already registered"));
	op = leaky;
	op.since_version = 7; /* another version of the same op is fine */
	assert_int_equal(onnxrun_env_register_op(env, &op), ONNXRUN_OK);
	onnxrun_env_free(env);
}

/* ---- overriding DepthToSpace; init/fini with state from a constant input ---- */

static int fini_calls;

/* "DepthToSpace" that ignores blocksize: y = x + sum(constant input 1), via init's state. */
static enum onnxrun_status add_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                     struct onnxrun_type *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	out[0] = in[0];
	return ONNXRUN_OK;
}

static enum onnxrun_status add_init(struct onnxrun_op_context *ctx, void **state)
{
	const struct onnxrun_tensor *k = onnxrun_op_constant_input(ctx, 1);
	float *sum;
	if (!k)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "input 1 must be a constant");
	if (!(sum = malloc(sizeof *sum)))
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	*sum = 0;
	for (int64_t i = 0; i < onnxrun_tensor_numel(k); i++)
		*sum += ((const float *)onnxrun_tensor_data(k))[i];
	*state = sum;
	return ONNXRUN_OK;
}

static void add_fini(void *user_data, void *state)
{
	(void)user_data;
	fini_calls++;
	free(state);
}

static enum onnxrun_status add_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                       size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	const float *sum = onnxrun_op_state(ctx);
	(void)n_in;
	(void)n_out;
	for (int64_t i = 0; i < onnxrun_tensor_numel(in[0]); i++)
		((float *)onnxrun_tensor_data(out[0]))[i] = ((const float *)onnxrun_tensor_data(in[0]))[i] + *sum;
	return ONNXRUN_OK;
}

static void test_override_builtin_with_state(void **state)
{
	static const struct onnxrun_op add = { "", "DepthToSpace", 1, add_infer, add_compute,
		                               add_init, add_fini, NULL, NULL };
	Onnx__ModelProto *mp = mb_model(8);
	Onnx__NodeProto *n;
	const int64_t kd[1] = { 3 };
	const float k[3] = { 1, 2, 4 };
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	const struct onnxrun_tensor *y;
	const int64_t xd[4] = { 1, 4, 1, 1 };
	size_t size;
	uint8_t *bytes;
	(void)state;
	mb_opset(mp, "", 13);
	mb_input(mp, "x", ONNXRUN_DTYPE_FLOAT, "1,4,1,1");
	mb_output(mp, "y", ONNXRUN_DTYPE_FLOAT, NULL);
	mb_initializer_f32(mp, "k", 1, kd, k);
	n = mb_node(mp, "d", "DepthToSpace", NULL, "x,k", "y");
	mb_attr_int(n, "blocksize", 2);
	bytes = mb_finish(mp, &size);
	fini_calls = 0;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &add), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	for (int i = 0; i < 4; i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)i;
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	/* The built-in would give [1,1,2,2]; the override keeps the shape and adds 7. */
	assert_int_equal(onnxrun_tensor_dims(y)[1], 4);
	for (int i = 0; i < 4; i++)
		assert_true(((const float *)onnxrun_tensor_data(y))[i] == (float)i + 7.0f);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	assert_int_equal(fini_calls, 0);
	onnxrun_model_free(m);
	assert_int_equal(fini_calls, 1);
	onnxrun_env_free(env);
}

/* ---- an op whose output rank at prepare differs from the one it gave at load ---- */

/* "Unsqueeze0" in "com.example": y = x with a leading 1 once x's dims are known; while
 * they are symbolic (at load) it claims rank 1, unknown. A session sizes each value's dims
 * by its rank at load, so this checks that a larger rank at prepare still works. */
static enum onnxrun_status grow_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	bool known = in[0].shape.rank >= 0;
	(void)ctx;
	(void)n_in;
	(void)n_out;
	for (int32_t i = 0; known && i < in[0].shape.rank; i++)
		known = in[0].shape.dims[i] >= 0;
	out[0].dtype = in[0].dtype;
	if (!known) {
		out[0].shape.rank = 1;
		out[0].shape.dims[0] = -1;
		return ONNXRUN_OK;
	}
	out[0].shape.rank = in[0].shape.rank + 1;
	out[0].shape.dims[0] = 1;
	for (int32_t i = 0; i < in[0].shape.rank; i++)
		out[0].shape.dims[i + 1] = in[0].shape.dims[i];
	return ONNXRUN_OK;
}

static enum onnxrun_status grow_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	memcpy(onnxrun_tensor_data(out[0]), onnxrun_tensor_data(in[0]), onnxrun_tensor_numel(in[0]) * sizeof(float));
	return ONNXRUN_OK;
}

static void test_rank_at_prepare_above_load(void **state)
{
	static const struct onnxrun_op grow = { "com.example", "Unsqueeze0", 1, grow_infer, grow_compute,
		                                NULL, NULL, NULL, NULL };
	Onnx__ModelProto *mp = mb_model(8);
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	const struct onnxrun_tensor *y;
	struct onnxrun_value_info info;
	const int64_t xd[2] = { 2, 3 };
	size_t size;
	uint8_t *bytes;
	(void)state;
	mb_opset(mp, "", 13);
	mb_opset(mp, "com.example", 1);
	mb_input(mp, "x", ONNXRUN_DTYPE_FLOAT, "N,3");
	mb_output(mp, "z", ONNXRUN_DTYPE_FLOAT, NULL);
	mb_node(mp, "g1", "Unsqueeze0", "com.example", "x", "t");
	mb_node(mp, "g2", "Unsqueeze0", "com.example", "t", "z");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_register_op(env, &grow), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	assert_int_equal(onnxrun_model_value_info(m, "t", &info), ONNXRUN_OK);
	assert_int_equal(info.rank, 1); /* what the op claimed at load */
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 2, xd, &x), ONNXRUN_OK);
	for (int i = 0; i < 6; i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)(i * 3 + 1);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_value_info(s, "t", &info), ONNXRUN_OK);
	assert_int_equal(info.rank, 3);
	assert_int_equal(info.dims[0].value, 1);
	assert_int_equal(info.dims[1].value, 2);
	assert_int_equal(info.dims[2].value, 3);
	assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_rank(y), 4);
	assert_int_equal(onnxrun_tensor_dims(y)[0], 1);
	assert_int_equal(onnxrun_tensor_dims(y)[1], 1);
	assert_int_equal(onnxrun_tensor_dims(y)[2], 2);
	assert_int_equal(onnxrun_tensor_dims(y)[3], 3);
	for (int i = 0; i < 6; i++)
		assert_true(((const float *)onnxrun_tensor_data(y))[i] == (float)(i * 3 + 1));
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaky_relu_after_conv_transpose),
		cmocka_unit_test(test_custom_op_errors_propagate),
		cmocka_unit_test(test_registration_errors),
		cmocka_unit_test(test_override_builtin_with_state),
		cmocka_unit_test(test_rank_at_prepare_above_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
