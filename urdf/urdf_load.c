/* Public URDF loading: parse (urdf_parse.c) then compile (urdf_compile.c). */
#include <stdio.h>

#include "base/error.h"
#include "talus/urdf.h"
#include "urdf/urdf_compile.h"

tl_load_options tl_load_options_default(void) {
  tl_load_options o = {TL_BASE_AUTO, 0};
  return o;
}

static tl_status finish(tl_status s, tl_urdf_doc *doc, const tl_load_options *opt, tl_model **out,
                        tl_error *err) {
  if (!s) {
    tl_load_options o = opt ? *opt : tl_load_options_default();
    s = tl_urdf_compile(doc, o.base, out, err);
    if (!s && o.verbose)
      for (int i = 0; i < doc->nwarning && i < 16; i++)
        fprintf(stderr, "talus: warning: %s\n", doc->warnings[i]);
  }
  tl_urdf_doc_free(doc);
  return s;
}

tl_status tl_model_load_urdf(const char *path, const tl_load_options *opt, tl_model **out,
                             tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  if (!path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "path must not be NULL");
  tl_urdf_doc doc;
  tl_status s = tl_urdf_parse_file(path, &doc, err);
  return finish(s, &doc, opt, out, err);
}

tl_status tl_model_load_urdf_string(const char *text, size_t len, const char *name,
                                    const tl_load_options *opt, tl_model **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  if (!text) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "text", "text must not be NULL");
  tl_urdf_doc doc;
  tl_status s = tl_urdf_parse_string(text, len, name ? name : "<string>", &doc, err);
  return finish(s, &doc, opt, out, err);
}
