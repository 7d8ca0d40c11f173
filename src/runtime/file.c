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
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

/* File sizes and offsets are 64-bit on every host (the build defines _FILE_OFFSET_BITS=64:
 * 32-bit hosts would otherwise cut offsets at 2 GiB and fail stat on large inode numbers). */
_Static_assert(sizeof(off_t) >= 8, "build with -D_FILE_OFFSET_BITS=64");

/* Opens a regular file of at most max_size bytes; *size gets its size. -1 on error. */
static int open_regular(const char *path, uint64_t max_size, struct onnxrun__err *err,
                        enum onnxrun_status *st, size_t *size)
{
	struct stat sb;
	int fd;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*st = onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		*st = onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': not a regular file", path);
		return -1;
	}
	if ((uint64_t)sb.st_size > max_size || (uint64_t)sb.st_size > SIZE_MAX) {
		close(fd);
		if ((uint64_t)sb.st_size > SIZE_MAX)
			*st = onnxrun__fail(err, ONNXRUN_ERROR_LIMIT,
			                    "file '%s': %lld bytes is more than a %d-bit process can hold in memory",
			                    path, (long long)sb.st_size, ONNXRUN__SIZE_T_BITS);
		else
			*st = onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "file '%s': %lld bytes is more than the limit %llu",
			                    path, (long long)sb.st_size, (unsigned long long)max_size);
		return -1;
	}
	*size = (size_t)sb.st_size;
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
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
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
	close(fd);
	if (!st)
		*out_size = size;
	return st;
}

void *onnxrun__map_range(int fd, int64_t offset, size_t length, void **map, size_t *map_len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t lead;
	void *p;
	if (page <= 0 || offset < 0 || length == 0)
		return NULL;
	lead = (size_t)(offset % page);
	if (length > SIZE_MAX - lead)
		return NULL;
	p = mmap(NULL, length + lead, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)(offset - (int64_t)lead));
	if (p == MAP_FAILED)
		return NULL;
	*map = p;
	*map_len = length + lead;
	return (unsigned char *)p + lead;
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
		void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			out->data = p;
			out->size = size;
			out->map = p;
			return ONNXRUN_OK;
		}
	}
	st = read_all(env, fd, path, size, err, &buf);
	close(fd);
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
		munmap(v->map, v->size);
	else
		onnxrun__free(env, (void *)v->data);
	v->data = NULL;
	v->map = NULL;
	v->size = 0;
}
