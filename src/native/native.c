/* The native engine's implementation of the world's engine table
 * (world/world_engine.h): attach builds the workspace (struct tl_native,
 * native/native_internal.h) for the world's objects, the step is the
 * pipeline of step.c, contacts and solver statistics are read from the
 * workspace, the snapshot's engine section is native_snapshot.c's. The
 * native engine knows nothing of plugins. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "talus/engine.h"
#include "math/tl_math.h"
#include "native/native_internal.h"
#include "native/step.h"

/* Dense Dantzig scratch for up to `rows` rows (allocated when selected). */
static int reserve_dantzig(tl_world *w, int rows) {
  tl_native *n = tl_native_of(w);
  if (rows <= n->lcp_cap && n->lcp) return 0;
  tl_lcp_work_free(n->lcp);
  n->lcp = tl_lcp_work_create(rows);
  size_t r = (size_t)rows;
  double **d[] = {&n->lcp_b, &n->lcp_lo, &n->lcp_hi, &n->lcp_mu, &n->lcp_x};
  for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
    free(*d[i]);
    *d[i] = calloc(r, sizeof(double));
  }
  free(n->lcp_A);
  n->lcp_A = calloc(r * r, sizeof(double));
  free(n->lcp_findex);
  free(n->lcp_row_block);
  n->lcp_findex = calloc(r, sizeof(int));
  n->lcp_row_block = calloc(r, sizeof(int));
  int ok = n->lcp && n->lcp_A && n->lcp_b && n->lcp_lo && n->lcp_hi && n->lcp_mu && n->lcp_x &&
           n->lcp_findex && n->lcp_row_block;
  n->lcp_cap = ok ? rows : 0;
  return ok ? 0 : -1;
}

/* Free the workspace's arrays and zero it (it stays with the world, ready for the next attach). */
static void native_detach(tl_world *w, void *data) {
  (void)data;
  tl_native *n = tl_native_of(w);
  void *arr[] = {n->geomrefs, n->contacts, n->prev, n->shapes, n->geom_active, n->geom_act0, n->sys_active,
                 n->body_welded, n->body_adr, n->sys_geom, n->bsphere, n->bbox, n->unit_box, n->unit_order,
                 n->cpairs, n->body_geom_adr, n->body_geoms, n->gradius, n->blocks, n->pool, n->ipool,
                 n->eqgroups, n->eq_pool, n->lcp_A, n->lcp_b, n->lcp_lo, n->lcp_hi, n->lcp_mu, n->lcp_x,
                 n->lcp_findex, n->lcp_row_block};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  tl_lcp_work_free(n->lcp);
  tl_world_free_dense(w);
  tl_loop_free(w);
  memset(n, 0, sizeof(*n));
}

static tl_status native_objects_changed(tl_world *w, tl_error *err) {
  if (tl_world_rebuild_geoms(w) || tl_world_reserve_constraints(w))
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  return TL_OK;
}

/* The workspace (zero: fresh from tl_world_create or native_detach) sized for
 * every object; the world's filters marked changed. */
static tl_status native_attach(tl_world *w, tl_error *err) {
  w->filters_stale = 1;
  tl_status st = native_objects_changed(w, err);
  if (!st && w->opt.solver == TL_SOLVER_DANTZIG && reserve_dantzig(w, TL_DANTZIG_MAX_ROWS))
    st = tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory for the Dantzig solver");
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
  if (solver == TL_SOLVER_DANTZIG && reserve_dantzig(w, TL_DANTZIG_MAX_ROWS))
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory for the Dantzig solver");
  return TL_OK;
}

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
};

const tl_world_engine *tl_native_world_engine(void) { return &native_engine; }

size_t tl_native_world_size(void) { return TL_NATIVE_OFFSET + sizeof(tl_native); }
