/* talus.World: gravity, time step, ground, systems and the two-phase step (talus/world.h). */
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "tlpy.h"

#define IDLE(self)                                        \
  do {                                                    \
    if (tlpy_check_idle((self)->busy, "this World")) return NULL; \
  } while (0)

static int read_vec3(PyObject *obj, const char *name, double out[3]) {
  npy_intp three = 3;
  PyArrayObject *a = tlpy_f64(obj, name, 1, &three);
  if (!a) return -1;
  const double *d = PyArray_DATA(a);
  out[0] = d[0], out[1] = d[1], out[2] = d[2];
  Py_DECREF(a);
  return 0;
}

/* ---- World.options: tl_world_options (talus/world.h) as a dict ---- */

typedef struct option_field {
  const char *name;
  size_t offset;
  char kind; /* 'd' double, 'i' int, 'b' 0/1 (bool), 's' the solver, 'g' gravity (3 doubles) */
} option_field;

#define OPT(f, k) {#f, offsetof(tl_world_options, f), k}
static const option_field option_fields[] = {
    OPT(dt, 'd'), OPT(gravity, 'g'), OPT(solver, 's'), OPT(solver_max_iter, 'i'), OPT(solver_tol, 'd'),
    OPT(sor, 'd'), OPT(erp, 'd'), OPT(cfm, 'd'), OPT(contact_compliance, 'd'), OPT(contact_margin, 'd'),
    OPT(slop, 'd'), OPT(max_recovery_speed, 'd'), OPT(limit_margin, 'd'), OPT(velocity_limits, 'b'),
    OPT(default_mu, 'd'), OPT(default_restitution, 'd'), OPT(default_threshold, 'd')};
#undef OPT
#define NOPTION ((int)(sizeof(option_fields) / sizeof(option_fields[0])))

/* tl_solver names, as world files write them (<solver type>). */
static const char *const solver_names[] = {"per_contact", "pgs", "dantzig"};

static PyObject *options_to_dict(const tl_world_options *o) {
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < NOPTION; i++) {
    const option_field *f = &option_fields[i];
    const char *p = (const char *)o + f->offset;
    double v[3];
    int n;
    PyObject *x = NULL;
    switch (f->kind) {
      case 'd': memcpy(v, p, sizeof(double)); x = PyFloat_FromDouble(v[0]); break;
      case 'g': memcpy(v, p, sizeof v); x = Py_BuildValue("(ddd)", v[0], v[1], v[2]); break;
      case 'i': memcpy(&n, p, sizeof n); x = PyLong_FromLong(n); break;
      case 'b': memcpy(&n, p, sizeof n); x = PyBool_FromLong(n); break;
      default: x = PyUnicode_FromString(solver_names[o->solver]); break;
    }
    if (!x || PyDict_SetItemString(d, f->name, x)) Py_CLEAR(d);
    Py_XDECREF(x);
  }
  return d;
}

/* Write the fields named in `mapping` into *o (the rest stay). TypeError for a
 * non-mapping or a value of the wrong type, ValueError naming an unknown key
 * or solver; the ranges are tl_world_options_check's (talus.Error). */
static int options_update(tl_world_options *o, PyObject *mapping) {
  if (!PyDict_Check(mapping)) {
    PyErr_SetString(PyExc_TypeError, "options must be a dict of World option names to values");
    return -1;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(mapping, &pos, &key, &value)) {
    const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!name) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "options: keys must be str");
      return -1;
    }
    const option_field *f = NULL;
    for (int i = 0; i < NOPTION && !f; i++)
      if (!strcmp(option_fields[i].name, name)) f = &option_fields[i];
    if (!f) {
      PyErr_Format(PyExc_ValueError, "options: unknown option '%s' (World.options lists them)", name);
      return -1;
    }
    char *p = (char *)o + f->offset;
    if (f->kind == 'd') {
      double v = PyFloat_AsDouble(value);
      if (v == -1.0 && PyErr_Occurred()) return -1;
      memcpy(p, &v, sizeof v);
    } else if (f->kind == 'g') {
      if (read_vec3(value, "gravity", o->gravity)) return -1;
    } else if (f->kind == 'i' || f->kind == 'b') {
      long v = PyLong_AsLong(value);
      if (v == -1 && PyErr_Occurred()) return -1;
      int n = v < INT_MIN ? INT_MIN : v > INT_MAX ? INT_MAX : (int)v; /* out of range stays out of range */
      memcpy(p, &n, sizeof n);
    } else {
      const char *sv = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
      int k = -1;
      for (int i = 0; sv && i < 3; i++)
        if (!strcmp(sv, solver_names[i])) k = i;
      if (k < 0) {
        if (!PyErr_Occurred())
          PyErr_SetString(PyExc_ValueError, "options: solver must be \"per_contact\", \"pgs\" or \"dantzig\"");
        return -1;
      }
      o->solver = (tl_solver)k;
    }
  }
  return 0;
}

static PyObject *world_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {"dt", "gravity", "engine", "options", NULL};
  PyObject *dt = NULL, *gravity = NULL, *options = NULL;
  const char *engine = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOzO:World", names, &dt, &gravity, &engine, &options)) return NULL;
  tl_world_options opt = tl_world_options_default();
  if (options && options != Py_None && options_update(&opt, options)) return NULL;
  if (dt && dt != Py_None && (opt.dt = PyFloat_AsDouble(dt)) == -1.0 && PyErr_Occurred()) return NULL;
  if (gravity && gravity != Py_None && read_vec3(gravity, "gravity", opt.gravity)) return NULL;
  tl_world *w = NULL;
  tl_error err;
  tl_status st = tl_world_create_with_options(&w, &opt, &err);
  if (!st && engine) st = tl_world_set_engine(w, engine, &err);
  if (st) {
    tl_world_free(w);
    return tlpy_raise(&err);
  }
  tlpy_world *self = (tlpy_world *)type->tp_alloc(type, 0);
  if (!self) {
    tl_world_free(w);
    return NULL;
  }
  self->world = w;
  return (PyObject *)self;
}

static PyObject *world_from_file(PyObject *cls, PyObject *args, PyObject *kw) {
  static char *names[] = {"path", "engine", NULL};
  PyObject *path = NULL;
  const char *engine = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|z:World.from_file", names, PyUnicode_FSConverter, &path, &engine))
    return NULL;
  tl_world *w = NULL;
  tl_error err;
  tl_status st;
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS st = tl_scene_load(p, &w, NULL, &err);
  if (!st && engine) st = tl_world_set_engine(w, engine, &err);
  Py_END_ALLOW_THREADS Py_DECREF(path);
  if (st) {
    tl_world_free(w);
    return tlpy_raise(&err);
  }
  tlpy_world *self = (tlpy_world *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
  if (!self) {
    tl_world_free(w);
    return NULL;
  }
  self->world = w;
  return (PyObject *)self;
}

static void world_dealloc(tlpy_world *self) {
  tl_world_free(self->world);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *world_add_ground(tlpy_world *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"friction", "height", NULL};
  double mu = 0.8, height = 0.0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|dd:add_ground", names, &mu, &height)) return NULL;
  IDLE(self);
  tl_error err;
  if (tl_world_add_ground(self->world, height, mu, &err)) return tlpy_raise(&err);
  Py_RETURN_NONE;
}

static PyObject *world_add_system(tlpy_world *self, PyObject *args) {
  PyObject *model = NULL;
  if (!PyArg_ParseTuple(args, "O!:add_system", &tlpy_model_type, &model)) return NULL;
  IDLE(self);
  tl_system *sys = NULL;
  tl_error err;
  if (tl_world_add_system(self->world, ((tlpy_model *)model)->model, &sys, &err)) return tlpy_raise(&err);
  return tlpy_system_new(self, sys);
}

/* Run fn (integrate1, integrate2 or step) n times without the GIL; after
 * each step or integrate2 an open recording takes its frame if one is due. */
static PyObject *run(tlpy_world *self, tl_status (*fn)(tl_world *, tl_error *), long n) {
  IDLE(self);
  if (n < 0) {
    PyErr_SetString(PyExc_ValueError, "n: expected an integer >= 0");
    return NULL;
  }
  tl_error err;
  tl_status st = TL_OK;
  tl_recorder *rec = fn == tl_world_integrate1 ? NULL : self->rec;
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS for (long i = 0; i < n && !st; i++) {
    st = fn(self->world, &err);
    if (!st && rec) st = tl_recorder_update(rec, NULL, &err);
  }
  Py_END_ALLOW_THREADS self->busy = 0;
  if (st) return tlpy_raise(&err);
  Py_RETURN_NONE;
}

static PyObject *world_step(tlpy_world *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"n", NULL};
  long n = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|l:step", names, &n)) return NULL;
  return run(self, tl_world_step, n);
}

static PyObject *world_integrate1(tlpy_world *self, PyObject *unused) {
  (void)unused;
  return run(self, tl_world_integrate1, 1);
}

static PyObject *world_integrate2(tlpy_world *self, PyObject *unused) {
  (void)unused;
  return run(self, tl_world_integrate2, 1);
}

static PyObject *world_record(tlpy_world *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"path", "fps", "every", "csv", "reserve_frames", NULL};
  PyObject *path = Py_None, *csv = Py_None;
  double fps = 60.0;
  int every = 0;
  long long reserve = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OdiOL:record", names, &path, &fps, &every, &csv, &reserve))
    return NULL;
  return tlpy_recording_new((PyObject *)self, &self->rec, &self->busy, self->world, path, csv, fps, every, reserve);
}

static PyObject *world_get_state(tlpy_world *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  size_t n = tl_world_snapshot_size(self->world);
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
  if (!b) return NULL;
  tl_error err;
  if (tl_world_snapshot_save(self->world, PyBytes_AS_STRING(b), n, NULL, &err)) {
    Py_DECREF(b);
    return tlpy_raise(&err);
  }
  return b;
}

static PyObject *world_set_state(tlpy_world *self, PyObject *args) {
  Py_buffer buf;
  if (!PyArg_ParseTuple(args, "y*:snapshot_restore", &buf)) return NULL;
  if (tlpy_check_idle(self->busy, "this World")) {
    PyBuffer_Release(&buf);
    return NULL;
  }
  tl_error err;
  tl_status st = tl_world_snapshot_restore(self->world, buf.buf, (size_t)buf.len, &err);
  PyBuffer_Release(&buf);
  if (st) return tlpy_raise(&err);
  Py_RETURN_NONE;
}

/* World.step_derivatives: a workspace per call (tl_step_derivatives_create;
 * the C call itself allocates nothing). */
static PyObject *world_step_derivatives(tlpy_world *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"mode", "eps", "info", NULL};
  const char *mode_s = "analytic";
  double eps = 1e-6;
  int info = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|sdp:step_derivatives", names, &mode_s, &eps, &info)) return NULL;
  IDLE(self);
  tl_deriv_mode mode;
  if (strcmp(mode_s, "analytic") == 0) mode = TL_DERIV_ANALYTIC;
  else if (strcmp(mode_s, "fd") == 0) mode = TL_DERIV_FD_CENTRED;
  else return PyErr_Format(PyExc_ValueError, "mode must be \"analytic\" or \"fd\", not \"%s\"", mode_s);
  tl_error err;
  tl_step_derivatives *ws = NULL;
  if (tl_step_derivatives_create(self->world, &ws, &err) || tl_step_derivatives_set_eps(ws, eps, &err)) {
    tl_step_derivatives_free(ws);
    return tlpy_raise(&err);
  }
  int nv = tl_step_derivatives_nv(ws);
  npy_intp sa[2] = {2 * nv, 2 * nv}, sb[2] = {2 * nv, nv};
  PyArrayObject *A = tlpy_zeros(2, sa, NPY_FLOAT64), *B = A ? tlpy_zeros(2, sb, NPY_FLOAT64) : NULL;
  if (!A || !B) {
    Py_XDECREF(A);
    tl_step_derivatives_free(ws);
    return NULL;
  }
  tl_deriv_mode used = mode;
  tl_status st = tl_world_step_derivatives(self->world, ws, mode, PyArray_DATA(A), PyArray_DATA(B), nv, &used, &err);
  tl_step_derivatives_free(ws);
  if (st) {
    Py_DECREF(A);
    Py_DECREF(B);
    return tlpy_raise(&err);
  }
  if (info) return Py_BuildValue("(NNs)", A, B, used == TL_DERIV_ANALYTIC ? "analytic" : "fd");
  return Py_BuildValue("(NN)", A, B);
}

static PyObject *get_engine(tlpy_world *self, void *c) {
  (void)c;
  return PyUnicode_FromString(tl_world_engine_name(self->world));
}

static PyObject *get_time(tlpy_world *self, void *c) { (void)c; return PyFloat_FromDouble(tl_world_time(self->world)); }
static PyObject *get_dt(tlpy_world *self, void *c) { (void)c; return PyFloat_FromDouble(tl_world_timestep(self->world)); }

static int set_dt(tlpy_world *self, PyObject *value, void *c) {
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "dt cannot be deleted");
    return -1;
  }
  double dt = PyFloat_AsDouble(value);
  if (dt == -1.0 && PyErr_Occurred()) return -1;
  if (tlpy_check_idle(self->busy, "this World")) return -1;
  tl_error err;
  if (tl_world_set_timestep(self->world, dt, &err)) {
    tlpy_raise(&err);
    return -1;
  }
  return 0;
}

static PyObject *get_gravity(tlpy_world *self, void *c) {
  (void)c;
  npy_intp three = 3;
  PyArrayObject *a = tlpy_zeros(1, &three, NPY_DOUBLE);
  if (a) tl_world_gravity(self->world, PyArray_DATA(a));
  return (PyObject *)a;
}

static int set_gravity(tlpy_world *self, PyObject *value, void *c) {
  (void)c;
  double g[3];
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "gravity cannot be deleted");
    return -1;
  }
  if (tlpy_check_idle(self->busy, "this World") || read_vec3(value, "gravity", g)) return -1;
  tl_error err;
  if (tl_world_set_gravity(self->world, g, &err)) {
    tlpy_raise(&err);
    return -1;
  }
  return 0;
}

static PyObject *get_options(tlpy_world *self, void *c) {
  (void)c;
  tl_world_options o;
  tl_world_get_options(self->world, &o, NULL);
  return options_to_dict(&o);
}

static int set_options(tlpy_world *self, PyObject *value, void *c) {
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "options cannot be deleted");
    return -1;
  }
  if (tlpy_check_idle(self->busy, "this World")) return -1;
  tl_world_options o;
  tl_world_get_options(self->world, &o, NULL);
  if (options_update(&o, value)) return -1;
  tl_error err;
  if (tl_world_set_options(self->world, &o, &err)) {
    tlpy_raise(&err);
    return -1;
  }
  return 0;
}

static PyObject *get_systems(tlpy_world *self, void *c) {
  (void)c;
  int n = tl_world_nsystem(self->world);
  PyObject *list = PyList_New(n);
  for (int i = 0; list && i < n; i++) {
    PyObject *s = tlpy_system_new(self, tl_world_system(self->world, i));
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static PyObject *get_ncontact(tlpy_world *self, void *c) {
  (void)c;
  return PyLong_FromLong(tl_world_ncontact(self->world));
}

static PyObject *world_repr(tlpy_world *self) {
  PyObject *t = PyFloat_FromDouble(tl_world_time(self->world));
  if (!t) return NULL;
  PyObject *r = PyUnicode_FromFormat("<talus.World: %d systems, t = %R s>", tl_world_nsystem(self->world), t);
  Py_DECREF(t);
  return r;
}

static PyMethodDef world_methods[] = {
    {"from_file", (PyCFunction)(void (*)(void))world_from_file, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "World.from_file(path, engine=None) -> World\n\nLoad a world file (docs/world_format.md): gravity, time step, "
     "solver, materials,\nground, terrain, objects and robots. Errors name the file, line and element. engine: as\n"
     "for World()."},
    {"record", (PyCFunction)(void (*)(void))world_record, METH_VARARGS | METH_KEYWORDS,
     "record(path=None, fps=60.0, every=0, csv=None, reserve_frames=0) -> Recording\n\nRecord this world from now "
     "on: frame 0 is the current state, then a frame after each\nstep when one is due (fps frames per second of "
     "simulated time; every > 0: every\nevery-th step instead). Recording.close() (or the end of a `with` block) "
     "writes\n`path` as one self-contained HTML page (3D playback of every body with its URDF\nvisuals, contacts "
     "and forces, plots of base height, velocity, joints, contact forces\nand energy; opens offline) and `csv` as the "
     "time series. Paths are checked now:\na folder that does not exist raises talus.Error before any step; path must end "
     "in\n.html and csv in .csv (ValueError), as --record and --csv. One open\n"
     "recording per world. reserve_frames: frames allocated now (stepping then\nallocates nothing)."},
    {"snapshot_save", (PyCFunction)world_get_state, METH_NOARGS,
     "snapshot_save() -> bytes\n\nA snapshot of everything that influences the next step (every system's q, u, PD\n"
     "gains and targets, forces, warm-start impulses, contacts, time; tl_world_snapshot_save).\n"
     "snapshot_restore(snapshot) and stepping reproduce the original trajectory bit for bit."},
    {"snapshot_restore", (PyCFunction)world_set_state, METH_VARARGS,
     "snapshot_restore(snapshot)\n\nRestore a snapshot of snapshot_save (bytes). A snapshot of another world or\n"
     "model is refused with talus.Error and the world is left unchanged."},
    {"get_state", (PyCFunction)world_get_state, METH_NOARGS,
     "get_state() -> bytes\n\nDeprecated: the name before issue 22 of snapshot_save (\"state\" means q, u)."},
    {"set_state", (PyCFunction)world_set_state, METH_VARARGS,
     "set_state(snapshot)\n\nDeprecated: the name before issue 22 of snapshot_restore."},
    {"add_ground", (PyCFunction)(void (*)(void))world_add_ground, METH_VARARGS | METH_KEYWORDS,
     "add_ground(friction=0.8, height=0.0)\n\nThe horizontal ground plane z = height (m), Coulomb friction "
     "coefficient `friction`."},
    {"add_system", (PyCFunction)world_add_system, METH_VARARGS,
     "add_system(model) -> System\n\nAdd a copy of `model` (talus.Model) at its default configuration "
     "(model.default_q)\nwith zero velocity."},
    {"add_constraint", (PyCFunction)(void (*)(void))tlpy_world_add_constraint, METH_VARARGS | METH_KEYWORDS,
     "add_constraint(type, body1, body2=\"world\", system=0, system2=None, point1=(0,0,0), point2=(0,0,0),\n"
     "               rpy1=(0,0,0), rpy2=(0,0,0), axis=(0,0,1), distance=None, min=None, max=None,\n"
     "               name=None, erp=0.0, cfm=0.0) -> int\n\nAdd a loop constraint (talus/constraint.h) and return "
     "its index. type: \"ball\" (the\npoints coincide: 3 rows), \"hinge\" (ball + a common axis: 5), \"weld\" "
     "(the frames coincide:\n6), \"distance\" (|p1 - p2| = distance, or min <= |p1 - p2| <= max: 1). body1, body2: "
     "URDF\nlink names (body2 \"world\": the fixed world frame); system, system2: a System or its\nindex "
     "(system2 None: the same system). point / rpy: each frame in its link's frame\n(m, rad); axis (hinge): in "
     "body1's link frame. distance None: the current distance.\nerp, cfm: softness where asked for (0, 0: exact). "
     "Bad input raises talus.Error naming\nthe field; an engine without constraints raises talus.Error "
     "(status unsupported)."},
    {"constraint", (PyCFunction)tlpy_world_constraint, METH_VARARGS,
     "constraint(k) -> dict\n\nConstraint k (index, negative from the end, or name): index, name, type, nrow, "
     "system1,\nbody1, system2, body2 (link names; \"world\"), position_error (m) and angle_error (rad)\nat the "
     "current state, force (N) and torque (N m) (3,), world frame: the wrench the\nconstraint exerted on body 1 at "
     "frame 1's origin over the last step."},
    {"constraints", (PyCFunction)tlpy_world_constraints, METH_NOARGS,
     "constraints() -> list of dict\n\nEvery constraint of the world (World.constraint(k) for each k), URDF "
     "<loop_joint>\nloops and world-file <constraint> elements included."},
    {"project_constraints", (PyCFunction)(void (*)(void))tlpy_world_project_constraints, METH_VARARGS | METH_KEYWORDS,
     "project_constraints(tol=1e-12, max_iter=50)\n\nMove every system's q to the nearest configuration satisfying "
     "every constraint\n(Gauss-Newton on the constraint residual in the tangent space of q) and remove the\n"
     "velocity components that violate them (tl_world_project_constraints). Raises\ntalus.Error if it does not "
     "converge (the state is then unchanged)."},
    {"step", (PyCFunction)(void (*)(void))world_step, METH_VARARGS | METH_KEYWORDS,
     "step(n=1)\n\nAdvance n time steps (integrate1 + integrate2 each), without the GIL. Raises talus.Error\n"
     "if the state became non-finite (the state is then that before the failing step)."},
    {"integrate1", (PyCFunction)world_integrate1, METH_NOARGS,
     "integrate1()\n\nFirst phase: kinematics, collision detection, M and h of every system. Between the\n"
     "phases every quantity of the current state can be read."},
    {"integrate2", (PyCFunction)world_integrate2, METH_NOARGS,
     "integrate2()\n\nSecond phase: control, contact and constraint solve, integration of u and q."},
    {"step_derivatives", (PyCFunction)(void (*)(void))world_step_derivatives, METH_VARARGS | METH_KEYWORDS,
     "step_derivatives(mode=\"analytic\", eps=1e-6, info=False) -> (A, B) or (A, B, used)\n\nDerivatives of one "
     "step from the current state, without advancing it (the world is\nleft exactly as it was): x = (dq, u) of every "
     "system stacked (all tangent parts\ndq first, then all velocities; 2 nv), tau (nv) a generalized force added "
     "over the\nstep. A = dx+/dx (2 nv, 2 nv), B = dx+/dtau (2 nv, nv), float64. mode \"analytic\":\nexact (implicit PD, "
     "springs, damping, joint rows, contacts against static planes\nand box faces), falls back to \"fd\" for "
     "what it does not cover (info=True also\nreturns the mode used); \"fd\": centred finite differences of whole steps "
     "(eps: the\nperturbation). tl_world_step_derivatives, docs/derivatives.md."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef world_getset[] = {
    {"time", (getter)get_time, NULL, "simulated time, s", NULL},
    {"engine", (getter)get_engine, NULL, "name of the physics engine (\"talus\", \"ode\", \"mujoco\")", NULL},
    {"dt", (getter)get_dt, (setter)set_dt, "time step, s (settable)", NULL},
    {"gravity", (getter)get_gravity, (setter)set_gravity, "gravity, m/s^2, float64 (3,) (settable)", NULL},
    {"options", (getter)get_options, (setter)set_options,
     "every setting of the world as a dict (tl_world_options, talus/world.h): dt (s), gravity\n"
     "(3 floats, m/s^2), solver (\"per_contact\", \"pgs\", \"dantzig\"), solver_max_iter, solver_tol (N s),\n"
     "sor, erp, cfm, contact_compliance, contact_margin (m), slop (m), max_recovery_speed (m/s),\n"
     "limit_margin (rad or m), velocity_limits (bool), default_mu, default_restitution,\n"
     "default_threshold (m/s). Reading gives a copy; assigning a dict changes the keys it names,\n"
     "checked as a whole (talus.Error naming the field; nothing changes on error).", NULL},
    {"systems", (getter)get_systems, NULL, "the systems in order of addition (list of System)", NULL},
    {"ncontact", (getter)get_ncontact, NULL, "contacts found by the last integrate1", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_world_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus.World",
    .tp_basicsize = sizeof(tlpy_world),
    .tp_dealloc = (destructor)world_dealloc,
    .tp_repr = (reprfunc)world_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "World(dt=0.001, gravity=(0, 0, -9.81), engine=None, options=None)\n\nA world: time step (s), gravity "
              "(m/s^2, world frame, z up), static geometry,\narticulated systems; World.from_file(path) loads a world "
              "file. options: a dict of\nWorld.options keys (the rest default; dt and gravity given as arguments win). "
              "engine: "
              "None or \"talus\"\n(the native engine), or a plugin such as \"ode\" or \"mujoco[:OPTIONS]\" "
              "(docs/engines.md):\nthe same API then runs on that engine; a missing plugin or a feature it lacks raises\n"
              "talus.Error.",
    .tp_methods = world_methods,
    .tp_getset = world_getset,
    .tp_new = world_new,
};
