/*
 * test_mcu_insns.c - instructions executed per multiply-add on the bundled upsampler
 * (models/upsampler), with the portable (scalar) kernels and, on a CPU with Helium, the MVE
 * ones; the MVE run must execute at least 3 times fewer instructions per multiply-add
 * (docs/platforms.md, Microcontrollers; targets/cortex-m/count_insns.sh runs it).
 *
 * qemu is not cycle-accurate, but with `-icount shift=0` its virtual clock advances exactly
 * 1 ns per guest instruction, and SysTick (on the processor clock) counts that clock down:
 * instructions = ticks x (instructions per tick). The instructions per tick are measured
 * first on a loop of a known instruction count (subs + bne, 2 per iteration), so neither
 * the board's clock nor qemu's icount scale is assumed. One run of the model after a first
 * (warm-up) run is counted: what a firmware's loop executes per inference.
 * Without -icount the figures are meaningless and the test says so and fails.
 *
 * Multiply-adds of the upsampler, counted from the spec (products that land inside the
 * output): conv1 3->12 channels, k3 s1 p1, 32x32 -> 32x32: per axis 32*3 - 2 = 94 (input,
 * tap) pairs inside, 3*12*94^2 = 318096; conv2 3->3, k4 s2 p1, 64x64 -> 128x128: per axis
 * 64*4 - 2 = 254, 3*3*254^2 = 580644. DepthToSpace has none.
 * Arguments: MODEL.onnx INPUT.pb EXPECTED.pb [scalar|mve] (one kernel set only: for profiling
 * with qemu's -d exec, without the ratio check)
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"
#include "mcu_test.h"

#define UPSAMPLER_MACS (318096.0 + 580644.0)

/* SysTick (ARMv7-M/ARMv8-M system control space). */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_ENABLE 1u
#define SYST_CLKSOURCE_CPU 4u
#define SYST_COUNTFLAG (1u << 16)

static void systick_start(void)
{
	SYST_CSR = 0;
	SYST_RVR = 0xffffffu;
	SYST_CVR = 0; /* any write clears the counter and COUNTFLAG */
	SYST_CSR = SYST_ENABLE | SYST_CLKSOURCE_CPU;
	(void)SYST_CSR;
}

/* Ticks since `from` (a CVR value); sets *wrapped when the 24-bit counter wrapped. */
static uint32_t systick_since(uint32_t from, int *wrapped)
{
	const uint32_t now = SYST_CVR;
	*wrapped = (SYST_CSR & SYST_COUNTFLAG) != 0;
	return (from - now) & 0xffffffu;
}

/* 2 * n instructions (n > 0). */
static void known_loop(uint32_t n)
{
	__asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
}

static void *bump_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	return mcu_big_alloc(size, align);
}

static void bump_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)p;
	(void)size;
}

/* Instructions of one run of the model with the kernels of `isa`; < 0 on failure. */
static double count_run(enum onnxrun__isa isa, const void *model_bytes, size_t model_size,
                        const struct onnxrun_tensor *in, const struct onnxrun_tensor *want, double insns_per_tick)
{
	struct onnxrun_allocator alloc = { NULL, bump_alloc, bump_free };
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	const struct onnxrun_tensor *got = NULL;
	double insns = -1.0;
	int wrapped = 0;
	const size_t mark = mcu_big_mark();
	/* the weights are packed at load for the kernels in use: choose them first */
	CHECK(onnxrun__isa_set(isa) == isa, "isa %d not available", (int)isa);
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");
	CHECK(onnxrun_model_load_buffer(env, model_bytes, model_size, NULL, &model) == ONNXRUN_OK, "load: %s",
	      onnxrun_env_error(env));
	if (mcu_failures)
		goto out;
	CHECK(onnxrun_session_create(model, &s) == ONNXRUN_OK, "session");
	CHECK(onnxrun_session_set_input(s, 0, in) == ONNXRUN_OK, "%s", onnxrun_session_error(s));
	CHECK(onnxrun_session_run(s) == ONNXRUN_OK, "run: %s", onnxrun_session_error(s));
	if (mcu_failures)
		goto out;
	systick_start();
	const uint32_t t0 = SYST_CVR;
	const int rc = onnxrun_session_run(s);
	const uint32_t ticks = systick_since(t0, &wrapped);
	CHECK(rc == ONNXRUN_OK, "run: %s", onnxrun_session_error(s));
	CHECK(!wrapped, "SysTick wrapped: the run is too long to count this way");
	CHECK(onnxrun_session_output(s, 0, &got) == ONNXRUN_OK, "output");
	if (mcu_failures)
		goto out;
	const float *g = onnxrun_tensor_data(got), *w = onnxrun_tensor_data(want);
	const int64_t n = onnxrun_tensor_numel(want);
	int64_t bad = 0;
	CHECK(onnxrun_tensor_numel(got) == n && n == 3 * 128 * 128, "output has %ld elements",
	      (long)onnxrun_tensor_numel(got));
	for (int64_t i = 0; i < n && onnxrun_tensor_numel(got) == n; i++)
		bad += !(fabsf(g[i] - w[i]) <= 1e-7f + 1e-3f * fabsf(w[i]));
	CHECK(bad == 0, "%s kernels: %ld of %ld elements differ from the expected output",
	      onnxrun__kernels_for(isa)->name, (long)bad, (long)n);
	insns = (double)ticks * insns_per_tick;
out:
	onnxrun_session_free(s);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	mcu_big_release(mark);
	return mcu_failures ? -1.0 : insns;
}

int main(int argc, char **argv)
{
	struct onnxrun_allocator alloc = { NULL, bump_alloc, bump_free };
	struct onnxrun_env *env = NULL;
	struct onnxrun_tensor *in = NULL, *want = NULL;
	size_t model_size = 0, in_size = 0, want_size = 0;
	void *model_bytes, *in_bytes, *want_bytes;
	int wrapped = 0;
	if (argc < 4) {
		printf("usage: test_mcu_insns MODEL.onnx INPUT.pb EXPECTED.pb (under qemu with -icount shift=0)\n");
		return 2;
	}
	/* instructions per SysTick tick, from 2 x 4,000,000 known instructions */
	const uint32_t loop_n = 4000000;
	systick_start();
	const uint32_t c0 = SYST_CVR;
	known_loop(loop_n);
	const uint32_t cal_ticks = systick_since(c0, &wrapped);
	CHECK(!wrapped && cal_ticks > 0, "SysTick does not count (ticks %lu)", (unsigned long)cal_ticks);
	if (mcu_failures)
		return mcu_finish("insns");
	const double insns_per_tick = 2.0 * loop_n / cal_ticks;
	/* under -icount shift=0 a tick is (1e9 / clock) instructions: 31.25 at the AN547's
	 * 32 MHz, 40 at the AN386's 25 MHz; host time (no -icount) gives other values */
	printf("insns: %.3f instructions per SysTick tick (%.1f MHz at 1 instruction per ns)\n", insns_per_tick,
	       1e3 / insns_per_tick);
	CHECK(insns_per_tick >= 1.0 && insns_per_tick <= 1000.0 && fabs(insns_per_tick - floor(insns_per_tick * 4 + 0.5) / 4) < 0.01,
	      "%.3f instructions per tick: not a run under qemu -icount shift=0", insns_per_tick);

	model_bytes = mcu_read_file(argv[1], &model_size);
	in_bytes = mcu_read_file(argv[2], &in_size);
	want_bytes = mcu_read_file(argv[3], &want_size);
	CHECK(model_bytes && in_bytes && want_bytes, "cannot read the test files");
	if (mcu_failures)
		return mcu_finish("insns");
	CHECK(onnxrun_env_create(&alloc, &env) == ONNXRUN_OK, "env");
	CHECK(onnxrun_tensor_decode_pb(env, in_bytes, in_size, &in) == ONNXRUN_OK, "input");
	CHECK(onnxrun_tensor_decode_pb(env, want_bytes, want_size, &want) == ONNXRUN_OK, "expected");
	if (mcu_failures)
		return mcu_finish("insns");

	const char *only = argc > 4 ? argv[4] : "";
	if (*only) {
		const enum onnxrun__isa isa = !strcmp(only, "mve") ? ONNXRUN__ISA_MVE : ONNXRUN__ISA_SCALAR;
		const double one = count_run(isa, model_bytes, model_size, in, want, insns_per_tick);
		printf("insns: %s kernels: %.0f instructions, %.2f per multiply-add\n", only, one, one / UPSAMPLER_MACS);
		return mcu_finish("insns");
	}
	const double portable = count_run(ONNXRUN__ISA_SCALAR, model_bytes, model_size, in, want, insns_per_tick);
	if (portable > 0)
		printf("insns: portable (scalar) kernels: %.0f instructions, %.2f per multiply-add (%.0f multiply-adds)\n",
		       portable, portable / UPSAMPLER_MACS, UPSAMPLER_MACS);
	if (onnxrun__isa_supported(ONNXRUN__ISA_MVE)) {
		const double mve = count_run(ONNXRUN__ISA_MVE, model_bytes, model_size, in, want, insns_per_tick);
		if (mve > 0 && portable > 0) {
			printf("insns: mve kernels: %.0f instructions, %.2f per multiply-add\n", mve, mve / UPSAMPLER_MACS);
			printf("insns: portable / mve = %.2f\n", portable / mve);
			CHECK(portable >= 3.0 * mve, "MVE executes %.2fx fewer instructions than portable, not >= 3x",
			      portable / mve);
		}
	} else {
		printf("insns: no Helium on this CPU: portable kernels only\n");
	}
	onnxrun_tensor_free(in);
	onnxrun_tensor_free(want);
	onnxrun_env_free(env);
	return mcu_finish("insns");
}
