/* Internal: the per-system data (MuJoCo's mjData idea) and the dynamics
 * algorithms that fill it.
 *
 * Spatial quantities are in world axes about the world origin (see
 * math/tl_math.h), so composite inertias add without transforms and the
 * motion subspace of every DOF (cdof) is a world-fixed 6-vector. */
#ifndef TALUS_DYNAMICS_H
#define TALUS_DYNAMICS_H

#include "model/model.h"
#include "talus/types.h"

typedef struct tl_sysdata {
  const tl_model *m;
  double *q, *u;          /* [nq], [nv] state */

  /* kinematics (tl_dyn_kinematics) */
  double *xpos, *xrot;    /* [nb*3], [nb*9] body frame in the world */
  double *xjpos, *xjrot;  /* [nb*3], [nb*9] joint frame (parent side) in the world */
  double *xcom;           /* [nb*3] body COM in the world */
  double *cinert;         /* [nb*10] body inertia about the world origin */
  double *cdof;           /* [nv*6] motion subspace of each DOF */
  double *cvel;           /* [nb*6] spatial velocity of each body */
  double *cdof_dot;       /* [nv*6] d/dt cdof, so a_i = a_p + sum(cdof du + cdof_dot u) */

  /* dynamics (tl_dyn_crba / tl_dyn_rnea / tl_dyn_factor) */
  double *crb;            /* [nb*10] composite inertia of each subtree */
  double *M;              /* [nv*nv] mass matrix incl. rotor inertia (row-major, full) */
  double *h;              /* [nv] nonlinear term */
  double *LD;             /* [nv*nv] L^T D L factorization of the effective mass matrix */
  double *cacc;           /* [nb*6] scratch: spatial accelerations */
  double *cfrc;           /* [nb*6] scratch: spatial forces */

  /* articulated-body algorithm scratch (tl_dyn_aba) */
  double *abaI;           /* [nb*36] articulated inertias, 6x6 row-major */
  double *abap;           /* [nb*6] articulated bias forces */
  double *abaU;           /* [nv*6] U = IA S, one 6-vector per DOF */
  double *abaDinv;        /* [nb*36] inverse of D = S^T U + rotor inertia (nj x nj) */
  double *abau;           /* [nv] tau - S^T p */
} tl_sysdata;

/* Allocate the arrays of d for model m (state at the reference configuration).
 * Returns non-zero on allocation failure (d is then freed). */
int tl_sysdata_init(tl_sysdata *d, const tl_model *m);
void tl_sysdata_free(tl_sysdata *d);

/* Forward kinematics: body and joint frames, COM, inertias about the origin,
 * motion subspaces, body velocities and cdof_dot from q and u.
 * Featherstone 2008, sec. 4.3 (world-frame formulation). */
void tl_dyn_kinematics(tl_sysdata *d);

/* Mass matrix M (full, symmetric) by the composite rigid body algorithm,
 * Featherstone 2008, Table 6.2; rotor inertia added to the diagonal.
 * Needs tl_dyn_kinematics. */
void tl_dyn_crba(tl_sysdata *d);

/* Recursive Newton-Euler: tau = RNEA(q, u, du) for gravity g (3), written to
 * tau (nv). du may be NULL (zero): tau is then h(q, u). With u_on = 0 the
 * velocity terms are dropped (gravity only). Featherstone 2008, Table 5.1.
 * Needs tl_dyn_kinematics. */
void tl_dyn_rnea(tl_sysdata *d, const double g[3], const double *du, int u_on, double *tau);

/* Spatial accelerations of every body into d->cacc for joint accelerations
 * du (NULL: zero), with the velocity-product terms when u_on, and the
 * fictitious base acceleration -g (g may be NULL: no gravity). */
void tl_dyn_accelerations(tl_sysdata *d, const double *g, const double *du, int u_on);

/* Forward dynamics by the articulated-body algorithm (Featherstone 2008,
 * Table 7.1) in world axes about the world origin: du = M^-1 (tau - h), with
 * rotor inertia added to the joint-space inertia D of each joint. tau and du
 * have nv entries. Needs tl_dyn_kinematics. Returns non-zero if an
 * articulated joint inertia is not positive definite. */
int tl_dyn_aba(tl_sysdata *d, const double g[3], const double *tau, double *du);

/* Classical acceleration of the world point p fixed to body b, and the body's
 * angular acceleration, for zero joint accelerations and no gravity: the
 * terms dJp/dt u and dJr/dt u. Uses d->cacc. Needs tl_dyn_kinematics. */
void tl_dyn_point_bias(tl_sysdata *d, int b, const double p[3], double acc[3], double alpha[3]);

/* Factorize A = M + diag(add) (add may be NULL) in place into d->LD as
 * L^T D L exploiting the branch-induced sparsity (Featherstone 2008,
 * Table 6.3). Returns 0, or k + 1 when the pivot of DOF k is not positive. */
int tl_dyn_factor(tl_sysdata *d, const double *add);
/* Solve (L^T D L) x = x in place (Featherstone 2008, Table 6.4). */
void tl_dyn_solve(const tl_sysdata *d, double *x);

/* Positional (3 x nv) and rotational (3 x nv) Jacobians of the world point p
 * fixed to body b; either may be NULL. Only ancestor columns are written:
 * the caller zeroes the rest. Needs tl_dyn_kinematics. */
void tl_dyn_point_jacobian(const tl_sysdata *d, int b, const double p[3], double *Jp, double *Jr);

/* Velocity of the world point p fixed to body b (world frame). */
void tl_dyn_point_velocity(const tl_sysdata *d, int b, const double p[3], double v[3]);

/* q <- q (+) dt u: vector joints add, quaternions (floating base,
 * spherical) through the exponential map. Floating base: the angular
 * velocity is in the world frame (left multiplication); spherical: in the
 * parent joint frame (left multiplication in that frame). */
void tl_dyn_integrate_q(const tl_model *m, double *q, const double *u, double dt);

#endif
