/*
 * avx2_half.c - the AVX2 float16/bfloat16 <-> float32 conversions (kernels.h): eight at a
 * time with F16C, bitwise equal to the scalar ones for every input (tests/test_f16.c). F16C
 * is a separate CPUID bit from AVX2: on a CPU without it (cpu.c detects it once) these
 * entries convert with the scalar code.
 */
#include "generic_half.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

static bool any_snan8(__m128i h)
{
	__m128i nan_exp = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7e00)), _mm_set1_epi16(0x7c00));
	__m128i no_payload = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x01ff)), _mm_setzero_si128());
	return _mm_movemask_epi8(_mm_andnot_si128(no_payload, nan_exp)) != 0;
}

/* AVX2 + F16C: the same, eight at a time. */
__attribute__((target("avx2,f16c"))) static int64_t widen_vectors(bool bf16, const uint16_t *src, float *dst,
                                                                  int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(src + i));
		if (!bf16 && any_snan8(h)) {
			generic_widen(false, src + i, dst + i, 8);
			continue;
		}
		__m256 f = bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
		                : _mm256_cvtph_ps(h);
		_mm256_storeu_ps(dst + i, f);
	}
	return i;
}

__attribute__((target("avx2,f16c"))) static int64_t narrow_vectors(bool bf16, const float *src, uint16_t *dst,
                                                                   int64_t n)
{
	const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
	const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 f = _mm256_loadu_ps(src + i);
		__m128i h;
		if (bf16) {
			__m256i x = _mm256_castps_si256(f), top = _mm256_srli_epi32(x, 16);
			/* |x| and 0x7f800000 are both non-negative: the signed compare is exact */
			__m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
			__m256i up = _mm256_add_epi32(bias, _mm256_and_si256(top, one));
			__m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, up), 16);
			r = _mm256_blendv_epi8(r, _mm256_or_si256(top, quiet), nan);
			/* every lane is in [0, 0xffff]: the unsigned-saturating pack is exact */
			h = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
		} else {
			h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		}
		_mm_storeu_si128((__m128i *)(dst + i), h);
	}
	return i;
}
void onnxrun__widen_avx2(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	const int64_t done = onnxrun__cpu_features()->f16c ? widen_vectors(bf16, src, dst, n) : 0;
	generic_widen(bf16, src + done, dst + done, n - done);
}

void onnxrun__narrow_avx2(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	const int64_t done = onnxrun__cpu_features()->f16c ? narrow_vectors(bf16, src, dst, n) : 0;
	generic_narrow(bf16, src + done, dst + done, n - done);
}

#endif
