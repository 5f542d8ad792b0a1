/* libFuzzer harness of the sweep specification parser (talus/sweep.h,
 * src/sweep/spec.c, spec_file.c). Two kinds of input:
 *   - a sweep file (the first non-blank byte is '<'): written to
 *     examples/sweeps/in.xml of a scratch tree whose robots link into the
 *     source tree (fuzz_util.h), so the example sweep files find their robot
 *     as in the source tree; read with tl_sweep_load_file;
 *   - otherwise settings, one KEY=VALUE per line, given to tl_sweep_set in
 *     order (the command line's path: --KEY VALUE).
 * A sweep whose settings are accepted is prepared (robot loaded, every
 * parameter checked against it, one nominal world built) and, when that
 * succeeds, the parameter values of samples 0 and nsample - 1 are drawn. A
 * refused setting or file must come with a message.
 * Seeds: the files of examples/sweeps (scripts/fuzz.sh), and
 * tests/fuzz/seeds/sweep/ (settings). */
#include "fuzz_util.h"

#include "talus/sweep.h"

static char path[1200], root[512], home[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_scratch_tree("sweep", root, sizeof root);
  snprintf(path, sizeof path, "%s/examples/sweeps/in.xml", root);
  FUZZ_ASSERT(getcwd(home, sizeof home), "getcwd");
  return 0;
}

static tl_status settings(tl_sweep *sw, const uint8_t *data, size_t size, tl_error *err) {
  char *text = malloc(size + 1);
  FUZZ_ASSERT(text, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';
  tl_status st = TL_OK;
  for (char *line = text, *next; line && !st; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *eq = strchr(line, '=');
    if (!eq) continue;
    *eq = '\0';
    st = tl_sweep_set(sw, line, eq + 1, err);
  }
  free(text);
  return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t k = 0;
  while (k < size && (data[k] == ' ' || data[k] == '\t' || data[k] == '\r' || data[k] == '\n')) k++;
  /* a relative robot path in KEY=VALUE settings starts at the scratch root, as the command line's
     at the current directory (left again before returning: libFuzzer writes its corpus relative to it) */
  FUZZ_ASSERT(chdir(root) == 0, "cannot enter %s", root);
  tl_sweep *sw = NULL;
  tl_error err;
  FUZZ_ASSERT(!tl_sweep_create(NULL, &sw, &err), "tl_sweep_create: %s", err.message);
  tl_status st;
  if (k < size && data[k] == '<') {
    fuzz_write(path, data, size);
    st = tl_sweep_load_file(sw, path, &err);
  } else {
    st = settings(sw, data, size, &err);
  }
  if (!st) st = tl_sweep_prepare(sw, &err);
  if (st) {
    FUZZ_ASSERT(err.message[0] != '\0', "a refused sweep without a message (status %d)", (int)st);
  } else {
    long n = tl_sweep_nsample(sw);
    int np = tl_sweep_nparam_column(sw);
    FUZZ_ASSERT(n >= 1 && np >= 0, "a prepared sweep with %ld samples and %d parameter columns", n, np);
    double *v = malloc(((size_t)np + 1) * sizeof(double));
    FUZZ_ASSERT(v, "out of memory");
    FUZZ_ASSERT(!tl_sweep_sample_values(sw, 0, v, np, &err), "sample 0: %s", err.message);
    FUZZ_ASSERT(!tl_sweep_sample_values(sw, n - 1, v, np, &err), "sample %ld: %s", n - 1, err.message);
    free(v);
  }
  tl_sweep_free(sw);
  FUZZ_ASSERT(chdir(home) == 0, "cannot return to %s", home);
  return 0;
}
