/* Internal: reading whole files. */
#ifndef TALUS_BASE_FILE_H
#define TALUS_BASE_FILE_H

#include <stddef.h>

#include "talus/types.h"

/* Read the file at path into a malloc'ed buffer *out (NUL-terminated, *len
 * bytes before the NUL). Files over max_bytes are refused. TL_ERR_IO (cannot
 * open or read, too large) or TL_ERR_MEMORY, with the path in err. */
tl_status tl_read_file(const char *path, size_t max_bytes, char **out, size_t *len, tl_error *err);

#endif
