/*
 * cli_spawn.h - starts the onnxrun binary (ONNXRUN_CLI_PATH) for the CLI tests. A
 * cross-compiled build runs it through the emulator CMake was given
 * (CMAKE_CROSSCOMPILING_EMULATOR, e.g. "/usr/bin/qemu-s390x -L /"): the tests themselves run
 * under that emulator, which cannot start a foreign binary on its own when the host has no
 * binfmt_misc handler for it. ONNXRUN_CLI_EMULATOR is that command line, its words separated
 * by single spaces, the first an absolute path.
 */
#ifndef ONNXRUN_TESTS_CLI_SPAWN_H
#define ONNXRUN_TESTS_CLI_SPAWN_H

#include <spawn.h>
#include <string.h>
#include <sys/types.h>

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

#endif
