/* Guards: urdf/urdf_compile.c (every joint type), src/dynamics/ (CRBA, RNEA, ABA, kinematics),
 * src/world/system.c, src/world/system_query.c (the query API). */
/* Talus on random kinematic trees: every joint type (revolute, continuous,
 * prismatic, spherical, universal, planar, fixed), floating and fixed bases, and the
 * extended query API of talus/system.h.
 *
 * A seeded generator (splitmix64, own Box-Muller) writes 20 random URDF texts
 * of 2-12 links: each link's parent is any earlier link, each joint type is
 * drawn at random (joint 1 of tree k is forced to type k mod 6, so every type
 * appears at least three times), origins xyz in [-0.3, 0.3]^3 and rpy in
 * [-pi, pi]^3, unit axes, masses in [0.1, 3] kg, inertias R diag(a, b, c) R^T
 * with a, b, c satisfying the triangle inequality, random <inertial> origins,
 * and random <dynamics damping rotor_inertia stiffness>. Bases cycle through
 * floating (root link l0), fixed through a root link "world" + fixed joint
 * (TL_BASE_AUTO) and fixed through tl_load_options.base = TL_BASE_FIXED.
 *
 * Independent references: kinetic energy, potential energy, COM, momenta
 * and composite inertias are recomputed here from the URDF numbers we
 * generated (link masses and inertias placed at the world poses of the
 * link frames, which every joint keeps), not from the engine's merged
 * bodies; velocities are checked against finite differences of poses.
 *
 * Tolerances (relative to the scale named at each check):
 *   exact algebra (no finite difference): 1e-9 (worst measured: 7e-13 for
 *     ABA(RNEA(a)) and ABA vs M^-1 (tau - h), 2e-13 for M M^-1, <= 3e-14
 *     for the rest; printed at the end);
 *   central finite differences with step eps = 1e-6 along q(+)eps*u (and
 *     t -> q(+)t*u for dJ/dt u): 1e-6 (truncation eps^2 |x'''| ~ 1e-11,
 *     rounding 1e-16 |x| / eps ~ 1e-10; worst measured 1e-9, dJr/dt u).
 * Each check category keeps its worst relative error, printed at the end. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

#define NTREE 20
#define NSTATE 3
#define MAXL 12
#define MAXB (MAXL + 1)
#define MAXV (6 + 3 * MAXL)
#define MAXQ (7 + 4 * MAXL)
#define TOL_EXACT 1e-9
#define TOL_FD 1e-6
#define FD_EPS 1e-6
#define PI 3.14159265358979323846

/* ------------------------------------------------------------------ rng */

static uint64_t rng_s = 0x5eed7a105ULL;

static uint64_t splitmix64(void) {
  uint64_t z = (rng_s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double urand(void) { return (double)(splitmix64() >> 11) * 0x1.0p-53; }
static double uni(double a, double b) { return a + (b - a) * urand(); }
static int irand(int n) { return (int)(splitmix64() % (uint64_t)n); }
static double gauss(void) {
  double u1 = urand(), u2 = urand();
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}
static void rand_unit3(double a[3]) {
  double n;
  do {
    for (int k = 0; k < 3; k++) a[k] = gauss();
    n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  } while (n < 1e-3);
  for (int k = 0; k < 3; k++) a[k] /= n;
}
static void rand_quat(double q[4]) {
  double n;
  do {
    for (int k = 0; k < 4; k++) q[k] = gauss();
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 1e-3);
  for (int k = 0; k < 4; k++) q[k] /= n;
}

/* ------------------------------------------------------------------ small linear algebra */

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double norm3(const double a[3]) { return sqrt(dot3(a, a)); }
static void cross3(double r[3], const double a[3], const double b[3]) {
  double t[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  memcpy(r, t, sizeof(t));
}
static void m3mul(double C[9], const double A[9], const double B[9]) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, T, sizeof(T));
}
static void m3mulT(double C[9], const double A[9], const double B[9]) { /* A B^T */
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
  memcpy(C, T, sizeof(T));
}
static void m3v(double r[3], const double A[9], const double v[3]) {
  double t[3] = {dot3(A, v), dot3(A + 3, v), dot3(A + 6, v)};
  memcpy(r, t, sizeof(t));
}
/* URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll), written out independently. */
static void rpy_matrix(double R[9], const double rpy[3]) {
  double Rx[9] = {1, 0, 0, 0, cos(rpy[0]), -sin(rpy[0]), 0, sin(rpy[0]), cos(rpy[0])};
  double Ry[9] = {cos(rpy[1]), 0, sin(rpy[1]), 0, 1, 0, -sin(rpy[1]), 0, cos(rpy[1])};
  double Rz[9] = {cos(rpy[2]), -sin(rpy[2]), 0, sin(rpy[2]), cos(rpy[2]), 0, 0, 0, 1};
  m3mul(R, Rz, Ry);
  m3mul(R, R, Rx);
}
static void quat_matrix(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double T[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
  memcpy(R, T, sizeof(T));
}
static void quat_mul(double r[4], const double a[4], const double b[4]) {
  double t[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(r, t, sizeof(t));
}
static void quat_exp(double q[4], const double v[3]) {
  double th = norm3(v);
  double k = th > 1e-12 ? sin(0.5 * th) / th : 0.5;
  q[0] = cos(0.5 * th);
  for (int i = 0; i < 3; i++) q[i + 1] = k * v[i];
}
/* Angular velocity from R(+) R(-)^T over 2 eps: the axial vector of the skew part. */
static void rot_fd(double w[3], const double Rp[9], const double Rm[9], double eps) {
  double A[9];
  m3mulT(A, Rp, Rm);
  w[0] = 0.5 * (A[7] - A[5]) / (2 * eps);
  w[1] = 0.5 * (A[2] - A[6]) / (2 * eps);
  w[2] = 0.5 * (A[3] - A[1]) / (2 * eps);
}

/* Cholesky A = L L^T of an n x n row-major matrix (L in the lower triangle
 * of L). Returns 0 if a pivot is not positive, else 1; *minpiv gets the
 * smallest pivot. */
static int cholesky(const double *A, double *L, int n, double *minpiv) {
  *minpiv = INFINITY;
  memset(L, 0, (size_t)n * (size_t)n * sizeof(double));
  for (int j = 0; j < n; j++) {
    double s = A[j * n + j];
    for (int k = 0; k < j; k++) s -= L[j * n + k] * L[j * n + k];
    if (s < *minpiv) *minpiv = s;
    if (!(s > 0)) return 0;
    L[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = A[i * n + j];
      for (int k = 0; k < j; k++) t -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = t / L[j * n + j];
    }
  }
  return 1;
}
static void chol_solve(const double *L, int n, double *x) {
  for (int i = 0; i < n; i++) {
    double s = x[i];
    for (int k = 0; k < i; k++) s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
}
static double maxabs(const double *x, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}
static double maxdiff(const double *a, const double *b, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return isnan(m) ? INFINITY : m;
}

/* ------------------------------------------------------------------ worst-error book-keeping */

typedef struct stat {
  const char *name;
  double worst, tol;
  int n;
} stat;
static stat stats[64];
static int nstats;
static int cur_tree, cur_state;

/* Record err / scale for category `name` and check it against tol. */
static void rel_check(const char *name, double err, double scale, double tol, const char *what) {
  double rel = err / (scale > 0 ? scale : 1.0);
  if (isnan(rel)) rel = INFINITY;
  stat *s = NULL;
  for (int i = 0; i < nstats; i++)
    if (strcmp(stats[i].name, name) == 0) s = &stats[i];
  if (!s && nstats < 64) {
    s = &stats[nstats++];
    s->name = name;
    s->tol = tol;
  }
  if (s) {
    s->n++;
    if (rel > s->worst) s->worst = rel;
  }
  TL_CHECK(rel <= tol, "tree %d state %d: %s (%s): relative error %.3g > %.3g (abs %.3g, scale %.3g)",
           cur_tree, cur_state, name, what, rel, tol, err, scale);
}

/* ------------------------------------------------------------------ random trees */

enum { JT_REVOLUTE, JT_CONTINUOUS, JT_PRISMATIC, JT_SPHERICAL, JT_UNIVERSAL, JT_FIXED, JT_PLANAR, JT_N };
static const char *const jt_name[JT_N] = {"revolute", "continuous", "prismatic", "spherical", "universal", "fixed",
                                          "planar"};
static int jt_nv(int t) {
  return t == JT_SPHERICAL || t == JT_PLANAR ? 3 : t == JT_UNIVERSAL ? 2 : t == JT_FIXED ? 0 : 1;
}

enum { BASE_FLOATING, BASE_WORLD_LINK, BASE_OPTION_FIXED, BASE_N };

typedef struct link_spec {
  double mass, xyz[3], rpy[3], I[9]; /* inertia about the COM in the <inertial> frame */
} link_spec;

typedef struct joint_spec { /* the joint whose child is link i; joint 0 only with BASE_WORLD_LINK */
  int parent, type;
  double xyz[3], rpy[3], axis[3], axis2[3];
  double damping, rotor, stiffness;
} joint_spec;

typedef struct tree {
  int n, base;
  link_spec L[MAXL];
  joint_spec J[MAXL];
} tree;

static void gen_tree(tree *t, int k) {
  memset(t, 0, sizeof(*t));
  t->n = 2 + irand(11);
  t->base = k % BASE_N;
  for (int i = 0; i < t->n; i++) {
    link_spec *l = &t->L[i];
    l->mass = uni(0.1, 3.0);
    for (int c = 0; c < 3; c++) {
      l->xyz[c] = uni(-0.2, 0.2);
      l->rpy[c] = uni(-PI, PI);
    }
    /* principal moments a = e2 + e3, b = e1 + e3, c = e1 + e2 (e = m <x^2> etc.):
     * the triangle inequality holds by construction */
    double e[3], q[4], R[9], D[9] = {0};
    for (int c = 0; c < 3; c++) e[c] = l->mass * uni(0.002, 0.05);
    D[0] = e[1] + e[2], D[4] = e[0] + e[2], D[8] = e[0] + e[1];
    rand_quat(q);
    quat_matrix(R, q);
    m3mul(l->I, R, D);
    m3mulT(l->I, l->I, R);
    l->I[3] = l->I[1], l->I[6] = l->I[2], l->I[7] = l->I[5]; /* exactly symmetric */
  }
  for (int i = 0; i < t->n; i++) {
    joint_spec *j = &t->J[i];
    for (int c = 0; c < 3; c++) {
      j->xyz[c] = uni(-0.3, 0.3);
      j->rpy[c] = uni(-PI, PI);
    }
    if (i == 0) { /* world -> l0 (only written for BASE_WORLD_LINK) */
      j->type = JT_FIXED;
      j->parent = -1;
      continue;
    }
    j->parent = irand(i);
    j->type = i == 1 ? k % JT_N : irand(JT_N);
    rand_unit3(j->axis);
    do rand_unit3(j->axis2);
    while (fabs(dot3(j->axis, j->axis2)) > 0.9);
    if (j->type != JT_FIXED) {
      j->damping = irand(2) ? uni(0.0, 2.0) : 0.0;
      j->rotor = irand(2) ? uni(0.0, 0.05) : 0.0;
      /* stiffness only on 1-DOF joints: the engine applies the spring force
       * to 1-DOF joints only (see the report on multi-DOF stiffness) */
      j->stiffness = jt_nv(j->type) == 1 && irand(2) ? uni(0.0, 50.0) : 0.0;
    }
  }
}

static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...) TL_TEST_PRINTF_(4, 5);
static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= cap - *len) return -1;
  *len += (size_t)n;
  return 0;
}

static int write_urdf(const tree *t, int k, char *buf, size_t cap, size_t *len) {
  int bad = 0;
  *len = 0;
  bad |= put(buf, cap, len, "<?xml version=\"1.0\"?>\n<robot name=\"random_tree_%d\">\n", k);
  if (t->base == BASE_WORLD_LINK) {
    const joint_spec *j = &t->J[0];
    bad |= put(buf, cap, len,
               "  <link name=\"world\"/>\n  <joint name=\"j0\" type=\"fixed\">\n"
               "    <parent link=\"world\"/><child link=\"l0\"/>\n"
               "    <origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>\n  </joint>\n",
               j->xyz[0], j->xyz[1], j->xyz[2], j->rpy[0], j->rpy[1], j->rpy[2]);
  }
  for (int i = 0; i < t->n; i++) {
    const link_spec *l = &t->L[i];
    bad |= put(buf, cap, len,
               "  <link name=\"l%d\">\n    <inertial>\n"
               "      <origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>\n"
               "      <mass value=\"%.17g\"/>\n"
               "      <inertia ixx=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" iyy=\"%.17g\" iyz=\"%.17g\" izz=\"%.17g\"/>\n"
               "    </inertial>\n  </link>\n",
               i, l->xyz[0], l->xyz[1], l->xyz[2], l->rpy[0], l->rpy[1], l->rpy[2], l->mass, l->I[0],
               l->I[1], l->I[2], l->I[4], l->I[5], l->I[8]);
  }
  for (int i = 1; i < t->n; i++) {
    const joint_spec *j = &t->J[i];
    bad |= put(buf, cap, len,
               "  <joint name=\"j%d\" type=\"%s\">\n    <parent link=\"l%d\"/><child link=\"l%d\"/>\n"
               "    <origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>\n",
               i, jt_name[j->type], j->parent, i, j->xyz[0], j->xyz[1], j->xyz[2], j->rpy[0], j->rpy[1],
               j->rpy[2]);
    if (j->type == JT_REVOLUTE || j->type == JT_CONTINUOUS || j->type == JT_PRISMATIC ||
        j->type == JT_UNIVERSAL || j->type == JT_PLANAR)
      bad |= put(buf, cap, len, "    <axis xyz=\"%.17g %.17g %.17g\"/>\n", j->axis[0], j->axis[1], j->axis[2]);
    if (j->type == JT_UNIVERSAL)
      bad |= put(buf, cap, len, "    <axis2 xyz=\"%.17g %.17g %.17g\"/>\n", j->axis2[0], j->axis2[1], j->axis2[2]);
    if (j->type == JT_REVOLUTE || j->type == JT_PRISMATIC)
      bad |= put(buf, cap, len, "    <limit lower=\"-100\" upper=\"100\" effort=\"100\" velocity=\"100\"/>\n");
    if (j->type != JT_FIXED)
      bad |= put(buf, cap, len, "    <dynamics damping=\"%.17g\" rotor_inertia=\"%.17g\" stiffness=\"%.17g\"/>\n",
                 j->damping, j->rotor, j->stiffness);
    bad |= put(buf, cap, len, "  </joint>\n");
  }
  bad |= put(buf, cap, len, "</robot>\n");
  return bad;
}

/* ------------------------------------------------------------------ the system under test */

typedef struct ctx {
  const tree *t;
  tl_world *w;
  tl_system *s;
  const tl_model *m;
  int nq, nv, nb;
  int link_frame[MAXL]; /* frame of link i (the joint named after it), -1: the base body frame */
  int link_body[MAXL];
  double dof_damp[MAXV], dof_stiff[MAXV], dof_rotor[MAXV];
  double mtot;
} ctx;

/* q (+) eps u: vector joints add; the floating base adds eps v to the
 * position and left-multiplies its quaternion by exp(eps w) (world w);
 * spherical joints left-multiply by exp(eps u_ball) (parent joint frame). */
static void q_plus(const ctx *c, const double *q, const double *u, double eps, double *out) {
  memcpy(out, q, (size_t)c->nq * sizeof(double));
  for (int b = 0; b < c->nb; b++) {
    int qi = tl_model_joint_q_index(c->m, b), ui = tl_model_joint_u_index(c->m, b);
    double w[3], dq[4];
    switch (tl_model_joint_type(c->m, b)) {
      case TL_JOINT_FLOATING:
        for (int k = 0; k < 3; k++) out[qi + k] += eps * u[ui + k], w[k] = eps * u[ui + 3 + k];
        quat_exp(dq, w);
        quat_mul(out + qi + 3, dq, out + qi + 3);
        break;
      case TL_JOINT_SPHERICAL:
        for (int k = 0; k < 3; k++) w[k] = eps * u[ui + k];
        quat_exp(dq, w);
        quat_mul(out + qi, dq, out + qi);
        break;
      case TL_JOINT_FIXED: break;
      default:
        for (int k = 0; k < tl_joint_nv(tl_model_joint_type(c->m, b)); k++) out[qi + k] += eps * u[ui + k];
    }
  }
}

static void set_state(ctx *c, const double *q, const double *u) {
  tl_error err;
  tl_status st = tl_system_set_state(c->s, q, c->nq, u, c->nv, &err);
  if (st) {
    TL_CHECK(0, "set_state: %s", err.message);
    exit(1);
  }
}

static void random_state(ctx *c, double *q, double *u) {
  for (int b = 0; b < c->nb; b++) {
    int qi = tl_model_joint_q_index(c->m, b);
    switch (tl_model_joint_type(c->m, b)) {
      case TL_JOINT_FLOATING:
        for (int k = 0; k < 3; k++) q[qi + k] = uni(-1, 1);
        rand_quat(q + qi + 3);
        break;
      case TL_JOINT_SPHERICAL: rand_quat(q + qi); break;
      case TL_JOINT_PRISMATIC: q[qi] = uni(-0.5, 0.5); break;
      case TL_JOINT_REVOLUTE: q[qi] = uni(-PI, PI); break;
      case TL_JOINT_UNIVERSAL:
        q[qi] = uni(-PI, PI);
        q[qi + 1] = uni(-PI, PI);
        break;
      default: break;
    }
  }
  for (int k = 0; k < c->nv; k++) u[k] = gauss();
}

/* World pose of link i's frame. */
static void link_pose(ctx *c, int i, double p[3], double R[9]) {
  tl_error err;
  tl_status st = c->link_frame[i] >= 0 ? tl_system_frame_pose(c->s, c->link_frame[i], p, R, &err)
                                        : tl_system_body_pose(c->s, 0, p, R, &err);
  if (st) TL_CHECK(0, "link pose: %s", err.message);
}

/* Per-link world COM, world inertia about it, COM velocity and angular velocity. */
typedef struct link_world {
  double c[3], I[9], v[3], w[3];
} link_world;

static void links_world(ctx *c, link_world *lw) {
  for (int i = 0; i < c->t->n; i++) {
    const link_spec *l = &c->t->L[i];
    double p[3], R[9], Ri[9], Rw[9], off[3];
    link_pose(c, i, p, R);
    m3v(off, R, l->xyz);
    for (int k = 0; k < 3; k++) lw[i].c[k] = p[k] + off[k];
    rpy_matrix(Ri, l->rpy);
    m3mul(Rw, R, Ri);
    m3mul(lw[i].I, Rw, l->I);
    m3mulT(lw[i].I, lw[i].I, Rw);
    tl_error err;
    if (tl_system_point_velocity(c->s, c->link_body[i], lw[i].c, lw[i].v, lw[i].w, &err))
      TL_CHECK(0, "point velocity: %s", err.message);
  }
}

/* Kinetic energy from the URDF links (+ rotor inertia), independent of the engine's M. */
static double my_kinetic(ctx *c, const double *u) {
  link_world lw[MAXL];
  links_world(c, lw);
  double e = 0;
  for (int i = 0; i < c->t->n; i++) {
    double Iw[3];
    m3v(Iw, lw[i].I, lw[i].w);
    e += 0.5 * c->t->L[i].mass * dot3(lw[i].v, lw[i].v) + 0.5 * dot3(lw[i].w, Iw);
  }
  for (int k = 0; k < c->nv; k++) e += 0.5 * c->dof_rotor[k] * u[k] * u[k];
  return e;
}

static int is_ancestor_body(const tl_model *m, int a, int b) { /* a == b or a above b */
  for (; b >= 0; b = tl_model_body_parent(m, b))
    if (b == a) return 1;
  return 0;
}

static int setup(ctx *c, const tree *t, const char *urdf, size_t len, int k) {
  memset(c, 0, sizeof(*c));
  c->t = t;
  tl_error err;
  tl_load_options opt = tl_load_options_default();
  if (t->base == BASE_OPTION_FIXED) opt.base = TL_BASE_FIXED;
  tl_model *model = NULL;
  char name[32];
  snprintf(name, sizeof(name), "random_tree_%d", k);
  if (!TL_CHECK(tl_model_load_urdf_string(urdf, len, name, &opt, &model, &err) == TL_OK,
                "tree %d: load: %s\n%s", k, err.message, urdf))
    return -1;
  TL_CHECK(tl_model_base(model) == (t->base == BASE_FLOATING ? TL_BASE_FLOATING : TL_BASE_FIXED),
           "tree %d: base type %d", k, (int)tl_model_base(model));
  if (!TL_CHECK(tl_world_create(&c->w, &err) == TL_OK, "world: %s", err.message)) return -1;
  if (!TL_CHECK(tl_world_add_system(c->w, model, &c->s, &err) == TL_OK, "tree %d: add: %s", k, err.message)) {
    tl_model_free(model);
    return -1;
  }
  tl_model_free(model);
  c->m = tl_system_model(c->s);
  c->nq = tl_system_nq(c->s), c->nv = tl_system_nv(c->s), c->nb = tl_model_nbody(c->m);
  /* expected dimensions */
  int nq = t->base == BASE_FLOATING ? 7 : 0, nv = t->base == BASE_FLOATING ? 6 : 0;
  for (int i = 1; i < t->n; i++) {
    int ty = t->J[i].type;
    nq += ty == JT_SPHERICAL ? 4 : jt_nv(ty);
    nv += jt_nv(ty);
  }
  TL_CHECK(c->nq == nq && c->nv == nv, "tree %d: nq %d nv %d, expected %d %d", k, c->nq, c->nv, nq, nv);
  for (int i = 0; i < t->n; i++) {
    char jn[16];
    snprintf(jn, sizeof(jn), "j%d", i);
    c->link_frame[i] = (i > 0 || t->base == BASE_WORLD_LINK) ? tl_model_frame_index(c->m, jn) : -1;
    if (i > 0 || t->base == BASE_WORLD_LINK)
      TL_CHECK(c->link_frame[i] >= 0, "tree %d: no frame '%s'", k, jn);
    c->link_body[i] = c->link_frame[i] >= 0 ? tl_model_frame_body(c->m, c->link_frame[i]) : 0;
    c->mtot += t->L[i].mass;
    if (i > 0 && t->J[i].type != JT_FIXED) {
      int b = c->link_body[i], u0 = tl_model_joint_u_index(c->m, b);
      for (int d = 0; d < jt_nv(t->J[i].type); d++) {
        c->dof_damp[u0 + d] = t->J[i].damping;
        c->dof_stiff[u0 + d] = t->J[i].stiffness;
        c->dof_rotor[u0 + d] = t->J[i].rotor;
      }
    }
  }
  TL_CHECK_NEAR(tl_model_total_mass(c->m), c->mtot, 1e-12 * c->mtot, "total mass");
  return 0;
}

/* ------------------------------------------------------------------ the checks at one state */

static void check_mass_matrix(ctx *c, const double *q, const double *u) {
  int nv = c->nv;
  tl_error err;
  static double M[MAXV * MAXV], L[MAXV * MAXV], H[MAXV * MAXV], He[MAXV * MAXV];
  double e[MAXV], Ki[MAXV], Kei[MAXV];
  set_state(c, q, u);
  TL_CHECK(tl_system_mass_matrix(c->s, M, nv, &err) == TL_OK, "mass matrix: %s", err.message);
  double sc = maxabs(M, nv * nv), asym = 0, minpiv;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) asym = fmax(asym, fabs(M[i * nv + j] - M[j * nv + i]));
  rel_check("M symmetric", asym, sc, TOL_EXACT, "max |M - M^T| / max |M|");
  int pd = cholesky(M, L, nv, &minpiv);
  TL_CHECK(pd, "tree %d state %d: M is not positive definite (pivot %g)", cur_tree, cur_state, minpiv);

  /* Hessian of the kinetic energy: KE is exactly quadratic in u */
  for (int i = 0; i < nv; i++) {
    memset(e, 0, sizeof(e));
    e[i] = 1;
    set_state(c, q, e);
    Ki[i] = my_kinetic(c, e);
    Kei[i] = tl_system_kinetic_energy(c->s);
  }
  for (int i = 0; i < nv; i++) {
    H[i * nv + i] = 2 * Ki[i];
    He[i * nv + i] = 2 * Kei[i];
    for (int j = i + 1; j < nv; j++) {
      memset(e, 0, sizeof(e));
      e[i] = e[j] = 1;
      set_state(c, q, e);
      H[i * nv + j] = H[j * nv + i] = my_kinetic(c, e) - Ki[i] - Ki[j];
      He[i * nv + j] = He[j * nv + i] = tl_system_kinetic_energy(c->s) - Kei[i] - Kei[j];
    }
  }
  rel_check("M == Hessian of KE (URDF links)", maxdiff(M, H, nv * nv), sc, TOL_EXACT, "max |M - H| / max |M|");
  rel_check("M == Hessian of tl KE", maxdiff(M, He, nv * nv), sc, TOL_EXACT, "max |M - H| / max |M|");

  /* energies at the state */
  set_state(c, q, u);
  double Mu[MAXV], uMu = 0;
  for (int i = 0; i < nv; i++) {
    Mu[i] = 0;
    for (int j = 0; j < nv; j++) Mu[i] += M[i * nv + j] * u[j];
    uMu += u[i] * Mu[i];
  }
  double ke = tl_system_kinetic_energy(c->s), myke = my_kinetic(c, u);
  rel_check("KE == 1/2 u^T M u", fabs(ke - 0.5 * uMu), fabs(ke), TOL_EXACT, "KE");
  rel_check("KE == URDF-link KE", fabs(ke - myke), fabs(myke), TOL_EXACT, "KE");
}

static void check_dynamics(ctx *c, const double *q, const double *u) {
  int nv = c->nv;
  tl_error err;
  static double M[MAXV * MAXV], L[MAXV * MAXV], Minv[MAXV * MAXV], P[MAXV * MAXV], A[MAXV * MAXV];
  double a[MAXV], tau[MAXV], a2[MAXV], h[MAXV], h0[MAXV], zero[MAXV] = {0}, x[MAXV], y[MAXV], y2[MAXV], minpiv;
  set_state(c, q, u);
  tl_system_mass_matrix(c->s, M, nv, &err);
  if (!cholesky(M, L, nv, &minpiv)) return;
  double sc = maxabs(M, nv * nv);

  /* ABA(q, u, RNEA(q, u, a)) == a */
  for (int k = 0; k < nv; k++) a[k] = gauss();
  TL_CHECK(tl_system_inverse_dynamics(c->s, a, tau, nv, &err) == TL_OK, "RNEA: %s", err.message);
  TL_CHECK(tl_system_forward_dynamics(c->s, tau, a2, nv, &err) == TL_OK, "ABA: %s", err.message);
  rel_check("ABA(RNEA(a)) == a", maxdiff(a, a2, nv), fmax(1.0, maxabs(a, nv)), TOL_EXACT, "max |du|");
  /* RNEA(0) == h */
  tl_system_nonlinear_term(c->s, h, nv, &err);
  tl_system_inverse_dynamics(c->s, zero, h0, nv, &err);
  rel_check("RNEA(0) == h", maxdiff(h, h0, nv), fmax(1.0, maxabs(h, nv)), TOL_EXACT, "max |h|");
  /* RNEA(a) == M a + h */
  for (int i = 0; i < nv; i++) {
    y[i] = h[i];
    for (int j = 0; j < nv; j++) y[i] += M[i * nv + j] * a[j];
  }
  rel_check("RNEA(a) == M a + h", maxdiff(y, tau, nv), fmax(1.0, maxabs(tau, nv)), TOL_EXACT, "max |tau|");
  /* forward dynamics == M^-1 (tau - h) */
  for (int k = 0; k < nv; k++) tau[k] = 5.0 * gauss(), x[k] = tau[k] - h[k];
  tl_system_forward_dynamics(c->s, tau, a2, nv, &err);
  chol_solve(L, nv, x);
  rel_check("ABA == M^-1 (tau - h)", maxdiff(a2, x, nv), fmax(1.0, maxabs(x, nv)), TOL_EXACT, "max |du|");

  /* M M^-1 == I */
  TL_CHECK(tl_system_inverse_mass_matrix(c->s, Minv, nv, &err) == TL_OK, "M^-1: %s", err.message);
  double dev = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += M[i * nv + k] * Minv[k * nv + j];
      dev = fmax(dev, fabs(s - (i == j)));
    }
  rel_check("M M^-1 == I", dev, 1.0, TOL_EXACT, "max |M M^-1 - I|");
  /* M x */
  for (int k = 0; k < nv; k++) x[k] = gauss();
  TL_CHECK(tl_system_mass_matrix_multiply(c->s, x, y, nv, &err) == TL_OK, "M x: %s", err.message);
  for (int i = 0; i < nv; i++) {
    y2[i] = 0;
    for (int j = 0; j < nv; j++) y2[i] += M[i * nv + j] * x[j];
  }
  rel_check("M x (sparse) == dense M x", maxdiff(y, y2, nv), fmax(1e-300, maxabs(y2, nv)), TOL_EXACT, "max |M x|");
  /* generalized momentum == M u */
  TL_CHECK(tl_system_generalized_momentum(c->s, y, nv, &err) == TL_OK, "generalized momentum: %s", err.message);
  for (int i = 0; i < nv; i++) {
    y2[i] = 0;
    for (int j = 0; j < nv; j++) y2[i] += M[i * nv + j] * u[j];
  }
  rel_check("generalized momentum == M u", maxdiff(y, y2, nv), fmax(1e-300, maxabs(y2, nv)), TOL_EXACT, "max");

  /* effective inverse with PD gains on the non-floating DOFs, dt = 0.01 */
  double kp[MAXV], kd[MAXV], dt = 0.01;
  int nfloat = tl_model_base(c->m) == TL_BASE_FLOATING ? 6 : 0;
  for (int k = 0; k < nv; k++) {
    kp[k] = k < nfloat ? 0.0 : uni(0.0, 200.0);
    kd[k] = k < nfloat ? 0.0 : uni(0.0, 20.0);
  }
  TL_CHECK(tl_world_set_timestep(c->w, dt, &err) == TL_OK, "dt: %s", err.message);
  TL_CHECK(tl_system_set_pd_gains(c->s, kp, kd, nv, &err) == TL_OK, "gains: %s", err.message);
  TL_CHECK(tl_system_effective_inverse_mass_matrix(c->s, Minv, nv, &err) == TL_OK, "Meff^-1: %s", err.message);
  memcpy(A, M, (size_t)nv * nv * sizeof(double));
  for (int k = 0; k < nv; k++)
    A[k * nv + k] += dt * (kd[k] + c->dof_damp[k]) + dt * dt * (kp[k] + c->dof_stiff[k]);
  if (TL_CHECK(cholesky(A, L, nv, &minpiv), "M_eff not PD")) {
    for (int j = 0; j < nv; j++) { /* column j of the inverse */
      memset(x, 0, sizeof(x));
      x[j] = 1;
      chol_solve(L, nv, x);
      for (int i = 0; i < nv; i++) P[i * nv + j] = x[i];
    }
    rel_check("effective M^-1 == (M + dt(Kd+D) + dt^2(Kp+K))^-1", maxdiff(P, Minv, nv * nv),
              maxabs(P, nv * nv), TOL_EXACT, "max |inv|");
  }
  /* zero gains back */
  memset(kp, 0, sizeof(kp));
  tl_system_set_pd_gains(c->s, kp, kp, nv, &err);
  (void)sc;
}

/* Ancestor DOFs of body b, increasing. */
static int ancestor_dofs(const tl_model *m, int b, int *idx) {
  int n = 0, nv = tl_model_nv(m);
  for (int k = 0; k < nv; k++) {
    int owner = -1;
    for (int bb = 0; bb < tl_model_nbody(m); bb++) {
      int u0 = tl_model_joint_u_index(m, bb), nj = tl_joint_nv(tl_model_joint_type(m, bb));
      if (k >= u0 && k < u0 + nj) owner = bb;
    }
    if (owner >= 0 && is_ancestor_body(m, owner, b)) idx[n++] = k;
  }
  return n;
}

static void check_jacobians(ctx *c, const double *q, const double *u) {
  int nv = c->nv;
  tl_error err;
  double qp[MAXQ], qm[MAXQ];
  static double Jp[3 * MAXV], Jr[3 * MAXV], Jp2[3 * MAXV], Jr2[3 * MAXV], Js[3 * MAXV], Jrs[3 * MAXV];
  q_plus(c, q, u, FD_EPS, qp);
  q_plus(c, q, u, -FD_EPS, qm);
  for (int b = 0; b < c->nb; b++) {
    double pl[3], p0[3], R0[9], pw[3], pp[3], Rp[9], pm[3], Rm[9], pwp[3], pwm[3];
    for (int k = 0; k < 3; k++) pl[k] = uni(-0.3, 0.3);
    set_state(c, q, u);
    tl_system_body_pose(c->s, b, p0, R0, &err);
    m3v(pw, R0, pl);
    for (int k = 0; k < 3; k++) pw[k] += p0[k];
    TL_CHECK(tl_system_point_jacobian(c->s, b, pw, Jp, Jr, nv, &err) == TL_OK, "J: %s", err.message);
    double v[3] = {0}, w[3] = {0}, v2[3], w2[3];
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) v[i] += Jp[i * nv + k] * u[k], w[i] += Jr[i * nv + k] * u[k];
    double vs = fmax(1.0, norm3(v)), ws = fmax(1.0, norm3(w));
    tl_system_point_velocity(c->s, b, pw, v2, w2, &err);
    rel_check("point velocity == J u", fmax(maxdiff(v, v2, 3), maxdiff(w, w2, 3)), fmax(vs, ws), TOL_EXACT, "v, w");

    /* sparse Jacobian */
    int idx[MAXV], myidx[MAXV], n = -1, nmy = ancestor_dofs(c->m, b, myidx);
    int size = tl_system_sparse_jacobian_size(c->s, b);
    TL_CHECK(size == nmy, "tree %d body %d: sparse size %d, %d ancestor DOFs", cur_tree, b, size, nmy);
    TL_CHECK(tl_system_sparse_point_jacobian(c->s, b, pw, idx, Js, Jrs, MAXV, &n, &err) == TL_OK,
             "sparse J: %s", err.message);
    int idx_ok = n == nmy;
    for (int k = 0; idx_ok && k < n; k++) idx_ok = idx[k] == myidx[k];
    TL_CHECK(idx_ok, "tree %d body %d: sparse idx differ from the ancestor DOFs", cur_tree, b);
    double dsp = 0, nonzero = 0;
    for (int k = 0; k < nv; k++) {
      int col = -1;
      for (int cc = 0; cc < n; cc++)
        if (idx[cc] == k) col = cc;
      for (int i = 0; i < 3; i++) {
        if (col >= 0)
          dsp = fmax(dsp, fmax(fabs(Js[i * n + col] - Jp[i * nv + k]), fabs(Jrs[i * n + col] - Jr[i * nv + k])));
        else
          nonzero = fmax(nonzero, fmax(fabs(Jp[i * nv + k]), fabs(Jr[i * nv + k])));
      }
    }
    rel_check("sparse J == dense J columns", dsp, fmax(1.0, maxabs(Jp, 3 * nv)), TOL_EXACT, "max");
    TL_CHECK(nonzero == 0.0, "tree %d body %d: dense J has non-zero non-ancestor columns (%g)", cur_tree, b, nonzero);
    tl_system_sparse_jacobian_velocity(idx, n, Js, u, v2);
    tl_system_sparse_jacobian_velocity(idx, n, Jrs, u, w2);
    rel_check("sparse J u == J u", fmax(maxdiff(v, v2, 3), maxdiff(w, w2, 3)), fmax(vs, ws), TOL_EXACT, "v, w");

    /* finite differences of the body-fixed point and of the rotation */
    set_state(c, qp, u);
    tl_system_body_pose(c->s, b, pp, Rp, &err);
    m3v(pwp, Rp, pl);
    for (int k = 0; k < 3; k++) pwp[k] += pp[k];
    tl_system_point_jacobian(c->s, b, pwp, Jp2, Jr2, nv, &err);
    double jup[3] = {0}, jrp[3] = {0};
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) jup[i] += Jp2[i * nv + k] * u[k], jrp[i] += Jr2[i * nv + k] * u[k];
    set_state(c, qm, u);
    tl_system_body_pose(c->s, b, pm, Rm, &err);
    m3v(pwm, Rm, pl);
    for (int k = 0; k < 3; k++) pwm[k] += pm[k];
    tl_system_point_jacobian(c->s, b, pwm, Jp2, Jr2, nv, &err);
    double jum[3] = {0}, jrm[3] = {0};
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) jum[i] += Jp2[i * nv + k] * u[k], jrm[i] += Jr2[i * nv + k] * u[k];
    double vfd[3], wfd[3];
    for (int k = 0; k < 3; k++) vfd[k] = (pwp[k] - pwm[k]) / (2 * FD_EPS);
    rot_fd(wfd, Rp, Rm, FD_EPS);
    rel_check("Jp u == FD of body point", maxdiff(v, vfd, 3), vs, TOL_FD, "v");
    rel_check("Jr u == FD of body rotation", maxdiff(w, wfd, 3), ws, TOL_FD, "w");

    /* dJ/dt u along q(t) = q (+) t u, u fixed (the exact flow of constant u) */
    double acc[3], alpha[3], afd[3], alfd[3];
    set_state(c, q, u);
    TL_CHECK(tl_system_point_bias_acceleration(c->s, b, pw, acc, alpha, &err) == TL_OK, "bias: %s", err.message);
    for (int k = 0; k < 3; k++) {
      afd[k] = (jup[k] - jum[k]) / (2 * FD_EPS);
      alfd[k] = (jrp[k] - jrm[k]) / (2 * FD_EPS);
    }
    double as = fmax(1.0, fmax(norm3(acc), norm3(alpha)));
    rel_check("dJp/dt u == FD", maxdiff(acc, afd, 3), as, TOL_FD, "acc");
    rel_check("dJr/dt u == FD", maxdiff(alpha, alfd, 3), as, TOL_FD, "alpha");
  }
}

static void check_frames(ctx *c, const double *q, const double *u, int user_frame, int user_body,
                         const double upos[3], const double urot[9]) {
  int nv = c->nv, nf = tl_model_nframe(c->m);
  tl_error err;
  double qp[MAXQ], qm[MAXQ];
  static double Jp[3 * MAXV], Jr[3 * MAXV];
  q_plus(c, q, u, FD_EPS, qp);
  q_plus(c, q, u, -FD_EPS, qm);
  for (int f = 0; f < nf; f++) {
    double v[3], w[3], p0[3], R0[9], pp[3], Rp[9], pm[3], Rm[9], vfd[3], wfd[3], vj[3] = {0}, wj[3] = {0};
    set_state(c, q, u);
    TL_CHECK(tl_system_frame_velocity(c->s, f, v, w, &err) == TL_OK, "frame velocity: %s", err.message);
    tl_system_frame_pose(c->s, f, p0, R0, &err);
    TL_CHECK(tl_system_frame_jacobian(c->s, f, Jp, Jr, nv, &err) == TL_OK, "frame J: %s", err.message);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) vj[i] += Jp[i * nv + k] * u[k], wj[i] += Jr[i * nv + k] * u[k];
    double sc = fmax(1.0, fmax(norm3(v), norm3(w)));
    rel_check("frame J u == frame velocity", fmax(maxdiff(v, vj, 3), maxdiff(w, wj, 3)), sc, TOL_EXACT, "v, w");
    if (f == user_frame) {
      double bp[3], bR[9], ep[3], eR[9];
      tl_system_body_pose(c->s, user_body, bp, bR, &err);
      m3v(ep, bR, upos);
      for (int k = 0; k < 3; k++) ep[k] += bp[k];
      m3mul(eR, bR, urot);
      rel_check("user frame pose == body pose * offset", fmax(maxdiff(ep, p0, 3), maxdiff(eR, R0, 9)), 1.0,
                TOL_EXACT, "pos, R");
    }
    set_state(c, qp, u);
    tl_system_frame_pose(c->s, f, pp, Rp, &err);
    set_state(c, qm, u);
    tl_system_frame_pose(c->s, f, pm, Rm, &err);
    for (int k = 0; k < 3; k++) vfd[k] = (pp[k] - pm[k]) / (2 * FD_EPS);
    rot_fd(wfd, Rp, Rm, FD_EPS);
    rel_check("frame velocity == FD of frame pose", fmax(maxdiff(v, vfd, 3), maxdiff(w, wfd, 3)), sc, TOL_FD, "v, w");
  }
}

static void check_momenta(ctx *c, const double *q, const double *u) {
  tl_error err;
  link_world lw[MAXL];
  double qp[MAXQ], qm[MAXQ], comp[3], comm[3], com[3], P[3], myP[3] = {0}, mycom[3] = {0};
  set_state(c, q, u);
  links_world(c, lw);
  for (int i = 0; i < c->t->n; i++)
    for (int k = 0; k < 3; k++) {
      myP[k] += c->t->L[i].mass * lw[i].v[k];
      mycom[k] += c->t->L[i].mass * lw[i].c[k] / c->mtot;
    }
  TL_CHECK(tl_system_linear_momentum(c->s, P, &err) == TL_OK, "P: %s", err.message);
  TL_CHECK(tl_system_com(c->s, com, &err) == TL_OK, "com: %s", err.message);
  double Ps = fmax(1.0, norm3(P));
  rel_check("P == sum m v_com (URDF links)", maxdiff(P, myP, 3), Ps, TOL_EXACT, "P");
  rel_check("COM == URDF-link COM", maxdiff(com, mycom, 3), fmax(1.0, norm3(mycom)), TOL_EXACT, "com");
  q_plus(c, q, u, FD_EPS, qp);
  q_plus(c, q, u, -FD_EPS, qm);
  set_state(c, qp, u);
  tl_system_com(c->s, comp, &err);
  set_state(c, qm, u);
  tl_system_com(c->s, comm, &err);
  set_state(c, q, u);
  double Pfd[3];
  for (int k = 0; k < 3; k++) Pfd[k] = c->mtot * (comp[k] - comm[k]) / (2 * FD_EPS);
  rel_check("P == m_total d/dt COM (FD)", maxdiff(P, Pfd, 3), Ps, TOL_FD, "P");

  /* angular momentum about two points */
  double p1[3], p2[3], L1[3], L2[3], myL1[3] = {0}, d[3], dxP[3], diff[3];
  for (int k = 0; k < 3; k++) p1[k] = uni(-1, 1), p2[k] = uni(-1, 1);
  TL_CHECK(tl_system_angular_momentum(c->s, p1, L1, &err) == TL_OK, "L: %s", err.message);
  tl_system_angular_momentum(c->s, p2, L2, &err);
  for (int i = 0; i < c->t->n; i++) {
    double r[3], mv[3], rxmv[3], Iw[3];
    for (int k = 0; k < 3; k++) r[k] = lw[i].c[k] - p1[k], mv[k] = c->t->L[i].mass * lw[i].v[k];
    cross3(rxmv, r, mv);
    m3v(Iw, lw[i].I, lw[i].w);
    for (int k = 0; k < 3; k++) myL1[k] += rxmv[k] + Iw[k];
  }
  double Ls = fmax(1.0, norm3(L1)) + 2.0 * Ps;
  rel_check("L == sum (r x m v + I w) (URDF links)", maxdiff(L1, myL1, 3), Ls, TOL_EXACT, "L");
  /* L_p1 = L_p2 + (p2 - p1) x P */
  for (int k = 0; k < 3; k++) d[k] = p2[k] - p1[k];
  cross3(dxP, d, P);
  for (int k = 0; k < 3; k++) diff[k] = L1[k] - L2[k];
  rel_check("L(p1) - L(p2) == (p2 - p1) x P", maxdiff(diff, dxP, 3), Ls, TOL_EXACT, "L");

  /* composite inertia of every body against the URDF links of its subtree */
  for (int b = 0; b < c->nb; b++) {
    double mass, cc[3], I[9], mym = 0, myc[3] = {0}, myI[9] = {0};
    TL_CHECK(tl_system_composite_inertia(c->s, b, &mass, cc, I, &err) == TL_OK, "crb: %s", err.message);
    for (int i = 0; i < c->t->n; i++)
      if (is_ancestor_body(c->m, b, c->link_body[i])) {
        mym += c->t->L[i].mass;
        for (int k = 0; k < 3; k++) myc[k] += c->t->L[i].mass * lw[i].c[k];
      }
    if (mym > 0)
      for (int k = 0; k < 3; k++) myc[k] /= mym;
    for (int i = 0; i < c->t->n; i++)
      if (is_ancestor_body(c->m, b, c->link_body[i])) {
        double r[3], mi = c->t->L[i].mass;
        for (int k = 0; k < 3; k++) r[k] = lw[i].c[k] - myc[k];
        for (int x = 0; x < 3; x++)
          for (int y = 0; y < 3; y++)
            myI[3 * x + y] += lw[i].I[3 * x + y] + mi * ((x == y ? dot3(r, r) : 0.0) - r[x] * r[y]);
      }
    rel_check("composite mass", fabs(mass - mym), fmax(mym, 1e-300), TOL_EXACT, "kg");
    if (mym > 0) {
      rel_check("composite COM", maxdiff(cc, myc, 3), fmax(1.0, norm3(myc)), TOL_EXACT, "m");
      rel_check("composite inertia about its COM", maxdiff(I, myI, 9), maxabs(myI, 9), TOL_EXACT, "kg m^2");
    }
    if (b == 0) {
      rel_check("composite(body 0) mass == total", fabs(mass - c->mtot), c->mtot, TOL_EXACT, "kg");
      rel_check("composite(body 0) COM == system COM", maxdiff(cc, com, 3), fmax(1.0, norm3(com)), TOL_EXACT, "m");
    }
  }

  /* potential energy: -sum m g . c == m_total 9.81 com_z */
  double pe = tl_system_potential_energy(c->s), mype = 0;
  for (int i = 0; i < c->t->n; i++) mype += c->t->L[i].mass * 9.81 * lw[i].c[2];
  double pes = c->mtot * 9.81 * fmax(1.0, fabs(com[2]));
  rel_check("PE == m_total 9.81 com_z", fabs(pe - c->mtot * 9.81 * com[2]), pes, TOL_EXACT, "J");
  rel_check("PE == sum m 9.81 z (URDF links)", fabs(pe - mype), pes, TOL_EXACT, "J");
}

int main(void) {
  static char urdf[1 << 16];
  int type_count[JT_N] = {0}, base_count[BASE_N] = {0}, max_nv = 0;
  for (int k = 0; k < NTREE; k++) {
    tree t;
    size_t len;
    gen_tree(&t, k);
    cur_tree = k, cur_state = -1;
    if (!TL_CHECK(write_urdf(&t, k, urdf, sizeof(urdf), &len) == 0, "tree %d: URDF text too long", k)) continue;
    ctx c;
    if (setup(&c, &t, urdf, len, k)) {
      if (c.w) tl_world_free(c.w);
      continue;
    }
    for (int i = 1; i < t.n; i++) type_count[t.J[i].type]++;
    base_count[t.base]++;
    if (c.nv > max_nv) max_nv = c.nv;

    /* a user frame on a random body, random offset and rotation */
    tl_error err;
    int ub = irand(c.nb), uf = -1;
    double upos[3], uq[4], urot[9];
    for (int i = 0; i < 3; i++) upos[i] = uni(-0.3, 0.3);
    rand_quat(uq);
    quat_matrix(urot, uq);
    TL_CHECK(tl_system_add_frame(c.s, "user_frame", ub, upos, urot, &uf, &err) == TL_OK, "add frame: %s",
             err.message);
    TL_CHECK(uf == tl_model_frame_index(c.m, "user_frame") && tl_model_frame_body(c.m, uf) == ub,
             "user frame index %d body %d", uf, ub);

    for (int st = 0; st < NSTATE; st++) {
      double q[MAXQ], u[MAXV];
      cur_state = st;
      random_state(&c, q, u);
      check_mass_matrix(&c, q, u);
      check_dynamics(&c, q, u);
      check_jacobians(&c, q, u);
      check_frames(&c, q, u, uf, ub, upos, urot);
      check_momenta(&c, q, u);
    }
    tl_world_free(c.w);
  }
  printf("trees: %d (floating %d, fixed via 'world' %d, fixed via option %d), largest nv %d\n", NTREE,
         base_count[0], base_count[1], base_count[2], max_nv);
  printf("joints:");
  for (int k = 0; k < JT_N; k++) printf(" %s %d", jt_name[k], type_count[k]);
  printf("\n");
  for (int k = 0; k < JT_N; k++) TL_CHECK(type_count[k] > 0, "no %s joint generated", jt_name[k]);
  for (int k = 0; k < BASE_N; k++) TL_CHECK(base_count[k] > 0, "no tree with base kind %d", k);
  printf("worst relative error per check (tolerance):\n");
  for (int i = 0; i < nstats; i++)
    printf("  %-52s %9.2e (%g, %d checks)\n", stats[i].name, stats[i].worst, stats[i].tol, stats[i].n);
  return tl_test_finish();
}
