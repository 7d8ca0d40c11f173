/*
 * testrun_json.c - the --json report of "onnxrun test":
 *
 *   {"tool": "onnxrun", "version": "0.1.0", "rtol": 0.001, "atol": 1e-07,
 *    "unsupported_as": "skipped",
 *    "cases": [{"name", "path", "model", "result", "counts_as", "time_ms", "rtol", "atol",
 *               "message", "unsupported_ops": [{"op_type", "domain", "opset", "nodes"}],
 *               "data_set_count",
 *               "data_sets": [{"name", "result", "time_ms", "message",
 *                              "outputs": [{"name", "result", "max_abs", "max_rel"}]}]}],
 *    "totals": {"cases", "passed", "failed", "errors", "unsupported", "skipped", "not_run",
 *               "data_sets", "time_ms"}}
 *
 * "result" is pass, fail, error, unsupported or skipped; "counts_as" is how the case
 * counts for the exit status and the JUnit report: its result, except that an unsupported
 * case is "skipped" or, with --unsupported=error, "error" (the top-level "unsupported_as").
 * The totals count results, as the terminal summary does. "message" is a string or null;
 * numbers that are not finite (a NaN among the outputs) are null. Only cases and data
 * sets that ran are listed (--fail-fast may stop early; see totals.not_run).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "testrun.h"

/* Writes a number, or null when it is not finite. */
static void put_number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

/* Writes a string, or null. */
static void put_string(FILE *f, const char *s)
{
	if (s != NULL)
		cli_write_json_string(f, s);
	else
		fputs("null", f);
}

/* Writes `"key": ` with the key escaped. */
static void put_key(FILE *f, const char *key)
{
	cli_write_json_string(f, key);
	fputs(": ", f);
}

static void put_output(FILE *f, const struct tr_output *o)
{
	fputs("{", f);
	put_key(f, "name");
	put_string(f, o->name);
	fputs(", \"result\": ", f);
	put_string(f, o->pass ? "pass" : "fail");
	fputs(", \"max_abs\": ", f);
	put_number(f, o->max_abs);
	fputs(", \"max_rel\": ", f);
	put_number(f, o->max_rel);
	fputs("}", f);
}

static void put_set(FILE *f, const struct tr_set *s)
{
	fputs("        {\"name\": ", f);
	put_string(f, s->name);
	fputs(", \"result\": ", f);
	put_string(f, tr_result_name(s->result));
	fputs(", \"time_ms\": ", f);
	put_number(f, s->time_ms);
	fputs(", \"message\": ", f);
	put_string(f, s->message);
	fputs(", \"outputs\": [", f);
	for (size_t k = 0; k < s->output_count; k++) {
		fputs(k > 0 ? ", " : "", f);
		put_output(f, &s->outputs[k]);
	}
	fputs("]}", f);
}

static void put_ops(FILE *f, const struct tr_case *c)
{
	fputs("[", f);
	for (size_t k = 0; k < c->op_count; k++) {
		fputs(k > 0 ? ", {\"op_type\": " : "{\"op_type\": ", f);
		put_string(f, c->ops[k].op_type);
		fputs(", \"domain\": ", f);
		put_string(f, c->ops[k].domain);
		fprintf(f, ", \"opset\": %" PRId64 ", \"nodes\": %zu}", c->ops[k].opset, c->ops[k].nodes);
	}
	fputs("]", f);
}

static void put_case(FILE *f, const struct tr_case *c, const struct tr_options *opts)
{
	fputs("    {\"name\": ", f);
	put_string(f, c->name);
	fputs(", \"path\": ", f);
	put_string(f, c->path);
	fputs(", \"model\": ", f);
	put_string(f, c->model);
	fputs(",\n     \"result\": ", f);
	put_string(f, tr_result_name(c->result));
	fputs(", \"counts_as\": ", f);
	put_string(f, tr_result_name(tr_counts_as(c, opts)));
	fputs(", \"time_ms\": ", f);
	put_number(f, c->time_ms);
	fputs(", \"rtol\": ", f);
	put_number(f, c->rtol);
	fputs(", \"atol\": ", f);
	put_number(f, c->atol);
	fputs(", \"message\": ", f);
	put_string(f, c->message);
	fputs(",\n     \"unsupported_ops\": ", f);
	put_ops(f, c);
	fprintf(f, ", \"data_set_count\": %zu, \"data_sets\": [", c->set_total);
	for (size_t i = 0; i < c->set_count; i++) {
		fputs(i > 0 ? ",\n" : "\n", f);
		put_set(f, &c->sets[i]);
	}
	fputs(c->set_count > 0 ? "\n     ]}" : "]}", f);
}

static void put_totals(FILE *f, const struct tr_run *run)
{
	size_t ran = run->count - run->not_run;

	fprintf(f,
	        "  \"totals\": {\"cases\": %zu, \"passed\": %zu, \"failed\": %zu, \"errors\": %zu, "
	        "\"unsupported\": %zu, \"skipped\": %zu, \"not_run\": %zu, \"data_sets\": %zu, "
	        "\"time_ms\": ",
	        ran, run->passed, run->failed, run->errors, run->unsupported, run->skipped,
	        run->not_run, run->sets_run);
	put_number(f, run->time_ms);
	fputs("}\n", f);
}

/* Writes the JSON report to `path`; reports failures itself. */
int tr_write_json(const char *path, const struct tr_run *run, const struct tr_options *opts)
{
	FILE *f = fopen(path, "w");
	size_t written = 0;

	if (f == NULL) {
		cli_error("cannot create '%s': %s", path, strerror(errno));
		return CLI_ERROR;
	}
	fputs("{\n  \"tool\": \"onnxrun\", \"version\": ", f);
	put_string(f, onnxrun_version());
	fputs(", \"rtol\": ", f);
	put_number(f, opts->rtol);
	fputs(", \"atol\": ", f);
	put_number(f, opts->atol);
	fputs(", \"unsupported_as\": ", f);
	put_string(f, opts->unsupported_is_error ? "error" : "skipped");
	fputs(",\n  \"cases\": [", f);
	for (size_t i = 0; i < run->count; i++) {
		if (!run->cases[i].ran)
			continue;
		fputs(written++ > 0 ? ",\n" : "\n", f);
		put_case(f, &run->cases[i], opts);
	}
	fputs(written > 0 ? "\n  ],\n" : "],\n", f);
	put_totals(f, run);
	fputs("}\n", f);
	if (ferror(f) | fclose(f)) {
		cli_error("cannot write '%s'", path);
		return CLI_ERROR;
	}
	return CLI_OK;
}
