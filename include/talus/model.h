/* Talus compiled robot model: read-only queries.
 *
 * A tl_model is the compiled description of one articulated robot: bodies in
 * depth-first order (body 0 is the base), the movable joint carrying each
 * body, frames (one per URDF joint, fixed joints included), collision geoms.
 * Models are created by the URDF loader (talus/urdf.h) and are immutable;
 * each tl_system gets its own copy of the mutable parameters.
 *
 * Index conventions (RaiSim's): body i == movable joint i; joint 0 is the
 * root joint (floating: 7 coordinates [x y z qw qx qy qz], 6 velocities
 * [v w] in the world frame; fixed: 0 / 0). */
#ifndef TALUS_MODEL_H
#define TALUS_MODEL_H

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_model tl_model;

/* Free a model returned by a loader. NULL is allowed. */
void tl_model_free(tl_model *model);

const char *tl_model_name(const tl_model *model);   /* URDF robot name */
const char *tl_model_source(const tl_model *model); /* file it was loaded from */
tl_base_type tl_model_base(const tl_model *model);  /* TL_BASE_FLOATING or TL_BASE_FIXED */
int tl_model_nq(const tl_model *model);     /* generalized coordinate dimension */
int tl_model_nv(const tl_model *model);     /* generalized velocity dimension (DOF) */
int tl_model_nbody(const tl_model *model);  /* bodies == movable joints incl. the root joint */
int tl_model_nframe(const tl_model *model);
int tl_model_ngeom(const tl_model *model);
double tl_model_total_mass(const tl_model *model); /* kg */

/* Bodies / movable joints, 0 <= i < nbody. Out-of-range indices return NULL / -1. */
const char *tl_model_body_name(const tl_model *model, int body);   /* URDF link name */
const char *tl_model_joint_name(const tl_model *model, int body);  /* URDF joint name; "ROOT" for body 0 */
tl_joint_type tl_model_joint_type(const tl_model *model, int body);
int tl_model_body_parent(const tl_model *model, int body);         /* -1 for the base */
int tl_model_joint_q_index(const tl_model *model, int body);       /* first index in q */
int tl_model_joint_u_index(const tl_model *model, int body);       /* first index in u */
double tl_model_body_mass(const tl_model *model, int body);        /* kg, fixed children merged */
/* Position limits of DOF k (0 <= k < nv); +-INFINITY when unlimited. */
int tl_model_dof_limits(const tl_model *model, int dof, double *lower, double *upper);

/* Frames, 0 <= i < nframe. */
const char *tl_model_frame_name(const tl_model *model, int frame);
int tl_model_frame_body(const tl_model *model, int frame);
tl_joint_type tl_model_frame_joint_type(const tl_model *model, int frame);
/* Index of the frame with this name, or -1. */
int tl_model_frame_index(const tl_model *model, const char *name);
/* Index of the body whose URDF link (or merged-in fixed link) has this name, or -1. */
int tl_model_body_index(const tl_model *model, const char *link_name);

/* Collision geoms, 0 <= i < ngeom. size: see tl_geom_type. pos / R: pose in
 * the body frame (R row-major 3x3). Returns -1 for a bad index. */
int tl_model_geom(const tl_model *model, int geom, tl_geom_type *type, int *body,
                  double size[3], double pos[3], double R[9]);
const char *tl_model_geom_name(const tl_model *model, int geom);
const char *tl_model_geom_link(const tl_model *model, int geom); /* URDF link it was declared on */

/* Reference configuration (zeros, identity quaternions, base at the origin)
 * into q (length nq). Returns TL_ERR_ARGUMENT if nq is wrong. */
tl_status tl_model_reference_q(const tl_model *model, double *q, int nq, tl_error *err);

/* Warnings produced while loading (e.g. inertia breaking the triangle inequality). */
int tl_model_nwarning(const tl_model *model);
const char *tl_model_warning(const tl_model *model, int i);

#ifdef __cplusplus
}
#endif
#endif
