/*
 * graph.c - after parsing: resolve each node's kernel, order the nodes (Kahn, ties in file
 * order), and infer every value's dtype and (symbolic) shape.
 */
#include <stdio.h>
#include <string.h>

#include "graph.h"

/* Newest ai.onnx opset whose op versions onnxrun knows. */

static int64_t opset_for(const struct onnxrun_model *m, const char *domain, bool *found)
{
	for (size_t i = 0; i < m->n_opsets; i++)
		if (!strcmp(m->opsets[i].domain, domain)) {
			*found = true;
			return m->opsets[i].version;
		}
	*found = false;
	return 0;
}

/* Appends "; node 'x' (Op, domain opset N)" to buf for the unsupported-node message. */
static void append_unsupported(char *buf, size_t len, size_t *at, const struct onnxrun__node *node)
{
	int n;
	if (*at >= len)
		return;
	n = snprintf(buf + *at, len - *at, "%snode '%s' (%s, domain '%s' opset %lld)", *at ? "; " : "",
	             node->name, node->op_type, node->domain[0] ? node->domain : "ai.onnx",
	             (long long)node->opset);
	*at += n > 0 ? (size_t)n : 0;
}

enum onnxrun_status onnxrun__graph_resolve(struct onnxrun_model *m, struct onnxrun__err *err)
{
	/* A node in a domain the model does not import makes the model invalid (not unsupported). */
	for (size_t i = 0; i < m->n_nodes; i++) {
		bool imported;
		opset_for(m, m->nodes[i].domain, &imported);
		if (!imported)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, &m->nodes[i],
			                          "domain '%s' has no opset import",
			                          m->nodes[i].domain[0] ? m->nodes[i].domain : "ai.onnx");
	}
	/* The opset policy (onnxrun_env_set_allow_newer_opset): a newer ai.onnx opset may give an
	 * op another meaning, so it is refused unless the caller allows it. */
	for (size_t i = 0; i < m->n_opsets; i++) {
		const struct onnxrun__opset *o = &m->opsets[i];
		if (o->domain[0] || o->version <= ONNXRUN_NEWEST_KNOWN_OPSET)
			continue;
		if (!m->env->allow_newer_opset)
			return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED,
			                     "opset %lld of ai.onnx is newer than the newest onnxrun knows (%d): an "
			                     "op may mean something else there, so the model is refused (allow "
			                     "newer opsets to run the newest known op versions: "
			                     "onnxrun_env_set_allow_newer_opset, the CLI's --allow-newer-opset)",
			                     (long long)o->version, ONNXRUN_NEWEST_KNOWN_OPSET);
		onnxrun__log(m->env, ONNXRUN_LOG_WARNING,
		             "opset %lld of ai.onnx is newer than the newest known (%d); allowed, using the "
		             "newest known op versions", (long long)o->version, ONNXRUN_NEWEST_KNOWN_OPSET);
	}
	char list[ONNXRUN__ERR_LEN - 64];
	size_t at = 0, missing = 0;
	bool found;
	list[0] = '\0';
	for (size_t i = 0; i < m->n_nodes; i++) {
		struct onnxrun__node *node = &m->nodes[i];
		node->opset = opset_for(m, node->domain, &found);
		node->op = onnxrun__registry_find(m->env, node->domain, node->op_type, node->opset);
		if (!node->op) {
			append_unsupported(list, sizeof list, &at, node);
			missing++;
			continue;
		}
	}
	/* an inspection keeps the nodes without a kernel (listed by onnxrun_model_unsupported) */
	if (missing && !m->inspect_only)
		return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED, "%zu unsupported node%s: %s", missing,
		                     missing == 1 ? "" : "s", list);
	return ONNXRUN_OK;
}

/* ---- topological order ---- */

/* A binary min-heap of node file indices: Kahn's ready set, ties broken by file order. */
struct heap {
	size_t *a;
	size_t n;
};

static void heap_push(struct heap *h, size_t v)
{
	size_t i = h->n++;
	while (i && h->a[(i - 1) / 2] > v) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = v;
}

static size_t heap_pop(struct heap *h)
{
	size_t top = h->a[0], v = h->a[--h->n], i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1] < h->a[c])
			c++;
		if (h->a[c] >= v)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = v;
	return top;
}

/* Describes one cycle among the unscheduled nodes (indeg > 0) by walking producers. */
static enum onnxrun_status cycle_error(const struct onnxrun_model *m, const size_t *indeg,
                                       struct onnxrun__err *err)
{
	char buf[ONNXRUN__ERR_LEN - 64];
	size_t at = 0, cur = 0, steps = 0, start;
	while (indeg[cur] == 0)
		cur++;
	/* Walk back m->n_nodes steps: then we are surely inside a cycle. */
	for (steps = 0; steps < m->n_nodes; steps++) {
		const struct onnxrun__node *node = &m->nodes[cur];
		for (size_t i = 0; i < node->n_inputs; i++) {
			int32_t v = node->inputs[i];
			if (v >= 0 && m->values[v].producer >= 0 && indeg[m->values[v].producer]) {
				cur = (size_t)m->values[v].producer;
				break;
			}
		}
	}
	start = cur;
	buf[0] = '\0';
	do {
		const struct onnxrun__node *node = &m->nodes[cur];
		int n = snprintf(buf + at, sizeof buf - at, "'%s' (%s) <- ", node->name, node->op_type);
		at = n > 0 && at + (size_t)n < sizeof buf ? at + (size_t)n : sizeof buf - 1;
		for (size_t i = 0; i < node->n_inputs; i++) {
			int32_t v = node->inputs[i];
			if (v >= 0 && m->values[v].producer >= 0 && indeg[m->values[v].producer]) {
				cur = (size_t)m->values[v].producer;
				break;
			}
		}
	} while (cur != start && at < sizeof buf - 1);
	snprintf(buf + at, sizeof buf - at, "'%s'", m->nodes[start].name);
	return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_MODEL, "graph has a cycle: %s", buf);
}

/* Counts, per node, inputs produced by other nodes (with multiplicity). */
static void count_indegrees(const struct onnxrun_model *m, size_t *indeg)
{
	for (size_t n = 0; n < m->n_nodes; n++) {
		const struct onnxrun__node *node = &m->nodes[n];
		indeg[n] = 0;
		for (size_t i = 0; i < node->n_inputs; i++)
			if (node->inputs[i] >= 0 && m->values[node->inputs[i]].producer >= 0)
				indeg[n]++;
	}
}

/* Moves nodes into Kahn order and renumbers value producers. */
static void apply_order(struct onnxrun_model *m, const size_t *order, struct onnxrun__node *tmp)
{
	memcpy(tmp, m->nodes, m->n_nodes * sizeof *tmp);
	for (size_t k = 0; k < m->n_nodes; k++) {
		m->nodes[k] = tmp[order[k]];
		for (size_t o = 0; o < m->nodes[k].n_outputs; o++)
			if (m->nodes[k].outputs[o] >= 0)
				m->values[m->nodes[k].outputs[o]].producer = (int32_t)k;
	}
}

/* Consumer lists per value in CSR form: consumers of v are cons[start[v] .. start[v+1]). */
static bool build_consumers(const struct onnxrun_model *m, size_t **start_out, size_t **cons_out)
{
	size_t *start = onnxrun__calloc(m->env, m->n_values + 1, sizeof *start), total = 0;
	size_t *cons, *fill;
	if (!start)
		return false;
	for (size_t n = 0; n < m->n_nodes; n++)
		for (size_t i = 0; i < m->nodes[n].n_inputs; i++)
			if (m->nodes[n].inputs[i] >= 0)
				start[m->nodes[n].inputs[i] + 1]++, total++;
	for (size_t v = 0; v < m->n_values; v++)
		start[v + 1] += start[v];
	cons = onnxrun__malloc(m->env, (total ? total : 1) * sizeof *cons);
	fill = onnxrun__malloc(m->env, (m->n_values ? m->n_values : 1) * sizeof *fill);
	if (!cons || !fill) {
		onnxrun__free(m->env, start);
		onnxrun__free(m->env, cons);
		onnxrun__free(m->env, fill);
		return false;
	}
	if (m->n_values)
		memcpy(fill, start, m->n_values * sizeof *fill);
	for (size_t n = 0; n < m->n_nodes; n++)
		for (size_t i = 0; i < m->nodes[n].n_inputs; i++)
			if (m->nodes[n].inputs[i] >= 0)
				cons[fill[m->nodes[n].inputs[i]]++] = n;
	onnxrun__free(m->env, fill);
	*start_out = start;
	*cons_out = cons;
	return true;
}

enum onnxrun_status onnxrun__graph_order(struct onnxrun_model *m, struct onnxrun__err *err)
{
	size_t n = m->n_nodes ? m->n_nodes : 1, done = 0;
	size_t *indeg = onnxrun__malloc(m->env, n * sizeof *indeg);
	size_t *order = onnxrun__malloc(m->env, n * sizeof *order);
	struct heap h = { onnxrun__malloc(m->env, n * sizeof(size_t)), 0 };
	struct onnxrun__node *tmp = onnxrun__malloc(m->env, n * sizeof *tmp);
	size_t *start = NULL, *cons = NULL;
	enum onnxrun_status st = ONNXRUN_OK;
	if (!indeg || !order || !h.a || !tmp || !build_consumers(m, &start, &cons)) {
		st = onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory ordering the graph");
		goto fail;
	}
	count_indegrees(m, indeg);
	for (size_t i = 0; i < m->n_nodes; i++)
		if (!indeg[i])
			heap_push(&h, i);
	while (h.n) {
		size_t cur = heap_pop(&h);
		const struct onnxrun__node *node = &m->nodes[cur];
		order[done++] = cur;
		for (size_t o = 0; o < node->n_outputs; o++) {
			int32_t v = node->outputs[o];
			if (v < 0)
				continue;
			for (size_t k = start[v]; k < start[v + 1]; k++)
				if (--indeg[cons[k]] == 0)
					heap_push(&h, cons[k]);
		}
	}
	if (done < m->n_nodes)
		st = cycle_error(m, indeg, err);
	else
		apply_order(m, order, tmp);
fail:
	onnxrun__free(m->env, indeg);
	onnxrun__free(m->env, order);
	onnxrun__free(m->env, h.a);
	onnxrun__free(m->env, tmp);
	onnxrun__free(m->env, start);
	onnxrun__free(m->env, cons);
	return st;
}

/* ---- inference ---- */

size_t onnxrun__graph_max_io(const struct onnxrun_model *m)
{
	size_t max = 1;
	for (size_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].n_inputs + m->nodes[i].n_outputs > max)
			max = m->nodes[i].n_inputs + m->nodes[i].n_outputs;
	return max;
}

/* Checks an inferred type against the declared one and fills unknowns from it. */
static enum onnxrun_status merge_declared(const struct onnxrun__node *node, const struct onnxrun__value *v,
                                          struct onnxrun_type *t, struct onnxrun__err *err)
{
	const struct onnxrun_type *d = v->declared;
	char a[256], b[256];
	if (!d)
		return ONNXRUN_OK;
	if (d->dtype && t->dtype && d->dtype != t->dtype)
		return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "output '%s' is declared %s but computes %s", v->name,
		                          onnxrun_dtype_name(d->dtype), onnxrun_dtype_name(t->dtype));
	if (!t->dtype)
		t->dtype = d->dtype;
	if (d->shape.rank < 0)
		return ONNXRUN_OK;
	if (t->shape.rank < 0) {
		t->shape = d->shape;
		return ONNXRUN_OK;
	}
	if (d->shape.rank != t->shape.rank)
		goto mismatch;
	for (int32_t i = 0; i < t->shape.rank; i++) {
		if (d->shape.dims[i] >= 0 && t->shape.dims[i] >= 0 && d->shape.dims[i] != t->shape.dims[i])
			goto mismatch;
		if (t->shape.dims[i] < 0 && (d->shape.dims[i] >= 0 || !t->shape.params[i])) {
			t->shape.dims[i] = d->shape.dims[i];
			t->shape.params[i] = d->shape.params[i];
		}
	}
	return ONNXRUN_OK;
mismatch:
	return onnxrun__node_fail(err, ONNXRUN_ERROR_INVALID_MODEL, node,
	                          "output '%s' is declared with shape %s but has shape %s", v->name,
	                          onnxrun__shape_str(&d->shape, a, sizeof a),
	                          onnxrun__shape_str(&t->shape, b, sizeof b));
}

/* Node k's op infer from its input types in[] into out[] (cleared to unknown here), each
 * output then checked against, and completed by, its declared type. */
static enum onnxrun_status infer_io(const struct onnxrun_model *m, size_t k, const struct onnxrun_type *in,
                                    struct onnxrun_type *out, struct onnxrun__err *err)
{
	const struct onnxrun__node *node = &m->nodes[k];
	enum onnxrun_status st;
	for (size_t o = 0; o < node->n_outputs; o++) {
		memset(&out[o], 0, sizeof out[o]);
		out[o].shape.rank = -1;
	}
	{
		struct onnxrun_op_context ctx = { node, err, m->env, 1, node->op_state, m, NULL, NULL, NULL };
		st = node->op->infer(&ctx, in, node->n_inputs, out, node->n_outputs);
	}
	for (size_t o = 0; o < node->n_outputs && !st; o++)
		if (node->outputs[o] >= 0)
			st = merge_declared(node, &m->values[node->outputs[o]], &out[o], err);
	return st;
}

/* Load-time inference of node k: its inputs from types[] (one per value), its outputs
 * stored there. */
static enum onnxrun_status infer_node(const struct onnxrun_model *m, size_t k, struct onnxrun_type *types,
                                      struct onnxrun_type *scratch, struct onnxrun__err *err)
{
	const struct onnxrun__node *node = &m->nodes[k];
	struct onnxrun_type *in = scratch, *out = scratch + node->n_inputs;
	enum onnxrun_status st;
	for (size_t i = 0; i < node->n_inputs; i++) {
		if (node->inputs[i] >= 0) {
			in[i] = types[node->inputs[i]];
		} else {
			memset(&in[i], 0, sizeof in[i]);
			in[i].shape.rank = -1;
		}
	}
	if ((st = infer_io(m, k, in, out, err)))
		return st;
	for (size_t o = 0; o < node->n_outputs; o++)
		if (node->outputs[o] >= 0)
			types[node->outputs[o]] = out[o];
	return ONNXRUN_OK;
}

/* Sessions infer through here (prepare): a model loaded for inspection only may hold
 * nodes without a kernel, and even its supported ops skipped their init, so none of its
 * nodes may run. */
enum onnxrun_status onnxrun__graph_infer_node(const struct onnxrun_model *m, size_t k, const struct onnxrun_type *in,
                                              struct onnxrun_type *out, struct onnxrun__err *err)
{
	if (m->inspect_only)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "the model was loaded with onnxrun_model_inspect_file/_buffer, for queries "
		                     "only: load it with onnxrun_model_load_file/_buffer to run it");
	return infer_io(m, k, in, out, err);
}

/*
 * Inspection only: the types of node k's outputs when they cannot be inferred, because the
 * node has no kernel or because its op rejected input types that were themselves guessed.
 * Each output takes its declared dtype and shape where the model declares them, else the
 * dtype of the node's first present input (a guess that keeps the ops after it inferring)
 * and an unknown shape. The outputs are marked guessed.
 */
static void guess_outputs(const struct onnxrun_model *m, size_t k, struct onnxrun_type *types, bool *guessed)
{
	const struct onnxrun__node *node = &m->nodes[k];
	enum onnxrun_dtype dtype = ONNXRUN_DTYPE_UNDEFINED;
	for (size_t i = 0; i < node->n_inputs; i++)
		if (node->inputs[i] >= 0) {
			dtype = types[node->inputs[i]].dtype;
			break;
		}
	for (size_t o = 0; o < node->n_outputs; o++) {
		const int32_t v = node->outputs[o];
		const struct onnxrun__value *val;
		if (v < 0)
			continue;
		val = &m->values[v];
		memset(&types[v], 0, sizeof types[v]);
		types[v].dtype = val->declared && val->declared->dtype ? val->declared->dtype : dtype;
		if (val->declared && val->declared->shape.rank >= 0)
			types[v].shape = val->declared->shape;
		else
			types[v].shape.rank = -1;
		guessed[v] = true;
	}
}

/* Whether some input of node k has a guessed type. */
static bool has_guessed_input(const struct onnxrun_model *m, size_t k, const bool *guessed)
{
	const struct onnxrun__node *node = &m->nodes[k];
	for (size_t i = 0; i < node->n_inputs; i++)
		if (node->inputs[i] >= 0 && guessed[node->inputs[i]])
			return true;
	return false;
}

/* Load-time inference of node k. For an inspection, a node without a kernel gets guessed
 * output types, and so does one whose op rejects guessed input types (its real inputs are
 * unknown, so that is no evidence against the model); out of memory still fails. */
static enum onnxrun_status infer_at_load(struct onnxrun_model *m, size_t k, struct onnxrun_type *types,
                                         struct onnxrun_type *scratch, bool *guessed, struct onnxrun__err *err)
{
	const struct onnxrun__node *node = &m->nodes[k];
	bool from_guess;
	enum onnxrun_status st;
	if (!m->inspect_only)
		return infer_node(m, k, types, scratch, err);
	if (!node->op) {
		guess_outputs(m, k, types, guessed);
		return ONNXRUN_OK;
	}
	from_guess = has_guessed_input(m, k, guessed);
	st = infer_node(m, k, types, scratch, err);
	if (!from_guess || st == ONNXRUN_ERROR_OUT_OF_MEMORY)
		return st;
	if (st) {
		onnxrun__err_clear(err);
		guess_outputs(m, k, types, guessed);
		return ONNXRUN_OK;
	}
	for (size_t o = 0; o < node->n_outputs; o++)
		if (node->outputs[o] >= 0)
			guessed[node->outputs[o]] = true;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__graph_infer(struct onnxrun_model *m, struct onnxrun__err *err)
{
	const size_t nv = m->n_values ? m->n_values : 1;
	struct onnxrun_type *types = m->load_types; /* in place: a failed load frees the model */
	struct onnxrun_type *scratch = onnxrun__calloc(m->env, onnxrun__graph_max_io(m), sizeof *scratch);
	bool *guessed = m->inspect_only ? onnxrun__calloc(m->env, nv, sizeof *guessed) : NULL;
	enum onnxrun_status st = ONNXRUN_OK;
	if (!scratch || (m->inspect_only && !guessed)) {
		st = onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory inferring shapes");
		goto fail;
	}
	for (size_t k = 0; k < m->n_nodes && !st; k++)
		st = k % 64 == 63 && onnxrun__load_should_stop(m->env) ? onnxrun__load_stopped(m->env, err)
		                                                       : infer_at_load(m, k, types, scratch, guessed, err);
fail:
	onnxrun__free(m->env, scratch);
	onnxrun__free(m->env, guessed);
	return st;
}

/* True when every use of value v is an input its op's state can rebuild. */
static bool all_uses_rebuildable(const struct onnxrun_model *m, int32_t v)
{
	for (size_t k = 0; k < m->n_nodes; k++)
		for (size_t i = 0; i < m->nodes[k].n_inputs; i++)
			if (m->nodes[k].inputs[i] == v && !(i < 32 && (m->nodes[k].rebuilds >> i & 1u)))
				return false;
	return true;
}

/* Releases the data of initializers that every consumer's op state can rebuild (e.g.
 * ConvTranspose weights kept as packed panels): they would otherwise be held twice. Not
 * for graph outputs (handed to the caller) or initializers a feed may override. Only the
 * inputs some init marked are looked at (few: one per ConvTranspose), each against the
 * node inputs. */
static void release_rebuildable(struct onnxrun_model *m)
{
	for (size_t k = 0; k < m->n_nodes; k++)
		for (size_t i = 0; i < m->nodes[k].n_inputs && i < 32; i++) {
			const int32_t v = m->nodes[k].inputs[i];
			struct onnxrun__value *val = v >= 0 ? &m->values[v] : NULL;
			if (!(m->nodes[k].rebuilds >> i & 1u) || !val || val->kind != ONNXRUN__VALUE_INITIALIZER ||
			    val->is_output || !val->init || (!val->init->data && !val->init->pending) ||
			    val->init->numel == 0)
				continue;
			if (all_uses_rebuildable(m, v))
				onnxrun__tensor_release_data(val->init);
		}
}

/* An init asked for a pending initializer (onnxrun_op_constant_input) and copying it ran
 * out of memory: the op went on as if the input were not constant; fail the load. */
static enum onnxrun_status copy_failed(const struct onnxrun_model *m, const struct onnxrun__node *node,
                                       struct onnxrun__err *err)
{
	for (size_t i = 0; i < node->n_inputs; i++) {
		const int32_t v = node->inputs[i];
		if (v >= 0 && m->values[v].init && m->values[v].init->pending_failed)
			return onnxrun__node_fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, node,
			                          "out of memory copying initializer '%s'", m->values[v].name);
	}
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__graph_init_ops(struct onnxrun_model *m, struct onnxrun__err *err)
{
	/* an inspection never runs: no pre-packing, only the copies below */
	for (size_t k = 0; k < m->n_nodes && !m->inspect_only; k++) {
		struct onnxrun__node *node = &m->nodes[k];
		/* the load's stop state: ops that prepare weights may check onnxrun_op_should_stop */
		struct onnxrun_op_context ctx = { node, err, m->env, 1, NULL, m, &node->rebuilds, NULL, m->env->load_ctl };
		enum onnxrun_status st;
		node->rebuilds = 0;
		if (!node->op->init)
			continue;
		if (onnxrun__load_should_stop(m->env))
			return onnxrun__load_stopped(m->env, err);
		err->msg[0] = '\0';
		if ((st = node->op->init(&ctx, &node->op_state))) {
			if (onnxrun__load_should_stop(m->env))
				return onnxrun__load_stopped(m->env, err);
			if (!err->msg[0])
				onnxrun__node_fail(err, st, node, "init failed: %s", onnxrun_status_str(st));
			return st;
		}
		if ((st = copy_failed(m, node, err)))
			return st;
	}
	release_rebuildable(m);
	/* the model buffer is gone after loading: copy the initializers no op rebuilds; a
	 * borrowed buffer stays, and they are read where they are */
	for (size_t v = 0; v < m->n_values; v++) {
		enum onnxrun_status st;
		if (m->values[v].init && m->borrowed)
			onnxrun__tensor_borrow_pending(m->values[v].init);
		else if (m->values[v].init && (st = onnxrun__tensor_materialize(m->values[v].init, err)))
			return st;
	}
	return ONNXRUN_OK;
}
