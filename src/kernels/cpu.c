/*
 * cpu.c - what this CPU can run and how large its caches are, read once; the ISA in use
 * (ONNXRUN_KERNEL=scalar|avx2|avx512|simd128|neon|mve forces one); the tuning derived from the caches.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "parts.h"
#include "../platform/platform.h"

static struct onnxrun__cpu_features features;
static onnxrun__os_once features_once = ONNXRUN__OS_ONCE_INIT;

static void detect_features(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;
	__builtin_cpu_init();
	features.avx2 = __builtin_cpu_supports("avx2");
	features.fma = __builtin_cpu_supports("fma");
	features.avx512f = __builtin_cpu_supports("avx512f");
	/* CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c") */
	features.f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
#ifndef ONNXRUN_BAREMETAL
	/* family: base (EAX bits 8-11), plus the extended family (bits 20-27) when the base is
	 * 0xF; AMD's vendor string in EBX, EDX, ECX of leaf 0 */
	if (features.avx512f && __get_cpuid(1, &a, &b, &c, &d)) {
		const unsigned int family = ((a >> 8) & 0xF) + (((a >> 8) & 0xF) == 0xF ? (a >> 20) & 0xFF : 0);
		unsigned int v0, v1, v2, v3;
		const bool amd = __get_cpuid(0, &v0, &v1, &v2, &v3) && v1 == 0x68747541u && v3 == 0x69746e65u &&
		                 v2 == 0x444d4163u; /* "Auth" "enti" "cAMD" */
		features.amd_avx512 = amd && (family == 0x19 || family == 0x1A);
	}
#endif
#endif
}

const struct onnxrun__cpu_features *onnxrun__cpu_features(void)
{
	onnxrun__os_call_once(&features_once, detect_features);
	return &features;
}

/* The tables this build has (NULL where the ISA's files were compiled for another CPU
 * family): each ISA's file set defines its table only where its instructions exist. */
ONNXRUN__HIDDEN extern const struct onnxrun__kernels onnxrun__kernels_scalar;
#if defined(__x86_64__)
ONNXRUN__HIDDEN extern const struct onnxrun__kernels onnxrun__kernels_avx2;
ONNXRUN__HIDDEN extern const struct onnxrun__kernels onnxrun__kernels_avx512;
#endif
#if defined(__wasm_simd128__)
ONNXRUN__HIDDEN extern const struct onnxrun__kernels onnxrun__kernels_simd128;
#endif
#if defined(__aarch64__)
ONNXRUN__HIDDEN extern const struct onnxrun__kernels onnxrun__kernels_neon;
#endif
#if ONNXRUN__HAVE_MVE
ONNXRUN__HIDDEN extern const struct onnxrun__kernels onnxrun__kernels_mve;
#endif

static const struct onnxrun__kernels *table(enum onnxrun__isa isa)
{
	switch (isa) {
	case ONNXRUN__ISA_SCALAR: return &onnxrun__kernels_scalar;
#if defined(__x86_64__)
	case ONNXRUN__ISA_AVX2: return &onnxrun__kernels_avx2;
	case ONNXRUN__ISA_AVX512: return &onnxrun__kernels_avx512;
#endif
#if defined(__wasm_simd128__)
	case ONNXRUN__ISA_SIMD128: return &onnxrun__kernels_simd128;
#endif
#if defined(__aarch64__)
	case ONNXRUN__ISA_NEON: return &onnxrun__kernels_neon;
#endif
#if ONNXRUN__HAVE_MVE
	case ONNXRUN__ISA_MVE: return &onnxrun__kernels_mve;
#endif
	default: return NULL;
	}
}

bool onnxrun__isa_supported(enum onnxrun__isa isa)
{
	const struct onnxrun__cpu_features *f = onnxrun__cpu_features();
	if (!table(isa))
		return false;
	if (isa == ONNXRUN__ISA_AVX512)
		return f->avx512f && f->fma;
	if (isa == ONNXRUN__ISA_AVX2)
		return f->avx2 && f->fma;
	/* A module built with SIMD128 does not load on an engine without it: the build decides. */
	if (isa == ONNXRUN__ISA_SIMD128)
		return true;
	/* Advanced SIMD is part of the AArch64 base architecture (no optional extension such as
	 * SVE is used): built for AArch64, every CPU that runs the library has it. */
	if (isa == ONNXRUN__ISA_NEON)
		return true;
	/* Helium is chosen at compile time (-mcpu=cortex-m55 and the like): a firmware built
	 * for it runs only on a CPU that has it. */
	if (isa == ONNXRUN__ISA_MVE)
		return true;
	return isa == ONNXRUN__ISA_SCALAR;
}

/* The best supported ISA not above `want`. */
static enum onnxrun__isa clamp(enum onnxrun__isa want)
{
	if (want >= ONNXRUN__ISA_COUNT)
		want = (enum onnxrun__isa)(ONNXRUN__ISA_COUNT - 1);
	while (want > ONNXRUN__ISA_SCALAR && !onnxrun__isa_supported(want))
		want = (enum onnxrun__isa)(want - 1);
	return want;
}

static atomic_int chosen = -1;

enum onnxrun__isa onnxrun__isa_current(void)
{
	int isa = atomic_load_explicit(&chosen, memory_order_relaxed);
	const char *e;
	if (isa >= 0)
		return (enum onnxrun__isa)isa;
	isa = ONNXRUN__ISA_COUNT - 1;
	if ((e = getenv("ONNXRUN_KERNEL")) != NULL)
		for (int i = 0; i < ONNXRUN__ISA_COUNT; i++)
			if (table((enum onnxrun__isa)i) && !strcmp(e, table((enum onnxrun__isa)i)->name))
				isa = i;
	isa = (int)clamp((enum onnxrun__isa)isa);
	atomic_store_explicit(&chosen, isa, memory_order_relaxed);
	return (enum onnxrun__isa)isa;
}

enum onnxrun__isa onnxrun__isa_set(enum onnxrun__isa isa)
{
	isa = clamp(isa);
	atomic_store_explicit(&chosen, (int)isa, memory_order_relaxed);
	return isa;
}

const struct onnxrun__kernels *onnxrun__kernels_for(enum onnxrun__isa isa)
{
	return table(clamp(isa));
}

const struct onnxrun__kernels *onnxrun__kernels_current(void)
{
	return table(onnxrun__isa_current());
}

/* ---- caches and tuning ------------------------------------------------------------------------ */

/* A cache size (level 1: L1 data, 2: L2) where the C library reports one (glibc reads
 * CPUID), else def; values outside [16 KiB, 64 MiB] are taken as wrong. */
static size_t cache_size(int level, size_t def)
{
	long v = onnxrun__os_cache_size(level);
	return v >= (16 << 10) && v <= (64L << 20) ? (size_t)v : def;
}

static struct onnxrun__tuning tuning;
static atomic_int tuning_ready;

const struct onnxrun__tuning *onnxrun__tuning(void)
{
	if (atomic_load_explicit(&tuning_ready, memory_order_acquire))
		return &tuning;
	/* Racing first calls compute the same values; each writes the whole struct before
	 * publishing, and readers only read after the flag. */
	struct onnxrun__tuning t;
	t.l1d = cache_size(1, 48 << 10);
	t.l2 = cache_size(2, 2 << 20);
	/* Fixed sizes, not fractions of the detected L2: scaled with a smaller L2 they were
	 * measured slower (bench/README.md, "Why the tuning sizes are fixed"), so the rule that
	 * links them to the caches is not known yet. */
	t.phase_tile_bytes = 384 << 10;
	t.phase_weights_l2 = 1 << 20;
	t.phase_bpanels_bytes = 256 << 10;
	/* The one size that follows the L2: an output at least as large does not stay there
	 * for whatever reads it next, so its stores bypass the caches (bench/README.md, "Outputs
	 * as large as L2 streamed": 2-4% faster for 1-3.2 MiB outputs with a 1 MiB L2, where the
	 * fixed 4 MiB left them to plain stores) */
	t.stream_output_bytes = t.l2;
	t.stage_bytes = 1 << 20;
	t.half_rows_calls = 4;
	t.in_place_calls = 16;
	t.stage_calls = 4;
#ifndef ONNXRUN_BAREMETAL
	/* The skip_quarter tile (AVX-512) on AMD families 0x19 and 0x1A (Zen 4, Zen 5) alone, where
	 * it was measured (bench/README.md, "Measurements behind fixed choices": dcgan_512 6%
	 * faster on Zen 4, 5% on Zen 5): it leaves out 6 of a step's 24 FMAs on the padded steps
	 * but adds 2 permutes and 6 broadcast loads per step; on cores whose permutes issue on an
	 * FMA port (Intel's AVX-512 server cores, port 5) that trade is not measured. */
	t.skip_quarters = onnxrun__cpu_features()->amd_avx512;
#endif
#if defined(__wasm_simd128__)
	/* SIMD128 (bench/README.md, "Measurements behind fixed choices"): the call limits above
	 * count calls of 8 rows (ops/conv_transpose/phase.c) and SIMD128's calls have 2, so the
	 * same output channels make 4x the calls: the limits are scaled by 4. Its B panels are 16
	 * wide, and paired stride-2 phases of 512 input channels keep two of them per weight
	 * panel with twice the bytes. */
	t.in_place_calls = 64;
	t.stage_calls = 16;
	t.phase_bpanels_bytes = 512 << 10;
#endif
#if ONNXRUN__HAVE_MVE
	/* Helium (Cortex-M55/M85, docs/kernels.md, Helium): on an in-order microcontroller the
	 * phase path's per-panel planning (runs, copies, row pointers, in 64-bit index
	 * arithmetic on a 32-bit CPU) costs more than the multiply-adds of a small panel, and a
	 * staged copy of x (panels at base + offset, nothing planned per panel) takes it away:
	 * staged from the first call per panel (the upsampler: 1.46 M instructions per run
	 * instead of 2.49 M, counted under qemu, tests/mcu/test_mcu_insns.c). Tiles of 8 KiB and
	 * a staging area of at most 8 KiB keep the scratch within a microcontroller's RAM: the
	 * upsampler's tiles and staged rows take 1.6 KB less than with 16 KiB tiles, for 4.3% more
	 * instructions per run (1.53 M instead of 1.47 M; README, Microcontrollers). */
	t.stage_calls = 1;
	t.stage_bytes = 8 << 10;
	t.phase_tile_bytes = 8 << 10;
#endif
	static atomic_flag writing = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set_explicit(&writing, memory_order_acquire)) {
		tuning = t;
		atomic_store_explicit(&tuning_ready, 1, memory_order_release);
	} else {
		while (!atomic_load_explicit(&tuning_ready, memory_order_acquire))
			;
	}
	return &tuning;
}
