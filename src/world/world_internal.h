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
 * The per-system step scratch (TL_SYSTEM_SCRATCH: force .. spring_e) is
 * written and read by the native step only and lies in the native engine's
 * arena (src/native/native_workspace.c); a system's own allocation
 * (system.c) holds its model, state, control, the joint rows' warm starts
 * (lambda_joint, saved in snapshots) and what queries read after a step
 * (pd_row, the external forces' records, the wrench scratch). */
#ifndef TALUS_WORLD_INTERNAL_H
#define TALUS_WORLD_INTERNAL_H

#include "contact/narrowphase.h"
#include "dynamics/dynamics.h"
#include "talus/constraint.h"
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
  X(spring_e, double, nv)       /* spring errors of the step */

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
  double *ext_w;        /* [15 nbody] the world-frame forces behind ext, per body owning DOFs: wrench
                           (torque about the origin; force), then sum of p f^T (their q dependence,
                           tl_system_passive_force_derivatives); valid while ext equals ext_ref */
  double *ext_ref;      /* [nv] ext as the last add_external_* left it */
  double *passive_tmp;  /* [nv] scratch of the passive dynamics derivatives (system_derivatives.c) */

  /* step scratch (TL_SYSTEM_SCRATCH above): pointers into the native engine's arena, set by it
     (src/native/native_workspace.c) when the system is added; NULL while a plugin engine serves
     the world */
#define TL_SYSTEM_SCRATCH_FIELD(name, type, count) type *name;
  TL_SYSTEM_SCRATCH(TL_SYSTEM_SCRATCH_FIELD)
#undef TL_SYSTEM_SCRATCH_FIELD
  tl_hull *hulls;       /* [m->nhull] views of the model's hull pools */
  /* what a step leaves for the next one or for queries, allocated with the system (system.c) */
  double *lambda_joint;  /* [TL_JOINT_SLOTS nv] last impulses of joint rows (lower limit,
                            upper limit, friction, PD, velocity limit signed by its side) for
                            warm starting (in the snapshot) */
  unsigned char *pd_row; /* [nv] 1: the last step made the DOF's PD a boxed row (it saturated);
                            read after the step by tl_system_implicit_diagonal
                            (tl_system_effective_inverse_mass_matrix), so not step scratch */
  /* joint reaction wrenches of the last step (tl_system_joint_wrench, src/world/system_wrench.c,
     computed on request by the engine: src/native/joint_wrench.c); the step never touches these */
  double *ext_sp;       /* [2][6 nbody] two slots of the external forces of tl_system_add_external_*
                           per body: spatial (moment about the world origin, force), world axes,
                           N m and N; the slot of the coming step and that of the last one */
  double ext_t[2];      /* world time at which each slot's forces were added (the start of the step
                           they act in); NAN: empty */
  double ext_lost;      /* start time of a step whose external forces came without their points
                           (a snapshot restore, the plugin adapter's generalized force); NAN: none */
  double *wrench_ws;    /* scratch of the wrench computation (tl_system_wrench_ws_size doubles) */
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

/* A constraint of the world (talus/constraint.h), its declaration resolved
 * to bodies: frames in the BODY frames (a merged fixed link's frame carried
 * over), the hinge axis as a unit vector in both body frames, the distance
 * bounds. Written by tl_world_add_constraint (world_constraint.c); the
 * engines read it; `force` and `torque` are the serving engine's output of
 * the last step. */
typedef struct tl_constraint {
  tl_constraint_type type;
  char name[64];
  int sys[2], body[2];  /* sys[1] = body[1] = -1: the world frame */
  double pos[2][3];     /* frame origins in the body frames (world frame for the world), m */
  double rot[2][9];     /* frame orientations in the body frames, row-major */
  double axis[2][3];    /* hinge: the unit axis in body 1's and body 2's frames */
  double lo, hi;        /* distance: bounds of |p1 - p2| (lo = hi: rigid; -inf / +inf: none), m */
  double erp, cfm;      /* softness (0, 0: exact) */
  double force[3], torque[3]; /* last step's wrench on body 1 at frame 1's origin, world frame */
} tl_constraint;

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

  int nconstraint, cap_constraint;
  tl_constraint *constraints; /* loop constraints (talus/constraint.h, world_constraint.c) */

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

/* ---- joint reaction wrenches (src/world/system_wrench.c) ---- */
/* Doubles of s->wrench_ws for a model of nbody bodies, nv DOFs, nq coordinates. */
size_t tl_system_wrench_ws_size(int nbody, int nv, int nq);
/* Set the bookkeeping of a new system (empty external-force slots). */
void tl_system_wrench_init(tl_system *s);
/* tl_system_add_external_*: the spatial force F = (moment about the world
 * origin, force) (N m, N; world axes) on body b, for the coming step. */
void tl_system_wrench_note_external(tl_system *s, int b, const double F[6]);
/* tl_system_clear_external_forces: the coming step's forces are dropped. */
void tl_system_wrench_clear_external(tl_system *s);
/* s->ext was written whole, without the points of its forces (a snapshot
 * restore, the plugin adapter): the coming step's wrenches cannot be told. */
void tl_system_wrench_ext_replaced(tl_system *s);
/* The external forces of the step that ended at the world's current time,
 * spatial per body (6 nbody doubles, as ext_sp), or NULL if none; *lost = 1
 * when that step had external forces whose points are not known. */
const double *tl_system_wrench_last_external(const tl_system *s, int *lost);
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
