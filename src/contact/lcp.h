/* Internal: the dense boxed linear complementarity solver (Dantzig), used by
 * the world's TL_SOLVER_DANTZIG (contact/solver_direct.c). The engine's
 * projected Gauss-Seidel is the world's own, in velocity form on the
 * tree-sparse rows (contact/solver_gs.c); there is no dense PGS here.
 *
 * Boxed LCP (BLCP), ODE's formulation: find x, w with
 *   w = A x + b,  lo_i <= x_i <= hi_i, and for each i one of
 *   x_i = lo_i and w_i >= 0;  x_i = hi_i and w_i <= 0;  lo_i < x_i < hi_i and w_i = 0.
 * findex[i] >= 0 makes row i a friction row: its bounds are
 *   -mu_i x[findex[i]] <= x_i <= mu_i x[findex[i]] (lo/hi ignored), with the
 * normal row findex[i] solved with bounds [0, inf) (a friction pyramid when
 * two tangent rows share one normal). A is n x n symmetric positive
 * (semi-)definite, row-major. */
#ifndef TALUS_LCP_H
#define TALUS_LCP_H

#include <stddef.h>

/* Scratch for tl_lcp_dantzig, for problems of up to nmax rows: one block of
 * tl_lcp_work_bytes(nmax) bytes (the struct and its arrays, 64-byte
 * aligned). tl_lcp_work_place lays it out in caller memory `mem` (64-byte
 * aligned, that many bytes; the native engine's arena,
 * src/native/native_workspace.c) and returns it, valid while mem is;
 * tl_lcp_work_create allocates a block of its own (NULL: out of memory),
 * tl_lcp_work_free frees that. */
typedef struct tl_lcp_work tl_lcp_work;
size_t tl_lcp_work_bytes(int nmax);
tl_lcp_work *tl_lcp_work_place(void *mem, int nmax);
tl_lcp_work *tl_lcp_work_create(int nmax);
void tl_lcp_work_free(tl_lcp_work *w);

typedef struct tl_lcp_stats {
  int pivots;        /* pivot steps taken */
  int outer;         /* friction-bound updates (findex outer iterations) */
  double residual;   /* largest complementarity violation of the result */
} tl_lcp_stats;

/* Dantzig's principal pivoting method for the boxed LCP (Cottle and Dantzig
 * 1968; the form used by ODE's dSolveLCP, after Baraff, "Fast contact force
 * computation for nonpenetrating rigid bodies", SIGGRAPH 1994), with
 * fixed-order dense kernels (math/tl_dense.h, so the result does not depend
 * on the CPU's BLAS kernel) for the factorizations. Friction rows (findex) are handled by
 * outer iterations that update their bounds from the normal impulses.
 * x: result (n); returns 0 on success, -1 if no solution was found within
 * the pivot budget (x then holds the best iterate). No allocation: uses w.
 * Success: natural-map residual (tl_lcp_residual) <= 1e-10 max(1, |b|_inf).
 * -1 also when the friction bounds do not settle in 20 outer passes (best
 * iterate in x), and for n > nmax or input refused by tl_lcp_check (x = 0). */
int tl_lcp_dantzig(tl_lcp_work *w, int n, const double *A, const double *b, const double *lo,
                   const double *hi, const int *findex, const double *mu, double *x,
                   tl_lcp_stats *stats);

/* 0 if the BLCP data are usable: finite A and b, A_ii >= 0, no NaN bound,
 * lo_i <= hi_i, lo_i < inf, hi_i > -inf; a friction row's findex points to
 * another row that is not a friction row, has lo = 0 and hi = inf, and
 * mu_i is finite and >= 0. -1 otherwise. findex and mu may be NULL. */
int tl_lcp_check(int n, const double *A, const double *b, const double *lo, const double *hi,
                 const int *findex, const double *mu);

/* Largest natural-map residual max_i |x_i - clamp(x_i - w_i, l_i, h_i)| of
 * x, with w = A x + b and the bounds l, h of row i (friction rows:
 * +-mu_i max(x[findex[i]], 0)): the natural map of the box-constrained
 * problem (Facchinei and Pang, Finite-Dimensional Variational Inequalities
 * and Complementarity Problems, 2003), 0 exactly at a BLCP solution. */
double tl_lcp_residual(int n, const double *A, const double *b, const double *lo,
                       const double *hi, const int *findex, const double *mu, const double *x);

#endif
