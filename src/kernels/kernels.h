/*
 * gemm.h - float32 GEMM micro-kernels (AVX-512, AVX2+FMA, plain C), picked at run time by
 * CPUID or forced with the environment variable ONNXRUN_KERNEL=avx512|avx2|scalar.
 *
 * A micro-kernel computes one tile C[mr x nr] = A_panel * B_panel over k steps, where
 *   A_panel: k groups of `mr_max` floats (row i of step p at a[p*mr_max + i]), i.e. packed
 *            weights padded to the kernel's full row count;
 *   B_panel: k rows of `nr` contiguous floats (b[p*nr + j]).
 * C is written (not accumulated) at c[i*ldc + j] for i < mr, j < nr.
 */
#ifndef ONNXRUN_OPS_GEMM_H
#define ONNXRUN_OPS_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "../runtime/runtime.h"

enum onnxrun__isa {
	ONNXRUN__ISA_SCALAR = 0,
	ONNXRUN__ISA_AVX2 = 1,
	ONNXRUN__ISA_AVX512 = 2,
};

/* Largest mr_max and nr of any kernel (for scratch sizing). */
#define ONNXRUN__GEMM_MR_MAX 12
#define ONNXRUN__GEMM_NR_MAX 32

typedef void (*onnxrun__gemm_fn)(int64_t k, const float *a, const float *b, float *c, int64_t ldc);
/* The same with B given as k row pointers (row p at brows[p], nr floats each), so rows can
 * be read in place. */
typedef void (*onnxrun__gemm_ind_fn)(int64_t k, const float *a, const float *const *brows, float *c,
                                     int64_t ldc);

/* The same with each B row given as two half-rows of nr/2 floats, each a pointer and a lane
 * mask (lanes off read as zero and never touch memory): row p's half h is at
 * bptr[2p + h] under bmask[2p + h]. So runs of x that fill a half-row with some lanes
 * outside x are read in place too. */
typedef void (*onnxrun__gemm_ind2_fn)(int64_t k, const float *a, const float *const *bptr,
                                      const uint16_t *bmask, float *c, int64_t ldc);

/* The same with B row p at base + rel[p] bytes: one table of offsets serves every panel
 * whose rows keep the same layout relative to each other (a staged copy of x). */
typedef void (*onnxrun__gemm_rel_fn)(int64_t k, const float *a, const char *base, const int64_t *rel, float *c,
                                     int64_t ldc);

/* One ISA's kernels: fn[v][mr - 1] computes mr rows of an nr[v]-wide tile (v = 0 wide,
 * v = 1 narrow, for a remainder of at most nr[1] columns, v = 2 narrowest, for at most
 * nr[2]; nr[2] == nr[1] when the ISA has no third width); ind[mr - 1] and ind2[mr - 1] are
 * the wide tile with B as row pointers or masked half-row pointers, rel[mr - 1] with B rows
 * at base + offset (NULL when the ISA has none). */
struct onnxrun__gemm_kernels {
	enum onnxrun__isa isa;
	int mr_max;
	int nr[3];
	onnxrun__gemm_fn fn[3][ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_ind_fn ind[ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_ind2_fn ind2[ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_rel_fn rel[ONNXRUN__GEMM_MR_MAX];
};

/* The ISA in use: ONNXRUN_KERNEL if set and supported by this CPU, else the best the CPU
 * has. Read once; onnxrun__gemm_set_isa overrides it (tests). */
ONNXRUN__HIDDEN enum onnxrun__isa onnxrun__gemm_isa(void);
/* Forces an ISA (clamped to what the CPU supports); returns the ISA now in use. */
ONNXRUN__HIDDEN enum onnxrun__isa onnxrun__gemm_set_isa(enum onnxrun__isa isa);
/* True when this CPU can run the ISA's kernels. */
ONNXRUN__HIDDEN int onnxrun__gemm_isa_supported(enum onnxrun__isa isa);
/* The kernels of an ISA (which must be supported). */
ONNXRUN__HIDDEN const struct onnxrun__gemm_kernels *onnxrun__gemm_kernels_for(enum onnxrun__isa isa);

ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_scalar;
ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_avx2;
ONNXRUN__HIDDEN extern const struct onnxrun__gemm_kernels onnxrun__gemm_avx512;

#endif
