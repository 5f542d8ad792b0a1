#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tl_str_append(char *buf, size_t cap, size_t *n, const char *fmt, ...) {
  if (*n >= cap - 1) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *n, cap - *n, fmt, ap);
  va_end(ap);
  if (k > 0) *n += (size_t)k < cap - *n ? (size_t)k : cap - 1 - *n;
}

tl_status tl_error_setv(tl_error *err, tl_status status, const char *file, int line,
                        const char *element, const char *fmt, va_list ap) {
  if (!err) return status;
  err->status = status;
  err->line = line;
  snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
  snprintf(err->element, sizeof(err->element), "%s", element ? element : "");
  size_t n = 0, cap = sizeof(err->message);
  err->message[0] = '\0';
  if (file && *file) tl_str_append(err->message, cap, &n, "%s:", file);
  if (line > 0) tl_str_append(err->message, cap, &n, "%d:", line);
  if (element && *element) tl_str_append(err->message, cap, &n, "%s<%s>:", n ? " " : "", element);
  if (n) tl_str_append(err->message, cap, &n, " ");
  if (n < cap - 1) vsnprintf(err->message + n, cap - n, fmt, ap);
  return status;
}

tl_status tl_error_set(tl_error *err, tl_status status, const char *file, int line,
                       const char *element, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_status st = tl_error_setv(err, status, file, line, element, fmt, ap);
  va_end(ap);
  return st;
}

static const char *const status_names[] = {"ok", "i/o error", "parse error", "invalid input",
                                           "bad argument", "out of memory", "unsupported",
                                           "diverged"};

const char *tl_status_name(tl_status status) {
  if ((int)status < 0 || (size_t)status >= sizeof(status_names) / sizeof(status_names[0]))
    return "unknown status";
  return status_names[status];
}
