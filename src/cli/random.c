/*
 * random.c - --random: deterministic pseudo-random values for the inputs no file gave.
 *
 * Each input i draws from its own splitmix64 stream seeded with (seed, i), so its values do
 * not depend on which other inputs were given. Floating types get uniform values in
 * [-1, 1), signed integers [-64, 63], unsigned [0, 127], bool 0/1, strings 1-8 lower-case
 * letters, complex both parts in [-1, 1).
 */
#include <string.h>

#include "cli.h"

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit value per step. */
static uint64_t next_u64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Uniform double in [-1, 1) from 53 random bits. */
static double next_unit(uint64_t *state)
{
	return (double)(next_u64(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Fills element i of a numeric tensor's data. */
static void fill_element(enum onnxrun_dtype dtype, void *data, int64_t i, uint64_t *s)
{
	int64_t sv = (int64_t)(next_u64(s) >> 57) - 64; /* [-64, 63] */
	uint64_t uv = next_u64(s) >> 57;                 /* [0, 127] */

	switch (dtype) {
	case ONNXRUN_DTYPE_FLOAT: ((float *)data)[i] = (float)next_unit(s); break;
	case ONNXRUN_DTYPE_DOUBLE: ((double *)data)[i] = next_unit(s); break;
	case ONNXRUN_DTYPE_FLOAT16:
		((uint16_t *)data)[i] = cli_float_to_half((float)next_unit(s));
		break;
	case ONNXRUN_DTYPE_BFLOAT16:
		((uint16_t *)data)[i] = cli_float_to_bf16((float)next_unit(s));
		break;
	case ONNXRUN_DTYPE_COMPLEX64:
		((float *)data)[2 * i] = (float)next_unit(s);
		((float *)data)[2 * i + 1] = (float)next_unit(s);
		break;
	case ONNXRUN_DTYPE_COMPLEX128:
		((double *)data)[2 * i] = next_unit(s);
		((double *)data)[2 * i + 1] = next_unit(s);
		break;
	case ONNXRUN_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)sv; break;
	case ONNXRUN_DTYPE_INT16: ((int16_t *)data)[i] = (int16_t)sv; break;
	case ONNXRUN_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)sv; break;
	case ONNXRUN_DTYPE_INT64: ((int64_t *)data)[i] = sv; break;
	case ONNXRUN_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)uv; break;
	case ONNXRUN_DTYPE_UINT16: ((uint16_t *)data)[i] = (uint16_t)uv; break;
	case ONNXRUN_DTYPE_UINT32: ((uint32_t *)data)[i] = (uint32_t)uv; break;
	case ONNXRUN_DTYPE_UINT64: ((uint64_t *)data)[i] = uv; break;
	case ONNXRUN_DTYPE_BOOL: ((uint8_t *)data)[i] = (uint8_t)(uv & 1u); break;
	default: break;
	}
}

/* Fills a STRING tensor with short lower-case words. */
static int fill_strings(struct onnxrun_tensor *t, uint64_t *s)
{
	int64_t n = onnxrun_tensor_numel(t);

	for (int64_t i = 0; i < n; i++) {
		char word[8];
		size_t len = 1 + (size_t)(next_u64(s) >> 61);
		for (size_t k = 0; k < len; k++)
			word[k] = (char)('a' + (int)(next_u64(s) % 26u));
		enum onnxrun_status st = onnxrun_tensor_set_string(t, i, word, len);
		if (st != ONNXRUN_OK) {
			cli_error("cannot set a random string: %s", onnxrun_status_str(st));
			return CLI_ERROR;
		}
	}
	return CLI_OK;
}

/* Resolves the concrete shape of input `info` from its declared dims and --dim values. */
static int concrete_shape(const struct onnxrun_value_info *info, const struct cli_options *opts,
                          int64_t *dims)
{
	if (info->rank < 0) {
		cli_error("input '%s' has an unknown rank: --random cannot make it; give a file",
		          info->name);
		return CLI_ERROR;
	}
	for (int32_t d = 0; d < info->rank; d++) {
		const struct onnxrun_dim *dim = &info->dims[d];
		const struct cli_dim *bound;
		if (dim->value >= 0) {
			dims[d] = dim->value;
		} else if (dim->param == NULL || dim->param[0] == '\0') {
			cli_error("input '%s': dim %d is unknown, so --random cannot make it; give a file",
			          info->name, (int)d);
			return CLI_ERROR;
		} else if ((bound = cli_find_dim(opts, dim->param)) != NULL) {
			dims[d] = bound->value;
		} else {
			cli_error("input '%s': symbolic dim '%s' needs a value: add --dim %s=VALUE",
			          info->name, dim->param, dim->param);
			return CLI_ERROR;
		}
	}
	return CLI_OK;
}

/* Creates one random tensor for input i. */
static int make_input(struct onnxrun_env *env, const struct onnxrun_model *model, size_t i,
                      const struct cli_options *opts, struct onnxrun_tensor **out)
{
	struct onnxrun_value_info info;
	int64_t dims[ONNXRUN_MAX_RANK];
	uint64_t state = opts->seed ^ (0x6a09e667f3bcc909u * (uint64_t)(i + 1));
	enum onnxrun_status st = onnxrun_model_input_info(model, i, &info);

	if (st != ONNXRUN_OK) {
		cli_error("cannot read input %zu of the model: %s", i, onnxrun_status_str(st));
		return CLI_ERROR;
	}
	if (info.rank > ONNXRUN_MAX_RANK) {
		cli_error("input '%s': rank %d is too large", info.name, (int)info.rank);
		return CLI_ERROR;
	}
	if (concrete_shape(&info, opts, dims) != CLI_OK)
		return CLI_ERROR;
	st = onnxrun_tensor_create(env, info.dtype, info.rank, dims, out);
	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_env_error(env), st, info.name);
		return CLI_ERROR;
	}
	if (info.dtype == ONNXRUN_DTYPE_STRING)
		return fill_strings(*out, &state);
	void *data = onnxrun_tensor_data(*out);
	for (int64_t e = 0, n = onnxrun_tensor_numel(*out); e < n; e++)
		fill_element(info.dtype, data, e, &state);
	return CLI_OK;
}

/* Gives every input still missing in `data` a random tensor (see the file comment). */
int cli_random_fill(struct onnxrun_env *env, const struct onnxrun_model *model,
                    const struct cli_options *opts, struct cli_data *data)
{
	for (size_t i = 0; i < data->input_count; i++) {
		if (data->inputs[i] == NULL &&
		    make_input(env, model, i, opts, &data->inputs[i]) != CLI_OK)
			return CLI_ERROR;
	}
	return CLI_OK;
}
