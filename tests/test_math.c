/* Guards: src/math/tl_math.h, src/math/tl_vec2.h (vectors, rotations, quaternions, spatial
 * algebra). */
/* Talus internal math (src/math/tl_math.h) against hand-computed values.
 *
 * Every expected value here is computed independently of tl_math.h: rotation
 * matrices as explicit products of elementary rotations written out in this
 * file, quaternion rotation as q v q* with a Hamilton product written out
 * here, spatial momenta from m v_com and c x m v_com + Ic w. Tolerances are a
 * few ulps of the quantities involved (1e-14 .. 1e-12), so a wrong sign, a
 * swapped index or a transposed matrix fails by many orders of magnitude. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "math/tl_math.h"
#include "math/tl_vec2.h"
#include "test_util.h"

#define TOL 1e-14

/* ------------------------------------------------------------ test helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rng_uniform(void) { /* splitmix64 -> [0, 1) */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double rng_normal(void) { /* Box-Muller */
  double u1 = rng_uniform(), u2 = rng_uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * TL_PI * u2);
}
static void rand_unit_quat(double q[4]) {
  double n;
  do {
    for (int i = 0; i < 4; i++) q[i] = rng_normal();
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 1e-3);
  for (int i = 0; i < 4; i++) q[i] /= n;
}
static void rand_vec(double *v, int n) {
  for (int i = 0; i < n; i++) v[i] = rng_normal();
}

/* Elementary rotations written out (row-major). */
static void rot_x(double R[9], double a) {
  double c = cos(a), s = sin(a);
  double t[9] = {1, 0, 0, 0, c, -s, 0, s, c};
  memcpy(R, t, sizeof t);
}
static void rot_y(double R[9], double a) {
  double c = cos(a), s = sin(a);
  double t[9] = {c, 0, s, 0, 1, 0, -s, 0, c};
  memcpy(R, t, sizeof t);
}
static void rot_z(double R[9], double a) {
  double c = cos(a), s = sin(a);
  double t[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  memcpy(R, t, sizeof t);
}
/* Plain triple loop, independent of tl_m3_mul. */
static void matmul(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++) s += a[3 * i + k] * b[3 * k + j];
      t[3 * i + j] = s;
    }
  memcpy(r, t, sizeof t);
}
static double maxdiff(const double *a, const double *b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++) {
    double e = fabs(a[i] - b[i]);
    if (!(e <= d)) d = e; /* NaN propagates */
  }
  return d;
}
/* Hamilton product written out from i^2 = j^2 = k^2 = ijk = -1. */
static void hamilton(double r[4], const double a[4], const double b[4]) {
  double aw = a[0], ax = a[1], ay = a[2], az = a[3];
  double bw = b[0], bx = b[1], by = b[2], bz = b[3];
  r[0] = aw * bw - ax * bx - ay * by - az * bz;
  r[1] = aw * bx + bw * ax + (ay * bz - az * by);
  r[2] = aw * by + bw * ay + (az * bx - ax * bz);
  r[3] = aw * bz + bw * az + (ax * by - ay * bx);
}
/* Rotate v by unit quaternion q: q (0, v) q*. */
static void quat_rotate(double r[3], const double q[4], const double v[3]) {
  double p[4] = {0, v[0], v[1], v[2]}, qc[4] = {q[0], -q[1], -q[2], -q[3]}, t[4], u[4];
  hamilton(t, q, p);
  hamilton(u, t, qc);
  r[0] = u[1];
  r[1] = u[2];
  r[2] = u[3];
}

/* ------------------------------------------------------------------ tests */

static void test_rpy(void) {
  const double cases[][3] = {{0.3, 0, 0},   {0, -0.7, 0},  {0, 0, 1.2},   {0.1, 0.2, 0.3},
                             {-2.5, 1.1, 3.0}, {1.5707963267948966, 0.4, -0.9}, {3.1, -1.5, 0.05}};
  double worst = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const double *rpy = cases[k];
    double Rx[9], Ry[9], Rz[9], t[9], want[9], got[9];
    rot_x(Rx, rpy[0]);
    rot_y(Ry, rpy[1]);
    rot_z(Rz, rpy[2]);
    matmul(t, Ry, Rx);
    matmul(want, Rz, t); /* URDF: fixed axes X, Y, Z -> Rz Ry Rx */
    tl_m3_from_rpy(got, rpy);
    double e = maxdiff(got, want, 9);
    if (!(e <= worst)) worst = e;
    TL_CHECK(e <= TOL, "rpy (%g %g %g): max |R - Rz Ry Rx| = %.3g", rpy[0], rpy[1], rpy[2], e);
  }
  /* A hand-evaluated case: roll = 90 deg maps y to z. */
  double R[9], v[3] = {0, 1, 0}, r[3];
  tl_m3_from_rpy(R, (double[3]){TL_PI / 2, 0, 0});
  tl_m3_mulv(r, R, v);
  TL_CHECK(fabs(r[0]) < TOL && fabs(r[1]) < TOL && fabs(r[2] - 1) < TOL,
           "roll 90 deg: Ry = (%g %g %g), want (0 0 1)", r[0], r[1], r[2]);
  /* yaw = 90 deg after pitch = 90 deg: x -> (pitch) -z -> (yaw) -z */
  tl_m3_from_rpy(R, (double[3]){0, TL_PI / 2, TL_PI / 2});
  tl_m3_mulv(r, R, (double[3]){1, 0, 0});
  TL_CHECK(fabs(r[0]) < TOL && fabs(r[1]) < TOL && fabs(r[2] + 1) < TOL,
           "pitch 90 then yaw 90: R x = (%g %g %g), want (0 0 -1)", r[0], r[1], r[2]);
  printf("rpy: worst |R - Rz Ry Rx| %.2e\n", worst);
}

static void test_axis_angle(void) {
  double R[9], r[3];
  tl_m3_axis_angle(R, (double[3]){0, 0, 1}, TL_PI / 2);
  tl_m3_mulv(r, R, (double[3]){1, 0, 0});
  TL_CHECK(fabs(r[0]) < TOL && fabs(r[1] - 1) < TOL && fabs(r[2]) < TOL,
           "90 deg about z: R x = (%g %g %g), want (0 1 0)", r[0], r[1], r[2]);
  tl_m3_mulv(r, R, (double[3]){0, 1, 0});
  TL_CHECK(fabs(r[0] + 1) < TOL && fabs(r[1]) < TOL && fabs(r[2]) < TOL,
           "90 deg about z: R y = (%g %g %g), want (-1 0 0)", r[0], r[1], r[2]);
  /* 120 deg about (1,1,1)/sqrt 3 permutes the axes: x -> y -> z -> x. */
  double a = 1.0 / sqrt(3.0);
  tl_m3_axis_angle(R, (double[3]){a, a, a}, 2.0 * TL_PI / 3.0);
  double perm[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0};
  TL_CHECK(maxdiff(R, perm, 9) < 1e-15 * 10, "120 deg about (1,1,1): max |R - P| = %.3g",
           maxdiff(R, perm, 9));
  /* Against the elementary rotations about x, y, z. */
  double worst = 0;
  const double ang[] = {-2.9, -0.4, 0.0, 0.7, 2.2};
  for (size_t k = 0; k < sizeof ang / sizeof ang[0]; k++) {
    double E[9];
    tl_m3_axis_angle(R, (double[3]){1, 0, 0}, ang[k]);
    rot_x(E, ang[k]);
    double e = maxdiff(R, E, 9);
    tl_m3_axis_angle(R, (double[3]){0, 1, 0}, ang[k]);
    rot_y(E, ang[k]);
    e = fmax(e, maxdiff(R, E, 9));
    tl_m3_axis_angle(R, (double[3]){0, 0, 1}, ang[k]);
    rot_z(E, ang[k]);
    e = fmax(e, maxdiff(R, E, 9));
    worst = fmax(worst, e);
    TL_CHECK(e <= TOL, "axis-angle %g rad about x/y/z: max diff %.3g", ang[k], e);
  }
  printf("axis-angle: worst diff vs elementary rotations %.2e\n", worst);
}

static void test_quat_product(void) {
  const double one[4] = {1, 0, 0, 0}, i[4] = {0, 1, 0, 0}, j[4] = {0, 0, 1, 0}, k[4] = {0, 0, 0, 1};
  const double mone[4] = {-1, 0, 0, 0}, mi[4] = {0, -1, 0, 0}, mj[4] = {0, 0, -1, 0},
               mk[4] = {0, 0, 0, -1};
  struct {
    const double *a, *b, *want;
    const char *what;
  } t[] = {{i, j, k, "i j = k"},     {j, k, i, "j k = i"},       {k, i, j, "k i = j"},
           {j, i, mk, "j i = -k"},   {k, j, mi, "k j = -i"},     {i, k, mj, "i k = -j"},
           {i, i, mone, "i i = -1"}, {j, j, mone, "j j = -1"},   {k, k, mone, "k k = -1"},
           {one, i, i, "1 i = i"},   {k, one, k, "k 1 = k"}};
  for (size_t n = 0; n < sizeof t / sizeof t[0]; n++) {
    double r[4];
    tl_quat_mul(r, t[n].a, t[n].b);
    TL_CHECK(maxdiff(r, t[n].want, 4) == 0, "%s: got (%g %g %g %g)", t[n].what, r[0], r[1], r[2],
             r[3]);
  }
  /* Random products against the written-out Hamilton product; aliasing r = a. */
  double worst = 0;
  for (int n = 0; n < 20; n++) {
    double a[4], b[4], r[4], want[4];
    rand_vec(a, 4);
    rand_vec(b, 4);
    hamilton(want, a, b);
    tl_quat_mul(r, a, b);
    worst = fmax(worst, maxdiff(r, want, 4));
    tl_quat_mul(a, a, b); /* in place */
    worst = fmax(worst, maxdiff(a, want, 4));
  }
  TL_CHECK(worst <= 1e-14, "random quaternion products: worst diff %.3g", worst);
}

static void test_quat_matrix(void) {
  double worst_rt = 0, worst_rot = 0, worst_orth = 0;
  for (int n = 0; n < 200; n++) {
    double q[4], R[9], q2[4];
    rand_unit_quat(q);
    if (n == 0) { /* near-180 deg rotations exercise the other Shepperd branches */
      double t[4] = {1e-9, 0.6, -0.8, 0};
      tl_quat_normalize(t);
      memcpy(q, t, sizeof t);
    }
    tl_quat_to_m3(R, q);
    /* R v == q v q* for a few vectors */
    for (int m = 0; m < 3; m++) {
      double v[3], a[3], b[3];
      rand_vec(v, 3);
      tl_m3_mulv(a, R, v);
      quat_rotate(b, q, v);
      worst_rot = fmax(worst_rot, maxdiff(a, b, 3));
    }
    /* R^T R == I, det R == 1 */
    double RtR[9], I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double Rt[9] = {R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]};
    matmul(RtR, Rt, R);
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    worst_orth = fmax(worst_orth, fmax(maxdiff(RtR, I, 9), fabs(det - 1)));
    /* back to a quaternion: q or -q */
    tl_quat_from_m3(q2, R);
    double dp = maxdiff(q2, q, 4);
    double qm[4] = {-q[0], -q[1], -q[2], -q[3]};
    double dm = maxdiff(q2, qm, 4);
    worst_rt = fmax(worst_rt, fmin(dp, dm));
    TL_CHECK(q2[0] >= 0, "quat_from_m3 must return w >= 0, got %g", q2[0]);
  }
  TL_CHECK(worst_rot <= 1e-14, "quat_to_m3: R v vs q v q*: worst %.3g", worst_rot);
  TL_CHECK(worst_orth <= 1e-14, "quat_to_m3: |R^T R - I|, |det - 1| worst %.3g", worst_orth);
  TL_CHECK(worst_rt <= 1e-14, "quat -> matrix -> quat round trip: worst %.3g", worst_rt);
  printf("quat<->matrix (200 random): R v vs q v q* %.2e, orthonormality %.2e, round trip %.2e\n",
         worst_rot, worst_orth, worst_rt);

  /* Hand-computed: 90 deg about z is (cos 45, 0, 0, sin 45). */
  double R[9], q[4];
  tl_m3_axis_angle(R, (double[3]){0, 0, 1}, TL_PI / 2);
  tl_quat_from_m3(q, R);
  double want[4] = {sqrt(0.5), 0, 0, sqrt(0.5)};
  TL_CHECK(maxdiff(q, want, 4) <= TOL, "quat of 90 deg about z: (%g %g %g %g)", q[0], q[1], q[2],
           q[3]);
}

static void test_exp_log(void) {
  /* Hand value: exp((0, 0, pi/2)) = (cos pi/4, 0, 0, sin pi/4). */
  double q[4], v[3];
  tl_quat_exp(q, (double[3]){0, 0, TL_PI / 2});
  double want[4] = {cos(TL_PI / 4), 0, 0, sin(TL_PI / 4)};
  TL_CHECK(maxdiff(q, want, 4) <= TOL, "quat_exp(0,0,pi/2) = (%.17g %g %g %.17g)", q[0], q[1],
           q[2], q[3]);
  tl_quat_exp(q, (double[3]){0, 0, 0});
  TL_CHECK(q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0, "quat_exp(0) = (%g %g %g %g)", q[0],
           q[1], q[2], q[3]);

  /* Round trips log(exp(v)) == v, relative to |v|, over angles from 1e-13 to pi. */
  const double angles[] = {1e-13, 1e-10, 1e-9,  1e-8 * 0.999, 1e-8 * 1.001, 1e-6, 1e-3, 0.5, 1.0,
                           2.0,   3.0,   TL_PI - 1e-3, TL_PI - 1e-6, TL_PI - 1e-9};
  double worst = 0, worst_m = 0;
  for (size_t k = 0; k < sizeof angles / sizeof angles[0]; k++) {
    for (int rep = 0; rep < 5; rep++) {
      double axis[3], w[3], v2[3], R[9], Rq[9];
      rand_vec(axis, 3);
      tl_v3_normalize(axis);
      tl_v3_scale(w, axis, angles[k]);
      tl_quat_exp(q, w);
      double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      TL_CHECK(fabs(nq - 1) <= 1e-15 * 4, "|exp(v)| = 1 + %.3g at angle %g", nq - 1, angles[k]);
      tl_quat_log(v2, q);
      double e = maxdiff(v2, w, 3) / angles[k];
      worst = fmax(worst, e);
      TL_CHECK(e <= 1e-12, "log(exp(v)) at angle %.17g: relative error %.3g", angles[k], e);
      /* exp agrees with the axis-angle rotation matrix */
      tl_m3_axis_angle(R, axis, angles[k]);
      tl_quat_to_m3(Rq, q);
      double em = maxdiff(R, Rq, 9);
      worst_m = fmax(worst_m, em);
      TL_CHECK(em <= 1e-14, "exp(v) vs axis-angle at angle %g: %.3g", angles[k], em);
    }
  }
  /* log of -q is the same rotation: same vector. */
  double w[3] = {0.3, -0.2, 0.1}, qn[4], v2[3];
  tl_quat_exp(q, w);
  for (int i = 0; i < 4; i++) qn[i] = -q[i];
  tl_quat_log(v2, qn);
  TL_CHECK(maxdiff(v2, w, 3) <= 1e-15 * 4, "log(-q) != log(q): diff %.3g", maxdiff(v2, w, 3));
  /* exp(v) for |v| > pi: the log returns the short way round, 2 pi - |v| the other way. */
  double big[3] = {0, 0, TL_PI + 0.5};
  tl_quat_exp(q, big);
  tl_quat_log(v, q);
  double want_v[3] = {0, 0, -(TL_PI - 0.5)};
  TL_CHECK(maxdiff(v, want_v, 3) <= 1e-14, "log(exp((0,0,pi+0.5))) = (%g %g %.17g), want (0 0 %.17g)",
           v[0], v[1], v[2], want_v[2]);
  printf("exp/log: worst relative round-trip error %.2e, exp vs axis-angle %.2e\n", worst,
         worst_m);
}

/* ------------------------------------------------------------ spatial */

static void test_spatial_cross(void) {
  /* Duality: (v x* f) . m == -f . (v x m) for all v, f, m (Featherstone 2008, eq. 2.33). */
  double worst = 0;
  for (int n = 0; n < 100; n++) {
    double v[6], f[6], m[6], a[6], b[6];
    rand_vec(v, 6);
    rand_vec(f, 6);
    rand_vec(m, 6);
    tl_sp_cross_force(a, v, f);
    tl_sp_cross_motion(b, v, m);
    double lhs = tl_sp_dot(a, m), rhs = -tl_sp_dot(f, b);
    double scale = 1.0 + fabs(lhs);
    worst = fmax(worst, fabs(lhs - rhs) / scale);
  }
  TL_CHECK(worst <= 1e-14, "(v x* f) . m == -f . (v x m): worst relative %.3g", worst);

  /* v x v == 0 for motion vectors. */
  double v[6], r[6], z[6] = {0};
  rand_vec(v, 6);
  tl_sp_cross_motion(r, v, v);
  TL_CHECK(maxdiff(r, z, 6) <= 1e-15 * 8, "v x v = 0: max %.3g", maxdiff(r, z, 6));

  /* Against the 6x6 matrix crm(v) = [[w]x 0; [vo]x [w]x] written out. */
  double worst_m = 0, worst_f = 0;
  for (int n = 0; n < 20; n++) {
    double m[6], want[6], wantf[6];
    rand_vec(v, 6);
    rand_vec(m, 6);
    const double *w = v, *vo = v + 3;
    double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
    double V[9] = {0, -vo[2], vo[1], vo[2], 0, -vo[0], -vo[1], vo[0], 0};
    for (int i = 0; i < 3; i++) {
      want[i] = W[3 * i] * m[0] + W[3 * i + 1] * m[1] + W[3 * i + 2] * m[2];
      want[3 + i] = V[3 * i] * m[0] + V[3 * i + 1] * m[1] + V[3 * i + 2] * m[2] +
                    W[3 * i] * m[3] + W[3 * i + 1] * m[4] + W[3 * i + 2] * m[5];
      /* crf(v) = -crm(v)^T = [[w]x [vo]x; 0 [w]x] */
      wantf[i] = W[3 * i] * m[0] + W[3 * i + 1] * m[1] + W[3 * i + 2] * m[2] +
                 V[3 * i] * m[3] + V[3 * i + 1] * m[4] + V[3 * i + 2] * m[5];
      wantf[3 + i] = W[3 * i] * m[3] + W[3 * i + 1] * m[4] + W[3 * i + 2] * m[5];
    }
    tl_sp_cross_motion(r, v, m);
    worst_m = fmax(worst_m, maxdiff(r, want, 6));
    tl_sp_cross_force(r, v, m);
    worst_f = fmax(worst_f, maxdiff(r, wantf, 6));
  }
  TL_CHECK(worst_m <= 1e-14, "cross_motion vs crm(v) m: worst %.3g", worst_m);
  TL_CHECK(worst_f <= 1e-14, "cross_force vs crf(v) f: worst %.3g", worst_f);
  printf("spatial cross: duality %.2e, crm %.2e, crf %.2e\n", worst, worst_m, worst_f);
}

static void test_spatial_inertia(void) {
  /* Hand case: m = 2 kg at c = (1, 2, 3), Ic = diag(0.1, 0.2, 0.3); spatial
   * velocity [w; v_O] = [(0,0,1); (1,0,0)] (v_O: velocity of the body-fixed
   * point at the world origin).
   *   v_com = v_O + w x c = (1,0,0) + (-2,1,0) = (-1, 1, 0)
   *   p = m v_com = (-2, 2, 0)
   *   L_O = Ic w + c x p = (0,0,0.3) + (-6,-6,6) = (-6, -6, 6.3)
   *   I_O = Ic + m (|c|^2 E - c c^T): xx 0.1 + 2 (14 - 1) = 26.1, yy 20.2, zz 10.3,
   *         xy -4, xz -6, yz -12
   *   KE = 1/2 [w; v_O] . [L_O; p] = 1/2 m |v_com|^2 + 1/2 w Ic w = 2 + 0.15 = 2.15 */
  double c[3] = {1, 2, 3}, Ic[9] = {0.1, 0, 0, 0, 0.2, 0, 0, 0, 0.3}, I[10], f[6];
  tl_spi_from_body(I, 2.0, c, Ic);
  double wantI[10] = {2, 2, 4, 6, 26.1, -4, -6, 20.2, -12, 10.3};
  double e_hand = maxdiff(I, wantI, 10);
  TL_CHECK(maxdiff(I, wantI, 10) <= 1e-13, "spi_from_body: max diff %.3g (Ixx %g Iyz %g)",
           maxdiff(I, wantI, 10), I[4], I[8]);
  double v[6] = {0, 0, 1, 1, 0, 0};
  tl_spi_mulv(f, I, v);
  double wantf[6] = {-6, -6, 6.3, -2, 2, 0};
  e_hand = fmax(e_hand, maxdiff(f, wantf, 6));
  TL_CHECK(maxdiff(f, wantf, 6) <= 1e-13, "spi_mulv: (%g %g %g | %g %g %g), want (-6 -6 6.3 | -2 2 0)",
           f[0], f[1], f[2], f[3], f[4], f[5]);
  TL_CHECK_NEAR(0.5 * tl_sp_dot(v, f), 2.15, 1e-14, "kinetic energy 1/2 v . I v");

  /* Random bodies: the same identities, plus additivity of inertias. */
  double worst = 0;
  for (int n = 0; n < 50; n++) {
    double m = 0.1 + 5 * rng_uniform(), cc[3], A[9], Ib[9], R[9], q[4], vv[6], ff[6];
    rand_vec(cc, 3);
    /* a random SPD inertia: R diag R^T */
    rand_unit_quat(q);
    tl_quat_to_m3(R, q);
    double d[9] = {0.1 + rng_uniform(), 0, 0, 0, 0.1 + rng_uniform(), 0, 0, 0, 0.1 + rng_uniform()};
    double Rt[9] = {R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]};
    matmul(A, R, d);
    matmul(Ib, A, Rt);
    rand_vec(vv, 6);
    tl_spi_from_body(I, m, cc, Ib);
    tl_spi_mulv(ff, I, vv);
    double vcom[3], p[3], L[3], t[3];
    tl_v3_cross(vcom, vv, cc);
    tl_v3_add(vcom, vcom, vv + 3);
    tl_v3_scale(p, vcom, m);
    tl_m3_mulv(L, Ib, vv);
    tl_v3_cross(t, cc, p);
    tl_v3_add(L, L, t);
    double want[6] = {L[0], L[1], L[2], p[0], p[1], p[2]};
    worst = fmax(worst, maxdiff(ff, want, 6) / (1 + fabs(want[0]) + fabs(want[3])));
    /* two halves add up to the whole */
    double Ih[10], Isum[10] = {0}, Ihalf[9];
    for (int i = 0; i < 9; i++) Ihalf[i] = 0.5 * Ib[i];
    tl_spi_from_body(Ih, 0.5 * m, cc, Ihalf);
    tl_spi_add(Isum, Ih);
    tl_spi_add(Isum, Ih);
    worst = fmax(worst, maxdiff(Isum, I, 10) / (1 + fabs(I[4])));
  }
  TL_CHECK(worst <= 1e-14, "spi_mulv vs (c x m v_com + Ic w, m v_com): worst relative %.3g",
           worst);
  printf("spatial inertia: hand case (I_O, momentum) max error %.2e, random bodies worst %.2e\n",
         e_hand, worst);
}

static void test_tensor(void) {
  /* diag(1,2,3) rotated 90 deg about z: diag(2,1,3). */
  double R[9], A[9] = {1, 0, 0, 0, 2, 0, 0, 0, 3}, r[9];
  rot_z(R, TL_PI / 2);
  tl_m3_rotate_tensor(r, R, A);
  double want[9] = {2, 0, 0, 0, 1, 0, 0, 0, 3};
  TL_CHECK(maxdiff(r, want, 9) <= TOL, "Rz(90) diag(1,2,3) Rz^T: max diff %.3g", maxdiff(r, want, 9));
  /* 45 deg about z: [[1.5, -0.5], [-0.5, 1.5]] in the xy block. */
  rot_z(R, TL_PI / 4);
  tl_m3_rotate_tensor(r, R, A);
  double want45[9] = {1.5, -0.5, 0, -0.5, 1.5, 0, 0, 0, 3};
  TL_CHECK(maxdiff(r, want45, 9) <= TOL, "Rz(45) diag(1,2,3) Rz^T: max diff %.3g",
           maxdiff(r, want45, 9));
  /* Random: v^T (R A R^T) v == (R^T v)^T A (R^T v), and against a triple product. */
  double worst = 0;
  for (int n = 0; n < 50; n++) {
    double q[4], B[9], t[9], Rt[9], w[9], v[3], x[3], Ax[3], y[3];
    rand_unit_quat(q);
    tl_quat_to_m3(R, q);
    rand_vec(B, 9);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < i; j++) B[3 * i + j] = B[3 * j + i]; /* symmetric */
    tl_m3_rotate_tensor(r, R, B);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
    matmul(t, R, B);
    matmul(w, t, Rt);
    worst = fmax(worst, maxdiff(r, w, 9));
    rand_vec(v, 3);
    tl_m3_mulv(y, r, v);
    tl_m3_tmulv(x, R, v);
    tl_m3_mulv(Ax, B, x);
    worst = fmax(worst, fabs(tl_v3_dot(v, y) - tl_v3_dot(x, Ax)) / (1 + fabs(tl_v3_dot(v, y))));
  }
  TL_CHECK(worst <= 1e-13, "rotate_tensor vs R A R^T: worst %.3g", worst);

  /* The other mat3 products against the plain triple loop. */
  double a[9], b[9], at[9], bt[9], got[9], ref[9], e = 0;
  rand_vec(a, 9);
  rand_vec(b, 9);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      at[3 * i + j] = a[3 * j + i];
      bt[3 * i + j] = b[3 * j + i];
    }
  tl_m3_mul(got, a, b);
  matmul(ref, a, b);
  e = fmax(e, maxdiff(got, ref, 9));
  tl_m3_tmul(got, a, b);
  matmul(ref, at, b);
  e = fmax(e, maxdiff(got, ref, 9));
  tl_m3_mult(got, a, b);
  matmul(ref, a, bt);
  e = fmax(e, maxdiff(got, ref, 9));
  tl_m3_transpose(got, a);
  e = fmax(e, maxdiff(got, at, 9));
  double v[3] = {0.3, -1.2, 2.0}, S[9], sv[3], cr[3];
  tl_m3_skew(S, a);
  tl_m3_mulv(sv, S, v);
  tl_v3_cross(cr, a, v);
  e = fmax(e, maxdiff(sv, cr, 3));
  TL_CHECK(e <= 1e-14, "mat3 mul / tmul / mult / transpose / skew: worst %.3g", e);
  /* Hand cross product: x cross y = z. */
  tl_v3_cross(cr, (double[3]){1, 0, 0}, (double[3]){0, 1, 0});
  TL_CHECK(cr[0] == 0 && cr[1] == 0 && cr[2] == 1, "x cross y = (%g %g %g)", cr[0], cr[1], cr[2]);
  printf("tensor rotation: worst %.2e; mat3 products %.2e\n", worst, e);
}

/* tl_vec2.h's kernels against the scalar loops written out here, bit for
 * bit (memcmp): the dot with its even/odd partial sums, the axpys entry by
 * entry, for every length 0..41 and offsets that make the pairs unaligned.
 * A kernel that sums in another order, drops the tail or touches y[n]
 * fails. */
static void test_vec2(void) {
  double x[48], y[48], z[48], ya[48], yb[48];
  int bad_dot = 0, bad_axmy = 0, bad_axmy2 = 0, cases = 0;
  for (int n = 0; n <= 41; n++)
    for (int off = 0; off < 2; off++) {
      for (int i = 0; i < 48; i++) x[i] = rng_normal(), y[i] = rng_normal(), z[i] = rng_normal() * 1e-3;
      const double *xo = x + off, *yo = y + off, *zo = z + off;
      double s0 = 0, s1 = 0;
      int j = 0;
      for (; j + 1 < n; j += 2) s0 += xo[j] * yo[j], s1 += xo[j + 1] * yo[j + 1];
      if (j < n) s0 += xo[j] * yo[j];
      double want = s0 + s1, got = tl_v2_dot(xo, yo, n);
      bad_dot += memcmp(&want, &got, sizeof want) != 0;
      const double a = rng_normal(), b = rng_normal();
      memcpy(ya, y, sizeof y);
      memcpy(yb, y, sizeof y);
      for (int i = 0; i < n; i++) ya[off + i] -= a * xo[i];
      tl_v2_axmy(yb + off, xo, a, n);
      bad_axmy += memcmp(ya, yb, sizeof ya) != 0;
      memcpy(ya, y, sizeof y);
      memcpy(yb, y, sizeof y);
      for (int i = 0; i < n; i++) ya[off + i] = (ya[off + i] - a * xo[i]) - b * zo[i];
      tl_v2_axmy2(yb + off, xo, a, zo, b, n);
      bad_axmy2 += memcmp(ya, yb, sizeof ya) != 0;
      cases++;
    }
  TL_CHECK(bad_dot == 0, "tl_v2_dot: %d of %d lengths/offsets differ from the scalar even/odd sums", bad_dot, cases);
  TL_CHECK(bad_axmy == 0, "tl_v2_axmy: %d of %d differ from y -= a x entry by entry", bad_axmy, cases);
  TL_CHECK(bad_axmy2 == 0, "tl_v2_axmy2: %d of %d differ from (y - a x) - b z entry by entry", bad_axmy2, cases);
}

int main(void) {
  test_rpy();
  test_axis_angle();
  test_quat_product();
  test_quat_matrix();
  test_exp_log();
  test_spatial_cross();
  test_spatial_inertia();
  test_tensor();
  test_vec2();
  return tl_test_finish();
}
