/* The one validator per quantity (talus/limits.h). */
#include "talus/limits.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>

#include "base/error.h"

tl_status tl_limits_check_timestep(double dt, tl_error *err) {
  if (!(dt >= TL_DT_MIN && dt <= TL_DT_MAX))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "dt", "time step %g s: expected a number from %g to %g s", dt,
                        TL_DT_MIN, TL_DT_MAX);
  return TL_OK;
}

tl_status tl_limits_steps_for_duration(double duration, double dt, long long *steps, tl_error *err) {
  tl_status st = tl_limits_check_timestep(dt, err);
  if (st) return st;
  if (!(duration >= 0) || !isfinite(duration))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "duration", "duration %g s: expected a finite number >= 0",
                        duration);
  double n = duration / dt;
  if (!(n <= (double)TL_MAX_STEPS))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "duration",
                        "duration %g s / time step %g s = %.3g steps: at most %.0e steps", duration, dt, n,
                        (double)TL_MAX_STEPS);
  *steps = llround(n);
  return TL_OK;
}

tl_status tl_limits_grid_points(double size, double spacing, int max_points, const char *what, int *n, tl_error *err) {
  if (!what) what = "grid";
  if (!(size > 0) || !isfinite(size) || !(spacing > 0) || !isfinite(spacing))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s: size %g m and spacing %g m must be finite and > 0",
                        what, size, spacing);
  double points = round(size / spacing) + 1;
  if (!(points >= 2 && points <= (double)max_points))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what,
                        "%s: size %g m / spacing %g m gives %.17g grid points per side: expected 2 to %d", what, size,
                        spacing, points, max_points);
  *n = (int)points;
  return TL_OK;
}

int tl_limits_parse_number(const char *text, double *out) {
  if (!text) return -1;
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  const char *s = p;
  if (*s == '+' || *s == '-') s++;
  int digits = 0;
  while (isdigit((unsigned char)*s)) s++, digits++;
  if (*s == '.') {
    s++;
    while (isdigit((unsigned char)*s)) s++, digits++;
  }
  if (!digits) return -1; /* "inf", "nan", "0x..." has a digit: caught below */
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return -1;
    while (isdigit((unsigned char)*s)) s++;
  }
  const char *end = s;
  while (isspace((unsigned char)*end)) end++;
  if (*end) return -1; /* "0x50" stops at 'x' */
  char *stop = NULL;
  double v = strtod(p, &stop);
  if (stop != s) return -1;
  *out = v;
  return 0;
}
