/*
 * core.c - errors, the env and its allocator, dtype facts, status strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#ifdef ONNXRUN_BAREMETAL
/* newlib as Debian builds it for arm-none-eabi has no C99 length modifiers in printf (%zu
 * prints "zu"): each conversion is handed to vsnprintf alone, z/j/t rewritten to the
 * integer type of the same width. Floating point still goes through newlib's %g. */
int onnxrun__vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t at = 0;
	char spec[32];
	if (!size)
		return 0;
	buf[0] = '\0';
	for (const char *p = fmt; *p && at + 1 < size;) {
		size_t n = 0;
		int w;
		bool zjt = false;
		if (*p != '%' || p[1] == '%') {
			buf[at++] = *p;
			p += *p == '%' ? 2 : 1;
			buf[at] = '\0';
			continue;
		}
		spec[n++] = *p++;
		while (*p && strchr("-+ #0123456789.*", *p) && n < sizeof spec - 4)
			spec[n++] = *p++;
		if (*p == 'z' || *p == 'j' || *p == 't') {
			zjt = true;
			p++;
		}
		while (*p && strchr("hlLq", *p) && n < sizeof spec - 3)
			spec[n++] = *p++;
		if (!*p)
			break;
		spec[n] = *p++;
		spec[n + 1] = '\0';
		if (memchr(spec, '*', n)) { /* a width or precision argument: not used here */
			w = snprintf(buf + at, size - at, "%s", "?");
		} else if (zjt) {
			/* size_t / intmax_t / ptrdiff_t as long long, whatever their width */
			char wide[40];
			snprintf(wide, sizeof wide, "%.*sll%c", (int)n, spec, spec[n]);
			if (strchr("di", spec[n]))
				w = snprintf(buf + at, size - at, wide, (long long)va_arg(ap, long));
			else if (sizeof(size_t) > sizeof(unsigned long))
				w = snprintf(buf + at, size - at, wide, (unsigned long long)va_arg(ap, unsigned long long));
			else
				w = snprintf(buf + at, size - at, wide, (unsigned long long)va_arg(ap, unsigned long));
		} else if (strchr("eEfFgGaA", spec[n])) {
			w = snprintf(buf + at, size - at, spec, va_arg(ap, double));
		} else if (spec[n] == 's') {
			w = snprintf(buf + at, size - at, spec, va_arg(ap, const char *));
		} else if (spec[n] == 'p') {
			w = snprintf(buf + at, size - at, spec, va_arg(ap, void *));
		} else if (n >= 3 && spec[n - 1] == 'l' && spec[n - 2] == 'l') {
			w = snprintf(buf + at, size - at, spec, va_arg(ap, long long));
		} else if (n >= 2 && spec[n - 1] == 'l') {
			w = snprintf(buf + at, size - at, spec, va_arg(ap, long));
		} else {
			w = snprintf(buf + at, size - at, spec, va_arg(ap, int));
		}
		if (w < 0)
			break;
		at = at + (size_t)w < size ? at + (size_t)w : size - 1;
	}
	buf[at] = '\0';
	return (int)at;
}
#else
int onnxrun__vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return vsnprintf(buf, size, fmt, ap);
}
#endif

enum onnxrun_status onnxrun__fail(struct onnxrun__err *err, enum onnxrun_status status, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		onnxrun__vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return status;
}

void onnxrun__err_clear(struct onnxrun__err *err)
{
	if (err)
		err->msg[0] = '\0';
}

void onnxrun__err_prefix(struct onnxrun__err *err, const char *fmt, ...)
{
	char prefix[ONNXRUN__ERR_LEN], old[ONNXRUN__ERR_LEN];
	va_list ap;
	if (!err)
		return;
	va_start(ap, fmt);
	onnxrun__vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	{
		size_t n = strlen(prefix);
		memcpy(err->msg, prefix, n);
		if (n + 2 < sizeof err->msg) {
			err->msg[n++] = ':';
			err->msg[n++] = ' ';
		}
		old[sizeof old - 1 - (n < sizeof old ? n : sizeof old - 1)] = '\0';
		memcpy(err->msg + n, old, strlen(old) + 1);
	}
}

/* ---- allocation: a header before each block records its size ---- */

/* The header's size is the blocks' alignment: 64 bytes (a cache line, the widest vector
 * load); on bare metal 16 (Helium's vectors; a microcontroller has no cache lines to fill,
 * and every byte of an arena counts). */
#ifdef ONNXRUN_BAREMETAL
#define HDR 16
#else
#define HDR 64
#endif

static void *default_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	return onnxrun__os_aligned_alloc(align, size);
}

static void default_free(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	(void)size;
	onnxrun__os_aligned_free(ptr);
}

/* The workspace entered on this thread (runtime.h); one thread on bare metal. */
#if ONNXRUN__OS_THREADS
static _Thread_local struct onnxrun__workspace *current_ws;
#else
static struct onnxrun__workspace *current_ws;
#endif

void onnxrun__workspace_enter(struct onnxrun__workspace *ws)
{
	current_ws = ws;
}

void onnxrun__workspace_leave(void)
{
	current_ws = NULL;
}

size_t onnxrun__workspace_block(size_t size)
{
	return HDR + (size + HDR - 1) / HDR * HDR;
}

/* A header holds the block's size and, for workspace blocks, the workspace offset its
 * block ends at (what lets the newest block be returned). */
struct block_hdr {
	size_t size;
	size_t ws_end;   /* measured or workspace blocks: the workspace offset the block ends at */
	bool from_ws;    /* bumped off a workspace (never handed to the env's free) */
};

_Static_assert(sizeof(struct block_hdr) <= HDR, "the header fits its space");

#ifdef ONNXRUN_BAREMETAL
/* On bare metal the blocks outside a workspace that hold no element data (records, names,
 * index arrays: a model's hundred or so small blocks) take an 8-byte header at 8-byte
 * alignment instead: [size][SMALL_HDR], ~20 B less each in an arena (no 16-byte header, no
 * alignment gap in front). Element data keeps HDR (onnxrun__malloc_aligned). The word just
 * before every block tells the two apart: SMALL_HDR there, HDR in a 16-byte header. */
#define SMALL_HDR (2 * sizeof(size_t))
_Static_assert(sizeof(struct block_hdr) <= HDR - sizeof(size_t), "the header leaves its tag word");

static void set_tag(unsigned char *payload, size_t tag)
{
	memcpy(payload - sizeof tag, &tag, sizeof tag);
}
#endif

struct onnxrun__workspace *onnxrun__workspace_suspend(void)
{
	struct onnxrun__workspace *ws = current_ws;
	current_ws = NULL;
	return ws;
}

static void *ws_alloc(struct onnxrun__workspace *ws, size_t size)
{
	const size_t b = onnxrun__workspace_block(size);
	struct block_hdr h = { size, 0, true };
	unsigned char *p;
	if (!ws->base || b > ws->size - ws->used) {
		if (ws->base)
			ws->overflows++;
		return NULL;
	}
	p = ws->base + ws->used;
	ws->used += b;
	h.ws_end = ws->used;
	memcpy(p, &h, sizeof h);
#ifdef ONNXRUN_BAREMETAL
	set_tag(p + HDR, HDR);
#endif
	return p + HDR;
}

/* A block with an HDR header at HDR alignment (or from the current workspace). */
static inline void *malloc_hdr(const struct onnxrun_env *env, size_t size)
{
	unsigned char *p;
	struct onnxrun__workspace *ws = current_ws;
	if (size > SIZE_MAX - 2 * HDR)
		return NULL;
	if (ws && (p = ws_alloc(ws, size)))
		return p;
	p = env->allocator.alloc(env->allocator.ctx, size + HDR, HDR);
	if (!p) {
		if (ws && !ws->base)
			ws->overflows++; /* measuring: the op stopped short, the measure is too low */
		return NULL;
	}
	{
		struct block_hdr h = { size, 0, false };
		if (ws && !ws->base) { /* measuring: where the block would end in a workspace */
			ws->used += onnxrun__workspace_block(size);
			h.ws_end = ws->used;
			if (ws->used > ws->need)
				ws->need = ws->used;
		}
		memcpy(p, &h, sizeof h);
	}
#ifdef ONNXRUN_BAREMETAL
	set_tag(p + HDR, HDR);
#endif
	return p + HDR;
}

void *onnxrun__malloc(const struct onnxrun_env *env, size_t size)
{
#ifdef ONNXRUN_BAREMETAL
	if (!current_ws) {
		unsigned char *p;
		if (size > SIZE_MAX - SMALL_HDR || !(p = env->allocator.alloc(env->allocator.ctx, size + SMALL_HDR, SMALL_HDR)))
			return NULL;
		memcpy(p, &size, sizeof size);
		set_tag(p + SMALL_HDR, SMALL_HDR);
		return p + SMALL_HDR;
	}
#endif
	return malloc_hdr(env, size);
}

void *onnxrun__malloc_aligned(const struct onnxrun_env *env, size_t size)
{
	return malloc_hdr(env, size);
}

#ifdef ONNXRUN_BAREMETAL
/* On magnitudes, the bound checked by one unsigned 64-bit division: 124 bytes of Thumb-2
 * instead of __builtin_mul_overflow's 176 (flash), and the division is libgcc's, which a
 * firmware links anyway. Same answers as the builtin for every pair (INT64_MIN included:
 * its magnitude 2^63 is the negative products' bound). */
bool onnxrun__mul_i64(int64_t a, int64_t b, int64_t *out)
{
	const uint64_t ua = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, ub = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
	const bool neg = (a < 0) != (b < 0);
	uint64_t p;
	if (ub && ua > ((uint64_t)INT64_MAX + neg) / ub)
		return false;
	p = ua * ub;
	*out = neg ? (int64_t)(0 - p) : (int64_t)p;
	return true;
}
#endif

void *onnxrun__calloc(const struct onnxrun_env *env, size_t count, size_t size)
{
	size_t total;
	void *p;
	if (__builtin_mul_overflow(count, size, &total))
		return NULL;
	p = onnxrun__malloc(env, total);
	if (p)
		memset(p, 0, total);
	return p;
}

void onnxrun__free(const struct onnxrun_env *env, void *ptr)
{
	unsigned char *p = ptr;
	struct onnxrun__workspace *ws = current_ws;
	struct block_hdr h;
	if (!ptr)
		return;
#ifdef ONNXRUN_BAREMETAL
	{
		size_t tag, size;
		memcpy(&tag, p - sizeof tag, sizeof tag);
		if (tag == SMALL_HDR) {
			memcpy(&size, p - SMALL_HDR, sizeof size);
			env->allocator.free(env->allocator.ctx, p - SMALL_HDR, size + SMALL_HDR);
			return;
		}
	}
#endif
	p -= HDR;
	memcpy(&h, p, sizeof h);
	/* the newest block of the workspace (or of the measuring pass): its bytes are reused */
	if (ws && h.ws_end && h.ws_end == ws->used && (h.from_ws || !ws->base))
		ws->used -= onnxrun__workspace_block(h.size);
	if (h.from_ws)
		return; /* the workspace's bytes: all back when the node ends */
	env->allocator.free(env->allocator.ctx, p, h.size + HDR);
}

char *onnxrun__strndup(const struct onnxrun_env *env, const char *s, size_t len)
{
	char *d;
	if (len == SIZE_MAX)
		return NULL;
	d = onnxrun__malloc(env, len + 1);
	if (!d)
		return NULL;
	if (len)
		memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *onnxrun__strdup(const struct onnxrun_env *env, const char *s)
{
	return onnxrun__strndup(env, s ? s : "", s ? strlen(s) : 0);
}

void onnxrun__log(const struct onnxrun_env *env, enum onnxrun_log_level level, const char *fmt, ...)
{
	char buf[ONNXRUN__ERR_LEN];
	va_list ap;
	if (!env || !env->log_fn)
		return;
	va_start(ap, fmt);
	onnxrun__vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	env->log_fn(env->log_ctx, level, buf);
}

/* ---- env ---- */

enum onnxrun_status onnxrun_env_create(const struct onnxrun_allocator *allocator, struct onnxrun_env **out)
{
	struct onnxrun_allocator a = { NULL, default_alloc, default_free };
	struct onnxrun_env *env;
	if (!out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	if (allocator) {
		if (!allocator->alloc || !allocator->free)
			return ONNXRUN_ERROR_INVALID_ARGUMENT;
		a = *allocator;
	}
	env = a.alloc(a.ctx, sizeof *env, 64);
	if (!env)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	memset(env, 0, sizeof *env);
	env->allocator = a;
	atomic_init(&env->load_cancel, 0);
	*out = env;
	return ONNXRUN_OK;
}

void onnxrun_env_free(struct onnxrun_env *env)
{
	struct onnxrun_allocator a;
	if (!env)
		return;
	onnxrun__env_free_ops(env);
	a = env->allocator;
	a.free(a.ctx, env, sizeof *env);
}

void onnxrun_env_set_log(struct onnxrun_env *env, onnxrun_log_fn fn, void *ctx)
{
	if (!env)
		return;
	env->log_fn = fn;
	env->log_ctx = ctx;
}

enum onnxrun_status onnxrun_env_set_max_memory(struct onnxrun_env *env, uint64_t bytes)
{
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	env->max_memory = bytes;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_env_set_mmap(struct onnxrun_env *env, int enabled)
{
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	env->no_mmap = !enabled;
	return ONNXRUN_OK;
}

uint64_t onnxrun__env_max_memory(const struct onnxrun_env *env)
{
	return env->max_memory ? env->max_memory : ONNXRUN_DEFAULT_MAX_MEMORY;
}

const char *onnxrun_env_error(const struct onnxrun_env *env)
{
	return env ? env->err.msg : "no env";
}

const char *onnxrun_version(void)
{
	return ONNXRUN_VERSION_STRING;
}

const char *onnxrun_status_str(enum onnxrun_status status)
{
	switch (status) {
	case ONNXRUN_OK: return "ok";
	case ONNXRUN_ERROR_INVALID_ARGUMENT: return "invalid argument";
	case ONNXRUN_ERROR_OUT_OF_MEMORY: return "out of memory";
	case ONNXRUN_ERROR_IO: return "i/o error";
	case ONNXRUN_ERROR_INVALID_MODEL: return "invalid model";
	case ONNXRUN_ERROR_UNSUPPORTED: return "unsupported";
	case ONNXRUN_ERROR_INVALID_INPUT: return "invalid input";
	case ONNXRUN_ERROR_LIMIT: return "limit exceeded";
	case ONNXRUN_ERROR_RUNTIME: return "runtime error";
	case ONNXRUN_ERROR_CANCELLED: return "cancelled";
	}
	return "unknown status";
}

/* ---- dtypes ---- */

static const struct {
	const char *name;
	size_t size;
} dtype_table[] = {
	[ONNXRUN_DTYPE_UNDEFINED] = { "undefined", 0 },
	[ONNXRUN_DTYPE_FLOAT] = { "float", 4 },
	[ONNXRUN_DTYPE_UINT8] = { "uint8", 1 },
	[ONNXRUN_DTYPE_INT8] = { "int8", 1 },
	[ONNXRUN_DTYPE_UINT16] = { "uint16", 2 },
	[ONNXRUN_DTYPE_INT16] = { "int16", 2 },
	[ONNXRUN_DTYPE_INT32] = { "int32", 4 },
	[ONNXRUN_DTYPE_INT64] = { "int64", 8 },
	[ONNXRUN_DTYPE_STRING] = { "string", sizeof(struct onnxrun_string) },
	[ONNXRUN_DTYPE_BOOL] = { "bool", 1 },
	[ONNXRUN_DTYPE_FLOAT16] = { "float16", 2 },
	[ONNXRUN_DTYPE_DOUBLE] = { "double", 8 },
	[ONNXRUN_DTYPE_UINT32] = { "uint32", 4 },
	[ONNXRUN_DTYPE_UINT64] = { "uint64", 8 },
	[ONNXRUN_DTYPE_COMPLEX64] = { "complex64", 8 },
	[ONNXRUN_DTYPE_COMPLEX128] = { "complex128", 16 },
	[ONNXRUN_DTYPE_BFLOAT16] = { "bfloat16", 2 },
};
_Static_assert(sizeof dtype_table / sizeof dtype_table[0] == ONNXRUN_DTYPE_BFLOAT16 + 1,
               "dtype table covers every dtype");

bool onnxrun__dtype_valid(int dtype)
{
	return dtype > ONNXRUN_DTYPE_UNDEFINED && dtype <= ONNXRUN_DTYPE_BFLOAT16;
}

const char *onnxrun_dtype_name(enum onnxrun_dtype dtype)
{
	return onnxrun__dtype_valid((int)dtype) ? dtype_table[dtype].name : "undefined";
}

size_t onnxrun_dtype_size(enum onnxrun_dtype dtype)
{
	return onnxrun__dtype_valid((int)dtype) ? dtype_table[dtype].size : 0;
}

/* IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits. */
float onnxrun__f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	float f;
	if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (man << 13);
	} else if (exp == 0) {
		/* subnormal: man * 2^-24 */
		f = (float)man * (1.0f / 16777216.0f);
		return sign ? -f : f;
	} else {
		bits = sign | ((exp + 112) << 23) | (man << 13);
	}
	memcpy(&f, &bits, sizeof f);
	return f;
}

uint16_t onnxrun__f32_to_f16(float f)
{
	uint32_t x, sign, absx;
	memcpy(&x, &f, sizeof x);
	sign = (x >> 16) & 0x8000;
	absx = x & 0x7fffffffu;
	if (absx > 0x7f800000u) /* NaN: keep it quiet NaN, keep top mantissa bits */
		return (uint16_t)(sign | 0x7e00 | ((absx >> 13) & 0x3ff));
	if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
		return (uint16_t)(sign | 0x7c00);
	if (absx < 0x38800000u) {
		/* result is subnormal or zero: value / 2^-24, rounded to nearest even */
		float a;
		uint32_t q;
		float r;
		memcpy(&a, &absx, sizeof a);
		r = a * 16777216.0f; /* exact: scaling by a power of two */
		q = (uint32_t)r;
		if (r - (float)q > 0.5f || (r - (float)q == 0.5f && (q & 1)))
			q++;
		return (uint16_t)(sign | q);
	}
	{
		uint32_t mant = absx & 0x7fffff, exp = (absx >> 23) - 112;
		uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++; /* may carry into the exponent: still correct */
		return (uint16_t)(sign | h);
	}
}

float onnxrun__bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

uint16_t onnxrun__f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

enum onnxrun_status onnxrun_set_clock(uint64_t (*now_ns)(void *ctx), void *ctx)
{
	return onnxrun__os_set_clock(now_ns, ctx) ? ONNXRUN_ERROR_UNSUPPORTED : ONNXRUN_OK;
}
