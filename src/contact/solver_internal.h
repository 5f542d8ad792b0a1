/* Internal to the constraint solve (constraint_rows.c, solver_gs.c,
 * solver_direct.c, impact.c, constraint_solve.c): the velocity-form helpers
 * and the off-diagonal Delassus blocks they all use, defined here as static
 * functions of each file (each is called per block and per sweep: with or
 * without link-time optimization the compiler can inline them into the
 * solvers' loops), and the functions one of these files calls in another.
 *
 * Velocity form (see tl_block, contact/constraint.h): the impulses of the
 * solve are accumulated as z = D^-1 L^-T J^T lambda per system, so a block's
 * row velocities are J u_base + Y^T z over its support and an impulse costs
 * O(|support|) (Featherstone, Rigid Body Dynamics Algorithms, 2008,
 * sec. 6.5); in a dense solve (nat->dense) the same helpers work on the dense
 * Delassus matrix (solver_direct.c). */
#ifndef TALUS_SOLVER_INTERNAL_H
#define TALUS_SOLVER_INTERNAL_H

#include <string.h>

#include "math/tl_dense.h"
#include "native/native_internal.h"

/* The helpers below are static in every file that includes this header, as
 * they were in the one file they came from (so the compiler makes the same
 * inlining choices with or without link-time optimization); unused: a file
 * need not call every one. */
#if defined(__GNUC__)
#define TL_SOLVER_HELPER __attribute__((unused))
#else
#define TL_SOLVER_HELPER
#endif

/* ---------------- velocity-form helpers ---------------- */

/* Row velocities of block b at the current impulses: v = J u_base + Y^T z
 * over each part's support (see tl_block); in a dense solve, db + A dx. */
static TL_SOLVER_HELPER void block_velocity(const tl_world *w, const tl_block *b, double *v) {
  tl_native *nat = tl_native_of(w);
  if (nat->dense) { /* v = b + A lambda on the dense matrix */
    for (int r = 0; r < b->nrow; r++)
      v[r] = nat->db[b->row + r] + tl_dense_dot(nat->dense_n, nat->dA + (size_t)(b->row + r) * (size_t)nat->dense_n, nat->dx);
    return;
  }
  for (int r = 0; r < b->nrow; r++) v[r] = b->v0[r];
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *z = w->systems[si]->z, *Y = nat->pool + b->adr[part] + (size_t)b->nsup[part] * (size_t)b->nrow;
    const int *sup = nat->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      double v0 = 0, v1 = 0, v2 = 0;
      for (int k = 0; k < ns; k++) {
        const double zk = z[sup[k]];
        v0 += Y[3 * k] * zk;
        v1 += Y[3 * k + 1] * zk;
        v2 += Y[3 * k + 2] * zk;
      }
      v[0] += v0, v[1] += v1, v[2] += v2;
    } else {
      double v0 = 0;
      for (int k = 0; k < ns; k++) v0 += Y[k] * z[sup[k]];
      v[0] += v0;
    }
  }
}

/* Impulse dl on block b: z += D^-1 Y dl on each part's support (the velocity
 * change M_eff^-1 J^T dl = L^-1 (D^-1 Y dl), L^-1 applied once at the end);
 * in a dense solve, the impulses dx += dl (apply_impulse, below: the test
 * inline, the sparse work apply_impulse_z out of line). */
static TL_SOLVER_HELPER void apply_impulse_z(tl_world *w, const tl_block *b, const double *dl) {
  tl_native *nat = tl_native_of(w);
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    tl_system *s = w->systems[si];
    double *z = s->z;
    const double *Dinv = s->d.LDinv, *Y = nat->pool + b->adr[part] + (size_t)b->nsup[part] * (size_t)b->nrow;
    const int *sup = nat->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      const double d0 = dl[0], d1 = dl[1], d2 = dl[2];
      for (int k = 0; k < ns; k++) z[sup[k]] += Dinv[sup[k]] * (Y[3 * k] * d0 + Y[3 * k + 1] * d1 + Y[3 * k + 2] * d2);
    } else {
      for (int k = 0; k < ns; k++) z[sup[k]] += Dinv[sup[k]] * (Y[k] * dl[0]);
    }
  }
}

static inline TL_SOLVER_HELPER void apply_impulse(tl_world *w, const tl_block *b, const double *dl) {
  tl_native *nat = tl_native_of(w);
  if (nat->dense) {
    for (int r = 0; r < b->nrow; r++) nat->dx[b->row + r] += dl[r];
    return;
  }
  apply_impulse_z(w, b, dl);
}

/* gen_change += J^T dl for each system of block b (N s, N m s). */
static TL_SOLVER_HELPER void add_generalized(tl_world *w, const tl_block *b, const double *dl) {
  tl_native *nat = tl_native_of(w);
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    double *g = w->systems[si]->gen_change;
    const double *J = nat->pool + b->adr[part];
    const int *sup = nat->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      const double d0 = dl[0], d1 = dl[1], d2 = dl[2];
      for (int k = 0; k < ns; k++) g[sup[k]] += J[3 * k] * d0 + J[3 * k + 1] * d1 + J[3 * k + 2] * d2;
    } else {
      for (int k = 0; k < ns; k++) g[sup[k]] += J[k] * dl[0];
    }
  }
}

/* v0 = J u of every block for each system's velocity `prev` (1: the start of
 * the step, u_prev; 0: the free velocity u_free). */
static TL_SOLVER_HELPER void set_base(tl_world *w, int prev) {
  tl_native *nat = tl_native_of(w);
  for (int i = 0; i < nat->nblock; i++) {
    tl_block *b = &nat->blocks[i];
    for (int r = 0; r < b->nrow; r++) b->v0[r] = 0;
    for (int part = 0; part < 2; part++) {
      int si = part ? b->sb : b->sa;
      if (si < 0) continue;
      const tl_system *s = w->systems[si];
      const double *u = prev ? s->u_prev : s->u_free, *J = nat->pool + b->adr[part];
      const int *sup = nat->ipool + b->sup[part], ns = b->nsup[part];
      if (b->nrow == 3) {
        double v0 = 0, v1 = 0, v2 = 0;
        for (int k = 0; k < ns; k++) {
          const double x = u[sup[k]];
          v0 += J[3 * k] * x, v1 += J[3 * k + 1] * x, v2 += J[3 * k + 2] * x;
        }
        b->v0[0] += v0, b->v0[1] += v1, b->v0[2] += v2;
      } else {
        for (int k = 0; k < ns; k++) b->v0[0] += J[k] * u[sup[k]];
      }
    }
  }
}
/* Delassus block between blocks a and b (a->nrow x b->nrow, row-major into
 * out): Y_a^T D^-1 Y_b over the common support of each system they share (a
 * merge of the two descending supports). */
static TL_SOLVER_HELPER void delassus_block(const tl_world *w, const tl_block *a, const tl_block *b, double *out) {
  tl_native *nat = tl_native_of(w);
  const int na = a->nrow, nb = b->nrow;
  for (int i = 0; i < na * nb; i++) out[i] = 0;
  for (int pa = 0; pa < 2; pa++) {
    int sa = pa ? a->sb : a->sa;
    if (sa < 0) continue;
    for (int pb = 0; pb < 2; pb++) {
      int sb = pb ? b->sb : b->sa;
      if (sb != sa) continue;
      const double *Dinv = w->systems[sa]->d.LDinv;
      const int *ia = nat->ipool + a->sup[pa], *ib = nat->ipool + b->sup[pb], ma = a->nsup[pa], mb = b->nsup[pb];
      const double *Ya = nat->pool + a->adr[pa] + (size_t)ma * (size_t)na;
      const double *Yb = nat->pool + b->adr[pb] + (size_t)mb * (size_t)nb;
      for (int i = 0, j = 0; i < ma && j < mb;) {
        if (ia[i] > ib[j]) {
          i++;
        } else if (ia[i] < ib[j]) {
          j++;
        } else {
          const double *ya = Ya + i * na, *yb = Yb + j * nb, di = Dinv[ia[i]];
          for (int r = 0; r < na; r++)
            for (int c = 0; c < nb; c++) out[r * nb + c] += ya[r] * di * yb[c];
          i++, j++;
        }
      }
    }
  }
}

/* 1 if blocks a and b share a system (a nonzero off-diagonal Delassus block is possible). */
static TL_SOLVER_HELPER int share_system(const tl_block *a, const tl_block *b) {
  return a->sa == b->sa || a->sa == b->sb || (a->sb >= 0 && (a->sb == b->sa || a->sb == b->sb));
}

/* One entry of the Delassus matrix between row ra of block a and row rb of block b. */
static TL_SOLVER_HELPER double delassus(const tl_world *w, const tl_block *a, int ra, const tl_block *b, int rb) {
  double G[9];
  if (!share_system(a, b)) return 0.0;
  delassus_block(w, a, b, G);
  return G[ra * b->nrow + rb];
}

/* Number the rows of the blocks (tl_block.row); returns how many. */
static TL_SOLVER_HELPER int number_rows(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int n = 0;
  for (int i = 0; i < nat->nblock; i++) {
    nat->blocks[i].row = n;
    n += nat->blocks[i].nrow;
  }
  return n;
}


/* ---------------- across the solver's files ---------------- */

/* The Delassus block of b (G, Y of each part) and the relative compliance of
 * contact normals; sets b->finished (constraint_rows.c). */
void tl_block_finish(tl_world *w, tl_block *b);

/* Cholesky factor of each equality group's Delassus matrix, from the dense
 * matrix when the solve has one (solver_gs.c). */
void tl_solver_factor_eqgroups(tl_world *w);
/* Gauss-Seidel sweeps over blocks [0, nblock): pyramid 1 is PGS (SOR,
 * friction pyramid), 0 the per-contact solver (exact cone, NNCG, direct
 * solves on the dense matrix); sets nat->stats' iterations, last_change and
 * converged (solver_gs.c). */
void tl_solver_gauss_seidel(tl_world *w, int pyramid);

/* The dense Delassus matrix and row velocities of blocks [0, nblock) into
 * nat->dA, nat->db (nat->dense_n rows, numbered), dx = 0 (solver_direct.c). */
void tl_solver_dense_assemble(tl_world *w);
/* Row status for a direct solve from the current impulses: 1 free, 0 held
 * (solver_direct.c). */
void tl_solver_direct_status(tl_world *w, unsigned char *st);
/* Direct solve of the pattern in nat->dstat: 0 failed or a contact slides,
 * 1 solved, 2 solved and converged (solver_direct.c). */
int tl_solver_direct_solve(tl_world *w);
/* TL_SOLVER_DANTZIG on blocks [0, nblock), falling back to PGS
 * (solver_direct.c). */
void tl_solver_dantzig(tl_world *w);

/* The restitution impact pass before the solve (impact.c). */
void tl_solver_impacts(tl_world *w);

#endif
