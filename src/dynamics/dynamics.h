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

  /* DOF-tree structure of m (topology only, set by tl_sysdata_init). DOFs are
   * numbered depth first, so dof_parent[k] < k and every subtree is a
   * contiguous index range. */
  int *dof_end;           /* [nv] one past the last DOF of k's subtree: the subtree is [k, dof_end[k]) */
  int *dof_anc_adr;       /* [nv + 1] the proper ancestors of DOF k, nearest first, are */
  int *dof_anc;           /* dof_anc[dof_anc_adr[k] .. dof_anc_adr[k + 1]) */
  int *dof_tmp;           /* [nv] scratch (contact/constraint_rows.c) */
  double *vtmp;           /* [nv] scratch of tl_dyn_factor and of the forward-dynamics derivatives (du) */

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
  double *LD;             /* [nv*nv] L^T D L factorization of M + diag(add) (tl_dyn_factor):
                             D on the diagonal, L[k][i] at (k, i) and again at (i, k) for the
                             ancestors i of k; no other entry is meaningful */
  double *LDinv;          /* [nv] 1 / D of that factorization */
  unsigned long M_stamp;  /* incremented by every tl_dyn_crba (M recomputed) */
  unsigned long LD_stamp; /* M_stamp of the M that LD factors exactly (no added diagonal), else 0 */
  double *cacc;           /* [nb*6] scratch: spatial accelerations (after tl_dyn_aba: of its
                             solution, the base's including the fictitious -g) */
  double *cfrc;           /* [nb*6] scratch: spatial forces */

  /* articulated-body algorithm scratch (tl_dyn_aba) */
  double *abaI;           /* [nb*36] articulated inertias, 6x6 row-major */
  double *abap;           /* [nb*6] articulated bias forces */
  double *abaU;           /* [nv*6] U = IA S, one 6-vector per DOF */
  double *abaDinv;        /* [nb*36] D = S^T U + rotor inertia (nj x nj) of each joint: 1 / D for
                             nj = 1, else its lower Cholesky factor C (D = C C^T), nj x nj */
  double *abau;           /* [nv] tau - S^T p */

  /* analytic-derivative scratch (tl_dyn_rnea_derivatives, derivatives.c) */
  double *drv_I;          /* [nb*38] per subtree: composite inertia (10), inertia rate (10),
                             momentum (6); per body the du part of its acceleration (6) and of its
                             subtree force (6) (tl_dyn_rnea_derivatives_path) */
  double *drv_vec;        /* [nv*48] per DOF: psi, zeta, nu, S, G, H (6 each), r (12) */
  double *drv_tau;        /* [2*nv] h, then du = M^-1 (tau - h) (system_derivatives.c) */
  double *drv_mat;        /* [2*nv*nv] scratch: -(M^-1 dtau_dq)^T, -(M^-1 dtau_du)^T (tl_dyn_neg_inverse_mul),
                             L^-T and the scaled coefficients -D^-1 L^-T (tl_dyn_inverse) */
} tl_sysdata;

/* Allocate the arrays of d for model m (state at the reference configuration)
 * and fill the DOF-tree tables (dof_end, dof_anc) from
 * m->dof_parent, which must number DOFs depth first (dof_parent[k] < k,
 * subtrees contiguous), as the model compiler does. Returns non-zero on
 * allocation failure (d is then freed). */
int tl_sysdata_init(tl_sysdata *d, const tl_model *m);
void tl_sysdata_free(tl_sysdata *d);

/* Forward kinematics: body and joint frames, COM, inertias about the origin,
 * motion subspaces, body velocities and cdof_dot from q and u.
 * Featherstone 2008, sec. 4.3 (world-frame formulation). */
void tl_dyn_kinematics(tl_sysdata *d);

/* Mass matrix M (full, symmetric) by the composite rigid body algorithm,
 * Featherstone 2008, Table 6.2; rotor inertia added to the diagonal.
 * Increments d->M_stamp. Needs tl_dyn_kinematics. */
void tl_dyn_crba(tl_sysdata *d);

/* The first body whose inertia serves some DOF: 1 for a fixed base, whose
 * root moves with no DOF (RNEA forms no force for it, the derivatives no
 * composites), else 0. */
static inline int tl_dyn_first_moving_body(const tl_model *m) { return m->jnt_nv[0] == 0; }

/* Recursive Newton-Euler: tau = RNEA(q, u, du) for gravity g (3), written to
 * tau (nv; NULL: the forces only, no torque). du may be NULL (zero): tau is
 * then h(q, u). With u_on = 0 the
 * velocity terms are dropped (gravity only). Featherstone 2008, Table 5.1.
 * Leaves the bodies' accelerations in d->cacc and their subtree forces in
 * d->cfrc, but for a fixed base's root, whose force no torque reads (left as
 * it was). Needs tl_dyn_kinematics. */
void tl_dyn_rnea(tl_sysdata *d, const double g[3], const double *du, int u_on, double *tau);

/* Spatial accelerations of every body into d->cacc for joint accelerations
 * du (NULL: zero), with the velocity-product terms when u_on, and the
 * fictitious base acceleration -g (g may be NULL: no gravity). */
void tl_dyn_accelerations(tl_sysdata *d, const double *g, const double *du, int u_on);

/* Forward dynamics by the articulated-body algorithm (Featherstone 2008,
 * Table 7.1) in world axes about the world origin: du = M^-1 (tau - h) with
 * h for gravity g, rotor inertia added to the joint-space inertia D of each
 * joint. tau: [nv] generalized forces (N, N m), g: [3] (m/s^2), du: [nv]
 * generalized accelerations (m/s^2, rad/s^2). O(nbody) with 6 x 6 articulated
 * inertias; multi-DOF joints through the Cholesky factor of their nj x nj D;
 * a welded base is skipped. Uses the aba* scratch and d->cacc (left holding
 * the bodies' spatial accelerations). Needs tl_dyn_kinematics. Returns
 * non-zero if a joint's articulated inertia D is not positive definite. */
int tl_dyn_aba(tl_sysdata *d, const double g[3], const double *tau, double *du);

/* Analytic derivatives of tau = RNEA(q, u, du) for gravity g (3) (du may
 * be NULL: zero): dtau_dq (nv x nv, row-major; column l = derivative along
 * the tangent direction e_l of tl_model_integrate / tl_dyn_integrate_q) and
 * dtau_du (nv x nv). Rotor inertia (which only adds diag * du) does not
 * enter. Carpentier & Mansard, RSS 2018, in world axes (derivatives.c).
 * Needs tl_dyn_kinematics; runs tl_dyn_rnea (d->cacc, d->cfrc) and uses the
 * drv_* scratch; allocates nothing. */
void tl_dyn_rnea_derivatives(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq,
                             double *dtau_du);
/* The same for the forward-dynamics derivatives, which read dtau_dq and
 * dtau_du through tl_dyn_neg_inverse_mul: for nv > TL_DRV_SMALL_NV only the
 * entries that function reads are written (DOFs on one path, a floating
 * base's columns 0..2 of dtau_dq excepted; the others keep what they held),
 * which spares clearing two nv x nv matrices; for smaller systems the whole
 * matrices. after_h (du not NULL) when d->cacc and d->cfrc still hold what
 * tl_dyn_rnea(d, g, NULL, 1, .) left at this state (h's pass: the bodies'
 * accelerations and subtree forces at du = 0): RNEA is linear in du, so only
 * the du parts are added (a_b += sum of S_k du_k down the path, F_B += sum
 * over the subtree of I_i a_i), not a second whole RNEA; equal to
 * tl_dyn_rnea_derivatives to rounding. */
void tl_dyn_rnea_derivatives_path(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq,
                                  double *dtau_du, int after_h);
/* Passive and external generalized force of the step at the current state
 * (nv, N or N m): tau_p = -D u + K e_s(q) + ext, with D and K the joint
 * damping and stiffness (per DOF), e_s the spring deflection mount (-) q of
 * the step (src/native/step.c: scalar coordinates mount - q, a ball joint
 * log(mount q^-1) in its parent frame, none on a floating base) and ext the
 * given generalized external force (may be NULL: zero). */
void tl_dyn_passive_force(const tl_sysdata *d, const double *ext, double *tau_p);
/* dq += scale d tau_p/dq, du += scale d tau_p/du (nv x nv row-major each; q
 * along the tangent directions of tl_dyn_integrate_q): springs -K (a ball
 * joint's block -K Jl(-e)^-1, Sola et al. 2018), damping -D, and when ext_w
 * is not NULL the q dependence of world-frame external forces recorded per
 * body (15 doubles per body, at the body owning the DOFs: the wrench
 * (torque about the world origin; force) F, then P = sum of p f^T over the
 * forces f applied at world points p fixed to the body): the generalized
 * force S_k . F changes as the axes S_k turn (l moves k: (S_l x S_k) . F)
 * and as the points move with the body (S_k . (v_l x f + P w_l - tr(P)
 * w_l, 0) for every DOF l supporting the body, S_l = (w_l, v_l); a floating
 * base's translations change nothing: exactly 0). Entries only between DOFs
 * on one path (the pattern of tl_dyn_neg_inverse_mul) and never in a
 * floating base's columns 0..2. Needs tl_dyn_kinematics. */
void tl_dyn_passive_derivatives(const tl_sysdata *d, const double *ext_w, double scale, double *dq,
                                double *du);
/* For small systems (nv <= TL_DRV_SMALL_NV): X <- -Minv X and Y <- -Minv Y
 * (nv x nv row-major; Y may be NULL) with the dense inverse Minv of
 * tl_dyn_inverse, as fully unrolled dense products (for a handful of DOFs
 * the index and loop overhead of the tree-pattern row sums outweighs their
 * arithmetic; the multiply-adds are about as many: the columns of
 * dtau_dq / dtau_du are nearly full there). Returns 1 when done, 0 (nothing
 * touched) when nv is larger. */
#define TL_DRV_SMALL_NV 8
int tl_dyn_neg_mul_small(const double *Minv, double *X, double *Y, int n);
/* X <- -Minv X and Y <- -Minv Y (nv x nv row-major each, the columns are
 * right-hand sides) with Minv = M^-1 (dense, symmetric: tl_dyn_inverse) for
 * X = dtau_dq and Y = dtau_du (plus terms between DOFs on one path): column
 * c vanishes outside the ancestors of c and its subtree [c, dof_end[c]),
 * X's columns [0, x_col0) and Y's [0, y_col0) vanish (3 for dtau_dq of a
 * floating base, whose translation changes no torque, and 3 for its dtau_du
 * with no damping on those DOFs: a uniform velocity changes no torque, the
 * Galilean invariance of the Newton-Euler equations). For nv >
 * TL_DRV_SMALL_NV only that pattern is read (the other entries may hold
 * anything) and the columns of Minv X are sums of rows of Minv over it,
 * O(nv (sum of depths + nv)); smaller systems take tl_dyn_neg_mul_small
 * (the whole matrices read). Every entry of X and Y is written, the
 * vanishing columns as +0. Uses d->drv_mat. Source and cost: inverse_mul.c. */
void tl_dyn_neg_inverse_mul(tl_sysdata *d, const double *Minv, double *X, int x_col0, double *Y, int y_col0);
/* y <- -Minv x (x, y: [nv], distinct) for Minv = M^-1 dense and symmetric:
 * the sum of the rows Minv[k] times x[k] in register blocks (the kernels of
 * tl_dyn_neg_inverse_mul; the same bits in every vector width). */
void tl_dyn_neg_inverse_mul_vec(const tl_sysdata *d, const double *Minv, const double *x, double *y);

/* Classical acceleration of the world point p fixed to body b, and the body's
 * angular acceleration, for zero joint accelerations and no gravity: the
 * terms dJp/dt u and dJr/dt u. Uses d->cacc. Needs tl_dyn_kinematics. */
void tl_dyn_point_bias(tl_sysdata *d, int b, const double p[3], double acc[3], double alpha[3]);

/* Factorize A = M + diag(add) (add: [nv] or NULL, in M's units: kg m^2, kg)
 * into d->LD as A = L^T D L, L unit lower triangular with the tree sparsity
 * of M (L[k][i] != 0 only for i an ancestor DOF of k), D diagonal (1 / D in
 * d->LDinv). Featherstone, Rigid Body Dynamics Algorithms, 2008, Table 6.3
 * (Featherstone, IJRR 2005), in its left-looking form: only the tree-sparse
 * entries are computed, O(sum_k depth(k)^2); systems of at most 8 DOFs run
 * the same formulas dense (the entries off the pattern come out exactly 0).
 * Returns 0, or k + 1 when the pivot of DOF k is not positive. Sets
 * d->LD_stamp to d->M_stamp when add is NULL and it succeeds, else to 0.
 * Needs d->M (tl_dyn_crba). */
int tl_dyn_factor(tl_sysdata *d, const double *add);
/* Solve A x = b in place (x: [nv], b on entry, x on return) with the
 * factorization of tl_dyn_factor: x <- L^-1 D^-1 L^-T x, touching only the
 * tree-sparse entries, O(sum_k depth(k)). Featherstone 2008, Table 6.4,
 * with both sweeps run over each DOF's descendants (a contiguous range)
 * through the copy of L^T in LD's upper triangle. */
void tl_dyn_solve(const tl_sysdata *d, double *x);
/* x <- L^-1 x (x: [nv]) with L of tl_dyn_factor: the last sweep of
 * tl_dyn_solve alone, root first, O(sum_k depth(k)). With z = D^-1 L^-T b,
 * tl_dyn_solve_lower(z) gives A^-1 b (the constraint solve keeps impulses in
 * that form; contact/solver_internal.h). */
void tl_dyn_solve_lower(const tl_sysdata *d, double *x);
/* Non-zero when d->LD holds the factorization of exactly the current d->M
 * (factored with no added diagonal since M was last computed). */
static inline int tl_dyn_factor_of_M(const tl_sysdata *d) {
  return d->LD_stamp != 0 && d->LD_stamp == d->M_stamp;
}
/* X <- A^-1 (nv x nv, row-major, symmetric bit for bit; units the inverse
 * of M's: 1/kg, 1/(kg m^2), 1/(kg m)) of the matrix A = L^T D L factored by
 * tl_dyn_factor, as A^-1 = W D^-1 W^T with W = L^-1. W^T = L^-T has L's
 * branch-induced sparsity (row k of W^T vanishes outside k's subtree), so
 * its rows are sums over the descendants only, and row j of A^-1 is the sum
 * over the ancestors k of j and j itself of (W[j][k] / D[k]) W^T[k]: the
 * lower triangle formed so, in register blocks (inverse_mul.c), the upper
 * mirrored. Cost O(sum_k subtree(k) descendants(k) + sum_j depth(j) j);
 * systems of at most 8 DOFs run the same formulas dense and unrolled
 * (factor.c). Factorization and sparsity: Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, sec. 6.5; Featherstone, "Efficient factorization of
 * the joint-space inertia matrix for branched kinematic trees", IJRR 24(6),
 * 2005. X needs no initialisation; besides X only the scratch d->drv_mat
 * is written. 4-lane AVX kernels are chosen at run time
 * (math/tl_cpu.h): the same bits. */
void tl_dyn_inverse(tl_sysdata *d, double *X);
/* tl_dyn_inverse for nv > 8 (inverse_mul.c). */
void tl_dyn_inverse_rows(tl_sysdata *d, double *X);

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

/* SO(3)'s left Jacobian of the rotation vector w (rad), J (3x3, row-major):
 * inverse 0: Jl(w) = 1 + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2;
 * inverse 1: Jl(w)^-1 = 1 - [w]x / 2 + (1/t^2 - (1 + cos t)/(2 t sin t)) [w]x^2;
 * t = |w|, series below t = 1e-4. The right Jacobian is Jr(w) = Jl(-w).
 * Sola, Deray, Atchuthan, "A micro Lie theory for state estimation in
 * robotics", 2018, eqs. 143-146. */
void tl_dyn_so3_left_jacobian(double J[9], const double w[3], int inverse);

#endif
