/*
 * neon_half.c - the AArch64 NEON float16/bfloat16 <-> float32 conversions (kernels.h): 8 at
 * a time, bitwise equal to the scalar ones for every input (tests/test_f16.c).
 *
 * float16 uses the conversion instructions (fcvtl/fcvtn). They follow FPCR: the conversions
 * match the scalar ones with round to nearest even (checked per call: otherwise the scalar
 * code runs) and with FPCR's flush-to-zero, default-NaN and alternative-half-precision
 * controls off, which is how Linux starts every process and which onnxrun never changes.
 * bfloat16 is integer arithmetic, as in the runtime's onnxrun__f32_to_bf16.
 */
#include <fenv.h>

#include "generic_half.h"
#include "parts.h"

#if defined(__aarch64__)
#include <arm_neon.h>

/* Whether any float16 lane is a signalling NaN (exponent all ones, quiet bit clear, payload
 * not zero): fcvtl quiets those, onnxrun__f16_to_f32 keeps them, so such (rare) vectors are
 * widened by the scalar code. */
static inline bool any_snan16(uint16x8_t h)
{
	const uint16x8_t nan_exp = vceqq_u16(vandq_u16(h, vdupq_n_u16(0x7e00)), vdupq_n_u16(0x7c00));
	const uint16x8_t payload = vtstq_u16(h, vdupq_n_u16(0x01ff));
	return vmaxvq_u16(vandq_u16(nan_exp, payload)) != 0;
}

static int64_t widen_vectors(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const uint16x8_t h = vld1q_u16(src + i);
		if (bf16) { /* the float32 is the bfloat16 bits followed by 16 zero bits */
			vst1q_f32(dst + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)));
			vst1q_f32(dst + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)));
			continue;
		}
		if (any_snan16(h)) {
			generic_widen(false, src + i, dst + i, 8);
			continue;
		}
		const float16x8_t hf = vreinterpretq_f16_u16(h);
		vst1q_f32(dst + i, vcvt_f32_f16(vget_low_f16(hf)));
		vst1q_f32(dst + i + 4, vcvt_high_f32_f16(hf));
	}
	return i;
}

/* bfloat16 of 4 floats: NaN -> top half with the quiet bit, else x + 0x7fff + (bit 16 of x),
 * top half (round to nearest even). */
static inline uint16x4_t narrow_bf16(float32x4_t f)
{
	const uint32x4_t x = vreinterpretq_u32_f32(f);
	const uint32x4_t nan = vcgtq_u32(vandq_u32(x, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
	const uint32x4_t up = vaddq_u32(vdupq_n_u32(0x7fff), vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1)));
	const uint32x4_t rounded = vshrq_n_u32(vaddq_u32(x, up), 16);
	const uint32x4_t quiet = vorrq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(0x40));
	return vmovn_u32(vbslq_u32(nan, quiet, rounded));
}

static int64_t narrow_vectors(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	int64_t i = 0;
	if (!bf16 && fegetround() != FE_TONEAREST)
		return 0;
	for (; i + 8 <= n; i += 8) {
		const float32x4_t lo = vld1q_f32(src + i), hi = vld1q_f32(src + i + 4);
		if (bf16) {
			vst1q_u16(dst + i, vcombine_u16(narrow_bf16(lo), narrow_bf16(hi)));
			continue;
		}
		vst1q_u16(dst + i, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(lo), hi)));
	}
	return i;
}

void onnxrun__widen_neon(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	const int64_t done = widen_vectors(bf16, src, dst, n);
	generic_widen(bf16, src + done, dst + done, n - done);
}

void onnxrun__narrow_neon(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	const int64_t done = narrow_vectors(bf16, src, dst, n);
	generic_narrow(bf16, src + done, dst + done, n - done);
}

#endif
