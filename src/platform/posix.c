/*
 * posix.c - platform.h on POSIX systems (Linux, other Unix-likes, emscripten).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

/* File sizes and offsets are 64-bit on every host (the build defines _FILE_OFFSET_BITS=64:
 * 32-bit hosts would otherwise cut offsets at 2 GiB and fail stat on large inode numbers). */
_Static_assert(sizeof(off_t) >= 8, "build with -D_FILE_OFFSET_BITS=64");

void *onnxrun__os_aligned_alloc(size_t align, size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1))
		return NULL;
	return p;
}

void onnxrun__os_aligned_free(void *p)
{
	free(p);
}

int onnxrun__os_open_read(const char *path)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (callers refuse non-files) */
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

void onnxrun__os_close(int fd)
{
	close(fd);
}

int onnxrun__os_seek_set(int fd, int64_t offset)
{
	if ((int64_t)(off_t)offset != offset) {
		errno = EOVERFLOW;
		return -1;
	}
	return lseek(fd, (off_t)offset, SEEK_SET) == (off_t)-1 ? -1 : 0;
}

int onnxrun__os_open_write(const char *path)
{
	int fd;
	do
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	while (fd < 0 && errno == EINTR);
	return fd;
}

int onnxrun__os_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int onnxrun__os_close_write(int fd)
{
	return close(fd) != 0 && errno != EINTR ? -1 : 0;
}

long long onnxrun__os_read(int fd, void *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, buf, n);
		if (r >= 0 || errno != EINTR)
			return r;
	}
}

static int regular(const struct stat *sb, int64_t *size)
{
	if (!S_ISREG(sb->st_mode))
		return 0;
	if (size)
		*size = (int64_t)sb->st_size;
	return 1;
}

int onnxrun__os_fd_regular(int fd, int64_t *size)
{
	struct stat sb;
	return fstat(fd, &sb) != 0 ? -1 : regular(&sb, size);
}

int onnxrun__os_path_regular(const char *path, int64_t *size)
{
	struct stat sb;
	return stat(path, &sb) != 0 ? -1 : regular(&sb, size);
}

int onnxrun__os_stat(const char *path, struct onnxrun__os_file_id *id)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return -1;
	if (id) {
		id->dev = (uint64_t)sb.st_dev;
		id->ino = (uint64_t)sb.st_ino;
	}
	return S_ISREG(sb.st_mode) ? ONNXRUN__OS_REGULAR : S_ISDIR(sb.st_mode) ? ONNXRUN__OS_DIR : ONNXRUN__OS_OTHER;
}

bool onnxrun__os_is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int onnxrun__os_fileno(FILE *f)
{
	return fileno(f);
}

int onnxrun__os_fseek_set(FILE *f, int64_t offset)
{
	return fseeko(f, (off_t)offset, SEEK_SET);
}

int onnxrun__os_mkdir(const char *path)
{
	return mkdir(path, 0777);
}

void *onnxrun__os_map(int fd, int64_t offset, size_t length, bool copy_on_write, void **map, size_t *map_len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t lead;
	void *p;
	if (page <= 0 || offset < 0 || length == 0)
		return NULL;
	lead = (size_t)(offset % page);
	if (length > SIZE_MAX - lead)
		return NULL;
	p = mmap(NULL, length + lead, copy_on_write ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd,
	         (off_t)(offset - (int64_t)lead));
	if (p == MAP_FAILED)
		return NULL;
	*map = p;
	*map_len = length + lead;
	return (unsigned char *)p + lead;
}

void onnxrun__os_unmap(void *map, size_t map_len)
{
	munmap(map, map_len);
}

int onnxrun__os_list_dir(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	char **list = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int saved;
	if (!d)
		return -1;
	for (;;) {
		errno = 0;
		if (!(e = readdir(d))) {
			if (errno)
				goto fail;
			break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			char **grown;
			cap = cap ? 2 * cap : 16;
			if (cap > INT_MAX || !(grown = realloc(list, cap * sizeof *list))) {
				errno = ENOMEM;
				goto fail;
			}
			list = grown;
		}
		if (!(list[n] = strdup(e->d_name)))
			goto fail;
		n++;
	}
	closedir(d);
	*names = list;
	return (int)n;
fail:
	saved = errno;
	while (n)
		free(list[--n]);
	free(list);
	closedir(d);
	errno = saved;
	return -1;
}

FILE *onnxrun__os_memstream_open(char **buf, size_t *size)
{
	*buf = NULL;
	*size = 0;
	return open_memstream(buf, size);
}

int onnxrun__os_memstream_close(FILE *f, char **buf, size_t *size)
{
	(void)buf;
	(void)size;
	return fclose(f);
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
	return realpath(path, NULL);
}

int onnxrun__os_realpath_into(const char *path, char *out, size_t size)
{
#if defined(PATH_MAX) && PATH_MAX <= ONNXRUN__OS_PATH_MAX
	/* realpath writes at most PATH_MAX bytes into a caller's buffer and then mallocs nothing */
	if (size < PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return realpath(path, out) ? 0 : -1;
#else
	char *r = realpath(path, NULL); /* no usable PATH_MAX: the C library allocates */
	size_t n;
	if (!r)
		return -1;
	n = strlen(r);
	if (n >= size) {
		free(r);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, r, n + 1);
	free(r);
	return 0;
#endif
}

bool onnxrun__os_path_inside(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		n = 0; /* the root folder: everything is inside */
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static void *thread_main(void *arg)
{
	struct onnxrun__os_thread *t = arg;
	t->fn(t->arg);
	return NULL;
}

int onnxrun__os_thread_start(struct onnxrun__os_thread *t, void (*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;
	t->fn = fn;
	t->arg = arg;
	/* the new thread inherits a mask blocking every signal */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->th, NULL, thread_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
}

void onnxrun__os_thread_join(struct onnxrun__os_thread *t)
{
	pthread_join(t->th, NULL);
}

void onnxrun__os_mutex_init(onnxrun__os_mutex *m)
{
	pthread_mutex_init(m, NULL);
}

void onnxrun__os_mutex_destroy(onnxrun__os_mutex *m)
{
	pthread_mutex_destroy(m);
}

void onnxrun__os_mutex_lock(onnxrun__os_mutex *m)
{
	pthread_mutex_lock(m);
}

void onnxrun__os_mutex_unlock(onnxrun__os_mutex *m)
{
	pthread_mutex_unlock(m);
}

void onnxrun__os_cond_init(onnxrun__os_cond *c)
{
	/* timed waits measure on CLOCK_MONOTONIC: clock changes do not stretch them */
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

void onnxrun__os_cond_destroy(onnxrun__os_cond *c)
{
	pthread_cond_destroy(c);
}

void onnxrun__os_cond_wait(onnxrun__os_cond *c, onnxrun__os_mutex *m)
{
	pthread_cond_wait(c, m);
}

void onnxrun__os_cond_wait_ns(onnxrun__os_cond *c, onnxrun__os_mutex *m, uint64_t timeout_ns)
{
	const uint64_t t = onnxrun__os_now_ns() + timeout_ns;
	const struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };
	pthread_cond_timedwait(c, m, &ts);
}

void onnxrun__os_cond_signal(onnxrun__os_cond *c)
{
	pthread_cond_signal(c);
}

void onnxrun__os_cond_broadcast(onnxrun__os_cond *c)
{
	pthread_cond_broadcast(c);
}

void onnxrun__os_call_once(onnxrun__os_once *once, void (*fn)(void))
{
	pthread_once(once, fn);
}

uint64_t onnxrun__os_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int onnxrun__os_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n < INT_MAX ? (int)n : 1;
}

long onnxrun__os_cache_size(int level)
{
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
	long v = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
	return v > 0 ? v : -1;
#else
	(void)level;
	return -1;
#endif
}

bool onnxrun__os_terminal(int *columns)
{
	struct winsize ws;
	if (!isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO))
		return false;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
		*columns = ws.ws_col;
	return true;
}

void onnxrun__os_on_interrupt(void (*fn)(int))
{
	struct sigaction sa;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = fn;
	sigaction(SIGINT, &sa, NULL);
}

bool onnxrun__os_has_clock(void)
{
	return true;
}

int onnxrun__os_set_clock(uint64_t (*now_ns)(void *ctx), void *ctx)
{
	(void)now_ns;
	(void)ctx;
	return -1; /* the system's monotonic clock is used */
}
