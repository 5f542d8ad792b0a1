/* The native engine's implementation of the world's engine table
 * (world/world_engine.h): attach builds the workspace (struct tl_native,
 * native/native_internal.h; its arena: native_workspace.c) for the world's
 * objects, objects_changed and set_solver re-plan it, the step is the
 * pipeline of step.c, contacts and solver statistics are read from the
 * workspace, the snapshot's engine section is native_snapshot.c's. The
 * native engine knows nothing of plugins. */
#include <string.h>

#include "base/error.h"
#include "talus/engine.h"
#include "math/tl_math.h"
#include "native/native_internal.h"
#include "native/step.h"

/* Re-plan the arena after the sizing of `size` (one of the functions below)
 * changed capacities: on failure every capacity is put back, the old arena
 * kept, and TL_ERR_MEMORY returned with `what`. */
static tl_status fit(tl_world *w, int (*size)(tl_world *w), const char *what, tl_error *err) {
  tl_native *n = tl_native_of(w), saved = *n;
  if (size(w) || tl_native_workspace_fit(w)) {
    tl_cproj cproj = n->cproj; /* its own block, maybe grown: kept (it is sized for at least as much) */
    *n = saved;
    n->cproj = cproj;
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "%s", what);
  }
  return TL_OK;
}

/* Capacities for the world's objects: contacts, geom list and broadphase,
 * constraint rows and pools, loop rows, dense matrices, every system's step
 * scratch. -1: out of memory (the loop projection's scratch). */
static int size_objects(tl_world *w) {
  tl_world_size_geoms(w);
  if (tl_world_size_constraints(w)) return -1;
  tl_native_size_systems(w);
  return 0;
}

/* Dense Dantzig scratch for TL_DANTZIG_MAX_ROWS rows (laid out when the solver is selected). */
static int size_dantzig(tl_world *w) {
  tl_native *n = tl_native_of(w);
  if (n->lcp_cap < TL_DANTZIG_MAX_ROWS) n->lcp_cap = TL_DANTZIG_MAX_ROWS;
  return 0;
}

/* Free the arena and zero the workspace (it stays with the world, ready for the next attach). */
static void native_detach(tl_world *w, void *data) {
  (void)data;
  tl_native *n = tl_native_of(w);
  tl_native_workspace_free(w);
  tl_loop_free(w); /* the loop projection's scratch, outside the arena */
  memset(n, 0, sizeof(*n));
}

/* The arena re-planned for the objects (one allocation when a capacity
 * grows, none otherwise), then the geom list and broadphase arrays filled. */
static tl_status native_objects_changed(tl_world *w, tl_error *err) {
  tl_status st = fit(w, size_objects, "out of memory", err);
  if (!st) tl_world_rebuild_geoms(w);
  return st;
}

/* The workspace (zero: fresh from tl_world_create or native_detach) sized for
 * every object; the world's filters marked changed. */
static tl_status native_attach(tl_world *w, tl_error *err) {
  w->filters_stale = 1;
  tl_status st = native_objects_changed(w, err);
  if (!st && w->opt.solver == TL_SOLVER_DANTZIG)
    st = fit(w, size_dantzig, "out of memory for the Dantzig solver", err);
  if (st) native_detach(w, NULL);
  return st;
}

static int native_ncontact(const tl_world *w) { return tl_native_of(w)->ncontact; }

static tl_status native_contact(const tl_world *w, int k, tl_contact_info *out, tl_error *err) {
  (void)err;
  const tl_wcontact *c = &tl_native_of(w)->contacts[k];
  memset(out, 0, sizeof(*out));
  out->system = c->sa;
  out->body = c->ba;
  out->geom = c->ga;
  out->other_system = c->sb;
  out->other_body = c->bb;
  out->other_geom = c->gb;
  tl_v3_copy(out->pos, c->pos);
  tl_v3_copy(out->normal, c->frame + 6);
  out->depth = c->depth;
  out->mu = c->mu;
  for (int r = 0; r < 3; r++) tl_v3_addscl(out->impulse, c->frame + 3 * r, c->lambda[r] + c->impact[r]);
  return TL_OK;
}

static tl_status native_solver_stats(const tl_world *w, tl_solver_stats *out, tl_error *err) {
  (void)err;
  *out = tl_native_of(w)->stats;
  return TL_OK;
}

static tl_status native_set_solver(tl_world *w, tl_solver solver, tl_error *err) {
  if (solver == TL_SOLVER_DANTZIG) return fit(w, size_dantzig, "out of memory for the Dantzig solver", err);
  return TL_OK;
}

/* Bytes of the arena (its layout). */
static size_t native_workspace_bytes(const tl_world *w) { return tl_native_of(w)->ws_bytes; }

/* The native engine has every feature (loop constraints: contact/constraint_loop.c). */
static tl_status native_check_feature(const tl_world *w, unsigned feature, tl_error *err) {
  (void)w, (void)feature, (void)err;
  return TL_OK;
}

static const char *native_name(const tl_world *w) {
  (void)w;
  return "talus";
}

static const char *native_notes(const tl_world *w) {
  (void)w;
  return "";
}

static const tl_world_engine native_engine = {
    .attach = native_attach,
    .detach = native_detach,
    .objects_changed = native_objects_changed,
    .integrate1 = tl_native_integrate1,
    .integrate2 = tl_native_integrate2,
    .ncontact = native_ncontact,
    .contact = native_contact,
    .solver_stats = native_solver_stats,
    .set_solver = native_set_solver,
    .check_feature = native_check_feature,
    .name = native_name,
    .notes = native_notes,
    .joint_wrenches = tl_native_joint_wrenches,
    .snapshot = &tl_native_snapshot_hooks,
    .workspace_bytes = native_workspace_bytes,
};

const tl_world_engine *tl_native_world_engine(void) { return &native_engine; }

size_t tl_native_world_size(void) { return TL_NATIVE_OFFSET + sizeof(tl_native); }
