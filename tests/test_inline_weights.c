/*
 * test_inline_weights.c - large float32 raw_data kept out of the protobuf parse
 * (src/loader/strip.c) and read where it lies in the model buffer.
 *
 *  - the rewrite: parsing the stripped copy and putting the recorded bytes back gives a
 *    message that packs to the original bytes exactly (protobuf-c is the oracle); only
 *    main-graph float32 initializers from the threshold on are stripped;
 *  - what the rewrite must leave alone (two graph fields, two raw_data in one tensor, a
 *    data_type that ends up not FLOAT) and what it must still see (data_type after
 *    raw_data), with the loaded values checked against the bytes protobuf says win;
 *  - differential: truncated and corrupted models load with the same status and message,
 *    and the same initializer bytes, with stripping on (every float32 raw_data) and off;
 *  - through the runtime, at every alignment of the weights in the buffer: a ConvTranspose
 *    packs from the buffer (peak memory during load about one W, against two without the
 *    strip), the depthwise path, a graph output and a DepthToSpace input get a copy, and
 *    a custom op's onnxrun_op_constant_input gets aligned data; outputs against the
 *    references in model_builder.c;
 *  - every allocation failure during such a load is reported, with nothing leaked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/tensor_proto.h"
#include "runtime/runtime.h"
/* after runtime.h: th_value_init */
#include "model_builder.c"

/* The first n-byte match of needle in hay[0..size), or NULL (memmem is not standard C). */
static const uint8_t *find_bytes(const uint8_t *hay, size_t size, const void *needle, size_t n)
{
	for (size_t i = 0; i + n <= size; i++)
		if (memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

#define STRIP_MIN ((size_t)64 << 10) /* the loader's default (model.c) */
#define D4(a, b, c, d) 4, (const int64_t[]){ a, b, c, d }

/* ---- a hand-rolled wire writer, for layouts protobuf-c never writes ---- */

struct wb {
	uint8_t *p;
	size_t n, cap;
};

static void wb_bytes(struct wb *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	if (n)
		memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void wb_varint(struct wb *b, uint64_t v)
{
	do {
		uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		wb_bytes(b, &c, 1);
		v >>= 7;
	} while (v);
}

static void wb_uint(struct wb *b, uint32_t field, uint64_t v)
{
	wb_varint(b, (uint64_t)field << 3);
	wb_varint(b, v);
}

static void wb_len(struct wb *b, uint32_t field, const void *d, size_t n)
{
	wb_varint(b, (uint64_t)field << 3 | 2);
	wb_varint(b, n);
	wb_bytes(b, d, n);
}

static void wb_sub(struct wb *b, uint32_t field, struct wb *inner)
{
	wb_len(b, field, inner->p, inner->n);
	free(inner->p);
	memset(inner, 0, sizeof *inner);
}

/* ModelProto { ir_version 8, opset ("", 13), graph { name "g", <graph_extra>, output "w"
 * float } }; the graph's initializers come from graph_extra. */
static uint8_t *hand_model(struct wb *graph_extra, size_t *size)
{
	struct wb m = { 0 }, g = { 0 }, op = { 0 }, vi = { 0 }, ty = { 0 }, tt = { 0 };
	wb_uint(&m, 1, 8);
	wb_len(&op, 1, "", 0);
	wb_uint(&op, 2, 13);
	wb_sub(&m, 8, &op);
	wb_len(&g, 2, "g", 1);
	wb_bytes(&g, graph_extra->p, graph_extra->n);
	wb_uint(&tt, 1, 1);
	wb_sub(&ty, 1, &tt);
	wb_len(&vi, 1, "w", 1);
	wb_sub(&vi, 2, &ty);
	wb_sub(&g, 12, &vi);
	wb_sub(&m, 7, &g);
	free(graph_extra->p);
	memset(graph_extra, 0, sizeof *graph_extra);
	*size = m.n;
	return m.p;
}

/* ---- helpers ---- */

static float *random_floats(uint64_t seed, size_t n)
{
	struct th_rng r;
	float *p = malloc((n ? n : 1) * sizeof *p);
	assert_non_null(p);
	th_rng_seed(&r, seed);
	th_fill(&r, p, n);
	return p;
}

/* Loads size bytes placed at offset `shift` of a 64-byte aligned copy (so the weights sit
 * at a chosen alignment), with stripping from strip_min bytes on (SIZE_MAX: off). */
static enum onnxrun_status load_at(struct onnxrun_env *env, const uint8_t *bytes, size_t size, size_t shift,
                                   size_t strip_min, struct onnxrun_model **out)
{
	uint8_t *buf = NULL;
	enum onnxrun_status st;
	assert_non_null(buf = onnxrun__os_aligned_alloc(64, size + shift + 1));
	memcpy(buf + shift, bytes, size);
	env->strip_min = strip_min;
	st = onnxrun_model_load_buffer(env, buf + shift, size, NULL, out);
	env->strip_min = 0;
	memset(buf, 0xa5, size + shift); /* nothing may point into the buffer after the load */
	onnxrun__os_aligned_free(buf);
	return st;
}

/* ---- the rewrite ------------------------------------------------------------------------ */

/* A model with initializers of several kinds (index: name, dtype, bytes):
 *   0 big    FLOAT   80000 (stripped)      1 small  FLOAT  400
 *   2 i64    INT64   160000                3 half   FLOAT16 131072
 *   4 edge   FLOAT   65536 (stripped: the threshold itself)
 *   5 under  FLOAT   65532                 6 typed  FLOAT  float_data, 80000 bytes
 * and a Constant-style tensor attribute (not an initializer) of 80000 float bytes. */
static uint8_t *mixed_model(size_t *size, float **big, float **edge)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__TensorProto *t;
	int64_t *i64 = calloc(20000, sizeof *i64);
	uint16_t *half = calloc(65536, sizeof *half);
	float *under = random_floats(5, 16383), *typed = random_floats(6, 20000), *attr = random_floats(7, 20000);
	Onnx__NodeProto *n;
	assert_non_null(i64);
	assert_non_null(half);
	*big = random_floats(1, 20000);
	*edge = random_floats(4, 16384);
	mb_opset(m, "", 13);
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "big", 1, (const int64_t[]){ 20000 }, *big);
	mb_initializer_f32(m, "small", 1, (const int64_t[]){ 100 }, *big);
	t = mb_tensor("i64", MB_INT64, 1, (const int64_t[]){ 20000 });
	mb_tensor_raw_values(t, i64, 20000 * sizeof *i64);
	mb_add_initializer(m, t);
	t = mb_tensor("half", MB_FLOAT16, 1, (const int64_t[]){ 65536 });
	mb_tensor_raw_values(t, half, 65536 * sizeof *half);
	mb_add_initializer(m, t);
	mb_initializer_f32(m, "edge", 1, (const int64_t[]){ 16384 }, *edge);
	mb_initializer_f32(m, "under", 1, (const int64_t[]){ 16383 }, under);
	t = mb_tensor("typed", MB_FLOAT, 1, (const int64_t[]){ 20000 });
	mb_tensor_float_data(t, 20000, typed);
	mb_add_initializer(m, t);
	n = mb_node(m, "c", "Constant", "", "", "y");
	t = mb_tensor("a", MB_FLOAT, 1, (const int64_t[]){ 20000 });
	mb_tensor_raw_values(t, attr, 20000 * sizeof *attr);
	mb_attr_tensor(n, "value", t);
	free(i64);
	free(half);
	free(under);
	free(typed);
	free(attr);
	return mb_finish(m, size);
}

static void test_strip_round_trip(void **state)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun__err err;
	struct onnxrun__stripped s;
	size_t size, repacked_size;
	float *big, *edge;
	uint8_t *bytes = mixed_model(&size, &big, &edge), *repacked;
	Onnx__ModelProto *mp;
	(void)state;
	assert_int_equal(onnxrun__strip_raw(env, bytes, size, STRIP_MIN, &s, &err), ONNXRUN_OK);
	assert_non_null(s.bytes);
	assert_int_equal(s.n_slices, 2);
	assert_int_equal(s.slices[0].initializer, 0);
	assert_int_equal(s.slices[0].len, 80000);
	assert_int_equal(s.slices[1].initializer, 4);
	assert_int_equal(s.slices[1].len, 65536);
	/* the slices are the original bytes, inside the original buffer */
	for (size_t i = 0; i < 2; i++)
		assert_true(s.slices[i].data >= bytes && s.slices[i].data + s.slices[i].len <= bytes + size);
	mb_to_le(big, 80000, MB_FLOAT); /* the file's bytes are little-endian */
	mb_to_le(edge, 65536, MB_FLOAT);
	assert_memory_equal(s.slices[0].data, big, 80000);
	assert_memory_equal(s.slices[1].data, edge, 65536);
	/* each stripped tensor: its raw_data and tensor lengths went from 3 bytes to 1 */
	assert_int_equal(s.size, size - 80000 - 65536 - 2 * 4);

	mp = onnx__model_proto__unpack(NULL, s.size, s.bytes);
	assert_non_null(mp);
	assert_int_equal(mp->graph->n_initializer, 7);
	for (size_t i = 0; i < 7; i++) {
		Onnx__TensorProto *t = mp->graph->initializer[i];
		const bool stripped = i == 0 || i == 4;
		if (!stripped)
			continue;
		assert_true(t->has_raw_data);
		assert_int_equal(t->raw_data.len, 0);
		free(t->raw_data.data);
		t->raw_data.data = mb__memdup(s.slices[i == 4].data, s.slices[i == 4].len);
		t->raw_data.len = s.slices[i == 4].len;
	}
	repacked = mb_pack(mp, &repacked_size);
	assert_int_equal(repacked_size, size);
	assert_memory_equal(repacked, bytes, size);
	onnx__model_proto__free_unpacked(mp, NULL);
	free(repacked);

	/* min 1: every float32 raw_data of an initializer, still not int64, float16, the typed
	 * field or the attribute tensor */
	onnxrun__stripped_free(env, &s);
	assert_int_equal(onnxrun__strip_raw(env, bytes, size, 1, &s, &err), ONNXRUN_OK);
	assert_int_equal(s.n_slices, 4);
	assert_int_equal(s.slices[0].initializer, 0);
	assert_int_equal(s.slices[1].initializer, 1);
	assert_int_equal(s.slices[2].initializer, 4);
	assert_int_equal(s.slices[3].initializer, 5);
	onnxrun__stripped_free(env, &s);

	/* above every size: nothing to do, the model is parsed as it is */
	assert_int_equal(onnxrun__strip_raw(env, bytes, size, 80001, &s, &err), ONNXRUN_OK);
	assert_null(s.bytes);
	assert_int_equal(s.n_slices, 0);
	free(bytes);
	free(big);
	free(edge);
	onnxrun_env_free(env);
}

/* A FLOAT TensorProto "w" of n floats written field by field: dims, then the fields of
 * `order` ("t" data_type FLOAT, "h" data_type FLOAT16, "r" raw_data from the next array). */
static void hand_tensor(struct wb *graph, size_t n, const char *order, const float *const *raws)
{
	struct wb t = { 0 };
	wb_uint(&t, 1, n);
	wb_len(&t, 8, "w", 1);
	for (const char *c = order; *c; c++) {
		if (*c == 't')
			wb_uint(&t, 2, 1);
		else if (*c == 'h')
			wb_uint(&t, 2, 10);
		else {
			float *le = mb__memdup(*raws++, n * sizeof(float));
			mb_to_le(le, n * sizeof(float), MB_FLOAT);
			wb_len(&t, 9, le, n * sizeof(float));
			free(le);
		}
	}
	wb_sub(graph, 5, &t);
}

/* Loads a hand-written model whose graph output is initializer w, with stripping at 1 byte
 * and off; both must agree, and on success w must hold want (n floats). */
static void check_hand_model(uint8_t *bytes, size_t size, bool expect_strip, const float *want, size_t n)
{
	struct onnxrun_env *env = th_env();
	struct onnxrun__err err;
	struct onnxrun__stripped s;
	struct onnxrun_model *on = NULL, *off = NULL;
	enum onnxrun_status st_on, st_off;
	char msg[ONNXRUN__ERR_LEN];
	assert_int_equal(onnxrun__strip_raw(env, bytes, size, 1, &s, &err), ONNXRUN_OK);
	assert_int_equal(s.bytes != NULL, expect_strip);
	onnxrun__stripped_free(env, &s);
	st_on = load_at(env, bytes, size, 3, 1, &on);
	snprintf(msg, sizeof msg, "%s", onnxrun_env_error(env));
	st_off = load_at(env, bytes, size, 3, SIZE_MAX, &off);
	assert_int_equal(st_on, st_off);
	assert_string_equal(msg, onnxrun_env_error(env));
	if (want) {
		TH_ASSERT_STATUS(st_on, ONNXRUN_OK, msg);
		assert_int_equal(th_value_init(on, "w")->dtype, ONNXRUN_DTYPE_FLOAT);
		assert_memory_equal(th_value_init(on, "w")->data, want, n * sizeof(float));
		assert_memory_equal(th_value_init(off, "w")->data, want, n * sizeof(float));
	} else {
		assert_int_not_equal(st_on, ONNXRUN_OK);
	}
	onnxrun_model_free(on);
	onnxrun_model_free(off);
	onnxrun_env_free(env);
}

static void test_strip_irregular(void **state)
{
	const size_t n = 300;
	float *a = random_floats(21, n), *b = random_floats(22, n);
	struct wb g = { 0 };
	uint8_t *bytes, *two;
	size_t size;
	(void)state;
	/* the plain layout, with data_type before raw_data as protobuf-c writes it */
	hand_tensor(&g, n, "tr", (const float *const[]){ a });
	bytes = hand_model(&g, &size);
	check_hand_model(bytes, size, true, a, n);
	/* two graph fields: protobuf merges them; the rewrite stays out */
	two = malloc(2 * size);
	assert_non_null(two);
	memcpy(two, bytes, size);
	memcpy(two + size, bytes, size);
	check_hand_model(two, 2 * size, false, NULL, 0); /* merged: w is defined twice */
	free(two);
	free(bytes);
	/* data_type after raw_data: still seen */
	hand_tensor(&g, n, "rt", (const float *const[]){ a });
	bytes = hand_model(&g, &size);
	check_hand_model(bytes, size, true, a, n);
	free(bytes);
	/* two raw_data: the last wins in the parse; the rewrite stays out */
	hand_tensor(&g, n, "trr", (const float *const[]){ a, b });
	bytes = hand_model(&g, &size);
	check_hand_model(bytes, size, false, b, n);
	free(bytes);
	/* data_type FLOAT16 after FLOAT: the last wins, not float32, not stripped (and the
	 * byte count is then wrong for float16: both loads fail the same way) */
	hand_tensor(&g, n, "trh", (const float *const[]){ a });
	bytes = hand_model(&g, &size);
	check_hand_model(bytes, size, false, NULL, 0);
	free(bytes);
	/* FLOAT16 then FLOAT: float32 wins, stripped */
	hand_tensor(&g, n, "htr", (const float *const[]){ a });
	bytes = hand_model(&g, &size);
	check_hand_model(bytes, size, true, a, n);
	free(bytes);
	/* raw_data with a byte count that does not match dims: the same error either way */
	{
		struct wb t = { 0 };
		wb_uint(&t, 1, n);
		wb_len(&t, 8, "w", 1);
		wb_uint(&t, 2, 1);
		wb_len(&t, 9, a, n * sizeof(float) - 2);
		wb_sub(&g, 5, &t);
		bytes = hand_model(&g, &size);
		check_hand_model(bytes, size, true, NULL, 0);
		free(bytes);
	}
	free(a);
	free(b);
}

/* Compares two loads of the same bytes: status, message, and every initializer. */
static void assert_same_load(struct onnxrun_env *env, const uint8_t *bytes, size_t size, uint64_t seed)
{
	struct onnxrun_model *on = NULL, *off = NULL;
	enum onnxrun_status st_on, st_off;
	char msg[ONNXRUN__ERR_LEN];
	st_on = load_at(env, bytes, size, seed % 4, 1, &on);
	snprintf(msg, sizeof msg, "%s", onnxrun_env_error(env));
	st_off = load_at(env, bytes, size, seed % 4, SIZE_MAX, &off);
	if (st_on != st_off || strcmp(msg, onnxrun_env_error(env)))
		fail_msg("seed %llu: stripped load %d \"%s\", plain load %d \"%s\"", (unsigned long long)seed,
		         (int)st_on, msg, (int)st_off, onnxrun_env_error(env));
	if (!st_on) {
		assert_int_equal(on->n_values, off->n_values);
		for (size_t v = 0; v < on->n_values; v++) {
			const struct onnxrun_tensor *a = on->values[v].init, *b = off->values[v].init;
			assert_int_equal(a != NULL, b != NULL);
			if (!a)
				continue;
			assert_null(a->pending);
			assert_int_equal(a->nbytes, b->nbytes);
			assert_int_equal(a->data != NULL, b->data != NULL);
			if (a->data && a->dtype != ONNXRUN_DTYPE_STRING && memcmp(a->data, b->data, a->nbytes))
				fail_msg("seed %llu: initializer '%s' differs", (unsigned long long)seed,
				         on->values[v].name);
		}
	}
	onnxrun_model_free(on);
	onnxrun_model_free(off);
}

/* A small ConvTranspose model with float initializers (W, B) and a graph-output one. */
static uint8_t *small_model(size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	float *w = random_floats(31, 4 * 3 * 3 * 3), *b = random_floats(32, 3);
	Onnx__NodeProto *n;
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,4,5,5");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "b", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(4, 3, 3, 3), w);
	mb_initializer_f32(m, "b", 1, (const int64_t[]){ 3 }, b);
	n = mb_node(m, "up", "ConvTranspose", "", "x,w,b", "y");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	free(w);
	free(b);
	return mb_finish(m, size);
}

static void test_strip_differential(void **state)
{
	struct onnxrun_env *env = th_env();
	size_t size, n_cases = 0;
	uint8_t *bytes = small_model(&size), *bad = malloc(size);
	struct th_rng r;
	(void)state;
	assert_non_null(bad);
	th_rng_seed(&r, 41);
	assert_same_load(env, bytes, size, 0);
	/* every truncation */
	for (size_t len = 0; len < size; len++, n_cases++)
		assert_same_load(env, bytes, len, len);
	/* corrupted bytes: one to four random bytes changed, seeded by the case number */
	for (uint64_t seed = 1; seed <= 3000; seed++, n_cases++) {
		struct th_rng c;
		th_rng_seed(&c, seed);
		memcpy(bad, bytes, size);
		for (int k = 0, nk = 1 + (int)(th_rng_next(&c) % 4); k < nk; k++)
			bad[th_rng_next(&c) % size] = (uint8_t)th_rng_next(&c);
		assert_same_load(env, bad, size, seed);
	}
	assert_true(n_cases > 3000);
	free(bytes);
	free(bad);
	onnxrun_env_free(env);
}

/* ---- through the runtime --------------------------------------------------------------- */

/* x [1, 64, 5, 5] -> ConvTranspose(x, w [64, 32, 3, 3] = 73728 bytes, stride 2) -> y. */
enum { C = 64, MG = 32, K = 3, H = 5, OH = (H - 1) * 2 + K };

static uint8_t *conv_model(const float *w, size_t doc, size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	char text[8] = "abcdefg";
	text[doc] = '\0';
	m->doc_string = mb__strdup(text); /* written before the graph: shifts the weights */
	mb_opset(m, "", 13);
	mb_input(m, "x", MB_FLOAT, "1,64,5,5");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_initializer_f32(m, "w", D4(C, MG, K, K), w);
	n = mb_node(m, "up", "ConvTranspose", "", "x,w", "y");
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	return mb_finish(m, size);
}

static void test_conv_packs_from_buffer(void **state)
{
	const uint64_t seed = 51;
	const size_t wn = C * MG * K * K, wbytes = wn * sizeof(float);
	float *w = random_floats(seed, wn), *x = random_floats(seed + 1, C * H * H);
	float *want = malloc((size_t)(MG * OH * OH) * sizeof *want), *w_le = mb__memdup(w, wbytes);
	struct th_ct2d p = { 1, C, H, H, MG, K, K, 1, 2, 2, 1, 1, 0, 0, OH, OH };
	int aligned_seen[4] = { 0 };
	(void)state;
	assert_non_null(want);
	mb_to_le(w_le, wbytes, MB_FLOAT); /* how W sits in the file */
	th_ref_conv_transpose2d(&p, x, w, NULL, want);
	for (size_t doc = 0; doc < 4; doc++)
		for (size_t shift = 0; shift < 4; shift++) {
			struct th_alloc a;
			struct onnxrun_env *env = th_env_counted(&a);
			struct onnxrun_model *model = NULL;
			size_t size, before, peak_on, peak_off;
			uint8_t *bytes = conv_model(w, doc, &size);
			const uint8_t *at = find_bytes(bytes, size, w_le, 64);
			assert_non_null(at);
			aligned_seen[(size_t)(at - bytes + shift) % 4] = 1;
			before = a.live_bytes;
			a.peak_bytes = before;
			TH_ASSERT_STATUS(load_at(env, bytes, size, shift, 0, &model), ONNXRUN_OK, onnxrun_env_error(env));
			peak_on = a.peak_bytes - before;
			assert_null(th_value_init(model, "w")->data); /* packed, released, never copied */
			assert_null(th_value_init(model, "w")->pending);
			th_run_check(env, model, x, (const int64_t[]){ 1, C, H, H }, 0, want, (size_t)(MG * OH * OH), seed,
			          "packed from the model buffer");
			onnxrun_model_free(model);
			/* the same load parsing the weights: they are copied, then packed */
			before = a.live_bytes;
			a.peak_bytes = before;
			TH_ASSERT_STATUS(load_at(env, bytes, size, shift, SIZE_MAX, &model), ONNXRUN_OK,
			                 onnxrun_env_error(env));
			peak_off = a.peak_bytes - before;
			onnxrun_model_free(model);
			/* a big-endian host copies W to swap it: no saving there, only right results */
			if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (peak_on > wbytes * 3 / 2 || peak_off < wbytes * 2))
				fail_msg("doc %zu shift %zu: peak %zu bytes while loading (%zu without the strip) for a "
				         "%zu-byte W",
				         doc, shift, peak_on, peak_off, wbytes);
			free(bytes);
			onnxrun_env_free(env);
			assert_int_equal(a.live, 0);
		}
	/* the weights sat at every alignment mod 4 */
	assert_true(aligned_seen[0] && aligned_seen[1] && aligned_seen[2] && aligned_seen[3]);
	free(w);
	free(w_le);
	free(x);
	free(want);
}

/* A custom op "Peek" (domain "test") that looks at constant input 0 in init. */
static enum onnxrun_status peek_infer(struct onnxrun_op_context *ctx, const struct onnxrun_type *in, size_t n_in,
                                      struct onnxrun_type *out, size_t n_out)
{
	(void)ctx;
	(void)n_in;
	(void)n_out;
	out[0].dtype = ONNXRUN_DTYPE_FLOAT;
	out[0].shape.rank = 1;
	out[0].shape.dims[0] = in[0].shape.rank >= 1 ? 1 : -1;
	return ONNXRUN_OK;
}

static enum onnxrun_status peek_compute(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *in,
                                        size_t n_in, struct onnxrun_tensor *const *out, size_t n_out)
{
	float *s = onnxrun_op_state(ctx);
	(void)in;
	(void)n_in;
	(void)n_out;
	((float *)onnxrun_tensor_data(out[0]))[0] = s ? *s : -1.0f;
	return ONNXRUN_OK;
}

/* Keeps the sum of the constant's elements, after checking its data is aligned. */
static enum onnxrun_status peek_init(struct onnxrun_op_context *ctx, void **state)
{
	const struct onnxrun_tensor *t = onnxrun_op_constant_input(ctx, 0);
	const float *d;
	float *sum;
	*state = NULL;
	if (!t)
		return ONNXRUN_OK;
	d = onnxrun_tensor_data(t);
	if (!d || (uintptr_t)d % 64)
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_RUNTIME, "constant data %p is not aligned", (const void *)d);
	if (!(sum = malloc(sizeof *sum)))
		return onnxrun_op_fail(ctx, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	*sum = 0.0f;
	for (int64_t i = 0; i < onnxrun_tensor_numel(t); i++)
		*sum += d[i];
	*state = sum;
	return ONNXRUN_OK;
}

static void peek_fini(void *user_data, void *state)
{
	(void)user_data;
	free(state);
}

/* Initializers that no op rebuilds are copied out of the buffer: a depthwise W (read
 * directly by its kernel), a graph output, a DepthToSpace input, a custom op's constant. */
static uint8_t *copied_model(const float *wd, const float *v, size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	Onnx__NodeProto *n;
	m->doc_string = mb__strdup("x"); /* odd offsets */
	mb_opset(m, "", 13);
	mb_opset(m, "test", 1);
	mb_input(m, "x", MB_FLOAT, "1,4096,3,3");
	mb_output(m, "y", MB_FLOAT, NULL);
	mb_output(m, "v", MB_FLOAT, NULL);
	mb_output(m, "z", MB_FLOAT, NULL);
	mb_output(m, "s", MB_FLOAT, NULL);
	mb_initializer_f32(m, "wd", D4(4096, 1, 2, 2), wd); /* 65536 bytes */
	mb_initializer_f32(m, "v", D4(1, 16, 32, 64), v);   /* 131072 bytes */
	n = mb_node(m, "dw", "ConvTranspose", "", "x,wd", "y");
	mb_attr_int(n, "group", 4096);
	mb_attr_ints(n, "strides", MB_INTS(2, 2));
	n = mb_node(m, "d2s", "DepthToSpace", "", "v", "z");
	mb_attr_int(n, "blocksize", 2);
	mb_node(m, "peek", "Peek", "test", "v", "s");
	return mb_finish(m, size);
}

static void register_peek(struct onnxrun_env *env)
{
	struct onnxrun_op op = { "test", "Peek", 1, peek_infer, peek_compute, peek_init, peek_fini, NULL, NULL };
	assert_int_equal(onnxrun_env_register_op(env, &op), ONNXRUN_OK);
}

static void test_copied_when_not_rebuilt(void **state)
{
	const uint64_t seed = 61;
	const size_t nd = 4096 * 4, nv = 16 * 32 * 64;
	float *wd = random_floats(seed, nd), *v = random_floats(seed + 1, nv), *x = random_floats(seed + 2, 4096 * 9);
	float *want = malloc(4096 * 8 * 8 * sizeof *want), *want_z = malloc(nv * sizeof *want_z), sum = 0.0f;
	struct th_ct2d p = { 1, 4096, 3, 3, 1, 2, 2, 4096, 2, 2, 1, 1, 0, 0, 6, 6 };
	size_t size;
	uint8_t *bytes = copied_model(wd, v, &size);
	(void)state;
	assert_non_null(want);
	assert_non_null(want_z);
	th_ref_conv_transpose2d(&p, x, wd, NULL, want);
	th_ref_depth_to_space(v, want_z, sizeof(float), 1, 16, 32, 64, 2, false);
	for (size_t i = 0; i < nv; i++)
		sum += v[i];
	for (size_t shift = 0; shift < 4; shift++) {
		struct th_alloc a;
		struct onnxrun_env *env = th_env_counted(&a);
		struct onnxrun_model *model = NULL;
		register_peek(env);
		TH_ASSERT_STATUS(load_at(env, bytes, size, shift, 0, &model), ONNXRUN_OK, onnxrun_env_error(env));
		assert_memory_equal(th_value_init(model, "wd")->data, wd, nd * sizeof(float));
		assert_memory_equal(th_value_init(model, "v")->data, v, nv * sizeof(float));
		assert_int_equal((uintptr_t)th_value_init(model, "v")->data % 64, 0);
		th_run_check(env, model, x, (const int64_t[]){ 1, 4096, 3, 3 }, 0, want, 4096 * 36, seed, "depthwise");
		th_run_check(env, model, x, (const int64_t[]){ 1, 4096, 3, 3 }, 1, v, nv, seed, "graph output");
		th_run_check(env, model, x, (const int64_t[]){ 1, 4096, 3, 3 }, 2, want_z, nv, seed, "DepthToSpace");
		th_run_check(env, model, x, (const int64_t[]){ 1, 4096, 3, 3 }, 3, &sum, 1, seed, "custom op");
		onnxrun_model_free(model);
		onnxrun_env_free(env);
		assert_int_equal(a.live, 0);
	}
	free(bytes);
	free(wd);
	free(v);
	free(x);
	free(want);
	free(want_z);
}

/* Every allocation of such a load fails once in turn: a clean OUT_OF_MEMORY each time
 * (never a load that succeeds with a constant it could not copy), nothing leaked. */
static void test_oom_sweep(void **state)
{
	size_t size_c, size_k;
	float *w = random_floats(71, C * MG * K * K), *wd = random_floats(72, 4096 * 4);
	float *v = random_floats(73, 16 * 32 * 64);
	uint8_t *conv = conv_model(w, 1, &size_c), *copied = copied_model(wd, v, &size_k);
	(void)state;
	for (int which = 0; which < 2; which++) {
		long failures = 0;
		for (long k = 0;; k++) {
			struct th_alloc a;
			struct onnxrun_env *env = th_env_counted(&a);
			struct onnxrun_model *model = NULL;
			enum onnxrun_status st;
			if (which)
				register_peek(env);
			a.fail_at = a.count + k;
			st = which ? load_at(env, copied, size_k, 1, 0, &model) : load_at(env, conv, size_c, 1, 0, &model);
			if (st == ONNXRUN_OK) {
				assert_true(a.count <= a.fail_at); /* every allocation was tried: done */
				if (which) {
					assert_non_null(th_value_init(model, "v")->data);
					assert_non_null(th_value_init(model, "wd")->data);
				}
				onnxrun_model_free(model);
				onnxrun_env_free(env);
				assert_int_equal(a.live, 0);
				break;
			}
			if (st != ONNXRUN_ERROR_OUT_OF_MEMORY)
				fail_msg("allocation %ld failed: status %d \"%s\"", k, (int)st, onnxrun_env_error(env));
			failures++;
			onnxrun_env_free(env);
			if (a.live != 0)
				fail_msg("allocation %ld failed: %ld blocks leaked", k, a.live);
		}
		assert_true(failures > 10);
	}
	free(conv);
	free(copied);
	free(w);
	free(wd);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strip_round_trip),
		cmocka_unit_test(test_strip_irregular),
		cmocka_unit_test(test_strip_differential),
		cmocka_unit_test(test_conv_packs_from_buffer),
		cmocka_unit_test(test_copied_when_not_rebuilt),
		cmocka_unit_test(test_oom_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
