/*
 * conv_transpose_half.c - float16/bfloat16 ConvTranspose on the float32 fast paths: X, the
 * bias (and W when it was not pre-packed at load, or for the depthwise path, which reads W
 * directly) are widened into float32 scratch, the float32 path runs into a float32 output,
 * and each output is rounded once to the storage type (round to nearest even). The
 * conversions are those of src/runtime (onnxrun__f16_to_f32 ...), vectorised with F16C /
 * AVX-512 for the ISA the micro-kernels use, bitwise equal for every input (test_f16.c),
 * and split over the thread pool.
 */
#include <string.h>

#include "impl.h"
#include "../../runtime/pool.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#define CHUNK 16384 /* elements per conversion work item */

/* ---- conversions ------------------------------------------------------------------------- */

static void widen_scalar(bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = bf16 ? onnxrun__bf16_to_f32(src[i]) : onnxrun__f16_to_f32(src[i]);
}

static void narrow_scalar(bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = bf16 ? onnxrun__f32_to_bf16(src[i]) : onnxrun__f32_to_f16(src[i]);
}

#if defined(__x86_64__)
/* Whether any float16 lane is a signalling NaN (exponent all ones, quiet bit clear, payload
 * not zero): vcvtph2ps quiets those, onnxrun__f16_to_f32 keeps them, so such (rare) vectors
 * are widened by the scalar code. */
__attribute__((target("avx2"))) static bool any_snan16(__m256i h)
{
	__m256i nan_exp = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7e00)), _mm256_set1_epi16(0x7c00));
	__m256i no_payload = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x01ff)), _mm256_setzero_si256());
	return _mm256_movemask_epi8(_mm256_andnot_si256(no_payload, nan_exp)) != 0;
}

static bool any_snan8(__m128i h)
{
	__m128i nan_exp = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7e00)), _mm_set1_epi16(0x7c00));
	__m128i no_payload = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x01ff)), _mm_setzero_si128());
	return _mm_movemask_epi8(_mm_andnot_si128(no_payload, nan_exp)) != 0;
}

/* AVX-512F: vcvtph2ps / vcvtps2ph (round to nearest even by the immediate, whatever MXCSR
 * says); bfloat16 by integer arithmetic, as onnxrun__f32_to_bf16: NaN -> top half with the
 * quiet bit, else x + 0x7fff + (bit 16 of x), top half. */
__attribute__((target("avx512f"))) static int64_t widen_avx512(bool bf16, const uint16_t *src, float *dst,
                                                                int64_t n)
{
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
		if (!bf16 && any_snan16(h)) {
			widen_scalar(false, src + i, dst + i, 16);
			continue;
		}
		__m512 f = bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
		                : _mm512_cvtph_ps(h);
		_mm512_storeu_ps(dst + i, f);
	}
	return i;
}

__attribute__((target("avx512f"))) static int64_t narrow_avx512(bool bf16, const float *src, uint16_t *dst,
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

/* AVX2 + F16C: the same, eight at a time. */
__attribute__((target("avx2,f16c"))) static int64_t widen_avx2(bool bf16, const uint16_t *src, float *dst,
                                                                int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(src + i));
		if (!bf16 && any_snan8(h)) {
			widen_scalar(false, src + i, dst + i, 8);
			continue;
		}
		__m256 f = bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
		                : _mm256_cvtph_ps(h);
		_mm256_storeu_ps(dst + i, f);
	}
	return i;
}

__attribute__((target("avx2,f16c"))) static int64_t narrow_avx2(bool bf16, const float *src, uint16_t *dst,
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
#endif

/* F16C is a separate CPUID bit from AVX2 (every AVX-512F CPU has it). */
static bool has_f16c(void)
{
#if defined(__x86_64__)
	/* CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c") */
	unsigned int a, b, c, d;
	return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
#else
	return false;
#endif
}

void onnxrun__convt_half_widen(enum onnxrun__isa isa, bool bf16, const uint16_t *src, float *dst, int64_t n)
{
	int64_t done = 0;
#if defined(__x86_64__)
	if (isa == ONNXRUN__ISA_AVX512 && onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		done = widen_avx512(bf16, src, dst, n);
	else if (isa == ONNXRUN__ISA_AVX2 && onnxrun__isa_supported(ONNXRUN__ISA_AVX2) && has_f16c())
		done = widen_avx2(bf16, src, dst, n);
#endif
	widen_scalar(bf16, src + done, dst + done, n - done);
}

void onnxrun__convt_half_narrow(enum onnxrun__isa isa, bool bf16, const float *src, uint16_t *dst, int64_t n)
{
	int64_t done = 0;
#if defined(__x86_64__)
	if (isa == ONNXRUN__ISA_AVX512 && onnxrun__isa_supported(ONNXRUN__ISA_AVX512))
		done = narrow_avx512(bf16, src, dst, n);
	else if (isa == ONNXRUN__ISA_AVX2 && onnxrun__isa_supported(ONNXRUN__ISA_AVX2) && has_f16c())
		done = narrow_avx2(bf16, src, dst, n);
#endif
	narrow_scalar(bf16, src + done, dst + done, n - done);
}

float *onnxrun__convt_widen_new(const struct onnxrun_env *env, const struct onnxrun_tensor *t)
{
	size_t bytes;
	float *out;
	if (!onnxrun__tensor_bytes(ONNXRUN_DTYPE_FLOAT, t->numel > 0 ? t->numel : 1, &bytes) ||
	    !(out = onnxrun__malloc(env, bytes)))
		return NULL;
	onnxrun__convt_half_widen(onnxrun__isa_current(), t->dtype == ONNXRUN_DTYPE_BFLOAT16, t->data, out, t->numel);
	return out;
}

/* One conversion over the pool, CHUNK elements per item. */
struct convert_job {
	enum onnxrun__isa isa;
	bool bf16, narrow;
	const void *src;
	void *dst;
	int64_t n;
};

static void convert_items(void *ctx, int tid, int64_t begin, int64_t end)
{
	const struct convert_job *j = ctx;
	const int64_t lo = begin * CHUNK, hi = end * CHUNK < j->n ? end * CHUNK : j->n;
	(void)tid;
	if (j->narrow)
		onnxrun__convt_half_narrow(j->isa, j->bf16, (const float *)j->src + lo, (uint16_t *)j->dst + lo, hi - lo);
	else
		onnxrun__convt_half_widen(j->isa, j->bf16, (const uint16_t *)j->src + lo, (float *)j->dst + lo, hi - lo);
}

static void convert(struct onnxrun_op_context *ctx, bool bf16, bool narrow, const void *src, void *dst, int64_t n)
{
	struct convert_job j = { onnxrun__isa_current(), bf16, narrow, src, dst, n };
	struct onnxrun__pool *pool = onnxrun__pool_current();
	int threads = ctx->threads < 1 ? 1 : ctx->threads;
	if (n <= CHUNK)
		threads = 1;
	onnxrun__pool_run(threads > 1 ? pool : NULL, threads, (n + CHUNK - 1) / CHUNK, convert_items, &j);
}

/* ---- the entry ---------------------------------------------------------------------------- */

/* Float offsets of the scratch parts, each rounded up to 64 bytes: x, y, bias, w. */
struct half_scratch {
	int64_t x, y, b, w, total;
};

static bool scratch_layout(int64_t nx, int64_t ny, int64_t nb, int64_t nw, struct half_scratch *s)
{
	const int64_t parts[4] = { nx, ny, nb, nw };
	int64_t *at[4] = { &s->x, &s->y, &s->b, &s->w }, off = 0;
	for (int i = 0; i < 4; i++) {
		*at[i] = off;
		if (parts[i] > INT64_MAX / 8 - off - 16)
			return false;
		off += (parts[i] + 15) / 16 * 16;
	}
	s->total = off;
	return true;
}

static const char *half_accepts(const struct onnxrun__convt_geom *g, enum onnxrun_dtype dtype,
                                const struct onnxrun__kernels *kt)
{
	(void)g;
	(void)kt;
	return convt_is_half(dtype) ? NULL : "not float16 or bfloat16";
}

/* Widens X and the bias (and W, unless the op's state holds it packed: the float32 entries
 * rebuild it from there if they need it) into float32 scratch, runs the node through the
 * float32 entries, and rounds each output once. */
static enum onnxrun_status half_run(const struct convt_call *c)
{
	struct onnxrun_op_context *ctx = c->ctx;
	const struct onnxrun__convt_geom *g = c->g;
	const bool bf16 = c->dtype == ONNXRUN_DTYPE_BFLOAT16, need_w = c->packed == NULL;
	const int64_t nx = g->batch * g->in_channels * convt_product(g->in, g->n);
	const int64_t ny = g->batch * g->out_channels * convt_product(g->out, g->n);
	struct convt_call c32 = *c;
	struct half_scratch at;
	enum onnxrun_status st;
	float *buf;
	size_t bytes;

	if (!scratch_layout(nx, ny, c->b ? g->out_channels : 0, need_w ? c->w_numel : 0, &at) ||
	    !onnxrun__tensor_bytes(ONNXRUN_DTYPE_FLOAT, at.total, &bytes))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_LIMIT, ctx->node, "scratch size overflows");
	if (!(buf = onnxrun__malloc(ctx->env, bytes)))
		return onnxrun__node_fail(ctx->err, ONNXRUN_ERROR_OUT_OF_MEMORY, ctx->node,
		                          "out of memory allocating %zu bytes of float32 scratch", bytes);
	convert(ctx, bf16, false, c->x, buf + at.x, nx);
	if (c->b)
		convert(ctx, bf16, false, c->b, buf + at.b, g->out_channels);
	if (need_w)
		convert(ctx, bf16, false, c->w, buf + at.w, c->w_numel);
	c32.dtype = ONNXRUN_DTYPE_FLOAT;
	c32.x = buf + at.x;
	c32.b = c->b ? buf + at.b : NULL;
	c32.w = need_w ? buf + at.w : NULL;
	c32.y = buf + at.y;
	st = c->run_list(&c32);
	if (!st)
		convert(ctx, bf16, true, buf + at.y, c->y, ny);
	onnxrun__free(ctx->env, buf);
	return st;
}

const struct convt_impl onnxrun__convt_half = { "float16/bfloat16 through float32", ONNXRUN_DTYPE_UNDEFINED,
	                                        half_accepts, CONVT_LAYOUT_NONE, half_run, NULL };
