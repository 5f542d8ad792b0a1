/* Run-time changes of a system's model parameters, for dynamics
 * randomization (RaiSim's setters + updateMassInfo). Each call validates its
 * input, applies it, recomputes everything that depends on it (merged body
 * inertias, total mass, caches) and checks that the mass matrix stays
 * positive definite at the current state; on any failure the system is left
 * exactly as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "world/world_internal.h"

static void invalidate(tl_system *s) { s->kin_valid = s->dyn_valid = 0; }

/* M must stay positive definite at the current state. */
static int mass_matrix_ok(tl_system *s) {
  invalidate(s);
  tl_system_update_dynamics(s);
  return tl_dyn_factor(&s->d, NULL) == 0;
}

static int find_link(const tl_model *m, const char *name) {
  for (int l = 0; name && l < m->nlink; l++)
    if (!strcmp(m->link_name[l], name)) return l;
  return -1;
}

/* Symmetric, and positive definite (semi-definite when allow_singular). */
static int inertia_ok(const double I[9], int allow_singular) {
  for (int i = 0; i < 9; i++)
    if (!isfinite(I[i])) return 0;
  double tol = 1e-12 * (fabs(I[0]) + fabs(I[4]) + fabs(I[8]) + 1e-300);
  if (fabs(I[1] - I[3]) > tol || fabs(I[2] - I[6]) > tol || fabs(I[5] - I[7]) > tol) return 0;
  double m1 = I[0], m2 = I[0] * I[4] - I[1] * I[3];
  double m3 = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) + I[2] * (I[3] * I[7] - I[4] * I[6]);
  return allow_singular ? (m1 >= -tol && I[4] >= -tol && I[8] >= -tol && m2 >= -tol * tol && m3 >= -tol * tol * tol)
                        : (m1 > 0 && m2 > 0 && m3 > 0);
}

tl_status tl_system_link_inertial(const tl_system *s, const char *link, double *mass, double com[3],
                                  double inertia[9], tl_error *err) {
  int l = find_link(s->m, link);
  if (l < 0) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "link", "no link named '%s' in '%s'", link ? link : "(null)", s->m->name);
  if (mass) *mass = s->m->link_mass[l];
  if (com) tl_v3_copy(com, s->m->link_com + 3 * l);
  if (inertia) tl_m3_copy(inertia, s->m->link_inertia + 9 * l);
  return TL_OK;
}

tl_status tl_system_set_link_inertial(tl_system *s, const char *link, double mass, const double com[3],
                                      const double inertia[9], tl_error *err) {
  tl_model *m = s->m;
  int l = find_link(m, link);
  if (l < 0) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "link", "no link named '%s' in '%s'", link ? link : "(null)", m->name);
  if (!(mass >= 0) || !isfinite(mass))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "mass", "mass of link '%s' is %g: expected a finite number >= 0", link, mass);
  if (!com || !tl_v3_isfinite(com))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "com", "COM of link '%s' must be 3 finite numbers", link);
  if (!inertia || !inertia_ok(inertia, mass == 0))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "inertia",
                        "inertia of link '%s' must be symmetric and positive definite", link);
  double old_mass = m->link_mass[l], old_com[3], old_I[9];
  tl_v3_copy(old_com, m->link_com + 3 * l);
  tl_m3_copy(old_I, m->link_inertia + 9 * l);
  m->link_mass[l] = mass;
  tl_v3_copy(m->link_com + 3 * l, com);
  tl_m3_copy(m->link_inertia + 9 * l, inertia);
  tl_model_merge_links(m);
  if (!mass_matrix_ok(s)) {
    m->link_mass[l] = old_mass;
    tl_v3_copy(m->link_com + 3 * l, old_com);
    tl_m3_copy(m->link_inertia + 9 * l, old_I);
    tl_model_merge_links(m);
    invalidate(s);
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "link",
                        "with these inertial parameters of link '%s' the mass matrix is singular; nothing was changed", link);
  }
  return TL_OK;
}

static tl_status check_movable(const tl_system *s, int b, tl_error *err) {
  if (b <= 0 || b >= s->m->nbody)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "body", "body %d: expected a movable joint's body in [1, %d)", b, s->m->nbody);
  return TL_OK;
}

tl_status tl_system_set_joint_placement(tl_system *s, int b, const double pos[3], const double R[9], tl_error *err) {
  tl_status st = check_movable(s, b, err);
  if (st) return st;
  if (!pos || !tl_v3_isfinite(pos))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "pos", "joint position must be 3 finite numbers");
  if (R) {
    double RtR[9], dev = 0;
    tl_m3_tmul(RtR, R, R);
    for (int i = 0; i < 9; i++) dev = fmax(dev, fabs(RtR[i] - (i % 4 == 0 ? 1.0 : 0.0)));
    if (!(dev < 1e-9) || !(fabs(R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]) - 1) < 1e-9))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "R", "joint orientation is not a rotation matrix");
  }
  tl_v3_copy(s->m->jnt_pos + 3 * b, pos);
  if (R) tl_m3_copy(s->m->jnt_rot + 9 * b, R);
  invalidate(s);
  return TL_OK;
}

tl_status tl_system_set_joint_axis(tl_system *s, int b, const double axis[3], tl_error *err) {
  tl_status st = check_movable(s, b, err);
  if (st) return st;
  tl_joint_type t = s->m->jnt_type[b];
  if (t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC && t != TL_JOINT_UNIVERSAL)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "axis", "joint '%s' is %s: only revolute, prismatic and universal joints have an axis",
                        s->m->joint_name[b], tl_joint_type_name(t));
  double a[3];
  if (!axis || !tl_v3_isfinite(axis) || (tl_v3_copy(a, axis), tl_v3_normalize(a)) < 1e-12)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "axis", "axis of joint '%s' must be 3 finite numbers, not zero", s->m->joint_name[b]);
  double old[3];
  tl_v3_copy(old, s->m->jnt_axis + 3 * b);
  tl_v3_copy(s->m->jnt_axis + 3 * b, a);
  if (!mass_matrix_ok(s)) {
    tl_v3_copy(s->m->jnt_axis + 3 * b, old);
    invalidate(s);
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "axis", "with this axis the mass matrix is singular; nothing was changed");
  }
  return TL_OK;
}

/* A per-DOF parameter: which = 0 rotor inertia, 1 damping, 2 friction, 3 stiffness. */
static tl_status set_dof_param(tl_system *s, int k, double value, int which, tl_error *err) {
  static const char *names[] = {"rotor inertia", "damping", "friction", "stiffness"};
  if (k < 0 || k >= s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "dof", "DOF %d out of range [0, %d)", k, s->m->nv);
  if (!(value >= 0) || !isfinite(value))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, names[which], "%s of DOF %d is %g: expected a finite number >= 0",
                        names[which], k, value);
  double *p[] = {s->m->dof_rotor_inertia, s->m->dof_damping, s->m->dof_friction, s->m->dof_stiffness};
  p[which][k] = value;
  invalidate(s);
  return TL_OK;
}

tl_status tl_system_set_rotor_inertia(tl_system *s, int dof, double v, tl_error *err) { return set_dof_param(s, dof, v, 0, err); }
tl_status tl_system_set_joint_damping(tl_system *s, int dof, double v, tl_error *err) { return set_dof_param(s, dof, v, 1, err); }
tl_status tl_system_set_joint_friction(tl_system *s, int dof, double v, tl_error *err) { return set_dof_param(s, dof, v, 2, err); }

tl_status tl_system_set_joint_spring(tl_system *s, int dof, double stiffness, double mount, tl_error *err) {
  if (!isfinite(mount)) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "spring_mount", "spring mount must be finite");
  tl_status st = set_dof_param(s, dof, stiffness, 3, err);
  if (!st) s->m->dof_spring_mount[dof] = mount;
  return st;
}

tl_status tl_system_set_joint_limits(tl_system *s, int k, double lower, double upper, double effort, tl_error *err) {
  if (k < 0 || k >= s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "dof", "DOF %d out of range [0, %d)", k, s->m->nv);
  if (isnan(lower) || isnan(upper) || !(lower <= upper) || isnan(effort) || !(effort > 0))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "limit",
                        "limits of DOF %d: lower %g, upper %g, effort %g: expected lower <= upper (+-inf allowed), effort > 0 (inf allowed)",
                        k, lower, upper, effort);
  if (s->m->jnt_nv[s->m->dof_body[k]] != 1 && (isfinite(lower) || isfinite(upper)))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "limit", "position limits apply to 1-DOF joints only (DOF %d)", k);
  s->m->dof_lower[k] = lower;
  s->m->dof_upper[k] = upper;
  s->m->dof_effort[k] = effort;
  return TL_OK;
}

tl_status tl_system_set_joint_velocity_limit(tl_system *s, int k, double velocity, tl_error *err) {
  if (k < 0 || k >= s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "dof", "DOF %d out of range [0, %d)", k, s->m->nv);
  if (!(velocity > 0))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "velocity",
                        "velocity limit of DOF %d: %g, expected > 0 (inf: none)", k, velocity);
  s->m->dof_velocity[k] = velocity;
  return TL_OK;
}

tl_status tl_system_set_spherical_spring_mount(tl_system *s, int b, const double quat[4], tl_error *err) {
  tl_status st = check_movable(s, b, err);
  if (st) return st;
  if (s->m->jnt_type[b] != TL_JOINT_SPHERICAL)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "body", "joint '%s' is %s, not spherical", s->m->joint_name[b],
                        tl_joint_type_name(s->m->jnt_type[b]));
  double q[4];
  for (int i = 0; i < 4; i++) q[i] = quat ? quat[i] : NAN;
  if (!quat || !isfinite(q[0] + q[1] + q[2] + q[3]) || tl_quat_normalize(q) < 1e-12)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "quat", "spring mount of joint '%s' must be a finite non-zero quaternion",
                        s->m->joint_name[b]);
  memcpy(s->m->jnt_spring_quat + 4 * b, q, sizeof(q));
  return TL_OK;
}
