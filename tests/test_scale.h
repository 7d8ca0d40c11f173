/*
 * test_scale.h - ONNXRUN_RANDOM_SCALE: how much of their randomized and long case lists the
 * tests run. Unset or 1: everything. 10: ten times as many random configs (a deeper local
 * run). Below 1 (CI uses 0.25 for the builds whose tests run under qemu-user, where
 * floating point is emulated and a test runs 10-50 times slower): that fraction of the
 * random configs, and only every (1/scale)-th entry of the fixed lists (always the first).
 * Seeds do not change with the scale, so a case that fails at one scale fails at any scale
 * that runs it.
 */
#ifndef ONNXRUN_TESTS_TEST_SCALE_H
#define ONNXRUN_TESTS_TEST_SCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

static inline double th_scale(void)
{
	const char *e = getenv("ONNXRUN_RANDOM_SCALE");
	double f = e && *e ? strtod(e, NULL) : 1.0;
	return f > 0 ? f : 1.0;
}

/* ONNXRUN_RANDOM_SCALE times n, at least 1. */
static inline int th_scaled(int n)
{
	long v = (long)(n * th_scale());
	return v < 1 ? 1 : (int)v;
}

/* Whether entry i of a fixed case list runs at this scale. */
static inline bool th_scaled_keep(size_t i)
{
	const double f = th_scale();
	const size_t step = f >= 1 ? 1 : (size_t)(1.0 / f + 0.5);
	return i % step == 0;
}

#endif
