/*
 * test_f16.c - float16 / bfloat16 <-> float32 conversions (src/runtime/core.c) against
 * values derived by hand from the IEEE 754 binary16 format (1 sign, 5 exponent bits with
 * bias 15, 10 fraction bits) and the bfloat16 format (1 sign, 8 exponent bits with bias 127,
 * 7 fraction bits: the top half of a float32), plus exhaustive checks:
 *  - every one of the 65536 bit patterns of each format widens to the value the format
 *    defines (computed here with ldexp from the fields) and narrows back to the same bits;
 *    NaNs stay NaN with their sign, and their payload may be quieted (the quiet bit, the top
 *    fraction bit, is set on the way back: 0x7c01 -> 0x7e01), which is the only exception;
 *  - every halfway point between two adjacent finite values, and its float32 neighbours,
 *    rounds as round-to-nearest-even says (reference: pick the nearer neighbour by exact
 *    double arithmetic, the even one on a tie).
 * The vectorised array conversions of the float16/bfloat16 ConvTranspose path
 * (onnxrun__convt_half_widen / _narrow, per ISA this CPU runs) must give the very bits of the
 * scalar functions: all 65536 patterns widened; narrowed, every float32 whose top 16 bits
 * are any pattern and whose low 16 bits are each of the round/sticky cases (plus seeded
 * random ones), which covers NaN payloads, infinities, overflow, subnormal results and
 * ties; and the halfway sweep above run through them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_transpose/impl.h"
#include "isa_list.h"
#include "runtime/runtime.h"

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static uint32_t to_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* Value of a binary16 pattern from its fields: subnormal man * 2^-24, normal
 * (1024 + man) * 2^(exp - 25); exp 31 is inf (man 0) or NaN. */
static double f16_value(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	double v;
	if (exp == 31)
		v = man ? NAN : INFINITY;
	else if (exp == 0)
		v = ldexp(man, -24);
	else
		v = ldexp(1024 + man, exp - 25);
	return sign ? -v : v;
}

/* Value of a bfloat16 pattern: subnormal man * 2^-133, normal (128 + man) * 2^(exp - 134). */
static double bf16_value(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 7) & 0xff, man = h & 0x7f;
	double v;
	if (exp == 255)
		v = man ? NAN : INFINITY;
	else if (exp == 0)
		v = ldexp(man, -133);
	else
		v = ldexp(128 + man, exp - 134);
	return sign ? -v : v;
}

static void expect_f16(float f, uint16_t want)
{
	uint16_t got = onnxrun__f32_to_f16(f);
	if (got != want)
		fail_msg("f32_to_f16(%a = 0x%08x) = 0x%04x, want 0x%04x", (double)f, to_bits(f), got, want);
}

static void expect_bf16(float f, uint16_t want)
{
	uint16_t got = onnxrun__f32_to_bf16(f);
	if (got != want)
		fail_msg("f32_to_bf16(%a = 0x%08x) = 0x%04x, want 0x%04x", (double)f, to_bits(f), got, want);
}

/* Widening: hand-derived values of special and boundary patterns. */
static void test_f16_widen_known(void **state)
{
	static const struct {
		uint16_t h;
		double v;
	} cases[] = {
		{ 0x0000, 0.0 },
		{ 0x0001, 5.9604644775390625e-08 },    /* smallest subnormal 2^-24 */
		{ 0x03ff, 6.0975551605224609375e-05 }, /* largest subnormal 1023 * 2^-24 */
		{ 0x0400, 6.103515625e-05 },           /* smallest normal 2^-14 */
		{ 0x3555, 0.333251953125 },            /* 1365 * 2^-12 */
		{ 0x3bff, 0.99951171875 },             /* 1 - 2^-11 */
		{ 0x3c00, 1.0 },
		{ 0x3c01, 1.0009765625 },              /* 1 + 2^-10 */
		{ 0x4000, 2.0 },
		{ 0x7bff, 65504.0 },                   /* max finite (2 - 2^-10) * 2^15 */
		{ 0x8001, -5.9604644775390625e-08 },
		{ 0xc000, -2.0 },
		{ 0xfbff, -65504.0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		float f = onnxrun__f16_to_f32(cases[i].h);
		if ((double)f != cases[i].v)
			fail_msg("f16_to_f32(0x%04x) = %.17g, want %.17g", cases[i].h, (double)f, cases[i].v);
	}
	/* signed zeros and infinities keep their sign */
	assert_int_equal(to_bits(onnxrun__f16_to_f32(0x8000)), 0x80000000u);
	assert_int_equal(to_bits(onnxrun__f16_to_f32(0x7c00)), 0x7f800000u);
	assert_int_equal(to_bits(onnxrun__f16_to_f32(0xfc00)), 0xff800000u);
	/* NaNs (quiet 0x7e00, signalling 0x7c01, negative 0xfe00) stay NaN with their sign */
	assert_true(isnan(onnxrun__f16_to_f32(0x7e00)) && !signbit(onnxrun__f16_to_f32(0x7e00)));
	assert_true(isnan(onnxrun__f16_to_f32(0x7c01)) && !signbit(onnxrun__f16_to_f32(0x7c01)));
	assert_true(isnan(onnxrun__f16_to_f32(0xfe00)) && signbit(onnxrun__f16_to_f32(0xfe00)));
	assert_true(isnan(onnxrun__f16_to_f32(0xfc01)) && signbit(onnxrun__f16_to_f32(0xfc01)));
}

/* Narrowing: exact values, ties to even (both directions), subnormals, overflow, NaN. */
static void test_f16_narrow_known(void **state)
{
	(void)state;
	expect_f16(0.0f, 0x0000);
	expect_f16(-0.0f, 0x8000);
	expect_f16(1.0f, 0x3c00);
	expect_f16(-2.0f, 0xc000);
	expect_f16(65504.0f, 0x7bff);
	expect_f16(-65504.0f, 0xfbff);
	expect_f16(0x1p-24f, 0x0001);
	expect_f16(1023 * 0x1p-24f, 0x03ff);
	expect_f16(0x1p-14f, 0x0400);
	/* ties: 1 + 2^-11 lies halfway between 0x3c00 and 0x3c01 -> even 0x3c00 (down);
	 * 1 + 3*2^-11 between 0x3c01 and 0x3c02 -> even 0x3c02 (up) */
	expect_f16(1.0f + 0x1p-11f, 0x3c00);
	expect_f16(1.0f + 3 * 0x1p-11f, 0x3c02);
	expect_f16(-(1.0f + 0x1p-11f), 0xbc00);
	expect_f16(-(1.0f + 3 * 0x1p-11f), 0xbc02);
	/* one float32 ulp off the tie decides it */
	expect_f16(1.0f + 0x1p-11f + 0x1p-23f, 0x3c01);
	expect_f16(1.0f + 3 * 0x1p-11f - 0x1p-23f, 0x3c01);
	/* subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0; 3*2^-25 between 1 and 2
	 * units -> 2; 1023.5 units between the largest subnormal (odd) and 2^-14 -> 2^-14 */
	expect_f16(0x1p-25f, 0x0000);
	expect_f16(-0x1p-25f, 0x8000);
	expect_f16(3 * 0x1p-25f, 0x0002);
	expect_f16(5 * 0x1p-25f, 0x0002);
	expect_f16(0x1p-25f + 0x1p-40f, 0x0001);
	expect_f16(1023.5f * 0x1p-24f, 0x0400);
	expect_f16(1022.5f * 0x1p-24f, 0x03fe);
	/* below half the smallest subnormal, float32 subnormals: signed zero */
	expect_f16(0x1p-26f, 0x0000);
	expect_f16(from_bits(0x00000001), 0x0000);
	expect_f16(from_bits(0x80000001), 0x8000);
	/* overflow: 65520 is halfway between 65504 (odd) and 65536 (not finite) -> inf; the
	 * float32 just below it (65520 - 2^-8) -> 65504 */
	expect_f16(65520.0f, 0x7c00);
	expect_f16(65519.99609375f, 0x7bff);
	expect_f16(-65520.0f, 0xfc00);
	expect_f16(65536.0f, 0x7c00);
	expect_f16(3.4028234663852886e38f, 0x7c00);
	expect_f16(INFINITY, 0x7c00);
	expect_f16(-INFINITY, 0xfc00);
	/* NaN stays NaN (exponent all ones, fraction non-zero) with its sign, also a float32
	 * signalling NaN whose payload sits only in the low bits a shift would drop */
	static const uint32_t nans[] = { 0x7fc00000u, 0x7f800001u, 0x7fbfffffu, 0xffc00000u,
		                         0xff800001u };
	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
		uint16_t h = onnxrun__f32_to_f16(from_bits(nans[i]));
		if ((h & 0x7c00) != 0x7c00 || !(h & 0x3ff) || (h >> 15) != (nans[i] >> 31))
			fail_msg("f32_to_f16(NaN 0x%08x) = 0x%04x, not a NaN of the same sign", nans[i], h);
	}
}

static void test_bf16_known(void **state)
{
	(void)state;
	/* widening is exact: the pattern is the top half of the float32 */
	assert_true(onnxrun__bf16_to_f32(0x3f80) == 1.0f);
	assert_true(onnxrun__bf16_to_f32(0xc000) == -2.0f);
	assert_true((double)onnxrun__bf16_to_f32(0x0001) == ldexp(1, -133));      /* smallest subnormal */
	assert_true((double)onnxrun__bf16_to_f32(0x007f) == ldexp(127, -133));    /* largest subnormal */
	assert_true((double)onnxrun__bf16_to_f32(0x0080) == ldexp(1, -126));      /* smallest normal */
	/* (2-2^-7)*2^127, as an exact hex constant: a decimal one may be read with x87's extra
	 * precision on i386 (FLT_EVAL_METHOD 2) and then differ from its double */
	assert_true((double)onnxrun__bf16_to_f32(0x7f7f) == 0x1.fep127);
	assert_int_equal(to_bits(onnxrun__bf16_to_f32(0x8000)), 0x80000000u);
	assert_int_equal(to_bits(onnxrun__bf16_to_f32(0x7f80)), 0x7f800000u);
	assert_int_equal(to_bits(onnxrun__bf16_to_f32(0xff80)), 0xff800000u);
	assert_true(isnan(onnxrun__bf16_to_f32(0x7fc0)) && !signbit(onnxrun__bf16_to_f32(0x7fc0)));
	assert_true(isnan(onnxrun__bf16_to_f32(0xff81)) && signbit(onnxrun__bf16_to_f32(0xff81)));

	expect_bf16(0.0f, 0x0000);
	expect_bf16(-0.0f, 0x8000);
	expect_bf16(1.0f, 0x3f80);
	/* ties: 1 + 2^-8 between 0x3f80 and 0x3f81 -> 0x3f80; 1 + 3*2^-8 -> 0x3f82 */
	expect_bf16(1.0f + 0x1p-8f, 0x3f80);
	expect_bf16(1.0f + 3 * 0x1p-8f, 0x3f82);
	expect_bf16(-(1.0f + 0x1p-8f), 0xbf80);
	expect_bf16(-(1.0f + 3 * 0x1p-8f), 0xbf82);
	expect_bf16(1.0f + 0x1p-8f + 0x1p-23f, 0x3f81);
	expect_bf16(1.0f + 3 * 0x1p-8f - 0x1p-23f, 0x3f81);
	/* subnormals: float32 bits 0x8000 are half the smallest bfloat16 subnormal -> 0;
	 * 0x18000 is 1.5 units -> 2 (even); 0x8001 just above half -> 1 */
	expect_bf16(from_bits(0x00008000), 0x0000);
	expect_bf16(from_bits(0x80008000), 0x8000);
	expect_bf16(from_bits(0x00018000), 0x0002);
	expect_bf16(from_bits(0x00008001), 0x0001);
	expect_bf16(from_bits(0x007f8000), 0x0080); /* 127.5 units -> smallest normal */
	/* overflow: halfway between max (0x7f7f, odd) and 2^128 -> inf; just below -> max;
	 * FLT_MAX -> inf */
	expect_bf16(from_bits(0x7f7f8000), 0x7f80);
	expect_bf16(from_bits(0x7f7f7fff), 0x7f7f);
	expect_bf16(from_bits(0x7f7fffff), 0x7f80);
	expect_bf16(from_bits(0xff7fffff), 0xff80);
	expect_bf16(INFINITY, 0x7f80);
	expect_bf16(-INFINITY, 0xff80);
	static const uint32_t nans[] = { 0x7fc00000u, 0x7f800001u, 0x7f80ffffu, 0xffc00000u,
		                         0xff800001u, 0x7fffffffu };
	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
		uint16_t h = onnxrun__f32_to_bf16(from_bits(nans[i]));
		if ((h & 0x7f80) != 0x7f80 || !(h & 0x7f) || (h >> 15) != (nans[i] >> 31))
			fail_msg("f32_to_bf16(NaN 0x%08x) = 0x%04x, not a NaN of the same sign", nans[i], h);
	}
}

/* All 65536 patterns: widen to the format's value, narrow back to the same bits (NaNs:
 * still NaN, same sign, payload kept apart from the quiet bit being set). */
static void exhaustive(float (*widen)(uint16_t), uint16_t (*narrow)(float), double (*value)(uint16_t),
                       uint16_t quiet_bit, const char *name)
{
	for (uint32_t u = 0; u < 0x10000; u++) {
		const uint16_t h = (uint16_t)u;
		const double want = value(h);
		const float f = widen(h);
		const uint16_t back = narrow(f);
		if (isnan(want)) {
			if (!isnan(f) || !signbit(f) != !(h & 0x8000) || (back | quiet_bit) != (h | quiet_bit) ||
			    !(back & quiet_bit))
				fail_msg("%s NaN 0x%04x -> %a -> 0x%04x", name, h, (double)f, back);
			continue;
		}
		if ((double)f != want || !signbit(f) != !(h & 0x8000))
			fail_msg("%s 0x%04x widens to %a, want %a", name, h, (double)f, want);
		if (back != h)
			fail_msg("%s 0x%04x -> %a -> 0x%04x, not a round trip", name, h, (double)f, back);
	}
}

static void test_exhaustive_round_trip(void **state)
{
	(void)state;
	exhaustive(onnxrun__f16_to_f32, onnxrun__f32_to_f16, f16_value, 0x0200, "float16");
	exhaustive(onnxrun__bf16_to_f32, onnxrun__f32_to_bf16, bf16_value, 0x0040, "bfloat16");
}

/* Reference rounding of a finite float x between adjacent patterns lo < hi (same sign,
 * magnitudes increasing with the bits): the nearer one, the even one on a tie; hi may be
 * the infinity pattern, which then stands for the next power of two (IEEE overflow rule). */
static uint16_t ref_round(double x, uint16_t lo, uint16_t hi, double vlo, double vhi)
{
	double dl = fabs(x - vlo), dh = fabs(vhi - x);
	if (dl < dh)
		return lo;
	if (dh < dl)
		return hi;
	return (lo & 1) ? hi : lo;
}

/* Every pair of adjacent non-negative (and, mirrored, negative) finite patterns a, a+1:
 * the midpoint and the float32s one ulp either side of it, plus a itself. For a = max
 * finite, a+1 is infinity and the "midpoint" is max + half an ulp (the IEEE overflow
 * threshold). */
static void halfway(uint16_t (*narrow)(float), double (*value)(uint16_t), uint16_t inf, const char *name)
{
	for (uint32_t a = 0; a < inf; a++) {
		const uint16_t lo = (uint16_t)a, hi = (uint16_t)(a + 1);
		const double vlo = value(lo);
		double vhi = value(hi);
		if (hi == inf) /* next power of two: the max finite value plus one of its ulps */
			vhi = vlo + (vlo - value((uint16_t)(a - 1)));
		const float mid = (float)((vlo + vhi) / 2); /* exact: fits in float32 */
		const float pts[] = { mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY), (float)vlo };
		for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++)
			for (int s = 0; s < 2; s++) {
				const float x = s ? -pts[k] : pts[k];
				uint16_t want = ref_round(fabs((double)x), lo, hi, vlo, vhi);
				uint16_t got = narrow(x);
				if (s)
					want |= 0x8000;
				if (got != want)
					fail_msg("%s: %a (0x%08x) -> 0x%04x, want 0x%04x", name, (double)x,
					         to_bits(x), got, want);
			}
	}
}

static void test_exhaustive_halfway(void **state)
{
	(void)state;
	halfway(onnxrun__f32_to_f16, f16_value, 0x7c00, "float16");
	halfway(onnxrun__f32_to_bf16, bf16_value, 0x7f80, "bfloat16");
}

/* ---- vectorised array conversions ------------------------------------------------------- */

static enum onnxrun__isa vec_isa;

/* One value through the vector code: lane `lane` of a 19-element call (one full 16-wide
 * vector, the rest in the tail), the other lanes holding neighbours. */
static uint16_t vec_narrow(float f, bool bf16)
{
	static unsigned lane;
	float in[19];
	uint16_t out[19];
	lane = (lane + 1) % 19;
	for (int i = 0; i < 19; i++)
		in[i] = i == (int)lane ? f : (float)i - 9.5f;
	onnxrun__convt_half_narrow(vec_isa, bf16, in, out, 19);
	return out[lane];
}

static uint16_t vec_narrow_f16(float f)
{
	return vec_narrow(f, false);
}

static uint16_t vec_narrow_bf16(float f)
{
	return vec_narrow(f, true);
}

static void test_vector_conversions(void **state)
{
	/* low 16 bits: float16 keeps bits 13..15 of them; bit 12 is its round bit, 0..11 sticky;
	 * bfloat16 rounds at bit 15 */
	static const uint16_t tails[] = { 0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x7fff, 0x8000, 0x8001,
		                          0xffff, 0x2000, 0x3000, 0x5000, 0x6fff, 0x9000, 0xf000, 0xefff };
	const size_t nt = sizeof tails / sizeof tails[0], nr = 8, per = nt + nr;
	uint16_t *h = malloc(0x10000 * sizeof *h), *got = malloc(0x10000 * per * sizeof *got);
	float *f = malloc(0x10000 * per * sizeof *f);
	uint64_t rng = 12345;
	long checked = 0;
	(void)state;
	assert_true(h && got && f);
	for (uint32_t u = 0; u < 0x10000; u++) {
		h[u] = (uint16_t)u;
		for (size_t k = 0; k < per; k++) {
			uint32_t lo = k < nt ? tails[k] : (uint32_t)((rng = rng * 6364136223846793005u + 1442695040888963407u) >> 48);
			f[u * per + k] = from_bits(u << 16 | lo);
		}
	}
	TEST_ALL_ISAS(vec_isas);
	for (size_t ii = 0; ii < sizeof vec_isas / sizeof vec_isas[0]; ii++) {
		vec_isa = vec_isas[ii];
		if (!onnxrun__isa_supported(vec_isa))
			continue;
		for (int bf16 = 0; bf16 < 2; bf16++) {
			const char *name = bf16 ? "bfloat16" : "float16";
			float *wide = (float *)got; /* 0x10000 floats fit in the narrow buffer */
			onnxrun__convt_half_widen(vec_isa, bf16, h, wide, 0x10000);
			for (uint32_t u = 0; u < 0x10000; u++) {
				float want = bf16 ? onnxrun__bf16_to_f32(h[u]) : onnxrun__f16_to_f32(h[u]);
				if (to_bits(wide[u]) != to_bits(want))
					fail_msg("isa %d %s widen 0x%04x: 0x%08x, scalar 0x%08x", (int)vec_isa, name, u,
					         to_bits(wide[u]), to_bits(want));
			}
			onnxrun__convt_half_narrow(vec_isa, bf16, f, got, (int64_t)(0x10000 * per));
			for (size_t i = 0; i < 0x10000 * per; i++) {
				uint16_t want = bf16 ? onnxrun__f32_to_bf16(f[i]) : onnxrun__f32_to_f16(f[i]);
				if (got[i] != want)
					fail_msg("isa %d %s narrow 0x%08x: 0x%04x, scalar 0x%04x", (int)vec_isa, name,
					         to_bits(f[i]), got[i], want);
			}
			checked += 0x10000 * (long)(per + 1);
		}
		halfway(vec_narrow_f16, f16_value, 0x7c00, "float16 (vector)");
		halfway(vec_narrow_bf16, bf16_value, 0x7f80, "bfloat16 (vector)");
		print_message("isa %d: vector conversions equal the scalar ones\n", (int)vec_isa);
	}
	print_message("%ld conversions compared\n", checked);
	free(h);
	free(got);
	free(f);
}

/* The vector conversions give the scalar bits in every rounding mode, not only the default
 * round-to-nearest: the scalar ones are integer arithmetic and exact float operations, which
 * no mode changes, while conversion instructions may follow the mode in the FP control
 * register (the NEON ones do, so they leave other modes to the scalar code). */
static void test_vector_narrow_rounding_modes(void **state)
{
	static const uint16_t tails[] = { 0x0000, 0x0fff, 0x1000, 0x1001, 0x3000, 0x8000, 0x9000 };
	const size_t nt = sizeof tails / sizeof tails[0], n = 0x10000 * nt;
	static const int modes[] = {
#ifdef FE_UPWARD
		FE_UPWARD,
#endif
#ifdef FE_DOWNWARD
		FE_DOWNWARD,
#endif
#ifdef FE_TOWARDZERO
		FE_TOWARDZERO,
#endif
		FE_TONEAREST,
	};
	float *f = malloc(n * sizeof *f);
	uint16_t *got = malloc(n * sizeof *got);
	(void)state;
	assert_true(f && got);
	for (uint32_t u = 0; u < 0x10000; u++)
		for (size_t k = 0; k < nt; k++)
			f[u * nt + k] = from_bits(u << 16 | tails[k]);
	TEST_ALL_ISAS(isas);
	for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
		if (fesetround(modes[mi]) != 0)
			continue; /* a mode this target cannot set */
		for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
			if (!onnxrun__isa_supported(isas[ii]))
				continue;
			onnxrun__convt_half_narrow(isas[ii], false, f, got, (int64_t)n);
			for (size_t i = 0; i < n; i++)
				if (got[i] != onnxrun__f32_to_f16(f[i])) {
					const uint16_t want = onnxrun__f32_to_f16(f[i]);
					fesetround(FE_TONEAREST);
					fail_msg("isa %d rounding mode %d float16 narrow 0x%08x: 0x%04x, scalar 0x%04x",
					         (int)isas[ii], modes[mi], to_bits(f[i]), got[i], want);
				}
		}
	}
	fesetround(FE_TONEAREST);
	free(f);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_widen_known),
		cmocka_unit_test(test_f16_narrow_known),
		cmocka_unit_test(test_bf16_known),
		cmocka_unit_test(test_exhaustive_round_trip),
		cmocka_unit_test(test_exhaustive_halfway),
		cmocka_unit_test(test_vector_conversions),
		cmocka_unit_test(test_vector_narrow_rounding_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
