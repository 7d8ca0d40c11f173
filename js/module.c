/*
 * module.c - the C side of the JavaScript module (js/CMakeLists.txt): the library's public
 * API is exported as it is; this file only tells js/onnxrun.mjs the wasm32 layout of the
 * two structs it reads, so the wrapper never guesses offsets.
 */
#include <stddef.h>
#include <stdint.h>

#include <onnxrun.h>

int32_t onnxrun_js_layout(int32_t i);

/* Layout entry i: 0 sizeof(struct onnxrun_value_info), 1 its name offset, 2 dtype, 3 rank,
 * 4 dims; 5 sizeof(struct onnxrun_dim), 6 its value offset, 7 its param offset; -1 past the
 * end. Pure. */
int32_t onnxrun_js_layout(int32_t i)
{
	static const int32_t layout[] = {
		(int32_t)sizeof(struct onnxrun_value_info),
		(int32_t)offsetof(struct onnxrun_value_info, name),
		(int32_t)offsetof(struct onnxrun_value_info, dtype),
		(int32_t)offsetof(struct onnxrun_value_info, rank),
		(int32_t)offsetof(struct onnxrun_value_info, dims),
		(int32_t)sizeof(struct onnxrun_dim),
		(int32_t)offsetof(struct onnxrun_dim, value),
		(int32_t)offsetof(struct onnxrun_dim, param),
	};
	return i >= 0 && i < (int32_t)(sizeof layout / sizeof layout[0]) ? layout[i] : -1;
}
