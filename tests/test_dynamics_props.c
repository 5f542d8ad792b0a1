/* Guards: src/dynamics/crba.c, src/dynamics/rnea.c, src/dynamics/kinematics.c (M, h, g, J),
 * src/world/system.c (energies, momentum, Jacobians). */
/* Talus dynamics: structural properties that every correct M, h, g and J
 * must have, checked on the project robots and on every URDF of the shared
 * corpus, at 3 seeded random states per robot.
 *
 * Properties (u ~ N(0,1), random joint angles within limits, random unit
 * base / ball quaternions):
 *   sym    M symmetric: |M_ij - M_ji| <= 1e-12 sqrt(M_ii M_jj)
 *   pd     M positive definite: a Cholesky factorisation (written here) succeeds
 *   hess   M is the Hessian of KE(u) = 1/2 u^T M u: the second difference
 *          KE(u + e_i + e_j) - KE(u + e_i) - KE(u + e_j) + KE(u) (exact for a
 *          quadratic, step 1) equals M_ij to 1e-6 sqrt(M_ii M_jj), with KE from
 *          tl_system_kinetic_energy after tl_system_set_state
 *   quad   h(q, u) - g(q) is quadratic in u: h(q, 2u) - g = 4 (h(q, u) - g),
 *          1e-9 relative
 *   grad   g = h(q, 0) is the gradient of the potential energy along each
 *          generalized velocity direction: g_i = dPE(q (+) eps e_i)/d eps by
 *          central differences on the configuration manifold (floating
 *          bases and ball joints included), 1e-6 relative
 *   power  u^T (h(q,u) - g) = 1/2 u^T (dM/dt) u (energy balance: the Coriolis
 *          term does no work; dM/dt by central differences of M along
 *          q (+) t u), 1e-6 relative. This ties RNEA's velocity terms to CRBA.
 *   mom    floating base: the linear-velocity rows of M u are the system's
 *          linear momentum, m_total d(com)/dt (com from tl_system_com, by
 *          central differences along q (+) t u), 1e-6 relative
 *   jac    J u equals the finite-difference velocity of a body-fixed point
 *          of every body, Jr u the finite-difference angular velocity of
 *          every body ((R+ - R-) R^T / 2t), 1e-6 relative
 * The step q (+) t u is written here independently of the engine: revolute,
 * prismatic and universal coordinates += t u; floating base position += t v
 * and quaternion <- exp(t w) quat (w in the world frame); ball joints
 * quaternion <- exp(t w) quat (w in the parent joint frame, DESIGN.md).
 *
 * Usage: test_dynamics_props ROBOTS_DIR [SHARED_ROBOTS_DIR]
 *   ($TALUS_SHARED/robots overrides SHARED_ROBOTS_DIR). A missing shared
 *   folder is reported as SKIPPED and counted as a skip. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "talus/talus.h"
#include "test_util.h"

#define NSTATE 3
#define TOL_SYM 1e-12
#define TOL_HESS 1e-6
#define TOL_QUAD 1e-9
#define TOL_GRAD 1e-6
#define TOL_POWER 1e-6
#define TOL_MOM 1e-6
#define TOL_JAC 1e-6
#define FD_EPS 1e-5 /* central-difference step (s, or rad/m per unit u) */

enum { P_SYM, P_PD, P_HESS, P_QUAD, P_GRAD, P_POWER, P_MOM, P_JAC, NPROP };
static const char *const prop_name[NPROP] = {"sym", "pd", "hess", "quad",
                                             "grad", "power", "mom", "jac"};
static const double prop_tol[NPROP] = {TOL_SYM, 0, TOL_HESS, TOL_QUAD,
                                       TOL_GRAD, TOL_POWER, TOL_MOM, TOL_JAC};

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
static double rng_normal(rng *r) { /* Box-Muller */
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

/* ------------------------------------------------- configuration manifold */

static void quat_mul(double r[4], const double a[4], const double b[4]) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w;
  r[1] = x;
  r[2] = y;
  r[3] = z;
}
/* Unit quaternion of the rotation vector v. */
static void quat_exp(double q[4], const double v[3]) {
  double th = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  double k = th > 1e-6 ? sin(0.5 * th) / th : 0.5 - th * th / 48.0;
  q[0] = cos(0.5 * th);
  q[1] = k * v[0];
  q[2] = k * v[1];
  q[3] = k * v[2];
}
/* Left-multiply quaternion qb (in place) by exp(v). */
static void quat_left_exp(double qb[4], const double v[3]) {
  double e[4], r[4];
  quat_exp(e, v);
  quat_mul(r, e, qb);
  memcpy(qb, r, sizeof r);
}

/* qout = q (+) t u, for every joint type. */
static void integrate(const tl_model *m, const double *q, const double *u, double t, double *qout) {
  memcpy(qout, q, (size_t)tl_model_nq(m) * sizeof(double));
  for (int b = 0; b < tl_model_nbody(m); b++) {
    tl_joint_type ty = tl_model_joint_type(m, b);
    int qi = tl_model_joint_q_index(m, b), ui = tl_model_joint_u_index(m, b);
    double v[3];
    switch (ty) {
      case TL_JOINT_FLOATING:
        for (int k = 0; k < 3; k++) qout[qi + k] += t * u[ui + k];
        for (int k = 0; k < 3; k++) v[k] = t * u[ui + 3 + k];
        quat_left_exp(qout + qi + 3, v);
        break;
      case TL_JOINT_SPHERICAL:
        for (int k = 0; k < 3; k++) v[k] = t * u[ui + k];
        quat_left_exp(qout + qi, v);
        break;
      case TL_JOINT_FIXED:
        break;
      default:
        for (int k = 0; k < tl_joint_nv(ty); k++) qout[qi + k] += t * u[ui + k];
        break;
    }
  }
}

/* A random state: joint coordinates uniform within limits (or [-1, 1] when
 * unlimited), unit quaternions uniform on SO(3), base position in [-1, 1]^3,
 * u ~ N(0, 1). */
static void random_state(const tl_model *m, rng *r, double *q, double *u) {
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  tl_model_reference_q(m, q, nq, NULL);
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
        if (!isfinite(lo) || !isfinite(hi) || !(hi > lo)) {
          lo = -1;
          hi = 1;
        }
        q[qi + k] = lo + (hi - lo) * rng_uniform(r);
      }
    }
  }
  for (int i = 0; i < nv; i++) u[i] = rng_normal(r);
}

/* ------------------------------------------------------------- one robot */

typedef struct result {
  double e[NPROP];  /* worst error / tolerance-normalised measure per property */
  char where[NPROP][160];
  int api_fail;
} result;

static void record(result *res, int p, double e, const char *fmt, ...) TL_TEST_PRINTF_(4, 5);
static void record(result *res, int p, double e, const char *fmt, ...) {
  if (isnan(e)) e = INFINITY;
  if (!(e > res->e[p]) && !(e == INFINITY && !res->where[p][0])) return;
  res->e[p] = e;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->where[p], sizeof res->where[p], fmt, ap);
  va_end(ap);
}

typedef struct work {
  int nq, nv;
  double *q, *u, *u2, *zero, *qa, *qb, *M, *Ma, *Mb, *L, *h, *h2, *g, *Mu;
  double *Jp, *Jr;
} work;

static int work_alloc(work *w, int nq, int nv) {
  memset(w, 0, sizeof *w);
  w->nq = nq;
  w->nv = nv;
  size_t q = (size_t)(nq > 0 ? nq : 1), v = (size_t)(nv > 0 ? nv : 1);
  double **vecs[] = {&w->u, &w->u2, &w->zero, &w->h, &w->h2, &w->g, &w->Mu};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
    if (!(*vecs[i] = calloc(v, sizeof(double)))) return 0;
  double **qs[] = {&w->q, &w->qa, &w->qb};
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
    if (!(*qs[i] = calloc(q, sizeof(double)))) return 0;
  double **mats[] = {&w->M, &w->Ma, &w->Mb, &w->L};
  for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
    if (!(*mats[i] = calloc(v * v, sizeof(double)))) return 0;
  if (!(w->Jp = calloc(3 * v, sizeof(double))) || !(w->Jr = calloc(3 * v, sizeof(double)))) return 0;
  return 1;
}
static void work_free(work *w) {
  double *all[] = {w->q,  w->u,  w->u2, w->zero, w->qa, w->qb, w->M, w->Ma, w->Mb,
                   w->L,  w->h,  w->h2, w->g,    w->Mu, w->Jp, w->Jr};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

static int set(tl_system *s, const double *q, const double *u, const work *w, result *res) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_system_set_state(s, q, w->nq, u, w->nv, &err) != TL_OK) {
    TL_CHECK(0, "tl_system_set_state failed: %s", err.message);
    res->api_fail = 1;
    return 0;
  }
  return 1;
}
static double ke_at(tl_system *s, const double *q, const double *u, const work *w, result *res) {
  return set(s, q, u, w, res) ? tl_system_kinetic_energy(s) : NAN;
}
static double pe_at(tl_system *s, const double *q, const work *w, result *res) {
  return set(s, q, w->zero, w, res) ? tl_system_potential_energy(s) : NAN;
}
static int mass_at(tl_system *s, const double *q, double *M, const work *w, result *res) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!set(s, q, w->zero, w, res)) return 0;
  if (tl_system_mass_matrix(s, M, w->nv, &err) != TL_OK) {
    TL_CHECK(0, "tl_system_mass_matrix failed: %s", err.message);
    res->api_fail = 1;
    return 0;
  }
  return 1;
}
static int h_at(tl_system *s, const double *q, const double *u, double *h, const work *w,
                result *res) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!set(s, q, u, w, res)) return 0;
  if (tl_system_nonlinear_term(s, h, w->nv, &err) != TL_OK) {
    TL_CHECK(0, "tl_system_nonlinear_term failed: %s", err.message);
    res->api_fail = 1;
    return 0;
  }
  return 1;
}

/* Cholesky of a copy of M; returns the smallest pivot ratio L_ii^2 / M_ii
 * (<= 0 or NaN: not positive definite). */
static double cholesky_min_pivot(const double *M, double *L, int n) {
  memcpy(L, M, (size_t)n * (size_t)n * sizeof(double));
  double minratio = INFINITY;
  for (int j = 0; j < n; j++) {
    double d = L[j * n + j];
    for (int k = 0; k < j; k++) d -= L[j * n + k] * L[j * n + k];
    double ratio = d / M[j * n + j];
    if (ratio < minratio) minratio = ratio;
    if (!(d > 0)) return d;
    double ljj = sqrt(d);
    L[j * n + j] = ljj;
    for (int i = j + 1; i < n; i++) {
      double s = L[i * n + j];
      for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / ljj;
    }
  }
  return minratio;
}

static double vmaxabs(const double *a, int n) {
  double m = 0;
  for (int i = 0; i < n; i++)
    if (!(fabs(a[i]) <= m)) m = fabs(a[i]);
  return m;
}

static void check_state(tl_system *s, const tl_model *m, int k, work *w, result *res) {
  int nv = w->nv;
  double *q = w->q, *u = w->u;

  /* M: symmetric, positive definite. */
  if (!mass_at(s, q, w->M, w, res)) return;
  double *M = w->M;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < i; j++) {
      double sc = sqrt(fabs(M[i * nv + i] * M[j * nv + j]));
      record(res, P_SYM, fabs(M[i * nv + j] - M[j * nv + i]) / sc, "state %d: M[%d][%d]", k, i, j);
    }
  double piv = cholesky_min_pivot(M, w->L, nv);
  /* Stored as 1 / pivot ratio so that "bigger is worse" like the others. */
  record(res, P_PD, piv > 0 ? 1.0 / piv : INFINITY, "state %d: smallest Cholesky pivot / M_jj %.3g", k,
         piv);

  /* M == Hessian of KE(u). KE is exactly quadratic, so the second
   * difference is exact for any step; step_i = 1 / sqrt(M_ii) makes every
   * perturbation add O(1) J and keeps rounding at eps * KE on every entry. */
  double ke0 = ke_at(s, q, u, w, res);
  double *kei = w->h2, *step = w->Mu; /* KE(u + step_i e_i), step_i */
  for (int i = 0; i < nv; i++) {
    step[i] = M[i * nv + i] > 0 ? 1.0 / sqrt(M[i * nv + i]) : 1.0;
    memcpy(w->u2, u, (size_t)nv * sizeof(double));
    w->u2[i] += step[i];
    kei[i] = ke_at(s, q, w->u2, w, res);
  }
  for (int i = 0; i < nv; i++)
    for (int j = i; j < nv; j++) {
      memcpy(w->u2, u, (size_t)nv * sizeof(double));
      w->u2[i] += step[i];
      w->u2[j] += step[j];
      /* i == j: (KE(u + 2 s e_i) - 2 KE(u + s e_i) + KE(u)) / s^2 = M_ii as well */
      double fd = (ke_at(s, q, w->u2, w, res) - kei[i] - kei[j] + ke0) / (step[i] * step[j]);
      double sc = sqrt(fabs(M[i * nv + i] * M[j * nv + j]));
      record(res, P_HESS, fabs(fd - M[i * nv + j]) / sc, "state %d: M[%d][%d] = %.10g, d2KE %.10g",
             k, i, j, M[i * nv + j], fd);
    }
  if (res->api_fail) return;

  /* g = h(q, 0); h(q, u) - g quadratic in u. */
  if (!h_at(s, q, w->zero, w->g, w, res) || !h_at(s, q, u, w->h, w, res)) return;
  for (int i = 0; i < nv; i++) w->u2[i] = 2 * u[i];
  if (!h_at(s, q, w->u2, w->h2, w, res)) return;
  {
    double emax = 0, scale = fmax(vmaxabs(w->g, nv), 1.0);
    for (int i = 0; i < nv; i++) {
      double c1 = w->h[i] - w->g[i], c2 = w->h2[i] - w->g[i];
      emax = fmax(emax, fabs(c2 - 4 * c1));
      scale = fmax(scale, fabs(c2));
    }
    record(res, P_QUAD, emax / scale, "state %d: max |h(2u) - g - 4 (h(u) - g)| %.3g", k, emax);
  }

  /* g == gradient of PE along every velocity direction. */
  {
    double gscale = fmax(vmaxabs(w->g, nv), 1.0);
    for (int i = 0; i < nv; i++) {
      memset(w->u2, 0, (size_t)nv * sizeof(double));
      w->u2[i] = 1.0;
      integrate(m, q, w->u2, FD_EPS, w->qa);
      integrate(m, q, w->u2, -FD_EPS, w->qb);
      double dpe = (pe_at(s, w->qa, w, res) - pe_at(s, w->qb, w, res)) / (2 * FD_EPS);
      record(res, P_GRAD, fabs(dpe - w->g[i]) / gscale, "state %d: DOF %d: g %.10g, dPE %.10g", k,
             i, w->g[i], dpe);
    }
  }

  /* Energy balance: u^T (h - g) == 1/2 u^T dM/dt u. */
  integrate(m, q, u, FD_EPS, w->qa);
  integrate(m, q, u, -FD_EPS, w->qb);
  if (!mass_at(s, w->qa, w->Ma, w, res) || !mass_at(s, w->qb, w->Mb, w, res)) return;
  {
    double uc = 0, umu = 0, sc = 0;
    for (int i = 0; i < nv; i++) {
      uc += u[i] * (w->h[i] - w->g[i]);
      sc += fabs(u[i] * (w->h[i] - w->g[i]));
      for (int j = 0; j < nv; j++) {
        double md = (w->Ma[i * nv + j] - w->Mb[i * nv + j]) / (2 * FD_EPS);
        umu += u[i] * md * u[j];
        /* scale: the size of the terms, incl. |u_i M_ij u_j| (1/s per unit u),
         * below which the central difference of M is only rounding noise */
        sc += 0.5 * fabs(u[i] * md * u[j]) + fabs(u[i] * M[i * nv + j] * u[j]);
      }
    }
    umu *= 0.5;
    record(res, P_POWER, fabs(uc - umu) / fmax(sc, 1e-300),
           "state %d: u.(h-g) %.10g, 1/2 u.dM/dt.u %.10g", k, uc, umu);
  }

  /* Floating base: linear momentum. */
  if (tl_model_joint_type(m, 0) == TL_JOINT_FLOATING) {
    double ca[3], cb[3], mt = tl_model_total_mass(m);
    tl_error err;
    memset(&err, 0, sizeof err);
    int ok = set(s, w->qa, w->zero, w, res) && tl_system_com(s, ca, &err) == TL_OK;
    ok = ok && set(s, w->qb, w->zero, w, res) && tl_system_com(s, cb, &err) == TL_OK;
    if (!TL_CHECK(ok, "tl_system_com failed: %s", err.message)) return;
    double emax = 0, pmax = 0;
    for (int r = 0; r < 3; r++) {
      double mu = 0;
      for (int j = 0; j < nv; j++) mu += M[r * nv + j] * u[j];
      double p = mt * (ca[r] - cb[r]) / (2 * FD_EPS);
      emax = fmax(emax, fabs(mu - p));
      pmax = fmax(pmax, fabs(p));
    }
    record(res, P_MOM, emax / fmax(pmax, mt), "state %d: |(M u)_lin - m dcom/dt| %.3g", k, emax);
  }

  /* Jacobians against the motion of body-fixed points. */
  const double off[3] = {0.07, -0.04, 0.05};
  for (int b = 0; b < tl_model_nbody(m); b++) {
    double pa[3], Ra[9], pb[3], Rb[9], p0[3], R0[9], xa[3], xb[3], x0[3];
    tl_error err;
    memset(&err, 0, sizeof err);
    int ok = set(s, w->qa, w->zero, w, res) && tl_system_body_pose(s, b, pa, Ra, &err) == TL_OK;
    ok = ok && set(s, w->qb, w->zero, w, res) && tl_system_body_pose(s, b, pb, Rb, &err) == TL_OK;
    ok = ok && set(s, q, u, w, res) && tl_system_body_pose(s, b, p0, R0, &err) == TL_OK;
    for (int r = 0; r < 3 && ok; r++) {
      xa[r] = pa[r] + Ra[3 * r] * off[0] + Ra[3 * r + 1] * off[1] + Ra[3 * r + 2] * off[2];
      xb[r] = pb[r] + Rb[3 * r] * off[0] + Rb[3 * r + 1] * off[1] + Rb[3 * r + 2] * off[2];
      x0[r] = p0[r] + R0[3 * r] * off[0] + R0[3 * r + 1] * off[1] + R0[3 * r + 2] * off[2];
    }
    ok = ok && tl_system_point_jacobian(s, b, x0, w->Jp, w->Jr, nv, &err) == TL_OK;
    if (!TL_CHECK(ok, "body %d: pose / Jacobian failed: %s", b, err.message)) {
      res->api_fail = 1;
      return;
    }
    /* angular velocity: [w]x = dR/dt R^T */
    double Rd[9], W[9];
    for (int i = 0; i < 9; i++) Rd[i] = (Ra[i] - Rb[i]) / (2 * FD_EPS);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        W[3 * i + j] = Rd[3 * i] * R0[3 * j] + Rd[3 * i + 1] * R0[3 * j + 1] + Rd[3 * i + 2] * R0[3 * j + 2];
    double wfd[3] = {0.5 * (W[7] - W[5]), 0.5 * (W[2] - W[6]), 0.5 * (W[3] - W[1])};
    double ev = 0, ew = 0, vmax = 0, wmax = 0;
    for (int r = 0; r < 3; r++) {
      double v = 0, om = 0;
      for (int j = 0; j < nv; j++) {
        v += w->Jp[r * nv + j] * u[j];
        om += w->Jr[r * nv + j] * u[j];
      }
      double vfd = (xa[r] - xb[r]) / (2 * FD_EPS);
      ev = fmax(ev, fabs(v - vfd));
      ew = fmax(ew, fabs(om - wfd[r]));
      vmax = fmax(vmax, fabs(vfd));
      wmax = fmax(wmax, fabs(wfd[r]));
    }
    record(res, P_JAC, ev / fmax(vmax, 1.0), "state %d: body %d (%s) Jp u vs dx/dt: %.3g m/s", k, b,
           tl_model_body_name(m, b), ev);
    record(res, P_JAC, ew / fmax(wmax, 1.0), "state %d: body %d (%s) Jr u vs w: %.3g rad/s", k, b,
           tl_model_body_name(m, b), ew);
  }
}

/* The base each shared robot is used with (shared/robots/README.md): the
 * arms, pendulums and the cart-pole are fixed-base; the rest floating. As
 * floating systems some of these have a massless base link (kuka_iiwa,
 * cartpole) and a genuinely singular M. */
static tl_base_type base_for(const char *label) {
  const char *fixed[] = {"panda/", "ur5/", "kuka_iiwa/", "double_pendulum/", "cartpole/"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (strncmp(label, fixed[i], strlen(fixed[i])) == 0) return TL_BASE_FIXED;
  return TL_BASE_AUTO;
}

static void run_robot(const char *path, const char *label, int shared) {
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
  if (!TL_CHECK(st == TL_OK && m, "%s: load failed (%s): %s", label, tl_status_name(st),
                err.message))
    return;
  tl_world *world = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_world_create(&world, &err) == TL_OK &&
                    tl_world_add_system(world, m, &s, &err) == TL_OK,
                "%s: world/system creation failed: %s", label, err.message)) {
    tl_world_free(world);
    tl_model_free(m);
    return;
  }
  work w;
  result res;
  memset(&res, 0, sizeof res);
  if (!work_alloc(&w, tl_model_nq(m), tl_model_nv(m))) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  for (int k = 0; k < NSTATE && !res.api_fail; k++) {
    rng r = {fnv1a(label) ^ (0x1234567ull * (uint64_t)(k + 1))};
    random_state(m, &r, w.q, w.u);
    check_state(s, m, k, &w, &res);
  }
  int floating = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING;
  printf("%-40s %s nv %2d", label, floating ? "floating" : "fixed   ", w.nv);
  for (int p = 0; p < NPROP; p++) {
    if (p == P_MOM && !floating)
      printf("  %s   -    ", prop_name[p]);
    else if (p == P_PD)
      printf("  pivot %.1e", res.e[p] > 0 ? 1.0 / res.e[p] : 0.0);
    else
      printf("  %s %.1e", prop_name[p], res.e[p]);
  }
  printf("\n");
  if (!res.api_fail) {
    for (int p = 0; p < NPROP; p++) {
      if (p == P_MOM && !floating) continue;
      if (p == P_PD)
        TL_CHECK(isfinite(res.e[p]) && res.e[p] > 0, "%s: M not positive definite (%s)", label,
                 res.where[p]);
      else
        TL_CHECK(res.e[p] <= prop_tol[p], "%s: %s: worst relative error %.3g > %.0e (%s)", label,
                 prop_name[p], res.e[p], prop_tol[p], res.where[p]);
    }
  }
  fflush(stdout);
  work_free(&w);
  tl_world_free(world);
  tl_model_free(m);
}

/* ------------------------------------------------------- URDF discovery */

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
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}
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

  printf("worst relative errors over %d random states per robot (tolerances: sym %.0e, hess %.0e, "
         "quad %.0e, grad %.0e, power %.0e, mom %.0e, jac %.0e; pivot = smallest L_jj^2 / M_jj)\n",
         NSTATE, TOL_SYM, TOL_HESS, TOL_QUAD, TOL_GRAD, TOL_POWER, TOL_MOM, TOL_JAC);
  const char *own[] = {"talus_quadruped/talus_quadruped.urdf", "pendulum/pendulum.urdf",
                       "double_pendulum/double_pendulum.urdf", "ball/ball.urdf", "box/box.urdf",
                       "capsule/capsule.urdf", "cylinder/cylinder.urdf"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    char path[4608];
    snprintf(path, sizeof path, "%s/%s", robots, own[i]);
    run_robot(path, own[i], 0);
  }

  DIR *d = shared[0] ? opendir(shared) : NULL;
  if (!d) {
    tl_test_skip("shared robot folder not found at '%s': the shared URDF corpus was not tested",
                 shared[0] ? shared : "(not given)");
  } else {
    closedir(d);
    strlist l = {0};
    find_urdfs(shared, &l, 0);
    qsort(l.v, l.n, sizeof *l.v, cmp_str);
    if (l.n == 0) tl_test_skip("no .urdf files under %s", shared);
    for (size_t i = 0; i < l.n; i++) {
      run_robot(l.v[i], l.v[i] + strlen(shared) + 1, 1);
      free(l.v[i]);
    }
    free(l.v);
  }
  return tl_test_finish();
}
