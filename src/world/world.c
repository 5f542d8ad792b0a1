/* tl_world, the facade: the objects of a world (systems, static geoms,
 * terrain), materials and collision filters, the step options (the world's
 * description, world_internal.h), and the public calls an engine serves (the
 * step tl_world_integrate1 / integrate2 / tl_world_step, contact queries,
 * solver statistics, solver choice), each dispatched through the world's
 * engine table w->engine (world/world_engine.h): the native engine's
 * (src/native/native.c; its step pipeline src/native/step.c, whose opening
 * comment lists the stages; DESIGN.md, "The step") or a plugin link's
 * (src/engine/engine_link.c). Nothing here tests which engine it is. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "native/native.h"
#include "talus/engine.h"
#include "talus/limits.h"
#include "world/world_internal.h"

static tl_status apply_options(tl_world *w, const tl_world_options *o, tl_error *err);

tl_status tl_world_create_with_options(tl_world **out, const tl_world_options *opt, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  tl_status st = opt ? tl_world_options_check(opt, err) : TL_OK;
  if (st) return st;
  tl_world *w = calloc(1, tl_native_world_size()); /* the world, the native workspace behind it */
  if (!w) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  w->opt = tl_world_options_default();
  w->engine = tl_native_world_engine();
  st = w->engine->attach(w, err); /* on failure it has freed what it made */
  if (st) {
    free(w);
    return st;
  }
  if (opt && (st = apply_options(w, opt, err))) {
    tl_world_free(w);
    return st;
  }
  *out = w;
  return TL_OK;
}

tl_status tl_world_create(tl_world **out, tl_error *err) { return tl_world_create_with_options(out, NULL, err); }

void tl_world_free(tl_world *w) {
  if (!w) return;
  w->engine->detach(w, w->engine_data);
  for (int i = 0; i < w->nsystem; i++) tl_system_destroy(w->systems[i]);
  for (int i = 0; i < w->nheightmap; i++) free((double *)w->heightmaps[i].heights);
  void *arr[] = {w->systems, w->statics, w->heightmaps, w->pairs, w->pair_slot, w->ignore, w->constraints};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  free(w);
}

/* ---------------- the engine ---------------- */

tl_status tl_world_use_engine(tl_world *w, const tl_world_engine *engine, void *data, tl_error *err) {
  const tl_world_engine *old = w->engine;
  void *old_data = w->engine_data;
  if (engine == old && data == old_data) return TL_OK;
  w->engine = engine;
  w->engine_data = data;
  tl_status st = engine->attach(w, err);
  if (st) {
    w->engine = old;
    w->engine_data = old_data;
    return st;
  }
  old->detach(w, old_data);
  return TL_OK;
}

tl_status tl_world_use_native(tl_world *w, tl_error *err) {
  return tl_world_use_engine(w, tl_native_world_engine(), NULL, err);
}

const char *tl_world_engine_name(const tl_world *w) { return w ? w->engine->name(w) : "talus"; }

const char *tl_world_engine_notes(const tl_world *w) { return w ? w->engine->notes(w) : ""; }

void tl_world_filters_changed(tl_world *w) { w->filters_stale = 1; }

void tl_world_set_static_params(tl_world *w, int index, double friction, unsigned group, unsigned mask) {
  tl_static_geom *g = &w->statics[index];
  g->friction = friction;
  g->group = group;
  g->mask = mask;
  tl_world_filters_changed(w);
}

/* ---------------- settings: tl_world_options and its thin setters ---------------- */

/* The one place that writes w->opt, for tl_world_set_options and every
 * single setter: *o is valid (tl_world_options_check); the engine's rules
 * for what changed (w->engine->set_solver: a plugin's solvers, the native
 * engine's Dantzig scratch; check_feature: velocity limits), all before
 * anything changes; then the caches
 * that depend on a changed setting are marked stale (M and h on gravity, the
 * static geoms' boxes on the contact margin) and *o is copied in. */
static tl_status apply_options(tl_world *w, const tl_world_options *o, tl_error *err) {
  tl_status st;
  if (o->solver != w->opt.solver && (st = w->engine->set_solver(w, o->solver, err))) return st; /* offered, room made */
  if (o->velocity_limits && !w->opt.velocity_limits && /* refused now, not at the next step */
      (st = w->engine->check_feature(w, TL_ENGINE_VELOCITY_LIMITS, err)))
    return st;
  if (memcmp(o->gravity, w->opt.gravity, sizeof(o->gravity)))
    for (int i = 0; i < w->nsystem; i++) w->systems[i]->dyn_valid = 0;
  if (memcmp(&o->contact_margin, &w->opt.contact_margin, sizeof(double))) tl_world_filters_changed(w);
  w->opt = *o;
  return TL_OK;
}

tl_status tl_world_set_options(tl_world *w, const tl_world_options *opt, tl_error *err) {
  tl_status st = tl_world_options_check(opt, err);
  return st ? st : apply_options(w, opt, err);
}

tl_status tl_world_get_options(const tl_world *w, tl_world_options *out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = w->opt;
  return TL_OK;
}

/* The single setters: their own check (their messages name their arguments),
 * then the options with the fields changed, through apply_options. */

tl_status tl_world_set_timestep(tl_world *w, double dt, tl_error *err) {
  tl_status st = tl_check_timestep(dt, err); /* the one rule (talus/limits.h) */
  if (st) return st;
  tl_world_options o = w->opt;
  o.dt = dt;
  return apply_options(w, &o, err);
}

double tl_world_timestep(const tl_world *w) { return w->opt.dt; }
double tl_world_time(const tl_world *w) { return w->time; }

tl_status tl_world_set_gravity(tl_world *w, const double g[3], tl_error *err) {
  if (!g || !tl_v3_isfinite(g))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "gravity", "gravity must be 3 finite numbers");
  tl_world_options o = w->opt;
  tl_v3_copy(o.gravity, g);
  return apply_options(w, &o, err);
}

void tl_world_gravity(const tl_world *w, double g[3]) { tl_v3_copy(g, w->opt.gravity); }

tl_status tl_world_set_solver(tl_world *w, tl_solver solver, tl_error *err) {
  if (solver != TL_SOLVER_PER_CONTACT && solver != TL_SOLVER_PGS && solver != TL_SOLVER_DANTZIG)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "solver", "unknown solver %d", (int)solver);
  tl_world_options o = w->opt;
  o.solver = solver; /* the engine's check and scratch: apply_options, w->engine->set_solver */
  return apply_options(w, &o, err);
}

tl_status tl_world_set_solver_params(tl_world *w, int max_iter, double tol, double sor, tl_error *err) {
  if (max_iter < 1 || !(tol >= 0) || !(sor > 0 && sor < 2))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "solver",
                        "max_iter %d, tol %g, sor %g: expected max_iter >= 1, tol >= 0, 0 < sor < 2",
                        max_iter, tol, sor);
  tl_world_options o = w->opt;
  o.solver_max_iter = max_iter;
  o.solver_tol = tol;
  o.sor = sor;
  return apply_options(w, &o, err);
}

tl_status tl_world_set_erp_cfm(tl_world *w, double erp, double cfm, tl_error *err) {
  if (!(erp >= 0 && erp <= 1) || !(cfm >= 0) || !isfinite(cfm))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "erp",
                        "erp %g, cfm %g: expected 0 <= erp <= 1 and a finite cfm >= 0", erp, cfm);
  tl_world_options o = w->opt;
  o.erp = erp;
  o.cfm = cfm;
  return apply_options(w, &o, err);
}

tl_status tl_world_set_contact_compliance(tl_world *w, double relative, tl_error *err) {
  if (!(relative >= 0 && relative <= 1))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "compliance", "relative contact compliance %g: expected 0 <= c <= 1", relative);
  tl_world_options o = w->opt;
  o.contact_compliance = relative;
  return apply_options(w, &o, err);
}

tl_status tl_world_set_velocity_limits(tl_world *w, int enabled, tl_error *err) {
  if (enabled != 0 && enabled != 1)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "enabled", "velocity limits: enabled must be 0 or 1, got %d", enabled);
  if (enabled) { /* the engine must offer them: refused now, not at the next step */
    tl_status st = w->engine->check_feature(w, TL_ENGINE_VELOCITY_LIMITS, err);
    if (st) return st;
  }
  tl_world_options o = w->opt;
  o.velocity_limits = enabled;
  return apply_options(w, &o, err);
}

int tl_world_velocity_limits(const tl_world *w) { return w->opt.velocity_limits; }

tl_status tl_world_solver_stats(const tl_world *w, tl_solver_stats *out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  return w->engine->solver_stats(w, out, err);
}

/* ---------------- objects ---------------- */

/* Keep what the engine holds sized for every object (the native engine: its
 * collision and constraint buffers). */
static tl_status refresh(tl_world *w, tl_error *err) { return w->engine->objects_changed(w, err); }

static tl_status check_pose(const double pos[3], const double R[9], tl_error *err) {
  if (!pos || !tl_v3_isfinite(pos))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "pos", "pos must be 3 finite numbers");
  if (R) {
    double RtR[9], dev = 0;
    tl_m3_tmul(RtR, R, R);
    for (int i = 0; i < 9; i++) dev = fmax(dev, fabs(RtR[i] - (i % 4 == 0 ? 1.0 : 0.0)));
    if (!(dev < 1e-9))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "R", "R is not a rotation matrix (|R^T R - 1| = %g)", dev);
  }
  return TL_OK;
}

static tl_status check_size(tl_geom_type type, const double size[3], tl_error *err) {
  int n = type == TL_GEOM_SPHERE ? 1 : type == TL_GEOM_BOX ? 3 : (type == TL_GEOM_CAPSULE || type == TL_GEOM_CYLINDER) ? 2 : 0;
  if (type == TL_GEOM_MESH || type == TL_GEOM_HEIGHTMAP || type < 0 || type > TL_GEOM_HEIGHTMAP)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "type",
                        "static geoms are sphere, box, capsule, cylinder or plane (heightmaps: tl_world_add_heightmap)");
  for (int i = 0; i < n; i++)
    if (!size || !(size[i] > 0) || !isfinite(size[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "size", "size[%d] of a static %s must be finite and > 0",
                          i, tl_geom_type_name(type));
  return TL_OK;
}

static tl_static_geom *push_static(tl_world *w) {
  if (w->nstatic == w->cap_static) {
    int cap = w->cap_static ? 2 * w->cap_static : 8;
    tl_static_geom *s = realloc(w->statics, (size_t)cap * sizeof(*s));
    if (!s) return NULL;
    w->statics = s;
    w->cap_static = cap;
  }
  tl_static_geom *g = &w->statics[w->nstatic];
  memset(g, 0, sizeof(*g));
  g->group = 1u;
  g->mask = ~0u;
  g->friction = w->opt.default_mu;
  g->heightmap = -1;
  tl_m3_identity(g->rot);
  return g;
}

tl_status tl_world_add_static_geom(tl_world *w, tl_geom_type type, const double size[3], const double pos[3],
                                   const double R[9], const char *material, int *index, tl_error *err) {
  tl_status st;
  if ((st = check_size(type, size, err)) || (st = check_pose(pos, R, err))) return st;
  if (material && strlen(material) >= 128)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "material", "material names have at most 127 characters");
  tl_static_geom *g = push_static(w);
  if (!g) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  g->type = type;
  if (type != TL_GEOM_PLANE) memcpy(g->size, size, sizeof(g->size));
  tl_v3_copy(g->pos, pos);
  if (R) tl_m3_copy(g->rot, R);
  snprintf(g->material, sizeof(g->material), "%s", material ? material : "");
  if (index) *index = w->nstatic;
  w->nstatic++;
  return refresh(w, err);
}

tl_status tl_world_add_ground(tl_world *w, double height, double mu, tl_error *err) {
  if (!isfinite(height) || !isfinite(mu) || mu < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "ground",
                        "ground height %g m and friction %g: expected finite numbers, friction >= 0", height, mu);
  double pos[3] = {0, 0, height};
  int idx = -1;
  tl_status st = tl_world_add_static_geom(w, TL_GEOM_PLANE, NULL, pos, NULL, "ground", &idx, err);
  if (!st) w->statics[idx].friction = mu;
  return st;
}

tl_status tl_world_add_heightmap(tl_world *w, int nx, int ny, double x0, double y0, double dx, double dy,
                                 const double *heights, int n, const char *material, int *index, tl_error *err) {
  if (nx < 2 || ny < 2 || !(dx > 0) || !(dy > 0) || !isfinite(x0) || !isfinite(y0) || !isfinite(dx) || !isfinite(dy))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "heightmap",
                        "heightmap %d x %d with spacing %g x %g: expected at least 2 x 2 points and spacings > 0",
                        nx, ny, dx, dy);
  if (!heights || n != nx * ny)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "heights", "heights has length %d, expected %d", n, nx * ny);
  for (int i = 0; i < n; i++)
    if (!isfinite(heights[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "heights", "heights[%d] is %g: expected a finite number", i, heights[i]);
  double *h = malloc((size_t)n * sizeof(double));
  tl_heightmap *hm = w->heightmaps;
  if (h && w->nheightmap == w->cap_heightmap) { /* geometric growth: n heightmaps cost O(n) copies */
    int cap = w->cap_heightmap ? 2 * w->cap_heightmap : 4;
    hm = realloc(w->heightmaps, (size_t)cap * sizeof(*hm));
    if (hm) w->heightmaps = hm, w->cap_heightmap = cap;
  }
  if (!h || !hm) {
    free(h);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  memcpy(h, heights, (size_t)n * sizeof(double));
  hm[w->nheightmap] = (tl_heightmap){nx, ny, x0, y0, dx, dy, h};
  tl_static_geom *g = push_static(w);
  if (!g) {
    free(h);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  g->type = TL_GEOM_HEIGHTMAP;
  g->heightmap = w->nheightmap++;
  snprintf(g->material, sizeof(g->material), "%s", material ? material : "");
  if (index) *index = w->nstatic;
  w->nstatic++;
  return refresh(w, err);
}

int tl_world_nsystem(const tl_world *w) { return w->nsystem; }

tl_system *tl_world_system(tl_world *w, int index) {
  return index >= 0 && index < w->nsystem ? w->systems[index] : NULL;
}

int tl_world_nstatic(const tl_world *w) { return w->nstatic; }

tl_status tl_world_static_geom(const tl_world *w, int index, tl_geom_type *type, double size[3], double pos[3],
                               double R[9], const char **material, int *heightmap, tl_error *err) {
  if (index < 0 || index >= w->nstatic)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "index", "static geom %d does not exist (the world has %d)",
                        index, w->nstatic);
  const tl_static_geom *g = &w->statics[index];
  if (type) *type = g->type;
  if (size) tl_v3_copy(size, g->size);
  if (pos) tl_v3_copy(pos, g->pos);
  if (R) tl_m3_copy(R, g->rot);
  if (material) *material = g->material;
  if (heightmap) *heightmap = g->heightmap;
  return TL_OK;
}

tl_status tl_world_heightmap(const tl_world *w, int index, int *nx, int *ny, double *x0, double *y0, double *dx,
                             double *dy, const double **heights, tl_error *err) {
  if (index < 0 || index >= w->nheightmap)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "index", "heightmap %d does not exist (the world has %d)",
                        index, w->nheightmap);
  const tl_heightmap *h = &w->heightmaps[index];
  if (nx) *nx = h->nx;
  if (ny) *ny = h->ny;
  if (x0) *x0 = h->x0;
  if (y0) *y0 = h->y0;
  if (dx) *dx = h->dx;
  if (dy) *dy = h->dy;
  if (heights) *heights = h->heights;
  return TL_OK;
}

/* The URDF <loop_joint> loops of system s's model as world constraints of s
 * with itself (talus/constraint.h), named after the loop. On failure every
 * loop added here is taken out again and err names the URDF file, the
 * loop_joint's line and element. */
static tl_status add_loops(tl_world *w, tl_system *s, tl_error *err) {
  const tl_model *m = s->m;
  int first = w->nconstraint;
  for (int i = 0; i < m->nloop; i++) {
    tl_constraint_def d = tl_constraint_def_default();
    d.type = (tl_constraint_type)m->loop_type[i];
    d.name = m->loop_name[i];
    d.system1 = d.system2 = s->index;
    d.body1 = m->loop_link1[i];
    d.body2 = m->loop_link2[i];
    tl_v3_copy(d.point1, m->loop_pos1 + 3 * i);
    tl_v3_copy(d.rpy1, m->loop_rpy1 + 3 * i);
    tl_v3_copy(d.point2, m->loop_pos2 + 3 * i);
    tl_v3_copy(d.rpy2, m->loop_rpy2 + 3 * i);
    tl_v3_copy(d.axis, m->loop_axis + 3 * i);
    char unique[160]; /* loop names are unique in a model; a second copy of the robot gets its index */
    if (tl_world_constraint_index(w, d.name) >= 0) {
      snprintf(unique, sizeof(unique), "%.100s_%d", d.name, s->index);
      d.name = unique;
    }
    tl_error e;
    tl_status st = tl_world_add_constraint(w, &d, NULL, &e);
    if (st) {
      w->nconstraint = first;
      const char *msg = e.message;
      if (msg[0] == '<' && strstr(msg, ">: ")) msg = strstr(msg, ">: ") + 3;
      if (!strncmp(msg, "constraint: ", 12)) msg += 12;
      return tl_error_set(err, st, m->source, m->loop_line[i], "loop_joint", "loop_joint '%s' of '%s': %s",
                          m->loop_name[i], m->name, msg);
    }
  }
  return TL_OK;
}

tl_status tl_world_add_system(tl_world *w, const tl_model *model, tl_system **out, tl_error *err) {
  if (!model) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if (w->nsystem == w->cap_system) {
    int cap = w->cap_system ? 2 * w->cap_system : 4;
    tl_system **grown = realloc(w->systems, (size_t)cap * sizeof(*grown));
    if (!grown) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    w->systems = grown;
    w->cap_system = cap;
  }
  tl_system *s = tl_system_create(w, model, w->nsystem);
  if (!s) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory creating system '%s'", model->name);
  tl_system_update_dynamics(s);
  int bad = tl_dyn_factor(&s->d, NULL);
  if (bad) {
    int b = model->dof_body[bad - 1];
    tl_status st = tl_error_set(err, TL_ERR_INVALID, model->source, model->jnt_line[b], b == 0 ? "link" : "joint",
                                "the mass matrix of '%s' is singular at the reference configuration "
                                "(DOF %d, joint '%s' of link '%s'): a body of this %s-base robot has "
                                "too little mass or inertia to move it (load it with a fixed base or "
                                "give its links mass)", model->name, bad - 1, model->joint_name[b],
                                model->body_name[b], model->base == TL_BASE_FLOATING ? "floating" : "fixed");
    tl_system_destroy(s);
    return st;
  }
  w->systems[w->nsystem++] = s;
  tl_status st = refresh(w, err);
  if (st) { /* nothing half-built: take the system out again */
    w->nsystem--;
    tl_system_destroy(s);
    return st;
  }
  st = add_loops(w, s, err);
  if (st) { /* nothing half-built: its loops and the system out again */
    w->nsystem--;
    tl_system_destroy(s);
    tl_error ignored;
    refresh(w, &ignored);
    return st;
  }
  if (out) *out = s;
  return TL_OK;
}

/* ---------------- materials and filters ---------------- */

tl_status tl_world_set_default_material(tl_world *w, double mu, double restitution, double threshold,
                                        tl_error *err) {
  if (!(mu >= 0) || !(restitution >= 0 && restitution <= 1) || !(threshold >= 0) || !isfinite(mu) ||
      !isfinite(threshold))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "material",
                        "friction %g, restitution %g, threshold %g: expected mu >= 0, 0 <= e <= 1, threshold >= 0",
                        mu, restitution, threshold);
  tl_world_options o = w->opt;
  o.default_mu = mu;
  o.default_restitution = restitution;
  o.default_threshold = threshold;
  return apply_options(w, &o, err);
}

/* FNV-1a (Fowler, Noll, Vo) of a NUL-terminated name. */
static uint64_t name_hash(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Slot of the unordered pair {a, b} in the pair index: the sum of the two
 * names' hashes (the same in either order), mixed (the finalizer of
 * MurmurHash3, Appleby), masked to the table size. */
static unsigned pair_home(const char *a, const char *b, int slots) {
  uint64_t h = name_hash(a) + name_hash(b);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (unsigned)(h & (uint64_t)(slots - 1));
}

static int pair_is(const tl_material_pair *p, const char *a, const char *b) {
  return (!strcmp(p->a, a) && !strcmp(p->b, b)) || (!strcmp(p->a, b) && !strcmp(p->b, a));
}

/* Open addressing with linear probing (Knuth, TAOCP vol. 3, 6.4, Algorithm L):
 * the table stays at most half full, so a lookup probes O(1) slots expected. */
int tl_world_find_pair(const tl_world *w, const char *a, const char *b) {
  if (!w->pair_slots || !a || !b) return -1;
  const int mask = w->pair_slots - 1;
  for (unsigned i = pair_home(a, b, w->pair_slots);; i = (i + 1) & (unsigned)mask) {
    int k = w->pair_slot[i];
    if (k < 0) return -1;
    if (pair_is(&w->pairs[k], a, b)) return k;
  }
}

/* Make room in the index for npair + 1 pairs (rehashing into a table twice
 * as large when it would be more than half full). -1: out of memory. */
static int pair_index_reserve(tl_world *w) {
  if (2 * (w->npair + 1) <= w->pair_slots) return 0;
  int slots = w->pair_slots ? 2 * w->pair_slots : 16;
  int *t = malloc((size_t)slots * sizeof(int));
  if (!t) return -1;
  for (int i = 0; i < slots; i++) t[i] = -1;
  for (int k = 0; k < w->npair; k++) {
    unsigned i = pair_home(w->pairs[k].a, w->pairs[k].b, slots);
    while (t[i] >= 0) i = (i + 1) & (unsigned)(slots - 1);
    t[i] = k;
  }
  free(w->pair_slot);
  w->pair_slot = t;
  w->pair_slots = slots;
  return 0;
}

tl_status tl_world_set_material_pair(tl_world *w, const char *a, const char *b, double mu, double restitution,
                                     double threshold, tl_error *err) {
  if (!a || !b || strlen(a) >= 128 || strlen(b) >= 128)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "material", "material names: 0 to 127 characters, not NULL");
  if (!(mu >= 0) || !(restitution >= 0 && restitution <= 1) || !(threshold >= 0) || !isfinite(mu) ||
      !isfinite(threshold))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "material",
                        "pair (%s, %s): friction %g, restitution %g, threshold %g: expected mu >= 0, "
                        "0 <= e <= 1, threshold >= 0", a, b, mu, restitution, threshold);
  int k = tl_world_find_pair(w, a, b);
  tl_material_pair *p = k >= 0 ? &w->pairs[k] : NULL;
  if (!p) {
    if (pair_index_reserve(w)) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    if (w->npair == w->cap_pair) {
      int cap = w->cap_pair ? 2 * w->cap_pair : 8;
      tl_material_pair *g = realloc(w->pairs, (size_t)cap * sizeof(*g));
      if (!g) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
      w->pairs = g;
      w->cap_pair = cap;
    }
    p = &w->pairs[w->npair];
    snprintf(p->a, sizeof(p->a), "%s", a);
    snprintf(p->b, sizeof(p->b), "%s", b);
    p->erp = p->cfm = NAN;
    unsigned i = pair_home(a, b, w->pair_slots);
    while (w->pair_slot[i] >= 0) i = (i + 1) & (unsigned)(w->pair_slots - 1);
    w->pair_slot[i] = w->npair++;
  }
  p->mu = mu;
  p->restitution = restitution;
  p->threshold = threshold;
  return TL_OK;
}

tl_status tl_world_set_material_pair_erp_cfm(tl_world *w, const char *a, const char *b, double erp, double cfm,
                                            tl_error *err) {
  if (!(erp >= 0 && erp <= 1) || !(cfm >= 0) || !isfinite(cfm))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "erp", "erp %g, cfm %g: expected 0 <= erp <= 1 and a finite cfm >= 0",
                        erp, cfm);
  int k = tl_world_find_pair(w, a, b);
  if (k >= 0) {
    w->pairs[k].erp = erp;
    w->pairs[k].cfm = cfm;
    return TL_OK;
  }
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "material",
                      "no material pair (%s, %s): set it with tl_world_set_material_pair first",
                      a ? a : "(null)", b ? b : "(null)");
}

tl_status tl_world_ignore_collision(tl_world *w, int sa, int ba, int sb, int bb, tl_error *err) {
  int ok = sa >= -1 && sa < w->nsystem && sb >= -1 && sb < w->nsystem;
  ok = ok && (sa < 0 || (ba >= 0 && ba < w->systems[sa]->m->nbody)) && (sb < 0 || (bb >= 0 && bb < w->systems[sb]->m->nbody));
  if (!ok)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "body", "no body %d of system %d or body %d of system %d",
                        ba, sa, bb, sb);
  if (w->ignore_n == w->ignore_cap) { /* geometric growth: n pairs cost O(n) copies */
    int cap = w->ignore_cap ? 2 * w->ignore_cap : 8;
    int *p = realloc(w->ignore, (size_t)cap * 4 * sizeof(int));
    if (!p) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    w->ignore = p;
    w->ignore_cap = cap;
  }
  int *e = w->ignore + 4 * w->ignore_n++;
  e[0] = sa; e[1] = sa < 0 ? -1 : ba; e[2] = sb; e[3] = sb < 0 ? -1 : bb;
  return TL_OK;
}

/* ---------------- the step (the engine's; the native pipeline: src/native/step.c) ---------------- */

tl_status tl_world_integrate1(tl_world *w, tl_error *err) { return w->engine->integrate1(w, err); }

tl_status tl_world_integrate2(tl_world *w, tl_error *err) { return w->engine->integrate2(w, err); }

tl_status tl_world_step(tl_world *w, tl_error *err) {
  tl_status st = tl_world_integrate1(w, err);
  return st ? st : tl_world_integrate2(w, err);
}

/* ---------------- contacts ---------------- */

int tl_world_ncontact(const tl_world *w) { return w->engine->ncontact(w); }

tl_status tl_world_contact(const tl_world *w, int k, tl_contact_info *out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  int n = w->engine->ncontact(w);
  if (k < 0 || k >= n)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "k", "contact index %d out of range [0, %d)", k, n);
  return w->engine->contact(w, k, out, err);
}
