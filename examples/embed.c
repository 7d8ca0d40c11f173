/*
 * embed.c - onnxrun embedded in a C program: load a model from memory (the buffer is freed
 * right after loading), feed an input, run, read the output.
 *
 *   embed MODEL.onnx [INPUT.pb]
 *
 * Without INPUT.pb the input is filled with a ramp. Prints the output's shape and a checksum.
 */
#include <stdio.h>
#include <stdlib.h>

#include <onnxrun.h>

/* Reads a whole file into a malloc'd buffer. */
static void *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc(n ? (size_t)n : 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = buf ? (size_t)n : 0;
	return buf;
}

/* A tensor matching input 0 of the model: from a .pb file, or a ramp when path is NULL. */
static enum onnxrun_status make_input(struct onnxrun_env *env, const struct onnxrun_model *model,
                                      const char *path, struct onnxrun_tensor **out)
{
	struct onnxrun_value_info info;
	int64_t dims[ONNXRUN_MAX_RANK];
	enum onnxrun_status st;
	if (path)
		return onnxrun_tensor_load_pb(env, path, out);
	if ((st = onnxrun_model_input_info(model, 0, &info)))
		return st;
	for (int32_t i = 0; i < info.rank; i++)
		dims[i] = info.dims[i].value >= 0 ? info.dims[i].value : 1; /* symbolic dims -> 1 */
	if ((st = onnxrun_tensor_create(env, info.dtype, info.rank, dims, out)))
		return st;
	if (info.dtype == ONNXRUN_DTYPE_FLOAT) {
		float *x = onnxrun_tensor_data(*out);
		for (int64_t i = 0; i < onnxrun_tensor_numel(*out); i++)
			x[i] = (float)(i % 17) / 17.0f;
	}
	return ONNXRUN_OK;
}

int main(int argc, char **argv)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *session = NULL;
	struct onnxrun_tensor *input = NULL;
	const struct onnxrun_tensor *output;
	size_t size;
	void *bytes;
	int rc = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: %s MODEL.onnx [INPUT.pb]\n", argv[0]);
		return 2;
	}
	printf("onnxrun %s\n", onnxrun_version());
	if (!(bytes = read_all(argv[1], &size))) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	if (onnxrun_env_create(NULL, &env) != ONNXRUN_OK)
		goto done;
	/* base_dir NULL: this model may not use external data. */
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &model) != ONNXRUN_OK ||
	    make_input(env, model, argc > 2 ? argv[2] : NULL, &input) != ONNXRUN_OK) {
		fprintf(stderr, "error: %s\n", onnxrun_env_error(env));
		goto done;
	}
	free(bytes); /* the model does not keep the buffer */
	bytes = NULL;
	if (onnxrun_session_create(model, &session) != ONNXRUN_OK ||
	    onnxrun_session_set_input(session, 0, input) != ONNXRUN_OK ||
	    onnxrun_session_run(session) != ONNXRUN_OK ||
	    onnxrun_session_output(session, 0, &output) != ONNXRUN_OK) {
		fprintf(stderr, "error: %s\n", session ? onnxrun_session_error(session) : "out of memory");
		goto done;
	}
	printf("output '%s': %s [", onnxrun_tensor_name(output), onnxrun_dtype_name(onnxrun_tensor_dtype(output)));
	for (int32_t i = 0; i < onnxrun_tensor_rank(output); i++)
		printf("%s%lld", i ? "," : "", (long long)onnxrun_tensor_dims(output)[i]);
	printf("]\n");
	if (onnxrun_tensor_dtype(output) == ONNXRUN_DTYPE_FLOAT) {
		const float *y = onnxrun_tensor_data(output);
		double sum = 0;
		for (int64_t i = 0; i < onnxrun_tensor_numel(output); i++)
			sum += y[i];
		printf("sum %.6f\n", sum);
	}
	rc = 0;
done:
	free(bytes);
	onnxrun_session_free(session);
	onnxrun_tensor_free(input);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return rc;
}
