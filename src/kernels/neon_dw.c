/*
 * neon_dw.c - the AArch64 NEON depthwise ConvTranspose rows (depthwise.h): the generic rows
 * compiled for AArch64 (auto-vectorised).
 */
#include "generic_dw.h"
#include "parts.h"

#if defined(__aarch64__)

void onnxrun__dw_rows_neon(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	generic_dw_rows(j, begin, end, tmp);
}

#endif
