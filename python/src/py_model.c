/* talus.Model: a compiled robot (tl_model, talus/model.h and talus/urdf.h). */
#include "tlpy.h"

static int parse_base(PyObject *floating, tl_base_type *base) {
  if (floating == NULL || floating == Py_None) {
    *base = TL_BASE_AUTO;
    return 0;
  }
  int v = PyObject_IsTrue(floating);
  if (v < 0) return -1;
  *base = v ? TL_BASE_FLOATING : TL_BASE_FIXED;
  return 0;
}

int tlpy_warn_model(const tl_model *m) {
  for (int i = 0; i < tl_model_nwarning(m) && tl_model_warning(m, i); i++)
    if (PyErr_WarnEx(tlpy_urdf_warning, tl_model_warning(m, i), 1) < 0) return -1;
  return 0;
}

/* A new Model owning m, after its load warnings went to Python's warnings (talus.URDFWarning). */
static PyObject *wrap_model(PyTypeObject *type, tl_model *m) {
  if (tlpy_warn_model(m)) {
    tl_model_free(m);
    return NULL;
  }
  tlpy_model *self = (tlpy_model *)type->tp_alloc(type, 0);
  if (!self) {
    tl_model_free(m);
    return NULL;
  }
  self->model = m;
  return (PyObject *)self;
}

static PyObject *model_from_urdf(PyObject *cls, PyObject *args, PyObject *kw) {
  static char *names[] = {"path", "floating_base", NULL};
  PyObject *path = NULL, *floating = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|O:Model.from_urdf", names, PyUnicode_FSConverter, &path, &floating))
    return NULL;
  tl_load_options opt = tl_load_options_default();
  if (parse_base(floating, &opt.base)) {
    Py_DECREF(path);
    return NULL;
  }
  tl_model *m = NULL;
  tl_error err;
  tl_status st;
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS st = tl_model_load_urdf(p, &opt, &m, &err);
  Py_END_ALLOW_THREADS Py_DECREF(path);
  if (st) return tlpy_raise(&err);
  return wrap_model((PyTypeObject *)cls, m);
}

static PyObject *model_from_urdf_string(PyObject *cls, PyObject *args, PyObject *kw) {
  static char *names[] = {"xml", "floating_base", "name", NULL};
  const char *xml = NULL, *name = NULL;
  Py_ssize_t len = 0;
  PyObject *floating = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|Oz:Model.from_urdf_string", names, &xml, &len, &floating, &name))
    return NULL;
  tl_load_options opt = tl_load_options_default();
  if (parse_base(floating, &opt.base)) return NULL;
  tl_model *m = NULL;
  tl_error err;
  tl_status st;
  Py_BEGIN_ALLOW_THREADS st = tl_model_load_urdf_string(xml, (size_t)len, name, &opt, &m, &err);
  Py_END_ALLOW_THREADS if (st) return tlpy_raise(&err);
  return wrap_model((PyTypeObject *)cls, m);
}

static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)type, (void)args, (void)kw;
  PyErr_SetString(PyExc_TypeError, "create models with talus.Model.from_urdf(path) or Model.from_urdf_string(xml)");
  return NULL;
}

static void model_dealloc(tlpy_model *self) {
  tl_model_free(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *model_str(const char *s) { return PyUnicode_FromString(s ? s : ""); }

static PyObject *get_name(tlpy_model *self, void *c) { (void)c; return model_str(tl_model_name(self->model)); }
static PyObject *get_nq(tlpy_model *self, void *c) { (void)c; return PyLong_FromLong(tl_model_nq(self->model)); }
static PyObject *get_nv(tlpy_model *self, void *c) { (void)c; return PyLong_FromLong(tl_model_nv(self->model)); }
static PyObject *get_nbody(tlpy_model *self, void *c) { (void)c; return PyLong_FromLong(tl_model_nbody(self->model)); }
static PyObject *get_nframe(tlpy_model *self, void *c) { (void)c; return PyLong_FromLong(tl_model_nframe(self->model)); }
static PyObject *get_ngeom(tlpy_model *self, void *c) { (void)c; return PyLong_FromLong(tl_model_ngeom(self->model)); }
static PyObject *get_mass(tlpy_model *self, void *c) { (void)c; return PyFloat_FromDouble(tl_model_total_mass(self->model)); }
static PyObject *get_floating(tlpy_model *self, void *c) {
  (void)c;
  return PyBool_FromLong(tl_model_joint_type(self->model, 0) == TL_JOINT_FLOATING);
}

typedef const char *(*name_fn)(const tl_model *, int);

static PyObject *name_list(const tl_model *m, int first, int n, name_fn fn) {
  PyObject *list = PyList_New(n > first ? n - first : 0);
  for (int i = first; list && i < n; i++) {
    PyObject *s = model_str(fn(m, i));
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i - first, s);
  }
  return list;
}

static PyObject *get_joint_names(tlpy_model *self, void *c) {
  (void)c;
  return name_list(self->model, 1, tl_model_nbody(self->model), tl_model_joint_name);
}
static PyObject *get_body_names(tlpy_model *self, void *c) {
  (void)c;
  return name_list(self->model, 0, tl_model_nbody(self->model), tl_model_body_name);
}
static PyObject *get_frame_names(tlpy_model *self, void *c) {
  (void)c;
  return name_list(self->model, 0, tl_model_nframe(self->model), tl_model_frame_name);
}
static PyObject *get_warnings(tlpy_model *self, void *c) {
  (void)c;
  return name_list(self->model, 0, tl_model_nwarning(self->model), tl_model_warning);
}

static PyObject *q_array(tlpy_model *self, tl_status (*fn)(const tl_model *, double *, int, tl_error *)) {
  npy_intp n = tl_model_nq(self->model);
  PyArrayObject *a = tlpy_zeros(1, &n, NPY_DOUBLE);
  if (!a) return NULL;
  tl_error err;
  if (fn(self->model, (double *)PyArray_DATA(a), (int)n, &err)) {
    Py_DECREF(a);
    return tlpy_raise(&err);
  }
  return (PyObject *)a;
}

static PyObject *get_default_q(tlpy_model *self, void *c) { (void)c; return q_array(self, tl_model_default_q); }
static PyObject *get_reference_q(tlpy_model *self, void *c) { (void)c; return q_array(self, tl_model_reference_q); }

static PyObject *get_limits(tlpy_model *self, void *c) {
  (void)c;
  npy_intp n = tl_model_nv(self->model);
  PyArrayObject *lo = tlpy_zeros(1, &n, NPY_DOUBLE), *hi = tlpy_zeros(1, &n, NPY_DOUBLE);
  if (!lo || !hi) {
    Py_XDECREF(lo), Py_XDECREF(hi);
    return NULL;
  }
  for (npy_intp k = 0; k < n; k++)
    tl_model_dof_limits(self->model, (int)k, (double *)PyArray_GETPTR1(lo, k), (double *)PyArray_GETPTR1(hi, k),
                        NULL);
  return Py_BuildValue("(NN)", lo, hi);
}

/* ---------------- configuration-space calculus (issue 24; talus/model.h) ---------------- */

typedef tl_status (*cfg_fn)(const tl_model *, const double *, int, const double *, int, double *, tl_error *);

/* Two arrays of the configuration calculus: (q: nq, v: nv) -> nq for
 * integrate, (q0: nq, q1: nq) -> nv for difference. */
static PyObject *cfg_call(tlpy_model *self, PyObject *args, PyObject *kw, int diff) {
  static char *names_int[] = {"q", "v", NULL}, *names_diff[] = {"q0", "q1", NULL};
  PyObject *a = NULL, *b = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", diff ? names_diff : names_int, &a, &b)) return NULL;
  const tl_model *m = self->model;
  npy_intp nq = tl_model_nq(m), nv = tl_model_nv(m);
  PyArrayObject *xa = tlpy_f64(a, diff ? "q0" : "q", 1, &nq);
  PyArrayObject *xb = xa ? tlpy_f64(b, diff ? "q1" : "v", 1, diff ? &nq : &nv) : NULL;
  PyArrayObject *out = xb ? tlpy_zeros(1, diff ? &nv : &nq, NPY_DOUBLE) : NULL;
  PyObject *r = NULL;
  if (out) {
    tl_error err;
    tl_status st = diff ? tl_model_difference(m, PyArray_DATA(xa), PyArray_DATA(xb), (int)nq, PyArray_DATA(out),
                                              (int)nv, &err)
                        : tl_model_integrate(m, PyArray_DATA(xa), (int)nq, PyArray_DATA(xb), (int)nv,
                                             PyArray_DATA(out), &err);
    if (st) {
      tlpy_raise(&err);
      Py_DECREF(out);
    } else {
      r = (PyObject *)out;
    }
  }
  Py_XDECREF(xa);
  Py_XDECREF(xb);
  return r;
}
static PyObject *model_integrate(tlpy_model *self, PyObject *args, PyObject *kw) { return cfg_call(self, args, kw, 0); }
static PyObject *model_difference(tlpy_model *self, PyObject *args, PyObject *kw) { return cfg_call(self, args, kw, 1); }

/* (J_a, J_b) nv x nv of integrate (q, v) or difference (q0, q1). */
static PyObject *cfg_jacobians(tlpy_model *self, PyObject *args, PyObject *kw, int diff) {
  static char *names_int[] = {"q", "v", NULL}, *names_diff[] = {"q0", "q1", NULL};
  PyObject *a = NULL, *b = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", diff ? names_diff : names_int, &a, &b)) return NULL;
  const tl_model *m = self->model;
  npy_intp nq = tl_model_nq(m), nv = tl_model_nv(m), sh[2] = {nv, nv};
  PyArrayObject *xa = tlpy_f64(a, diff ? "q0" : "q", 1, &nq);
  PyArrayObject *xb = xa ? tlpy_f64(b, diff ? "q1" : "v", 1, diff ? &nq : &nv) : NULL;
  PyArrayObject *J1 = xb ? tlpy_zeros(2, sh, NPY_DOUBLE) : NULL, *J2 = J1 ? tlpy_zeros(2, sh, NPY_DOUBLE) : NULL;
  PyObject *r = NULL;
  if (J2) {
    tl_error err;
    tl_status st = diff ? tl_model_difference_jacobians(m, PyArray_DATA(xa), PyArray_DATA(xb), (int)nq,
                                                        PyArray_DATA(J1), PyArray_DATA(J2), (int)nv, &err)
                        : tl_model_integrate_jacobians(m, PyArray_DATA(xa), PyArray_DATA(xb), (int)nq,
                                                       PyArray_DATA(J1), PyArray_DATA(J2), (int)nv, &err);
    if (st)
      tlpy_raise(&err);
    else
      r = Py_BuildValue("(OO)", J1, J2);
  }
  Py_XDECREF(J1);
  Py_XDECREF(J2);
  Py_XDECREF(xa);
  Py_XDECREF(xb);
  return r;
}
static PyObject *model_integrate_jacobians(tlpy_model *self, PyObject *args, PyObject *kw) {
  return cfg_jacobians(self, args, kw, 0);
}
static PyObject *model_difference_jacobians(tlpy_model *self, PyObject *args, PyObject *kw) {
  return cfg_jacobians(self, args, kw, 1);
}

static PyObject *model_repr(tlpy_model *self) {
  return PyUnicode_FromFormat("<talus.Model '%s': nq %d, nv %d, %s base>", tl_model_name(self->model),
                              tl_model_nq(self->model), tl_model_nv(self->model),
                              tl_model_joint_type(self->model, 0) == TL_JOINT_FLOATING ? "floating" : "fixed");
}

static PyMethodDef model_methods[] = {
    {"from_urdf", (PyCFunction)(void (*)(void))model_from_urdf, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Model.from_urdf(path, floating_base=None) -> Model\n\n"
     "Load and compile a URDF file. floating_base: None = automatic (fixed iff the root link is\n"
     "'world' joined by a fixed joint), True = 6-DOF floating base, False = welded to the world.\n"
     "Raises talus.Error (with .file and .line of the bad element) for unreadable or invalid files."},
    {"from_urdf_string", (PyCFunction)(void (*)(void))model_from_urdf_string,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Model.from_urdf_string(xml, floating_base=None, name=None) -> Model\n\n"
     "Compile URDF text; `name` stands for the file name in error messages. Relative mesh paths\n"
     "start at the current directory."},
    {"integrate", (PyCFunction)(void (*)(void))model_integrate, METH_VARARGS | METH_KEYWORDS,
     "integrate(q, v) -> float64 (nq,)\n\n"
     "q (+) v: the rule the integrator applies to u dt. v (nv,) is a tangent vector laid out like u:\n"
     "vector joints add; the floating base's position adds v[0:3] and its quaternion turns by\n"
     "exp(v[3:6]) in the WORLD frame; a ball joint's quaternion turns by exp of its 3 entries in the\n"
     "parent joint frame (left multiplication). See docs/derivatives.md."},
    {"difference", (PyCFunction)(void (*)(void))model_difference, METH_VARARGS | METH_KEYWORDS,
     "difference(q0, q1) -> float64 (nv,)\n\n"
     "q1 (-) q0: the tangent vector v with integrate(q0, v) == q1 (rotations as rotation vectors of\n"
     "angle <= pi; quaternions may come back with the opposite sign, the same rotation)."},
    {"integrate_jacobians", (PyCFunction)(void (*)(void))model_integrate_jacobians, METH_VARARGS | METH_KEYWORDS,
     "integrate_jacobians(q, v) -> (J_q (nv, nv), J_v (nv, nv))\n\n"
     "d(q (+) v)/dq and d(q (+) v)/dv in the tangent spaces (block diagonal)."},
    {"difference_jacobians", (PyCFunction)(void (*)(void))model_difference_jacobians, METH_VARARGS | METH_KEYWORDS,
     "difference_jacobians(q0, q1) -> (J_q0 (nv, nv), J_q1 (nv, nv))\n\n"
     "d(q1 (-) q0)/dq0 and d(q1 (-) q0)/dq1 in the tangent spaces (block diagonal)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef model_getset[] = {
    {"name", (getter)get_name, NULL, "robot name (URDF <robot name>)", NULL},
    {"nq", (getter)get_nq, NULL, "generalized coordinate dimension", NULL},
    {"nv", (getter)get_nv, NULL, "generalized velocity dimension (degrees of freedom)", NULL},
    {"nbody", (getter)get_nbody, NULL, "bodies (= movable joints, the root joint included)", NULL},
    {"nframe", (getter)get_nframe, NULL, "frames (one per URDF joint, fixed ones included)", NULL},
    {"ngeom", (getter)get_ngeom, NULL, "collision geoms", NULL},
    {"total_mass", (getter)get_mass, NULL, "total mass, kg", NULL},
    {"floating_base", (getter)get_floating, NULL, "True if the root is a 6-DOF floating joint", NULL},
    {"joint_names", (getter)get_joint_names, NULL,
     "names of the movable joints after the root, in depth-first (q and u) order (list of str)", NULL},
    {"body_names", (getter)get_body_names, NULL, "URDF link names of the bodies, base first (list of str)", NULL},
    {"frame_names", (getter)get_frame_names, NULL,
     "frame names: 'ROOT', then one per URDF joint, fixed joints included (list of str)", NULL},
    {"warnings", (getter)get_warnings, NULL, "warnings produced while loading (list of str)", NULL},
    {"default_q", (getter)get_default_q, NULL,
     "default configuration, float64 (nq,): the reference configuration with every limited joint\n"
     "clamped 5 % of its range inside its limits (tl_model_default_q); systems start there", NULL},
    {"reference_q", (getter)get_reference_q, NULL,
     "reference configuration, float64 (nq,): zeros, identity quaternions, base at the origin", NULL},
    {"dof_limits", (getter)get_limits, NULL,
     "(lower, upper) position limits per DOF, float64 (nv,) each, +-inf when unlimited (rad or m)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus.Model",
    .tp_basicsize = sizeof(tlpy_model),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_repr = (reprfunc)model_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled robot model (immutable). Create with Model.from_urdf(path) or\n"
              "Model.from_urdf_string(xml). Conventions (RaiSim's): q = [base position (m), base\n"
              "quaternion (w, x, y, z), joints], u = [base linear and angular velocity in the WORLD\n"
              "frame, joint rates] for a floating base; joints in depth-first order.",
    .tp_methods = model_methods,
    .tp_getset = model_getset,
    .tp_new = model_new,
};
