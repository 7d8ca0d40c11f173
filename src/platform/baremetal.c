/*
 * baremetal.c - platform.h on a microcontroller without an operating system (Cortex-M with
 * newlib or newlib-nano; the build defines ONNXRUN_BAREMETAL, cmake/toolchains/cortex-m*.cmake).
 *
 * What there is: one thread, no heap (every byte comes from the env's allocator, usually
 * onnxrun_arena_init over one buffer), no files, folders, mappings, signals or terminal, and
 * a clock only when the application sets one (onnxrun_set_clock, e.g. from SysTick or a
 * cycle counter). Calls needing what is missing fail with errno ENOSYS; the library turns
 * that into ONNXRUN_ERROR_UNSUPPORTED with a message naming what is missing. Nothing here
 * calls malloc, free or stdio, so a firmware links none of them on the library's account.
 */
#include <errno.h>
#include <string.h>

#include "platform.h"

void *onnxrun__os_aligned_alloc(size_t align, size_t size)
{
	/* no heap: an env needs an allocator (onnxrun_env_create(&arena, ...)) */
	(void)align;
	(void)size;
	errno = ENOMEM;
	return NULL;
}

void onnxrun__os_aligned_free(void *p)
{
	(void)p;
}

int onnxrun__os_open_read(const char *path)
{
	(void)path;
	errno = ENOSYS;
	return -1;
}

void onnxrun__os_close(int fd)
{
	(void)fd;
}

long long onnxrun__os_read(int fd, void *buf, size_t n)
{
	(void)fd;
	(void)buf;
	(void)n;
	errno = ENOSYS;
	return -1;
}

int onnxrun__os_fd_regular(int fd, int64_t *size)
{
	(void)fd;
	(void)size;
	errno = ENOSYS;
	return -1;
}

int onnxrun__os_path_regular(const char *path, int64_t *size)
{
	(void)path;
	(void)size;
	errno = ENOSYS;
	return -1;
}

int onnxrun__os_stat(const char *path, struct onnxrun__os_file_id *id)
{
	(void)path;
	(void)id;
	errno = ENOSYS;
	return -1;
}

bool onnxrun__os_is_dir(const char *path)
{
	(void)path;
	return false;
}

int onnxrun__os_fileno(FILE *f)
{
	(void)f;
	errno = ENOSYS;
	return -1;
}

int onnxrun__os_fseek_set(FILE *f, int64_t offset)
{
	(void)f;
	(void)offset;
	errno = ENOSYS;
	return -1;
}

int onnxrun__os_mkdir(const char *path)
{
	(void)path;
	errno = ENOSYS;
	return -1;
}

void *onnxrun__os_map(int fd, int64_t offset, size_t length, bool copy_on_write, void **map, size_t *map_len)
{
	(void)fd;
	(void)offset;
	(void)length;
	(void)copy_on_write;
	(void)map;
	(void)map_len;
	return NULL;
}

void onnxrun__os_unmap(void *map, size_t map_len)
{
	(void)map;
	(void)map_len;
}

int onnxrun__os_list_dir(const char *dir, char ***names)
{
	(void)dir;
	(void)names;
	errno = ENOSYS;
	return -1;
}

FILE *onnxrun__os_memstream_open(char **buf, size_t *size)
{
	*buf = NULL;
	*size = 0;
	errno = ENOSYS;
	return NULL;
}

int onnxrun__os_memstream_close(FILE *f, char **buf, size_t *size)
{
	(void)f;
	(void)buf;
	(void)size;
	errno = ENOSYS;
	return -1;
}

bool onnxrun__os_is_sep(char c)
{
	return c == '/';
}

bool onnxrun__os_path_absolute(const char *path)
{
	return path[0] == '/';
}

char *onnxrun__os_realpath(const char *path)
{
	(void)path;
	errno = ENOSYS;
	return NULL;
}

bool onnxrun__os_path_inside(const char *dir, const char *path)
{
	(void)dir;
	(void)path;
	return false;
}

/* ---- one thread ---- */

int onnxrun__os_thread_start(struct onnxrun__os_thread *t, void (*fn)(void *), void *arg)
{
	(void)t;
	(void)fn;
	(void)arg;
	errno = ENOSYS;
	return -1;
}

void onnxrun__os_thread_join(struct onnxrun__os_thread *t)
{
	(void)t;
}

void onnxrun__os_mutex_init(onnxrun__os_mutex *m)
{
	(void)m;
}

void onnxrun__os_mutex_destroy(onnxrun__os_mutex *m)
{
	(void)m;
}

void onnxrun__os_mutex_lock(onnxrun__os_mutex *m)
{
	(void)m;
}

void onnxrun__os_mutex_unlock(onnxrun__os_mutex *m)
{
	(void)m;
}

void onnxrun__os_cond_init(onnxrun__os_cond *c)
{
	(void)c;
}

void onnxrun__os_cond_destroy(onnxrun__os_cond *c)
{
	(void)c;
}

void onnxrun__os_cond_wait(onnxrun__os_cond *c, onnxrun__os_mutex *m)
{
	(void)c;
	(void)m;
}

void onnxrun__os_cond_wait_ns(onnxrun__os_cond *c, onnxrun__os_mutex *m, uint64_t timeout_ns)
{
	(void)c;
	(void)m;
	(void)timeout_ns;
}

void onnxrun__os_cond_signal(onnxrun__os_cond *c)
{
	(void)c;
}

void onnxrun__os_cond_broadcast(onnxrun__os_cond *c)
{
	(void)c;
}

void onnxrun__os_call_once(onnxrun__os_once *once, void (*fn)(void))
{
	if (!once->done) {
		once->done = 1;
		fn();
	}
}

/* ---- system ---- */

static uint64_t (*clock_fn)(void *ctx);
static void *clock_ctx;

int onnxrun__os_set_clock(uint64_t (*now_ns)(void *ctx), void *ctx)
{
	clock_fn = now_ns;
	clock_ctx = ctx;
	return 0;
}

bool onnxrun__os_has_clock(void)
{
	return clock_fn != NULL;
}

uint64_t onnxrun__os_now_ns(void)
{
	return clock_fn ? clock_fn(clock_ctx) : 0;
}

int onnxrun__os_cpu_count(void)
{
	return 1;
}

long onnxrun__os_cache_size(int level)
{
	(void)level;
	return -1;
}

bool onnxrun__os_terminal(int *columns)
{
	(void)columns;
	return false;
}

void onnxrun__os_on_interrupt(void (*fn)(int))
{
	(void)fn;
}
