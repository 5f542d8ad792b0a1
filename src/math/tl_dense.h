/* Internal: small dense linear algebra with a FIXED summation order.
 *
 * Why not BLAS/LAPACK here: OpenBLAS selects its kernels from the CPU at run
 * time (Haswell, SkylakeX, Zen, ...), and each kernel sums dot products in
 * its own order. On ill-conditioned or degenerate problems (a boxed LCP with
 * redundant contacts, a pivot tie) a last-bit difference changes which pivot
 * wins, and a result that passes on one machine failed on the next (issue 11:
 * tests/test_lcp overconstrained seed 159). The contact solvers therefore use
 * these loops: every result is bit-identical on every x86-64 CPU, any
 * OPENBLAS_CORETYPE and any BLAS thread count. Their sizes (a few hundred
 * rows at most) are where a BLAS call's overhead dominates anyway.
 *
 * Storage: row-major, leading dimension ld (>= n), unless a function says
 * otherwise. Algorithms: Golub and Van Loan, Matrix Computations, 4th ed.,
 * 2013 (Cholesky: Alg. 4.2.1, its right-looking form Alg. 4.2.2; LU with
 * partial pivoting: Alg. 3.4.1; triangular solves: Alg. 3.1.1-3.1.2).
 * No allocation; every function is safe for n = 0. */
#ifndef TALUS_DENSE_H
#define TALUS_DENSE_H

#include <math.h>
#include <stddef.h>

#include "math/tl_vec2.h"

/* sum_i a[i] b[i], i ascending in four interleaved partial sums
 * (s0 + s1) + (s2 + s3) + tail: fixed order, so a fixed result. */
double tl_dense_dot(int n, const double *a, const double *b);

/* y += alpha x (n). */
void tl_dense_axpy(int n, double alpha, const double *x, double *y);

/* y += A x, A m x n row-major with leading dimension ld. */
void tl_dense_gemv_add(int m, int n, const double *A, int ld, const double *x, double *y);

/* Solve L z = y in place (forward substitution), L n x n lower triangular,
 * row-major, leading dimension ld, non-unit diagonal. */
void tl_dense_trsv_lower(int n, const double *L, int ld, double *y);

/* Solve L^T z = y in place (backward substitution), same L. */
void tl_dense_trsv_lower_trans(int n, const double *L, int ld, double *y);

/* Cholesky factor in place: on entry the lower triangle (row-major, ld) of a
 * symmetric matrix S, on return L with S = L L^T (the strict upper triangle is
 * not touched). Returns 0, or -1 when a pivot is not positive (S not positive
 * definite to working precision; L is then partly overwritten). */
int tl_dense_cholesky(int n, double *L, int ld);

/* The two other orders of the same factorization. The engine has one
 * Cholesky module (this one) but three summation orders, each kept because
 * a trajectory depends on its last bits and each serves its caller best:
 *  - tl_dense_cholesky (above): left-looking by rows, each entry
 *    S_ij - dot (tl_dense_dot's four partial sums), divided by L_jj; the
 *    Dantzig solver's factorizations (contact/lcp_dantzig.c) and the step
 *    derivatives.
 *  - tl_dense_cholesky_cm: left-looking by columns, each entry
 *    ((S_ij - L_i0 L_j0) - L_i1 L_j1) - ... in order, divided by L_jj, with a
 *    relative pivot test: the equality (mimic) groups of the per-contact
 *    solver (contact/solver_gs.c), a few rows. Its semidefinite variant
 *    tl_dense_cholesky_psd (same order, redundant columns dropped) serves
 *    the loop constraints' groups and their projection.
 *  - tl_dense_cholesky_rl: right-looking (outer products, two columns per
 *    pass on two-lane vectors), the same sequential order of each entry's
 *    subtractions but scaled by the reciprocal 1 / L_jj: the direct solves
 *    of the per-contact solver (contact/solver_direct.c), its hot path,
 *    where the outer-product form's short dependency chains are what a few
 *    dozen rows cost.
 * Merging them would change the last bits of every trajectory that uses
 * them (division against multiplication by the reciprocal, the dot's
 * partial sums), or the speed of the direct solves. */

/* Column Cholesky in place of a small symmetric positive definite n x n
 * matrix A (column-major, leading dimension n: entry (i, j) at A[j n + i];
 * the lower triangle read and written, i.e. L's column j at A + j n).
 * Column j: d = A_jj - sum_{k<j} L_jk^2 (in order of k); the pivot is
 * refused unless d > rtol |A_jj| and d > 0 (rtol 1e-14 in the engine), then
 * L_jj = sqrt(d), L_ij = (A_ij - sum_{k<j} L_ik L_jk) / L_jj. Returns 0, or
 * -1 when a pivot is refused (A then partly overwritten). */
int tl_dense_cholesky_cm(int n, double *A, double rtol);
/* Solve L L^T x = r in place (n; r becomes x), L from tl_dense_cholesky_cm:
 * forward then backward substitution, each sum in order, divided by L_ii. */
void tl_dense_cholesky_cm_solve(int n, const double *L, double *r);

/* Cholesky of a symmetric positive SEMI-definite n x n matrix that may be
 * rank deficient (the Delassus matrix of redundant constraint rows: a planar
 * linkage closed by a ball joint has a zero out-of-plane row, two loops may
 * repeat a row). Same layout and order as tl_dense_cholesky_cm; column j is
 * DROPPED (drop[j] = 1, its column of L zeroed, L_jj = 1) when its diagonal
 * A_jj <= atol or its pivot d = A_jj - sum_k L_jk^2 <= rtol A_jj: the row
 * is (to that tolerance) a combination of the rows kept before it. The
 * engine uses rtol 1e-10, atol 1e-12 times the largest diagonal entry. The
 * kept rows' factor is that of their own (positive definite) submatrix, so
 * its condition is bounded by about 1 / rtol whatever the redundancy.
 * Returns the number of dropped columns. Golub and Van Loan, Matrix
 * Computations, 4th ed., sec. 4.2.8 (semidefinite Cholesky), without the
 * symmetric pivoting (rows keep their order: the lowest-indexed of two
 * dependent rows is kept). */
int tl_dense_cholesky_psd(int n, double *A, double rtol, double atol, unsigned char *drop);
/* Solve with the factor of tl_dense_cholesky_psd: the kept rows' system
 * L L^T x = r exactly, x_j = 0 for dropped rows. For a consistent system
 * (r in the range of A, as for constraint rows whose dependent equations
 * agree) this is a solution of A x = r; its generalized impulse J^T x, hence
 * the motion, is the same as the minimum-norm solution's (J^T x is unique on
 * the solutions), and a zero row always gets x_j = 0. */
void tl_dense_cholesky_psd_solve(int n, const double *L, const unsigned char *drop, double *r);
/* The minimum-norm solution of a consistent rank-deficient system from the
 * factor of tl_dense_cholesky_psd. The dropped rows D are combinations of
 * the kept rows K: A_DK = Cm A_KK with Cm = A_DK A_KK^-1; every solution is
 * x_K = b - Cm^T x_D (b: the basic solution, x_D = 0) and the one of least
 * norm has (I + Cm Cm^T) x_D = Cm b (the normal equations of
 * min |b - Cm^T x_D|^2 + |x_D|^2). tl_dense_psd_minnorm_prepare: A0 the
 * matrix before factoring (column-major lower, as given to
 * tl_dense_cholesky_psd), L its factor; writes Cm (nd x n rows, zero on
 * the dropped columns) and the Cholesky factor of I + Cm Cm^T (nd x nd,
 * tl_dense_cholesky_cm's layout) into S; nd the number of dropped rows. */
void tl_dense_psd_minnorm_prepare(int n, const double *A0, const double *L, const unsigned char *drop, int nd,
                                  double *Cm, double *S);
/* x = A^+ r for a consistent r (in place; work: nd doubles). */
void tl_dense_psd_minnorm_solve(int n, const double *L, const unsigned char *drop, int nd, const double *Cm,
                                const double *S, double *r, double *work);

/* Right-looking Cholesky in place: on entry the lower triangle (row-major,
 * leading dimension n) of a symmetric matrix; on return L with S = L L^T in
 * the lower triangle AND mirrored in the strict upper triangle (row k's
 * upper part holds column k of L, so both substitutions read contiguous
 * rows), and inv[k] = 1 / L_kk (n doubles). Column k: L_kk = sqrt(M_kk),
 * L_ik = M_ik * inv[k], then the trailing triangle M_ij -= L_ik L_jk (two
 * columns per pass, each entry in the order of two single updates).
 * Returns 0, or -1 when a pivot is not positive. Inline (below): the direct
 * solves factor a few dozen rows many times per step, where a call costs
 * what its loops do when the engine is built without link-time
 * optimization. */
/* tl_dense_cholesky_rl_solve: solve L L^T x = e in place (n), L and inv
 * from tl_dense_cholesky_rl, both substitutions by columns (axpys, two per
 * pass), scaled by inv. */

/* Pivot of column k of tl_dense_cholesky_rl: L_kk = sqrt(M_kk), inv[k] = 1 / L_kk,
 * the column below it scaled by inv[k] and copied into row k's upper part.
 * Returns 0 if the pivot is not positive. */
static inline int tl_dense_rl_pivot(double *M, double *restrict inv, int n, int k) {
  double *Mk = M + (size_t)k * (size_t)n;
  const double d = Mk[k];
  if (!(d > 0)) return 0;
  Mk[k] = sqrt(d);
  const double s = inv[k] = 1.0 / Mk[k];
  for (int i = k + 1; i < n; i++) Mk[i] = M[(size_t)i * (size_t)n + k] *= s;
  return 1;
}

/* Right-looking Cholesky (tl_dense.h): M = L L^T of the n x n lower triangle
 * (row-major, row i at M + i n) in its outer-product form, Golub and Van Loan,
 * Alg. 4.2.2: column k is scaled by 1 / L_kk, then the trailing lower
 * triangle loses the outer product of that column. The updates of one k are
 * independent of each other, so the only chain of dependent operations is
 * one sqrt, one division and one multiply-add per column (the left-looking
 * form chains every entry of a row through its dot products), which is what
 * a few dozen rows cost. Columns go in pairs: column k + 1 takes column k's
 * update first, then the trailing triangle loses both outer products in one
 * pass (each entry in the order of two single updates: the result is that of
 * the one-column form bit for bit, with half the loads and stores). Column
 * k of L is also kept in row k's upper part, so every update reads
 * contiguous rows. inv [n] receives 1 / L_ii. Returns -1 if a pivot is not
 * positive, else 0. */
static inline int tl_dense_cholesky_rl(int n, double *M, double *restrict inv) {
  for (int k = 0; k < n; k += 2) {
    if (!tl_dense_rl_pivot(M, inv, n, k)) return -1;
    if (k + 1 == n) break;
    const double *Mk = M + (size_t)k * (size_t)n, *Mk1 = Mk + n;
    for (int i = k + 1; i < n; i++) M[(size_t)i * (size_t)n + k + 1] -= Mk[i] * Mk[k + 1];
    if (!tl_dense_rl_pivot(M, inv, n, k + 1)) return -1;
    for (int i = k + 2; i < n; i++)
      tl_v2_axmy2(M + (size_t)i * (size_t)n + k + 2, Mk + k + 2, Mk[i], Mk1 + k + 2, Mk1[i], i - k - 1);
  }
  return 0;
}

/* Solve L L^T x = e in place, L and inv = 1 / diag(L) from tl_dense_cholesky_rl:
 * both substitutions by columns (forward: column k of L, kept as row k's
 * upper part; backward: row i of L = column i of L^T), so each step's
 * updates are independent axpys, two columns per pass as in tl_dense_cholesky_rl. */
static inline void tl_dense_cholesky_rl_solve(int n, const double *L, const double *restrict inv, double *restrict e) {
  int k = 0;
  for (; k + 1 < n; k += 2) {
    const double *Lk = L + (size_t)k * (size_t)n, *Lk1 = Lk + n;
    const double x0 = e[k] *= inv[k];
    e[k + 1] -= Lk[k + 1] * x0;
    const double x1 = e[k + 1] *= inv[k + 1];
    tl_v2_axmy2(e + k + 2, Lk + k + 2, x0, Lk1 + k + 2, x1, n - k - 2);
  }
  if (k < n) e[k] *= inv[k];
  int i = n - 1;
  for (; i >= 1; i -= 2) {
    const double *Li = L + (size_t)i * (size_t)n, *Li1 = Li - n;
    const double x1 = e[i] *= inv[i];
    e[i - 1] -= Li[i - 1] * x1;
    const double x0 = e[i - 1] *= inv[i - 1];
    tl_v2_axmy2(e, Li, x1, Li1, x0, i - 1);
  }
  if (i == 0) e[0] *= inv[0];
}

/* Solve M z = r in place (r: n) by LU with partial pivoting (row
 * interchanges; ties go to the lowest row), M n x n row-major, leading
 * dimension ld, overwritten by its factors; piv: n ints of scratch.
 * Returns 0, or -1 when a pivot is exactly zero (M singular). */
int tl_dense_lu_solve(int n, double *M, int ld, int *piv, double *r);

#endif
