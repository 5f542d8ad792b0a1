/* Talus world: gravity, time step, objects, the two-phase step.
 *
 * Step (DESIGN.md): tl_world_integrate1 updates kinematics and collision
 * geometry, detects contacts and computes M, h and the contact Jacobians of
 * every system; between the phases every kinematic and dynamic quantity of
 * the current state can be read; tl_world_integrate2 applies control, solves
 * every constraint (contacts, joint limits, joint friction, effort-limited
 * PD, mimic joints; by default each contact solved exactly on the Coulomb
 * cone, Hwangbo, Lee and Hutter, RA-L 2018), integrates u and then q
 * (semi-implicit Euler, quaternions through the exponential map).
 * tl_world_step does both. Stepping never allocates. */
#ifndef TALUS_WORLD_H
#define TALUS_WORLD_H

#include <stddef.h>

#include "talus/contact.h"
#include "talus/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_world tl_world;

/* ---- options: every setting of a world in one struct ----
 * A world's settings (time step, gravity, the constraint solver and its
 * parameters, contact ERP / CFM / compliance, margins, velocity limits, the
 * default material) in one plain struct, Box2D's b2WorldDef pattern:
 * take tl_world_options_default(), change fields, pass it to
 * tl_world_create_with_options or tl_world_set_options. The single setters
 * below (tl_world_set_timestep, ...) are thin wrappers that change one or a
 * few fields of it. Each field: unit, default, valid range, the setter that
 * also sets it. The layout has no padding (16 doubles, then 4 ints; checked
 * in src/world/world_options.c), so its bytes are well defined: a plugin
 * engine's world is rebuilt when they change (src/engine/engine_link.c) and
 * plugins read it as is (tl_engine_scene.options, talus/engine_plugin.h). */
typedef struct tl_world_options {
  double dt;                  /* time step, s; 1e-3; TL_DT_MIN .. TL_DT_MAX (1e-9 .. 1,
                                 talus/limits.h); tl_world_set_timestep */
  double gravity[3];          /* m/s^2, world frame; (0, 0, -9.81); 3 finite numbers;
                                 tl_world_set_gravity */
  double solver_tol;          /* N s: Gauss-Seidel sweeps stop when no impulse changed by
                                 more; 1e-10; >= 0; tl_world_set_solver_params */
  double sor;                 /* over-relaxation of PGS; 1; 0 < sor < 2;
                                 tl_world_set_solver_params */
  double erp;                 /* fraction of penetration (beyond slop) removed per step;
                                 0.2; 0 .. 1; tl_world_set_erp_cfm */
  double cfm;                 /* compliance added to contact normal rows, m/s per N s; 0;
                                 finite >= 0; tl_world_set_erp_cfm */
  double contact_compliance;  /* normal compliance of contacts relative to their Delassus
                                 diagonal; 3e-3; 0 .. 1; tl_world_set_contact_compliance */
  double contact_margin;      /* m: speculative contacts closer than this are solved;
                                 5e-3; finite >= 0; options only */
  double slop;                /* m: penetration tolerated without correction; 0;
                                 finite >= 0; options only */
  double max_recovery_speed;  /* m/s: cap of the penetration-recovery velocity; 1;
                                 >= 0 (+inf: no cap); options only */
  double limit_margin;        /* rad or m: joint limits closer than this become constraint
                                 rows; 0.02; finite >= 0; options only */
  double default_mu;          /* Coulomb friction of static geoms added later; 0.8;
                                 finite >= 0; tl_world_set_default_material */
  double default_restitution; /* restitution of pairs without a material pair entry; 0;
                                 0 .. 1; tl_world_set_default_material */
  double default_threshold;   /* m/s: slower impacts do not bounce; 0.01; finite >= 0;
                                 tl_world_set_default_material */
  tl_solver solver;           /* TL_SOLVER_PER_CONTACT; one of tl_solver (a plugin engine
                                 may offer fewer); tl_world_set_solver */
  int solver_max_iter;        /* Gauss-Seidel sweeps at most; 100; >= 1;
                                 tl_world_set_solver_params */
  int velocity_limits;        /* 1: URDF <limit velocity> enforced as constraint rows; 0;
                                 0 or 1; tl_world_set_velocity_limits */
  int reserved;               /* 0 (keeps the layout free of padding); must be 0 */
} tl_world_options;

/* The defaults above, by value (the settings of tl_world_create). */
tl_world_options tl_world_options_default(void);

/* Check every field of *opt against the ranges above; TL_ERR_ARGUMENT naming
 * the first bad field (err->element is the field name, e.g. "erp") and its
 * value. NULL opt: TL_ERR_ARGUMENT. Engine-specific limits (a plugin that
 * lacks a solver) are checked by tl_world_set_options, not here. */
tl_status tl_world_options_check(const tl_world_options *opt, tl_error *err);

/* Create an empty world: dt = 1e-3 s, gravity (0, 0, -9.81), no ground
 * (tl_world_options_default). */
tl_status tl_world_create(tl_world **out, tl_error *err);
/* Create an empty world with the settings *opt (NULL: the defaults),
 * checked as a whole first (tl_world_options_check: TL_ERR_ARGUMENT naming
 * the field; *out is then NULL). TL_ERR_MEMORY if out of memory. */
tl_status tl_world_create_with_options(tl_world **out, const tl_world_options *opt, tl_error *err);
/* Replace every setting of the world by *opt, checked as a whole before
 * anything changes: the field rules (tl_world_options_check), then the
 * engine's (on a plugin engine, talus/engine.h: solver offered, velocity
 * limits supported: TL_ERR_UNSUPPORTED naming it). On error the world is
 * unchanged. Takes effect at the next step; a plugin engine's world is
 * rebuilt (state carried over) when any byte of the options changed. */
tl_status tl_world_set_options(tl_world *world, const tl_world_options *opt, tl_error *err);
/* The world's settings into *out (a copy). TL_ERR_ARGUMENT if out is NULL. */
tl_status tl_world_get_options(const tl_world *world, tl_world_options *out, tl_error *err);
void tl_world_free(tl_world *world);

/* ---- engines (talus/engine.h) ----
 * A world runs on the native Talus engine unless created with, or switched
 * to, another: "talus", or a plugin name ("ode", "mujoco"), optionally
 * followed by ':' and engine options ("mujoco:cone=elliptic,impratio=100").
 * The public API is the same on every engine: controllers, world files and
 * the command line run unchanged. tl_world_set_engine may be called at any
 * time (the engine's world is built from this world's objects and state at
 * the next step); "talus" returns to the native engine. Errors:
 * TL_ERR_UNSUPPORTED when the plugin is missing or of another ABI (the
 * message lists the engines found and the folders searched) or does not
 * offer the world's solver; TL_ERR_ARGUMENT for a malformed name; when the
 * world already has systems, the plugin builds its world at once, so a scene
 * it cannot run is refused here (TL_ERR_UNSUPPORTED naming the feature). On
 * error the world keeps its engine. A plugin that does not offer the world's
 * solver gives the world its own default solver (ODE: TL_SOLVER_PGS, its
 * QuickStep); tl_world_set_solver then refuses solvers the engine lacks. */
tl_status tl_world_create_with_engine(tl_world **out, const char *engine, tl_error *err);
tl_status tl_world_set_engine(tl_world *world, const char *engine, tl_error *err);
/* Name of the world's engine as given ("talus" for the native engine). */
const char *tl_world_engine_name(const tl_world *world);
/* What the engine of a world approximates for its current scene (the
 * plugin's notes; "" for the native engine or before the first step). */
const char *tl_world_engine_notes(const tl_world *world);

/* Time step in seconds, TL_DT_MIN .. TL_DT_MAX (1e-9 .. 1 s; talus/limits.h,
 * the rule the command line, world files and Python share). */
tl_status tl_world_set_timestep(tl_world *world, double dt, tl_error *err);
double tl_world_timestep(const tl_world *world);
tl_status tl_world_set_gravity(tl_world *world, const double gravity[3], tl_error *err);
double tl_world_time(const tl_world *world); /* simulated time, s */

/* Gravity into g (3). */
void tl_world_gravity(const tl_world *world, double g[3]);

/* ---- static geometry (never moves; collides with every system) ---- */
/* The horizontal ground plane z = height, friction coefficient mu (>= 0),
 * material "ground". */
tl_status tl_world_add_ground(tl_world *world, double height, double mu, tl_error *err);
/* A static sphere, box, capsule, cylinder or plane (the plane z = 0 of its
 * frame) at pos (m) and orientation R (row-major, NULL = identity); size as
 * in tl_geom_type (ignored for a plane); material name or NULL. *index (may
 * be NULL) receives its static geom index. */
tl_status tl_world_add_static_geom(tl_world *world, tl_geom_type type, const double size[3],
                                   const double pos[3], const double R[9], const char *material,
                                   int *index, tl_error *err);
/* Heightmap terrain: heights[iy * nx + ix] (m, n = nx * ny values) at
 * (x0 + ix dx, y0 + iy dy); each grid cell is two triangles. Copied. */
tl_status tl_world_add_heightmap(tl_world *world, int nx, int ny, double x0, double y0, double dx,
                                 double dy, const double *heights, int n, const char *material,
                                 int *index, tl_error *err);

/* ---- reading the world back (viewers, recorders, bindings) ---- */
/* Systems in the order they were added (tl_system_index); NULL for a bad index. */
int tl_world_nsystem(const tl_world *world);
tl_system *tl_world_system(tl_world *world, int index);
/* Static geoms in the order they were added (the static geom index of
 * tl_contact_info.other_geom). tl_world_static_geom fills any non-NULL
 * output: type, size (as in tl_geom_type; zeros for planes and heightmaps),
 * world pose pos (m) and R (row-major), material name (points into the
 * world, valid while it lives) and *heightmap, the heightmap index for a
 * TL_GEOM_HEIGHTMAP geom, else -1. TL_ERR_ARGUMENT for a bad index. */
int tl_world_nstatic(const tl_world *world);
tl_status tl_world_static_geom(const tl_world *world, int index, tl_geom_type *type, double size[3],
                               double pos[3], double R[9], const char **material, int *heightmap,
                               tl_error *err);
/* Heightmap `index` (0 <= index < number of heightmaps, see
 * tl_world_static_geom): grid nx x ny from (x0, y0) with spacings dx, dy (m)
 * and its heights[iy * nx + ix] (m; points into the world). Any output may
 * be NULL. TL_ERR_ARGUMENT for a bad index. */
tl_status tl_world_heightmap(const tl_world *world, int index, int *nx, int *ny, double *x0,
                             double *y0, double *dx, double *dy, const double **heights,
                             tl_error *err);

/* ---- materials and collision filters ---- */
/* Friction, restitution and restitution threshold (m/s: slower impacts do
 * not bounce) for contacts between geoms of materials a and b (either
 * order). Pairs without an entry use the smaller of the two geoms' friction
 * coefficients (robot geoms: 0.8 unless set) and the default restitution. */
tl_status tl_world_set_material_pair(tl_world *world, const char *a, const char *b, double mu,
                                     double restitution, double threshold, tl_error *err);
/* ERP and CFM (see tl_world_set_erp_cfm) for contacts of the material pair
 * (a, b), set before with tl_world_set_material_pair; other pairs use the
 * world's. */
tl_status tl_world_set_material_pair_erp_cfm(tl_world *world, const char *a, const char *b, double erp,
                                            double cfm, tl_error *err);
/* Defaults: mu 0.8 (for static geoms added later), restitution 0, threshold 0.01 m/s. */
tl_status tl_world_set_default_material(tl_world *world, double mu, double restitution,
                                        double threshold, tl_error *err);
/* Never collide body ba of system sa with body bb of system sb (system -1:
 * all static geometry). */
tl_status tl_world_ignore_collision(tl_world *world, int sa, int ba, int sb, int bb, tl_error *err);

/* ---- the constraint solver ---- */
tl_status tl_world_set_solver(tl_world *world, tl_solver solver, tl_error *err);
/* Gauss-Seidel sweeps at most max_iter (default 100), stop after a sweep in
 * which no impulse, or no system's generalized impulse J^T lambda, changed
 * by more than tol N s (default 1e-10; the second test ends sweeps that only
 * trade impulse between redundant rows, which leaves the motion unchanged);
 * sor: over-relaxation of PGS (default 1). Impulses are warm-started from
 * the last step. */
tl_status tl_world_set_solver_params(tl_world *world, int max_iter, double tol, double sor,
                                     tl_error *err);
/* ODE's ERP (fraction of penetration removed per step, default 0.2) and CFM
 * (compliance added to contact normal rows, default 0). */
tl_status tl_world_set_erp_cfm(tl_world *world, double erp, double cfm, tl_error *err);
/* Normal compliance of contacts relative to their Delassus diagonal
 * (default 3e-3; world files: <solver compliance>): lets redundant contact
 * sets (a box face) settle in few Gauss-Seidel sweeps and keeps impulses
 * bounded when a body starts deep inside another. It does not touch
 * restitution: impacts (contacts with restitution > 0 approaching faster
 * than their threshold) are resolved before the solve by sequential
 * impulses on the exact Delassus block, which keep the kinetic energy of
 * elastic frictionless impacts exactly, also through chains of contacts
 * (Newton's cradle). On resting contacts it lets a body sink by about
 * compliance x (its weight's impulse per step) / G, far below the contact
 * margin. 0 makes contacts exactly rigid. */
tl_status tl_world_set_contact_compliance(tl_world *world, double relative, tl_error *err);
/* Joint velocity limits (URDF <limit velocity>, tl_system_set_joint_limits):
 * when enabled, every DOF with a finite limit v_max gets a unilateral
 * constraint row in the step's solve so that |u_k| <= v_max after the step
 * (per DOF of u; the floating base has none). Default: disabled (0), as in
 * most simulators, because URDF velocity limits are often placeholders; a
 * world file turns them on with <solver velocity_limits="true">. The rows
 * cost one scalar row per limited DOF. enabled: 0 or 1, else TL_ERR_ARGUMENT. */
tl_status tl_world_set_velocity_limits(tl_world *world, int enabled, tl_error *err);
int tl_world_velocity_limits(const tl_world *world);

/* Statistics of the last solve. */
tl_status tl_world_solver_stats(const tl_world *world, tl_solver_stats *out, tl_error *err);

/* Bytes of the native engine's per-step workspace, its arena (one block
 * holding the geom list and broadphase arrays, contacts, constraint rows and
 * pools, dense and Dantzig solve arrays and every system's step scratch;
 * src/native/native_workspace.c): laid out when objects are added or the
 * Dantzig solver is selected, never while stepping, and never part of a
 * snapshot. 0 while a plugin engine serves the world (its memory is the
 * plugin's). E.g. ANYmal C on the ground 2.3 MB, 100 boxes in a bin
 * (talus_prof's pile100) 5.0 MB; selecting the Dantzig solver adds 23 MB
 * for its 1200-row dense scratch. */
size_t tl_world_workspace_bytes(const tl_world *world);

/* Add an articulated system built from `model` (copied: the model may be
 * freed afterwards). The state starts at the model's default configuration
 * (tl_model_default_q: inside the joint limits) with zero velocity. *out is owned by the world. */
tl_status tl_world_add_system(tl_world *world, const tl_model *model, tl_system **out,
                              tl_error *err);

/* The two phases and the whole step. TL_ERR_DIVERGED if a state became
 * non-finite (the state is then left as it was before the step). */
tl_status tl_world_integrate1(tl_world *world, tl_error *err);
tl_status tl_world_integrate2(tl_world *world, tl_error *err);
tl_status tl_world_step(tl_world *world, tl_error *err);

/* ---- snapshots: save and restore the whole simulation state as bytes ----
 * ("state" alone, as in tl_system_set_state, means q and u.)
 * A snapshot holds everything that influences the next step: the time; each
 * system's q, u, PD gains and targets, feedforward force, pending external
 * forces, last applied force, integrator and joint-row impulses (warm
 * start); the contacts of the last step with their impulses (the next step
 * warm-starts from them). The order of the contacts, hence of the
 * Gauss-Seidel sweeps, follows from the state alone. Restoring it and stepping
 * gives the original trajectory bit for bit. Not in a snapshot: the world's
 * settings (time step, gravity, solver, materials, static geometry) and the
 * systems' model parameters (masses, limits, ... as changed by
 * tl_system_set_*), which the world it is restored into keeps: a study can
 * restore one state and randomize parameters after. The buffer is a
 * versioned byte layout (src/world/snapshot.c), in the byte order of the
 * machine that wrote it. No allocation in get/set. Native engine only: on a
 * plugin engine (talus/engine.h), whose solver state a snapshot cannot hold,
 * get and set return TL_ERR_UNSUPPORTED. */

/* Bytes of a snapshot of the world's current state (changes with the number
 * of contacts). */
size_t tl_world_snapshot_size(const tl_world *world);
/* Write the snapshot into buf (size bytes, at least tl_world_snapshot_size);
 * *written (may be NULL) receives its length. TL_ERR_ARGUMENT if buf is
 * too small. */
tl_status tl_world_snapshot_save(const tl_world *world, void *buf, size_t size, size_t *written, tl_error *err);
/* Restore a snapshot of exactly `size` bytes. Everything is checked before
 * anything changes (header, version, byte order, length, finite numbers,
 * and each system's model structure against a fingerprint: joint types,
 * tree, link, joint and geom names) and by the rules of the setters: time
 * finite and >= 0; q as tl_system_set_state takes it (|q_i| <= 1e9, no zero
 * quaternion), the same for q_target; PD gains >= 0; each contact's friction
 * >= 0, restitution and erp in [0, 1], threshold and cfm >= 0, its frame
 * orthonormal and right-handed, no contact recorded twice. A snapshot of
 * another world or model, or one that breaks a rule, is refused with
 * TL_ERR_INVALID saying what is wrong, and the world is left byte for byte as
 * it was. */
tl_status tl_world_snapshot_restore(tl_world *world, const void *buf, size_t size, tl_error *err);
/* The same through a file (errors name the file). Saving follows the output
 * rules of tl_recorder_write_html (a regular file replaced atomically, a
 * device or FIFO written through, never replaced). Loading takes a regular
 * file only, refused unread if it is larger than any snapshot of this world
 * can be. */
tl_status tl_world_snapshot_save_file(const tl_world *world, const char *path, tl_error *err);
tl_status tl_world_snapshot_restore_file(tl_world *world, const char *path, tl_error *err);

/* Deprecated: the names before issue 22 ("state" now means (q, u) only; byte
 * snapshots are tl_world_snapshot_*). Thin functions calling the ones above,
 * kept so that existing programs still build and link. */
size_t tl_world_state_size(const tl_world *world);             /* = tl_world_snapshot_size */
tl_status tl_world_get_state(const tl_world *world, void *buf, size_t size, size_t *written,
                             tl_error *err);                   /* = tl_world_snapshot_save */
tl_status tl_world_set_state(tl_world *world, const void *buf, size_t size,
                             tl_error *err);                   /* = tl_world_snapshot_restore */
tl_status tl_world_save_state(const tl_world *world, const char *path,
                              tl_error *err);                  /* = tl_world_snapshot_save_file */
tl_status tl_world_load_state(tl_world *world, const char *path,
                              tl_error *err);                  /* = tl_world_snapshot_restore_file */

/* ---- derivatives of the step (docs/derivatives.md, "Derivatives of the step") ----
 * The world's state is x = (dq, u): dq the tangent coordinates of every
 * system's configuration (tl_model_integrate: nv per system), u the
 * generalized velocities; systems are stacked in the order they were added,
 * all tangent parts first, then all velocities: x = (dq_0, dq_1, ..., u_0,
 * u_1, ...), 2 nv entries with nv the sum of the systems' nv. The input tau
 * (nv) is a generalized force (N, N m) added to each system's equation of
 * motion over the step, as tl_system_add_external_force's generalized force
 * or the feed-forward force within its effort limit (beyond it tau_ff is
 * clamped and its derivative is 0, not this one). The derivatives are of
 * one tl_world_step from the current state (call it between steps, not
 * between integrate1 and integrate2):
 *   A = dx+/dx (2 nv x 2 nv), B = dx+/dtau (2 nv x nv), row-major,
 * entry (i, j) = d x+_i / d x_j, the tangent part of x+ taken at the
 * unperturbed next configuration q+: q+(x (+) dx) = q+ (+) (A dx)[0:nv]. */
typedef enum tl_deriv_mode {
  /* Exact derivatives of the step (semi-implicit Euler with the implicit
   * PD, joint springs and damping): the analytic RNEA derivatives
   * (Carpentier & Mansard 2018) through M_eff^-1 and the Jacobians of
   * q (+) dt u; the step's joint rows (limits, Coulomb joint friction,
   * saturated PD, mimic equalities, velocity limits) and its contacts by
   * the implicit function theorem on the active set of its solve (rows at a
   * bound keep their impulse; sticking contacts as 3 equalities, sliding
   * ones on their cone with their sliding direction's derivative, open ones
   * dropped; the q dependence of the contact Jacobians, targets and
   * relative compliance included; docs/derivatives.md). Falls back to
   * TL_DERIV_FD_CENTRED (reported in *used) for a contact between systems
   * or within one, against static geometry other than a plane or a box face,
   * of a cylinder or on a heightmap, with a restitution impulse, under the
   * PGS or Dantzig solver, more than 4 nv contacts pushing on one system, a
   * singular active set, a saturated PD on a ball joint, dependent active
   * joint rows, a system on TL_INTEGRATOR_RK4, or loop constraints
   * (talus/constraint.h) in the world. */
  TL_DERIV_ANALYTIC = 0,
  /* Centred finite differences of whole steps, like MuJoCo's
   * mjd_transitionFD: each column of x (q through tl_model_integrate) and tau
   * perturbed by +-eps, 4 nv + 2 nv + 1 steps, every step from the snapshot
   * of the current state. Everything in the step is included. */
  TL_DERIV_FD_CENTRED = 1
} tl_deriv_mode;

/* Scratch of tl_world_step_derivatives for one world: created once (this
 * allocates), so that the derivative calls never allocate. It stays valid
 * while the world keeps its systems and static geometry (adding any makes
 * the calls return TL_ERR_ARGUMENT: create a new one). */
typedef struct tl_step_derivatives tl_step_derivatives;
tl_status tl_step_derivatives_create(const tl_world *world, tl_step_derivatives **out, tl_error *err);
void tl_step_derivatives_free(tl_step_derivatives *ws);
/* nv of the world it was made for (sum over the systems). */
int tl_step_derivatives_nv(const tl_step_derivatives *ws);
/* Perturbation of the finite differences: 1e-6 by default (MuJoCo's
 * default; the error of the centred differences is O(eps^2) plus the
 * rounding and solver tolerance over eps). Units of the column perturbed
 * (m, rad, m/s, rad/s, N, N m). Finite and > 0, else TL_ERR_ARGUMENT. */
tl_status tl_step_derivatives_set_eps(tl_step_derivatives *ws, double eps, tl_error *err);

/* A (2 nv x 2 nv) and B (2 nv x nv) of one tl_world_step from the current
 * state (above), by `mode`; *used (may be NULL) receives the mode actually
 * used (TL_DERIV_FD_CENTRED when the analytic mode fell back). The world is
 * left exactly as it was (its snapshot byte for byte, and the steps after
 * bit for bit): the call saves its snapshot and restores it after each step
 * it takes. Allocates nothing. Errors: TL_ERR_ARGUMENT for NULL arguments,
 * nv not that of the workspace, a workspace of another world or one made
 * before systems or static geometry were added, an unknown mode;
 * TL_ERR_UNSUPPORTED on a plugin engine; a step's error (TL_ERR_DIVERGED)
 * as tl_world_step reports it (the world is then restored too; A and B
 * then hold no meaningful values). */
tl_status tl_world_step_derivatives(tl_world *world, tl_step_derivatives *ws, tl_deriv_mode mode, double *A,
                                    double *B, int nv, tl_deriv_mode *used, tl_error *err);

/* Contacts found by the last integrate1 (impulses from the last integrate2). */
int tl_world_ncontact(const tl_world *world);
tl_status tl_world_contact(const tl_world *world, int k, tl_contact_info *out, tl_error *err);

#ifdef __cplusplus
}
#endif
#endif
