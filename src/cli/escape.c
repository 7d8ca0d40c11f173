/*
 * escape.c - writes arbitrary bytes (library messages, file and value names) as XML text or
 * attribute values, JSON strings and Graphviz DOT strings.
 *
 * Input is taken as UTF-8; a byte that does not start a valid sequence (and the code points
 * U+FFFE/U+FFFF, and surrogates) is written as U+FFFD. Control characters that a format
 * cannot carry are made visible: XML 1.0 allows none but tab, newline and carriage return,
 * so the others become the text "\xNN"; JSON writes them as \u00NN; DOT as a space.
 */
#include <string.h>

#include "cli.h"

/* Length (1-4) of the valid UTF-8 sequence at s (n bytes available) and its code point in
 * *cp; 0 when s does not start a valid, XML-permitted sequence. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		len = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4;
	else
		return 0;
	c = s[0] & (0x7fu >> len);
	min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
	if (len > n)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[k] & 0x3fu);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
		return 0;
	*cp = c;
	return len;
}

/*
 * Walks s calling emit(f, bytes, len, cp, ctx) for each code point (valid sequences as they
 * are, invalid bytes as U+FFFD with bytes pointing at the replacement's encoding).
 */
static void walk_utf8(FILE *f, const char *s, int attr,
                      void (*emit)(FILE *f, const char *bytes, size_t len, uint32_t cp, int attr))
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_next(p, n, &cp);
		if (len == 0) {
			emit(f, replacement, 3, 0xfffd, attr);
			len = 1;
		} else {
			emit(f, (const char *)p, len, cp, attr);
		}
		p += len;
		n -= len;
	}
}

static void emit_xml(FILE *f, const char *bytes, size_t len, uint32_t cp, int attr)
{
	switch (cp) {
	case '&': fputs("&amp;", f); return;
	case '<': fputs("&lt;", f); return;
	case '>': fputs("&gt;", f); return;
	case '"': fputs("&quot;", f); return;
	case '\'': fputs("&apos;", f); return;
	case '\r': fputs("&#13;", f); return;
	case '\t':
	case '\n':
		if (attr)
			fprintf(f, "&#%u;", (unsigned)cp);
		else
			fputc((int)cp, f);
		return;
	default: break;
	}
	if (cp < 0x20)
		fprintf(f, "\\x%02X", (unsigned)cp);
	else
		fwrite(bytes, 1, len, f);
}

/* Writes s as XML character data (attr 0) or as an attribute value without quotes (attr 1). */
void cli_write_xml(FILE *f, const char *s, int attr)
{
	walk_utf8(f, s, attr, emit_xml);
}

static void emit_json(FILE *f, const char *bytes, size_t len, uint32_t cp, int attr)
{
	(void)attr;
	switch (cp) {
	case '"': fputs("\\\"", f); return;
	case '\\': fputs("\\\\", f); return;
	case '\b': fputs("\\b", f); return;
	case '\f': fputs("\\f", f); return;
	case '\n': fputs("\\n", f); return;
	case '\r': fputs("\\r", f); return;
	case '\t': fputs("\\t", f); return;
	default: break;
	}
	if (cp < 0x20 || cp == 0x7f)
		fprintf(f, "\\u%04x", (unsigned)cp);
	else
		fwrite(bytes, 1, len, f);
}

/* Writes s as a JSON string, quotes included. */
void cli_write_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	walk_utf8(f, s, 0, emit_json);
	fputc('"', f);
}

static void emit_dot(FILE *f, const char *bytes, size_t len, uint32_t cp, int attr)
{
	(void)attr;
	if (cp == '"' || cp == '\\')
		fprintf(f, "\\%c", (char)cp);
	else if (cp == '\n')
		fputs("\\n", f);
	else if (cp < 0x20 || cp == 0x7f)
		fputc(' ', f);
	else
		fwrite(bytes, 1, len, f);
}

/* Writes s as the inside of a DOT double-quoted string (no quotes): '"' and '\' escaped,
 * newlines as the label escape \n, other control characters as spaces. */
void cli_write_dot_text(FILE *f, const char *s)
{
	walk_utf8(f, s, 0, emit_dot);
}
