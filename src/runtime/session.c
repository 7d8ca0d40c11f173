/*
 * session.c - run state of a model: bound inputs, outputs and dims, concrete shapes
 * (re-inferred only when an input shape changes), the planned arena of intermediates, the
 * run loop with its cancel and deadline checks, and the session's threads (its own pool or
 * a shared one).
 */
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "pool.h"

struct dim_bind {
	char *name;
	int64_t value;
};

/* A value's type in a session: concrete after prepare (rank -1 and dtype UNDEFINED while
 * unknown), dims in the session's types block, as many as the value can have (new_types):
 * 16 + 8 * rank bytes a value on a 32-bit target instead of a 160-byte struct onnxrun_type
 * (README, Microcontrollers: RAM beyond the tensors). */
struct value_type {
	enum onnxrun_dtype dtype;
	int32_t rank;
	int32_t cap; /* room in dims */
	int64_t *dims;
};

struct onnxrun_session {
	const struct onnxrun_model *model;
	const struct onnxrun_env *env;
	struct onnxrun__err err;
	int threads;
	struct onnxrun__pool *pool;   /* threads > 1 and no shared pool: the ops' worker threads */
	struct onnxrun_pool *shared;  /* onnxrun_session_set_pool (a reference), or NULL */
	atomic_int cancel;            /* onnxrun_session_cancel's pending request */
	uint64_t budget_ns;           /* onnxrun_session_set_deadline; 0: none */
	struct onnxrun__runctl ctl;   /* the stop state of the current run */
	struct onnxrun_tensor **bound; /* per graph output: caller tensor (set_output) or NULL */
	int32_t *primary;             /* per value: the first output index bound to it, else -1 */
	size_t n_binds;
	struct dim_bind *binds;
	size_t n_fed_defaults;        /* inputs with a default that the caller fed */
	const struct onnxrun_tensor **feeds; /* per value: caller tensors of inputs */
	struct value_type *types;           /* per value: concrete types after prepare, their
	                                     * dims after the records in the same block */
	struct onnxrun_tensor **tensors;     /* per value: node outputs */
	struct onnxrun_type *fed;           /* per graph input (kind INPUT or DEFAULTED), in value
	                                     * order: its type at the last prepare (initializers
	                                     * cannot change, so they have none) */
	struct onnxrun_dim pub_dims[ONNXRUN_MAX_RANK]; /* value_info's dims (borrowed until the
	                                                * next call on the session) */
	const struct onnxrun_tensor **in_ptrs;
	struct onnxrun_tensor **out_ptrs;
	bool prepared, ran;
	void *arena;
	struct onnxrun__workspace ws; /* what ops allocate while computing; sized once per prepare */
	bool ws_sized;
	uint64_t planned;
	uint64_t max_memory; /* 0: the env's cap */
	uint64_t *prof_ns;   /* per node: summed compute time of the successful runs since profiling
	                      * was enabled; NULL: off */
	uint64_t *prof_run;  /* per node: its time in the current run (in prof_ns's block) */
	uint64_t prof_runs;
};

/* Whether a value is a graph input, the values whose type can change between runs. */
static bool is_input(const struct onnxrun__value *v)
{
	return v->kind == ONNXRUN__VALUE_INPUT || v->kind == ONNXRUN__VALUE_DEFAULTED;
}

static const char *input_word(const struct onnxrun__value *v)
{
	return v->kind == ONNXRUN__VALUE_DEFAULTED ? "input (with default)" : "input";
}

/* The per-value types of a session in one block: the records, then their dims, as many as
 * the value's rank at load (an op infers the same rank from concrete dims as from symbolic
 * ones; set_type widens the block for a value that differs: a fed input of an undeclared
 * rank, a custom op), or ONNXRUN_MAX_RANK where the load left it unknown or when wide. */
static struct value_type *new_types(const struct onnxrun_model *m, bool wide)
{
	const size_t nv = m->n_values ? m->n_values : 1;
	const size_t head = (nv * sizeof(struct value_type) + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t);
	size_t ndims = 0;
	struct value_type *types;
	int64_t *dims;
	for (size_t v = 0; v < m->n_values; v++)
		ndims += !wide && m->values[v].rank >= 0 ? (size_t)m->values[v].rank : ONNXRUN_MAX_RANK;
	if (!(types = onnxrun__calloc(m->env, 1, head + ndims * sizeof(int64_t))))
		return NULL;
	dims = (int64_t *)(void *)((char *)types + head);
	for (size_t v = 0; v < m->n_values; v++) {
		const int32_t rank = m->values[v].rank;
		types[v].rank = -1;
		types[v].cap = !wide && rank >= 0 ? rank : ONNXRUN_MAX_RANK;
		types[v].dims = dims;
		dims += types[v].cap;
	}
	return types;
}

/* Value v's session type as a struct onnxrun_type (no dim params: the dims are concrete),
 * unknown for an absent value (v < 0). */
static void get_type(const struct onnxrun_session *s, int32_t v, struct onnxrun_type *out)
{
	memset(out, 0, sizeof *out);
	out->shape.rank = -1;
	if (v < 0)
		return;
	out->dtype = s->types[v].dtype;
	out->shape.rank = s->types[v].rank;
	if (out->shape.rank > 0)
		memcpy(out->shape.dims, s->types[v].dims, (size_t)out->shape.rank * sizeof *out->shape.dims);
}

/* Sets value v's session type (symbolic dims are kept as unknown, -1). */
static enum onnxrun_status set_type(struct onnxrun_session *s, int32_t v, const struct onnxrun_type *in)
{
	struct value_type *t = &s->types[v];
	if (in->shape.rank > t->cap) { /* another rank than at load: room for any rank from now on */
		const struct onnxrun_model *m = s->model;
		struct value_type *wide = new_types(m, true);
		if (!wide)
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		for (size_t w = 0; w < m->n_values; w++) {
			wide[w].dtype = s->types[w].dtype;
			wide[w].rank = s->types[w].rank;
			if (wide[w].rank > 0)
				memcpy(wide[w].dims, s->types[w].dims, (size_t)wide[w].rank * sizeof *wide[w].dims);
		}
		onnxrun__free(s->env, s->types);
		s->types = wide;
		t = &s->types[v];
	}
	t->dtype = in->dtype;
	t->rank = in->shape.rank;
	if (t->rank > 0)
		memcpy(t->dims, in->shape.dims, (size_t)t->rank * sizeof *t->dims);
	return ONNXRUN_OK;
}

/* ---- create / free ---- */

enum onnxrun_status onnxrun_session_create(const struct onnxrun_model *m, struct onnxrun_session **out)
{
	const struct onnxrun_env *env;
	struct onnxrun_session *s;
	size_t nv, io, nfed = 0;
	if (!m || !out)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	env = m->env;
	nv = m->n_values ? m->n_values : 1;
	io = onnxrun__graph_max_io(m);
	for (size_t v = 0; v < m->n_values; v++)
		nfed += is_input(&m->values[v]);
	s = onnxrun__calloc(env, 1, sizeof *s);
	if (!s)
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	s->model = m;
	s->env = env;
	s->threads = 1;
	s->feeds = onnxrun__calloc(env, nv, sizeof *s->feeds);
	s->types = new_types(m, false);
	s->fed = onnxrun__calloc(env, nfed ? nfed : 1, sizeof *s->fed);
	s->tensors = onnxrun__calloc(env, nv, sizeof *s->tensors);
	s->in_ptrs = onnxrun__calloc(env, io, sizeof *s->in_ptrs);
	s->out_ptrs = onnxrun__calloc(env, io, sizeof *s->out_ptrs);
	s->bound = onnxrun__calloc(env, m->n_outputs ? m->n_outputs : 1, sizeof *s->bound);
	s->primary = onnxrun__malloc(env, nv * sizeof *s->primary);
	atomic_init(&s->cancel, 0);
	s->ctl.cancel = &s->cancel;
	atomic_init(&s->ctl.stopped, ONNXRUN__STOP_NONE);
	if (!s->feeds || !s->types || !s->fed || !s->tensors || !s->in_ptrs ||
	    !s->out_ptrs || !s->bound || !s->primary) {
		onnxrun_session_free(s);
		return ONNXRUN_ERROR_OUT_OF_MEMORY;
	}
	memset(s->primary, 0xff, nv * sizeof *s->primary);
	*out = s;
	return ONNXRUN_OK;
}

/* Frees the node-output tensors and the arena of the last prepare. */
static void release_buffers(struct onnxrun_session *s)
{
	for (size_t v = 0; v < s->model->n_values; v++) {
		onnxrun_tensor_free(s->tensors[v]);
		s->tensors[v] = NULL;
	}
	onnxrun__free(s->env, s->arena);
	s->arena = NULL;
	onnxrun__free(s->env, s->ws.base);
	memset(&s->ws, 0, sizeof s->ws);
	s->ws_sized = false;
	s->prepared = false;
	s->ran = false;
}

void onnxrun_session_free(struct onnxrun_session *s)
{
	const struct onnxrun_env *env;
	if (!s)
		return;
	env = s->env;
	if (s->tensors)
		release_buffers(s);
	for (size_t i = 0; i < s->n_binds; i++)
		onnxrun__free(env, s->binds[i].name);
	onnxrun__free(env, s->binds);
	onnxrun__free(env, s->feeds);
	onnxrun__free(env, s->types);
	onnxrun__free(env, s->fed);
	onnxrun__free(env, s->tensors);
	onnxrun__free(env, s->prof_ns);
	onnxrun__free(env, s->in_ptrs);
	onnxrun__free(env, s->out_ptrs);
	onnxrun__free(env, s->bound);
	onnxrun__free(env, s->primary);
	onnxrun__free(env, s->ws.base);
	onnxrun__pool_free(s->pool);
	onnxrun_pool_free(s->shared);
	onnxrun__free(env, s);
}

const char *onnxrun_session_error(const struct onnxrun_session *s)
{
	return s ? s->err.msg : "no session";
}

enum onnxrun_status onnxrun_session_set_threads(struct onnxrun_session *s, int threads)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	if (threads < 1)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "threads must be >= 1, not %d",
		                     threads);
	if (!ONNXRUN__OS_THREADS)
		threads = 1; /* a platform without threads (bare metal) runs everything on the caller's */
	if (!s->shared && threads != onnxrun__pool_threads(s->pool)) {
		struct onnxrun__pool *p = NULL;
		if (threads > 1 && onnxrun__pool_create(s->env, threads, &p))
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory creating %d threads",
			                     threads);
		onnxrun__pool_free(s->pool);
		s->pool = p;
	}
	s->threads = threads;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_set_pool(struct onnxrun_session *s, struct onnxrun_pool *pool)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	if (pool == s->shared)
		return ONNXRUN_OK;
	if (pool) {
		onnxrun__shared_pool_ref(pool);
		onnxrun__pool_free(s->pool);
		s->pool = NULL;
	} else if (s->threads > 1 && onnxrun__pool_create(s->env, s->threads, &s->pool)) {
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory creating %d threads",
		                     s->threads);
	}
	onnxrun_pool_free(s->shared);
	s->shared = pool;
	return ONNXRUN_OK;
}

/* The pool the session's ops run on and the threads they may use. */
static struct onnxrun__pool *run_pool(const struct onnxrun_session *s)
{
	return s->shared ? onnxrun__shared_pool(s->shared) : s->pool;
}

static int run_threads(const struct onnxrun_session *s)
{
	return s->shared ? onnxrun_pool_threads(s->shared) : s->threads;
}

void onnxrun_session_cancel(struct onnxrun_session *s)
{
	if (s)
		atomic_store_explicit(&s->cancel, 1, memory_order_relaxed);
}

void onnxrun_session_clear_cancel(struct onnxrun_session *s)
{
	if (s)
		atomic_store_explicit(&s->cancel, 0, memory_order_relaxed);
}

enum onnxrun_status onnxrun_session_set_deadline(struct onnxrun_session *s, uint64_t budget_us)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	if (budget_us && !onnxrun__os_has_clock())
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_UNSUPPORTED,
		                     "deadline: this platform has no clock; set one first (onnxrun_set_clock)");
	s->budget_ns = budget_us > UINT64_MAX / 1000 ? UINT64_MAX : budget_us * 1000; /* saturating */
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_set_max_memory(struct onnxrun_session *s, uint64_t bytes)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	s->max_memory = bytes;
	s->prepared = false; /* the next run checks the plan against the new cap */
	return ONNXRUN_OK;
}

/* ---- symbolic dims ---- */

static const int64_t *bound_dim(const struct onnxrun_session *s, const char *name)
{
	for (size_t i = 0; i < s->n_binds; i++)
		if (!strcmp(s->binds[i].name, name))
			return &s->binds[i].value;
	return NULL;
}

enum onnxrun_status onnxrun_session_bind_dim(struct onnxrun_session *s, const char *name, int64_t value)
{
	const struct onnxrun_model *m;
	struct dim_bind *grown;
	int64_t *old;
	bool known = false;
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	m = s->model;
	if (!name || value < 0)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "bind dim: a name and a value >= 0 are needed");
	for (size_t i = 0; i < m->n_params && !known; i++)
		known = !strcmp(m->params[i], name);
	if (!known)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "model has no symbolic dim '%s'",
		                     name);
	if ((old = (int64_t *)bound_dim(s, name))) {
		*old = value;
	} else {
		grown = onnxrun__malloc(s->env, (s->n_binds + 1) * sizeof *grown);
		if (!grown)
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		if (s->n_binds)
			memcpy(grown, s->binds, s->n_binds * sizeof *grown);
		grown[s->n_binds].name = onnxrun__strdup(s->env, name);
		grown[s->n_binds].value = value;
		if (!grown[s->n_binds].name) {
			onnxrun__free(s->env, grown);
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		}
		onnxrun__free(s->env, s->binds);
		s->binds = grown;
		s->n_binds++;
	}
	s->prepared = false;
	return ONNXRUN_OK;
}

/* ---- inputs ---- */

/* Checks a tensor against a value's declared dtype and shape (and bound dims). */
static enum onnxrun_status check_feed(struct onnxrun_session *s, const struct onnxrun__value *v,
                                      const struct onnxrun_tensor *t)
{
	const struct onnxrun_type *d = onnxrun__declared(v);
	struct onnxrun_type inferred;
	char a[256];
	if (v->kind == ONNXRUN__VALUE_DEFAULTED && !v->declared) {
		onnxrun__value_type(v, &inferred);
		d = &inferred;
	}
	if (d->dtype && t->dtype != d->dtype)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT, "%s '%s': expected dtype %s, got %s",
		                     input_word(v), v->name, onnxrun_dtype_name(d->dtype),
		                     onnxrun_dtype_name(t->dtype));
	if (d->shape.rank < 0)
		return ONNXRUN_OK;
	if (d->shape.rank != t->rank)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT,
		                     "%s '%s': expected rank %d %s, got rank %d", input_word(v), v->name,
		                     (int)d->shape.rank, onnxrun__shape_str(&d->shape, a, sizeof a), (int)t->rank);
	for (int32_t i = 0; i < t->rank; i++) {
		const int64_t *b = d->shape.params[i] ? bound_dim(s, d->shape.params[i]) : NULL;
		if (d->shape.dims[i] >= 0 && d->shape.dims[i] != t->dims[i])
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT,
			                     "%s '%s': dim %d is %lld but the model declares %s", input_word(v),
			                     v->name, (int)i, (long long)t->dims[i],
			                     onnxrun__shape_str(&d->shape, a, sizeof a));
		if (b && *b != t->dims[i])
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT,
			                     "%s '%s': dim %d ('%s') is %lld but '%s' is bound to %lld",
			                     input_word(v), v->name, (int)i, d->shape.params[i], (long long)t->dims[i],
			                     d->shape.params[i], (long long)*b);
	}
	return ONNXRUN_OK;
}

static enum onnxrun_status set_feed(struct onnxrun_session *s, int32_t v, const struct onnxrun_tensor *t)
{
	enum onnxrun_status st;
	if (!t)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "input '%s': tensor is NULL",
		                     s->model->values[v].name);
	if ((st = check_feed(s, &s->model->values[v], t)))
		return st;
	if (s->model->values[v].kind == ONNXRUN__VALUE_DEFAULTED && !s->feeds[v])
		s->n_fed_defaults++;
	s->feeds[v] = t;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_set_input(struct onnxrun_session *s, size_t i, const struct onnxrun_tensor *t)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	if (i >= s->model->n_inputs)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "input index %zu is out of range (%zu inputs)",
		                     i, s->model->n_inputs);
	return set_feed(s, s->model->inputs[i], t);
}

enum onnxrun_status onnxrun_session_set_input_by_name(struct onnxrun_session *s, const char *name,
                                                      const struct onnxrun_tensor *t)
{
	int32_t v;
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	if (!name)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "input name is NULL");
	v = onnxrun__model_find_value(s->model, name);
	if (v < 0 || (s->model->values[v].kind != ONNXRUN__VALUE_INPUT &&
	              s->model->values[v].kind != ONNXRUN__VALUE_DEFAULTED))
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT, "model has no input named '%s'", name);
	return set_feed(s, v, t);
}

/* ---- outputs in caller memory ---- */

static void type_of(const struct onnxrun_tensor *t, struct onnxrun_type *out);
static const struct onnxrun_tensor *value_tensor(const struct onnxrun_session *s, int32_t v);

/* Checks bound tensor t of output i against type `want` (unknown parts match anything). */
static enum onnxrun_status check_bound(struct onnxrun_session *s, size_t i, const struct onnxrun_tensor *t,
                                       const struct onnxrun_type *want)
{
	const struct onnxrun__value *v = &s->model->values[s->model->outputs[i]];
	struct onnxrun_type got;
	bool same = !want->dtype || want->dtype == t->dtype;
	char a[256], b[256];
	if (same && want->shape.rank >= 0) {
		same = want->shape.rank == t->rank;
		for (int32_t d = 0; same && d < t->rank; d++)
			same = want->shape.dims[d] < 0 || want->shape.dims[d] == t->dims[d];
	}
	if (same)
		return ONNXRUN_OK;
	type_of(t, &got);
	return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
	                     "output '%s' (index %zu): the bound tensor is %s %s but the output is %s %s "
	                     "(onnxrun_session_set_output)", v->name, i, onnxrun_dtype_name(t->dtype),
	                     onnxrun__shape_str(&got.shape, a, sizeof a),
	                     want->dtype ? onnxrun_dtype_name(want->dtype) : "of unknown dtype",
	                     want->shape.rank >= 0 ? onnxrun__shape_str(&want->shape, b, sizeof b) : "[unknown shape]");
}

enum onnxrun_status onnxrun_session_set_output(struct onnxrun_session *s, size_t i, struct onnxrun_tensor *t)
{
	const struct onnxrun_model *m;
	enum onnxrun_status st;
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	m = s->model;
	if (i >= m->n_outputs)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "output index %zu is out of range (%zu outputs)", i, m->n_outputs);
	if (t && t->dtype == ONNXRUN_DTYPE_STRING)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
		                     "output '%s' (index %zu): string outputs cannot be bound",
		                     m->values[m->outputs[i]].name, i);
	if (t) {
		struct onnxrun_type want;
		onnxrun__value_type(&m->values[m->outputs[i]], &want);
		if ((st = check_bound(s, i, t, &want)))
			return st;
	}
	if (!t != !s->bound[i])
		s->prepared = false; /* the plan allocates unbound outputs only */
	if (t != s->bound[i])
		s->ran = false; /* the last run's outputs may live in the tensor unbound now */
	s->bound[i] = t;
	return ONNXRUN_OK;
}

/* True when [a, a+na) and [b, b+nb) share a byte. */
static bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
	const char *x = a, *y = b;
	return na && nb && x < y + nb && y < x + na;
}

/* Refuses bound output i (tensor t, computed by a node) over the memory fed to value w. */
static enum onnxrun_status check_feed_overlap(struct onnxrun_session *s, size_t i, const struct onnxrun_tensor *t,
                                              int32_t w)
{
	const struct onnxrun_model *m = s->model;
	const struct onnxrun_tensor *f = s->feeds[w];
	if (!f || !overlap(t->data, t->nbytes, f->data, f->nbytes))
		return ONNXRUN_OK;
	return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
	                     "output '%s' (index %zu): the bound tensor's memory overlaps %s '%s'",
	                     m->values[m->outputs[i]].name, i, input_word(&m->values[w]), m->values[w].name);
}

/* After inference: every bound output against its concrete type, and its memory against
 * the fed inputs' and the other bound outputs' (except a copy of the same value onto the
 * same bytes). Sets primary[]: the output index each node-computed value is written to. */
static enum onnxrun_status check_bindings(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	enum onnxrun_status st;
	for (size_t i = 0; i < m->n_outputs; i++)
		s->primary[m->outputs[i]] = -1;
	for (size_t i = 0; i < m->n_outputs; i++) {
		const struct onnxrun_tensor *t = s->bound[i];
		const int32_t v = m->outputs[i];
		struct onnxrun_type want;
		if (!t)
			continue;
		get_type(s, v, &want);
		if ((st = check_bound(s, i, t, &want)))
			return st;
		if (m->values[v].producer >= 0 && s->primary[v] < 0)
			s->primary[v] = (int32_t)i;
		for (size_t k = 0; k < m->n_inputs && m->values[v].producer >= 0; k++)
			if ((st = check_feed_overlap(s, i, t, m->inputs[k])))
				return st;
		/* inputs with a default that the caller fed (set_input_by_name) are caller memory too */
		for (size_t w = 0; s->n_fed_defaults && w < m->n_values && m->values[v].producer >= 0; w++)
			if (m->values[w].kind == ONNXRUN__VALUE_DEFAULTED && (st = check_feed_overlap(s, i, t, (int32_t)w)))
				return st;
		for (size_t j = 0; j < i; j++) {
			const struct onnxrun_tensor *u = s->bound[j];
			if (u && overlap(t->data, t->nbytes, u->data, u->nbytes) &&
			    (m->outputs[j] != v || u->data != t->data))
				return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_ARGUMENT,
				                     "output '%s' (index %zu): the bound tensor's memory overlaps the one "
				                     "bound to output '%s' (index %zu)", m->values[v].name, i,
				                     m->values[m->outputs[j]].name, j);
		}
	}
	return ONNXRUN_OK;
}

/* Before a run: node outputs that are bound are written straight into the bound memory
 * (the tensor bound at this run; prepare made the session's tensor borrow it). */
static void point_at_bindings(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	for (size_t i = 0; i < m->n_outputs; i++) {
		const int32_t v = m->outputs[i];
		if (s->bound[i] && s->primary[v] == (int32_t)i)
			s->tensors[v]->data = s->bound[i]->data;
	}
}

/* After a run: bound outputs that nothing wrote into (a graph input or initializer as an
 * output, or a second index of a value bound elsewhere) get a copy. */
static void copy_bindings(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	for (size_t i = 0; i < m->n_outputs; i++) {
		const int32_t v = m->outputs[i];
		const struct onnxrun_tensor *src;
		if (!s->bound[i] || s->primary[v] == (int32_t)i)
			continue;
		src = value_tensor(s, v);
		if (src && src->data != s->bound[i]->data && s->bound[i]->nbytes)
			memmove(s->bound[i]->data, src->data, s->bound[i]->nbytes);
	}
}

/* ---- prepare: concrete types, plan, buffers ---- */

static const struct onnxrun_tensor *value_tensor(const struct onnxrun_session *s, int32_t v)
{
	const struct onnxrun__value *val = &s->model->values[v];
	switch (val->kind) {
	case ONNXRUN__VALUE_INPUT: return s->feeds[v];
	case ONNXRUN__VALUE_DEFAULTED: return s->feeds[v] ? s->feeds[v] : val->init;
	case ONNXRUN__VALUE_INITIALIZER: return val->init;
	default: return s->tensors[v];
	}
}

static void type_of(const struct onnxrun_tensor *t, struct onnxrun_type *out)
{
	memset(out, 0, sizeof *out);
	out->dtype = t->dtype;
	out->shape.rank = t->rank;
	memcpy(out->shape.dims, t->dims, (size_t)t->rank * sizeof *t->dims);
}

/* The type of an input that is not fed: its declared shape with bound dims filled in. */
static enum onnxrun_status unfed_type(struct onnxrun_session *s, const struct onnxrun__value *v,
                                      struct onnxrun_type *t)
{
	*t = *onnxrun__declared(v);
	if (!t->dtype || t->shape.rank < 0)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT,
		                     "input '%s' is not set and its type is not declared", v->name);
	for (int32_t i = 0; i < t->shape.rank; i++) {
		const int64_t *b;
		if (t->shape.dims[i] >= 0)
			continue;
		b = t->shape.params[i] ? bound_dim(s, t->shape.params[i]) : NULL;
		if (!b)
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT,
			                     "input '%s' is not set and its dim %d%s%s%s is unknown", v->name, (int)i,
			                     t->shape.params[i] ? " ('" : "", t->shape.params[i] ? t->shape.params[i] : "",
			                     t->shape.params[i] ? "')" : "");
		t->shape.dims[i] = *b;
	}
	return ONNXRUN_OK;
}

/* Where a symbolic dim was first seen: input index and dim (param NULL: not yet). */
struct param_seen {
	const char *param;
	int64_t input;
	int32_t dim;
};

/* The table slot of interned param p (open addressing on the pointer). */
static size_t seen_slot(const struct param_seen *t, size_t n, const char *p)
{
	size_t i = (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) & (n - 1);
	while (t[i].param && t[i].param != p)
		i = (i + 1) & (n - 1);
	return i;
}

/* Every symbolic dim must take one value across all inputs: one pass over the inputs'
 * dims, with the first place each name was seen in a hash table (names are interned). */
static enum onnxrun_status check_params(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	struct param_seen *t;
	enum onnxrun_status st = ONNXRUN_OK;
	size_t n = 16;
	while (n < 2 * m->n_params)
		n *= 2;
	if (!m->n_params)
		return ONNXRUN_OK;
	if (!(t = onnxrun__calloc(s->env, n, sizeof *t)))
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	for (size_t i = 0; i < m->n_inputs && !st; i++) {
		const struct onnxrun__value *a = &m->values[m->inputs[i]];
		const struct onnxrun_shape *declared = &onnxrun__declared(a)->shape;
		for (int32_t d = 0; d < declared->rank && !st; d++) {
			const char *p = declared->params[d];
			struct param_seen *e;
			const struct onnxrun__value *b;
			int64_t va = s->types[m->inputs[i]].dims[d], vb;
			if (!p || declared->dims[d] >= 0)
				continue;
			e = &t[seen_slot(t, n, p)];
			if (!e->param) {
				*e = (struct param_seen){ p, (int64_t)i, d };
				continue;
			}
			b = &m->values[m->inputs[e->input]];
			vb = s->types[m->inputs[e->input]].dims[e->dim];
			if (va != vb)
				st = onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT,
				                   "input '%s': dim %d ('%s') is %lld but input '%s' has '%s' = %lld",
				                   a->name, (int)d, p, (long long)va, b->name, p, (long long)vb);
		}
	}
	onnxrun__free(s->env, t);
	return st;
}

/* Sets types[] for inputs and constants from feeds, defaults and bound dims. */
static enum onnxrun_status source_types(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	enum onnxrun_status st;
	for (size_t v = 0; v < m->n_values; v++) {
		const struct onnxrun__value *val = &m->values[v];
		struct onnxrun_type t;
		if (val->kind == ONNXRUN__VALUE_INTERMEDIATE) {
			s->types[v].dtype = ONNXRUN_DTYPE_UNDEFINED;
			s->types[v].rank = -1;
			continue;
		}
		if (value_tensor(s, (int32_t)v))
			type_of(value_tensor(s, (int32_t)v), &t);
		else if ((st = unfed_type(s, val, &t)))
			return st;
		if ((st = set_type(s, (int32_t)v, &t)))
			return st;
	}
	return check_params(s);
}

/* What prepare would allocate, from the inferred shapes: checked against the cap before
 * anything is allocated. */
struct mem_need {
	uint64_t cap;
	uint64_t arena_sum; /* sum of the arena items' aligned sizes (>= the arena) */
	uint64_t outputs;   /* graph outputs and string tensors, allocated on their own */
	uint64_t largest;   /* the largest single tensor, for the message */
	int32_t largest_value;
	size_t largest_node;
};

static uint64_t session_cap(const struct onnxrun_session *s)
{
	return s->max_memory ? s->max_memory : onnxrun__env_max_memory(s->env);
}

/* Bytes of node k's output v (LIMIT when they overflow or alone pass the cap), added to
 * *sum (64-byte aligned when align). */
static enum onnxrun_status need_bytes(struct onnxrun_session *s, size_t k, int32_t v, bool align,
                                      uint64_t *sum, struct mem_need *need, size_t *out)
{
	const struct onnxrun_model *m = s->model;
	const struct onnxrun__node *node = &m->nodes[k];
	int64_t numel;
	size_t bytes;
	uint64_t padded;
	if (!onnxrun__dims_numel(s->types[v].rank, s->types[v].dims, &numel))
		return onnxrun__node_fail(&s->err, ONNXRUN_ERROR_LIMIT, node,
		                          "output '%s': its element count overflows int64", m->values[v].name);
	if (!onnxrun__tensor_bytes(s->types[v].dtype, numel, &bytes))
		return onnxrun__node_fail(&s->err, ONNXRUN_ERROR_LIMIT, node,
		                          "output '%s': byte size of %lld %s elements overflows" ONNXRUN__SIZE_T_NOTE,
		                          m->values[v].name, (long long)numel, onnxrun_dtype_name(s->types[v].dtype),
		                          ONNXRUN__SIZE_T_BITS);
	if (bytes > need->cap)
		return onnxrun__node_fail(&s->err, ONNXRUN_ERROR_LIMIT, node,
		                          "output '%s' needs %zu bytes, above the memory limit of %llu bytes "
		                          "(onnxrun_session_set_max_memory)", m->values[v].name, bytes,
		                          (unsigned long long)need->cap);
	padded = align ? ((uint64_t)bytes + 63) / 64 * 64 : bytes;
	if (bytes >= need->largest) {
		need->largest = bytes;
		need->largest_value = v;
		need->largest_node = k;
	}
	*sum = UINT64_MAX - *sum < padded ? UINT64_MAX : *sum + padded; /* saturating */
	*out = bytes;
	return ONNXRUN_OK;
}

/* Fails with LIMIT when the arena plus the outputs pass the cap, naming the largest tensor. */
static enum onnxrun_status check_need(struct onnxrun_session *s, const struct mem_need *need,
                                      uint64_t arena)
{
	const struct onnxrun_model *m = s->model;
	uint64_t total = arena + need->outputs;
	if (total >= arena && total <= need->cap)
		return ONNXRUN_OK;
	if (total < arena)
		total = UINT64_MAX;
	return onnxrun__fail(&s->err, ONNXRUN_ERROR_LIMIT,
	                     "planned memory of %llu bytes (arena %llu + outputs %llu) is above the memory "
	                     "limit of %llu bytes (onnxrun_session_set_max_memory); the largest tensor is "
	                     "output '%s' of node '%s' (%s), %llu bytes",
	                     (unsigned long long)total, (unsigned long long)arena,
	                     (unsigned long long)need->outputs, (unsigned long long)need->cap,
	                     m->values[need->largest_value].name, m->nodes[need->largest_node].name,
	                     m->nodes[need->largest_node].op_type, (unsigned long long)need->largest);
}

/* Plans the arena for node outputs that are not graph outputs or strings, after checking
 * every tensor prepare will allocate against the memory cap. */
static enum onnxrun_status plan_arena(struct onnxrun_session *s, struct onnxrun__plan_item *items,
                                      int32_t *item_value, int32_t *item_of, size_t *n_items,
                                      size_t *arena_size)
{
	const struct onnxrun_model *m = s->model;
	struct mem_need need = { session_cap(s), 0, 0, 0, -1, 0 };
	enum onnxrun_status st;
	size_t n = 0, bytes;
	for (size_t k = 0; k < m->n_nodes; k++) {
		const struct onnxrun__node *node = &m->nodes[k];
		for (size_t o = 0; o < node->n_outputs; o++) {
			int32_t v = node->outputs[o];
			if (v < 0)
				continue;
			if (m->values[v].is_output && s->primary[v] >= 0)
				continue; /* written into the caller's memory */
			if (m->values[v].is_output || s->types[v].dtype == ONNXRUN_DTYPE_STRING) {
				if ((st = need_bytes(s, k, v, false, &need.outputs, &need, &bytes)))
					return st;
				continue;
			}
			if ((st = need_bytes(s, k, v, true, &need.arena_sum, &need, &items[n].size)))
				return st;
			items[n].first = items[n].last = k;
			item_value[n++] = v;
		}
	}
	/* Outputs alone over the cap fail here. Arena offsets never pass the sum of the items'
	 * aligned sizes, so when that sum fits in size_t the planner cannot overflow. */
	if (need.outputs > need.cap)
		return check_need(s, &need, 0);
	if (need.arena_sum > SIZE_MAX / 2)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_LIMIT,
		                     "intermediate tensors need more than %zu bytes", SIZE_MAX / 2);
	/* A buffer lives until its last consumer (item_value maps back, item_of forward: linear
	 * in the graph's size, so a million-node model plans in milliseconds). */
	for (size_t it = 0; it < n; it++)
		item_of[item_value[it]] = (int32_t)it;
	for (size_t k = 0; k < m->n_nodes; k++)
		for (size_t i = 0; i < m->nodes[k].n_inputs; i++) {
			int32_t v = m->nodes[k].inputs[i], it = v >= 0 ? item_of[v] : -1;
			if (it >= 0 && items[it].last < k)
				items[it].last = k;
		}
	*n_items = n;
	switch (onnxrun__plan(s->env, items, n, arena_size)) {
	case ONNXRUN_OK: return check_need(s, &need, *arena_size);
	case ONNXRUN_ERROR_OUT_OF_MEMORY: return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory planning memory");
	default: return onnxrun__fail(&s->err, ONNXRUN_ERROR_LIMIT, "memory plan does not fit in the address space");
	}
}

/* Creates the tensor objects of node outputs: arena slices or owned buffers. */
static enum onnxrun_status make_tensors(struct onnxrun_session *s, const struct onnxrun__plan_item *items,
                                        const int32_t *item_of)
{
	const struct onnxrun_model *m = s->model;
	enum onnxrun_status st;
	for (size_t k = 0; k < m->n_nodes; k++) {
		const struct onnxrun__node *node = &m->nodes[k];
		for (size_t o = 0; o < node->n_outputs; o++) {
			int32_t v = node->outputs[o];
			void *at = NULL;
			if (v < 0)
				continue;
			if (item_of[v] >= 0 && items[item_of[v]].size)
				at = (char *)s->arena + items[item_of[v]].offset;
			if (m->values[v].is_output && s->primary[v] >= 0)
				at = s->bound[s->primary[v]]->data; /* NULL when empty: nothing allocated */
			if (at || (m->values[v].is_output && s->primary[v] >= 0))
				st = onnxrun__tensor_new(s->env, s->types[v].dtype, s->types[v].rank, s->types[v].dims, at,
				                         &s->err, &s->tensors[v]);
			else /* the node writes it whole: no zeroing (docs/embedding.md, Stopping a run) */
				st = onnxrun__tensor_new_uninit(s->env, s->types[v].dtype, s->types[v].rank,
				                                s->types[v].dims, &s->err, &s->tensors[v]);
			if (st) {
				onnxrun__err_prefix(&s->err, "node '%s' (%s): output '%s'", node->name, node->op_type,
				                    m->values[v].name);
				return st;
			}
			if (m->values[v].is_output && s->primary[v] < 0)
				s->planned += s->tensors[v]->nbytes;
			if (onnxrun_tensor_set_name(s->tensors[v], m->values[v].name))
				return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		}
	}
	return ONNXRUN_OK;
}

static enum onnxrun_status allocate(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	size_t nv = m->n_values ? m->n_values : 1, n_items = 0, arena_size = 0;
	struct onnxrun__plan_item *items = onnxrun__calloc(s->env, nv, sizeof *items);
	int32_t *item_value = onnxrun__calloc(s->env, nv, sizeof *item_value);
	int32_t *item_of = onnxrun__malloc(s->env, nv * sizeof *item_of);
	enum onnxrun_status st;
	if (!items || !item_value || !item_of) {
		st = onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory planning memory");
		goto fail;
	}
	memset(item_of, 0xff, nv * sizeof *item_of); /* -1: not in the arena */
	if ((st = plan_arena(s, items, item_value, item_of, &n_items, &arena_size)))
		goto fail;
	if (arena_size && !(s->arena = onnxrun__malloc_aligned(s->env, arena_size))) {
		st = onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY,
		                   "out of memory allocating the %zu-byte arena", arena_size);
		goto fail;
	}
	s->planned = arena_size;
	st = make_tensors(s, items, item_of);
fail:
	onnxrun__free(s->env, items);
	onnxrun__free(s->env, item_value);
	onnxrun__free(s->env, item_of);
	return st;
}

static enum onnxrun_status size_workspace(struct onnxrun_session *s);
static bool inputs_fed(const struct onnxrun_session *s);
static enum onnxrun_status run_stopped(struct onnxrun_session *s, size_t k, const char *where, uint64_t start);

/* Where a stop seen while preparing is reported. */
#define WHILE_PREPARING " while preparing (shape inference and memory planning)"

/* Starts the stop state of a run or a prepare that starts now; returns the time. */
static uint64_t ctl_start(struct onnxrun_session *s)
{
	const uint64_t start = onnxrun__now_ns();
	/* a deadline past the clock's range is none (UINT64_MAX us is the natural "no timeout") */
	s->ctl.deadline_ns = s->budget_ns && s->budget_ns < UINT64_MAX - start ? start + s->budget_ns : 0;
	atomic_store_explicit(&s->ctl.stopped, ONNXRUN__STOP_NONE, memory_order_relaxed);
	return start;
}

/* Prepare under the stop state s->ctl (started at `start`): checked every 64 nodes of
 * shape inference and after allocating, so a huge graph stops in bounded steps. */
static enum onnxrun_status prepare(struct onnxrun_session *s, uint64_t start)
{
	const struct onnxrun_model *m = s->model;
	enum onnxrun_status st;
	release_buffers(s);
	if (onnxrun__runctl_check(&s->ctl))
		return run_stopped(s, m->n_nodes, WHILE_PREPARING, start);
	if ((st = source_types(s)))
		return st;
	{
		/* the infer calls' types (a node's inputs and outputs), only for these calls: its
		 * bytes serve the tensors' records after it (a microcontroller's arena) */
		struct onnxrun_type *scratch = onnxrun__calloc(s->env, onnxrun__graph_max_io(m), sizeof *scratch);
		if (!scratch)
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
		for (size_t k = 0; k < m->n_nodes && !st; k++) {
			const struct onnxrun__node *node = &m->nodes[k];
			struct onnxrun_type *out = scratch + node->n_inputs;
			if (k % 64 == 63 && onnxrun__runctl_check(&s->ctl)) {
				st = run_stopped(s, m->n_nodes, WHILE_PREPARING, start);
				break;
			}
			for (size_t i = 0; i < node->n_inputs; i++)
				get_type(s, node->inputs[i], &scratch[i]);
			st = onnxrun__graph_infer_node(m, k, scratch, out, &s->err);
			for (size_t o = 0; o < node->n_outputs && !st; o++)
				if (node->outputs[o] >= 0)
					st = set_type(s, node->outputs[o], &out[o]);
		}
		onnxrun__free(s->env, scratch);
		if (st)
			return st;
	}
	for (size_t v = 0; v < m->n_values; v++)
		if (m->values[v].producer >= 0 && !onnxrun__dims_concrete(s->types[v].rank, s->types[v].dims))
			return onnxrun__node_fail(&s->err, ONNXRUN_ERROR_RUNTIME, &m->nodes[m->values[v].producer],
			                          "output '%s' has no concrete shape", m->values[v].name);
	if ((st = check_bindings(s)))
		return st;
	if ((st = allocate(s))) {
		release_buffers(s);
		return st;
	}
	if (onnxrun__runctl_check(&s->ctl)) {
		release_buffers(s);
		return run_stopped(s, m->n_nodes, WHILE_PREPARING, start);
	}
	for (size_t v = 0, k = 0; v < m->n_values; v++)
		if (is_input(&m->values[v]))
			get_type(s, (int32_t)v, &s->fed[k++]);
	s->prepared = true;
	/* with the inputs set, the ops' workspace now: a run then allocates nothing */
	if (inputs_fed(s)) {
		point_at_bindings(s);
		if ((st = size_workspace(s)))
			return st;
	}
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_prepare(struct onnxrun_session *s)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	/* prepare() sizes the ops' workspace when the inputs are set */
	return prepare(s, ctl_start(s));
}

/* True when a fed tensor's dtype or shape differs from the one the plan was made for. */
static bool feeds_changed(const struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	for (size_t v = 0, k = 0; v < m->n_values; v++) {
		const struct onnxrun_tensor *t;
		const struct onnxrun_type *was;
		if (!is_input(&m->values[v]))
			continue;
		was = &s->fed[k++];
		t = value_tensor(s, (int32_t)v);
		if (!t || t->dtype != was->dtype || t->rank != was->shape.rank ||
		    memcmp(t->dims, was->shape.dims, (size_t)t->rank * sizeof *t->dims))
			return true;
	}
	return false;
}

/* ---- run ---- */

static enum onnxrun_status run_node(struct onnxrun_session *s, size_t k, bool measuring)
{
	const struct onnxrun__node *node = &s->model->nodes[k];
	struct onnxrun__pool *pool = run_pool(s);
	struct onnxrun_op_context ctx = { node, &s->err, s->env, run_threads(s), node->op_state, s->model, NULL,
		                          pool, &s->ctl };
	enum onnxrun_status st;
	for (size_t i = 0; i < node->n_inputs; i++)
		s->in_ptrs[i] = node->inputs[i] >= 0 ? value_tensor(s, node->inputs[i]) : NULL;
	for (size_t o = 0; o < node->n_outputs; o++) {
		struct onnxrun_tensor *t = node->outputs[o] >= 0 ? s->tensors[node->outputs[o]] : NULL;
		if (t)
			onnxrun__tensor_strings_clear(t);
		s->out_ptrs[o] = t;
	}
	if (measuring)
		return node->op->compute(&ctx, s->in_ptrs, node->n_inputs, s->out_ptrs, node->n_outputs);
	uint64_t t0 = s->prof_ns ? onnxrun__now_ns() : 0;
	if (s->ws.base)
		onnxrun__workspace_enter(&s->ws);
	st = node->op->compute(&ctx, s->in_ptrs, node->n_inputs, s->out_ptrs, node->n_outputs);
	if (s->ws.base) {
		onnxrun__workspace_leave();
		s->ws.used = 0;
	}
	if (s->prof_ns)
		s->prof_run[k] = onnxrun__now_ns() - t0; /* summed when the whole run succeeds */
	if (st && !s->err.msg[0])
		onnxrun__node_fail(&s->err, st, node, "failed: %s", onnxrun_status_str(st));
	return st;
}

/* Sizes the workspace (runtime.h): every node computes once with the run marked stopped
 * (ONNXRUN__STOP_MEASURE), so ops allocate what they would and skip their work, while the
 * bytes their allocations would take from a workspace are measured; then the workspace is
 * allocated. Needs every input fed (the ops read their inputs' tensors). */
static enum onnxrun_status size_workspace(struct onnxrun_session *s)
{
	const struct onnxrun_model *m = s->model;
	struct onnxrun__workspace meas;
	memset(&meas, 0, sizeof meas);
	onnxrun__free(s->env, s->ws.base);
	memset(&s->ws, 0, sizeof s->ws);
	atomic_store_explicit(&s->ctl.stopped, ONNXRUN__STOP_MEASURE, memory_order_relaxed);
	for (size_t k = 0; k < m->n_nodes; k++) {
		const struct onnxrun_op *op = m->nodes[k].op;
		/* custom ops are not called: they are not told of the measuring (and allocate
		 * through the public API, outside any workspace, anyway) */
		if (s->env->n_ops && op >= s->env->ops && op < s->env->ops + s->env->n_ops)
			continue;
		onnxrun__workspace_enter(&meas);
		(void)run_node(s, k, true);
		onnxrun__workspace_leave();
		meas.used = 0;
	}
	atomic_store_explicit(&s->ctl.stopped, ONNXRUN__STOP_NONE, memory_order_relaxed);
	/* what the ops said while stopped is of no interest; prepare and run start with the
	 * message cleared */
	onnxrun__err_clear(&s->err);
	if (meas.overflows)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY,
		                     "out of memory measuring the workspace of the ops");
	if (meas.need && !(s->ws.base = onnxrun__malloc_aligned(s->env, meas.need)))
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY,
		                     "out of memory allocating the %zu-byte workspace of the ops", meas.need);
	s->ws.size = meas.need;
	s->ws_sized = true;
	return ONNXRUN_OK;
}

static bool inputs_fed(const struct onnxrun_session *s)
{
	for (size_t i = 0; i < s->model->n_inputs; i++)
		if (!s->feeds[s->model->inputs[i]])
			return false;
	return true;
}

/* Ends a run (or prepare) that was told to stop (s->ctl.stopped) in node k (k == n_nodes:
 * outside any node), `where` saying more (" before the node started", ...): clears the
 * cancel request and reports ONNXRUN_ERROR_CANCELLED naming the node. */
static enum onnxrun_status run_stopped(struct onnxrun_session *s, size_t k, const char *where, uint64_t start)
{
	const struct onnxrun_model *m = s->model;
	const bool deadline = atomic_load_explicit(&s->ctl.stopped, memory_order_relaxed) == ONNXRUN__STOP_DEADLINE;
	char why[240];
	atomic_store_explicit(&s->cancel, 0, memory_order_relaxed);
	s->ran = false;
	if (deadline)
		snprintf(why, sizeof why,
		         "deadline of %g s exceeded (onnxrun_session_set_deadline): run stopped%s after %.3g s",
		         (double)s->budget_ns / 1e9, where, (double)(onnxrun__now_ns() - start) / 1e9);
	else
		snprintf(why, sizeof why, "run cancelled%s (onnxrun_session_cancel)", where);
	if (k >= m->n_nodes)
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_CANCELLED, "%s", why);
	return onnxrun__node_fail(&s->err, ONNXRUN_ERROR_CANCELLED, &m->nodes[k], "%s", why);
}

enum onnxrun_status onnxrun_session_run(struct onnxrun_session *s)
{
	const struct onnxrun_model *m;
	enum onnxrun_status st;
	uint64_t start;
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__err_clear(&s->err);
	m = s->model;
	start = ctl_start(s);
	if (onnxrun__runctl_check(&s->ctl))
		return run_stopped(s, m->n_nodes, " before it started", start);
	for (size_t i = 0; i < m->n_inputs; i++)
		if (!s->feeds[m->inputs[i]])
			return onnxrun__fail(&s->err, ONNXRUN_ERROR_INVALID_INPUT, "input '%s' is not set",
			                     m->values[m->inputs[i]].name);
	if ((!s->prepared || feeds_changed(s)) && (st = prepare(s, start)))
		return st;
	s->ran = false;
	if ((st = check_bindings(s)))
		return st;
	point_at_bindings(s);
	if (!s->ws_sized && (st = size_workspace(s)))
		return st;
	for (size_t k = 0; k < m->n_nodes; k++) {
		if (onnxrun__runctl_check(&s->ctl))
			return run_stopped(s, k, " before the node started", start);
		st = run_node(s, k, false);
		/* a stop seen during the node may have skipped work items: its result is dropped */
		if (onnxrun__runctl_check(&s->ctl))
			return run_stopped(s, k, "", start);
		if (st)
			return st;
	}
	copy_bindings(s);
	s->ran = true;
	if (s->prof_ns) {
		for (size_t k = 0; k < m->n_nodes; k++)
			s->prof_ns[k] += s->prof_run[k];
		s->prof_runs++;
	}
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_set_profiling(struct onnxrun_session *s, int enable)
{
	if (!s)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	onnxrun__free(s->env, s->prof_ns);
	s->prof_ns = s->prof_run = NULL;
	s->prof_runs = 0;
	if (enable && !(s->prof_ns = onnxrun__calloc(s->env, 2 * (s->model->n_nodes + 1), sizeof *s->prof_ns)))
		return onnxrun__fail(&s->err, ONNXRUN_ERROR_OUT_OF_MEMORY, "out of memory");
	if (s->prof_ns)
		s->prof_run = s->prof_ns + s->model->n_nodes + 1;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_node_time(const struct onnxrun_session *s, size_t i, uint64_t *total_ns,
                                              uint64_t *runs)
{
	if (!s || !s->prof_ns || i >= s->model->n_nodes || !total_ns || !runs)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	*total_ns = s->prof_ns[i];
	*runs = s->prof_runs;
	return ONNXRUN_OK;
}

/* ---- results ---- */

enum onnxrun_status onnxrun_session_output(const struct onnxrun_session *s, size_t i,
                                           const struct onnxrun_tensor **out)
{
	if (!s || !out || i >= s->model->n_outputs || !s->ran)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	*out = s->bound[i] ? s->bound[i] : value_tensor(s, s->model->outputs[i]);
	return *out ? ONNXRUN_OK : ONNXRUN_ERROR_INVALID_ARGUMENT;
}

enum onnxrun_status onnxrun_session_value_info(const struct onnxrun_session *cs, const char *name,
                                               struct onnxrun_value_info *out)
{
	struct onnxrun_session *s = (struct onnxrun_session *)cs; /* pub_dims: the session's buffer */
	struct onnxrun_dim *dims;
	int32_t v;
	if (!s || !name || !out || !s->prepared)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	if ((v = onnxrun__model_find_value(s->model, name)) < 0)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	dims = s->pub_dims;
	for (int32_t i = 0; i < s->types[v].rank; i++) {
		dims[i].value = s->types[v].dims[i];
		dims[i].param = NULL;
	}
	out->name = s->model->values[v].name;
	out->dtype = s->types[v].dtype;
	out->rank = s->types[v].rank;
	out->dims = dims;
	return ONNXRUN_OK;
}

enum onnxrun_status onnxrun_session_planned_bytes(const struct onnxrun_session *s, uint64_t *out)
{
	if (!s || !out || !s->prepared)
		return ONNXRUN_ERROR_INVALID_ARGUMENT;
	*out = s->planned;
	return ONNXRUN_OK;
}
