/* Talus `trot` controller (see trot.h): phase clock, Raibert foot placement,
 * cycloid swing, damped-least-squares leg IK on a kinematic copy, implicit PD
 * plus stance-force feedforward. Public API only; allocation in init only. */
#include "trot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TROT_PI 3.14159265358979323846
/* Largest touch-down offset from the nominal foot position, m. */
#define TROT_MAX_STEP_OFFSET 0.15
/* Largest joint change of one IK iteration, rad. */
#define TROT_MAX_IK_STEP 0.3
/* Time constant of the low-pass filter on the measured base velocity, s. */
#define TROT_VEL_FILTER_TAU 0.1
/* Leg IK tolerance at init (m) and iterations allowed there. */
#define TROT_INIT_IK_TOL 1e-3
#define TROT_INIT_IK_ITER 100
/* Largest speed correction of the integral speed feedback, m/s. */
#define TROT_MAX_V_INT 0.5
/* Force distribution: weight of horizontal against vertical components, and
 * the friction coefficient assumed. */
#define TROT_FORCE_WH 4.0
#define TROT_FORCE_MU 0.6
/* Largest joint acceleration used by the swing feedforward, rad/s^2. */
#define TROT_MAX_QDD 500.0


/* Errors in Talus' form, "<element>: text" (tl_error_set). */
#define trot_error(err, status, element, ...) tl_error_set(err, status, NULL, 0, element, __VA_ARGS__)

/* ------------------------------------------------------------ small math */

static void mat3_mulv(double y[3], const double R[9], const double x[3]) {
  for (int i = 0; i < 3; ++i) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

static void mat3_tmulv(double y[3], const double R[9], const double x[3]) {
  for (int i = 0; i < 3; ++i) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}

/* Rotation about z by yaw (row-major). */
static void rot_z(double R[9], double yaw) {
  double c = cos(yaw), s = sin(yaw);
  double r[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  memcpy(R, r, sizeof(r));
}

/* Rodrigues: rotation by the rotation vector w (rad). */
static void rot_vec(double R[9], const double w[3]) {
  double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  double a, b;
  if (th < 1e-8) {
    a = 1.0;
    b = 0.5;
  } else {
    a = sin(th) / th;
    b = (1.0 - cos(th)) / (th * th);
  }
  double K[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double kk = 0;
      for (int k = 0; k < 3; ++k) kk += K[3 * i + k] * K[3 * k + j];
      R[3 * i + j] = (i == j ? 1.0 : 0.0) + a * K[3 * i + j] + b * kk;
    }
}

/* Rotation vector of a rotation matrix (log map), angle < pi. */
static void rot_log(double w[3], const double R[9]) {
  double c = 0.5 * (R[0] + R[4] + R[8] - 1.0);
  if (c > 1.0) c = 1.0;
  if (c < -1.0) c = -1.0;
  double th = acos(c);
  double s = sin(th);
  double f = th < 1e-8 ? 0.5 : th / (2.0 * s);
  w[0] = f * (R[7] - R[5]);
  w[1] = f * (R[2] - R[6]);
  w[2] = f * (R[3] - R[1]);
}

/* Solve the symmetric positive definite 3 x 3 system A x = b (Cramer). */
static int solve3(const double A[9], const double b[3], double x[3]) {
  double c0 = A[4] * A[8] - A[5] * A[7];
  double c1 = A[5] * A[6] - A[3] * A[8];
  double c2 = A[3] * A[7] - A[4] * A[6];
  double det = A[0] * c0 + A[1] * c1 + A[2] * c2;
  if (!(fabs(det) > 1e-300)) return -1;
  double inv[9] = {c0,
                   A[2] * A[7] - A[1] * A[8],
                   A[1] * A[5] - A[2] * A[4],
                   c1,
                   A[0] * A[8] - A[2] * A[6],
                   A[2] * A[3] - A[0] * A[5],
                   c2,
                   A[1] * A[6] - A[0] * A[7],
                   A[0] * A[4] - A[1] * A[3]};
  for (int i = 0; i < 3; ++i) x[i] = (inv[3 * i] * b[0] + inv[3 * i + 1] * b[1] + inv[3 * i + 2] * b[2]) / det;
  return 0;
}

/* Damped least squares: dq = J^T (J J^T + lambda^2 I)^-1 e, J 3 x 3 row-major. */
static void dls3(const double J[9], const double e[3], double lambda, double dq[3]) {
  double A[9], y[3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += J[3 * i + k] * J[3 * j + k];
      A[3 * i + j] = s + (i == j ? lambda * lambda : 0.0);
    }
  if (solve3(A, e, y) != 0) {
    dq[0] = dq[1] = dq[2] = 0.0;
    return;
  }
  for (int k = 0; k < 3; ++k) dq[k] = J[k] * y[0] + J[3 + k] * y[1] + J[6 + k] * y[2];
}

static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* ------------------------------------------------------------ parameters */

tl_trot_params tl_trot_default_params(void) {
  tl_trot_params p;
  memset(&p, 0, sizeof(p));
  p.speed = 0.5;
  p.period = 0.45;
  p.duty = 0.5;
  p.step_height = 0.08;
  p.kp = 150.0;
  p.kd = 4.0;
  p.depth = 0.0;
  p.stand_time = 0.5;
  p.ramp_time = 1.0;
  p.k_raibert = 0.1;
  p.k_attitude = 0.0;
  p.k_yaw = 1.0;
  p.weight_ff = 1.0;
  p.k_inertia = 1.0;
  p.k_speed = 1.0;
  p.att_kp = 36.0;
  p.att_kd = 10.0;
  p.ik_iterations = 3;
  p.ik_damping = 0.01;
  return p;
}

/* Range check of every parameter; returns the first bad name or NULL. */
static const char *params_bad(const tl_trot_params *p) {
  if (!isfinite(p->speed) || fabs(p->speed) > 5.0) return "speed";
  if (!(p->period > 0.05 && p->period < 10.0)) return "period";
  if (!(p->duty > 0.05 && p->duty < 0.95)) return "duty";
  if (!(p->step_height >= 0.0 && p->step_height < 1.0)) return "step_height";
  if (!(p->kp >= 0.0 && isfinite(p->kp))) return "kp";
  if (!(p->kd >= 0.0 && isfinite(p->kd))) return "kd";
  if (!(p->depth >= 0.0 && p->depth < 10.0)) return "depth";
  if (!(p->stand_time >= 0.0 && isfinite(p->stand_time))) return "stand_time";
  if (!(p->ramp_time >= 0.0 && isfinite(p->ramp_time))) return "ramp_time";
  if (!(fabs(p->k_raibert) < 10.0)) return "k_raibert";
  if (!(p->k_attitude >= 0.0 && p->k_attitude < 10.0)) return "k_attitude";
  if (!(p->k_yaw >= 0.0 && p->k_yaw < 100.0)) return "k_yaw";
  if (!(p->weight_ff >= 0.0 && p->weight_ff <= 1.5)) return "weight_ff";
  if (!(p->k_inertia >= 0.0 && p->k_inertia <= 2.0)) return "k_inertia";
  if (!(p->k_speed >= 0.0 && p->k_speed <= 20.0)) return "k_speed";
  if (!(p->att_kp >= 0.0 && p->att_kp <= 1e4)) return "att_kp";
  if (!(p->att_kd >= 0.0 && p->att_kd <= 1e3)) return "att_kd";
  if (!(p->ik_iterations >= 1 && p->ik_iterations <= 100)) return "ik_iterations";
  if (!(p->ik_damping >= 0.0 && p->ik_damping < 1.0)) return "ik_damping";
  return NULL;
}

tl_status tl_trot_params_set(tl_trot_params *p, const char *key, double value, tl_error *err) {
  if (!p || !key) return trot_error(err, TL_ERR_ARGUMENT, "params", "NULL argument");
  tl_trot_params t = *p;
  if (strcmp(key, "speed") == 0) t.speed = value;
  else if (strcmp(key, "period") == 0) t.period = value;
  else if (strcmp(key, "duty") == 0) t.duty = value;
  else if (strcmp(key, "step_height") == 0) t.step_height = value;
  else if (strcmp(key, "kp") == 0) t.kp = value;
  else if (strcmp(key, "kd") == 0) t.kd = value;
  else if (strcmp(key, "depth") == 0) t.depth = value;
  else if (strcmp(key, "stand_time") == 0) t.stand_time = value;
  else if (strcmp(key, "ramp_time") == 0) t.ramp_time = value;
  else if (strcmp(key, "k_raibert") == 0) t.k_raibert = value;
  else if (strcmp(key, "k_attitude") == 0) t.k_attitude = value;
  else if (strcmp(key, "k_yaw") == 0) t.k_yaw = value;
  else if (strcmp(key, "weight_ff") == 0) t.weight_ff = value;
  else if (strcmp(key, "k_inertia") == 0) t.k_inertia = value;
  else if (strcmp(key, "k_speed") == 0) t.k_speed = value;
  else if (strcmp(key, "att_kp") == 0) t.att_kp = value;
  else if (strcmp(key, "att_kd") == 0) t.att_kd = value;
  else if (strcmp(key, "ik_iterations") == 0) {
    if (value != floor(value) || !(value >= 1 && value <= 100))
      return trot_error(err, TL_ERR_ARGUMENT, key, "must be an integer in [1, 100] (got %g)", value);
    t.ik_iterations = (int)value;
  } else if (strcmp(key, "ik_damping") == 0) t.ik_damping = value;
  else
    return trot_error(err, TL_ERR_ARGUMENT, key,
                      "unknown parameter (speed, period, duty, step_height, kp, kd, depth, "
                      "stand_time, ramp_time, k_raibert, k_attitude, k_yaw, weight_ff, "
                      "k_inertia, k_speed, att_kp, att_kd, ik_iterations, ik_damping)");
  const char *bad = params_bad(&t);
  if (bad) return trot_error(err, TL_ERR_ARGUMENT, key, "value %g out of range", value);
  *p = t;
  return TL_OK;
}

/* ------------------------------------------------------------ setup */

static int is_one_dof(tl_joint_type t) { return t == TL_JOINT_REVOLUTE || t == TL_JOINT_PRISMATIC; }

/* Fill leg->dof / qi / limits from the foot body: the chain of 3 one-DOF
 * joints up to the base. Returns 0 or -1. */
static int leg_chain(const tl_model *m, tl_trot_leg *leg) {
  int b = leg->body;
  int chain[3];
  for (int k = 2; k >= 0; --k) {
    if (b <= 0 || !is_one_dof(tl_model_joint_type(m, b))) return -1;
    chain[k] = b;
    b = tl_model_body_parent(m, b);
  }
  if (b != 0) return -1;
  for (int k = 0; k < 3; ++k) {
    leg->dof[k] = tl_model_joint_u_index(m, chain[k]);
    leg->qi[k] = tl_model_joint_q_index(m, chain[k]);
    if (tl_model_dof_limits(m, leg->dof[k], &leg->lower[k], &leg->upper[k], NULL) != 0 ||
        !(leg->lower[k] < leg->upper[k])) {
      leg->lower[k] = -INFINITY;
      leg->upper[k] = INFINITY;
    }
  }
  return 0;
}

/* The k-th body of the leg chain (0 = hip), from the foot body. */
static int chain_body(const tl_model *m, const tl_trot_leg *leg, int k) {
  int b = leg->body;
  for (int j = 2; j > k; --j) b = tl_model_body_parent(m, b);
  return b;
}

/* Foot point of `body` in its frame from its lowest primitive geom (or frame). */
static int foot_point_auto(tl_system *sys, int body, double local[3], double *radius) {
  const tl_model *m = tl_system_model(sys);
  double bp[3], bR[9];
  if (tl_system_body_pose(sys, body, bp, bR, NULL) != TL_OK) return -1;
  double best = INFINITY, world[3] = {0, 0, 0};
  *radius = 0.0;
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    tl_geom_type type;
    int gb = -1;
    double size[3], pos[3], R[9], lo[3], hi[3];
    if (tl_model_geom(m, g, &type, &gb, size, pos, R, NULL) != 0 || gb != body) continue;
    if (type != TL_GEOM_SPHERE && type != TL_GEOM_BOX && type != TL_GEOM_CAPSULE &&
        type != TL_GEOM_CYLINDER)
      continue;
    if (tl_system_geom_aabb(sys, g, lo, hi, NULL) != TL_OK) continue;
    if (lo[2] >= best) continue;
    best = lo[2];
    if (type == TL_GEOM_SPHERE) {
      double gp[3], gR[9];
      if (tl_system_geom_pose(sys, g, gp, gR, NULL) != TL_OK) continue;
      memcpy(world, gp, sizeof(gp));
      *radius = size[0];
    } else {
      world[0] = 0.5 * (lo[0] + hi[0]);
      world[1] = 0.5 * (lo[1] + hi[1]);
      world[2] = lo[2];
      *radius = 0.0;
    }
  }
  if (!isfinite(best)) { /* no primitive geom: lowest frame on the body */
    for (int f = 0; f < tl_model_nframe(m); ++f) {
      double fp[3], fR[9];
      if (tl_model_frame_body(m, f) != body) continue;
      if (tl_system_frame_pose(sys, f, fp, fR, NULL) != TL_OK) continue;
      if (fp[2] < best) {
        best = fp[2];
        memcpy(world, fp, sizeof(fp));
      }
    }
  }
  if (!isfinite(best)) return -1;
  double d[3] = {world[0] - bp[0], world[1] - bp[1], world[2] - bp[2]};
  mat3_tmulv(local, bR, d);
  return 0;
}

/* Candidate feet: leaf bodies (automatic) or the named frames. */
static tl_status find_feet(tl_trot_controller *c, const tl_trot_params *p, tl_trot_leg cand[4],
                           tl_error *err) {
  tl_system *sys = c->sys;
  const tl_model *m = tl_system_model(sys);
  int nb = tl_model_nbody(m);
  int named = p->foot_frames[0] || p->foot_frames[1] || p->foot_frames[2] || p->foot_frames[3];
  if (named) {
    for (int i = 0; i < 4; ++i) {
      int f = p->foot_frames[i] ? tl_model_frame_index(m, p->foot_frames[i]) : -1;
      if (f < 0)
        return trot_error(err, TL_ERR_ARGUMENT, "foot_frames", "foot frame %d ('%s') not found", i,
                          p->foot_frames[i] ? p->foot_frames[i] : "(null)");
      double fp[3], fR[9], bp[3], bR[9];
      cand[i].body = tl_model_frame_body(m, f);
      if (tl_system_frame_pose(sys, f, fp, fR, err) != TL_OK ||
          tl_system_body_pose(sys, cand[i].body, bp, bR, err) != TL_OK)
        return err ? err->status : TL_ERR_ARGUMENT;
      double d[3] = {fp[0] - bp[0], fp[1] - bp[1], fp[2] - bp[2]};
      mat3_tmulv(cand[i].foot_local, bR, d);
      cand[i].radius = 0.0;
    }
    return TL_OK;
  }
  int n = 0;
  for (int b = 1; b < nb; ++b) {
    int leaf = 1;
    for (int k = 1; k < nb && leaf; ++k)
      if (tl_model_body_parent(m, k) == b) leaf = 0;
    if (!leaf) continue;
    if (n == 4)
      return trot_error(err, TL_ERR_ARGUMENT, "sys",
                        "more than four leaf bodies: not a quadruped, or name its feet "
                        "(trot:feet=LF/RF/LH/RH on the command line, params.foot_frames)");
    cand[n].body = b;
    if (foot_point_auto(sys, b, cand[n].foot_local, &cand[n].radius) != 0)
      return trot_error(err, TL_ERR_ARGUMENT, "sys", "leaf body '%s' has no geom or frame for a foot",
                        tl_model_body_name(m, b));
    ++n;
  }
  if (n != 4)
    return trot_error(err, TL_ERR_ARGUMENT, "sys", "%d leaf bodies: not a quadruped", n);
  return TL_OK;
}

/* World position of a leg's foot point on system s. */
static tl_status foot_world(tl_system *s, const tl_trot_leg *leg, double p[3], tl_error *err) {
  double bp[3], bR[9], d[3];
  tl_status st = tl_system_body_pose(s, leg->body, bp, bR, err);
  if (st != TL_OK) return st;
  mat3_mulv(d, bR, leg->foot_local);
  for (int i = 0; i < 3; ++i) p[i] = bp[i] + d[i];
  return TL_OK;
}

/* Yaw of a rotation matrix (rad). */
static double yaw_of(const double R[9]) { return atan2(R[3], R[0]); }

/* Sort the candidates into LF RF LH RH by the foot position in the yaw frame. */
static tl_status assign_legs(tl_trot_controller *c, tl_trot_leg cand[4], tl_error *err) {
  double bp[3], bR[9], Rz[9], r[4][3];
  tl_status st = tl_system_body_pose(c->sys, 0, bp, bR, err);
  if (st != TL_OK) return st;
  rot_z(Rz, yaw_of(bR));
  double mx = 0, my = 0;
  for (int i = 0; i < 4; ++i) {
    double pw[3], d[3];
    if ((st = foot_world(c->sys, &cand[i], pw, err)) != TL_OK) return st;
    for (int k = 0; k < 3; ++k) d[k] = pw[k] - bp[k];
    mat3_tmulv(r[i], Rz, d);
    mx += 0.25 * r[i][0];
    my += 0.25 * r[i][1];
  }
  int used[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    int front = r[i][0] > mx, left = r[i][1] > my;
    int slot = front ? (left ? TL_TROT_LF : TL_TROT_RF) : (left ? TL_TROT_LH : TL_TROT_RH);
    if (used[slot])
      return trot_error(err, TL_ERR_ARGUMENT, "sys",
                        "the feet are not one per quadrant (front/hind x left/right)");
    used[slot] = 1;
    c->leg[slot] = cand[i];
    memcpy(c->leg[slot].start, r[i], sizeof(r[i]));
  }
  return TL_OK;
}

/* One damped-least-squares IK pass for every leg on the kinematic copy: the
 * targets tgt[leg] are in the base frame. Leaves the last Jacobian blocks in
 * J[leg] (3 x 3) and the largest residual (before the step) in *res. */
static tl_status ik_pass(tl_trot_controller *c, const double tgt[4][3], double J[4][9],
                         double *res, tl_error *err) {
  tl_status st = tl_system_set_state(c->kin, c->qk, c->nq, c->uk, c->nv, err);
  if (st != TL_OK) return st;
  double worst = 0.0;
  for (int l = 0; l < 4; ++l) {
    tl_trot_leg *leg = &c->leg[l];
    double p[3], e[3], dq[3];
    if ((st = foot_world(c->kin, leg, p, err)) != TL_OK) return st;
    if ((st = tl_system_point_jacobian(c->kin, leg->body, p, c->Jp, NULL, c->nv, err)) != TL_OK)
      return st;
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) J[l][3 * i + k] = c->Jp[i * c->nv + leg->dof[k]];
    for (int i = 0; i < 3; ++i) e[i] = tgt[l][i] - p[i];
    double n = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    if (n > worst) worst = n;
    dls3(J[l], e, c->p.ik_damping, dq);
    for (int k = 0; k < 3; ++k) {
      double v = c->qk[leg->qi[k]] + clamp(dq[k], -TROT_MAX_IK_STEP, TROT_MAX_IK_STEP);
      c->qk[leg->qi[k]] = clamp(v, leg->lower[k], leg->upper[k]);
    }
  }
  if (res) *res = worst;
  return TL_OK;
}

/* Nominal stance: x under the second joint of the leg, y of the initial
 * foot, z = -depth. */
static tl_status nominal_stance(tl_trot_controller *c, const tl_trot_params *p, tl_error *err) {
  const tl_model *m = tl_system_model(c->sys);
  double bp[3], bR[9], Rz[9];
  tl_status st = tl_system_body_pose(c->sys, 0, bp, bR, err);
  if (st != TL_OK) return st;
  rot_z(Rz, yaw_of(bR));
  double depth0 = 0.0, reach = INFINITY;
  for (int l = 0; l < 4; ++l) {
    tl_trot_leg *leg = &c->leg[l];
    double pj[3][3], R[9], d[3], r[3];
    for (int k = 0; k < 3; ++k)
      if ((st = tl_system_body_pose(c->sys, chain_body(m, leg, k), pj[k], R, err)) != TL_OK)
        return st;
    double pf[3];
    if ((st = foot_world(c->sys, leg, pf, err)) != TL_OK) return st;
    for (int k = 0; k < 3; ++k) d[k] = pj[1][k] - bp[k];
    mat3_tmulv(r, Rz, d);
    leg->nominal[0] = r[0];
    leg->nominal[1] = leg->start[1];
    depth0 += -0.25 * leg->start[2];
    double a = 0, b = 0;
    for (int k = 0; k < 3; ++k) {
      a += (pj[2][k] - pj[1][k]) * (pj[2][k] - pj[1][k]);
      b += (pf[k] - pj[2][k]) * (pf[k] - pj[2][k]);
    }
    double lr = sqrt(a) + sqrt(b);
    if (lr < reach) reach = lr;
  }
  c->depth = p->depth > 0.0 ? p->depth : fmin(depth0, 0.8 * reach);
  if (!(c->depth > 0.0))
    return trot_error(err, TL_ERR_ARGUMENT, "sys", "the feet are not below the base (depth %g m)",
                      c->depth);
  for (int l = 0; l < 4; ++l) c->leg[l].nominal[2] = -c->depth;
  return TL_OK;
}

/* Distance of leg l's foot from tgt on the kinematic copy at qk. */
static tl_status leg_residual(tl_trot_controller *c, int l, const double tgt[3], double *res,
                              tl_error *err) {
  double p[3];
  tl_status st = tl_system_set_state(c->kin, c->qk, c->nq, c->uk, c->nv, err);
  if (st == TL_OK) st = foot_world(c->kin, &c->leg[l], p, err);
  if (st != TL_OK) return st;
  *res = sqrt((p[0] - tgt[0]) * (p[0] - tgt[0]) + (p[1] - tgt[1]) * (p[1] - tgt[1]) +
              (p[2] - tgt[2]) * (p[2] - tgt[2]));
  return TL_OK;
}

/* Can every leg reach its nominal stance by damped least squares from the
 * current joints? A leg that cannot (typically a straight, singular leg) is
 * solved again from its knee bent both ways; the solution with the smaller
 * error wins, the knee toward the body centre (the "X" stance) breaking
 * ties. seeded[l] = 1 for those legs, whose solution is left in qk;
 * the other legs get their current joints back in qk. */
static tl_status initial_ik(tl_trot_controller *c, int seeded[4], tl_error *err) {
  const tl_model *m = tl_system_model(c->sys);
  double tgt[4][3], J[4][9];
  for (int l = 0; l < 4; ++l) memcpy(tgt[l], c->leg[l].nominal, sizeof(tgt[l]));
  tl_status st;
  for (int it = 0; it < TROT_INIT_IK_ITER; ++it)
    if ((st = ik_pass(c, tgt, J, NULL, err)) != TL_OK) return st;
  for (int l = 0; l < 4; ++l) {
    double res;
    if ((st = leg_residual(c, l, tgt[l], &res, err)) != TL_OK) return st;
    seeded[l] = res > TROT_INIT_IK_TOL;
  }
  for (int l = 0; l < 4; ++l) {
    tl_trot_leg *leg = &c->leg[l];
    if (!seeded[l]) continue;
    double best = INFINITY, best_q[3] = {0, 0, 0};
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      for (int k = 0; k < 3; ++k) c->qk[leg->qi[k]] = c->q[leg->qi[k]];
      c->qk[leg->qi[2]] = clamp(c->q[leg->qi[2]] + 0.6 * sgn, leg->lower[2], leg->upper[2]);
      for (int it = 0; it < TROT_INIT_IK_ITER; ++it)
        if ((st = ik_pass(c, tgt, J, NULL, err)) != TL_OK) return st;
      double res, kp[3], kR[9];
      if ((st = leg_residual(c, l, tgt[l], &res, err)) != TL_OK) return st;
      if ((st = tl_system_body_pose(c->kin, chain_body(m, leg, 2), kp, kR, err)) != TL_OK) return st;
      double score = res + (fabs(kp[0]) < fabs(tgt[l][0]) ? 0.0 : TROT_INIT_IK_TOL);
      if (score < best) {
        best = score;
        for (int k = 0; k < 3; ++k) best_q[k] = c->qk[leg->qi[k]];
      }
    }
    for (int k = 0; k < 3; ++k) c->qk[leg->qi[k]] = best_q[k];
  }
  for (int l = 0; l < 4; ++l)
    for (int k = 0; k < 3 && !seeded[l]; ++k) c->qk[c->leg[l].qi[k]] = c->q[c->leg[l].qi[k]];
  return TL_OK;
}

static tl_status alloc_arrays(tl_trot_controller *c, tl_error *err) {
  size_t nq = (size_t)c->nq + 1, nv = (size_t)c->nv + 1;
  c->q = calloc(nq, sizeof(double));
  c->qk = calloc(nq, sizeof(double));
  c->q_target = calloc(nq, sizeof(double));
  c->u = calloc(nv, sizeof(double));
  c->uk = calloc(nv, sizeof(double));
  c->u_target = calloc(nv, sizeof(double));
  c->kp = calloc(nv, sizeof(double));
  c->kd = calloc(nv, sizeof(double));
  c->tau = calloc(nv, sizeof(double));
  c->h = calloc(nv, sizeof(double));
  c->Jp = calloc(3 * nv, sizeof(double));
  c->M = calloc(nv * nv, sizeof(double));
  c->u_target_prev = calloc(nv, sizeof(double));
  if (!c->q || !c->qk || !c->q_target || !c->u || !c->uk || !c->u_target || !c->kp || !c->kd ||
      !c->tau || !c->h || !c->Jp || !c->M || !c->u_target_prev)
    return trot_error(err, TL_ERR_MEMORY, "ctrl", "out of memory");
  return TL_OK;
}

static tl_status build_kin_copy(tl_trot_controller *c, tl_error *err) {
  tl_status st = tl_world_create(&c->kin_world, err);
  if (st != TL_OK) return st;
  if ((st = tl_world_add_system(c->kin_world, tl_system_model(c->sys), &c->kin, err)) != TL_OK)
    return st;
  /* base at the origin, identity orientation: world frame == base frame */
  memcpy(c->qk, c->q, (size_t)c->nq * sizeof(double));
  c->qk[0] = c->qk[1] = c->qk[2] = 0.0;
  c->qk[3] = 1.0;
  c->qk[4] = c->qk[5] = c->qk[6] = 0.0;
  return TL_OK;
}

static tl_status trot_setup(tl_trot_controller *c, const tl_trot_params *p, tl_error *err) {
  const tl_model *m = tl_system_model(c->sys);
  if (tl_model_joint_type(m, 0) != TL_JOINT_FLOATING || c->nv < 18)
    return trot_error(err, TL_ERR_ARGUMENT, "sys",
                      "needs a floating-base robot with four 3-DOF legs (nv %d)", c->nv);
  tl_status st = alloc_arrays(c, err);
  if (st != TL_OK) return st;
  if ((st = tl_system_get_state(c->sys, c->q, c->nq, c->u, c->nv, err)) != TL_OK) return st;
  tl_trot_leg cand[4];
  memset(cand, 0, sizeof(cand));
  if ((st = find_feet(c, p, cand, err)) != TL_OK) return st;
  for (int i = 0; i < 4; ++i)
    if (leg_chain(m, &cand[i]) != 0)
      return trot_error(err, TL_ERR_ARGUMENT, "sys",
                        "the foot body '%s' is not carried by exactly 3 one-DOF joints below the "
                        "floating base",
                        tl_model_body_name(m, cand[i].body));
  if ((st = assign_legs(c, cand, err)) != TL_OK) return st;
  if ((st = nominal_stance(c, p, err)) != TL_OK) return st;
  if ((st = build_kin_copy(c, err)) != TL_OK) return st;
  /* the IK starts from the current joints, or, for a leg that could not
   * reach the nominal stance from there, from the bent-knee solution */
  int seeded[4];
  if ((st = initial_ik(c, seeded, err)) != TL_OK) return st;
  for (int l = 0; l < 4; ++l) {
    tl_trot_leg *leg = &c->leg[l];
    leg->stance = 1;
    memcpy(leg->p_des, leg->start, sizeof(leg->start));
    memcpy(leg->p_lo, leg->start, sizeof(leg->start));
    memcpy(leg->p_td, leg->nominal, sizeof(leg->nominal));
  }
  /* gains: kp / kd on every non-base DOF; hold the current q */
  for (int k = 0; k < c->nv; ++k) {
    c->kp[k] = k < 6 ? 0.0 : p->kp;
    c->kd[k] = k < 6 ? 0.0 : p->kd;
  }
  memcpy(c->q_target, c->q, (size_t)c->nq * sizeof(double));
  if ((st = tl_system_set_pd_gains(c->sys, c->kp, c->kd, c->nv, err)) != TL_OK) return st;
  return tl_system_set_pd_targets(c->sys, c->q_target, c->nq, c->u_target, c->nv, err);
}

tl_status tl_trot_init(tl_trot_controller *ctrl, tl_system *sys, const tl_trot_params *params,
                       tl_error *err) {
  if (!ctrl) return trot_error(err, TL_ERR_ARGUMENT, "ctrl", "NULL controller");
  memset(ctrl, 0, sizeof(*ctrl));
  if (!sys) return trot_error(err, TL_ERR_ARGUMENT, "sys", "NULL system");
  tl_trot_params p = params ? *params : tl_trot_default_params();
  const char *bad = params_bad(&p);
  if (bad) return trot_error(err, TL_ERR_ARGUMENT, bad, "parameter out of range");
  ctrl->sys = sys;
  ctrl->nq = tl_system_nq(sys);
  ctrl->nv = tl_system_nv(sys);
  ctrl->mass = tl_model_total_mass(tl_system_model(sys));
  tl_status st = trot_setup(ctrl, &p, err);
  if (st != TL_OK) {
    tl_trot_free(ctrl);
    return st;
  }
  for (int i = 0; i < 4; ++i) p.foot_frames[i] = NULL; /* not kept */
  ctrl->p = p;
  return TL_OK;
}

tl_status tl_trot_set_command(tl_trot_controller *ctrl, double lateral, double yaw_rate, tl_error *err) {
  if (!ctrl || !ctrl->sys) return trot_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!isfinite(lateral) || fabs(lateral) > 1.0)
    return trot_error(err, TL_ERR_ARGUMENT, "lateral", "must be finite and |lateral| <= 1 m/s");
  if (!isfinite(yaw_rate) || fabs(yaw_rate) > 2.0)
    return trot_error(err, TL_ERR_ARGUMENT, "yaw_rate", "must be finite and |yaw_rate| <= 2 rad/s");
  ctrl->lateral_cmd = lateral;
  ctrl->yaw_rate_cmd = yaw_rate;
  return TL_OK;
}

tl_status tl_trot_set_speed(tl_trot_controller *ctrl, double speed, tl_error *err) {
  if (!ctrl || !ctrl->sys) return trot_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!isfinite(speed) || fabs(speed) > 5.0)
    return trot_error(err, TL_ERR_ARGUMENT, "speed", "must be finite and |speed| <= 5 m/s");
  ctrl->p.speed = speed;
  return TL_OK;
}

void tl_trot_free(tl_trot_controller *ctrl) {
  if (!ctrl) return;
  tl_world_free(ctrl->kin_world);
  free(ctrl->q);
  free(ctrl->qk);
  free(ctrl->q_target);
  free(ctrl->u);
  free(ctrl->uk);
  free(ctrl->u_target);
  free(ctrl->kp);
  free(ctrl->kd);
  free(ctrl->tau);
  free(ctrl->h);
  free(ctrl->Jp);
  free(ctrl->M);
  free(ctrl->u_target_prev);
  memset(ctrl, 0, sizeof(*ctrl));
}

/* ------------------------------------------------------------ the tick */

/* Measured base state in the yaw frame. */
typedef struct trot_base {
  double pos[3], R[9];  /* base pose (world) */
  double Rz[9];         /* yaw frame */
  double yaw;
  double v_yaw[3];      /* base linear velocity in the yaw frame */
  double foot[4][3];    /* measured foot points relative to the base origin, yaw frame */
  double Rmap[9];       /* base-from-yaw mapping with the attitude gain */
  double att[3];        /* rotation vector from the base attitude to level, world, rad */
} trot_base;

static tl_status read_base(tl_trot_controller *c, trot_base *b, tl_error *err) {
  tl_status st = tl_system_get_state(c->sys, c->q, c->nq, c->u, c->nv, err);
  if (st != TL_OK) return st;
  if ((st = tl_system_body_pose(c->sys, 0, b->pos, b->R, err)) != TL_OK) return st;
  b->yaw = yaw_of(b->R);
  rot_z(b->Rz, b->yaw);
  mat3_tmulv(b->v_yaw, b->Rz, c->u); /* u[0..2]: base origin velocity, world */
  /* R_rp = Rz^T R: roll and pitch; map yaw-frame vectors into the base frame
   * with the rotation scaled by k_attitude: r_base = exp(k log R_rp)^T r_yaw */
  double Rrp[9], w[3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Rrp[3 * i + j] = b->Rz[i] * b->R[j] + b->Rz[3 + i] * b->R[3 + j] + b->Rz[6 + i] * b->R[6 + j];
  rot_log(w, Rrp);
  double wz[3];
  mat3_mulv(wz, b->Rz, w);
  for (int i = 0; i < 3; ++i) b->att[i] = -wz[i];
  for (int i = 0; i < 3; ++i) w[i] *= c->p.k_attitude;
  rot_vec(b->Rmap, w);
  for (int l = 0; l < 4; ++l) {
    double p[3], d[3];
    if ((st = foot_world(c->sys, &c->leg[l], p, err)) != TL_OK) return st;
    for (int i = 0; i < 3; ++i) d[i] = p[i] - b->pos[i];
    mat3_tmulv(b->foot[l], b->Rz, d);
  }
  return TL_OK;
}

static double smoothstep(double x) {
  x = clamp(x, 0.0, 1.0);
  return x * x * (3.0 - 2.0 * x);
}

/* Stand phase: every foot on the ground, height moving to the nominal depth. */
static void plan_stand(tl_trot_controller *c, double t) {
  double s = c->p.stand_time > 0 ? smoothstep(t / c->p.stand_time) : 1.0;
  double ds = 0.0;
  if (c->p.stand_time > 0 && t < c->p.stand_time) {
    double x = t / c->p.stand_time;
    ds = 6.0 * x * (1.0 - x) / c->p.stand_time;
  }
  for (int l = 0; l < 4; ++l) {
    tl_trot_leg *leg = &c->leg[l];
    leg->stance = 1;
    leg->p_des[0] = leg->start[0];
    leg->p_des[1] = leg->start[1];
    leg->p_des[2] = leg->start[2] + (leg->nominal[2] - leg->start[2]) * s;
    leg->v_des[0] = leg->v_des[1] = 0.0;
    leg->v_des[2] = (leg->nominal[2] - leg->start[2]) * ds;
  }
}

/* Raibert touch-down point of a swing foot (yaw frame). */
static void touchdown_point(const tl_trot_controller *c, const tl_trot_leg *leg, const double v[3],
                            double t_stance, double p[3]) {
  double vc[2] = {c->v_cmd, c->lateral_cmd};
  for (int i = 0; i < 2; ++i) {
    double off = 0.5 * t_stance * v[i] + c->p.k_raibert * (v[i] - vc[i]);
    p[i] = leg->nominal[i] + clamp(off, -TROT_MAX_STEP_OFFSET, TROT_MAX_STEP_OFFSET);
  }
  p[2] = leg->nominal[2];
}

/* Gait phase: swing / stance plans of every leg. */
static void plan_gait(tl_trot_controller *c, double tg, double dt, const trot_base *b,
                      const double v_filt[3], const double foot_yaw[4][3]) {
  const double T = c->p.period, duty = c->p.duty;
  const double t_swing = (1.0 - duty) * T, t_stance = duty * T;
  double phase = fmod(tg / T, 1.0);
  /* yaw-rate correction turning the stance feet against the heading error */
  double dyaw = remainder(c->yaw_ref - b->yaw, 2.0 * TROT_PI);
  double wz = c->p.k_yaw * dyaw;
  if (c->yaw_rate_cmd != 0.0) wz += c->yaw_rate_cmd; /* turning: the feet sweep with the heading */
  for (int l = 0; l < 4; ++l) {
    tl_trot_leg *leg = &c->leg[l];
    double off = (l == TL_TROT_LF || l == TL_TROT_RH) ? 0.0 : 0.5;
    double ph = fmod(phase + off, 1.0);
    int stance = ph >= 1.0 - duty;
    if (!stance && leg->stance) memcpy(leg->p_lo, leg->p_des, sizeof(leg->p_lo)); /* lift-off */
    if (stance && !leg->stance) {
      /* touch-down: the stance plan starts where the foot actually is, so the
       * stance legs regulate the speed, not the swing tracking error */
      leg->p_des[0] = foot_yaw[l][0];
      leg->p_des[1] = foot_yaw[l][1];
    }
    leg->stance = stance;
    if (stance) {
      /* foot fixed on the ground: moves backwards relative to the base */
      double vx = -(c->v_cmd + c->v_int[0]) + wz * leg->p_des[1];
      double vy = -c->v_int[1] - c->lateral_cmd - wz * leg->p_des[0];
      leg->v_des[0] = vx;
      leg->v_des[1] = vy;
      leg->v_des[2] = 0.0;
      leg->p_des[0] += vx * dt;
      leg->p_des[1] += vy * dt;
      leg->p_des[2] = leg->nominal[2];
    } else {
      double tau = ph / (1.0 - duty);
      touchdown_point(c, leg, v_filt, t_stance, leg->p_td);
      /* horizontal: cubic Hermite from lift-off to touch-down with the foot
       * moving at the stance velocity -v_cmd at both ends (ground speed
       * matching); vertical: linear plus the (1 - cos) lift */
      double t2 = tau * tau, t3 = t2 * tau;
      double h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + tau, h01 = -2 * t3 + 3 * t2,
             h11 = t3 - t2;
      double d00 = 6 * t2 - 6 * tau, d10 = 3 * t2 - 4 * tau + 1, d01 = -6 * t2 + 6 * tau,
             d11 = 3 * t2 - 2 * tau;
      double vend[2] = {-(c->v_cmd + c->v_int[0]), -c->v_int[1] - c->lateral_cmd};
      for (int i = 0; i < 2; ++i) {
        leg->p_des[i] = h00 * leg->p_lo[i] + h10 * t_swing * vend[i] + h01 * leg->p_td[i] +
                        h11 * t_swing * vend[i];
        leg->v_des[i] = (d00 * leg->p_lo[i] + d01 * leg->p_td[i]) / t_swing + (d10 + d11) * vend[i];
      }
      double w = 2.0 * TROT_PI * tau;
      double dz = leg->p_td[2] - leg->p_lo[2];
      leg->p_des[2] = leg->p_lo[2] + dz * tau;
      leg->v_des[2] = dz / t_swing;
      leg->p_des[2] += c->p.step_height * 0.5 * (1.0 - cos(w));
      leg->v_des[2] += c->p.step_height * 0.5 * sin(w) * 2.0 * TROT_PI / t_swing;
    }
  }
}

/* IK to the planned feet, PD targets. */
static tl_status track(tl_trot_controller *c, const trot_base *b, tl_error *err) {
  double tgt[4][3], vel[4][3], J[4][9];
  for (int l = 0; l < 4; ++l) {
    double r[3];
    /* yaw frame -> base frame with the (scaled) measured roll and pitch */
    mat3_tmulv(tgt[l], b->Rmap, c->leg[l].p_des);
    mat3_tmulv(r, b->Rmap, c->leg[l].v_des);
    memcpy(vel[l], r, sizeof(r));
  }
  tl_status st;
  for (int it = 0; it < c->p.ik_iterations; ++it)
    if ((st = ik_pass(c, tgt, J, &c->ik_residual, err)) != TL_OK) return st;
  memcpy(c->q_target, c->q, (size_t)c->nq * sizeof(double)); /* base and extra DOFs: as is */
  memset(c->u_target, 0, (size_t)c->nv * sizeof(double));
  for (int l = 0; l < 4; ++l) {
    const tl_trot_leg *leg = &c->leg[l];
    double dq[3];
    dls3(J[l], vel[l], c->p.ik_damping, dq);
    for (int k = 0; k < 3; ++k) {
      c->q_target[leg->qi[k]] = c->qk[leg->qi[k]];
      c->u_target[leg->dof[k]] = dq[k];
    }
  }
  return tl_system_set_pd_targets(c->sys, c->q_target, c->nq, c->u_target, c->nv, err);
}

/* Cholesky solve of the symmetric positive definite n x n system A x = b
 * (A overwritten), n <= 6. Returns -1 if A is not positive definite. */
static int chol_solve(double *A, int n, double *x) {
  for (int j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0.0)) return -1;
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (int k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / d;
    }
  }
  for (int i = 0; i < n; ++i) {
    double s = x[i];
    for (int k = 0; k < i; ++k) s -= A[i * n + k] * x[k];
    x[i] = s / A[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int k = i + 1; k < n; ++k) s -= A[k * n + i] * x[k];
    x[i] = s / A[i * n + i];
  }
  return 0;
}

/* Ground forces on the stance feet (world) realising the net force F and
 * moment Tq about the centre of mass: weighted least norm
 * f = W^-1 A^T (A W^-1 A^T + eps I)^-1 [F; Tq], horizontal components
 * weighted TROT_FORCE_WH times the vertical ones, then f_z >= 0 and the
 * horizontal part limited to TROT_FORCE_MU f_z. */
static void distribute_forces(int n, const double r[4][3], const double F[3], const double Tq[3],
                              double f[4][3]) {
  double A[6][12], G[36], y[6] = {F[0], F[1], F[2], Tq[0], Tq[1], Tq[2]};
  double winv[3] = {1.0 / TROT_FORCE_WH, 1.0 / TROT_FORCE_WH, 1.0};
  memset(A, 0, sizeof(A));
  for (int i = 0; i < n; ++i) {
    const double *p = r[i];
    double cx[9] = {0, -p[2], p[1], p[2], 0, -p[0], -p[1], p[0], 0};
    for (int a = 0; a < 3; ++a) {
      A[a][3 * i + a] = 1.0;
      for (int k = 0; k < 3; ++k) A[3 + a][3 * i + k] = cx[3 * a + k];
    }
  }
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b) {
      double s = 0;
      for (int k = 0; k < 3 * n; ++k) s += A[a][k] * winv[k % 3] * A[b][k];
      G[6 * a + b] = s + (a == b ? 1e-4 : 0.0);
    }
  if (chol_solve(G, 6, y) != 0) {
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) f[i][k] = F[k] / n;
    return;
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      double s = 0;
      for (int a = 0; a < 6; ++a) s += A[a][3 * i + k] * y[a];
      f[i][k] = winv[k] * s;
    }
    if (f[i][2] < 0.0) f[i][2] = 0.0;
    double ft = sqrt(f[i][0] * f[i][0] + f[i][1] * f[i][1]), lim = TROT_FORCE_MU * f[i][2];
    if (ft > lim) {
      f[i][0] *= lim / ft;
      f[i][1] *= lim / ft;
    }
  }
}

/* Feedforward generalized force: h on the leg DOFs (gravity and Coriolis
 * of the legs), minus J^T f for the stance feet, whose ground forces f carry
 * weight_ff x the robot's weight and the attitude moment
 * I (att_kp e - att_kd w) (e: rotation to level, w: base angular velocity),
 * plus the swing legs' inertial feedforward. */
static tl_status feedforward(tl_trot_controller *c, const trot_base *b, double dt, tl_error *err) {
  tl_status st = tl_system_nonlinear_term(c->sys, c->tau, c->nv, err);
  if (st != TL_OK) return st;
  static const double zero_g[3] = {0.0, 0.0, 0.0};
  if ((st = tl_system_nonlinear_term_gravity(c->sys, zero_g, c->h, c->nv, err)) != TL_OK) return st;
  /* force holding the whole robot against gravity: the gravity part of h on
   * the base translation rows (u[0..2]: world linear velocity of the base) */
  double f_support[3];
  for (int i = 0; i < 3; ++i) f_support[i] = c->p.weight_ff * (c->tau[i] - c->h[i]);
  double mass, com[3], I[9];
  if ((st = tl_system_composite_inertia(c->sys, 0, &mass, com, I, err)) != TL_OK) return st;
  double e[3] = {b->att[0], b->att[1], c->p.k_yaw * remainder(c->yaw_ref - b->yaw, 2.0 * TROT_PI)};
  double acc[3], moment[3];
  for (int i = 0; i < 3; ++i) acc[i] = c->p.att_kp * e[i] - c->p.att_kd * c->u[3 + i];
  mat3_mulv(moment, I, acc);
  int n = 0, idx[4];
  double r[4][3], f[4][3];
  for (int l = 0; l < 4; ++l) {
    if (!c->leg[l].stance) continue;
    double p[3];
    if ((st = foot_world(c->sys, &c->leg[l], p, err)) != TL_OK) return st;
    for (int i = 0; i < 3; ++i) r[n][i] = p[i] - com[i];
    r[n][2] -= c->leg[l].radius; /* the contact is at the bottom of the foot */
    idx[n++] = l;
  }
  if (n > 0) distribute_forces(n, (const double(*)[3])r, f_support, moment, f);
  for (int j = 0; j < n; ++j) {
    const tl_trot_leg *leg = &c->leg[idx[j]];
    double p[3];
    if ((st = foot_world(c->sys, leg, p, err)) != TL_OK) return st;
    if ((st = tl_system_point_jacobian(c->sys, leg->body, p, c->Jp, NULL, c->nv, err)) != TL_OK)
      return st;
    for (int k = 0; k < 3; ++k) {
      int v = leg->dof[k];
      double jf = 0;
      for (int i = 0; i < 3; ++i) jf += c->Jp[i * c->nv + v] * f[j][i];
      c->tau[v] -= jf;
    }
  }
  /* swing legs: inertial feedforward M_ll qdd_des, qdd_des from the change of
   * the joint velocity targets (computed-torque feedforward; the base
   * acceleration is neglected) */
  if (dt > 0.0 && c->p.k_inertia > 0.0) {
    if ((st = tl_system_mass_matrix(c->sys, c->M, c->nv, err)) != TL_OK) return st;
    for (int l = 0; l < 4; ++l) {
      const tl_trot_leg *leg = &c->leg[l];
      if (leg->stance || !c->swing_prev[l]) continue;
      double qdd[3];
      for (int k = 0; k < 3; ++k)
        qdd[k] = clamp((c->u_target[leg->dof[k]] - c->u_target_prev[leg->dof[k]]) / dt,
                       -TROT_MAX_QDD, TROT_MAX_QDD);
      for (int i = 0; i < 3; ++i) {
        double a = 0;
        for (int k = 0; k < 3; ++k) a += c->M[(size_t)leg->dof[i] * c->nv + leg->dof[k]] * qdd[k];
        c->tau[leg->dof[i]] += c->p.k_inertia * a;
      }
    }
  }
  for (int l = 0; l < 4; ++l) c->swing_prev[l] = !c->leg[l].stance;
  memcpy(c->u_target_prev, c->u_target, (size_t)c->nv * sizeof(double));
  for (int k = 0; k < 6; ++k) c->tau[k] = 0.0; /* the base is not actuated */
  return tl_system_set_generalized_force(c->sys, c->tau, c->nv, err);
}

tl_status tl_trot_update(tl_trot_controller *ctrl, double time, tl_error *err) {
  if (!ctrl || !ctrl->sys) return trot_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!isfinite(time)) return trot_error(err, TL_ERR_ARGUMENT, "time", "must be finite");
  tl_trot_controller *c = ctrl;
  trot_base b;
  tl_status st = read_base(c, &b, err);
  if (st != TL_OK) return st;
  if (!c->started) {
    c->started = 1;
    c->t0 = time;
    c->yaw_ref = b.yaw;
    c->last_time = time;
    memcpy(c->v_filt, b.v_yaw, sizeof(c->v_filt));
  }
  double dt = time - c->last_time;
  if (dt < 0.0) dt = 0.0;
  c->last_time = time;
  double a = dt / (TROT_VEL_FILTER_TAU + dt);
  for (int i = 0; i < 3; ++i) c->v_filt[i] += a * (b.v_yaw[i] - c->v_filt[i]);
  double t = time - c->t0;
  if (t < c->p.stand_time) {
    c->v_cmd = 0.0;
    plan_stand(c, t);
  } else {
    double tg = t - c->p.stand_time;
    c->v_cmd = c->p.ramp_time > 0 ? c->p.speed * clamp(tg / c->p.ramp_time, 0.0, 1.0) : c->p.speed;
    /* integral speed feedback: the stance sweep speed is corrected until the
     * mean base velocity matches the command (x) and zero (y) */
    double verr[2] = {c->v_cmd - c->v_filt[0], c->lateral_cmd != 0.0 ? c->lateral_cmd - c->v_filt[1] : -c->v_filt[1]};
    if (c->yaw_rate_cmd != 0.0) c->yaw_ref = remainder(c->yaw_ref + c->yaw_rate_cmd * dt, 2.0 * TROT_PI);
    for (int i = 0; i < 2; ++i)
      c->v_int[i] = clamp(c->v_int[i] + c->p.k_speed * verr[i] * dt, -TROT_MAX_V_INT, TROT_MAX_V_INT);
    plan_gait(c, tg, dt, &b, c->v_filt, (const double(*)[3])b.foot);
  }
  if ((st = track(c, &b, err)) != TL_OK) return st;
  return feedforward(c, &b, dt, err);
}
