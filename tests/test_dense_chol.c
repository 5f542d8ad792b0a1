/* The engine's one Cholesky module (src/math/tl_dense.h) and its three
 * summation orders (issue 22 gathered the constraint solve's two private
 * factorizations there):
 *  - tl_dense_cholesky (left-looking by rows, four-way dot; Golub and Van
 *    Loan, Matrix Computations, 4th ed., Alg. 4.2.1) with tl_dense_trsv_*;
 *  - tl_dense_cholesky_cm (by columns, in-order sums, relative pivot test;
 *    the per-contact solver's equality groups) with its solve;
 *  - tl_dense_cholesky_rl (right-looking, two columns per pass, reciprocal
 *    scaling, L mirrored into the upper triangle; Alg. 4.2.2; the direct
 *    solves) with its solve.
 * Checked on 200 seeded random SPD matrices (B B^T + I, n 1..40): each
 * factor reproduces S (max |L L^T - S| <= 1e-12 max|S|), each solve leaves a
 * residual <= 1e-12 |S| |x|, the three factors agree within 1e-12 of each
 * other (they need not agree bit for bit: the orders differ), rl's mirror
 * holds exactly; a matrix that is not positive definite is refused by all
 * three (-1); a pivot of 1e-15 relative to its diagonal entry is refused by
 * cm's tolerance 1e-14 and accepted by the other two; n = 0 is a no-op. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/tl_dense.h"
#include "test_util.h"

#define NMAX 40

static uint64_t rng_s = 12345;
static double urand(void) { /* splitmix64 */
  uint64_t z = (rng_s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

/* max |L L^T - S| over the lower triangle (L row-major, or column-major). */
static double recon_err(int n, const double *S, const double *L, int colmajor) {
  double worst = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0;
      for (int k = 0; k <= j; k++) {
        double lik = colmajor ? L[k * n + i] : L[i * n + k], ljk = colmajor ? L[k * n + j] : L[j * n + k];
        s += lik * ljk;
      }
      worst = fmax(worst, fabs(s - S[i * n + j]));
    }
  return worst;
}

static double resid(int n, const double *S, const double *x, const double *r) {
  double worst = 0;
  for (int i = 0; i < n; i++) {
    double s = -r[i];
    for (int j = 0; j < n; j++) s += S[i * n + j] * x[j];
    worst = fmax(worst, fabs(s));
  }
  return worst;
}

int main(void) {
  static double B[NMAX * NMAX], S[NMAX * NMAX], L1[NMAX * NMAX], L2[NMAX * NMAX], L3[NMAX * NMAX];
  double inv[NMAX], r[NMAX], x1[NMAX], x2[NMAX], x3[NMAX];
  double worst_rec = 0, worst_res = 0, worst_agree = 0;
  for (int trial = 0; trial < 200; trial++) {
    int n = 1 + trial % NMAX;
    for (int i = 0; i < n * n; i++) B[i] = urand();
    double smax = 0, xmax = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = i == j ? 1.0 : 0.0;
        for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
        S[i * n + j] = s;
        smax = fmax(smax, fabs(s));
      }
    for (int i = 0; i < n; i++) r[i] = urand();
    memcpy(L1, S, sizeof(double) * n * n);
    memcpy(L2, S, sizeof(double) * n * n); /* symmetric: column-major = row-major */
    memcpy(L3, S, sizeof(double) * n * n);
    int ok1 = tl_dense_cholesky(n, L1, n) == 0, ok2 = tl_dense_cholesky_cm(n, L2, 1e-14) == 0;
    int ok3 = tl_dense_cholesky_rl(n, L3, inv) == 0;
    if (!TL_CHECK(ok1 && ok2 && ok3, "trial %d n %d: SPD refused (%d %d %d)", trial, n, ok1, ok2, ok3)) continue;
    double e1 = recon_err(n, S, L1, 0), e2 = recon_err(n, S, L2, 1), e3 = recon_err(n, S, L3, 0);
    worst_rec = fmax(worst_rec, fmax(e1, fmax(e2, e3)) / smax);
    TL_CHECK(fmax(e1, fmax(e2, e3)) <= 1e-12 * smax, "trial %d n %d: |L L^T - S| %.3g %.3g %.3g", trial, n, e1, e2,
             e3);
    int mirror = 1;
    for (int i = 0; i < n; i++) {
      mirror &= inv[i] == 1.0 / L3[i * n + i];
      for (int k = 0; k < i; k++) mirror &= L3[k * n + i] == L3[i * n + k];
    }
    TL_CHECK(mirror, "trial %d n %d: rl's mirror or inv", trial, n);
    for (int i = 0; i < n; i++)
      for (int k = 0; k <= i; k++) {
        double a = L1[i * n + k], b = L2[k * n + i], c = L3[i * n + k];
        worst_agree = fmax(worst_agree, fmax(fabs(a - b), fabs(a - c)) / sqrt(smax));
      }
    memcpy(x1, r, sizeof(double) * n);
    memcpy(x2, r, sizeof(double) * n);
    memcpy(x3, r, sizeof(double) * n);
    tl_dense_trsv_lower(n, L1, n, x1);
    tl_dense_trsv_lower_trans(n, L1, n, x1);
    tl_dense_cholesky_cm_solve(n, L2, x2);
    tl_dense_cholesky_rl_solve(n, L3, inv, x3);
    for (int i = 0; i < n; i++) xmax = fmax(xmax, fabs(x1[i]));
    double r1 = resid(n, S, x1, r), r2 = resid(n, S, x2, r), r3 = resid(n, S, x3, r);
    worst_res = fmax(worst_res, fmax(r1, fmax(r2, r3)) / (smax * xmax));
    TL_CHECK(fmax(r1, fmax(r2, r3)) <= 1e-12 * smax * xmax, "trial %d n %d: solve residuals %.3g %.3g %.3g", trial,
             n, r1, r2, r3);
  }
  TL_CHECK(worst_agree <= 1e-12, "the three factors differ by %.3g (relative)", worst_agree);
  printf("200 SPD matrices n 1..%d: worst |LL^T - S| / max|S| %.3g, worst solve residual %.3g, the three "
         "factors agree within %.3g\n", NMAX, worst_rec, worst_res, worst_agree);

  /* not positive definite: refused by all three */
  double A[4] = {1, 2, 2, 1}, M[4];
  memcpy(M, A, sizeof(M));
  TL_CHECK(tl_dense_cholesky(2, M, 2) == -1, "indefinite refused (rows)");
  memcpy(M, A, sizeof(M));
  TL_CHECK(tl_dense_cholesky_cm(2, M, 1e-14) == -1, "indefinite refused (columns)");
  memcpy(M, A, sizeof(M));
  TL_CHECK(tl_dense_cholesky_rl(2, M, inv) == -1, "indefinite refused (right-looking)");
  /* a pivot 1e-15 of its diagonal entry: cm's relative tolerance refuses it */
  double P[4] = {1, 1, 1, 1 + 1e-15};
  memcpy(M, P, sizeof(M));
  TL_CHECK(tl_dense_cholesky_cm(2, M, 1e-14) == -1, "tiny relative pivot refused by rtol 1e-14");
  memcpy(M, P, sizeof(M));
  TL_CHECK(tl_dense_cholesky_cm(2, M, 0.0) == 0, "the same pivot accepted by rtol 0");
  memcpy(M, P, sizeof(M));
  TL_CHECK(tl_dense_cholesky(2, M, 2) == 0, "the same pivot accepted (rows)");
  memcpy(M, P, sizeof(M));
  TL_CHECK(tl_dense_cholesky_rl(2, M, inv) == 0, "the same pivot accepted (right-looking)");
  /* n = 0 */
  TL_CHECK(tl_dense_cholesky_cm(0, M, 1e-14) == 0 && tl_dense_cholesky_rl(0, M, inv) == 0, "n = 0 accepted");
  tl_dense_cholesky_cm_solve(0, M, r);
  tl_dense_cholesky_rl_solve(0, M, inv, r);
  return tl_test_finish();
}
