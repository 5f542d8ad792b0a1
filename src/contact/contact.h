/* Internal: geom poses and the per-contact exact-cone solve. */
#ifndef TALUS_CONTACT_INTERNAL_H
#define TALUS_CONTACT_INTERNAL_H

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

/* World pose of geom g of a system (from d's kinematics). */
void tl_geom_world_pose(const tl_model *m, const tl_sysdata *d, int g, double pos[3], double R[9]);

/* The same for geom g on a body at world position x and rotation Rb
 * (row-major): pos = Rb geom_pos + x, R = Rb geom_rot. */
static inline void tl_geom_pose_at(const tl_model *m, int g, const double x[3], const double Rb[9], double pos[3],
                                   double R[9]) {
  tl_m3_mulv(pos, Rb, m->geom_pos + 3 * g);
  tl_v3_add(pos, pos, x);
  tl_m3_mul(R, Rb, m->geom_rot + 9 * g);
}

/* Exact Coulomb-cone solution of one contact: find lambda (t1, t2, n) with
 * v = G lambda + b, v_n >= 0, lambda_n >= 0, v_n lambda_n = 0,
 * |lambda_t| <= mu lambda_n and, when sliding, lambda_t opposite to v_t
 * (maximal dissipation). G: 3x3 symmetric positive definite. lambda: in, a
 * guess (the last impulse, or zeros) used to start the sliding search; out,
 * the solution. This is the
 * per-contact step of Hwangbo, Lee and Hutter, "Per-contact iteration method
 * for solving contact dynamics", IEEE RA-L 2018. */
void tl_cone_contact_solve(const double G[9], const double b[3], double mu, double lambda[3]);

#endif
