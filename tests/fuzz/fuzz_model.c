/*
 * fuzz_model.c - libFuzzer target: bytes -> onnxrun_model_load_buffer -> (if it loads) a
 * session with every symbolic dim bound to a small value, inputs filled with small
 * deterministic values, run. Memory caps keep a hostile model from exhausting the fuzzer:
 * the env caps initializer bytes, the session caps the planned arena plus outputs, and
 * inputs are created only while their elements add up to at most FUZZ_MAX_INPUT_ELEMS
 * (else the run is skipped). That last bound keeps legitimate compute small: a
 * ConvTranspose costs about |X| * |W| / C multiply-adds, and W may itself be an input
 * (compute time is not capped by the library, by design).
 *
 * The loader keeps float32 raw_data out of the protobuf parse from 64 KiB on (strip.c);
 * fuzz inputs are small, so each one is loaded with that from 1 byte on, and then, as a
 * differential check, once more with it off: the status, the message and every
 * initializer's bytes must agree (a mismatch aborts).
 *
 * Every input is also inspected (onnxrun_model_inspect_buffer, which keeps nodes without an
 * implementation and guesses the types after them): a model that loads must inspect with
 * nothing unsupported, an inspected model is queried and its unsupported list read, and a
 * session on it must refuse to run (each violation aborts).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxrun.h"
#include "runtime/runtime.h"

/* Initializer bytes (env) and planned bytes per session: 16 MiB keeps each run well under
 * the 10 s timeout even on the slowest ConvTranspose path of the instrumented build. */
#define FUZZ_MEMORY_CAP ((uint64_t)16 << 20)
#define FUZZ_MAX_INPUT_ELEMS 8192
#define FUZZ_BOUND_DIM 2

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fills element i of t with a small value that depends only on i. */
static void fill_input(struct onnxrun_tensor *t)
{
	void *p = onnxrun_tensor_data(t);
	int64_t n = onnxrun_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		int v = (int)(i % 7) - 3;
		switch (onnxrun_tensor_dtype(t)) {
		case ONNXRUN_DTYPE_FLOAT: ((float *)p)[i] = (float)v * 0.25f; break;
		case ONNXRUN_DTYPE_DOUBLE: ((double *)p)[i] = (double)v * 0.25; break;
		case ONNXRUN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = (uint16_t)(0x3c00 + v); break;
		case ONNXRUN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = (uint16_t)(0x3f80 + v); break;
		case ONNXRUN_DTYPE_STRING: onnxrun_tensor_set_string(t, i, "ab", (size_t)(i % 3)); break;
		default: memset((char *)p + (size_t)i * onnxrun_dtype_size(onnxrun_tensor_dtype(t)),
		                v & 0xff, onnxrun_dtype_size(onnxrun_tensor_dtype(t)));
		}
	}
}

/* Creates input i from its declared type (unknown dims -> FUZZ_BOUND_DIM); NULL when the
 * type is not usable or the inputs' elements would pass *budget (which is charged). */
static struct onnxrun_tensor *make_input(struct onnxrun_env *env, const struct onnxrun_value_info *vi,
                                         int64_t *budget)
{
	int64_t dims[ONNXRUN_MAX_RANK], numel = 1;
	struct onnxrun_tensor *t = NULL;
	if (vi->rank < 0 || vi->dtype == ONNXRUN_DTYPE_UNDEFINED)
		return NULL;
	for (int32_t d = 0; d < vi->rank; d++) {
		dims[d] = vi->dims[d].value >= 0 ? vi->dims[d].value : FUZZ_BOUND_DIM;
		if (dims[d] > FUZZ_MAX_INPUT_ELEMS)
			return NULL;
		numel *= dims[d];
		if (numel > *budget)
			return NULL;
	}
	*budget -= numel;
	if (onnxrun_tensor_create(env, vi->dtype, vi->rank, dims, &t))
		return NULL;
	fill_input(t);
	return t;
}

/* Reads every query the API offers, so the tables built at load get exercised. */
static void query_model(const struct onnxrun_model *model)
{
	struct onnxrun_value_info vi;
	struct onnxrun_node_info ni;
	const char *domain;
	int64_t version;
	for (size_t i = 0; i < onnxrun_model_opset_count(model); i++)
		onnxrun_model_opset(model, i, &domain, &version);
	for (size_t i = 0; i < onnxrun_model_output_count(model); i++)
		onnxrun_model_output_info(model, i, &vi);
	for (size_t i = 0; i < onnxrun_model_node_count(model); i++)
		if (!onnxrun_model_node_info(model, i, &ni))
			for (size_t o = 0; o < ni.output_count; o++)
				if (ni.outputs[o][0])
					onnxrun_model_value_info(model, ni.outputs[o], &vi);
}

static void run_model(struct onnxrun_env *env, const struct onnxrun_model *model)
{
	struct onnxrun_tensor *inputs[16] = { NULL };
	struct onnxrun_session *s = NULL;
	size_t n_in = onnxrun_model_input_count(model);
	const struct onnxrun_tensor *out;
	bool complete = n_in <= 16;
	int64_t budget = FUZZ_MAX_INPUT_ELEMS;
	if (onnxrun_session_create(model, &s))
		return;
	onnxrun_session_set_max_memory(s, FUZZ_MEMORY_CAP);
	for (size_t i = 0; i < n_in && complete; i++) {
		struct onnxrun_value_info vi;
		if (onnxrun_model_input_info(model, i, &vi))
			break;
		for (int32_t d = 0; d < vi.rank; d++)
			if (vi.dims[d].value < 0 && vi.dims[d].param)
				onnxrun_session_bind_dim(s, vi.dims[d].param, FUZZ_BOUND_DIM);
		if (i + 1 == n_in)
			onnxrun_session_prepare(s); /* from declared shapes and bound dims alone */
		inputs[i] = make_input(env, &vi, &budget);
		complete = inputs[i] && !onnxrun_session_set_input(s, i, inputs[i]);
	}
	if (complete && !onnxrun_session_run(s)) {
		uint64_t planned;
		struct onnxrun_value_info vi;
		onnxrun_session_planned_bytes(s, &planned);
		for (size_t i = 0; i < onnxrun_model_output_count(model); i++)
			if (!onnxrun_session_output(s, i, &out)) {
				(void)onnxrun_tensor_numel(out);
				onnxrun_session_value_info(s, onnxrun_tensor_name(out), &vi);
			}
		onnxrun_session_run(s); /* a second run reuses the plan */
	}
	onnxrun_session_free(s);
	for (size_t i = 0; i < 16; i++)
		onnxrun_tensor_free(inputs[i]);
}

/* Inspects the bytes (see the top of the file); loaded: whether the normal load succeeded. */
static void inspect(struct onnxrun_env *env, const uint8_t *data, size_t size, bool loaded)
{
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_unsupported_info u;
	enum onnxrun_status st = onnxrun_model_inspect_buffer(env, data, size, NULL, &model);
	if (loaded && (st || onnxrun_model_unsupported_count(model))) {
		fprintf(stderr, "loads but inspects with status %d and %zu unsupported: %s\n", (int)st,
		        onnxrun_model_unsupported_count(model), onnxrun_env_error(env));
		abort();
	}
	if (st)
		return;
	query_model(model);
	for (size_t i = 0; i < onnxrun_model_unsupported_count(model); i++)
		if (onnxrun_model_unsupported(model, i, &u) || u.node_index >= onnxrun_model_node_count(model))
			abort();
	if (!onnxrun_session_create(model, &s) && onnxrun_model_node_count(model) &&
	    onnxrun_session_run(s) == ONNXRUN_OK)
		abort();
	onnxrun_session_free(s);
	onnxrun_model_free(model);
}

/* Aborts unless the two loads agree (see the top of the file). */
static void compare_loads(enum onnxrun_status st, const char *msg, const struct onnxrun_model *a,
                          enum onnxrun_status st_plain, const char *msg_plain, const struct onnxrun_model *b)
{
	bool same = st == st_plain && !strcmp(msg, msg_plain);
	for (size_t v = 0; same && !st && v < a->n_values; v++) {
		const struct onnxrun_tensor *x = a->values[v].init, *y = b->values[v].init;
		same = (x != NULL) == (y != NULL);
		if (same && x)
			same = !x->pending && x->nbytes == y->nbytes && (x->data != NULL) == (y->data != NULL) &&
			       (!x->data || x->dtype == ONNXRUN_DTYPE_STRING || !memcmp(x->data, y->data, x->nbytes));
	}
	if (!same) {
		fprintf(stderr, "stripped load: %d \"%s\"; plain load: %d \"%s\"\n", (int)st, msg, (int)st_plain,
		        msg_plain);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL, *plain = NULL;
	enum onnxrun_status st, st_plain;
	char msg[ONNXRUN__ERR_LEN];
	if (onnxrun_env_create(NULL, &env))
		return 0;
	onnxrun_env_set_max_memory(env, FUZZ_MEMORY_CAP);
	env->strip_min = 1;
	st = onnxrun_model_load_buffer(env, data, size, NULL, &model);
	snprintf(msg, sizeof msg, "%s", onnxrun_env_error(env));
	env->strip_min = SIZE_MAX;
	st_plain = onnxrun_model_load_buffer(env, data, size, NULL, &plain);
	compare_loads(st, msg, model, st_plain, onnxrun_env_error(env), plain);
	onnxrun_model_free(plain);
	inspect(env, data, size, !st);
	if (!st) {
		query_model(model);
		run_model(env, model);
		onnxrun_model_free(model);
	}
	onnxrun_env_free(env);
	return 0;
}
