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

/* Tolerances of one comparison. */
struct cmp_tol {
	double rtol;
	double atol;
};

/* Records a differing number of element i with error d (|got - exp|, or +inf standing for a
 * NaN mismatch) as the worst so far when it is larger than the previous worst. */
static void note_worst(struct cli_cmp *st, int64_t i, double d, double e)
{
	double key = isnan(d) ? INFINITY : d;

	if (st->worst >= 0 && !(key > st->worst_key))
		return;
	st->worst = i;
	st->worst_key = key;
	st->worst_abs = d;
	st->worst_rel = e != 0.0 ? d / fabs(e) : INFINITY;
}

/* Accounts one pair of floating numbers of element i; returns whether they match. */
static int match_float(double e, double g, int64_t i, const struct cmp_tol *tol, struct cli_cmp *st)
{
	if (isnan(e) || isnan(g)) {
		if (isnan(e) && isnan(g))
			return 1;
		note_worst(st, i, NAN, e);
		return 0;
	}
	if (e == g)
		return 1;
	double d = fabs(g - e);
	if (d > st->max_abs)
		st->max_abs = d;
	if (e != 0.0 && d / fabs(e) > st->max_rel)
		st->max_rel = d / fabs(e);
	if (d <= tol->atol + tol->rtol * fabs(e))
		return 1;
	note_worst(st, i, d, e);
	return 0;
}

/* Accounts one pair of elements that must be equal bit for bit (integers, bool). */
static int match_exact(enum onnxrun_dtype dtype, const void *exp, const void *got, int64_t i,
                       struct cli_cmp *st)
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
	note_worst(st, i, d, e);
	return 0;
}

/* Whether two string elements hold the same bytes. */
static int match_string(const struct onnxrun_string *e, const struct onnxrun_string *g)
{
	return e->size == g->size && (e->size == 0 || memcmp(e->data, g->data, e->size) == 0);
}

/* Compares all elements of two tensors of equal dtype and shape into st. */
static void compare_elements(const struct onnxrun_tensor *exp, const struct onnxrun_tensor *got,
                             const struct cmp_tol *tol, struct cli_cmp *st)
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
			if (!ok && st->worst < 0)
				st->worst = i;
		} else if (fp) {
			for (int p = 0; p < parts; p++)
				ok &= match_float(cli_element_value(dtype, ed, i, p),
				                  cli_element_value(dtype, gd, i, p), i, tol, st);
		} else {
			ok = match_exact(dtype, ed, gd, i, st);
		}
		if (!ok && st->bad++ == 0)
			st->first_bad = i;
	}
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

/*
 * Compares `got` with `exp` under the tolerances into *out. out->same_type is 0 on a dtype
 * or shape mismatch, and the statistics are then all zero. The output passes when
 * same_type && bad == 0.
 */
void cli_compare_tensors(const struct onnxrun_tensor *exp, const struct onnxrun_tensor *got,
                         double rtol, double atol, struct cli_cmp *out)
{
	struct cmp_tol tol = {rtol, atol};

	memset(out, 0, sizeof *out);
	out->first_bad = -1;
	out->worst = -1;
	out->same_type = same_type(exp, got);
	if (out->same_type)
		compare_elements(exp, got, &tol, out);
}

/* Prints flat index i of a tensor of shape dims as "[i0,i1,...]". */
void cli_print_index(FILE *f, int32_t rank, const int64_t *dims, int64_t i)
{
	int64_t idx[ONNXRUN_MAX_RANK];

	for (int32_t d = rank - 1; d >= 0; d--) {
		idx[d] = dims[d] > 0 ? i % dims[d] : 0;
		i = dims[d] > 0 ? i / dims[d] : 0;
	}
	cli_print_shape(f, rank, idx);
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
                         const struct onnxrun_tensor *got, const struct cli_cmp *st)
{
	printf("%s output '%s' (", st->bad == 0 ? "PASS" : "FAIL", name);
	cli_print_tensor_type(stdout, got);
	if (onnxrun_tensor_dtype(got) == ONNXRUN_DTYPE_STRING)
		fputs("): exact", stdout);
	else
		printf("): max_abs=%.3g max_rel=%.3g", st->max_abs, st->max_rel);
	if (st->bad != 0) {
		fputs(" at index ", stdout);
		cli_print_index(stdout, onnxrun_tensor_rank(got), onnxrun_tensor_dims(got), st->first_bad);
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
	struct cli_cmp st;

	cli_compare_tensors(exp, got, opts->rtol, opts->atol, &st);
	if (!st.same_type) {
		print_type_mismatch(name, exp, got);
		return 0;
	}
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
