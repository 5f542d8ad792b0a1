/* Small dense linear algebra with a fixed summation order (tl_dense.h). */
#include "math/tl_dense.h"

#include <math.h>
#include <stddef.h>


double tl_dense_dot(int n, const double *a, const double *b) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  double s = (s0 + s1) + (s2 + s3);
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

void tl_dense_axpy(int n, double alpha, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] += alpha * x[i];
}

void tl_dense_gemv_add(int m, int n, const double *A, int ld, const double *x, double *y) {
  for (int i = 0; i < m; i++) y[i] += tl_dense_dot(n, A + (size_t)i * ld, x);
}

void tl_dense_trsv_lower(int n, const double *L, int ld, double *y) {
  for (int i = 0; i < n; i++) {
    const double *Li = L + (size_t)i * ld;
    y[i] = (y[i] - tl_dense_dot(i, Li, y)) / Li[i];
  }
}

/* Column-oriented backward substitution: L^T's rows are L's columns, so after
 * z_i is known its multiples are taken off the rows above (row i of L is
 * contiguous). */
void tl_dense_trsv_lower_trans(int n, const double *L, int ld, double *y) {
  for (int i = n - 1; i >= 0; i--) {
    const double *Li = L + (size_t)i * ld;
    y[i] /= Li[i];
    for (int k = 0; k < i; k++) y[k] -= Li[k] * y[i];
  }
}

int tl_dense_cholesky(int n, double *L, int ld) {
  for (int i = 0; i < n; i++) {
    double *Li = L + (size_t)i * ld;
    for (int j = 0; j < i; j++) {
      const double *Lj = L + (size_t)j * ld;
      Li[j] = (Li[j] - tl_dense_dot(j, Li, Lj)) / Lj[j];
    }
    double d = Li[i] - tl_dense_dot(i, Li, Li);
    if (!(d > 0)) return -1;
    Li[i] = sqrt(d);
  }
  return 0;
}

/* ---------------- the column order of the Cholesky factorization (tl_dense.h; the right-looking
 * order is inline in the header) ---------------- */

/* Column Cholesky with a relative pivot tolerance (tl_dense.h). Kept in the
 * core rather than LAPACK's dpotrf: called for a dozen rows per step, where
 * a library call (and OpenBLAS waking its threads) costs more than the work. */
int tl_dense_cholesky_cm(int n, double *A, double rtol) {
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= A[k * n + j] * A[k * n + j];
    if (!(d > rtol * fabs(A[j * n + j])) || !(d > 0)) return -1;
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double x = A[j * n + i];
      for (int k = 0; k < j; k++) x -= A[k * n + i] * A[k * n + j];
      A[j * n + i] = x / d;
    }
  }
  return 0;
}

/* Solve L L^T x = r in place (r becomes x), L from tl_dense_cholesky_cm. */
void tl_dense_cholesky_cm_solve(int n, const double *L, double *r) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) r[i] -= L[k * n + i] * r[k];
    r[i] /= L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int k = i + 1; k < n; k++) r[i] -= L[i * n + k] * r[k];
    r[i] /= L[i * n + i];
  }
}


int tl_dense_cholesky_psd(int n, double *A, double rtol, double atol, unsigned char *drop) {
  int ndrop = 0;
  for (int j = 0; j < n; j++) {
    const double ajj = A[j * n + j];
    double d = ajj;
    for (int k = 0; k < j; k++) d -= A[k * n + j] * A[k * n + j];
    drop[j] = !(ajj > atol) || !(d > rtol * ajj);
    if (drop[j]) {
      ndrop++;
      A[j * n + j] = 1.0;
      for (int i = j + 1; i < n; i++) A[j * n + i] = 0.0;
      continue;
    }
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double x = A[j * n + i];
      for (int k = 0; k < j; k++) x -= A[k * n + i] * A[k * n + j];
      A[j * n + i] = x / d;
    }
  }
  return ndrop;
}

void tl_dense_cholesky_psd_solve(int n, const double *L, const unsigned char *drop, double *r) {
  for (int i = 0; i < n; i++) {
    if (drop[i]) {
      r[i] = 0.0;
      continue;
    }
    for (int k = 0; k < i; k++) r[i] -= L[k * n + i] * r[k];
    r[i] /= L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    if (drop[i]) continue;
    for (int k = i + 1; k < n; k++) r[i] -= L[i * n + k] * r[k];
    r[i] /= L[i * n + i];
  }
}

void tl_dense_psd_minnorm_prepare(int n, const double *A0, const double *L, const unsigned char *drop, int nd,
                                  double *Cm, double *S) {
  for (int d = 0, t = 0; d < n; d++) {
    if (!drop[d]) continue;
    double *c = Cm + (size_t)t * (size_t)n;
    for (int i = 0; i < n; i++) /* column d of A0 (its lower triangle holds (max, min)) */
      c[i] = drop[i] ? 0.0 : (i >= d ? A0[(size_t)d * (size_t)n + i] : A0[(size_t)i * (size_t)n + d]);
    tl_dense_cholesky_psd_solve(n, L, drop, c); /* row t of Cm = A_KK^-1 A_Kd */
    t++;
  }
  for (int a = 0; a < nd; a++)
    for (int b = a; b < nd; b++) {
      double x = a == b ? 1.0 : 0.0;
      for (int i = 0; i < n; i++) x += Cm[(size_t)a * (size_t)n + i] * Cm[(size_t)b * (size_t)n + i];
      S[a * nd + b] = x; /* (b, a), b >= a: column a */
    }
  tl_dense_cholesky_cm(nd, S, 0.0); /* I + Cm Cm^T: positive definite, every pivot >= 1 */
}

void tl_dense_psd_minnorm_solve(int n, const double *L, const unsigned char *drop, int nd, const double *Cm,
                                const double *S, double *r, double *work) {
  tl_dense_cholesky_psd_solve(n, L, drop, r);
  if (nd == 0) return;
  for (int t = 0; t < nd; t++) {
    double x = 0;
    for (int i = 0; i < n; i++) x += Cm[(size_t)t * (size_t)n + i] * r[i];
    work[t] = x;
  }
  tl_dense_cholesky_cm_solve(nd, S, work);
  for (int d = 0, t = 0; d < n; d++)
    if (drop[d]) r[d] = work[t++];
  for (int t = 0; t < nd; t++)
    for (int i = 0; i < n; i++) r[i] -= Cm[(size_t)t * (size_t)n + i] * work[t];
}

static void swap_rows(double *M, int ld, int n, int a, int b, double *r) {
  double *Ra = M + (size_t)a * ld, *Rb = M + (size_t)b * ld;
  for (int j = 0; j < n; j++) {
    double t = Ra[j];
    Ra[j] = Rb[j];
    Rb[j] = t;
  }
  double t = r[a];
  r[a] = r[b];
  r[b] = t;
}

int tl_dense_lu_solve(int n, double *M, int ld, int *piv, double *r) {
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(M[(size_t)i * ld + k]) > fabs(M[(size_t)p * ld + k])) p = i;
    piv[k] = p;
    if (M[(size_t)p * ld + k] == 0) return -1;
    if (p != k) swap_rows(M, ld, n, p, k, r);
    const double *Rk = M + (size_t)k * ld;
    for (int i = k + 1; i < n; i++) {
      double *Ri = M + (size_t)i * ld, f = Ri[k] / Rk[k];
      Ri[k] = f;
      if (f == 0) continue;
      for (int j = k + 1; j < n; j++) Ri[j] -= f * Rk[j];
      r[i] -= f * r[k];
    }
  }
  for (int i = n - 1; i >= 0; i--) { /* back substitution with U */
    const double *Ri = M + (size_t)i * ld;
    double s = r[i];
    for (int j = i + 1; j < n; j++) s -= Ri[j] * r[j];
    r[i] = s / Ri[i];
  }
  return 0;
}
