/*
 * op_api.c - custom op registration and the accessors op callbacks use.
 */
#include <stdio.h>
#include <string.h>

#include "pool.h"

enum onnxrun_status onnxrun_env_register_op(struct onnxrun_env *env, const struct onnxrun_op *op)
{
	struct onnxrun_op *grown, *n;
	const char *domain;
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (!op || !op->domain || !op->op_type || !op->op_type[0] || !op->infer || !op->compute ||
	    op->since_version < 1)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "register op: domain, op_type, infer, compute and since_version >= 1 are "
		                     "required");
	domain = strcmp(op->domain, "ai.onnx") ? op->domain : "";
	for (size_t i = 0; i < env->n_ops; i++)
		if (!strcmp(env->ops[i].domain, domain) && !strcmp(env->ops[i].op_type, op->op_type) &&
		    env->ops[i].since_version == op->since_version)
			return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
			                     "register op: %s (domain '%s') version %d is already registered",
			                     op->op_type, domain, op->since_version);
	grown = onnxrun__malloc(env, (env->n_ops + 1) * sizeof *grown);
	if (!grown)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	if (env->n_ops)
		memcpy(grown, env->ops, env->n_ops * sizeof *grown);
	n = &grown[env->n_ops];
	*n = *op;
	n->domain = onnxrun__strdup(env, domain);
	n->op_type = onnxrun__strdup(env, op->op_type);
	if (!n->domain || !n->op_type) {
		onnxrun__free(env, (char *)n->domain);
		onnxrun__free(env, (char *)n->op_type);
		onnxrun__free(env, grown);
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	}
	onnxrun__free(env, env->ops);
	env->ops = grown;
	env->n_ops++;
	return ONNXRUN_OK;
}

void onnxrun__env_free_ops(struct onnxrun_env *env)
{
	for (size_t i = 0; i < env->n_ops; i++) {
		if (env->ops[i].user_data_free)
			env->ops[i].user_data_free(env->ops[i].user_data);
		onnxrun__free(env, (char *)env->ops[i].domain);
		onnxrun__free(env, (char *)env->ops[i].op_type);
	}
	onnxrun__free(env, env->ops);
	env->ops = NULL;
	env->n_ops = 0;
}

const char *onnxrun_op_node_name(const struct onnxrun_op_context *ctx)
{
	return ctx ? ctx->node->name : "";
}

void *onnxrun_op_user_data(const struct onnxrun_op_context *ctx)
{
	return ctx && ctx->node->op ? ctx->node->op->user_data : NULL;
}

void *onnxrun_op_state(const struct onnxrun_op_context *ctx)
{
	return ctx ? ctx->state : NULL;
}

int onnxrun_op_threads(const struct onnxrun_op_context *ctx)
{
	return ctx ? ctx->threads : 1;
}

enum onnxrun_status onnxrun_op_parallel_for(struct onnxrun_op_context *ctx, int64_t n, onnxrun_parallel_fn fn,
                                            void *arg)
{
	if (!ctx || !fn || n < 0)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	/* onnxrun_parallel_fn and the pool's item function have the same signature */
	if (onnxrun__pool_run_ctl(ctx->pool, onnxrun_op_threads(ctx), n, fn, arg, ctx->ctl))
		return ONNXRUN_OK;
	/* the session replaces this message with the cancel or deadline one */
	return ctx->node ? onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_CANCELLED, ctx->node, "run stopped")
	                 : ONNXRUN_ERROR_CANCELLED;
}

enum onnxrun_status onnxrun__op_parallel(struct onnxrun_op_context *ctx, int max_threads, int64_t n,
                                         onnxrun_parallel_fn fn, void *arg)
{
	const int threads = max_threads < onnxrun_op_threads(ctx) ? max_threads : onnxrun_op_threads(ctx);
	if (onnxrun__pool_run_ctl(ctx->pool, threads < 1 ? 1 : threads, n, fn, arg, ctx->ctl))
		return ONNXRUN_OK;
	return ctx->node ? onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_CANCELLED, ctx->node, "run stopped")
	                 : ONNXRUN_ERROR_CANCELLED;
}

int onnxrun_op_should_stop(struct onnxrun_op_context *ctx)
{
	return ctx && onnxrun__runctl_check(ctx->ctl);
}

int onnxrun_op_has_attr(const struct onnxrun_op_context *ctx, const char *name)
{
	return ctx && name && onnxrun__node_attr(ctx->node, name) != NULL;
}

enum onnxrun_status onnxrun_op_attr_int(struct onnxrun_op_context *ctx, const char *name, int64_t def, int64_t *out)
{
	if (!ctx || !name || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	return onnxrun__attr_int(ctx->node, name, def, out, NULL, ctx->err);
}

enum onnxrun_status onnxrun_op_attr_ints(struct onnxrun_op_context *ctx, const char *name, const int64_t **out,
                                         size_t *count)
{
	if (!ctx || !name || !out || !count)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	return onnxrun__attr_ints(ctx->node, name, out, count, NULL, ctx->err);
}

enum onnxrun_status onnxrun_op_attr_string(struct onnxrun_op_context *ctx, const char *name, const char *def,
                                           const char **out)
{
	if (!ctx || !name || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	return onnxrun__attr_string(ctx->node, name, def, out, NULL, ctx->err);
}

/* FLOAT and FLOATS have no internal getter (the built-ins need none). */
static const struct onnxrun__attr *typed_attr(struct onnxrun_op_context *ctx, const char *name,
                                              enum onnxrun__attr_type type, enum onnxrun_status *st)
{
	const struct onnxrun__attr *a = onnxrun__node_attr(ctx->node, name);
	*st = ONNXRUN_OK;
	if (a && a->type != type) {
		*st = onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_INVALID_MODEL, ctx->node,
		                         "attribute '%s' must be of type %s", name,
		                         type == ONNXRUN__ATTR_FLOAT ? "float" : "floats");
		return NULL;
	}
	return a;
}

enum onnxrun_status onnxrun_op_attr_float(struct onnxrun_op_context *ctx, const char *name, float def, float *out)
{
	const struct onnxrun__attr *a;
	enum onnxrun_status st;
	if (!ctx || !name || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	a = typed_attr(ctx, name, ONNXRUN__ATTR_FLOAT, &st);
	if (!st)
		*out = a ? a->f : def;
	return st;
}

enum onnxrun_status onnxrun_op_attr_floats(struct onnxrun_op_context *ctx, const char *name, const float **out,
                                           size_t *count)
{
	const struct onnxrun__attr *a;
	enum onnxrun_status st;
	if (!ctx || !name || !out || !count)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	a = typed_attr(ctx, name, ONNXRUN__ATTR_FLOATS, &st);
	if (!st) {
		*out = a ? a->floats : NULL;
		*count = a ? a->count : 0;
	}
	return st;
}

void onnxrun__op_rebuilds_input(struct onnxrun_op_context *ctx, size_t i)
{
	if (ctx && ctx->rebuilds && i < 32)
		*ctx->rebuilds |= UINT32_C(1) << i;
}

const struct onnxrun_tensor *onnxrun__op_constant_bytes(const struct onnxrun_op_context *ctx, size_t i,
                                                        const void **bytes)
{
	const struct onnxrun_tensor *t;
	int32_t v;
	*bytes = NULL;
	if (!ctx || !ctx->model || i >= ctx->node->n_inputs || (v = ctx->node->inputs[i]) < 0)
		return NULL;
	if (ctx->model->values[v].kind != ONNXRUN__VALUE_INITIALIZER || !(t = ctx->model->values[v].init))
		return NULL;
	*bytes = t->data ? t->data : t->pending;
	return t;
}

const struct onnxrun_tensor *onnxrun_op_constant_input(const struct onnxrun_op_context *ctx, size_t i)
{
	const void *bytes;
	struct onnxrun__err scratch;
	struct onnxrun_tensor *t = (struct onnxrun_tensor *)onnxrun__op_constant_bytes(ctx, i, &bytes);
	/* A pending initializer (loading only) is copied now, for ops that read t->data. When
	 * that copy fails the input reads as not constant, and onnxrun__graph_init_ops fails
	 * the load after this init (the tensor's pending_failed). */
	if (t && t->pending && onnxrun__tensor_materialize(t, &scratch))
		return NULL;
	return t;
}

enum onnxrun_status onnxrun_op_fail(struct onnxrun_op_context *ctx, enum onnxrun_status status, const char *fmt, ...)
{
	char msg[ONNXRUN__ERR_LEN];
	va_list ap;
	if (!ctx)
		return status;
	va_start(ap, fmt);
	onnxrun__vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return onnxrun__node_fail(ctx->err, status, ctx->node, "%s", msg);
}
