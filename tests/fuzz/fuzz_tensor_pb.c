/*
 * fuzz_tensor_pb.c - libFuzzer target: bytes -> onnxrun_tensor_decode_pb (a serialized
 * TensorProto, as in input_<i>.pb files); a decoded tensor's strings and name are read.
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
	if (!onnxrun_tensor_decode_pb(env, data, size, &t)) {
		const struct onnxrun_string *s = onnxrun_tensor_data(t);
		volatile size_t sum = 0;
		if (onnxrun_tensor_dtype(t) == ONNXRUN_DTYPE_STRING)
			for (int64_t i = 0; i < onnxrun_tensor_numel(t); i++)
				sum += s[i].size;
		(void)sum;
		(void)onnxrun_tensor_name(t);
		onnxrun_tensor_free(t);
	}
	onnxrun_env_free(env);
	return 0;
}
