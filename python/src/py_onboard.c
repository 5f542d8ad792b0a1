/* talus._find_standing_pose: the standing-pose search (talus/onboard.h) behind
 * talus.find_standing_pose (python/talus/onboarding.py), and the warning
 * categories talus.URDFWarning / talus.OnboardingWarning. */
#include "tlpy.h"
#include "talus/onboard.h"

PyObject *tlpy_urdf_warning;
PyObject *tlpy_onboarding_warning;

PyObject *tlpy_find_standing_pose(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *names[] = {"model", "height", "feet", "height_fraction", NULL};
  PyObject *model = NULL, *height = Py_None, *feet = Py_None;
  double fraction = 0.7;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OOd:_find_standing_pose", names, &tlpy_model_type, &model, &height,
                                   &feet, &fraction))
    return NULL;
  tl_standing_options o;
  tl_standing_options_default(&o);
  o.height_fraction = fraction;
  if (height != Py_None) {
    o.height = PyFloat_AsDouble(height);
    if (o.height == -1.0 && PyErr_Occurred()) return NULL;
    if (!(o.height > 0) || !isfinite(o.height)) {
      PyErr_Format(PyExc_ValueError, "height: expected a base height > 0 m, got %R", height);
      return NULL;
    }
  }
  if (!(fraction > 0 && fraction <= 1)) {
    PyErr_Format(PyExc_ValueError, "height_fraction: expected a number in (0, 1], got %g", fraction);
    return NULL;
  }
  PyObject *seq = NULL;
  const char **fn = NULL;
  if (feet != Py_None) {
    seq = PySequence_Fast(feet, "feet: expected None or a sequence of link names");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    fn = PyMem_Calloc((size_t)n + 1, sizeof(char *));
    if (!fn) {
      Py_DECREF(seq);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *s = PySequence_Fast_GET_ITEM(seq, i);
      fn[i] = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
      if (!fn[i]) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "feet[%zd]: expected a link name (str)", i);
        PyMem_Free(fn);
        Py_DECREF(seq);
        return NULL;
      }
    }
    o.feet = fn;
    o.nfeet = (int)n;
  }
  const tl_model *m = ((tlpy_model *)model)->model;
  npy_intp nq = tl_model_nq(m);
  PyArrayObject *q = tlpy_zeros(1, &nq, NPY_DOUBLE);
  tl_standing_result r;
  memset(&r, 0, sizeof(r));
  tl_error err;
  tl_status st = TL_ERR_MEMORY;
  if (q) {
    Py_BEGIN_ALLOW_THREADS st = tl_find_standing_pose(m, &o, PyArray_DATA(q), (int)nq, &r, &err);
    Py_END_ALLOW_THREADS
  }
  PyMem_Free(fn);
  Py_XDECREF(seq);
  if (!q) return NULL;
  if (st) {
    Py_DECREF(q);
    return tlpy_raise(&err);
  }
  return Py_BuildValue("(N{s:d,s:d,s:d,s:i,s:i,s:O})", q, "height", r.height, "residual", r.residual, "com_margin",
                       r.com_margin, "nfeet", r.nfeet, "iterations", r.iterations, "height_adjusted",
                       r.height_adjusted ? Py_True : Py_False);
}
