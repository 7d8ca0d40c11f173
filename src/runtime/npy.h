/*
 * npy.h - NumPy .npy images <-> tensors (src/runtime/npy.c). The file layer
 * (tensor_files.c) reads and writes the bytes and names the file in messages.
 */
#ifndef ONNXRUN_NPY_H
#define ONNXRUN_NPY_H

#include "runtime.h"

/* Decodes a whole .npy image (format 1.0, 2.0 or 3.0; numeric dtypes in either byte order,
 * converted to the host's; C order) into a new unnamed tensor. Returns OK, INVALID_INPUT
 * (bad magic, truncated, malformed header, data size mismatch), UNSUPPORTED (Fortran order,
 * object/string/structured dtypes, other versions), LIMIT or OUT_OF_MEMORY. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__npy_decode(const struct onnxrun_env *env, const void *data,
                                                        size_t size, struct onnxrun__err *err,
                                                        struct onnxrun_tensor **out);

/* Encodes a tensor as a .npy image: format 1.0 (2.0 when the header needs it), data in the
 * host's byte order (descr '<..' or '>..'; '|' for one-byte types) starting at a multiple
 * of 64 bytes. *out comes from onnxrun__malloc. STRING and
 * BFLOAT16 have no .npy dtype: UNSUPPORTED. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__npy_encode(const struct onnxrun_env *env,
                                                        const struct onnxrun_tensor *t,
                                                        struct onnxrun__err *err, uint8_t **out,
                                                        size_t *out_size);

#endif
