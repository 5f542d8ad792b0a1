/* World files: the static geometry as added, and `clearance` placement of
 * objects and systems (floating or fixed base) on top of it. */
#include "scene/scene_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sc_static *push(sc_parser *p) {
  if (p->nstatic == p->cap_static) {
    int cap = p->cap_static ? 2 * p->cap_static : 8;
    sc_static *s = realloc(p->statics, (size_t)cap * sizeof(*s));
    if (!s) return NULL;
    p->statics = s;
    p->cap_static = cap;
  }
  sc_static *s = &p->statics[p->nstatic++];
  memset(s, 0, sizeof(*s));
  return s;
}

/* Half extents of the geom's world AABB (R row-major, world from geom). */
static void half_extents(tl_geom_type type, const double size[3], const double R[9], double h[3]) {
  for (int i = 0; i < 3; i++) {
    const double *r = R + 3 * i; /* row i: world axis i in geom coordinates */
    switch (type) {
    case TL_GEOM_SPHERE:
      h[i] = size[0];
      break;
    case TL_GEOM_BOX:
      h[i] = 0.5 * (fabs(r[0]) * size[0] + fabs(r[1]) * size[1] + fabs(r[2]) * size[2]);
      break;
    case TL_GEOM_CAPSULE:
      h[i] = 0.5 * size[1] * fabs(r[2]) + size[0];
      break;
    case TL_GEOM_CYLINDER:
      h[i] = 0.5 * size[1] * fabs(r[2]) + size[0] * sqrt(fmax(0.0, 1.0 - r[2] * r[2]));
      break;
    default:
      h[i] = 0;
      break;
    }
  }
}

tl_status sc_static_add_primitive(sc_parser *p, tl_geom_type type, const double size[3],
                                  const double pos[3], const double R[9]) {
  sc_static *s = push(p);
  if (!s) return sc_fail(p, TL_ERR_MEMORY, NULL, "out of memory");
  s->type = type;
  memcpy(s->pos, pos, sizeof(s->pos));
  if (type == TL_GEOM_PLANE) {
    for (int i = 0; i < 3; i++) s->normal[i] = R[3 * i + 2];
    return TL_OK;
  }
  double h[3];
  half_extents(type, size, R, h);
  for (int i = 0; i < 3; i++) {
    s->lo[i] = pos[i] - h[i];
    s->hi[i] = pos[i] + h[i];
  }
  return TL_OK;
}

tl_status sc_static_add_heightmap(sc_parser *p, int nx, int ny, double x0, double y0, double dx,
                                  double dy, const double *heights) {
  double *h = malloc((size_t)nx * (size_t)ny * sizeof(double));
  sc_static *s = h ? push(p) : NULL;
  if (!s) {
    free(h);
    return sc_fail(p, TL_ERR_MEMORY, NULL, "out of memory");
  }
  memcpy(h, heights, (size_t)nx * (size_t)ny * sizeof(double));
  s->type = TL_GEOM_HEIGHTMAP;
  s->nx = nx, s->ny = ny, s->x0 = x0, s->y0 = y0, s->dx = dx, s->dy = dy;
  s->heights = h;
  return TL_OK;
}

void sc_statics_free(sc_parser *p) {
  for (int i = 0; i < p->nstatic; i++) free(p->statics[i].heights);
  free(p->statics);
  p->statics = NULL;
  p->nstatic = p->cap_static = 0;
}

/* Highest heightmap point of the cells that overlap [lo, hi] (x, y); the
 * surface never rises above its cell corners. Returns 0 if none overlaps. */
static int heightmap_top(const sc_static *s, const double lo[2], const double hi[2], double *top) {
  double fx0 = floor((lo[0] - s->x0) / s->dx), fx1 = ceil((hi[0] - s->x0) / s->dx);
  double fy0 = floor((lo[1] - s->y0) / s->dy), fy1 = ceil((hi[1] - s->y0) / s->dy);
  if (fx1 < 0 || fy1 < 0 || fx0 > s->nx - 1 || fy0 > s->ny - 1) return 0;
  int ix0 = (int)fmax(0, fx0), ix1 = (int)fmin(s->nx - 1, fx1);
  int iy0 = (int)fmax(0, fy0), iy1 = (int)fmin(s->ny - 1, fy1);
  double z = -INFINITY;
  for (int iy = iy0; iy <= iy1; iy++)
    for (int ix = ix0; ix <= ix1; ix++) z = fmax(z, s->heights[(size_t)iy * s->nx + ix]);
  *top = z;
  return 1;
}

/* Highest point of a non-vertical plane over the rectangle [lo, hi] (x, y). */
static int plane_top(const sc_static *s, const double lo[2], const double hi[2], double *top) {
  const double *n = s->normal;
  if (!(n[2] > 1e-6)) return 0; /* vertical or facing down: nothing to stand on */
  double z = -INFINITY;
  for (int c = 0; c < 4; c++) {
    double x = (c & 1) ? hi[0] : lo[0], y = (c & 2) ? hi[1] : lo[1];
    z = fmax(z, s->pos[2] - (n[0] * (x - s->pos[0]) + n[1] * (y - s->pos[1])) / n[2]);
  }
  *top = z;
  return 1;
}

tl_status sc_place_clearance(sc_parser *p, const xmlNode *node, tl_system *sys, double clearance) {
  const tl_model *m = tl_system_model(sys);
  int floating = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING;
  if (!floating && tl_model_base(m) != TL_BASE_FIXED)
    return sc_fail(p, TL_ERR_INVALID, node, "clearance needs a floating or a fixed base");
  double lo[3], hi[3];
  if (tl_system_collision_aabb(sys, lo, hi) == 0)
    return sc_fail(p, TL_ERR_INVALID, node, "clearance needs collision geometry");
  double top = -INFINITY, z;
  int found = 0;
  for (int i = 0; i < p->nstatic; i++) {
    const sc_static *s = &p->statics[i];
    if (s->type == TL_GEOM_HEIGHTMAP) {
      if (heightmap_top(s, lo, hi, &z)) top = fmax(top, z), found = 1;
    } else if (s->type == TL_GEOM_PLANE) {
      if (plane_top(s, lo, hi, &z)) top = fmax(top, z), found = 1;
    } else if (s->lo[0] <= hi[0] && s->hi[0] >= lo[0] && s->lo[1] <= hi[1] && s->hi[1] >= lo[1]) {
      top = fmax(top, s->hi[2]), found = 1;
    }
  }
  if (!found)
    return sc_fail(
        p, TL_ERR_INVALID, node,
        "clearance: no ground, heightmap or static geom lies under it (x %g..%g, y %g..%g)", lo[0],
        hi[0], lo[1], hi[1]);
  double dz = top + clearance - lo[2];
  tl_error e;
  memset(&e, 0, sizeof(e));
  tl_status st;
  if (!floating) { /* a fixed base: move the pose at which it is welded */
    double pos[3], R[9];
    st = tl_system_body_pose(sys, 0, pos, R, &e);
    pos[2] += dz;
    if (st == TL_OK) st = tl_system_set_base_pose(sys, pos, R, &e);
    if (st != TL_OK) return sc_fail(p, st, node, "placing it: %s", e.message);
    return TL_OK;
  }
  int nq = tl_system_nq(sys), nv = tl_system_nv(sys);
  double *q = malloc(((size_t)nq + (size_t)nv) * sizeof(double));
  if (!q) return sc_fail(p, TL_ERR_MEMORY, node, "out of memory");
  double *u = q + nq;
  st = tl_system_get_state(sys, q, nq, u, nv, &e);
  if (st == TL_OK) {
    q[2] += dz;
    st = tl_system_set_state(sys, q, nq, u, nv, &e);
  }
  free(q);
  if (st != TL_OK) return sc_fail(p, st, node, "placing it: %s", e.message);
  return TL_OK;
}
