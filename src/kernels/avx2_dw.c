/*
 * avx2_dw.c - the AVX2+FMA depthwise ConvTranspose rows (depthwise.h): the generic rows
 * compiled for AVX2.
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__x86_64__)

__attribute__((target("avx2,fma"))) void onnxrun__dw_rows_avx2(const struct onnxrun__kdw *j, int64_t begin,
                                                                int64_t end, float *tmp)
{
	generic_dw_rows(j, begin, end, tmp);
}

#endif
