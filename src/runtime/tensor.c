/*
 * tensor.c - shapes and tensors: creation with overflow-checked sizes, strings, accessors.
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

bool onnxrun__dims_concrete(int32_t rank, const int64_t *dims)
{
	if (rank < 0)
		return false;
	for (int32_t i = 0; i < rank; i++)
		if (dims[i] < 0)
			return false;
	return true;
}

bool onnxrun__dims_numel(int32_t rank, const int64_t *dims, int64_t *out)
{
	int64_t n = 1;
	for (int32_t i = 0; i < rank; i++)
		if (dims[i] < 0 || !onnxrun__mul_i64(n, dims[i], &n))
			return false;
	*out = n;
	return true;
}


const char *onnxrun__shape_str(const struct onnxrun_shape *s, char *buf, size_t len)
{
	size_t at = 0;
	if (s->rank < 0) {
		snprintf(buf, len, "[?]");
		return buf;
	}
	at += (size_t)snprintf(buf, len, "[");
	for (int32_t i = 0; i < s->rank && at < len; i++) {
		const char *sep = i ? "," : "";
		if (s->dims[i] >= 0)
			at += (size_t)snprintf(buf + at, len - at, "%s%lld", sep, (long long)s->dims[i]);
		else if (s->params[i])
			at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, s->params[i]);
		else
			at += (size_t)snprintf(buf + at, len - at, "%s?", sep);
	}
	if (at < len)
		snprintf(buf + at, len - at, "]");
	return buf;
}

void onnxrun__shape_unknown(struct onnxrun_shape *s)
{
	memset(s, 0, sizeof *s);
	s->rank = -1;
}

bool onnxrun__tensor_bytes(enum onnxrun_dtype dtype, int64_t numel, size_t *out)
{
	size_t es = onnxrun_dtype_size(dtype);
	if (numel < 0 || (uint64_t)numel > SIZE_MAX)
		return false;
	return !__builtin_mul_overflow((size_t)numel, es, out);
}

static enum onnxrun_status tensor_make(const struct onnxrun_env *env, enum onnxrun_dtype dtype, int32_t rank,
                                       const int64_t *dims, void *borrowed, bool zero, struct onnxrun__err *err,
                                       struct onnxrun_tensor **out);

enum onnxrun_status onnxrun__tensor_new(const struct onnxrun_env *env, enum onnxrun_dtype dtype, int32_t rank,
                                        const int64_t *dims, void *borrowed, struct onnxrun__err *err,
                                        struct onnxrun_tensor **out)
{
	return tensor_make(env, dtype, rank, dims, borrowed, true, err, out);
}

enum onnxrun_status onnxrun__tensor_new_uninit(const struct onnxrun_env *env, enum onnxrun_dtype dtype,
                                               int32_t rank, const int64_t *dims, struct onnxrun__err *err,
                                               struct onnxrun_tensor **out)
{
	return tensor_make(env, dtype, rank, dims, NULL, dtype == ONNXRUN_DTYPE_STRING, err, out);
}

static enum onnxrun_status tensor_make(const struct onnxrun_env *env, enum onnxrun_dtype dtype, int32_t rank,
                                       const int64_t *dims, void *borrowed, bool zero, struct onnxrun__err *err,
                                       struct onnxrun_tensor **out)
{
	struct onnxrun_tensor *t;
	int64_t numel = 1;
	size_t nbytes;
	if (!onnxrun__dtype_valid((int)dtype))
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_ARGUMENT, "unknown dtype %d", (int)dtype);
	if (rank < 0 || rank > ONNXRUN_MAX_RANK)
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "rank %d is outside 0..%d", (int)rank,
		                     ONNXRUN_MAX_RANK);
	if (rank > 0 && !dims)
		return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_ARGUMENT, "dims is NULL");
	for (int32_t i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return onnxrun__fail(err, ONNXRUN_ERROR_INVALID_ARGUMENT, "dim %d is negative (%lld)",
			                     (int)i, (long long)dims[i]);
		if (!onnxrun__mul_i64(numel, dims[i], &numel))
			return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "element count overflows int64");
	}
	if (!onnxrun__tensor_bytes(dtype, numel, &nbytes) || nbytes > (size_t)INT64_MAX)
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "byte size of %lld %s elements overflows" ONNXRUN__SIZE_T_NOTE,
		                     (long long)numel, onnxrun_dtype_name(dtype), ONNXRUN__SIZE_T_BITS);
	t = onnxrun__calloc(env, 1, ONNXRUN__TENSOR_RECORD_BYTES(rank));
	if (!t)
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	t->env = env;
	t->dtype = dtype;
	t->rank = rank;
	if (rank)
		memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
	t->numel = numel;
	t->nbytes = nbytes;
	if (borrowed) {
		t->data = borrowed;
	} else if (nbytes) {
		t->data = onnxrun__malloc_aligned(env, nbytes);
		if (t->data && zero)
			memset(t->data, 0, nbytes);
		if (!t->data) {
			onnxrun__free(env, t);
			return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY,
			                     "out of memory allocating %zu bytes", nbytes);
		}
		t->owns_data = true;
	}
	*out = t;
	return ONNXRUN_OK;
}

void onnxrun__tensor_strings_clear(struct onnxrun_tensor *t)
{
	struct onnxrun_string *s = t->data;
	if (t->dtype != ONNXRUN_DTYPE_STRING || !s)
		return;
	for (int64_t i = 0; i < t->numel; i++) {
		onnxrun__free(t->env, s[i].data);
		s[i].data = NULL;
		s[i].size = 0;
	}
}

enum onnxrun_status onnxrun__tensor_string_set(struct onnxrun_tensor *t, int64_t i, const char *data, size_t size)
{
	struct onnxrun_string *s = t->data;
	/* an element outlives the node that sets it: never from a workspace (so a run making
	 * string outputs allocates their elements) */
	struct onnxrun__workspace *ws = onnxrun__workspace_suspend();
	char *copy = onnxrun__strndup(t->env, data, size);
	if (ws)
		onnxrun__workspace_enter(ws);
	if (!copy)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	onnxrun__free(t->env, s[i].data);
	s[i].data = copy;
	s[i].size = size;
	return ONNXRUN_OK;
}

/* ---- public API ---- */

enum onnxrun_status onnxrun_tensor_create(struct onnxrun_env *env, enum onnxrun_dtype dtype, int32_t rank,
                                          const int64_t *dims, struct onnxrun_tensor **out)
{
	if (!env || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	return onnxrun__tensor_new(env, dtype, rank, dims, NULL, &env->err, out);
}

enum onnxrun_status onnxrun_tensor_wrap(struct onnxrun_env *env, enum onnxrun_dtype dtype, int32_t rank,
                                        const int64_t *dims, void *data, size_t nbytes,
                                        struct onnxrun_tensor **out)
{
	struct onnxrun_tensor *t = NULL;
	enum onnxrun_status st;
	if (!env || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (dtype == ONNXRUN_DTYPE_STRING)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "string tensors cannot wrap caller memory");
	if (!data && nbytes)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "data is NULL");
	/* A non-NULL placeholder for empty tensors keeps "borrowed" meaning borrowed. */
	st = onnxrun__tensor_new(env, dtype, rank, dims, data ? data : (void *)env, &env->err, &t);
	if (st)
		return st;
	if (t->nbytes != nbytes) {
		size_t want = t->nbytes;
		onnxrun__free(env, t);
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "nbytes is %zu but the shape needs %zu", nbytes, want);
	}
	if (!data)
		t->data = NULL;
	*out = t;
	return ONNXRUN_OK;
}

void onnxrun__tensor_release_data(struct onnxrun_tensor *t)
{
	if (t->owns_data) {
		onnxrun__tensor_strings_clear(t);
		onnxrun__free(t->env, t->data);
	}
#if ONNXRUN__OS_FILES
	if (t->map)
		onnxrun__os_unmap(t->map, t->map_len);
	t->map = NULL;
	t->map_len = 0;
#endif
	t->data = NULL;
	t->owns_data = false;
	t->pending = NULL;
}

void onnxrun__tensor_borrow_pending(struct onnxrun_tensor *t)
{
	if (!t->pending)
		return;
	t->data = (void *)(uintptr_t)t->pending; /* read only: tensors of a model are never written */
	t->owns_data = false;
	t->pending = NULL;
}

enum onnxrun_status onnxrun__tensor_materialize(struct onnxrun_tensor *t, struct onnxrun__err *err)
{
	void *p;
	if (!t->pending)
		return ONNXRUN_OK;
	/* only float32 is ever pending: its bytes need no normalizing (bool's would) */
	if (!(p = onnxrun__malloc_aligned(t->env, t->nbytes))) {
		t->pending_failed = true;
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY,
		                     "out of memory copying initializer '%s' (%zu bytes)", t->name ? t->name : "",
		                     t->nbytes);
	}
	memcpy(p, t->pending, t->nbytes);
	t->data = p;
	t->owns_data = true;
	t->pending = NULL;
	return ONNXRUN_OK;
}

void onnxrun_tensor_free(struct onnxrun_tensor *t)
{
	if (!t)
		return;
	onnxrun__tensor_release_data(t);
	onnxrun__free(t->env, t->name);
	onnxrun__free(t->env, t);
}

enum onnxrun_dtype onnxrun_tensor_dtype(const struct onnxrun_tensor *t)
{
	return t ? t->dtype : ONNXRUN_DTYPE_UNDEFINED;
}

int32_t onnxrun_tensor_rank(const struct onnxrun_tensor *t)
{
	return t ? t->rank : 0;
}

const int64_t *onnxrun_tensor_dims(const struct onnxrun_tensor *t)
{
	return t ? t->dims : NULL;
}

int64_t onnxrun_tensor_numel(const struct onnxrun_tensor *t)
{
	return t ? t->numel : 0;
}

void *onnxrun_tensor_data(const struct onnxrun_tensor *t)
{
	return t && t->numel ? t->data : NULL;
}

size_t onnxrun_tensor_nbytes(const struct onnxrun_tensor *t)
{
	return t ? t->nbytes : 0;
}

const char *onnxrun_tensor_name(const struct onnxrun_tensor *t)
{
	return t && t->name ? t->name : "";
}

enum onnxrun_status onnxrun_tensor_set_name(struct onnxrun_tensor *t, const char *name)
{
	char *copy;
	if (!t || !name)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	copy = onnxrun__strdup(t->env, name);
	if (!copy)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	onnxrun__free(t->env, t->name);
	t->name = copy;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_tensor_set_string(struct onnxrun_tensor *t, int64_t i, const char *data, size_t size)
{
	if (!t || t->dtype != ONNXRUN_DTYPE_STRING || !t->owns_data || i < 0 || i >= t->numel ||
	    (!data && size))
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	return onnxrun__tensor_string_set(t, i, data ? data : "", size);
}
