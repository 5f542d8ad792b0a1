/* Guards: src/contact/narrowphase.c, collide_prim.c, collide_box.c, collide_plane.c,
 * collide_convex.c, collide_hfield.c (every pair type, manifolds, AABBs); mode robot:
 * src/contact/broadphase.c. */
/* Narrowphase (src/contact/narrowphase.h): analytic expectations for every
 * pair type (depth, normal, count, positions), rotated poses, symmetry
 * (swapping a and b flips the normals and keeps depths and positions, checked
 * on every call), invariance under rigid motions of the whole scene, the
 * speculative margin, resting manifolds (box on box 4 points, cylinder on a
 * cap 4, lying capsule and cylinder 2), a cube hull against the analytic box
 * (plane, sphere), heightmaps (a flat grid gives the plane's contacts, a
 * slope its normal, peaks under a box, bounds of the grid) and bounding
 * boxes; degenerate inputs of every routine, fixed and random (issue 21); `test_narrowphase robot
 * TESTS_DIR`: a robot whose hull is out of the plane's reach, stepped. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "contact/collide_internal.h"
#include "contact/narrowphase.h"
#include "math/tl_math.h"
#include "talus/talus.h"
#include "tests/test_util.h"

#define TOL 1e-9
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif

/* ---------------- shapes ---------------- */

static tl_shape shape(tl_geom_type t, double s0, double s1, double s2, double x, double y,
                      double z) {
  tl_shape s;
  memset(&s, 0, sizeof(s));
  s.type = t;
  tl_v3_set(s.size, s0, s1, s2);
  tl_v3_set(s.pos, x, y, z);
  tl_m3_identity(s.rot);
  return s;
}

static void rotate(tl_shape *s, double ax, double ay, double az, double angle) {
  double a[3] = {ax, ay, az}, R[9];
  tl_v3_normalize(a);
  tl_m3_axis_angle(R, a, angle);
  tl_m3_mul(s->rot, R, s->rot);
}

/* Cube hull of half size h: 8 vertices, 12 triangles counter-clockwise from outside. */
static double cube_vert[8][3];
static const int cube_face[12][3] = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6},
                                     {0, 1, 5}, {0, 5, 4}, {2, 6, 7}, {2, 7, 3},
                                     {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
static tl_hull cube_hull;

static void make_cube_hull(double h) {
  for (int i = 0; i < 8; i++)
    tl_v3_set(cube_vert[i], (i & 1) ? h : -h, (i & 2) ? h : -h, (i & 4) ? h : -h);
  cube_hull.nvert = 8;
  cube_hull.vert = &cube_vert[0][0];
  cube_hull.nface = 12;
  cube_hull.face = &cube_face[0][0];
  tl_hull_bounds(&cube_hull);
}

static tl_shape hull_shape(double x, double y, double z) {
  tl_shape s = shape(TL_GEOM_MESH, 1, 1, 1, x, y, z);
  s.hull = &cube_hull;
  return s;
}

/* ---------------- checked collision ---------------- */

/* Collide both ways; check the symmetry and the general invariants. */
static int collide(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out,
                   const char *what) {
  tl_contact_point r[TL_MAX_PAIR_CONTACTS + 1];
  int n = tl_collide(a, b, margin, out);
  int m = tl_collide(b, a, margin, r);
  TL_CHECK(n >= 0 && n <= TL_MAX_PAIR_CONTACTS, "%s: count %d", what, n);
  TL_CHECK(n == m, "%s: swapped count %d vs %d", what, m, n);
  for (int i = 0; i < n && i < m; i++) {
    double d = 0;
    for (int k = 0; k < 3; k++)
      d = fmax(d, fmax(fabs(out[i].pos[k] - r[i].pos[k]), fabs(out[i].normal[k] + r[i].normal[k])));
    d = fmax(d, fabs(out[i].depth - r[i].depth));
    TL_CHECK(d < 1e-12, "%s: swapped point %d differs by %g", what, i, d);
    TL_CHECK(fabs(tl_v3_norm(out[i].normal) - 1) < 1e-9, "%s: normal %d not unit", what, i);
    TL_CHECK(out[i].depth > -margin, "%s: depth %g beyond margin %g", what, out[i].depth, margin);
    TL_CHECK(tl_v3_isfinite(out[i].pos) && isfinite(out[i].depth), "%s: non-finite point", what);
    for (int j = 0; j < i; j++) { /* no duplicate points (ill-conditioned for a solver) */
      double d3[3];
      tl_v3_sub(d3, out[i].pos, out[j].pos);
      TL_CHECK(tl_v3_norm(d3) > 1e-6, "%s: points %d and %d coincide", what, j, i);
    }
  }
  return n;
}

static void check_point(const tl_contact_point *c, double depth, const double n[3],
                        const double pos[3], double tol, const char *what) {
  char buf[160];
  snprintf(buf, sizeof(buf), "%s depth", what);
  TL_CHECK_NEAR(c->depth, depth, tol, buf);
  for (int k = 0; k < 3; k++) {
    snprintf(buf, sizeof(buf), "%s normal[%d]", what, k);
    TL_CHECK_NEAR(c->normal[k], n[k], tol, buf);
    if (pos) {
      snprintf(buf, sizeof(buf), "%s pos[%d]", what, k);
      TL_CHECK_NEAR(c->pos[k], pos[k], tol, buf);
    }
  }
}

/* Every point has this depth and normal. */
static void check_all(const tl_contact_point *c, int n, double depth, const double nrm[3],
                      double tol, const char *what) {
  for (int i = 0; i < n; i++) check_point(&c[i], depth, nrm, NULL, tol, what);
}

/* Index of the point of c nearest to p (position). */
static int nearest(const tl_contact_point *c, int n, const double p[3], double *dist) {
  int best = -1;
  double bd = INFINITY;
  for (int i = 0; i < n; i++) {
    double d[3];
    tl_v3_sub(d, c[i].pos, p);
    if (tl_v3_norm(d) < bd) {
      bd = tl_v3_norm(d);
      best = i;
    }
  }
  *dist = bd;
  return best;
}

/* Some point of c is at p. */
static void check_has(const tl_contact_point *c, int n, double x, double y, double z, double tol,
                      const char *what) {
  double p[3] = {x, y, z}, d;
  nearest(c, n, p, &d);
  TL_CHECK(d <= tol, "%s: no point near (%g %g %g) (nearest %g away)", what, x, y, z, d);
}

/* The two manifolds are the same set of points. */
static void check_same_set(const tl_contact_point *p, int n, const tl_contact_point *q, int m,
                           double tol, const char *what) {
  TL_CHECK(n == m, "%s: %d vs %d points", what, n, m);
  for (int i = 0; i < n; i++) {
    double d;
    int j = nearest(q, m, p[i].pos, &d);
    if (!TL_CHECK(j >= 0 && d <= tol, "%s: point %d unmatched (%g)", what, i, d)) continue;
    TL_CHECK(fabs(p[i].depth - q[j].depth) <= tol, "%s: point %d depth %g vs %g", what, i,
             p[i].depth, q[j].depth);
    double dn[3];
    tl_v3_sub(dn, p[i].normal, q[j].normal);
    TL_CHECK(tl_v3_norm(dn) <= tol, "%s: point %d normal differs", what, i);
  }
}

/* ---------------- invariance under rigid motions ---------------- */

static unsigned long long rng_state = 12345;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void move_shape(tl_shape *s, const double Q[9], const double t[3]) {
  double p[3];
  tl_m3_mulv(p, Q, s->pos);
  tl_v3_add(s->pos, p, t);
  tl_m3_mul(s->rot, Q, s->rot);
}

/* The contacts of a rigidly moved scene are the moved contacts: same count
 * and depths, normals rotated; positions too when the manifold is unique
 * (no ties between equally deep points). */
static void check_invariance(const tl_shape *a, const tl_shape *b, double margin, int positions,
                             const char *what) {
  tl_contact_point p[TL_MAX_PAIR_CONTACTS], q[TL_MAX_PAIR_CONTACTS];
  int n = tl_collide(a, b, margin, p);
  for (int trial = 0; trial < 5; trial++) {
    double ax[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5}, Q[9];
    tl_v3_normalize(ax);
    tl_m3_axis_angle(Q, ax, 6.0 * urand());
    double t[3] = {4 * urand() - 2, 4 * urand() - 2, 4 * urand() - 2};
    tl_shape a2 = *a, b2 = *b;
    move_shape(&a2, Q, t);
    move_shape(&b2, Q, t);
    int m = collide(&a2, &b2, margin, q, what);
    if (!TL_CHECK(m == n, "%s (moved %d): %d points vs %d", what, trial, m, n)) continue;
    double dp[TL_MAX_PAIR_CONTACTS], dq[TL_MAX_PAIR_CONTACTS];
    for (int i = 0; i < n; i++) {
      dp[i] = p[i].depth;
      dq[i] = q[i].depth;
    }
    for (int i = 1; i < n; i++) /* sort both */
      for (int j = i; j > 0; j--) {
        if (dp[j - 1] > dp[j]) {
          double x = dp[j];
          dp[j] = dp[j - 1];
          dp[j - 1] = x;
        }
        if (dq[j - 1] > dq[j]) {
          double x = dq[j];
          dq[j] = dq[j - 1];
          dq[j - 1] = x;
        }
      }
    for (int i = 0; i < n; i++)
      TL_CHECK(fabs(dp[i] - dq[i]) < 1e-6, "%s (moved %d): depth %g vs %g", what, trial, dq[i],
               dp[i]);
    for (int i = 0; i < m; i++) { /* each moved normal is a rotated original normal */
      double best = INFINITY;
      for (int j = 0; j < n; j++) {
        double rn[3], d[3];
        tl_m3_mulv(rn, Q, p[j].normal);
        tl_v3_sub(d, rn, q[i].normal);
        best = fmin(best, tl_v3_norm(d));
      }
      TL_CHECK(best < 1e-6, "%s (moved %d): normal %d not matched (%g)", what, trial, i, best);
    }
    if (!positions) continue;
    tl_contact_point pm[TL_MAX_PAIR_CONTACTS];
    for (int i = 0; i < n; i++) {
      pm[i] = p[i];
      tl_m3_mulv(pm[i].pos, Q, p[i].pos);
      tl_v3_add(pm[i].pos, pm[i].pos, t);
      tl_m3_mulv(pm[i].normal, Q, p[i].normal);
    }
    check_same_set(pm, n, q, m, 1e-6, what);
  }
}

/* ---------------- pairs ---------------- */

static const double ZUP[3] = {0, 0, 1};

static void test_sphere_sphere(void) {
  tl_contact_point c[8];
  tl_shape a = shape(TL_GEOM_SPHERE, 0.5, 0, 0, 0, 0, 0.9),
           b = shape(TL_GEOM_SPHERE, 0.5, 0, 0, 0, 0, 0);
  int n = collide(&a, &b, 0, c, "sphere-sphere");
  TL_CHECK(n == 1, "sphere-sphere: %d points", n);
  double pos[3] = {0, 0, 0.45};
  if (n == 1) check_point(&c[0], 0.1, ZUP, pos, TOL, "sphere-sphere");
  /* oblique, radii differ: point on a = pos - n d/2 lies on a */
  a = shape(TL_GEOM_SPHERE, 0.3, 0, 0, 0.2, -0.4, 0.5);
  b = shape(TL_GEOM_SPHERE, 0.6, 0, 0, -0.1, 0.1, -0.1);
  n = collide(&a, &b, 0, c, "sphere-sphere oblique");
  double d[3];
  tl_v3_sub(d, a.pos, b.pos);
  double dist = tl_v3_norm(d);
  TL_CHECK(n == 1, "sphere-sphere oblique: %d", n);
  if (n == 1) {
    TL_CHECK_NEAR(c[0].depth, 0.9 - dist, TOL, "oblique depth");
    double pa[3], pb[3];
    tl_v3_copy(pa, c[0].pos);
    tl_v3_addscl(pa, c[0].normal, -0.5 * c[0].depth);
    tl_v3_copy(pb, c[0].pos);
    tl_v3_addscl(pb, c[0].normal, 0.5 * c[0].depth);
    tl_v3_sub(d, pa, a.pos);
    TL_CHECK_NEAR(tl_v3_norm(d), 0.3, TOL, "point on a on a's surface");
    tl_v3_sub(d, pb, b.pos);
    TL_CHECK_NEAR(tl_v3_norm(d), 0.6, TOL, "point on b on b's surface");
  }
  /* margin: gap 0.02 */
  a = shape(TL_GEOM_SPHERE, 0.5, 0, 0, 1.02, 0, 0);
  b = shape(TL_GEOM_SPHERE, 0.5, 0, 0, 0, 0, 0);
  TL_CHECK(collide(&a, &b, 0.01, c, "sphere gap") == 0, "gap 0.02 > margin 0.01 reported");
  n = collide(&a, &b, 0.05, c, "sphere gap");
  double nx[3] = {1, 0, 0}, px[3] = {0.51, 0, 0};
  TL_CHECK(n == 1, "gap 0.02 < margin 0.05: %d points", n);
  if (n == 1) check_point(&c[0], -0.02, nx, px, TOL, "speculative sphere");
  TL_CHECK(collide(&a, &b, 0.02, c, "sphere gap") == 0, "gap == margin reported");
}

static void test_sphere_capsule(void) {
  tl_contact_point c[8];
  tl_shape cap = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0, 0, 0);
  rotate(&cap, 0, 1, 0, TL_PI / 2); /* axis along x */
  tl_shape s = shape(TL_GEOM_SPHERE, 0.2, 0, 0, 0.3, 0, 0.25);
  int n = collide(&s, &cap, 0, c, "sphere-capsule side");
  double p1[3] = {0.3, 0, 0.075};
  TL_CHECK(n == 1, "sphere-capsule side: %d", n);
  if (n == 1) check_point(&c[0], 0.05, ZUP, p1, TOL, "sphere-capsule side");
  s = shape(TL_GEOM_SPHERE, 0.2, 0, 0, 0.75, 0, 0);
  n = collide(&s, &cap, 0, c, "sphere-capsule end");
  double nx[3] = {1, 0, 0}, p2[3] = {0.575, 0, 0};
  TL_CHECK(n == 1, "sphere-capsule end: %d", n);
  if (n == 1) check_point(&c[0], 0.05, nx, p2, TOL, "sphere-capsule end");
  check_invariance(&s, &cap, 0.01, 1, "sphere-capsule moved");
}

static void test_capsule_capsule(void) {
  tl_contact_point c[8];
  tl_shape a = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0, 0, 0.15);
  tl_shape b = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0, 0, 0);
  rotate(&a, 0, 1, 0, TL_PI / 2); /* along x */
  rotate(&b, 1, 0, 0, TL_PI / 2); /* along y */
  int n = collide(&a, &b, 0, c, "capsule cross");
  double p[3] = {0, 0, 0.075};
  TL_CHECK(n == 1, "crossing capsules: %d points", n);
  if (n == 1) check_point(&c[0], 0.05, ZUP, p, TOL, "capsule cross");
  /* parallel, overlapping over x in [0.1, 0.5] */
  b = shape(TL_GEOM_CAPSULE, 0.1, 0.6, 0, 0.4, 0, 0);
  rotate(&b, 0, 1, 0, TL_PI / 2);
  n = collide(&a, &b, 0, c, "capsule parallel");
  TL_CHECK(n == 2, "parallel capsules: %d points", n);
  check_all(c, n, 0.05, ZUP, TOL, "capsule parallel");
  check_has(c, n, 0.1, 0, 0.075, TOL, "capsule parallel");
  check_has(c, n, 0.5, 0, 0.075, TOL, "capsule parallel");
  check_invariance(&a, &b, 0.01, 1, "capsule parallel moved");
  /* end to end along the same line */
  b = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 1.15, 0, 0.15);
  rotate(&b, 0, 1, 0, TL_PI / 2);
  n = collide(&a, &b, 0, c, "capsule end-end");
  double nx[3] = {-1, 0, 0}, pe[3] = {0.575, 0, 0.15};
  TL_CHECK(n == 1, "end to end capsules: %d", n);
  if (n == 1) check_point(&c[0], 0.05, nx, pe, TOL, "capsule end-end");
}

static void test_sphere_box(void) {
  tl_contact_point c[8];
  tl_shape box = shape(TL_GEOM_BOX, 1, 2, 3, 0.1, 0.2, 0.3);
  rotate(&box, 1, 2, 3, 0.7);
  double ax[3][3];
  for (int k = 0; k < 3; k++) tl_v3_set(ax[k], box.rot[k], box.rot[3 + k], box.rot[6 + k]);
  struct {
    double l[3], r, depth, n[3], pa_l[3], pb_l[3];
    const char *what;
  } cases[] = {
      {{0.65, 0, 0}, 0.2, 0.05, {1, 0, 0}, {0.45, 0, 0}, {0.5, 0, 0}, "sphere-box face"},
      {{0.6, 1.1, 0},
       0.2,
       0.2 - sqrt(0.02),
       {M_SQRT1_2, M_SQRT1_2, 0},
       {0.6 - 0.2 * M_SQRT1_2, 1.1 - 0.2 * M_SQRT1_2, 0},
       {0.5, 1, 0},
       "sphere-box edge"},
      {{0.6, 1.1, 1.6},
       0.2,
       0.2 - sqrt(0.03),
       {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)},
       {0.6 - 0.2 / sqrt(3.0), 1.1 - 0.2 / sqrt(3.0), 1.6 - 0.2 / sqrt(3.0)},
       {0.5, 1, 1.5},
       "sphere-box corner"},
      {{0.4, 0, 0}, 0.1, 0.2, {1, 0, 0}, {0.3, 0, 0}, {0.5, 0, 0}, "sphere-box inside"},
      {{0, -0.9, 0.2}, 0.3, 0.4, {0, -1, 0}, {0, -0.6, 0.2}, {0, -1, 0.2}, "sphere-box inside y"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    tl_shape s = shape(TL_GEOM_SPHERE, cases[i].r, 0, 0, 0, 0, 0);
    double w[3], n[3], pos[3];
    tl_m3_mulv(w, box.rot, cases[i].l);
    tl_v3_add(s.pos, w, box.pos);
    tl_m3_mulv(n, box.rot, cases[i].n);
    double ml[3];
    for (int k = 0; k < 3; k++) ml[k] = 0.5 * (cases[i].pa_l[k] + cases[i].pb_l[k]);
    tl_m3_mulv(pos, box.rot, ml);
    tl_v3_add(pos, pos, box.pos);
    int cnt = collide(&s, &box, 0, c, cases[i].what);
    TL_CHECK(cnt == 1, "%s: %d points", cases[i].what, cnt);
    if (cnt == 1) check_point(&c[0], cases[i].depth, n, pos, TOL, cases[i].what);
    check_invariance(&s, &box, 0.01, 1, cases[i].what);
  }
}

static void test_capsule_box(void) {
  tl_contact_point c[8];
  tl_shape box = shape(TL_GEOM_BOX, 2, 2, 1, 0, 0, 0); /* top at z = 0.5 */
  tl_shape cap = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0, 0, 0.59);
  rotate(&cap, 0, 1, 0, TL_PI / 2);
  int n = collide(&cap, &box, 0, c, "capsule lying on box");
  TL_CHECK(n == 2, "capsule lying on box: %d points", n);
  check_all(c, n, 0.01, ZUP, TOL, "capsule lying on box");
  check_has(c, n, -0.5, 0, 0.495, TOL, "capsule lying on box");
  check_has(c, n, 0.5, 0, 0.495, TOL, "capsule lying on box");
  check_invariance(&cap, &box, 0.005, 1, "capsule lying on box moved");
  /* hanging over the edge: the part over the face, x in [0.7, 1] */
  cap.pos[0] = 1.2;
  n = collide(&cap, &box, 0, c, "capsule over edge");
  TL_CHECK(n == 2, "capsule over the edge: %d points", n);
  check_all(c, n, 0.01, ZUP, TOL, "capsule over edge");
  check_has(c, n, 0.7, 0, 0.495, TOL, "capsule over edge");
  check_has(c, n, 1.0, 0, 0.495, TOL, "capsule over edge");
  /* slightly tilted: the raised end beyond the margin drops */
  tl_shape tilt = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0, 0, 0);
  rotate(&tilt, 0, 1, 0, TL_PI / 2 + 0.05);
  tilt.pos[2] = 0.5 + 0.1 + 0.5 * sin(0.05) - 0.01;
  n = collide(&tilt, &box, 0.005, c, "capsule tilted");
  TL_CHECK(n == 1, "tilted capsule: %d points", n);
  if (n == 1) TL_CHECK_NEAR(c[0].depth, 0.01, TOL, "tilted capsule depth");
  n = collide(&tilt, &box, 0.05, c, "capsule tilted, wide margin");
  TL_CHECK(n == 2, "tilted capsule, wide margin: %d points", n);
  /* upright: one point under the lower cap */
  tl_shape up = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0.2, 0.1, 0.5 + 0.1 + 0.5 - 0.01);
  n = collide(&up, &box, 0.02, c, "capsule upright");
  double p[3] = {0.2, 0.1, 0.495};
  TL_CHECK(n == 1, "upright capsule: %d points", n);
  if (n == 1) check_point(&c[0], 0.01, ZUP, p, TOL, "capsule upright");
  /* against an edge */
  tl_shape e = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 1.05, 0, 0.55);
  rotate(&e, 1, 0, 0, TL_PI / 2);
  n = collide(&e, &box, 0, c, "capsule on edge");
  /* point on the capsule: axis - n r; on the box: the edge (1, y, 0.5) */
  double ne[3] = {M_SQRT1_2, 0, M_SQRT1_2}, dist = sqrt(2 * 0.05 * 0.05);
  TL_CHECK(n == 1, "capsule on an edge: %d points", n);
  if (n == 1) {
    double pe[3] = {0.5 * (1.05 - 0.1 * M_SQRT1_2 + 1.0), c[0].pos[1],
                    0.5 * (0.55 - 0.1 * M_SQRT1_2 + 0.5)};
    check_point(&c[0], 0.1 - dist, ne, pe, TOL, "capsule on edge");
    TL_CHECK(fabs(c[0].pos[1]) <= 0.5, "capsule on edge: y %g off the capsule", c[0].pos[1]);
  }
  /* core segment inside the box: general path, pushed out through the top */
  tl_shape deep = shape(TL_GEOM_CAPSULE, 0.1, 1.0, 0, 0, 0, 0.45);
  rotate(&deep, 0, 1, 0, TL_PI / 2);
  n = collide(&deep, &box, 0, c, "capsule deep");
  TL_CHECK(n == 2, "deep capsule: %d points", n);
  check_all(c, n, 0.15, ZUP, 1e-6, "capsule deep");
}

static void test_box_box(void) {
  tl_contact_point c[8];
  tl_shape base = shape(TL_GEOM_BOX, 4, 4, 1, 0, 0, 0);
  tl_shape top = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 0.99);
  int n = collide(&top, &base, 0, c, "box on box");
  TL_CHECK(n == 4, "box resting on box: %d points", n);
  check_all(c, n, 0.01, ZUP, TOL, "box on box");
  for (int i = 0; i < 4; i++)
    check_has(c, n, (i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, 0.495, TOL, "box on box corners");
  check_invariance(&top, &base, 0.005, 1, "box on box moved");
  /* yawed 30 degrees */
  tl_shape yaw = top;
  rotate(&yaw, 0, 0, 1, TL_PI / 6);
  n = collide(&yaw, &base, 0, c, "yawed box on box");
  TL_CHECK(n == 4, "yawed box on box: %d points", n);
  check_all(c, n, 0.01, ZUP, TOL, "yawed box");
  for (int i = 0; i < 4; i++) {
    double l[3] = {(i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, -0.5}, w[3];
    tl_m3_mulv(w, yaw.rot, l);
    check_has(c, n, w[0], w[1], 0.495, TOL, "yawed box corners");
  }
  /* same size, offset: the overlap rectangle's corners */
  tl_shape lower = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 0),
           upper = shape(TL_GEOM_BOX, 1, 1, 1, 0.5, 0.25, 0.98);
  n = collide(&upper, &lower, 0, c, "offset boxes");
  TL_CHECK(n == 4, "offset equal boxes: %d points", n);
  check_all(c, n, 0.02, ZUP, TOL, "offset boxes");
  check_has(c, n, 0.0, -0.25, 0.49, TOL, "offset boxes");
  check_has(c, n, 0.5, 0.5, 0.49, TOL, "offset boxes");
  /* equal boxes exactly aligned: the 4 corners, no duplicates from the clipping */
  upper = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 0.99);
  n = collide(&upper, &lower, 0, c, "aligned equal boxes");
  TL_CHECK(n == 4, "aligned equal boxes: %d points", n);
  check_all(c, n, 0.01, ZUP, TOL, "aligned equal boxes");
  /* speculative */
  tl_shape gap = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 1.005);
  TL_CHECK(collide(&gap, &base, 0.004, c, "box gap") == 0, "box gap 0.005 > margin 0.004 reported");
  n = collide(&gap, &base, 0.01, c, "box gap");
  TL_CHECK(n == 4, "box gap 0.005 < margin 0.01: %d points", n);
  check_all(c, n, -0.005, ZUP, TOL, "speculative box");
  /* tilted about y by 10 degrees, resting on an edge: 2 points */
  double th = 10 * TL_PI / 180;
  tl_shape tilt = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 0.5 + 0.5 * (cos(th) + sin(th)) - 0.01);
  rotate(&tilt, 0, 1, 0, th);
  n = collide(&tilt, &base, 0.01, c, "tilted box");
  TL_CHECK(n == 2, "box resting on an edge: %d points", n);
  check_all(c, n, 0.01, ZUP, TOL, "tilted box");
  check_invariance(&tilt, &base, 0.01, 1, "tilted box moved");
  /* edge on edge, crossing at right angles */
  tl_shape ea = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, sqrt(2.0) - 0.01);
  tl_shape eb = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 0);
  rotate(&ea, 1, 0, 0, TL_PI / 4);
  rotate(&eb, 0, 1, 0, TL_PI / 4);
  n = collide(&ea, &eb, 0, c, "edge-edge");
  double pe[3] = {0, 0, M_SQRT1_2 - 0.005};
  TL_CHECK(n == 1, "edge-edge boxes: %d points", n);
  if (n == 1) check_point(&c[0], 0.01, ZUP, pe, TOL, "edge-edge");
  check_invariance(&ea, &eb, 0.0, 1, "edge-edge moved");
  /* corner down onto a face */
  tl_shape corner = shape(TL_GEOM_BOX, 1, 1, 1, 0.3, -0.2, 0);
  rotate(&corner, 1, 0, 0, TL_PI / 4);
  rotate(&corner, 0, 1, 0, atan(M_SQRT1_2));
  corner.pos[2] = 0.5 + 0.5 * sqrt(3.0) - 0.02;
  n = collide(&corner, &base, 0.01, c, "box corner");
  double pc[3] = {0.3, -0.2, 0.49};
  TL_CHECK(n == 1, "box corner on face: %d points", n);
  if (n == 1) check_point(&c[0], 0.02, ZUP, pc, 1e-9, "box corner");
  /* far apart */
  tl_shape far = shape(TL_GEOM_BOX, 1, 1, 1, 3, 3, 3);
  TL_CHECK(collide(&far, &base, 0.01, c, "far boxes") == 0, "far boxes touch");
}

static void test_planes(void) {
  tl_contact_point c[8], d[8];
  tl_shape plane = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  tl_shape s = shape(TL_GEOM_SPHERE, 0.5, 0, 0, 1, 2, 0.45);
  int n = collide(&s, &plane, 0, c, "sphere-plane");
  double ps[3] = {1, 2, -0.025};
  TL_CHECK(n == 1, "sphere-plane: %d", n);
  if (n == 1) check_point(&c[0], 0.05, ZUP, ps, TOL, "sphere-plane");
  /* tilted plane */
  tl_shape tp = shape(TL_GEOM_PLANE, 0, 0, 0, 0.5, 0, 0);
  rotate(&tp, 1, 1, 0, 0.4);
  double tn[3] = {tp.rot[2], tp.rot[5], tp.rot[8]};
  s = shape(TL_GEOM_SPHERE, 0.3, 0, 0, 0.5 + 0.25 * tn[0] + 0.1, 0.25 * tn[1] + 0.1, 0.25 * tn[2]);
  {
    double w[3];
    tl_v3_sub(w, s.pos, tp.pos);
    double h = tl_v3_dot(w, tn);
    n = collide(&s, &tp, 0, c, "sphere-tilted plane");
    TL_CHECK(n == 1, "sphere-tilted plane: %d", n);
    if (n == 1) check_point(&c[0], 0.3 - h, tn, NULL, TOL, "sphere-tilted plane");
  }
  tl_shape cap = shape(TL_GEOM_CAPSULE, 0.1, 1, 0, 0, 0, 0.09);
  rotate(&cap, 0, 1, 0, TL_PI / 2);
  n = collide(&cap, &plane, 0, c, "capsule-plane");
  TL_CHECK(n == 2, "lying capsule on plane: %d", n);
  check_all(c, n, 0.01, ZUP, TOL, "capsule-plane");
  check_has(c, n, 0.5, 0, -0.005, TOL, "capsule-plane");
  check_has(c, n, -0.5, 0, -0.005, TOL, "capsule-plane");
  tl_shape box = shape(TL_GEOM_BOX, 1, 2, 0.5, 0, 0, 0.24);
  n = collide(&box, &plane, 0.005, c, "box-plane");
  TL_CHECK(n == 4, "flat box on plane: %d", n);
  check_all(c, n, 0.01, ZUP, TOL, "box-plane");
  check_has(c, n, 0.5, 1, -0.005, TOL, "box-plane");
  check_has(c, n, -0.5, -1, -0.005, TOL, "box-plane");
  tl_shape corner = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, 0);
  rotate(&corner, 1, 0, 0, TL_PI / 4);
  rotate(&corner, 0, 1, 0, atan(M_SQRT1_2));
  corner.pos[2] = 0.5 * sqrt(3.0) - 0.01;
  n = collide(&corner, &plane, 0.01, c, "box corner-plane");
  TL_CHECK(n == 1, "box on a corner: %d", n);
  if (n == 1) TL_CHECK_NEAR(c[0].depth, 0.01, TOL, "box corner depth");
  /* a large margin lets more corners in: at most the 4 deepest */
  n = collide(&corner, &plane, 2.0, c, "box corner, big margin");
  TL_CHECK(n == 4, "box, big margin: %d", n);
  tl_shape cyl = shape(TL_GEOM_CYLINDER, 0.3, 0.5, 0, 1, 1, 0.24);
  n = collide(&cyl, &plane, 0.005, c, "cylinder upright");
  TL_CHECK(n == 4, "upright cylinder on plane: %d", n);
  check_all(c, n, 0.01, ZUP, TOL, "cylinder upright");
  for (int i = 0; i < n; i++) {
    double r = hypot(c[i].pos[0] - 1, c[i].pos[1] - 1);
    TL_CHECK_NEAR(r, 0.3, TOL, "cylinder rim radius");
    TL_CHECK_NEAR(c[i].pos[2], -0.005, TOL, "cylinder rim height");
  }
  tl_shape lying = shape(TL_GEOM_CYLINDER, 0.3, 0.5, 0, 0, 0, 0.29);
  rotate(&lying, 0, 1, 0, TL_PI / 2);
  n = collide(&lying, &plane, 0.005, c, "cylinder lying");
  TL_CHECK(n == 2, "lying cylinder on plane: %d", n);
  check_all(c, n, 0.01, ZUP, TOL, "cylinder lying");
  check_has(c, n, 0.25, 0, -0.005, TOL, "cylinder lying");
  check_has(c, n, -0.25, 0, -0.005, TOL, "cylinder lying");
  tl_shape tiltc = shape(TL_GEOM_CYLINDER, 0.3, 0.5, 0, 0, 0, 0);
  rotate(&tiltc, 1, 0, 0, 0.3);
  tiltc.pos[2] = 0.25 * cos(0.3) + 0.3 * sin(0.3) - 0.01;
  n = collide(&tiltc, &plane, 0.005, c, "cylinder tilted");
  TL_CHECK(n == 1, "tilted cylinder on its rim: %d", n);
  if (n == 1) TL_CHECK_NEAR(c[0].depth, 0.01, TOL, "tilted cylinder depth");
  /* hull cube == box */
  make_cube_hull(0.5);
  for (int k = 0; k < 6; k++) {
    tl_shape b = shape(TL_GEOM_BOX, 1, 1, 1, 0.1 * k, -0.2, 0), h = hull_shape(0.1 * k, -0.2, 0);
    double ang = 0.37 * k;
    if (k > 0) {
      rotate(&b, 1, 0.3 * k, 0.2, ang);
      rotate(&h, 1, 0.3 * k, 0.2, ang);
    }
    double lo[3], hi[3];
    tl_shape_aabb(&b, 0, lo, hi);
    b.pos[2] = h.pos[2] = -lo[2] - 0.01;
    int nb = collide(&b, &plane, 0.003, c, "box-plane");
    int nh = collide(&h, &plane, 0.003, d, "hull-plane");
    TL_CHECK(nb >= 1, "box vs plane pose %d: %d", k, nb);
    check_same_set(c, nb, d, nh, 1e-12, "hull-plane == box-plane");
  }
  check_invariance(&box, &plane, 0.005, 1, "box-plane moved");
  check_invariance(&lying, &plane, 0.005, 1, "cylinder-plane moved");
  tl_shape p2 = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 1);
  TL_CHECK(collide(&plane, &p2, 10, c, "plane-plane") == 0, "plane-plane touches");
}

static void test_cylinders(void) {
  tl_contact_point c[8];
  tl_shape box = shape(TL_GEOM_BOX, 2, 2, 1, 0, 0, 0);
  tl_shape cyl = shape(TL_GEOM_CYLINDER, 0.3, 0.5, 0, 0.2, -0.1, 0.74);
  int n = collide(&cyl, &box, 0, c, "cylinder on box");
  TL_CHECK(n == 4, "upright cylinder on box: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "cylinder on box");
  for (int i = 0; i < n; i++) {
    TL_CHECK_NEAR(hypot(c[i].pos[0] - 0.2, c[i].pos[1] + 0.1), 0.3, 1e-7, "cylinder on box rim");
    TL_CHECK_NEAR(c[i].pos[2], 0.495, 1e-7, "cylinder on box height");
  }
  check_invariance(&cyl, &box, 0.005, 0, "cylinder on box moved");
  /* speculative */
  cyl.pos[2] = 0.755;
  TL_CHECK(collide(&cyl, &box, 0.004, c, "cylinder gap") == 0, "cylinder gap 0.005 > margin 0.004");
  n = collide(&cyl, &box, 0.01, c, "cylinder gap");
  TL_CHECK(n == 4, "cylinder gap 0.005 < margin 0.01: %d", n);
  check_all(c, n, -0.005, ZUP, 1e-7, "cylinder gap");
  /* lying on the box */
  tl_shape lying = shape(TL_GEOM_CYLINDER, 0.3, 0.5, 0, 0, 0.3, 0.79);
  rotate(&lying, 0, 1, 0, TL_PI / 2);
  n = collide(&lying, &box, 0, c, "cylinder lying on box");
  TL_CHECK(n == 2, "lying cylinder on box: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "cylinder lying on box");
  check_has(c, n, 0.25, 0.3, 0.495, 1e-7, "cylinder lying on box");
  check_has(c, n, -0.25, 0.3, 0.495, 1e-7, "cylinder lying on box");
  check_invariance(&lying, &box, 0.005, 1, "lying cylinder moved");
  /* against a box edge (one point, diagonal normal) */
  tl_shape edge = shape(TL_GEOM_CYLINDER, 0.2, 0.5, 0, 1.0 + 0.2 * M_SQRT1_2 - 0.01, 0,
                        0.5 + 0.2 * M_SQRT1_2 - 0.01);
  rotate(&edge, 1, 0, 0, TL_PI / 2);
  n = collide(&edge, &box, 0, c, "cylinder on edge");
  double ne[3] = {M_SQRT1_2, 0, M_SQRT1_2};
  TL_CHECK(n == 1, "cylinder against a box edge: %d", n);
  if (n == 1) check_point(&c[0], 0.01 * sqrt(2.0), ne, NULL, 1e-5, "cylinder on edge");

  /* sphere-cylinder (analytic) */
  tl_shape cy = shape(TL_GEOM_CYLINDER, 0.3, 0.5, 0, 0, 0, 0);
  rotate(&cy, 1, 1, 0, 0.5);
  struct {
    double l[3], r, depth, n[3];
    const char *what;
  } sc[] = {
      {{0.1, 0.05, 0.25 + 0.15}, 0.2, 0.05, {0, 0, 1}, "sphere on cap"},
      {{0.45, 0, 0}, 0.2, 0.05, {1, 0, 0}, "sphere at side"},
      {{0.4, 0, 0.35}, 0.2, 0.2 - sqrt(0.02), {M_SQRT1_2, 0, M_SQRT1_2}, "sphere at rim"},
      {{0, 0.25, 0.1}, 0.1, 0.15, {0, 1, 0}, "sphere inside, radial"},
      {{0, 0.05, -0.2}, 0.1, 0.15, {0, 0, -1}, "sphere inside, axial"},
  };
  for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
    tl_shape s = shape(TL_GEOM_SPHERE, sc[i].r, 0, 0, 0, 0, 0);
    double n_w[3];
    tl_m3_mulv(s.pos, cy.rot, sc[i].l);
    tl_m3_mulv(n_w, cy.rot, sc[i].n);
    n = collide(&s, &cy, 0, c, sc[i].what);
    TL_CHECK(n == 1, "%s: %d", sc[i].what, n);
    if (n == 1) check_point(&c[0], sc[i].depth, n_w, NULL, TOL, sc[i].what);
  }
  /* cylinder stacked on cylinder */
  tl_shape low = shape(TL_GEOM_CYLINDER, 0.4, 0.5, 0, 0, 0, 0);
  tl_shape high = shape(TL_GEOM_CYLINDER, 0.3, 0.4, 0, 0.05, 0, 0.25 + 0.2 - 0.01);
  n = collide(&high, &low, 0, c, "cylinder on cylinder");
  TL_CHECK(n >= 3, "cylinder stacked on cylinder: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "cylinder on cylinder");
  /* capsule lying across a cylinder's cap */
  tl_shape cap = shape(TL_GEOM_CAPSULE, 0.05, 0.4, 0, 0, 0, 0.25 + 0.05 - 0.01);
  rotate(&cap, 0, 1, 0, TL_PI / 2);
  n = collide(&cap, &low, 0, c, "capsule on cylinder");
  TL_CHECK(n == 2, "capsule lying on a cylinder cap: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "capsule on cylinder");
  check_has(c, n, 0.2, 0, 0.245, 1e-7, "capsule on cylinder");
  /* two lying cylinders, parallel */
  tl_shape l1 = shape(TL_GEOM_CYLINDER, 0.2, 1.0, 0, 0, 0, 0),
           l2 = shape(TL_GEOM_CYLINDER, 0.2, 1.0, 0, 0.3, 0, 0.39);
  rotate(&l1, 0, 1, 0, TL_PI / 2);
  rotate(&l2, 0, 1, 0, TL_PI / 2);
  n = collide(&l2, &l1, 0, c, "parallel cylinders");
  TL_CHECK(n == 2, "parallel lying cylinders: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-6, "parallel cylinders");
  check_has(c, n, -0.2, 0, 0.195, 1e-6, "parallel cylinders");
  check_has(c, n, 0.5, 0, 0.195, 1e-6, "parallel cylinders");
}

static void test_hulls(void) {
  tl_contact_point c[8], d[8];
  make_cube_hull(0.5);
  /* hull vs sphere == box vs sphere */
  tl_shape h = hull_shape(0.1, -0.3, 0.2), b = shape(TL_GEOM_BOX, 1, 1, 1, 0.1, -0.3, 0.2);
  rotate(&h, 0.3, -1, 2, 0.9);
  rotate(&b, 0.3, -1, 2, 0.9);
  int checked = 0;
  for (int ix = -4; ix <= 4; ix++)
    for (int iy = -4; iy <= 4; iy++)
      for (int iz = -4; iz <= 4; iz++) {
        tl_shape s =
            shape(TL_GEOM_SPHERE, 0.25, 0, 0, 0.1 + 0.21 * ix, -0.3 + 0.19 * iy, 0.2 + 0.2 * iz);
        int nb = collide(&s, &b, 0.02, c, "sphere-box");
        int nh = collide(&s, &h, 0.02, d, "sphere-hull");
        if (!TL_CHECK(nb == nh, "sphere at (%d %d %d): hull %d vs box %d", ix, iy, iz, nh, nb))
          continue;
        if (nb == 1) {
          double dn[3], dp[3];
          tl_v3_sub(dn, c[0].normal, d[0].normal);
          tl_v3_sub(dp, c[0].pos, d[0].pos);
          /* centre inside with faces equally near: any of them is right */
          int tie = c[0].depth > 0.25 + 1e-9;
          int ok = fabs(c[0].depth - d[0].depth) < 1e-9;
          ok = ok && (tie || (tl_v3_norm(dp) < 1e-9 && tl_v3_norm(dn) < 1e-9));
          TL_CHECK(ok, "sphere at (%d %d %d): hull depth %g vs box %g", ix, iy, iz, d[0].depth,
                   c[0].depth);
          checked++;
        }
      }
  TL_CHECK(checked > 100, "hull-sphere: only %d contacts compared", checked);
  /* hull resting on a box */
  tl_shape base = shape(TL_GEOM_BOX, 4, 4, 1, 0, 0, 0);
  tl_shape hr = hull_shape(0.2, 0.1, 0.99);
  rotate(&hr, 0, 0, 1, 0.3);
  int n = collide(&hr, &base, 0, c, "hull on box");
  TL_CHECK(n == 4, "hull resting on a box: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "hull on box");
  tl_shape br = shape(TL_GEOM_BOX, 1, 1, 1, 0.2, 0.1, 0.99);
  rotate(&br, 0, 0, 1, 0.3);
  int nb = collide(&br, &base, 0, d, "box on box");
  check_same_set(c, n, d, nb, 1e-7, "hull on box == box on box");
  check_invariance(&hr, &base, 0.005, 1, "hull on box moved");
  /* hull on hull */
  tl_shape hl = hull_shape(0, 0, 0), hu = hull_shape(0.3, 0.2, 0.98);
  n = collide(&hu, &hl, 0, c, "hull on hull");
  TL_CHECK(n == 4, "hull on hull: %d", n);
  check_all(c, n, 0.02, ZUP, 1e-7, "hull on hull");
  check_has(c, n, -0.2, -0.3, 0.49, 1e-7, "hull on hull");
  check_has(c, n, 0.5, 0.5, 0.49, 1e-7, "hull on hull");
  /* aligned equal hulls: the 4 corners once each */
  tl_shape ha = hull_shape(0, 0, 0.99);
  n = collide(&ha, &hl, 0, c, "aligned hulls");
  TL_CHECK(n == 4, "aligned equal hulls: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "aligned hulls");
  /* tilted hull on its edge: 2 points */
  double th = 0.2;
  tl_shape ht = hull_shape(0, 0, 0.5 + 0.5 * (cos(th) + sin(th)) - 0.01);
  rotate(&ht, 0, 1, 0, th);
  n = collide(&ht, &base, 0.005, c, "hull on edge");
  TL_CHECK(n == 2, "hull on an edge: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "hull on edge");
  /* capsule lying on a hull, cylinder standing on a hull */
  tl_shape cap = shape(TL_GEOM_CAPSULE, 0.1, 0.6, 0, 0, 0.1, 0.59);
  rotate(&cap, 0, 1, 0, TL_PI / 2);
  n = collide(&cap, &hl, 0, c, "capsule on hull");
  TL_CHECK(n == 2, "capsule lying on a hull: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "capsule on hull");
  check_has(c, n, 0.3, 0.1, 0.495, 1e-7, "capsule on hull");
  tl_shape cyl = shape(TL_GEOM_CYLINDER, 0.2, 0.4, 0, 0.1, 0, 0.69);
  n = collide(&cyl, &hl, 0, c, "cylinder on hull");
  TL_CHECK(n == 4, "cylinder standing on a hull: %d", n);
  check_all(c, n, 0.01, ZUP, 1e-7, "cylinder on hull");
  /* separated hulls */
  tl_shape hf = hull_shape(3, 0, 0);
  TL_CHECK(collide(&hf, &hl, 0.1, c, "far hulls") == 0, "far hulls touch");
  /* a mesh without a hull never touches */
  tl_shape bad = shape(TL_GEOM_MESH, 1, 1, 1, 0, 0, 0);
  TL_CHECK(collide(&bad, &base, 1, c, "hull-less mesh") == 0, "mesh without hull touches");
}

/* ---------------- heightmaps ---------------- */

static double hbuf[41 * 41];

static tl_shape heightmap_shape(tl_heightmap *hm, int nx, int ny, double x0, double y0, double dx,
                                double dy) {
  hm->nx = nx;
  hm->ny = ny;
  hm->x0 = x0;
  hm->y0 = y0;
  hm->dx = dx;
  hm->dy = dy;
  hm->heights = hbuf;
  tl_shape s = shape(TL_GEOM_HEIGHTMAP, 0, 0, 0, 0, 0, 0);
  s.heightmap = hm;
  return s;
}

static void test_heightmap(void) {
  tl_contact_point c[8], d[8];
  tl_heightmap hm;
  for (int i = 0; i < 41 * 41; i++) hbuf[i] = 0;
  tl_shape hf = heightmap_shape(&hm, 21, 21, -2.5, -2.5, 0.25, 0.25);
  tl_shape plane = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  make_cube_hull(0.5);

  /* a flat grid gives the plane's contacts */
  tl_shape shapes[10];
  int ns = 0;
  shapes[ns++] = shape(TL_GEOM_SPHERE, 0.3, 0, 0, 0.5, 0.5, 0.29);  /* over a grid vertex */
  shapes[ns++] = shape(TL_GEOM_SPHERE, 0.3, 0, 0, 0.1, 0.37, 0.28); /* inside a triangle */
  shapes[ns++] = shape(TL_GEOM_BOX, 1, 0.5, 0.4, 0.0, 0.0, 0.19);   /* corners on grid vertices */
  shapes[ns] = shape(TL_GEOM_BOX, 0.8, 0.6, 0.4, 0.13, -0.31, 0.195);
  rotate(&shapes[ns++], 0, 0, 1, 0.4);
  shapes[ns] = shape(TL_GEOM_CAPSULE, 0.1, 0.8, 0, 0.2, 0.1, 0.09);
  rotate(&shapes[ns++], 0.3, 1, 0, TL_PI / 2);
  shapes[ns++] = shape(TL_GEOM_CYLINDER, 0.3, 0.4, 0, -0.4, 0.6, 0.19);
  shapes[ns] = shape(TL_GEOM_CYLINDER, 0.2, 0.6, 0, 0.7, -0.2, 0.19);
  rotate(&shapes[ns++], 1, 0, 0, TL_PI / 2);
  shapes[ns] = hull_shape(-0.3, -0.2, 0.49);
  rotate(&shapes[ns++], 0, 0, 1, 0.2);
  for (int i = 0; i < ns; i++) {
    char what[64];
    snprintf(what, sizeof(what), "flat grid == plane, shape %d", i);
    int np = collide(&shapes[i], &plane, 0.005, c, what);
    int nh = collide(&shapes[i], &hf, 0.005, d, what);
    TL_CHECK(np >= 1, "%s: plane gave %d", what, np);
    check_same_set(c, np, d, nh, 1e-9, what);
  }
  /* a rotated, moved heightmap with the shape moved alike */
  check_invariance(&shapes[3], &hf, 0.005, 1, "flat grid box moved");
  check_invariance(&shapes[1], &hf, 0.005, 1, "flat grid sphere moved");

  /* outside the grid: nothing; straddling its border: only the part inside */
  tl_shape out = shape(TL_GEOM_SPHERE, 0.3, 0, 0, 3.0, 0, 0.2);
  TL_CHECK(collide(&out, &hf, 0.01, c, "off the grid") == 0, "sphere off the grid touches");
  tl_shape edge = shape(TL_GEOM_BOX, 1, 1, 0.4, 2.5, 0, 0.19);
  int n = collide(&edge, &hf, 0.005, c, "box over the grid border");
  TL_CHECK(n == 2, "box straddling the grid border: %d points", n);
  for (int i = 0; i < n; i++)
    TL_CHECK(c[i].pos[0] <= 2.5 + 1e-9, "contact off the grid at x %g", c[i].pos[0]);

  /* a slope z = 0.3 x: the slope normal */
  for (int iy = 0; iy < 21; iy++)
    for (int ix = 0; ix < 21; ix++) hbuf[iy * 21 + ix] = 0.3 * (-2.5 + 0.25 * ix);
  double sn[3] = {-0.3, 0, 1};
  tl_v3_normalize(sn);
  tl_shape s = shape(TL_GEOM_SPHERE, 0.2, 0, 0, 0.1, 0.05, 0);
  for (int k = 0; k < 3; k++) s.pos[k] += sn[k] * 0.19;
  s.pos[2] += 0.3 * 0.1;
  n = collide(&s, &hf, 0, c, "sphere on slope");
  TL_CHECK(n == 1, "sphere on a slope: %d", n);
  if (n == 1) check_point(&c[0], 0.01, sn, NULL, 1e-9, "sphere on slope");
  tl_shape bs = shape(TL_GEOM_BOX, 0.6, 0.4, 0.2, 0, 0, 0);
  rotate(&bs, 0, 1, 0, -atan(0.3));
  double foot[3] = {0.2, 0.1,
                    0.3 * 0.2}; /* centre = point on the slope + normal (half height - 0.01) */
  for (int k = 0; k < 3; k++) bs.pos[k] = foot[k] + sn[k] * (0.1 - 0.01);
  n = collide(&bs, &hf, 0.005, c, "box on slope");
  TL_CHECK(n == 4, "box resting on a slope: %d", n);
  check_all(c, n, 0.01, sn, 1e-9, "box on slope");
  tl_shape cs = shape(TL_GEOM_CYLINDER, 0.2, 0.3, 0, 0, 0, 0);
  rotate(&cs, 0, 1, 0, -atan(0.3));
  double cfoot[3] = {-0.4, 0, 0.3 * -0.4};
  for (int k = 0; k < 3; k++) cs.pos[k] = cfoot[k] + sn[k] * (0.15 - 0.01);
  n = collide(&cs, &hf, 0.005, c, "cylinder on slope");
  TL_CHECK(n == 4, "cylinder standing on a slope: %d", n);
  check_all(c, n, 0.01, sn, 1e-9, "cylinder on slope");

  /* a peak under a box's bottom face: no corner touches, the peak does */
  for (int i = 0; i < 21 * 21; i++) hbuf[i] = 0;
  hbuf[10 * 21 + 10] = 0.1; /* vertex (0, 0) */
  tl_shape over = shape(TL_GEOM_BOX, 1.2, 1.2, 0.4, 0.05, -0.03, 0.29);
  n = collide(&over, &hf, 0.005, c, "box over a peak");
  TL_CHECK(n == 1, "box over a peak: %d points", n);
  if (n == 1) {
    TL_CHECK_NEAR(c[0].depth, 0.01, 1e-6, "peak depth");
    TL_CHECK(c[0].normal[2] > 0.999, "peak normal (%g %g %g)", c[0].normal[0], c[0].normal[1],
             c[0].normal[2]);
    TL_CHECK(fabs(c[0].pos[0]) < 1e-6 && fabs(c[0].pos[1]) < 1e-6, "peak position (%g %g)",
             c[0].pos[0], c[0].pos[1]);
  }
  /* a ridge across a capsule's middle (ends in the air) */
  for (int iy = 0; iy < 21; iy++) hbuf[iy * 21 + 10] = 0.1; /* along x = 0 */
  tl_shape capr = shape(TL_GEOM_CAPSULE, 0.05, 1.0, 0, 0, 0.1, 0.14);
  rotate(&capr, 0, 1, 0, TL_PI / 2);
  n = collide(&capr, &hf, 0.005, c, "capsule on a ridge");
  TL_CHECK(n >= 1, "capsule across a ridge: %d points", n);
  for (int i = 0; i < n; i++) {
    TL_CHECK_NEAR(c[i].depth, 0.01, 1e-6, "ridge depth");
    TL_CHECK(fabs(c[i].pos[0]) < 1e-6, "ridge contact at x %g", c[i].pos[0]);
  }
  tl_shape p2 = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  TL_CHECK(collide(&hf, &p2, 10, c, "heightmap-plane") == 0, "heightmap-plane touches");
  TL_CHECK(collide(&hf, &hf, 10, c, "heightmap-heightmap") == 0, "heightmap-heightmap touches");
}

/* ---------------- bounding boxes ---------------- */

static void check_box(const double lo[3], const double hi[3], const double elo[3],
                      const double ehi[3], const char *what) {
  for (int k = 0; k < 3; k++) {
    char buf[96];
    snprintf(buf, sizeof(buf), "%s lo[%d]", what, k);
    TL_CHECK_NEAR(lo[k], elo[k], 1e-12, buf);
    snprintf(buf, sizeof(buf), "%s hi[%d]", what, k);
    TL_CHECK_NEAR(hi[k], ehi[k], 1e-12, buf);
  }
}

static void test_aabb(void) {
  double lo[3], hi[3];
  tl_shape s = shape(TL_GEOM_SPHERE, 0.5, 0, 0, 1, 2, 3);
  tl_shape_aabb(&s, 0.1, lo, hi);
  check_box(lo, hi, (double[]){0.4, 1.4, 2.4}, (double[]){1.6, 2.6, 3.6}, "sphere aabb");
  tl_shape b = shape(TL_GEOM_BOX, 2, 1, 0.5, 0, 0, 0);
  rotate(&b, 0, 0, 1, TL_PI / 4);
  tl_shape_aabb(&b, 0, lo, hi);
  double e = 1.5 * M_SQRT1_2;
  check_box(lo, hi, (double[]){-e, -e, -0.25}, (double[]){e, e, 0.25}, "box aabb");
  tl_shape cap = shape(TL_GEOM_CAPSULE, 0.1, 1, 0, 0, 0, 0);
  rotate(&cap, 0, 1, 0, TL_PI / 2);
  tl_shape_aabb(&cap, 0, lo, hi);
  check_box(lo, hi, (double[]){-0.6, -0.1, -0.1}, (double[]){0.6, 0.1, 0.1}, "capsule aabb");
  tl_shape cyl = shape(TL_GEOM_CYLINDER, 0.2, 1, 0, 0, 0, 0);
  rotate(&cyl, 1, 0, 0, TL_PI / 6);
  tl_shape_aabb(&cyl, 0, lo, hi);
  double ey = 0.5 * sin(TL_PI / 6) + 0.2 * cos(TL_PI / 6),
         ez = 0.5 * cos(TL_PI / 6) + 0.2 * sin(TL_PI / 6);
  check_box(lo, hi, (double[]){-0.2, -ey, -ez}, (double[]){0.2, ey, ez}, "cylinder aabb");
  make_cube_hull(0.5);
  tl_shape h = hull_shape(1, 0, 0);
  rotate(&h, 0, 0, 1, TL_PI / 4);
  tl_shape_aabb(&h, 0.01, lo, hi);
  check_box(lo, hi, (double[]){1 - M_SQRT1_2 - 0.01, -M_SQRT1_2 - 0.01, -0.51},
            (double[]){1 + M_SQRT1_2 + 0.01, M_SQRT1_2 + 0.01, 0.51}, "hull aabb");
  tl_heightmap hm;
  for (int i = 0; i < 4 * 3; i++) hbuf[i] = 0.1 * i;
  tl_shape hf = heightmap_shape(&hm, 4, 3, -1, -2, 0.5, 1.0);
  hf.pos[2] = 1;
  tl_shape_aabb(&hf, 0, lo, hi);
  check_box(lo, hi, (double[]){-1, -2, 1 - 1.0}, (double[]){0.5, 0, 2.1}, "heightmap aabb");
  tl_shape p = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0.5);
  tl_shape_aabb(&p, 0.1, lo, hi);
  TL_CHECK(isinf(lo[0]) && lo[0] < 0 && isinf(hi[0]) && isinf(lo[1]) && isinf(hi[1]) &&
               isinf(lo[2]) && lo[2] < 0,
           "plane aabb unbounded");
  TL_CHECK_NEAR(hi[2], 0.6, 1e-12, "plane aabb top");
  rotate(&p, 1, 0, 0, 0.3);
  tl_shape_aabb(&p, 0.1, lo, hi);
  TL_CHECK(isinf(hi[2]) && isinf(lo[2]), "tilted plane aabb infinite");
}

/* ---------------- the MPR path against analytic answers ---------------- */

static void random_rot(double R[9]) {
  double ax[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5};
  if (tl_v3_normalize(ax) < 1e-3) tl_v3_set(ax, 0, 0, 1);
  tl_m3_axis_angle(R, ax, 2 * TL_PI * urand());
}

/* tl_np_convex (libccd MPR + refinement) on pairs with an exact answer:
 * same depth and normal, for penetrating and speculative random poses. */
static void test_mpr_vs_analytic(void) {
  int compared = 0, worst_i = -1;
  double worst = 0;
  for (int i = 0; i < 600; i++) {
    tl_shape a, b;
    int kind = i % 3;
    if (kind == 0) { /* sphere - box */
      a = shape(TL_GEOM_SPHERE, 0.1 + 0.3 * urand(), 0, 0, 0, 0, 0);
      b = shape(TL_GEOM_BOX, 0.2 + urand(), 0.2 + urand(), 0.2 + urand(), 0, 0, 0);
    } else if (kind == 1) { /* sphere - cylinder */
      a = shape(TL_GEOM_SPHERE, 0.1 + 0.3 * urand(), 0, 0, 0, 0, 0);
      b = shape(TL_GEOM_CYLINDER, 0.1 + 0.4 * urand(), 0.1 + urand(), 0, 0, 0, 0);
    } else { /* capsule - capsule, not parallel */
      a = shape(TL_GEOM_CAPSULE, 0.05 + 0.2 * urand(), 0.2 + urand(), 0, 0, 0, 0);
      b = shape(TL_GEOM_CAPSULE, 0.05 + 0.2 * urand(), 0.2 + urand(), 0, 0, 0, 0);
      random_rot(a.rot);
    }
    random_rot(b.rot);
    /* a random direction, distance chosen near contact */
    double dir[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5};
    tl_v3_normalize(dir);
    double lo[3], hi[3];
    tl_shape_aabb(&b, 0, lo, hi);
    double reach = 0.5 * (hi[0] - lo[0] + hi[1] - lo[1] + hi[2] - lo[2]) / 3 + a.size[0];
    tl_v3_scale(a.pos, dir, reach * (0.6 + 0.6 * urand()));
    tl_contact_point ref[8], got[8];
    int nr = tl_collide(&a, &b, 0.02, ref);
    if (nr != 1 || ref[0].depth > 0.5 * a.size[0]) continue; /* parallel capsules, deep cases */
    int ng = tl_np_convex(&a, &b, 0.02, got);
    if (!TL_CHECK(ng >= 1, "mpr pair %d (kind %d): no contact, analytic depth %g", i, kind,
                  ref[0].depth))
      continue;
    double dn[3];
    tl_v3_sub(dn, got[0].normal, ref[0].normal);
    double err = fmax(fabs(got[0].depth - ref[0].depth), tl_v3_norm(dn) * 1e-2);
    if (err > worst) {
      worst = err;
      worst_i = i;
    }
    TL_CHECK(fabs(got[0].depth - ref[0].depth) < 1e-6, "mpr pair %d (kind %d): depth %.9g vs %.9g",
             i, kind, got[0].depth, ref[0].depth);
    TL_CHECK(tl_v3_norm(dn) < 1e-4, "mpr pair %d (kind %d): normal off by %g", i, kind,
             tl_v3_norm(dn));
    compared++;
  }
  TL_CHECK(compared > 150, "mpr vs analytic: only %d compared", compared);
  printf("mpr vs analytic: %d pairs, worst error %.3g (pair %d)\n", compared, worst, worst_i);
}

/* ---------------- random poses of every pair: invariants only ---------------- */

static void test_fuzz(void) {
  tl_heightmap hm;
  for (int iy = 0; iy < 15; iy++)
    for (int ix = 0; ix < 15; ix++)
      hbuf[iy * 15 + ix] = 0.3 * sin(0.7 * ix) * cos(0.5 * iy) + 0.05 * ((ix * 7 + iy * 3) % 5);
  tl_shape hf = heightmap_shape(&hm, 15, 15, -1.4, -1.4, 0.2, 0.2);
  make_cube_hull(0.3);
  int total = 0;
  for (int i = 0; i < 3000; i++) {
    tl_shape s[2];
    for (int k = 0; k < 2; k++) {
      int t = (int)(urand() * 7);
      s[k] = shape((tl_geom_type)t, 0.1 + 0.4 * urand(), 0.1 + 0.6 * urand(), 0.1 + 0.6 * urand(),
                   0, 0, 0);
      random_rot(s[k].rot);
      for (int j = 0; j < 3; j++) s[k].pos[j] = 0.8 * (urand() - 0.5);
      if (t == TL_GEOM_MESH) s[k].hull = &cube_hull;
      if (t == TL_GEOM_HEIGHTMAP) {
        s[k] = hf;
        s[k].pos[2] = -0.2;
      }
      if (t == TL_GEOM_PLANE) s[k].pos[2] = -0.3;
    }
    tl_contact_point c[8];
    double margin = urand() < 0.5 ? 0 : 0.05 * urand();
    total += collide(&s[0], &s[1], margin, c, "fuzz");
  }
  printf("fuzz: %d contacts\n", total);
}

/* A sphere lowered over curved (saddle-shaped) terrain sees a contact at
 * every height within the margin, with the depth falling continuously: an
 * edge contact must not be dropped because grid points beyond the edge's two
 * triangles rise above it (regression: ANYmal's foot met this terrain 4.9 mm
 * deep without a speculative contact first). */
static double saddle_terrain(double x, double y) {
  const double pi = 3.14159265358979323846;
  return 0.025 * (0.6 * sin(2 * pi * x / 0.45 + 0.3) * cos(2 * pi * y / 0.6) + 0.4 * sin(2 * pi * (x + y) / 0.35));
}

/* Height of the heightmap's triangulated surface at (x, y): cells split along
 * the (ix, iy)-(ix+1, iy+1) diagonal. */
static double grid_height(const tl_heightmap *hm, double x, double y) {
  double fx = (x - hm->x0) / hm->dx, fy = (y - hm->y0) / hm->dy;
  int ix = (int)floor(fx), iy = (int)floor(fy);
  double u = fx - ix, v = fy - iy;
  const double *h = hm->heights;
  double h00 = h[iy * hm->nx + ix], h10 = h[iy * hm->nx + ix + 1], h01 = h[(iy + 1) * hm->nx + ix];
  double h11 = h[(iy + 1) * hm->nx + ix + 1];
  return u >= v ? h00 + u * (h10 - h00) + v * (h11 - h10) : h00 + v * (h01 - h00) + u * (h11 - h01);
}

static void test_heightmap_curved_continuity(void) {
  enum { N = 61 };
  static double h[N * N];
  for (int iy = 0; iy < N; iy++)
    for (int ix = 0; ix < N; ix++) h[iy * N + ix] = saddle_terrain(-1.5 + ix * 0.05, -1.5 + iy * 0.05);
  tl_heightmap hm = {N, N, -1.5, -1.5, 0.05, 0.05, h};
  int missing = 0, jumps = 0, probes = 0;
  for (int k = 0; k < 400; k++) { /* a grid of drop points over the terrain */
    double x = -0.9 + 0.0451 * (k % 20) * 2, y = -0.9 + 0.0433 * (k / 20) * 2, prev = NAN;
    for (int j = 0; j <= 40; j++) {
      tl_shape a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      a.type = TL_GEOM_SPHERE;
      a.size[0] = 0.03;
      a.rot[0] = a.rot[4] = a.rot[8] = 1;
      b.type = TL_GEOM_HEIGHTMAP;
      b.rot[0] = b.rot[4] = b.rot[8] = 1;
      b.heightmap = &hm;
      a.pos[0] = x;
      a.pos[1] = y;
      a.pos[2] = grid_height(&hm, x, y) + 0.03 + 0.004 - 0.00025 * j; /* 4 mm above to 6 mm into the surface */
      tl_contact_point pts[TL_MAX_PAIR_CONTACTS];
      int n = tl_collide(&a, &b, 0.005, pts);
      double deepest = -INFINITY;
      for (int i = 0; i < n; i++) deepest = fmax(deepest, pts[i].depth);
      probes++;
      missing += n == 0;
      if (n && !isnan(prev) && fabs(deepest - prev) > 0.001) jumps++;
      prev = n ? deepest : NAN;
    }
  }
  TL_CHECK(missing == 0, "curved heightmap: %d of %d sphere heights within the margin had no contact", missing, probes);
  TL_CHECK(jumps == 0, "curved heightmap: the depth jumped by more than 1 mm between 0.25 mm steps %d times", jumps);
}

/* ---------------- hull graphs (collide_plane.c, hull_walk) ---------------- */

/* A UV sphere of radius r (nlat rings between the poles, nlon meridians)
 * and a flat n-gon prism (radius r, height 2 hz, its faces fanned): convex
 * hulls with many vertices, triangles counter-clockwise from outside. */
enum { UV_LAT = 14, UV_LON = 24, UV_NV = UV_LAT * UV_LON + 2, UV_NF = 2 * UV_LON * UV_LAT,
       PR_N = 40, PR_NV = 2 * PR_N, PR_NF = 2 * (PR_N - 2) + 2 * PR_N };
static double uv_vert[UV_NV][3], pr_vert[PR_NV][3];
static int uv_face[UV_NF][3], pr_face[PR_NF][3];

static void make_uv_sphere(tl_hull *h, double r) {
  int nv = 0, nf = 0;
  tl_v3_set(uv_vert[nv++], 0, 0, r);
  for (int i = 1; i <= UV_LAT; i++)
    for (int j = 0; j < UV_LON; j++) {
      double th = TL_PI * i / (UV_LAT + 1), ph = 2 * TL_PI * j / UV_LON;
      tl_v3_set(uv_vert[nv++], r * sin(th) * cos(ph), r * sin(th) * sin(ph), r * cos(th));
    }
  tl_v3_set(uv_vert[nv++], 0, 0, -r);
  for (int j = 0; j < UV_LON; j++) { /* caps */
    int a = 1 + j, b = 1 + (j + 1) % UV_LON, c = 1 + (UV_LAT - 1) * UV_LON + j, d = 1 + (UV_LAT - 1) * UV_LON + (j + 1) % UV_LON;
    uv_face[nf][0] = 0, uv_face[nf][1] = a, uv_face[nf++][2] = b;
    uv_face[nf][0] = UV_NV - 1, uv_face[nf][1] = d, uv_face[nf++][2] = c;
  }
  for (int i = 0; i + 1 < UV_LAT; i++) /* bands */
    for (int j = 0; j < UV_LON; j++) {
      int a = 1 + i * UV_LON + j, b = 1 + i * UV_LON + (j + 1) % UV_LON, c = a + UV_LON, d = b + UV_LON;
      uv_face[nf][0] = a, uv_face[nf][1] = c, uv_face[nf++][2] = d;
      uv_face[nf][0] = a, uv_face[nf][1] = d, uv_face[nf++][2] = b;
    }
  memset(h, 0, sizeof(*h));
  h->nvert = nv, h->vert = &uv_vert[0][0], h->nface = nf, h->face = &uv_face[0][0];
  tl_hull_bounds(h);
}

static void make_prism(tl_hull *h, double r, double hz) {
  int nf = 0;
  for (int j = 0; j < PR_N; j++) {
    double ph = 2 * TL_PI * j / PR_N;
    tl_v3_set(pr_vert[j], r * cos(ph), r * sin(ph), -hz);
    tl_v3_set(pr_vert[PR_N + j], r * cos(ph), r * sin(ph), hz);
  }
  for (int j = 1; j + 1 < PR_N; j++) { /* bottom and top fans */
    pr_face[nf][0] = 0, pr_face[nf][1] = j + 1, pr_face[nf++][2] = j;
    pr_face[nf][0] = PR_N, pr_face[nf][1] = PR_N + j, pr_face[nf++][2] = PR_N + j + 1;
  }
  for (int j = 0; j < PR_N; j++) {
    int a = j, b = (j + 1) % PR_N, c = PR_N + j, d = PR_N + b;
    pr_face[nf][0] = a, pr_face[nf][1] = b, pr_face[nf++][2] = d;
    pr_face[nf][0] = a, pr_face[nf][1] = d, pr_face[nf++][2] = c;
  }
  memset(h, 0, sizeof(*h));
  h->nvert = PR_NV, h->vert = &pr_vert[0][0], h->nface = nf, h->face = &pr_face[0][0];
  tl_hull_bounds(h);
}

/* The vertex-graph walk of a hull against a plane picks exactly the contacts
 * of the scan over every vertex (same points, depths and order), from any
 * start, for random poses of a dense sphere-like hull and a flat prism; the
 * deepest contact is the lowest vertex; a prism lying on the plane gets 4
 * points spread over its face (the quadrilateral they span covers more than
 * half of the face). */
static void test_hull_graph(void) {
  tl_hull hs, hg, ps, pg;
  make_uv_sphere(&hs, 0.03);
  make_uv_sphere(&hg, 0.03);
  make_prism(&ps, 0.1, 0.02);
  make_prism(&pg, 0.1, 0.02);
  TL_CHECK(tl_hull_graph(&hg) == 0 && tl_hull_graph(&pg) == 0, "hull graphs: out of memory");
  tl_shape plane = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  int compared = 0, same = 0, deepest_ok = 0;
  uint64_t rs = 99;
  for (int it = 0; it < 400; it++) {
    const tl_hull *scan = it % 2 ? &ps : &hs, *walk = it % 2 ? &pg : &hg;
    double ax[3], ang, z;
    for (int k = 0; k < 3; k++) {
      rs = rs * 6364136223846793005ull + 1442695040888963407ull;
      ax[k] = (double)(rs >> 11) * 0x1.0p-53 - 0.5;
    }
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    ang = it % 4 < 2 ? 3.0 * ((double)(rs >> 11) * 0x1.0p-53) : 1e-3 * ((double)(rs >> 11) * 0x1.0p-53); /* some nearly flat */
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    z = 0.035 * ((double)(rs >> 11) * 0x1.0p-53) - 0.003;
    tl_shape a = shape(TL_GEOM_MESH, 1, 1, 1, 0.01, -0.02, z), b;
    rotate(&a, ax[0], ax[1], ax[2], ang);
    b = a;
    a.hull = scan;
    b.hull = walk;
    tl_contact_point c[8], d[8];
    for (int rep = 0; rep < 2; rep++) { /* twice: the second walk starts where the first ended */
      int n = tl_collide(&a, &plane, 0.005, c), m = tl_collide(&b, &plane, 0.005, d);
      int eq = n == m;
      for (int i = 0; i < n && eq; i++)
        eq = memcmp(c[i].pos, d[i].pos, sizeof c[i].pos) == 0 && c[i].depth == d[i].depth;
      compared++;
      same += eq;
    }
    double low = INFINITY; /* the lowest vertex in the world */
    for (int v = 0; v < scan->nvert; v++) {
      double x[3];
      tl_m3_mulv(x, a.rot, scan->vert + 3 * v);
      low = fmin(low, x[2] + a.pos[2]);
    }
    int n = tl_collide(&b, &plane, 0.005, d);
    double deep = -INFINITY;
    for (int i = 0; i < n; i++) deep = fmax(deep, d[i].depth);
    deepest_ok += low >= 0.005 ? n == 0 : n > 0 && fabs(deep + low) < 1e-12;
  }
  printf("hull graphs: %d of %d walks gave the scan's contacts, deepest contact = lowest vertex in %d of 400 poses\n",
         same, compared, deepest_ok);
  TL_CHECK(same == compared, "hull graph walk differs from the scan in %d of %d cases", compared - same, compared);
  TL_CHECK(deepest_ok == 400, "hull graph: deepest contact off in %d poses", 400 - deepest_ok);
  /* the prism lying flat: 4 contacts spanning its face */
  tl_shape flat = shape(TL_GEOM_MESH, 1, 1, 1, 0, 0, 0.0199);
  flat.hull = &pg;
  rotate(&flat, 0, 0, 1, 0.37);
  tl_contact_point c[8];
  int n = tl_collide(&flat, &plane, 0.005, c);
  double area = 0;
  if (n == 4) { /* the area of their convex hull: the largest of the three quadrilaterals through them */
    static const int order[3][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}};
    for (int o = 0; o < 3; o++) {
      double t = 0;
      for (int k = 0; k < 4; k++) {
        const double *p = c[order[o][k]].pos, *q = c[order[o][(k + 1) % 4]].pos;
        t += p[0] * q[1] - p[1] * q[0];
      }
      area = fmax(area, fabs(t) / 2);
    }
  }
  double face = 0.5 * PR_N * 0.1 * 0.1 * sin(2 * TL_PI / PR_N);
  printf("prism lying flat: %d contacts spanning %.1f%% of its face\n", n, 100 * area / face);
  TL_CHECK(n == 4 && area > 0.5 * face, "flat prism: %d contacts, area %.3g of %.3g", n, area, face);
  tl_hull_graph_free(&hg);
  tl_hull_graph_free(&pg);
}

/* A tessellated sphere (the UV sphere, r 3 cm, rings 12 deg apart) on a
 * plane touches at one point: its vertices near the lowest one are no
 * contacts of their own. Rolled about y from 4 to 8 deg, its lowest edge
 * (pole to the first ring, 6.3 mm) is level at 6 deg: there the contact is
 * near the edge's middle (the ring's next vertices, 22 um higher, pull it a
 * little), and through the roll it moves continuously from the pole
 * to the ring vertex (no step longer than 1/20 of the edge between poses
 * 0.01 deg apart) instead of hopping the edge's length when the two heights
 * cross, while its depth stays the lowest vertex's. */
static void test_hull_rounded(void) {
  tl_hull hg;
  make_uv_sphere(&hg, 0.03);
  TL_CHECK(tl_hull_graph(&hg) == 0, "hull graph: out of memory");
  tl_shape plane = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  const double r = 0.03, edge = 2 * r * sin(TL_PI / 30);
  int single = 0, depth_ok = 0, steps = 0;
  double prev[3] = {0, 0, 0}, jump = 0, mid_err = INFINITY;
  for (int k = 0; k <= 400; k++) {
    double beta = (4.0 + 0.01 * k) * TL_PI / 180;
    tl_shape a = shape(TL_GEOM_MESH, 1, 1, 1, 0, 0, 0);
    rotate(&a, 0, 1, 0, beta);
    a.hull = &hg;
    double low = INFINITY;
    for (int v = 0; v < hg.nvert; v++) {
      double x[3];
      tl_m3_mulv(x, a.rot, hg.vert + 3 * v);
      low = fmin(low, x[2]);
    }
    a.pos[2] = -low - 1e-4; /* 0.1 mm deep */
    tl_contact_point c[8];
    int n = tl_collide(&a, &plane, 0.005, c);
    if (n != 1) continue;
    single++;
    depth_ok += fabs(c[0].depth - 1e-4) < 1e-12;
    if (k > 0) jump = fmax(jump, hypot(c[0].pos[0] - prev[0], c[0].pos[1] - prev[1]));
    tl_v3_copy(prev, c[0].pos);
    steps++;
    if (k == 200) { /* level: the middle of pole (0, 0, -r) and ring vertex, both turned */
      double pole[3] = {0, 0, -r}, ring[3] = {r * sin(TL_PI / 15), 0, -r * cos(TL_PI / 15)}, p[3], q[3];
      tl_m3_mulv(p, a.rot, pole);
      tl_m3_mulv(q, a.rot, ring);
      mid_err = hypot(c[0].pos[0] - 0.5 * (p[0] + q[0]), c[0].pos[1] - 0.5 * (p[1] + q[1]));
    }
  }
  printf("rounded hull rolling 4-8 deg: %d of 401 poses one contact, depth exact in %d, largest step %.2e m "
         "(edge %.2e m), level edge: %.1e m from its middle\n",
         single, depth_ok, jump, edge, mid_err);
  TL_CHECK(single == 401 && depth_ok == 401, "rounded hull: %d single contacts, %d exact depths", single, depth_ok);
  TL_CHECK(jump < edge / 20, "rounded hull: the contact hops %.3g m (edge %.3g m)", jump, edge);
  TL_CHECK(mid_err < edge / 4, "rounded hull on a level edge: contact %.3g m from its middle", mid_err);
  tl_hull_graph_free(&hg);
}

/* ---------------- degenerate inputs (issue 21) ---------------- */

/* Fill a stretch of the stack with 0x7f bytes, so that a pair function that
 * reads a local it never wrote (hull_plane's cand[] when no vertex is within
 * reach, before the fix) reads a huge index: UBSan reports it, and without
 * sanitizers it reads far outside the array and crashes. */
static void poison_stack(void) {
  volatile unsigned char buf[1 << 16];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = 0x7f;
}

/* Degenerate hulls in the plane z = 0 of their frame, each face listed from
 * both sides (a flat hull encloses no volume): 1 point, 3 copies of one
 * point, a segment along x of length 0.2, a triangle, a square of side 0.2;
 * the faces of the first three have zero area. */
static const double dg_vert[5][4][3] = {
    {{0, 0, 0}},
    {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{-0.1, 0, 0}, {0.1, 0, 0}},
    {{0.1, 0, 0}, {-0.05, 0.0866, 0}, {-0.05, -0.0866, 0}},
    {{-0.1, -0.1, 0}, {0.1, -0.1, 0}, {0.1, 0.1, 0}, {-0.1, 0.1, 0}}};
static const int dg_face[5][4][3] = {{{0, 0, 0}},
                                     {{0, 1, 2}, {0, 2, 1}},
                                     {{0, 1, 1}, {1, 0, 0}},
                                     {{0, 1, 2}, {0, 2, 1}},
                                     {{0, 1, 2}, {0, 2, 3}, {0, 2, 1}, {0, 3, 2}}};
static const int dg_nvert[5] = {1, 3, 2, 3, 4}, dg_nface[5] = {1, 2, 2, 2, 4};

/* Every narrowphase routine on degenerate inputs (issue 21: a Jaco and a NAO
 * crashed `talus simulate` in plane-vs-hull contact): a hull far above a
 * plane (the walk and the scan find no vertex within reach: no contact, no
 * read of an unset candidate); hulls of 1, 2, 3 and 4 coplanar points,
 * with and without a vertex graph, sunk 1 cm into a plane, a sphere, a box,
 * a capsule, a cylinder, a cube hull and a flat heightmap (every contact
 * finite, unit normal +z, depth 1 cm at the deepest, none deeper; nothing
 * when lifted 1 m); a cube hull carrying zero-area faces gives the contacts
 * of the plain cube; zero-length capsules and cylinders give no coincident
 * points. */
static void test_degenerate(void) {
  tl_contact_point c[8], d[8];
  tl_shape plane = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0);
  make_cube_hull(0.5);
  tl_hull cube_g = cube_hull;
  TL_CHECK(tl_hull_graph(&cube_g) == 0, "hull graph: out of memory");
  /* out of reach: far above, and tilted so that its box reaches lower than its vertices */
  for (int g = 0; g < 2; g++)
    for (int k = 0; k < 3; k++) {
      tl_shape h = hull_shape(0.3, -0.2, k == 0 ? 5.0 : (k == 1 ? 0.52 : 0.58));
      h.hull = g ? &cube_g : &cube_hull;
      if (k == 2) rotate(&h, 1, 1, 0, 0.5);
      double low = INFINITY;
      for (int v = 0; v < 8; v++) {
        double x[3];
        tl_m3_mulv(x, h.rot, cube_vert[v]);
        low = fmin(low, x[2]);
      }
      if (k == 2) h.pos[2] = 0.0051 - low; /* its lowest corner just out of the margin's reach */
      low += h.pos[2];
      char what[96];
      snprintf(what, sizeof what, "cube hull %.3g m above the plane (%s)", low, g ? "walk" : "scan");
      poison_stack();
      int n = tl_collide(&h, &plane, 0.005, c);
      TL_CHECK(low > 0.005 && n == 0, "%s: %d contacts", what, n);
      poison_stack();
      n = collide(&h, &plane, 0.005, c, what);
      TL_CHECK(n == 0, "%s: %d contacts (swapped)", what, n);
      tl_heightmap hm; /* the plane's candidates serve the heightmap too */
      for (int i = 0; i < 41 * 41; i++) hbuf[i] = 0;
      tl_shape hf = heightmap_shape(&hm, 21, 21, -2.5, -2.5, 0.25, 0.25);
      poison_stack();
      TL_CHECK(collide(&h, &hf, 0.005, c, what) == 0, "%s: touches a flat heightmap", what);
    }

  /* degenerate hulls sunk 1 cm into every other kind of shape (tops at z = 0.01) */
  tl_heightmap hm;
  for (int i = 0; i < 41 * 41; i++) hbuf[i] = 0.01;
  tl_shape others[7];
  const char *oname[7] = {"plane", "sphere", "box", "capsule", "cylinder", "cube hull", "heightmap"};
  others[0] = shape(TL_GEOM_PLANE, 0, 0, 0, 0, 0, 0.01);
  others[1] = shape(TL_GEOM_SPHERE, 0.2, 0, 0, 0, 0, -0.19);
  others[2] = shape(TL_GEOM_BOX, 1, 1, 1, 0, 0, -0.49);
  others[3] = shape(TL_GEOM_CAPSULE, 0.1, 0.4, 0, 0, 0, -0.29);
  others[4] = shape(TL_GEOM_CYLINDER, 0.3, 0.4, 0, 0, 0, -0.19);
  others[5] = hull_shape(0, 0, -0.49);
  others[6] = heightmap_shape(&hm, 21, 21, -2.5, -2.5, 0.25, 0.25);
  for (int kind = 0; kind < 5; kind++)
    for (int g = 0; g < 2; g++) {
      tl_hull h;
      memset(&h, 0, sizeof h);
      h.nvert = dg_nvert[kind], h.vert = &dg_vert[kind][0][0];
      h.nface = dg_nface[kind], h.face = &dg_face[kind][0][0];
      tl_hull_bounds(&h);
      if (g) TL_CHECK(tl_hull_graph(&h) == 0, "hull graph: out of memory");
      for (int o = 0; o < 7; o++)
        for (int lift = 0; lift < 2; lift++) {
          tl_shape a = shape(TL_GEOM_MESH, 1, 1, 1, 0, 0, lift ? 1.0 : 0.0);
          a.hull = &h;
          char what[128];
          snprintf(what, sizeof what, "%d-point hull%s (%s) %s %s", dg_nvert[kind], kind == 1 ? " (all equal)" : "",
                   g ? "walk" : "scan",
                   lift ? "1 m above" : "1 cm into", oname[o]);
          poison_stack();
          int n = collide(&a, &others[o], 0.005, c, what);
          if (lift) {
            TL_CHECK(n == 0, "%s: %d contacts", what, n);
            continue;
          }
          double deep = -INFINITY;
          for (int i = 0; i < n; i++) {
            deep = fmax(deep, c[i].depth);
            TL_CHECK(c[i].normal[2] > 1 - 1e-6, "%s: normal %d (%g %g %g), expected +z", what, i, c[i].normal[0],
                     c[i].normal[1], c[i].normal[2]);
            TL_CHECK(c[i].depth < 0.01 + 1e-7, "%s: depth %d %.9g deeper than the 1 cm overlap", what, i, c[i].depth);
          }
          TL_CHECK(n >= 1 && fabs(deep - 0.01) < 1e-7, "%s: %d contacts, deepest %.9g, expected 0.01", what, n, deep);
        }
      if (g) tl_hull_graph_free(&h);
    }

  /* zero-area faces added to a cube hull change nothing */
  static int zf_face[15][3];
  memcpy(zf_face, cube_face, sizeof cube_face);
  zf_face[12][0] = 0, zf_face[12][1] = 0, zf_face[12][2] = 0;
  zf_face[13][0] = 1, zf_face[13][1] = 3, zf_face[13][2] = 1;
  zf_face[14][0] = 5, zf_face[14][1] = 7, zf_face[14][2] = 7;
  tl_hull zh = cube_hull;
  zh.nface = 15, zh.face = &zf_face[0][0];
  tl_shape probes[5];
  probes[0] = plane;
  probes[1] = shape(TL_GEOM_SPHERE, 0.3, 0, 0, 0.2, 0.1, 0.75);
  probes[2] = shape(TL_GEOM_BOX, 0.4, 0.3, 0.2, 0.1, 0.2, 0.59);
  rotate(&probes[2], 0, 0, 1, 0.3);
  probes[3] = shape(TL_GEOM_CAPSULE, 0.1, 0.4, 0, 0.6, 0, 0.1);
  probes[4] = shape(TL_GEOM_CYLINDER, 0.1, 0.4, 0, 0.1, 0, 0.69);
  for (int p = 0; p < 5; p++) {
    tl_shape a = hull_shape(0, 0, 0.49), b = a;
    if (p == 0) rotate(&a, 0.2, 1, 0, 0.1), b = a;
    b.hull = &zh;
    char what[80];
    snprintf(what, sizeof what, "cube hull with zero-area faces, probe %d", p);
    int n = collide(&a, &probes[p], 0.005, c, what), m = collide(&b, &probes[p], 0.005, d, what);
    TL_CHECK(n >= 1, "%s: no contact", what);
    check_same_set(c, n, d, m, 1e-12, what);
  }

  /* zero-length capsules (a sphere) and cylinders (a disc) */
  tl_shape base = shape(TL_GEOM_BOX, 4, 4, 1, 0, 0, -0.5);
  for (int k = 0; k < 4; k++) {
    tl_shape s = shape(k < 2 ? TL_GEOM_CAPSULE : TL_GEOM_CYLINDER, 0.1, 0, 0, 0.1, 0.2, k < 2 ? 0.09 : -0.01);
    if (k % 2) rotate(&s, 1, 0.3, 0, 0.7);
    double low = k < 2 ? -0.1 : INFINITY;
    if (k >= 2) { /* the disc's lowest rim point */
      double ax[3];
      tl_np_axis(ax, s.rot, 2);
      low = -0.1 * sqrt(fmax(0, 1 - ax[2] * ax[2]));
    }
    double depth = -(s.pos[2] + low);
    tl_shape sph = shape(TL_GEOM_SPHERE, 0.1, 0, 0, 0.1, 0.2, 0.25);
    const tl_shape *os[3] = {&plane, &base, &sph};
    for (int o = 0; o < 3; o++) {
      char what[96];
      snprintf(what, sizeof what, "zero-length %s (%s) on %s", k < 2 ? "capsule" : "cylinder",
               k % 2 ? "tilted" : "upright", o == 0 ? "a plane" : (o == 1 ? "a box" : "a sphere"));
      if (o == 2 && k == 3) continue; /* (the tilted disc's top is not under the sphere's bottom) */
      tl_shape sa = s;
      if (o == 2) sa.pos[2] = 0.16 + low; /* its top 1 cm into the sphere's bottom */
      int n = collide(&sa, os[o], 0.005, c, what);
      TL_CHECK(n >= 1, "%s: no contact", what);
      if (o < 2 && n >= 1) {
        double deep = -INFINITY;
        for (int i = 0; i < n; i++) deep = fmax(deep, c[i].depth);
        TL_CHECK(fabs(deep - depth) < 1e-7, "%s: deepest %.9g, expected %.9g", what, deep, depth);
      }
    }
  }
  tl_hull_graph_free(&cube_g);
}

/* Random degenerate inputs: flat hulls (1 to 4 points, coincident, collinear
 * or coplanar, each triangle of them listed from both sides) and zero-length
 * capsules and cylinders, against every kind of shape in random poses:
 * collide()'s checks on every call (swap symmetry, finite points, unit
 * normals, no coincident points, depth above -margin), and no contact when
 * the two bounding spheres are further apart than the margin. */
static void test_fuzz_degenerate(void) {
  static double fv[4][3];
  static int ff[8][3];
  tl_heightmap hm;
  for (int iy = 0; iy < 15; iy++)
    for (int ix = 0; ix < 15; ix++) hbuf[iy * 15 + ix] = 0.2 * sin(0.9 * ix) * cos(0.6 * iy);
  tl_shape hf = heightmap_shape(&hm, 15, 15, -1.4, -1.4, 0.2, 0.2);
  make_cube_hull(0.2);
  int total = 0, separated = 0;
  for (int i = 0; i < 4000; i++) {
    /* the degenerate hull: k points in the plane z = 0 (mode 0: all equal, 1: on the x axis, 2: anywhere) */
    int k = 1 + (int)(urand() * 4), mode = (int)(urand() * 3), nf = 0;
    for (int v = 0; v < k; v++)
      tl_v3_set(fv[v], mode == 0 ? 0.05 : 0.2 * (urand() - 0.5), mode == 2 ? 0.2 * (urand() - 0.5) : 0, 0);
    for (int a = 0; a < k; a++)
      for (int b = a + 1; b < k; b++)
        for (int c = b + 1; c < k; c++) {
          ff[nf][0] = a, ff[nf][1] = b, ff[nf++][2] = c;
          ff[nf][0] = a, ff[nf][1] = c, ff[nf++][2] = b;
        }
    if (nf == 0) ff[0][0] = ff[0][1] = ff[0][2] = 0, ff[1][0] = 0, ff[1][1] = ff[1][2] = k - 1, nf = 2;
    tl_hull h;
    memset(&h, 0, sizeof h);
    h.nvert = k, h.vert = &fv[0][0], h.nface = nf, h.face = &ff[0][0];
    tl_hull_bounds(&h);
    int graph = urand() < 0.5 && tl_hull_graph(&h) == 0;
    tl_shape a;
    if (urand() < 0.7) {
      a = shape(TL_GEOM_MESH, 1, 1, 1, 0, 0, 0);
      a.hull = &h;
    } else { /* a zero-length capsule or cylinder */
      a = shape(urand() < 0.5 ? TL_GEOM_CAPSULE : TL_GEOM_CYLINDER, 0.05 + 0.1 * urand(), 0, 0, 0, 0, 0);
    }
    random_rot(a.rot);
    for (int j = 0; j < 3; j++) a.pos[j] = 0.6 * (urand() - 0.5);
    int t = (int)(urand() * 7);
    tl_shape b = shape((tl_geom_type)t, 0.1 + 0.3 * urand(), 0.1 + 0.4 * urand(), 0.1 + 0.4 * urand(), 0, 0, 0);
    random_rot(b.rot);
    for (int j = 0; j < 3; j++) b.pos[j] = 0.6 * (urand() - 0.5);
    if (t == TL_GEOM_MESH) b.hull = &cube_hull;
    if (t == TL_GEOM_HEIGHTMAP) b = hf;
    if (t == TL_GEOM_PLANE) tl_m3_identity(b.rot), b.pos[0] = b.pos[1] = 0;
    double margin = urand() < 0.5 ? 0 : 0.05 * urand();
    tl_contact_point c[8];
    poison_stack();
    int n = collide(&a, &b, margin, c, "degenerate fuzz");
    total += n;
    /* bounding spheres (planes and heightmaps: the lowest vertex against the plane / the grid's top) */
    double ra = 0, ca[3], lowest = INFINITY;
    for (int v = 0; v < (a.type == TL_GEOM_MESH ? k : 0); v++) {
      double x[3];
      tl_m3_mulv(x, a.rot, fv[v]);
      tl_v3_add(x, x, a.pos);
      lowest = fmin(lowest, x[2]);
    }
    tl_v3_copy(ca, a.pos);
    if (a.type == TL_GEOM_MESH)
      for (int v = 0; v < k; v++) ra = fmax(ra, tl_v3_norm(fv[v]));
    else
      ra = a.size[0];
    if (a.type != TL_GEOM_MESH) lowest = a.pos[2] - ra;
    double gap;
    if (t == TL_GEOM_PLANE) gap = lowest - b.pos[2];
    else if (t == TL_GEOM_HEIGHTMAP) gap = lowest - 0.2;
    else {
      double rb = t == TL_GEOM_SPHERE ? b.size[0]
                  : t == TL_GEOM_BOX ? 0.5 * tl_v3_norm(b.size)
                  : t == TL_GEOM_MESH ? 0.2 * sqrt(3.0)
                                      : b.size[0] + 0.5 * b.size[1], d[3];
      tl_v3_sub(d, ca, b.pos);
      gap = tl_v3_norm(d) - ra - rb;
    }
    if (gap > margin + 1e-9) {
      separated++;
      TL_CHECK(n == 0, "degenerate fuzz %d: %d contacts with a gap of %g (margin %g), kind %d vs %d", i, n, gap, margin,
               a.type, t);
    }
    if (graph) tl_hull_graph_free(&h);
  }
  printf("degenerate fuzz: %d contacts, %d separated pairs with none\n", total, separated);
}

/* End to end (issue 21): tests/hull_out_of_reach.urdf, a box lying on the
 * ground carrying an octahedron hull whose bounding sphere and box reach
 * below the ground while its vertices stay 2.4 cm above it, stepped for 0.3 s: the
 * broadphase hands the hull-plane pair to the narrowphase every step (this
 * crashed, or UBSan reported the read of an unset candidate), the state stays
 * finite, the box rests (height 0.05 m within 1 mm) and every contact is one
 * of the box's, at most 4, on the ground under its footprint. */
static void test_robot(const char *tests_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/hull_out_of_reach.urdf", tests_dir);
  tl_error err;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "%s: %s", path, err.message)) return;
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (TL_CHECK(ok, "world: %s", err.message)) {
    int hull = -1;
    for (int g = 0; g < tl_model_ngeom(m); g++) {
      tl_geom_type t;
      int body;
      double size[3], pos[3], R[9];
      if (tl_model_geom(m, g, &t, &body, size, pos, R, NULL) == 0 && t == TL_GEOM_MESH) hull = g;
    }
    TL_CHECK(hull >= 0, "%s: no mesh geom", path);
    double q[7] = {0, 0, 0.05, 1, 0, 0, 0}, u[6] = {0};
    TL_CHECK(tl_system_set_state(s, q, 7, u, 6, &err) == TL_OK, "set_state: %s", err.message);
    int steps = 0, bad = 0, most = 0;
    for (; steps < 300; steps++) {
      poison_stack();
      if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "step %d: %s", steps, err.message)) break;
      int nc = tl_world_ncontact(w);
      most = nc > most ? nc : most;
      for (int k = 0; k < nc; k++) {
        tl_contact_info c;
        if (tl_world_contact(w, k, &c, NULL) != TL_OK || c.geom == hull || fabs(c.pos[2]) > 0.01 ||
            fabs(c.pos[0]) > 0.2 + 1e-3 || fabs(c.pos[1]) > 0.2 + 1e-3)
          bad++;
      }
    }
    tl_system_get_state(s, q, 7, u, 6, NULL);
    int finite = 1;
    for (int i = 0; i < 7; i++) finite = finite && isfinite(q[i]);
    printf("hull out of reach: %d steps, at most %d contacts, %d not the box's on the ground, base at z = %.6f\n",
           steps, most, bad, q[2]);
    TL_CHECK(steps == 300 && finite && bad == 0 && most <= 4, "hull out of reach: %d steps, %d bad contacts, %d at most",
             steps, bad, most);
    TL_CHECK(fabs(q[2] - 0.05) < 1e-3, "hull out of reach: the box rests at z = %g, expected 0.05", q[2]);
  }
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "robot") == 0) {
    test_robot(argv[2]);
    return tl_test_finish();
  }
  test_hull_graph();
  test_hull_rounded();
  test_heightmap_curved_continuity();
  test_sphere_sphere();
  test_sphere_capsule();
  test_capsule_capsule();
  test_sphere_box();
  test_capsule_box();
  test_box_box();
  test_planes();
  test_cylinders();
  test_hulls();
  test_heightmap();
  test_aabb();
  test_mpr_vs_analytic();
  test_fuzz();
  test_degenerate();
  test_fuzz_degenerate();
  return tl_test_finish();
}
