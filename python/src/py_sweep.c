/* talus._sweep: dynamics-randomization sweeps (talus/sweep.h) from Python,
 * behind talus.sweep (python/talus/sweep.py). The settings arrive as
 * (key, value) text pairs, exactly the command line's options, so the C
 * library checks and runs them as `talus sweep` does; the rows come back as
 * NumPy arrays. Threads only (MPI is the command line's). The GIL is released
 * while samples run; Ctrl-C stops the run (finished rows stay in the CSV)
 * and raises KeyboardInterrupt. */
#include "tlpy.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "talus/sweep.h"

typedef struct sweep_ctx {
  int progress;
  int interrupted; /* a signal handler raised (PyErr_CheckSignals) */
} sweep_ctx;

/* Called on the calling thread (the run's coordinator) with the GIL released. */
static int check_signals(void *p) {
  sweep_ctx *c = p;
  PyGILState_STATE g = PyGILState_Ensure();
  if (!c->interrupted && PyErr_CheckSignals() < 0) c->interrupted = 1;
  PyGILState_Release(g);
  return c->interrupted;
}

static void progress(void *p, const tl_sweep_progress *s) {
  sweep_ctx *c = p;
  if (!c->progress) return;
  fprintf(stderr, "\rtalus.sweep: %ld/%ld samples, %.1f/s, failed %ld   ", s->done, s->total, s->rate, s->failed);
  if (s->done == s->total) fputc('\n', stderr);
  fflush(stderr);
}

/* Apply the (key, value) pairs of `settings` (a sequence of 2-tuples of str). */
static int apply(tl_sweep *sw, PyObject *settings) {
  PyObject *seq = PySequence_Fast(settings, "settings: expected a sequence of (key, value) pairs");
  if (!seq) return -1;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    const char *key = NULL, *value = NULL;
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "ss", &key, &value)) {
      Py_DECREF(seq);
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "settings: expected (str, str) pairs");
      return -1;
    }
    tl_error err;
    memset(&err, 0, sizeof err);
    if (tl_sweep_set(sw, key, value, &err) != TL_OK) {
      Py_DECREF(seq);
      tlpy_raise(&err);
      return -1;
    }
  }
  Py_DECREF(seq);
  return 0;
}

static PyObject *column_array(const tl_sweep_results *r, int kind, int index) {
  npy_intp n = (npy_intp)tl_sweep_results_count(r);
  int type = kind == 0 ? NPY_INT64 : NPY_FLOAT64;
  PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &n, type);
  if (!a) return NULL;
  for (npy_intp i = 0; i < n; ++i) {
    const tl_sweep_result *row = tl_sweep_results_row(r, (long)i);
    if (kind == 0) ((int64_t *)PyArray_DATA(a))[i] = row->sample;
    else if (kind == 1) ((double *)PyArray_DATA(a))[i] = row->params[index];
    else ((double *)PyArray_DATA(a))[i] = row->outcome[index];
  }
  return (PyObject *)a;
}

static PyObject *string_list(const tl_sweep_results *r, int status) {
  long n = tl_sweep_results_count(r);
  PyObject *list = PyList_New(n);
  for (long i = 0; list && i < n; ++i) {
    const tl_sweep_result *row = tl_sweep_results_row(r, i);
    PyObject *s = PyUnicode_FromString(status ? tl_sweep_status_name(row->status) : row->message);
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static int put(PyObject *d, const char *key, PyObject *v) {
  if (!v) return -1;
  int rc = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return rc;
}

/* {"columns": [...], "sample": int64[n], <param>: float64[n], "status": [str], <outcome>: float64[n],
 *  "message": [str], "complete": bool, "seed": int, "spec": str, "samples": int} */
static PyObject *rows_dict(const tl_sweep *sw, const tl_sweep_results *r) {
  PyObject *d = PyDict_New(), *cols = PyList_New(0);
  if (!d || !cols) goto fail;
  for (int i = 0; i < tl_sweep_ncolumn(sw); ++i) {
    PyObject *s = PyUnicode_FromString(tl_sweep_column(sw, i));
    if (!s || PyList_Append(cols, s) < 0) {
      Py_XDECREF(s);
      goto fail;
    }
    Py_DECREF(s);
  }
  if (put(d, "columns", cols) < 0) {
    cols = NULL;
    goto fail;
  }
  cols = NULL;
  if (put(d, "sample", column_array(r, 0, 0)) < 0) goto fail;
  for (int i = 0; i < tl_sweep_nparam_column(sw); ++i)
    if (put(d, tl_sweep_param_column(sw, i), column_array(r, 1, i)) < 0) goto fail;
  if (put(d, "status", string_list(r, 1)) < 0) goto fail;
  for (int i = 0; i < TL_SWEEP_NOUTCOME; ++i)
    if (put(d, tl_sweep_outcome_name(i), column_array(r, 2, i)) < 0) goto fail;
  if (put(d, "message", string_list(r, 0)) < 0) goto fail;
  char spec[20];
  snprintf(spec, sizeof spec, "%016llx", (unsigned long long)tl_sweep_hash(sw));
  if (put(d, "complete", PyBool_FromLong(tl_sweep_results_complete(r))) < 0 ||
      put(d, "seed", PyLong_FromUnsignedLongLong((unsigned long long)tl_sweep_seed(sw))) < 0 ||
      put(d, "spec", PyUnicode_FromString(spec)) < 0 || put(d, "samples", PyLong_FromLong(tl_sweep_nsample(sw))) < 0 ||
      put(d, "ran", PyLong_FromLong(tl_sweep_results_ran(r))) < 0)
    goto fail;
  return d;
fail:
  Py_XDECREF(cols);
  Py_XDECREF(d);
  return NULL;
}

/* _sweep(settings, file=None, threads=None, csv=None, summary=None, resume=False, progress=False) -> dict */
PyObject *tlpy_sweep(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *names[] = {"settings", "file", "threads", "csv", "summary", "resume", "progress", NULL};
  PyObject *settings = NULL, *threads = Py_None;
  const char *file = NULL, *csv = NULL, *summary = NULL;
  int resume = 0, show = 0, nthread = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zOzzpp:_sweep", names, &settings, &file, &threads, &csv, &summary,
                                   &resume, &show))
    return NULL;
  if (tlpy_threads(threads, &nthread)) return NULL;
  tl_sweep *sw = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_sweep_create(NULL, &sw, &err) != TL_OK) return tlpy_raise(&err);
  tl_status st = TL_OK;
  if (file) {
    Py_BEGIN_ALLOW_THREADS st = tl_sweep_load_file(sw, file, &err);
    Py_END_ALLOW_THREADS
  }
  if (st != TL_OK || apply(sw, settings) < 0) {
    tl_sweep_free(sw);
    return st != TL_OK ? tlpy_raise(&err) : NULL;
  }
  Py_BEGIN_ALLOW_THREADS st = tl_sweep_prepare(sw, &err);
  Py_END_ALLOW_THREADS if (st != TL_OK) {
    tl_sweep_free(sw);
    return tlpy_raise(&err);
  }
  sweep_ctx ctx = {show, 0};
  tl_sweep_run_options opt = tl_sweep_run_options_default();
  opt.nthread = nthread;
  opt.csv = csv ? csv : "";
  opt.resume = resume;
  opt.progress = progress;
  opt.interrupted = check_signals;
  opt.ctx = &ctx;
  tl_sweep_results *res = NULL;
  Py_BEGIN_ALLOW_THREADS st = tl_sweep_run(sw, &opt, &res, &err);
  if (st == TL_OK && summary) st = tl_sweep_write_summary(sw, res, summary, &err);
  Py_END_ALLOW_THREADS PyObject *out = NULL;
  if (st != TL_OK) tlpy_raise(&err);
  else if (ctx.interrupted) PyErr_SetNone(PyExc_KeyboardInterrupt);
  else out = rows_dict(sw, res);
  tl_sweep_results_free(res);
  tl_sweep_free(sw);
  if (ctx.interrupted && !PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
  return out;
}
