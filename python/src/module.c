/* talus._talus: module init, talus.Error, the task list. */
#define TLPY_IMPORT_ARRAY
#include "tlpy.h"

static PyObject *tasks(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  PyObject *list = PyList_New(tl_task_count());
  for (int i = 0; list && i < tl_task_count(); i++) {
    PyObject *t = Py_BuildValue("(ss)", tl_task_name(i), tl_task_summary(i));
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, t);
  }
  return list;
}

static PyObject *cpu_count(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromLong(tl_batch_cpu_count());
}

/* py_sweep.c */
PyObject *tlpy_sweep(PyObject *self, PyObject *args, PyObject *kw);
/* py_onboard.c */
PyObject *tlpy_find_standing_pose(PyObject *self, PyObject *args, PyObject *kw);

static PyMethodDef module_methods[] = {
    {"tasks", tasks, METH_NOARGS, "tasks() -> list of (name, summary) of the VecEnv tasks"},
    {"cpu_count", cpu_count, METH_NOARGS, "cpu_count() -> CPUs this process may run on (num_threads=None)"},
    {"_sweep", (PyCFunction)(void (*)(void))tlpy_sweep, METH_VARARGS | METH_KEYWORDS,
     "_sweep(settings, file=None, threads=None, csv=None, summary=None, resume=False, progress=False) -> dict\n"
     "The C sweep runner behind talus.sweep (talus/sweep.h); settings: (key, value) text pairs."},
    {"_find_standing_pose", (PyCFunction)(void (*)(void))tlpy_find_standing_pose, METH_VARARGS | METH_KEYWORDS,
     "_find_standing_pose(model, height=None, feet=None, height_fraction=0.7) -> (q, dict)\n"
     "The C search behind talus.find_standing_pose (tl_find_standing_pose, talus/onboard.h)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "talus._talus",
    "Talus's C extension: Model, World, System, BatchWorld and the C vectorized environment.\n"
    "Import `talus`, not this module.",
    -1, module_methods, NULL, NULL, NULL, NULL};

static int add_type(PyObject *m, PyTypeObject *t, const char *name) {
  if (PyType_Ready(t) < 0) return -1;
  Py_INCREF(t);
  if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__talus(void) {
  import_array();
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  tlpy_error = PyErr_NewExceptionWithDoc(
      "talus.Error",
      "An error reported by the Talus C library. str(e) is its message, which names the file,\n"
      "line and element (or the API argument) that was bad. Attributes: status (e.g. 'parse\n"
      "error'), code (the tl_status number), file, line, element (None when not about a file).",
      PyExc_RuntimeError, NULL);
  if (!tlpy_error || PyModule_AddObject(m, "Error", tlpy_error) < 0) goto fail;
  Py_INCREF(tlpy_error); /* one reference for the module, one kept in tlpy_error */
  tlpy_urdf_warning = PyErr_NewExceptionWithDoc(
      "talus.URDFWarning",
      "A warning of the URDF loader (a visual mesh not found, a <limit> of zeros taken as unspecified,\n"
      "an implausible density, ...): issued by Model.from_urdf / from_urdf_string and by VecEnv\n"
      "when the task loads a URDF; the text names the file, line and element.",
      PyExc_UserWarning, NULL);
  if (!tlpy_urdf_warning || PyModule_AddObject(m, "URDFWarning", tlpy_urdf_warning) < 0) goto fail;
  Py_INCREF(tlpy_urdf_warning);
  tlpy_onboarding_warning = PyErr_NewExceptionWithDoc(
      "talus.OnboardingWarning",
      "A warning of the \"urdf\" task at creation about the robot: its default pose cannot stand, a\n"
      "non-foot link touches the ground at reset, or a floating robot looks like an arm. The text\n"
      "says the option that fixes it (docs/tasks.md, \"Onboarding a robot\").",
      PyExc_UserWarning, NULL);
  if (!tlpy_onboarding_warning || PyModule_AddObject(m, "OnboardingWarning", tlpy_onboarding_warning) < 0)
    goto fail;
  Py_INCREF(tlpy_onboarding_warning);
  if (add_type(m, &tlpy_model_type, "Model") || add_type(m, &tlpy_world_type, "World") ||
      add_type(m, &tlpy_system_type, "System") || add_type(m, &tlpy_batch_type, "BatchWorld") ||
      add_type(m, &tlpy_vecenv_type, "_VecEnv") || add_type(m, &tlpy_recording_type, "Recording") ||
      add_type(m, &tlpy_viewer_type, "_Viewer"))
    goto fail;
  if (PyModule_AddStringConstant(m, "__version__", TALUS_VERSION) < 0) goto fail;
  /* 1 when the web viewer is embedded (World.record(path) and VecEnv(record_path=) need it) */
  if (PyModule_AddObject(m, "have_viewer", PyBool_FromLong(tl_recorder_have_viewer())) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
