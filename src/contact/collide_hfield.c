/* Heightmap against every primitive and hull. The shape is taken into the
 * heightmap's frame; for each grid triangle under its bounding box (two per
 * cell, split along the (ix, iy)-(ix+1, iy+1) diagonal):
 *   - sphere: closest point on the triangle (Ericson, Real-Time Collision
 *     Detection, 2005, sec. 5.1.5); capsule: the same for its two cap
 *     spheres;
 *   - box, cylinder, hull: the shape's plane candidates against the
 *     triangle's plane (collide_plane.c: corners, rim points, vertices),
 *     kept when their foot lies inside the triangle;
 *   - every shape but the sphere, for terrain features (ridges, peaks) the
 *     above miss: the triangle's prism (extruded downwards) against the
 *     shape through GJK / MPR (tl_np_mpr, collide_convex.c), when an edge of
 *     the triangle can reach the shape; kept when its depth is below the
 *     shape's depth under the triangle's plane.
 * This is MuJoCo's prism decomposition of a height field (mjc_ConvexHField)
 * with the plane candidates first, so that a flat grid gives the plane's
 * contacts. A contact on an edge or vertex of a triangle (sphere or prism)
 * counts only when that feature is extreme on the whole terrain along the
 * contact normal (in its normal cone): edges of flat or concave regions and
 * the prisms' side faces are internal to the terrain.
 * The points are merged (closer than 0.1 mm: the deeper stays) and reduced
 * to TL_MAX_PAIR_CONTACTS (deepest, then spread). Parts of the shape outside
 * the grid have no contact. */
#include <math.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

#define MERGE_TOL 1e-4

typedef struct tri {
  double v[3][3];
  int g[3][2]; /* grid indices (ix, iy) of the vertices */
  double n[3]; /* upward unit normal */
} tri;

static void grid_vertex(const tl_heightmap *hm, int ix, int iy, double v[3]) {
  tl_v3_set(v, hm->x0 + ix * hm->dx, hm->y0 + iy * hm->dy, hm->heights[iy * hm->nx + ix]);
}

static const int grid_nb[6][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}};

/* Are grid points a and b joined by a triangle edge (6-neighbours)? */
static int grid_adjacent(const int a[2], const int b[2]) {
  for (int k = 0; k < 6; k++)
    if (a[0] + grid_nb[k][0] == b[0] && a[1] + grid_nb[k][1] == b[1]) return 1;
  return 0;
}

/* Is the terrain feature of t extreme along n (the triangle's vertices
 * within a tolerance of its support along n: a vertex or an edge) on the
 * terrain around it, i.e. is n in the feature's normal cone? A vertex: no
 * vertex of its incident triangles (its 6 grid neighbours) lies further along
 * n. An edge: neither third vertex of the two triangles sharing it does (the
 * vertices further away do not bound the edge's normal cone: on curved
 * terrain they may rise above the edge while it is still convex). Returns 2
 * for a face (n along the triangle's normal), 1 when extreme, 0 when not: an
 * internal edge or vertex of a flat or concave region, whose contacts belong
 * to the neighbouring faces. */
static int feature_extreme(const tl_heightmap *hm, const tri *t, const double n[3]) {
  double tol = 1e-9 * fmax(1.0, fmax(hm->dx, hm->dy)), h[3], top = -INFINITY;
  for (int i = 0; i < 3; i++) {
    h[i] = tl_v3_dot(n, t->v[i]);
    top = fmax(top, h[i]);
  }
  int cnt = 0, ext[3];
  for (int i = 0; i < 3; i++) cnt += ext[i] = h[i] >= top - tol;
  if (cnt == 3) return 2;
  if (cnt == 2) { /* edge (a, b): the third vertices of the two triangles on it */
    int a = ext[0] ? 0 : 1, b = ext[2] ? 2 : 1, c = 3 - a - b;
    for (int k = 0; k < 6; k++) {
      int w[2] = {t->g[a][0] + grid_nb[k][0], t->g[a][1] + grid_nb[k][1]};
      if (w[0] < 0 || w[1] < 0 || w[0] >= hm->nx || w[1] >= hm->ny) continue;
      if ((w[0] == t->g[c][0] && w[1] == t->g[c][1]) || (w[0] == t->g[b][0] && w[1] == t->g[b][1]) ||
          !grid_adjacent(w, t->g[b]))
        continue;
      double v[3];
      grid_vertex(hm, w[0], w[1], v);
      if (tl_v3_dot(n, v) > top + tol) return 0;
    }
    return 1;
  }
  for (int i = 0; i < 3; i++) { /* vertex */
    if (!ext[i]) continue;
    for (int k = 0; k < 6; k++) {
      int jx = t->g[i][0] + grid_nb[k][0], jy = t->g[i][1] + grid_nb[k][1];
      if (jx < 0 || jy < 0 || jx >= hm->nx || jy >= hm->ny) continue;
      double w[3];
      grid_vertex(hm, jx, jy, w);
      if (tl_v3_dot(n, w) > h[i] + tol) return 0;
    }
  }
  return 1;
}

/* Sphere (c, r) against triangle t of heightmap hm (solid below). A contact
 * on an edge or vertex of t counts only where that feature is locally
 * extreme on the terrain (feature_extreme). */
static int sphere_tri(const tl_heightmap *hm, const double c[3], double r, const tri *t,
                      double margin, tl_contact_point *out) {
  double w[3], q[3], pc[3], d[3];
  tl_v3_sub(w, c, t->v[0]);
  double sd = tl_v3_dot(w, t->n);
  tl_np_closest_on_triangle(q, c, t->v[0], t->v[1], t->v[2]);
  tl_v3_copy(pc, c);
  tl_v3_addscl(pc, t->n, -sd);
  tl_v3_sub(d, q, pc);
  double n[3], depth, pb[3];
  if (tl_v3_dot(d, d) <= 1e-24) { /* foot inside the triangle */
    tl_v3_copy(n, t->n);
    depth = r - sd;
    tl_v3_copy(pb, pc);
  } else {
    if (sd < 0) return 0; /* below the plane and beside the triangle: a neighbour's */
    tl_v3_sub(n, c, q);
    double dist = tl_v3_normalize(n);
    if (dist < 1e-12) tl_v3_copy(n, t->n);
    depth = r - dist;
    tl_v3_copy(pb, q);
    if (depth > -margin && !feature_extreme(hm, t, n)) return 0;
  }
  if (depth <= -margin) return 0;
  double pa[3];
  tl_v3_copy(pa, c);
  tl_v3_addscl(pa, n, -r);
  tl_np_write(out, pa, pb, n, depth);
  return 1;
}

/* Is p (on the triangle's plane) inside the triangle? Edges count as inside. */
static int inside_tri(const tri *t, const double p[3]) {
  for (int i = 0; i < 3; i++) {
    double e[3], w[3], c[3];
    tl_v3_sub(e, t->v[(i + 1) % 3], t->v[i]);
    tl_v3_sub(w, p, t->v[i]);
    tl_v3_cross(c, e, w);
    if (tl_v3_dot(c, t->n) < -1e-9 * tl_v3_dot(e, e)) return 0;
  }
  return 1;
}

/* Does segment p0-p1 (local frame) meet hull h grown by margin (Cyrus-Beck)? */
static int seg_hits_hull(const tl_hull *h, const double p0[3], const double p1[3], double margin) {
  double t0 = 0, t1 = 1;
  for (int f = 0; f < h->nface; f++) {
    const double *a = h->vert + 3 * h->face[3 * f], *b = h->vert + 3 * h->face[3 * f + 1];
    const double *c = h->vert + 3 * h->face[3 * f + 2];
    double e1[3], e2[3], nf[3];
    tl_v3_sub(e1, b, a);
    tl_v3_sub(e2, c, a);
    tl_v3_cross(nf, e1, e2);
    if (tl_v3_normalize(nf) < 1e-300) continue;
    double off = tl_v3_dot(nf, a) + margin;
    double d0 = tl_v3_dot(nf, p0) - off, d1 = tl_v3_dot(nf, p1) - off;
    if (d0 > 0 && d1 > 0) return 0;
    if (d0 > 0) t0 = fmax(t0, d0 / (d0 - d1));
    else if (d1 > 0) t1 = fmin(t1, d0 / (d0 - d1));
    if (t0 > t1) return 0;
  }
  return 1;
}

/* Can an edge or a vertex of t touch shape s grown by margin? A conservative
 * test (supersets of the grown shape) that spares the prism's GJK / MPR for
 * triangles whose edges all pass beside the shape. */
static int edges_may_touch(const tl_shape *s, const tri *t, double margin) {
  double r = s->size[0], hh = 0.5 * s->size[1];
  for (int e = 0; e < 3; e++) {
    double p0[3], p1[3], d[3];
    tl_v3_sub(d, t->v[e], s->pos);
    tl_m3_tmulv(p0, s->rot, d);
    tl_v3_sub(d, t->v[(e + 1) % 3], s->pos);
    tl_m3_tmulv(p1, s->rot, d);
    switch (s->type) {
      case TL_GEOM_BOX: {
        double h[3];
        for (int k = 0; k < 3; k++) h[k] = 0.5 * s->size[k] + margin;
        if (tl_np_segment_hits_box(p0, p1, h)) return 1;
        break;
      }
      case TL_GEOM_CAPSULE:
      case TL_GEOM_CYLINDER: {
        double q0[3] = {0, 0, -hh}, q1[3] = {0, 0, hh}, a, b, c1[3], c2[3], w[3];
        tl_np_closest_segments(p0, p1, q0, q1, &a, &b, c1, c2);
        tl_v3_sub(w, c1, c2);
        if (tl_v3_norm(w) > r + margin) break;
        double h[3] = {r + margin, r + margin, hh + margin};
        if (s->type == TL_GEOM_CAPSULE || tl_np_segment_hits_box(p0, p1, h)) return 1;
        break;
      }
      case TL_GEOM_MESH:
        if (seg_hits_hull(s->hull, p0, p1, margin)) return 1;
        break;
      default: return 1;
    }
  }
  return 0;
}

static void tri_contacts(const tl_heightmap *hm, const tl_shape *s, const tri *t, double thick,
                         double margin, tl_contact_point *buf, int *nb) {
  double m[3];
  tl_v3_scale(m, t->n, -1.0);
  /* depth of the shape under the triangle's plane */
  double d_plane = tl_v3_dot(t->v[0], t->n) + tl_np_support_value(s, m);
  if (d_plane <= -margin) return;
  tl_contact_point c;
  if (s->type == TL_GEOM_SPHERE) {
    if (sphere_tri(hm, s->pos, s->size[0], t, margin, &c))
      tl_np_add_merge(buf, nb, TL_NP_MAX_CAND, &c, MERGE_TOL);
    return;
  }
  if (s->type == TL_GEOM_CAPSULE) {
    double ax[3];
    tl_np_axis(ax, s->rot, 2);
    for (int e = -1; e <= 1; e += 2) {
      double x[3];
      tl_v3_copy(x, s->pos);
      tl_v3_addscl(x, ax, e * 0.5 * s->size[1]);
      if (sphere_tri(hm, x, s->size[0], t, margin, &c))
        tl_np_add_merge(buf, nb, TL_NP_MAX_CAND, &c, MERGE_TOL);
    }
  } else {
    tl_contact_point cand[TL_NP_MAX_CAND];
    int k = tl_np_plane_points(s, t->v[0], t->n, margin, cand, TL_NP_MAX_CAND);
    for (int i = 0; i < k; i++) {
      double foot[3]; /* pos = foot + n depth / 2 */
      tl_v3_copy(foot, cand[i].pos);
      tl_v3_addscl(foot, t->n, 0.5 * cand[i].depth);
      if (inside_tri(t, foot)) tl_np_add_merge(buf, nb, TL_NP_MAX_CAND, &cand[i], MERGE_TOL);
    }
  }
  /* terrain features: the triangle's prism through GJK / MPR */
  if (!edges_may_touch(s, t, margin)) return;
  double prism[6][3], zb = fmin(t->v[0][2], fmin(t->v[1][2], t->v[2][2])) - thick;
  for (int i = 0; i < 3; i++) {
    tl_v3_copy(prism[i], t->v[i]);
    tl_v3_set(prism[3 + i], t->v[i][0], t->v[i][1], zb);
  }
  double n[3], depth, pos[3];
  if (tl_np_mpr(s, NULL, prism, margin, n, &depth, pos) && depth < d_plane - 1e-5 &&
      feature_extreme(hm, t, n) == 1) {
    tl_v3_copy(c.pos, pos);
    tl_v3_copy(c.normal, n);
    c.depth = depth;
    tl_np_add_merge(buf, nb, TL_NP_MAX_CAND, &c, MERGE_TOL);
  }
}

/* Grid index range [i0, i1] of cells overlapping [lo, hi]; 0 when none. */
static int cell_range(double lo, double hi, double x0, double dx, int n, int *i0, int *i1) {
  double f0 = floor((lo - x0) / dx), f1 = floor((hi - x0) / dx);
  if (!(f1 >= 0) || !(f0 <= n - 2)) return 0;
  *i0 = f0 < 0 ? 0 : (int)f0;
  *i1 = f1 > n - 2 ? n - 2 : (int)f1;
  return *i0 <= *i1;
}

int tl_np_shape_hfield(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  const tl_heightmap *hm = b->heightmap;
  if (!hm || !hm->heights || hm->nx < 2 || hm->ny < 2 || !(hm->dx > 0) || !(hm->dy > 0)) return 0;
  tl_shape s = *a; /* the shape in the heightmap's frame */
  double d[3];
  tl_v3_sub(d, a->pos, b->pos);
  tl_m3_tmulv(s.pos, b->rot, d);
  tl_m3_tmul(s.rot, b->rot, a->rot);
  double lo[3], hi[3];
  tl_shape_aabb(&s, margin, lo, hi);
  int ix0, ix1, iy0, iy1;
  if (!cell_range(lo[0], hi[0], hm->x0, hm->dx, hm->nx, &ix0, &ix1) ||
      !cell_range(lo[1], hi[1], hm->y0, hm->dy, hm->ny, &iy0, &iy1))
    return 0;
  double thick = fmax(hm->dx, hm->dy);
  tl_contact_point buf[TL_NP_MAX_CAND];
  int nb = 0;
  for (int iy = iy0; iy <= iy1; iy++)
    for (int ix = ix0; ix <= ix1; ix++) {
      /* corners (ix,iy), (ix+1,iy), (ix+1,iy+1), (ix,iy+1) */
      static const int off[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
      static const int corner[2][3] = {{0, 1, 2}, {0, 2, 3}};
      for (int h = 0; h < 2; h++) {
        tri t;
        for (int k = 0; k < 3; k++) {
          t.g[k][0] = ix + off[corner[h][k]][0];
          t.g[k][1] = iy + off[corner[h][k]][1];
          grid_vertex(hm, t.g[k][0], t.g[k][1], t.v[k]);
        }
        if (fmax(t.v[0][2], fmax(t.v[1][2], t.v[2][2])) < lo[2]) continue;
        double e1[3], e2[3];
        tl_v3_sub(e1, t.v[1], t.v[0]);
        tl_v3_sub(e2, t.v[2], t.v[0]);
        tl_v3_cross(t.n, e1, e2);
        if (tl_v3_normalize(t.n) <= 0) continue;
        tri_contacts(hm, &s, &t, thick, margin, buf, &nb);
      }
    }
  for (int i = 0; i < nb; i++) { /* back to world */
    double p[3];
    tl_m3_mulv(p, b->rot, buf[i].pos);
    tl_v3_add(buf[i].pos, p, b->pos);
    tl_m3_mulv(buf[i].normal, b->rot, buf[i].normal);
  }
  nb = tl_np_reduce(buf, nb, TL_MAX_PAIR_CONTACTS);
  for (int i = 0; i < nb; i++) out[i] = buf[i];
  return nb;
}
