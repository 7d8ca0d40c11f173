/*
 * test_arena.c - onnxrun_arena_init (alignment, reuse of freed blocks, running out, the
 * high-water mark) and the promise real-time and microcontroller users rely on: once a
 * session is prepared with its inputs set, onnxrun_session_run calls the env's allocator
 * zero times (the ops' scratch comes from the workspace prepare sized). Checked with a
 * counting allocator on every bundled model and every conformance case, at 1 and 2
 * threads, and on built float16, bfloat16, float64 and weights-as-input ConvTransposes
 * and a DepthToSpace of each element size (the other implementations of the op).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_builder.h"
#include "onnxrun.h"
#include "platform/platform.h"

/* ---- the arena itself ---- */

static _Alignas(64) unsigned char arena_buf[1 << 16];

static void test_arena_alignment_and_reuse(void **state)
{
	struct onnxrun_allocator a;
	void *p[64];
	size_t high;
	(void)state;
	assert_int_equal(onnxrun_arena_init(&a, arena_buf, 16), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_arena_init(NULL, arena_buf, sizeof arena_buf), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_arena_init(&a, arena_buf, sizeof arena_buf), ONNXRUN_OK);
	assert_int_equal(onnxrun_arena_used(&a), 0);
	for (int i = 0; i < 64; i++) {
		const size_t align = (size_t)1 << (i % 7); /* 1 .. 64 */
		p[i] = a.alloc(a.ctx, (size_t)(i * 13 + 1), align);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % align, 0);
		assert_true((unsigned char *)p[i] >= arena_buf &&
		            (unsigned char *)p[i] + i * 13 + 1 <= arena_buf + sizeof arena_buf);
		memset(p[i], i, (size_t)(i * 13 + 1));
	}
	for (int i = 0; i < 64; i++) /* no block overlaps another */
		for (int k = 0; k < i * 13 + 1; k++)
			assert_int_equal(((unsigned char *)p[i])[k], i);
	high = onnxrun_arena_high_water(&a);
	assert_true(high > 64 * 13 * 32 / 2 && high <= sizeof arena_buf);
	for (int i = 0; i < 64; i += 2)
		a.free(a.ctx, p[i], 0);
	for (int i = 1; i < 64; i += 2)
		a.free(a.ctx, p[i], 0);
	assert_int_equal(onnxrun_arena_used(&a), 0);
	/* everything merged back into one block: almost the whole buffer fits again */
	p[0] = a.alloc(a.ctx, sizeof arena_buf - 256, 8);
	assert_non_null(p[0]);
	assert_null(a.alloc(a.ctx, 512, 8)); /* and now it is full */
	a.free(a.ctx, p[0], 0);
	assert_true(onnxrun_arena_high_water(&a) >= sizeof arena_buf - 256);
	assert_int_equal(onnxrun_arena_high_water(NULL), 0);
}

/* A model loaded, prepared and run with every byte from an arena too small for it fails
 * cleanly with OUT_OF_MEMORY; with room it runs, and all is returned at the end. */
/* A block goes to the smallest free block it fits (best fit), not the first: a big hole
 * stays whole for a big block, so a model's small records fill the small holes its load
 * leaves and do not split the big ones (README, Microcontrollers: RAM beyond the tensors). */
static void test_arena_takes_the_smallest_hole(void **state)
{
	struct onnxrun_allocator a;
	unsigned char *big, *sep1, *small, *sep2, *p, *q;
	size_t high;
	(void)state;
	assert_int_equal(onnxrun_arena_init(&a, arena_buf, sizeof arena_buf), ONNXRUN_OK);
	big = a.alloc(a.ctx, 512, 8);   /* a hole of 512 B at the lowest address */
	sep1 = a.alloc(a.ctx, 16, 8);
	small = a.alloc(a.ctx, 48, 8);  /* a hole of 48 B above it */
	sep2 = a.alloc(a.ctx, 16, 8);
	assert_true(big && sep1 && small && sep2);
	a.free(a.ctx, big, 512);
	a.free(a.ctx, small, 48);
	high = onnxrun_arena_high_water(&a);
	p = a.alloc(a.ctx, 40, 8); /* fits both holes: takes the 48-byte one */
	assert_ptr_equal(p, small);
	q = a.alloc(a.ctx, 480, 8); /* and the big hole is still whole for this one */
	assert_ptr_equal(q, big);
	assert_int_equal(onnxrun_arena_high_water(&a), high);
}

static void test_arena_runs_a_model(void **state)
{
	static _Alignas(64) unsigned char big[4 << 20];
	struct onnxrun_allocator a;
	struct onnxrun_env *env;
	struct onnxrun_model *m = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *x = NULL;
	(void)state;
	assert_int_equal(onnxrun_arena_init(&a, big, 20000), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, ONNXRUN_MODELS_DIR "/upsampler/model.onnx", &m),
	                 ONNXRUN_ERROR_OUT_OF_MEMORY);
	onnxrun_env_free(env);
	assert_int_equal(onnxrun_arena_used(&a), 0);

	assert_int_equal(onnxrun_arena_init(&a, big, sizeof big), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, ONNXRUN_MODELS_DIR "/upsampler/model.onnx", &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0/input_0.pb", &x),
	                 ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	/* the output alone is 192 KiB */
	assert_true(onnxrun_arena_high_water(&a) > 3 * 128 * 128 * 4);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	assert_int_equal(onnxrun_arena_used(&a), 0);
}

/* A decoded .pb tensor keeps the parse's raw_data block as its data: the arena then never
 * holds two copies of the elements (a copy would leave a hole of their size behind the
 * tensor, which later larger blocks cannot use). */
static void test_decoded_tensor_takes_the_parsed_block(void **state)
{
	static _Alignas(64) unsigned char buf[1 << 16];
	struct onnxrun_allocator a;
	struct onnxrun_env *env;
	struct onnxrun_tensor *x = NULL;
	FILE *f = fopen(ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0/input_0.pb", "rb");
	static unsigned char pb[1 << 15];
	size_t n, env_high;
	(void)state;
	assert_non_null(f);
	n = fread(pb, 1, sizeof pb, f);
	fclose(f);
	assert_int_equal(onnxrun_arena_init(&a, buf, sizeof buf), ONNXRUN_OK);
	assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
	env_high = onnxrun_arena_high_water(&a);
	assert_int_equal(onnxrun_tensor_decode_pb(env, pb, n, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_nbytes(x), 3 * 32 * 32 * 4);
	/* the elements once, plus the message's small blocks and headers */
	assert_true(onnxrun_arena_high_water(&a) - env_high < onnxrun_tensor_nbytes(x) + 4096);
	onnxrun_tensor_free(x);
	onnxrun_env_free(env);
	assert_int_equal(onnxrun_arena_used(&a), 0);
}

/* ---- zero allocations in a run ---- */

struct counting {
	long allocs, frees;
};

static void *counting_alloc(void *ctx, size_t size, size_t align)
{
	struct counting *c = ctx;
	void *p = NULL;
	c->allocs++;
	if (!(p = onnxrun__os_aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1)))
		return NULL;
	return p;
}

static void counting_free(void *ctx, void *ptr, size_t size)
{
	struct counting *c = ctx;
	(void)size;
	c->frees++;
	onnxrun__os_aligned_free(ptr);
}

static char built_label[64] = "built model";

/* Loads the model, sets input_<i>.pb of the data folder, prepares, and runs twice at each
 * of 1 and 2 threads: the allocator must see no call during any run. Returns the runs. */
static int check_runs_allocate_nothing(const char *model_path, const void *model_bytes, size_t model_size,
                                       const char *data_dir, struct onnxrun_tensor *const *inputs, size_t n_in)
{
	struct counting c = { 0, 0 };
	struct onnxrun_allocator a = { &c, counting_alloc, counting_free };
	struct onnxrun_env *env;
	struct onnxrun_model *m = NULL;
	struct onnxrun_tensor *loaded[8] = { NULL };
	int runs = 0;
	assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
	if (model_path)
		assert_int_equal(onnxrun_model_load_file(env, model_path, &m), ONNXRUN_OK);
	else
		assert_int_equal(onnxrun_model_load_buffer(env, model_bytes, model_size, NULL, &m), ONNXRUN_OK);
	if (data_dir) {
		n_in = onnxrun_model_input_count(m);
		assert_true(n_in <= 8);
		for (size_t i = 0; i < n_in; i++) {
			char path[1024];
			snprintf(path, sizeof path, "%s/input_%zu.pb", data_dir, i);
			assert_int_equal(onnxrun_tensor_load_pb(env, path, &loaded[i]), ONNXRUN_OK);
		}
		inputs = loaded;
	}
	for (int threads = 1; threads <= 2; threads++) {
		struct onnxrun_session *s;
		long before;
		assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(s, threads), ONNXRUN_OK);
		for (size_t i = 0; i < n_in; i++)
			assert_int_equal(onnxrun_session_set_input(s, i, inputs[i]), ONNXRUN_OK);
		if (onnxrun_session_prepare(s) != ONNXRUN_OK)
			fail_msg("%s: prepare: %s", model_path ? model_path : built_label, onnxrun_session_error(s));
		for (int r = 0; r < 2; r++) {
			before = c.allocs + c.frees;
			if (onnxrun_session_run(s) != ONNXRUN_OK)
				fail_msg("%s: run: %s", model_path ? model_path : built_label, onnxrun_session_error(s));
			if (c.allocs + c.frees != before)
				fail_msg("%s at %d threads, run %d: %ld allocator calls", model_path ? model_path : built_label,
				         threads, r, c.allocs + c.frees - before);
			runs++;
		}
		onnxrun_session_free(s);
	}
	for (size_t i = 0; i < 8; i++)
		onnxrun_tensor_free(loaded[i]);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	assert_int_equal(c.allocs, c.frees);
	return runs;
}

static int walk_cases(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int runs = 0;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char model[1024], data[1024];
		FILE *f;
		snprintf(model, sizeof model, "%s/%s/model.onnx", root, e->d_name);
		snprintf(data, sizeof data, "%s/%s/test_data_set_0", root, e->d_name);
		if (!(f = fopen(model, "rb")))
			continue;
		fclose(f);
		if (strstr(e->d_name, "external_data"))
			continue; /* needs its folder: covered by the loader's tests */
		runs += check_runs_allocate_nothing(model, NULL, 0, data, NULL, 0);
	}
	closedir(d);
	return runs;
}

static void test_bundled_models_run_without_allocating(void **state)
{
	(void)state;
	assert_true(walk_cases(ONNXRUN_MODELS_DIR) >= 4 * 5);
}

static void test_conformance_cases_run_without_allocating(void **state)
{
	(void)state;
	assert_true(walk_cases(ONNXRUN_TEST_DATA) >= 4 * 15);
}

/* ConvTranspose of one dtype: x [1,4,5,6], w [4,3,3,3] (group 1, stride 2, pads 1), as an
 * initializer or (w_input) a graph input; then DepthToSpace of the same dtype. */
static void run_built(int dtype, size_t esize, bool w_input)
{
	static const int64_t xd[4] = { 1, 4, 5, 6 }, wd[4] = { 4, 3, 3, 3 };
	unsigned char xbytes[120 * 8], wbytes[108 * 8];
	struct onnxrun_env *env;
	struct onnxrun_tensor *in[2] = { NULL, NULL };
	Onnx__ModelProto *m = mb_model(10);
	Onnx__TensorProto *w;
	Onnx__NodeProto *n;
	uint8_t *bytes;
	size_t size;
	for (size_t i = 0; i < sizeof xbytes; i++)
		xbytes[i] = (unsigned char)(i % 7 == 0 ? 0x3c : i % 5); /* small finite values of any float type */
	for (size_t i = 0; i < sizeof wbytes; i++)
		wbytes[i] = (unsigned char)(i % 7 == 0 ? 0x3c : i % 3);
	mb_opset(m, "", 22); /* ConvTranspose-22 takes bfloat16 */
	mb_input(m, "x", dtype, "1,4,5,6");
	if (w_input) {
		mb_input(m, "w", dtype, "4,3,3,3");
	} else {
		w = mb_tensor("w", dtype, 4, wd);
		mb_tensor_raw(w, wbytes, 108 * esize);
		mb_add_initializer(m, w);
	}
	mb_output(m, "y", dtype, NULL);
	n = mb_node(m, "up", "ConvTranspose", "", "x,w", "t");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	mb_attr_ints(n, "pads", MB_INTS(1, 1, 1, 1));
	n = mb_node(m, "d2s", "DepthToSpace", "", "t", "y");
	mb_attr_int(n, "blocksize", 1);
	bytes = mb_pack(m, &size);
	snprintf(built_label, sizeof built_label, "ConvTranspose dtype %d%s", dtype, w_input ? ", w an input" : "");
	print_message("%s\n", built_label);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_wrap(env, (enum onnxrun_dtype)dtype, 4, xd, xbytes, 120 * esize, &in[0]),
	                 ONNXRUN_OK);
	if (w_input)
		assert_int_equal(onnxrun_tensor_wrap(env, (enum onnxrun_dtype)dtype, 4, wd, wbytes, 108 * esize, &in[1]),
		                 ONNXRUN_OK);
	check_runs_allocate_nothing(NULL, bytes, size, NULL, in, w_input ? 2 : 1);
	onnxrun_tensor_free(in[0]);
	onnxrun_tensor_free(in[1]);
	onnxrun_env_free(env);
	free(bytes);
	mb_free(m);
}

static void test_every_dtype_runs_without_allocating(void **state)
{
	(void)state;
	run_built(MB_FLOAT, 4, false);
	run_built(MB_FLOAT, 4, true);
	run_built(MB_FLOAT16, 2, false);
	run_built(MB_BFLOAT16, 2, false);
	run_built(MB_DOUBLE, 8, false);
	run_built(MB_DOUBLE, 8, true);
	run_built(MB_FLOAT16, 2, true);
}

/* ---- borrowed model bytes ---- */

struct live {
	long long bytes;
};

static void *live_alloc(void *ctx, size_t size, size_t align)
{
	struct live *l = ctx;
	void *p = NULL;
	if (!(p = onnxrun__os_aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1)))
		return NULL;
	l->bytes += (long long)size;
	return p;
}

static void live_free(void *ctx, void *ptr, size_t size)
{
	struct live *l = ctx;
	l->bytes -= (long long)size;
	onnxrun__os_aligned_free(ptr);
}

/* A float32 ConvTranspose with 64 KiB of weights: loaded borrowed, the weights are not in
 * the allocator's memory (read from the buffer), the outputs equal those of a copying load
 * bit for bit; at every offset of the buffer on hosts that read unaligned floats, at the
 * aligned one elsewhere. */
static void test_borrowed_load_reads_weights_in_place(void **state)
{
	static const int64_t xd[4] = { 1, 64, 4, 4 }, wd[4] = { 64, 32, 3, 3 };
	static float w[64 * 32 * 9], x[64 * 16];
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t;
	Onnx__NodeProto *n;
	uint8_t *bytes, *shifted;
	size_t size;
	(void)state;
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		w[i] = (float)((int)(i * 7919 % 201) - 100) / 128.0f;
	for (size_t i = 0; i < sizeof x / sizeof *x; i++)
		x[i] = (float)((int)(i * 104729 % 97) - 48) / 64.0f;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,64,4,4");
	t = mb_tensor("w", MB_FLOAT, 4, wd);
	mb_tensor_raw(t, w, sizeof w);
	mb_add_initializer(m, t);
	mb_output(m, "y", MB_FLOAT, NULL);
	n = mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	bytes = mb_pack(m, &size);
	mb_free(m);
	shifted = malloc(size + 8);
	assert_non_null(shifted);
	for (int offset = 0; offset < 4; offset++) {
		struct live l = { 0 };
		struct onnxrun_allocator a = { &l, live_alloc, live_free };
		struct onnxrun_env *env;
		struct onnxrun_model *copied, *borrowed;
		struct onnxrun_tensor *tx;
		long long after_copy, after_borrow;
		float y[2][32 * 9 * 9];
		memcpy(shifted + offset, bytes, size);
		assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
		assert_int_equal(onnxrun_model_load_buffer(env, shifted + offset, size, NULL, &copied), ONNXRUN_OK);
		after_copy = l.bytes;
		assert_int_equal(onnxrun_model_load_borrowed(env, shifted + offset, size, &borrowed), ONNXRUN_OK);
		after_borrow = l.bytes - after_copy;
		/* both keep the packed panels; the weights themselves are released either way */
		assert_true(after_borrow <= after_copy);
		assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, xd, x, sizeof x, &tx), ONNXRUN_OK);
		for (int k = 0; k < 2; k++) {
			struct onnxrun_session *s;
			const struct onnxrun_tensor *out;
			assert_int_equal(onnxrun_session_create(k ? borrowed : copied, &s), ONNXRUN_OK);
			assert_int_equal(onnxrun_session_set_input(s, 0, tx), ONNXRUN_OK);
			assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
			assert_int_equal(onnxrun_session_output(s, 0, &out), ONNXRUN_OK);
			assert_int_equal(onnxrun_tensor_nbytes(out), sizeof y[k]);
			memcpy(y[k], onnxrun_tensor_data(out), sizeof y[k]);
			onnxrun_session_free(s);
		}
		assert_memory_equal(y[0], y[1], sizeof y[0]);
		onnxrun_tensor_free(tx);
		onnxrun_model_free(borrowed);
		onnxrun_model_free(copied);
		onnxrun_env_free(env);
		assert_int_equal(l.bytes, 0);
	}
	free(shifted);
	free(bytes);
}

/* An initializer no op packs (DepthToSpace's input here, 64 KiB): the borrowed load keeps
 * none of its bytes, the copying one all. On a big-endian host the file's little-endian
 * floats must be swapped, so the borrowed load copies them too (as documented). */
static bool host_is_big_endian(void)
{
	const uint16_t one = 1;
	unsigned char first;
	memcpy(&first, &one, 1);
	return first == 0;
}

static void test_borrowed_load_keeps_no_copy(void **state)
{
	static const int64_t cd[4] = { 1, 64, 16, 16 };
	static float c[64 * 256];
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t;
	uint8_t *bytes, *shifted;
	size_t size;
	(void)state;
	for (size_t i = 0; i < sizeof c / sizeof *c; i++)
		c[i] = (float)i;
	mb_opset(m, "", 13);
	t = mb_tensor("c", MB_FLOAT, 4, cd);
	mb_tensor_raw(t, c, sizeof c);
	mb_add_initializer(m, t);
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_attr_int(mb_node(m, "d2s", "DepthToSpace", "", "c", "y"), "blocksize", 2);
	bytes = mb_pack(m, &size);
	mb_free(m);
	shifted = malloc(size + 8);
	assert_non_null(shifted);
	for (int offset = 0; offset < 4; offset++) {
		struct live l = { 0 };
		struct onnxrun_allocator a = { &l, live_alloc, live_free };
		struct onnxrun_env *env;
		struct onnxrun_model *copied, *borrowed;
		long long after_copy, after_borrow;
		memcpy(shifted + offset, bytes, size);
		assert_int_equal(onnxrun_env_create(&a, &env), ONNXRUN_OK);
		assert_int_equal(onnxrun_model_load_buffer(env, shifted + offset, size, NULL, &copied), ONNXRUN_OK);
		after_copy = l.bytes;
		assert_int_equal(onnxrun_model_load_borrowed(env, shifted + offset, size, &borrowed), ONNXRUN_OK);
		after_borrow = l.bytes - after_copy;
		print_message("offset %d: copying load keeps %lld bytes, borrowed %lld\n", offset, after_copy,
		              after_borrow);
		if (host_is_big_endian())
			assert_true(after_borrow >= (long long)sizeof c);
		else
			assert_true(after_copy - after_borrow >= (long long)sizeof c);
		onnxrun_model_free(borrowed);
		onnxrun_model_free(copied);
		onnxrun_env_free(env);
	}
	free(shifted);
	free(bytes);
}

/* External data needs a folder: a borrowed load has none. */
static void test_borrowed_load_refuses_external_data(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m = NULL;
	FILE *f = fopen(ONNXRUN_MODELS_DIR "/external_data/model.onnx", "rb");
	unsigned char buf[1 << 16];
	size_t n;
	(void)state;
	assert_non_null(f);
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_borrowed(env, buf, n, &m), ONNXRUN_ERROR_INVALID_MODEL);
	assert_non_null(strstr(onnxrun_env_error(env), "external data"));
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_alignment_and_reuse),
		cmocka_unit_test(test_arena_takes_the_smallest_hole),
		cmocka_unit_test(test_arena_runs_a_model),
		cmocka_unit_test(test_decoded_tensor_takes_the_parsed_block),
		cmocka_unit_test(test_bundled_models_run_without_allocating),
		cmocka_unit_test(test_conformance_cases_run_without_allocating),
		cmocka_unit_test(test_every_dtype_runs_without_allocating),
		cmocka_unit_test(test_borrowed_load_reads_weights_in_place),
		cmocka_unit_test(test_borrowed_load_keeps_no_copy),
		cmocka_unit_test(test_borrowed_load_refuses_external_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
