/*
 * file.c - reading whole files through the env's allocator.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime.h"

enum onnxrun_status onnxrun__read_file(const struct onnxrun_env *env, const char *path, uint64_t max_size,
                                       struct onnxrun__err *err, void **out, size_t *out_size)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	void *buf = NULL;
	size_t size;
	if (!f)
		return onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': %s", path, strerror(errno));
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) {
		fclose(f);
		return onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': not a regular file", path);
	}
	if ((uint64_t)sb.st_size > max_size || (uint64_t)sb.st_size > SIZE_MAX) {
		fclose(f);
		return onnxrun__fail(err, ONNXRUN_ERROR_LIMIT, "file '%s': %lld bytes is more than the limit %llu",
		                     path, (long long)sb.st_size, (unsigned long long)max_size);
	}
	size = (size_t)sb.st_size;
	buf = onnxrun__malloc(env, size ? size : 1);
	if (!buf) {
		fclose(f);
		return onnxrun__fail(err, ONNXRUN_ERROR_OUT_OF_MEMORY, "file '%s': out of memory reading %zu bytes",
		                     path, size);
	}
	if (size && fread(buf, 1, size, f) != size) {
		int e = ferror(f) ? errno : 0;
		fclose(f);
		onnxrun__free(env, buf);
		return onnxrun__fail(err, ONNXRUN_ERROR_IO, "file '%s': read failed%s%s", path, e ? ": " : "",
		                     e ? strerror(e) : " (file shrank)");
	}
	fclose(f);
	*out = buf;
	*out_size = size;
	return ONNXRUN_OK;
}
