/*
 * test_metadata.c - onnxrun_model_metadata / _metadata_prop (every ModelProto and GraphProto
 * descriptive field, set and absent, through buffers and files and inspections, under
 * allocation failures) and the opset policy (onnxrun_env_set_allow_newer_opset: an ai.onnx
 * opset newer than ONNXRUN_NEWEST_KNOWN_OPSET is refused by default, naming the opset, and
 * loads with a warning when allowed). Models are built with model_builder.h.
 */
#include "model_builder.c"

#ifndef ONNXRUN_TEST_TMP
#define ONNXRUN_TEST_TMP "/tmp"
#endif

struct log_capture {
	int warnings;
	char last[1024];
};

static void capture_log(void *ctx, enum onnxrun_log_level level, const char *message)
{
	struct log_capture *c = ctx;
	if (level == ONNXRUN_LOG_WARNING)
		c->warnings++;
	snprintf(c->last, sizeof c->last, "%s", message ? message : "(null)");
}

/* x [1,4,2,3] float -> DepthToSpace(blocksize 2) -> y [1,1,4,6] at the given ai.onnx opset. */
static Onnx__ModelProto *d2s_model(int64_t opset)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	mb_opset(m, "", opset);
	mb_input(m, "x", MB_FLOAT, "1,4,2,3");
	mb_output(m, "y", MB_FLOAT, "1,1,4,6");
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	return m;
}

static void add_prop(Onnx__ModelProto *m, const char *key, const char *value)
{
	Onnx__StringStringEntryProto *e = mb__alloc(sizeof *e);
	onnx__string_string_entry_proto__init(e);
	e->key = mb__strdup(key);
	e->value = mb__strdup(value);
	MB__PUSH(m->metadata_props, m->n_metadata_props, e);
}

/* Every field set, two props with a repeated key, a doc string with a newline. */
static Onnx__ModelProto *described_model(void)
{
	Onnx__ModelProto *m = d2s_model(13);
	m->producer_version = mb__strdup("2.1.0");
	m->domain = mb__strdup("org.example.vision");
	m->doc_string = mb__strdup("A 2x upsampler.\nSecond line.");
	m->has_model_version = 1;
	m->model_version = 7;
	m->graph->doc_string = mb__strdup("the graph");
	add_prop(m, "license", "MIT");
	add_prop(m, "author", "");
	add_prop(m, "license", "BSD");
	return m;
}

static void check_described(const struct onnxrun_model *model)
{
	struct onnxrun_model_metadata md;
	const char *key = "unset", *value = "unset";
	assert_int_equal(onnxrun_model_metadata(model, &md), ONNXRUN_OK);
	assert_string_equal(md.producer_name, "onnxrun-tests");
	assert_string_equal(md.producer_version, "2.1.0");
	assert_string_equal(md.domain, "org.example.vision");
	assert_string_equal(md.doc_string, "A 2x upsampler.\nSecond line.");
	assert_int_equal(md.model_version, 7);
	assert_string_equal(md.graph_name, "g");
	assert_string_equal(md.graph_doc_string, "the graph");
	assert_int_equal(md.prop_count, 3);
	assert_int_equal(onnxrun_model_metadata_prop(model, 0, &key, &value), ONNXRUN_OK);
	assert_string_equal(key, "license");
	assert_string_equal(value, "MIT");
	assert_int_equal(onnxrun_model_metadata_prop(model, 1, &key, &value), ONNXRUN_OK);
	assert_string_equal(key, "author");
	assert_string_equal(value, "");
	assert_int_equal(onnxrun_model_metadata_prop(model, 2, &key, &value), ONNXRUN_OK);
	assert_string_equal(key, "license");
	assert_string_equal(value, "BSD");
	/* out of range: an error, nothing written */
	key = value = "unset";
	assert_int_equal(onnxrun_model_metadata_prop(model, 3, &key, &value), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(key, "unset");
	assert_string_equal(value, "unset");
}

static void test_metadata_buffer(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = th_load_ok(env, described_model());
	(void)state;
	check_described(model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

static void test_metadata_file_and_inspect(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	const char *path = ONNXRUN_TEST_TMP "/metadata_described.onnx";
	size_t size;
	uint8_t *buf = mb_finish(described_model(), &size);
	(void)state;
	assert_int_equal(th_mkdirs(ONNXRUN_TEST_TMP), 0);
	assert_int_equal(mb_write_file(path, buf, size), 0);
	free(buf);
	TH_ASSERT_STATUS(onnxrun_model_load_file(env, path, &model), ONNXRUN_OK, onnxrun_env_error(env));
	check_described(model);
	onnxrun_model_free(model);
	model = NULL;
	TH_ASSERT_STATUS(onnxrun_model_inspect_file(env, path, &model), ONNXRUN_OK, onnxrun_env_error(env));
	check_described(model);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* A model that sets none of the fields: empty strings, version 0, no props. */
static void test_metadata_absent(void **state)
{
	struct onnxrun_env *env = th_env();
	Onnx__ModelProto *m = d2s_model(13);
	struct onnxrun_model *model;
	struct onnxrun_model_metadata md;
	const char *key, *value;
	(void)state;
	free(m->producer_name);
	m->producer_name = NULL;
	free(m->graph->name);
	m->graph->name = NULL;
	model = th_load_ok(env, m);
	memset(&md, 0x5a, sizeof md);
	assert_int_equal(onnxrun_model_metadata(model, &md), ONNXRUN_OK);
	assert_string_equal(md.producer_name, "");
	assert_string_equal(md.producer_version, "");
	assert_string_equal(md.domain, "");
	assert_string_equal(md.doc_string, "");
	assert_int_equal(md.model_version, 0);
	assert_string_equal(md.graph_name, "");
	assert_string_equal(md.graph_doc_string, "");
	assert_int_equal(md.prop_count, 0);
	assert_int_equal(onnxrun_model_metadata_prop(model, 0, &key, &value), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_metadata(NULL, &md), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_metadata(model, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_metadata_prop(NULL, 0, &key, &value), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_model_metadata_prop(model, 0, NULL, &value), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
}

/* Every allocation of a load with metadata failing in turn: OUT_OF_MEMORY, nothing leaked. */
static void test_metadata_oom(void **state)
{
	size_t size;
	uint8_t *buf = mb_finish(described_model(), &size);
	long allocations;
	struct th_alloc a;
	struct onnxrun_env *env = th_env_counted(&a);
	struct onnxrun_model *model = NULL;
	(void)state;
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_OK, onnxrun_env_error(env));
	onnxrun_model_free(model);
	allocations = a.count;
	for (long k = 1; k < allocations; k++) {
		long live_before = a.live;
		enum onnxrun_status st;
		model = NULL;
		a.count = 0;
		a.fail_at = k;
		st = onnxrun_model_load_buffer(env, buf, size, NULL, &model);
		a.fail_at = -1;
		if (st == ONNXRUN_OK) {
			check_described(model);
			onnxrun_model_free(model);
		} else {
			TH_ASSERT_STATUS(st, ONNXRUN_ERROR_OUT_OF_MEMORY, onnxrun_env_error(env));
			assert_null(model);
		}
		if (a.live != live_before)
			fail_msg("allocation %ld failing leaked %ld blocks", k, a.live - live_before);
	}
	free(buf);
	onnxrun_env_free(env);
	assert_int_equal(a.live, 0);
}

/* The default: refused as UNSUPPORTED naming the opset and the newest known; no model. */
static void test_newer_opset_refused(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model = NULL;
	size_t size;
	uint8_t *buf = mb_finish(d2s_model(ONNXRUN_NEWEST_KNOWN_OPSET + 1), &size);
	char want[64];
	(void)state;
	snprintf(want, sizeof want, "opset %d of ai.onnx", ONNXRUN_NEWEST_KNOWN_OPSET + 1);
	TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_ERROR_UNSUPPORTED,
	                 onnxrun_env_error(env));
	assert_null(model);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), want);
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "newest onnxrun knows (28)");
	TH_ASSERT_MSG_HAS(onnxrun_env_error(env), "onnxrun_env_set_allow_newer_opset");
	/* an inspection applies the same policy */
	TH_ASSERT_STATUS(onnxrun_model_inspect_buffer(env, buf, size, NULL, &model), ONNXRUN_ERROR_UNSUPPORTED,
	                 onnxrun_env_error(env));
	assert_null(model);
	/* the newest known opset itself loads silently */
	free(buf);
	buf = mb_finish(d2s_model(ONNXRUN_NEWEST_KNOWN_OPSET), &size);
	{
		struct log_capture cap = { 0 };
		onnxrun_env_set_log(env, capture_log, &cap);
		TH_ASSERT_STATUS(onnxrun_model_load_buffer(env, buf, size, NULL, &model), ONNXRUN_OK,
		                 onnxrun_env_error(env));
		assert_int_equal(cap.warnings, 0);
		onnxrun_env_set_log(env, NULL, NULL);
	}
	onnxrun_model_free(model);
	free(buf);
	/* a newer opset of another domain is not the policy's business (no op uses it here) */
	{
		Onnx__ModelProto *m = d2s_model(13);
		mb_opset(m, "com.example", 99);
		model = th_load_ok(env, m);
		onnxrun_model_free(model);
	}
	onnxrun_env_free(env);
}

/* Allowed: loads with one warning naming the opset, runs DepthToSpace's newest version. */
static void test_newer_opset_allowed(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun_model *model;
	struct onnxrun_node_info ni;
	struct log_capture cap = { 0 };
	float x[24], want[24];
	struct th_rng rng;
	(void)state;
	assert_int_equal(onnxrun_env_set_allow_newer_opset(NULL, 1), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_env_set_allow_newer_opset(env, 1), ONNXRUN_OK);
	onnxrun_env_set_log(env, capture_log, &cap);
	model = th_load_ok(env, d2s_model(99));
	assert_int_equal(cap.warnings, 1);
	TH_ASSERT_MSG_HAS(cap.last, "opset 99 of ai.onnx");
	assert_int_equal(onnxrun_model_node_info(model, 0, &ni), ONNXRUN_OK);
	assert_int_equal(ni.since_version, 28);
	th_rng_seed(&rng, 5);
	th_fill(&rng, x, 24);
	th_ref_depth_to_space(x, want, sizeof(float), 1, 4, 2, 3, 2, false);
	th_run_check(env, model, x, (const int64_t[]){ 1, 4, 2, 3 }, 0, want, 24, 5, "DepthToSpace at opset 99");
	onnxrun_model_free(model);
	/* and switching it off again refuses */
	assert_int_equal(onnxrun_env_set_allow_newer_opset(env, 0), ONNXRUN_OK);
	model = NULL;
	TH_ASSERT_STATUS(th_load(env, d2s_model(99), &model), ONNXRUN_ERROR_UNSUPPORTED, onnxrun_env_error(env));
	onnxrun_env_set_log(env, NULL, NULL);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_buffer),
		cmocka_unit_test(test_metadata_file_and_inspect),
		cmocka_unit_test(test_metadata_absent),
		cmocka_unit_test(test_metadata_oom),
		cmocka_unit_test(test_newer_opset_refused),
		cmocka_unit_test(test_newer_opset_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
