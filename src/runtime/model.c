/*
 * model.c - loading a model (parse, resolve, order, infer) and the model query API.
 */
#include <string.h>

#include "../loader/loader.h"
#include "graph.h"
#include "pool.h"

/* Model files larger than this are refused before reading (protobuf's own limit is 2 GiB). */
#define ONNXRUN__MAX_MODEL_BYTES ((uint64_t)2 << 30)

static void free_attr(const struct onnxrun_env *env, struct onnxrun__attr *a)
{
	onnxrun__free(env, a->name);
	onnxrun__free(env, a->s.data);
	onnxrun_tensor_free(a->t);
	onnxrun__free(env, a->floats);
	onnxrun__free(env, a->ints);
	if (a->strings)
		for (size_t i = 0; i < a->count; i++)
			onnxrun__free(env, a->strings[i].data);
	onnxrun__free(env, a->strings);
	if (a->tensors)
		for (size_t i = 0; i < a->count; i++)
			onnxrun_tensor_free(a->tensors[i]);
	onnxrun__free(env, a->tensors);
}

static void free_node(const struct onnxrun_env *env, struct onnxrun__node *node)
{
	if (node->op && node->op->fini && node->op_state)
		node->op->fini(node->op->user_data, node->op_state);
	onnxrun__free(env, node->name);
	onnxrun__free(env, node->op_type);
	onnxrun__free(env, node->domain);
	onnxrun__free(env, node->inputs);
	onnxrun__free(env, node->outputs);
	for (size_t a = 0; a < node->n_attrs; a++)
		free_attr(env, &node->attrs[a]);
	onnxrun__free(env, node->attrs);
	onnxrun__free(env, node->input_names);
	onnxrun__free(env, node->output_names);
}

const struct onnxrun_type onnxrun__type_unknown = { ONNXRUN_DTYPE_UNDEFINED, { -1, { 0 }, { 0 } } };

void onnxrun__model_destroy(struct onnxrun_model *m)
{
	const struct onnxrun_env *env;
	if (!m)
		return;
	env = m->env;
	for (size_t i = 0; i < m->n_nodes; i++)
		free_node(env, &m->nodes[i]);
	onnxrun__free(env, m->nodes);
	for (size_t v = 0; v < m->n_values; v++) {
		onnxrun__free(env, m->values[v].name);
		onnxrun_tensor_free(m->values[v].init);
		onnxrun__free(env, m->values[v].declared);
	}
	onnxrun__free(env, m->values);
	onnxrun__free(env, m->pub_dims);
	onnxrun__free(env, m->load_types);
	for (size_t i = 0; i < m->n_opsets; i++)
		onnxrun__free(env, m->opsets[i].domain);
	onnxrun__free(env, m->opsets);
	for (size_t i = 0; i < m->n_params; i++)
		onnxrun__free(env, m->params[i]);
	onnxrun__free(env, m->params);
	onnxrun__free(env, m->inputs);
	onnxrun__free(env, m->outputs);
	onnxrun__free(env, m->producer_name);
	onnxrun__free(env, m->graph_name);
	onnxrun__metadata_free(env, &m->meta);
	onnxrun__free(env, m->unsupported);
	onnxrun__free(env, m);
}

int32_t onnxrun__model_find_value(const struct onnxrun_model *m, const char *name)
{
	for (size_t v = 0; v < m->n_values; v++)
		if (!strcmp(m->values[v].name, name))
			return (int32_t)v;
	return -1;
}

/* Builds the borrowed name and dim tables the query functions return. The dims are one
 * block of exactly the values' ranks (a table of ONNXRUN_MAX_RANK per value was 192 B each
 * on a microcontroller, most of it unused). */
static enum onnxrun_status build_name_tables(struct onnxrun_model *m, struct onnxrun__err *err)
{
	size_t ndims = 1, at = 0;
	for (size_t v = 0; v < m->n_values; v++)
		ndims += m->load_types[v].shape.rank > 0 ? (size_t)m->load_types[v].shape.rank : 0;
	if (!(m->pub_dims = onnxrun__malloc(m->env, ndims * sizeof *m->pub_dims)))
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	for (size_t v = 0; v < m->n_values; v++) {
		const struct onnxrun_shape *s = &m->load_types[v].shape;
		m->values[v].dtype = m->load_types[v].dtype;
		m->values[v].rank = s->rank;
		m->values[v].pub_dims = m->pub_dims + at;
		at += s->rank > 0 ? (size_t)s->rank : 0;
		for (int32_t i = 0; i < s->rank; i++) {
			m->values[v].pub_dims[i].value = s->dims[i];
			m->values[v].pub_dims[i].param = s->dims[i] < 0 ? s->params[i] : NULL;
		}
	}
	for (size_t k = 0; k < m->n_nodes; k++) {
		struct onnxrun__node *node = &m->nodes[k];
		node->input_names = onnxrun__malloc(m->env, (node->n_inputs + 1) * sizeof(char *));
		node->output_names = onnxrun__malloc(m->env, (node->n_outputs + 1) * sizeof(char *));
		if (!node->input_names || !node->output_names)
			return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		for (size_t i = 0; i < node->n_inputs; i++)
			node->input_names[i] = node->inputs[i] >= 0 ? m->values[node->inputs[i]].name : "";
		for (size_t i = 0; i < node->n_outputs; i++)
			node->output_names[i] = node->outputs[i] >= 0 ? m->values[node->outputs[i]].name : "";
	}
	onnxrun__free(m->env, m->load_types); /* the values hold them now */
	m->load_types = NULL;
	return ONNXRUN_OK;
}

/* Inspection only, after ordering: the nodes that have no kernel, in file order (the order
 * of the load error's list), as indices into the ordered m->nodes. */
static enum onnxrun_status list_unsupported(struct onnxrun_model *m, struct onnxrun__err *err)
{
	size_t n = 0, *by_file;
	for (size_t k = 0; k < m->n_nodes; k++)
		n += !m->nodes[k].op;
	if (!n)
		return ONNXRUN_OK;
	by_file = onnxrun__malloc(m->env, m->n_nodes * sizeof *by_file);
	m->unsupported = onnxrun__malloc(m->env, n * sizeof *m->unsupported);
	if (!by_file || !m->unsupported) {
		onnxrun__free(m->env, by_file);
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory listing unsupported nodes");
	}
	for (size_t f = 0; f < m->n_nodes; f++)
		by_file[f] = SIZE_MAX;
	for (size_t k = 0; k < m->n_nodes; k++)
		if (!m->nodes[k].op)
			by_file[m->nodes[k].file_index] = k;
	for (size_t f = 0; f < m->n_nodes; f++)
		if (by_file[f] != SIZE_MAX)
			m->unsupported[m->n_unsupported++] = by_file[f];
	onnxrun__free(m->env, by_file);
	return ONNXRUN_OK;
}

/* ---- stopping loads ---- */

bool onnxrun__load_should_stop(const struct onnxrun_env *env)
{
	return env->load_ctl && onnxrun__runctl_check(env->load_ctl);
}

enum onnxrun_status onnxrun__load_stopped(const struct onnxrun_env *env, struct onnxrun__err *err)
{
	if (env->load_ctl && atomic_load_explicit(&env->load_ctl->stopped, memory_order_relaxed) == ONNXRUN__STOP_DEADLINE)
		return onnxrun__fail(err, ONNXRUN_ERROR_CANCELLED,
		                     "deadline of %g s exceeded (onnxrun_env_set_load_deadline): load stopped after %.3g s",
		                     (double)env->load_budget_ns / 1e9, (double)(onnxrun__now_ns() - env->load_start_ns) / 1e9);
	return onnxrun__fail(err, ONNXRUN_ERROR_CANCELLED, "load cancelled (onnxrun_env_cancel_load)");
}

void onnxrun_env_cancel_load(struct onnxrun_env *env)
{
	if (env)
		atomic_store_explicit(&env->load_cancel, 1, memory_order_relaxed);
}

void onnxrun_env_clear_cancel_load(struct onnxrun_env *env)
{
	if (env)
		atomic_store_explicit(&env->load_cancel, 0, memory_order_relaxed);
}

enum onnxrun_status onnxrun_env_set_load_deadline(struct onnxrun_env *env, uint64_t budget_us)
{
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	env->load_budget_ns = budget_us > UINT64_MAX / 1000 ? UINT64_MAX : budget_us * 1000; /* saturating */
	return ONNXRUN_OK;
}

/* Parses, resolves, orders and infers; on failure frees everything. An inspection keeps
 * nodes without a kernel and lists them, and calls no op's init. A cancel request or the
 * load deadline stops it between steps (ONNXRUN_ERROR_CANCELLED, the request cleared). */
static enum onnxrun_status load(struct onnxrun_env *env, const void *data, size_t size, const char *base_dir,
                                bool inspect, bool borrowed, struct onnxrun_model **out)
{
	struct onnxrun_model *m;
	struct onnxrun__runctl ctl;
	enum onnxrun_status st;
	env->load_start_ns = onnxrun__now_ns();
	ctl.cancel = &env->load_cancel;
	ctl.deadline_ns = env->load_budget_ns && env->load_budget_ns < UINT64_MAX - env->load_start_ns
	                          ? env->load_start_ns + env->load_budget_ns
	                          : 0;
	atomic_init(&ctl.stopped, ONNXRUN__STOP_NONE);
	env->load_ctl = &ctl;
	if (onnxrun__load_should_stop(env)) {
		st = onnxrun__load_stopped(env, &env->err);
		goto done;
	}
	if (!(m = onnxrun__calloc(env, 1, sizeof *m))) {
		st = onnxrun__fail(&env->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		goto done;
	}
	m->env = env;
	m->inspect_only = inspect;
	m->borrowed = borrowed;
#define STEP(call) (st = (call)) || (onnxrun__load_should_stop(env) && (st = onnxrun__load_stopped(env, &env->err)))
	if (STEP(onnxrun__load_model_proto(m, data, size, base_dir, &env->err)) ||
	    STEP(onnxrun__graph_resolve(m, &env->err)) || STEP(onnxrun__graph_order(m, &env->err)) ||
	    STEP(list_unsupported(m, &env->err)) ||
	    STEP(onnxrun__graph_infer(m, &env->err)) || STEP(build_name_tables(m, &env->err)) ||
	    STEP(onnxrun__graph_init_ops(m, &env->err))) {
		onnxrun__model_destroy(m);
		goto done;
	}
#undef STEP
	*out = m;
done:
	env->load_ctl = NULL;
	if (st == ONNXRUN_ERROR_CANCELLED)
		atomic_store_explicit(&env->load_cancel, 0, memory_order_relaxed);
	return st;
}

static enum onnxrun_status load_buffer(struct onnxrun_env *env, const void *data, size_t size,
                                       const char *base_dir, bool inspect, bool borrowed,
                                       struct onnxrun_model **out)
{
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (!out || (!data && size))
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "NULL model buffer or out");
	return load(env, data, size, base_dir, inspect, borrowed, out);
}

enum onnxrun_status onnxrun_model_load_buffer(struct onnxrun_env *env, const void *data, size_t size,
                                              const char *base_dir, struct onnxrun_model **out)
{
	return load_buffer(env, data, size, base_dir, false, false, out);
}

enum onnxrun_status onnxrun_model_load_borrowed(struct onnxrun_env *env, const void *data, size_t size,
                                                struct onnxrun_model **out)
{
	return load_buffer(env, data, size, NULL, false, true, out);
}

enum onnxrun_status onnxrun_model_inspect_buffer(struct onnxrun_env *env, const void *data, size_t size,
                                                 const char *base_dir, struct onnxrun_model **out)
{
	return load_buffer(env, data, size, base_dir, true, false, out);
}

static enum onnxrun_status load_file(struct onnxrun_env *env, const char *path, bool inspect,
                                     struct onnxrun_model **out)
{
	struct onnxrun__file_view view;
	const char *slash;
	char *dir;
	enum onnxrun_status st;
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (!path || !out)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "NULL path or out");
	/* External data is read relative to the model's folder: "a/b.onnx" -> "a", "b.onnx" -> ".". */
	slash = strrchr(path, '/');
	if (!slash)
		dir = onnxrun__strdup(env, ".");
	else if (slash == path)
		dir = onnxrun__strdup(env, "/");
	else
		dir = onnxrun__strndup(env, path, (size_t)(slash - path));
	if (!dir)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	st = onnxrun__view_file(env, path, ONNXRUN__MAX_MODEL_BYTES, &env->err, &view);
	if (!st) {
		st = load(env, view.data, view.size, dir, inspect, false, out);
		if (st)
			onnxrun__err_prefix(&env->err, "model '%s'", path);
		onnxrun__view_release(env, &view);
	}
	onnxrun__free(env, dir);
	return st;
}

enum onnxrun_status onnxrun_model_load_file(struct onnxrun_env *env, const char *path, struct onnxrun_model **out)
{
	return load_file(env, path, false, out);
}

enum onnxrun_status onnxrun_model_inspect_file(struct onnxrun_env *env, const char *path,
                                               struct onnxrun_model **out)
{
	return load_file(env, path, true, out);
}

void onnxrun_model_free(struct onnxrun_model *m)
{
	onnxrun__model_destroy(m);
}

/* ---- queries ---- */

void onnxrun__value_type(const struct onnxrun__value *v, struct onnxrun_type *out)
{
	memset(out, 0, sizeof *out);
	out->dtype = v->dtype;
	out->shape.rank = v->rank;
	for (int32_t i = 0; i < v->rank; i++) {
		out->shape.dims[i] = v->pub_dims[i].value;
		out->shape.params[i] = v->pub_dims[i].param;
	}
}

static void fill_info(const struct onnxrun__value *v, struct onnxrun_value_info *out)
{
	out->name = v->name;
	out->dtype = v->dtype;
	out->rank = v->rank;
	out->dims = v->pub_dims;
}

int64_t onnxrun_model_ir_version(const struct onnxrun_model *m)
{
	return m ? m->ir_version : 0;
}

size_t onnxrun_model_opset_count(const struct onnxrun_model *m)
{
	return m ? m->n_opsets : 0;
}

enum onnxrun_status onnxrun_model_opset(const struct onnxrun_model *m, size_t i, const char **domain,
                                        int64_t *version)
{
	if (!m || i >= m->n_opsets || !domain || !version)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	*domain = m->opsets[i].domain;
	*version = m->opsets[i].version;
	return ONNXRUN_OK;
}

size_t onnxrun_model_input_count(const struct onnxrun_model *m)
{
	return m ? m->n_inputs : 0;
}

enum onnxrun_status onnxrun_model_input_info(const struct onnxrun_model *m, size_t i,
                                             struct onnxrun_value_info *out)
{
	if (!m || i >= m->n_inputs || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	fill_info(&m->values[m->inputs[i]], out);
	return ONNXRUN_OK;
}

size_t onnxrun_model_output_count(const struct onnxrun_model *m)
{
	return m ? m->n_outputs : 0;
}

enum onnxrun_status onnxrun_model_output_info(const struct onnxrun_model *m, size_t i,
                                              struct onnxrun_value_info *out)
{
	if (!m || i >= m->n_outputs || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	fill_info(&m->values[m->outputs[i]], out);
	return ONNXRUN_OK;
}

size_t onnxrun_model_node_count(const struct onnxrun_model *m)
{
	return m ? m->n_nodes : 0;
}

enum onnxrun_status onnxrun_model_node_info(const struct onnxrun_model *m, size_t i, struct onnxrun_node_info *out)
{
	const struct onnxrun__node *node;
	if (!m || i >= m->n_nodes || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	node = &m->nodes[i];
	out->name = node->name;
	out->op_type = node->op_type;
	out->domain = node->domain;
	out->since_version = node->op ? node->op->since_version : 0; /* 0: no kernel (inspection) */
	out->input_count = node->n_inputs;
	out->inputs = node->input_names;
	out->output_count = node->n_outputs;
	out->outputs = node->output_names;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_model_value_info(const struct onnxrun_model *m, const char *name,
                                             struct onnxrun_value_info *out)
{
	int32_t v;
	if (!m || !name || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	if ((v = onnxrun__model_find_value(m, name)) < 0)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	fill_info(&m->values[v], out);
	return ONNXRUN_OK;
}

size_t onnxrun_model_unsupported_count(const struct onnxrun_model *m)
{
	return m ? m->n_unsupported : 0;
}

enum onnxrun_status onnxrun_model_unsupported(const struct onnxrun_model *m, size_t i,
                                              struct onnxrun_unsupported_info *out)
{
	const struct onnxrun__node *node;
	if (!m || i >= m->n_unsupported || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	node = &m->nodes[m->unsupported[i]];
	out->node_name = node->name;
	out->op_type = node->op_type;
	out->domain = node->domain;
	out->opset = node->opset;
	out->node_index = m->unsupported[i];
	return ONNXRUN_OK;
}
