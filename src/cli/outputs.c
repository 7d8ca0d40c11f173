/*
 * outputs.c - -o DIR: writes DIR/output_<i>.pb (a TensorProto named after the output) and,
 * with --npy, DIR/<name>.npy for every output of the last run.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * Makes a tensor with the contents of `src` that can be renamed: a wrapper over src's data
 * for numeric types, a copy for strings (which cannot be wrapped) and empty tensors.
 */
static enum onnxrun_status named_view(struct onnxrun_env *env, const struct onnxrun_tensor *src,
                                      struct onnxrun_tensor **out)
{
	enum onnxrun_dtype dtype = onnxrun_tensor_dtype(src);
	int32_t rank = onnxrun_tensor_rank(src);
	const int64_t *dims = onnxrun_tensor_dims(src);
	int64_t n = onnxrun_tensor_numel(src);
	enum onnxrun_status st;

	if (dtype != ONNXRUN_DTYPE_STRING && n > 0)
		return onnxrun_tensor_wrap(env, dtype, rank, dims, onnxrun_tensor_data(src),
		                           onnxrun_tensor_nbytes(src), out);
	struct onnxrun_tensor *copy = NULL;
	const struct onnxrun_string *strs = onnxrun_tensor_data(src);
	st = onnxrun_tensor_create(env, dtype, rank, dims, &copy);
	for (int64_t i = 0; st == ONNXRUN_OK && dtype == ONNXRUN_DTYPE_STRING && i < n; i++)
		st = onnxrun_tensor_set_string(copy, i, strs[i].data, strs[i].size);
	if (st == ONNXRUN_OK)
		*out = copy;
	else
		onnxrun_tensor_free(copy);
	return st;
}

/* Writes DIR/<name>.npy; a dtype without .npy form is skipped with a warning. */
static int write_npy(struct onnxrun_env *env, const struct onnxrun_tensor *t, const char *dir,
                     const char *name, size_t index)
{
	char *safe = cli_sanitize_name(name, index);
	char *file = NULL, *path = NULL;
	int rc = CLI_ERROR;

	if (safe == NULL || (file = malloc(strlen(safe) + 5)) == NULL)
		goto done;
	strcpy(file, safe);
	strcat(file, ".npy");
	if ((path = cli_path_join(dir, file)) == NULL)
		goto done;
	enum onnxrun_status st = onnxrun_tensor_save_npy(env, t, path);
	if (st == ONNXRUN_ERROR_UNSUPPORTED) {
		cli_warning("output '%s': %s has no .npy form; '%s' not written", name,
		            onnxrun_dtype_name(onnxrun_tensor_dtype(t)), path);
		rc = CLI_OK;
	} else if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_env_error(env), st, path);
	} else {
		rc = CLI_OK;
	}
done:
	if (safe != NULL && file == NULL)
		cli_error("out of memory");
	free(safe);
	free(file);
	free(path);
	return rc;
}

/* Writes output i (tensor t, named `name`) into DIR as .pb (and .npy). */
static int write_one(struct onnxrun_env *env, const struct onnxrun_tensor *t, const char *name,
                     size_t i, const struct cli_options *opts)
{
	struct onnxrun_tensor *view = NULL;
	char file[48];
	char *path = NULL;
	int rc = CLI_ERROR;
	enum onnxrun_status st = named_view(env, t, &view);

	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_env_error(env), st, name);
		goto done;
	}
	st = onnxrun_tensor_set_name(view, name);
	if (st != ONNXRUN_OK) {
		cli_error("output '%s': cannot set the tensor name: %s", name, onnxrun_status_str(st));
		goto done;
	}
	snprintf(file, sizeof file, "output_%zu.pb", i);
	if ((path = cli_path_join(opts->output_dir, file)) == NULL)
		goto done;
	st = onnxrun_tensor_save_pb(env, view, path);
	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_env_error(env), st, path);
		goto done;
	}
	rc = opts->write_npy ? write_npy(env, view, opts->output_dir, name, i) : CLI_OK;
done:
	onnxrun_tensor_free(view);
	free(path);
	return rc;
}

/* Writes every output of the last run into opts->output_dir, creating it if missing. */
int cli_write_outputs(struct onnxrun_env *env, const struct onnxrun_session *session,
                      const struct onnxrun_model *model, const struct cli_options *opts)
{
	if (cli_mkdirs(opts->output_dir) != CLI_OK)
		return CLI_ERROR;
	for (size_t i = 0, n = onnxrun_model_output_count(model); i < n; i++) {
		struct onnxrun_value_info info;
		const struct onnxrun_tensor *t;
		enum onnxrun_status st = onnxrun_model_output_info(model, i, &info);
		if (st == ONNXRUN_OK)
			st = onnxrun_session_output(session, i, &t);
		if (st != ONNXRUN_OK) {
			cli_lib_error(onnxrun_session_error(session), st, NULL);
			return CLI_ERROR;
		}
		if (write_one(env, t, info.name, i, opts) != CLI_OK)
			return CLI_ERROR;
	}
	return CLI_OK;
}
