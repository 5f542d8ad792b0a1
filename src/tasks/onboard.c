/* Robot onboarding (issue 25 §5, talus/onboard.h): leaf bodies (feet), the
 * support-polygon margin, the "urdf" task's creation warnings (the default
 * pose cannot stand, a non-foot body touches the ground at reset, a floating
 * robot that looks like an arm) and the standing-pose search by damped
 * least-squares inverse kinematics. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_dense.h"
#include "math/tl_math.h"
#include "talus/onboard.h"
#include "tasks/task_internal.h"

#define SUPPORT_TOL 0.01 /* m: a geom point this close to the lowest point of the robot touches the ground */
#define CYL_SAMPLES 16

int tl_model_leaf_bodies(const tl_model *m, int *bodies, int cap) {
  int nb = m ? tl_model_nbody(m) : 0, n = 0;
  for (int b = 1; b < nb; b++) {
    int leaf = 1;
    for (int c = b + 1; c < nb && leaf; c++)
      if (tl_model_body_parent(m, c) == b) leaf = 0;
    if (!leaf) continue;
    if (bodies && n < cap) bodies[n] = b;
    n++;
  }
  return n;
}

/* ---------------- support polygon ---------------- */

static double cross2(const double *o, const double *a, const double *b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

static int cmp_xy(const void *pa, const void *pb) {
  const double *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}

static double seg_dist(const double *a, const double *b, const double *p) {
  double dx = b[0] - a[0], dy = b[1] - a[1], L2 = dx * dx + dy * dy;
  double t = L2 > 0 ? ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / L2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy);
}

double tl_support_margin(const double *xy, int n, const double p[2]) {
  if (n <= 0 || !xy) return -INFINITY;
  double *pts = malloc(sizeof(double) * 2 * (size_t)n), *hull = malloc(sizeof(double) * 2 * (size_t)(2 * n + 1));
  if (!pts || !hull) {
    free(pts);
    free(hull);
    return -INFINITY;
  }
  memcpy(pts, xy, sizeof(double) * 2 * (size_t)n);
  qsort(pts, (size_t)n, 2 * sizeof(double), cmp_xy);
  int k = 0;
  for (int i = 0; i < n; i++) { /* lower hull */
    while (k >= 2 && cross2(hull + 2 * (k - 2), hull + 2 * (k - 1), pts + 2 * i) <= 0) k--;
    hull[2 * k] = pts[2 * i], hull[2 * k + 1] = pts[2 * i + 1], k++;
  }
  for (int i = n - 2, lo = k + 1; i >= 0; i--) { /* upper hull */
    while (k >= lo && cross2(hull + 2 * (k - 2), hull + 2 * (k - 1), pts + 2 * i) <= 0) k--;
    hull[2 * k] = pts[2 * i], hull[2 * k + 1] = pts[2 * i + 1], k++;
  }
  if (k > 1) k--; /* the last point repeats the first */
  double area = 0;
  for (int i = 0; i < k; i++) area += cross2(hull, hull + 2 * i, hull + 2 * ((i + 1) % k));
  area *= 0.5;
  double dmin = INFINITY;
  int inside = k >= 3 && area > 1e-8;
  if (k == 1) dmin = hypot(p[0] - hull[0], p[1] - hull[1]);
  for (int i = 0; i < k && k >= 2; i++) {
    const double *a = hull + 2 * i, *b = hull + 2 * ((i + 1) % k);
    dmin = fmin(dmin, seg_dist(a, b, p));
    if (cross2(a, b, p) < 0) inside = 0; /* counter-clockwise hull: p right of an edge is outside */
  }
  free(pts);
  free(hull);
  return inside ? dmin : -dmin;
}

/* ---------------- geometry samples ---------------- */

/* Points (world) of collision geom g that can touch a plane below it:
 * sphere its lowest point, box its corners, capsule the lowest points of its
 * end spheres, cylinder its rims (CYL_SAMPLES each), mesh its hull vertices.
 * Returns the count written into pts (at most cap), -1 when the geom has no
 * usable geometry. */
static int geom_points(tl_system *sys, const tl_model *m, int g, double *pts, int cap) {
  tl_geom_type type;
  double size[3], pos[3], R[9];
  if (tl_model_geom(m, g, &type, NULL, size, NULL, NULL, NULL) || tl_system_geom_pose(sys, g, pos, R, NULL)) return -1;
  int n = 0;
#define PUT(lx, ly, lz)                                                  \
  do {                                                                   \
    if (n < cap) {                                                       \
      double l_[3] = {(lx), (ly), (lz)}, w_[3];                          \
      tl_m3_mulv(w_, R, l_);                                             \
      for (int a_ = 0; a_ < 3; a_++) pts[3 * n + a_] = pos[a_] + w_[a_]; \
      n++;                                                               \
    }                                                                    \
  } while (0)
  switch (type) {
    case TL_GEOM_SPHERE:
      if (n < cap) pts[0] = pos[0], pts[1] = pos[1], pts[2] = pos[2] - size[0], n = 1;
      break;
    case TL_GEOM_BOX:
      for (int c = 0; c < 8; c++)
        PUT((c & 1 ? 0.5 : -0.5) * size[0], (c & 2 ? 0.5 : -0.5) * size[1], (c & 4 ? 0.5 : -0.5) * size[2]);
      break;
    case TL_GEOM_CAPSULE:
      for (int e = 0; e < 2; e++) {
        PUT(0, 0, (e ? 0.5 : -0.5) * size[1]);
        if (n) pts[3 * (n - 1) + 2] -= size[0];
      }
      break;
    case TL_GEOM_CYLINDER:
      for (int e = 0; e < 2; e++)
        for (int s = 0; s < CYL_SAMPLES; s++) {
          double a = 6.283185307179586 * s / CYL_SAMPLES;
          PUT(size[0] * cos(a), size[0] * sin(a), (e ? 0.5 : -0.5) * size[1]);
        }
      break;
    case TL_GEOM_MESH: {
      int nv = 0;
      const double *v = NULL;
      if (tl_model_geom_hull(m, g, &nv, &v, NULL, NULL, NULL)) return -1;
      for (int i = 0; i < nv; i++) PUT(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
      break;
    }
    default:
      return -1;
  }
#undef PUT
  return n;
}

static int geom_npoints(const tl_model *m, int g) {
  tl_geom_type type;
  if (tl_model_geom(m, g, &type, NULL, NULL, NULL, NULL, NULL)) return 0;
  if (type == TL_GEOM_MESH) {
    int nv = 0;
    return tl_model_geom_hull(m, g, &nv, NULL, NULL, NULL, NULL) ? 0 : nv;
  }
  return type == TL_GEOM_CYLINDER ? 2 * CYL_SAMPLES : 8;
}

static void body_point(tl_system *sys, int b, const double p[3], double out[3]);

/* ---------------- the urdf task's creation warnings ---------------- */

void tl_vecenv_add_warning(tl_vecenv *v, const char *kind, const char *fmt, ...) {
  if (v->nwarning >= TL_VECENV_MAX_WARNINGS) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->warnings[v->nwarning], sizeof(v->warnings[0]), fmt, ap);
  va_end(ap);
  snprintf(v->warning_kinds[v->nwarning], sizeof(v->warning_kinds[0]), "%s", kind);
  v->nwarning++;
}

static int is_leaf(const tl_model *m, int b) {
  if (b == 0) return 0;
  for (int c = b + 1; c < tl_model_nbody(m); c++)
    if (tl_model_body_parent(m, c) == b) return 0;
  return 1;
}

static const char *root_link(const tl_model *m) {
  const char *s = tl_model_body_name(m, 0);
  return s ? s : "?";
}

void tl_vecenv_add_model_warnings(tl_vecenv *v, const tl_model *m) {
  for (int i = 0; i < tl_model_nwarning(m) && tl_model_warning(m, i); i++)
    tl_vecenv_add_warning(v, "urdf", "%s", tl_model_warning(m, i));
}

tl_status tl_onboard_check(tl_vecenv *v, const tl_model *m, tl_system *sys, const double *q0, int nq,
                           double drop_height, int ground, tl_error *err) {
  if (tl_model_joint_type(m, 0) != TL_JOINT_FLOATING) return TL_OK;
  /* (c) an arm: a floating base with a single chain (at most one child body) below it */
  int nchild = 0;
  for (int b = 1; b < tl_model_nbody(m); b++) nchild += tl_model_body_parent(m, b) == 0;
  if (nchild <= 1) {
    tl_vecenv_add_warning(v, "fixed_base",
                          "robot '%s' has a floating base (its root link '%s' is not 'world') but looks like an arm "
                          "(%d chain%s below the root, no legs): it will fall over. Fix: base=fixed welds the root "
                          "to the world (or add a 'world' link and a fixed joint to it in the URDF)",
                          tl_model_name(m), root_link(m), nchild, nchild == 1 ? "" : "s");
    return TL_OK;
  }
  if (!ground) return TL_OK;
  /* the nominal reset pose: the default pose, no noise, lowest point on the ground */
  int ngeom = tl_model_ngeom(m), cap = 0;
  for (int g = 0; g < ngeom; g++) cap += geom_npoints(m, g);
  if (cap == 0) return TL_OK;
  double *q = malloc(sizeof(double) * (size_t)nq), *pts = malloc(sizeof(double) * 3 * (size_t)cap);
  double *xy = malloc(sizeof(double) * 2 * (size_t)cap);
  int *body = malloc(sizeof(int) * (size_t)cap), *geom = malloc(sizeof(int) * (size_t)cap);
  if (!q || !pts || !xy || !body || !geom) {
    free(q), free(pts), free(xy), free(body), free(geom);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  memcpy(q, q0, sizeof(double) * (size_t)nq);
  for (int b = 1; b < tl_model_nbody(m); b++) /* as the reset: scalar joints clamped to their limits */
    if (tl_joint_nv(tl_model_joint_type(m, b)) == 1) {
      double lo, hi;
      int k = tl_model_joint_q_index(m, b);
      tl_model_dof_limits(m, tl_model_joint_u_index(m, b), &lo, &hi, NULL);
      q[k] = fmin(fmax(q[k], lo), hi);
    }
  tl_status st = tl_system_set_state(sys, q, nq, NULL, 0, err);
  int n = 0;
  double zmin = INFINITY;
  for (int g = 0; !st && g < ngeom; g++) {
    int b = -1;
    tl_model_geom(m, g, NULL, &b, NULL, NULL, NULL, NULL);
    int k = geom_points(sys, m, g, pts + 3 * n, cap - n);
    for (int i = 0; i < k; i++) body[n + i] = b, geom[n + i] = g, zmin = fmin(zmin, pts[3 * (n + i) + 2]);
    n += k > 0 ? k : 0;
  }
  double com[3] = {0, 0, 0};
  if (!st) st = tl_system_com(sys, com, err);
  if (!st && n > 0) {
    int nfoot = 0, feet_bodies = 0, other = -1;
    char feet[256] = "";
    for (int i = 0; i < n; i++) {
      if (pts[3 * i + 2] > zmin + SUPPORT_TOL) continue;
      /* a foot point: on a leaf body, of its foot geom or near its foot point (a shin or knee on the
       * ground is not a foot) */
      int foot = is_leaf(m, body[i]);
      if (foot) {
        double fp[3], fr, fw[3];
        int fg = tl_task_foot_geom(m, body[i], fp, &fr);
        body_point(sys, body[i], fp, fw);
        double d[3] = {pts[3 * i] - fw[0], pts[3 * i + 1] - fw[1], pts[3 * i + 2] - fw[2]};
        foot = geom[i] == fg || tl_v3_norm(d) <= 2 * fr + 0.02;
      }
      if (foot) {
        xy[2 * nfoot] = pts[3 * i], xy[2 * nfoot + 1] = pts[3 * i + 1], nfoot++;
        if (!strstr(feet, tl_model_body_name(m, body[i])) && strlen(feet) < 200) {
          if (feet_bodies++) strcat(feet, ", ");
          strncat(feet, tl_model_body_name(m, body[i]), 40);
        }
      } else if (other < 0 || body[i] == 0) {
        other = body[i];
      }
    }
    double margin = tl_support_margin(xy, nfoot, com);
    if (other >= 0)
      tl_vecenv_add_warning(
          v, "ground_contact",
          "at reset (default pose, lowest point %g m above the ground) the %s '%s' touches the ground (a point of "
          "it within 1 cm of the robot's lowest point), not only the feet: the episode starts %s. Fix: default_joint_pos=... with the legs under the body "
          "(talus.find_standing_pose(urdf) computes one), or base=fixed to hang the robot",
          drop_height, other == 0 ? "base link" : "non-foot link", tl_model_body_name(m, other),
          other == 0 ? "in a base contact, which terminates it" : "lying on that link");
    if (feet_bodies == 0)
      tl_vecenv_add_warning(
          v, "cannot_stand",
          "the default pose cannot stand: no foot (leaf link) touches the ground, the centre of mass is at (%.3f, "
          "%.3f) m. Fix: default_joint_pos=... with the feet under the hips (talus.find_standing_pose(urdf) "
          "computes one), or base=fixed",
          com[0], com[1]);
    else if (!(margin > 0))
      tl_vecenv_add_warning(
          v, "cannot_stand",
          "the default pose cannot stand: the centre of mass (%.3f, %.3f) m is %s the support polygon of the %d "
          "feet touching the ground (%s) by %.3f m. Fix: default_joint_pos=... with the feet under the "
          "hips (talus.find_standing_pose(urdf) computes one), or base=fixed",
          com[0], com[1], margin < 0 ? "outside" : "on the edge of", feet_bodies,
          feet_bodies ? feet : "none", isfinite(margin) ? -margin : INFINITY);
  }
  free(q), free(pts), free(xy), free(body), free(geom);
  return st;
}

/* ---------------- standing pose ---------------- */

void tl_standing_options_default(tl_standing_options *o) {
  memset(o, 0, sizeof(*o));
  o->height = NAN;
  o->height_fraction = 0.7;
  o->max_iter = 200;
  o->tolerance = 1e-5;
  o->damping = 1e-2;
}

typedef struct leg {
  int body;          /* the foot body */
  double p[3], r;    /* foot point (body frame) and radius */
  int geom;          /* the foot's collision geom (-1: none) */
  int hip_body;      /* the body whose joint origin is the hip */
  double target[3];
  double length;     /* sum of the segment lengths from the leg's first joint to the foot point */
  int pitch[3], npitch; /* the first three DOFs (from the base) whose axis is near the base's y axis */
  int flat;          /* 1: keep the foot's tilt of the reference pose (a flat foot on a leg of >= 5 joints) */
  double Rref[9];    /* the foot body's rotation at the reference pose, base level */
} leg;

#define TILT_WEIGHT 0.1 /* m per rad: a flat foot's tilt error counts as this much position error */

int tl_task_foot_geom(const tl_model *m, int b, double p[3], double *r) {
  double best = -1;
  int foot = -1;
  p[0] = p[1] = p[2] = 0;
  *r = 0;
  for (int g = 0; g < tl_model_ngeom(m); g++) {
    tl_geom_type type;
    int gb;
    double size[3], pos[3], R[9];
    if (tl_model_geom(m, g, &type, &gb, size, pos, R, NULL) || gb != b) continue;
    double c[3] = {pos[0], pos[1], pos[2]}, rad = 0;
    if (type == TL_GEOM_SPHERE) rad = size[0];
    else if (type == TL_GEOM_CAPSULE || type == TL_GEOM_CYLINDER) rad = size[0];
    else if (type == TL_GEOM_BOX) rad = 0.5 * fmin(size[0], fmin(size[1], size[2]));
    else if (type == TL_GEOM_MESH) {
      int nv = 0;
      const double *v = NULL;
      if (tl_model_geom_hull(m, g, &nv, &v, NULL, NULL, NULL) || nv == 0) continue;
      double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, mid[3], w[3];
      for (int i = 0; i < nv; i++)
        for (int a = 0; a < 3; a++) lo[a] = fmin(lo[a], v[3 * i + a]), hi[a] = fmax(hi[a], v[3 * i + a]);
      for (int a = 0; a < 3; a++) mid[a] = 0.5 * (lo[a] + hi[a]);
      rad = 0.5 * fmin(hi[0] - lo[0], fmin(hi[1] - lo[1], hi[2] - lo[2]));
      tl_m3_mulv(w, R, mid);
      for (int a = 0; a < 3; a++) c[a] += w[a];
    } else continue;
    double d = tl_v3_norm(c);
    if (d > best) best = d, memcpy(p, c, sizeof(c)), *r = rad, foot = g;
  }
  return foot;
}

static void body_point(tl_system *sys, int b, const double p[3], double out[3]) {
  double pos[3], R[9], w[3];
  tl_system_body_pose(sys, b, pos, R, NULL);
  tl_m3_mulv(w, R, p);
  for (int a = 0; a < 3; a++) out[a] = pos[a] + w[a];
}

typedef struct ik {
  tl_system *sys;
  const tl_model *m;
  int floating, nq, nv, nj, nleg, j0; /* j0: first joint DOF (6 floating, 0 fixed) */
  leg *legs;
  int *qi;                            /* [nv]: q index of DOF d (joint DOFs only) */
  double *lo, *hi;                    /* [nv] */
  double *J, *Jsel, *A, *g, *r;       /* scratch */
} ik;

static void set_base(ik *s, double *q, double h) {
  if (s->floating) {
    q[0] = 0, q[1] = 0, q[2] = h, q[3] = 1, q[4] = q[5] = q[6] = 0;
    tl_system_set_state(s->sys, q, s->nq, NULL, 0, NULL);
  } else {
    double pos[3] = {0, 0, h}, R[9];
    tl_m3_identity(R);
    tl_system_set_state(s->sys, q, s->nq, NULL, 0, NULL);
    tl_system_set_base_pose(s->sys, pos, R, NULL);
  }
}

/* Residual rows, 5 per leg: target - foot point (m), then for a flat foot TILT_WEIGHT times the x, y
 * of the rotation vector from the foot's rotation to its reference one (0.5 sum_i R e_i x Rref e_i,
 * world frame; 0 for other feet). Returns the largest foot position error; *all the largest row
 * norm of either kind. */
static double residual(ik *s, double *r, double *all) {
  double worst = 0, tilt = 0;
  for (int l = 0; l < s->nleg; l++) {
    const leg *L = &s->legs[l];
    double x[3], pos[3], R[9], e[3] = {0, 0, 0};
    body_point(s->sys, L->body, L->p, x);
    for (int a = 0; a < 3; a++) r[5 * l + a] = L->target[a] - x[a];
    worst = fmax(worst, tl_v3_norm(r + 5 * l));
    if (L->flat) {
      tl_system_body_pose(s->sys, L->body, pos, R, NULL);
      for (int i = 0; i < 3; i++) {
        double c[3] = {R[i], R[3 + i], R[6 + i]}, d[3] = {L->Rref[i], L->Rref[3 + i], L->Rref[6 + i]}, x3[3];
        tl_v3_cross(x3, c, d);
        for (int a = 0; a < 3; a++) e[a] += 0.5 * x3[a];
      }
    }
    r[5 * l + 3] = TILT_WEIGHT * e[0];
    r[5 * l + 4] = TILT_WEIGHT * e[1];
    tilt = fmax(tilt, hypot(r[5 * l + 3], r[5 * l + 4]));
  }
  *all = fmax(worst, tilt);
  return worst;
}

/* Gauss-Newton / Levenberg-Marquardt from q (in place). Returns the residual; *iters the iterations. */
static double solve_ik(ik *s, double *q, double h, const tl_standing_options *o, int *iters) {
  int nr = 5 * s->nleg, nj = s->nj, nv = s->nv;
  double lam2 = o->damping * o->damping, res = INFINITY, all = INFINITY;
  double *Jr = s->J + (size_t)nr * nv; /* 3 x nv scratch */
  int it = 0;
  for (;; it++) {
    set_base(s, q, h);
    res = residual(s, s->r, &all);
    if (all < o->tolerance || it >= o->max_iter) break;
    for (int l = 0; l < s->nleg; l++) {
      double x[3], *rows = s->J + (size_t)5 * l * nv;
      body_point(s->sys, s->legs[l].body, s->legs[l].p, x);
      tl_system_point_jacobian(s->sys, s->legs[l].body, x, rows, Jr, nv, NULL);
      for (int c = 0; c < 2 * nv; c++) rows[3 * nv + c] = s->legs[l].flat ? TILT_WEIGHT * Jr[c] : 0.0;
    }
    for (int i = 0; i < nr; i++)
      for (int j = 0; j < nj; j++) s->Jsel[i * nj + j] = s->J[i * nv + s->j0 + j];
    for (int a = 0; a < nj; a++) {
      double gsum = 0;
      for (int i = 0; i < nr; i++) gsum += s->Jsel[i * nj + a] * s->r[i];
      s->g[a] = gsum;
      for (int b = 0; b <= a; b++) {
        double sum = 0;
        for (int i = 0; i < nr; i++) sum += s->Jsel[i * nj + a] * s->Jsel[i * nj + b];
        s->A[a * nj + b] = s->A[b * nj + a] = sum + (a == b ? lam2 : 0);
      }
    }
    /* the damped normal equations (symmetric positive definite): the one Cholesky module */
    if (tl_dense_cholesky_cm(nj, s->A, 0.0)) break;
    tl_dense_cholesky_cm_solve(nj, s->A, s->g);
    double big = 0;
    for (int j = 0; j < nj; j++) big = fmax(big, fabs(s->g[j]));
    double scale = big > 0.5 ? 0.5 / big : 1.0;
    for (int j = 0; j < nj; j++) {
      int d = s->j0 + j, k = s->qi[d];
      double x = q[k] + scale * s->g[j];
      q[k] = fmin(fmax(x, s->lo[d]), s->hi[d]);
    }
  }
  *iters = it;
  return res;
}

static tl_status ik_setup(ik *s, const tl_standing_options *o, tl_error *err) {
  const tl_model *m = s->m;
  int nb = tl_model_nbody(m);
  int *feet = malloc(sizeof(int) * (size_t)(nb + 1));
  if (!feet) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  int nf = 0;
  if (o->feet && o->nfeet > 0) {
    for (int i = 0; i < o->nfeet; i++) {
      int b = o->feet[i] ? tl_model_body_index(m, o->feet[i]) : -1;
      if (b <= 0) {
        free(feet);
        return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "feet",
                            "feet[%d] = '%s' is not a link of robot '%s' below its base", i,
                            o->feet[i] ? o->feet[i] : "(null)", tl_model_name(m));
      }
      feet[nf++] = b;
    }
  } else {
    /* the leaf bodies whose foot point hangs in the lowest quarter of the depth below the base at
     * the reference pose (a humanoid's feet, not its hands) */
    int nl = tl_model_leaf_bodies(m, feet, nb);
    double *qr = calloc((size_t)s->nq, sizeof(double)), *z = calloc((size_t)nl + 1, sizeof(double)), zmin = 0;
    if (!qr || !z) {
      free(qr), free(z), free(feet);
      return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    }
    tl_model_reference_q(m, qr, s->nq, NULL);
    set_base(s, qr, 0.0);
    for (int i = 0; i < nl; i++) {
      double p[3], r, x[3];
      tl_task_foot_geom(m, feet[i], p, &r);
      body_point(s->sys, feet[i], p, x);
      z[i] = x[2];
      zmin = fmin(zmin, z[i]);
    }
    for (int i = 0; i < nl; i++)
      if (z[i] <= 0.75 * zmin || zmin == 0) feet[nf++] = feet[i];
    free(qr), free(z);
  }
  if (nf == 0) {
    free(feet);
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "feet", "robot '%s' has no feet (no body below its base)",
                        tl_model_name(m));
  }
  s->nleg = nf;
  s->legs = calloc((size_t)nf, sizeof(leg));
  if (!s->legs) {
    free(feet);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  for (int l = 0; l < nf; l++) {
    s->legs[l].body = feet[l];
    s->legs[l].geom = tl_task_foot_geom(m, feet[l], s->legs[l].p, &s->legs[l].r);
  }
  free(feet);
  return TL_OK;
}

/* Hips and leg lengths at the current (reference) configuration, base at the origin. */
static void ik_legs(ik *s) {
  const tl_model *m = s->m;
  double *Jr = s->J; /* 3 x nv scratch */
  for (int l = 0; l < s->nleg; l++) {
    leg *L = &s->legs[l];
    int chain[256], n = 0;
    for (int b = L->body; b > 0 && n < 256; b = tl_model_body_parent(m, b)) chain[n++] = b;
    /* chain[n - 1] is the leg's first body; the hip: the first joint (from the base) with axis near y */
    L->hip_body = chain[n - 1];
    double y = 0;
    L->npitch = 0;
    for (int i = n - 1; i >= 0; i--) {
      int b = chain[i];
      if (tl_joint_nv(tl_model_joint_type(m, b)) != 1) continue;
      double o[3], R[9];
      tl_system_body_pose(s->sys, b, o, R, NULL);
      tl_system_point_jacobian(s->sys, b, o, NULL, Jr, s->nv, NULL);
      int d = tl_model_joint_u_index(m, b);
      double ay = fabs(Jr[1 * s->nv + d]);
      if (!(ay > 0.7)) continue;
      if (L->npitch == 0 && ay > y) y = ay, L->hip_body = b;
      if (L->npitch < 3) L->pitch[L->npitch++] = d;
    }
    double prev[3], R[9], foot[3];
    tl_system_body_pose(s->sys, chain[n - 1], prev, R, NULL);
    L->length = 0;
    for (int i = n - 2; i >= 0; i--) {
      double o[3];
      tl_system_body_pose(s->sys, chain[i], o, R, NULL);
      double d[3] = {o[0] - prev[0], o[1] - prev[1], o[2] - prev[2]};
      L->length += tl_v3_norm(d);
      memcpy(prev, o, sizeof(o));
    }
    body_point(s->sys, L->body, L->p, foot);
    double d[3] = {foot[0] - prev[0], foot[1] - prev[1], foot[2] - prev[2]};
    L->length += tl_v3_norm(d);
    double o[3];
    tl_system_body_pose(s->sys, L->body, o, L->Rref, NULL);
    tl_geom_type type = TL_GEOM_SPHERE;
    if (L->geom >= 0) tl_model_geom(m, L->geom, &type, NULL, NULL, NULL, NULL, NULL);
    L->flat = n >= 5 && type != TL_GEOM_SPHERE && type != TL_GEOM_CAPSULE;
  }
}

static void ik_targets(ik *s) {
  for (int l = 0; l < s->nleg; l++) {
    leg *L = &s->legs[l];
    double o[3], R[9];
    tl_system_body_pose(s->sys, L->hip_body, o, R, NULL); /* base at the origin, level */
    L->target[0] = o[0];
    L->target[1] = o[1];
    L->target[2] = L->r; /* the foot point one radius above the ground: the foot touches z = 0 */
  }
}

tl_status tl_find_standing_pose(const tl_model *m, const tl_standing_options *opt, double *q, int nq,
                                tl_standing_result *res, tl_error *err) {
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if (!q || nq != tl_model_nq(m))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "q", "q must have nq = %d values, got %d", tl_model_nq(m), nq);
  tl_standing_options def;
  tl_standing_options_default(&def);
  const tl_standing_options *o = opt ? opt : &def;
  ik s;
  memset(&s, 0, sizeof(s));
  s.m = m;
  s.nq = nq;
  s.nv = tl_model_nv(m);
  s.floating = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING;
  s.j0 = s.floating ? 6 : 0;
  s.nj = s.nv - s.j0;
  for (int b = 1; b < tl_model_nbody(m); b++) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC)
      return tl_error_set(err, TL_ERR_ARGUMENT, tl_model_source(m), 0, "joint",
                          "joint '%s' is %s: the standing-pose search moves revolute and prismatic joints",
                          tl_model_joint_name(m, b), tl_joint_type_name(t));
  }
  if (s.nj < 1) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "robot", "robot '%s' has no joint", tl_model_name(m));
  if (!(o->height_fraction > 0 && o->height_fraction <= 1) && !(isfinite(o->height) && o->height > 0))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "height_fraction", "height_fraction is %g: expected (0, 1]",
                        o->height_fraction);
  if (o->max_iter < 0 || !(o->tolerance >= 0) || !(o->damping > 0))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "options",
                        "max_iter %d, tolerance %g, damping %g: expected >= 0, >= 0, > 0", o->max_iter, o->tolerance,
                        o->damping);
  tl_world *w = NULL;
  tl_status st = tl_world_create(&w, err);
  if (!st) st = tl_world_add_system(w, m, &s.sys, err);
  if (!st) st = ik_setup(&s, o, err);
  size_t nv = (size_t)s.nv, nr = 5 * (size_t)s.nleg, nj = (size_t)s.nj;
  double *qs = NULL, *best = NULL, *q0 = NULL;
  if (!st) {
    s.qi = calloc(nv, sizeof(int));
    s.lo = calloc(nv, sizeof(double));
    s.hi = calloc(nv, sizeof(double));
    s.J = calloc(nr * nv + 3 * nv, sizeof(double));
    s.Jsel = calloc(nr * nj, sizeof(double));
    s.A = calloc(nj * nj, sizeof(double));
    s.g = calloc(nj, sizeof(double));
    s.r = calloc(nr, sizeof(double));
    qs = calloc((size_t)nq, sizeof(double));
    best = calloc((size_t)nq, sizeof(double));
    q0 = calloc((size_t)nq, sizeof(double));
    if (!s.qi || !s.lo || !s.hi || !s.J || !s.Jsel || !s.A || !s.g || !s.r || !qs || !best || !q0)
      st = tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  if (!st) st = tl_model_default_q(m, q0, nq, err);
  if (!st) {
    for (int b = 1; b < tl_model_nbody(m); b++) {
      int d = tl_model_joint_u_index(m, b);
      s.qi[d] = tl_model_joint_q_index(m, b);
      tl_model_dof_limits(m, d, &s.lo[d], &s.hi[d], NULL);
    }
    /* hips and leg lengths with the base at the origin in the reference pose */
    double *qr = qs;
    tl_model_reference_q(m, qr, nq, NULL);
    set_base(&s, qr, 0.0);
    ik_legs(&s);
    double rmean = 0, len = 0, hipz = 0;
    for (int l = 0; l < s.nleg; l++) {
      double o[3], R[9];
      tl_system_body_pose(s.sys, s.legs[l].hip_body, o, R, NULL);
      rmean += s.legs[l].r / s.nleg, len += s.legs[l].length / s.nleg, hipz += o[2] / s.nleg;
    }
    int given = isfinite(o->height) && o->height > 0;
    double h = given ? o->height : rmean - hipz + o->height_fraction * len;
    /* heights tried (default height only) until the feet reach: h0 times these factors */
    static const double factors[] = {1.0, 0.9, 1.1, 0.8, 1.2, 0.7, 1.3, 0.6, 0.5, 0.4};
    const int nfactor = (int)(sizeof(factors) / sizeof(factors[0]));
    double h0 = h, bestres = INFINITY;
    int adjusted = 0;
    for (int attempt = 0;; attempt++) {
      set_base(&s, q0, 0.0);
      ik_targets(&s);
      for (int start = 0; start < 4; start++) {
        /* starts: the default pose; the pitch joints (hip, knee, ankle) bent by (b, -2 b, b) either
         * way, so a straight leg's singularity is left; the knee and ankle at mid-range */
        memcpy(qs, q0, sizeof(double) * (size_t)nq);
        double bend = start == 1 ? 0.4 : start == 2 ? -0.4 : 0;
        for (int l = 0; l < s.nleg && start > 0; l++)
          for (int k = 0; k < s.legs[l].npitch; k++) {
            int d = s.legs[l].pitch[k], qk = s.qi[d];
            double x = qs[qk] + (k == 1 ? -2 * bend : bend);
            if (start == 3 && k > 0 && isfinite(s.lo[d]) && isfinite(s.hi[d])) x = 0.5 * (s.lo[d] + s.hi[d]);
            qs[qk] = fmin(fmax(x, s.lo[d]), s.hi[d]);
          }
        int it = 0;
        double r = solve_ik(&s, qs, h, o, &it);
        if (r < bestres) {
          bestres = r;
          memcpy(best, qs, sizeof(double) * (size_t)nq);
          if (res) res->iterations = it;
        }
      }
      if (given || bestres <= 1e-3 || attempt == nfactor - 1) break;
      h = h0 * factors[attempt + 1];
      adjusted = 1;
      bestres = INFINITY;
    }
    set_base(&s, best, h);
    if (s.floating) best[2] = h;
    /* the support polygon: the foot geoms' points within SUPPORT_TOL of the lowest (a flat foot's
     * sole corners), the foot points where a foot has no geom */
    int cap = 0, n = 0;
    for (int l = 0; l < s.nleg; l++) cap += s.legs[l].geom >= 0 ? geom_npoints(m, s.legs[l].geom) : 1;
    double *pts = calloc(3 * (size_t)cap + 3, sizeof(double)), *xy = calloc(2 * (size_t)cap + 2, sizeof(double));
    double com[3] = {0, 0, 0}, margin = -INFINITY, zmin = INFINITY;
    for (int l = 0; pts && xy && l < s.nleg; l++) {
      int k = s.legs[l].geom >= 0 ? geom_points(s.sys, m, s.legs[l].geom, pts + 3 * n, cap - n) : -1;
      if (k < 0) body_point(s.sys, s.legs[l].body, s.legs[l].p, pts + 3 * n), k = 1;
      n += k;
    }
    for (int i = 0; i < n; i++) zmin = fmin(zmin, pts[3 * i + 2]);
    int nxy = 0;
    for (int i = 0; pts && xy && i < n; i++)
      if (pts[3 * i + 2] <= zmin + SUPPORT_TOL) xy[2 * nxy] = pts[3 * i], xy[2 * nxy + 1] = pts[3 * i + 1], nxy++;
    tl_system_com(s.sys, com, NULL);
    if (pts && xy) margin = tl_support_margin(xy, nxy, com);
    free(pts), free(xy);
    if (res) {
      res->height = h;
      res->residual = bestres;
      res->com_margin = margin;
      res->nfeet = s.nleg;
      res->height_adjusted = adjusted;
    }
    memcpy(q, best, sizeof(double) * (size_t)nq);
  }
  free(s.legs), free(s.qi), free(s.lo), free(s.hi), free(s.J), free(s.Jsel), free(s.A), free(s.g), free(s.r);
  free(qs), free(best), free(q0);
  tl_world_free(w);
  return st;
}
