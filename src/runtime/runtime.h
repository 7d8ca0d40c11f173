/*
 * runtime.h - internal types shared by the loader, the runtime and the ops: the env and its
 * allocator, error messages, dtypes, tensors, the graph IR and the op interface.
 * Nothing here is API; internal symbols are onnxrun__<module>_... with hidden visibility.
 */
#ifndef ONNXRUN_RUNTIME_H
#define ONNXRUN_RUNTIME_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxrun.h"
#include "../platform/platform.h"

/* Windows DLLs export only what is marked (include/onnxrun.h): no visibility attribute. */
#if defined(_WIN32)
#define ONNXRUN__HIDDEN
#else
#define ONNXRUN__HIDDEN __attribute__((visibility("hidden")))
#endif
/* MinGW's own printf archetype is the Microsoft C runtime's, without %zu / %lld: the build
 * uses its C99 printf (__USE_MINGW_ANSI_STDIO), checked as gnu_printf. */
#if defined(__MINGW32__)
#define ONNXRUN__PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#else
#define ONNXRUN__PRINTF(a, b) __attribute__((format(printf, a, b)))
#endif

/* ---- errors ---------------------------------------------------------------------------- */

/* Message buffers: in the env, each session and on the stack of the calls that format one;
 * on bare metal, where RAM and the stack are counted in KiB, shorter (longer messages are
 * cut). */
#ifdef ONNXRUN_BAREMETAL
#define ONNXRUN__ERR_LEN 256
#else
#define ONNXRUN__ERR_LEN 1024
#endif

struct onnxrun__err {
	char msg[ONNXRUN__ERR_LEN];
};

/* Formats the message into err (when not NULL) and returns status. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__fail(struct onnxrun__err *err, enum onnxrun_status status,
                                                  const char *fmt, ...) ONNXRUN__PRINTF(3, 4);
ONNXRUN__HIDDEN void onnxrun__err_clear(struct onnxrun__err *err);
/* vsnprintf for the library's messages (%zu and friends work on bare metal too, where
 * newlib lacks them). */
ONNXRUN__HIDDEN int onnxrun__vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
/* Prefixes the current message: "<prefix>: <old message>". */
ONNXRUN__HIDDEN void onnxrun__err_prefix(struct onnxrun__err *err, const char *fmt, ...)
	ONNXRUN__PRINTF(2, 3);

/* ---- env and allocation ---------------------------------------------------------------- */

struct onnxrun_env {
	struct onnxrun_allocator allocator;
	onnxrun_log_fn log_fn;
	void *log_ctx;
	struct onnxrun__err err;
	size_t n_ops;
	struct onnxrun_op *ops; /* registered custom ops (copies) */
	uint64_t max_memory;    /* onnxrun_env_set_max_memory; 0: ONNXRUN_DEFAULT_MAX_MEMORY */
	bool no_mmap;           /* onnxrun_env_set_mmap(env, false): read files instead */
	bool allow_newer_opset; /* onnxrun_env_set_allow_newer_opset: load ai.onnx > known */
	size_t strip_min;       /* tests, fuzzing, A/B timing: float32 raw_data from this many
	                         * bytes on is kept out of the parse (strip.c); 0: the default,
	                         * SIZE_MAX: never */
	atomic_int load_cancel; /* onnxrun_env_cancel_load's pending request */
	uint64_t load_budget_ns; /* onnxrun_env_set_load_deadline; 0: none */
	uint64_t load_start_ns;  /* when the load in progress started (for its deadline message) */
	struct onnxrun__runctl *load_ctl; /* the stop state of the load in progress, else NULL */
};

/* True when the load in progress on env must stop (cancel request or load deadline); the
 * loader checks it between initializers, every 64 nodes and before each op's init. */
ONNXRUN__HIDDEN bool onnxrun__load_should_stop(const struct onnxrun_env *env);
/* Records the message of a stopped load in err and returns ONNXRUN_ERROR_CANCELLED. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__load_stopped(const struct onnxrun_env *env, struct onnxrun__err *err);

/* All library memory goes through these. Blocks are 64-byte aligned (16 on bare metal); the size is kept in a
 * header so onnxrun__free needs no size. malloc(0) returns a valid unique block. */
ONNXRUN__HIDDEN void *onnxrun__malloc(const struct onnxrun_env *env, size_t size);
/* The same, for element data: on bare metal onnxrun__malloc's blocks outside a workspace are
 * only 8-byte aligned (small headers, core.c); these are 16-byte aligned there too. */
ONNXRUN__HIDDEN void *onnxrun__malloc_aligned(const struct onnxrun_env *env, size_t size);
ONNXRUN__HIDDEN void *onnxrun__calloc(const struct onnxrun_env *env, size_t count, size_t size);
ONNXRUN__HIDDEN void onnxrun__free(const struct onnxrun_env *env, void *ptr);
/* A session's workspace for what ops allocate while they compute (scratch, plans, packed
 * copies): sized at prepare by a measuring pass, so that a run calls the env's allocator
 * zero times. While a workspace is entered on a thread (onnxrun__workspace_enter), that
 * thread's onnxrun__malloc takes blocks from it:
 *  - measuring (ws->base NULL): blocks come from the env and ws->need tracks the bytes the
 *    same calls would take from a workspace (bump order, last-in-first-out frees reused);
 *  - running: blocks are bumped off ws->base; onnxrun__free of the newest returns it, of
 *    others waits for onnxrun__workspace_reset. A call that does not fit falls back to the
 *    env and is counted in ws->overflows (a sizing miss; tests check there is none).
 * Other threads (the pool's workers) are not affected. */
struct onnxrun__workspace {
	unsigned char *base;
	size_t size, used, need;
	size_t overflows; /* running: calls that did not fit; measuring: allocations that failed */
};
ONNXRUN__HIDDEN void onnxrun__workspace_enter(struct onnxrun__workspace *ws);
ONNXRUN__HIDDEN void onnxrun__workspace_leave(void);
/* Leaves this thread's workspace and returns it (NULL if none), for allocations that outlive
 * the node (string elements of outputs); onnxrun__workspace_enter(returned) goes back. */
ONNXRUN__HIDDEN struct onnxrun__workspace *onnxrun__workspace_suspend(void);
/* Bytes a block of size bytes takes from a workspace. */
ONNXRUN__HIDDEN size_t onnxrun__workspace_block(size_t size);
/* NULL-safe; copies len bytes and appends a NUL. */
ONNXRUN__HIDDEN char *onnxrun__strndup(const struct onnxrun_env *env, const char *s, size_t len);
ONNXRUN__HIDDEN char *onnxrun__strdup(const struct onnxrun_env *env, const char *s);
/* The env's memory cap in bytes (its setting, or ONNXRUN_DEFAULT_MAX_MEMORY). */
ONNXRUN__HIDDEN uint64_t onnxrun__env_max_memory(const struct onnxrun_env *env);
/* Releases the env's registered custom ops (calling their user_data_free). */
ONNXRUN__HIDDEN void onnxrun__env_free_ops(struct onnxrun_env *env);
ONNXRUN__HIDDEN void onnxrun__log(const struct onnxrun_env *env, enum onnxrun_log_level level,
                                  const char *fmt, ...) ONNXRUN__PRINTF(3, 4);

/* Overflow-checked arithmetic: return false on overflow (then *out is unspecified). The
 * multiply is out of line on bare metal: checked 64-bit on a 32-bit CPU is ~180 bytes of
 * Thumb-2 per use, and its uses are shape checks, not loops (core.c). */
#ifdef ONNXRUN_BAREMETAL
ONNXRUN__HIDDEN bool onnxrun__mul_i64(int64_t a, int64_t b, int64_t *out);
#else
static inline bool onnxrun__mul_i64(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}
#endif
static inline bool onnxrun__add_i64(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* ---- dtypes ------------------------------------------------------------------------------ */

/* True for the 16 dtypes onnxrun knows (every ONNX type up to BFLOAT16). */
ONNXRUN__HIDDEN bool onnxrun__dtype_valid(int dtype);

/* float16 / bfloat16 <-> float32, round to nearest even, NaN kept NaN. */
ONNXRUN__HIDDEN float onnxrun__f16_to_f32(uint16_t h);
ONNXRUN__HIDDEN uint16_t onnxrun__f32_to_f16(float f);
ONNXRUN__HIDDEN float onnxrun__bf16_to_f32(uint16_t h);
ONNXRUN__HIDDEN uint16_t onnxrun__f32_to_bf16(float f);

/* ---- byte order (src/runtime/byteorder.c) ------------------------------------------------ */

/* ONNX raw_data, external data files and .npy files written by numpy on x86/ARM hold
 * little-endian elements; tensors in memory are always in the host's order. These convert
 * at the boundary (loading and saving), so nothing else in the library sees file byte order.
 * GCC and clang (the only compilers the library builds with: it uses their builtins) define
 * __BYTE_ORDER__; mixed-endian (PDP) hosts are not supported. */
#if !defined(__BYTE_ORDER__) || (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ && __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__)
#error "onnxrun needs a little- or big-endian host (__BYTE_ORDER__)"
#endif
#define ONNXRUN__BIG_ENDIAN (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* The word whose bytes a byte-order conversion of dtype reverses: the element size, half
 * of it for the complex types (two floats / two doubles), 1 when the order cannot matter
 * (bool, int8, uint8; strings, which are never raw bytes). */
ONNXRUN__HIDDEN size_t onnxrun__dtype_swap_unit(enum onnxrun_dtype dtype);
/* Reverses the bytes of each `unit`-byte word of src[0, nbytes) into dst; dst may equal src
 * (in place) but must not otherwise overlap it. nbytes is a multiple of unit; unit is 1, 2,
 * 4 or 8 (1 copies). */
ONNXRUN__HIDDEN void onnxrun__bswap_copy(void *dst, const void *src, size_t nbytes, size_t unit);
/* True when dtype's little-endian bytes differ from its in-memory form on this host. */
ONNXRUN__HIDDEN bool onnxrun__le_needs_swap(enum onnxrun_dtype dtype);
/* Copies nbytes of dtype elements between little-endian and host order (the same operation
 * both ways): a plain copy on little-endian hosts, a byte swap on big-endian ones. dst may
 * equal src (then a little-endian host does nothing). */
ONNXRUN__HIDDEN void onnxrun__le_copy(void *dst, const void *src, size_t nbytes, enum onnxrun_dtype dtype);

/* ---- shapes ------------------------------------------------------------------------------ */

/* True when rank (-1: unknown) and all dims are known. */
ONNXRUN__HIDDEN bool onnxrun__dims_concrete(int32_t rank, const int64_t *dims);
/* Element count of concrete dims; false on int64 overflow. */
ONNXRUN__HIDDEN bool onnxrun__dims_numel(int32_t rank, const int64_t *dims, int64_t *out);
/* The same for a struct onnxrun_shape. */
static inline bool onnxrun__shape_concrete(const struct onnxrun_shape *s)
{
	return onnxrun__dims_concrete(s->rank, s->dims);
}
static inline bool onnxrun__shape_numel(const struct onnxrun_shape *s, int64_t *out)
{
	return onnxrun__dims_numel(s->rank, s->dims, out);
}
/* "[1,C,?,4]" style text into buf; returns buf. */
ONNXRUN__HIDDEN const char *onnxrun__shape_str(const struct onnxrun_shape *s, char *buf, size_t len);
ONNXRUN__HIDDEN void onnxrun__shape_unknown(struct onnxrun_shape *s);

/* ---- tensors ----------------------------------------------------------------------------- */

struct onnxrun_tensor {
	const struct onnxrun_env *env;
	enum onnxrun_dtype dtype;
	int32_t rank;
	size_t nbytes;
	void *data;     /* 64-byte aligned when owned; struct onnxrun_string[] for STRING */
	char *name;     /* owned, may be NULL */
#if ONNXRUN__OS_FILES
	void *map;      /* external data mapped from a file (data points inside); unmapped */
	size_t map_len; /* by onnxrun_tensor_free (none on a platform without files) */
#endif
	/* Loading only: an initializer whose bytes are still in the model buffer (float32
	 * raw_data the loader kept out of the protobuf parse; any alignment). data is NULL
	 * until onnxrun__tensor_materialize copies them; an op that rebuilds the input (packed
	 * weights) may read them in place instead, and then they are never copied. Nothing is
	 * pending once a load returns. */
	const void *pending;
	bool owns_data;      /* false: wrapped caller memory or a slice of a session arena */
	bool pending_failed; /* a copy of the pending bytes failed: the load must fail */
	int64_t numel;
	/* rank of them. On bare metal the record is sized by its rank (TENSOR_RECORD_BYTES): 40
	 * bytes and 8 a dim instead of 152 for any rank, so the session's few records fit the
	 * holes a load leaves in an arena instead of sitting between its planned blocks (RAM);
	 * a tensor's rank never changes after it is made. */
#ifdef ONNXRUN_BAREMETAL
	int64_t dims[];
#else
	int64_t dims[ONNXRUN_MAX_RANK];
#endif
};
/* The bytes of a tensor record of rank dims (tensor.c). */
#ifdef ONNXRUN_BAREMETAL
#define ONNXRUN__TENSOR_RECORD_BYTES(rank) (sizeof(struct onnxrun_tensor) + (size_t)(rank) * sizeof(int64_t))
#else
#define ONNXRUN__TENSOR_RECORD_BYTES(rank) sizeof(struct onnxrun_tensor)
#endif

/* Creates a tensor; data is zeroed and owned unless `borrowed` is given (then nbytes must
 * match and nothing is allocated for data). Dims are checked (>= 0, product and byte size
 * without overflow). Messages go to err. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_new(const struct onnxrun_env *env,
                                                        enum onnxrun_dtype dtype, int32_t rank,
                                                        const int64_t *dims, void *borrowed,
                                                        struct onnxrun__err *err,
                                                        struct onnxrun_tensor **out);
/* onnxrun__tensor_new with owned data that is left uninitialized (STRING data is still
 * zeroed): for node outputs, which the op writes whole. Zeroing a 1 GiB output touched
 * every page before the run's first node, seconds that no stop check could interrupt; the
 * op's work items now touch the pages, between checks. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_new_uninit(const struct onnxrun_env *env,
                                                               enum onnxrun_dtype dtype, int32_t rank,
                                                               const int64_t *dims, struct onnxrun__err *err,
                                                               struct onnxrun_tensor **out);
/* Frees (or unmaps) a tensor's data and leaves data NULL; dtype, dims and nbytes stay. */
ONNXRUN__HIDDEN void onnxrun__tensor_release_data(struct onnxrun_tensor *t);
/* Copies a pending initializer's bytes into owned, aligned data (no-op when not pending). */
/* A pending initializer of a borrowed model: its data becomes the caller's bytes (not
 * owned, never written). */
ONNXRUN__HIDDEN void onnxrun__tensor_borrow_pending(struct onnxrun_tensor *t);
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_materialize(struct onnxrun_tensor *t,
                                                                struct onnxrun__err *err);
/* Byte size of numel elements of dtype; false on overflow (of size_t: on a 32-bit host
 * anything from 4 GiB on). Messages for it say "... overflows" and end with
 * ONNXRUN__SIZE_T_NOTE so that a 32-bit user sees why. */
#define ONNXRUN__SIZE_T_NOTE " (more than a %d-bit size_t holds)"
#define ONNXRUN__SIZE_T_BITS ((int)(sizeof(size_t) * 8))
/* Whether float data must be aligned to its size to be read in place: 32-bit Arm traps
 * unaligned floating-point loads and 64-bit (ldrd/strd) ones (Cortex-M: a fault). Elsewhere
 * unaligned float32 in a model buffer is read where it is. */
#if defined(__arm__) || defined(ONNXRUN_BAREMETAL)
#define ONNXRUN__STRICT_ALIGNMENT 1
#else
#define ONNXRUN__STRICT_ALIGNMENT 0
#endif
ONNXRUN__HIDDEN bool onnxrun__tensor_bytes(enum onnxrun_dtype dtype, int64_t numel, size_t *out);
/* Sets element i of a STRING tensor to a copy of (data, size); frees the old one. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_string_set(struct onnxrun_tensor *t, int64_t i,
                                                               const char *data, size_t size);
/* Frees the strings of a STRING tensor's elements (not the array) and empties them. */
ONNXRUN__HIDDEN void onnxrun__tensor_strings_clear(struct onnxrun_tensor *t);

/* ---- graph IR ---------------------------------------------------------------------------- */

/* Attribute types; values equal ONNX AttributeProto.AttributeType. */
enum onnxrun__attr_type {
	ONNXRUN__ATTR_UNDEFINED = 0,
	ONNXRUN__ATTR_FLOAT = 1,
	ONNXRUN__ATTR_INT = 2,
	ONNXRUN__ATTR_STRING = 3,
	ONNXRUN__ATTR_TENSOR = 4,
	ONNXRUN__ATTR_GRAPH = 5,
	ONNXRUN__ATTR_FLOATS = 6,
	ONNXRUN__ATTR_INTS = 7,
	ONNXRUN__ATTR_STRINGS = 8,
	ONNXRUN__ATTR_TENSORS = 9,
	ONNXRUN__ATTR_GRAPHS = 10,
	ONNXRUN__ATTR_SPARSE_TENSOR = 11,
	ONNXRUN__ATTR_SPARSE_TENSORS = 12,
	ONNXRUN__ATTR_TYPE_PROTO = 13,
	ONNXRUN__ATTR_TYPE_PROTOS = 14,
};

struct onnxrun__attr {
	char *name;
	enum onnxrun__attr_type type;
	float f;                  /* FLOAT */
	int64_t i;                /* INT */
	struct onnxrun_string s;  /* STRING */
	struct onnxrun_tensor *t; /* TENSOR */
	size_t count;             /* element count of the list types below */
	float *floats;            /* FLOATS */
	int64_t *ints;            /* INTS */
	struct onnxrun_string *strings;  /* STRINGS */
	struct onnxrun_tensor **tensors; /* TENSORS */
};

struct onnxrun_model;
struct onnxrun__node;
struct onnxrun_op_context;
struct onnxrun__pool;
struct onnxrun__runctl;

/* What an op callback sees (struct onnxrun_op in onnxrun.h): the node, where errors go, the
 * env, the thread count and the node's state from init; in compute, the session's pool and
 * run control (onnxrun_op_parallel_for). */
struct onnxrun_op_context {
	const struct onnxrun__node *node;
	struct onnxrun__err *err;
	const struct onnxrun_env *env;
	int threads;
	void *state;
	const struct onnxrun_model *model; /* for constant inputs; NULL in op unit tests */
	uint32_t *rebuilds;                /* init only: the node's `rebuilds` (else NULL) */
	struct onnxrun__pool *pool;        /* compute: the session's pool (NULL: one thread) */
	struct onnxrun__runctl *ctl;       /* compute: the run's stop state (NULL: none) */
};

/* onnxrun_op_parallel_for on at most max_threads threads (the built-in ops use fewer for
 * work too small to wake the workers); same statuses. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__op_parallel(struct onnxrun_op_context *ctx, int max_threads, int64_t n,
                                                         onnxrun_parallel_fn fn, void *arg);

struct onnxrun__node {
	char *name;    /* "" when unnamed */
	char *op_type;
	char *domain;  /* normalized: "" for ai.onnx */
	int64_t opset; /* the model's opset for the node's domain */
	size_t n_inputs;
	int32_t *inputs; /* value indices; -1 for an absent optional input */
	size_t n_outputs;
	int32_t *outputs; /* value indices; -1 for an absent optional output */
	size_t n_attrs;
	struct onnxrun__attr *attrs;
	const struct onnxrun_op *op; /* resolved at load */
	void *op_state;               /* from op->init, released with op->fini */
	size_t file_index;            /* position in the file's node list */
	const char **input_names;     /* borrowed value names ("" for absent), for node_info */
	const char **output_names;
	uint32_t rebuilds; /* bit i: op_state can rebuild constant input i (onnxrun__op_rebuilds_input) */
};

/* From an op's init: its state holds constant input i in another form and the op can
 * rebuild the values when compute needs them, so the model may release the initializer's
 * data once every consumer says so (onnxrun__graph_init_ops). Inputs 0-31 only. */
ONNXRUN__HIDDEN void onnxrun__op_rebuilds_input(struct onnxrun_op_context *ctx, size_t i);
/* onnxrun_op_constant_input without copying a pending initializer: for an op whose init
 * only reads the values once (to pack them) and then marks the input rebuildable. *bytes
 * gets the values, data or pending, at any alignment (read them through memcpy). */
ONNXRUN__HIDDEN const struct onnxrun_tensor *onnxrun__op_constant_bytes(const struct onnxrun_op_context *ctx,
                                                                        size_t i, const void **bytes);

/* Node helpers for ops (src/ops). Attribute getters fail with INVALID_MODEL naming the node
 * and attribute when the attribute exists with another type; absent -> *found = false. */
ONNXRUN__HIDDEN const struct onnxrun__attr *onnxrun__node_attr(const struct onnxrun__node *node,
                                                               const char *name);
/* Formats "node '<name>' (<op_type>): <reason>" into err and returns status. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__node_fail(struct onnxrun__err *err, enum onnxrun_status status,
                                                       const struct onnxrun__node *node,
                                                       const char *fmt, ...) ONNXRUN__PRINTF(4, 5);
/* Gets an INT attribute, or def when absent. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__attr_int(const struct onnxrun__node *node, const char *name,
                                                      int64_t def, int64_t *out, bool *found,
                                                      struct onnxrun__err *err);
/* Gets an INTS attribute: *out borrowed, *count elements; absent -> *out NULL, *count 0. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__attr_ints(const struct onnxrun__node *node, const char *name,
                                                       const int64_t **out, size_t *count, bool *found,
                                                       struct onnxrun__err *err);
/* Gets a STRING attribute (borrowed), or def when absent. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__attr_string(const struct onnxrun__node *node,
                                                         const char *name, const char *def,
                                                         const char **out, bool *found,
                                                         struct onnxrun__err *err);

/* Where a value comes from. */
enum onnxrun__value_kind {
	ONNXRUN__VALUE_INTERMEDIATE = 0, /* produced by a node */
	ONNXRUN__VALUE_INPUT = 1,        /* graph input that must be fed */
	ONNXRUN__VALUE_INITIALIZER = 2,  /* constant */
	ONNXRUN__VALUE_DEFAULTED = 3,    /* graph input with an initializer as its default */
};

struct onnxrun__value {
	char *name;
	enum onnxrun__value_kind kind;
	bool is_output;               /* listed as a graph output */
	int32_t producer;             /* node index (execution order) or -1 */
	struct onnxrun_tensor *init;  /* INITIALIZER / DEFAULTED data */
	/* The type declared by input/output/value_info, in its own allocation, or NULL when
	 * the model declares none (most intermediates: 160 B of a 32-bit record saved each);
	 * onnxrun__declared reads it as unknown then. */
	struct onnxrun_type *declared;
	/* The type inferred at load (symbolic): its dtype and rank here, its dims and dim
	 * params in pub_dims (onnxrun__value_type gives it whole); a 160-byte struct
	 * onnxrun_type per value before. */
	enum onnxrun_dtype dtype;
	int32_t rank;
	struct onnxrun_dim *pub_dims; /* for onnxrun_value_info: rank entries of the model's
	                               * pub_dims block (never NULL after a load) */
};

/* A value's type as inferred at load (after the load; during it, the model's load_types). */
ONNXRUN__HIDDEN void onnxrun__value_type(const struct onnxrun__value *v, struct onnxrun_type *out);

/* A value's declared type, or an unknown one (dtype UNDEFINED, rank -1) when it has none. */
ONNXRUN__HIDDEN extern const struct onnxrun_type onnxrun__type_unknown;
static inline const struct onnxrun_type *onnxrun__declared(const struct onnxrun__value *v)
{
	return v->declared ? v->declared : &onnxrun__type_unknown;
}

struct onnxrun__opset {
	char *domain; /* normalized: "" for ai.onnx */
	int64_t version;
};

/* onnxrun_model_metadata: the descriptive strings of the ModelProto, owned ("" when absent). */
struct onnxrun__metadata {
	char *producer_version, *domain, *doc_string, *graph_doc_string;
	int64_t model_version;
	size_t n_props;
	char **prop_keys, **prop_values;
};

struct onnxrun_model {
	struct onnxrun_env *env;
	int64_t ir_version;
	char *producer_name;
	char *graph_name;
	struct onnxrun__metadata meta;
	size_t n_opsets;
	struct onnxrun__opset *opsets;
	size_t n_values;
	struct onnxrun__value *values;
	size_t n_nodes;
	struct onnxrun__node *nodes; /* execution (topological) order */
	size_t n_inputs;
	int32_t *inputs;  /* value indices of graph inputs to feed */
	size_t n_outputs;
	int32_t *outputs; /* value indices of graph outputs */
	size_t n_params;
	char **params;    /* every dim_param name seen, owned */
	struct onnxrun_dim *pub_dims; /* every value's dims, one block sized to their ranks */
	struct onnxrun_type *load_types; /* during the load only: per value (the loader's capacity
	                                  * of them), its type as inferred so far; then kept in
	                                  * the values' dtype, rank and pub_dims and freed */
	/* onnxrun_model_inspect_*: nodes with no implementation are kept (op NULL, their
	 * outputs' types guessed); the model answers queries but never runs
	 * (onnxrun__graph_infer_node refuses it) and its ops' init was not called. */
	bool inspect_only;
	bool borrowed; /* onnxrun_model_load_borrowed: float32 initializers stay in the caller's bytes */
	size_t n_unsupported;
	size_t *unsupported; /* node indices (execution order) of those nodes, in file order */
};

/* Frees what a model's metadata owns (metadata.c; NULL pointers in it are fine). */
ONNXRUN__HIDDEN void onnxrun__metadata_free(const struct onnxrun_env *env, struct onnxrun__metadata *meta);
/* Value index by name, -1 if none. */
ONNXRUN__HIDDEN int32_t onnxrun__model_find_value(const struct onnxrun_model *m, const char *name);
/* Frees everything a model owns (NULL-safe). */
ONNXRUN__HIDDEN void onnxrun__model_destroy(struct onnxrun_model *m);

/* Reads a whole file (at most max_size bytes) into an onnxrun__malloc'd buffer. Errors name
 * the file: IO when it cannot be opened or read, LIMIT when it is larger than max_size. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__read_file(const struct onnxrun_env *env, const char *path,
                                                       uint64_t max_size, struct onnxrun__err *err,
                                                       void **out, size_t *out_size);

/* A whole file's bytes: mapped read-only (map != NULL) or read into an onnxrun__malloc'd
 * buffer (when env->no_mmap, the file is empty or mmap fails). */
struct onnxrun__file_view {
	const void *data;
	size_t size;
	void *map; /* onnxrun__os_unmap(map, map_len) when set; else onnxrun__free(data) */
	size_t map_len;
};
/* Like onnxrun__read_file, mapping the file where possible. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__view_file(const struct onnxrun_env *env, const char *path,
                                                       uint64_t max_size, struct onnxrun__err *err,
                                                       struct onnxrun__file_view *out);
ONNXRUN__HIDDEN void onnxrun__view_release(const struct onnxrun_env *env, struct onnxrun__file_view *v);

/* ---- registry (src/ops/registry.c) -------------------------------------------------------- */

/* The implementation for (domain, op_type) at the given opset: the entry with the highest
 * since_version <= opset, searched first among the env's custom ops (which so override
 * built-ins), then among the built-ins; NULL when there is none. */
ONNXRUN__HIDDEN const struct onnxrun_op *onnxrun__registry_find(const struct onnxrun_env *env, const char *domain,
                                                                const char *op_type, int64_t opset);
/* Newest known since_version of an op, 0 when unknown (for "opset newer than known" warnings). */
ONNXRUN__HIDDEN int onnxrun__registry_newest(const char *domain, const char *op_type);

#endif /* ONNXRUN_RUNTIME_H */
