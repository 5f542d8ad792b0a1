/* Projected Gauss-Seidel / SOR for the boxed LCP of lcp.h on a dense A.
 *
 * Source: projected SOR (Cottle, Pang and Stone, The Linear Complementarity
 * Problem, 1992, ch. 5), in the boxed form with friction rows whose bounds
 * follow the current normal impulse, as in the row projection of R. Smith's
 * ODE QuickStep (ode/src/quickstep.cpp). Written from the method; no code
 * is taken. */
#include <math.h>
#include <stddef.h>

#include "contact/lcp.h"
#include "math/tl_dense.h"

/* Stagnation safeguard (see tl_lcp_pgs in lcp.h). */
#define PGS_WINDOW 50    /* sweeps without a new best residual before relaxing */
#define PGS_RELAX 0.7    /* factor on sor at each stagnation */
#define PGS_SOR_MIN 0.3  /* smallest relaxation */

static double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Bounds of row i at the current x (friction rows: +-mu_i max(x_n, 0)). */
static void pgs_bounds(int i, const double *lo, const double *hi, const int *findex,
                       const double *mu, const double *x, double *l, double *h) {
  if (findex && findex[i] >= 0) {
    double xn = x[findex[i]];
    *h = mu[i] * (xn > 0 ? xn : 0);
    *l = -*h;
  } else {
    *l = lo[i];
    *h = hi[i];
  }
}

/* One sweep over the rows; returns the largest natural-map residual seen
 * before each row's update. */
static double pgs_sweep(int n, const double *A, const double *b, const double *lo, const double *hi,
                        const int *findex, const double *mu, double *x, double sor) {
  double rmax = 0;
  for (int i = 0; i < n; i++) {
    const double *Ai = A + (size_t)i * n;
    double wi = b[i] + tl_dense_dot(n, Ai, x), l, h;
    pgs_bounds(i, lo, hi, findex, mu, x, &l, &h);
    double r = fabs(x[i] - clampd(x[i] - wi, l, h));
    if (!(r <= rmax)) rmax = r;
    double xi = Ai[i] > 0 ? x[i] - sor * wi / Ai[i] : x[i];
    x[i] = clampd(xi, l, h);
  }
  return rmax;
}

int tl_lcp_pgs(int n, const double *A, const double *b, const double *lo, const double *hi,
               const int *findex, const double *mu, double *x, int max_iter, double sor, double tol,
               tl_lcp_stats *stats) {
  tl_lcp_stats st = {0, 0, INFINITY, 0, sor};
  if (!x || !(sor > 0 && sor < 2) || tl_lcp_check(n, A, b, lo, hi, findex, mu) != 0) {
    if (stats) *stats = st;
    return -1;
  }
  int rc = -1, since_best = 0;
  double best = INFINITY;
  for (int it = 0; it < max_iter; it++) {
    double r = pgs_sweep(n, A, b, lo, hi, findex, mu, x, sor);
    st.outer = it + 1;
    if (r <= tol) {
      rc = 0;
      break;
    }
    if (r < best) {
      best = r;
      since_best = 0;
    } else if (++since_best >= PGS_WINDOW && sor > PGS_SOR_MIN) {
      sor = fmax(PGS_SOR_MIN, PGS_RELAX * sor); /* stagnating: damp the sweeps */
      st.relaxations++;
      best = r;
      since_best = 0;
    }
  }
  st.sor = sor;
  st.residual = tl_lcp_residual(n, A, b, lo, hi, findex, mu, x);
  if (stats) *stats = st;
  return rc;
}
