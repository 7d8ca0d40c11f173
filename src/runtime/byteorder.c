/*
 * byteorder.c - little-endian file data <-> host-order tensors (see runtime.h). Used where
 * bytes cross the library's boundary: TensorProto raw_data and external data, .pb and .npy
 * tensor files.
 */
#include <string.h>

#include "runtime.h"

size_t onnxrun__dtype_swap_unit(enum onnxrun_dtype dtype)
{
	switch (dtype) {
	case ONNXRUN_DTYPE_COMPLEX64: return 4;
	case ONNXRUN_DTYPE_COMPLEX128: return 8;
	case ONNXRUN_DTYPE_STRING: return 1;
	default: {
		size_t size = onnxrun_dtype_size(dtype);
		return size ? size : 1;
	}
	}
}

/* Byte reversal through shifts on local copies: no alignment is assumed for src or dst. */
static void swap16(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 2) {
		unsigned char a = s[i], b = s[i + 1];
		d[i] = b;
		d[i + 1] = a;
	}
}

static void swap32(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 4) {
		uint32_t w;
		memcpy(&w, s + i, 4);
		w = __builtin_bswap32(w);
		memcpy(d + i, &w, 4);
	}
}

static void swap64(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		w = __builtin_bswap64(w);
		memcpy(d + i, &w, 8);
	}
}

void onnxrun__bswap_copy(void *dst, const void *src, size_t nbytes, size_t unit)
{
	switch (unit) {
	case 2: swap16(dst, src, nbytes); break;
	case 4: swap32(dst, src, nbytes); break;
	case 8: swap64(dst, src, nbytes); break;
	default:
		if (dst != src && nbytes)
			memcpy(dst, src, nbytes);
		break;
	}
}

bool onnxrun__le_needs_swap(enum onnxrun_dtype dtype)
{
	return ONNXRUN__BIG_ENDIAN && onnxrun__dtype_swap_unit(dtype) > 1;
}

void onnxrun__le_copy(void *dst, const void *src, size_t nbytes, enum onnxrun_dtype dtype)
{
	onnxrun__bswap_copy(dst, src, nbytes, ONNXRUN__BIG_ENDIAN ? onnxrun__dtype_swap_unit(dtype) : 1);
}
