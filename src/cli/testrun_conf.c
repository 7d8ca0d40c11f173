/*
 * testrun_conf.c - per-folder settings of "onnxrun test": onnxrun-test.conf files.
 *
 * A file holds "key = value" lines; blank lines and lines whose first non-blank character
 * is '#' are ignored. Keys:
 *   rtol = X     relative tolerance of the comparisons (finite, >= 0)
 *   atol = X     absolute tolerance
 *   skip = TEXT  skip the case; TEXT is the reason reported
 * The files of the case folder and of every folder above it apply, from the outermost
 * (the filesystem root) to the case folder, so a nearer file overrides a farther one. Their
 * values override --rtol/--atol, which only set the defaults.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testrun.h"

/* Settings gathered for one case. */
struct conf {
	double rtol;
	double atol;
	char *skip; /* heap reason, NULL if not skipped */
	char *error; /* heap message of the first problem */
};

/* Strips leading and trailing blanks in place; returns the start. */
static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* Parses a tolerance value; returns 0 when it is not a finite number >= 0. */
static int parse_number(const char *s, double *out)
{
	char *end;

	errno = 0;
	double v = strtod(s, &end);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < 0)
		return 0;
	*out = v;
	return 1;
}

/* Applies one "key = value" line (trimmed, not a comment) of file:line to cf. */
static void apply_line(struct conf *cf, const char *file, long line, char *text)
{
	char *eq = strchr(text, '=');

	if (eq == NULL) {
		cf->error = cli_format("%s:%ld: expected 'key = value', got '%s'", file, line, text);
		return;
	}
	*eq = '\0';
	char *key = trim(text), *value = trim(eq + 1);
	if (strcmp(key, "rtol") == 0 || strcmp(key, "atol") == 0) {
		if (!parse_number(value, strcmp(key, "rtol") == 0 ? &cf->rtol : &cf->atol))
			cf->error = cli_format("%s:%ld: %s needs a finite number >= 0, not '%s'", file,
			                       line, key, value);
	} else if (strcmp(key, "skip") == 0) {
		free(cf->skip);
		cf->skip = value[0] != '\0' ? cli_strdup(value) : cli_format("skipped by %s", file);
	} else {
		cf->error = cli_format("%s:%ld: unknown setting '%s' (rtol, atol or skip)", file,
		                       line, key);
	}
}

/* Reads one settings file into cf. */
static void read_file(struct conf *cf, const char *file)
{
	FILE *f = fopen(file, "r");
	char *buf = NULL;
	size_t cap = 0;
	long line = 0;

	if (f == NULL) {
		cf->error = cli_format("cannot open '%s': %s", file, strerror(errno));
		return;
	}
	while (cf->error == NULL && cli_getline(&buf, &cap, f) >= 0) {
		char *text = trim(buf);
		line++;
		if (text[0] != '\0' && text[0] != '#')
			apply_line(cf, file, line, text);
	}
	if (cf->error == NULL && ferror(f))
		cf->error = cli_format("cannot read '%s'", file);
	free(buf);
	fclose(f);
}

/* Applies the settings file of folder dir[0..len) if there is one. */
static void visit_folder(struct conf *cf, const char *dir, size_t len)
{
	char *file = cli_format("%.*s/%s", (int)len, dir, TR_CONF_NAME);

	if (file == NULL) {
		cf->error = cli_strdup("out of memory");
		return;
	}
	if (cli_is_file(file))
		read_file(cf, file);
	free(file);
}

/*
 * Applies the settings files that concern case c: sets c->rtol and c->atol, and
 * *skip_reason (heap) when the case is to be skipped. On a bad file returns CLI_ERROR with
 * *error (heap) naming file and line.
 */
int tr_conf_apply(struct tr_case *c, char **skip_reason, char **error)
{
	struct conf cf = {c->rtol, c->atol, NULL, NULL};
	char *abs = onnxrun__os_realpath(c->dir);

	*skip_reason = NULL;
	*error = NULL;
	if (abs == NULL) {
		*error = cli_format("cannot resolve folder '%s': %s", c->dir, strerror(errno));
		return CLI_ERROR;
	}
	/* the root, then each folder down to c->dir; a Windows drive's root is "C:\\" */
	if (onnxrun__os_is_sep(abs[0]))
		visit_folder(&cf, "", 0);
	for (size_t i = 1; abs[i - 1] != '\0' && cf.error == NULL; i++) {
		if (onnxrun__os_is_sep(abs[i]) || (abs[i] == '\0' && !onnxrun__os_is_sep(abs[i - 1])))
			visit_folder(&cf, abs, abs[i - 1] == ':' && abs[i] != '\0' ? i + 1 : i);
	}
	free(abs);
	if (cf.error != NULL) {
		free(cf.skip);
		*error = cf.error;
		return CLI_ERROR;
	}
	c->rtol = cf.rtol;
	c->atol = cf.atol;
	*skip_reason = cf.skip;
	return CLI_OK;
}
