/* talus.BatchWorld: N worlds stepped in C on a thread pool (talus/batch.h), for users who write
 * their own tasks in NumPy. */
#include "tlpy.h"

typedef struct tlpy_batch {
  PyObject_HEAD
  tl_batch *batch;
  int busy;
} tlpy_batch;

#define IDLE(self)                                                  \
  do {                                                              \
    if (tlpy_check_idle((self)->busy, "this BatchWorld")) return NULL; \
  } while (0)

static PyObject *batch_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {"path", "num_envs", "num_threads", "seed", "dt", "ground", "floating_base", NULL};
  PyObject *path = NULL, *threads = Py_None, *seed_obj = NULL, *floating = Py_None;
  int nenv = 0, ground = 1;
  double dt = 1e-3;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&i|OOdpO:BatchWorld", names, PyUnicode_FSConverter, &path, &nenv,
                                   &threads, &seed_obj, &dt, &ground, &floating))
    return NULL;
  tl_batch_options o = tl_batch_options_default();
  uint64_t seed = 0;
  if (tlpy_threads(threads, &o.nthread) || tlpy_seed(seed_obj, "seed", 1, &seed, NULL)) {
    Py_DECREF(path);
    return NULL;
  }
  if (nenv < 1) {
    Py_DECREF(path);
    PyErr_Format(PyExc_ValueError, "num_envs: expected an integer >= 1, got %d", nenv);
    return NULL;
  }
  o.seed = seed;
  o.dt = dt;
  o.ground = ground;
  if (floating != Py_None) {
    int f = PyObject_IsTrue(floating);
    if (f < 0) {
      Py_DECREF(path);
      return NULL;
    }
    o.base = f ? TL_BASE_FLOATING : TL_BASE_FIXED;
  }
  tl_batch *b = NULL;
  tl_error err;
  tl_status st;
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS st = tl_batch_create_file(p, nenv, &o, &b, &err);
  Py_END_ALLOW_THREADS Py_DECREF(path);
  if (st) return tlpy_raise(&err);
  tlpy_batch *self = (tlpy_batch *)type->tp_alloc(type, 0);
  if (!self) {
    tl_batch_free(b);
    return NULL;
  }
  self->batch = b;
  return (PyObject *)self;
}

static void batch_dealloc(tlpy_batch *self) {
  tl_batch *b = self->batch;
  self->batch = NULL;
  Py_BEGIN_ALLOW_THREADS tl_batch_free(b); /* joins the pool's threads */
  Py_END_ALLOW_THREADS Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A read-only (num_envs, n) view of the batch's state mirror, keeping self alive. */
static PyObject *view(tlpy_batch *self, const double *data, int n) {
  npy_intp shape[2] = {tl_batch_nenv(self->batch), n};
  PyObject *a = PyArray_New(&PyArray_Type, 2, shape, NPY_DOUBLE, NULL, (void *)data, 0, NPY_ARRAY_C_CONTIGUOUS, NULL);
  if (!a) return NULL;
  PyArray_CLEARFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
  Py_INCREF(self);
  if (PyArray_SetBaseObject((PyArrayObject *)a, (PyObject *)self) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

static PyObject *get_q(tlpy_batch *self, void *c) {
  (void)c;
  IDLE(self);
  return view(self, tl_batch_q(self->batch), tl_batch_nq(self->batch));
}
static PyObject *get_u(tlpy_batch *self, void *c) {
  (void)c;
  IDLE(self);
  return view(self, tl_batch_u(self->batch), tl_batch_nv(self->batch));
}

/* (num_envs, n) float64 from obj; a (n,) row is repeated for every env when `broadcast`. */
static PyArrayObject *rows(tlpy_batch *self, PyObject *obj, const char *name, int n, int broadcast) {
  npy_intp shape[2] = {tl_batch_nenv(self->batch), n};
  return broadcast ? tlpy_f64_broadcast(obj, name, 2, shape) : tlpy_f64(obj, name, 2, shape);
}

static PyObject *result(tl_status st, const tl_error *err) {
  if (st) return tlpy_raise(err);
  Py_RETURN_NONE;
}

static PyObject *batch_set_state(tlpy_batch *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"q", "u", NULL};
  PyObject *q, *u = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_state", names, &q, &u)) return NULL;
  IDLE(self);
  int nq = tl_batch_nq(self->batch), nv = tl_batch_nv(self->batch);
  int n = tl_batch_nenv(self->batch);
  PyArrayObject *qa = rows(self, q, "q", nq, 0), *ua = !qa || u == Py_None ? NULL : rows(self, u, "u", nv, 0);
  PyObject *r = NULL;
  tl_error err;
  if (qa && (ua || u == Py_None))
    r = result(tl_batch_set_state(self->batch, PyArray_DATA(qa), n * nq, ua ? PyArray_DATA(ua) : NULL, n * nv, &err),
               &err);
  Py_XDECREF(qa), Py_XDECREF(ua);
  return r;
}

static PyObject *batch_set_pd_gains(tlpy_batch *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"kp", "kd", NULL};
  PyObject *kp, *kd;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:set_pd_gains", names, &kp, &kd)) return NULL;
  IDLE(self);
  int nv = tl_batch_nv(self->batch);
  int n = tl_batch_nenv(self->batch);
  PyArrayObject *a = rows(self, kp, "kp", nv, 1), *b = a ? rows(self, kd, "kd", nv, 1) : NULL;
  PyObject *r = NULL;
  tl_error err;
  if (a && b) r = result(tl_batch_set_pd_gains(self->batch, PyArray_DATA(a), PyArray_DATA(b), n * nv, &err), &err);
  Py_XDECREF(a), Py_XDECREF(b);
  return r;
}

static PyObject *batch_set_pd_targets(tlpy_batch *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"q_ref", "u_ref", NULL};
  PyObject *q, *u = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_pd_targets", names, &q, &u)) return NULL;
  IDLE(self);
  int nq = tl_batch_nq(self->batch), nv = tl_batch_nv(self->batch);
  int n = tl_batch_nenv(self->batch);
  PyArrayObject *qa = rows(self, q, "q_ref", nq, 1), *ua = !qa || u == Py_None ? NULL : rows(self, u, "u_ref", nv, 1);
  PyObject *r = NULL;
  tl_error err;
  if (qa && (ua || u == Py_None))
    r = result(tl_batch_set_pd_targets(self->batch, PyArray_DATA(qa), n * nq, ua ? PyArray_DATA(ua) : NULL, n * nv,
                                       &err),
               &err);
  Py_XDECREF(qa), Py_XDECREF(ua);
  return r;
}

static PyObject *batch_set_generalized_force(tlpy_batch *self, PyObject *args) {
  PyObject *tau;
  if (!PyArg_ParseTuple(args, "O:set_generalized_force", &tau)) return NULL;
  IDLE(self);
  int nv = tl_batch_nv(self->batch);
  PyArrayObject *a = rows(self, tau, "tau", nv, 1);
  if (!a) return NULL;
  tl_error err;
  PyObject *r = result(
      tl_batch_set_generalized_force(self->batch, PyArray_DATA(a), tl_batch_nenv(self->batch) * nv, &err), &err);
  Py_DECREF(a);
  return r;
}

static PyObject *batch_step(tlpy_batch *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"n", NULL};
  int n = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:step", names, &n)) return NULL;
  IDLE(self);
  if (n < 0) {
    PyErr_SetString(PyExc_ValueError, "n: expected an integer >= 0");
    return NULL;
  }
  tl_error err;
  tl_status st;
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS st = tl_batch_step(self->batch, n, &err);
  Py_END_ALLOW_THREADS self->busy = 0;
  return result(st, &err);
}

static PyObject *batch_time(tlpy_batch *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(tl_world_time(tl_batch_world(self->batch, 0)));
}
static PyObject *get_nenv(tlpy_batch *self, void *c) { (void)c; return PyLong_FromLong(tl_batch_nenv(self->batch)); }
static PyObject *get_nthread(tlpy_batch *self, void *c) {
  (void)c;
  return PyLong_FromLong(tl_batch_nthread(self->batch));
}
static PyObject *get_nq(tlpy_batch *self, void *c) { (void)c; return PyLong_FromLong(tl_batch_nq(self->batch)); }
static PyObject *get_nv(tlpy_batch *self, void *c) { (void)c; return PyLong_FromLong(tl_batch_nv(self->batch)); }
static PyObject *get_dt(tlpy_batch *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(tl_world_timestep(tl_batch_world(self->batch, 0)));
}

static PyMethodDef batch_methods[] = {
    {"set_state", (PyCFunction)(void (*)(void))batch_set_state, METH_VARARGS | METH_KEYWORDS,
     "set_state(q, u=None)\n\nq float64 (num_envs, nq), u (num_envs, nv) (None: zero). Checked first (finite,\n"
     "quaternions non-zero): on an error nothing changes and talus.Error names env and index."},
    {"set_pd_gains", (PyCFunction)(void (*)(void))batch_set_pd_gains, METH_VARARGS | METH_KEYWORDS,
     "set_pd_gains(kp, kd)\n\n(num_envs, nv) each, or (nv,) / scalars for every env."},
    {"set_pd_targets", (PyCFunction)(void (*)(void))batch_set_pd_targets, METH_VARARGS | METH_KEYWORDS,
     "set_pd_targets(q_ref, u_ref=None)\n\n(num_envs, nq) and (num_envs, nv), or one row for every env."},
    {"set_generalized_force", (PyCFunction)batch_set_generalized_force, METH_VARARGS,
     "set_generalized_force(tau)\n\nFeedforward force (num_envs, nv) or one row for every env."},
    {"step", (PyCFunction)(void (*)(void))batch_step, METH_VARARGS | METH_KEYWORDS,
     "step(n=1)\n\nStep every world n times on the thread pool, without the GIL. A diverging env stops\n"
     "(its state as before the failing step) and talus.Error names the first one."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef batch_getset[] = {
    {"q", (getter)get_q, NULL,
     "generalized coordinates of every env, float64 (num_envs, nq): a read-only view of the\n"
     "batch's state (no copy), updated in place by step and the setters", NULL},
    {"u", (getter)get_u, NULL, "generalized velocities, float64 (num_envs, nv): read-only view, as q", NULL},
    {"num_envs", (getter)get_nenv, NULL, "number of worlds", NULL},
    {"num_threads", (getter)get_nthread, NULL, "threads of the pool (the calling thread included)", NULL},
    {"nq", (getter)get_nq, NULL, "coordinates per env (all systems of a world, concatenated)", NULL},
    {"nv", (getter)get_nv, NULL, "velocities per env", NULL},
    {"time", (getter)batch_time, NULL, "simulated time of env 0, s", NULL},
    {"dt", (getter)get_dt, NULL, "time step, s", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_batch_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus.BatchWorld",
    .tp_basicsize = sizeof(tlpy_batch),
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "BatchWorld(path, num_envs, num_threads=None, seed=0, dt=0.001, ground=True, floating_base=None)\n\n"
        "num_envs independent copies of a URDF robot (on a ground plane unless ground=False, time\n"
        "step dt) or of a world file, stepped in C on num_threads threads (None: all CPUs), each\n"
        "taking the next untaken env: results do not depend on num_threads. State is batched\n"
        "row-major: q (num_envs, nq), u (num_envs, nv).",
    .tp_methods = batch_methods,
    .tp_getset = batch_getset,
    .tp_new = batch_new,
};
