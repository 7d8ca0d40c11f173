/*
 * test_conformance.c - every ONNX backend case in tests/data and every example model in
 * models/ through the library: load, feed input_<i>.pb of each test_data_set_*, run, and
 * compare each output with output_<i>.pb (rtol 1e-3, atol 1e-7 as the ONNX backend tests;
 * integer types exactly).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "onnxrun.h"

static int is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Element i of a float-like tensor as double. */
static double as_double(const struct onnxrun_tensor *t, int64_t i)
{
	const void *d = onnxrun_tensor_data(t);
	switch (onnxrun_tensor_dtype(t)) {
	case ONNXRUN_DTYPE_FLOAT: return ((const float *)d)[i];
	case ONNXRUN_DTYPE_DOUBLE: return ((const double *)d)[i];
	default: return NAN;
	}
}

/* Compares got with expected; returns the number of mismatching elements (printed). */
static int compare(const char *where, const struct onnxrun_tensor *got, const struct onnxrun_tensor *exp)
{
	int64_t n = onnxrun_tensor_numel(exp);
	int bad = 0;
	if (onnxrun_tensor_dtype(got) != onnxrun_tensor_dtype(exp) || onnxrun_tensor_rank(got) != onnxrun_tensor_rank(exp) ||
	    memcmp(onnxrun_tensor_dims(got), onnxrun_tensor_dims(exp),
	           (size_t)onnxrun_tensor_rank(exp) * sizeof(int64_t))) {
		print_error("%s: dtype or shape differs\n", where);
		return 1;
	}
	if (onnxrun_tensor_dtype(exp) != ONNXRUN_DTYPE_FLOAT && onnxrun_tensor_dtype(exp) != ONNXRUN_DTYPE_DOUBLE) {
		if (n && memcmp(onnxrun_tensor_data(got), onnxrun_tensor_data(exp), onnxrun_tensor_nbytes(exp))) {
			print_error("%s: integer data differs\n", where);
			return 1;
		}
		return 0;
	}
	for (int64_t i = 0; i < n; i++) {
		double g = as_double(got, i), e = as_double(exp, i);
		if (!(fabs(g - e) <= 1e-7 + 1e-3 * fabs(e)) && !(isnan(g) && isnan(e))) {
			if (bad++ < 3)
				print_error("%s: element %lld: expected %.9g got %.9g\n", where, (long long)i, e, g);
		}
	}
	return bad;
}

/* Runs one data set folder against a loaded model; returns failures. */
static int run_set(struct onnxrun_env *env, struct onnxrun_model *m, struct onnxrun_session *s, const char *set)
{
	struct onnxrun_tensor *in[16] = { 0 };
	size_t n_in = onnxrun_model_input_count(m);
	char path[4096];
	int fails = 0;
	assert_true(n_in <= 16);
	for (size_t i = 0; i < n_in; i++) {
		snprintf(path, sizeof path, "%s/input_%zu.pb", set, i);
		if (onnxrun_tensor_load_pb(env, path, &in[i]) != ONNXRUN_OK) {
			print_error("%s\n", onnxrun_env_error(env));
			fails++;
			goto done;
		}
		if (onnxrun_session_set_input(s, i, in[i]) != ONNXRUN_OK) {
			print_error("%s: %s\n", set, onnxrun_session_error(s));
			fails++;
			goto done;
		}
	}
	if (onnxrun_session_run(s) != ONNXRUN_OK) {
		print_error("%s: %s\n", set, onnxrun_session_error(s));
		fails++;
		goto done;
	}
	for (size_t o = 0; o < onnxrun_model_output_count(m); o++) {
		const struct onnxrun_tensor *got;
		struct onnxrun_tensor *exp;
		snprintf(path, sizeof path, "%s/output_%zu.pb", set, o);
		assert_int_equal(onnxrun_session_output(s, o, &got), ONNXRUN_OK);
		assert_int_equal(onnxrun_tensor_load_pb(env, path, &exp), ONNXRUN_OK);
		fails += compare(path, got, exp) ? 1 : 0;
		onnxrun_tensor_free(exp);
	}
done:
	for (size_t i = 0; i < n_in; i++)
		onnxrun_tensor_free(in[i]);
	return fails;
}

/* Runs every test_data_set_* of the case folder in one session; returns sets run. */
static int run_case(const char *dir, int *fails)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	char path[4096];
	int sets = 0;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (onnxrun_model_load_file(env, path, &m) != ONNXRUN_OK) {
		print_error("%s\n", onnxrun_env_error(env));
		(*fails)++;
		onnxrun_env_free(env);
		return 0;
	}
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	for (int k = 0; k < 100; k++) {
		snprintf(path, sizeof path, "%s/test_data_set_%d", dir, k);
		if (!is_dir(path))
			break;
		*fails += run_set(env, m, s, path);
		sets++;
	}
	onnxrun_session_free(s);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	return sets;
}

/* Runs every case folder (one holding model.onnx) directly under root. */
static int run_tree(const char *root, int *fails)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char dir[4096], model[4200];
	int cases = 0;
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
		snprintf(model, sizeof model, "%s/model.onnx", dir);
		if (!is_file(model))
			continue;
		assert_true(run_case(dir, fails) >= 1);
		cases++;
	}
	closedir(d);
	return cases;
}

static void test_backend_cases(void **state)
{
	int fails = 0;
	(void)state;
	/* The 13 ONNX node tests and 3 PyTorch exports copied from ../shared/conformance. */
	assert_int_equal(run_tree(ONNXRUN_TEST_DATA, &fails), 16);
	assert_int_equal(fails, 0);
}

static void test_example_models(void **state)
{
	int fails = 0;
	(void)state;
	assert_true(run_tree(ONNXRUN_MODELS_DIR, &fails) >= 6);
	assert_int_equal(fails, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend_cases),
		cmocka_unit_test(test_example_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
