/*
 * test_cli_timeout.c - stopping runs from the command line: `onnxrun --timeout S` (exit 2,
 * the node named), `onnxrun test --timeout S` (the slow case reported as an error "timeout
 * after S s", the next case still run), Ctrl-C (SIGINT) in both (exit 130, a clean report)
 * and the option's errors. The slow case is a 121 GFLOP ConvTranspose, written at test time
 * (about 23 MB), that no machine runs within the 0.05 s given to it. The child gets
 * SIGINT only once /proc says its handler is installed, so the test does not depend on
 * timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_spawn.h"
#include "model_builder.h"
#include "onnxrun.h"

#define TMP ONNXRUN_TEST_TMP "/cli_timeout"
#define SLOW TMP "/slow_case"
#define FAST ONNXRUN_TEST_DATA "/test_convtranspose"

struct run {
	int status; /* exit code, or -1 when it did not exit normally */
	char *out;
	char *err;
};

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	if (!f)
		return NULL;
	do {
		if (n + 4097 > cap) {
			cap = (n + 4097) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Starts onnxrun with args (NULL-terminated), stdout and stderr to files. */
static pid_t spawn_cli(const char *const *args)
{
	const char *argv[64];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int n = 0;
	argv[n++] = ONNXRUN_CLI_PATH;
	while (args[n - 1] && n < 63) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_addopen(&fa, 1, TMP "/stdout.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	posix_spawn_file_actions_addopen(&fa, 2, TMP "/stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	assert_int_equal(cli_spawn(&pid, &fa, argv), 0);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

static void finish(struct run *r, pid_t pid)
{
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	r->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
	r->out = read_all(TMP "/stdout.txt");
	r->err = read_all(TMP "/stderr.txt");
	assert_non_null(r->out);
	assert_non_null(r->err);
}

#define RUN(r, ...) finish((r), spawn_cli((const char *const[]){ __VA_ARGS__, NULL }))

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* The Ctrl-C tests need to know when onnxrun's SIGINT handler is in place. Under qemu-user
 * (cross builds) the process is the emulator, which catches every signal itself from its
 * start, so /proc cannot tell, and a SIGINT sent too early kills the run: they are skipped. */
static void skip_under_emulator(void)
{
#ifdef ONNXRUN_CLI_EMULATOR
	print_message("skipped: onnxrun runs under an emulator (%s)\n", ONNXRUN_CLI_EMULATOR);
	skip();
#endif
}

/* Waits until process pid catches SIGINT (its SigCgt mask in /proc has the bit). */
static void wait_for_handler(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "r");
		unsigned long long mask = 0;
		const struct timespec ms = { 0, 1000000 };
		assert_non_null(f);
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "SigCgt:", 7))
				mask = strtoull(line + 7, NULL, 16);
		fclose(f);
		if (mask & (1ull << (SIGINT - 1)))
			return;
		nanosleep(&ms, NULL);
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* TMP/slow_case: x [1,128,128,128] -> ConvTranspose 'slow' (W [128,128,15,15], pads 7) -> y
 * [1,128,128,128], 121 GFLOP, with test_data_set_0/input_0.pb and no expected output. */
static int make_slow_case(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_tensor *x;
	const int64_t wd[4] = { 128, 128, 15, 15 }, xd[4] = { 1, 128, 128, 128 };
	const size_t nw = 128 * 128 * 225;
	float *w = malloc(nw * sizeof *w);
	uint32_t seed = 5;
	Onnx__ModelProto *mp = mb_model(8);
	Onnx__NodeProto *n;
	size_t size;
	uint8_t *bytes;
	(void)state;
	nftw(TMP, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	assert_int_equal(mkdir(TMP, 0777), 0);
	assert_int_equal(mkdir(SLOW, 0777), 0);
	assert_int_equal(mkdir(SLOW "/test_data_set_0", 0777), 0);
	for (size_t i = 0; i < nw; i++) {
		seed = seed * 1664525u + 1013904223u;
		w[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
	}
	mb_opset(mp, "", 13);
	mb_input(mp, "x", MB_FLOAT, "1,128,128,128");
	mb_output(mp, "y", MB_FLOAT, "1,128,128,128");
	mb_initializer_f32(mp, "w", 4, wd, w);
	n = mb_node(mp, "slow", "ConvTranspose", NULL, "x,w", "y");
	mb_attr_ints(n, "pads", MB_INTS(7, 7, 7, 7));
	bytes = mb_finish(mp, &size);
	assert_int_equal(mb_write_file(SLOW "/model.onnx", bytes, size), 0);
	free(bytes);
	free(w);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_set_name(x, "x"), ONNXRUN_OK);
	for (int64_t i = 0; i < onnxrun_tensor_numel(x); i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)(i % 13) / 13.0f;
	assert_int_equal(onnxrun_tensor_save_pb(env, x, SLOW "/test_data_set_0/input_0.pb"), ONNXRUN_OK);
	onnxrun_tensor_free(x);
	onnxrun_env_free(env);
	return 0;
}

static int remove_slow_case(void **state)
{
	(void)state;
	nftw(TMP, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void test_timeout(void **state)
{
	struct run r;
	const char *want = "onnxrun: error: --timeout: node 'slow' (ConvTranspose): deadline of 0.05 s exceeded "
	                   "(onnxrun_session_set_deadline): run stopped";
	(void)state;
	/* a process descheduled for 50 ms before its first node stops before it (no node
	 * named): retried, up to 5 runs */
	for (int attempt = 1;; attempt++) {
		RUN(&r, SLOW "/model.onnx", SLOW "/test_data_set_0", "--threads", "1", "--timeout", "0.05");
		if (attempt == 5 || r.status != 2 ||
		    (!strstr(r.err, "run stopped before it started") && !strstr(r.err, "run stopped while preparing")))
			break;
		print_message("run %d: %s (descheduled before the first node; retried)\n", attempt, r.err);
		run_free(&r);
	}
	if (r.status != 2 || strncmp(r.err, want, strlen(want)))
		fail_msg("status %d, stderr: %s", r.status, r.err);
	/* the message says where the time before the run went */
	if (!strstr(r.err, " (before the run: load ") || !strstr(r.err, " s, inputs ") || !strstr(r.err, " s, session "))
		fail_msg("no time before the run in: %s", r.err);
	assert_string_equal(r.out, "");
	run_free(&r);
	/* a timeout that is not reached changes nothing */
	RUN(&r, FAST "/model.onnx", FAST "/test_data_set_0", "--timeout", "600");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "PASS output"));
	run_free(&r);
}

static void test_timeout_option_errors(void **state)
{
	static const char *const bad[] = { "0", "-1", "abc", "1e9", "nan", "" };
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct run r;
		char want[128];
		snprintf(want, sizeof want,
		         "onnxrun: error: --timeout needs a number of seconds > 0 and at most 86400, not '%s'\n", bad[i]);
		RUN(&r, FAST "/model.onnx", "--timeout", bad[i]);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, want);
		run_free(&r);
		RUN(&r, "test", "--timeout", bad[i], FAST);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, want);
		run_free(&r);
	}
}

/* The slow case times out and is an error with "timeout after 0.05 s"; the fast case after
 * it still runs and passes; exit 1. */
static void test_test_timeout(void **state)
{
	struct run r;
	char *json;
	(void)state;
	RUN(&r, "test", "--threads", "1", "--timeout", "0.05", "--json", TMP "/report.json", SLOW, FAST);
	if (r.status != 1 || !strstr(r.out, "1 passed, 0 failed, 1 errors"))
		fail_msg("status %d, stdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	/* the case's time includes loading, so it may be up before the run starts ("timeout
	 * after 0.05 s") or in it ("timeout after 0.05 s (in node 'slow' (ConvTranspose))") */
	if (!strstr(r.out, "slow_case [test_data_set_0]: timeout after 0.05 s"))
		fail_msg("stdout:\n%s", r.out);
	json = read_all(TMP "/report.json");
	assert_non_null(json);
	assert_non_null(strstr(json, "timeout after 0.05 s"));
	free(json);
	run_free(&r);
}

/* Ctrl-C during the run: "onnxrun: interrupted: ..." naming the node, exit 130. */
static void test_ctrl_c(void **state)
{
	struct run r;
	pid_t pid;
	(void)state;
	skip_under_emulator();
	pid = spawn_cli((const char *const[]){ SLOW "/model.onnx", SLOW "/test_data_set_0", "--threads", "1", NULL });
	wait_for_handler(pid);
	assert_int_equal(kill(pid, SIGINT), 0);
	finish(&r, pid);
	if (r.status != 130 || strncmp(r.err, "onnxrun: interrupted: ", 22) || !strstr(r.err, "run cancelled"))
		fail_msg("status %d, stderr: %s", r.status, r.err);
	assert_string_equal(r.out, "");
	run_free(&r);
}

/* Ctrl-C in `onnxrun test`: the case being run is an error "interrupted (Ctrl-C)", the next
 * is not run, the summary is still printed; exit 130. */
static void test_test_ctrl_c(void **state)
{
	struct run r;
	pid_t pid;
	(void)state;
	skip_under_emulator();
	pid = spawn_cli((const char *const[]){ "test", "--threads", "1", SLOW, FAST, NULL });
	wait_for_handler(pid);
	assert_int_equal(kill(pid, SIGINT), 0);
	finish(&r, pid);
	if (r.status != 130 || !strstr(r.out, "interrupted (Ctrl-C)") || !strstr(r.out, "0 passed"))
		fail_msg("status %d, stdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_timeout_option_errors),
		cmocka_unit_test(test_test_timeout),
		cmocka_unit_test(test_ctrl_c),
		cmocka_unit_test(test_test_ctrl_c),
	};
	return cmocka_run_group_tests(tests, make_slow_case, remove_slow_case);
}
