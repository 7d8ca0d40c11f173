/*
 * test_release_weights.c - float32 and float64 ConvTranspose weights that init packed are
 * released by the model (they would be held twice) and rebuilt from the packed panels
 * whenever compute needs W itself.
 *
 *  - unpack(pack(W)) == W bit for bit, for random geometries on every packed layout (phase,
 *    overlap-add, float64) under every micro-kernel ISA;
 *  - through the runtime: W's data is released at load, the live bytes after load are about
 *    one copy of W, and the output matches the reference (th_ref_conv_transpose2d, written
 *    from the spec) on the fast path, on the scatter (a shape the fast path declines) and
 *    after forcing another ISA (W rebuilt and packed per run);
 *  - W kept when it is also a graph output, or when another op reads it; released when two
 *    ConvTranspose nodes share it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_transpose/impl.h"
#include "runtime/runtime.h"
/* after runtime.h: th_value_init */
#include "model_builder.c"
#include "isa_list.h"

#define D4(a, b, c, d) 4, (const int64_t[]){ a, b, c, d }

/* ---- unpack(pack(W)) ------------------------------------------------------------------- */

static void test_unpack_round_trip(void **state)
{
	TEST_ALL_ISAS(isas);
	const enum onnxrun__isa saved = onnxrun__isa_current();
	struct onnxrun_env *env = th_env();
	int paths[4] = { 0 }, checked = 0;
	(void)state;
	for (uint64_t seed = 1; seed <= 400; seed++) {
		struct th_rng rng;
		struct onnxrun__convt_geom g;
		int64_t cg, numel = 1;
		th_rng_seed(&rng, seed);
		memset(&g, 0, sizeof g);
		g.n = (int32_t)(1 + th_rng_next(&rng) % 3);
		g.group = (int64_t)(1 + th_rng_next(&rng) % 3);
		cg = (int64_t)(1 + th_rng_next(&rng) % 6);
		g.in_channels = g.group * cg;
		g.out_channels = g.group * (int64_t)(1 + th_rng_next(&rng) % (th_rng_next(&rng) % 2 ? 4 : 12));
		g.batch = 1;
		for (int32_t a = 0; a < g.n; a++) {
			g.kernel[a] = (int64_t)(1 + th_rng_next(&rng) % (g.n == 3 ? 3 : 5));
			g.strides[a] = (int64_t)(1 + th_rng_next(&rng) % 4);
			g.dilations[a] = (int64_t)(1 + th_rng_next(&rng) % 2);
			g.in[a] = g.out[a] = 4;
			numel *= g.kernel[a];
		}
		numel *= g.in_channels * (g.out_channels / g.group);
		float *w = malloc((size_t)numel * sizeof *w), *back = malloc((size_t)numel * sizeof *w);
		double *wd = malloc((size_t)numel * sizeof *wd), *backd = malloc((size_t)numel * sizeof *wd);
		assert_true(w && back && wd && backd);
		for (int64_t i = 0; i < numel; i++) {
			wd[i] = (double)(th_rng_next(&rng) >> 11) / 9007199254740992.0 - 0.5;
			w[i] = (float)wd[i];
		}
		for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
			/* float64: W of every value, back bit for bit */
			struct onnxrun__convt_packed *pk = NULL;
			if (!onnxrun__isa_supported(isas[k]))
				continue;
			onnxrun__isa_set(isas[k]);
			assert_int_equal(onnxrun__convt_pack(env, &g, wd, CONVT_LAYOUT_F64, &pk), ONNXRUN_OK);
			memset(backd, 0xff, (size_t)numel * sizeof *backd);
			assert_int_equal(onnxrun__convt_unpack(pk, backd), ONNXRUN_OK);
			for (int64_t i = 0; i < numel; i++)
				if (memcmp(&backd[i], &wd[i], sizeof *wd))
					fail_msg("seed %llu isa %d float64: W[%lld] came back as %.17g, was %.17g",
					         (unsigned long long)seed, (int)isas[k], (long long)i, backd[i], wd[i]);
			paths[CONVT_LAYOUT_F64]++;
			onnxrun__convt_packed_free(pk);
		}
		for (size_t k = 0; k < 2 * sizeof isas / sizeof isas[0]; k++) {
			/* both layouts for every geometry: each must give W back exactly */
			const enum convt_layout layout = k % 2 ? CONVT_LAYOUT_COL2IM : CONVT_LAYOUT_PHASE;
			struct onnxrun__convt_packed *pk = NULL;
			if (!onnxrun__isa_supported(isas[k / 2]))
				continue;
			onnxrun__isa_set(isas[k / 2]);
			assert_int_equal(onnxrun__convt_pack(env, &g, w, layout, &pk), ONNXRUN_OK);
			paths[layout]++;
			memset(back, 0xff, (size_t)numel * sizeof *back);
			assert_int_equal(onnxrun__convt_unpack(pk, back), ONNXRUN_OK);
			if (memcmp(back, w, (size_t)numel * sizeof *w)) {
				for (int64_t i = 0; i < numel; i++)
					if (memcmp(&back[i], &w[i], sizeof *w))
						fail_msg("seed %llu isa %d layout %d: W[%lld] came back as %.9g, was %.9g",
						         (unsigned long long)seed, (int)isas[k / 2], (int)layout, (long long)i,
						         (double)back[i], (double)w[i]);
			}
			checked++;
			onnxrun__convt_packed_free(pk);
		}
		free(w);
		free(back);
		free(wd);
		free(backd);
	}
	onnxrun__isa_set(saved);
	print_message("%d round trips (phase %d, overlap-add %d), float64 %d\n", checked, paths[CONVT_LAYOUT_PHASE],
	              paths[CONVT_LAYOUT_COL2IM], paths[CONVT_LAYOUT_F64]);
	assert_true(paths[CONVT_LAYOUT_PHASE] > 100);
	assert_true(paths[CONVT_LAYOUT_COL2IM] > 100);
	assert_true(paths[CONVT_LAYOUT_F64] > 100);
	onnxrun_env_free(env);
}

/* ---- through the runtime --------------------------------------------------------------- */

/* x [1, 32, H, W] -> ConvTranspose(x, w, b), kernel 4, stride 1, no pads. */
static void test_released_and_rebuilt(void **state)
{
	const uint64_t seed = 7;
	const int64_t c = 32, mg = 64, k = 4;
	const size_t wn = (size_t)(c * mg * k * k);
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model;
	struct th_rng rng;
	float *w = malloc(wn * sizeof *w), b[64], x[32 * 6 * 6], *want;
	struct th_ct2d p = { 1, c, 6, 6, mg, k, k, 1, 1, 1, 1, 1, 0, 0, 9, 9 };
	struct th_ct2d p1 = { 1, c, 1, 1, mg, k, k, 1, 1, 1, 1, 1, 0, 0, 4, 4 };
	Onnx__ModelProto *m = mb_model(8);
	const struct onnxrun_tensor *wt;
	const enum onnxrun__isa saved = onnxrun__isa_current();
	size_t before;
	(void)state;
	assert_non_null(w);
	th_rng_seed(&rng, seed);
	th_fill(&rng, w, wn);
	th_fill(&rng, b, 64);
	th_fill(&rng, x, sizeof x / sizeof x[0]);
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,32,?,?");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(c, mg, k, k), w);
	mb_initializer_f32(m, "b", 1, (const int64_t[]){ mg }, b);
	mb_node(m, "up", "ConvTranspose", "", "x,w,b", "y");
	before = a.live_bytes;
	model = th_load_ok(env, m);
	wt = th_value_init(model, "w");
	assert_non_null(wt);
	assert_null(wt->data);                   /* released */
	assert_int_equal(wt->numel, (int64_t)wn); /* its type stays */
	/* the packed panels (W padded to whole row panels) and small tables, not W twice */
	if (a.live_bytes - before > wn * sizeof(float) * 3 / 2)
		fail_msg("%zu bytes live after load for a %zu-byte W", a.live_bytes - before, wn * sizeof(float));

	want = malloc((size_t)(mg * 9 * 9) * sizeof *want);
	assert_non_null(want);
	/* the fast path (packed panels) */
	th_ref_conv_transpose2d(&p, x, w, b, want);
	th_run_check(env, model, x, (const int64_t[]){ 1, c, 6, 6 }, 0, want, (size_t)(mg * 81), seed, "fast path");
	/* a 1x1 input: the output-driven fast path would do (4 * 4)^2 products per channel pair
	 * where the scatter does (1 * 4)^2, more than the 8x it accepts
	 * (onnxrun__convt_out_driven_waste), so it declines; the scatter reads W rebuilt from
	 * the panels */
	th_ref_conv_transpose2d(&p1, x, w, b, want);
	th_run_check(env, model, x, (const int64_t[]){ 1, c, 1, 1 }, 0, want, (size_t)(mg * 16), seed, "scatter");
	/* another ISA than the one packed at load: W rebuilt and packed per run */
	for (int isa = ONNXRUN__ISA_SCALAR; isa < ONNXRUN__ISA_COUNT; isa++) {
		if (isa == (int)saved || !onnxrun__isa_supported((enum onnxrun__isa)isa))
			continue;
		onnxrun__isa_set((enum onnxrun__isa)isa);
		th_ref_conv_transpose2d(&p, x, w, b, want);
		th_run_check(env, model, x, (const int64_t[]){ 1, c, 6, 6 }, 0, want, (size_t)(mg * 81), seed,
		          "other ISA");
	}
	onnxrun__isa_set(saved);
	free(want);
	free(w);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	assert_int_equal(a.live, 0);
}

/* ConvTranspose 2-D by the definition, in double: every input element scattered through the
 * kernel, then the bias (th_ref_conv_transpose2d's loops; group 1, dilation 1). */
static void ref_f64(const struct th_ct2d *p, const double *x, const double *w, const double *b, double *out)
{
	memset(out, 0, (size_t)(p->mg * p->oh * p->ow) * sizeof *out);
	for (int64_t c = 0; c < p->c; c++)
		for (int64_t i = 0; i < p->h; i++)
			for (int64_t j = 0; j < p->w; j++)
				for (int64_t m = 0; m < p->mg; m++)
					for (int64_t ki = 0; ki < p->kh; ki++)
						for (int64_t kj = 0; kj < p->kw; kj++) {
							const int64_t oi = i * p->sh - p->pt + ki, oj = j * p->sw - p->pl + kj;
							if (oi >= 0 && oi < p->oh && oj >= 0 && oj < p->ow)
								out[(m * p->oh + oi) * p->ow + oj] += x[(c * p->h + i) * p->w + j] *
								                                      w[((c * p->mg + m) * p->kh + ki) * p->kw + kj];
						}
	for (int64_t m = 0; m < p->mg; m++)
		for (int64_t k = 0; k < p->oh * p->ow; k++)
			out[m * p->oh * p->ow + k] += b[m];
}

/* Runs the float64 model on x (dims xd) and compares its output with want (n values): within
 * 1e-12 relative to the largest |want| (sums of 512 products of values in [-0.5, 0.5)). */
static void run_check_f64(struct onnxrun_env *env, const struct onnxrun_model *model, const double *x,
                          const int64_t *xd, const double *want, size_t n, const char *what)
{
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *tx = NULL;
	const struct onnxrun_tensor *y = NULL;
	double scale = 0.0;
	TH_ASSERT_STATUS(onnxrun_tensor_create(env, ONNXRUN_DTYPE_DOUBLE, 4, xd, &tx), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	memcpy(onnxrun_tensor_data(tx), x, onnxrun_tensor_nbytes(tx));
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, tx), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, 0, &y), ONNXRUN_OK, onnxrun_session_error(s));
	assert_int_equal((size_t)onnxrun_tensor_numel(y), n);
	for (size_t i = 0; i < n; i++)
		scale = fabs(want[i]) > scale ? fabs(want[i]) : scale;
	for (size_t i = 0; i < n; i++) {
		const double got = ((const double *)onnxrun_tensor_data(y))[i];
		if (!(fabs(got - want[i]) <= 1e-12 * scale))
			fail_msg("%s: element %zu is %.17g, expected %.17g", what, i, got, want[i]);
	}
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
}

/* The same for a float64 W: released at load, rebuilt for the scatter and for another ISA. */
static void test_released_and_rebuilt_f64(void **state)
{
	const int64_t c = 32, mg = 16, k = 4;
	const size_t wn = (size_t)(c * mg * k * k);
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model;
	struct th_rng rng;
	double *w = malloc(wn * sizeof *w), b[16], x[32 * 6 * 6], want[16 * 9 * 9];
	struct th_ct2d p = { 1, c, 6, 6, mg, k, k, 1, 1, 1, 1, 1, 0, 0, 9, 9 };
	struct th_ct2d p1 = { 1, c, 1, 1, mg, k, k, 1, 1, 1, 1, 1, 0, 0, 4, 4 };
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t;
	const struct onnxrun_tensor *wt;
	const enum onnxrun__isa saved = onnxrun__isa_current();
	size_t before;
	(void)state;
	assert_non_null(w);
	th_rng_seed(&rng, 11);
	for (size_t i = 0; i < wn; i++)
		w[i] = (double)(th_rng_next(&rng) >> 11) / 9007199254740992.0 - 0.5;
	for (size_t i = 0; i < 16; i++)
		b[i] = (double)(th_rng_next(&rng) >> 11) / 9007199254740992.0 - 0.5;
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
		x[i] = (double)(th_rng_next(&rng) >> 11) / 9007199254740992.0 - 0.5;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_DOUBLE, "1,32,?,?");
	mb_output(m, "y", MB_DOUBLE, NULL);
	t = mb_tensor("w", MB_DOUBLE, 4, (const int64_t[]){ c, mg, k, k });
	mb_tensor_double_data(t, wn, w);
	mb_add_initializer(m, t);
	t = mb_tensor("b", MB_DOUBLE, 1, (const int64_t[]){ mg });
	mb_tensor_double_data(t, 16, b);
	mb_add_initializer(m, t);
	mb_node(m, "up", "ConvTranspose", "", "x,w,b", "y");
	before = a.live_bytes;
	model = th_load_ok(env, m);
	wt = th_value_init(model, "w");
	assert_non_null(wt);
	assert_null(wt->data); /* released */
	assert_int_equal(wt->numel, (int64_t)wn);
	if (a.live_bytes - before > wn * sizeof(double) * 3 / 2)
		fail_msg("%zu bytes live after load for a %zu-byte W", a.live_bytes - before, wn * sizeof(double));
	ref_f64(&p, x, w, b, want);
	run_check_f64(env, model, x, (const int64_t[]){ 1, c, 6, 6 }, want, (size_t)(mg * 81), "float64 fast path");
	/* 1x1 input: the fast path declines (onnxrun__convt_out_driven_waste), the scatter reads
	 * W rebuilt from the packing */
	ref_f64(&p1, x, w, b, want);
	run_check_f64(env, model, x, (const int64_t[]){ 1, c, 1, 1 }, want, (size_t)(mg * 16), "float64 scatter");
	for (int isa = ONNXRUN__ISA_SCALAR; isa < ONNXRUN__ISA_COUNT; isa++) {
		if (isa == (int)saved || !onnxrun__isa_supported((enum onnxrun__isa)isa))
			continue;
		onnxrun__isa_set((enum onnxrun__isa)isa);
		ref_f64(&p, x, w, b, want);
		run_check_f64(env, model, x, (const int64_t[]){ 1, c, 6, 6 }, want, (size_t)(mg * 81),
		              "float64 other ISA");
	}
	onnxrun__isa_set(saved);
	free(w);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	assert_int_equal(a.live, 0);
}

/* Which of W's uses allow the release. */
static void test_release_needs_every_use(void **state)
{
	const uint64_t seed = 11;
	struct onnxrun_env *env = th_env();
	struct th_rng rng;
	float w[8 * 8 * 9], x[8 * 3 * 3], want[8 * 9 * 9];
	struct th_ct2d p = { 1, 8, 3, 3, 8, 3, 3, 1, 3, 3, 1, 1, 0, 0, 9, 9 };
	(void)state;
	th_rng_seed(&rng, seed);
	th_fill(&rng, w, sizeof w / sizeof w[0]);
	th_fill(&rng, x, sizeof x / sizeof x[0]);
	th_ref_conv_transpose2d(&p, x, w, NULL, want);
	for (int variant = 0; variant < 3; variant++) {
		/* 0: W is also a graph output (kept); 1: two ConvTranspose share W (released);
		 * 2: W also feeds a DepthToSpace (kept) */
		Onnx__ModelProto *m = mb_model(8);
		struct onnxrun_model *model;
		Onnx__NodeProto *n;
		mb_opset(m, "", 13);
		mb_input(m, "x", MB_FLOAT, "1,8,3,3");
		mb_output(m, "y", MB_FLOAT, NULL);
		mb_output(m, variant == 0 ? "w" : "z", MB_FLOAT, NULL);
		mb_initializer_f32(m, "w", D4(8, 8, 3, 3), w);
		n = mb_node(m, "a", "ConvTranspose", "", "x,w", "y");
		mb_attr_ints(n, "strides", MB_INTS(3, 3));
		if (variant == 1) {
			n = mb_node(m, "b", "ConvTranspose", "", "x,w", "z");
			mb_attr_ints(n, "strides", MB_INTS(3, 3));
		} else if (variant == 2) {
			n = mb_node(m, "d", "DepthToSpace", "", "w", "z");
			mb_attr_int(n, "blocksize", 1);
		}
		model = th_load_ok(env, m);
		if (variant == 1)
			assert_null(th_value_init(model, "w")->data);
		else
			assert_non_null(th_value_init(model, "w")->data);
		th_run_check(env, model, x, (const int64_t[]){ 1, 8, 3, 3 }, 0, want, sizeof want / sizeof want[0], seed,
		          "y");
		if (variant == 1)
			th_run_check(env, model, x, (const int64_t[]){ 1, 8, 3, 3 }, 1, want, sizeof want / sizeof want[0],
			          seed, "z (shared W)");
		else
			th_run_check(env, model, x, (const int64_t[]){ 1, 8, 3, 3 }, 1, w, sizeof w / sizeof w[0], seed,
			          "W itself");
		onnxrun_model_free(model);
	}
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unpack_round_trip),
		cmocka_unit_test(test_released_and_rebuilt),
		cmocka_unit_test(test_released_and_rebuilt_f64),
		cmocka_unit_test(test_release_needs_every_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
