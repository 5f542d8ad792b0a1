/* Talus URDF loader (libxml2), with RaiSim's extensions: <capsule radius
 * length|height>, and rotor_inertia, spring_mount, stiffness on
 * <joint><dynamics>. */
#ifndef TALUS_URDF_H
#define TALUS_URDF_H

#include "talus/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_load_options {
  tl_base_type base; /* TL_BASE_AUTO (default): fixed iff the root link is "world" joined by a fixed joint */
  int verbose;       /* print skipped elements and warnings to stderr */
} tl_load_options;

/* Default options (TL_BASE_AUTO, quiet). */
tl_load_options tl_load_options_default(void);

/* Load and compile a URDF file into a model.
 * path: file system path. opt: NULL for defaults. *out: set to a new model on
 * success, NULL on failure. Errors: TL_ERR_IO (unreadable file),
 * TL_ERR_PARSE (malformed XML or numbers), TL_ERR_INVALID (impossible robot:
 * cycles, unknown links, negative mass, ...), each with file and line. */
tl_status tl_model_load_urdf(const char *path, const tl_load_options *opt, tl_model **out,
                             tl_error *err);

/* Same for URDF text in memory; `name` is used as the file name in errors
 * (NULL: "<string>"). */
tl_status tl_model_load_urdf_string(const char *text, size_t len, const char *name,
                                    const tl_load_options *opt, tl_model **out, tl_error *err);

#ifdef __cplusplus
}
#endif
#endif
