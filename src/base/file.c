#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

tl_status tl_read_file(const char *path, size_t max_bytes, char **out, size_t *len, tl_error *err) {
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "cannot open file: %s", strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (n < cap - 1) break;
    if (cap > max_bytes) {
      free(buf);
      fclose(f);
      return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "file is larger than %zu MB", max_bytes >> 20);
    }
    char *bigger = realloc(buf, cap * 2);
    if (!bigger) free(buf);
    buf = bigger;
    cap *= 2;
  }
  int failed = ferror(f), saved = errno;
  fclose(f);
  if (!buf) return tl_error_set(err, TL_ERR_MEMORY, path, 0, NULL, "out of memory reading the file");
  if (failed) {
    free(buf);
    return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "cannot read file: %s", strerror(saved));
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return TL_OK;
}
