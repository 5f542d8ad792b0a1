/* A MuJoCo model (MuJoCo 2.2, Debian libmujoco-dev) of an engine-neutral
 * Talus scene (talus/engine.h): the one model builder of the project, used by
 * the MuJoCo engine plugin (plugins/mujoco/mujoco_engine.c) and by
 * talus_bench's MuJoCo peer (bench/peer_mujoco.c), which cross-checks it
 * against Talus (poses, M, h, RNEA, forward dynamics, a Jacobian; 1e-9).
 *
 * How each part is mapped (MJCF generated in memory, loaded through a
 * virtual file system):
 * - bodies: one MJCF body per Talus body (fixed links already merged),
 *   placed in its parent at the joint frame (jnt_pos, jnt_rot: Talus's body
 *   frame at the zero configuration); a floating base is a body with a free
 *   joint at the origin; a fixed base a body without joint at its weld pose;
 * - joints: revolute -> hinge, prismatic -> slide, spherical -> ball,
 *   universal -> two hinges in one body (axis, then axis2: MuJoCo composes
 *   them in that order), floating -> free; axes in the body frame; position
 *   limits -> range (one-sided limits with +-1e10 on the open side);
 *   rotor inertia -> armature, damping -> damping (the PD's kd is added at
 *   run time), Coulomb friction -> frictionloss, stiffness / spring mount ->
 *   stiffness / springref (ball: qpos_spring = the mount quaternion);
 *   <mimic> -> a joint equality (polycoef offset, mult); planar joints are
 *   refused;
 * - inertials: the model's merged mass, COM and inertia, diagonalised
 *   (Jacobi) into pos / quat / diaginertia; bodies MuJoCo's compiler would
 *   refuse (massless, A + B < C) get a placeholder written over with the
 *   exact values after compilation (then mj_setConst);
 * - actuators: a general actuator per non-base DOF (hinge / slide on the
 *   joint, ball: three with unit gears) with gain 1 and affine bias
 *   [0, -kp, 0], kp written at run time into actuator_biasprm; forcerange =
 *   the effort limit; so force = ctrl - kp q (ball: the rotation vector's
 *   component), explicit;
 * - geoms (options.contacts): sphere, box, capsule, cylinder (MuJoCo's half
 *   lengths), mesh geoms as a mesh asset of Talus's convex hull vertices;
 *   static planes, primitives and heightmaps (an hfield asset, elevation
 *   written into hfield_data after compilation) in the worldbody; no
 *   automatic collision (contype = conaffinity = 0): one explicit <pair> per
 *   pair of geoms that may collide under Talus's rules (tlp_may_collide),
 *   condim 3, friction = the pair's Talus coefficient (the material pair
 *   table, else the smaller of the two geoms'), MuJoCo's default solref /
 *   solimp / margin 0;
 * - options: timestep, gravity, Euler integrator; cone, solver, impratio
 *   and iterations from tlmj_options (NULL / 0: MuJoCo's defaults). */
#ifndef TALUS_MJ_BUILD_H
#define TALUS_MJ_BUILD_H

#include <stddef.h>

#include <stdio.h>

#include <mujoco/mujoco.h>

#include "talus/engine_plugin.h"

typedef struct tlmj_options {
  int contacts;        /* 1: geoms, static geometry and pairs; 0: no geoms, contacts disabled */
  const char *cone;    /* "pyramidal", "elliptic" or NULL (MuJoCo's default) */
  const char *solver;  /* "Newton", "PGS", "CG" or NULL */
  double impratio;     /* 0: MuJoCo's default */
  int iterations;      /* 0: MuJoCo's default */
  int site_sys, site_body; /* a site in that body (site_sys -1: none) ... */
  double site_pos[3];      /* ... at this position in its frame */
} tlmj_options;

/* Where each Talus item went in the mjModel. */
typedef struct tlmj_sys_map {
  int *body;    /* [nbody] MuJoCo body id (a fixed base: its welded body) */
  int *joint;   /* [2 nbody] MuJoCo joint ids (second: universal's axis2; -1: none) */
  int *act;     /* [nv] MuJoCo actuator of each DOF, -1 for the floating base */
} tlmj_sys_map;

typedef struct tlmj_map {
  int nsys;
  tlmj_sys_map *sys;
  int ngeom;              /* MuJoCo geoms */
  int *geom_sys, *geom_body, *geom_index; /* per MuJoCo geom: Talus system (-1: static), body, geom or static index */
  int site;               /* the site of tlmj_options, or -1 */
  int npatched;           /* bodies whose inertial was written after compilation */
} tlmj_map;

/* MJCF attribute writers: ` name="v"` (%.17g, round-trips) and ` name="v0 v1 ..."`. */
void tlmj_put_num(FILE *f, const char *name, double v);
void tlmj_put_vec(FILE *f, const char *name, const double *v, int n);
/* Compile MJCF text into a model (through MuJoCo's virtual file system; loads are serialized,
 * MuJoCo 2.2's XML parser keeps global state). NULL with the reason in why. */
mjModel *tlmj_load_xml(const char *text, char *why, size_t len);

/* Build the MuJoCo model of `scene` into *out (mj_deleteModel) and *map
 * (tlmj_map_free). Returns 0, or -1 with the reason in why (planar joint,
 * unsupported geom, MuJoCo's compiler refusing the MJCF, out of memory). */
int tlmj_build(const tl_engine_scene *scene, const tlmj_options *opt, mjModel **out, tlmj_map *map,
               char *why, size_t why_len);
void tlmj_map_free(tlmj_map *map);

/* The joint-space state of system sys in MuJoCo's coordinates and back.
 * MuJoCo's free joint qvel is (world linear velocity of the body origin,
 * BODY-frame angular velocity), a ball joint's the CHILD-frame angular
 * velocity; Talus's: world, and the parent joint frame. So u_talus = T u_mj
 * with T = I except a rotation block R per such joint (orthogonal; forces map
 * alike: f_mj = T^T f_talus). */
void tlmj_to_mujoco(const mjModel *m, const tlmj_map *map, int sys, const tl_engine_model *tm,
                    const double *q, const double *u, double *qpos, double *qvel);
void tlmj_from_mujoco(const mjModel *m, const tlmj_map *map, int sys, const tl_engine_model *tm,
                      const double *qpos, const double *qvel, double *q, double *u);
/* f_mj += T^T f_talus for a generalized force f (nv of system sys), at
 * the configuration qpos. */
void tlmj_add_force(const mjModel *m, const tlmj_map *map, int sys, const tl_engine_model *tm,
                    const double *qpos, const double *f, double *qfrc);

#endif
