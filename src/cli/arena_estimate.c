/*
 * arena_estimate.c - the arena bytes a 32-bit bare-metal build needs for a model (--info):
 * the env, the model loaded borrowed from its bytes, one session at 1 thread with zeroed
 * inputs of the bound shapes, prepared (planned tensors and the ops' workspace).
 *
 * The load and prepare run here with an allocator that records each request and replays
 * it into an arena (onnxrun_arena_init) the way the bare-metal library would ask: each
 * library block is its payload plus a 16-byte header at 16-byte alignment there, 64 and 64
 * here. Every payload here is at least its 32-bit size (pointers, size_t and message
 * buffers are larger on a 64-bit host; tensors are the same), and this arena's headers are
 * at least a 32-bit one's, so the replay's high-water mark is an upper bound. The ops plan
 * with the portable kernels whatever this CPU has (the CLI sets ONNXRUN_KERNEL=scalar for
 * --info unless the user set it), so the figure does not depend on the host: before, an
 * AVX2 host gave less than a Cortex-M55 measures and an AVX-512 one 7% more. The host's
 * records of those plans are larger than a bare-metal build's (64-bit offsets, ten spatial
 * axes, both panel sets: ops/conv_transpose/phase.c); a Helium build (Cortex-M55) plans
 * wider tiles and stages x where the portable one may not (kernels/cpu.c: stage_bytes
 * 8 KiB), so HELIUM_STAGING is added. The inputs are created
 * here; a firmware that decodes them from .pb (onnxrun_tensor_decode_pb) gets the parse's
 * raw_data block as the tensor's data, so the parse leaves no hole bigger than its small
 * message blocks (covered by the headers' and pointers' margin above).
 * .ci/mcu.sh checks the figure against the upsampler's measured high-water mark on the
 * Cortex-M4 (an upper bound, at most 10% above).
 */
#include <stdlib.h>
#include <string.h>

#include <stdint.h>

#include "cli.h"

#define HOST_HDR 64 /* the library's block header here */
#define MCU_HDR 16  /* ... and on bare metal (src/runtime/core.c) */
/* A Helium build's staging area of x (its tuning's stage_bytes) and the area's 64-byte key */
#define HELIUM_STAGING ((size_t)(8 << 10) + 64)

/* malloc'd blocks at an alignment (C11's aligned_alloc is missing from MinGW): the block's
 * start is kept just below the aligned pointer */
static void *host_alloc(size_t align, size_t size)
{
	unsigned char *raw = malloc(size + align + sizeof(void *)), *p;
	if (!raw)
		return NULL;
	p = (unsigned char *)(((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1));
	memcpy(p - sizeof(void *), &raw, sizeof raw);
	return p;
}

static void host_free(void *p)
{
	void *raw;
	memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
	free(raw);
}

struct replay {
	struct onnxrun_allocator arena;
	void **host, **sim;
	size_t n, cap;
	int failed;
};

static void *replay_alloc(void *ctx, size_t size, size_t align)
{
	struct replay *r = ctx;
	void *host, *sim;
	const size_t want = size > HOST_HDR - MCU_HDR ? size - (HOST_HDR - MCU_HDR) : size;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		void **h = realloc(r->host, cap * sizeof *h), **s;
		if (!h)
			return NULL;
		r->host = h;
		if (!(s = realloc(r->sim, cap * sizeof *s)))
			return NULL;
		r->sim = s;
		r->cap = cap;
	}
	if (!(host = host_alloc(align, size)))
		return NULL;
	if (!(sim = r->arena.alloc(r->arena.ctx, want, align < MCU_HDR ? align : MCU_HDR)))
		r->failed = 1;
	r->host[r->n] = host;
	r->sim[r->n++] = sim;
	return host;
}

static void replay_free(void *ctx, void *ptr, size_t size)
{
	struct replay *r = ctx;
	for (size_t i = r->n; i-- > 0;)
		if (r->host[i] == ptr) {
			if (r->sim[i])
				r->arena.free(r->arena.ctx, r->sim[i], size);
			r->host[i] = r->host[--r->n];
			r->sim[i] = r->sim[r->n];
			break;
		}
	host_free(ptr);
}

/* 0 and *bytes, or -1 with a reason printed on the memory line's behalf. */
int cli_arena_estimate(const struct cli_options *opts, size_t *bytes)
{
	static const size_t arena_size = (size_t)1 << 30;
	struct replay r;
	struct onnxrun_allocator alloc = { &r, replay_alloc, replay_free };
	struct onnxrun_env *env = NULL;
	struct onnxrun_model *model = NULL;
	struct onnxrun_session *s = NULL;
	struct onnxrun_tensor *in[64] = { NULL };
	unsigned char *file = NULL, *buf;
	size_t size = 0, n_in = 0;
	int ok = 0;
	FILE *f;
	memset(&r, 0, sizeof r);
	if (!(buf = malloc(arena_size)) || onnxrun_arena_init(&r.arena, buf, arena_size) != ONNXRUN_OK) {
		free(buf);
		return -1;
	}
	if ((f = fopen(opts->model_path, "rb")) != NULL) {
		if (fseek(f, 0, SEEK_END) == 0 && (long)(size = (size_t)ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
		    (file = malloc(size ? size : 1)) != NULL && fread(file, 1, size, f) != size) {
			free(file);
			file = NULL;
		}
		fclose(f);
	}
	if (file && onnxrun_env_create(&alloc, &env) == ONNXRUN_OK &&
	    onnxrun_model_load_borrowed(env, file, size, &model) == ONNXRUN_OK &&
	    onnxrun_session_create(model, &s) == ONNXRUN_OK && cli_bind_dims(s, opts) == CLI_OK) {
		ok = 1;
		n_in = onnxrun_model_input_count(model);
		for (size_t i = 0; i < n_in && i < 64 && ok; i++) {
			struct onnxrun_value_info info;
			int64_t dims[ONNXRUN_MAX_RANK];
			if (onnxrun_model_input_info(model, i, &info) != ONNXRUN_OK || info.rank < 0) {
				ok = 0;
				break;
			}
			for (int32_t d = 0; d < info.rank; d++) {
				dims[d] = info.dims[d].value;
				for (size_t b = 0; dims[d] < 0 && info.dims[d].param && b < opts->dim_count; b++)
					if (strlen(info.dims[d].param) == opts->dims[b].name_len &&
					    !strncmp(opts->dims[b].name, info.dims[d].param, opts->dims[b].name_len))
						dims[d] = opts->dims[b].value;
				if (dims[d] < 0)
					ok = 0; /* a dim nobody bound: no concrete plan */
			}
			ok = ok && onnxrun_tensor_create(env, info.dtype, info.rank, dims, &in[i]) == ONNXRUN_OK &&
			     onnxrun_session_set_input(s, i, in[i]) == ONNXRUN_OK;
		}
		ok = ok && onnxrun_session_prepare(s) == ONNXRUN_OK && !r.failed;
	}
	*bytes = onnxrun_arena_high_water(&r.arena) + HELIUM_STAGING;
	onnxrun_session_free(s);
	for (size_t i = 0; i < 64; i++)
		onnxrun_tensor_free(in[i]);
	onnxrun_model_free(model);
	onnxrun_env_free(env);
	free(file);
	free(r.host);
	free(r.sim);
	free(buf);
	return ok ? 0 : -1;
}
