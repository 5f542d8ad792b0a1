/* Talus engine plugins: the ABI between the Talus library and an engine
 * (talus/engine.h has the user-facing engine calls).
 *
 * Plugins: a shared library named talus-engine-NAME.so exporting
 *   const tl_engine_api *tl_engine_plugin_entry(int host_abi_version);
 * It includes this header (and the headers it includes: talus/engine.h) and its engine's
 * own headers and calls no function of the Talus library (tl_engine_error
 * below is static inline; the project's own plugins also use the
 * header-only src/math/tl_math.h and plugins/common/). Found in, in this order: each folder of
 * TALUS_PLUGIN_PATH (':'-separated), then the folders next to the program or
 * library that contains Talus (DIR, DIR/plugins, DIR/../plugins,
 * DIR/../lib/talus/plugins, DIR/../../plugins, DIR/../../../talus/plugins,
 * where DIR is that file's folder: a build tree puts the plugins in
 * build/plugins, an install in PREFIX/lib/talus/plugins; the last two serve
 * the Python extension in build/python/talus and in
 * PREFIX/lib/pythonX.Y/site-packages/talus).
 * Its table's abi_version and api_size must equal this header's; a missing
 * or mismatched plugin is an error that lists the engines found and every
 * folder searched. Loaded plugins stay loaded until the process ends. */
#ifndef TALUS_ENGINE_PLUGIN_H
#define TALUS_ENGINE_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "talus/constraint.h"
#include "talus/engine.h"
#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this interface (structs and table). A plugin built against
 * another version is refused. 2: tl_engine_scene holds the world's
 * tl_world_options as is (options) and the engine's text is engine_options.
 * 3: the scene holds the world's loop constraints (tl_engine_constraint) and
 * tl_engine_caps says which constraint types an engine maps (constraints). */
#define TL_ENGINE_ABI_VERSION 3
/* Length of the fixed-size name arrays of tl_engine_model (incl. the NUL). */
#define TL_ENGINE_NAME_MAX 128
/* Name of the function a plugin exports. */
#define TL_ENGINE_PLUGIN_ENTRY "tl_engine_plugin_entry"
/* File name of plugin NAME: TL_ENGINE_PLUGIN_PREFIX NAME TL_ENGINE_PLUGIN_SUFFIX. */
#define TL_ENGINE_PLUGIN_PREFIX "talus-engine-"
#define TL_ENGINE_PLUGIN_SUFFIX ".so"

/* ------------------------------------------------------------ the scene */

/* A compiled model as plain arrays (pointers into the tl_model, valid while
 * it lives and is not changed). Shapes and meanings are those of the
 * internal model (src/model/model.h): bodies in depth-first order, body i
 * carried by movable joint i, parent[i] < i, body 0 the base.
 * - jnt_pos / jnt_rot: joint frame in the parent body frame (for body 0 of a
 *   fixed base: the pose at which it is welded to the world);
 * - joint transforms: revolute Rot(axis, q); prismatic translation axis q;
 *   spherical the quaternion q; universal Rot(axis, q0) Rot(axis2, q1);
 *   the body frame is the joint frame after the joint transform;
 * - body_com / body_inertia: COM and inertia about it in the body frame,
 *   fixed children merged;
 * - per DOF: dof_body, rotor inertia, damping, Coulomb friction, stiffness
 *   and spring mount, position limits (+-INFINITY: none), effort (INFINITY:
 *   none), velocity limit, mimic (dof_mimic -1: none; q = mult q_leader +
 *   offset); spherical springs rest at jnt_spring_quat (w x y z) per body;
 * - geoms: body, type, size (tl_geom_type), pose in the body frame, Coulomb
 *   friction, ODE-style group / mask, material name, convex hull (geom_hull
 *   >= 0: hull index; vertices hull_vert[3 * (hull_vert_adr[h] + i)] in the
 *   geom frame, triangles hull_face[3 * (hull_face_adr[h] + j)], indices
 *   into the hull's own vertices).
 * Names: fixed-size, NUL-terminated (TL_ENGINE_NAME_MAX). */
typedef struct tl_engine_model {
  const char *name;
  tl_base_type base;
  int nbody, nq, nv, ngeom, nhull;
  const char (*body_name)[TL_ENGINE_NAME_MAX];
  const char (*joint_name)[TL_ENGINE_NAME_MAX];
  const int *parent;
  const tl_joint_type *jnt_type;
  const int *q_adr, *v_adr, *jnt_nq, *jnt_nv;
  const double *jnt_pos, *jnt_rot, *jnt_axis, *jnt_axis2; /* [nbody*3], [nbody*9], [nbody*3] x2 */
  const double *body_mass, *body_com, *body_inertia;      /* [nbody], [nbody*3], [nbody*9] */
  const double *jnt_spring_quat;                          /* [nbody*4] */
  const int *dof_body;                                    /* [nv] */
  const double *dof_rotor_inertia, *dof_damping, *dof_friction, *dof_stiffness, *dof_spring_mount;
  const double *dof_lower, *dof_upper, *dof_effort, *dof_velocity;
  const int *dof_mimic;
  const double *dof_mimic_mult, *dof_mimic_offset;
  const char (*geom_name)[TL_ENGINE_NAME_MAX];
  const char (*geom_material)[TL_ENGINE_NAME_MAX];
  const int *geom_body;
  const tl_geom_type *geom_type;
  const double *geom_size, *geom_pos, *geom_rot;          /* [ngeom*3], [ngeom*3], [ngeom*9] */
  const double *geom_friction;
  const unsigned *geom_group, *geom_mask;
  const int *geom_hull;
  const int *hull_vert_adr, *hull_nvert, *hull_face_adr, *hull_nface;
  const double *hull_vert;
  const int *hull_face;
} tl_engine_model;

/* View a compiled model (any tl_model, e.g. tl_system_model(sys)) as
 * tl_engine_model. TL_ERR_ARGUMENT if model or out is NULL. */
tl_status tl_engine_model_view(const tl_model *model, tl_engine_model *out, tl_error *err);

/* One articulated system of the scene. */
typedef struct tl_engine_system {
  tl_engine_model model;
  const tl_model *source;  /* the compiled model itself: for engines inside the Talus library */
  int self_collision;      /* collide its bodies with each other (never a body with its parent) */
  tl_integrator integrator;
} tl_engine_system;

/* Static geometry: plane (z = 0 of its frame), sphere, box, capsule,
 * cylinder at pos, R; or a heightmap (heightmap >= 0: index into
 * tl_engine_scene.heightmaps; pos, R unused). */
typedef struct tl_engine_static {
  tl_geom_type type;
  double size[3], pos[3], R[9];
  const char *material;
  double friction;
  unsigned group, mask;
  int heightmap;
} tl_engine_static;

/* Heights heights[iy * nx + ix] (m) at (x0 + ix dx, y0 + iy dy); each grid
 * cell two triangles. */
typedef struct tl_engine_heightmap {
  int nx, ny;
  double x0, y0, dx, dy;
  const double *heights;
} tl_engine_heightmap;

/* Contacts between geoms of materials a and b (either order): friction mu,
 * restitution and its threshold (m/s), ERP / CFM (NAN: the world's). Pairs
 * not listed: the smaller of the two geoms' friction coefficients, the
 * world's default restitution and threshold. */
typedef struct tl_engine_material_pair {
  const char *a, *b;
  double mu, restitution, threshold, erp, cfm;
} tl_engine_material_pair;

/* A loop constraint of the world (talus/constraint.h), its declaration
 * resolved to bodies: type (tl_constraint_type, talus/constraint.h); frame k (0: on body 1, 1: on
 * body 2) at pos[k] (m) with orientation rot[k] (row-major) in its BODY frame
 * (a merged fixed link's frame already carried over), or in the world frame
 * when sys[1] = body[1] = -1; hinge: the unit axis in each body's frame;
 * distance: lo <= |p1 - p2| <= hi (m; lo = hi rigid, +-INFINITY no bound);
 * erp, cfm: the softness asked for (0, 0: exact). An engine that maps a type
 * says so in tl_engine_caps.constraints and the others are refused before
 * create (the link checks the types), so create sees only types it maps. */
typedef struct tl_engine_constraint {
  const char *name;
  int type;
  int sys[2], body[2];
  double pos[2][3], rot[2][9], axis[2][3];
  double lo, hi, erp, cfm;
} tl_engine_constraint;

/* Everything an engine builds its world from. options: the world's settings
 * as they are, byte for byte (tl_world_options, talus/world.h: time step,
 * gravity, solver and its parameters, Talus's contact ERP (fraction of
 * penetration removed per step) and CFM (m/s per N s of normal impulse),
 * compliance, contact margin (Talus's speculative-contact distance, m), slop,
 * recovery speed, limit margin, velocity limits, default material); a new
 * setting is a new field there and reaches every engine with no change here.
 * ignore: nignore entries of 4 ints (system a, body a, system b, body b;
 * system -1 with body -1: all static geometry) never collided.
 * engine_options: the text after ':' in the engine name
 * ("mujoco:cone=elliptic" -> "cone=elliptic"), engine-specific key=value
 * pairs separated by ',', or "". */
typedef struct tl_engine_scene {
  tl_world_options options;
  int nsystem;
  const tl_engine_system *systems;
  int nstatic;
  const tl_engine_static *statics;
  int nheightmap;
  const tl_engine_heightmap *heightmaps;
  int npair;
  const tl_engine_material_pair *pairs;
  int nignore;
  const int *ignore;
  const char *engine_options;
  int nconstraint;
  const tl_engine_constraint *constraints;
} tl_engine_scene;

/* Fill *out with the scene of a Talus world as it is now (pointers into the
 * world, valid until the world changes); the arrays of systems, statics,
 * heightmaps and pairs are allocated and freed with tl_engine_scene_free. */
tl_status tl_engine_scene_of_world(const tl_world *world, tl_engine_scene *out, tl_error *err);
void tl_engine_scene_free(tl_engine_scene *scene);

/* ------------------------------------------------------------ the engine */

typedef struct tl_engine_world tl_engine_world; /* an engine's own world */

/* The function table every engine implements. sys: index of a system in the
 * scene (0 .. nsystem - 1); arrays have the system's nq / nv entries; every
 * function that can fail fills err (tl_engine_error below) and returns a
 * status. Functions are called from one thread at a time per world. */
typedef struct tl_engine_api {
  int abi_version;   /* TL_ENGINE_ABI_VERSION of the header it was built with */
  size_t api_size;   /* sizeof(tl_engine_api) of that header */
  const char *name;  /* "talus", "ode", "mujoco" */
  const char *version;     /* the engine and its version, e.g. "ODE 0.16.2" */
  const char *description; /* one paragraph: how it builds the scene, what it maps how */
  void (*capabilities)(tl_engine_caps *caps);
  /* Build a world from the scene; systems start at their model's default
   * configuration at rest (the link sets the state right after). A scene
   * that needs what the engine lacks: TL_ERR_UNSUPPORTED naming it. */
  tl_status (*create)(const tl_engine_scene *scene, tl_engine_world **out, tl_error *err);
  void (*destroy)(tl_engine_world *world);
  /* State in Talus's coordinates (quaternions unit). */
  tl_status (*set_state)(tl_engine_world *world, int sys, const double *q, const double *u,
                         tl_error *err);
  tl_status (*get_state)(const tl_engine_world *world, int sys, double *q, double *u,
                         tl_error *err);
  /* The implicit PD of talus/system.h (tl_system_set_pd_gains / _targets):
   * tau = Kp (q_target - q+) + Kd (u_target - u+) + tau_ff at the end-of-step
   * state, bounded by the effort limits; how the engine realises it is in its
   * description. Gains nv, q_target nq, u_target nv. */
  tl_status (*set_pd_gains)(tl_engine_world *world, int sys, const double *kp, const double *kd,
                            tl_error *err);
  tl_status (*set_pd_targets)(tl_engine_world *world, int sys, const double *q_target,
                              const double *u_target, tl_error *err);
  /* Feedforward actuator force tau_ff (nv), kept until changed. */
  tl_status (*set_generalized_force)(tl_engine_world *world, int sys, const double *tau,
                                     tl_error *err);
  /* Generalized force of the external forces (nv, J^T of the wrenches at the
   * state of the step's start), applied during the next step only. */
  tl_status (*set_external_force)(tl_engine_world *world, int sys, const double *f,
                                  tl_error *err);
  /* The two phases: integrate1 detects contacts at the current state;
   * integrate2 applies control and steps by dt. TL_ERR_DIVERGED if the
   * state became non-finite (the engine is then set back by the link). */
  tl_status (*integrate1)(tl_engine_world *world, tl_error *err);
  tl_status (*integrate2)(tl_engine_world *world, tl_error *err);
  /* Contacts found by the last integrate1 (forces of the last integrate2),
   * in tl_contact_info's conventions: impulse over the step (N s, world) on
   * the system's body; normal from the other object into it. */
  int (*ncontact)(const tl_engine_world *world);
  tl_status (*contact)(const tl_engine_world *world, int k, tl_contact_info *out, tl_error *err);
  /* Actuator force applied over the last step (nv): PD + feedforward. */
  tl_status (*applied_generalized_force)(const tl_engine_world *world, int sys, double *tau,
                                         tl_error *err);
  /* Statistics of the last solve; NULL when the engine has none. */
  tl_status (*solver_stats)(const tl_engine_world *world, tl_solver_stats *out, tl_error *err);
  /* What this world approximates (one line per item, "" if nothing). */
  const char *(*notes)(const tl_engine_world *world);
} tl_engine_api;

/* A plugin's exported entry point (TL_ENGINE_PLUGIN_ENTRY). */
typedef const tl_engine_api *(*tl_engine_plugin_entry_fn)(int host_abi_version);

/* ------------------------------------------------------------ for plugins */

/* Fill err like tl_error_set (message "ELEMENT: TEXT", element may be NULL)
 * without calling into the Talus library. Returns status. */
static inline tl_status tl_engine_error(tl_error *err, tl_status status, const char *element,
                                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline tl_status tl_engine_error(tl_error *err, tl_status status, const char *element,
                                        const char *fmt, ...) {
  if (!err) return status;
  memset(err, 0, sizeof(*err));
  err->status = status;
  if (element) snprintf(err->element, sizeof(err->element), "%s", element);
  char text[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (element)
    snprintf(err->message, sizeof(err->message), "<%s>: %s", element, text);
  else
    snprintf(err->message, sizeof(err->message), "%s", text);
  return status;
}

#ifdef __cplusplus
}
#endif
#endif
