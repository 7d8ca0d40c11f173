/*
 * model_builder.h - header-only helper that builds ONNX ModelProto bytes in C with the
 * protobuf-c generated types, for tests.
 *
 * Every message, string and array is malloc'd, so the whole tree is released with
 * onnx__model_proto__free_unpacked(model, NULL) (see mb_free). Typical use:
 *
 *	Onnx__ModelProto *m = mb_model(8);
 *	mb_opset(m, "", 13);
 *	mb_input(m, "x", MB_FLOAT, "N,8,2,3");
 *	mb_output(m, "y", MB_FLOAT, NULL);
 *	Onnx__NodeProto *n = mb_node(m, "d2s", "DepthToSpace", "", "x", "y");
 *	mb_attr_int(n, "blocksize", 2);
 *	size_t size;
 *	uint8_t *bytes = mb_pack(m, &size);
 *	mb_free(m);
 *	...
 *	free(bytes);
 *
 * Shapes are written as text: "N,3,?,4" gives dims dim_param "N", dim_value 3, an unknown
 * dim (neither field set) and dim_value 4; "" is a scalar (rank 0); NULL means no shape.
 * Name lists are comma-separated: "x,,b" is x, an absent input "", then b; "" or NULL is
 * an empty list.
 *
 * Allocation failures abort: this is test code.
 */
#ifndef ONNXRUN_TESTS_MODEL_BUILDER_H
#define ONNXRUN_TESTS_MODEL_BUILDER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* ONNX TensorProto.DataType numbers. */
enum {
	MB_UNDEFINED = 0,
	MB_FLOAT = 1,
	MB_UINT8 = 2,
	MB_INT8 = 3,
	MB_UINT16 = 4,
	MB_INT16 = 5,
	MB_INT32 = 6,
	MB_INT64 = 7,
	MB_STRING = 8,
	MB_BOOL = 9,
	MB_FLOAT16 = 10,
	MB_DOUBLE = 11,
	MB_UINT32 = 12,
	MB_UINT64 = 13,
	MB_COMPLEX64 = 14,
	MB_COMPLEX128 = 15,
	MB_BFLOAT16 = 16,
};

/* An int64 array literal and its length, for the (count, values) parameters. */
#define MB_INTS(...) \
	(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), ((const int64_t[]){ __VA_ARGS__ })
#define MB_FLOATS(...) \
	(sizeof((const float[]){ __VA_ARGS__ }) / sizeof(float)), ((const float[]){ __VA_ARGS__ })

/* ---- small allocation helpers ---- */

static inline void *mb__alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);
	if (!p) {
		fprintf(stderr, "model_builder: out of memory\n");
		abort();
	}
	return p;
}

static inline char *mb__strdup(const char *s)
{
	size_t n = strlen(s);
	char *d = mb__alloc(n + 1);
	memcpy(d, s, n + 1);
	return d;
}

static inline void *mb__memdup(const void *src, size_t size)
{
	void *d = mb__alloc(size);
	if (size)
		memcpy(d, src, size);
	return d;
}

/* Appends item to the malloc'd array arr holding n items. */
#define MB__PUSH(arr, n, item)                                                  \
	do {                                                                    \
		void *mb__p = realloc((arr), ((n) + 1) * sizeof *(arr));        \
		if (!mb__p) {                                                   \
			fprintf(stderr, "model_builder: out of memory\n");     \
			abort();                                                \
		}                                                               \
		(arr) = mb__p;                                                  \
		(arr)[(n)++] = (item);                                          \
	} while (0)

/* Splits a comma-separated list into a malloc'd array of malloc'd strings. */
static inline char **mb__split(const char *list, size_t *count)
{
	char **out = NULL;
	size_t n = 0;
	const char *p = list;
	*count = 0;
	if (!list || !*list)
		return NULL;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *s = mb__alloc(len + 1);
		memcpy(s, p, len);
		MB__PUSH(out, n, s);
		if (!e)
			break;
		p = e + 1;
	}
	*count = n;
	return out;
}

/* ---- model and graph ---- */

/* A new model with the given IR version and an empty graph named "g". */
static inline Onnx__ModelProto *mb_model(int64_t ir_version)
{
	Onnx__ModelProto *m = mb__alloc(sizeof *m);
	Onnx__GraphProto *g = mb__alloc(sizeof *g);
	onnx__model_proto__init(m);
	onnx__graph_proto__init(g);
	m->has_ir_version = 1;
	m->ir_version = ir_version;
	m->producer_name = mb__strdup("onnxrun-tests");
	g->name = mb__strdup("g");
	m->graph = g;
	return m;
}

/* A standalone graph (for GRAPH attributes). */
static inline Onnx__GraphProto *mb_graph(const char *name)
{
	Onnx__GraphProto *g = mb__alloc(sizeof *g);
	onnx__graph_proto__init(g);
	g->name = mb__strdup(name);
	return g;
}

static inline void mb_opset(Onnx__ModelProto *m, const char *domain, int64_t version)
{
	Onnx__OperatorSetIdProto *o = mb__alloc(sizeof *o);
	onnx__operator_set_id_proto__init(o);
	if (domain)
		o->domain = mb__strdup(domain);
	o->has_version = 1;
	o->version = version;
	MB__PUSH(m->opset_import, m->n_opset_import, o);
}

/* A tensor ValueInfoProto; shape as described at the top (NULL: no shape). dtype
 * MB_UNDEFINED leaves elem_type unset. */
static inline Onnx__ValueInfoProto *mb_value(const char *name, int dtype, const char *shape)
{
	Onnx__ValueInfoProto *v = mb__alloc(sizeof *v);
	Onnx__TypeProto *tp = mb__alloc(sizeof *tp);
	Onnx__TypeProto__Tensor *tt = mb__alloc(sizeof *tt);
	onnx__value_info_proto__init(v);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	v->name = mb__strdup(name);
	if (dtype != MB_UNDEFINED) {
		tt->has_elem_type = 1;
		tt->elem_type = dtype;
	}
	if (shape) {
		Onnx__TensorShapeProto *sp = mb__alloc(sizeof *sp);
		size_t n;
		char **parts = mb__split(shape, &n);
		onnx__tensor_shape_proto__init(sp);
		for (size_t i = 0; i < n; i++) {
			Onnx__TensorShapeProto__Dimension *d = mb__alloc(sizeof *d);
			char *end;
			long long v64;
			onnx__tensor_shape_proto__dimension__init(d);
			v64 = strtoll(parts[i], &end, 10);
			if (!strcmp(parts[i], "?")) {
				/* unknown: neither dim_value nor dim_param */
			} else if (*parts[i] && !*end) {
				d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
				d->dim_value = v64;
			} else {
				d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
				d->dim_param = mb__strdup(parts[i]);
			}
			MB__PUSH(sp->dim, sp->n_dim, d);
			free(parts[i]);
		}
		free(parts);
		tt->shape = sp;
	}
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->type = tp;
	return v;
}

static inline Onnx__ValueInfoProto *mb_input(Onnx__ModelProto *m, const char *name, int dtype,
                                             const char *shape)
{
	Onnx__ValueInfoProto *v = mb_value(name, dtype, shape);
	MB__PUSH(m->graph->input, m->graph->n_input, v);
	return v;
}

static inline Onnx__ValueInfoProto *mb_output(Onnx__ModelProto *m, const char *name, int dtype,
                                              const char *shape)
{
	Onnx__ValueInfoProto *v = mb_value(name, dtype, shape);
	MB__PUSH(m->graph->output, m->graph->n_output, v);
	return v;
}

static inline Onnx__ValueInfoProto *mb_value_info(Onnx__ModelProto *m, const char *name, int dtype,
                                                  const char *shape)
{
	Onnx__ValueInfoProto *v = mb_value(name, dtype, shape);
	MB__PUSH(m->graph->value_info, m->graph->n_value_info, v);
	return v;
}

/* ---- tensors ---- */

/* A TensorProto with name (may be NULL), dtype and dims, and no data yet. */
static inline Onnx__TensorProto *mb_tensor(const char *name, int dtype, size_t rank, const int64_t *dims)
{
	Onnx__TensorProto *t = mb__alloc(sizeof *t);
	onnx__tensor_proto__init(t);
	if (name)
		t->name = mb__strdup(name);
	t->has_data_type = 1;
	t->data_type = dtype;
	t->n_dims = rank;
	t->dims = mb__memdup(dims, rank * sizeof *dims);
	return t;
}

/* Data setters: raw_data (little-endian bytes) or one of the typed fields. */
static inline void mb_tensor_raw(Onnx__TensorProto *t, const void *bytes, size_t size)
{
	t->has_raw_data = 1;
	t->raw_data.len = size;
	t->raw_data.data = mb__memdup(bytes, size);
}

/* The bytes reversed to turn a value of ONNX data type `dtype` from host order into
 * little-endian on a big-endian host: the element, each part of a complex number. */
static inline size_t mb_swap_unit(int dtype)
{
	switch (dtype) {
	case MB_UINT16: case MB_INT16: case MB_FLOAT16: case MB_BFLOAT16: return 2;
	case MB_FLOAT: case MB_INT32: case MB_UINT32: case MB_COMPLEX64: return 4;
	case MB_INT64: case MB_DOUBLE: case MB_UINT64: case MB_COMPLEX128: return 8;
	default: return 1;
	}
}

/* Host-order values -> little-endian bytes in place (nothing on little-endian hosts). */
static inline void mb_to_le(void *bytes, size_t size, int dtype)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	size_t unit = mb_swap_unit(dtype);
	uint8_t *b = bytes;
	for (size_t at = 0; unit > 1 && at + unit <= size; at += unit)
		for (size_t i = 0; i < unit / 2; i++) {
			uint8_t c = b[at + i];
			b[at + i] = b[at + unit - 1 - i];
			b[at + unit - 1 - i] = c;
		}
#else
	(void)bytes, (void)size, (void)dtype;
#endif
}

/* raw_data from values in host order, of t's data_type: stored little-endian. */
static inline void mb_tensor_raw_values(Onnx__TensorProto *t, const void *values, size_t size)
{
	mb_tensor_raw(t, values, size);
	mb_to_le(t->raw_data.data, size, t->data_type);
}

static inline void mb_tensor_float_data(Onnx__TensorProto *t, size_t n, const float *v)
{
	t->n_float_data = n;
	t->float_data = mb__memdup(v, n * sizeof *v);
}

static inline void mb_tensor_int32_data(Onnx__TensorProto *t, size_t n, const int32_t *v)
{
	t->n_int32_data = n;
	t->int32_data = mb__memdup(v, n * sizeof *v);
}

static inline void mb_tensor_int64_data(Onnx__TensorProto *t, size_t n, const int64_t *v)
{
	t->n_int64_data = n;
	t->int64_data = mb__memdup(v, n * sizeof *v);
}

static inline void mb_tensor_uint64_data(Onnx__TensorProto *t, size_t n, const uint64_t *v)
{
	t->n_uint64_data = n;
	t->uint64_data = mb__memdup(v, n * sizeof *v);
}

static inline void mb_tensor_double_data(Onnx__TensorProto *t, size_t n, const double *v)
{
	t->n_double_data = n;
	t->double_data = mb__memdup(v, n * sizeof *v);
}

/* Appends one string element (bytes, may hold zeros). */
static inline void mb_tensor_string(Onnx__TensorProto *t, const void *bytes, size_t size)
{
	ProtobufCBinaryData *a = realloc(t->string_data, (t->n_string_data + 1) * sizeof *a);
	if (!a)
		abort();
	a[t->n_string_data].len = size;
	a[t->n_string_data].data = mb__memdup(bytes, size);
	t->string_data = a;
	t->n_string_data++;
}

static inline void mb__entry(Onnx__TensorProto *t, const char *key, const char *value)
{
	Onnx__StringStringEntryProto *e = mb__alloc(sizeof *e);
	onnx__string_string_entry_proto__init(e);
	e->key = mb__strdup(key);
	e->value = mb__strdup(value);
	MB__PUSH(t->external_data, t->n_external_data, e);
}

/* Marks t as external: data_location EXTERNAL with location and, when >= 0, offset and
 * length (written as decimal strings, as the spec says). */
static inline void mb_tensor_external(Onnx__TensorProto *t, const char *location, int64_t offset,
                                      int64_t length)
{
	char buf[32];
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	mb__entry(t, "location", location);
	if (offset >= 0) {
		snprintf(buf, sizeof buf, "%lld", (long long)offset);
		mb__entry(t, "offset", buf);
	}
	if (length >= 0) {
		snprintf(buf, sizeof buf, "%lld", (long long)length);
		mb__entry(t, "length", buf);
	}
}

/* Adds t (named) to the graph's initializers; the model owns it afterwards. */
static inline Onnx__TensorProto *mb_add_initializer(Onnx__ModelProto *m, Onnx__TensorProto *t)
{
	MB__PUSH(m->graph->initializer, m->graph->n_initializer, t);
	return t;
}

/* A float initializer stored as raw_data. */
static inline Onnx__TensorProto *mb_initializer_f32(Onnx__ModelProto *m, const char *name, size_t rank,
                                                    const int64_t *dims, const float *data)
{
	Onnx__TensorProto *t = mb_tensor(name, MB_FLOAT, rank, dims);
	size_t n = 1;
	for (size_t i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	mb_tensor_raw_values(t, data, n * sizeof(float));
	return mb_add_initializer(m, t);
}

/* A sparse initializer: values [nnz] float at linear indices [nnz] int64, dense dims. */
static inline void mb_sparse_initializer(Onnx__ModelProto *m, const char *name, size_t rank,
                                         const int64_t *dims, size_t nnz, const float *values,
                                         const int64_t *indices)
{
	Onnx__SparseTensorProto *s = mb__alloc(sizeof *s);
	int64_t n = (int64_t)nnz;
	onnx__sparse_tensor_proto__init(s);
	s->values = mb_tensor(name, MB_FLOAT, 1, &n);
	mb_tensor_raw_values(s->values, values, nnz * sizeof(float));
	s->indices = mb_tensor(NULL, MB_INT64, 1, &n);
	mb_tensor_raw_values(s->indices, indices, nnz * sizeof(int64_t));
	s->n_dims = rank;
	s->dims = mb__memdup(dims, rank * sizeof *dims);
	MB__PUSH(m->graph->sparse_initializer, m->graph->n_sparse_initializer, s);
}

/* ---- nodes and attributes ---- */

/* A node appended to graph g; name NULL leaves it unnamed, domain NULL leaves it unset. */
static inline Onnx__NodeProto *mb_graph_node(Onnx__GraphProto *g, const char *name, const char *op_type,
                                             const char *domain, const char *inputs, const char *outputs)
{
	Onnx__NodeProto *n = mb__alloc(sizeof *n);
	onnx__node_proto__init(n);
	if (name)
		n->name = mb__strdup(name);
	n->op_type = mb__strdup(op_type);
	if (domain)
		n->domain = mb__strdup(domain);
	n->input = mb__split(inputs, &n->n_input);
	n->output = mb__split(outputs, &n->n_output);
	MB__PUSH(g->node, g->n_node, n);
	return n;
}

static inline Onnx__NodeProto *mb_node(Onnx__ModelProto *m, const char *name, const char *op_type,
                                       const char *domain, const char *inputs, const char *outputs)
{
	return mb_graph_node(m->graph, name, op_type, domain, inputs, outputs);
}

static inline Onnx__AttributeProto *mb__attr(Onnx__NodeProto *n, const char *name,
                                             Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *a = mb__alloc(sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = mb__strdup(name);
	a->has_type = 1;
	a->type = type;
	MB__PUSH(n->attribute, n->n_attribute, a);
	return a;
}

static inline void mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
	a->has_i = 1;
	a->i = v;
}

static inline void mb_attr_ints(Onnx__NodeProto *n, const char *name, size_t count, const int64_t *v)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
	a->n_ints = count;
	a->ints = mb__memdup(v, count * sizeof *v);
}

static inline void mb_attr_float(Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
	a->has_f = 1;
	a->f = v;
}

static inline void mb_attr_floats(Onnx__NodeProto *n, const char *name, size_t count, const float *v)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
	a->n_floats = count;
	a->floats = mb__memdup(v, count * sizeof *v);
}

static inline void mb_attr_string(Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
	a->has_s = 1;
	a->s.len = strlen(v);
	a->s.data = mb__memdup(v, a->s.len);
}

/* The node owns t / g afterwards. */
static inline void mb_attr_tensor(Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
	a->t = t;
}

static inline void mb_attr_graph(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
	Onnx__AttributeProto *a = mb__attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
	a->g = g;
}

/* A model-local function domain::name with one opset import and a body node list left
 * empty apart from what the caller adds with the returned pointer. */
static inline Onnx__FunctionProto *mb_function(Onnx__ModelProto *m, const char *domain, const char *name,
                                               const char *inputs, const char *outputs)
{
	Onnx__FunctionProto *f = mb__alloc(sizeof *f);
	onnx__function_proto__init(f);
	f->name = mb__strdup(name);
	f->domain = mb__strdup(domain);
	f->input = mb__split(inputs, &f->n_input);
	f->output = mb__split(outputs, &f->n_output);
	MB__PUSH(m->functions, m->n_functions, f);
	return f;
}

/* ---- output ---- */

/* Serializes m into a malloc'd buffer (free with free()); *size gets its length. */
static inline uint8_t *mb_pack(const Onnx__ModelProto *m, size_t *size)
{
	size_t n = onnx__model_proto__get_packed_size(m);
	uint8_t *buf = mb__alloc(n);
	*size = onnx__model_proto__pack(m, buf);
	return buf;
}

static inline void mb_free(Onnx__ModelProto *m)
{
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
}

/* Packs and frees m in one go. */
static inline uint8_t *mb_finish(Onnx__ModelProto *m, size_t *size)
{
	uint8_t *buf = mb_pack(m, size);
	mb_free(m);
	return buf;
}

/* Writes bytes to path; returns 0 on success. Values for an external data file must be
 * little-endian first (mb_to_le). */
static inline int mb_write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;
	if (!f)
		return -1;
	if (size && fwrite(data, 1, size, f) != size)
		rc = -1;
	if (fclose(f))
		rc = -1;
	return rc;
}

#endif
