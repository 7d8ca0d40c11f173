/*
 * test_line_match.c - the CLI tests' line matcher (line_match.h): each construct it
 * supports on a line it must match and one it must not, and the patterns it must refuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "line_match.h"

struct lm_case {
	const char *text, *pattern;
	int want; /* 1 match, 0 no match, -1 invalid pattern */
};

static void test_cases(void **state)
{
	static const struct lm_case cases[] = {
		/* literals, anchors, lines */
		{"abc", "b", 1},
		{"abc", "^b", 0},
		{"abc", "^abc$", 1},
		{"abcd", "^abc$", 0},
		{"xabc", "abc$", 1},
		{"one\ntwo\nthree", "^two$", 1},
		{"one\ntwo three", "^two$", 0},
		{"one\ntwo", "e.t", 0}, /* '.' does not cross a line */
		{"", "^$", 1},
		{"a\n\nb", "^$", 1},
		{"a\nb", "^$", 0},
		/* '.', sets, ranges, negation */
		{"a-c", "^a.c$", 1},
		{"ac", "^a.c$", 0},
		{"x7y", "^x[0-9]y$", 1},
		{"xay", "^x[0-9]y$", 0},
		{"b", "^[a-cx]$", 1},
		{"x", "^[a-cx]$", 1},
		{"d", "^[a-cx]$", 0},
		{"-", "^[a-]$", 1},
		{"]", "^[]a]$", 1},
		{"d", "^[^abc]$", 1},
		{"b", "^[^abc]$", 0},
		{"1.5%", "^[0-9.]+%$", 1},
		/* quantifiers, with backtracking */
		{"ac", "^ab*c$", 1},
		{"abbbc", "^ab*c$", 1},
		{"ac", "^ab+c$", 0},
		{"abbc", "^ab+c$", 1},
		{"ac", "^ab?c$", 1},
		{"abbc", "^ab?c$", 0},
		{"aaa", "^a*a$", 1},
		{"x = y", "^[^ ]+ +=", 1},
		{"  2 conv2", "^  2 +conv2$", 1},
		{"  2conv2", "^  2 +conv2$", 0},
		{"node n (Op v1): a -> b", "^node .* \\(Op v[0-9]+\\): .* -> b$", 1},
		/* escapes are literal */
		{"a.c", "^a\\.c$", 1},
		{"abc", "^a\\.c$", 0},
		{"[1,2]", "^\\[[0-9,]*\\]$", 1},
		{"(x)", "^\\(x\\)$", 1},
		{"a+b", "^a\\+b$", 1},
		{"aab", "^a\\+b$", 0},
		/* what it refuses */
		{"ab", "(a|b)", -1},
		{"ab", "a|b", -1},
		{"aaa", "a{3}", -1},
		{"a", "[a", -1},
		{"a", "*a", -1},
		{"a", "a\\", -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int got = line_match_any(cases[i].text, cases[i].pattern);
		if (got != cases[i].want)
			fail_msg("'%s' on \"%s\": got %d, want %d", cases[i].pattern, cases[i].text, got,
			         cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
