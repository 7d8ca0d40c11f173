/*
 * tree_files.h - removes and copies folder trees for the CLI tests on Windows, through the
 * platform layer (src/platform). On POSIX the tests keep nftw and rm/cp, which never follow
 * a symbolic link (test_cli_test makes a link loop); these walks would, so they are only
 * for Windows, where the tests make no links.
 */
#ifndef ONNXRUN_TESTS_TREE_FILES_H
#define ONNXRUN_TESTS_TREE_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

/* rm -rf path: 0 when it no longer exists. */
static inline int tree_remove(const char *path)
{
	char **names = NULL;
	int n;

	if (!onnxrun__os_is_dir(path))
		return remove(path) == 0 || onnxrun__os_stat(path, NULL) < 0 ? 0 : -1;
	n = onnxrun__os_list_dir(path, &names);
	for (int i = 0; i < n; i++) {
		char sub[1024];
		snprintf(sub, sizeof sub, "%s/%s", path, names[i]);
		tree_remove(sub);
		free(names[i]);
	}
	free(names);
	return RemoveDirectoryA(path) ? 0 : -1;
}

/* cp -R from to (to must not exist): 0 on success. */
static inline int tree_copy(const char *from, const char *to)
{
	char **names = NULL;
	int n, rc = 0;

	if (!onnxrun__os_is_dir(from)) {
		FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
		char buf[65536];
		size_t got;
		if (out == NULL) {
			if (in)
				fclose(in);
			return -1;
		}
		while ((got = fread(buf, 1, sizeof buf, in)) > 0)
			if (fwrite(buf, 1, got, out) != got)
				rc = -1;
		fclose(in);
		return fclose(out) == 0 ? rc : -1;
	}
	if (onnxrun__os_mkdir(to) != 0 || (n = onnxrun__os_list_dir(from, &names)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char a[1024], b[1024];
		snprintf(a, sizeof a, "%s/%s", from, names[i]);
		snprintf(b, sizeof b, "%s/%s", to, names[i]);
		if (tree_copy(a, b) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}
#endif

#endif
