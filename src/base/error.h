/* Internal: filling tl_error. */
#ifndef TALUS_BASE_ERROR_H
#define TALUS_BASE_ERROR_H

#include <stdarg.h>

#include "talus/types.h"

/* Fill *err (if non-NULL) and return `status`. The message is formatted as
 * "FILE:LINE: <ELEMENT>: TEXT" with the parts that are empty / 0 left out.
 * `file` and `element` may be NULL. */
tl_status tl_error_set(tl_error *err, tl_status status, const char *file, int line,
                       const char *element, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Append formatted text to buf (cap bytes, NUL-terminated) at offset *n,
 * never past the end; *n advances by what was written. */
void tl_str_append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* tl_error_set with a va_list. */
tl_status tl_error_setv(tl_error *err, tl_status status, const char *file, int line,
                        const char *element, const char *fmt, va_list ap);

#endif
