/* Public kinematic and dynamic queries beyond the basics of system.c:
 * velocities, frames, sparse Jacobians, dJ/dt u, M^-1, M x, composite
 * inertias, momenta, inverse and forward dynamics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "world/world_internal.h"

static tl_status bad_body(const tl_system *s, int b, tl_error *err) {
  if (b < 0 || b >= s->m->nbody)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "body", "body index %d out of range [0, %d)", b,
                        s->m->nbody);
  return TL_OK;
}

static tl_status bad_frame(const tl_system *s, int f, tl_error *err) {
  if (f < 0 || f >= s->m->nframe)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "frame", "frame index %d out of range [0, %d)",
                        f, s->m->nframe);
  return TL_OK;
}

static tl_status bad_vec(const double *x, int n, int want, const char *what, tl_error *err) {
  if (!x) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s must not be NULL", what);
  if (n != want)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s has length %d, expected %d", what, n, want);
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s[%d] is %g: expected a finite number",
                          what, i, x[i]);
  return TL_OK;
}

static tl_status bad_point(const double *p, tl_error *err) {
  if (!p || !tl_v3_isfinite(p))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "point", "point must be 3 finite numbers");
  return TL_OK;
}

/* World position of frame f's origin. */
static void frame_origin(const tl_system *s, int f, double p[3]) {
  int b = s->m->frame_body[f];
  tl_m3_mulv(p, s->d.xrot + 9 * b, s->m->frame_pos + 3 * f);
  tl_v3_add(p, p, s->d.xpos + 3 * b);
}

int tl_system_index(const tl_system *s) { return s->index; }

/* ---------------- velocities and frames ---------------- */

tl_status tl_system_point_velocity(tl_system *s, int b, const double p[3], double v[3], double w[3],
                                   tl_error *err) {
  tl_status st;
  if ((st = bad_body(s, b, err)) || (st = bad_point(p, err))) return st;
  tl_system_update_kinematics(s);
  if (v) tl_dyn_point_velocity(&s->d, b, p, v);
  if (w) tl_v3_copy(w, s->d.cvel + 6 * b);
  return TL_OK;
}

tl_status tl_system_frame_velocity(tl_system *s, int f, double v[3], double w[3], tl_error *err) {
  tl_status st = bad_frame(s, f, err);
  if (st) return st;
  tl_system_update_kinematics(s);
  double p[3];
  frame_origin(s, f, p);
  return tl_system_point_velocity(s, s->m->frame_body[f], p, v, w, err);
}

tl_status tl_system_frame_jacobian(tl_system *s, int f, double *Jp, double *Jr, int nv, tl_error *err) {
  tl_status st = bad_frame(s, f, err);
  if (st) return st;
  tl_system_update_kinematics(s);
  double p[3];
  frame_origin(s, f, p);
  return tl_system_point_jacobian(s, s->m->frame_body[f], p, Jp, Jr, nv, err);
}

tl_status tl_system_add_frame(tl_system *s, const char *name, int body, const double pos[3],
                              const double R[9], int *index, tl_error *err) {
  tl_status st;
  if ((st = bad_body(s, body, err)) || (st = bad_vec(pos, 3, 3, "pos", err)) ||
      (R && (st = bad_vec(R, 9, 9, "R", err))))
    return st;
  if (!name || !*name || strlen(name) >= TL_NAME_MAX)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "name", "a frame name must have 1 to %d characters",
                        TL_NAME_MAX - 1);
  if (tl_model_frame_index(s->m, name) >= 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "name", "a frame named '%s' exists already", name);
  double rot[9];
  if (R) {
    double RtR[9];
    tl_m3_tmul(RtR, R, R);
    double dev = 0;
    for (int i = 0; i < 9; i++) dev = fmax(dev, fabs(RtR[i] - (i % 4 == 0 ? 1.0 : 0.0)));
    if (dev > 1e-9)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "R", "R is not a rotation matrix (|R^T R - 1| = %g)", dev);
    tl_m3_copy(rot, R);
  } else {
    tl_m3_identity(rot);
  }
  int f = tl_model_add_frame(s->m, name, body, pos, rot);
  if (f < 0) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory adding frame '%s'", name);
  if (index) *index = f;
  return TL_OK;
}

/* ---------------- sparse Jacobians ---------------- */

/* Last DOF on the path from body b to the root, or -1. */
static int last_dof(const tl_model *m, int b) {
  while (b > 0 && m->jnt_nv[b] == 0) b = m->parent[b];
  return m->jnt_nv[b] ? m->v_adr[b] + m->jnt_nv[b] - 1 : -1;
}

int tl_system_sparse_jacobian_size(const tl_system *s, int b) {
  if (b < 0 || b >= s->m->nbody) return -1;
  int n = 0;
  for (int k = last_dof(s->m, b); k >= 0; k = s->m->dof_parent[k]) n++;
  return n;
}

tl_status tl_system_sparse_point_jacobian(tl_system *s, int b, const double p[3], int *idx, double *Jp,
                                          double *Jr, int cap, int *n, tl_error *err) {
  tl_status st;
  if ((st = bad_body(s, b, err)) || (st = bad_point(p, err))) return st;
  int size = tl_system_sparse_jacobian_size(s, b);
  if (!idx || !n || cap < size)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "cap",
                        "the sparse Jacobian of body %d has %d columns: idx and n must be given and cap "
                        "(%d) at least that", b, size, cap);
  tl_system_update_kinematics(s);
  int c = size;
  for (int k = last_dof(s->m, b); k >= 0; k = s->m->dof_parent[k]) idx[--c] = k;
  for (c = 0; c < size; c++) {
    const double *S = s->d.cdof + 6 * idx[c];
    double lin[3];
    tl_v3_cross(lin, S, p);
    tl_v3_add(lin, lin, S + 3);
    for (int i = 0; i < 3; i++) {
      if (Jp) Jp[i * size + c] = lin[i];
      if (Jr) Jr[i * size + c] = S[i];
    }
  }
  *n = size;
  return TL_OK;
}

void tl_system_sparse_jacobian_velocity(const int *idx, int n, const double *J, const double *u, double v[3]) {
  for (int i = 0; i < 3; i++) {
    v[i] = 0;
    for (int c = 0; c < n; c++) v[i] += J[i * n + c] * u[idx[c]];
  }
}

tl_status tl_system_point_bias_acceleration(tl_system *s, int b, const double p[3], double acc[3],
                                            double alpha[3], tl_error *err) {
  tl_status st;
  if ((st = bad_body(s, b, err)) || (st = bad_point(p, err))) return st;
  tl_system_update_kinematics(s);
  double a[3], al[3];
  tl_dyn_point_bias(&s->d, b, p, a, al);
  if (acc) tl_v3_copy(acc, a);
  if (alpha) tl_v3_copy(alpha, al);
  return TL_OK;
}

/* ---------------- mass-matrix queries ---------------- */

tl_status tl_system_nonlinear_term_gravity(tl_system *s, const double g[3], double *h, int nv,
                                           tl_error *err) {
  tl_status st;
  if ((st = bad_vec(g, 3, 3, "g", err))) return st;
  if (!h || nv != s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "h", "h must have length %d", s->m->nv);
  tl_system_update_kinematics(s);
  tl_dyn_rnea(&s->d, g, NULL, 1, h);
  return TL_OK;
}

/* (M + diag(diag))^-1 (nv x nv, row-major; diag: [nv] or NULL) from M (cached
 * lazily): tree-sparse L^T D L factorization (Featherstone 2008, Table 6.3)
 * into d.LD, then tl_dyn_inverse (W D^-1 W^T with W = L^-1 on L's sparsity).
 * The factorization is always recomputed: the cost does not depend on what
 * an earlier call left in d.LD. */
static tl_status inverse_with(tl_system *s, const double *diag, double *Minv, int nv, tl_error *err) {
  if (!Minv || nv != s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "Minv", "Minv must be %d x %d", s->m->nv, s->m->nv);
  tl_system_update_dynamics(s);
  if (tl_dyn_factor(&s->d, diag))
    return tl_error_set(err, TL_ERR_INVALID, s->m->source, 0, NULL,
                        "the mass matrix of '%s' is not positive definite", s->m->name);
  tl_dyn_inverse(&s->d, Minv); /* L^-1 D^-1 L^-T on the tree sparsity */
  return TL_OK;
}

tl_status tl_system_inverse_mass_matrix(tl_system *s, double *Minv, int nv, tl_error *err) {
  return inverse_with(s, NULL, Minv, nv, err);
}

/* The diagonal is written into Minv's first row, which tl_dyn_factor reads
 * before tl_dyn_inverse writes Minv (the step's s->diag is the native
 * engine's scratch, absent while a plugin serves the world). */
tl_status tl_system_effective_inverse_mass_matrix(tl_system *s, double *Minv, int nv, tl_error *err) {
  if (!Minv || nv != s->m->nv) return inverse_with(s, NULL, Minv, nv, err); /* the argument error */
  tl_system_implicit_diagonal(s, s->world->opt.dt, Minv);
  return inverse_with(s, Minv, Minv, nv, err);
}

tl_status tl_system_mass_matrix_multiply(tl_system *s, const double *x, double *y, int nv, tl_error *err) {
  tl_status st;
  if ((st = bad_vec(x, nv, s->m->nv, "x", err))) return st;
  if (!y) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "y", "y must not be NULL");
  tl_system_update_dynamics(s);
  const double *M = s->d.M;
  for (int k = 0; k < nv; k++) y[k] = M[k * nv + k] * x[k];
  for (int k = 0; k < nv; k++)
    for (int l = s->m->dof_parent[k]; l >= 0; l = s->m->dof_parent[l]) {
      y[k] += M[k * nv + l] * x[l];
      y[l] += M[k * nv + l] * x[k];
    }
  return TL_OK;
}

tl_status tl_system_composite_inertia(tl_system *s, int b, double *mass, double com[3], double inertia[9],
                                      tl_error *err) {
  tl_status st = bad_body(s, b, err);
  if (st) return st;
  tl_system_update_dynamics(s);
  const double *c = s->d.crb + TL_SPI_SIZE * b;
  double m = c[0], cm[3] = {0, 0, 0};
  if (m > 0) tl_v3_scale(cm, c + 1, 1.0 / m);
  if (mass) *mass = m;
  if (com) tl_v3_copy(com, cm);
  if (inertia) { /* I_com = I_O - m ((c.c) 1 - c c^T) */
    double IO[9] = {c[4], c[5], c[6], c[5], c[7], c[8], c[6], c[8], c[9]}, cc = tl_v3_dot(cm, cm);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        inertia[3 * i + j] = IO[3 * i + j] - m * ((i == j ? cc : 0.0) - cm[i] * cm[j]);
  }
  return TL_OK;
}

/* Total spatial momentum about the world origin: [angular; linear]. */
static void spatial_momentum(tl_system *s, double h[6]) {
  tl_system_update_kinematics(s);
  memset(h, 0, 6 * sizeof(double));
  for (int b = 0; b < s->m->nbody; b++) {
    double f[6];
    tl_spi_mulv(f, s->d.cinert + TL_SPI_SIZE * b, s->d.cvel + 6 * b);
    for (int i = 0; i < 6; i++) h[i] += f[i];
  }
}

tl_status tl_system_linear_momentum(tl_system *s, double p[3], tl_error *err) {
  if (!p) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "p", "p must not be NULL");
  double h[6];
  spatial_momentum(s, h);
  tl_v3_copy(p, h + 3);
  return TL_OK;
}

tl_status tl_system_angular_momentum(tl_system *s, const double point[3], double L[3], tl_error *err) {
  tl_status st = bad_point(point, err);
  if (st) return st;
  if (!L) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "L", "L must not be NULL");
  double h[6], t[3];
  spatial_momentum(s, h);
  tl_v3_cross(t, point, h + 3); /* L_p = L_O - p x P */
  tl_v3_sub(L, h, t);
  return TL_OK;
}

tl_status tl_system_generalized_momentum(tl_system *s, double *p, int nv, tl_error *err) {
  return tl_system_mass_matrix_multiply(s, s->d.u, p, nv, err);
}

tl_status tl_system_inverse_dynamics(tl_system *s, const double *du, double *tau, int nv, tl_error *err) {
  tl_status st;
  if ((st = bad_vec(du, nv, s->m->nv, "du", err))) return st;
  if (!tau) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "tau", "tau must not be NULL");
  tl_system_update_kinematics(s);
  tl_dyn_rnea(&s->d, s->world->opt.gravity, du, 1, tau);
  for (int k = 0; k < nv; k++) tau[k] += s->m->dof_rotor_inertia[k] * du[k];
  return TL_OK;
}

/* du = M^-1 (tau - h) (nv, m/s^2 or rad/s^2) for tau (nv, N or N m). When M,
 * h and the L^T D L factorization of exactly this M are all cached (e.g.
 * after tl_system_inverse_mass_matrix at this state), by the O(sum depth)
 * solve with that factorization (Featherstone 2008, Table 6.4); otherwise by
 * the articulated-body algorithm (Table 7.1), which needs only kinematics
 * and never computes M. Both are exact: they differ by rounding. */
tl_status tl_system_forward_dynamics(tl_system *s, const double *tau, double *du, int nv, tl_error *err) {
  tl_status st;
  if ((st = bad_vec(tau, nv, s->m->nv, "tau", err))) return st;
  if (!du) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "du", "du must not be NULL");
  if (s->dyn_valid && tl_dyn_factor_of_M(&s->d)) {
    for (int k = 0; k < nv; k++) du[k] = tau[k] - s->d.h[k];
    tl_dyn_solve(&s->d, du);
    return TL_OK;
  }
  tl_system_update_kinematics(s);
  if (tl_dyn_aba(&s->d, s->world->opt.gravity, tau, du))
    return tl_error_set(err, TL_ERR_INVALID, s->m->source, 0, NULL,
                        "an articulated joint inertia of '%s' is not positive definite", s->m->name);
  return TL_OK;
}

/* ---------------- placement ---------------- */

int tl_system_collision_aabb(tl_system *s, double lo[3], double hi[3]) {
  const tl_model *m = s->m;
  int used = 0;
  for (int i = 0; i < 3; i++) lo[i] = INFINITY, hi[i] = -INFINITY;
  for (int g = 0; g < m->ngeom; g++) {
    double a[3], b[3];
    if (tl_system_geom_aabb(s, g, a, b, NULL) == TL_OK) {
      for (int i = 0; i < 3; i++) lo[i] = fmin(lo[i], a[i]), hi[i] = fmax(hi[i], b[i]);
      used++;
      continue;
    }
    int h = m->geom_type[g] == TL_GEOM_MESH ? m->geom_hull[g] : -1;
    if (h < 0 || m->hull_nvert[h] <= 0) continue;
    double c[3], R[9];
    tl_system_geom_pose(s, g, c, R, NULL);
    const double *v = m->hull_vert + 3 * (size_t)m->hull_vert_adr[h];
    for (int k = 0; k < m->hull_nvert[h]; k++) {
      double p[3];
      tl_m3_mulv(p, R, v + 3 * k);
      tl_v3_add(p, p, c);
      for (int i = 0; i < 3; i++) lo[i] = fmin(lo[i], p[i]), hi[i] = fmax(hi[i], p[i]);
    }
    used++;
  }
  return used;
}

/* ---------------- naming state entries ---------------- */

static const char *const axis_name[3] = {"x", "y", "z"};

#include <stdio.h>

int tl_system_state_entry_name(const tl_system *s, int velocity, int index, char *buf, size_t size) {
  const tl_model *m = s->m;
  int n = velocity ? m->nv : m->nq;
  if (!buf || size == 0) return -1;
  buf[0] = '\0';
  if (index < 0 || index >= n) return -1;
  int b = 0;
  for (int k = 0; k < m->nbody; k++) {
    int adr = velocity ? m->v_adr[k] : m->q_adr[k], len = velocity ? m->jnt_nv[k] : m->jnt_nq[k];
    if (len > 0 && index >= adr && index < adr + len) {
      b = k;
      break;
    }
  }
  int off = index - (velocity ? m->v_adr[b] : m->q_adr[b]);
  char what[96];
  switch (m->jnt_type[b]) {
  case TL_JOINT_FLOATING:
    if (velocity)
      snprintf(what, sizeof what, "base %s velocity %s", off < 3 ? "linear" : "angular", axis_name[off % 3]);
    else if (off < 3)
      snprintf(what, sizeof what, "base position %s", axis_name[off]);
    else
      snprintf(what, sizeof what, "base orientation (quaternion %c)", "wxyz"[off - 3]);
    break;
  case TL_JOINT_REVOLUTE:
    snprintf(what, sizeof what, "joint %s %s", m->joint_name[b], velocity ? "velocity" : "angle");
    break;
  case TL_JOINT_PRISMATIC:
    snprintf(what, sizeof what, "joint %s %s", m->joint_name[b], velocity ? "velocity" : "position");
    break;
  default:
    snprintf(what, sizeof what, "joint %s %s %d", m->joint_name[b], velocity ? "velocity" : "coordinate", off);
    break;
  }
  snprintf(buf, size, "%s[%d] (%s)", velocity ? "u" : "q", index, what);
  return 0;
}

int tl_system_find_nonfinite(const tl_system *s, double limit, int *velocity, int *index, double *value) {
  const tl_model *m = s->m;
  for (int pass = 0; pass < 2; pass++) { /* velocities first: positions integrate them */
    const double *x = pass == 0 ? s->d.u : s->d.q;
    int n = pass == 0 ? m->nv : m->nq;
    for (int i = 0; i < n; i++) {
      if (isfinite(x[i]) && !(fabs(x[i]) > limit)) continue;
      if (velocity) *velocity = pass == 0;
      if (index) *index = i;
      if (value) *value = x[i];
      return 1;
    }
  }
  return 0;
}

/* ---------------- frames by name, contact wrenches ---------------- */

tl_status tl_system_frame_index(const tl_system *s, const char *name, int *index, tl_error *err) {
  int f = tl_model_frame_index(s->m, name);
  if (index) *index = f;
  if (f >= 0) return TL_OK;
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "frame",
                      "no frame or link named '%s' in robot '%s' (frames are named after the URDF joints; "
                      "`talus info` lists them)", name ? name : "(null)", s->m->name);
}

tl_status tl_system_body_contact_wrench(tl_system *s, int b, const double point[3], double force[3],
                                        double torque[3], tl_error *err) {
  tl_status st = bad_body(s, b, err);
  if (st) return st;
  if (point && (st = bad_point(point, err))) return st;
  double p[3], f[3] = {0, 0, 0}, t[3] = {0, 0, 0};
  if (point) {
    tl_v3_copy(p, point);
  } else {
    tl_system_update_kinematics(s);
    tl_v3_copy(p, s->d.xpos + 3 * b);
  }
  const tl_world *w = s->world;
  double dt = tl_world_timestep(w);
  int n = tl_world_ncontact(w);
  for (int k = 0; k < n; k++) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) != TL_OK) continue;
    double sign = 0;
    if (c.system == s->index && c.body == b) sign += 1;
    if (c.other_system == s->index && c.other_body == b) sign -= 1;
    if (sign == 0) continue;
    double fk[3], r[3], tk[3];
    for (int i = 0; i < 3; i++) fk[i] = sign * c.impulse[i] / dt;
    tl_v3_sub(r, c.pos, p);
    tl_v3_cross(tk, r, fk);
    tl_v3_add(f, f, fk);
    tl_v3_add(t, t, tk);
  }
  if (force) tl_v3_copy(force, f);
  if (torque) tl_v3_copy(torque, t);
  return TL_OK;
}

tl_status tl_system_frame_contact_wrench(tl_system *s, int fr, double force[3], double torque[3], tl_error *err) {
  double pos[3];
  tl_status st = bad_frame(s, fr, err);
  if (!st) st = tl_system_frame_pose(s, fr, pos, NULL, err);
  if (!st) st = tl_system_body_contact_wrench(s, s->m->frame_body[fr], pos, force, torque, err);
  return st;
}
