/* Shared helpers of the libFuzzer harnesses (tests/fuzz/fuzz_*.c).
 *
 * Each harness defines LLVMFuzzerTestOneInput (and, when it needs set-up,
 * LLVMFuzzerInitialize). The same source is linked two ways:
 *   - with clang's -fsanitize=fuzzer (TALUS_FUZZ=ON, scripts/fuzz.sh): libFuzzer's
 *     main mutates inputs;
 *   - with tests/fuzz/fuzz_replay.c (every build, gcc too): a plain main that
 *     feeds the files named on its command line (regression inputs and seeds)
 *     to LLVMFuzzerTestOneInput, run by ctest (label fuzz).
 *
 * Harnesses that need files beside their input (a world file's URDFs, a sweep
 * file's robot) build a scratch tree under /tmp with symbolic links into the
 * source tree's robots/ (TALUS_SOURCE_DIR), so the project's own world and
 * sweep files load with their relative paths; the source tree is never
 * written. */
#ifndef TALUS_FUZZ_UTIL_H
#define TALUS_FUZZ_UTIL_H

#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TALUS_SOURCE_DIR
#error "compile with -DTALUS_SOURCE_DIR=\"...\" (tests/fuzz is built by CMake)"
#endif

/* Stop the program with a message: a broken invariant is a finding (libFuzzer
 * saves the input; the replay test fails). */
#define FUZZ_ASSERT(cond, ...)                                                                     \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "fuzz invariant broken at %s:%d: ", __FILE__, __LINE__);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

/* Write size bytes to path (replacing it). Aborts on failure (the scratch
 * tree is the harness's own: a failure is a broken test set-up). */
static inline void fuzz_write(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  FUZZ_ASSERT(f, "cannot write %s", path);
  FUZZ_ASSERT(fwrite(data, 1, size, f) == size || size == 0, "short write to %s", path);
  FUZZ_ASSERT(fclose(f) == 0, "cannot close %s", path);
}

static inline void fuzz_mkdir(const char *path) {
  FUZZ_ASSERT(mkdir(path, 0700) == 0 || access(path, F_OK) == 0, "cannot create %s", path);
}

/* A scratch tree /tmp/talus_fuzz_<name>_<pid> (into root, cap bytes) with
 *   robots/<entry> -> TALUS_SOURCE_DIR/robots/<entry> for every entry but worlds,
 *   robots/worlds/<file> -> the same for every file of robots/worlds but *.xml,
 *   examples/sweeps/ (empty),
 * so a world file written to robots/worlds/ and a sweep file written to
 * examples/sweeps/ find their robots, heightmaps and CSVs as in the source tree. */
static inline void fuzz_scratch_tree(const char *name, char *root, size_t cap) {
  char a[1024], b[1024];
  snprintf(root, cap, "/tmp/talus_fuzz_%s_%ld", name, (long)getpid());
  fuzz_mkdir(root);
  snprintf(a, sizeof a, "%s/robots", root);
  fuzz_mkdir(a);
  snprintf(a, sizeof a, "%s/robots/worlds", root);
  fuzz_mkdir(a);
  snprintf(a, sizeof a, "%s/examples", root);
  fuzz_mkdir(a);
  snprintf(a, sizeof a, "%s/examples/sweeps", root);
  fuzz_mkdir(a);
  for (int pass = 0; pass < 2; pass++) {
    const char *sub = pass ? "robots/worlds" : "robots";
    snprintf(a, sizeof a, "%s/%s", TALUS_SOURCE_DIR, sub);
    DIR *d = opendir(a);
    FUZZ_ASSERT(d, "cannot read %s", a);
    for (struct dirent *e; (e = readdir(d));) {
      const char *n = e->d_name;
      size_t len = strlen(n);
      if (n[0] == '.' || (!pass && !strcmp(n, "worlds")) || (pass && len > 4 && !strcmp(n + len - 4, ".xml")))
        continue;
      snprintf(a, sizeof a, "%s/%s/%s", TALUS_SOURCE_DIR, sub, n);
      snprintf(b, sizeof b, "%s/%s/%s", root, sub, n);
      if (access(b, F_OK) != 0) FUZZ_ASSERT(symlink(a, b) == 0, "cannot link %s", b);
    }
    closedir(d);
  }
}

#endif
