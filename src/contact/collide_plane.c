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
#include <stdint.h>
#include <stdlib.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

typedef struct cand_buf {
  tl_contact_point *p;
  int n, cap;
} cand_buf;

/* The contact of centre x of radius r (0 for a point) with plane (p0, n)
 * into *c: 1, or 0 when it is not closer than the margin. */
static int plane_point(tl_contact_point *c, const double x[3], double r, const double p0[3], const double n[3],
                       double margin) {
  double d[3];
  tl_v3_sub(d, x, p0);
  double sd = tl_v3_dot(d, n), depth = r - sd;
  if (depth <= -margin) return 0;
  double pa[3], pb[3];
  tl_v3_copy(pa, x);
  tl_v3_addscl(pa, n, -r);
  tl_v3_copy(pb, x);
  tl_v3_addscl(pb, n, -sd);
  tl_np_write(c, pa, pb, n, depth);
  return 1;
}

/* Candidate: centre x of radius r (0 for a point) against plane (p0, n). */
static void add_point(cand_buf *b, const double x[3], double r, const double p0[3],
                      const double n[3], double margin) {
  tl_contact_point c;
  if (!plane_point(&c, x, r, p0, n, margin)) return;
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

/* Height above the plane of the k-th smallest of h[0..n) (0-based; quickselect,
 * Hoare's FIND, 1961; h is reordered). */
static double kth_smallest(double *h, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    double pivot = h[(lo + hi) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (h[i] < pivot) i++;
      while (h[j] > pivot) j--;
      if (i <= j) {
        double t = h[i];
        h[i++] = h[j];
        h[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return h[k];
}

#define HULL_SCAN 2048 /* hulls up to this many vertices get the two-pass scan */
#define HULL_SOFT 16     /* a hull's deepest vertices considered for its manifold, ... */
#define HULL_LEVEL 1e-6  /* ... more while level with the last (m) */
#define HULL_DISTINCT 0.3 /* manifold: vertices this near the deepest (fraction of the hull's radius) ... */
#define HULL_BAND 1e-3    /* ... merged into it, those within this height (fraction of the radius) weighted */

typedef struct hull_vertex {
  double h;
  int i;
} hull_vertex;

static int cmp_vertex(const void *pa, const void *pb) { /* by height, then index */
  const hull_vertex *a = pa, *b = pb;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

static int cmp_index(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  return (a > b) - (a < b);
}

/* The vertices of a hull with a vertex graph that its plane contact is made
 * of, in increasing vertex order, into cand (returns how many; their heights
 * nl . v - h0 into h[vertex]): among those lower than `reach`, the HULL_SOFT
 * deepest, more while level with the last within HULL_LEVEL (the corners of
 * a face lying flat), at most TL_NP_MAX_CAND, taken in the order of (height,
 * index). A linear function on a convex polytope has no local minimum but the
 * global one, and the vertices below any level form a connected subgraph
 * (the reason the simplex method works; Ziegler, Lectures on Polytopes, 1995,
 * sec. 3.3): so a descent along edges from the last deepest vertex finds the
 * deepest, and a best-first search from it (a heap on the height) takes the
 * vertices in increasing height, visiting only them and their neighbours.
 * The start of the descent changes neither the set nor its order. */
static int hull_walk(const tl_hull *hl, const double nl[3], double h0, double reach, int *cand, double *h) {
  const int nv = hl->nvert, *adr = hl->adj_adr, *adj = hl->adj;
  const double *v = hl->vert;
  int *mark = hl->walk, stamp = ++hl->walk[nv], cur = hl->walk[nv + 1];
  if (stamp <= 0) { /* the counter wrapped: clear the stamps */
    for (int i = 0; i < nv; i++) mark[i] = 0;
    stamp = hl->walk[nv] = 1;
  }
  if (cur < 0 || cur >= nv) cur = 0;
#define HEIGHT(i) (nl[0] * v[3 * (i)] + nl[1] * v[3 * (i) + 1] + nl[2] * v[3 * (i) + 2] - h0)
  double hc = HEIGHT(cur);
  for (int next = cur;; cur = next) { /* steepest descent */
    for (int e = adr[cur]; e < adr[cur + 1]; e++) {
      double hn = HEIGHT(adj[e]);
      if (hn < hc) hc = hn, next = adj[e];
    }
    if (next == cur) break;
  }
  hl->walk[nv + 1] = cur;
  if (!(hc < reach)) return 0;
  /* best first (a heap on the height) through the vertices below the level:
   * they come out in increasing height; stop after HULL_SOFT of them, unless
   * the next one is level with the last (a flat face keeps its corners), and
   * at TL_NP_MAX_CAND */
  int hv[HULL_SCAN], nh = 0, m = 0;
  double last = -INFINITY;
  mark[cur] = stamp;
  h[cur] = hc;
  hv[nh++] = cur;
  while (nh > 0 && m < TL_NP_MAX_CAND) {
    int a = hv[0];
    if (m >= HULL_SOFT && h[a] > last + HULL_LEVEL) break;
    hv[0] = hv[--nh]; /* pop */
    for (int i = 0;;) {
      int l = 2 * i + 1, r = l + 1, k = i;
      if (l < nh && (h[hv[l]] < h[hv[k]] || (h[hv[l]] == h[hv[k]] && hv[l] < hv[k]))) k = l;
      if (r < nh && (h[hv[r]] < h[hv[k]] || (h[hv[r]] == h[hv[k]] && hv[r] < hv[k]))) k = r;
      if (k == i) break;
      int t = hv[i];
      hv[i] = hv[k], hv[k] = t, i = k;
    }
    cand[m++] = a;
    last = h[a];
    for (int e = adr[a]; e < adr[a + 1]; e++) {
      int b = adj[e];
      if (mark[b] == stamp) continue;
      mark[b] = stamp;
      double hb = HEIGHT(b);
      if (!(hb < reach) || nh >= HULL_SCAN) continue;
      h[b] = hb;
      int i = nh++; /* push */
      hv[i] = b;
      while (i > 0) {
        int p = (i - 1) / 2;
        if (h[hv[p]] < h[hv[i]] || (h[hv[p]] == h[hv[i]] && hv[p] < hv[i])) break;
        int t = hv[i];
        hv[i] = hv[p], hv[p] = t, i = p;
      }
    }
  }
#undef HEIGHT
  uint64_t bits[HULL_SCAN / 64] = {0}; /* vertex order: through a bit set */
  for (int i = 0; i < m; i++) bits[cand[i] >> 6] |= 1ull << (cand[i] & 63);
  m = 0;
  for (int w = 0; w <= (nv - 1) >> 6; w++)
    for (uint64_t b = bits[w]; b; b &= b - 1) cand[m++] = (w << 6) + __builtin_ctzll(b);
  return m;
}

/* A hull's vertices against the plane. The heights are taken in the hull's
 * frame (3 products a vertex: nl . v - h0); the vertices within the margin
 * (with a hair of slack, the exact test follows in the world frame in
 * add_point) are candidates, and when there are more than the buffer holds
 * only the deepest are added, in vertex order, so that the buffer never
 * overflows (each overflow would cost a scan of the buffer). */
static void hull_points(cand_buf *b, const tl_shape *s, const double p0[3], const double n[3], double margin) {
  if (!tl_np_hull_ok(s)) return;
  double nl[3], d[3], h[HULL_SCAN], sel[HULL_SCAN];
  tl_v3_sub(d, p0, s->pos);
  for (int k = 0; k < 3; k++) nl[k] = s->rot[k] * n[0] + s->rot[3 + k] * n[1] + s->rot[6 + k] * n[2];
  const double h0 = tl_v3_dot(n, d), reach = margin * (1 + 1e-9) + 1e-12 * (1 + fabs(h0));
  const int nv = s->hull->nvert;
  const double *v = s->hull->vert;
  double thr = reach;
  if (nv <= HULL_SCAN) {
    int m = 0;
    for (int i = 0; i < nv; i++) {
      h[i] = nl[0] * v[3 * i] + nl[1] * v[3 * i + 1] + nl[2] * v[3 * i + 2] - h0;
      if (h[i] < reach) sel[m++] = h[i];
    }
    if (m > b->cap) thr = kth_smallest(sel, m, b->cap - 1); /* the cap deepest: h <= thr */
  }
  for (int i = 0; i < nv; i++) {
    double hi = nv <= HULL_SCAN ? h[i] : nl[0] * v[3 * i] + nl[1] * v[3 * i + 1] + nl[2] * v[3 * i + 2] - h0;
    if (hi >= reach || hi > thr) continue;
    double x[3];
    local_to_world(x, s, v + 3 * i);
    add_point(b, x, 0, p0, n, margin);
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
    case TL_GEOM_MESH: hull_points(&b, s, p0, n, margin); break;
    default: break;
  }
  return b.n;
}

/* A hull against the plane, reduced to at most 4 points as tl_np_reduce does
 * (the deepest vertex, then the farthest from it, then the widest triangle,
 * then the largest gain in area, all measured across the normal), but on the
 * hull's own vertices in its frame: the heights are nl . v - h0, the spread
 * is measured in plane coordinates, and only the chosen vertices are moved
 * to the world frame (add_point, the exact test there). Among more than
 * TL_NP_MAX_CAND vertices within the margin, the deepest TL_NP_MAX_CAND.
 * Vertices near the deepest merge into its point (below). Hulls without a
 * usable hull record or with more than HULL_SCAN vertices take the generic
 * path (tl_np_plane_points + tl_np_reduce) without that merge. */
static int hull_plane(const tl_shape *s, const double p0[3], const double n[3], double margin,
                      tl_contact_point *out) {
  cand_buf b = {out, 0, 4};
  if (!tl_np_hull_ok(s) || s->hull->nvert > HULL_SCAN) {
    tl_contact_point cand[TL_NP_MAX_CAND];
    int k = tl_np_plane_points(s, p0, n, margin, cand, TL_NP_MAX_CAND);
    k = tl_np_reduce(cand, k, 4);
    for (int i = 0; i < k; i++) out[i] = cand[i];
    return k;
  }
  double nl[3], d[3], h[HULL_SCAN];
  int cand[HULL_SCAN];
  tl_v3_sub(d, p0, s->pos);
  for (int k = 0; k < 3; k++) nl[k] = s->rot[k] * n[0] + s->rot[3 + k] * n[1] + s->rot[6 + k] * n[2];
  const double h0 = tl_v3_dot(n, d), reach = margin * (1 + 1e-9) + 1e-12 * (1 + fabs(h0));
  const int nv = s->hull->nvert;
  const double *v = s->hull->vert;
  int m = 0;
  if (s->hull->adj) {
    m = hull_walk(s->hull, nl, h0, reach, cand, h);
  } else { /* no graph: the same vertices by a scan and a sort on (height, index) */
    hull_vertex hs[HULL_SCAN];
    for (int i = 0; i < nv; i++) {
      h[i] = nl[0] * v[3 * i] + nl[1] * v[3 * i + 1] + nl[2] * v[3 * i + 2] - h0;
      if (h[i] < reach) hs[m].h = h[i], hs[m++].i = i;
    }
    qsort(hs, (size_t)m, sizeof(hs[0]), cmp_vertex);
    int k = 0;
    while (k < m && k < TL_NP_MAX_CAND && (k < HULL_SOFT || hs[k].h <= hs[k - 1].h + HULL_LEVEL)) k++;
    for (int i = 0; i < k; i++) cand[i] = hs[i].i;
    qsort(cand, (size_t)k, sizeof(int), cmp_index);
    m = k;
  }
  if (m == 0) return 0; /* no vertex within reach (cand[] holds nothing to read) */
  /* in plane coordinates (e1, e2 across the normal); the deepest first */
  double e1[3], e2[3], a[3] = {1, 0, 0}, xy[TL_NP_MAX_CAND][2];
  if (fabs(nl[0]) > 0.8) tl_v3_set(a, 0, 1, 0);
  tl_v3_cross(e1, nl, a);
  tl_v3_normalize(e1);
  tl_v3_cross(e2, nl, e1);
  int deep = 0;
  for (int c = 1; c < m; c++)
    if (h[cand[c]] < h[cand[deep]]) deep = c;
  const int deep0 = deep;
  /* the near-duplicates of the deepest vertex, closer to it than
   * HULL_DISTINCT of the hull's radius across the normal, are no contacts of
   * their own (the rule of MuJoCo's plane-mesh contacts): a tessellated
   * rounded foot touches at one point, and its neighbours, a fraction of a
   * mm higher, only flickered in and out of the solve (with two pressing
   * points a foot, four feet gave more rows than DOFs and a regularized
   * solve). Those less than HULL_BAND of the radius above the deepest move
   * its point instead, to the convex combination of them all weighted
   * 1 - height / band (the deepest 1): a foot resting on an edge touches at
   * the edge's middle, and as it rolls the point moves continuously (the
   * weights depend on the heights only) to the lower end instead of hopping
   * an edge length (4 mm on solo12's feet) whenever the two heights cross.
   * The point keeps the deepest vertex's height, so the contact's depth stays
   * the true penetration. Distant vertices (the corners of a face) stay
   * contacts of their own. */
  const double *hf = s->hull->half, rad = sqrt(hf[0] * hf[0] + hf[1] * hf[1] + hf[2] * hf[2]);
  const double dmin = HULL_DISTINCT * rad, band = HULL_BAND * rad;
  const double *xd = v + 3 * cand[deep], hd = h[cand[deep]];
  const double xd0 = tl_v3_dot(xd, e1), xd1 = tl_v3_dot(xd, e2);
  double patch[3] = {xd[0], xd[1], xd[2]}, wsum = 1;
  int idx[TL_NP_MAX_CAND], nc = 0;
  for (int i = 0; i < m; i++) {
    const double *x = v + 3 * cand[i];
    double x0 = tl_v3_dot(x, e1), x1 = tl_v3_dot(x, e2);
    double r2 = (x0 - xd0) * (x0 - xd0) + (x1 - xd1) * (x1 - xd1);
    if (i != deep && (r2 < dmin * dmin || r2 == 0)) { /* (r2 == 0: also when the radius is 0) */
      double up = h[cand[i]] - hd;
      if (up < band) {
        double w = 1 - up / band;
        tl_v3_addscl(patch, x, w);
        wsum += w;
      }
      continue;
    }
    if (i == deep) deep = nc;
    xy[nc][0] = x0, xy[nc][1] = x1;
    idx[nc++] = cand[i];
  }
  tl_v3_scale(patch, patch, 1 / wsum);
  tl_v3_addscl(patch, nl, hd + h0 - tl_v3_dot(nl, patch)); /* at the deepest's height: its depth */
  int pick[4], np = 0;
  if (nc <= 4) {
    for (int i = 0; i < nc; i++) pick[np++] = idx[i];
  } else {
    unsigned char used[TL_NP_MAX_CAND] = {0};
    int sc[4] = {deep};
    used[deep] = 1;
    for (int k = 1; k < 4; k++) {
      int best = -1;
      double bs = 1e-20;
      for (int c = 0; c < nc; c++) {
        if (used[c]) continue;
        double score;
        const double *x = xy[c], *p = xy[sc[0]];
        if (k == 1) {
          score = (x[0] - p[0]) * (x[0] - p[0]) + (x[1] - p[1]) * (x[1] - p[1]);
        } else if (k == 2) {
          const double *q = xy[sc[1]];
          score = fabs((q[0] - p[0]) * (x[1] - p[1]) - (q[1] - p[1]) * (x[0] - p[0]));
        } else {
          const double *t[3] = {xy[sc[0]], xy[sc[1]], xy[sc[2]]};
          double sg = (t[1][0] - t[0][0]) * (t[2][1] - t[0][1]) - (t[1][1] - t[0][1]) * (t[2][0] - t[0][0]) >= 0 ? 1.0 : -1.0;
          score = 0;
          for (int e = 0; e < 3; e++) {
            const double *u = t[e], *w = t[(e + 1) % 3];
            double ar = sg * ((w[0] - u[0]) * (x[1] - u[1]) - (w[1] - u[1]) * (x[0] - u[0]));
            if (ar < 0) score -= ar;
          }
        }
        if (score > bs) bs = score, best = c;
      }
      if (best < 0) /* no spread left: the deepest remaining */
        for (int c = 0; c < nc; c++)
          if (!used[c] && (best < 0 || h[idx[c]] < h[idx[best]])) best = c;
      sc[k] = best;
      used[best] = 1;
    }
    for (int k = 0; k < 4; k++) pick[np++] = idx[sc[k]];
  }
  for (int k = 0; k < np; k++) {
    double x[3];
    local_to_world(x, s, pick[k] == cand[deep0] ? patch : v + 3 * pick[k]);
    add_point(&b, x, 0, p0, n, margin);
  }
  return b.n;
}

/* Drop the points closer than 1 nm to an earlier one (in place, order kept;
 * returns the count): the candidates of a zero-length capsule (its two cap
 * spheres) or cylinder (its two caps) or a zero-radius cylinder coincide, and
 * coincident contacts make the solve's rows linearly dependent. Shapes of
 * positive sizes (as the model requires) never have such candidates. */
static int drop_coincident(tl_contact_point *p, int n) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    int dup = 0;
    for (int j = 0; j < m && !dup; j++) {
      double d[3];
      tl_v3_sub(d, p[i].pos, p[j].pos);
      dup = tl_v3_dot(d, d) < 1e-18;
    }
    if (!dup) p[m++] = p[i];
  }
  return m;
}

int tl_np_shape_plane(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  double n[3];
  tl_np_axis(n, b->rot, 2);
  if (a->type == TL_GEOM_MESH) return hull_plane(a, b->pos, n, margin, out);
  if (a->type == TL_GEOM_SPHERE) /* one point, nothing to reduce: straight into out */
    return plane_point(out, a->pos, a->size[0], b->pos, n, margin);
  tl_contact_point cand[TL_NP_MAX_CAND];
  int k = drop_coincident(cand, tl_np_plane_points(a, b->pos, n, margin, cand, TL_NP_MAX_CAND));
  if (a->type == TL_GEOM_BOX || a->type == TL_GEOM_CYLINDER) k = tl_np_keep_deepest(cand, k, 4);
  else k = tl_np_reduce(cand, k, 4);
  for (int i = 0; i < k; i++) out[i] = cand[i];
  return k;
}
