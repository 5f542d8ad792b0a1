/* L^T D L factorization of the joint-space mass matrix exploiting
 * branch-induced sparsity, the matching solve, and the dense inverse
 * (Featherstone, Rigid Body Dynamics Algorithms, 2008, sec. 6.5, Tables 6.3
 * and 6.4; Featherstone, "Efficient factorization of the joint-space inertia
 * matrix for branched kinematic trees", IJRR 24(6), 2005).
 *
 * With DOFs numbered depth first (dof_parent[k] < k), M[k][i] != 0 only when
 * i is an ancestor of k or k of i, and L keeps exactly that pattern (no
 * fill-in); so does W = L^-1. Only those entries are computed. The
 * descendants of a DOF are one contiguous index range (tl_sysdata.dof_end),
 * so the algorithms are written over descendants (the factorization in its
 * left-looking form, both sweeps of the solve, the columns of W): dense dot
 * products and axpys over contiguous memory, reading L column-wise from the
 * copy L^T that the factorization keeps in LD's upper triangle. Cost:
 * O(sum_k depth(k)^2) for the factorization, O(sum_k depth(k)) per solve.
 * Systems of at most TL_SMALL_NV DOFs run the same formulas dense and fully
 * unrolled, the inverse W D^-1 W^T (W = L^-1) included; larger systems take
 * the inverse of inverse_mul.c (tl_dyn_inverse_rows). */
#include "dynamics/dynamics.h"
#include "math/tl_vec2.h"

/* ---- tiny systems (nv <= TL_SMALL_NV) ----
 * For a handful of DOFs the loop and index overhead of the sparse code
 * outweighs its arithmetic, so the same left-looking factorization and the
 * same W D^-1 W^T inverse are run dense, with n a compile-time constant
 * (each switch case below gets its own fully unrolled copy; the inlining
 * is forced: left to the compiler, it stopped once the file grew). Dense is
 * exact here: M is zero outside the ancestor pattern and so are L and W (two
 * DOFs that are not on one root path have no common descendant), so the
 * result and the LD layout match the sparse code. */
#define TL_SMALL_NV 8

/* Left-looking L^T D L of A = M + diag(add), dense, as in factor_rows:
 * M (n x n, row-major, kg m^2 / kg), add ([n] or NULL), H (n x n: D on the
 * diagonal, L[k][j] at (k, j) and (j, k)), Dinv ([n], 1 / D). Featherstone
 * 2008, Table 6.3, unpivoted dense form. Returns 0 or k + 1 for a
 * non-positive pivot of DOF k. */
static inline __attribute__((always_inline)) int small_factor(const double *restrict M, const double *restrict add,
                                                              double *restrict H, double *restrict Dinv, const int n) {
  for (int k = n - 1; k >= 0; k--) {
    double u[TL_SMALL_NV], dkk = M[k * n + k] + (add ? add[k] : 0.0);
    for (int c = k + 1; c < n; c++) { /* u[c] = L[c][k] D[c] */
      u[c] = H[k * n + c] * H[c * n + c];
      dkk -= u[c] * H[k * n + c];
    }
    if (!(dkk > 0)) return k + 1;
    const double dinv = 1.0 / dkk;
    H[k * n + k] = dkk;
    Dinv[k] = dinv;
    for (int j = k - 1; j >= 0; j--) {
      double v = M[k * n + j];
      for (int c = k + 1; c < n; c++) v -= u[c] * H[j * n + c];
      v *= dinv;
      H[k * n + j] = v; /* L[k][j] */
      H[j * n + k] = v; /* and L^T */
    }
  }
  return 0;
}

/* X = A^-1 = W D^-1 W^T (n x n, row-major, symmetric) from small_factor's
 * H and Dinv, W = L^-1 by forward substitution: the dense form of
 * tl_dyn_inverse. */
static inline __attribute__((always_inline)) void small_inverse(const double *restrict H, const double *restrict Dinv,
                                                                double *restrict X, const int n) {
  double W[TL_SMALL_NV * TL_SMALL_NV]; /* W = L^-1, strictly lower part */
  for (int k = 0; k < n; k++)
    for (int i = k + 1; i < n; i++) {
      double s = H[i * n + k];
      for (int j = k + 1; j < i; j++) s += H[i * n + j] * W[j * n + k];
      W[i * n + k] = -s;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) { /* sum over k <= j of W[i][k] W[j][k] / D[k], W[k][k] = 1 */
      double s = (i == j ? 1.0 : W[i * n + j]) * Dinv[j];
      for (int k = 0; k < j; k++) s += W[i * n + k] * W[j * n + k] * Dinv[k];
      X[i * n + j] = s;
      X[j * n + i] = s;
    }
}

/* sum of x[j] y[j] over [0, n) (n doubles), as two interleaved partial sums
 * (even and odd j: one 2-wide vector register, tl_vec2.h). Plain BLAS-1 dot. */
static inline double dot2(const double *restrict x, const double *restrict y, int n) {
  switch (n) { /* the rows next to the leaves: one or two terms, without the loop */
    case 1: return x[0] * y[0];
    case 2: return x[0] * y[0] + x[1] * y[1];
    default: return tl_v2_dot(x, y, n);
  }
}

/* The factorization of tl_dyn_factor (shapes, units, source there) without
 * the LD_stamp bookkeeping: the dense unrolled path for nv <= TL_SMALL_NV,
 * else the sparse left-looking rows. */
static int factor_rows(tl_sysdata *d, const double *add) {
  const tl_model *m = d->m;
  const int n = m->nv, *end = d->dof_end, *anc = d->dof_anc, *anc_adr = d->dof_anc_adr;
  double *H = d->LD, *restrict Dinv = d->LDinv, *restrict u = d->vtmp;
  const double *M = d->M;
  switch (n) {
    case 1: return small_factor(M, add, H, Dinv, 1);
    case 2: return small_factor(M, add, H, Dinv, 2);
    case 3: return small_factor(M, add, H, Dinv, 3);
    case 4: return small_factor(M, add, H, Dinv, 4);
    case 5: return small_factor(M, add, H, Dinv, 5);
    case 6: return small_factor(M, add, H, Dinv, 6);
    case 7: return small_factor(M, add, H, Dinv, 7);
    case 8: return small_factor(M, add, H, Dinv, 8);
    default: break;
  }
  /* Left-looking (row by row from the leaves) form of Featherstone 2008,
   * Table 6.3: from M = L^T D L, for i = k or an ancestor of k,
   *   D[k] L[k][i] = M[k][i] - sum over the descendants c of k of
   *                  L[c][k] D[c] L[c][i].
   * The descendants of k are the contiguous range (k, end[k]), and column i
   * of L over them is row i of the upper triangle (L^T), so each entry is
   * one dense dot product with u[c] = L[c][k] D[c]. */
  for (int k = n - 1; k >= 0; k--) {
    double *restrict Hk = H + (size_t)k * (size_t)n;
    const double *restrict Mk = M + (size_t)k * (size_t)n;
    const int c0 = k + 1, nc = end[k] - c0;
    double dkk = Mk[k] + (add ? add[k] : 0.0);
    if (nc > 0) {
      const double *Dc = H + (size_t)c0 * (size_t)(n + 1); /* D[c] on LD's diagonal */
      for (int c = c0; c < end[k]; c++, Dc += n + 1) u[c] = Hk[c] * *Dc; /* L[c][k] D[c] */
      dkk -= dot2(u + c0, Hk + c0, nc);
    }
    if (!(dkk > 0)) return k + 1;
    const double dinv = 1.0 / dkk;
    Hk[k] = dkk;
    Dinv[k] = dinv;
    for (int t = anc_adr[k]; t < anc_adr[k + 1]; t++) {
      const int i = anc[t];
      double *Hi = H + (size_t)i * (size_t)n;
      double l = nc > 0 ? (Mk[i] - dot2(u + c0, Hi + c0, nc)) * dinv : Mk[i] * dinv;
      Hk[i] = l; /* L[k][i] */
      Hi[k] = l; /* and L^T */
    }
  }
  return 0;
}

int tl_dyn_factor(tl_sysdata *d, const double *add) {
  d->LD_stamp = 0;
  const int bad = factor_rows(d, add);
  if (!bad && !add) d->LD_stamp = d->M_stamp;
  return bad;
}

/* y[lo..hi) -= a x[lo..hi) (indices into rows y and x of doubles) in pairs
 * at even indices: a later pass over a sub-range then loads whole pairs that
 * were stored whole (no store-to-load forwarding stalls on the running
 * column of tl_dyn_inverse). Plain BLAS-1 axpy. */
static inline void axmy_pairs(double *restrict y, const double *restrict x, double a, int lo, int hi) {
  if ((lo & 1) && lo < hi) {
    y[lo] -= a * x[lo];
    lo++;
  }
  if (lo < hi) tl_v2_axmy(y + lo, x + lo, a, hi - lo);
}

void tl_dyn_solve(const tl_sysdata *d, double *x) {
  const int n = d->m->nv, *end = d->dof_end;
  const double *L = d->LD, *Dinv = d->LDinv;
  /* x <- L^-T x, last DOF first: x[i] -= sum over the descendants c of i of
   * L[c][i] x[c]; the descendants are (i, end[i]) and column i of L is row i
   * of LD's upper triangle. The first term is taken alone: x[i + 1] was
   * stored just before. */
  for (int i = n - 2; i >= 0; i--) {
    const int c1 = end[i];
    if (c1 > i + 1) {
      const double *Li = L + (size_t)i * (size_t)n;
      x[i] -= Li[i + 1] * x[i + 1] + dot2(Li + i + 2, x + i + 2, c1 - i - 2);
    }
  }
  /* x <- D^-1 x */
  for (int k = 0; k < n; k++) x[k] *= Dinv[k];
  tl_dyn_solve_lower(d, x);
}

void tl_dyn_solve_lower(const tl_sysdata *d, double *x) {
  const int n = d->m->nv, *end = d->dof_end;
  const double *L = d->LD;
  /* x <- L^-1 x, root first: once x[i] is final, x[c] -= L[c][i] x[i] for its descendants c */
  for (int i = 0; i < n - 1; i++)
    if (end[i] > i + 1) axmy_pairs(x, L + (size_t)i * (size_t)n, x[i], i + 1, end[i]);
}

void tl_dyn_inverse(tl_sysdata *d, double *X) {
  const double *L = d->LD, *dinv = d->LDinv;
  switch (d->m->nv) {
    case 1: small_inverse(L, dinv, X, 1); return;
    case 2: small_inverse(L, dinv, X, 2); return;
    case 3: small_inverse(L, dinv, X, 3); return;
    case 4: small_inverse(L, dinv, X, 4); return;
    case 5: small_inverse(L, dinv, X, 5); return;
    case 6: small_inverse(L, dinv, X, 6); return;
    case 7: small_inverse(L, dinv, X, 7); return;
    case 8: small_inverse(L, dinv, X, 8); return;
    default: tl_dyn_inverse_rows(d, X); return; /* inverse_mul.c */
  }
}
