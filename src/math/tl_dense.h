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
 * Storage: row-major, leading dimension ld (>= n). Algorithms: Golub and Van
 * Loan, Matrix Computations, 4th ed., 2013 (Cholesky: Alg. 4.2.1; LU with
 * partial pivoting: Alg. 3.4.1; triangular solves: Alg. 3.1.1-3.1.2).
 * No allocation; every function is safe for n = 0. */
#ifndef TALUS_DENSE_H
#define TALUS_DENSE_H

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

/* Solve M z = r in place (r: n) by LU with partial pivoting (row
 * interchanges; ties go to the lowest row), M n x n row-major, leading
 * dimension ld, overwritten by its factors; piv: n ints of scratch.
 * Returns 0, or -1 when a pivot is exactly zero (M singular). */
int tl_dense_lu_solve(int n, double *M, int ld, int *piv, double *r);

#endif
