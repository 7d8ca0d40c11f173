/*
 * gemm.c - picks the micro-kernel ISA: CPUID, or ONNXRUN_KERNEL=avx512|avx2|scalar.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

static atomic_int chosen = -1;

int onnxrun__gemm_isa_supported(enum onnxrun__isa isa)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (isa == ONNXRUN__ISA_AVX512)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
	if (isa == ONNXRUN__ISA_AVX2)
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	if (isa != ONNXRUN__ISA_SCALAR)
		return 0;
#endif
	return 1;
}

/* The best supported ISA not above `want`. */
static enum onnxrun__isa clamp(enum onnxrun__isa want)
{
	while (want > ONNXRUN__ISA_SCALAR && !onnxrun__gemm_isa_supported(want))
		want = (enum onnxrun__isa)(want - 1);
	return want;
}

enum onnxrun__isa onnxrun__gemm_isa(void)
{
	int isa = atomic_load_explicit(&chosen, memory_order_relaxed);
	const char *e;
	if (isa >= 0)
		return (enum onnxrun__isa)isa;
	isa = ONNXRUN__ISA_AVX512;
	if ((e = getenv("ONNXRUN_KERNEL")) != NULL) {
		if (!strcmp(e, "scalar"))
			isa = ONNXRUN__ISA_SCALAR;
		else if (!strcmp(e, "avx2"))
			isa = ONNXRUN__ISA_AVX2;
	}
	isa = (int)clamp((enum onnxrun__isa)isa);
	atomic_store_explicit(&chosen, isa, memory_order_relaxed);
	return (enum onnxrun__isa)isa;
}

enum onnxrun__isa onnxrun__gemm_set_isa(enum onnxrun__isa isa)
{
	isa = clamp(isa);
	atomic_store_explicit(&chosen, (int)isa, memory_order_relaxed);
	return isa;
}

const struct onnxrun__gemm_kernels *onnxrun__gemm_kernels_for(enum onnxrun__isa isa)
{
	switch (clamp(isa)) {
	case ONNXRUN__ISA_AVX512: return &onnxrun__gemm_avx512;
	case ONNXRUN__ISA_AVX2: return &onnxrun__gemm_avx2;
	default: return &onnxrun__gemm_scalar;
	}
}
