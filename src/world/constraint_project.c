/* Loop constraints' geometry and the projection of the configuration onto
 * them (world/constraint_project.h): the rows of each constraint at the
 * current kinematics (shared with the native engine's rows,
 * contact/constraint_loop.c), the Gauss-Newton projection of q in the
 * tangent space with the minimum-norm step in the metric of M, the
 * velocity projection, and tl_world_project_constraints
 * (talus/constraint.h), which needs nothing of an engine: kinematics and
 * the mass matrix of the systems. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_dense.h"
#include "math/tl_math.h"
#include "world/constraint_project.h"

/* Redundant rows: a pivot below TL_CPROJ_RTOL of its diagonal entry, or a
 * diagonal entry below TL_CPROJ_ATOL of the largest one, is dropped
 * (tl_dense_cholesky_psd). */
#define TL_CPROJ_RTOL 1e-10
#define TL_CPROJ_ATOL 1e-12

int tl_constraint_leaf_dof(const tl_model *m, int body) {
  if (body < 0) return -1;
  while (body > 0 && m->jnt_nv[body] == 0) body = m->parent[body];
  return m->jnt_nv[body] ? m->v_adr[body] + m->jnt_nv[body] - 1 : -1;
}

int tl_constraint_rows_max(const tl_constraint *c) {
  switch (c->type) {
  case TL_CONSTRAINT_BALL: return 3;
  case TL_CONSTRAINT_HINGE: return 5;
  case TL_CONSTRAINT_WELD: return 6;
  default: return c->lo == c->hi ? 1 : 2;
  }
}

/* World rotation of body b of system s (the identity for the world). */
static const double *body_rot(const tl_world *w, int s, int b) {
  static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  return s < 0 ? I : w->systems[s]->d.xrot + 9 * b;
}

static void frame_point(const tl_world *w, const tl_constraint *c, int i, double out[3]) {
  if (c->sys[i] < 0) {
    tl_v3_copy(out, c->pos[i]);
    return;
  }
  const tl_system *s = w->systems[c->sys[i]];
  tl_m3_mulv(out, s->d.xrot + 9 * c->body[i], c->pos[i]);
  tl_v3_add(out, out, s->d.xpos + 3 * c->body[i]);
}

static void row(tl_cgeom *g, const double dir[3], int ang, int side, int slot, double C) {
  int r = g->nrow++;
  tl_v3_copy(g->dir[r], dir);
  g->ang[r] = (unsigned char)ang;
  g->side[r] = (unsigned char)side;
  g->slot[r] = (unsigned char)slot;
  g->C[r] = C;
}

void tl_constraint_geom(const tl_world *w, const tl_constraint *c, tl_cgeom *g) {
  static const double E[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  g->nrow = 0;
  frame_point(w, c, 0, g->p1);
  frame_point(w, c, 1, g->p2);
  double d[3];
  tl_v3_sub(d, g->p1, g->p2);
  if (c->type == TL_CONSTRAINT_DISTANCE) {
    double len = tl_v3_norm(d), n[3] = {0, 0, 1}, m[3];
    if (len > 1e-12) tl_v3_scale(n, d, 1.0 / len);
    if (c->lo == c->hi) {
      row(g, n, 0, 0, 0, len - c->lo);
      return;
    }
    tl_v3_scale(m, n, -1.0);
    if (isfinite(c->lo)) row(g, n, 0, 1, 0, len - c->lo);
    if (isfinite(c->hi)) row(g, m, 0, 1, 1, c->hi - len);
    return;
  }
  for (int r = 0; r < 3; r++) row(g, E[r], 0, 0, r, d[r]);
  const double *R1 = body_rot(w, c->sys[0], c->body[0]), *R2 = body_rot(w, c->sys[1], c->body[1]);
  if (c->type == TL_CONSTRAINT_HINGE) {
    /* b, c: unit vectors orthogonal to body 2's axis, fixed on body 2 */
    const double *a = c->axis[1];
    int k = fabs(a[0]) <= fabs(a[1]) && fabs(a[0]) <= fabs(a[2]) ? 0 : fabs(a[1]) <= fabs(a[2]) ? 1 : 2;
    double bl[3], cl[3], a1[3], b2[3], c2[3], n[3];
    tl_v3_cross(bl, a, E[k]);
    tl_v3_normalize(bl);
    tl_v3_cross(cl, a, bl);
    tl_m3_mulv(a1, R1, c->axis[0]);
    tl_m3_mulv(b2, R2, bl);
    tl_m3_mulv(c2, R2, cl);
    tl_v3_cross(n, a1, b2);
    row(g, n, 1, 0, 3, tl_v3_dot(a1, b2));
    tl_v3_cross(n, a1, c2);
    row(g, n, 1, 0, 4, tl_v3_dot(a1, c2));
  } else if (c->type == TL_CONSTRAINT_WELD) {
    double F1[9], F2[9], Rr[9], qr[4], phi[3], e[3];
    tl_m3_mul(F1, R1, c->rot[0]);
    tl_m3_mul(F2, R2, c->rot[1]);
    tl_m3_tmul(Rr, F1, F2); /* F1^T F2 = exp(phi), phi in frame 1 */
    tl_quat_from_m3(qr, Rr);
    tl_quat_log(phi, qr);
    tl_m3_mulv(e, F1, phi);
    for (int r = 0; r < 3; r++) row(g, E[r], 1, 0, 3 + r, -e[r]);
  }
}

/* ---------------- projection ---------------- */

static int included(const tl_world *w, const tl_constraint *c, int which) {
  if (which == TL_CPROJ_ALL) return 1;
  if (c->erp > 0 || c->cfm > 0) return 0; /* soft where the user asked: no projection */
  for (int i = 0; i < 2; i++)
    if (c->sys[i] >= 0 && w->systems[c->sys[i]]->integrator != TL_INTEGRATOR_EULER) return 0;
  return 1;
}

/* Union-find root of system s (uf: parent links, path halving). */
static int uf_root(int *uf, int s) {
  while (uf[s] != s) s = uf[s] = uf[uf[s]];
  return s;
}

void tl_cproj_partition(const tl_world *w, tl_cproj *p) {
  int *uf = p->uf, *root_comp = p->off; /* off: scratch here (component of a root system) */
  for (int s = 0; s < w->nsystem; s++) uf[s] = s, root_comp[s] = -1;
  for (int k = 0; k < w->nconstraint; k++) {
    const tl_constraint *c = &w->constraints[k];
    if (c->sys[1] >= 0) uf[uf_root(uf, c->sys[1])] = uf_root(uf, c->sys[0]);
  }
  p->ncomp = 0;
  for (int k = 0; k < w->nconstraint; k++) { /* number the components by their first constraint */
    int r = uf_root(uf, w->constraints[k].sys[0]);
    if (root_comp[r] < 0) root_comp[r] = p->ncomp++;
  }
  for (int c = 0; c <= p->ncomp; c++) p->cfirst[c] = 0;
  for (int k = 0; k < w->nconstraint; k++) p->cfirst[root_comp[uf_root(uf, w->constraints[k].sys[0])] + 1]++;
  for (int c = 0; c < p->ncomp; c++) p->cfirst[c + 1] += p->cfirst[c];
  int *fill = p->uf + w->nsystem; /* [ncomp] running positions */
  for (int c = 0; c < p->ncomp; c++) fill[c] = p->cfirst[c];
  for (int k = 0; k < w->nconstraint; k++) p->order[fill[root_comp[uf_root(uf, w->constraints[k].sys[0])]]++] = k;
}

int tl_cproj_reserve(tl_cproj *p, const tl_world *w) {
  const int nc = w->nconstraint, ns = w->nsystem;
  if (nc > p->ncon_cap || ns > p->nsys_cap) { /* the partition's arrays */
    int nc2 = nc > p->ncon_cap ? nc : p->ncon_cap, ns2 = ns > p->nsys_cap ? ns : p->nsys_cap;
    int *order = malloc((size_t)(nc2 ? nc2 : 1) * sizeof(int)), *cfirst = malloc((size_t)(nc2 + 1) * sizeof(int));
    int *uf = malloc((size_t)(ns2 + nc2 + 1) * sizeof(int)), *off = malloc((size_t)(ns2 ? ns2 : 1) * sizeof(int));
    if (!order || !cfirst || !uf || !off) {
      free(order), free(cfirst), free(uf), free(off);
      return -1;
    }
    free(p->order), free(p->cfirst), free(p->uf), free(p->off);
    p->order = order, p->cfirst = cfirst, p->uf = uf, p->off = off;
    p->ncon_cap = nc2, p->nsys_cap = ns2;
  }
  tl_cproj_partition(w, p);
  int rows = 0, nv = 0; /* the largest component's */
  for (int c = 0; c < p->ncomp; c++) {
    int r = 0, v = 0;
    for (int s = 0; s < ns; s++) p->off[s] = -1;
    for (int i = p->cfirst[c]; i < p->cfirst[c + 1]; i++) {
      const tl_constraint *k = &w->constraints[p->order[i]];
      r += tl_constraint_rows_max(k);
      for (int j = 0; j < 2; j++)
        if (k->sys[j] >= 0 && p->off[k->sys[j]] < 0) {
          p->off[k->sys[j]] = 0;
          v += w->systems[k->sys[j]]->m->nv;
        }
    }
    rows = r > rows ? r : rows;
    nv = v > nv ? v : nv;
  }
  if (rows <= p->rows_cap && nv <= p->nv_cap) return 0;
  rows = rows > p->rows_cap ? rows : p->rows_cap;
  nv = nv > p->nv_cap ? nv : p->nv_cap;
  size_t rn = (size_t)(rows ? rows : 1) * (size_t)(nv ? nv : 1);
  double *J = malloc(rn * sizeof(double)), *X = malloc(rn * sizeof(double));
  double *A = malloc((size_t)(rows ? rows : 1) * (size_t)(rows ? rows : 1) * sizeof(double));
  double *C = malloc((size_t)(rows ? rows : 1) * sizeof(double)), *mu = malloc((size_t)(rows ? rows : 1) * sizeof(double));
  double *dq = malloc((size_t)(nv ? nv : 1) * sizeof(double));
  unsigned char *drop = malloc((size_t)(rows ? rows : 1));
  if (!J || !X || !A || !C || !mu || !dq || !drop) {
    free(J), free(X), free(A), free(C), free(mu), free(dq), free(drop);
    return -1;
  }
  free(p->J), free(p->X), free(p->A), free(p->C), free(p->mu), free(p->dq), free(p->drop);
  p->J = J, p->X = X, p->A = A, p->C = C, p->mu = mu, p->dq = dq, p->drop = drop;
  p->rows_cap = rows, p->nv_cap = nv;
  return 0;
}

void tl_cproj_free(tl_cproj *p) {
  free(p->J), free(p->X), free(p->A), free(p->C), free(p->mu), free(p->dq), free(p->drop), free(p->off);
  free(p->order), free(p->cfirst), free(p->uf);
  memset(p, 0, sizeof *p);
}

/* Columns of the systems of component comp's constraints selected by
 * `which`; returns their DOF count. */
static int columns(const tl_world *w, tl_cproj *p, int which, int comp) {
  int nv = 0;
  for (int s = 0; s < w->nsystem; s++) p->off[s] = -1;
  for (int i = p->cfirst[comp]; i < p->cfirst[comp + 1]; i++) {
    const tl_constraint *c = &w->constraints[p->order[i]];
    if (!included(w, c, which)) continue;
    for (int j = 0; j < 2; j++) {
      int s = c->sys[j];
      if (s >= 0 && p->off[s] < 0) p->off[s] = 1; /* marked; numbered below in system order */
    }
  }
  for (int s = 0; s < w->nsystem; s++)
    if (p->off[s] > 0) {
      p->off[s] = nv;
      nv += w->systems[s]->m->nv;
    }
  return nv;
}

/* J += sign * (row of frame point p / direction dir) over body b's root path. */
static void add_row(const tl_world *w, const tl_cproj *p, int s, int b, const double pt[3], const double dir[3],
                    int ang, double sign, double *Jrow) {
  if (s < 0) return;
  const tl_system *sys = w->systems[s];
  const tl_model *m = sys->m;
  double *J = Jrow + p->off[s];
  for (int k = tl_constraint_leaf_dof(m, b); k >= 0; k = m->dof_parent[k]) {
    J[k] += sign * tl_constraint_row_entry(sys->d.cdof + 6 * k, pt, dir, ang);
  }
}

static void kinematics(tl_world *w, const tl_cproj *p) {
  for (int s = 0; s < w->nsystem; s++)
    if (p->off[s] >= 0) tl_dyn_kinematics(&w->systems[s]->d);
}

/* The rows into p->J (ld nv), residuals into p->C, 1 in p->drop for a
 * one-sided row: equality rows and one-sided rows at or beyond their bound
 * (C <= 0). Returns the row count; *err the largest position or angle error
 * of a constraint. */
static int assemble(const tl_world *w, tl_cproj *p, int which, int comp, int nv, double *err) {
  int n = 0;
  *err = 0;
  for (int i = p->cfirst[comp]; i < p->cfirst[comp + 1]; i++) {
    const tl_constraint *c = &w->constraints[p->order[i]];
    if (!included(w, c, which)) continue;
    tl_cgeom g;
    tl_constraint_geom(w, c, &g);
    double e2[2] = {0, 0};
    for (int r = 0; r < g.nrow; r++) {
      double C = g.C[r];
      if (g.side[r] && C > 0) continue;
      e2[g.ang[r]] += C * C;
      double *J = p->J + (size_t)n * (size_t)nv;
      memset(J, 0, (size_t)nv * sizeof(double));
      add_row(w, p, c->sys[0], c->body[0], g.p1, g.dir[r], g.ang[r], 1.0, J);
      add_row(w, p, c->sys[1], c->body[1], g.p2, g.dir[r], g.ang[r], -1.0, J);
      p->drop[n] = g.side[r]; /* until the factorization: the row is one-sided */
      p->C[n++] = C;
    }
    *err = fmax(*err, fmax(sqrt(e2[0]), sqrt(e2[1])));
  }
  return n;
}

/* mu <- (J M^-1 J^T)^+ mu for the n rows of p->J (X = M^-1 J^T kept as rows). */
static void solve_rows(tl_world *w, tl_cproj *p, int n, int nv) {
  for (int r = 0; r < n; r++) {
    double *X = p->X + (size_t)r * (size_t)nv;
    memcpy(X, p->J + (size_t)r * (size_t)nv, (size_t)nv * sizeof(double));
    for (int s = 0; s < w->nsystem; s++)
      if (p->off[s] >= 0) tl_dyn_solve(&w->systems[s]->d, X + p->off[s]);
  }
  double dmax = 0;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double a = tl_dense_dot(nv, p->J + (size_t)i * (size_t)nv, p->X + (size_t)j * (size_t)nv);
      p->A[(size_t)j * (size_t)n + i] = a;
      if (i == j) dmax = fmax(dmax, a);
    }
  tl_dense_cholesky_psd(n, p->A, TL_CPROJ_RTOL, TL_CPROJ_ATOL * dmax, p->drop);
  tl_dense_cholesky_psd_solve(n, p->A, p->drop, p->mu);
}

/* dq = X^T mu. */
static void step_of(const tl_cproj *p, int n, int nv) {
  memset(p->dq, 0, (size_t)nv * sizeof(double));
  for (int r = 0; r < n; r++) tl_dense_axpy(nv, p->mu[r], p->X + (size_t)r * (size_t)nv, p->dq);
}

/* Gauss-Newton of one component; returns the steps or -1, *err its error. */
static int positions_comp(tl_world *w, tl_cproj *p, int which, int comp, double tol, int max_iter, double *err) {
  int nv = columns(w, p, which, comp);
  for (int it = 0;; it++) {
    kinematics(w, p);
    int n = assemble(w, p, which, comp, nv, err);
    if (*err <= tol) return it;
    if (it >= max_iter) return -1;
    for (int r = 0; r < n; r++) p->mu[r] = -p->C[r];
    solve_rows(w, p, n, nv);
    step_of(p, n, nv);
    for (int s = 0; s < w->nsystem; s++)
      if (p->off[s] >= 0) tl_dyn_integrate_q(w->systems[s]->m, w->systems[s]->d.q, p->dq + p->off[s], 1.0);
  }
}

int tl_cproj_positions(tl_world *w, tl_cproj *p, int which, double tol, int max_iter, double *err_out) {
  int steps = 0, fail = 0;
  double err = 0;
  for (int c = 0; c < p->ncomp; c++) { /* the components share no system: each is projected alone */
    double e = 0;
    int it = positions_comp(w, p, which, c, tol, max_iter, &e);
    err = fmax(err, e);
    if (it < 0) fail = 1;
    else steps = it > steps ? it : steps;
  }
  if (err_out) *err_out = err;
  return fail ? -1 : steps;
}

void tl_cproj_velocities(tl_world *w, tl_cproj *p, int which) {
  for (int comp = 0; comp < p->ncomp; comp++) {
    int nv = columns(w, p, which, comp);
    double err;
    int n = assemble(w, p, which, comp, nv, &err), m = 0;
    double *u = p->dq; /* the involved velocities, then the change */
    for (int s = 0; s < w->nsystem; s++)
      if (p->off[s] >= 0) memcpy(u + p->off[s], w->systems[s]->d.u, (size_t)w->systems[s]->m->nv * sizeof(double));
    for (int r = 0; r < n; r++) { /* equality rows, and one-sided rows at their bound that approach it */
      double v = tl_dense_dot(nv, p->J + (size_t)r * (size_t)nv, u);
      if (!p->drop[r] || v < 0) {
        if (m != r) {
          memcpy(p->J + (size_t)m * (size_t)nv, p->J + (size_t)r * (size_t)nv, (size_t)nv * sizeof(double));
          p->C[m] = p->C[r];
        }
        p->mu[m++] = -v;
      }
    }
    solve_rows(w, p, m, nv);
    step_of(p, m, nv);
    for (int s = 0; s < w->nsystem; s++)
      if (p->off[s] >= 0)
        for (int k = 0; k < w->systems[s]->m->nv; k++) w->systems[s]->d.u[k] += p->dq[p->off[s] + k];
  }
}

tl_status tl_world_project_constraints(tl_world *w, double tol, int max_iter, tl_error *err) {
  if (!w) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "must not be NULL");
  if (!(tol > 0) || !isfinite(tol)) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "tol", "tol = %g: expected a finite tol > 0", tol);
  if (max_iter < 1) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "max_iter", "max_iter = %d: expected >= 1", max_iter);
  if (w->nconstraint == 0) return TL_OK;
  tl_cproj p;
  memset(&p, 0, sizeof p);
  size_t nq = 0;
  for (int s = 0; s < w->nsystem; s++) nq += (size_t)w->systems[s]->m->nq;
  double *save = malloc((nq ? nq : 1) * sizeof(double));
  if (!save || tl_cproj_reserve(&p, w)) {
    free(save);
    tl_cproj_free(&p);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  tl_status st = TL_OK;
  for (int s = 0, o = 0; s < w->nsystem; o += w->systems[s]->m->nq, s++) {
    tl_system *sys = w->systems[s];
    memcpy(save + o, sys->d.q, (size_t)sys->m->nq * sizeof(double));
    int used = 0;
    for (int k = 0; k < w->nconstraint && !used; k++) used = w->constraints[k].sys[0] == s || w->constraints[k].sys[1] == s;
    if (!used) continue;
    tl_system_update_dynamics(sys); /* M at the start: the metric of the steps */
    if (!st && tl_dyn_factor(&sys->d, NULL))
      st = tl_error_set(err, TL_ERR_INVALID, sys->m->source, 0, NULL,
                        "system %d ('%s'): the mass matrix is not positive definite", s, sys->m->name);
  }
  double e = 0;
  int it = st ? 0 : tl_cproj_positions(w, &p, TL_CPROJ_ALL, tol, max_iter, &e);
  if (!st && it < 0) {
    st = tl_error_set(err, TL_ERR_INVALID, NULL, 0, "constraint",
                      "tl_world_project_constraints: no configuration satisfying every constraint found: the "
                      "largest error is %g (m or rad) after %d Gauss-Newton steps (tolerance %g); the state "
                      "is unchanged", e, max_iter, tol);
  }
  if (st) {
    for (int s = 0, o = 0; s < w->nsystem; o += w->systems[s]->m->nq, s++)
      memcpy(w->systems[s]->d.q, save + o, (size_t)w->systems[s]->m->nq * sizeof(double));
  } else {
    tl_cproj_velocities(w, &p, TL_CPROJ_ALL);
  }
  for (int s = 0; s < w->nsystem; s++) w->systems[s]->kin_valid = w->systems[s]->dyn_valid = 0;
  free(save);
  tl_cproj_free(&p);
  return st;
}
