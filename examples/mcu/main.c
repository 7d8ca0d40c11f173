/*
 * main.c - onnxrun on a microcontroller: the upsampler (models/upsampler, ConvTranspose ->
 * DepthToSpace -> ConvTranspose, [1,3,32,32] -> [1,3,128,128]) run from flash with every
 * byte of RAM the library uses in one static arena, written only against include/onnxrun.h.
 *
 *   - model_data.c: the .onnx as a const, 64-byte-aligned array (onnxrun --c-array), read in
 *     place by onnxrun_model_load_borrowed: its float32 weights are never copied to RAM;
 *   - input_data.c: the test input (a TensorProto, decoded into the arena);
 *   - expected.h: 64 values and the sum of the expected output, to print PASS or FAIL;
 *   - the arena: ARENA_BYTES of .bss, sized from `onnxrun --info model.onnx` (the bytes a
 *     32-bit bare-metal build needs) with a little room.
 *
 * The timings are in executed instructions: SysTick on the processor clock under qemu's
 * -icount shift=0 (make run passes it: one instruction per virtual nanosecond), cycles on
 * hardware. Build and run: README, Microcontrollers.
 */
#include <math.h>
#include <stdio.h>

#include "onnxrun.h"
#include "expected.h"
#include "cycles.h"
#include "startup.h"

extern const unsigned char model_onnx[], input_0_pb[];
extern const size_t model_onnx_size, input_0_pb_size;

#ifndef ARENA_BYTES
#define ARENA_BYTES (400u << 10)
#endif
static _Alignas(16) unsigned char arena[ARENA_BYTES];

/* SysTick ticks (targets/cortex-m/cycles.h) as instructions under qemu -icount shift=0
 * (one per virtual nanosecond); on hardware, BOARD_CLOCK_HZ = the CPU clock gives cycles. */
#ifndef BOARD_CLOCK_HZ
#define BOARD_CLOCK_HZ 25000000u
#endif
static unsigned long long now_instructions(void)
{
	return cycles_now() * 1000000000ull / BOARD_CLOCK_HZ;
}

static int check(const struct onnxrun_tensor *y)
{
	const float *v = onnxrun_tensor_data(y);
	double sum = 0;
	int bad = 0;
	if (onnxrun_tensor_numel(y) != EXPECTED_COUNT)
		return printf("output has %ld values, expected %d\n", (long)onnxrun_tensor_numel(y), EXPECTED_COUNT), 1;
	for (int i = 0; i < EXPECTED_COUNT; i++)
		sum += v[i];
	for (int i = 0; i < 64; i++)
		if (!(fabsf(v[i * EXPECTED_STEP] - expected_samples[i]) <= 1e-7f + 1e-3f * fabsf(expected_samples[i])))
			bad++;
	if (!(fabs(sum - EXPECTED_SUM) <= 1e-3 * (1 + fabs(EXPECTED_SUM))))
		bad++;
	printf("output sum %.6g (expected %.6g), %d of 65 checks off\n", sum, EXPECTED_SUM, bad);
	return bad;
}

int main(void)
{
	struct onnxrun_allocator alloc;
	struct onnxrun_env *env;
	struct onnxrun_model *model;
	struct onnxrun_session *session;
	struct onnxrun_tensor *x;
	const struct onnxrun_tensor *y;
	unsigned long long t0, t1, t2, t3;
	int bad = 1;

	cycles_start();
	if (onnxrun_arena_init(&alloc, arena, sizeof arena) || onnxrun_env_create(&alloc, &env))
		return printf("FAIL: arena\n"), 1;
	t0 = now_instructions();
	if (onnxrun_model_load_borrowed(env, model_onnx, model_onnx_size, &model))
		return printf("FAIL: load: %s\n", onnxrun_env_error(env)), 1;
	if (onnxrun_tensor_decode_pb(env, input_0_pb, input_0_pb_size, &x) ||
	    onnxrun_session_create(model, &session))
		return printf("FAIL: %s\n", onnxrun_env_error(env)), 1;
	if (onnxrun_session_set_input(session, 0, x) || onnxrun_session_prepare(session))
		return printf("FAIL: %s\n", onnxrun_session_error(session)), 1;
	t1 = now_instructions();
	if (onnxrun_session_run(session))
		return printf("FAIL: run: %s\n", onnxrun_session_error(session)), 1;
	t2 = now_instructions();
	if (onnxrun_session_run(session) || onnxrun_session_output(session, 0, &y))
		return printf("FAIL: run: %s\n", onnxrun_session_error(session)), 1;
	t3 = now_instructions();
	bad = check(y);
	printf("load + prepare: %llu instructions; run: %llu and %llu instructions\n", t1 - t0, t2 - t1, t3 - t2);
	printf("arena: %u of %u bytes at most; stack: %u bytes at most\n", (unsigned)onnxrun_arena_high_water(&alloc),
	       (unsigned)sizeof arena, (unsigned)startup_stack_used());
	onnxrun_session_free(session);
	onnxrun_tensor_free(x);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
