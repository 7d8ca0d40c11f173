/*
 * values.c - reading and printing tensor elements of every dtype, and the one-line summary
 * printed for an output when there is no expected value to compare with.
 */
#include <math.h>
#include <string.h>

#include "cli.h"

/* Values shown by a summary line. */
#define SUMMARY_VALUES 6
/* Bytes of a string element shown before "...". */
#define STRING_SHOWN 24

/* Whether elements are floating point (real or complex, any width). */
int cli_dtype_is_float(enum onnxrun_dtype dtype)
{
	switch (dtype) {
	case ONNXRUN_DTYPE_FLOAT:
	case ONNXRUN_DTYPE_DOUBLE:
	case ONNXRUN_DTYPE_FLOAT16:
	case ONNXRUN_DTYPE_BFLOAT16:
	case ONNXRUN_DTYPE_COMPLEX64:
	case ONNXRUN_DTYPE_COMPLEX128: return 1;
	default: return 0;
	}
}

/* Numbers per element: 2 for complex (real, imaginary), else 1. */
int cli_dtype_parts(enum onnxrun_dtype dtype)
{
	return dtype == ONNXRUN_DTYPE_COMPLEX64 || dtype == ONNXRUN_DTYPE_COMPLEX128 ? 2 : 1;
}

/*
 * Number `part` of element i as a double: exact for every type except 64-bit integers
 * beyond 2^53 (compare those bitwise). Strings give 0.
 */
double cli_element_value(enum onnxrun_dtype dtype, const void *data, int64_t i, int part)
{
	switch (dtype) {
	case ONNXRUN_DTYPE_FLOAT: return ((const float *)data)[i];
	case ONNXRUN_DTYPE_DOUBLE: return ((const double *)data)[i];
	case ONNXRUN_DTYPE_FLOAT16: return cli_half_to_float(((const uint16_t *)data)[i]);
	case ONNXRUN_DTYPE_BFLOAT16: return cli_bf16_to_float(((const uint16_t *)data)[i]);
	case ONNXRUN_DTYPE_COMPLEX64: return ((const float *)data)[2 * i + part];
	case ONNXRUN_DTYPE_COMPLEX128: return ((const double *)data)[2 * i + part];
	case ONNXRUN_DTYPE_INT8: return ((const int8_t *)data)[i];
	case ONNXRUN_DTYPE_INT16: return ((const int16_t *)data)[i];
	case ONNXRUN_DTYPE_INT32: return ((const int32_t *)data)[i];
	case ONNXRUN_DTYPE_INT64: return (double)((const int64_t *)data)[i];
	case ONNXRUN_DTYPE_UINT8:
	case ONNXRUN_DTYPE_BOOL: return ((const uint8_t *)data)[i];
	case ONNXRUN_DTYPE_UINT16: return ((const uint16_t *)data)[i];
	case ONNXRUN_DTYPE_UINT32: return ((const uint32_t *)data)[i];
	case ONNXRUN_DTYPE_UINT64: return (double)((const uint64_t *)data)[i];
	default: return 0.0;
	}
}

/* Prints a string element quoted, escaping non-printable bytes, shortened if long. */
static void print_string(FILE *f, const struct onnxrun_string *s)
{
	size_t shown = s->size < STRING_SHOWN ? s->size : STRING_SHOWN;

	fputc('"', f);
	for (size_t k = 0; k < shown; k++) {
		unsigned char c = (unsigned char)s->data[k];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputs(shown < s->size ? "...\"" : "\"", f);
}

/* Prints one floating number: %g with enough digits to round-trip when `precise`. */
static void print_float(FILE *f, enum onnxrun_dtype dtype, double v, int precise)
{
	int digits = 4;

	if (precise)
		digits = dtype == ONNXRUN_DTYPE_DOUBLE || dtype == ONNXRUN_DTYPE_COMPLEX128 ? 17 : 9;
	fprintf(f, "%.*g", digits, v);
}

/* Prints element i of tensor t; `precise` prints floats with round-trip precision. */
void cli_print_element(FILE *f, const struct onnxrun_tensor *t, int64_t i, int precise)
{
	enum onnxrun_dtype dtype = onnxrun_tensor_dtype(t);
	const void *data = onnxrun_tensor_data(t);

	if (dtype == ONNXRUN_DTYPE_STRING) {
		print_string(f, &((const struct onnxrun_string *)data)[i]);
	} else if (dtype == ONNXRUN_DTYPE_INT64) {
		fprintf(f, "%lld", (long long)((const int64_t *)data)[i]);
	} else if (dtype == ONNXRUN_DTYPE_UINT64) {
		fprintf(f, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
	} else if (dtype == ONNXRUN_DTYPE_BOOL) {
		fputs(((const uint8_t *)data)[i] != 0 ? "true" : "false", f);
	} else if (cli_dtype_parts(dtype) == 2) {
		fputc('(', f);
		print_float(f, dtype, cli_element_value(dtype, data, i, 0), precise);
		fputc(',', f);
		print_float(f, dtype, cli_element_value(dtype, data, i, 1), precise);
		fputc(')', f);
	} else if (cli_dtype_is_float(dtype)) {
		print_float(f, dtype, cli_element_value(dtype, data, i, 0), precise);
	} else {
		fprintf(f, "%.0f", cli_element_value(dtype, data, i, 0));
	}
}

/* Appends " min=.. max=.. mean=.." over the non-NaN values of a real numeric tensor. */
static void print_stats(FILE *f, const struct onnxrun_tensor *t)
{
	enum onnxrun_dtype dtype = onnxrun_tensor_dtype(t);
	const void *data = onnxrun_tensor_data(t);
	int64_t n = onnxrun_tensor_numel(t), counted = 0;
	double lo = INFINITY, hi = -INFINITY, sum = 0.0;

	for (int64_t i = 0; i < n; i++) {
		double v = cli_element_value(dtype, data, i, 0);
		if (isnan(v))
			continue;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		sum += v;
		counted++;
	}
	if (counted == 0)
		return;
	fprintf(f, " min=%.4g max=%.4g mean=%.4g", lo, hi, sum / (double)counted);
	if (counted < n)
		fprintf(f, " nan=%lld", (long long)(n - counted));
}

/* Prints "output 'y' (float [1,2]): [v0, v1, ...] min=.. max=.. mean=.." on stdout. */
void cli_print_summary(const char *name, const struct onnxrun_tensor *t)
{
	enum onnxrun_dtype dtype = onnxrun_tensor_dtype(t);
	int64_t n = onnxrun_tensor_numel(t);
	int64_t shown = n < SUMMARY_VALUES ? n : SUMMARY_VALUES;

	printf("output '%s' (", name);
	cli_print_tensor_type(stdout, t);
	fputs("): [", stdout);
	for (int64_t i = 0; i < shown; i++) {
		if (i > 0)
			fputs(", ", stdout);
		cli_print_element(stdout, t, i, 0);
	}
	fputs(shown < n ? ", ...]" : "]", stdout);
	if (dtype != ONNXRUN_DTYPE_STRING && cli_dtype_parts(dtype) == 1 && n > 0)
		print_stats(stdout, t);
	fputc('\n', stdout);
}
