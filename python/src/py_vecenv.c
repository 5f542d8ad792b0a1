/* talus._VecEnv: the C vectorized environment (talus/task.h) behind talus.VecEnv
 * (python/talus/vecenv.py adds the Gymnasium-style spaces and the infos dict). */
#include "tlpy.h"
#include "talus/render.h"

#include <string.h>

typedef struct tlpy_vecenv {
  PyObject_HEAD
  tl_vecenv *env;
  int busy;
  tl_recorder *rec; /* the open Recording of one environment's world, or NULL */
  tl_renderer *rnd; /* render()'s renderer of environment rnd_env at rnd_w x rnd_h, or NULL */
  int rnd_env, rnd_w, rnd_h;
} tlpy_vecenv;

#define IDLE(self)                                               \
  do {                                                           \
    if (tlpy_check_idle((self)->busy, "this VecEnv")) return NULL; \
  } while (0)

static PyObject *vecenv_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {"task", "num_envs", "num_threads", "seed", "options", NULL};
  const char *task = NULL;
  int nenv = 0, nthread = 0;
  PyObject *threads = Py_None, *seed_obj = NULL, *options = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "si|OOO:VecEnv", names, &task, &nenv, &threads, &seed_obj, &options))
    return NULL;
  uint64_t seed = 0;
  if (tlpy_threads(threads, &nthread) || tlpy_seed(seed_obj, "seed", 1, &seed, NULL)) return NULL;
  if (nenv < 1) {
    PyErr_Format(PyExc_ValueError, "num_envs: expected an integer >= 1, got %d", nenv);
    return NULL;
  }
  if (options != Py_None && !PyDict_Check(options)) {
    PyErr_SetString(PyExc_TypeError, "options: expected a dict of str to str");
    return NULL;
  }
  Py_ssize_t nopt = options == Py_None ? 0 : PyDict_Size(options);
  tl_task_option *opt = PyMem_Calloc((size_t)nopt + 1, sizeof(tl_task_option));
  if (!opt) return PyErr_NoMemory();
  Py_ssize_t pos = 0, i = 0;
  PyObject *key, *value;
  while (options != Py_None && PyDict_Next(options, &pos, &key, &value)) {
    if (!PyUnicode_Check(key) || !PyUnicode_Check(value)) {
      PyMem_Free(opt);
      PyErr_SetString(PyExc_TypeError, "options: expected a dict of str to str");
      return NULL;
    }
    opt[i].key = PyUnicode_AsUTF8(key); /* valid while the dict holds the strings */
    opt[i].value = PyUnicode_AsUTF8(value);
    if (!opt[i].key || !opt[i].value) {
      PyMem_Free(opt);
      return NULL;
    }
    i++;
  }
  tl_vecenv *env = NULL;
  tl_error err;
  tl_status st;
  tl_vecenv_options vo = tl_vecenv_options_default();
  vo.task = task;
  vo.task_opts = opt;
  vo.ntask_opt = (int)nopt;
  vo.nenv = nenv;
  vo.nthread = nthread;
  vo.seed = seed;
  Py_BEGIN_ALLOW_THREADS st = tl_vecenv_create(&vo, &env, &err);
  Py_END_ALLOW_THREADS PyMem_Free(opt);
  if (st) return tlpy_raise(&err);
  tlpy_vecenv *self = (tlpy_vecenv *)type->tp_alloc(type, 0);
  if (!self) {
    tl_vecenv_free(env);
    return NULL;
  }
  self->env = env;
  return (PyObject *)self;
}

static void vecenv_dealloc(tlpy_vecenv *self) {
  tl_vecenv *env = self->env;
  self->env = NULL;
  tl_renderer_free(self->rnd);
  self->rnd = NULL;
  Py_BEGIN_ALLOW_THREADS tl_vecenv_free(env);
  Py_END_ALLOW_THREADS Py_TYPE(self)->tp_free((PyObject *)self);
}

static int N(tlpy_vecenv *s) { return tl_vecenv_nenv(s->env); }
static int NO(tlpy_vecenv *s) { return tl_vecenv_obs_dim(s->env); }
static int NA(tlpy_vecenv *s) { return tl_vecenv_act_dim(s->env); }

static PyObject *vecenv_reset(tlpy_vecenv *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"seed", NULL};
  PyObject *seed_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:reset", names, &seed_obj)) return NULL;
  IDLE(self);
  uint64_t seed = 0, *seeds = NULL;
  unsigned char *reseed = NULL;
  int has = 0;
  if (seed_obj != Py_None && !PyLong_Check(seed_obj) && PySequence_Check(seed_obj)) {
    /* one seed (or None: continue its stream) per environment */
    Py_ssize_t n = PySequence_Size(seed_obj);
    if (n < 0) return NULL;
    if (n != N(self)) {
      PyErr_Format(PyExc_ValueError, "seed: expected %d seeds (one per environment), got %zd", N(self), n);
      return NULL;
    }
    seeds = PyMem_Calloc((size_t)n, sizeof(uint64_t));
    reseed = PyMem_Calloc((size_t)n, 1);
    if (!seeds || !reseed) {
      PyMem_Free(seeds);
      PyMem_Free(reseed);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *item = PySequence_GetItem(seed_obj, i);
      char name[32];
      snprintf(name, sizeof(name), "seed[%zd]", i);
      int bad = !item || tlpy_seed(item, name, 1, &seeds[i], &has);
      Py_XDECREF(item);
      if (bad) {
        PyMem_Free(seeds);
        PyMem_Free(reseed);
        return NULL;
      }
      reseed[i] = (unsigned char)has;
    }
  } else if (tlpy_seed(seed_obj, "seed", 1, &seed, &has)) {
    return NULL;
  }
  npy_intp shape[2] = {N(self), NO(self)};
  PyArrayObject *obs = tlpy_zeros(2, shape, NPY_FLOAT32);
  if (!obs) {
    PyMem_Free(seeds);
    PyMem_Free(reseed);
    return NULL;
  }
  tl_error err;
  tl_status st;
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS
  if (seeds) st = tl_vecenv_reset_seeds(self->env, seeds, reseed, PyArray_DATA(obs), (int)(shape[0] * shape[1]), &err);
  else st = tl_vecenv_reset(self->env, has ? &seed : NULL, PyArray_DATA(obs), (int)(shape[0] * shape[1]), &err);
  if (!st && self->rec) st = tl_recorder_update(self->rec, NULL, &err);
  Py_END_ALLOW_THREADS self->busy = 0;
  PyMem_Free(seeds);
  PyMem_Free(reseed);
  if (st) {
    Py_DECREF(obs);
    return tlpy_raise(&err);
  }
  return (PyObject *)obs;
}

/* The actions as a C-contiguous float64 (num_envs, act_dim) array ((num_envs,) accepted when
 * act_dim is 1), or NULL with ValueError. */
static PyArrayObject *actions_arg(tlpy_vecenv *self, PyObject *obj) {
  npy_intp shape[2] = {N(self), NA(self)};
  if (NA(self) == 1) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(obj);
    if (a && PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == shape[0]) {
      PyArrayObject *b = (PyArrayObject *)PyArray_Newshape(a, &(PyArray_Dims){shape, 2}, NPY_CORDER);
      Py_DECREF(a);
      if (!b) return NULL;
      PyArrayObject *c = tlpy_f64((PyObject *)b, "actions", 2, shape);
      Py_DECREF(b);
      return c;
    }
    Py_XDECREF(a);
    PyErr_Clear();
  }
  return tlpy_f64(obj, "actions", 2, shape);
}

static PyObject *vecenv_step(tlpy_vecenv *self, PyObject *args) {
  PyObject *actions;
  if (!PyArg_ParseTuple(args, "O:step", &actions)) return NULL;
  IDLE(self);
  PyArrayObject *act = actions_arg(self, actions);
  if (!act) return NULL;
  npy_intp n = N(self), so[2] = {n, NO(self)}, st_shape[2] = {n, tl_vecenv_nterm(self->env)};
  PyArrayObject *obs = tlpy_zeros(2, so, NPY_FLOAT32), *fin = tlpy_zeros(2, so, NPY_FLOAT32);
  PyArrayObject *rew = tlpy_zeros(1, &n, NPY_FLOAT32), *term = tlpy_zeros(1, &n, NPY_BOOL);
  PyArrayObject *trunc = tlpy_zeros(1, &n, NPY_BOOL), *flags = tlpy_zeros(1, &n, NPY_UINT8);
  PyArrayObject *ret = tlpy_zeros(1, &n, NPY_DOUBLE), *len = tlpy_zeros(1, &n, NPY_INT32);
  PyArrayObject *terms = tlpy_zeros(2, st_shape, NPY_DOUBLE);
  PyArrayObject *all[9] = {obs, rew, term, trunc, fin, flags, ret, len, terms};
  for (int i = 0; i < 9; i++)
    if (!all[i]) {
      for (int k = 0; k < 9; k++) Py_XDECREF(all[k]);
      Py_DECREF(act);
      return NULL;
    }
  tl_vecenv_result out = {PyArray_DATA(obs),  PyArray_DATA(rew),   PyArray_DATA(term),
                          PyArray_DATA(trunc), PyArray_DATA(fin),   PyArray_DATA(flags),
                          PyArray_DATA(ret),   PyArray_DATA(len)};
  tl_error err;
  tl_status st;
  const double *a = PyArray_DATA(act);
  int na = (int)n * NA(self);
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS st = tl_vecenv_step(self->env, a, na, &out, &err);
  if (!st && self->rec) st = tl_recorder_update(self->rec, NULL, &err);
  Py_END_ALLOW_THREADS self->busy = 0;
  Py_DECREF(act);
  if (st) {
    for (int k = 0; k < 9; k++) Py_DECREF(all[k]);
    return tlpy_raise(&err);
  }
  memcpy(PyArray_DATA(terms), tl_vecenv_terms(self->env), sizeof(double) * (size_t)(st_shape[0] * st_shape[1]));
  return Py_BuildValue("(NNNNNNNNN)", obs, rew, term, trunc, fin, flags, ret, len, terms);
}

static PyObject *vecenv_record(tlpy_vecenv *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"env", "path", "fps", "csv", NULL};
  int env = 0;
  PyObject *path = Py_None, *csv = Py_None;
  double fps = 60.0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "i|OdO:record", names, &env, &path, &fps, &csv)) return NULL;
  if (env < 0 || env >= N(self)) {
    PyErr_Format(PyExc_ValueError, "record_env: expected an environment index in [0, %d), got %d", N(self), env);
    return NULL;
  }
  tl_world *w = tl_batch_world(tl_vecenv_batch(self->env), env);
  return tlpy_recording_new((PyObject *)self, &self->rec, &self->busy, w, path, csv, fps, 0, 0);
}

static PyObject *vecenv_render(tlpy_vecenv *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"env", "width", "height", NULL};
  int env = 0, w = 320, h = 240;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|iii:render", names, &env, &w, &h)) return NULL;
  IDLE(self);
  if (env < 0 || env >= N(self)) {
    PyErr_Format(PyExc_ValueError, "render_env: expected an environment index in [0, %d), got %d", N(self), env);
    return NULL;
  }
  if (w < 1 || h < 1 || w > 8192 || h > 8192) {
    PyErr_Format(PyExc_ValueError, "render size: expected width and height in 1 .. 8192, got %d x %d", w, h);
    return NULL;
  }
  tl_error err;
  tl_world *world = tl_batch_world(tl_vecenv_batch(self->env), env);
  /* one renderer per image size: every environment has the same geometry, so it moves between them */
  if (self->rnd && self->rnd_env != env && self->rnd_w == w && self->rnd_h == h) {
    if (tl_renderer_set_world(self->rnd, world, &err)) return tlpy_raise(&err);
    self->rnd_env = env;
  }
  if (!self->rnd || self->rnd_env != env || self->rnd_w != w || self->rnd_h != h) {
    tl_renderer_free(self->rnd);
    self->rnd = NULL;
    tl_render_options o;
    tl_render_options_default(&o);
    o.width = w, o.height = h;
    tl_status st;
    tl_renderer *r = NULL;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS st = tl_renderer_create(world, &o, &r, &err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (st) return tlpy_raise(&err);
    self->rnd = r, self->rnd_env = env, self->rnd_w = w, self->rnd_h = h;
  }
  npy_intp shape[3] = {h, w, 3};
  PyArrayObject *img = tlpy_zeros(3, shape, NPY_UINT8);
  if (!img) return NULL;
  tl_status st;
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS st = tl_renderer_draw(self->rnd, PyArray_DATA(img), 3 * w * h, &err);
  Py_END_ALLOW_THREADS self->busy = 0;
  if (st) {
    Py_DECREF(img);
    return tlpy_raise(&err);
  }
  return (PyObject *)img;
}

static PyObject *vecenv_params(tlpy_vecenv *self, PyObject *unused) {
  (void)unused;
  IDLE(self);
  npy_intp shape[2] = {N(self), tl_vecenv_nparam(self->env)};
  PyArrayObject *a = tlpy_zeros(2, shape, NPY_DOUBLE);
  if (a) memcpy(PyArray_DATA(a), tl_vecenv_params(self->env), sizeof(double) * (size_t)(shape[0] * shape[1]));
  return (PyObject *)a;
}

typedef const char *(*name_at)(const tl_vecenv *, int);

static PyObject *names(tlpy_vecenv *self, int n, name_at fn) {
  PyObject *list = PyList_New(n);
  for (int i = 0; list && i < n; i++) {
    PyObject *s = PyUnicode_FromString(fn(self->env, i));
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static PyObject *bounds(tlpy_vecenv *self, int n, int action, int high) {
  npy_intp dim = n;
  double *tmp = PyMem_Malloc(sizeof(double) * (size_t)(2 * n + 1));
  PyArrayObject *a = tlpy_zeros(1, &dim, NPY_FLOAT32);
  if (!tmp || !a) {
    PyMem_Free(tmp);
    Py_XDECREF(a);
    return PyErr_NoMemory();
  }
  if (action) tl_vecenv_action_bounds(self->env, tmp, tmp + n);
  else tl_vecenv_obs_bounds(self->env, tmp, tmp + n);
  float *d = PyArray_DATA(a);
  for (int i = 0; i < n; i++) d[i] = (float)tmp[high ? n + i : i];
  PyMem_Free(tmp);
  return (PyObject *)a;
}

static PyObject *get_info(tlpy_vecenv *self, void *c) {
  (void)c;
  tl_vecenv *e = self->env;
  return Py_BuildValue(
      "{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:d,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "task", tl_vecenv_task(e), "robot", tl_vecenv_robot(e), "num_envs", N(self),
      "num_threads", tl_batch_nthread(tl_vecenv_batch(e)), "obs_dim", NO(self), "act_dim", NA(self),
      "max_episode_steps", tl_vecenv_max_episode_steps(e), "control_dt", tl_vecenv_control_dt(e), "action_low",
      bounds(self, NA(self), 1, 0), "action_high", bounds(self, NA(self), 1, 1), "obs_low", bounds(self, NO(self), 0, 0),
      "obs_high", bounds(self, NO(self), 0, 1), "obs_names", names(self, NO(self), tl_vecenv_obs_name), "action_names",
      names(self, NA(self), tl_vecenv_act_name), "param_names", names(self, tl_vecenv_nparam(e), tl_vecenv_param_name),
      "term_names", names(self, tl_vecenv_nterm(e), tl_vecenv_term_name));
}

/* [(kind, text)] of tl_vecenv_warning: URDF load warnings ("urdf") and the urdf task's checks. */
static PyObject *get_warnings(tlpy_vecenv *self, void *c) {
  (void)c;
  int n = tl_vecenv_nwarning(self->env);
  PyObject *list = PyList_New(n);
  for (int i = 0; list && i < n; i++) {
    PyObject *t = Py_BuildValue("(ss)", tl_vecenv_warning_kind(self->env, i), tl_vecenv_warning(self->env, i));
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, t);
  }
  return list;
}

static PyMethodDef vecenv_methods[] = {
    {"reset", (PyCFunction)(void (*)(void))vecenv_reset, METH_VARARGS | METH_KEYWORDS,
     "reset(seed=None) -> obs float32 (num_envs, obs_dim); seed: None (continue the streams), an int\n"
     "(env i's stream restarts from (seed, i)) or a sequence of num_envs ints or None (env i's stream\n"
     "restarts from (seed[i], 0), as a one-env VecEnv reset with seed[i]; None: env i continues)"},
    {"step", (PyCFunction)vecenv_step, METH_VARARGS,
     "step(actions) -> (obs, reward, terminated, truncated, final_obs, flags, episode_return,\n"
     "episode_length, reward_terms)"},
    {"record", (PyCFunction)(void (*)(void))vecenv_record, METH_VARARGS | METH_KEYWORDS,
     "record(env, path=None, fps=60.0, csv=None) -> Recording of environment env's world\n"
     "(a frame after each reset and control step when one is due)"},
    {"render", (PyCFunction)(void (*)(void))vecenv_render, METH_VARARGS | METH_KEYWORDS,
     "render(env=0, width=320, height=240) -> uint8 (height, width, 3): environment env's world drawn\n"
     "offscreen by the library's software rasterizer (talus/render.h; camera following the base)"},
    {"params", (PyCFunction)vecenv_params, METH_NOARGS,
     "params() -> float64 (num_envs, nparam): randomized values of each env's episode"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef vecenv_getset[] = {
    {"info", (getter)get_info, NULL, "dims, bounds, names and timing of the task (dict)", NULL},
    {"warnings", (getter)get_warnings, NULL,
     "creation warnings, list of (kind, text): kind 'urdf' (URDF load), 'cannot_stand', 'ground_contact',\n"
     "'fixed_base' (the urdf task's onboarding checks, tl_vecenv_warning)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_vecenv_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus._VecEnv",
    .tp_basicsize = sizeof(tlpy_vecenv),
    .tp_dealloc = (destructor)vecenv_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_VecEnv(task, num_envs, num_threads=None, seed=0, options=None): the C vectorized\n"
              "environment; use talus.VecEnv.",
    .tp_methods = vecenv_methods,
    .tp_getset = vecenv_getset,
    .tp_new = vecenv_new,
};
