/* The row solve of the forward-dynamics derivatives: X <- -M^-1 X and
 * Y <- -M^-1 Y with the tree-sparse L^T D L factor (tl_dyn_solve_rows_neg,
 * dynamics.h), in a baseline variant (2-lane SSE2 / NEON vectors, or scalar)
 * and, on x86-64 CPUs with AVX, a 4-lane variant chosen at run time
 * (math/tl_cpu.h): the same arithmetic lane by lane, so the same bits. The
 * kernels are written once, in solve_rows_lanes.h, instantiated per width. */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_cpu.h"
#include "math/tl_math.h"

/* The baseline: tl_lanes (2 lanes, or a double without vector extensions). */
#define SR_VT tl_lanes
#define SR_NL TL_LANES
#define SR_ATTR
#define SR_SPLAT(c) tl_lanes_set((c), (c))
#define SR_CF_ALIGN _Alignof(tl_lanes) /* SSE2 multiplies take aligned memory operands (calloc: 16 bytes) */
#define SR(x) base_##x
#include "dynamics/solve_rows_lanes.h"

#ifdef TL_CPU_X86_AVX
typedef double sr_v4 __attribute__((vector_size(32)));
#define SR_VT sr_v4
#define SR_NL 4
#define SR_ATTR __attribute__((target("avx")))
#define SR_SPLAT(c) ((sr_v4){(c), (c), (c), (c)})
#define SR_CF_ALIGN 8 /* VEX memory operands may be unaligned */
#define SR(x) avx_##x
#include "dynamics/solve_rows_lanes.h"
#endif

/* Register blocks a row of the given width takes in the baseline's
 * base_pull_row (16-wide ones, then one each of 8, 4, 2, 1 as the bits of
 * the rest). */
static int pull_blocks(int width) {
  return width / 16 + (width >> 3 & 1) + (width >> 2 & 1) + (width >> 1 & 1) + (width & 1);
}

/* The start in [0, c_zero] of a row ending at e that takes the fewest
 * register blocks (the latest of those), for X whose columns [0, c_zero)
 * vanish. (Chosen per row in the L^-T pass as well, this measured 1 to 2 %
 * more instructions than one start for the whole solve.) */
static inline int best_start(int c_zero, int e) {
  int c0 = c_zero;
  for (int c = c_zero - 1; c >= 0; c--)
    if (pull_blocks(e - c) < pull_blocks(e - c0)) c0 = c;
  return c0;
}

/* X <- -(L^T D L)^-1 X and Y <- -(L^T D L)^-1 Y (nv x nv, row-major; the
 * columns are right-hand sides; Y may be NULL) for X and Y whose row k
 * vanishes outside the ancestors of k and its subtree [k, dof_end[k]) (true
 * of dtau_dq and dtau_du) and whose columns [0, cx) of X vanish (cx = 3 for
 * dtau_dq of a floating base: a translation of the whole system changes no
 * torque, so these columns of the solution are 0 too and are left alone),
 * with the factorization of tl_dyn_factor in d->LD (Featherstone 2008, Table
 * 6.4; Featherstone 2005, "Efficient factorization of the joint-space
 * inertia matrix for branched kinematic trees"), on whole rows, each in
 * "pull" form (every row written once per pass, the sums over the tree kept
 * in registers by column blocks), both matrices in the same sweep (each
 * row's coefficients gathered once):
 *   x <- L^-T x: last row first, row i -= sum over its descendants c of
 *      L[c][i] row c (the descendants are (i, end[i]), L[c][i] is row i of
 *      LD's upper triangle; L^-T only moves entries up the tree, so only
 *      the columns [cx, end[i]) can be non-zero);
 *   x <- -D^-1 x and x <- L^-1 x in one pass, root first: row k <- -D^-1[k]
 *      row k - sum over its ancestors i of L[k][i] row i, on the columns
 *      [cx, nv) (the rows fill in here; columns [end[k], nv) of row k are 0
 *      before, and stay 0 for a row without ancestors).
 * The register blocks are 8 accumulators wide (16 columns in the 2-lane
 * baseline, 32 with AVX: each row loaded is used for that many products),
 * narrower only at a row's end. O((2 sum of depths + nv) nv). Scratch:
 * d->drv_vec (free after tl_dyn_rnea_derivatives: its per-DOF vectors;
 * [5 nv] doubles of it), holding the coefficient vectors and the row
 * offsets. */
void tl_dyn_solve_rows_neg_from(tl_sysdata *d, double *X, int x_col0, double *Y) {
  /* X's columns [0, x_col0) vanish and so do the solution's: the solve may
   * start at any c <= x_col0 (zero columns stay exactly zero, up to sign).
   * Start where the full rows of the L^-1 pass, [c, nv), take the fewest
   * register blocks of the baseline (a floating base's x_col0 = 3 with an
   * even nv: from column 2, e.g. 48 = 3 x 16 columns for nv = 50 rather than
   * 16 + 16 + 8 + 4 + 2 + 1); every variant starts there, so the signs of
   * the zeros do not depend on the CPU either. */
  const int n = d->m->nv, c0 = best_start(x_col0, n);
#ifdef TL_CPU_X86_AVX
  if (tl_cpu_lanes() >= 4) {
    avx_solve(d, X, c0, Y, d->drv_vec);
    return;
  }
#endif
  base_solve(d, X, c0, Y, d->drv_vec);
}

void tl_dyn_solve_rows_neg(tl_sysdata *d, double *X, double *Y) {
  tl_dyn_solve_rows_neg_from(d, X, 0, Y);
}
