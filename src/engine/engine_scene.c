/* The engine-neutral description of a world (talus/engine.h): a compiled
 * model seen as plain arrays (tl_engine_model_view) and the scene of a Talus
 * world (tl_engine_scene_of_world), from which an engine builds its own. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/engine_internal.h"
#include "model/model.h"
#include "world/world_internal.h"

_Static_assert(TL_ENGINE_NAME_MAX == TL_NAME_MAX, "tl_engine_model names are the model's tl_name");

static const char *const feature_names[] = {
    "rotor inertia",       "joint damping",        "Coulomb joint friction",
    "joint springs",       "joint position limits", "effort limits",
    "mimic joints",        "restitution",          "self-collision",
    "the RK4 integrator",  "PD gains on the floating base", "solver statistics",
    "contact ERP / CFM",   "joint velocity limits", "loop constraints"};

const char *tl_engine_feature_name(unsigned feature) {
  for (unsigned k = 0; k < sizeof(feature_names) / sizeof(feature_names[0]); k++)
    if (feature == 1u << k) return feature_names[k];
  return "?";
}

tl_status tl_engine_model_view(const tl_model *m, tl_engine_model *o, tl_error *err) {
  if (!m || !o) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, m ? "out" : "model", "must not be NULL");
  memset(o, 0, sizeof(*o));
  o->name = m->name;
  o->base = m->base;
  o->nbody = m->nbody, o->nq = m->nq, o->nv = m->nv, o->ngeom = m->ngeom, o->nhull = m->nhull;
  /* every array marked VIEW in model_xmacro.h, as is; the field of the same
   * name must exist in tl_engine_model with the same element size */
#define TL_MX_VIEW(type, name, count, width, use)                                              \
  TL_MX_IF_VIEW_##use(_Static_assert(sizeof(*o->name) == sizeof(type), #name " element size"); \
                      o->name = (const void *)m->name;)
  TL_MODEL_ARRAYS(TL_MX_VIEW)
#undef TL_MX_VIEW
  return TL_OK;
}

void tl_engine_scene_free(tl_engine_scene *s) {
  if (!s) return;
  free((void *)s->systems);
  free((void *)s->statics);
  free((void *)s->heightmaps);
  free((void *)s->pairs);
  free((void *)s->constraints);
  memset(s, 0, sizeof(*s));
}

tl_status tl_engine_scene_of_world(const tl_world *w, tl_engine_scene *s, tl_error *err) {
  if (!w || !s) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, w ? "out" : "world", "must not be NULL");
  memset(s, 0, sizeof(*s));
  s->options = w->opt; /* as is: a new setting needs no line here */
  s->engine_options = "";
  tl_engine_system *sys = calloc((size_t)w->nsystem + 1, sizeof(*sys));
  tl_engine_static *st = calloc((size_t)w->nstatic + 1, sizeof(*st));
  tl_engine_heightmap *hm = calloc((size_t)w->nheightmap + 1, sizeof(*hm));
  tl_engine_material_pair *pr = calloc((size_t)w->npair + 1, sizeof(*pr));
  s->systems = sys, s->statics = st, s->heightmaps = hm, s->pairs = pr;
  if (!sys || !st || !hm || !pr) {
    tl_engine_scene_free(s);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  for (int i = 0; i < w->nsystem; i++) {
    const tl_system *x = w->systems[i];
    tl_engine_model_view(x->m, &sys[i].model, NULL);
    sys[i].source = x->m;
    sys[i].self_collision = x->self_collision;
    sys[i].integrator = x->integrator;
  }
  s->nsystem = w->nsystem;
  for (int i = 0; i < w->nstatic; i++) {
    const tl_static_geom *g = &w->statics[i];
    st[i].type = g->type;
    memcpy(st[i].size, g->size, sizeof(st[i].size));
    memcpy(st[i].pos, g->pos, sizeof(st[i].pos));
    memcpy(st[i].R, g->rot, sizeof(st[i].R));
    st[i].material = g->material;
    st[i].friction = g->friction;
    st[i].group = g->group, st[i].mask = g->mask;
    st[i].heightmap = g->heightmap;
  }
  s->nstatic = w->nstatic;
  for (int i = 0; i < w->nheightmap; i++) {
    const tl_heightmap *h = &w->heightmaps[i];
    hm[i] = (tl_engine_heightmap){h->nx, h->ny, h->x0, h->y0, h->dx, h->dy, h->heights};
  }
  s->nheightmap = w->nheightmap;
  for (int i = 0; i < w->npair; i++) {
    const tl_material_pair *p = &w->pairs[i];
    pr[i] = (tl_engine_material_pair){p->a, p->b, p->mu, p->restitution, p->threshold, p->erp, p->cfm};
  }
  s->npair = w->npair;
  s->nignore = w->ignore_n;
  s->ignore = w->ignore;
  tl_engine_constraint *ec = calloc((size_t)w->nconstraint + 1, sizeof(*ec));
  s->constraints = ec;
  if (!ec) {
    tl_engine_scene_free(s);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  for (int k = 0; k < w->nconstraint; k++) {
    const tl_constraint *c = &w->constraints[k];
    ec[k].name = c->name;
    ec[k].type = c->type;
    memcpy(ec[k].sys, c->sys, sizeof(ec[k].sys));
    memcpy(ec[k].body, c->body, sizeof(ec[k].body));
    memcpy(ec[k].pos, c->pos, sizeof(ec[k].pos));
    memcpy(ec[k].rot, c->rot, sizeof(ec[k].rot));
    memcpy(ec[k].axis, c->axis, sizeof(ec[k].axis));
    ec[k].lo = c->lo, ec[k].hi = c->hi, ec[k].erp = c->erp, ec[k].cfm = c->cfm;
  }
  s->nconstraint = w->nconstraint;
  return TL_OK;
}
