/*
 * tensor_proto.c - ONNX TensorProto -> onnxrun tensor (every dtype; raw_data, typed fields,
 * string_data and external data) and tensor -> serialized TensorProto (.pb tensor files).
 *
 * Decisions where onnx.proto is silent:
 *  - Exactly one data source: raw_data, the dtype's typed field, or external data; a second
 *    one, or a typed field of another dtype, is an error. Empty tensors need no data.
 *  - int32_data entries are narrowed to the element width (low bits, as ONNX Runtime does);
 *    uint64_data likewise for uint32. Bools read as value != 0 from every source.
 *  - External data: "checksum" and unknown keys are ignored; no "length" means "to the end
 *    of the file"; the file must be a regular file inside base_dir after symlinks resolve.
 *  - data_type 17..23 (float8, 4-bit types) is UNSUPPORTED rather than malformed.
 *
 * raw_data and external data are little-endian (onnx.proto); on a big-endian host every
 * element wider than a byte is swapped into host order as it is copied, and swapped back
 * when a tensor is encoded. Data that needs a swap is never used in place (mapped,
 * borrowed as pending bytes): it is copied. The typed fields are decoded by protobuf-c
 * into host order already.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "tensor_proto.h"

/* Where a TensorProto keeps its elements. */
enum source {
	SRC_RAW,
	SRC_FLOAT,
	SRC_INT32,
	SRC_STRING,
	SRC_INT64,
	SRC_DOUBLE,
	SRC_UINT64,
	SRC_EXTERNAL,
	SRC_NONE,
};

static const char *const source_names[] = {
	"raw_data", "float_data", "int32_data", "string_data", "int64_data",
	"double_data", "uint64_data", "external data", "no data",
};

/* What is known about the tensor being decoded; external data is open once checked. */
struct decode {
	const Onnx__TensorProto *tp;
	const char *name;
	enum onnxrun_dtype dtype;
	int32_t rank;
	int64_t dims[ONNXRUN_MAX_RANK];
	int64_t numel;
	size_t nbytes;
	enum source src;
	int ext; /* descriptor of the external data file, -1 when none is open */
	const char *ext_location;
	int64_t ext_offset;
	bool in_place; /* the data was taken or mapped: nothing to copy */
};

/* Formats "tensor '<name>': <reason>" into err and returns status. */
static enum onnxrun_status tensor_fail(struct onnxrun__err *err, enum onnxrun_status status,
                                       const struct decode *d, const char *fmt, ...)
	ONNXRUN__PRINTF(4, 5);

static enum onnxrun_status tensor_fail(struct onnxrun__err *err, enum onnxrun_status status,
                                       const struct decode *d, const char *fmt, ...)
{
	char reason[ONNXRUN__ERR_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	return onnxrun__fail(err, status, "tensor '%s': %s", d->name, reason);
}

/* ---- protobuf-c allocator bridge ---- */

static void *pb_alloc(void *ctx, size_t size)
{
	struct onnxrun__pb_allocator *a = ctx;
	void *p = onnxrun__malloc_aligned(a->env, size); /* raw_data blocks become tensor data */
	if (!p)
		a->oom = true;
	return p;
}

static void pb_free(void *ctx, void *ptr)
{
	struct onnxrun__pb_allocator *a = ctx;
	onnxrun__free(a->env, ptr);
}

void onnxrun__pb_allocator_init(struct onnxrun__pb_allocator *a, const struct onnxrun_env *env)
{
	a->base.alloc = pb_alloc;
	a->base.free = pb_free;
	a->base.allocator_data = a;
	a->env = env;
	a->oom = false;
}

/* ---- header: dtype, dims, sizes ---- */

/* Checks data_type: one of onnxrun's 16 dtypes. Types added to ONNX after bfloat16
 * (float8, 4-bit) are UNSUPPORTED; anything else is malformed. */
static enum onnxrun_status check_dtype(struct decode *d, struct onnxrun__err *err)
{
	static const char *const newer[] = { "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
		                             "float8e5m2fnuz", "uint4", "int4", "float4e2m1" };
	int dt = d->tp->data_type;
	if (onnxrun__dtype_valid(dt)) {
		d->dtype = (enum onnxrun_dtype)dt;
		return ONNXRUN_OK;
	}
	if (dt == 0)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "data_type is not set (0, undefined)");
	if (dt > ONNXRUN_DTYPE_BFLOAT16 && dt <= ONNXRUN_DTYPE_BFLOAT16 + 7)
		return tensor_fail(err, ONNXRUN_ERROR_UNSUPPORTED, d, "data_type %d (%s) is not supported",
		                   dt, newer[dt - ONNXRUN_DTYPE_BFLOAT16 - 1]);
	return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "unknown data_type %d", dt);
}

/* Checks rank, dims and that the element count and byte size fit (int64, size_t). */
static enum onnxrun_status check_shape(struct decode *d, struct onnxrun__err *err)
{
	const Onnx__TensorProto *tp = d->tp;
	int64_t numel = 1;
	if (tp->n_dims > ONNXRUN_MAX_RANK)
		return tensor_fail(err, ONNXRUN_ERROR_LIMIT, d, "rank %zu is above the limit of %d",
		                   tp->n_dims, ONNXRUN_MAX_RANK);
	d->rank = (int32_t)tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0)
			return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "dims[%zu] is negative (%lld)",
			                   i, (long long)tp->dims[i]);
		d->dims[i] = tp->dims[i];
	}
	for (size_t i = 0; i < tp->n_dims; i++)
		if (!onnxrun__mul_i64(numel, tp->dims[i], &numel))
			return tensor_fail(err, ONNXRUN_ERROR_LIMIT, d, "element count overflows int64");
	if (!onnxrun__tensor_bytes(d->dtype, numel, &d->nbytes) || d->nbytes > (size_t)INT64_MAX)
		return tensor_fail(err, ONNXRUN_ERROR_LIMIT, d, "byte size of %lld %s elements overflows" ONNXRUN__SIZE_T_NOTE,
		                   (long long)numel, onnxrun_dtype_name(d->dtype), ONNXRUN__SIZE_T_BITS);
	d->numel = numel;
	return ONNXRUN_OK;
}

/* ---- data sources ---- */

/* The typed field that holds dtype's values, and how many entries one element takes. */
static enum source typed_source(enum onnxrun_dtype dtype, int64_t *per_element)
{
	*per_element = 1;
	switch (dtype) {
	case ONNXRUN_DTYPE_COMPLEX64:
		*per_element = 2;
		return SRC_FLOAT;
	case ONNXRUN_DTYPE_FLOAT:
		return SRC_FLOAT;
	case ONNXRUN_DTYPE_COMPLEX128:
		*per_element = 2;
		return SRC_DOUBLE;
	case ONNXRUN_DTYPE_DOUBLE:
		return SRC_DOUBLE;
	case ONNXRUN_DTYPE_INT64:
		return SRC_INT64;
	case ONNXRUN_DTYPE_UINT32:
	case ONNXRUN_DTYPE_UINT64:
		return SRC_UINT64;
	case ONNXRUN_DTYPE_STRING:
		return SRC_STRING;
	default: /* bool, (u)int8, (u)int16, int32, float16, bfloat16 */
		return SRC_INT32;
	}
}

/* Entries in a source (bytes for raw_data). */
static size_t source_count(const Onnx__TensorProto *tp, enum source s)
{
	switch (s) {
	case SRC_RAW: return tp->raw_data.len;
	case SRC_FLOAT: return tp->n_float_data;
	case SRC_INT32: return tp->n_int32_data;
	case SRC_STRING: return tp->n_string_data;
	case SRC_INT64: return tp->n_int64_data;
	case SRC_DOUBLE: return tp->n_double_data;
	case SRC_UINT64: return tp->n_uint64_data;
	default: return 0;
	}
}

/* The one in-message source that holds data (SRC_NONE if none); two is an error. */
static enum onnxrun_status find_source(struct decode *d, struct onnxrun__err *err, enum source *out)
{
	enum source found = SRC_NONE;
	for (int s = SRC_RAW; s <= SRC_UINT64; s++) {
		bool present = source_count(d->tp, (enum source)s) > 0 ||
		               (s == SRC_RAW && d->tp->has_raw_data);
		if (!present)
			continue;
		if (found != SRC_NONE)
			return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "has both %s and %s",
			                   source_names[found], source_names[s]);
		found = (enum source)s;
	}
	*out = found;
	return ONNXRUN_OK;
}

/* Checks that the in-message data matches the dtype and shape exactly. */
static enum onnxrun_status check_inline(struct decode *d, enum source found, struct onnxrun__err *err)
{
	int64_t per, want;
	enum source typed = typed_source(d->dtype, &per);
	size_t count = source_count(d->tp, found);
	want = d->numel * per; /* cannot overflow: numel * elemsize fits in int64 */
	if (found == SRC_NONE && d->numel == 0)
		found = typed;
	if (found == SRC_NONE)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "has no data: expected %lld values in %s", (long long)want,
		                   source_names[typed]);
	if (found == SRC_RAW && d->dtype == ONNXRUN_DTYPE_STRING)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "raw_data cannot hold strings (string_data must be used)");
	if (found == SRC_RAW && count != d->nbytes)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "raw_data has %zu bytes, expected %zu",
		                   count, d->nbytes);
	if (found != SRC_RAW && found != typed)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "%s cannot hold %s values",
		                   source_names[found], onnxrun_dtype_name(d->dtype));
	if (found != SRC_RAW && (uint64_t)count != (uint64_t)want)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "%s has %zu values, expected %lld",
		                   source_names[found], count, (long long)want);
	d->src = found;
	return ONNXRUN_OK;
}

/* ---- external data ---- */

#if ONNXRUN__OS_FILES
/* Parses a non-negative decimal integer (digits only) into *out; false if malformed. */
static bool parse_u63(const char *s, int64_t *out)
{
	int64_t v = 0;
	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (!onnxrun__mul_i64(v, 10, &v) || !onnxrun__add_i64(v, *s - '0', &v))
			return false;
	}
	*out = v;
	return true;
}

struct ext_keys {
	const char *location;
	int64_t offset;
	int64_t length; /* -1: to the end of the file */
};

/* Reads the location/offset/length entries (checksum and unknown keys are ignored). */
static enum onnxrun_status parse_ext_keys(struct decode *d, struct ext_keys *k, struct onnxrun__err *err)
{
	const Onnx__TensorProto *tp = d->tp;
	k->location = NULL;
	k->offset = 0;
	k->length = -1;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const char *key = tp->external_data[i]->key ? tp->external_data[i]->key : "";
		const char *val = tp->external_data[i]->value;
		if (strcmp(key, "location") == 0) {
			k->location = val;
		} else if (strcmp(key, "offset") == 0 || strcmp(key, "length") == 0) {
			int64_t *dst = key[0] == 'o' ? &k->offset : &k->length;
			if (!parse_u63(val, dst))
				return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
				                   "external data %s '%s' is not a non-negative integer", key,
				                   val ? val : "");
		}
	}
	if (!k->location || !*k->location)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "external data has no location");
	return ONNXRUN_OK;
}

/* Rejects absolute locations (on Windows also ones with a drive letter) and any ".."
 * component (components end at the platform's separators: '/', on Windows also '\\'). */
static enum onnxrun_status check_location(struct decode *d, const char *loc, struct onnxrun__err *err)
{
	const char *p = loc;
	if (onnxrun__os_path_absolute(loc))
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "external data location '%s' is absolute", loc);
	while (*p) {
		size_t n = 0;
		while (p[n] && !onnxrun__os_is_sep(p[n]))
			n++;
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
			                   "external data location '%s' leaves the model's folder", loc);
		p += n;
		while (*p && onnxrun__os_is_sep(*p))
			p++;
	}
	return ONNXRUN_OK;
}

/* Resolves base_dir/loc into resolved (ONNXRUN__OS_PATH_MAX bytes) and checks, after
 * following symlinks, that it is still inside base_dir. The paths live in buffers of the
 * caller's (none from the C library's heap: the env's allocator sees every allocation). */
static enum onnxrun_status resolve_location(struct decode *d, const char *base_dir, const char *loc,
                                            char *resolved, struct onnxrun__err *err)
{
	char joined[ONNXRUN__OS_PATH_MAX], base[ONNXRUN__OS_PATH_MAX];
	if ((size_t)snprintf(joined, sizeof joined, "%s/%s", base_dir, loc) >= sizeof joined)
		return tensor_fail(err, ONNXRUN_ERROR_LIMIT, d, "external data path '%s/%s' is too long",
		                   base_dir, loc);
	if (onnxrun__os_realpath_into(base_dir, base, sizeof base))
		return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data folder '%s': %s", base_dir,
		                   strerror(errno));
	if (onnxrun__os_realpath_into(joined, resolved, ONNXRUN__OS_PATH_MAX))
		return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data file '%s': %s", joined, strerror(errno));
	if (!onnxrun__os_path_inside(base, resolved))
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "external data file '%s' resolves outside the model's folder", loc);
	return ONNXRUN_OK;
}

/* Checks offset/length against the file size and the tensor's byte size, and seeks. */
static enum onnxrun_status check_ext_range(struct decode *d, const struct ext_keys *k, int64_t fsize,
                                           struct onnxrun__err *err)
{
	int64_t length = k->length;
	if (k->offset > fsize)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "external data offset %lld is beyond the end of '%s' (%lld bytes)",
		                   (long long)k->offset, k->location, (long long)fsize);
	if (length < 0)
		length = fsize - k->offset;
	if (length > fsize - k->offset)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "external data offset %lld + length %lld is beyond the end of '%s' (%lld bytes)",
		                   (long long)k->offset, (long long)length, k->location, (long long)fsize);
	if ((uint64_t)length != (uint64_t)d->nbytes)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "external data has %lld bytes, expected %zu",
		                   (long long)length, d->nbytes);
	d->ext_offset = k->offset;
	if (onnxrun__os_seek_set(d->ext, k->offset) != 0)
		return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data file '%s': %s", k->location,
		                   strerror(errno));
	return ONNXRUN_OK;
}

/* Validates the external data entries and opens the file at the data's first byte. */
static enum onnxrun_status open_external(struct decode *d, const char *base_dir, struct onnxrun__err *err)
{
	char resolved[ONNXRUN__OS_PATH_MAX];
	struct ext_keys k;
	int64_t fsize = 0;
	enum onnxrun_status st;
	if (d->dtype == ONNXRUN_DTYPE_STRING)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "string tensors cannot use external data");
	if ((st = parse_ext_keys(d, &k, err)) || (st = check_location(d, k.location, err)))
		return st;
	if (!base_dir)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d,
		                   "has external data '%s' but no folder to read it from", k.location);
	if ((st = resolve_location(d, base_dir, k.location, resolved, err)))
		return st;
	d->ext_location = k.location;
	/* Checked before opening too: opening a FIFO would block until someone writes to it. */
	if (onnxrun__os_path_regular(resolved, NULL) != 1)
		return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data file '%s' is not a regular file",
		                   k.location);
	if ((d->ext = onnxrun__os_open_read(resolved)) < 0)
		return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data file '%s': %s", k.location,
		                   strerror(errno));
	if (onnxrun__os_fd_regular(d->ext, &fsize) != 1)
		return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data file '%s' is not a regular file",
		                   k.location);
	return check_ext_range(d, &k, fsize, err);
}
#else
/* No files (bare metal): external data cannot be read, whatever its entries say (not
 * validated here: that code and its messages would be flash spent on a refusal). */
static enum onnxrun_status open_external(struct decode *d, const char *base_dir, struct onnxrun__err *err)
{
	(void)base_dir;
	return tensor_fail(err, ONNXRUN_ERROR_UNSUPPORTED, d,
	                   "has external data, which this platform cannot read (no file system): "
	                   "keep the weights inside the model (onnx.save with save_as_external_data=False)");
}
#endif

/* Decides where the data comes from and checks its size, before anything is allocated. */
static enum onnxrun_status pick_source(struct decode *d, const char *base_dir, struct onnxrun__err *err)
{
	const Onnx__TensorProto *tp = d->tp;
	enum source found = SRC_NONE;
	enum onnxrun_status st;
	int loc = tp->has_data_location ? (int)tp->data_location : 0;
	if (tp->segment)
		return tensor_fail(err, ONNXRUN_ERROR_UNSUPPORTED, d, "segmented tensors are not supported");
	if (loc != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT && loc != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "unknown data_location %d", loc);
	if ((st = find_source(d, err, &found)))
		return st;
	if (loc == ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT)
		return check_inline(d, found, err);
	if (found != SRC_NONE)
		return tensor_fail(err, ONNXRUN_ERROR_INVALID_MODEL, d, "has both external data and %s",
		                   source_names[found]);
	d->src = SRC_EXTERNAL;
	return open_external(d, base_dir, err);
}

/* ---- filling the tensor ---- */

/* Copies a typed field into the tensor, narrowing int32_data/uint64_data entries to the
 * element width (the low bits: the bit pattern for float16/bfloat16); bool is value != 0. */
static void fill_typed(struct onnxrun_tensor *t, const Onnx__TensorProto *tp)
{
	size_t n = (size_t)t->numel;
	switch (t->dtype) {
	case ONNXRUN_DTYPE_FLOAT: case ONNXRUN_DTYPE_COMPLEX64:
		memcpy(t->data, tp->float_data, tp->n_float_data * sizeof(float));
		break;
	case ONNXRUN_DTYPE_DOUBLE: case ONNXRUN_DTYPE_COMPLEX128:
		memcpy(t->data, tp->double_data, tp->n_double_data * sizeof(double));
		break;
	case ONNXRUN_DTYPE_INT64:
		memcpy(t->data, tp->int64_data, n * sizeof(int64_t));
		break;
	case ONNXRUN_DTYPE_UINT64:
		memcpy(t->data, tp->uint64_data, n * sizeof(uint64_t));
		break;
	case ONNXRUN_DTYPE_UINT32:
		for (size_t i = 0; i < n; i++)
			((uint32_t *)t->data)[i] = (uint32_t)tp->uint64_data[i];
		break;
	case ONNXRUN_DTYPE_INT32:
		memcpy(t->data, tp->int32_data, n * sizeof(int32_t));
		break;
	case ONNXRUN_DTYPE_INT16: case ONNXRUN_DTYPE_UINT16:
	case ONNXRUN_DTYPE_FLOAT16: case ONNXRUN_DTYPE_BFLOAT16:
		for (size_t i = 0; i < n; i++)
			((uint16_t *)t->data)[i] = (uint16_t)(uint32_t)tp->int32_data[i];
		break;
	case ONNXRUN_DTYPE_INT8: case ONNXRUN_DTYPE_UINT8:
		for (size_t i = 0; i < n; i++)
			((uint8_t *)t->data)[i] = (uint8_t)(uint32_t)tp->int32_data[i];
		break;
	case ONNXRUN_DTYPE_BOOL:
		for (size_t i = 0; i < n; i++)
			((uint8_t *)t->data)[i] = tp->int32_data[i] != 0;
		break;
	default:
		break;
	}
}

/* Makes every bool byte 0 or 1. */
static void normalize_bool(struct onnxrun_tensor *t)
{
	if (t->dtype != ONNXRUN_DTYPE_BOOL)
		return;
	for (int64_t i = 0; i < t->numel; i++)
		((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
}

/* Copies the checked data from its source into the tensor. */
static enum onnxrun_status fill(const struct decode *d, struct onnxrun_tensor *t, struct onnxrun__err *err)
{
	const Onnx__TensorProto *tp = d->tp;
	if (t->numel == 0)
		return ONNXRUN_OK;
	switch (d->src) {
	case SRC_RAW:
		onnxrun__le_copy(t->data, tp->raw_data.data, d->nbytes, t->dtype);
		break;
	case SRC_STRING:
		for (size_t i = 0; i < tp->n_string_data; i++)
			if (onnxrun__tensor_string_set(t, (int64_t)i, (const char *)tp->string_data[i].data,
			                               tp->string_data[i].len))
				return tensor_fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, d, "out of memory");
		return ONNXRUN_OK;
#if ONNXRUN__OS_FILES
	case SRC_EXTERNAL:
		for (size_t got = 0; got < d->nbytes;) {
			const long long r = onnxrun__os_read(d->ext, (char *)t->data + got, d->nbytes - got);
			if (r <= 0)
				return tensor_fail(err, ONNXRUN_ERROR_IO, d, "external data file '%s': %s",
				                   d->ext_location, r < 0 ? strerror(errno) : "short read");
			got += (size_t)r;
		}
		onnxrun__le_copy(t->data, t->data, d->nbytes, t->dtype);
		break;
#endif
	default:
		fill_typed(t, tp);
		return ONNXRUN_OK;
	}
	normalize_bool(t);
	return ONNXRUN_OK;
}

/* Charges the tensor's bytes (elements, and the bytes of its strings) to the budget; LIMIT
 * when the cap would be passed. Called once the data's size is checked, before allocating. */
static enum onnxrun_status charge(const struct decode *d, struct onnxrun__mem_budget *b,
                                  struct onnxrun__err *err)
{
	uint64_t need = d->nbytes;
	if (d->src == SRC_STRING)
		for (size_t i = 0; i < d->tp->n_string_data; i++)
			need += d->tp->string_data[i].len + 1; /* no overflow: all of it is in memory */
	if (need > b->cap || b->used > b->cap - need)
		return tensor_fail(err, ONNXRUN_ERROR_LIMIT, d,
		                   "needs %llu bytes; with the %llu bytes of tensors before it that is above "
		                   "the memory limit of %llu bytes (onnxrun_env_set_max_memory)",
		                   (unsigned long long)need, (unsigned long long)b->used,
		                   (unsigned long long)b->cap);
	b->used += need;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__tensor_from_proto(const struct onnxrun_env *env, const Onnx__TensorProto *tp,
                                               const char *base_dir, struct onnxrun__err *err,
                                               struct onnxrun_tensor **out)
{
	struct onnxrun__mem_budget b = { 0, onnxrun__env_max_memory(env) };
	return onnxrun__tensor_from_proto_budget(env, tp, base_dir, &b, err, out);
}

/* External data worth mapping in place: big enough to pay for a mapping, at an offset that
 * keeps the data 64-byte aligned, not bool (whose bytes must be normalized) and not needing
 * a byte swap (a big-endian host copies it). */
static bool mappable(const struct onnxrun_env *env, const struct decode *d)
{
	return ONNXRUN__OS_FILES && d->src == SRC_EXTERNAL && !env->no_mmap && d->nbytes >= ((size_t)64 << 10) &&
	       d->ext_offset % 64 == 0 && d->dtype != ONNXRUN_DTYPE_BOOL && !onnxrun__le_needs_swap(d->dtype);
}

/* Creates the tensor for a checked decode: taking raw_data from `take` when given (moving
 * its block, swapped in place on a big-endian host, or with `borrow` leaving it where it is
 * as pending: runtime.h), mapping external data where mappable, else allocating (zeroed)
 * for fill() to copy into. */
static enum onnxrun_status make_tensor(const struct onnxrun_env *env, struct decode *d, Onnx__TensorProto *take,
                                       bool borrow, struct onnxrun__err *err, struct onnxrun_tensor **out)
{
	void *map = NULL, *data = NULL;
	size_t map_len = 0;
	enum onnxrun_status st;
	/* pending bytes are never normalized nor swapped, so only float32 is borrowed, and only
	 * where its file order is the host's */
	if (take && d->src == SRC_RAW && d->nbytes > 0 && take->raw_data.len == d->nbytes &&
	    (!borrow || (d->dtype == ONNXRUN_DTYPE_FLOAT && !onnxrun__le_needs_swap(d->dtype))))
		data = take->raw_data.data;
	else if (mappable(env, d))
		data = onnxrun__os_map(d->ext, d->ext_offset, d->nbytes, true, &map, &map_len);
	st = onnxrun__tensor_new(env, d->dtype, d->rank, d->dims, data, err, out);
	if (st) {
		if (map)
			onnxrun__os_unmap(map, map_len);
		onnxrun__err_prefix(err, "tensor '%s'", d->name);
		return st;
	}
	if (map) {
#if ONNXRUN__OS_FILES /* else never mapped (mappable) */
		(*out)->map = map;
		(*out)->map_len = map_len;
#endif
		d->in_place = true;
	} else if (data && borrow) {
		(*out)->pending = data;
		(*out)->data = NULL;
		d->in_place = true;
	} else if (data) {
		(*out)->owns_data = true; /* the block is the message's, moved: an onnxrun__malloc block */
		take->raw_data.data = NULL;
		take->raw_data.len = 0;
		onnxrun__le_copy(data, data, d->nbytes, d->dtype);
		normalize_bool(*out);
		d->in_place = true;
	}
	return ONNXRUN_OK;
}

static void close_external(struct decode *d)
{
#if ONNXRUN__OS_FILES
	if (d->ext >= 0)
		onnxrun__os_close(d->ext);
#else
	(void)d;
#endif
}

static enum onnxrun_status from_proto(const struct onnxrun_env *env, const Onnx__TensorProto *tp,
                                      Onnx__TensorProto *take, bool borrow, const char *base_dir,
                                      struct onnxrun__mem_budget *budget, struct onnxrun__err *err,
                                      struct onnxrun_tensor **out)
{
	struct decode d;
	struct onnxrun_tensor *t = NULL;
	enum onnxrun_status st;
	memset(&d, 0, sizeof d);
	d.ext = -1;
	d.tp = tp;
	d.name = tp->name ? tp->name : "";
	if ((st = check_dtype(&d, err)) || (st = check_shape(&d, err)) ||
	    (st = pick_source(&d, base_dir, err)) || (st = charge(&d, budget, err)) ||
	    (st = make_tensor(env, &d, take, borrow, err, &t)))
		goto fail;
	if (tp->name && !(t->name = onnxrun__strdup(env, tp->name))) {
		st = tensor_fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, &d, "out of memory");
		goto fail;
	}
	if (!d.in_place && (st = fill(&d, t, err)))
		goto fail;
	close_external(&d);
	*out = t;
	return ONNXRUN_OK;
fail:
	close_external(&d);
	onnxrun_tensor_free(t);
	return st;
}

enum onnxrun_status onnxrun__tensor_from_proto_budget(const struct onnxrun_env *env,
                                                      const Onnx__TensorProto *tp, const char *base_dir,
                                                      struct onnxrun__mem_budget *budget,
                                                      struct onnxrun__err *err, struct onnxrun_tensor **out)
{
	return from_proto(env, tp, NULL, false, base_dir, budget, err, out);
}

enum onnxrun_status onnxrun__tensor_from_proto_take(const struct onnxrun_env *env, Onnx__TensorProto *tp,
                                                    const char *base_dir, struct onnxrun__mem_budget *budget,
                                                    struct onnxrun__err *err, struct onnxrun_tensor **out)
{
	return from_proto(env, tp, tp, false, base_dir, budget, err, out);
}

enum onnxrun_status onnxrun__tensor_from_proto_borrow(const struct onnxrun_env *env, const Onnx__TensorProto *tp,
                                                      const char *base_dir, struct onnxrun__mem_budget *budget,
                                                      struct onnxrun__err *err, struct onnxrun_tensor **out)
{
	return from_proto(env, tp, (Onnx__TensorProto *)tp, true, base_dir, budget, err, out);
}

/* ---- .pb tensor files ---- */

/* Unpacks a .pb tensor file (see loader.h). Malformed content is INVALID_INPUT here: a tensor
 * file is an input, not a model. */
enum onnxrun_status onnxrun__tensor_pb_decode(const struct onnxrun_env *env, const void *data, size_t size,
                                              struct onnxrun__err *err, struct onnxrun_tensor **out)
{
	struct onnxrun__pb_allocator alloc;
	Onnx__TensorProto *tp;
	enum onnxrun_status st;
	onnxrun__pb_allocator_init(&alloc, env);
	tp = onnx__tensor_proto__unpack(&alloc.base, size, data);
	if (!tp && alloc.oom)
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory decoding a TensorProto");
	if (!tp)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT, "not a valid TensorProto");
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		st = onnxrun__fail(err, ONNXRUN_ERROR_INVALID_INPUT,
		                   "tensor '%s': external data is not allowed in a tensor file",
		                   tp->name ? tp->name : "");
	} else {
		/* the unpacked message is ours: its raw_data block becomes the tensor's data (moved,
		 * not copied), so freeing the rest of the parse leaves only small holes in an arena */
		struct onnxrun__mem_budget budget = { 0, onnxrun__env_max_memory(env) };
		st = onnxrun__tensor_from_proto_take(env, tp, NULL, &budget, err, out);
		if (st == ONNXRUN_ERROR_INVALID_MODEL)
			st = ONNXRUN_ERROR_INVALID_INPUT;
	}
	onnx__tensor_proto__free_unpacked(tp, &alloc.base);
	return st;
}

/* Packs dims, data_type, name and raw_data (little-endian; string_data for strings) into a
 * new buffer. */
enum onnxrun_status onnxrun__tensor_pb_encode(const struct onnxrun_env *env, const struct onnxrun_tensor *t,
                                              struct onnxrun__err *err, uint8_t **out, size_t *out_size)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	static char empty[1];
	ProtobufCBinaryData *strings = NULL;
	uint8_t *le = NULL; /* the elements in little-endian order, when that is not the host's */
	const struct onnxrun_string *s = t->data;
	uint8_t *buf;
	size_t size;
	tp.n_dims = (size_t)t->rank;
	tp.dims = (int64_t *)t->dims;
	tp.has_data_type = 1;
	tp.data_type = (int32_t)t->dtype;
	tp.name = t->name;
	if (t->dtype == ONNXRUN_DTYPE_STRING && t->numel > 0) {
		strings = onnxrun__calloc(env, (size_t)t->numel, sizeof *strings);
		if (!strings)
			return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		for (int64_t i = 0; i < t->numel; i++) {
			strings[i].len = s[i].size;
			strings[i].data = (uint8_t *)(s[i].data ? s[i].data : empty);
		}
		tp.n_string_data = (size_t)t->numel;
		tp.string_data = strings;
	} else if (t->dtype != ONNXRUN_DTYPE_STRING) {
		tp.has_raw_data = 1;
		tp.raw_data.len = t->nbytes;
		tp.raw_data.data = t->nbytes > 0 ? t->data : (uint8_t *)empty;
		if (t->nbytes > 0 && onnxrun__le_needs_swap(t->dtype)) {
			if (!(le = onnxrun__malloc(env, t->nbytes)))
				return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory (%zu bytes)",
				                     t->nbytes);
			onnxrun__le_copy(le, t->data, t->nbytes, t->dtype);
			tp.raw_data.data = le;
		}
	}
	size = onnx__tensor_proto__get_packed_size(&tp);
	buf = onnxrun__malloc(env, size);
	if (buf)
		onnx__tensor_proto__pack(&tp, buf);
	onnxrun__free(env, strings);
	onnxrun__free(env, le);
	if (!buf)
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory (%zu bytes)", size);
	*out = buf;
	*out_size = size;
	return ONNXRUN_OK;
}
