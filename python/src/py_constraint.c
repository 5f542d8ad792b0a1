/* talus.World's loop constraints (talus/constraint.h): add_constraint,
 * constraint / constraints (read-back), project_constraints. */
#include <math.h>
#include <string.h>

#include "tlpy.h"

static const char *const type_names[] = {"ball", "hinge", "weld", "distance"};

/* A system argument: an int index or a talus.System of this world. */
static int system_arg(tlpy_world *self, PyObject *obj, const char *name, int *out) {
  if (PyObject_TypeCheck(obj, &tlpy_system_type)) {
    tlpy_system *s = (tlpy_system *)obj;
    if (s->world != self) {
      PyErr_Format(PyExc_ValueError, "%s: the System belongs to another World", name);
      return -1;
    }
    *out = tl_system_index(s->sys);
    return 0;
  }
  long v = PyLong_AsLong(obj);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Format(PyExc_TypeError, "%s: expected a system index (int) or a talus.System", name);
    return -1;
  }
  *out = v < -1 ? -2 : v > 1000000000 ? 1000000000 : (int)v; /* out of range stays out of range (talus.Error) */
  return 0;
}

static int vec3_arg(PyObject *obj, const char *name, double out[3]) {
  if (!obj || obj == Py_None) return 0;
  npy_intp three = 3;
  PyArrayObject *a = tlpy_f64(obj, name, 1, &three);
  if (!a) return -1;
  memcpy(out, PyArray_DATA(a), 3 * sizeof(double));
  Py_DECREF(a);
  return 0;
}

/* None: NAN (the C default), else a float. */
static int opt_double(PyObject *obj, double *out) {
  if (!obj || obj == Py_None) return 0;
  double v = PyFloat_AsDouble(obj);
  if (v == -1.0 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

PyObject *tlpy_world_add_constraint(tlpy_world *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"type", "body1", "body2", "system", "system2", "point1", "point2", "rpy1", "rpy2", "axis",
                          "distance", "min", "max", "name", "erp", "cfm", NULL};
  const char *type = NULL, *body1 = NULL, *body2 = "world", *name = NULL;
  PyObject *system = NULL, *system2 = NULL, *p1 = NULL, *p2 = NULL, *r1 = NULL, *r2 = NULL, *axis = NULL;
  PyObject *distance = NULL, *min = NULL, *max = NULL;
  tl_constraint_def d = tl_constraint_def_default();
  if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|zOOOOOOOOOOzdd:add_constraint", names, &type, &body1, &body2,
                                   &system, &system2, &p1, &p2, &r1, &r2, &axis, &distance, &min, &max, &name, &d.erp,
                                   &d.cfm))
    return NULL;
  if (tlpy_check_idle(self->busy, "this World")) return NULL;
  int t = -1;
  for (int k = 0; k < 4; k++)
    if (!strcmp(type, type_names[k])) t = k;
  if (t < 0) {
    PyErr_Format(PyExc_ValueError, "type: expected \"ball\", \"hinge\", \"weld\" or \"distance\", got \"%s\"", type);
    return NULL;
  }
  d.type = (tl_constraint_type)t;
  d.body1 = body1;
  d.body2 = body2;
  d.name = name;
  if (system && system_arg(self, system, "system", &d.system1)) return NULL;
  if (system2 && system2 != Py_None && system_arg(self, system2, "system2", &d.system2)) return NULL;
  if (vec3_arg(p1, "point1", d.point1) || vec3_arg(p2, "point2", d.point2) || vec3_arg(r1, "rpy1", d.rpy1) ||
      vec3_arg(r2, "rpy2", d.rpy2) || vec3_arg(axis, "axis", d.axis))
    return NULL;
  if (opt_double(distance, &d.distance) || opt_double(min, &d.min) || opt_double(max, &d.max)) return NULL;
  if (t != TL_CONSTRAINT_DISTANCE && (!isnan(d.distance) || !isnan(d.min) || !isnan(d.max))) {
    PyErr_SetString(PyExc_ValueError, "distance, min and max are for type=\"distance\" only");
    return NULL;
  }
  int index = -1;
  tl_error err;
  if (tl_world_add_constraint(self->world, &d, &index, &err)) return tlpy_raise(&err);
  return PyLong_FromLong(index);
}

static PyObject *info_dict(tlpy_world *self, int k) {
  tl_constraint_info ci;
  tl_error err;
  if (tl_world_constraint(self->world, k, &ci, &err)) return tlpy_raise(&err);
  const char *b1 = NULL, *b2 = "world";
  if (ci.system1 >= 0) b1 = tl_model_body_name(tl_system_model(tl_world_system(self->world, ci.system1)), ci.body1);
  if (ci.system2 >= 0) b2 = tl_model_body_name(tl_system_model(tl_world_system(self->world, ci.system2)), ci.body2);
  npy_intp three = 3;
  PyArrayObject *f = tlpy_zeros(1, &three, NPY_FLOAT64), *n = tlpy_zeros(1, &three, NPY_FLOAT64);
  if (!f || !n) {
    Py_XDECREF(f);
    Py_XDECREF(n);
    return NULL;
  }
  memcpy(PyArray_DATA(f), ci.force, sizeof ci.force);
  memcpy(PyArray_DATA(n), ci.torque, sizeof ci.torque);
  return Py_BuildValue("{s:i,s:s,s:s,s:i,s:i,s:s,s:i,s:s,s:d,s:d,s:N,s:N}", "index", k, "name", ci.name, "type",
                       type_names[ci.type], "nrow", ci.nrow, "system1", ci.system1, "body1", b1 ? b1 : "",
                       "system2", ci.system2, "body2", b2 ? b2 : "", "position_error", ci.position_error,
                       "angle_error", ci.angle_error, "force", (PyObject *)f, "torque", (PyObject *)n);
}

PyObject *tlpy_world_constraint(tlpy_world *self, PyObject *args) {
  PyObject *key;
  if (!PyArg_ParseTuple(args, "O:constraint", &key)) return NULL;
  if (tlpy_check_idle(self->busy, "this World")) return NULL;
  int k;
  if (PyUnicode_Check(key)) {
    k = tl_world_constraint_index(self->world, PyUnicode_AsUTF8(key));
    if (k < 0) {
      PyErr_Format(PyExc_KeyError, "no constraint named '%U'", key);
      return NULL;
    }
  } else {
    long v = PyLong_AsLong(key);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_SetString(PyExc_TypeError, "constraint(k): k is an index (int) or a name (str)");
      return NULL;
    }
    if (v < 0) v += tl_world_nconstraint(self->world);
    k = v < -1 ? -1 : v > 1000000000 ? 1000000000 : (int)v;
  }
  return info_dict(self, k);
}

PyObject *tlpy_world_constraints(tlpy_world *self, PyObject *noargs) {
  (void)noargs;
  if (tlpy_check_idle(self->busy, "this World")) return NULL;
  int n = tl_world_nconstraint(self->world);
  PyObject *list = PyList_New(n);
  for (int k = 0; list && k < n; k++) {
    PyObject *d = info_dict(self, k);
    if (!d) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, k, d);
  }
  return list;
}

PyObject *tlpy_world_project_constraints(tlpy_world *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"tol", "max_iter", NULL};
  double tol = 1e-12;
  int max_iter = 50;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|di:project_constraints", names, &tol, &max_iter)) return NULL;
  if (tlpy_check_idle(self->busy, "this World")) return NULL;
  tl_error err;
  if (tl_world_project_constraints(self->world, tol, max_iter, &err)) return tlpy_raise(&err);
  Py_RETURN_NONE;
}
