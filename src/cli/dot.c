/*
 * dot.c - --dot FILE: writes the model's graph in Graphviz DOT.
 *
 * Graph inputs are blue "invhouse" shapes, initializers grey notes, outputs green houses,
 * nodes rounded boxes labelled op type, node name and the op version chosen. Every edge
 * carries the value's name and its type and shape as inferred at load (symbolic dims by
 * name). A model that fails to load with UNSUPPORTED is drawn from the library's
 * inspection of it (unsupported.c): the nodes without an implementation (since_version 0)
 * are drawn red, and the values computed from them are labelled "(guessed)" since their
 * types are not really known.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One value seen while drawing: where it comes from (a DOT node id). */
struct dot_value {
	const char *name; /* borrowed from the model */
	char id[32];
	int guessed; /* computed from an unsupported node */
};

struct dot_state {
	FILE *f;
	const struct onnxrun_model *model;
	struct dot_value *values;
	size_t count, cap;
	size_t consts; /* initializer nodes drawn so far */
};

/* Index of the value `name`, or -1. */
static long find_value(const struct dot_state *d, const char *name)
{
	for (size_t i = 0; i < d->count; i++) {
		if (strcmp(d->values[i].name, name) == 0)
			return (long)i;
	}
	return -1;
}

/* Records that `name` comes from DOT node `id`; returns its index or -1 (out of memory). */
static long add_value(struct dot_state *d, const char *name, const char *id, int guessed)
{
	if (d->count == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct dot_value *grown = realloc(d->values, cap * sizeof *grown);
		if (grown == NULL) {
			cli_error("out of memory");
			return -1;
		}
		d->values = grown;
		d->cap = cap;
	}
	struct dot_value *v = &d->values[d->count];
	v->name = name;
	snprintf(v->id, sizeof v->id, "%s", id);
	v->guessed = guessed;
	return (long)d->count++;
}

/* The type of a value as "float [1,3,N,?]" (heap), "?" when the model does not know it. */
static char *type_string(const struct onnxrun_model *model, const char *name)
{
	struct onnxrun_value_info info;
	char *buf = NULL;
	size_t size = 0;
	FILE *m;

	if (onnxrun_model_value_info(model, name, &info) != ONNXRUN_OK)
		return cli_strdup("?");
	m = onnxrun__os_memstream_open(&buf, &size);
	if (m == NULL) {
		cli_error("out of memory");
		return NULL;
	}
	cli_print_value_type(m, &info);
	if (onnxrun__os_memstream_close(m, &buf, &size) != 0) {
		free(buf);
		cli_error("out of memory");
		return NULL;
	}
	return buf;
}

/* Writes `label="a\nb\nc"` from the NULL-terminated parts, each escaped. */
static void put_label(FILE *f, const char *const *parts)
{
	fputs("label=\"", f);
	for (size_t i = 0; parts[i] != NULL; i++) {
		if (i > 0)
			fputs("\\n", f);
		cli_write_dot_text(f, parts[i]);
	}
	fputc('"', f);
}

/* Draws a value box (graph input, initializer or output) with its name and type. */
static int draw_value_box(struct dot_state *d, const char *id, const char *kind,
                          const char *name, const char *style, int guessed)
{
	char *type = type_string(d->model, name);

	if (type == NULL)
		return CLI_ERROR;
	fprintf(d->f, "\t%s [%s, ", id, style);
	put_label(d->f, (const char *const[]){kind, name, type, guessed ? "(guessed)" : NULL, NULL});
	fputs("];\n", d->f);
	free(type);
	return CLI_OK;
}

static const char input_style[] = "shape=invhouse, style=filled, fillcolor=\"#cfe8ff\"";
static const char const_style[] = "shape=note, style=filled, fillcolor=\"#eeeeee\"";
static const char output_style[] = "shape=house, style=filled, fillcolor=\"#d4f5d4\"";

/* Draws the graph inputs and records them as value sources. */
static int draw_inputs(struct dot_state *d)
{
	struct onnxrun_value_info info;
	char id[32];

	for (size_t i = 0, n = onnxrun_model_input_count(d->model); i < n; i++) {
		if (onnxrun_model_input_info(d->model, i, &info) != ONNXRUN_OK)
			continue;
		snprintf(id, sizeof id, "in%zu", i);
		if (draw_value_box(d, id, "input", info.name, input_style, 0) != CLI_OK ||
		    add_value(d, info.name, id, 0) < 0)
			return CLI_ERROR;
	}
	return CLI_OK;
}

/* The value `name` as a source: known already, or else an initializer drawn now (a value
 * that no node and no fed input produces). Returns its index, -1 on failure. */
static long source_of(struct dot_state *d, const char *name)
{
	long k = find_value(d, name);
	char id[32];

	if (k >= 0)
		return k;
	snprintf(id, sizeof id, "c%zu", d->consts++);
	if (draw_value_box(d, id, "initializer", name, const_style, 0) != CLI_OK)
		return -1;
	return add_value(d, name, id, 0);
}

/* Draws the box of node i; unsupported ones in red. */
static void draw_node_box(struct dot_state *d, size_t i, const struct onnxrun_node_info *node,
                          int unsupported)
{
	char op[256], version[64];

	if (node->domain[0] != '\0')
		snprintf(op, sizeof op, "%s.%s", node->domain, node->op_type);
	else
		snprintf(op, sizeof op, "%s", node->op_type);
	if (unsupported)
		snprintf(version, sizeof version, "UNSUPPORTED");
	else
		snprintf(version, sizeof version, "v%" PRId64, node->since_version);
	fprintf(d->f, "\tn%zu [shape=box, style=\"rounded,filled\", %s, ", i,
	        unsupported ? "fillcolor=\"#ff9c9c\", color=red, penwidth=2" : "fillcolor=\"#fff3c4\"");
	put_label(d->f, (const char *const[]){op, node->name[0] != '\0' ? node->name : "(unnamed)",
	                                      version, NULL});
	fputs("];\n", d->f);
}

/* Writes one edge from value k's source to DOT node `to`, labelled name and type. */
static int draw_edge(struct dot_state *d, long k, const char *to)
{
	const struct dot_value *v = &d->values[k];
	char *type = type_string(d->model, v->name);

	if (type == NULL)
		return CLI_ERROR;
	fprintf(d->f, "\t%s -> %s [", v->id, to);
	put_label(d->f, (const char *const[]){v->name, type, v->guessed ? "(guessed)" : NULL, NULL});
	fprintf(d->f, "%s];\n", v->guessed ? ", style=dashed, color=red" : "");
	free(type);
	return CLI_OK;
}

/* Draws node i, the edges into it, and records its outputs as sources. */
static int draw_node(struct dot_state *d, size_t i)
{
	struct onnxrun_node_info node;
	char id[32];
	int guessed;

	if (onnxrun_model_node_info(d->model, i, &node) != ONNXRUN_OK)
		return CLI_OK;
	guessed = node.since_version == 0; /* no implementation (an inspected model) */
	draw_node_box(d, i, &node, guessed);
	snprintf(id, sizeof id, "n%zu", i);
	for (size_t k = 0; k < node.input_count; k++) {
		if (node.inputs[k][0] == '\0')
			continue;
		long src = source_of(d, node.inputs[k]);
		if (src < 0 || draw_edge(d, src, id) != CLI_OK)
			return CLI_ERROR;
		guessed |= d->values[src].guessed;
	}
	for (size_t k = 0; k < node.output_count; k++) {
		if (node.outputs[k][0] != '\0' && add_value(d, node.outputs[k], id, guessed) < 0)
			return CLI_ERROR;
	}
	return CLI_OK;
}

/* Draws the graph outputs and the edges into them. */
static int draw_outputs(struct dot_state *d)
{
	struct onnxrun_value_info info;
	char id[32];

	for (size_t i = 0, n = onnxrun_model_output_count(d->model); i < n; i++) {
		if (onnxrun_model_output_info(d->model, i, &info) != ONNXRUN_OK)
			continue;
		snprintf(id, sizeof id, "out%zu", i);
		long src = source_of(d, info.name);
		if (src < 0 ||
		    draw_value_box(d, id, "output", info.name, output_style, d->values[src].guessed) != CLI_OK ||
		    draw_edge(d, src, id) != CLI_OK)
			return CLI_ERROR;
	}
	return CLI_OK;
}

/* Writes the graph's header: its title (model path, IR version, opsets) and defaults. */
static void draw_header(FILE *f, const struct onnxrun_model *model, const char *path)
{
	char line[256];

	fputs("digraph onnx {\n\tgraph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", "
	      "label=\"",
	      f);
	cli_write_dot_text(f, path);
	snprintf(line, sizeof line, "\\nir_version %" PRId64, onnxrun_model_ir_version(model));
	fputs(line, f);
	for (size_t i = 0, n = onnxrun_model_opset_count(model); i < n; i++) {
		const char *domain;
		int64_t version;
		if (onnxrun_model_opset(model, i, &domain, &version) != ONNXRUN_OK)
			continue;
		fputs(i == 0 ? ", opset " : ", ", f);
		cli_write_dot_text(f, domain[0] != '\0' ? domain : "ai.onnx");
		fprintf(f, " %" PRId64, version);
	}
	fputs("\"];\n\tnode [fontname=\"Helvetica\", fontsize=11];\n"
	      "\tedge [fontname=\"Helvetica\", fontsize=9];\n",
	      f);
}

/* Writes the whole DOT text of the model to f. */
static int draw_graph(FILE *f, const struct onnxrun_model *model, const char *path)
{
	struct dot_state d = {f, model, NULL, 0, 0, 0};
	int rc = CLI_ERROR;

	draw_header(f, model, path);
	if (draw_inputs(&d) != CLI_OK)
		goto done;
	for (size_t i = 0, n = onnxrun_model_node_count(model); i < n; i++) {
		if (draw_node(&d, i) != CLI_OK)
			goto done;
	}
	if (draw_outputs(&d) != CLI_OK)
		goto done;
	fputs("}\n", f);
	rc = CLI_OK;
done:
	free(d.values);
	return rc;
}

/*
 * Loads the model; when that fails with UNSUPPORTED, inspects it instead (*ops, *count then
 * list the ops it lacks). When the inspection fails too, the load's message is reported.
 */
static int load_for_drawing(struct onnxrun_env *env, const char *path,
                            struct onnxrun_model **model, struct cli_unsupported **ops,
                            size_t *count)
{
	enum onnxrun_status st = onnxrun_model_load_file(env, path, model);
	char *message;

	if (st == ONNXRUN_OK)
		return CLI_OK;
	if (st != ONNXRUN_ERROR_UNSUPPORTED) {
		cli_lib_error(onnxrun_env_error(env), st, path);
		return CLI_ERROR;
	}
	message = cli_strdup(onnxrun_env_error(env));
	if (message == NULL)
		return CLI_ERROR;
	if (cli_inspect_unsupported(env, path, model, ops, count) != ONNXRUN_OK) {
		cli_lib_error(message, st, path);
		free(message);
		return CLI_ERROR;
	}
	free(message);
	return CLI_OK;
}

/* Opens the --dot destination ("-" is stdout) and writes the graph; reports failures. */
static int write_file(const char *dest, const struct onnxrun_model *model, const char *path)
{
	int to_stdout = strcmp(dest, "-") == 0;
	FILE *f = to_stdout ? stdout : fopen(dest, "w");
	int rc;

	if (f == NULL) {
		cli_error("cannot create '%s': %s", dest, strerror(errno));
		return CLI_ERROR;
	}
	rc = draw_graph(f, model, path);
	if (!to_stdout && fclose(f) != 0 && rc == CLI_OK) {
		cli_error("cannot write '%s': %s", dest, strerror(errno));
		rc = CLI_ERROR;
	}
	return rc;
}

/* Warns about the nodes drawn as unsupported. */
static void warn_unsupported(const struct cli_unsupported *ops, size_t count)
{
	fprintf(stderr, "onnxrun: warning: drawn in red, not supported by onnxrun (types after "
	                "them are guesses):");
	for (size_t i = 0; i < count; i++)
		fprintf(stderr, "%s %s (%s opset %" PRId64 ")", i > 0 ? "," : "", ops[i].op_type,
		        ops[i].domain, ops[i].opset);
	fputc('\n', stderr);
}

/*
 * --dot FILE MODEL: draws the model. Returns the exit code: 0 when the drawing was written
 * (also for a model with unsupported nodes, with a warning), 2 on any error.
 */
int cli_write_dot(const struct cli_options *opts)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct cli_unsupported *ops = NULL;
	size_t count = 0;
	int code = CLI_EXIT_ERROR;

	if (onnxrun_env_create(NULL, &env) != ONNXRUN_OK) {
		cli_error("cannot create the environment");
		return CLI_EXIT_ERROR;
	}
	onnxrun_env_set_log(env, cli_log, NULL);
	if (opts->allow_newer_opset)
		onnxrun_env_set_allow_newer_opset(env, 1);
	if (load_for_drawing(env, opts->model_path, &model, &ops, &count) == CLI_OK &&
	    write_file(opts->dot_path, model, opts->model_path) == CLI_OK) {
		code = CLI_EXIT_OK;
		if (count > 0)
			warn_unsupported(ops, count);
	}
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	cli_unsupported_free(ops, count);
	return code;
}
