/*
 * test_mcu_kernels.c - every entry of the Helium (MVE) kernel table on the target (qemu's
 * mps3-an547, a Cortex-M55), with random shapes from a fixed seed: the float32 micro-kernels
 * of every width and row count (packed B, row pointers, base + offset) against a
 * long-double reference within gamma_k * sum |a*b|, and the three ways of reading B giving the
 * same bits; the tile stores, the paired stride-2 store, the row pointers, the overlap-add and
 * the DepthToSpace interleaves bitwise against the scalar table; the depthwise rows against a
 * reference scatter written here from the spec. The op-level tests (test_kernels.c and the
 * others, cmocka on the host) cover the same entries through the ops where cmocka runs; this
 * firmware is what runs them on a Helium CPU. Each entry's use is counted and must be > 0.
 * On a CPU without Helium it checks nothing and says so.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"
#include "mcu_test.h"

#define SEED 20261205u

static uint64_t rng_state = SEED;

static uint32_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static int64_t rint_in(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}

/* values in [-1, 1] that are not exact in binary (real rounding) */
static float rfloat(void)
{
	return (float)(rnd() % 20001) * 1e-4f - 1.0f;
}

static void *big(size_t n)
{
	return mcu_big_alloc(n, 64);
}

static const struct onnxrun__kernels *scalar, *mve;
static long used_fn[3][ONNXRUN__GEMM_MR_MAX], used_ind[ONNXRUN__GEMM_MR_MAX], used_rel[ONNXRUN__GEMM_MR_MAX];
static long used_store, used_store_strided, used_store_pair, used_pack_rows, used_gather, used_dw, used_d2s2,
	used_d2s4;

/* ---- micro-kernels ---- */

static void test_gemm(int iters)
{
	const struct onnxrun__gemm_kernels *g = mve->gemm;
	const int mrm = g->mr_max;
	for (int it = 0; it < iters; it++) {
		const size_t mark = mcu_big_mark();
		const int v = (int)rint_in(0, 2), mr = (int)rint_in(1, mrm), nr = g->nr[v];
		const int64_t k = it % 17 == 0 ? rint_in(0, 1) : rint_in(1, it % 5 == 0 ? 300 : 40);
		const int64_t ldc = nr + (it % 3 == 0 ? 5 : 0);
		float *a = big((size_t)(k * mrm + 1) * sizeof *a), *b = big((size_t)(k * nr + 1) * sizeof *b);
		float *c = big((size_t)(mrm * ldc + 8) * sizeof *c), *c2 = big((size_t)(mrm * ldc + 8) * sizeof *c2);
		for (int64_t i = 0; i < k * mrm; i++)
			a[i] = rfloat();
		for (int64_t i = 0; i < k * nr; i++)
			b[i] = rfloat();
		for (int64_t i = 0; i < mrm * ldc + 8; i++)
			c[i] = -999.0f;
		g->fn[v][mr - 1](k, a, b, c, ldc);
		used_fn[v][mr - 1]++;
		for (int i = 0; i < mrm; i++)
			for (int j = 0; j < ldc; j++) {
				const float got = c[i * ldc + j];
				if (i >= mr || j >= nr) {
					CHECK(got == -999.0f, "gemm v=%d mr=%d: c[%d][%d] outside the tile written (it %d)", v, mr, i,
					      j, it);
					continue;
				}
				long double want = 0, mag = 0;
				for (int64_t p = 0; p < k; p++) {
					want += (long double)a[p * mrm + i] * b[p * nr + j];
					mag += fabsl((long double)a[p * mrm + i] * b[p * nr + j]);
				}
				CHECK(fabsl(got - want) <= (long double)(k + 1) * FLT_EPSILON * mag,
				      "gemm v=%d mr=%d k=%ld c[%d][%d] = %.9g, want %.9Lg (seed %u it %d)", v, mr, (long)k, i, j,
				      (double)got, want, SEED, it);
			}
		if (v == 0 && k > 0) {
			/* the same panel read in place: rows at scattered, word-aligned addresses */
			float *pool = big((size_t)(k * (nr + 7) + 8) * sizeof *pool);
			const float **rows = big((size_t)k * sizeof *rows);
			onnxrun__krel *rel = big((size_t)k * sizeof *rel);
			for (int64_t p = 0; p < k; p++) {
				float *row = pool + p * (nr + 7) + rint_in(0, 6);
				memcpy(row, b + p * nr, (size_t)nr * sizeof *row);
				rows[p] = row;
				rel[p] = (onnxrun__krel)((const char *)row - (const char *)pool);
			}
			if (g->ind[mr - 1]) {
				memcpy(c2, c, (size_t)(mrm * ldc + 8) * sizeof *c2);
				g->ind[mr - 1](k, a, rows, c2, ldc);
				used_ind[mr - 1]++;
				CHECK(!memcmp(c, c2, (size_t)(mrm * ldc + 8) * sizeof *c), "ind mr=%d k=%ld differs from the packed kernel",
				      mr, (long)k);
			}
			if (g->rel[mr - 1]) {
				memcpy(c2, c, (size_t)(mrm * ldc + 8) * sizeof *c2);
				g->rel[mr - 1](k, a, (const char *)pool, rel, c2, ldc);
				used_rel[mr - 1]++;
				CHECK(!memcmp(c, c2, (size_t)(mrm * ldc + 8) * sizeof *c), "rel mr=%d k=%ld differs from the packed kernel",
				      mr, (long)k);
			}
		}
		mcu_big_release(mark);
	}
}

/* ---- tile stores ---- */

static void test_stores(int iters)
{
	for (int it = 0; it < iters; it++) {
		const size_t mark = mcu_big_mark();
		const int64_t nr = mve->gemm->nr[rint_in(0, 2)], mr = rint_in(1, mve->gemm->mr_max);
		const int64_t sl = it % 2 ? 1 : rint_in(2, 5), nrun = rint_in(1, 3);
		struct onnxrun__krun runs[3];
		int64_t col = 0;
		for (int64_t s = 0; s < nrun; s++) {
			runs[s].col = col;
			runs[s].len = s == nrun - 1 ? nr - col : rint_in(0, nr - col);
			runs[s].yoff = s * (nr * sl + 7) + rint_in(0, 3);
			col += runs[s].len;
		}
		const int64_t out_sp = nrun * (nr * sl + 7) + 11, ny = mr * out_sp + 16, ydelta = rint_in(0, 3);
		struct onnxrun__kpanel kp = { 1, 1, out_sp, sl, false };
		float *t0 = big((size_t)(mr * nr) * sizeof(float)), *t1 = big((size_t)(mr * nr) * sizeof(float));
		float *bias = it % 3 ? big((size_t)mr * sizeof(float)) : NULL;
		float *y1 = big((size_t)ny * sizeof(float)), *y2 = big((size_t)ny * sizeof(float));
		for (int64_t i = 0; i < mr * nr; i++) {
			t0[i] = rfloat();
			t1[i] = rfloat();
		}
		for (int64_t i = 0; bias && i < mr; i++)
			bias[i] = rfloat();
		for (int64_t i = 0; i < ny; i++)
			y1[i] = y2[i] = (float)i;
		scalar->phase.store(&kp, t0, nr, mr, runs, nrun, y1, ydelta, bias);
		mve->phase.store(&kp, t0, nr, mr, runs, nrun, y2, ydelta, bias);
		used_store++;
		used_store_strided += sl > 1;
		CHECK(!memcmp(y1, y2, (size_t)ny * sizeof *y1), "store nr=%ld mr=%ld sl=%ld nrun=%ld differs from scalar (it %d)",
		      (long)nr, (long)mr, (long)sl, (long)nrun, it);
		if (mve->phase.store_pair) {
			/* stride 2: t1's element e right after t0's */
			kp.sl = 2;
			for (int64_t s = 0; s < nrun; s++)
				runs[s].yoff = s * (nr * 2 + 7) + rint_in(0, 3);
			for (int64_t i = 0; i < ny; i++)
				y1[i] = y2[i] = (float)-i;
			if (nrun * (nr * 2 + 7) + 11 <= out_sp) {
				scalar->phase.store(&kp, t0, nr, mr, runs, nrun, y1, ydelta, bias);
				scalar->phase.store(&kp, t1, nr, mr, runs, nrun, y1, ydelta + 1, bias);
				mve->phase.store_pair(&kp, t0, t1, nr, mr, runs, nrun, y2, ydelta, bias);
				used_store_pair++;
				CHECK(!memcmp(y1, y2, (size_t)ny * sizeof *y1), "store_pair nr=%ld mr=%ld nrun=%ld differs (it %d)",
				      (long)nr, (long)mr, (long)nrun, it);
			}
		}
		mcu_big_release(mark);
	}
}

/* ---- B rows in place or packed ---- */

static void test_pack_rows(int iters)
{
	for (int it = 0; it < iters; it++) {
		const size_t mark = mcu_big_mark();
		const int64_t nr = mve->gemm->nr[0], cg = rint_in(1, 3), nt = rint_in(1, 5), in_sp = 3 * nr + rint_in(0, 5);
		struct onnxrun__kpanel kp = { cg, in_sp, 1, 1, false };
		struct onnxrun__kcopy cp[5];
		float *x = big((size_t)(cg * in_sp) * sizeof(float));
		float *bp1 = big((size_t)(cg * nt * nr) * sizeof(float)), *bp2 = big((size_t)(cg * nt * nr) * sizeof(float));
		const float **r1 = big((size_t)(cg * nt) * sizeof(float *)), **r2 = big((size_t)(cg * nt) * sizeof(float *));
		for (int64_t i = 0; i < cg * in_sp; i++)
			x[i] = rfloat();
		for (int64_t t = 0; t < nt; t++) {
			const int kind = (int)rint_in(0, 2);
			cp[t].n = kind == 0 ? (int32_t)nr : kind == 1 ? 0 : (int32_t)rint_in(1, nr - 1);
			cp[t].zlo = kind == 2 ? (int32_t)rint_in(0, nr - cp[t].n) : kind == 1 ? (int32_t)nr : 0;
			cp[t].zhi = (int32_t)nr - cp[t].zlo - cp[t].n;
			cp[t].src = kind == 1 ? -1 : rint_in(0, in_sp - nr);
		}
		for (int64_t i = 0; i < cg * nt * nr; i++)
			bp1[i] = bp2[i] = -5.0f;
		scalar->phase.pack_rows(&kp, x, nt, nr, cp, bp1, r1);
		mve->phase.pack_rows(&kp, x, nt, nr, cp, bp2, r2);
		used_pack_rows++;
		for (int64_t row = 0; row < cg * nt; row++) {
			const bool packed1 = r1[row] >= bp1 && r1[row] < bp1 + cg * nt * nr;
			const bool packed2 = r2[row] >= bp2 && r2[row] < bp2 + cg * nt * nr;
			CHECK(packed1 == packed2 && (packed1 ? r2[row] - bp2 == r1[row] - bp1 : r1[row] == r2[row]),
			      "pack_rows row %ld: a different row pointer (it %d)", (long)row, it);
			if (packed1 && packed2)
				CHECK(!memcmp(r1[row], r2[row], (size_t)nr * sizeof(float)), "pack_rows row %ld: different values",
				      (long)row);
		}
		mcu_big_release(mark);
	}
}

#ifndef ONNXRUN_FLOAT32_ONLY /* a float32-only build's tables have neither */
/* ---- overlap-add ---- */

static void test_gather(int iters)
{
	for (int it = 0; it < iters; it++) {
		const size_t mark = mcu_big_mark();
		const int64_t s = rint_in(1, 4), d = rint_in(1, 2), K = rint_in(1, 6), nrows = rint_in(1, 3);
		const int64_t zoff = rint_in(0, 2), zend = zoff + rint_in(1, 40), ldz = zend - zoff + rint_in(0, 3);
		const int64_t pb = rint_in(0, 3), o_lo = rint_in(0, 3), o_hi = o_lo + rint_in(1, 60);
		int64_t t_start[5] = { 0 }, t_k[6];
		for (int64_t r = 0, n = 0; r < s; r++) {
			for (int64_t k = 0; k < K; k++)
				if ((k * d) % s == r)
					t_k[n++] = k;
			t_start[r + 1] = n;
		}
		const struct onnxrun__kgather kg = { s, d, pb, ldz, t_start, t_k };
		const float *zrows[3];
		for (int64_t t = 0; t < nrows; t++) {
			float *z = big((size_t)(K * ldz) * sizeof(float));
			for (int64_t i = 0; i < K * ldz; i++)
				z[i] = rfloat();
			zrows[t] = z;
		}
		const int64_t ny = o_hi + 8;
		float *y1 = big((size_t)ny * sizeof(float)), *y2 = big((size_t)ny * sizeof(float));
		float *tmp = big((size_t)(o_hi / s + 8) * sizeof(float));
		const float bias = rfloat();
		for (int64_t i = 0; i < ny; i++)
			y1[i] = y2[i] = (float)i;
		scalar->col2im_gather(&kg, zrows, nrows, y1, o_lo, o_hi, bias, tmp, zoff, zend);
		mve->col2im_gather(&kg, zrows, nrows, y2, o_lo, o_hi, bias, tmp, zoff, zend);
		used_gather++;
		CHECK(!memcmp(y1, y2, (size_t)ny * sizeof *y1), "col2im_gather s=%ld d=%ld K=%ld differs from scalar (it %d)",
		      (long)s, (long)d, (long)K, it);
		mcu_big_release(mark);
	}
}

/* ---- depthwise rows ---- */

/* floor(a / b), b > 0 */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* An axis's taps by residue (depthwise.h): k with k*d = r (mod s), ascending, delta
 * (k*d - r)/s; the grid range of each residue whose outputs o = q*s + r - pb lie in [0, out). */
static void dw_axis(struct onnxrun__kdw_axis *a)
{
	int64_t *buf = big((size_t)(3 * (a->s + 1) + 2 * a->k) * sizeof(int64_t));
	int64_t fill = 0;
	a->start = buf;
	a->qlo = buf + a->s + 1;
	a->qhi = a->qlo + a->s;
	a->kk = a->qhi + a->s;
	a->dl = a->kk + a->k;
	for (int64_t r = 0; r < a->s; r++) {
		a->start[r] = fill;
		for (int64_t k = 0; k < a->k; k++)
			if ((k * a->d) % a->s == r) {
				a->kk[fill] = k;
				a->dl[fill++] = (k * a->d - r) / a->s;
			}
		/* q*s + r - pb in [0, out): q from ceil((pb - r)/s) to floor((out - 1 + pb - r)/s) */
		a->qlo[r] = floor_div(a->pb - r + a->s - 1, a->s);
		a->qhi[r] = floor_div(a->out - 1 + a->pb - r, a->s);
	}
	a->start[a->s] = fill;
}

static void test_dw(int iters)
{
	for (int it = 0; it < iters; it++) {
		const size_t mark = mcu_big_mark();
		struct onnxrun__kdw j;
		int64_t pe[2];
		memset(&j, 0, sizeof j);
		j.chans = rint_in(1, 3);
		for (int a = 0; a < 2; a++) {
			struct onnxrun__kdw_axis *ax = &j.ax[a];
			ax->in = a == 0 ? rint_in(1, 5) : rint_in(1, 45);
			ax->k = rint_in(1, a == 0 ? 3 : 5);
			ax->s = rint_in(1, 3);
			ax->d = rint_in(1, 2);
			const int64_t natural = ax->s * (ax->in - 1) + (ax->k - 1) * ax->d + 1;
			ax->pb = rint_in(0, natural / 2 < 3 ? natural / 2 : 3);
			pe[a] = rint_in(0, natural - 1 - ax->pb < 3 ? natural - 1 - ax->pb : 3);
			ax->out = natural - ax->pb - pe[a];
			dw_axis(ax);
		}
		const int64_t nx = j.chans * j.ax[0].in * j.ax[1].in, nw = j.chans * j.ax[0].k * j.ax[1].k;
		const int64_t ny = j.chans * j.ax[0].out * j.ax[1].out;
		float *x = big((size_t)nx * sizeof(float)), *w = big((size_t)nw * sizeof(float));
		float *bias = it % 2 ? big((size_t)j.chans * sizeof(float)) : NULL, *y = big((size_t)ny * sizeof(float));
		float *tmp = big((size_t)(j.ax[1].in + 16) * sizeof(float));
		long double *ref = big((size_t)ny * sizeof *ref), *mag = big((size_t)ny * sizeof *mag);
		for (int64_t i = 0; i < nx; i++)
			x[i] = rfloat();
		for (int64_t i = 0; i < nw; i++)
			w[i] = rfloat();
		for (int64_t i = 0; bias && i < j.chans; i++)
			bias[i] = rfloat();
		j.x = x;
		j.w = w;
		j.bias = bias;
		j.y = y;
		/* reference scatter: y[c][i0*s0 + k0*d0 - pb0][i1*s1 + k1*d1 - pb1] += x * w */
		for (int64_t e = 0; e < ny; e++) {
			ref[e] = bias ? bias[e / (j.ax[0].out * j.ax[1].out)] : 0;
			mag[e] = fabsl(ref[e]);
		}
		for (int64_t c = 0; c < j.chans; c++)
			for (int64_t i0 = 0; i0 < j.ax[0].in; i0++)
				for (int64_t i1 = 0; i1 < j.ax[1].in; i1++)
					for (int64_t k0 = 0; k0 < j.ax[0].k; k0++)
						for (int64_t k1 = 0; k1 < j.ax[1].k; k1++) {
							const int64_t o0 = i0 * j.ax[0].s + k0 * j.ax[0].d - j.ax[0].pb;
							const int64_t o1 = i1 * j.ax[1].s + k1 * j.ax[1].d - j.ax[1].pb;
							if (o0 < 0 || o0 >= j.ax[0].out || o1 < 0 || o1 >= j.ax[1].out)
								continue;
							const long double p = (long double)x[(c * j.ax[0].in + i0) * j.ax[1].in + i1] *
							                      w[(c * j.ax[0].k + k0) * j.ax[1].k + k1];
							ref[(c * j.ax[0].out + o0) * j.ax[1].out + o1] += p;
							mag[(c * j.ax[0].out + o0) * j.ax[1].out + o1] += fabsl(p);
						}
		for (int64_t e = 0; e < ny; e++)
			y[e] = NAN;
		mve->dw_rows(&j, 0, j.chans * j.ax[0].out, tmp);
		used_dw++;
		const long double terms = (long double)(j.ax[0].k * j.ax[1].k + 1);
		for (int64_t e = 0; e < ny; e++)
			CHECK(fabsl(y[e] - ref[e]) <= terms * FLT_EPSILON * mag[e] + 1e-30L,
			      "dw_rows element %ld = %.9g, want %.9Lg (it %d: in %ldx%ld k %ldx%ld s %ldx%ld d %ldx%ld pb %ld,%ld)",
			      (long)e, (double)y[e], ref[e], it, (long)j.ax[0].in, (long)j.ax[1].in, (long)j.ax[0].k,
			      (long)j.ax[1].k, (long)j.ax[0].s, (long)j.ax[1].s, (long)j.ax[0].d, (long)j.ax[1].d,
			      (long)j.ax[0].pb, (long)j.ax[1].pb);
		mcu_big_release(mark);
	}
}

#endif

/* ---- DepthToSpace rows ---- */

static void test_d2s(int iters)
{
	for (int it = 0; it < iters; it++) {
		const size_t mark = mcu_big_mark();
		const int b = it % 2 ? 4 : 2;
		const int64_t width = rint_in(1, 70);
		const uint32_t *src[4];
		uint32_t *d1 = big((size_t)(b * width + 4) * 4), *d2 = big((size_t)(b * width + 4) * 4);
		for (int j = 0; j < b; j++) {
			uint32_t *s = big((size_t)width * 4);
			for (int64_t w = 0; w < width; w++)
				s[w] = rnd();
			src[j] = s;
		}
		for (int64_t i = 0; i < b * width + 4; i++)
			d1[i] = d2[i] = 0xdeadbeefu;
		for (int64_t w = 0; w < width; w++)
			for (int j = 0; j < b; j++)
				d1[w * b + j] = src[j][w];
		(b == 2 ? mve->d2s.row2 : mve->d2s.row4)(d2, src, width);
		if (b == 2)
			used_d2s2++;
		else
			used_d2s4++;
		CHECK(!memcmp(d1, d2, (size_t)(b * width + 4) * 4), "d2s row%d width %ld differs", b, (long)width);
		mcu_big_release(mark);
	}
}

int main(void)
{
	if (!onnxrun__isa_supported(ONNXRUN__ISA_MVE)) {
		printf("kernels: this CPU has no Helium (MVE): nothing to check\n");
		return mcu_finish("kernels");
	}
	scalar = onnxrun__kernels_for(ONNXRUN__ISA_SCALAR);
	mve = onnxrun__kernels_for(ONNXRUN__ISA_MVE);
	CHECK(mve->isa == ONNXRUN__ISA_MVE && !strcmp(mve->name, "mve"), "the MVE table");
	CHECK(onnxrun__isa_current() == ONNXRUN__ISA_MVE, "Helium is not the ISA in use");
	printf("kernels: seed %u\n", SEED);
	test_gemm(600);
	test_stores(300);
	test_pack_rows(200);
#ifndef ONNXRUN_FLOAT32_ONLY /* a float32-only build's tables have no gather nor depthwise rows */
	test_gather(200);
	test_dw(150);
#else
	used_gather = used_dw = 1;
#endif
	test_d2s(100);
	for (int mr = 1; mr <= mve->gemm->mr_max; mr++) {
		for (int v = 0; v < 3; v++)
			CHECK(used_fn[v][mr - 1] > 0, "gemm fn[%d][%d] not exercised", v, mr - 1);
		CHECK(!mve->gemm->ind[mr - 1] || used_ind[mr - 1] > 0, "gemm ind[%d] not exercised", mr - 1);
		CHECK(!mve->gemm->rel[mr - 1] || used_rel[mr - 1] > 0, "gemm rel[%d] not exercised", mr - 1);
	}
	CHECK(used_store && used_store_strided && used_store_pair && used_pack_rows && used_gather && used_dw &&
	              used_d2s2 && used_d2s4,
	      "an entry was not exercised");
	long nfn = 0, nind = 0, nrel = 0;
	for (int i = 0; i < ONNXRUN__GEMM_MR_MAX; i++) {
		nfn += used_fn[0][i] + used_fn[1][i] + used_fn[2][i];
		nind += used_ind[i];
		nrel += used_rel[i];
	}
	printf("kernels: %ld gemm calls (+ %ld ind, %ld rel), %ld stores (%ld strided), %ld paired, %ld pack_rows, "
	       "%ld gathers, %ld depthwise, %ld + %ld DepthToSpace rows\n",
	       nfn, nind, nrel, used_store, used_store_strided, used_store_pair, used_pack_rows, used_gather, used_dw,
	       used_d2s2, used_d2s4);
	return mcu_finish("kernels");
}
