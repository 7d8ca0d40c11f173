/*
 * avx2_d2s.c - the AVX2 DepthToSpace row interleave for b = 2 (kernels.h, struct
 * onnxrun__d2s_kernels).
 */
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) void onnxrun__d2s_row2_avx2(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	const float *s0 = (const float *)src[0], *s1 = (const float *)src[1];
	float *d = (float *)dst;
	int64_t w = 0;
	for (; w + 8 <= width; w += 8, d += 16) {
		__m256 a = _mm256_loadu_ps(s0 + w), b = _mm256_loadu_ps(s1 + w);
		__m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
		_mm256_storeu_ps(d, _mm256_permute2f128_ps(lo, hi, 0x20));
		_mm256_storeu_ps(d + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
	}
	for (; w < width; w++, d += 2) {
		d[0] = s0[w];
		d[1] = s1[w];
	}
}

#endif
