/* Errors and array conversion for the extension (tlpy.h). */
#include "tlpy.h"

#include <stdio.h>
#include <string.h>

PyObject *tlpy_error;

PyObject *tlpy_raise(const tl_error *err) {
  const char *msg = err && err->message[0] ? err->message : err ? tl_status_name(err->status) : "error";
  PyObject *args = Py_BuildValue("(s)", msg);
  PyObject *exc = args ? PyObject_Call(tlpy_error, args, NULL) : NULL;
  Py_XDECREF(args);
  if (!exc) return NULL;
  if (err) {
    PyObject *status = PyUnicode_FromString(tl_status_name(err->status));
    PyObject *file = err->file[0] ? PyUnicode_DecodeFSDefault(err->file) : (Py_INCREF(Py_None), Py_None);
    PyObject *line = err->line > 0 ? PyLong_FromLong(err->line) : (Py_INCREF(Py_None), Py_None);
    PyObject *element = err->element[0] ? PyUnicode_FromString(err->element) : (Py_INCREF(Py_None), Py_None);
    PyObject *code = PyLong_FromLong((long)err->status);
    if (status && file && line && element && code) {
      PyObject_SetAttrString(exc, "status", status);
      PyObject_SetAttrString(exc, "code", code);
      PyObject_SetAttrString(exc, "file", file);
      PyObject_SetAttrString(exc, "line", line);
      PyObject_SetAttrString(exc, "element", element);
    }
    Py_XDECREF(status), Py_XDECREF(file), Py_XDECREF(line), Py_XDECREF(element), Py_XDECREF(code);
  }
  PyErr_SetObject(tlpy_error, exc);
  Py_DECREF(exc);
  return NULL;
}

static void shape_text(char *buf, size_t cap, int ndim, const npy_intp *shape) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "(");
  for (int i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%ld", i ? ", " : "", (long)shape[i]);
  if (n < cap) snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
}

/* obj as an ndarray (new reference) with a numeric dtype, or NULL with ValueError. */
static PyArrayObject *numeric_array(PyObject *obj, const char *name, int ndim, const npy_intp *shape) {
  char want[128];
  shape_text(want, sizeof want, ndim, shape);
  if (obj == Py_None) {
    PyErr_Format(PyExc_ValueError, "%s: expected a float64 array of shape %s, got None", name, want);
    return NULL;
  }
  PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(obj);
  if (!a) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s: expected a float64 array of shape %s, got %.100s", name, want,
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  char kind = PyArray_DESCR(a)->kind;
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    PyObject *dt = PyObject_Str((PyObject *)PyArray_DESCR(a));
    PyErr_Format(PyExc_ValueError, "%s: expected a float64 array of shape %s, got dtype %s", name, want,
                 dt ? PyUnicode_AsUTF8(dt) : "?");
    Py_XDECREF(dt);
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

static PyArrayObject *as_f64(PyArrayObject *a) {
  PyArrayObject *c = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
  Py_DECREF(a);
  return c;
}

PyArrayObject *tlpy_f64(PyObject *obj, const char *name, int ndim, const npy_intp *shape) {
  PyArrayObject *a = numeric_array(obj, name, ndim, shape);
  if (!a) return NULL;
  int ok = PyArray_NDIM(a) == ndim;
  for (int i = 0; ok && i < ndim; i++) ok = PyArray_DIM(a, i) == shape[i];
  if (!ok) {
    char want[128], got[128];
    shape_text(want, sizeof want, ndim, shape);
    shape_text(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
    PyErr_Format(PyExc_ValueError, "%s: expected shape %s, got %s", name, want, got);
    Py_DECREF(a);
    return NULL;
  }
  return as_f64(a);
}

PyArrayObject *tlpy_f64_broadcast(PyObject *obj, const char *name, int ndim, const npy_intp *shape) {
  PyArrayObject *a = numeric_array(obj, name, ndim, shape);
  if (!a) return NULL;
  int nd = PyArray_NDIM(a), ok = nd <= ndim;
  for (int i = 0; ok && i < nd; i++) {
    npy_intp d = PyArray_DIM(a, nd - 1 - i), want = shape[ndim - 1 - i];
    ok = d == want || d == 1;
  }
  if (!ok) {
    char want[128], got[128];
    shape_text(want, sizeof want, ndim, shape);
    shape_text(got, sizeof got, nd, PyArray_DIMS(a));
    PyErr_Format(PyExc_ValueError, "%s: expected shape %s (or one that broadcasts to it), got %s", name, want, got);
    Py_DECREF(a);
    return NULL;
  }
  PyArrayObject *f = as_f64(a);
  if (!f) return NULL;
  /* materialize the broadcast into a new contiguous array */
  PyArrayObject *out = tlpy_zeros(ndim, shape, NPY_DOUBLE);
  if (!out || PyArray_CopyInto(out, f) < 0) {
    Py_XDECREF(out);
    Py_DECREF(f);
    return NULL;
  }
  Py_DECREF(f);
  return out;
}

PyArrayObject *tlpy_zeros(int ndim, const npy_intp *shape, int type) {
  return (PyArrayObject *)PyArray_ZEROS(ndim, (npy_intp *)shape, type, 0);
}

int tlpy_seed(PyObject *obj, const char *name, int allow_none, uint64_t *seed, int *has) {
  if (has) *has = 0;
  if (obj == NULL || obj == Py_None) {
    if (allow_none) return 0;
    PyErr_Format(PyExc_ValueError, "%s: expected an integer in [0, 2^64), got None", name);
    return -1;
  }
  if (!PyLong_Check(obj) || PyBool_Check(obj)) {
    PyErr_Format(PyExc_ValueError, "%s: expected an integer in [0, 2^64), got %.100s", name, Py_TYPE(obj)->tp_name);
    return -1;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(obj);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s: expected an integer in [0, 2^64)", name);
    return -1;
  }
  *seed = (uint64_t)v;
  if (has) *has = 1;
  return 0;
}

int tlpy_threads(PyObject *obj, int *out) {
  if (obj == NULL || obj == Py_None) {
    *out = 0;
    return 0;
  }
  long v = PyLong_Check(obj) && !PyBool_Check(obj) ? PyLong_AsLong(obj) : -1;
  if (PyErr_Occurred()) PyErr_Clear();
  if (v < 1 || v > 4096) {
    PyErr_SetString(PyExc_ValueError, "num_threads: expected None (all CPUs) or an integer in [1, 4096]");
    return -1;
  }
  *out = (int)v;
  return 0;
}

int tlpy_check_idle(int busy, const char *what) {
  if (!busy) return 0;
  PyErr_Format(PyExc_RuntimeError, "%s is stepping in another thread; wait for it to finish", what);
  return -1;
}
