/* The native Talus engine behind the engine interface (talus/engine.h): a
 * tl_world built from the scene (its settings, static geometry, heightmaps,
 * material pairs, ignore list, and one system per scene system from its
 * compiled model), every table function a call of the public API (the
 * friction and filters of static geoms, which have no public setter, through
 * the facade's internal tl_world_set_static_params (world/world_internal.h);
 * the one-step external generalized force, also without a public setter, is
 * written into the system's control; no header of the native engine is
 * included). A world
 * created with the native engine (tl_world_create) does not go through this
 * table: it is the interface's reference implementation, used wherever code
 * handles engines generically (tests: the table gives bit-identical results
 * to the direct calls). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/engine_internal.h"
#include "talus/talus.h"
#include "world/world_internal.h"

struct tl_engine_world {
  tl_world *world;
  tl_system **sys;
  int nsys;
};

static void native_caps(tl_engine_caps *c) {
  c->joints = (1u << TL_JOINT_FIXED) | (1u << TL_JOINT_FLOATING) | (1u << TL_JOINT_REVOLUTE) |
              (1u << TL_JOINT_PRISMATIC) | (1u << TL_JOINT_SPHERICAL) | (1u << TL_JOINT_UNIVERSAL) |
              (1u << TL_JOINT_PLANAR);
  c->geoms = (1u << TL_GEOM_SPHERE) | (1u << TL_GEOM_BOX) | (1u << TL_GEOM_CAPSULE) | (1u << TL_GEOM_CYLINDER) |
             (1u << TL_GEOM_MESH) | (1u << TL_GEOM_PLANE) | (1u << TL_GEOM_HEIGHTMAP);
  c->solvers = (1u << TL_SOLVER_PER_CONTACT) | (1u << TL_SOLVER_PGS) | (1u << TL_SOLVER_DANTZIG);
  c->default_solver = TL_SOLVER_PER_CONTACT;
  c->features = 0x3fffu; /* every tl_engine_feature */
}

static void native_destroy(tl_engine_world *e) {
  if (!e) return;
  tl_world_free(e->world);
  free(e->sys);
  free(e);
}

static tl_status add_statics(tl_world *w, const tl_engine_scene *s, tl_error *err) {
  tl_status st = TL_OK;
  for (int i = 0; i < s->nstatic && !st; i++) {
    const tl_engine_static *g = &s->statics[i];
    if (g->heightmap >= 0) {
      const tl_engine_heightmap *h = &s->heightmaps[g->heightmap];
      st = tl_world_add_heightmap(w, h->nx, h->ny, h->x0, h->y0, h->dx, h->dy, h->heights, h->nx * h->ny,
                                  g->material, NULL, err);
    } else {
      st = tl_world_add_static_geom(w, g->type, g->size, g->pos, g->R, g->material, NULL, err);
    }
  }
  return st;
}

/* Static geoms' friction and filters have no public setter: the adapter,
 * inside the library, writes them from the scene. */
static tl_status native_create(const tl_engine_scene *s, tl_engine_world **out, tl_error *err) {
  *out = NULL;
  if (s->engine_options && *s->engine_options)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine", "the native engine takes no options ('%s')", s->engine_options);
  tl_engine_world *e = calloc(1, sizeof(*e));
  if (!e) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  e->sys = calloc((size_t)s->nsystem + 1, sizeof(tl_system *));
  tl_status st = e->sys ? tl_world_create_with_options(&e->world, &s->options, err) /* every setting, as is */
                        : tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  tl_world *w = e->world;
  for (int i = 0; i < s->npair && !st; i++) {
    const tl_engine_material_pair *p = &s->pairs[i];
    st = tl_world_set_material_pair(w, p->a, p->b, p->mu, p->restitution, p->threshold, err);
    if (!st && p->erp == p->erp) st = tl_world_set_material_pair_erp_cfm(w, p->a, p->b, p->erp, p->cfm, err);
  }
  for (int i = 0; i < s->nsystem && !st; i++) {
    const tl_engine_system *x = &s->systems[i];
    if (!x->source)
      st = tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "scene", "system %d has no compiled model (source)", i);
    if (!st) st = tl_world_add_system(w, x->source, &e->sys[i], err);
    if (!st) st = tl_system_set_integrator(e->sys[i], x->integrator, err);
    if (!st) tl_system_set_self_collision(e->sys[i], x->self_collision);
    if (!st) e->nsys = i + 1;
  }
  if (!st) st = add_statics(w, s, err);
  for (int i = 0; i < s->nstatic && !st; i++) /* friction and filters as in the scene */
    tl_world_set_static_params(w, i, s->statics[i].friction, s->statics[i].group, s->statics[i].mask);
  tl_world_filters_changed(w);
  for (int i = 0; i < s->nignore && !st; i++) {
    const int *g = s->ignore + 4 * i;
    st = tl_world_ignore_collision(w, g[0], g[1] < 0 ? 0 : g[1], g[2], g[3] < 0 ? 0 : g[3], err);
  }
  if (st) {
    native_destroy(e);
    return st;
  }
  *out = e;
  return TL_OK;
}

static tl_status bad_system(const tl_engine_world *e, int i, tl_error *err) {
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "sys", "system %d out of range [0, %d)", i, e->nsys);
}

#define SYS(e, i, err)                                   \
  do {                                                   \
    if ((i) < 0 || (i) >= (e)->nsys) return bad_system(e, i, err); \
  } while (0)

static tl_status native_set_state(tl_engine_world *e, int i, const double *q, const double *u, tl_error *err) {
  SYS(e, i, err);
  tl_system *s = e->sys[i];
  return tl_system_set_state(s, q, tl_system_nq(s), u, tl_system_nv(s), err);
}

static tl_status native_get_state(const tl_engine_world *e, int i, double *q, double *u, tl_error *err) {
  SYS(e, i, err);
  tl_system *s = e->sys[i];
  return tl_system_get_state(s, q, tl_system_nq(s), u, tl_system_nv(s), err);
}

static tl_status native_gains(tl_engine_world *e, int i, const double *kp, const double *kd, tl_error *err) {
  SYS(e, i, err);
  return tl_system_set_pd_gains(e->sys[i], kp, kd, tl_system_nv(e->sys[i]), err);
}

static tl_status native_targets(tl_engine_world *e, int i, const double *qt, const double *ut, tl_error *err) {
  SYS(e, i, err);
  tl_system *s = e->sys[i];
  return tl_system_set_pd_targets(s, qt, tl_system_nq(s), ut, tl_system_nv(s), err);
}

static tl_status native_force(tl_engine_world *e, int i, const double *tau, tl_error *err) {
  SYS(e, i, err);
  return tl_system_set_generalized_force(e->sys[i], tau, tl_system_nv(e->sys[i]), err);
}

/* The generalized force of external forces for the next step: the public
 * API takes wrenches, so the adapter writes the system's one-step external
 * generalized force (what tl_system_add_external_force accumulates) directly. */
static tl_status native_ext_force(tl_engine_world *e, int i, const double *f, tl_error *err) {
  SYS(e, i, err);
  tl_system *s = e->sys[i];
  memcpy(s->ext, f, (size_t)s->m->nv * sizeof(double));
  tl_system_wrench_ext_replaced(s);
  return TL_OK;
}

static tl_status native_integrate1(tl_engine_world *e, tl_error *err) { return tl_world_integrate1(e->world, err); }
static tl_status native_integrate2(tl_engine_world *e, tl_error *err) { return tl_world_integrate2(e->world, err); }
static int native_ncontact(const tl_engine_world *e) { return tl_world_ncontact(e->world); }

static tl_status native_contact(const tl_engine_world *e, int k, tl_contact_info *out, tl_error *err) {
  return tl_world_contact(e->world, k, out, err);
}

static tl_status native_applied(const tl_engine_world *e, int i, double *tau, tl_error *err) {
  SYS(e, i, err);
  return tl_system_applied_generalized_force(e->sys[i], tau, tl_system_nv(e->sys[i]), err);
}

static tl_status native_stats(const tl_engine_world *e, tl_solver_stats *out, tl_error *err) {
  return tl_world_solver_stats(e->world, out, err);
}

static const char *native_notes(const tl_engine_world *e) {
  (void)e;
  return "";
}

static const tl_engine_api native_api = {
    TL_ENGINE_ABI_VERSION,
    sizeof(tl_engine_api),
    "talus",
    "Talus " TALUS_VERSION,
    "the native Talus engine: reduced coordinates (a kinematic tree per system), every contact "
    "on the exact Coulomb cone by default (PGS with the friction pyramid and Dantzig's boxed LCP "
    "on request), joint limits, friction, effort-limited PD and mimic joints in one solve, the "
    "implicit PD in the effective mass M + dt Kd + dt^2 Kp",
    native_caps,
    native_create,
    native_destroy,
    native_set_state,
    native_get_state,
    native_gains,
    native_targets,
    native_force,
    native_ext_force,
    native_integrate1,
    native_integrate2,
    native_ncontact,
    native_contact,
    native_applied,
    native_stats,
    native_notes,
};

const tl_engine_api *tl_engine_native(void) { return &native_api; }
