/* Talus engines: the abstract physics layer (Simspark's APL, the bridge
 * pattern).
 *
 * Applications, controllers, the command line and the Python module talk to
 * the public tl_world_* / tl_system_* API. Behind a world sits an engine: the
 * native Talus engine (the default) or a plugin, a shared library loaded at
 * run time with dlopen by its name (talus-engine-ode, talus-engine-mujoco),
 * chosen with tl_world_create_with_engine / tl_world_set_engine (world.h).
 * Every engine implements the function table tl_engine_api below over its own
 * opaque world (tl_engine_world), built from an engine-neutral scene
 * (tl_engine_scene: gravity, time step, solver settings, static geometry,
 * heightmaps, materials and the compiled models of the articulated systems,
 * seen through tl_engine_model, plain arrays in Talus's conventions).
 *
 * How a world with a plugin engine works (src/engine/engine_link.c):
 * - the tl_world keeps its native description (systems with their model
 *   copies, static geometry, materials, settings) and the native state q, u
 *   of every system; the plugin world is built from that description at the
 *   first step, and built again (carrying the state over) whenever the
 *   description changes (dynamics randomization, a new object, new gravity);
 * - integrate1 / integrate2 call the plugin's; before them the state is
 *   pushed when the application changed it (tl_system_set_state), and the
 *   PD gains and targets, the feedforward force and the generalized force of
 *   the external forces of this step are pushed every step; after
 *   integrate2 the plugin's q, u are read back into the system, and its
 *   contacts (tl_world_contact) and applied forces
 *   (tl_system_applied_generalized_force) come from the plugin;
 * - every kinematic and dynamic query of talus/system.h (poses, Jacobians,
 *   M, h, RNEA, ABA, momenta, energies) is computed by Talus's dynamics layer
 *   at the plugin's q, u: the same model, so the answer is the model's, not
 *   the plugin's own internal quantity (which, where the plugin approximates
 *   the model, e.g. ODE's rotor inertia, can differ: see the engine notes);
 * - what an engine cannot do gives TL_ERR_UNSUPPORTED naming the missing
 *   feature, at the call (tl_world_set_solver) or at the step that would
 *   need it, never a silent approximation; what it approximates is listed in
 *   tl_world_engine_notes.
 *
 * Conventions at the interface are Talus's (DESIGN.md): q, u in the joint
 * order of the compiled model, floating base q = [x y z qw qx qy qz] and
 * u = [v w] (linear velocity of the base origin and angular velocity, both
 * world frame), ball joints: quaternion (w x y z) and angular velocity in the
 * parent joint frame; SI units; rotation matrices row-major.
 *
 *
 * This header holds the user-facing calls: finding and listing engines, what
 * an engine supports, its name, version and description. A world is put on an
 * engine with tl_world_create_with_engine / tl_world_set_engine (world.h,
 * "NAME" or "NAME:KEY=VALUE,..."), and tl_world_engine_notes (world.h) says what the engine
 * approximates. The plugin ABI (the function table tl_engine_api, the scene
 * an engine builds its world from, the model view, TL_ENGINE_ABI_VERSION and
 * the plugin entry point) is in talus/engine_plugin.h, as MuJoCo keeps
 * mjplugin.h apart: only engines and the library's engine layer include it. */
#ifndef TALUS_ENGINE_H
#define TALUS_ENGINE_H

#include <stddef.h>

#include "talus/contact.h"
#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_model tl_model;
typedef struct tl_world tl_world;
/* An engine: its function table (defined in talus/engine_plugin.h). */
typedef struct tl_engine_api tl_engine_api;

/* ------------------------------------------------------------ capabilities */

/* Features an engine may lack (bits of tl_engine_caps.features). */
typedef enum tl_engine_feature {
  TL_ENGINE_ROTOR_INERTIA = 1u << 0,   /* reflected rotor inertia on diag(M) */
  TL_ENGINE_JOINT_DAMPING = 1u << 1,   /* viscous joint damping */
  TL_ENGINE_JOINT_FRICTION = 1u << 2,  /* Coulomb joint friction */
  TL_ENGINE_JOINT_SPRING = 1u << 3,    /* joint springs (stiffness, spring_mount) */
  TL_ENGINE_JOINT_LIMITS = 1u << 4,    /* position limits of 1-DOF joints */
  TL_ENGINE_EFFORT_LIMITS = 1u << 5,   /* actuation limits of the PD + feedforward */
  TL_ENGINE_MIMIC = 1u << 6,           /* <mimic> equality constraints */
  TL_ENGINE_RESTITUTION = 1u << 7,     /* contact restitution (bounce) */
  TL_ENGINE_SELF_COLLISION = 1u << 8,  /* collisions between bodies of one system */
  TL_ENGINE_RK4 = 1u << 9,             /* TL_INTEGRATOR_RK4 systems */
  TL_ENGINE_BASE_PD = 1u << 10,        /* PD gains on the 6 floating-base DOFs */
  TL_ENGINE_SOLVER_STATS = 1u << 11,   /* tl_world_solver_stats */
  TL_ENGINE_CONTACT_ERP_CFM = 1u << 12, /* contact ERP / CFM (world and per material pair) */
  TL_ENGINE_VELOCITY_LIMITS = 1u << 13, /* joint velocity limits as constraints (tl_world_set_velocity_limits) */
  TL_ENGINE_CONSTRAINTS = 1u << 14     /* loop constraints (talus/constraint.h) */
} tl_engine_feature;

/* What an engine supports. joints: bit (1u << tl_joint_type) per joint type;
 * geoms: bit (1u << tl_geom_type) per geom type (on systems or static);
 * solvers: bit (1u << tl_solver) per solver it accepts; default_solver: the
 * solver a new world on this engine gets; features: tl_engine_feature bits;
 * constraints: bit (1u << tl_constraint_type) per loop-constraint type it
 * maps (with TL_ENGINE_CONSTRAINTS in features; its notes say how). */
typedef struct tl_engine_caps {
  unsigned joints, geoms, solvers, features;
  tl_solver default_solver;
  unsigned constraints;
} tl_engine_caps;

/* Name of one feature bit ("rotor inertia", ...), "?" if not one bit. */
const char *tl_engine_feature_name(unsigned feature);

/* ------------------------------------------------------------ registry */

/* The native Talus engine's table (src/engine/engine_native.c): a Talus
 * world built from the scene, every call the public API's. */
const tl_engine_api *tl_engine_native(void);

/* The engine named `name` ("talus" or a plugin name; text after ':' is
 * ignored here): the native table, or the plugin loaded from the first
 * folder of the search path (see above) that has it. TL_ERR_UNSUPPORTED when
 * it is not found or its ABI does not match (the message lists the engines
 * found and the folders searched), TL_ERR_ARGUMENT for a NULL or malformed
 * name. Thread-safe; a plugin is loaded once per process. */
tl_status tl_engine_find(const char *name, const tl_engine_api **out, tl_error *err);

/* The engines available: "talus" first, then each plugin found on the
 * search path, as a ", "-separated list into buf (len bytes). Returns the
 * number of engines. */
int tl_engine_list(char *buf, size_t len);

/* The folders searched for plugins, ':'-separated, into buf. */
void tl_engine_search_path(char *buf, size_t len);

/* ------------------------------------------------------------ options */

/* One engine-specific setting, KEY=VALUE (as text: each engine parses its own
 * keys and names a bad one in its error; docs/engines.md lists them). */
typedef struct tl_engine_option {
  const char *key;   /* non-empty; no ',', ':', '=' or whitespace */
  const char *value; /* no ',' (may be empty) */
} tl_engine_option;

/* Most settings tl_engine_options_parse reads. */
#define TL_ENGINE_MAX_OPTIONS 32

/* Which engine a world runs on, and its settings (tl_engine_options_default:
 * the native engine, no settings). The text form "NAME[:KEY=VALUE,...]" that
 * tl_world_create_with_engine / tl_world_set_engine, --engine and Python's
 * engine= take is this struct written out by tl_engine_options_format. */
typedef struct tl_engine_options {
  const char *name;             /* "talus" (default: the native engine), "ode", "mujoco" or a
                                   plugin's NAME (1 to 47 of a-z 0-9 _ -) */
  const tl_engine_option *opts; /* nopt settings, in the order the engine reads them (default NULL) */
  int nopt;                     /* 0 .. TL_ENGINE_MAX_OPTIONS (default 0) */
} tl_engine_options;

tl_engine_options tl_engine_options_default(void);

/* Write opt as the text "NAME" or "NAME:KEY=VALUE,..." into buf (len bytes).
 * opt NULL: the defaults ("talus"). TL_ERR_ARGUMENT naming the field or the
 * key: an empty or malformed name, a key that is empty or holds ',', ':',
 * '=' or whitespace, a value holding ',', nopt out of range, or text longer
 * than len - 1. */
tl_status tl_engine_options_format(const tl_engine_options *opt, char *buf, size_t len, tl_error *err);

/* Parse the text "NAME[:KEY=VALUE,...]" (the parsing layer of the command
 * line and Python) into *out. The strings are copied into buf (len bytes;
 * strlen(text) + 1 is enough) and out->opts points at pairs (cap entries);
 * both must outlive *out. Settings are separated by ',' (empty ones skipped);
 * each needs a '='. Errors: TL_ERR_ARGUMENT naming the setting (a setting
 * without '=' or with an empty key, more than cap settings, a malformed name,
 * buf too small). Whether the engine knows the keys is checked when a world is
 * put on it. */
tl_status tl_engine_options_parse(const char *text, tl_engine_options *out, tl_engine_option *pairs, int cap,
                                  char *buf, size_t len, tl_error *err);

/* A new world on the engine of opt (NULL: the native engine): exactly
 * tl_world_create_with_engine with tl_engine_options_format's text. Errors:
 * those of tl_engine_options_format and tl_world_create_with_engine. */
tl_status tl_engine_create_world(const tl_engine_options *opt, tl_world **out, tl_error *err);
/* Put an existing world on the engine of opt (NULL: the native engine):
 * tl_world_set_engine with the text of opt. */
tl_status tl_engine_attach_world(tl_world *world, const tl_engine_options *opt, tl_error *err);

/* The engine's name ("talus", "ode", "mujoco"), its version ("ODE 0.16.2")
 * and its one-paragraph description; "" when api is NULL. */
const char *tl_engine_name(const tl_engine_api *api);
const char *tl_engine_version(const tl_engine_api *api);
const char *tl_engine_description(const tl_engine_api *api);
/* What it supports (all zero when api is NULL). */
void tl_engine_capabilities(const tl_engine_api *api, tl_engine_caps *caps);

#ifdef __cplusplus
}
#endif
#endif
