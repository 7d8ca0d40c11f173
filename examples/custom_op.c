/*
 * custom_op.c - registers a LeakyRelu in its own domain ("com.example") and runs a model that
 * chains it after ConvTranspose, then compares with the expected output.
 *
 *   custom_op [CASE_DIR]     (default: examples/data/leaky_chain)
 *
 * CASE_DIR holds model.onnx and test_data_set_0/{input_0,output_0}.pb. Prints PASS or FAIL.
 */
#include <math.h>
#include <stdio.h>

#include <onnxrun.h>

/* y has x's type and shape; only float is implemented. */
static enum onnxrun_status leaky_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *inputs,
                                       size_t n_inputs, struct onnxrun_type *outputs, size_t n_outputs)
{
	if (n_inputs != 1 || n_outputs != 1)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "takes one input and one output");
	if (inputs[0].dtype != ONNXRUN_DTYPE_FLOAT && inputs[0].dtype != ONNXRUN_DTYPE_UNDEFINED)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_INVALID_MODEL, "input must be float, not %s",
		                       onnxrun_dtype_name(inputs[0].dtype));
	outputs[0] = inputs[0];
	outputs[0].dtype = ONNXRUN_DTYPE_FLOAT;
	return ONNXRUN_OK;
}

/* y = x >= 0 ? x : alpha * x, alpha from the node (default 0.01). */
static enum onnxrun_status leaky_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *inputs,
                                         size_t n_inputs, struct onnxrun_tensor *const *outputs, size_t n_outputs)
{
	const float *x = onnxrun_tensor_data(inputs[0]);
	float *y = onnxrun_tensor_data(outputs[0]);
	float alpha;
	enum onnxrun_status st = onnxrun_op_attr_float(ctx, "alpha", 0.01f, &alpha);
	(void)n_inputs;
	(void)n_outputs;
	if (st)
		return st;
	for (int64_t i = 0; i < onnxrun_tensor_numel(inputs[0]); i++)
		y[i] = x[i] >= 0 ? x[i] : alpha * x[i];
	return ONNXRUN_OK;
}

static const struct onnxrun_op leaky_relu = {
	.domain = "com.example",
	.op_type = "LeakyRelu",
	.since_version = 1,
	.infer = leaky_infer,
	.compute = leaky_compute,
};

/* Largest |got - expected| beyond atol + rtol*|expected|, or -1 when shapes differ. */
static double worst(const struct onnxrun_tensor *got, const struct onnxrun_tensor *exp)
{
	const float *g = onnxrun_tensor_data(got), *e = onnxrun_tensor_data(exp);
	double w = 0;
	if (onnxrun_tensor_numel(got) != onnxrun_tensor_numel(exp))
		return -1;
	for (int64_t i = 0; i < onnxrun_tensor_numel(exp); i++) {
		double excess = fabs((double)g[i] - e[i]) - (1e-7 + 1e-3 * fabs((double)e[i]));
		if (excess > w)
			w = excess;
	}
	return w;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "examples/data/leaky_chain";
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *session = NULL;
	struct onnxrun_tensor *x = NULL, *want = NULL;
	const struct onnxrun_tensor *y;
	char path[4096];
	double w;
	int rc = 1;

	if (onnxrun_env_create(NULL, &env) || onnxrun_env_register_op(env, &leaky_relu))
		goto fail_env;
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (onnxrun_model_load_file(env, path, &model))
		goto fail_env;
	snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
	if (onnxrun_tensor_load_pb(env, path, &x))
		goto fail_env;
	snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
	if (onnxrun_tensor_load_pb(env, path, &want))
		goto fail_env;
	if (onnxrun_session_create(model, &session) || onnxrun_session_set_input(session, 0, x) ||
	    onnxrun_session_run(session) || onnxrun_session_output(session, 0, &y)) {
		fprintf(stderr, "error: %s\n", session ? onnxrun_session_error(session) : "out of memory");
		goto done;
	}
	w = worst(y, want);
	printf("%s output '%s' (%lld values)\n", w == 0 ? "PASS" : "FAIL", onnxrun_tensor_name(y),
	       (long long)onnxrun_tensor_numel(y));
	rc = w == 0 ? 0 : 1;
	goto done;
fail_env:
	fprintf(stderr, "error: %s\n", env ? onnxrun_env_error(env) : "out of memory");
done:
	onnxrun_session_free(session);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(want);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return rc;
}
