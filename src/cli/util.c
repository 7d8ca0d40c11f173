/*
 * util.c - diagnostics, paths, shape printing and 16-bit float conversions for the CLI.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Error capture (cli_capture_begin/end): while active, cli_error keeps its first message
 * here instead of printing it. The tool is single-threaded. */
static struct {
	int active;
	char *message;
} capture;

/* Formats like vsprintf into a heap string; NULL when out of memory. */
char *cli_vformat(const char *fmt, va_list ap)
{
	va_list copy;
	int n;

	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (s != NULL)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

/* Formats like sprintf into a heap string; NULL (after reporting) when out of memory. */
char *cli_format(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	char *s = cli_vformat(fmt, ap);
	va_end(ap);
	if (s == NULL)
		cli_error("out of memory");
	return s;
}

/* Prints the one "onnxrun: error: ..." line on stderr (or captures it, see below). */
void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (capture.active) {
		if (capture.message == NULL)
			capture.message = cli_vformat(fmt, ap);
		va_end(ap);
		return;
	}
	fputs("onnxrun: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* From now on cli_error keeps its first message instead of printing it. */
void cli_capture_begin(void)
{
	free(capture.message);
	capture.message = NULL;
	capture.active = 1;
}

/* Stops capturing; returns the first message since cli_capture_begin (the caller frees
 * it), or NULL when there was none (or no memory to keep it). */
char *cli_capture_end(void)
{
	char *m = capture.message;

	capture.message = NULL;
	capture.active = 0;
	return m;
}

/* Monotonic time in milliseconds. */
double cli_now_ms(void)
{
	return (double)onnxrun__os_now_ns() * 1e-6;
}

/* Prints an "onnxrun: warning: ..." line on stderr. */
void cli_warning(const char *fmt, ...)
{
	va_list ap;

	fputs("onnxrun: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Reports a failed library call. The library's own message is printed as is, prefixed
 * with `context` (a file name, usually) only when the message does not already name it;
 * without a message the status description stands in.
 */
void cli_lib_error(const char *message, enum onnxrun_status status, const char *context)
{
	if (message == NULL || message[0] == '\0') {
		if (context != NULL)
			cli_error("%s: %s", context, onnxrun_status_str(status));
		else
			cli_error("%s", onnxrun_status_str(status));
	} else if (context != NULL && strstr(message, context) == NULL) {
		cli_error("%s: %s", context, message);
	} else {
		cli_error("%s", message);
	}
}

/* Log callback for the env: warnings (and library-side errors) go to stderr as warnings,
 * so that the single error line stays the tool's own. Information is dropped. */
void cli_log(void *ctx, enum onnxrun_log_level level, const char *message)
{
	(void)ctx;
	if (level == ONNXRUN_LOG_INFO)
		return;
	cli_warning("%s", message != NULL ? message : "");
}

/* calloc that reports out of memory; count may be 0 (returns a valid pointer). */
void *cli_calloc(size_t count, size_t size)
{
	void *p = calloc(count != 0 ? count : 1, size != 0 ? size : 1);

	if (p == NULL)
		cli_error("out of memory");
	return p;
}

/* strdup that reports out of memory. */
char *cli_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p == NULL) {
		cli_error("out of memory");
		return NULL;
	}
	memcpy(p, s, n);
	return p;
}

/* Returns "dir/name" (heap), or NULL after reporting out of memory. */
char *cli_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	int slash = dl > 0 && dir[dl - 1] != '/';
	char *p = malloc(dl + (size_t)slash + nl + 1);

	if (p == NULL) {
		cli_error("out of memory");
		return NULL;
	}
	memcpy(p, dir, dl);
	if (slash)
		p[dl] = '/';
	memcpy(p + dl + (size_t)slash, name, nl + 1);
	return p;
}

int cli_is_dir(const char *path)
{
	return onnxrun__os_stat(path, NULL) == ONNXRUN__OS_DIR;
}

int cli_is_file(const char *path)
{
	return onnxrun__os_stat(path, NULL) == ONNXRUN__OS_REGULAR;
}

/* Reads one line (with its '\n', if any) into *buf (grown as needed, *cap its size) like
 * POSIX getline: the line's length, -1 at the end of the file, on error or out of memory. */
long cli_getline(char **buf, size_t *cap, FILE *f)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF) {
		if (n + 2 > *cap) {
			size_t grown = *cap ? 2 * *cap : 128;
			char *b = realloc(*buf, grown);
			if (b == NULL)
				return -1;
			*buf = b;
			*cap = grown;
		}
		(*buf)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return -1;
	(*buf)[n] = '\0';
	return (long)n;
}

/* Creates `path` and its missing parents (like mkdir -p). Reports failures. */
int cli_mkdirs(const char *path)
{
	char *buf = cli_strdup(path);
	int rc = CLI_OK;

	if (buf == NULL)
		return CLI_ERROR;
	for (char *p = buf + 1; rc == CLI_OK; p++) {
		if (!onnxrun__os_is_sep(*p) && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (onnxrun__os_mkdir(buf) != 0 && errno != EEXIST) {
			cli_error("cannot create folder '%s': %s", buf, strerror(errno));
			rc = CLI_ERROR;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	if (rc == CLI_OK && !cli_is_dir(path)) {
		cli_error("cannot create folder '%s': not a folder", path);
		rc = CLI_ERROR;
	}
	free(buf);
	return rc;
}

/*
 * A file-name-safe form of a value name (heap): '/' and '\' become '_', a leading '.'
 * becomes '_'; an empty name becomes "output_<index>". NULL after reporting OOM.
 */
char *cli_sanitize_name(const char *name, size_t index)
{
	char fallback[32];

	if (name == NULL || name[0] == '\0') {
		snprintf(fallback, sizeof fallback, "output_%zu", index);
		name = fallback;
	}
	char *s = cli_strdup(name);
	if (s == NULL)
		return NULL;
	for (char *p = s; *p != '\0'; p++) {
		if (*p == '/' || *p == '\\')
			*p = '_';
	}
	if (s[0] == '.')
		s[0] = '_';
	return s;
}

/* Prints "[d0,d1,...]". */
void cli_print_shape(FILE *f, int32_t rank, const int64_t *dims)
{
	fputc('[', f);
	for (int32_t i = 0; i < rank; i++)
		fprintf(f, "%s%lld", i > 0 ? "," : "", (long long)dims[i]);
	fputc(']', f);
}

/* Prints "<dtype> [shape]" of a tensor. */
void cli_print_tensor_type(FILE *f, const struct onnxrun_tensor *t)
{
	fprintf(f, "%s ", onnxrun_dtype_name(onnxrun_tensor_dtype(t)));
	cli_print_shape(f, onnxrun_tensor_rank(t), onnxrun_tensor_dims(t));
}

/* Prints "<dtype> [N,3,?,4]" of a declared value: symbolic dims by name, unknown as '?'. */
void cli_print_value_type(FILE *f, const struct onnxrun_value_info *info)
{
	fprintf(f, "%s ", onnxrun_dtype_name(info->dtype));
	cli_print_dims(f, info->rank, info->dims);
}

/* Prints "[N,3,?,4]": symbolic dims by name, unknown as '?'; rank < 0 as "[unknown rank]". */
void cli_print_dims(FILE *f, int32_t rank, const struct onnxrun_dim *dims)
{
	if (rank < 0) {
		fputs("[unknown rank]", f);
		return;
	}
	fputc('[', f);
	for (int32_t i = 0; i < rank; i++) {
		const struct onnxrun_dim *d = &dims[i];
		if (i > 0)
			fputc(',', f);
		if (d->value >= 0)
			fprintf(f, "%lld", (long long)d->value);
		else if (d->param != NULL && d->param[0] != '\0')
			fputs(d->param, f);
		else
			fputc('?', f);
	}
	fputc(']', f);
}

/* Human-readable size: "512 B", "1.50 KiB", "12.3 MiB"... */
void cli_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, size, "%.*f %s", v < 10.0 ? 2 : v < 100.0 ? 1 : 0, v, units[u]);
}

static float bits_to_float(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof f);
	return f;
}

static uint32_t float_to_bits(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof bits);
	return bits;
}

/* IEEE binary16 -> float, exact (subnormals, infinities and NaN included). */
float cli_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;

	if (exp == 0x1f)
		return bits_to_float(sign | 0x7f800000u | (man << 13));
	if (exp == 0) {
		/* subnormal: man * 2^-24 */
		float v = (float)man * (1.0f / 16777216.0f);
		return sign != 0 ? -v : v;
	}
	return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}

/* float -> IEEE binary16, round to nearest even; overflow gives infinity. */
uint16_t cli_float_to_half(float f)
{
	uint32_t x = float_to_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
	uint32_t abs = x & 0x7fffffffu;

	if (abs > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);
	if (abs >= 0x477ff000u) /* rounds to >= 65520: infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (abs < 0x38800000u) {
		/* result is subnormal or zero: scale so the unit is 2^-24, round to even */
		float v = bits_to_float(abs) * 16777216.0f;
		uint32_t m = (uint32_t)v;
		float rest = v - (float)m;
		if (rest > 0.5f || (rest == 0.5f && (m & 1u)))
			m++;
		return (uint16_t)(sign | m);
	}
	uint32_t r = abs + 0xfffu + ((abs >> 13) & 1u);
	return (uint16_t)(sign | (((r >> 13) - (112u << 10)) & 0x7fffu));
}

/* bfloat16 -> float: the high half of the float's bits. */
float cli_bf16_to_float(uint16_t b)
{
	return bits_to_float((uint32_t)b << 16);
}

/* float -> bfloat16, round to nearest even; NaN stays NaN. */
uint16_t cli_float_to_bf16(float f)
{
	uint32_t x = float_to_bits(f);

	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u);
	x += 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)(x >> 16);
}
