/*
 * avx512_d2s.c - the AVX-512 DepthToSpace row interleaves for b = 2 and 4 (kernels.h, struct
 * onnxrun__d2s_kernels), with cached or streaming (non-temporal) stores.
 */
#include "generic.h"
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

/* Stores a vector of output: streaming (non-temporal) when asked and aligned. */
T512 ONNXRUN__INLINE void store16(uint32_t *d, __m512i v, bool nt)
{
	if (nt)
		_mm512_stream_si512((void *)d, v);
	else
		_mm512_storeu_si512(d, v);
}

T512 ONNXRUN__INLINE void row2_body(uint32_t *dst, const uint32_t *const *src, int64_t width, bool nt)
{
	const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	const uint32_t *s0 = src[0], *s1 = src[1];
	uint32_t *d = dst;
	int64_t w = 0;
	for (; w + 16 <= width; w += 16, d += 32) {
		__m512i a = _mm512_loadu_si512(s0 + w), b = _mm512_loadu_si512(s1 + w);
		store16(d, _mm512_permutex2var_epi32(a, lo_idx, b), nt);
		store16(d + 16, _mm512_permutex2var_epi32(a, hi_idx, b), nt);
	}
	for (; w < width; w++, d += 2) {
		d[0] = s0[w];
		d[1] = s1[w];
	}
}

T512 ONNXRUN__INLINE void row4_body(uint32_t *dst, const uint32_t *const *src, int64_t width, bool nt)
{
	const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	const __m512i q0 = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), q1 = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
	uint32_t *d = dst;
	int64_t w = 0;
	for (; w + 16 <= width; w += 16, d += 64) {
		__m512i a = _mm512_loadu_si512(src[0] + w), b = _mm512_loadu_si512(src[1] + w);
		__m512i c = _mm512_loadu_si512(src[2] + w), e = _mm512_loadu_si512(src[3] + w);
		/* pairs (a_w, b_w) and (c_w, d_w), then 64-bit interleave of the pairs */
		__m512i ab_lo = _mm512_permutex2var_epi32(a, lo_idx, b), ab_hi = _mm512_permutex2var_epi32(a, hi_idx, b);
		__m512i cd_lo = _mm512_permutex2var_epi32(c, lo_idx, e), cd_hi = _mm512_permutex2var_epi32(c, hi_idx, e);
		store16(d, _mm512_permutex2var_epi64(ab_lo, q0, cd_lo), nt);
		store16(d + 16, _mm512_permutex2var_epi64(ab_lo, q1, cd_lo), nt);
		store16(d + 32, _mm512_permutex2var_epi64(ab_hi, q0, cd_hi), nt);
		store16(d + 48, _mm512_permutex2var_epi64(ab_hi, q1, cd_hi), nt);
	}
	for (; w < width; w++, d += 4)
		for (int j = 0; j < 4; j++)
			d[j] = src[j][w];
}
T512 void onnxrun__d2s_row2_avx512(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	row2_body(dst, src, width, false);
}

T512 void onnxrun__d2s_row4_avx512(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	row4_body(dst, src, width, false);
}

T512 void onnxrun__d2s_row2_avx512_stream(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	row2_body(dst, src, width, true);
}

T512 void onnxrun__d2s_row4_avx512_stream(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	row4_body(dst, src, width, true);
}

#endif
