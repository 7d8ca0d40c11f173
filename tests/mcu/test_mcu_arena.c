/*
 * test_mcu_arena.c - the whole upsampler in one arena on the target: every byte the library
 * allocates (load with protobuf-c's parse, session, planned tensors, the ops' workspace,
 * input and output tensors) comes from onnxrun_arena_init over one buffer; a counting
 * wrapper checks that onnxrun_session_run calls the allocator zero times after prepare; the
 * output is checked against the expected one. Prints the figures the README gives: the
 * arena's high-water mark, the planned tensor bytes, the rest (RAM beyond the tensors) and
 * the deepest stack use (painted stack). Checks that a tensor's record is sized by its rank. With ESTIMATE (the bytes `onnxrun --info` printed
 * on the host for a 32-bit bare-metal build), checks it is an upper bound of the measured
 * high-water mark within 10%.
 * The model is loaded borrowed (onnxrun_model_load_borrowed), as a firmware would.
 * Arguments: MODEL.onnx INPUT.pb EXPECTED.pb [ESTIMATE]
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcu_test.h"
#include "startup.h"

struct counting {
	struct onnxrun_allocator arena;
	long calls;
};

static void *counting_alloc(void *ctx, size_t size, size_t align)
{
	struct counting *c = ctx;
	c->calls++;
	return c->arena.alloc(c->arena.ctx, size, align);
}

static void counting_free(void *ctx, void *p, size_t size)
{
	struct counting *c = ctx;
	c->calls++;
	c->arena.free(c->arena.ctx, p, size);
}

/* A tensor's record is sized by its rank on bare metal (src/runtime/runtime.h), so the
 * session's records fit the load's holes: one of rank 12 takes 11 dims (88 bytes) more of an
 * arena than one of rank 1 (a fixed-size record: 0 more). Both are empty (a dim of 0: no data
 * block) and come from a small arena of their own; a block there may still take the 8 bytes
 * left of a hole that could not hold a free block (src/runtime/arena.c), so 80 to 96. Out of
 * line: its locals stay out of main's frame, which the stack figures include. */
static __attribute__((noinline)) void check_record_sizes(void)
{
	static unsigned char buf[4096] __attribute__((aligned(8)));
	struct onnxrun_allocator arena;
	struct onnxrun_env *env = NULL;
	int64_t dims[ONNXRUN_MAX_RANK];
	size_t took[2] = { 0, 0 };
	for (int i = 0; i < ONNXRUN_MAX_RANK; i++)
		dims[i] = i ? 1 : 0;
	CHECK(onnxrun_arena_init(&arena, buf, sizeof buf) == ONNXRUN_OK, "arena for the records");
	CHECK(onnxrun_env_create(&arena, &env) == ONNXRUN_OK, "env for the records");
	for (int k = 0; k < 2 && env; k++) {
		struct onnxrun_tensor *t = NULL;
		const size_t at = onnxrun_arena_used(&arena);
		CHECK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, k ? ONNXRUN_MAX_RANK : 1, dims, &t) == ONNXRUN_OK,
		      "tensor of rank %d", k ? ONNXRUN_MAX_RANK : 1);
		took[k] = onnxrun_arena_used(&arena) - at;
		onnxrun_tensor_free(t);
	}
	CHECK(took[1] >= took[0] + (ONNXRUN_MAX_RANK - 1) * sizeof(int64_t) - 8 &&
	          took[1] <= took[0] + (ONNXRUN_MAX_RANK - 1) * sizeof(int64_t) + 8,
	      "a rank-%d tensor takes %u arena bytes, a rank-1 one %u: not %u more (+-8)", ONNXRUN_MAX_RANK,
	      (unsigned)took[1], (unsigned)took[0], (unsigned)((ONNXRUN_MAX_RANK - 1) * sizeof(int64_t)));
	onnxrun_env_free(env);
}

int main(int argc, char **argv)
{
	static struct counting c;
	struct onnxrun_allocator alloc = { &c, counting_alloc, counting_free };
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *in = NULL, *want = NULL;
	const struct onnxrun_tensor *got = NULL;
	size_t model_size = 0, in_size = 0, want_size = 0, arena_size = 2u << 20, high, stack;
	size_t stack_load, stack_prepare, stack_run;
	void *model_bytes, *in_bytes, *want_bytes, *buf;
	uint64_t planned = 0;
	long before;
	if (argc < 4) {
		printf("usage: test_mcu_arena MODEL.onnx INPUT.pb EXPECTED.pb [ESTIMATE]\n");
		return 2;
	}
	model_bytes = mcu_read_file(argv[1], &model_size);
	in_bytes = mcu_read_file(argv[2], &in_size);
	want_bytes = mcu_read_file(argv[3], &want_size);
	CHECK(model_bytes && in_bytes && want_bytes, "cannot read the test files");
	if (mcu_failures)
		return mcu_finish("arena");
	buf = mcu_big_alloc(arena_size, 8);
	CHECK(onnxrun_arena_init(&c.arena, buf, arena_size) == ONNXRUN_OK, "arena");
	startup_stack_repaint();
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");
	CHECK(onnxrun_model_load_borrowed(env, model_bytes, model_size, &model) == ONNXRUN_OK, "load: %s",
	      onnxrun_env_error(env));
	stack_load = startup_stack_used();
	startup_stack_repaint();
	printf("arena: after load %u bytes in use (high-water %u)\n", (unsigned)onnxrun_arena_used(&c.arena),
	       (unsigned)onnxrun_arena_high_water(&c.arena));
	CHECK(onnxrun_tensor_decode_pb(env, in_bytes, in_size, &in) == ONNXRUN_OK, "input: %s",
	      onnxrun_env_error(env));
	if (mcu_failures)
		return mcu_finish("arena");
	CHECK(onnxrun_session_create(model, &s) == ONNXRUN_OK, "session");
	CHECK(onnxrun_session_set_input(s, 0, in) == ONNXRUN_OK, "%s", onnxrun_session_error(s));
	printf("arena: after the input and the session %u bytes in use\n", (unsigned)onnxrun_arena_used(&c.arena));
	CHECK(onnxrun_session_prepare(s) == ONNXRUN_OK, "prepare: %s", onnxrun_session_error(s));
	stack_prepare = startup_stack_used();
	startup_stack_repaint();
	printf("arena: after prepare %u bytes in use\n", (unsigned)onnxrun_arena_used(&c.arena));
	for (int run = 0; run < 2; run++) {
		before = c.calls;
		CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "run: %s", onnxrun_session_error(s));
		CHECK(c.calls == before, "run %d called the allocator %ld times", run, c.calls - before);
	}
	stack_run = startup_stack_used();
	stack = stack_load > stack_prepare ? stack_load : stack_prepare;
	stack = stack > stack_run ? stack : stack_run;
	printf("arena: deepest stack: load %u, input + session + prepare %u, runs %u bytes\n", (unsigned)stack_load,
	       (unsigned)stack_prepare, (unsigned)stack_run);
	high = onnxrun_arena_high_water(&c.arena);
	CHECK(onnxrun_session_planned_bytes(s, &planned) == ONNXRUN_OK, "planned bytes");
	/* the expected output is decoded into another buffer: the figures are the library's */
	CHECK(onnxrun_session_output(s, 0, &got) == ONNXRUN_OK, "output");
	/* element data keeps its documented 16-byte alignment while the records beside it take
	 * 8-byte headers (src/runtime/core.c): the decoded input, the planned output and a
	 * created tensor (two, one after the other) */
	CHECK((uintptr_t)onnxrun_tensor_data(in) % 16 == 0, "input data at %p", onnxrun_tensor_data(in));
	CHECK((uintptr_t)onnxrun_tensor_data(got) % 16 == 0, "output data at %p", onnxrun_tensor_data(got));
	{
		const int64_t dims[1] = { 3 };
		struct onnxrun_tensor *t[2] = { NULL, NULL };
		for (int k = 0; k < 2; k++) {
			CHECK(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, 1, dims, &t[k]) == ONNXRUN_OK, "tensor");
			if (t[k])
				CHECK((uintptr_t)onnxrun_tensor_data(t[k]) % 16 == 0, "created tensor %d's data at %p", k,
				      onnxrun_tensor_data(t[k]));
		}
		onnxrun_tensor_free(t[0]);
		onnxrun_tensor_free(t[1]);
	}
	check_record_sizes();
	{
		struct onnxrun_env *env2 = NULL;
		void *buf2 = mcu_big_alloc(512u << 10, 8);
		struct onnxrun_allocator a2;
		CHECK(onnxrun_arena_init(&a2, buf2, 512u << 10) == ONNXRUN_OK, "arena 2");
		CHECK(onnxrun_env_create(&a2, &env2) == ONNXRUN_OK, "env 2");
		CHECK(onnxrun_tensor_decode_pb(env2, want_bytes, want_size, &want) == ONNXRUN_OK, "expected");
		if (!mcu_failures) {
			const float *g = onnxrun_tensor_data(got), *w = onnxrun_tensor_data(want);
			int64_t n = onnxrun_tensor_numel(want), bad = 0;
			CHECK(onnxrun_tensor_numel(got) == n, "output size");
			for (int64_t i = 0; i < n && onnxrun_tensor_numel(got) == n; i++)
				if (!(fabsf(g[i] - w[i]) <= 1e-7f + 1e-3f * fabsf(w[i])))
					bad++;
			CHECK(bad == 0, "%ld of %ld elements differ", (long)bad, (long)n);
		}
		onnxrun_tensor_free(want);
		onnxrun_env_free(env2);
	}
	printf("arena: high-water %u bytes: planned tensors %u, input %u, the rest %u; stack %u bytes\n",
	       (unsigned)high, (unsigned)planned, (unsigned)onnxrun_tensor_nbytes(in),
	       (unsigned)(high - planned - onnxrun_tensor_nbytes(in)), (unsigned)stack);
	if (argc >= 5) {
		const unsigned long estimate = strtoul(argv[4], NULL, 10);
		printf("arena: estimate %lu bytes (onnxrun --info), %.1f%% above the measured\n", estimate,
		       100.0 * ((double)estimate - (double)high) / (double)high);
		CHECK(estimate >= high, "the estimate %lu is below the measured %u", estimate, (unsigned)high);
		CHECK((double)estimate <= 1.1 * (double)high, "the estimate %lu is more than 10%% above %u", estimate,
		      (unsigned)high);
	}
	onnxrun_session_free(s);
	onnxrun_tensor_free(in);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	CHECK(onnxrun_arena_used(&c.arena) == 0, "%u bytes still in use after everything was freed",
	      (unsigned)onnxrun_arena_used(&c.arena));
	return mcu_finish("arena");
}
