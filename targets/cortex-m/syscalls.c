/*
 * syscalls.c - newlib's system hooks over semihosting: stdin/stdout/stderr are qemu's (or
 * the debugger's) console, fopen() opens host files, exit() ends the emulation with the
 * status, the heap (newlib's malloc, used by its stdio buffers) lies between __heap_start
 * and __heap_end of the linker script, time comes from SYS_CLOCK. Works with newlib and
 * newlib-nano (--specs=nano.specs). onnxrun itself never calls malloc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>

#include "semihosting.h"

extern char __heap_start[], __heap_end[];

int _write(int fd, const char *buf, int n);
int _read(int fd, char *buf, int n);
int _open(const char *path, int flags, ...);
int _close(int fd);
int _lseek(int fd, int offset, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void *_sbrk(ptrdiff_t incr);
_Noreturn void _exit(int status);
int _kill(int pid, int sig);
int _getpid(void);
int _gettimeofday(struct timeval *tv, void *tz);
clock_t _times(struct tms *t);

/* newlib's descriptors 0-2 are the console; 3 on are host handles + 3 */
static int console[3] = { -1, -1, -1 };

static int host_handle(int fd)
{
	if (fd >= 0 && fd < 3) {
		if (console[fd] < 0)
			console[fd] = semihosting_open(":tt", fd == 0 ? "r" : fd == 1 ? "w" : "a");
		return console[fd];
	}
	return fd - 3;
}

int _write(int fd, const char *buf, int n)
{
	long w = semihosting_write(host_handle(fd), buf, (size_t)n);
	if (w < 0) {
		errno = EIO;
		return -1;
	}
	return (int)w;
}

int _read(int fd, char *buf, int n)
{
	long r = semihosting_read(host_handle(fd), buf, (size_t)n);
	if (r < 0) {
		errno = EIO;
		return -1;
	}
	return (int)r;
}

int _open(const char *path, int flags, ...)
{
	const char *mode;
	int h;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		mode = "rb";
		break;
	case O_WRONLY:
		mode = flags & O_APPEND ? "ab" : "wb";
		break;
	default:
		mode = flags & O_TRUNC ? "w+b" : flags & O_APPEND ? "a+b" : "r+b";
		break;
	}
	h = semihosting_open(path, mode);
	if (h < 0) {
		errno = ENOENT;
		return -1;
	}
	return h + 3;
}

int _close(int fd)
{
	if (fd < 3)
		return 0;
	return semihosting_close(fd - 3) ? -1 : 0;
}

int _lseek(int fd, int offset, int whence)
{
	long pos = offset;
	if (fd < 3) {
		errno = ESPIPE;
		return -1;
	}
	if (whence == SEEK_END) {
		long len = semihosting_flen(fd - 3);
		if (len < 0) {
			errno = EIO;
			return -1;
		}
		pos += len;
	} else if (whence != SEEK_SET) {
		errno = EINVAL; /* newlib's stdio turns SEEK_CUR into SEEK_SET itself */
		return -1;
	}
	if (semihosting_seek(fd - 3, pos)) {
		errno = EIO;
		return -1;
	}
	return (int)pos;
}

int _fstat(int fd, struct stat *st)
{
	memset(st, 0, sizeof *st);
	if (fd < 3) {
		st->st_mode = S_IFCHR;
	} else {
		long len = semihosting_flen(fd - 3);
		st->st_mode = S_IFREG;
		st->st_size = len > 0 ? len : 0;
	}
	return 0;
}

int _isatty(int fd)
{
	return fd < 3;
}

/* weak: a firmware with a larger heap elsewhere (the tests' BIGRAM) brings its own */
__attribute__((weak)) void *_sbrk(ptrdiff_t incr)
{
	static char *brk = __heap_start;
	char *old = brk;
	if (incr > __heap_end - brk) {
		errno = ENOMEM;
		return (void *)-1;
	}
	brk += incr;
	return old;
}

_Noreturn void _exit(int status)
{
	semihosting_exit(status);
}

int _kill(int pid, int sig)
{
	(void)pid;
	(void)sig;
	errno = EINVAL;
	return -1;
}

int _getpid(void)
{
	return 1;
}

int _gettimeofday(struct timeval *tv, void *tz)
{
	long cs = semihosting_clock();
	(void)tz;
	if (tv) {
		tv->tv_sec = cs / 100;
		tv->tv_usec = (cs % 100) * 10000;
	}
	return 0;
}

clock_t _times(struct tms *t)
{
	long cs = semihosting_clock();
	if (t)
		memset(t, 0, sizeof *t);
	return (clock_t)cs;
}
