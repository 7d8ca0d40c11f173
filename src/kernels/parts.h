/*
 * parts.h - the routines each ISA's family files (scalar_*.c, avx2_*.c, avx512_*.c) define
 * and that ISA's table file (scalar.c, avx2.c, avx512.c) collects. Only the kernel layer
 * includes it; ops reach these through the tables.
 */
#ifndef ONNXRUN_KERNELS_PARTS_H
#define ONNXRUN_KERNELS_PARTS_H

#include "kernels.h"

/* depthwise ConvTranspose rows (depthwise.h) */
ONNXRUN__HIDDEN void onnxrun__dw_rows_scalar(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#if defined(__x86_64__)
ONNXRUN__HIDDEN void onnxrun__dw_rows_avx2(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
ONNXRUN__HIDDEN void onnxrun__dw_rows_avx512(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);
#endif

#endif
