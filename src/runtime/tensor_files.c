/*
 * tensor_files.c - the public tensor file API: .pb (one serialized TensorProto) and .npy.
 * Files are read whole (onnxrun__read_file, up to MAX_FILE_BYTES) and decoded from memory;
 * saving encodes into memory and writes once. Every message names the file:
 * "file '<path>': <reason>".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../loader/loader.h"
#include "npy.h"
#include "runtime.h"

/* Tensor files larger than this are refused rather than read into memory; so are files
 * larger than the env's memory cap plus FILE_SLACK (headers, protobuf framing). */
#define MAX_FILE_BYTES ((uint64_t)16 << 30)
#define FILE_SLACK ((uint64_t)1 << 20)

typedef enum onnxrun_status (*decode_fn)(const struct onnxrun_env *env, const void *data, size_t size,
                                         struct onnxrun__err *err, struct onnxrun_tensor **out);
typedef enum onnxrun_status (*encode_fn)(const struct onnxrun_env *env, const struct onnxrun_tensor *t,
                                         struct onnxrun__err *err, uint8_t **out, size_t *out_size);

/* Writes size bytes to path (created or truncated); a partly written file is removed.
 * A descriptor, not a stdio stream: stdio would allocate its buffer with malloc. */
static enum onnxrun_status write_file(const char *path, const uint8_t *data, size_t size,
                                      struct onnxrun__err *err)
{
#if ONNXRUN__OS_FILES
	int fd = onnxrun__os_open_write(path);
	bool ok;
	if (fd < 0)
		return onnxrun__fail(err, ONNXRUN_ERROR_IO, "%s", strerror(errno));
	ok = onnxrun__os_write_all(fd, data, size) == 0;
	ok = (onnxrun__os_close_write(fd) == 0) && ok;
	if (!ok) {
		int e = errno;
		remove(path);
		return onnxrun__fail(err, ONNXRUN_ERROR_IO, "write failed: %s", strerror(e));
	}
	return ONNXRUN_OK;
#else
	(void)path;
	(void)data;
	(void)size;
	return onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED, "no file system on this platform (bare metal)");
#endif
}

/* Shared body of the load functions. */
static enum onnxrun_status load_file(struct onnxrun_env *env, const char *path, decode_fn decode,
                                     struct onnxrun_tensor **out)
{
	void *data = NULL;
	size_t size = 0;
	uint64_t cap;
	enum onnxrun_status st;
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (!path || !out)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "%s is NULL", !path ? "path" : "out");
	cap = onnxrun__env_max_memory(env);
	cap = cap > MAX_FILE_BYTES - FILE_SLACK ? MAX_FILE_BYTES : cap + FILE_SLACK;
	st = onnxrun__read_file(env, path, cap, &env->err, &data, &size);
	if (st)
		return st; /* the message already names the file */
	st = decode(env, data, size, &env->err, out);
	onnxrun__free(env, data);
	if (st)
		onnxrun__err_prefix(&env->err, "file '%s'", path);
	return st;
}

/* Shared body of the decode functions. */
static enum onnxrun_status decode_buffer(struct onnxrun_env *env, const void *data, size_t size,
                                         decode_fn decode, struct onnxrun_tensor **out)
{
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if ((!data && size) || !out)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "%s is NULL", !out ? "out" : "data");
	return decode(env, data ? data : "", size, &env->err, out);
}

/* Shared body of the save functions. */
static enum onnxrun_status save_file(struct onnxrun_env *env, const struct onnxrun_tensor *t, const char *path,
                                     encode_fn encode)
{
	uint8_t *data = NULL;
	size_t size = 0;
	enum onnxrun_status st;
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&env->err);
	if (!t || !path)
		return onnxrun__fail(&env->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "%s is NULL", !t ? "tensor" : "path");
	st = encode(env, t, &env->err, &data, &size);
	if (!st)
		st = write_file(path, data, size, &env->err);
	onnxrun__free(env, data);
	if (st)
		onnxrun__err_prefix(&env->err, "file '%s'", path);
	return st;
}

enum onnxrun_status onnxrun_tensor_load_pb(struct onnxrun_env *env, const char *path, struct onnxrun_tensor **out)
{
	return load_file(env, path, onnxrun__tensor_pb_decode, out);
}

enum onnxrun_status onnxrun_tensor_decode_pb(struct onnxrun_env *env, const void *data, size_t size,
                                             struct onnxrun_tensor **out)
{
	return decode_buffer(env, data, size, onnxrun__tensor_pb_decode, out);
}

enum onnxrun_status onnxrun_tensor_save_pb(struct onnxrun_env *env, const struct onnxrun_tensor *tensor,
                                           const char *path)
{
	return save_file(env, tensor, path, onnxrun__tensor_pb_encode);
}

enum onnxrun_status onnxrun_tensor_load_npy(struct onnxrun_env *env, const char *path, struct onnxrun_tensor **out)
{
	return load_file(env, path, onnxrun__npy_decode, out);
}

enum onnxrun_status onnxrun_tensor_decode_npy(struct onnxrun_env *env, const void *data, size_t size,
                                              struct onnxrun_tensor **out)
{
	return decode_buffer(env, data, size, onnxrun__npy_decode, out);
}

enum onnxrun_status onnxrun_tensor_save_npy(struct onnxrun_env *env, const struct onnxrun_tensor *tensor,
                                            const char *path)
{
	return save_file(env, tensor, path, onnxrun__npy_encode);
}
