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
 * O(sum_k depth(k)^2) for the factorization, O(sum_k depth(k)) per solve,
 * and for the inverse O(sum_k depth(k)^2 + sum_{i<=j} #common
 * ancestors(i, j)) instead of the O(n^2 depth) of n solves. Systems of at most TL_SMALL_NV DOFs run the same
 * formulas dense and fully unrolled. The inverse's second step also has a
 * 4-lane AVX variant, taken on CPUs that have AVX (math/tl_cpu.h): each
 * entry is the same sum in the same order, so the same bits. */
#include "dynamics/dynamics.h"
#include "math/tl_cpu.h"
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

/* Width of the register blocks of tl_dyn_inverse's second pass (doubles). */
#define BLK 8

/* Step 2 of tl_dyn_inverse (described there) for one vector type VT of NL
 * lanes (NL divides BLK): each entry of a block is its own sum over the
 * ancestors in the same order in every width (products and additions
 * separate), so every variant gives the same bits. */
#define INVERSE_ROWS(NAME, VT, NL, ATTR)                                                           \
  static ATTR void NAME(tl_sysdata *d, double *X, int *off, double *w) {                          \
    const int n = d->m->nv;                                                                       \
    const double *dinv = d->LDinv;                                                                \
    for (int j = n - 1; j >= 0; j--) {                                                            \
      double *Xj = X + (size_t)j * (size_t)n;                                                     \
      const int *anc = d->dof_anc + d->dof_anc_adr[j], r = d->dof_anc_adr[j + 1] - d->dof_anc_adr[j]; \
      for (int s = 0; s < r; s++) { /* ancestors of j, nearest first: anc[0] > anc[1] > ... */    \
        off[s] = anc[s] * n;                                                                      \
        w[s] = X[(size_t)off[s] + j] * dinv[anc[s]];                                              \
      }                                                                                           \
      int s0 = r; /* ancestors anc[s0..r) reach the current block (anc < block end) */            \
      int i = 0;                                                                                  \
      for (; i + BLK <= j + 1; i += BLK) {                                                        \
        while (s0 > 0 && anc[s0 - 1] < i + BLK) s0--;                                             \
        VT a[BLK / (NL)];                                                                         \
        for (int c = 0; c < BLK / (NL); c++) a[c] = (VT){0};                                      \
        for (int s = s0; s < r; s++) {                                                            \
          const double *Xs = X + off[s] + i;                                                      \
          const VT ws = (VT){0} + w[s];                                                           \
          for (int c = 0; c < BLK / (NL); c++) {                                                  \
            VT x;                                                                                 \
            memcpy(&x, Xs + (NL) * c, sizeof x);                                                  \
            a[c] += ws * x;                                                                       \
          }                                                                                       \
        }                                                                                         \
        memcpy(Xj + i, a, sizeof a);                                                              \
      }                                                                                           \
      while (s0 > 0) s0--; /* the tail [i, j] is within BLK of every remaining ancestor */        \
      for (; i + 2 <= j + 1; i += 2) {                                                            \
        double a0 = 0, a1 = 0;                                                                    \
        for (int s = s0; s < r; s++) {                                                            \
          const double *Xs = X + off[s] + i;                                                      \
          a0 += w[s] * Xs[0];                                                                     \
          a1 += w[s] * Xs[1];                                                                     \
        }                                                                                         \
        Xj[i] = a0;                                                                               \
        Xj[i + 1] = a1;                                                                           \
      }                                                                                           \
      if (i <= j) {                                                                               \
        double a0 = 0;                                                                            \
        for (int s = s0; s < r; s++) a0 += w[s] * X[off[s] + i];                                  \
        Xj[i] = a0;                                                                               \
      }                                                                                           \
      Xj[j] += dinv[j]; /* k = j: W[j][j] = 1 */                                                  \
      for (int i = 0; i < j; i++) X[(size_t)i * (size_t)n + j] = Xj[i];                           \
    }                                                                                             \
  }
INVERSE_ROWS(base_inverse_rows, tl_lanes, TL_LANES, )
#ifdef TL_CPU_X86_AVX
typedef double inv_v4 __attribute__((vector_size(32)));
INVERSE_ROWS(avx_inverse_rows, inv_v4, 4, __attribute__((target("avx"))))
#endif
#undef INVERSE_ROWS

void tl_dyn_inverse(tl_sysdata *d, double *X) {
  const tl_model *m = d->m;
  const int n = m->nv, *end = d->dof_end;
  const double *L = d->LD;
  int *off = d->dof_tmp;
  const double *dinv = d->LDinv;
  double *w = d->vtmp;
  switch (n) {
    case 1: small_inverse(L, dinv, X, 1); return;
    case 2: small_inverse(L, dinv, X, 2); return;
    case 3: small_inverse(L, dinv, X, 3); return;
    case 4: small_inverse(L, dinv, X, 4); return;
    case 5: small_inverse(L, dinv, X, 5); return;
    case 6: small_inverse(L, dinv, X, 6); return;
    case 7: small_inverse(L, dinv, X, 7); return;
    case 8: small_inverse(L, dinv, X, 8); return;
    default: break;
  }
  /* 1. W = L^-1 is unit lower triangular with L's sparsity: W[i][k] != 0 only
   * for k an ancestor of i (or k = i). Column k of W solves L w = e_k, which
   * only reaches k's subtree [k, end[k]); it is stored transposed as row k of
   * X: X[k][i] = W[i][k]. Forward substitution in push form: once W[i][k] is
   * final, it is subtracted, times column i of L (L[i'][i] for i' in i's
   * subtree, kept as row i of LD's upper triangle by tl_dyn_factor), from
   * every descendant i'. */
  for (int k = 0; k < n; k++) {
    double *restrict Xk = X + (size_t)k * (size_t)n;
    if (k >= BLK - 1) /* zeros left of the diagonal, for step 2's blocks */
      for (int c = 1; c < BLK; c++) Xk[k - c] = 0.0;
    else
      for (int c = 1; c <= k; c++) Xk[k - c] = 0.0;
    Xk[k] = 1.0;
    const double *restrict Lk = L + (size_t)k * (size_t)n; /* W[i][k] = -L[i][k] + ... */
    for (int i = k + 1; i < end[k]; i++) Xk[i] = -Lk[i];
    for (int i = k + 1; i < end[k]; i++)
      if (end[i] > i + 1) axmy_pairs(Xk, L + (size_t)i * (size_t)n, Xk[i], i + 1, end[i]);
  }
  /* 2. A^-1 = W D^-1 W^T: (A^-1)[j][i] = sum over the common ancestors k of i
   * and j of W[j][k] W[i][k] / D[k]. For i <= j these are the ancestors k of
   * j (and j itself) with k <= i, and every i in [k, j] lies in k's subtree,
   * so row j's lower part is sum over j's ancestors k of
   * (W[j][k] / D[k]) X[k][i], with X[k][k] = 1 and X[k][i] = 0 for i < k
   * (the BLK - 1 entries left of the diagonal were zeroed above, enough for
   * the blocks below). Each entry is accumulated in registers, BLK at a
   * time over the ancestors that reach the block, then mirrored into column
   * j. Rows are filled from the last: row j reads X's rows k < j over
   * columns <= j only, which no later row has mirrored over yet, and the
   * zeros left of their diagonals, which only their own row overwrites. */
#ifdef TL_CPU_X86_AVX
  if (tl_cpu_lanes() >= 4) {
    avx_inverse_rows(d, X, off, w);
    return;
  }
#endif
  base_inverse_rows(d, X, off, w);
}
