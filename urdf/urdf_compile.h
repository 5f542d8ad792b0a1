/* Internal: compile a parsed URDF into a model (see urdf_compile.c). */
#ifndef TALUS_URDF_COMPILE_H
#define TALUS_URDF_COMPILE_H

#include "model/model.h"
#include "urdf/urdf_doc.h"

/* Build *out from doc. `base`: TL_BASE_AUTO, _FLOATING or _FIXED. On failure
 * *out is NULL, err names the file and line, and nothing is allocated. */
tl_status tl_urdf_compile(const tl_urdf_doc *doc, tl_base_type base, tl_model **out, tl_error *err);

#endif
