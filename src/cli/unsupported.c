/*
 * unsupported.c - what the tool makes of a model that fails to load with
 * ONNXRUN_ERROR_UNSUPPORTED: the list of unsupported ops parsed from the library's message
 * ("N unsupported nodes: node 'a' (Relu, domain 'ai.onnx' opset 13); node 'b' (...)"), and
 * placeholder ops registered under those names so that --dot can still load and draw the
 * graph. The public API has no structured form of this list (see docs/testing.md).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Whether c may appear in an op type as the message prints it. */
static int op_char(char c)
{
	return c != '\0' && c != ' ' && c != ',' && c != '(' && c != ')' && c != '\'';
}

/* Copies s[0..len) into a heap string; NULL when out of memory. */
static char *dup_range(const char *s, size_t len)
{
	char *d = calloc(len + 1, 1);

	if (d != NULL)
		memcpy(d, s, len);
	return d;
}

/*
 * Matches "(OP, domain 'DOMAIN' opset N)" at p. On success fills the ranges and the opset
 * and returns the length matched; 0 when p does not start such a group.
 */
static size_t match_group(const char *p, size_t *op_len, const char **dom, size_t *dom_len,
                          int64_t *opset)
{
	const char *q = p + 1;
	static const char mid[] = ", domain '";
	static const char tail[] = "' opset ";

	if (*p != '(')
		return 0;
	while (op_char(*q))
		q++;
	*op_len = (size_t)(q - (p + 1));
	if (*op_len == 0 || strncmp(q, mid, sizeof mid - 1) != 0)
		return 0;
	*dom = q + sizeof mid - 1;
	q = strchr(*dom, '\'');
	if (q == NULL || strncmp(q, tail, sizeof tail - 1) != 0)
		return 0;
	*dom_len = (size_t)(q - *dom);
	q += sizeof tail - 1;
	if (*q < '0' || *q > '9')
		return 0;
	*opset = 0;
	while (*q >= '0' && *q <= '9' && *opset < INT64_MAX / 10 - 9)
		*opset = *opset * 10 + (*q++ - '0');
	return *q == ')' ? (size_t)(q + 1 - p) : 0;
}

/* Whether the list already holds (domain, op_type). */
static int listed(const struct cli_unsupported *list, size_t n, const char *op, size_t op_len,
                  const char *dom, size_t dom_len)
{
	for (size_t i = 0; i < n; i++) {
		if (strlen(list[i].op_type) == op_len && strncmp(list[i].op_type, op, op_len) == 0 &&
		    strlen(list[i].domain) == dom_len && strncmp(list[i].domain, dom, dom_len) == 0)
			return 1;
	}
	return 0;
}

/*
 * Parses the unsupported ops out of an UNSUPPORTED load message into a heap array of
 * distinct (domain, op_type) in message order. *count may be 0 (the message names no node,
 * e.g. an unsupported attribute type). Returns CLI_ERROR only when out of memory.
 */
int cli_parse_unsupported(const char *message, struct cli_unsupported **out, size_t *count)
{
	size_t n = 0, cap = 0;
	struct cli_unsupported *list = NULL;

	*out = NULL;
	*count = 0;
	for (const char *p = strchr(message, '('); p != NULL; p = strchr(p + 1, '(')) {
		size_t op_len, dom_len, len;
		const char *dom;
		int64_t opset;
		if ((len = match_group(p, &op_len, &dom, &dom_len, &opset)) == 0 ||
		    listed(list, n, p + 1, op_len, dom, dom_len))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 4;
			struct cli_unsupported *grown = realloc(list, cap * sizeof *list);
			if (grown == NULL)
				goto oom;
			list = grown;
		}
		list[n] = (struct cli_unsupported){dup_range(p + 1, op_len), dup_range(dom, dom_len),
		                                   opset};
		n++;
		if (list[n - 1].op_type == NULL || list[n - 1].domain == NULL)
			goto oom;
		p += len - 1;
	}
	*out = list;
	*count = n;
	return CLI_OK;
oom:
	cli_unsupported_free(list, n);
	cli_error("out of memory");
	return CLI_ERROR;
}

void cli_unsupported_free(struct cli_unsupported *list, size_t count)
{
	for (size_t i = 0; list != NULL && i < count; i++) {
		free(list[i].op_type);
		free(list[i].domain);
	}
	free(list);
}

/* Placeholder infer: every output takes input 0's dtype (a guess) and an unknown shape, so
 * that the nodes after it still infer. Whoever draws the graph marks these values. */
static enum onnxrun_status stub_infer(struct onnxrun_op_context *ctx,
                                      const struct onnxrun_type *inputs, size_t n_inputs,
                                      struct onnxrun_type *outputs, size_t n_outputs)
{
	(void)ctx;
	for (size_t o = 0; o < n_outputs; o++) {
		outputs[o].dtype = n_inputs > 0 ? inputs[0].dtype : ONNXRUN_DTYPE_UNDEFINED;
		outputs[o].shape.rank = -1;
	}
	return ONNXRUN_OK;
}

/* Placeholder compute: never runs anything. */
static enum onnxrun_status stub_compute(struct onnxrun_op_context *ctx,
                                        const struct onnxrun_tensor *const *inputs,
                                        size_t n_inputs, struct onnxrun_tensor *const *outputs,
                                        size_t n_outputs)
{
	(void)inputs;
	(void)n_inputs;
	(void)outputs;
	(void)n_outputs;
	return onnxrun_op_fail(ctx, ONNXRUN_ERROR_UNSUPPORTED, "placeholder op cannot run");
}

/*
 * Registers a placeholder op (since_version 1) on env for each listed op, so that a model
 * that failed with UNSUPPORTED loads for inspection. Such a model must never be run.
 */
int cli_register_stub_ops(struct onnxrun_env *env, const struct cli_unsupported *list,
                          size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct onnxrun_op op;
		memset(&op, 0, sizeof op);
		op.domain = list[i].domain;
		op.op_type = list[i].op_type;
		op.since_version = 1;
		op.infer = stub_infer;
		op.compute = stub_compute;
		enum onnxrun_status st = onnxrun_env_register_op(env, &op);
		if (st != ONNXRUN_OK) {
			cli_lib_error(onnxrun_env_error(env), st, list[i].op_type);
			return CLI_ERROR;
		}
	}
	return CLI_OK;
}
