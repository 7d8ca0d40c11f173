/*
 * test_cli_test.c - "onnxrun test": runs the binary (ONNXRUN_CLI_PATH) through cli_spawn.h on a
 * tree of cases built in ONNXRUN_TEST_TMP (passing copies of tests/data and models, a wrong
 * expected output, a truncated model, an unsupported op, a missing input, two data sets,
 * onnxrun-test.conf files, a name full of XML specials, a symlink loop), and checks each
 * classification, the summary, exit codes, --fail-fast, --unsupported, and the JUnit XML
 * (with a strict well-formedness checker written here) and JSON reports; and a model with
 * 500 distinct unsupported ops, every one of which must be listed. Output lines are matched
 * with line_match.h. On Windows the symbolic link loop and the terminal test are left out
 * and the odd name keeps only the specials a Windows file name may hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <cmocka.h>

#include "cli_spawn.h"
#include "line_match.h"
#include "platform/platform.h"
#include "tree_files.h"
#include "onnxrun.h"
#include "model_builder.h"

#define TMP ONNXRUN_TEST_TMP "/cli_test"
#define TREE TMP "/tree"
#define CT ONNXRUN_TEST_DATA "/test_convtranspose"
/* A case folder name with XML/JSON specials and a control character; ODD_SHOWN is how the
 * CLI writes it (the control character as \x01), ODD_JSON as a JSON string's contents.
 * Windows file names cannot hold < > " or control characters: there only & and ' are left. */
#ifdef _WIN32
#define ODD_NAME "odd &'name"
#define ODD_SHOWN ODD_NAME
#define ODD_JSON ODD_NAME
#else
#define ODD_NAME "odd <&>\"'\x01name"
#define ODD_SHOWN "odd <&>\"'\\x01name"
#define ODD_JSON "odd <&>\\\"'\\u0001name"
#endif

/* Exit status and captured output of one run. */
struct run {
	int status;
	char *out;
	char *err;
};

/* ---- files and runs ---- */

/* A whole file as a NUL-terminated heap string, or NULL; *size optional. */
static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	if (size != NULL)
		*size = (size_t)n;
	return buf;
}

static void spit(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

#define spit_text(path, text) spit((path), (text), strlen(text))

/* printf into a rotating set of static buffers (valid for the next 15 calls). */
static const char *fmt(const char *format, ...)
{
	static char bufs[16][1024];
	static int next;
	char *b = bufs[next++ % 16];
	va_list ap;

	va_start(ap, format);
	vsnprintf(b, sizeof bufs[0], format, ap);
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

/* rm -rf path (tree_files.h) */
static void rm_tree(const char *path)
{
	assert_int_equal(tree_remove(path), 0);
}

/* Copies folder `from` to the new folder `to` (cp -R; tree_files.h). */
static void copy_tree(const char *from, const char *to)
{
	assert_int_equal(tree_copy(from, to), 0);
}
#else
/* Runs program `path` with argv, stdout and stderr into TMP/out.txt and TMP/err.txt;
 * returns the exit status (-1 when it did not exit). */
static int spawn_wait(const char *path, const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int wst;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_addopen(&fa, 1, TMP "/out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	posix_spawn_file_actions_addopen(&fa, 2, TMP "/err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	assert_int_equal(posix_spawn(&pid, path, &fa, NULL, (char *const *)argv, NULL), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	return WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
}

/* rm -rf path (never following the tree's symbolic link loop) */
static void rm_tree(const char *path)
{
	assert_int_equal(spawn_wait("/bin/rm", (const char *const[]){"rm", "-rf", path, NULL}), 0);
}

/* Copies folder `from` to the new folder `to` (cp -R). */
static void copy_tree(const char *from, const char *to)
{
	assert_int_equal(spawn_wait("/bin/cp", (const char *const[]){"cp", "-R", from, to, NULL}), 0);
}
#endif

/* Runs onnxrun with the NULL-terminated arguments; captures stdout and stderr. */
static void run_cli(struct run *r, const char *const *args)
{
	const char *argv[32] = {ONNXRUN_CLI_PATH};
	size_t n = 1;

	for (; args[n - 1] != NULL && n < 31; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	r->status = cli_run_files(argv, TMP "/out.txt", TMP "/err.txt");
	r->out = slurp(TMP "/out.txt", NULL);
	r->err = slurp(TMP "/err.txt", NULL);
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

/* Whether some line of text matches the pattern (line_match.h). */
static int has_line(const char *text, const char *re)
{
	int found = line_match_any(text, re);

	if (found < 0)
		fail_msg("invalid pattern '%s'", re);
	return found;
}

/* The last line of text (without its newline), in a static buffer. */
static const char *last_line(const char *text)
{
	static char line[512];
	size_t n = strlen(text);

	while (n > 0 && text[n - 1] == '\n')
		n--;
	size_t start = n;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	snprintf(line, sizeof line, "%.*s", (int)(n - start), text + start);
	return line;
}

/* The table row of case `path` (the line starting with it and two spaces), or NULL. */
static const char *row_of(const char *out, const char *path)
{
	static char row[512];
	size_t len = strlen(path);

	for (const char *p = out; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, path, len) == 0 && strncmp(p + len, "  ", 2) == 0) {
			const char *end = strchr(p, '\n');
			snprintf(row, sizeof row, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
			return row;
		}
	}
	return NULL;
}

/* Checks that the row of case `name` (under TREE) has the result and data set counts. */
static void assert_row(const char *out, const char *name, const char *result, const char *sets)
{
	const char *row = row_of(out, fmt("%s/%s", TREE, name));

	if (row == NULL)
		fail_msg("no row for %s in:\n%s", name, out);
	if (!has_line(row, fmt("^[^ ].*  %s +%s +[0-9]+\\.[0-9][0-9]$", result, sets)))
		fail_msg("row '%s' does not say %s %s", row, result, sets);
}

/* ---- the tree of cases ---- */

/* Rewrites dir/output_0.pb with element `at` increased by 1 (a float tensor). */
static void spoil_output(const char *set_dir, int64_t at)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_tensor *t = NULL;
	const char *path = fmt("%s/output_0.pb", set_dir);

	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, path, &t), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_dtype(t), ONNXRUN_DTYPE_FLOAT);
	((float *)onnxrun_tensor_data(t))[at] += 1.0f;
	assert_int_equal(onnxrun_tensor_save_pb(env, t, path), ONNXRUN_OK);
	onnxrun_tensor_free(t);
	onnxrun_env_free(env);
}

/* Builds TREE (see the file comment); cases in natural order:
 *   bad_input error, badconf error, broken error, deep/nested/skipped skipped, good pass,
 *   good_d2s pass, loose pass, mismatch fail, ODD_NAME fail, two_sets pass (2 sets),
 *   two_sets_one_bad fail (1 of 2), unsupported unsupported; plus empty/ and loop -> ..  */
static void build_tree(void)
{
	size_t size;
	char *bytes;

	rm_tree(TREE);
	assert_int_equal(onnxrun__os_mkdir(TREE), 0);
	copy_tree(CT, TREE "/good");
	copy_tree(ONNXRUN_TEST_DATA "/test_depthtospace_example", TREE "/good_d2s");
	copy_tree(CT, TREE "/mismatch");
	spoil_output(TREE "/mismatch/test_data_set_0", 7);
	copy_tree(CT, TREE "/" ODD_NAME);
	spoil_output(TREE "/" ODD_NAME "/test_data_set_0", 0);
	copy_tree(CT, TREE "/loose");
	spoil_output(TREE "/loose/test_data_set_0", 7);
	spit_text(TREE "/loose/onnxrun-test.conf", "# one element is off by 1\n  atol = 2\n\nrtol=0\n");
	copy_tree(CT, TREE "/bad_input");
	assert_int_equal(remove(TREE "/bad_input/test_data_set_0/input_1.pb"), 0);
	copy_tree(CT, TREE "/badconf");
	spit_text(TREE "/badconf/onnxrun-test.conf", "rtol = lots\n");
	copy_tree(CT, TREE "/broken");
	bytes = slurp(CT "/model.onnx", &size);
	spit(TREE "/broken/model.onnx", bytes, size / 2);
	free(bytes);
	assert_int_equal(onnxrun__os_mkdir(TREE "/unsupported"), 0);
	bytes = slurp(ONNXRUN_TEST_DATA "/../bad/unsupported.onnx", &size);
	assert_non_null(bytes);
	spit(TREE "/unsupported/model.onnx", bytes, size);
	free(bytes);
	/* any data set will do: the model does not load */
	copy_tree(ONNXRUN_TEST_DATA "/test_depthtospace_example/test_data_set_0",
	          TREE "/unsupported/test_data_set_0");
	copy_tree(ONNXRUN_MODELS_DIR "/symbolic_batch", TREE "/two_sets");
	copy_tree(ONNXRUN_MODELS_DIR "/symbolic_batch", TREE "/two_sets_one_bad");
	spoil_output(TREE "/two_sets_one_bad/test_data_set_1", 3);
	assert_int_equal(onnxrun__os_mkdir(TREE "/deep"), 0);
	assert_int_equal(onnxrun__os_mkdir(TREE "/deep/nested"), 0);
	copy_tree(CT, TREE "/deep/nested/skipped");
	spit_text(TREE "/deep/onnxrun-test.conf", "skip = flaky on purpose\n");
	assert_int_equal(onnxrun__os_mkdir(TREE "/empty"), 0);
#ifndef _WIN32 /* making a link needs a privilege on Windows */
	assert_int_equal(symlink("..", TREE "/loop"), 0);
#endif
}

/* ---- a strict XML well-formedness checker that keeps the elements ---- */

/* The checker returns through xml_fail on the first violation, so that it can be tested on
 * bad documents too (xml_well_formed). */
static jmp_buf xml_fail;
#define XML_CHECK(cond)                  \
	do {                             \
		if (!(cond))             \
			longjmp(xml_fail, 1); \
	} while (0)

#define XML_MAX 256
struct xml_elem {
	char name[32];
	int parent;
	int nattr;
	char keys[8][32];
	char values[8][512];
};
struct xml_doc {
	struct xml_elem e[XML_MAX];
	int count;
};

static int xml_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

/* Reads a name at *p into out (asserting it is one). */
static void xml_name(const char **p, char *out, size_t size)
{
	size_t n = 0;

	XML_CHECK(xml_name_char(**p, 1));
	while (xml_name_char(**p, 0)) {
		XML_CHECK(n + 1 < size);
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
}

/* Checks one character of text or attribute value at *p and appends its meaning to out:
 * entities must be one of the five or a character reference to a legal character. */
static void xml_char(const char **p, char *out, size_t *n, size_t size)
{
	unsigned char c = (unsigned char)**p;

	XML_CHECK(c >= 0x20 || c == '\t' || c == '\n' || c == '\r');
	XML_CHECK(c != '<');
	if (c == '&') {
		static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
		static const char chars[] = "&<>\"'";
		for (int k = 0; k < 5; k++) {
			if (strncmp(*p, ents[k], strlen(ents[k])) == 0) {
				*p += strlen(ents[k]);
				out[(*n)++] = chars[k];
				return;
			}
		}
		char *end = NULL;
		long v = (*p)[1] == '#' ? strtol(*p + 2, &end, 10) : -1;
		XML_CHECK(v == 9 || v == 10 || v == 13 || v >= 0x20);
		XML_CHECK(*end == ';');
		out[(*n)++] = (char)v;
		*p = end + 1;
		return;
	}
	XML_CHECK(*n + 1 < size);
	out[(*n)++] = (char)c;
	(*p)++;
}

static void xml_space(const char **p)
{
	while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
		(*p)++;
}

/* Parses the attributes of a start tag into el, up to '>' or "/>"; returns 1 if empty. */
static int xml_attrs(const char **p, struct xml_elem *el)
{
	for (;;) {
		xml_space(p);
		if (**p == '>' || (**p == '/' && (*p)[1] == '>')) {
			int empty = **p == '/';
			*p += empty ? 2 : 1;
			return empty;
		}
		XML_CHECK(el->nattr < 8);
		char *key = el->keys[el->nattr], *val = el->values[el->nattr];
		xml_name(p, key, 32);
		for (int k = 0; k < el->nattr; k++)
			XML_CHECK(strcmp(el->keys[k], key) != 0);
		XML_CHECK((*(*p)++) == ('='));
		char quote = *(*p)++;
		XML_CHECK(quote == '"' || quote == '\'');
		size_t n = 0;
		while (**p != quote) {
			XML_CHECK((**p) != ('\0'));
			xml_char(p, val, &n, 512);
		}
		val[n] = '\0';
		(*p)++;
		el->nattr++;
	}
}

/* Parses a whole document into doc; longjmps to xml_fail when it is not well-formed. */
static void xml_parse_or_jump(const char *text, struct xml_doc *doc)
{
	const char *p = text;
	int stack[64], depth = 0, roots = 0;
	char scratch[4096];

	doc->count = 0;
	if (strncmp(p, "<?xml ", 6) == 0) {
		p = strstr(p, "?>");
		XML_CHECK((p) != NULL);
		p += 2;
	}
	for (;;) {
		size_t n = 0;
		while (*p != '<' && *p != '\0') {
			if (depth == 0)
				XML_CHECK(*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r');
			xml_char(&p, scratch, &n, sizeof scratch);
			if (n > sizeof scratch - 8)
				n = 0;
		}
		if (*p == '\0')
			break;
		p++;
		if (*p == '/') {
			char name[32];
			p++;
			xml_name(&p, name, sizeof name);
			xml_space(&p);
			XML_CHECK((*p++) == ('>'));
			XML_CHECK(depth > 0);
			XML_CHECK(strcmp(doc->e[stack[--depth]].name, name) == 0);
			continue;
		}
		XML_CHECK(doc->count < XML_MAX && depth < 64);
		struct xml_elem *el = &doc->e[doc->count];
		memset(el, 0, sizeof *el);
		el->parent = depth > 0 ? stack[depth - 1] : -1;
		roots += depth == 0;
		xml_name(&p, el->name, sizeof el->name);
		if (!xml_attrs(&p, el))
			stack[depth++] = doc->count;
		doc->count++;
	}
	XML_CHECK((depth) == (0));
	XML_CHECK((roots) == (1));
}

/* Whether text is a well-formed document (parsed into doc). */
static int xml_well_formed(const char *text, struct xml_doc *doc)
{
	if (setjmp(xml_fail) != 0)
		return 0;
	xml_parse_or_jump(text, doc);
	return 1;
}

static void xml_parse(const char *text, struct xml_doc *doc)
{
	if (!xml_well_formed(text, doc))
		fail_msg("not well-formed XML:\n%s", text);
}

/* Value of attribute key of element i, or NULL. */
static const char *xml_attr(const struct xml_doc *doc, int i, const char *key)
{
	for (int k = 0; k < doc->e[i].nattr; k++) {
		if (strcmp(doc->e[i].keys[k], key) == 0)
			return doc->e[i].values[k];
	}
	return NULL;
}

/* Name of the only child element of element i ("" when none). */
static const char *xml_child(const struct xml_doc *doc, int i)
{
	const char *found = "";
	int count = 0;

	for (int k = i + 1; k < doc->count; k++) {
		if (doc->e[k].parent == i) {
			found = doc->e[k].name;
			count++;
		}
	}
	assert_true(count <= 1);
	return found;
}

/* ---- a minimal JSON validator ---- */

static void json_value(const char **p);

static void json_ws(const char **p)
{
	while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
		(*p)++;
}

static void json_string(const char **p)
{
	assert_int_equal(*(*p)++, '"');
	while (**p != '"') {
		unsigned char c = (unsigned char)*(*p)++;
		assert_true(c >= 0x20);
		if (c == '\\') {
			c = (unsigned char)*(*p)++;
			assert_non_null(strchr("\"\\/bfnrtu", c));
			if (c == 'u') {
				for (int k = 0; k < 4; k++)
					assert_non_null(strchr("0123456789abcdefABCDEF", *(*p)++));
			}
		}
	}
	(*p)++;
}

/* Parses a value of kind '{' or '[' (members separated by commas). */
static void json_container(const char **p, char close)
{
	(*p)++;
	json_ws(p);
	if (**p == close) {
		(*p)++;
		return;
	}
	for (;;) {
		json_ws(p);
		if (close == '}') {
			json_string(p);
			json_ws(p);
			assert_int_equal(*(*p)++, ':');
		}
		json_value(p);
		json_ws(p);
		if (**p == close) {
			(*p)++;
			return;
		}
		assert_int_equal(*(*p)++, ',');
	}
}

static void json_value(const char **p)
{
	json_ws(p);
	if (**p == '{' || **p == '[') {
		json_container(p, **p == '{' ? '}' : ']');
	} else if (**p == '"') {
		json_string(p);
	} else if (strncmp(*p, "null", 4) == 0 || strncmp(*p, "true", 4) == 0) {
		*p += 4;
	} else if (strncmp(*p, "false", 5) == 0) {
		*p += 5;
	} else {
		char *end;
		strtod(*p, &end);
		assert_true(end > *p && (**p == '-' || (**p >= '0' && **p <= '9')));
		assert_true(strspn(*p, "-+.eE0123456789") >= (size_t)(end - *p));
		*p = end;
	}
}

/* Asserts text is one JSON value and nothing else. */
static void json_check(const char *text)
{
	const char *p = text;

	json_value(&p);
	json_ws(&p);
	assert_int_equal(*p, '\0');
}

/* The value text after `"key": ` following `from` in json (up to ',' or '}'), static. */
static const char *json_after(const char *json, const char *from, const char *key)
{
	static char val[256];
	const char *p = strstr(json, from);

	assert_non_null(p);
	p = strstr(p, fmt("\"%s\": ", key));
	assert_non_null(p);
	p += strlen(key) + 4;
	size_t n = strcspn(p, ",}\n");
	snprintf(val, sizeof val, "%.*s", (int)n, p);
	return val;
}

/* ---- tests ---- */

/* Each case of the mixed tree: table result, data sets passed/found, and the child element
 * of its JUnit testcases (two_sets_one_bad: only test_data_set_1 has a failure). */
static const struct expect {
	const char *name, *result, *sets, *child;
} expected[] = {
	{"good", "pass", "1/1", ""},
	{"good_d2s", "pass", "1/1", ""},
	{"loose", "pass", "1/1", ""},
	{"two_sets", "pass", "2/2", ""},
	{"mismatch", "fail", "0/1", "failure"},
	{ODD_NAME, "fail", "0/1", "failure"},
	{"two_sets_one_bad", "fail", "1/2", "failure"},
	{"bad_input", "error", "0/1", "error"},
	{"badconf", "error", "0/1", "error"},
	{"broken", "error", "0/1", "error"},
	{"unsupported", "unsupported", "0/1", "skipped"},
	{"deep/nested/skipped", "skipped", "0/1", "skipped"},
};

/* The JUnit child element expected for data set `set` of the case whose classname is cls. */
static const char *expected_child(const char *cls, const char *set)
{
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
		const char *name = strrchr(expected[i].name, '/');
		name = name != NULL ? name + 1 : expected[i].name;
		if (strncmp(name, "odd ", 4) == 0)
			name = ODD_SHOWN;
		if (strcmp(strrchr(cls, '/') + 1, name) != 0)
			continue;
		if (strcmp(name, "two_sets_one_bad") == 0 && strcmp(set, "test_data_set_0") == 0)
			return "";
		return expected[i].child;
	}
	fail_msg("unexpected case '%s'", cls);
	return NULL;
}

/* The JUnit report of the mixed tree: well-formed, 14 testcases, each with the right child. */
static void check_junit(const char *path)
{
	char *xml = slurp(path, NULL);
	struct xml_doc *doc = calloc(1, sizeof *doc);
	int testcases = 0;

	assert_non_null(xml);
	assert_non_null(doc);
	xml_parse(xml, doc);
	assert_string_equal(doc->e[0].name, "testsuites");
	assert_string_equal(xml_attr(doc, 0, "tests"), "14");
	assert_string_equal(xml_attr(doc, 0, "failures"), "3");
	assert_string_equal(xml_attr(doc, 0, "errors"), "3");
	assert_string_equal(xml_attr(doc, 0, "skipped"), "2");
	for (int i = 0; i < doc->count; i++) {
		if (strcmp(doc->e[i].name, "testcase") != 0)
			continue;
		const char *cls = xml_attr(doc, i, "classname"), *set = xml_attr(doc, i, "name");
		assert_non_null(cls);
		assert_non_null(set);
		assert_non_null(xml_attr(doc, i, "time"));
		assert_string_equal(doc->e[doc->e[i].parent].name, "testsuite");
		assert_string_equal(xml_child(doc, i), expected_child(cls, set));
		if (strcmp(strrchr(cls, '/'), "/mismatch") == 0)
			assert_non_null(strstr(xml_attr(doc, i + 1, "message"), "1 of 50 elements differ"));
		if (strcmp(strrchr(cls, '/'), "/unsupported") == 0)
			assert_string_equal(xml_attr(doc, i + 1, "message"),
			                    "unsupported: Relu (ai.onnx opset 13), Foo (com.example opset 1)");
		if (strcmp(strrchr(cls, '/'), "/broken") == 0)
			assert_string_equal(xml_attr(doc, i + 1, "type"), "error");
		testcases++;
	}
	assert_int_equal(testcases, 14);
	free(doc);
	free(xml);
}

/* The checker itself rejects what is not well-formed. */
static void test_xml_checker(void **state)
{
	static const char *const bad[] = {
		"<a b=\"x<y\"/>", "<a>&foo;</a>", "<a>\x01</a>", "<a></b>", "<a b=x/>", "<a b=\"1\" b=\"2\"/>",
		"<a/><b/>", "<a>&#1;</a>", "<a>&amp</a>", "<a b='it's'/>", "<a>", "text<a/>",
	};
	struct xml_doc *doc = calloc(1, sizeof *doc);

	(void)state;
	assert_true(xml_well_formed("<?xml version=\"1.0\"?>\n<a x=\"&lt;&amp;&#10;\">t&gt;<b/></a>\n", doc));
	assert_string_equal(xml_attr(doc, 0, "x"), "<&\n");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (xml_well_formed(bad[i], doc))
			fail_msg("accepted '%s'", bad[i]);
	}
	free(doc);
}

/* The JSON report of the mixed tree: valid, with the expected results and totals. */
static void check_json(const char *path)
{
	char *json = slurp(path, NULL);

	assert_non_null(json);
	json_check(json);
	assert_string_equal(json_after(json, "\"name\": \"good\"", "result"), "\"pass\"");
	assert_string_equal(json_after(json, "\"name\": \"mismatch\"", "result"), "\"fail\"");
	assert_string_equal(json_after(json, "\"name\": \"mismatch\"", "max_abs"), "1");
	assert_string_equal(json_after(json, "\"name\": \"broken\"", "result"), "\"error\"");
	assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "result"), "\"unsupported\"");
	assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "counts_as"), "\"skipped\"");
	assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "op_type"), "\"Relu\"");
	assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "nodes"), "1");
	assert_string_equal(json_after(json, "\"name\": \"broken\"", "counts_as"), "\"error\"");
	assert_string_equal(json_after(json, "\"name\": \"mismatch\"", "counts_as"), "\"fail\"");
	assert_string_equal(json_after(json, "\"tool\"", "unsupported_as"), "\"skipped\"");
	assert_string_equal(json_after(json, "\"name\": \"skipped\"", "message"), "\"flaky on purpose\"");
	assert_string_equal(json_after(json, "\"name\": \"two_sets\"", "data_set_count"), "2");
	assert_non_null(strstr(json, "\"name\": \"" ODD_JSON "\""));
	assert_string_equal(json_after(json, "\"totals\"", "cases"), "12");
	assert_string_equal(json_after(json, "\"totals\"", "passed"), "4");
	assert_string_equal(json_after(json, "\"totals\"", "failed"), "3");
	assert_string_equal(json_after(json, "\"totals\"", "errors"), "3");
	assert_string_equal(json_after(json, "\"totals\"", "unsupported"), "1");
	assert_string_equal(json_after(json, "\"totals\"", "skipped"), "1");
	free(json);
}

static void test_mixed_tree(void **state)
{
	struct run r;

	(void)state;
	build_tree();
	RUN(&r, "test", TREE, "--junit", TMP "/report.xml", "--json", TMP "/report.json");
	if (r.status != 1)
		fail_msg("status %d\n%s%s", r.status, r.out, r.err);
	assert_string_equal(r.err, ""); /* no progress line when stdout is not a terminal */
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
		assert_row(r.out, expected[i].name, expected[i].result, expected[i].sets);
	assert_null(strstr(r.out, "/loop"));
	assert_null(strstr(r.out, "/empty"));
	assert_true(has_line(r.out, "^FAIL +[^ ]*/mismatch \\[test_data_set_0\\]: output 'Y' \\(float "
	                            "\\[1,2,5,5\\]\\): 1 of 50 elements differ; worst at \\[0,0,1,2\\]: "
	                            "expected [0-9.]+ got [0-9.]+ \\(abs err 1, rel err [0-9.e-]+; "));
	assert_true(has_line(r.out, "^FAIL +[^ ]*/two_sets_one_bad \\[test_data_set_1\\]: output"));
	assert_true(has_line(r.out, "^ERROR +[^ ]*/bad_input \\[test_data_set_0\\]: missing input 'W'"));
	/* on Windows the file is named by its real path, with backslashes */
	assert_true(has_line(r.out, "^ERROR +[^ ]*/badconf: [^ ]*[/\\]badconf/onnxrun-test.conf:1: rtol"));
	assert_true(has_line(r.out, "^ERROR +[^ ]*/broken: model '[^']*/broken/model.onnx': "));
	assert_true(has_line(r.out, "^UNSUPPORTED [^ ]*/unsupported: unsupported ops: Relu \\(ai.onnx "
	                            "opset 13\\), Foo \\(com.example opset 1\\)$"));
	assert_true(has_line(r.out, "^SKIP +[^ ]*/deep/nested/skipped: flaky on purpose$"));
	assert_true(has_line(r.out, "^4 passed, 3 failed, 3 errors, 1 unsupported, 1 skipped "));
	assert_string_equal(last_line(r.out), "test: 4 passed, 3 failed, 3 errors, 1 unsupported, 1 skipped");
	run_free(&r);
	check_junit(TMP "/report.xml");
	check_json(TMP "/report.json");
}

/* The JUnit report at path: its root counts, and the child element (name, type, message)
 * of the testcase whose classname ends in "/<name>". */
static void check_junit_case(const char *path, const char *failures, const char *errors,
                             const char *skipped, const char *name, const char *child,
                             const char *type, const char *message)
{
	struct xml_doc *doc = calloc(1, sizeof *doc);
	char *xml = slurp(path, NULL);
	int found = 0;

	assert_non_null(doc);
	assert_non_null(xml);
	xml_parse(xml, doc);
	assert_string_equal(xml_attr(doc, 0, "failures"), failures);
	assert_string_equal(xml_attr(doc, 0, "errors"), errors);
	assert_string_equal(xml_attr(doc, 0, "skipped"), skipped);
	for (int i = 0; i < doc->count; i++) {
		const char *cls = xml_attr(doc, i, "classname");
		if (strcmp(doc->e[i].name, "testcase") != 0 || strcmp(strrchr(cls, '/') + 1, name) != 0)
			continue;
		found++;
		assert_string_equal(xml_child(doc, i), child);
		assert_string_equal(doc->e[i + 1].name, child);
		if (type != NULL)
			assert_string_equal(xml_attr(doc, i + 1, "type"), type);
		else
			assert_null(xml_attr(doc, i + 1, "type"));
		assert_string_equal(xml_attr(doc, i + 1, "message"), message);
	}
	assert_int_equal(found, 1);
	free(xml);
	free(doc);
}

#define UNSUPPORTED_MESSAGE "unsupported: Relu (ai.onnx opset 13), Foo (com.example opset 1)"

/* A tree whose only problem is an unsupported case: by default (and with
 * --allow-unsupported or --unsupported=skip) it is skipped, exit 0; with
 * --unsupported=error it is an error, exit 1. The closing line agrees with the detailed
 * counts either way. */
static void test_unsupported_modes(void **state)
{
	static const char *const skip_modes[][2] = {
		{"--keep-going", NULL}, {"--allow-unsupported", NULL}, {"--unsupported=skip", NULL},
		{"--unsupported", "skip"},
	};
	struct run r;
	char *json;

	(void)state;
	for (size_t i = 0; i < sizeof skip_modes / sizeof skip_modes[0]; i++) {
		const char *args[12];
		size_t n = 0;
		args[n++] = "test";
		args[n++] = skip_modes[i][0];
		if (skip_modes[i][1] != NULL) /* "--unsupported skip": the value as its own word */
			args[n++] = skip_modes[i][1];
		args[n++] = TREE "/unsupported";
		args[n++] = TREE "/good";
		args[n++] = "--junit";
		args[n++] = TMP "/u.xml";
		args[n++] = "--json";
		args[n++] = TMP "/u.json";
		args[n] = NULL;
		run_cli(&r, args);
		if (r.status != 0)
			fail_msg("%s: status %d\n%s%s", skip_modes[i][0], r.status, r.out, r.err);
		assert_true(has_line(r.out, "^1 passed, 0 failed, 0 errors, 1 unsupported, 0 skipped "));
		assert_string_equal(last_line(r.out), "test: 1 passed, 0 failed, 0 errors, 1 unsupported, 0 skipped");
		run_free(&r);
		check_junit_case(TMP "/u.xml", "0", "0", "1", "unsupported", "skipped", NULL, UNSUPPORTED_MESSAGE);
		json = slurp(TMP "/u.json", NULL);
		json_check(json);
		assert_string_equal(json_after(json, "\"tool\"", "unsupported_as"), "\"skipped\"");
		assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "counts_as"), "\"skipped\"");
		assert_string_equal(json_after(json, "\"totals\"", "unsupported"), "1");
		assert_string_equal(json_after(json, "\"totals\"", "errors"), "0");
		free(json);
	}
	RUN(&r, "test", "--unsupported=error", TREE "/unsupported", TREE "/good", "--junit", TMP "/u.xml",
	    "--json", TMP "/u.json");
	assert_int_equal(r.status, 1);
	assert_string_equal(last_line(r.out), "test: 1 passed, 0 failed, 0 errors, 1 unsupported, 0 skipped");
	run_free(&r);
	check_junit_case(TMP "/u.xml", "0", "1", "0", "unsupported", "error", "unsupported", UNSUPPORTED_MESSAGE);
	json = slurp(TMP "/u.json", NULL);
	json_check(json);
	assert_string_equal(json_after(json, "\"tool\"", "unsupported_as"), "\"error\"");
	assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "result"), "\"unsupported\"");
	assert_string_equal(json_after(json, "\"name\": \"unsupported\"", "counts_as"), "\"error\"");
	free(json);
	/* the last option wins; --fail-fast stops at an unsupported case only when it is an error */
	RUN(&r, "test", "--unsupported=error", "--allow-unsupported", TREE "/unsupported");
	assert_int_equal(r.status, 0);
	run_free(&r);
	RUN(&r, "test", "--fail-fast", TREE "/unsupported", TREE "/good");
	assert_int_equal(r.status, 0);
	assert_row(r.out, "good", "pass", "1/1");
	run_free(&r);
	RUN(&r, "test", "--fail-fast", "--unsupported", "error", TREE "/unsupported", TREE "/good");
	assert_int_equal(r.status, 1);
	assert_null(row_of(r.out, TREE "/good"));
	assert_true(has_line(r.out, "^stopped at the first failure \\(--fail-fast\\): 1 case not run$"));
	run_free(&r);
}

#define MANY 500

/* A case whose model has 500 distinct unsupported ops (more than the library's load error
 * can name): the problem line, the JUnit message and the JSON list name every one. */
static void test_five_hundred_unsupported(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	char name[32], op[32], in[32], out[32];
	struct run r;
	uint8_t *bytes;
	size_t size;
	char *text;

	(void)state;
	mb_opset(m, "", 13);
	mb_opset(m, "com.many", 2);
	mb_input(m, "v0", MB_FLOAT, "1,2");
	mb_output(m, "v500", MB_FLOAT, NULL);
	for (int k = 0; k < MANY; k++) {
		snprintf(name, sizeof name, "n%d", k);
		snprintf(op, sizeof op, "ManyOp%d", k);
		snprintf(in, sizeof in, "v%d", k);
		snprintf(out, sizeof out, "v%d", k + 1);
		mb_node(m, name, op, k % 2 ? "com.many" : "", in, out);
	}
	bytes = mb_finish(m, &size);
	rm_tree(TMP "/many");
	assert_int_equal(onnxrun__os_mkdir(TMP "/many"), 0);
	spit(TMP "/many/model.onnx", bytes, size);
	free(bytes);
	RUN(&r, "test", TMP "/many", "--junit", TMP "/many.xml", "--json", TMP "/many.json");
	assert_int_equal(r.status, 0);
	assert_string_equal(last_line(r.out), "test: 0 passed, 0 failed, 0 errors, 1 unsupported, 0 skipped");
	/* every op, in order, on the one problem line, in the JUnit message and in the JSON */
	text = slurp(TMP "/many.xml", NULL);
	assert_non_null(text);
	for (int k = 0; k < MANY; k++) {
		const char *want = fmt("ManyOp%d (%s opset %d)%s", k, k % 2 ? "com.many" : "ai.onnx",
		                       k % 2 ? 2 : 13, k + 1 < MANY ? ", " : "");
		assert_non_null(strstr(r.out, want));
		assert_non_null(strstr(text, want));
	}
	assert_true(has_line(r.out, "^UNSUPPORTED [^ ]*/many: unsupported ops: ManyOp0 \\(ai.onnx opset 13\\), "
	                            "ManyOp1 \\(com.many opset 2\\), ManyOp2 .*ManyOp499 \\(com.many opset 2\\)$"));
	free(text);
	run_free(&r);
	text = slurp(TMP "/many.json", NULL);
	assert_non_null(text);
	json_check(text);
	size_t listed = 0;
	for (const char *p = strstr(text, "\"unsupported_ops\""); (p = strstr(p, "{\"op_type\": ")) != NULL; p++)
		listed++;
	assert_int_equal(listed, MANY);
	assert_non_null(strstr(text, "{\"op_type\": \"ManyOp499\", \"domain\": \"com.many\", \"opset\": 2, \"nodes\": 1}"));
	free(text);
}

static void test_fail_fast(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "test", "--fail-fast", TREE "/good", TREE "/mismatch", TREE "/good_d2s");
	assert_int_equal(r.status, 1);
	assert_true(has_line(r.out, "^stopped at the first failure \\(--fail-fast\\): 1 case not run$"));
	assert_null(strstr(r.out, "good_d2s"));
	assert_string_equal(last_line(r.out), "test: 1 passed, 1 failed, 0 errors, 0 unsupported, 0 skipped");
	run_free(&r);
	/* within a case: the second data set does not run after the first fails */
	spoil_output(TREE "/two_sets_one_bad/test_data_set_0", 0);
	RUN(&r, "test", "--fail-fast", TREE "/two_sets_one_bad");
	assert_int_equal(r.status, 1);
	assert_row(r.out, "two_sets_one_bad", "fail", "0/2");
	assert_null(strstr(r.out, "test_data_set_1"));
	run_free(&r);
	/* --keep-going (the default) undoes an earlier --fail-fast */
	RUN(&r, "test", "--fail-fast", "--keep-going", TREE "/good", TREE "/mismatch", TREE "/good_d2s");
	assert_int_equal(r.status, 1);
	assert_string_equal(last_line(r.out), "test: 2 passed, 1 failed, 0 errors, 0 unsupported, 0 skipped");
	run_free(&r);
}

/* --rtol/--atol, onnxrun-test.conf over them, and a model file as PATH. */
static void test_tolerances_and_file_path(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "test", "--atol", "2", TREE "/mismatch");
	assert_int_equal(r.status, 0);
	assert_string_equal(last_line(r.out), "test: 1 passed, 0 failed, 0 errors, 0 unsupported, 0 skipped");
	run_free(&r);
	/* the case's onnxrun-test.conf (atol = 2) overrides the command line's default */
	RUN(&r, "test", "--atol=0", "--rtol", "0", TREE "/loose");
	assert_int_equal(r.status, 0);
	run_free(&r);
	/* a model file as PATH: the data sets beside it */
	RUN(&r, "test", TREE "/two_sets/model.onnx");
	assert_int_equal(r.status, 0);
	assert_row(r.out, "two_sets/model.onnx", "pass", "2/2");
	run_free(&r);
}

static void test_conformance_and_models(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, "test", ONNXRUN_TEST_DATA);
	if (r.status != 0)
		fail_msg("%s%s", r.out, r.err);
	assert_string_equal(last_line(r.out), "test: 16 passed, 0 failed, 0 errors, 0 unsupported, 0 skipped");
	assert_true(has_line(r.out, "^16 passed, 0 failed, 0 errors, 0 unsupported, 0 skipped "));
	run_free(&r);
	RUN(&r, "test", ONNXRUN_MODELS_DIR);
	if (r.status != 0)
		fail_msg("%s%s", r.out, r.err);
	assert_true(has_line(last_line(r.out), "^test: [0-9]+ passed, 0 failed, 0 errors, 0 unsupported, 0 skipped$"));
	assert_true(atoi(last_line(r.out) + strlen("test: ")) >= 6);
	run_free(&r);
}

/* Runs a command that must fail with exit 2 and one error line containing needle. */
static void assert_usage_error(const char *needle, const char *const *args)
{
	struct run r;

	run_cli(&r, args);
	if (r.status != 2 || strstr(r.err, needle) == NULL || strncmp(r.err, "onnxrun: error: ", 16))
		fail_msg("status %d, stderr '%s', wanted '%s'", r.status, r.err, needle);
	run_free(&r);
}

static void test_usage_errors(void **state)
{
	struct run r;

	(void)state;
	assert_usage_error("missing PATH", (const char *const[]){"test", NULL});
	assert_usage_error("no-such", (const char *const[]){"test", TMP "/no-such", NULL});
	assert_usage_error("no test cases", (const char *const[]){"test", TREE "/empty", NULL});
	assert_usage_error("--bogus", (const char *const[]){"test", "--bogus", TREE, NULL});
	assert_usage_error("--rtol", (const char *const[]){"test", "--rtol", "x", TREE, NULL});
	assert_usage_error("--unsupported must be 'skip' or 'error', not 'fail'",
	                   (const char *const[]){"test", "--unsupported=fail", TREE, NULL});
	assert_usage_error("--unsupported", (const char *const[]){"test", TREE "/good", "--unsupported", NULL});
	assert_usage_error("--junit", (const char *const[]){"test", TREE "/good", "--junit", NULL});
	assert_usage_error("/no/such/dir/r.xml",
	                   (const char *const[]){"test", TREE "/good", "--junit", "/no/such/dir/r.xml", NULL});
	RUN(&r, "test", "--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: onnxrun test"));
	assert_non_null(strstr(r.out, "--unsupported=MODE"));
	assert_non_null(strstr(r.out, "exit status:"));
	run_free(&r);
}

/* With stdout and stderr on a terminal, a "[i/n] case" line is shown and then cleared. */
#ifdef _WIN32
static void test_progress_on_terminal(void **state)
{
	(void)state;
	print_message("skipped on Windows: the test gives the CLI a pseudo-terminal (posix_openpt)\n");
	skip();
}
#else
static void test_progress_on_terminal(void **state)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	const char *argv[] = {ONNXRUN_CLI_PATH, "test", TREE "/good", TREE "/good_d2s", NULL};
	posix_spawn_file_actions_t fa;
	char buf[8192];
	size_t n = 0;
	ssize_t got;
	pid_t pid;
	int wst;

	(void)state;
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_addopen(&fa, 1, ptsname(master), O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	assert_int_equal(cli_spawn(&pid, &fa, argv), 0);
	posix_spawn_file_actions_destroy(&fa);
	while (n + 1 < sizeof buf && (got = read(master, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = '\0';
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	close(master);
	assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	assert_non_null(strstr(buf, "\r[1/2] "));
	assert_non_null(strstr(buf, "\r[2/2] "));
	assert_non_null(strstr(buf, "\r\033[K"));
	assert_non_null(strstr(buf, "test: 2 passed, 0 failed"));
}
#endif

static int setup(void **state)
{
	(void)state;
	onnxrun__os_mkdir(TMP); /* rm_tree's output goes to files inside TMP: it must exist first */
	rm_tree(TMP);
	return onnxrun__os_mkdir(TMP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_checker),
		cmocka_unit_test(test_mixed_tree),
		cmocka_unit_test(test_unsupported_modes),
		cmocka_unit_test(test_five_hundred_unsupported),
		cmocka_unit_test(test_fail_fast),
		cmocka_unit_test(test_tolerances_and_file_path),
		cmocka_unit_test(test_conformance_and_models),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_progress_on_terminal),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
