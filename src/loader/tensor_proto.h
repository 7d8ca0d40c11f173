/*
 * tensor_proto.h - ONNX TensorProto <-> onnxrun tensor, inside the loader. Includes the
 * generated protobuf-c header, so only src/loader (and tests) include this file.
 */
#ifndef ONNXRUN_TENSOR_PROTO_H
#define ONNXRUN_TENSOR_PROTO_H

#include <protobuf-c/protobuf-c.h>

#include "../runtime/runtime.h"
#include "onnx.pb-c.h"

/* Decodes a TensorProto of any onnxrun dtype into a new tensor named after it: from
 * raw_data (little-endian), the typed field of its dtype, string_data, or external data
 * (data_location EXTERNAL; read relative to base_dir, which must then be non-NULL, and
 * never from outside it). Sizes are checked before anything large is allocated.
 * Messages start with "tensor '<name>': ". Returns OK, INVALID_MODEL (malformed content),
 * UNSUPPORTED (segments, data types newer than onnxrun), LIMIT (sizes that overflow or a
 * rank above ONNXRUN_MAX_RANK), IO (unreadable external file) or OUT_OF_MEMORY. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_from_proto(const struct onnxrun_env *env,
                                                               const Onnx__TensorProto *tp,
                                                               const char *base_dir,
                                                               struct onnxrun__err *err,
                                                               struct onnxrun_tensor **out);

/* Bytes of tensor data charged so far against a cap (the env's max memory): the tensors of
 * one model share one budget. */
struct onnxrun__mem_budget {
	uint64_t used;
	uint64_t cap;
};

/* onnxrun__tensor_from_proto charging the tensor's bytes (elements, plus string bytes) to
 * *budget before allocating: LIMIT when they do not fit. The plain call above uses a fresh
 * budget with the env's cap. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_from_proto_budget(const struct onnxrun_env *env,
                                                                      const Onnx__TensorProto *tp,
                                                                      const char *base_dir,
                                                                      struct onnxrun__mem_budget *budget,
                                                                      struct onnxrun__err *err,
                                                                      struct onnxrun_tensor **out);

/* onnxrun__tensor_from_proto_budget that may take tp's raw_data block instead of copying
 * it (then tp->raw_data becomes empty): tp must have been unpacked with an
 * onnxrun__pb_allocator over the same env, so the block is an onnxrun__malloc block. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_from_proto_take(const struct onnxrun_env *env,
                                                                    Onnx__TensorProto *tp,
                                                                    const char *base_dir,
                                                                    struct onnxrun__mem_budget *budget,
                                                                    struct onnxrun__err *err,
                                                                    struct onnxrun_tensor **out);

/* onnxrun__tensor_from_proto_budget that leaves a float32 tensor's raw_data where it is,
 * as the tensor's pending bytes (runtime.h); they must stay valid until the load ends.
 * Other dtypes are copied. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_from_proto_borrow(const struct onnxrun_env *env,
                                                                      const Onnx__TensorProto *tp,
                                                                      const char *base_dir,
                                                                      struct onnxrun__mem_budget *budget,
                                                                      struct onnxrun__err *err,
                                                                      struct onnxrun_tensor **out);

/* The raw_data of initializer `initializer` (its index in GraphProto.initializer), left
 * out of a model by onnxrun__strip_raw: bytes inside the original model buffer. */
struct onnxrun__raw_slice {
	size_t initializer;
	const uint8_t *data;
	size_t len;
};

/* A model rewritten without its large float32 raw_data (bytes NULL: nothing was left out,
 * parse the original). Slices are in initializer order. */
struct onnxrun__stripped {
	uint8_t *bytes;
	size_t size;
	struct onnxrun__raw_slice *slices;
	size_t n_slices;
};

/* Rewrites the serialized ModelProto data[0..size) so that the raw_data of every main-graph
 * initializer with data_type FLOAT and at least min_len bytes is empty, recording where
 * the bytes were. Fails only for lack of memory; input it does not fully understand is left
 * alone (out->bytes NULL) for protobuf-c to parse or reject. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__strip_raw(const struct onnxrun_env *env, const void *data,
                                                       size_t size, size_t min_len,
                                                       struct onnxrun__stripped *out,
                                                       struct onnxrun__err *err);
ONNXRUN__HIDDEN void onnxrun__stripped_free(const struct onnxrun_env *env, struct onnxrun__stripped *s);

/* A protobuf-c allocator over the env's (for onnx__*__unpack / __free_unpacked): pass
 * &a.base. `oom` becomes true when an allocation failed, which tells an unpack that failed
 * for lack of memory from one that failed on malformed bytes. */
struct onnxrun__pb_allocator {
	ProtobufCAllocator base;
	const struct onnxrun_env *env;
	bool oom;
};
ONNXRUN__HIDDEN void onnxrun__pb_allocator_init(struct onnxrun__pb_allocator *a,
                                                const struct onnxrun_env *env);

#endif
