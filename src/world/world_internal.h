/* Internal: the world's description, what any engine builds from: time and
 * settings, the systems (tl_system: model, state, control, flags), the
 * static geoms, heightmaps, material pairs and ignore list, and the engine
 * serving the world (its table, world/world_engine.h, and what it keeps).
 * The native engine's workspace is not here: it is struct tl_native
 * (src/native/native_internal.h), behind this struct in the world's
 * allocation, reached by src/native and src/contact only (tl_native_of). This header includes no native-engine internal header
 * (the test `layering` checks it).
 *
 *   world.c          tl_world_*: objects, settings, materials, filters, dispatch to the engine
 *   system*.c        tl_system_*: state, control, parameters, queries, derivatives
 *   snapshot.c       tl_world_snapshot_save / restore: the state as bytes (engine section by hooks)
 *
 * The per-system step scratch (TL_SYSTEM_SCRATCH: force .. pd_row) is
 * written and read by the native step only and lies in the native engine's
 * arena (src/native/native_workspace.c); a system's own allocation
 * (system.c) holds its model, state, control and the joint rows' warm starts
 * (lambda_joint, saved in snapshots). */
#ifndef TALUS_WORLD_INTERNAL_H
#define TALUS_WORLD_INTERNAL_H

#include "contact/narrowphase.h"
#include "dynamics/dynamics.h"
#include "talus/world.h"
#include "world/world_engine.h"

/* The per-system step scratch of the native step, one line per array:
 * X(name, element type, element count in terms of nv and nq). Each becomes a
 * field `type *name` of tl_system pointing into the native engine's arena
 * (src/native/native_workspace.c lays them out, 64-byte aligned, after the
 * system's earlier ones): written and read within a step only, never saved
 * in a snapshot. Adding a per-system scratch array is one line here. */
#define TL_SYSTEM_SCRATCH(X)                                                                   \
  X(force, double, nv)          /* generalized force of the step */                           \
  X(diag, double, nv)           /* what the implicit PD, damping, stiffness add to diag(M) */ \
  X(u_prev, double, nv)         /* u at the start of integrate2 (rollback, the free velocity) */ \
  X(q_prev, double, nq)         /* q at the start of integrate2 */                            \
  X(u_free, double, nv)         /* velocity before constraint impulses */                     \
  X(rk, double, nq + 9 * nv)    /* RK4: q0 [nq], u0 [nv], 4 accelerations, 4 velocities [8 nv] */ \
  X(Jtmp, double, 3 * nv)       /* scratch Jacobian */                                        \
  X(gen_change, double, nv)     /* J^T dlambda of the current Gauss-Seidel sweep (N s, N m s) */ \
  X(z, double, nv)              /* L^-T J^T lambda of the solve's impulses (tl_block) */      \
  X(pd_e, double, nv)           /* PD errors of the step (src/native/step.c, joint_errors) */  \
  X(spring_e, double, nv)       /* spring errors of the step */                               \
  X(pd_row, unsigned char, nv)  /* 1: this step the DOF's PD is a boxed row (it saturates) */

struct tl_system {
  tl_model *m;          /* own copy of the model (mutable parameters) */
  tl_sysdata d;         /* state and caches */
  tl_world *world;
  int index;            /* position in the world */
  int kin_valid;        /* d's kinematics match q, u */
  int dyn_valid;        /* M and h match q, u and the world's gravity */
  int self_collision;   /* collide geoms of different bodies of this system */
  int in_solve;         /* a constraint block of the current solve touches this system */
  tl_integrator integrator;

  /* control: implicit PD + feedforward */
  double *kp, *kd;      /* [nv] */
  double *q_target;     /* [nq] */
  double *u_target;     /* [nv] */
  double *tau_ff;       /* [nv] */
  double *tau_applied;  /* [nv] actuator force of the last step: tau_ff + PD, N or N m */
  double *ext;          /* [nv] generalized force of external forces for the next step */

  /* step scratch (TL_SYSTEM_SCRATCH below): pointers into the native engine's arena, set by it
     (src/native/native_workspace.c) when the system is added; NULL while a plugin engine serves
     the world */
#define TL_SYSTEM_SCRATCH_FIELD(name, type, count) type *name;
  TL_SYSTEM_SCRATCH(TL_SYSTEM_SCRATCH_FIELD)
#undef TL_SYSTEM_SCRATCH_FIELD
  tl_hull *hulls;       /* [m->nhull] views of the model's hull pools */
  /* state kept between steps (in the snapshot), allocated with the system (system.c) */
  double *lambda_joint;  /* [TL_JOINT_SLOTS nv] last impulses of joint rows (lower limit,
                            upper limit, friction, PD, velocity limit signed by its side) for
                            warm starting */
};

/* Warm-start slots per DOF of tl_system.lambda_joint. */
#define TL_JOINT_SLOTS 5

/* A geom of the world that is not part of a system (ground, terrain, obstacles). */
typedef struct tl_static_geom {
  tl_geom_type type;
  double size[3], pos[3], rot[9];
  char material[128];
  double friction;      /* Coulomb coefficient used without a material pair */
  unsigned group, mask;
  int heightmap;        /* index into the world's heightmaps, or -1 */
} tl_static_geom;

typedef struct tl_material_pair {
  char a[128], b[128];
  double mu, restitution, threshold;
  double erp, cfm;      /* NAN: the world's */
} tl_material_pair;

struct tl_world {
  tl_world_options opt; /* every setting (talus/world.h): tl_world_set_options and the
                           single setters write it, nothing else (src/world/world_options.c) */
  double time;
  int nsystem, cap_system;
  tl_system **systems;

  /* static geometry */
  int nstatic, cap_static;
  tl_static_geom *statics;
  int nheightmap, cap_heightmap;
  tl_heightmap *heightmaps; /* heights owned by the world */

  /* materials (the default material: opt) */
  int npair, cap_pair;
  tl_material_pair *pairs;
  int *pair_slot;       /* [pair_slots] open-addressing index of pairs by unordered name pair
                           (world.c, tl_world_find_pair): a pair's index, -1 empty */
  int pair_slots;       /* a power of two >= 2 npair, or 0 */

  int filters_stale;    /* 1: the filters (groups, masks, self-collision, ignore list, integrator) or
                           the objects changed since the engine last looked: the native broadphase
                           recomputes what depends on them alone before its next collision step
                           (tl_world_filters_changed sets it, contact/broadphase.c clears it) */
  int ignore_n, ignore_cap;
  int *ignore;          /* pairs (system, body, system, body) never collided */

  /* the engine serving the world (world/world_engine.h): its table, and what it keeps */
  const tl_world_engine *engine; /* never NULL: tl_native_world_engine() or a plugin link's */
  void *engine_data;     /* a plugin engine's link (src/engine/engine_link.c); NULL on the native one */
  /* The native engine's workspace (struct tl_native, src/native/native_internal.h) follows this
     struct in the world's allocation (tl_world_create, tl_native_world_size): the native code
     reaches it at a constant offset (tl_native_of); its arrays exist while the native engine
     serves the world. */
};

/* Bring d's kinematics / M and h up to date with the state (lazy caches). */
void tl_system_update_kinematics(tl_system *sys);
void tl_system_update_dynamics(tl_system *sys);
/* diag = dt (Kd + D) + dt^2 (Kp + K): what the implicit PD (DOFs without an
 * effort limit), joint damping D and joint stiffness K add to diag(M) (nv). */
void tl_system_implicit_diagonal(const tl_system *sys, double dt, double *diag);
/* 1 if DOF k's PD gains go into M_eff, 0 if this step the PD is a boxed
 * constraint row because it saturates at the effort limit (active set,
 * decided in tl_world_integrate2). */
static inline int tl_system_pd_implicit(const tl_system *sys, int k) { return !sys->pd_row[k]; }
tl_system *tl_system_create(tl_world *w, const tl_model *model, int index);
void tl_system_destroy(tl_system *sys);

/* Largest |q_i| a state may hold (m or rad): 1e9, far beyond any robot, far
 * below where sums of squares overflow. */
#define TL_Q_MAX 1e9

/* The one check of a configuration q (model m's nq coordinates), shared by
 * tl_system_set_state / set_pd_targets, snapshots and world files: every
 * coordinate finite and within +-TL_Q_MAX, each quaternion block (floating
 * base, spherical joint) non-zero with a finite norm. q: nq doubles, read
 * with memcpy (a snapshot's bytes need not be aligned); nothing allocated. `what` names the array
 * in the message ("q", "q_target"); `status` is returned (TL_ERR_ARGUMENT for
 * setters, TL_ERR_INVALID for snapshots). */
tl_status tl_system_check_q(const tl_model *m, const void *q, const char *what, tl_status status, tl_error *err);

/* TL_OK if every coordinate of a revolute, prismatic or universal joint in q
 * lies within its URDF position limits (1e-9 of the range for rounding);
 * else TL_ERR_INVALID naming q's index, the joint and its limits. Checked
 * where a file states an initial q (world files); the setters leave limits
 * to the simulation (a state beyond a limit is pushed back). */
tl_status tl_system_check_q_limits(const tl_model *m, const double *q, tl_error *err);

/* Bytes of the largest snapshot the world can write with its current
 * objects (a full contact buffer; snapshot.c). */
size_t tl_world_state_size_max(const tl_world *w);

/* Mark the step-invariant collision data (which geoms may collide, the
 * static geoms' shapes) for recomputation: the filters, the ignore list, the
 * self-collision flags or the integrators changed (sets w->filters_stale). */
void tl_world_filters_changed(tl_world *w);

/* Make `engine` serve the world: engine->attach(w), then the old engine's
 * detach. On failure (TL_ERR_MEMORY) the world stays on its old engine.
 * `data` becomes w->engine_data before attach (a plugin link; NULL for the
 * native engine). */
tl_status tl_world_use_engine(tl_world *w, const tl_world_engine *engine, void *data, tl_error *err);

/* Put the world back on the native engine (tl_world_set_engine "talus"). */
tl_status tl_world_use_native(tl_world *w, tl_error *err);

/* Friction (Coulomb coefficient used without a material pair) and collision
 * filters of static geom `index` (< tl_world_nstatic), which have no public
 * setter: the engine adapter around a world (src/engine/engine_native.c)
 * sets them from a scene. Marks the filters changed. */
void tl_world_set_static_params(tl_world *w, int index, double friction, unsigned group, unsigned mask);

/* Index into w->pairs of the material pair {a, b} (either order), -1 if
 * none: a hash lookup (world.c), O(1) expected. */
int tl_world_find_pair(const tl_world *w, const char *a, const char *b);

#endif
