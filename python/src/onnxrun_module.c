/*
 * onnxrun_module.c - the C extension `onnxrun._onnxrun`: a thin binding of the public C API
 * (include/onnxrun.h) to Python and numpy. Everything the library does (loading, checking,
 * shape inference, running, tensor files) stays in the library; this file converts between
 * numpy arrays and onnxrun tensors and turns statuses into exceptions.
 *
 * Ownership and threads:
 *  - A Session object owns one env, one model, a shared thread pool (threads > 1) and a pool
 *    of library sessions over the model: each run takes an idle library session or creates
 *    one, so concurrent runs on one Session run in parallel while each library session is
 *    used by one thread at a time, as the header requires. Each Session has its own env, so
 *    the env's error message and memory cap are never shared between Sessions; within one,
 *    env-level calls (tensor wrapping) happen with the GIL held, never concurrently.
 *  - run() releases the GIL around onnxrun_session_run (and model loading around
 *    onnxrun_model_load_*).
 *  - Input arrays are wrapped without a copy when they are C-contiguous, aligned and in
 *    native byte order (otherwise numpy copies them once); the wrappers live only for the
 *    run. Outputs are copied into new numpy arrays that own their memory, except outputs
 *    bound to a caller's array (IO binding), which the library computes in place.
 *  - RunControl (RunOptions) lists the library sessions running with it, so that setting
 *    terminate from any thread cancels them (onnxrun_session_cancel).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <onnxrun.h>

/* ---- exceptions ---- */

static PyObject *Error;           /* onnxrun.Error: base of every library error */
static PyObject *InvalidArgument; /* ONNXRUN_ERROR_INVALID_ARGUMENT, also a ValueError */
static PyObject *OutOfMemory;     /* ONNXRUN_ERROR_OUT_OF_MEMORY, also a MemoryError */
static PyObject *FileError;       /* ONNXRUN_ERROR_IO, also an OSError */
static PyObject *InvalidModel;    /* ONNXRUN_ERROR_INVALID_MODEL */
static PyObject *Unsupported;     /* ONNXRUN_ERROR_UNSUPPORTED, also a NotImplementedError */
static PyObject *InvalidInput;    /* ONNXRUN_ERROR_INVALID_INPUT, also a ValueError */
static PyObject *LimitExceeded;   /* ONNXRUN_ERROR_LIMIT */
static PyObject *RuntimeFailure;  /* ONNXRUN_ERROR_RUNTIME, also a RuntimeError */
static PyObject *Cancelled;       /* ONNXRUN_ERROR_CANCELLED */

/* The numpy dtype used for bfloat16 outputs and accepted for bfloat16 inputs besides the
 * uint16 view: set by onnxrun/__init__.py when ml_dtypes is importable. NULL: uint16. */
static PyArray_Descr *bfloat16_descr;

static PyObject *status_exception(enum onnxrun_status st)
{
	switch (st) {
	case ONNXRUN_ERROR_INVALID_ARGUMENT: return InvalidArgument;
	case ONNXRUN_ERROR_OUT_OF_MEMORY: return OutOfMemory;
	case ONNXRUN_ERROR_IO: return FileError;
	case ONNXRUN_ERROR_INVALID_MODEL: return InvalidModel;
	case ONNXRUN_ERROR_UNSUPPORTED: return Unsupported;
	case ONNXRUN_ERROR_INVALID_INPUT: return InvalidInput;
	case ONNXRUN_ERROR_LIMIT: return LimitExceeded;
	case ONNXRUN_ERROR_RUNTIME: return RuntimeFailure;
	case ONNXRUN_ERROR_CANCELLED: return Cancelled;
	default: return Error;
	}
}

/* Raises the exception of `st` with the library's message (or the status text when the
 * library left none); the exception's `status` attribute is the numeric status. */
static PyObject *raise_status(enum onnxrun_status st, const char *message)
{
	PyObject *exc_type = status_exception(st), *text, *exc, *code;
	if (!message || !*message)
		message = onnxrun_status_str(st);
	/* Messages quote file and value names, which need not be UTF-8. */
	text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
	if (!text)
		return NULL;
	exc = PyObject_CallOneArg(exc_type, text);
	Py_DECREF(text);
	if (!exc)
		return NULL;
	code = PyLong_FromLong((long)st);
	if (!code || PyObject_SetAttrString(exc, "status", code) < 0)
		PyErr_Clear();
	Py_XDECREF(code);
	PyErr_SetObject(exc_type, exc);
	Py_DECREF(exc);
	return NULL;
}

/* raise_status for errors the binding itself finds, with a PyUnicode_FromFormat message, so
 * that they carry `status` like the library's. */
static PyObject *raise_format(enum onnxrun_status st, const char *fmt, ...)
{
	va_list ap;
	PyObject *msg;
	va_start(ap, fmt);
	msg = PyUnicode_FromFormatV(fmt, ap);
	va_end(ap);
	if (msg) {
		const char *text = PyUnicode_AsUTF8(msg);
		if (text)
			raise_status(st, text);
		Py_DECREF(msg);
	}
	return NULL;
}

/* ---- dtype mapping ---- */

/* The onnxrun dtype of a numpy dtype, or UNDEFINED when onnxrun has none. Strings (str,
 * bytes, object) map to STRING. */
static enum onnxrun_dtype dtype_of_descr(PyArray_Descr *d)
{
	if (bfloat16_descr && PyArray_EquivTypes(d, bfloat16_descr))
		return ONNXRUN_DTYPE_BFLOAT16;
	switch (d->kind) {
	case 'b': return d->elsize == 1 ? ONNXRUN_DTYPE_BOOL : ONNXRUN_DTYPE_UNDEFINED;
	case 'i':
		switch (d->elsize) {
		case 1: return ONNXRUN_DTYPE_INT8;
		case 2: return ONNXRUN_DTYPE_INT16;
		case 4: return ONNXRUN_DTYPE_INT32;
		case 8: return ONNXRUN_DTYPE_INT64;
		}
		break;
	case 'u':
		switch (d->elsize) {
		case 1: return ONNXRUN_DTYPE_UINT8;
		case 2: return ONNXRUN_DTYPE_UINT16;
		case 4: return ONNXRUN_DTYPE_UINT32;
		case 8: return ONNXRUN_DTYPE_UINT64;
		}
		break;
	case 'f':
		switch (d->elsize) {
		case 2: return ONNXRUN_DTYPE_FLOAT16;
		case 4: return ONNXRUN_DTYPE_FLOAT;
		case 8: return ONNXRUN_DTYPE_DOUBLE;
		}
		break;
	case 'c':
		switch (d->elsize) {
		case 8: return ONNXRUN_DTYPE_COMPLEX64;
		case 16: return ONNXRUN_DTYPE_COMPLEX128;
		}
		break;
	case 'O':
	case 'U':
	case 'S': return ONNXRUN_DTYPE_STRING;
	}
	return ONNXRUN_DTYPE_UNDEFINED;
}

/* The numpy type number for an onnxrun dtype (not STRING, not BFLOAT16), or -1. */
static int typenum_of_dtype(enum onnxrun_dtype t)
{
	switch (t) {
	case ONNXRUN_DTYPE_FLOAT: return NPY_FLOAT32;
	case ONNXRUN_DTYPE_UINT8: return NPY_UINT8;
	case ONNXRUN_DTYPE_INT8: return NPY_INT8;
	case ONNXRUN_DTYPE_UINT16: return NPY_UINT16;
	case ONNXRUN_DTYPE_INT16: return NPY_INT16;
	case ONNXRUN_DTYPE_INT32: return NPY_INT32;
	case ONNXRUN_DTYPE_INT64: return NPY_INT64;
	case ONNXRUN_DTYPE_BOOL: return NPY_BOOL;
	case ONNXRUN_DTYPE_FLOAT16: return NPY_FLOAT16;
	case ONNXRUN_DTYPE_DOUBLE: return NPY_FLOAT64;
	case ONNXRUN_DTYPE_UINT32: return NPY_UINT32;
	case ONNXRUN_DTYPE_UINT64: return NPY_UINT64;
	case ONNXRUN_DTYPE_COMPLEX64: return NPY_COMPLEX64;
	case ONNXRUN_DTYPE_COMPLEX128: return NPY_COMPLEX128;
	case ONNXRUN_DTYPE_BFLOAT16: return NPY_UINT16; /* the documented uint16 view */
	default: return -1;
	}
}

/* ---- numpy array <-> onnxrun tensor ---- */

/* One input on its way into the library: the array (holding a reference keeps wrapped
 * memory alive) and its onnxrun dtype. */
struct staged {
	PyObject *name; /* str, borrowed from the caller's list/dict for the call */
	PyArrayObject *array;
	enum onnxrun_dtype dtype;
	struct onnxrun_tensor *tensor;
};

/* Converts any array-like to an array the library can read: C-contiguous, aligned, native
 * byte order. An ndarray that already is one comes back as is (a new reference, no copy);
 * others are copied once. Strings become an object array of str/bytes. `want` is the dtype
 * the model declares for this input (UNDEFINED when unknown): a uint16 array fed to a
 * bfloat16 input is taken as raw bfloat16 bits. Returns 0, or -1 with an exception set. */
static int stage_array(PyObject *value, PyObject *name, enum onnxrun_dtype want, struct staged *out)
{
	PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_O(value), *ready;
	PyArray_Descr *descr;
	enum onnxrun_dtype t;

	if (!arr)
		return -1;
	t = dtype_of_descr(PyArray_DESCR(arr));
	if (t == ONNXRUN_DTYPE_UNDEFINED) {
		PyObject *dt = PyObject_Str((PyObject *)PyArray_DESCR(arr));
		raise_format(ONNXRUN_ERROR_INVALID_INPUT, "input '%U': numpy dtype %S has no ONNX tensor type", name,
		             dt ? dt : Py_None);
		Py_XDECREF(dt);
		Py_DECREF(arr);
		return -1;
	}
	if (t == ONNXRUN_DTYPE_UINT16 && want == ONNXRUN_DTYPE_BFLOAT16)
		t = ONNXRUN_DTYPE_BFLOAT16;
	if (t == ONNXRUN_DTYPE_STRING) {
		descr = PyArray_DescrFromType(NPY_OBJECT);
	} else {
		descr = PyArray_DESCR(arr);
		Py_INCREF(descr);
		if (!PyArray_ISNBO(descr->byteorder)) {
			PyArray_Descr *native = PyArray_DescrNewByteorder(descr, NPY_NATIVE);
			Py_DECREF(descr);
			descr = native;
			if (!descr) {
				Py_DECREF(arr);
				return -1;
			}
		}
	}
	/* Steals descr; copies only when arr is not already C-contiguous, aligned, native. */
	ready = (PyArrayObject *)PyArray_FromArray(arr, descr, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
	Py_DECREF(arr);
	if (!ready)
		return -1;
	out->name = name;
	out->array = ready;
	out->dtype = t;
	out->tensor = NULL;
	return 0;
}

/* Creates the onnxrun tensor for a staged array: wrapped numeric memory, or a STRING tensor
 * filled from str (UTF-8) / bytes elements. Returns ONNXRUN_OK or the failing status (the
 * library's message in onnxrun_env_error); -1 means a Python exception is set. */
static int make_tensor(struct onnxrun_env *env, struct staged *s)
{
	PyArrayObject *a = s->array;
	int nd = PyArray_NDIM(a);
	int64_t dims[NPY_MAXDIMS];
	enum onnxrun_status st;

	for (int i = 0; i < nd; i++)
		dims[i] = (int64_t)PyArray_DIM(a, i);
	if (s->dtype != ONNXRUN_DTYPE_STRING)
		return (int)onnxrun_tensor_wrap(env, s->dtype, nd, dims, PyArray_DATA(a), (size_t)PyArray_NBYTES(a),
		                                &s->tensor);
	st = onnxrun_tensor_create(env, ONNXRUN_DTYPE_STRING, nd, dims, &s->tensor);
	if (st)
		return (int)st;
	{
		npy_intp n = PyArray_SIZE(a);
		PyObject **items = (PyObject **)PyArray_DATA(a);
		for (npy_intp i = 0; i < n; i++) {
			PyObject *item = items[i];
			const char *data;
			Py_ssize_t size;
			if (item && PyUnicode_Check(item)) {
				data = PyUnicode_AsUTF8AndSize(item, &size);
				if (!data)
					return -1;
			} else if (item && PyBytes_Check(item)) {
				data = PyBytes_AS_STRING(item);
				size = PyBytes_GET_SIZE(item);
			} else {
				raise_format(ONNXRUN_ERROR_INVALID_INPUT,
				             "input '%U': element %zd of a string tensor is %s, not str or bytes", s->name,
				             (Py_ssize_t)i, item ? Py_TYPE(item)->tp_name : "NULL");
				return -1;
			}
			st = onnxrun_tensor_set_string(s->tensor, (int64_t)i, data, (size_t)size);
			if (st)
				return (int)st;
		}
	}
	return 0;
}

static void release_staged(struct staged *s, Py_ssize_t n)
{
	for (Py_ssize_t i = 0; i < n; i++) {
		onnxrun_tensor_free(s[i].tensor);
		s[i].tensor = NULL;
		Py_CLEAR(s[i].array);
	}
}

/* A new numpy array owning a copy of tensor t's data. STRING elements become str (bytes
 * when they are not valid UTF-8); BFLOAT16 becomes the registered bfloat16 dtype or uint16. */
static PyObject *array_from_tensor(const struct onnxrun_tensor *t)
{
	enum onnxrun_dtype dt = onnxrun_tensor_dtype(t);
	int nd = onnxrun_tensor_rank(t);
	const int64_t *d = onnxrun_tensor_dims(t);
	npy_intp dims[ONNXRUN_MAX_RANK];
	PyArrayObject *a;
	const void *data = onnxrun_tensor_data(t);

	for (int i = 0; i < nd; i++)
		dims[i] = (npy_intp)d[i];
	if (dt == ONNXRUN_DTYPE_STRING) {
		npy_intp n = (npy_intp)onnxrun_tensor_numel(t);
		const struct onnxrun_string *strs = data;
		PyObject **slots;
		a = (PyArrayObject *)PyArray_SimpleNew(nd, dims, NPY_OBJECT);
		if (!a)
			return NULL;
		slots = (PyObject **)PyArray_DATA(a);
		for (npy_intp i = 0; i < n; i++) {
			PyObject *item = PyUnicode_DecodeUTF8(strs[i].data, (Py_ssize_t)strs[i].size, "strict");
			if (!item) {
				PyErr_Clear();
				item = PyBytes_FromStringAndSize(strs[i].data, (Py_ssize_t)strs[i].size);
				if (!item) {
					Py_DECREF(a);
					return NULL;
				}
			}
			Py_XSETREF(slots[i], item);
		}
		return (PyObject *)a;
	}
	if (dt == ONNXRUN_DTYPE_BFLOAT16 && bfloat16_descr) {
		Py_INCREF(bfloat16_descr);
		a = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, bfloat16_descr, nd, dims, NULL, NULL, 0, NULL);
	} else {
		int typenum = typenum_of_dtype(dt);
		if (typenum < 0)
			return raise_status(ONNXRUN_ERROR_UNSUPPORTED, "output has an undefined dtype");
		a = (PyArrayObject *)PyArray_SimpleNew(nd, dims, typenum);
	}
	if (!a)
		return NULL;
	if (data && onnxrun_tensor_nbytes(t))
		memcpy(PyArray_DATA(a), data, onnxrun_tensor_nbytes(t));
	return (PyObject *)a;
}

/* ---- value info -> Python ---- */

/* (name, dtype, shape): shape None when the rank is unknown, else a list of int (known),
 * str (symbolic) or None (unknown) per dim. */
static PyObject *value_info_tuple(const struct onnxrun_value_info *vi)
{
	PyObject *shape;
	if (vi->rank < 0) {
		shape = Py_None;
		Py_INCREF(shape);
	} else {
		shape = PyList_New(vi->rank);
		if (!shape)
			return NULL;
		for (int32_t i = 0; i < vi->rank; i++) {
			PyObject *dim;
			if (vi->dims[i].value >= 0)
				dim = PyLong_FromLongLong((long long)vi->dims[i].value);
			else if (vi->dims[i].param)
				dim = PyUnicode_FromString(vi->dims[i].param);
			else
				dim = Py_NewRef(Py_None);
			if (!dim) {
				Py_DECREF(shape);
				return NULL;
			}
			PyList_SET_ITEM(shape, i, dim);
		}
	}
	return Py_BuildValue("(siN)", vi->name, (int)vi->dtype, shape);
}

/* ---- log messages ---- */

/* Warnings the library logs while the GIL is released (model loading) are kept here and
 * handed to Python's warnings module afterwards. */
#define MAX_LOGGED 16
struct log_buffer {
	int count;
	char *messages[MAX_LOGGED];
};

static void log_to_buffer(void *ctx, enum onnxrun_log_level level, const char *message)
{
	struct log_buffer *b = ctx;
	if (level > ONNXRUN_LOG_WARNING || b->count >= MAX_LOGGED)
		return;
	b->messages[b->count] = strdup(message);
	if (b->messages[b->count])
		b->count++;
}

/* Emits the kept warnings as onnxrun.ModelWarning (looked up in the package) and empties the
 * buffer. Returns 0, or -1 if a warning filter turned one into an exception. */
static int flush_log(struct log_buffer *b)
{
	int rc = 0;
	PyObject *category = NULL;
	PyObject *pkg = b->count ? PyImport_ImportModule("onnxrun") : NULL;
	if (pkg) {
		category = PyObject_GetAttrString(pkg, "ModelWarning");
		Py_DECREF(pkg);
	}
	if (b->count && !category)
		PyErr_Clear();
	for (int i = 0; i < b->count; i++) {
		if (!rc && PyErr_WarnEx(category ? category : PyExc_RuntimeWarning, b->messages[i], 2) < 0)
			rc = -1;
		free(b->messages[i]);
	}
	b->count = 0;
	Py_XDECREF(category);
	return rc;
}

/* ---- RunControl: the C side of RunOptions ---- */

/* What a run needs from RunOptions while the GIL is released: the terminate flag and the
 * deadline, and the library sessions running with these options right now so that setting
 * terminate from another thread cancels them (onnxrun_session_cancel is safe from any
 * thread). Every field is read and written with the GIL held. */
typedef struct {
	PyObject_HEAD
	int terminate;
	double deadline_s; /* onnxrun's per-run deadline in seconds, 0: none */
	struct onnxrun_session **active;
	Py_ssize_t n_active, cap_active;
} RunControlObject;

static PyTypeObject RunControlType;

static void RunControl_dealloc(RunControlObject *self)
{
	PyMem_Free(self->active);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *RunControl_get_terminate(RunControlObject *self, void *closure)
{
	return PyBool_FromLong(self->terminate);
}

static int RunControl_set_terminate(RunControlObject *self, PyObject *value, void *closure)
{
	int v;
	if (!value) {
		PyErr_SetString(PyExc_AttributeError, "terminate cannot be deleted");
		return -1;
	}
	if ((v = PyObject_IsTrue(value)) < 0)
		return -1;
	self->terminate = v;
	if (v)
		for (Py_ssize_t i = 0; i < self->n_active; i++)
			onnxrun_session_cancel(self->active[i]);
	return 0;
}

static PyObject *RunControl_get_deadline(RunControlObject *self, void *closure)
{
	return PyFloat_FromDouble(self->deadline_s);
}

static int RunControl_set_deadline(RunControlObject *self, PyObject *value, void *closure)
{
	double v;
	if (!value || value == Py_None) {
		self->deadline_s = 0;
		return 0;
	}
	v = PyFloat_AsDouble(value);
	if (v == -1.0 && PyErr_Occurred())
		return -1;
	if (!(v >= 0) || v > 1e9) {
		PyErr_Format(PyExc_ValueError, "onnxrun_deadline_s must be a number of seconds in 0..1e9 (0: none), not %R",
		             value);
		return -1;
	}
	self->deadline_s = v;
	return 0;
}

static int run_control_add(RunControlObject *rc, struct onnxrun_session *s)
{
	if (rc->n_active == rc->cap_active) {
		Py_ssize_t cap = rc->cap_active ? 2 * rc->cap_active : 4;
		struct onnxrun_session **a = PyMem_Realloc(rc->active, (size_t)cap * sizeof *a);
		if (!a) {
			PyErr_NoMemory();
			return -1;
		}
		rc->active = a;
		rc->cap_active = cap;
	}
	rc->active[rc->n_active++] = s;
	return 0;
}

static void run_control_remove(RunControlObject *rc, struct onnxrun_session *s)
{
	for (Py_ssize_t i = 0; i < rc->n_active; i++)
		if (rc->active[i] == s) {
			rc->active[i] = rc->active[--rc->n_active];
			return;
		}
}

static PyGetSetDef RunControl_getset[] = {
	{ "terminate", (getter)RunControl_get_terminate, (setter)RunControl_set_terminate,
	  "True stops the runs using these options (from any thread) and refuses new ones", NULL },
	{ "onnxrun_deadline_s", (getter)RunControl_get_deadline, (setter)RunControl_set_deadline,
	  "onnxrun's own per-run time budget in seconds (0: none)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject RunControlType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onnxrun._onnxrun.RunControl",
	.tp_basicsize = sizeof(RunControlObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "The terminate flag and deadline of a run (base of onnxrun.RunOptions).",
	.tp_new = PyType_GenericNew,
	.tp_dealloc = (destructor)RunControl_dealloc,
	.tp_getset = RunControl_getset,
};

/* ---- Session ---- */

/* One library session of a Session's pool and the input names bound in it since it was
 * created. Bound tensors live only for one run, so a run that does not rebind all of them
 * renews the library session (an input left out must be reported missing, an initializer
 * override must end, not dangle). */
struct slot {
	struct onnxrun_session *session;
	PyObject *bound;
	int profiling; /* profiling is on in this library session */
};

/* A loaded model and a pool of library sessions over it: each concurrent run takes an idle
 * one (or creates one), so runs on one Session proceed in parallel, and all of them share
 * one thread pool when threads > 1. The idle stack is only touched with the GIL held. */
typedef struct {
	PyObject_HEAD
	struct onnxrun_env *env;
	struct onnxrun_model *model;
	struct onnxrun_pool *pool; /* shared by every slot when threads > 1 */
	int threads;
	uint64_t max_memory;
	struct slot **idle;
	Py_ssize_t n_idle, cap_idle;
	Py_ssize_t n_slots; /* created and not freed: idle or running */
	PyObject *dims;         /* list of (name, value) bound in every slot (bind_dim) */
	PyObject *input_index;  /* dict: required input name -> index */
	PyObject *output_index; /* dict: output name -> index */
	PyObject *output_names; /* tuple of output names */
	enum onnxrun_dtype *input_dtypes;
	/* Profiling: on/off, the monotonic start, and per run (start_ns, dur_ns, node ns list). */
	int profiling;
	double profile_t0;
	PyObject *profile_runs;
} SessionObject;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void slot_free(struct slot *sl)
{
	if (!sl)
		return;
	onnxrun_session_free(sl->session);
	Py_XDECREF(sl->bound);
	PyMem_Free(sl);
}

/* Creates the library session of a slot with the Session's threads, cap, pool, bound dims
 * and profiling. Returns 0, or -1 with an exception set (nothing allocated then). */
static int slot_open(SessionObject *self, struct slot *sl)
{
	struct onnxrun_session *s = NULL;
	enum onnxrun_status st = onnxrun_session_create(self->model, &s);
	if (st) {
		raise_status(st, onnxrun_env_error(self->env));
		return -1;
	}
	st = onnxrun_session_set_threads(s, self->threads);
	if (!st && self->max_memory)
		st = onnxrun_session_set_max_memory(s, self->max_memory);
	if (!st && self->pool)
		st = onnxrun_session_set_pool(s, self->pool);
	for (Py_ssize_t i = 0; !st && self->dims && i < PyList_GET_SIZE(self->dims); i++) {
		PyObject *t = PyList_GET_ITEM(self->dims, i);
		st = onnxrun_session_bind_dim(s, PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0)),
		                              PyLong_AsLongLong(PyTuple_GET_ITEM(t, 1)));
	}
	if (!st && self->profiling)
		st = onnxrun_session_set_profiling(s, 1);
	if (st) {
		raise_status(st, onnxrun_session_error(s));
		onnxrun_session_free(s);
		return -1;
	}
	sl->session = s;
	sl->profiling = self->profiling;
	return 0;
}

/* An idle slot, or a new one. NULL with an exception set on failure. */
static struct slot *slot_acquire(SessionObject *self)
{
	struct slot *sl;
	if (self->n_idle > 0) {
		sl = self->idle[--self->n_idle];
		if (sl->profiling != self->profiling) {
			enum onnxrun_status st = onnxrun_session_set_profiling(sl->session, self->profiling);
			if (st) {
				self->idle[self->n_idle++] = sl;
				return raise_status(st, onnxrun_session_error(sl->session)), NULL;
			}
			sl->profiling = self->profiling;
		}
		return sl;
	}
	sl = PyMem_Calloc(1, sizeof *sl);
	if (!sl)
		return (struct slot *)PyErr_NoMemory();
	sl->bound = PySet_New(NULL);
	if (!sl->bound || slot_open(self, sl) < 0) {
		slot_free(sl);
		return NULL;
	}
	self->n_slots++;
	return sl;
}

/* Puts a slot back on the idle stack (frees it when the stack cannot grow). */
static void slot_release(SessionObject *self, struct slot *sl)
{
	if (self->n_idle == self->cap_idle) {
		Py_ssize_t cap = self->cap_idle ? 2 * self->cap_idle : 4;
		struct slot **a = PyMem_Realloc(self->idle, (size_t)cap * sizeof *a);
		if (!a) {
			slot_free(sl);
			self->n_slots--;
			return;
		}
		self->idle = a;
		self->cap_idle = cap;
	}
	self->idle[self->n_idle++] = sl;
}

/* Replaces the slot's library session by a fresh one (no bindings). */
static int slot_renew(SessionObject *self, struct slot *sl)
{
	struct slot fresh = { 0 };
	if (slot_open(self, &fresh) < 0)
		return -1;
	onnxrun_session_free(sl->session);
	sl->session = fresh.session;
	sl->profiling = fresh.profiling;
	PySet_Clear(sl->bound);
	return 0;
}

/* After a profiled run: appends (start_ns, dur_ns, [node ns...]) to profile_runs and
 * restarts the slot's sums so the next run is measured alone. */
static int profile_harvest(SessionObject *self, struct slot *sl, double t0, double t1)
{
	size_t n = onnxrun_model_node_count(self->model);
	PyObject *nodes = PyList_New((Py_ssize_t)n), *rec;
	int rc;
	if (!nodes)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = 0, runs = 0;
		PyObject *v;
		if (onnxrun_session_node_time(sl->session, i, &ns, &runs))
			ns = 0;
		if (!(v = PyLong_FromUnsignedLongLong((unsigned long long)ns))) {
			Py_DECREF(nodes);
			return -1;
		}
		PyList_SET_ITEM(nodes, (Py_ssize_t)i, v);
	}
	onnxrun_session_set_profiling(sl->session, 1);
	rec = Py_BuildValue("(ddN)", t0 - self->profile_t0, t1 - t0, nodes);
	if (!rec)
		return -1;
	rc = PyList_Append(self->profile_runs, rec);
	Py_DECREF(rec);
	return rc;
}

static int Session_init(SessionObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "source", "threads", "max_memory", "base_dir", "allow_newer_opset", "warnings",
		                  NULL };
	PyObject *source, *base_dir_obj = Py_None, *path_bytes = NULL, *base_bytes = NULL;
	int threads = 1, allow_newer_opset = 0, warnings = 1;
	unsigned long long max_memory = 0;
	enum onnxrun_status st;
	struct log_buffer log = { 0 };
	Py_buffer view = { 0 };
	int have_view = 0, rc = -1;
	struct slot *first;

	if (self->env) {
		PyErr_SetString(PyExc_RuntimeError, "Session is already initialized");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|iKOpp", kwlist, &source, &threads, &max_memory, &base_dir_obj,
	                                 &allow_newer_opset, &warnings))
		return -1;
	if (threads < 1) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "threads must be >= 1, got %d", threads);
		return -1;
	}
	self->threads = threads;
	self->max_memory = max_memory;
	if ((st = onnxrun_env_create(NULL, &self->env))) {
		raise_status(st, NULL);
		return -1;
	}
	onnxrun_env_set_log(self->env, log_to_buffer, &log);
	if (max_memory && (st = onnxrun_env_set_max_memory(self->env, max_memory))) {
		raise_status(st, onnxrun_env_error(self->env));
		goto done;
	}
	onnxrun_env_set_allow_newer_opset(self->env, allow_newer_opset);
	if (PyObject_CheckBuffer(source)) {
		const char *base_dir = NULL;
		if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE) < 0)
			goto done;
		have_view = 1;
		if (base_dir_obj != Py_None) {
			if (!PyUnicode_FSConverter(base_dir_obj, &base_bytes))
				goto done;
			base_dir = PyBytes_AS_STRING(base_bytes);
		}
		Py_BEGIN_ALLOW_THREADS
		st = onnxrun_model_load_buffer(self->env, view.buf, (size_t)view.len, base_dir, &self->model);
		Py_END_ALLOW_THREADS
	} else {
		if (!PyUnicode_FSConverter(source, &path_bytes))
			goto done;
		Py_BEGIN_ALLOW_THREADS
		st = onnxrun_model_load_file(self->env, PyBytes_AS_STRING(path_bytes), &self->model);
		Py_END_ALLOW_THREADS
	}
	if (st) {
		raise_status(st, onnxrun_env_error(self->env));
		goto done;
	}
	if (!warnings) {
		for (int i = 0; i < log.count; i++)
			free(log.messages[i]);
		log.count = 0;
	}
	if (flush_log(&log) < 0)
		goto done;
	if (threads > 1 && (st = onnxrun_pool_create(self->env, threads, &self->pool))) {
		raise_status(st, onnxrun_env_error(self->env));
		goto done;
	}
	self->dims = PyList_New(0);
	self->input_index = PyDict_New();
	self->output_index = PyDict_New();
	if (!self->dims || !self->input_index || !self->output_index)
		goto done;
	/* The first library session now, so that option errors show at load. */
	if (!(first = slot_acquire(self)))
		goto done;
	slot_release(self, first);
	{
		size_t n_in = onnxrun_model_input_count(self->model), n_out = onnxrun_model_output_count(self->model);
		self->input_dtypes = PyMem_Calloc(n_in ? n_in : 1, sizeof *self->input_dtypes);
		self->output_names = PyTuple_New((Py_ssize_t)n_out);
		if (!self->input_dtypes || !self->output_names) {
			PyErr_NoMemory();
			goto done;
		}
		for (size_t i = 0; i < n_in; i++) {
			struct onnxrun_value_info vi;
			PyObject *idx;
			if ((st = onnxrun_model_input_info(self->model, i, &vi))) {
				raise_status(st, NULL);
				goto done;
			}
			self->input_dtypes[i] = vi.dtype;
			idx = PyLong_FromSize_t(i);
			if (!idx || PyDict_SetItemString(self->input_index, vi.name, idx) < 0) {
				Py_XDECREF(idx);
				goto done;
			}
			Py_DECREF(idx);
		}
		for (size_t i = 0; i < n_out; i++) {
			struct onnxrun_value_info vi;
			PyObject *idx, *name;
			if ((st = onnxrun_model_output_info(self->model, i, &vi))) {
				raise_status(st, NULL);
				goto done;
			}
			name = PyUnicode_FromString(vi.name);
			if (!name)
				goto done;
			PyTuple_SET_ITEM(self->output_names, (Py_ssize_t)i, name);
			idx = PyLong_FromSize_t(i);
			if (!idx || PyDict_SetItem(self->output_index, name, idx) < 0) {
				Py_XDECREF(idx);
				goto done;
			}
			Py_DECREF(idx);
		}
	}
	rc = 0;
done:
	/* The log buffer lives on this stack frame: detach it before returning. */
	if (self->env)
		onnxrun_env_set_log(self->env, NULL, NULL);
	for (int i = 0; i < log.count; i++)
		free(log.messages[i]);
	if (have_view)
		PyBuffer_Release(&view);
	Py_XDECREF(path_bytes);
	Py_XDECREF(base_bytes);
	return rc;
}

static void Session_dealloc(SessionObject *self)
{
	/* No run can be in progress: a run holds a reference to the Session. */
	for (Py_ssize_t i = 0; i < self->n_idle; i++)
		slot_free(self->idle[i]);
	PyMem_Free(self->idle);
	onnxrun_pool_free(self->pool);
	onnxrun_model_free(self->model);
	onnxrun_env_free(self->env);
	PyMem_Free(self->input_dtypes);
	Py_XDECREF(self->dims);
	Py_XDECREF(self->input_index);
	Py_XDECREF(self->output_index);
	Py_XDECREF(self->output_names);
	Py_XDECREF(self->profile_runs);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_ready(SessionObject *self)
{
	if (!self->model || !self->output_names) {
		PyErr_SetString(PyExc_RuntimeError, "Session is not initialized");
		return -1;
	}
	return 0;
}

/* The declared dtype of a feed: required inputs from the cache, others (initializers that
 * are graph inputs) from the model's value info; UNDEFINED when unknown. */
static enum onnxrun_dtype feed_dtype(SessionObject *self, PyObject *name, Py_ssize_t *index)
{
	PyObject *idx = PyDict_GetItemWithError(self->input_index, name);
	struct onnxrun_value_info vi;
	const char *s;
	*index = -1;
	if (idx) {
		*index = PyLong_AsSsize_t(idx);
		return self->input_dtypes[*index];
	}
	if (PyErr_Occurred())
		return ONNXRUN_DTYPE_UNDEFINED;
	s = PyUnicode_AsUTF8(name);
	if (s && !onnxrun_model_value_info(self->model, s, &vi))
		return vi.dtype;
	PyErr_Clear();
	return ONNXRUN_DTYPE_UNDEFINED;
}

/* An output array the caller binds (IO binding): output `index` must be written into it.
 * It must be a writeable, aligned, C-contiguous ndarray in native byte order of the
 * output's dtype; the library checks the shape. */
struct bound_out {
	size_t index;
	PyArrayObject *array; /* a reference: the library writes there without the GIL */
	enum onnxrun_dtype dtype;
	struct onnxrun_tensor *tensor;
};

static int check_bound_array(SessionObject *self, PyObject *name, PyObject *value, struct bound_out *b)
{
	PyArrayObject *a;
	struct onnxrun_value_info vi;
	enum onnxrun_dtype t;
	if (!PyArray_Check(value)) {
		PyErr_Format(PyExc_TypeError, "output %R: a bound output must be a numpy array, not %s", name,
		             Py_TYPE(value)->tp_name);
		return -1;
	}
	a = (PyArrayObject *)value;
	if (!PyArray_ISCARRAY(a) || !PyArray_ISNBO(PyArray_DESCR(a)->byteorder)) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT,
		             "output %R: a bound array must be writeable, aligned, C-contiguous and in native byte "
		             "order (the library writes into it)", name);
		return -1;
	}
	t = dtype_of_descr(PyArray_DESCR(a));
	if (onnxrun_model_output_info(self->model, b->index, &vi))
		return raise_status(ONNXRUN_ERROR_INVALID_ARGUMENT, NULL), -1;
	if (t == ONNXRUN_DTYPE_UINT16 && vi.dtype == ONNXRUN_DTYPE_BFLOAT16)
		t = ONNXRUN_DTYPE_BFLOAT16;
	if (t == ONNXRUN_DTYPE_STRING || vi.dtype == ONNXRUN_DTYPE_STRING) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "output %R: string outputs cannot be bound to an array", name);
		return -1;
	}
	if (t != vi.dtype) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "output %R: the model gives %s, the bound array is %s", name,
		             onnxrun_dtype_name(vi.dtype), onnxrun_dtype_name(t));
		return -1;
	}
	b->array = (PyArrayObject *)Py_NewRef(value);
	b->dtype = t;
	b->tensor = NULL;
	return 0;
}

/* run(output_names, feed, run_control=None, bound=None) -> list of arrays.
 * output_names: None (every output, graph order) or a sequence of output names; feed: a
 * dict of input name -> array-like; run_control: a RunControl (terminate, deadline);
 * bound: a dict of output name -> ndarray written in place (IO binding; such an output is
 * returned as that very array). */
static PyObject *Session_run(SessionObject *self, PyObject *args)
{
	PyObject *names_obj, *feed, *ctl_obj = Py_None, *bound_obj = Py_None;
	PyObject *items = NULL, *result = NULL, *fast_names = NULL;
	Py_ssize_t n_feed = 0, n_out, staged_count = 0, n_bound = 0, bound_count = 0;
	size_t out_idx_small[16], *out_idx = out_idx_small;
	struct staged staged_small[8], *staged = staged_small;
	struct bound_out *bound = NULL;
	RunControlObject *ctl = NULL;
	struct slot *sl = NULL;
	enum onnxrun_status st;
	double t0 = 0, t1 = 0;

	if (check_ready(self) < 0 || !PyArg_ParseTuple(args, "OO|OO:run", &names_obj, &feed, &ctl_obj, &bound_obj))
		return NULL;
	if (!PyDict_Check(feed)) {
		PyErr_Format(PyExc_TypeError, "input_feed must be a dict of input name -> array, not %s",
		             Py_TYPE(feed)->tp_name);
		return NULL;
	}
	if (ctl_obj != Py_None) {
		if (!PyObject_TypeCheck(ctl_obj, &RunControlType)) {
			PyErr_Format(PyExc_TypeError, "run_options must be an onnxrun.RunOptions, not %s",
			             Py_TYPE(ctl_obj)->tp_name);
			return NULL;
		}
		ctl = (RunControlObject *)ctl_obj;
	}
	if (bound_obj != Py_None && !PyDict_Check(bound_obj)) {
		PyErr_SetString(PyExc_TypeError, "bound outputs must be a dict of output name -> array");
		return NULL;
	}

	/* Requested outputs, checked before anything runs. */
	if (names_obj == Py_None) {
		fast_names = Py_NewRef(self->output_names);
	} else {
		fast_names = PySequence_Fast(names_obj, "output_names must be None or a sequence of output names");
		if (!fast_names)
			return NULL;
	}
	n_out = PySequence_Fast_GET_SIZE(fast_names);
	if (n_out > (Py_ssize_t)(sizeof out_idx_small / sizeof out_idx_small[0])) {
		out_idx = PyMem_Malloc((size_t)n_out * sizeof *out_idx);
		if (!out_idx) {
			PyErr_NoMemory();
			goto done;
		}
	}
	for (Py_ssize_t i = 0; i < n_out; i++) {
		PyObject *name = PySequence_Fast_GET_ITEM(fast_names, i);
		PyObject *idx = PyUnicode_Check(name) ? PyDict_GetItemWithError(self->output_index, name) : NULL;
		if (!idx) {
			if (!PyErr_Occurred())
				raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "model has no output named %R (outputs: %R)", name,
				             self->output_names);
			goto done;
		}
		out_idx[i] = PyLong_AsSize_t(idx);
	}
	if (bound_obj != Py_None && (n_bound = PyDict_GET_SIZE(bound_obj)) > 0) {
		PyObject *key, *value;
		Py_ssize_t pos = 0;
		bound = PyMem_Calloc((size_t)n_bound, sizeof *bound);
		if (!bound) {
			PyErr_NoMemory();
			goto done;
		}
		while (PyDict_Next(bound_obj, &pos, &key, &value)) {
			PyObject *idx = PyUnicode_Check(key) ? PyDict_GetItemWithError(self->output_index, key) : NULL;
			if (!idx) {
				if (!PyErr_Occurred())
					raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "model has no output named %R (outputs: %R)",
					             key, self->output_names);
				goto done;
			}
			bound[bound_count].index = PyLong_AsSize_t(idx);
			if (check_bound_array(self, key, value, &bound[bound_count]) < 0)
				goto done;
			bound_count++;
		}
	}

	/* Feeds become arrays first: array conversion may run Python code. */
	items = PyDict_Items(feed);
	if (!items)
		goto done;
	n_feed = PyList_GET_SIZE(items);
	if (n_feed > (Py_ssize_t)(sizeof staged_small / sizeof staged_small[0])) {
		staged = PyMem_Calloc((size_t)n_feed, sizeof *staged);
		if (!staged) {
			PyErr_NoMemory();
			goto done;
		}
	}
	for (Py_ssize_t i = 0; i < n_feed; i++) {
		PyObject *kv = PyList_GET_ITEM(items, i), *name = PyTuple_GET_ITEM(kv, 0);
		Py_ssize_t index;
		enum onnxrun_dtype want;
		if (!PyUnicode_Check(name)) {
			PyErr_Format(PyExc_TypeError, "input names must be str, not %s", Py_TYPE(name)->tp_name);
			goto done;
		}
		if (!PyUnicode_AsUTF8(name)) /* caches the UTF-8 form used below */
			goto done;
		want = feed_dtype(self, name, &index);
		if (PyErr_Occurred() || stage_array(PyTuple_GET_ITEM(kv, 1), name, want, &staged[i]) < 0)
			goto done;
		staged_count = i + 1;
	}
	if (ctl && ctl->terminate) {
		raise_status(ONNXRUN_ERROR_CANCELLED, "run cancelled before it started: RunOptions.terminate is set");
		goto done;
	}

	if (!(sl = slot_acquire(self)))
		goto done;

	/* Every name bound before in this slot must be bound again, or it starts afresh. */
	if (PySet_GET_SIZE(sl->bound) > 0) {
		Py_ssize_t kept = 0;
		for (Py_ssize_t i = 0; i < n_feed; i++) {
			int has = PySet_Contains(sl->bound, staged[i].name);
			if (has < 0)
				goto done;
			kept += has;
		}
		if (kept != PySet_GET_SIZE(sl->bound) && slot_renew(self, sl) < 0)
			goto done;
	}

	/* Tensors are made with the GIL held: the env's error message is shared by the slots. */
	for (Py_ssize_t i = 0; i < n_feed; i++) {
		PyObject *idx;
		int rc = make_tensor(self->env, &staged[i]);
		if (rc < 0)
			goto done;
		if (rc) {
			PyObject *msg = PyUnicode_FromFormat("input '%U': %s", staged[i].name, onnxrun_env_error(self->env));
			if (msg) {
				raise_status((enum onnxrun_status)rc, PyUnicode_AsUTF8(msg));
				Py_DECREF(msg);
			}
			goto done;
		}
		idx = PyDict_GetItemWithError(self->input_index, staged[i].name);
		if (idx)
			st = onnxrun_session_set_input(sl->session, PyLong_AsSize_t(idx), staged[i].tensor);
		else if (PyErr_Occurred())
			goto done;
		else
			st = onnxrun_session_set_input_by_name(sl->session, PyUnicode_AsUTF8(staged[i].name),
			                                       staged[i].tensor);
		if (st) {
			raise_status(st, onnxrun_session_error(sl->session));
			goto done;
		}
		if (PySet_Add(sl->bound, staged[i].name) < 0)
			goto done;
	}
	for (Py_ssize_t i = 0; i < bound_count; i++) {
		PyArrayObject *a = bound[i].array;
		int64_t dims[NPY_MAXDIMS];
		for (int d = 0; d < PyArray_NDIM(a); d++)
			dims[d] = (int64_t)PyArray_DIM(a, d);
		st = onnxrun_tensor_wrap(self->env, bound[i].dtype, PyArray_NDIM(a), dims, PyArray_DATA(a),
		                         (size_t)PyArray_NBYTES(a),
		                         &bound[i].tensor);
		if (st) {
			raise_status(st, onnxrun_env_error(self->env));
			goto done;
		}
		if ((st = onnxrun_session_set_output(sl->session, bound[i].index, bound[i].tensor))) {
			raise_status(st, onnxrun_session_error(sl->session));
			goto done;
		}
	}

	onnxrun_session_set_deadline(sl->session, ctl ? (uint64_t)(ctl->deadline_s * 1e6 + 0.5) : 0);
	if (ctl && run_control_add(ctl, sl->session) < 0)
		goto done;
	Py_BEGIN_ALLOW_THREADS
	t0 = now_ns();
	st = onnxrun_session_run(sl->session);
	t1 = now_ns();
	Py_END_ALLOW_THREADS
	if (ctl)
		run_control_remove(ctl, sl->session);
	/* A terminate that came after the run ended must not stop this slot's next run. */
	onnxrun_session_clear_cancel(sl->session);
	if (st) {
		raise_status(st, onnxrun_session_error(sl->session));
		goto done;
	}
	if (sl->profiling && profile_harvest(self, sl, t0, t1) < 0)
		goto done;

	result = PyList_New(n_out);
	if (!result)
		goto done;
	for (Py_ssize_t i = 0; i < n_out; i++) {
		const struct onnxrun_tensor *t;
		PyObject *arr = NULL;
		for (Py_ssize_t b = 0; b < bound_count && !arr; b++)
			if (bound[b].index == out_idx[i])
				arr = Py_NewRef((PyObject *)bound[b].array);
		if (!arr) {
			if ((st = onnxrun_session_output(sl->session, out_idx[i], &t))) {
				raise_status(st, onnxrun_session_error(sl->session));
				Py_CLEAR(result);
				goto done;
			}
			arr = array_from_tensor(t);
		}
		if (!arr) {
			Py_CLEAR(result);
			goto done;
		}
		PyList_SET_ITEM(result, i, arr);
	}

done:
	if (sl) {
		/* Bound arrays are the caller's: unbind them so the slot never writes there again. */
		for (Py_ssize_t i = 0; i < bound_count; i++)
			if (bound[i].tensor)
				onnxrun_session_set_output(sl->session, bound[i].index, NULL);
		slot_release(self, sl);
	}
	for (Py_ssize_t i = 0; i < bound_count; i++) {
		onnxrun_tensor_free(bound[i].tensor);
		Py_XDECREF(bound[i].array);
	}
	PyMem_Free(bound);
	release_staged(staged, staged_count);
	if (staged != staged_small)
		PyMem_Free(staged);
	if (out_idx != out_idx_small)
		PyMem_Free(out_idx);
	Py_XDECREF(items);
	Py_XDECREF(fast_names);
	return result;
}

/* The model's inputs or outputs as a list of (name, dtype, shape) tuples. */
static PyObject *value_list(SessionObject *self, size_t (*count)(const struct onnxrun_model *),
                            enum onnxrun_status (*info)(const struct onnxrun_model *, size_t,
                                                        struct onnxrun_value_info *))
{
	size_t n;
	PyObject *list;
	if (check_ready(self) < 0)
		return NULL;
	n = count(self->model);
	list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		struct onnxrun_value_info vi;
		PyObject *t;
		enum onnxrun_status st = info(self->model, i, &vi);
		if (st || !(t = value_info_tuple(&vi))) {
			if (st)
				raise_status(st, NULL);
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	return list;
}

static PyObject *Session_inputs(SessionObject *self, PyObject *unused)
{
	return value_list(self, onnxrun_model_input_count, onnxrun_model_input_info);
}

static PyObject *Session_outputs(SessionObject *self, PyObject *unused)
{
	return value_list(self, onnxrun_model_output_count, onnxrun_model_output_info);
}

/* value_info(name) -> (name, dtype, shape) as inferred at load, for any value. */
static PyObject *Session_value_info(SessionObject *self, PyObject *arg)
{
	struct onnxrun_value_info vi;
	const char *name;
	enum onnxrun_status st;
	if (check_ready(self) < 0 || !(name = PyUnicode_AsUTF8(arg)))
		return NULL;
	if ((st = onnxrun_model_value_info(self->model, name, &vi))) {
		char msg[256];
		snprintf(msg, sizeof msg, "model has no value named '%.200s'", name);
		return raise_status(st, msg);
	}
	return value_info_tuple(&vi);
}

/* ir_version and opset imports: (ir_version, [(domain, version), ...]). */
static PyObject *Session_model_info(SessionObject *self, PyObject *unused)
{
	size_t n;
	PyObject *opsets;
	if (check_ready(self) < 0)
		return NULL;
	n = onnxrun_model_opset_count(self->model);
	opsets = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; opsets && i < n; i++) {
		const char *domain;
		int64_t version;
		PyObject *t;
		if (onnxrun_model_opset(self->model, i, &domain, &version) ||
		    !(t = Py_BuildValue("(sL)", domain, (long long)version))) {
			if (!PyErr_Occurred())
				raise_status(ONNXRUN_ERROR_INVALID_ARGUMENT, NULL);
			Py_CLEAR(opsets);
			break;
		}
		PyList_SET_ITEM(opsets, (Py_ssize_t)i, t);
	}
	if (!opsets)
		return NULL;
	return Py_BuildValue("(LN)", (long long)onnxrun_model_ir_version(self->model), opsets);
}

static PyObject *string_list(const char *const *s, size_t n)
{
	PyObject *list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		PyObject *item = PyUnicode_FromString(s[i]);
		if (!item) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, item);
	}
	return list;
}

/* nodes() -> [(name, op_type, domain, since_version, inputs, outputs)] in execution order. */
static PyObject *Session_nodes(SessionObject *self, PyObject *unused)
{
	size_t n;
	PyObject *list;
	if (check_ready(self) < 0)
		return NULL;
	n = onnxrun_model_node_count(self->model);
	list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		struct onnxrun_node_info ni;
		PyObject *t;
		if (onnxrun_model_node_info(self->model, i, &ni)) {
			raise_status(ONNXRUN_ERROR_INVALID_ARGUMENT, NULL);
			Py_CLEAR(list);
			break;
		}
		t = Py_BuildValue("(sssLNN)", ni.name, ni.op_type, ni.domain, (long long)ni.since_version,
		                  string_list(ni.inputs, ni.input_count), string_list(ni.outputs, ni.output_count));
		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	return list;
}

/* metadata() -> (producer_name, producer_version, domain, doc_string, model_version,
 * graph_name, graph_doc_string, [(key, value), ...]). */
static PyObject *Session_metadata(SessionObject *self, PyObject *unused)
{
	struct onnxrun_model_metadata md;
	PyObject *props;
	if (check_ready(self) < 0)
		return NULL;
	if (onnxrun_model_metadata(self->model, &md))
		return raise_status(ONNXRUN_ERROR_INVALID_ARGUMENT, NULL);
	props = PyList_New((Py_ssize_t)md.prop_count);
	for (size_t i = 0; props && i < md.prop_count; i++) {
		const char *key, *value;
		PyObject *t;
		if (onnxrun_model_metadata_prop(self->model, i, &key, &value) ||
		    !(t = Py_BuildValue("(s#s#)", key, (Py_ssize_t)strlen(key), value, (Py_ssize_t)strlen(value)))) {
			if (!PyErr_Occurred())
				raise_status(ONNXRUN_ERROR_INVALID_ARGUMENT, NULL);
			Py_CLEAR(props);
			break;
		}
		PyList_SET_ITEM(props, (Py_ssize_t)i, t);
	}
	if (!props)
		return NULL;
	/* Strings from a file need not be UTF-8: decode with replacement like messages. */
	return Py_BuildValue("(NNNNLNNN)", PyUnicode_DecodeUTF8(md.producer_name, (Py_ssize_t)strlen(md.producer_name), "replace"),
	                     PyUnicode_DecodeUTF8(md.producer_version, (Py_ssize_t)strlen(md.producer_version), "replace"),
	                     PyUnicode_DecodeUTF8(md.domain, (Py_ssize_t)strlen(md.domain), "replace"),
	                     PyUnicode_DecodeUTF8(md.doc_string, (Py_ssize_t)strlen(md.doc_string), "replace"),
	                     (long long)md.model_version,
	                     PyUnicode_DecodeUTF8(md.graph_name, (Py_ssize_t)strlen(md.graph_name), "replace"),
	                     PyUnicode_DecodeUTF8(md.graph_doc_string, (Py_ssize_t)strlen(md.graph_doc_string), "replace"),
	                     props);
}

/* set_profiling(on): starts (again, forgetting earlier runs) or stops per-node profiling
 * of every following run. */
static PyObject *Session_set_profiling(SessionObject *self, PyObject *arg)
{
	int on = PyObject_IsTrue(arg);
	if (on < 0 || check_ready(self) < 0)
		return NULL;
	self->profiling = on;
	Py_CLEAR(self->profile_runs);
	if (on) {
		if (!(self->profile_runs = PyList_New(0)))
			return NULL;
		self->profile_t0 = now_ns();
	}
	/* Idle slots are switched when they are next taken (slot_acquire). */
	Py_RETURN_NONE;
}

/* profile() -> [(start_ns, dur_ns, [node ns in execution order]), ...] since set_profiling. */
static PyObject *Session_profile(SessionObject *self, PyObject *unused)
{
	if (!self->profile_runs)
		return PyList_New(0);
	return PyList_GetSlice(self->profile_runs, 0, PyList_GET_SIZE(self->profile_runs));
}

/* bind_dim(name, value): binds a symbolic dim in every library session, now and later. */
static PyObject *Session_bind_dim(SessionObject *self, PyObject *args)
{
	PyObject *name, *t;
	long long value;
	if (check_ready(self) < 0 || !PyArg_ParseTuple(args, "UL", &name, &value))
		return NULL;
	if (!PyUnicode_AsUTF8(name))
		return NULL;
	for (Py_ssize_t i = 0; i < self->n_idle; i++) {
		enum onnxrun_status st = onnxrun_session_bind_dim(self->idle[i]->session, PyUnicode_AsUTF8(name), value);
		if (st)
			return raise_status(st, onnxrun_session_error(self->idle[i]->session));
	}
	if (self->n_idle != self->n_slots) {
		PyErr_SetString(PyExc_RuntimeError, "bind_dim while a run is in progress");
		return NULL;
	}
	t = Py_BuildValue("(OL)", name, value);
	if (!t || PyList_Append(self->dims, t) < 0) {
		Py_XDECREF(t);
		return NULL;
	}
	Py_DECREF(t);
	Py_RETURN_NONE;
}

/* _time_c_api(feed, runs) -> mean ns per run of the same work done from C alone: wrap each
 * input, bind it, run, read every output and copy its bytes into a malloc'd buffer (what
 * run() does short of making numpy objects). Used to measure the binding's overhead. */
static PyObject *Session_time_c_api(SessionObject *self, PyObject *args)
{
	PyObject *feed, *items = NULL, *result = NULL;
	long runs;
	Py_ssize_t n_feed = 0, staged_count = 0;
	struct staged *staged = NULL;
	const char **names = NULL;
	size_t n_out;
	void *sink = NULL;
	double t0 = 0, t1 = 0;
	enum onnxrun_status st = ONNXRUN_OK;
	struct slot *sl = NULL;
	struct onnxrun_session *s;

	if (check_ready(self) < 0 || !PyArg_ParseTuple(args, "O!l", &PyDict_Type, &feed, &runs))
		return NULL;
	items = PyDict_Items(feed);
	if (!items)
		return NULL;
	n_feed = PyList_GET_SIZE(items);
	staged = PyMem_Calloc((size_t)(n_feed ? n_feed : 1), sizeof *staged);
	names = PyMem_Calloc((size_t)(n_feed ? n_feed : 1), sizeof *names);
	if (!staged || !names) {
		PyErr_NoMemory();
		goto done;
	}
	for (Py_ssize_t i = 0; i < n_feed; i++) {
		PyObject *kv = PyList_GET_ITEM(items, i);
		Py_ssize_t index;
		/* The loop below runs without the GIL: no Python calls there. */
		if (!PyUnicode_Check(PyTuple_GET_ITEM(kv, 0)) || !(names[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kv, 0)))) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "input names must be str");
			goto done;
		}
		if (stage_array(PyTuple_GET_ITEM(kv, 1), PyTuple_GET_ITEM(kv, 0),
		                feed_dtype(self, PyTuple_GET_ITEM(kv, 0), &index), &staged[i]) < 0)
			goto done;
		if (staged[i].dtype == ONNXRUN_DTYPE_STRING) {
			PyErr_SetString(PyExc_TypeError, "_time_c_api takes numeric inputs only");
			goto done;
		}
		staged_count = i + 1;
	}
	if (!(sl = slot_acquire(self)))
		goto done;
	s = sl->session;
	n_out = onnxrun_model_output_count(self->model);
	/* Wraps tensors without the GIL, so it must not run beside other runs of this Session
	 * (they would share the env's error message): a benchmark helper only. */
	Py_BEGIN_ALLOW_THREADS
	t0 = now_ns();
	for (long r = 0; r < runs && !st; r++) {
		for (Py_ssize_t i = 0; i < n_feed && !st; i++) {
			PyArrayObject *a = staged[i].array;
			int64_t dims[NPY_MAXDIMS];
			for (int d = 0; d < PyArray_NDIM(a); d++)
				dims[d] = (int64_t)PyArray_DIM(a, d);
			st = onnxrun_tensor_wrap(self->env, staged[i].dtype, PyArray_NDIM(a), dims, PyArray_DATA(a),
			                         (size_t)PyArray_NBYTES(a), &staged[i].tensor);
			if (!st)
				st = onnxrun_session_set_input_by_name(s, names[i], staged[i].tensor);
		}
		if (!st)
			st = onnxrun_session_run(s);
		for (size_t o = 0; o < n_out && !st; o++) {
			const struct onnxrun_tensor *t;
			st = onnxrun_session_output(s, o, &t);
			if (!st) {
				void *copy = malloc(onnxrun_tensor_nbytes(t) + 1);
				if (copy && onnxrun_tensor_data(t))
					memcpy(copy, onnxrun_tensor_data(t), onnxrun_tensor_nbytes(t));
				free(sink);
				sink = copy;
			}
		}
		for (Py_ssize_t i = 0; i < n_feed; i++) {
			onnxrun_tensor_free(staged[i].tensor);
			staged[i].tensor = NULL;
		}
	}
	t1 = now_ns();
	Py_END_ALLOW_THREADS
	free(sink);
	if (st) {
		raise_status(st, onnxrun_session_error(s));
		goto done;
	}
	result = PyFloat_FromDouble(runs > 0 ? (t1 - t0) / (double)runs : 0.0);
done:
	/* The library session points at freed wrappers: start it afresh. */
	if (sl) {
		if (slot_renew(self, sl) < 0) {
			Py_CLEAR(result);
			slot_free(sl);
			self->n_slots--;
		} else {
			slot_release(self, sl);
		}
	}
	if (staged)
		release_staged(staged, staged_count);
	PyMem_Free(staged);
	PyMem_Free(names);
	Py_XDECREF(items);
	return result;
}

static PyObject *Session_get_threads(SessionObject *self, void *closure)
{
	return PyLong_FromLong(self->threads);
}

static PyObject *Session_get_max_memory(SessionObject *self, void *closure)
{
	return PyLong_FromUnsignedLongLong(self->max_memory);
}

static PyObject *Session_get_pool_size(SessionObject *self, void *closure)
{
	return PyLong_FromSsize_t(self->n_slots);
}

static PyMethodDef Session_methods[] = {
	{ "run", (PyCFunction)Session_run, METH_VARARGS,
	  "run(output_names, feed, run_control=None, bound=None) -> list of arrays; output_names None means "
	  "every output; bound maps output names to arrays written in place." },
	{ "inputs", (PyCFunction)Session_inputs, METH_NOARGS,
	  "Required inputs as (name, onnx dtype code, shape) tuples." },
	{ "outputs", (PyCFunction)Session_outputs, METH_NOARGS, "Outputs as (name, onnx dtype code, shape) tuples." },
	{ "value_info", (PyCFunction)Session_value_info, METH_O,
	  "value_info(name) -> (name, onnx dtype code, shape) inferred at load." },
	{ "model_info", (PyCFunction)Session_model_info, METH_NOARGS,
	  "(ir_version, [(domain, version), ...])." },
	{ "metadata", (PyCFunction)Session_metadata, METH_NOARGS,
	  "(producer_name, producer_version, domain, doc_string, model_version, graph_name, graph_doc_string, "
	  "[(key, value), ...])." },
	{ "nodes", (PyCFunction)Session_nodes, METH_NOARGS,
	  "[(name, op_type, domain, since_version, inputs, outputs)] in execution order." },
	{ "set_profiling", (PyCFunction)Session_set_profiling, METH_O,
	  "set_profiling(on): per-node timing of the following runs (restarts when on)." },
	{ "profile", (PyCFunction)Session_profile, METH_NOARGS,
	  "[(start_ns, dur_ns, [node ns...]), ...] of the profiled runs." },
	{ "bind_dim", (PyCFunction)Session_bind_dim, METH_VARARGS, "bind_dim(name, value): binds a symbolic dim." },
	{ "_time_c_api", (PyCFunction)Session_time_c_api, METH_VARARGS,
	  "_time_c_api(feed, runs) -> mean ns per bind+run+copy cycle done from C (for overhead "
	  "measurements)." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Session_getset[] = {
	{ "threads", (getter)Session_get_threads, NULL, "threads used by run", NULL },
	{ "max_memory", (getter)Session_get_max_memory, NULL, "memory cap in bytes (0: the default)", NULL },
	{ "pool_size", (getter)Session_get_pool_size, NULL, "library sessions created (one per concurrent run)",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject SessionType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onnxrun._onnxrun.Session",
	.tp_basicsize = sizeof(SessionObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Session(source, threads=1, max_memory=0, base_dir=None, allow_newer_opset=False, warnings=True): "
	          "a loaded model and a pool of run states. source is a path or a bytes-like serialized model.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)Session_init,
	.tp_dealloc = (destructor)Session_dealloc,
	.tp_methods = Session_methods,
	.tp_getset = Session_getset,
};

/* ---- tensor files ---- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* load_tensor(path, max_memory=0) -> (array, name): a .pb TensorProto or a .npy file, chosen
 * by the extension like the CLI. */
static PyObject *mod_load_tensor(PyObject *mod, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "path", "max_memory", NULL };
	PyObject *path_bytes = NULL, *result = NULL;
	unsigned long long max_memory = 0;
	struct onnxrun_env *env = NULL;
	struct onnxrun_tensor *t = NULL;
	enum onnxrun_status st;
	const char *path;
	int pb;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|K", kwlist, PyUnicode_FSConverter, &path_bytes, &max_memory))
		return NULL;
	path = PyBytes_AS_STRING(path_bytes);
	pb = ends_with(path, ".pb");
	if (!pb && !ends_with(path, ".npy")) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "tensor file '%s': the name must end in .pb or .npy", path);
		goto done;
	}
	if ((st = onnxrun_env_create(NULL, &env))) {
		raise_status(st, NULL);
		goto done;
	}
	if (max_memory && (st = onnxrun_env_set_max_memory(env, max_memory))) {
		raise_status(st, onnxrun_env_error(env));
		goto done;
	}
	Py_BEGIN_ALLOW_THREADS
	st = pb ? onnxrun_tensor_load_pb(env, path, &t) : onnxrun_tensor_load_npy(env, path, &t);
	Py_END_ALLOW_THREADS
	if (st) {
		raise_status(st, onnxrun_env_error(env));
		goto done;
	}
	result = array_from_tensor(t);
	if (result)
		result = Py_BuildValue("(Ns)", result, onnxrun_tensor_name(t));
done:
	onnxrun_tensor_free(t);
	onnxrun_env_free(env);
	Py_XDECREF(path_bytes);
	return result;
}

/* save_tensor(path, array, name="", bfloat16=False): .pb (with the name) or .npy by the
 * extension. bfloat16=True writes a uint16 array as bfloat16 bits. */
static PyObject *mod_save_tensor(PyObject *mod, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "path", "array", "name", "bfloat16", NULL };
	PyObject *path_bytes = NULL, *value, *name = NULL, *result = NULL;
	int as_bf16 = 0, pb, rc;
	struct onnxrun_env *env = NULL;
	struct staged s = { 0 };
	enum onnxrun_status st;
	const char *path;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&O|Up", kwlist, PyUnicode_FSConverter, &path_bytes, &value,
	                                 &name, &as_bf16))
		return NULL;
	path = PyBytes_AS_STRING(path_bytes);
	pb = ends_with(path, ".pb");
	if (!pb && !ends_with(path, ".npy")) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "tensor file '%s': the name must end in .pb or .npy", path);
		goto done;
	}
	if (!name)
		name = PyUnicode_FromString("");
	else
		Py_INCREF(name);
	if (!name || stage_array(value, name, as_bf16 ? ONNXRUN_DTYPE_BFLOAT16 : ONNXRUN_DTYPE_UNDEFINED, &s) < 0)
		goto done;
	if (as_bf16 && s.dtype != ONNXRUN_DTYPE_BFLOAT16) {
		raise_status(ONNXRUN_ERROR_INVALID_ARGUMENT, "bfloat16=True needs a uint16 array of bfloat16 bits");
		goto done;
	}
	if ((st = onnxrun_env_create(NULL, &env))) {
		raise_status(st, NULL);
		goto done;
	}
	rc = make_tensor(env, &s);
	if (rc < 0)
		goto done;
	st = (enum onnxrun_status)rc;
	if (!st)
		st = onnxrun_tensor_set_name(s.tensor, PyUnicode_AsUTF8(name));
	if (!st) {
		Py_BEGIN_ALLOW_THREADS
		st = pb ? onnxrun_tensor_save_pb(env, s.tensor, path) : onnxrun_tensor_save_npy(env, s.tensor, path);
		Py_END_ALLOW_THREADS
	}
	if (st) {
		raise_status(st, onnxrun_env_error(env));
		goto done;
	}
	result = Py_NewRef(Py_None);
done:
	release_staged(&s, 1);
	onnxrun_env_free(env);
	Py_XDECREF(name);
	Py_XDECREF(path_bytes);
	return result;
}

static PyObject *mod_set_bfloat16_dtype(PyObject *mod, PyObject *arg)
{
	PyArray_Descr *d = NULL;
	if (arg != Py_None) {
		if (!PyArray_DescrConverter(arg, &d))
			return NULL;
		if (d->elsize != 2) {
			Py_DECREF(d);
			PyErr_SetString(PyExc_ValueError, "a bfloat16 dtype has 2 bytes per element");
			return NULL;
		}
	}
	Py_XSETREF(bfloat16_descr, d);
	Py_RETURN_NONE;
}

static PyObject *mod_dtype_name(PyObject *mod, PyObject *arg)
{
	long v = PyLong_AsLong(arg);
	if (v == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(onnxrun_dtype_name((enum onnxrun_dtype)v));
}

static PyObject *mod_version(PyObject *mod, PyObject *unused)
{
	return PyUnicode_FromString(onnxrun_version());
}

static PyMethodDef module_methods[] = {
	{ "load_tensor", (PyCFunction)(void (*)(void))mod_load_tensor, METH_VARARGS | METH_KEYWORDS,
	  "load_tensor(path, max_memory=0) -> (array, name)" },
	{ "save_tensor", (PyCFunction)(void (*)(void))mod_save_tensor, METH_VARARGS | METH_KEYWORDS,
	  "save_tensor(path, array, name='', bfloat16=False)" },
	{ "set_bfloat16_dtype", mod_set_bfloat16_dtype, METH_O,
	  "Registers the numpy dtype used for bfloat16 (None: uint16 bits)." },
	{ "dtype_name", mod_dtype_name, METH_O, "The ONNX name of an ONNX dtype code." },
	{ "version", mod_version, METH_NOARGS, "The C library's version." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT, "onnxrun._onnxrun", "Binding of the onnxrun C library (see the onnxrun package).",
	-1, module_methods, NULL, NULL, NULL, NULL,
};

/* Creates exception class `name` (qualified as prefix.name) with the given bases (a new
 * reference, consumed) and adds it to `into` (the module, or a dict when into_dict). */
static PyObject *new_exception(PyObject *into, int into_dict, const char *prefix, const char *name,
                               PyObject *bases, const char *doc)
{
	char qualified[128];
	PyObject *exc;
	if (!bases)
		return NULL;
	snprintf(qualified, sizeof qualified, "%s.%s", prefix, name);
	exc = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
	Py_DECREF(bases);
	if (!exc)
		return NULL;
	if ((into_dict ? PyDict_SetItemString(into, name, exc) : PyModule_AddObjectRef(into, name, exc)) < 0) {
		Py_DECREF(exc);
		return NULL;
	}
	return exc;
}

static PyObject *add_exception(PyObject *m, const char *name, PyObject *bases, const char *doc)
{
	return new_exception(m, 0, "onnxrun", name, bases, doc);
}

/* ONNX Runtime's exception classes (onnxruntime.capi.onnxruntime_pybind11_state), made here
 * so that onnxrun's own classes can derive from them: an `except` clause written for ONNX
 * Runtime catches the failures ONNX Runtime would raise that class for. */
#define ORT_PREFIX "onnxrun.capi.onnxruntime_pybind11_state"
static PyObject *OrtFail, *OrtNoSuchFile, *OrtInvalidProtobuf, *OrtInvalidGraph, *OrtNotImplemented,
	*OrtRuntimeException;

static int make_ort_exceptions(PyObject *ort)
{
	static const char *const unused[] = { "NoModel", "EngineError", "ModelLoaded", "EPFail" };
#define ORT_EXC(var, name, doc) \
	(var = new_exception(ort, 1, ORT_PREFIX, name, Py_BuildValue("(O)", PyExc_Exception), doc))
	if (!ORT_EXC(OrtFail, "Fail", "ONNX Runtime's generic failure: parent of onnxrun's OutOfMemory, "
	                               "InvalidModel, Unsupported, LimitExceeded and Cancelled.") ||
	    !ORT_EXC(OrtNoSuchFile, "NoSuchFile", "Parent of onnxrun.FileError.") ||
	    !ORT_EXC(OrtInvalidProtobuf, "InvalidProtobuf", "Parent of onnxrun.InvalidModel.") ||
	    !ORT_EXC(OrtInvalidGraph, "InvalidGraph", "Parent of onnxrun.InvalidModel and Unsupported.") ||
	    !ORT_EXC(OrtNotImplemented, "NotImplemented", "Parent of onnxrun.Unsupported.") ||
	    !ORT_EXC(OrtRuntimeException, "RuntimeException", "Parent of onnxrun.RuntimeFailure."))
		return -1;
#undef ORT_EXC
	for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++) {
		PyObject *e = new_exception(ort, 1, ORT_PREFIX, unused[i], Py_BuildValue("(O)", PyExc_Exception),
		                            "An ONNX Runtime exception onnxrun never raises (kept so that code naming "
		                            "it runs).");
		if (!e)
			return -1;
		Py_DECREF(e);
	}
	return 0;
}

PyMODINIT_FUNC PyInit__onnxrun(void)
{
	PyObject *m, *ort;

	import_array();
	if (PyType_Ready(&SessionType) < 0 || PyType_Ready(&RunControlType) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	ort = PyDict_New();
	if (!ort || PyModule_AddObjectRef(m, "ORT_EXCEPTIONS", ort) < 0 || make_ort_exceptions(ort) < 0 ||
	    !(Error = add_exception(m, "Error", Py_BuildValue("(O)", PyExc_Exception),
	                            "Base class of the errors the onnxrun library reports; `status` is its "
	                            "numeric status.")) ||
	    !(InvalidArgument = add_exception(m, "InvalidArgument", Py_BuildValue("(OO)", Error, PyExc_ValueError),
	                                      "A bad argument (ONNXRUN_ERROR_INVALID_ARGUMENT); also ONNX Runtime's "
	                                      "InvalidArgument, and the parent of InvalidInput.")) ||
	    !(OutOfMemory = add_exception(m, "OutOfMemory", Py_BuildValue("(OOO)", Error, PyExc_MemoryError, OrtFail),
	                                  "An allocation failed (ONNXRUN_ERROR_OUT_OF_MEMORY).")) ||
	    !(FileError = add_exception(m, "FileError", Py_BuildValue("(OOO)", Error, PyExc_OSError, OrtNoSuchFile),
	                                "A file could not be read or written (ONNXRUN_ERROR_IO).")) ||
	    !(InvalidModel = add_exception(m, "InvalidModel",
	                                   Py_BuildValue("(OOOO)", Error, OrtFail, OrtInvalidProtobuf, OrtInvalidGraph),
	                                   "The model is malformed or breaks the spec (ONNXRUN_ERROR_INVALID_MODEL).")) ||
	    !(Unsupported = add_exception(m, "Unsupported",
	                                  Py_BuildValue("(OOOOO)", Error, PyExc_NotImplementedError, OrtNotImplemented,
	                                                OrtInvalidGraph, OrtFail),
	                                  "Valid ONNX that onnxrun does not implement (ONNXRUN_ERROR_UNSUPPORTED).")) ||
	    !(InvalidInput = add_exception(m, "InvalidInput", Py_BuildValue("(O)", InvalidArgument),
	                                   "An input tensor or tensor file is wrong (ONNXRUN_ERROR_INVALID_INPUT).")) ||
	    !(LimitExceeded = add_exception(m, "LimitExceeded", Py_BuildValue("(OO)", Error, OrtFail),
	                                    "A size or count limit was exceeded (ONNXRUN_ERROR_LIMIT).")) ||
	    !(RuntimeFailure = add_exception(m, "RuntimeFailure",
	                                     Py_BuildValue("(OOO)", Error, PyExc_RuntimeError, OrtRuntimeException),
	                                     "An operator failed while running (ONNXRUN_ERROR_RUNTIME).")) ||
	    !(Cancelled = add_exception(m, "Cancelled", Py_BuildValue("(OO)", Error, OrtFail),
	                                "A run was stopped: RunOptions.terminate or the deadline "
	                                "(ONNXRUN_ERROR_CANCELLED)."))) {
		Py_XDECREF(ort);
		Py_DECREF(m);
		return NULL;
	}
	/* ONNX Runtime's InvalidArgument is onnxrun's (which InvalidInput derives from). */
	if (PyDict_SetItemString(ort, "InvalidArgument", InvalidArgument) < 0) {
		Py_DECREF(ort);
		Py_DECREF(m);
		return NULL;
	}
	Py_DECREF(ort);
	if (PyModule_AddObjectRef(m, "Session", (PyObject *)&SessionType) < 0 ||
	    PyModule_AddObjectRef(m, "RunControl", (PyObject *)&RunControlType) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_RANK", ONNXRUN_MAX_RANK) < 0 ||
	    PyModule_AddIntConstant(m, "NEWEST_KNOWN_OPSET", ONNXRUN_NEWEST_KNOWN_OPSET) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
