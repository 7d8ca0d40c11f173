/*
 * loader.h - .onnx bytes and TensorProto bytes -> onnxrun IR. The only place protobuf-c
 * types are used; nothing here exposes them.
 */
#ifndef ONNXRUN_LOADER_H
#define ONNXRUN_LOADER_H

#include "../runtime/runtime.h"

/* Parses a serialized ModelProto into m (zeroed by the caller, m->env set): opsets, values,
 * nodes in file order with attributes, initializers decoded, declared types. base_dir is the
 * folder for external data (NULL: external data is an error). Does not order or infer. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__load_model_proto(struct onnxrun_model *m, const void *data,
                                                              size_t size, const char *base_dir,
                                                              struct onnxrun__err *err);

/* Decodes one serialized TensorProto (a .pb tensor file) into a new tensor with its name.
 * External data is rejected here (no folder). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_pb_decode(const struct onnxrun_env *env,
                                                              const void *data, size_t size,
                                                              struct onnxrun__err *err,
                                                              struct onnxrun_tensor **out);
/* Serializes a tensor as a TensorProto (dims, data_type, name, raw_data or string_data).
 * *out is allocated with onnxrun__malloc. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__tensor_pb_encode(const struct onnxrun_env *env,
                                                              const struct onnxrun_tensor *t,
                                                              struct onnxrun__err *err,
                                                              uint8_t **out, size_t *out_size);

#endif
