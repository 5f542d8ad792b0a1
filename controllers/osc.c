/* Talus `osc` controller (see osc.h): operational-space control, Khatib 1987.
 * Public API only; allocation in init only. */
#include "osc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors in Talus' form, "<element>: text" (tl_error_set). */
#define osc_error(err, status, element, ...) tl_error_set(err, status, NULL, 0, element, __VA_ARGS__)

static int finite_n(const double *v, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* ------------------------------------------------------------ parameters */

tl_osc_params tl_osc_default_params(void) {
  tl_osc_params p;
  memset(&p, 0, sizeof(p));
  p.kp = 400.0;
  p.kd = 40.0;
  p.orientation = 0;
  p.kp_ori = 400.0;
  p.kd_ori = 40.0;
  p.kp_null = 20.0;
  p.kd_null = 2.0;
  p.singular_damping = 1e-6;
  p.damping = 0.0;
  return p;
}

static const char *params_bad(const tl_osc_params *p) {
  if (!(isfinite(p->kp) && p->kp >= 0)) return "kp";
  if (!(isfinite(p->kd) && p->kd >= 0)) return "kd";
  if (!(isfinite(p->kp_ori) && p->kp_ori >= 0)) return "kp_ori";
  if (!(isfinite(p->kd_ori) && p->kd_ori >= 0)) return "kd_ori";
  if (!(isfinite(p->kp_null) && p->kp_null >= 0)) return "kp_null";
  if (!(isfinite(p->kd_null) && p->kd_null >= 0)) return "kd_null";
  if (!(isfinite(p->singular_damping) && p->singular_damping >= 0)) return "singular_damping";
  if (!(isfinite(p->damping) && p->damping >= 0)) return "damping";
  if (p->orientation != 0 && p->orientation != 1) return "orientation";
  return NULL;
}

tl_status tl_osc_params_set(tl_osc_params *p, const char *key, double value, tl_error *err) {
  if (!p || !key) return osc_error(err, TL_ERR_ARGUMENT, "params", "NULL argument");
  tl_osc_params t = *p;
  if (strcmp(key, "kp") == 0) t.kp = value;
  else if (strcmp(key, "kd") == 0) t.kd = value;
  else if (strcmp(key, "kp_ori") == 0) t.kp_ori = value;
  else if (strcmp(key, "kd_ori") == 0) t.kd_ori = value;
  else if (strcmp(key, "kp_null") == 0) t.kp_null = value;
  else if (strcmp(key, "kd_null") == 0) t.kd_null = value;
  else if (strcmp(key, "singular_damping") == 0) t.singular_damping = value;
  else if (strcmp(key, "damping") == 0) t.damping = value;
  else if (strcmp(key, "orientation") == 0) {
    if (value != 0.0 && value != 1.0)
      return osc_error(err, TL_ERR_ARGUMENT, key, "must be 0 or 1 (got %g)", value);
    t.orientation = (int)value;
  } else
    return osc_error(err, TL_ERR_ARGUMENT, key,
                     "unknown parameter (kp, kd, orientation, kp_ori, kd_ori, kp_null, kd_null, "
                     "singular_damping, damping)");
  if (params_bad(&t))
    return osc_error(err, TL_ERR_ARGUMENT, key, "must be finite and >= 0 (got %g)", value);
  *p = t;
  return TL_OK;
}

/* ------------------------------------------------------------ small math */

/* Rotation vector of R (log map). */
static void rot_log(double w[3], const double R[9]) {
  double c = 0.5 * (R[0] + R[4] + R[8] - 1.0);
  if (c > 1.0) c = 1.0;
  if (c < -1.0) c = -1.0;
  double th = acos(c);
  double v[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
  if (th < 1e-6) {
    for (int i = 0; i < 3; ++i) w[i] = 0.5 * v[i];
    return;
  }
  if (th > 3.14159265358979323846 - 1e-4) { /* near pi: axis from the diagonal */
    double d[3] = {R[0], R[4], R[8]};
    int k = d[0] > d[1] ? (d[0] > d[2] ? 0 : 2) : (d[1] > d[2] ? 1 : 2);
    double a[3];
    double s = sqrt(fmax(0.0, 0.5 * (d[k] + 1.0)));
    a[k] = s;
    for (int j = 0; j < 3; ++j)
      if (j != k) a[j] = R[3 * k + j] / (2.0 * s);
    for (int i = 0; i < 3; ++i) w[i] = th * a[i];
    return;
  }
  double f = th / (2.0 * sin(th));
  for (int i = 0; i < 3; ++i) w[i] = f * v[i];
}

/* In-place Cholesky inverse of the symmetric positive definite n x n A.
 * Returns -1 if A is not positive definite. scratch: n x n. */
static int spd_inverse(double *A, int n, double *L) {
  for (int j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
    if (!(d > 0.0)) return -1;
    d = sqrt(d);
    L[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / d;
    }
    for (int i = 0; i < j; ++i) L[i * n + j] = 0.0;
  }
  /* A^-1 column by column: L L^T x = e_c */
  for (int c = 0; c < n; ++c) {
    double x[6];
    for (int i = 0; i < n; ++i) {
      double s = (i == c) ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= L[i * n + k] * x[k];
      x[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      double s = x[i];
      for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * x[k];
      x[i] = s / L[i * n + i];
    }
    for (int i = 0; i < n; ++i) A[i * n + c] = x[i];
  }
  return 0;
}

/* ------------------------------------------------------------ setup */

static tl_status osc_alloc(tl_osc_controller *c, tl_error *err) {
  size_t nq = (size_t)c->nq + 1, nv = (size_t)c->nv + 1;
  c->q0 = calloc(nq, sizeof(double));
  c->q = calloc(nq, sizeof(double));
  c->u = calloc(nv, sizeof(double));
  c->M = calloc(nv * nv, sizeof(double));
  c->Minv = calloc(nv * nv, sizeof(double));
  c->J = calloc(6 * nv, sizeof(double));
  c->JMinv = calloc(6 * nv, sizeof(double));
  c->Lambda = calloc(72, sizeof(double)); /* 6 x 6 plus a 6 x 6 scratch */
  c->Jbar = calloc(6 * nv, sizeof(double));
  c->h = calloc(nv, sizeof(double));
  c->tau0 = calloc(nv, sizeof(double));
  c->tau = calloc(nv, sizeof(double));
  c->Jr = calloc(3 * nv, sizeof(double));
  if (!c->q0 || !c->q || !c->u || !c->M || !c->Minv || !c->J || !c->JMinv || !c->Lambda ||
      !c->Jbar || !c->h || !c->tau0 || !c->tau || !c->Jr)
    return osc_error(err, TL_ERR_MEMORY, "ctrl", "out of memory");
  return TL_OK;
}

tl_status tl_osc_init(tl_osc_controller *ctrl, tl_system *sys, int frame,
                      const tl_osc_params *params, tl_error *err) {
  if (!ctrl) return osc_error(err, TL_ERR_ARGUMENT, "ctrl", "NULL controller");
  memset(ctrl, 0, sizeof(*ctrl));
  if (!sys) return osc_error(err, TL_ERR_ARGUMENT, "sys", "NULL system");
  const tl_model *model = tl_system_model(sys);
  if (tl_model_joint_type(model, 0) == TL_JOINT_FLOATING)
    return osc_error(err, TL_ERR_ARGUMENT, "sys",
                     "needs a fixed-base system (load it with TL_BASE_FIXED / --fixed-base)");
  if (frame < 0 || frame >= tl_model_nframe(model))
    return osc_error(err, TL_ERR_ARGUMENT, "frame", "frame index %d out of range [0, %d)", frame,
                     tl_model_nframe(model));
  tl_osc_params p = params ? *params : tl_osc_default_params();
  const char *bad = params_bad(&p);
  if (bad) return osc_error(err, TL_ERR_ARGUMENT, bad, "parameter out of range");
  tl_osc_controller *c = ctrl;
  c->sys = sys;
  c->p = p;
  c->nq = tl_system_nq(sys);
  c->nv = tl_system_nv(sys);
  c->m = p.orientation ? 6 : 3;
  c->frame = frame;
  c->body = tl_model_frame_body(model, frame);
  tl_status st = osc_alloc(c, err);
  if (st == TL_OK) st = tl_system_get_state(sys, c->q0, c->nq, c->u, c->nv, err);
  if (st == TL_OK) st = tl_system_frame_pose(sys, frame, c->x_d, c->R_d, err);
  if (st == TL_OK) st = tl_system_set_pd_gains(sys, c->tau0, c->tau0, c->nv, err); /* zeros */
  if (st != TL_OK) {
    tl_osc_free(c);
    return st;
  }
  memset(c->u, 0, (size_t)c->nv * sizeof(double));
  memcpy(c->x, c->x_d, sizeof(c->x));
  memcpy(c->R, c->R_d, sizeof(c->R));
  return TL_OK;
}

tl_status tl_osc_set_position_target(tl_osc_controller *ctrl, const double x[3],
                                     const double v[3], const double a[3], tl_error *err) {
  if (!ctrl || !ctrl->sys) return osc_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!x || !finite_n(x, 3) || (v && !finite_n(v, 3)) || (a && !finite_n(a, 3)))
    return osc_error(err, TL_ERR_ARGUMENT, "x", "NULL or non-finite target");
  for (int i = 0; i < 3; ++i) {
    ctrl->x_d[i] = x[i];
    ctrl->v_d[i] = v ? v[i] : 0.0;
    ctrl->a_d[i] = a ? a[i] : 0.0;
  }
  return TL_OK;
}

tl_status tl_osc_set_orientation_target(tl_osc_controller *ctrl, const double R[9],
                                        const double w[3], const double al[3], tl_error *err) {
  if (!ctrl || !ctrl->sys) return osc_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!R || !finite_n(R, 9) || (w && !finite_n(w, 3)) || (al && !finite_n(al, 3)))
    return osc_error(err, TL_ERR_ARGUMENT, "R", "NULL or non-finite target");
  memcpy(ctrl->R_d, R, sizeof(ctrl->R_d));
  for (int i = 0; i < 3; ++i) {
    ctrl->w_d[i] = w ? w[i] : 0.0;
    ctrl->al_d[i] = al ? al[i] : 0.0;
  }
  return TL_OK;
}

tl_status tl_osc_set_posture(tl_osc_controller *ctrl, const double *q0, int nq, tl_error *err) {
  if (!ctrl || !ctrl->sys) return osc_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!q0 || nq != ctrl->nq || !finite_n(q0, nq))
    return osc_error(err, TL_ERR_ARGUMENT, "q0", "NULL, non-finite or length %d != nq %d", nq,
                     ctrl->nq);
  memcpy(ctrl->q0, q0, (size_t)nq * sizeof(double));
  return TL_OK;
}

void tl_osc_free(tl_osc_controller *ctrl) {
  if (!ctrl) return;
  free(ctrl->q0);
  free(ctrl->q);
  free(ctrl->u);
  free(ctrl->M);
  free(ctrl->Minv);
  free(ctrl->J);
  free(ctrl->JMinv);
  free(ctrl->Lambda);
  free(ctrl->Jbar);
  free(ctrl->h);
  free(ctrl->tau0);
  free(ctrl->tau);
  free(ctrl->Jr);
  memset(ctrl, 0, sizeof(*ctrl));
}

/* ------------------------------------------------------------ the tick */

/* Desired task acceleration minus dJ/dt u into acc (m entries); updates the
 * measured pose and the errors. */
static tl_status task_acceleration(tl_osc_controller *c, double *acc, tl_error *err) {
  tl_status st = tl_system_frame_pose(c->sys, c->frame, c->x, c->R, err);
  if (st != TL_OK) return st;
  double v[3], w[3], bias[3], bias_r[3];
  if ((st = tl_system_frame_velocity(c->sys, c->frame, v, w, err)) != TL_OK) return st;
  if ((st = tl_system_point_bias_acceleration(c->sys, c->body, c->x, bias, bias_r, err)) != TL_OK)
    return st;
  double e2 = 0;
  for (int i = 0; i < 3; ++i) {
    double e = c->x_d[i] - c->x[i];
    e2 += e * e;
    acc[i] = c->a_d[i] + c->p.kp * e + c->p.kd * (c->v_d[i] - v[i]) - bias[i];
  }
  c->pos_error = sqrt(e2);
  /* orientation error: log(R_d R^T), world */
  double Re[9], eo[3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Re[3 * i + j] = c->R_d[3 * i] * c->R[3 * j] + c->R_d[3 * i + 1] * c->R[3 * j + 1] +
                      c->R_d[3 * i + 2] * c->R[3 * j + 2];
  rot_log(eo, Re);
  c->ori_error = sqrt(eo[0] * eo[0] + eo[1] * eo[1] + eo[2] * eo[2]);
  if (c->m == 6)
    for (int i = 0; i < 3; ++i)
      acc[3 + i] = c->al_d[i] + c->p.kp_ori * eo[i] + c->p.kd_ori * (c->w_d[i] - w[i]) - bias_r[i];
  return TL_OK;
}

tl_status tl_osc_update(tl_osc_controller *ctrl, tl_error *err) {
  if (!ctrl || !ctrl->sys) return osc_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  tl_osc_controller *c = ctrl;
  const int nv = c->nv, m = c->m;
  tl_status st = tl_system_get_state(c->sys, c->q, c->nq, c->u, nv, err);
  if (st == TL_OK) st = tl_system_inverse_mass_matrix(c->sys, c->Minv, nv, err);
  if (st == TL_OK) st = tl_system_nonlinear_term(c->sys, c->h, nv, err);
  if (st == TL_OK) st = tl_system_frame_jacobian(c->sys, c->frame, c->J, c->Jr, nv, err);
  if (st != TL_OK) return st;
  if (m == 6) memcpy(c->J + 3 * nv, c->Jr, 3 * (size_t)nv * sizeof(double));
  double acc[6], F[6];
  if ((st = task_acceleration(c, acc, err)) != TL_OK) return st;
  /* J M^-1 (m x nv) and Lambda^-1 = J M^-1 J^T + eps I (m x m) */
  for (int r = 0; r < m; ++r)
    for (int k = 0; k < nv; ++k) {
      double s = 0;
      for (int j = 0; j < nv; ++j) s += c->J[r * nv + j] * c->Minv[j * nv + k];
      c->JMinv[r * nv + k] = s;
    }
  double *L = c->Lambda, *scratch = c->Lambda + 36;
  for (int r = 0; r < m; ++r)
    for (int s = 0; s < m; ++s) {
      double v = 0;
      for (int k = 0; k < nv; ++k) v += c->JMinv[r * nv + k] * c->J[s * nv + k];
      L[r * m + s] = v + (r == s ? c->p.singular_damping : 0.0);
    }
  if (spd_inverse(L, m, scratch) != 0)
    return osc_error(err, TL_ERR_INVALID, "J", "J M^-1 J^T is not positive definite (the frame "
                     "does not move with any DOF?)");
  for (int r = 0; r < m; ++r) {
    F[r] = 0;
    for (int s = 0; s < m; ++s) F[r] += L[r * m + s] * acc[s];
  }
  /* Jbar = M^-1 J^T Lambda (nv x m) */
  for (int k = 0; k < nv; ++k)
    for (int s = 0; s < m; ++s) {
      double v = 0;
      for (int r = 0; r < m; ++r) v += c->JMinv[r * nv + k] * L[r * m + s];
      c->Jbar[k * m + s] = v;
    }
  /* posture torque and its null-space projection N^T tau0 = tau0 - J^T (Jbar^T tau0) */
  for (int k = 0; k < nv; ++k) c->tau0[k] = -c->p.kd_null * c->u[k];
  const tl_model *model = tl_system_model(c->sys);
  for (int b = 1; b < tl_model_nbody(model); ++b) {
    tl_joint_type t = tl_model_joint_type(model, b);
    if (t == TL_JOINT_SPHERICAL || t == TL_JOINT_FLOATING) continue; /* no posture on quaternions */
    int qa = tl_model_joint_q_index(model, b), va = tl_model_joint_u_index(model, b);
    for (int k = 0; k < tl_joint_nv(t); ++k)
      c->tau0[va + k] += c->p.kp_null * (c->q0[qa + k] - c->q[qa + k]);
  }
  double y[6];
  for (int s = 0; s < m; ++s) {
    y[s] = 0;
    for (int k = 0; k < nv; ++k) y[s] += c->Jbar[k * m + s] * c->tau0[k];
  }
  for (int k = 0; k < nv; ++k) {
    double jt_f = 0, jt_y = 0;
    for (int r = 0; r < m; ++r) {
      jt_f += c->J[r * nv + k] * F[r];
      jt_y += c->J[r * nv + k] * y[r];
    }
    c->tau[k] = jt_f + c->h[k] + c->tau0[k] - jt_y + c->p.damping * c->u[k];
  }
  return tl_system_set_generalized_force(c->sys, c->tau, nv, err);
}

/* ------------------------------------------------------------ circle */

tl_status tl_osc_circle_make(tl_osc_circle *c, const double start[3], const double normal[3],
                             const double toward[3], double radius, double period, double ramp,
                             tl_error *err) {
  if (!c || !start || !normal)
    return osc_error(err, TL_ERR_ARGUMENT, "circle", "NULL argument");
  if (!finite_n(start, 3) || !finite_n(normal, 3) || (toward && !finite_n(toward, 3)))
    return osc_error(err, TL_ERR_ARGUMENT, "circle", "non-finite input");
  if (!(isfinite(radius) && radius >= 0.0))
    return osc_error(err, TL_ERR_ARGUMENT, "radius", "must be finite and >= 0 (got %g)", radius);
  if (!(isfinite(period) && period > 0.0))
    return osc_error(err, TL_ERR_ARGUMENT, "period", "must be finite and > 0 (got %g)", period);
  if (!(isfinite(ramp) && ramp >= 0.0))
    return osc_error(err, TL_ERR_ARGUMENT, "ramp", "must be finite and >= 0 (got %g)", ramp);
  double n = sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
  if (!(n > 1e-12)) return osc_error(err, TL_ERR_ARGUMENT, "normal", "zero normal");
  double nz[3] = {normal[0] / n, normal[1] / n, normal[2] / n};
  double t[3] = {0, 0, 1};
  if (toward) memcpy(t, toward, sizeof(t));
  else if (fabs(nz[2]) > 0.9) t[0] = 1, t[2] = 0;
  double d = t[0] * nz[0] + t[1] * nz[1] + t[2] * nz[2];
  double u[3] = {t[0] - d * nz[0], t[1] - d * nz[1], t[2] - d * nz[2]};
  double un = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  if (!(un > 1e-9)) return osc_error(err, TL_ERR_ARGUMENT, "toward", "parallel to the normal");
  memset(c, 0, sizeof(*c));
  for (int i = 0; i < 3; ++i) c->u[i] = u[i] / un;
  c->v[0] = nz[1] * c->u[2] - nz[2] * c->u[1];
  c->v[1] = nz[2] * c->u[0] - nz[0] * c->u[2];
  c->v[2] = nz[0] * c->u[1] - nz[1] * c->u[0];
  for (int i = 0; i < 3; ++i) c->center[i] = start[i] - radius * c->u[i];
  c->radius = radius;
  c->period = period;
  c->ramp = ramp;
  c->phase0 = 0.0;
  return TL_OK;
}

void tl_osc_circle_eval(const tl_osc_circle *c, double t, double x[3], double v[3], double a[3]) {
  const double w = 2.0 * 3.14159265358979323846 / c->period;
  double th, thd, thdd;
  if (t < 0.0) t = 0.0;
  if (c->ramp > 0.0 && t < c->ramp) {
    double s = t / c->ramp;
    th = c->phase0 + w * c->ramp * (s * s * s - 0.5 * s * s * s * s);
    thd = w * s * s * (3.0 - 2.0 * s);
    thdd = w * 6.0 * s * (1.0 - s) / c->ramp;
  } else {
    th = c->phase0 + w * (t - 0.5 * c->ramp);
    thd = w;
    thdd = 0.0;
  }
  double cs = cos(th), sn = sin(th), r = c->radius;
  for (int i = 0; i < 3; ++i) {
    double radial = cs * c->u[i] + sn * c->v[i];   /* d/dth: tangential */
    double tangent = -sn * c->u[i] + cs * c->v[i];
    if (x) x[i] = c->center[i] + r * radial;
    if (v) v[i] = r * thd * tangent;
    if (a) a[i] = r * thdd * tangent - r * thd * thd * radial;
  }
}
