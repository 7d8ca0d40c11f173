/*
 * win32.c - platform.h on Windows (Windows 7 or later), with the Windows API and the
 * Microsoft C runtime; built by MinGW-w64 (tested under wine) or MSVC.
 *
 * Threads are the Windows API's own: SRWLOCK and CONDITION_VARIABLE behind the pool's
 * mutexes and condition variables, _beginthreadex for its workers, InitOnceExecuteOnce.
 * C11 <threads.h> would be the portable choice, but MinGW-w64 has none, MSVC only from
 * Visual Studio 2022 17.8, and its timed wait measures on the wall clock (TIME_UTC) where
 * the pool wants a monotonic one; a pthreads emulation (winpthreads) would be one more DLL.
 */
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0601 /* Windows 7: GetFinalPathNameByHandle, GetActiveProcessorCount */
#endif
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <direct.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <limits.h>
#include <malloc.h>
#include <process.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "platform.h"

_Static_assert(sizeof(SRWLOCK) == sizeof(onnxrun__os_mutex), "SRWLOCK is one pointer");
_Static_assert(sizeof(CONDITION_VARIABLE) == sizeof(onnxrun__os_cond), "CONDITION_VARIABLE is one pointer");
_Static_assert(sizeof(INIT_ONCE) == sizeof(onnxrun__os_once), "INIT_ONCE is one pointer");

/* errno for the calling thread's last Windows error. */
static void set_errno(void)
{
	switch (GetLastError()) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_DRIVE:
	case ERROR_BAD_NETPATH:
	case ERROR_BAD_PATHNAME:
	case ERROR_INVALID_NAME:
		errno = ENOENT;
		break;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
		errno = EACCES;
		break;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		errno = ENOMEM;
		break;
	case ERROR_DIRECTORY:
		errno = ENOTDIR;
		break;
	case ERROR_FILENAME_EXCED_RANGE:
		errno = ENAMETOOLONG;
		break;
	default:
		errno = EIO;
		break;
	}
}

void *onnxrun__os_aligned_alloc(size_t align, size_t size)
{
	return _aligned_malloc(size ? size : 1, align < sizeof(void *) ? sizeof(void *) : align);
}

void onnxrun__os_aligned_free(void *p)
{
	_aligned_free(p);
}

int onnxrun__os_open_read(const char *path)
{
	int fd = _open(path, _O_RDONLY | _O_BINARY | _O_NOINHERIT);
	if (fd < 0 && errno == EACCES) {
		/* _open refuses folders (EACCES): open them as POSIX does, for the caller to see
		 * they are not regular files */
		HANDLE h = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
		                       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
		BY_HANDLE_FILE_INFORMATION info;
		if (h == INVALID_HANDLE_VALUE)
			return -1;
		if (!GetFileInformationByHandle(h, &info) || !(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ||
		    (fd = _open_osfhandle((intptr_t)h, _O_RDONLY)) < 0) {
			CloseHandle(h);
			errno = EACCES;
			return -1;
		}
	}
	return fd;
}

void onnxrun__os_close(int fd)
{
	_close(fd);
}

long long onnxrun__os_read(int fd, void *buf, size_t n)
{
	/* _read counts in unsigned int */
	return _read(fd, buf, n > (1u << 30) ? 1u << 30 : (unsigned)n);
}

int onnxrun__os_seek_set(int fd, int64_t offset)
{
	return _lseeki64(fd, offset, SEEK_SET) < 0 ? -1 : 0;
}

int onnxrun__os_open_write(const char *path)
{
	return _open(path, _O_WRONLY | _O_CREAT | _O_TRUNC | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
}

int onnxrun__os_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		/* _write counts in unsigned int */
		int w = _write(fd, p, n > (1u << 30) ? 1u << 30 : (unsigned)n);
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
	return _close(fd) != 0 ? -1 : 0;
}

int onnxrun__os_fd_regular(int fd, int64_t *size)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	BY_HANDLE_FILE_INFORMATION info;
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	if (GetFileType(h) != FILE_TYPE_DISK)
		return 0;
	if (!GetFileInformationByHandle(h, &info)) {
		set_errno();
		return -1;
	}
	if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
		return 0;
	if (size)
		*size = (int64_t)((uint64_t)info.nFileSizeHigh << 32 | info.nFileSizeLow);
	return 1;
}

int onnxrun__os_path_regular(const char *path, int64_t *size)
{
	struct _stat64 sb;
	if (_stat64(path, &sb) != 0)
		return -1;
	if ((sb.st_mode & _S_IFMT) != _S_IFREG)
		return 0;
	if (size)
		*size = (int64_t)sb.st_size;
	return 1;
}

/* Opens path (a file or a folder, following links) for its attributes only. */
static HANDLE open_any(const char *path)
{
	HANDLE h = CreateFileA(path, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	                       FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE)
		set_errno();
	return h;
}

int onnxrun__os_stat(const char *path, struct onnxrun__os_file_id *id)
{
	BY_HANDLE_FILE_INFORMATION info;
	HANDLE h = open_any(path);
	int kind;
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	if (!GetFileInformationByHandle(h, &info)) {
		set_errno();
		CloseHandle(h);
		return -1;
	}
	if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
		kind = ONNXRUN__OS_DIR;
	else
		kind = GetFileType(h) == FILE_TYPE_DISK ? ONNXRUN__OS_REGULAR : ONNXRUN__OS_OTHER;
	CloseHandle(h);
	if (id) {
		id->dev = info.dwVolumeSerialNumber;
		id->ino = (uint64_t)info.nFileIndexHigh << 32 | info.nFileIndexLow;
	}
	return kind;
}

bool onnxrun__os_is_dir(const char *path)
{
	return onnxrun__os_stat(path, NULL) == ONNXRUN__OS_DIR;
}

int onnxrun__os_fileno(FILE *f)
{
	return _fileno(f);
}

int onnxrun__os_fseek_set(FILE *f, int64_t offset)
{
	return _fseeki64(f, offset, SEEK_SET);
}

int onnxrun__os_mkdir(const char *path)
{
	return _mkdir(path);
}

void *onnxrun__os_map(int fd, int64_t offset, size_t length, bool copy_on_write, void **map, size_t *map_len)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd), m;
	SYSTEM_INFO si;
	uint64_t start;
	size_t lead;
	void *p;
	if (h == INVALID_HANDLE_VALUE || offset < 0 || length == 0)
		return NULL;
	GetSystemInfo(&si);
	/* views start at a multiple of the allocation granularity (64 KiB), not of a page */
	lead = (size_t)(offset % si.dwAllocationGranularity);
	if (length > SIZE_MAX - lead)
		return NULL;
	start = (uint64_t)offset - lead;
	m = CreateFileMappingA(h, NULL, copy_on_write ? PAGE_WRITECOPY : PAGE_READONLY, 0, 0, NULL);
	if (!m)
		return NULL;
	p = MapViewOfFile(m, copy_on_write ? FILE_MAP_COPY : FILE_MAP_READ, (DWORD)(start >> 32), (DWORD)start,
	                  length + lead);
	CloseHandle(m); /* the view keeps the mapping */
	if (!p)
		return NULL;
	*map = p;
	*map_len = length + lead;
	return (unsigned char *)p + lead;
}

void onnxrun__os_unmap(void *map, size_t map_len)
{
	(void)map_len;
	UnmapViewOfFile(map);
}

int onnxrun__os_list_dir(const char *dir, char ***names)
{
	WIN32_FIND_DATAA e;
	HANDLE h;
	char **list = NULL;
	size_t n = 0, cap = 0, len = strlen(dir);
	char *pattern = malloc(len + 3);
	int saved;
	if (!pattern) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(pattern, dir, len);
	memcpy(pattern + len, len && onnxrun__os_is_sep(dir[len - 1]) ? "*" : "\\*", 3);
	h = FindFirstFileA(pattern, &e);
	free(pattern);
	if (h == INVALID_HANDLE_VALUE) {
		if (GetLastError() == ERROR_FILE_NOT_FOUND) { /* an empty drive root */
			*names = NULL;
			return 0;
		}
		set_errno();
		if (errno == ENOENT && onnxrun__os_stat(dir, NULL) >= 0)
			errno = ENOTDIR;
		return -1;
	}
	do {
		if (!strcmp(e.cFileName, ".") || !strcmp(e.cFileName, ".."))
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
		if (!(list[n] = malloc(strlen(e.cFileName) + 1))) {
			errno = ENOMEM;
			goto fail;
		}
		strcpy(list[n++], e.cFileName);
	} while (FindNextFileA(h, &e));
	if (GetLastError() != ERROR_NO_MORE_FILES) {
		set_errno();
		goto fail;
	}
	FindClose(h);
	*names = list;
	return (int)n;
fail:
	saved = errno;
	while (n)
		free(list[--n]);
	free(list);
	FindClose(h);
	errno = saved;
	return -1;
}

/* No open_memstream: a temporary file, deleted when closed, read back into memory. */
FILE *onnxrun__os_memstream_open(char **buf, size_t *size)
{
	char dir[MAX_PATH + 1], name[MAX_PATH + 1];
	HANDLE h;
	int fd;
	FILE *f;
	*buf = NULL;
	*size = 0;
	if (!GetTempPathA(sizeof dir, dir) || !GetTempFileNameA(dir, "onx", 0, name))
		return NULL;
	h = CreateFileA(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
	                FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DeleteFileA(name);
		return NULL;
	}
	if ((fd = _open_osfhandle((intptr_t)h, _O_RDWR | _O_BINARY)) < 0) {
		CloseHandle(h);
		return NULL;
	}
	if (!(f = _fdopen(fd, "w+b")))
		_close(fd);
	return f;
}

int onnxrun__os_memstream_close(FILE *f, char **buf, size_t *size)
{
	long long n;
	char *b = NULL;
	int rc = 0;
	if (fflush(f) != 0 || (n = _ftelli64(f)) < 0 || (size_t)n >= SIZE_MAX || !(b = malloc((size_t)n + 1)))
		rc = -1;
	else if (n > 0 && (_fseeki64(f, 0, SEEK_SET) != 0 || fread(b, 1, (size_t)n, f) != (size_t)n))
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc) {
		free(b);
		return EOF;
	}
	b[n] = '\0';
	*buf = b;
	*size = (size_t)n;
	return 0;
}

bool onnxrun__os_is_sep(char c)
{
	return c == '/' || c == '\\';
}

bool onnxrun__os_path_absolute(const char *path)
{
	const char c = path[0];
	return onnxrun__os_is_sep(c) || (((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) && path[1] == ':');
}

/* The final path of the file or folder path: links and junctions resolved, in the
 * canonical spelling, without the "\\?\" prefix GetFinalPathNameByHandle adds. */
char *onnxrun__os_realpath(const char *path)
{
	HANDLE h = open_any(path);
	DWORD n, got;
	char *buf;
	size_t skip = 0;
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	n = GetFinalPathNameByHandleA(h, NULL, 0, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (!n || !(buf = malloc((size_t)n + 1))) {
		if (n)
			errno = ENOMEM;
		else
			set_errno();
		CloseHandle(h);
		return NULL;
	}
	got = GetFinalPathNameByHandleA(h, buf, n + 1, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (!got || got > n) {
		set_errno();
		CloseHandle(h);
		free(buf);
		return NULL;
	}
	CloseHandle(h);
	if (!strncmp(buf, "\\\\?\\UNC\\", 8)) { /* \\?\UNC\server\share -> \\server\share */
		skip = 6;
		buf[6] = '\\';
	} else if (!strncmp(buf, "\\\\?\\", 4)) {
		skip = 4;
	}
	memmove(buf, buf + skip, strlen(buf + skip) + 1);
	return buf;
}

int onnxrun__os_realpath_into(const char *path, char *out, size_t size)
{
	HANDLE h = open_any(path);
	DWORD got;
	size_t skip = 0;
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	got = GetFinalPathNameByHandleA(h, out, size > 0xffffffffu ? 0xffffffffu : (DWORD)size,
	                                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (!got || got >= size) {
		if (got)
			errno = ENAMETOOLONG;
		else
			set_errno();
		CloseHandle(h);
		return -1;
	}
	CloseHandle(h);
	if (!strncmp(out, "\\\\?\\UNC\\", 8)) { /* \\?\UNC\server\share -> \\server\share */
		skip = 6;
		out[6] = '\\';
	} else if (!strncmp(out, "\\\\?\\", 4)) {
		skip = 4;
	}
	memmove(out, out + skip, strlen(out + skip) + 1);
	return 0;
}

static char fold(char c)
{
	if (c == '/')
		return '\\';
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool onnxrun__os_path_inside(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	while (n > 0 && onnxrun__os_is_sep(dir[n - 1]))
		n--; /* "C:\" -> "C:" */
	for (size_t i = 0; i < n; i++)
		if (fold(dir[i]) != fold(path[i]))
			return false;
	return onnxrun__os_is_sep(path[n]) && path[n + 1] != '\0';
}

static unsigned __stdcall thread_main(void *arg)
{
	struct onnxrun__os_thread *t = arg;
	t->fn(t->arg);
	return 0;
}

int onnxrun__os_thread_start(struct onnxrun__os_thread *t, void (*fn)(void *), void *arg)
{
	t->fn = fn;
	t->arg = arg;
	t->handle = (void *)_beginthreadex(NULL, 0, thread_main, t, 0, NULL);
	return t->handle ? 0 : -1;
}

void onnxrun__os_thread_join(struct onnxrun__os_thread *t)
{
	WaitForSingleObject(t->handle, INFINITE);
	CloseHandle(t->handle);
}

void onnxrun__os_mutex_init(onnxrun__os_mutex *m)
{
	InitializeSRWLock((PSRWLOCK)m);
}

void onnxrun__os_mutex_destroy(onnxrun__os_mutex *m)
{
	(void)m; /* an SRWLOCK holds no resources */
}

void onnxrun__os_mutex_lock(onnxrun__os_mutex *m)
{
	AcquireSRWLockExclusive((PSRWLOCK)m);
}

void onnxrun__os_mutex_unlock(onnxrun__os_mutex *m)
{
	ReleaseSRWLockExclusive((PSRWLOCK)m);
}

void onnxrun__os_cond_init(onnxrun__os_cond *c)
{
	InitializeConditionVariable((PCONDITION_VARIABLE)c);
}

void onnxrun__os_cond_destroy(onnxrun__os_cond *c)
{
	(void)c;
}

void onnxrun__os_cond_wait(onnxrun__os_cond *c, onnxrun__os_mutex *m)
{
	SleepConditionVariableSRW((PCONDITION_VARIABLE)c, (PSRWLOCK)m, INFINITE, 0);
}

void onnxrun__os_cond_wait_ns(onnxrun__os_cond *c, onnxrun__os_mutex *m, uint64_t timeout_ns)
{
	/* in whole milliseconds, rounded up (the wait's own clock is monotonic) */
	uint64_t ms = timeout_ns / 1000000u + (timeout_ns % 1000000u != 0);
	SleepConditionVariableSRW((PCONDITION_VARIABLE)c, (PSRWLOCK)m, ms >= INFINITE ? INFINITE - 1 : (DWORD)ms, 0);
}

void onnxrun__os_cond_signal(onnxrun__os_cond *c)
{
	WakeConditionVariable((PCONDITION_VARIABLE)c);
}

void onnxrun__os_cond_broadcast(onnxrun__os_cond *c)
{
	WakeAllConditionVariable((PCONDITION_VARIABLE)c);
}

struct once_fn {
	void (*fn)(void);
};

static BOOL CALLBACK once_main(PINIT_ONCE once, PVOID arg, PVOID *ctx)
{
	(void)once;
	(void)ctx;
	((struct once_fn *)arg)->fn();
	return TRUE;
}

void onnxrun__os_call_once(onnxrun__os_once *once, void (*fn)(void))
{
	struct once_fn f = { fn };
	InitOnceExecuteOnce((PINIT_ONCE)once, once_main, &f, NULL);
}

uint64_t onnxrun__os_now_ns(void)
{
	static LARGE_INTEGER freq; /* the same value on every call: racing first calls agree */
	LARGE_INTEGER c;
	if (!freq.QuadPart)
		QueryPerformanceFrequency(&freq);
	QueryPerformanceCounter(&c);
	return (uint64_t)(c.QuadPart / freq.QuadPart) * 1000000000u +
	       (uint64_t)(c.QuadPart % freq.QuadPart) * 1000000000u / (uint64_t)freq.QuadPart;
}

int onnxrun__os_cpu_count(void)
{
	DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	if (!n) {
		SYSTEM_INFO si;
		GetSystemInfo(&si);
		n = si.dwNumberOfProcessors;
	}
	return n > 0 && n < INT_MAX ? (int)n : 1;
}

long onnxrun__os_cache_size(int level)
{
	SYSTEM_LOGICAL_PROCESSOR_INFORMATION *info;
	DWORD bytes = 0;
	long size = -1;
	GetLogicalProcessorInformation(NULL, &bytes);
	if (GetLastError() != ERROR_INSUFFICIENT_BUFFER || !(info = malloc(bytes)))
		return -1;
	if (GetLogicalProcessorInformation(info, &bytes)) {
		for (size_t i = 0; i < bytes / sizeof *info; i++) {
			const CACHE_DESCRIPTOR *c = &info[i].Cache;
			if (info[i].Relationship == RelationCache && c->Level == level &&
			    (c->Type == CacheData || c->Type == CacheUnified) && c->Size <= LONG_MAX) {
				size = (long)c->Size;
				break;
			}
		}
	}
	free(info);
	return size;
}

bool onnxrun__os_terminal(int *columns)
{
	CONSOLE_SCREEN_BUFFER_INFO ci;
	if (!_isatty(_fileno(stdout)) || !_isatty(_fileno(stderr)))
		return false;
	if (GetConsoleScreenBufferInfo(GetStdHandle(STD_ERROR_HANDLE), &ci))
		*columns = ci.srWindow.Right - ci.srWindow.Left + 1;
	return true;
}

void onnxrun__os_on_interrupt(void (*fn)(int))
{
	/* the C runtime runs it on a thread of its own when Ctrl-C is pressed */
	signal(SIGINT, fn);
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
