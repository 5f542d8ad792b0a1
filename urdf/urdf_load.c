/* Public URDF loading: text (file or string) -> template expansion
 * (urdf_template.c) -> parse (urdf_parse.c) -> meshes (urdf_mesh.c) ->
 * compile (urdf_compile.c). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "talus/urdf.h"
#include "urdf/urdf_compile.h"
#include "urdf/urdf_template.h"

/* Largest URDF file read (bytes). */
#define TL_URDF_MAX_BYTES ((size_t)1 << 30)

tl_load_options tl_load_options_default(void) {
  tl_load_options o;
  memset(&o, 0, sizeof(o));
  o.base = TL_BASE_AUTO;
  return o;
}


/* Folder of a file path ("." when it has none). */
static void dir_of(const char *path, char *dir, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, cap, ".");
  else if (slash == path)
    snprintf(dir, cap, "/");
  else
    snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

static void print_verbose(const tl_urdf_doc *doc) {
  int kept = (int)(sizeof(doc->skipped) / sizeof(doc->skipped[0]));
  for (int i = 0; i < doc->nskipped && i < kept; i++)
    fprintf(stderr, "talus: %s: skipped %s\n", doc->path, doc->skipped[i]);
  if (doc->nskipped > kept)
    fprintf(stderr, "talus: %s: ... and %d more skipped elements\n", doc->path, doc->nskipped - kept);
  for (int i = 0; i < doc->nwarning && i < 16; i++)
    fprintf(stderr, "talus: warning: %s: %s\n", doc->path, doc->warnings[i]);
  if (doc->nwarning > 16) fprintf(stderr, "talus: ... and %d more warnings\n", doc->nwarning - 16);
}

/* Expand templates, parse, load meshes and compile `text` (len bytes). */
static tl_status load_text(const char *text, size_t len, const char *name, const char *base_dir,
                           const tl_load_options *opt, tl_model **out, tl_error *err) {
  tl_load_options o = opt ? *opt : tl_load_options_default();
  char *expanded = NULL;
  size_t elen = 0;
  tl_status s = tl_urdf_template(text, len, name, o.var_names, o.var_values, o.nvar, &expanded, &elen, err);
  if (s) return s;
  tl_urdf_doc doc;
  s = expanded ? tl_urdf_parse_string(expanded, elen, name, &doc, err)
               : tl_urdf_parse_string(text, len, name, &doc, err);
  free(expanded);
  if (s) return s;
  if (!o.no_meshes) s = tl_urdf_load_meshes(&doc, o.mesh_dir ? o.mesh_dir : base_dir, err);
  if (!s) s = tl_urdf_compile(&doc, o.base, out, err);
  if (!s && o.verbose) print_verbose(&doc);
  tl_urdf_doc_free(&doc);
  return s;
}

tl_status tl_model_load_urdf(const char *path, const tl_load_options *opt, tl_model **out,
                             tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  if (!path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "path must not be NULL");
  char *buf;
  size_t len;
  tl_status s = tl_read_file(path, TL_URDF_MAX_BYTES, &buf, &len, err);
  if (s) return s;
  char dir[4096];
  dir_of(path, dir, sizeof(dir));
  s = load_text(buf, len, path, dir, opt, out, err);
  free(buf);
  return s;
}

tl_status tl_model_load_urdf_string(const char *text, size_t len, const char *name,
                                    const tl_load_options *opt, tl_model **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  if (!text) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "text", "text must not be NULL");
  return load_text(text, len, name ? name : "<string>", ".", opt, out, err);
}

tl_status tl_model_load_urdf_any(const char *path_or_text, const tl_load_options *opt,
                                 tl_model **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  if (!path_or_text)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path_or_text", "path_or_text must not be NULL");
  const char *c = path_or_text;
  if (strncmp(c, "\xEF\xBB\xBF", 3) == 0) c += 3;
  while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') c++;
  if (*c == '<') return tl_model_load_urdf_string(path_or_text, strlen(path_or_text), NULL, opt, out, err);
  return tl_model_load_urdf(path_or_text, opt, out, err);
}
