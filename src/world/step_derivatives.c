/* Derivatives of the step (talus/world.h, docs/derivatives.md): A = dx+/dx
 * and B = dx+/dtau of one tl_world_step, x = (tangent dq, u) of every system.
 *
 * TL_DERIV_FD_CENTRED: centred finite differences of whole steps taken from
 * the world's snapshot (tl_world_snapshot_save / tl_world_snapshot_restore), as MuJoCo's
 * mjd_transitionFD (Todorov et al., MuJoCo 2.2, engine_derivative_fd.c): q
 * perturbed through q (+) eps e_j, u and tau by +-eps e_j; the tangent part
 * of x+ is taken as q+_0 (-) q+_+- against the unperturbed step.
 *
 * TL_DERIV_ANALYTIC, for a step without contacts, every system on
 * semi-implicit Euler (src/native/step.c, free_velocity and integrate2); its joint
 * rows by the implicit function theorem (joint_rows below):
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
 * system the RNEA derivatives, a factorization of M_eff and the tree solve of
 * M_eff^-1 [.] (O(nv^2 depth)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_dense.h"
#include "math/tl_math.h"
#include "native/step.h"
#include "world/world_internal.h"

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
  ws->row_cap = 5 * (int)nm + 1;
  size_t rc = (size_t)ws->row_cap;
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
 * step just taken (w->blocks, untouched by the snapshot restore). Returns 1
 * for a row it cannot differentiate (a saturated PD of a ball joint) or
 * dependent rows (S singular). */
static int joint_rows(tl_world *w, tl_step_derivatives *ws, int i) {
  tl_system *s = w->systems[i];
  const tl_model *m = s->m;
  const int n = m->nv;
  const double dt = w->opt.dt;
  double *G = ws->G, *T = ws->T, *Wt = ws->Wt, *S = ws->S, *R = ws->Rr, *y = ws->y;
  int na = 0;
  for (int bi = 0; bi < w->nblock; bi++) {
    const tl_block *b = &w->blocks[bi];
    if (b->sa != i) continue;
    double l = b->lambda[0];
    int active = b->kind == TL_ROW_EQUALITY || (b->kind == TL_ROW_LIMIT && l > 0) ||
                 (b->kind == TL_ROW_BOX && l > b->lo && l < b->hi);
    if (!active) continue;
    if (na >= ws->row_cap) return 1;
    double *g = G + (size_t)na * n, *t = T + (size_t)na * n;
    memset(g, 0, (size_t)n * sizeof(double));
    memset(t, 0, (size_t)n * sizeof(double));
    for (int k = 0; k < b->nsup[0]; k++) g[w->ipool[b->sup[0] + k]] = w->pool[b->adr[0] + k];
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

/* The derivatives of system i's step into A and B (zeroed by the caller);
 * its state is x (restored), its x+ in ws->qn, ws->un. Returns 1 (and
 * nothing else done that matters) when it cannot: finite differences then;
 * -1 with err set when M_eff is not positive definite. */
static int analytic_system(tl_world *w, tl_step_derivatives *ws, int i, double *A, double *B,
                                 tl_error *err) {
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
  if (tl_dyn_factor(d, diag)) {
    tl_error_set(err, TL_ERR_DIVERGED, m->source, 0, NULL,
                 "system %d ('%s'): the effective mass matrix is not positive definite", i, m->name);
    return -1;
  }
  tl_dyn_solve_rows_neg(d, Xq, Xu); /* da/dq = -M_eff^-1 (dRNEA/dq - df/dq), da/du likewise */
  tl_dyn_inverse(d, Mi);            /* da/dtau = M_eff^-1 */
  int st = joint_rows(w, ws, i);
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
  if (!w || !ws || !A || !B)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, !w ? "world" : !ws ? "ws" : !A ? "A" : "B",
                        "world, ws, A and B must not be NULL");
  if (mode != TL_DERIV_ANALYTIC && mode != TL_DERIV_FD_CENTRED)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "mode",
                        "unknown mode %d (TL_DERIV_ANALYTIC or TL_DERIV_FD_CENTRED)", (int)mode);
  if (w->engine)
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
  int analytic = !st && mode == TL_DERIV_ANALYTIC && w->ncontact == 0;
  for (int i = 0; analytic && i < w->nsystem; i++) analytic = w->systems[i]->integrator == TL_INTEGRATOR_EULER;
  for (int b = 0; analytic && b < w->nblock; b++) analytic = w->blocks[b].kind != TL_ROW_CONTACT && w->blocks[b].sb < 0;
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
