/*
 * scalar_dw.c - the plain C depthwise ConvTranspose rows (depthwise.h).
 */
#include "generic_dw.h"
#include "parts.h"

void onnxrun__dw_rows_scalar(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp)
{
	generic_dw_rows(j, begin, end, tmp);
}
