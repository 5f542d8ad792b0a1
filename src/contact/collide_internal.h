/* Internal to the narrowphase (narrowphase.c and collide_*.c): the pair
 * functions and the helpers they share. Every pair function has the
 * signature of tl_collide for one fixed order of types (the dispatcher in
 * narrowphase.c swaps and flips), follows the conventions of narrowphase.h
 * and writes at most TL_MAX_PAIR_CONTACTS points. */
#ifndef TALUS_COLLIDE_INTERNAL_H
#define TALUS_COLLIDE_INTERNAL_H

#include <math.h>

#include "contact/narrowphase.h"

/* Most candidate points a pair function gathers before reducing them. */
#define TL_NP_MAX_CAND 64

typedef int (*tl_np_pair_fn)(const tl_shape *a, const tl_shape *b, double margin,
                             tl_contact_point *out);

/* ---- helpers (narrowphase.c) ---- */

/* Column k of a row-major rotation (the geom's local axis k in world). */
void tl_np_axis(double r[3], const double R[9], int k);
/* Write a contact from its surface points pa (on a) and pb (on b), the unit
 * normal n (from b into a) and the depth: pos = (pa + pb) / 2. */
void tl_np_write(tl_contact_point *c, const double pa[3], const double pb[3], const double n[3],
                 double depth);
/* Keep at most max of the n points (in place): the deepest, then the ones
 * that spread the manifold most (farthest, largest triangle, largest gain of
 * the hull's area, then farthest from those chosen). Returns the count. */
int tl_np_reduce(tl_contact_point *p, int n, int max);
/* Keep the max deepest of the n points (stable sort, deepest first; left as
 * they are when n <= max). Returns min(n, max). */
int tl_np_keep_deepest(tl_contact_point *p, int n, int max);
/* Add c to the buffer p (*n points, capacity cap): a point closer than tol
 * to one already there replaces it when deeper; with the buffer full, c
 * replaces the shallowest point when deeper. */
void tl_np_add_merge(tl_contact_point *p, int *n, int cap, const tl_contact_point *c, double tol);
/* Number of usable vertices / faces of a mesh shape (0 when it has no hull). */
int tl_np_hull_ok(const tl_shape *s);

/* ---- analytic pairs (collide_prim.c) ---- */

/* Closest points between segments p0-p1 and q0-q1 (Ericson, Real-Time
 * Collision Detection, 2005, sec. 5.1.9): c1 = p0 + s (p1 - p0),
 * c2 = q0 + t (q1 - q0). */
void tl_np_closest_segments(const double p0[3], const double p1[3], const double q0[3],
                            const double q1[3], double *s, double *t, double c1[3], double c2[3]);
/* Closest point of triangle abc to p (Ericson 2005, sec. 5.1.5). */
void tl_np_closest_on_triangle(double q[3], const double p[3], const double a[3], const double b[3],
                               const double c[3]);
/* 1 if segment p0-p1 meets the box [-h, h] (its own frame), else 0: the
 * segment clipped against the three slabs (Liang and Barsky, "A new concept
 * and method for line clipping", ACM TOG 3, 1984); a direction component
 * below 1e-300 tests the slab by the start point. The capsule-box pair
 * (collide_prim.c) and the heightmap's prisms (collide_hfield.c) share it;
 * inline: the heightmap calls it per cell. The result depends only on
 * comparisons, so it is the same whichever of min/max or a swap orders the
 * two slab parameters (the two copies this replaces differed there). */
static inline int tl_np_segment_hits_box(const double p0[3], const double p1[3], const double h[3]) {
  double t0 = 0, t1 = 1;
  for (int k = 0; k < 3; k++) {
    double d = p1[k] - p0[k];
    if (fabs(d) < 1e-300) {
      if (fabs(p0[k]) > h[k]) return 0;
      continue;
    }
    double ta = (-h[k] - p0[k]) / d, tb = (h[k] - p0[k]) / d;
    if (ta > tb) {
      double x = ta;
      ta = tb;
      tb = x;
    }
    t0 = fmax(t0, ta);
    t1 = fmin(t1, tb);
    if (t0 > t1) return 0;
  }
  return 1;
}
/* Sphere (ca, ra) against sphere (cb, rb): 0 or 1 point. */
int tl_np_spheres(const double ca[3], double ra, const double cb[3], double rb, double margin,
                  tl_contact_point *out);

int tl_np_sphere_sphere(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);
int tl_np_sphere_capsule(const tl_shape *a, const tl_shape *b, double margin,
                         tl_contact_point *out);
int tl_np_sphere_box(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);
int tl_np_sphere_cylinder(const tl_shape *a, const tl_shape *b, double margin,
                          tl_contact_point *out);
int tl_np_sphere_hull(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);
int tl_np_capsule_capsule(const tl_shape *a, const tl_shape *b, double margin,
                          tl_contact_point *out);
int tl_np_box_capsule(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);

/* ---- box-box (collide_box.c) ---- */
int tl_np_box_box(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);

/* ---- against a plane (collide_plane.c); b is the plane ---- */

/* Candidate points of shape s (not a plane or heightmap) against the plane
 * through p0 with unit normal n, each closer than margin, unreduced (at most
 * cap; when more qualify the deepest are kept): sphere 1, capsule 2 (the cap
 * spheres), box 8 corners, cylinder 6 rim points (deepest of each cap, and
 * opposite and +-90 degrees on the cap facing the plane), mesh its vertices.
 * Normals are n. Returns the count. */
int tl_np_plane_points(const tl_shape *s, const double p0[3], const double n[3], double margin,
                       tl_contact_point *out, int cap);
int tl_np_shape_plane(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);

/* ---- general convex pairs through libccd (collide_convex.c) ---- */

/* Support value of shape s (sphere, box, capsule, cylinder, mesh):
 * max over its points x of dot(x, d). */
double tl_np_support_value(const tl_shape *s, const double d[3]);
/* One contact point between shape a and either shape b or, when b is NULL,
 * the convex hull of the 6 points prism (a heightmap triangle's prism): GJK
 * distance when separated, libccd's MPR (normal refined) when overlapping.
 * On contact (depth > -margin) writes the normal n (from b into a), the depth
 * and the mid-surface point pos, and returns 1; else 0. */
int tl_np_mpr(const tl_shape *a, const tl_shape *b, const double prism[6][3], double margin,
              double n[3], double *depth, double pos[3]);
/* Convex pair through tl_np_mpr plus a manifold by clipping the facing
 * features (faces of boxes and hulls, cylinder caps and sides, capsule
 * segments). */
int tl_np_convex(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);

/* ---- heightmap (collide_hfield.c); b is the heightmap ---- */
int tl_np_shape_hfield(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);

#endif
