/* Loop constraints as part of the world's description (talus/constraint.h):
 * their declaration checked and resolved to bodies (tl_world_add_constraint),
 * their read-back (position and angle errors at the current state, the last
 * step's wrench). The engines build their rows from w->constraints. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "talus/engine.h"
#include "world/world_internal.h"

tl_constraint_def tl_constraint_def_default(void) {
  tl_constraint_def d;
  memset(&d, 0, sizeof(d));
  d.type = TL_CONSTRAINT_BALL;
  d.system2 = -1;
  d.axis[2] = 1.0;
  d.distance = NAN;
  d.min = NAN;
  d.max = NAN;
  return d;
}

int tl_world_nconstraint(const tl_world *w) { return w ? w->nconstraint : 0; }

int tl_world_constraint_index(const tl_world *w, const char *name) {
  if (!w || !name) return -1;
  for (int k = 0; k < w->nconstraint; k++)
    if (strcmp(w->constraints[k].name, name) == 0) return k;
  return -1;
}

static tl_status bad(tl_error *err, const char *field, const char *msg) {
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, field, "constraint: %s %s", field, msg);
}

/* Resolve link `link` of system s to a body and the link frame's pose in
 * that body's frame (identity for a body's own link; a merged fixed link's
 * frame otherwise). -1 if there is no such link. */
static int resolve_link(const tl_model *m, const char *link, double pos[3], double rot[9]) {
  tl_v3_set(pos, 0, 0, 0);
  tl_m3_identity(rot);
  for (int b = 0; b < m->nbody; b++)
    if (strcmp(m->body_name[b], link) == 0) return b;
  for (int f = 0; f < m->nframe; f++)
    if (strcmp(m->frame_link[f], link) == 0) {
      tl_v3_copy(pos, m->frame_pos + 3 * f);
      tl_m3_copy(rot, m->frame_rot + 9 * f);
      return m->frame_body[f];
    }
  return -1;
}

static int finite_n(const double *a, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

/* Check the numbers of a declaration (not the bodies). */
static tl_status check_numbers(const tl_constraint_def *d, tl_error *err) {
  if (d->type < TL_CONSTRAINT_BALL || d->type > TL_CONSTRAINT_DISTANCE) return bad(err, "type", "is not ball, hinge, weld or distance");
  if (!finite_n(d->point1, 3)) return bad(err, "point1", "must be finite");
  if (!finite_n(d->point2, 3)) return bad(err, "point2", "must be finite");
  if (!finite_n(d->rpy1, 3)) return bad(err, "rpy1", "must be finite");
  if (!finite_n(d->rpy2, 3)) return bad(err, "rpy2", "must be finite");
  if (d->type == TL_CONSTRAINT_HINGE && !(finite_n(d->axis, 3) && tl_v3_norm(d->axis) > 1e-12))
    return bad(err, "axis", "must be finite and nonzero");
  if (!(isfinite(d->erp) && d->erp >= 0 && d->erp <= 1)) return bad(err, "erp", "must lie in [0, 1]");
  if (!(isfinite(d->cfm) && d->cfm >= 0)) return bad(err, "cfm", "must be finite and >= 0");
  if (d->type != TL_CONSTRAINT_DISTANCE) return TL_OK;
  if (!isnan(d->distance) && !(isfinite(d->distance) && d->distance >= 0)) return bad(err, "distance", "must be finite and >= 0");
  if (isinf(d->min) || (!isnan(d->min) && d->min < 0)) return bad(err, "min", "must be finite and >= 0 (NAN: no lower bound)");
  if (isinf(d->max) || (!isnan(d->max) && !(d->max > 0))) return bad(err, "max", "must be finite and > 0 (NAN: no upper bound)");
  if (!isnan(d->min) && !isnan(d->max) && d->min > d->max) return bad(err, "min", "must not exceed max");
  return TL_OK;
}

/* World position of a point given in body b of system s (b = -1: the world). */
static void point_world(tl_world *w, int s, int b, const double p[3], double out[3]) {
  if (s < 0) {
    tl_v3_copy(out, p);
    return;
  }
  tl_system *sys = w->systems[s];
  tl_system_update_kinematics(sys);
  tl_m3_mulv(out, sys->d.xrot + 9 * b, p);
  tl_v3_add(out, out, sys->d.xpos + 3 * b);
}

/* World rotation of a frame given in body b of system s. */
static void rot_world(tl_world *w, int s, int b, const double R[9], double out[9]) {
  if (s < 0) {
    tl_m3_copy(out, R);
    return;
  }
  tl_system *sys = w->systems[s];
  tl_system_update_kinematics(sys);
  tl_m3_mul(out, sys->d.xrot + 9 * b, R);
}

/* Resolve body `i` (0, 1) of the declaration into c. */
static tl_status resolve_body(tl_world *w, const tl_constraint_def *d, int i, tl_constraint *c, tl_error *err) {
  const char *field = i ? "body2" : "body1";
  const char *link = i ? d->body2 : d->body1;
  int s = i ? (d->system2 < 0 ? d->system1 : d->system2) : d->system1;
  const double *p = i ? d->point2 : d->point1, *rpy = i ? d->rpy2 : d->rpy1;
  double R[9], lpos[3], lrot[9];
  tl_m3_from_rpy(R, rpy);
  if (i == 1 && (!link || strcmp(link, "world") == 0)) { /* the world frame */
    c->sys[1] = c->body[1] = -1;
    tl_v3_copy(c->pos[1], p);
    tl_m3_copy(c->rot[1], R);
    return TL_OK;
  }
  if (!link || !link[0]) return bad(err, field, "must name a link");
  if (s < 0 || s >= w->nsystem)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, i ? "system2" : "system1",
                        "constraint: no system %d (the world has %d)", s, w->nsystem);
  const tl_model *m = w->systems[s]->m;
  int b = resolve_link(m, link, lpos, lrot);
  if (b < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, field, "constraint: %s: no link '%s' in system '%s'", field,
                        link, m->name);
  c->sys[i] = s;
  c->body[i] = b;
  tl_m3_mulv(c->pos[i], lrot, p); /* link frame -> body frame */
  tl_v3_add(c->pos[i], c->pos[i], lpos);
  tl_m3_mul(c->rot[i], lrot, R);
  return TL_OK;
}

/* The distance bounds of a distance constraint, the rigid length taken
 * from the current state when not given. */
static void distance_bounds(tl_world *w, const tl_constraint_def *d, tl_constraint *c) {
  if (isnan(d->min) && isnan(d->max)) {
    double len = d->distance;
    if (isnan(len)) {
      double p1[3], p2[3], r[3];
      point_world(w, c->sys[0], c->body[0], c->pos[0], p1);
      point_world(w, c->sys[1], c->body[1], c->pos[1], p2);
      tl_v3_sub(r, p1, p2);
      len = tl_v3_norm(r);
    }
    c->lo = c->hi = len;
    return;
  }
  c->lo = isnan(d->min) ? -INFINITY : d->min;
  c->hi = isnan(d->max) ? INFINITY : d->max;
}

static tl_status fill(tl_world *w, const tl_constraint_def *d, tl_constraint *c, tl_error *err) {
  tl_status st = check_numbers(d, err);
  if (!st) st = resolve_body(w, d, 0, c, err);
  if (!st) st = resolve_body(w, d, 1, c, err);
  if (st) return st;
  for (int i = 0; i < 2; i++)
    if (c->sys[i] >= 0 && w->systems[c->sys[i]]->integrator == TL_INTEGRATOR_RK4)
      return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, i ? "system2" : "system1",
                          "constraint: system '%s' uses the RK4 integrator: loop constraints are solved on the "
                          "Euler step only", w->systems[c->sys[i]]->m->name);
  if (c->sys[0] == c->sys[1] && c->body[0] == c->body[1])
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "body2",
                        "constraint: body1 '%s' and body2 '%s' are the same body of system '%s': a body cannot "
                        "be constrained to itself", d->body1, d->body2, w->systems[c->sys[0]]->m->name);
  c->type = d->type;
  c->erp = d->erp;
  c->cfm = d->cfm;
  if (d->type == TL_CONSTRAINT_HINGE) { /* same coordinates in frame 1 and frame 2 */
    double a[3], af[3];
    tl_v3_copy(a, d->axis);
    tl_v3_normalize(a);
    double lpos[3], lrot[9]; /* the axis is given in body 1's link frame */
    resolve_link(w->systems[c->sys[0]]->m, d->body1, lpos, lrot);
    tl_m3_mulv(c->axis[0], lrot, a);
    tl_m3_tmulv(af, c->rot[0], c->axis[0]);
    tl_m3_mulv(c->axis[1], c->rot[1], af);
  }
  if (d->type == TL_CONSTRAINT_DISTANCE) distance_bounds(w, d, c);
  return TL_OK;
}

tl_status tl_world_add_constraint(tl_world *w, const tl_constraint_def *d, int *index, tl_error *err) {
  if (!w || !d) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, w ? "def" : "world", "must not be NULL");
  if (d->name && strlen(d->name) >= sizeof(((tl_constraint *)0)->name)) return bad(err, "name", "is longer than 63 bytes");
  if (d->name && d->name[0] && tl_world_constraint_index(w, d->name) >= 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "name", "constraint: name '%s' is already used", d->name);
  if (w->nconstraint >= TL_CONSTRAINT_MAX)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "constraint", "a world holds at most %d constraints",
                        TL_CONSTRAINT_MAX);
  tl_constraint c;
  memset(&c, 0, sizeof(c));
  tl_status st = fill(w, d, &c, err);
  if (!st) st = w->engine->check_feature(w, TL_ENGINE_CONSTRAINTS, err);
  if (st) return st;
  if (d->name && d->name[0])
    strcpy(c.name, d->name);
  else
    snprintf(c.name, sizeof(c.name), "constraint%d", w->nconstraint);
  if (w->nconstraint == w->cap_constraint) {
    int cap = w->cap_constraint ? 2 * w->cap_constraint : 4;
    tl_constraint *grown = realloc(w->constraints, (size_t)cap * sizeof(*grown));
    if (!grown) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    w->constraints = grown;
    w->cap_constraint = cap;
  }
  w->constraints[w->nconstraint++] = c;
  st = w->engine->objects_changed(w, err);
  if (st) { /* nothing half-built */
    w->nconstraint--;
    return st;
  }
  if (index) *index = w->nconstraint - 1;
  return TL_OK;
}

static int constraint_nrow(const tl_constraint *c) {
  switch (c->type) {
  case TL_CONSTRAINT_BALL: return 3;
  case TL_CONSTRAINT_HINGE: return 5;
  case TL_CONSTRAINT_WELD: return 6;
  default: return c->lo == c->hi || !isfinite(c->lo) || !isfinite(c->hi) ? 1 : 2;
  }
}

/* Angle between unit vectors a and b (atan2: accurate near 0 and pi). */
static double angle_between(const double a[3], const double b[3]) {
  double x[3];
  tl_v3_cross(x, a, b);
  return atan2(tl_v3_norm(x), tl_v3_dot(a, b));
}

/* Position and angle errors of c at the systems' current state. */
static void constraint_errors(tl_world *w, const tl_constraint *c, double *pos_err, double *ang_err) {
  double p1[3], p2[3], r[3];
  point_world(w, c->sys[0], c->body[0], c->pos[0], p1);
  point_world(w, c->sys[1], c->body[1], c->pos[1], p2);
  tl_v3_sub(r, p1, p2);
  double len = tl_v3_norm(r);
  *pos_err = len;
  *ang_err = 0;
  if (c->type == TL_CONSTRAINT_DISTANCE) {
    *pos_err = len < c->lo ? c->lo - len : len > c->hi ? len - c->hi : 0;
  } else if (c->type == TL_CONSTRAINT_HINGE) {
    double R1[9], R2[9], a1[3], a2[3];
    rot_world(w, c->sys[0], c->body[0], (const double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, R1);
    rot_world(w, c->sys[1], c->body[1], (const double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, R2);
    tl_m3_mulv(a1, R1, c->axis[0]);
    tl_m3_mulv(a2, R2, c->axis[1]);
    *ang_err = angle_between(a1, a2);
  } else if (c->type == TL_CONSTRAINT_WELD) {
    double R1[9], R2[9], Rr[9];
    rot_world(w, c->sys[0], c->body[0], c->rot[0], R1);
    rot_world(w, c->sys[1], c->body[1], c->rot[1], R2);
    tl_m3_tmul(Rr, R1, R2); /* R1^T R2 */
    double ct = 0.5 * (Rr[0] + Rr[4] + Rr[8] - 1.0);
    double v[3] = {Rr[7] - Rr[5], Rr[2] - Rr[6], Rr[3] - Rr[1]};
    *ang_err = atan2(0.5 * tl_v3_norm(v), ct);
  }
}

tl_status tl_world_constraint(const tl_world *cw, int k, tl_constraint_info *out, tl_error *err) {
  if (!cw || !out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, cw ? "out" : "world", "must not be NULL");
  if (k < 0 || k >= cw->nconstraint)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "k", "constraint index %d out of range [0, %d)", k,
                        cw->nconstraint);
  tl_world *w = (tl_world *)(void *)(uintptr_t)cw; /* the lazy kinematics caches only */
  const tl_constraint *c = w->constraints + k;
  memset(out, 0, sizeof(*out));
  strcpy(out->name, c->name);
  out->type = c->type;
  out->nrow = constraint_nrow(c);
  out->system1 = c->sys[0], out->body1 = c->body[0];
  out->system2 = c->sys[1], out->body2 = c->body[1];
  tl_v3_copy(out->pos1, c->pos[0]);
  tl_v3_copy(out->pos2, c->pos[1]);
  constraint_errors(w, c, &out->position_error, &out->angle_error);
  tl_v3_copy(out->force, c->force);
  tl_v3_copy(out->torque, c->torque);
  return TL_OK;
}
