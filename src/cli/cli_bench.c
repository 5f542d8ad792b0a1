/* `talus bench [ARGS...]`: run the benchmark, talus_bench, with the same
 * arguments and output.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CLI_BENCH_BINARY "talus_bench"

/* The path of talus_bench beside the running binary into out; -1 (after an
 * error message) when the running binary cannot be found. */
static int bench_path(char *out, size_t len) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    cli_errorf("bench: cannot find the talus binary (/proc/self/exe: %s), so not "
               CLI_BENCH_BINARY " beside it either", strerror(errno));
    return -1;
  }
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  if ((size_t)snprintf(out, len, "%s/" CLI_BENCH_BINARY, slash ? self : ".") >= len) {
    cli_errorf("bench: the path of " CLI_BENCH_BINARY " is too long");
    return -1;
  }
  return 0;
}

int cli_bench(int argc, char **argv) {
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
