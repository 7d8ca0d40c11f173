/*
 * avx512_half.c - the AVX-512 float16/bfloat16 <-> float32 conversions (kernels.h): 16 at a
 * time, bitwise equal to the scalar ones for every input (tests/test_f16.c).
 */
#include "generic_half.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* Whether any float16 lane is a signalling NaN (exponent all ones, quiet bit clear, payload
 * not zero): vcvtph2ps quiets those, onnxrun__f16_to_f32 keeps them, so such (rare) vectors
 * are widened by the scalar code. */
__attribute__((target("avx2"))) static bool any_snan16(__m256i h)
{
	__m256i nan_exp = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7e00)), _mm256_set1_epi16(0x7c00));
	__m256i no_payload = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x01ff)), _mm256_setzero_si256());
	return _mm256_movemask_epi8(_mm256_andnot_si256(no_payload, nan_exp)) != 0;
}

/* AVX-512F: vcvtph2ps / vcvtps2ph (round to nearest even by the immediate, whatever MXCSR
 * says); bfloat16 by integer arithmetic, as onnxrun__f32_to_bf16: NaN -> top half with the
 * quiet bit, else x + 0x7fff + (bit 16 of x), top half. */
__attribute__((target("avx512f"))) static int64_t widen_vectors(bool bf16, const uint16_t *src, float *dst,
                                                                int64_t n)
{
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
		if (!bf16 && any_snan16(h)) {
			generic_widen(false, src + i, dst + i, 16);
			continue;
		}
		__m512 f = bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
		                : _mm512_cvtph_ps(h);
		_mm512_storeu_ps(dst + i, f);
	}
	return i;
}

__attribute__((target("avx512f"))) static int64_t narrow_vectors(bool bf16, const float *src, uint16_t *dst,
                                                                 int64_t n)
{
	const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
	const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 f = _mm512_loadu_ps(src + i);
		__m256i h;
		if (bf16) {
			__m512i x = _mm512_castps_si512(f);
			__mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, abs_mask), inf);
			__m512i up = _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(x, 16), one));
			__m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, up), 16);
			r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(x, 16), quiet);
			h = _mm512_cvtepi32_epi16(r);
		} else {
			h = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		}
		_mm256_storeu_si256((__m256i *)(dst + i), h);
	}
	return i;
}

void onnxrun__widen_avx512(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	const int64_t done = widen_vectors(bf16, src, dst, n);
	generic_widen(bf16, src + done, dst + done, n - done);
}

void onnxrun__narrow_avx512(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	const int64_t done = narrow_vectors(bf16, src, dst, n);
	generic_narrow(bf16, src + done, dst + done, n - done);
}

#endif
