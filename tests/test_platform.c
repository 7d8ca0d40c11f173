/*
 * test_platform.c - the operating-system layer (src/platform/platform.h) on its own: path
 * rules (separators, absolute locations, containment; on Windows backslashes, drive
 * letters and case), real paths, file identity, mappings (copy-on-write never reaches the
 * file), folder listing, the in-memory stream, threads with mutex / condition variable /
 * once, the clock and the CPU count.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "platform/platform.h"

#define TMP ONNXRUN_TEST_TMP "/platform"

static void test_path_rules(void **state)
{
	(void)state;
	assert_true(onnxrun__os_is_sep('/'));
	assert_false(onnxrun__os_is_sep('a'));
	assert_true(onnxrun__os_path_absolute("/x"));
	assert_false(onnxrun__os_path_absolute("x/y"));
	assert_false(onnxrun__os_path_absolute("./x"));
	assert_false(onnxrun__os_path_absolute(""));
	assert_true(onnxrun__os_path_inside("/a/b", "/a/b/c"));
	assert_true(onnxrun__os_path_inside("/a/b", "/a/b/c/d"));
	assert_false(onnxrun__os_path_inside("/a/b", "/a/bc"));
	assert_false(onnxrun__os_path_inside("/a/b", "/a/b"));
	assert_false(onnxrun__os_path_inside("/a/b", "/a"));
	assert_false(onnxrun__os_path_inside("/a/b", "/x/b/c"));
	assert_true(onnxrun__os_path_inside("/", "/x"));
#ifdef _WIN32
	assert_true(onnxrun__os_is_sep('\\'));
	assert_true(onnxrun__os_path_absolute("C:\\x"));
	assert_true(onnxrun__os_path_absolute("C:/x"));
	assert_true(onnxrun__os_path_absolute("c:x"));
	assert_true(onnxrun__os_path_absolute("\\x"));
	assert_true(onnxrun__os_path_absolute("\\\\server\\share\\x"));
	assert_false(onnxrun__os_path_absolute("x\\y"));
	assert_false(onnxrun__os_path_absolute("1:x"));
	assert_true(onnxrun__os_path_inside("C:\\Models", "C:\\Models\\w.bin"));
	assert_true(onnxrun__os_path_inside("C:\\Models", "c:\\models/sub\\w.bin"));
	assert_true(onnxrun__os_path_inside("C:\\", "C:\\w.bin"));
	assert_true(onnxrun__os_path_inside("\\\\server\\share", "\\\\server\\share\\w.bin"));
	assert_false(onnxrun__os_path_inside("C:\\Models", "C:\\Models2\\w.bin"));
	assert_false(onnxrun__os_path_inside("C:\\Models", "D:\\Models\\w.bin"));
	assert_false(onnxrun__os_path_inside("C:\\Models", "C:\\Models"));
	assert_false(onnxrun__os_path_inside("C:\\Models", "C:\\Models\\"));
	assert_false(onnxrun__os_path_inside("C:\\", "D:\\w.bin"));
#else
	/* a backslash is an ordinary byte of a name; case matters */
	assert_false(onnxrun__os_is_sep('\\'));
	assert_false(onnxrun__os_path_absolute("C:\\x"));
	assert_false(onnxrun__os_path_absolute("\\x"));
	assert_false(onnxrun__os_path_inside("/a/b", "/a/b\\c"));
	assert_false(onnxrun__os_path_inside("/a/B", "/a/b/c"));
#endif
}

/* Writes n bytes of pattern (byte i = i * 7 + 3) to path. */
static void write_pattern(const char *path, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(fputc((int)((i * 7 + 3) & 0xff), f), EOF);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	onnxrun__os_mkdir(ONNXRUN_TEST_TMP);
	onnxrun__os_mkdir(TMP);
	return onnxrun__os_is_dir(TMP) ? 0 : -1;
}

static void test_real_paths(void **state)
{
	struct onnxrun__os_file_id a, b, d;
	char *dir, *file, *other;
	(void)state;
	write_pattern(TMP "/f.bin", 10);
	assert_non_null(dir = onnxrun__os_realpath(TMP));
	assert_non_null(file = onnxrun__os_realpath(TMP "/./f.bin"));
	assert_true(onnxrun__os_path_absolute(dir));
	assert_true(onnxrun__os_path_inside(dir, file));
	assert_false(onnxrun__os_path_inside(file, dir));
	assert_int_equal(strlen(file), strlen(dir) + strlen("/f.bin"));
	assert_true(onnxrun__os_is_sep(file[strlen(dir)]));
	assert_string_equal(file + strlen(dir) + 1, "f.bin");
#ifdef _WIN32
	assert_non_null(other = onnxrun__os_realpath(TMP "\\.\\f.bin"));
#else
	assert_non_null(other = onnxrun__os_realpath(TMP "/../platform/f.bin"));
#endif
	assert_string_equal(other, file);
	errno = 0;
	assert_null(onnxrun__os_realpath(TMP "/missing.bin"));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(onnxrun__os_stat(TMP "/f.bin", &a), ONNXRUN__OS_REGULAR);
	assert_int_equal(onnxrun__os_stat(other, &b), ONNXRUN__OS_REGULAR);
	assert_int_equal(onnxrun__os_stat(TMP, &d), ONNXRUN__OS_DIR);
	assert_true(a.dev == b.dev && a.ino == b.ino);
	assert_false(a.dev == d.dev && a.ino == d.ino);
	assert_int_equal(onnxrun__os_stat(TMP "/missing.bin", NULL), -1);
	assert_true(onnxrun__os_is_dir(TMP));
	assert_false(onnxrun__os_is_dir(TMP "/f.bin"));
	assert_int_equal(onnxrun__os_path_regular(TMP "/f.bin", NULL), 1);
	assert_int_equal(onnxrun__os_path_regular(TMP, NULL), 0);
	assert_int_equal(onnxrun__os_mkdir(TMP), -1);
	assert_int_equal(errno, EEXIST);
	free(dir);
	free(file);
	free(other);
}

static void test_files_and_maps(void **state)
{
	const size_t n = 200000;
	const int64_t off = 70001; /* neither page- nor 64 KiB-aligned */
	const size_t len = 1000;
	unsigned char buf[64];
	void *map = NULL;
	size_t map_len = 0;
	int64_t size = -1;
	unsigned char *p;
	FILE *f;
	int fd;
	(void)state;
	write_pattern(TMP "/map.bin", n);
	assert_true((fd = onnxrun__os_open_read(TMP "/map.bin")) >= 0);
	assert_int_equal(onnxrun__os_fd_regular(fd, &size), 1);
	assert_int_equal(size, (int64_t)n);
	assert_int_equal(onnxrun__os_read(fd, buf, 16), 16);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(buf[i], (i * 7 + 3) & 0xff);
	/* copy-on-write: readable and writable, the file unchanged */
	p = onnxrun__os_map(fd, off, len, true, &map, &map_len);
	assert_non_null(p);
	assert_true(map_len >= len);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(p[i], (((size_t)off + i) * 7 + 3) & 0xff);
	memset(p, 0, len);
	onnxrun__os_unmap(map, map_len);
	p = onnxrun__os_map(fd, 0, n, false, &map, &map_len);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		if (p[i] != ((i * 7 + 3) & 0xff))
			fail_msg("byte %zu of the file changed: %d", i, p[i]);
	onnxrun__os_unmap(map, map_len);
	onnxrun__os_close(fd);
	/* 64-bit seek through stdio */
	assert_non_null(f = fopen(TMP "/map.bin", "rb"));
	assert_int_equal(onnxrun__os_fd_regular(onnxrun__os_fileno(f), &size), 1);
	assert_int_equal(onnxrun__os_fseek_set(f, 150000), 0);
	assert_int_equal(fgetc(f), (150000 * 7 + 3) & 0xff);
	fclose(f);
	/* a folder opens (or not) but is never a regular file */
	fd = onnxrun__os_open_read(TMP);
	if (fd >= 0) {
		assert_int_equal(onnxrun__os_fd_regular(fd, &size), 0);
		onnxrun__os_close(fd);
	}
	assert_true(onnxrun__os_open_read(TMP "/missing.bin") < 0);
}

static void test_list_dir(void **state)
{
	static const char *const names[] = { "b.pb", "a.npy", ".hidden", "sub" };
	char **list = NULL;
	int n, seen[4] = { 0 };
	(void)state;
	onnxrun__os_mkdir(TMP "/list");
	write_pattern(TMP "/list/b.pb", 1);
	write_pattern(TMP "/list/a.npy", 1);
	write_pattern(TMP "/list/.hidden", 1);
	onnxrun__os_mkdir(TMP "/list/sub");
	n = onnxrun__os_list_dir(TMP "/list", &list);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		int k = 0;
		while (k < 4 && strcmp(list[i], names[k]) != 0)
			k++;
		if (k == 4)
			fail_msg("unexpected entry '%s'", list[i]);
		seen[k]++;
		free(list[i]);
	}
	free(list);
	for (int k = 0; k < 4; k++)
		assert_int_equal(seen[k], 1);
	assert_int_equal(onnxrun__os_list_dir(TMP "/missing", &list), -1);
	assert_int_equal(onnxrun__os_list_dir(TMP "/list/sub", &list), 0);
	free(list);
}

static void test_memstream(void **state)
{
	char *buf = NULL;
	size_t size = 99;
	FILE *m = onnxrun__os_memstream_open(&buf, &size);
	(void)state;
	assert_non_null(m);
	fprintf(m, "x=%d %s %zu", 42, "yz", (size_t)7);
	fputs("\nline two", m);
	assert_int_equal(onnxrun__os_memstream_close(m, &buf, &size), 0);
	assert_non_null(buf);
	assert_string_equal(buf, "x=42 yz 7\nline two");
	assert_int_equal(size, strlen("x=42 yz 7\nline two"));
	free(buf);
	/* nothing written: an empty string */
	m = onnxrun__os_memstream_open(&buf, &size);
	assert_non_null(m);
	assert_int_equal(onnxrun__os_memstream_close(m, &buf, &size), 0);
	assert_non_null(buf);
	assert_string_equal(buf, "");
	assert_int_equal(size, 0);
	free(buf);
}

struct shared {
	onnxrun__os_mutex mu;
	onnxrun__os_cond cv;
	long count;
	int arrived;
};

static void add_many(void *arg)
{
	struct shared *s = arg;
	for (int i = 0; i < 100000; i++) {
		onnxrun__os_mutex_lock(&s->mu);
		s->count++;
		onnxrun__os_mutex_unlock(&s->mu);
	}
	onnxrun__os_mutex_lock(&s->mu);
	s->arrived++;
	onnxrun__os_cond_broadcast(&s->cv);
	onnxrun__os_mutex_unlock(&s->mu);
}

static int once_calls;

static void count_once(void)
{
	once_calls++;
}

static void test_threads(void **state)
{
	struct onnxrun__os_thread t[3];
	struct shared s = { .count = 0, .arrived = 0 };
	static onnxrun__os_once once = ONNXRUN__OS_ONCE_INIT;
	(void)state;
#if defined(__EMSCRIPTEN__)
	skip(); /* the WebAssembly build has no threads */
#endif
	onnxrun__os_mutex_init(&s.mu);
	onnxrun__os_cond_init(&s.cv);
	for (int i = 0; i < 3; i++)
		assert_int_equal(onnxrun__os_thread_start(&t[i], add_many, &s), 0);
	onnxrun__os_mutex_lock(&s.mu);
	while (s.arrived < 3)
		onnxrun__os_cond_wait(&s.cv, &s.mu);
	/* a bounded wait with nothing to wake it returns */
	onnxrun__os_cond_wait_ns(&s.cv, &s.mu, 1000000);
	onnxrun__os_mutex_unlock(&s.mu);
	for (int i = 0; i < 3; i++)
		onnxrun__os_thread_join(&t[i]);
	assert_int_equal(s.count, 300000);
	onnxrun__os_cond_destroy(&s.cv);
	onnxrun__os_mutex_destroy(&s.mu);
	onnxrun__os_call_once(&once, count_once);
	onnxrun__os_call_once(&once, count_once);
	assert_int_equal(once_calls, 1);
}

static void test_system(void **state)
{
	uint64_t t0, t1;
	(void)state;
	assert_true(onnxrun__os_cpu_count() >= 1);
	t0 = onnxrun__os_now_ns();
	t1 = onnxrun__os_now_ns();
	assert_true(t1 >= t0);
	for (int level = 1; level <= 2; level++) {
		long c = onnxrun__os_cache_size(level);
		assert_true(c == -1 || c > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_rules),
		cmocka_unit_test_setup(test_real_paths, setup),
		cmocka_unit_test_setup(test_files_and_maps, setup),
		cmocka_unit_test_setup(test_list_dir, setup),
		cmocka_unit_test(test_memstream),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_system),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
