/*
 * testrun.h - internals of "onnxrun test", shared by the src/cli/testrun_*.c files.
 *
 * A case is one model with its test_data_set_* folders. The run finds every case under the
 * PATH arguments (testrun_find.c), applies onnxrun-test.conf files (testrun_conf.c), runs
 * each data set and compares (testrun_case.c), and reports on the terminal
 * (testrun_report.c), as JUnit XML (testrun_junit.c) and as JSON (testrun_json.c).
 */
#ifndef ONNXRUN_CLI_TESTRUN_H
#define ONNXRUN_CLI_TESTRUN_H

#include "cli.h"

/* Name of the per-folder settings file. */
#define TR_CONF_NAME "onnxrun-test.conf"
/* Prefix of the data set folders of a case. */
#define TR_SET_PREFIX "test_data_set_"

/* Outcome of a case or data set. */
enum tr_result {
	TR_PASS,
	TR_FAIL,        /* values, dtype or shape differ */
	TR_ERROR,       /* invalid model, input or settings; a run that failed */
	TR_UNSUPPORTED, /* the model uses ops onnxrun lacks: skipped, or an error with
	                   --unsupported=error (tr_counts_as) */
	TR_SKIP,        /* skipped by an onnxrun-test.conf */
};

/* Options of "onnxrun test". Strings point into argv. */
struct tr_options {
	const char **paths;
	size_t path_count;
	double rtol; /* defaults for every case; onnxrun-test.conf overrides per case */
	double atol;
	const char *junit_path;
	const char *json_path;
	int fail_fast;
	int unsupported_is_error; /* --unsupported=error; 0: skip (the default) */
	int threads; /* 0: all online cores */
	double timeout; /* --timeout SECONDS per case, 0: none */
	int help;
};

/* The comparison of one output of a data set. */
struct tr_output {
	char *name;
	int pass;
	double max_abs;
	double max_rel;
};

/* One data set that was run. */
struct tr_set {
	char *name; /* folder name, "test_data_set_0" */
	enum tr_result result;
	double time_ms;
	char *message; /* NULL when it passed with nothing to say */
	struct tr_output *outputs;
	size_t output_count;
};

/* One case. */
struct tr_case {
	char *path;  /* as reported: the case folder, or the model file given as a PATH */
	char *name;  /* the last component of path */
	char *model; /* the model file */
	char *dir;   /* the folder holding the model and its data sets */
	char **set_paths; /* data set folders found, in natural order */
	size_t set_total;
	struct tr_set *sets; /* the data sets that ran (fewer than set_total after --fail-fast
	                        or a case-level outcome) */
	size_t set_count;
	enum tr_result result;
	double time_ms;
	char *message; /* case-level message (load error, skip reason, unsupported ops...) */
	struct cli_unsupported *ops;
	size_t op_count;
	double rtol;
	double atol;
	int ran; /* 0 when --fail-fast stopped the run before this case */
};

/* Every case of the run and the totals. */
struct tr_run {
	struct tr_case *cases;
	size_t count;
	size_t cap;
	size_t passed, failed, errors, unsupported, skipped, not_run;
	size_t sets_run;
	double time_ms;
};

/* testrun_find.c */
int tr_find_cases(const struct tr_options *opts, struct tr_run *run);
void tr_run_free(struct tr_run *run);

/* testrun_conf.c */
int tr_conf_apply(struct tr_case *c, char **skip_reason, char **error);

/* testrun_case.c */
void tr_run_case(struct tr_case *c, const struct tr_options *opts, int *stop);
char *tr_unsupported_text(const struct tr_case *c, const char *prefix);

/* testrun_report.c */
const char *tr_result_name(enum tr_result result);
void tr_progress_init(void);
void tr_progress_show(size_t i, size_t n, const char *name);
void tr_progress_clear(void);
void tr_print_case_details(const struct tr_case *c);
void tr_print_summary(const struct tr_run *run);
enum tr_result tr_counts_as(const struct tr_case *c, const struct tr_options *opts);
int tr_counts_as_failed(const struct tr_case *c, const struct tr_options *opts);

/* testrun_junit.c, testrun_json.c */
int tr_write_junit(const char *path, const struct tr_run *run, const struct tr_options *opts);
int tr_write_json(const char *path, const struct tr_run *run, const struct tr_options *opts);

#endif /* ONNXRUN_CLI_TESTRUN_H */
