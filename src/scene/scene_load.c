/* World files (docs/world_format.md): the elements of <talus_world> and the
 * world they build, through the public API only.
 *
 * The children of the root are read in three passes, each in file order:
 *   1. world settings: <gravity>, <timestep>, <solver>, <default_material>,
 *      <material_pair> (and every element name is checked here);
 *   2. static geometry: <ground>, <heightmap>, <static>;
 *   3. bodies: <object> and <system>, added to the world in file order;
 *   4. loop constraints: <constraint>, between bodies of the systems placed.
 * So settings hold for the whole file wherever they stand, `clearance`
 * sees all the static geometry, and a constraint may name any system. Any error frees the world. */
#define _POSIX_C_SOURCE 200809L

#include "scene/scene_internal.h"
#include "world/world_internal.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "talus/constraint.h"
#include "talus/urdf.h"

/* Defaults of the settings the file may change: the world's own
 * (tl_world_options_default, talus/world.h), never a second copy. */
#define SC_DEFAULT(field) (tl_world_options_default().field)

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    tl_status try_st_ = (expr);                                                                    \
    if (try_st_ != TL_OK) return try_st_;                                                          \
  } while (0)

typedef struct sc_state {
  sc_parser *p;
  /* first line of each element that may appear once (0: not seen) */
  int line_gravity, line_timestep, line_solver, line_default_material, line_ground;
  double def_mu, def_restitution, def_threshold; /* the world's default material */
} sc_state;

/* An engine call failed: its message, at this element. */
static tl_status engine(sc_parser *p, const xmlNode *node, tl_status st, const tl_error *e) {
  return sc_fail(p, st, node, "%s", e->message[0] ? e->message : tl_status_name(st));
}

static tl_status once(sc_parser *p, const xmlNode *node, int *first_line) {
  if (*first_line)
    return sc_fail(p, TL_ERR_INVALID, node, "given twice (first at line %d)", *first_line);
  *first_line = sc_line(node);
  return TL_OK;
}

static tl_status start(sc_parser *p, const xmlNode *node, const char *const *attrs) {
  TRY(sc_check_attrs(p, node, attrs));
  return sc_check_empty(p, node);
}

/* ------------------------------------------------------------ pass 1: settings */

static tl_status read_gravity(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"xyz", NULL};
  sc_parser *p = s->p;
  TRY(once(p, node, &s->line_gravity));
  TRY(start(p, node, attrs));
  double g[3];
  int given = 0;
  TRY(sc_vector(p, node, "xyz", 3, g, &given));
  if (!given) return sc_fail(p, TL_ERR_INVALID, node, "attribute 'xyz' is missing");
  tl_error e = {0};
  tl_status st = tl_world_set_gravity(p->world, g, &e);
  return st ? engine(p, node, st, &e) : TL_OK;
}

static tl_status read_timestep(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"value", NULL};
  sc_parser *p = s->p;
  TRY(once(p, node, &s->line_timestep));
  TRY(start(p, node, attrs));
  double dt;
  TRY(sc_number(p, node, "value", 1, 0, &dt));
  if (!(dt > 0))
    return sc_fail(p, TL_ERR_INVALID, node, "value %g: the time step must be > 0 s", dt);
  tl_error e = {0};
  tl_status st = tl_world_set_timestep(p->world, dt, &e);
  return st ? engine(p, node, st, &e) : TL_OK;
}

static tl_status read_solver(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"type", "max_iter", "tol", "sor", "erp", "cfm",
                                      "compliance", "velocity_limits", "contact_margin", "slop",
                                      "max_recovery_speed", "limit_margin", NULL};
  static const char *const types[] = {"per_contact", "pgs", "dantzig", NULL};
  sc_parser *p = s->p;
  TRY(once(p, node, &s->line_solver));
  TRY(start(p, node, attrs));
  int type, max_iter, vlim;
  double tol, sor, erp, cfm, compliance;
  TRY(sc_choice(p, node, "type", types, TL_SOLVER_PER_CONTACT, &type));
  TRY(sc_integer(p, node, "max_iter", 0, SC_DEFAULT(solver_max_iter), 1, 100000000, &max_iter));
  TRY(sc_number(p, node, "tol", 0, SC_DEFAULT(solver_tol), &tol));
  TRY(sc_number(p, node, "sor", 0, SC_DEFAULT(sor), &sor));
  TRY(sc_number(p, node, "erp", 0, SC_DEFAULT(erp), &erp));
  TRY(sc_number(p, node, "cfm", 0, SC_DEFAULT(cfm), &cfm));
  TRY(sc_number(p, node, "compliance", 0, SC_DEFAULT(contact_compliance), &compliance));
  TRY(sc_boolean(p, node, "velocity_limits", 0, &vlim));
  /* the margins have no single setter: through the options struct */
  static const char *const margin_names[] = {"contact_margin", "slop", "max_recovery_speed", "limit_margin"};
  const tl_world_options d = tl_world_options_default();
  double margins[4] = {d.contact_margin, d.slop, d.max_recovery_speed, d.limit_margin};
  for (int k = 0; k < 4; k++) {
    TRY(sc_number(p, node, margin_names[k], 0, margins[k], &margins[k]));
    if (!(margins[k] >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "%s %g: must be >= 0", margin_names[k], margins[k]);
  }
  if (!(tol >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "tol %g: must be >= 0", tol);
  if (!(sor > 0 && sor < 2))
    return sc_fail(p, TL_ERR_INVALID, node, "sor %g: must be in (0, 2)", sor);
  if (!(erp >= 0 && erp <= 1))
    return sc_fail(p, TL_ERR_INVALID, node, "erp %g: must be in [0, 1]", erp);
  if (!(cfm >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "cfm %g: must be >= 0", cfm);
  if (!(compliance >= 0 && compliance <= 1))
    return sc_fail(p, TL_ERR_INVALID, node, "compliance %g: must be in [0, 1]", compliance);
  tl_error e = {0};
  tl_status st = tl_world_set_solver(p->world, (tl_solver)type, &e);
  if (!st) st = tl_world_set_solver_params(p->world, max_iter, tol, sor, &e);
  if (!st) st = tl_world_set_erp_cfm(p->world, erp, cfm, &e);
  if (!st) st = tl_world_set_contact_compliance(p->world, compliance, &e);
  if (!st) st = tl_world_set_velocity_limits(p->world, vlim, &e);
  tl_world_options o;
  if (!st) st = tl_world_get_options(p->world, &o, &e);
  if (!st) {
    o.contact_margin = margins[0], o.slop = margins[1], o.max_recovery_speed = margins[2], o.limit_margin = margins[3];
    st = tl_world_set_options(p->world, &o, &e);
  }
  return st ? engine(p, node, st, &e) : TL_OK;
}

/* friction, restitution, threshold with their checks. */
static tl_status read_contact_values(sc_parser *p, const xmlNode *node, int friction_required,
                                     double *mu, double *e, double *thr) {
  TRY(sc_number(p, node, "friction", friction_required, SC_DEFAULT(default_mu), mu));
  TRY(sc_number(p, node, "restitution", 0, 0.0, e));
  TRY(sc_number(p, node, "threshold", 0, SC_DEFAULT(default_threshold), thr));
  if (!(*mu >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "friction %g: must be >= 0", *mu);
  if (!(*e >= 0 && *e <= 1))
    return sc_fail(p, TL_ERR_INVALID, node, "restitution %g: must be in [0, 1]", *e);
  if (!(*thr >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "threshold %g: must be >= 0 m/s", *thr);
  return TL_OK;
}

static tl_status read_default_material(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"friction", "restitution", "threshold", NULL};
  sc_parser *p = s->p;
  TRY(once(p, node, &s->line_default_material));
  TRY(start(p, node, attrs));
  TRY(read_contact_values(p, node, 0, &s->def_mu, &s->def_restitution, &s->def_threshold));
  tl_error e = {0};
  tl_status st =
      tl_world_set_default_material(p->world, s->def_mu, s->def_restitution, s->def_threshold, &e);
  return st ? engine(p, node, st, &e) : TL_OK;
}

static tl_status read_material_pair(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"a", "b", "friction", "restitution", "threshold", "erp", "cfm", NULL};
  sc_parser *p = s->p;
  TRY(start(p, node, attrs));
  const char *a, *b;
  double mu, e_, thr, erp, cfm;
  TRY(sc_require(p, node, "a", &a));
  TRY(sc_require(p, node, "b", &b));
  TRY(read_contact_values(p, node, 1, &mu, &e_, &thr));
  TRY(sc_number(p, node, "erp", 0, NAN, &erp));
  TRY(sc_number(p, node, "cfm", 0, NAN, &cfm));
  tl_error e = {0};
  tl_status st = tl_world_set_material_pair(p->world, a, b, mu, e_, thr, &e);
  if (isnan(erp) != isnan(cfm))
    return sc_fail(p, TL_ERR_INVALID, node, "give both erp and cfm for a material pair, or neither");
  if (!st && !isnan(erp)) st = tl_world_set_material_pair_erp_cfm(p->world, a, b, erp, cfm, &e);
  return st ? engine(p, node, st, &e) : TL_OK;
}

/* ------------------------------------------------------------ pass 2: static geometry */

/* Add a static geom with its own friction: the engine gives a static geom the
 * default material's friction at the time it is added (talus/world.h). */
static tl_status with_friction(sc_state *s, const xmlNode *node, int *has, double *mu) {
  sc_parser *p = s->p;
  *has = sc_attr(node, "friction") != NULL;
  TRY(sc_number(p, node, "friction", 0, s->def_mu, mu));
  if (!(*mu >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "friction %g: must be >= 0", *mu);
  if (!*has) return TL_OK;
  tl_error e = {0};
  tl_status st =
      tl_world_set_default_material(p->world, *mu, s->def_restitution, s->def_threshold, &e);
  return st ? engine(p, node, st, &e) : TL_OK;
}

static tl_status restore_default(sc_state *s, const xmlNode *node, int has) {
  if (!has) return TL_OK;
  tl_error e = {0};
  tl_status st = tl_world_set_default_material(s->p->world, s->def_mu, s->def_restitution,
                                               s->def_threshold, &e);
  return st ? engine(s->p, node, st, &e) : TL_OK;
}

static tl_status read_ground(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"height", "friction", NULL};
  sc_parser *p = s->p;
  TRY(once(p, node, &s->line_ground));
  TRY(start(p, node, attrs));
  double h, mu;
  TRY(sc_number(p, node, "height", 0, 0.0, &h));
  TRY(sc_number(p, node, "friction", 0, SC_DEFAULT(default_mu), &mu));
  if (!(mu >= 0)) return sc_fail(p, TL_ERR_INVALID, node, "friction %g: must be >= 0", mu);
  tl_error e = {0};
  tl_status st = tl_world_add_ground(p->world, h, mu, &e);
  if (st) return engine(p, node, st, &e);
  double pos[3] = {0, 0, h}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  p->has_ground = 1;
  p->ground_height = h;
  p->info->nstatic++;
  return sc_static_add_primitive(p, TL_GEOM_PLANE, NULL, pos, R);
}

static tl_status heightmap_values(sc_state *s, const xmlNode *node, int n, double **h) {
  sc_parser *p = s->p;
  const char *inline_text = sc_attr(node, "heights"), *file = sc_attr(node, "file");
  if (inline_text && file)
    return sc_fail(p, TL_ERR_INVALID, node,
                   "give the heights inline (heights) or in a file (file), not both");
  if (!inline_text && !file)
    return sc_fail(p, TL_ERR_INVALID, node, "attribute 'heights' or 'file' is missing");
  int k = 0;
  if (inline_text) {
    TRY(sc_number_list(p, node, "heights", h, &k));
  } else {
    char *path = NULL;
    TRY(sc_path(p, node, "file", &path));
    tl_status st = sc_read_heights_csv(p, path, h, &k);
    free(path);
    if (st != TL_OK) {
      if (p->err) {
        size_t len = strlen(p->err->message);
        snprintf(p->err->message + len, sizeof(p->err->message) - len,
                 " (file of <heightmap> at %s:%d)", p->path, sc_line(node));
      }
      return st;
    }
  }
  if (k != n) {
    free(*h);
    *h = NULL;
    return sc_fail(p, TL_ERR_INVALID, node, "%s has %d heights, expected nx * ny = %d",
                   inline_text ? "attribute 'heights'" : file, k, n);
  }
  return TL_OK;
}

static tl_status read_heightmap(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"nx",       "ny",       "x0",      "y0",   "dx", "dy",
                                      "material", "friction", "heights", "file", NULL};
  sc_parser *p = s->p;
  TRY(start(p, node, attrs));
  int nx, ny;
  double x0, y0, dx, dy;
  TRY(sc_integer(p, node, "nx", 1, 0, 2, 1 << 20, &nx));
  TRY(sc_integer(p, node, "ny", 1, 0, 2, 1 << 20, &ny));
  if ((long long)nx * ny > SC_MAX_HEIGHTMAP_POINTS)
    return sc_fail(p, TL_ERR_INVALID, node, "%d x %d points: at most %d", nx, ny,
                   SC_MAX_HEIGHTMAP_POINTS);
  TRY(sc_number(p, node, "x0", 0, 0.0, &x0));
  TRY(sc_number(p, node, "y0", 0, 0.0, &y0));
  TRY(sc_number(p, node, "dx", 1, 0.0, &dx));
  TRY(sc_number(p, node, "dy", 1, 0.0, &dy));
  if (!(dx > 0) || !(dy > 0))
    return sc_fail(p, TL_ERR_INVALID, node, "spacing dx %g, dy %g: must be > 0 m", dx, dy);
  const char *material = sc_attr(node, "material");
  double *h = NULL;
  TRY(heightmap_values(s, node, nx * ny, &h));
  int has_mu;
  double mu;
  tl_error e = {0};
  tl_status st = with_friction(s, node, &has_mu, &mu);
  if (!st) {
    st = tl_world_add_heightmap(p->world, nx, ny, x0, y0, dx, dy, h, nx * ny, material, NULL, &e);
    if (st) st = engine(p, node, st, &e);
  }
  if (!st) st = restore_default(s, node, has_mu);
  if (!st) st = sc_static_add_heightmap(p, nx, ny, x0, y0, dx, dy, h);
  if (!st) p->info->nstatic++;
  free(h);
  return st;
}

static const char *const prim_names[] = {"sphere", "box", "capsule", "cylinder", "plane", NULL};
static const char *const body_names[] = {"sphere", "box", "capsule", "cylinder", NULL};
static const tl_geom_type prim_types[] = {TL_GEOM_SPHERE, TL_GEOM_BOX, TL_GEOM_CAPSULE,
                                          TL_GEOM_CYLINDER, TL_GEOM_PLANE};

/* type and size of a primitive; planes only when allow_plane. */
static tl_status read_shape(sc_parser *p, const xmlNode *node, int allow_plane, tl_geom_type *type,
                            double size[3]) {
  const char *t;
  TRY(sc_require(p, node, "type", &t));
  int k;
  TRY(sc_choice(p, node, "type", allow_plane ? prim_names : body_names, 0, &k));
  *type = prim_types[k];
  int n = *type == TL_GEOM_SPHERE ? 1 : *type == TL_GEOM_BOX ? 3 : *type == TL_GEOM_PLANE ? 0 : 2;
  size[0] = size[1] = size[2] = 0;
  if (n == 0) {
    if (sc_attr(node, "size"))
      return sc_fail(p, TL_ERR_INVALID, node,
                     "a plane has no size (it is the plane z = 0 of its frame)");
    return TL_OK;
  }
  int given = 0;
  TRY(sc_vector(p, node, "size", n, size, &given));
  if (!given)
    return sc_fail(p, TL_ERR_INVALID, node, "attribute 'size' is missing (%s: %s)", t,
                   n == 1   ? "radius"
                   : n == 3 ? "x y z edge lengths"
                            : "radius length");
  for (int i = 0; i < n; i++)
    if (!(size[i] > 0))
      return sc_fail(p, TL_ERR_INVALID, node, "size value %d is %g: every size must be > 0 m",
                     i + 1, size[i]);
  return TL_OK;
}

static tl_status read_static(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"type", "size",     "pos",      "rpy",
                                      "quat", "material", "friction", NULL};
  sc_parser *p = s->p;
  TRY(start(p, node, attrs));
  tl_geom_type type;
  double size[3], pos[3] = {0, 0, 0}, quat[4], R[9];
  TRY(read_shape(p, node, 1, &type, size));
  TRY(sc_vector(p, node, "pos", 3, pos, NULL));
  TRY(sc_orientation(p, node, quat, R, NULL));
  int has_mu;
  double mu;
  TRY(with_friction(s, node, &has_mu, &mu));
  tl_error e = {0};
  tl_status st =
      tl_world_add_static_geom(p->world, type, size, pos, R, sc_attr(node, "material"), NULL, &e);
  if (st) return engine(p, node, st, &e);
  TRY(restore_default(s, node, has_mu));
  p->info->nstatic++;
  return sc_static_add_primitive(p, type, size, pos, R);
}

/* ------------------------------------------------------------ pass 3: objects and systems */

/* Names of the systems so far: an open-addressing hash index (linear probing,
 * Knuth TAOCP vol. 3, 6.4, Algorithm L; FNV-1a of the name) at most half
 * full, so n objects are named in O(n) expected, not the O(n^2) of a scan. */
static unsigned name_home(const char *s, int slots) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (unsigned)(h ^ (h >> 32)) & (unsigned)(slots - 1);
}

/* The first system named `name`, NULL if none. */
static tl_scene_system *find_name(sc_parser *p, const char *name) {
  for (unsigned i = p->name_slots ? name_home(name, p->name_slots) : 0; p->name_slots;
       i = (i + 1) & (unsigned)(p->name_slots - 1)) {
    int k = p->name_slot[i];
    if (k < 0) return NULL;
    if (!strcmp(p->info->systems[k].name, name)) return &p->info->systems[k];
  }
  return NULL;
}

/* Index entry k of info->systems (its name unless an earlier one has it). -1: out of memory. */
static int name_index_add(sc_parser *p, int k) {
  if (2 * (k + 1) > p->name_slots) {
    int slots = p->name_slots ? 2 * p->name_slots : 16;
    int *t = malloc((size_t)slots * sizeof(int));
    if (!t) return -1;
    for (int i = 0; i < slots; i++) t[i] = -1;
    free(p->name_slot);
    p->name_slot = t;
    p->name_slots = slots;
    for (int j = 0; j < k; j++) name_index_add(p, j); /* room for all: cannot fail */
  }
  const char *name = p->info->systems[k].name;
  unsigned i = name_home(name, p->name_slots);
  for (; p->name_slot[i] >= 0; i = (i + 1) & (unsigned)(p->name_slots - 1))
    if (!strcmp(p->info->systems[p->name_slot[i]].name, name)) return 0;
  p->name_slot[i] = k;
  return 0;
}

/* Append an info entry named `name` (explicit: duplicates are an error) or a
 * default name (made unique with _<index>). */
static tl_status add_info(sc_parser *p, const xmlNode *node, const char *name, int explicit_name,
                          tl_system *sys, tl_scene_system **out) {
  tl_scene_info *info = p->info;
  tl_scene_system *dup = find_name(p, name);
  if (dup && explicit_name)
    return sc_fail(p, TL_ERR_INVALID, node, "name '%s' is used twice (first at line %d)", name,
                   dup->line);
  char buf[512];
  if (dup)
    snprintf(buf, sizeof(buf), "%s_%d", name, tl_system_index(sys));
  else
    snprintf(buf, sizeof(buf), "%s", name);
  if (info->nsystem == p->ninfo_cap) {
    int cap = p->ninfo_cap ? 2 * p->ninfo_cap : 8;
    tl_scene_system *v = realloc(info->systems, (size_t)cap * sizeof(*v));
    if (!v) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
    info->systems = v;
    p->ninfo_cap = cap;
  }
  tl_scene_system *e = &info->systems[info->nsystem];
  memset(e, 0, sizeof(*e));
  e->name = strdup(buf);
  if (!e->name) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  info->nsystem++;
  if (name_index_add(p, info->nsystem - 1)) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  e->index = tl_system_index(sys);
  e->line = sc_line(node);
  e->system = sys;
  *out = e;
  return TL_OK;
}

/* material and friction on every geom of sys. */
static tl_status geom_contact(sc_parser *p, const xmlNode *node, tl_system *sys) {
  const char *material = sc_attr(node, "material");
  double mu = 0;
  int has_mu = sc_attr(node, "friction") != NULL;
  TRY(sc_number(p, node, "friction", 0, 0.0, &mu));
  if (has_mu && !(mu >= 0))
    return sc_fail(p, TL_ERR_INVALID, node, "friction %g: must be >= 0", mu);
  int ngeom = tl_model_ngeom(tl_system_model(sys));
  tl_error e = {0};
  for (int g = 0; g < ngeom; g++) {
    tl_status st = TL_OK;
    if (material) st = tl_system_set_geom_material(sys, g, material, &e);
    if (!st && has_mu) st = tl_system_set_geom_friction(sys, g, mu, &e);
    if (st) return engine(p, node, st, &e);
  }
  return TL_OK;
}

static tl_status read_clearance(sc_parser *p, const xmlNode *node, int *has, double *c) {
  *has = sc_attr(node, "clearance") != NULL;
  TRY(sc_number(p, node, "clearance", 0, 0.0, c));
  if (*has && !(*c >= 0))
    return sc_fail(p, TL_ERR_INVALID, node, "clearance %g: must be >= 0 m", *c);
  return TL_OK;
}

static tl_status read_object(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"name",     "type",      "size", "mass",   "pos",
                                      "rpy",      "quat",      "vel",  "angvel", "material",
                                      "friction", "clearance", NULL};
  sc_parser *p = s->p;
  TRY(start(p, node, attrs));
  tl_geom_type type;
  double size[3], mass, q[7] = {0, 0, 0, 1, 0, 0, 0}, u[6] = {0, 0, 0, 0, 0, 0}, R[9], clearance;
  int has_clearance;
  TRY(read_shape(p, node, 0, &type, size));
  TRY(sc_number(p, node, "mass", 1, 0.0, &mass));
  if (!(mass > 0)) return sc_fail(p, TL_ERR_INVALID, node, "mass %g: must be > 0 kg", mass);
  TRY(sc_vector(p, node, "pos", 3, q, NULL));
  TRY(sc_orientation(p, node, q + 3, R, NULL));
  TRY(sc_vector(p, node, "vel", 3, u, NULL));
  TRY(sc_vector(p, node, "angvel", 3, u + 3, NULL));
  TRY(read_clearance(p, node, &has_clearance, &clearance));
  const char *name = sc_attr(node, "name");
  if (name && !name[0]) return sc_fail(p, TL_ERR_INVALID, node, "attribute 'name' is empty");
  char def[64];
  snprintf(def, sizeof(def), "%s%d", tl_geom_type_name(type), p->info->nsystem);
  tl_model *m = NULL;
  tl_system *sys = NULL;
  tl_error e = {0};
  tl_status st = tl_model_create_primitive(type, size, mass, name ? name : def, &m, &e);
  if (!st) st = tl_world_add_system(p->world, m, &sys, &e);
  tl_model_free(m);
  if (!st) st = tl_system_set_state(sys, q, 7, u, 6, &e);
  if (st) return engine(p, node, st, &e);
  tl_scene_system *info;
  TRY(add_info(p, node, name ? name : def, name != NULL, sys, &info));
  info->is_object = 1;
  TRY(geom_contact(p, node, sys));
  if (has_clearance) TRY(sc_place_clearance(p, node, sys, clearance));
  return TL_OK;
}

/* Initial q of a system: the default configuration (inside the joint limits,
 * tl_model_default_q), then base pose, then the q attribute. A fixed base's
 * pose (pos, rpy / quat) goes into base_pos / base_R (*has_pose: one was
 * given), applied with tl_system_set_base_pose by the caller. */
static tl_status system_q(sc_parser *p, const xmlNode *node, const tl_model *m, int floating,
                          double *q, int nq, double base_pos[3], double base_R[9], int *has_pose) {
  tl_error e = {0};
  tl_status st = tl_model_default_q(m, q, nq, &e);
  if (st) return engine(p, node, st, &e);
  double pos[3] = {0, 0, 0}, quat[4], R[9];
  int has_pos = 0, has_rot = 0;
  TRY(sc_vector(p, node, "pos", 3, pos, &has_pos));
  TRY(sc_orientation(p, node, quat, R, &has_rot));
  memcpy(base_pos, pos, sizeof(pos));
  memcpy(base_R, R, sizeof(R));
  *has_pose = has_pos || has_rot;
  if (floating) {
    memcpy(q, pos, sizeof(pos));
    memcpy(q + 3, quat, sizeof(quat));
  }
  double *v = NULL;
  int n = 0, njoint = floating ? nq - 7 : nq;
  TRY(sc_number_list(p, node, "q", &v, &n));
  if (!v) return TL_OK;
  st = TL_OK;
  if (n == njoint) {
    memcpy(q + (nq - njoint), v, (size_t)n * sizeof(double));
  } else if (n == nq) {
    if (has_pos || has_rot)
      st = sc_fail(
          p, TL_ERR_INVALID, node,
          "q has all %d coordinates (base pose included): pos, rpy and quat must not be given too",
          nq);
    else
      memcpy(q, v, (size_t)n * sizeof(double));
  } else if (floating) {
    st = sc_fail(p, TL_ERR_INVALID, node,
                 "q has %d values: expected %d (joint coordinates) or %d (base pose and joints)", n,
                 njoint, nq);
  } else {
    st = sc_fail(p, TL_ERR_INVALID, node, "q has %d values: expected %d", n, nq);
  }
  free(v);
  return st;
}

/* Initial u: zero, base velocity from vel / angvel, then the u attribute. */
static tl_status system_u(sc_parser *p, const xmlNode *node, int floating, double *u, int nv) {
  memset(u, 0, (size_t)nv * sizeof(double));
  int has_vel = sc_attr(node, "vel") || sc_attr(node, "angvel");
  if (has_vel && !floating)
    return sc_fail(p, TL_ERR_INVALID, node,
                   "vel and angvel are base velocities: only for a floating base");
  if (floating) {
    TRY(sc_vector(p, node, "vel", 3, u, NULL));
    TRY(sc_vector(p, node, "angvel", 3, u + 3, NULL));
  }
  double *v = NULL;
  int n = 0, njoint = floating ? nv - 6 : nv;
  TRY(sc_number_list(p, node, "u", &v, &n));
  if (!v) return TL_OK;
  tl_status st = TL_OK;
  if (n == njoint) {
    memcpy(u + (nv - njoint), v, (size_t)n * sizeof(double));
  } else if (n == nv) {
    if (has_vel)
      st = sc_fail(p, TL_ERR_INVALID, node,
                   "u has all %d velocities (base included): vel and angvel must not be given too",
                   nv);
    else
      memcpy(u, v, (size_t)n * sizeof(double));
  } else if (floating) {
    st = sc_fail(p, TL_ERR_INVALID, node,
                 "u has %d values: expected %d (joint velocities) or %d (base and joints)", n,
                 njoint, nv);
  } else {
    st = sc_fail(p, TL_ERR_INVALID, node, "u has %d values: expected %d", n, nv);
  }
  free(v);
  return st;
}

/* controller="stand": gains on every non-base DOF, targets = the initial state. */
static tl_status apply_stand(sc_parser *p, const xmlNode *node, tl_system *sys, int floating,
                             double kp, double kd, double *q, int nq, double *u, int nv) {
  double *gains = calloc(2 * (size_t)nv + 1, sizeof(double));
  if (!gains) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  double *kdv = gains + nv;
  for (int k = floating ? 6 : 0; k < nv; k++) gains[k] = kp, kdv[k] = kd;
  tl_error e = {0};
  tl_status st = tl_system_get_state(sys, q, nq, u, nv, &e); /* normalised quaternions */
  if (!st) st = tl_system_set_pd_gains(sys, gains, kdv, nv, &e);
  memset(u, 0, (size_t)nv * sizeof(double));
  if (!st) st = tl_system_set_pd_targets(sys, q, nq, u, nv, &e);
  free(gains);
  return st ? engine(p, node, st, &e) : TL_OK;
}

static tl_status system_options(sc_parser *p, const xmlNode *node, tl_system *sys) {
  static const char *const integrators[] = {"euler", "rk4", NULL};
  int self = 0, integrator = 0;
  TRY(sc_boolean(p, node, "self_collision", 0, &self));
  TRY(sc_choice(p, node, "integrator", integrators, TL_INTEGRATOR_EULER, &integrator));
  tl_system_set_self_collision(sys, self);
  tl_error e = {0};
  tl_status st = tl_system_set_integrator(sys, (tl_integrator)integrator, &e);
  return st ? engine(p, node, st, &e) : TL_OK;
}

/* The model and system of a <system>, state set; *out_model freed by the caller. */
static tl_status system_build(sc_parser *p, const xmlNode *node, const char *urdf, int base,
                              tl_system **out, int *floating) {
  tl_load_options opt = tl_load_options_default();
  opt.base = (tl_base_type)base;
  tl_model *m = NULL;
  tl_error e = {0};
  tl_status st = tl_model_load_urdf(urdf, &opt, &m, &e);
  if (st) return sc_fail(p, st, node, "cannot load URDF '%s': %s", urdf, e.message);
  st = tl_world_add_system(p->world, m, out, &e);
  tl_model_free(m);
  if (st) return sc_fail(p, st, node, "URDF '%s': %s", urdf, e.message);
  const tl_model *sm = tl_system_model(*out);
  *floating = tl_model_joint_type(sm, 0) == TL_JOINT_FLOATING;
  return TL_OK;
}

static tl_status read_system(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {
      "name",       "urdf",      "base",     "pos",        "rpy", "quat", "q",
      "u",          "vel",       "angvel",   "controller", "kp",  "kd",   "self_collision",
      "integrator", "clearance", "material", "friction",   NULL};
  static const char *const bases[] = {"auto", "floating", "fixed", NULL};
  static const char *const controllers[] = {"none", "stand", NULL};
  sc_parser *p = s->p;
  TRY(start(p, node, attrs));
  const char *name = sc_attr(node, "name");
  if (name && !name[0]) return sc_fail(p, TL_ERR_INVALID, node, "attribute 'name' is empty");
  int base, controller, has_clearance, floating = 0;
  double kp, kd, clearance;
  TRY(sc_choice(p, node, "base", bases, TL_BASE_AUTO, &base));
  TRY(sc_choice(p, node, "controller", controllers, TL_SCENE_CONTROLLER_NONE, &controller));
  if (controller != TL_SCENE_CONTROLLER_STAND && (sc_attr(node, "kp") || sc_attr(node, "kd")))
    return sc_fail(p, TL_ERR_INVALID, node, "kp and kd are gains of controller=\"stand\"");
  TRY(sc_number(p, node, "kp", 0, TL_SCENE_DEFAULT_KP, &kp));
  TRY(sc_number(p, node, "kd", 0, TL_SCENE_DEFAULT_KD, &kd));
  if (!(kp >= 0) || !(kd >= 0))
    return sc_fail(p, TL_ERR_INVALID, node, "kp %g, kd %g: gains must be >= 0", kp, kd);
  TRY(read_clearance(p, node, &has_clearance, &clearance));
  char *urdf = NULL;
  TRY(sc_path(p, node, "urdf", &urdf));
  tl_system *sys = NULL;
  tl_status st = system_build(p, node, urdf, base, &sys, &floating);
  tl_scene_system *info = NULL;
  if (!st)
    st = add_info(p, node, name ? name : tl_model_name(tl_system_model(sys)), name != NULL, sys,
                  &info);
  if (st) {
    free(urdf);
    return st;
  }
  info->urdf = urdf;
  info->controller = (tl_scene_controller)controller;
  info->kp = controller == TL_SCENE_CONTROLLER_STAND ? kp : 0;
  info->kd = controller == TL_SCENE_CONTROLLER_STAND ? kd : 0;
  int nq = tl_system_nq(sys), nv = tl_system_nv(sys);
  double *q = calloc((size_t)nq + (size_t)nv + 1, sizeof(double));
  if (!q) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  double *u = q + nq;
  tl_error e = {0};
  double base_pos[3], base_R[9];
  int has_pose = 0;
  st = system_q(p, node, tl_system_model(sys), floating, q, nq, base_pos, base_R, &has_pose);
  if (!st) st = system_u(p, node, floating, u, nv);
  if (!st && (st = tl_system_set_state(sys, q, nq, u, nv, &e)) != TL_OK)
    st = engine(p, node, st, &e);
  if (!st && !floating && has_pose && (st = tl_system_set_base_pose(sys, base_pos, base_R, &e)) != TL_OK)
    st = engine(p, node, st, &e);
  if (!st && sc_attr(node, "q") && (st = tl_system_check_q_limits(tl_system_model(sys), q, &e)) != TL_OK)
    st = engine(p, node, st, &e); /* a stated q within the joint limits */
  if (!st) st = system_options(p, node, sys);
  if (!st) st = geom_contact(p, node, sys);
  if (!st && has_clearance) st = sc_place_clearance(p, node, sys, clearance);
  if (!st && controller == TL_SCENE_CONTROLLER_STAND)
    st = apply_stand(p, node, sys, floating, kp, kd, q, nq, u, nv);
  free(q);
  if (!st) {
    p->info->narticulated++;
    if (p->info->first_articulated < 0) p->info->first_articulated = p->info->nsystem - 1;
  }
  return st;
}

/* ------------------------------------------------------------ pass 4: constraints */

/* The message of a failed tl_world_add_constraint without its own
 * "<field>: constraint: " prefix (the world file's prefix replaces it). */
static const char *constraint_message(const tl_error *e) {
  const char *m = e->message;
  if (m[0] == '<') {
    const char *close = strstr(m, ">: ");
    if (close) m = close + 3;
  }
  if (!strncmp(m, "constraint: ", 12)) m += 12;
  return m[0] ? m : tl_status_name(e->status);
}

/* World index of the <object> / <system> named by attribute `attr`. */
static tl_status constraint_system(sc_parser *p, const xmlNode *node, const char *attr, int *index) {
  const char *name;
  TRY(sc_require(p, node, attr, &name));
  const tl_scene_system *e = find_name(p, name);
  if (!e)
    return sc_fail(p, TL_ERR_INVALID, node, "%s '%s': no <object> or <system> has this name", attr, name);
  *index = e->index;
  return TL_OK;
}

/* <constraint type system body1 point1 rpy1 system2 body2 point2 rpy2 axis
 * distance min max name erp cfm/>: a loop constraint (talus/constraint.h),
 * added after every object and system is placed. Each type takes only the
 * attributes it uses (an attribute it ignores is refused, so a misplaced
 * axis or rpy never goes unnoticed); the checks of tl_world_add_constraint
 * (bodies, same body, zero axis, bounds) are reported at this element. */
static tl_status read_constraint(sc_state *s, const xmlNode *node) {
  static const char *const attrs[] = {"type", "name", "system", "body1", "point1", "rpy1", "system2", "body2",
                                      "point2", "rpy2", "axis", "distance", "min", "max", "erp", "cfm", NULL};
  static const char *const types[] = {"ball", "hinge", "weld", "distance", NULL};
  /* the attributes each type does not take */
  static const char *const refused[4][7] = {
      {"rpy1", "rpy2", "axis", "distance", "min", "max", NULL}, /* ball: two points */
      {"distance", "min", "max", NULL},                         /* hinge */
      {"axis", "distance", "min", "max", NULL},                 /* weld: the frames coincide */
      {"rpy1", "rpy2", "axis", NULL},                           /* distance: two points */
  };
  sc_parser *p = s->p;
  TRY(start(p, node, attrs));
  const char *t;
  TRY(sc_require(p, node, "type", &t));
  int type;
  TRY(sc_choice(p, node, "type", types, 0, &type));
  for (int k = 0; refused[type][k]; k++)
    if (sc_attr(node, refused[type][k]))
      return sc_fail(p, TL_ERR_INVALID, node, "attribute '%s' does not apply to type \"%s\" (%s)", refused[type][k],
                     t,
                     type == TL_CONSTRAINT_BALL       ? "ball takes point1, point2"
                     : type == TL_CONSTRAINT_HINGE    ? "hinge takes point1, rpy1, point2, rpy2, axis"
                     : type == TL_CONSTRAINT_WELD     ? "weld takes point1, rpy1, point2, rpy2"
                                                      : "distance takes point1, point2, distance, min, max");
  tl_constraint_def d = tl_constraint_def_default();
  d.type = (tl_constraint_type)type;
  const char *name = sc_attr(node, "name");
  if (name && !name[0]) return sc_fail(p, TL_ERR_INVALID, node, "attribute 'name' is empty");
  d.name = name;
  TRY(constraint_system(p, node, "system", &d.system1));
  TRY(sc_require(p, node, "body1", &d.body1));
  TRY(sc_require(p, node, "body2", &d.body2));
  int world2 = !strcmp(d.body2, "world");
  if (world2 && sc_attr(node, "system2"))
    return sc_fail(p, TL_ERR_INVALID, node, "body2=\"world\" is the fixed world frame: system2 must not be given");
  if (!world2 && sc_attr(node, "system2")) TRY(constraint_system(p, node, "system2", &d.system2));
  TRY(sc_vector(p, node, "point1", 3, d.point1, NULL));
  TRY(sc_vector(p, node, "rpy1", 3, d.rpy1, NULL));
  TRY(sc_vector(p, node, "point2", 3, d.point2, NULL));
  TRY(sc_vector(p, node, "rpy2", 3, d.rpy2, NULL));
  TRY(sc_vector(p, node, "axis", 3, d.axis, NULL));
  TRY(sc_number(p, node, "distance", 0, NAN, &d.distance));
  TRY(sc_number(p, node, "min", 0, NAN, &d.min));
  TRY(sc_number(p, node, "max", 0, NAN, &d.max));
  if (!isnan(d.distance) && (!isnan(d.min) || !isnan(d.max)))
    return sc_fail(p, TL_ERR_INVALID, node,
                   "give either distance (a rigid rod) or min and / or max (a range), not both");
  TRY(sc_number(p, node, "erp", 0, 0.0, &d.erp));
  TRY(sc_number(p, node, "cfm", 0, 0.0, &d.cfm));
  tl_error e = {0};
  tl_status st = tl_world_add_constraint(p->world, &d, NULL, &e);
  if (st && (!strcmp(e.element, "body1") || !strcmp(e.element, "body2")) && strstr(e.message, "no link")) {
    /* the message names the URDF robot: say which element of this file it is */
    const char *sys = !strcmp(e.element, "body2") && sc_attr(node, "system2") ? "system2" : "system";
    return sc_fail(p, st, node, "%s (%s=\"%s\")", constraint_message(&e), sys, sc_attr(node, sys));
  }
  if (st) return sc_fail(p, st, node, "%s", constraint_message(&e));
  p->info->nconstraint++;
  return TL_OK;
}

/* ------------------------------------------------------------ the file */

typedef tl_status (*sc_reader)(sc_state *s, const xmlNode *node);

typedef struct sc_element {
  const char *name;
  int pass;
  sc_reader read;
} sc_element;

static const sc_element elements[] = {
    {"gravity", 1, read_gravity},
    {"timestep", 1, read_timestep},
    {"solver", 1, read_solver},
    {"default_material", 1, read_default_material},
    {"material_pair", 1, read_material_pair},
    {"ground", 2, read_ground},
    {"heightmap", 2, read_heightmap},
    {"static", 2, read_static},
    {"object", 3, read_object},
    {"system", 3, read_system},
    {"constraint", 4, read_constraint},
};
#define SC_NELEMENT ((int)(sizeof(elements) / sizeof(elements[0])))

static tl_status unknown_element(sc_parser *p, const xmlNode *node) {
  char list[400] = "";
  size_t n = 0;
  for (int k = 0; k < SC_NELEMENT && n < sizeof(list) - 1; k++)
    n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", k ? ", " : "", elements[k].name);
  return sc_fail(p, TL_ERR_INVALID, node, "unknown element (expected one of %s)", list);
}

static tl_status read_pass(sc_state *s, const xmlNode *root, int pass) {
  for (const xmlNode *c = root->children; c; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      if (pass != 1) continue;
      for (const xmlChar *t = c->content; t && *t; t++)
        if (*t != ' ' && *t != '\t' && *t != '\r' && *t != '\n')
          return sc_fail(s->p, TL_ERR_INVALID, root, "unexpected text inside the element");
      continue;
    }
    if (c->type != XML_ELEMENT_NODE) continue;
    int k = 0;
    while (k < SC_NELEMENT && !(sc_is(c, elements[k].name))) k++;
    if (k == SC_NELEMENT) {
      if (pass == 1) return unknown_element(s->p, c);
      continue;
    }
    if (elements[k].pass == pass) TRY(elements[k].read(s, c));
  }
  return TL_OK;
}

static tl_status read_world(sc_parser *p, const xmlNode *root) {
  static const char *const attrs[] = {"name", NULL};
  TRY(sc_check_attrs(p, root, attrs));
  const char *name = sc_attr(root, "name");
  p->info->name = strdup(name ? name : "");
  if (!p->info->name) return sc_fail(p, TL_ERR_MEMORY, root, "out of memory");
  sc_state s;
  memset(&s, 0, sizeof(s));
  s.p = p;
  s.def_mu = SC_DEFAULT(default_mu);
  s.def_restitution = 0;
  s.def_threshold = SC_DEFAULT(default_threshold);
  for (int pass = 1; pass <= 4; pass++) TRY(read_pass(&s, root, pass));
  return TL_OK;
}

/* Folder of path with a trailing '/', "" when it has none. */
static tl_status set_dir(sc_parser *p) {
  const char *slash = strrchr(p->path, '/');
  size_t n = slash ? (size_t)(slash - p->path) + 1 : 0;
  if (n >= sizeof(p->dir)) return sc_fail(p, TL_ERR_ARGUMENT, NULL, "path is too long");
  memcpy(p->dir, p->path, n);
  p->dir[n] = '\0';
  return TL_OK;
}

static tl_status load_buffer(sc_parser *p, char *buf, size_t len) {
  size_t k = (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
  while (k < len && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r' || buf[k] == '\n')) k++;
  if (k == len)
    return sc_fail(p, TL_ERR_PARSE, NULL, "file is empty: expected a <talus_world> element");
  xmlDocPtr xml = NULL;
  TRY(sc_parse_xml(p, buf, len, &xml));
  const xmlNode *root = xmlDocGetRootElement(xml);
  tl_status st;
  if (root && root->ns && xmlStrEqual(root->name, (const xmlChar *)"talus_world")) {
    st = sc_fail(p, TL_ERR_PARSE, root, "<talus_world> is in namespace '%s': world files take no namespace "
                 "(remove xmlns)", root->ns->href ? (const char *)root->ns->href : "");
  } else if (!sc_is(root, "talus_world")) {
    st = sc_fail(p, TL_ERR_PARSE, root, "root element is <%s>: expected <talus_world>",
                 root ? (const char *)root->name : "");
  } else {
    tl_error e = {0};
    st = tl_world_create(&p->world, &e);
    if (st)
      st = engine(p, root, st, &e);
    else
      st = read_world(p, root);
  }
  xmlFreeDoc(xml);
  return st;
}

tl_status tl_scene_load(const char *path, tl_world **world, tl_scene_info *info, tl_error *err) {
  if (err) memset(err, 0, sizeof(*err));
  if (info) memset(info, 0, sizeof(*info));
  if (world) *world = NULL;
  sc_parser p;
  memset(&p, 0, sizeof(p));
  p.err = err;
  p.path = path;
  if (!path || !world)
    return sc_fail_at(&p, TL_ERR_ARGUMENT, NULL, 0, path ? "world" : "path", "must not be NULL");
  tl_scene_info local;
  memset(&local, 0, sizeof(local));
  p.info = info ? info : &local;
  p.info->first_articulated = -1;
  tl_status st = set_dir(&p);
  char *buf = NULL;
  size_t len = 0;
  if (!st) st = sc_read_file(path, &buf, &len, err);
  if (!st) {
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
    st = load_buffer(&p, buf, len);
    if (c_locale) {
      uselocale(old);
      freelocale(c_locale);
    }
  }
  free(buf);
  sc_statics_free(&p);
  free(p.name_slot);
  if (st) {
    tl_world_free(p.world);
    tl_scene_info_free(p.info);
    return st;
  }
  if (!info) tl_scene_info_free(&local);
  *world = p.world;
  return TL_OK;
}

void tl_scene_info_free(tl_scene_info *info) {
  if (!info) return;
  for (int i = 0; i < info->nsystem; i++) {
    free(info->systems[i].name);
    free(info->systems[i].urdf);
  }
  free(info->systems);
  free(info->name);
  memset(info, 0, sizeof(*info));
  info->first_articulated = -1;
}
