/*
 * strip.c - keeps large float32 weights out of the protobuf parse.
 *
 * protobuf-c copies every bytes field it unpacks. An initializer's raw_data is the whole
 * weight array: copied into fresh memory, then packed into panels, then dropped, so a
 * 200 MB model wrote 400 MB of fresh pages while loading. onnxrun__strip_raw walks the wire
 * format down the one path that holds such arrays, ModelProto.graph (7) ->
 * GraphProto.initializer (5) -> TensorProto.raw_data (9), and writes a copy of the model
 * (small: everything but those arrays) in which each large float32 raw_data is empty. The
 * loader gives the initializer the original bytes as pending (runtime.h): ConvTranspose
 * packs straight from them, and only initializers no op rebuilds are copied, once.
 *
 * Only what it fully understands is rewritten. A second graph field (protobuf would merge
 * the two), a second raw_data in one tensor (the last would win), a group wire type or
 * bytes that do not parse leave the model as it is, for protobuf-c to parse or reject, so
 * errors stay the parser's. The rewrite changes raw_data contents and the lengths that
 * enclose them, nothing else: the parse of the copy sees the same fields in the same order.
 */
#include <string.h>

#include "tensor_proto.h"

enum {
	MODEL_GRAPH = 7,      /* ModelProto.graph */
	GRAPH_INITIALIZER = 5, /* GraphProto.initializer */
	TENSOR_DATA_TYPE = 2, /* TensorProto.data_type */
	TENSOR_RAW_DATA = 9,  /* TensorProto.raw_data */
	DATA_TYPE_FLOAT = 1,
	WIRE_VARINT = 0,
	WIRE_I64 = 1,
	WIRE_LEN = 2,
	WIRE_I32 = 5,
};

/* One field as it sits in the buffer. */
struct field {
	uint32_t number;
	int wire;
	const uint8_t *start;   /* its tag */
	const uint8_t *len_at;  /* WIRE_LEN: its length varint */
	const uint8_t *payload; /* WIRE_LEN: its contents */
	const uint8_t *end;     /* one past the field */
	uint64_t value;         /* WIRE_VARINT: the value */
};

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 70 && *p < end; shift += 7) {
		const uint8_t b = *(*p)++;
		if (shift == 63 && b > 1)
			return false; /* more than 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* Reads the field at *p (advancing past it); false when it does not parse. */
static bool next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t tag, len;
	memset(f, 0, sizeof *f);
	f->start = *p;
	if (!get_varint(p, end, &tag) || tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
		return false;
	f->number = (uint32_t)(tag >> 3);
	f->wire = (int)(tag & 7);
	switch (f->wire) {
	case WIRE_VARINT:
		if (!get_varint(p, end, &f->value))
			return false;
		break;
	case WIRE_I64:
	case WIRE_I32: {
		const size_t n = f->wire == WIRE_I64 ? 8 : 4;
		if ((size_t)(end - *p) < n)
			return false;
		*p += n;
		break;
	}
	case WIRE_LEN:
		f->len_at = *p;
		if (!get_varint(p, end, &len) || len > (uint64_t)(end - *p))
			return false;
		f->payload = *p;
		*p += len;
		break;
	default:
		return false; /* groups (3, 4) and invalid wire types: protobuf-c decides */
	}
	f->end = *p;
	return true;
}

/* Output, or only its size when o is NULL; slices likewise (counted when v is NULL). */
struct out {
	uint8_t *o;
	size_t n;
	struct onnxrun__raw_slice *v;
	size_t n_slices;
};

static void put(struct out *w, const uint8_t *from, const uint8_t *to)
{
	const size_t len = (size_t)(to - from);
	if (w->o && len)
		memcpy(w->o + w->n, from, len);
	w->n += len;
}

static void put_varint(struct out *w, uint64_t v)
{
	uint8_t b[10];
	size_t k = 0;
	do {
		b[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(w, b, b + k);
}

/* The raw_data field of one TensorProto's contents, when it is worth leaving out: the
 * only raw_data, length-delimited, at least min_len bytes, and data_type FLOAT. *ok false:
 * the contents do not parse. */
static bool strippable(const uint8_t *p, const uint8_t *end, size_t min_len, struct field *raw, bool *ok)
{
	struct field f;
	int n_raw = 0;
	uint64_t dtype = 0;
	while (p < end) {
		if (!next_field(&p, end, &f)) {
			*ok = false;
			return false;
		}
		if (f.number == TENSOR_RAW_DATA) {
			n_raw++;
			*raw = f;
		} else if (f.number == TENSOR_DATA_TYPE && f.wire == WIRE_VARINT) {
			dtype = f.value; /* the last one counts, as in the parse */
		}
	}
	/* where floats must be aligned to be read in place, unaligned arrays are parsed (copied) */
	return n_raw == 1 && raw->wire == WIRE_LEN && (size_t)(raw->end - raw->payload) >= min_len &&
	       dtype == DATA_TYPE_FLOAT && (!ONNXRUN__STRICT_ALIGNMENT || (uintptr_t)raw->payload % sizeof(float) == 0);
}

/* Writes the GraphProto contents [p, end) with the large raw_data emptied. */
static bool put_graph(struct out *w, const uint8_t *p, const uint8_t *end, size_t min_len)
{
	size_t index = 0;
	while (p < end) {
		struct field f, raw = { 0 };
		bool ok = true;
		if (!next_field(&p, end, &f))
			return false;
		if (f.number != GRAPH_INITIALIZER || f.wire != WIRE_LEN) {
			put(w, f.start, f.end);
			continue;
		}
		if (strippable(f.payload, f.end, min_len, &raw, &ok)) {
			const size_t len = (size_t)(raw.end - raw.payload);
			/* the tensor loses the payload and all but one byte of its length varint */
			const size_t tensor = (size_t)(f.end - f.payload) - len - (size_t)(raw.payload - raw.len_at) + 1;
			put(w, f.start, f.len_at);
			put_varint(w, tensor);
			put(w, f.payload, raw.len_at);
			put_varint(w, 0);
			put(w, raw.end, f.end);
			if (w->v)
				w->v[w->n_slices] = (struct onnxrun__raw_slice){ index, raw.payload, len };
			w->n_slices++;
		} else if (!ok) {
			return false;
		} else {
			put(w, f.start, f.end);
		}
		index++;
	}
	return true;
}

/* Writes the model with its one graph field's contents rewritten (gsize bytes). */
static bool put_model(struct out *w, const uint8_t *p, const uint8_t *end, size_t min_len, size_t gsize)
{
	while (p < end) {
		struct field f;
		if (!next_field(&p, end, &f))
			return false;
		if (f.number != MODEL_GRAPH) {
			put(w, f.start, f.end);
			continue;
		}
		put(w, f.start, f.len_at);
		put_varint(w, gsize);
		if (!put_graph(w, f.payload, f.end, min_len))
			return false;
	}
	return true;
}

enum onnxrun_status onnxrun__strip_raw(const struct onnxrun_env *env, const void *data, size_t size,
                                       size_t min_len, struct onnxrun__stripped *out, struct onnxrun__err *err)
{
	const uint8_t *p = data, *end = p + size;
	struct field f, graph = { 0 };
	struct out gsizing = { NULL, 0, NULL, 0 }, sizing = { NULL, 0, NULL, 0 }, w = { NULL, 0, NULL, 0 };
	int n_graph = 0;
	memset(out, 0, sizeof *out);
	if (!data)
		return ONNXRUN_OK;
	while (p < end) {
		if (!next_field(&p, end, &f))
			return ONNXRUN_OK;
		if (f.number == MODEL_GRAPH) {
			n_graph++;
			graph = f;
		}
	}
	if (n_graph != 1 || graph.wire != WIRE_LEN)
		return ONNXRUN_OK;
	if (!put_graph(&gsizing, graph.payload, graph.end, min_len) || gsizing.n_slices == 0 ||
	    !put_model(&sizing, data, end, min_len, gsizing.n))
		return ONNXRUN_OK;
	w.o = onnxrun__malloc(env, sizing.n);
	w.v = onnxrun__malloc(env, sizing.n_slices * sizeof *w.v);
	if (!w.o || !w.v) {
		onnxrun__free(env, w.o);
		onnxrun__free(env, w.v);
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory parsing the model");
	}
	if (!put_model(&w, data, end, min_len, gsizing.n) || w.n != sizing.n || w.n_slices != sizing.n_slices) {
		onnxrun__free(env, w.o); /* not reached: the walk above parsed the same bytes */
		onnxrun__free(env, w.v);
		return ONNXRUN_OK;
	}
	out->bytes = w.o;
	out->size = w.n;
	out->slices = w.v;
	out->n_slices = w.n_slices;
	return ONNXRUN_OK;
}

void onnxrun__stripped_free(const struct onnxrun_env *env, struct onnxrun__stripped *s)
{
	onnxrun__free(env, s->bytes);
	onnxrun__free(env, s->slices);
	memset(s, 0, sizeof *s);
}
