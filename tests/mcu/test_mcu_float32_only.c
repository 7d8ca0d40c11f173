/*
 * test_mcu_float32_only.c - the float32-only build (CMake option ONNXRUN_FLOAT32_ONLY): a
 * ConvTranspose or DepthToSpace node of a dtype the build leaves out (float16, bfloat16,
 * float64) fails with ONNXRUN_ERROR_UNSUPPORTED and a message naming the node and the dtype;
 * float32 nodes of both ops still load and compute (values from the ONNX definitions: a 1x1
 * ConvTranspose multiplies by the weight, DepthToSpace DCR with blocksize 2 turns 4
 * channels of one pixel into a 2x2 block in channel order).
 */
#include <stdbool.h>
#include <string.h>

#include "mcu_test.h"
#include "model_builder.h"

/* A model of one node `name` of op_type on inputs of dtype (X, and W for ConvTranspose). */
static uint8_t *one_node(const char *op_type, const char *name, int dtype, size_t *size)
{
	Onnx__ModelProto *m = mb_model(8);
	const bool convt = strcmp(op_type, "ConvTranspose") == 0;
	mb_opset(m, "", 22);
	mb_input(m, "x", dtype, convt ? "1,1,1,1" : "1,4,1,1");
	if (convt)
		mb_input(m, "w", dtype, "1,1,1,1");
	mb_output(m, "y", dtype, NULL);
	Onnx__NodeProto *n = mb_node(m, name, op_type, "", convt ? "x,w" : "x", "y");
	if (!convt)
		mb_attr_int(n, "blocksize", 2);
	uint8_t *bytes = mb_pack(m, size);
	mb_free(m);
	return bytes;
}

/* Loads the model and prepares a session; the first status that is not OK, with its message. */
static enum onnxrun_status load_prepare(struct onnxrun_env *env, const uint8_t *bytes, size_t size,
                                        struct onnxrun_model **model, struct onnxrun_session **s, const char **msg)
{
	enum onnxrun_status st;
	*model = NULL;
	*s = NULL;
	if ((st = onnxrun_model_load_buffer(env, bytes, size, NULL, model))) {
		*msg = onnxrun_env_error(env);
		return st;
	}
	if ((st = onnxrun_session_create(*model, s))) {
		*msg = onnxrun_env_error(env);
		return st;
	}
	st = onnxrun_session_prepare(*s);
	*msg = onnxrun_session_error(*s);
	return st;
}

static void refused(struct onnxrun_env *env, const char *op_type, const char *node, int dtype, const char *dname)
{
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	const char *msg = "";
	size_t size;
	uint8_t *bytes = one_node(op_type, node, dtype, &size);
	enum onnxrun_status st = load_prepare(env, bytes, size, &model, &s, &msg);
	CHECK(st == ONNXRUN_ERROR_UNSUPPORTED, "%s %s: status %d (%s)", op_type, dname, (int)st, msg);
	CHECK(strstr(msg, node) != NULL, "message names the node %s: %s", node, msg);
	CHECK(strstr(msg, dname) != NULL, "message names the dtype %s: %s", dname, msg);
	printf("float32_only: %s\n", msg);
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	free(bytes);
}

/* Runs the float32 node on x (n values) and checks y against want (n values). */
static void runs(struct onnxrun_env *env, const char *op_type, const float *x, const float *w, const float *want,
                 int64_t n)
{
	struct onnxrun_model *model;
	struct onnxrun_session *s;
	struct onnxrun_tensor *tx = NULL, *tw = NULL;
	const struct onnxrun_tensor *y = NULL;
	const char *msg = "";
	size_t size;
	const bool convt = strcmp(op_type, "ConvTranspose") == 0;
	const int64_t dx[4] = { 1, convt ? 1 : 4, 1, 1 }, dw[4] = { 1, 1, 1, 1 };
	uint8_t *bytes = one_node(op_type, "f32_node", MB_FLOAT, &size);
	enum onnxrun_status st = load_prepare(env, bytes, size, &model, &s, &msg);
	CHECK(st == ONNXRUN_OK, "%s float32: %s", op_type, msg);
	if (st == ONNXRUN_OK) {
		CHECK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, dx, &tx) == ONNXRUN_OK, "x");
		memcpy(onnxrun_tensor_data(tx), x, (size_t)dx[1] * sizeof *x);
		CHECK(onnxrun_session_set_input(s, 0, tx) == ONNXRUN_OK, "set x");
		if (convt) {
			CHECK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 4, dw, &tw) == ONNXRUN_OK, "w");
			memcpy(onnxrun_tensor_data(tw), w, sizeof *w);
			CHECK(onnxrun_session_set_input(s, 1, tw) == ONNXRUN_OK, "set w");
		}
		CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "%s run: %s", op_type, onnxrun_session_error(s));
		CHECK(onnxrun_session_output(s, 0, &y) == ONNXRUN_OK && onnxrun_tensor_numel(y) == n, "%s output", op_type);
		for (int64_t i = 0; y && i < n && i < onnxrun_tensor_numel(y); i++)
			CHECK(((const float *)onnxrun_tensor_data(y))[i] == want[i], "%s y[%d] = %g, want %g", op_type, (int)i,
			      (double)((const float *)onnxrun_tensor_data(y))[i], (double)want[i]);
	}
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_tensor_free(tx);
	onnxrun_tensor_free(tw);
	free(bytes);
}

/* onnxrun's arena; test memory (BIGRAM) is newlib's heap here (big_heap.c), which
 * model_builder.h allocates the messages from */
static _Alignas(16) unsigned char arena[64 * 1024];

int main(void)
{
	const size_t arena_size = sizeof arena;
	struct onnxrun_allocator alloc;
	struct onnxrun_env *env = NULL;
	CHECK(onnxrun_arena_init(&alloc, arena, arena_size) == ONNXRUN_OK, "arena");
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");

	refused(env, "ConvTranspose", "up_half", MB_FLOAT16, "float16");
	refused(env, "ConvTranspose", "up_bf16", MB_BFLOAT16, "bfloat16");
	refused(env, "ConvTranspose", "up_double", MB_DOUBLE, "double");
	refused(env, "DepthToSpace", "d2s_half", MB_FLOAT16, "float16");
	refused(env, "DepthToSpace", "d2s_double", MB_DOUBLE, "double");
	refused(env, "DepthToSpace", "d2s_int8", MB_INT8, "int8");

	runs(env, "ConvTranspose", (const float[]){ 3.0f }, (const float[]){ -2.5f }, (const float[]){ -7.5f }, 1);
	runs(env, "DepthToSpace", (const float[]){ 1, 2, 3, 4 }, NULL, (const float[]){ 1, 2, 3, 4 }, 4);

	onnxrun_env_free(env);
	CHECK(onnxrun_arena_used(&alloc) == 0, "arena empty at the end");
	return mcu_finish("float32_only");
}
