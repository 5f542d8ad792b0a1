/* libFuzzer target for the URDF loader (talus/urdf.h): every input is URDF
 * text. Each input is loaded twice: without meshes, which runs the template
 * expander, libxml2, the parser and the compiler down to the model; and with
 * meshes resolved from an empty folder, which runs the URI resolver (nothing
 * can be found there, so no mesh file is read). A model that loads is
 * exported (to memory) and the export loaded again.
 *
 * Seeds: robots/ (the project's URDFs), tests/urdf_bad/ (scripts/fuzz.sh).
 * Run: scripts/fuzz.sh urdf [--seconds N]; replayed by ctest fuzz_urdf. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "talus/urdf.h"

static char empty_dir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  snprintf(empty_dir, sizeof(empty_dir), "/tmp/talus_fuzz_empty_%ld", (long)getpid());
  mkdir(empty_dir, 0700);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"mass", "r", "L"};
  static const double values[] = {2.5, 0.1, -3};
  tl_load_options o = tl_load_options_default();
  o.var_names = names;
  o.var_values = values;
  o.nvar = 3;
  o.no_meshes = 1;
  tl_model *m = NULL;
  tl_error err;
  if (tl_model_load_urdf_string((const char *)data, size, "fuzz.urdf", &o, &m, &err) == TL_OK) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f && tl_model_export_urdf_file(m, f, &err) == TL_OK) {
      fclose(f);
      f = NULL;
      tl_model *back = NULL;
      tl_load_options b = tl_load_options_default();
      b.base = TL_BASE_FIXED;
      b.no_meshes = 1;
      if (tl_model_load_urdf_string(buf, len, "export.urdf", &b, &back, &err) == TL_OK) tl_model_free(back);
    }
    if (f) fclose(f);
    free(buf);
    tl_model_free(m);
  }
  o.no_meshes = 0;
  o.mesh_dir = empty_dir;
  m = NULL;
  if (tl_model_load_urdf_string((const char *)data, size, "fuzz.urdf", &o, &m, &err) == TL_OK) tl_model_free(m);
  return 0;
}
