/*
 * testrun_case.c - runs one case of "onnxrun test": settings, load, then every data set
 * (inputs and expected outputs found as in "onnxrun MODEL FOLDER", see inputs.c), each
 * output compared with compare.c's rule under the case's tolerances.
 *
 * Outcomes: a load that fails with UNSUPPORTED makes the case "unsupported" (the ops the
 * library's inspection of the model lists, see unsupported.c);
 * any other load failure, a bad settings file or a case without data sets is an "error";
 * otherwise each data set is "pass", "fail" (an output differs in value, dtype or shape)
 * or "error" (bad or missing input file, failed run), and the case takes the worst of
 * them. Errors printed by the shared CLI code are captured into the messages.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "testrun.h"

/* Log callback of a case's env: warnings on stderr, naming the case. */
static void case_log(void *ctx, enum onnxrun_log_level level, const char *message)
{
	if (level == ONNXRUN_LOG_INFO)
		return;
	tr_progress_clear();
	cli_warning("%s: %s", (const char *)ctx, message != NULL ? message : "");
}

/* Starts a message stream (in memory: closed with onnxrun__os_memstream_close); NULL when
 * out of memory. */
static FILE *message_open(char **buf, size_t *size)
{
	return onnxrun__os_memstream_open(buf, size);
}

/* Writes the description of one output that failed its comparison. */
static void describe_failure(FILE *m, const char *name, const struct onnxrun_tensor *exp,
                             const struct onnxrun_tensor *got, const struct cli_cmp *cmp,
                             const struct tr_case *c)
{
	fprintf(m, "output '%s' (", name);
	if (!cmp->same_type) {
		fputs("expected ", m);
		cli_print_tensor_type(m, exp);
		fputs(", got ", m);
		cli_print_tensor_type(m, got);
		fputs("): dtype or shape differs", m);
		return;
	}
	cli_print_tensor_type(m, got);
	fprintf(m, "): %" PRId64 " of %" PRId64 " elements differ; worst at ", cmp->bad,
	        onnxrun_tensor_numel(got));
	cli_print_index(m, onnxrun_tensor_rank(got), onnxrun_tensor_dims(got), cmp->worst);
	fputs(": expected ", m);
	cli_print_element(m, exp, cmp->worst, 1);
	fputs(" got ", m);
	cli_print_element(m, got, cmp->worst, 1);
	if (onnxrun_tensor_dtype(got) != ONNXRUN_DTYPE_STRING)
		fprintf(m, " (abs err %.3g, rel err %.3g; max_abs %.3g, max_rel %.3g; rtol %g, atol %g)",
		        cmp->worst_abs, cmp->worst_rel, cmp->max_abs, cmp->max_rel, c->rtol, c->atol);
}

/*
 * Compares every output that has an expected value; fills s->outputs and, when some
 * output fails, s->result = TR_FAIL and s->message.
 */
static int compare_set(const struct onnxrun_session *session, const struct onnxrun_model *model,
                       const struct cli_data *data, const struct tr_case *c, struct tr_set *s)
{
	char *buf;
	size_t size, failed = 0;
	FILE *m = message_open(&buf, &size);

	s->outputs = cli_calloc(data->output_count, sizeof *s->outputs);
	if (m == NULL || s->outputs == NULL) {
		if (m != NULL)
			onnxrun__os_memstream_close(m, &buf, &size);
		free(buf);
		return CLI_ERROR;
	}
	for (size_t i = 0; i < data->output_count; i++) {
		struct onnxrun_value_info info;
		const struct onnxrun_tensor *got;
		struct cli_cmp cmp;
		if (data->expected[i] == NULL || onnxrun_model_output_info(model, i, &info) != ONNXRUN_OK ||
		    onnxrun_session_output(session, i, &got) != ONNXRUN_OK)
			continue;
		cli_compare_tensors(data->expected[i], got, c->rtol, c->atol, &cmp);
		struct tr_output *o = &s->outputs[s->output_count++];
		o->name = cli_strdup(info.name);
		o->pass = cmp.same_type && cmp.bad == 0;
		o->max_abs = cmp.max_abs;
		o->max_rel = cmp.max_rel;
		if (!o->pass) {
			fputs(failed++ > 0 ? "; " : "", m);
			describe_failure(m, info.name, data->expected[i], got, &cmp, c);
		}
	}
	if (s->output_count == 0)
		fputs("no expected outputs (output_<i>.pb): ran without comparing", m);
	onnxrun__os_memstream_close(m, &buf, &size);
	s->result = failed > 0 ? TR_FAIL : TR_PASS;
	s->message = buf != NULL && buf[0] != '\0' ? buf : NULL;
	if (s->message == NULL)
		free(buf);
	return CLI_OK;
}

/* Creates a session with the thread count of the options. */
static int make_session(const struct onnxrun_model *model, const struct tr_options *opts,
                        struct onnxrun_session **out)
{
	int threads = opts->threads > 0 ? opts->threads : onnxrun__os_cpu_count();
	enum onnxrun_status st = onnxrun_session_create(model, out);

	if (st != ONNXRUN_OK) {
		cli_error("cannot create a session: %s", onnxrun_status_str(st));
		return CLI_ERROR;
	}
	st = onnxrun_session_set_threads(*out, threads);
	if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_session_error(*out), st, "--threads");
		return CLI_ERROR;
	}
	return CLI_OK;
}

/* Cuts `suffix` off the end of message s when it ends so. */
static void drop_suffix(char *s, const char *suffix)
{
	size_t n = s != NULL ? strlen(s) : 0, k = strlen(suffix);

	if (n >= k && strcmp(s + n - k, suffix) == 0)
		s[n - k] = '\0';
}

/* When the case being run started (cli_now_ms), for --timeout. */
static double case_start_ms;

/* Runs the session within what is left of the case's --timeout (Ctrl-C cancels it too); a
 * run stopped by the timeout fails with "timeout after S s (in node ...)". */
static enum onnxrun_status run_timed(struct onnxrun_session *session, const struct tr_options *opts)
{
	enum onnxrun_status st = ONNXRUN_ERROR_CANCELLED;
	double left = opts->timeout - (cli_now_ms() - case_start_ms) / 1000.0;

	if (opts->timeout <= 0 || left > 0) {
		if (opts->timeout > 0)
			onnxrun_session_set_deadline(session, cli_seconds_to_us(left));
		cli_interrupt_watch(session);
		st = onnxrun_session_run(session);
		cli_interrupt_watch(NULL);
	}
	if (st == ONNXRUN_ERROR_CANCELLED && cli_interrupted()) {
		cli_error("interrupted (Ctrl-C)");
	} else if (st == ONNXRUN_ERROR_CANCELLED) {
		const char *msg = left > 0 ? onnxrun_session_error(session) : "";
		const char *end = strstr(msg, ": deadline of");
		if (strncmp(msg, "node '", 6) == 0 && end != NULL)
			cli_error("timeout after %g s (in %.*s)", opts->timeout, (int)(end - msg), msg);
		else
			cli_error("timeout after %g s", opts->timeout);
	} else if (st != ONNXRUN_OK) {
		cli_lib_error(onnxrun_session_error(session), st, NULL);
	}
	return st;
}

/* Loads, binds and runs data set `path`, then compares; errors are captured into s. */
static void run_set(struct onnxrun_env *env, const struct onnxrun_model *model,
                    const struct tr_case *c, const char *path, const struct tr_options *opts,
                    struct tr_set *s)
{
	struct cli_options copts;
	struct cli_data data;
	struct onnxrun_session *session = NULL;
	double t0 = cli_now_ms();

	memset(&copts, 0, sizeof copts);
	memset(&data, 0, sizeof data);
	copts.inputs = &path;
	copts.input_count = 1;
	s->result = TR_ERROR;
	cli_capture_begin();
	if (cli_data_collect(env, model, &copts, &data) == CLI_OK &&
	    make_session(model, opts, &session) == CLI_OK &&
	    cli_data_bind(session, model, &data) == CLI_OK) {
		if (run_timed(session, opts) == ONNXRUN_OK)
			compare_set(session, model, &data, c, s);
	}
	char *captured = cli_capture_end();
	drop_suffix(captured, ", or use --random"); /* advice for the single-model command */
	if (s->result == TR_ERROR) {
		s->message = captured != NULL ? captured : cli_strdup("out of memory");
		captured = NULL;
	}
	free(captured);
	onnxrun_session_free(session);
	cli_data_free(&data);
	s->time_ms = cli_now_ms() - t0;
}

/* Runs the data sets of a loaded model; with --fail-fast stops at the first bad one. */
static void run_sets(struct onnxrun_env *env, const struct onnxrun_model *model,
                     struct tr_case *c, const struct tr_options *opts, int *stop)
{
	c->result = TR_PASS;
	for (size_t i = 0; i < c->set_total && !*stop; i++) {
		struct tr_set *s = &c->sets[c->set_count];
		const char *slash = strrchr(c->set_paths[i], '/');
		memset(s, 0, sizeof *s);
		s->name = cli_strdup(slash != NULL ? slash + 1 : c->set_paths[i]);
		c->set_count++;
		run_set(env, model, c, c->set_paths[i], opts, s);
		if (s->result == TR_ERROR || (s->result == TR_FAIL && c->result == TR_PASS))
			c->result = s->result;
		if (s->result != TR_PASS && opts->fail_fast)
			*stop = 1;
	}
}

/* "<prefix>Relu (ai.onnx opset 13), Foo (com.example opset 1)" for an unsupported case,
 * or "<prefix><the load message>" when no op could be listed (heap; NULL when out of
 * memory). */
char *tr_unsupported_text(const struct tr_case *c, const char *prefix)
{
	char *buf;
	size_t size;
	FILE *m;

	if (c->op_count == 0)
		return cli_format("%s%s", prefix, c->message != NULL ? c->message : "");
	if ((m = message_open(&buf, &size)) == NULL)
		return NULL;
	fputs(prefix, m);
	for (size_t i = 0; i < c->op_count; i++)
		fprintf(m, "%s%s (%s opset %" PRId64 ")", i > 0 ? ", " : "", c->ops[i].op_type,
		        c->ops[i].domain, c->ops[i].opset);
	if (onnxrun__os_memstream_close(m, &buf, &size) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* After a load that failed with UNSUPPORTED: the case's ops, from an inspection of the
 * model, and its message. When the inspection lists nothing (the loader rejected a
 * construct, not an op), the message is the load's. */
static void set_unsupported(struct onnxrun_env *env, struct tr_case *c)
{
	struct onnxrun_model *inspected = NULL;
	char *load_message = cli_strdup(onnxrun_env_error(env));

	c->result = TR_UNSUPPORTED;
	if (cli_inspect_unsupported(env, c->model, &inspected, &c->ops, &c->op_count) != ONNXRUN_OK ||
	    c->op_count == 0) {
		c->message = load_message;
	} else {
		free(load_message);
		c->message = tr_unsupported_text(c, "unsupported ops: ");
	}
	onnxrun_model_free(inspected);
	if (c->message == NULL)
		c->message = cli_strdup("out of memory");
}

/* Loads the model and runs it on every data set; the case's outcome goes into c. */
static void load_and_run(struct onnxrun_env *env, struct tr_case *c,
                         const struct tr_options *opts, int *stop)
{
	struct onnxrun_model *model = NULL;
	enum onnxrun_status st = onnxrun_model_load_file(env, c->model, &model);

	if (st == ONNXRUN_ERROR_UNSUPPORTED) {
		set_unsupported(env, c);
	} else if (st != ONNXRUN_OK) {
		const char *msg = onnxrun_env_error(env);
		c->result = TR_ERROR;
		c->message = msg[0] != '\0' && strstr(msg, c->model) != NULL
		                     ? cli_strdup(msg)
		                     : cli_format("model '%s': %s", c->model,
		                                  msg[0] != '\0' ? msg : onnxrun_status_str(st));
	} else if (c->set_total == 0) {
		c->result = TR_ERROR;
		c->message = cli_format("no %s* folder next to '%s'", TR_SET_PREFIX, c->model);
	} else if ((c->sets = cli_calloc(c->set_total, sizeof *c->sets)) == NULL) {
		c->result = TR_ERROR;
		c->message = cli_strdup("out of memory");
	} else {
		run_sets(env, model, c, opts, stop);
	}
	onnxrun_model_free(model);
}

/*
 * Runs case c: settings, load, data sets. Sets c's outcome, messages and time. *stop is
 * set when --fail-fast should end the run after this case.
 */
void tr_run_case(struct tr_case *c, const struct tr_options *opts, int *stop)
{
	struct onnxrun_env *env = NULL;
	double t0 = cli_now_ms();
	char *skip = NULL, *error = NULL;

	c->ran = 1;
	case_start_ms = t0;
	if (tr_conf_apply(c, &skip, &error) != CLI_OK) {
		c->result = TR_ERROR;
		c->message = error;
	} else if (skip != NULL) {
		c->result = TR_SKIP;
		c->message = skip;
	} else if (onnxrun_env_create(NULL, &env) != ONNXRUN_OK) {
		c->result = TR_ERROR;
		c->message = cli_strdup("cannot create the environment");
	} else {
		onnxrun_env_set_log(env, case_log, c->path);
		load_and_run(env, c, opts, stop);
	}
	onnxrun_env_free(env);
	if ((tr_counts_as_failed(c, opts) && opts->fail_fast) || cli_interrupted())
		*stop = 1; /* Ctrl-C: no further case */
	c->time_ms = cli_now_ms() - t0;
}
