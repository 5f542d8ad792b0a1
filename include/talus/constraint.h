/* Talus loop constraints: bilateral constraints between two bodies of a
 * world's systems (the same system: a closed kinematic loop such as a
 * four-bar knee or a five-bar leg; two systems: a robot holding an object),
 * or between a body and the fixed world frame. The trees stay in reduced
 * (generalized) coordinates; each constraint adds rows to the step's
 * constraint problem beside contacts and joint limits, solved by every
 * solver, and its position error is removed every step (docs/world_format.md,
 * "Constraints", gives the method and its source).
 *
 * Declared three ways, all ending here:
 *   - C: tl_world_add_constraint(world, &def, &index, &err);
 *   - a world file: <constraint type="ball" system="NAME" body1="LINK" point1="x y z"
 *                    body2="LINK" point2="x y z"/> (src/scene);
 *   - a URDF: <loop_joint name type><link1 link xyz rpy/><link2 .../><axis xyz/></loop_joint>
 *     (added with the system it belongs to).
 *
 * Frames. A constraint joins frame 1, fixed on body 1, to frame 2, fixed on
 * body 2. Each frame is given in its link's frame (the URDF link frame: the
 * frame of the joint whose child the link is; not the inertial frame) by a
 * point (m) and roll-pitch-yaw angles (rad, URDF convention R = Rz Ry Rx).
 * A link merged into its parent by a fixed joint may be named: the frame is
 * carried over to the body it was merged into. */
#ifndef TALUS_CONSTRAINT_H_PUBLIC
#define TALUS_CONSTRAINT_H_PUBLIC

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_world tl_world;

/* Types and their rows. */
typedef enum tl_constraint_type {
  TL_CONSTRAINT_BALL = 0,    /* the two points coincide: 3 rows */
  TL_CONSTRAINT_HINGE = 1,   /* ball + a common axis: 5 rows (the axis has the same
                                coordinates in frame 1 and in frame 2) */
  TL_CONSTRAINT_WELD = 2,    /* the two frames coincide: 6 rows */
  TL_CONSTRAINT_DISTANCE = 3 /* |p1 - p2| = distance (1 row), or min <= |p1 - p2| <= max
                                (a rope or a rod with play: a unilateral pair) */
} tl_constraint_type;

/* Most constraints one world holds. */
#define TL_CONSTRAINT_MAX 4096

/* Declaration of one constraint. Start from tl_constraint_def_default() and
 * set what you need; the strings are the caller's and are copied. */
typedef struct tl_constraint_def {
  tl_constraint_type type;
  const char *name;     /* optional (NULL or ""): "constraint<index>"; at most 63 bytes */
  int system1;          /* world index of body 1's system (tl_world_system) */
  int system2;          /* world index of body 2's system; -1 (default): system1 */
  const char *body1;    /* URDF link name of body 1 (required) */
  const char *body2;    /* URDF link name of body 2, or "world" (or NULL): the fixed world frame,
                           in which point2 / rpy2 are then given */
  double point1[3], rpy1[3]; /* frame 1 in body 1's link frame: m, rad (default 0) */
  double point2[3], rpy2[3]; /* frame 2 in body 2's link frame: m, rad (default 0) */
  double axis[3];       /* hinge: the common axis in body 1's link frame, any nonzero length
                           (default 0 0 1); its coordinates in frame 1 are carried to frame 2 */
  double distance;      /* distance: the length kept, m (>= 0); NAN (default): the distance
                           between the two points when the constraint is added */
  double min, max;      /* distance: NAN (default) for a rigid rod at `distance`; else the
                           range min <= |p1 - p2| <= max, m (0 <= min <= max, max > 0; either may
                           be NAN for no bound on that side) */
  double erp, cfm;      /* softness where asked for: 0, 0 (default) is exact (rows solved as
                           equalities, position error removed every step); erp in (0, 1]: the
                           fraction of the position error corrected per step instead of the
                           exact projection; cfm >= 0: compliance added to the rows (as ODE) */
} tl_constraint_def;

/* The defaults listed in tl_constraint_def: a ball joint, system 0, bodies
 * unset, points at the link origins, axis z, a rigid distance. */
tl_constraint_def tl_constraint_def_default(void);

/* Add a constraint to the world (a scene object, like a system or a static
 * geom). *index (may be NULL) receives its index. Checks, each a
 * TL_ERR_ARGUMENT naming the field (error element "system1", "body1",
 * "point1", "axis", ...): systems exist; bodies exist in them (unknown link:
 * the message lists the system's name); the two bodies differ (a body cannot
 * be constrained to itself, also not through a merged fixed link); every
 * number finite (distance, min, max may be NAN as documented); a hinge's axis
 * nonzero; a distance's bounds ordered and non-negative; erp in [0, 1], cfm >= 0;
 * a name unique in the world. TL_ERR_UNSUPPORTED: a system on the RK4
 * integrator (loops are solved on the Euler step; tl_system_set_integrator
 * refuses RK4 for a constrained system likewise). TL_ERR_MEMORY, or more than TL_CONSTRAINT_MAX:
 * TL_ERR_ARGUMENT. On failure the world is unchanged. The current state may
 * violate the constraint: tl_world_project_constraints moves it onto every
 * constraint. Engines without constraint support refuse it with
 * TL_ERR_UNSUPPORTED (tl_world_engine_notes says which types they map). */
tl_status tl_world_add_constraint(tl_world *world, const tl_constraint_def *def, int *index, tl_error *err);

/* Number of constraints of the world. */
int tl_world_nconstraint(const tl_world *world);

/* Index of the constraint named `name`, or -1. */
int tl_world_constraint_index(const tl_world *world, const char *name);

/* What one constraint is and does. */
typedef struct tl_constraint_info {
  char name[64];
  tl_constraint_type type;
  int nrow;             /* rows it adds: 3, 5, 6, or 1 (distance; 2 one-sided when a range) */
  int system1, body1;   /* body indices of the systems' models (tl_model_body_name) */
  int system2, body2;   /* -1, -1: the world frame */
  double pos1[3], pos2[3]; /* m: frame 1's origin in body 1's frame, frame 2's in body 2's (or the
                              world frame): what the recorder draws a line between */
  double position_error; /* m, at the current state: |p1 - p2| for ball, hinge and weld; for
                            distance the length beyond its bound (0 inside the range) */
  double angle_error;    /* rad, at the current state: the angle between the two axes (hinge),
                            the angle of the relative rotation of the frames (weld); else 0 */
  double force[3];       /* N, world frame: the force the constraint exerted on body 1 at
                            frame 1's origin, averaged over the last step (impulse / dt);
                            body 2 received the opposite */
  double torque[3];      /* N m, world frame: the moment on body 1 about frame 1's origin */
} tl_constraint_info;

/* Fill *out for constraint k (0 <= k < tl_world_nconstraint). The errors are
 * computed from the systems' current state; the wrench is the last step's
 * (zero before the first step). TL_ERR_ARGUMENT for a bad k or NULL out. */
tl_status tl_world_constraint(const tl_world *world, int k, tl_constraint_info *out, tl_error *err);

/* Move the systems' configurations q to the nearest state satisfying every
 * constraint (Gauss-Newton on the constraint residual in the tangent space of
 * q, minimum-norm steps), then remove the velocity components that violate
 * them (u projected onto the constraints' null space in the metric of M).
 * Stops when every position error is below tol (m and rad; tol > 0, 1e-12
 * is fine) or after max_iter iterations (> 0). TL_ERR_INVALID if it does not
 * converge (the constraints cannot all hold, e.g. a linkage whose links are
 * too short to close): the state is then left unchanged. */
tl_status tl_world_project_constraints(tl_world *world, double tol, int max_iter, tl_error *err);

#ifdef __cplusplus
}
#endif

#endif
