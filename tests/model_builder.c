/*
 * model_builder.c - shared helpers for test_loader.c, test_graph.c and test_session.c:
 * a seeded RNG, a counting (and failing) allocator, message checks, tensor helpers and
 * deliberately naive reference ops written from the ONNX spec. Each test file does
 * #include "model_builder.c" (it is not a test executable of its own). Everything is
 * static inline so unused helpers cause no warnings.
 */
#ifndef ONNXRUN_TESTS_MODEL_BUILDER_C
#define ONNXRUN_TESTS_MODEL_BUILDER_C

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "onnxrun.h"
#include "model_builder.h"
#include "platform/platform.h"
#include "test_scale.h"

/* ---- RNG: xorshift64*, seed printed by the tests on failure ---- */

struct th_rng {
	uint64_t s;
};

/* Creates path and its missing parents, like `mkdir -p` (0 on success). */
static inline int th_mkdirs(const char *path)
{
	char buf[1024];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (onnxrun__os_mkdir(buf) != 0 && !onnxrun__os_is_dir(buf))
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

static inline void th_rng_seed(struct th_rng *r, uint64_t seed)
{
	r->s = seed * 0x9E3779B97F4A7C15ull + 1;
}

static inline uint64_t th_rng_next(struct th_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [-1, 1), multiples of 1/64 so sums of few products are exact in float. */
static inline float th_rng_float(struct th_rng *r)
{
	return (float)((int)(th_rng_next(r) % 128) - 64) / 64.0f;
}

static inline void th_fill(struct th_rng *r, float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = th_rng_float(r);
}

/* ---- counting allocator: tracks live blocks; can fail the k-th allocation ---- */

struct th_alloc {
	long live;        /* blocks allocated and not freed */
	long count;       /* allocations attempted */
	long fail_at;     /* fail allocation number fail_at (0-based); -1 never */
	size_t live_bytes;
	size_t peak_bytes; /* highest live_bytes seen */
};

static inline void *th_alloc_fn(void *ctx, size_t size, size_t align)
{
	struct th_alloc *a = ctx;
	void *p = NULL;
	long n = a->count++;
	if (a->fail_at >= 0 && n == a->fail_at)
		return NULL;
	if (!(p = onnxrun__os_aligned_alloc(align, size)))
		return NULL;
	a->live++;
	a->live_bytes += size;
	if (a->live_bytes > a->peak_bytes)
		a->peak_bytes = a->live_bytes;
	return p;
}

static inline void th_free_fn(void *ctx, void *ptr, size_t size)
{
	struct th_alloc *a = ctx;
	if (!ptr)
		return;
	a->live--;
	a->live_bytes -= size;
	onnxrun__os_aligned_free(ptr);
}

/* An env on a counting allocator (a must outlive it). */
static inline struct onnxrun_env *th_env_counted(struct th_alloc *a)
{
	struct onnxrun_allocator al = { a, th_alloc_fn, th_free_fn };
	struct onnxrun_env *env = NULL;
	a->live = 0;
	a->count = 0;
	a->fail_at = -1;
	a->live_bytes = 0;
	a->peak_bytes = 0;
	assert_int_equal(onnxrun_env_create(&al, &env), ONNXRUN_OK);
	return env;
}

static inline struct onnxrun_env *th_env(void)
{
	struct onnxrun_env *env = NULL;
	assert_int_equal(onnxrun_env_create(NULL, &env), ONNXRUN_OK);
	return env;
}

/* ---- messages ---- */

static inline bool th_contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
}

static inline bool th_icontains(const char *hay, const char *needle)
{
	size_t n;
	if (!hay || !needle)
		return false;
	n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return n == 0;
}

/* Fails the test unless msg contains needle, showing the message. */
#define TH_ASSERT_MSG_HAS(msg, needle)                                                      \
	do {                                                                                \
		const char *th__m = (msg);                                                  \
		if (!th_contains(th__m, (needle)))                                          \
			fail_msg("message \"%s\" does not mention \"%s\"", th__m ? th__m : "(null)", \
			         (needle));                                                 \
	} while (0)

#define TH_ASSERT_MSG_IHAS(msg, needle)                                                     \
	do {                                                                                \
		const char *th__m = (msg);                                                  \
		if (!th_icontains(th__m, (needle)))                                         \
			fail_msg("message \"%s\" does not mention \"%s\" (any case)",         \
			         th__m ? th__m : "(null)", (needle));                       \
	} while (0)

/* Fails with the status names and env/session message when a != b. */
#define TH_ASSERT_STATUS(got, want, msg)                                                    \
	do {                                                                                \
		enum onnxrun_status th__g = (got), th__w = (want);                          \
		if (th__g != th__w)                                                         \
			fail_msg("status %d (%s), expected %d (%s); message: \"%s\"", (int)th__g, \
			         onnxrun_status_str(th__g), (int)th__w, onnxrun_status_str(th__w), \
			         (msg));                                                    \
	} while (0)

/* ---- loading ---- */

/* Packs and frees m, loads it from the buffer (base_dir NULL) and returns the status. */
static inline enum onnxrun_status th_load(struct onnxrun_env *env, Onnx__ModelProto *m,
                                          struct onnxrun_model **out)
{
	size_t size;
	uint8_t *buf = mb_finish(m, &size);
	enum onnxrun_status st = onnxrun_model_load_buffer(env, buf, size, NULL, out);
	free(buf);
	return st;
}

/* Loads m and asserts success, printing the env error otherwise. */
static inline struct onnxrun_model *th_load_ok(struct onnxrun_env *env, Onnx__ModelProto *m)
{
	struct onnxrun_model *model = NULL;
	enum onnxrun_status st = th_load(env, m, &model);
	TH_ASSERT_STATUS(st, ONNXRUN_OK, onnxrun_env_error(env));
	assert_non_null(model);
	return model;
}

/* A float tensor of the given shape holding a copy of data (data may be NULL: zeros). */
static inline struct onnxrun_tensor *th_tensor_f32(struct onnxrun_env *env, int32_t rank,
                                                   const int64_t *dims, const float *data)
{
	struct onnxrun_tensor *t = NULL;
	TH_ASSERT_STATUS(onnxrun_tensor_create(env, ONNXRUN_DTYPE_FLOAT, rank, dims, &t), ONNXRUN_OK,
	                 onnxrun_env_error(env));
	if (data && onnxrun_tensor_nbytes(t))
		memcpy(onnxrun_tensor_data(t), data, onnxrun_tensor_nbytes(t));
	return t;
}

static inline size_t th_numel(int32_t rank, const int64_t *dims)
{
	size_t n = 1;
	for (int32_t i = 0; i < rank; i++)
		n *= (size_t)dims[i];
	return n;
}

/* Asserts t is FLOAT with the given shape. */
static inline void th_assert_shape(const struct onnxrun_tensor *t, enum onnxrun_dtype dtype, int32_t rank,
                                   const int64_t *dims)
{
	assert_non_null(t);
	assert_int_equal(onnxrun_tensor_dtype(t), dtype);
	assert_int_equal(onnxrun_tensor_rank(t), rank);
	for (int32_t i = 0; i < rank; i++)
		if (onnxrun_tensor_dims(t)[i] != dims[i])
			fail_msg("dim %d is %lld, expected %lld", (int)i, (long long)onnxrun_tensor_dims(t)[i],
			         (long long)dims[i]);
}

/* Compares a float tensor with the reference, |a-b| <= 1e-5 + 1e-5*|b|; names the seed. */
static inline void th_assert_close(const struct onnxrun_tensor *t, const float *want, size_t n,
                                   uint64_t seed, const char *what)
{
	const float *got = onnxrun_tensor_data(t);
	assert_int_equal((size_t)onnxrun_tensor_numel(t), n);
	for (size_t i = 0; i < n; i++) {
		float d = fabsf(got[i] - want[i]);
		if (!(d <= 1e-5f + 1e-5f * fabsf(want[i])))
			fail_msg("%s: seed %llu: element %zu is %.9g, expected %.9g", what,
			         (unsigned long long)seed, i, (double)got[i], (double)want[i]);
	}
}

/* Runs the model with x (float, rank 4, dims xd) as input 0 and compares output `out` with
 * want (n floats, th_assert_close). */
static inline void th_run_check(struct onnxrun_env *env, const struct onnxrun_model *model, const float *x,
                                const int64_t *xd, size_t out, const float *want, size_t n, uint64_t seed,
                                const char *what)
{
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *tx = th_tensor_f32(env, 4, xd, x);
	const struct onnxrun_tensor *y = NULL;
	TH_ASSERT_STATUS(onnxrun_session_create(model, &s), ONNXRUN_OK, onnxrun_env_error(env));
	TH_ASSERT_STATUS(onnxrun_session_set_input(s, 0, tx), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_run(s), ONNXRUN_OK, onnxrun_session_error(s));
	TH_ASSERT_STATUS(onnxrun_session_output(s, out, &y), ONNXRUN_OK, onnxrun_session_error(s));
	th_assert_close(y, want, n, seed, what);
	onnxrun_session_free(s);
	onnxrun_tensor_free(tx);
}

#ifdef ONNXRUN_RUNTIME_H
/* The initializer tensor of value `name` in a loaded model (tests that include
 * runtime/runtime.h before this file). */
static inline const struct onnxrun_tensor *th_value_init(const struct onnxrun_model *m, const char *name)
{
	for (size_t v = 0; v < m->n_values; v++)
		if (!strcmp(m->values[v].name, name))
			return m->values[v].init;
	fail_msg("no value '%s'", name);
	return NULL;
}
#endif

/* ---- reference ops, written from the ONNX operator spec ---- */

/*
 * ConvTranspose, 2-D, float, by the definition: scatter every input element through the
 * kernel into the output, then add the bias.
 *   out[n, g*Mg + m, i*s - pad_begin + k*d] += x[n, g*Cg + c, i] * w[g*Cg + c, m, k]
 * x [N, C, H, W], w [C, Mg, KH, KW], b [M] or NULL, out [N, Mg*group, OH, OW] (caller
 * computed OH/OW; zeroed here).
 */
struct th_ct2d {
	int64_t n, c, h, w;    /* input */
	int64_t mg, kh, kw;    /* kernel: W is [c, mg, kh, kw] */
	int64_t group;
	int64_t sh, sw, dh, dw;
	int64_t pt, pl;        /* pad begin (top, left) */
	int64_t oh, ow;        /* output spatial size */
};

static inline void th_ref_conv_transpose2d(const struct th_ct2d *p, const float *x, const float *w,
                                           const float *b, float *out)
{
	int64_t cg = p->c / p->group, m_total = p->mg * p->group;
	memset(out, 0, (size_t)(p->n * m_total * p->oh * p->ow) * sizeof *out);
	for (int64_t n = 0; n < p->n; n++)
		for (int64_t g = 0; g < p->group; g++)
			for (int64_t c = 0; c < cg; c++)
				for (int64_t i = 0; i < p->h; i++)
					for (int64_t j = 0; j < p->w; j++)
						for (int64_t m = 0; m < p->mg; m++)
							for (int64_t ki = 0; ki < p->kh; ki++)
								for (int64_t kj = 0; kj < p->kw; kj++) {
									int64_t oi = i * p->sh - p->pt + ki * p->dh;
									int64_t oj = j * p->sw - p->pl + kj * p->dw;
									int64_t ci = g * cg + c, mo = g * p->mg + m;
									if (oi < 0 || oi >= p->oh || oj < 0 || oj >= p->ow)
										continue;
									out[((n * m_total + mo) * p->oh + oi) * p->ow + oj] +=
										x[((n * p->c + ci) * p->h + i) * p->w + j] *
										w[((ci * p->mg + m) * p->kh + ki) * p->kw + kj];
								}
	if (b)
		for (int64_t n = 0; n < p->n; n++)
			for (int64_t m = 0; m < m_total; m++)
				for (int64_t k = 0; k < p->oh * p->ow; k++)
					out[(n * m_total + m) * p->oh * p->ow + k] += b[m];
}

/*
 * DepthToSpace on any element size: x [N, C, H, W] -> out [N, C/bs^2, H*bs, W*bs].
 * DCR: reshape [N, bs, bs, C', H, W], transpose (0, 3, 4, 1, 5, 2):
 *   out[n, c, h*bs + i, w*bs + j] = x[n, (i*bs + j)*C' + c, h, w]
 * CRD: reshape [N, C', bs, bs, H, W], transpose (0, 1, 4, 2, 5, 3):
 *   out[n, c, h*bs + i, w*bs + j] = x[n, c*bs*bs + i*bs + j, h, w]
 */
static inline void th_ref_depth_to_space(const void *xv, void *outv, size_t elem, int64_t n_, int64_t c_,
                                         int64_t h_, int64_t w_, int64_t bs, bool crd)
{
	const unsigned char *x = xv;
	unsigned char *out = outv;
	int64_t co = c_ / (bs * bs), oh = h_ * bs, ow = w_ * bs;
	for (int64_t n = 0; n < n_; n++)
		for (int64_t c = 0; c < co; c++)
			for (int64_t h = 0; h < h_; h++)
				for (int64_t i = 0; i < bs; i++)
					for (int64_t w = 0; w < w_; w++)
						for (int64_t j = 0; j < bs; j++) {
							int64_t ci = crd ? c * bs * bs + i * bs + j : (i * bs + j) * co + c;
							size_t src = (size_t)(((n * c_ + ci) * h_ + h) * w_ + w);
							size_t dst = (size_t)(((n * co + c) * oh + h * bs + i) * ow + w * bs + j);
							memcpy(out + dst * elem, x + src * elem, elem);
						}
}

#endif
