/*
 * neon_d2s.c - the AArch64 NEON DepthToSpace row interleaves for b = 2 and 4 (kernels.h,
 * struct onnxrun__d2s_kernels): the interleaving stores st2/st4 write element w of each of
 * the b source vectors next to one another, which is exactly dst[w*b + j] = src[j][w].
 * Plain stores: AArch64 has no non-temporal vector store in the ACLE intrinsics.
 */
#include "parts.h"

#if defined(__aarch64__)
#include <arm_neon.h>

void onnxrun__d2s_row2_neon(uint32_t *dst, const uint32_t *const *src, int64_t width)
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

void onnxrun__d2s_row4_neon(uint32_t *dst, const uint32_t *const *src, int64_t width)
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
