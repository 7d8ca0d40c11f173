/*
 * registry.c - finds an op implementation by (domain, op_type, opset) among the built-ins.
 */
#include <string.h>

#include "ops.h"

#define ONNXRUN__LIST_OP(sym) onnxrun__op_##sym,
static const struct onnxrun_op *const builtin_tables[] = { ONNXRUN__BUILTIN_OPS(ONNXRUN__LIST_OP) };
#undef ONNXRUN__LIST_OP

/* The best match among n ops in table (or NULL). */
static const struct onnxrun_op *best_in(const struct onnxrun_op *table, size_t n, const char *domain,
                                        const char *op_type, int64_t opset)
{
	const struct onnxrun_op *best = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct onnxrun_op *op = &table[i];
		if (strcmp(op->domain, domain) || strcmp(op->op_type, op_type))
			continue;
		if (op->since_version <= opset && (!best || op->since_version > best->since_version))
			best = op;
	}
	return best;
}

const struct onnxrun_op *onnxrun__registry_find(const struct onnxrun_env *env, const char *domain,
                                                const char *op_type, int64_t opset)
{
	const struct onnxrun_op *best = env ? best_in(env->ops, env->n_ops, domain, op_type, opset) : NULL;
	if (best)
		return best;
	for (size_t t = 0; t < sizeof builtin_tables / sizeof builtin_tables[0]; t++) {
		for (const struct onnxrun_op *op = builtin_tables[t]; op->op_type; op++) {
			if (strcmp(op->domain, domain) || strcmp(op->op_type, op_type))
				continue;
			if (op->since_version <= opset && (!best || op->since_version > best->since_version))
				best = op;
		}
	}
	return best;
}

int onnxrun__registry_newest(const char *domain, const char *op_type)
{
	int newest = 0;
	for (size_t t = 0; t < sizeof builtin_tables / sizeof builtin_tables[0]; t++)
		for (const struct onnxrun_op *op = builtin_tables[t]; op->op_type; op++)
			if (!strcmp(op->domain, domain) && !strcmp(op->op_type, op_type) &&
			    op->since_version > newest)
				newest = op->since_version;
	return newest;
}

#if ONNXRUN__F32_ONLY
enum onnxrun_status onnxrun__dtype_compiled_out(struct onnxrun__err *err, const struct onnxrun__node *node,
                                                const char *what, enum onnxrun_dtype t)
{
	if (t == ONNXRUN_DTYPE_FLOAT)
		return ONNXRUN_OK;
	return onnxrun__node_fail(err, ONNXRUN_ERROR_UNSUPPORTED, node,
	                          "%s has dtype %s, which this build leaves out (ONNXRUN_FLOAT32_ONLY: "
	                          "float32 only)", what, onnxrun_dtype_name(t));
}
#endif
