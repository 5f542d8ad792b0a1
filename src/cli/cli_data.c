/* Where the talus command finds its data (the robots shipped with Talus, the Python benchmark)
 * and its sibling programs: relative to the running binary, so an installed talus works from
 * any prefix and no path of the build machine is compiled in.
 *
 * Data folder, first that exists: $TALUS_DATA_DIR; <bin>/../share/talus (installed:
 * <prefix>/bin/talus and <prefix>/share/talus); <bin>/share/talus (the build tree, where CMake
 * links share/talus/robots to the source robots/). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_exe_dir(char *out, size_t len) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    cli_errorf("cannot find the talus binary (/proc/self/exe: %s)", strerror(errno));
    return -1;
  }
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  if ((size_t)snprintf(out, len, "%s", slash ? self : ".") >= len) {
    cli_errorf("the path of the talus binary is too long");
    return -1;
  }
  return 0;
}

int cli_data_file(const char *rel, char *out, size_t len) {
  char bin[PATH_MAX], looked[3 * PATH_MAX + 64];
  size_t n = 0;
  looked[0] = '\0';
  const char *env = getenv("TALUS_DATA_DIR");
  if (env && env[0]) {
    if ((size_t)snprintf(out, len, "%s/%s", env, rel) < len && access(out, R_OK) == 0) return 0;
    n += (size_t)snprintf(looked + n, sizeof looked - n, "%s/%s ($TALUS_DATA_DIR)", env, rel);
  }
  if (cli_exe_dir(bin, sizeof bin) != 0) return -1;
  const char *layouts[2] = {"%s/../share/talus/%s", "%s/share/talus/%s"};
  for (int k = 0; k < 2; k++) {
    if ((size_t)snprintf(out, len, layouts[k], bin, rel) < len && access(out, R_OK) == 0) return 0;
    if (n < sizeof looked) n += (size_t)snprintf(looked + n, sizeof looked - n, "%s%s", n ? ", " : "", out);
  }
  cli_errorf("%s not found (looked in %s); set TALUS_DATA_DIR to the folder holding Talus's "
             "share/talus data", rel, looked);
  return -1;
}
