/*
 * info.c - --info: prints the model's IR version, opsets, inputs and outputs with their
 * declared (possibly symbolic) shapes, the nodes in execution order with their inferred
 * output shapes, and the planned peak memory. Runs nothing.
 */
#include <inttypes.h>

#include "cli.h"

/* Prints "ir_version: N" and one "opset: <domain> <version>" line per import. */
static void print_header(const struct onnxrun_model *model, const char *path)
{
	printf("model: %s\n", path);
	printf("ir_version: %" PRId64 "\n", onnxrun_model_ir_version(model));
	for (size_t i = 0, n = onnxrun_model_opset_count(model); i < n; i++) {
		const char *domain;
		int64_t version;
		if (onnxrun_model_opset(model, i, &domain, &version) != ONNXRUN_OK)
			continue;
		printf("opset: %s %" PRId64 "\n", domain[0] != '\0' ? domain : "ai.onnx", version);
	}
}

/* Prints "input 'x': float [N,3,?,4]" lines, then the same for outputs. */
static void print_values(const struct onnxrun_model *model)
{
	struct onnxrun_value_info info;

	for (size_t i = 0, n = onnxrun_model_input_count(model); i < n; i++) {
		if (onnxrun_model_input_info(model, i, &info) != ONNXRUN_OK)
			continue;
		printf("input '%s': ", info.name);
		cli_print_value_type(stdout, &info);
		fputc('\n', stdout);
	}
	for (size_t i = 0, n = onnxrun_model_output_count(model); i < n; i++) {
		if (onnxrun_model_output_info(model, i, &info) != ONNXRUN_OK)
			continue;
		printf("output '%s': ", info.name);
		cli_print_value_type(stdout, &info);
		fputc('\n', stdout);
	}
}

/* Prints " <type>" of value `name`: concrete from the prepared session when it can, else
 * as inferred at load; nothing when neither knows the value. */
static void print_value_type(const struct onnxrun_model *model,
                             const struct onnxrun_session *session, const char *name)
{
	struct onnxrun_value_info info;

	if ((session != NULL && onnxrun_session_value_info(session, name, &info) == ONNXRUN_OK) ||
	    onnxrun_model_value_info(model, name, &info) == ONNXRUN_OK) {
		fputc(' ', stdout);
		cli_print_value_type(stdout, &info);
	}
}

/* Prints "node 'name' (Op vN): a, b -> y float [1,2]" for node i. */
static void print_node(const struct onnxrun_model *model, const struct onnxrun_session *session,
                       size_t i)
{
	struct onnxrun_node_info node;

	if (onnxrun_model_node_info(model, i, &node) != ONNXRUN_OK)
		return;
	if (node.name[0] != '\0')
		printf("node '%s' (", node.name);
	else
		printf("node #%zu (", i);
	if (node.domain[0] != '\0')
		printf("%s.", node.domain);
	printf("%s v%" PRId64 "):", node.op_type, node.since_version);
	for (size_t k = 0; k < node.input_count; k++)
		printf("%s %s", k > 0 ? "," : "", node.inputs[k][0] != '\0' ? node.inputs[k] : "''");
	fputs(" ->", stdout);
	for (size_t k = 0; k < node.output_count; k++) {
		const char *out = node.outputs[k];
		printf("%s %s", k > 0 ? "," : "", out[0] != '\0' ? out : "''");
		if (out[0] != '\0')
			print_value_type(model, session, out);
	}
	fputc('\n', stdout);
}

/* Whether some input has a dim that is neither known nor bound with --dim. */
static int has_unbound_dims(const struct onnxrun_model *model, const struct cli_options *opts)
{
	struct onnxrun_value_info info;

	for (size_t i = 0, n = onnxrun_model_input_count(model); i < n; i++) {
		if (onnxrun_model_input_info(model, i, &info) != ONNXRUN_OK || info.rank < 0)
			return 1;
		for (int32_t d = 0; d < info.rank; d++) {
			const struct onnxrun_dim *dim = &info.dims[d];
			if (dim->value < 0 && (dim->param == NULL || cli_find_dim(opts, dim->param) == NULL))
				return 1;
		}
	}
	return 0;
}

/* Prints the planned memory of a session, or why it is unknown. */
static void print_memory(const struct onnxrun_model *model, const struct onnxrun_session *session,
                         int prepared, const struct cli_options *opts)
{
	uint64_t bytes;
	char human[32];

	if (!prepared && has_unbound_dims(model, opts)) {
		puts("planned memory: unknown (bind symbolic dims with --dim)");
	} else if (!prepared) {
		printf("planned memory: unknown (%s)\n", onnxrun_session_error(session));
	} else if (onnxrun_session_planned_bytes(session, &bytes) != ONNXRUN_OK) {
		printf("planned memory: unknown (%s)\n", onnxrun_session_error(session));
	} else {
		cli_format_bytes(bytes, human, sizeof human);
		printf("planned memory: %" PRIu64 " bytes (%s)\n", bytes, human);
	}
	if (prepared) {
		size_t arena;
		if (cli_arena_estimate(opts, &arena) == 0) {
			cli_format_bytes(arena, human, sizeof human);
			printf("arena for a 32-bit bare-metal build (load + one session): %zu bytes (%s)\n", arena, human);
		} else {
			puts("arena for a 32-bit bare-metal build: unknown (the borrowed load or prepare failed)");
		}
	}
}

/*
 * --info: prints the model description. A session is created and prepared with the --dim
 * bindings to learn concrete shapes and the planned memory; a failing prepare is reported
 * on the memory line, not as an error. Bad --dim bindings are errors.
 */
int cli_print_info(const struct onnxrun_model *model, const struct cli_options *opts)
{
	struct onnxrun_session *session = NULL;
	enum onnxrun_status st = onnxrun_session_create(model, &session);
	int prepared;

	if (st != ONNXRUN_OK) {
		cli_error("cannot create a session: %s", onnxrun_status_str(st));
		return CLI_ERROR;
	}
	if (cli_bind_dims(session, opts) != CLI_OK) {
		onnxrun_session_free(session);
		return CLI_ERROR;
	}
	prepared = onnxrun_session_prepare(session) == ONNXRUN_OK;
	print_header(model, opts->model_path);
	print_values(model);
	for (size_t i = 0, n = onnxrun_model_node_count(model); i < n; i++)
		print_node(model, prepared ? session : NULL, i);
	print_memory(model, session, prepared, opts);
	onnxrun_session_free(session);
	return CLI_OK;
}
