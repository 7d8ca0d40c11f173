/*
 * mve_d2s.c - the Helium (MVE) DepthToSpace row interleaves for b = 2 and 4 (kernels.h,
 * struct onnxrun__d2s_kernels): the interleaving stores vst2/vst4 write element w of each of
 * the b source vectors next to one another, which is exactly dst[w*b + j] = src[j][w].
 */
#include "parts.h"

#if ONNXRUN__HAVE_MVE
#include <arm_mve.h>

void onnxrun__d2s_row2_mve(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	const uint32_t *s0 = src[0], *s1 = src[1];
	uint32_t *d = dst;
	int64_t w = 0;
	for (; w + 4 <= width; w += 4, d += 8) {
		const uint32x4x2_t v = { { vld1q_u32(s0 + w), vld1q_u32(s1 + w) } };
		vst2q_u32(d, v);
	}
	for (; w < width; w++, d += 2) {
		d[0] = s0[w];
		d[1] = s1[w];
	}
}

void onnxrun__d2s_row4_mve(uint32_t *dst, const uint32_t *const *src, int64_t width)
{
	const uint32_t *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3];
	uint32_t *d = dst;
	int64_t w = 0;
	for (; w + 4 <= width; w += 4, d += 16) {
		const uint32x4x4_t v = { { vld1q_u32(s0 + w), vld1q_u32(s1 + w), vld1q_u32(s2 + w), vld1q_u32(s3 + w) } };
		vst4q_u32(d, v);
	}
	for (; w < width; w++, d += 4) {
		d[0] = s0[w];
		d[1] = s1[w];
		d[2] = s2[w];
		d[3] = s3[w];
	}
}

#endif
