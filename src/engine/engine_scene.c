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
    "contact ERP / CFM",   "joint velocity limits"};

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
  o->body_name = (const char(*)[TL_ENGINE_NAME_MAX])m->body_name;
  o->joint_name = (const char(*)[TL_ENGINE_NAME_MAX])m->joint_name;
  o->parent = m->parent;
  o->jnt_type = m->jnt_type;
  o->q_adr = m->q_adr, o->v_adr = m->v_adr, o->jnt_nq = m->jnt_nq, o->jnt_nv = m->jnt_nv;
  o->jnt_pos = m->jnt_pos, o->jnt_rot = m->jnt_rot, o->jnt_axis = m->jnt_axis, o->jnt_axis2 = m->jnt_axis2;
  o->body_mass = m->body_mass, o->body_com = m->body_com, o->body_inertia = m->body_inertia;
  o->jnt_spring_quat = m->jnt_spring_quat;
  o->dof_body = m->dof_body;
  o->dof_rotor_inertia = m->dof_rotor_inertia, o->dof_damping = m->dof_damping;
  o->dof_friction = m->dof_friction, o->dof_stiffness = m->dof_stiffness;
  o->dof_spring_mount = m->dof_spring_mount;
  o->dof_lower = m->dof_lower, o->dof_upper = m->dof_upper, o->dof_effort = m->dof_effort;
  o->dof_velocity = m->dof_velocity;
  o->dof_mimic = m->dof_mimic, o->dof_mimic_mult = m->dof_mimic_mult, o->dof_mimic_offset = m->dof_mimic_offset;
  o->geom_name = (const char(*)[TL_ENGINE_NAME_MAX])m->geom_name;
  o->geom_material = (const char(*)[TL_ENGINE_NAME_MAX])m->geom_material;
  o->geom_body = m->geom_body, o->geom_type = m->geom_type;
  o->geom_size = m->geom_size, o->geom_pos = m->geom_pos, o->geom_rot = m->geom_rot;
  o->geom_friction = m->geom_friction, o->geom_group = m->geom_group, o->geom_mask = m->geom_mask;
  o->geom_hull = m->geom_hull;
  o->hull_vert_adr = m->hull_vert_adr, o->hull_nvert = m->hull_nvert;
  o->hull_face_adr = m->hull_face_adr, o->hull_nface = m->hull_nface;
  o->hull_vert = m->hull_vert, o->hull_face = m->hull_face;
  return TL_OK;
}

void tl_engine_scene_free(tl_engine_scene *s) {
  if (!s) return;
  free((void *)s->systems);
  free((void *)s->statics);
  free((void *)s->heightmaps);
  free((void *)s->pairs);
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
  return TL_OK;
}
