/*
 * metadata.c - the model's descriptive fields (producer, domain, version, doc strings,
 * metadata_props) as the loader kept them, and the env's opset policy switch.
 */
#include "runtime.h"

enum onnxrun_status onnxrun_model_metadata(const struct onnxrun_model *m, struct onnxrun_model_metadata *out)
{
	if (!m || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	out->producer_name = m->producer_name;
	out->producer_version = m->meta.producer_version;
	out->domain = m->meta.domain;
	out->doc_string = m->meta.doc_string;
	out->model_version = m->meta.model_version;
	out->graph_name = m->graph_name;
	out->graph_doc_string = m->meta.graph_doc_string;
	out->prop_count = m->meta.n_props;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_model_metadata_prop(const struct onnxrun_model *m, size_t i, const char **key,
                                                const char **value)
{
	if (!m || !key || !value || i >= m->meta.n_props)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	*key = m->meta.prop_keys[i];
	*value = m->meta.prop_values[i];
	return ONNXRUN_OK;
}

void onnxrun__metadata_free(const struct onnxrun_env *env, struct onnxrun__metadata *meta)
{
	onnxrun__free(env, meta->producer_version);
	onnxrun__free(env, meta->domain);
	onnxrun__free(env, meta->doc_string);
	onnxrun__free(env, meta->graph_doc_string);
	for (size_t i = 0; meta->prop_keys && i < meta->n_props; i++) {
		onnxrun__free(env, meta->prop_keys[i]);
		onnxrun__free(env, meta->prop_values[i]);
	}
	onnxrun__free(env, meta->prop_keys);
	onnxrun__free(env, meta->prop_values);
}

enum onnxrun_status onnxrun_env_set_allow_newer_opset(struct onnxrun_env *env, int allow)
{
	if (!env)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	env->allow_newer_opset = allow != 0;
	return ONNXRUN_OK;
}
