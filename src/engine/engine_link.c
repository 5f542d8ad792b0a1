/* A Talus world bound to a plugin engine (talus/engine.h, "How a world with
 * a plugin engine works"): the plugin link's implementation of the world's
 * engine table (world/world_engine.h), installed by tl_world_set_engine; the
 * link is w->engine_data, and the world has no native workspace meanwhile.
 *
 * The world keeps its native description and each system's state; the
 * plugin's world is built from the description (tl_engine_scene_of_world)
 * and rebuilt, state carried over, when a fingerprint of the description
 * changes (a 64-bit hash over every setting and model parameter the public
 * setters can change: the world's options (tl_world_options, hashed whole as
 * bytes, so a new setting needs no line here), statics, pairs, ignore list, each
 * system's inertials, joint placements and axes, per-DOF parameters, geom
 * friction, filters and materials, integrator, self-collision). The state is
 * pushed when it differs from what was last exchanged (so tl_system_set_state
 * needs no hook); the control (PD gains and targets, feedforward, the
 * generalized force of the external forces) is pushed before each phase;
 * after integrate2 the plugin's state is read back, with the applied forces. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/engine_internal.h"
#include "world/world_internal.h"

typedef struct tl_engine_link tl_engine_link;

struct tl_engine_link {
  const tl_engine_api *api;
  char engine[256];       /* the name as given, options included */
  const char *options;    /* into engine: after ':' ("" if none) */
  tl_engine_world *ew;    /* NULL until built */
  uint64_t fingerprint;   /* of the description ew was built from */
  int nsys;               /* systems in ew */
  double *sync;           /* per system: q then u as last exchanged with the plugin */
  int *sync_adr;          /* [nsys] offsets into sync */
  int stale;              /* push every state at the next step (after a failed step) */
  int phase1;             /* integrate1 ran since the last integrate2 */
};

/* ------------------------------------------------------------ fingerprint */

typedef struct hasher {
  uint64_t h;
} hasher;

static void hash_bytes(hasher *x, const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = x->h;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  x->h = h;
}

static void hash_doubles(hasher *x, const double *v, int n) { hash_bytes(x, v, (size_t)n * sizeof(double)); }
static void hash_int(hasher *x, long long v) { hash_bytes(x, &v, sizeof(v)); }
static void hash_str(hasher *x, const char *s) { hash_bytes(x, s, strlen(s) + 1); }
static void hash_array(hasher *x, const void *p, size_t n, size_t elem) { hash_bytes(x, p, n * elem); }
static void hash_names(hasher *x, const void *p, size_t n, size_t elem) {
  for (size_t i = 0; i < n; i++) hash_str(x, (const char *)p + i * elem);
}

static void hash_system(hasher *x, const tl_system *s) {
  const tl_model *m = s->m;
  int nb = m->nbody, nv = m->nv, ng = m->ngeom;
  hash_int(x, ((long long)nb << 40) ^ ((long long)nv << 20) ^ ng);
  hash_int(x, s->self_collision * 2 + (int)s->integrator);
  /* every array marked HASH in model_xmacro.h (what the public setters change);
   * names hashed up to their terminating zero */
#define TL_MX_HASH(type, name, count, width, use)                                       \
  TL_MX_IF_HASH_##use(_Generic(m->name, tl_name *: hash_names, default: hash_array)( \
      x, m->name, (size_t)m->count * (size_t)(width), sizeof(type));)
  TL_MODEL_ARRAYS(TL_MX_HASH)
#undef TL_MX_HASH
}

static uint64_t fingerprint(const tl_world *w) {
  hasher x = {0xcbf29ce484222325ull};
  hash_bytes(&x, &w->opt, sizeof(w->opt)); /* every setting, whole: no padding (world_options.c) */
  hash_int(&x, w->nstatic);
  for (int i = 0; i < w->nstatic; i++) {
    const tl_static_geom *g = &w->statics[i];
    hash_int(&x, (long long)g->type * 1000003 + g->heightmap);
    hash_doubles(&x, g->size, 3);
    hash_doubles(&x, g->pos, 3);
    hash_doubles(&x, g->rot, 9);
    hash_doubles(&x, &g->friction, 1);
    hash_int(&x, ((long long)g->group << 32) ^ g->mask);
    hash_str(&x, g->material);
  }
  hash_int(&x, w->nheightmap); /* heightmaps are copied at creation and never change */
  hash_int(&x, w->npair);
  for (int i = 0; i < w->npair; i++) {
    const tl_material_pair *p = &w->pairs[i];
    double v[] = {p->mu, p->restitution, p->threshold, p->erp, p->cfm};
    hash_doubles(&x, v, 5);
    hash_str(&x, p->a);
    hash_str(&x, p->b);
  }
  hash_int(&x, w->ignore_n);
  hash_bytes(&x, w->ignore, (size_t)w->ignore_n * 4 * sizeof(int));
  hash_int(&x, w->nsystem);
  for (int i = 0; i < w->nsystem; i++) hash_system(&x, w->systems[i]);
  hash_int(&x, w->nconstraint); /* constraints are only ever appended, and never change */
  return x.h;
}

/* ------------------------------------------------------------ build and state */

static void destroy_engine_world(tl_engine_link *l) {
  if (l->ew) l->api->destroy(l->ew);
  l->ew = NULL;
  l->nsys = 0;
}

static void tl_engine_link_free(tl_engine_link *l) {
  if (!l) return;
  destroy_engine_world(l);
  free(l->sync);
  free(l->sync_adr);
  free(l);
}

static double *sync_q(tl_engine_link *l, int i) { return l->sync + l->sync_adr[i]; }

static tl_status push_state(tl_world *w, int i, tl_error *err) {
  tl_engine_link *l = w->engine_data;
  const tl_system *s = w->systems[i];
  tl_status st = l->api->set_state(l->ew, i, s->d.q, s->d.u, err);
  if (st) return st;
  memcpy(sync_q(l, i), s->d.q, (size_t)s->m->nq * sizeof(double));
  memcpy(sync_q(l, i) + s->m->nq, s->d.u, (size_t)s->m->nv * sizeof(double));
  return TL_OK;
}

static tl_status tl_engine_link_check_feature(const tl_world *w, unsigned feature, tl_error *err) {
  tl_engine_caps caps;
  memset(&caps, 0, sizeof(caps));
  const tl_engine_link *l = w->engine_data;
  l->api->capabilities(&caps);
  if (caps.features & feature) return TL_OK;
  return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "engine", "engine '%s' does not support %s",
                      l->api->name, tl_engine_feature_name(feature));
}

/* Every loop constraint of the world of a type the plugin maps
 * (tl_engine_caps.constraints), else TL_ERR_UNSUPPORTED naming it. */
static tl_status check_constraint_types(const tl_world *w, tl_error *err) {
  static const char *const types[] = {"ball", "hinge", "weld", "distance"};
  const tl_engine_link *l = w->engine_data;
  tl_engine_caps caps;
  memset(&caps, 0, sizeof(caps));
  l->api->capabilities(&caps);
  for (int k = 0; k < w->nconstraint; k++) {
    int t = (int)w->constraints[k].type;
    if (t >= 0 && t < 4 && !(caps.constraints & (1u << t))) {
      char list[64] = "";
      size_t n = 0;
      for (int i = 0; i < 4; i++)
        if (caps.constraints & (1u << i)) n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", types[i]);
      return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "constraint",
                          "engine '%s' does not map %s constraints ('%s'; it maps: %s)", l->api->name, types[t],
                          w->constraints[k].name, n ? list : "none");
    }
  }
  return TL_OK;
}

/* The fingerprint sees added objects at the next step: nothing to build now.
 * A constraint of a type the plugin does not map is refused now (the world
 * then takes it out again: tl_world_add_constraint). */
static tl_status link_objects_changed(tl_world *w, tl_error *err) { return check_constraint_types(w, err); }

/* Build the plugin's world from the description and push every state. */
static tl_status build(tl_world *w, uint64_t fp, tl_error *err) {
  tl_engine_link *l = w->engine_data;
  if (w->opt.velocity_limits) { /* checked here for every engine: one that lacks them must not ignore them */
    tl_status vs = tl_engine_link_check_feature(w, TL_ENGINE_VELOCITY_LIMITS, err);
    if (vs) return vs;
  }
  if (w->nconstraint) { /* a world switched to this engine with its constraints */
    tl_status cs = tl_engine_link_check_feature(w, TL_ENGINE_CONSTRAINTS, err);
    if (!cs) cs = check_constraint_types(w, err);
    if (cs) return cs;
  }
  destroy_engine_world(l);
  size_t total = 0;
  for (int i = 0; i < w->nsystem; i++) total += (size_t)(w->systems[i]->m->nq + w->systems[i]->m->nv);
  double *sync = realloc(l->sync, (total + 1) * sizeof(double));
  if (sync) l->sync = sync;
  int *adr = realloc(l->sync_adr, ((size_t)w->nsystem + 1) * sizeof(int));
  if (adr) l->sync_adr = adr;
  if (!sync || !adr) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int i = 0, a = 0; i < w->nsystem; i++) {
    l->sync_adr[i] = a;
    a += w->systems[i]->m->nq + w->systems[i]->m->nv;
  }
  tl_engine_scene scene;
  tl_status st = tl_engine_scene_of_world(w, &scene, err);
  if (st) return st;
  scene.engine_options = l->options;
  st = l->api->create(&scene, &l->ew, err);
  tl_engine_scene_free(&scene);
  if (st) {
    l->ew = NULL;
    return st;
  }
  l->nsys = w->nsystem;
  for (int i = 0; i < w->nsystem && !st; i++) st = push_state(w, i, err);
  if (st) {
    destroy_engine_world(l);
    return st;
  }
  l->fingerprint = fp;
  l->stale = 0;
  l->phase1 = 0; /* a new world has detected no contacts yet */
  return TL_OK;
}

/* The plugin's world matches the description and every state. */
static tl_status sync_world(tl_world *w, tl_error *err) {
  tl_engine_link *l = w->engine_data;
  uint64_t fp = fingerprint(w);
  if (!l->ew || fp != l->fingerprint || l->nsys != w->nsystem) return build(w, fp, err);
  for (int i = 0; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    const double *q = sync_q(l, i);
    if (l->stale || memcmp(q, s->d.q, (size_t)s->m->nq * sizeof(double)) != 0 ||
        memcmp(q + s->m->nq, s->d.u, (size_t)s->m->nv * sizeof(double)) != 0) {
      tl_status st = push_state(w, i, err);
      if (st) return st;
    }
  }
  l->stale = 0;
  return TL_OK;
}

static tl_status push_control(tl_world *w, tl_error *err) {
  tl_engine_link *l = w->engine_data;
  const tl_engine_api *a = l->api;
  for (int i = 0; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    tl_status st;
    if ((st = a->set_pd_gains(l->ew, i, s->kp, s->kd, err)) ||
        (st = a->set_pd_targets(l->ew, i, s->q_target, s->u_target, err)) ||
        (st = a->set_generalized_force(l->ew, i, s->tau_ff, err)) ||
        (st = a->set_external_force(l->ew, i, s->ext, err)))
      return st;
  }
  return TL_OK;
}

/* ------------------------------------------------------------ the step */

static tl_status tl_engine_link_integrate1(tl_world *w, tl_error *err) {
  tl_engine_link *l = w->engine_data;
  tl_status st = sync_world(w, err);
  if (!st) st = push_control(w, err);
  if (!st) st = l->api->integrate1(l->ew, err);
  l->phase1 = st == TL_OK;
  return st;
}

static int finite_all(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

static tl_status tl_engine_link_integrate2(tl_world *w, tl_error *err) {
  tl_engine_link *l = w->engine_data;
  tl_status st = TL_OK;
  if (!l->phase1) {
    st = tl_engine_link_integrate1(w, err);
  } else {
    st = sync_world(w, err); /* the state may have been set between the phases */
    if (!st && !l->phase1) st = l->api->integrate1(l->ew, err); /* rebuilt: collide again */
  }
  if (!st) st = push_control(w, err);
  if (!st) st = l->api->integrate2(l->ew, err);
  l->phase1 = 0;
  if (st) {
    l->stale = 1; /* the plugin is set back to the systems' states (those before the step) */
    return st;
  }
  /* read back into the sync buffer first: a non-finite state leaves the systems unchanged */
  for (int i = 0; i < w->nsystem && !st; i++) {
    tl_system *s = w->systems[i];
    double *q = sync_q(l, i), *u = q + s->m->nq;
    st = l->api->get_state(l->ew, i, q, u, err);
    if (!st && !finite_all(q, s->m->nq + s->m->nv))
      st = tl_error_set(err, TL_ERR_DIVERGED, s->m->source, 0, NULL,
                        "system %d ('%s') diverged on engine '%s' at t = %g s: the state became "
                        "non-finite; every system was restored to the start of the step",
                        i, s->m->name, l->api->name, w->time);
  }
  if (st) {
    l->stale = 1;
    return st;
  }
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    const double *q = sync_q(l, i);
    memcpy(s->d.q, q, (size_t)s->m->nq * sizeof(double));
    memcpy(s->d.u, q + s->m->nq, (size_t)s->m->nv * sizeof(double));
    s->kin_valid = s->dyn_valid = 0;
    memset(s->ext, 0, (size_t)s->m->nv * sizeof(double)); /* external forces last one step */
    if (l->api->applied_generalized_force(l->ew, i, s->tau_applied, NULL) != TL_OK)
      memset(s->tau_applied, 0, (size_t)s->m->nv * sizeof(double));
  }
  w->time += w->opt.dt;
  return TL_OK;
}

static int tl_engine_link_ncontact(const tl_world *w) {
  const tl_engine_link *l = w->engine_data;
  return l->ew ? l->api->ncontact(l->ew) : 0;
}

static tl_status tl_engine_link_contact(const tl_world *w, int k, tl_contact_info *out, tl_error *err) {
  const tl_engine_link *l = w->engine_data;
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  int n = tl_engine_link_ncontact(w);
  if (k < 0 || k >= n)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "k", "contact index %d out of range [0, %d)", k, n);
  return l->api->contact(l->ew, k, out, err);
}

static tl_status tl_engine_link_solver_stats(const tl_world *w, tl_solver_stats *out, tl_error *err) {
  const tl_engine_link *l = w->engine_data;
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  if (!l->api->solver_stats)
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "engine",
                        "engine '%s' does not support %s", l->api->name,
                        tl_engine_feature_name(TL_ENGINE_SOLVER_STATS));
  if (!l->ew) {
    memset(out, 0, sizeof(*out));
    return TL_OK;
  }
  return l->api->solver_stats(l->ew, out, err);
}

static const char *solver_name(tl_solver s) {
  return s == TL_SOLVER_PER_CONTACT ? "per-contact (exact cone)" : s == TL_SOLVER_PGS ? "PGS" : "Dantzig";
}

static tl_status check_solver(const tl_engine_api *api, tl_solver solver, tl_error *err) {
  tl_engine_caps caps;
  memset(&caps, 0, sizeof(caps));
  api->capabilities(&caps);
  if (caps.solvers & (1u << solver)) return TL_OK;
  return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "solver",
                      "engine '%s' does not offer the %s solver (see its description: %s)",
                      api->name, solver_name(solver), api->description);
}

static tl_status link_set_solver(tl_world *w, tl_solver solver, tl_error *err) {
  const tl_engine_link *l = w->engine_data;
  return check_solver(l->api, solver, err);
}

/* ------------------------------------------------------------ the table */

static const char *link_name(const tl_world *w) {
  const tl_engine_link *l = w->engine_data;
  return l->engine;
}

static const char *link_notes(const tl_world *w) {
  const tl_engine_link *l = w->engine_data;
  return l->ew && l->api->notes ? l->api->notes(l->ew) : "";
}

/* The plugin's world is built now (refused now, not at the first step) when
 * the world has systems; else at the first step. */
static tl_status link_attach(tl_world *w, tl_error *err) {
  return w->nsystem > 0 ? build(w, fingerprint(w), err) : TL_OK;
}

static void link_detach(tl_world *w, void *data) {
  (void)w;
  tl_engine_link_free(data);
}

static const tl_world_engine link_engine = {
    .attach = link_attach,
    .detach = link_detach,
    .objects_changed = link_objects_changed,
    .integrate1 = tl_engine_link_integrate1,
    .integrate2 = tl_engine_link_integrate2,
    .ncontact = tl_engine_link_ncontact,
    .contact = tl_engine_link_contact,
    .solver_stats = tl_engine_link_solver_stats,
    .set_solver = link_set_solver,
    .check_feature = tl_engine_link_check_feature,
    .name = link_name,
    .notes = link_notes,
    .snapshot = NULL, /* a plugin keeps warm starts a snapshot cannot hold */
};

/* ------------------------------------------------------------ public API */

tl_status tl_world_set_engine(tl_world *w, const char *engine, tl_error *err) {
  if (!w) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "world must not be NULL");
  char name[64];
  const char *options = tl_engine_split_name(engine, name, sizeof(name), err);
  if (!options) return TL_ERR_ARGUMENT;
  if (strlen(engine) >= sizeof(((tl_engine_link *)0)->engine))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine", "engine name and options longer than %zu characters",
                        sizeof(((tl_engine_link *)0)->engine) - 1);
  const tl_engine_api *api = NULL;
  tl_status st = tl_engine_find(name, &api, err);
  if (st) return st;
  if (api == tl_engine_native()) {
    if (*options)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine", "the native engine 'talus' takes no options ('%s')", engine);
    return tl_world_use_native(w, err); /* the systems hold the last state: the native engine goes on from it */
  }
  tl_engine_caps caps;
  memset(&caps, 0, sizeof(caps));
  api->capabilities(&caps);
  tl_solver solver = caps.solvers & (1u << w->opt.solver) ? w->opt.solver : caps.default_solver;
  tl_engine_link *l = calloc(1, sizeof(*l));
  if (!l) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  l->api = api;
  snprintf(l->engine, sizeof(l->engine), "%s", engine);
  l->options = l->engine + (options - engine);
  tl_solver old_solver = w->opt.solver;
  w->opt.solver = solver;
  st = tl_world_use_engine(w, &link_engine, l, err); /* builds the plugin's world (link_attach) */
  if (st) {
    tl_engine_link_free(l);
    w->opt.solver = old_solver;
  }
  return st;
}

tl_status tl_world_create_with_engine(tl_world **out, const char *engine, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  tl_world *w = NULL;
  tl_status st = tl_world_create(&w, err);
  if (!st) st = tl_world_set_engine(w, engine, err);
  if (st) {
    tl_world_free(w);
    return st;
  }
  *out = w;
  return TL_OK;
}
