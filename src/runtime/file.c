/*
 * file.c - whole files through the env's allocator, or mapped.
 *
 * Mapping a file saves reading it (the page cache is used in place) but ties the bytes to
 * the file: truncating a mapped file under a live mapping makes reads of the lost pages
 * raise SIGBUS. Model files are mapped only while they are parsed; external data stays
 * mapped while its model lives. onnxrun_env_set_mmap(env, false) reads instead
 * (docs/security.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

/* Opens a regular file of at most max_size bytes; *size gets its size. -1 on error. */
static int open_regular(const char *path, uint64_t max_size, struct onnxrun__err *err,
                        enum onnxrun_status *st, size_t *size)
{
	int64_t fsize = 0;
	int fd = onnxrun__os_open_read(path);
	if (fd < 0 && errno == ENOSYS) {
		*st = onnxrun__fail(err, ONNXRUN_ERROR_UNSUPPORTED,
		                    "file '%s': no file system on this platform (bare metal); load from memory "
		                    "(onnxrun_model_load_buffer)", path);
		return -1;
	}
	if (fd < 0) {
		*st = onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': %s", path, strerror(errno));
		return -1;
	}
	if (onnxrun__os_fd_regular(fd, &fsize) != 1) {
		onnxrun__os_close(fd);
		*st = onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': not a regular file", path);
		return -1;
	}
	if ((uint64_t)fsize > max_size || (uint64_t)fsize > SIZE_MAX) {
		onnxrun__os_close(fd);
		if ((uint64_t)fsize > SIZE_MAX)
			*st = onnxrun__fail(err, ONNXRUN_ERROR_LIMIT,
			                    "file '%s': %lld bytes is more than a %d-bit process can hold in memory",
			                    path, (long long)fsize, ONNXRUN__SIZE_T_BITS);
		else
			*st = onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "file '%s': %lld bytes is more than the limit %llu",
			                    path, (long long)fsize, (unsigned long long)max_size);
		return -1;
	}
	*size = (size_t)fsize;
	return fd;
}

/* Reads size bytes from fd into a new buffer. */
static enum onnxrun_status read_all(const struct onnxrun_env *env, int fd, const char *path, size_t size,
                                    struct onnxrun__err *err, void **out)
{
	unsigned char *buf = onnxrun__malloc(env, size ? size : 1);
	size_t got = 0;
	if (!buf)
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "file '%s': out of memory reading %zu bytes",
		                     path, size);
	while (got < size) {
		long long r = onnxrun__os_read(fd, buf + got, size - got);
		if (r <= 0) {
			int e = r < 0 ? errno : 0;
			onnxrun__free(env, buf);
			return onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': read failed%s%s", path,
			                     e ? ": " : "", e ? strerror(e) : " (file shrank)");
		}
		got += (size_t)r;
	}
	*out = buf;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun__read_file(const struct onnxrun_env *env, const char *path, uint64_t max_size,
                                       struct onnxrun__err *err, void **out, size_t *out_size)
{
	enum onnxrun_status st = ONNXRUN_OK;
	size_t size;
	int fd = open_regular(path, max_size, err, &st, &size);
	if (fd < 0)
		return st;
	st = read_all(env, fd, path, size, err, out);
	onnxrun__os_close(fd);
	if (!st)
		*out_size = size;
	return st;
}

enum onnxrun_status onnxrun__view_file(const struct onnxrun_env *env, const char *path, uint64_t max_size,
                                       struct onnxrun__err *err, struct onnxrun__file_view *out)
{
	enum onnxrun_status st = ONNXRUN_OK;
	size_t size;
	void *buf;
	int fd = open_regular(path, max_size, err, &st, &size);
	if (fd < 0)
		return st;
	if (!env->no_mmap && size > 0) {
		void *map = NULL;
		size_t map_len = 0;
		void *p = onnxrun__os_map(fd, 0, size, false, &map, &map_len);
		if (p) {
			onnxrun__os_close(fd);
			out->data = p;
			out->size = size;
			out->map = map;
			out->map_len = map_len;
			return ONNXRUN_OK;
		}
	}
	st = read_all(env, fd, path, size, err, &buf);
	onnxrun__os_close(fd);
	if (st)
		return st;
	out->data = buf;
	out->size = size;
	out->map = NULL;
	return ONNXRUN_OK;
}

void onnxrun__view_release(const struct onnxrun_env *env, struct onnxrun__file_view *v)
{
	if (v->map)
		onnxrun__os_unmap(v->map, v->map_len);
	else
		onnxrun__free(env, (void *)v->data);
	v->data = NULL;
	v->map = NULL;
	v->map_len = 0;
	v->size = 0;
}
