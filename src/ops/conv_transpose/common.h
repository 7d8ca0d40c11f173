/*
 * common.h - what every ConvTranspose implementation uses: integer division rounding down
 * or up, element counts, whether a shape has work for the output-driven implementations,
 * per-thread scratch, the copy of a staged row.
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_COMMON_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_COMMON_H

#include <string.h>

#include "geometry.h"

/* a / b and a % b for a >= 0, b > 0. On a 32-bit CPU a 64-bit division is a library call
 * (about 100 instructions on a Cortex-M); the per-panel index arithmetic of the phase path
 * has values far below 2^32, which the CPU's 32-bit divide takes in one instruction. The
 * same results either way. Out of line there (one copy: the -Os flash build of a
 * microcontroller grows by nothing, each call site stays one call); 64-bit builds compile
 * the plain division. */
#if UINTPTR_MAX <= 0xffffffffu
ONNXRUN__HIDDEN int64_t onnxrun__convt_udiv32(int64_t a, int64_t b);
static inline int64_t convt_udiv(int64_t a, int64_t b)
{
	return onnxrun__convt_udiv32(a, b);
}
static inline int64_t convt_umod(int64_t a, int64_t b)
{
	return a - onnxrun__convt_udiv32(a, b) * b;
}
#else
static inline int64_t convt_udiv(int64_t a, int64_t b)
{
	return a / b;
}
static inline int64_t convt_umod(int64_t a, int64_t b)
{
	return a % b;
}
#endif

/* Copies n floats: under 96 in constant-size pieces the compiler inlines, where a library
 * call per row cost more than the copy (the window path's staged rows of 64 in dcgan_64_3,
 * the phase path's of 16 in 3d_32_16). */
static inline void convt_copy_row(float *restrict d, const float *restrict s, int64_t n)
{
	if (n >= 96) { /* long rows: the library's wide copy, its call a small part */
		memcpy(d, s, (size_t)n * sizeof *d);
		return;
	}
	int64_t e = 0;
	for (; e + 32 <= n; e += 32)
		memcpy(d + e, s + e, 32 * sizeof *d);
	if (e + 16 <= n) {
		memcpy(d + e, s + e, 16 * sizeof *d);
		e += 16;
	}
	if (e + 8 <= n) {
		memcpy(d + e, s + e, 8 * sizeof *d);
		e += 8;
	}
	if (e + 4 <= n) {
		memcpy(d + e, s + e, 4 * sizeof *d);
		e += 4;
	}
	for (; e < n; e++)
		d[e] = s[e];
}

/* Zeros n floats in constant-size pieces, as convt_copy_row copies (the pads around staged
 * rows are 1-8 floats: a library call each cost more than the stores). */
static inline void convt_zero_row(float *d, int64_t n)
{
	static const float zeros[16];
	int64_t e = 0;
	for (; e + 16 <= n; e += 16)
		memcpy(d + e, zeros, sizeof zeros);
	if (e + 4 <= n) {
		memcpy(d + e, zeros, 4 * sizeof *d);
		e += 4;
	}
	if (e + 4 <= n) {
		memcpy(d + e, zeros, 4 * sizeof *d);
		e += 4;
	}
	if (e + 4 <= n) {
		memcpy(d + e, zeros, 4 * sizeof *d);
		e += 4;
	}
	if (e < n)
		d[e++] = 0.0f;
	if (e < n)
		d[e++] = 0.0f;
	if (e < n)
		d[e] = 0.0f;
}

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a (C's `/` truncates toward 0). */
static inline int64_t convt_floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? convt_udiv(a, b) : -convt_udiv(-a + b - 1, b);
}
static inline int64_t convt_ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? convt_udiv(a + b - 1, b) : -convt_udiv(-a, b);
}

/* Product of v[0..n). */
static inline int64_t convt_product(const int64_t *v, int32_t n)
{
	int64_t p = 1;
	for (int32_t i = 0; i < n; i++)
		p *= v[i];
	return p;
}

/* The planning estimates' arithmetic (work and waste, compared against limits): double, or
 * on bare metal float, which a microcontroller's FPU computes inline (double arithmetic
 * there is library calls: flash). On a 32-bit target the estimates' products stay far
 * below float's range (tensors hold fewer than 2^30 elements). */
#ifdef ONNXRUN_BAREMETAL
typedef float convt_real;
#else
typedef double convt_real;
#endif

static inline bool convt_is_half(enum onnxrun_dtype dt)
{
	return dt == ONNXRUN_DTYPE_FLOAT16 || dt == ONNXRUN_DTYPE_BFLOAT16;
}

/* True when g is concrete and every dim of X and Y is non-empty: the implementations that
 * work per output position need it. */
ONNXRUN__HIDDEN bool onnxrun__convt_has_positions(const struct onnxrun__convt_geom *g);

/* The output-driven implementations (phase, depthwise) do work per OUTPUT position (about
 * prod(out) * prod(ceil(k/s)) taps), the scatter per INPUT position (prod(in) * prod(k)).
 * They agree for layer-like shapes; a large kernel over a tiny input, or a stride far above
 * the kernel, makes the first grow without bound. Returns the ratio of the two; above
 * CONVT_MAX_WASTE the scatter is cheaper. */
#define CONVT_MAX_WASTE 8.0
ONNXRUN__HIDDEN convt_real onnxrun__convt_out_driven_waste(const struct onnxrun__convt_geom *g);

/* Why an output-driven implementation declines concrete g (NULL: it does not): an empty
 * dimension, or (with waste) more than CONVT_MAX_WASTE times the scatter's work. Non-concrete
 * g (at load) passes. */
ONNXRUN__HIDDEN const char *onnxrun__convt_positions_decline(const struct onnxrun__convt_geom *g, bool waste);

/* Per-thread scratch of `bytes` each for `threads` threads (64-byte aligned slices, *stride
 * bytes apart), from the env's allocator; NULL when out of memory. */
ONNXRUN__HIDDEN void *onnxrun__convt_scratch(struct onnxrun_op_context *ctx, int threads, size_t bytes,
                                             size_t *stride);

#endif
