/* Talus robot onboarding (issue 25): is a robot's pose able to stand, and a
 * standing pose by inverse kinematics. Used by the "urdf" task's creation
 * warnings (talus/vecenv.h: tl_vecenv_warning) and by Python's
 * talus.find_standing_pose; docs/tasks.md ("Onboarding a robot").
 *
 * Feet: the leaf bodies of the tree (bodies without child bodies, the base
 * excepted; a foot link fixed to a shank is merged into the shank's body, so
 * ANYmal's foot sphere is on its shank body), unless named. The foot point
 * of a foot body is the centre of its collision geom farthest from the body
 * frame's origin (a mesh geom: the centre of its hull's bounding box), its
 * radius the smallest half extent of that geom (a sphere's radius); a foot
 * body without geoms: its origin, radius 0. */
#ifndef TALUS_ONBOARD_H
#define TALUS_ONBOARD_H

#include "talus/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Leaf bodies of the model (its feet when it has legs), in body order, into
 * bodies[0 .. min(n, cap) - 1]; returns n (0 for a NULL model or a model
 * with only a base). */
int tl_model_leaf_bodies(const tl_model *model, int *bodies, int cap);

/* Signed distance (m) of point p from the convex hull of n points xy
 * (x0 y0 x1 y1 ...): > 0 inside (distance to the nearest edge), < 0 outside
 * (minus the distance to the hull). A hull of less than 3 points or of area
 * below 1e-8 m^2 (collinear points) has no inside: the result is minus the
 * distance to its segment or point (so <= 0). n == 0: -INFINITY. Hull:
 * Andrew's monotone chain (A. M. Andrew, "Another efficient algorithm for
 * convex hulls in two dimensions", Inf. Process. Lett. 9, 1979). */
double tl_support_margin(const double *xy, int n, const double p[2]);

typedef struct tl_standing_options {
  double height;          /* base height above the ground, m; NAN or <= 0 (default): the hips
                             height_fraction of the mean leg length above the feet's points */
  double height_fraction; /* default 0.7 */
  const char *const *feet; /* nfeet URDF link names of the feet; NULL (default): the leaf bodies whose
                              foot point lies in the lowest quarter of the depth below the base at the
                              reference pose (a humanoid's feet, not its hands) */
  int nfeet;
  int max_iter;           /* Gauss-Newton iterations per start (default 200) */
  double tolerance;       /* m: stop when every foot is this close to its target (default 1e-5) */
  double damping;         /* Levenberg-Marquardt damping lambda, m (default 1e-2) */
} tl_standing_options;

void tl_standing_options_default(tl_standing_options *opt);

typedef struct tl_standing_result {
  double height;        /* base height used, m */
  double residual;      /* m: largest distance of a foot point from its target */
  double com_margin;    /* m: COM ground projection vs the feet's support polygon (tl_support_margin) */
  int nfeet;
  int iterations;       /* Gauss-Newton iterations of the start kept */
  int height_adjusted;  /* 1: the default height was out of reach and another was used */
} tl_standing_result;

/* A standing pose of `model` by damped least-squares inverse kinematics:
 * the base at (0, 0, height), level (identity rotation), and the joints
 * chosen so that every foot's point lies directly under its hip at the
 * foot's radius above the ground (so the foot touches z = 0). The hip of a
 * leg is the origin of the first joint on the path from the base to the foot
 * whose axis is closest to the base's y axis (|axis . y| > 0.7: the hip
 * flexion joint of a sagittal leg), else of the leg's first joint. Solver:
 * Gauss-Newton in the tangent space with Levenberg-Marquardt damping
 * (dq = (J^T J + lambda^2 I)^-1 J^T (target - p), J the feet's stacked 3 x
 * nv point Jacobians, tl_system_point_jacobian, base columns left out),
 * steps capped at 0.5 rad (m), the joints clamped to their limits after each
 * step; four starts (tl_model_default_q; the leg's first three joints with
 * an axis near the base's y (hip, knee, ankle pitch) bent by (b, -2 b, b),
 * b = +-0.4 rad; the knee and ankle pitch at mid-range), the one with the
 * smallest residual kept. With the default height, a height that leaves a residual
 * above 1 mm is lowered by 10 % up to 8 times. q: nq values out (the whole
 * configuration; a fixed base is welded at (0, 0, height) by the caller).
 * opt NULL: the defaults; result may be NULL. Errors: TL_ERR_ARGUMENT (NULL
 * model or q, wrong nq, a foot name that is not a link below the base, no
 * feet, a joint that is not revolute or prismatic, height_fraction outside
 * (0, 1] without a height, max_iter or tolerance < 0, damping <= 0),
 * TL_ERR_MEMORY. Nothing is written to q on failure. */
tl_status tl_find_standing_pose(const tl_model *model, const tl_standing_options *opt, double *q, int nq,
                                tl_standing_result *result, tl_error *err);

#ifdef __cplusplus
}
#endif
#endif
