/*
 * testrun_main.c - "onnxrun test [options] PATH...": runs every data set of every model
 * found under the PATHs, compares the outputs and reports like a CI tool.
 *
 * Exit status: 0 when every case passed or was skipped (unsupported cases count as
 * skipped unless --unsupported=error); 1 when some case failed or errored (or, with
 * --unsupported=error, was unsupported); 2 when the run itself could not be done (bad
 * options, a PATH that does not exist or holds no case, a report file that cannot be
 * written).
 */
#include <stdlib.h>
#include <string.h>

#include "testrun.h"

/* Prints the usage text of the subcommand. */
static void print_usage(FILE *f)
{
	fputs("usage: onnxrun test [options] PATH...\n"
	      "\n"
	      "Runs ONNX test cases and compares their outputs. Each PATH is a case folder\n"
	      "(model.onnx and test_data_set_*/), a model file (its folder's test_data_set_*\n"
	      "are used), or a folder searched recursively for case folders.\n"
	      "\n"
	      "options:\n"
	      "      --rtol X             default relative tolerance (1e-3)\n"
	      "      --atol X             default absolute tolerance (1e-7)\n"
	      "      --junit FILE         write a JUnit XML report\n"
	      "      --json FILE          write a JSON report\n"
	      "      --fail-fast          stop at the first case that fails or errors\n"
	      "      --keep-going         run every case (the default)\n"
	      "      --unsupported=MODE   a model with ops onnxrun lacks is 'skip'ped (the\n"
	      "                           default) or counts as an 'error'\n"
	      "      --allow-unsupported  the same as --unsupported=skip\n"
	      "      --threads N          worker threads per run (default: all online cores)\n"
	      "      --timeout S          a case whose runs take longer than S seconds in all\n"
	      "                           is stopped and reported as an error (\"timeout\n"
	      "                           after S s\"); the run goes on with the next case\n"
	      "  -h, --help               print this help and exit\n"
	      "\n"
	      "A file " TR_CONF_NAME " in a case folder or any folder above it sets\n"
	      "'rtol = X', 'atol = X' or 'skip = REASON' for the cases below it (the nearest\n"
	      "file wins; it overrides --rtol/--atol).\n"
	      "\n"
	      "Each case is pass, fail (an output differs), error (bad model, input or\n"
	      "settings, failed run), unsupported (ops onnxrun lacks) or skipped. The last\n"
	      "line is 'test: P passed, F failed, E errors, U unsupported, S skipped'.\n"
	      "\n"
	      "exit status:\n"
	      "  0  every case passed or was skipped; unsupported cases count as skipped\n"
	      "  1  some case failed or errored, or was unsupported with --unsupported=error\n"
	      "  2  the run could not be done (bad option, PATH missing or without cases,\n"
	      "     report file not writable)\n"
	      "  130  interrupted by Ctrl-C: the case being run is an error, the cases after\n"
	      "     it are not run\n",
	      f);
}

/* Value of an option: the text after '=' or the next argument. */
static const char *option_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq != NULL)
		return eq + 1;
	if (*i + 1 >= argc) {
		cli_error("option '%s' needs a value (see 'onnxrun test --help')", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

/* Applies an option that takes no value; returns 0 when `name` is not one. */
static int flag_option(const char *name, struct tr_options *o)
{
	if (strcmp(name, "--fail-fast") == 0)
		o->fail_fast = 1;
	else if (strcmp(name, "--keep-going") == 0)
		o->fail_fast = 0;
	else if (strcmp(name, "--allow-unsupported") == 0)
		o->unsupported_is_error = 0;
	else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		o->help = 1;
	else
		return 0;
	return 1;
}

/* Handles argv[*i], an option; may consume the next argument as its value. */
static int parse_option(int argc, char **argv, int *i, struct tr_options *o)
{
	const char *arg = argv[*i], *eq = strchr(arg, '='), *val;
	size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	char name[32];
	long n;

	if (len >= sizeof name)
		len = sizeof name - 1;
	memcpy(name, arg, len);
	name[len] = '\0';
	if (eq == NULL && flag_option(name, o))
		return CLI_OK;
	if (strcmp(name, "--rtol") != 0 && strcmp(name, "--atol") != 0 &&
	    strcmp(name, "--junit") != 0 && strcmp(name, "--json") != 0 &&
	    strcmp(name, "--threads") != 0 && strcmp(name, "--unsupported") != 0 &&
	    strcmp(name, "--timeout") != 0) {
		cli_error("unknown option '%s' (see 'onnxrun test --help')", arg);
		return CLI_ERROR;
	}
	if ((val = option_value(argc, argv, i, eq)) == NULL)
		return CLI_ERROR;
	if (strcmp(name, "--rtol") == 0)
		return cli_parse_tolerance("rtol", val, &o->rtol);
	if (strcmp(name, "--atol") == 0)
		return cli_parse_tolerance("atol", val, &o->atol);
	if (strcmp(name, "--timeout") == 0)
		return cli_parse_seconds("timeout", val, &o->timeout);
	if (strcmp(name, "--unsupported") == 0) {
		if (strcmp(val, "skip") != 0 && strcmp(val, "error") != 0) {
			cli_error("--unsupported must be 'skip' or 'error', not '%s'", val);
			return CLI_ERROR;
		}
		o->unsupported_is_error = strcmp(val, "error") == 0;
	} else if (strcmp(name, "--threads") == 0) {
		if (cli_parse_count("threads", val, 4096, &n) != CLI_OK)
			return CLI_ERROR;
		o->threads = (int)n;
	} else if (strcmp(name, "--junit") == 0) {
		o->junit_path = val;
	} else {
		o->json_path = val;
	}
	return CLI_OK;
}

/* Parses the arguments after "test". o->paths must be freed by the caller. */
static int parse_args(int argc, char **argv, struct tr_options *o)
{
	int only_paths = 0;

	memset(o, 0, sizeof *o);
	o->rtol = 1e-3;
	o->atol = 1e-7;
	o->paths = cli_calloc((size_t)(argc > 0 ? argc : 1), sizeof *o->paths);
	if (o->paths == NULL)
		return CLI_ERROR;
	for (int i = 1; i < argc; i++) {
		if (only_paths || argv[i][0] != '-' || argv[i][1] == '\0')
			o->paths[o->path_count++] = argv[i];
		else if (strcmp(argv[i], "--") == 0)
			only_paths = 1;
		else if (parse_option(argc, argv, &i, o) != CLI_OK)
			return CLI_ERROR;
	}
	if (!o->help && o->path_count == 0) {
		cli_error("missing PATH (see 'onnxrun test --help')");
		return CLI_ERROR;
	}
	return CLI_OK;
}

/* Adds a finished case to the totals. */
static void count_case(struct tr_run *run, const struct tr_case *c)
{
	run->sets_run += c->set_count;
	switch (c->result) {
	case TR_PASS: run->passed++; break;
	case TR_FAIL: run->failed++; break;
	case TR_ERROR: run->errors++; break;
	case TR_UNSUPPORTED: run->unsupported++; break;
	case TR_SKIP: run->skipped++; break;
	}
}

/* Runs every case in order, with progress and problem lines; honours --fail-fast. */
static void run_cases(struct tr_run *run, const struct tr_options *opts)
{
	double t0 = cli_now_ms();
	int stop = 0;

	tr_progress_init();
	for (size_t i = 0; i < run->count; i++) {
		struct tr_case *c = &run->cases[i];
		if (stop) {
			run->not_run++;
			continue;
		}
		tr_progress_show(i + 1, run->count, c->path);
		tr_run_case(c, opts, &stop);
		count_case(run, c);
		tr_print_case_details(c);
	}
	tr_progress_clear();
	run->time_ms = cli_now_ms() - t0;
}

/* Whether any case that ran counts as failed. */
static int any_failed(const struct tr_run *run, const struct tr_options *opts)
{
	for (size_t i = 0; i < run->count; i++) {
		if (tr_counts_as_failed(&run->cases[i], opts))
			return 1;
	}
	return 0;
}

/* Finds and runs the cases, prints the summary and writes the reports; the exit code. */
static int test_run(const struct tr_options *opts)
{
	struct tr_run run;
	int code = CLI_EXIT_ERROR;

	if (tr_find_cases(opts, &run) != CLI_OK)
		goto done;
	run_cases(&run, opts);
	tr_print_summary(&run);
	if (opts->junit_path != NULL && tr_write_junit(opts->junit_path, &run, opts) != CLI_OK)
		goto done;
	if (opts->json_path != NULL && tr_write_json(opts->json_path, &run, opts) != CLI_OK)
		goto done;
	code = any_failed(&run, opts) ? CLI_EXIT_MISMATCH : CLI_EXIT_OK;
done:
	tr_run_free(&run);
	return code;
}

/* Entry point of "onnxrun test" (argv[0] is "test"); returns the exit code. */
int cli_test_main(int argc, char **argv)
{
	struct tr_options opts;
	int code;

	if (parse_args(argc, argv, &opts) != CLI_OK) {
		code = CLI_EXIT_ERROR;
	} else if (opts.help) {
		print_usage(stdout);
		code = CLI_EXIT_OK;
	} else {
		code = test_run(&opts);
	}
	free(opts.paths);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write to standard output");
		code = CLI_EXIT_ERROR;
	}
	return code;
}
