/* Internal: RaiSim-style URDF templates (see urdf_template.c). */
#ifndef TALUS_URDF_TEMPLATE_H
#define TALUS_URDF_TEMPLATE_H

#include <stddef.h>

#include "talus/types.h"

/* Expand `@@Name` variables and `{expression}` arithmetic of text (len
 * bytes) with the nvar variables names[i] = values[i]. `name` is the file
 * name for errors. When text holds nothing to expand, *out is NULL (use text
 * as it is); else *out is a new malloc'ed buffer of *outlen bytes (plus a
 * NUL). Line numbers are unchanged. Errors: TL_ERR_INVALID for an undefined
 * variable (named, with its line), TL_ERR_PARSE for a broken expression,
 * TL_ERR_ARGUMENT for a bad variable name or value. */
tl_status tl_urdf_template(const char *text, size_t len, const char *name, const char *const *names,
                           const double *values, int nvar, char **out, size_t *outlen, tl_error *err);

#endif
