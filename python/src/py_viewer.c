/* talus._talus._Viewer: the live view (talus/record.h, tl_viewer) of a World
 * for programs that drive their own loop: its own recorder (the newest frame
 * only), publish() after each step, poll() for the page's events, status and
 * parameters back to the page. talus.Viewer (python/talus/viewer.py) builds
 * run(controller_fn) on it. */
#include "tlpy.h"

typedef struct tlpy_viewer {
  PyObject_HEAD
  PyObject *world; /* strong reference: the tlpy_world viewed */
  tl_recorder *rec;
  tl_viewer *viewer;
} tlpy_viewer;

static void viewer_close_c(tlpy_viewer *self) {
  tl_viewer_free(self->viewer);
  self->viewer = NULL;
  tl_recorder_free(self->rec);
  self->rec = NULL;
}

static int viewer_init(tlpy_viewer *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"world", "host", "port", "fps", "shared_control", "history", NULL};
  PyObject *world;
  const char *host = NULL;
  int port = 0, shared = 0;
  double fps = 60.0, history = TL_VIEWER_DEFAULT_HISTORY;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|zidpd:_Viewer", names, &tlpy_world_type, &world, &host, &port, &fps,
                                   &shared, &history))
    return -1;
  viewer_close_c(self);
  Py_CLEAR(self->world);
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.fps = fps;
  o.keep_frames = 0;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_recorder_create(((tlpy_world *)world)->world, &o, &self->rec, &err) != TL_OK ||
      tl_viewer_create(self->rec, host, port, &self->viewer, &err) != TL_OK ||
      tl_viewer_set_history(self->viewer, history, &err) != TL_OK) {
    viewer_close_c(self);
    tlpy_raise(&err);
    return -1;
  }
  tl_viewer_set_shared_control(self->viewer, shared);
  Py_INCREF(world);
  self->world = world;
  return 0;
}

static void viewer_dealloc(tlpy_viewer *self) {
  viewer_close_c(self);
  Py_CLEAR(self->world);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int open_or_raise(tlpy_viewer *self) {
  if (self->viewer) return 0;
  PyErr_SetString(PyExc_RuntimeError, "this Viewer is closed");
  return -1;
}

static PyObject *vec3(const double *v) { return Py_BuildValue("(ddd)", v[0], v[1], v[2]); }

/* One event as a dict. */
static PyObject *event_dict(const tl_viewer_event *e) {
  switch (e->type) {
  case TL_VIEWER_EVENT_PAUSE: return Py_BuildValue("{ss}", "type", "pause");
  case TL_VIEWER_EVENT_RUN: return Py_BuildValue("{ss}", "type", "run");
  case TL_VIEWER_EVENT_RESET: return Py_BuildValue("{ss}", "type", "reset");
  case TL_VIEWER_EVENT_SNAPSHOT: return Py_BuildValue("{ss}", "type", "snapshot");
  case TL_VIEWER_EVENT_RESTORE: return Py_BuildValue("{sssL}", "type", "restore", "index", e->n);
  case TL_VIEWER_EVENT_STEP: return Py_BuildValue("{sssL}", "type", "step", "n", e->n);
  case TL_VIEWER_EVENT_SPEED: return Py_BuildValue("{sssd}", "type", "speed", "factor", e->factor);
  case TL_VIEWER_EVENT_PARAM: return Py_BuildValue("{sssssd}", "type", "param", "name", e->name, "value", e->value);
  case TL_VIEWER_EVENT_FORCE:
    return Py_BuildValue("{sssisisisNsNsd}", "type", "force", "system", e->system, "body", e->body, "id", e->id,
                         "point", vec3(e->point), "force", vec3(e->force), "duration", e->duration);
  }
  return Py_BuildValue("{ss}", "type", "?");
}

static PyObject *viewer_poll(tlpy_viewer *self, PyObject *unused) {
  (void)unused;
  if (open_or_raise(self)) return NULL;
  PyObject *list = PyList_New(0);
  tl_viewer_event e;
  while (list && tl_viewer_poll(self->viewer, &e)) {
    PyObject *d = event_dict(&e);
    if (!d || PyList_Append(list, d) < 0) {
      Py_XDECREF(d);
      Py_CLEAR(list);
      break;
    }
    Py_DECREF(d);
  }
  return list;
}

static PyObject *viewer_publish(tlpy_viewer *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"now", NULL};
  int now = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:publish", names, &now)) return NULL;
  if (open_or_raise(self)) return NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  int taken = 0;
  tl_status st = now ? tl_recorder_capture(self->rec, &err) : tl_recorder_update(self->rec, &taken, &err);
  if (st != TL_OK) return tlpy_raise(&err);
  if (now || taken) tl_viewer_publish(self->viewer, self->rec);
  Py_RETURN_NONE;
}

static PyObject *viewer_rewind(tlpy_viewer *self, PyObject *unused) {
  (void)unused;
  if (open_or_raise(self)) return NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_recorder_rewind(self->rec, &err) != TL_OK) return tlpy_raise(&err);
  tl_viewer_publish(self->viewer, self->rec);
  Py_RETURN_NONE;
}

static PyObject *viewer_set_status(tlpy_viewer *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"time", "steps", "paused", "speed", "rtf", "snapshots", NULL};
  tl_viewer_status s;
  memset(&s, 0, sizeof s);
  s.speed = 1.0;
  s.rtf = NAN;
  PyObject *snaps = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "dL|pddO:set_status", names, &s.time, &s.steps, &s.paused, &s.speed,
                                   &s.rtf, &snaps))
    return NULL;
  if (open_or_raise(self)) return NULL;
  if (snaps && snaps != Py_None) { /* the saved states' times, oldest first */
    PyObject *seq = PySequence_Fast(snaps, "set_status: snapshots must be a list of times");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n && i < TL_VIEWER_MAX_SNAPSHOTS; ++i) {
      s.snapshot_time[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
      s.nsnapshot = (int)i + 1;
    }
    Py_DECREF(seq);
    if (PyErr_Occurred()) return NULL;
  }
  tl_world_solver_stats(((tlpy_world *)self->world)->world, &s.solver, NULL);
  tl_viewer_set_status(self->viewer, &s);
  Py_RETURN_NONE;
}

/* set_params([(name, min, max, value, unit), ...]) */
static PyObject *viewer_set_params(tlpy_viewer *self, PyObject *arg) {
  if (open_or_raise(self)) return NULL;
  PyObject *seq = PySequence_Fast(arg, "set_params: expected a list of (name, min, max, value, unit)");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > 64) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "set_params: %zd parameters, at most 64", n);
    return NULL;
  }
  tl_viewer_param p[64];
  memset(p, 0, sizeof p);
  for (Py_ssize_t i = 0; i < n; ++i) {
    const char *name, *unit = "";
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "sddd|s:set_params", &name, &p[i].min, &p[i].max,
                          &p[i].value, &unit)) {
      Py_DECREF(seq);
      return NULL;
    }
    if (strlen(name) >= sizeof p[i].name || strlen(unit) >= sizeof p[i].unit) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "set_params: parameter %zd: name (< 48 bytes) or unit (< 16) too long", i);
      return NULL;
    }
    snprintf(p[i].name, sizeof p[i].name, "%s", name);
    snprintf(p[i].unit, sizeof p[i].unit, "%s", unit);
  }
  Py_DECREF(seq);
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_viewer_set_params(self->viewer, p, (int)n, &err) != TL_OK) return tlpy_raise(&err);
  Py_RETURN_NONE;
}

static PyObject *viewer_close(tlpy_viewer *self, PyObject *unused) {
  (void)unused;
  viewer_close_c(self);
  Py_RETURN_NONE;
}

static PyObject *viewer_port(tlpy_viewer *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(self->viewer ? tl_viewer_port(self->viewer) : -1);
}

static PyObject *viewer_nclient(tlpy_viewer *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(self->viewer ? tl_viewer_nclient(self->viewer) : 0);
}

static PyMethodDef viewer_methods[] = {
    {"poll", (PyCFunction)viewer_poll, METH_NOARGS,
     "poll() -> list of dict\n\nThe page's pending events, oldest first: {'type': 'pause' | 'run' | 'reset'},\n"
     "{'type': 'step', 'n'}, {'type': 'speed', 'factor'} (0: as fast as possible), {'type': 'force',\n"
     "'system', 'body' (index), 'id', 'point' (world, m), 'force' (world, N), 'duration' (s)},\n"
     "{'type': 'param', 'name', 'value'}, {'type': 'snapshot'}, {'type': 'restore', 'index'}. Never blocks."},
    {"publish", (PyCFunction)(void (*)(void))viewer_publish, METH_VARARGS | METH_KEYWORDS,
     "publish(now=False)\n\nAfter a step: a frame to the page when one is due (fps of simulated time);\n"
     "now=True: a frame of the current state at once (when pausing: the page shows where it stopped)."},
    {"rewind", (PyCFunction)viewer_rewind, METH_NOARGS,
     "rewind()\n\nThe world's time went back (snapshot_restore): a frame now, the schedule restarting from it."},
    {"set_status", (PyCFunction)(void (*)(void))viewer_set_status, METH_VARARGS | METH_KEYWORDS,
     "set_status(time, steps, paused=False, speed=1.0, rtf=nan, snapshots=None)\n\nThe status the page shows "
     "(with the world's solver statistics); snapshots: the saved states' times (at most 8)."},
    {"set_params", (PyCFunction)viewer_set_params, METH_O,
     "set_params([(name, min, max, value, unit), ...])\n\nThe page's parameter sliders (at most 64)."},
    {"close", (PyCFunction)viewer_close, METH_NOARGS, "close()\n\nStop serving (also when collected)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef viewer_getset[] = {
    {"port", (getter)viewer_port, NULL, "the port served (-1 once closed)", NULL},
    {"nclient", (getter)viewer_nclient, NULL, "browsers connected now", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_viewer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus._Viewer",
    .tp_basicsize = sizeof(tlpy_viewer),
    .tp_dealloc = (destructor)viewer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_Viewer(world, host=None, port=0, fps=60.0, shared_control=False, history=10.0): the live view of a World\n"
              "(use talus.Viewer).",
    .tp_methods = viewer_methods,
    .tp_getset = viewer_getset,
    .tp_init = (initproc)viewer_init,
    .tp_new = PyType_GenericNew,
};
