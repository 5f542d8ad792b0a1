/* Tunable parameters of the running controllers (controller.h,
 * tl_controller_params / tl_controller_set_param): what the live view's
 * sliders change while the simulation runs. No allocation. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "controller.h"

#define GAIN_SCALE_MIN 0.05
#define GAIN_SCALE_MAX 4.0
#define TROT_SPEED_MIN -1.0
#define TROT_SPEED_MAX 1.5
#define TROT_LATERAL_MAX 0.5
#define TROT_YAW_RATE_MAX 1.0
#define OSC_CENTER_SPAN 0.5
#define OSC_RADIUS_MAX 0.3
#define CTRL_PI 3.14159265358979323846

static tl_status fail(tl_error *err, const char *fmt, ...) {
  if (!err) return TL_ERR_ARGUMENT;
  char msg[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "controller", "%s", msg);
}

/* Appends while there is room; counts always. */
typedef struct lister {
  tl_controller_tunable *out;
  int max, n;
} lister;

static void add(lister *l, const char *name, const char *unit, double lo, double hi, double value) {
  if (l->n < l->max) {
    tl_controller_tunable *t = &l->out[l->n];
    size_t nn = strlen(name) < sizeof t->name ? strlen(name) : sizeof t->name - 1;
    memcpy(t->name, name, nn);
    t->name[nn] = '\0';
    snprintf(t->unit, sizeof t->unit, "%s", unit);
    t->min = lo, t->max = hi;
    t->value = value < lo ? lo : value > hi ? hi : value;
  }
  l->n++;
}

/* The scalar joints (revolute, continuous, prismatic) whose name fits "target:NAME". */
static int scalar_joint(const tl_model *m, int b, double *lo, double *hi, const char **unit) {
  tl_joint_type t = tl_model_joint_type(m, b);
  if (t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC) return 0;
  const char *name = tl_model_joint_name(m, b);
  if (!name || strlen(name) + 7 >= sizeof(((tl_controller_tunable *)0)->name)) return 0;
  double l = -INFINITY, h = INFINITY;
  tl_model_dof_limits(m, tl_model_joint_u_index(m, b), &l, &h, NULL);
  int prismatic = t == TL_JOINT_PRISMATIC;
  *lo = isfinite(l) ? l : prismatic ? -1.0 : -CTRL_PI;
  *hi = isfinite(h) ? h : prismatic ? 1.0 : CTRL_PI;
  *unit = prismatic ? "m" : "rad";
  return *lo < *hi;
}

static void list_targets(lister *l, const tl_model *m, const double *q) {
  for (int b = 1; b < tl_model_nbody(m); ++b) {
    double lo, hi;
    const char *unit;
    if (!scalar_joint(m, b, &lo, &hi, &unit)) continue;
    char name[64];
    snprintf(name, sizeof name, "target:%s", tl_model_joint_name(m, b));
    add(l, name, unit, lo, hi, q[tl_model_joint_q_index(m, b)]);
  }
}

int tl_controller_params(const tl_controller *c, tl_controller_tunable *out, int max) {
  lister l = {out, out ? max : 0, 0};
  if (!c || !c->active) return 0;
  switch (c->kind) {
  case TL_CONTROLLER_STAND:
    add(&l, "gain_scale", "", GAIN_SCALE_MIN, GAIN_SCALE_MAX, c->gain_scale);
    list_targets(&l, tl_system_model(c->stand.sys), c->stand.q_target);
    break;
  case TL_CONTROLLER_TROT:
    add(&l, "speed", "m/s", TROT_SPEED_MIN, TROT_SPEED_MAX, c->trot.p.speed);
    add(&l, "lateral", "m/s", -TROT_LATERAL_MAX, TROT_LATERAL_MAX, c->trot.lateral_cmd);
    add(&l, "yaw_rate", "rad/s", -TROT_YAW_RATE_MAX, TROT_YAW_RATE_MAX, c->trot.yaw_rate_cmd);
    add(&l, "gain_scale", "", GAIN_SCALE_MIN, GAIN_SCALE_MAX, c->gain_scale);
    break;
  case TL_CONTROLLER_IMPEDANCE:
    add(&l, "gain_scale", "", GAIN_SCALE_MIN, GAIN_SCALE_MAX, c->gain_scale);
    list_targets(&l, tl_system_model(c->imp.sys), c->imp.q_d);
    break;
  case TL_CONTROLLER_OSC: {
    static const char *axis[3] = {"center_x", "center_y", "center_z"};
    for (int i = 0; i < 3; ++i)
      add(&l, axis[i], "m", c->center0[i] - OSC_CENTER_SPAN, c->center0[i] + OSC_CENTER_SPAN, c->circle.center[i]);
    add(&l, "radius", "m", 0.0, OSC_RADIUS_MAX, c->circle.radius);
    break;
  }
  case TL_CONTROLLER_MPC: /* nothing tunable while it runs */
  case TL_CONTROLLER_NONE: break;
  }
  return l.n;
}

/* Gains of every DOF times ratio (kp, kd arrays of nv), applied to the system. */
static tl_status scale_gains(tl_system *sys, double *kp, double *kd, int nv, double ratio, tl_error *err) {
  for (int k = 0; k < nv; ++k) kp[k] *= ratio, kd[k] *= ratio;
  return tl_system_set_pd_gains(sys, kp, kd, nv, err);
}

static tl_status set_gain_scale(tl_controller *c, double value, tl_error *err) {
  double r = value / c->gain_scale;
  tl_status st = TL_OK;
  switch (c->kind) {
  case TL_CONTROLLER_STAND:
    c->stand.kp_value *= r, c->stand.kd_value *= r;
    st = scale_gains(c->stand.sys, c->stand.kp, c->stand.kd, c->stand.nv, r, err);
    break;
  case TL_CONTROLLER_TROT:
    c->trot.p.kp *= r, c->trot.p.kd *= r;
    st = scale_gains(c->trot.sys, c->trot.kp, c->trot.kd, c->trot.nv, r, err);
    break;
  case TL_CONTROLLER_IMPEDANCE:
    /* K and D in place: tl_impedance_set_gains copies from its arguments, the same arrays */
    for (int k = 0; k < c->imp.nv; ++k) c->imp.K[k] *= r, c->imp.D[k] *= r;
    st = tl_impedance_set_gains(&c->imp, c->imp.K, c->imp.D, c->imp.nv, err);
    break;
  default: break;
  }
  if (st == TL_OK) c->gain_scale = value;
  return st;
}

/* "target:JOINT": q index of that scalar joint, -1 if none. */
static int target_index(const tl_model *m, const char *name) {
  if (strncmp(name, "target:", 7) != 0) return -1;
  for (int b = 1; b < tl_model_nbody(m); ++b) {
    const char *j = tl_model_joint_name(m, b);
    double lo, hi;
    const char *unit;
    if (j && strcmp(j, name + 7) == 0 && scalar_joint(m, b, &lo, &hi, &unit)) return tl_model_joint_q_index(m, b);
  }
  return -1;
}

tl_status tl_controller_set_param(tl_controller *c, const char *name, double value, tl_error *err) {
  if (!c || !c->active || !name) return fail(err, "no running controller to set a parameter of");
  tl_controller_tunable t[128];
  int n = tl_controller_params(c, t, 128);
  const tl_controller_tunable *p = NULL;
  for (int i = 0; i < n && i < 128 && !p; ++i)
    if (strcmp(t[i].name, name) == 0) p = &t[i];
  if (!p) return fail(err, "%s controller: no tunable parameter '%.60s'", tl_controller_kind_name(c->kind), name);
  if (!isfinite(value) || value < p->min || value > p->max)
    return fail(err, "%s controller: %s = %g is outside %g .. %g", tl_controller_kind_name(c->kind), name, value,
                p->min, p->max);
  if (strcmp(name, "gain_scale") == 0) return set_gain_scale(c, value, err);
  switch (c->kind) {
  case TL_CONTROLLER_STAND: {
    c->stand.q_target[target_index(tl_system_model(c->stand.sys), name)] = value;
    return tl_stand_update(&c->stand, err);
  }
  case TL_CONTROLLER_TROT:
    if (strcmp(name, "lateral") == 0) return tl_trot_set_command(&c->trot, value, c->trot.yaw_rate_cmd, err);
    if (strcmp(name, "yaw_rate") == 0) return tl_trot_set_command(&c->trot, c->trot.lateral_cmd, value, err);
    return tl_trot_set_speed(&c->trot, value, err);
  case TL_CONTROLLER_IMPEDANCE:
    c->imp.q_d[target_index(tl_system_model(c->imp.sys), name)] = value;
    return TL_OK;
  case TL_CONTROLLER_OSC:
    if (strcmp(name, "radius") == 0)
      c->circle.radius = value;
    else
      c->circle.center[name[7] - 'x'] = value;
    return TL_OK;
  default: return fail(err, "no tunable parameter '%.60s'", name);
  }
}
