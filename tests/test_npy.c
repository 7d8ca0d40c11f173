/*
 * test_npy.c - .npy reading and writing: round trips of every supported dtype, files made
 * by NumPy (tests/data/npy, see make_fixtures.py there), hand-written headers of versions
 * 1.0/2.0/3.0, both byte orders (data bytes written out literally), and every error case.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"
#include "runtime/runtime.h"

#define FIXTURE(name) ONNXRUN_TEST_DATA "/npy/" name

/* The byte-order letter a file saved on this host carries (numpy.save writes the host's). */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_ORDER ">"
#else
#define HOST_ORDER "<"
#endif

static struct onnxrun_env *env;

/* An allocator that can fail its fail_at-th allocation and counts live blocks. */
static size_t live, fail_at, seen;

static void *npy_test_alloc(void *ctx, size_t size, size_t align)
{
	void *p = NULL;
	(void)ctx;
	if (fail_at && ++seen == fail_at)
		return NULL;
	if (!(p = onnxrun__os_aligned_alloc(align, size)))
		return NULL;
	live++;
	return p;
}

static void npy_test_free(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	(void)size;
	live--;
	onnxrun__os_aligned_free(ptr);
}

static int setup(void **state)
{
	struct onnxrun_allocator a = { NULL, npy_test_alloc, npy_test_free };
	(void)state;
	live = fail_at = seen = 0;
	return onnxrun_env_create(&a, &env) != ONNXRUN_OK;
}

static int teardown(void **state)
{
	(void)state;
	onnxrun_env_free(env);
	return live != 0;
}

#define CHECK_FAIL(expr, status, text)                                                           \
	do {                                                                                     \
		enum onnxrun_status s_ = (expr);                                                 \
		if (s_ != (status))                                                              \
			fail_msg("%s -> %d, expected %d: %s", #expr, (int)s_, (int)(status),      \
			         onnxrun_env_error(env));                                        \
		if (!strstr(onnxrun_env_error(env), (text)))                                     \
			fail_msg("message '%s' lacks '%s'", onnxrun_env_error(env), (text));     \
	} while (0)

#define CHECK_OK(expr)                                                                           \
	do {                                                                                     \
		enum onnxrun_status s_ = (expr);                                                 \
		if (s_ != ONNXRUN_OK)                                                            \
			fail_msg("%s -> %d: %s", #expr, (int)s_, onnxrun_env_error(env));        \
	} while (0)

/* A .npy image: preamble of `major`.0, the header text as given (no padding added), data. */
static uint8_t *make_npy(int major, const char *header, const void *data, size_t n, size_t *size)
{
	size_t hlen = strlen(header), pre = major == 1 ? 10 : 12;
	uint8_t *b = malloc(pre + hlen + n + 1);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (uint8_t)major;
	b[7] = 0;
	for (size_t i = 0; i < pre - 8; i++)
		b[8 + i] = (uint8_t)(hlen >> (8 * i));
	memcpy(b + pre, header, hlen);
	if (n)
		memcpy(b + pre + hlen, data, n);
	*size = pre + hlen + n;
	return b;
}

/* Decodes a hand-made image; returns the status, the tensor in *out on success. */
static enum onnxrun_status decode_npy(int major, const char *header, const void *data, size_t n,
                                      struct onnxrun_tensor **out)
{
	size_t size;
	uint8_t *b = make_npy(major, header, data, n, &size);
	enum onnxrun_status st = onnxrun_tensor_decode_npy(env, b, size, out);
	free(b);
	return st;
}

static void assert_shape(const struct onnxrun_tensor *t, enum onnxrun_dtype dtype, int32_t rank,
                         const int64_t *dims)
{
	assert_int_equal(onnxrun_tensor_dtype(t), dtype);
	assert_int_equal(onnxrun_tensor_rank(t), rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(onnxrun_tensor_dims(t)[i], dims[i]);
}

/* ---- writing and round trips ---- */

static const struct {
	enum onnxrun_dtype dtype;
	const char *descr;
} saveable[] = {
	{ ONNXRUN_DTYPE_FLOAT, HOST_ORDER "f4" },       { ONNXRUN_DTYPE_DOUBLE, HOST_ORDER "f8" },
	{ ONNXRUN_DTYPE_FLOAT16, HOST_ORDER "f2" },     { ONNXRUN_DTYPE_INT8, "|i1" },
	{ ONNXRUN_DTYPE_INT16, HOST_ORDER "i2" },       { ONNXRUN_DTYPE_INT32, HOST_ORDER "i4" },
	{ ONNXRUN_DTYPE_INT64, HOST_ORDER "i8" },       { ONNXRUN_DTYPE_UINT8, "|u1" },
	{ ONNXRUN_DTYPE_UINT16, HOST_ORDER "u2" },      { ONNXRUN_DTYPE_UINT32, HOST_ORDER "u4" },
	{ ONNXRUN_DTYPE_UINT64, HOST_ORDER "u8" },      { ONNXRUN_DTYPE_BOOL, "|b1" },
	{ ONNXRUN_DTYPE_COMPLEX64, HOST_ORDER "c8" },   { ONNXRUN_DTYPE_COMPLEX128, HOST_ORDER "c16" },
};

/* Reads a whole file into a malloc'd buffer. */
static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = 0;
	*size = (size_t)n;
	return b;
}

/* Checks the layout of a written file: version 1.0, data at a multiple of 64, header
 * ending in '\n', and the exact dict text. */
static void check_written(const char *path, const char *dict, size_t nbytes)
{
	size_t size, hlen;
	uint8_t *b = slurp(path, &size);
	assert_memory_equal(b, "\x93NUMPY\x01\x00", 8);
	hlen = (size_t)b[8] | (size_t)b[9] << 8;
	assert_int_equal((10 + hlen) % 64, 0);
	assert_int_equal(size, 10 + hlen + nbytes);
	assert_int_equal(b[10 + hlen - 1], '\n');
	assert_memory_equal(b + 10, dict, strlen(dict));
	for (size_t i = 10 + strlen(dict); i < 10 + hlen - 1; i++)
		assert_int_equal(b[i], ' ');
	free(b);
}

static void round_trip_one(enum onnxrun_dtype dtype, const char *descr, int32_t rank, const int64_t *dims,
                           const char *shape_text)
{
	char path[512], dict[256];
	struct onnxrun_tensor *t = NULL, *back = NULL;
	CHECK_OK(onnxrun_tensor_create(env, dtype, rank, dims, &t));
	for (size_t i = 0; i < onnxrun_tensor_nbytes(t); i++)
		((uint8_t *)t->data)[i] = dtype == ONNXRUN_DTYPE_BOOL ? (uint8_t)(i % 3 == 0) : (uint8_t)(i * 29 + 7);
	snprintf(path, sizeof path, "%s/npy_rt_%s_%d.npy", ONNXRUN_TEST_TMP, onnxrun_dtype_name(dtype), (int)rank);
	CHECK_OK(onnxrun_tensor_save_npy(env, t, path));
	snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape_text);
	check_written(path, dict, onnxrun_tensor_nbytes(t));
	CHECK_OK(onnxrun_tensor_load_npy(env, path, &back));
	assert_shape(back, dtype, rank, dims);
	assert_int_equal(onnxrun_tensor_nbytes(back), onnxrun_tensor_nbytes(t));
	if (onnxrun_tensor_nbytes(t))
		assert_memory_equal(onnxrun_tensor_data(back), onnxrun_tensor_data(t), onnxrun_tensor_nbytes(t));
	onnxrun_tensor_free(back);
	onnxrun_tensor_free(t);
}

static void test_round_trip_every_dtype(void **state)
{
	static const int64_t d23[2] = { 2, 3 }, d5[1] = { 5 }, d03[2] = { 0, 3 }, d4[4] = { 1, 2, 1, 3 };
	(void)state;
	for (size_t i = 0; i < sizeof saveable / sizeof saveable[0]; i++) {
		round_trip_one(saveable[i].dtype, saveable[i].descr, 2, d23, "(2, 3)");
		round_trip_one(saveable[i].dtype, saveable[i].descr, 1, d5, "(5,)");
		round_trip_one(saveable[i].dtype, saveable[i].descr, 0, NULL, "()");
		round_trip_one(saveable[i].dtype, saveable[i].descr, 4, d4, "(1, 2, 1, 3)");
	}
	round_trip_one(ONNXRUN_DTYPE_FLOAT, HOST_ORDER "f4", 2, d03, "(0, 3)");
}

/* Saved data is in the host's byte order under the host's letter: the bytes of known values,
 * written out for both orders, must follow the header. */
static void check_saved_bytes(enum onnxrun_dtype dtype, const void *values, size_t nbytes, const char *descr,
                              const uint8_t *le, const uint8_t *be)
{
	static const int64_t d2[1] = { 2 };
	const char *path = ONNXRUN_TEST_TMP "/npy_order.npy";
	struct onnxrun_tensor *t = NULL;
	char dict[128];
	size_t size;
	uint8_t *b;
	CHECK_OK(onnxrun_tensor_create(env, dtype, 1, d2, &t));
	memcpy(t->data, values, nbytes);
	CHECK_OK(onnxrun_tensor_save_npy(env, t, path));
	snprintf(dict, sizeof dict, "{'descr': '%s%s', 'fortran_order': False, 'shape': (2,), }",
	         HOST_ORDER, descr);
	check_written(path, dict, nbytes);
	b = slurp(path, &size);
	assert_memory_equal(b + size - nbytes, HOST_ORDER[0] == '<' ? le : be, nbytes);
	free(b);
	onnxrun_tensor_free(t);
}

static void test_save_host_order(void **state)
{
	/* 1.0f = 0x3f800000, -2.5f = 0xc0200000 */
	static const float f4[2] = { 1.0f, -2.5f };
	static const uint8_t f4_le[8] = { 0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0 };
	static const uint8_t f4_be[8] = { 0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0 };
	/* float16 bits 0x3c00 (1.0), 0xc000 (-2.0) */
	static const uint16_t f2[2] = { 0x3c00, 0xc000 };
	static const uint8_t f2_le[4] = { 0x00, 0x3c, 0x00, 0xc0 }, f2_be[4] = { 0x3c, 0x00, 0xc0, 0x00 };
	static const int64_t i8[2] = { 0x0102030405060708, -2 };
	static const uint8_t i8_le[16] = { 8, 7, 6, 5, 4, 3, 2, 1, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t i8_be[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
	/* (1 + 2i), (-3.5 + 0i): each part is a float of its own (2.0f = 0x40000000, -3.5f = 0xc0600000) */
	static const float c8[4] = { 1.0f, 2.0f, -3.5f, 0.0f };
	static const uint8_t c8_le[16] = { 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x60, 0xc0, 0, 0, 0, 0 };
	static const uint8_t c8_be[16] = { 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0xc0, 0x60, 0, 0, 0, 0, 0, 0 };
	(void)state;
	check_saved_bytes(ONNXRUN_DTYPE_FLOAT, f4, sizeof f4, "f4", f4_le, f4_be);
	check_saved_bytes(ONNXRUN_DTYPE_FLOAT16, f2, sizeof f2, "f2", f2_le, f2_be);
	check_saved_bytes(ONNXRUN_DTYPE_INT64, i8, sizeof i8, "i8", i8_le, i8_be);
	check_saved_bytes(ONNXRUN_DTYPE_COMPLEX64, c8, sizeof c8, "c8", c8_le, c8_be);
}

static void test_save_unsupported(void **state)
{
	const char *path = ONNXRUN_TEST_TMP "/npy_never.npy";
	struct onnxrun_tensor *t = NULL;
	(void)state;
	unlink(path);
	CHECK_OK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_STRING, 0, NULL, &t));
	CHECK_FAIL(onnxrun_tensor_save_npy(env, t, path), ONNXRUN_ERROR_UNSUPPORTED, "string tensors have no .npy form");
	assert_non_null(strstr(onnxrun_env_error(env), "file '" ONNXRUN_TEST_TMP "/npy_never.npy': "));
	onnxrun_tensor_free(t);
	CHECK_OK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_BFLOAT16, 0, NULL, &t));
	CHECK_FAIL(onnxrun_tensor_save_npy(env, t, path), ONNXRUN_ERROR_UNSUPPORTED, "bfloat16 tensors have no .npy form");
	assert_int_not_equal(access(path, F_OK), 0);
	CHECK_FAIL(onnxrun_tensor_save_npy(env, t, ONNXRUN_TEST_TMP "/no/such/dir/x.npy"), ONNXRUN_ERROR_UNSUPPORTED,
	           "no .npy form");
	onnxrun_tensor_free(t);
	CHECK_OK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 0, NULL, &t));
	CHECK_FAIL(onnxrun_tensor_save_npy(env, t, ONNXRUN_TEST_TMP "/no/such/dir/x.npy"), ONNXRUN_ERROR_IO,
	           "No such file or directory");
	assert_int_equal(onnxrun_tensor_save_npy(env, NULL, path), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_save_npy(env, t, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_save_npy(NULL, t, path), ONNXRUN_ERROR_INVALID_ARGUMENT);
	onnxrun_tensor_free(t);
}

/* ---- files written by NumPy ---- */

static struct onnxrun_tensor *load_fixture(const char *path, enum onnxrun_dtype dtype, int32_t rank,
                                           const int64_t *dims)
{
	struct onnxrun_tensor *t = NULL;
	CHECK_OK(onnxrun_tensor_load_npy(env, path, &t));
	assert_shape(t, dtype, rank, dims);
	assert_string_equal(onnxrun_tensor_name(t), "");
	return t;
}

static void check_fixture(const char *path, enum onnxrun_dtype dtype, int32_t rank, const int64_t *dims,
                          const void *want, size_t nbytes)
{
	struct onnxrun_tensor *t = load_fixture(path, dtype, rank, dims);
	assert_int_equal(onnxrun_tensor_nbytes(t), nbytes);
	if (nbytes)
		assert_memory_equal(onnxrun_tensor_data(t), want, nbytes);
	onnxrun_tensor_free(t);
}

static void test_numpy_fixtures(void **state)
{
	static const int64_t d23[2] = { 2, 3 }, d5[1] = { 5 }, d4[1] = { 4 }, d3[1] = { 3 }, d2[1] = { 2 },
	                     d1[1] = { 1 }, d03[2] = { 0, 3 }, d21[2] = { 2, 1 };
	static const float f4[6] = { 0, 1, 2, 3, 4, 5 }, c8[4] = { 1, 2, -3.5f, 0 };
	static const int64_t i8[5] = { -2, -1, 0, 1, 2 };
	static const uint8_t b1[4] = { 1, 0, 0, 1 }, u1[3] = { 1, 2, 3 };
	static const uint16_t f2[3] = { 0x3c00, 0xc000, 0x3800 }; /* 1.0, -2.0, 0.5 */
	static const double c16[2] = { 0.5, -1.0 }, f8[1] = { 3.25 };
	static const int32_t i4[2] = { 7, 8 };
	static const float f4_big[3] = { 0, 1, 2 }; /* written by numpy as '>f4' */
	(void)state;
	check_fixture(FIXTURE("f4_2x3.npy"), ONNXRUN_DTYPE_FLOAT, 2, d23, f4, sizeof f4);
	check_fixture(FIXTURE("i8_5.npy"), ONNXRUN_DTYPE_INT64, 1, d5, i8, sizeof i8);
	check_fixture(FIXTURE("b1_4.npy"), ONNXRUN_DTYPE_BOOL, 1, d4, b1, sizeof b1);
	check_fixture(FIXTURE("f2_3.npy"), ONNXRUN_DTYPE_FLOAT16, 1, d3, f2, sizeof f2);
	check_fixture(FIXTURE("c8_2.npy"), ONNXRUN_DTYPE_COMPLEX64, 1, d2, c8, sizeof c8);
	check_fixture(FIXTURE("c16_1.npy"), ONNXRUN_DTYPE_COMPLEX128, 1, d1, c16, sizeof c16);
	check_fixture(FIXTURE("f8_scalar.npy"), ONNXRUN_DTYPE_DOUBLE, 0, NULL, f8, sizeof f8);
	check_fixture(FIXTURE("u2_0x3.npy"), ONNXRUN_DTYPE_UINT16, 2, d03, NULL, 0);
	check_fixture(FIXTURE("u1_v2.npy"), ONNXRUN_DTYPE_UINT8, 1, d3, u1, sizeof u1);
	check_fixture(FIXTURE("i4_v3.npy"), ONNXRUN_DTYPE_INT32, 2, d21, i4, sizeof i4);
	check_fixture(FIXTURE("f4_big.npy"), ONNXRUN_DTYPE_FLOAT, 1, d3, f4_big, sizeof f4_big);
}

static void test_numpy_fixtures_unsupported(void **state)
{
	struct onnxrun_tensor *t = NULL;
	(void)state;
	CHECK_FAIL(onnxrun_tensor_load_npy(env, FIXTURE("f4_fortran.npy"), &t), ONNXRUN_ERROR_UNSUPPORTED,
	           "Fortran-order .npy is not supported");
	CHECK_FAIL(onnxrun_tensor_load_npy(env, FIXTURE("object.npy"), &t), ONNXRUN_ERROR_UNSUPPORTED,
	           "object arrays ('|O') are not supported");
	CHECK_FAIL(onnxrun_tensor_load_npy(env, FIXTURE("unicode.npy"), &t), ONNXRUN_ERROR_UNSUPPORTED,
	           "string and unicode arrays ('<U2')");
	CHECK_FAIL(onnxrun_tensor_load_npy(env, FIXTURE("structured.npy"), &t), ONNXRUN_ERROR_UNSUPPORTED,
	           "structured dtypes");
	assert_null(t);
}

/* ---- hand-written headers ---- */

static void test_header_versions(void **state)
{
	static const uint8_t le[12] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 7, 0, 0, 0 };
	static const int32_t data[3] = { -1, 0, 7 };
	static const int64_t d3[1] = { 3 };
	struct onnxrun_tensor *t = NULL;
	(void)state;
	for (int major = 1; major <= 3; major++) {
		CHECK_OK(decode_npy(major, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\n", le,
		                    sizeof le, &t));
		assert_shape(t, ONNXRUN_DTYPE_INT32, 1, d3);
		assert_memory_equal(onnxrun_tensor_data(t), data, sizeof data);
		onnxrun_tensor_free(t);
	}
}

static void test_header_robust_parsing(void **state)
{
	static const uint8_t data[24] = { 0 };
	static const struct {
		const char *header;
		enum onnxrun_dtype dtype;
		int32_t rank;
		int64_t dims[3];
	} cases[] = {
		{ "{'shape': (2, 3), 'fortran_order': False, 'descr': '<u4'}", ONNXRUN_DTYPE_UINT32, 2, { 2, 3 } },
		{ "  {  \"descr\" :\"=i2\",\n\t'fortran_order':False ,'shape':( 4 , 3 , ) , }   \n",
		  ONNXRUN_DTYPE_INT16, 2, { 4, 3 } },
		{ "{'descr': '|b1', 'fortran_order': False, 'shape': (24,)}", ONNXRUN_DTYPE_BOOL, 1, { 24 } },
		{ "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }", ONNXRUN_DTYPE_DOUBLE, 1, { 3 } },
		{ "{'descr': '<f8', 'fortran_order': False, 'shape': (3), }", ONNXRUN_DTYPE_DOUBLE, 1, { 3 } },
		{ "{'descr': '|i1', 'fortran_order': False, 'shape': (2,3,4,),}", ONNXRUN_DTYPE_INT8, 3, { 2, 3, 4 } },
		{ "{'descr': '>u1', 'fortran_order': False, 'shape': (24,)}", ONNXRUN_DTYPE_UINT8, 1, { 24 } },
		{ "{'descr': '<c16', 'fortran_order': False, 'shape': (1, 1)}", ONNXRUN_DTYPE_COMPLEX128, 2, { 1, 1 } },
		{ "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 5)}", ONNXRUN_DTYPE_FLOAT16, 2, { 0, 5 } },
		{ "{'descr': '<i8', 'fortran_order': True, 'shape': (3,)}", ONNXRUN_DTYPE_INT64, 1, { 3 } },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_tensor *t = NULL;
		size_t n;
		int64_t numel = 1;
		for (int32_t d = 0; d < cases[i].rank; d++)
			numel *= cases[i].dims[d];
		n = (size_t)numel * onnxrun_dtype_size(cases[i].dtype);
		if (cases[i].dtype == ONNXRUN_DTYPE_INT64) {
			/* Fortran order is refused even for 1-d arrays */
			CHECK_FAIL(decode_npy(1, cases[i].header, data, n, &t), ONNXRUN_ERROR_UNSUPPORTED, "Fortran");
			continue;
		}
		CHECK_OK(decode_npy(1, cases[i].header, data, n, &t));
		assert_shape(t, cases[i].dtype, cases[i].rank, cases[i].dims);
		onnxrun_tensor_free(t);
	}
}

static void test_zero_d_and_empty(void **state)
{
	static const uint8_t one[4] = { 0, 0, 0x20, 0x40 }; /* 2.5f = 0x40200000 */
	struct onnxrun_tensor *t = NULL;
	static const int64_t d0[3] = { 4, 0, 2 };
	(void)state;
	CHECK_OK(decode_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", one, 4, &t));
	assert_int_equal(onnxrun_tensor_rank(t), 0);
	assert_int_equal(onnxrun_tensor_numel(t), 1);
	assert_true(*(float *)onnxrun_tensor_data(t) == 2.5f);
	onnxrun_tensor_free(t);
	CHECK_OK(decode_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 0, 2), }", NULL, 0, &t));
	assert_shape(t, ONNXRUN_DTYPE_FLOAT, 3, d0);
	assert_int_equal(onnxrun_tensor_numel(t), 0);
	onnxrun_tensor_free(t);
}

/* Both byte orders load into host-order tensors: the same values written out as
 * little-endian bytes under '<' and as big-endian bytes under '>'; '=', '|' and no letter
 * are the host's order (numpy reads them so). */
static void check_orders(const char *type, enum onnxrun_dtype dtype, const uint8_t *le, const uint8_t *be,
                         size_t nbytes, const void *want)
{
	static const int64_t d2[1] = { 2 };
	const char *orders[] = { "<", ">", "=", "|", "" };
	for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
		const void *bytes = o == 0 ? le : o == 1 ? be : want; /* want is in host order */
		struct onnxrun_tensor *t = NULL;
		char header[128];
		snprintf(header, sizeof header, "{'descr': '%s%s', 'fortran_order': False, 'shape': (2,), }",
		         orders[o], type);
		CHECK_OK(decode_npy(1, header, bytes, nbytes, &t));
		assert_shape(t, dtype, 1, d2);
		if (memcmp(onnxrun_tensor_data(t), want, nbytes) != 0)
			fail_msg("descr '%s%s': values differ", orders[o], type);
		onnxrun_tensor_free(t);
	}
}

static void test_both_byte_orders(void **state)
{
	/* 1.0f = 0x3f800000, -2.5f = 0xc0200000 */
	static const float f4[2] = { 1.0f, -2.5f };
	static const uint8_t f4_le[8] = { 0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0 };
	static const uint8_t f4_be[8] = { 0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0 };
	/* 1.5 = 0x3ff8000000000000, -0.25 = 0xbfd0000000000000 */
	static const double f8[2] = { 1.5, -0.25 };
	static const uint8_t f8_le[16] = { 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0, 0, 0, 0, 0, 0, 0xd0, 0xbf };
	static const uint8_t f8_be[16] = { 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xbf, 0xd0, 0, 0, 0, 0, 0, 0 };
	/* float16 bits: 0x3c00 (1.0), 0x7c00 (+inf) */
	static const uint16_t f2[2] = { 0x3c00, 0x7c00 };
	static const uint8_t f2_le[4] = { 0x00, 0x3c, 0x00, 0x7c }, f2_be[4] = { 0x3c, 0x00, 0x7c, 0x00 };
	static const int16_t i2[2] = { 0x1234, -32768 };
	static const uint8_t i2_le[4] = { 0x34, 0x12, 0x00, 0x80 }, i2_be[4] = { 0x12, 0x34, 0x80, 0x00 };
	static const uint32_t u4[2] = { 0xdeadbeef, 7 };
	static const uint8_t u4_le[8] = { 0xef, 0xbe, 0xad, 0xde, 7, 0, 0, 0 };
	static const uint8_t u4_be[8] = { 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 7 };
	static const uint64_t u8[2] = { 0x0102030405060708u, 1 };
	static const uint8_t u8_le[16] = { 8, 7, 6, 5, 4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t u8_be[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 1 };
	/* (1 + 2i), (-3.5 + 0i): real and imaginary parts are floats of their own */
	static const float c8[4] = { 1.0f, 2.0f, -3.5f, 0.0f };
	static const uint8_t c8_le[16] = { 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x60, 0xc0, 0, 0, 0, 0 };
	static const uint8_t c8_be[16] = { 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0xc0, 0x60, 0, 0, 0, 0, 0, 0 };
	/* (0.5 - 1i), (1.5 + 0i): 0.5 = 0x3fe0..., -1.0 = 0xbff0..., 1.5 = 0x3ff8... */
	static const double c16[4] = { 0.5, -1.0, 1.5, 0.0 };
	static const uint8_t c16_le[32] = { 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0xbf,
		                            0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t c16_be[32] = { 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0xbf, 0xf0, 0, 0, 0, 0, 0, 0,
		                            0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const int8_t i1[2] = { -1, 5 };
	static const uint8_t i1_bytes[2] = { 0xff, 5 };
	(void)state;
	check_orders("f4", ONNXRUN_DTYPE_FLOAT, f4_le, f4_be, sizeof f4, f4);
	check_orders("f8", ONNXRUN_DTYPE_DOUBLE, f8_le, f8_be, sizeof f8, f8);
	check_orders("f2", ONNXRUN_DTYPE_FLOAT16, f2_le, f2_be, sizeof f2, f2);
	check_orders("i2", ONNXRUN_DTYPE_INT16, i2_le, i2_be, sizeof i2, i2);
	check_orders("u4", ONNXRUN_DTYPE_UINT32, u4_le, u4_be, sizeof u4, u4);
	check_orders("u8", ONNXRUN_DTYPE_UINT64, u8_le, u8_be, sizeof u8, u8);
	check_orders("c8", ONNXRUN_DTYPE_COMPLEX64, c8_le, c8_be, sizeof c8, c8);
	check_orders("c16", ONNXRUN_DTYPE_COMPLEX128, c16_le, c16_be, sizeof c16, c16);
	check_orders("i1", ONNXRUN_DTYPE_INT8, i1_bytes, i1_bytes, sizeof i1, i1);
}

/* ---- errors ---- */

static void test_bad_preamble(void **state)
{
	static const uint8_t junk[] = "PK\x03\x04 not an npy file";
	static const uint8_t short_magic[] = "\x93NUMPY\x01";
	struct onnxrun_tensor *t = NULL;
	size_t size;
	uint8_t *b;
	(void)state;
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, junk, sizeof junk, &t), ONNXRUN_ERROR_INVALID_INPUT, "bad magic");
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, junk, 3, &t), ONNXRUN_ERROR_INVALID_INPUT, "bad magic");
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, short_magic, 7, &t), ONNXRUN_ERROR_INVALID_INPUT, "truncated");
	b = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd", 4, &size);
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, b, 40, &t), ONNXRUN_ERROR_INVALID_INPUT, "truncated .npy header");
	b[6] = 4;
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, b, size, &t), ONNXRUN_ERROR_UNSUPPORTED,
	           ".npy format version 4.0 is not supported");
	b[6] = 1, b[7] = 1;
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, b, size, &t), ONNXRUN_ERROR_UNSUPPORTED, "version 1.1");
	free(b);
	b = make_npy(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd", 4, &size);
	CHECK_FAIL(onnxrun_tensor_decode_npy(env, b, 11, &t), ONNXRUN_ERROR_INVALID_INPUT, "truncated");
	free(b);
	assert_null(t);
}

static void test_bad_dtypes(void **state)
{
	static const uint8_t data[16] = { 0 };
	static const struct {
		const char *descr;
		enum onnxrun_status status;
		const char *text;
	} cases[] = {
		{ "'|O'", ONNXRUN_ERROR_UNSUPPORTED, "object arrays" },
		{ "'<U4'", ONNXRUN_ERROR_UNSUPPORTED, "unicode" },
		{ "'|S4'", ONNXRUN_ERROR_UNSUPPORTED, "string" },
		{ "'|V4'", ONNXRUN_ERROR_UNSUPPORTED, "dtype '|V4' is not supported" },
		{ "'<M8[ns]'", ONNXRUN_ERROR_UNSUPPORTED, "dtype '<M8[ns]' is not supported" },
		{ "'<f16'", ONNXRUN_ERROR_UNSUPPORTED, "dtype '<f16' is not supported" },
		{ "'<f4x'", ONNXRUN_ERROR_UNSUPPORTED, "dtype '<f4x' is not supported" },
		{ "[('x', '<f4')]", ONNXRUN_ERROR_UNSUPPORTED, "structured dtypes" },
		{ "<f4", ONNXRUN_ERROR_INVALID_INPUT, "expected a quoted string" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_tensor *t = NULL;
		char header[128];
		snprintf(header, sizeof header, "{'descr': %s, 'fortran_order': False, 'shape': (1,), }",
		         cases[i].descr);
		CHECK_FAIL(decode_npy(1, header, data, 4, &t), cases[i].status, cases[i].text);
		assert_null(t);
	}
}

static void test_bad_headers(void **state)
{
	static const uint8_t data[16] = { 0 };
	static const struct {
		const char *header;
		enum onnxrun_status status;
		const char *text;
	} cases[] = {
		{ "{'descr': '<f4', 'shape': (1,), }", ONNXRUN_ERROR_INVALID_INPUT, "lacks 'fortran_order'" },
		{ "{'fortran_order': False, 'shape': (1,)}", ONNXRUN_ERROR_INVALID_INPUT, "lacks 'descr'" },
		{ "{'descr': '<f4', 'fortran_order': False}", ONNXRUN_ERROR_INVALID_INPUT, "lacks 'shape'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", ONNXRUN_ERROR_INVALID_INPUT,
		  "unexpected key 'x'" },
		{ "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
		  ONNXRUN_ERROR_INVALID_INPUT, "key 'descr' repeated" },
		{ "{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", ONNXRUN_ERROR_INVALID_INPUT, "expected ':'" },
		{ "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", ONNXRUN_ERROR_INVALID_INPUT,
		  "expected ',' or '}'" },
		{ "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", ONNXRUN_ERROR_INVALID_INPUT, "True or False" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", ONNXRUN_ERROR_INVALID_INPUT,
		  "only padding" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", ONNXRUN_ERROR_INVALID_INPUT,
		  "non-negative integer" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", ONNXRUN_ERROR_INVALID_INPUT, "'('" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", ONNXRUN_ERROR_INVALID_INPUT,
		  "',' or ')'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,", ONNXRUN_ERROR_INVALID_INPUT, "expected" },
		{ "{'descr': '<f4", ONNXRUN_ERROR_INVALID_INPUT, "expected a closing quote" },
		{ "'descr': '<f4'", ONNXRUN_ERROR_INVALID_INPUT, "expected '{'" },
		{ "", ONNXRUN_ERROR_INVALID_INPUT, "expected '{'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1)}",
		  ONNXRUN_ERROR_LIMIT, "more than 12 dimensions" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", ONNXRUN_ERROR_LIMIT,
		  "overflows" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", ONNXRUN_ERROR_LIMIT,
		  "too large" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)}", ONNXRUN_ERROR_LIMIT,
		  "too large" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct onnxrun_tensor *t = NULL;
		CHECK_FAIL(decode_npy(1, cases[i].header, data, 4, &t), cases[i].status, cases[i].text);
		assert_null(t);
	}
}

static void test_data_size_mismatch(void **state)
{
	static const uint8_t data[32] = { 0 };
	const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	struct onnxrun_tensor *t = NULL;
	(void)state;
	CHECK_FAIL(decode_npy(1, h, data, 20, &t), ONNXRUN_ERROR_INVALID_INPUT,
	           ".npy data has 20 bytes, expected 24 (6 float elements)");
	CHECK_FAIL(decode_npy(1, h, data, 28, &t), ONNXRUN_ERROR_INVALID_INPUT, "has 28 bytes, expected 24");
	/* huge shapes with tiny data fail on the size check, before allocating */
#if SIZE_MAX > 0xffffffffu
	CHECK_FAIL(decode_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576, 1024)}",
	                      data, 8, &t),
	           ONNXRUN_ERROR_INVALID_INPUT, "has 8 bytes, expected 9007199254740992");
#else
	/* 2^53 bytes do not fit a 32-bit size_t: a size limit, found before the data is compared */
	CHECK_FAIL(decode_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576, 1024)}",
	                      data, 8, &t),
	           ONNXRUN_ERROR_LIMIT,
	           ".npy shape is too large: byte size of 1125899906842624 double elements overflows (more than a "
	           "32-bit size_t holds)");
#endif
	assert_null(t);
}

static void test_file_errors(void **state)
{
	const char *path = ONNXRUN_TEST_TMP "/npy_bad.npy";
	struct onnxrun_tensor *t = NULL;
	FILE *f;
	(void)state;
	CHECK_FAIL(onnxrun_tensor_load_npy(env, ONNXRUN_TEST_TMP "/missing.npy", &t), ONNXRUN_ERROR_IO, "");
	assert_string_equal(onnxrun_env_error(env), "file '" ONNXRUN_TEST_TMP "/missing.npy': No such file or directory");
	f = fopen(path, "wb");
	assert_non_null(f);
	fputs("\x93NUMPX", f);
	fclose(f);
	CHECK_FAIL(onnxrun_tensor_load_npy(env, path, &t), ONNXRUN_ERROR_INVALID_INPUT, "");
	assert_string_equal(onnxrun_env_error(env), "file '" ONNXRUN_TEST_TMP "/npy_bad.npy': not a .npy file (bad magic)");
	CHECK_FAIL(onnxrun_tensor_load_npy(env, ONNXRUN_TEST_TMP, &t), ONNXRUN_ERROR_IO, "not a regular file");
	assert_int_equal(onnxrun_tensor_load_npy(env, NULL, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_load_npy(env, path, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_load_npy(NULL, path, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_decode_npy(env, NULL, 10, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_decode_npy(env, NULL, 0, &t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_null(t);
	/* success clears the previous message */
	t = load_fixture(FIXTURE("f8_scalar.npy"), ONNXRUN_DTYPE_DOUBLE, 0, NULL);
	assert_string_equal(onnxrun_env_error(env), "");
	onnxrun_tensor_free(t);
}

/* Each failing allocation of a save + load gives OUT_OF_MEMORY and leaks nothing. */
static void test_out_of_memory(void **state)
{
	static const int64_t dims[2] = { 2, 3 };
	const char *path = ONNXRUN_TEST_TMP "/npy_oom.npy";
	struct onnxrun_tensor *t = NULL, *back;
	size_t base;
	(void)state;
	CHECK_OK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_INT16, 2, dims, &t));
	base = live;
	for (size_t n = 1;; n++) {
		enum onnxrun_status st;
		back = NULL;
		fail_at = n;
		seen = 0;
		st = onnxrun_tensor_save_npy(env, t, path);
		if (!st)
			st = onnxrun_tensor_load_npy(env, path, &back);
		fail_at = 0;
		onnxrun_tensor_free(back);
		assert_int_equal(live, base);
		if (st == ONNXRUN_OK) {
			assert_true(n > 3);
			break;
		}
		if (st != ONNXRUN_ERROR_OUT_OF_MEMORY)
			fail_msg("allocation %zu: status %d (%s)", n, (int)st, onnxrun_env_error(env));
	}
	onnxrun_tensor_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_every_dtype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_host_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_unsupported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numpy_fixtures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numpy_fixtures_unsupported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_robust_parsing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_d_and_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_both_byte_orders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_preamble, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_dtypes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_size_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_memory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
