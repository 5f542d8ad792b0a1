/* `talus bench [ARGS...]`: run the benchmark, talus_bench, with the same
 * arguments and output. `talus bench --python [ARGS...]` runs the Python
 * vectorized-environment benchmark (bench/vecenv_bench.py from Talus's data
 * folder) with the Python interpreter CMake found (or $TALUS_PYTHON) and the
 * talus package built or installed beside this binary on PYTHONPATH.
 * `talus bench --sweep [ARGS...]` runs the sweep benchmark (bench/sweep_bench.py:
 * samples per second of an ANYmal C trot sweep on 1 and 2 processes) with
 * this binary as the talus it times ($TALUS_BIN).
 *
 * talus_bench is its own executable (bench/, built beside `talus` by the
 * same CMake project): it links MuJoCo when it is installed, to time it as
 * the peer in the same run, and wraps malloc at link time to measure memory;
 * neither belongs in the talus command or libtalus. So this command finds
 * talus_bench in the folder of the running talus binary (/proc/self/exe)
 * and replaces itself with it (execv): the exit status, stdout and stderr
 * are talus_bench's own. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CLI_BENCH_BINARY "talus_bench"

#ifndef TALUS_PYTHON_EXECUTABLE
#define TALUS_PYTHON_EXECUTABLE "python3"
#endif
#ifndef TALUS_PYTHON_INSTALL_DIR
#define TALUS_PYTHON_INSTALL_DIR "lib/python3/site-packages"
#endif

/* The path of talus_bench beside the running binary into out; -1 (after an
 * error message) when the running binary cannot be found. */
static int bench_path(char *out, size_t len) {
  char self[PATH_MAX];
  if (cli_exe_dir(self, sizeof self) != 0) return -1;
  if ((size_t)snprintf(out, len, "%s/" CLI_BENCH_BINARY, self) >= len) {
    cli_errorf("bench: the path of " CLI_BENCH_BINARY " is too long");
    return -1;
  }
  return 0;
}

/* Put the talus package beside this binary first on PYTHONPATH: <bin>/python (build tree) or
 * <bin>/../TALUS_PYTHON_INSTALL_DIR (installed). */
static int python_path(void) {
  char bin[PATH_MAX], dir[PATH_MAX + 64], path[3 * PATH_MAX];
  if (cli_exe_dir(bin, sizeof bin) != 0) return -1;
  snprintf(dir, sizeof dir, "%s/python", bin);
  if (access(dir, R_OK) != 0) snprintf(dir, sizeof dir, "%s/../" TALUS_PYTHON_INSTALL_DIR, bin);
  const char *old = getenv("PYTHONPATH");
  snprintf(path, sizeof path, "%s%s%s", dir, old && old[0] ? ":" : "", old && old[0] ? old : "");
  return setenv("PYTHONPATH", path, 1);
}

/* Run the Python benchmark bench/NAME with argv[2..] (argv[1] is the option that chose it). */
static int bench_python(int argc, char **argv, const char *name) {
  char script[PATH_MAX], rel[128];
  snprintf(rel, sizeof rel, "bench/%s", name);
  if (cli_data_file(rel, script, sizeof script) != 0) return CLI_EXIT_FAIL;
  char self[PATH_MAX], bin[PATH_MAX + 16];
  if (cli_exe_dir(self, sizeof self) == 0) { /* the talus the sweep benchmark times */
    snprintf(bin, sizeof bin, "%s/talus", self);
    setenv("TALUS_BIN", bin, 1);
  }
  const char *python = getenv("TALUS_PYTHON");
  if (!python || !python[0]) python = TALUS_PYTHON_EXECUTABLE;
  char **args = calloc((size_t)argc + 2, sizeof(char *));
  if (!args || python_path() != 0) {
    free(args);
    cli_errorf("bench %s: out of memory", argv[1]);
    return CLI_EXIT_FAIL;
  }
  args[0] = (char *)python;
  args[1] = script;
  for (int i = 2; i < argc; ++i) args[i] = argv[i]; /* argv[1] is --python or --sweep */
  args[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  execvp(python, args);
  int e = errno;
  free(args);
  cli_errorf("bench %s: cannot run %s: %s (set TALUS_PYTHON to a Python 3 with NumPy)", argv[1], python, strerror(e));
  return CLI_EXIT_FAIL;
}

int cli_bench(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--python") == 0) return bench_python(argc, argv, "vecenv_bench.py");
  if (argc > 1 && strcmp(argv[1], "--sweep") == 0) return bench_python(argc, argv, "sweep_bench.py");
  char path[PATH_MAX + 32];
  if (bench_path(path, sizeof path) != 0) return CLI_EXIT_FAIL;
  if (access(path, X_OK) != 0) {
    cli_errorf("bench: %s: %s; `talus bench` runs the benchmark binary built beside talus "
               "(build it with `cmake --build BUILD_DIR --target " CLI_BENCH_BINARY "`)",
               path, strerror(errno));
    return CLI_EXIT_FAIL;
  }
  /* argv[0] is "bench": talus_bench gets its own name, then the arguments as given */
  char **args = calloc((size_t)argc + 1, sizeof(char *));
  if (!args) {
    cli_errorf("bench: out of memory");
    return CLI_EXIT_FAIL;
  }
  args[0] = path;
  for (int i = 1; i < argc; ++i) args[i] = argv[i];
  args[argc] = NULL;
  fflush(stdout);
  fflush(stderr);
  execv(path, args);
  int e = errno; /* execv returns only on failure */
  free(args);
  cli_errorf("bench: cannot run %s: %s", path, strerror(e));
  return CLI_EXIT_FAIL;
}
