/* Guards: src/dynamics/derivatives.c (RNEA / ABA derivatives, tl_model_integrate / difference), src/dynamics/inverse_mul.c,
 * src/world/system_derivatives.c (the public calls), src/dynamics/kinematics.c (frame placement). */
/* Analytic derivatives (issue 24 §1, §2) against finite differences.
 *
 * For every model (generated trees with every joint type on floating and
 * fixed bases, the project robots of robots/, every URDF of the shared
 * corpus) at NSTATE seeded random states (joint coordinates uniform within
 * limits or [-1, 1], random unit quaternions, base in [-1, 1]^3, u, du and
 * tau ~ N(0, 1) scaled):
 *   config   tl_model_integrate / tl_model_difference round trips:
 *            (q (+) v) (-) q = v and q0 (+) (q1 (-) q0) = q1 (quaternions up
 *            to sign) to 1e-12; their four Jacobians against central
 *            differences in the tangent spaces (step 1e-6), 1e-7 relative
 *   id_q     d tau/dq of tl_system_inverse_dynamics_derivatives
 *   id_u     d tau/du
 *   fd_q, fd_u, fd_tau  d du/dq, d du/du, d du/dtau of
 *            tl_system_forward_dynamics_derivatives
 *            all against central differences of tl_system_inverse_dynamics /
 *            tl_system_forward_dynamics (q perturbed through tl_model_integrate
 *            in the tangent space) with one Richardson extrapolation
 *            (D = (4 D(h/2) - D(h)) / 3, h = 1e-3: truncation O(h^4) ~ 1e-12,
 *            rounding ~ 1e-16 / h ~ 1e-13 relative), 1e-6 relative to the
 *            largest entry of the finite-difference matrix (at least 1e-3 x
 *            M's largest diagonal entry for id_*, 1e-3 max M_ii max M^-1_ii
 *            for fd_q / fd_u: a ball's derivatives vanish by symmetry and
 *            leave only rounding)
 *   mass     d tau/d du (differences of RNEA in du, exact for a linear
 *            function) equals tl_system_mass_matrix, and fd_tau equals
 *            tl_system_inverse_mass_matrix, 1e-9 relative
 *   lanes    tl_system_forward_dynamics_derivatives gives the same bits with
 *            the widest kernels this CPU runs (4-lane AVX on x86-64) as with
 *            the baseline ones (tl_cpu_set_lanes_limit, math/tl_cpu.h)
 *   frame    tl_system_frame_placement_derivatives of every frame:
 *            p(q (+) h e_j) and log(R(q (+) h e_j) R(q)^T) by central
 *            differences, 1e-6 relative
 * No allocation in any derivative call (malloc/calloc/realloc wrapped), and
 * no side effect: calling them between tl_world_integrate1 and
 * tl_world_integrate2 leaves a 200-step run of the standing quadruped bit
 * for bit unchanged.
 * Then, for ANYmal C, TALOS (full) and the KUKA iiwa of the shared corpus,
 * the time per call (µs, best of 5 runs) of RNEA, ABA, their analytic
 * derivatives, and Talus's own centred finite differences of ABA in (q, u,
 * tau), each including its kinematics pass (a new state every call).
 *
 * Usage: test_derivatives ROBOTS_DIR [SHARED_ROBOTS_DIR] ($TALUS_SHARED/robots
 * overrides). Exit 77 (after testing everything else) when the shared
 * corpus is absent. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "talus/talus.h"
#include "test_util.h"
#include "math/tl_cpu.h"
#include "math/tl_math.h"
#include "world/world_internal.h"

/* Allocations are counted around the derivative calls (malloc, calloc and
 * realloc wrapped at link time, as test_no_alloc): they must not allocate. */
#include "test_alloc.h"

#define NSTATE 3
#define TOL_RT 1e-12
#define TOL_CJ 1e-7
#define TOL_DER 1e-6
#define TOL_MASS 1e-9
#define TOL_FRAME 1e-6
#define FD_H 1e-3

enum { C_RT, C_CJ, C_IDQ, C_IDU, C_FDQ, C_FDU, C_FDT, C_MASS, C_FRAME, NCAT };
static const char *const cat_name[NCAT] = {"roundtrip", "config_jac", "id_q", "id_u",  "fd_q",
                                           "fd_u",      "fd_tau",     "mass", "frame"};
static const double cat_tol[NCAT] = {TOL_RT, TOL_CJ, TOL_DER, TOL_DER, TOL_DER, TOL_DER, TOL_DER, TOL_MASS, TOL_FRAME};
static double worst_all[NCAT];

/* ------------------------------------------------------------------ RNG */

typedef struct rng {
  uint64_t s;
} rng;
static double rng_uniform(rng *r) { /* splitmix64 -> [0, 1) */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double rng_normal(rng *r) {
  double u1 = rng_uniform(r), u2 = rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static void rng_quat(rng *r, double q[4]) {
  double n;
  do {
    for (int i = 0; i < 4; i++) q[i] = rng_normal(r);
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 1e-3);
  for (int i = 0; i < 4; i++) q[i] /= n;
}
static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void random_q(const tl_model *m, rng *r, double *q) {
  tl_model_reference_q(m, q, tl_model_nq(m), NULL);
  for (int b = 0; b < tl_model_nbody(m); b++) {
    tl_joint_type ty = tl_model_joint_type(m, b);
    int qi = tl_model_joint_q_index(m, b), ui = tl_model_joint_u_index(m, b);
    if (ty == TL_JOINT_FLOATING) {
      for (int k = 0; k < 3; k++) q[qi + k] = 2 * rng_uniform(r) - 1;
      rng_quat(r, q + qi + 3);
    } else if (ty == TL_JOINT_SPHERICAL) {
      rng_quat(r, q + qi);
    } else if (ty != TL_JOINT_FIXED) {
      for (int k = 0; k < tl_joint_nv(ty); k++) {
        double lo = -INFINITY, hi = INFINITY;
        tl_model_dof_limits(m, ui + k, &lo, &hi, NULL);
        if (!isfinite(lo) || !isfinite(hi) || !(hi > lo)) lo = -1, hi = 1;
        q[qi + k] = lo + (hi - lo) * rng_uniform(r);
      }
    }
  }
}

/* ------------------------------------------------------------------ bookkeeping */

typedef struct result {
  double e[NCAT];
  char where[NCAT][200];
  int api_fail;
  int lanes_compared; /* the widest kernels compared bit for bit with the baseline (math/tl_cpu.h) */
} result;

static void record(result *res, int c, double e, const char *fmt, ...) TL_TEST_PRINTF_(4, 5);
static void record(result *res, int c, double e, const char *fmt, ...) {
  if (isnan(e)) e = INFINITY;
  if (e > worst_all[c]) worst_all[c] = e;
  if (!(e > res->e[c]) && !(e == INFINITY && !res->where[c][0])) return;
  res->e[c] = e;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->where[c], sizeof res->where[c], fmt, ap);
  va_end(ap);
}

/* max |A - B| / max(max |B|, floor) over n entries. */
static double rel_err(const double *A, const double *B, int n, double floor_) {
  double e = 0, s = floor_;
  for (int i = 0; i < n; i++) {
    double d = fabs(A[i] - B[i]);
    if (!(d <= e)) e = d;
    if (fabs(B[i]) > s) s = fabs(B[i]);
  }
  return e / s;
}

#define API(call)                                                                     \
  do {                                                                                \
    tl_error e_;                                                                      \
    memset(&e_, 0, sizeof e_);                                                        \
    if (!TL_CHECK((call) == TL_OK, "%s: %s failed: %s", label, #call, e_.message)) { \
      res->api_fail = 1;                                                              \
      return;                                                                         \
    }                                                                                 \
  } while (0)
#define ERR (&e_)

/* ------------------------------------------------------------------ checks */

typedef struct work {
  int nq, nv;
  double *q, *u, *du, *tau, *v, *q1, *q2, *t1, *t2, *t3, *t4;
  double *A, *B, *C, *F, *G, *H;
} work;

static void work_alloc(work *w, int nq, int nv) {
  size_t n = (size_t)(nv > 0 ? nv : 1), n2 = n * n, nqq = (size_t)(nq > 0 ? nq : 1);
  w->nq = nq, w->nv = nv;
  double **v1[] = {&w->u, &w->du, &w->tau, &w->v, &w->t1, &w->t2, &w->t3, &w->t4};
  for (size_t i = 0; i < sizeof v1 / sizeof v1[0]; i++) *v1[i] = calloc(n, sizeof(double));
  double **vq[] = {&w->q, &w->q1, &w->q2};
  for (size_t i = 0; i < sizeof vq / sizeof vq[0]; i++) *vq[i] = calloc(nqq, sizeof(double));
  double **vm[] = {&w->A, &w->B, &w->C, &w->F, &w->G, &w->H};
  for (size_t i = 0; i < sizeof vm / sizeof vm[0]; i++) *vm[i] = calloc(n2 > 3 * n ? n2 : 3 * n, sizeof(double));
}
static void work_free(work *w) {
  double *a[] = {w->u, w->du, w->tau, w->v, w->t1, w->t2, w->t3, w->t4, w->q, w->q1, w->q2,
                 w->A, w->B, w->C, w->F, w->G, w->H};
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) free(a[i]);
}

/* Do two configurations describe the same pose (quaternions up to sign)? Max deviation. */
static double q_dist(const tl_model *m, const double *a, const double *b) {
  double e = 0;
  for (int body = 0; body < tl_model_nbody(m); body++) {
    tl_joint_type ty = tl_model_joint_type(m, body);
    int qi = tl_model_joint_q_index(m, body), n = ty == TL_JOINT_FLOATING ? 3 : ty == TL_JOINT_SPHERICAL ? 0 : tl_joint_nv(ty);
    for (int k = 0; k < n; k++) e = fmax(e, fabs(a[qi + k] - b[qi + k]));
    if (ty == TL_JOINT_FLOATING || ty == TL_JOINT_SPHERICAL) {
      const double *x = a + qi + (ty == TL_JOINT_FLOATING ? 3 : 0), *y = b + qi + (ty == TL_JOINT_FLOATING ? 3 : 0);
      double ep = 0, em = 0;
      for (int k = 0; k < 4; k++) ep = fmax(ep, fabs(x[k] - y[k])), em = fmax(em, fabs(x[k] + y[k]));
      e = fmax(e, fmin(ep, em));
    }
  }
  return e;
}

/* tangent-space Jacobians of integrate / difference by central differences */
static void check_config(const tl_model *m, const char *label, int k, work *w, rng *r, result *res) {
  const int nq = w->nq, nv = w->nv;
  random_q(m, r, w->q);
  for (int i = 0; i < nv; i++) w->v[i] = 0.7 * rng_normal(r);
  /* keep rotations below pi so that difference returns v itself */
  for (int b = 0; b < tl_model_nbody(m); b++) {
    tl_joint_type ty = tl_model_joint_type(m, b);
    if (ty != TL_JOINT_FLOATING && ty != TL_JOINT_SPHERICAL) continue;
    double *x = w->v + tl_model_joint_u_index(m, b) + (ty == TL_JOINT_FLOATING ? 3 : 0);
    double n = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (n > 2.5)
      for (int i = 0; i < 3; i++) x[i] *= 2.5 / n;
  }
  API(tl_model_integrate(m, w->q, nq, w->v, nv, w->q1, ERR));
  API(tl_model_difference(m, w->q, w->q1, nq, w->t1, nv, ERR));
  double vmax = 1;
  for (int i = 0; i < nv; i++) vmax = fmax(vmax, fabs(w->v[i]));
  record(res, C_RT, rel_err(w->t1, w->v, nv, vmax), "state %d: (q (+) v) (-) q vs v", k);
  /* q0 (+) (q1 (-) q0) = q1 for an independent random q1 */
  random_q(m, r, w->q2);
  API(tl_model_difference(m, w->q, w->q2, nq, w->t1, nv, ERR));
  API(tl_model_integrate(m, w->q, nq, w->t1, nv, w->q1, ERR));
  record(res, C_RT, q_dist(m, w->q1, w->q2), "state %d: q0 (+) (q1 (-) q0) vs q1", k);
  API(tl_model_integrate(m, w->q, nq, w->v, nv, w->q1, ERR)); /* q1 = q (+) v again */

  const double h = 1e-6;
  double *Jq = w->A, *Jv = w->B, *J0 = w->C, *J1 = w->F, *Fd = w->G;
  API(tl_model_integrate_jacobians(m, w->q, w->v, nq, Jq, Jv, nv, ERR));
  API(tl_model_difference_jacobians(m, w->q, w->q1, nq, J0, J1, nv, ERR));
  double *qa = malloc((size_t)(nq ? nq : 1) * sizeof(double)), *qb = malloc((size_t)(nq ? nq : 1) * sizeof(double));
  double *ea = calloc((size_t)(nv ? nv : 1), sizeof(double));
  for (int which = 0; which < 4; which++) {
    for (int j = 0; j < nv; j++) {
      for (int s = 0; s < 2; s++) {
        double eps = s ? -h : h;
        memset(ea, 0, (size_t)nv * sizeof(double));
        ea[j] = eps;
        double *out = s ? w->t2 : w->t1;
        if (which == 0) { /* ((q (+) e) (+) v) (-) (q (+) v) */
          API(tl_model_integrate(m, w->q, nq, ea, nv, qa, ERR));
          API(tl_model_integrate(m, qa, nq, w->v, nv, qb, ERR));
          API(tl_model_difference(m, w->q1, qb, nq, out, nv, ERR));
        } else if (which == 1) { /* (q (+) (v + e)) (-) (q (+) v) */
          for (int i = 0; i < nv; i++) ea[i] += w->v[i];
          API(tl_model_integrate(m, w->q, nq, ea, nv, qb, ERR));
          API(tl_model_difference(m, w->q1, qb, nq, out, nv, ERR));
        } else if (which == 2) { /* q1 (-) (q0 (+) e) */
          API(tl_model_integrate(m, w->q, nq, ea, nv, qa, ERR));
          API(tl_model_difference(m, qa, w->q1, nq, out, nv, ERR));
        } else { /* (q1 (+) e) (-) q0 */
          API(tl_model_integrate(m, w->q1, nq, ea, nv, qa, ERR));
          API(tl_model_difference(m, w->q, qa, nq, out, nv, ERR));
        }
      }
      for (int i = 0; i < nv; i++) Fd[i * nv + j] = (w->t1[i] - w->t2[i]) / (2 * h);
    }
    const double *An = which == 0 ? Jq : which == 1 ? Jv : which == 2 ? J0 : J1;
    static const char *const nm[4] = {"d(q+v)/dq", "d(q+v)/dv", "d(q1-q0)/dq0", "d(q1-q0)/dq1"};
    record(res, C_CJ, rel_err(An, Fd, nv * nv, 1.0), "state %d: %s", k, nm[which]);
  }
  free(qa);
  free(qb);
  free(ea);
}

/* Richardson-extrapolated central difference of f along the tangent
 * direction e_j of q, or of u / du / tau (mode), into column j of Fd. */
enum { D_Q, D_U, D_DU, D_TAU };
static int eval(tl_system *s, const tl_model *m, work *w, int fwd, int mode, int j, double eps, double *out) {
  const int nq = w->nq, nv = w->nv;
  memcpy(w->t3, w->u, (size_t)nv * sizeof(double));
  memcpy(w->t4, fwd ? w->tau : w->du, (size_t)nv * sizeof(double));
  double *ea = w->t2;
  memset(ea, 0, (size_t)nv * sizeof(double));
  ea[j] = eps;
  if (mode == D_Q) {
    if (tl_model_integrate(m, w->q, nq, ea, nv, w->q1, NULL)) return -1;
  } else {
    memcpy(w->q1, w->q, (size_t)nq * sizeof(double));
    if (mode == D_U) w->t3[j] += eps;
    else w->t4[j] += eps;
  }
  if (tl_system_set_state(s, w->q1, nq, w->t3, nv, NULL)) return -1;
  return fwd ? tl_system_forward_dynamics(s, w->t4, out, nv, NULL) : tl_system_inverse_dynamics(s, w->t4, out, nv, NULL);
}

static int fd_matrix(tl_system *s, const tl_model *m, work *w, int fwd, int mode, double h, double *Fd) {
  const int nv = w->nv;
  double *p = malloc(4 * (size_t)nv * sizeof(double));
  for (int j = 0; j < nv; j++) {
    double D[2];
    (void)D;
    if (eval(s, m, w, fwd, mode, j, h, p) || eval(s, m, w, fwd, mode, j, -h, p + nv) ||
        eval(s, m, w, fwd, mode, j, h / 2, p + 2 * nv) || eval(s, m, w, fwd, mode, j, -h / 2, p + 3 * nv)) {
      free(p);
      return -1;
    }
    for (int i = 0; i < nv; i++) {
      double d1 = (p[i] - p[nv + i]) / (2 * h), d2 = (p[2 * nv + i] - p[3 * nv + i]) / h;
      Fd[i * nv + j] = (4 * d2 - d1) / 3;
    }
  }
  free(p);
  return 0;
}

/* A floating base's translation (columns 0..2 of D_q) and its linear velocity
 * (columns 0..2 of D_u) change no joint torque and no acceleration: gravity
 * is uniform, and the Newton-Euler equations are Galilean invariant (u's
 * base velocity is the world-frame velocity of the base origin, so adding a
 * constant to it adds the same constant to every point's velocity). Exactly
 * 0, which the forward-dynamics derivatives rely on to skip those columns;
 * the finite differences below check the rest. */
static void check_base_invariance(const tl_model *m, const char *label, const char *what, const double *Dq,
                                  const double *Du, int nv) {
  if (tl_model_nbody(m) == 0 || tl_model_joint_type(m, 0) != TL_JOINT_FLOATING) return;
  int bad = 0;
  for (int i = 0; i < nv; i++)
    for (int c = 0; c < 3; c++) bad += Dq[i * nv + c] != 0 || Du[i * nv + c] != 0;
  TL_CHECK(bad == 0, "%s: %d entries of %s/dq or %s/du in the base's translation columns are not exactly 0", label,
           bad, what, what);
}

static void check_dynamics(tl_system *s, const tl_model *m, const char *label, int k, work *w, rng *r,
                           result *res) {
  const int nq = w->nq, nv = w->nv;
  if (nv == 0) return;
  random_q(m, r, w->q);
  for (int i = 0; i < nv; i++) w->u[i] = rng_normal(r), w->du[i] = 3 * rng_normal(r);
  API(tl_system_set_state(s, w->q, nq, w->u, nv, ERR));
  API(tl_system_get_state(s, w->q, nq, w->u, nv, ERR)); /* normalised quaternions */
  /* tau ~ the forces that move this robot: M du + h for a random du */
  API(tl_system_inverse_dynamics(s, w->du, w->tau, nv, ERR));
  for (int i = 0; i < nv; i++) w->tau[i] += rng_normal(r);

  double *A = w->A, *B = w->B, *C = w->C, *Fd = w->F;
  /* floors of the relative errors, for matrices that vanish by symmetry (a
   * ball: all zero): 1e-3 of M's largest diagonal entry (inverse dynamics),
   * 1e-3 max(M_ii) max(M^-1_ii) (forward dynamics at these unit-scale
   * states: the rounding of the finite differences grows with M's spread,
   * e.g. a 0.004 kg m^2 ball 1 m from the world origin) */
  API(tl_system_mass_matrix(s, C, nv, ERR));
  double fl_id = 0, fl_fd = 0, mmax = 0, imax = 0;
  for (int i = 0; i < nv; i++) mmax = fmax(mmax, C[i * nv + i]);
  fl_id = 1e-3 * mmax;
  API(tl_system_inverse_mass_matrix(s, C, nv, ERR));
  for (int i = 0; i < nv; i++) imax = fmax(imax, C[i * nv + i]);
  fl_fd = 1e-3 * mmax * imax;
  API(tl_system_inverse_dynamics_derivatives(s, w->du, A, B, nv, ERR));
  check_base_invariance(m, label, "dtau", A, B, nv);
  if (!TL_CHECK(fd_matrix(s, m, w, 0, D_Q, FD_H, Fd) == 0, "%s: FD failed", label)) return;
  record(res, C_IDQ, rel_err(A, Fd, nv * nv, fl_id), "state %d: dtau/dq", k);
  if (!TL_CHECK(fd_matrix(s, m, w, 0, D_U, FD_H, Fd) == 0, "%s: FD failed", label)) return;
  record(res, C_IDU, rel_err(B, Fd, nv * nv, fl_id), "state %d: dtau/du", k);
  /* d tau / d du = M: RNEA is linear in du */
  if (!TL_CHECK(fd_matrix(s, m, w, 0, D_DU, 1.0, Fd) == 0, "%s: FD failed", label)) return;
  API(tl_system_set_state(s, w->q, nq, w->u, nv, ERR));
  API(tl_system_mass_matrix(s, C, nv, ERR));
  record(res, C_MASS, rel_err(Fd, C, nv * nv, 1e-12), "state %d: d tau/d du vs M", k);

  API(tl_system_set_state(s, w->q, nq, w->u, nv, ERR));
  API(tl_system_forward_dynamics_derivatives(s, w->tau, A, B, C, nv, ERR));
  /* the same bits from the baseline kernels as from the widest this CPU runs (math/tl_cpu.h) */
  tl_cpu_set_lanes_limit(1);
  API(tl_system_forward_dynamics_derivatives(s, w->tau, Fd, w->G, w->H, nv, ERR));
  tl_cpu_set_lanes_limit(0);
  const size_t bytes = (size_t)nv * nv * sizeof(double);
  res->lanes_compared = tl_cpu_lanes();
  TL_CHECK(memcmp(A, Fd, bytes) == 0 && memcmp(B, w->G, bytes) == 0 && memcmp(C, w->H, bytes) == 0,
           "%s, state %d: forward dynamics derivatives with %d lanes differ from the %d-lane baseline", label, k,
           tl_cpu_lanes(), TL_LANES);
  check_base_invariance(m, label, "ddu", A, B, nv);
  if (!TL_CHECK(fd_matrix(s, m, w, 1, D_Q, FD_H, Fd) == 0, "%s: FD failed", label)) return;
  record(res, C_FDQ, rel_err(A, Fd, nv * nv, fl_fd), "state %d: ddu/dq", k);
  if (!TL_CHECK(fd_matrix(s, m, w, 1, D_U, FD_H, Fd) == 0, "%s: FD failed", label)) return;
  record(res, C_FDU, rel_err(B, Fd, nv * nv, fl_fd), "state %d: ddu/du", k);
  if (!TL_CHECK(fd_matrix(s, m, w, 1, D_TAU, 1.0, Fd) == 0, "%s: FD failed", label)) return;
  record(res, C_FDT, rel_err(C, Fd, nv * nv, 1e-12), "state %d: ddu/dtau", k);
  API(tl_system_set_state(s, w->q, nq, w->u, nv, ERR));
  API(tl_system_inverse_mass_matrix(s, Fd, nv, ERR));
  record(res, C_MASS, rel_err(C, Fd, nv * nv, 1e-12), "state %d: ddu/dtau vs M^-1", k);

  /* frame placements */
  const double h = 1e-5;
  for (int f = 0; f < tl_model_nframe(m); f++) {
    API(tl_system_set_state(s, w->q, nq, w->u, nv, ERR));
    double *Jp = w->G, *Jr = w->H, R0[9], p0[3];
    API(tl_system_frame_placement_derivatives(s, f, Jp, Jr, nv, ERR));
    API(tl_system_frame_pose(s, f, p0, R0, ERR));
    double *Fp = A, *Fr = B; /* 3 x nv */
    for (int j = 0; j < nv; j++) {
      double pp[2][3], RR[2][9];
      for (int sg = 0; sg < 2; sg++) {
        memset(w->t2, 0, (size_t)nv * sizeof(double));
        w->t2[j] = sg ? -h : h;
        API(tl_model_integrate(m, w->q, nq, w->t2, nv, w->q1, ERR));
        API(tl_system_set_state(s, w->q1, nq, w->u, nv, ERR));
        API(tl_system_frame_pose(s, f, pp[sg], RR[sg], ERR));
      }
      /* dR R^T = [w]x: skew part of (R+ - R-) R0^T / 2h */
      double D[9];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
          double t = 0;
          for (int c = 0; c < 3; c++) t += (RR[0][3 * a + c] - RR[1][3 * a + c]) * R0[3 * b + c];
          D[3 * a + b] = t / (2 * h);
        }
      Fr[0 * nv + j] = 0.5 * (D[7] - D[5]);
      Fr[1 * nv + j] = 0.5 * (D[2] - D[6]);
      Fr[2 * nv + j] = 0.5 * (D[3] - D[1]);
      for (int a = 0; a < 3; a++) Fp[a * nv + j] = (pp[0][a] - pp[1][a]) / (2 * h);
    }
    record(res, C_FRAME, rel_err(Jp, Fp, 3 * nv, 1.0), "state %d: frame %d (%s) dp/dq", k, f,
           tl_model_frame_name(m, f));
    record(res, C_FRAME, rel_err(Jr, Fr, 3 * nv, 1.0), "state %d: frame %d (%s) dR/dq", k, f,
           tl_model_frame_name(m, f));
  }
  API(tl_system_set_state(s, w->q, nq, w->u, nv, ERR));
}

/* ------------------------------------------------------------------ speed */

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: robust on a loaded machine */
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Best-of-5 mean time (µs) of n calls of the body. */
#define TIME_IT(out, n, body)                                 \
  do {                                                        \
    double best_ = INFINITY;                                  \
    for (int rep_ = 0; rep_ < 5; rep_++) {                    \
      double t0_ = now_us();                                  \
      for (int it_ = 0; it_ < (n); it_++) { body; }           \
      double dt_ = (now_us() - t0_) / (n);                    \
      if (dt_ < best_) best_ = dt_;                           \
    }                                                         \
    (out) = best_;                                            \
  } while (0)

static void speed(tl_system *s, const tl_model *m, const char *label, work *w) {
  const int nq = w->nq, nv = w->nv;
  tl_sysdata *d = &s->d;
  const double *g = s->world->opt.gravity;
  rng r = {fnv1a(label) ^ 0xabcdefull};
  random_q(m, &r, w->q);
  for (int i = 0; i < nv; i++) w->u[i] = rng_normal(&r), w->tau[i] = rng_normal(&r), w->du[i] = rng_normal(&r);
  tl_system_set_state(s, w->q, nq, w->u, nv, NULL);
  int n = nv > 30 ? 2000 : 5000;
  double t_rnea, t_aba, t_rd, t_ad, t_fd;
  /* every call at a "new" state: the kinematics pass is part of each */
  TIME_IT(t_rnea, n, tl_dyn_kinematics(d); tl_dyn_rnea(d, g, w->du, 1, w->t1));
  TIME_IT(t_aba, n, tl_dyn_kinematics(d); tl_dyn_aba(d, g, w->tau, w->t1));
  TIME_IT(t_rd, n, s->kin_valid = 0; s->dyn_valid = 0;
          tl_system_inverse_dynamics_derivatives(s, w->du, w->A, w->B, nv, NULL));
  TIME_IT(t_ad, n, s->kin_valid = 0; s->dyn_valid = 0;
          tl_system_forward_dynamics_derivatives(s, w->tau, w->A, w->B, w->C, nv, NULL));
  /* Talus's own centred finite differences of ABA in q (tangent), u and tau */
  double *q0 = w->q1, *u0 = w->t4, *p = w->t2, *mn = w->t3;
  memcpy(q0, d->q, (size_t)nq * sizeof(double));
  memcpy(u0, d->u, (size_t)nv * sizeof(double));
  const double h = 1e-6;
  TIME_IT(t_fd, n / 10 + 1, {
    for (int j = 0; j < nv; j++) {
      for (int sg = 0; sg < 2; sg++) {
        memcpy(d->q, q0, (size_t)nq * sizeof(double));
        memset(p, 0, (size_t)nv * sizeof(double));
        p[j] = sg ? -h : h;
        tl_dyn_integrate_q(m, d->q, p, 1.0);
        tl_dyn_kinematics(d);
        tl_dyn_aba(d, g, w->tau, sg ? mn : w->t1);
      }
      for (int i = 0; i < nv; i++) w->A[i * nv + j] = (w->t1[i] - mn[i]) / (2 * h);
    }
    memcpy(d->q, q0, (size_t)nq * sizeof(double));
    for (int j = 0; j < nv; j++) {
      for (int sg = 0; sg < 2; sg++) {
        d->u[j] = u0[j] + (sg ? -h : h);
        tl_dyn_kinematics(d);
        tl_dyn_aba(d, g, w->tau, sg ? mn : w->t1);
      }
      d->u[j] = u0[j];
      for (int i = 0; i < nv; i++) w->B[i * nv + j] = (w->t1[i] - mn[i]) / (2 * h);
    }
    tl_dyn_kinematics(d);
    for (int j = 0; j < nv; j++) {
      for (int sg = 0; sg < 2; sg++) {
        w->tau[j] += sg ? -2 * h : h;
        tl_dyn_aba(d, g, w->tau, sg ? mn : w->t1);
      }
      w->tau[j] += h;
      for (int i = 0; i < nv; i++) w->C[i * nv + j] = (w->t1[i] - mn[i]) / (2 * h);
    }
  });
  s->kin_valid = 0;
  s->dyn_valid = 0;
  printf("speed %-28s nv %2d  rnea %7.2f us  aba %7.2f us  rnea_derivatives %7.2f us (%.2fx rnea)  "
         "aba_derivatives %7.2f us (%.2fx aba)  fd_aba %8.2f us (analytic %.1fx faster)\n",
         label, nv, t_rnea, t_aba, t_rd, t_rd / t_rnea, t_ad, t_ad / t_aba, t_fd, t_fd / t_ad);
  fflush(stdout);
}

/* ------------------------------------------------------------------ one model */

static tl_base_type base_for(const char *label) {
  const char *fixed[] = {"panda/", "ur5/", "kuka_iiwa/", "double_pendulum/", "cartpole/"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (strncmp(label, fixed[i], strlen(fixed[i])) == 0) return TL_BASE_FIXED;
  return TL_BASE_AUTO;
}

static int is_speed_robot(const char *label) {
  return strcmp(label, "anymal_c/urdf/anymal.urdf") == 0 || strcmp(label, "talos/robots/talos_full_v2.urdf") == 0 ||
         strcmp(label, "kuka_iiwa/model.urdf") == 0;
}

static void run_model(tl_model *m, const char *label, int timing) {
  tl_world *world = NULL;
  tl_system *s = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_world_create(&world, &err) == TL_OK && tl_world_add_system(world, m, &s, &err) == TL_OK,
                "%s: world/system creation failed: %s", label, err.message)) {
    tl_world_free(world);
    return;
  }
  work w;
  work_alloc(&w, tl_model_nq(m), tl_model_nv(m));
  result res;
  memset(&res, 0, sizeof res);
  for (int k = 0; k < NSTATE && !res.api_fail; k++) {
    rng r = {fnv1a(label) ^ (0x9e37ull * (uint64_t)(k + 1))};
    check_config(m, label, k, &w, &r, &res);
    if (!res.api_fail) check_dynamics(s, m, label, k, &w, &r, &res);
  }
  printf("%-40s nv %2d", label, w.nv);
  for (int c = 0; c < NCAT; c++) printf("  %s %.1e", cat_name[c], res.e[c]);
  printf("  lanes %d = %d", res.lanes_compared, TL_LANES);
  printf("\n");
  if (!res.api_fail)
    for (int c = 0; c < NCAT; c++)
      TL_CHECK(res.e[c] <= cat_tol[c], "%s: %s: worst relative error %.3g > %.0e (%s)", label, cat_name[c], res.e[c],
               cat_tol[c], res.where[c]);
  if (timing && !res.api_fail) speed(s, m, label, &w);
  fflush(stdout);
  work_free(&w);
  tl_world_free(world);
}

static void run_path(const char *path, const char *label, int shared) {
  tl_load_options opt = tl_load_options_default();
  if (shared) opt.base = base_for(label);
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_model_load_urdf(path, &opt, &m, &err);
  if (st == TL_ERR_UNSUPPORTED) {
    tl_test_skip("%s: %s", label, err.message);
    return;
  }
  if (!TL_CHECK(st == TL_OK && m, "%s: load failed (%s): %s", label, tl_status_name(st), err.message)) return;
  run_model(m, label, shared && is_speed_robot(label));
  tl_model_free(m);
}

/* A tree with every joint type: base (floating or welded) -> spherical ->
 * universal -> revolute, base -> planar -> prismatic, spherical -> continuous;
 * origins, axes and inertias from the seed. */
static void run_generated(int variant) {
  rng r = {0x5eed0000ull + (uint64_t)variant};
  char buf[16384];
  size_t len = 0;
  const char *types[] = {"spherical", "universal", "revolute", "planar", "prismatic", "continuous"};
  const int parent[] = {0, 1, 2, 0, 4, 1};
  len += (size_t)snprintf(buf + len, sizeof buf - len, "<?xml version=\"1.0\"?>\n<robot name=\"gen%d\">\n", variant);
  if (variant % 2)
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "<link name=\"world\"/><joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/>"
                            "<child link=\"l0\"/><origin xyz=\"0.1 -0.2 0.3\" rpy=\"0.3 0.2 0.1\"/></joint>\n");
  for (int i = 0; i < 7; i++) {
    double mass = 0.5 + 2 * rng_uniform(&r), a = 0.01 + 0.05 * rng_uniform(&r), b = 0.01 + 0.05 * rng_uniform(&r),
           c = 0.01 + 0.05 * rng_uniform(&r);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "<link name=\"l%d\"><inertial><origin xyz=\"%.6f %.6f %.6f\" rpy=\"%.6f %.6f %.6f\"/>"
                            "<mass value=\"%.6f\"/><inertia ixx=\"%.6f\" ixy=\"0\" ixz=\"0\" iyy=\"%.6f\" iyz=\"0\" "
                            "izz=\"%.6f\"/></inertial></link>\n",
                            i, 0.2 * rng_normal(&r), 0.2 * rng_normal(&r), 0.2 * rng_normal(&r), rng_normal(&r),
                            rng_normal(&r), rng_normal(&r), mass, b + c, a + c, a + b);
  }
  for (int i = 1; i < 7; i++) {
    double ax[3], ax2[3];
    for (int k = 0; k < 3; k++) ax[k] = rng_normal(&r), ax2[k] = rng_normal(&r);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "<joint name=\"j%d\" type=\"%s\"><parent link=\"l%d\"/><child link=\"l%d\"/>"
                            "<origin xyz=\"%.6f %.6f %.6f\" rpy=\"%.6f %.6f %.6f\"/><axis xyz=\"%.6f %.6f %.6f\"/>"
                            "<axis2 xyz=\"%.6f %.6f %.6f\"/>"
                            "<limit lower=\"-2\" upper=\"2\" effort=\"100\" velocity=\"10\"/>"
                            "<dynamics damping=\"0.3\" rotor_inertia=\"0.02\"/></joint>\n",
                            i, types[i - 1], parent[i - 1], i, 0.3 * rng_normal(&r), 0.3 * rng_normal(&r),
                            0.3 * rng_normal(&r), rng_normal(&r), rng_normal(&r), rng_normal(&r), ax[0], ax[1], ax[2],
                            ax2[0], ax2[1], ax2[2]);
  }
  len += (size_t)snprintf(buf + len, sizeof buf - len, "</robot>\n");
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  char label[64];
  snprintf(label, sizeof label, "generated_%s_%d", variant % 2 ? "fixed" : "floating", variant);
  if (!TL_CHECK(tl_model_load_urdf_string(buf, len, label, NULL, &m, &err) == TL_OK, "%s: %s", label, err.message))
    return;
  run_model(m, label, 0);
  tl_model_free(m);
}

/* ------------------------------------------------------------------ bad input */

static void check_errors(const char *robots) {
  char path[4608];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_model *m = NULL;
  tl_world *wd = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, NULL) == TL_OK && tl_world_create(&wd, NULL) == TL_OK &&
                    tl_world_add_system(wd, m, &s, NULL) == TL_OK,
                "load %s", path)) {
    tl_world_free(wd);
    tl_model_free(m);
    return;
  }
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *q = calloc((size_t)nq, sizeof(double)), *v = calloc((size_t)nv, sizeof(double));
  double *A = calloc((size_t)nv * nv, sizeof(double)), *B = calloc((size_t)nv * nv, sizeof(double));
  double *C = calloc((size_t)nv * nv, sizeof(double));
  tl_model_default_q(m, q, nq, NULL);
  tl_error e;
  /* no allocation in any of the calls */
  for (int i = 0; i < nv; i++) v[i] = 0.1 * i;
  tl_system_set_state(s, q, nq, v, nv, NULL);
  double *q2 = calloc((size_t)nq, sizeof(double));
  nalloc = 0;
  counting = 1;
  int ok = tl_system_inverse_dynamics_derivatives(s, v, A, B, nv, &e) == TL_OK &&
           tl_system_forward_dynamics_derivatives(s, v, A, B, C, nv, &e) == TL_OK &&
           tl_system_frame_placement_derivatives(s, tl_model_nframe(m) - 1, A, B, nv, &e) == TL_OK &&
           tl_model_integrate(m, q, nq, v, nv, q2, &e) == TL_OK && tl_model_difference(m, q, q2, nq, v, nv, &e) == TL_OK &&
           tl_model_integrate_jacobians(m, q, v, nq, A, B, nv, &e) == TL_OK &&
           tl_model_difference_jacobians(m, q, q2, nq, A, B, nv, &e) == TL_OK;
  counting = 0;
  TL_CHECK(ok && nalloc == 0, "derivative calls: ok %d, %d allocations (expected 0)", ok, nalloc);
  free(q2);
  memset(v, 0, (size_t)nv * sizeof(double));
  TL_CHECK(tl_model_integrate(m, q, nq - 1, v, nv, q, &e) == TL_ERR_ARGUMENT && strstr(e.message, "nq"),
           "integrate refuses a short q: %s", e.message);
  v[2] = NAN;
  TL_CHECK(tl_model_integrate(m, q, nq, v, nv, q, &e) == TL_ERR_ARGUMENT && strstr(e.message, "v[2]"),
           "integrate refuses NaN in v: %s", e.message);
  v[2] = 0;
  double q3 = q[3];
  q[3] = q[4] = q[5] = q[6] = 0;
  TL_CHECK(tl_model_difference(m, q, q, nq, v, nv, &e) == TL_ERR_ARGUMENT && strstr(e.message, "quaternion"),
           "difference refuses a zero quaternion: %s", e.message);
  q[3] = q3;
  TL_CHECK(tl_system_inverse_dynamics_derivatives(s, v, A, B, nv + 1, &e) == TL_ERR_ARGUMENT,
           "inverse_dynamics_derivatives refuses nv + 1: %s", e.message);
  TL_CHECK(tl_system_inverse_dynamics_derivatives(s, v, NULL, B, nv, &e) == TL_ERR_ARGUMENT &&
               strstr(e.message, "dtau_dq"),
           "inverse_dynamics_derivatives refuses NULL dtau_dq: %s", e.message);
  v[0] = INFINITY;
  TL_CHECK(tl_system_forward_dynamics_derivatives(s, v, A, B, C, nv, &e) == TL_ERR_ARGUMENT &&
               strstr(e.message, "tau[0]"),
           "forward_dynamics_derivatives refuses Inf in tau: %s", e.message);
  free(q), free(v), free(A), free(B), free(C);
  tl_world_free(wd);
  tl_model_free(m);
}

/* ------------------------------------------------------------------ no side effects */

/* The derivative queries leave the simulation alone: the quadruped standing
 * on the ground under PD, stepped 200 times with every derivative call made
 * between tl_world_integrate1 and tl_world_integrate2, ends bit for bit where
 * the same run without them ends. */
static void run_steps(const char *path, int query, double *q_out, double *u_out) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error e;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &e) == TL_OK && tl_world_create(&w, &e) == TL_OK &&
                    tl_world_add_ground(w, 0.0, 0.8, &e) == TL_OK && tl_world_add_system(w, m, &s, &e) == TL_OK,
                "side effects: setup: %s", e.message)) {
    tl_world_free(w);
    tl_model_free(m);
    return;
  }
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  double *kp = calloc((size_t)nv, sizeof(double)), *kd = calloc((size_t)nv, sizeof(double));
  double *A = calloc((size_t)nv * nv, sizeof(double)), *B = calloc((size_t)nv * nv, sizeof(double));
  double *C = calloc((size_t)nv * nv, sizeof(double)), *v = calloc((size_t)nv, sizeof(double));
  tl_model_default_q(m, q, nq, NULL);
  q[2] = 0.55;
  for (int i = 6; i < nv; i++) kp[i] = 200, kd[i] = 5;
  tl_system_set_state(s, q, nq, u, nv, NULL);
  tl_system_set_pd_gains(s, kp, kd, nv, NULL);
  tl_system_set_pd_targets(s, q, nq, NULL, 0, NULL);
  int ok = 1;
  for (int t = 0; t < 200 && ok; t++) {
    ok = tl_world_integrate1(w, &e) == TL_OK;
    if (ok && query) {
      for (int i = 0; i < nv; i++) v[i] = 0.1 * (i % 5) - 0.2;
      ok = tl_system_inverse_dynamics_derivatives(s, v, A, B, nv, &e) == TL_OK &&
           tl_system_forward_dynamics_derivatives(s, v, A, B, C, nv, &e) == TL_OK &&
           tl_system_frame_placement_derivatives(s, tl_model_nframe(m) - 1, A, B, nv, &e) == TL_OK;
    }
    ok = ok && tl_world_integrate2(w, &e) == TL_OK;
  }
  TL_CHECK(ok, "side effects: stepping failed: %s", e.message);
  tl_system_get_state(s, q_out, nq, u_out, nv, NULL);
  free(q), free(u), free(kp), free(kd), free(A), free(B), free(C), free(v);
  tl_world_free(w);
  tl_model_free(m);
}

static void check_side_effects(const char *robots) {
  char path[4608];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  double q0[64] = {0}, u0[64] = {0}, q1[64] = {0}, u1[64] = {0};
  run_steps(path, 0, q0, u0);
  run_steps(path, 1, q1, u1);
  TL_CHECK(memcmp(q0, q1, sizeof q0) == 0 && memcmp(u0, u1, sizeof u0) == 0,
           "derivative queries between integrate1 and integrate2 changed the simulation");
  TL_CHECK(q0[2] > 0.2, "side effects: the quadruped stands (base height %.3f m)", q0[2]);
}

/* ------------------------------------------------------------------ discovery */

typedef struct strlist {
  char **v;
  size_t n, cap;
} strlist;
static void strlist_push(strlist *l, const char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (!l->v) exit(2);
  }
  size_t len = strlen(s) + 1;
  l->v[l->n] = malloc(len);
  if (!l->v[l->n]) exit(2);
  memcpy(l->v[l->n++], s, len);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static void find_urdfs(const char *dir, strlist *out, int depth) {
  DIR *d = opendir(dir);
  if (!d || depth > 8) {
    if (d) closedir(d);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    size_t len = strlen(e->d_name);
    if (S_ISDIR(sb.st_mode))
      find_urdfs(path, out, depth + 1);
    else if (S_ISREG(sb.st_mode) && len > 5 && strcmp(e->d_name + len - 5, ".urdf") == 0)
      strlist_push(out, path);
  }
  closedir(d);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ROBOTS_DIR [SHARED_ROBOTS_DIR]\n", argv[0]);
    return 2;
  }
  const char *robots = argv[1];
  char shared[4096] = "";
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0])
    snprintf(shared, sizeof shared, "%s/robots", env);
  else if (argc >= 3)
    snprintf(shared, sizeof shared, "%s", argv[2]);
  printf("worst relative errors over %d random states per model (tolerances: roundtrip %.0e, config_jac %.0e, "
         "derivatives %.0e, mass %.0e, frame %.0e)\n",
         NSTATE, TOL_RT, TOL_CJ, TOL_DER, TOL_MASS, TOL_FRAME);
  check_errors(robots);
  check_side_effects(robots);
  for (int v = 0; v < 6; v++) run_generated(v);
  const char *own[] = {"talus_quadruped/talus_quadruped.urdf", "talus_small_quadruped/talus_small_quadruped.urdf",
                       "pendulum/pendulum.urdf", "double_pendulum/double_pendulum.urdf", "ball/ball.urdf"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    char path[4608];
    snprintf(path, sizeof path, "%s/%s", robots, own[i]);
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    run_path(path, own[i], 0);
  }
  int absent = 0;
  DIR *d = shared[0] ? opendir(shared) : NULL;
  if (!d) {
    absent = 1;
    printf("SKIPPED: shared robot folder not found at '%s': the shared URDF corpus (and the speed figures) "
           "were not tested\n",
           shared[0] ? shared : "(not given)");
  } else {
    closedir(d);
    strlist l = {0};
    find_urdfs(shared, &l, 0);
    qsort(l.v, l.n, sizeof *l.v, cmp_str);
    if (l.n == 0) absent = 1, printf("SKIPPED: no .urdf files under %s\n", shared);
    for (size_t i = 0; i < l.n; i++) {
      run_path(l.v[i], l.v[i] + strlen(shared) + 1, 1);
      free(l.v[i]);
    }
    free(l.v);
  }
  printf("worst over all models:");
  for (int c = 0; c < NCAT; c++) printf(" %s %.1e", cat_name[c], worst_all[c]);
  printf("\n");
  int rc = tl_test_finish();
  return rc ? rc : absent ? TL_TEST_SKIP_CODE : 0;
}
