/*
 * test_mcu_upsampler.c - the bundled upsampler (models/upsampler: ConvTranspose,
 * DepthToSpace, ConvTranspose; [1,3,32,32] -> [1,3,128,128]) end to end on the target:
 * model, input and expected output read from the host through semihosting, loaded from
 * memory, run, and compared with the expected output with the CLI's default tolerance
 * (|got - want| <= 1e-7 + 1e-3 |want|). The model is loaded, copying and borrowed
 * (onnxrun_model_load_borrowed), from each of 4 byte offsets of a buffer: initializers at any alignment in the model's bytes must load and run (ARMv7-M
 * faults on unaligned 64-bit loads and stores, and on any unaligned floating-point access).
 * Arguments: MODEL.onnx INPUT.pb EXPECTED.pb
 */
#include <math.h>
#include <string.h>

#include "mcu_test.h"
#include "startup.h"

static void *bump_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	return mcu_big_alloc(size, align);
}

static void bump_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)p;
	(void)size;
}

int main(int argc, char **argv)
{
	struct onnxrun_allocator alloc = { NULL, bump_alloc, bump_free };
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *in = NULL, *want = NULL;
	const struct onnxrun_tensor *got = NULL;
	size_t model_size = 0, in_size = 0, want_size = 0;
	void *model_bytes, *in_bytes, *want_bytes;
	if (argc < 4) {
		printf("usage: test_mcu_upsampler MODEL.onnx INPUT.pb EXPECTED.pb\n");
		return 2;
	}
	model_bytes = mcu_read_file(argv[1], &model_size);
	in_bytes = mcu_read_file(argv[2], &in_size);
	want_bytes = mcu_read_file(argv[3], &want_size);
	CHECK(model_bytes && in_bytes && want_bytes, "cannot read the test files");
	if (mcu_failures)
		return mcu_finish("upsampler");
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");
	CHECK(onnxrun_tensor_decode_pb(env, in_bytes, in_size, &in) == ONNXRUN_OK, "input: %s",
	      onnxrun_env_error(env));
	for (int offset = 0; offset <= 8 && !mcu_failures; offset++) {
		/* offsets 0-3 copying, 4-7 borrowed loads, loaded, run and freed; 8 is the model the
		 * run below uses (borrowed) */
		unsigned char *shifted = mcu_big_alloc(model_size + 8, 8);
		const int at = offset % 4;
		memcpy(shifted + at, model_bytes, model_size);
		if (offset < 4)
			CHECK(onnxrun_model_load_buffer(env, shifted + at, model_size, NULL, &model) == ONNXRUN_OK,
			      "load at offset %d: %s", at, onnxrun_env_error(env));
		else
			CHECK(onnxrun_model_load_borrowed(env, shifted + at, model_size, &model) == ONNXRUN_OK,
			      "borrowed load at offset %d: %s", at, onnxrun_env_error(env));
		if (offset < 8) {
			CHECK(onnxrun_session_create(model, &s) == ONNXRUN_OK, "session");
			CHECK(onnxrun_session_set_input(s, 0, in) == ONNXRUN_OK, "%s", onnxrun_session_error(s));
			CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "run: %s", onnxrun_session_error(s));
			onnxrun_session_free(s);
			onnxrun_model_free(model);
			s = NULL;
			model = NULL;
		}
	}
	CHECK(onnxrun_tensor_decode_pb(env, want_bytes, want_size, &want) == ONNXRUN_OK, "expected: %s",
	      onnxrun_env_error(env));
	if (mcu_failures)
		return mcu_finish("upsampler");
	CHECK(onnxrun_session_create(model, &s) == ONNXRUN_OK, "session");
	CHECK(onnxrun_session_set_input(s, 0, in) == ONNXRUN_OK, "%s", onnxrun_session_error(s));
	CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "run: %s", onnxrun_session_error(s));
	CHECK(onnxrun_session_output(s, 0, &got) == ONNXRUN_OK, "output");
	if (!mcu_failures) {
		const float *g = onnxrun_tensor_data(got), *w = onnxrun_tensor_data(want);
		int64_t n = onnxrun_tensor_numel(want), bad = 0;
		CHECK(onnxrun_tensor_numel(got) == n, "output has %ld elements, expected %ld", (long)onnxrun_tensor_numel(got),
		      (long)n);
		for (int64_t i = 0; i < n && onnxrun_tensor_numel(got) == n; i++)
			if (!(fabsf(g[i] - w[i]) <= 1e-7f + 1e-3f * fabsf(w[i])) && bad++ < 3)
				printf("element %ld: %.9g, expected %.9g\n", (long)i, (double)g[i], (double)w[i]);
		CHECK(bad == 0, "%ld of %ld elements differ", (long)bad, (long)n);
	}
	printf("upsampler: stack used %u bytes\n", (unsigned)startup_stack_used());
	onnxrun_session_free(s);
	onnxrun_tensor_free(in);
	onnxrun_tensor_free(want);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return mcu_finish("upsampler");
}
