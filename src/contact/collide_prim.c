/* Analytic narrowphase pairs: sphere-sphere, sphere-capsule, sphere-box,
 * sphere-cylinder, sphere-hull, capsule-capsule and capsule-box.
 *
 * Sources: Ericson, Real-Time Collision Detection, 2005: sec. 5.1.9
 * (closest points of two segments), sec. 5.1.5 (closest point on a
 * triangle), sec. 5.1.3 (closest point on an oriented box), sec. 5.3.3
 * (segment against a slab, Liang-Barsky clipping). Capsule-box follows
 * ODE's dCollideCapsuleBox idea: the closest points of the core segment and
 * the box, plus the second end of the segment clipped to the face when the
 * capsule lies on a face; a core segment inside the box goes to the general
 * convex path (collide_convex.c). */
#include <math.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

static double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

void tl_np_closest_segments(const double p0[3], const double p1[3], const double q0[3],
                            const double q1[3], double *s, double *t, double c1[3], double c2[3]) {
  double d1[3], d2[3], r[3];
  tl_v3_sub(d1, p1, p0);
  tl_v3_sub(d2, q1, q0);
  tl_v3_sub(r, p0, q0);
  double a = tl_v3_dot(d1, d1), e = tl_v3_dot(d2, d2), f = tl_v3_dot(d2, r);
  const double eps = 1e-24;
  double ss, tt;
  if (a <= eps && e <= eps) {
    ss = tt = 0;
  } else if (a <= eps) {
    ss = 0;
    tt = clampd(f / e, 0, 1);
  } else {
    double c = tl_v3_dot(d1, r);
    if (e <= eps) {
      tt = 0;
      ss = clampd(-c / a, 0, 1);
    } else {
      double b = tl_v3_dot(d1, d2), denom = a * e - b * b;
      ss = denom > 1e-14 * a * e ? clampd((b * f - c * e) / denom, 0, 1) : 0;
      tt = (b * ss + f) / e;
      if (tt < 0) {
        tt = 0;
        ss = clampd(-c / a, 0, 1);
      } else if (tt > 1) {
        tt = 1;
        ss = clampd((b - c) / a, 0, 1);
      }
    }
  }
  *s = ss;
  *t = tt;
  for (int i = 0; i < 3; i++) {
    c1[i] = p0[i] + d1[i] * ss;
    c2[i] = q0[i] + d2[i] * tt;
  }
}

void tl_np_closest_on_triangle(double q[3], const double p[3], const double a[3], const double b[3],
                               const double c[3]) {
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  tl_v3_sub(ab, b, a);
  tl_v3_sub(ac, c, a);
  tl_v3_sub(ap, p, a);
  double d1 = tl_v3_dot(ab, ap), d2 = tl_v3_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) { tl_v3_copy(q, a); return; }
  tl_v3_sub(bp, p, b);
  double d3 = tl_v3_dot(ab, bp), d4 = tl_v3_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) { tl_v3_copy(q, b); return; }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 / (d1 - d3);
    for (int i = 0; i < 3; i++) q[i] = a[i] + v * ab[i];
    return;
  }
  tl_v3_sub(cp, p, c);
  double d5 = tl_v3_dot(ab, cp), d6 = tl_v3_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) { tl_v3_copy(q, c); return; }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 / (d2 - d6);
    for (int i = 0; i < 3; i++) q[i] = a[i] + w * ac[i];
    return;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int i = 0; i < 3; i++) q[i] = b[i] + w * (c[i] - b[i]);
    return;
  }
  double den = 1.0 / (va + vb + vc), v = vb * den, w = vc * den;
  for (int i = 0; i < 3; i++) q[i] = a[i] + ab[i] * v + ac[i] * w;
}

int tl_np_spheres(const double ca[3], double ra, const double cb[3], double rb, double margin,
                  tl_contact_point *out) {
  double d[3];
  tl_v3_sub(d, ca, cb);
  double dist = tl_v3_norm(d), depth = ra + rb - dist;
  if (depth <= -margin) return 0;
  double n[3] = {0, 0, 1};
  if (dist > 1e-12) tl_v3_scale(n, d, 1.0 / dist);
  double pa[3], pb[3];
  tl_v3_copy(pa, ca);
  tl_v3_addscl(pa, n, -ra);
  tl_v3_copy(pb, cb);
  tl_v3_addscl(pb, n, rb);
  tl_np_write(out, pa, pb, n, depth);
  return 1;
}

/* End points of a capsule's (or cylinder's) axis segment, world. */
static void segment_ends(const tl_shape *s, double p0[3], double p1[3]) {
  double ax[3];
  tl_np_axis(ax, s->rot, 2);
  double hh = 0.5 * s->size[1];
  tl_v3_copy(p0, s->pos);
  tl_v3_addscl(p0, ax, -hh);
  tl_v3_copy(p1, s->pos);
  tl_v3_addscl(p1, ax, hh);
}

/* Closest point of segment p0-p1 to x. */
static void closest_on_segment(double q[3], const double x[3], const double p0[3],
                               const double p1[3]) {
  double d[3], r[3];
  tl_v3_sub(d, p1, p0);
  tl_v3_sub(r, x, p0);
  double dd = tl_v3_dot(d, d);
  double t = dd > 1e-24 ? clampd(tl_v3_dot(r, d) / dd, 0, 1) : 0;
  tl_v3_copy(q, p0);
  tl_v3_addscl(q, d, t);
}

int tl_np_sphere_sphere(const tl_shape *a, const tl_shape *b, double margin,
                        tl_contact_point *out) {
  return tl_np_spheres(a->pos, a->size[0], b->pos, b->size[0], margin, out);
}

int tl_np_sphere_capsule(const tl_shape *a, const tl_shape *b, double margin,
                         tl_contact_point *out) {
  double p0[3], p1[3], q[3];
  segment_ends(b, p0, p1);
  closest_on_segment(q, a->pos, p0, p1);
  return tl_np_spheres(a->pos, a->size[0], q, b->size[0], margin, out);
}

/* Write a contact computed in the frame (R, p) of b: nl, pa_l, pb_l local. */
static void write_local(tl_contact_point *c, const double R[9], const double p[3],
                        const double pa_l[3], const double pb_l[3], const double nl[3],
                        double depth) {
  double pa[3], pb[3], n[3];
  tl_m3_mulv(pa, R, pa_l);
  tl_v3_add(pa, pa, p);
  tl_m3_mulv(pb, R, pb_l);
  tl_v3_add(pb, pb, p);
  tl_m3_mulv(n, R, nl);
  tl_np_write(c, pa, pb, n, depth);
}

int tl_np_sphere_box(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  double r = a->size[0], h[3] = {0.5 * b->size[0], 0.5 * b->size[1], 0.5 * b->size[2]};
  double c[3], d[3];
  tl_v3_sub(d, a->pos, b->pos);
  tl_m3_tmulv(c, b->rot, d);
  double q[3], nl[3], depth;
  int inside = 1;
  for (int i = 0; i < 3; i++) {
    q[i] = clampd(c[i], -h[i], h[i]);
    if (q[i] != c[i]) inside = 0;
  }
  if (!inside) {
    tl_v3_sub(nl, c, q);
    double dist = tl_v3_norm(nl);
    depth = r - dist;
    if (depth <= -margin) return 0;
    tl_v3_scale(nl, nl, 1.0 / dist);
  } else { /* centre inside: push out through the nearest face */
    int k = 0;
    double best = h[0] - fabs(c[0]);
    for (int i = 1; i < 3; i++)
      if (h[i] - fabs(c[i]) < best) { best = h[i] - fabs(c[i]); k = i; }
    double s = c[k] >= 0 ? 1.0 : -1.0;
    tl_v3_set(nl, 0, 0, 0);
    nl[k] = s;
    tl_v3_copy(q, c);
    q[k] = s * h[k];
    depth = r + best;
  }
  double pa[3];
  tl_v3_copy(pa, c);
  tl_v3_addscl(pa, nl, -r);
  write_local(out, b->rot, b->pos, pa, q, nl, depth);
  return 1;
}

int tl_np_sphere_cylinder(const tl_shape *a, const tl_shape *b, double margin,
                          tl_contact_point *out) {
  double r = a->size[0], rc = b->size[0], hh = 0.5 * b->size[1];
  double c[3], d[3];
  tl_v3_sub(d, a->pos, b->pos);
  tl_m3_tmulv(c, b->rot, d);
  double rho = sqrt(c[0] * c[0] + c[1] * c[1]);
  double q[3], nl[3], depth;
  if (rho > rc || fabs(c[2]) > hh) { /* outside: closest point of the solid */
    double k = rho > rc ? rc / rho : 1.0;
    tl_v3_set(q, c[0] * k, c[1] * k, clampd(c[2], -hh, hh));
    tl_v3_sub(nl, c, q);
    double dist = tl_v3_norm(nl);
    depth = r - dist;
    if (depth <= -margin) return 0;
    tl_v3_scale(nl, nl, 1.0 / dist);
  } else {
    double pen_rad = rc - rho, pen_ax = hh - fabs(c[2]);
    if (pen_ax <= pen_rad) {
      double s = c[2] >= 0 ? 1.0 : -1.0;
      tl_v3_set(nl, 0, 0, s);
      tl_v3_set(q, c[0], c[1], s * hh);
      depth = r + pen_ax;
    } else {
      if (rho > 1e-12) tl_v3_set(nl, c[0] / rho, c[1] / rho, 0);
      else tl_v3_set(nl, 1, 0, 0);
      tl_v3_set(q, nl[0] * rc, nl[1] * rc, c[2]);
      depth = r + pen_rad;
    }
  }
  double pa[3];
  tl_v3_copy(pa, c);
  tl_v3_addscl(pa, nl, -r);
  write_local(out, b->rot, b->pos, pa, q, nl, depth);
  return 1;
}

/* Sphere against a convex hull: the nearest face when the centre is inside,
 * else the closest point over the faces that see the centre (exact). A hull
 * whose faces all have zero area goes to tl_np_convex (GJK / MPR). */
int tl_np_sphere_hull(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  const tl_hull *h = b->hull;
  double r = a->size[0], c[3], d[3];
  tl_v3_sub(d, a->pos, b->pos);
  tl_m3_tmulv(c, b->rot, d);
  double smax = -INFINITY, nmax[3] = {0, 0, 1};
  for (int f = 0; f < h->nface; f++) {
    const double *v0 = h->vert + 3 * h->face[3 * f], *v1 = h->vert + 3 * h->face[3 * f + 1];
    const double *v2 = h->vert + 3 * h->face[3 * f + 2];
    double e1[3], e2[3], nf[3], w[3];
    tl_v3_sub(e1, v1, v0);
    tl_v3_sub(e2, v2, v0);
    tl_v3_cross(nf, e1, e2);
    if (tl_v3_normalize(nf) < 1e-300) continue;
    tl_v3_sub(w, c, v0);
    double s = tl_v3_dot(w, nf);
    if (s > smax) { smax = s; tl_v3_copy(nmax, nf); }
  }
  /* no face with an area (a hull of 1 or 2 points, or collinear ones): the
   * general convex path, which needs only the vertices */
  if (smax == -INFINITY) return tl_np_convex(a, b, margin, out);
  if (smax >= r + margin) return 0;
  double q[3], nl[3], depth;
  if (smax <= 0) {
    tl_v3_copy(nl, nmax);
    tl_v3_copy(q, c);
    tl_v3_addscl(q, nl, -smax);
    depth = r - smax;
  } else {
    double best = INFINITY;
    for (int f = 0; f < h->nface; f++) {
      const double *v0 = h->vert + 3 * h->face[3 * f], *v1 = h->vert + 3 * h->face[3 * f + 1];
      const double *v2 = h->vert + 3 * h->face[3 * f + 2];
      double e1[3], e2[3], nf[3], w[3], qf[3];
      tl_v3_sub(e1, v1, v0);
      tl_v3_sub(e2, v2, v0);
      tl_v3_cross(nf, e1, e2);
      tl_v3_sub(w, c, v0);
      if (tl_v3_dot(w, nf) <= 0) continue; /* faces that do not see the centre */
      tl_np_closest_on_triangle(qf, c, v0, v1, v2);
      tl_v3_sub(w, c, qf);
      double d2 = tl_v3_dot(w, w);
      if (d2 < best) { best = d2; tl_v3_copy(q, qf); }
    }
    double dist = sqrt(best);
    depth = r - dist;
    if (depth <= -margin || !(dist > 0)) return 0;
    tl_v3_sub(nl, c, q);
    tl_v3_scale(nl, nl, 1.0 / dist);
  }
  double pa[3];
  tl_v3_copy(pa, c);
  tl_v3_addscl(pa, nl, -r);
  write_local(out, b->rot, b->pos, pa, q, nl, depth);
  return 1;
}

/* Two capsules: the closest points of the core segments; nearly parallel
 * segments give the two ends of their overlap instead. */
int tl_np_capsule_capsule(const tl_shape *a, const tl_shape *b, double margin,
                          tl_contact_point *out) {
  double p0[3], p1[3], q0[3], q1[3];
  segment_ends(a, p0, p1);
  segment_ends(b, q0, q1);
  double ra = a->size[0], rb = b->size[0];
  double da[3], db[3], cr[3];
  tl_v3_sub(da, p1, p0);
  tl_v3_sub(db, q1, q0);
  tl_v3_cross(cr, da, db);
  double la2 = tl_v3_dot(da, da), lb2 = tl_v3_dot(db, db);
  const double sin_par = 0.02; /* about 1.1 degrees */
  if (la2 > 1e-18 && lb2 > 1e-18 && tl_v3_dot(cr, cr) < sin_par * sin_par * la2 * lb2) {
    double w0[3], w1[3];
    tl_v3_sub(w0, q0, p0);
    tl_v3_sub(w1, q1, p0);
    double t0 = tl_v3_dot(w0, da) / la2, t1 = tl_v3_dot(w1, da) / la2;
    double lo = fmax(0.0, fmin(t0, t1)), hi = fmin(1.0, fmax(t0, t1));
    if ((hi - lo) * sqrt(la2) > 1e-6) {
      int n = 0;
      for (int e = 0; e < 2; e++) {
        double x[3], q[3];
        tl_v3_copy(x, p0);
        tl_v3_addscl(x, da, e ? hi : lo);
        closest_on_segment(q, x, q0, q1);
        n += tl_np_spheres(x, ra, q, rb, margin, out + n);
      }
      if (n > 0) return n;
    }
  }
  double s, t, c1[3], c2[3];
  tl_np_closest_segments(p0, p1, q0, q1, &s, &t, c1, c2);
  return tl_np_spheres(c1, ra, c2, rb, margin, out);
}

/* Capsule (cap) against box in the box frame; normals from the box into the
 * capsule. Returns -1 when the core segment meets the box. */
static int capsule_box(const tl_shape *cap, const tl_shape *box, double margin,
                       tl_contact_point *out) {
  double h[3] = {0.5 * box->size[0], 0.5 * box->size[1], 0.5 * box->size[2]};
  double r = cap->size[0], w0[3], w1[3], d[3], p0[3], p1[3];
  segment_ends(cap, w0, w1);
  tl_v3_sub(d, w0, box->pos);
  tl_m3_tmulv(p0, box->rot, d);
  tl_v3_sub(d, w1, box->pos);
  tl_m3_tmulv(p1, box->rot, d);
  if (tl_np_segment_hits_box(p0, p1, h)) return -1;

  /* closest points: the segment's ends against the box, the segment against
   * the 12 edges (exact for a segment outside the box) */
  double best = INFINITY, ps[3] = {0, 0, 0}, qb[3] = {0, 0, 0};
  for (int e = 0; e < 2; e++) {
    const double *x = e ? p1 : p0;
    double q[3], v[3];
    for (int i = 0; i < 3; i++) q[i] = clampd(x[i], -h[i], h[i]);
    tl_v3_sub(v, x, q);
    double d2 = tl_v3_dot(v, v);
    if (d2 < best) { best = d2; tl_v3_copy(ps, x); tl_v3_copy(qb, q); }
  }
  for (int k = 0; k < 3; k++) {
    int i = (k + 1) % 3, j = (k + 2) % 3;
    for (int sg = 0; sg < 4; sg++) {
      double e0[3], e1[3], s, t, c1[3], c2[3], v[3];
      e0[i] = e1[i] = (sg & 1) ? h[i] : -h[i];
      e0[j] = e1[j] = (sg & 2) ? h[j] : -h[j];
      e0[k] = -h[k];
      e1[k] = h[k];
      tl_np_closest_segments(p0, p1, e0, e1, &s, &t, c1, c2);
      tl_v3_sub(v, c1, c2);
      double d2 = tl_v3_dot(v, v);
      if (d2 < best) { best = d2; tl_v3_copy(ps, c1); tl_v3_copy(qb, c2); }
    }
  }
  double dist = sqrt(best);
  if (dist < 1e-12) return -1;
  if (r - dist <= -margin) return 0;
  double nl[3];
  tl_v3_sub(nl, ps, qb);
  tl_v3_scale(nl, nl, 1.0 / dist);

  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(nl[i]) > fabs(nl[k])) k = i;
  if (fabs(nl[k]) > 1.0 - 1e-9) { /* on a face: clip the segment to it */
    double s = nl[k] > 0 ? 1.0 : -1.0, t0 = 0, t1 = 1, dir[3];
    tl_v3_sub(dir, p1, p0);
    for (int m = 0; m < 3 && t0 <= t1; m++) {
      if (m == k) continue;
      if (fabs(dir[m]) < 1e-300) {
        if (fabs(p0[m]) > h[m]) t1 = -1;
        continue;
      }
      double ta = (-h[m] - p0[m]) / dir[m], tb = (h[m] - p0[m]) / dir[m];
      if (ta > tb) { double x = ta; ta = tb; tb = x; }
      t0 = fmax(t0, ta);
      t1 = fmin(t1, tb);
    }
    if (t0 <= t1) {
      int n = 0, two = (t1 - t0) * tl_v3_norm(dir) > 1e-9;
      double nf[3] = {0, 0, 0};
      nf[k] = s;
      for (int e = 0; e < 1 + two; e++) {
        double x[3], pa[3], pb[3];
        tl_v3_copy(x, p0);
        tl_v3_addscl(x, dir, e ? t1 : t0);
        double depth = r - (s * x[k] - h[k]);
        if (depth <= -margin) continue;
        tl_v3_copy(pa, x);
        tl_v3_addscl(pa, nf, -r);
        tl_v3_copy(pb, x);
        pb[k] = s * h[k];
        write_local(out + n, box->rot, box->pos, pa, pb, nf, depth);
        n++;
      }
      if (n > 0) return n;
    }
  }
  double pa[3];
  tl_v3_copy(pa, ps);
  tl_v3_addscl(pa, nl, -r);
  write_local(out, box->rot, box->pos, pa, qb, nl, r - dist);
  return 1;
}

int tl_np_box_capsule(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  int n = capsule_box(b, a, margin, out);
  if (n < 0) return tl_np_convex(a, b, margin, out);
  for (int i = 0; i < n; i++) tl_v3_scale(out[i].normal, out[i].normal, -1.0);
  return n;
}
