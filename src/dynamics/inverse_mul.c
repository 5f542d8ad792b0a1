/* M^-1 from its L^T D L factor (tl_dyn_inverse for nv > 8) and
 * -M^-1 [dtau_dq dtau_du] of the forward-dynamics derivatives (and of the
 * step derivatives' effective mass matrix) with that M^-1, which the callers
 * return anyway (tl_dyn_neg_inverse_mul, dynamics.h): both as sums of whole
 * rows kept in registers. A baseline variant
 * (2-lane SSE2 / NEON vectors, or scalar) and, on x86-64 CPUs with AVX, a
 * 4-lane variant chosen at run time (math/tl_cpu.h): the same arithmetic
 * lane by lane, so the same bits. The kernels are written once, in
 * inverse_mul_lanes.h, instantiated per width. */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_cpu.h"
#include "math/tl_math.h"

/* The baseline: tl_lanes (2 lanes, or a double without vector extensions). */
#define SR_VT tl_lanes
#define SR_NL TL_LANES
#define SR_ATTR
#define SR_SPLAT(c) tl_lanes_set((c), (c))
#define SR(x) base_##x
#include "dynamics/inverse_mul_lanes.h"

#ifdef TL_CPU_X86_AVX
typedef double im_v4 __attribute__((vector_size(32)));
#define SR_VT im_v4
#define SR_NL 4
#define SR_ATTR __attribute__((target("avx")))
#define SR_SPLAT(c) ((im_v4){(c), (c), (c), (c)})
#define SR(x) avx_##x
#include "dynamics/inverse_mul_lanes.h"
#endif

/* X <- -Minv X and Y <- -Minv Y (nv x nv row-major; the columns are
 * right-hand sides) for Minv = M^-1 dense and symmetric (tl_dyn_inverse)
 * and X, Y whose column c vanishes outside the ancestors of c and its
 * subtree [c, dof_end[c]) (the pattern of dtau_dq and dtau_du: DOFs on one
 * path), columns [0, x_col0) of X and [0, y_col0) of Y vanishing entirely.
 * Only those entries are read (the others may hold anything, NaN
 * included); every entry of X and Y is written, the vanishing columns as +0.
 *
 * Column c of the solution is -sum over the pattern rows k of X[k][c]
 * Minv[:, k], and Minv[:, k] = Minv[k, :] (symmetry), so row c of the
 * transposed solution is a sum of whole rows of Minv with the coefficients
 * X[k][c]: register blocks of up to 13 vectors over the row (one pass for
 * nv <= 52 with AVX), each row of Minv loaded once per term, then a
 * blocked transpose into X and Y. Multiply-adds: nv (depth(c) + subtree(c))
 * per column, the same count as a tree-sparse L^T D L solve of the two
 * matrices (Featherstone 2008, Table 6.4), which this replaced: it keeps
 * the sums in registers and touches each output once, where the solve's
 * row operations load and store rows per term (ANYmal C: 7.8k instead of
 * 13.2k instructions). This is Carpentier and Mansard's route (RSS 2018:
 * -M^-1 dtau with M^-1 from their Minv pass) with the tree pattern of the
 * columns. For nv <= TL_DRV_SMALL_NV the fully unrolled dense products of
 * tl_dyn_neg_mul_small. Scratch: d->drv_mat. */
void tl_dyn_neg_inverse_mul(tl_sysdata *d, const double *Minv, double *X, int x_col0, double *Y, int y_col0) {
  const int n = d->m->nv;
  if (tl_dyn_neg_mul_small(Minv, X, Y, n)) {
    for (int i = 0; i < n; i++) {
      for (int c = 0; c < x_col0; c++) X[(size_t)i * n + c] = 0.0;
      for (int c = 0; c < y_col0; c++) Y[(size_t)i * n + c] = 0.0;
    }
    return;
  }
  double *zx = d->drv_mat, *zy = zx + (size_t)n * n;
  memset(zx, 0, (size_t)x_col0 * n * sizeof(double));
  memset(zy, 0, (size_t)y_col0 * n * sizeof(double));
#ifdef TL_CPU_X86_AVX
  if (tl_cpu_lanes() >= 4) {
    avx_inverse_cols(d, Minv, X, x_col0, zx);
    avx_inverse_cols(d, Minv, Y, y_col0, zy);
    avx_transpose(X, zx, n);
    avx_transpose(Y, zy, n);
    return;
  }
#endif
  base_inverse_cols(d, Minv, X, x_col0, zx);
  base_inverse_cols(d, Minv, Y, y_col0, zy);
  base_transpose(X, zx, n);
  base_transpose(Y, zy, n);
}

/* The inverse for nv > 8 (tl_dyn_inverse, dynamics.h): L^-T and the
 * coefficients of the rows in d->drv_mat (2 nv^2). */
void tl_dyn_inverse_rows(tl_sysdata *d, double *X) {
  double *Y = d->drv_mat; /* [nv x nv] */
#ifdef TL_CPU_X86_AVX
  if (tl_cpu_lanes() >= 4) {
    avx_inverse_full(d, X, Y, Y + (size_t)d->m->nv * d->m->nv);
    return;
  }
#endif
  base_inverse_full(d, X, Y, Y + (size_t)d->m->nv * d->m->nv);
}

void tl_dyn_neg_inverse_mul_vec(const tl_sysdata *d, const double *Minv, const double *x, double *y) {
  const int n = d->m->nv;
  if (n < 2) { /* the kernels need a whole vector (TL_LANES <= 2); callers take this path for nv > 8 */
    for (int i = 0; i < n; i++) {
      double a = 0.0;
      for (int k = 0; k < n; k++) a -= x[k] * Minv[(size_t)k * n + i];
      y[i] = a;
    }
    return;
  }
#ifdef TL_CPU_X86_AVX
  if (tl_cpu_lanes() >= 4 && n >= 4) {
    avx_neg_mul_vec(Minv, x, y, n);
    return;
  }
#endif
  base_neg_mul_vec(Minv, x, y, n);
}
