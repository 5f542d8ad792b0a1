/* Sweep settings (include/talus/sweep.h): tl_sweep_set, parameters and
 * their distributions, the CSV columns, the sweep's hash. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "talus/limits.h"
#include "sweep/sweep_internal.h"

#define SW_DEFAULT_DURATION 5.0
#define SW_DEFAULT_DT 1e-3
#define SW_DEFAULT_SAMPLES 100
#define SW_DEFAULT_FALL_TILT 1.0
#define SW_DEFAULT_GROUND_FRICTION 0.8
#define SW_DEFAULT_TERRAIN_SIZE 20.0
#define SW_DEFAULT_TERRAIN_SPACING 0.1
#define SW_DEFAULT_WORST 10
#define SW_MAX_SAMPLES 1000000000L

tl_status sw_error(tl_error *err, tl_status status, const char *file, int line, const char *element,
                   const char *fmt, ...) {
  if (!err) return status;
  char text[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  tl_error_set(err, status, file, line, NULL, "%s", text);
  snprintf(err->element, sizeof err->element, "%s", element ? element : "");
  return status;
}

const sw_param_info sw_param_infos[SW_P_NKIND] = {
    {"mass_scale", "", 0, INFINITY, 1, 1},
    {"base_mass_add", "kg", -INFINITY, INFINITY, 0, 0},
    {"com_offset", "m", -INFINITY, INFINITY, 0, 1},
    {"inertia_scale", "", 0, INFINITY, 1, 1},
    {"friction", "", 0, INFINITY, 0, 0},
    {"restitution", "", 0, 1, 0, 0},
    {"motor_strength", "", 0, INFINITY, 1, 2},
    {"kp_scale", "", 0, INFINITY, 0, 0},
    {"kd_scale", "", 0, INFINITY, 0, 0},
    {"joint_damping", "N m s/rad", 0, INFINITY, 0, 2},
    {"rotor_inertia_scale", "", 0, INFINITY, 0, 2},
    {"push", "N s", 0, INFINITY, 0, 0},
    {"terrain_roughness", "m", 0, INFINITY, 0, 0},
};

/* Settings kept as text for tl_sweep_get (index into sw->text). */
static const char *const text_keys[] = {"out", "summary", "plot", "threads", "robot", "controller", NULL};

static const char *const outcome_names[TL_SWEEP_NOUTCOME] = {
    "time_to_fall",      "mean_speed",      "distance",        "tracking_error", "contact_force_mean",
    "contact_force_max", "cost_of_transport", "max_penetration", "foot_slip",      "max_roll_pitch"};

const char *tl_sweep_outcome_name(int i) { return i >= 0 && i < TL_SWEEP_NOUTCOME ? outcome_names[i] : NULL; }

const char *tl_sweep_status_name(tl_sweep_status s) {
  switch (s) {
  case TL_SWEEP_OK: return "ok";
  case TL_SWEEP_FELL: return "fell";
  case TL_SWEEP_DIVERGED: return "diverged";
  case TL_SWEEP_ERROR: return "error";
  }
  return "?";
}

tl_sweep_options tl_sweep_options_default(void) {
  tl_sweep_options o;
  memset(&o, 0, sizeof o);
  o.duration = SW_DEFAULT_DURATION;
  o.dt = NAN;
  o.fall_height = NAN;
  o.fall_tilt = SW_DEFAULT_FALL_TILT;
  o.base = TL_BASE_AUTO;
  o.kp = NAN;
  o.kd = NAN;
  o.ground_friction = SW_DEFAULT_GROUND_FRICTION;
  o.terrain_size = SW_DEFAULT_TERRAIN_SIZE;
  o.terrain_spacing = SW_DEFAULT_TERRAIN_SPACING;
  o.worst = SW_DEFAULT_WORST;
  return o;
}

/* Set key to a number (17 significant digits: the double read back is the same). */
static tl_status set_number(tl_sweep *sw, const char *key, double v, tl_error *err) {
  char text[64];
  snprintf(text, sizeof text, "%.17g", v);
  return tl_sweep_set(sw, key, text, err);
}

/* The fields of opt that differ from the defaults, through tl_sweep_set. */
static tl_status apply_options(tl_sweep *sw, const tl_sweep_options *o, tl_error *err) {
  const tl_sweep_options d = tl_sweep_options_default();
  char text[64];
  tl_status st = TL_OK;
  if (o->robot) st = tl_sweep_set(sw, "robot", o->robot, err);
  if (!st && o->controller) st = tl_sweep_set(sw, "controller", o->controller, err);
  if (!st && o->duration != d.duration) st = set_number(sw, "duration", o->duration, err);
  if (!st && !isnan(o->dt)) st = set_number(sw, "dt", o->dt, err);
  if (!st && o->samples != d.samples) {
    snprintf(text, sizeof text, "%ld", o->samples);
    st = tl_sweep_set(sw, "samples", text, err);
  }
  if (!st && o->seed != d.seed) {
    snprintf(text, sizeof text, "%llu", (unsigned long long)o->seed);
    st = tl_sweep_set(sw, "seed", text, err);
  }
  if (!st && (o->nparam < 0 || (o->nparam > 0 && !o->params)))
    st = sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "nparam is %d: expected >= 0 with a params array", o->nparam);
  for (int i = 0; !st && i < o->nparam; i++)
    st = o->params[i] ? tl_sweep_set(sw, "param", o->params[i], err)
                      : sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "params[%d] is NULL", i);
  if (!st && !isnan(o->fall_height)) st = set_number(sw, "fall_height", o->fall_height, err);
  if (!st && o->fall_tilt != d.fall_tilt) st = set_number(sw, "fall_tilt", o->fall_tilt, err);
  if (!st && o->base != d.base)
    st = o->base == TL_BASE_FLOATING ? tl_sweep_set(sw, "base", "floating", err)
         : o->base == TL_BASE_FIXED  ? tl_sweep_set(sw, "base", "fixed", err)
                                     : sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "base", "base %d: expected auto, floating or fixed", (int)o->base);
  if (!st && !isnan(o->kp)) st = set_number(sw, "kp", o->kp, err);
  if (!st && !isnan(o->kd)) st = set_number(sw, "kd", o->kd, err);
  if (!st && o->ground_friction != d.ground_friction) st = set_number(sw, "ground_friction", o->ground_friction, err);
  if (!st && o->terrain_size != d.terrain_size) st = set_number(sw, "terrain_size", o->terrain_size, err);
  if (!st && o->terrain_spacing != d.terrain_spacing) st = set_number(sw, "terrain_spacing", o->terrain_spacing, err);
  if (!st && o->worst != d.worst) {
    snprintf(text, sizeof text, "%d", o->worst);
    st = tl_sweep_set(sw, "worst", text, err);
  }
  return st;
}

tl_status tl_sweep_create(const tl_sweep_options *opt, tl_sweep **out, tl_error *err) {
  if (!out) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  tl_sweep *sw = calloc(1, sizeof(*sw));
  if (!sw) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  sw->ctrl = tl_controller_spec_default();
  sw->duration = SW_DEFAULT_DURATION;
  sw->dt = SW_DEFAULT_DT;
  sw->samples = SW_DEFAULT_SAMPLES;
  sw->fall_height = NAN;
  sw->fall_tilt = SW_DEFAULT_FALL_TILT;
  sw->base = TL_BASE_AUTO;
  sw->ground_friction = SW_DEFAULT_GROUND_FRICTION;
  sw->terrain_size = SW_DEFAULT_TERRAIN_SIZE;
  sw->terrain_spacing = SW_DEFAULT_TERRAIN_SPACING;
  sw->worst = SW_DEFAULT_WORST;
  sw->grid_size = 1;
  tl_status st = sw_layout(sw, err);
  if (st == TL_OK && opt) st = apply_options(sw, opt, err);
  if (st != TL_OK) {
    tl_sweep_free(sw);
    return st;
  }
  *out = sw;
  return TL_OK;
}

void tl_sweep_free(tl_sweep *sw) {
  if (!sw) return;
  free(sw->robot);
  free(sw->q);
  for (int i = 0; i < sw->nvar; ++i) free(sw->var_name[i]);
  for (size_t i = 0; i < sizeof(sw->text) / sizeof(sw->text[0]); ++i) free(sw->text[i]);
  tl_model_free(sw->model);
  tl_rand_links_free(&sw->links);
  free(sw->effort);
  free(sw->lower);
  free(sw->upper);
  free(sw->rotor);
  free(sw->column);
  free(sw);
}

const char *sw_text(const tl_sweep *sw, const char *key) {
  for (int i = 0; text_keys[i]; ++i)
    if (strcmp(text_keys[i], key) == 0) return sw->text[i];
  return NULL;
}

const char *tl_sweep_get(const tl_sweep *sw, const char *key) { return sw && key ? sw_text(sw, key) : NULL; }

static tl_status keep_text(tl_sweep *sw, const char *key, const char *value, tl_error *err) {
  for (int i = 0; text_keys[i]; ++i)
    if (strcmp(text_keys[i], key) == 0) {
      char *copy = strdup(value);
      if (!copy) return sw_error(err, TL_ERR_MEMORY, NULL, 0, key, "out of memory");
      free(sw->text[i]);
      sw->text[i] = copy;
    }
  return TL_OK;
}

/* ------------------------------------------------------------ numbers */

/* Decimal only (talus/limits.h tl_limits_parse_number: the command line's and the files' one parser). */
static int parse_number(const char *text, double *out) {
  double v;
  if (tl_limits_parse_number(text, &v) != 0 || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static tl_status number_arg(const char *key, const char *value, double *out, tl_error *err) {
  if (parse_number(value, out) != 0)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "%s: '%s' is not a finite number", key, value);
  return TL_OK;
}

static tl_status positive_arg(const char *key, const char *value, double *out, tl_error *err) {
  double v = 0;
  tl_status st = number_arg(key, value, &v, err);
  if (st != TL_OK) return st;
  if (!(v > 0)) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "%s: must be > 0 (got %s)", key, value);
  *out = v;
  return TL_OK;
}

static tl_status integer_arg(const char *key, const char *value, long lo, long hi, long *out, tl_error *err) {
  char *end = NULL;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (end == value || *end != '\0' || errno || v < lo || v > hi)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "%s: '%s' is not an integer in [%ld, %ld]", key, value,
                        lo, hi);
  *out = v;
  return TL_OK;
}

/* ------------------------------------------------------------ distributions */

/* Split text at ':' into at most cap fields (modifies buf). */
static int split(char *buf, char sep, char **field, int cap) {
  int n = 0;
  char *p = buf;
  for (;;) {
    if (n == cap) return -1;
    field[n++] = p;
    char *c = strchr(p, sep);
    if (!c) break;
    *c = '\0';
    p = c + 1;
  }
  return n;
}

static tl_status dist_error(const char *name, const char *text, tl_error *err, const char *why) {
  return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, name, "parameter %s: distribution '%s': %s", name, text, why);
}

static tl_status parse_dist(const char *name, const char *text, sw_dist *d, tl_error *err) {
  memset(d, 0, sizeof(*d));
  if (strlen(text) >= sizeof(d->text)) return dist_error(name, text, err, "too long");
  snprintf(d->text, sizeof d->text, "%s", text);
  if (parse_number(text, &d->a) == 0) {
    d->kind = SW_DIST_CONST;
    return TL_OK;
  }
  char buf[sizeof d->text], *f[6];
  snprintf(buf, sizeof buf, "%s", text);
  int n = split(buf, ':', f, 6);
  const char *usage = "expected a number, uniform:LO:HI, normal:MEAN:STD, loguniform:LO:HI, choice:A,B,... or "
                      "grid:LO:HI:N";
  if (n < 2) return dist_error(name, text, err, usage);
  if (strcmp(f[0], "choice") == 0) {
    if (n != 2) return dist_error(name, text, err, "expected choice:A,B,C");
    char *c[SW_MAX_CHOICES + 1];
    int k = split(f[1], ',', c, SW_MAX_CHOICES + 1);
    if (k < 1 || k > SW_MAX_CHOICES) return dist_error(name, text, err, "expected 1 to 64 comma-separated numbers");
    for (int i = 0; i < k; ++i)
      if (parse_number(c[i], &d->choice[i]) != 0) {
        char why[200];
        snprintf(why, sizeof why, "'%.100s' is not a finite number", c[i]);
        return dist_error(name, text, err, why);
      }
    d->kind = SW_DIST_CHOICE;
    d->n = k;
    return TL_OK;
  }
  int want = strcmp(f[0], "grid") == 0 ? 4 : 3;
  if (strcmp(f[0], "uniform") == 0) d->kind = SW_DIST_UNIFORM;
  else if (strcmp(f[0], "normal") == 0) d->kind = SW_DIST_NORMAL;
  else if (strcmp(f[0], "loguniform") == 0) d->kind = SW_DIST_LOGUNIFORM;
  else if (strcmp(f[0], "grid") == 0) d->kind = SW_DIST_GRID;
  else return dist_error(name, text, err, usage);
  if (n != want) return dist_error(name, text, err, want == 4 ? "expected grid:LO:HI:N" : usage);
  for (int i = 1; i < 3; ++i)
    if (parse_number(f[i], i == 1 ? &d->a : &d->b) != 0) {
      char why[200];
      snprintf(why, sizeof why, "'%.100s' is not a finite number", f[i]);
      return dist_error(name, text, err, why);
    }
  if (d->kind == SW_DIST_GRID) {
    char *end = NULL;
    long k = strtol(f[3], &end, 10);
    if (end == f[3] || *end || k < 1 || k > 1000000) return dist_error(name, text, err, "N must be an integer in [1, 1000000]");
    d->n = (int)k;
  }
  if (d->kind == SW_DIST_NORMAL && !(d->b >= 0)) return dist_error(name, text, err, "STD must be >= 0");
  if (d->kind != SW_DIST_NORMAL && !(d->a <= d->b)) return dist_error(name, text, err, "LO must be <= HI");
  if (d->kind == SW_DIST_LOGUNIFORM && !(d->a > 0)) return dist_error(name, text, err, "LO must be > 0");
  return TL_OK;
}

static int valid_value(const sw_param_info *pi, double v) {
  if (!isfinite(v)) return 0;
  if (pi->lo_open ? !(v > pi->lo) : !(v >= pi->lo)) return 0;
  return v <= pi->hi;
}

/* "must be > 0", "must be in [0, 1]", ... */
static void range_text(const sw_param_info *pi, char *buf, size_t cap) {
  if (isinf(pi->lo) && isinf(pi->hi)) snprintf(buf, cap, "must be finite");
  else if (isinf(pi->hi)) snprintf(buf, cap, "must be %s %g", pi->lo_open ? ">" : ">=", pi->lo);
  else snprintf(buf, cap, "must be in %s%g, %g]", pi->lo_open ? "(" : "[", pi->lo, pi->hi);
}

int sw_check_values(const tl_sweep *sw, const double *values, char *msg, int cap) {
  for (int p = 0; p < sw->nparam; ++p) {
    const sw_param *P = &sw->param[p];
    const sw_param_info *pi = &sw_param_infos[P->kind];
    int n = P->kind == SW_P_PUSH ? 1 : P->ncol; /* push_time / push_angle are always in range */
    for (int c = 0; c < n; ++c) {
      double v = values[P->col + c];
      if (valid_value(pi, v)) continue;
      char r[64];
      range_text(pi, r, sizeof r);
      snprintf(msg, (size_t)cap, "%s = %.17g drawn from %s: %s %s", sw->column[3 + P->col + c], v, P->dist.text,
               pi->name, r);
      return -1;
    }
  }
  return 0;
}

/* Every value the distribution can give is valid (normal: its mean). */
static tl_status check_support(const char *name, const sw_param_info *pi, const sw_dist *d, tl_error *err) {
  double bad = NAN;
  switch (d->kind) {
  case SW_DIST_CONST: if (!valid_value(pi, d->a)) bad = d->a; break;
  case SW_DIST_NORMAL: if (!valid_value(pi, d->a)) bad = d->a; break;
  case SW_DIST_CHOICE:
    for (int i = 0; i < d->n && isnan(bad); ++i)
      if (!valid_value(pi, d->choice[i])) bad = d->choice[i];
    break;
  default:
    if (!valid_value(pi, d->a)) bad = d->a;
    else if (!valid_value(pi, d->b)) bad = d->b;
  }
  if (isnan(bad)) return TL_OK;
  char r[64];
  range_text(pi, r, sizeof r);
  return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, name, "parameter %s: %s %s, and %s %s %g", name, pi->name, r,
                      d->text, d->kind == SW_DIST_NORMAL ? "has its mean at" : "reaches", bad);
}

/* ------------------------------------------------------------ parameters */

static tl_status parse_param_name(const char *name, sw_param *P, tl_error *err) {
  memset(P, 0, sizeof(*P));
  P->axis = -1;
  P->link = -1;
  if (strlen(name) >= sizeof P->name || !name[0])
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "parameter name '%.100s' is empty or too long", name);
  snprintf(P->name, sizeof P->name, "%s", name);
  char base[SW_NAME_LEN];
  snprintf(base, sizeof base, "%s", name);
  char *at = strchr(base, '@');
  if (at) {
    *at = '\0';
    snprintf(P->target, sizeof P->target, "%s", at + 1);
    if (!P->target[0] || strchr(P->target, ','))
      return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, name, "parameter %s: a link or joint name must follow '@'", name);
  }
  size_t len = strlen(base);
  if (len > 2 && strncmp(base, "com_offset_", 11) == 0 && len == 12 && base[11] >= 'x' && base[11] <= 'z') {
    P->axis = base[11] - 'x';
    base[10] = '\0';
  }
  for (int k = 0; k < SW_P_NKIND; ++k)
    if (strcmp(base, sw_param_infos[k].name) == 0) {
      P->kind = (sw_param_kind)k;
      if (at && !sw_param_infos[k].target)
        return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, name, "parameter %s: %s has no per-link or per-joint form",
                            name, base);
      return TL_OK;
    }
  char known[600];
  size_t n = 0;
  known[0] = '\0';
  for (int k = 0; k < SW_P_NKIND; ++k) tl_str_append(known, sizeof known, &n, "%s%s", k ? ", " : "", sw_param_infos[k].name);
  return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, name, "unknown parameter '%s' (known: %s; com_offset_x/_y/_z; "
                      "@LINK or @JOINT forms: see docs/sweeps.md)", name, known);
}

/* "NAME=DIST" */
static tl_status set_param(tl_sweep *sw, const char *value, tl_error *err) {
  const char *eq = strchr(value, '=');
  if (!eq || eq == value || !eq[1])
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "param: '%s' is not NAME=DISTRIBUTION", value);
  char name[SW_NAME_LEN];
  if ((size_t)(eq - value) >= sizeof name)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "param: name of '%.100s...' too long", value);
  memcpy(name, value, (size_t)(eq - value));
  name[eq - value] = '\0';
  sw_param P;
  tl_status st = parse_param_name(name, &P, err);
  if (st == TL_OK) st = parse_dist(name, eq + 1, &P.dist, err);
  if (st == TL_OK) st = check_support(name, &sw_param_infos[P.kind], &P.dist, err);
  if (st != TL_OK) return st;
  for (int i = 0; i < sw->nparam; ++i)
    if (strcmp(sw->param[i].name, name) == 0) { /* given again: replaces */
      P.slot = i;
      sw_param old = sw->param[i];
      sw->param[i] = P;
      st = sw_layout(sw, err);
      if (st != TL_OK) {
        sw->param[i] = old;
        sw_layout(sw, NULL);
      }
      return st;
    }
  if (sw->nparam >= SW_MAX_PARAMS)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "more than %d parameters", SW_MAX_PARAMS);
  P.slot = sw->nparam;
  sw->param[sw->nparam++] = P;
  st = sw_layout(sw, err);
  if (st != TL_OK) {
    sw->nparam--;
    sw_layout(sw, NULL);
  }
  return st;
}

static tl_status add_column(tl_sweep *sw, int *n, int cap, const char *fmt, const char *a, const char *b,
                            tl_error *err) {
  if (*n >= cap) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "too many columns");
  char name[SW_NAME_LEN];
  snprintf(name, sizeof name, fmt, a, b);
  for (int i = 0; i < *n; ++i)
    if (strcmp(sw->column[i], name) == 0)
      return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "param", "column '%s' would be given twice (by '%s')", name,
                          a);
  snprintf(sw->column[(*n)++], SW_NAME_LEN, "%s", name);
  return TL_OK;
}

tl_status sw_layout(tl_sweep *sw, tl_error *err) {
  int cap = 3 + 3 * sw->nparam + 1 + TL_SWEEP_NOUTCOME + 1;
  free(sw->column);
  sw->column = calloc((size_t)cap, SW_NAME_LEN);
  if (!sw->column) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  int n = 0;
  tl_status st = TL_OK;
  static const char *const fixed[] = {"sample", "seed", "spec"};
  for (int i = 0; i < 3; ++i) snprintf(sw->column[n++], SW_NAME_LEN, "%s", fixed[i]);
  sw->grid_size = 1;
  sw->all_grid = 0;
  int random = 0;
  for (int p = sw->nparam - 1; p >= 0; --p) { /* the last grid parameter varies fastest */
    sw_param *P = &sw->param[p];
    if (P->dist.kind != SW_DIST_GRID) {
      random |= P->dist.kind != SW_DIST_CONST;
      continue;
    }
    sw->all_grid = 1;
    P->grid_stride = (int)sw->grid_size;
    if (sw->grid_size > SW_MAX_SAMPLES / P->dist.n)
      return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, P->name, "the grid has more than %ld points", SW_MAX_SAMPLES);
    sw->grid_size *= P->dist.n;
  }
  if (random) sw->all_grid = 0; /* grids and constants only: the full factorial */
  for (int p = 0; p < sw->nparam && st == TL_OK; ++p) {
    sw_param *P = &sw->param[p];
    P->col = n - 3;
    const char *at = P->target[0] ? "@" : "";
    char suffix[140];
    snprintf(suffix, sizeof suffix, "%s%s", at, P->target);
    if (P->kind == SW_P_COM_OFFSET && P->axis < 0) {
      st = add_column(sw, &n, cap, "%s%s", "com_offset_x", suffix, err);
      if (st == TL_OK) st = add_column(sw, &n, cap, "%s%s", "com_offset_y", suffix, err);
      if (st == TL_OK) st = add_column(sw, &n, cap, "%s%s", "com_offset_z", suffix, err);
    } else if (P->kind == SW_P_PUSH) {
      st = add_column(sw, &n, cap, "%s%s", "push", "", err);
      if (st == TL_OK) st = add_column(sw, &n, cap, "%s%s", "push_time", "", err);
      if (st == TL_OK) st = add_column(sw, &n, cap, "%s%s", "push_angle", "", err);
    } else {
      st = add_column(sw, &n, cap, "%s%s", P->name, "", err);
    }
    P->ncol = n - 3 - P->col;
  }
  if (st != TL_OK) return st;
  sw->nparam_column = n - 3;
  snprintf(sw->column[n++], SW_NAME_LEN, "status");
  for (int i = 0; i < TL_SWEEP_NOUTCOME; ++i) snprintf(sw->column[n++], SW_NAME_LEN, "%s", outcome_names[i]);
  snprintf(sw->column[n++], SW_NAME_LEN, "message");
  sw->ncolumn = n;
  return TL_OK;
}

/* ------------------------------------------------------------ settings */

static tl_status set_string(char **slot, const char *value, tl_error *err) {
  char *copy = strdup(value);
  if (!copy) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  free(*slot);
  *slot = copy;
  return TL_OK;
}

static tl_status set_var(tl_sweep *sw, const char *value, tl_error *err) {
  const char *eq = strchr(value, '=');
  if (!eq || eq == value) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "var", "var: '%s' is not NAME=VALUE", value);
  double v;
  if (parse_number(eq + 1, &v) != 0)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "var", "var: '%s': the value is not a finite number", value);
  char *name = strndup(value, (size_t)(eq - value));
  if (!name) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int i = 0; i < sw->nvar; ++i)
    if (strcmp(sw->var_name[i], name) == 0) { /* given again: replaces */
      free(name);
      sw->var_value[i] = v;
      return TL_OK;
    }
  if (sw->nvar >= SW_MAX_VARS) {
    free(name);
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "var", "more than %d vars", SW_MAX_VARS);
  }
  sw->var_name[sw->nvar] = name;
  sw->var_value[sw->nvar++] = v;
  return TL_OK;
}

static tl_status set_q(tl_sweep *sw, const char *value, tl_error *err) {
  int cap = 1;
  for (const char *p = value; *p; ++p) cap += *p == ',';
  double *q = calloc((size_t)cap, sizeof(double));
  if (!q) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  char *buf = strdup(value), **f = calloc((size_t)cap, sizeof(char *));
  int n = buf && f ? split(buf, ',', f, cap) : -1;
  tl_status st = n < 1 ? sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory") : TL_OK;
  for (int i = 0; i < n && st == TL_OK; ++i)
    if (parse_number(f[i], &q[i]) != 0)
      st = sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "q", "q: value %d '%s' is not a finite number", i + 1, f[i]);
  free(buf);
  free(f);
  if (st != TL_OK) {
    free(q);
    return st;
  }
  free(sw->q);
  sw->q = q;
  sw->nq_given = n;
  return TL_OK;
}

tl_status tl_sweep_set(tl_sweep *sw, const char *key_in, const char *value, tl_error *err) {
  if (!sw || !key_in || !value) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "key", "sw, key and value must not be NULL");
  if (sw->prepared) return sw_error(err, TL_ERR_INVALID, NULL, 0, key_in, "the sweep is prepared: settings are frozen");
  char key[64];
  if (strlen(key_in) >= sizeof key) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "key", "unknown setting '%.100s'", key_in);
  for (size_t i = 0; i <= strlen(key_in); ++i) key[i] = key_in[i] == '-' ? '_' : key_in[i];
  tl_status st = keep_text(sw, key, value, err);
  if (st != TL_OK) return st;
  long n = 0;
  double v = 0;
  if (strcmp(key, "robot") == 0) return set_string(&sw->robot, value, err);
  if (strcmp(key, "controller") == 0) {
    sw->ctrl_given = 1;
    return tl_controller_spec_parse(value, &sw->ctrl, err);
  }
  if (strcmp(key, "duration") == 0) return positive_arg(key, value, &sw->duration, err);
  if (strcmp(key, "dt") == 0) {
    sw->dt_given = 1;
    st = positive_arg(key, value, &sw->dt, err);
    return st == TL_OK ? tl_limits_check_timestep(sw->dt, err) : st; /* the one rule for dt (talus/limits.h) */
  }
  if (strcmp(key, "samples") == 0) {
    st = integer_arg(key, value, 1, SW_MAX_SAMPLES, &n, err);
    if (st == TL_OK) sw->samples = n, sw->samples_given = 1;
    return st;
  }
  if (strcmp(key, "seed") == 0) {
    char *end = NULL;
    errno = 0;
    unsigned long long s = strtoull(value, &end, 10);
    if (end == value || *end || errno || value[0] == '-')
      return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "seed: '%s' is not an unsigned 64-bit integer", value);
    sw->seed = (uint64_t)s;
    return TL_OK;
  }
  if (strcmp(key, "param") == 0) return set_param(sw, value, err);
  if (strcmp(key, "fall_height") == 0) {
    if (strcmp(value, "auto") == 0) return sw->fall_height = NAN, TL_OK;
    return number_arg(key, value, &sw->fall_height, err);
  }
  if (strcmp(key, "fall_tilt") == 0) return positive_arg(key, value, &sw->fall_tilt, err);
  if (strcmp(key, "base") == 0) {
    if (strcmp(value, "auto") == 0) sw->base = TL_BASE_AUTO;
    else if (strcmp(value, "floating") == 0) sw->base = TL_BASE_FLOATING;
    else if (strcmp(value, "fixed") == 0) sw->base = TL_BASE_FIXED;
    else return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "base: '%s' is not auto, floating or fixed", value);
    return TL_OK;
  }
  if (strcmp(key, "q") == 0) return set_q(sw, value, err);
  if (strcmp(key, "var") == 0) return set_var(sw, value, err);
  if (strcmp(key, "kp") == 0 || strcmp(key, "kd") == 0) {
    st = number_arg(key, value, &v, err);
    if (st == TL_OK && v < 0) st = sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "%s: must be >= 0 (got %s)", key, value);
    if (st != TL_OK) return st;
    if (key[1] == 'p') sw->ctrl.kp = v, sw->ctrl.kp_given = 1;
    else sw->ctrl.kd = v, sw->ctrl.kd_given = 1;
    return TL_OK;
  }
  if (strcmp(key, "ground_friction") == 0) {
    st = number_arg(key, value, &v, err);
    if (st == TL_OK && v < 0) st = sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key, "%s: must be >= 0 (got %s)", key, value);
    if (st == TL_OK) sw->ground_friction = v;
    return st;
  }
  if (strcmp(key, "terrain_size") == 0) return positive_arg(key, value, &sw->terrain_size, err);
  if (strcmp(key, "terrain_spacing") == 0) return positive_arg(key, value, &sw->terrain_spacing, err);
  if (strcmp(key, "worst") == 0) {
    st = integer_arg(key, value, 0, 1000000, &n, err);
    if (st == TL_OK) sw->worst = (int)n;
    return st;
  }
  if (strcmp(key, "threads") == 0) return integer_arg(key, value, 0, 4096, &n, err);
  if (strcmp(key, "out") == 0 || strcmp(key, "summary") == 0 || strcmp(key, "plot") == 0) return TL_OK;
  return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, key_in,
                      "unknown setting '%s' (robot, controller, duration, dt, samples, seed, param, fall_height, "
                      "fall_tilt, base, q, var, kp, kd, ground_friction, terrain_size, terrain_spacing, worst, out, "
                      "summary, plot, threads)", key_in);
}

/* ------------------------------------------------------------ hash */

/* FNV-1a, 64 bits (Fowler, Noll, Vo). */
uint64_t sw_fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

#define fnv sw_fnv
static uint64_t fnv_text(uint64_t h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static uint64_t fnv_text(uint64_t h, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return fnv(h, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

tl_status sw_compute_hash(tl_sweep *sw, tl_error *err) {
  (void)err;
  /* every file the nominal build read (robot or world file, the URDFs and heightmaps it names, the
   * collision meshes): sw->files_hash, gathered by tl_sweep_prepare */
  uint64_t h = fnv(0xcbf29ce484222325ull, "talus-sweep-2\n", 14);
  h = fnv(h, &sw->files_hash, sizeof sw->files_hash);
  char ctrl[2048];
  tl_controller_spec_format(&sw->ctrl, ctrl, sizeof ctrl);
  h = fnv_text(h, "\ncontroller=%s given=%d kp=%d:%.17g kd=%d:%.17g\n", ctrl, sw->ctrl_given, sw->ctrl.kp_given,
               sw->ctrl.kp, sw->ctrl.kd_given, sw->ctrl.kd);
  h = fnv_text(h, "duration=%.17g dt=%d:%.17g seed=%llu\n", sw->duration, sw->dt_given, sw->dt,
               (unsigned long long)sw->seed);
  for (int p = 0; p < sw->nparam; ++p) { /* the parsed distribution: "1" and "1.0" are the same sweep */
    const sw_dist *d = &sw->param[p].dist;
    h = fnv_text(h, "param %s=%d:%.17g:%.17g:%d", sw->param[p].name, (int)d->kind, d->a, d->b, d->n);
    for (int i = 0; d->kind == SW_DIST_CHOICE && i < d->n; ++i) h = fnv_text(h, ",%.17g", d->choice[i]);
    h = fnv(h, "\n", 1);
  }
  h = fnv_text(h, "fall=%.17g,%.17g base=%d ground=%.17g terrain=%.17g,%.17g\n", sw->fall_height, sw->fall_tilt,
               (int)sw->base, sw->ground_friction, sw->terrain_size, sw->terrain_spacing);
  for (int i = 0; i < sw->nq_given; ++i) h = fnv_text(h, "q%.17g\n", sw->q[i]);
  for (int i = 0; i < sw->nvar; ++i) h = fnv_text(h, "var %s=%.17g\n", sw->var_name[i], sw->var_value[i]);
  sw->hash = h;
  return TL_OK;
}

/* ------------------------------------------------------------ accessors */

long tl_sweep_nsample(const tl_sweep *sw) { return sw->samples; }
uint64_t tl_sweep_seed(const tl_sweep *sw) { return sw->seed; }
uint64_t tl_sweep_hash(const tl_sweep *sw) { return sw->hash; }
int tl_sweep_ncolumn(const tl_sweep *sw) { return sw->ncolumn; }
const char *tl_sweep_column(const tl_sweep *sw, int i) { return i >= 0 && i < sw->ncolumn ? sw->column[i] : NULL; }
int tl_sweep_nparam_column(const tl_sweep *sw) { return sw->nparam_column; }
const char *tl_sweep_param_column(const tl_sweep *sw, int i) {
  return i >= 0 && i < sw->nparam_column ? sw->column[3 + i] : NULL;
}
