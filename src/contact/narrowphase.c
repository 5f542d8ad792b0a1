/* Narrowphase collision: dispatch over the pair types, shared helpers
 * (contact writing, manifold reduction, merging) and shape bounding boxes.
 *
 * The pair functions live in collide_prim.c (analytic sphere, capsule, box,
 * cylinder and hull pairs), collide_box.c (box-box), collide_plane.c
 * (everything against a plane), collide_convex.c (general convex pairs
 * through GJK and libccd's MPR) and collide_hfield.c (heightmaps).
 *
 * Manifold reduction keeps the deepest point and then the points that
 * spread the support polygon most, as in Bullet's contact-cache reduction
 * (btPersistentManifold::sortCachedPoints) and ODE's cullPoints. */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

void tl_np_axis(double r[3], const double R[9], int k) {
  r[0] = R[k];
  r[1] = R[3 + k];
  r[2] = R[6 + k];
}

void tl_np_write(tl_contact_point *c, const double pa[3], const double pb[3], const double n[3],
                 double depth) {
  for (int i = 0; i < 3; i++) c->pos[i] = 0.5 * (pa[i] + pb[i]);
  tl_v3_copy(c->normal, n);
  c->depth = depth;
}

int tl_np_hull_ok(const tl_shape *s) {
  const tl_hull *h = s->hull;
  return h && h->vert && h->nvert > 0 && h->face && h->nface > 0;
}

void tl_hull_bounds(tl_hull *h) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int v = 0; v < h->nvert; v++)
    for (int i = 0; i < 3; i++) {
      lo[i] = fmin(lo[i], h->vert[3 * v + i]);
      hi[i] = fmax(hi[i], h->vert[3 * v + i]);
    }
  for (int i = 0; i < 3; i++) {
    h->center[i] = h->nvert > 0 ? 0.5 * (lo[i] + hi[i]) : 0.0;
    h->half[i] = h->nvert > 0 ? 0.5 * (hi[i] - lo[i]) : 0.0;
  }
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int tl_hull_graph(tl_hull *h) {
  h->adj_adr = h->adj = NULL;
  h->walk = NULL;
  int nv = h->nvert;
  if (nv <= 0 || h->nface <= 0) return 0;
  int *adr = calloc((size_t)nv + 1, sizeof(int)), *adj = malloc(6 * (size_t)h->nface * sizeof(int));
  int *walk = calloc((size_t)nv + 2, sizeof(int)), *fill = calloc((size_t)nv, sizeof(int));
  if (!adr || !adj || !walk || !fill) {
    free(adr), free(adj), free(walk), free(fill);
    return -1;
  }
  for (int f = 0; f < h->nface; f++) /* each triangle gives its vertices two neighbours */
    for (int k = 0; k < 3; k++) adr[h->face[3 * f + k] + 1] += 2;
  for (int v = 0; v < nv; v++) adr[v + 1] += adr[v];
  for (int f = 0; f < h->nface; f++)
    for (int k = 0; k < 3; k++) {
      int a = h->face[3 * f + k];
      adj[adr[a] + fill[a]++] = h->face[3 * f + (k + 1) % 3];
      adj[adr[a] + fill[a]++] = h->face[3 * f + (k + 2) % 3];
    }
  int n = 0; /* sort and de-duplicate each list, compacting */
  for (int v = 0; v < nv; v++) {
    int *l = adj + adr[v], m = adr[v + 1] - adr[v], start = n;
    qsort(l, (size_t)m, sizeof(int), cmp_int);
    for (int i = 0; i < m; i++)
      if (n == start || adj[n - 1] != l[i]) adj[n++] = l[i];
    adr[v] = start;
  }
  adr[nv] = n;
  free(fill);
  h->adj_adr = adr;
  h->adj = adj;
  h->walk = walk;
  return 0;
}

void tl_hull_graph_free(tl_hull *h) {
  free((void *)h->adj_adr);
  free((void *)h->adj);
  free(h->walk);
  h->adj_adr = h->adj = NULL;
  h->walk = NULL;
}

/* ---------------- manifold reduction ---------------- */

/* Component of v perpendicular to the unit vector n. */
static void perp(double r[3], const double v[3], const double n[3]) {
  double d = tl_v3_dot(v, n);
  for (int i = 0; i < 3; i++) r[i] = v[i] - n[i] * d;
}

/* Twice the signed area of triangle (a, b, c) seen along n. */
static double area2(const double a[3], const double b[3], const double c[3], const double n[3]) {
  double u[3], v[3], w[3];
  tl_v3_sub(u, b, a);
  tl_v3_sub(v, c, a);
  tl_v3_cross(w, u, v);
  return tl_v3_dot(w, n);
}

static double dist2_perp(const double a[3], const double b[3], const double n[3]) {
  double d[3], p[3];
  tl_v3_sub(d, a, b);
  perp(p, d, n);
  return tl_v3_dot(p, p);
}

/* Score of candidate c for the k-th choice given the chosen points sel[0..k-1]. */
static double spread_score(const tl_contact_point *p, const int *sel, int k, int c,
                           const double n[3]) {
  const double *x = p[c].pos;
  if (k == 1) return dist2_perp(x, p[sel[0]].pos, n);
  if (k == 2) return fabs(area2(p[sel[0]].pos, p[sel[1]].pos, x, n));
  if (k == 3) {
    const double *t[3] = {p[sel[0]].pos, p[sel[1]].pos, p[sel[2]].pos};
    double s = area2(t[0], t[1], t[2], n) >= 0 ? 1.0 : -1.0, gain = 0;
    for (int e = 0; e < 3; e++) {
      double a = s * area2(t[e], t[(e + 1) % 3], x, n);
      if (a < 0) gain -= a;
    }
    return gain;
  }
  double best = INFINITY;
  for (int i = 0; i < k; i++) {
    double d = dist2_perp(x, p[sel[i]].pos, n);
    if (d < best) best = d;
  }
  return best;
}

#define REDUCE_MAX 128 /* most points tl_np_reduce looks at */

int tl_np_reduce(tl_contact_point *p, int n, int max) {
  if (max > TL_MAX_PAIR_CONTACTS) max = TL_MAX_PAIR_CONTACTS;
  if (n <= max) return n;
  if (n > REDUCE_MAX) n = REDUCE_MAX;
  int sel[TL_MAX_PAIR_CONTACTS];
  unsigned char used[REDUCE_MAX];
  memset(used, 0, sizeof(used));
  int deep = 0;
  for (int i = 1; i < n; i++)
    if (p[i].depth > p[deep].depth) deep = i;
  sel[0] = deep;
  used[deep] = 1;
  const double *nn = p[deep].normal;
  for (int k = 1; k < max; k++) {
    int best = -1;
    double bs = 1e-20;
    for (int c = 0; c < n; c++) {
      if (used[c]) continue;
      double s = spread_score(p, sel, k, c, nn);
      if (s > bs) { bs = s; best = c; }
    }
    if (best < 0) /* no spread left: the deepest remaining */
      for (int c = 0; c < n; c++)
        if (!used[c] && (best < 0 || p[c].depth > p[best].depth)) best = c;
    sel[k] = best;
    used[best] = 1;
  }
  tl_contact_point tmp[TL_MAX_PAIR_CONTACTS];
  for (int k = 0; k < max; k++) tmp[k] = p[sel[k]];
  memcpy(p, tmp, (size_t)max * sizeof(*p));
  return max;
}

int tl_np_keep_deepest(tl_contact_point *p, int n, int max) {
  if (n <= max) return n; /* order as generated */
  for (int i = 1; i < n; i++) { /* stable insertion sort, deepest first */
    tl_contact_point c = p[i];
    int j = i;
    while (j > 0 && p[j - 1].depth < c.depth) { p[j] = p[j - 1]; j--; }
    p[j] = c;
  }
  return n < max ? n : max;
}

void tl_np_add_merge(tl_contact_point *p, int *n, int cap, const tl_contact_point *c, double tol) {
  for (int i = 0; i < *n; i++) {
    double d[3];
    tl_v3_sub(d, p[i].pos, c->pos);
    if (tl_v3_dot(d, d) < tol * tol) {
      if (c->depth > p[i].depth) p[i] = *c;
      return;
    }
  }
  if (*n < cap) {
    p[(*n)++] = *c;
    return;
  }
  int low = 0;
  for (int i = 1; i < *n; i++)
    if (p[i].depth < p[low].depth) low = i;
  if (c->depth > p[low].depth) p[low] = *c;
}

/* ---------------- dispatch ---------------- */

#define NTYPES 7

/* Pair functions for type(a) <= type(b); NULL: the pair cannot touch. */
static tl_np_pair_fn pair_table(int ta, int tb) {
  enum { S = TL_GEOM_SPHERE, B = TL_GEOM_BOX, CA = TL_GEOM_CAPSULE, CY = TL_GEOM_CYLINDER,
         M = TL_GEOM_MESH, P = TL_GEOM_PLANE, H = TL_GEOM_HEIGHTMAP };
  if (tb == P) return ta == P ? NULL : tl_np_shape_plane;
  if (tb == H) return (ta == P || ta == H) ? NULL : tl_np_shape_hfield;
  switch (ta) {
    case S:
      switch (tb) {
        case S: return tl_np_sphere_sphere;
        case B: return tl_np_sphere_box;
        case CA: return tl_np_sphere_capsule;
        case CY: return tl_np_sphere_cylinder;
        case M: return tl_np_sphere_hull;
        default: return NULL;
      }
    case B:
      if (tb == B) return tl_np_box_box;
      if (tb == CA) return tl_np_box_capsule;
      return tl_np_convex;
    case CA:
      if (tb == CA) return tl_np_capsule_capsule;
      return tl_np_convex;
    case CY:
    case M: return tl_np_convex;
    default: return NULL;
  }
}

/* Canonical order of a pair: by type, then (same type) by pose and size, so
 * that collide(a, b) and collide(b, a) run the same computation. */
static int shape_after(const tl_shape *a, const tl_shape *b) {
  if (a->type != b->type) return a->type > b->type;
  for (int i = 0; i < 3; i++)
    if (a->pos[i] != b->pos[i]) return a->pos[i] > b->pos[i];
  for (int i = 0; i < 9; i++)
    if (a->rot[i] != b->rot[i]) return a->rot[i] > b->rot[i];
  for (int i = 0; i < 3; i++)
    if (a->size[i] != b->size[i]) return a->size[i] > b->size[i];
  return (uintptr_t)a->hull > (uintptr_t)b->hull;
}

int tl_collide(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  if (!a || !b || !out) return 0;
  if ((unsigned)a->type >= NTYPES || (unsigned)b->type >= NTYPES) return 0;
  if (!(margin >= 0) || !isfinite(margin)) margin = 0;
  int swap = shape_after(a, b);
  const tl_shape *s0 = swap ? b : a, *s1 = swap ? a : b;
  tl_np_pair_fn fn = pair_table(s0->type, s1->type);
  if (!fn) return 0;
  if ((s0->type == TL_GEOM_MESH && !tl_np_hull_ok(s0)) ||
      (s1->type == TL_GEOM_MESH && !tl_np_hull_ok(s1)))
    return 0;
  int n = fn(s0, s1, margin, out);
  if (n > TL_MAX_PAIR_CONTACTS) n = TL_MAX_PAIR_CONTACTS;
  if (swap)
    for (int i = 0; i < n; i++) tl_v3_scale(out[i].normal, out[i].normal, -1.0);
  return n;
}

/* ---------------- bounding boxes ---------------- */

/* Box of half extents h (local) around c, rotated by R. */
static void rotated_box(const double c[3], const double R[9], const double h[3], double margin,
                        double lo[3], double hi[3]) {
  for (int i = 0; i < 3; i++) {
    double e = fabs(R[3 * i]) * h[0] + fabs(R[3 * i + 1]) * h[1] + fabs(R[3 * i + 2]) * h[2];
    e += margin;
    lo[i] = c[i] - e;
    hi[i] = c[i] + e;
  }
}

static void heightmap_aabb(const tl_shape *s, double margin, double lo[3], double hi[3]) {
  const tl_heightmap *h = s->heightmap;
  if (!h || !h->heights || h->nx < 1 || h->ny < 1) {
    for (int i = 0; i < 3; i++) lo[i] = hi[i] = s->pos[i];
    return;
  }
  double zlo = INFINITY, zhi = -INFINITY;
  for (int i = 0; i < h->nx * h->ny; i++) {
    if (h->heights[i] < zlo) zlo = h->heights[i];
    if (h->heights[i] > zhi) zhi = h->heights[i];
  }
  /* the solid reaches one cell below the lowest height (the cells' prisms) */
  zlo -= fmax(fabs(h->dx), fabs(h->dy));
  double llo[3] = {h->x0, h->y0, zlo};
  double lhi[3] = {h->x0 + (h->nx - 1) * h->dx, h->y0 + (h->ny - 1) * h->dy, zhi};
  double c[3], half[3];
  for (int i = 0; i < 3; i++) {
    c[i] = 0.5 * (llo[i] + lhi[i]);
    half[i] = 0.5 * fabs(lhi[i] - llo[i]);
  }
  double cw[3];
  tl_m3_mulv(cw, s->rot, c);
  tl_v3_add(cw, cw, s->pos);
  rotated_box(cw, s->rot, half, margin, lo, hi);
}

void tl_shape_aabb(const tl_shape *s, double margin, double lo[3], double hi[3]) {
  if (!(margin >= 0) || !isfinite(margin)) margin = 0;
  const double *R = s->rot, *c = s->pos;
  switch (s->type) {
    case TL_GEOM_SPHERE: {
      const double r = s->size[0], x = c[0], y = c[1], z = c[2]; /* read before lo, hi are written */
      lo[0] = x - r - margin, lo[1] = y - r - margin, lo[2] = z - r - margin;
      hi[0] = x + r + margin, hi[1] = y + r + margin, hi[2] = z + r + margin;
      return;
    }
    case TL_GEOM_BOX: {
      double h[3] = {0.5 * s->size[0], 0.5 * s->size[1], 0.5 * s->size[2]};
      rotated_box(c, R, h, margin, lo, hi);
      return;
    }
    case TL_GEOM_CAPSULE:
    case TL_GEOM_CYLINDER: {
      double r = s->size[0], hh = 0.5 * s->size[1];
      for (int i = 0; i < 3; i++) {
        double a = R[3 * i + 2];
        double e = fabs(a) * hh + margin;
        e += s->type == TL_GEOM_CAPSULE ? r : r * sqrt(fmax(0.0, 1.0 - a * a));
        lo[i] = c[i] - e;
        hi[i] = c[i] + e;
      }
      return;
    }
    case TL_GEOM_MESH: {
      if (!tl_np_hull_ok(s)) {
        for (int i = 0; i < 3; i++) lo[i] = hi[i] = c[i];
        return;
      }
      double cw[3]; /* the vertices' box, rotated: conservative and O(1) */
      tl_m3_mulv(cw, R, s->hull->center);
      tl_v3_add(cw, cw, c);
      rotated_box(cw, R, s->hull->half, margin, lo, hi);
      return;
    }
    case TL_GEOM_PLANE: {
      /* The solid half-space below z = 0 of the frame: bounded only along an
       * axis-aligned normal. */
      for (int i = 0; i < 3; i++) { lo[i] = -INFINITY; hi[i] = INFINITY; }
      double n[3];
      tl_np_axis(n, R, 2);
      for (int i = 0; i < 3; i++) {
        int other = (n[(i + 1) % 3] == 0 && n[(i + 2) % 3] == 0);
        if (other && n[i] > 0) hi[i] = c[i] + margin;
        if (other && n[i] < 0) lo[i] = c[i] - margin;
      }
      return;
    }
    case TL_GEOM_HEIGHTMAP: heightmap_aabb(s, margin, lo, hi); return;
    default:
      for (int i = 0; i < 3; i++) { lo[i] = -INFINITY; hi[i] = INFINITY; }
  }
}
