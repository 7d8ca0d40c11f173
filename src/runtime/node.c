/*
 * node.c - attribute getters and node-scoped error messages for op implementations.
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

static const char *attr_type_name(enum onnxrun__attr_type t)
{
	static const char *names[] = { "undefined", "float", "int", "string", "tensor", "graph",
		                       "floats", "ints", "strings", "tensors", "graphs",
		                       "sparse_tensor", "sparse_tensors", "type_proto", "type_protos" };
	return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

enum onnxrun_status onnxrun__node_fail(struct onnxrun__err *err, enum onnxrun_status status,
                                       const struct onnxrun__node *node, const char *fmt, ...)
{
	char reason[ONNXRUN__ERR_LEN];
	va_list ap;
	va_start(ap, fmt);
	onnxrun__vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	return onnxrun__fail(err, status, "node '%s' (%s): %s", node->name ? node->name : "",
	                     node->op_type, reason);
}

const struct onnxrun__attr *onnxrun__node_attr(const struct onnxrun__node *node, const char *name)
{
	for (size_t i = 0; i < node->n_attrs; i++)
		if (strcmp(node->attrs[i].name, name) == 0)
			return &node->attrs[i];
	return NULL;
}

static enum onnxrun_status check_type(const struct onnxrun__node *node, const struct onnxrun__attr *a,
                                      enum onnxrun__attr_type want, struct onnxrun__err *err)
{
	if (a->type == want)
		return ONNXRUN_OK;
	return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
	                          "attribute '%s' must be of type %s, not %s", a->name,
	                          attr_type_name(want), attr_type_name(a->type));
}

enum onnxrun_status onnxrun__attr_int(const struct onnxrun__node *node, const char *name, int64_t def,
                                      int64_t *out, bool *found, struct onnxrun__err *err)
{
	const struct onnxrun__attr *a = onnxrun__node_attr(node, name);
	enum onnxrun_status st;
	if (found)
		*found = a != NULL;
	if (!a) {
		*out = def;
		return ONNXRUN_OK;
	}
	if ((st = check_type(node, a, ONNXRUN__ATTR_INT, err)))
		return st;
	*out = a->i;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__attr_ints(const struct onnxrun__node *node, const char *name,
                                       const int64_t **out, size_t *count, bool *found,
                                       struct onnxrun__err *err)
{
	const struct onnxrun__attr *a = onnxrun__node_attr(node, name);
	enum onnxrun_status st;
	if (found)
		*found = a != NULL;
	*out = NULL;
	*count = 0;
	if (!a)
		return ONNXRUN_OK;
	if ((st = check_type(node, a, ONNXRUN__ATTR_INTS, err)))
		return st;
	*out = a->ints;
	*count = a->count;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__attr_string(const struct onnxrun__node *node, const char *name, const char *def,
                                         const char **out, bool *found, struct onnxrun__err *err)
{
	const struct onnxrun__attr *a = onnxrun__node_attr(node, name);
	enum onnxrun_status st;
	if (found)
		*found = a != NULL;
	if (!a) {
		*out = def;
		return ONNXRUN_OK;
	}
	if ((st = check_type(node, a, ONNXRUN__ATTR_STRING, err)))
		return st;
	*out = a->s.data ? a->s.data : "";
	return ONNXRUN_OK;
}
