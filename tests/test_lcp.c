/* Guards: src/contact/lcp_dantzig.c (boxed LCP), src/math/tl_dense.c (fixed-order kernels against
 * LAPACKE). */
/* Tests of the boxed LCP solver (src/contact/lcp.h): Dantzig pivoting.
 * (The engine's projected Gauss-Seidel is the world's, in velocity form:
 * tested through worlds by test_contact pgs; the dense raw-LCP PGS this
 * file also tested was removed in issue 22.)
 *
 *  - random seeded problems, A = B B^T + eps I, sizes 1..60, with mixes of
 *    unbounded rows, [0, inf) rows, finite boxes (some not containing 0),
 *    half-infinite rows and contacts (normal + two friction rows, findex):
 *    the BLCP conditions hold to 1e-9;
 *  - n <= 8: the same against an exhaustive enumeration of the 3^n cases
 *    (each row at lo, at hi, or interior with w = 0), written here;
 *  - positive semi-definite A: duplicate contacts (all solved), and
 *    over-constrained contacts (no false success; a failure returns its best
 *    iterate with its true residual);
 *  - two hand-computed 2D contact examples (a box corner sliding on the
 *    ground; a box resting flat with two corners, duplicate tangent rows);
 *  - refused input.
 * Prints the worst residuals and the pivots of the largest case. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/lcp.h"
#include "test_util.h"

#define NMAX 60
#define NBIG 240
#define BLCP_TOL 1e-9

/* ---------------------------------------------------------------- random numbers */

typedef struct rng {
  uint64_t s;
} rng;

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014). */
static uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }
static double rng_range(rng *r, double a, double b) { return a + (b - a) * rng_uniform(r); }
static double rng_normal(rng *r) {
  double u = rng_uniform(r), v = rng_uniform(r);
  return sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * 3.14159265358979323846 * v);
}

/* ---------------------------------------------------------------- problems */

typedef struct problem {
  int n;
  double *A, *b, *lo, *hi, *mu;
  int *findex;
} problem;

static problem prob_alloc(int n) {
  problem p = {n,
               calloc((size_t)n * n, sizeof(double)),
               calloc(n, sizeof(double)),
               calloc(n, sizeof(double)),
               calloc(n, sizeof(double)),
               calloc(n, sizeof(double)),
               calloc(n, sizeof(int))};
  return p;
}

static void prob_free(problem *p) {
  free(p->A);
  free(p->b);
  free(p->lo);
  free(p->hi);
  free(p->mu);
  free(p->findex);
}

enum { MIX_BOXES = 1, MIX_CONTACTS = 2, MIX_UNBOUNDED = 4, MIX_ALL = 7 };

/* Bounds of one non-contact row of a random kind. */
static void random_row(rng *r, int mix, double *lo, double *hi) {
  int kind = (int)(rng_uniform(r) * 6);
  if (!(mix & MIX_UNBOUNDED) && kind == 0) kind = 1;
  if (!(mix & MIX_BOXES)) kind = 1;
  switch (kind) {
    case 0:
      *lo = -INFINITY;
      *hi = INFINITY;
      break;
    case 1:
      *lo = 0;
      *hi = INFINITY;
      break;
    case 2:
      *lo = -rng_range(r, 0.05, 1);
      *hi = rng_range(r, 0.05, 1);
      break;
    case 3: /* a box without 0 */
      *lo = rng_range(r, 0.1, 0.5);
      *hi = *lo + rng_range(r, 0, 1);
      break;
    case 4:
      *lo = -INFINITY;
      *hi = rng_range(r, -0.5, 1);
      break;
    default: *lo = *hi = rng_range(r, -0.3, 0.3); break; /* fixed */
  }
}

/* Row kinds: contacts (n, t1, t2 with findex) when mix has MIX_CONTACTS,
 * else boxed rows of random kinds. */
static void random_bounds(rng *r, problem *p, int mix, double mumax) {
  int n = p->n;
  for (int i = 0; i < n;) {
    if ((mix & MIX_CONTACTS) && i + 3 <= n && (mix == MIX_CONTACTS || rng_uniform(r) < 0.5)) {
      p->lo[i] = 0;
      p->hi[i] = INFINITY;
      p->findex[i] = -1;
      for (int k = 1; k <= 2; k++) {
        p->findex[i + k] = i;
        p->mu[i + k] = rng_range(r, 0.1, mumax);
        p->lo[i + k] = -INFINITY; /* ignored for friction rows */
        p->hi[i + k] = INFINITY;
      }
      i += 3;
      continue;
    }
    p->findex[i] = -1;
    if (mix == MIX_CONTACTS) {
      p->lo[i] = 0;
      p->hi[i] = INFINITY;
    } else {
      random_row(r, mix, &p->lo[i], &p->hi[i]);
    }
    i++;
  }
}

/* A = B B^T + eps I with B n x m, entries N(0, 1/m). */
static void random_matrix(rng *r, problem *p, int m, double eps) {
  int n = p->n;
  double *B = malloc((size_t)n * m * sizeof(double));
  for (int k = 0; k < n * m; k++) B[k] = rng_normal(r) / sqrt((double)m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = i == j ? eps : 0;
      for (int k = 0; k < m; k++) s += B[i * m + k] * B[j * m + k];
      p->A[i * n + j] = p->A[j * n + i] = s;
    }
  free(B);
}

static problem random_problem(rng *r, int n, int mix, double eps, double mumax) {
  problem p = prob_alloc(n);
  random_matrix(r, &p, n, eps);
  for (int i = 0; i < n; i++) p.b[i] = rng_normal(r);
  random_bounds(r, &p, mix, mumax);
  return p;
}

/* ---------------------------------------------------------------- BLCP conditions */

static void bounds_at(const problem *p, const double *x, int i, double *l, double *h) {
  if (p->findex[i] >= 0) {
    double xn = x[p->findex[i]];
    *h = p->mu[i] * (xn > 0 ? xn : 0);
    *l = -*h;
  } else {
    *l = p->lo[i];
    *h = p->hi[i];
  }
}

static double maxd(double a, double b) { return a > b ? a : b; }
static double mind(double a, double b) { return a < b ? a : b; }

/* The largest violation of the BLCP conditions at x, checked directly: x
 * within its bounds, and for each row one of (x at lo, w >= 0), (x at hi,
 * w <= 0), (w = 0). Infinite bounds count as never reached. */
static double blcp_violation(const problem *p, const double *x) {
  int n = p->n;
  double worst = 0;
  for (int i = 0; i < n; i++) {
    double w = p->b[i], l, h;
    for (int j = 0; j < n; j++) w += p->A[i * n + j] * x[j];
    bounds_at(p, x, i, &l, &h);
    double vb = maxd(0, maxd(l - x[i], x[i] - h));
    double vlo = isfinite(l) ? maxd(fabs(x[i] - l), maxd(-w, 0)) : INFINITY;
    double vhi = isfinite(h) ? maxd(fabs(h - x[i]), maxd(w, 0)) : INFINITY;
    double v = maxd(vb, mind(fabs(w), mind(vlo, vhi)));
    if (!(v <= worst)) worst = v;
  }
  return worst;
}

static double max_abs_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = maxd(d, fabs(a[i] - b[i]));
  return d;
}

/* ---------------------------------------------------------------- enumeration */

/* Gaussian elimination with partial pivoting on M (n x n, destroyed);
 * returns 0 if a pivot is below 1e-12 times the largest entry. */
static int gauss_solve(int n, double *M, double *r) {
  double scale = 0;
  for (int k = 0; k < n * n; k++) scale = maxd(scale, fabs(M[k]));
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int i = c + 1; i < n; i++)
      if (fabs(M[i * n + c]) > fabs(M[piv * n + c])) piv = i;
    if (!(fabs(M[piv * n + c]) > 1e-12 * scale)) return 0;
    for (int j = 0; j < n; j++) {
      double t = M[c * n + j];
      M[c * n + j] = M[piv * n + j];
      M[piv * n + j] = t;
    }
    double t = r[c];
    r[c] = r[piv];
    r[piv] = t;
    for (int i = c + 1; i < n; i++) {
      double f = M[i * n + c] / M[c * n + c];
      for (int j = c; j < n; j++) M[i * n + j] -= f * M[c * n + j];
      r[i] -= f * r[c];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int j = i + 1; j < n; j++) r[i] -= M[i * n + j] * r[j];
    r[i] /= M[i * n + i];
  }
  return 1;
}

/* One of the 3^n cases: row i at lo (0), at hi (1) or interior (2). The
 * equations are linear also for friction rows (x_i = -+ mu_i x_n). Returns
 * 1 and x when the system is regular. */
static int enum_case(const problem *p, const int *digit, double *M, double *x) {
  int n = p->n;
  memset(M, 0, sizeof(double) * n * n);
  for (int i = 0; i < n; i++) {
    int f = p->findex[i];
    if (digit[i] == 2) {
      for (int j = 0; j < n; j++) M[i * n + j] = p->A[i * n + j];
      x[i] = -p->b[i];
    } else if (f >= 0) {
      M[i * n + i] = 1;
      M[i * n + f] = digit[i] == 0 ? p->mu[i] : -p->mu[i];
      x[i] = 0;
    } else {
      double bnd = digit[i] == 0 ? p->lo[i] : p->hi[i];
      if (!isfinite(bnd)) return 0;
      M[i * n + i] = 1;
      x[i] = bnd;
    }
  }
  return gauss_solve(n, M, x);
}

/* Every distinct solution among the 3^n cases (up to maxsol), verified with
 * blcp_violation <= tol. Returns their number. */
static int enum_solve(const problem *p, double tol, double *sols, int maxsol) {
  int n = p->n, total = 1, nsol = 0;
  for (int i = 0; i < n; i++) total *= 3;
  int digit[8];
  double M[64], x[8];
  for (int code = 0; code < total; code++) {
    for (int i = 0, c = code; i < n; i++, c /= 3) digit[i] = c % 3;
    if (!enum_case(p, digit, M, x) || blcp_violation(p, x) > tol) continue;
    int dup = 0;
    for (int s = 0; s < nsol && !dup; s++) dup = max_abs_diff(n, x, sols + s * n) < 1e-7;
    if (!dup && nsol < maxsol) memcpy(sols + n * nsol++, x, sizeof(double) * n);
  }
  return nsol;
}

/* ---------------------------------------------------------------- tests */

typedef struct figures {
  double worst_blcp, worst_enum, worst_psd, worst_over;
  int over_solved, over_total;
  int big_n, big_pivots, big_outer;
  int max_outer;
} figures;

static int solve_check(tl_lcp_work *W, const problem *p, double *x, tl_lcp_stats *st,
                       const char *what, int seed) {
  int rc = tl_lcp_dantzig(W, p->n, p->A, p->b, p->lo, p->hi, p->findex, p->mu, x, st);
  TL_CHECK(rc == 0, "%s seed %d n %d: dantzig returned %d (pivots %d outer %d residual %.3g)", what,
           seed, p->n, rc, st->pivots, st->outer, st->residual);
  return rc;
}

/* Random problems of every size 1..60 and mix: the BLCP conditions. */
static void test_random_blcp(tl_lcp_work *W, figures *fig) {
  int mixes[] = {MIX_BOXES, MIX_CONTACTS, MIX_BOXES | MIX_UNBOUNDED, MIX_ALL};
  double x[NMAX];
  int count = 0;
  for (int seed = 1; seed <= 12; seed++)
    for (int n = 1; n <= NMAX; n++)
      for (int m = 0; m < 4; m++) {
        rng r = {(uint64_t)seed * 1000003u + (uint64_t)n * 101u + (uint64_t)m};
        double eps = seed % 3 == 0 ? 1e-3 : 1e-1;
        problem p = random_problem(&r, n, mixes[m], eps, seed % 2 ? 0.5 : 1.0);
        tl_lcp_stats st;
        if (solve_check(W, &p, x, &st, "random", seed) == 0) {
          double v = blcp_violation(&p, x);
          fig->worst_blcp = maxd(fig->worst_blcp, v);
          if (st.outer > fig->max_outer) fig->max_outer = st.outer;
          if (v > BLCP_TOL)
            TL_CHECK(0, "random seed %d n %d mix %d: BLCP violation %.3g", seed, n, mixes[m], v);
          TL_CHECK(st.residual <= BLCP_TOL, "random seed %d n %d: reported residual %.3g", seed, n,
                   st.residual);
        }
        count++;
        prob_free(&p);
      }
  TL_CHECK(count == 12 * NMAX * 4, "random problem count %d", count);
}

/* n <= 8 against the exhaustive enumeration. */
static void test_enumeration(tl_lcp_work *W, figures *fig) {
  double x[8], sols[8 * 64];
  int mixes[] = {MIX_BOXES, MIX_CONTACTS, MIX_BOXES | MIX_UNBOUNDED, MIX_ALL};
  for (int seed = 1; seed <= 40; seed++)
    for (int n = 1; n <= 8; n++) {
      int mix = mixes[seed % 4];
      rng r = {(uint64_t)seed * 7919u + (uint64_t)n};
      problem p = random_problem(&r, n, mix, 0.05, 0.6);
      int friction = 0;
      for (int i = 0; i < n; i++) friction |= p.findex[i] >= 0;
      tl_lcp_stats st;
      if (solve_check(W, &p, x, &st, "enumeration", seed) == 0) {
        int ns = enum_solve(&p, 1e-9, sols, 64);
        double best = INFINITY;
        for (int s = 0; s < ns; s++) best = mind(best, max_abs_diff(n, x, sols + s * n));
        if (!friction)
          TL_CHECK(ns == 1, "enum seed %d n %d: %d solutions of a PD BLCP", seed, n, ns);
        TL_CHECK(ns >= 1 && best <= 1e-9, "enum seed %d n %d: %d solutions, nearest %.3g", seed, n,
                 ns, best);
        if (ns >= 1) fig->worst_enum = maxd(fig->worst_enum, best);
      }
      prob_free(&p);
    }
}

/* A contact problem A = J J^T / dof, b = J v (v random): contacts of random
 * rows of J, `dup` of them copies of earlier ones (two contacts at one
 * point). unb: the first two contacts become unbounded rows. */
static problem contact_problem(rng *r, int ncontact, int dup, int dof, double mu, int unb) {
  int n = 3 * ncontact;
  problem p = prob_alloc(n);
  double *J = calloc((size_t)n * dof, sizeof(double)), *v = calloc(dof, sizeof(double));
  for (int k = 0; k < dof; k++) v[k] = rng_normal(r);
  for (int c = 0; c < ncontact; c++) {
    int src = c >= ncontact - dup ? 3 * (int)(rng_uniform(r) * (ncontact - dup)) : -1;
    for (int k = 0; k < 3; k++)
      for (int d = 0; d < dof; d++)
        J[(3 * c + k) * dof + d] = src >= 0 ? J[(src + k) * dof + d] : rng_normal(r);
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int d = 0; d < dof; d++) s += J[i * dof + d] * J[j * dof + d];
      p.A[i * n + j] = s / dof;
    }
    for (int d = 0; d < dof; d++) p.b[i] += J[i * dof + d] * v[d];
  }
  for (int i = 0; i < n; i += 3) {
    int u = unb && i < 6;
    p.findex[i] = -1;
    p.lo[i] = u ? -INFINITY : 0;
    p.hi[i] = INFINITY;
    for (int k = 1; k <= 2; k++) {
      p.findex[i + k] = u ? -1 : i;
      p.mu[i + k] = mu;
      p.lo[i + k] = -INFINITY;
      p.hi[i + k] = INFINITY;
    }
  }
  free(J);
  free(v);
  return p;
}

/* Positive semi-definite A from duplicate contacts (J of full row rank
 * otherwise); the first two contacts unbounded in a quarter of the cases,
 * so that A_UU is singular too. Every problem must be solved. */
static void test_duplicates(tl_lcp_work *W, figures *fig) {
  double x[NMAX];
  /* Two equal unbounded rows (singular A_UU: regularized) and a [0, inf)
   * row: x0 + x1 = 1, split evenly by the regularization, x2 = 0. */
  double A3[9] = {1, 1, 0, 1, 1, 0, 0, 0, 1}, b3[3] = {-1, -1, 1};
  double lo3[3] = {-INFINITY, -INFINITY, 0}, hi3[3] = {INFINITY, INFINITY, INFINITY};
  double mu3[3] = {0, 0, 0};
  int f3[3] = {-1, -1, -1};
  tl_lcp_stats st;
  int rc = tl_lcp_dantzig(W, 3, A3, b3, lo3, hi3, f3, mu3, x, &st);
  TL_CHECK(rc == 0, "duplicate unbounded rows: rc %d", rc);
  TL_CHECK_NEAR(x[0] + x[1], 1.0, 1e-10, "duplicate unbounded rows: x0 + x1");
  TL_CHECK_NEAR(x[0], 0.5, 1e-10, "duplicate unbounded rows: even split");
  TL_CHECK_NEAR(x[2], 0.0, 0.0, "duplicate unbounded rows: x2");
  for (int seed = 1; seed <= 200; seed++) {
    rng r = {(uint64_t)seed * 31337u};
    int nu = 2 + (int)(rng_uniform(&r) * 6), dup = 1 + (int)(rng_uniform(&r) * 3);
    int dof = 3 * nu + (int)(rng_uniform(&r) * 5);
    problem p = contact_problem(&r, nu + dup, dup, dof, 0.7, seed % 4 == 0);
    if (solve_check(W, &p, x, &st, "duplicates", seed) == 0) {
      double viol = blcp_violation(&p, x);
      fig->worst_psd = maxd(fig->worst_psd, viol);
      TL_CHECK(viol <= BLCP_TOL, "duplicates seed %d n %d: BLCP violation %.3g", seed, p.n, viol);
    }
    prob_free(&p);
  }
}

/* Over-constrained contact (rank of A = dof < n, up to 13 contacts on 6 to
 * 17 DOFs, mu = 0.7): the friction outer loop may not settle in 20 passes.
 * Checked: no false success (rc 0 implies the BLCP holds), a failure returns
 * the best iterate with its residual, and at least 85% are solved (181 of
 * 200 when written). (The world finishes such a failure with its own PGS,
 * contact/solver_direct.c.) */
static void test_overconstrained(tl_lcp_work *W, figures *fig) {
  double x[NMAX];
  int solved = 0, total = 0;
  for (int seed = 1; seed <= 200; seed++) {
    rng r = {(uint64_t)seed * 7777u + 5u};
    int dof = 6 + (int)(rng_uniform(&r) * 12), nc = 2 + (int)(rng_uniform(&r) * 12);
    int dup = (int)(rng_uniform(&r) * (nc / 2));
    problem p = contact_problem(&r, nc, dup, dof, 0.7, seed % 4 == 0);
    tl_lcp_stats st;
    int rc = tl_lcp_dantzig(W, p.n, p.A, p.b, p.lo, p.hi, p.findex, p.mu, x, &st);
    double viol = blcp_violation(&p, x),
           res = tl_lcp_residual(p.n, p.A, p.b, p.lo, p.hi, p.findex, p.mu, x);
    total++;
    if (rc == 0) {
      solved++;
      fig->worst_over = maxd(fig->worst_over, viol);
      TL_CHECK(viol <= BLCP_TOL, "overconstrained seed %d n %d: rc 0 but violation %.3g", seed, p.n,
               viol);
    } else {
      TL_CHECK(res == st.residual && res > 0,
               "overconstrained seed %d: reported residual %.3g, x has %.3g", seed, st.residual, res);
    }
    prob_free(&p);
  }
  fig->over_solved = solved;
  fig->over_total = total;
  TL_CHECK(solved >= 0.85 * total, "overconstrained: %d of %d solved", solved, total);
}

/* A 2D box (mass 1, side 2, I = m (w^2 + h^2) / 12 = 2/3) touching the
 * ground with its corner r = (-1, -1) from the COM, velocity (1, -1), no
 * spin, mu = 0.5. Rows: tangent t (x), normal n (y); J_t = (1, 0, 1),
 * J_n = (0, 1, -1), A = J M^-1 J^T = [[2.5, -1.5], [-1.5, 2.5]], b = (1, -1).
 * Sticking would need lambda = (-1/4, 1/4), outside |t| <= n/2, so the box
 * slides: lambda_t = -lambda_n / 2 and 2.5 lambda_n - 1.5 lambda_t = 1 give
 * lambda_n = 4/13, lambda_t = -2/13, sliding speed w_t = 2/13 > 0. */
static void test_corner_example(tl_lcp_work *W) {
  double A[4] = {2.5, -1.5, -1.5, 2.5}, b[2] = {1, -1};
  double lo[2] = {-INFINITY, 0}, hi[2] = {INFINITY, INFINITY}, mu[2] = {0.5, 0}, x[2];
  int findex[2] = {1, -1};
  tl_lcp_stats st;
  int rc = tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st);
  TL_CHECK(rc == 0, "corner example: rc %d", rc);
  TL_CHECK_NEAR(x[1], 4.0 / 13.0, 1e-14, "corner lambda_n");
  TL_CHECK_NEAR(x[0], -2.0 / 13.0, 1e-14, "corner lambda_t");
  TL_CHECK_NEAR(A[0] * x[0] + A[1] * x[1] + b[0], 2.0 / 13.0, 1e-14, "corner sliding speed");
  printf("corner example: lambda_n %.17g lambda_t %.17g, pivots %d, outer %d\n", x[1], x[0],
         st.pivots, st.outer);
  /* Sticking when mu is large enough: lambda = (-1/4, 1/4). */
  mu[0] = 1.5;
  rc = tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st);
  TL_CHECK(rc == 0, "corner sticking: rc %d", rc);
  TL_CHECK_NEAR(x[1], 0.25, 1e-14, "corner sticking lambda_n");
  TL_CHECK_NEAR(x[0], -0.25, 1e-14, "corner sticking lambda_t");
}

/* The same box resting flat on two corners (-1, -1) and (1, -1), velocity
 * (0.1, -1, 0), mu = 0.5. Rows n1, t1, n2, t2: J_n1 = (0, 1, -1),
 * J_t1 = J_t2 = (1, 0, 1), J_n2 = (0, 1, 1): A is singular (equal tangent
 * rows). Both contacts stay closed and stick: v = 0, omega = 0 after the
 * impulse, so n1 + n2 = 1, t1 + t2 = -0.1, and zero spin needs
 * (n2 - n1) + (t1 + t2) = 0: n1 = 0.45, n2 = 0.55. */
static void test_flat_example(tl_lcp_work *W) {
  double J[4][3] = {{0, 1, -1}, {1, 0, 1}, {0, 1, 1}, {1, 0, 1}};
  double Minv[3] = {1, 1, 1.5}, v[3] = {0.1, -1, 0}, A[16], b[4], x[4];
  for (int i = 0; i < 4; i++) {
    b[i] = J[i][0] * v[0] + J[i][1] * v[1] + J[i][2] * v[2];
    for (int j = 0; j < 4; j++)
      A[i * 4 + j] =
          J[i][0] * J[j][0] * Minv[0] + J[i][1] * J[j][1] * Minv[1] + J[i][2] * J[j][2] * Minv[2];
  }
  double lo[4] = {0, 0, 0, 0}, hi[4] = {INFINITY, 0, INFINITY, 0}, mu[4] = {0, 0.5, 0, 0.5};
  int findex[4] = {-1, 0, -1, 2};
  tl_lcp_stats st;
  int rc = tl_lcp_dantzig(W, 4, A, b, lo, hi, findex, mu, x, &st);
  TL_CHECK(rc == 0, "flat example: rc %d", rc);
  TL_CHECK_NEAR(x[0], 0.45, 1e-12, "flat n1");
  TL_CHECK_NEAR(x[2], 0.55, 1e-12, "flat n2");
  TL_CHECK_NEAR(x[1] + x[3], -0.1, 1e-12, "flat t1 + t2");
  problem p = {4, A, b, lo, hi, mu, findex};
  TL_CHECK(blcp_violation(&p, x) <= 1e-12, "flat example BLCP violation %.3g",
           blcp_violation(&p, x));
  printf("flat example: n1 %.17g n2 %.17g t1 %.17g t2 %.17g\n", x[0], x[2], x[1], x[3]);
}

/* Bad input is refused with -1. */
static void test_refused(tl_lcp_work *W) {
  double A[4] = {1, 0, 0, 1}, b[2] = {-1, 1}, lo[2] = {0, 0}, hi[2] = {INFINITY, 1}, x[2];
  double mu[2] = {0, 0.5};
  int findex[2] = {-1, -1};
  tl_lcp_stats st;
  TL_CHECK(tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st) == 0, "valid input accepted");
  problem big = prob_alloc(NMAX + 1);
  double xbig[NMAX + 1];
  for (int i = 0; i <= NMAX; i++) {
    big.A[i * (NMAX + 2)] = 1;
    big.hi[i] = INFINITY;
    big.findex[i] = -1;
  }
  TL_CHECK(tl_lcp_dantzig(W, NMAX + 1, big.A, big.b, big.lo, big.hi, big.findex, big.mu, xbig,
                          &st) == -1,
           "n > nmax refused");
  prob_free(&big);
  b[0] = NAN;
  TL_CHECK(tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st) == -1, "NaN b refused");
  b[0] = -1;
  lo[1] = 2;
  TL_CHECK(tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st) == -1, "lo > hi refused");
  lo[1] = 0;
  findex[1] = 1;
  TL_CHECK(tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st) == -1,
           "findex to itself refused");
  findex[1] = 0;
  hi[0] = 5;
  TL_CHECK(tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st) == -1,
           "normal row not [0, inf) refused");
  hi[0] = INFINITY;
  TL_CHECK(tl_lcp_dantzig(W, 2, A, b, lo, hi, findex, mu, x, &st) == 0, "contact accepted");
  TL_CHECK(tl_lcp_dantzig(W, 0, A, b, lo, hi, findex, mu, x, &st) == 0, "n = 0 accepted");
}

/* The largest case: 80 contacts (n = 240), and the pivots it takes. */
static void test_big(figures *fig) {
  tl_lcp_work *W = tl_lcp_work_create(NBIG);
  rng r = {424242};
  problem p = random_problem(&r, NBIG, MIX_CONTACTS, 1e-2, 0.8);
  double *x = malloc(sizeof(double) * NBIG);
  tl_lcp_stats st;
  clock_t t0 = clock();
  int rc = tl_lcp_dantzig(W, p.n, p.A, p.b, p.lo, p.hi, p.findex, p.mu, x, &st);
  double ms = 1e3 * (double)(clock() - t0) / CLOCKS_PER_SEC;
  TL_CHECK(rc == 0, "big: rc %d", rc);
  double viol = blcp_violation(&p, x);
  TL_CHECK(viol <= BLCP_TOL, "big: BLCP violation %.3g", viol);
  printf("big case n %d: pivots %d, outer %d, residual %.3g, violation %.3g, %.1f ms\n", p.n,
         st.pivots, st.outer, st.residual, viol, ms);
  fig->big_n = p.n;
  fig->big_pivots = st.pivots;
  fig->big_outer = st.outer;
  free(x);
  prob_free(&p);
  tl_lcp_work_free(W);
}

int main(void) {
  tl_lcp_work *W = tl_lcp_work_create(NMAX);
  TL_CHECK(W != NULL, "work created");
  if (!W) return tl_test_finish();
  figures fig = {0};
  test_corner_example(W);
  test_flat_example(W);
  test_refused(W);
  test_random_blcp(W, &fig);
  test_enumeration(W, &fig);
  test_duplicates(W, &fig);
  test_overconstrained(W, &fig);
  test_big(&fig);
  printf("worst BLCP violation, random n <= %d: %.3g (most outer iterations %d)\n", NMAX,
         fig.worst_blcp, fig.max_outer);
  printf("worst distance to the enumerated solution, n <= 8: %.3g\n", fig.worst_enum);
  printf("worst BLCP violation, duplicate contacts: %.3g\n", fig.worst_psd);
  printf("over-constrained contacts: %d of %d solved, worst violation %.3g\n", fig.over_solved,
         fig.over_total, fig.worst_over);
  tl_lcp_work_free(W);
  return tl_test_finish();
}
