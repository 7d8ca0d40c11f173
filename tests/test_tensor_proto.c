/*
 * test_tensor_proto.c - TensorProto decoding (every dtype, raw and typed fields, strings,
 * external data, malformed input) and encoding, and the public .pb file functions.
 * Expected values are written from the ONNX spec (IEEE bit patterns, little-endian).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/platform.h"
#include "loader/loader.h"
#include "loader/tensor_proto.h"

#define EXT_DIR ONNXRUN_TEST_TMP "/tp_ext"
#define OUTSIDE_FILE ONNXRUN_TEST_TMP "/tp_outside.bin"

static struct onnxrun_env *env;
static struct onnxrun__err err;

/* ---- a counting allocator: live blocks and the largest single request ---- */

struct counting {
	size_t live, total, largest;
	size_t fail_at, seen; /* fail_at > 0: the fail_at-th allocation from now fails */
};
static struct counting counts;

static void *count_alloc(void *ctx, size_t size, size_t align)
{
	struct counting *c = ctx;
	void *p = NULL;
	if (c->fail_at && ++c->seen == c->fail_at)
		return NULL;
	if (!(p = onnxrun__os_aligned_alloc(align, size)))
		return NULL;
	c->live++;
	c->total++;
	if (size > c->largest)
		c->largest = size;
	return p;
}

static void count_free(void *ctx, void *ptr, size_t size)
{
	struct counting *c = ctx;
	(void)size;
	c->live--;
	onnxrun__os_aligned_free(ptr);
}

static int setup(void **state)
{
	struct onnxrun_allocator a = { &counts, count_alloc, count_free };
	(void)state;
	memset(&counts, 0, sizeof counts);
	return onnxrun_env_create(&a, &env) != ONNXRUN_OK;
}

static int teardown(void **state)
{
	(void)state;
	onnxrun_env_free(env);
	env = NULL;
	if (counts.live != 0) {
		fprintf(stderr, "leak: %zu blocks still allocated\n", counts.live);
		return 1;
	}
	return 0;
}

#define CHECK_OK(expr)                                                                     \
	do {                                                                               \
		enum onnxrun_status s_ = (expr);                                           \
		if (s_ != ONNXRUN_OK)                                                      \
			fail_msg("%s -> %d: %s", #expr, (int)s_, err.msg);                 \
	} while (0)

#define CHECK_FAIL(expr, status, text)                                                     \
	do {                                                                               \
		enum onnxrun_status s_ = (expr);                                           \
		if (s_ != (status))                                                        \
			fail_msg("%s -> %d, expected %d: %s", #expr, (int)s_, (int)(status), \
			         err.msg);                                                 \
		if (!strstr(err.msg, (text)))                                              \
			fail_msg("message '%s' lacks '%s'", err.msg, (text));              \
	} while (0)

/* A TensorProto named "T" with data_type and dims set and no data. */
static void init_tp(Onnx__TensorProto *tp, int dtype, size_t rank, int64_t *dims)
{
	onnx__tensor_proto__init(tp);
	tp->has_data_type = 1;
	tp->data_type = dtype;
	tp->n_dims = rank;
	tp->dims = dims;
	tp->name = (char *)"T";
}

static enum onnxrun_status decode(const Onnx__TensorProto *tp, const char *base, struct onnxrun_tensor **t)
{
	err.msg[0] = '\0';
	return onnxrun__tensor_from_proto(env, tp, base, &err, t);
}

/* Decodes a 1-d tensor of n elements from raw bytes (little-endian, written out in the tests)
 * and compares its data with `want` (host order); encoding it again must give the same
 * bytes (bools: the normalized want). */
static void check_raw(int dtype, const uint8_t *raw, size_t len, int64_t n, const void *want)
{
	Onnx__TensorProto tp, *back;
	struct onnxrun__pb_allocator a;
	int64_t dims[1] = { n };
	struct onnxrun_tensor *t = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	init_tp(&tp, dtype, 1, dims);
	tp.has_raw_data = 1;
	tp.raw_data.len = len;
	tp.raw_data.data = (uint8_t *)raw;
	CHECK_OK(decode(&tp, NULL, &t));
	assert_int_equal(t->dtype, dtype);
	assert_int_equal(t->rank, 1);
	assert_int_equal(t->numel, n);
	assert_int_equal(t->nbytes, len);
	assert_string_equal(t->name, "T");
	assert_memory_equal(t->data, want, len);
	CHECK_OK(onnxrun__tensor_pb_encode(env, t, &err, &buf, &size));
	onnxrun__pb_allocator_init(&a, env);
	back = onnx__tensor_proto__unpack(&a.base, size, buf);
	assert_non_null(back);
	assert_int_equal(back->raw_data.len, len);
	assert_memory_equal(back->raw_data.data, dtype == ONNXRUN_DTYPE_BOOL ? want : raw, len);
	onnx__tensor_proto__free_unpacked(back, &a.base);
	onnxrun__free(env, buf);
	onnxrun_tensor_free(t);
}

/* ---- raw_data for every dtype ---- */

static void test_raw_every_dtype(void **state)
{
	(void)state;
	{
		/* 1.0f = 0x3f800000, -2.5f = 0xc0200000 */
		static const uint8_t raw[] = { 0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0 };
		static const float want[] = { 1.0f, -2.5f };
		check_raw(ONNXRUN_DTYPE_FLOAT, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 0x00, 0xff, 0x2a };
		static const uint8_t want[] = { 0, 255, 42 };
		check_raw(ONNXRUN_DTYPE_UINT8, raw, sizeof raw, 3, want);
	}
	{
		static const uint8_t raw[] = { 0x7f, 0x80, 0xff };
		static const int8_t want[] = { 127, -128, -1 };
		check_raw(ONNXRUN_DTYPE_INT8, raw, sizeof raw, 3, want);
	}
	{
		static const uint8_t raw[] = { 0x34, 0x12, 0xff, 0xff };
		static const uint16_t want[] = { 0x1234, 65535 };
		check_raw(ONNXRUN_DTYPE_UINT16, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 0x00, 0x80, 0xff, 0x7f };
		static const int16_t want[] = { -32768, 32767 };
		check_raw(ONNXRUN_DTYPE_INT16, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 0xff, 0xff, 0xff, 0xff, 0x78, 0x56, 0x34, 0x12 };
		static const int32_t want[] = { -1, 0x12345678 };
		check_raw(ONNXRUN_DTYPE_INT32, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			                       0, 0, 0, 0, 0, 0, 0, 0x80 };
		static const int64_t want[] = { -2, INT64_MIN };
		check_raw(ONNXRUN_DTYPE_INT64, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 1, 0, 1 };
		static const uint8_t want[] = { 1, 0, 1 };
		check_raw(ONNXRUN_DTYPE_BOOL, raw, sizeof raw, 3, want);
	}
	{
		/* 1.5 = 0x3ff8000000000000, -0.25 = 0xbfd0000000000000 */
		static const uint8_t raw[] = { 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0, 0, 0, 0, 0, 0, 0xd0, 0xbf };
		static const double want[] = { 1.5, -0.25 };
		check_raw(ONNXRUN_DTYPE_DOUBLE, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0 };
		static const uint32_t want[] = { 4294967295u, 7 };
		check_raw(ONNXRUN_DTYPE_UINT32, raw, sizeof raw, 2, want);
	}
	{
		static const uint8_t raw[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0 };
		static const uint64_t want[] = { UINT64_MAX, 1 };
		check_raw(ONNXRUN_DTYPE_UINT64, raw, sizeof raw, 2, want);
	}
	{
		/* (1 + 2i), (-3.5 + 0i): real first; 2.0f = 0x40000000, -3.5f = 0xc0600000 */
		static const uint8_t raw[] = { 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x60, 0xc0, 0, 0, 0, 0 };
		static const float want[] = { 1.0f, 2.0f, -3.5f, 0.0f };
		check_raw(ONNXRUN_DTYPE_COMPLEX64, raw, sizeof raw, 2, want);
	}
	{
		/* (0.5 - 1i): 0.5 = 0x3fe0000000000000, -1.0 = 0xbff0000000000000 */
		static const uint8_t raw[] = { 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0xbf };
		static const double want[] = { 0.5, -1.0 };
		check_raw(ONNXRUN_DTYPE_COMPLEX128, raw, sizeof raw, 1, want);
	}
}

static void test_raw_half_types(void **state)
{
	/* float16: 1.0 = 0x3c00, -2.0 = 0xc000, +inf = 0x7c00; bfloat16: 1.0 = 0x3f80, -3.0 = 0xc040 */
	static const uint8_t f16[] = { 0x00, 0x3c, 0x00, 0xc0, 0x00, 0x7c };
	static const uint16_t f16_bits[] = { 0x3c00, 0xc000, 0x7c00 };
	static const uint8_t bf16[] = { 0x80, 0x3f, 0x40, 0xc0 };
	static const uint16_t bf16_bits[] = { 0x3f80, 0xc040 };
	(void)state;
	check_raw(ONNXRUN_DTYPE_FLOAT16, f16, sizeof f16, 3, f16_bits);
	check_raw(ONNXRUN_DTYPE_BFLOAT16, bf16, sizeof bf16, 2, bf16_bits);
	assert_true(onnxrun__f16_to_f32(f16_bits[1]) == -2.0f);
	assert_true(onnxrun__bf16_to_f32(bf16_bits[1]) == -3.0f);
}

static void test_raw_bool_normalized(void **state)
{
	static const uint8_t raw[] = { 0, 2, 255 };
	static const uint8_t want[] = { 0, 1, 1 };
	(void)state;
	check_raw(ONNXRUN_DTYPE_BOOL, raw, sizeof raw, 3, want);
}

/* ---- typed fields for every dtype ---- */

/* Decodes tp (1-d, n elements) and compares its data with want (nbytes bytes). */
static void check_typed(Onnx__TensorProto *tp, int64_t n, const void *want, size_t nbytes)
{
	struct onnxrun_tensor *t = NULL;
	CHECK_OK(decode(tp, NULL, &t));
	assert_int_equal(t->dtype, tp->data_type);
	assert_int_equal(t->numel, n);
	assert_int_equal(t->nbytes, nbytes);
	assert_memory_equal(t->data, want, nbytes);
	onnxrun_tensor_free(t);
}

static void test_typed_int32_field(void **state)
{
	static int32_t i32[] = { -1, 0x12345678 };
	static int32_t i16[] = { -32768, 32767 };
	static int32_t i8[] = { -128, 127 };
	static int32_t u8[] = { 0, 255 };
	static int32_t u16[] = { 0, 65535 };
	static int32_t b[] = { 1, 0 };
	static int32_t f16[] = { 0x3c00, 0xc000 };  /* 1.0, -2.0 */
	static int32_t bf16[] = { 0x3f80, 0xc040 }; /* 1.0, -3.0 */
	static const int32_t w_i32[] = { -1, 0x12345678 };
	static const int16_t w_i16[] = { -32768, 32767 };
	static const int8_t w_i8[] = { -128, 127 };
	static const uint8_t w_u8[] = { 0, 255 }, w_b[] = { 1, 0 };
	static const uint16_t w_u16[] = { 0, 65535 }, w_f16[] = { 0x3c00, 0xc000 }, w_bf16[] = { 0x3f80, 0xc040 };
	struct {
		int dtype;
		int32_t *values;
		const void *want;
		size_t nbytes;
	} cases[] = {
		{ ONNXRUN_DTYPE_INT32, i32, w_i32, sizeof w_i32 },  { ONNXRUN_DTYPE_INT16, i16, w_i16, sizeof w_i16 },
		{ ONNXRUN_DTYPE_INT8, i8, w_i8, sizeof w_i8 },      { ONNXRUN_DTYPE_UINT8, u8, w_u8, sizeof w_u8 },
		{ ONNXRUN_DTYPE_UINT16, u16, w_u16, sizeof w_u16 }, { ONNXRUN_DTYPE_BOOL, b, w_b, sizeof w_b },
		{ ONNXRUN_DTYPE_FLOAT16, f16, w_f16, sizeof w_f16 },
		{ ONNXRUN_DTYPE_BFLOAT16, bf16, w_bf16, sizeof w_bf16 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Onnx__TensorProto tp;
		int64_t dims[1] = { 2 };
		init_tp(&tp, cases[i].dtype, 1, dims);
		tp.n_int32_data = 2;
		tp.int32_data = cases[i].values;
		check_typed(&tp, 2, cases[i].want, cases[i].nbytes);
	}
}

static void test_typed_other_fields(void **state)
{
	static float f[] = { 1.0f, -2.5f }, c64[] = { 1.0f, 2.0f, -3.5f, 0.0f };
	static double d[] = { 1.5, -0.25 }, c128[] = { 0.5, -1.0 };
	static int64_t i64[] = { INT64_MIN, 42 };
	static uint64_t u64[] = { UINT64_MAX, 1 }, u32[] = { 4294967295u, 7 };
	static const uint32_t w_u32[] = { 4294967295u, 7 };
	Onnx__TensorProto tp;
	int64_t one[1] = { 1 }, two[1] = { 2 };
	(void)state;
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 1, two);
	tp.n_float_data = 2, tp.float_data = f;
	check_typed(&tp, 2, f, sizeof f);
	init_tp(&tp, ONNXRUN_DTYPE_COMPLEX64, 1, two);
	tp.n_float_data = 4, tp.float_data = c64;
	check_typed(&tp, 2, c64, sizeof c64);
	init_tp(&tp, ONNXRUN_DTYPE_DOUBLE, 1, two);
	tp.n_double_data = 2, tp.double_data = d;
	check_typed(&tp, 2, d, sizeof d);
	init_tp(&tp, ONNXRUN_DTYPE_COMPLEX128, 1, one);
	tp.n_double_data = 2, tp.double_data = c128;
	check_typed(&tp, 1, c128, sizeof c128);
	init_tp(&tp, ONNXRUN_DTYPE_INT64, 1, two);
	tp.n_int64_data = 2, tp.int64_data = i64;
	check_typed(&tp, 2, i64, sizeof i64);
	init_tp(&tp, ONNXRUN_DTYPE_UINT64, 1, two);
	tp.n_uint64_data = 2, tp.uint64_data = u64;
	check_typed(&tp, 2, u64, sizeof u64);
	init_tp(&tp, ONNXRUN_DTYPE_UINT32, 1, two);
	tp.n_uint64_data = 2, tp.uint64_data = u32;
	check_typed(&tp, 2, w_u32, sizeof w_u32);
}

static void test_strings_with_zero_bytes(void **state)
{
	ProtobufCBinaryData s[3] = { { 2, (uint8_t *)"ab" }, { 3, (uint8_t *)"a\0b" }, { 0, NULL } };
	Onnx__TensorProto tp;
	int64_t dims[2] = { 3, 1 };
	struct onnxrun_tensor *t = NULL;
	const struct onnxrun_string *v;
	(void)state;
	init_tp(&tp, ONNXRUN_DTYPE_STRING, 2, dims);
	tp.n_string_data = 3;
	tp.string_data = s;
	CHECK_OK(decode(&tp, NULL, &t));
	v = t->data;
	assert_int_equal(t->numel, 3);
	assert_int_equal(v[0].size, 2);
	assert_memory_equal(v[0].data, "ab", 3);
	assert_int_equal(v[1].size, 3);
	assert_memory_equal(v[1].data, "a\0b", 4);
	assert_int_equal(v[2].size, 0);
	assert_int_equal(v[2].data[0], '\0');
	onnxrun_tensor_free(t);
}

static void test_scalar_and_empty(void **state)
{
	static float f[] = { 3.0f };
	Onnx__TensorProto tp;
	int64_t dims[2] = { 0, 3 };
	struct onnxrun_tensor *t = NULL;
	(void)state;
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 0, NULL);
	tp.n_float_data = 1, tp.float_data = f;
	CHECK_OK(decode(&tp, NULL, &t));
	assert_int_equal(t->rank, 0);
	assert_int_equal(t->numel, 1);
	assert_true(((float *)t->data)[0] == 3.0f);
	onnxrun_tensor_free(t);
	/* an empty tensor needs no data at all, of any type */
	for (int dt = ONNXRUN_DTYPE_FLOAT; dt <= ONNXRUN_DTYPE_BFLOAT16; dt++) {
		init_tp(&tp, dt, 2, dims);
		CHECK_OK(decode(&tp, NULL, &t));
		assert_int_equal(t->numel, 0);
		assert_int_equal(t->nbytes, 0);
		onnxrun_tensor_free(t);
	}
}

/* ---- malformed tensors ---- */

static void test_size_mismatches(void **state)
{
	static uint8_t raw[12];
	static float f[3];
	static int32_t i[3];
	ProtobufCBinaryData s[1] = { { 1, (uint8_t *)"x" } };
	Onnx__TensorProto tp;
	int64_t four[1] = { 4 }, two[1] = { 2 };
	struct onnxrun_tensor *t = NULL;
	(void)state;
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 1, four);
	tp.name = (char *)"W";
	tp.has_raw_data = 1, tp.raw_data.len = sizeof raw, tp.raw_data.data = raw;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "tensor 'W': raw_data has 12 bytes, expected 16");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 1, four);
	tp.n_float_data = 3, tp.float_data = f;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "float_data has 3 values, expected 4");
	init_tp(&tp, ONNXRUN_DTYPE_COMPLEX64, 1, two);
	tp.n_float_data = 3, tp.float_data = f;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "float_data has 3 values, expected 4");
	init_tp(&tp, ONNXRUN_DTYPE_INT8, 1, four);
	tp.n_int32_data = 3, tp.int32_data = i;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "int32_data has 3 values, expected 4");
	init_tp(&tp, ONNXRUN_DTYPE_STRING, 1, two);
	tp.n_string_data = 1, tp.string_data = s;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "string_data has 1 values, expected 2");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 1, four);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "has no data");
	assert_null(t);
}

static void test_wrong_or_double_fields(void **state)
{
	static uint8_t raw[8];
	static float f[2];
	static int32_t i[2];
	Onnx__TensorProto tp;
	int64_t two[1] = { 2 };
	struct onnxrun_tensor *t = NULL;
	(void)state;
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 1, two);
	tp.has_raw_data = 1, tp.raw_data.len = sizeof raw, tp.raw_data.data = raw;
	tp.n_float_data = 2, tp.float_data = f;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "has both raw_data and float_data");
	init_tp(&tp, ONNXRUN_DTYPE_INT64, 1, two);
	tp.n_int32_data = 2, tp.int32_data = i;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "int32_data cannot hold int64 values");
	init_tp(&tp, ONNXRUN_DTYPE_STRING, 1, two);
	tp.has_raw_data = 1, tp.raw_data.len = sizeof raw, tp.raw_data.data = raw;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "raw_data cannot hold strings");
	assert_null(t);
}

static void test_bad_dtype_and_dims(void **state)
{
	static uint8_t raw[4];
	Onnx__TensorProto tp;
	int64_t one[1] = { 1 }, neg[2] = { 2, -1 }, many[13] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	Onnx__TensorProto__Segment seg = ONNX__TENSOR_PROTO__SEGMENT__INIT;
	struct onnxrun_tensor *t = NULL;
	(void)state;
	init_tp(&tp, 99, 1, one);
	tp.name = (char *)"name";
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "tensor 'name': unknown data_type 99");
	init_tp(&tp, 0, 1, one);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "data_type is not set");
	init_tp(&tp, 17, 1, one);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_UNSUPPORTED, "data_type 17 (float8e4m3fn)");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 2, neg);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "dims[1] is negative (-1)");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 13, many);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_LIMIT, "rank 13");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 1, one);
	tp.has_raw_data = 1, tp.raw_data.len = sizeof raw, tp.raw_data.data = raw;
	tp.segment = &seg;
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_UNSUPPORTED, "segment");
	assert_null(t);
}

/* A huge tensor's check: the given status and text with a 64-bit size_t; a 32-bit size_t
 * cannot hold 2^62 bytes, so there the sizes fail first, as a LIMIT. */
#if SIZE_MAX > 0xffffffffu
#define HUGE_FAIL(expr, status, text) CHECK_FAIL(expr, status, text)
#else
#define HUGE_FAIL(expr, status, text)                                                              \
	CHECK_FAIL(expr, ONNXRUN_ERROR_LIMIT,                                                      \
	           "byte size of 1152921504606846976 float elements overflows (more than a 32-bit size_t holds)")
#endif

/* Huge dims with tiny data fail before the tensor is allocated. */
static void test_overflow_without_allocating(void **state)
{
	static uint8_t raw[4];
	static float f[1];
	Onnx__TensorProto tp;
	int64_t huge[3] = { 1 << 20, 1 << 20, 1 << 20 }; /* 2^60 floats: 4 EiB, no int64 overflow */
	int64_t over[2] = { INT64_MAX, 2 };
	int64_t bytes_over[1] = { (int64_t)1 << 62 }; /* 2^62 complex128 = 2^66 bytes */
	struct onnxrun_tensor *t = NULL;
	(void)state;
	counts.largest = 0;
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 3, huge);
	tp.has_raw_data = 1, tp.raw_data.len = sizeof raw, tp.raw_data.data = raw;
	HUGE_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "raw_data has 4 bytes, expected 4611686018427387904");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 3, huge);
	tp.n_float_data = 1, tp.float_data = f;
	HUGE_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_INVALID_MODEL, "float_data has 1 values");
	init_tp(&tp, ONNXRUN_DTYPE_FLOAT, 2, over);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_LIMIT, "element count overflows");
	init_tp(&tp, ONNXRUN_DTYPE_COMPLEX128, 1, bytes_over);
	CHECK_FAIL(decode(&tp, NULL, &t), ONNXRUN_ERROR_LIMIT, "byte size");
	assert_null(t);
	assert_true(counts.largest < 4096);
}

/* ---- external data ---- */

static void write_bytes(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

/* EXT_DIR/data.bin: 16 bytes of 0xaa then floats 1..4; EXT_DIR/sub/w.bin: floats 5..8;
 * EXT_DIR/inside.bin -> data.bin; EXT_DIR/escape.bin -> ../tp_outside.bin (outside).
 * The floats are written out as little-endian bytes: 1.0f = 0x3f800000, 2.0f = 0x40000000,
 * 3.0f = 0x40400000, 4.0f = 0x40800000, 5.0f = 0x40a00000, 6.0f = 0x40c00000,
 * 7.0f = 0x40e00000, 8.0f = 0x41000000, 9.0f = 0x41100000. */
static int setup_ext(void **state)
{
	uint8_t head[32];
	static const uint8_t vals[16] = { 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40 };
	static const uint8_t w[16] = { 0, 0, 0xa0, 0x40, 0, 0, 0xc0, 0x40, 0, 0, 0xe0, 0x40, 0, 0, 0, 0x41 };
	static const uint8_t out[16] = { 0, 0, 0x10, 0x41, 0, 0, 0x10, 0x41, 0, 0, 0x10, 0x41, 0, 0, 0x10, 0x41 };
	memset(head, 0xaa, 16);
	memcpy(head + 16, vals, sizeof vals);
	onnxrun__os_mkdir(EXT_DIR);
	onnxrun__os_mkdir(EXT_DIR "/sub");
	write_bytes(EXT_DIR "/data.bin", head, sizeof head);
	write_bytes(EXT_DIR "/sub/w.bin", w, sizeof w);
	write_bytes(OUTSIDE_FILE, out, sizeof out);
#ifndef _WIN32 /* no symbolic links: creating one needs a privilege on Windows */
	unlink(EXT_DIR "/inside.bin");
	unlink(EXT_DIR "/escape.bin");
	if (symlink("data.bin", EXT_DIR "/inside.bin") || symlink("../tp_outside.bin", EXT_DIR "/escape.bin"))
		return 1;
#endif
	return setup(state);
}

struct ext {
	Onnx__TensorProto tp;
	int64_t dims[1];
	Onnx__StringStringEntryProto e[3];
	Onnx__StringStringEntryProto *ep[3];
};

/* A float tensor of n elements in external data at loc (offset/length NULL: absent). */
static void init_ext(struct ext *x, int64_t n, const char *loc, const char *offset, const char *length)
{
	const char *keys[3] = { "location", "offset", "length" }, *vals[3] = { loc, offset, length };
	x->dims[0] = n;
	init_tp(&x->tp, ONNXRUN_DTYPE_FLOAT, 1, x->dims);
	x->tp.has_data_location = 1;
	x->tp.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	x->tp.external_data = x->ep;
	for (int i = 0; i < 3; i++) {
		if (!vals[i])
			continue;
		onnx__string_string_entry_proto__init(&x->e[x->tp.n_external_data]);
		x->e[x->tp.n_external_data].key = (char *)keys[i];
		x->e[x->tp.n_external_data].value = (char *)vals[i];
		x->ep[x->tp.n_external_data] = &x->e[x->tp.n_external_data];
		x->tp.n_external_data++;
	}
}

static void check_ext_ok(const char *loc, const char *offset, const char *length, float first)
{
	struct ext x;
	struct onnxrun_tensor *t = NULL;
	init_ext(&x, 4, loc, offset, length);
	CHECK_OK(decode(&x.tp, EXT_DIR, &t));
	for (int i = 0; i < 4; i++)
		assert_true(((float *)t->data)[i] == first + (float)i);
	onnxrun_tensor_free(t);
}

static void check_ext_fail(const char *base, const char *loc, const char *offset, const char *length,
                           int64_t n, enum onnxrun_status want, const char *text)
{
	struct ext x;
	struct onnxrun_tensor *t = NULL;
	init_ext(&x, n, loc, offset, length);
	CHECK_FAIL(decode(&x.tp, base, &t), want, text);
	assert_null(t);
}

static void test_external_ok(void **state)
{
	(void)state;
	check_ext_ok("data.bin", "16", "16", 1);
	check_ext_ok("data.bin", "16", NULL, 1);
	check_ext_ok("sub/w.bin", NULL, NULL, 5);
	check_ext_ok("./sub//w.bin", "0", "16", 5);
#ifdef _WIN32
	/* backslashes separate folders too */
	check_ext_ok("sub\\w.bin", NULL, NULL, 5);
	check_ext_ok(".\\sub/\\w.bin", "0", "16", 5);
#else
	check_ext_ok("inside.bin", "16", NULL, 1);
#endif
}

/* External data big enough to be mapped (>= 64 KiB, 64-aligned offset): element i holds a
 * value built from i, its little-endian bytes written out with shifts. A little-endian host
 * maps it; a big-endian one copies (and swaps) every type wider than a byte. */
static void check_ext_big(enum onnxrun_dtype dtype, size_t es, const char *file)
{
	enum { N = 65536 };
	static uint8_t bytes[N * 4];
	struct ext x;
	struct onnxrun_tensor *t = NULL;
	char path[256], length[32];
	const bool le_host = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	for (uint32_t i = 0; i < N; i++) {
		/* float: i + 0.5 (exact); int16: i - 32768; uint8: i mod 251 */
		float f = (float)i + 0.5f;
		uint32_t v;
		if (dtype == ONNXRUN_DTYPE_FLOAT)
			memcpy(&v, &f, 4);
		else
			v = dtype == ONNXRUN_DTYPE_INT16 ? (uint32_t)(uint16_t)(int16_t)((int32_t)i - 32768) : i % 251;
		for (size_t b = 0; b < es; b++)
			bytes[i * es + b] = (uint8_t)(v >> (8 * b));
	}
	snprintf(path, sizeof path, "%s/%s", EXT_DIR, file);
	write_bytes(path, bytes, N * es);
	snprintf(length, sizeof length, "%zu", N * es);
	init_ext(&x, N, file, "0", length);
	x.tp.data_type = (int32_t)dtype;
	CHECK_OK(decode(&x.tp, EXT_DIR, &t));
	for (uint32_t i = 0; i < N; i++) {
		bool ok = dtype == ONNXRUN_DTYPE_FLOAT ? ((float *)t->data)[i] == (float)i + 0.5f
		        : dtype == ONNXRUN_DTYPE_INT16 ? ((int16_t *)t->data)[i] == (int16_t)((int32_t)i - 32768)
		                                       : ((uint8_t *)t->data)[i] == i % 251;
		if (!ok)
			fail_msg("%s element %u differs", onnxrun_dtype_name(dtype), i);
	}
	if ((t->map != NULL) != (le_host || es == 1))
		fail_msg("%s external data is %smapped on a %s-endian host", onnxrun_dtype_name(dtype),
		         t->map ? "" : "not ", le_host ? "little" : "big");
	onnxrun_tensor_free(t);
}

static void test_external_big(void **state)
{
	(void)state;
	check_ext_big(ONNXRUN_DTYPE_FLOAT, 4, "big_f32.bin");
	check_ext_big(ONNXRUN_DTYPE_INT16, 2, "big_i16.bin");
	check_ext_big(ONNXRUN_DTYPE_UINT8, 1, "big_u8.bin");
}

static void test_external_rejected(void **state)
{
	const enum onnxrun_status bad = ONNXRUN_ERROR_INVALID_MODEL;
	(void)state;
	check_ext_fail(NULL, "data.bin", "16", NULL, 4, bad, "no folder");
	check_ext_fail(EXT_DIR, "/etc/passwd", NULL, NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, EXT_DIR "/data.bin", "16", NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, "../tp_outside.bin", NULL, NULL, 4, bad, "leaves the model's folder");
	check_ext_fail(EXT_DIR, "sub/../data.bin", "16", NULL, 4, bad, "leaves the model's folder");
	check_ext_fail(EXT_DIR, "sub/..", NULL, NULL, 4, bad, "leaves the model's folder");
#ifdef _WIN32
	/* drive letters make a location absolute; ".." between backslashes leaves the folder */
	check_ext_fail(EXT_DIR, "C:\\Windows\\win.ini", NULL, NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, "c:data.bin", "16", NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, "Z:/data.bin", "16", NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, "\\data.bin", "16", NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, "\\\\server\\share\\data.bin", "16", NULL, 4, bad, "is absolute");
	check_ext_fail(EXT_DIR, "..\\tp_outside.bin", NULL, NULL, 4, bad, "leaves the model's folder");
	check_ext_fail(EXT_DIR, "sub\\..\\data.bin", "16", NULL, 4, bad, "leaves the model's folder");
	check_ext_fail(EXT_DIR, "sub/..\\..\\tp_outside.bin", NULL, NULL, 4, bad, "leaves the model's folder");
	check_ext_fail(EXT_DIR, "sub\\..", NULL, NULL, 4, bad, "leaves the model's folder");
#else
	check_ext_fail(EXT_DIR, "escape.bin", NULL, NULL, 4, bad, "resolves outside the model's folder");
#endif
	check_ext_fail(EXT_DIR, NULL, "16", NULL, 4, bad, "no location");
	check_ext_fail(EXT_DIR, "data.bin", "1x", NULL, 4, bad, "offset '1x' is not a non-negative integer");
	check_ext_fail(EXT_DIR, "data.bin", "-1", NULL, 4, bad, "offset '-1'");
	check_ext_fail(EXT_DIR, "nope.bin", NULL, NULL, 4, ONNXRUN_ERROR_IO, "No such file or directory");
	check_ext_fail(EXT_DIR, "sub", NULL, NULL, 4, ONNXRUN_ERROR_IO, "not a regular file");
}

static void test_external_ranges(void **state)
{
	const enum onnxrun_status bad = ONNXRUN_ERROR_INVALID_MODEL;
	(void)state;
	check_ext_fail(EXT_DIR, "data.bin", "100", NULL, 4, bad, "offset 100 is beyond the end");
	check_ext_fail(EXT_DIR, "data.bin", "16", "32", 4, bad, "offset 16 + length 32 is beyond the end");
	check_ext_fail(EXT_DIR, "data.bin", "0", "32", 4, bad, "external data has 32 bytes, expected 16");
	check_ext_fail(EXT_DIR, "data.bin", NULL, NULL, 4, bad, "external data has 32 bytes, expected 16");
	/* size checks happen before the tensor is allocated */
	counts.largest = 0;
#if SIZE_MAX > 0xffffffffu
	check_ext_fail(EXT_DIR, "data.bin", NULL, NULL, (int64_t)1 << 60, bad, "external data has 32 bytes");
#else
	check_ext_fail(EXT_DIR, "data.bin", NULL, NULL, (int64_t)1 << 60, ONNXRUN_ERROR_LIMIT,
	               "more than a 32-bit size_t holds");
#endif
	assert_true(counts.largest < 4096);
}

static void test_external_conflicts(void **state)
{
	static uint8_t raw[16];
	struct ext x;
	struct onnxrun_tensor *t = NULL;
	uint8_t *buf;
	size_t size;
	(void)state;
	init_ext(&x, 4, "data.bin", "16", NULL);
	x.tp.has_raw_data = 1, x.tp.raw_data.len = sizeof raw, x.tp.raw_data.data = raw;
	CHECK_FAIL(decode(&x.tp, EXT_DIR, &t), ONNXRUN_ERROR_INVALID_MODEL, "both external data and raw_data");
	init_ext(&x, 4, "data.bin", "16", NULL);
	x.tp.data_type = ONNXRUN_DTYPE_STRING;
	CHECK_FAIL(decode(&x.tp, EXT_DIR, &t), ONNXRUN_ERROR_INVALID_MODEL, "string tensors cannot use external data");
	/* a .pb tensor file has no folder: external data is refused */
	init_ext(&x, 4, "data.bin", "16", NULL);
	size = onnx__tensor_proto__get_packed_size(&x.tp);
	buf = malloc(size);
	onnx__tensor_proto__pack(&x.tp, buf);
	CHECK_FAIL(onnxrun__tensor_pb_decode(env, buf, size, &err, &t), ONNXRUN_ERROR_INVALID_INPUT,
	           "external data is not allowed");
	free(buf);
	assert_null(t);
}

/* ---- encoding and .pb files ---- */

/* A [2,3] tensor of dtype filled with a byte pattern (bools 0/1, strings with a zero byte). */
static struct onnxrun_tensor *make_pattern(enum onnxrun_dtype dtype, int32_t rank, const int64_t *dims)
{
	struct onnxrun_tensor *t = NULL;
	assert_int_equal(onnxrun_tensor_create(env, dtype, rank, dims, &t), ONNXRUN_OK);
	if (dtype == ONNXRUN_DTYPE_STRING) {
		for (int64_t i = 0; i < t->numel; i++) {
			char s[8] = { 's', '\0', (char)('a' + i), 'z' };
			assert_int_equal(onnxrun_tensor_set_string(t, i, s, (size_t)(i % 4)), ONNXRUN_OK);
		}
	} else {
		for (size_t i = 0; i < t->nbytes; i++)
			((uint8_t *)t->data)[i] = dtype == ONNXRUN_DTYPE_BOOL ? (uint8_t)(i & 1) : (uint8_t)(i * 37 + dtype);
	}
	assert_int_equal(onnxrun_tensor_set_name(t, "rt"), ONNXRUN_OK);
	return t;
}

static void assert_same_tensor(const struct onnxrun_tensor *a, const struct onnxrun_tensor *b)
{
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->rank, b->rank);
	assert_memory_equal(a->dims, b->dims, sizeof a->dims[0] * (size_t)a->rank);
	assert_int_equal(a->numel, b->numel);
	assert_int_equal(a->nbytes, b->nbytes);
	assert_string_equal(onnxrun_tensor_name(a), onnxrun_tensor_name(b));
	if (a->dtype != ONNXRUN_DTYPE_STRING) {
		if (a->nbytes)
			assert_memory_equal(a->data, b->data, a->nbytes);
		return;
	}
	for (int64_t i = 0; i < a->numel; i++) {
		const struct onnxrun_string *x = a->data, *y = b->data;
		assert_int_equal(x[i].size, y[i].size);
		if (x[i].size)
			assert_memory_equal(x[i].data, y[i].data, x[i].size);
	}
}

/* Encodes, checks which field carries the data, decodes and compares. */
static void round_trip(const struct onnxrun_tensor *t)
{
	struct onnxrun__pb_allocator a;
	Onnx__TensorProto *tp;
	struct onnxrun_tensor *back = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	CHECK_OK(onnxrun__tensor_pb_encode(env, t, &err, &buf, &size));
	onnxrun__pb_allocator_init(&a, env);
	tp = onnx__tensor_proto__unpack(&a.base, size, buf);
	assert_non_null(tp);
	assert_int_equal(tp->data_type, t->dtype);
	assert_int_equal(tp->has_raw_data, t->dtype != ONNXRUN_DTYPE_STRING);
	assert_int_equal(tp->n_string_data, t->dtype == ONNXRUN_DTYPE_STRING ? (size_t)t->numel : 0);
	onnx__tensor_proto__free_unpacked(tp, &a.base);
	CHECK_OK(onnxrun__tensor_pb_decode(env, buf, size, &err, &back));
	assert_same_tensor(t, back);
	onnxrun_tensor_free(back);
	onnxrun__free(env, buf);
}

static void test_encode_round_trip_every_dtype(void **state)
{
	static const int64_t dims[2] = { 2, 3 }, empty[2] = { 3, 0 };
	(void)state;
	for (int dt = ONNXRUN_DTYPE_FLOAT; dt <= ONNXRUN_DTYPE_BFLOAT16; dt++) {
		struct onnxrun_tensor *t = make_pattern((enum onnxrun_dtype)dt, 2, dims);
		round_trip(t);
		onnxrun_tensor_free(t);
		t = make_pattern((enum onnxrun_dtype)dt, 0, NULL);
		round_trip(t);
		onnxrun_tensor_free(t);
		t = make_pattern((enum onnxrun_dtype)dt, 2, empty);
		round_trip(t);
		onnxrun_tensor_free(t);
	}
}

static void test_pb_files(void **state)
{
	static const int64_t dims[3] = { 2, 1, 2 };
	const char *path = ONNXRUN_TEST_TMP "/tp_rt.pb";
	struct onnxrun_tensor *t, *back = NULL;
	(void)state;
	for (int dt = ONNXRUN_DTYPE_FLOAT; dt <= ONNXRUN_DTYPE_BFLOAT16; dt++) {
		t = make_pattern((enum onnxrun_dtype)dt, 3, dims);
		assert_int_equal(onnxrun_tensor_save_pb(env, t, path), ONNXRUN_OK);
		assert_int_equal(onnxrun_tensor_load_pb(env, path, &back), ONNXRUN_OK);
		assert_same_tensor(t, back);
		onnxrun_tensor_free(back);
		onnxrun_tensor_free(t);
	}
	/* an unnamed tensor stays unnamed */
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_INT8, 0, NULL, &t), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_save_pb(env, t, path), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, path, &back), ONNXRUN_OK);
	assert_string_equal(onnxrun_tensor_name(back), "");
	onnxrun_tensor_free(back);
	onnxrun_tensor_free(t);
}

/* The ONNX backend test case: X of test_convtranspose is float [1,1,3,3] = 0..8. */
static void test_conformance_input(void **state)
{
	struct onnxrun_tensor *t = NULL;
	const float *v;
	(void)state;
	assert_int_equal(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_DATA "/test_convtranspose/test_data_set_0/input_0.pb", &t),
	                 ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_dtype(t), ONNXRUN_DTYPE_FLOAT);
	assert_int_equal(onnxrun_tensor_rank(t), 4);
	assert_int_equal(onnxrun_tensor_dims(t)[0], 1);
	assert_int_equal(onnxrun_tensor_dims(t)[1], 1);
	assert_int_equal(onnxrun_tensor_dims(t)[2], 3);
	assert_int_equal(onnxrun_tensor_dims(t)[3], 3);
	assert_string_equal(onnxrun_tensor_name(t), "X");
	v = onnxrun_tensor_data(t);
	for (int i = 0; i < 9; i++)
		assert_true(v[i] == (float)i);
	onnxrun_tensor_free(t);
}

static void test_public_errors(void **state)
{
	static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff };
	const char *bad_path = ONNXRUN_TEST_TMP "/tp_bad.pb";
	struct onnxrun_tensor *t = NULL;
	Onnx__TensorProto tp;
	int64_t one[1] = { 1 };
	uint8_t buf[64];
	size_t size;
	(void)state;
	assert_int_equal(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_TMP "/missing.pb", &t), ONNXRUN_ERROR_IO);
	assert_string_equal(onnxrun_env_error(env), "file '" ONNXRUN_TEST_TMP "/missing.pb': No such file or directory");
	assert_int_equal(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_TMP, &t), ONNXRUN_ERROR_IO);
	assert_non_null(strstr(onnxrun_env_error(env), "not a regular file"));
	assert_int_equal(onnxrun_tensor_decode_pb(env, garbage, sizeof garbage, &t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_string_equal(onnxrun_env_error(env), "not a valid TensorProto");
	/* a malformed tensor file is INVALID_INPUT, and the message names the file */
	init_tp(&tp, 99, 1, one);
	size = onnx__tensor_proto__pack(&tp, buf);
	write_bytes(bad_path, buf, size);
	assert_int_equal(onnxrun_tensor_load_pb(env, bad_path, &t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_string_equal(onnxrun_env_error(env),
	                    "file '" ONNXRUN_TEST_TMP "/tp_bad.pb': tensor 'T': unknown data_type 99");
	/* success clears the message */
	assert_int_equal(onnxrun_tensor_decode_pb(env, NULL, 0, &t), ONNXRUN_ERROR_INVALID_INPUT);
	assert_int_equal(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_DATA "/test_convtranspose/test_data_set_0/input_0.pb", &t),
	                 ONNXRUN_OK);
	assert_string_equal(onnxrun_env_error(env), "");
	onnxrun_tensor_free(t);
	t = NULL;
	assert_int_equal(onnxrun_tensor_load_pb(NULL, bad_path, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_load_pb(env, NULL, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_load_pb(env, bad_path, NULL), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_decode_pb(env, NULL, 4, &t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_save_pb(env, NULL, bad_path), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_null(t);
}

/* protobuf-c allocates through the env: everything is given back after a decode. */
static void test_allocator_bridge(void **state)
{
	struct onnxrun_tensor *t = NULL;
	size_t live = counts.live, total = counts.total;
	(void)state;
	assert_int_equal(onnxrun_tensor_load_pb(env, ONNXRUN_TEST_DATA "/test_convtranspose/test_data_set_0/input_0.pb", &t),
	                 ONNXRUN_OK);
	assert_true(counts.total > total + 3);
	onnxrun_tensor_free(t);
	assert_int_equal(counts.live, live);
}

/* Fails allocation 1, 2, ... of op() until it succeeds: each failure must be OUT_OF_MEMORY
 * and leave nothing allocated. Returns the number of allocations op needs. */
static size_t fail_each_allocation(enum onnxrun_status (*op)(void *ctx), void *ctx)
{
	size_t live = counts.live;
	for (size_t n = 1;; n++) {
		enum onnxrun_status st;
		counts.fail_at = n;
		counts.seen = 0;
		st = op(ctx);
		counts.fail_at = 0;
		if (st == ONNXRUN_OK)
			return n - 1;
		if (st != ONNXRUN_ERROR_OUT_OF_MEMORY)
			fail_msg("allocation %zu failed: status %d (%s), expected out of memory", n, (int)st,
			         onnxrun_env_error(env)[0] ? onnxrun_env_error(env) : err.msg);
		assert_int_equal(counts.live, live);
	}
}

struct oom_case {
	const struct onnxrun_tensor *t;
	const uint8_t *buf;
	size_t size;
	const char *path;
};

static enum onnxrun_status oom_decode(void *ctx)
{
	struct oom_case *c = ctx;
	struct onnxrun_tensor *t = NULL;
	enum onnxrun_status st = onnxrun__tensor_pb_decode(env, c->buf, c->size, &err, &t);
	onnxrun_tensor_free(t);
	return st;
}

static enum onnxrun_status oom_encode(void *ctx)
{
	struct oom_case *c = ctx;
	uint8_t *buf = NULL;
	size_t size;
	enum onnxrun_status st = onnxrun__tensor_pb_encode(env, c->t, &err, &buf, &size);
	onnxrun__free(env, buf);
	return st;
}

static enum onnxrun_status oom_files(void *ctx)
{
	struct oom_case *c = ctx;
	struct onnxrun_tensor *t = NULL;
	enum onnxrun_status st = onnxrun_tensor_save_pb(env, c->t, c->path);
	if (!st)
		st = onnxrun_tensor_load_pb(env, c->path, &t);
	onnxrun_tensor_free(t);
	return st;
}

static void test_out_of_memory(void **state)
{
	static const int64_t dims[2] = { 2, 3 };
	struct oom_case c = { NULL, NULL, 0, ONNXRUN_TEST_TMP "/tp_oom.pb" };
	uint8_t *buf = NULL;
	(void)state;
	for (int dt = ONNXRUN_DTYPE_FLOAT; dt <= ONNXRUN_DTYPE_STRING; dt += ONNXRUN_DTYPE_STRING - 1) {
		struct onnxrun_tensor *t = make_pattern((enum onnxrun_dtype)dt, 2, dims);
		c.t = t;
		CHECK_OK(onnxrun__tensor_pb_encode(env, t, &err, &buf, &c.size));
		c.buf = buf;
		assert_true(fail_each_allocation(oom_decode, &c) >= 3);
		assert_true(fail_each_allocation(oom_encode, &c) >= 1);
		assert_true(fail_each_allocation(oom_files, &c) >= 4);
		onnxrun__free(env, buf);
		onnxrun_tensor_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_raw_every_dtype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_half_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_bool_normalized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_typed_int32_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_typed_other_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings_with_zero_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scalar_and_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_mismatches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_or_double_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_dtype_and_dims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow_without_allocating, setup, teardown),
		cmocka_unit_test_setup_teardown(test_external_ok, setup_ext, teardown),
		cmocka_unit_test_setup_teardown(test_external_big, setup_ext, teardown),
		cmocka_unit_test_setup_teardown(test_external_rejected, setup_ext, teardown),
		cmocka_unit_test_setup_teardown(test_external_ranges, setup_ext, teardown),
		cmocka_unit_test_setup_teardown(test_external_conflicts, setup_ext, teardown),
		cmocka_unit_test_setup_teardown(test_encode_round_trip_every_dtype, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pb_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conformance_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_public_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allocator_bridge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_memory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
