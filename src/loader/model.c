/*
 * model.c - a serialized ModelProto -> onnxrun IR: opsets, values, nodes (file order) with
 * attributes, initializers, declared types. Ordering and inference happen in runtime/graph.c.
 */
#include <string.h>

#include "loader.h"
#include "onnx.pb-c.h"
#include "tensor_proto.h"

/* Newest IR version this loader knows; newer ones load with a warning. */
#define ONNXRUN__IR_KNOWN 11
/* Bounds on counts, against files that claim absurd sizes. */
#define ONNXRUN__MAX_NODES 1000000
#define ONNXRUN__MAX_NODE_IO 100000
#define ONNXRUN__MAX_ATTRS 10000
/* float32 raw_data from this size on stays in the model buffer, out of the parse (strip.c);
 * smaller arrays cost less to copy than to track. */
#define ONNXRUN__STRIP_MIN ((size_t)64 << 10)

/* ---- the value table: a hash of names to indices into m->values ---- */

struct builder {
	struct onnxrun_model *m;
	const Onnx__ModelProto *mp;
	const char *base_dir;
	struct onnxrun__err *err;
	size_t cap_values;
	int32_t *slots; /* open addressing, -1 empty */
	size_t n_slots;
	struct onnxrun__mem_budget budget; /* initializer and tensor-attribute bytes */
	int32_t *pslots; /* dim_param names -> index into m->params; open addressing, -1 empty */
	size_t n_pslots;
	size_t cap_params; /* allocated length of m->params */
	int32_t *sslots;   /* sparse initializer names -> index into g->sparse_initializer */
	size_t n_sslots;   /* 0 when the graph has none */
	int32_t *fslots;   /* local function names -> index into mp->functions */
	size_t n_fslots;   /* 0 when the model has none */
	struct onnxrun__stripped stripped; /* raw_data left out of the parse (strip.c) */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static size_t slot_of(const struct builder *b, const char *name)
{
	size_t i = (size_t)hash_str(name) & (b->n_slots - 1);
	while (b->slots[i] >= 0 && strcmp(b->m->values[b->slots[i]].name, name))
		i = (i + 1) & (b->n_slots - 1);
	return i;
}

static int32_t find_value(const struct builder *b, const char *name)
{
	return b->slots[slot_of(b, name)];
}

/* Adds a value named `name` (must not exist) and returns its index, or -1 out of memory. */
static int32_t add_value(struct builder *b, const char *name)
{
	struct onnxrun_model *m = b->m;
	struct onnxrun__value *v;
	if (m->n_values == b->cap_values)
		return -1; /* capacity is computed up front; never reached */
	v = &m->values[m->n_values];
	memset(v, 0, sizeof *v);
	v->name = onnxrun__strdup(m->env, name);
	if (!v->name)
		return -1;
	v->producer = -1;
	b->slots[slot_of(b, name)] = (int32_t)m->n_values;
	return (int32_t)m->n_values++;
}

static enum onnxrun_status oom(struct builder *b)
{
	return onnxrun__fail(b->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory while loading the model");
}

#if ONNXRUN_BAREMETAL
static void count_name(const char **seen, size_t n_slots, const char *name, size_t *count)
{
	size_t i;
	if (!name || !name[0])
		return;
	i = (size_t)hash_str(name) & (n_slots - 1);
	while (seen[i] && strcmp(seen[i], name))
		i = (i + 1) & (n_slots - 1);
	if (!seen[i]) {
		seen[i] = name;
		(*count)++;
	}
}

/* Bare metal: the distinct names the value table will hold (add_value's calls), so that it
 * is allocated at its size. The sum alloc_tables starts from counts a name once per mention
 * (a node's output again as each consumer's input): about twice as many records of ~540 B
 * each on 32-bit, 5 KB of the upsampler's RAM. A host skips this second pass over the names
 * (load time) and keeps the bound. The hash is freed before the tables are allocated, so
 * their slots (the same size) take its place. */
static enum onnxrun_status count_values(struct builder *b, const Onnx__GraphProto *g, size_t *n)
{
	const char **seen = onnxrun__calloc(b->m->env, b->n_slots, sizeof *seen);
	size_t count = 0;
	if (!seen)
		return oom(b);
	for (size_t i = 0; i < g->n_initializer; i++)
		count_name(seen, b->n_slots, g->initializer[i]->name, &count);
	for (size_t i = 0; i < g->n_input; i++)
		count_name(seen, b->n_slots, g->input[i]->name, &count);
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *np = g->node[i];
		for (size_t k = 0; k < np->n_input; k++)
			count_name(seen, b->n_slots, np->input[k], &count);
		for (size_t k = 0; k < np->n_output; k++)
			count_name(seen, b->n_slots, np->output[k], &count);
	}
	onnxrun__free(b->m->env, seen);
	*n = count ? count : 1;
	return ONNXRUN_OK;
}
#endif

/* Sizes the value table and hash for every name the graph can mention. */
static enum onnxrun_status alloc_tables(struct builder *b, const Onnx__GraphProto *g)
{
	size_t n = g->n_input + g->n_initializer + g->n_output + 1;
	if (g->n_node > ONNXRUN__MAX_NODES)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_LIMIT, "graph has %zu nodes; the limit is %d",
		                     g->n_node, ONNXRUN__MAX_NODES);
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *np = g->node[i];
		if (np->n_input > ONNXRUN__MAX_NODE_IO || np->n_output > ONNXRUN__MAX_NODE_IO ||
		    np->n_attribute > ONNXRUN__MAX_ATTRS)
			return onnxrun__fail(b->err, ONNXRUN_ERROR_LIMIT,
			                     "node '%s' (%s): too many inputs, outputs or attributes",
			                     np->name ? np->name : "", np->op_type ? np->op_type : "");
		n += np->n_input + np->n_output;
	}
	b->n_slots = 16;
	while (b->n_slots < 2 * n)
		b->n_slots *= 2;
#if ONNXRUN_BAREMETAL
	{
		enum onnxrun_status st = count_values(b, g, &n);
		if (st)
			return st;
	}
#endif
	b->cap_values = n;
	b->m->values = onnxrun__calloc(b->m->env, n, sizeof *b->m->values);
	b->slots = onnxrun__malloc(b->m->env, b->n_slots * sizeof *b->slots);
	b->m->nodes = onnxrun__calloc(b->m->env, g->n_node ? g->n_node : 1, sizeof *b->m->nodes);
	if (!b->m->values || !b->slots || !b->m->nodes)
		return oom(b);
	memset(b->slots, 0xff, b->n_slots * sizeof *b->slots);
	return ONNXRUN_OK;
}

/* ---- opsets ---- */

static const char *norm_domain(const char *d)
{
	return (!d || !strcmp(d, "ai.onnx")) ? "" : d;
}

static enum onnxrun_status load_opsets(struct builder *b)
{
	const Onnx__ModelProto *mp = b->mp;
	struct onnxrun_model *m = b->m;
	m->opsets = onnxrun__calloc(m->env, mp->n_opset_import ? mp->n_opset_import : 1, sizeof *m->opsets);
	if (!m->opsets)
		return oom(b);
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const char *d = norm_domain(mp->opset_import[i]->domain);
		int64_t v = mp->opset_import[i]->version;
		for (size_t j = 0; j < m->n_opsets; j++)
			if (!strcmp(m->opsets[j].domain, d))
				return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
				                     "opset for domain '%s' is imported twice", d[0] ? d : "ai.onnx");
		if (v < 1)
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
			                     "opset version %lld for domain '%s' must be >= 1", (long long)v,
			                     d[0] ? d : "ai.onnx");
		m->opsets[m->n_opsets].domain = onnxrun__strdup(m->env, d);
		if (!m->opsets[m->n_opsets].domain)
			return oom(b);
		m->opsets[m->n_opsets++].version = v;
	}
	return ONNXRUN_OK;
}

/* ---- declared types ---- */

/* The slot of `name` in the dim_param hash: where it is, or the empty slot to put it in. */
static size_t param_slot(const struct builder *b, const char *name)
{
	size_t i = (size_t)hash_str(name) & (b->n_pslots - 1);
	while (b->pslots[i] >= 0 && strcmp(b->m->params[b->pslots[i]], name))
		i = (i + 1) & (b->n_pslots - 1);
	return i;
}

/* Doubles m->params and the hash when full (amortized growth: files may name millions of
 * dims). */
static bool grow_params(struct builder *b)
{
	struct onnxrun_model *m = b->m;
	size_t cap = b->cap_params ? 2 * b->cap_params : 16;
	char **params = onnxrun__malloc(m->env, cap * sizeof *params);
	int32_t *slots = onnxrun__malloc(m->env, 2 * cap * sizeof *slots);
	if (!params || !slots) {
		onnxrun__free(m->env, params);
		onnxrun__free(m->env, slots);
		return false;
	}
	if (m->n_params)
		memcpy(params, m->params, m->n_params * sizeof *params);
	onnxrun__free(m->env, m->params);
	onnxrun__free(m->env, b->pslots);
	m->params = params;
	b->cap_params = cap;
	b->pslots = slots;
	b->n_pslots = 2 * cap;
	memset(slots, 0xff, 2 * cap * sizeof *slots);
	for (size_t i = 0; i < m->n_params; i++)
		slots[param_slot(b, m->params[i])] = (int32_t)i;
	return true;
}

/* Interns a dim_param name in m->params and returns the stable copy (NULL out of memory). */
static const char *intern_param(struct builder *b, const char *name)
{
	struct onnxrun_model *m = b->m;
	size_t slot;
	if (b->n_pslots && b->pslots[slot = param_slot(b, name)] >= 0)
		return m->params[b->pslots[slot]];
	if (m->n_params == b->cap_params && !grow_params(b))
		return NULL;
	if (!(m->params[m->n_params] = onnxrun__strdup(m->env, name)))
		return NULL;
	b->pslots[param_slot(b, name)] = (int32_t)m->n_params;
	return m->params[m->n_params++];
}

/* Fills *t from a ValueInfoProto's tensor type; `what` names it in errors. */
static enum onnxrun_status load_declared(struct builder *b, const Onnx__ValueInfoProto *vi,
                                         struct onnxrun_type *t, bool *has, const char *what)
{
	const Onnx__TypeProto__Tensor *tt;
	*has = false;
	onnxrun__shape_unknown(&t->shape);
	t->dtype = ONNXRUN_DTYPE_UNDEFINED;
	if (!vi->type)
		return ONNXRUN_OK;
	if (vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_UNSUPPORTED,
		                     "%s '%s': only tensor types are supported (sequence, map, optional and "
		                     "sparse types are not)", what, vi->name);
	tt = vi->type->tensor_type;
	*has = true;
	if (tt->has_elem_type && tt->elem_type != 0) {
		if (!onnxrun__dtype_valid(tt->elem_type))
			return onnxrun__fail(b->err, ONNXRUN_ERROR_UNSUPPORTED, "%s '%s': unsupported elem_type %d",
			                     what, vi->name, (int)tt->elem_type);
		t->dtype = (enum onnxrun_dtype)tt->elem_type;
	}
	if (!tt->shape)
		return ONNXRUN_OK;
	if (tt->shape->n_dim > ONNXRUN_MAX_RANK)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_LIMIT, "%s '%s': rank %zu exceeds the limit %d", what,
		                     vi->name, tt->shape->n_dim, ONNXRUN_MAX_RANK);
	t->shape.rank = (int32_t)tt->shape->n_dim;
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		t->shape.dims[i] = -1;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0)
				return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
				                     "%s '%s': dim %zu is negative (%lld)", what, vi->name, i,
				                     (long long)d->dim_value);
			t->shape.dims[i] = d->dim_value;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
		           d->dim_param && d->dim_param[0]) {
			t->shape.params[i] = intern_param(b, d->dim_param);
			if (!t->shape.params[i])
				return oom(b);
		}
	}
	return ONNXRUN_OK;
}

/* Sets v->declared from a ValueInfoProto when it declares a tensor type (left NULL when it
 * declares none); the type is read on the stack and kept in an allocation of its own. */
static enum onnxrun_status declare(struct builder *b, const Onnx__ValueInfoProto *vi, struct onnxrun__value *v,
                                   const char *what)
{
	struct onnxrun_type t;
	bool has;
	enum onnxrun_status st = load_declared(b, vi, &t, &has, what);
	if (st || !has)
		return st;
	if (!(v->declared = onnxrun__malloc(b->m->env, sizeof *v->declared)))
		return oom(b);
	*v->declared = t;
	return ONNXRUN_OK;
}

/* ---- initializers and graph inputs ---- */

static enum onnxrun_status load_initializers(struct builder *b, const Onnx__GraphProto *g)
{
	enum onnxrun_status st;
	size_t next = 0; /* the next slice of b->stripped */
	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *tp = g->initializer[i];
		const char *name = tp->name ? tp->name : "";
		int32_t v;
		if (onnxrun__load_should_stop(b->m->env))
			return onnxrun__load_stopped(b->m->env, b->err);
		if (!name[0])
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "initializer %zu has no name", i);
		if (find_value(b, name) >= 0)
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
			                     "initializer '%s' is defined twice", name);
		if ((v = add_value(b, name)) < 0)
			return oom(b);
		b->m->values[v].kind = ONNXRUN__VALUE_INITIALIZER;
		if (next < b->stripped.n_slices && b->stripped.slices[next].initializer == i) {
			/* raw_data left in the model buffer: the tensor borrows it until the load ends */
			const ProtobufCBinaryData parsed = tp->raw_data;
			tp->raw_data.data = (uint8_t *)b->stripped.slices[next].data;
			tp->raw_data.len = b->stripped.slices[next++].len;
			st = onnxrun__tensor_from_proto_borrow(b->m->env, tp, b->base_dir, &b->budget, b->err,
			                                       &b->m->values[v].init);
			tp->raw_data = parsed;
		} else {
			/* the unpacked message is ours (freed after loading): its raw_data moves, not copies */
			st = onnxrun__tensor_from_proto_take(b->m->env, tp, b->base_dir, &b->budget, b->err,
			                                     &b->m->values[v].init);
		}
		if (st)
			return st;
	}
	return ONNXRUN_OK;
}

#if defined(__GNUC__)
#define LOADER_NOINLINE __attribute__((noinline))
#else
#define LOADER_NOINLINE
#endif

/* An initializer's shape as text, out of line: its struct onnxrun_shape stays off the
 * load's stack (check_default is inlined into the loader's top frame). */
static LOADER_NOINLINE const char *tensor_shape_str(const struct onnxrun_tensor *t, char *buf, size_t len)
{
	struct onnxrun_shape sh = { t->rank, { 0 }, { 0 } };
	memcpy(sh.dims, t->dims, (size_t)t->rank * sizeof *t->dims);
	return onnxrun__shape_str(&sh, buf, len);
}

/* A graph input's declaration must agree with its initializer (its default value). */
static enum onnxrun_status check_default(struct builder *b, const struct onnxrun__value *v)
{
	const struct onnxrun_type *d = onnxrun__declared(v);
	const struct onnxrun_tensor *t = v->init;
	char a[256], c[256];
	bool same = d->shape.rank < 0 || d->shape.rank == t->rank;
	for (int32_t i = 0; same && i < d->shape.rank; i++)
		same = d->shape.dims[i] < 0 || d->shape.dims[i] == t->dims[i];
	if (d->dtype && d->dtype != t->dtype)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
		                     "graph input '%s' is declared %s but its initializer is %s", v->name,
		                     onnxrun_dtype_name(d->dtype), onnxrun_dtype_name(t->dtype));
	if (!same)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
		                     "graph input '%s' is declared with shape %s but its initializer has shape %s",
		                     v->name, onnxrun__shape_str(&d->shape, a, sizeof a), tensor_shape_str(t, c, sizeof c));
	return ONNXRUN_OK;
}

static enum onnxrun_status load_inputs(struct builder *b, const Onnx__GraphProto *g)
{
	struct onnxrun_model *m = b->m;
	enum onnxrun_status st;
	m->inputs = onnxrun__malloc(m->env, (g->n_input ? g->n_input : 1) * sizeof *m->inputs);
	if (!m->inputs)
		return oom(b);
	for (size_t i = 0; i < g->n_input; i++) {
		const char *name = g->input[i]->name ? g->input[i]->name : "";
		int32_t v = find_value(b, name);
		struct onnxrun__value *val;
		if (!name[0])
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "graph input %zu has no name", i);
		if (v >= 0 && m->values[v].kind != ONNXRUN__VALUE_INITIALIZER)
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "graph input '%s' is listed twice",
			                     name);
		if (v < 0 && (v = add_value(b, name)) < 0)
			return oom(b);
		val = &m->values[v];
		st = declare(b, g->input[i], val, "graph input");
		if (st)
			return st;
		if (val->kind == ONNXRUN__VALUE_INITIALIZER) {
			val->kind = ONNXRUN__VALUE_DEFAULTED;
			if ((st = check_default(b, val)))
				return st;
		} else {
			val->kind = ONNXRUN__VALUE_INPUT;
			m->inputs[m->n_inputs++] = v;
		}
	}
	return ONNXRUN_OK;
}

/* ---- attributes ---- */

/* Old files may omit AttributeProto.type; deduce it from the field that is set. */
static enum onnxrun__attr_type attr_type(const Onnx__AttributeProto *a)
{
	if (a->has_type)
		return (enum onnxrun__attr_type)a->type;
	if (a->has_f) return ONNXRUN__ATTR_FLOAT;
	if (a->has_i) return ONNXRUN__ATTR_INT;
	if (a->has_s) return ONNXRUN__ATTR_STRING;
	if (a->t) return ONNXRUN__ATTR_TENSOR;
	if (a->g) return ONNXRUN__ATTR_GRAPH;
	if (a->n_floats) return ONNXRUN__ATTR_FLOATS;
	if (a->n_ints) return ONNXRUN__ATTR_INTS;
	if (a->n_strings) return ONNXRUN__ATTR_STRINGS;
	if (a->n_tensors) return ONNXRUN__ATTR_TENSORS;
	if (a->n_graphs) return ONNXRUN__ATTR_GRAPHS;
	return ONNXRUN__ATTR_UNDEFINED;
}

static enum onnxrun_status load_attr_lists(struct builder *b, const Onnx__AttributeProto *a,
                                           struct onnxrun__attr *o, const struct onnxrun__node *node)
{
	const struct onnxrun_env *env = b->m->env;
	switch (o->type) {
	case ONNXRUN__ATTR_FLOATS:
		o->count = a->n_floats;
		o->floats = onnxrun__malloc(env, (a->n_floats ? a->n_floats : 1) * sizeof(float));
		if (!o->floats)
			return oom(b);
		if (a->n_floats)
			memcpy(o->floats, a->floats, a->n_floats * sizeof(float));
		return ONNXRUN_OK;
	case ONNXRUN__ATTR_INTS:
		o->count = a->n_ints;
		o->ints = onnxrun__malloc(env, (a->n_ints ? a->n_ints : 1) * sizeof(int64_t));
		if (!o->ints)
			return oom(b);
		if (a->n_ints)
			memcpy(o->ints, a->ints, a->n_ints * sizeof(int64_t));
		return ONNXRUN_OK;
	case ONNXRUN__ATTR_STRINGS:
		o->strings = onnxrun__calloc(env, a->n_strings ? a->n_strings : 1, sizeof *o->strings);
		if (!o->strings)
			return oom(b);
		for (size_t i = 0; i < a->n_strings; i++, o->count++) {
			o->strings[i].data = onnxrun__strndup(env, (const char *)a->strings[i].data,
			                                      a->strings[i].len);
			if (!o->strings[i].data)
				return oom(b);
			o->strings[i].size = a->strings[i].len;
		}
		return ONNXRUN_OK;
	case ONNXRUN__ATTR_TENSORS:
		o->tensors = onnxrun__calloc(env, a->n_tensors ? a->n_tensors : 1, sizeof *o->tensors);
		if (!o->tensors)
			return oom(b);
		for (size_t i = 0; i < a->n_tensors; i++, o->count++) {
			enum onnxrun_status st =
				onnxrun__tensor_from_proto_budget(env, a->tensors[i], b->base_dir, &b->budget,
				                                  b->err, &o->tensors[i]);
			if (st) {
				onnxrun__err_prefix(b->err, "node '%s' (%s): attribute '%s'", node->name,
				                    node->op_type, o->name);
				return st;
			}
		}
		return ONNXRUN_OK;
	default:
		return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
		                          "attribute '%s' has unknown type %d", o->name, (int)o->type);
	}
}

static enum onnxrun_status load_attr(struct builder *b, const Onnx__AttributeProto *a, struct onnxrun__attr *o,
                                     const struct onnxrun__node *node)
{
	const struct onnxrun_env *env = b->m->env;
	enum onnxrun_status st;
	o->type = attr_type(a);
	switch (o->type) {
	case ONNXRUN__ATTR_FLOAT:
		o->f = a->f;
		return ONNXRUN_OK;
	case ONNXRUN__ATTR_INT:
		o->i = a->i;
		return ONNXRUN_OK;
	case ONNXRUN__ATTR_STRING:
		o->s.data = onnxrun__strndup(env, (const char *)a->s.data, a->s.len);
		o->s.size = a->s.len;
		return o->s.data ? ONNXRUN_OK : oom(b);
	case ONNXRUN__ATTR_TENSOR:
		if (!a->t)
			return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "tensor attribute '%s' holds no tensor", o->name);
		st = onnxrun__tensor_from_proto_budget(env, a->t, b->base_dir, &b->budget, b->err, &o->t);
		if (st)
			onnxrun__err_prefix(b->err, "node '%s' (%s): attribute '%s'", node->name, node->op_type,
			                    o->name);
		return st;
	case ONNXRUN__ATTR_GRAPH:
	case ONNXRUN__ATTR_GRAPHS:
		return onnxrun__node_fail(b->err, ONNXRUN_ERROR_UNSUPPORTED, node,
		                          "attribute '%s' holds a subgraph; subgraphs are not supported", o->name);
	case ONNXRUN__ATTR_SPARSE_TENSOR:
	case ONNXRUN__ATTR_SPARSE_TENSORS:
		return onnxrun__node_fail(b->err, ONNXRUN_ERROR_UNSUPPORTED, node,
		                          "attribute '%s' holds a sparse tensor; sparse tensors are not supported",
		                          o->name);
	case ONNXRUN__ATTR_TYPE_PROTO:
	case ONNXRUN__ATTR_TYPE_PROTOS:
		return onnxrun__node_fail(b->err, ONNXRUN_ERROR_UNSUPPORTED, node,
		                          "attribute '%s' holds a type; type attributes are not supported", o->name);
	default:
		return load_attr_lists(b, a, o, node);
	}
}

static enum onnxrun_status load_attrs(struct builder *b, const Onnx__NodeProto *np, struct onnxrun__node *node)
{
	enum onnxrun_status st;
	node->attrs = onnxrun__calloc(b->m->env, np->n_attribute ? np->n_attribute : 1, sizeof *node->attrs);
	if (!node->attrs)
		return oom(b);
	for (size_t i = 0; i < np->n_attribute; i++) {
		const Onnx__AttributeProto *a = np->attribute[i];
		struct onnxrun__attr *o = &node->attrs[i];
		if (!a->name || !a->name[0])
			return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "attribute %zu has no name", i);
		if (onnxrun__node_attr(node, a->name))
			return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "attribute '%s' is given twice", a->name);
		if (a->ref_attr_name && a->ref_attr_name[0])
			return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
			                          "attribute '%s' refers to '%s', which only functions may do",
			                          a->name, a->ref_attr_name);
		o->name = onnxrun__strdup(b->m->env, a->name);
		if (!o->name)
			return oom(b);
		node->n_attrs++;
		if ((st = load_attr(b, a, o, node)))
			return st;
	}
	return ONNXRUN_OK;
}

/* ---- nodes ---- */

static const char *sparse_name(const Onnx__GraphProto *g, int32_t i)
{
	const Onnx__SparseTensorProto *sp = g->sparse_initializer[i];
	return sp->values && sp->values->name ? sp->values->name : "";
}

/* The slot of `name` in the sparse-initializer hash (where it is, or an empty one). */
static size_t sparse_slot(const struct builder *b, const Onnx__GraphProto *g, const char *name)
{
	size_t i = (size_t)hash_str(name) & (b->n_sslots - 1);
	while (b->sslots[i] >= 0 && strcmp(sparse_name(g, b->sslots[i]), name))
		i = (i + 1) & (b->n_sslots - 1);
	return i;
}

/* Hashes the sparse initializers' names once, so checking each node input stays O(1). */
static enum onnxrun_status hash_sparse(struct builder *b, const Onnx__GraphProto *g)
{
	size_t n = 16;
	if (!g->n_sparse_initializer)
		return ONNXRUN_OK;
	while (n < 2 * g->n_sparse_initializer)
		n *= 2;
	if (!(b->sslots = onnxrun__malloc(b->m->env, n * sizeof *b->sslots)))
		return oom(b);
	memset(b->sslots, 0xff, n * sizeof *b->sslots);
	b->n_sslots = n;
	for (size_t i = 0; i < g->n_sparse_initializer; i++)
		b->sslots[sparse_slot(b, g, sparse_name(g, (int32_t)i))] = (int32_t)i;
	return ONNXRUN_OK;
}

static bool is_sparse_initializer(const struct builder *b, const Onnx__GraphProto *g, const char *name)
{
	return b->n_sslots && b->sslots[sparse_slot(b, g, name)] >= 0;
}

static enum onnxrun_status load_node_inputs(struct builder *b, const Onnx__GraphProto *g,
                                            const Onnx__NodeProto *np, struct onnxrun__node *node)
{
	node->inputs = onnxrun__malloc(b->m->env, (np->n_input ? np->n_input : 1) * sizeof *node->inputs);
	if (!node->inputs)
		return oom(b);
	for (size_t i = 0; i < np->n_input; i++, node->n_inputs++) {
		const char *name = np->input[i] ? np->input[i] : "";
		int32_t v = -1;
		if (name[0] && is_sparse_initializer(b, g, name))
			return onnxrun__node_fail(b->err, ONNXRUN_ERROR_UNSUPPORTED, node,
			                          "input '%s' is a sparse initializer; sparse initializers are "
			                          "not supported", name);
		if (name[0] && (v = find_value(b, name)) < 0 && (v = add_value(b, name)) < 0)
			return oom(b);
		node->inputs[i] = v;
	}
	return ONNXRUN_OK;
}

static enum onnxrun_status load_node_outputs(struct builder *b, const Onnx__NodeProto *np,
                                             struct onnxrun__node *node, int32_t index)
{
	struct onnxrun_model *m = b->m;
	node->outputs = onnxrun__malloc(m->env, (np->n_output ? np->n_output : 1) * sizeof *node->outputs);
	if (!node->outputs)
		return oom(b);
	for (size_t i = 0; i < np->n_output; i++, node->n_outputs++) {
		const char *name = np->output[i] ? np->output[i] : "";
		int32_t v = -1;
		if (name[0]) {
			if ((v = find_value(b, name)) < 0 && (v = add_value(b, name)) < 0)
				return oom(b);
			if (m->values[v].kind != ONNXRUN__VALUE_INTERMEDIATE)
				return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
				                          "output '%s' is also a graph input or initializer", name);
			if (m->values[v].producer >= 0)
				return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
				                          "output '%s' is already produced by node '%s' (%s)", name,
				                          m->nodes[m->values[v].producer].name,
				                          m->nodes[m->values[v].producer].op_type);
			m->values[v].producer = index;
		}
		node->outputs[i] = v;
	}
	return ONNXRUN_OK;
}

static const char *function_name(const Onnx__ModelProto *mp, int32_t i)
{
	return mp->functions[i]->name ? mp->functions[i]->name : "";
}

/* The slot of function (domain, name) in the function hash (where it is, or an empty one). */
static size_t function_slot(const struct builder *b, const char *domain, const char *name)
{
	size_t i = (size_t)hash_str(name) & (b->n_fslots - 1);
	while (b->fslots[i] >= 0 && (strcmp(function_name(b->mp, b->fslots[i]), name) ||
	                             strcmp(norm_domain(b->mp->functions[b->fslots[i]]->domain), domain)))
		i = (i + 1) & (b->n_fslots - 1);
	return i;
}

/* Hashes the model-local functions once, so checking each node stays O(1). */
static enum onnxrun_status hash_functions(struct builder *b)
{
	const Onnx__ModelProto *mp = b->mp;
	size_t n = 16;
	if (!mp->n_functions)
		return ONNXRUN_OK;
	while (n < 2 * mp->n_functions)
		n *= 2;
	if (!(b->fslots = onnxrun__malloc(b->m->env, n * sizeof *b->fslots)))
		return oom(b);
	memset(b->fslots, 0xff, n * sizeof *b->fslots);
	b->n_fslots = n;
	for (size_t i = 0; i < mp->n_functions; i++)
		b->fslots[function_slot(b, norm_domain(mp->functions[i]->domain), function_name(mp, (int32_t)i))] =
			(int32_t)i;
	return ONNXRUN_OK;
}

static enum onnxrun_status check_local_function(struct builder *b, const struct onnxrun__node *node)
{
	if (b->n_fslots && b->fslots[function_slot(b, node->domain, node->op_type)] >= 0)
		return onnxrun__node_fail(b->err, ONNXRUN_ERROR_UNSUPPORTED, node,
		                          "calls the model-local function '%s'; local functions are not "
		                          "supported", node->op_type);
	return ONNXRUN_OK;
}

static enum onnxrun_status load_nodes(struct builder *b, const Onnx__GraphProto *g)
{
	struct onnxrun_model *m = b->m;
	enum onnxrun_status st;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *np = g->node[i];
		struct onnxrun__node *node = &m->nodes[i];
		if (i % 64 == 63 && onnxrun__load_should_stop(m->env))
			return onnxrun__load_stopped(m->env, b->err);
		m->n_nodes++;
		node->file_index = i;
		node->name = onnxrun__strdup(m->env, np->name);
		node->op_type = onnxrun__strdup(m->env, np->op_type);
		node->domain = onnxrun__strdup(m->env, norm_domain(np->domain));
		if (!node->name || !node->op_type || !node->domain)
			return oom(b);
		if (!node->op_type[0])
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "node %zu ('%s') has no op_type", i,
			                     node->name);
		if ((st = check_local_function(b, node)) || (st = load_attrs(b, np, node)) ||
		    (st = load_node_inputs(b, g, np, node)) || (st = load_node_outputs(b, np, node, (int32_t)i)))
			return st;
	}
	return ONNXRUN_OK;
}

/* ---- graph outputs and value_info ---- */

static enum onnxrun_status load_outputs(struct builder *b, const Onnx__GraphProto *g)
{
	struct onnxrun_model *m = b->m;
	enum onnxrun_status st;
	m->outputs = onnxrun__malloc(m->env, (g->n_output ? g->n_output : 1) * sizeof *m->outputs);
	if (!m->outputs)
		return oom(b);
	if (!g->n_output)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "graph has no outputs");
	for (size_t i = 0; i < g->n_output; i++) {
		const char *name = g->output[i]->name ? g->output[i]->name : "";
		int32_t v = find_value(b, name);
		struct onnxrun__value *val;
		if (v < 0 || (m->values[v].kind == ONNXRUN__VALUE_INTERMEDIATE && m->values[v].producer < 0))
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
			                     "graph output '%s' is not produced by any node, input or initializer",
			                     name);
		val = &m->values[v];
		if (val->is_output)
			return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "graph output '%s' is listed twice",
			                     name);
		val->is_output = true;
		if (val->kind == ONNXRUN__VALUE_INTERMEDIATE) {
			st = declare(b, g->output[i], val, "graph output");
			if (st)
				return st;
		}
		m->outputs[m->n_outputs++] = v;
	}
	return ONNXRUN_OK;
}

static enum onnxrun_status load_value_info(struct builder *b, const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = g->value_info[i];
		int32_t v = vi->name ? find_value(b, vi->name) : -1;
		struct onnxrun__value *val;
		enum onnxrun_status st;
		if (v < 0)
			continue; /* describes a value the graph does not use */
		val = &b->m->values[v];
		if (val->kind != ONNXRUN__VALUE_INTERMEDIATE || val->declared)
			continue;
		if ((st = declare(b, vi, val, "value_info")))
			return st;
	}
	return ONNXRUN_OK;
}

/* Every consumed value must come from somewhere. */
static enum onnxrun_status check_dangling(struct builder *b)
{
	struct onnxrun_model *m = b->m;
	for (size_t n = 0; n < m->n_nodes; n++) {
		const struct onnxrun__node *node = &m->nodes[n];
		for (size_t i = 0; i < node->n_inputs; i++) {
			const struct onnxrun__value *v;
			if (node->inputs[i] < 0)
				continue;
			v = &m->values[node->inputs[i]];
			if (v->kind == ONNXRUN__VALUE_INTERMEDIATE && v->producer < 0)
				return onnxrun__node_fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, node,
				                          "input '%s' is not a graph input, an initializer or the "
				                          "output of any node", v->name);
		}
	}
	return ONNXRUN_OK;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* The ModelProto's descriptive fields (onnxrun_model_metadata). Fails only for memory. */
static enum onnxrun_status load_metadata(struct builder *b)
{
	const Onnx__ModelProto *mp = b->mp;
	struct onnxrun__metadata *meta = &b->m->meta;
	const struct onnxrun_env *env = b->m->env;
	meta->producer_version = onnxrun__strdup(env, or_empty(mp->producer_version));
	meta->domain = onnxrun__strdup(env, or_empty(mp->domain));
	meta->doc_string = onnxrun__strdup(env, or_empty(mp->doc_string));
	meta->graph_doc_string = onnxrun__strdup(env, mp->graph ? or_empty(mp->graph->doc_string) : "");
	meta->model_version = mp->has_model_version ? mp->model_version : 0;
	if (!meta->producer_version || !meta->domain || !meta->doc_string || !meta->graph_doc_string)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	if (!mp->n_metadata_props)
		return ONNXRUN_OK;
	meta->prop_keys = onnxrun__calloc(env, mp->n_metadata_props, sizeof *meta->prop_keys);
	meta->prop_values = onnxrun__calloc(env, mp->n_metadata_props, sizeof *meta->prop_values);
	if (!meta->prop_keys || !meta->prop_values)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < mp->n_metadata_props; i++) {
		const Onnx__StringStringEntryProto *e = mp->metadata_props[i];
		meta->prop_keys[i] = onnxrun__strdup(env, or_empty(e->key));
		meta->prop_values[i] = onnxrun__strdup(env, or_empty(e->value));
		meta->n_props = i + 1;
		if (!meta->prop_keys[i] || !meta->prop_values[i])
			return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	return ONNXRUN_OK;
}

static enum onnxrun_status load_header(struct builder *b)
{
	const Onnx__ModelProto *mp = b->mp;
	struct onnxrun_model *m = b->m;
	if (!mp->has_ir_version || mp->ir_version < 3)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL,
		                     "ir_version %lld is not supported (onnxrun needs 3 or newer)",
		                     (long long)mp->ir_version);
	if (mp->ir_version > ONNXRUN__IR_KNOWN)
		onnxrun__log(m->env, ONNXRUN_LOG_WARNING,
		             "ir_version %lld is newer than the newest known (%d); loading it anyway",
		             (long long)mp->ir_version, ONNXRUN__IR_KNOWN);
	m->ir_version = mp->ir_version;
	m->producer_name = onnxrun__strdup(m->env, or_empty(mp->producer_name));
	m->graph_name = onnxrun__strdup(m->env, mp->graph ? or_empty(mp->graph->name) : "");
	if (!m->producer_name || !m->graph_name || load_metadata(b) != ONNXRUN_OK)
		return oom(b);
	if (!mp->graph)
		return onnxrun__fail(b->err, ONNXRUN_ERROR_INVALID_MODEL, "model has no graph");
	return load_opsets(b);
}

/* The model's load_types, the start of load-time inference: a graph input's declared type,
 * an initializer's (or a defaulted input's) tensor type, unknown for the rest. Allocated
 * once the parse is freed: 160 B a value on a 32-bit target, which would otherwise sit above
 * the parse and raise the load's high-water mark (README, Microcontrollers). */
static enum onnxrun_status start_load_types(struct onnxrun_model *m, struct onnxrun__err *err)
{
	if (!(m->load_types = onnxrun__calloc(m->env, m->n_values ? m->n_values : 1, sizeof *m->load_types)))
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory while loading the model");
	for (size_t v = 0; v < m->n_values; v++) { /* zeroed: dtype UNDEFINED, no dim params */
		const struct onnxrun__value *val = &m->values[v];
		struct onnxrun_type *t = &m->load_types[v];
		if (val->kind == ONNXRUN__VALUE_INPUT) {
			*t = *onnxrun__declared(val);
		} else if (val->init) {
			t->dtype = val->init->dtype;
			t->shape.rank = val->init->rank;
			memcpy(t->shape.dims, val->init->dims, (size_t)val->init->rank * sizeof *val->init->dims);
		} else {
			t->shape.rank = -1;
		}
	}
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__load_model_proto(struct onnxrun_model *m, const void *data, size_t size,
                                              const char *base_dir, struct onnxrun__err *err)
{
	struct onnxrun__pb_allocator pa;
	struct builder b = { m, NULL, base_dir, err, 0, NULL, 0, { 0, onnxrun__env_max_memory(m->env) },
	                     NULL, 0, 0, NULL, 0, NULL, 0, { NULL, 0, NULL, 0 } };
	enum onnxrun_status st;
	size_t strip_min;
	if (size == 0)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_MODEL, "the model is empty (0 bytes)");
	strip_min = m->env->strip_min ? m->env->strip_min : ONNXRUN__STRIP_MIN;
	if (m->borrowed)
		strip_min = 1; /* every float32 raw_data stays in the caller's bytes */
	if (strip_min != SIZE_MAX && (st = onnxrun__strip_raw(m->env, data, size, strip_min, &b.stripped, err)))
		return st;
	onnxrun__pb_allocator_init(&pa, m->env);
	b.mp = b.stripped.bytes ? onnx__model_proto__unpack(&pa.base, b.stripped.size, b.stripped.bytes)
	                        : onnx__model_proto__unpack(&pa.base, size, data);
	onnxrun__free(m->env, b.stripped.bytes); /* protobuf-c copied what it keeps */
	b.stripped.bytes = NULL;
	if (!b.mp)
		onnxrun__stripped_free(m->env, &b.stripped);
	if (!b.mp && pa.oom)
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory parsing the model");
	if (!b.mp)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_MODEL,
		                     "not a valid ONNX model: the protobuf is truncated or corrupt");
	if (!(st = load_header(&b)) && !(st = alloc_tables(&b, b.mp->graph)) &&
	    !(st = load_initializers(&b, b.mp->graph)) && !(st = load_inputs(&b, b.mp->graph)) &&
	    !(st = hash_sparse(&b, b.mp->graph)) && !(st = hash_functions(&b)) &&
	    !(st = load_nodes(&b, b.mp->graph)) &&
	    !(st = load_outputs(&b, b.mp->graph)) &&
	    !(st = load_value_info(&b, b.mp->graph)))
		st = check_dangling(&b);
	onnx__model_proto__free_unpacked((Onnx__ModelProto *)b.mp, &pa.base);
	onnxrun__stripped_free(m->env, &b.stripped);
	onnxrun__free(m->env, b.slots);
	onnxrun__free(m->env, b.pslots);
	onnxrun__free(m->env, b.sslots);
	onnxrun__free(m->env, b.fslots);
	return st ? st : start_load_types(m, err);
}
