/*
 * test_cli_dot.c - "onnxrun --dot FILE MODEL": runs the binary (ONNXRUN_CLI_PATH) and checks
 * the Graphviz text itself, without Graphviz: a small DOT reader written here checks the
 * syntax (statements, attribute lists, quoting, balanced braces) and keeps nodes and edges,
 * which are then compared with the model as the library describes it (every node, every
 * edge labelled with the value's name and inferred type).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <spawn.h>
#include <sys/wait.h>
#endif
#include <cmocka.h>

#include "cli_spawn.h"
#include "platform/platform.h"
#include "onnxrun.h"
#include "model_builder.h"

#define TMP ONNXRUN_TEST_TMP "/cli_dot"
#define UPSAMPLER ONNXRUN_MODELS_DIR "/upsampler/model.onnx"

/* Exit status and captured output of one run. */
struct run {
	int status;
	char *out;
	char *err;
};

#ifdef _WIN32
/* The CLI writes text (stdout, stderr, the DOT file) in text mode: on Windows its lines end
 * in "\r\n", read here as "\n". */
static void unix_lines(char *s)
{
	char *w = s;
	for (; *s; s++)
		if (!(s[0] == '\r' && s[1] == '\n'))
			*w++ = *s;
	*w = '\0';
}
#endif

/* A whole file as a NUL-terminated heap string, or NULL. */
static char *slurp(const char *path)
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
#ifdef _WIN32
	unix_lines(buf);
#endif
	return buf;
}


/* Runs onnxrun with the NULL-terminated arguments; captures stdout and stderr. */
static void run_cli(struct run *r, const char *const *args)
{
	const char *argv[16] = {ONNXRUN_CLI_PATH};
	size_t n = 1;

	for (; args[n - 1] != NULL && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
#ifdef _WIN32
	r->status = cli_run_files(argv, TMP "/out.txt", TMP "/err.txt");
#else
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int wst;
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_addopen(&fa, 1, TMP "/out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	posix_spawn_file_actions_addopen(&fa, 2, TMP "/err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	assert_int_equal(cli_spawn(&pid, &fa, argv), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	r->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
#endif
	r->out = slurp(TMP "/out.txt");
	r->err = slurp(TMP "/err.txt");
	assert_non_null(r->out);
	assert_non_null(r->err);
}

#define RUN(r, ...) run_cli((r), (const char *const[]){__VA_ARGS__, NULL})

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* ---- a reader for the DOT subset onnxrun writes ---- */

#define DOT_MAX 1100
#define DOT_TEXT 256

/* A node or edge statement with its attributes (string values unescaped). */
struct dot_stmt {
	char from[32], to[32]; /* to is "" for a node statement */
	int nattr;
	char keys[8][24];
	char values[8][DOT_TEXT];
};

struct dot_graph {
	struct dot_stmt s[DOT_MAX];
	int count;
};

static jmp_buf dot_fail;
#define DOT_CHECK(cond)                        \
	do {                                   \
		if (!(cond))                   \
			longjmp(dot_fail, 1);  \
	} while (0)

static void dot_space(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n')
		(*p)++;
}

static int dot_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Reads an identifier (letters, digits, '_') or a quoted string into out, unescaping \" \\
 * and \n (a newline); a raw newline or an unknown escape inside a string is an error. */
static void dot_token(const char **p, char *out, size_t size)
{
	size_t n = 0;

	dot_space(p);
	if (**p != '"') {
		while (dot_id_char(**p) && n + 1 < size)
			out[n++] = *(*p)++;
		DOT_CHECK(n > 0 && !dot_id_char(**p));
		out[n] = '\0';
		return;
	}
	for ((*p)++; **p != '"'; (*p)++) {
		char c = **p;
		DOT_CHECK(c != '\0' && c != '\n' && n + 1 < size);
		if (c == '\\') {
			c = *++*p;
			DOT_CHECK(c == '"' || c == '\\' || c == 'n');
			c = c == 'n' ? '\n' : c;
		}
		out[n++] = c;
	}
	(*p)++;
	out[n] = '\0';
}

/* Reads "[k=v, k=v]" into st. */
static void dot_attrs(const char **p, struct dot_stmt *st)
{
	(*p)++;
	for (;;) {
		dot_space(p);
		if (**p == ']') {
			(*p)++;
			return;
		}
		DOT_CHECK(st->nattr < 8);
		dot_token(p, st->keys[st->nattr], sizeof st->keys[0]);
		dot_space(p);
		DOT_CHECK(*(*p)++ == '=');
		dot_token(p, st->values[st->nattr], DOT_TEXT);
		st->nattr++;
		dot_space(p);
		if (**p == ',')
			(*p)++;
		else
			DOT_CHECK(**p == ']');
	}
}

/* Parses "digraph ID { stmt; ... }" into g; 0 when the text is not such a graph. */
static int dot_parse(const char *text, struct dot_graph *g)
{
	const char *p = text;
	char word[32];

	g->count = 0;
	if (setjmp(dot_fail) != 0)
		return 0;
	dot_token(&p, word, sizeof word);
	DOT_CHECK(strcmp(word, "digraph") == 0);
	dot_token(&p, word, sizeof word);
	dot_space(&p);
	DOT_CHECK(*p++ == '{');
	for (dot_space(&p); *p != '}'; dot_space(&p)) {
		DOT_CHECK(g->count < DOT_MAX);
		struct dot_stmt *st = &g->s[g->count++];
		memset(st, 0, sizeof *st);
		dot_token(&p, st->from, sizeof st->from);
		dot_space(&p);
		if (p[0] == '-' && p[1] == '>') {
			p += 2;
			dot_token(&p, st->to, sizeof st->to);
			dot_space(&p);
		}
		if (*p == '[')
			dot_attrs(&p, st);
		dot_space(&p);
		DOT_CHECK(*p++ == ';');
	}
	p++;
	dot_space(&p);
	return *p == '\0';
}

/* Attribute key of statement st, or NULL. */
static const char *dot_attr(const struct dot_stmt *st, const char *key)
{
	for (int k = 0; k < st->nattr; k++) {
		if (strcmp(st->keys[k], key) == 0)
			return st->values[k];
	}
	return NULL;
}

/* The node statement declaring id, or NULL. */
static const struct dot_stmt *dot_node(const struct dot_graph *g, const char *id)
{
	for (int i = 0; i < g->count; i++) {
		if (g->s[i].to[0] == '\0' && strcmp(g->s[i].from, id) == 0)
			return &g->s[i];
	}
	return NULL;
}

/* The id of the node statement whose label is `label`, or NULL. */
static const char *dot_node_labelled(const struct dot_graph *g, const char *label)
{
	for (int i = 0; i < g->count; i++) {
		const char *l = dot_attr(&g->s[i], "label");
		if (g->s[i].to[0] == '\0' && l != NULL && strcmp(l, label) == 0)
			return g->s[i].from;
	}
	return NULL;
}

/* Number of edges from -> to (either may be NULL: any) labelled `label`. */
static int dot_edges(const struct dot_graph *g, const char *from, const char *to, const char *label)
{
	int n = 0;

	for (int i = 0; i < g->count; i++) {
		const struct dot_stmt *st = &g->s[i];
		const char *l = dot_attr(st, "label");
		n += st->to[0] != '\0' && (from == NULL || strcmp(st->from, from) == 0) &&
		     (to == NULL || strcmp(st->to, to) == 0) && l != NULL && strcmp(l, label) == 0;
	}
	return n;
}

/* Statements whose attribute key equals value. */
static int dot_count(const struct dot_graph *g, const char *key, const char *value)
{
	int n = 0;

	for (int i = 0; i < g->count; i++) {
		const char *v = dot_attr(&g->s[i], key);
		n += v != NULL && strcmp(v, value) == 0;
	}
	return n;
}

/* Every edge joins two declared nodes. */
static void assert_edges_declared(const struct dot_graph *g)
{
	for (int i = 0; i < g->count; i++) {
		if (g->s[i].to[0] == '\0')
			continue;
		if (dot_node(g, g->s[i].from) == NULL || dot_node(g, g->s[i].to) == NULL)
			fail_msg("edge %s -> %s joins an undeclared node", g->s[i].from, g->s[i].to);
	}
}

/* Runs --dot into TMP/graph.dot on a model that must draw; returns the parsed graph. */
static struct dot_graph *draw(const char *model)
{
	struct dot_graph *g = calloc(1, sizeof *g);
	struct run r;
	char *text;

	assert_non_null(g);
	RUN(&r, "--dot", TMP "/graph.dot", model);
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	run_free(&r);
	text = slurp(TMP "/graph.dot");
	assert_non_null(text);
	if (!dot_parse(text, g))
		fail_msg("not a well-formed DOT graph:\n%s", text);
	free(text);
	assert_edges_declared(g);
	return g;
}

/* ---- model side ---- */

/* "name\n<dtype> [d0,d1,...]" of a value as inferred by the library (the edge label). */
static const char *edge_label(const struct onnxrun_model *m, const char *name)
{
	static char buf[DOT_TEXT];
	struct onnxrun_value_info info;
	int n;

	assert_int_equal(onnxrun_model_value_info(m, name, &info), ONNXRUN_OK);
	n = snprintf(buf, sizeof buf, "%s\n%s [", name, onnxrun_dtype_name(info.dtype));
	for (int32_t i = 0; i < info.rank; i++) {
		const struct onnxrun_dim *d = &info.dims[i];
		n += d->value >= 0 ? snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", i ? "," : "", (long long)d->value)
		                   : snprintf(buf + n, sizeof buf - (size_t)n, "%s%s", i ? "," : "", d->param);
	}
	snprintf(buf + n, sizeof buf - (size_t)n, "]");
	return buf;
}

/* Checks every node of the model (box labelled "Op\nname\nvN") and every edge into and out
 * of it (labelled with the value's name and inferred type) against the drawing. */
static void assert_matches_model(const struct dot_graph *g, const char *path)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *m = NULL;
	char label[DOT_TEXT];

	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, path, &m), ONNXRUN_OK);
	for (size_t i = 0; i < onnxrun_model_node_count(m); i++) {
		struct onnxrun_node_info node;
		assert_int_equal(onnxrun_model_node_info(m, i, &node), ONNXRUN_OK);
		snprintf(label, sizeof label, "%s\n%s\nv%lld", node.op_type, node.name, (long long)node.since_version);
		const char *id = dot_node_labelled(g, label);
		if (id == NULL)
			fail_msg("no node labelled '%s'", label);
		assert_string_equal(dot_attr(dot_node(g, id), "shape"), "box");
		for (size_t k = 0; k < node.input_count; k++)
			assert_int_equal(dot_edges(g, NULL, id, edge_label(m, node.inputs[k])), 1);
		for (size_t k = 0; k < node.output_count; k++)
			assert_true(dot_edges(g, id, NULL, edge_label(m, node.outputs[k])) >= 1);
	}
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* ---- tests ---- */

static void test_upsampler(void **state)
{
	struct dot_graph *g = draw(UPSAMPLER);
	struct run r;
	char *file;

	(void)state;
	assert_matches_model(g, UPSAMPLER);
	/* the edges of the README's example, by name and shape */
	const char *conv1 = dot_node_labelled(g, "ConvTranspose\nconv1\nv11");
	const char *d2s = dot_node_labelled(g, "DepthToSpace\npixel_shuffle\nv13");
	assert_non_null(conv1);
	assert_non_null(d2s);
	assert_int_equal(dot_edges(g, conv1, d2s, "features\nfloat [1,12,32,32]"), 1);
	assert_int_equal(dot_edges(g, NULL, NULL, "shuffled\nfloat [1,3,64,64]"), 1);
	assert_int_equal(dot_edges(g, NULL, NULL, "upscaled\nfloat [1,3,128,128]"), 1);
	/* one input, four initializers, one output, three nodes: each kind its own shape */
	assert_int_equal(dot_count(g, "shape", "invhouse"), 1);
	assert_int_equal(dot_count(g, "shape", "note"), 4);
	assert_int_equal(dot_count(g, "shape", "house"), 1);
	assert_int_equal(dot_count(g, "shape", "box"), 3);
	assert_non_null(dot_node_labelled(g, "initializer\nconv2.weight\nfloat [3,3,4,4]"));
	assert_non_null(dot_node_labelled(g, "output\nupscaled\nfloat [1,3,128,128]"));
	assert_int_equal(dot_count(g, "color", "red"), 0);
	free(g);
	/* "-" writes the same text to stdout */
	RUN(&r, "--dot", "-", UPSAMPLER);
	file = slurp(TMP "/graph.dot");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, file);
	free(file);
	run_free(&r);
}

/* Symbolic dims appear by name; a model with several outputs and a shared value. */
static void test_symbolic_and_shared(void **state)
{
	struct dot_graph *g = draw(ONNXRUN_MODELS_DIR "/symbolic_batch/model.onnx");

	(void)state;
	assert_int_equal(dot_edges(g, NULL, NULL, "features\nfloat [N,12,8,8]"), 1);
	assert_matches_model(g, ONNXRUN_MODELS_DIR "/symbolic_batch/model.onnx");
	free(g);
	g = draw(ONNXRUN_MODELS_DIR "/multi_use/model.onnx");
	assert_matches_model(g, ONNXRUN_MODELS_DIR "/multi_use/model.onnx");
	assert_int_equal(dot_count(g, "shape", "house"), 3);
	free(g);
}

/* Unsupported nodes are drawn red, the values after them marked as guesses, with a warning. */
static void test_unsupported(void **state)
{
	struct dot_graph *g = calloc(1, sizeof *g);
	struct run r;
	char *text;

	(void)state;
	RUN(&r, "--dot", TMP "/unsupported.dot", ONNXRUN_TEST_DATA "/../bad/unsupported.onnx");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "onnxrun: warning: "));
	assert_non_null(strstr(r.err, "Relu (ai.onnx opset 13), Foo (com.example opset 1)"));
	run_free(&r);
	text = slurp(TMP "/unsupported.dot");
	assert_true(dot_parse(text, g));
	assert_edges_declared(g);
	const char *relu = dot_node_labelled(g, "Relu\nrelu1\nUNSUPPORTED");
	const char *foo = dot_node_labelled(g, "com.example.Foo\nfoo1\nUNSUPPORTED");
	assert_non_null(relu);
	assert_non_null(foo);
	assert_string_equal(dot_attr(dot_node(g, relu), "color"), "red");
	assert_string_equal(dot_attr(dot_node(g, foo), "color"), "red");
	assert_int_equal(dot_edges(g, NULL, relu, "x\nfloat [1,4,2,2]"), 1);
	assert_int_equal(dot_edges(g, relu, foo, "r\nfloat [unknown rank]\n(guessed)"), 1);
	free(text);
	free(g);
}

/* Writes the packed model m to path (m is freed). */
static void write_model(Onnx__ModelProto *m, const char *path)
{
	size_t size;
	uint8_t *bytes = mb_finish(m, &size);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
	free(bytes);
}

/* A supported node after an unsupported one is drawn as usual (its version, not red), its
 * input edge and output are guessed, and a declared type after it is shown as declared. */
static void test_supported_after_unsupported(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	struct dot_graph *g;
	struct run r;

	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,2,2");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_value_info(m, "a", MB_FLOAT, "1,4,2,2");
	mb_node(m, "act", "Elu", "", "x", "a");
	n = mb_node(m, "d2s", "DepthToSpace", "", "a", "y");
	mb_attr_int(n, "blocksize", 2);
	write_model(m, TMP "/after.onnx");
	g = draw(TMP "/after.onnx");
	const char *elu = dot_node_labelled(g, "Elu\nact\nUNSUPPORTED");
	const char *d2s = dot_node_labelled(g, "DepthToSpace\nd2s\nv13");
	assert_non_null(elu);
	assert_non_null(d2s);
	assert_null(dot_attr(dot_node(g, d2s), "color"));
	/* a's type is the declared one; the DepthToSpace infers y from it */
	assert_int_equal(dot_edges(g, elu, d2s, "a\nfloat [1,4,2,2]\n(guessed)"), 1);
	assert_int_equal(dot_edges(g, d2s, NULL, "y\nfloat [1,1,4,4]\n(guessed)"), 1);
	assert_int_equal(dot_count(g, "color", "red"), 3); /* the Elu box and the two edges after it */
	free(g);
	RUN(&r, "--dot", "-", TMP "/after.onnx");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "onnxrun: warning: drawn in red, not supported by onnxrun (types after "
	                              "them are guesses): Elu (ai.onnx opset 13)\n"));
	run_free(&r);
}

#define MANY 500

/* 500 distinct unsupported ops: all drawn red, all named in the warning. */
static void test_five_hundred_unsupported(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	char name[32], op[64], in[32], out[32];
	struct dot_graph *g;
	struct run r;

	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "v0", MB_FLOAT, "2");
	mb_output(m, "v500", MB_FLOAT, NULL);
	for (int k = 0; k < MANY; k++) {
		snprintf(name, sizeof name, "n%d", k);
		snprintf(op, sizeof op, "ManyOp%d", k);
		snprintf(in, sizeof in, "v%d", k);
		snprintf(out, sizeof out, "v%d", k + 1);
		mb_node(m, name, op, "", in, out);
	}
	write_model(m, TMP "/many.onnx");
	g = draw(TMP "/many.onnx");
	for (int k = 0; k < MANY; k++) {
		snprintf(op, sizeof op, "ManyOp%d\nn%d\nUNSUPPORTED", k, k);
		const char *id = dot_node_labelled(g, op);
		if (id == NULL)
			fail_msg("no node labelled '%s'", op);
		assert_string_equal(dot_attr(dot_node(g, id), "color"), "red");
	}
	free(g);
	RUN(&r, "--dot", TMP "/many.dot", TMP "/many.onnx");
	assert_int_equal(r.status, 0);
	for (int k = 0; k < MANY; k++) {
		snprintf(op, sizeof op, " ManyOp%d (ai.onnx opset 13)%s", k, k + 1 < MANY ? "," : "\n");
		if (strstr(r.err, op) == NULL)
			fail_msg("the warning does not name '%s'", op);
	}
	run_free(&r);
}

/* Names with quotes, backslashes and newlines are escaped and come back intact. */
static void test_escaping(void **state)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	struct dot_graph *g;
	uint8_t *bytes;
	size_t size;
	FILE *f;

	(void)state;
	mb_opset(m, "", 13);
	mb_input(m, "in \"x\"", MB_FLOAT, "b\\n,4,1,1");
	mb_output(m, "out\\y", MB_FLOAT, NULL);
	n = mb_node(m, "d2s \"one\"\nline2 \\ end", "DepthToSpace", "", "in \"x\"", "out\\y");
	mb_attr_int(n, "blocksize", 2);
	bytes = mb_pack(m, &size);
	mb_free(m);
	f = fopen(TMP "/odd.onnx", "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, size, f), size);
	fclose(f);
	free(bytes);
	g = draw(TMP "/odd.onnx");
	assert_non_null(dot_node_labelled(g, "DepthToSpace\nd2s \"one\"\nline2 \\ end\nv13"));
	assert_non_null(dot_node_labelled(g, "input\nin \"x\"\nfloat [b\\n,4,1,1]"));
	assert_int_equal(dot_edges(g, NULL, NULL, "out\\y\nfloat [b\\n,1,2,2]"), 1);
	free(g);
}

/* The reader itself rejects broken DOT. */
static void test_dot_reader(void **state)
{
	static const char *const bad[] = {
		"digraph g { a [label=\"x\"]; ", "digraph g { a [label=\"x]; }", "digraph g { a -> ; }",
		"digraph g { a [label=\"x\\q\"]; }", "digraph g { a [label=\"x\"] }", "digraph g { a [k=]; }",
		"graph g { a; }", "digraph g { a; } }",
	};
	struct dot_graph *g = calloc(1, sizeof *g);

	(void)state;
	assert_true(dot_parse("digraph g {\n\ta [k=v, l=\"a\\\"b\\\\c\\nd\"];\n\ta -> b;\n}\n", g));
	assert_string_equal(dot_attr(&g->s[0], "l"), "a\"b\\c\nd");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (dot_parse(bad[i], g))
			fail_msg("accepted '%s'", bad[i]);
	}
	free(g);
}

/* Errors: one "onnxrun: error:" line and exit 2. */
static void test_errors(void **state)
{
	static const char *const cases[][4] = {
		{"--dot", TMP "/x.dot", TMP "/no-such.onnx", "no-such.onnx"},
		{"--dot", "/no/such/dir/x.dot", UPSAMPLER, "/no/such/dir/x.dot"},
		{"--dot", TMP "/x.dot", ONNXRUN_TEST_DATA "/../bad/cycle.onnx", "cycle.onnx"},
	};
	struct run r;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		RUN(&r, cases[i][0], cases[i][1], cases[i][2]);
		if (r.status != 2 || strncmp(r.err, "onnxrun: error: ", 16) != 0 ||
		    strstr(r.err, cases[i][3]) == NULL || strchr(r.err, '\n') != r.err + strlen(r.err) - 1)
			fail_msg("status %d, stderr '%s'", r.status, r.err);
		run_free(&r);
	}
	RUN(&r, "--dot", TMP "/x.dot", UPSAMPLER, ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--dot only draws"));
	run_free(&r);
}

static int setup(void **state)
{
	(void)state;
	onnxrun__os_mkdir(TMP);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dot_reader),
		cmocka_unit_test(test_upsampler),
		cmocka_unit_test(test_symbolic_and_shared),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_supported_after_unsupported),
		cmocka_unit_test(test_five_hundred_unsupported),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
