/* Internal: the world's engine table (tl_world_engine), what a tl_world
 * calls to step and query whatever engine serves it. The public tl_world_*
 * functions that an engine must serve (src/world/world.c, snapshot.c)
 * dispatch through w->engine->op(...) and never test which engine it is.
 * Two implementations:
 *   src/native/native.c     tl_native_world_engine(): the native engine (its
 *                           workspace struct tl_native, behind the world in
 *                           its allocation: src/native/native_internal.h)
 *   src/engine/engine_link.c  a world bound to a plugin (w->engine_data: the
 *                           link to the plugin's world, talus/engine.h)
 * A world starts on the native engine (tl_world_create); tl_world_set_engine
 * (engine_link.c) swaps the table through tl_world_use_engine
 * (world_internal.h). Every operation gets the world; what an engine keeps
 * of its own is the native workspace or hangs off w->engine_data. */
#ifndef TALUS_WORLD_ENGINE_H
#define TALUS_WORLD_ENGINE_H

#include <stddef.h>

#include "talus/world.h"

typedef struct tl_world_engine tl_world_engine;

/* The snapshot's engine section (snapshot.c; its layout in snapshot.c's
 * opening comment): the engine's warm-start state, the native engine's last
 * contacts. `bytes` / `bytes_max`: the section's size now / with a full
 * contact buffer; `count`: the records (header's ncontact); `ngeom`: the
 * geoms the records index (header's ngeom); `put` writes the section at *p
 * and advances it; `check` reads n records at *p (bounded by end), checks
 * every one (TL_ERR_INVALID naming the record) and advances *p, changing
 * nothing; `apply` installs n checked records from p. */
typedef struct tl_world_snapshot_hooks {
  size_t (*bytes)(const tl_world *w);
  size_t (*bytes_max)(const tl_world *w);
  int (*count)(const tl_world *w);
  int (*ngeom)(const tl_world *w);
  int (*capacity)(const tl_world *w);
  void (*put)(const tl_world *w, unsigned char **p);
  tl_status (*check)(const tl_world *w, const unsigned char **p, const unsigned char *end, int n, tl_error *err);
  void (*apply)(tl_world *w, const unsigned char *p, int n);
} tl_world_snapshot_hooks;

struct tl_world_engine {
  /* Take over the world: build what the engine keeps from the description
   * (the native engine: its workspace sized for every object). TL_ERR_MEMORY
   * leaves the world on its old engine. */
  tl_status (*attach)(tl_world *w, tl_error *err);
  /* Free what the engine keeps (tl_world_free, or another engine took over); data: its
   * w->engine_data of then (w->engine_data may already be the next engine's). */
  void (*detach)(tl_world *w, void *data);
  /* Systems, static geoms or heightmaps were added: resize. TL_ERR_MEMORY. */
  tl_status (*objects_changed)(tl_world *w, tl_error *err);
  /* The step's two phases (talus/world.h, tl_world_integrate1 / 2). */
  tl_status (*integrate1)(tl_world *w, tl_error *err);
  tl_status (*integrate2)(tl_world *w, tl_error *err);
  /* Contacts of the last collision step and contact k of them (k checked by the caller: 0 <= k < ncontact). */
  int (*ncontact)(const tl_world *w);
  tl_status (*contact)(const tl_world *w, int k, tl_contact_info *out, tl_error *err);
  /* Statistics of the last solve (out not NULL). */
  tl_status (*solver_stats)(const tl_world *w, tl_solver_stats *out, tl_error *err);
  /* TL_OK if the engine offers `solver` (and has made room for it), else
   * TL_ERR_UNSUPPORTED / TL_ERR_MEMORY; the caller then records it. */
  tl_status (*set_solver)(tl_world *w, tl_solver solver, tl_error *err);
  /* TL_OK if the engine has `feature` (a tl_engine_feature bit, talus/engine.h), else TL_ERR_UNSUPPORTED naming it. */
  tl_status (*check_feature)(const tl_world *w, unsigned feature, tl_error *err);
  /* The engine's name as selected ("talus", "mujoco:cone=round"), and its notes ("" if none). */
  const char *(*name)(const tl_world *w);
  const char *(*notes)(const tl_world *w);
  /* Joint reaction wrenches of system s over the last step (tl_system_joint_wrench,
   * talus/system.h): frame -1: out[6 b .. 6 b + 5] = (force, moment) of joint b in its child
   * joint frame, for every body b; frame >= 0 (checked by the caller): out[0..5] = the wrench
   * across that frame (tl_system_frame_wrench). NULL: the engine cannot tell them
   * (TL_ERR_UNSUPPORTED). */
  tl_status (*joint_wrenches)(tl_world *w, tl_system *s, int frame, double *out, tl_error *err);
  /* The snapshot's engine section; NULL: the engine's state cannot be
   * snapshotted (a plugin keeps warm starts the snapshot cannot hold). */
  const tl_world_snapshot_hooks *snapshot;
  /* Bytes of the engine's per-step workspace (tl_world_workspace_bytes); NULL: 0 (a plugin's). */
  size_t (*workspace_bytes)(const tl_world *w);
};

#endif
