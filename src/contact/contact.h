/* Internal: contact points, ground collision and the contact solver. */
#ifndef TALUS_CONTACT_INTERNAL_H
#define TALUS_CONTACT_INTERNAL_H

#include "dynamics/dynamics.h"

typedef struct tl_contact {
  int body, geom;
  double pos[3];    /* deepest point of the geom (moves with the body), world */
  double ground[3]; /* matching point on the ground surface, world */
  double frame[9];  /* rows t1, t2, n (n: from the ground into the geom), world */
  double depth;     /* penetration depth (m); negative: gap of a speculative contact */
  double mu;        /* Coulomb friction coefficient of the pair */
  double vtarget;   /* lower bound of the normal velocity after the step (m/s) */
  double lambda[3]; /* impulse in the contact frame (t1, t2, n), N s */
} tl_contact;

/* Most contact points a geom of this type can produce against a plane. */
int tl_geom_max_plane_contacts(tl_geom_type type);

/* Contacts of geom g (pose from d's kinematics) with the horizontal plane
 * z = height: every candidate point closer than `margin` (m) is written to
 * out (at most tl_geom_max_plane_contacts). Returns the number written.
 * sphere: 1 point; capsule: the two cap spheres; box: its corners; cylinder:
 * 4 rim points per cap (deepest, opposite and the two at 90 degrees).
 * Mesh geoms produce none. */
int tl_collide_plane(const tl_model *m, const tl_sysdata *d, int g, double height, double margin,
                     tl_contact *out);

/* World pose of geom g. */
void tl_geom_world_pose(const tl_model *m, const tl_sysdata *d, int g, double pos[3], double R[9]);

/* Statistics of one contact solve. */
typedef struct tl_solve_stats {
  int iterations;
  double residual; /* largest impulse change in the last sweep (N s) */
} tl_solve_stats;

/* Exact Coulomb-cone solution of one contact: find lambda (t1, t2, n) with
 * v = G lambda + b, v_n >= 0, lambda_n >= 0, v_n lambda_n = 0,
 * |lambda_t| <= mu lambda_n and, when sliding, lambda_t opposite to v_t
 * (maximal dissipation). G: 3x3 symmetric positive definite. This is the
 * per-contact step of Hwangbo, Lee and Hutter, "Per-contact iteration method
 * for solving contact dynamics", IEEE RA-L 2018. */
void tl_cone_contact_solve(const double G[9], const double b[3], double mu, double lambda[3]);

/* Gauss-Seidel over contacts with the exact per-contact solve (Hwangbo et al.
 * 2018). G: Delassus matrix (3nc x 3nc, row-major), b: contact velocities
 * without contact impulses minus the normal targets (3nc), lambda: impulses,
 * warm start in / result out (3nc); v: scratch (3nc). */
void tl_cone_solve(int nc, const double *G, const double *b, const double *mu, double *lambda,
                   double *v, int max_iter, double tol, tl_solve_stats *stats);

#endif
