/* Internal: the geometry of the loop constraints (talus/constraint.h) at the
 * systems' current kinematics, the rows it gives, and the Gauss-Newton
 * projection of the configurations onto them (constraint_project.c). Used
 * by tl_world_project_constraints (any engine: it is kinematics and the
 * mass matrix only) and by the native engine's step (its rows,
 * contact/constraint_loop.c, and its post-step projection). */
#ifndef TALUS_CONSTRAINT_PROJECT_H
#define TALUS_CONSTRAINT_PROJECT_H

#include "math/tl_math.h"
#include "world/world_internal.h"

/* Most rows one constraint gives (a weld). */
#define TL_CGEOM_ROWS 6

/* The rows of one constraint at the current kinematics. Row r acts on the
 * relative motion of frame 1 against frame 2: linear rows (ang 0) on
 * dir . (v(p1) - v(p2)), the velocities of the two frames' origins; angular
 * rows (ang 1) on dir . (omega1 - omega2). C is the residual whose rate that
 * row velocity is (to first order at C = 0):
 *   ball     3 rows, dir = world x, y, z, C = p1 - p2;
 *   hinge    the ball's 3 rows, then 2 angular rows dir = a1 x b2, a1 x c2,
 *            C = a1 . b2, a1 . c2, with a1 the axis on body 1, b2 and c2
 *            two unit vectors fixed on body 2 orthogonal to its axis a2;
 *   weld     the ball's 3 rows, then 3 angular rows dir = world x, y, z,
 *            C = -F1 log(F1^T F2) (F1, F2 the frames' world rotations:
 *            minus the rotation vector from frame 1 to frame 2, world axes;
 *            exact in angle, so Gauss-Newton converges from any relative
 *            rotation below pi);
 *   distance rigid (lo = hi): 1 row dir = n = (p1 - p2) / |p1 - p2|,
 *            C = |p1 - p2| - lo; a range: a row for each finite bound,
 *            one-sided (side 1: C >= 0 holds it), the lower dir = n,
 *            C = |p1 - p2| - lo, the upper dir = -n, C = hi - |p1 - p2|
 *            (n = world z when the points coincide).
 * slot: the row's warm-start slot (0 .. 5) in the constraint. */
typedef struct tl_cgeom {
  double p1[3], p2[3];          /* frame origins in the world, m */
  int nrow;
  double dir[TL_CGEOM_ROWS][3]; /* unit row directions, world frame */
  unsigned char ang[TL_CGEOM_ROWS];
  unsigned char side[TL_CGEOM_ROWS]; /* 0: equality C = 0; 1: one-sided C >= 0 */
  unsigned char slot[TL_CGEOM_ROWS];
  double C[TL_CGEOM_ROWS];      /* m (linear rows), rad to first order (angular rows) */
} tl_cgeom;

/* Rows of c from the systems' d.xpos / d.xrot as they are (the caller keeps
 * the kinematics current). */
void tl_constraint_geom(const tl_world *w, const tl_constraint *c, tl_cgeom *g);

/* Last DOF on body b's root path (-1: the body cannot move), system model m. */
int tl_constraint_leaf_dof(const tl_model *m, int b);

/* Entry of a constraint row for the DOF with world-frame motion subspace
 * column S = (w, v) (d.cdof): the angular row dir . w (ang), or the linear
 * row of world point p along dir: dir . (w x p + v). The loop rows of the
 * step (contact/constraint_loop.c) and of the projection use this one
 * formula. */
static inline double tl_constraint_row_entry(const double S[6], const double p[3], const double dir[3], int ang) {
  if (ang) return tl_v3_dot(dir, S);
  double lin[3];
  tl_v3_cross(lin, S, p);
  tl_v3_add(lin, lin, S + 3);
  return tl_v3_dot(dir, lin);
}

/* Most rows of constraint c (distance: 2 for a range). */
int tl_constraint_rows_max(const tl_constraint *c);

/* Scratch of the projection, sized by tl_cproj_reserve for the world's
 * constraints and systems (the native engine keeps one, reserved with its
 * other arrays, so its step allocates nothing). */
typedef struct tl_cproj {
  /* the constraints' components (constraints sharing a system), solved apart; computed by
     tl_cproj_reserve, so valid until constraints or systems are added */
  int ncomp, ncon_cap;
  int *order;            /* [ncon_cap] constraint indices, component by component */
  int *cfirst;           /* [ncon_cap + 1] component c's constraints: order[cfirst[c] .. cfirst[c + 1]) */
  int *uf;               /* [nsys_cap + ncon_cap + 1] scratch of the partition */
  int rows_cap, nv_cap, nsys_cap; /* rows and DOFs of the largest component */
  double *J, *X;         /* [rows_cap * nv_cap] rows over the involved DOFs; M^-1 J^T as rows */
  double *A;             /* [rows_cap^2] J M^-1 J^T (column-major lower), then its factor */
  double *C, *mu, *dq;   /* [rows_cap], [rows_cap], [nv_cap] */
  unsigned char *drop;   /* [rows_cap] rows dropped by the factorization (redundant) */
  int *off;              /* [nsys_cap] first column of each involved system, -1 otherwise */
} tl_cproj;

/* Size p for w (grows only) and compute the constraints' components.
 * -1: out of memory (p keeps its arrays, its partition may be stale). */
int tl_cproj_reserve(tl_cproj *p, const tl_world *w);
/* The components of the constraints (two constraints sharing a system are
 * in one; the world frame joins nothing) into p->order / cfirst / ncomp:
 * components in the order of their first constraint, constraints in index
 * order within each; O(nconstraint + nsystem), allocates nothing (p
 * reserved for at least the world's current constraints and systems). The
 * native step recomputes it before building its rows (a failed
 * tl_world_add_constraint leaves the reservation's partition stale, and
 * the true one a refinement of it, which the reserved sizes cover). */
void tl_cproj_partition(const tl_world *w, tl_cproj *p);
void tl_cproj_free(tl_cproj *p);

/* Which constraints a projection moves. */
enum {
  TL_CPROJ_STEP = 0, /* the native step's: exact ones (erp = cfm = 0) whose systems are Euler-integrated */
  TL_CPROJ_ALL = 1   /* every constraint (tl_world_project_constraints) */
};

/* Gauss-Newton on the constraint residual in the tangent space of q:
 * dq = -M^-1 J^T (J M^-1 J^T)^+ C, q <- q (+) dq (tl_dyn_integrate_q: the
 * quaternions move on their manifold), with M^-1 applied through each
 * system's current factorization d.LD (the native step's M_eff; the caller
 * of TL_CPROJ_ALL factors M). The pseudo-inverse drops redundant rows
 * (tl_dense_cholesky_psd). One-sided rows join while they are violated.
 * Post-stabilization: Ascher, Chin, Petzold, Reich, "Stabilization of
 * constrained mechanical systems with DAEs and invariant manifolds", Mech.
 * Struct. Mach. 23, 1995; Cline, Pai, "Post-stabilization for rigid body
 * simulation with contact and constraints", ICRA 2003. Iterates until
 * every constraint's position error (the norm of its linear residuals, m)
 * and angle error (of its angular residuals) is <= tol, at most max_iter
 * steps. Recomputes the involved systems' kinematics (tl_dyn_kinematics)
 * at each iterate; leaves them at the final q. Returns the steps taken, or
 * -1 if the errors are still above tol after max_iter steps (q is then the
 * last iterate). *err_out (may be NULL): the largest error at the end. */
int tl_cproj_positions(tl_world *w, tl_cproj *p, int which, double tol, int max_iter, double *err_out);

/* u <- u - M^-1 J^T (J M^-1 J^T)^+ J u for the equality rows of `which`
 * (one-sided rows that are violated or active at the current q): the
 * velocity projected onto the constraints' null space in the metric of M.
 * Needs the kinematics at the current q and d.LD as above. */
void tl_cproj_velocities(tl_world *w, tl_cproj *p, int which);

#endif
