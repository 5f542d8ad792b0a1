/* The constraint solve of a step (tl_world_solve_constraints): the impact
 * pass (impact.c), then the world's solver (solver_gs.c: per-contact cone
 * with NNCG or PGS, on the dense Delassus matrix when that pays,
 * solver_direct.c; or Dantzig, solver_direct.c) on the rows built by
 * constraint_rows.c, with the deferred speculative contacts checked at the
 * solution (solved again with them when one would push after all); then the
 * velocities u = u_free + L^-1 z (Featherstone 2008, Table 6.4), the
 * contact residuals of the statistics (Signorini, cone, maximal dissipation)
 * and the impulses kept for the next step's warm start. */
#include <math.h>
#include <string.h>

#include "contact/solver_internal.h"
#include "math/tl_math.h"

/* 1 when at least half of the pairs of blocks share a system (their
 * Delassus block may be nonzero): a robot's contacts and joint rows all do,
 * and then the dense matrix and its direct solves pay. A stack of free boxes
 * couples each contact to a few neighbours only; there the tree-sparse
 * sweeps are cheaper than assembling and factoring a mostly-zero matrix. */
static int dense_pays(const tl_world *w) {
  tl_native *nat = tl_native_of(w);
  long shared = 0, pairs = (long)nat->nblock * (nat->nblock - 1) / 2;
  for (int i = 0; i < nat->nblock; i++)
    for (int j = i + 1; j < nat->nblock; j++) shared += share_system(&nat->blocks[i], &nat->blocks[j]);
  return 2 * shared >= pairs;
}

/* Row velocities J u of block b at the systems' current u (after the solve). */
static void block_velocity_u(const tl_world *w, const tl_block *b, double *v) {
  tl_native *nat = tl_native_of(w);
  for (int r = 0; r < b->nrow; r++) v[r] = 0;
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *u = w->systems[si]->d.u, *J = nat->pool + b->adr[part];
    const int *sup = nat->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      double v0 = 0, v1 = 0, v2 = 0;
      for (int k = 0; k < ns; k++) {
        const double x = u[sup[k]];
        v0 += J[3 * k] * x, v1 += J[3 * k + 1] * x, v2 += J[3 * k + 2] * x;
      }
      v[0] += v0, v[1] += v1, v[2] += v2;
    } else {
      for (int k = 0; k < ns; k++) v[0] += J[k] * u[sup[k]];
    }
  }
}


/* ---------------- statistics and the solve ---------------- */

static void contact_residuals(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  double sig = 0, cone = 0, dis = 0;
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    if (b->kind != TL_ROW_CONTACT) continue;
    double v[3];
    block_velocity_u(w, b, v);
    const double *l = b->lambda;
    double vn = v[2] + b->R * l[2] - b->target[2], lt = sqrt(l[0] * l[0] + l[1] * l[1]), vt = sqrt(v[0] * v[0] + v[1] * v[1]);
    sig = fmax(sig, fabs(fmin(l[2], vn)));
    cone = fmax(cone, lt - b->mu * l[2]);
    dis = fmax(dis, vt * fmax(b->mu * l[2] - lt, 0.0) + (lt * vt + l[0] * v[0] + l[1] * v[1]));
  }
  nat->stats.signorini = sig;
  nat->stats.cone = fmax(cone, 0.0);
  nat->stats.dissipation = dis;
}

/* u = u_free + L^-1 z for every system with constraint rows (tl_block). */
static void finish_velocities(tl_world *w) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    if (!s->in_solve) continue;
    tl_dyn_solve_lower(&s->d, s->z);
    for (int k = 0; k < s->m->nv; k++) s->d.u[k] = s->u_free[k] + s->z[k];
  }
}

/* The solver of the world on blocks [0, nblock), from z = 0 plus the impact
 * impulses, warm-started from the blocks' lambda; leaves the impulses in z. */
static void run_solver(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  if (w->opt.solver == TL_SOLVER_DANTZIG) {
    tl_solver_dantzig(w);
    return;
  }
  int n = number_rows(w);
  if (n <= nat->dense_cap && dense_pays(w)) { /* small coupled problems: on the dense Delassus matrix */
    nat->dense_n = n;
    tl_solver_dense_assemble(w); /* db from the velocity form */
    nat->dense = 1;
  }
  for (int i = 0; i < nat->nblock; i++) { /* warm start: last step's impulses, clamped */
    tl_block *b = &nat->blocks[i];
    if (b->nrow == 1) b->lambda[0] = fmax(b->lo, fmin(b->hi, b->lambda[0]));
    apply_impulse(w, b, b->lambda);
  }
  tl_solver_factor_eqgroups(w);
  tl_solver_gauss_seidel(w, w->opt.solver == TL_SOLVER_PGS);
  if (nat->dense) { /* the impulses into z */
    nat->dense = 0;
    for (int i = 0; i < nat->nblock; i++) apply_impulse(w, &nat->blocks[i], nat->blocks[i].lambda);
  }
}

/* 1 if every deferred contact (blocks [first, nblock)) is satisfied with no
 * impulse at the solution (u after the solve): its normal velocity does not
 * fall below its target by more than the solve's tolerance makes an impulse
 * of (then its lambda = 0 is the complementary solution, and leaving it out
 * changed nothing). Their Delassus blocks are computed only here, and only
 * for one that falls below its target at all. */
static int deferred_hold(tl_world *w, int first) {
  tl_native *nat = tl_native_of(w);
  for (int i = first; i < nat->nblock; i++) {
    tl_block *b = &nat->blocks[i];
    double v[3];
    block_velocity_u(w, b, v);
    if (!(b->target[2] - v[2] > 0)) continue;
    if (!b->finished) tl_block_finish(w, b);
    if (b->target[2] - v[2] > w->opt.solver_tol * (b->G[8] + b->R)) return 0;
  }
  return 1;
}

void tl_world_solve_constraints(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  memset(&nat->stats, 0, sizeof(nat->stats));
  nat->stats.nblock = nat->nblock;
  nat->stats.ncontact = nat->ncontact;
  for (int i = 0; i < nat->nblock; i++) nat->stats.nrow += nat->blocks[i].nrow;
  if (nat->nblock == 0) {
    nat->stats.converged = 1;
    return;
  }
  for (int i = 0; i < w->nsystem; i++) w->systems[i]->in_solve = 0;
  for (int i = 0; i < nat->nblock; i++) {
    w->systems[nat->blocks[i].sa]->in_solve = 1;
    if (nat->blocks[i].sb >= 0) w->systems[nat->blocks[i].sb]->in_solve = 1;
  }
  for (int i = 0; i < w->nsystem; i++)
    if (w->systems[i]->in_solve) memset(w->systems[i]->z, 0, (size_t)w->systems[i]->m->nv * sizeof(double));
  tl_solver_impacts(w);
  set_base(w, 0);
  const int nall = nat->nblock;
  int nsolve = nat->stats.impacts ? nall : nat->nblock_solve, sweeps = 0;
  for (;;) {
    nat->nblock = nsolve; /* the deferred contacts (the last blocks) sit out */
    run_solver(w);
    sweeps += nat->stats.iterations;
    nat->nblock = nall;
    finish_velocities(w);
    if (nsolve == nall || deferred_hold(w, nsolve)) break;
    for (int i = nsolve; i < nall; i++) /* one of them pushes after all: solve again with every block */
      if (!nat->blocks[i].finished) tl_block_finish(w, &nat->blocks[i]);
    for (int i = 0; i < w->nsystem; i++)
      if (w->systems[i]->in_solve) memset(w->systems[i]->z, 0, (size_t)w->systems[i]->m->nv * sizeof(double));
    nsolve = nall;
    nat->stats.deferred_retry = 1;
  }
  nat->stats.iterations = sweeps;
  nat->stats.deferred = nall - nsolve;
  contact_residuals(w);
  for (int i = 0; i < w->nsystem; i++)
    memset(w->systems[i]->lambda_joint, 0, TL_JOINT_SLOTS * (size_t)w->systems[i]->m->nv * sizeof(double));
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    if (b->contact >= 0) memcpy(nat->contacts[b->contact].lambda, b->lambda, sizeof(b->lambda));
    if (b->slot >= 0) /* the velocity limit's impulse signed by its side (its J entry) */
      w->systems[b->sa]->lambda_joint[TL_JOINT_SLOTS * b->dof + b->slot] =
          b->slot == 4 ? nat->pool[b->adr[0]] * b->lambda[0] : b->lambda[0];
  }  tl_loop_after_solve(w); /* loop constraints: warm starts and wrenches (constraint_loop.c) */
}
