/*
 * line_match.h - matches the CLI tests' expected output lines against simple patterns, so
 * that the tests need no <regex.h> (which Windows lacks). The pattern language is the part
 * of POSIX extended regular expressions the tests use, with the same meaning:
 *   c        a character other than the specials below matches itself
 *   \c       any character c taken literally (\( \[ \. \\ ...)
 *   .        any character
 *   [set]    one character of the set; [^set] one not in it. A set lists characters and
 *            ranges a-z; a ']' right after '[' or '[^' and a '-' first or last are literal
 *   x* x+ x? zero or more, one or more, zero or one of the preceding item (greedy)
 *   ^  $     at the very start / very end of the pattern: the line's start / end
 * Groups, alternation and counted repetition are not supported: '(', ')', '|', '{' and '}'
 * unescaped make the pattern invalid, as do an unclosed set, a quantifier with nothing to
 * repeat and a trailing '\'. A line is the text between newlines, without them.
 */
#ifndef ONNXRUN_TESTS_LINE_MATCH_H
#define ONNXRUN_TESTS_LINE_MATCH_H

#include <stddef.h>
#include <string.h>

/* Length of the item starting at p (one character, an escape or a whole set), 0 when p
 * does not start a valid item. */
static inline size_t lm_item_len(const char *p)
{
	size_t n = 1;

	switch (*p) {
	case '\0': case '(': case ')': case '|': case '{': case '}': case '*': case '+': case '?':
		return 0;
	case '\\':
		return p[1] ? 2 : 0;
	case '[':
		if (p[n] == '^')
			n++;
		if (p[n] == ']') /* a leading ']' is a member */
			n++;
		while (p[n] && p[n] != ']')
			n++;
		return p[n] == ']' ? n + 1 : 0;
	default:
		return 1;
	}
}

/* Whether character c matches the item at p (of length len, from lm_item_len). */
static inline int lm_item_matches(const char *p, size_t len, char c)
{
	size_t i = 1, end = len - 1; /* the set's members are p[i..end) */
	int negate = 0, in = 0;

	if (p[0] == '\\')
		return c == p[1];
	if (p[0] == '.')
		return 1;
	if (p[0] != '[')
		return c == p[0];
	if (p[i] == '^') {
		negate = 1;
		i++;
	}
	for (size_t first = i; i < end; i++) {
		/* a range a-z: a '-' that is neither the set's first nor its last member */
		if (i + 2 < end && p[i + 1] == '-' && !(i == first && p[i] == '-')) {
			in |= (unsigned char)c >= (unsigned char)p[i] && (unsigned char)c <= (unsigned char)p[i + 2];
			i += 2;
		} else {
			in |= c == p[i];
		}
	}
	return in != negate;
}

/* Whether pattern p (valid, no leading '^') matches a prefix of s[0..end) and, when it
 * ends in '$', exactly all of it. */
static inline int lm_match_here(const char *p, const char *s, const char *end)
{
	size_t len, most, k;
	char q;

	if (*p == '\0')
		return 1;
	if (p[0] == '$' && p[1] == '\0')
		return s == end;
	len = lm_item_len(p);
	q = p[len];
	if (q != '*' && q != '+' && q != '?')
		return s < end && lm_item_matches(p, len, *s) && lm_match_here(p + len, s + 1, end);
	/* a quantified item: take as many as allowed, then give back one at a time */
	for (most = 0; s + most < end && (q != '?' || most < 1) && lm_item_matches(p, len, s[most]); most++)
		;
	for (k = most + 1; k-- > (q == '+' ? 1u : 0u);)
		if (lm_match_here(p + len + 1, s + k, end))
			return 1;
	return 0;
}

/* Whether p is a valid pattern (see the file comment). */
static inline int lm_valid(const char *p)
{
	if (*p == '^')
		p++;
	while (*p && !(p[0] == '$' && p[1] == '\0')) {
		size_t len = lm_item_len(p);
		if (len == 0)
			return 0;
		p += len;
		if (*p == '*' || *p == '+' || *p == '?')
			p++;
	}
	return 1;
}

/* Whether the single line s[0..end) contains a match of the valid pattern p. */
static inline int lm_match_line(const char *p, const char *s, const char *end)
{
	if (*p == '^')
		return lm_match_here(p + 1, s, end);
	do {
		if (lm_match_here(p, s, end))
			return 1;
	} while (s++ < end);
	return 0;
}

/* Whether some line of text matches pattern p: 1 or 0, -1 when p is invalid. */
static inline int line_match_any(const char *text, const char *p)
{
	if (!lm_valid(p))
		return -1;
	for (;;) {
		const char *nl = strchr(text, '\n');
		const char *end = nl ? nl : text + strlen(text);
		if (lm_match_line(p, text, end))
			return 1;
		if (nl == NULL)
			return 0;
		text = nl + 1;
	}
}

#endif
