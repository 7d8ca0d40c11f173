/*
 * testrun_report.c - what "onnxrun test" prints on the terminal: the progress line, one
 * line per problem as each case ends, and the summary table and counts at the end.
 *
 * The last line is "test: P passed, F failed, E errors, U unsupported, S skipped", the
 * "N passed, N failed" form CI tools look for, with the same counts as the detailed line
 * before it (one per result class; how an unsupported case counts for the exit status is
 * tr_counts_as).
 */
#include <stdlib.h>
#include <string.h>

#include "testrun.h"

/* State of the single updating progress line on stderr. */
static struct {
	int enabled;
	int shown;
	int width;
} progress;

/* Whether a problem line was printed (the table is then set apart by a blank line). */
static int problems_printed;

const char *tr_result_name(enum tr_result result)
{
	switch (result) {
	case TR_PASS: return "pass";
	case TR_FAIL: return "fail";
	case TR_ERROR: return "error";
	case TR_UNSUPPORTED: return "unsupported";
	case TR_SKIP: return "skipped";
	}
	return "?";
}

/* How a case counts for the exit status, --fail-fast and the JUnit report: its result,
 * except that an unsupported case is skipped, or an error with --unsupported=error. */
enum tr_result tr_counts_as(const struct tr_case *c, const struct tr_options *opts)
{
	if (c->result == TR_UNSUPPORTED)
		return opts->unsupported_is_error ? TR_ERROR : TR_SKIP;
	return c->result;
}

/* Whether a case that ran makes the exit status 1 (and stops --fail-fast). */
int tr_counts_as_failed(const struct tr_case *c, const struct tr_options *opts)
{
	enum tr_result r = tr_counts_as(c, opts);

	return c->ran && (r == TR_FAIL || r == TR_ERROR);
}

/* Enables the progress line when stdout (and stderr, where it goes) are terminals. */
void tr_progress_init(void)
{
	int columns = 0;

	progress.enabled = onnxrun__os_terminal(&columns);
	progress.width = 80;
	if (progress.enabled && columns > 20)
		progress.width = columns;
}

/* Shows "[i/n] name" on the progress line (name shortened from the left to fit). */
void tr_progress_show(size_t i, size_t n, const char *name)
{
	char head[64];
	int room;
	size_t len = strlen(name);

	if (!progress.enabled)
		return;
	snprintf(head, sizeof head, "[%zu/%zu] ", i, n);
	room = progress.width - 1 - (int)strlen(head);
	fprintf(stderr, "\r%s", head);
	if (room > 3 && len > (size_t)room)
		fprintf(stderr, "...%s", name + len - (size_t)(room - 3));
	else if (room > 3)
		fputs(name, stderr);
	fputs("\033[K", stderr);
	fflush(stderr);
	progress.shown = 1;
}

/* Erases the progress line, if shown, so that other output starts on a clean line. */
void tr_progress_clear(void)
{
	if (!progress.shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress.shown = 0;
}

/* Prints "WORD path[ [set]]: message" on stdout. */
static void print_problem(const char *word, const char *path, const char *set, const char *msg)
{
	problems_printed = 1;
	printf("%-11s %s", word, path);
	if (set != NULL)
		printf(" [%s]", set);
	printf(": %s\n", msg != NULL ? msg : "");
}

/* Prints one line per problem of a finished case: its failing or erroring data sets, or
 * its case-level outcome. Passing cases print nothing. */
void tr_print_case_details(const struct tr_case *c)
{
	tr_progress_clear();
	switch (c->result) {
	case TR_PASS: break;
	case TR_SKIP: print_problem("SKIP", c->path, NULL, c->message); break;
	case TR_UNSUPPORTED: print_problem("UNSUPPORTED", c->path, NULL, c->message); break;
	case TR_FAIL:
	case TR_ERROR:
		if (c->set_count == 0)
			print_problem("ERROR", c->path, NULL, c->message);
		for (size_t i = 0; i < c->set_count; i++) {
			const struct tr_set *s = &c->sets[i];
			if (s->result != TR_PASS)
				print_problem(s->result == TR_FAIL ? "FAIL" : "ERROR", c->path, s->name,
				              s->message);
		}
		break;
	}
	fflush(stdout);
}

/* Data sets of a case that passed. */
static size_t sets_passed(const struct tr_case *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->set_count; i++)
		n += c->sets[i].result == TR_PASS;
	return n;
}

/* Prints the table: one row per case that ran. */
static void print_table(const struct tr_run *run)
{
	int width = 4;

	for (size_t i = 0; i < run->count; i++) {
		int len = (int)strlen(run->cases[i].path);
		if (run->cases[i].ran && len > width)
			width = len;
	}
	if (problems_printed)
		fputc('\n', stdout);
	printf("%-*s  %-11s  %9s  %10s\n", width, "case", "result", "data sets", "time ms");
	for (size_t i = 0; i < run->count; i++) {
		const struct tr_case *c = &run->cases[i];
		char sets[48];
		if (!c->ran)
			continue;
		snprintf(sets, sizeof sets, "%zu/%zu", sets_passed(c), c->set_total);
		printf("%-*s  %-11s  %9s  %10.2f\n", width, c->path, tr_result_name(c->result), sets,
		       c->time_ms);
	}
}

/* Prints the table, the detailed counts and the final "test: P passed, F failed, ..." line. */
void tr_print_summary(const struct tr_run *run)
{
	tr_progress_clear();
	print_table(run);
	if (run->not_run > 0)
		printf("stopped at the first failure (--fail-fast): %zu case%s not run\n",
		       run->not_run, run->not_run == 1 ? "" : "s");
	printf("%zu passed, %zu failed, %zu errors, %zu unsupported, %zu skipped "
	       "(%zu data set%s, %.1f ms)\n",
	       run->passed, run->failed, run->errors, run->unsupported, run->skipped,
	       run->sets_run, run->sets_run == 1 ? "" : "s", run->time_ms);
	printf("test: %zu passed, %zu failed, %zu errors, %zu unsupported, %zu skipped\n", run->passed,
	       run->failed, run->errors, run->unsupported, run->skipped);
}
