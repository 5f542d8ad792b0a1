/* Every primitive and convex hull against a plane (the solid half-space
 * below z = 0 of the plane's frame): the candidate points of the shape's
 * support features, each kept when closer than the margin, as in ODE's
 * dCollideBoxPlane / dCollideCylinderPlane and MuJoCo's mjc_PlaneBox:
 *   sphere 1; capsule the two cap spheres; box its corners (at most the 4
 *   deepest); cylinder the deepest rim point of each cap plus, on the cap
 *   facing the plane, the opposite point and the two at +-90 degrees (4 on a
 *   cap, 2 lying; at most the 4 deepest); hull its vertices (the deepest,
 *   then spread, at most 4).
 * The same candidates serve the heightmap against each triangle's plane. */
#include <math.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

typedef struct cand_buf {
  tl_contact_point *p;
  int n, cap;
} cand_buf;

/* Candidate: centre x of radius r (0 for a point) against plane (p0, n). */
static void add_point(cand_buf *b, const double x[3], double r, const double p0[3],
                      const double n[3], double margin) {
  double d[3];
  tl_v3_sub(d, x, p0);
  double sd = tl_v3_dot(d, n), depth = r - sd;
  if (depth <= -margin) return;
  tl_contact_point c;
  double pa[3], pb[3];
  tl_v3_copy(pa, x);
  tl_v3_addscl(pa, n, -r);
  tl_v3_copy(pb, x);
  tl_v3_addscl(pb, n, -sd);
  tl_np_write(&c, pa, pb, n, depth);
  if (b->n < b->cap) {
    b->p[b->n++] = c;
    return;
  }
  int low = 0;
  for (int i = 1; i < b->n; i++)
    if (b->p[i].depth < b->p[low].depth) low = i;
  if (c.depth > b->p[low].depth) b->p[low] = c;
}

static void local_to_world(double w[3], const tl_shape *s, const double l[3]) {
  tl_m3_mulv(w, s->rot, l);
  tl_v3_add(w, w, s->pos);
}

static void cylinder_points(cand_buf *b, const tl_shape *s, const double p0[3], const double n[3],
                            double margin) {
  double ax[3], u[3], v[3];
  tl_np_axis(ax, s->rot, 2);
  double r = s->size[0], hh = 0.5 * s->size[1];
  /* u: the direction of -n across the axis (deepest rim direction) */
  tl_v3_scale(u, n, -1.0);
  tl_v3_addscl(u, ax, tl_v3_dot(ax, n));
  if (tl_v3_normalize(u) < 1e-9) tl_np_axis(u, s->rot, 0);
  tl_v3_cross(v, ax, u);
  double facing = tl_v3_dot(ax, n) > 0 ? -1.0 : 1.0; /* the cap towards the plane */
  for (int cap = 0; cap < 2; cap++) {
    double sgn = cap == 0 ? facing : -facing, c[3], x[3];
    tl_v3_copy(c, s->pos);
    tl_v3_addscl(c, ax, sgn * hh);
    tl_v3_copy(x, c);
    tl_v3_addscl(x, u, r);
    add_point(b, x, 0, p0, n, margin);
    if (cap != 0) continue;
    static const double cs[3][2] = {{-1, 0}, {0, 1}, {0, -1}};
    for (int k = 0; k < 3; k++) {
      tl_v3_copy(x, c);
      tl_v3_addscl(x, u, r * cs[k][0]);
      tl_v3_addscl(x, v, r * cs[k][1]);
      add_point(b, x, 0, p0, n, margin);
    }
  }
}

int tl_np_plane_points(const tl_shape *s, const double p0[3], const double n[3], double margin,
                       tl_contact_point *out, int cap) {
  cand_buf b = {out, 0, cap};
  switch (s->type) {
    case TL_GEOM_SPHERE: add_point(&b, s->pos, s->size[0], p0, n, margin); break;
    case TL_GEOM_CAPSULE:
      for (int e = -1; e <= 1; e += 2) {
        double l[3] = {0, 0, e * 0.5 * s->size[1]}, x[3];
        local_to_world(x, s, l);
        add_point(&b, x, s->size[0], p0, n, margin);
      }
      break;
    case TL_GEOM_BOX:
      for (int i = 0; i < 8; i++) {
        double l[3] = {(i & 1 ? 0.5 : -0.5) * s->size[0], (i & 2 ? 0.5 : -0.5) * s->size[1],
                       (i & 4 ? 0.5 : -0.5) * s->size[2]};
        double x[3];
        local_to_world(x, s, l);
        add_point(&b, x, 0, p0, n, margin);
      }
      break;
    case TL_GEOM_CYLINDER: cylinder_points(&b, s, p0, n, margin); break;
    case TL_GEOM_MESH:
      if (!tl_np_hull_ok(s)) break;
      for (int i = 0; i < s->hull->nvert; i++) {
        double x[3];
        local_to_world(x, s, s->hull->vert + 3 * i);
        add_point(&b, x, 0, p0, n, margin);
      }
      break;
    default: break;
  }
  return b.n;
}

int tl_np_shape_plane(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  double n[3];
  tl_np_axis(n, b->rot, 2);
  tl_contact_point cand[TL_NP_MAX_CAND];
  int k = tl_np_plane_points(a, b->pos, n, margin, cand, TL_NP_MAX_CAND);
  if (a->type == TL_GEOM_BOX || a->type == TL_GEOM_CYLINDER) k = tl_np_keep_deepest(cand, k, 4);
  else k = tl_np_reduce(cand, k, 4);
  for (int i = 0; i < k; i++) out[i] = cand[i];
  return k;
}
