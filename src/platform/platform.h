/*
 * platform.h - the operating-system services onnxrun uses, behind one small interface:
 * posix.c implements it with POSIX (Linux, other Unix-likes, emscripten), win32.c with the
 * Windows API and the Microsoft C runtime (MinGW-w64 or MSVC). The library (src/runtime,
 * src/loader, src/ops, src/kernels) and the CLI (src/cli) reach files, mappings, paths,
 * threads, clocks and the terminal only through it; everything else is portable C11.
 * It depends on nothing else of onnxrun's.
 *
 * baremetal.c is the layer of a microcontroller without an operating system (the build
 * defines ONNXRUN_BAREMETAL, cmake/toolchains/cortex-m*.cmake): no files, folders, mappings,
 * threads, signals or terminal (those calls fail with errno ENOSYS), no heap, one thread,
 * and a clock only when the application sets one (onnxrun__os_set_clock).
 *
 * Paths are byte strings handed to the C library as they are (on Windows: in the process's
 * code page, as fopen takes them). Functions returning int give 0 on success and -1 on
 * failure with errno set, unless said otherwise.
 */
#ifndef ONNXRUN_PLATFORM_H
#define ONNXRUN_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(_WIN32) || !defined(__GNUC__)
#define ONNXRUN__OS_HIDDEN
#else
#define ONNXRUN__OS_HIDDEN __attribute__((visibility("hidden")))
#endif

/* ONNXRUN__OS_THREADS: whether the platform has threads (0: one thread, the pool compiles to
 * inline runs). ONNXRUN__OS_FILES: whether it has files and folders. */
#ifdef ONNXRUN_BAREMETAL
#define ONNXRUN__OS_THREADS 0
#define ONNXRUN__OS_FILES 0
#else
#define ONNXRUN__OS_THREADS 1
#define ONNXRUN__OS_FILES 1
#endif

#if !defined(_WIN32) && !defined(ONNXRUN_BAREMETAL)
#include <pthread.h>
#endif

/* ---- memory ---- */

/* size bytes (at least 1) aligned to align (a power of two); NULL when out of memory. */
ONNXRUN__OS_HIDDEN void *onnxrun__os_aligned_alloc(size_t align, size_t size);
ONNXRUN__OS_HIDDEN void onnxrun__os_aligned_free(void *p);

/* ---- files ---- */

/* Opens path read-only as a descriptor (binary, not inherited by child processes; on POSIX
 * without waiting for a FIFO's writer). -1 on failure. */
ONNXRUN__OS_HIDDEN int onnxrun__os_open_read(const char *path);
ONNXRUN__OS_HIDDEN void onnxrun__os_close(int fd);
/* Reads up to n bytes; the count read (0 at the end), -1 on failure (retried on EINTR). */
ONNXRUN__OS_HIDDEN long long onnxrun__os_read(int fd, void *buf, size_t n);
/* Moves fd's position to offset bytes from the start. */
ONNXRUN__OS_HIDDEN int onnxrun__os_seek_set(int fd, int64_t offset);
/* Creates or truncates path for writing (binary, not inherited by child processes; new
 * files get the user's default permissions). -1 on failure. */
ONNXRUN__OS_HIDDEN int onnxrun__os_open_write(const char *path);
/* Writes all n bytes (retried on EINTR and short writes); 0 or -1. */
ONNXRUN__OS_HIDDEN int onnxrun__os_write_all(int fd, const void *buf, size_t n);
/* Closes a descriptor opened for writing; -1 when the close reports a failed write. */
ONNXRUN__OS_HIDDEN int onnxrun__os_close_write(int fd);
/* None of the file functions above allocates memory: the library's file I/O goes through
 * them, so that every allocation it makes goes through the env's allocator. */
/* 1 when fd is a regular file (*size its 64-bit size), 0 when it is something else, -1 on
 * failure. */
ONNXRUN__OS_HIDDEN int onnxrun__os_fd_regular(int fd, int64_t *size);
/* Likewise for a path, following symbolic links. */
ONNXRUN__OS_HIDDEN int onnxrun__os_path_regular(const char *path, int64_t *size);
/* What path is, following symbolic links: ONNXRUN__OS_REGULAR, ONNXRUN__OS_DIR or
 * ONNXRUN__OS_OTHER; -1 on failure. When id is not NULL it gets the file's identity: equal
 * for two paths of the same file (device and inode; on Windows volume and file index). */
enum { ONNXRUN__OS_OTHER = 0, ONNXRUN__OS_REGULAR = 1, ONNXRUN__OS_DIR = 2 };
struct onnxrun__os_file_id {
	uint64_t dev, ino;
};
ONNXRUN__OS_HIDDEN int onnxrun__os_stat(const char *path, struct onnxrun__os_file_id *id);
/* Whether path is a folder (following symbolic links). */
ONNXRUN__OS_HIDDEN bool onnxrun__os_is_dir(const char *path);
/* The descriptor of a stdio stream. */
ONNXRUN__OS_HIDDEN int onnxrun__os_fileno(FILE *f);
/* fseek to a 64-bit offset from the start. */
ONNXRUN__OS_HIDDEN int onnxrun__os_fseek_set(FILE *f, int64_t offset);
/* Creates one folder (its parent must exist); the permissions are the user's default. */
ONNXRUN__OS_HIDDEN int onnxrun__os_mkdir(const char *path);

/* Maps `length` (> 0) bytes of the open file fd from `offset`: read-only, or with
 * copy_on_write readable and writable privately (writes never reach the file). Returns the
 * byte at offset; *map and *map_len describe the whole mapping for onnxrun__os_unmap.
 * NULL when the file cannot be mapped (the caller reads it instead). */
ONNXRUN__OS_HIDDEN void *onnxrun__os_map(int fd, int64_t offset, size_t length, bool copy_on_write, void **map,
                                         size_t *map_len);
ONNXRUN__OS_HIDDEN void onnxrun__os_unmap(void *map, size_t map_len);

/* The entry names of folder dir except "." and "..", unsorted: *names is a malloc'd array
 * of malloc'd strings (free each and the array). The count, -1 on failure. */
ONNXRUN__OS_HIDDEN int onnxrun__os_list_dir(const char *dir, char ***names);

/* A stream writing into memory: after onnxrun__os_memstream_close (instead of fclose;
 * 0 on success) *buf is a malloc'd, NUL-terminated copy of what was written, *size its
 * length. NULL when it cannot be created. */
ONNXRUN__OS_HIDDEN FILE *onnxrun__os_memstream_open(char **buf, size_t *size);
ONNXRUN__OS_HIDDEN int onnxrun__os_memstream_close(FILE *f, char **buf, size_t *size);

/* ---- paths ---- */

/* Whether c separates path components ('/'; on Windows also '\\'). */
ONNXRUN__OS_HIDDEN bool onnxrun__os_is_sep(char c);
/* Whether path is absolute or otherwise not relative to the current folder: starts with a
 * separator; on Windows also a drive letter ("C:" with or without a separator after it). */
ONNXRUN__OS_HIDDEN bool onnxrun__os_path_absolute(const char *path);
/* The absolute form of an existing path with every symbolic link (on Windows also
 * junction) resolved, malloc'd; NULL on failure (errno set, ENOENT when it does not exist). */
ONNXRUN__OS_HIDDEN char *onnxrun__os_realpath(const char *path);
/* The same into out (size bytes, at least ONNXRUN__OS_PATH_MAX), allocating nothing
 * (the C library's own path resolution may use the heap for paths over 1 KiB on glibc).
 * 0, or -1 with errno set (ENAMETOOLONG: the result does not fit). */
#define ONNXRUN__OS_PATH_MAX 4096
ONNXRUN__OS_HIDDEN int onnxrun__os_realpath_into(const char *path, char *out, size_t size);
/* Whether the resolved path `path` lies strictly inside the resolved folder `dir` (both
 * from onnxrun__os_realpath): compared component-wise, on Windows ignoring ASCII case and
 * treating '/' and '\\' alike. */
ONNXRUN__OS_HIDDEN bool onnxrun__os_path_inside(const char *dir, const char *path);

/* ---- threads ---- */

#if defined(ONNXRUN_BAREMETAL)
/* One thread: locks and conditions do nothing, threads cannot start. */
typedef struct { int unused; } onnxrun__os_mutex;
typedef struct { int unused; } onnxrun__os_cond;
typedef struct { int done; } onnxrun__os_once;
#define ONNXRUN__OS_ONCE_INIT { 0 }
#elif defined(_WIN32)
/* SRWLOCK, CONDITION_VARIABLE and INIT_ONCE are each one pointer (win32.c checks). */
typedef struct { void *p; } onnxrun__os_mutex;
typedef struct { void *p; } onnxrun__os_cond;
typedef struct { void *p; } onnxrun__os_once;
#define ONNXRUN__OS_ONCE_INIT { 0 }
#else
typedef pthread_mutex_t onnxrun__os_mutex;
typedef pthread_cond_t onnxrun__os_cond;
typedef pthread_once_t onnxrun__os_once;
#define ONNXRUN__OS_ONCE_INIT PTHREAD_ONCE_INIT
#endif

struct onnxrun__os_thread {
	void (*fn)(void *arg);
	void *arg;
#if defined(_WIN32)
	void *handle;
#elif !defined(ONNXRUN_BAREMETAL)
	pthread_t th;
#endif
};

/* Starts fn(arg) on a new thread; t must stay in place until joined. On POSIX the thread
 * starts with every signal blocked (handlers run on the application's threads). */
ONNXRUN__OS_HIDDEN int onnxrun__os_thread_start(struct onnxrun__os_thread *t, void (*fn)(void *), void *arg);
ONNXRUN__OS_HIDDEN void onnxrun__os_thread_join(struct onnxrun__os_thread *t);

ONNXRUN__OS_HIDDEN void onnxrun__os_mutex_init(onnxrun__os_mutex *m);
ONNXRUN__OS_HIDDEN void onnxrun__os_mutex_destroy(onnxrun__os_mutex *m);
ONNXRUN__OS_HIDDEN void onnxrun__os_mutex_lock(onnxrun__os_mutex *m);
ONNXRUN__OS_HIDDEN void onnxrun__os_mutex_unlock(onnxrun__os_mutex *m);
ONNXRUN__OS_HIDDEN void onnxrun__os_cond_init(onnxrun__os_cond *c);
ONNXRUN__OS_HIDDEN void onnxrun__os_cond_destroy(onnxrun__os_cond *c);
ONNXRUN__OS_HIDDEN void onnxrun__os_cond_wait(onnxrun__os_cond *c, onnxrun__os_mutex *m);
/* Waits at most timeout_ns (measured on the monotonic clock); may wake early. */
ONNXRUN__OS_HIDDEN void onnxrun__os_cond_wait_ns(onnxrun__os_cond *c, onnxrun__os_mutex *m, uint64_t timeout_ns);
ONNXRUN__OS_HIDDEN void onnxrun__os_cond_signal(onnxrun__os_cond *c);
ONNXRUN__OS_HIDDEN void onnxrun__os_cond_broadcast(onnxrun__os_cond *c);
/* Runs fn once per process for `once` (initialised with ONNXRUN__OS_ONCE_INIT). */
ONNXRUN__OS_HIDDEN void onnxrun__os_call_once(onnxrun__os_once *once, void (*fn)(void));

/* ---- system ---- */

/* Monotonic time in nanoseconds from an arbitrary start (0 where there is no clock). */
ONNXRUN__OS_HIDDEN uint64_t onnxrun__os_now_ns(void);
/* Whether onnxrun__os_now_ns measures time: always on POSIX and Windows; on bare metal once
 * the application has set a clock. */
ONNXRUN__OS_HIDDEN bool onnxrun__os_has_clock(void);
/* Sets the clock of a platform without one (bare metal): now_ns(ctx) gives monotonic
 * nanoseconds; NULL removes it. 0 when set, -1 where the platform has its own clock. */
ONNXRUN__OS_HIDDEN int onnxrun__os_set_clock(uint64_t (*now_ns)(void *ctx), void *ctx);
/* Processors online, at least 1. */
ONNXRUN__OS_HIDDEN int onnxrun__os_cpu_count(void);
/* Level-1 data cache (level 1) or level-2 cache (level 2) size in bytes where the C library
 * reports it, else -1. */
ONNXRUN__OS_HIDDEN long onnxrun__os_cache_size(int level);
/* Whether both stdout and stderr are terminals; *columns gets stderr's width when known
 * (left alone otherwise). */
ONNXRUN__OS_HIDDEN bool onnxrun__os_terminal(int *columns);
/* Installs fn as the handler of Ctrl-C (SIGINT); the handler is kept across calls. */
ONNXRUN__OS_HIDDEN void onnxrun__os_on_interrupt(void (*fn)(int));

#endif
