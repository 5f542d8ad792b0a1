/* Guards: src/world/step_derivatives.c (tl_world_step_derivatives), src/dynamics/derivatives.c,
 * src/world/snapshot.c (the world left bit for bit). */
/* Derivatives of the step (issue 24 §3): tl_world_step_derivatives.
 *
 * - Analytic against centred finite differences (both through the public
 *   call) on contact-free systems at seeded random states with the implicit
 *   PD on (random gains and targets), joint damping and springs where the
 *   model has them: the project humanoid and arm of robots/, and from
 *   ../shared/robots TALOS and the DeepMimic humanoid (ball joints) floating
 *   in the air, the KUKA iiwa and the Panda fixed: relative error (to the
 *   largest entry of A, of B) below 1e-4; the analytic mode must not fall
 *   back on them. Two systems in one world: the stacking of x, analytic
 *   against FD, no cross-system entries.
 * - Contacts, analytic against centred FD: (a) the project quadruped and
 *   ANYmal C standing on four sticking feet with PD, the DeepMimic humanoid
 *   on its box feet; (b) an arm pressing its sphere tip on a static box
 *   table (sticking); (c) the project ball and box sliding on the ground.
 * - The project quadruped standing on four sticking feet with PD: A and B
 *   predict the stepped state to first order: x+(x (+) s dx, tau + s dtau) -
 *   (x+_0 + s (A dx + B dtau)) shrinks like s^2 (a ratio of at least 3 when s
 *   halves) and is far below the first-order change; A's structure (dq+/dq
 *   near 1, dq+/du near dt 1, the base cannot move down into the ground).
 * - The world is left as it was: its snapshot bytes equal before and after
 *   each call, and a 300-step standing run with calls every 7 steps ends bit
 *   for bit like one without.
 * - No allocation in the calls (malloc/calloc/realloc wrapped at link time).
 * - Errors: wrong nv, a stale workspace, a bad mode, a bad eps.
 * - Speed (µs of thread CPU time per call): ANYmal C standing (FD), TALOS in
 *   the air (analytic and FD).
 * The shared corpus part prints SKIPPED and the test exits 77 when
 * ../shared/robots is absent (after the project robots). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "talus/talus.h"
#include "test_util.h"
#include "world/world_internal.h"

#include "test_alloc.h"

#define TOL_AN 1e-4

typedef struct rng {
  uint64_t s;
} rng;
static double urand(rng *r) { /* [0, 1) */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
static double srand1(rng *r) { return 2 * urand(r) - 1; }

static uint64_t hash_bytes(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static uint64_t world_hash(tl_world *w) {
  static unsigned char buf[1 << 22];
  size_t n = 0;
  if (tl_world_snapshot_save(w, buf, sizeof buf, &n, NULL) != TL_OK) return 0;
  return hash_bytes(buf, n);
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static tl_world *make_world(const char *path, tl_base_type base, int ground, tl_system **s) {
  tl_load_options opt = tl_load_options_default();
  opt.base = base;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf(path, &opt, &m, &err) == TL_OK, "%s: load: %s", path, err.message)) return NULL;
  int ok = tl_world_create(&w, &err) == TL_OK && (!ground || tl_world_add_ground(w, 0, 0.8, &err) == TL_OK) &&
           tl_world_add_system(w, m, s, &err) == TL_OK;
  tl_model_free(m);
  if (!TL_CHECK(ok, "%s: world: %s", path, err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* A random state inside the middle 60 % of every limited joint's range,
 * random unit quaternions, velocities of `uscale`, base `height` m up (a
 * floating base), random PD gains and targets (also in that range). */
static int rows_on; /* 1: keep joint friction, saturating PDs and states near the limits (joint rows) */
static void random_state(tl_world *w, tl_system *s, rng *r, double height, double uscale) {
  const tl_model *m = s->m;
  int nq = m->nq, nv = m->nv;
  double *q = calloc((size_t)nq + 1, sizeof(double)), *qt = calloc((size_t)nq + 1, sizeof(double)),
         *u = calloc((size_t)nv + 1, sizeof(double)), *kp = calloc((size_t)nv + 1, sizeof(double)),
         *kd = calloc((size_t)nv + 1, sizeof(double));
  tl_model_default_q(m, q, nq, NULL);
  memcpy(qt, q, (size_t)nq * sizeof(double));
  for (int b = 0; b < m->nbody; b++) {
    int t = m->jnt_type[b], qa = m->q_adr[b], va = m->v_adr[b];
    if (t == TL_JOINT_FLOATING || t == TL_JOINT_SPHERICAL) {
      for (double *x = q; x; x = x == q ? qt : NULL) {
        double *qq = x + qa + (t == TL_JOINT_FLOATING ? 3 : 0), n = 0;
        for (int k = 0; k < 4; k++) qq[k] = srand1(r), n += qq[k] * qq[k];
        for (int k = 0; k < 4; k++) qq[k] /= sqrt(n);
      }
      if (t == TL_JOINT_FLOATING) q[qa + 2] = height, qt[qa + 2] = height;
      if (t == TL_JOINT_SPHERICAL)
        for (int k = 0; k < 3; k++) kp[va + k] = 50 * urand(r), kd[va + k] = 2 * urand(r);
    } else {
      for (int k = 0; k < m->jnt_nv[b]; k++) {
        int v = va + k;
        double lo = m->dof_lower[v], hi = m->dof_upper[v];
        if (!isfinite(lo) || !isfinite(hi)) lo = -1, hi = 1;
        double c = 0.5 * (lo + hi), h = (rows_on ? 0.5 : 0.3) * (hi - lo);
        q[qa + k] = c + h * srand1(r);
        qt[qa + k] = c + h * srand1(r);
        kp[v] = 100 * urand(r), kd[v] = 3 * urand(r);
      }
    }
  }
  for (int v = 0; v < nv; v++) u[v] = uscale * srand1(r);
  for (int b = 0; b < m->nbody; b++) { /* keep each PD force within half its effort limit (no saturation row) */
    int t = m->jnt_type[b];
    if (t == TL_JOINT_FLOATING || t == TL_JOINT_SPHERICAL) continue;
    for (int k = 0; k < m->jnt_nv[b]; k++) {
      int v = m->v_adr[b] + k;
      double f = kp[v] * fabs(qt[m->q_adr[b] + k] - q[m->q_adr[b] + k]) + kd[v] * fabs(u[v]) + 1e-12;
      if (!rows_on && isfinite(m->dof_effort[v]) && f > 0.5 * m->dof_effort[v]) {
        kp[v] *= 0.5 * m->dof_effort[v] / f;
        kd[v] *= 0.5 * m->dof_effort[v] / f;
      }
    }
  }
  for (int v = 0; v < nv; v++) /* Coulomb joint friction is a constraint row (the analytic mode falls back) */
    if (!rows_on && m->dof_friction[v] != 0) tl_system_set_joint_friction(s, v, 0.0, NULL);
  tl_error err;
  TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK, "set_state: %s", err.message);
  TL_CHECK(tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK, "gains: %s", err.message);
  TL_CHECK(tl_system_set_pd_targets(s, qt, nq, NULL, nv, &err) == TL_OK, "targets: %s", err.message);
  (void)w;
  free(q), free(qt), free(u), free(kp), free(kd);
}

/* Largest |X - Y| over the largest |Y| (n entries). */
static double rel_err(const double *X, const double *Y, size_t n, size_t *where) {
  double e = 0, s = 1e-300;
  for (size_t i = 0; i < n; i++) {
    s = fmax(s, fabs(Y[i]));
    if (fabs(X[i] - Y[i]) > e) e = fabs(X[i] - Y[i]), *where = i;
  }
  return e / s;
}

/* expect_analytic 0: the model has mimic joints (equality rows), the
 * analytic mode must fall back to finite differences and say so. */
static void analytic_vs_fd(const char *path, const char *label, tl_base_type base, int nstate, int expect_analytic) {
  tl_system *s = NULL;
  tl_world *w = make_world(path, base, 0, &s);
  if (!w) return;
  tl_step_derivatives *ws = NULL;
  tl_error err;
  if (!TL_CHECK(tl_step_derivatives_create(w, &ws, &err) == TL_OK, "%s: create: %s", label, err.message)) {
    tl_world_free(w);
    return;
  }
  int nv = tl_step_derivatives_nv(ws);
  size_t na = 4 * (size_t)nv * nv, nb = 2 * (size_t)nv * nv;
  double *A = malloc(na * sizeof(double)), *B = malloc(nb * sizeof(double)), *Af = malloc(na * sizeof(double)),
         *Bf = malloc(nb * sizeof(double));
  rng r = {hash_bytes((const unsigned char *)label, strlen(label))};
  double worst_a = 0, worst_b = 0;
  int nrows = 0;
  for (int k = 0; k < nstate; k++) {
    random_state(w, s, &r, 5.0, 1.0);
    uint64_t h0 = world_hash(w);
    tl_deriv_mode used = TL_DERIV_FD_CENTRED, used_fd = TL_DERIV_ANALYTIC;
    counting = 1, nalloc = 0;
    tl_status st = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv, &used, &err);
    tl_status st2 = tl_world_step_derivatives(w, ws, TL_DERIV_FD_CENTRED, Af, Bf, nv, &used_fd, &err);
    counting = 0;
    if (!TL_CHECK(st == TL_OK && st2 == TL_OK, "%s: step_derivatives: %s", label, err.message)) break;
    TL_CHECK(nalloc == 0, "%s: %d allocations in the derivative calls", label, nalloc);
    TL_CHECK(world_hash(w) == h0, "%s: the world changed in the derivative calls", label);
    if (!expect_analytic) {
      TL_CHECK(used == TL_DERIV_FD_CENTRED, "%s: state %d: the analytic mode did not report its fall-back", label, k);
      continue;
    }
    TL_CHECK(used == TL_DERIV_ANALYTIC, "%s: state %d: the analytic mode fell back to finite differences "
             "(%d constraint blocks, %d contacts)", label, k, w->nblock, w->ncontact);
    TL_CHECK(used_fd == TL_DERIV_FD_CENTRED, "%s: FD mode reported %d", label, (int)used_fd);
    size_t ia = 0, ib = 0;
    nrows += w->nblock;
    double ea = rel_err(A, Af, na, &ia), eb = rel_err(B, Bf, nb, &ib);
    worst_a = fmax(worst_a, ea), worst_b = fmax(worst_b, eb);
    TL_CHECK(ea < TOL_AN, "%s: state %d: A relative error %.3g at (%zu, %zu): analytic %.9g fd %.9g", label, k, ea,
             ia / (2 * (size_t)nv), ia % (2 * (size_t)nv), A[ia], Af[ia]);
    TL_CHECK(eb < TOL_AN, "%s: state %d: B relative error %.3g at (%zu, %zu): analytic %.9g fd %.9g", label, k, eb,
             ib / (size_t)nv, ib % (size_t)nv, B[ib], Bf[ib]);
  }
  if (expect_analytic)
    printf("%-36s nv %2d  analytic vs centred FD: A %.1e  B %.1e (relative to the largest entry; %d joint rows)\n",
           label, nv, worst_a, worst_b, nrows);
  else
    printf("%-36s nv %2d  mimic joints: the analytic mode fell back to FD, as it must\n", label, nv);
  free(A), free(B), free(Af), free(Bf);
  tl_step_derivatives_free(ws);
  tl_world_free(w);
}

/* Two systems in one world (the stacking of x): the project humanoid 5 m up
 * and the base arm below, no contact: analytic against FD, and no coupling
 * between the systems (their cross blocks of A and B are exactly 0). */
static void two_systems(const char *robots) {
  char p1[4096], p2[4096];
  snprintf(p1, sizeof p1, "%s/talus_humanoid/talus_humanoid.urdf", robots);
  snprintf(p2, sizeof p2, "%s/talus_base_arm/talus_base_arm.urdf", robots);
  tl_system *s1 = NULL, *s2 = NULL;
  tl_world *w = make_world(p1, TL_BASE_AUTO, 0, &s1);
  if (!w) return;
  tl_model *m2 = NULL;
  tl_error err;
  if (!TL_CHECK(tl_model_load_urdf(p2, NULL, &m2, &err) == TL_OK && tl_world_add_system(w, m2, &s2, &err) == TL_OK,
                "two systems: %s", err.message)) {
    tl_model_free(m2);
    tl_world_free(w);
    return;
  }
  tl_model_free(m2);
  rng r = {4242};
  random_state(w, s1, &r, 5.0, 1.0);
  random_state(w, s2, &r, 0.0, 1.0);
  tl_step_derivatives *ws = NULL;
  tl_step_derivatives_create(w, &ws, &err);
  int nv = tl_step_derivatives_nv(ws), n1 = s1->m->nv, N2 = 2 * nv;
  TL_CHECK(nv == n1 + s2->m->nv, "two systems: nv %d", nv);
  size_t na = 4 * (size_t)nv * nv, nb = 2 * (size_t)nv * nv, ia = 0, ib = 0;
  double *A = malloc(na * sizeof(double)), *B = malloc(nb * sizeof(double)), *Af = malloc(na * sizeof(double)),
         *Bf = malloc(nb * sizeof(double));
  tl_deriv_mode used = TL_DERIV_FD_CENTRED;
  tl_status st = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv, &used, &err);
  if (!st) st = tl_world_step_derivatives(w, ws, TL_DERIV_FD_CENTRED, Af, Bf, nv, NULL, &err);
  if (TL_CHECK(st == TL_OK && used == TL_DERIV_ANALYTIC, "two systems: %s (used %d)", err.message, (int)used)) {
    double ea = rel_err(A, Af, na, &ia), eb = rel_err(B, Bf, nb, &ib), cross = 0;
    for (int i = 0; i < N2; i++) {
      int si = (i % nv) >= n1;
      for (int j = 0; j < N2; j++)
        if (((j % nv) >= n1) != si) cross = fmax(cross, fabs(A[(size_t)i * N2 + j]) + fabs(Af[(size_t)i * N2 + j]));
      for (int j = 0; j < nv; j++)
        if ((j >= n1) != si) cross = fmax(cross, fabs(B[(size_t)i * nv + j]) + fabs(Bf[(size_t)i * nv + j]));
    }
    printf("two systems (nv %d + %d): analytic vs FD: A %.1e  B %.1e, largest cross-system entry %.1e\n", n1,
           nv - n1, ea, eb, cross);
    TL_CHECK(ea < TOL_AN && eb < TOL_AN, "two systems: A %.3g, B %.3g", ea, eb);
    TL_CHECK(cross == 0, "two systems: the systems are coupled in A or B (%.3g)", cross);
  }
  free(A), free(B), free(Af), free(Bf);
  tl_step_derivatives_free(ws);
  tl_world_free(w);
}

/* A floating robot on the ground with PD holding its default joints, settled
 * for `settle` s. */
static tl_world *standing(const char *path, tl_system **s, double settle, double kp, double kd) {
  tl_world *w = make_world(path, TL_BASE_AUTO, 1, s);
  if (!w) return NULL;
  const tl_model *m = (*s)->m;
  int nq = m->nq, nv = m->nv;
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double)),
         *g = calloc(2 * (size_t)nv, sizeof(double));
  tl_system_get_state(*s, q, nq, u, nv, NULL);
  double minz = INFINITY;
  for (int k = 0; k < tl_model_ngeom(m); k++) {
    double lo[3], hi[3];
    if (tl_system_geom_aabb(*s, k, lo, hi, NULL) == TL_OK) minz = fmin(minz, lo[2]);
  }
  q[2] += 0.005 - minz;
  for (int v = 6; v < nv; v++) g[v] = kp, g[nv + v] = kd;
  tl_error err;
  int ok = tl_system_set_state(*s, q, nq, u, nv, &err) == TL_OK &&
           tl_system_set_pd_gains(*s, g, g + nv, nv, &err) == TL_OK &&
           tl_system_set_pd_targets(*s, q, nq, NULL, nv, &err) == TL_OK;
  for (int i = 0; ok && i < (int)lround(settle / tl_world_timestep(w)); i++) ok = tl_world_step(w, &err) == TL_OK;
  free(q), free(u), free(g);
  if (!TL_CHECK(ok, "%s: standing: %s", path, err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* x+ after one step from the world's state perturbed by s dx and s dtau (the
 * snapshot snap restored first), as the change from x+_0 (tangent, velocity). */
static void stepped_change(tl_world *w, tl_system *s, const unsigned char *snap, size_t n, const double *dx,
                           const double *dtau, double sc, const double *qn, const double *un, double *c) {
  const tl_model *m = s->m;
  int nv = m->nv;
  tl_world_snapshot_restore(w, snap, n, NULL);
  double *v = malloc((size_t)nv * sizeof(double));
  for (int k = 0; k < nv; k++) v[k] = sc * dx[k];
  tl_model_integrate(m, s->d.q, m->nq, v, nv, s->d.q, NULL);
  for (int k = 0; k < nv; k++) s->d.u[k] += sc * dx[nv + k], s->ext[k] += sc * dtau[k];
  s->kin_valid = s->dyn_valid = 0;
  tl_world_step(w, NULL);
  if (getenv("DBG")) {
    int nb[4] = {0, 0, 0, 0};
    for (int b = 0; b < w->nblock; b++) nb[w->blocks[b].kind]++;
    tl_solver_stats stt;
    tl_world_solver_stats(w, &stt, NULL);
    printf("   sc %g: %d contacts, blocks %d %d %d %d it %d conv %d direct %d", sc, w->ncontact, nb[0], nb[1], nb[2], nb[3], stt.iterations, stt.converged, stt.direct);
    for (int k = 0; k < w->ncontact; k++) printf(" (%.4f %.4f d %.3g)", w->contacts[k].pos[0], w->contacts[k].pos[1], w->contacts[k].depth);
    for (int k = 0; k < w->ncontact; k++) printf(" [%.3g %.3g %.3g]", w->contacts[k].lambda[0], w->contacts[k].lambda[1], w->contacts[k].lambda[2]);
    printf("\n");
  }
  tl_model_difference(m, qn, s->d.q, m->nq, c, nv, NULL);
  for (int k = 0; k < nv; k++) c[nv + k] = s->d.u[k] - un[k];
  free(v);
  tl_world_snapshot_restore(w, snap, n, NULL);
}

static double norm(const double *x, int n) {
  double a = 0;
  for (int i = 0; i < n; i++) a += x[i] * x[i];
  return sqrt(a);
}

static void quadruped_fd(const char *robots) {
  char path[4096];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_system *s = NULL;
  tl_world *w = standing(path, &s, 1.5, 300, 10);
  if (!w) return;
  const tl_model *m = s->m;
  int nv = m->nv, nq = m->nq, N2 = 2 * nv;
  TL_CHECK(tl_world_ncontact(w) >= 4, "quadruped: %d contacts while standing", tl_world_ncontact(w));
  int sticking = 0;
  for (int k = 0; k < tl_world_ncontact(w); k++) {
    tl_contact_info c;
    tl_world_contact(w, k, &c, NULL);
    double t2 = c.impulse[0] * c.impulse[0] + c.impulse[1] * c.impulse[1];
    sticking += c.impulse[2] > 0 && sqrt(t2) < 0.9 * c.mu * c.impulse[2];
  }
  TL_CHECK(sticking >= 4, "quadruped: %d sticking contacts (inside the cone), expected 4", sticking);
  tl_step_derivatives *ws = NULL;
  tl_error err;
  if (!TL_CHECK(tl_step_derivatives_create(w, &ws, &err) == TL_OK, "quadruped: create: %s", err.message)) return;
  double *A = malloc((size_t)N2 * N2 * sizeof(double)), *B = malloc((size_t)N2 * nv * sizeof(double));
  uint64_t h0 = world_hash(w);
  tl_deriv_mode used = TL_DERIV_ANALYTIC;
  counting = 1, nalloc = 0;
  tl_status st = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv, &used, &err);
  counting = 0;
  TL_CHECK(st == TL_OK, "quadruped: %s", err.message);
  TL_CHECK(used == TL_DERIV_ANALYTIC, "quadruped: the analytic mode fell back with four sticking feet");
  TL_CHECK(nalloc == 0, "quadruped: %d allocations", nalloc);
  double *An = malloc((size_t)N2 * N2 * sizeof(double)), *Bn = malloc((size_t)N2 * nv * sizeof(double));
  memcpy(An, A, (size_t)N2 * N2 * sizeof(double));
  memcpy(Bn, B, (size_t)N2 * nv * sizeof(double));
  TL_CHECK(world_hash(w) == h0, "quadruped: world changed");
  counting = 1, nalloc = 0;
  st = tl_world_step_derivatives(w, ws, TL_DERIV_FD_CENTRED, A, B, nv, &used, &err);
  counting = 0;
  TL_CHECK(st == TL_OK && nalloc == 0, "quadruped fd: %s, %d allocations", err.message, nalloc);
  TL_CHECK(world_hash(w) == h0, "quadruped: world changed (fd)");
  {
    size_t ia = 0, ib = 0;
    double ea = rel_err(An, A, (size_t)N2 * N2, &ia), eb = rel_err(Bn, B, (size_t)N2 * nv, &ib);
    printf("quadruped standing, 4 sticking feet, PD: analytic vs centred FD: A %.1e  B %.1e\n", ea, eb);
    TL_CHECK(ea < TOL_AN, "quadruped: A relative error %.3g at (%zu, %zu): analytic %.9g fd %.9g", ea, ia / N2,
             ia % N2, An[ia], A[ia]);
    TL_CHECK(eb < TOL_AN, "quadruped: B relative error %.3g at (%zu, %zu): analytic %.9g fd %.9g", eb, ib / nv,
             ib % nv, Bn[ib], B[ib]);
  }
  free(An), free(Bn);
  /* structure: a sticking foot stays stuck whatever the velocity perturbation:
   * for each contact direction d (t1, t2, n) and its point Jacobian Jp,
   * |d^T Jp du+/du| is small against |d^T Jp| (which a free body would keep) */
  double worst_stick = 0;
  double *Jp = malloc(3 * (size_t)nv * sizeof(double)), *g = malloc((size_t)nv * sizeof(double));
  for (int k = 0; k < tl_world_ncontact(w); k++) {
    tl_contact_info ci;
    tl_world_contact(w, k, &ci, NULL);
    const double *fr = w->contacts[k].frame;
    memset(Jp, 0, 3 * (size_t)nv * sizeof(double));
    tl_system_point_jacobian(s, ci.body, ci.pos, Jp, NULL, nv, NULL);
    for (int r = 0; r < 3; r++) {
      for (int j = 0; j < nv; j++) g[j] = fr[3 * r] * Jp[j] + fr[3 * r + 1] * Jp[nv + j] + fr[3 * r + 2] * Jp[2 * nv + j];
      double num = 0, den = norm(g, nv);
      for (int j = 0; j < nv; j++) {
        double a = 0;
        for (int i = 0; i < nv; i++) a += g[i] * A[(size_t)(nv + i) * N2 + nv + j];
        num += a * a;
      }
      worst_stick = fmax(worst_stick, sqrt(num) / den);
    }
  }
  free(Jp), free(g);
  printf("quadruped standing (%d contacts, %d sticking): |d^T Jp du+/du| / |d^T Jp| <= %.2e at the feet\n",
         tl_world_ncontact(w), sticking, worst_stick);
  TL_CHECK(worst_stick < 0.05, "quadruped: a velocity perturbation moves a sticking foot (%.3g)", worst_stick);
  /* prediction to first order */
  size_t n = tl_world_snapshot_size(w);
  unsigned char *snap = malloc(n);
  tl_world_snapshot_save(w, snap, n, &n, NULL);
  double *qn = malloc((size_t)nq * sizeof(double)), *un = malloc((size_t)nv * sizeof(double)),
         *dx = malloc((size_t)N2 * sizeof(double)), *dtau = malloc((size_t)nv * sizeof(double)),
         *pred = malloc((size_t)N2 * sizeof(double)), *c = malloc((size_t)N2 * sizeof(double));
  tl_world_step(w, NULL);
  memcpy(qn, s->d.q, (size_t)nq * sizeof(double));
  memcpy(un, s->d.u, (size_t)nv * sizeof(double));
  tl_world_snapshot_restore(w, snap, n, NULL);
  rng r = {12345};
  double worst_ratio = INFINITY, worst_rel = 0;
  for (int trial = 0; trial < 3; trial++) {
    for (int k = 0; k < N2; k++) dx[k] = srand1(&r) * (k < nv ? 1.0 : 10.0);
    for (int k = 0; k < nv; k++) dtau[k] = 10 * srand1(&r);
    for (int i = 0; i < N2; i++) {
      double a = 0;
      for (int j = 0; j < N2; j++) a += A[(size_t)i * N2 + j] * dx[j];
      for (int j = 0; j < nv; j++) a += B[(size_t)i * nv + j] * dtau[j];
      pred[i] = a;
    }
    double e[2], lin = norm(pred, N2);
    for (int h = 0; h < 2; h++) {
      double sc = h ? 1e-7 : 2e-7;
      stepped_change(w, s, snap, n, dx, dtau, sc, qn, un, c);
      for (int i = 0; i < N2; i++) c[i] -= sc * pred[i];
      e[h] = norm(c, N2) / (sc * lin);
    }
    printf("  prediction x+ ~ x+_0 + s (A dx + B dtau): relative error %.3e at s = 2e-7, %.3e at s = 1e-7 (ratio "
           "%.2f)\n",
           e[0], e[1], e[0] / e[1]);
    worst_rel = fmax(worst_rel, e[0]);
    worst_ratio = fmin(worst_ratio, e[0] / e[1]);
  }
  TL_CHECK(worst_rel < 1e-2, "quadruped: first-order prediction off by %.3g relative", worst_rel);
  TL_CHECK(worst_ratio > 1.6, "quadruped: prediction error does not shrink with s (ratio %.3g)", worst_ratio);
  /* a run with derivative calls ends bit for bit like one without */
  unsigned char *end0 = malloc(tl_world_snapshot_size(w) + 4096);
  for (int pass = 0; pass < 2; pass++) {
    tl_world_snapshot_restore(w, snap, n, NULL);
    for (int i = 0; i < 300; i++) {
      if (pass && i % 7 == 0)
        tl_world_step_derivatives(w, ws, i % 14 ? TL_DERIV_ANALYTIC : TL_DERIV_FD_CENTRED, A, B, nv, NULL, NULL);
      tl_world_step(w, NULL);
    }
    size_t ne = tl_world_snapshot_size(w);
    if (!pass) {
      end0 = realloc(end0, ne);
      tl_world_snapshot_save(w, end0, ne, NULL, NULL);
      h0 = hash_bytes(end0, ne);
    } else {
      TL_CHECK(world_hash(w) == h0, "quadruped: a run with derivative calls differs from one without");
    }
  }
  /* errors */
  tl_status e1 = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv + 1, NULL, &err);
  TL_CHECK(e1 == TL_ERR_ARGUMENT && strstr(err.message, "nv"), "wrong nv accepted (%s)", err.message);
  e1 = tl_world_step_derivatives(w, ws, (tl_deriv_mode)7, A, B, nv, NULL, &err);
  TL_CHECK(e1 == TL_ERR_ARGUMENT && strstr(err.message, "mode"), "bad mode accepted (%s)", err.message);
  TL_CHECK(tl_step_derivatives_set_eps(ws, -1, &err) == TL_ERR_ARGUMENT, "eps -1 accepted");
  TL_CHECK(tl_step_derivatives_set_eps(ws, NAN, &err) == TL_ERR_ARGUMENT, "eps NaN accepted");
  tl_world_add_static_geom(w, TL_GEOM_SPHERE, (double[3]){0.1, 0, 0}, (double[3]){5, 5, 5}, NULL, NULL, NULL,
                           NULL);
  e1 = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv, NULL, &err);
  TL_CHECK(e1 == TL_ERR_ARGUMENT && strstr(err.message, "create a new one"), "stale workspace accepted (%s)",
           err.message);
  free(snap), free(qn), free(un), free(dx), free(dtau), free(pred), free(c), free(end0), free(A), free(B);
  tl_step_derivatives_free(ws);
  tl_world_free(w);
}

/* µs per call of `mode` on w (best of 3 runs of `calls`). */

/* Analytic against centred FD at the world's current state, with contacts:
 * the analytic mode must not fall back; counts the contacts sticking
 * (|lambda_t| < 0.99 mu lambda_n, lambda_n > 0) and sliding (on the cone)
 * and checks at least the expected numbers. eps: FD step. */
static void contact_vs_fd(tl_world *w, const char *label, double eps, int want_stick, int want_slide) {
  tl_step_derivatives *ws = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_step_derivatives_create(w, &ws, &err) == TL_OK, "%s: create: %s", label, err.message)) return;
  tl_step_derivatives_set_eps(ws, eps, NULL);
  int nv = tl_step_derivatives_nv(ws);
  size_t na = 4 * (size_t)nv * nv, nb = 2 * (size_t)nv * nv;
  double *A = malloc(na * sizeof(double)), *B = malloc(nb * sizeof(double)), *Af = malloc(na * sizeof(double)),
         *Bf = malloc(nb * sizeof(double));
  uint64_t h0 = world_hash(w);
  tl_deriv_mode used = TL_DERIV_FD_CENTRED, used_fd = TL_DERIV_ANALYTIC;
  counting = 1, nalloc = 0;
  tl_status st = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv, &used, &err);
  tl_status st2 = tl_world_step_derivatives(w, ws, TL_DERIV_FD_CENTRED, Af, Bf, nv, &used_fd, &err);
  counting = 0;
  if (TL_CHECK(st == TL_OK && st2 == TL_OK, "%s: step_derivatives: %s", label, err.message)) {
    TL_CHECK(nalloc == 0, "%s: %d allocations in the derivative calls", label, nalloc);
    TL_CHECK(world_hash(w) == h0, "%s: the world changed in the derivative calls", label);
    TL_CHECK(used == TL_DERIV_ANALYTIC, "%s: the analytic mode fell back to finite differences (%d contacts)", label,
             tl_world_ncontact(w));
    size_t ia = 0, ib = 0;
    double ea = rel_err(A, Af, na, &ia), eb = rel_err(B, Bf, nb, &ib);
    int stick = 0, slide = 0; /* the contacts of the step differentiated: take it */
    TL_CHECK(tl_world_step(w, &err) == TL_OK, "%s: step: %s", label, err.message);
    for (int k = 0; k < tl_world_ncontact(w); k++) {
      tl_contact_info c;
      tl_world_contact(w, k, &c, NULL);
      double ln = c.impulse[0] * c.normal[0] + c.impulse[1] * c.normal[1] + c.impulse[2] * c.normal[2], lt = 0;
      for (int a = 0; a < 3; a++) lt += (c.impulse[a] - ln * c.normal[a]) * (c.impulse[a] - ln * c.normal[a]);
      lt = sqrt(lt);
      if (!(ln > 0)) continue;
      if (lt < 0.99 * c.mu * ln) stick++;
      else slide++;
    }
    printf("%-40s nv %2d  %d sticking, %d sliding contacts: analytic vs centred FD (eps %g): A %.1e  B %.1e\n", label,
           nv, stick, slide, eps, ea, eb);
    TL_CHECK(stick >= want_stick && slide >= want_slide, "%s: %d sticking, %d sliding contacts, expected %d, %d",
             label, stick, slide, want_stick, want_slide);
    TL_CHECK(ea < TOL_AN, "%s: A relative error %.3g at (%zu, %zu): analytic %.9g fd %.9g", label, ea,
             ia / (2 * (size_t)nv), ia % (2 * (size_t)nv), A[ia], Af[ia]);
    TL_CHECK(eb < TOL_AN, "%s: B relative error %.3g at (%zu, %zu): analytic %.9g fd %.9g", label, eb,
             ib / (size_t)nv, ib % (size_t)nv, B[ib], Bf[ib]);
  }
  free(A), free(B), free(Af), free(Bf);
  tl_step_derivatives_free(ws);
}

/* What the analytic mode does not cover falls back and says so: the standing
 * quadruped under the PGS solver (friction pyramid), and two project balls
 * resting on each other (a contact between two systems). */
static void contact_fallbacks(const char *robots) {
  char path[4096];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_system *s = NULL, *s2 = NULL;
  tl_world *w = standing(path, &s, 0.3, 300, 10);
  tl_error err;
  memset(&err, 0, sizeof err);
  for (int k = 0; k < 2 && w; k++) {
    if (k == 1) { /* two balls, one on the other, on the ground */
      tl_world_free(w);
      w = NULL;
      snprintf(path, sizeof path, "%s/ball/ball.urdf", robots);
      tl_load_options opt = tl_load_options_default();
      tl_model *m = NULL;
      double q1[7] = {0, 0, 0.1, 1, 0, 0, 0}, q2[7] = {0, 0, 0.2999, 1, 0, 0, 0};
      int ok = tl_model_load_urdf(path, &opt, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
               tl_world_add_ground(w, 0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK &&
               tl_world_add_system(w, m, &s2, &err) == TL_OK &&
               tl_system_set_state(s, q1, 7, NULL, 0, &err) == TL_OK &&
               tl_system_set_state(s2, q2, 7, NULL, 0, &err) == TL_OK && tl_world_step(w, &err) == TL_OK;
      tl_model_free(m);
      int between = 0;
      for (int c = 0; ok && c < tl_world_ncontact(w); c++) {
        tl_contact_info ci;
        tl_world_contact(w, c, &ci, NULL);
        between += ci.other_system >= 0;
      }
      TL_CHECK(between >= 1, "fallbacks: the two balls do not touch");
      if (!TL_CHECK(ok, "fallbacks: two balls: %s", err.message)) break;
    } else if (!TL_CHECK(tl_world_set_solver(w, TL_SOLVER_PGS, &err) == TL_OK, "PGS: %s", err.message)) {
      break;
    }
    tl_step_derivatives *ws = NULL;
    if (!TL_CHECK(tl_step_derivatives_create(w, &ws, &err) == TL_OK, "fallbacks: %s", err.message)) break;
    int nv = tl_step_derivatives_nv(ws);
    double *A = malloc(4 * (size_t)nv * nv * sizeof(double)), *B = malloc(2 * (size_t)nv * nv * sizeof(double));
    tl_deriv_mode used = TL_DERIV_ANALYTIC;
    TL_CHECK(tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, nv, &used, &err) == TL_OK, "fallbacks: %s",
             err.message);
    TL_CHECK(used == TL_DERIV_FD_CENTRED, "%s: the analytic mode did not fall back (%d contacts)",
             k ? "two balls in contact" : "quadruped under PGS", tl_world_ncontact(w));
    printf("%s (%d contacts): the analytic mode falls back to FD, as documented\n",
           k ? "two balls resting on each other" : "quadruped standing under PGS", tl_world_ncontact(w));
    free(A), free(B);
    tl_step_derivatives_free(ws);
  }
  tl_world_free(w);
}

/* (c) The project's 0.2 m box sliding on the ground at 1.5 m/s along x
 * (and 0.5 along y), mu 0.8: four corner contacts on the cone, 0.05 s after
 * its release (settled on its face). */
static void box_sliding(const char *robots, const char *name, double z, int want) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", robots, name);
  tl_load_options opt = tl_load_options_default();
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_model_load_urdf(path, &opt, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_add_ground(w, 0, 0.3, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  tl_model_free(m);
  double q[7] = {0, 0, z, 1, 0, 0, 0}, u[6] = {1.5, 0.5, 0, 0.2, -0.3, 0.4};
  ok = ok && tl_system_set_state(s, q, 7, u, 6, &err) == TL_OK;
  /* solved to convergence: the default tolerance ends the sweeps once they only trade impulse between the
   * four redundant corners, which leaves 2.4e-4 of difference between the finite differences and the exact
   * solution's derivative (its redundant mode moves the friction of each corner) */
  ok = ok && tl_world_set_solver_params(w, 100000, 1e-15, 1, &err) == TL_OK;
  if (TL_CHECK(ok, "%s: %s", name, err.message)) contact_vs_fd(w, name, 1e-6, 0, want);
  tl_world_free(w);
}

/* (b) An arm touching a table: a 3-joint arm (revolute z, y, y; capsule
 * links, a sphere at the tip) fixed 0.5 m above a static box table, its PD
 * pressing the tip down onto the table top (targets below it). */
static void arm_table(void) {
  const char *urdf =
      "<robot name='arm3'>"
      "<link name='base'><inertial><mass value='2'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j1' type='revolute'><parent link='base'/><child link='l1'/><axis xyz='0 0 1'/>"
      "<limit lower='-3' upper='3' effort='200' velocity='10'/></joint>"
      "<link name='l1'><inertial><origin xyz='0 0 0.05'/><mass value='1'/><inertia ixx='0.005' iyy='0.005' izz='0.002' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j2' type='revolute'><parent link='l1'/><child link='l2'/><origin xyz='0 0 0.1'/><axis xyz='0 1 0'/>"
      "<limit lower='-3' upper='3' effort='200' velocity='10'/></joint>"
      "<link name='l2'><inertial><origin xyz='0.2 0 0'/><mass value='1'/><inertia ixx='0.001' iyy='0.014' izz='0.014' ixy='0' ixz='0' iyz='0'/></inertial>"
      "<collision><origin xyz='0.2 0 0' rpy='0 1.5707963267948966 0'/><geometry><capsule radius='0.03' length='0.3'/></geometry></collision></link>"
      "<joint name='j3' type='revolute'><parent link='l2'/><child link='l3'/><origin xyz='0.4 0 0'/><axis xyz='0 1 0'/>"
      "<limit lower='-3' upper='3' effort='200' velocity='10'/></joint>"
      "<link name='l3'><inertial><origin xyz='0.15 0 0'/><mass value='0.6'/><inertia ixx='0.0005' iyy='0.005' izz='0.005' ixy='0' ixz='0' iyz='0'/></inertial>"
      "<collision><origin xyz='0.3 0 0'/><geometry><sphere radius='0.04'/></geometry></collision></link>"
      "</robot>";
  char path[] = "/tmp/talus_test_arm_tableXXXXXX";
  int fd = mkstemp(path);
  if (!TL_CHECK(fd >= 0, "arm/table: temporary URDF")) return;
  FILE *f = fdopen(fd, "w");
  fputs(urdf, f);
  fclose(f);
  tl_load_options opt = tl_load_options_default();
  opt.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_model_load_urdf(path, &opt, &m, &err) == TL_OK;
  remove(path);
  /* table: a box 1 x 1 x 0.1 m whose top is at z = -0.022 (the arm's base at z = 0), centred at x = 0.6 */
  double size[3] = {1, 1, 0.1}, pos[3] = {0.6, 0.1, -0.072}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  ok = ok && tl_world_create(&w, &err) == TL_OK &&
       tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, R, "table", NULL, &err) == TL_OK &&
       tl_world_add_system(w, m, &s, &err) == TL_OK && tl_system_set_geom_material(s, 1, "tip", &err) == TL_OK &&
       tl_world_set_material_pair(w, "tip", "table", 1.5, 0, 0, &err) == TL_OK; /* a rubber tip: it sticks */
  tl_model_free(m);
  if (!TL_CHECK(ok, "arm/table: %s", err.message)) {
    tl_world_free(w);
    return;
  }
  /* tip over the table: j2 tilts link 2 up a little, j3 bends the tip (z = 0.017, radius 0.04) down onto the top */
  double q[3] = {0.2, -0.25, 0.9}, u[3] = {0, 0, 0}, qt[3] = {0.2, -0.15, 0.9}, kp[3] = {200, 200, 200},
         kd[3] = {5, 5, 5};
  ok = tl_system_set_state(s, q, 3, u, 3, &err) == TL_OK && tl_system_set_pd_gains(s, kp, kd, 3, &err) == TL_OK &&
       tl_system_set_pd_targets(s, qt, 3, NULL, 3, &err) == TL_OK;
  for (int i = 0; ok && i < 300; i++) ok = tl_world_step(w, &err) == TL_OK;
  if (TL_CHECK(ok, "arm/table: %s", err.message)) {
    TL_CHECK(tl_world_ncontact(w) >= 1, "arm/table: the tip does not touch the table (%d contacts)",
             tl_world_ncontact(w));
    contact_vs_fd(w, "(b) arm pressing on a table", 1e-6, 1, 0);
  }
  tl_world_free(w);
}

static double time_call(tl_world *w, tl_step_derivatives *ws, tl_deriv_mode mode, int calls, tl_deriv_mode *used) {
  int nv = tl_step_derivatives_nv(ws);
  double *A = malloc(4 * (size_t)nv * nv * sizeof(double)), *B = malloc(2 * (size_t)nv * nv * sizeof(double));
  double best = INFINITY;
  for (int run = 0; run < 3; run++) {
    double t0 = now_us();
    for (int i = 0; i < calls; i++) tl_world_step_derivatives(w, ws, mode, A, B, nv, used, NULL);
    best = fmin(best, (now_us() - t0) / calls);
  }
  free(A), free(B);
  return best;
}

static void speed(const char *shared) {
  char path[4096];
  tl_system *s = NULL;
  tl_step_derivatives *ws = NULL;
  snprintf(path, sizeof path, "%s/robots/anymal_c/urdf/anymal.urdf", shared);
  tl_world *w = standing(path, &s, 1.0, 80, 2);
  if (w && tl_step_derivatives_create(w, &ws, NULL) == TL_OK) {
    tl_deriv_mode used;
    double t_step = 0, t0 = now_us();
    size_t n = tl_world_snapshot_size(w);
    unsigned char *snap = malloc(n);
    tl_world_snapshot_save(w, snap, n, &n, NULL);
    for (int i = 0; i < 200; i++) tl_world_step(w, NULL);
    t_step = (now_us() - t0) / 200;
    tl_world_snapshot_restore(w, snap, n, NULL);
    double fd = time_call(w, ws, TL_DERIV_FD_CENTRED, 20, NULL);
    double an = time_call(w, ws, TL_DERIV_ANALYTIC, 200, &used);
    TL_CHECK(used == TL_DERIV_ANALYTIC, "ANYmal C standing: the analytic mode fell back");
    printf("speed: ANYmal C standing (nv %d, %d contacts): step %.1f us, step_derivatives analytic %.1f us "
           "(%.1f steps' time), FD %.0f us (%d steps: %.1f steps' time), FD / analytic %.1fx\n",
           s->m->nv, tl_world_ncontact(w), t_step, an, an / t_step, fd, 6 * s->m->nv + 1, fd / t_step, fd / an);
    free(snap);
    tl_step_derivatives_free(ws);
  }
  tl_world_free(w);
  ws = NULL;
  const char *air[] = {"talos/robots/talos_full_v2.urdf", "deepmimic_humanoid/humanoid.urdf"};
  for (int k = 0; k < 2; k++) {
    ws = NULL;
    snprintf(path, sizeof path, "%s/robots/%s", shared, air[k]);
    w = make_world(path, TL_BASE_AUTO, 0, &s);
    if (w && tl_step_derivatives_create(w, &ws, NULL) == TL_OK) {
      rng r = {99};
      random_state(w, s, &r, 5.0, 0.5);
      tl_deriv_mode used = TL_DERIV_FD_CENTRED;
      double t0 = now_us();
      size_t n = tl_world_snapshot_size(w);
      unsigned char *snap = malloc(n);
      tl_world_snapshot_save(w, snap, n, &n, NULL);
      for (int i = 0; i < 200; i++) tl_world_step(w, NULL);
      double t_step = (now_us() - t0) / 200;
      tl_world_snapshot_restore(w, snap, n, NULL);
      free(snap);
      double an = time_call(w, ws, TL_DERIV_ANALYTIC, 50, &used);
      double fd = time_call(w, ws, TL_DERIV_FD_CENTRED, 5, NULL);
      printf("speed: %s in the air (nv %d): step %.1f us, step_derivatives analytic mode %.0f us (%s), FD %.0f us, "
             "FD / analytic mode %.1fx\n",
             air[k], s->m->nv, t_step, an,
             used == TL_DERIV_ANALYTIC ? "analytic" : "fell back to FD: mimic joints", fd, fd / an);
      tl_step_derivatives_free(ws);
    }
    tl_world_free(w);
  }
}

int main(int argc, char **argv) {
  const char *robots = argc > 1 ? argv[1] : "robots";
  const char *shared = tl_test_shared_dir(argc, argv, 2);
  char path[4096];
  for (rows_on = 0; rows_on < 2; rows_on++) {
    snprintf(path, sizeof path, "%s/talus_humanoid/talus_humanoid.urdf", robots);
    analytic_vs_fd(path, rows_on ? "robots/talus_humanoid (floating), rows" : "robots/talus_humanoid (floating)",
                   TL_BASE_AUTO, 3, 1);
    snprintf(path, sizeof path, "%s/talus_base_arm/talus_base_arm.urdf", robots);
    analytic_vs_fd(path, rows_on ? "robots/talus_base_arm, rows" : "robots/talus_base_arm", TL_BASE_AUTO, 3, 1);
  }
  rows_on = 0;
  two_systems(robots);
  quadruped_fd(robots);
  box_sliding(robots, "ball/ball.urdf", 0.1 - 1e-4, 1);
  box_sliding(robots, "box/box.urdf", 0.1 - 1e-4, 4);
  arm_table();
  contact_fallbacks(robots);
  char probe[4096];
  snprintf(probe, sizeof probe, "%s/robots/talos/robots/talos_full_v2.urdf", shared ? shared : "");
  FILE *f = shared ? fopen(probe, "r") : NULL;
  if (f) fclose(f);
  else shared = NULL;
  if (!shared) {
    tl_test_skip("the shared robot corpus (../shared/robots) is absent: TALOS, DeepMimic, iiwa, Panda and the speed "
                 "figures were not run");
    return tl_test_finish();
  }
  const struct {
    const char *rel;
    tl_base_type base;
    int analytic;
  } cases[] = {{"deepmimic_humanoid/humanoid.urdf", TL_BASE_AUTO, 1},
               {"kuka_iiwa/model.urdf", TL_BASE_FIXED, 1},
               {"talos/robots/talos_full_v2.urdf", TL_BASE_AUTO, 1},
               {"panda/urdf/panda.urdf", TL_BASE_FIXED, 1}};
  for (rows_on = 0; rows_on < 2; rows_on++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      char label[256];
      snprintf(path, sizeof path, "%s/robots/%s", shared, cases[i].rel);
      snprintf(label, sizeof label, "%s%s", cases[i].rel, rows_on ? ", rows" : "");
      analytic_vs_fd(path, label, cases[i].base, 3, cases[i].analytic);
    }
  rows_on = 0;
  { /* (a) ANYmal C standing on four sticking feet, PD on (kp 80, kd 2) */
    snprintf(path, sizeof path, "%s/robots/anymal_c/urdf/anymal.urdf", shared);
    tl_system *s = NULL;
    tl_world *w = standing(path, &s, 1.0, 80, 2);
    if (w) contact_vs_fd(w, "(a) anymal_c standing, PD", 1e-6, 4, 0);
    tl_world_free(w);
    /* the DeepMimic humanoid standing on its box feet (8 corner contacts, redundant: solved to convergence).
     * eps 1e-8: a corner sits within 1e-6 m of the depth where its target's regime changes (gap: slope 1 / dt,
     * penetration: erp / dt), and a base rotation of 1e-6 rad moves it across: centred differences with eps
     * 1e-6 average the two sides there (A 0.45 off), with 1e-8 they see the state's side (1e-7) */
    snprintf(path, sizeof path, "%s/robots/deepmimic_humanoid/humanoid.urdf", shared);
    w = standing(path, &s, 1.0, 300, 10);
    if (w && tl_world_set_solver_params(w, 100000, 1e-15, 1, NULL) == TL_OK)
      contact_vs_fd(w, "deepmimic_humanoid standing, PD", 1e-8, 4, 0);
    tl_world_free(w);
  }
  speed(shared);
  return tl_test_finish();
}
