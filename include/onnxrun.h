/*
 * onnxrun.h - the whole public API of onnxrun, a small ONNX graph interpreter.
 *
 * Conventions (read these once):
 *  - Every fallible call returns enum onnxrun_status (ONNXRUN_OK == 0). Results go in the
 *    last `**out` (or `*out`) parameter and are written only on success.
 *  - A detailed message for the last failure is kept per handle: onnxrun_env_error() for
 *    calls that take an env (loading models, creating and reading tensors), and
 *    onnxrun_session_error() for session calls. Messages follow the template
 *    "<verb> <object> '<name>' (<op_type>): <reason>".
 *  - Whoever creates a handle frees it; every onnxrun_*_free(NULL) does nothing.
 *    Getters return borrowed pointers, valid until the owning handle is freed (or, for
 *    session outputs, until the next run).
 *  - The library never aborts, exits or prints; warnings go to the env's log callback.
 *  - Thread-safety: an env and a model may be shared by threads for reading (creating
 *    sessions, querying info) once loaded; calls that write the env's error message
 *    (loads, tensor creation, file I/O) must not run concurrently on one env. A session
 *    is used by one thread at a time.
 */
#ifndef ONNXRUN_H
#define ONNXRUN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Windows: the library's build defines ONNXRUN_BUILDING and exports the API from the DLL;
 * programs using the DLL may define ONNXRUN_DLL to import it directly (needed by MSVC for
 * nothing but slightly faster calls); with neither, the import library's stubs or the static
 * library are linked. */
#if defined(_WIN32) && defined(ONNXRUN_BUILDING)
#define ONNXRUN_API __declspec(dllexport)
#elif defined(_WIN32) && defined(ONNXRUN_DLL)
#define ONNXRUN_API __declspec(dllimport)
#elif defined(_WIN32)
#define ONNXRUN_API
#else
#define ONNXRUN_API __attribute__((visibility("default")))
#endif

#define ONNXRUN_VERSION_MAJOR 0
#define ONNXRUN_VERSION_MINOR 1
#define ONNXRUN_VERSION_PATCH 0
#define ONNXRUN_VERSION_STRING "0.1.0"

/* Largest tensor rank onnxrun handles; larger ranks are rejected with a clear error. */
#define ONNXRUN_MAX_RANK 12

enum onnxrun_status {
	ONNXRUN_OK = 0,
	ONNXRUN_ERROR_INVALID_ARGUMENT = 1, /* the caller passed a bad argument */
	ONNXRUN_ERROR_OUT_OF_MEMORY = 2,    /* an allocation failed */
	ONNXRUN_ERROR_IO = 3,               /* a file could not be opened or read or written */
	ONNXRUN_ERROR_INVALID_MODEL = 4,    /* the model is malformed or breaks the spec */
	ONNXRUN_ERROR_UNSUPPORTED = 5,      /* valid ONNX that onnxrun does not implement */
	ONNXRUN_ERROR_INVALID_INPUT = 6,    /* an input tensor or tensor file is wrong */
	ONNXRUN_ERROR_LIMIT = 7,            /* a size or count limit was exceeded */
	ONNXRUN_ERROR_RUNTIME = 8,          /* an operator failed while running */
	ONNXRUN_ERROR_CANCELLED = 9,        /* a run was cancelled or passed its deadline */
};

/* A fixed English description of a status; never NULL. */
ONNXRUN_API const char *onnxrun_status_str(enum onnxrun_status status);

/* The library's version as "MAJOR.MINOR.PATCH". */
ONNXRUN_API const char *onnxrun_version(void);

/* Element types; the values equal ONNX TensorProto.DataType. */
enum onnxrun_dtype {
	ONNXRUN_DTYPE_UNDEFINED = 0,
	ONNXRUN_DTYPE_FLOAT = 1,
	ONNXRUN_DTYPE_UINT8 = 2,
	ONNXRUN_DTYPE_INT8 = 3,
	ONNXRUN_DTYPE_UINT16 = 4,
	ONNXRUN_DTYPE_INT16 = 5,
	ONNXRUN_DTYPE_INT32 = 6,
	ONNXRUN_DTYPE_INT64 = 7,
	ONNXRUN_DTYPE_STRING = 8,
	ONNXRUN_DTYPE_BOOL = 9,
	ONNXRUN_DTYPE_FLOAT16 = 10,
	ONNXRUN_DTYPE_DOUBLE = 11,
	ONNXRUN_DTYPE_UINT32 = 12,
	ONNXRUN_DTYPE_UINT64 = 13,
	ONNXRUN_DTYPE_COMPLEX64 = 14,
	ONNXRUN_DTYPE_COMPLEX128 = 15,
	ONNXRUN_DTYPE_BFLOAT16 = 16,
};

/* Lower-case ONNX name of a dtype ("float", "int64", ...); "undefined" for unknown values. */
ONNXRUN_API const char *onnxrun_dtype_name(enum onnxrun_dtype dtype);
/* Bytes per element (sizeof(struct onnxrun_string) for strings); 0 for unknown values. */
ONNXRUN_API size_t onnxrun_dtype_size(enum onnxrun_dtype dtype);

/* One element of a STRING tensor: bytes (may hold zero bytes) and their count. The tensor
 * owns `data`; it is NUL-terminated for convenience (data[size] == 0). */
struct onnxrun_string {
	char *data;
	size_t size;
};

/* ------------------------------------------------------------------------------------------
 * Environment: allocator, log callback, last error of env-level calls.
 */

/* Allocator hooks. alloc returns memory aligned to `align` (a power of two, <= 64) or NULL;
 * free receives the size that was asked for. Used for every allocation of the library. */
struct onnxrun_allocator {
	void *ctx;
	void *(*alloc)(void *ctx, size_t size, size_t align);
	void (*free)(void *ctx, void *ptr, size_t size);
};

enum onnxrun_log_level {
	ONNXRUN_LOG_ERROR = 0,
	ONNXRUN_LOG_WARNING = 1,
	ONNXRUN_LOG_INFO = 2,
};

typedef void (*onnxrun_log_fn)(void *ctx, enum onnxrun_log_level level, const char *message);

struct onnxrun_env;

/* Creates an environment. `allocator` may be NULL for malloc/free; it is copied.
 * Returns ONNXRUN_OK, ONNXRUN_ERROR_INVALID_ARGUMENT or ONNXRUN_ERROR_OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_env_create(const struct onnxrun_allocator *allocator,
                                                   struct onnxrun_env **out);
/* Frees the env. Every model, session and tensor created from it must be freed first. */
ONNXRUN_API void onnxrun_env_free(struct onnxrun_env *env);
/* Sets (or, with fn == NULL, removes) the log callback for warnings and information. */
ONNXRUN_API void onnxrun_env_set_log(struct onnxrun_env *env, onnxrun_log_fn fn, void *ctx);
/* The message of the last failed env-level call, "" if none. Borrowed until the next call. */
ONNXRUN_API const char *onnxrun_env_error(const struct onnxrun_env *env);

/* The memory cap used when none is set: 8 GiB. */
#define ONNXRUN_DEFAULT_MAX_MEMORY ((uint64_t)8 << 30)

/* Caps the memory that untrusted bytes can make onnxrun allocate. Sizes are computed from
 * the declared shapes and checked before anything is allocated; going over is
 * ONNXRUN_ERROR_LIMIT with a message giving the bytes needed and the cap. The env's cap
 * applies to:
 *  - the total bytes of one model's initializers and tensor attributes, at load;
 *  - each tensor decoded from a .pb or .npy file or buffer (files larger than the cap plus
 *    1 MiB are refused before they are read);
 *  - sessions that set no cap of their own (onnxrun_session_set_max_memory).
 * bytes == 0 restores the default, ONNXRUN_DEFAULT_MAX_MEMORY. Set it before sharing the
 * env between threads. Returns OK or INVALID_ARGUMENT (env NULL). */
ONNXRUN_API enum onnxrun_status onnxrun_env_set_max_memory(struct onnxrun_env *env, uint64_t bytes);

/* Whether files may be mapped instead of read (default: yes, enabled != 0).
 * onnxrun_model_load_file maps the model file while it parses it, and external-data
 * tensors of at least 64 KiB whose offset is a multiple of 64 stay mapped (copy-on-write,
 * never written back) for the model's lifetime instead of being copied, so a model's
 * external weights cost page cache, not heap. The price: truncating or rewriting a file
 * while it is mapped makes later reads of it fail with SIGBUS or see the new bytes; with
 * enabled == 0 every file is read into memory through the allocator and may then change
 * freely. Mapped bytes are not allocator memory but still count toward the memory cap.
 * Set it before loading. Returns OK or INVALID_ARGUMENT (env NULL). */
ONNXRUN_API enum onnxrun_status onnxrun_env_set_mmap(struct onnxrun_env *env, int enabled);

/* ------------------------------------------------------------------------------------------
 * Tensors.
 */

struct onnxrun_tensor;

/* Creates a tensor with zeroed data (empty strings for STRING). rank <= ONNXRUN_MAX_RANK,
 * dims >= 0. Returns OK, INVALID_ARGUMENT, LIMIT or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_create(struct onnxrun_env *env, enum onnxrun_dtype dtype,
                                                      int32_t rank, const int64_t *dims,
                                                      struct onnxrun_tensor **out);
/* Wraps caller memory without copying; `data` must hold exactly nbytes = numel * dtype size
 * bytes, stay valid and unchanged while the tensor is used, and is never freed by onnxrun.
 * STRING tensors cannot be wrapped. Returns OK, INVALID_ARGUMENT (also for an nbytes that
 * does not match), LIMIT or OUT_OF_MEMORY; messages in onnxrun_env_error(). */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_wrap(struct onnxrun_env *env, enum onnxrun_dtype dtype,
                                                    int32_t rank, const int64_t *dims, void *data,
                                                    size_t nbytes, struct onnxrun_tensor **out);
/* Frees a tensor the caller created or loaded (never one borrowed from a session). Owned
 * data and strings go with it; wrapped memory stays the caller's. NULL does nothing. */
ONNXRUN_API void onnxrun_tensor_free(struct onnxrun_tensor *tensor);

/* Getters: never fail; a NULL tensor gives UNDEFINED / 0 / NULL / "". Reading a tensor from
 * several threads is safe; writing its data while a session reads it is not. */
ONNXRUN_API enum onnxrun_dtype onnxrun_tensor_dtype(const struct onnxrun_tensor *tensor);
ONNXRUN_API int32_t onnxrun_tensor_rank(const struct onnxrun_tensor *tensor);
/* Borrowed array of rank dims, valid while the tensor lives. */
ONNXRUN_API const int64_t *onnxrun_tensor_dims(const struct onnxrun_tensor *tensor);
ONNXRUN_API int64_t onnxrun_tensor_numel(const struct onnxrun_tensor *tensor);
/* Element data (an array of struct onnxrun_string for STRING), 64-byte aligned when onnxrun
 * allocated it (16-byte on bare metal); NULL when numel == 0. Writable for tensors the caller owns; for a session's
 * outputs, read only. Valid while the tensor lives. */
ONNXRUN_API void *onnxrun_tensor_data(const struct onnxrun_tensor *tensor);
ONNXRUN_API size_t onnxrun_tensor_nbytes(const struct onnxrun_tensor *tensor);
/* The tensor's name (from a .pb file, or the graph value it came from), "" if none. */
ONNXRUN_API const char *onnxrun_tensor_name(const struct onnxrun_tensor *tensor);
/* Copies name. Returns OK, INVALID_ARGUMENT (NULL) or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_set_name(struct onnxrun_tensor *tensor, const char *name);
/* Copies `size` bytes into element i of a STRING tensor the caller created. Returns OK,
 * INVALID_ARGUMENT (not a STRING tensor, i out of range, NULL data with size > 0) or
 * OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_set_string(struct onnxrun_tensor *tensor, int64_t i,
                                                          const char *data, size_t size);

/* Tensor files. A .pb file is one serialized ONNX TensorProto (any dtype, raw or typed
 * fields; raw_data is little-endian, as onnx.proto says); a .npy file is NumPy format
 * 1.0-3.0, C order, either byte order ('<' or '>'). Tensors in memory are always in the
 * host's byte order: loading converts, and saving writes .pb raw_data little-endian and
 * .npy in the host's order with the matching label ('<f4' on x86/ARM, '>f4' on s390x).
 * Errors name the file and go to onnxrun_env_error(). Return OK, IO, INVALID_INPUT,
 * UNSUPPORTED, LIMIT, OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_load_pb(struct onnxrun_env *env, const char *path,
                                                       struct onnxrun_tensor **out);
ONNXRUN_API enum onnxrun_status onnxrun_tensor_decode_pb(struct onnxrun_env *env, const void *data,
                                                         size_t size, struct onnxrun_tensor **out);
/* Writes raw_data (or string_data for STRING) with the tensor's name; overwrites path.
 * Returns OK, INVALID_ARGUMENT, IO or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_save_pb(struct onnxrun_env *env,
                                                       const struct onnxrun_tensor *tensor,
                                                       const char *path);
ONNXRUN_API enum onnxrun_status onnxrun_tensor_load_npy(struct onnxrun_env *env, const char *path,
                                                        struct onnxrun_tensor **out);
ONNXRUN_API enum onnxrun_status onnxrun_tensor_decode_npy(struct onnxrun_env *env, const void *data,
                                                          size_t size, struct onnxrun_tensor **out);
/* STRING and BFLOAT16 have no .npy form: UNSUPPORTED. */
ONNXRUN_API enum onnxrun_status onnxrun_tensor_save_npy(struct onnxrun_env *env,
                                                        const struct onnxrun_tensor *tensor,
                                                        const char *path);

/* ------------------------------------------------------------------------------------------
 * Models: loaded, validated, ordered and shape-inferred once; immutable afterwards.
 */

struct onnxrun_model;

/* Loads a model file; external data is read relative to the file's folder. Errors name the
 * file and, where one is at fault, the node. Returns OK, IO, INVALID_MODEL, UNSUPPORTED,
 * LIMIT, OUT_OF_MEMORY or INVALID_ARGUMENT. */
ONNXRUN_API enum onnxrun_status onnxrun_model_load_file(struct onnxrun_env *env, const char *path,
                                                        struct onnxrun_model **out);
/* Loads from a caller's buffer, which may be freed once this returns. base_dir is the folder
 * external data is read from; NULL rejects models with external data. */
ONNXRUN_API enum onnxrun_status onnxrun_model_load_buffer(struct onnxrun_env *env, const void *data,
                                                          size_t size, const char *base_dir,
                                                          struct onnxrun_model **out);
/* Loads from caller bytes that stay valid and unchanged for the model's lifetime (e.g. a
 * const array in a microcontroller's flash, as onnxrun --c-array writes it): float32
 * initializers stored as raw_data are read where they are, never copied, when they sit at
 * a 4-byte-aligned address (on 32-bit Arm; anywhere elsewhere); nothing else of the buffer
 * is kept. To get them aligned, align the buffer to 64 bytes (onnxrun --c-array does) and
 * keep the model as onnx.save writes it (the writer places raw_data where it falls;
 * unaligned ones are copied, costing RAM, not correctness). External data is refused
 * (INVALID_MODEL; UNSUPPORTED on bare metal). Same statuses as onnxrun_model_load_buffer. */
ONNXRUN_API enum onnxrun_status onnxrun_model_load_borrowed(struct onnxrun_env *env, const void *data,
                                                            size_t size, struct onnxrun_model **out);
/* Frees a model; every session created from it must be freed first. NULL does nothing. */
ONNXRUN_API void onnxrun_model_free(struct onnxrun_model *model);

/* A dimension: value >= 0 when known; otherwise value == -1 and param names the symbolic
 * dim (dim_param) or is NULL when nothing is known. */
struct onnxrun_dim {
	int64_t value;
	const char *param;
};

/* Type and shape of a value. rank == -1 when the rank is unknown. Borrowed pointers. */
struct onnxrun_value_info {
	const char *name;
	enum onnxrun_dtype dtype;
	int32_t rank;
	const struct onnxrun_dim *dims;
};

struct onnxrun_node_info {
	const char *name; /* "" when the node has none */
	const char *op_type;
	const char *domain; /* "" for the default ONNX domain */
	int64_t since_version; /* the version of the op implementation chosen */
	size_t input_count;
	const char *const *inputs; /* "" for an absent optional input */
	size_t output_count;
	const char *const *outputs;
};

/* Model queries: read only, safe from any thread; borrowed strings and arrays live as long
 * as the model. Functions taking an index return INVALID_ARGUMENT when it is out of range
 * (or a pointer is NULL) and write nothing then. */
ONNXRUN_API int64_t onnxrun_model_ir_version(const struct onnxrun_model *model);
ONNXRUN_API size_t onnxrun_model_opset_count(const struct onnxrun_model *model);
/* Opset import i: domain ("" for ai.onnx) and version. */
ONNXRUN_API enum onnxrun_status onnxrun_model_opset(const struct onnxrun_model *model, size_t i,
                                                    const char **domain, int64_t *version);
/* Graph inputs that must be fed (inputs without an initializer), in graph order. */
ONNXRUN_API size_t onnxrun_model_input_count(const struct onnxrun_model *model);
ONNXRUN_API enum onnxrun_status onnxrun_model_input_info(const struct onnxrun_model *model, size_t i,
                                                         struct onnxrun_value_info *out);
ONNXRUN_API size_t onnxrun_model_output_count(const struct onnxrun_model *model);
ONNXRUN_API enum onnxrun_status onnxrun_model_output_info(const struct onnxrun_model *model, size_t i,
                                                          struct onnxrun_value_info *out);
/* Nodes in execution order. */
ONNXRUN_API size_t onnxrun_model_node_count(const struct onnxrun_model *model);
ONNXRUN_API enum onnxrun_status onnxrun_model_node_info(const struct onnxrun_model *model, size_t i,
                                                        struct onnxrun_node_info *out);
/* Type and shape inferred at load (symbolic dims by name) of any value by name. */
ONNXRUN_API enum onnxrun_status onnxrun_model_value_info(const struct onnxrun_model *model,
                                                         const char *name,
                                                         struct onnxrun_value_info *out);

/* ------------------------------------------------------------------------------------------
 * Inspecting models that may not run: which nodes onnxrun does not implement, as data.
 *
 * onnxrun_model_load_* fails with UNSUPPORTED when some node has no implementation (no
 * built-in or registered op for its domain, op type and the model's opset), and its message
 * lists the nodes but is cut at about 1 KiB. An inspection loads the same model with the
 * same checks (parse, structure, order, shape inference) but keeps those nodes, so that
 * tools can list them completely and still describe the graph.
 */

/* One node without an implementation. Borrowed strings, valid while the model lives. */
struct onnxrun_unsupported_info {
	const char *node_name; /* "" when the node has none */
	const char *op_type;
	const char *domain;    /* "" for the default ONNX domain (ai.onnx) */
	int64_t opset;         /* the model's opset import for that domain */
	size_t node_index;     /* the node's index for onnxrun_model_node_info (execution order) */
};

/* Loads a model for queries only, like onnxrun_model_load_file / _load_buffer (same
 * arguments, external data, memory cap and errors) except that nodes onnxrun has no
 * implementation for are not an error. On the returned model:
 *  - every model query works; onnxrun_model_node_info gives since_version 0 for a node
 *    without an implementation, and the values it computes get their declared type where
 *    the model declares one, else the dtype of the node's first present input (a guess) and an
 *    unknown shape; the nodes after it are inferred from those guesses, and one whose op
 *    rejects them gets guessed outputs the same way instead of failing the inspection;
 *  - onnxrun_model_unsupported_count/_unsupported list the nodes without an implementation;
 *  - it never runs: no op's init is called (weights are not pre-packed), and
 *    onnxrun_session_prepare and onnxrun_session_run on a session created from it fail with
 *    INVALID_ARGUMENT (a model with no nodes, which has nothing to run, is the exception);
 *  - the caller owns it and frees it with onnxrun_model_free (sessions first); it borrows
 *    nothing from the caller (data may be freed once this returns).
 * Threads: like a load, it writes the env's error message, so it must not run concurrently
 * with other env-level calls on the same env; the returned model may then be queried from
 * any number of threads. Custom ops registered on env count as implementations.
 * Returns OK, IO, INVALID_MODEL, UNSUPPORTED (only for constructs the loader itself rejects:
 * sparse initializers, model-local functions, graph attributes...), LIMIT, OUT_OF_MEMORY or
 * INVALID_ARGUMENT; messages in onnxrun_env_error(), *out written only on OK. */
ONNXRUN_API enum onnxrun_status onnxrun_model_inspect_file(struct onnxrun_env *env, const char *path,
                                                           struct onnxrun_model **out);
ONNXRUN_API enum onnxrun_status onnxrun_model_inspect_buffer(struct onnxrun_env *env, const void *data,
                                                             size_t size, const char *base_dir,
                                                             struct onnxrun_model **out);
/* Number of nodes without an implementation: 0 for a model that onnxrun_model_load_*
 * loaded (and for NULL). Never fails; read only, safe from any thread. */
ONNXRUN_API size_t onnxrun_model_unsupported_count(const struct onnxrun_model *model);
/* Node i of that list; the list is in the order of the nodes in the file (the order the
 * load error names them), each node once. Returns OK, or INVALID_ARGUMENT (i out of range,
 * a NULL pointer) and writes nothing. Read only, safe from any thread. */
ONNXRUN_API enum onnxrun_status onnxrun_model_unsupported(const struct onnxrun_model *model, size_t i,
                                                          struct onnxrun_unsupported_info *out);

/* ------------------------------------------------------------------------------------------
 * Sessions: the mutable run state of one model (inputs, outputs, workspace).
 */

struct onnxrun_session;

/* Creates a session (one thread, nothing bound). Many sessions may share one model, each
 * used by its own thread. Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_session_create(const struct onnxrun_model *model,
                                                       struct onnxrun_session **out);
/* Frees the session and its outputs (borrowed output pointers die). NULL does nothing. */
ONNXRUN_API void onnxrun_session_free(struct onnxrun_session *session);
/* The message of the session's last failed call, "" if none. */
ONNXRUN_API const char *onnxrun_session_error(const struct onnxrun_session *session);
/* Threads used by run (>= 1; INVALID_ARGUMENT otherwise). Results do not depend on it. */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_threads(struct onnxrun_session *session, int threads);
/* Caps the bytes prepare (and so run) may allocate for this session: the arena of
 * intermediates plus the outputs, computed from the inferred shapes before anything is
 * allocated. More is ONNXRUN_ERROR_LIMIT, with a message giving the bytes needed, the cap
 * and the largest tensor. bytes == 0 (the default) uses the env's cap
 * (onnxrun_env_set_max_memory, itself ONNXRUN_DEFAULT_MAX_MEMORY unless set). Caller-owned
 * input tensors are not counted. Returns OK or INVALID_ARGUMENT (session NULL). */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_max_memory(struct onnxrun_session *session,
                                                               uint64_t bytes);
/* Binds a symbolic dim (a dim_param of the model's inputs) to a value >= 0; inputs must then
 * agree with it. Returns OK, INVALID_ARGUMENT (unknown name, negative value) or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_session_bind_dim(struct onnxrun_session *session,
                                                         const char *name, int64_t value);
/* Binds input i (as in onnxrun_model_input_info). The tensor is borrowed, not copied: it
 * must stay valid until the last run that uses it. Checked against the declared dtype and
 * shape: INVALID_INPUT with a message naming the input. */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_input(struct onnxrun_session *session, size_t i,
                                                          const struct onnxrun_tensor *tensor);
/* Binds by name; also accepts initializers that are graph inputs (overriding the default). */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_input_by_name(struct onnxrun_session *session,
                                                                  const char *name,
                                                                  const struct onnxrun_tensor *tensor);
/* Infers concrete shapes from the bound inputs (unbound inputs: their declared shape with
 * bound dims) and plans and allocates memory, without running. Run calls it itself when an
 * input's shape changed. Returns OK, INVALID_INPUT (a shape is unknown or inconsistent),
 * INVALID_MODEL (an op rejects the shapes), LIMIT or OUT_OF_MEMORY; message in
 * onnxrun_session_error(). */
ONNXRUN_API enum onnxrun_status onnxrun_session_prepare(struct onnxrun_session *session);
/* Runs the graph. Every required input must be bound (INVALID_INPUT names a missing one).
 * Returns OK or any status of prepare, or the failing op's (RUNTIME, OUT_OF_MEMORY, ...) with
 * a message naming the node. Earlier outputs are invalid after a failed run. */
ONNXRUN_API enum onnxrun_status onnxrun_session_run(struct onnxrun_session *session);
/* Output i of the last successful run; borrowed until the next run, prepare or free.
 * INVALID_ARGUMENT when i is out of range or nothing has run. */
ONNXRUN_API enum onnxrun_status onnxrun_session_output(const struct onnxrun_session *session, size_t i,
                                                       const struct onnxrun_tensor **out);
/* Per-node timing. set_profiling(1) starts (or restarts) summing each node's compute time
 * over successful runs; 0 stops and forgets. Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_profiling(struct onnxrun_session *session, int enable);
/* Node i's (execution order) summed compute time in ns and the number of runs summed.
 * INVALID_ARGUMENT when profiling is off or i is out of range. */
ONNXRUN_API enum onnxrun_status onnxrun_session_node_time(const struct onnxrun_session *session, size_t i,
                                                          uint64_t *total_ns, uint64_t *runs);
/* Concrete type and shape of any value after prepare or run (dims borrowed until the next
 * call on the session). INVALID_ARGUMENT for an unknown name or before prepare. */
ONNXRUN_API enum onnxrun_status onnxrun_session_value_info(const struct onnxrun_session *session,
                                                           const char *name,
                                                           struct onnxrun_value_info *out);
/* Bytes planned for the arena of intermediates plus the outputs, after prepare or run;
 * INVALID_ARGUMENT before. */
ONNXRUN_API enum onnxrun_status onnxrun_session_planned_bytes(const struct onnxrun_session *session,
                                                              uint64_t *out);

/* ------------------------------------------------------------------------------------------
 * Operators. Built-in and custom ops use the same struct; custom ops are registered on an env
 * before loading models with it and are found by (domain, op_type, since_version) like the
 * built-ins: the highest since_version <= the model's opset for the domain. Custom ops are
 * searched first, so one may override a built-in.
 */

/* A possibly symbolic shape: rank -1 when unknown; dims[i] -1 when unknown, and then
 * params[i] names the symbolic dim or is NULL. */
struct onnxrun_shape {
	int32_t rank;
	int64_t dims[ONNXRUN_MAX_RANK];
	const char *params[ONNXRUN_MAX_RANK];
};

/* dtype UNDEFINED when unknown, or for an absent optional input. */
struct onnxrun_type {
	enum onnxrun_dtype dtype;
	struct onnxrun_shape shape;
};

/* The node an op callback is working on (valid during the callback only). */
struct onnxrun_op_context;

struct onnxrun_op {
	const char *domain;  /* "" (or "ai.onnx") for the default domain; copied at registration */
	const char *op_type; /* copied at registration */
	int since_version;
	/* Checks attributes and input types and sets each output's dtype and shape. Called at
	 * load with possibly symbolic shapes (propagate what is known; never fail on unknowns)
	 * and again at run time with concrete ones. Outputs arrive with dtype UNDEFINED and rank
	 * -1. Fail with onnxrun_op_fail (INVALID_MODEL for a node that breaks the op's rules). */
	enum onnxrun_status (*infer)(struct onnxrun_op_context *ctx, const struct onnxrun_type *inputs,
	                             size_t n_inputs, struct onnxrun_type *outputs, size_t n_outputs);
	/* Computes the outputs, which are allocated with the shapes infer gave (STRING outputs
	 * hold empty strings). Absent optional inputs and outputs are NULL. May be called from
	 * several threads at once for different sessions: keep per-call state on the stack. */
	enum onnxrun_status (*compute)(struct onnxrun_op_context *ctx, const struct onnxrun_tensor *const *inputs,
	                               size_t n_inputs, struct onnxrun_tensor *const *outputs, size_t n_outputs);
	/* Optional: called once per node after the model is inferred, e.g. to pre-pack constant
	 * weights (onnxrun_op_constant_input). *state is then given to compute (onnxrun_op_state)
	 * and to fini when the model is freed. */
	enum onnxrun_status (*init)(struct onnxrun_op_context *ctx, void **state);
	void (*fini)(void *user_data, void *state);
	/* Handed to the callbacks (onnxrun_op_user_data); user_data_free, if set, is called with
	 * it when the env is freed. */
	void *user_data;
	void (*user_data_free)(void *user_data);
};

/* Registers a custom op (the struct is copied). Register before loading the models that use
 * it; the env must outlive them. Returns OK, INVALID_ARGUMENT (NULL fields, since_version <
 * 1, or the same domain/op_type/since_version registered twice) or OUT_OF_MEMORY. */
ONNXRUN_API enum onnxrun_status onnxrun_env_register_op(struct onnxrun_env *env, const struct onnxrun_op *op);

/* Accessors for op callbacks. Attribute getters return OK with `def` when the attribute is
 * absent, and INVALID_MODEL (with a message naming node and attribute) when it has another
 * type. Borrowed pointers stay valid while the model lives. */
ONNXRUN_API const char *onnxrun_op_node_name(const struct onnxrun_op_context *ctx);
ONNXRUN_API void *onnxrun_op_user_data(const struct onnxrun_op_context *ctx);
ONNXRUN_API void *onnxrun_op_state(const struct onnxrun_op_context *ctx);
ONNXRUN_API int onnxrun_op_threads(const struct onnxrun_op_context *ctx);
ONNXRUN_API int onnxrun_op_has_attr(const struct onnxrun_op_context *ctx, const char *name);
ONNXRUN_API enum onnxrun_status onnxrun_op_attr_int(struct onnxrun_op_context *ctx, const char *name,
                                                    int64_t def, int64_t *out);
ONNXRUN_API enum onnxrun_status onnxrun_op_attr_float(struct onnxrun_op_context *ctx, const char *name,
                                                      float def, float *out);
ONNXRUN_API enum onnxrun_status onnxrun_op_attr_string(struct onnxrun_op_context *ctx, const char *name,
                                                       const char *def, const char **out);
/* *out NULL and *count 0 when absent. */
ONNXRUN_API enum onnxrun_status onnxrun_op_attr_ints(struct onnxrun_op_context *ctx, const char *name,
                                                     const int64_t **out, size_t *count);
ONNXRUN_API enum onnxrun_status onnxrun_op_attr_floats(struct onnxrun_op_context *ctx, const char *name,
                                                       const float **out, size_t *count);
/* The constant (initializer) behind input i, or NULL when it is fed at run time (in init). */
ONNXRUN_API const struct onnxrun_tensor *onnxrun_op_constant_input(const struct onnxrun_op_context *ctx, size_t i);
/* Records "node '<name>' (<op_type>): <message>" as the error and returns status. */
ONNXRUN_API enum onnxrun_status onnxrun_op_fail(struct onnxrun_op_context *ctx, enum onnxrun_status status,
                                                const char *fmt, ...)
#if defined(__MINGW32__)
	__attribute__((format(gnu_printf, 3, 4))) /* the library formats with C99 printf */
#elif defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* ------------------------------------------------------------------------------------------
 * Stopping runs: cancellation and deadlines.
 *
 * A run checks for a stop before each node and, inside the ops, before each work item (of
 * the built-in kernels, and of custom ops through onnxrun_op_parallel_for). An item is not
 * interrupted, so its size bounds the latency: on real layer shapes a run thread does at
 * most about 2 ms of work between checks, but a model can ask for much larger items (see
 * docs/embedding.md). Once a stop is seen, no further item starts, the items already
 * running finish, what the op computed is discarded, and run returns
 * ONNXRUN_ERROR_CANCELLED with a message naming the node it stopped in. The session stays
 * usable: its outputs are invalid (bound outputs, onnxrun_session_set_output, hold partial
 * results) and the next run computes everything again. Load, prepare and the copies of
 * onnxrun_session_set_output are not interrupted.
 */

/* Asks the session's run to stop. Safe to call from any thread while another thread runs
 * the session, and async-signal-safe (a SIGINT handler may call it); the session must stay
 * allocated while it is called. The request stays pending until a run consumes it: the run
 * in progress stops, or, when none is, the next run returns ONNXRUN_ERROR_CANCELLED at once.
 * A run that returns ONNXRUN_ERROR_CANCELLED clears the request (requests made while it
 * ran are merged into it). NULL does nothing. */
ONNXRUN_API void onnxrun_session_cancel(struct onnxrun_session *session);
/* Withdraws a pending cancel request that no run has consumed (e.g. one from a watchdog
 * that fired just after the run it guarded returned). Same rules as onnxrun_session_cancel:
 * any thread, async-signal-safe. NULL does nothing. */
ONNXRUN_API void onnxrun_session_clear_cancel(struct onnxrun_session *session);
/* Gives each following run a time budget: a run still going budget_us microseconds after
 * it started (CLOCK_MONOTONIC; prepare included) stops with ONNXRUN_ERROR_CANCELLED and the
 * message "node '<name>' (<op_type>): deadline of <budget> s exceeded ...". 0 (the default)
 * removes the budget. Call it between runs, from the thread that runs the session. Returns
 * OK or INVALID_ARGUMENT (session NULL); on a platform without a clock (bare metal before
 * onnxrun_set_clock) a budget is UNSUPPORTED. */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_deadline(struct onnxrun_session *session,
                                                             uint64_t budget_us);

/* ------------------------------------------------------------------------------------------
 * Outputs in the caller's memory.
 */

/* Binds a caller tensor (e.g. from onnxrun_tensor_wrap around a frame buffer) as output i
 * (as in onnxrun_model_output_info): the node that computes it writes straight into the
 * tensor's data, without a copy, and later nodes that read the value read it there. An
 * output that the graph takes straight from an input or an initializer is copied into its
 * tensor at the end of a run (nothing computes it). The tensor is borrowed: it must stay valid
 * until it is unbound (tensor NULL) or the session is freed, and its memory must not
 * overlap an input's or another bound output's. After a successful run,
 * onnxrun_session_output(i) returns this tensor; after a failed or cancelled one, its
 * contents are unspecified.
 * The dtype and shape must equal the ones inferred for the output: checked now against the
 * model's (possibly symbolic) shape, and again at prepare (and run) against the concrete
 * one; a mismatch is ONNXRUN_ERROR_INVALID_ARGUMENT with a message naming the output, the
 * expected and the bound type. STRING outputs cannot be bound. Binding or unbinding makes
 * the next run prepare again; replacing a bound tensor by another of the same type does
 * not. Bound outputs are not counted in the session's memory cap. Use the session from one
 * thread. Returns OK or INVALID_ARGUMENT. */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_output(struct onnxrun_session *session, size_t i,
                                                           struct onnxrun_tensor *tensor);

/* ------------------------------------------------------------------------------------------
 * Shared thread pools.
 *
 * By default each session with threads > 1 owns a pool of worker threads. A shared pool lets
 * many sessions use one set of threads: sessions run on it from their own threads at the
 * same time, and the pool runs one op at a time for them, in the order they asked (a
 * session waiting for it still reacts to cancel and deadlines within about a millisecond).
 * Queueing whole ops, rather than running a busy pool's callers inline on their own
 * threads, keeps the CPU use of every session together at the pool's thread count.
 * Determinism is unchanged: work is split by the op into the same items whatever thread
 * runs them, so results are bitwise identical with a shared pool, a private one, any
 * thread count and any number of concurrent sessions.
 */

struct onnxrun_pool;

/* Creates a pool that runs each op on `threads` threads (1..4096): the thread of the
 * session that runs the op plus threads - 1 workers started now, which block every signal.
 * The env must outlive the pool. Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY (message in
 * onnxrun_env_error()). */
ONNXRUN_API enum onnxrun_status onnxrun_pool_create(struct onnxrun_env *env, int threads,
                                                    struct onnxrun_pool **out);
/* Releases the caller's reference: the workers stop once no session uses the pool any
 * more (they are joined by whichever call drops the last reference: this one, or the
 * onnxrun_session_free / onnxrun_session_set_pool that detaches the last session). No
 * thread may be inside onnxrun_pool_create / set_pool on this pool. NULL does nothing. */
ONNXRUN_API void onnxrun_pool_free(struct onnxrun_pool *pool);
/* Threads per op of the pool (0 for NULL). */
ONNXRUN_API int onnxrun_pool_threads(const struct onnxrun_pool *pool);
/* Makes the session run its ops on pool (the session takes a reference) instead of its own
 * threads, whose workers are stopped; onnxrun_op_threads is then the pool's thread count.
 * pool NULL goes back to the session's own threads (onnxrun_session_set_threads; threads
 * set while a pool is attached take effect then). Call it between runs, from the thread
 * that uses the session. Returns OK, INVALID_ARGUMENT (session NULL) or OUT_OF_MEMORY
 * (starting the session's own threads again). */
ONNXRUN_API enum onnxrun_status onnxrun_session_set_pool(struct onnxrun_session *session,
                                                         struct onnxrun_pool *pool);

/* ------------------------------------------------------------------------------------------
 * Parallel work in ops. Built-in and custom ops share the session's threads the same way.
 */

/* A range of work items [begin, end) run on thread `thread` (0 .. onnxrun_op_threads - 1;
 * use it only to pick per-thread scratch). */
typedef void (*onnxrun_parallel_fn)(void *arg, int thread, int64_t begin, int64_t end);

/* Runs fn over items [0, n) on the session's threads (its own pool or a shared one; inline
 * when it has one thread) and returns when they are done. The split is static: thread t
 * starts with items [n*t/T, n*(t+1)/T) and threads that finish early take unclaimed items of
 * the others, one item per call; with one thread, consecutive items may be grouped into one
 * call. Results stay bitwise identical for every thread count, pool and concurrency as long
 * as each item computes the same values whichever thread runs it and however items are
 * grouped (write disjoint outputs, use per-thread scratch, no shared accumulators). Before
 * each item it checks for a cancel or deadline; then no further item starts and it returns
 * ONNXRUN_ERROR_CANCELLED, which compute should return at once (the outputs are discarded:
 * items must not rely on other items having run for memory safety). Called from inside an
 * item, it runs the items inline on that thread. Returns OK, CANCELLED or INVALID_ARGUMENT
 * (ctx or fn NULL, n < 0). Call it from compute only. */
ONNXRUN_API enum onnxrun_status onnxrun_op_parallel_for(struct onnxrun_op_context *ctx, int64_t n,
                                                        onnxrun_parallel_fn fn, void *arg);
/* Nonzero once the current run must stop (cancel or deadline): an op with a long serial
 * loop may check it and return ONNXRUN_ERROR_CANCELLED. 0 outside compute. */
ONNXRUN_API int onnxrun_op_should_stop(struct onnxrun_op_context *ctx);

/* ------------------------------------------------------------------------------------------
 * Microcontrollers (bare-metal builds, cmake/toolchains/cortex-m*.cmake; README,
 * Microcontrollers). There is no operating system there: one thread (threads > 1 runs on
 * one), no files (loading from a path, saving tensors and external data are UNSUPPORTED),
 * no heap (give onnxrun_env_create an allocator, e.g. an arena below), and no clock unless
 * the application sets one.
 */

/* Sets the clock the library measures deadlines and profiling with on a platform that has
 * none (bare metal): now_ns(ctx) returns monotonic nanoseconds (e.g. from SysTick or the
 * DWT cycle counter). NULL removes it. Without a clock, onnxrun_session_set_deadline is
 * UNSUPPORTED and profiled node times are 0; cancelling works either way. Call it before
 * creating sessions, not while a session runs. Returns OK, or UNSUPPORTED on platforms that
 * have their own monotonic clock (POSIX, Windows), which is then kept. */
ONNXRUN_API enum onnxrun_status onnxrun_set_clock(uint64_t (*now_ns)(void *ctx), void *ctx);

/* An allocator over one caller buffer (any platform): fills *alloc so that every allocation
 * of an env created with it (onnxrun_env_create(alloc, &env)) comes from buf[0, size): the
 * model, its initializers (unless borrowed from the model's bytes, onnxrun_model_load_borrowed),
 * sessions with their planned tensors and the ops' workspace, tensors, and protobuf-c's
 * parse during a load. First fit with neighbours merged on free; no locking (one env, one
 * thread at a time). The buffer must outlive the env and everything made from it; 8-byte
 * alignment is enough. Out of room is ONNXRUN_ERROR_OUT_OF_MEMORY from the call that ran
 * out. Returns OK, or INVALID_ARGUMENT (NULL, or size too small to hold anything). */
ONNXRUN_API enum onnxrun_status onnxrun_arena_init(struct onnxrun_allocator *alloc, void *buf, size_t size);
/* The most bytes of the buffer in use at once so far, counted from buf: a buffer of this
 * size would have served the same calls. 0 for an allocator that is not an arena. */
ONNXRUN_API size_t onnxrun_arena_high_water(const struct onnxrun_allocator *alloc);
/* Bytes in use now, block headers included. */
ONNXRUN_API size_t onnxrun_arena_used(const struct onnxrun_allocator *alloc);

#ifdef __cplusplus
}
#endif

#endif /* ONNXRUN_H */
