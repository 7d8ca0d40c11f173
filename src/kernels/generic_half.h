/*
 * generic_half.h - plain C float16/bfloat16 <-> float32 conversions (the runtime's
 * onnxrun__f16_to_f32 ... element by element): the scalar table's entries, and the tails and
 * the signalling-NaN vectors of the vector ones.
 */
#ifndef ONNXRUN_KERNELS_GENERIC_HALF_H
#define ONNXRUN_KERNELS_GENERIC_HALF_H

#include "generic.h"

ONNXRUN__INLINE void generic_widen(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = bf16 ? onnxrun__bf16_to_f32(src[i]) : onnxrun__f16_to_f32(src[i]);
}

ONNXRUN__INLINE void generic_narrow(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = bf16 ? onnxrun__f32_to_bf16(src[i]) : onnxrun__f32_to_f16(src[i]);
}

#endif
