/*
 * env_shim.h - forced into the cmocka tests built as firmware (-include): their
 * onnxrun_env_create(NULL, ...) means "the default allocator", which a bare-metal build has
 * not (no heap in the library); here it gets one over newlib's malloc, whose heap is the
 * board's BIGRAM (big_heap.c). Everything else of the tests is as on the host.
 */
#ifndef ONNXRUN_TESTS_MCU_ENV_SHIM_H
#define ONNXRUN_TESTS_MCU_ENV_SHIM_H

#include "onnxrun.h"

enum onnxrun_status mcu_env_create(const struct onnxrun_allocator *allocator, struct onnxrun_env **out);
#define onnxrun_env_create(allocator, out) mcu_env_create((allocator), (out))

#endif
