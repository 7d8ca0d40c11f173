/*
 * testrun_find.c - finds the cases of "onnxrun test" under its PATH arguments.
 *
 * A PATH is a model file (its folder's test_data_set_* are its data sets), a case folder
 * (one holding model.onnx), or any other folder, searched recursively for case folders.
 * The search visits entries in natural order (digit runs compare by value, otherwise byte
 * order), skips names starting with '.', does not look inside case folders, follows
 * symbolic links but enters each folder only once (by device and inode), which also
 * guards against loops, and stops MAX_DEPTH levels down.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testrun.h"

#define MAX_DEPTH 64

/* Folders and model files already taken, by identity. */
struct seen {
	struct onnxrun__os_file_id *ids;
	size_t count, cap;
};

/* Records st's file; returns 1 if new, 0 if seen before, -1 when out of memory. */
static int first_visit(struct seen *seen, const struct onnxrun__os_file_id *st)
{
	for (size_t i = 0; i < seen->count; i++) {
		if (seen->ids[i].dev == st->dev && seen->ids[i].ino == st->ino)
			return 0;
	}
	if (seen->count == seen->cap) {
		size_t cap = seen->cap ? 2 * seen->cap : 64;
		void *grown = realloc(seen->ids, cap * sizeof *seen->ids);
		if (grown == NULL) {
			cli_error("out of memory");
			return -1;
		}
		seen->ids = grown;
		seen->cap = cap;
	}
	seen->ids[seen->count] = *st;
	seen->count++;
	return 1;
}

/* Natural order of two names: digit runs by numeric value, the rest bytewise. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a != '\0' && *b != '\0') {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *ea = a, *eb = b;
			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			for (ea = a; *ea >= '0' && *ea <= '9'; ea++) {}
			for (eb = b; *eb >= '0' && *eb <= '9'; eb++) {}
			if (ea - a != eb - b)
				return ea - a < eb - b ? -1 : 1;
			int c = strncmp(a, b, (size_t)(ea - a));
			if (c != 0)
				return c;
			a = ea;
			b = eb;
		} else if (*a != *b) {
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		} else {
			a++;
			b++;
		}
	}
	return (*a != '\0') - (*b != '\0');
}

static int entry_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int c = natural_cmp(x, y);

	return c != 0 ? c : strcmp(x, y);
}

/* The entries of dir not starting with '.', in natural order (the caller frees each name
 * and the list). Returns the count, -1 on failure (errno set). */
static int list_dir(const char *dir, char ***list)
{
	int n = onnxrun__os_list_dir(dir, list), kept = 0;

	for (int i = 0; i < n; i++) {
		if ((*list)[i][0] == '.')
			free((*list)[i]);
		else
			(*list)[kept++] = (*list)[i];
	}
	if (kept > 1)
		qsort(*list, (size_t)kept, sizeof **list, entry_cmp);
	return n < 0 ? n : kept;
}

static void free_list(char **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Fills c->set_paths with the test_data_set_* folders of c->dir. */
static int find_sets(struct tr_case *c)
{
	char **list;
	int n = list_dir(c->dir, &list), rc = CLI_OK;

	if (n < 0) {
		cli_error("cannot read folder '%s': %s", c->dir, strerror(errno));
		return CLI_ERROR;
	}
	c->set_paths = cli_calloc((size_t)n, sizeof *c->set_paths);
	for (int i = 0; i < n && c->set_paths != NULL && rc == CLI_OK; i++) {
		if (strncmp(list[i], TR_SET_PREFIX, strlen(TR_SET_PREFIX)) != 0)
			continue;
		char *path = cli_path_join(c->dir, list[i]);
		if (path == NULL)
			rc = CLI_ERROR;
		else if (!cli_is_dir(path))
			free(path);
		else
			c->set_paths[c->set_total++] = path;
	}
	free_list(list, n);
	return c->set_paths == NULL ? CLI_ERROR : rc;
}

/* The last component of a path (trailing slashes ignored), as a heap string. */
static char *last_component(const char *path)
{
	size_t end = strlen(path);

	while (end > 1 && path[end - 1] == '/')
		end--;
	size_t start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	char *s = cli_calloc(end - start + 1, 1);
	if (s != NULL)
		memcpy(s, path + start, end - start);
	return s;
}

/* The folder of a file path ("." when it has none), as a heap string. */
static char *parent_of(const char *file)
{
	const char *slash = strrchr(file, '/');

	if (slash == NULL)
		return cli_strdup(".");
	size_t len = slash == file ? 1 : (size_t)(slash - file);
	char *s = cli_calloc(len + 1, 1);
	if (s != NULL)
		memcpy(s, file, len);
	return s;
}

/* Appends a case: reported as `path`, model file `model` (heap, taken over), data sets in
 * `dir` (heap, taken over). */
static int add_case(struct tr_run *run, const struct tr_options *opts, const char *path,
                    char *model, char *dir)
{
	if (run->count == run->cap) {
		size_t cap = run->cap ? 2 * run->cap : 32;
		struct tr_case *grown = realloc(run->cases, cap * sizeof *grown);
		if (grown == NULL) {
			free(model);
			free(dir);
			cli_error("out of memory");
			return CLI_ERROR;
		}
		run->cases = grown;
		run->cap = cap;
	}
	struct tr_case *c = &run->cases[run->count++];
	memset(c, 0, sizeof *c);
	c->model = model;
	c->dir = dir;
	c->path = cli_strdup(path);
	c->name = last_component(path);
	c->rtol = opts->rtol;
	c->atol = opts->atol;
	if (model == NULL || dir == NULL || c->path == NULL || c->name == NULL)
		return CLI_ERROR;
	return find_sets(c);
}

/* Searches folder `dir` (already marked seen) for cases, `depth` levels below a PATH. */
static int walk(struct tr_run *run, const struct tr_options *opts, struct seen *seen,
                const char *dir, int depth)
{
	char *model = cli_path_join(dir, "model.onnx");
	char **list;
	int n, rc = CLI_OK;

	if (model == NULL)
		return CLI_ERROR;
	if (cli_is_file(model))
		return add_case(run, opts, dir, model, cli_strdup(dir));
	free(model);
	if (depth >= MAX_DEPTH)
		return CLI_OK;
	n = list_dir(dir, &list);
	if (n < 0) {
		cli_warning("cannot read folder '%s': %s", dir, strerror(errno));
		return depth == 0 ? CLI_ERROR : CLI_OK;
	}
	for (int i = 0; i < n && rc == CLI_OK; i++) {
		char *path = cli_path_join(dir, list[i]);
		struct onnxrun__os_file_id st;
		int fresh = 0;
		if (path == NULL)
			rc = CLI_ERROR;
		else if (onnxrun__os_stat(path, &st) == ONNXRUN__OS_DIR && (fresh = first_visit(seen, &st)) < 0)
			rc = CLI_ERROR;
		else if (fresh > 0)
			rc = walk(run, opts, seen, path, depth + 1);
		free(path);
	}
	free_list(list, n);
	return rc;
}

/* Adds the case(s) of one PATH argument; a PATH without any case is an error. */
static int add_path(struct tr_run *run, const struct tr_options *opts, struct seen *seen,
                    const char *path)
{
	struct onnxrun__os_file_id st;
	size_t before = run->count;
	int fresh, kind = onnxrun__os_stat(path, &st);

	if (kind < 0) {
		cli_error("cannot open '%s': %s", path, strerror(errno));
		return CLI_ERROR;
	}
	if ((fresh = first_visit(seen, &st)) < 0)
		return CLI_ERROR;
	if (fresh == 0)
		return CLI_OK;
	if (kind == ONNXRUN__OS_REGULAR)
		return add_case(run, opts, path, cli_strdup(path), parent_of(path));
	if (kind != ONNXRUN__OS_DIR) {
		cli_error("'%s' is neither a model file nor a folder", path);
		return CLI_ERROR;
	}
	if (walk(run, opts, seen, path, 0) != CLI_OK)
		return CLI_ERROR;
	if (run->count == before) {
		cli_error("no test cases (folders holding model.onnx) found in '%s'", path);
		return CLI_ERROR;
	}
	return CLI_OK;
}

/*
 * Finds the cases of every PATH in order into run (zeroed first). Reports errors itself;
 * call tr_run_free either way.
 */
int tr_find_cases(const struct tr_options *opts, struct tr_run *run)
{
	struct seen seen = {NULL, 0, 0};
	int rc = CLI_OK;

	memset(run, 0, sizeof *run);
	for (size_t i = 0; i < opts->path_count && rc == CLI_OK; i++)
		rc = add_path(run, opts, &seen, opts->paths[i]);
	free(seen.ids);
	return rc;
}

/* Frees one case's results. */
static void free_case(struct tr_case *c)
{
	for (size_t i = 0; i < c->set_total; i++)
		free(c->set_paths[i]);
	for (size_t i = 0; i < c->set_count; i++) {
		for (size_t k = 0; k < c->sets[i].output_count; k++)
			free(c->sets[i].outputs[k].name);
		free(c->sets[i].outputs);
		free(c->sets[i].name);
		free(c->sets[i].message);
	}
	free(c->set_paths);
	free(c->sets);
	free(c->path);
	free(c->name);
	free(c->model);
	free(c->dir);
	free(c->message);
	cli_unsupported_free(c->ops, c->op_count);
}

void tr_run_free(struct tr_run *run)
{
	for (size_t i = 0; i < run->count; i++)
		free_case(&run->cases[i]);
	free(run->cases);
	memset(run, 0, sizeof *run);
}
