/*
 * test_mcu_platform.c - what a bare-metal build refuses, and how: loading from a path,
 * saving a tensor file and external data are UNSUPPORTED with messages that say why;
 * a deadline is UNSUPPORTED until the application sets a clock (onnxrun_set_clock) and
 * then stops a run; cancelling works without a clock; threads > 1 runs on the one thread.
 * The bare-metal checked 64-bit multiply (runtime/core.c: a division-based bound, for flash)
 * agrees with __builtin_mul_overflow on edge values and a fixed-seed sweep.
 * Arguments: EXTERNAL_DATA_MODEL.onnx UPSAMPLER.onnx UPSAMPLER_INPUT.pb
 */
#include <string.h>

#include "mcu_test.h"
#include "runtime/runtime.h"

static uint64_t fake_ns;

/* A clock that advances 1 ms each time it is read. */
static uint64_t ticking_clock(void *ctx)
{
	(void)ctx;
	return fake_ns += 1000000;
}

static void check_mul(int64_t a, int64_t b)
{
	int64_t want = 0, got = 0;
	const bool overflow = __builtin_mul_overflow(a, b, &want), ok = onnxrun__mul_i64(a, b, &got);
	CHECK(ok == !overflow && (!ok || got == want), "%lld * %lld: %s %lld, the builtin says %s %lld", (long long)a,
	      (long long)b, ok ? "ok" : "overflow", (long long)got, overflow ? "overflow" : "ok", (long long)want);
}

static void check_mul_i64(void)
{
	static const int64_t edge[] = { 0, 1, -1, 2, -2, 3, -3, 7, INT32_MAX, INT32_MIN, (int64_t)1 << 32,
		                        -((int64_t)1 << 32), 3037000499, 3037000500, -3037000499, -3037000500,
		                        (int64_t)1 << 62, -((int64_t)1 << 62), INT64_MAX / 2, INT64_MIN / 2,
		                        INT64_MAX / 3, INT64_MIN / 3, INT64_MAX, INT64_MIN };
	const size_t n = sizeof edge / sizeof edge[0];
	uint64_t x = 12345; /* a fixed seed: the sweep is the same on every run */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			check_mul(edge[i], edge[j]);
	for (int k = 0; k < 4000 && !mcu_failures; k++) {
		int64_t v[2];
		for (int h = 0; h < 2; h++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			v[h] = (int64_t)x >> (x >> 58); /* magnitudes of every size */
		}
		check_mul(v[0], v[1]);
	}
}

int main(int argc, char **argv)
{
	const size_t arena_size = 2u << 20;
	unsigned char *arena = mcu_big_alloc(arena_size, 16);
	struct onnxrun_allocator alloc;
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *in = NULL;
	size_t ext_size, up_size, in_size;
	void *ext, *up, *in_bytes;
	if (argc < 4 || !(ext = mcu_read_file(argv[1], &ext_size)) || !(up = mcu_read_file(argv[2], &up_size)) ||
	    !(in_bytes = mcu_read_file(argv[3], &in_size))) {
		printf("usage: test_mcu_platform EXTERNAL_DATA_MODEL UPSAMPLER INPUT\n");
		return 2;
	}
	CHECK(onnxrun_env_create(NULL, &env) == ONNXRUN_ERROR_OUT_OF_MEMORY, "no heap: the default allocator has nothing");
	CHECK(onnxrun_arena_init(&alloc, arena, arena_size) == ONNXRUN_OK, "arena");
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");

	CHECK(onnxrun_model_load_file(env, argv[2], &model) == ONNXRUN_ERROR_UNSUPPORTED, "load from a path");
	CHECK(strstr(onnxrun_env_error(env), "no file system") != NULL, "message: %s", onnxrun_env_error(env));
	CHECK(onnxrun_model_load_borrowed(env, ext, ext_size, &model) == ONNXRUN_ERROR_UNSUPPORTED, "external data");
	CHECK(strstr(onnxrun_env_error(env), "external data") != NULL, "message: %s", onnxrun_env_error(env));
	CHECK(onnxrun_model_load_buffer(env, ext, ext_size, "/", &model) == ONNXRUN_ERROR_UNSUPPORTED,
	      "external data with a folder");
	printf("platform: %s\n", onnxrun_env_error(env));

	CHECK(onnxrun_tensor_decode_pb(env, in_bytes, in_size, &in) == ONNXRUN_OK, "input");
	CHECK(onnxrun_tensor_save_pb(env, in, "x.pb") == ONNXRUN_ERROR_UNSUPPORTED, "saving a file");
	CHECK(onnxrun_model_load_borrowed(env, up, up_size, &model) == ONNXRUN_OK, "load: %s", onnxrun_env_error(env));
	CHECK(onnxrun_session_create(model, &s) == ONNXRUN_OK, "session");
	CHECK(onnxrun_session_set_threads(s, 4) == ONNXRUN_OK, "threads 4 (clamped to 1)");
	CHECK(onnxrun_session_set_input(s, 0, in) == ONNXRUN_OK, "input");

	/* no clock: no deadline; cancel still stops a run */
	CHECK(onnxrun_session_set_deadline(s, 1000) == ONNXRUN_ERROR_UNSUPPORTED, "deadline without a clock");
	CHECK(strstr(onnxrun_session_error(s), "onnxrun_set_clock") != NULL, "message: %s", onnxrun_session_error(s));
	onnxrun_session_cancel(s);
	CHECK(onnxrun_session_run(s) == ONNXRUN_ERROR_CANCELLED, "cancelled run");
	CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "run after a cancel: %s", onnxrun_session_error(s));

	/* with a clock (1 ms per reading), a 5 ms budget stops the run */
	CHECK(onnxrun_set_clock(ticking_clock, NULL) == ONNXRUN_OK, "set clock");
	CHECK(onnxrun_session_set_deadline(s, 5000) == ONNXRUN_OK, "deadline with a clock");
	CHECK(onnxrun_session_run(s) == ONNXRUN_ERROR_CANCELLED, "run past its deadline");
	CHECK(strstr(onnxrun_session_error(s), "deadline") != NULL, "message: %s", onnxrun_session_error(s));
	CHECK(onnxrun_session_set_deadline(s, 0) == ONNXRUN_OK, "no deadline");
	CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "run: %s", onnxrun_session_error(s));
	CHECK(onnxrun_set_clock(NULL, NULL) == ONNXRUN_OK, "remove the clock");
	CHECK(onnxrun_session_set_deadline(s, 1000) == ONNXRUN_ERROR_UNSUPPORTED, "deadline without a clock again");

	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_tensor_free(in);
	onnxrun_env_free(env);
	CHECK(onnxrun_arena_used(&alloc) == 0, "arena empty at the end");
	check_mul_i64();
	return mcu_finish("platform");
}
