/*
 * test_bind_output.c - outputs written into caller memory (onnxrun_session_set_output):
 * every example model and ONNX backend case, each data set, with and without bound
 * outputs at 1 and 2 threads, same bits, and the session's own output memory not planned;
 * buffers not 64-byte aligned, large outputs (non-temporal store paths); outputs that are
 * graph inputs, initializers or the same value twice; wrong dtype, shape, index and overlap
 * rejected with clear messages; rebinding between runs; the memory cap.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "platform/platform.h"
#include "model_builder.h"
#include "test_scale.h"
#include "onnxrun.h"

/* A caller buffer: 64-byte aligned allocation, data at `offset` bytes into it, the rest
 * filled with 0xA5 so that a write outside the tensor would show. */
struct buffer {
	unsigned char *base;
	size_t offset, nbytes;
	struct onnxrun_tensor *t;
};

static void buffer_make(struct onnxrun_env *env, struct buffer *b, enum onnxrun_dtype dtype, int32_t rank,
                        const int64_t *dims, size_t offset)
{
	size_t n = onnxrun_dtype_size(dtype);
	for (int32_t i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	b->offset = offset;
	b->nbytes = n;
	b->base = onnxrun__os_aligned_alloc(64, (n + offset + 64 + 63) / 64 * 64);
	assert_non_null(b->base);
	memset(b->base, 0xA5, n + offset + 64);
	assert_int_equal(onnxrun_tensor_wrap(env, dtype, rank, dims, b->base + offset, n, &b->t), ONNXRUN_OK);
}

/* The 0xA5 guard bytes around the tensor are intact. */
static void buffer_check_guards(const struct buffer *b, const char *where)
{
	for (size_t i = 0; i < b->offset; i++)
		if (b->base[i] != 0xA5)
			fail_msg("%s: byte %zu before the bound tensor was written", where, b->offset - i);
	for (size_t i = 0; i < 64; i++)
		if (b->base[b->offset + b->nbytes + i] != 0xA5)
			fail_msg("%s: byte %zu after the bound tensor was written", where, i);
}

static void buffer_free(struct buffer *b)
{
	onnxrun_tensor_free(b->t);
	onnxrun__os_aligned_free(b->base);
	memset(b, 0, sizeof *b);
}

static int is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Whether output i of m is computed by a node, and is the first output index with its
 * value (then the node writes into what is bound there). */
static int written_directly(const struct onnxrun_model *m, size_t i)
{
	struct onnxrun_value_info oi, oj;
	int produced = 0;
	assert_int_equal(onnxrun_model_output_info(m, i, &oi), ONNXRUN_OK);
	for (size_t j = 0; j < i; j++) {
		assert_int_equal(onnxrun_model_output_info(m, j, &oj), ONNXRUN_OK);
		if (!strcmp(oi.name, oj.name))
			return 0;
	}
	for (size_t k = 0; k < onnxrun_model_node_count(m) && !produced; k++) {
		struct onnxrun_node_info n;
		assert_int_equal(onnxrun_model_node_info(m, k, &n), ONNXRUN_OK);
		for (size_t o = 0; o < n.output_count; o++)
			produced |= !strcmp(n.outputs[o], oi.name);
	}
	return produced;
}

/* Runs every data set of the case in `dir` twice per thread count, in a session with
 * outputs bound to caller buffers (odd outputs at an offset of one element from 64-byte
 * alignment) and in one without: the bytes must be equal, the bound session must return
 * the caller's tensors and plan exactly their bytes less; unbinding restores the session's
 * own outputs. Returns the data sets run. */
static int check_case(const char *dir)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	char path[4096];
	int sets = 0;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (onnxrun_model_load_file(env, path, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	for (int threads = 1; threads <= 2; threads++) {
		struct onnxrun_session *su, *sb;
		assert_int_equal(onnxrun_session_create(m, &su), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_create(m, &sb), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(su, threads), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(sb, threads), ONNXRUN_OK);
		for (int k = 0;; k++) {
			struct onnxrun_tensor *in[8] = { 0 };
			struct buffer out[8];
			const size_t n_in = onnxrun_model_input_count(m), n_out = onnxrun_model_output_count(m);
			uint64_t planned_u, planned_b, direct = 0;
			char set[4200];
			snprintf(set, sizeof set, "%s/test_data_set_%d", dir, k);
			if (!is_dir(set))
				break;
			assert_true(n_in <= 8 && n_out <= 8);
			for (size_t i = 0; i < n_in; i++) {
				snprintf(path, sizeof path, "%s/input_%zu.pb", set, i);
				assert_int_equal(onnxrun_tensor_load_pb(env, path, &in[i]), ONNXRUN_OK);
				assert_int_equal(onnxrun_session_set_input(su, i, in[i]), ONNXRUN_OK);
				assert_int_equal(onnxrun_session_set_input(sb, i, in[i]), ONNXRUN_OK);
			}
			if (onnxrun_session_run(su) != ONNXRUN_OK)
				fail_msg("%s: %s", set, onnxrun_session_error(su));
			assert_int_equal(onnxrun_session_planned_bytes(su, &planned_u), ONNXRUN_OK);
			for (size_t o = 0; o < n_out; o++) {
				const struct onnxrun_tensor *y;
				assert_int_equal(onnxrun_session_output(su, o, &y), ONNXRUN_OK);
				buffer_make(env, &out[o], onnxrun_tensor_dtype(y), onnxrun_tensor_rank(y),
				            onnxrun_tensor_dims(y), o % 2 ? onnxrun_dtype_size(onnxrun_tensor_dtype(y)) : 0);
				if (onnxrun_session_set_output(sb, o, out[o].t) != ONNXRUN_OK)
					fail_msg("%s output %zu: %s", set, o, onnxrun_session_error(sb));
				if (written_directly(m, o))
					direct += onnxrun_tensor_nbytes(y);
			}
			if (onnxrun_session_run(sb) != ONNXRUN_OK)
				fail_msg("%s: %s", set, onnxrun_session_error(sb));
			assert_int_equal(onnxrun_session_planned_bytes(sb, &planned_b), ONNXRUN_OK);
			assert_int_equal(planned_u - planned_b, direct);
			for (size_t o = 0; o < n_out; o++) {
				const struct onnxrun_tensor *yu, *yb;
				assert_int_equal(onnxrun_session_output(su, o, &yu), ONNXRUN_OK);
				assert_int_equal(onnxrun_session_output(sb, o, &yb), ONNXRUN_OK);
				assert_ptr_equal(yb, out[o].t);
				if (memcmp(onnxrun_tensor_data(yu), onnxrun_tensor_data(yb), onnxrun_tensor_nbytes(yu)))
					fail_msg("%s output %zu, %d threads: bound and unbound outputs differ", set, o, threads);
				buffer_check_guards(&out[o], set);
			}
			/* unbound again: the session's own outputs, equal too */
			for (size_t o = 0; o < n_out; o++)
				assert_int_equal(onnxrun_session_set_output(sb, o, NULL), ONNXRUN_OK);
			assert_int_equal(onnxrun_session_run(sb), ONNXRUN_OK);
			for (size_t o = 0; o < n_out; o++) {
				const struct onnxrun_tensor *yu, *yb;
				assert_int_equal(onnxrun_session_output(su, o, &yu), ONNXRUN_OK);
				assert_int_equal(onnxrun_session_output(sb, o, &yb), ONNXRUN_OK);
				assert_ptr_not_equal(yb, out[o].t);
				assert_memory_equal(onnxrun_tensor_data(yu), onnxrun_tensor_data(yb), onnxrun_tensor_nbytes(yu));
				buffer_free(&out[o]);
			}
			for (size_t i = 0; i < n_in; i++)
				onnxrun_tensor_free(in[i]);
			sets++;
		}
		onnxrun_session_free(su);
		onnxrun_session_free(sb);
	}
	onnxrun_model_free(m);
	onnxrun_env_free(env);
	return sets;
}

/* Every case folder directly under root; returns the number of cases. */
static int check_tree(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char dir[4096], model[4200];
	int cases = 0;
	struct stat sb;
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
		snprintf(model, sizeof model, "%s/model.onnx", dir);
		if (stat(model, &sb) != 0)
			continue;
		assert_true(check_case(dir) >= 2); /* at least one set at each thread count */
		cases++;
	}
	closedir(d);
	return cases;
}

static void test_example_models(void **state)
{
	(void)state;
	assert_true(check_tree(ONNXRUN_MODELS_DIR) >= 6);
}

static void test_backend_cases(void **state)
{
	(void)state;
	assert_int_equal(check_tree(ONNXRUN_TEST_DATA), 16);
}

/* x [1,32,64,64] -> ConvTranspose 'up' (32->128, k4 s2 p1) -> y [1,128,128,128] (8 MiB) ->
 * DepthToSpace 'd2s' b2 CRD -> z [1,32,256,256] (8 MiB); outputs y and z: sizes that take
 * the non-temporal store paths, with y also read by the next node. */
static void test_large_outputs(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *su, *sb;
	struct onnxrun_tensor *x;
	const int64_t wd[4] = { 32, 128, 4, 4 }, xd[4] = { 1, 32, 64, 64 };
	const int64_t yd[4] = { 1, 128, 128, 128 }, zd[4] = { 1, 32, 256, 256 };
	float *w = malloc(32 * 128 * 16 * sizeof *w);
	uint32_t seed = 3;
	Onnx__ModelProto *mp = mb_model(8);
	Onnx__NodeProto *n;
	size_t size;
	uint8_t *bytes;
	(void)state;
	for (int i = 0; i < 32 * 128 * 16; i++) {
		seed = seed * 1664525u + 1013904223u;
		w[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
	}
	mb_opset(mp, "", 13);
	mb_input(mp, "x", MB_FLOAT, "1,32,64,64");
	mb_output(mp, "y", MB_FLOAT, "1,128,128,128");
	mb_output(mp, "z", MB_FLOAT, "1,32,256,256");
	mb_initializer_f32(mp, "w", 4, wd, w);
	n = mb_node(mp, "up", "ConvTranspose", NULL, "x,w", "y");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	mb_attr_ints(n, "pads", MB_INTS(1, 1, 1, 1));
	n = mb_node(mp, "d2s", "DepthToSpace", NULL, "y", "z");
	mb_attr_int(n, "blocksize", 2);
	mb_attr_string(n, "mode", "CRD");
	bytes = mb_finish(mp, &size);
	free(w);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_buffer(env, bytes, size, NULL, &m), ONNXRUN_OK);
	free(bytes);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	for (int64_t i = 0; i < onnxrun_tensor_numel(x); i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)((i * 29) % 97) / 97.0f - 0.5f;
	/* Combinations (2 threads, offset 4) first: at a reduced ONNXRUN_RANDOM_SCALE (emulated
	 * targets, where these 0.5 GFLOP runs take a minute each) only the first is kept. */
	for (int c = 0; c < 4; c++) {
		const int threads = 2 - c / 2;
		const size_t offset = c % 2 ? 0 : 4;
		struct buffer by, bz;
		const struct onnxrun_tensor *yu, *zu;
		if (!th_scaled_keep((size_t)c))
			continue;
		assert_int_equal(onnxrun_session_create(m, &su), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_create(m, &sb), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(su, threads), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_threads(sb, threads), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(su, 0, x), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(sb, 0, x), ONNXRUN_OK);
		buffer_make(env, &by, ONNXRUN_DTYPE_FLOAT, 4, yd, offset);
		buffer_make(env, &bz, ONNXRUN_DTYPE_FLOAT, 4, zd, offset);
		assert_int_equal(onnxrun_session_set_output(sb, 0, by.t), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_output(sb, 1, bz.t), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(su), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(sb), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_output(su, 0, &yu), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_output(su, 1, &zu), ONNXRUN_OK);
		assert_memory_equal(onnxrun_tensor_data(yu), onnxrun_tensor_data(by.t), by.nbytes);
		assert_memory_equal(onnxrun_tensor_data(zu), onnxrun_tensor_data(bz.t), bz.nbytes);
		buffer_check_guards(&by, "y");
		buffer_check_guards(&bz, "z");
		onnxrun_session_free(su);
		onnxrun_session_free(sb);
		buffer_free(&by);
		buffer_free(&bz);
	}
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

#define UPSAMPLER ONNXRUN_MODELS_DIR "/upsampler/model.onnx"
#define UPSAMPLER_IN ONNXRUN_MODELS_DIR "/upsampler/test_data_set_0/input_0.pb"
#define BATCH ONNXRUN_MODELS_DIR "/symbolic_batch/model.onnx"

/* Wrong dtype, shape, index or type rejected when bound, with the output named; a
 * symbolic output checked at prepare and run; NULL arguments. */
static void test_rejected(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x, *str;
	struct buffer b;
	const int64_t small[4] = { 1, 3, 64, 64 }, right[4] = { 1, 3, 128, 128 }, one = 1;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	buffer_make(env, &b, ONNXRUN_DTYPE_FLOAT, 4, small, 0);
	assert_int_equal(onnxrun_session_set_output(s, 0, b.t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_session_error(s),
	                    "output 'upscaled' (index 0): the bound tensor is float [1,3,64,64] but the output is "
	                    "float [1,3,128,128] (onnxrun_session_set_output)");
	buffer_free(&b);
	buffer_make(env, &b, ONNXRUN_DTYPE_DOUBLE, 4, right, 0);
	assert_int_equal(onnxrun_session_set_output(s, 0, b.t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_session_error(s),
	                    "output 'upscaled' (index 0): the bound tensor is double [1,3,128,128] but the output is "
	                    "float [1,3,128,128] (onnxrun_session_set_output)");
	buffer_free(&b);
	buffer_make(env, &b, ONNXRUN_DTYPE_FLOAT, 3, right + 1, 0);
	assert_int_equal(onnxrun_session_set_output(s, 0, b.t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_non_null(strstr(onnxrun_session_error(s), "float [3,128,128] but the output is float [1,3,128,128]"));
	buffer_free(&b);
	buffer_make(env, &b, ONNXRUN_DTYPE_FLOAT, 4, right, 0);
	assert_int_equal(onnxrun_session_set_output(s, 1, b.t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_session_error(s), "output index 1 is out of range (1 outputs)");
	assert_int_equal(onnxrun_session_set_output(NULL, 0, b.t), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_STRING, 1, &one, &str), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_output(s, 0, str), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_session_error(s), "output 'upscaled' (index 0): string outputs cannot be bound");
	onnxrun_tensor_free(str);
	/* the right one is accepted and used */
	assert_int_equal(onnxrun_session_set_output(s, 0, b.t), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	buffer_check_guards(&b, "upsampler");
	onnxrun_session_free(s);
	buffer_free(&b);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);

	/* symbolic batch: [N,3,32,32] accepts [2,3,32,32] when bound; a feed with N = 1 makes
	 * prepare and run fail, N = 2 runs */
	{
		const int64_t out2[4] = { 2, 3, 32, 32 }, out1[4] = { 1, 3, 32, 32 };
		const int64_t in1[4] = { 1, 3, 8, 8 }, in2[4] = { 2, 3, 8, 8 };
		struct onnxrun_tensor *x1, *x2;
		struct buffer b1;
		assert_int_equal(onnxrun_model_load_file(env, BATCH, &m), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
		assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, in1, &x1), ONNXRUN_OK);
		assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, in2, &x2), ONNXRUN_OK);
		buffer_make(env, &b, ONNXRUN_DTYPE_FLOAT, 4, out2, 0);
		buffer_make(env, &b1, ONNXRUN_DTYPE_FLOAT, 4, out1, 0);
		assert_int_equal(onnxrun_session_set_output(s, 0, b.t), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_input(s, 0, x1), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_prepare(s), ONNXRUN_ERROR_INVALID_ARGUMENT);
		assert_string_equal(onnxrun_session_error(s),
		                    "output 'upscaled' (index 0): the bound tensor is float [2,3,32,32] but the output "
		                    "is float [1,3,32,32] (onnxrun_session_set_output)");
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_ARGUMENT);
		assert_int_equal(onnxrun_session_set_input(s, 0, x2), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
		/* replaced by another tensor that fits [N,3,32,32] but not N = 2: caught at run */
		assert_int_equal(onnxrun_session_set_output(s, 0, b1.t), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_ARGUMENT);
		assert_non_null(strstr(onnxrun_session_error(s), "is float [1,3,32,32] but the output is float [2,3,32,32]"));
		assert_int_equal(onnxrun_session_set_input(s, 0, x1), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
		onnxrun_session_free(s);
		buffer_free(&b);
		buffer_free(&b1);
		onnxrun_tensor_free(x1);
		onnxrun_tensor_free(x2);
		onnxrun_model_free(m);
	}
	onnxrun_env_free(env);
}

/* x [1,2,3,3] -> ConvTranspose 'up' (w [2,2,2,2], an initializer) -> y [1,2,4,4];
 * outputs y, x, w: a node output, a graph input, an initializer (a value listed twice as
 * an output is refused at load). */
static struct onnxrun_model *alias_model(struct onnxrun_env *env)
{
	Onnx__ModelProto *mp = mb_model(8);
	struct onnxrun_model *m = NULL;
	const int64_t wd[4] = { 2, 2, 2, 2 };
	const float w[16] = { 1, -2, 3, -4, 5, -6, 7, -8, 0.5f, 0.25f, -1, 2, -3, 4, 1.5f, -0.75f };
	size_t size;
	uint8_t *bytes;
	mb_opset(mp, "", 13);
	mb_input(mp, "x", MB_FLOAT, "1,2,3,3");
	mb_output(mp, "y", MB_FLOAT, "1,2,4,4");
	mb_output(mp, "x", MB_FLOAT, "1,2,3,3");
	mb_output(mp, "w", MB_FLOAT, "2,2,2,2");
	mb_initializer_f32(mp, "w", 4, wd, w);
	mb_node(mp, "up", "ConvTranspose", NULL, "x,w", "y");
	bytes = mb_finish(mp, &size);
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	free(bytes);
	return m;
}

/* Outputs that are a graph input or an initializer: bound, they get a copy (y is written
 * directly); binding x's output to the input tensor itself copies nothing onto itself;
 * overlapping memory is refused. */
static void test_aliased_outputs(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *su, *sb;
	struct onnxrun_tensor *x;
	struct buffer b[3];
	const int64_t xd[4] = { 1, 2, 3, 3 }, yd[4] = { 1, 2, 4, 4 }, wd[4] = { 2, 2, 2, 2 };
	const float w[16] = { 1, -2, 3, -4, 5, -6, 7, -8, 0.5f, 0.25f, -1, 2, -3, 4, 1.5f, -0.75f };
	const struct onnxrun_tensor *y, *got;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	m = alias_model(env);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	for (int i = 0; i < 18; i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)(i * 7 % 11) - 5.0f;
	assert_int_equal(onnxrun_session_create(m, &su), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &sb), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(su, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(sb, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(su), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(su, 0, &y), ONNXRUN_OK);
	buffer_make(env, &b[0], ONNXRUN_DTYPE_FLOAT, 4, yd, 0);
	buffer_make(env, &b[1], ONNXRUN_DTYPE_FLOAT, 4, xd, 4);
	buffer_make(env, &b[2], ONNXRUN_DTYPE_FLOAT, 4, wd, 8);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(onnxrun_session_set_output(sb, i, b[i].t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(sb), ONNXRUN_OK);
	assert_memory_equal(b[0].base, onnxrun_tensor_data(y), 32 * sizeof(float));
	assert_memory_equal(b[1].base + 4, onnxrun_tensor_data(x), 18 * sizeof(float));
	assert_memory_equal(b[2].base + 8, w, sizeof w);
	for (size_t i = 0; i < 3; i++)
		buffer_check_guards(&b[i], "aliases");
	/* only y is written directly: the plan drops its 128 bytes */
	{
		uint64_t pu, pb;
		assert_int_equal(onnxrun_session_planned_bytes(su, &pu), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_planned_bytes(sb, &pb), ONNXRUN_OK);
		assert_int_equal(pu - pb, 32 * sizeof(float));
	}
	/* x's output bound to the input tensor itself */
	assert_int_equal(onnxrun_session_set_output(sb, 1, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(sb), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(sb, 1, &got), ONNXRUN_OK);
	assert_ptr_equal(got, x);
	assert_memory_equal(b[0].base, onnxrun_tensor_data(y), 32 * sizeof(float));
	/* w's output over the second half of y's buffer */
	{
		struct onnxrun_tensor *mid;
		assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, wd, b[0].base + 64, 64, &mid), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_set_output(sb, 2, mid), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(sb), ONNXRUN_ERROR_INVALID_ARGUMENT);
		assert_string_equal(onnxrun_session_error(sb),
		                    "output 'w' (index 2): the bound tensor's memory overlaps the one bound to output "
		                    "'y' (index 0)");
		assert_int_equal(onnxrun_session_output(sb, 0, &got), ONNXRUN_ERROR_INVALID_ARGUMENT);
		assert_int_equal(onnxrun_session_set_output(sb, 2, b[2].t), ONNXRUN_OK);
		assert_int_equal(onnxrun_session_run(sb), ONNXRUN_OK);
		onnxrun_tensor_free(mid);
	}
	onnxrun_session_free(su);
	onnxrun_session_free(sb);
	for (size_t i = 0; i < 3; i++)
		buffer_free(&b[i]);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* An output bound over an input's memory is refused at run, naming both. */
static void test_overlap_with_input(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x, *y;
	const int64_t xd[4] = { 1, 3, 32, 32 }, yd[4] = { 1, 3, 128, 128 };
	float *mem = calloc(3 * 128 * 128, sizeof *mem);
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, xd, mem + 1000, 3 * 32 * 32 * 4, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, yd, mem, 3 * 128 * 128 * 4, &y), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_output(s, 0, y), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_session_error(s),
	                    "output 'upscaled' (index 0): the bound tensor's memory overlaps input 'image'");
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(y);
	free(mem);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* Regression: an output bound over the memory fed to an input that has a default (an
 * initializer that is also a graph input, fed with set_input_by_name) is refused at run
 * like any other input's; the run used to write y over the caller's weights. */
static void test_overlap_with_defaulted_input(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x, *w, *y;
	Onnx__ModelProto *mp = mb_model(8);
	const int64_t xd[4] = { 1, 2, 3, 3 }, yd[4] = { 1, 2, 4, 4 }, wd[4] = { 2, 2, 2, 2 };
	const float w0[16] = { 1, -2, 3, -4, 5, -6, 7, -8, 0.5f, 0.25f, -1, 2, -3, 4, 1.5f, -0.75f };
	float *mem = calloc(32, sizeof *mem), before[16];
	size_t size;
	uint8_t *bytes;
	(void)state;
	mb_opset(mp, "", 13);
	mb_input(mp, "x", MB_FLOAT, "1,2,3,3");
	mb_input(mp, "w", MB_FLOAT, "2,2,2,2");
	mb_output(mp, "y", MB_FLOAT, "1,2,4,4");
	mb_initializer_f32(mp, "w", 4, wd, w0);
	mb_node(mp, "up", "ConvTranspose", NULL, "x,w", "y");
	bytes = mb_finish(mp, &size);
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	if (onnxrun_model_load_buffer(env, bytes, size, NULL, &m) != ONNXRUN_OK)
		fail_msg("%s", onnxrun_env_error(env));
	free(bytes);
	memcpy(mem, w0, sizeof w0);
	for (int i = 0; i < 16; i++)
		mem[i] *= -2.0f; /* caller weights, different from the default */
	memcpy(before, mem, sizeof before);
	assert_int_equal(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, xd, &x), ONNXRUN_OK);
	for (int i = 0; i < 18; i++)
		((float *)onnxrun_tensor_data(x))[i] = (float)(i % 5) - 2.0f;
	assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, wd, mem, sizeof w0, &w), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_wrap(env, ONNXRUN_DTYPE_FLOAT, 4, yd, mem, 32 * sizeof(float), &y), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input_by_name(s, "w", w), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_output(s, 0, y), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_string_equal(onnxrun_session_error(s),
	                    "output 'y' (index 0): the bound tensor's memory overlaps input (with default) 'w'");
	assert_memory_equal(mem, before, sizeof before); /* the caller's weights are intact */
	/* the same output memory without feeding w (the default is used) is fine */
	onnxrun_session_free(s);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_output(s, 0, y), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_tensor_free(w);
	onnxrun_tensor_free(y);
	free(mem);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* Regression: after an output is unbound (which lets the caller free its buffer),
 * onnxrun_session_output no longer hands out a tensor over that buffer: the outputs of
 * the last run are gone until the next run, which uses the session's own memory. */
static void test_output_after_unbinding(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s;
	struct onnxrun_tensor *x;
	const struct onnxrun_tensor *got;
	struct buffer b;
	const int64_t yd[4] = { 1, 3, 128, 128 };
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x), ONNXRUN_OK);
	buffer_make(env, &b, ONNXRUN_DTYPE_FLOAT, 4, yd, 0);
	assert_int_equal(onnxrun_session_set_output(s, 0, b.t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(s, 0, &got), ONNXRUN_OK);
	assert_ptr_equal(got, b.t);
	assert_int_equal(onnxrun_session_set_output(s, 0, NULL), ONNXRUN_OK);
	if (onnxrun_session_output(s, 0, &got) == ONNXRUN_OK) {
		const char *d = onnxrun_tensor_data(got);
		if (d >= (const char *)b.base && d < (const char *)b.base + b.offset + b.nbytes + 64)
			fail_msg("output 0 still points into the unbound caller buffer");
	}
	buffer_free(&b);
	assert_int_equal(onnxrun_session_output(s, 0, &got), ONNXRUN_ERROR_INVALID_ARGUMENT);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(s, 0, &got), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_numel(got), 3 * 128 * 128);
	onnxrun_session_free(s);
	onnxrun_tensor_free(x);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

/* A ring of two buffers: each run writes into the buffer bound for it and leaves the
 * other alone; bound outputs are not counted against the memory cap. */
static void test_rebinding_and_cap(void **state)
{
	struct onnxrun_env *env;
	struct onnxrun_model *m;
	struct onnxrun_session *s, *ref;
	struct onnxrun_tensor *x1, *x2;
	const struct onnxrun_tensor *r;
	struct buffer ring[2];
	const int64_t yd[4] = { 1, 3, 128, 128 };
	const size_t ny = 3 * 128 * 128 * sizeof(float);
	unsigned char *y1 = malloc(ny), *y2 = malloc(ny);
	uint64_t planned;
	(void)state;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	assert_int_equal(onnxrun_model_load_file(env, UPSAMPLER, &m), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x1), ONNXRUN_OK);
	assert_int_equal(onnxrun_tensor_load_pb(env, UPSAMPLER_IN, &x2), ONNXRUN_OK);
	for (int64_t i = 0; i < onnxrun_tensor_numel(x2); i++)
		((float *)onnxrun_tensor_data(x2))[i] *= -0.5f;
	/* references from a session without bindings */
	assert_int_equal(onnxrun_session_create(m, &ref), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(ref, 0, x1), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(ref), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(ref, 0, &r), ONNXRUN_OK);
	memcpy(y1, onnxrun_tensor_data(r), ny);
	assert_int_equal(onnxrun_session_set_input(ref, 0, x2), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(ref), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_output(ref, 0, &r), ONNXRUN_OK);
	memcpy(y2, onnxrun_tensor_data(r), ny);
	assert_true(memcmp(y1, y2, ny) != 0);
	buffer_make(env, &ring[0], ONNXRUN_DTYPE_FLOAT, 4, yd, 0);
	buffer_make(env, &ring[1], ONNXRUN_DTYPE_FLOAT, 4, yd, 0);
	assert_int_equal(onnxrun_session_create(m, &s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_output(s, 0, ring[0].t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x1), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_output(s, 0, ring[1].t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_input(s, 0, x2), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_memory_equal(ring[0].base, y1, ny);
	assert_memory_equal(ring[1].base, y2, ny);
	assert_int_equal(onnxrun_session_set_output(s, 0, ring[0].t), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_memory_equal(ring[0].base, y2, ny);
	/* the cap: exactly the bound session's plan; the unbound one needs the output more */
	assert_int_equal(onnxrun_session_planned_bytes(s, &planned), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_max_memory(s, planned), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_set_max_memory(ref, planned), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(ref), ONNXRUN_ERROR_LIMIT);
	assert_int_equal(onnxrun_session_set_output(s, 0, NULL), ONNXRUN_OK);
	assert_int_equal(onnxrun_session_run(s), ONNXRUN_ERROR_LIMIT);
	onnxrun_session_free(s);
	onnxrun_session_free(ref);
	buffer_free(&ring[0]);
	buffer_free(&ring[1]);
	onnxrun_tensor_free(x1);
	onnxrun_tensor_free(x2);
	free(y1);
	free(y2);
	onnxrun_model_free(m);
	onnxrun_env_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_models),
		cmocka_unit_test(test_backend_cases),
		cmocka_unit_test(test_large_outputs),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_aliased_outputs),
		cmocka_unit_test(test_overlap_with_input),
		cmocka_unit_test(test_overlap_with_defaulted_input),
		cmocka_unit_test(test_output_after_unbinding),
		cmocka_unit_test(test_rebinding_and_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
