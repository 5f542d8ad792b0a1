/* Loop constraints (talus/constraint.h) in the native engine's step.
 *
 * Rows. Each constraint gives the rows of world/constraint_project.h
 * (tl_constraint_geom: ball 3, hinge 5, weld 6, distance 1 or a one-sided
 * pair), each a 1-row block (tl_block) whose Jacobian J = J(body 1) -
 * J(body 2) lies on one system's DOFs (two bodies of one system: the union
 * of their root paths; a body and the world: its root path) or on two
 * systems' (parts 0 and 1). Velocity target: J u+ = 0 (exact constraints:
 * the velocity is exactly consistent each step), or -erp C / dt where the
 * user asked for ERP; cfm adds the compliance R = cfm (m/s per N s, as the
 * contacts' cfm). The equality rows of each component of the constraints
 * (constraints sharing a system: world/constraint_project.h,
 * tl_cproj_partition) are one equality group (tl_eqgroup.loop): the
 * per-contact solver solves them together exactly in
 * each sweep (block Gauss-Seidel) with the semidefinite Cholesky of their
 * Delassus matrix (tl_dense_cholesky_psd: a row whose pivot falls below
 * 1e-10 of its diagonal, or whose diagonal is below 1e-12 of the largest, is
 * dropped as redundant, so the kept rows' factor stays well conditioned;
 * the impulses are then the minimum-norm solution, tl_dense_psd_minnorm_*:
 * two constraints repeating a row share its load equally). PGS sweeps them
 * row by row (over-relaxed, as its other rows),
 * Dantzig takes them as free rows (lo = -inf, hi = inf). A row whose
 * Delassus diagonal is below 1e-12 of the largest of its constraint (the
 * out-of-plane row of a planar linkage closed by a ball: J is zero there) is
 * fixed at lambda = 0 for every solver (lo = hi = 0), so no solver divides
 * by a vanishing diagonal.
 *
 * Drift. After the positions' update the exact constraints (erp = cfm = 0) are
 * projected back onto C(q) = 0 (tl_loop_project: Gauss-Newton in the tangent
 * space in the metric of the step's M_eff, post-stabilization after Ascher,
 * Chin, Petzold and Reich 1995 and Cline and Pai 2003; at most
 * TL_LOOP_PROJ_ITER steps, to TL_LOOP_PROJ_TOL): the position error stays at
 * rounding level. Soft constraints (erp > 0 or cfm > 0) are not projected:
 * their rows' target corrects the fraction erp of the error per step
 * instead (Baumgarte; erp = 0 with cfm > 0: no correction), so with both an
 * equality row behaves as ODE's spring-damper: at rest under a load F its
 * error is C = F dt^2 cfm / erp.
 *
 * A constraint on a system integrated with RK4 adds no rows (RK4 systems
 * take no constraint rows: contacts, limits and loops are the Euler
 * integrator's).
 *
 * Wrench. After the solve each constraint's impulses, divided by dt, are
 * its force on body 1 at frame 1's origin and its moment about it (world
 * frame), written into w->constraints[k].force / .torque (read by
 * tl_world_constraint and by the joint-wrench accounting). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/solver_internal.h"
#include "math/tl_math.h"

/* The post-step projection: stop below this error (m, rad), after at most this many Gauss-Newton steps. */
#define TL_LOOP_PROJ_TOL 1e-12
#define TL_LOOP_PROJ_ITER 4
/* A row whose Delassus diagonal is below this fraction of its constraint's largest is fixed at 0. */
#define TL_LOOP_ROW_DROP 1e-12

/* 1 if constraint c takes rows in the step (its systems are Euler-integrated). */
static int loop_active(const tl_world *w, const tl_constraint *c) {
  for (int i = 0; i < 2; i++)
    if (c->sys[i] >= 0 && w->systems[c->sys[i]]->integrator != TL_INTEGRATOR_EULER) return 0;
  return 1;
}

/* ---------------- capacity ---------------- */

int tl_loop_reserve(tl_world *w, int *nblock, size_t *pool, size_t *ipool, size_t *eq, size_t *rows) {
  tl_native *nat = tl_native_of(w);
  int nrow = 0;
  for (int k = 0; k < w->nconstraint; k++) {
    const tl_constraint *c = &w->constraints[k];
    int r = tl_constraint_rows_max(c);
    size_t nv = (size_t)w->systems[c->sys[0]]->m->nv;
    if (c->sys[1] >= 0 && c->sys[1] != c->sys[0]) nv += (size_t)w->systems[c->sys[1]]->m->nv;
    nrow += r;
    *pool += (size_t)r * 2 * nv; /* J and Y over at most every DOF of its systems */
    *ipool += (size_t)r * nv;
  }
  *nblock += nrow;
  *rows += (size_t)nrow;
  if (w->nconstraint && tl_cproj_reserve(&nat->cproj, w)) return -1; /* also the components */
  for (int c = 0; c < nat->cproj.ncomp; c++) { /* one equality group per component */
    size_t n = 0;
    for (int i = nat->cproj.cfirst[c]; i < nat->cproj.cfirst[c + 1]; i++)
      n += (size_t)tl_constraint_rows_max(&w->constraints[nat->cproj.order[i]]);
    *eq += 4 * n * n + 4 * n; /* factor, rhs, flags, A0, Cm, S, scratch */
  }
  /* loop_rows and loop_lambda lie in the native arena (native_workspace.h): laid out for these
     capacities after the sizing; new warm starts are zero there */
  if (nrow > nat->cap_loop_row) nat->cap_loop_row = nrow;
  if (w->nconstraint > nat->cap_loop) nat->cap_loop = w->nconstraint;
  return 0;
}

void tl_loop_free(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  tl_cproj_free(&nat->cproj);
}

/* ---------------- rows ---------------- */

/* J += sign * row of point p (world) / direction dir over body `body`'s root
 * path, into part `part` of the 1-row block b (the path is a sub-chain of
 * the support, both descending). */
static void loop_jacobian(tl_world *w, tl_block *b, int part, int body, const double p[3], const double dir[3], int ang,
                          double sign) {
  tl_native *nat = tl_native_of(w);
  const tl_system *s = w->systems[part ? b->sb : b->sa];
  const int *sup = nat->ipool + b->sup[part];
  double *J = nat->pool + b->adr[part];
  for (int k = tl_constraint_leaf_dof(s->m, body), i = 0; k >= 0; k = s->m->dof_parent[k]) {
    while (sup[i] != k) i++;
    J[i] += sign * tl_constraint_row_entry(s->d.cdof + 6 * k, p, dir, ang);
  }
}

/* Row r of constraint k (geometry g) as a block of kind `kind`. */
static tl_block *loop_block(tl_world *w, int k, const tl_cgeom *g, int r, tl_row_kind kind) {
  tl_native *nat = tl_native_of(w);
  const tl_constraint *c = &w->constraints[k];
  int sa = c->sys[0], sb = c->sys[1] >= 0 && c->sys[1] != sa ? c->sys[1] : -1;
  tl_block *b = &nat->blocks[nat->nblock++];
  memset(b, 0, sizeof(*b));
  b->kind = kind;
  b->nrow = 1;
  b->sa = sa;
  b->sb = sb;
  b->contact = b->dof = b->slot = b->group = -1;
  b->lo = kind == TL_ROW_LIMIT ? 0.0 : -INFINITY;
  b->hi = INFINITY;
  b->R = c->cfm;
  const tl_model *ma = w->systems[sa]->m;
  int l1 = tl_constraint_leaf_dof(ma, c->body[0]);
  if (sb < 0 && c->sys[1] == sa) { /* two bodies of one system: J = J1 - J2 on the union of their paths */
    tl_block_add_support(w, b, 0, l1, tl_constraint_leaf_dof(ma, c->body[1]));
    loop_jacobian(w, b, 0, c->body[0], g->p1, g->dir[r], g->ang[r], 1.0);
    loop_jacobian(w, b, 0, c->body[1], g->p2, g->dir[r], g->ang[r], -1.0);
  } else {
    tl_block_add_support(w, b, 0, l1, -1);
    loop_jacobian(w, b, 0, c->body[0], g->p1, g->dir[r], g->ang[r], 1.0);
    if (sb >= 0) {
      tl_block_add_support(w, b, 1, tl_constraint_leaf_dof(w->systems[sb]->m, c->body[1]), -1);
      loop_jacobian(w, b, 1, c->body[1], g->p2, g->dir[r], g->ang[r], -1.0);
    }
  }
  b->lambda[0] = nat->loop_lambda[TL_CGEOM_ROWS * k + g->slot[r]];
  b->loop = nat->nloop_row;
  tl_loop_row *lr = &nat->loop_rows[nat->nloop_row++];
  lr->con = k;
  lr->slot = g->slot[r];
  lr->ang = g->ang[r];
  tl_v3_copy(lr->dir, g->dir[r]);
  return b;
}

/* Row velocity J u_free of a 1-row block. */
static double free_velocity(const tl_world *w, const tl_block *b) {
  tl_native *nat = tl_native_of(w);
  double v = 0;
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *J = nat->pool + b->adr[part], *u = w->systems[si]->u_free;
    const int *sup = nat->ipool + b->sup[part];
    for (int k = 0; k < b->nsup[part]; k++) v += J[k] * u[sup[k]];
  }
  return v;
}

void tl_loop_blocks(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  nat->nloop_row = 0;
  if (w->nconstraint == 0) return;
  const double dt = w->opt.dt;
  tl_cproj *cp = &nat->cproj;
  tl_cproj_partition(w, cp);
  for (int comp = 0; comp < cp->ncomp; comp++) { /* the equality rows: a group per component */
    tl_eqgroup *grp = &nat->eqgroups[nat->neqgroup];
    grp->first = nat->nblock;
    grp->n = 0;
    grp->factored = 0;
    grp->loop = 1;
    for (int i = cp->cfirst[comp]; i < cp->cfirst[comp + 1]; i++) {
      const int k = cp->order[i];
      const tl_constraint *c = &w->constraints[k];
      if (!loop_active(w, c)) continue;
      tl_cgeom g;
      tl_constraint_geom(w, c, &g);
      for (int r = 0; r < g.nrow; r++) {
        if (g.side[r]) continue;
        tl_block *b = loop_block(w, k, &g, r, TL_ROW_EQUALITY);
        b->target[0] = c->erp > 0 ? -c->erp * g.C[r] / dt : 0.0;
        b->group = nat->neqgroup;
        grp->n++;
      }
    }
    if (grp->n > 0) nat->neqgroup++;
  }
  for (int k = 0; k < w->nconstraint; k++) { /* then the one-sided rows (a distance range) */
    const tl_constraint *c = &w->constraints[k];
    if (c->type != TL_CONSTRAINT_DISTANCE || c->lo == c->hi || !loop_active(w, c)) continue;
    tl_cgeom g;
    tl_constraint_geom(w, c, &g);
    for (int r = 0; r < g.nrow; r++) {
      /* a row while within the margin of its bound, or when the free velocity would reach the bound
         within the step (as the joint limits) */
      size_t pu = nat->pool_used, iu = nat->ipool_used;
      tl_block *b = loop_block(w, k, &g, r, TL_ROW_LIMIT);
      double gap = g.C[r];
      if (gap >= w->opt.limit_margin && gap + free_velocity(w, b) * dt >= w->opt.limit_margin) {
        nat->nblock--, nat->nloop_row--; /* not near its bound: no row */
        nat->pool_used = pu, nat->ipool_used = iu;
        continue;
      }
      b->target[0] = gap > 0 ? -gap / dt : c->erp > 0 ? c->erp * (-gap) / dt : 0.0;
    }
  }
}

void tl_loop_drop_rows(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  if (nat->nloop_row == 0) return;
  /* a constraint's rows are consecutive blocks (its equality rows, or its one-sided rows) */
  for (int i = 0; i < nat->nblock;) {
    if (nat->blocks[i].loop < 0) {
      i++;
      continue;
    }
    int con = nat->loop_rows[nat->blocks[i].loop].con, j = i;
    double gmax = 0;
    for (; j < nat->nblock && nat->blocks[j].loop >= 0 && nat->loop_rows[nat->blocks[j].loop].con == con; j++)
      gmax = fmax(gmax, nat->blocks[j].G[0]);
    for (; i < j; i++) {
      tl_block *b = &nat->blocks[i];
      if (b->R > 0 || (b->G[0] > TL_LOOP_ROW_DROP * gmax && b->G[0] > 0)) continue;
      b->lo = b->hi = 0.0;
      b->lambda[0] = 0.0;
    }
  }
}

void tl_loop_after_solve(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  if (w->nconstraint == 0) return;
  const double inv_dt = 1.0 / w->opt.dt;
  for (int k = 0; k < w->nconstraint; k++) {
    memset(w->constraints[k].force, 0, sizeof(w->constraints[k].force));
    memset(w->constraints[k].torque, 0, sizeof(w->constraints[k].torque));
  }
  memset(nat->loop_lambda, 0, (size_t)w->nconstraint * TL_CGEOM_ROWS * sizeof(double));
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    if (b->loop < 0) continue;
    const tl_loop_row *lr = &nat->loop_rows[b->loop];
    tl_constraint *c = &w->constraints[lr->con];
    nat->loop_lambda[TL_CGEOM_ROWS * lr->con + lr->slot] = b->lambda[0];
    tl_v3_addscl(lr->ang ? c->torque : c->force, lr->dir, b->lambda[0] * inv_dt);
  }
}

void tl_loop_project(tl_world *w) {
  if (w->nconstraint == 0) return;
  tl_cproj_positions(w, &tl_native_of(w)->cproj, TL_CPROJ_STEP, TL_LOOP_PROJ_TOL, TL_LOOP_PROJ_ITER, NULL);
}
