/*
 * compare.c - compares the outputs of a run with the expected ones and prints one
 * PASS/FAIL line per output (or a summary line when no expected value was given).
 *
 * Floating types (float16 and bfloat16 widened to float, complex part by part) pass when
 * |got - exp| <= atol + rtol * |exp| for every number; NaN matches only NaN, an infinity
 * only the same infinity. Integers, bool and strings must be equal. dtype and shape must
 * match exactly. max_abs is the largest |got - exp|, max_rel the largest
 * |got - exp| / |exp| over the numbers with exp != 0.
 */
#include <math.h>
#include <string.h>

#include "cli.h"

/* Running statistics of one comparison. */
struct cmp_stats {
	double max_abs;
	double max_rel;
	int64_t bad;       /* elements that differ */
	int64_t first_bad; /* flat index of the first, -1 if none */
};

/* Accounts one pair of floating numbers; returns whether they match. */
static int match_float(double e, double g, const struct cli_options *opts, struct cmp_stats *st)
{
	if (isnan(e) || isnan(g))
		return isnan(e) && isnan(g);
	if (e == g)
		return 1;
	double d = fabs(g - e);
	if (d > st->max_abs)
		st->max_abs = d;
	if (e != 0.0 && d / fabs(e) > st->max_rel)
		st->max_rel = d / fabs(e);
	return d <= opts->atol + opts->rtol * fabs(e);
}

/* Accounts one pair of elements that must be equal bit for bit (integers, bool). */
static int match_exact(enum onnxrun_dtype dtype, const void *exp, const void *got, int64_t i,
                       struct cmp_stats *st)
{
	size_t size = onnxrun_dtype_size(dtype);

	if (memcmp((const char *)exp + (size_t)i * size, (const char *)got + (size_t)i * size,
	           size) == 0)
		return 1;
	double e = cli_element_value(dtype, exp, i, 0), g = cli_element_value(dtype, got, i, 0);
	double d = fabs(g - e);
	if (d > st->max_abs)
		st->max_abs = d;
	if (e != 0.0 && d / fabs(e) > st->max_rel)
		st->max_rel = d / fabs(e);
	return 0;
}

/* Whether two string elements hold the same bytes. */
static int match_string(const struct onnxrun_string *e, const struct onnxrun_string *g)
{
	return e->size == g->size && (e->size == 0 || memcmp(e->data, g->data, e->size) == 0);
}

/* Compares all elements of two tensors of equal dtype and shape into st. */
static void compare_elements(const struct onnxrun_tensor *exp, const struct onnxrun_tensor *got,
                             const struct cli_options *opts, struct cmp_stats *st)
{
	enum onnxrun_dtype dtype = onnxrun_tensor_dtype(exp);
	const void *ed = onnxrun_tensor_data(exp), *gd = onnxrun_tensor_data(got);
	int64_t n = onnxrun_tensor_numel(exp);
	int parts = cli_dtype_parts(dtype), fp = cli_dtype_is_float(dtype);

	for (int64_t i = 0; i < n; i++) {
		int ok = 1;
		if (dtype == ONNXRUN_DTYPE_STRING) {
			ok = match_string(&((const struct onnxrun_string *)ed)[i],
			                  &((const struct onnxrun_string *)gd)[i]);
		} else if (fp) {
			for (int p = 0; p < parts; p++)
				ok &= match_float(cli_element_value(dtype, ed, i, p),
				                  cli_element_value(dtype, gd, i, p), opts, st);
		} else {
			ok = match_exact(dtype, ed, gd, i, st);
		}
		if (!ok && st->bad++ == 0)
			st->first_bad = i;
	}
}

/* Prints flat index i of a tensor of shape dims as "[i0,i1,...]". */
static void print_index(FILE *f, int32_t rank, const int64_t *dims, int64_t i)
{
	int64_t idx[ONNXRUN_MAX_RANK];

	for (int32_t d = rank - 1; d >= 0; d--) {
		idx[d] = dims[d] > 0 ? i % dims[d] : 0;
		i = dims[d] > 0 ? i / dims[d] : 0;
	}
	cli_print_shape(f, rank, idx);
}

/* Whether two tensors have the same dtype and shape. */
static int same_type(const struct onnxrun_tensor *a, const struct onnxrun_tensor *b)
{
	int32_t rank = onnxrun_tensor_rank(a);

	return onnxrun_tensor_dtype(a) == onnxrun_tensor_dtype(b) &&
	       rank == onnxrun_tensor_rank(b) &&
	       (rank == 0 ||
	        memcmp(onnxrun_tensor_dims(a), onnxrun_tensor_dims(b), (size_t)rank * sizeof(int64_t)) == 0);
}

/* Prints the FAIL line of a dtype or shape mismatch. */
static void print_type_mismatch(const char *name, const struct onnxrun_tensor *exp,
                                const struct onnxrun_tensor *got)
{
	printf("FAIL output '%s': expected ", name);
	cli_print_tensor_type(stdout, exp);
	fputs(" got ", stdout);
	cli_print_tensor_type(stdout, got);
	fputc('\n', stdout);
}

/* Prints the PASS/FAIL line of a comparison of equal types. */
static void print_result(const char *name, const struct onnxrun_tensor *exp,
                         const struct onnxrun_tensor *got, const struct cmp_stats *st)
{
	printf("%s output '%s' (", st->bad == 0 ? "PASS" : "FAIL", name);
	cli_print_tensor_type(stdout, got);
	if (onnxrun_tensor_dtype(got) == ONNXRUN_DTYPE_STRING)
		fputs("): exact", stdout);
	else
		printf("): max_abs=%.3g max_rel=%.3g", st->max_abs, st->max_rel);
	if (st->bad != 0) {
		fputs(" at index ", stdout);
		print_index(stdout, onnxrun_tensor_rank(got), onnxrun_tensor_dims(got), st->first_bad);
		fputs(": expected ", stdout);
		cli_print_element(stdout, exp, st->first_bad, 1);
		fputs(" got ", stdout);
		cli_print_element(stdout, got, st->first_bad, 1);
		printf(" (%lld of %lld elements differ)", (long long)st->bad,
		       (long long)onnxrun_tensor_numel(got));
	}
	fputc('\n', stdout);
}

/* Compares one output with its expected value and prints the line; returns 1 on PASS. */
static int compare_one(const char *name, const struct onnxrun_tensor *exp,
                       const struct onnxrun_tensor *got, const struct cli_options *opts)
{
	struct cmp_stats st = {0.0, 0.0, 0, -1};

	if (!same_type(exp, got)) {
		print_type_mismatch(name, exp, got);
		return 0;
	}
	compare_elements(exp, got, opts, &st);
	print_result(name, exp, got, &st);
	return st.bad == 0;
}

/*
 * Prints one line per output of the last run: PASS/FAIL against data->expected where
 * given, a summary otherwise. *mismatch is set when any output FAILs.
 */
int cli_compare_outputs(const struct onnxrun_session *session, const struct onnxrun_model *model,
                        const struct cli_data *data, const struct cli_options *opts,
                        int *mismatch)
{
	*mismatch = 0;
	for (size_t i = 0; i < data->output_count; i++) {
		struct onnxrun_value_info info;
		const struct onnxrun_tensor *got;
		enum onnxrun_status st = onnxrun_model_output_info(model, i, &info);
		if (st == ONNXRUN_OK)
			st = onnxrun_session_output(session, i, &got);
		if (st != ONNXRUN_OK) {
			cli_lib_error(onnxrun_session_error(session), st, NULL);
			return CLI_ERROR;
		}
		if (data->expected[i] == NULL)
			cli_print_summary(info.name, got);
		else if (!compare_one(info.name, data->expected[i], got, opts))
			*mismatch = 1;
	}
	return CLI_OK;
}
