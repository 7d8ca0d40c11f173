/*
 * fuzz_npy.c - libFuzzer target: bytes -> onnxrun_tensor_decode_npy (NumPy .npy 1.0-3.0).
 */
#include <stdint.h>

#include "onnxrun.h"

#define FUZZ_MEMORY_CAP ((uint64_t)64 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct onnxrun_env *env = NULL;
	struct onnxrun_tensor *t = NULL;
	if (onnxrun_env_create(NULL, &env))
		return 0;
	onnxrun_env_set_max_memory(env, FUZZ_MEMORY_CAP);
	if (!onnxrun_tensor_decode_npy(env, data, size, &t)) {
		const uint8_t *p = onnxrun_tensor_data(t);
		volatile unsigned sum = 0;
		for (size_t i = 0; i < onnxrun_tensor_nbytes(t); i++)
			sum += p[i];
		(void)sum;
		onnxrun_tensor_free(t);
	}
	onnxrun_env_free(env);
	return 0;
}
