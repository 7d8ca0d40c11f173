/*
 * testrun_junit.c - the --junit report of "onnxrun test": JUnit XML as Jenkins, GitLab and
 * GitHub test reporters read it.
 *
 *   <testsuites name="onnxrun test" tests= failures= errors= skipped= time=>
 *     <testsuite name=CASE-PATH tests= failures= errors= skipped= time=>  (one per case)
 *       <testcase classname=CASE-PATH name=DATA-SET time=SECONDS>         (one per data set)
 *         <failure type="mismatch" message=...>text</failure>
 *         | <error type="error|unsupported" message=...>text</error> | <skipped message=.../>
 *
 * A failure is only ever a wrong answer (values, dtype or shape). An unsupported case is
 * <skipped message="unsupported: Relu (ai.onnx opset 13), ..."/>, or with
 * --unsupported=error an <error type="unsupported"> with that message; errors (including
 * any error-class result such as a failed run) are <error type="error">.
 *
 * A case-level outcome (load error, unsupported, skip) is given to every data set of the
 * case; a case without data sets gets one testcase named after the model file. Data sets
 * that --fail-fast kept from running are left out. Every string is escaped (escape.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testrun.h"

/* What one testcase element holds. */
enum ju_kind {
	JU_PASS,
	JU_FAILURE,
	JU_ERROR,
	JU_SKIPPED,
};

/* One testcase: its name, time, kind, type attribute and message. */
struct ju_case {
	const char *name;
	double seconds;
	enum ju_kind kind;
	const char *type;
	const char *message;
};

/* Number of testcases of case c. */
static size_t testcase_count(const struct tr_case *c)
{
	if (c->result == TR_PASS || c->set_count > 0)
		return c->set_count;
	return c->set_total > 0 ? c->set_total : 1;
}

/* The basename of a path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* Describes testcase j of case c; case_message is the message of case-level outcomes. */
static struct ju_case testcase_of(const struct tr_case *c, size_t j, const struct tr_options *opts,
                                  const char *case_message)
{
	struct ju_case t = {NULL, 0.0, JU_PASS, NULL, case_message};

	if (j < c->set_count) {
		const struct tr_set *s = &c->sets[j];
		t.name = s->name;
		t.seconds = s->time_ms / 1e3;
		t.message = s->message;
		t.kind = s->result == TR_FAIL ? JU_FAILURE : s->result == TR_ERROR ? JU_ERROR : JU_PASS;
		t.type = s->result == TR_FAIL ? "mismatch" : "error";
		return t;
	}
	t.name = c->set_total > 0 ? base_name(c->set_paths[j]) : base_name(c->model);
	t.seconds = j == 0 ? c->time_ms / 1e3 : 0.0;
	if (tr_counts_as(c, opts) == TR_SKIP) {
		t.kind = JU_SKIPPED;
	} else {
		t.kind = JU_ERROR;
		t.type = c->result == TR_UNSUPPORTED ? "unsupported" : "error";
	}
	return t;
}

/* Counts of one suite or of the whole report. */
struct ju_counts {
	size_t tests, failures, errors, skipped;
	double seconds;
};

static void count_case(const struct tr_case *c, const struct tr_options *opts,
                       struct ju_counts *n)
{
	for (size_t j = 0, m = testcase_count(c); j < m; j++) {
		struct ju_case t = testcase_of(c, j, opts, NULL);
		n->tests++;
		n->failures += t.kind == JU_FAILURE;
		n->errors += t.kind == JU_ERROR;
		n->skipped += t.kind == JU_SKIPPED;
	}
	n->seconds += c->time_ms / 1e3;
}

/* Writes ` key="value"` with the value escaped. */
static void put_attr(FILE *f, const char *key, const char *value)
{
	fprintf(f, " %s=\"", key);
	cli_write_xml(f, value != NULL ? value : "", 1);
	fputc('"', f);
}

static void put_counts(FILE *f, const struct ju_counts *n)
{
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.6f\"",
	        n->tests, n->failures, n->errors, n->skipped, n->seconds);
}

/* Writes one testcase element. */
static void put_testcase(FILE *f, const struct tr_case *c, const struct ju_case *t)
{
	static const char *const tags[] = {NULL, "failure", "error", "skipped"};

	fputs("    <testcase", f);
	put_attr(f, "classname", c->path);
	put_attr(f, "name", t->name);
	fprintf(f, " time=\"%.6f\"", t->seconds);
	if (t->kind == JU_PASS) {
		fputs("/>\n", f);
		return;
	}
	fprintf(f, ">\n      <%s", tags[t->kind]);
	if (t->type != NULL)
		put_attr(f, "type", t->type);
	put_attr(f, "message", t->message);
	if (t->kind == JU_SKIPPED || t->message == NULL) {
		fputs("/>\n    </testcase>\n", f);
		return;
	}
	fputc('>', f);
	cli_write_xml(f, t->message, 0);
	fprintf(f, "</%s>\n    </testcase>\n", tags[t->kind]);
}

/* Writes the testsuite of one case. */
static void put_suite(FILE *f, const struct tr_case *c, const struct tr_options *opts)
{
	struct ju_counts n = {0, 0, 0, 0, 0.0};
	char *unsupported = c->result == TR_UNSUPPORTED ? tr_unsupported_text(c, "unsupported: ") : NULL;
	const char *message = unsupported != NULL ? unsupported : c->message;

	count_case(c, opts, &n);
	fputs("  <testsuite", f);
	put_attr(f, "name", c->path);
	put_counts(f, &n);
	fputs(">\n", f);
	for (size_t j = 0, m = testcase_count(c); j < m; j++) {
		struct ju_case t = testcase_of(c, j, opts, message);
		put_testcase(f, c, &t);
	}
	fputs("  </testsuite>\n", f);
	free(unsupported);
}

/* Writes the JUnit XML report to `path`; reports failures itself. */
int tr_write_junit(const char *path, const struct tr_run *run, const struct tr_options *opts)
{
	struct ju_counts total = {0, 0, 0, 0, 0.0};
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		cli_error("cannot create '%s': %s", path, strerror(errno));
		return CLI_ERROR;
	}
	for (size_t i = 0; i < run->count; i++) {
		if (run->cases[i].ran)
			count_case(&run->cases[i], opts, &total);
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"onnxrun test\"", f);
	put_counts(f, &total);
	fputs(">\n", f);
	for (size_t i = 0; i < run->count; i++) {
		if (run->cases[i].ran)
			put_suite(f, &run->cases[i], opts);
	}
	fputs("</testsuites>\n", f);
	if (ferror(f) | fclose(f)) {
		cli_error("cannot write '%s'", path);
		return CLI_ERROR;
	}
	return CLI_OK;
}
