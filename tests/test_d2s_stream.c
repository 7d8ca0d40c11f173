/*
 * test_d2s_stream.c - DepthToSpace's streaming-store path (large outputs on AVX-512)
 * against the spec's index formula, exactly: the threshold is lowered so every output
 * takes it, over row widths that keep rows 64-byte aligned (all streaming) and widths
 * that do not (cached stores, and vector bodies with scalar tails), b = 2 and 4, DCR and
 * CRD, 1 and 2 threads; then one output above the default threshold.
 */
#include "model_builder.c"

#include "ops/depth_to_space/fast.h"
#include "kernels/kernels.h"

static int64_t rnd(struct th_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(th_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Runs DepthToSpace on x and compares with the reference for 1 and 2 threads. */
static void check_case(const int64_t *xd, int64_t b, bool crd, uint64_t seed)
{
	struct onnxrun_env *env = th_env();
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *node;
	struct onnxrun_model *model;
	struct onnxrun_tensor *xt;
	struct th_rng r;
	char shape[96];
	const size_t nx = th_numel(4, xd);
	float *x = malloc(nx * sizeof *x), *want = malloc(nx * sizeof *want);
	assert_non_null(x);
	assert_non_null(want);
	th_rng_seed(&r, seed);
	for (size_t i = 0; i < nx; i++)
		x[i] = (float)(th_rng_next(&r) % 1000003) - 500000.5f;
	th_ref_depth_to_space(x, want, sizeof *x, xd[0], xd[1], xd[2], xd[3], b, crd);
	mb_opset(m, "", 13);
	snprintf(shape, sizeof shape, "%lld,%lld,%lld,%lld", (long long)xd[0], (long long)xd[1],
	         (long long)xd[2], (long long)xd[3]);
	mb_input(m, "x", MB_FLOAT, shape);
	mb_output(m, "y", MB_FLOAT, NULL);
	node = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(node, "blocksize", b);
	mb_attr_string(node, "mode", crd ? "CRD" : "DCR");
	model = th_load_ok(env, m);
	xt = th_tensor_f32(env, 4, xd, x);
	for (int threads = 1; threads <= 2; threads++) {
		struct onnxrun_session *s = NULL;
		const struct onnxrun_tensor *y;
		assert_int_equal(onnxrun_session_create(model, &s), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(s, 0, xt), ONNXRUN_OK);
		TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
		assert_int_equal(onnxrun_session_output(s, 0, &y), ONNXRUN_OK);
		assert_int_equal((size_t)onnxrun_tensor_numel(y), nx);
		if (memcmp(onnxrun_tensor_data(y), want, nx * sizeof *want))
			fail_msg("threads=%d b=%lld %s x=[%s] differs from the reference (seed=%llu)", threads,
			         (long long)b, crd ? "CRD" : "DCR", shape, (unsigned long long)seed);
		onnxrun_session_free(s);
	}
	onnxrun_tensor_free(xt);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	free(x);
	free(want);
}

static void test_streaming_random(void **state)
{
	const size_t saved = onnxrun__d2s_stream_min();
	struct th_rng r;
	(void)state;
	if (!onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		skip();
	onnxrun__isa_set(ONNXRUN__ISA_AVX512);
	onnxrun__d2s_set_stream_min(0);
	th_rng_seed(&r, 2026);
	for (uint64_t it = 0; it < 60; it++) {
		const int64_t b = rnd(&r, 0, 1) ? 4 : 2, cout = rnd(&r, 1, 3);
		/* even iterations: W*b a multiple of 16 floats (64-byte rows); odd: anything */
		const int64_t w = it % 2 == 0 ? 16 / b * rnd(&r, 1, 8) : rnd(&r, 1, 70);
		const int64_t xd[4] = { rnd(&r, 1, 2), cout * b * b, rnd(&r, 1, 12), w };
		check_case(xd, b, rnd(&r, 0, 1) == 1, 1000 + it);
	}
	onnxrun__d2s_set_stream_min(saved);
}

/* At the default threshold: one output just above it (8 MiB + a row) per block size. */
static void test_streaming_default_threshold(void **state)
{
	(void)state;
	if (!onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		skip();
	onnxrun__isa_set(ONNXRUN__ISA_AVX512);
	assert_true(onnxrun__d2s_stream_min() == (size_t)8 << 20);
	check_case((const int64_t[]){ 1, 4, 1025, 512 }, 2, false, 7); /* y: 1 x 2050 x 1024 floats */
	check_case((const int64_t[]){ 1, 16, 513, 256 }, 4, true, 8);  /* y: 1 x 2052 x 1024 floats */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streaming_default_threshold),
		cmocka_unit_test(test_streaming_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
