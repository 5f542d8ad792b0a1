/* The `talus` CPython extension (talus._talus): shared declarations.
 *
 * Every type wraps an object of the public C API (talus/talus.h,
 * talus/batch.h, talus/task.h); nothing is computed here that the library
 * does not compute. Arrays cross the boundary as float64 NumPy arrays
 * (float32 / bool for vectorized-environment outputs), checked for shape and
 * dtype before any C call (ValueError naming the argument and the expected
 * shape); C errors become talus.Error carrying the C message, file and line.
 * The GIL is released while C code steps or loads; an object that is
 * stepping in another thread refuses every other call (RuntimeError) rather
 * than race with it. */
#ifndef TALUS_PY_H
#define TALUS_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL talus_numpy_api
#ifndef TLPY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "talus/batch.h"
#include "talus/talus.h"
#include "talus/task.h"

/* talus.Error (a RuntimeError subclass), created at import. */
extern PyObject *tlpy_error;

/* talus.URDFWarning and talus.OnboardingWarning (UserWarning subclasses), created at import. */
extern PyObject *tlpy_urdf_warning;
extern PyObject *tlpy_onboarding_warning;
/* Issue model's load warnings as talus.URDFWarning; -1 when the warnings filter raised. */
int tlpy_warn_model(const tl_model *model);

/* Raise talus.Error from a C error: message, and attributes status (name),
 * file, line, element. Returns NULL. */
PyObject *tlpy_raise(const tl_error *err);

/* obj as a C-contiguous float64 array of exactly `shape` (ndim entries), a
 * new reference, or NULL with ValueError "NAME: expected ... shape (..), got
 * ...". Integer and floating dtypes are accepted (cast), anything else
 * (bool, complex, object, strings) refused. */
PyArrayObject *tlpy_f64(PyObject *obj, const char *name, int ndim, const npy_intp *shape);
/* The same, accepting also a scalar or a shorter shape that broadcasts to `shape`. */
PyArrayObject *tlpy_f64_broadcast(PyObject *obj, const char *name, int ndim, const npy_intp *shape);
/* New float64 array of shape, zero-filled (NULL on failure). */
PyArrayObject *tlpy_zeros(int ndim, const npy_intp *shape, int type);
/* Parse a seed (None allowed if allow_none: *has = 0): a Python int in [0, 2^64). */
int tlpy_seed(PyObject *obj, const char *name, int allow_none, uint64_t *seed, int *has);
/* Thread count from None (0: all CPUs) or an int >= 1. */
int tlpy_threads(PyObject *obj, int *out);

/* Refuse a call on an object that is stepping in another thread. */
int tlpy_check_idle(int busy, const char *what);

/* Types (one file each). */
extern PyTypeObject tlpy_model_type;
extern PyTypeObject tlpy_world_type;
extern PyTypeObject tlpy_system_type;
extern PyTypeObject tlpy_batch_type;
extern PyTypeObject tlpy_vecenv_type;
extern PyTypeObject tlpy_recording_type;
extern PyTypeObject tlpy_viewer_type;

typedef struct tlpy_model {
  PyObject_HEAD
  tl_model *model;
} tlpy_model;

typedef struct tlpy_world {
  PyObject_HEAD
  tl_world *world;
  int busy; /* 1 while stepping with the GIL released */
  tl_recorder *rec; /* the open Recording's recorder (frames after each step), or NULL */
} tlpy_world;

typedef struct tlpy_system {
  PyObject_HEAD
  tlpy_world *world; /* strong reference: the world owns the C system */
  tl_system *sys;
} tlpy_system;

/* A new talus.Recording of `world` owned by `owner` (kept alive by it): *slot
 * is the owner's recorder pointer (set here, cleared at close), busy its busy
 * flag; path / csv (None or path-like) are checked now and written at close;
 * fps, every, reserve as in tl_recorder_options. */
PyObject *tlpy_recording_new(PyObject *owner, tl_recorder **slot, const int *busy, tl_world *world,
                             PyObject *path, PyObject *csv, double fps, int every, long long reserve);

/* World's loop constraints (py_constraint.c, talus/constraint.h). */
PyObject *tlpy_world_add_constraint(tlpy_world *self, PyObject *args, PyObject *kw);
PyObject *tlpy_world_constraint(tlpy_world *self, PyObject *args);
PyObject *tlpy_world_constraints(tlpy_world *self, PyObject *noargs);
PyObject *tlpy_world_project_constraints(tlpy_world *self, PyObject *args, PyObject *kw);

/* A new System wrapper of world's system i (no cycle: the world keeps no wrappers). */
PyObject *tlpy_system_new(tlpy_world *world, tl_system *sys);

#endif
