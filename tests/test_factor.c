/* Guards: src/dynamics/factor.c (tree-sparse L^T D L, dense and sparse paths), src/math/tl_cpu.c, src/dynamics/aba.c,
 * src/world/system_query.c (M^-1, M x, the cached factorization). */
/* The tree-sparse mass-matrix algorithms against dense references, on
 * random kinematic trees chosen to reach every code path: tiny systems
 * (nv <= 8, the dense unrolled path of src/dynamics/factor.c) and larger ones
 * (the sparse path), chains, bushy trees and forests (a welded base with
 * several subtrees, whose M is block diagonal), floating and fixed bases,
 * 1-DOF and spherical joints, rotor inertia.
 *
 *   - tl_system_inverse_mass_matrix == dense inverse of M (Cholesky), and
 *     exactly symmetric, and bit for bit the same with the baseline kernels
 *     as with the CPU's widest (AVX where present: math/tl_cpu.h);
 *   - tl_system_forward_dynamics == dense M^-1 (tau - h) both by ABA (nothing
 *     factored) and by the solve with a cached factorization of M (after
 *     tl_system_inverse_mass_matrix), and never with a stale one: after a new
 *     state, a new gravity, or a factorization of M_eff. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "math/tl_cpu.h"
#include "talus/talus.h"
#include "test_util.h"

#define MAXL 24
#define MAXV (6 + 3 * MAXL)
#define MAXQ (7 + 4 * MAXL)
#define TOL 1e-9

static uint64_t rng_s = 0x7a1f3c0ffee1ULL;
static double urand(void) { /* splitmix64 */
  uint64_t z = (rng_s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
static double uni(double a, double b) { return a + (b - a) * urand(); }
static int irand(int n) { return (int)(urand() * n) % n; }

/* Topologies: 0 chain, 1 random tree, 2 star (every link on the root). */
static size_t write_tree(char *buf, size_t cap, int nlink, int topo, int spherical_pct) {
  size_t len = 0;
  len += (size_t)snprintf(buf + len, cap - len, "<?xml version=\"1.0\"?>\n<robot name=\"t\">\n");
  for (int i = 0; i < nlink; i++)
    len += (size_t)snprintf(buf + len, cap - len,
                            "<link name=\"l%d\"><inertial><origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>"
                            "<mass value=\"%.17g\"/><inertia ixx=\"%.17g\" ixy=\"0\" ixz=\"0\" iyy=\"%.17g\" iyz=\"0\" "
                            "izz=\"%.17g\"/></inertial></link>\n",
                            i, uni(-.1, .1), uni(-.1, .1), uni(-.1, .1), uni(-3, 3), uni(-3, 3), uni(-3, 3),
                            uni(0.2, 3.0), uni(0.01, 0.1), uni(0.01, 0.1), uni(0.01, 0.1));
  for (int i = 1; i < nlink; i++) {
    int parent = topo == 0 ? i - 1 : topo == 2 ? 0 : irand(i);
    int sph = irand(100) < spherical_pct;
    double a[3] = {uni(-1, 1), uni(-1, 1), uni(-1, 1)};
    len += (size_t)snprintf(buf + len, cap - len,
                            "<joint name=\"j%d\" type=\"%s\"><parent link=\"l%d\"/><child link=\"l%d\"/>"
                            "<origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>"
                            "<axis xyz=\"%.17g %.17g %.17g\"/><dynamics damping=\"%.17g\" rotor_inertia=\"%.17g\"/>"
                            "</joint>\n",
                            i, sph ? "spherical" : irand(4) ? "continuous" : "prismatic", parent, i, uni(-.3, .3),
                            uni(-.3, .3), uni(-.3, .3), uni(-3, 3), uni(-3, 3), uni(-3, 3), a[0], a[1], a[2],
                            uni(0, 1), irand(2) ? uni(0, 0.05) : 0.0);
  }
  len += (size_t)snprintf(buf + len, cap - len, "</robot>\n");
  return len;
}

/* Dense Cholesky A = C C^T in place (lower); 0 if not positive definite. */
static int cholesky(double *A, int n) {
  for (int j = 0; j < n; j++) {
    double s = A[j * n + j];
    for (int k = 0; k < j; k++) s -= A[j * n + k] * A[j * n + k];
    if (!(s > 0)) return 0;
    A[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = A[i * n + j];
      for (int k = 0; k < j; k++) t -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = t / A[j * n + j];
    }
  }
  return 1;
}
static void chol_solve(const double *C, int n, double *x) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) x[i] -= C[i * n + k] * x[k];
    x[i] /= C[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int k = i + 1; k < n; k++) x[i] -= C[k * n + i] * x[k];
    x[i] /= C[i * n + i];
  }
}
static double maxabs(const double *a, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}
static double maxdiff(const double *a, const double *b, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

static void random_state(tl_system *s, double *q, double *u) {
  const tl_model *m = tl_system_model(s);
  for (int b = 0; b < tl_model_nbody(m); b++) {
    int iq = tl_model_joint_q_index(m, b);
    switch (tl_model_joint_type(m, b)) {
      case TL_JOINT_FLOATING:
        for (int k = 0; k < 3; k++) q[iq + k] = uni(-1, 1);
        for (int k = 0; k < 4; k++) q[iq + 3 + k] = uni(-1, 1);
        break;
      case TL_JOINT_SPHERICAL:
        for (int k = 0; k < 4; k++) q[iq + k] = uni(-1, 1);
        break;
      case TL_JOINT_FIXED: break;
      default: q[iq] = uni(-2, 2); break;
    }
  }
  for (int k = 0; k < tl_system_nv(s); k++) u[k] = uni(-2, 2);
}

/* Worst relative errors, for the summary. */
static double worst_inv, worst_aba, worst_cached;

/* Forward dynamics against the dense reference at the current state. */
static void check_forward(tl_system *s, const char *what, double *worst) {
  int nv = tl_system_nv(s);
  static double M[MAXV * MAXV];
  double h[MAXV], tau[MAXV], du[MAXV], x[MAXV];
  tl_error err;
  tl_system_mass_matrix(s, M, nv, &err);
  tl_system_nonlinear_term(s, h, nv, &err);
  for (int k = 0; k < nv; k++) tau[k] = uni(-5, 5), x[k] = tau[k] - h[k];
  if (!TL_CHECK(cholesky(M, nv), "%s: M not positive definite", what)) return;
  chol_solve(M, nv, x);
  TL_CHECK(tl_system_forward_dynamics(s, tau, du, nv, &err) == TL_OK, "%s: %s", what, err.message);
  double e = maxdiff(du, x, nv) / fmax(1.0, maxabs(x, nv));
  *worst = fmax(*worst, e);
  TL_CHECK(e <= TOL, "%s: forward dynamics off the dense M^-1 (tau - h) by %g (nv %d)", what, e, nv);
}

static void check_system(tl_system *s, tl_world *w, int trial) {
  int nv = tl_system_nv(s), nq = tl_system_nq(s);
  static double M[MAXV * MAXV], C[MAXV * MAXV], Minv[MAXV * MAXV], ref[MAXV * MAXV];
  double q[MAXQ], u[MAXV], x[MAXV];
  tl_error err;
  random_state(s, q, u);
  TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK, "state: %s", err.message);

  /* forward dynamics with nothing factored: ABA */
  check_forward(s, "ABA", &worst_aba);

  /* M^-1 */
  tl_system_mass_matrix(s, M, nv, &err);
  memcpy(C, M, sizeof(double) * (size_t)(nv * nv));
  if (!TL_CHECK(cholesky(C, nv), "trial %d: M not positive definite", trial)) return;
  for (int j = 0; j < nv; j++) {
    for (int i = 0; i < nv; i++) x[i] = i == j;
    chol_solve(C, nv, x);
    for (int i = 0; i < nv; i++) ref[i * nv + j] = x[i];
  }
  TL_CHECK(tl_system_inverse_mass_matrix(s, Minv, nv, &err) == TL_OK, "M^-1: %s", err.message);
  double e = maxdiff(Minv, ref, nv * nv) / maxabs(ref, nv * nv), asym = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) asym = fmax(asym, fabs(Minv[i * nv + j] - Minv[j * nv + i]));
  worst_inv = fmax(worst_inv, e);
  TL_CHECK(e <= TOL, "trial %d: M^-1 off the dense inverse by %g (nv %d)", trial, e, nv);
  TL_CHECK(asym == 0, "trial %d: M^-1 not exactly symmetric (%g)", trial, asym);
  /* the baseline kernels give the same bits as the widest this CPU runs (math/tl_cpu.h) */
  static double Mb[MAXV * MAXV];
  tl_cpu_set_lanes_limit(1);
  TL_CHECK(tl_system_inverse_mass_matrix(s, Mb, nv, &err) == TL_OK, "M^-1: %s", err.message);
  tl_cpu_set_lanes_limit(0);
  TL_CHECK(memcmp(Mb, Minv, sizeof(double) * (size_t)(nv * nv)) == 0,
           "trial %d: M^-1 with %d lanes differs from the baseline's", trial, tl_cpu_lanes());

  /* forward dynamics with the factorization of M cached: the solve path */
  check_forward(s, "cached factorization", &worst_cached);
  check_forward(s, "cached factorization, again", &worst_cached);

  /* a new state: the cached factorization is stale */
  random_state(s, q, u);
  TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK, "state: %s", err.message);
  check_forward(s, "after a new state", &worst_aba);
  TL_CHECK(tl_system_inverse_mass_matrix(s, Minv, nv, &err) == TL_OK, "M^-1: %s", err.message);
  double g[3] = {uni(-3, 3), uni(-3, 3), uni(-12, -5)};
  TL_CHECK(tl_world_set_gravity(w, g, &err) == TL_OK, "gravity: %s", err.message);
  check_forward(s, "after a new gravity", &worst_aba);

  /* effective inverse: factorization of M + diag, which forward dynamics must not use */
  double kp[MAXV], kd[MAXV], dt = uni(0.001, 0.02);
  for (int k = 0; k < nv; k++) kp[k] = uni(0, 300), kd[k] = uni(0, 20);
  TL_CHECK(tl_world_set_timestep(w, dt, &err) == TL_OK, "dt: %s", err.message);
  TL_CHECK(tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK, "gains: %s", err.message);
  TL_CHECK(tl_system_inverse_mass_matrix(s, Minv, nv, &err) == TL_OK, "M^-1: %s", err.message);
  TL_CHECK(tl_system_effective_inverse_mass_matrix(s, Minv, nv, &err) == TL_OK, "Meff^-1: %s", err.message);
  check_forward(s, "after the effective inverse", &worst_aba);
  double z[MAXV] = {0};
  TL_CHECK(tl_system_set_pd_gains(s, z, z, nv, &err) == TL_OK, "gains: %s", err.message);
}

int main(void) {
  static char urdf[1 << 16];
  int ntrial = 0, nv_seen[MAXV + 1] = {0};
  for (int trial = 0; trial < 160; trial++) {
    int topo = trial % 3, nlink = 2 + irand(trial < 80 ? 5 : MAXL - 1);
    int floating = trial % 4 == 1, spherical_pct = trial % 5 == 0 ? 30 : 0;
    size_t len = write_tree(urdf, sizeof urdf, nlink, topo, spherical_pct);
    tl_load_options opt = tl_load_options_default();
    opt.base = floating ? TL_BASE_FLOATING : TL_BASE_FIXED;
    tl_model *model = NULL;
    tl_world *w = NULL;
    tl_system *s = NULL;
    tl_error err;
    if (!TL_CHECK(tl_model_load_urdf_string(urdf, len, NULL, &opt, &model, &err) == TL_OK, "load: %s",
                  err.message))
      continue;
    if (TL_CHECK(tl_world_create(&w, &err) == TL_OK, "world: %s", err.message) &&
        TL_CHECK(tl_world_add_system(w, model, &s, &err) == TL_OK, "add: %s", err.message)) {
      int nv = tl_system_nv(s);
      if (nv <= MAXV) {
        nv_seen[nv]++;
        for (int rep = 0; rep < 2; rep++) check_system(s, w, trial);
        ntrial++;
      }
    }
    tl_world_free(w);
    tl_model_free(model);
  }
  int small = 0, large = 0;
  for (int k = 1; k <= MAXV; k++) *(k <= 8 ? &small : &large) += nv_seen[k];
  printf("systems: %d (nv <= 8: %d, nv > 8: %d)\n", ntrial, small, large);
  TL_CHECK(small > 20 && large > 20, "both the small (%d) and the sparse (%d) paths must be exercised", small, large);
  printf("worst relative error: M^-1 %.2e, forward dynamics by ABA %.2e, by the cached factorization %.2e\n",
         worst_inv, worst_aba, worst_cached);
  return tl_test_finish();
}
