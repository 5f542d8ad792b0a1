/* General convex pairs (cylinder against box, capsule, cylinder and hulls;
 * hulls against boxes, capsules and hulls; heightmap cell prisms), with
 * support functions for each shape:
 *  - separated shapes: GJK distance (Gilbert, Johnson and Keerthi, IEEE J.
 *    Robotics and Automation 4(2), 1988; closest points on the simplex as in
 *    Ericson, Real-Time Collision Detection, 2005, sec. 5.1.5, 5.1.6, 9.5):
 *    exact distance, normal and witness points, reported when closer than the
 *    margin (speculative contacts);
 *  - overlapping shapes: libccd's Minkowski Portal Refinement (G. Snethen,
 *    "XenoCollide", Game Programming Gems 7, 2008; D. Fiser's
 *    ccdMPRPenetration), then a refinement of the normal by casting MPR's
 *    ray along it (see tl_np_mpr); the depth is the overlap of the shapes
 *    along the final normal, the point on the mid-plane.
 *
 * Manifold: one point from the above. When the normal is (within 5.7
 * degrees) the normal of a face of either shape (box face, hull face,
 * cylinder cap), the facing feature of the other shape (face polygon,
 * cylinder cap polygon or side segment, capsule segment) is clipped against
 * the side planes of that reference face (Sutherland-Hodgman, as in Box2D's
 * b2CollidePolygons and Bullet's btPolyhedralContactClipping) and its points
 * within the margin of the reference plane are kept, at most 4 (deepest, then
 * spread). Two nearly parallel segments (cylinder sides, capsules) give the
 * ends of their overlap. Everything is allocation free (libccd's EPA, which
 * allocates, is not used). */
#include <ccd/ccd.h>
#include <math.h>
#include <string.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

/* ---------------- support functions ---------------- */

typedef struct np_obj {
  const tl_shape *s;        /* NULL: the convex hull of prism[6] */
  const double (*prism)[3]; /* world vertices when s is NULL */
  double center[3];         /* an interior point */
} np_obj;

static double sgn(double x) { return x >= 0 ? 1.0 : -1.0; }

/* Support point of shape s (local frame) in local direction d. */
static void support_local(const tl_shape *s, const double d[3], double p[3]) {
  double r = s->size[0], hh = 0.5 * s->size[1];
  switch (s->type) {
    case TL_GEOM_SPHERE: {
      double n = tl_v3_norm(d);
      if (n > 0) tl_v3_scale(p, d, r / n);
      else tl_v3_set(p, 0, 0, r);
      return;
    }
    case TL_GEOM_BOX:
      for (int i = 0; i < 3; i++) p[i] = sgn(d[i]) * 0.5 * s->size[i];
      return;
    case TL_GEOM_CAPSULE: {
      double n = tl_v3_norm(d);
      tl_v3_set(p, 0, 0, sgn(d[2]) * hh);
      if (n > 0) tl_v3_addscl(p, d, r / n);
      return;
    }
    case TL_GEOM_CYLINDER: {
      double rad = sqrt(d[0] * d[0] + d[1] * d[1]);
      if (rad > 0) tl_v3_set(p, r * d[0] / rad, r * d[1] / rad, sgn(d[2]) * hh);
      else tl_v3_set(p, 0, 0, sgn(d[2]) * hh);
      return;
    }
    case TL_GEOM_MESH: {
      const tl_hull *h = s->hull;
      int best = 0;
      double bv = -INFINITY;
      for (int i = 0; i < h->nvert; i++) {
        double v = tl_v3_dot(h->vert + 3 * i, d);
        if (v > bv) { bv = v; best = i; }
      }
      tl_v3_copy(p, h->vert + 3 * best);
      return;
    }
    default: tl_v3_set(p, 0, 0, 0);
  }
}

static void support_shape(const tl_shape *s, const double d[3], double p[3]) {
  double dl[3], pl[3];
  tl_m3_tmulv(dl, s->rot, d);
  support_local(s, dl, pl);
  tl_m3_mulv(p, s->rot, pl);
  tl_v3_add(p, p, s->pos);
}

static void support_obj(const np_obj *o, const double d[3], double p[3]) {
  if (o->s) {
    support_shape(o->s, d, p);
    return;
  }
  int best = 0;
  double bv = -INFINITY;
  for (int i = 0; i < 6; i++) {
    double v = tl_v3_dot(o->prism[i], d);
    if (v > bv) { bv = v; best = i; }
  }
  tl_v3_copy(p, o->prism[best]);
}

double tl_np_support_value(const tl_shape *s, const double d[3]) {
  double p[3];
  support_shape(s, d, p);
  return tl_v3_dot(p, d);
}

static void ccd_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *v) {
  const np_obj *o = obj;
  double d[3] = {dir->v[0], dir->v[1], dir->v[2]}, p[3];
  support_obj(o, d, p);
  for (int i = 0; i < 3; i++) v->v[i] = p[i];
}

static void ccd_center(const void *obj, ccd_vec3_t *c) {
  const np_obj *o = obj;
  for (int i = 0; i < 3; i++) c->v[i] = o->center[i];
}

static void obj_init(np_obj *o, const tl_shape *s, const double prism[6][3]) {
  o->s = s;
  o->prism = prism;
  if (!s) {
    tl_v3_set(o->center, 0, 0, 0);
    for (int i = 0; i < 6; i++) tl_v3_addscl(o->center, prism[i], 1.0 / 6.0);
    return;
  }
  tl_v3_copy(o->center, s->pos);
  if (s->type == TL_GEOM_MESH) { /* the vertices' centroid, inside the hull */
    double c[3] = {0, 0, 0}, w[3];
    for (int i = 0; i < s->hull->nvert; i++)
      tl_v3_addscl(c, s->hull->vert + 3 * i, 1.0 / s->hull->nvert);
    tl_m3_mulv(w, s->rot, c);
    tl_v3_add(o->center, o->center, w);
  }
}

/* Vertex i of a polyhedral object (prism, box, hull), world. */
static void poly_vertex(const np_obj *o, int i, double v[3]) {
  if (!o->s) {
    tl_v3_copy(v, o->prism[i]);
    return;
  }
  if (o->s->type == TL_GEOM_BOX) {
    double l[3] = {(i & 1 ? 0.5 : -0.5) * o->s->size[0], (i & 2 ? 0.5 : -0.5) * o->s->size[1],
                   (i & 4 ? 0.5 : -0.5) * o->s->size[2]};
    tl_m3_mulv(v, o->s->rot, l);
  } else {
    tl_m3_mulv(v, o->s->rot, o->s->hull->vert + 3 * i);
  }
  tl_v3_add(v, v, o->s->pos);
}

/* The points of o extreme along d (within a tolerance), at most 3 written:
 * returns 1 (a vertex), 2 (an edge or a line) or 3 (a face or more). */
static int support_set(const np_obj *o, const double d[3], double pts[3][3]) {
  const double tol = 1e-9;
  if (!o->s || o->s->type == TL_GEOM_BOX || o->s->type == TL_GEOM_MESH) {
    int nv = !o->s ? 6 : (o->s->type == TL_GEOM_BOX ? 8 : o->s->hull->nvert), n = 0;
    double best = -INFINITY, v[3];
    for (int i = 0; i < nv; i++) {
      poly_vertex(o, i, v);
      best = fmax(best, tl_v3_dot(v, d));
    }
    for (int i = 0; i < nv && n < 3; i++) {
      poly_vertex(o, i, v);
      if (tl_v3_dot(v, d) >= best - tol) tl_v3_copy(pts[n++], v);
    }
    return n;
  }
  const tl_shape *s = o->s;
  if (s->type == TL_GEOM_CAPSULE || s->type == TL_GEOM_CYLINDER) {
    double ax[3], dl[3];
    tl_np_axis(ax, s->rot, 2);
    tl_m3_tmulv(dl, s->rot, d);
    double dn = tl_v3_norm(d), hh = 0.5 * s->size[1];
    if (s->type == TL_GEOM_CYLINDER && sqrt(dl[0] * dl[0] + dl[1] * dl[1]) <= tol * dn) return 3;
    if (fabs(tl_v3_dot(ax, d)) * 2 * hh <= tol * dn) { /* the side line */
      double l0[3], l1[3];
      support_local(s, (double[3]){dl[0], dl[1], -1}, l0);
      support_local(s, (double[3]){dl[0], dl[1], 1}, l1);
      if (s->type == TL_GEOM_CAPSULE) {
        double e = s->size[0] / (dn > 0 ? dn : 1);
        tl_v3_set(l0, dl[0] * e, dl[1] * e, -hh);
        tl_v3_set(l1, dl[0] * e, dl[1] * e, hh);
      }
      tl_m3_mulv(pts[0], s->rot, l0);
      tl_v3_add(pts[0], pts[0], s->pos);
      tl_m3_mulv(pts[1], s->rot, l1);
      tl_v3_add(pts[1], pts[1], s->pos);
      return hh > 0 ? 2 : 1;
    }
  }
  support_shape(s, d, pts[0]);
  return 1;
}

/* Lateral position of a single contact from the support features along n:
 * a vertex of either shape, else the closest points of two edges; otherwise
 * (faces) the MPR point stays. */
static void support_point(const np_obj *oa, const np_obj *ob, const double n[3], double pos[3]) {
  double m[3], pa[3][3], pb[3][3];
  tl_v3_scale(m, n, -1.0);
  int na = support_set(oa, m, pa), nb = support_set(ob, n, pb);
  if (nb == 1) tl_v3_copy(pos, pb[0]);
  else if (na == 1) tl_v3_copy(pos, pa[0]);
  else if (na == 2 && nb == 2) {
    double s, t, c1[3], c2[3], da[3], db[3], cr[3];
    tl_v3_sub(da, pa[1], pa[0]);
    tl_v3_sub(db, pb[1], pb[0]);
    tl_v3_cross(cr, da, db);
    double la2 = tl_v3_dot(da, da);
    if (tl_v3_dot(cr, cr) <= 1e-12 * la2 * tl_v3_dot(db, db) && la2 > 0) {
      /* parallel edges: the middle of their overlap */
      double w0[3], w1[3];
      tl_v3_sub(w0, pb[0], pa[0]);
      tl_v3_sub(w1, pb[1], pa[0]);
      double t0 = tl_v3_dot(w0, da) / la2, t1 = tl_v3_dot(w1, da) / la2;
      double lo = fmax(0.0, fmin(t0, t1)), hi = fmin(1.0, fmax(t0, t1));
      tl_v3_copy(c1, pa[0]);
      tl_v3_addscl(c1, da, 0.5 * (lo + hi));
      tl_v3_copy(pos, c1);
      return;
    }
    tl_np_closest_segments(pa[0], pa[1], pb[0], pb[1], &s, &t, c1, c2);
    for (int i = 0; i < 3; i++) pos[i] = 0.5 * (c1[i] + c2[i]);
  }
}

/* Overlap of the raw shapes along n (from b into a): max over b of x.n minus
 * min over a of x.n; ha, hb: those extremes. */
static double overlap(const np_obj *oa, const np_obj *ob, const double n[3], double *ha,
                      double *hb) {
  double m[3], pa[3], pb[3];
  tl_v3_scale(m, n, -1.0);
  support_obj(oa, m, pa);
  support_obj(ob, n, pb);
  *ha = tl_v3_dot(pa, n);
  *hb = tl_v3_dot(pb, n);
  return *hb - *ha;
}

/* One MPR run; n: normal from b into a, p: libccd's point, dep: libccd's
 * depth. */
static int mpr_run(const np_obj *oa, const np_obj *ob, double n[3], double p[3], double *dep) {
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = ccd_support;
  ccd.support2 = ccd_support;
  ccd.center1 = ccd_center;
  ccd.center2 = ccd_center;
  ccd.max_iterations = 100;
  ccd.mpr_tolerance = 1e-10;
  ccd_real_t d;
  ccd_vec3_t dir, pos;
  if (ccdMPRPenetration(oa, ob, &ccd, &d, &dir, &pos) != 0) return 0;
  *dep = d;
  /* libccd: moving b by dep along dir separates; the normal from b into a is -dir */
  for (int i = 0; i < 3; i++) {
    n[i] = -dir.v[i];
    p[i] = pos.v[i];
  }
  return tl_v3_normalize(n) > 0.5; /* zero direction: touching only */
}

/* Support point of the Minkowski difference A - B. */
static void support_diff(const np_obj *oa, const np_obj *ob, const double d[3], double v[3]) {
  double m[3], pa[3], pb[3];
  tl_v3_scale(m, d, -1.0);
  support_obj(oa, d, pa);
  support_obj(ob, m, pb);
  tl_v3_sub(v, pa, pb);
}

static void unit_cross(double r[3], const double a[3], const double b[3]) {
  tl_v3_cross(r, a, b);
  tl_v3_normalize(r);
}

/* Outward normal u of A - B where the ray from the interior point v0 through
 * the origin leaves it: MPR's portal discovery and refinement (Snethen 2008,
 * as in libccd's mpr.c), returning the final portal's face normal, which
 * libccd does not expose. Returns 0 when the portal cannot be built. */
static int portal_normal(const np_obj *oa, const np_obj *ob, const double v0[3], double u[3]) {
  double v1[3], v2[3], v3[3], v4[3], d[3], t[3], e1[3], e2[3];
  tl_v3_scale(d, v0, -1.0);
  tl_v3_normalize(d);
  support_diff(oa, ob, d, v1);
  if (tl_v3_dot(v1, d) <= 0) return 0;
  tl_v3_cross(d, v0, v1);
  if (tl_v3_dot(d, d) < 1e-30) { /* the ray passes through v1 */
    tl_v3_scale(u, v0, -1.0);
    return tl_v3_normalize(u) > 0;
  }
  tl_v3_normalize(d);
  support_diff(oa, ob, d, v2);
  if (tl_v3_dot(v2, d) <= 0) return 0;
  tl_v3_sub(e1, v1, v0);
  tl_v3_sub(e2, v2, v0);
  unit_cross(d, e1, e2);
  if (tl_v3_dot(d, v0) > 0) {
    double x[3];
    tl_v3_copy(x, v1);
    tl_v3_copy(v1, v2);
    tl_v3_copy(v2, x);
    tl_v3_scale(d, d, -1.0);
  }
  for (int it = 0;; it++) { /* a portal (v1, v2, v3) the ray crosses */
    if (it > 100) return 0;
    support_diff(oa, ob, d, v3);
    if (tl_v3_dot(v3, d) <= 0) return 0;
    tl_v3_cross(t, v1, v3);
    if (tl_v3_dot(t, v0) < -1e-300) {
      tl_v3_copy(v2, v3);
    } else {
      tl_v3_cross(t, v3, v2);
      if (!(tl_v3_dot(t, v0) < -1e-300)) break;
      tl_v3_copy(v1, v3);
    }
    tl_v3_sub(e1, v1, v0);
    tl_v3_sub(e2, v2, v0);
    unit_cross(d, e1, e2);
  }
  for (int it = 0; it < 100; it++) { /* refine towards the boundary */
    tl_v3_sub(e1, v2, v1);
    tl_v3_sub(e2, v3, v1);
    unit_cross(d, e1, e2);
    support_diff(oa, ob, d, v4);
    if (tl_v3_dot(v4, d) - tl_v3_dot(v1, d) <= 1e-13) break;
    tl_v3_cross(t, v4, v0);
    if (tl_v3_dot(v1, t) > 0) {
      if (tl_v3_dot(v2, t) > 0) tl_v3_copy(v1, v4);
      else tl_v3_copy(v3, v4);
    } else {
      if (tl_v3_dot(v3, t) > 0) tl_v3_copy(v2, v4);
      else tl_v3_copy(v1, v4);
    }
  }
  tl_v3_copy(u, d);
  return isfinite(u[0]) && isfinite(u[1]) && isfinite(u[2]);
}

/* ---------------- GJK distance ---------------- */

typedef struct gjk_vert {
  double w[3], a[3], b[3]; /* w = a - b: support points of A and B */
} gjk_vert;

static void gjk_support(const np_obj *oa, const np_obj *ob, const double d[3], gjk_vert *v) {
  double m[3];
  tl_v3_scale(m, d, -1.0);
  support_obj(oa, d, v->a);
  support_obj(ob, m, v->b);
  tl_v3_sub(v->w, v->a, v->b);
}

/* Closest point to the origin of segment (s[i], s[j]): weights in lam[i], lam[j]. */
static double closest_seg(const gjk_vert *s, int i, int j, double lam[4]) {
  double ab[3];
  tl_v3_sub(ab, s[j].w, s[i].w);
  double l2 = tl_v3_dot(ab, ab), t = l2 > 1e-300 ? -tl_v3_dot(s[i].w, ab) / l2 : 0;
  t = t < 0 ? 0 : (t > 1 ? 1 : t);
  for (int k = 0; k < 4; k++) lam[k] = 0;
  lam[i] = 1 - t;
  lam[j] = t;
  double p[3];
  tl_v3_copy(p, s[i].w);
  tl_v3_addscl(p, ab, t);
  return tl_v3_dot(p, p);
}

/* Closest point to the origin of triangle (s[i], s[j], s[k]) (Ericson 5.1.5). */
static double closest_tri(const gjk_vert *s, int i, int j, int k, double lam[4]) {
  const double *a = s[i].w, *b = s[j].w, *c = s[k].w;
  double ab[3], ac[3];
  tl_v3_sub(ab, b, a);
  tl_v3_sub(ac, c, a);
  double d1 = -tl_v3_dot(ab, a), d2 = -tl_v3_dot(ac, a);
  double d3 = -tl_v3_dot(ab, b), d4 = -tl_v3_dot(ac, b);
  double d5 = -tl_v3_dot(ab, c), d6 = -tl_v3_dot(ac, c);
  double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
  int face = va > 0 && vb > 0 && vc > 0 && va + vb + vc > 1e-300;
  if (!face) { /* the nearest of the three edges */
    double l1[4], l2[4], l3[4];
    double e1 = closest_seg(s, i, j, l1), e2 = closest_seg(s, i, k, l2);
    double e3 = closest_seg(s, j, k, l3);
    const double *best = l1;
    double e = e1;
    if (e2 < e) { e = e2; best = l2; }
    if (e3 < e) { e = e3; best = l3; }
    memcpy(lam, best, 4 * sizeof(double));
    return e;
  }
  double den = 1.0 / (va + vb + vc);
  for (int q = 0; q < 4; q++) lam[q] = 0;
  lam[j] = vb * den;
  lam[k] = vc * den;
  lam[i] = 1 - lam[j] - lam[k];
  double p[3];
  for (int q = 0; q < 3; q++) p[q] = lam[i] * a[q] + lam[j] * b[q] + lam[k] * c[q];
  return tl_v3_dot(p, p);
}

/* Is the origin strictly on the side of face (a, b, c) away from d? */
static int origin_outside(const double a[3], const double b[3], const double c[3],
                          const double d[3]) {
  double ab[3], ac[3], n[3], ad[3];
  tl_v3_sub(ab, b, a);
  tl_v3_sub(ac, c, a);
  tl_v3_cross(n, ab, ac);
  tl_v3_sub(ad, d, a);
  double sd = tl_v3_dot(ad, n), so = -tl_v3_dot(a, n);
  return !(sd * so > 0); /* degenerate faces count as outside */
}

/* Reduce the simplex s (n vertices) to the sub-simplex holding its closest
 * point to the origin, v. Returns the new count, 0 when the origin is inside
 * the tetrahedron. */
static int simplex_reduce(gjk_vert *s, int n, double v[3]) {
  double lam[4] = {1, 0, 0, 0};
  if (n == 2) closest_seg(s, 0, 1, lam);
  else if (n == 3) closest_tri(s, 0, 1, 2, lam);
  else if (n == 4) {
    static const int f[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
    int inside = 1;
    double best = INFINITY;
    for (int q = 0; q < 4; q++) {
      if (!origin_outside(s[f[q][0]].w, s[f[q][1]].w, s[f[q][2]].w, s[f[q][3]].w)) continue;
      inside = 0;
      double l[4], e = closest_tri(s, f[q][0], f[q][1], f[q][2], l);
      if (e < best) { best = e; memcpy(lam, l, sizeof(l)); }
    }
    if (inside) return 0;
  }
  int m = 0;
  tl_v3_set(v, 0, 0, 0);
  for (int q = 0; q < n; q++) {
    if (lam[q] <= 0) continue;
    tl_v3_addscl(v, s[q].w, lam[q]);
    s[m] = s[q];
    lam[m] = lam[q];
    m++;
  }
  return m;
}

/* Distance between oa and ob by GJK. Returns 1 with dist > 0, the witness
 * points pa (on a), pb (on b) (dist only, a lower bound, once it proves the
 * distance at least far); 0 when they overlap or touch (dir: the last
 * direction from b to a, zero if none). */
static int gjk_distance(const np_obj *oa, const np_obj *ob, double far, double *dist,
                        double pa[3], double pb[3], double dir[3]) {
  gjk_vert s[4];
  double v[3], d[3];
  tl_v3_set(dir, 0, 0, 0);
  tl_v3_sub(d, ob->center, oa->center);
  if (tl_v3_dot(d, d) < 1e-300) tl_v3_set(d, 1, 0, 0);
  gjk_support(oa, ob, d, &s[0]);
  int n = 1;
  tl_v3_copy(v, s[0].w);
  for (int it = 0; it < 64; it++) {
    double vv = tl_v3_dot(v, v);
    if (vv < 1e-24) return 0;
    tl_v3_copy(dir, v);
    tl_v3_normalize(dir);
    tl_v3_scale(d, v, -1.0);
    gjk_vert w;
    gjk_support(oa, ob, d, &w);
    double vw = tl_v3_dot(v, w.w);
    if (vw > 0 && vw * vw >= far * far * vv) { /* a separating plane at least far away */
      *dist = vw / sqrt(vv);
      return 1;
    }
    if (vv - vw <= 1e-12 * vv) break; /* no progress: v is the closest point */
    int dup = 0;
    for (int q = 0; q < n; q++) {
      double e[3];
      tl_v3_sub(e, w.w, s[q].w);
      if (tl_v3_dot(e, e) < 1e-28) dup = 1;
    }
    if (dup) break;
    s[n++] = w;
    n = simplex_reduce(s, n, v);
    if (n == 0) return 0;
  }
  /* witness points from the final simplex's barycentric weights */
  double lam[4] = {1, 0, 0, 0};
  if (n == 2) closest_seg(s, 0, 1, lam);
  else if (n == 3) closest_tri(s, 0, 1, 2, lam);
  tl_v3_set(pa, 0, 0, 0);
  tl_v3_set(pb, 0, 0, 0);
  for (int q = 0; q < n; q++) {
    tl_v3_addscl(pa, s[q].a, lam[q]);
    tl_v3_addscl(pb, s[q].b, lam[q]);
  }
  double w[3];
  tl_v3_sub(w, pa, pb);
  *dist = tl_v3_norm(w);
  if (!(*dist > 1e-12)) return 0;
  tl_v3_scale(dir, w, 1.0 / *dist);
  return 1;
}

/* ---------------- penetration ---------------- */

int tl_np_mpr(const tl_shape *a, const tl_shape *b, const double prism[6][3], double margin,
              double n[3], double *depth, double pos[3]) {
  np_obj oa, ob;
  obj_init(&oa, a, NULL);
  obj_init(&ob, b, prism);
  double pa[3], pb[3], dist, gdir[3], p[3], ha, hb, dep;
  if (gjk_distance(&oa, &ob, margin, &dist, pa, pb, gdir)) { /* separated: exact */
    if (dist >= margin) return 0;
    tl_v3_copy(n, gdir);
    *depth = -dist;
    for (int i = 0; i < 3; i++) pos[i] = 0.5 * (pa[i] + pb[i]);
    return 1;
  }
  if (!mpr_run(&oa, &ob, n, p, &dep)) { /* touching: depth 0 */
    if (margin <= 0 || tl_v3_norm(gdir) < 0.5) return 0;
    tl_v3_copy(n, gdir);
    *depth = 0;
    for (int i = 0; i < 3; i++) pos[i] = 0.5 * (oa.center[i] + ob.center[i]);
    support_point(&oa, &ob, n, pos);
    overlap(&oa, &ob, n, &ha, &hb);
    tl_v3_addscl(pos, n, 0.5 * (ha + hb) - tl_v3_dot(pos, n));
    return 1;
  }
  double best = overlap(&oa, &ob, n, &ha, &hb);
  /* libccd's normal points at the closest point of MPR's final portal, which
   * on curved parts of A - B is nearly the ray from the centres, not the
   * shortest way out. Refine: cast the ray from just behind the origin along
   * the current normal (interior point eps n) and take the surface normal
   * where it leaves; a fixed-point iteration towards the direction of least
   * overlap (exact on flat parts, contracting by depth / curvature radius on
   * curved ones). The overlap along any direction bounds the penetration from
   * above, so the least overlap found wins. When the portal's closest point
   * is already the support point along n (a flat part), nothing is refined. */
  int done = best - dep <= 1e-12 * (1.0 + fabs(dep));
  for (int it = 0; it < 32 && !done; it++) {
    double eps = 1e-4 * best, v0[3], u[3], n2[3], ha2, hb2, dn[3];
    if (!(eps > 1e-13)) break;
    tl_v3_scale(v0, n, eps);
    if (!portal_normal(&oa, &ob, v0, u)) break;
    tl_v3_scale(n2, u, -1.0);
    double ov = overlap(&oa, &ob, n2, &ha2, &hb2);
    if (!(ov < best)) break;
    tl_v3_sub(dn, n2, n);
    best = ov;
    ha = ha2;
    hb = hb2;
    tl_v3_copy(n, n2);
    if (tl_v3_norm(dn) < 1e-12) break;
  }
  *depth = best;
  if (*depth <= -margin) return 0;
  /* lateral position from the support features, then onto the mid-plane */
  tl_v3_copy(pos, p);
  support_point(&oa, &ob, n, pos);
  tl_v3_addscl(pos, n, 0.5 * (ha + hb) - tl_v3_dot(pos, n));
  return 1;
}

/* ---------------- facing features ---------------- */

#define FACE_MAX 32   /* vertices of a face polygon (larger hull faces are subsampled) */
#define FACE_SCAN 256 /* coplanar hull vertices examined */
#define CLIP_MAX 72

typedef struct feature {
  int n;                 /* 1 point, 2 segment, >= 3 polygon (counter-clockwise about normal) */
  double v[FACE_MAX][3]; /* world */
  double normal[3];      /* polygon: outward unit normal */
  double radius;         /* capsule and sphere: the radius around the points */
} feature;

static void to_world(double w[3], const tl_shape *s, const double l[3]) {
  tl_m3_mulv(w, s->rot, l);
  tl_v3_add(w, w, s->pos);
}

static void box_face(const tl_shape *s, const double dl[3], feature *f) {
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(dl[i]) > fabs(dl[k])) k = i;
  int i = (k + 1) % 3, j = (k + 2) % 3;
  double sk = sgn(dl[k]), h[3] = {0.5 * s->size[0], 0.5 * s->size[1], 0.5 * s->size[2]};
  static const double sq[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
  for (int v = 0; v < 4; v++) {
    int q = sk > 0 ? v : 3 - v; /* counter-clockwise about the outward normal */
    double l[3];
    l[k] = sk * h[k];
    l[i] = sq[q][0] * h[i];
    l[j] = sq[q][1] * h[j];
    to_world(f->v[v], s, l);
  }
  double nl[3] = {0, 0, 0};
  nl[k] = sk;
  tl_m3_mulv(f->normal, s->rot, nl);
  f->n = 4;
}

static int face_index_ok(const tl_hull *h, int f) {
  for (int k = 0; k < 3; k++)
    if (h->face[3 * f + k] < 0 || h->face[3 * f + k] >= h->nvert) return 0;
  return 1;
}

/* The hull face (all vertices on the plane of the triangle most aligned with
 * dl), ordered counter-clockwise about its outward normal. */
static void hull_face(const tl_shape *s, const double dl[3], feature *f) {
  const tl_hull *h = s->hull;
  int best = -1;
  double bv = -INFINITY, nf[3] = {0, 0, 1};
  for (int t = 0; t < h->nface; t++) {
    if (!face_index_ok(h, t)) continue;
    const double *v0 = h->vert + 3 * h->face[3 * t], *v1 = h->vert + 3 * h->face[3 * t + 1];
    const double *v2 = h->vert + 3 * h->face[3 * t + 2];
    double e1[3], e2[3], c[3];
    tl_v3_sub(e1, v1, v0);
    tl_v3_sub(e2, v2, v0);
    tl_v3_cross(c, e1, e2);
    if (tl_v3_normalize(c) < 1e-300) continue;
    double v = tl_v3_dot(c, dl);
    if (v > bv) { bv = v; best = t; tl_v3_copy(nf, c); }
  }
  if (best < 0) { /* no valid face: the support vertex */
    double p[3];
    support_local(s, dl, p);
    to_world(f->v[0], s, p);
    f->n = 1;
    return;
  }
  double ext = 0;
  for (int i = 0; i < 3 * h->nvert; i++) ext = fmax(ext, fabs(h->vert[i]));
  double eps = 1e-6 * (ext > 0 ? ext : 1.0);
  double off = tl_v3_dot(nf, h->vert + 3 * h->face[3 * best]);
  double pts[FACE_SCAN][3], ang[FACE_SCAN], c[3] = {0, 0, 0};
  int np = 0;
  for (int i = 0; i < h->nvert && np < FACE_SCAN; i++)
    if (fabs(tl_v3_dot(nf, h->vert + 3 * i) - off) <= eps) tl_v3_copy(pts[np++], h->vert + 3 * i);
  if (np < 3) {
    np = 3;
    for (int k = 0; k < 3; k++) tl_v3_copy(pts[k], h->vert + 3 * h->face[3 * best + k]);
  }
  for (int i = 0; i < np; i++) tl_v3_addscl(c, pts[i], 1.0 / np);
  double u[3], w[3];
  tl_v3_sub(u, pts[0], c);
  tl_v3_addscl(u, nf, -tl_v3_dot(u, nf));
  if (tl_v3_normalize(u) < 1e-300) tl_v3_set(u, 1, 0, 0);
  tl_v3_cross(w, nf, u);
  for (int i = 0; i < np; i++) {
    double d[3];
    tl_v3_sub(d, pts[i], c);
    ang[i] = atan2(tl_v3_dot(d, w), tl_v3_dot(d, u));
  }
  for (int i = 1; i < np; i++) { /* insertion sort by angle */
    double a = ang[i], p[3];
    tl_v3_copy(p, pts[i]);
    int j = i;
    while (j > 0 && ang[j - 1] > a) {
      ang[j] = ang[j - 1];
      tl_v3_copy(pts[j], pts[j - 1]);
      j--;
    }
    ang[j] = a;
    tl_v3_copy(pts[j], p);
  }
  int m = 0; /* drop duplicates */
  for (int i = 0; i < np; i++) {
    double d[3];
    if (m > 0) {
      tl_v3_sub(d, pts[i], pts[m - 1]);
      if (tl_v3_norm(d) <= eps) continue;
    }
    tl_v3_copy(pts[m++], pts[i]);
  }
  np = m;
  int nout = np < FACE_MAX ? np : FACE_MAX;
  for (int k = 0; k < nout; k++) to_world(f->v[k], s, pts[(int)((long)k * np / nout)]);
  f->n = nout;
  tl_m3_mulv(f->normal, s->rot, nf);
}

static void cylinder_feature(const tl_shape *s, const double dl[3], feature *f) {
  double r = s->size[0], hh = 0.5 * s->size[1];
  double dn = tl_v3_norm(dl), rad = sqrt(dl[0] * dl[0] + dl[1] * dl[1]);
  double u[2] = {1, 0};
  if (rad > 1e-12 * (dn > 0 ? dn : 1)) { u[0] = dl[0] / rad; u[1] = dl[1] / rad; }
  double sz = sgn(dl[2]);
  if (fabs(dl[2]) >= 0.70710678118654752 * dn) { /* the cap: octagon from the deepest rim point */
    for (int k = 0; k < 8; k++) {
      double th = sz * k * TL_PI / 4, c = cos(th), sn = sin(th);
      double l[3] = {r * (c * u[0] - sn * u[1]), r * (sn * u[0] + c * u[1]), sz * hh};
      to_world(f->v[k], s, l);
    }
    double nl[3] = {0, 0, sz};
    tl_m3_mulv(f->normal, s->rot, nl);
    f->n = 8;
  } else { /* the side line */
    double l0[3] = {r * u[0], r * u[1], -hh}, l1[3] = {r * u[0], r * u[1], hh};
    to_world(f->v[0], s, l0);
    to_world(f->v[1], s, l1);
    f->n = hh > 0 ? 2 : 1;
  }
}

/* Facing feature of shape s towards world direction d. */
static void feature_of(const tl_shape *s, const double d[3], feature *f) {
  double dl[3];
  tl_m3_tmulv(dl, s->rot, d);
  f->radius = 0;
  tl_v3_set(f->normal, 0, 0, 0);
  switch (s->type) {
    case TL_GEOM_BOX: box_face(s, dl, f); return;
    case TL_GEOM_MESH: hull_face(s, dl, f); return;
    case TL_GEOM_CYLINDER: cylinder_feature(s, dl, f); return;
    case TL_GEOM_CAPSULE: {
      double hh = 0.5 * s->size[1], l0[3] = {0, 0, -hh}, l1[3] = {0, 0, hh};
      to_world(f->v[0], s, l0);
      to_world(f->v[1], s, l1);
      f->n = hh > 0 ? 2 : 1;
      f->radius = s->size[0];
      return;
    }
    default:
      tl_v3_copy(f->v[0], s->pos);
      f->n = 1;
      f->radius = s->type == TL_GEOM_SPHERE ? s->size[0] : 0;
  }
}

/* ---------------- clipping ---------------- */

/* Side planes of the reference polygon: outward normals sn[i], offsets so[i]. */
static void side_planes(const feature *R, double sn[][3], double so[]) {
  for (int i = 0; i < R->n; i++) {
    double e[3];
    tl_v3_sub(e, R->v[(i + 1) % R->n], R->v[i]);
    tl_v3_cross(sn[i], e, R->normal);
    tl_v3_normalize(sn[i]);
    so[i] = tl_v3_dot(sn[i], R->v[i]);
  }
}

static int clip_polygon(const feature *I, const double sn[][3], const double so[], int nplanes,
                        double out[][3]) {
  double buf[CLIP_MAX][3];
  int n = I->n;
  for (int i = 0; i < n; i++) tl_v3_copy(out[i], I->v[i]);
  for (int p = 0; p < nplanes && n > 0; p++) {
    int m = 0;
    for (int i = 0; i < n && m < CLIP_MAX - 1; i++) {
      const double *x = out[i], *y = out[(i + 1) % n];
      double dx = tl_v3_dot(sn[p], x) - so[p], dy = tl_v3_dot(sn[p], y) - so[p];
      if (dx <= 0) tl_v3_copy(buf[m++], x);
      if ((dx <= 0) != (dy <= 0)) {
        double t = dx / (dx - dy);
        for (int c = 0; c < 3; c++) buf[m][c] = x[c] + t * (y[c] - x[c]);
        m++;
      }
    }
    for (int i = 0; i < m; i++) tl_v3_copy(out[i], buf[i]);
    n = m;
  }
  return n;
}

static int clip_segment(const feature *I, const double sn[][3], const double so[], int nplanes,
                        double out[][3]) {
  double t0 = 0, t1 = 1;
  const double *x = I->v[0], *y = I->v[1];
  for (int p = 0; p < nplanes; p++) {
    double dx = tl_v3_dot(sn[p], x) - so[p], dy = tl_v3_dot(sn[p], y) - so[p];
    if (dx > 0 && dy > 0) return 0;
    if (dx > 0) t0 = fmax(t0, dx / (dx - dy));
    else if (dy > 0) t1 = fmin(t1, dx / (dx - dy));
  }
  if (t0 > t1) return 0;
  int n = 0;
  for (int e = 0; e < 2; e++) {
    double t = e ? t1 : t0;
    if (e && (t1 - t0) * 1e9 < 1.0) break;
    for (int c = 0; c < 3; c++) out[n][c] = x[c] + t * (y[c] - x[c]);
    n++;
  }
  return n;
}

/* Two segment features (with radii): the ends of their overlap when nearly
 * parallel. */
static int parallel_segments(const feature *fa, const feature *fb, const double n[3],
                             double margin, tl_contact_point *out) {
  double da[3], db[3], cr[3];
  tl_v3_sub(da, fa->v[1], fa->v[0]);
  tl_v3_sub(db, fb->v[1], fb->v[0]);
  tl_v3_cross(cr, da, db);
  double la2 = tl_v3_dot(da, da), lb2 = tl_v3_dot(db, db);
  if (tl_v3_dot(cr, cr) > 4e-4 * la2 * lb2) return 0;
  double w0[3], w1[3];
  tl_v3_sub(w0, fb->v[0], fa->v[0]);
  tl_v3_sub(w1, fb->v[1], fa->v[0]);
  double t0 = tl_v3_dot(w0, da) / la2, t1 = tl_v3_dot(w1, da) / la2;
  double lo = fmax(0.0, fmin(t0, t1)), hi = fmin(1.0, fmax(t0, t1));
  if (hi < lo) return 0;
  int cnt = 0;
  for (int e = 0; e < 2; e++) {
    if (e && (hi - lo) * sqrt(la2) < 1e-9) break;
    double x[3], q[3], r[3];
    tl_v3_copy(x, fa->v[0]);
    tl_v3_addscl(x, da, e ? hi : lo);
    tl_v3_sub(r, x, fb->v[0]);
    double t = lb2 > 0 ? tl_v3_dot(r, db) / lb2 : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    tl_v3_copy(q, fb->v[0]);
    tl_v3_addscl(q, db, t);
    tl_v3_sub(r, x, q);
    double depth = fa->radius + fb->radius - tl_v3_dot(r, n);
    if (depth <= -margin) continue;
    double pa[3], pb[3];
    tl_v3_copy(pa, x);
    tl_v3_addscl(pa, n, -fa->radius);
    tl_v3_copy(pb, q);
    tl_v3_addscl(pb, n, fb->radius);
    tl_np_write(&out[cnt++], pa, pb, n, depth);
  }
  return cnt;
}

/* Contact manifold for the normal n (from b into a); 0 when the normal is
 * not a face normal (edge or curved contact: the MPR point is used). */
static int manifold(const tl_shape *a, const tl_shape *b, const double n[3], double margin,
                    tl_contact_point *out) {
  feature la, lb, *FA = &la, *FB = &lb;
  double mn[3];
  tl_v3_scale(mn, n, -1.0);
  feature_of(a, mn, FA);
  feature_of(b, n, FB);
  if (FA->n == 2 && FB->n == 2) return parallel_segments(FA, FB, n, margin, out);
  double al_a = FA->n >= 3 ? tl_v3_dot(FA->normal, mn) : -2.0;
  double al_b = FB->n >= 3 ? tl_v3_dot(FB->normal, n) : -2.0;
  if (fmax(al_a, al_b) < 0.995) return 0;
  int ref_b = al_b >= al_a - 1e-9;
  const feature *R = ref_b ? FB : FA, *I = ref_b ? FA : FB;
  double sn[FACE_MAX][3], so[FACE_MAX], pts[CLIP_MAX][3];
  side_planes(R, sn, so);
  int np;
  if (I->n >= 3) np = clip_polygon(I, sn, so, R->n, pts);
  else if (I->n == 2) np = clip_segment(I, sn, so, R->n, pts);
  else {
    np = 1;
    tl_v3_copy(pts[0], I->v[0]);
    for (int p = 0; p < R->n; p++)
      if (tl_v3_dot(sn[p], pts[0]) > so[p]) np = 0;
  }
  double n_out[3];
  tl_v3_scale(n_out, R->normal, ref_b ? 1.0 : -1.0);
  tl_contact_point cand[CLIP_MAX];
  int nc = 0;
  double off = tl_v3_dot(R->normal, R->v[0]);
  for (int i = 0; i < np; i++) {
    double h = tl_v3_dot(R->normal, pts[i]) - off, sep = h - I->radius;
    if (-sep <= -margin) continue;
    double pi[3], pr[3];
    tl_v3_copy(pi, pts[i]);
    tl_v3_addscl(pi, R->normal, -I->radius);
    tl_v3_copy(pr, pts[i]);
    tl_v3_addscl(pr, R->normal, -h);
    tl_contact_point c;
    if (ref_b) tl_np_write(&c, pi, pr, n_out, -sep);
    else tl_np_write(&c, pr, pi, n_out, -sep);
    tl_np_add_merge(cand, &nc, CLIP_MAX, &c, 1e-9); /* vertices on a side plane repeat */
  }
  nc = tl_np_reduce(cand, nc, 4);
  for (int i = 0; i < nc; i++) out[i] = cand[i];
  return nc;
}

int tl_np_convex(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  double n[3], depth, pos[3];
  if (!tl_np_mpr(a, b, NULL, margin, n, &depth, pos)) return 0;
  int k = manifold(a, b, n, margin, out);
  if (k > 0) return k;
  tl_v3_copy(out[0].pos, pos);
  tl_v3_copy(out[0].normal, n);
  out[0].depth = depth;
  return 1;
}
