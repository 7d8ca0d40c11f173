/*
 * cli.h - internals of the onnxrun command-line tool, shared by the files of src/cli/.
 *
 * The tool uses only the public API (onnxrun.h). Every function that can fail returns
 * CLI_OK or CLI_ERROR; the failing function prints the single "onnxrun: error: ..." line
 * itself (cli_error), so callers only propagate the code.
 */
#ifndef ONNXRUN_CLI_H
#define ONNXRUN_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

#include "onnxrun.h"
#include "../platform/platform.h"

/* MinGW's printf archetype is the Microsoft C runtime's: the build uses MinGW's C99 printf
 * (__USE_MINGW_ANSI_STDIO), checked as gnu_printf. */
#if defined(__MINGW32__)
#define CLI_PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#else
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#endif

/* Process exit codes of the tool (docs/design.md, 'Command-line contract'). */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_MISMATCH = 1,
	CLI_EXIT_ERROR = 2,
	CLI_EXIT_INTERRUPTED = 130, /* Ctrl-C stopped a run (128 + SIGINT, as shells report) */
};

/* Return codes of the tool's internal functions. */
enum cli_rc {
	CLI_OK = 0,
	CLI_ERROR = 1,
};

/* One --dim NAME=VALUE binding; points into argv. */
struct cli_dim {
	const char *name;
	size_t name_len;
	int64_t value;
};

/* Parsed command line. Strings point into argv; arrays are heap-allocated. */
struct cli_options {
	const char *model_path;
	const char **inputs; /* INPUTS arguments: one folder and/or tensor files */
	size_t input_count;
	const char *output_dir; /* -o DIR, NULL if absent */
	int write_npy;
	int random;
	uint64_t seed;
	struct cli_dim *dims;
	size_t dim_count;
	int threads; /* 0: number of online cores */
	int info;
	const char *dot_path; /* --dot FILE ("-" for stdout), NULL if absent */
	int c_array;          /* --c-array: print the model file as a C array */
	long bench_runs; /* 0: no --bench */
	int profile;     /* --profile: per-node times after the runs */
	uint64_t max_memory; /* --max-memory, 0: the library's default */
	double timeout;      /* --timeout SECONDS per run, 0: none */
	int no_mmap;         /* --no-mmap */
	double rtol;
	double atol;
	int help;
	int version;
};

/* Inputs and expected outputs gathered from the INPUTS arguments. Tensors are owned. */
struct cli_data {
	size_t input_count;
	struct onnxrun_tensor **inputs;   /* [input_count], NULL where missing */
	char **input_sources;             /* [input_count] file each came from, or NULL */
	size_t output_count;
	struct onnxrun_tensor **expected; /* [output_count], NULL where none */
	char **expected_sources;          /* [output_count] file each came from, or NULL */
	size_t override_count; /* extra files bound by name (initializer overrides) */
	struct onnxrun_tensor **overrides;
	char **override_sources;
	char **override_names;
};

/* Result of comparing a tensor with its expected value (compare.c). The statistics are
 * valid only when same_type; the tensor passes when same_type && bad == 0. */
struct cli_cmp {
	int same_type;     /* dtype and shape are equal */
	double max_abs;    /* largest |got - exp| */
	double max_rel;    /* largest |got - exp| / |exp| over exp != 0 */
	int64_t bad;       /* elements that differ */
	int64_t first_bad; /* flat index of the first, -1 if none */
	int64_t worst;     /* flat index of the differing element with the largest error, -1 */
	double worst_abs;  /* its |got - exp| (NaN for a NaN/number mismatch) */
	double worst_rel;  /* its |got - exp| / |exp| (inf when exp == 0) */
	double worst_key;  /* internal: worst_abs with NaN as +inf */
};

/* One op onnxrun does not implement, from an inspected model (unsupported.c). */
struct cli_unsupported {
	char *op_type;
	char *domain; /* "ai.onnx" for the default domain */
	int64_t opset;
	size_t nodes; /* nodes of the model with this op */
};

/* util.c */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_warning(const char *fmt, ...) CLI_PRINTF(1, 2);
void cli_lib_error(const char *message, enum onnxrun_status status, const char *context);
void cli_log(void *ctx, enum onnxrun_log_level level, const char *message);
void *cli_calloc(size_t count, size_t size);
char *cli_strdup(const char *s);
char *cli_path_join(const char *dir, const char *name);
int cli_is_dir(const char *path);
int cli_is_file(const char *path);
int cli_mkdirs(const char *path);
long cli_getline(char **buf, size_t *cap, FILE *f);
char *cli_sanitize_name(const char *name, size_t index);
void cli_print_shape(FILE *f, int32_t rank, const int64_t *dims);
void cli_print_tensor_type(FILE *f, const struct onnxrun_tensor *t);
void cli_print_value_type(FILE *f, const struct onnxrun_value_info *info);
void cli_print_dims(FILE *f, int32_t rank, const struct onnxrun_dim *dims);
void cli_capture_begin(void);
char *cli_capture_end(void);
char *cli_vformat(const char *fmt, va_list ap);
char *cli_format(const char *fmt, ...) CLI_PRINTF(1, 2);
double cli_now_ms(void);
void cli_format_bytes(uint64_t bytes, char *buf, size_t size);
float cli_half_to_float(uint16_t h);
uint16_t cli_float_to_half(float f);
float cli_bf16_to_float(uint16_t b);
uint16_t cli_float_to_bf16(float f);

/* args.c */
int cli_parse_args(int argc, char **argv, struct cli_options *opts);
void cli_options_free(struct cli_options *opts);
void cli_print_usage(FILE *f);
const struct cli_dim *cli_find_dim(const struct cli_options *opts, const char *name);
int cli_parse_tolerance(const char *opt, const char *s, double *out);
int cli_parse_count(const char *opt, const char *s, long max, long *out);
int cli_parse_seconds(const char *opt, const char *s, double *out);
uint64_t cli_seconds_to_us(double seconds);

/* interrupt.c: Ctrl-C cancels the watched session's run (see the file). */
void cli_interrupt_install(void);
void cli_interrupt_watch(struct onnxrun_session *session); /* NULL: none */
int cli_interrupted(void);

/* main.c */
int cli_bind_dims(struct onnxrun_session *session, const struct cli_options *opts);

/* inputs.c */
int cli_data_collect(struct onnxrun_env *env, const struct onnxrun_model *model,
                     const struct cli_options *opts, struct cli_data *data);
int cli_data_bind(struct onnxrun_session *session, const struct onnxrun_model *model,
                  const struct cli_data *data);
void cli_data_free(struct cli_data *data);

/* random.c */
int cli_random_fill(struct onnxrun_env *env, const struct onnxrun_model *model,
                    const struct cli_options *opts, struct cli_data *data);

/* compare.c */
int cli_compare_outputs(const struct onnxrun_session *session, const struct onnxrun_model *model,
                        const struct cli_data *data, const struct cli_options *opts,
                        int *mismatch);
void cli_compare_tensors(const struct onnxrun_tensor *exp, const struct onnxrun_tensor *got,
                         double rtol, double atol, struct cli_cmp *out);
void cli_print_index(FILE *f, int32_t rank, const int64_t *dims, int64_t i);

/* values.c */
int cli_dtype_is_float(enum onnxrun_dtype dtype);
int cli_dtype_parts(enum onnxrun_dtype dtype);
double cli_element_value(enum onnxrun_dtype dtype, const void *data, int64_t i, int part);
void cli_print_element(FILE *f, const struct onnxrun_tensor *t, int64_t i, int precise);
void cli_print_summary(const char *name, const struct onnxrun_tensor *t);

/* outputs.c */
int cli_write_outputs(struct onnxrun_env *env, const struct onnxrun_session *session,
                      const struct onnxrun_model *model, const struct cli_options *opts);

/* info.c */
int cli_print_info(const struct onnxrun_model *model, const struct cli_options *opts);

/* unsupported.c */
enum onnxrun_status cli_inspect_unsupported(struct onnxrun_env *env, const char *path,
                                            struct onnxrun_model **model,
                                            struct cli_unsupported **list, size_t *count);
void cli_unsupported_free(struct cli_unsupported *list, size_t count);

/* escape.c: text for the report formats */
void cli_write_xml(FILE *f, const char *s, int attr);
void cli_write_json_string(FILE *f, const char *s);
void cli_write_dot_text(FILE *f, const char *s);

/* arena_estimate.c: the arena bytes of a 32-bit bare-metal build (--info); 0 or -1 */
int cli_arena_estimate(const struct cli_options *opts, size_t *bytes);

/* c_array.c */
int cli_write_c_array(const struct cli_options *opts);

/* dot.c */
int cli_write_dot(const struct cli_options *opts);

/* testrun_main.c: the "onnxrun test" subcommand; returns the exit code. */
int cli_test_main(int argc, char **argv);

#endif /* ONNXRUN_CLI_H */
