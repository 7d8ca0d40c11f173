/*
 * inputs.c - finds, loads and binds the input tensors and expected outputs named by the
 * INPUTS arguments: one folder in the ONNX test layout and/or tensor files.
 *
 * Matching rules, in order, for a file "<base>.pb" or "<base>.npy":
 *  1. <base> equals an input's name (or its file-name-safe form, see cli_sanitize_name);
 *  2. <base> is input_<i>: input i in onnxrun_model_input_info order;
 *  3. <base> is output_<i>: the expected value of output i;
 *  4. otherwise a file in the folder is ignored, and a file argument is bound by name with
 *     onnxrun_session_set_input_by_name (which also overrides initializers).
 * File arguments take precedence over files found in the folder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Paths of the tensor files found for each slot (heap strings, NULL where none). */
struct slot_paths {
	char **inputs;
	char **outputs;
};

/* 1 for ".pb", 2 for ".npy", 0 otherwise; *base_len gets the length without it. */
static int tensor_ext(const char *name, size_t *base_len)
{
	size_t n = strlen(name);

	if (n > 3 && strcmp(name + n - 3, ".pb") == 0) {
		*base_len = n - 3;
		return 1;
	}
	if (n > 4 && strcmp(name + n - 4, ".npy") == 0) {
		*base_len = n - 4;
		return 2;
	}
	return 0;
}

/* Whether base[0..len) is "<prefix><decimal digits>"; the number goes to *out. */
static int parse_indexed(const char *base, size_t len, const char *prefix, size_t *out)
{
	size_t pl = strlen(prefix), v = 0;

	if (len <= pl || len - pl > 9 || strncmp(base, prefix, pl) != 0)
		return 0;
	for (size_t i = pl; i < len; i++) {
		if (base[i] < '0' || base[i] > '9')
			return 0;
		v = v * 10 + (size_t)(base[i] - '0');
	}
	*out = v;
	return 1;
}

/* Whether base[0..len) equals `name` exactly or its file-name-safe form. */
static int name_matches(const char *name, const char *base, size_t len)
{
	if (strlen(name) != len)
		return 0;
	if (strncmp(name, base, len) == 0)
		return 1;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (c == '/' || c == '\\' || (i == 0 && c == '.'))
			c = '_';
		if (c != base[i])
			return 0;
	}
	return 1;
}

/* Index of the model input named base[0..len), or -1. */
static long find_input(const struct onnxrun_model *model, const char *base, size_t len)
{
	size_t n = onnxrun_model_input_count(model);
	struct onnxrun_value_info info;

	for (size_t i = 0; i < n; i++) {
		if (onnxrun_model_input_info(model, i, &info) == ONNXRUN_OK &&
		    name_matches(info.name, base, len))
			return (long)i;
	}
	return -1;
}

/* The name of input or output i, for messages. */
static const char *value_name(const struct onnxrun_model *model, int output, size_t i)
{
	struct onnxrun_value_info info;
	enum onnxrun_status st = output ? onnxrun_model_output_info(model, i, &info)
	                                : onnxrun_model_input_info(model, i, &info);

	return st == ONNXRUN_OK && info.name != NULL ? info.name : "?";
}

/* Stores `path` (taken over) into a slot; a slot filled twice is an error. */
static int set_slot(char **slot, char *path, const struct onnxrun_model *model, int output,
                    size_t i)
{
	if (*slot != NULL) {
		cli_error("%s '%s' is given twice: '%s' and '%s'",
		          output ? "expected output" : "input", value_name(model, output, i), *slot,
		          path);
		free(path);
		return CLI_ERROR;
	}
	*slot = path;
	return CLI_OK;
}

/* Checks an index from input_<i>/output_<i> against the model's count. */
static int check_index(const char *path, size_t i, size_t count, const char *what)
{
	if (i < count)
		return CLI_OK;
	cli_error("'%s': the model has %zu %s%s, so there is no %s %zu", path, count, what,
	          count == 1 ? "" : "s", what, i);
	return CLI_ERROR;
}

/*
 * Files a tensor file into `paths` by the matching rules. Returns CLI_OK with *matched = 0
 * when none applies (path then stays the caller's).
 */
static int classify(const struct onnxrun_model *model, const char *path, const char *base,
                    size_t len, struct slot_paths *paths, int *matched)
{
	long by_name = find_input(model, base, len);
	size_t i;
	char *copy;

	*matched = 1;
	if (by_name >= 0)
		i = (size_t)by_name;
	else if (parse_indexed(base, len, "input_", &i)) {
		if (check_index(path, i, onnxrun_model_input_count(model), "input") != CLI_OK)
			return CLI_ERROR;
	} else if (parse_indexed(base, len, "output_", &i)) {
		if (check_index(path, i, onnxrun_model_output_count(model), "output") != CLI_OK)
			return CLI_ERROR;
		copy = cli_strdup(path);
		return copy == NULL ? CLI_ERROR : set_slot(&paths->outputs[i], copy, model, 1, i);
	} else {
		*matched = 0;
		return CLI_OK;
	}
	copy = cli_strdup(path);
	return copy == NULL ? CLI_ERROR : set_slot(&paths->inputs[i], copy, model, 0, i);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files every .pb/.npy of folder `dir` (in name order: bytewise, as alphasort in the C
 * locale) into `paths`; others are ignored. */
static int scan_folder(const struct onnxrun_model *model, const char *dir,
                       struct slot_paths *paths)
{
	char **list;
	int n = onnxrun__os_list_dir(dir, &list);
	int rc = CLI_OK;

	if (n < 0) {
		cli_error("cannot read folder '%s': %s", dir, strerror(errno));
		return CLI_ERROR;
	}
	if (n > 1)
		qsort(list, (size_t)n, sizeof *list, name_cmp);
	for (int k = 0; k < n; k++) {
		size_t len;
		int matched;
		const char *name = list[k];
		if (rc == CLI_OK && tensor_ext(name, &len) != 0) {
			char *path = cli_path_join(dir, name);
			rc = path == NULL ? CLI_ERROR : classify(model, path, name, len, paths, &matched);
			free(path);
		}
		free(list[k]);
	}
	free(list);
	return rc;
}

/* Files one tensor-file argument; one matching no rule becomes a by-name override. */
static int add_file_arg(const struct onnxrun_model *model, const char *path,
                        struct slot_paths *paths, struct cli_data *data)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash != NULL ? slash + 1 : path;
	size_t len;
	int matched;

	if (tensor_ext(name, &len) == 0) {
		cli_error("'%s': tensor files must end in .pb or .npy", path);
		return CLI_ERROR;
	}
	if (classify(model, path, name, len, paths, &matched) != CLI_OK)
		return CLI_ERROR;
	if (matched)
		return CLI_OK;
	size_t k = data->override_count;
	data->override_sources[k] = cli_strdup(path);
	data->override_names[k] = cli_calloc(len + 1, 1);
	data->override_count++;
	if (data->override_sources[k] == NULL || data->override_names[k] == NULL)
		return CLI_ERROR;
	memcpy(data->override_names[k], name, len);
	return CLI_OK;
}

/* Sorts the INPUTS arguments: at most one folder (*folder) and tensor files. */
static int add_args(const struct onnxrun_model *model, const struct cli_options *opts,
                    struct slot_paths *paths, struct cli_data *data, const char **folder)
{
	for (size_t i = 0; i < opts->input_count; i++) {
		const char *arg = opts->inputs[i];
		if (cli_is_dir(arg)) {
			if (*folder != NULL) {
				cli_error("'%s': only one input folder may be given (also '%s')", arg,
				          *folder);
				return CLI_ERROR;
			}
			*folder = arg;
		} else if (!cli_is_file(arg)) {
			cli_error("cannot open '%s': %s", arg, strerror(errno));
			return CLI_ERROR;
		} else if (add_file_arg(model, arg, paths, data) != CLI_OK) {
			return CLI_ERROR;
		}
	}
	return CLI_OK;
}

/* Moves folder-found paths into the slots that no file argument filled. */
static void merge_paths(char **dst, char **src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (dst[i] == NULL)
			dst[i] = src[i];
		else
			free(src[i]);
		src[i] = NULL;
	}
}

/* Loads a .pb or .npy tensor file; errors are the library's, naming the file. */
static int load_tensor(struct onnxrun_env *env, const char *path, struct onnxrun_tensor **out)
{
	size_t len;
	enum onnxrun_status st = tensor_ext(path, &len) == 2 ? onnxrun_tensor_load_npy(env, path, out)
	                                                     : onnxrun_tensor_load_pb(env, path, out);

	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_env_error(env), st, path);
		return CLI_ERROR;
	}
	return CLI_OK;
}

/* Loads every file found into data's tensors. */
static int load_all(struct onnxrun_env *env, struct cli_data *data)
{
	for (size_t i = 0; i < data->input_count; i++) {
		if (data->input_sources[i] != NULL &&
		    load_tensor(env, data->input_sources[i], &data->inputs[i]) != CLI_OK)
			return CLI_ERROR;
	}
	for (size_t i = 0; i < data->output_count; i++) {
		if (data->expected_sources[i] != NULL &&
		    load_tensor(env, data->expected_sources[i], &data->expected[i]) != CLI_OK)
			return CLI_ERROR;
	}
	for (size_t i = 0; i < data->override_count; i++) {
		if (load_tensor(env, data->override_sources[i], &data->overrides[i]) != CLI_OK)
			return CLI_ERROR;
	}
	return CLI_OK;
}

/* Allocates data's arrays for the model; zeroed. */
static int data_alloc(const struct onnxrun_model *model, size_t arg_count, struct cli_data *data)
{
	memset(data, 0, sizeof *data);
	data->input_count = onnxrun_model_input_count(model);
	data->output_count = onnxrun_model_output_count(model);
	data->inputs = cli_calloc(data->input_count, sizeof *data->inputs);
	data->input_sources = cli_calloc(data->input_count, sizeof *data->input_sources);
	data->expected = cli_calloc(data->output_count, sizeof *data->expected);
	data->expected_sources = cli_calloc(data->output_count, sizeof *data->expected_sources);
	data->overrides = cli_calloc(arg_count, sizeof *data->overrides);
	data->override_sources = cli_calloc(arg_count, sizeof *data->override_sources);
	data->override_names = cli_calloc(arg_count, sizeof *data->override_names);
	if (data->inputs == NULL || data->input_sources == NULL || data->expected == NULL ||
	    data->expected_sources == NULL || data->overrides == NULL ||
	    data->override_sources == NULL || data->override_names == NULL)
		return CLI_ERROR;
	return CLI_OK;
}

/*
 * Finds and loads the inputs and expected outputs named by opts->inputs. Missing inputs
 * stay NULL (see cli_random_fill and cli_data_bind). Call cli_data_free either way.
 */
int cli_data_collect(struct onnxrun_env *env, const struct onnxrun_model *model,
                     const struct cli_options *opts, struct cli_data *data)
{
	struct slot_paths args, found = {NULL, NULL};
	const char *folder = NULL;
	int rc = CLI_ERROR;

	if (data_alloc(model, opts->input_count, data) != CLI_OK)
		return CLI_ERROR;
	args = (struct slot_paths){data->input_sources, data->expected_sources};
	if (add_args(model, opts, &args, data, &folder) != CLI_OK)
		return CLI_ERROR;
	if (folder != NULL) {
		found.inputs = cli_calloc(data->input_count, sizeof *found.inputs);
		found.outputs = cli_calloc(data->output_count, sizeof *found.outputs);
		if (found.inputs == NULL || found.outputs == NULL ||
		    scan_folder(model, folder, &found) != CLI_OK)
			goto done;
		merge_paths(data->input_sources, found.inputs, data->input_count);
		merge_paths(data->expected_sources, found.outputs, data->output_count);
	}
	rc = load_all(env, data);
done:
	for (size_t i = 0; found.inputs != NULL && i < data->input_count; i++)
		free(found.inputs[i]);
	for (size_t i = 0; found.outputs != NULL && i < data->output_count; i++)
		free(found.outputs[i]);
	free(found.inputs);
	free(found.outputs);
	return rc;
}

/* Reports a missing input with the file names that would have provided it. */
static void missing_input(const struct onnxrun_model *model, size_t i)
{
	const char *name = value_name(model, 0, i);
	char *safe = cli_sanitize_name(name, i);

	if (safe == NULL)
		return;
	cli_error("missing input '%s': give input_%zu.pb, %s.pb or %s.npy, or use --random", name,
	          i, safe, safe);
	free(safe);
}

/* Binds every loaded tensor to the session (by-name files first, as a file that matches
 * nothing is the likelier mistake); a missing input is an error naming it. */
int cli_data_bind(struct onnxrun_session *session, const struct onnxrun_model *model,
                  const struct cli_data *data)
{
	enum onnxrun_status st;

	for (size_t i = 0; i < data->override_count; i++) {
		st = onnxrun_session_set_input_by_name(session, data->override_names[i],
		                                       data->overrides[i]);
		if (st != ONNXRUN_OK) {
			cli_lib_error(onnxrun_session_error(session), st, data->override_sources[i]);
			return CLI_ERROR;
		}
	}
	for (size_t i = 0; i < data->input_count; i++) {
		if (data->inputs[i] == NULL) {
			missing_input(model, i);
			return CLI_ERROR;
		}
		st = onnxrun_session_set_input(session, i, data->inputs[i]);
		if (st != ONNXRUN_OK) {
			cli_lib_error(onnxrun_session_error(session), st, data->input_sources[i]);
			return CLI_ERROR;
		}
	}
	return CLI_OK;
}

/* Frees the tensors and paths of data (whatever part of it was filled). */
void cli_data_free(struct cli_data *data)
{
	for (size_t i = 0; data->inputs != NULL && i < data->input_count; i++)
		onnxrun_tensor_free(data->inputs[i]);
	for (size_t i = 0; data->input_sources != NULL && i < data->input_count; i++)
		free(data->input_sources[i]);
	for (size_t i = 0; data->expected != NULL && i < data->output_count; i++)
		onnxrun_tensor_free(data->expected[i]);
	for (size_t i = 0; data->expected_sources != NULL && i < data->output_count; i++)
		free(data->expected_sources[i]);
	for (size_t i = 0; i < data->override_count; i++) {
		onnxrun_tensor_free(data->overrides[i]);
		free(data->override_sources[i]);
		free(data->override_names[i]);
	}
	free(data->inputs);
	free(data->input_sources);
	free(data->expected);
	free(data->expected_sources);
	free(data->overrides);
	free(data->override_sources);
	free(data->override_names);
	memset(data, 0, sizeof *data);
}
