/*
 * unsupported.c - the unsupported ops of a model that fails to load with
 * ONNXRUN_ERROR_UNSUPPORTED, as the library reports them: the model is inspected
 * (onnxrun_model_inspect_file), which keeps the nodes that have no implementation and lists
 * them (onnxrun_model_unsupported), however many there are. "onnxrun test" reports the
 * distinct ops; --dot draws the inspected model.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Index of (domain, op_type) in the list, or -1. */
static long find_op(const struct cli_unsupported *list, size_t n, const char *domain, const char *op)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].op_type, op) == 0 && strcmp(list[i].domain, domain) == 0)
			return (long)i;
	}
	return -1;
}

/* The distinct ops of the model's unsupported nodes, in the order they first appear in the
 * file, with the number of nodes of each. Returns CLI_ERROR only when out of memory. */
static int list_ops(const struct onnxrun_model *model, struct cli_unsupported **out, size_t *count)
{
	size_t total = onnxrun_model_unsupported_count(model), n = 0;
	struct cli_unsupported *list = cli_calloc(total > 0 ? total : 1, sizeof *list);

	if (list == NULL)
		return CLI_ERROR;
	for (size_t i = 0; i < total; i++) {
		struct onnxrun_unsupported_info u;
		if (onnxrun_model_unsupported(model, i, &u) != ONNXRUN_OK)
			continue;
		const char *domain = u.domain[0] != '\0' ? u.domain : "ai.onnx";
		long k = find_op(list, n, domain, u.op_type);
		if (k >= 0) {
			list[k].nodes++;
			continue;
		}
		list[n] = (struct cli_unsupported){cli_strdup(u.op_type), cli_strdup(domain), u.opset, 1};
		n++;
		if (list[n - 1].op_type == NULL || list[n - 1].domain == NULL) {
			cli_unsupported_free(list, n);
			return CLI_ERROR;
		}
	}
	*out = list;
	*count = n;
	return CLI_OK;
}

/*
 * Inspects the model at `path` with env. On ONNXRUN_OK, *model is the inspected model (to
 * free; it cannot run) and *list / *count its distinct unsupported ops (*count may be 0).
 * Otherwise nothing is returned and the status is the inspection's (message in
 * onnxrun_env_error), or OUT_OF_MEMORY when the list could not be built.
 */
enum onnxrun_status cli_inspect_unsupported(struct onnxrun_env *env, const char *path,
                                            struct onnxrun_model **model,
                                            struct cli_unsupported **list, size_t *count)
{
	enum onnxrun_status st = onnxrun_model_inspect_file(env, path, model);

	*list = NULL;
	*count = 0;
	if (st != ONNXRUN_OK)
		return st;
	if (list_ops(*model, list, count) != CLI_OK) {
		onnxrun_model_free(*model);
		*model = NULL;
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	return ONNXRUN_OK;
}

void cli_unsupported_free(struct cli_unsupported *list, size_t count)
{
	for (size_t i = 0; list != NULL && i < count; i++) {
		free(list[i].op_type);
		free(list[i].domain);
	}
	free(list);
}
