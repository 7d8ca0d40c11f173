/*
 * npy.c - the NumPy .npy format (versions 1.0, 2.0, 3.0): header dict parsing, dtype
 * mapping and encoding. See numpy/lib/format.py's documentation for the layout:
 *   "\x93NUMPY" major minor, header length (u16 for 1.0, u32 for 2.0/3.0, little-endian),
 *   a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with
 *   spaces and ending in '\n', then the array data.
 *
 * Decisions: the header parser accepts what Python's literal_eval would (whitespace, either
 * quote, trailing commas, any key order, Python 2 "3L" dims) but no other keys; '<' and '>'
 * data is converted to the host's byte order, and '=', '|' or no order letter mean the
 * host's order (as numpy reads them); files are written in the host's order with its letter
 * ('<f4' on little-endian hosts, '>f4' on big-endian ones, as numpy.save does); fortran_order True is refused
 * even when the layouts coincide; bool bytes are normalized to 0/1; the data must be exactly
 * the shape's size (numpy ignores trailing bytes; a mismatch here is an error).
 */
#include <stdio.h>
#include <string.h>

#include "npy.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64

/* The .npy dtypes onnxrun maps: kind letter, item size, and the descr it writes. */
static const struct {
	char kind;
	int size;
	enum onnxrun_dtype dtype;
	const char *descr;
} npy_types[] = {
	{ 'f', 2, ONNXRUN_DTYPE_FLOAT16, "f2" },    { 'f', 4, ONNXRUN_DTYPE_FLOAT, "f4" },
	{ 'f', 8, ONNXRUN_DTYPE_DOUBLE, "f8" },     { 'i', 1, ONNXRUN_DTYPE_INT8, "i1" },
	{ 'i', 2, ONNXRUN_DTYPE_INT16, "i2" },      { 'i', 4, ONNXRUN_DTYPE_INT32, "i4" },
	{ 'i', 8, ONNXRUN_DTYPE_INT64, "i8" },      { 'u', 1, ONNXRUN_DTYPE_UINT8, "u1" },
	{ 'u', 2, ONNXRUN_DTYPE_UINT16, "u2" },     { 'u', 4, ONNXRUN_DTYPE_UINT32, "u4" },
	{ 'u', 8, ONNXRUN_DTYPE_UINT64, "u8" },     { 'b', 1, ONNXRUN_DTYPE_BOOL, "b1" },
	{ 'c', 8, ONNXRUN_DTYPE_COMPLEX64, "c8" }, { 'c', 16, ONNXRUN_DTYPE_COMPLEX128, "c16" },
};
#define NPY_TYPES (sizeof npy_types / sizeof npy_types[0])

struct npy_header {
	enum onnxrun_dtype dtype;
	bool swap; /* the data's byte order is not the host's */
	bool fortran_order;
	int32_t rank;
	int64_t dims[ONNXRUN_MAX_RANK];
};

/* A cursor over the header text. */
struct parser {
	const char *start, *p, *end;
	struct onnxrun__err *err;
};

static enum onnxrun_status malformed(struct parser *ps, const char *expected)
{
	return onnxrun__fail(ps->err, ONNXRUN_ERROR_INVALID_INPUT,
	                     "malformed .npy header: expected %s at column %d", expected,
	                     (int)(ps->p - ps->start) + 1);
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

/* Consumes `c` (after whitespace) if it is next. */
static bool accept(struct parser *ps, char c)
{
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == c) {
		ps->p++;
		return true;
	}
	return false;
}

/* Consumes the word `w` (True, False) if it is next. */
static bool accept_word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);
	skip_ws(ps);
	if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0) {
		ps->p += n;
		return true;
	}
	return false;
}

/* Parses a quoted Python string without escapes into buf (NUL-terminated). */
static enum onnxrun_status parse_string(struct parser *ps, char *buf, size_t cap)
{
	char quote;
	size_t n = 0;
	skip_ws(ps);
	if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
		return malformed(ps, "a quoted string");
	quote = *ps->p++;
	while (ps->p < ps->end && *ps->p != quote) {
		if (*ps->p == '\\' || n + 1 >= cap)
			return malformed(ps, "a short string without escapes");
		buf[n++] = *ps->p++;
	}
	if (ps->p >= ps->end)
		return malformed(ps, "a closing quote");
	ps->p++;
	buf[n] = '\0';
	return ONNXRUN_OK;
}

/* Maps a descr such as '<f4', '>f8' or '|b1' to a dtype, and whether its bytes are in the
 * other order than the host's. */
static enum onnxrun_status map_descr(const char *descr, struct onnxrun__err *err, enum onnxrun_dtype *out,
                                     bool *swap)
{
	char order = descr[0], kind;
	int size = 0;
	const char *p = descr + 1;
	if (!order || !strchr("<>|=", order)) { /* no byte order: numpy reads it as the host's */
		order = '|';
		p = descr;
	}
	kind = *p++;
	while (*p >= '0' && *p <= '9' && size < 1000)
		size = size * 10 + (*p++ - '0');
	for (size_t i = 0; !*p && i < NPY_TYPES; i++) {
		if (npy_types[i].kind != kind || npy_types[i].size != size)
			continue;
		*out = npy_types[i].dtype;
		*swap = order == (ONNXRUN__BIG_ENDIAN ? '<' : '>') && size > 1;
		return ONNXRUN_OK;
	}
	if (kind == 'O')
		return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED, "object arrays ('%s') are not supported", descr);
	if (kind == 'U' || kind == 'S' || kind == 'a')
		return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED,
		                     "string and unicode arrays ('%s') are not supported", descr);
	return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED, "dtype '%s' is not supported", descr);
}

static enum onnxrun_status parse_descr(struct parser *ps, struct npy_header *h)
{
	char descr[64];
	enum onnxrun_status st;
	if (accept(ps, '['))
		return onnxrun__fail(ps->err, ONNXRUN_ERROR_UNSUPPORTED,
		                     "structured dtypes (a descr list) are not supported");
	if ((st = parse_string(ps, descr, sizeof descr)))
		return st;
	return map_descr(descr, ps->err, &h->dtype, &h->swap);
}

/* Parses one dim: decimal digits, with an optional Python 2 'L' suffix. */
static enum onnxrun_status parse_dim(struct parser *ps, int64_t *out)
{
	int64_t v = 0;
	skip_ws(ps);
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return malformed(ps, "a non-negative integer dimension");
	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
		if (!onnxrun__mul_i64(v, 10, &v) || !onnxrun__add_i64(v, *ps->p - '0', &v))
			return onnxrun__fail(ps->err, ONNXRUN_ERROR_LIMIT, "a .npy shape dimension overflows int64");
		ps->p++;
	}
	if (ps->p < ps->end && *ps->p == 'L')
		ps->p++;
	*out = v;
	return ONNXRUN_OK;
}

/* Parses a shape tuple: (), (5,), (2, 3), (2, 3,). */
static enum onnxrun_status parse_shape(struct parser *ps, struct npy_header *h)
{
	enum onnxrun_status st;
	h->rank = 0;
	if (!accept(ps, '('))
		return malformed(ps, "'(' starting the shape");
	while (!accept(ps, ')')) {
		if (h->rank == ONNXRUN_MAX_RANK)
			return onnxrun__fail(ps->err, ONNXRUN_ERROR_LIMIT, ".npy shape has more than %d dimensions",
			                     ONNXRUN_MAX_RANK);
		if ((st = parse_dim(ps, &h->dims[h->rank++])))
			return st;
		if (!accept(ps, ',') && (skip_ws(ps), ps->p >= ps->end || *ps->p != ')'))
			return malformed(ps, "',' or ')' in the shape");
	}
	/* "(5)" (no comma) is accepted as 1-d too; only "()" is 0-d. */
	return ONNXRUN_OK;
}

/* Parses the value of one key into h and marks it seen (bit 0 descr, 1 order, 2 shape). */
static enum onnxrun_status parse_entry(struct parser *ps, struct npy_header *h, unsigned *seen)
{
	char key[32];
	enum onnxrun_status st;
	unsigned bit;
	if ((st = parse_string(ps, key, sizeof key)))
		return st;
	if (!accept(ps, ':'))
		return malformed(ps, "':' after a key");
	if (strcmp(key, "descr") == 0) {
		bit = 1;
		st = parse_descr(ps, h);
	} else if (strcmp(key, "fortran_order") == 0) {
		bit = 2;
		h->fortran_order = accept_word(ps, "True");
		if (!h->fortran_order && !accept_word(ps, "False"))
			st = malformed(ps, "True or False");
	} else if (strcmp(key, "shape") == 0) {
		bit = 4;
		st = parse_shape(ps, h);
	} else {
		return onnxrun__fail(ps->err, ONNXRUN_ERROR_INVALID_INPUT, "unexpected key '%s' in the .npy header",
		                     key);
	}
	if (!st && (*seen & bit))
		st = onnxrun__fail(ps->err, ONNXRUN_ERROR_INVALID_INPUT, "key '%s' repeated in the .npy header", key);
	*seen |= bit;
	return st;
}

/* Parses the header dict: any key order, whitespace anywhere, optional trailing comma. */
static enum onnxrun_status parse_header(const char *text, size_t len, struct onnxrun__err *err,
                                        struct npy_header *h)
{
	struct parser ps = { text, text, text + len, err };
	enum onnxrun_status st;
	unsigned seen = 0;
	memset(h, 0, sizeof *h);
	if (!accept(&ps, '{'))
		return malformed(&ps, "'{'");
	while (!accept(&ps, '}')) {
		if ((st = parse_entry(&ps, h, &seen)))
			return st;
		if (!accept(&ps, ',') && (skip_ws(&ps), ps.p >= ps.end || *ps.p != '}'))
			return malformed(&ps, "',' or '}'");
	}
	skip_ws(&ps);
	if (ps.p != ps.end)
		return malformed(&ps, "only padding after '}'");
	if (seen != 7)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT, "the .npy header lacks '%s'",
		                     !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
	if (h->fortran_order)
		return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED,
		                     "Fortran-order .npy is not supported (save a C-contiguous array)");
	return ONNXRUN_OK;
}

/* Reads the magic, version and header length: the header text is data[*start, *start + *len). */
static enum onnxrun_status parse_preamble(const uint8_t *b, size_t size, struct onnxrun__err *err,
                                          size_t *start, size_t *len)
{
	if (size < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT, "not a .npy file (bad magic)");
	if (size < 10)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT, "truncated .npy preamble (%zu bytes)", size);
	if (b[7] != 0 || b[6] < 1 || b[6] > 3)
		return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED, ".npy format version %d.%d is not supported",
		                     b[6], b[7]);
	if (b[6] == 1) {
		*start = 10;
		*len = (size_t)b[8] | (size_t)b[9] << 8;
	} else {
		if (size < 12)
			return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT, "truncated .npy preamble (%zu bytes)", size);
		*start = 12;
		*len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
	}
	if (*len > size - *start)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT,
		                     "truncated .npy header (%zu bytes declared, %zu present)", *len, size - *start);
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__npy_decode(const struct onnxrun_env *env, const void *data, size_t size,
                                        struct onnxrun__err *err, struct onnxrun_tensor **out)
{
	const uint8_t *b = data;
	struct npy_header h;
	struct onnxrun_tensor *t = NULL;
	struct onnxrun_shape shape;
	size_t start = 0, len = 0, nbytes, have;
	int64_t numel;
	enum onnxrun_status st;
	if ((st = parse_preamble(b, size, err, &start, &len)) ||
	    (st = parse_header((const char *)b + start, len, err, &h)))
		return st;
	shape.rank = h.rank;
	memcpy(shape.dims, h.dims, sizeof h.dims);
	if (!onnxrun__shape_numel(&shape, &numel))
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, ".npy shape is too large (element count overflows int64)");
	if (!onnxrun__tensor_bytes(h.dtype, numel, &nbytes))
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT,
		                     ".npy shape is too large: byte size of %lld %s elements overflows" ONNXRUN__SIZE_T_NOTE,
		                     (long long)numel, onnxrun_dtype_name(h.dtype), ONNXRUN__SIZE_T_BITS);
	have = size - start - len;
	if (have != nbytes)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT,
		                     ".npy data has %zu bytes, expected %zu (%lld %s elements)", have, nbytes,
		                     (long long)numel, onnxrun_dtype_name(h.dtype));
	if (nbytes > onnxrun__env_max_memory(env))
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT,
		                     ".npy shape needs %zu bytes, above the memory limit of %llu bytes "
		                     "(onnxrun_env_set_max_memory)", nbytes,
		                     (unsigned long long)onnxrun__env_max_memory(env));
	if ((st = onnxrun__tensor_new(env, h.dtype, h.rank, h.dims, NULL, err, &t)))
		return st;
	if (nbytes)
		onnxrun__bswap_copy(t->data, b + start + len, nbytes, h.swap ? onnxrun__dtype_swap_unit(h.dtype) : 1);
	if (t->dtype == ONNXRUN_DTYPE_BOOL)
		for (size_t i = 0; i < nbytes; i++)
			((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
	*out = t;
	return ONNXRUN_OK;
}

/* The .npy descr of a dtype in the host's byte order ('|' for one-byte types) into buf,
 * false when it has none. */
static bool descr_of(enum onnxrun_dtype dtype, char buf[8])
{
	for (size_t i = 0; i < NPY_TYPES; i++)
		if (npy_types[i].dtype == dtype) {
			snprintf(buf, 8, "%c%s", npy_types[i].size == 1 ? '|' : ONNXRUN__BIG_ENDIAN ? '>' : '<',
			         npy_types[i].descr);
			return true;
		}
	return false;
}

/* Writes the header dict for t into buf; returns its length (without padding). */
static size_t format_header(const struct onnxrun_tensor *t, const char *descr, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int32_t i = 0; i < t->rank && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
	if (n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%s), }", t->rank == 1 ? "," : "");
	return n;
}

enum onnxrun_status onnxrun__npy_encode(const struct onnxrun_env *env, const struct onnxrun_tensor *t,
                                        struct onnxrun__err *err, uint8_t **out, size_t *out_size)
{
	char descr[8];
	char text[128 + 24 * ONNXRUN_MAX_RANK];
	size_t n, pre, hlen, total;
	uint8_t *b;
	if (!descr_of(t->dtype, descr))
		return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED, "%s tensors have no .npy form",
		                     onnxrun_dtype_name(t->dtype));
	n = format_header(t, descr, text, sizeof text);
	/* Preamble + header + '\n' padded to NPY_ALIGN; version 1.0 stores the header length in
	 * 16 bits, 2.0 in 32. */
	pre = 10;
	hlen = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN - pre;
	if (hlen > 0xffff) {
		pre = 12;
		hlen = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN - pre;
	}
	if (t->nbytes > SIZE_MAX - pre - hlen)
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "tensor too large for .npy");
	total = pre + hlen + t->nbytes;
	b = onnxrun__malloc(env, total);
	if (!b)
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory (%zu bytes)", total);
	memcpy(b, NPY_MAGIC, NPY_MAGIC_LEN);
	b[6] = pre == 10 ? 1 : 2;
	b[7] = 0;
	for (size_t i = 0; i < pre - 8; i++)
		b[8 + i] = (uint8_t)(hlen >> (8 * i));
	memcpy(b + pre, text, n);
	memset(b + pre + n, ' ', hlen - n - 1);
	b[pre + hlen - 1] = '\n';
	if (t->nbytes)
		memcpy(b + pre + hlen, t->data, t->nbytes);
	*out = b;
	*out_size = total;
	return ONNXRUN_OK;
}
