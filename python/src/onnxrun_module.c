/*
 * onnxrun_module.c - the C extension `onnxrun._onnxrun`: a thin binding of the public C API
 * (include/onnxrun.h) to Python and numpy. Everything the library does (loading, checking,
 * shape inference, running, tensor files) stays in the library; this file converts between
 * numpy arrays and onnxrun tensors and turns statuses into exceptions.
 *
 * Ownership and threads:
 *  - A Session object owns one env, one model and one onnxrun session. Each Session has its
 *    own env, so the env's error message and memory cap are never shared between sessions.
 *  - run() releases the GIL around onnxrun_session_run (and model loading around
 *    onnxrun_model_load_*). A per-Session lock keeps one thread at a time inside the library
 *    for that session, as the header requires; other sessions run in parallel.
 *  - Input arrays are wrapped without a copy when they are C-contiguous, aligned and in
 *    native byte order (otherwise numpy copies them once); the wrappers live only for the
 *    run. Outputs are copied into new numpy arrays that own their memory.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

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

/* ---- Session ---- */

typedef struct {
	PyObject_HEAD
	struct onnxrun_env *env;
	struct onnxrun_model *model;
	struct onnxrun_session *session;
	PyThread_type_lock lock;
	unsigned long owner; /* thread holding `lock` (0 when free): refuses re-entry */
	int threads;
	uint64_t max_memory;
	PyObject *input_index;  /* dict: required input name -> index */
	PyObject *output_index; /* dict: output name -> index */
	PyObject *output_names; /* tuple of output names */
	enum onnxrun_dtype *input_dtypes;
	/* Names bound in the library session since it was created. Bound tensors live only for
	 * one run, so a run that does not rebind all of them gets a fresh session (an input left
	 * out must be reported missing, an initializer override must end, not dangle). */
	PyObject *bound;
} SessionObject;

static int session_configure(SessionObject *self)
{
	enum onnxrun_status st = onnxrun_session_set_threads(self->session, self->threads);
	if (!st && self->max_memory)
		st = onnxrun_session_set_max_memory(self->session, self->max_memory);
	if (st) {
		raise_status(st, onnxrun_session_error(self->session));
		return -1;
	}
	return 0;
}

static int Session_init(SessionObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "source", "threads", "max_memory", "base_dir", NULL };
	PyObject *source, *base_dir_obj = Py_None, *path_bytes = NULL, *base_bytes = NULL;
	int threads = 1;
	unsigned long long max_memory = 0;
	enum onnxrun_status st;
	struct log_buffer log = { 0 };
	Py_buffer view = { 0 };
	int have_view = 0, rc = -1;

	if (self->env) {
		PyErr_SetString(PyExc_RuntimeError, "Session is already initialized");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|iKO", kwlist, &source, &threads, &max_memory, &base_dir_obj))
		return -1;
	if (threads < 1) {
		raise_format(ONNXRUN_ERROR_INVALID_ARGUMENT, "threads must be >= 1, got %d", threads);
		return -1;
	}
	self->threads = threads;
	self->max_memory = max_memory;
	if (!self->lock)
		self->lock = PyThread_allocate_lock();
	if (!self->lock) {
		PyErr_NoMemory();
		return -1;
	}
	if ((st = onnxrun_env_create(NULL, &self->env))) {
		raise_status(st, NULL);
		return -1;
	}
	onnxrun_env_set_log(self->env, log_to_buffer, &log);
	if (max_memory && (st = onnxrun_env_set_max_memory(self->env, max_memory))) {
		raise_status(st, onnxrun_env_error(self->env));
		goto done;
	}
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
	if (flush_log(&log) < 0)
		goto done;
	if ((st = onnxrun_session_create(self->model, &self->session))) {
		raise_status(st, onnxrun_env_error(self->env));
		goto done;
	}
	if (session_configure(self) < 0)
		goto done;

	self->input_index = PyDict_New();
	self->output_index = PyDict_New();
	self->bound = PySet_New(NULL);
	if (!self->input_index || !self->output_index || !self->bound)
		goto done;
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
	onnxrun_session_free(self->session);
	onnxrun_model_free(self->model);
	onnxrun_env_free(self->env);
	if (self->lock)
		PyThread_free_lock(self->lock);
	PyMem_Free(self->input_dtypes);
	Py_XDECREF(self->input_index);
	Py_XDECREF(self->output_index);
	Py_XDECREF(self->output_names);
	Py_XDECREF(self->bound);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_ready(SessionObject *self)
{
	if (!self->session) {
		PyErr_SetString(PyExc_RuntimeError, "Session is not initialized");
		return -1;
	}
	return 0;
}

/* Takes the session lock, releasing the GIL while waiting. Refuses re-entry from the thread
 * that holds it (e.g. a __array__ or __del__ calling run on the same session). */
static int session_lock(SessionObject *self)
{
	unsigned long me = PyThread_get_thread_ident();
	if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
		if (self->owner == me) {
			PyErr_SetString(PyExc_RuntimeError, "Session.run called re-entrantly from the same thread");
			return -1;
		}
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(self->lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
	self->owner = me;
	return 0;
}

static void session_unlock(SessionObject *self)
{
	self->owner = 0;
	PyThread_release_lock(self->lock);
}

/* Frees and recreates the library session (same threads and cap), forgetting bindings. */
static int session_renew(SessionObject *self)
{
	struct onnxrun_session *fresh = NULL;
	enum onnxrun_status st = onnxrun_session_create(self->model, &fresh);
	if (st) {
		raise_status(st, onnxrun_env_error(self->env));
		return -1;
	}
	onnxrun_session_free(self->session);
	self->session = fresh;
	PySet_Clear(self->bound);
	return session_configure(self);
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

/* run(output_names, feed) -> list of arrays. output_names: None (every output, graph order)
 * or a sequence of output names; feed: a mapping of input name -> array-like. */
static PyObject *Session_run(SessionObject *self, PyObject *args)
{
	PyObject *names_obj, *feed, *items = NULL, *result = NULL, *fast_names = NULL;
	Py_ssize_t n_feed = 0, n_out, staged_count = 0;
	size_t out_idx_small[16], *out_idx = out_idx_small;
	struct staged staged_small[8], *staged = staged_small;
	enum onnxrun_status st;
	int locked = 0;

	if (check_ready(self) < 0 || !PyArg_ParseTuple(args, "OO:run", &names_obj, &feed))
		return NULL;
	if (!PyDict_Check(feed)) {
		PyErr_Format(PyExc_TypeError, "input_feed must be a dict of input name -> array, not %s",
		             Py_TYPE(feed)->tp_name);
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

	/* Feeds become arrays before the lock is taken: array conversion may run Python code. */
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

	if (session_lock(self) < 0)
		goto done;
	locked = 1;

	/* Every name bound before must be bound again, or the session starts afresh. */
	if (PySet_GET_SIZE(self->bound) > 0) {
		Py_ssize_t kept = 0;
		for (Py_ssize_t i = 0; i < n_feed; i++) {
			int has = PySet_Contains(self->bound, staged[i].name);
			if (has < 0)
				goto done;
			kept += has;
		}
		if (kept != PySet_GET_SIZE(self->bound) && session_renew(self) < 0)
			goto done;
	}

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
			st = onnxrun_session_set_input(self->session, PyLong_AsSize_t(idx), staged[i].tensor);
		else if (PyErr_Occurred())
			goto done;
		else
			st = onnxrun_session_set_input_by_name(self->session, PyUnicode_AsUTF8(staged[i].name),
			                                       staged[i].tensor);
		if (st) {
			raise_status(st, onnxrun_session_error(self->session));
			goto done;
		}
		if (PySet_Add(self->bound, staged[i].name) < 0)
			goto done;
	}

	Py_BEGIN_ALLOW_THREADS
	st = onnxrun_session_run(self->session);
	Py_END_ALLOW_THREADS
	if (st) {
		raise_status(st, onnxrun_session_error(self->session));
		goto done;
	}

	result = PyList_New(n_out);
	if (!result)
		goto done;
	for (Py_ssize_t i = 0; i < n_out; i++) {
		const struct onnxrun_tensor *t;
		PyObject *arr;
		if ((st = onnxrun_session_output(self->session, out_idx[i], &t))) {
			raise_status(st, onnxrun_session_error(self->session));
			Py_CLEAR(result);
			goto done;
		}
		arr = array_from_tensor(t);
		if (!arr) {
			Py_CLEAR(result);
			goto done;
		}
		PyList_SET_ITEM(result, i, arr);
	}

done:
	release_staged(staged, staged_count);
	if (locked)
		session_unlock(self);
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

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
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
	size_t sink_size = 0;
	double t0 = 0, t1 = 0;
	enum onnxrun_status st = ONNXRUN_OK;

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
	if (session_lock(self) < 0)
		goto done;
	n_out = onnxrun_model_output_count(self->model);
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
				st = onnxrun_session_set_input_by_name(self->session, names[i], staged[i].tensor);
		}
		if (!st)
			st = onnxrun_session_run(self->session);
		for (size_t o = 0; o < n_out && !st; o++) {
			const struct onnxrun_tensor *t;
			st = onnxrun_session_output(self->session, o, &t);
			if (!st) {
				void *copy = malloc(onnxrun_tensor_nbytes(t) + 1);
				if (copy && onnxrun_tensor_data(t))
					memcpy(copy, onnxrun_tensor_data(t), onnxrun_tensor_nbytes(t));
				free(sink);
				sink = copy;
				sink_size += onnxrun_tensor_nbytes(t);
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
	/* The library session now points at freed wrappers: start it afresh. */
	if (session_renew(self) < 0) {
		session_unlock(self);
		goto done;
	}
	session_unlock(self);
	if (st) {
		raise_status(st, onnxrun_session_error(self->session));
		goto done;
	}
	(void)sink_size;
	result = PyFloat_FromDouble(runs > 0 ? (t1 - t0) / (double)runs : 0.0);
done:
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

static PyMethodDef Session_methods[] = {
	{ "run", (PyCFunction)Session_run, METH_VARARGS,
	  "run(output_names, feed) -> list of arrays; output_names None means every output." },
	{ "inputs", (PyCFunction)Session_inputs, METH_NOARGS,
	  "Required inputs as (name, onnx dtype code, shape) tuples." },
	{ "outputs", (PyCFunction)Session_outputs, METH_NOARGS, "Outputs as (name, onnx dtype code, shape) tuples." },
	{ "value_info", (PyCFunction)Session_value_info, METH_O,
	  "value_info(name) -> (name, onnx dtype code, shape) inferred at load." },
	{ "model_info", (PyCFunction)Session_model_info, METH_NOARGS,
	  "(ir_version, [(domain, version), ...])." },
	{ "nodes", (PyCFunction)Session_nodes, METH_NOARGS,
	  "[(name, op_type, domain, since_version, inputs, outputs)] in execution order." },
	{ "_time_c_api", (PyCFunction)Session_time_c_api, METH_VARARGS,
	  "_time_c_api(feed, runs) -> mean ns per bind+run+copy cycle done from C (for overhead "
	  "measurements)." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Session_getset[] = {
	{ "threads", (getter)Session_get_threads, NULL, "threads used by run", NULL },
	{ "max_memory", (getter)Session_get_max_memory, NULL, "memory cap in bytes (0: the default)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject SessionType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onnxrun._onnxrun.Session",
	.tp_basicsize = sizeof(SessionObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Session(source, threads=1, max_memory=0, base_dir=None): a loaded model and its run "
	          "state. source is a path or a bytes-like serialized model.",
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

/* Creates exception class `name` with the given bases and adds it to the module. */
static PyObject *add_exception(PyObject *m, const char *name, PyObject *bases, const char *doc)
{
	char qualified[64];
	PyObject *exc;
	snprintf(qualified, sizeof qualified, "onnxrun.%s", name);
	exc = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
	Py_DECREF(bases);
	if (!exc)
		return NULL;
	if (PyModule_AddObjectRef(m, name, exc) < 0) {
		Py_DECREF(exc);
		return NULL;
	}
	return exc;
}

PyMODINIT_FUNC PyInit__onnxrun(void)
{
	PyObject *m;

	import_array();
	if (PyType_Ready(&SessionType) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (!(Error = add_exception(m, "Error", Py_BuildValue("(O)", PyExc_Exception),
	                            "Base class of the errors the onnxrun library reports; `status` is its "
	                            "numeric status.")) ||
	    !(InvalidArgument = add_exception(m, "InvalidArgument", Py_BuildValue("(OO)", Error, PyExc_ValueError),
	                                      "A bad argument (ONNXRUN_ERROR_INVALID_ARGUMENT).")) ||
	    !(OutOfMemory = add_exception(m, "OutOfMemory", Py_BuildValue("(OO)", Error, PyExc_MemoryError),
	                                  "An allocation failed (ONNXRUN_ERROR_OUT_OF_MEMORY).")) ||
	    !(FileError = add_exception(m, "FileError", Py_BuildValue("(OO)", Error, PyExc_OSError),
	                                "A file could not be read or written (ONNXRUN_ERROR_IO).")) ||
	    !(InvalidModel = add_exception(m, "InvalidModel", Py_BuildValue("(O)", Error),
	                                   "The model is malformed or breaks the spec (ONNXRUN_ERROR_INVALID_MODEL).")) ||
	    !(Unsupported = add_exception(m, "Unsupported", Py_BuildValue("(OO)", Error, PyExc_NotImplementedError),
	                                  "Valid ONNX that onnxrun does not implement (ONNXRUN_ERROR_UNSUPPORTED).")) ||
	    !(InvalidInput = add_exception(m, "InvalidInput", Py_BuildValue("(OO)", Error, PyExc_ValueError),
	                                   "An input tensor or tensor file is wrong (ONNXRUN_ERROR_INVALID_INPUT).")) ||
	    !(LimitExceeded = add_exception(m, "LimitExceeded", Py_BuildValue("(O)", Error),
	                                    "A size or count limit was exceeded (ONNXRUN_ERROR_LIMIT).")) ||
	    !(RuntimeFailure = add_exception(m, "RuntimeFailure", Py_BuildValue("(OO)", Error, PyExc_RuntimeError),
	                                     "An operator failed while running (ONNXRUN_ERROR_RUNTIME)."))) {
		Py_DECREF(m);
		return NULL;
	}
	if (PyModule_AddObjectRef(m, "Session", (PyObject *)&SessionType) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_RANK", ONNXRUN_MAX_RANK) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
