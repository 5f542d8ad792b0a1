/* talus.System: one articulated system of a World (talus/system.h). */
#include "tlpy.h"

#include <math.h>
#include <string.h>

#define IDLE(self)                                                         \
  do {                                                                     \
    if (tlpy_check_idle((self)->world->busy, "the World of this System")) return NULL; \
  } while (0)

PyObject *tlpy_system_new(tlpy_world *world, tl_system *sys) {
  tlpy_system *self = PyObject_New(tlpy_system, &tlpy_system_type);
  if (!self) return NULL;
  Py_INCREF(world);
  self->world = world;
  self->sys = sys;
  return (PyObject *)self;
}

static PyObject *system_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)type, (void)args, (void)kw;
  PyErr_SetString(PyExc_TypeError, "systems are created by World.add_system(model)");
  return NULL;
}

static void system_dealloc(tlpy_system *self) {
  Py_XDECREF(self->world);
  PyObject_Free(self);
}

static int NQ(tlpy_system *s) { return tl_system_nq(s->sys); }
static int NV(tlpy_system *s) { return tl_system_nv(s->sys); }

static PyArrayObject *vec(npy_intp n) { return tlpy_zeros(1, &n, NPY_DOUBLE); }
static PyArrayObject *mat(npy_intp r, npy_intp c) {
  npy_intp shape[2] = {r, c};
  return tlpy_zeros(2, shape, NPY_DOUBLE);
}

/* Return a, or raise the C error (dropping a) when st != TL_OK. */
static PyObject *done(PyArrayObject *a, tl_status st, const tl_error *err) {
  if (st) {
    Py_DECREF(a);
    return tlpy_raise(err);
  }
  return (PyObject *)a;
}

static PyObject *status(tl_status st, const tl_error *err) {
  if (st) return tlpy_raise(err);
  Py_RETURN_NONE;
}

/* A frame given by name or index; -1 with an exception set if bad. */
static int frame_arg(tlpy_system *self, PyObject *frame) {
  const tl_model *m = tl_system_model(self->sys);
  if (PyUnicode_Check(frame)) { /* a frame (URDF joint) name or a URDF link name */
    int i = tl_model_frame_index(m, PyUnicode_AsUTF8(frame));
    if (i < 0)
      PyErr_Format(PyExc_ValueError, "no frame or link named '%U' in '%s' (frames are named after the URDF joints)",
                   frame, tl_model_name(m));
    return i;
  }
  long i = PyLong_Check(frame) ? PyLong_AsLong(frame) : -1;
  if (PyErr_Occurred()) PyErr_Clear();
  if (i < 0 || i >= tl_model_nframe(m)) {
    PyErr_Format(PyExc_ValueError, "frame: expected a frame name or an index in [0, %d)", tl_model_nframe(m));
    return -1;
  }
  return (int)i;
}

static int body_arg(tlpy_system *self, PyObject *body) {
  const tl_model *m = tl_system_model(self->sys);
  if (PyUnicode_Check(body)) {
    int i = tl_model_body_index(m, PyUnicode_AsUTF8(body));
    if (i < 0) PyErr_Format(PyExc_ValueError, "no link named '%U' in '%s'", body, tl_model_name(m));
    return i;
  }
  long i = PyLong_Check(body) ? PyLong_AsLong(body) : -1;
  if (PyErr_Occurred()) PyErr_Clear();
  if (i < 0 || i >= tl_model_nbody(m)) {
    PyErr_Format(PyExc_ValueError, "body: expected a link name or a body index in [0, %d)", tl_model_nbody(m));
    return -1;
  }
  return (int)i;
}

/* ---------------- state ---------------- */

static PyObject *get_q(tlpy_system *self, void *c) {
  (void)c;
  IDLE(self);
  PyArrayObject *a = vec(NQ(self));
  tl_error err;
  return a ? done(a, tl_system_get_state(self->sys, PyArray_DATA(a), NQ(self), NULL, 0, &err), &err) : NULL;
}

static PyObject *get_u(tlpy_system *self, void *c) {
  (void)c;
  IDLE(self);
  PyArrayObject *a = vec(NV(self));
  tl_error err;
  return a ? done(a, tl_system_get_state(self->sys, NULL, 0, PyArray_DATA(a), NV(self), &err), &err) : NULL;
}

/* set q and/or u (NULL: keep). */
static int set_qu(tlpy_system *self, PyObject *qobj, PyObject *uobj) {
  if (tlpy_check_idle(self->world->busy, "the World of this System")) return -1;
  npy_intp nq = NQ(self), nv = NV(self);
  PyArrayObject *qa = NULL, *ua = NULL;
  double *q = PyMem_Malloc(sizeof(double) * (size_t)(nq + nv + 1)), *u = q + nq;
  int rc = -1;
  tl_error err;
  if (!q) {
    PyErr_NoMemory();
    return -1;
  }
  tl_system_get_state(self->sys, q, (int)nq, u, (int)nv, NULL);
  if (qobj && !(qa = tlpy_f64(qobj, "q", 1, &nq))) goto out;
  if (uobj && !(ua = tlpy_f64(uobj, "u", 1, &nv))) goto out;
  if (qa) memcpy(q, PyArray_DATA(qa), sizeof(double) * (size_t)nq);
  if (ua) memcpy(u, PyArray_DATA(ua), sizeof(double) * (size_t)nv);
  if (tl_system_set_state(self->sys, q, (int)nq, u, (int)nv, &err)) tlpy_raise(&err);
  else rc = 0;
out:
  Py_XDECREF(qa);
  Py_XDECREF(ua);
  PyMem_Free(q);
  return rc;
}

static int set_q(tlpy_system *self, PyObject *v, void *c) {
  (void)c;
  if (!v) {
    PyErr_SetString(PyExc_AttributeError, "q cannot be deleted");
    return -1;
  }
  return set_qu(self, v, NULL);
}

static int set_u(tlpy_system *self, PyObject *v, void *c) {
  (void)c;
  if (!v) {
    PyErr_SetString(PyExc_AttributeError, "u cannot be deleted");
    return -1;
  }
  return set_qu(self, NULL, v);
}

static PyObject *system_set_state(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"q", "u", NULL};
  PyObject *q = NULL, *u = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_state", names, &q, &u)) return NULL;
  if (u == Py_None) {
    /* u omitted: zero velocity */
    npy_intp nv = NV(self);
    PyArrayObject *z = vec(nv);
    if (!z) return NULL;
    int rc = set_qu(self, q, (PyObject *)z);
    Py_DECREF(z);
    if (rc) return NULL;
    Py_RETURN_NONE;
  }
  if (set_qu(self, q, u)) return NULL;
  Py_RETURN_NONE;
}

/* ---------------- dynamics ---------------- */

static PyObject *system_mass_matrix(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  PyArrayObject *a = mat(NV(self), NV(self));
  tl_error err;
  return a ? done(a, tl_system_mass_matrix(self->sys, PyArray_DATA(a), NV(self), &err), &err) : NULL;
}

static PyObject *system_inverse_mass_matrix(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  PyArrayObject *a = mat(NV(self), NV(self));
  tl_error err;
  return a ? done(a, tl_system_inverse_mass_matrix(self->sys, PyArray_DATA(a), NV(self), &err), &err) : NULL;
}

static PyObject *system_nonlinear_effects(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  PyArrayObject *a = vec(NV(self));
  tl_error err;
  return a ? done(a, tl_system_nonlinear_term(self->sys, PyArray_DATA(a), NV(self), &err), &err) : NULL;
}

typedef tl_status (*map_fn)(tl_system *, const double *, double *, int, tl_error *);

/* y = fn(x) for x, y of length nv. */
static PyObject *map_nv(tlpy_system *self, PyObject *args, const char *name, map_fn fn) {
  PyObject *x = NULL;
  if (!PyArg_ParseTuple(args, "O", &x)) return NULL;
  IDLE(self);
  npy_intp nv = NV(self);
  PyArrayObject *xa = tlpy_f64(x, name, 1, &nv);
  if (!xa) return NULL;
  PyArrayObject *y = vec(nv);
  tl_error err;
  PyObject *r = y ? done(y, fn(self->sys, PyArray_DATA(xa), PyArray_DATA(y), (int)nv, &err), &err) : NULL;
  Py_DECREF(xa);
  return r;
}

static PyObject *system_inverse_dynamics(tlpy_system *self, PyObject *args) {
  return map_nv(self, args, "du", tl_system_inverse_dynamics);
}
static PyObject *system_forward_dynamics(tlpy_system *self, PyObject *args) {
  return map_nv(self, args, "tau", tl_system_forward_dynamics);
}

/* ---------------- analytic derivatives (issue 24; talus/system.h) ---------------- */

/* A tuple of n new zero (rows x nv) arrays into out[]; 0 or -1 (nothing kept). */
static int deriv_arrays(PyArrayObject **out, int n, npy_intp rows, npy_intp nv) {
  for (int i = 0; i < n; i++) {
    out[i] = mat(rows, nv);
    if (!out[i]) {
      for (int j = 0; j < i; j++) Py_DECREF(out[j]);
      return -1;
    }
  }
  return 0;
}

/* The tuple of the n arrays, or the C error; the references are consumed. */
static PyObject *deriv_done(PyArrayObject **a, int n, tl_status st, const tl_error *err) {
  if (st) {
    for (int i = 0; i < n; i++) Py_DECREF(a[i]);
    return tlpy_raise(err);
  }
  PyObject *t = PyTuple_New(n);
  if (!t) {
    for (int i = 0; i < n; i++) Py_DECREF(a[i]);
    return NULL;
  }
  for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, (PyObject *)a[i]);
  return t;
}

/* The two signatures of the dynamics derivatives, plain and with the passive forces. */
typedef tl_status (*inverse_derivatives_fn)(tl_system *, const double *, double *, double *, int, tl_error *);
typedef tl_status (*forward_derivatives_fn)(tl_system *, const double *, double *, double *, double *, int,
                                            tl_error *);

/* (dtau_dq, dtau_du) from fn at the given du (nv). */
static PyObject *inverse_derivatives(tlpy_system *self, PyObject *args, inverse_derivatives_fn fn) {
  PyObject *x = NULL;
  if (!PyArg_ParseTuple(args, "O", &x)) return NULL;
  IDLE(self);
  npy_intp nv = NV(self);
  PyArrayObject *du = tlpy_f64(x, "du", 1, &nv), *o[2];
  if (!du) return NULL;
  if (deriv_arrays(o, 2, nv, nv)) {
    Py_DECREF(du);
    return NULL;
  }
  tl_error err;
  tl_status st = fn(self->sys, PyArray_DATA(du), PyArray_DATA(o[0]), PyArray_DATA(o[1]), (int)nv, &err);
  Py_DECREF(du);
  return deriv_done(o, 2, st, &err);
}

/* (ddu_dq, ddu_du, ddu_dtau) from fn at the given tau (nv). */
static PyObject *forward_derivatives(tlpy_system *self, PyObject *args, forward_derivatives_fn fn) {
  PyObject *x = NULL;
  if (!PyArg_ParseTuple(args, "O", &x)) return NULL;
  IDLE(self);
  npy_intp nv = NV(self);
  PyArrayObject *tau = tlpy_f64(x, "tau", 1, &nv), *o[3];
  if (!tau) return NULL;
  if (deriv_arrays(o, 3, nv, nv)) {
    Py_DECREF(tau);
    return NULL;
  }
  tl_error err;
  tl_status st = fn(self->sys, PyArray_DATA(tau), PyArray_DATA(o[0]), PyArray_DATA(o[1]), PyArray_DATA(o[2]),
                    (int)nv, &err);
  Py_DECREF(tau);
  return deriv_done(o, 3, st, &err);
}

static PyObject *system_inverse_dynamics_derivatives(tlpy_system *self, PyObject *args) {
  return inverse_derivatives(self, args, tl_system_inverse_dynamics_derivatives);
}

static PyObject *system_forward_dynamics_derivatives(tlpy_system *self, PyObject *args) {
  return forward_derivatives(self, args, tl_system_forward_dynamics_derivatives);
}

/* ---- with the step's passive and external forces (tl_system_passive_force*, *_passive_derivatives) ---- */

static PyObject *system_clear_external_forces(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  tl_system_clear_external_forces(self->sys);
  Py_RETURN_NONE;
}

static PyObject *system_passive_force(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  PyArrayObject *a = vec(NV(self));
  tl_error err;
  return a ? done(a, tl_system_passive_force(self->sys, PyArray_DATA(a), NV(self), &err), &err) : NULL;
}

static PyObject *system_passive_force_derivatives(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  npy_intp nv = NV(self);
  PyArrayObject *o[2];
  if (deriv_arrays(o, 2, nv, nv)) return NULL;
  tl_error err;
  tl_status st = tl_system_passive_force_derivatives(self->sys, PyArray_DATA(o[0]), PyArray_DATA(o[1]), (int)nv,
                                                     &err);
  return deriv_done(o, 2, st, &err);
}

static PyObject *system_inverse_dynamics_passive_derivatives(tlpy_system *self, PyObject *args) {
  return inverse_derivatives(self, args, tl_system_inverse_dynamics_passive_derivatives);
}

static PyObject *system_forward_dynamics_passive_derivatives(tlpy_system *self, PyObject *args) {
  return forward_derivatives(self, args, tl_system_forward_dynamics_passive_derivatives);
}

static PyObject *system_frame_placement_derivatives(tlpy_system *self, PyObject *args) {
  PyObject *f = NULL;
  if (!PyArg_ParseTuple(args, "O", &f)) return NULL;
  IDLE(self);
  int i = frame_arg(self, f);
  if (i < 0) return NULL;
  npy_intp nv = NV(self);
  PyArrayObject *o[2];
  if (deriv_arrays(o, 2, 3, nv)) return NULL;
  tl_error err;
  tl_status st = tl_system_frame_placement_derivatives(self->sys, i, PyArray_DATA(o[0]), PyArray_DATA(o[1]),
                                                       (int)nv, &err);
  return deriv_done(o, 2, st, &err);
}

/* ---------------- kinematics ---------------- */

typedef tl_status (*pose_fn)(tl_system *, int, double *, double *, tl_error *);

static PyObject *pose(tlpy_system *self, int i, pose_fn fn) {
  PyArrayObject *p = vec(3), *R = mat(3, 3);
  tl_error err;
  if (!p || !R) {
    Py_XDECREF(p), Py_XDECREF(R);
    return NULL;
  }
  if (fn(self->sys, i, PyArray_DATA(p), PyArray_DATA(R), &err)) {
    Py_DECREF(p), Py_DECREF(R);
    return tlpy_raise(&err);
  }
  return Py_BuildValue("(NN)", p, R);
}

static PyObject *system_frame_pose(tlpy_system *self, PyObject *args) {
  PyObject *frame;
  if (!PyArg_ParseTuple(args, "O:frame_pose", &frame)) return NULL;
  IDLE(self);
  int f = frame_arg(self, frame);
  return f < 0 ? NULL : pose(self, f, tl_system_frame_pose);
}

static PyObject *system_body_pose(tlpy_system *self, PyObject *args) {
  PyObject *body;
  if (!PyArg_ParseTuple(args, "O:body_pose", &body)) return NULL;
  IDLE(self);
  int b = body_arg(self, body);
  return b < 0 ? NULL : pose(self, b, tl_system_body_pose);
}

static PyObject *system_frame_velocity(tlpy_system *self, PyObject *args) {
  PyObject *frame;
  if (!PyArg_ParseTuple(args, "O:frame_velocity", &frame)) return NULL;
  IDLE(self);
  int f = frame_arg(self, frame);
  if (f < 0) return NULL;
  PyArrayObject *v = vec(3), *w = vec(3);
  tl_error err;
  if (!v || !w || tl_system_frame_velocity(self->sys, f, PyArray_DATA(v), PyArray_DATA(w), &err)) {
    Py_XDECREF(v), Py_XDECREF(w);
    return PyErr_Occurred() ? NULL : tlpy_raise(&err);
  }
  return Py_BuildValue("(NN)", v, w);
}

static PyObject *system_frame_jacobian(tlpy_system *self, PyObject *args) {
  PyObject *frame;
  if (!PyArg_ParseTuple(args, "O:frame_jacobian", &frame)) return NULL;
  IDLE(self);
  int f = frame_arg(self, frame);
  if (f < 0) return NULL;
  int nv = NV(self);
  PyArrayObject *J = mat(6, nv);
  tl_error err;
  if (!J) return NULL;
  double *d = PyArray_DATA(J);
  return done(J, tl_system_frame_jacobian(self->sys, f, d, d + 3 * nv, nv, &err), &err);
}

static PyObject *system_com(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  PyArrayObject *a = vec(3);
  tl_error err;
  return a ? done(a, tl_system_com(self->sys, PyArray_DATA(a), &err), &err) : NULL;
}

static PyObject *system_energy(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  return Py_BuildValue("(dd)", tl_system_kinetic_energy(self->sys), tl_system_potential_energy(self->sys));
}

static PyObject *system_set_base_pose(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"pos", "R", NULL};
  PyObject *pos, *rot = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_base_pose", names, &pos, &rot)) return NULL;
  IDLE(self);
  npy_intp three = 3, shape[2] = {3, 3};
  static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  PyArrayObject *p = tlpy_f64(pos, "pos", 1, &three);
  PyArrayObject *r = !p || rot == Py_None ? NULL : tlpy_f64(rot, "R", 2, shape);
  PyObject *out = NULL;
  tl_error err;
  if (p && (r || rot == Py_None))
    out = status(tl_system_set_base_pose(self->sys, PyArray_DATA(p), r ? PyArray_DATA(r) : eye, &err), &err);
  Py_XDECREF(p), Py_XDECREF(r);
  return out;
}

/* ---------------- control ---------------- */

static PyObject *system_set_pd_gains(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"kp", "kd", NULL};
  PyObject *kp, *kd;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:set_pd_gains", names, &kp, &kd)) return NULL;
  IDLE(self);
  npy_intp nv = NV(self);
  PyArrayObject *a = tlpy_f64_broadcast(kp, "kp", 1, &nv), *b = a ? tlpy_f64_broadcast(kd, "kd", 1, &nv) : NULL;
  PyObject *r = NULL;
  tl_error err;
  if (a && b) r = status(tl_system_set_pd_gains(self->sys, PyArray_DATA(a), PyArray_DATA(b), (int)nv, &err), &err);
  Py_XDECREF(a), Py_XDECREF(b);
  return r;
}

static PyObject *system_set_pd_targets(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"q_ref", "u_ref", NULL};
  PyObject *q, *u = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_pd_targets", names, &q, &u)) return NULL;
  IDLE(self);
  npy_intp nq = NQ(self), nv = NV(self);
  PyArrayObject *a = tlpy_f64(q, "q_ref", 1, &nq);
  PyArrayObject *b = !a ? NULL : u == Py_None ? vec(nv) : tlpy_f64(u, "u_ref", 1, &nv);
  PyObject *r = NULL;
  tl_error err;
  if (a && b)
    r = status(tl_system_set_pd_targets(self->sys, PyArray_DATA(a), (int)nq, PyArray_DATA(b), (int)nv, &err), &err);
  Py_XDECREF(a), Py_XDECREF(b);
  return r;
}

static PyObject *system_set_generalized_force(tlpy_system *self, PyObject *args) {
  PyObject *tau = Py_None;
  if (!PyArg_ParseTuple(args, "|O:set_generalized_force", &tau)) return NULL;
  IDLE(self);
  npy_intp nv = NV(self);
  tl_error err;
  if (tau == Py_None) return status(tl_system_set_generalized_force(self->sys, NULL, 0, &err), &err); /* zero */
  PyArrayObject *a = tlpy_f64(tau, "tau", 1, &nv);
  if (!a) return NULL;
  PyObject *r = status(tl_system_set_generalized_force(self->sys, PyArray_DATA(a), (int)nv, &err), &err);
  Py_DECREF(a);
  return r;
}

static PyObject *system_applied_force(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  PyArrayObject *a = vec(NV(self));
  tl_error err;
  return a ? done(a, tl_system_applied_generalized_force(self->sys, PyArray_DATA(a), NV(self), &err), &err) : NULL;
}

static PyObject *system_joint_wrenches(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  int nb = tl_model_nbody(tl_system_model(self->sys));
  PyArrayObject *a = mat(nb, 6);
  tl_error err;
  return a ? done(a, tl_system_joint_wrenches(self->sys, PyArray_DATA(a), 6 * nb, &err), &err) : NULL;
}

static PyObject *system_add_external_force(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"body", "force", "point", NULL};
  PyObject *body, *force, *point = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:add_external_force", names, &body, &force, &point)) return NULL;
  IDLE(self);
  int b = body_arg(self, body);
  if (b < 0) return NULL;
  npy_intp three = 3;
  PyArrayObject *f = tlpy_f64(force, "force", 1, &three);
  PyArrayObject *p = !f || point == Py_None ? NULL : tlpy_f64(point, "point", 1, &three);
  PyObject *r = NULL;
  tl_error err;
  if (f && (p || point == Py_None))
    r = status(tl_system_add_external_force(self->sys, b, PyArray_DATA(f), p ? PyArray_DATA(p) : NULL, &err), &err);
  Py_XDECREF(f), Py_XDECREF(p);
  return r;
}

/* ---------------- contacts ---------------- */

static PyObject *system_contacts(tlpy_system *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  tl_world *w = self->world->world;
  int me = tl_system_index(self->sys), n = 0, total = tl_world_ncontact(w);
  tl_contact_info c;
  for (int k = 0; k < total; k++)
    if (!tl_world_contact(w, k, &c, NULL) && (c.system == me || c.other_system == me)) n++;
  npy_intp n3[2] = {n, 3}, n1 = n;
  PyArrayObject *pos = tlpy_zeros(2, n3, NPY_DOUBLE), *nor = tlpy_zeros(2, n3, NPY_DOUBLE);
  PyArrayObject *imp = tlpy_zeros(2, n3, NPY_DOUBLE), *depth = tlpy_zeros(1, &n1, NPY_DOUBLE);
  PyArrayObject *body = tlpy_zeros(1, &n1, NPY_INT), *osys = tlpy_zeros(1, &n1, NPY_INT);
  PyArrayObject *obody = tlpy_zeros(1, &n1, NPY_INT);
  if (!pos || !nor || !imp || !depth || !body || !osys || !obody) {
    Py_XDECREF(pos), Py_XDECREF(nor), Py_XDECREF(imp), Py_XDECREF(depth), Py_XDECREF(body), Py_XDECREF(osys);
    Py_XDECREF(obody);
    return NULL;
  }
  int i = 0;
  for (int k = 0; k < total && i < n; k++) {
    if (tl_world_contact(w, k, &c, NULL) || (c.system != me && c.other_system != me)) continue;
    int mine = c.system == me; /* else this system is side b: flip to its point of view */
    double sgn = mine ? 1.0 : -1.0;
    for (int a = 0; a < 3; a++) {
      *(double *)PyArray_GETPTR2(pos, i, a) = c.pos[a];
      *(double *)PyArray_GETPTR2(nor, i, a) = sgn * c.normal[a];
      *(double *)PyArray_GETPTR2(imp, i, a) = sgn * c.impulse[a];
    }
    *(double *)PyArray_GETPTR1(depth, i) = c.depth;
    *(int *)PyArray_GETPTR1(body, i) = mine ? c.body : c.other_body;
    *(int *)PyArray_GETPTR1(osys, i) = mine ? c.other_system : c.system;
    *(int *)PyArray_GETPTR1(obody, i) = mine ? c.other_body : c.body;
    i++;
  }
  return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "position", pos, "normal", nor, "impulse", imp, "depth", depth,
                       "body", body, "other_system", osys, "other_body", obody);
}

/* (force (3,), torque (3,)) of a contact wrench query, or NULL with the error raised. */
static PyObject *wrench_result(PyArrayObject *f, PyArrayObject *t, tl_status st, const tl_error *err) {
  if (st || !f || !t) {
    Py_XDECREF(f), Py_XDECREF(t);
    return PyErr_Occurred() ? NULL : tlpy_raise(err);
  }
  return Py_BuildValue("(NN)", f, t);
}

static PyObject *system_body_contact_wrench(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"body", "point", NULL};
  PyObject *body, *point = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:body_contact_wrench", names, &body, &point)) return NULL;
  IDLE(self);
  int b = body_arg(self, body);
  if (b < 0) return NULL;
  npy_intp three = 3;
  PyArrayObject *p = point == Py_None ? NULL : tlpy_f64(point, "point", 1, &three);
  if (point != Py_None && !p) return NULL;
  PyArrayObject *f = vec(3), *t = vec(3);
  tl_error err;
  tl_status st = f && t ? tl_system_body_contact_wrench(self->sys, b, p ? PyArray_DATA(p) : NULL, PyArray_DATA(f),
                                                          PyArray_DATA(t), &err)
                        : TL_ERR_MEMORY;
  Py_XDECREF(p);
  return wrench_result(f, t, st, &err);
}

static PyObject *system_frame_contact_wrench(tlpy_system *self, PyObject *args) {
  PyObject *frame;
  if (!PyArg_ParseTuple(args, "O:frame_contact_wrench", &frame)) return NULL;
  IDLE(self);
  int fr = frame_arg(self, frame);
  if (fr < 0) return NULL;
  PyArrayObject *f = vec(3), *t = vec(3);
  tl_error err;
  tl_status st = f && t ? tl_system_frame_contact_wrench(self->sys, fr, PyArray_DATA(f), PyArray_DATA(t), &err)
                        : TL_ERR_MEMORY;
  return wrench_result(f, t, st, &err);
}

static PyObject *system_frame_wrench(tlpy_system *self, PyObject *args) {
  PyObject *frame;
  if (!PyArg_ParseTuple(args, "O:frame_wrench", &frame)) return NULL;
  IDLE(self);
  int fr = frame_arg(self, frame);
  if (fr < 0) return NULL;
  PyArrayObject *f = vec(3), *t = vec(3);
  tl_error err;
  tl_status st = f && t ? tl_system_frame_wrench(self->sys, fr, PyArray_DATA(f), PyArray_DATA(t), &err) : TL_ERR_MEMORY;
  return wrench_result(f, t, st, &err);
}

static PyObject *system_frame_index(tlpy_system *self, PyObject *args) {
  PyObject *frame;
  if (!PyArg_ParseTuple(args, "O:frame_index", &frame)) return NULL;
  int fr = frame_arg(self, frame);
  return fr < 0 ? NULL : PyLong_FromLong(fr);
}

/* ---------------- run-time model changes (randomization) ---------------- */

static PyObject *system_link_inertial(tlpy_system *self, PyObject *args) {
  const char *link;
  if (!PyArg_ParseTuple(args, "s:link_inertial", &link)) return NULL;
  IDLE(self);
  double mass;
  PyArrayObject *com = vec(3), *I = mat(3, 3);
  tl_error err;
  if (!com || !I || tl_system_link_inertial(self->sys, link, &mass, PyArray_DATA(com), PyArray_DATA(I), &err)) {
    Py_XDECREF(com), Py_XDECREF(I);
    return PyErr_Occurred() ? NULL : tlpy_raise(&err);
  }
  return Py_BuildValue("(dNN)", mass, com, I);
}

static PyObject *system_set_link_inertial(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"link", "mass", "com", "inertia", NULL};
  const char *link;
  double mass;
  PyObject *com, *inertia;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sdOO:set_link_inertial", names, &link, &mass, &com, &inertia)) return NULL;
  IDLE(self);
  npy_intp three = 3, s33[2] = {3, 3};
  PyArrayObject *c = tlpy_f64(com, "com", 1, &three), *I = c ? tlpy_f64(inertia, "inertia", 2, s33) : NULL;
  PyObject *r = NULL;
  tl_error err;
  if (c && I) r = status(tl_system_set_link_inertial(self->sys, link, mass, PyArray_DATA(c), PyArray_DATA(I), &err), &err);
  Py_XDECREF(c), Py_XDECREF(I);
  return r;
}

static PyObject *system_set_geom_friction(tlpy_system *self, PyObject *args) {
  int geom;
  double mu;
  if (!PyArg_ParseTuple(args, "id:set_geom_friction", &geom, &mu)) return NULL;
  IDLE(self);
  tl_error err;
  return status(tl_system_set_geom_friction(self->sys, geom, mu, &err), &err);
}

static PyObject *system_set_joint_limits(tlpy_system *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"dof", "lower", "upper", "effort", NULL};
  int dof;
  double lo, hi, effort = INFINITY;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "idd|d:set_joint_limits", names, &dof, &lo, &hi, &effort)) return NULL;
  IDLE(self);
  tl_error err;
  return status(tl_system_set_joint_limits(self->sys, dof, lo, hi, effort, &err), &err);
}

typedef tl_status (*dof_fn)(tl_system *, int, double, tl_error *);

static PyObject *dof_value(tlpy_system *self, PyObject *args, const char *fmt, dof_fn fn) {
  int dof;
  double value;
  if (!PyArg_ParseTuple(args, fmt, &dof, &value)) return NULL;
  IDLE(self);
  tl_error err;
  return status(fn(self->sys, dof, value, &err), &err);
}

static PyObject *system_set_joint_damping(tlpy_system *self, PyObject *args) {
  return dof_value(self, args, "id:set_joint_damping", tl_system_set_joint_damping);
}
static PyObject *system_set_joint_friction(tlpy_system *self, PyObject *args) {
  return dof_value(self, args, "id:set_joint_friction", tl_system_set_joint_friction);
}
static PyObject *system_set_rotor_inertia(tlpy_system *self, PyObject *args) {
  return dof_value(self, args, "id:set_rotor_inertia", tl_system_set_rotor_inertia);
}

/* ---------------- attributes ---------------- */

static PyObject *get_nq(tlpy_system *self, void *c) { (void)c; return PyLong_FromLong(NQ(self)); }
static PyObject *get_nv(tlpy_system *self, void *c) { (void)c; return PyLong_FromLong(NV(self)); }
static PyObject *get_index(tlpy_system *self, void *c) { (void)c; return PyLong_FromLong(tl_system_index(self->sys)); }
static PyObject *get_name(tlpy_system *self, void *c) {
  (void)c;
  return PyUnicode_FromString(tl_model_name(tl_system_model(self->sys)));
}
static PyObject *get_world(tlpy_system *self, void *c) {
  (void)c;
  Py_INCREF(self->world);
  return (PyObject *)self->world;
}
static PyObject *get_total_mass(tlpy_system *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(tl_model_total_mass(tl_system_model(self->sys)));
}

static PyObject *system_repr(tlpy_system *self) {
  return PyUnicode_FromFormat("<talus.System %d '%s': nq %d, nv %d>", tl_system_index(self->sys),
                              tl_model_name(tl_system_model(self->sys)), NQ(self), NV(self));
}

#define M_NOARGS(name, fn, doc) {name, (PyCFunction)fn, METH_NOARGS, doc}
#define M_ARGS(name, fn, doc) {name, (PyCFunction)fn, METH_VARARGS, doc}
#define M_KW(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef system_methods[] = {
    M_KW("set_state", system_set_state,
         "set_state(q, u=None)\n\nSet q (nq,) and u (nv,) (u None: zero). Quaternions are normalised; NaN, Inf and "
         "zero\nquaternions raise talus.Error and change nothing."),
    M_KW("set_base_pose", system_set_base_pose,
         "set_base_pose(pos, R=None)\n\nPlace the base, floating or fixed: position (3,) m and rotation (3, 3) "
         "(world from\nbase; None: identity). A floating base's pose goes into q; a fixed base is welded\n"
         "there (it does not move by itself). talus.Error for a non-rotation R."),
    M_NOARGS("mass_matrix", system_mass_matrix,
             "mass_matrix() -> float64 (nv, nv)\n\nJoint-space mass matrix M(q), rotor inertia on the diagonal "
             "(CRBA,\nFeatherstone 2008, Table 6.2)."),
    M_NOARGS("inverse_mass_matrix", system_inverse_mass_matrix,
             "inverse_mass_matrix() -> float64 (nv, nv)\n\nM^-1 through the tree-sparse L^T D L factorization."),
    M_NOARGS("nonlinear_effects", system_nonlinear_effects,
             "nonlinear_effects() -> float64 (nv,)\n\nh = Coriolis + centrifugal + gravity, so that tau = M du/dt + "
             "h (RNEA,\nFeatherstone 2008, Table 5.1). N, N m."),
    M_ARGS("inverse_dynamics", system_inverse_dynamics,
           "inverse_dynamics(du) -> tau, float64 (nv,)\n\ntau = M du + h at the current state (RNEA)."),
    M_ARGS("forward_dynamics", system_forward_dynamics,
           "forward_dynamics(tau) -> du, float64 (nv,)\n\ndu = M^-1 (tau - h) (ABA, Featherstone 2008, Table 7.1)."),
    M_ARGS("inverse_dynamics_derivatives", system_inverse_dynamics_derivatives,
           "inverse_dynamics_derivatives(du) -> (dtau_dq (nv, nv), dtau_du (nv, nv))\n\n"
           "Analytic derivatives of inverse_dynamics(du) at the current (q, u) (Carpentier & Mansard,\n"
           "RSS 2018): d tau/dq along the tangent directions of Model.integrate, d tau/du; d tau/d du\n"
           "is mass_matrix(). Entry (i, j) = d tau_i / d x_j. See docs/derivatives.md."),
    M_ARGS("forward_dynamics_derivatives", system_forward_dynamics_derivatives,
           "forward_dynamics_derivatives(tau) -> (ddu_dq, ddu_du, ddu_dtau), float64 (nv, nv) each\n\n"
           "Analytic derivatives of forward_dynamics(tau) at the current (q, u): -M^-1 times the\n"
           "inverse-dynamics derivatives at the ABA solution, and ddu_dtau = M^-1."),
    M_NOARGS("clear_external_forces", system_clear_external_forces,
             "clear_external_forces()\n\nDrop the external forces added for the next step."),
    M_NOARGS("passive_force", system_passive_force,
             "passive_force() -> tau_p, float64 (nv,)\n\nThe step's joint damping, springs and external forces at the "
             "current state:\ntau_p = -D u + K (mount (-) q) + the external forces added for the next step (N, N m)."),
    M_NOARGS("passive_force_derivatives", system_passive_force_derivatives,
             "passive_force_derivatives() -> (dtp_dq (nv, nv), dtp_du (nv, nv))\n\nAnalytic derivatives of "
             "passive_force(): -K, -D and the q dependence of the world-frame\nexternal forces (points fixed to "
             "their bodies). See docs/derivatives.md."),
    M_ARGS("inverse_dynamics_passive_derivatives", system_inverse_dynamics_passive_derivatives,
           "inverse_dynamics_passive_derivatives(du) -> (dtau_dq, dtau_du)\n\n"
           "Derivatives of inverse_dynamics(du) - passive_force() at the current (q, u)."),
    M_ARGS("forward_dynamics_passive_derivatives", system_forward_dynamics_passive_derivatives,
           "forward_dynamics_passive_derivatives(tau) -> (ddu_dq, ddu_du, ddu_dtau)\n\n"
           "Derivatives of forward_dynamics(tau + passive_force()) at the current (q, u)."),
    M_ARGS("frame_placement_derivatives", system_frame_placement_derivatives,
           "frame_placement_derivatives(frame) -> (dp_dq (3, nv), dR_dq (3, nv))\n\n"
           "p(integrate(q, d)) = p + dp_dq d and R(integrate(q, d)) = exp([dR_dq d]x) R to first order\n"
           "(world frame): the frame Jacobians (frame_jacobian's rows)."),
    M_ARGS("frame_pose", system_frame_pose,
           "frame_pose(frame) -> (p float64 (3,), R float64 (3, 3))\n\nWorld position (m) and rotation (world from "
           "frame) of a frame given by name or index."),
    M_ARGS("body_pose", system_body_pose,
           "body_pose(body) -> (p (3,), R (3, 3))\n\nWorld pose of a body frame (link name or body index)."),
    M_ARGS("frame_velocity", system_frame_velocity,
           "frame_velocity(frame) -> (v (3,), w (3,))\n\nWorld linear velocity of the frame origin (m/s) and "
           "angular velocity (rad/s)."),
    M_ARGS("frame_jacobian", system_frame_jacobian,
           "frame_jacobian(frame) -> float64 (6, nv)\n\nJacobian of the frame origin, linear rows first: J[:3] u "
           "is the origin's world\nlinear velocity, J[3:] u the body's world angular velocity."),
    M_NOARGS("com", system_com, "com() -> float64 (3,)\n\nCentre of mass of the system, world frame, m."),
    M_NOARGS("energy", system_energy, "energy() -> (kinetic, potential)\n\nKinetic 1/2 u^T M u and gravitational "
                                      "potential energy, J."),
    M_KW("set_pd_gains", system_set_pd_gains,
         "set_pd_gains(kp, kd)\n\nImplicit PD gains per DOF, (nv,) each or scalars (N m/rad, N m s/rad; N/m, N s/m).\n"
         "The PD uses the end-of-step state, so its gains enter the effective mass (Tan, Liu, Turk 2011)."),
    M_KW("set_pd_targets", system_set_pd_targets,
         "set_pd_targets(q_ref, u_ref=None)\n\nPD position targets (nq,) and velocity targets (nv,) (None: zero).\n"
         "Scalar targets outside the joint limits are used at the nearer limit."),
    M_ARGS("set_generalized_force", system_set_generalized_force,
           "set_generalized_force(tau=None)\n\nFeedforward generalized force (nv,), applied every step until changed "
           "(None: zero)."),
    M_NOARGS("applied_generalized_force", system_applied_force,
             "applied_generalized_force() -> float64 (nv,)\n\nActuator force of the last step: feedforward + PD, after "
             "the effort limits."),
    M_NOARGS("joint_wrenches", system_joint_wrenches,
             "joint_wrenches() -> float64 (njoint, 6)\n\nJoint reaction wrenches of the last step (ODE's "
             "dJointGetFeedback; Pinocchio's data.f\nin the joint frame): row j = [f (3) N, n (3) N m], the wrench "
             "the parent body exerted on\nbody j through joint j (j: body index, model.body_names order; row 0 the "
             "root joint:\na fixed base's support reaction, zero for a floating base), constraint, actuator,\nlimit, "
             "spring, damping and friction parts together, n about the joint frame's origin,\nboth in the axes of "
             "the child's joint frame (the body frame) at the step's start q.\nRecursive Newton-Euler at the step's "
             "start with du = (u+ - u)/dt, gravity, the step's\ncontact and external forces (Featherstone 2008, "
             "Table 5.1): consistent with the step,\nthe axis projection is the applied force less the rotor's "
             "inertia torque. Fixed URDF\njoints are merged, not reported. Ask right after world.step(): "
             "TalusError before the\nfirst step or after set_state, and on plugin engines (its status: "
             "unsupported)."),
    M_ARGS("frame_wrench", system_frame_wrench,
           "frame_wrench(frame) -> (f float64 (3,), n float64 (3,))\n\nThe wrench across a frame (name, link name or "
           "index) over the last step, as\njoint_wrenches: for a fixed URDF joint inside a merged body, what the "
           "links before it\nexerted on the links beyond it (their inertial and gravity forces, the joints they\n"
           "carry, less their contacts); for any other frame its body's joint wrench moved to\nthe frame. N and N m "
           "about the frame's origin, in the frame's axes at the step's\nstart. TalusError (unsupported) when "
           "external forces or loops acted on that body."),
    M_KW("add_external_force", system_add_external_force,
         "add_external_force(body, force, point=None)\n\nForce (N, world, (3,)) at a world point (m) fixed to "
         "`body` (its COM if None),\nfor the next step only."),
    M_NOARGS("contacts", system_contacts,
             "contacts() -> dict of arrays\n\nThe contacts of this system found by the last integrate1, impulses of "
             "the last\nintegrate2, from this system's point of view: 'position' (k, 3) m, 'normal' (k, 3) pointing\n"
             "into this system, 'impulse' (k, 3) on this system (N s, world), 'depth' (k,) m (> 0\n"
             "penetrating), 'body' (k,), 'other_system' (k,) (-1: static geometry), 'other_body' (k,)."),
    M_KW("body_contact_wrench", system_body_contact_wrench,
         "body_contact_wrench(body, point=None) -> (force float64 (3,), torque float64 (3,))\n\nWrench the "
         "contacts of the last step exerted on `body` (link name or body index):\nforce (N) = sum of the contact "
         "impulses on it / dt, torque (N m) = sum of (contact point\n- point) x force about the world point `point` "
         "(m; None: the body frame's origin).\nWorld frame. Static geometry, other systems and this system's "
         "other bodies count."),
    M_ARGS("frame_contact_wrench", system_frame_contact_wrench,
           "frame_contact_wrench(frame) -> (force (3,), torque (3,))\n\nThe same for the body of a frame (name, "
           "link name or index), torque about the\nframe's origin; world frame, N and N m."),
    M_ARGS("frame_index", system_frame_index,
           "frame_index(name) -> int\n\nIndex of a frame given by its name (a URDF joint) or by a URDF link name;\n"
           "ValueError naming it when there is none."),
    M_ARGS("link_inertial", system_link_inertial,
           "link_inertial(link) -> (mass, com (3,), inertia (3, 3))\n\nInertial of a URDF link (kg, m in the link "
           "frame, kg m^2 about the COM)."),
    M_KW("set_link_inertial", system_set_link_inertial,
         "set_link_inertial(link, mass, com, inertia)\n\nChange a link's inertial at run time (dynamics "
         "randomization); refused if M\nwould become singular (nothing changes)."),
    M_ARGS("set_geom_friction", system_set_geom_friction,
           "set_geom_friction(geom, mu)\n\nCoulomb friction coefficient of collision geom `geom`."),
    M_KW("set_joint_limits", system_set_joint_limits,
         "set_joint_limits(dof, lower, upper, effort=inf)\n\nPosition limits (rad or m, +-inf: none) and effort "
         "limit (N m or N) of a DOF."),
    M_ARGS("set_joint_damping", system_set_joint_damping, "set_joint_damping(dof, value)\n\nViscous damping >= 0."),
    M_ARGS("set_joint_friction", system_set_joint_friction,
           "set_joint_friction(dof, value)\n\nCoulomb joint friction >= 0 (N m or N)."),
    M_ARGS("set_rotor_inertia", system_set_rotor_inertia,
           "set_rotor_inertia(dof, value)\n\nReflected rotor inertia >= 0 (kg m^2 or kg), added to diag(M)."),
    {NULL, NULL, 0, NULL}};

static PyGetSetDef system_getset[] = {
    {"q", (getter)get_q, (setter)set_q, "generalized coordinates, float64 (nq,) (a copy; assign to set)", NULL},
    {"u", (getter)get_u, (setter)set_u, "generalized velocities, float64 (nv,) (a copy; assign to set)", NULL},
    {"nq", (getter)get_nq, NULL, "generalized coordinate dimension", NULL},
    {"nv", (getter)get_nv, NULL, "degrees of freedom", NULL},
    {"index", (getter)get_index, NULL, "position in the world", NULL},
    {"name", (getter)get_name, NULL, "robot name", NULL},
    {"world", (getter)get_world, NULL, "the World this system lives in", NULL},
    {"total_mass", (getter)get_total_mass, NULL, "current total mass, kg (after randomization)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_system_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus.System",
    .tp_basicsize = sizeof(tlpy_system),
    .tp_dealloc = (destructor)system_dealloc,
    .tp_repr = (reprfunc)system_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An articulated system of a World (created by World.add_system). Arrays are float64,\n"
              "world frame, SI units; q (nq,), u (nv,), matrices row-major.",
    .tp_methods = system_methods,
    .tp_getset = system_getset,
    .tp_new = system_new,
};
