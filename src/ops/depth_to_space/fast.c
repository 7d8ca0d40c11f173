/*
 * depth_to_space_fast.c - DepthToSpace for 4-byte elements: each output row interleaves b
 * input rows (y[w*b + j] = src_j[w]); AVX-512 permutes for b = 2 and 4 (streaming stores
 * for large outputs), AVX2 for b = 2, strided copies otherwise. Output rows are split over the session's thread pool. A pure
 * copy: results are bitwise identical whatever the ISA or thread count.
 */
#include <stdint.h>
#include <string.h>

#include "fast.h"
#include "../../kernels/kernels.h"
#include "../../runtime/pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Plain C: one strided pass per source row. */
static void row_generic(uint32_t *dst, const uint32_t *const *src, int64_t width, int64_t b)
{
	for (int64_t j = 0; j < b; j++) {
		const uint32_t *s = src[j];
		uint32_t *d = dst + j;
		for (int64_t w = 0; w < width; w++)
			d[w * b] = s[w];
	}
}

#if defined(__x86_64__)
/* Stores a vector of output: streaming (non-temporal) when asked and aligned. */
__attribute__((target("avx512f"))) static inline void store16(uint32_t *d, __m512i v, bool nt)
{
	if (nt)
		_mm512_stream_si512((void *)d, v);
	else
		_mm512_storeu_si512(d, v);
}

__attribute__((target("avx2"))) static void row2_avx2(uint32_t *dst, const uint32_t *const *src, int64_t width)
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

__attribute__((target("avx512f"))) static void row2_avx512(uint32_t *dst, const uint32_t *const *src,
                                                          int64_t width, bool nt)
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

__attribute__((target("avx512f"))) static void row4_avx512(uint32_t *dst, const uint32_t *const *src,
                                                          int64_t width, bool nt)
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
#endif

static size_t stream_min = (size_t)8 << 20;

void onnxrun__d2s_set_stream_min(size_t bytes)
{
	stream_min = bytes;
}

size_t onnxrun__d2s_stream_min(void)
{
	return stream_min;
}

struct d2s_job {
	const uint32_t *x;
	uint32_t *y;
	int64_t c, cout, h, w, b, rows_per_item, rows;
	bool crd;
	bool nt; /* streaming stores for 64-byte-aligned rows */
	enum onnxrun__isa isa;
};

/* Output rows [r0, r1): row = ((n*C' + c')*H + h)*b + i. */
static void d2s_items(void *arg, int tid, int64_t begin, int64_t end)
{
	const struct d2s_job *j = arg;
	const uint32_t *src[64];
	(void)tid;
	for (int64_t row = begin * j->rows_per_item; row < end * j->rows_per_item && row < j->rows; row++) {
		const int64_t i = row % j->b, h = row / j->b % j->h, c = row / j->b / j->h % j->cout;
		const int64_t n = row / j->b / j->h / j->cout;
		uint32_t *dst = j->y + row * j->w * j->b;
		for (int64_t jj = 0; jj < j->b; jj++) {
			/* DCR: ch = (i*b + j)*C' + c'; CRD: ch = c'*b*b + i*b + j */
			int64_t ch = j->crd ? (c * j->b + i) * j->b + jj : (i * j->b + jj) * j->cout + c;
			src[jj] = j->x + ((n * j->c + ch) * j->h + h) * j->w;
		}
#if defined(__x86_64__)
		const bool nt = j->nt && ((uintptr_t)dst & 63) == 0;
		if (j->isa == ONNXRUN__ISA_AVX512 && j->b == 2)
			row2_avx512(dst, src, j->w, nt);
		else if (j->isa == ONNXRUN__ISA_AVX512 && j->b == 4)
			row4_avx512(dst, src, j->w, nt);
		else if (j->isa >= ONNXRUN__ISA_AVX2 && j->b == 2)
			row2_avx2(dst, src, j->w);
		else
#endif
			row_generic(dst, src, j->w, j->b);
	}
#if defined(__x86_64__)
	if (j->nt)
		_mm_sfence(); /* streaming stores visible before the pool reports the item done */
#endif
}

bool onnxrun__d2s_fast(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *x, struct onnxrun_tensor *y,
                       int64_t b, bool crd)
{
	struct d2s_job j;
	struct onnxrun__pool *pool = onnxrun__pool_current();
	int threads = ctx->threads < 1 ? 1 : ctx->threads;
	int64_t items;
	if (onnxrun_dtype_size(x->dtype) != 4 || x->dtype == ONNXRUN_DTYPE_STRING || b > 64 || b < 1)
		return false;
	j.x = x->data;
	j.y = y->data;
	j.c = x->dims[1];
	j.cout = x->dims[1] / (b * b);
	j.h = x->dims[2];
	j.w = x->dims[3];
	j.b = b;
	j.crd = crd;
	j.isa = onnxrun__isa_current();
	j.nt = j.isa == ONNXRUN__ISA_AVX512 && y->nbytes >= stream_min;
	j.rows = x->dims[0] * j.cout * j.h * b;
	/* items of about 16 KiB of output each */
	j.rows_per_item = 4096 / (j.w * b) + 1;
	items = (j.rows + j.rows_per_item - 1) / j.rows_per_item;
	/* small tensors: one thread (waking workers costs more than the copy) */
	if (y->nbytes < (size_t)256 * 1024)
		threads = 1;
	onnxrun__pool_run(pool, threads, items, d2s_items, &j);
	return true;
}
