/*
 * simd128_dw.c - the WebAssembly SIMD128 depthwise ConvTranspose rows (depthwise.h): the
 * generic rows compiled with -msimd128 (auto-vectorised).
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__wasm_simd128__)

void onnxrun__dw_rows_simd128(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	generic_dw_rows(j, begin, end, tmp);
}

#endif
