/* Task options (key=value strings) and the lookup of a task's robot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "tasks/task_internal.h"

/* Index of key in the options (the last one if repeated), or -1; records it as known. */
static int find(tl_opts *o, const char *key) {
  int seen = 0;
  for (int k = 0; k < o->nknown; k++) seen |= strcmp(o->known[k], key) == 0;
  if (!seen && o->nknown < TL_TASK_MAX_KEYS) o->known[o->nknown++] = key;
  int found = -1;
  for (int i = 0; i < o->nopt && i < TL_TASK_MAX_KEYS; i++)
    if (o->opt[i].key && strcmp(o->opt[i].key, key) == 0) {
      o->used[i] = 1;
      found = i;
    }
  return found;
}

static tl_status bad(tl_opts *o, tl_error *err, const char *key, const char *value, const char *expected) {
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, key, "task '%s': option %s=%s: expected %s", o->task, key,
                      value ? value : "(null)", expected);
}

/* Parse up to cap comma-separated finite numbers; returns the count or -1. */
static int parse_numbers(const char *s, double *out, int cap) {
  if (!s) return -1;
  int n = 0;
  const char *p = s;
  for (;;) {
    while (*p == ' ') p++;
    if (!*p) return n ? -1 : 0; /* empty text, or a trailing comma */
    char *end = NULL;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(x) || n >= cap) return -1;
    out[n++] = x;
    p = end;
    while (*p == ' ') p++;
    if (!*p) return n;
    if (*p != ',') return -1;
    p++;
  }
}

tl_status tl_opts_double(tl_opts *o, const char *key, double lo, double hi, double *out, tl_error *err) {
  int i = find(o, key);
  if (i < 0) return TL_OK;
  double x;
  if (parse_numbers(o->opt[i].value, &x, 1) != 1 || x < lo || x > hi) {
    char what[96];
    snprintf(what, sizeof(what), "a number in [%g, %g]", lo, hi);
    return bad(o, err, key, o->opt[i].value, what);
  }
  *out = x;
  return TL_OK;
}

tl_status tl_opts_int(tl_opts *o, const char *key, int lo, int hi, int *out, tl_error *err) {
  int i = find(o, key);
  if (i < 0) return TL_OK;
  double x;
  if (parse_numbers(o->opt[i].value, &x, 1) != 1 || x != floor(x) || x < lo || x > hi) {
    char what[96];
    snprintf(what, sizeof(what), "an integer in [%d, %d]", lo, hi);
    return bad(o, err, key, o->opt[i].value, what);
  }
  *out = (int)x;
  return TL_OK;
}

tl_status tl_opts_vector(tl_opts *o, const char *key, int n, int cap, double *out, int *count, tl_error *err) {
  int i = find(o, key);
  if (i < 0) return TL_OK;
  double tmp[256];
  int c = parse_numbers(o->opt[i].value, tmp, cap < 256 ? cap : 256);
  if (c < 1 || (n > 0 && c != n)) {
    char what[96];
    if (n > 0) snprintf(what, sizeof(what), "%d comma-separated numbers", n);
    else snprintf(what, sizeof(what), "1 to %d comma-separated numbers", cap);
    return bad(o, err, key, o->opt[i].value, what);
  }
  memcpy(out, tmp, (size_t)c * sizeof(double));
  if (count) *count = c;
  return TL_OK;
}

tl_status tl_opts_range(tl_opts *o, const char *key, double min, double max, double out[2], tl_error *err) {
  int i = find(o, key);
  if (i < 0) return TL_OK;
  double x[2];
  int c = parse_numbers(o->opt[i].value, x, 2);
  if (c == 1) x[1] = x[0];
  if (c < 1 || x[0] > x[1] || x[0] < min || x[1] > max) {
    char what[128];
    snprintf(what, sizeof(what), "a range LO,HI (or one number) with %g <= LO <= HI <= %g", min, max);
    return bad(o, err, key, o->opt[i].value, what);
  }
  out[0] = x[0];
  out[1] = x[1];
  return TL_OK;
}

tl_status tl_opts_string(tl_opts *o, const char *key, const char **out, tl_error *err) {
  int i = find(o, key);
  if (i < 0) return TL_OK;
  if (!o->opt[i].value || !o->opt[i].value[0]) return bad(o, err, key, "", "a non-empty text");
  *out = o->opt[i].value;
  return TL_OK;
}

tl_status tl_opts_finish(tl_opts *o, tl_error *err) {
  for (int i = 0; i < o->nopt; i++) {
    if (i < TL_TASK_MAX_KEYS && o->used[i]) continue;
    char known[1024];
    size_t n = 0;
    known[0] = '\0';
    for (int k = 0; k < o->nknown; k++) tl_str_append(known, sizeof(known), &n, "%s%s", k ? ", " : "", o->known[k]);
    const char *key = o->opt[i].key ? o->opt[i].key : "(null)";
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, key, "task '%s' has no option '%s' (its options: %s)", o->task,
                        key, known);
  }
  return TL_OK;
}

tl_status tl_task_robot_path(tl_opts *o, const char *rel, char *out, size_t cap, tl_error *err) {
  const char *urdf = NULL, *dir = NULL;
  tl_status st;
  if ((st = tl_opts_string(o, "urdf", &urdf, err)) || (st = tl_opts_string(o, "robots_dir", &dir, err))) return st;
  if (urdf) {
    if ((size_t)snprintf(out, cap, "%s", urdf) >= cap)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "urdf", "task '%s': urdf path too long", o->task);
    return TL_OK;
  }
  if (!rel)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "urdf", "task '%s' needs the option urdf=PATH", o->task);
  const char *env = getenv("TALUS_SHARED_ROBOTS");
  const char *dirs[2] = {env && env[0] ? env : NULL, dir};
  char looked[768];
  size_t n = 0;
  looked[0] = '\0';
  for (int k = 0; k < 2; k++) {
    if (!dirs[k]) continue;
    if ((size_t)snprintf(out, cap, "%s/%s", dirs[k], rel) < cap && access(out, R_OK) == 0) return TL_OK;
    tl_str_append(looked, sizeof(looked), &n, "%s%s/%s", n ? ", " : "", dirs[k], rel);
  }
  out[0] = '\0';
  return tl_error_set(err, TL_ERR_IO, NULL, 0, "urdf",
                      "task '%s': robot %s not found (looked in: %s; $TALUS_SHARED_ROBOTS is %s): set "
                      "TALUS_SHARED_ROBOTS to the shared robots folder or pass urdf=PATH",
                      o->task, rel, n ? looked : "nowhere", env && env[0] ? "set" : "unset");
}
