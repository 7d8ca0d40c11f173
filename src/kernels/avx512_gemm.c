/*
 * avx512_gemm.c - AVX-512 float32 micro-kernels: up to 12 rows x 32 (or 16) columns,
 * 24 zmm accumulators, A broadcast from the packed panel, B loaded as 1-2 vectors per step.
 */
#include "parts.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f,fma")))

/* Tile of MR rows x NV vectors of 16 floats over k steps (see kernels.h for the layout). The
 * accumulators are named variables (not an array) so they never leave the registers; the
 * rows and vectors beyond MR/NV are dead code once MR and NV are constants. */
#define ACC_DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define ACC_STEP(i)                                                                            \
	if (mr > i) {                                                                          \
		const __m512 ai = _mm512_set1_ps(a[i]);                                        \
		c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);                                    \
		if (nv > 1)                                                                    \
			c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);                            \
	}
#define ACC_STORE(i)                                                                           \
	if (mr > i) {                                                                          \
		_mm512_storeu_ps(c + i * ldc, c##i##0);                                        \
		if (nv > 1)                                                                    \
			_mm512_storeu_ps(c + i * ldc + 16, c##i##1);                           \
	}
#define ACC_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)

/* Rows of the packed A panel (the kernels' mr_max). 12 rows x 2 vectors read B 2/3 as often
 * as 8 x 2 (14 loads per 24 FMAs instead of 10 per 16), which counts where B panels come
 * from L2: 24 accumulators + 2 B vectors + 1 broadcast fit the 32 zmm registers. */
#define MRX 12

static inline __attribute__((always_inline)) T512 void tile(int64_t k, const float *a, const float *b,
                                                            float *c, int64_t ldc, const int mr,
                                                            const int nv)
{
	ACC_ALL(ACC_DECL)
	int64_t p = 0;
	/* weights larger than L2 stream from L3 once per B panel: fetch A 64 steps (3 KiB)
	 * ahead (it costs nothing measurable when they are in L2) */
	if (mr >= 4 && nv > 1) {
		for (; p + 64 < k; p++, a += MRX, b += 16 * nv) {
			_mm_prefetch((const char *)(a + MRX * 64), _MM_HINT_T0);
			const __m512 b0 = _mm512_loadu_ps(b), b1 = nv > 1 ? _mm512_loadu_ps(b + 16) : b0;
			ACC_ALL(ACC_STEP)
		}
	}
	for (; p < k; p++, a += MRX, b += 16 * nv) {
		const __m512 b0 = _mm512_loadu_ps(b), b1 = nv > 1 ? _mm512_loadu_ps(b + 16) : b0;
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

/* The narrowest tile: MR rows x 8 columns, transposed: the rows lie in the lanes of one
 * vector (the A panel's 12 values of a step, one load) and each column is one broadcast B
 * value, so a step is 8 FMAs (8 independent chains) instead of the 12 half-width FMAs of a
 * tile with the columns in the lanes. Each column still adds its steps in order, one FMA
 * each, as every other tile does: an output has the same bits whichever tile computes it. */
static inline __attribute__((always_inline)) T512 void tile8t(int64_t k, const float *a, const float *b,
                                                              float *c, int64_t ldc, const int mr)
{
	const __mmask16 rows = (__mmask16)((1u << MRX) - 1);
	__m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
	for (int64_t p = 0; p < k; p++, a += MRX, b += 8) {
		const __m512 av = _mm512_maskz_loadu_ps(rows, a);
		c0 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[0]), c0);
		c1 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[1]), c1);
		c2 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[2]), c2);
		c3 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[3]), c3);
		c4 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[4]), c4);
		c5 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[5]), c5);
		c6 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[6]), c6);
		c7 = _mm512_fmadd_ps(av, _mm512_set1_ps(b[7]), c7);
	}
	float t[8][16];
	_mm512_storeu_ps(t[0], c0);
	_mm512_storeu_ps(t[1], c1);
	_mm512_storeu_ps(t[2], c2);
	_mm512_storeu_ps(t[3], c3);
	_mm512_storeu_ps(t[4], c4);
	_mm512_storeu_ps(t[5], c5);
	_mm512_storeu_ps(t[6], c6);
	_mm512_storeu_ps(t[7], c7);
	for (int i = 0; i < mr; i++)
		for (int jj = 0; jj < 8; jj++)
			c[i * ldc + jj] = t[jj][i];
}

#define K512N(MR)                                                                             \
	static T512 void k8_##MR(int64_t k, const float *a, const float *b, float *c, int64_t ldc) \
	{                                                                                         \
		tile8t(k, a, b, c, ldc, MR);                                                      \
	}
K512N(1) K512N(2) K512N(3) K512N(4) K512N(5) K512N(6) K512N(7) K512N(8) K512N(9) K512N(10)
K512N(11) K512N(12)

/* The narrowest tile over NP A panels at once (the table's rem): rows in the lanes as in
 * tile8t, NC (4 or 8) columns, each panel's A vector loaded once per step and each B value
 * broadcast once for all NP panels. A remainder of 4 positions thus runs NP x 4 independent
 * chains (tile8t ran 8, half of them on zero columns), each still one FMA per step in order:
 * the bits of every other tile. */
#define REM_DECL(g)                                                                            \
	__m512 r##g##0 = _mm512_setzero_ps(), r##g##1 = r##g##0, r##g##2 = r##g##0, r##g##3 = r##g##0, \
	       r##g##4 = r##g##0, r##g##5 = r##g##0, r##g##6 = r##g##0, r##g##7 = r##g##0;
#define REM_STEP(g)                                                                            \
	if (np > g) {                                                                          \
		const __m512 av = _mm512_maskz_loadu_ps(rows, a##g + p * MRX);                     \
		r##g##0 = _mm512_fmadd_ps(av, b0, r##g##0);                                    \
		r##g##1 = _mm512_fmadd_ps(av, b1, r##g##1);                                    \
		r##g##2 = _mm512_fmadd_ps(av, b2, r##g##2);                                    \
		r##g##3 = _mm512_fmadd_ps(av, b3, r##g##3);                                    \
		if (nc > 4) {                                                                  \
			r##g##4 = _mm512_fmadd_ps(av, b4, r##g##4);                            \
			r##g##5 = _mm512_fmadd_ps(av, b5, r##g##5);                            \
			r##g##6 = _mm512_fmadd_ps(av, b6, r##g##6);                            \
			r##g##7 = _mm512_fmadd_ps(av, b7, r##g##7);                            \
		}                                                                              \
	}
#define REM_OUT(g)                                                                             \
	if (np > g) {                                                                          \
		_mm512_storeu_ps(t[0], r##g##0);                                               \
		_mm512_storeu_ps(t[1], r##g##1);                                               \
		_mm512_storeu_ps(t[2], r##g##2);                                               \
		_mm512_storeu_ps(t[3], r##g##3);                                               \
		_mm512_storeu_ps(t[4], r##g##4);                                               \
		_mm512_storeu_ps(t[5], r##g##5);                                               \
		_mm512_storeu_ps(t[6], r##g##6);                                               \
		_mm512_storeu_ps(t[7], r##g##7);                                               \
		for (int i = 0; i < MRX; i++)                                                  \
			for (int jj = 0; jj < ncols; jj++)                                     \
				c[(g * MRX + i) * ldc + jj] = t[jj][i];                        \
	}
#define REM_ALL(M) M(0) M(1) M(2) M(3)

static inline __attribute__((always_inline)) T512 void tile_rem(int64_t k, const float *const *a,
                                                                const float *b, float *c, int64_t ldc,
                                                                const int np, const int nc, int ncols)
{
	const __mmask16 rows = (__mmask16)((1u << MRX) - 1);
	const float *a0 = a[0], *a1 = np > 1 ? a[1] : a0, *a2 = np > 2 ? a[2] : a0, *a3 = np > 3 ? a[3] : a0;
	float t[8][16];
	REM_ALL(REM_DECL)
	for (int64_t p = 0; p < k; p++, b += 8) {
		const __m512 b0 = _mm512_set1_ps(b[0]), b1 = _mm512_set1_ps(b[1]), b2 = _mm512_set1_ps(b[2]),
		             b3 = _mm512_set1_ps(b[3]);
		const __m512 b4 = nc > 4 ? _mm512_set1_ps(b[4]) : b0, b5 = nc > 4 ? _mm512_set1_ps(b[5]) : b0,
		             b6 = nc > 4 ? _mm512_set1_ps(b[6]) : b0, b7 = nc > 4 ? _mm512_set1_ps(b[7]) : b0;
		REM_ALL(REM_STEP)
	}
	REM_ALL(REM_OUT)
}

#define K512REM(NP, NC)                                                                       \
	static T512 void rem_##NP##_##NC(int64_t k, const float *const *a, const float *b, float *c, \
	                                 int64_t ldc, int ncols)                                  \
	{                                                                                         \
		tile_rem(k, a, b, c, ldc, NP, NC, ncols);                                         \
	}
K512REM(1, 4) K512REM(2, 4) K512REM(3, 4) K512REM(4, 4) K512REM(1, 8) K512REM(2, 8)

/* Up to 4 A panels: 4 x 4 accumulators for nc <= 4, 2 x 8 per call for more columns. */
static T512 void rem(int64_t k, const float *const *a, int np, int nc, const float *b, float *c, int64_t ldc)
{
	if (nc <= 4) {
		void (*const f[4])(int64_t, const float *const *, const float *, float *, int64_t,
		                   int) = { rem_1_4, rem_2_4, rem_3_4, rem_4_4 };
		f[np - 1](k, a, b, c, ldc, nc);
		return;
	}
	for (int g = 0; g < np; g += 2)
		(np - g >= 2 ? rem_2_8 : rem_1_8)(k, a + g, b, c + g * MRX * ldc, ldc, nc);
}

/* Rows of B given as pointers or offsets are not one stream the hardware prefetcher can
 * follow: the row-pointer kernels fetch the row B_AHEAD steps ahead into L1 (its 128 bytes
 * span 2 or 3 lines at 4-byte alignment), in tiles of 4+ rows: tiles of fewer rows read each
 * B row too few times for the extra loads to pay. */
#define B_AHEAD 16

static inline __attribute__((always_inline)) T512 void prefetch_row(const char *row)
{
	_mm_prefetch(row, _MM_HINT_T0);
	_mm_prefetch(row + 64, _MM_HINT_T0);
	_mm_prefetch(row + 127, _MM_HINT_T0);
}

/* The wide tile with B row p at brows[p]. */
static inline __attribute__((always_inline)) T512 void tile_ind(int64_t k, const float *a,
                                                                const float *const *brows, float *c,
                                                                int64_t ldc, const int mr)
{
	const int nv = 2;
	ACC_ALL(ACC_DECL)
	int64_t p = 0;
	if (mr >= 4) {
		for (; p + B_AHEAD < k; p++, a += MRX) {
			const float *b = brows[p];
			prefetch_row((const char *)brows[p + B_AHEAD]);
			const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
			ACC_ALL(ACC_STEP)
		}
	}
	for (; p < k; p++, a += MRX) {
		const float *b = brows[p];
		const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

/* The wide tile with B row p as two masked half-rows (kernels.h). */
static inline __attribute__((always_inline)) T512 void tile_ind2(int64_t k, const float *a,
                                                                 const float *const *bptr,
                                                                 const uint16_t *bmask, float *c,
                                                                 int64_t ldc, const int mr)
{
	const int nv = 2;
	ACC_ALL(ACC_DECL)
	for (int64_t p = 0; p < k; p++, a += MRX, bptr += 2, bmask += 2) {
		const __m512 b0 = _mm512_maskz_loadu_ps(bmask[0], bptr[0]);
		const __m512 b1 = _mm512_maskz_loadu_ps(bmask[1], bptr[1]);
		ACC_ALL(ACC_STEP)
	}
	ACC_ALL(ACC_STORE)
}

#define K512M(MR)                                                                             \
	static T512 void km_##MR(int64_t k, const float *a, const float *const *bptr,             \
	                         const uint16_t *bmask, float *c, int64_t ldc)                    \
	{                                                                                         \
		tile_ind2(k, a, bptr, bmask, c, ldc, MR);                                         \
	}
K512M(1) K512M(2) K512M(3) K512M(4) K512M(5) K512M(6) K512M(7) K512M(8) K512M(9) K512M(10)
K512M(11) K512M(12)

#define K512I(MR)                                                                             \
	static T512 void ki_##MR(int64_t k, const float *a, const float *const *brows, float *c,  \
	                         int64_t ldc)                                                     \
	{                                                                                         \
		tile_ind(k, a, brows, c, ldc, MR);                                                \
	}
K512I(1) K512I(2) K512I(3) K512I(4) K512I(5) K512I(6) K512I(7) K512I(8) K512I(9) K512I(10)
K512I(11) K512I(12)

/* The k steps of a wide rel2 tile into the accumulators (ACC_DECL'd, nv = 2): B row p's halves
 * at base0 + rel[p] and base1 + rel[p] bytes; with ahead (4+ rows), B rows B_AHEAD steps on
 * prefetched. Shared by tile_rel2 and tile_rel2_pair. */
#define REL2_ACCUMULATE                                                                        \
	int64_t p = 0;                                                                         \
	if (mr >= 4 && ahead) {                                                                \
		for (; p + B_AHEAD < k; p++, a += MRX) {                                       \
			const int64_t o = rel[p], of = rel[p + B_AHEAD];                       \
			_mm_prefetch(base0 + of, _MM_HINT_T0);                                 \
			_mm_prefetch(base0 + of + 63, _MM_HINT_T0);                            \
			_mm_prefetch(base1 + of, _MM_HINT_T0);                                 \
			_mm_prefetch(base1 + of + 63, _MM_HINT_T0);                            \
			const __m512 b0 = _mm512_loadu_ps(base0 + o), b1 = _mm512_loadu_ps(base1 + o); \
			ACC_ALL(ACC_STEP)                                                      \
		}                                                                              \
	}                                                                                      \
	for (; p < k; p++, a += MRX) {                                                         \
		const __m512 b0 = _mm512_loadu_ps(base0 + rel[p]), b1 = _mm512_loadu_ps(base1 + rel[p]); \
		ACC_ALL(ACC_STEP)                                                              \
	}

/* The wide tile with B row p's halves at base0 + rel[p] and base1 + rel[p] bytes (one row at
 * base + rel[p] when base1 = base0 + 64). */
static inline __attribute__((always_inline)) T512 void tile_rel2(int64_t k, const float *a, const char *base0,
                                                                 const char *base1, const onnxrun__krel *rel,
                                                                 float *c, int64_t ldc, const int mr,
                                                                 const bool ahead)
{
	const int nv = 2;
	ACC_ALL(ACC_DECL)
	REL2_ACCUMULATE
	ACC_ALL(ACC_STORE)
}

#define K512R(MR)                                                                             \
	static T512 void kr_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, \
	                         float *c, int64_t ldc)                                           \
	{                                                                                         \
		tile_rel2(k, a, base, base + 64, rel, c, ldc, MR, true);                          \
	}                                                                                         \
	static T512 void kh_##MR(int64_t k, const float *a, const char *base0, const char *base1, \
	                         const onnxrun__krel *rel, float *c, int64_t ldc)                       \
	{                                                                                         \
		tile_rel2(k, a, base0, base1, rel, c, ldc, MR, true);                             \
	}
K512R(1) K512R(2) K512R(3) K512R(4) K512R(5) K512R(6) K512R(7) K512R(8) K512R(9) K512R(10)
K512R(11) K512R(12)

/* phase.rel2_pair (kernels.h): tile_rel2's loop, then each row i of the tile (t1, in
 * registers) interleaved with row i of t0 as store_pair does it (two-source permutes, bias
 * added after, whole vectors non-temporal for streamed outputs when 64-byte aligned), and the
 * output lines at ypf (the caller's choice: a later call's) fetched for writing. Vector v of
 * a row (columns 16v..16v+15) lies in run v of two, or in the one run: its 32 outputs start at
 * 2 * (16v - col) from the run's, at o[v] from the row's. The offsets, out_sp and stream are
 * read once into locals: the stores could alias kp and runs, so the compiler would otherwise
 * load them again for every vector. */
static inline __attribute__((always_inline)) T512 void pair_row(const float *t0, __m512 v0, __m512 v1, float *d0,
                                                                float *d1, float bias, bool stream)
{
	const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
	const __m512 b = _mm512_set1_ps(bias);
	for (int v = 0; v < 2; v++) {
		float *d = v ? d1 : d0;
		const __m512 x0 = _mm512_loadu_ps(t0 + 16 * v), x1 = v ? v1 : v0;
		const __m512 lo = _mm512_add_ps(_mm512_permutex2var_ps(x0, lo_idx, x1), b);
		const __m512 hi = _mm512_add_ps(_mm512_permutex2var_ps(x0, hi_idx, x1), b);
		if (stream && !((uintptr_t)d & 63)) {
			_mm512_stream_ps(d, lo);
			_mm512_stream_ps(d + 16, hi);
		} else {
			_mm512_storeu_ps(d, lo);
			_mm512_storeu_ps(d + 16, hi);
		}
	}
}

#define ACC_PAIR_OUT(i)                                                                        \
	if (mr > i)                                                                            \
		pair_row(t0 + i * 32, c##i##0, c##i##1, y + i * out_sp + o0, y + i * out_sp + o1, \
		         bias ? bias[i] : 0.0f, stream);

static inline __attribute__((always_inline)) T512 void tile_rel2_pair(const struct onnxrun__kpanel *kp, int64_t k,
                                                                      const float *a, const char *base0,
                                                                      const char *base1, const onnxrun__krel *rel,
                                                                      bool ahead, const float *t0,
                                                                      const struct onnxrun__krun *runs,
                                                                      int64_t nrun, float *y, const float *bias,
                                                                      const float *ypf, const int mr)
{
	const int nv = 2;
	const bool stream = kp->stream;
	const int64_t out_sp = kp->out_sp;
	const struct onnxrun__krun *r1 = &runs[nrun == 1 ? 0 : 1];
	const int64_t o0 = runs[0].yoff - 2 * runs[0].col, o1 = r1->yoff + 2 * (16 - r1->col);
	ACC_ALL(ACC_DECL)
	REL2_ACCUMULATE
	ACC_ALL(ACC_PAIR_OUT)
	if (stream || !ypf)
		return;
	/* each vector's 32 outputs: 128 bytes, two lines (rows of whole vectors) */
	for (int64_t i = 0; i < mr; i++) {
		const char *yl = (const char *)(ypf + i * out_sp);
		__builtin_prefetch(yl + 4 * o0, 1);
		__builtin_prefetch(yl + 4 * o0 + 64, 1);
		__builtin_prefetch(yl + 4 * o1, 1);
		__builtin_prefetch(yl + 4 * o1 + 64, 1);
	}
}

#define K512P(MR)                                                                             \
	static T512 void kp_##MR(const struct onnxrun__kpanel *kp, int64_t k, const float *a, const char *base0, \
	                         const char *base1, const onnxrun__krel *rel, bool ahead, const float *t0, \
	                         const struct onnxrun__krun *runs, int64_t nrun, float *y, const float *bias, \
	                         const float *ypf)                                                \
	{                                                                                         \
		tile_rel2_pair(kp, k, a, base0, base1, rel, ahead, t0, runs, nrun, y, bias, ypf, MR); \
	}
K512P(1) K512P(2) K512P(3) K512P(4) K512P(5) K512P(6) K512P(7) K512P(8) K512P(9) K512P(10)
K512P(11) K512P(12)

T512 void onnxrun__rel2_pair_avx512(const struct onnxrun__kpanel *kp, int64_t k, const float *a, int64_t mr,
                                    const char *base0, const char *base1, const onnxrun__krel *rel, bool ahead,
                                    const float *t0, const struct onnxrun__krun *runs, int64_t nrun, float *y,
                                    int64_t ydelta, const float *bias, const float *ypf)
{
	static void (*const f[MRX])(const struct onnxrun__kpanel *, int64_t, const float *, const char *, const char *,
	                            const onnxrun__krel *, bool, const float *, const struct onnxrun__krun *, int64_t,
	                            float *, const float *, const float *) = { kp_1, kp_2, kp_3, kp_4, kp_5,  kp_6,
	                                                                       kp_7, kp_8, kp_9, kp_10, kp_11, kp_12 };
	f[mr - 1](kp, k, a, base0, base1, rel, ahead, t0, runs, nrun, y + ydelta, bias, ypf);
}

/* The window GEMM's tile (kernels.h, onnxrun__window_kernels): B at base + rel[p] without the
 * row prefetches. Its B rows are a few staged rows read at T*T shifts, in L1 after the
 * panel's first reads, where the 4 prefetches per step only took load slots (dcgan_64_3:
 * the tile 15% faster without them). */
#define K512W(MR)                                                                             \
	static T512 void kw_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, \
	                         float *c, int64_t ldc)                                           \
	{                                                                                         \
		tile_rel2(k, a, base, base + 64, rel, c, ldc, MR, false);                         \
	}
K512W(1) K512W(2) K512W(3) K512W(4) K512W(5) K512W(6) K512W(7) K512W(8) K512W(9) K512W(10)
K512W(11) K512W(12)

/* The window tile copying staged rows meanwhile (kernels.h, tile_copy): after each
 * `every` k steps one piece of 16 floats (masked at a row's end). Its load waits on x (L3)
 * while the following steps' FMAs, independent of it, go on: spread this way the copy's
 * latency hides behind the arithmetic, where a block copy between tiles waits on all of it. */
/* The k steps of tile_win_copy into the accumulators (ACC_DECL'd, nv vectors), the copy state
 * read from and left in cp. Shared by tile_win_copy and tile_win_out. */
#define WIN_COPY_ACCUMULATE                                                                    \
	const char *const base1 = base + 64;                                                   \
	const struct onnxrun__win_row *row = cp->row, *const end = cp->end;                     \
	int64_t off = cp->off, left = cp->pieces, rep = cp->rep;                               \
	const int64_t every = cp->every;                                                       \
	for (int64_t p = 0; p < k;) {                                                          \
		const int64_t stop = k - p > every ? p + every : k;                            \
		for (; p < stop; p++, a += MRX) {                                              \
			const __m512 b0 = _mm512_loadu_ps(base + rel[p]),                     \
			             b1 = nv > 1 ? _mm512_loadu_ps(base1 + rel[p]) : b0;       \
			ACC_ALL(ACC_STEP)                                                      \
		}                                                                              \
		if (left > 0 && row < end) {                                                   \
			const int64_t n = row->n - off;                                        \
			const float *const s = row->src + rep * row->src_step + off;           \
			float *const d = row->dst + rep * row->dst_step + off;                 \
			if (n >= 16) {                                                         \
				_mm512_storeu_ps(d, _mm512_loadu_ps(s));                       \
				off += 16;                                                     \
			} else {                                                               \
				const __mmask16 m = (__mmask16)((1u << n) - 1);                \
				_mm512_mask_storeu_ps(d, m, _mm512_maskz_loadu_ps(m, s));      \
				off += n;                                                      \
			}                                                                      \
			left--;                                                                \
			if (off == row->n) {                                                   \
				off = 0;                                                       \
				if (++rep == row->reps) {                                      \
					row++;                                                 \
					rep = 0;                                               \
				}                                                              \
			}                                                                      \
		}                                                                              \
	}                                                                                      \
	cp->row = row;                                                                         \
	cp->off = off;                                                                         \
	cp->pieces = left;                                                                     \
	cp->rep = rep;

static inline __attribute__((always_inline)) T512 void tile_win_copy(int64_t k, const float *a, const char *base,
                                                                     const onnxrun__krel *rel, float *c,
                                                                     int64_t ldc, const int mr, const int nv,
                                                                     struct onnxrun__win_copy *cp)
{
	ACC_ALL(ACC_DECL)
	WIN_COPY_ACCUMULATE
	ACC_ALL(ACC_STORE)
}

/* tile_out (kernels.h): group g's nvec output vectors (output q = 16w + lane in o[w]) to the
 * runs of out that take them, masked. */
static inline __attribute__((always_inline)) T512 void win_put(const struct onnxrun__win_out *out, int g,
                                                               const __m512 *o, const int nvec)
{
	float *const yg = out->y + out->yg[g];
	for (int64_t r = 0; r < out->nseg; r++) {
		const struct onnxrun__win_seg *sg = &out->seg[r];
		if (!(sg->groups >> g & 1))
			continue;
		for (int w = 0; w < nvec; w++)
			if (sg->mask[w])
				_mm512_mask_storeu_ps(yg + sg->d + 16 * w, (__mmask16)sg->mask[w], o[w]);
	}
}

/* The output vectors of a group as onnxrun__win_store_avx512 forms them (bias added to each
 * tile value, then the s rows interleaved): s = 1 the row itself, 2 two-source permutes, 3 a
 * two-source permute of rows 0 and 1 and a masked permute of row 2, per 16 columns. */
#define WIN_OUT1(g, i)                                                                         \
	if (mr > i) {                                                                          \
		const __m512 bv = _mm512_set1_ps(out->bias[g]);                                \
		const __m512 o[2] = { _mm512_add_ps(c##i##0, bv), _mm512_add_ps(c##i##1, bv) }; \
		win_put(out, g, o, nv);                                                        \
	}
#define WIN_OUT2(g, i, j)                                                                      \
	if (mr > j) {                                                                          \
		const __m512 bv = _mm512_set1_ps(out->bias[g]);                                \
		const __m512 x0 = _mm512_add_ps(c##i##0, bv), y0 = _mm512_add_ps(c##j##0, bv); \
		const __m512 x1 = _mm512_add_ps(c##i##1, bv), y1 = _mm512_add_ps(c##j##1, bv); \
		const __m512 o[4] = { _mm512_permutex2var_ps(x0, lo2, y0), _mm512_permutex2var_ps(x0, hi2, y0), \
			              _mm512_permutex2var_ps(x1, lo2, y1), _mm512_permutex2var_ps(x1, hi2, y1) }; \
		win_put(out, g, o, 2 * nv);                                                    \
	}
#define WIN_OUT3_V(x, y, z, v)                                                                 \
	_mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(x, ab##v, y), (__mmask16)win3m[v], pc##v, z)
#define WIN_OUT3(g, i, j, l)                                                                   \
	if (mr > l) {                                                                          \
		const __m512 bv = _mm512_set1_ps(out->bias[g]);                                \
		const __m512 x0 = _mm512_add_ps(c##i##0, bv), y0 = _mm512_add_ps(c##j##0, bv), \
		             z0 = _mm512_add_ps(c##l##0, bv);                                  \
		const __m512 x1 = _mm512_add_ps(c##i##1, bv), y1 = _mm512_add_ps(c##j##1, bv), \
		             z1 = _mm512_add_ps(c##l##1, bv);                                  \
		const __m512 o[6] = { WIN_OUT3_V(x0, y0, z0, 0), WIN_OUT3_V(x0, y0, z0, 1),    \
			              WIN_OUT3_V(x0, y0, z0, 2), WIN_OUT3_V(x1, y1, z1, 0),    \
			              WIN_OUT3_V(x1, y1, z1, 1), WIN_OUT3_V(x1, y1, z1, 2) };  \
		win_put(out, g, o, 3 * nv);                                                    \
	}

static inline __attribute__((always_inline)) T512 void tile_win_out(int64_t k, const float *a, const char *base,
                                                                    const onnxrun__krel *rel, const int mr,
                                                                    const int nv, struct onnxrun__win_copy *cp,
                                                                    const struct onnxrun__win_out *out)
{
	ACC_ALL(ACC_DECL)
	WIN_COPY_ACCUMULATE
	if (out->s == 2) {
		const __m512i lo2 = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
		const __m512i hi2 = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
		WIN_OUT2(0, 0, 1) WIN_OUT2(1, 2, 3) WIN_OUT2(2, 4, 5) WIN_OUT2(3, 6, 7) WIN_OUT2(4, 8, 9)
		WIN_OUT2(5, 10, 11)
	} else if (out->s == 3) {
		static const uint16_t win3m[3] = { 0x4924, 0x2492, 0x9249 };
		const __m512i ab0 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
		const __m512i ab1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
		const __m512i ab2 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
		const __m512i pc0 = _mm512_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5);
		const __m512i pc1 = _mm512_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10);
		const __m512i pc2 = _mm512_setr_epi32(10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15);
		WIN_OUT3(0, 0, 1, 2) WIN_OUT3(1, 3, 4, 5) WIN_OUT3(2, 6, 7, 8) WIN_OUT3(3, 9, 10, 11)
	} else {
		WIN_OUT1(0, 0) WIN_OUT1(1, 1) WIN_OUT1(2, 2) WIN_OUT1(3, 3) WIN_OUT1(4, 4) WIN_OUT1(5, 5)
		WIN_OUT1(6, 6) WIN_OUT1(7, 7) WIN_OUT1(8, 8) WIN_OUT1(9, 9) WIN_OUT1(10, 10) WIN_OUT1(11, 11)
	}
}

#define K512WO(MR)                                                                            \
	static T512 void kwo_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, \
	                          struct onnxrun__win_copy *cp, const struct onnxrun__win_out *out) \
	{                                                                                         \
		tile_win_out(k, a, base, rel, MR, 2, cp, out);                                    \
	}                                                                                         \
	static T512 void kwoh_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, \
	                           struct onnxrun__win_copy *cp, const struct onnxrun__win_out *out) \
	{                                                                                         \
		tile_win_out(k, a, base, rel, MR, 1, cp, out);                                    \
	}
K512WO(1) K512WO(2) K512WO(3) K512WO(4) K512WO(5) K512WO(6) K512WO(7) K512WO(8) K512WO(9)
K512WO(10) K512WO(11) K512WO(12)

static T512 void win_tile_out(int64_t k, const float *a, int64_t mr, bool half, const char *base,
                              const onnxrun__krel *rel, struct onnxrun__win_copy *cp,
                              const struct onnxrun__win_out *out)
{
	typedef void (*fn)(int64_t, const float *, const char *, const onnxrun__krel *, struct onnxrun__win_copy *,
	                   const struct onnxrun__win_out *);
	static const fn f[2][MRX] = {
		{ kwo_1, kwo_2, kwo_3, kwo_4, kwo_5, kwo_6, kwo_7, kwo_8, kwo_9, kwo_10, kwo_11, kwo_12 },
		{ kwoh_1, kwoh_2, kwoh_3, kwoh_4, kwoh_5, kwoh_6, kwoh_7, kwoh_8, kwoh_9, kwoh_10, kwoh_11, kwoh_12 }
	};
	f[half][mr - 1](k, a, base, rel, cp, out);
}

#define K512WC(MR)                                                                            \
	static T512 void kwc_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, \
	                          float *c, int64_t ldc, struct onnxrun__win_copy *cp)           \
	{                                                                                         \
		tile_win_copy(k, a, base, rel, c, ldc, MR, 2, cp);                                \
	}                                                                                         \
	static T512 void kwh_##MR(int64_t k, const float *a, const char *base, const onnxrun__krel *rel, \
	                           float *c, int64_t ldc, struct onnxrun__win_copy *cp)          \
	{                                                                                         \
		tile_win_copy(k, a, base, rel, c, ldc, MR, 1, cp);                                \
	}
K512WC(1) K512WC(2) K512WC(3) K512WC(4) K512WC(5) K512WC(6) K512WC(7) K512WC(8) K512WC(9)
K512WC(10) K512WC(11) K512WC(12)

#define K512(MR, NV)                                                                          \
	static T512 void k_##MR##_##NV(int64_t k, const float *a, const float *b, float *c,       \
	                                int64_t ldc)                                              \
	{                                                                                         \
		tile(k, a, b, c, ldc, MR, NV);                                                    \
	}
#define K512_ROWS(NV) K512(1, NV) K512(2, NV) K512(3, NV) K512(4, NV) K512(5, NV) K512(6, NV) \
	K512(7, NV) K512(8, NV) K512(9, NV) K512(10, NV) K512(11, NV) K512(12, NV)
K512_ROWS(1)
K512_ROWS(2)

/* The wide tile with one quarter of its 32 columns left out on some k steps (kernels.h,
 * skip_quarter; used where the tuning's skip_quarters says). Each row's half without that
 * quarter is one zmm as in tile; the other half, the quarter skipped (E) and the one kept
 * (Q), is computed for two rows at once, lanes interleaved: rows 2h and 2h+1 of a step are
 * one 64-bit broadcast of the A panel ([a0 a1 a0 a1 ...]) and the quarter's 8 B values are
 * each repeated twice ([b0 b0 b1 b1 ...], one permute per step and quarter), so one zmm FMA
 * does two rows' quarter. The E FMAs are left out on the steps whose bit of mask is set: 12
 * rows take 12 + 6 + 6 zmm accumulators and FMAs per step, as many as tile, and 18 FMAs on
 * the steps that skip E, in one pass over B. Every output is still one FMA per step in order
 * from zero (its skipped steps left out). With an odd mr the last pair's second row is the
 * A panel's zero row (computed, not stored). */
/* [a0 a1 a0 a1 ...] from a[0], a[1]: one broadcast load (in asm, so that the compiler does not
 * load the pairs as scalars once for both branches of the step and broadcast them from
 * registers, which takes a shuffle each) */
static inline __attribute__((always_inline)) T512 __m512 pair_bcast(const float *a)
{
	__m512 r;
	__asm__ __volatile__("vbroadcastsd %1, %0" : "=v"(r) : "m"(*(const struct { float f[2]; } *)a));
	return r;
}

#define SKIP_DECL(i) __m512 z##i = _mm512_setzero_ps();
#define PAIR_DECL(h) __m512 q##h = _mm512_setzero_ps(), e##h = q##h;
#define SKIP_Z(i)                                                                              \
	if (mr > i)                                                                            \
		z##i = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), bz, z##i);
#define PAIR_Q(h)                                                                              \
	if (mr > 2 * h) {                                                                      \
		const __m512 ap = pair_bcast(a + 2 * h);                                       \
		q##h = _mm512_fmadd_ps(ap, bq, q##h);                                          \
	}
#define PAIR_QE(h)                                                                             \
	if (mr > 2 * h) {                                                                      \
		const __m512 ap = pair_bcast(a + 2 * h);                                       \
		q##h = _mm512_fmadd_ps(ap, bq, q##h);                                          \
		e##h = _mm512_fmadd_ps(ap, be, e##h);                                          \
	}
#define SKIP_STORE(i)                                                                          \
	if (mr > i)                                                                            \
		_mm512_storeu_ps(c + i * ldc + zo, z##i);
#define PAIR_PUT(v, h, o)                                                                      \
	{                                                                                      \
		const __m512 d = _mm512_permutexvar_ps(deint, v##h);                           \
		_mm256_storeu_ps(c + 2 * h * ldc + o, _mm512_castps512_ps256(d));              \
		if (mr > 2 * h + 1)                                                            \
			_mm256_storeu_ps(c + (2 * h + 1) * ldc + o,                            \
			                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1))); \
	}
#define PAIR_STORE(h)                                                                          \
	if (mr > 2 * h) {                                                                      \
		PAIR_PUT(q, h, qo)                                                             \
		PAIR_PUT(e, h, eo)                                                             \
	}
#define PAIR_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5)

static inline __attribute__((always_inline)) T512 void tile_skip(int64_t k, const float *a, const float *b,
                                                                 float *c, int64_t ldc, const int mr,
                                                                 int quarter, int period, uint32_t mask)
{
	/* columns: the skipped quarter at eo, the other quarter of its half at qo, the other
	 * half at zo; ho the skipped quarter's half */
	const int64_t eo = 8 * quarter, qo = eo ^ 8, ho = eo & 16, zo = ho ^ 16;
	const __m512i twice = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
	const __m512i iq = _mm512_add_epi32(twice, _mm512_set1_epi32((int)(qo - ho)));
	const __m512i ie = _mm512_add_epi32(twice, _mm512_set1_epi32((int)(eo - ho)));
	ACC_ALL(SKIP_DECL)
	PAIR_ALL(PAIR_DECL)
	int t = 0;
	for (int64_t p = 0; p < k; p++, a += MRX, b += 32) {
		if (mr >= 4 && p + 64 < k)
			_mm_prefetch((const char *)(a + MRX * 64), _MM_HINT_T0);
		const __m512 bz = _mm512_loadu_ps(b + zo), bh = _mm512_loadu_ps(b + ho);
		const __m512 bq = _mm512_permutexvar_ps(iq, bh), be = _mm512_permutexvar_ps(ie, bh);
		ACC_ALL(SKIP_Z)
		if (mask >> t & 1) {
			PAIR_ALL(PAIR_Q)
		} else {
			PAIR_ALL(PAIR_QE)
		}
		t = t + 1 == period ? 0 : t + 1;
	}
	ACC_ALL(SKIP_STORE)
	const __m512i deint = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
	PAIR_ALL(PAIR_STORE)
}

#define K512S(MR)                                                                             \
	static T512 void ks_##MR(int64_t k, const float *a, const float *b, float *c, int64_t ldc, \
	                         int quarter, int period, uint32_t mask)                          \
	{                                                                                         \
		tile_skip(k, a, b, c, ldc, MR, quarter, period, mask);                            \
	}
K512S(1) K512S(2) K512S(3) K512S(4) K512S(5) K512S(6) K512S(7) K512S(8) K512S(9) K512S(10)
K512S(11) K512S(12)

static T512 void skip_tile(int64_t k, const float *a, int64_t mr, const float *b, float *c, int64_t ldc, int quarter,
                           int period, uint32_t mask)
{
	static void (*const f[MRX])(int64_t, const float *, const float *, float *, int64_t, int, int,
	                            uint32_t) = { ks_1, ks_2, ks_3, ks_4, ks_5,  ks_6,
	                                          ks_7, ks_8, ks_9, ks_10, ks_11, ks_12 };
	f[mr - 1](k, a, b, c, ldc, quarter, period, mask);
}

const struct onnxrun__gemm_kernels onnxrun__gemm_avx512 = {
	MRX, { 32, 16, 8 },
	{ { k_1_2, k_2_2, k_3_2, k_4_2, k_5_2, k_6_2, k_7_2, k_8_2, k_9_2, k_10_2, k_11_2, k_12_2 },
	  { k_1_1, k_2_1, k_3_1, k_4_1, k_5_1, k_6_1, k_7_1, k_8_1, k_9_1, k_10_1, k_11_1, k_12_1 },
	  { k8_1, k8_2, k8_3, k8_4, k8_5, k8_6, k8_7, k8_8, k8_9, k8_10, k8_11, k8_12 } },
	{ ki_1, ki_2, ki_3, ki_4, ki_5, ki_6, ki_7, ki_8, ki_9, ki_10, ki_11, ki_12 },
	{ km_1, km_2, km_3, km_4, km_5, km_6, km_7, km_8, km_9, km_10, km_11, km_12 },
	{ kr_1, kr_2, kr_3, kr_4, kr_5, kr_6, kr_7, kr_8, kr_9, kr_10, kr_11, kr_12 },
	{ kh_1, kh_2, kh_3, kh_4, kh_5, kh_6, kh_7, kh_8, kh_9, kh_10, kh_11, kh_12 },
	4, rem,
	skip_tile,
};

const struct onnxrun__window_kernels onnxrun__window_avx512 = {
	{ kw_1, kw_2, kw_3, kw_4, kw_5, kw_6, kw_7, kw_8, kw_9, kw_10, kw_11, kw_12 },
	onnxrun__win_store_avx512,
	{ kwc_1, kwc_2, kwc_3, kwc_4, kwc_5, kwc_6, kwc_7, kwc_8, kwc_9, kwc_10, kwc_11, kwc_12 },
	{ kwh_1, kwh_2, kwh_3, kwh_4, kwh_5, kwh_6, kwh_7, kwh_8, kwh_9, kwh_10, kwh_11, kwh_12 },
	win_tile_out,
};
#endif
