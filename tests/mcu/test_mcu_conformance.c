/*
 * test_mcu_conformance.c - the conformance tree on the target: for each case folder named
 * in LIST (one per line: tests/data/<case> and the bundled models), the model is loaded
 * borrowed from its bytes, every test_data_set_<k>/input_<i>.pb is set, the session runs,
 * and each output is compared with output_<i>.pb: floating-point types with the CLI's
 * default tolerance (|got - want| <= 1e-7 + 1e-3 |want|), every other type exactly.
 * Each case runs in an arena of its own, freed to nothing afterwards.
 * Arguments: LIST
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mcu_test.h"
#include "runtime/runtime.h"

static double value_at(const struct onnxrun_tensor *t, int64_t i)
{
	const void *d = onnxrun_tensor_data(t);
	switch (onnxrun_tensor_dtype(t)) {
	case ONNXRUN_DTYPE_FLOAT: return ((const float *)d)[i];
	case ONNXRUN_DTYPE_DOUBLE: return ((const double *)d)[i];
	case ONNXRUN_DTYPE_FLOAT16: return onnxrun__f16_to_f32(((const uint16_t *)d)[i]);
	case ONNXRUN_DTYPE_BFLOAT16: return onnxrun__bf16_to_f32(((const uint16_t *)d)[i]);
	default: return 0;
	}
}

static bool is_float(enum onnxrun_dtype t)
{
	return t == ONNXRUN_DTYPE_FLOAT || t == ONNXRUN_DTYPE_DOUBLE || t == ONNXRUN_DTYPE_FLOAT16 ||
	       t == ONNXRUN_DTYPE_BFLOAT16;
}

/* Compares output i of s with the expected tensor; the mismatches. */
static long compare(const char *where, const struct onnxrun_tensor *got, const struct onnxrun_tensor *want)
{
	const int64_t n = onnxrun_tensor_numel(want);
	long bad = 0;
	if (onnxrun_tensor_dtype(got) != onnxrun_tensor_dtype(want) || onnxrun_tensor_numel(got) != n) {
		printf("%s: type or size differs\n", where);
		return 1;
	}
	if (!is_float(onnxrun_tensor_dtype(want)))
		return memcmp(onnxrun_tensor_data(got), onnxrun_tensor_data(want), onnxrun_tensor_nbytes(want)) != 0;
	for (int64_t i = 0; i < n; i++) {
		const double g = value_at(got, i), w = value_at(want, i);
		if (!(fabs(g - w) <= 1e-7 + 1e-3 * fabs(w)) && bad++ < 2)
			printf("%s: element %ld is %.9g, expected %.9g\n", where, (long)i, g, w);
	}
	return bad;
}

static int run_case(const char *dir)
{
	const size_t mark = mcu_big_mark();
	struct onnxrun_allocator alloc;
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	char path[512];
	size_t size, arena_size = 4u << 20;
	void *bytes, *buf;
	int sets = 0;
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (!(bytes = mcu_read_file(path, &size))) {
		CHECK(0, "cannot read %s", path);
		return 0;
	}
	buf = mcu_big_alloc(arena_size, 8);
	CHECK(onnxrun_arena_init(&alloc, buf, arena_size) == ONNXRUN_OK, "arena");
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");
	if (onnxrun_model_load_borrowed(env, bytes, size, &model) != ONNXRUN_OK) {
		CHECK(0, "%s: %s", dir, onnxrun_env_error(env));
		onnxrun_env_free(env);
		mcu_big_release(mark);
		return 0;
	}
	for (int k = 0; k < 8; k++) {
		struct onnxrun_session *s = NULL;
		struct onnxrun_tensor *in[8] = { NULL };
		const size_t n_in = onnxrun_model_input_count(model), n_out = onnxrun_model_output_count(model);
		snprintf(path, sizeof path, "%s/test_data_set_%d/output_0.pb", dir, k);
		if (!mcu_file_exists(path))
			break;
		CHECK(onnxrun_session_create(model, &s) == ONNXRUN_OK, "session");
		for (size_t i = 0; i < n_in && i < 8; i++) {
			void *tb;
			size_t ts;
			snprintf(path, sizeof path, "%s/test_data_set_%d/input_%u.pb", dir, k, (unsigned)i);
			if (!(tb = mcu_read_file(path, &ts)))
				continue; /* an initializer with a default: not fed */
			CHECK(onnxrun_tensor_decode_pb(env, tb, ts, &in[i]) == ONNXRUN_OK, "%s: %s", path,
			      onnxrun_env_error(env));
			CHECK(onnxrun_session_set_input(s, i, in[i]) == ONNXRUN_OK, "%s: %s", path, onnxrun_session_error(s));
		}
		if (onnxrun_session_run(s) != ONNXRUN_OK) {
			CHECK(0, "%s set %d: %s", dir, k, onnxrun_session_error(s));
		} else {
			for (size_t o = 0; o < n_out; o++) {
				const struct onnxrun_tensor *got;
				struct onnxrun_tensor *want = NULL;
				void *tb;
				size_t ts;
				snprintf(path, sizeof path, "%s/test_data_set_%d/output_%u.pb", dir, k, (unsigned)o);
				if (!(tb = mcu_read_file(path, &ts)) || onnxrun_tensor_decode_pb(env, tb, ts, &want) ||
				    onnxrun_session_output(s, o, &got)) {
					CHECK(0, "%s: cannot compare", path);
					continue;
				}
				CHECK(compare(path, got, want) == 0, "%s differs", path);
				onnxrun_tensor_free(want);
			}
		}
		onnxrun_session_free(s);
		for (size_t i = 0; i < 8; i++)
			onnxrun_tensor_free(in[i]);
		sets++;
	}
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	CHECK(onnxrun_arena_used(&alloc) == 0, "%s: %u bytes left in the arena", dir, (unsigned)onnxrun_arena_used(&alloc));
	mcu_big_release(mark);
	return sets;
}

int main(int argc, char **argv)
{
	size_t size;
	char *list, *line, *save = NULL;
	int cases = 0, sets = 0;
	if (argc < 2 || !(list = mcu_read_file(argv[1], &size))) {
		printf("usage: test_mcu_conformance LIST (one case folder per line)\n");
		return 2;
	}
	list[size] = '\0';
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const int before = mcu_failures;
		const int n = run_case(line);
		sets += n;
		cases++;
		printf("%-60s %d set(s) %s\n", line, n, mcu_failures == before && n > 0 ? "ok" : "FAILED");
		if (n == 0)
			mcu_failures++;
	}
	printf("conformance: %d cases, %d test sets\n", cases, sets);
	return mcu_finish("conformance");
}
