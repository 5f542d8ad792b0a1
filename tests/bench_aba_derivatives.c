/* Guards: src/dynamics/derivatives.c src/world/system_derivatives.c (a measuring harness, not a test).
 * Speed of tl_system_forward_dynamics_derivatives against tl_system_forward_dynamics
 * (ABA) on one robot in one process: batches of each interleaved, the state fixed
 * (kinematics cached), median of 41 batch ratios. Mode "callgrind" runs each once
 * after a warm-up, for `valgrind --tool=callgrind --toggle-collect=...`.
 * usage: bench_aba_derivatives URDF fixed|auto [time|callgrind|flops|dump|btime|bcallgrind] [LANES]
 * (LANES: cap the kernels' vector lanes, math/tl_cpu.h; 1 = the baseline).
 * btime, bcallgrind: the cache state of talus_bench's ABA' column (M and h
 * cached by tl_system_mass_matrix before the derivative calls, the state set
 * again before the ABA calls so that they run ABA). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "talus/talus.h"
#include "math/tl_cpu.h"
#include "world/world_internal.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}


/* Multiply-adds of the routes of -M^-1 X (X = dtau_dq from column c_lo, and dtau_du) on this tree. */
static void flops(const tl_system *s) {
  const tl_sysdata *d = &s->d;
  const int n = s->m->nv, *end = d->dof_end, *par = s->m->dof_parent;
  const int clo = s->m->jnt_type[0] == TL_JOINT_FLOATING ? 3 : 0;
  for (int pass = 0; pass < 2; pass++) {
    int c0 = pass == 0 ? clo : 0;
    long lt = 0, li = 0, lt_exact = 0, dense = 0, sumdepth = 0;
    for (int i = 0; i < n; i++) {
      int nd = end[i] - i - 1, depth = 0, nanc_cols = 0;
      for (int a = par[i]; a >= 0; a = par[a]) depth++, nanc_cols += a >= c0;
      sumdepth += depth;
      lt += (long)nd * (end[i] - c0);
      lt_exact += (long)nd * (nanc_cols + end[i] - i);
      li += (long)depth * (n - c0);
    }
    for (int l = c0; l < n; l++) { /* column l of X: nonzero on anc(l), l and l's subtree */
      int depth = 0;
      for (int a = par[l]; a >= 0; a = par[a]) depth++;
      dense += (long)n * (depth + end[l] - l);
    }
    printf("%s: nv %d sum of depths %ld; solve L^-T %ld + L^-1 %ld = %ld (L^-T on the exact pattern %ld); "
           "dense M^-1 times the sparse columns %ld; dense gemm %ld\n", pass ? "dtau_du" : "dtau_dq", n, sumdepth,
           lt, li, lt + li, lt_exact, dense, (long)n * n * (n - c0));
  }
}

/* The state set again (caches dropped), then the kinematics. */
static void reset(tl_system *s, const double *q, int nq, const double *u, int nv) {
  double pos[3], R[9];
  tl_system_set_state(s, q, nq, u, nv, NULL);
  tl_system_body_pose(s, 0, pos, R, NULL);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  tl_load_options opt = tl_load_options_default();
  opt.base = strcmp(argv[2], "fixed") == 0 ? TL_BASE_FIXED : TL_BASE_AUTO;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error e;
  if (tl_model_load_urdf(argv[1], &opt, &m, &e) || tl_world_create(&w, &e) || tl_world_add_system(w, m, &s, &e)) {
    fprintf(stderr, "%s\n", e.message);
    return 1;
  }
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *q = calloc((size_t)nq, 8), *u = calloc((size_t)nv, 8), *tau = calloc((size_t)nv, 8),
         *du = calloc((size_t)nv, 8), *A = calloc((size_t)nv * nv, 8), *B = calloc((size_t)nv * nv, 8),
         *C = calloc((size_t)nv * nv, 8);
  tl_model_reference_q(m, q, nq, NULL);
  unsigned x = 12345;
  for (int i = 0; i < nv; i++) {
    x = x * 1103515245u + 12345u;
    u[i] = ((x >> 8) & 0xffff) / 32768.0 - 1.0;
    tau[i] = 0.3 * u[i] + 0.1;
  }
  for (int i = 0; i < nq; i++) q[i] += 0.01 * (i % 7);
  double n2 = 0;
  for (int b = 0; b < tl_model_nbody(m); b++)
    if (tl_model_joint_type(m, b) == TL_JOINT_FLOATING) {
      int qi = tl_model_joint_q_index(m, b) + 3;
      n2 = sqrt(q[qi] * q[qi] + q[qi + 1] * q[qi + 1] + q[qi + 2] * q[qi + 2] + q[qi + 3] * q[qi + 3]);
      for (int k = 0; k < 4; k++) q[qi + k] /= n2;
    }
  if (tl_system_set_state(s, q, nq, u, nv, &e)) return fprintf(stderr, "%s\n", e.message), 1;
  const char *mode = argc > 3 ? argv[3] : "time";
  const int bench = mode[0] == 'b';
  if (bench) mode++;
  if (argc > 4) tl_cpu_set_lanes_limit(atoi(argv[4]));
  tl_system_forward_dynamics(s, tau, du, nv, NULL);
  tl_system_forward_dynamics_derivatives(s, tau, A, B, C, nv, NULL);
  if (strcmp(mode, "callgrind") == 0) {
    if (bench) reset(s, q, nq, u, nv);
    for (int i = 0; i < 3; i++) tl_system_forward_dynamics(s, tau, du, nv, NULL);
    if (bench) tl_system_mass_matrix(s, C, nv, NULL);
    for (int i = 0; i < 3; i++) tl_system_forward_dynamics_derivatives(s, tau, A, B, C, nv, NULL);
  } else if (strcmp(mode, "flops") == 0) {
    flops(s);
  } else if (strcmp(mode, "dump") == 0) {
    for (size_t i = 0; i < (size_t)nv * nv; i++) printf("%.17g %.17g %.17g\n", A[i], B[i], C[i]);
  } else {
    enum { NB = 41 };
    double r[NB], ta[NB], td[NB];
    int n = nv > 30 ? 300 : 1000;
    for (int k = 0; k < NB; k++) {
      if (bench) reset(s, q, nq, u, nv);
      double t0 = now_ns();
      for (int i = 0; i < n; i++) tl_system_forward_dynamics(s, tau, du, nv, NULL);
      double t1 = now_ns();
      if (bench) {
        tl_system_mass_matrix(s, C, nv, NULL);
        t1 = now_ns();
      }
      for (int i = 0; i < n; i++) tl_system_forward_dynamics_derivatives(s, tau, A, B, C, nv, NULL);
      double t2 = now_ns();
      ta[k] = (t1 - t0) / n / 1e3, td[k] = (t2 - t1) / n / 1e3, r[k] = (t2 - t1) / (t1 - t0);
    }
    qsort(r, NB, sizeof r[0], cmpd), qsort(ta, NB, sizeof ta[0], cmpd), qsort(td, NB, sizeof td[0], cmpd);
    printf("%s nv %d: ABA %.2f us, aba_derivatives %.2f us, ratio (median of %d) %.2fx\n", argv[1], nv, ta[NB / 2],
           td[NB / 2], NB, r[NB / 2]);
  }
  free(q), free(u), free(tau), free(du), free(A), free(B), free(C);
  tl_world_free(w);
  tl_model_free(m);
  return 0;
}
