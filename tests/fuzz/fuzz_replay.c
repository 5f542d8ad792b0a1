/* A main for the fuzz harnesses without libFuzzer (tests/fuzz/fuzz_util.h):
 * feeds every file named on the command line, and every regular file of
 * every folder named there (sorted by name, not recursive), to
 * LLVMFuzzerTestOneInput once, after LLVMFuzzerInitialize when the harness
 * has one. A crash, a sanitizer report or a broken invariant (abort) fails
 * the run; otherwise it prints how many inputs it replayed and exits 0.
 * A missing folder is an error (a renamed corpus must not pass silently);
 * at least one input is required.
 * Usage: fuzz_replay_<harness> PATH...   (ctest: fuzz_<harness>, label fuzz) */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  unsigned char *buf = malloc(cap);
  for (size_t n; buf && (n = fread(buf + len, 1, cap - len, f)) > 0;) {
    len += n;
    if (len == cap) {
      unsigned char *g = realloc(buf, cap *= 2);
      if (!g) free(buf);
      buf = g;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "fuzz_replay: out of memory reading %s\n", path);
    return -1;
  }
  /* an exact-size copy, so ASan sees reads past the input's end */
  unsigned char *in = malloc(len ? len : 1);
  if (!in) {
    free(buf);
    return -1;
  }
  memcpy(in, buf, len);
  free(buf);
  fprintf(stderr, "fuzz_replay: %s (%zu bytes)\n", path, len);
  LLVMFuzzerTestOneInput(in, len);
  free(in);
  return 1;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fuzz_replay: cannot read folder %s\n", dir);
    return -1;
  }
  char **names = NULL;
  int n = 0, cap = 0, ran = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      char **g = realloc(names, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(*g));
      if (!g) break;
      names = g;
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof(*names), cmp_names);
  for (int i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (ran >= 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      int r = run_file(path);
      ran = r < 0 ? -1 : ran + r;
    }
    free(names[i]);
  }
  free(names);
  return ran;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int total = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "fuzz_replay: %s does not exist\n", argv[i]);
      return 1;
    }
    int r = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]);
    if (r < 0) return 1;
    total += r;
  }
  if (total == 0) {
    fprintf(stderr, "fuzz_replay: no input given\n");
    return 1;
  }
  printf("fuzz_replay: %d inputs replayed without a crash or a broken invariant\n", total);
  return 0;
}
