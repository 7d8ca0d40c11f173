/*
 * parts.h - the routines each ISA's family files (scalar_*.c, avx2_*.c, avx512_*.c,
 * simd128_*.c, neon_*.c, mve_*.c) define and that ISA's table file (scalar.c, avx2.c, avx512.c,
 * simd128.c, neon.c, mve.c) collects. Only the kernel layer includes it; ops reach these through the tables.
 */
#ifndef ONNXRUN_KERNELS_PARTS_H
#define ONNXRUN_KERNELS_PARTS_H

#include "kernels.h"

/* depthwise ConvTranspose rows (depthwise.h) */
ONNXRUN__HIDDEN void onnxrun__dw_rows_scalar(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#if defined(__x86_64__)
ONNXRUN__HIDDEN void onnxrun__dw_rows_avx2(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
ONNXRUN__HIDDEN void onnxrun__dw_rows_avx512(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#endif
#if defined(__wasm_simd128__)
ONNXRUN__HIDDEN void onnxrun__dw_rows_simd128(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#endif
#if defined(__aarch64__)
ONNXRUN__HIDDEN void onnxrun__dw_rows_neon(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#endif
#if ONNXRUN__HAVE_MVE
ONNXRUN__HIDDEN void onnxrun__dw_rows_mve(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#endif

/* overlap-add of the GEMM + col2im path (struct onnxrun__kgather) */
#if defined(__x86_64__)
ONNXRUN__HIDDEN void onnxrun__col2im_gather_avx512(const struct onnxrun__kgather *kg, const float *const *zrows,
                                                   int64_t nrows, float *yrow, int64_t o_lo, int64_t o_hi, float bias,
                                                   float *tmp, int64_t zoff, int64_t zend);
#endif

/* the window GEMM of ConvTranspose (struct onnxrun__window_kernels) */
#if defined(__x86_64__)
ONNXRUN__HIDDEN void onnxrun__win_store_avx512(const float *tile, int64_t ldt, int64_t s, int64_t n, float *y,
                                               float bias);
ONNXRUN__HIDDEN extern const struct onnxrun__window_kernels onnxrun__window_avx512;
ONNXRUN__HIDDEN void onnxrun__rel2_pair_avx512(const struct onnxrun__kpanel *kp, int64_t k, const float *a, int64_t mr,
                                               const char *base0, const char *base1, const onnxrun__krel *rel,
                                               bool ahead, const float *t0, const struct onnxrun__krun *runs,
                                               int64_t nrun, float *y, int64_t ydelta, const float *bias,
                                               const float *ypf);
#endif

/* float64 ConvTranspose tiles (the AVX-512 list also has two AVX2 tiles) */
ONNXRUN__HIDDEN extern const struct onnxrun__f64_kernels onnxrun__f64_scalar;
#if defined(__x86_64__)
ONNXRUN__HIDDEN extern const struct onnxrun__f64_kernels onnxrun__f64_avx2;
ONNXRUN__HIDDEN extern const struct onnxrun__f64_kernels onnxrun__f64_avx512;
ONNXRUN__HIDDEN void onnxrun__f64_tile_avx2_4x1(int64_t kk, const double *xb, const double *wb, double *tile);
ONNXRUN__HIDDEN void onnxrun__f64_tile_avx2_1x1(int64_t kk, const double *xb, const double *wb, double *tile);
ONNXRUN__HIDDEN void onnxrun__f64_ind_avx2_4x1(int64_t kk, const double *const *xrows, const double *wb, double *tile);
ONNXRUN__HIDDEN void onnxrun__f64_ind_avx2_1x1(int64_t kk, const double *const *xrows, const double *wb, double *tile);
#endif
#if defined(__aarch64__)
ONNXRUN__HIDDEN extern const struct onnxrun__f64_kernels onnxrun__f64_neon;
#endif

/* float16/bfloat16 conversions */
#if defined(__x86_64__)
ONNXRUN__HIDDEN void onnxrun__widen_avx2(bool bf16, const uint16_t *src, float *dst, int64_t n);
ONNXRUN__HIDDEN void onnxrun__narrow_avx2(bool bf16, const float *src, uint16_t *dst, int64_t n);
ONNXRUN__HIDDEN void onnxrun__widen_avx512(bool bf16, const uint16_t *src, float *dst, int64_t n);
ONNXRUN__HIDDEN void onnxrun__narrow_avx512(bool bf16, const float *src, uint16_t *dst, int64_t n);
#endif
#if defined(__aarch64__)
ONNXRUN__HIDDEN void onnxrun__widen_neon(bool bf16, const uint16_t *src, float *dst, int64_t n);
ONNXRUN__HIDDEN void onnxrun__narrow_neon(bool bf16, const float *src, uint16_t *dst, int64_t n);
#endif

/* DepthToSpace row interleaves */
#if defined(__x86_64__)
ONNXRUN__HIDDEN void onnxrun__d2s_row2_avx2(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row2_avx512(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row4_avx512(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row2_avx512_stream(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row4_avx512_stream(uint32_t *dst, const uint32_t *const *src, int64_t width);
#endif
#if defined(__wasm_simd128__)
ONNXRUN__HIDDEN void onnxrun__d2s_row2_simd128(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row4_simd128(uint32_t *dst, const uint32_t *const *src, int64_t width);
#endif
#if defined(__aarch64__)
ONNXRUN__HIDDEN void onnxrun__d2s_row2_neon(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row4_neon(uint32_t *dst, const uint32_t *const *src, int64_t width);
#endif
#if ONNXRUN__HAVE_MVE
ONNXRUN__HIDDEN void onnxrun__d2s_row2_mve(uint32_t *dst, const uint32_t *const *src, int64_t width);
ONNXRUN__HIDDEN void onnxrun__d2s_row4_mve(uint32_t *dst, const uint32_t *const *src, int64_t width);
#endif

/* What this CPU has (all false off x86-64), read once by the first call (thread-safe). */
struct onnxrun__cpu_features {
	bool avx2, fma, avx512f, f16c;
#ifndef ONNXRUN_BAREMETAL
	/* AVX-512 on AMD family 0x19 (Zen 4: 512-bit operations issued as two 256-bit halves)
	 * or 0x1A (Zen 5: full-width 512-bit units), whose permutes do not take an FMA port */
	bool amd_avx512;
#endif
};
ONNXRUN__HIDDEN const struct onnxrun__cpu_features *onnxrun__cpu_features(void);

#endif
