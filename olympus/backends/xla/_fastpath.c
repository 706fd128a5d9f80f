/* olympus's two hottest paths, in C: an Array's fields and host read, and a
 * jitted function's cache hit.
 *
 * Why C: a jitted call that hits its cache runs one XLA executable (about
 * 3.3 us here); JAX wraps that in C++ and spends about 0.5 us around it,
 * where a Python `__call__` (the frame, the key, the Array) spent about
 * 0.9 us, and NumPy reads a Python object's `__array__` where it reads a C
 * type's buffer directly (benchmarks/README.md, issue 33). Everything else
 * stays in Python: this file only does what the Python code it mirrors does
 * on a hit, and hands every other call back to it.
 *
 * - `ArrayBase`: the fields of olympus.Array (`aval`, `_buf`, `_npy`,
 *   `_global`, `_sharding`), made by `Array(buf, aval)` without a Python
 *   `__init__`, and the buffer protocol, forwarded to the jaxlib buffer in
 *   `_buf` (what `Array.__array__` reads), so `np.asarray(x)` calls no
 *   Python. Where that does not apply (no `_buf`, a host copy already kept in
 *   `_npy`, bf16/fp8 which jaxlib's protocol refuses, a 0-d value held as
 *   (1,)), the protocol fails and NumPy asks `__array__`.
 * - `JitBase`: the base of JitFunction, whose call runs a cache hit in the
 *   config epoch and outside any trace as `JitFunction._call_python` does:
 *   for Arrays and static values the key (each Array's aval; each other
 *   value's type and itself), for keywords and tuples/lists `_plain_key`'s,
 *   the lookup in `_fast`, the executable's run and the one output's Array;
 *   NumPy arguments copied (see private_copy) and handed to jaxlib's C++
 *   dispatcher in `_host`, as `_call_host` does. Every other call (and any
 *   error) goes to `_call_python`, which also names the errors.
 *
 * olympus/backends/xla/fastpath.py holds the pure-Python equivalents used
 * where this extension was not built.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

static PyObject *tuple_of(PyObject *const *items, Py_ssize_t n) {
    PyObject *tuple = PyTuple_New(n);
    if (tuple == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(tuple, i, items[i]);
    }
    return tuple;
}

/* ---- ArrayBase ---------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *aval, *buf, *npy, *global, *sharding, *weakrefs;
} ArrayBase;

static PyObject *str_shape, *str_execute, *str_handlers, *str_out_aval,
    *str_consume, *str_call_python, *str_trace, *str_epoch, *str_dtype, *str_copy,
    *str_plain_dtypes, *str_jaxlib_array, *str_not_taken, *str_aval, *str_plain, *str_nbytes;

static int array_traverse(ArrayBase *self, visitproc visit, void *arg) {
    Py_VISIT(self->aval);
    Py_VISIT(self->buf);
    Py_VISIT(self->npy);
    Py_VISIT(self->global);
    Py_VISIT(self->sharding);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int array_clear(ArrayBase *self) {
    Py_CLEAR(self->aval);
    Py_CLEAR(self->buf);
    Py_CLEAR(self->npy);
    Py_CLEAR(self->global);
    Py_CLEAR(self->sharding);
    return 0;
}

static void array_dealloc(ArrayBase *self) {
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
    array_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *array_make(PyTypeObject *type, PyObject *buf, PyObject *aval) {
    ArrayBase *self = (ArrayBase *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    Py_INCREF(buf);
    self->buf = buf;
    Py_INCREF(aval);
    self->aval = aval;
    return (PyObject *)self;
}

/* Array(buf, aval): the other fields start as None (read as None while NULL). */
static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *buf, *aval;
    static char *names[] = {"buf", "aval", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:Array", names, &buf, &aval))
        return NULL;
    return array_make(type, buf, aval);
}

static PyObject *array_vectorcall(PyObject *type, PyObject *const *args,
                                  size_t nargsf, PyObject *kwnames) {
    if (PyVectorcall_NARGS(nargsf) == 2 && kwnames == NULL)
        return array_make((PyTypeObject *)type, args[0], args[1]);
    PyObject *tuple = tuple_of(args, PyVectorcall_NARGS(nargsf));
    if (tuple == NULL) return NULL;
    PyObject *kwargs = NULL;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
        kwargs = PyDict_New();
        Py_ssize_t n = PyVectorcall_NARGS(nargsf);
        for (Py_ssize_t i = 0; kwargs && i < PyTuple_GET_SIZE(kwnames); i++)
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
                Py_CLEAR(kwargs);
        if (kwargs == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
    }
    PyObject *out = array_new((PyTypeObject *)type, tuple, kwargs);
    Py_DECREF(tuple);
    Py_XDECREF(kwargs);
    return out;
}

static int array_getbuffer(ArrayBase *self, Py_buffer *view, int flags) {
    if (self->buf == NULL || self->buf == Py_None ||
        (self->npy != NULL && self->npy != Py_None)) {
        PyErr_SetString(PyExc_BufferError, "read through __array__");
        return -1;
    }
    if (PyObject_GetBuffer(self->buf, view, flags) < 0) return -1;
    if (view->ndim == 1 && view->shape != NULL && view->shape[0] == 1) {
        /* a 0-d value whose buffer reads as (1,): __array__ reshapes it */
        PyObject *shape = self->aval ? PyObject_GetAttr(self->aval, str_shape) : NULL;
        int zero_d = shape != NULL && PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == 0;
        Py_XDECREF(shape);
        if (shape == NULL || zero_d) {
            PyBuffer_Release(view);
            PyErr_Clear();
            PyErr_SetString(PyExc_BufferError, "read through __array__");
            return -1;
        }
    }
    return 0;
}

static PyMemberDef array_members[] = {
    {"aval", T_OBJECT_EX, offsetof(ArrayBase, aval), 0, NULL},
    {"_buf", T_OBJECT, offsetof(ArrayBase, buf), 0, NULL},
    {"_npy", T_OBJECT, offsetof(ArrayBase, npy), 0, NULL},
    {"_global", T_OBJECT, offsetof(ArrayBase, global), 0, NULL},
    {"_sharding", T_OBJECT, offsetof(ArrayBase, sharding), 0, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ArrayBase, weakrefs), READONLY, NULL},
    {NULL},
};

static PyType_Slot array_slots[] = {
    {Py_tp_dealloc, array_dealloc},
    {Py_tp_traverse, array_traverse},
    {Py_tp_clear, array_clear},
    {Py_tp_members, array_members},
    {Py_tp_new, array_new},
    {Py_bf_getbuffer, array_getbuffer},
    {Py_tp_doc, "The fields of olympus.Array, and its buffer protocol."},
    {0, NULL},
};

static PyType_Spec array_spec = {
    "olympus.backends.xla._fastpath.ArrayBase",
    sizeof(ArrayBase),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    array_slots,
};

/* ---- JitBase ------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *fast, *epoch, *host;
    PyObject *staging; /* list: per argument position, see private_copy */
    vectorcallfunc vectorcall;
} JitBase;

/* What `configure_array` and `configure_jit` were given: the Array class,
 * jit_function's globals (holding `_config_epoch`, `_PLAIN`, ...), the trace
 * state and the eval trace, np.ndarray and `staging_like`. */
static PyTypeObject *array_type;
static PyObject *jit_globals, *trace_state, *eval_trace, *ndarray_type, *staging_like;
/* jit_function's `_plain_host_dtypes` (a set, emptied in place, never
 * rebound), `NOT_TAKEN` and `_JaxlibArray` (None until a dispatcher is made) */
static PyObject *plain_dtypes, *not_taken, *jaxlib_array;

static int jit_traverse(JitBase *self, visitproc visit, void *arg) {
    Py_VISIT(self->fast);
    Py_VISIT(self->epoch);
    Py_VISIT(self->host);
    Py_VISIT(self->staging);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int jit_clear(JitBase *self) {
    Py_CLEAR(self->fast);
    Py_CLEAR(self->epoch);
    Py_CLEAR(self->host);
    Py_CLEAR(self->staging);
    return 0;
}

static void jit_dealloc(JitBase *self) {
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    jit_clear(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* self._call_python(*args, **kwargs) */
static PyObject *call_python(PyObject *self, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = n + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[9];
    PyObject **stack = total + 1 <= 9 ? small : PyMem_Malloc((total + 1) * sizeof(PyObject *));
    if (stack == NULL) return PyErr_NoMemory();
    stack[0] = self;
    for (Py_ssize_t i = 0; i < total; i++) stack[i + 1] = args[i];
    PyObject *out = PyObject_VectorcallMethod(str_call_python, stack, n + 1, kwnames);
    if (stack != small) PyMem_Free(stack);
    return out;
}

#define MAX_KEY 64

/* The private copy of NumPy argument `a` (of a plain `dtype`) at position
 * `i` that the C++ dispatcher is handed (it reads the array it is given
 * after the call returns: see dispatch_native.py).
 *
 * A small C-contiguous array is copied with memcpy into one of two staging
 * arrays kept for that position, 64-byte aligned so that jaxlib takes the
 * staging memory as it is instead of copying it once more. A staging array
 * is reused only while nothing else holds it (its reference count is ours
 * alone): jaxlib holds each array it was given until the device no longer
 * reads it, and gives it back at a later call. A position's staging arrays
 * are made by `staging_like` when a (dtype, shape) is seen twice in a row,
 * so calls alternating shapes never make any; any other array, or both
 * staging arrays held, is copied with `ndarray.copy`. */
#define STAGING_MAX_BYTES 65536

/* NumPy's array object as its headers lay it out (PyArrayObject_fields, the
 * same in NumPy 1.x and 2.x), read directly (no buffer request: 0.05 us an
 * argument) once `configure_jit` has checked the layout on arrays it was
 * shown; else the buffer protocol gives the same facts. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} NumpyArray;
#define NUMPY_C_CONTIGUOUS 0x0001
static int numpy_layout_known;

/* What staging needs of a C-contiguous NumPy argument. */
typedef struct {
    const char *data;
    int ndim;
    const Py_ssize_t *shape;
} Source;

static int shape_is(PyObject *shape, const Source *src) {
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != src->ndim) return 0;
    for (Py_ssize_t d = 0; d < src->ndim; d++)
        if (PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d)) != src->shape[d]) return 0;
    return 1;
}

/* A position's entry: [dtype, shape, nbytes, staging A, staging B, A's data
 * pointer, B's data pointer], the last four None until seen twice. */
enum { E_DTYPE, E_SHAPE, E_NBYTES, E_A, E_B, E_DATA_A, E_DATA_B, E_SIZE };

static PyObject *new_entry(PyObject *a, PyObject *dtype) {
    PyObject *nbytes = PyObject_GetAttr(a, str_nbytes);
    Py_ssize_t n = nbytes ? PyLong_AsSsize_t(nbytes) : -1;
    if (n <= 0 || n > STAGING_MAX_BYTES) { /* empty, large or failed: copied */
        Py_XDECREF(nbytes);
        return NULL;
    }
    PyObject *shape = PyObject_GetAttr(a, str_shape);
    PyObject *entry = shape ? PyList_New(E_SIZE) : NULL;
    if (entry == NULL) {
        Py_XDECREF(shape);
        Py_DECREF(nbytes);
        return NULL;
    }
    Py_INCREF(dtype);
    PyList_SET_ITEM(entry, E_DTYPE, dtype);
    PyList_SET_ITEM(entry, E_SHAPE, shape);
    PyList_SET_ITEM(entry, E_NBYTES, nbytes);
    for (int j = E_A; j < E_SIZE; j++) {
        Py_INCREF(Py_None);
        PyList_SET_ITEM(entry, j, Py_None);
    }
    return entry;
}

static int make_staging(PyObject *entry, PyObject *a) {
    Py_ssize_t nbytes = PyLong_AsSsize_t(PyList_GET_ITEM(entry, E_NBYTES));
    for (int j = E_A; j <= E_B; j++) {
        PyObject *staged = PyObject_CallOneArg(staging_like, a);
        if (staged == NULL) return 0;
        Py_buffer target;
        if (PyObject_GetBuffer(staged, &target, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
            Py_DECREF(staged);
            return 0;
        }
        PyObject *data = target.len == nbytes ? PyLong_FromVoidPtr(target.buf) : NULL;
        PyBuffer_Release(&target);
        if (data == NULL) {
            Py_DECREF(staged);
            return 0;
        }
        PyList_SetItem(entry, j, staged); /* steals both */
        PyList_SetItem(entry, j + E_DATA_A - E_A, data);
    }
    return 1;
}

static PyObject *staged_copy(JitBase *self, Py_ssize_t i, PyObject *a, PyObject *dtype,
                             const Source *src) {
    if (self->staging == NULL && (self->staging = PyList_New(0)) == NULL) return NULL;
    while (PyList_GET_SIZE(self->staging) <= i)
        if (PyList_Append(self->staging, Py_None) < 0) return NULL;
    PyObject *entry = PyList_GET_ITEM(self->staging, i);
    if (entry == Py_None || PyList_GET_ITEM(entry, E_DTYPE) != dtype ||
        !shape_is(PyList_GET_ITEM(entry, E_SHAPE), src)) {
        PyObject *fresh = new_entry(a, dtype);
        if (fresh != NULL) PyList_SetItem(self->staging, i, fresh); /* steals fresh */
        return NULL; /* seen once: copied the ordinary way */
    }
    if (PyList_GET_ITEM(entry, E_A) == Py_None && !make_staging(entry, a)) return NULL;
    for (int j = E_A; j <= E_B; j++) {
        PyObject *staged = PyList_GET_ITEM(entry, j);
        if (Py_REFCNT(staged) != 1) continue; /* jaxlib still holds it */
        memcpy(PyLong_AsVoidPtr(PyList_GET_ITEM(entry, j + E_DATA_A - E_A)), src->data,
               PyLong_AsSsize_t(PyList_GET_ITEM(entry, E_NBYTES)));
        Py_INCREF(staged);
        return staged;
    }
    return NULL;
}

static PyObject *private_copy(JitBase *self, Py_ssize_t i, PyObject *a, PyObject *dtype) {
    PyObject *staged = NULL;
    if (staging_like != NULL && numpy_layout_known) {
        NumpyArray *arr = (NumpyArray *)a;
        if (arr->flags & NUMPY_C_CONTIGUOUS) {
            Source src = {arr->data, arr->nd, arr->dimensions};
            staged = staged_copy(self, i, a, dtype, &src);
        }
    } else if (staging_like != NULL) {
        Py_buffer view;
        if (PyObject_GetBuffer(a, &view, PyBUF_C_CONTIGUOUS) == 0) {
            Source src = {view.buf, view.ndim, view.shape};
            staged = staged_copy(self, i, a, dtype, &src);
            PyBuffer_Release(&view);
        }
    }
    if (staged != NULL) return staged;
    PyErr_Clear();
    return PyObject_CallMethodNoArgs(a, str_copy);
}

/* Whether NumPy lays arrays out as NumpyArray says, checked on a C-ordered
 * 2-D array and its transpose (not C-contiguous). */
static int numpy_layout_matches(PyObject *probes) {
    if (!PyTuple_Check(probes) || PyTuple_GET_SIZE(probes) != 2) return 0;
    NumpyArray *c = (NumpyArray *)PyTuple_GET_ITEM(probes, 0);
    NumpyArray *t = (NumpyArray *)PyTuple_GET_ITEM(probes, 1);
    if ((PyObject *)Py_TYPE(c) != ndarray_type || (PyObject *)Py_TYPE(t) != ndarray_type)
        return 0;
    Py_buffer view;
    if (PyObject_GetBuffer((PyObject *)c, &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = view.ndim == 2 && c->nd == 2 && c->data == view.buf &&
             c->dimensions[0] == view.shape[0] && c->dimensions[1] == view.shape[1] &&
             view.shape[0] != view.shape[1] && (c->flags & NUMPY_C_CONTIGUOUS) &&
             t->nd == 2 && t->dimensions[0] == view.shape[1] &&
             t->dimensions[1] == view.shape[0] && !(t->flags & NUMPY_C_CONTIGUOUS) &&
             t->data == view.buf;
    PyBuffer_Release(&view);
    PyObject *dtype = ok ? PyObject_GetAttr((PyObject *)c, str_dtype) : NULL;
    ok = ok && dtype == c->descr;
    Py_XDECREF(dtype);
    PyErr_Clear();
    return ok;
}

/* A call with NumPy arguments, as `JitFunction._call_host` makes it: each
 * NumPy array of a plain dtype copied (jaxlib's dispatcher may alias it
 * while the program runs) and each Array's buffer handed to the C++
 * dispatcher in `_host`; its one output wrapped, a tree of outputs returned
 * as it is. NULL with no error set where the call is not one of those. */
static PyObject *jit_host(JitBase *self, PyObject *const *args, Py_ssize_t n) {
    PyObject *host = self->host; /* None before the first such call, False if refused */
    if (host == NULL || host == Py_None || host == Py_False || n > MAX_KEY) return NULL;
    if (plain_dtypes == NULL || not_taken == NULL) return NULL;
    PyObject *plain = plain_dtypes;
    PyObject *flat[MAX_KEY];
    Py_ssize_t k = 0;
    for (; k < n; k++) {
        PyObject *a = args[k];
        if ((PyObject *)Py_TYPE(a) == ndarray_type) {
            PyObject *dtype = numpy_layout_known ? ((NumpyArray *)a)->descr
                                                 : PyObject_GetAttr(a, str_dtype);
            if (numpy_layout_known) Py_INCREF(dtype);
            /* a dtype staged at this position is plain (checked when staged) */
            PyObject *entry = self->staging != NULL && k < PyList_GET_SIZE(self->staging)
                                  ? PyList_GET_ITEM(self->staging, k)
                                  : Py_None;
            int known = dtype == NULL ? -1
                        : entry != Py_None && PyList_GET_ITEM(entry, E_DTYPE) == dtype
                            ? 1
                            : PySet_Contains(plain, dtype);
            flat[k] = known == 1 ? private_copy(self, k, a, dtype) : NULL;
            Py_XDECREF(dtype);
        } else if (Py_TYPE(a) == array_type && ((ArrayBase *)a)->buf != NULL &&
                   ((ArrayBase *)a)->buf != Py_None) {
            flat[k] = ((ArrayBase *)a)->buf;
            Py_INCREF(flat[k]);
        } else {
            flat[k] = NULL;
        }
        if (flat[k] == NULL) break;
    }
    PyObject *out = NULL;
    if (k == n) {
        Py_INCREF(host);
        out = PyObject_Vectorcall(host, flat, n, NULL);
        Py_DECREF(host);
    }
    for (Py_ssize_t i = 0; i < k; i++) Py_DECREF(flat[i]);
    if (out == NULL) return NULL;
    if (jaxlib_array == NULL) { /* set in jit_function once a dispatcher exists */
        PyObject *type = PyDict_GetItemWithError(jit_globals, str_jaxlib_array);
        if (type != NULL && PyType_Check(type)) {
            Py_INCREF(type);
            jaxlib_array = type;
        }
    }
    if ((PyObject *)Py_TYPE(out) == jaxlib_array) { /* the one output */
        PyObject *aval = PyObject_GetAttr(out, str_aval);
        PyObject *array = aval ? array_make(array_type, out, aval) : NULL;
        Py_XDECREF(aval);
        Py_DECREF(out);
        return array;
    }
    if (out == not_taken) { /* the Python route runs it */
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* Whether a call may hit `_fast`: the function's epoch is the config's and
 * no trace is active (JitFunction._call_python's first test). */
static int jit_current(JitBase *self) {
    if (self->fast == NULL || self->epoch == NULL || array_type == NULL || jit_globals == NULL)
        return 0;
    PyObject *current = PyDict_GetItemWithError(jit_globals, str_epoch);
    if (current == NULL) return 0;
    if (current != self->epoch && PyObject_RichCompareBool(current, self->epoch, Py_EQ) != 1)
        return 0;
    PyObject *trace = PyObject_GetAttr(trace_state, str_trace);
    if (trace == NULL) return 0;
    Py_DECREF(trace); /* compared by identity; eval_trace is kept alive */
    return trace == eval_trace;
}

/* A `_fast` key being built: its items (borrowed, but for the container
 * lengths in `owned`) and the Arrays' buffers (borrowed). */
typedef struct {
    PyObject *items[MAX_KEY], *owned[MAX_KEY], *bufs[MAX_KEY];
    Py_ssize_t k, n_owned, b;
} Key;

static int key_add(Key *key, PyObject *item) {
    if (key->k >= MAX_KEY) return 0;
    key->items[key->k++] = item;
    return 1;
}

static int key_add_array(Key *key, PyObject *a) {
    ArrayBase *arr = (ArrayBase *)a;
    if (arr->buf == NULL || arr->buf == Py_None || arr->aval == NULL || key->b >= MAX_KEY)
        return 0;
    key->bufs[key->b++] = arr->buf;
    return key_add(key, arr->aval);
}

static void key_release(Key *key) {
    for (Py_ssize_t i = 0; i < key->n_owned; i++) Py_DECREF(key->owned[i]);
    key->n_owned = 0;
}

/* `_add_positional`: Arrays, plain values and tuples or lists of them, at
 * most `depth` deep; 0 for anything else (the Python path keys it). */
static int key_add_positional(Key *key, PyObject *const *values, Py_ssize_t n, int depth) {
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = values[i];
        PyTypeObject *t = Py_TYPE(a);
        if (t == array_type) {
            if (!key_add_array(key, a)) return 0;
        } else if (t == &PyTuple_Type || t == &PyList_Type) {
            Py_ssize_t len = Py_SIZE(a);
            PyObject *count = PyLong_FromSsize_t(len);
            if (count == NULL || key->n_owned >= MAX_KEY) {
                Py_XDECREF(count);
                return 0;
            }
            key->owned[key->n_owned++] = count;
            if (!depth || !key_add(key, (PyObject *)t) || !key_add(key, count)) return 0;
            PyObject *const *inner = t == &PyTuple_Type ? &PyTuple_GET_ITEM(a, 0)
                                                        : (PyObject *const *)((PyListObject *)a)->ob_item;
            if (!key_add_positional(key, inner, len, depth - 1)) return 0;
        } else if ((PyObject *)t == ndarray_type || t == &PyDict_Type || a == Py_None ||
                   PyTuple_Check(a)) {
            return 0;
        } else if (!key_add(key, (PyObject *)t) || !key_add(key, a)) {
            return 0;
        }
    }
    return 1;
}

/* `_plain_key`'s keywords: their names, types and values, each a plain value. */
static int key_add_keywords(Key *key, PyObject *const *values, PyObject *kwnames) {
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kwnames); j++) {
        PyObject *v = values[j];
        PyTypeObject *t = Py_TYPE(v);
        if (t == array_type || (PyObject *)t == ndarray_type || t == &PyList_Type ||
            t == &PyDict_Type || v == Py_None || PyTuple_Check(v))
            return 0;
        if (!key_add(key, PyTuple_GET_ITEM(kwnames, j)) || !key_add(key, (PyObject *)t) ||
            !key_add(key, v))
            return 0;
    }
    return 1;
}

/* `_fast`'s entry for the key, run on the buffers: the one output's Array,
 * or NULL where there is no single-output entry (or the run failed). */
static PyObject *run_entry(JitBase *self, Key *key) {
    PyObject *tuple = tuple_of(key->items, key->k);
    key_release(key);
    if (tuple == NULL) return NULL;
    PyObject *entry = PyDict_GetItemWithError(self->fast, tuple); /* borrowed */
    Py_DECREF(tuple);
    if (entry == NULL || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) return NULL;
    PyObject *fast = PyTuple_GET_ITEM(entry, 1);
    if (fast == Py_None) return NULL; /* several outputs: Compiled.run_buffers */
    Py_INCREF(fast);
    PyObject *execute = PyObject_GetAttr(fast, str_execute);
    PyObject *handlers = execute ? PyObject_GetAttr(fast, str_handlers) : NULL;
    PyObject *out_aval = handlers ? PyObject_GetAttr(fast, str_out_aval) : NULL;
    Py_DECREF(fast);
    PyObject *list = out_aval ? PyList_New(key->b) : NULL;
    for (Py_ssize_t i = 0; list != NULL && i < key->b; i++) {
        Py_INCREF(key->bufs[i]);
        PyList_SET_ITEM(list, i, key->bufs[i]);
    }
    PyObject *out = NULL;
    if (list != NULL) {
        PyObject *results = PyObject_CallOneArg(execute, list);
        PyObject *outs = results ? PyObject_CallMethodOneArg(results, str_consume, handlers) : NULL;
        Py_XDECREF(results);
        if (outs != NULL && PyList_Check(outs) && PyList_GET_SIZE(outs) == 1)
            out = array_make(array_type, PyList_GET_ITEM(outs, 0), out_aval);
        Py_XDECREF(outs);
        Py_DECREF(list);
    }
    Py_XDECREF(execute);
    Py_XDECREF(handlers);
    Py_XDECREF(out_aval);
    return out;
}

/* The hit, keyed as `_call_python` keys it (positional Arrays and static
 * values) or as `_call_tree`'s `_plain_key` (keywords, tuples and lists);
 * NumPy arguments go to jit_host. NULL with no error set where the call is
 * not one of those (or failed). */
static PyObject *jit_hit(JitBase *self, PyObject *const *args, Py_ssize_t n,
                         PyObject *kwnames) {
    if (!jit_current(self)) return NULL;
    Key key;
    key.k = key.n_owned = key.b = 0;
    int plain = kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0;
    for (Py_ssize_t i = 0; i < n && !plain; i++) {
        PyObject *a = args[i];
        PyTypeObject *t = Py_TYPE(a);
        if (t == array_type) {
            if (!key_add_array(&key, a)) return NULL;
        } else if ((PyObject *)t == ndarray_type) {
            return jit_host(self, args, n);
        } else if (t == &PyTuple_Type || t == &PyList_Type || t == &PyDict_Type ||
                   a == Py_None) {
            plain = 1;
        } else if (!key_add(&key, (PyObject *)t) || !key_add(&key, a)) {
            return NULL;
        }
    }
    if (plain) {
        PyObject *marker = PyDict_GetItemWithError(jit_globals, str_plain);
        key.k = key.b = 0;
        if (marker == NULL || !key_add(&key, marker) ||
            !key_add_positional(&key, args, n, 3) ||
            (kwnames != NULL && !key_add_keywords(&key, args + n, kwnames))) {
            key_release(&key);
            return NULL;
        }
    }
    return run_entry(self, &key);
}

static PyObject *jit_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
    PyObject *out = jit_hit((JitBase *)self, args, PyVectorcall_NARGS(nargsf), kwnames);
    if (out != NULL) return out;
    /* not a hit, or an error (an unhashable static value, a deleted buffer):
     * the Python path runs the call again and names the error */
    PyErr_Clear();
    return call_python(self, args, nargsf, kwnames);
}

static PyObject *jit_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    JitBase *self = (JitBase *)type->tp_alloc(type, 0);
    if (self != NULL) self->vectorcall = jit_vectorcall;
    return (PyObject *)self;
}

static PyMemberDef jit_members[] = {
    {"_fast", T_OBJECT, offsetof(JitBase, fast), 0, NULL},
    {"_epoch", T_OBJECT, offsetof(JitBase, epoch), 0, NULL},
    {"_host", T_OBJECT, offsetof(JitBase, host), 0, NULL},
    {"_staging", T_OBJECT, offsetof(JitBase, staging), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(JitBase, vectorcall), READONLY, NULL},
    {NULL},
};

static PyType_Slot jit_slots[] = {
    {Py_tp_dealloc, jit_dealloc},
    {Py_tp_traverse, jit_traverse},
    {Py_tp_clear, jit_clear},
    {Py_tp_members, jit_members},
    {Py_tp_new, jit_new},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_doc, "JitFunction's call on a cache hit."},
    {0, NULL},
};

static PyType_Spec jit_spec = {
    "olympus.backends.xla._fastpath.JitBase",
    sizeof(JitBase),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC |
        Py_TPFLAGS_HAVE_VECTORCALL,
    jit_slots,
};

/* ---- module ------------------------------------------------------------- */

/* configure_array(Array): Array(...) of that subclass calls array_vectorcall
 * (Python 3.11 does not give a Python subclass its base's vectorcall) */
static PyObject *configure_array(PyObject *module, PyObject *type) {
    PyObject *base = PyObject_GetAttrString(module, "ArrayBase");
    if (base == NULL) return NULL;
    int ok = PyType_Check(type) && PyType_IsSubtype((PyTypeObject *)type, (PyTypeObject *)base);
    Py_DECREF(base);
    if (!ok) {
        PyErr_SetString(PyExc_TypeError, "configure_array: a subclass of ArrayBase");
        return NULL;
    }
    ((PyTypeObject *)type)->tp_vectorcall = array_vectorcall;
    Py_INCREF(type);
    Py_XSETREF(array_type, (PyTypeObject *)type);
    Py_RETURN_NONE;
}

/* configure_jit(JitFunction, its module's globals, trace_state, eval_trace,
 * np.ndarray, staging_like, NumPy probes: a C-ordered 2-D array of unequal
 * sides and its transpose): calls of JitFunction go through jit_vectorcall, as Python
 * 3.12 would arrange for a subclass that does not define __call__. */
static PyObject *configure_jit(PyObject *module, PyObject *args) {
    PyObject *type, *globals, *state, *trace, *ndarray, *staging, *probes;
    if (!PyArg_ParseTuple(args, "O!O!OOOOO", &PyType_Type, &type, &PyDict_Type, &globals,
                          &state, &trace, &ndarray, &staging, &probes))
        return NULL;
    PyObject *base = PyObject_GetAttrString(module, "JitBase");
    if (base == NULL) return NULL;
    int ok = PyType_IsSubtype((PyTypeObject *)type, (PyTypeObject *)base) &&
             ((PyTypeObject *)type)->tp_call == PyVectorcall_Call;
    Py_DECREF(base);
    if (!ok) {
        PyErr_SetString(PyExc_TypeError,
                        "configure_jit: a subclass of JitBase that defines no __call__");
        return NULL;
    }
    ((PyTypeObject *)type)->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    Py_INCREF(globals);
    Py_XSETREF(jit_globals, globals);
    Py_INCREF(state);
    Py_XSETREF(trace_state, state);
    Py_INCREF(trace);
    Py_XSETREF(eval_trace, trace);
    Py_INCREF(ndarray);
    Py_XSETREF(ndarray_type, ndarray);
    Py_INCREF(staging);
    Py_XSETREF(staging_like, staging);
    numpy_layout_known = numpy_layout_matches(probes);
    PyObject *plain = PyDict_GetItemWithError(globals, str_plain_dtypes);
    PyObject *skip = PyDict_GetItemWithError(globals, str_not_taken);
    if (plain == NULL || skip == NULL || !PyAnySet_Check(plain)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "configure_jit: no _plain_host_dtypes set or NOT_TAKEN");
        return NULL;
    }
    Py_INCREF(plain);
    Py_XSETREF(plain_dtypes, plain);
    Py_INCREF(skip);
    Py_XSETREF(not_taken, skip);
    Py_RETURN_NONE;
}

static PyObject *numpy_layout_known_py(PyObject *module, PyObject *unused) {
    return PyBool_FromLong(numpy_layout_known);
}

static PyMethodDef module_methods[] = {
    {"configure_array", configure_array, METH_O, "configure_array(Array)"},
    {"configure_jit", configure_jit, METH_VARARGS,
     "configure_jit(JitFunction, its module's globals, trace_state, eval_trace, np.ndarray, "
     "staging_like, (a 2-D NumPy array, its transpose))"},
    {"numpy_layout_known", numpy_layout_known_py, METH_NOARGS,
     "Whether NumPy arrays are read directly (their layout was checked)."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "olympus.backends.xla._fastpath",
    "olympus.Array's fields and a jitted call's cache hit, in C.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__fastpath(void) {
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    static PyObject **names[] = {&str_shape, &str_execute, &str_handlers, &str_out_aval,
                                 &str_consume, &str_call_python, &str_trace, &str_epoch,
                                 &str_dtype, &str_copy, &str_plain_dtypes,
                                 &str_jaxlib_array, &str_not_taken, &str_aval, &str_plain, &str_nbytes};
    static const char *texts[] = {"shape", "execute", "handlers", "out_aval",
                                  "consume_with_handlers", "_call_python", "trace",
                                  "_config_epoch", "dtype", "copy", "_plain_host_dtypes",
                                  "_JaxlibArray", "NOT_TAKEN", "aval", "_PLAIN", "nbytes"};
    for (int i = 0; i < 16; i++)
        if ((*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) return NULL;
    PyObject *array = PyType_FromSpec(&array_spec);
    if (array == NULL || PyModule_AddObject(module, "ArrayBase", array) < 0) return NULL;
    PyObject *jit = PyType_FromSpec(&jit_spec);
    if (jit == NULL || PyModule_AddObject(module, "JitBase", jit) < 0) return NULL;
    return module;
}
