/* Dense solves of the constraint rows: the dense Delassus matrix, the
 * direct (active-set) solve and the Dantzig boxed LCP.
 *
 *  - tl_solver_dense_assemble: the Delassus matrix of all blocks of a small
 *    coupled problem (a robot's contacts and joint rows), assembled from the
 *    tree-sparse blocks (constraint_rows.c) over the common supports.
 *  - tl_solver_direct_solve: the per-contact solver's direct step, an
 *    active-set method (Murty's principal pivoting restricted to the stick /
 *    open / bound statuses; Cottle, Pang, Stone, The Linear Complementarity
 *    Problem, 1992, sec. 4.2) whose linear solves are right-looking Cholesky
 *    factorizations (Golub and Van Loan, Matrix Computations, Alg. 4.2.2;
 *    math/tl_dense.h) with regularization and iterative refinement.
 *  - tl_solver_dantzig (TL_SOLVER_DANTZIG): the boxed LCP of all rows,
 *    Dantzig's pivoting method (Cottle and Dantzig 1968, as ODE's dSolveLCP;
 *    contact/lcp.h), friction pyramid via findex (ODE dWorldStep); it falls
 *    back to the world's PGS (solver_gs.c) beyond its capacity or on
 *    failure. */
#include <math.h>
#include <string.h>

#include "contact/solver_internal.h"
#include "math/tl_vec2.h"
#include "math/tl_math.h"

/* ---------------- dense solve ---------------- */

/* The dense Delassus matrix A of the blocks (full, symmetric; the
 * compliance R stays in the blocks) and the row velocities db at the
 * current z (the start of the solve). The
 * off-diagonal blocks use the tree sparsity: only blocks sharing a system,
 * each over their common support. */
void tl_solver_dense_assemble(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  const int n = nat->dense_n;
  double *A = nat->dA;
  /* W = D^-1 Y of every block part, scattered over its system's nv (entry (dof, r) at dof * nrow + r) */
  size_t used = 0;
  for (int i = 0; i < nat->nblock; i++) {
    tl_block *b = &nat->blocks[i];
    for (int p = 0; p < 2; p++) {
      int si = p ? b->sb : b->sa;
      if (si < 0) continue;
      const tl_system *s = w->systems[si];
      const int nv = s->m->nv, ns = b->nsup[p], nr = b->nrow, *sup = nat->ipool + b->sup[p];
      const double *Y = nat->pool + b->adr[p] + (size_t)ns * (size_t)nr, *Dinv = s->d.LDinv;
      double *W = nat->dW + used;
      b->wrow[p] = (int)used;
      used += (size_t)nr * (size_t)nv;
      memset(W, 0, (size_t)nr * (size_t)nv * sizeof(double));
      if (nr == 3)
        for (int k = 0; k < ns; k++) {
          const double di = Dinv[sup[k]];
          double *x = W + 3 * sup[k];
          x[0] = di * Y[3 * k], x[1] = di * Y[3 * k + 1], x[2] = di * Y[3 * k + 2];
        }
      else
        for (int k = 0; k < ns; k++) W[sup[k]] = Dinv[sup[k]] * Y[k];
    }
  }
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *a = &nat->blocks[i];
    if (nat->stats.impacts) /* db = J u_free + Y^T z; z is zero unless impacts came first (the +0.0: as the sum would) */
      block_velocity(w, a, nat->db + a->row);
    else
      for (int r = 0; r < a->nrow; r++) nat->db[a->row + r] = a->v0[r] + 0.0;
    if (a->nrow == 3)
      for (int r = 0; r < 3; r++) memcpy(A + (size_t)(a->row + r) * (size_t)n + a->row, a->G + 3 * r, 3 * sizeof(double));
    else
      A[(size_t)a->row * (size_t)n + a->row] = a->G[0];
    for (int j = i + 1; j < nat->nblock; j++) {
      const tl_block *b = &nat->blocks[j];
      double G[9] = {0};
      for (int pa = 0; pa < 2; pa++) { /* G = Y_a^T W_b over a's support, per shared system */
        int sa = pa ? a->sb : a->sa;
        if (sa < 0) continue;
        for (int pb = 0; pb < 2; pb++) {
          if ((pb ? b->sb : b->sa) != sa) continue;
          int ns = a->nsup[pa], k0 = 0;
          const int *sup = nat->ipool + a->sup[pa];
          const double *Ya = nat->pool + a->adr[pa] + (size_t)ns * (size_t)a->nrow, *Wb = nat->dW + b->wrow[pb];
          if (a->chain[pa] && b->chain[pb]) { /* two root paths share a suffix: W_b is zero before it */
            const int *supb = nat->ipool + b->sup[pb];
            int t = 0;
            const int tmax = ns < b->nsup[pb] ? ns : b->nsup[pb];
            const int *ea = sup + ns - 1, *eb = supb + b->nsup[pb] - 1;
            while (t < tmax && ea[-t] == eb[-t]) t++;
            k0 = ns - t;
          }
          if (a->nrow == 1 && b->nrow == 1) {
            double g = 0;
            for (int k = k0; k < ns; k++) g += Ya[k] * Wb[sup[k]];
            G[0] += g;
          } else if (a->nrow == 3 && b->nrow == 3) {
            for (int k = k0; k < ns; k++) {
              const double *x = Wb + 3 * sup[k], *y = Ya + 3 * k;
              for (int r = 0; r < 3; r++) {
                G[3 * r] += y[r] * x[0];
                G[3 * r + 1] += y[r] * x[1];
                G[3 * r + 2] += y[r] * x[2];
              }
            }
          } else if (a->nrow == 3) { /* and b->nrow == 1 */
            double g0 = 0, g1 = 0, g2 = 0;
            for (int k = k0; k < ns; k++) {
              const double x = Wb[sup[k]];
              g0 += Ya[3 * k] * x, g1 += Ya[3 * k + 1] * x, g2 += Ya[3 * k + 2] * x;
            }
            G[0] += g0, G[1] += g1, G[2] += g2;
          } else { /* a->nrow == 1, b->nrow == 3 */
            double g0 = 0, g1 = 0, g2 = 0;
            for (int k = k0; k < ns; k++) {
              const double y = Ya[k], *x = Wb + 3 * sup[k];
              g0 += y * x[0], g1 += y * x[1], g2 += y * x[2];
            }
            G[0] += g0, G[1] += g1, G[2] += g2;
          }
        }
      }
      if (a->nrow == 3 && b->nrow == 3)
        for (int r = 0; r < 3; r++) {
          double *Ar = A + (size_t)(a->row + r) * (size_t)n + b->row, *Ac = A + (size_t)(b->row + r) * (size_t)n + a->row;
          Ar[0] = G[3 * r], Ar[1] = G[3 * r + 1], Ar[2] = G[3 * r + 2];
          Ac[0] = G[r], Ac[1] = G[3 + r], Ac[2] = G[6 + r];
        }
      else
        for (int r = 0; r < a->nrow; r++)
          for (int c = 0; c < b->nrow; c++) {
            A[(size_t)(a->row + r) * (size_t)n + b->row + c] = G[r * b->nrow + c];
            A[(size_t)(b->row + c) * (size_t)n + a->row + r] = G[r * b->nrow + c];
          }
    }
  }
  memset(nat->dx, 0, (size_t)n * sizeof(double));
}

/* Status of the rows for a direct solve, from the current impulses: 1 free
 * (a contact pressing, lambda_n > 0: all three rows, as if sticking; a scalar
 * row strictly inside its bounds), 0 held at its value (a contact that does
 * not press, lambda = 0; a scalar row at a bound). */
void tl_solver_direct_status(tl_world *w, unsigned char *st) {
  tl_native *nat = tl_native_of(w);
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    if (b->kind == TL_ROW_CONTACT) {
      memset(st + b->row, b->lambda[2] > 0, 3);
    } else {
      st[b->row] = b->lambda[0] > b->lo && b->lambda[0] < b->hi;
    }
  }
}

/* Relative regularization of the free rows' matrix when it may be singular:
 * two or more pressing contacts on one body (the corners of a box face:
 * their tangential rows outnumber the in-plane motions of the body) make it
 * so; epsilon picks the smallest-norm impulses among the equal solutions,
 * and two steps of iterative refinement against the unregularized matrix
 * remove what epsilon costs in the row velocities. Otherwise (a robot's
 * point feet) it is factored as it is, and regularized only if a pivot
 * comes out below TL_DIRECT_PIVOT of its diagonal entry. */
#define TL_DIRECT_EPS 1e-11
#define TL_DIRECT_PIVOT 1e-9

/* 1 if two free contact blocks (status st) touch the same body. */
static int shared_body(const tl_world *w, const unsigned char *st) {
  tl_native *nat = tl_native_of(w);
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *a = &nat->blocks[i];
    if (a->kind != TL_ROW_CONTACT || !st[a->row]) continue;
    const tl_wcontact *ca = &nat->contacts[a->contact];
    for (int j = i + 1; j < nat->nblock; j++) {
      const tl_block *b = &nat->blocks[j];
      if (b->kind != TL_ROW_CONTACT || !st[b->row]) continue;
      const tl_wcontact *cb = &nat->contacts[b->contact];
      if ((ca->sa == cb->sa && ca->ba == cb->ba) || (ca->sb >= 0 && ca->sb == cb->sb && ca->bb == cb->bb) ||
          (ca->sa == cb->sb && ca->ba == cb->bb) || (ca->sb >= 0 && ca->sb == cb->sa && ca->bb == cb->ba))
        return 1;
    }
  }
  return 0;
}

/* Factor M = A_FF + R_F (+ eps diag A_FF) into nat->dM; 0 if not positive definite. */
static int direct_factor(tl_world *w, const int *F, const double *Rf, int nf, double eps) {
  tl_native *nat = tl_native_of(w);
  const int n = nat->dense_n;
  double *M = nat->dM;
  for (int a = 0; a < nf; a++) {
    const double *Aa = nat->dA + (size_t)F[a] * (size_t)n;
    if (nf == n) /* every row free: F is the identity */
      for (int c = 0; c <= a; c++) M[a * nf + c] = Aa[c];
    else
      for (int c = 0; c <= a; c++) M[a * nf + c] = Aa[F[c]];
    M[a * nf + a] = M[a * nf + a] * (1.0 + eps) + Rf[a];
  }
  if (tl_dense_cholesky_rl(nf, M, nat->dr + 2 * nat->dense_cap)) return 0;
  if (eps > 0) return 1;
  for (int a = 0; a < nf; a++) { /* pivot test: L_aa^2 against the diagonal entry */
    const double d = nat->dA[(size_t)F[a] * (size_t)n + F[a]] + Rf[a];
    if (!(M[a * nf + a] * M[a * nf + a] > TL_DIRECT_PIVOT * d)) return 0;
  }
  return 1;
}

/* One direct solve of the rows marked free in st, the others held at the
 * values h: (A_FF + R_F) y_F = target_F - db_F - A_FH h_H (R: the
 * compliance of contact normals and scalar rows); y_H = h_H. y: [2n], its
 * second half scratch. Returns 0 if the free rows' matrix is not positive
 * definite. */
static int direct_linear(tl_world *w, const unsigned char *st, const double *h, double *y) {
  tl_native *nat = tl_native_of(w);
  const int n = nat->dense_n;
  int *F = nat->dfree, nf = 0;
  double *M = nat->dM, *r = nat->dr, *Rf = nat->dr + nat->dense_cap, *e = y + n;
  nat->dense_nf = 0;
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    for (int k = 0; k < b->nrow; k++)
      if (st[b->row + k]) {
        F[nf] = b->row + k;
        Rf[nf] = b->kind != TL_ROW_CONTACT || k == 2 ? b->R : 0.0;
        r[nf++] = b->target[k] - nat->db[b->row + k];
      }
  }
  for (int j = 0; j < n; j++) y[j] = st[j] ? 0.0 : h[j];
  for (int a = 0; a < nf && nf < n; a++) /* minus A_FH h_H: y is zero on the free rows (none held: no term) */
    r[a] -= tl_dense_dot(n, nat->dA + (size_t)F[a] * (size_t)n, y);
  nat->dense_nf = nf;
  int refine = shared_body(w, st);
  if (refine || !direct_factor(w, F, Rf, nf, 0.0)) {
    refine = 1;
    if (!direct_factor(w, F, Rf, nf, TL_DIRECT_EPS)) return 0;
  }
  for (int a = 0; a < nf; a++) e[a] = r[a];
  for (int pass = 0;; pass++) { /* the solve, then (regularized) two refinements */
    tl_dense_cholesky_rl_solve(nf, M, nat->dr + 2 * nat->dense_cap, e);
    for (int a = 0; a < nf; a++) y[F[a]] += e[a];
    if (!refine || pass == 2) break;
    for (int a = 0; a < nf; a++) { /* residual of (A_FF + R_F) y_F = r */
      const double *Aa = nat->dA + (size_t)F[a] * (size_t)n;
      double s = r[a] - Rf[a] * y[F[a]];
      for (int c = 0; c < nf; c++) s -= Aa[F[c]] * y[F[c]];
      e[a] = s;
    }
  }
  return 1;
}

/* Largest residual of the free rows of the last direct_linear, in impulse:
 * |target - v - R lambda| / (G_aa + R_a) for the solution y: the change a
 * Gauss-Seidel update of that row alone would make. */
static double direct_residual(const tl_world *w, const double *y) {
  tl_native *nat = tl_native_of(w);
  const int n = nat->dense_n, nf = nat->dense_nf, *F = nat->dfree;
  const double *r = nat->dr, *Rf = nat->dr + nat->dense_cap;
  double worst = 0;
  for (int a = 0; a < nf; a++) {
    const double *Aa = nat->dA + (size_t)F[a] * (size_t)n;
    double s = r[a] - Rf[a] * y[F[a]];
    if (nf == n) /* every row free: a contiguous dot */
      s -= tl_v2_dot(Aa, y, n);
    else
      for (int c = 0; c < nf; c++) s -= Aa[F[c]] * y[F[c]];
    const double res = fabs(s) / (Aa[F[a]] + Rf[a]);
    if (res > worst) worst = res;
  }
  return worst;
}

/* Direct solve of the stick / open / bound pattern in nat->dstat (an active-set
 * method: Murty's principal pivoting restricted to these statuses, Cottle,
 * Pang, Stone, The Linear Complementarity Problem, 1992, sec. 4.2): solve
 * the free rows exactly with the others held, then move rows whose solution
 * breaks a sign condition (a pressing contact pulling, a held contact
 * penetrating, a scalar row beyond a bound or pushing against the side it
 * rests on) to the other set and solve again, at most 8 times. A pressing
 * contact whose impulse leaves the friction cone slides: that is left to the
 * Gauss-Seidel sweeps (returns 0). On success the impulses of the blocks
 * become the solution (returns 1): the exact solution of the problem when
 * no contact slides; 2 when, besides, no free row is off its equation by
 * more than the tolerance makes an impulse of: the solve is converged
 * without a sweep (every sign condition was checked on the way). */
int tl_solver_direct_solve(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  const int n = nat->dense_n;
  unsigned char *st = nat->dstat;
  double *y = nat->dy, *h = nat->dy + 2 * n; /* candidate impulses (+ scratch), held values */
  memcpy(h, nat->dx, (size_t)n * sizeof(double)); /* held rows: scalar rows at their bound, */
  for (int i = 0; i < nat->nblock; i++)               /* contacts that do not press at zero */
    if (nat->blocks[i].kind == TL_ROW_CONTACT && !st[nat->blocks[i].row]) memset(h + nat->blocks[i].row, 0, 3 * sizeof(double));
  for (int round = 0; round < 8; round++) {
    if (!direct_linear(w, st, h, y)) return 0;
    int changed = 0;
    for (int i = 0; i < nat->nblock; i++) {
      const tl_block *b = &nat->blocks[i];
      const int r0 = b->row;
      double v = 0;
      if (b->kind == TL_ROW_CONTACT) {
        if (st[r0]) {
          double ln = y[r0 + 2], lt = sqrt(y[r0] * y[r0] + y[r0 + 1] * y[r0 + 1]);
          if (ln < 0) { /* pulls: let it open */
            memset(st + r0, 0, 3);
            y[r0] = y[r0 + 1] = y[r0 + 2] = 0;
            changed = 1;
          } else if (lt > b->mu * ln) {
            return 0; /* slides */
          }
        } else {
          v = nat->db[r0 + 2] + tl_dense_dot(n, nat->dA + (size_t)(r0 + 2) * (size_t)n, y);
          if (v < b->target[2] - w->opt.solver_tol * b->G[8]) { /* penetrates: let it press */
            memset(st + r0, 1, 3);
            changed = 1;
          }
        }
        continue;
      }
      double x = y[r0];
      if (st[r0]) {
        if (x < b->lo || x > b->hi) {
          st[r0] = 0;
          y[r0] = x < b->lo ? b->lo : b->hi;
          changed = 1;
        }
      } else {
        v = nat->db[r0] + tl_dense_dot(n, nat->dA + (size_t)r0 * (size_t)n, y) + b->R * x - b->target[0];
        double tol = w->opt.solver_tol * (b->G[0] + b->R);
        if ((x <= b->lo && v < -tol) || (x >= b->hi && v > tol)) {
          st[r0] = 1;
          changed = 1;
        }
      }
    }
    if (changed) {
      for (int j = 0; j < n; j++) /* held rows keep their (possibly clamped) values */
        if (!st[j]) h[j] = y[j];
      continue;
    }
    for (int i = 0; i < nat->nblock; i++) {
      tl_block *b = &nat->blocks[i];
      for (int k = 0; k < b->nrow; k++) b->lambda[k] = y[b->row + k];
    }
    memcpy(nat->dx, y, (size_t)n * sizeof(double));
    return direct_residual(w, y) <= w->opt.solver_tol ? 2 : 1;
  }
  return 0;
}

/* ---------------- Dantzig ---------------- */

static int dantzig_rows(const tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int n = 0;
  for (int i = 0; i < nat->nblock; i++) n += nat->blocks[i].nrow;
  return n;
}

void tl_solver_dantzig(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int n = dantzig_rows(w);
  if (n > nat->lcp_cap || !nat->lcp) { /* beyond the dense capacity: fall back to PGS */
    tl_solver_gauss_seidel(w, 1);
    nat->stats.converged = 0;
    return;
  }
  int r = 0;
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    double v[3];
    block_velocity(w, b, v); /* u is the free velocity: nothing applied yet */
    for (int k = 0; k < b->nrow; k++, r++) {
      nat->lcp_row_block[r] = i;
      nat->lcp_b[r] = v[k] - b->target[k];
      nat->lcp_findex[r] = -1;
      nat->lcp_mu[r] = 0;
      if (b->kind == TL_ROW_CONTACT) {
        nat->lcp_lo[r] = k == 2 ? 0.0 : -INFINITY;
        nat->lcp_hi[r] = INFINITY;
        if (k < 2) {
          nat->lcp_findex[r] = r + (2 - k);
          nat->lcp_mu[r] = b->mu;
        }
      } else {
        nat->lcp_lo[r] = b->lo;
        nat->lcp_hi[r] = b->hi;
      }
    }
  }
  number_rows(w);
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *a = &nat->blocks[i];
    for (int j = 0; j < nat->nblock; j++) {
      const tl_block *b = &nat->blocks[j];
      double G[9];
      if (i == j)
        memcpy(G, a->G, sizeof(G));
      else if (share_system(a, b))
        delassus_block(w, a, b, G);
      else
        memset(G, 0, sizeof(G));
      for (int ka = 0; ka < a->nrow; ka++)
        for (int kb = 0; kb < b->nrow; kb++) nat->lcp_A[(size_t)(a->row + ka) * n + b->row + kb] = G[ka * b->nrow + kb];
    }
    for (int ka = 0; ka < a->nrow; ka++)
      nat->lcp_A[(size_t)(a->row + ka) * n + a->row + ka] += (a->kind != TL_ROW_CONTACT || ka == 2) ? a->R : 0.0;
  }
  tl_lcp_stats st;
  memset(nat->lcp_x, 0, (size_t)n * sizeof(double));
  int fail = tl_lcp_dantzig(nat->lcp, n, nat->lcp_A, nat->lcp_b, nat->lcp_lo, nat->lcp_hi, nat->lcp_findex, nat->lcp_mu,
                            nat->lcp_x, &st);
  for (int i = 0, ri = 0; i < nat->nblock; i++) {
    tl_block *b = &nat->blocks[i];
    double dl[3];
    for (int k = 0; k < b->nrow; k++, ri++) {
      dl[k] = nat->lcp_x[ri];
      b->lambda[k] = nat->lcp_x[ri];
    }
    apply_impulse(w, b, dl);
  }
  nat->stats.iterations = st.pivots;
  nat->stats.last_change = st.residual;
  nat->stats.converged = !fail;
  if (fail) { /* over-constrained friction: finish with PGS from Dantzig's best iterate */
    int pivots = st.pivots;
    tl_solver_gauss_seidel(w, 1);
    nat->stats.iterations += pivots;
  }
}

