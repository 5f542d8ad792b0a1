/* Joint-space operations of one joint, the one place that says how a joint's
 * coordinates q and velocities u relate (DESIGN.md, "Conventions"):
 *
 *   joint              nq  nv  q                                u
 *   floating (root)     7   6  position, quaternion (w,x,y,z)   v, w (world frame)
 *   spherical (ball)    4   3  quaternion (w,x,y,z)             w (parent joint frame)
 *   others             nv  nv  scalars (rad, m)                 their rates
 *
 * where a joint's quaternion sits in its q (tl_js_quat_offset), its
 * normalization, q (+) dt u (tl_js_integrate: the step's position update,
 * Lie-group exponential, left multiplication as u is a world- or
 * parent-frame angular velocity; Sola, Deray, Atchuthan, "A micro Lie
 * theory for state estimation in robotics", 2018), q1 (-) q0
 * (tl_js_difference, its inverse) and the PD / spring error qt (-) q
 * (tl_js_error, the same difference without renormalizing the inputs, as
 * the step has always computed it).
 *
 * Every function takes the joint's type and velocity dimension and pointers
 * to the joint's own entries (q + q_adr[b], u + v_adr[b]), never a model:
 * the native engine (tl_model), the model API and the engine plugins
 * (tl_engine_model, plugins/common) share them. static inline: they run in
 * the step's per-joint loops (the quaternion logarithms out of line). Allocation free; results are bit for bit those
 * of the loops they replace (same operations in the same order). */
#ifndef TALUS_JOINT_SPACE_H
#define TALUS_JOINT_SPACE_H

#include <string.h>

#include "math/tl_math.h"
#include "talus/types.h"

/* The quaternion logarithms below stay out of line (as they were before
 * this header): inlined, they enlarge the scalar-joint path of the per-joint
 * loops that call tl_js_error, which is most joints of a robot. */
#if defined(__GNUC__)
#define TL_JS_OUT_OF_LINE static __attribute__((noinline, unused))
#else
#define TL_JS_OUT_OF_LINE static inline
#endif

/* Index within the joint's q of its unit quaternion: 3 for the floating
 * base (after the position), 0 for a spherical joint, -1 for a joint
 * without one. */
static inline int tl_js_quat_offset(tl_joint_type type) {
  return type == TL_JOINT_FLOATING ? 3 : type == TL_JOINT_SPHERICAL ? 0 : -1;
}

/* Normalize the joint's quaternion in place (nothing for other joints). */
static inline void tl_js_normalize(tl_joint_type type, double *qb) {
  int off = tl_js_quat_offset(type);
  if (off >= 0) tl_quat_normalize(qb + off);
}

/* qb <- qb (+) dt ub for one joint of velocity dimension nv: positions and
 * scalars advance by dt ub; a quaternion is left-multiplied by
 * exp(dt w) and renormalized. Fixed joints: nothing. */
static inline void tl_js_integrate(tl_joint_type type, int nv, double *qb, const double *ub, double dt) {
  double dq[4], w[3];
  switch (type) {
    case TL_JOINT_FLOATING:
      tl_v3_addscl(qb, ub, dt);
      tl_v3_scale(w, ub + 3, dt);
      tl_quat_exp(dq, w);
      tl_quat_mul(qb + 3, dq, qb + 3); /* world-frame angular velocity: left */
      tl_quat_normalize(qb + 3);
      break;
    case TL_JOINT_SPHERICAL:
      tl_v3_scale(w, ub, dt);
      tl_quat_exp(dq, w);
      tl_quat_mul(qb, dq, qb); /* parent-joint-frame angular velocity: left */
      tl_quat_normalize(qb);
      break;
    case TL_JOINT_FIXED:
      break;
    default:
      for (int k = 0; k < nv; k++) qb[k] += dt * ub[k];
      break;
  }
}

/* Rotation vector log(qt q^-1) (rad): from orientation q to qt, in the frame
 * in which the angular velocity is expressed (left multiplication). The
 * inputs are taken as they are (unit quaternions). */
TL_JS_OUT_OF_LINE void tl_js_quat_error(const double *q, const double *qt, double e[3]) {
  double qi[4] = {q[0], -q[1], -q[2], -q[3]}, dq[4];
  tl_quat_mul(dq, qt, qi);
  tl_quat_log(e, dq);
}

/* Error from q to a target configuration qt of one joint (nv doubles into
 * e): qt - q for scalar coordinates; the rotation vector log(qt q^-1) in the
 * parent joint frame for a spherical joint; for the floating base the
 * position difference and the rotation vector, both in the world frame
 * (matching u = [v, w]). The PD and spring error of the step. */
static inline void tl_js_error(tl_joint_type type, int nv, const double *q, const double *qt, double *e) {
  if (type == TL_JOINT_SPHERICAL) {
    tl_js_quat_error(q, qt, e);
  } else if (type == TL_JOINT_FLOATING) {
    tl_v3_sub(e, qt, q);
    tl_js_quat_error(q + 3, qt + 3, e + 3);
  } else {
    for (int k = 0; k < nv; k++) e[k] = qt[k] - q[k];
  }
}

/* v = log(qa qb^-1) (rad) of the normalized qa, qb: the rotation vector
 * taking qb to qa by left multiplication. */
TL_JS_OUT_OF_LINE void tl_js_quat_difference(double v[3], const double qa[4], const double qb[4]) {
  double a[4], b[4], inv[4], r[4];
  memcpy(a, qa, sizeof a);
  memcpy(b, qb, sizeof b);
  tl_quat_normalize(a);
  tl_quat_normalize(b);
  inv[0] = b[0], inv[1] = -b[1], inv[2] = -b[2], inv[3] = -b[3];
  tl_quat_mul(r, a, inv);
  tl_quat_log(v, r);
}

/* v = q1 (-) q0 for one joint (nv doubles): the tangent vector with
 * q0 (+) v = q1 (tl_js_integrate with dt = 1), quaternions normalized
 * first. Fixed joints: nothing. */
static inline void tl_js_difference(tl_joint_type type, int nv, const double *q0, const double *q1, double *v) {
  switch (type) {
    case TL_JOINT_FLOATING:
      for (int i = 0; i < 3; i++) v[i] = q1[i] - q0[i];
      tl_js_quat_difference(v + 3, q1 + 3, q0 + 3);
      break;
    case TL_JOINT_SPHERICAL: tl_js_quat_difference(v, q1, q0); break;
    case TL_JOINT_FIXED: break;
    default:
      for (int i = 0; i < nv; i++) v[i] = q1[i] - q0[i];
      break;
  }
}

#endif
