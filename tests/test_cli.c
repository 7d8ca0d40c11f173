/*
 * test_cli.c - runs the onnxrun binary (ONNXRUN_CLI_PATH) through cli_spawn.h, capturing its
 * stdout and stderr into files; checks exit codes and output per docs/design.md's CLI contract
 * (lines matched with line_match.h). Tensor files and small models are made with the library
 * and tests/model_builder.h. Runs on POSIX and on Windows.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* access (MinGW-w64 has it too) */
#ifndef _WIN32
#include <ftw.h>
#include <sys/stat.h>
#endif
#include <cmocka.h>

#include "cli_spawn.h"
#include "line_match.h"
#include "platform/platform.h"
#include "tree_files.h"
#include "onnxrun.h"
#include "model_builder.h"

#define TMP ONNXRUN_TEST_TMP "/cli"
#define CT_DIR ONNXRUN_TEST_DATA "/test_convtranspose"
#define CT_MODEL CT_DIR "/model.onnx"
#define CT_SET CT_DIR "/test_data_set_0"
#define SYM_MODEL ONNXRUN_MODELS_DIR "/symbolic_batch/model.onnx"

/* Result of one run of the tool. */
struct run {
	int status; /* exit code, or -1 when it did not exit normally */
	char *out;
	char *err;
};

/* ---- helpers ---- */

/* Whole file as a NUL-terminated heap string (NULL if unreadable); *size optional. */
static char *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	if (size != NULL)
		*size = n;
	return buf;
}

static void write_all(const char *path, const void *data, size_t size)
{
	assert_int_equal(mb_write_file(path, data, size), 0);
}

static void copy_file(const char *from, const char *to)
{
	size_t size;
	char *data = read_all(from, &size);

	assert_non_null(data);
	write_all(to, data, size);
	free(data);
}

/* Formats a path into a static rotating buffer, valid for the next 31 calls. */
static const char *path_of(const char *fmt, ...)
{
	static char bufs[32][1024];
	static int next;
	char *b = bufs[next++ % 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof bufs[0], fmt, ap);
	va_end(ap);
	return b;
}

#ifdef _WIN32
/* The CLI writes its text in text mode: on Windows its lines end in "\r\n", read here as
 * "\n". */
static void unix_lines(char *s)
{
	char *w = s;
	for (; *s; s++)
		if (!(s[0] == '\r' && s[1] == '\n'))
			*w++ = *s;
	*w = '\0';
}

/* rm -rf path (tree_files.h; the tests make no links on Windows) */
static void remove_tree(const char *path)
{
	tree_remove(path);
}
#else
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* rm -rf path, not following symbolic links */
static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
#endif

/* A fresh, empty folder TMP/<name>; the returned path stays valid for the next 3 calls. */
static const char *fresh_dir(const char *name)
{
	static char bufs[4][1024];
	static int next;
	char *dir = bufs[next++ % 4];

	snprintf(dir, sizeof bufs[0], "%s/%s", TMP, name);
	remove_tree(dir);
	assert_int_equal(onnxrun__os_mkdir(dir), 0);
	return dir;
}

/* Runs onnxrun with the NULL-terminated argument list; captures stdout and stderr. */
static void run_cli(struct run *r, const char *const *args)
{
	const char *argv[64];
	size_t n = 0;

	argv[n++] = ONNXRUN_CLI_PATH;
	while (args[n - 1] != NULL && n < 63) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	r->status = cli_run_files(argv, TMP "/stdout.txt", TMP "/stderr.txt");
	r->out = read_all(TMP "/stdout.txt", NULL);
	r->err = read_all(TMP "/stderr.txt", NULL);
	assert_non_null(r->out);
	assert_non_null(r->err);
#ifdef _WIN32
	unix_lines(r->out);
	unix_lines(r->err);
#endif
}

#define RUN(r, ...) run_cli((r), (const char *const[]){__VA_ARGS__, NULL})

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* Checks an error run: exit 2, nothing on stdout, exactly one "onnxrun: error:" line on
 * stderr that contains `needle`. */
static void assert_error_run(const struct run *r, const char *needle)
{
	if (r->status != 2 || count_lines(r->err) != 1 || strstr(r->err, needle) == NULL)
		print_error("status %d, stderr: %s(wanted '%s')\n", r->status, r->err, needle);
	assert_int_equal(r->status, 2);
	assert_string_equal(r->out, "");
	assert_int_equal(count_lines(r->err), 1);
	assert_int_equal(strncmp(r->err, "onnxrun: error: ", 16), 0);
	assert_non_null(strstr(r->err, needle));
}

/* Whether some line of `text` matches the pattern `re` (line_match.h). */
static int has_line_matching(const char *text, const char *re)
{
	int found = line_match_any(text, re);

	if (found < 0)
		fail_msg("invalid pattern '%s'", re);
	return found;
}

static struct onnxrun_env *env_new(void)
{
	struct onnxrun_env *env = NULL;

	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	return env;
}

static struct onnxrun_tensor *load_pb(struct onnxrun_env *env, const char *path)
{
	struct onnxrun_tensor *t = NULL;

	if (onnxrun_tensor_load_pb(env, path, &t) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	return t;
}

/* Saves a copy of caller data as a named .pb tensor file. */
static void save_pb(struct onnxrun_env *env, enum onnxrun_dtype dtype, int32_t rank,
                    const int64_t *dims, const void *data, const char *name, const char *path)
{
	struct onnxrun_tensor *t = NULL;

	assert_int_equal(onnxrun_tensor_create(env, dtype, rank, dims, &t), ONNXRUN_OK);
	if (onnxrun_tensor_nbytes(t) > 0)
		memcpy(onnxrun_tensor_data(t), data, onnxrun_tensor_nbytes(t));
	assert_int_equal(onnxrun_tensor_set_name(t, name), ONNXRUN_OK);
	if (onnxrun_tensor_save_pb(env, t, path) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	onnxrun_tensor_free(t);
}

/* Whether two tensors have equal dtype, shape and bytes (non-string). */
static void assert_tensors_equal(const struct onnxrun_tensor *a, const struct onnxrun_tensor *b)
{
	int32_t rank = onnxrun_tensor_rank(a);

	assert_int_equal(onnxrun_tensor_dtype(a), onnxrun_tensor_dtype(b));
	assert_int_equal(rank, onnxrun_tensor_rank(b));
	assert_memory_equal(onnxrun_tensor_dims(a), onnxrun_tensor_dims(b), (size_t)rank * sizeof(int64_t));
	assert_int_equal(onnxrun_tensor_nbytes(a), onnxrun_tensor_nbytes(b));
	assert_memory_equal(onnxrun_tensor_data(a), onnxrun_tensor_data(b), onnxrun_tensor_nbytes(a));
}

/* ---- conformance data ---- */

/* Runs MODEL test_data_set_0 for every case folder under `root`; each must PASS. */
static int run_all_cases(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int cases = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		const char *model = path_of("%s/%s/model.onnx", root, e->d_name);
		struct run r;
		if (e->d_name[0] == '.' || access(model, R_OK) != 0)
			continue;
		RUN(&r, model, path_of("%s/%s/test_data_set_0", root, e->d_name));
		if (r.status != 0 || strstr(r.out, "PASS output '") == NULL || strstr(r.out, "FAIL") ||
		    r.err[0] != '\0')
			fail_msg("%s: status %d\n%s%s", e->d_name, r.status, r.out, r.err);
		assert_true(has_line_matching(r.out, "^PASS output '[^']*' \\([a-z0-9]+ \\[[0-9,]*\\]\\): "
		                                     "max_abs=[^ ]+ max_rel=[^ ]+$"));
		run_free(&r);
		cases++;
	}
	closedir(d);
	return cases;
}

static void test_conformance_cases_pass(void **state)
{
	(void)state;
	assert_true(run_all_cases(ONNXRUN_TEST_DATA) >= 16);
}

static void test_example_models_pass(void **state)
{
	(void)state;
	assert_true(run_all_cases(ONNXRUN_MODELS_DIR) >= 1);
}

/* ---- comparison ---- */

/* A copy of test_convtranspose's inputs with output_0.pb changed at flat index 7 by +1. */
static float make_wrong_expected(const char *dir)
{
	struct onnxrun_env *env = env_new();
	struct onnxrun_tensor *t = load_pb(env, CT_SET "/output_0.pb");
	float *v = onnxrun_tensor_data(t);
	float right = v[7];

	copy_file(CT_SET "/input_0.pb", path_of("%s/input_0.pb", dir));
	copy_file(CT_SET "/input_1.pb", path_of("%s/input_1.pb", dir));
	v[7] += 1.0f;
	assert_int_equal(onnxrun_tensor_save_pb(env, t, path_of("%s/output_0.pb", dir)), ONNXRUN_OK);
	onnxrun_tensor_free(t);
	onnxrun_env_free(env);
	return right;
}

static void test_wrong_expected_fails(void **state)
{
	const char *dir = fresh_dir("wrong");
	float right = make_wrong_expected(dir);
	char want[256];
	struct run r;

	(void)state;
	RUN(&r, CT_MODEL, dir);
	snprintf(want, sizeof want,
	         "FAIL output 'Y' (float [1,2,5,5]): max_abs=1 max_rel=%.3g at index [0,0,1,2]: "
	         "expected %.9g got %.9g (1 of 50 elements differ)\n",
	         1.0 / (right + 1.0), (double)(right + 1.0f), (double)right);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, want);
	assert_string_equal(r.err, "");
	run_free(&r);
	/* a tolerance that covers the difference passes */
	RUN(&r, CT_MODEL, dir, "--atol", "1.5");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "PASS output 'Y' (float [1,2,5,5]): max_abs=1 "));
	run_free(&r);
}

static void test_expected_shape_mismatch(void **state)
{
	const char *dir = fresh_dir("shape_mismatch");
	struct onnxrun_env *env = env_new();
	float zeros[10] = {0};
	struct run r;

	(void)state;
	copy_file(CT_SET "/input_0.pb", path_of("%s/input_0.pb", dir));
	copy_file(CT_SET "/input_1.pb", path_of("%s/input_1.pb", dir));
	save_pb(env, ONNXRUN_DTYPE_FLOAT, 2, (const int64_t[]){2, 5}, zeros, "Y",
	        path_of("%s/output_0.pb", dir));
	onnxrun_env_free(env);
	RUN(&r, CT_MODEL, dir);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "FAIL output 'Y': expected float [2,5] got float [1,2,5,5]\n");
	run_free(&r);
}

/* ---- errors ---- */

static void test_missing_model(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TMP "/no-such-dir/model.onnx");
	assert_error_run(&r, "no-such-dir/model.onnx");
	run_free(&r);
}

static void test_corrupt_model(void **state)
{
	size_t size;
	char *bytes = read_all(CT_MODEL, &size);
	struct run r;

	(void)state;
	assert_non_null(bytes);
	write_all(TMP "/truncated.onnx", bytes, size / 2);
	RUN(&r, TMP "/truncated.onnx", CT_SET);
	assert_error_run(&r, "truncated.onnx");
	run_free(&r);
	memset(bytes, 0xff, size);
	write_all(TMP "/garbage.onnx", bytes, size);
	RUN(&r, TMP "/garbage.onnx", "--random");
	assert_error_run(&r, "garbage.onnx");
	run_free(&r);
	free(bytes);
}

static void test_missing_input(void **state)
{
	const char *dir = fresh_dir("missing_input");
	struct run r;

	(void)state;
	copy_file(CT_SET "/input_0.pb", path_of("%s/input_0.pb", dir));
	RUN(&r, CT_MODEL, dir);
	assert_error_run(&r, "missing input 'W'");
	run_free(&r);
	/* a named file argument that does not exist */
	RUN(&r, CT_MODEL, dir, path_of("%s/W.pb", dir));
	assert_error_run(&r, "W.pb");
	run_free(&r);
}

static void test_wrong_input_dtype(void **state)
{
	const char *dir = fresh_dir("wrong_dtype");
	struct onnxrun_env *env = env_new();
	double x[9] = {0};
	struct run r;

	(void)state;
	save_pb(env, ONNXRUN_DTYPE_DOUBLE, 4, (const int64_t[]){1, 1, 3, 3}, x, "X",
	        path_of("%s/input_0.pb", dir));
	copy_file(CT_SET "/input_1.pb", path_of("%s/input_1.pb", dir));
	onnxrun_env_free(env);
	RUN(&r, CT_MODEL, dir);
	assert_error_run(&r, "'X'");
	assert_non_null(strstr(r.err, "input_0.pb"));
	run_free(&r);
}

static void test_wrong_input_shape(void **state)
{
	const char *dir = fresh_dir("wrong_shape");
	struct onnxrun_env *env = env_new();
	float x[8] = {0};
	struct run r;

	(void)state;
	save_pb(env, ONNXRUN_DTYPE_FLOAT, 4, (const int64_t[]){1, 1, 2, 4}, x, "X",
	        path_of("%s/X.pb", dir));
	onnxrun_env_free(env);
	RUN(&r, CT_MODEL, path_of("%s/X.pb", dir), CT_SET "/input_1.pb");
	assert_error_run(&r, "'X'");
	run_free(&r);
}

static void test_unmatched_file(void **state)
{
	const char *dir = fresh_dir("unmatched");
	struct run r;

	(void)state;
	copy_file(CT_SET "/input_0.pb", path_of("%s/Z.pb", dir));
	RUN(&r, CT_MODEL, CT_SET, path_of("%s/Z.pb", dir));
	assert_error_run(&r, "Z.pb");
	run_free(&r);
	RUN(&r, CT_MODEL, CT_SET, CT_MODEL);
	assert_error_run(&r, "model.onnx");
	run_free(&r);
}

/* ---- options ---- */

static void test_usage_errors(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--frobnicate", CT_MODEL);
	assert_error_run(&r, "--frobnicate");
	run_free(&r);
	RUN(&r, "--threads", "x", CT_MODEL, CT_SET);
	assert_error_run(&r, "--threads");
	run_free(&r);
	RUN(&r, "--bench", "0", CT_MODEL, CT_SET);
	assert_error_run(&r, "--bench");
	run_free(&r);
	RUN(&r, "--rtol", "-1", CT_MODEL, CT_SET);
	assert_error_run(&r, "--rtol");
	run_free(&r);
	RUN(&r, "--max-memory", "12Q", CT_MODEL, CT_SET);
	assert_error_run(&r, "--max-memory needs a byte count");
	run_free(&r);
	RUN(&r, "--npy", CT_MODEL, CT_SET);
	assert_error_run(&r, "--npy");
	run_free(&r);
	RUN(&r, "--threads");
	assert_error_run(&r, "--threads");
	run_free(&r);
	RUN(&r, "--info");
	assert_error_run(&r, "MODEL");
	run_free(&r);
}

static void test_help_and_version(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--help");
	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "usage: onnxrun [options] MODEL", 30), 0);
	assert_non_null(strstr(r.out, "--random"));
	assert_string_equal(r.err, "");
	run_free(&r);
	RUN(&r, "--version");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "onnxrun " ONNXRUN_VERSION_STRING "\n");
	run_free(&r);
}

static void test_info(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--info", CT_MODEL, CT_SET);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "input 'X': float [1,1,3,3]\n"));
	assert_non_null(strstr(r.out, "output 'Y': float [1,2,5,5]\n"));
	assert_true(has_line_matching(r.out, "^opset: ai\\.onnx [0-9]+$"));
	assert_true(has_line_matching(r.out, "^node .* \\(ConvTranspose v[0-9]+\\): X, W -> Y float \\[1,2,5,5\\]$"));
	assert_true(has_line_matching(r.out, "^planned memory: [0-9]+ bytes \\(.*\\)$"));
	assert_null(strstr(r.out, "PASS"));
	run_free(&r);
}

static void test_info_symbolic(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--info", SYM_MODEL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "input 'image': float [N,3,8,8]\n"));
	assert_non_null(strstr(r.out, "planned memory: unknown (bind symbolic dims with --dim)\n"));
	run_free(&r);
	RUN(&r, "--info", "--dim", "N=2", SYM_MODEL);
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^node .*-> upscaled float \\[2,3,32,32\\]$"));
	assert_true(has_line_matching(r.out, "^planned memory: [1-9][0-9]* bytes"));
	run_free(&r);
}

static void test_bench(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--bench", "3", "--threads", "2", CT_MODEL, CT_SET);
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^bench: runs=3 median_ms=[0-9]+\\.[0-9][0-9][0-9] min_ms=[0-9]+\\.[0-9][0-9][0-9]$"));
	assert_true(has_line_matching(r.out, "^PASS output 'Y'"));
	assert_int_equal(count_lines(r.out), 2);
	run_free(&r);
}

/* --profile: a table row per node of the upsampler (3 nodes), runs = warm-up + 4. */
static void test_profile(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--profile", "--bench", "4", ONNXRUN_MODELS_DIR "/upsampler/model.onnx",
	    ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0");
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^profile: 5 runs, mean per run$"));
	assert_true(has_line_matching(r.out, "^  0 +conv1 +ConvTranspose +[0-9]+\\.[0-9][0-9][0-9] +[0-9.]+%$"));
	assert_true(has_line_matching(r.out, "^  1 +pixel_shuffle +DepthToSpace +[0-9]+\\.[0-9][0-9][0-9] +[0-9.]+%$"));
	assert_true(has_line_matching(r.out, "^  2 +conv2 +ConvTranspose "));
	run_free(&r);
}

/* --max-memory below what the run needs: a LIMIT error naming the cap; enough: PASS. */
static void test_max_memory(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--max-memory", "64K", ONNXRUN_MODELS_DIR "/upsampler/model.onnx", "--random");
	assert_error_run(&r, "memory limit of 65536 bytes");
	run_free(&r);
	RUN(&r, "--max-memory", "1M", ONNXRUN_MODELS_DIR "/upsampler/model.onnx",
	    ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0");
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^PASS output 'upscaled'"));
	run_free(&r);
}

/* --no-mmap reads the files instead of mapping them: the same outputs. */
static void test_no_mmap(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "--no-mmap", ONNXRUN_MODELS_DIR "/upsampler/model.onnx",
	    ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0");
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^PASS output 'upscaled'"));
	run_free(&r);
	RUN(&r, "--no-mmap=1", ONNXRUN_MODELS_DIR "/upsampler/model.onnx");
	assert_error_run(&r, "--no-mmap");
	run_free(&r);
}

static void test_output_dir(void **state)
{
	char dir[1024];
	struct onnxrun_env *env = env_new();
	struct onnxrun_tensor *got, *want, *npy = NULL;
	struct run r;

	(void)state;
	snprintf(dir, sizeof dir, "%s/outdir/nested", fresh_dir("outdir"));
	RUN(&r, CT_MODEL, CT_SET, "-o", dir, "--npy");
	assert_int_equal(r.status, 0);
	run_free(&r);
	got = load_pb(env, path_of("%s/output_0.pb", dir));
	want = load_pb(env, CT_SET "/output_0.pb");
	assert_tensors_equal(got, want);
	assert_string_equal(onnxrun_tensor_name(got), "Y");
	assert_int_equal(onnxrun_tensor_load_npy(env, path_of("%s/Y.npy", dir), &npy), ONNXRUN_OK);
	assert_tensors_equal(npy, want);
	onnxrun_tensor_free(got);
	onnxrun_tensor_free(want);
	onnxrun_tensor_free(npy);
	onnxrun_env_free(env);
}

/* Input files named after the inputs (.npy and .pb) are matched by name. */
static void test_inputs_by_name(void **state)
{
	const char *dir = fresh_dir("by_name");
	struct onnxrun_env *env = env_new();
	struct onnxrun_tensor *x = load_pb(env, CT_SET "/input_0.pb");
	struct run r;

	(void)state;
	assert_int_equal(onnxrun_tensor_save_npy(env, x, path_of("%s/X.npy", dir)), ONNXRUN_OK);
	copy_file(CT_SET "/input_1.pb", path_of("%s/W.pb", dir));
	copy_file(CT_SET "/output_0.pb", path_of("%s/output_0.pb", dir));
	onnxrun_tensor_free(x);
	onnxrun_env_free(env);
	RUN(&r, CT_MODEL, dir);
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^PASS output 'Y' \\(float \\[1,2,5,5\\]\\)"));
	run_free(&r);
	/* a file argument overrides the folder's file: a changed W makes the output FAIL */
	env = env_new();
	struct onnxrun_tensor *w = load_pb(env, CT_SET "/input_1.pb");
	((float *)onnxrun_tensor_data(w))[0] += 2.0f;
	assert_int_equal(onnxrun__os_mkdir(path_of("%s/alt", dir)), 0);
	assert_int_equal(onnxrun_tensor_save_pb(env, w, path_of("%s/alt/W.pb", dir)), ONNXRUN_OK);
	onnxrun_tensor_free(w);
	onnxrun_env_free(env);
	RUN(&r, CT_MODEL, dir, path_of("%s/alt/W.pb", dir));
	assert_int_equal(r.status, 1);
	assert_true(has_line_matching(r.out, "^FAIL output 'Y' \\(float \\[1,2,5,5\\]\\)"));
	run_free(&r);
}

static void test_random_with_dim(void **state)
{
	struct run a, b, c;

	(void)state;
	RUN(&a, SYM_MODEL, "--random");
	assert_error_run(&a, "'N'");
	run_free(&a);
	RUN(&a, SYM_MODEL, "--random", "--dim", "N=3");
	RUN(&b, SYM_MODEL, "--random=0", "--dim=N=3");
	RUN(&c, SYM_MODEL, "--random=12345", "--dim", "N=3");
	assert_int_equal(a.status, 0);
	assert_int_equal(count_lines(a.out), 1);
	assert_true(has_line_matching(a.out, "^output 'upscaled' \\(float \\[3,3,32,32\\]\\): \\[.*\\]"));
	assert_string_equal(a.out, b.out); /* deterministic, default seed 0 */
	assert_int_equal(c.status, 0);
	assert_string_not_equal(a.out, c.out); /* another seed, other values */
	run_free(&a);
	run_free(&b);
	run_free(&c);
}

/* ---- built models: float16, names with '/', strings ---- */

/* DepthToSpace(blocksize 2) on `in_name` [N,4,1,1] -> `out_name` [N,1,2,2] of `dtype`:
 * with H = W = 1 the output holds the input's values in the same order. */
static void write_d2s_model_opset(const char *path, int dtype, const char *in_name,
                                  const char *out_name, int64_t opset)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	uint8_t *bytes;
	size_t size;

	mb_opset(m, "", opset);
	mb_input(m, in_name, dtype, "N,4,1,1");
	mb_output(m, out_name, dtype, "N,1,2,2");
	n = mb_node(m, "d2s", "DepthToSpace", "", in_name, out_name);
	mb_attr_int(n, "blocksize", 2);
	bytes = mb_finish(m, &size);
	write_all(path, bytes, size);
	free(bytes);
}

static void write_d2s_model(const char *path, int dtype, const char *in_name, const char *out_name)
{
	write_d2s_model_opset(path, dtype, in_name, out_name, 13);
}

static void test_float16_compare_and_names(void **state)
{
	const char *dir = fresh_dir("f16");
	const char *model = path_of("%s/model.onnx", dir);
	struct onnxrun_env *env = env_new();
	const int64_t in_dims[4] = {1, 4, 1, 1}, out_dims[4] = {1, 1, 2, 2};
	/* 1, 0.5, -2, 3 and NaN; 0x4202 is 3.00390625 (relative error 1.3e-3) */
	const uint16_t x[4] = {0x3C00, 0x3800, 0xC000, 0x4200};
	const uint16_t nearby[4] = {0x3C00, 0x3800, 0xC000, 0x4202};
	struct run r;

	(void)state;
	write_d2s_model(model, MB_FLOAT16, "in/x", "out/y");
	save_pb(env, ONNXRUN_DTYPE_FLOAT16, 4, in_dims, x, "in/x", path_of("%s/in_x.pb", dir));
	save_pb(env, ONNXRUN_DTYPE_FLOAT16, 4, out_dims, nearby, "out/y", path_of("%s/output_0.pb", dir));
	RUN(&r, model, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "FAIL output 'out/y' (float16 [1,1,2,2]): max_abs=0.00391 "
	                              "max_rel=0.0013 at index [0,0,1,1]: expected 3.00390625 got 3 "));
	run_free(&r);
	RUN(&r, model, dir, "--rtol", "2e-3", "-o", path_of("%s/out", dir), "--npy");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "PASS output 'out/y' (float16 [1,1,2,2]): max_abs=0.00391"));
	run_free(&r);
	assert_int_equal(access(path_of("%s/out/out_y.npy", dir), R_OK), 0);
	struct onnxrun_tensor *y = load_pb(env, path_of("%s/out/output_0.pb", dir));
	assert_string_equal(onnxrun_tensor_name(y), "out/y");
	assert_memory_equal(onnxrun_tensor_data(y), x, sizeof x);
	onnxrun_tensor_free(y);
	onnxrun_env_free(env);
}

static void test_nan_compare(void **state)
{
	const char *dir = fresh_dir("nan");
	const char *model = path_of("%s/model.onnx", dir);
	struct onnxrun_env *env = env_new();
	const int64_t in_dims[4] = {1, 4, 1, 1}, out_dims[4] = {1, 1, 2, 2};
	const uint16_t x[4] = {0x7E00, 0x3800, 0x7C00, 0x0001};
	const uint16_t not_nan[4] = {0x3C00, 0x3800, 0x7C00, 0x0001};
	const uint16_t x3[4] = {0x7E00, 0x3800, 0x7C00, 0x0003};
	struct run r;

	(void)state;
	write_d2s_model(model, MB_FLOAT16, "x", "y");
	save_pb(env, ONNXRUN_DTYPE_FLOAT16, 4, in_dims, x, "x", path_of("%s/input_0.pb", dir));
	save_pb(env, ONNXRUN_DTYPE_FLOAT16, 4, out_dims, x, "y", path_of("%s/output_0.pb", dir));
	RUN(&r, model, dir);
	assert_int_equal(r.status, 0); /* NaN == NaN, inf == inf, subnormal exact */
	assert_non_null(strstr(r.out, "PASS output 'y' (float16 [1,1,2,2]): max_abs=0 max_rel=0\n"));
	run_free(&r);
	save_pb(env, ONNXRUN_DTYPE_FLOAT16, 4, out_dims, not_nan, "y", path_of("%s/output_0.pb", dir));
	RUN(&r, model, dir, "--atol", "100");
	assert_int_equal(r.status, 1); /* NaN never matches a number, whatever the tolerance */
	assert_non_null(strstr(r.out, "at index [0,0,0,0]: expected 1 got nan"));
	run_free(&r);
	/* subnormals: 3 * 2^-24 vs 2^-24 differ by 1.2e-7 > atol 1e-7 + rtol * 1.8e-7 */
	save_pb(env, ONNXRUN_DTYPE_FLOAT16, 4, out_dims, x3, "y", path_of("%s/output_0.pb", dir));
	RUN(&r, model, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "at index [0,0,1,1]: expected 1.78813934e-07 got 5.96046448e-08 "));
	run_free(&r);
	onnxrun_env_free(env);
}

/* A STRING tensor file with the given elements. */
static void save_strings(struct onnxrun_env *env, const int64_t *dims, const char *const *s,
                         const char *name, const char *path)
{
	struct onnxrun_tensor *t = NULL;

	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_STRING, 4, dims, &t), ONNXRUN_OK);
	for (int64_t i = 0; i < 4; i++)
		assert_int_equal(onnxrun_tensor_set_string(t, i, s[i], strlen(s[i])), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_set_name(t, name), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_save_pb(env, t, path), ONNXRUN_OK);
	onnxrun_tensor_free(t);
}

static void test_string_outputs(void **state)
{
	const char *dir = fresh_dir("str");
	const char *model = path_of("%s/model.onnx", dir);
	struct onnxrun_env *env = env_new();
	const int64_t in_dims[4] = {1, 4, 1, 1}, out_dims[4] = {1, 1, 2, 2};
	const char *const s[4] = {"a", "bb", "", "dddd"}, *const wrong[4] = {"a", "bc", "", "dddd"};
	struct run r;

	(void)state;
	write_d2s_model(model, MB_STRING, "s", "t");
	save_strings(env, in_dims, s, "s", path_of("%s/s.pb", dir));
	save_strings(env, out_dims, wrong, "t", path_of("%s/output_0.pb", dir));
	RUN(&r, model, dir);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "FAIL output 't' (string [1,1,2,2]): exact at index [0,0,0,1]: "
	                           "expected \"bc\" got \"bb\" (1 of 4 elements differ)\n");
	run_free(&r);
	save_strings(env, out_dims, s, "t", path_of("%s/output_0.pb", dir));
	RUN(&r, model, dir, "-o", path_of("%s/out", dir), "--npy");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "PASS output 't' (string [1,1,2,2]): exact\n");
	assert_true(has_line_matching(r.err, "^onnxrun: warning: output 't': string has no \\.npy form"));
	run_free(&r);
	struct onnxrun_tensor *t = load_pb(env, path_of("%s/out/output_0.pb", dir));
	const struct onnxrun_string *str = onnxrun_tensor_data(t);
	assert_int_equal(onnxrun_tensor_numel(t), 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(str[i].data, s[i]);
	onnxrun_tensor_free(t);
	onnxrun_env_free(env);
}

static void test_complex_compare(void **state)
{
	const char *dir = fresh_dir("complex");
	const char *model = path_of("%s/model.onnx", dir);
	struct onnxrun_env *env = env_new();
	const int64_t in_dims[4] = {1, 4, 1, 1}, out_dims[4] = {1, 1, 2, 2};
	const float x[8] = {1, 2, -3, 4.5f, 0, 0, 7, 8};
	const float off[8] = {1, 2, -3, 4.5f, 0, 0, 7, 8.5f};
	struct run r;

	(void)state;
	write_d2s_model(model, 14 /* COMPLEX64 */, "x", "y");
	save_pb(env, ONNXRUN_DTYPE_COMPLEX64, 4, in_dims, x, "x", path_of("%s/input_0.pb", dir));
	save_pb(env, ONNXRUN_DTYPE_COMPLEX64, 4, out_dims, off, "y", path_of("%s/output_0.pb", dir));
	onnxrun_env_free(env);
	RUN(&r, model, dir);
	assert_int_equal(r.status, 1); /* the imaginary part of element 3 differs */
	assert_string_equal(r.out, "FAIL output 'y' (complex64 [1,1,2,2]): max_abs=0.5 max_rel=0.0588 "
	                           "at index [0,0,1,1]: expected (7,8.5) got (7,8) (1 of 4 elements differ)\n");
	run_free(&r);
	RUN(&r, model, dir, "--atol", "0.5");
	assert_int_equal(r.status, 0);
	run_free(&r);
}

/* Warnings of the library's log callback reach stderr as "onnxrun: warning:". */
static void test_library_warning(void **state)
{
	const char *dir = fresh_dir("warning");
	const char *model = path_of("%s/model.onnx", dir);
	struct run r;

	(void)state;
	write_d2s_model_opset(model, MB_FLOAT, "x", "y", 99);
	RUN(&r, model, "--random", "--dim", "N=1", "--allow-newer-opset");
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.err, "^onnxrun: warning: .*opset 99 of ai\\.onnx.*"));
	assert_null(strstr(r.err, "error"));
	assert_true(has_line_matching(r.out, "^output 'y' \\(float \\[1,1,2,2\\]\\)"));
	run_free(&r);
}

/* The opset policy: a newer ai.onnx opset is an error naming it (exit 2) unless
 * --allow-newer-opset; --info and --dot follow the same rule. */
static void test_newer_opset_refused(void **state)
{
	const char *dir = fresh_dir("newer_opset");
	const char *model = path_of("%s/model.onnx", dir);
	struct run r;

	(void)state;
	write_d2s_model_opset(model, MB_FLOAT, "x", "y", 29);
	RUN(&r, model, "--random", "--dim", "N=1");
	assert_int_equal(r.status, 2);
	assert_true(has_line_matching(r.err, "^onnxrun: error: .*opset 29 of ai\\.onnx is newer than the newest "
	                                     "onnxrun knows \\(28\\).*--allow-newer-opset.*$"));
	assert_null(strstr(r.out, "output 'y'"));
	run_free(&r);
	RUN(&r, "--info", model);
	assert_int_equal(r.status, 2);
	run_free(&r);
	RUN(&r, "--info", "--allow-newer-opset", model);
	assert_int_equal(r.status, 0);
	assert_true(has_line_matching(r.out, "^opset: ai\\.onnx 29$"));
	run_free(&r);
}

/* --info prints the metadata fields a model sets (strings JSON-quoted) and skips the rest. */
static void test_info_metadata(void **state)
{
	const char *dir = fresh_dir("info_metadata");
	const char *model = path_of("%s/model.onnx", dir);
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	Onnx__StringStringEntryProto *e = mb__alloc(sizeof *e);
	uint8_t *bytes;
	size_t size;
	struct run r;

	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,1,1");
	mb_output(m, "y", MB_FLOAT, "1,1,2,2");
	n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
	mb_attr_int(n, "blocksize", 2);
	m->producer_version = mb__strdup("1.2");
	m->doc_string = mb__strdup("two\nlines");
	m->has_model_version = 1;
	m->model_version = 3;
	onnx__string_string_entry_proto__init(e);
	e->key = mb__strdup("license");
	e->value = mb__strdup("MIT \"x\"");
	MB__PUSH(m->metadata_props, m->n_metadata_props, e);
	bytes = mb_finish(m, &size);
	write_all(model, bytes, size);
	free(bytes);
	RUN(&r, "--info", model);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "ir_version: 8\nproducer_name: \"onnxrun-tests\"\nproducer_version: \"1.2\"\n"
	                              "model_version: 3\ndoc_string: \"two\\nlines\"\ngraph_name: \"g\"\n"
	                              "metadata: \"license\" = \"MIT \\\"x\\\"\"\nopset: ai.onnx 13\n"));
	assert_null(strstr(r.out, "domain:"));
	assert_null(strstr(r.out, "graph_doc_string:"));
	run_free(&r);
}

/* A file named after an initializer that is also a graph input (IR 3) overrides it. */
static void test_initializer_override(void **state)
{
	const char *dir = fresh_dir("override");
	struct onnxrun_env *env = env_new();
	const char *tc = ONNXRUN_TEST_DATA "/test_ConvTranspose2d";
	static float zeros[3 * 4 * 3 * 3];
	struct run r;

	(void)state;
	save_pb(env, ONNXRUN_DTYPE_FLOAT, 4, (const int64_t[]){3, 4, 3, 3}, zeros, "1",
	        path_of("%s/1.pb", dir));
	onnxrun_env_free(env);
	RUN(&r, path_of("%s/model.onnx", tc), path_of("%s/test_data_set_0", tc), path_of("%s/1.pb", dir));
	assert_int_equal(r.status, 1); /* zero weights: the output is the bias only */
	assert_true(has_line_matching(r.out, "^FAIL output '3' \\(float \\[1,4,20,12\\]\\): .*\\(960 of 960 elements differ\\)$"));
	run_free(&r);
}

static int setup(void **state)
{
	(void)state;
	remove_tree(TMP);
	return onnxrun__os_mkdir(TMP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance_cases_pass),
		cmocka_unit_test(test_example_models_pass),
		cmocka_unit_test(test_wrong_expected_fails),
		cmocka_unit_test(test_expected_shape_mismatch),
		cmocka_unit_test(test_missing_model),
		cmocka_unit_test(test_corrupt_model),
		cmocka_unit_test(test_missing_input),
		cmocka_unit_test(test_wrong_input_dtype),
		cmocka_unit_test(test_wrong_input_shape),
		cmocka_unit_test(test_unmatched_file),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_info_symbolic),
		cmocka_unit_test(test_info_metadata),
		cmocka_unit_test(test_newer_opset_refused),
		cmocka_unit_test(test_bench),
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_max_memory),
		cmocka_unit_test(test_no_mmap),
		cmocka_unit_test(test_output_dir),
		cmocka_unit_test(test_inputs_by_name),
		cmocka_unit_test(test_random_with_dim),
		cmocka_unit_test(test_float16_compare_and_names),
		cmocka_unit_test(test_nan_compare),
		cmocka_unit_test(test_string_outputs),
		cmocka_unit_test(test_complex_compare),
		cmocka_unit_test(test_library_warning),
		cmocka_unit_test(test_initializer_override),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
