/* tl_system: creation, state, and the public kinematic / dynamic queries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "contact/contact.h"
#include "dynamics/joint_space.h"
#include "math/tl_math.h"
#include "world/world_internal.h"

void tl_system_destroy(tl_system *s) {
  if (!s) return;
  tl_sysdata_free(&s->d);
  double *arr[] = {s->kp, s->kd, s->q_target, s->u_target, s->tau_ff, s->tau_applied, s->ext,
                   s->ext_w, s->ext_ref, s->passive_tmp, s->lambda_joint, s->ext_sp, s->wrench_ws};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  for (int h = 0; s->hulls && h < s->m->nhull; h++) tl_hull_graph_free(&s->hulls[h]);
  free(s->hulls);
  free(s->pd_row);
  tl_model_free(s->m);
  free(s);
}

tl_system *tl_system_create(tl_world *w, const tl_model *model, int index) {
  tl_system *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->world = w;
  s->index = index;
  s->m = tl_model_copy(model);
  if (!s->m || tl_sysdata_init(&s->d, s->m)) {
    tl_system_destroy(s);
    return NULL;
  }
  size_t nv = (size_t)s->m->nv, nq = (size_t)s->m->nq;
  /* control and the joint rows' warm starts; the step scratch (TL_SYSTEM_SCRATCH) is the native
     engine's, placed in its arena when the system is added (src/native/native_workspace.c) */
  double **arr[] = {&s->kp, &s->kd, &s->q_target, &s->u_target, &s->tau_ff, &s->tau_applied, &s->ext,
                    &s->ext_w, &s->ext_ref, &s->passive_tmp, &s->lambda_joint, &s->ext_sp, &s->wrench_ws};
  size_t nb = (size_t)s->m->nbody;
  size_t len[] = {nv, nv, nq, nv, nv, nv, nv, 15 * nb, nv, nv, TL_JOINT_SLOTS * nv,
                  12 * nb, tl_system_wrench_ws_size(s->m->nbody, s->m->nv, s->m->nq)};
  for (size_t i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
    *arr[i] = calloc(len[i] ? len[i] : 1, sizeof(double));
    if (!*arr[i]) {
      tl_system_destroy(s);
      return NULL;
    }
  }
  s->hulls = calloc(s->m->nhull ? (size_t)s->m->nhull : 1, sizeof(tl_hull));
  s->pd_row = calloc(nv ? nv : 1, 1);
  if (!s->hulls || !s->pd_row) {
    tl_system_destroy(s);
    return NULL;
  }
  for (int h = 0; h < s->m->nhull; h++) {
    s->hulls[h] = (tl_hull){.nvert = s->m->hull_nvert[h], .vert = s->m->hull_vert + 3 * s->m->hull_vert_adr[h],
                            .nface = s->m->hull_nface[h], .face = s->m->hull_face + 3 * s->m->hull_face_adr[h]};
    tl_hull_bounds(&s->hulls[h]);
    if (tl_hull_graph(&s->hulls[h])) {
      tl_system_destroy(s);
      return NULL;
    }
  }
  tl_model_default_q_fill(s->m, s->q_target);
  tl_system_wrench_init(s);
  return s;
}

void tl_system_update_kinematics(tl_system *s) {
  if (s->kin_valid) return;
  tl_dyn_kinematics(&s->d);
  s->kin_valid = 1;
}

void tl_system_update_dynamics(tl_system *s) {
  if (s->dyn_valid) return;
  tl_system_update_kinematics(s);
  tl_dyn_crba(&s->d);
  tl_dyn_rnea(&s->d, s->world->opt.gravity, NULL, 1, s->d.h);
  s->dyn_valid = 1;
}

/* ---------------- argument checks ---------------- */

static tl_status check_len(tl_error *err, const char *what, const void *p, int got, int want) {
  if (!p) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s must not be NULL", what);
  if (got != want)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s has length %d, expected %d", what,
                        got, want);
  return TL_OK;
}

/* An optional vector: NULL means zero (any length accepted then); else as check_len. */
static tl_status check_opt_len(tl_error *err, const char *what, const void *p, int got, int want) {
  return p ? check_len(err, what, p, got, want) : TL_OK;
}

static tl_status check_finite(tl_error *err, const char *what, const double *x, int n) {
  if (!x) return TL_OK;
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s[%d] is %g: expected a finite number",
                          what, i, x[i]);
  return TL_OK;
}

static tl_status check_body(const tl_system *s, int b, tl_error *err) {
  if (b < 0 || b >= s->m->nbody)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "body", "body index %d out of range [0, %d)", b,
                        s->m->nbody);
  return TL_OK;
}

/* Quaternion blocks of q (floating base, spherical joints) must be non-zero
 * and of a finite norm; every coordinate within +-TL_Q_MAX. */
static tl_status check_quaternions(const tl_model *m, const double *q, tl_error *err) {
  return tl_system_check_q(m, q, "q", TL_ERR_ARGUMENT, err);
}

/* q[i] of an array that may be unaligned bytes (a snapshot buffer). */
static double q_at(const void *q, int i) {
  double x;
  memcpy(&x, (const unsigned char *)q + (size_t)i * sizeof(double), sizeof x);
  return x;
}

tl_status tl_system_check_q(const tl_model *m, const void *q, const char *what, tl_status status, tl_error *err) {
  for (int i = 0; i < m->nq; i++)
    if (!(fabs(q_at(q, i)) <= TL_Q_MAX))
      return tl_error_set(err, status, NULL, 0, what, "%s[%d] is %g: expected a finite number within +-%g", what, i,
                          q_at(q, i), TL_Q_MAX);
  for (int b = 0; b < m->nbody; b++) {
    int off = tl_js_quat_offset(m->jnt_type[b]);
    if (off < 0) continue;
    int a = m->q_adr[b] + off;
    double n2 = 0;
    for (int k = 0; k < 4; k++) n2 += q_at(q, a + k) * q_at(q, a + k);
    if (!(n2 > 1e-20) || !isfinite(n2))
      return tl_error_set(err, status, NULL, 0, what,
                          "%s[%d..%d], the quaternion of joint '%s', is %s", what, a, a + 3, m->joint_name[b],
                          isfinite(n2) ? "zero" : "too large to normalize");
  }
  return TL_OK;
}

tl_status tl_system_check_q_limits(const tl_model *m, const double *q, tl_error *err) {
  for (int b = 0; b < m->nbody; b++) {
    if (tl_js_quat_offset(m->jnt_type[b]) >= 0) continue;
    if (m->jnt_nq[b] != m->jnt_nv[b]) continue;
    for (int k = 0; k < m->jnt_nq[b]; k++) {
      int iq = m->q_adr[b] + k, iv = m->v_adr[b] + k;
      double lo = m->dof_lower[iv], hi = m->dof_upper[iv], x = q[iq];
      double tol = 1e-9 * (isfinite(hi - lo) ? fmax(1.0, hi - lo) : 1.0);
      if (x < lo - tol || x > hi + tol)
        return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "q",
                            "q[%d] = %g, coordinate %d of joint '%s', is outside its limits [%g, %g]", iq, x, k,
                            m->joint_name[b], lo, hi);
    }
  }
  return TL_OK;
}

static void normalize_quaternions(const tl_model *m, double *q) {
  for (int b = 0; b < m->nbody; b++) tl_js_normalize(m->jnt_type[b], q + m->q_adr[b]);
}

/* ---------------- state ---------------- */

const tl_model *tl_system_model(const tl_system *s) { return s->m; }
int tl_system_nq(const tl_system *s) { return s->m->nq; }
int tl_system_nv(const tl_system *s) { return s->m->nv; }

tl_status tl_system_set_state(tl_system *s, const double *q, int nq, const double *u, int nv,
                              tl_error *err) {
  tl_status st;
  if ((st = check_len(err, "q", q, nq, s->m->nq)) || (st = check_opt_len(err, "u", u, nv, s->m->nv)) ||
      (st = check_finite(err, "q", q, nq)) || (st = check_finite(err, "u", u, nv)) ||
      (st = check_quaternions(s->m, q, err)))
    return st;
  memcpy(s->d.q, q, (size_t)nq * sizeof(double));
  if (u) memcpy(s->d.u, u, (size_t)s->m->nv * sizeof(double));
  else memset(s->d.u, 0, (size_t)s->m->nv * sizeof(double));
  normalize_quaternions(s->m, s->d.q);
  s->kin_valid = s->dyn_valid = 0;
  return TL_OK;
}

tl_status tl_system_get_state(const tl_system *s, double *q, int nq, double *u, int nv,
                              tl_error *err) {
  tl_status st;
  if (q && (st = check_len(err, "q", q, nq, s->m->nq))) return st;
  if (u && (st = check_len(err, "u", u, nv, s->m->nv))) return st;
  if (q) memcpy(q, s->d.q, (size_t)nq * sizeof(double));
  if (u) memcpy(u, s->d.u, (size_t)nv * sizeof(double));
  return TL_OK;
}

tl_status tl_system_set_base_pose(tl_system *s, const double pos[3], const double R[9], tl_error *err) {
  if (!pos || !tl_v3_isfinite(pos) || !R)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "pos", "pos must be 3 finite numbers and R not NULL");
  double RtR[9], dev = 0;
  tl_m3_tmul(RtR, R, R);
  for (int i = 0; i < 9; i++) dev = fmax(dev, fabs(RtR[i] - (i % 4 == 0 ? 1.0 : 0.0)));
  double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
  if (!(dev < 1e-9) || !(fabs(det - 1) < 1e-9))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "R", "R is not a rotation matrix");
  if (s->m->jnt_type[0] == TL_JOINT_FLOATING) {
    tl_v3_copy(s->d.q, pos);
    tl_quat_from_m3(s->d.q + 3, R);
  } else {
    tl_v3_copy(s->m->jnt_pos, pos);
    tl_m3_copy(s->m->jnt_rot, R);
  }
  s->kin_valid = s->dyn_valid = 0;
  return TL_OK;
}

/* ---------------- kinematics ---------------- */

tl_status tl_system_body_pose(tl_system *s, int b, double pos[3], double R[9], tl_error *err) {
  tl_status st = check_body(s, b, err);
  if (st) return st;
  tl_system_update_kinematics(s);
  if (pos) tl_v3_copy(pos, s->d.xpos + 3 * b);
  if (R) tl_m3_copy(R, s->d.xrot + 9 * b);
  return TL_OK;
}

tl_status tl_system_frame_pose(tl_system *s, int f, double pos[3], double R[9], tl_error *err) {
  const tl_model *m = s->m;
  if (f < 0 || f >= m->nframe)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "frame", "frame index %d out of range [0, %d)",
                        f, m->nframe);
  tl_system_update_kinematics(s);
  int b = m->frame_body[f];
  const double *xr = s->d.xrot + 9 * b;
  if (pos) {
    tl_m3_mulv(pos, xr, m->frame_pos + 3 * f);
    tl_v3_add(pos, pos, s->d.xpos + 3 * b);
  }
  if (R) tl_m3_mul(R, xr, m->frame_rot + 9 * f);
  return TL_OK;
}

tl_status tl_system_point_jacobian(tl_system *s, int b, const double p[3], double *Jp, double *Jr,
                                   int nv, tl_error *err) {
  tl_status st;
  if ((st = check_body(s, b, err))) return st;
  if (nv != s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nv", "Jacobians have %d columns, expected %d",
                        nv, s->m->nv);
  if (!p || !tl_v3_isfinite(p))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "point", "point must be 3 finite numbers");
  tl_system_update_kinematics(s);
  if (Jp) memset(Jp, 0, 3 * (size_t)nv * sizeof(double));
  if (Jr) memset(Jr, 0, 3 * (size_t)nv * sizeof(double));
  tl_dyn_point_jacobian(&s->d, b, p, Jp, Jr);
  return TL_OK;
}

tl_status tl_system_geom_pose(tl_system *s, int g, double pos[3], double R[9], tl_error *err) {
  if (g < 0 || g >= s->m->ngeom)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "geom", "geom index %d out of range [0, %d)", g,
                        s->m->ngeom);
  tl_system_update_kinematics(s);
  double p[3], r[9];
  tl_geom_world_pose(s->m, &s->d, g, p, r);
  if (pos) tl_v3_copy(pos, p);
  if (R) tl_m3_copy(R, r);
  return TL_OK;
}

tl_status tl_system_geom_aabb(tl_system *s, int g, double lo[3], double hi[3], tl_error *err) {
  double c[3], R[9], ext[3];
  tl_status st = tl_system_geom_pose(s, g, c, R, err);
  if (st) return st;
  const double *sz = s->m->geom_size + 3 * g;
  for (int i = 0; i < 3; i++) {
    const double *row = R + 3 * i; /* world axis i expressed in geom axes */
    switch (s->m->geom_type[g]) {
      case TL_GEOM_SPHERE: ext[i] = sz[0]; break;
      case TL_GEOM_BOX:
        ext[i] = 0.5 * (fabs(row[0]) * sz[0] + fabs(row[1]) * sz[1] + fabs(row[2]) * sz[2]);
        break;
      case TL_GEOM_CAPSULE: ext[i] = sz[0] + 0.5 * sz[1] * fabs(row[2]); break;
      case TL_GEOM_CYLINDER:
        ext[i] = 0.5 * sz[1] * fabs(row[2]) + sz[0] * sqrt(fmax(0.0, 1.0 - row[2] * row[2]));
        break;
      default:
        return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "geom",
                            "geom '%s' is a %s: no bounding box yet", s->m->geom_name[g],
                            tl_geom_type_name(s->m->geom_type[g]));
    }
  }
  for (int i = 0; i < 3; i++) {
    if (lo) lo[i] = c[i] - ext[i];
    if (hi) hi[i] = c[i] + ext[i];
  }
  return TL_OK;
}

/* ---------------- dynamics ---------------- */

tl_status tl_system_mass_matrix(tl_system *s, double *M, int nv, tl_error *err) {
  tl_status st = check_len(err, "M", M, nv, s->m->nv);
  if (st) return st;
  tl_system_update_dynamics(s);
  memcpy(M, s->d.M, (size_t)nv * (size_t)nv * sizeof(double));
  return TL_OK;
}

tl_status tl_system_nonlinear_term(tl_system *s, double *h, int nv, tl_error *err) {
  tl_status st = check_len(err, "h", h, nv, s->m->nv);
  if (st) return st;
  tl_system_update_dynamics(s);
  memcpy(h, s->d.h, (size_t)nv * sizeof(double));
  return TL_OK;
}

tl_status tl_system_com(tl_system *s, double com[3], tl_error *err) {
  if (!com) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "com", "com must not be NULL");
  tl_system_update_kinematics(s);
  double mass = 0;
  tl_v3_set(com, 0, 0, 0);
  for (int b = 0; b < s->m->nbody; b++) {
    tl_v3_addscl(com, s->d.xcom + 3 * b, s->m->body_mass[b]);
    mass += s->m->body_mass[b];
  }
  if (mass > 0) tl_v3_scale(com, com, 1.0 / mass);
  return TL_OK;
}

double tl_system_kinetic_energy(tl_system *s) {
  tl_system_update_dynamics(s);
  int nv = s->m->nv;
  double e = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) e += s->d.u[i] * s->d.M[i * nv + j] * s->d.u[j];
  return 0.5 * e;
}

double tl_system_potential_energy(tl_system *s) {
  tl_system_update_kinematics(s);
  double e = 0;
  for (int b = 0; b < s->m->nbody; b++)
    e -= s->m->body_mass[b] * tl_v3_dot(s->world->opt.gravity, s->d.xcom + 3 * b);
  return e;
}

/* ---------------- control ---------------- */

void tl_system_implicit_diagonal(const tl_system *s, double dt, double *diag) {
  const tl_model *m = s->m;
  for (int v = 0; v < m->nv; v++) {
    int pd = tl_system_pd_implicit(s, v);
    diag[v] = dt * ((pd ? s->kd[v] : 0.0) + m->dof_damping[v]) +
              dt * dt * ((pd ? s->kp[v] : 0.0) + m->dof_stiffness[v]);
  }
}

tl_status tl_system_set_integrator(tl_system *s, tl_integrator integrator, tl_error *err) {
  if (integrator != TL_INTEGRATOR_EULER && integrator != TL_INTEGRATOR_RK4)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "integrator", "unknown integrator %d", (int)integrator);
  if (integrator == TL_INTEGRATOR_RK4)
    for (int k = 0; k < s->world->nconstraint; k++) {
      const tl_constraint *c = s->world->constraints + k;
      if (c->sys[0] == s->index || c->sys[1] == s->index)
        return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "integrator",
                            "system '%s' is held by constraint '%s': loop constraints are solved on the Euler "
                            "step only, not with RK4", s->m->name, c->name);
    }
  s->integrator = integrator;
  tl_world_filters_changed(s->world);
  return TL_OK;
}

tl_integrator tl_system_integrator(const tl_system *s) { return s->integrator; }

tl_status tl_system_set_pd_gains(tl_system *s, const double *kp, const double *kd, int nv,
                                 tl_error *err) {
  tl_status st;
  if ((st = check_len(err, "kp", kp, nv, s->m->nv)) || (st = check_len(err, "kd", kd, nv, s->m->nv)) ||
      (st = check_finite(err, "kp", kp, nv)) || (st = check_finite(err, "kd", kd, nv)))
    return st;
  for (int k = 0; k < nv; k++) {
    if (kp[k] < 0 || kd[k] < 0)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, kp[k] < 0 ? "kp" : "kd",
                          "gain of DOF %d is negative: gains must be >= 0", k);
  }
  memcpy(s->kp, kp, (size_t)nv * sizeof(double));
  memcpy(s->kd, kd, (size_t)nv * sizeof(double));
  return TL_OK;
}

tl_status tl_system_set_pd_targets(tl_system *s, const double *q_target, int nq,
                                   const double *u_target, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_len(err, "q_target", q_target, nq, s->m->nq)) ||
      (st = check_opt_len(err, "u_target", u_target, nv, s->m->nv)) ||
      (st = check_finite(err, "q_target", q_target, nq)) ||
      (st = check_finite(err, "u_target", u_target, nv)) ||
      (st = tl_system_check_q(s->m, q_target, "q_target", TL_ERR_ARGUMENT, err)))
    return st;
  memcpy(s->q_target, q_target, (size_t)nq * sizeof(double));
  if (u_target) memcpy(s->u_target, u_target, (size_t)s->m->nv * sizeof(double));
  else memset(s->u_target, 0, (size_t)s->m->nv * sizeof(double));
  normalize_quaternions(s->m, s->q_target);
  return TL_OK;
}

tl_status tl_system_get_pd_targets(const tl_system *s, double *q_target, int nq, double *u_target, int nv,
                                   tl_error *err) {
  tl_status st;
  if ((st = check_opt_len(err, "q_target", q_target, nq, s->m->nq)) ||
      (st = check_opt_len(err, "u_target", u_target, nv, s->m->nv)))
    return st;
  if (q_target) memcpy(q_target, s->q_target, (size_t)nq * sizeof(double));
  if (u_target) memcpy(u_target, s->u_target, (size_t)nv * sizeof(double));
  return TL_OK;
}

tl_status tl_system_set_generalized_force(tl_system *s, const double *tau, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_opt_len(err, "tau", tau, nv, s->m->nv)) || (st = check_finite(err, "tau", tau, nv)))
    return st;
  if (tau) memcpy(s->tau_ff, tau, (size_t)s->m->nv * sizeof(double));
  else memset(s->tau_ff, 0, (size_t)s->m->nv * sizeof(double));
  return TL_OK;
}

/* ---------------- applied and external forces ---------------- */

tl_status tl_system_applied_generalized_force(const tl_system *s, double *tau, int nv, tl_error *err) {
  tl_status st = check_len(err, "tau", tau, nv, s->m->nv);
  if (st) return st;
  memcpy(tau, s->tau_applied, (size_t)nv * sizeof(double));
  return TL_OK;
}

/* ext += J^T w for the wrench (torque about the origin; force) of body b,
 * and the record of its q dependence in ext_w (p: the world point of the
 * force, NULL for a pure torque); ext_ref marks the record valid. */
static void add_wrench(tl_system *s, int b, const double torque[3], const double f[3], const double *p) {
  const tl_model *m = s->m;
  double F[6] = {torque[0], torque[1], torque[2], f[0], f[1], f[2]};
  const size_t nv = (size_t)m->nv;
  if (nv > 0 && memcmp(s->ext_ref, s->ext, nv * sizeof(double)) != 0) /* stale record (a step cleared ext) */
    memset(s->ext_w, 0, 15 * (size_t)m->nbody * sizeof(double));
  tl_system_wrench_note_external(s, b, F); /* the body itself: the joint wrenches see where it acts */
  while (b > 0 && m->jnt_nv[b] == 0) b = m->parent[b];
  for (int k = m->jnt_nv[b] ? m->v_adr[b] + m->jnt_nv[b] - 1 : -1; k >= 0; k = m->dof_parent[k])
    s->ext[k] += tl_sp_dot(s->d.cdof + 6 * k, F);
  double *W = s->ext_w + 15 * b;
  for (int i = 0; i < 6; i++) W[i] += F[i];
  if (p)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) W[6 + 3 * i + j] += p[i] * f[j];
  memcpy(s->ext_ref, s->ext, nv * sizeof(double));
}

tl_status tl_system_add_external_force(tl_system *s, int b, const double f[3], const double point[3],
                                       tl_error *err) {
  tl_status st = check_body(s, b, err);
  if (st) return st;
  if (!f || !tl_v3_isfinite(f) || (point && !tl_v3_isfinite(point)))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "force", "force and point must be 3 finite numbers");
  tl_system_update_kinematics(s);
  double p[3], t[3];
  if (point)
    tl_v3_copy(p, point);
  else
    tl_v3_copy(p, s->d.xcom + 3 * b);
  tl_v3_cross(t, p, f); /* moment about the world origin */
  add_wrench(s, b, t, f, p);
  return TL_OK;
}

tl_status tl_system_add_external_force_body_point(tl_system *s, int b, const double f[3], const double pb[3],
                                                  tl_error *err) {
  tl_status st = check_body(s, b, err);
  if (st) return st;
  if (!pb || !tl_v3_isfinite(pb))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "point", "point must be 3 finite numbers");
  tl_system_update_kinematics(s);
  double p[3];
  tl_m3_mulv(p, s->d.xrot + 9 * b, pb);
  tl_v3_add(p, p, s->d.xpos + 3 * b);
  return tl_system_add_external_force(s, b, f, p, err);
}

tl_status tl_system_add_external_torque(tl_system *s, int b, const double torque[3], tl_error *err) {
  tl_status st = check_body(s, b, err);
  if (st) return st;
  if (!torque || !tl_v3_isfinite(torque))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "torque", "torque must be 3 finite numbers");
  tl_system_update_kinematics(s);
  double zero[3] = {0, 0, 0};
  add_wrench(s, b, torque, zero, NULL);
  return TL_OK;
}

void tl_system_clear_external_forces(tl_system *s) {
  memset(s->ext, 0, (size_t)s->m->nv * sizeof(double));
  memset(s->ext_w, 0, 15 * (size_t)s->m->nbody * sizeof(double));
  memset(s->ext_ref, 0, (size_t)s->m->nv * sizeof(double));
  tl_system_wrench_clear_external(s);
}

/* ---------------- collision properties ---------------- */

static tl_status check_geom(const tl_system *s, int g, tl_error *err) {
  if (g < 0 || g >= s->m->ngeom)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "geom", "geom index %d out of range [0, %d)", g, s->m->ngeom);
  return TL_OK;
}

tl_status tl_system_set_geom_material(tl_system *s, int g, const char *material, tl_error *err) {
  tl_status st = check_geom(s, g, err);
  if (st) return st;
  if (!material || strlen(material) >= TL_NAME_MAX)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "material", "material names: 0 to %d characters, not NULL",
                        TL_NAME_MAX - 1);
  snprintf(s->m->geom_material[g], TL_NAME_MAX, "%s", material);
  return TL_OK;
}

tl_status tl_system_set_geom_friction(tl_system *s, int g, double mu, tl_error *err) {
  tl_status st = check_geom(s, g, err);
  if (st) return st;
  if (!(mu >= 0) || !isfinite(mu))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "mu", "friction coefficient %g: expected a finite number >= 0", mu);
  s->m->geom_friction[g] = mu;
  return TL_OK;
}

tl_status tl_system_set_collision_filter(tl_system *s, int g, unsigned group, unsigned mask, tl_error *err) {
  tl_status st = check_geom(s, g, err);
  if (st) return st;
  s->m->geom_group[g] = group;
  s->m->geom_mask[g] = mask;
  tl_world_filters_changed(s->world);
  return TL_OK;
}

void tl_system_set_self_collision(tl_system *s, int on) {
  s->self_collision = on != 0;
  tl_world_filters_changed(s->world);
}
