/* The recording's scene, built once when the recorder is created: systems and
 * their bodies, visual and collision geometry, meshes (each file read once),
 * frames, the main system's joints (axes and limits) and plot series names,
 * static geoms and heightmaps, loop constraints. Kept as compact JSON text (docs/viewer.md).
 * A link whose visual mesh is missing or cannot be read is drawn with its
 * collision geometry (hulls for meshes), with a warning naming the file. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "record/record_internal.h"
#include "talus/talus.h"

/* Colours of systems without <visual> elements (objects of world files), by system index. */
static const double palette[6][3] = {{0.85, 0.45, 0.2}, {0.25, 0.55, 0.85}, {0.45, 0.7, 0.3},
                                     {0.8, 0.7, 0.25},  {0.6, 0.4, 0.75},  {0.3, 0.7, 0.7}};
#define GREY 0.72

/* One mesh file as read for a visual (deduplicated by file and scale). */
typedef struct mesh_entry {
  char *file;
  double scale[3];
  int first, npart;  /* its parts are meshes first .. first + npart - 1 of the scene */
  double rgba[8][4]; /* colours of the first parts (more parts share the last) */
  int ok;
  char *why;         /* ok == 0: why the file cannot be read */
} mesh_entry;

typedef struct scene_ctx {
  tl_recorder *rec;
  cJSON *root, *meshes;
  int nmesh;
  mesh_entry *cache;
  int ncache, capcache;
  /* links of the current system already drawn with their collision geometry */
  const char **stand_in;
  int nstand_in, capstand_in;
} scene_ctx;

static int add_nums(cJSON *obj, const char *key, const double *v, int n) {
  cJSON *a = cJSON_AddArrayToObject(obj, key);
  if (!a) return -1;
  for (int i = 0; i < n; ++i) {
    cJSON *x = isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull();
    if (!x || !cJSON_AddItemToArray(a, x)) {
      cJSON_Delete(x);
      return -1;
    }
  }
  return 0;
}

static int add_str(cJSON *obj, const char *key, const char *s) {
  return cJSON_AddStringToObject(obj, key, s ? s : "") ? 0 : -1;
}

static int add_num(cJSON *obj, const char *key, double v) {
  cJSON *x = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
  if (!x || !cJSON_AddItemToObject(obj, key, x)) {
    cJSON_Delete(x);
    return -1;
  }
  return 0;
}

/* pos and quaternion (x y z w, three.js order) of a pose. */
static int add_pose(cJSON *obj, const double pos[3], const double R[9]) {
  double q[4], qxyzw[4];
  tl_quat_from_m3(q, R);
  qxyzw[0] = q[1], qxyzw[1] = q[2], qxyzw[2] = q[3], qxyzw[3] = q[0];
  return add_nums(obj, "pos", pos, 3) || add_nums(obj, "quat", qxyzw, 4) ? -1 : 0;
}

static cJSON *push_object(cJSON *arr) {
  cJSON *o = cJSON_CreateObject();
  if (o && !cJSON_AddItemToArray(arr, o)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* A mesh (float32 vertices, uint32 triangles) appended to "meshes"; its index or -1. */
static int push_mesh(scene_ctx *c, const float *vert, int nvert, const uint32_t *tri, int ntri) {
  cJSON *m = push_object(c->meshes);
  if (!m) return -1;
  cJSON *pv = tl_rec_base64_item(vert, (size_t)nvert * 3 * sizeof(float));
  if (!pv || !cJSON_AddItemToObject(m, "positions", pv)) {
    cJSON_Delete(pv);
    return -1;
  }
  cJSON *pt = tl_rec_base64_item(tri, (size_t)ntri * 3 * sizeof(uint32_t));
  if (!pt || !cJSON_AddItemToObject(m, "indices", pt)) {
    cJSON_Delete(pt);
    return -1;
  }
  if (add_num(m, "nvert", nvert) || add_num(m, "ntri", ntri)) return -1;
  return c->nmesh++;
}

static const char *type_name(tl_geom_type t) { return tl_geom_type_name(t); }

/* ------------------------------------------------------------ visual meshes */

static mesh_entry *find_mesh(scene_ctx *c, const char *file, const double scale[3]) {
  for (int i = 0; i < c->ncache; ++i)
    if (strcmp(c->cache[i].file, file) == 0 && memcmp(c->cache[i].scale, scale, sizeof(double) * 3) == 0)
      return &c->cache[i];
  return NULL;
}

/* Read a visual mesh file once; NULL only when out of memory (a bad file gives ok = 0). */
static mesh_entry *load_mesh(scene_ctx *c, const char *file, const double scale[3], const char *link) {
  mesh_entry *e = find_mesh(c, file, scale);
  if (e) return e;
  if (c->ncache == c->capcache) {
    int cap = c->capcache ? 2 * c->capcache : 16;
    mesh_entry *g = realloc(c->cache, (size_t)cap * sizeof(*g));
    if (!g) return NULL;
    c->cache = g, c->capcache = cap;
  }
  e = &c->cache[c->ncache];
  memset(e, 0, sizeof(*e));
  e->file = strdup(file);
  if (!e->file) return NULL;
  memcpy(e->scale, scale, sizeof(e->scale));
  c->ncache++;
  tl_rec_mesh mesh;
  char why[512];
  if (tl_rec_mesh_read(file, scale, c->rec->opt.max_mesh_triangles, &mesh, why, sizeof why) != 0) {
    if (strcmp(why, "out of memory") == 0) return NULL;
    size_t n = strlen(why) + 24;
    e->why = malloc(n);
    if (!e->why) return NULL;
    snprintf(e->why, n, "cannot be read (%s)", why);
    return e;
  }
  if (mesh.decimated_from)
    tl_rec_warn(c->rec, "visual mesh '%s' decimated from %d to at most %d triangles", file, mesh.decimated_from,
                c->rec->opt.max_mesh_triangles);
  e->first = c->nmesh;
  int ok = 1;
  for (int i = 0; ok && i < mesh.npart; ++i) {
    tl_rec_mesh_part *p = &mesh.part[i];
    ok = push_mesh(c, p->vert, p->nvert, p->tri, p->ntri) >= 0;
    memcpy(e->rgba[i < 8 ? i : 7], p->rgba, sizeof(p->rgba));
  }
  e->npart = mesh.npart;
  tl_rec_mesh_free(&mesh);
  if (!ok) return NULL;
  e->ok = 1;
  return e;
}

/* ------------------------------------------------------------ geoms */

static int add_colour(cJSON *o, const double rgba[4]) {
  double c[4] = {rgba[0], rgba[1], rgba[2], rgba[3] >= 0 ? rgba[3] : 1};
  return add_nums(o, "color", c, 4);
}

/* "parts" of a mesh visual: one per part of the file, its material colour or `over`. */
static int add_parts(cJSON *o, const mesh_entry *e, const double *over) {
  cJSON *parts = cJSON_AddArrayToObject(o, "parts");
  if (!parts) return -1;
  for (int i = 0; e->ok && i < e->npart; ++i) {
    cJSON *p = push_object(parts);
    double grey[4] = {GREY, GREY, GREY, 1};
    const double *col = over ? over : e->rgba[i < 8 ? i : 7][3] >= 0 ? e->rgba[i < 8 ? i : 7] : grey;
    if (!p || add_num(p, "mesh", e->first + i) || add_colour(p, col)) return -1;
  }
  return 0;
}

/* Collision geom g of a system into arr (as a visual when `colour` is given:
 * a hull then also as the one part of a mesh visual). */
static int add_geom(scene_ctx *c, cJSON *arr, int s, const tl_model *m, int g, const double *colour) {
  tl_geom_type type;
  int body;
  double size[3], pos[3], R[9];
  if (tl_model_geom(m, g, &type, &body, size, pos, R, NULL) != 0) return 0;
  cJSON *o = push_object(arr);
  if (!o || add_num(o, "system", s) || add_num(o, "body", body) || add_str(o, "type", type_name(type)) ||
      add_nums(o, "size", size, 3) || add_pose(o, pos, R) || add_str(o, "link", tl_model_geom_link(m, g)))
    return -1;
  if (colour && add_colour(o, colour)) return -1;
  int nv, nf;
  const double *vert;
  const int *face;
  if (type != TL_GEOM_MESH || tl_model_geom_hull(m, g, &nv, &vert, &nf, &face, NULL) != 0) return 0;
  float *fv = malloc((size_t)(nv > 0 ? nv : 1) * 3 * sizeof(float));
  uint32_t *ft = malloc((size_t)(nf > 0 ? nf : 1) * 3 * sizeof(uint32_t));
  int k = -1;
  if (fv && ft) {
    for (int i = 0; i < 3 * nv; ++i) fv[i] = (float)vert[i];
    for (int i = 0; i < 3 * nf; ++i) ft[i] = (uint32_t)face[i];
    k = push_mesh(c, fv, nv, ft, nf);
  }
  free(fv);
  free(ft);
  if (k < 0 || add_num(o, "mesh", k)) return -1;
  if (!colour) return 0;
  /* drawn as a visual: the hull as the one part of a mesh visual (the viewer draws a visual's parts) */
  cJSON *parts = cJSON_AddArrayToObject(o, "parts"), *p = parts ? push_object(parts) : NULL;
  return !p || add_num(p, "mesh", k) || add_colour(p, colour) ? -1 : 0;
}

/* Is geom g of m declared on link `link`? */
static int on_link(const tl_model *m, int g, const char *link) {
  const char *l = tl_model_geom_link(m, g);
  return l && link && strcmp(l, link) == 0;
}

/* A visual mesh that is missing or cannot be read (`why`): its link is drawn
 * with the link's collision geometry instead, in the visual's colour (grey
 * without one), once per link however many of its visuals are missing; the
 * warning names the file. */
static int stand_in(scene_ctx *c, cJSON *arr, int s, const tl_model *m, const tl_visual_info *v, const char *file,
                    const char *why) {
  for (int i = 0; i < c->nstand_in; ++i)
    if (v->link && strcmp(c->stand_in[i], v->link) == 0) {
      tl_rec_warn(c->rec, "visual mesh '%s' of link '%s' %s: left out (the link is drawn with its collision "
                  "geometry already)", file, v->link, why);
      return 0;
    }
  int n = 0;
  for (int g = 0; g < tl_model_ngeom(m); ++g) n += on_link(m, g, v->link);
  if (n == 0) {
    tl_rec_warn(c->rec, "visual mesh '%s' of link '%s' %s: left out (the link has no collision geometry to draw instead)",
                file, v->link, why);
    return 0;
  }
  tl_rec_warn(c->rec, "visual mesh '%s' of link '%s' %s: left out, the link is drawn with its collision geometry",
              file, v->link, why);
  if (c->nstand_in == c->capstand_in) {
    int cap = c->capstand_in ? 2 * c->capstand_in : 8;
    const char **g = realloc(c->stand_in, (size_t)cap * sizeof(*g));
    if (!g) return -1;
    c->stand_in = g, c->capstand_in = cap;
  }
  c->stand_in[c->nstand_in++] = v->link;
  double grey[4] = {GREY, GREY, GREY, 1};
  int has_rgba = isfinite(v->rgba[0]) && isfinite(v->rgba[3]);
  for (int g = 0; g < tl_model_ngeom(m); ++g)
    if (on_link(m, g, v->link) && add_geom(c, arr, s, m, g, has_rgba ? v->rgba : grey))
      return -1;
  return 0;
}

static int add_visual(scene_ctx *c, cJSON *arr, int s, const tl_model *m, const tl_visual_info *v) {
  int has_rgba = isfinite(v->rgba[0]) && isfinite(v->rgba[3]);
  mesh_entry *e = NULL;
  if (v->type == TL_GEOM_MESH) {
    if (!v->mesh_file || !v->mesh_file[0]) return stand_in(c, arr, s, m, v, v->mesh ? v->mesh : "", "not found");
    e = load_mesh(c, v->mesh_file, v->size, v->link);
    if (!e) return -1;
    if (!e->ok) return stand_in(c, arr, s, m, v, v->mesh_file, e->why ? e->why : "cannot be read");
  }
  cJSON *o = push_object(arr);
  if (!o || add_num(o, "system", s) || add_num(o, "body", v->body) || add_str(o, "type", type_name(v->type)) ||
      add_nums(o, "size", v->size, 3) || add_pose(o, v->pos, v->R) || add_str(o, "link", v->link))
    return -1;
  double grey[4] = {GREY, GREY, GREY, 1};
  if (v->type != TL_GEOM_MESH) return add_colour(o, has_rgba ? v->rgba : grey);
  return add_parts(o, e, has_rgba ? v->rgba : NULL);
}

static int add_system_geometry(scene_ctx *c, cJSON *vis, cJSON *col, int s) {
  const tl_model *m = tl_system_model(tl_world_system(c->rec->world, s));
  int nvis = tl_model_nvisual(m);
  c->nstand_in = 0;
  for (int i = 0; i < nvis; ++i) {
    tl_visual_info v;
    if (tl_model_visual(m, i, &v, NULL) == 0 && add_visual(c, vis, s, m, &v)) return -1;
  }
  double colour[4] = {palette[s % 6][0], palette[s % 6][1], palette[s % 6][2], 1};
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    if (add_geom(c, col, s, m, g, NULL)) return -1;
    /* no <visual> at all (objects of world files): the collision geoms are what is seen */
    if (nvis == 0 && add_geom(c, vis, s, m, g, colour)) return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ systems, frames, joints */

static int add_systems(scene_ctx *c) {
  tl_recorder *r = c->rec;
  cJSON *arr = cJSON_AddArrayToObject(c->root, "systems");
  if (!arr) return -1;
  for (int s = 0; s < r->nsys; ++s) {
    tl_system *sys = tl_world_system(r->world, s);
    const tl_model *m = tl_system_model(sys);
    cJSON *o = push_object(arr);
    if (!o || add_str(o, "name", tl_model_name(m)) || add_num(o, "nbody", tl_model_nbody(m)) ||
        add_num(o, "body0", r->body0[s]) || add_num(o, "mass", tl_model_total_mass(m)) ||
        add_str(o, "base", tl_model_base(m) == TL_BASE_FIXED ? "fixed" : "floating"))
      return -1;
    cJSON *names = cJSON_AddArrayToObject(o, "bodies");
    if (!names) return -1;
    for (int b = 0; b < tl_model_nbody(m); ++b) {
      cJSON *x = cJSON_CreateString(tl_model_body_name(m, b) ? tl_model_body_name(m, b) : "");
      if (!x || !cJSON_AddItemToArray(names, x)) {
        cJSON_Delete(x);
        return -1;
      }
    }
  }
  return 0;
}

/* Loop constraints (talus/constraint.h): each a line the viewer draws between
 * frame 1's origin on body 1 and frame 2's on body 2, posed with the bodies
 * every frame: {name, type, system1, body1, pos1, system2, body2, pos2}
 * (system2 -1: pos2 is a fixed world point). */
static int add_constraints(scene_ctx *c) {
  static const char *const types[] = {"ball", "hinge", "weld", "distance"};
  tl_world *w = c->rec->world;
  cJSON *arr = cJSON_AddArrayToObject(c->root, "constraints");
  if (!arr) return -1;
  for (int k = 0; k < tl_world_nconstraint(w); ++k) {
    tl_constraint_info ci;
    if (tl_world_constraint(w, k, &ci, NULL) != TL_OK) continue;
    if (ci.system1 >= c->rec->nsys || ci.system2 >= c->rec->nsys) continue; /* added after the recorder */
    cJSON *o = push_object(arr);
    if (!o || add_str(o, "name", ci.name) || add_str(o, "type", types[ci.type & 3]) ||
        add_num(o, "system1", ci.system1) || add_num(o, "body1", ci.body1) || add_nums(o, "pos1", ci.pos1, 3) ||
        add_num(o, "system2", ci.system2) || add_num(o, "body2", ci.body2) || add_nums(o, "pos2", ci.pos2, 3))
      return -1;
  }
  return 0;
}

/* Every frame of every system, as a fixed pose in its body's frame (from the current state). */
static int add_frames(scene_ctx *c) {
  tl_recorder *r = c->rec;
  cJSON *arr = cJSON_AddArrayToObject(c->root, "model_frames");
  if (!arr) return -1;
  for (int s = 0; s < r->nsys; ++s) {
    tl_system *sys = tl_world_system(r->world, s);
    const tl_model *m = tl_system_model(sys);
    for (int f = 0; f < tl_model_nframe(m); ++f) {
      int b = tl_model_frame_body(m, f);
      double pb[3], Rb[9], pf[3], Rf[9], d[3], p[3], R[9];
      if (tl_system_body_pose(sys, b, pb, Rb, NULL) || tl_system_frame_pose(sys, f, pf, Rf, NULL)) continue;
      tl_v3_sub(d, pf, pb);
      tl_m3_tmulv(p, Rb, d);
      tl_m3_tmul(R, Rb, Rf);
      cJSON *o = push_object(arr);
      if (!o || add_num(o, "system", s) || add_num(o, "body", b) || add_str(o, "name", tl_model_frame_name(m, f)) ||
          add_pose(o, p, R))
        return -1;
    }
  }
  return 0;
}

/* Axis (body frame) of DOF `dof` carried by body b: the column of the
 * rotational (revolute) or translational (prismatic) Jacobian of the body's
 * origin, turned into the body frame. */
static void dof_axis(tl_system *sys, int b, int dof, int prismatic, double *J, double axis[3]) {
  int nv = tl_system_nv(sys);
  double pos[3], R[9], w[3] = {0, 0, 0};
  axis[0] = axis[1] = axis[2] = 0;
  if (tl_system_body_pose(sys, b, pos, R, NULL)) return;
  if (tl_system_point_jacobian(sys, b, pos, prismatic ? J : NULL, prismatic ? NULL : J, nv, NULL)) return;
  for (int i = 0; i < 3; ++i) w[i] = J[i * nv + dof];
  tl_m3_tmulv(axis, R, w);
}

static int add_joint(cJSON *arr, tl_recorder *r, tl_system *sys, int b, int k, double *J) {
  const tl_model *m = tl_system_model(sys);
  tl_joint_type t = tl_model_joint_type(m, b);
  int dof = tl_model_joint_u_index(m, b) + k;
  int scalar = t == TL_JOINT_REVOLUTE || t == TL_JOINT_PRISMATIC || t == TL_JOINT_UNIVERSAL;
  double axis[3] = {0, 0, 0}, lo = -INFINITY, hi = INFINITY;
  if (scalar) dof_axis(sys, b, dof, t == TL_JOINT_PRISMATIC, J, axis);
  tl_model_dof_limits(m, dof, &lo, &hi, NULL);
  cJSON *o = push_object(arr);
  char name[300];
  snprintf(name, sizeof name, "%s%s", tl_model_joint_name(m, b), t == TL_JOINT_UNIVERSAL ? (k ? ".2" : ".1") : "");
  int qi = scalar ? tl_model_joint_q_index(m, b) + k - r->q0 : -1;
  return !o || add_str(o, "name", name) || add_str(o, "type", tl_joint_type_name(t)) || add_num(o, "body", b) ||
                 add_nums(o, "axis", axis, 3) || add_num(o, "q", qi) || add_num(o, "v", dof - r->v0) ||
                 add_num(o, "lower", lo) || add_num(o, "upper", hi)
             ? -1
             : 0;
}

/* The main system's joints (axes, limits) and the names of the plotted series. */
static int add_joints(scene_ctx *c) {
  tl_recorder *r = c->rec;
  cJSON *joints = cJSON_AddArrayToObject(c->root, "joints");
  cJSON *plots = cJSON_AddObjectToObject(c->root, "plots");
  cJSON *pq = plots ? cJSON_AddArrayToObject(plots, "joint_q") : NULL;
  cJSON *pt = plots ? cJSON_AddArrayToObject(plots, "joint_tau") : NULL;
  cJSON *pb = plots ? cJSON_AddArrayToObject(plots, "body") : NULL;
  if (!joints || !pq || !pt || !pb) return -1;
  if (r->main < 0) return 0;
  tl_system *sys = tl_world_system(r->world, r->main);
  const tl_model *m = tl_system_model(sys);
  double *J = calloc((size_t)3 * (size_t)tl_system_nv(sys) + 1, sizeof(double));
  if (!J) return -1;
  int rc = 0;
  for (int b = 1; b < tl_model_nbody(m) && rc == 0; ++b)
    for (int k = 0; k < tl_joint_nv(tl_model_joint_type(m, b)) && rc == 0; ++k) rc = add_joint(joints, r, sys, b, k, J);
  free(J);
  return rc ? rc : tl_rec_series_names(m, pq, pt, pb);
}

/* ------------------------------------------------------------ statics */

static int add_heightmap(cJSON *o, const tl_world *w, int h) {
  int nx, ny;
  double x0, y0, dx, dy;
  const double *heights;
  if (tl_world_heightmap(w, h, &nx, &ny, &x0, &y0, &dx, &dy, &heights, NULL)) return 0;
  cJSON *hm = cJSON_AddObjectToObject(o, "heightmap");
  float *f = malloc((size_t)nx * (size_t)ny * sizeof(float));
  if (!hm || !f) {
    free(f);
    return -1;
  }
  for (int i = 0; i < nx * ny; ++i) f[i] = (float)heights[i];
  cJSON *b = tl_rec_base64_item(f, (size_t)nx * (size_t)ny * sizeof(float));
  free(f);
  if (!b || !cJSON_AddItemToObject(hm, "heights", b)) {
    cJSON_Delete(b);
    return -1;
  }
  return add_num(hm, "nx", nx) || add_num(hm, "ny", ny) || add_num(hm, "x0", x0) || add_num(hm, "y0", y0) ||
                 add_num(hm, "dx", dx) || add_num(hm, "dy", dy)
             ? -1
             : 0;
}

static int add_statics(scene_ctx *c) {
  tl_recorder *r = c->rec;
  cJSON *arr = cJSON_AddArrayToObject(c->root, "statics");
  if (!arr) return -1;
  for (int i = 0; i < r->nstatic; ++i) {
    tl_geom_type type;
    double size[3], pos[3], R[9];
    const char *material = NULL;
    int hm = -1;
    if (tl_world_static_geom(r->world, i, &type, size, pos, R, &material, &hm, NULL)) continue;
    cJSON *o = push_object(arr);
    if (!o || add_str(o, "type", type_name(type)) || add_nums(o, "size", size, 3) || add_pose(o, pos, R) ||
        add_str(o, "material", material))
      return -1;
    if (type == TL_GEOM_HEIGHTMAP && add_heightmap(o, r->world, hm)) return -1;
  }
  return 0;
}

static int add_layout(scene_ctx *c) {
  const tl_rec_layout *L = &c->rec->L;
  cJSON *o = cJSON_AddObjectToObject(c->root, "layout");
  return !o || add_num(o, "floats", L->floats) || add_num(o, "time", L->time) || add_num(o, "poses", L->poses) ||
                 add_num(o, "com", L->com) || add_num(o, "energy", L->energy) || add_num(o, "base_vel", L->base_vel) ||
                 add_num(o, "joint_q", L->joint_q) || add_num(o, "joint_tau", L->joint_tau) ||
                 add_num(o, "body_fn", L->body_fn) || add_num(o, "njq", L->njq) || add_num(o, "njv", L->njv) ||
                 add_num(o, "nbm", L->nbm) || add_num(o, "contact_floats", TL_REC_CONTACT_FLOATS)
             ? -1
             : 0;
}

static int add_header(scene_ctx *c) {
  tl_recorder *r = c->rec;
  double g[3];
  tl_world_gravity(r->world, g);
  double fps = r->opt.every > 0 ? 1.0 / (r->opt.every * tl_world_timestep(r->world))
               : r->opt.fps > 0 ? r->opt.fps
                                : 1.0 / tl_world_timestep(r->world);
  return add_str(c->root, "format", "talus-recording") || add_num(c->root, "version", 1) ||
                 add_str(c->root, "talus", TALUS_VERSION) || add_str(c->root, "title", r->title) ||
                 add_num(c->root, "timestep", tl_world_timestep(r->world)) || add_num(c->root, "fps", fps) ||
                 add_nums(c->root, "gravity", g, 3) || add_num(c->root, "main", r->main)
             ? -1
             : 0;
}

static int add_warnings(scene_ctx *c) {
  cJSON *arr = cJSON_AddArrayToObject(c->root, "warnings");
  if (!arr) return -1;
  for (int i = 0; i < c->rec->nwarn; ++i)
    if (tl_rec_push_name(arr, c->rec->warn[i], NULL)) return -1;
  return 0;
}

static int build(scene_ctx *c) {
  if (add_header(c) || add_layout(c) || add_systems(c)) return -1;
  c->meshes = cJSON_AddArrayToObject(c->root, "meshes");
  cJSON *vis = cJSON_AddArrayToObject(c->root, "visuals");
  cJSON *col = cJSON_AddArrayToObject(c->root, "collisions");
  if (!c->meshes || !vis || !col) return -1;
  for (int s = 0; s < c->rec->nsys; ++s)
    if (add_system_geometry(c, vis, col, s)) return -1;
  return add_frames(c) || add_joints(c) || tl_rec_add_plot_systems(c->rec, c->root) || add_statics(c) ||
                 add_constraints(c) || add_warnings(c)
             ? -1
             : 0;
}

tl_status tl_rec_build_scene(tl_recorder *rec, tl_error *err) {
  scene_ctx c = {0};
  c.rec = rec;
  c.root = cJSON_CreateObject();
  int rc = c.root ? build(&c) : -1;
  if (rc == 0) {
    rec->scene = tl_rec_json_print(c.root, &rec->scene_len);
    if (!rec->scene) rc = -1;
  }
  cJSON_Delete(c.root);
  for (int i = 0; i < c.ncache; ++i) free(c.cache[i].file), free(c.cache[i].why);
  free(c.cache);
  free(c.stand_in);
  if (rc != 0) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory building the recording's scene");
  return TL_OK;
}
