/*
 * cli_spawn.h - starts the onnxrun binary (ONNXRUN_CLI_PATH) for the CLI tests. A
 * cross-compiled build runs it through the emulator CMake was given
 * (CMAKE_CROSSCOMPILING_EMULATOR, e.g. "/usr/bin/qemu-s390x -L /"): the tests themselves run
 * under that emulator, which cannot start a foreign binary on its own when the host has no
 * binfmt_misc handler for it. ONNXRUN_CLI_EMULATOR is that command line, its words separated
 * by single spaces, the first an absolute path.
 *
 * cli_run_files is the same on every platform: it runs onnxrun with its stdout and stderr
 * written to two files and returns the exit status. cli_spawn (POSIX only) is for tests
 * that need other file actions, such as a terminal.
 */
#ifndef ONNXRUN_TESTS_CLI_SPAWN_H
#define ONNXRUN_TESTS_CLI_SPAWN_H

#include <string.h>

#ifdef _WIN32
/* Windows (the tests run under wine or natively): CreateProcess starts onnxrun.exe directly;
 * no emulator is involved. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

/* Appends arg to cmd (size cap) quoted for the C runtime's command-line parser: inside
 * quotes, backslashes are literal unless they precede a quote. */
static inline void cli_quote_arg(char *cmd, size_t cap, size_t *n, const char *arg)
{
	size_t slashes = 0;
	if (*n + 4 >= cap)
		return;
	if (*n)
		cmd[(*n)++] = ' ';
	cmd[(*n)++] = '"';
	for (const char *p = arg; *p && *n + 2 * slashes + 8 < cap; p++) {
		if (*p == '\\') {
			slashes++;
			continue;
		}
		/* backslashes before a quote are doubled and the quote escaped; elsewhere literal */
		for (size_t k = *p == '"' ? 2 * slashes + 1 : slashes; k; k--)
			cmd[(*n)++] = '\\';
		slashes = 0;
		cmd[(*n)++] = *p;
	}
	for (size_t k = 2 * slashes; k; k--) /* doubled before the closing quote */
		cmd[(*n)++] = '\\';
	cmd[(*n)++] = '"';
	cmd[*n] = '\0';
}

/* Runs onnxrun with argv (argv[0] is ignored; NULL-terminated), its stdout and stderr
 * written to the files out and err (created or truncated). Returns its exit status, -1 when
 * it cannot be started. */
static inline int cli_run_files(const char *const *argv, const char *out, const char *err)
{
	static char cmd[16384];
	SECURITY_ATTRIBUTES sa = { sizeof sa, NULL, TRUE }; /* inherited by the child */
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	DWORD code = (DWORD)-1;
	size_t n = 0;
	HANDLE ho, he;
	cmd[0] = '\0';
	cli_quote_arg(cmd, sizeof cmd, &n, ONNXRUN_CLI_PATH);
	for (size_t i = 1; argv[i]; i++)
		cli_quote_arg(cmd, sizeof cmd, &n, argv[i]);
	ho = CreateFileA(out, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, CREATE_ALWAYS,
	                 FILE_ATTRIBUTE_NORMAL, NULL);
	he = CreateFileA(err, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, CREATE_ALWAYS,
	                 FILE_ATTRIBUTE_NORMAL, NULL);
	memset(&si, 0, sizeof si);
	si.cb = sizeof si;
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdOutput = ho;
	si.hStdError = he;
	if (ho != INVALID_HANDLE_VALUE && he != INVALID_HANDLE_VALUE &&
	    CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
		WaitForSingleObject(pi.hProcess, INFINITE);
		if (!GetExitCodeProcess(pi.hProcess, &code))
			code = (DWORD)-1;
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
	}
	if (ho != INVALID_HANDLE_VALUE)
		CloseHandle(ho);
	if (he != INVALID_HANDLE_VALUE)
		CloseHandle(he);
	return (int)code;
}

#else
#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>

/* posix_spawn of onnxrun with argv (argv[0] is ignored; NULL-terminated, at most 60
 * entries), the file actions fa and an empty environment. Returns posix_spawn's result. */
static inline int cli_spawn(pid_t *pid, const posix_spawn_file_actions_t *fa, const char *const *argv)
{
	const char *full[72];
	size_t n = 0;
#ifdef ONNXRUN_CLI_EMULATOR
	static char words[] = ONNXRUN_CLI_EMULATOR;
	static const char *emu[8];
	static size_t n_emu;
	if (!n_emu)
		for (char *w = strtok(words, " "); w && n_emu < 8; w = strtok(NULL, " "))
			emu[n_emu++] = w;
	for (size_t i = 0; i < n_emu; i++)
		full[n++] = emu[i];
#endif
	full[n++] = ONNXRUN_CLI_PATH;
	for (size_t i = 1; argv[i] && n < 71; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	return posix_spawn(pid, full[0], fa, NULL, (char *const *)full, NULL);
}

/* Runs onnxrun with argv (argv[0] is ignored; NULL-terminated), its stdout and stderr
 * written to the files out and err (created or truncated). Returns its exit status, -1 when
 * it cannot be started or does not exit normally. */
static inline int cli_run_files(const char *const *argv, const char *out, const char *err)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int wst, started;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	started = cli_spawn(&pid, &fa, argv) == 0;
	posix_spawn_file_actions_destroy(&fa);
	if (!started || waitpid(pid, &wst, 0) != pid)
		return -1;
	return WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
}
#endif

#endif
