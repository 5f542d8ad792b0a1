/* talus.Recording: a recorder (talus/record.h) attached to a World or to one
 * environment of a VecEnv. The owner takes a frame after each step while the
 * recording is open (tl_recorder_update: frames at `fps` of simulated time);
 * close() (or leaving a `with` block, or garbage collection) writes the
 * self-contained HTML page and/or the CSV to the paths given, then detaches. */
#include "tlpy.h"

#include <strings.h>
#include <sys/stat.h>

typedef struct tlpy_recording {
  PyObject_HEAD
  PyObject *owner;       /* strong reference: the World or _VecEnv whose world is recorded */
  tl_recorder **slot;    /* the owner's pointer to the recorder (NULL once closed) */
  const int *busy;       /* the owner's busy flag */
  tl_recorder *rec;
  PyObject *path, *csv;  /* bytes (file system encoding) or NULL */
} tlpy_recording;

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), m = strlen(ext);
  return n > m && strcasecmp(path + n - m, ext) == 0;
}

/* Check a path argument now (its folder exists, a file can be created), so a
 * bad path fails before any simulation; *out: new bytes reference or NULL. */
static int check_path(PyObject *obj, const char *what, PyObject **out) {
  *out = NULL;
  if (!obj || obj == Py_None) return 0;
  if (!PyUnicode_FSConverter(obj, out)) return -1;
  tl_error err;
  if (strcmp(what, "path") == 0 && !tl_recorder_have_viewer()) { /* the page needs the embedded viewer */
    Py_CLEAR(*out);
    PyErr_SetString(tlpy_error, "cannot record an HTML page: this Talus was built without the web viewer "
                                "(web/node_modules was missing when CMake ran: run scripts/setup.sh, or "
                                "`npm ci` in web/, then CMake again); csv= still works");
    return -1;
  }
  /* the extensions the command line checks (--record FILE.html, --csv FILE.csv; a device or FIFO
   * such as /dev/null takes a CSV whatever its name) */
  const char *name = PyBytes_AS_STRING(*out);
  int html = strcmp(what, "path") == 0;
  struct stat sb;
  int stream = !html && stat(name, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode));
  if (!stream && !(html ? has_ext(name, ".html") || has_ext(name, ".htm") : has_ext(name, ".csv"))) {
    PyErr_Format(PyExc_ValueError, "%s='%s' should end in %s", what, name,
                 html ? ".html (it is one self-contained web page)" : ".csv");
    Py_CLEAR(*out);
    return -1;
  }
  if (tl_recorder_check_path(PyBytes_AS_STRING(*out), what, &err)) {
    Py_CLEAR(*out);
    tlpy_raise(&err);
    return -1;
  }
  return 0;
}

/* Write the page and the CSV to the given paths (NULL: skip). */
static int write_files(tl_recorder *rec, PyObject *path, PyObject *csv) {
  tl_error err;
  tl_status st = TL_OK;
  if (path) st = tl_recorder_write_html(rec, PyBytes_AS_STRING(path), &err);
  if (!st && csv) st = tl_recorder_write_csv(rec, PyBytes_AS_STRING(csv), &err);
  if (st) {
    tlpy_raise(&err);
    return -1;
  }
  return 0;
}

PyObject *tlpy_recording_new(PyObject *owner, tl_recorder **slot, const int *busy, tl_world *world,
                             PyObject *path, PyObject *csv, double fps, int every, long long reserve) {
  if (tlpy_check_idle(*busy, "this object")) return NULL;
  if (*slot) {
    PyErr_SetString(PyExc_RuntimeError, "a recording of this world is already open: close it first");
    return NULL;
  }
  PyObject *p = NULL, *c = NULL;
  if (check_path(path, "path", &p) || check_path(csv, "csv", &c)) {
    Py_XDECREF(p);
    return NULL;
  }
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.fps = fps;
  o.every = every;
  o.reserve_frames = reserve;
  tl_recorder *rec = NULL;
  tl_error err;
  tl_status st;
  Py_BEGIN_ALLOW_THREADS st = tl_recorder_create(world, &o, &rec, &err);
  Py_END_ALLOW_THREADS if (st) {
    Py_XDECREF(p);
    Py_XDECREF(c);
    return tlpy_raise(&err);
  }
  tlpy_recording *self = PyObject_New(tlpy_recording, &tlpy_recording_type);
  if (!self) {
    tl_recorder_free(rec);
    Py_XDECREF(p);
    Py_XDECREF(c);
    return NULL;
  }
  Py_INCREF(owner);
  self->owner = owner;
  self->slot = slot;
  self->busy = busy;
  self->rec = rec;
  self->path = p;
  self->csv = c;
  *slot = rec;
  return (PyObject *)self;
}

/* Detach and free; write the files first when `write`. Returns -1 with an
 * exception set if writing failed (the recorder is freed either way). */
static int finish(tlpy_recording *self, int write) {
  if (!self->rec) return 0;
  int rc = write ? write_files(self->rec, self->path, self->csv) : 0;
  *self->slot = NULL;
  tl_recorder_free(self->rec);
  self->rec = NULL;
  return rc;
}

static PyObject *recording_close(tlpy_recording *self, PyObject *unused) {
  (void)unused;
  if (self->rec && tlpy_check_idle(*self->busy, "the recorded object")) return NULL;
  if (finish(self, 1)) return NULL;
  Py_RETURN_NONE;
}

static PyObject *recording_save(tlpy_recording *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"path", "csv", NULL};
  PyObject *path = Py_None, *csv = Py_None, *p = NULL, *c = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:save", names, &path, &csv)) return NULL;
  if (!self->rec) {
    PyErr_SetString(PyExc_RuntimeError, "this recording is closed");
    return NULL;
  }
  if (tlpy_check_idle(*self->busy, "the recorded object") || check_path(path, "path", &p) ||
      check_path(csv, "csv", &c))
    return NULL;
  int rc = write_files(self->rec, p ? p : self->path, c ? c : self->csv);
  Py_XDECREF(p);
  Py_XDECREF(c);
  if (rc) return NULL;
  Py_RETURN_NONE;
}

static PyObject *recording_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  Py_INCREF(self);
  return self;
}

static PyObject *recording_exit(tlpy_recording *self, PyObject *args) {
  (void)args;
  return recording_close(self, NULL);
}

/* tp_finalize (PEP 442): an unclosed recording is written when it is collected. The object is
 * still alive here, so a write error can be reported as unraisable with the object named (doing
 * this from tp_dealloc would take and drop a reference to an object at refcount 0 and free it
 * twice). The pending exception, if any, is kept. */
static void recording_finalize(PyObject *obj) {
  tlpy_recording *self = (tlpy_recording *)obj;
  if (!self->rec) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (finish(self, 1)) PyErr_WriteUnraisable(obj);
  PyErr_Restore(type, value, tb);
}

static void recording_dealloc(tlpy_recording *self) {
  if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0) return; /* resurrected */
  Py_XDECREF(self->path);
  Py_XDECREF(self->csv);
  Py_XDECREF(self->owner);
  PyObject_Free(self);
}

static PyObject *get_nframe(tlpy_recording *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(self->rec ? tl_recorder_nframe(self->rec) : 0);
}

static PyObject *get_closed(tlpy_recording *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->rec == NULL);
}

static PyMethodDef recording_methods[] = {
    {"close", (PyCFunction)recording_close, METH_NOARGS,
     "close()\n\nWrite the HTML page (and the CSV) to the paths given when recording started, stop\n"
     "recording and free the frames. Idempotent. Raises talus.Error if a file cannot be written."},
    {"save", (PyCFunction)(void (*)(void))recording_save, METH_VARARGS | METH_KEYWORDS,
     "save(path=None, csv=None)\n\nWrite the frames so far now (to these paths, or the ones given at the "
     "start) and\ngo on recording."},
    {"__enter__", (PyCFunction)recording_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)recording_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef recording_getset[] = {
    {"nframe", (getter)get_nframe, NULL, "frames recorded so far", NULL},
    {"closed", (getter)get_closed, NULL, "True once closed", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tlpy_recording_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "talus.Recording",
    .tp_basicsize = sizeof(tlpy_recording),
    .tp_dealloc = (destructor)recording_dealloc,
    .tp_finalize = recording_finalize,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A recording of a World (World.record) or of one VecEnv environment (VecEnv(record_env=...)):\n"
              "a frame is taken after each step, at `fps` frames per second of simulated time; close() writes\n"
              "one self-contained HTML page (three.js 3D playback with plots, opens with no network) and/or a\n"
              "CSV of the time series. Use it as a context manager to close it at the end of a block.",
    .tp_methods = recording_methods,
    .tp_getset = recording_getset,
};
