#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tl_error_clear(tl_error *err) {
  if (err) memset(err, 0, sizeof(*err));
}

tl_status tl_error_set(tl_error *err, tl_status status, const char *file, int line,
                       const char *element, const char *fmt, ...) {
  if (!err) return status;
  char text[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  err->status = status;
  err->line = line;
  snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
  snprintf(err->element, sizeof(err->element), "%s", element ? element : "");
  char where[700] = "";
  size_t n = 0;
  if (file && *file) n += (size_t)snprintf(where + n, sizeof(where) - n, "%s:", file);
  if (line > 0 && n < sizeof(where)) n += (size_t)snprintf(where + n, sizeof(where) - n, "%d:", line);
  if (element && *element && n < sizeof(where))
    n += (size_t)snprintf(where + n, sizeof(where) - n, "%s<%s>:", n ? " " : "", element);
  snprintf(err->message, sizeof(err->message), "%s%s%s", where, n ? " " : "", text);
  return status;
}

static const char *const status_names[] = {"ok", "i/o error", "parse error", "invalid input",
                                           "bad argument", "out of memory", "unsupported",
                                           "diverged"};

const char *tl_status_name(tl_status status) {
  if ((int)status < 0 || (size_t)status >= sizeof(status_names) / sizeof(status_names[0]))
    return "unknown status";
  return status_names[status];
}
