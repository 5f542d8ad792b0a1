/* Per-step measures of a run (include/talus/metrics.h), shared by the
 * command line (simulate, compare) and sweeps. Public API only, no
 * allocation. */
#include "talus/metrics.h"

#include <math.h>
#include <string.h>

#include "base/error.h"

#define TL_PI_ 3.14159265358979323846

tl_status tl_measure_base(tl_system *sys, tl_base_measure *out, tl_error *err) {
  if (!sys || !out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "sys", "sys and out must not be NULL");
  tl_status st = tl_system_body_pose(sys, 0, out->pos, out->R, err);
  if (st == TL_OK) st = tl_system_point_velocity(sys, 0, out->pos, out->vel, NULL, err);
  if (st != TL_OK) return st;
  const double *R = out->R;
  out->roll = atan2(R[7], R[8]);
  out->pitch = asin(fmax(-1.0, fmin(1.0, -R[6])));
  double ar = fabs(out->roll), ap = fabs(out->pitch);
  out->roll_pitch_max = fmin(fmax(ar, ap), fmax(TL_PI_ - ar, TL_PI_ - ap));
  double hx = R[0], hy = R[3], hn = hypot(hx, hy);
  out->forward_speed = hn > 1e-9 ? (out->vel[0] * hx + out->vel[1] * hy) / hn : 0.0;
  return TL_OK;
}

void tl_measure_contacts(tl_world *world, tl_system *sys, int slip, tl_contact_measure *out) {
  memset(out, 0, sizeof(*out));
  int n = tl_world_ncontact(world), index = sys ? tl_system_index(sys) : -2;
  double dt = tl_world_timestep(world);
  out->ncontact = n;
  for (int k = 0; k < n; ++k) {
    tl_contact_info c;
    if (tl_world_contact(world, k, &c, NULL) != TL_OK) continue;
    if (c.depth > out->max_depth) out->max_depth = c.depth;
    int mine = c.system == index, other = c.other_system == index;
    if (!mine && !other) continue;
    out->nsys += 1;
    double pn = (c.impulse[0] * c.normal[0] + c.impulse[1] * c.normal[1] + c.impulse[2] * c.normal[2]) / dt;
    out->normal_force += pn;
    if (!slip || !(pn > 0)) continue;
    double v[3];
    if (tl_system_point_velocity(sys, mine ? c.body : c.other_body, c.pos, v, NULL, NULL) != TL_OK) continue;
    out->slip_sum += hypot(v[0], v[1]);
    out->nslip += 1;
  }
}

double tl_measure_limit_violation(const tl_system *sys, const double *q) {
  const tl_model *m = tl_system_model(sys);
  double worst = 0;
  for (int b = 1; b < tl_model_nbody(m); ++b) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t == TL_JOINT_SPHERICAL || t == TL_JOINT_FLOATING) continue;
    int qi = tl_model_joint_q_index(m, b), ui = tl_model_joint_u_index(m, b);
    for (int i = 0; i < tl_joint_nv(t); ++i) {
      double lo, hi, x = q[qi + i];
      if (tl_model_dof_limits(m, ui + i, &lo, &hi, NULL) != 0) continue;
      double v = fmax(lo - x, x - hi);
      if (v > worst) worst = v;
    }
  }
  return worst;
}

double tl_measure_actuator_power(tl_system *sys, double *tau, double *u, int nv) {
  if (tl_system_applied_generalized_force(sys, tau, nv, NULL) != TL_OK) return 0.0;
  if (tl_system_get_state(sys, NULL, 0, u, nv, NULL) != TL_OK) return 0.0;
  int base = tl_model_joint_type(tl_system_model(sys), 0) == TL_JOINT_FLOATING ? 6 : 0;
  double power = 0;
  for (int i = base; i < nv; ++i) power += fabs(tau[i] * u[i]);
  return power;
}

int tl_measure_lowest_z(tl_system *sys, double *z) {
  const tl_model *m = tl_system_model(sys);
  int used = 0;
  *z = INFINITY;
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    tl_geom_type type = TL_GEOM_MESH;
    int body = -1;
    double size[3], pos[3], R[9], lo[3], hi[3];
    if (tl_model_geom(m, g, &type, &body, size, pos, R, NULL) != 0) continue;
    if (type == TL_GEOM_MESH || type == TL_GEOM_PLANE) continue;
    if (tl_system_geom_aabb(sys, g, lo, hi, NULL) != TL_OK) continue;
    if (lo[2] < *z) *z = lo[2];
    ++used;
  }
  if (used) return used;
  for (int b = 0; b < tl_model_nbody(m); ++b) {
    double pos[3], R[9];
    if (tl_system_body_pose(sys, b, pos, R, NULL) != TL_OK) continue;
    if (pos[2] < *z) *z = pos[2];
  }
  return 0;
}
