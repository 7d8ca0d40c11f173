/*
 * main.c - the onnxrun command-line tool: loads a model, binds inputs, runs (or benchmarks)
 * it, compares or summarizes the outputs and writes them on request. docs/design.md has the
 * contract; everything goes through the public API in onnxrun.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Binds every --dim NAME=VALUE to the session. */
int cli_bind_dims(struct onnxrun_session *session, const struct cli_options *opts)
{
	for (size_t i = 0; i < opts->dim_count; i++) {
		const struct cli_dim *d = &opts->dims[i];
		char *name = cli_calloc(d->name_len + 1, 1);
		if (name == NULL)
			return CLI_ERROR;
		memcpy(name, d->name, d->name_len);
		enum onnxrun_status st = onnxrun_session_bind_dim(session, name, d->value);
		if (st != ONNXRUN_OK)
			cli_lib_error(onnxrun_session_error(session), st, "--dim");
		free(name);
		if (st != ONNXRUN_OK)
			return CLI_ERROR;
	}
	return CLI_OK;
}

/* Where the seconds before the first run went (milliseconds), for the --timeout message:
 * --timeout bounds each run, not loading the model or reading or generating its inputs. */
static struct {
	double load_ms, inputs_ms, session_ms;
} before_run;

/* Runs the session once; a failure prints the library's message (it names the node). A
 * cancelled run was stopped by Ctrl-C or, otherwise, by --timeout; that message also says
 * how long the tool took before the run. */
static int run_once(struct onnxrun_session *session)
{
	enum onnxrun_status st = onnxrun_session_run(session);

	if (st == ONNXRUN_ERROR_CANCELLED && cli_interrupted()) {
		fprintf(stderr, "onnxrun: interrupted: %s\n", onnxrun_session_error(session));
		return CLI_ERROR;
	}
	if (st == ONNXRUN_ERROR_CANCELLED) {
		cli_error("--timeout: %s (before the run: load %.3g s, inputs %.3g s, session %.3g s)",
		          onnxrun_session_error(session), before_run.load_ms / 1e3, before_run.inputs_ms / 1e3,
		          before_run.session_ms / 1e3);
		return CLI_ERROR;
	}
	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_session_error(session), st, NULL);
		return CLI_ERROR;
	}
	return CLI_OK;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Timings of --bench, in milliseconds. */
struct bench_result {
	double median_ms;
	double min_ms;
};

/* --bench N: one warm-up run, then N timed runs. */
static int run_bench(struct onnxrun_session *session, long runs, struct bench_result *res)
{
	double *times = cli_calloc((size_t)runs, sizeof *times);
	int rc = CLI_ERROR;

	if (times == NULL || run_once(session) != CLI_OK)
		goto done;
	for (long i = 0; i < runs; i++) {
		double t0 = cli_now_ms();
		if (run_once(session) != CLI_OK)
			goto done;
		times[i] = cli_now_ms() - t0;
	}
	qsort(times, (size_t)runs, sizeof *times, compare_double);
	res->median_ms = runs % 2 != 0 ? times[runs / 2]
	                               : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
	res->min_ms = times[0];
	rc = CLI_OK;
done:
	free(times);
	return rc;
}

/* Creates the session with the thread count and dims of the options. */
static int make_session(const struct onnxrun_model *model, const struct cli_options *opts,
                        struct onnxrun_session **out)
{
	int threads = opts->threads > 0 ? opts->threads : onnxrun__os_cpu_count();
	enum onnxrun_status st = onnxrun_session_create(model, out);

	if (st != ONNXRUN_OK) {
		cli_error("cannot create a session: %s", onnxrun_status_str(st));
		return CLI_ERROR;
	}
	st = onnxrun_session_set_threads(*out, threads);
	if (st == ONNXRUN_OK && opts->profile)
		st = onnxrun_session_set_profiling(*out, 1);
	if (st == ONNXRUN_OK && opts->timeout > 0)
		st = onnxrun_session_set_deadline(*out, cli_seconds_to_us(opts->timeout));
	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_session_error(*out), st, "--threads");
		return CLI_ERROR;
	}
	return cli_bind_dims(*out, opts);
}

/* --profile: one row per node in execution order with its mean compute time and share. */
static void print_profile(const struct onnxrun_session *session, const struct onnxrun_model *model)
{
	size_t n = onnxrun_model_node_count(model);
	uint64_t total = 0, ns, runs = 0;

	for (size_t i = 0; i < n; i++)
		if (onnxrun_session_node_time(session, i, &ns, &runs) == ONNXRUN_OK)
			total += ns;
	printf("profile: %llu run%s, mean per run\n", (unsigned long long)runs, runs == 1 ? "" : "s");
	printf("  %-4s %-24s %-16s %12s %7s\n", "#", "node", "op", "ms", "share");
	for (size_t i = 0; i < n; i++) {
		struct onnxrun_node_info info;
		if (onnxrun_model_node_info(model, i, &info) != ONNXRUN_OK ||
		    onnxrun_session_node_time(session, i, &ns, &runs) != ONNXRUN_OK || runs == 0)
			continue;
		printf("  %-4zu %-24s %-16s %12.3f %6.1f%%\n", i, info.name[0] ? info.name : "(unnamed)",
		       info.op_type, (double)ns / 1e6 / (double)runs, total ? 100.0 * (double)ns / (double)total : 0.0);
	}
}

/*
 * Runs the model on the gathered data and reports. Returns the exit code. With --bench the
 * bench line is printed after the outputs' lines, which describe the last run.
 */
static int run_model(struct onnxrun_env *env, const struct onnxrun_model *model,
                     const struct cli_options *opts, struct cli_data *data)
{
	struct onnxrun_session *session = NULL;
	struct bench_result bench = {0.0, 0.0};
	int code = CLI_EXIT_ERROR, mismatch = 0;

	double t0 = cli_now_ms();
	if (cli_data_collect(env, model, opts, data) != CLI_OK)
		goto done;
	if (opts->random && cli_random_fill(env, model, opts, data) != CLI_OK)
		goto done;
	before_run.inputs_ms = cli_now_ms() - t0;
	t0 = cli_now_ms();
	if (make_session(model, opts, &session) != CLI_OK ||
	    cli_data_bind(session, model, data) != CLI_OK)
		goto done;
	before_run.session_ms = cli_now_ms() - t0;
	cli_interrupt_watch(session);
	int rc = opts->bench_runs > 0 ? run_bench(session, opts->bench_runs, &bench)
	                              : run_once(session);
	if (rc != CLI_OK || cli_compare_outputs(session, model, data, opts, &mismatch) != CLI_OK)
		goto done;
	if (opts->profile)
		print_profile(session, model);
	if (opts->output_dir != NULL && cli_write_outputs(env, session, model, opts) != CLI_OK)
		goto done;
	if (opts->bench_runs > 0)
		printf("bench: runs=%ld median_ms=%.3f min_ms=%.3f\n", opts->bench_runs,
		       bench.median_ms, bench.min_ms);
	code = mismatch ? CLI_EXIT_MISMATCH : CLI_EXIT_OK;
done:
	cli_interrupt_watch(NULL);
	onnxrun_session_free(session);
	return code;
}

/* Loads the model and does what the options ask; returns the exit code. */
/* ONNXRUN_KERNEL=scalar for this process (read when the library first picks its kernels). */
static void cli_use_portable_kernels(void)
{
#ifdef _WIN32
	_putenv_s("ONNXRUN_KERNEL", "scalar");
#else
	setenv("ONNXRUN_KERNEL", "scalar", 0);
#endif
}

static int run_tool(const struct cli_options *opts)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct cli_data data;
	int code = CLI_EXIT_ERROR;
	enum onnxrun_status st;

	/* --info's arena figure is for a bare-metal build: its ops plan with the portable
	 * kernels, whatever this CPU has (arena_estimate.c). ONNXRUN_KERNEL, when set, wins. */
	if (opts->info && !getenv("ONNXRUN_KERNEL"))
		cli_use_portable_kernels();
	st = onnxrun_env_create(NULL, &env);
	memset(&data, 0, sizeof data);
	if (st != ONNXRUN_OK) {
		cli_error("cannot create the environment: %s", onnxrun_status_str(st));
		return CLI_EXIT_ERROR;
	}
	onnxrun_env_set_log(env, cli_log, NULL);
	if (opts->max_memory)
		onnxrun_env_set_max_memory(env, opts->max_memory); /* sessions inherit the env's cap */
	if (opts->no_mmap)
		onnxrun_env_set_mmap(env, 0);
	if (opts->allow_newer_opset)
		onnxrun_env_set_allow_newer_opset(env, 1);
	double t0 = cli_now_ms();
	st = onnxrun_model_load_file(env, opts->model_path, &model);
	before_run.load_ms = cli_now_ms() - t0;
	if (st != ONNXRUN_OK)
		cli_lib_error(onnxrun_env_error(env), st, opts->model_path);
	else if (opts->info)
		code = cli_print_info(model, opts) == CLI_OK ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	else
		code = run_model(env, model, opts, &data);
	cli_data_free(&data);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	return code;
}

int main(int argc, char **argv)
{
	struct cli_options opts;
	int code;

	cli_interrupt_install();
	if (argc > 1 && strcmp(argv[1], "test") == 0) {
		code = cli_test_main(argc - 1, argv + 1);
		return cli_interrupted() ? CLI_EXIT_INTERRUPTED : code;
	}
	if (cli_parse_args(argc, argv, &opts) != CLI_OK) {
		code = CLI_EXIT_ERROR;
	} else if (opts.help) {
		cli_print_usage(stdout);
		code = CLI_EXIT_OK;
	} else if (opts.version) {
		printf("onnxrun %s\n", onnxrun_version());
		code = CLI_EXIT_OK;
	} else if (opts.dot_path != NULL) {
		code = cli_write_dot(&opts);
	} else if (opts.c_array) {
		code = cli_write_c_array(&opts);
	} else {
		code = run_tool(&opts);
	}
	cli_options_free(&opts);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write to standard output");
		code = CLI_EXIT_ERROR;
	}
	return cli_interrupted() ? CLI_EXIT_INTERRUPTED : code;
}
