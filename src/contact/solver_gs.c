/* Gauss-Seidel solvers of the constraint rows, in velocity form.
 *
 * The solvers work in velocity form (ODE's QuickStep layout): each system's
 * velocity is updated through z += D^-1 Y dlambda (solver_internal.h,
 * apply_impulse), so the Delassus matrix G = J M_eff^-1 J^T is never formed
 * except its diagonal blocks (or densely, solver_direct.c).
 *  - TL_SOLVER_PER_CONTACT: Gauss-Seidel over blocks, each contact solved
 *    exactly on its Coulomb cone (Hwangbo, Lee, Hutter, "Per-contact
 *    iteration method for solving contact dynamics", RA-L 2018; contact/cone.c),
 *    the mimic rows of a system together by a Cholesky solve of their
 *    Delassus matrix (block Gauss-Seidel; math/tl_dense.h), the loop
 *    constraints' rows likewise with the semidefinite Cholesky that drops
 *    redundant rows (contact/constraint_loop.c), accelerated by
 *    nonsmooth nonlinear conjugate gradients (NNCG: Silcowitz, Niebe,
 *    Erleben, The Visual Computer 26, 2010; see tl_solver_gauss_seidel);
 *    on small coupled problems direct solves of the current stick / open
 *    pattern (solver_direct.c) are tried between sweeps.
 *  - TL_SOLVER_PGS: projected Gauss-Seidel with over-relaxation and the
 *    friction pyramid (projected SOR: Cottle, Pang, Stone, The Linear
 *    Complementarity Problem, 1992, ch. 5; Erleben, "Velocity-based shock
 *    propagation", 2007; ODE QuickStep). This is the engine's one PGS.
 * Scalar rows (limits, friction, PD, velocity limits) take the exact update
 * of their own row, clamped into their box. */
#include <math.h>
#include <string.h>

#include "contact/solver_internal.h"
#include "math/tl_math.h"

/* ---------------- equality groups ---------------- */

/* Cholesky factor of each equality group's Delassus matrix (from the dense
 * matrix when the solve has one). */
void tl_solver_factor_eqgroups(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  nat->eq_used = 0;
  for (int i = 0; i < nat->neqgroup; i++) {
    tl_eqgroup *g = &nat->eqgroups[i];
    int n = g->n;
    double *A = nat->eq_pool + nat->eq_used;
    g->adr = nat->eq_used;
    nat->eq_used += (size_t)n * (size_t)n + (size_t)n;
    for (int c = 0; c < n; c++)
      for (int r = c; r < n; r++) {
        const tl_block *a = &nat->blocks[g->first + r], *b = &nat->blocks[g->first + c];
        A[c * n + r] = r == c ? a->G[0] + a->R
                              : nat->dense ? nat->dA[(size_t)a->row * (size_t)nat->dense_n + b->row]
                                         : delassus(w, a, 0, b, 0);
      }
    if (g->loop) { /* loop rows: redundant ones dropped (rows fixed at 0 first: tl_loop_drop_rows) */
      const size_t nn = (size_t)n * (size_t)n;
      unsigned char *drop = (unsigned char *)(A + nn + n);
      double *A0 = A + nn + 2 * (size_t)n, *Cm = A0 + nn, *S = Cm + nn, dmax = 0;
      for (int c = 0; c < n; c++) {
        const tl_block *b = &nat->blocks[g->first + c];
        if (b->lo == b->hi)
          for (int r = 0; r < n; r++) A[(r < c ? r : c) * n + (r < c ? c : r)] = 0.0;
        dmax = fmax(dmax, A[c * n + c]);
      }
      nat->eq_used += (size_t)n + 3 * nn + (size_t)n; /* flags, A0, Cm, S, scratch */
      memcpy(A0, A, nn * sizeof(double));
      g->ndrop = tl_dense_cholesky_psd(n, A, 1e-10, 1e-12 * dmax, drop);
      if (g->ndrop) tl_dense_psd_minnorm_prepare(n, A0, A, drop, g->ndrop, Cm, S);
      g->factored = 1;
      continue;
    }
    g->factored = tl_dense_cholesky_cm(n, A, 1e-14) == 0;
  }
}

/* New impulse of a scalar row for row velocity v (without the row's own change). */
static double scalar_update(const tl_block *b, double v, double l) {
  double g = b->G[0] + b->R;
  double nl = g > 0 ? l - (v + b->R * l - b->target[0]) / g : l;
  return fmax(b->lo, fmin(b->hi, nl));
}

/* Exact cone update of a contact block for current row velocities v. */
static void cone_update(const tl_block *b, const double v[3], double nl[3]) {
  double G[9], bb[3];
  memcpy(G, b->G, sizeof(G));
  G[8] += b->R;
  for (int r = 0; r < 3; r++)
    bb[r] = v[r] - (b->G[3 * r] * b->lambda[0] + b->G[3 * r + 1] * b->lambda[1] + b->G[3 * r + 2] * b->lambda[2]);
  bb[2] -= b->target[2];
  memcpy(nl, b->lambda, 3 * sizeof(double));
  tl_cone_contact_solve(G, bb, b->mu, nl);
}

/* Pyramid update (PGS): normal first, then each tangent boxed by mu lambda_n. */
static void pyramid_update(const tl_block *b, const double v[3], double sor, double nl[3]) {
  double l[3] = {b->lambda[0], b->lambda[1], b->lambda[2]}, vv[3] = {v[0], v[1], v[2]};
  static const int order[3] = {2, 0, 1};
  for (int i = 0; i < 3; i++) {
    int r = order[i];
    double g = b->G[4 * r] + (r == 2 ? b->R : 0.0);
    double res = vv[r] + (r == 2 ? b->R * l[2] - b->target[2] : 0.0);
    double x = g > 0 ? l[r] - sor * res / g : l[r];
    x = r == 2 ? fmax(0.0, x) : fmax(-b->mu * l[2], fmin(b->mu * l[2], x));
    double dx = x - l[r];
    for (int c = 0; c < 3; c++) vv[c] += b->G[3 * c + r] * dx;
    l[r] = x;
  }
  memcpy(nl, l, sizeof(l));
}

/* Exact update of an equality group: all its rows at once, G dl = v* - J u
 * with the group's Cholesky factor (the rows are unbounded). Returns the
 * largest impulse change. */
static double eqgroup_update(tl_world *w, const tl_eqgroup *g) {
  tl_native *nat = tl_native_of(w);
  double *L = nat->eq_pool + g->adr, *r = L + (size_t)g->n * (size_t)g->n, change = 0;
  for (int i = 0; i < g->n; i++) {
    const tl_block *b = &nat->blocks[g->first + i];
    double v;
    block_velocity(w, b, &v);
    r[i] = b->target[0] - v - b->R * b->lambda[0];
  }
  if (g->loop) { /* the minimum-norm impulses (redundant rows share the load) */
    const size_t nn = (size_t)g->n * (size_t)g->n;
    const double *Cm = r + 2 * (size_t)g->n + nn, *S = Cm + nn;
    tl_dense_psd_minnorm_solve(g->n, L, (const unsigned char *)(r + g->n), g->ndrop, Cm, S, r, (double *)S + nn);
  } else
    tl_dense_cholesky_cm_solve(g->n, L, r);
  for (int i = 0; i < g->n; i++) {
    tl_block *b = &nat->blocks[g->first + i];
    b->dl[0] = r[i];
    b->lambda[0] += r[i];
    change = fmax(change, fabs(r[i]));
    apply_impulse(w, b, b->dl);
    add_generalized(w, b, b->dl);
  }
  return change;
}

/* One Gauss-Seidel sweep over the blocks. Returns the largest impulse change
 * and in *gen the largest change of a system's generalized impulse J^T lambda. */
static double gauss_seidel_sweep(tl_world *w, int pyramid, double *gen) {
  tl_native *nat = tl_native_of(w);
  double change = 0;
  for (int i = 0; i < w->nsystem; i++)
    memset(w->systems[i]->gen_change, 0, (size_t)w->systems[i]->m->nv * sizeof(double));
  for (int n = 0; n < nat->nblock; n++) {
    tl_block *b = &nat->blocks[n];
    if (!pyramid && b->group >= 0 && nat->eqgroups[b->group].factored) {
      change = fmax(change, eqgroup_update(w, &nat->eqgroups[b->group]));
      n += nat->eqgroups[b->group].n - 1;
      continue;
    }
    double v[3], nl[3] = {0, 0, 0}, dl[3];
    block_velocity(w, b, v);
    if (b->kind == TL_ROW_CONTACT) {
      if (pyramid)
        pyramid_update(b, v, w->opt.sor, nl);
      else
        cone_update(b, v, nl);
    } else {
      double sor = pyramid ? w->opt.sor : 1.0, x = scalar_update(b, v[0], b->lambda[0]);
      nl[0] = fmax(b->lo, fmin(b->hi, b->lambda[0] + sor * (x - b->lambda[0])));
    }
    for (int r = 0; r < b->nrow; r++) {
      dl[r] = nl[r] - b->lambda[r];
      b->dl[r] = dl[r];
      change = fmax(change, fabs(dl[r]));
      b->lambda[r] = nl[r];
    }
    apply_impulse(w, b, dl);
    add_generalized(w, b, dl);
  }
  *gen = 0;
  for (int i = 0; i < w->nsystem; i++)
    for (int k = 0; k < w->systems[i]->m->nv; k++) *gen = fmax(*gen, fabs(w->systems[i]->gen_change[k]));
  return change;
}

/* Squared norm of the last sweep's impulse change. */
static double sweep_norm2(const tl_world *w) {
  tl_native *nat = tl_native_of(w);
  double g = 0;
  for (int n = 0; n < nat->nblock; n++)
    for (int r = 0; r < nat->blocks[n].nrow; r++) g += nat->blocks[n].dl[r] * nat->blocks[n].dl[r];
  return g;
}

/* Gauss-Seidel sweeps. The per-contact solver's are accelerated by
 * nonsmooth nonlinear conjugate gradients (NNCG: Silcowitz, Niebe, Erleben,
 * "A nonsmooth nonlinear conjugate gradient method for interactive contact
 * force problems", The Visual Computer 26, 2010): the sweep's change is taken
 * as the negative gradient, and lambda moves on by beta p with the
 * Fletcher-Reeves beta, restarting when beta > 1. Sweeps alone stall where
 * the Delassus matrix is nearly singular (two sticking contacts of one edge
 * can trade opposite friction impulses that cost only the normal
 * compliance); the conjugate direction crosses such a valley in a few steps.
 * The next sweep projects lambda back on its cone or box. PGS keeps plain
 * (over-relaxed) sweeps, as ODE's QuickStep.
 * The solve stops after a sweep in which no impulse, or no system's
 * generalized impulse J^T lambda, changed by more than the tolerance. The
 * second test matters where rows are redundant (a joint limit and the
 * friction of the same DOF, a mimic pair at its limits, four corners of a
 * box face): impulses are then not unique, only the motion is, and the
 * sweeps can trade impulse between such rows at no cost (J^T d = 0 exactly
 * when G d = 0, G = J M^-1 J^T) for ever. */
void tl_solver_gauss_seidel(tl_world *w, int pyramid) {
  tl_native *nat = tl_native_of(w);
  int it = 0, converged = 0, tried = 0;
  double change = 0, gprev = 0;
  for (int n = 0; n < nat->nblock; n++) memset(nat->blocks[n].p, 0, sizeof(nat->blocks[n].p));
  for (it = 0; it < w->opt.solver_max_iter && !converged; it++) {
    double gen;
    /* dense per-contact solves: a direct solve of the current pattern before
     * the first sweep and after sweeps 1, 3, 7, 15, ..., when the pattern
     * changed since the last try (direct_solve); the sweep that follows is
     * the convergence test, as for any iterate */
    if (nat->dense && !pyramid && ((it + 1) & it) == 0) {
      tl_solver_direct_status(w, nat->dstat);
      if (!tried || memcmp(nat->dstat, nat->dstat_prev, (size_t)nat->dense_n)) {
        memcpy(nat->dstat_prev, nat->dstat, (size_t)nat->dense_n);
        tried = 1;
        int d = tl_solver_direct_solve(w);
        if (d) {
          nat->stats.direct++;
          gprev = 0;
          for (int n = 0; n < nat->nblock; n++) memset(nat->blocks[n].p, 0, sizeof(nat->blocks[n].p));
        }
        if (d == 2) { /* exact: converged without a sweep */
          change = 0;
          converged = 1;
          break;
        }
      }
    }
    change = gauss_seidel_sweep(w, pyramid, &gen);
    converged = change <= w->opt.solver_tol || gen <= w->opt.solver_tol;
    if (converged) continue;
    /* PGS stays ODE's QuickStep (plain SOR sweeps); and the result is always
     * a sweep's, inside every cone and box: no extrapolation after the last */
    if (pyramid || it + 1 == w->opt.solver_max_iter) continue;
    double g = sweep_norm2(w), beta = gprev > 0 ? g / gprev : 0.0;
    gprev = g;
    for (int n = 0; n < nat->nblock; n++) {
      tl_block *b = &nat->blocks[n];
      if (beta > 1.0) { /* restart */
        memcpy(b->p, b->dl, sizeof(b->p));
        continue;
      }
      double step[3] = {0, 0, 0};
      for (int r = 0; r < b->nrow; r++) {
        step[r] = beta * b->p[r];
        b->lambda[r] += step[r];
        b->p[r] = step[r] + b->dl[r];
      }
      apply_impulse(w, b, step);
    }
  }
  nat->stats.iterations = it;
  nat->stats.last_change = change;
  nat->stats.converged = converged;
}

