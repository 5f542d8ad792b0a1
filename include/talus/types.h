/* Talus public types: status codes, errors, enums.
 *
 * Every function that can fail returns a tl_status (TL_OK == 0) and, when the
 * caller passes a non-NULL tl_error, fills it with a message naming the file,
 * line and element where the input was bad. On failure nothing is half-built:
 * output handles are left NULL and the caller's objects are unchanged. */
#ifndef TALUS_TYPES_H
#define TALUS_TYPES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tl_status {
  TL_OK = 0,
  TL_ERR_IO = 1,        /* a file could not be read or written */
  TL_ERR_PARSE = 2,     /* malformed input text (XML, JSON, numbers) */
  TL_ERR_INVALID = 3,   /* well-formed input that means something impossible */
  TL_ERR_ARGUMENT = 4,  /* a bad argument to an API call (NULL, wrong length, NaN) */
  TL_ERR_MEMORY = 5,    /* allocation failed (only ever at creation time) */
  TL_ERR_UNSUPPORTED = 6, /* a feature this build does not have */
  TL_ERR_DIVERGED = 7   /* the state became non-finite while stepping */
} tl_status;

/* Error report. `file` and `line` locate the bad input (empty / 0 when the
 * error is not about a file); `element` names the XML element or API
 * argument; `message` is a complete human-readable sentence that already
 * contains file, line and element. */
typedef struct tl_error {
  tl_status status;
  int line;
  char file[512];
  char element[64];
  char message[1024];
} tl_error;

/* Joint types (URDF names in comments). Dimensions of q and u per type are
 * given by tl_joint_nq() / tl_joint_nv(). */
typedef enum tl_joint_type {
  TL_JOINT_FIXED = 0,     /* "fixed": merged into the parent body */
  TL_JOINT_FLOATING = 1,  /* "floating" or free root: q = [x y z qw qx qy qz], u = [v w] (world) */
  TL_JOINT_REVOLUTE = 2,  /* "revolute" / "continuous": angle [rad] */
  TL_JOINT_PRISMATIC = 3, /* "prismatic": displacement [m] */
  TL_JOINT_SPHERICAL = 4, /* "spherical" / "ball": quaternion, angular velocity in parent joint frame */
  TL_JOINT_UNIVERSAL = 5, /* "universal": two angles about axis then axis2 */
  TL_JOINT_PLANAR = 6     /* "planar": q = [x, y, angle]: slides along two in-plane axes t1, t2
                             (joint frame, t1 = tl_model_planar_axes), then turns about the
                             plane normal (the URDF axis) */
} tl_joint_type;

/* Base type of an articulated system. TL_BASE_AUTO: fixed when the URDF
 * root link is named "world" and joined by a fixed joint, floating otherwise. */
typedef enum tl_base_type {
  TL_BASE_AUTO = 0,
  TL_BASE_FLOATING = 1,
  TL_BASE_FIXED = 2
} tl_base_type;

/* Collision geometry types. Sizes (tl_geom_size) per type:
 * sphere: [radius]; box: [x y z] full edge lengths; capsule and cylinder:
 * [radius, length] along the geom's local z axis (length excludes the caps);
 * mesh: scale [sx sy sz] (collision uses the convex hull); plane: none (the
 * plane z = 0 of its frame); heightmap: none (grid given separately). */
typedef enum tl_geom_type {
  TL_GEOM_SPHERE = 0,
  TL_GEOM_BOX = 1,
  TL_GEOM_CAPSULE = 2,
  TL_GEOM_CYLINDER = 3,
  TL_GEOM_MESH = 4,
  TL_GEOM_PLANE = 5,
  TL_GEOM_HEIGHTMAP = 6
} tl_geom_type;

/* Time integration of an articulated system.
 * TL_INTEGRATOR_EULER: semi-implicit Euler (u first, then q with the new u),
 *   the default: implicit PD, springs and damping, contacts.
 * TL_INTEGRATOR_RK4: classical fourth-order Runge-Kutta on the
 *   configuration manifold (quaternions through the exponential map), for
 *   contact-free accuracy: forces are explicit and the system's geoms do not
 *   collide. */
typedef enum tl_integrator {
  TL_INTEGRATOR_EULER = 0,
  TL_INTEGRATOR_RK4 = 1
} tl_integrator;

/* Contact and constraint solver of a world.
 * TL_SOLVER_PER_CONTACT: Gauss-Seidel over contacts, each solved exactly on
 *   the Coulomb cone (Hwangbo, Lee, Hutter, RA-L 2018), the sweeps
 *   accelerated by nonsmooth nonlinear conjugate gradients (Silcowitz, Niebe,
 *   Erleben 2010). The default.
 * TL_SOLVER_PGS: projected Gauss-Seidel / SOR with the friction pyramid
 *   (ODE's QuickStep).
 * TL_SOLVER_DANTZIG: Dantzig's pivoting method on the boxed LCP with the
 *   friction pyramid (ODE's dWorldStep); dense, for small problems. */
typedef enum tl_solver {
  TL_SOLVER_PER_CONTACT = 0,
  TL_SOLVER_PGS = 1,
  TL_SOLVER_DANTZIG = 2
} tl_solver;

/* What the last constraint solve did. Residuals are over contacts (N s and
 * m/s): signorini = max |min(lambda_n, v_n - v_target)| (normal
 * complementarity), cone = max(|lambda_t| - mu lambda_n, 0), dissipation =
 * max |v_t| (mu lambda_n - |lambda_t|) + (|lambda_t| |v_t| + lambda_t . v_t)
 * (zero when each contact sticks or slides against its friction). */
typedef struct tl_solver_stats {
  int iterations;       /* sweeps (Gauss-Seidel) or pivots (Dantzig) */
  int nblock, nrow;     /* constraint blocks and rows */
  int ncontact;
  int converged;        /* 1 if the tolerance was met within the iteration budget */
  double last_change;   /* largest impulse change of the last sweep (N s) */
  double signorini, cone, dissipation;
  int impacts;          /* restitution impulses applied before the solve (see README, Restitution) */
  int impact_sweeps;    /* sweeps of that impact pass (0: no contact with restitution touched) */
  int direct;           /* direct solves of the contact pattern that were taken (per-contact
                           solver on problems of up to 64 rows; see README, contacts) */
  int deferred;         /* speculative contacts left out of the solve and checked at its
                           solution (see README, contacts) */
  int deferred_retry;   /* 1: one of them would have pushed: solved again with all */
} tl_solver_stats;

/* Number of generalized coordinates / velocities of a joint type. */
int tl_joint_nq(tl_joint_type type);
int tl_joint_nv(tl_joint_type type);
/* Lower-case name of a joint / geom type ("revolute", "box", ...). */
const char *tl_joint_type_name(tl_joint_type type);
const char *tl_geom_type_name(tl_geom_type type);
/* Fill *err (if non-NULL) and return `status`: the message becomes
 * "FILE:LINE: <ELEMENT>: TEXT", leaving out the parts that are NULL / 0.
 * For user code and controllers that report errors the way Talus does. */
tl_status tl_error_set(tl_error *err, tl_status status, const char *file, int line,
                       const char *element, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* Short name of a status ("ok", "parse error", ...). */
const char *tl_status_name(tl_status status);

#ifdef __cplusplus
}
#endif
#endif
