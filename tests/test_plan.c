/*
 * test_plan.c - the arena planner: buffers live at the same time never share bytes, buffers
 * with disjoint lifetimes reuse memory, offsets are 64-byte aligned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runtime/graph.h"

static struct onnxrun_env *env;

static int setup(void **state)
{
	(void)state;
	return onnxrun_env_create(NULL, &env) != ONNXRUN_OK;
}

static int teardown(void **state)
{
	(void)state;
	onnxrun_env_free(env);
	return 0;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A chain a -> b -> c -> d: a and c (and b and d) never live together, so two slots suffice. */
static void test_chain_reuses_memory(void **state)
{
	struct onnxrun__plan_item it[4] = {
		{ 1000, 0, 1, 0 }, { 1000, 1, 2, 0 }, { 1000, 2, 3, 0 }, { 1000, 3, 4, 0 },
	};
	size_t total;
	(void)state;
	assert_int_equal(onnxrun__plan(env, it, 4, &total), ONNXRUN_OK);
	assert_int_equal(total, 2 * 1024); /* two 64-aligned slots of 1000 bytes */
	assert_int_not_equal(it[0].offset, it[1].offset);
	assert_int_equal(it[0].offset, it[2].offset);
	assert_int_equal(it[1].offset, it[3].offset);
}

/* A value consumed late stays live: nothing may be placed over it in between. */
static void test_long_lived_value_is_kept(void **state)
{
	struct onnxrun__plan_item it[3] = { { 64, 0, 5, 0 }, { 64, 1, 2, 0 }, { 64, 3, 4, 0 } };
	size_t total;
	(void)state;
	assert_int_equal(onnxrun__plan(env, it, 3, &total), ONNXRUN_OK);
	assert_int_not_equal(it[1].offset, it[0].offset);
	assert_int_not_equal(it[2].offset, it[0].offset);
	assert_int_equal(total, 128);
}

static void test_empty_and_zero_sized(void **state)
{
	struct onnxrun__plan_item it[2] = { { 0, 0, 1, 0 }, { 0, 1, 2, 0 } };
	size_t total = 123;
	(void)state;
	assert_int_equal(onnxrun__plan(env, NULL, 0, &total), ONNXRUN_OK);
	assert_int_equal(total, 0);
	assert_int_equal(onnxrun__plan(env, it, 2, &total), ONNXRUN_OK);
	assert_int_equal(total, 0);
}

/* The planner's invariants for one plan: aligned, inside the arena, no larger than all
 * buffers side by side, and no two buffers live at once share a byte. */
static void check_plan(const struct onnxrun__plan_item *it, size_t n, size_t total, uint64_t seed)
{
	size_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (it[i].size + 63) / 64 * 64;
	if (total > sum)
		fail_msg("seed %llu: arena %zu larger than all buffers %zu", (unsigned long long)seed, total, sum);
	for (size_t i = 0; i < n; i++) {
		if (it[i].offset % 64 || it[i].offset + it[i].size > total)
			fail_msg("seed %llu: buffer %zu misplaced at %zu", (unsigned long long)seed, i, it[i].offset);
		for (size_t j = 0; j < i; j++) {
			int live = it[i].first <= it[j].last && it[j].first <= it[i].last;
			int share = it[i].size && it[j].size && it[i].offset < it[j].offset + it[j].size &&
			            it[j].offset < it[i].offset + it[i].size;
			if (live && share)
				fail_msg("seed %llu: buffers %zu and %zu overlap", (unsigned long long)seed, i, j);
		}
	}
}

/* Random lifetimes: check the two invariants directly, pairwise. */
static void test_random_plans_never_overlap(void **state)
{
	enum { N = 40 };
	(void)state;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct onnxrun__plan_item it[N];
		uint64_t s = seed * 0x9e3779b97f4a7c15ull;
		size_t total, n = 1 + next(&s) % N;
		for (size_t i = 0; i < n; i++) {
			it[i].first = next(&s) % 30;
			it[i].last = it[i].first + next(&s) % 10;
			it[i].size = next(&s) % 5000;
		}
		assert_int_equal(onnxrun__plan(env, it, n, &total), ONNXRUN_OK);
		check_plan(it, n, total, seed);
	}
}

/* Above 2048 buffers the planner switches to a linear scan: same invariants, and a long
 * chain still needs only two slots. */
static void test_large_plans(void **state)
{
	enum { N = 6000, CHAIN = 200000 };
	struct onnxrun__plan_item *it = malloc(CHAIN * sizeof *it);
	(void)state;
	assert_non_null(it);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		uint64_t s = seed * 0x9e3779b97f4a7c15ull;
		size_t total;
		for (size_t i = 0; i < N; i++) {
			it[i].first = next(&s) % 3000;
			it[i].last = it[i].first + next(&s) % 20;
			it[i].size = next(&s) % 5000;
		}
		assert_int_equal(onnxrun__plan(env, it, N, &total), ONNXRUN_OK);
		check_plan(it, N, total, seed);
	}
	for (size_t i = 0; i < CHAIN; i++)
		it[i] = (struct onnxrun__plan_item){ 1000, i, i + 1, 0 };
	{
		size_t total;
		assert_int_equal(onnxrun__plan(env, it, CHAIN, &total), ONNXRUN_OK);
		assert_int_equal(total, 2 * 1024);
	}
	free(it);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_reuses_memory),
		cmocka_unit_test(test_long_lived_value_is_kept),
		cmocka_unit_test(test_empty_and_zero_sized),
		cmocka_unit_test(test_random_plans_never_overlap),
		cmocka_unit_test(test_large_plans),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
