/*
 * args.c - command-line parsing for onnxrun (docs/design.md, 'Command-line contract').
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum opt_id {
	OPT_HELP,
	OPT_VERSION,
	OPT_OUTPUT,
	OPT_NPY,
	OPT_RANDOM,
	OPT_DIM,
	OPT_THREADS,
	OPT_INFO,
	OPT_BENCH,
	OPT_PROFILE,
	OPT_MAX_MEMORY,
	OPT_RTOL,
	OPT_ATOL,
	OPT_DOT,
	OPT_C_ARRAY,
	OPT_NO_MMAP,
	OPT_TIMEOUT,
};

/* value: 0 none, 1 required, 2 optional (only as --name=VALUE) */
struct opt_def {
	const char *name;
	int value;
	enum opt_id id;
};

static const struct opt_def opt_defs[] = {
	{"help", 0, OPT_HELP},       {"version", 0, OPT_VERSION}, {"output", 1, OPT_OUTPUT},
	{"npy", 0, OPT_NPY},         {"random", 2, OPT_RANDOM},   {"dim", 1, OPT_DIM},
	{"threads", 1, OPT_THREADS}, {"info", 0, OPT_INFO},       {"bench", 1, OPT_BENCH},
	{"profile", 0, OPT_PROFILE}, {"rtol", 1, OPT_RTOL},       {"atol", 1, OPT_ATOL},
	{"dot", 1, OPT_DOT},         {"max-memory", 1, OPT_MAX_MEMORY},
	{"no-mmap", 0, OPT_NO_MMAP}, {"timeout", 1, OPT_TIMEOUT},
	{"c-array", 0, OPT_C_ARRAY},
};

/* Prints the usage text. */
void cli_print_usage(FILE *f)
{
	fputs("usage: onnxrun [options] MODEL [INPUTS...]\n"
	      "       onnxrun --dot FILE MODEL\n"
	      "       onnxrun --c-array MODEL > model.c\n"
	      "       onnxrun test [options] PATH...   (see 'onnxrun test --help')\n"
	      "\n"
	      "Runs an ONNX model. INPUTS is a folder in the ONNX test layout (input_<i>.pb,\n"
	      "expected outputs output_<i>.pb) and/or tensor files named after the inputs\n"
	      "(<name>.pb or <name>.npy). With expected outputs, each output is compared and\n"
	      "a PASS/FAIL line printed; otherwise a one-line summary per output.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output DIR    write DIR/output_<i>.pb (created if missing)\n"
	      "      --npy           with -o, also write DIR/<output name>.npy\n"
	      "      --random[=SEED] fill missing inputs with pseudo-random values (seed 0)\n"
	      "      --dim NAME=N    bind the symbolic dim NAME to N (repeatable)\n"
	      "      --threads N     worker threads (default: all online cores)\n"
	      "      --rtol X        relative tolerance (default 1e-3)\n"
	      "      --atol X        absolute tolerance (default 1e-7)\n"
	      "      --info          print the model's inputs, outputs, nodes, planned memory\n"
	      "                      and the arena a 32-bit bare-metal build needs; run nothing\n"
	      "      --dot FILE      write the graph as Graphviz DOT to FILE ('-': stdout), with\n"
	      "                      each edge's inferred type and shape; run nothing\n"
	      "      --c-array       print MODEL as a 64-byte-aligned C array (for firmware:\n"
	      "                      onnxrun_model_load_borrowed reads it in place)\n"
	      "      --bench N       time N runs after one warm-up run\n"
	      "      --profile       after the run(s), print each node's mean compute time\n"
	      "      --max-memory N  cap on tensor bytes for the model's weights and for a\n"
	      "                      run's intermediates + outputs; N in bytes or with a\n"
	      "                      K/M/G suffix (default 8G)\n"
	      "      --no-mmap       read the model and its external data into memory\n"
	      "                      instead of mapping the files\n"
	      "      --timeout S     stop a run still going after S seconds (a decimal\n"
	      "                      number; each run of --bench gets S): exit status 2\n"
	      "                      and the node it stopped in\n"
	      "  -h, --help          print this help and exit\n"
	      "      --version       print the version and exit\n"
	      "\n"
	      "Ctrl-C stops the run in progress cleanly (exit status 130); pressed again, it\n"
	      "ends the tool at once.\n"
	      "\n"
	      "exit status: 0 success, 1 an output differs from the expected one, 2 error,\n"
	      "130 interrupted by Ctrl-C\n",
	      f);
}

static void usage_error(const char *what, const char *arg)
{
	cli_error("%s '%s' (see 'onnxrun --help')", what, arg);
}

/* Parses a thread count or run count: a decimal integer in [1, max]. */
int cli_parse_count(const char *opt, const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || v < 1 || v > max) {
		cli_error("--%s needs an integer from 1 to %ld, not '%s'", opt, max, s);
		return CLI_ERROR;
	}
	*out = v;
	return CLI_OK;
}

/* The longest --timeout: a day. */
#define MAX_TIMEOUT_S 86400.0

/* Parses a duration in seconds: a finite decimal number > 0 and at most a day. */
int cli_parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0 || v > MAX_TIMEOUT_S) {
		cli_error("--%s needs a number of seconds > 0 and at most %g, not '%s'", opt, MAX_TIMEOUT_S, s);
		return CLI_ERROR;
	}
	*out = v;
	return CLI_OK;
}

/* Seconds as whole microseconds, at least 1. */
uint64_t cli_seconds_to_us(double seconds)
{
	double us = ceil(seconds * 1e6);
	return us < 1 ? 1 : (uint64_t)us;
}

/* Parses a byte count: a decimal integer >= 1, optionally followed by K, M or G (powers of
 * 1024). */
static int parse_bytes(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < 1 || v > (UINT64_MAX >> shift)) {
		cli_error("--%s needs a byte count such as 1048576, 512M or 8G, not '%s'", opt, s);
		return CLI_ERROR;
	}
	*out = (uint64_t)v << shift;
	return CLI_OK;
}

/* Parses a tolerance: a finite number >= 0. */
int cli_parse_tolerance(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < 0) {
		cli_error("--%s needs a finite number >= 0, not '%s'", opt, s);
		return CLI_ERROR;
	}
	*out = v;
	return CLI_OK;
}

/* Parses the --random seed: an unsigned 64-bit decimal (or 0x hex) integer. */
static int parse_seed(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (s[0] == '\0' || s[0] == '-' || *end != '\0' || errno != 0) {
		cli_error("--random needs an unsigned integer seed, not '%s'", s);
		return CLI_ERROR;
	}
	*out = (uint64_t)v;
	return CLI_OK;
}

/* Parses NAME=VALUE of --dim and appends it to opts->dims. */
static int parse_dim(const char *s, struct cli_options *opts)
{
	const char *eq = strrchr(s, '=');
	char *end;
	long long v;

	if (eq == NULL || eq == s || eq[1] == '\0') {
		cli_error("--dim needs NAME=VALUE, not '%s'", s);
		return CLI_ERROR;
	}
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (*end != '\0' || errno != 0 || v < 0) {
		cli_error("--dim %.*s needs an integer value >= 0, not '%s'", (int)(eq - s), s,
		          eq + 1);
		return CLI_ERROR;
	}
	struct cli_dim *dims = realloc(opts->dims, (opts->dim_count + 1) * sizeof *dims);
	if (dims == NULL) {
		cli_error("out of memory");
		return CLI_ERROR;
	}
	opts->dims = dims;
	dims[opts->dim_count++] = (struct cli_dim){s, (size_t)(eq - s), (int64_t)v};
	return CLI_OK;
}

/* Applies one option with its value (NULL when it takes none). */
static int apply_option(enum opt_id id, const char *name, const char *val,
                        struct cli_options *opts)
{
	long n;

	switch (id) {
	case OPT_HELP: opts->help = 1; return CLI_OK;
	case OPT_VERSION: opts->version = 1; return CLI_OK;
	case OPT_OUTPUT: opts->output_dir = val; return CLI_OK;
	case OPT_NPY: opts->write_npy = 1; return CLI_OK;
	case OPT_INFO: opts->info = 1; return CLI_OK;
	case OPT_DOT: opts->dot_path = val; return CLI_OK;
	case OPT_C_ARRAY: opts->c_array = 1; return CLI_OK;
	case OPT_RANDOM:
		opts->random = 1;
		return val != NULL ? parse_seed(val, &opts->seed) : CLI_OK;
	case OPT_DIM: return parse_dim(val, opts);
	case OPT_THREADS:
		if (cli_parse_count(name, val, 4096, &n) != CLI_OK)
			return CLI_ERROR;
		opts->threads = (int)n;
		return CLI_OK;
	case OPT_BENCH: return cli_parse_count(name, val, 100000000L, &opts->bench_runs);
	case OPT_RTOL: return cli_parse_tolerance(name, val, &opts->rtol);
	case OPT_ATOL: return cli_parse_tolerance(name, val, &opts->atol);
	case OPT_PROFILE: opts->profile = 1; return CLI_OK;
	case OPT_MAX_MEMORY: return parse_bytes(name, val, &opts->max_memory);
	case OPT_NO_MMAP: opts->no_mmap = 1; return CLI_OK;
	case OPT_TIMEOUT: return cli_parse_seconds(name, val, &opts->timeout);
	}
	return CLI_ERROR;
}

/* Finds a long option by name (the text between "--" and '=' or the end). */
static const struct opt_def *find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof opt_defs / sizeof opt_defs[0]; i++) {
		if (strlen(opt_defs[i].name) == len && strncmp(opt_defs[i].name, name, len) == 0)
			return &opt_defs[i];
	}
	return NULL;
}

/* Handles argv[*i], a long option "--name[=value]"; may consume argv[*i + 1]. */
static int parse_long(int argc, char **argv, int *i, struct cli_options *opts)
{
	const char *arg = argv[*i] + 2;
	const char *eq = strchr(arg, '=');
	size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	const struct opt_def *def = find_option(arg, len);
	const char *val = eq != NULL ? eq + 1 : NULL;

	if (def == NULL) {
		usage_error("unknown option", argv[*i]);
		return CLI_ERROR;
	}
	if (def->value == 0 && val != NULL) {
		usage_error("option takes no value:", argv[*i]);
		return CLI_ERROR;
	}
	if (def->value == 1 && val == NULL) {
		if (*i + 1 >= argc) {
			cli_error("option '--%s' needs a value (see 'onnxrun --help')", def->name);
			return CLI_ERROR;
		}
		val = argv[++*i];
	}
	return apply_option(def->id, def->name, val, opts);
}

/* Handles argv[*i], a short option: -h or -o DIR / -oDIR. */
static int parse_short(int argc, char **argv, int *i, struct cli_options *opts)
{
	const char *arg = argv[*i];

	if (strcmp(arg, "-h") == 0)
		return apply_option(OPT_HELP, "help", NULL, opts);
	if (strncmp(arg, "-o", 2) != 0) {
		usage_error("unknown option", arg);
		return CLI_ERROR;
	}
	if (arg[2] != '\0')
		return apply_option(OPT_OUTPUT, "output", arg + 2, opts);
	if (*i + 1 >= argc) {
		cli_error("option '-o' needs a value (see 'onnxrun --help')");
		return CLI_ERROR;
	}
	return apply_option(OPT_OUTPUT, "output", argv[++*i], opts);
}

/* Adds a positional argument: the model first, then INPUTS. */
static void add_positional(const char *arg, struct cli_options *opts)
{
	if (opts->model_path == NULL)
		opts->model_path = arg;
	else
		opts->inputs[opts->input_count++] = arg;
}

/* Checks combinations once everything is parsed. */
static int check_options(const struct cli_options *opts)
{
	if (opts->help || opts->version)
		return CLI_OK;
	if (opts->model_path == NULL) {
		cli_error("missing MODEL (see 'onnxrun --help')");
		return CLI_ERROR;
	}
	if (opts->dot_path != NULL && (opts->input_count > 0 || opts->info || opts->bench_runs > 0 ||
	                               opts->output_dir != NULL || opts->random)) {
		cli_error("--dot only draws the model: it takes no INPUTS, --info, --bench, -o or "
		          "--random");
		return CLI_ERROR;
	}
	if (opts->c_array && (opts->input_count > 0 || opts->info || opts->dot_path != NULL ||
	                      opts->bench_runs > 0 || opts->output_dir != NULL || opts->random)) {
		cli_error("--c-array only prints the model's bytes: it takes no INPUTS, --info, --dot, "
		          "--bench, -o or --random");
		return CLI_ERROR;
	}
	if (opts->write_npy && opts->output_dir == NULL) {
		cli_error("--npy needs -o DIR");
		return CLI_ERROR;
	}
	return CLI_OK;
}

/*
 * Parses argv into opts (zeroed first; defaults filled in). Reports usage errors itself.
 * On failure opts may still own memory: call cli_options_free either way.
 */
int cli_parse_args(int argc, char **argv, struct cli_options *opts)
{
	int only_positional = 0;

	memset(opts, 0, sizeof *opts);
	opts->rtol = 1e-3;
	opts->atol = 1e-7;
	opts->inputs = cli_calloc((size_t)(argc > 0 ? argc : 1), sizeof *opts->inputs);
	if (opts->inputs == NULL)
		return CLI_ERROR;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int rc = CLI_OK;
		if (only_positional || arg[0] != '-' || arg[1] == '\0')
			add_positional(arg, opts);
		else if (strcmp(arg, "--") == 0)
			only_positional = 1;
		else if (arg[1] == '-')
			rc = parse_long(argc, argv, &i, opts);
		else
			rc = parse_short(argc, argv, &i, opts);
		if (rc != CLI_OK)
			return rc;
	}
	return check_options(opts);
}

void cli_options_free(struct cli_options *opts)
{
	free(opts->inputs);
	free(opts->dims);
	opts->inputs = NULL;
	opts->dims = NULL;
}

/* The last --dim binding for `name`, or NULL. */
const struct cli_dim *cli_find_dim(const struct cli_options *opts, const char *name)
{
	const struct cli_dim *found = NULL;

	for (size_t i = 0; i < opts->dim_count; i++) {
		const struct cli_dim *d = &opts->dims[i];
		if (strlen(name) == d->name_len && strncmp(name, d->name, d->name_len) == 0)
			found = d;
	}
	return found;
}
