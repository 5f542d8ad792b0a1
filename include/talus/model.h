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
 * [v w] in the world frame; fixed: 0 / 0).
 *
 * Return convention (one for the whole API, as talus/system.h and
 * talus/world.h): a query that writes its results through output pointers
 * returns tl_status (TL_OK == 0) and, on failure (NULL model, index out of
 * range, a geom without a mesh or hull), fills the tl_error naming the index
 * and the model's count and writes nothing; pass NULL for err to only test the
 * status. A query that returns one value of a model the caller holds (a count
 * such as tl_model_nq, like tl_system_nq and tl_world_nsystem; a name, type
 * or index of element i, like tl_world_system) returns that value directly,
 * with the sentinel its comment gives (NULL, -1, TL_JOINT_FIXED, NAN) for an
 * index out of range. No function returns an int status code. */
#ifndef TALUS_MODEL_H
#define TALUS_MODEL_H

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_model tl_model;

/* Free a model returned by a loader. NULL is allowed. */
void tl_model_free(tl_model *model);

/* A single rigid object: one floating body carrying one geom (sphere, box,
 * capsule or cylinder; size as in tl_geom_type, m) of mass `mass` (kg), the
 * inertia of a homogeneous solid, COM at the geom centre. name may be NULL. */
tl_status tl_model_create_primitive(tl_geom_type type, const double size[3], double mass,
                                    const char *name, tl_model **out, tl_error *err);

const char *tl_model_name(const tl_model *model);   /* URDF robot name */
const char *tl_model_source(const tl_model *model); /* file it was loaded from */
tl_base_type tl_model_base(const tl_model *model);  /* TL_BASE_FLOATING or TL_BASE_FIXED */
int tl_model_nq(const tl_model *model);     /* generalized coordinate dimension */
int tl_model_nv(const tl_model *model);     /* generalized velocity dimension (DOF) */
int tl_model_nbody(const tl_model *model);  /* bodies == movable joints incl. the root joint */
int tl_model_nframe(const tl_model *model);
int tl_model_ngeom(const tl_model *model);
double tl_model_total_mass(const tl_model *model); /* kg */

/* Bodies / movable joints, 0 <= i < nbody. An out-of-range index (or a NULL
 * model) returns NULL for names, -1 for indices, TL_JOINT_FIXED for the type
 * and NAN for the mass. */
const char *tl_model_body_name(const tl_model *model, int body);   /* URDF link name */
const char *tl_model_joint_name(const tl_model *model, int body);  /* URDF joint name; "ROOT" for body 0 */
tl_joint_type tl_model_joint_type(const tl_model *model, int body);
int tl_model_body_parent(const tl_model *model, int body);         /* -1 for the base */
int tl_model_joint_q_index(const tl_model *model, int body);       /* first index in q */
int tl_model_joint_u_index(const tl_model *model, int body);       /* first index in u */
double tl_model_body_mass(const tl_model *model, int body);        /* kg, fixed children merged */
/* Position limits of DOF k (0 <= k < nv) into *lower, *upper (either may be
 * NULL); +-INFINITY when unlimited. TL_ERR_ARGUMENT for a bad index (nothing
 * written). */
tl_status tl_model_dof_limits(const tl_model *model, int dof, double *lower, double *upper, tl_error *err);

/* Frames, 0 <= i < nframe; out of range: NULL, -1, TL_JOINT_FIXED as for bodies. */
const char *tl_model_frame_name(const tl_model *model, int frame);
int tl_model_frame_body(const tl_model *model, int frame);
tl_joint_type tl_model_frame_joint_type(const tl_model *model, int frame);
/* URDF child link of the joint the frame is named after (the link whose
 * frame this is); for user frames, the body's link. */
const char *tl_model_frame_link(const tl_model *model, int frame);
/* Index of the frame named `name`: a frame (URDF joint or user frame) of that
 * name first, else the frame of URDF link `name` (the frame of the joint whose
 * child link it is, tl_model_frame_link; MuJoCo and Pinocchio users name
 * links). -1 if neither exists (tl_system_frame_index says so with an error
 * naming it). */
int tl_model_frame_index(const tl_model *model, const char *name);
/* Index of the body whose URDF link (or merged-in fixed link) has this name, or -1. */
int tl_model_body_index(const tl_model *model, const char *link_name);

/* Collision geoms, 0 <= i < ngeom. size: see tl_geom_type (m). pos / R: pose
 * in the body frame (m; R row-major 3x3). Any output may be NULL.
 * TL_ERR_ARGUMENT for a bad index (nothing written). */
tl_status tl_model_geom(const tl_model *model, int geom, tl_geom_type *type, int *body,
                        double size[3], double pos[3], double R[9], tl_error *err);
const char *tl_model_geom_name(const tl_model *model, int geom); /* NULL for a bad index */
const char *tl_model_geom_link(const tl_model *model, int geom); /* URDF link it was declared on; NULL: bad index */

/* In-plane axes of a planar joint with unit normal n (its URDF axis, joint
 * frame): t1 perpendicular to n (n x x, or n x y when n is near x),
 * t2 = n x t1. q = [x, y, angle] slides along t1, t2 and turns about n.
 * Either output may be NULL. */
void tl_model_planar_axes(const double n[3], double t1[3], double t2[3]);

/* Reference configuration (zeros, identity quaternions, base at the origin)
 * into q (length nq). Returns TL_ERR_ARGUMENT if nq is wrong. */
tl_status tl_model_reference_q(const tl_model *model, double *q, int nq, tl_error *err);

/* Default configuration, the state a system starts in (tl_world_add_system,
 * `talus simulate`, world files without q, Python's Model.default_q): the
 * reference configuration with every limited scalar coordinate (revolute,
 * prismatic, universal and planar DOFs with finite lower <= upper) clamped into
 * [lower + m, upper - m], m = TL_DEFAULT_Q_MARGIN (upper - lower) (a DOF locked
 * by lower = upper starts there), then the
 * <mimic> relations applied again (a follower takes mult * leader + offset).
 * A 1-DOF leader of <mimic> followers is clamped instead into the part of its
 * range where its direct followers are inside theirs (with the margins, else
 * without them; when no value is, its own range as above), so a gripper
 * whose followers' limits only meet the leader's at 0 starts at 0.
 * So a quadruped whose calf limits exclude 0 (e.g. [-2.8, -0.9] rad) starts
 * with its calves at -0.995 rad, not at 0 outside the limits. q: length nq.
 * Returns TL_ERR_ARGUMENT if q is NULL or nq is wrong. */
#define TL_DEFAULT_Q_MARGIN 0.05
tl_status tl_model_default_q(const tl_model *model, double *q, int nq, tl_error *err);

/* ---- configuration-space calculus (docs/derivatives.md) ----
 * The tangent space at q has nv coordinates, laid out like u: a vector
 * coordinate (revolute, continuous, prismatic, universal, planar) adds; a
 * floating base's position adds its 3 linear entries and its quaternion
 * turns by exp of its 3 angular entries taken in the WORLD frame (left
 * multiplication); a ball joint's quaternion turns by exp of its 3 entries in
 * the PARENT JOINT frame (left multiplication). This is exactly the rule the
 * integrator applies to u dt (q <- q (+) dt u), so a tangent vector is a
 * generalized velocity times time, and every derivative "with respect to q"
 * in Talus (tl_system_inverse_dynamics_derivatives and the others) has nv
 * columns along these directions. Quaternions: (w, x, y, z); results are
 * normalised. Every call refuses NULL, wrong lengths (nq, nv), NaN/Inf and
 * zero quaternions (TL_ERR_ARGUMENT naming the array and element) and
 * writes nothing then. Lie-group formulas: Sola, Deray, Atchuthan, "A micro
 * Lie theory for state estimation in robotics", 2018 (SO(3) exp/log and its
 * left Jacobian). */
/* q_out = q (+) v: q (nq), v (nv, m and rad), q_out (nq; may be q). */
tl_status tl_model_integrate(const tl_model *model, const double *q, int nq, const double *v, int nv,
                             double *q_out, tl_error *err);
/* v_out = q1 (-) q0 (nv), the tangent vector with q0 (+) v_out = q1: vector
 * coordinates subtract (no wrapping of continuous joints, as integrate does
 * not wrap); rotations are log(q1 q0^-1) (rotation vector of angle <= pi, in
 * the world frame for a floating base, the parent joint frame for a ball
 * joint). The round trip returns the same rotation; its quaternion may come
 * back with the opposite sign (q and -q are one rotation). */
tl_status tl_model_difference(const tl_model *model, const double *q0, const double *q1, int nq,
                              double *v_out, int nv, tl_error *err);
/* Jacobians of q (+) v in the tangent spaces (nv x nv each, row-major;
 * either may be NULL): J_q = d(q (+) v)/dq, J_v = d(q (+) v)/dv, so that
 * (q (+) dq) (+) (v + dv) = (q (+) v) (+) (J_q dq + J_v dv) to first order.
 * Identity on vector coordinates; on a rotation w: J_q = R(w) (the rotation
 * matrix of exp(w)), J_v = Jl(w) (SO(3)'s left Jacobian). Block diagonal. */
tl_status tl_model_integrate_jacobians(const tl_model *model, const double *q, const double *v, int nq,
                                       double *J_q, double *J_v, int nv, tl_error *err);
/* Jacobians of q1 (-) q0 (nv x nv each, row-major; either may be NULL):
 * J_q0 = d(q1 (-) q0)/dq0, J_q1 = d(q1 (-) q0)/dq1 in the tangent spaces.
 * Vector coordinates -1 and +1; on a rotation w = q1 (-) q0:
 * J_q1 = Jl(w)^-1, J_q0 = -Jl(w)^-1 R(w). Block diagonal. Singular at a
 * rotation of exactly pi. */
tl_status tl_model_difference_jacobians(const tl_model *model, const double *q0, const double *q1, int nq,
                                        double *J_q0, double *J_q1, int nv, tl_error *err);

/* Warnings produced while loading (e.g. inertia breaking the triangle
 * inequality); the first 16 are kept, tl_model_warning is NULL past them. */
int tl_model_nwarning(const tl_model *model);
const char *tl_model_warning(const tl_model *model, int i);

/* ---- URDF content beyond the dynamics (urdf/urdf_query.c) ---- */

/* <mimic> of DOF `dof`: q[dof] = mult * q[followed] + offset, enforced by
 * the world as an equality constraint. `followed` is a DOF index, -1 when the
 * DOF mimics none (then mult = 1, offset = 0); any output may be NULL.
 * TL_ERR_ARGUMENT for a bad index. */
tl_status tl_model_dof_mimic(const tl_model *model, int dof, int *followed, double *mult, double *offset,
                             tl_error *err);

/* <calibration rising falling> of the movable joint of `body` (rad or m; NAN
 * for an absent value, so both NAN when the joint has no calibration).
 * TL_ERR_ARGUMENT for a bad index. Calibration and safety controllers of
 * fixed joints are not kept. */
tl_status tl_model_joint_calibration(const tl_model *model, int body, double *rising, double *falling,
                                     tl_error *err);

/* <safety_controller> of the movable joint of `body`: soft limits (rad or m)
 * and gains (any output may be NULL); all NAN when the joint has none
 * (k_velocity is required by the URDF, so isnan(k_velocity) says "none").
 * TL_ERR_ARGUMENT for a bad index. */
tl_status tl_model_joint_safety_controller(const tl_model *model, int body, double *soft_lower,
                                           double *soft_upper, double *k_position, double *k_velocity,
                                           tl_error *err);

/* Contact properties of collision geom `geom` from its link's <contact>
 * block: Coulomb friction (the geom's friction coefficient, default 0.8),
 * restitution, stiffness and damping (NAN when not given); any output may be
 * NULL. TL_ERR_ARGUMENT for a bad index. */
tl_status tl_model_geom_contact(const tl_model *model, int geom, double *friction, double *restitution,
                                double *stiffness, double *damping, tl_error *err);
/* Material name of a geom ("" = the world's default material; the link name
 * when the link has a <contact> block, so a world material pair can name it);
 * NULL for a bad index. */
const char *tl_model_geom_material(const tl_model *model, int geom);
/* Mesh of a mesh geom: URI as written in the URDF, and the file it was
 * resolved to (NULL outputs allowed; strings point into the model).
 * TL_ERR_ARGUMENT for a bad index or a geom that is not a mesh. */
tl_status tl_model_geom_mesh(const tl_model *model, int geom, const char **uri, const char **file,
                             tl_error *err);
/* Convex hull of a mesh geom, in the geom frame with the URDF scale applied:
 * vertices [nvert*3] (m) and outward counter-clockwise triangles [nface*3]
 * (pointers into the model, valid while it lives; NULL outputs allowed).
 * TL_ERR_ARGUMENT for a bad index or a geom without a hull. */
tl_status tl_model_geom_hull(const tl_model *model, int geom, int *nvert, const double **vert, int *nface,
                             const int **face, tl_error *err);

/* A <visual> element (not used by physics). Strings point into the model. */
typedef struct tl_visual_info {
  const char *name;      /* name attribute, "" if none */
  const char *link;      /* URDF link it was declared on */
  int body;              /* body it moves with */
  tl_geom_type type;     /* sphere, box, capsule, cylinder or mesh */
  double size[3];        /* as tl_model_geom */
  double pos[3], R[9];   /* pose in the body frame (R row-major) */
  const char *mesh;      /* mesh URI as written, "" if not a mesh */
  const char *mesh_file; /* resolved mesh path, "" if not found */
  const char *material;  /* material name, "" if none */
  double rgba[4];        /* colour, its own or the robot-level material's; NAN if none */
  const char *texture;   /* texture file name, "" if none */
} tl_visual_info;

int tl_model_nvisual(const tl_model *model);
/* Fill *out with visual i (0 <= i < nvisual). TL_ERR_ARGUMENT for a bad
 * index or a NULL out. */
tl_status tl_model_visual(const tl_model *model, int i, tl_visual_info *out, tl_error *err);
/* Robot-level <material> elements: name, colour (NAN if none), texture ("" if
 * none); NULL outputs allowed. TL_ERR_ARGUMENT for a bad index. */
int tl_model_nmaterial(const tl_model *model);
tl_status tl_model_material(const tl_model *model, int i, const char **name, double rgba[4],
                            const char **texture, tl_error *err);

/* A URDF <loop_joint> (Talus extension, README "URDF extensions"): a loop
 * closure between two links of the robot, which tl_world_add_system adds to
 * the world as a constraint (talus/constraint.h) of the system with itself.
 * Strings point into the model. */
typedef struct tl_loop_info {
  const char *name;       /* the loop_joint's name (also the world constraint's name) */
  int type;               /* tl_constraint_type: TL_CONSTRAINT_BALL, _HINGE or _WELD */
  int line;               /* URDF line of the <loop_joint> */
  const char *link1, *link2; /* URDF link names of the two sides */
  double pos1[3], rpy1[3];   /* frame on link1 in link1's frame: m, rad (URDF rpy) */
  double pos2[3], rpy2[3];   /* frame on link2 in link2's frame */
  double axis[3];         /* hinge: unit axis in link1's frame (else 0 0 1) */
  int nrow;               /* constraint rows it adds: 3 (ball), 5 (hinge), 6 (weld) */
} tl_loop_info;

/* Number of <loop_joint> elements of the model. */
int tl_model_nloop(const tl_model *model);
/* Fill *out with loop i (0 <= i < nloop). TL_ERR_ARGUMENT for a bad index
 * or a NULL out. */
tl_status tl_model_loop(const tl_model *model, int i, tl_loop_info *out, tl_error *err);

#ifdef __cplusplus
}
#endif
#endif
