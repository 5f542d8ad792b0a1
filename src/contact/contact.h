/* Internal: geom poses and the per-contact exact-cone solve. */
#ifndef TALUS_CONTACT_INTERNAL_H
#define TALUS_CONTACT_INTERNAL_H

#include "dynamics/dynamics.h"

/* World pose of geom g of a system (from d's kinematics). */
void tl_geom_world_pose(const tl_model *m, const tl_sysdata *d, int g, double pos[3], double R[9]);

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
