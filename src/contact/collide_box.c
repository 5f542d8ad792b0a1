/* Box-box: separating axis test over the 15 candidate axes (Gottschalk, Lin
 * and Manocha, "OBBTree", SIGGRAPH 1996; Ericson, Real-Time Collision
 * Detection, 2005, sec. 4.4.1), then, as in ODE's dBoxBox (R. Smith) and
 * Box2D's b2CollidePolygons (E. Catto): for a face axis, the incident face
 * of the other box is clipped against the side planes of the reference face
 * (Sutherland-Hodgman) and the points within the margin are kept (at most 8,
 * reduced to the 4 deepest/spread); for an edge-edge axis, one point at the
 * closest points of the two supporting edges. Face axes win ties against
 * edge axes (relative tolerance, as ODE's fudge factor), so resting boxes get
 * a face manifold. Separations are signed: an axis whose gap exceeds the
 * margin proves no contact. */
#include <math.h>

#include "contact/collide_internal.h"
#include "math/tl_math.h"

typedef struct obb {
  double c[3], ax[3][3], h[3];
} obb;

static void obb_of(obb *o, const tl_shape *s) {
  tl_v3_copy(o->c, s->pos);
  for (int k = 0; k < 3; k++) {
    tl_np_axis(o->ax[k], s->rot, k);
    o->h[k] = 0.5 * s->size[k];
  }
}

/* Half extent of box o along unit direction L. */
static double extent(const obb *o, const double L[3]) {
  return o->h[0] * fabs(tl_v3_dot(o->ax[0], L)) + o->h[1] * fabs(tl_v3_dot(o->ax[1], L)) +
         o->h[2] * fabs(tl_v3_dot(o->ax[2], L));
}

/* Signed separation of the boxes along L; L oriented from A to B on return. */
static double separation(const obb *A, const obb *B, const double d[3], double L[3]) {
  double dl = tl_v3_dot(d, L);
  if (dl < 0) {
    tl_v3_scale(L, L, -1.0);
    dl = -dl;
  }
  return dl - extent(A, L) - extent(B, L);
}

/* Face contact: reference box R with outward face normal nr (a face axis of
 * R, pointing to the incident box I). ref_is_a: R is shape a. */
static int face_contact(const obb *R, const obb *I, const double nr[3], int ref_is_a,
                        double margin, tl_contact_point *out) {
  /* reference face: axis k of R with sign s, side axes i, j */
  int k = 0;
  for (int m = 1; m < 3; m++)
    if (fabs(tl_v3_dot(R->ax[m], nr)) > fabs(tl_v3_dot(R->ax[k], nr))) k = m;
  int i = (k + 1) % 3, j = (k + 2) % 3;
  double s = tl_v3_dot(R->ax[k], nr) >= 0 ? 1.0 : -1.0;

  /* incident face: the face of I most anti-parallel to nr */
  int m = 0;
  for (int q = 1; q < 3; q++)
    if (fabs(tl_v3_dot(I->ax[q], nr)) > fabs(tl_v3_dot(I->ax[m], nr))) m = q;
  int m1 = (m + 1) % 3, m2 = (m + 2) % 3;
  double si = tl_v3_dot(I->ax[m], nr) > 0 ? -1.0 : 1.0;
  static const double sq[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};

  /* incident vertices in R's frame */
  double poly[16][3], tmp[16][3];
  int np = 4;
  for (int v = 0; v < 4; v++) {
    double w[3], d[3];
    tl_v3_copy(w, I->c);
    tl_v3_addscl(w, I->ax[m], si * I->h[m]);
    tl_v3_addscl(w, I->ax[m1], sq[v][0] * I->h[m1]);
    tl_v3_addscl(w, I->ax[m2], sq[v][1] * I->h[m2]);
    tl_v3_sub(d, w, R->c);
    for (int q = 0; q < 3; q++) poly[v][q] = tl_v3_dot(d, R->ax[q]);
  }
  /* clip against |x_i| <= h_i and |x_j| <= h_j (Sutherland-Hodgman) */
  for (int plane = 0; plane < 4 && np > 0; plane++) {
    int ax = plane < 2 ? i : j;
    double sg = (plane & 1) ? -1.0 : 1.0, lim = R->h[ax];
    int nq = 0;
    for (int v = 0; v < np; v++) {
      const double *p = poly[v], *q = poly[(v + 1) % np];
      double dp = sg * p[ax] - lim, dq = sg * q[ax] - lim;
      if (dp <= 0) { tl_v3_copy(tmp[nq], p); nq++; }
      if ((dp <= 0) != (dq <= 0)) {
        double t = dp / (dp - dq);
        for (int c = 0; c < 3; c++) tmp[nq][c] = p[c] + t * (q[c] - p[c]);
        nq++;
      }
    }
    for (int v = 0; v < nq; v++) tl_v3_copy(poly[v], tmp[v]);
    np = nq;
  }

  double n_out[3];
  tl_v3_scale(n_out, nr, ref_is_a ? -1.0 : 1.0);
  tl_contact_point cand[16];
  int nc = 0;
  for (int v = 0; v < np; v++) {
    double sep = s * poly[v][k] - R->h[k];
    if (-sep <= -margin) continue;
    double p[3], pr[3];
    tl_v3_copy(p, R->c);
    for (int q = 0; q < 3; q++) tl_v3_addscl(p, R->ax[q], poly[v][q]);
    tl_v3_copy(pr, p);
    tl_v3_addscl(pr, nr, -sep);
    tl_contact_point c;
    if (ref_is_a) tl_np_write(&c, pr, p, n_out, -sep);
    else tl_np_write(&c, p, pr, n_out, -sep);
    tl_np_add_merge(cand, &nc, 16, &c, 1e-9); /* vertices on a side plane repeat */
  }
  nc = tl_np_reduce(cand, nc, 4);
  for (int v = 0; v < nc; v++) out[v] = cand[v];
  return nc;
}

/* Edge-edge contact along L (unit, from A to B) for edge axis i of A and j of
 * B: one point between the closest points of the two supporting edges. */
static int edge_contact(const obb *A, const obb *B, const double L[3], int i, int j, double sep,
                        tl_contact_point *out) {
  double ca[3], cb[3];
  tl_v3_copy(ca, A->c);
  tl_v3_copy(cb, B->c);
  for (int k = 0; k < 3; k++) {
    if (k != i) tl_v3_addscl(ca, A->ax[k], tl_v3_dot(A->ax[k], L) >= 0 ? A->h[k] : -A->h[k]);
    if (k != j) tl_v3_addscl(cb, B->ax[k], tl_v3_dot(B->ax[k], L) >= 0 ? -B->h[k] : B->h[k]);
  }
  double a0[3], a1[3], b0[3], b1[3], s, t, qa[3], qb[3], n[3];
  tl_v3_copy(a0, ca);
  tl_v3_addscl(a0, A->ax[i], -A->h[i]);
  tl_v3_copy(a1, ca);
  tl_v3_addscl(a1, A->ax[i], A->h[i]);
  tl_v3_copy(b0, cb);
  tl_v3_addscl(b0, B->ax[j], -B->h[j]);
  tl_v3_copy(b1, cb);
  tl_v3_addscl(b1, B->ax[j], B->h[j]);
  tl_np_closest_segments(a0, a1, b0, b1, &s, &t, qa, qb);
  tl_v3_scale(n, L, -1.0);
  tl_np_write(out, qa, qb, n, -sep);
  return 1;
}

int tl_np_box_box(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out) {
  obb A, B;
  obb_of(&A, a);
  obb_of(&B, b);
  double d[3];
  tl_v3_sub(d, B.c, A.c);

  /* face axes: A's, then B's (A wins ties) */
  double face_sep = -INFINITY, face_L[3] = {0, 0, 1};
  int face_of_a = 1;
  for (int k = 0; k < 6; k++) {
    double L[3];
    tl_v3_copy(L, k < 3 ? A.ax[k] : B.ax[k - 3]);
    double sep = separation(&A, &B, d, L);
    if (sep >= margin) return 0;
    if (sep > face_sep + 1e-12) {
      face_sep = sep;
      tl_v3_copy(face_L, L);
      face_of_a = k < 3;
    }
  }
  /* edge axes A_i x B_j (skipped when the edges are parallel) */
  double edge_sep = -INFINITY, edge_L[3] = {0, 0, 1};
  int ei = -1, ej = -1;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double L[3];
      tl_v3_cross(L, A.ax[i], B.ax[j]);
      if (tl_v3_normalize(L) < 1e-6) continue;
      double sep = separation(&A, &B, d, L);
      if (sep >= margin) return 0;
      if (sep > edge_sep) {
        edge_sep = sep;
        tl_v3_copy(edge_L, L);
        ei = i;
        ej = j;
      }
    }
  if (ei >= 0 && edge_sep > face_sep + 0.05 * fabs(face_sep) + 1e-6)
    return edge_contact(&A, &B, edge_L, ei, ej, edge_sep, out);
  if (face_of_a) return face_contact(&A, &B, face_L, 1, margin, out);
  double nr[3];
  tl_v3_scale(nr, face_L, -1.0);
  return face_contact(&B, &A, nr, 0, margin, out);
}
