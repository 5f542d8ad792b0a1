/* Internal math: 3-vectors, 3x3 matrices (row-major), quaternions (w, x, y, z)
 * and the spatial-algebra pieces the dynamics needs. Inline, allocation free.
 *
 * Spatial vectors are 6-vectors [angular; linear] (Featherstone, Rigid Body
 * Dynamics Algorithms, 2008, ch. 2), expressed in WORLD axes about the WORLD
 * origin. Rigid-body inertias are kept as (m, h = m c, I_O) with I_O the
 * rotational inertia about the world origin; they add without transforms. */
#ifndef TALUS_MATH_H
#define TALUS_MATH_H

#include <math.h>
#include <string.h>

#define TL_PI 3.14159265358979323846

/* ---------------- vec3 ---------------- */
static inline void tl_v3_set(double r[3], double x, double y, double z) { r[0] = x; r[1] = y; r[2] = z; }
static inline void tl_v3_copy(double r[3], const double a[3]) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
static inline void tl_v3_add(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2];
}
static inline void tl_v3_sub(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2];
}
static inline void tl_v3_scale(double r[3], const double a[3], double s) {
  r[0] = a[0] * s; r[1] = a[1] * s; r[2] = a[2] * s;
}
/* r += s * a */
static inline void tl_v3_addscl(double r[3], const double a[3], double s) {
  r[0] += a[0] * s; r[1] += a[1] * s; r[2] += a[2] * s;
}
static inline double tl_v3_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
/* r = a x b (r may alias neither a nor b) */
static inline void tl_v3_cross(double r[3], const double a[3], const double b[3]) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  r[0] = x; r[1] = y; r[2] = z;
}
static inline double tl_v3_norm(const double a[3]) { return sqrt(tl_v3_dot(a, a)); }
/* Normalise in place; returns the original norm (vector untouched if 0). */
static inline double tl_v3_normalize(double a[3]) {
  double n = tl_v3_norm(a);
  if (n > 0) tl_v3_scale(a, a, 1.0 / n);
  return n;
}
static inline int tl_v3_isfinite(const double a[3]) { return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

/* ---------------- mat3 (row-major) ---------------- */
static inline void tl_m3_identity(double R[9]) {
  memset(R, 0, 9 * sizeof(double));
  R[0] = R[4] = R[8] = 1.0;
}
static inline void tl_m3_copy(double r[9], const double a[9]) { memcpy(r, a, 9 * sizeof(double)); }
/* r = a b (r may alias a or b) */
static inline void tl_m3_mul(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  memcpy(r, t, sizeof(t));
}
/* r = a^T b */
static inline void tl_m3_tmul(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
  memcpy(r, t, sizeof(t));
}
/* r = a b^T */
static inline void tl_m3_mult(double r[9], const double a[9], const double b[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2];
  memcpy(r, t, sizeof(t));
}
/* r = A v (r may alias v) */
static inline void tl_m3_mulv(double r[3], const double A[9], const double v[3]) {
  double x = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
  double y = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
  double z = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
  r[0] = x; r[1] = y; r[2] = z;
}
/* r = A^T v (r may alias v) */
static inline void tl_m3_tmulv(double r[3], const double A[9], const double v[3]) {
  double x = A[0] * v[0] + A[3] * v[1] + A[6] * v[2];
  double y = A[1] * v[0] + A[4] * v[1] + A[7] * v[2];
  double z = A[2] * v[0] + A[5] * v[1] + A[8] * v[2];
  r[0] = x; r[1] = y; r[2] = z;
}
static inline void tl_m3_transpose(double r[9], const double a[9]) {
  double t[9] = {a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]};
  memcpy(r, t, sizeof(t));
}
/* Skew-symmetric matrix [v]x, so [v]x w = v x w. */
static inline void tl_m3_skew(double r[9], const double v[3]) {
  r[0] = 0; r[1] = -v[2]; r[2] = v[1];
  r[3] = v[2]; r[4] = 0; r[5] = -v[0];
  r[6] = -v[1]; r[7] = v[0]; r[8] = 0;
}
/* r = R A R^T (rotate a symmetric tensor) */
static inline void tl_m3_rotate_tensor(double r[9], const double R[9], const double A[9]) {
  double t[9];
  tl_m3_mul(t, R, A);
  tl_m3_mult(r, t, R);
}
/* r = A Rot(e_i, angle) for the coordinate axis e_i (i = 0, 1, 2) given
 * c = cos(angle) and s = sin(angle): column i of A is kept and the two others,
 * j = i + 1 and k = i + 2 (mod 3), become c A_j + s A_k and c A_k - s A_j
 * (12 products instead of a Rodrigues matrix and a 27-product 3x3 product).
 * r must not alias A. */
static inline void tl_m3_mul_rot_axis(double r[9], const double A[9], int i, double c, double s) {
  int j = i == 2 ? 0 : i + 1, k = i == 0 ? 2 : i - 1;
  for (int row = 0; row < 3; row++) {
    const double *a = A + 3 * row;
    double *o = r + 3 * row;
    o[i] = a[i];
    o[j] = c * a[j] + s * a[k];
    o[k] = c * a[k] - s * a[j];
  }
}
/* Index i of a coordinate axis a = +-e_i (two components exactly 0), else -1. */
static inline int tl_v3_coord_axis(const double a[3]) {
  if (a[1] == 0.0 && a[2] == 0.0) return 0;
  if (a[0] == 0.0 && a[2] == 0.0) return 1;
  if (a[0] == 0.0 && a[1] == 0.0) return 2;
  return -1;
}
/* Rotation about a unit axis by angle (Rodrigues). */
static inline void tl_m3_axis_angle(double R[9], const double a[3], double angle) {
  double c = cos(angle), s = sin(angle), t = 1.0 - c;
  double x = a[0], y = a[1], z = a[2];
  R[0] = t * x * x + c;     R[1] = t * x * y - s * z; R[2] = t * x * z + s * y;
  R[3] = t * x * y + s * z; R[4] = t * y * y + c;     R[5] = t * y * z - s * x;
  R[6] = t * x * z - s * y; R[7] = t * y * z + s * x; R[8] = t * z * z + c;
}
/* URDF roll-pitch-yaw (fixed axes X, Y, Z): R = Rz(yaw) Ry(pitch) Rx(roll). */
static inline void tl_m3_from_rpy(double R[9], const double rpy[3]) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp; R[1] = cy * sp * sr - sy * cr; R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp; R[4] = sy * sp * sr + cy * cr; R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp;     R[7] = cp * sr;                R[8] = cp * cr;
}

/* ---------------- quaternions (w, x, y, z) ---------------- */
static inline void tl_quat_identity(double q[4]) { q[0] = 1; q[1] = q[2] = q[3] = 0; }
/* r = a * b (Hamilton product; r may alias a or b) */
static inline void tl_quat_mul(double r[4], const double a[4], const double b[4]) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w; r[1] = x; r[2] = y; r[3] = z;
}
/* Normalise in place; returns the original norm (untouched if 0). */
static inline double tl_quat_normalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0)
    for (int i = 0; i < 4; i++) q[i] /= n;
  return n;
}
/* Rotation matrix of a unit quaternion. */
static inline void tl_quat_to_m3(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}
/* Unit quaternion of a rotation matrix (Shepperd's method), w >= 0. */
static inline void tl_quat_from_m3(double q[4], const double R[9]) {
  double tr = R[0] + R[4] + R[8];
  if (tr > 0) {
    double s = 2.0 * sqrt(tr + 1.0);
    q[0] = 0.25 * s; q[1] = (R[7] - R[5]) / s; q[2] = (R[2] - R[6]) / s; q[3] = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s; q[1] = 0.25 * s; q[2] = (R[1] + R[3]) / s; q[3] = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s; q[1] = (R[1] + R[3]) / s; q[2] = 0.25 * s; q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s; q[1] = (R[2] + R[6]) / s; q[2] = (R[5] + R[7]) / s; q[3] = 0.25 * s;
  }
  if (q[0] < 0)
    for (int i = 0; i < 4; i++) q[i] = -q[i];
  tl_quat_normalize(q);
}
/* Exponential map: the unit quaternion of the rotation vector v (rad). */
static inline void tl_quat_exp(double q[4], const double v[3]) {
  double th = tl_v3_norm(v);
  double half = 0.5 * th;
  /* sin(th/2)/th, with its Taylor series near 0 */
  double k = th > 1e-8 ? sin(half) / th : 0.5 - th * th / 48.0;
  q[0] = cos(half); q[1] = v[0] * k; q[2] = v[1] * k; q[3] = v[2] * k;
}
/* Logarithm: rotation vector of a unit quaternion, angle in [0, pi]. */
static inline void tl_quat_log(double v[3], const double q[4]) {
  double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double w = q[0], sign = 1.0;
  if (w < 0) { w = -w; sign = -1.0; }
  double th = 2.0 * atan2(s, w);
  double k = s > 1e-12 ? sign * th / s : sign * 2.0;
  v[0] = q[1] * k; v[1] = q[2] * k; v[2] = q[3] * k;
}

/* ---------------- spatial algebra (world axes, about the world origin) ---------------- */
/* Cross product for motion vectors: r = v x m (Featherstone eq. 2.31). r must not alias. */
static inline void tl_sp_cross_motion(double r[6], const double v[6], const double m[6]) {
  tl_v3_cross(r, v, m);
  double a[3], b[3];
  tl_v3_cross(a, v, m + 3);
  tl_v3_cross(b, v + 3, m);
  tl_v3_add(r + 3, a, b);
}
/* Cross product for force vectors: r = v x* f (Featherstone eq. 2.32). r must not alias. */
static inline void tl_sp_cross_force(double r[6], const double v[6], const double f[6]) {
  double a[3], b[3];
  tl_v3_cross(a, v, f);
  tl_v3_cross(b, v + 3, f + 3);
  tl_v3_add(r, a, b);
  tl_v3_cross(r + 3, v, f + 3);
}
static inline double tl_sp_dot(const double a[6], const double b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* Rigid-body inertia about the world origin: packed as
 * [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] with h = m c (first moment)
 * and I the rotational inertia about the origin. */
#define TL_SPI_SIZE 10

/* Inertia of a body of mass m, COM c (world) and rotational inertia Ic about
 * the COM in world axes, about the world origin: I_O = Ic + m ([c]x [c]x^T). */
static inline void tl_spi_from_body(double Isp[10], double m, const double c[3], const double Ic[9]) {
  Isp[0] = m;
  Isp[1] = m * c[0]; Isp[2] = m * c[1]; Isp[3] = m * c[2];
  double cc = tl_v3_dot(c, c);
  Isp[4] = Ic[0] + m * (cc - c[0] * c[0]);
  Isp[5] = Ic[1] - m * c[0] * c[1];
  Isp[6] = Ic[2] - m * c[0] * c[2];
  Isp[7] = Ic[4] + m * (cc - c[1] * c[1]);
  Isp[8] = Ic[5] - m * c[1] * c[2];
  Isp[9] = Ic[8] + m * (cc - c[2] * c[2]);
}
static inline void tl_spi_add(double r[10], const double a[10]) {
  for (int i = 0; i < 10; i++) r[i] += a[i];
}
/* f = I v for a spatial inertia I and motion vector v = [w; v_O]:
 * f_ang = I_O w + h x v_O, f_lin = m v_O - h x w (Featherstone eq. 2.63). */
static inline void tl_spi_mulv(double f[6], const double Isp[10], const double v[6]) {
  const double *w = v, *vo = v + 3, *h = Isp + 1;
  double t[3];
  f[0] = Isp[4] * w[0] + Isp[5] * w[1] + Isp[6] * w[2];
  f[1] = Isp[5] * w[0] + Isp[7] * w[1] + Isp[8] * w[2];
  f[2] = Isp[6] * w[0] + Isp[8] * w[1] + Isp[9] * w[2];
  tl_v3_cross(t, h, vo);
  tl_v3_add(f, f, t);
  tl_v3_cross(t, h, w);
  f[3] = Isp[0] * vo[0] - t[0];
  f[4] = Isp[0] * vo[1] - t[1];
  f[5] = Isp[0] * vo[2] - t[2];
}

/* ---------------- lanes: independent computations side by side ---------------- */
/* A tl_lanes holds one value of each of TL_LANES independent computations
 * (say two bodies): a GCC/Clang vector of two doubles (one SSE2/NEON
 * register; its arithmetic is IEEE and lane-wise, so every lane gets the
 * scalar result bit for bit), or a plain double where vector extensions are
 * missing or TL_NO_VECTOR_EXT is defined. Kernels written on tl_lanes with
 * + - * only therefore give the same values in both builds. */
#if defined(__GNUC__) && !defined(TL_NO_VECTOR_EXT)
typedef double tl_lanes __attribute__((vector_size(16)));
#define TL_LANES 2
static inline tl_lanes tl_lanes_set(double a, double b) { return (tl_lanes){a, b}; }
static inline double tl_lanes_get(tl_lanes v, int i) { return v[i]; }
#else
typedef double tl_lanes;
#define TL_LANES 1
static inline tl_lanes tl_lanes_set(double a, double b) { (void)b; return a; }
static inline double tl_lanes_get(tl_lanes v, int i) { (void)i; return v; }
#endif
/* r[i] = (a[i], b[i]) for i < n (tl_lanes_load), and back (tl_lanes_store):
 * with two lanes, two entries at a time by 2 x 2 transposes (moves only); with
 * one, r[i] = a[i] and a[i] = b[i] = r[i]. */
#if TL_LANES == 2
/* A shuffle of two vectors of doubles of any width (lanes of a, then of b):
 * __builtin_shufflevector in clang and GCC >= 12, __builtin_shuffle with an
 * index vector in older GCC. Also the kernels' (inverse_mul_lanes.h). */
#if defined(__clang__) || __GNUC__ >= 12
#define TL_SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define TL_SHUF(a, b, ...) \
  __builtin_shuffle(a, b, (long long __attribute__((vector_size(sizeof(a))))){__VA_ARGS__})
#endif
typedef tl_lanes tl_lanes_u __attribute__((aligned(8)));
static inline void tl_lanes_load(tl_lanes *r, const double *a, const double *b, int n) {
  int i = 0;
  for (; i + 1 < n; i += 2) {
    const tl_lanes x = *(const tl_lanes_u *)(a + i), y = *(const tl_lanes_u *)(b + i);
    r[i] = TL_SHUF(x, y, 0, 2);
    r[i + 1] = TL_SHUF(x, y, 1, 3);
  }
  if (i < n) r[i] = tl_lanes_set(a[i], b[i]);
}
static inline void tl_lanes_store(double *a, double *b, const tl_lanes *r, int n) {
  int i = 0;
  for (; i + 1 < n; i += 2) {
    *(tl_lanes_u *)(a + i) = TL_SHUF(r[i], r[i + 1], 0, 2);
    *(tl_lanes_u *)(b + i) = TL_SHUF(r[i], r[i + 1], 1, 3);
  }
  if (i < n) a[i] = tl_lanes_get(r[i], 0), b[i] = tl_lanes_get(r[i], 1);
}
#else
static inline void tl_lanes_load(tl_lanes *r, const double *a, const double *b, int n) {
  (void)b;
  for (int i = 0; i < n; i++) r[i] = a[i];
}
static inline void tl_lanes_store(double *a, double *b, const tl_lanes *r, int n) {
  for (int i = 0; i < n; i++) a[i] = r[i], b[i] = r[i];
}
#endif
/* r[0..n) += a[0..n) (n even; r and a do not overlap), two entries per
 * vector operation where tl_lanes is a vector. */
static inline void tl_lanes_add_even(double *restrict r, const double *restrict a, int n) {
#if TL_LANES == 2
  for (int i = 0; i < n; i += 2) {
    tl_lanes x, y;
    memcpy(&x, r + i, sizeof x);
    memcpy(&y, a + i, sizeof y);
    x = x + y;
    memcpy(r + i, &x, sizeof x);
  }
#else
  for (int i = 0; i < n; i++) r[i] += a[i];
#endif
}
/* r = a x b, lane-wise (as tl_v3_cross). */
static inline void tl_lanes_cross(tl_lanes r[3], const tl_lanes a[3], const tl_lanes b[3]) {
  tl_lanes x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  r[0] = x; r[1] = y; r[2] = z;
}
/* f = I v, lane-wise (as tl_spi_mulv). */
static inline void tl_lanes_spi_mulv(tl_lanes f[6], const tl_lanes Isp[10], const tl_lanes v[6]) {
  const tl_lanes *w = v, *vo = v + 3, *h = Isp + 1;
  tl_lanes t[3], u[3];
  tl_lanes_cross(t, h, vo);
  tl_lanes_cross(u, h, w);
  f[0] = Isp[4] * w[0] + Isp[5] * w[1] + Isp[6] * w[2] + t[0];
  f[1] = Isp[5] * w[0] + Isp[7] * w[1] + Isp[8] * w[2] + t[1];
  f[2] = Isp[6] * w[0] + Isp[8] * w[1] + Isp[9] * w[2] + t[2];
  f[3] = Isp[0] * vo[0] - u[0];
  f[4] = Isp[0] * vo[1] - u[1];
  f[5] = Isp[0] * vo[2] - u[2];
}
/* r = R A R^T, lane-wise, for a symmetric A given and returned as its 6
 * distinct entries [xx, xy, xz, yy, yz, zz]: t = R A (27 products), then the
 * upper triangle of t R^T only (18 products instead of 27). */
static inline void tl_lanes_rotate_sym(tl_lanes r[6], const tl_lanes R[9], const tl_lanes A[6]) {
  tl_lanes t[9];
  for (int i = 0; i < 3; i++) {
    const tl_lanes *Ri = R + 3 * i;
    t[3 * i] = Ri[0] * A[0] + Ri[1] * A[1] + Ri[2] * A[2];
    t[3 * i + 1] = Ri[0] * A[1] + Ri[1] * A[3] + Ri[2] * A[4];
    t[3 * i + 2] = Ri[0] * A[2] + Ri[1] * A[4] + Ri[2] * A[5];
  }
  r[0] = t[0] * R[0] + t[1] * R[1] + t[2] * R[2];
  r[1] = t[0] * R[3] + t[1] * R[4] + t[2] * R[5];
  r[2] = t[0] * R[6] + t[1] * R[7] + t[2] * R[8];
  r[3] = t[3] * R[3] + t[4] * R[4] + t[5] * R[5];
  r[4] = t[3] * R[6] + t[4] * R[7] + t[5] * R[8];
  r[5] = t[6] * R[6] + t[7] * R[7] + t[8] * R[8];
}
/* Isp = the inertia about the world origin of a body of mass m, COM c and
 * rotational inertia Ic about the COM (world axes, its 6 distinct entries as
 * tl_lanes_rotate_sym), lane-wise: as tl_spi_from_body, with
 * m (cc - c_x^2) written m (c_y^2 + c_z^2) (no cancellation). */
static inline void tl_lanes_spi_from_body_sym(tl_lanes Isp[10], tl_lanes m, const tl_lanes c[3],
                                              const tl_lanes Ic[6]) {
  tl_lanes mx = m * c[0], my = m * c[1], mz = m * c[2];
  Isp[0] = m;
  Isp[1] = mx; Isp[2] = my; Isp[3] = mz;
  Isp[4] = Ic[0] + (my * c[1] + mz * c[2]);
  Isp[5] = Ic[1] - mx * c[1];
  Isp[6] = Ic[2] - mx * c[2];
  Isp[7] = Ic[3] + (mx * c[0] + mz * c[2]);
  Isp[8] = Ic[4] - my * c[2];
  Isp[9] = Ic[5] + (mx * c[0] + my * c[1]);
}
/* r = v x* f, lane-wise (as tl_sp_cross_force). */
static inline void tl_lanes_cross_force(tl_lanes r[6], const tl_lanes v[6], const tl_lanes f[6]) {
  tl_lanes a[3], b[3];
  tl_lanes_cross(a, v, f);
  tl_lanes_cross(b, v + 3, f + 3);
  r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2];
  tl_lanes_cross(r + 3, v, f + 3);
}

#endif
