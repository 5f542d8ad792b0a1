/* Dantzig's principal pivoting method for the boxed LCP of lcp.h.
 *
 * Sources: R. W. Cottle and G. B. Dantzig, "Complementary pivot theory of
 * mathematical programming", Linear Algebra Appl. 1, 1968 (principal
 * pivoting); D. Baraff, "Fast contact force computation for nonpenetrating
 * rigid bodies", SIGGRAPH 1994 (drive one index to complementarity while the
 * processed ones stay complementary; the clamped / non-clamped index sets);
 * R. Smith's Open Dynamics Engine, ode/src/lcp.cpp (the boxed form with lo,
 * hi and findex). Written from the published method; no code is taken.
 *
 * The processed indices are split into
 *   C     clamped: w_i = 0, lo_i <= x_i <= hi_i (A_CC is kept factored),
 *   LO/HI non-clamped: x_i at its bound with w_i of the required sign,
 *   FIXED lo_i == hi_i: any w_i is complementary.
 * Unprocessed indices keep x_i at clamp(0, lo_i, hi_i). Unbounded rows are
 * solved first as equalities (they start and stay in C). Each further index
 * i is driven: x_i moves by s (s = -sign w_i), x_C follows so that w_C stays
 * 0 (A_CC dx_C = -A_Ci s), and the largest step is taken that keeps every
 * processed index complementary; the index that blocks changes set (pivot),
 * until i itself reaches w_i = 0 (joins C) or a bound (joins LO/HI).
 *
 * The Cholesky factor L of A_CC is updated, not recomputed, when C changes:
 * appending a row costs one triangular solve; removing index p is a rank-1
 * update of the trailing block (Gill, Golub, Murray and Saunders, "Methods
 * for modifying matrix factorizations", Math. Comp. 28, 1974). A full
 * factorization (tl_dense_cholesky) is used for the unbounded block and when a
 * regularization 1e-12 trace(A)/n must be added because A_CC is singular (A
 * positive semi-definite, e.g. duplicate rows).
 *
 * Friction rows (findex) get fixed bounds +-mu x_n inside one pivoting
 * solve (outer iterations, at most 20). The first solve sets them from the
 * normal impulse current when the row is processed (normal rows go first,
 * as in ODE); later solves from the previous result. The bare bound update
 * is a fixed-point iteration that contracts only by about mu |A_nt| / A_nn
 * per pass and can cycle when normal impulses are not unique (A singular),
 * hence three additions:
 *  - after each solve, the index sets it found are solved exactly with the
 *    friction bounds tied to the normal impulses (x_i = +-mu_i x_n as linear
 *    equations, LU with partial pivoting), a Newton step on the piecewise-linear
 *    fixed-point map; it replaces x when its residual is below the accepted
 *    one, and then the bounds no longer change;
 *  - the bounds of the second and third solves come from that Newton
 *    solution even when it was rejected;
 *  - from the fourth solve on, a proximal term rho (x - x_prev) with
 *    rho = 0.1 trace(A)/n makes the solution unique and continuous in the
 *    bounds (proximal point method: Rockafellar, "Monotone operators and the
 *    proximal point algorithm", SIAM J. Control Optim. 14, 1976).
 * The result is accepted when its natural-map residual (tl_lcp_residual) is
 * at most 1e-10 max(1, |b|_inf); otherwise -1 and the best iterate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcp.h"
#include "math/tl_dense.h"

enum { ST_FREE = 0, ST_C, ST_LO, ST_HI, ST_FIXED };
enum { PV_NONE = 0, PV_I_TO_C, PV_I_TO_BOUND, PV_C_TO_N, PV_N_TO_C };

#define LCP_MAX_OUTER 20    /* friction-bound updates at most */
#define LCP_OUTER_TOL 1e-12 /* friction bounds count as settled below this change */
#define LCP_NEWTON_UNTIL 2  /* outer passes whose bounds come from the index-set solution */
#define LCP_PROX_FROM 3     /* first outer pass with the proximal term */
#define LCP_PROX 0.1        /* proximal weight rho, times trace(A)/n */
#define LCP_REG 1e-12       /* regularization of a singular A_CC, times trace(A)/n */
#define LCP_ACCEPT 1e-10    /* accepted residual, times max(1, |b|_inf) */
#define LCP_TINY_REL 1e-11  /* relative size below which a pivot or rate counts as zero */

struct tl_lcp_work {
  int nmax;
  double *L;                        /* nmax x nmax, lower Cholesky factor of A_CC (+ reg I) */
  double *w, *y, *v, *dw, *lo, *hi; /* each nmax */
  double *best, *xp, *prox;         /* best iterate; polished x; proximal centre */
  int *state, *cidx, *cpos, *ipiv;  /* set of each index; members of C; position in C */
  /* the problem being solved */
  int n, nc, dyn;
  const double *A, *b, *mu;
  const int *findex;
  double *x;
  double reg, regunit, amax, rho;
  int pivots, budget;
};

/* The scratch's layout in one block: the struct, then L, the nine double
 * vectors and the four int vectors, each at a 64-byte boundary. */
#define LCP_ALIGN(x) (((x) + 63) & ~(size_t)63)
#define LCP_DVECS(X) X(w) X(y) X(v) X(dw) X(lo) X(hi) X(best) X(xp) X(prox)
#define LCP_IVECS(X) X(state) X(cidx) X(cpos) X(ipiv)

size_t tl_lcp_work_bytes(int nmax) {
  size_t n = (size_t)(nmax < 1 ? 1 : nmax), bytes = LCP_ALIGN(sizeof(tl_lcp_work)) + LCP_ALIGN(n * n * sizeof(double));
#define LCP_D(name) bytes += LCP_ALIGN(n * sizeof(double));
#define LCP_I(name) bytes += LCP_ALIGN(n * sizeof(int));
  LCP_DVECS(LCP_D)
  LCP_IVECS(LCP_I)
#undef LCP_D
#undef LCP_I
  return bytes;
}

tl_lcp_work *tl_lcp_work_place(void *mem, int nmax) {
  if (nmax < 1) nmax = 1;
  size_t n = (size_t)nmax;
  unsigned char *p = mem;
  tl_lcp_work *w = mem;
  memset(w, 0, sizeof(*w));
  w->nmax = nmax;
  p += LCP_ALIGN(sizeof(tl_lcp_work));
  w->L = (double *)(void *)p;
  p += LCP_ALIGN(n * n * sizeof(double));
#define LCP_D(name) w->name = (double *)(void *)p, p += LCP_ALIGN(n * sizeof(double));
#define LCP_I(name) w->name = (int *)(void *)p, p += LCP_ALIGN(n * sizeof(int));
  LCP_DVECS(LCP_D)
  LCP_IVECS(LCP_I)
#undef LCP_D
#undef LCP_I
  return w;
}

tl_lcp_work *tl_lcp_work_create(int nmax) {
  void *mem = aligned_alloc(64, tl_lcp_work_bytes(nmax));
  return mem ? tl_lcp_work_place(mem, nmax) : NULL;
}

void tl_lcp_work_free(tl_lcp_work *w) { free(w); }

/* ---------------------------------------------------------------- shared helpers */

static double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* The bounds of row i at x: friction rows +-mu_i max(x_n, 0), others lo/hi. */
static void row_bounds(int i, const double *lo, const double *hi, const int *findex,
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

int tl_lcp_check(int n, const double *A, const double *b, const double *lo, const double *hi,
                 const int *findex, const double *mu) {
  if (n < 0 || (n > 0 && (!A || !b || !lo || !hi))) return -1;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      if (!isfinite(A[(size_t)i * n + j])) return -1;
    if (!(A[(size_t)i * n + i] >= 0) || !isfinite(b[i])) return -1;
    if (findex && findex[i] >= 0) {
      int f = findex[i];
      if (f >= n || f == i || findex[f] >= 0 || !mu || !isfinite(mu[i]) || mu[i] < 0) return -1;
      if (lo[f] != 0 || hi[f] != INFINITY) return -1;
    } else if (isnan(lo[i]) || isnan(hi[i]) || lo[i] > hi[i] || lo[i] == INFINITY ||
               hi[i] == -INFINITY) {
      return -1;
    }
  }
  return 0;
}

double tl_lcp_residual(int n, const double *A, const double *b, const double *lo, const double *hi,
                       const int *findex, const double *mu, const double *x) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    double wi = b[i] + tl_dense_dot(n, A + (size_t)i * n, x), l, h;
    row_bounds(i, lo, hi, findex, mu, x, &l, &h);
    double ri = fabs(x[i] - clampd(x[i] - wi, l, h));
    if (!(ri <= r)) r = ri; /* a NaN wins */
  }
  return r;
}

/* ---------------------------------------------------------------- Cholesky of A_CC */

static double aij(const tl_lcp_work *W, int i, int j) { return W->A[(size_t)i * W->n + j]; }

/* The matrix of the pivoting solve: A + rho I (rho > 0 for a proximal pass). */
static double aeff(const tl_lcp_work *W, int i, int j) {
  return aij(W, i, j) + (i == j ? W->rho : 0);
}

/* Solve A_CC y = y in place with the factor L (forward, then backward). */
static void c_solve(tl_lcp_work *W, double *y) {
  if (W->nc == 0) return;
  tl_dense_trsv_lower(W->nc, W->L, W->nmax, y);
  tl_dense_trsv_lower_trans(W->nc, W->L, W->nmax, y);
}

/* Factor A_CC + reg I from scratch (Cholesky, tl_dense_cholesky, in place
 * on the row-major lower triangle). Returns 0 on success. */
static int chol_refactor(tl_lcp_work *W) {
  int k = W->nc, ld = W->nmax;
  for (int r = 0; r < k; r++)
    for (int c = 0; c <= r; c++)
      W->L[(size_t)r * ld + c] = aeff(W, W->cidx[r], W->cidx[c]) + (r == c ? W->reg : 0);
  if (k == 0) return 0;
  return tl_dense_cholesky(k, W->L, ld);
}

/* Append index j as the last row of L (a bordered factorization). Returns 0
 * on success, -1 when the new pivot is not clearly positive (A_CC + jj
 * singular to working precision). */
static int chol_append(tl_lcp_work *W, int j) {
  int k = W->nc, ld = W->nmax;
  double *row = W->L + (size_t)k * ld;
  for (int c = 0; c < k; c++) row[c] = aeff(W, W->cidx[c], j);
  tl_dense_trsv_lower(k, W->L, ld, row);
  double ajj = aeff(W, j, j) + W->reg;
  double d = ajj - tl_dense_dot(k, row, row);
  if (!(d > LCP_TINY_REL * ajj)) return -1;
  row[k] = sqrt(d);
  return 0;
}

/* L L^T + v v^T for the trailing block starting at row/column p0 (m rows),
 * by Givens-like rotations (Gill, Golub, Murray and Saunders 1974). */
static void chol_rank1_update(tl_lcp_work *W, int p0, int m, double *v) {
  int ld = W->nmax;
  for (int a = 0; a < m; a++) {
    double *La = W->L + (size_t)(p0 + a) * ld + p0;
    double r = hypot(La[a], v[a]), c = r / La[a], s = v[a] / La[a];
    La[a] = r;
    for (int b = a + 1; b < m; b++) {
      double *Lb = W->L + (size_t)(p0 + b) * ld + p0;
      Lb[a] = (Lb[a] + s * v[b]) / c;
      v[b] = c * v[b] - s * Lb[a];
    }
  }
}

/* Remove position p of C: the rows below p absorb column p by a rank-1
 * update, then row and column p are deleted from L. */
static void chol_remove(tl_lcp_work *W, int p) {
  int k = W->nc, ld = W->nmax, m = k - 1 - p;
  for (int a = 0; a < m; a++) W->v[a] = W->L[(size_t)(p + 1 + a) * ld + p];
  chol_rank1_update(W, p + 1, m, W->v);
  for (int r = p + 1; r < k; r++) {
    double *dst = W->L + (size_t)(r - 1) * ld, *src = W->L + (size_t)r * ld;
    memcpy(dst, src, (size_t)p * sizeof(double));
    memcpy(dst + p, src + p + 1, (size_t)(r - p) * sizeof(double));
    W->cidx[r - 1] = W->cidx[r];
    W->cpos[W->cidx[r - 1]] = r - 1;
  }
  W->nc = k - 1;
}

/* Add index j to C. If its pivot is not positive, switch on the
 * regularization (once per solve) and refactor. Returns 0 on success. */
static int c_add(tl_lcp_work *W, int j) {
  W->state[j] = ST_C;
  W->cpos[j] = W->nc;
  W->cidx[W->nc] = j;
  if (chol_append(W, j) == 0) {
    W->nc++;
    return 0;
  }
  W->nc++;
  if (W->reg == 0) W->reg = W->regunit;
  return chol_refactor(W);
}

static void c_drop(tl_lcp_work *W, int j, int st) {
  chol_remove(W, W->cpos[j]);
  W->state[j] = st;
}

/* ---------------------------------------------------------------- pivoting */

/* w = A x + b + rho (x - prox) for every row. */
static void refresh_w(tl_lcp_work *W) {
  memcpy(W->w, W->b, (size_t)W->n * sizeof(double));
  tl_dense_gemv_add(W->n, W->n, W->A, W->n, W->x, W->w);
  if (W->rho > 0)
    for (int i = 0; i < W->n; i++) W->w[i] += W->rho * (W->x[i] - W->prox[i]);
}

/* Solve the unbounded rows as equalities with the other x fixed: they form
 * the initial C. Returns 0 on success. */
static int solve_unbounded(tl_lcp_work *W) {
  int n = W->n;
  W->nc = 0;
  for (int i = 0; i < n; i++)
    if (W->lo[i] == -INFINITY && W->hi[i] == INFINITY) {
      W->state[i] = ST_C;
      W->cpos[i] = W->nc;
      W->cidx[W->nc++] = i;
      W->x[i] = 0;
    }
  if (W->nc == 0) return 0;
  if (chol_refactor(W) != 0) {
    W->reg = W->regunit;
    if (chol_refactor(W) != 0) return -1;
  }
  refresh_w(W);
  for (int r = 0; r < W->nc; r++) W->y[r] = -W->w[W->cidx[r]];
  c_solve(W, W->y);
  for (int r = 0; r < W->nc; r++) W->x[W->cidx[r]] = W->y[r];
  return 0;
}

/* Direction of driving index i by s: dx_i = s, dx_C = y = -A_CC^-1 A_Ci s,
 * and dw = A dx for every row (A symmetric, so rows stand for columns).
 * Returns max |dx|. */
static double direction(tl_lcp_work *W, int i, double s) {
  int n = W->n, k = W->nc;
  double dxmax = 1;
  for (int r = 0; r < k; r++) W->y[r] = -s * aeff(W, W->cidx[r], i);
  c_solve(W, W->y);
  for (int j = 0; j < n; j++) W->dw[j] = s * aeff(W, i, j);
  for (int r = 0; r < k; r++) {
    if (fabs(W->y[r]) > dxmax) dxmax = fabs(W->y[r]);
    tl_dense_axpy(n, W->y[r], W->A + (size_t)W->cidx[r] * n, W->dw);
    W->dw[W->cidx[r]] += W->rho * W->y[r];
  }
  return dxmax;
}

typedef struct pivot {
  double t;
  int kind, who, bound; /* bound: ST_LO or ST_HI for moves to a bound */
} pivot;

static void consider(pivot *p, double t, int kind, int who, int bound) {
  if (t < 0) t = 0;
  if (t < p->t) {
    p->t = t;
    p->kind = kind;
    p->who = who;
    p->bound = bound;
  }
}

/* The largest step t along the direction that keeps every processed index
 * complementary, and the index that blocks it (Baraff 1994, maxstep). */
static pivot ratio_test(const tl_lcp_work *W, int i, double s, double dxmax) {
  pivot p = {INFINITY, PV_NONE, -1, 0};
  const double *x = W->x, *w = W->w, *dw = W->dw;
  double tiny_dx = LCP_TINY_REL * dxmax, tiny_dw = LCP_TINY_REL * W->amax * dxmax;
  double bnd = s > 0 ? W->hi[i] : W->lo[i];
  if (isfinite(bnd)) consider(&p, s * (bnd - x[i]), PV_I_TO_BOUND, i, s > 0 ? ST_HI : ST_LO);
  if (s * dw[i] > LCP_TINY_REL * aeff(W, i, i)) consider(&p, -w[i] / dw[i], PV_I_TO_C, i, 0);
  for (int r = 0; r < W->nc; r++) {
    int j = W->cidx[r];
    double d = W->y[r];
    if (d < -tiny_dx && W->lo[j] > -INFINITY)
      consider(&p, (W->lo[j] - x[j]) / d, PV_C_TO_N, j, ST_LO);
    if (d > tiny_dx && W->hi[j] < INFINITY)
      consider(&p, (W->hi[j] - x[j]) / d, PV_C_TO_N, j, ST_HI);
  }
  for (int j = 0; j < W->n; j++) {
    if (W->state[j] == ST_LO && dw[j] < -tiny_dw) consider(&p, -w[j] / dw[j], PV_N_TO_C, j, 0);
    if (W->state[j] == ST_HI && dw[j] > tiny_dw) consider(&p, -w[j] / dw[j], PV_N_TO_C, j, 0);
  }
  return p;
}

/* x += t dx, w += t dw. */
static void take_step(tl_lcp_work *W, int i, double s, double t) {
  if (t == 0) return;
  for (int r = 0; r < W->nc; r++) W->x[W->cidx[r]] += t * W->y[r];
  W->x[i] += t * s;
  tl_dense_axpy(W->n, t, W->dw, W->w);
}

/* Apply the pivot p; returns 1 when index i is done, 0 to keep driving,
 * -1 on a factorization failure. */
static int apply_pivot(tl_lcp_work *W, int i, const pivot *p) {
  int j = p->who;
  switch (p->kind) {
    case PV_I_TO_C: W->w[i] = 0; return c_add(W, i) == 0 ? 1 : -1;
    case PV_I_TO_BOUND:
      W->x[i] = p->bound == ST_HI ? W->hi[i] : W->lo[i];
      W->state[i] = p->bound;
      return 1;
    case PV_C_TO_N:
      W->x[j] = p->bound == ST_HI ? W->hi[j] : W->lo[j];
      c_drop(W, j, p->bound);
      return 0;
    default: W->w[j] = 0; return c_add(W, j) == 0 ? 0 : -1;
  }
}

/* Is index i complementary where it stands? Then place it without moving. */
static int place_if_complementary(tl_lcp_work *W, int i) {
  double xi = W->x[i], wi = W->w[i];
  if (xi == W->lo[i] && wi >= 0)
    W->state[i] = ST_LO;
  else if (xi == W->hi[i] && wi <= 0)
    W->state[i] = ST_HI;
  else
    return 0;
  return 1;
}

/* Drive index i to complementarity (Baraff 1994, drive-to-zero, boxed).
 * Returns 0 on success, -1 when no step is possible or the budget is spent. */
static int drive(tl_lcp_work *W, int i) {
  if (place_if_complementary(W, i)) return 0;
  double s = W->w[i] > 0 ? -1.0 : 1.0;
  for (;;) {
    if (W->pivots >= W->budget) return -1;
    double dxmax = direction(W, i, s);
    pivot p = ratio_test(W, i, s, dxmax);
    W->pivots++;
    if (p.kind == PV_NONE) {
      /* Only a null direction of A is left: i is complementary already if
       * w_i vanishes; then it joins C under the regularization. */
      if (fabs(W->w[i]) > LCP_TINY_REL * W->amax * (1 + fabs(W->x[i]))) return -1;
      p.kind = PV_I_TO_C;
      p.t = 0;
    }
    take_step(W, i, s, p.t);
    int done = apply_pivot(W, i, &p);
    if (done < 0) return -1;
    if (done) return 0;
  }
}

/* Friction row i: bounds from the current normal impulse (first outer pass). */
static void set_friction_bounds_now(tl_lcp_work *W, int i) {
  double xn = W->x[W->findex[i]];
  W->hi[i] = W->mu[i] * (xn > 0 ? xn : 0);
  W->lo[i] = -W->hi[i];
  W->x[i] = clampd(W->x[i], W->lo[i], W->hi[i]);
  W->state[i] = W->lo[i] == W->hi[i] ? ST_FIXED : ST_FREE;
}

static int is_friction(const tl_lcp_work *W, int i) { return W->findex && W->findex[i] >= 0; }

/* One pivoting solve with the bounds in W->lo/hi (friction rows set when
 * processed if W->dyn). Non-friction rows go first, then friction rows. */
static int dantzig_core(tl_lcp_work *W) {
  int n = W->n;
  W->reg = 0;
  W->budget = W->pivots + 10 * n + 10;
  for (int i = 0; i < n; i++) {
    W->x[i] = clampd(0, W->lo[i], W->hi[i]);
    W->state[i] = W->lo[i] == W->hi[i] ? ST_FIXED : ST_FREE;
  }
  if (solve_unbounded(W) != 0) return -1;
  refresh_w(W);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      if (is_friction(W, i) != pass) continue;
      if (pass && W->dyn) set_friction_bounds_now(W, i);
      if (W->state[i] != ST_FREE) continue;
      if (drive(W, i) != 0) return -1;
      refresh_w(W);
    }
  return 0;
}

/* ---------------------------------------------------------------- outer loop */

/* Bounds for the next solve: lo/hi as given, friction rows +-mu x_n with
 * the normal impulses of xs (none on the first call). Returns the largest
 * change of a friction bound, relative to max(1, bound). */
static double update_bounds(tl_lcp_work *W, const double *lo, const double *hi, const double *xs) {
  double change = 0;
  for (int i = 0; i < W->n; i++) {
    if (!is_friction(W, i)) {
      W->lo[i] = lo[i];
      W->hi[i] = hi[i];
      continue;
    }
    double xn = xs ? xs[W->findex[i]] : 0, h = W->mu[i] * (xn > 0 ? xn : 0);
    double d = fabs(h - W->hi[i]) / (h > 1 ? h : 1);
    if (xs && d > change) change = d;
    W->hi[i] = h;
    W->lo[i] = -h;
  }
  return change;
}

/* The linear system of the current index sets: C rows w_i = 0 (plus reg
 * x_i), friction rows at a bound x_i -+ mu_i x_n = 0, other rows x_i fixed
 * where they are. Column-major in L (free after a pivoting solve), solved
 * in place into xp. */
static int polish_solve(tl_lcp_work *W, double reg) {
  int n = W->n, ld = W->nmax;
  double *M = W->L, *r = W->xp;
  for (int i = 0; i < n; i++) memset(M + (size_t)i * ld, 0, (size_t)n * sizeof(double));
  for (int i = 0; i < n; i++) {
    int st = W->state[i];
    if (st == ST_C) {
      for (int j = 0; j < n; j++) M[(size_t)i * ld + j] = aij(W, i, j);
      M[(size_t)i * ld + i] += reg;
      r[i] = -W->b[i];
      continue;
    }
    M[(size_t)i * ld + i] = 1;
    r[i] = W->x[i];
    if (is_friction(W, i) && (st == ST_LO || st == ST_HI)) {
      M[(size_t)i * ld + W->findex[i]] = st == ST_LO ? W->mu[i] : -W->mu[i];
      r[i] = 0;
    }
  }
  if (tl_dense_lu_solve(n, M, ld, W->ipiv, r) != 0) return -1;
  for (int i = 0; i < n; i++)
    if (!isfinite(r[i])) return -1;
  return 0;
}

/* Solve the index sets of the last pivoting solve (without, then with the
 * regularization when A_CC is singular) and replace x by that solution when
 * its residual is below tol. Returns 1 when replaced (residual in *r), 0
 * when the set solution is in xp but rejected, -1 when there is none. */
static int polish(tl_lcp_work *W, const double *lo, const double *hi, double tol, double *r) {
  int n = W->n, have = -1;
  for (int attempt = 0; attempt < 2; attempt++) {
    if (attempt == 1 && W->reg != 0) break;
    if (polish_solve(W, attempt == 0 ? W->reg : W->regunit) != 0) continue;
    have = 0;
    *r = tl_lcp_residual(n, W->A, W->b, lo, hi, W->findex, W->mu, W->xp);
    if (*r < tol) {
      memcpy(W->x, W->xp, (size_t)n * sizeof(double));
      return 1;
    }
  }
  return have;
}

/* Residual below which x is accepted: 1e-10 max(1, |b|_inf). */
static double accept_tol(int n, const double *b) {
  double bmax = 1;
  for (int i = 0; i < n; i++)
    if (fabs(b[i]) > bmax) bmax = fabs(b[i]);
  return LCP_ACCEPT * bmax;
}

static void init_problem(tl_lcp_work *W, int n, const double *A, const double *b, const int *findex,
                         const double *mu, double *x) {
  W->n = n;
  W->A = A;
  W->b = b;
  W->findex = findex;
  W->mu = mu;
  W->x = x;
  W->pivots = 0;
  W->rho = 0;
  double tr = 0, amax = 0;
  for (int i = 0; i < n; i++) {
    double a = A[(size_t)i * n + i];
    tr += a;
    if (a > amax) amax = a;
  }
  W->regunit = n > 0 ? LCP_REG * tr / n : 0;
  W->amax = amax > 0 ? amax : 1;
}

static void keep_best(tl_lcp_work *W, double r, double *best) {
  if (r >= *best) return;
  *best = r;
  memcpy(W->best, W->x, (size_t)W->n * sizeof(double));
}

static int has_friction(int n, const int *findex) {
  for (int i = 0; findex && i < n; i++)
    if (findex[i] >= 0) return 1;
  return 0;
}

int tl_lcp_dantzig(tl_lcp_work *W, int n, const double *A, const double *b, const double *lo,
                   const double *hi, const int *findex, const double *mu, double *x,
                   tl_lcp_stats *stats) {
  tl_lcp_stats st = {0, 0, INFINITY};
  if (!W || !x || n > W->nmax || tl_lcp_check(n, A, b, lo, hi, findex, mu) != 0) {
    if (x && n > 0) memset(x, 0, (size_t)n * sizeof(double));
    if (stats) *stats = st;
    return -1;
  }
  if (n == 0) {
    st.residual = 0;
    if (stats) *stats = st;
    return 0;
  }
  init_problem(W, n, A, b, findex, mu, x);
  int fric = has_friction(n, findex), rc = -1;
  double best = INFINITY, last = INFINITY, tol = accept_tol(n, b);
  update_bounds(W, lo, hi, NULL);
  for (int outer = 0; outer < LCP_MAX_OUTER && rc != 0; outer++) {
    W->dyn = outer == 0 && fric;
    W->rho = outer >= LCP_PROX_FROM ? LCP_PROX * W->regunit / LCP_REG : 0;
    if (W->rho > 0) memcpy(W->prox, x, (size_t)n * sizeof(double));
    int core = dantzig_core(W);
    st.outer = outer + 1;
    last = tl_lcp_residual(n, A, b, lo, hi, findex, mu, x);
    keep_best(W, last, &best);
    if (core != 0) break;
    if (last <= tol) {
      rc = 0;
      break;
    }
    double rp;
    int pol = polish(W, lo, hi, fmin(tol, last), &rp);
    if (pol == 1) {
      best = last = rp;
      rc = 0;
    } else if (!fric) {
      break;
    } else {
      const double *xs = pol == 0 && outer < LCP_NEWTON_UNTIL ? W->xp : x;
      if (update_bounds(W, lo, hi, xs) <= LCP_OUTER_TOL && W->rho == 0 && xs == x) break;
    }
  }
  if (rc != 0) memcpy(x, W->best, (size_t)n * sizeof(double));
  st.pivots = W->pivots;
  st.residual = rc == 0 ? last : best;
  if (stats) *stats = st;
  return rc;
}
