/* Derivatives of the step (talus/world.h, docs/derivatives.md): A = dx+/dx
 * and B = dx+/dtau of one tl_world_step, x = (tangent dq, u) of every system.
 *
 * TL_DERIV_FD_CENTRED: centred finite differences of whole steps taken from
 * the world's snapshot (tl_world_snapshot_save / tl_world_snapshot_restore), as MuJoCo's
 * mjd_transitionFD (Todorov et al., MuJoCo 2.2, engine_derivative_fd.c): q
 * perturbed through q (+) eps e_j, u and tau by +-eps e_j; the tangent part
 * of x+ is taken as q+_0 (-) q+_+- against the unperturbed step.
 *
 * TL_DERIV_ANALYTIC, every system on semi-implicit Euler (src/native/step.c,
 * free_velocity and integrate2); its joint rows by the implicit function
 * theorem (joint_rows below), and with contacts against static planes and box
 * faces the contact and joint rows together (contact_rows below: sticking,
 * sliding and open contacts; Le Lidec et al., RA-L 2021; Werling et al.,
 * RSS 2021):
 *   M_eff a = f(q, u) - h(q, u),  M_eff = M(q) + diag(dt (Kd + D) + dt^2 (Kp + K)),
 *   f = tau_ff + Kp (e(q) - dt u) + Kd (u_t - u) - D u + K (e_s(q) - dt u) + ext + tau,
 *   u+ = u + dt a,  q+ = q (+) dt u+.
 * With RNEA(q, u, a) = M(q) a + h(q, u), differentiating M_eff a = f - h at
 * fixed a gives
 *   da/dq = M_eff^-1 (df/dq - dRNEA/dq(q, u, a)),  da/du = M_eff^-1 (df/du - dRNEA/du),
 *   da/dtau = M_eff^-1,
 * with the analytic RNEA derivatives (Carpentier & Mansard, RSS 2018;
 * src/dynamics/derivatives.c) evaluated at the step's own acceleration a =
 * (u+ - u) / dt; df/du = -diag(dt Kp + Kd + D + dt K); df/dq = -Kp and -K on
 * vector coordinates, -Kp Jr^-1(e) on rotations (e = log(q_t q^-1): d e / d dq
 * = -Jr^-1(e), Sola et al. 2018). Then, with the Jacobians of q (+) v at
 * v = dt u+ (J_q = 1 or R(v), J_v = 1 or Jl(v) per joint),
 *   dq+/dx = J_q [1 0] + dt J_v du+/dx.
 * Cost: one step (to find whether it has constraint rows, and a), then per
 * system the RNEA derivatives, a factorization of M_eff, M_eff^-1 and the
 * products M_eff^-1 [.] over the tree pattern (tl_dyn_neg_inverse_mul,
 * O(nv^2 depth)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_dense.h"
#include "math/tl_math.h"
#include "native/step.h"
#include "native/native_internal.h"

struct tl_step_derivatives {
  const tl_world *world;
  int nsystem, nv, nq, nv_max;
  double eps;
  size_t snap_cap, snap_n;
  unsigned char *snap; /* [snap_cap] snapshot of the state differentiated */
  double *qn, *un;     /* [nq], [nv] the unperturbed x+ */
  double *qp, *up;     /* [nq], [nv] x+ of a perturbed step */
  double *cp, *cm;     /* [2 nv] each: change of x+ of the + and the - step */
  double *e;           /* [nv_max] perturbation vector of one system */
  double *acc;         /* [nv_max] the step's acceleration (u+ - u) / dt */
  double *Xq, *Xu, *Mi; /* [nv_max^2] analytic scratch */
  int row_cap;         /* 5 nv_max + 1: most joint rows one system can have active */
  double *G, *T, *Wt;  /* [row_cap nv_max] active rows, d target / d dq, M_eff^-1 G^T (transposed) */
  double *S, *Rr, *y;  /* [row_cap^2], [row_cap], [row_cap] */
  int *sys_v, *sys_q;  /* [nsystem + 1] offsets of each system in x's halves and in q */
  double *F, *K, *Jp;  /* [row_cap nv_max] equation rows, [row_cap^2] their matrix, [3 nv_max] point Jacobian */
  double *Ed, *Eo;     /* [row_cap] each: E's diagonal, its one off-diagonal entry per row (at column Ec) */
  double *Xm, *ub, *wn; /* [2 nv_max^2] d(M w)/dq scratch, [nv_max] saved u, [nv_max] M_eff^-1 J_n^T */
  int *piv, *Ec, *path; /* [row_cap], [row_cap], [nv_max] */
};

tl_status tl_step_derivatives_create(const tl_world *w, tl_step_derivatives **out, tl_error *err) {
  if (!w || !out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "world and out must not be NULL");
  *out = NULL;
  tl_step_derivatives *ws = calloc(1, sizeof(*ws));
  if (!ws) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  ws->world = w;
  ws->nsystem = w->nsystem;
  ws->eps = 1e-6;
  ws->sys_v = malloc((size_t)(w->nsystem + 1) * sizeof(int));
  ws->sys_q = malloc((size_t)(w->nsystem + 1) * sizeof(int));
  if (!ws->sys_v || !ws->sys_q) goto nomem;
  ws->sys_v[0] = ws->sys_q[0] = 0;
  for (int i = 0; i < w->nsystem; i++) {
    const tl_model *m = w->systems[i]->m;
    ws->sys_v[i + 1] = ws->sys_v[i] + m->nv;
    ws->sys_q[i + 1] = ws->sys_q[i] + m->nq;
    if (m->nv > ws->nv_max) ws->nv_max = m->nv;
  }
  ws->nv = ws->sys_v[w->nsystem];
  ws->nq = ws->sys_q[w->nsystem];
  size_t nv = (size_t)(ws->nv ? ws->nv : 1), nq = (size_t)(ws->nq ? ws->nq : 1),
         nm = (size_t)(ws->nv_max ? ws->nv_max : 1);
  ws->snap_cap = tl_world_state_size_max(w);
  ws->snap = malloc(ws->snap_cap);
  ws->qn = malloc(2 * nq * sizeof(double));
  ws->un = malloc(2 * nv * sizeof(double));
  ws->cp = malloc(4 * nv * sizeof(double));
  ws->e = malloc(2 * nm * sizeof(double));
  ws->Xq = malloc(3 * nm * nm * sizeof(double));
  /* joint rows, and 3 rows for each of at most 4 nv_max contacts with an impulse on one system */
  ws->row_cap = 5 * (int)nm + 1 + 12 * (int)nm;
  size_t rc = (size_t)ws->row_cap;
  ws->F = malloc((rc * nm + rc * rc + 3 * nm + 2 * rc + 2 * nm * nm + 2 * nm) * sizeof(double));
  ws->piv = malloc((2 * rc + nm) * sizeof(int));
  if (!ws->F || !ws->piv) goto nomem;
  ws->K = ws->F + rc * nm;
  ws->Jp = ws->K + rc * rc;
  ws->Ed = ws->Jp + 3 * nm;
  ws->Eo = ws->Ed + rc;
  ws->Xm = ws->Eo + rc;
  ws->ub = ws->Xm + 2 * nm * nm;
  ws->wn = ws->ub + nm;
  ws->Ec = ws->piv + rc;
  ws->path = ws->Ec + rc;
  ws->G = malloc((3 * rc * nm + rc * rc + 2 * rc) * sizeof(double));
  if (!ws->snap || !ws->qn || !ws->un || !ws->cp || !ws->e || !ws->Xq || !ws->G) goto nomem;
  ws->T = ws->G + rc * nm;
  ws->Wt = ws->T + rc * nm;
  ws->S = ws->Wt + rc * nm;
  ws->Rr = ws->S + rc * rc;
  ws->y = ws->Rr + rc;
  ws->qp = ws->qn + nq;
  ws->up = ws->un + nv;
  ws->cm = ws->cp + 2 * nv;
  ws->acc = ws->e + nm;
  ws->Xu = ws->Xq + nm * nm;
  ws->Mi = ws->Xu + nm * nm;
  *out = ws;
  return TL_OK;
nomem:
  tl_step_derivatives_free(ws);
  return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
}

void tl_step_derivatives_free(tl_step_derivatives *ws) {
  if (!ws) return;
  free(ws->snap);
  free(ws->qn);
  free(ws->un);
  free(ws->cp);
  free(ws->e);
  free(ws->Xq);
  free(ws->G);
  free(ws->F);
  free(ws->piv);
  free(ws->sys_v);
  free(ws->sys_q);
  free(ws);
}

int tl_step_derivatives_nv(const tl_step_derivatives *ws) { return ws ? ws->nv : 0; }

tl_status tl_step_derivatives_set_eps(tl_step_derivatives *ws, double eps, tl_error *err) {
  if (!ws) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "ws", "ws must not be NULL");
  if (!isfinite(eps) || eps <= 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "eps", "eps is %g: expected a finite number > 0", eps);
  ws->eps = eps;
  return TL_OK;
}

/* ---------------- steps from the snapshot ---------------- */

static tl_status restore(tl_world *w, tl_step_derivatives *ws, tl_error *err) {
  return tl_world_snapshot_restore(w, ws->snap, ws->snap_n, err);
}

/* Step and copy every system's q+ and u+ into q, u. */
static tl_status step_into(tl_world *w, tl_step_derivatives *ws, double *q, double *u, tl_error *err) {
  tl_status st = tl_world_step(w, err);
  if (st) return st;
  for (int i = 0; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    memcpy(q + ws->sys_q[i], s->d.q, (size_t)s->m->nq * sizeof(double));
    memcpy(u + ws->sys_v[i], s->d.u, (size_t)s->m->nv * sizeof(double));
  }
  return TL_OK;
}

/* x+ of the perturbed step (in ws->qp, ws->up) as a change from the
 * unperturbed one: tangent q+_0 (-) q+, then u+ - u+_0, into c (2 nv). */
static void change(const tl_world *w, tl_step_derivatives *ws, double *c) {
  int nv = ws->nv;
  for (int i = 0; i < w->nsystem; i++) {
    const tl_model *m = w->systems[i]->m;
    int o = ws->sys_v[i], oq = ws->sys_q[i];
    if (m->nv == 0) continue;
    tl_model_difference(m, ws->qn + oq, ws->qp + oq, m->nq, c + o, m->nv, NULL);
  }
  for (int k = 0; k < nv; k++) c[nv + k] = ws->up[k] - ws->un[k];
}

/* Kinds of column of the finite differences. */
enum { COL_Q = 0, COL_U = 1, COL_TAU = 2 };

/* One perturbed step: restore, perturb column k (system i, its DOF j) by
 * h, step, and the change of x+ into c. */
static tl_status perturbed(tl_world *w, tl_step_derivatives *ws, int kind, int i, int j, double h, double *c,
                           tl_error *err) {
  tl_status st = restore(w, ws, err);
  if (st) return st;
  tl_system *s = w->systems[i];
  const tl_model *m = s->m;
  if (kind == COL_Q) {
    memset(ws->e, 0, (size_t)m->nv * sizeof(double));
    ws->e[j] = h;
    tl_dyn_integrate_q(m, s->d.q, ws->e, 1.0);
  } else if (kind == COL_U) {
    s->d.u[j] += h;
  } else {
    s->ext[j] += h;
  }
  s->kin_valid = s->dyn_valid = 0;
  if ((st = step_into(w, ws, ws->qp, ws->up, err))) return st;
  change(w, ws, c);
  return TL_OK;
}

/* Centred differences of every column; the unperturbed step is in qn, un. */
static tl_status finite_differences(tl_world *w, tl_step_derivatives *ws, double *A, double *B, tl_error *err) {
  const int nv = ws->nv, n2 = 2 * nv;
  const double h = ws->eps, inv = 0.5 / h;
  for (int kind = COL_Q; kind <= COL_TAU; kind++) {
    double *M = kind == COL_TAU ? B : A;
    int ncol = kind == COL_TAU ? nv : n2, off = kind == COL_U ? nv : 0;
    for (int i = 0; i < w->nsystem; i++) {
      for (int j = 0; j < w->systems[i]->m->nv; j++) {
        int col = off + ws->sys_v[i] + j;
        tl_status st = perturbed(w, ws, kind, i, j, h, ws->cp, err);
        if (!st) st = perturbed(w, ws, kind, i, j, -h, ws->cm, err);
        if (st) return st;
        for (int r = 0; r < n2; r++) M[(size_t)r * ncol + col] = (ws->cp[r] - ws->cm[r]) * inv;
      }
    }
  }
  return TL_OK;
}

/* ---------------- analytic ---------------- */


/* First DOF (local) of the rotation of body b's joint, or -1 if it has none. */
static int rotation_dof(const tl_model *m, int b) {
  return m->jnt_type[b] == TL_JOINT_FLOATING ? m->v_adr[b] + 3
         : m->jnt_type[b] == TL_JOINT_SPHERICAL ? m->v_adr[b]
                                                : -1;
}

/* X[r..r+2][r..r+2] += diag(gain[r..r+2]) Jr^-1(e) (row-major, n columns). */
static void add_rotation_gain(double *X, int n, int r, const double *gain, const double e[3]) {
  double J[9];
  double me[3] = {-e[0], -e[1], -e[2]};
  tl_dyn_so3_left_jacobian(J, me, 1); /* Jr(e)^-1 = Jl(-e)^-1 */
  for (int a = 0; a < 3; a++)
    for (int c = 0; c < 3; c++) X[(size_t)(r + a) * n + r + c] += gain[r + a] * J[3 * a + c];
}

/* The joint rows of system i active at the step's solution (limits with
 * lambda > 0, Coulomb friction and saturated PD strictly inside their
 * bounds, mimic equalities; rows at a bound keep their impulse and drop
 * out), differentiated by the implicit function theorem: each active row
 * g u+ + R lambda = t(q) stays satisfied, so with W = M_eff^-1 G^T and
 * S = G W + R, every column of Z = da/dx (Xq, Xu, Mi on entry) becomes
 * Z + W S^-1 ((dt/dx - G du/dx) / dt - G Z). The blocks are those of the
 * step just taken (nat->blocks, untouched by the snapshot restore). Returns 1
 * for a row it cannot differentiate (a saturated PD of a ball joint) or
 * dependent rows (S singular). */
static int joint_rows(tl_world *w, tl_step_derivatives *ws, int i) {
  tl_native *nat = tl_native_of(w);
  tl_system *s = w->systems[i];
  const tl_model *m = s->m;
  const int n = m->nv;
  const double dt = w->opt.dt;
  double *G = ws->G, *T = ws->T, *Wt = ws->Wt, *S = ws->S, *R = ws->Rr, *y = ws->y;
  int na = 0;
  for (int bi = 0; bi < nat->nblock; bi++) {
    const tl_block *b = &nat->blocks[bi];
    if (b->sa != i) continue;
    double l = b->lambda[0];
    int active = b->kind == TL_ROW_EQUALITY || (b->kind == TL_ROW_LIMIT && l > 0) ||
                 (b->kind == TL_ROW_BOX && l > b->lo && l < b->hi);
    if (!active) continue;
    if (na >= ws->row_cap) return 1;
    double *g = G + (size_t)na * n, *t = T + (size_t)na * n;
    memset(g, 0, (size_t)n * sizeof(double));
    memset(t, 0, (size_t)n * sizeof(double));
    for (int k = 0; k < b->nsup[0]; k++) g[nat->ipool[b->sup[0] + k]] = nat->pool[b->adr[0] + k];
    int k = b->dof, body = k >= 0 ? m->dof_body[k] : -1;
    if (b->kind == TL_ROW_LIMIT && (b->slot == 0 || b->slot == 1)) { /* target from the gap to the limit */
      double q = s->d.q[m->q_adr[body]], bound = b->slot ? m->dof_upper[k] : m->dof_lower[k];
      double gap = b->slot ? bound - q : q - bound, dgap = b->slot ? -1.0 : 1.0;
      if (gap > 0) t[k] = -dgap / dt;
      else if (w->opt.erp * (-gap) / dt < w->opt.max_recovery_speed) t[k] = -w->opt.erp * dgap / dt;
    } else if (b->kind == TL_ROW_BOX && b->slot == 3) { /* saturated PD: target (Kp e + Kd u_t) / (dt Kp + Kd) */
      if (m->jnt_type[body] == TL_JOINT_SPHERICAL) return 1;
      t[k] = -s->kp[k] / (dt * s->kp[k] + s->kd[k]);
    } else if (b->kind == TL_ROW_EQUALITY) { /* mimic: -erp (q_k - mult q_j - offset) / dt */
      for (int c = 0; c < n; c++) t[c] = -w->opt.erp / dt * g[c];
    } /* friction, velocity limits: constant targets */
    R[na] = b->R;
    na++;
  }
  if (na == 0) return 0;
  tl_sysdata *d = &s->d;
  for (int r = 0; r < na; r++) {
    memcpy(Wt + (size_t)r * n, G + (size_t)r * n, (size_t)n * sizeof(double));
    tl_dyn_solve(d, Wt + (size_t)r * n); /* M_eff^-1 g_r (the factorization of M_eff is in d) */
  }
  for (int r = 0; r < na; r++)
    for (int c = 0; c < na; c++) {
      double a = r == c ? R[r] : 0.0;
      for (int k = 0; k < n; k++) a += G[(size_t)r * n + k] * Wt[(size_t)c * n + k];
      S[r * na + c] = a;
    }
  if (tl_dense_cholesky(na, S, na)) return 1;
  for (int r = 0; r < na; r++)
    if (!(S[r * na + r] > 1e-150)) return 1; /* dependent rows: a pivot of S below 1e-300 */
  double *Z[3] = {ws->Xq, ws->Xu, ws->Mi};
  for (int kind = 0; kind < 3; kind++) {
    double *X = Z[kind];
    for (int c = 0; c < n; c++) {
      for (int r = 0; r < na; r++) {
        const double *g = G + (size_t)r * n;
        double a = kind == 0 ? T[(size_t)r * n + c] / dt : kind == 1 ? -g[c] / dt : 0.0;
        for (int k = 0; k < n; k++) a -= g[k] * X[(size_t)k * n + c];
        y[r] = a;
      }
      tl_dense_trsv_lower(na, S, na, y); /* S y = rhs with S = L L^T */
      tl_dense_trsv_lower_trans(na, S, na, y);
      for (int k = 0; k < n; k++) {
        double a = 0;
        for (int r = 0; r < na; r++) a += Wt[(size_t)r * n + k] * y[r];
        X[(size_t)k * n + c] += a;
      }
    }
  }
  return 0;
}

/* ---------------- contacts (analytic) ---------------- */

/* Radius of curvature of geom g of a contact point: the point is c - rho n
 * with c fixed to the body (the centre of a sphere or of a capsule's cap);
 * 0 for corners (box, mesh vertices); -1 for shapes not covered (cylinder:
 * its rim rolls; heightmaps). */
static double contact_rho(const tl_model *m, int g) {
  switch (m->geom_type[g]) {
  case TL_GEOM_SPHERE:
  case TL_GEOM_CAPSULE: return m->geom_size[3 * g];
  case TL_GEOM_BOX:
  case TL_GEOM_MESH: return 0.0;
  default: return -1.0;
  }
}

/* 1 if contact block b can be differentiated analytically: a system's geom
 * (sphere, capsule, box, mesh) against static geometry whose normal is fixed
 * to first order (a plane, or a face of a static box: n along a face normal),
 * with no restitution impulse, solved on the exact cone (TL_SOLVER_PER_CONTACT). */
static int contact_analytic(const tl_world *w, const tl_block *b) {
  tl_native *nat = tl_native_of(w);
  const tl_wcontact *con = nat->contacts; /* native state: renamed at the facade merge */
  const tl_static_geom *stat = w->statics;
  if (b->kind != TL_ROW_CONTACT) return 1;
  if (w->opt.solver != TL_SOLVER_PER_CONTACT || b->sb >= 0) return 0;
  const tl_wcontact *c = &con[b->contact];
  if (c->sb >= 0 || c->impact[0] != 0 || c->impact[1] != 0 || c->impact[2] != 0) return 0;
  if (contact_rho(w->systems[c->sa]->m, c->ga) < 0) return 0;
  const tl_static_geom *g = &stat[c->gb];
  if (g->type == TL_GEOM_PLANE) return 1;
  if (g->type != TL_GEOM_BOX) return 0;
  const double *n = c->frame + 6;
  for (int k = 0; k < 3; k++) {
    double a[3] = {g->rot[k], g->rot[3 + k], g->rot[6 + k]};
    if (fabs(fabs(tl_v3_dot(a, n)) - 1.0) < 1e-12) return 1;
  }
  return 0;
}

/* DOF path of contact c's body a into ws->path (leaf first, descending) and
 * the point Jacobian columns Jp_k = w_k x p + v_k (world, 3 per DOF) into
 * ws->Jp. Returns the path length. */
static int contact_path(const tl_system *s, tl_step_derivatives *ws, const tl_wcontact *c) {
  const tl_model *m = s->m;
  int body = c->ba;
  while (body > 0 && m->jnt_nv[body] == 0) body = m->parent[body];
  int np = 0;
  for (int k = m->jnt_nv[body] ? m->v_adr[body] + m->jnt_nv[body] - 1 : -1; k >= 0; k = m->dof_parent[k]) {
    const double *S = s->d.cdof + 6 * k;
    double *J = ws->Jp + 3 * np;
    tl_v3_cross(J, S, c->pos);
    tl_v3_add(J, J, S + 3);
    ws->path[np++] = k;
  }
  return np;
}

/* d Jp_k / d dq_l for path entries i (DOF k) and j (DOF l): with S = (w, v)
 * the twists of the DOFs and the point p = c - rho n (c fixed to the body, n
 * fixed), a perturbation of l moves l's subtree by S_l: if l is an ancestor
 * of k (or k itself) and moves k's axis, D = w_l x Jp_k + rho w_k x (w_l x n);
 * else (k above l, or both in one ball / free rotation, whose axes stay fixed
 * in the parent frame) D = w_k x Jp_l + rho w_k x (w_l x n). */
static void contact_D(const tl_model *m, const tl_sysdata *d, const tl_step_derivatives *ws, int i, int j,
                      double rho, const double n[3], double D[3]) {
  int k = ws->path[i], l = ws->path[j];
  const double *wk = d->cdof + 6 * k, *wl = d->cdof + 6 * l;
  int bk = m->dof_body[k], bl = m->dof_body[l], r = rotation_dof(m, bk);
  int same_rot = bk == bl && r >= 0 && k >= r && l >= r && k < r + 3 && l < r + 3;
  double e[3], t[3];
  if (l <= k && !same_rot) tl_v3_cross(D, wl, ws->Jp + 3 * i);
  else tl_v3_cross(D, wk, ws->Jp + 3 * j);
  /* e_l: the point's motion beyond a body-fixed one, rho w_l x n - (n . Jp_l) n / 2 */
  const double *Jl = ws->Jp + 3 * j, hn = 0.5 * tl_v3_dot(n, Jl);
  tl_v3_cross(e, wl, n);
  for (int a = 0; a < 3; a++) e[a] = rho * e[a] - hn * n[a];
  tl_v3_cross(t, wk, e);
  for (int a = 0; a < 3; a++) D[a] += t[a];
}

/* Xq -= d(J^T lambda)/dq / dt for the contact impulses on system i (the
 * impulse as a force fixed in the world at the contact point): the part of
 * da/dq at fixed impulses that the contact Jacobian's q dependence adds. */
static void contact_force_derivative(tl_world *w, tl_step_derivatives *ws, int i, double *Xq) {
  tl_native *nat = tl_native_of(w);
  const tl_block *blk = nat->blocks;
  const tl_wcontact *con = nat->contacts;
  const int nb = nat->nblock;
  tl_system *s = w->systems[i];
  const tl_model *m = s->m;
  const int n = m->nv;
  for (int bi = 0; bi < nb; bi++) {
    const tl_block *b = &blk[bi];
    if (b->kind != TL_ROW_CONTACT || b->sa != i) continue;
    const tl_wcontact *c = &con[b->contact];
    if (b->lambda[0] == 0 && b->lambda[1] == 0 && b->lambda[2] == 0) continue;
    double f[3] = {0, 0, 0}, D[3];
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) f[a] += c->frame[3 * r + a] * b->lambda[r];
    double rho = contact_rho(m, c->ga) - 0.5 * c->depth;
    int np = contact_path(s, ws, c);
    for (int a = 0; a < np; a++)
      for (int bb = 0; bb < np; bb++) {
        contact_D(m, &s->d, ws, a, bb, rho, c->frame + 6, D);
        Xq[(size_t)ws->path[a] * n + ws->path[bb]] -= tl_v3_dot(f, D) / w->opt.dt;
      }
  }
}

/* LU with partial pivoting of K (m x m, row-major) in place; 1 if singular. */
static int lu_factor(int m, double *K, int *piv) {
  for (int c = 0; c < m; c++) {
    int p = c;
    for (int r = c + 1; r < m; r++)
      if (fabs(K[r * m + c]) > fabs(K[p * m + c])) p = r;
    piv[c] = p;
    if (!(fabs(K[p * m + c]) > 1e-300)) return 1;
    if (p != c)
      for (int k = 0; k < m; k++) {
        double t = K[c * m + k];
        K[c * m + k] = K[p * m + k];
        K[p * m + k] = t;
      }
    for (int r = c + 1; r < m; r++) {
      double f = K[r * m + c] /= K[c * m + c];
      for (int k = c + 1; k < m; k++) K[r * m + k] -= f * K[c * m + k];
    }
  }
  return 0;
}

static void lu_solve(int m, const double *K, const int *piv, double *y) {
  for (int c = 0; c < m; c++) { /* the row interchanges first: lu_factor swapped whole rows, multipliers included */
    double t = y[piv[c]];
    y[piv[c]] = y[c];
    y[c] = t;
  }
  for (int c = 0; c < m; c++)
    for (int r = c + 1; r < m; r++) y[r] -= K[r * m + c] * y[c];
  for (int c = m - 1; c >= 0; c--) {
    for (int k = c + 1; k < m; k++) y[c] -= K[c * m + k] * y[k];
    y[c] /= K[c * m + c];
  }
}

/* The active rows of system i with contacts among them, by the implicit
 * function theorem on the solve's active set. Unknowns: the changes mu of
 * the active impulse components (force directions Jf: the rows G of
 * joint_rows, a contact's t1, t2, n rows); equations E mu + F du+ = H dq
 * with du+ = U + M_eff^-1 Jf^T mu (U: the change at fixed impulses, dt Z or
 * 1 + dt Z). Joint rows as in joint_rows (F = g, E = R, H = dtarget/dq).
 * Sticking contact (lambda_n > 0, |lambda_t| < mu lambda_n): rows t1, t2, n:
 * F = J_r, E = R on the normal, H = dtarget_r/dq - d(J_r u+)/dq. Sliding
 * (on the cone, |v_t| > 0): the normal row as above, and lambda_t = mu
 * lambda_n d with d = -v_t / |v_t| (maximal dissipation, v_t = J_t u+):
 * mu_t - mu d mu_n + mu lambda_n P (J_t du+ + d(J_t u+)/dq dq) = 0,
 * P = (1 - d d^T) / |v_t|. Open contacts (lambda_n = 0) are dropped. Then
 * mu = K^-1 (H dq - F U), K = E + F M_eff^-1 Jf^T (LU), Z += W mu / dt.
 * Returns 1 when it cannot (see joint_rows; K singular). */
static int contact_rows(tl_world *w, tl_step_derivatives *ws, int i) {
  tl_native *nat = tl_native_of(w);
  const tl_block *blk = nat->blocks;
  const tl_wcontact *con = nat->contacts;
  const double *pool = nat->pool;
  const int *ipool = nat->ipool;
  const int nb = nat->nblock;
  tl_system *s = w->systems[i];
  const tl_model *m = s->m;
  const int n = m->nv, o = ws->sys_v[i];
  const double dt = w->opt.dt, *up = ws->un + o;
  double *Jf = ws->G, *H = ws->T, *Wt = ws->Wt, *F = ws->F, *K = ws->K, *y = ws->y;
  const int cap = ws->row_cap;
  int na = 0;
  double *Ed = ws->Ed, *Eo = ws->Eo;
  int *Ec = ws->Ec;
  /* the relative compliance R = cfm + c G_nn(q) of a contact normal depends on q: its derivative needs
   * w^T dM/dq w, from the RNEA derivatives at zero velocity and gravity: d's kinematics at u = 0 meanwhile */
  const double crel = w->opt.contact_compliance, g0[3] = {0, 0, 0};
  int zero_u = 0;
  for (int bi = 0; bi < nb && crel != 0; bi++) zero_u |= blk[bi].kind == TL_ROW_CONTACT && blk[bi].sa == i && blk[bi].lambda[2] > 0;
  if (zero_u) {
    memcpy(ws->ub, s->d.u, (size_t)n * sizeof(double));
    memset(s->d.u, 0, (size_t)n * sizeof(double));
    tl_dyn_kinematics(&s->d);
  }
  int fail = 0;
#define ROW(X, r) ((X) + (size_t)(r) * (size_t)n)
  for (int bi = 0; bi < nb; bi++) {
    const tl_block *b = &blk[bi];
    if (b->sa != i) continue;
    if (b->kind != TL_ROW_CONTACT) {
      double l = b->lambda[0];
      int active = b->kind == TL_ROW_EQUALITY || (b->kind == TL_ROW_LIMIT && l > 0) ||
                   (b->kind == TL_ROW_BOX && l > b->lo && l < b->hi);
      if (!active) continue;
      if (na >= cap) {
        fail = 1;
        break;
      }
      double *g = ROW(Jf, na), *t = ROW(H, na);
      memset(g, 0, (size_t)n * sizeof(double));
      memset(t, 0, (size_t)n * sizeof(double));
      for (int k = 0; k < b->nsup[0]; k++) g[ipool[b->sup[0] + k]] = pool[b->adr[0] + k];
      int k = b->dof, body = k >= 0 ? m->dof_body[k] : -1;
      if (b->kind == TL_ROW_LIMIT && (b->slot == 0 || b->slot == 1)) {
        double q = s->d.q[m->q_adr[body]], bound = b->slot ? m->dof_upper[k] : m->dof_lower[k];
        double gap = b->slot ? bound - q : q - bound, dgap = b->slot ? -1.0 : 1.0;
        if (gap > 0) t[k] = -dgap / dt;
        else if (w->opt.erp * (-gap) / dt < w->opt.max_recovery_speed) t[k] = -w->opt.erp * dgap / dt;
      } else if (b->kind == TL_ROW_BOX && b->slot == 3) {
        if (m->jnt_type[body] == TL_JOINT_SPHERICAL) {
          fail = 1;
          break;
        }
        t[k] = -s->kp[k] / (dt * s->kp[k] + s->kd[k]);
      } else if (b->kind == TL_ROW_EQUALITY) {
        for (int c = 0; c < n; c++) t[c] = -w->opt.erp / dt * g[c];
      }
      memcpy(ROW(F, na), g, (size_t)n * sizeof(double));
      Ed[na] = b->R, Eo[na] = 0, Ec[na] = na;
      na++;
      continue;
    }
    const tl_wcontact *c = &con[b->contact];
    const double *l = b->lambda, mu = b->mu;
    if (!(l[2] > 0)) continue; /* open: dropped */
    if (na + 3 > cap) {
      fail = 1;
      break;
    }
    double *Jrow[3];
    for (int r = 0; r < 3; r++) {
      Jrow[r] = ROW(Jf, na + r);
      memset(Jrow[r], 0, (size_t)n * sizeof(double));
      memset(ROW(H, na + r), 0, (size_t)n * sizeof(double));
    }
    const int *sup = ipool + b->sup[0];
    const double *J = pool + b->adr[0];
    for (int k = 0; k < b->nsup[0]; k++)
      for (int r = 0; r < 3; r++) Jrow[r][sup[k]] = J[3 * k + r];
    /* C_r = d(J_r u+)/dq (3 x n, into H rows negated) */
    double rho = contact_rho(m, c->ga) - 0.5 * c->depth, D[3];
    int np = contact_path(s, ws, c);
    for (int jb = 0; jb < np; jb++) {
      double cr[3] = {0, 0, 0};
      for (int ia = 0; ia < np; ia++) {
        contact_D(m, &s->d, ws, ia, jb, rho, c->frame + 6, D);
        double uk = up[ws->path[ia]];
        for (int r = 0; r < 3; r++) cr[r] += uk * tl_v3_dot(c->frame + 3 * r, D);
      }
      for (int r = 0; r < 3; r++) ROW(H, na + r)[ws->path[jb]] = -cr[r];
    }
    /* normal target: depth' = -J_n; gap: target depth / dt; penetration: erp (depth - slop) / dt below the cap */
    double dtn = 0;
    if (c->depth < 0) dtn = 1.0 / dt;
    else if (c->depth - w->opt.slop > 0 && c->erp * (c->depth - w->opt.slop) / dt < w->opt.max_recovery_speed) dtn = c->erp / dt;
    for (int k = 0; k < n; k++) ROW(H, na + 2)[k] -= dtn * Jrow[2][k];
    if (crel != 0) { /* - lambda_n dR/dq, dG_nn/dq_l = 2 (dJ_n/dq_l) w - w^T dM/dq_l w, w = M_eff^-1 J_n^T */
      double *wn = ws->wn, *Xm = ws->Xm, *hn = ROW(H, na + 2), cl = l[2] * crel;
      memcpy(wn, Jrow[2], (size_t)n * sizeof(double));
      tl_dyn_solve(&s->d, wn);
      tl_dyn_rnea_derivatives(&s->d, g0, wn, Xm, Xm + (size_t)n * n); /* (dM/dq_l) w at u = 0, no gravity */
      for (int c = 0; c < n; c++) {
        double a = 0;
        for (int k = 0; k < n; k++) a += wn[k] * Xm[(size_t)k * n + c];
        hn[c] += cl * a;
      }
      for (int jb = 0; jb < np; jb++) {
        double a = 0;
        for (int ia = 0; ia < np; ia++) {
          contact_D(m, &s->d, ws, ia, jb, rho, c->frame + 6, D);
          a += wn[ws->path[ia]] * tl_v3_dot(c->frame + 6, D);
        }
        hn[ws->path[jb]] -= 2 * cl * a;
      }
    }
    double lt = sqrt(l[0] * l[0] + l[1] * l[1]);
    double vt[2] = {0, 0};
    for (int k = 0; k < n; k++) vt[0] += Jrow[0][k] * up[k], vt[1] += Jrow[1][k] * up[k];
    double vn = sqrt(vt[0] * vt[0] + vt[1] * vt[1]);
    int sliding = lt >= mu * l[2] * (1 - 1e-9) && vn > 1e-9;
    for (int r = 0; r < 3; r++) Ed[na + r] = 0, Eo[na + r] = 0, Ec[na + r] = na + r;
    Ed[na + 2] = b->R;
    if (!sliding) {
      for (int r = 0; r < 3; r++) memcpy(ROW(F, na + r), Jrow[r], (size_t)n * sizeof(double));
    } else {
      double dd[2] = {-vt[0] / vn, -vt[1] / vn}, P[4], cl = mu * l[2];
      P[0] = (1 - dd[0] * dd[0]) / vn, P[1] = P[2] = -dd[0] * dd[1] / vn, P[3] = (1 - dd[1] * dd[1]) / vn;
      memcpy(ROW(F, na + 2), Jrow[2], (size_t)n * sizeof(double));
      for (int k = 0; k < n; k++) {
        double j0 = Jrow[0][k], j1 = Jrow[1][k], c0 = -ROW(H, na)[k], c1 = -ROW(H, na + 1)[k];
        ROW(F, na)[k] = cl * (P[0] * j0 + P[1] * j1);
        ROW(F, na + 1)[k] = cl * (P[2] * j0 + P[3] * j1);
        ROW(H, na)[k] = -cl * (P[0] * c0 + P[1] * c1);
        ROW(H, na + 1)[k] = -cl * (P[2] * c0 + P[3] * c1);
      }
      for (int r = 0; r < 2; r++) Ed[na + r] = 1.0, Eo[na + r] = -mu * dd[r], Ec[na + r] = na + 2;
    }
    na += 3;
  }
  if (zero_u) { /* d's kinematics back at the state's u */
    memcpy(s->d.u, ws->ub, (size_t)n * sizeof(double));
    tl_dyn_kinematics(&s->d);
  }
  if (fail) return 1;
  if (na == 0) return 0;
  /* K = E + F W, W = M_eff^-1 Jf^T; compact K to stride na */
  for (int r = 0; r < na; r++) {
    memcpy(ROW(Wt, r), ROW(Jf, r), (size_t)n * sizeof(double));
    tl_dyn_solve(&s->d, ROW(Wt, r));
  }
  for (int r = 0; r < na; r++)
    for (int c = 0; c < na; c++) {
      double a = (c == r ? Ed[r] : 0.0) + (c == Ec[r] && c != r ? Eo[r] : 0.0);
      for (int k = 0; k < n; k++) a += ROW(F, r)[k] * ROW(Wt, c)[k];
      K[(size_t)r * na + c] = a;
    }
  if (lu_factor(na, K, ws->piv)) return 1;
  double *Z[3] = {ws->Xq, ws->Xu, ws->Mi};
  for (int kind = 0; kind < 3; kind++) {
    double *X = Z[kind];
    for (int c = 0; c < n; c++) {
      for (int r = 0; r < na; r++) { /* (H dq - F U) / dt with U = dt Z (+ the identity for u) */
        const double *f = ROW(F, r);
        double a = kind == 0 ? ROW(H, r)[c] / dt : kind == 1 ? -f[c] / dt : 0.0;
        for (int k = 0; k < n; k++) a -= f[k] * X[(size_t)k * n + c];
        y[r] = a;
      }
      lu_solve(na, K, ws->piv, y);
      for (int k = 0; k < n; k++) {
        double a = 0;
        for (int r = 0; r < na; r++) a += Wt[(size_t)r * n + k] * y[r];
        X[(size_t)k * n + c] += a;
      }
    }
  }
#undef ROW
  return 0;
}

/* The derivatives of system i's step into A and B (zeroed by the caller);
 * its state is x (restored), its x+ in ws->qn, ws->un. Returns 1 (and
 * nothing else done that matters) when it cannot: finite differences then;
 * -1 with err set when M_eff is not positive definite. */
static int analytic_system(tl_world *w, tl_step_derivatives *ws, int i, double *A, double *B,
                                 tl_error *err) {
  tl_native *nat = tl_native_of(w);
  tl_system *s = w->systems[i];
  const tl_model *m = s->m;
  tl_sysdata *d = &s->d;
  const int n = m->nv, o = ws->sys_v[i], N = ws->nv, N2 = 2 * N;
  const double dt = w->opt.dt;
  double *Xq = ws->Xq, *Xu = ws->Xu, *Mi = ws->Mi, *diag = ws->e, *acc = ws->acc;
  if (n == 0) return 0;
  for (int k = 0; k < n; k++) acc[k] = (ws->un[o + k] - d->u[k]) / dt;
  tl_system_update_dynamics(s);
  tl_dyn_rnea_derivatives(d, w->opt.gravity, acc, Xq, Xu); /* d(M a + h)/dq, d(M a + h)/du at the step's a */
  /* X <- dRNEA - df: -df/du = diag(dt Kp + Kd + D + dt K), -df/dq = Kp, K or their rotation blocks */
  for (int v = 0; v < n; v++) { /* a PD that saturated is a constraint row of the step, not in f and M_eff */
    int pd = tl_system_pd_implicit(s, v);
    double kp = pd ? s->kp[v] : 0, kd = pd ? s->kd[v] : 0, D = m->dof_damping[v], K = m->dof_stiffness[v];
    Xu[(size_t)v * n + v] += dt * (kp + K) + kd + D;
    diag[v] = dt * (kd + D) + dt * dt * (kp + K);
  }
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], r = rotation_dof(m, b), nj = m->jnt_nv[b];
    for (int v = v0; v < v0 + nj; v++)
      if (v < r || r < 0 || v >= r + 3)
        Xq[(size_t)v * n + v] += (tl_system_pd_implicit(s, v) ? s->kp[v] : 0) + m->dof_stiffness[v];
    if (r < 0) continue;
    for (int k = r; k < r + 3; k++)
      if (!tl_system_pd_implicit(s, k)) return 1; /* a saturated PD of a ball joint: finite differences */
    if (s->kp[r] != 0 || s->kp[r + 1] != 0 || s->kp[r + 2] != 0) {
      double e[6];
      tl_system_pd_error(s, b, e);
      add_rotation_gain(Xq, n, r, s->kp, e + (r - v0));
    }
    if (m->jnt_type[b] == TL_JOINT_SPHERICAL &&
        (m->dof_stiffness[r] != 0 || m->dof_stiffness[r + 1] != 0 || m->dof_stiffness[r + 2] != 0)) {
      const double *q = d->q + m->q_adr[b], *qm = m->jnt_spring_quat + 4 * b;
      double qi[4] = {q[0], -q[1], -q[2], -q[3]}, dq[4], e[3];
      tl_quat_mul(dq, qm, qi);
      tl_quat_log(e, dq);
      add_rotation_gain(Xq, n, r, m->dof_stiffness, e);
    }
  }
  int has_contact = 0;
  for (int bi = 0; bi < nat->nblock; bi++) has_contact |= nat->blocks[bi].kind == TL_ROW_CONTACT && nat->blocks[bi].sa == i;
  if (has_contact) contact_force_derivative(w, ws, i, Xq);
  if (tl_dyn_factor(d, diag)) {
    tl_error_set(err, TL_ERR_DIVERGED, m->source, 0, NULL,
                 "system %d ('%s'): the effective mass matrix is not positive definite", i, m->name);
    return -1;
  }
  tl_dyn_inverse(d, Mi);                   /* da/dtau = M_eff^-1 */
  tl_dyn_neg_inverse_mul(d, Mi, Xq, 0, Xu, 0); /* da/dq = -M_eff^-1 (dRNEA/dq - df/dq), da/du likewise */
  int st = has_contact ? contact_rows(w, ws, i) : joint_rows(w, ws, i);
  if (st) return st;
  /* velocity rows: du+/dx = [dt da/dq, 1 + dt da/du], du+/dtau = dt M_eff^-1 */
  for (int a = 0; a < n; a++) {
    double *Ar = A + (size_t)(N + o + a) * N2, *Br = B + (size_t)(N + o + a) * N;
    for (int c = 0; c < n; c++) {
      Ar[o + c] = dt * Xq[(size_t)a * n + c];
      Ar[N + o + c] = dt * Xu[(size_t)a * n + c];
      Br[o + c] = dt * Mi[(size_t)a * n + c];
    }
    Ar[N + o + a] += 1.0;
  }
  /* tangent rows: dq+/dx = J_q [1 0] + dt J_v du+/dx at v = dt u+ */
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], r = rotation_dof(m, b), nj = m->jnt_nv[b];
    for (int v = v0; v < v0 + nj; v++) {
      if (r >= 0 && v >= r) break;
      double *Ar = A + (size_t)(o + v) * N2, *Br = B + (size_t)(o + v) * N;
      const double *Au = A + (size_t)(N + o + v) * N2, *Bu = B + (size_t)(N + o + v) * N;
      for (int c = 0; c < n; c++) {
        Ar[o + c] = dt * Au[o + c];
        Ar[N + o + c] = dt * Au[N + o + c];
        Br[o + c] = dt * Bu[o + c];
      }
      Ar[o + v] += 1.0;
    }
    if (r < 0) continue;
    double wv[3], J[9], R[9], qe[4];
    for (int k = 0; k < 3; k++) wv[k] = dt * ws->un[o + r + k];
    tl_dyn_so3_left_jacobian(J, wv, 0);
    tl_quat_exp(qe, wv);
    tl_quat_to_m3(R, qe);
    for (int a = 0; a < 3; a++) {
      double *Ar = A + (size_t)(o + r + a) * N2, *Br = B + (size_t)(o + r + a) * N;
      for (int c = 0; c < n; c++) {
        double sq = 0, su = 0, st = 0;
        for (int k = 0; k < 3; k++) {
          const double *Au = A + (size_t)(N + o + r + k) * N2, *Bu = B + (size_t)(N + o + r + k) * N;
          sq += J[3 * a + k] * Au[o + c];
          su += J[3 * a + k] * Au[N + o + c];
          st += J[3 * a + k] * Bu[o + c];
        }
        Ar[o + c] = dt * sq;
        Ar[N + o + c] = dt * su;
        Br[o + c] = dt * st;
      }
      for (int k = 0; k < 3; k++) Ar[o + r + k] += R[3 * a + k];
    }
  }
  return TL_OK;
}

/* ---------------- the call ---------------- */

tl_status tl_world_step_derivatives(tl_world *w, tl_step_derivatives *ws, tl_deriv_mode mode, double *A,
                                    double *B, int nv, tl_deriv_mode *used, tl_error *err) {
  tl_native *nat = tl_native_of(w);
  if (!w || !ws || !A || !B)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, !w ? "world" : !ws ? "ws" : !A ? "A" : "B",
                        "world, ws, A and B must not be NULL");
  if (mode != TL_DERIV_ANALYTIC && mode != TL_DERIV_FD_CENTRED)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "mode",
                        "unknown mode %d (TL_DERIV_ANALYTIC or TL_DERIV_FD_CENTRED)", (int)mode);
  if (w->engine != tl_native_world_engine()) /* a plugin's world: no native step to differentiate */
    return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, NULL,
                        "step derivatives need the native engine (snapshots), not '%s'", tl_world_engine_name(w));
  if (ws->world != w)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "ws", "the workspace was created for another world");
  int same = ws->nsystem == w->nsystem && tl_world_state_size_max(w) <= ws->snap_cap;
  for (int i = 0; same && i < w->nsystem; i++)
    same = w->systems[i]->m->nv == ws->sys_v[i + 1] - ws->sys_v[i] &&
           w->systems[i]->m->nq == ws->sys_q[i + 1] - ws->sys_q[i];
  if (!same)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "ws",
                        "systems or static geometry were added to the world after the workspace was created "
                        "(tl_step_derivatives_create): create a new one");
  if (nv != ws->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nv",
                        "nv is %d, the world has nv = %d (A is 2 nv x 2 nv, B 2 nv x nv)", nv, ws->nv);
  tl_status st = tl_world_snapshot_save(w, ws->snap, ws->snap_cap, &ws->snap_n, err);
  if (st) return st;
  st = step_into(w, ws, ws->qn, ws->un, err);
  int analytic = !st && mode == TL_DERIV_ANALYTIC;
  for (int i = 0; analytic && i < w->nsystem; i++) analytic = w->systems[i]->integrator == TL_INTEGRATOR_EULER;
  for (int b = 0; analytic && b < nat->nblock; b++) analytic = nat->blocks[b].sb < 0 && contact_analytic(w, &nat->blocks[b]);
  analytic = analytic && w->nconstraint == 0; /* loop constraints (rows and post-step projection): finite differences */
  tl_error e2;
  if (st) {
    restore(w, ws, &e2);
    return st;
  }
  if ((st = restore(w, ws, err))) return st;
  if (analytic) {
    memset(A, 0, (size_t)4 * nv * nv * sizeof(double));
    memset(B, 0, (size_t)2 * nv * nv * sizeof(double));
    int fail = 0;
    for (int i = 0; i < w->nsystem && !fail; i++) fail = analytic_system(w, ws, i, A, B, err);
    if (fail < 0) { /* M_eff not positive definite: an error of the step */
      restore(w, ws, &e2);
      return TL_ERR_DIVERGED;
    }
    analytic = !fail;
  }
  if (!analytic) {
    st = finite_differences(w, ws, A, B, err);
    if (st) restore(w, ws, &e2);
    else st = restore(w, ws, err);
  }
  if (!st && used) *used = analytic ? TL_DERIV_ANALYTIC : TL_DERIV_FD_CENTRED;
  return st;
}
