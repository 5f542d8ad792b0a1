/* mpc: receding-horizon iLQR on the analytic step derivatives with
 * contacts (see mpc.h). Public API only. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "mpc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tl_mpc {
  tl_mpc_params p;
  const tl_model *m;
  tl_world *w;
  tl_system *s;
  tl_step_derivatives *ws;
  int nq, nv, nu, nx, N;
  double *qref, *W, *Wf, *tau_max; /* [nq], [nx], [nx], [nu] */
  double *Xq, *Xu, *U, *K, *kff;   /* plan: [(N+1) nq], [(N+1) nv], [N nu], [N nu nx], [N nu] */
  double *Yq, *Yu, *V;             /* candidate plan: [(N+1) nq], [(N+1) nv], [N nu] */
  double *A, *B, *Bfull;           /* [N nx nx], [N nx nu], [nx nv] */
  double *Vx, *Vxx, *Qx, *Qu, *Qxx, *Quu, *Qux, *AV, *BV, *L, *tmp, *e, *tau; /* scratch */
  double cost, mu;
  int fallbacks;
};

void tl_mpc_params_default(tl_mpc_params *p) {
  *p = (tl_mpc_params){.horizon = 30,
                     .dt = 0.01,
                     .kp = 150.0,
                     .kd = 4.0,
                     .mu_ground = 0.8,
                     .w_xy = 20.0,
                     .w_z = 5000.0,
                     .w_rp = 2000.0,
                     .w_yaw = 200.0,
                     .w_joint = 20.0,
                     .w_vlin = 20.0,
                     .w_vang = 20.0,
                     .w_vjoint = 0.2,
                     .r_tau = 2e-3,
                     .terminal = 5.0,
                     .iterations = 1};
}

static tl_status fail(tl_error *err, tl_status st, const char *msg) {
  if (err) {
    memset(err, 0, sizeof *err);
    err->status = st;
    strncpy(err->message, msg, sizeof err->message - 1);
  }
  return st;
}

void tl_mpc_free(tl_mpc *c) {
  if (!c) return;
  double *arr[] = {c->qref, c->W,   c->Wf, c->tau_max, c->Xq,  c->Xu,  c->U,   c->K,   c->kff, c->Yq,
                   c->Yu,   c->V,   c->A,  c->B,       c->Bfull, c->Vx, c->Vxx, c->Qx,  c->Qu,  c->Qxx,
                   c->Quu,  c->Qux, c->AV, c->BV,      c->L,   c->tmp, c->e,   c->tau};
  for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) free(arr[i]);
  tl_step_derivatives_free(c->ws);
  tl_world_free(c->w);
  free(c);
}

tl_status tl_mpc_create(const tl_model *m, const tl_mpc_params *p, const double *q_ref, tl_mpc **out, tl_error *err) {
  if (!m || !q_ref || !out) return fail(err, TL_ERR_ARGUMENT, "tl_mpc_create: NULL argument");
  if (tl_model_joint_type(m, 0) != TL_JOINT_FLOATING)
    return fail(err, TL_ERR_ARGUMENT, "tl_mpc: needs a floating base");
  tl_mpc *c = calloc(1, sizeof *c);
  if (!c) return fail(err, TL_ERR_MEMORY, "tl_mpc: out of memory");
  tl_mpc_params_default(&c->p);
  if (p) c->p = *p;
  c->m = m;
  c->nq = tl_model_nq(m), c->nv = tl_model_nv(m), c->nu = c->nv - 6, c->nx = 2 * c->nv, c->N = c->p.horizon;
  const size_t nq = (size_t)c->nq, nv = (size_t)c->nv, nu = (size_t)c->nu, nx = (size_t)c->nx, N = (size_t)c->N;
  struct {
    double **p;
    size_t n;
  } al[] = {{&c->qref, nq},           {&c->W, nx},           {&c->Wf, nx},         {&c->tau_max, nu},
            {&c->Xq, (N + 1) * nq},   {&c->Xu, (N + 1) * nv}, {&c->U, N * nu},      {&c->K, N * nu * nx},
            {&c->kff, N * nu},        {&c->Yq, (N + 1) * nq}, {&c->Yu, (N + 1) * nv}, {&c->V, N * nu},
            {&c->A, N * nx * nx},     {&c->B, N * nx * nu},  {&c->Bfull, nx * nv}, {&c->Vx, nx},
            {&c->Vxx, nx * nx},       {&c->Qx, nx},          {&c->Qu, nu},         {&c->Qxx, nx * nx},
            {&c->Quu, nu * nu},       {&c->Qux, nu * nx},    {&c->AV, nx * nx},    {&c->BV, nu * nx},
            {&c->L, nu * nu},         {&c->tmp, nx * nx},    {&c->e, nx},          {&c->tau, nv}};
  for (size_t i = 0; i < sizeof al / sizeof al[0]; i++)
    if (!(*al[i].p = calloc(al[i].n ? al[i].n : 1, sizeof(double)))) {
      tl_mpc_free(c);
      return fail(err, TL_ERR_MEMORY, "tl_mpc: out of memory");
    }
  memcpy(c->qref, q_ref, nq * sizeof(double));
  tl_status st;
  if ((st = tl_world_create(&c->w, err)) || (st = tl_world_set_timestep(c->w, c->p.dt, err)) ||
      (st = tl_world_add_ground(c->w, 0.0, c->p.mu_ground, err)) || (st = tl_world_add_system(c->w, m, &c->s, err))) {
    tl_mpc_free(c);
    return st;
  }
  double *kp = c->tmp, *kd = c->tmp + nv;
  for (size_t k = 0; k < nv; k++) kp[k] = k < 6 ? 0.0 : c->p.kp, kd[k] = k < 6 ? 0.0 : c->p.kd;
  if ((st = tl_system_set_pd_gains(c->s, kp, kd, c->nv, err)) ||
      (st = tl_system_set_pd_targets(c->s, q_ref, c->nq, NULL, c->nv, err)) ||
      (st = tl_step_derivatives_create(c->w, &c->ws, err))) {
    tl_mpc_free(c);
    return st;
  }
  /* weights on e = (dq: base xyz, base rotation, joints | u: base linear, base angular, joints) */
  for (size_t i = 0; i < nx; i++) {
    double w;
    if (i < 2) w = c->p.w_xy;
    else if (i == 2) w = c->p.w_z;
    else if (i < 5) w = c->p.w_rp;
    else if (i == 5) w = c->p.w_yaw;
    else if (i < nv) w = c->p.w_joint;
    else if (i < nv + 3) w = c->p.w_vlin;
    else if (i < nv + 6) w = c->p.w_vang;
    else w = c->p.w_vjoint;
    c->W[i] = w;
    c->Wf[i] = c->p.terminal * w;
  }
  for (size_t j = 0; j < nu; j++) c->tau_max[j] = 80.0;
  c->mu = 1e-3;
  /* initial plan: standing still at the reference, zero torques */
  for (size_t k = 0; k <= N; k++) memcpy(c->Xq + k * nq, q_ref, nq * sizeof(double));
  *out = c;
  return TL_OK;
}

/* e = (q (-) q_ref, u) */
static void error_of(tl_mpc *c, const double *q, const double *u, double *e) {
  tl_model_difference(c->m, c->qref, q, c->nq, e, c->nv, NULL);
  memcpy(e + c->nv, u, (size_t)c->nv * sizeof(double));
}

static double stage_cost(tl_mpc *c, const double *q, const double *u, const double *tau, const double *W) {
  double J = 0;
  error_of(c, q, u, c->e);
  for (int i = 0; i < c->nx; i++) J += 0.5 * W[i] * c->e[i] * c->e[i];
  if (tau)
    for (int j = 0; j < c->nu; j++) J += 0.5 * c->p.r_tau * tau[j] * tau[j];
  return J;
}

/* Roll the plan model out from (q0, u0): tau_k = U_k + alpha kff_k + K_k (x_k (-) X_k) (gains 0: U_k
 * only), into (Yq, Yu, V). Returns the cost, INFINITY if a step failed. */
static double rollout(tl_mpc *c, const double *q0, const double *u0, double alpha, int gains) {
  const int nq = c->nq, nv = c->nv, nu = c->nu, nx = c->nx;
  double J = 0, *dx = c->tmp;
  memcpy(c->Yq, q0, (size_t)nq * sizeof(double));
  memcpy(c->Yu, u0, (size_t)nv * sizeof(double));
  for (int k = 0; k < c->N; k++) {
    double *yq = c->Yq + (size_t)k * nq, *yu = c->Yu + (size_t)k * nv, *v = c->V + (size_t)k * nu;
    const double *Uk = c->U + (size_t)k * nu;
    for (int j = 0; j < nu; j++) v[j] = Uk[j];
    if (gains) {
      tl_model_difference(c->m, c->Xq + (size_t)k * nq, yq, nq, dx, nv, NULL);
      for (int i = 0; i < nv; i++) dx[nv + i] = yu[i] - c->Xu[(size_t)k * nv + i];
      const double *Kk = c->K + (size_t)k * nu * nx, *kk = c->kff + (size_t)k * nu;
      for (int j = 0; j < nu; j++) {
        double a = alpha * kk[j];
        for (int i = 0; i < nx; i++) a += Kk[(size_t)j * nx + i] * dx[i];
        v[j] += a;
      }
    }
    for (int j = 0; j < nu; j++) v[j] = fmax(-c->tau_max[j], fmin(c->tau_max[j], v[j]));
    J += stage_cost(c, yq, yu, v, c->W);
    memset(c->tau, 0, 6 * sizeof(double));
    memcpy(c->tau + 6, v, (size_t)nu * sizeof(double));
    if (tl_system_set_state(c->s, yq, nq, yu, nv, NULL) || tl_system_set_generalized_force(c->s, c->tau, nv, NULL) ||
        tl_world_step(c->w, NULL))
      return INFINITY;
    tl_system_get_state(c->s, yq + nq, nq, yu + nv, nv, NULL);
  }
  J += stage_cost(c, c->Yq + (size_t)c->N * nq, c->Yu + (size_t)c->N * nv, NULL, c->Wf);
  return J;
}

static void accept(tl_mpc *c, double J) {
  memcpy(c->Xq, c->Yq, (size_t)(c->N + 1) * c->nq * sizeof(double));
  memcpy(c->Xu, c->Yu, (size_t)(c->N + 1) * c->nv * sizeof(double));
  memcpy(c->U, c->V, (size_t)c->N * c->nu * sizeof(double));
  c->cost = J;
}

static tl_status linearize(tl_mpc *c, tl_error *err) {
  const int nq = c->nq, nv = c->nv, nu = c->nu, nx = c->nx;
  for (int k = 0; k < c->N; k++) {
    memset(c->tau, 0, 6 * sizeof(double));
    memcpy(c->tau + 6, c->U + (size_t)k * nu, (size_t)nu * sizeof(double));
    tl_status st;
    tl_deriv_mode used;
    if ((st = tl_system_set_state(c->s, c->Xq + (size_t)k * nq, nq, c->Xu + (size_t)k * nv, nv, err)) ||
        (st = tl_system_set_generalized_force(c->s, c->tau, nv, err)) ||
        (st = tl_world_step_derivatives(c->w, c->ws, TL_DERIV_ANALYTIC, c->A + (size_t)k * nx * nx, c->Bfull, nv,
                                        &used, err)))
      return st;
    c->fallbacks += used != TL_DERIV_ANALYTIC;
    double *Bk = c->B + (size_t)k * nx * nu;
    for (int i = 0; i < nx; i++)
      for (int j = 0; j < nu; j++) Bk[(size_t)i * nu + j] = c->Bfull[(size_t)i * nv + 6 + j];
  }
  return TL_OK;
}

/* Cholesky of the n x n SPD matrix A into L (lower); 0 on success. */
static int chol(const double *A, double *L, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
      if (i == j) {
        if (!(s > 0)) return -1;
        L[i * n + i] = sqrt(s);
      } else {
        L[i * n + j] = s / L[j * n + j];
      }
    }
  return 0;
}

/* x <- L^-T L^-1 x (one right-hand side) */
static void chol_solve(const double *L, int n, double *x) {
  for (int i = 0; i < n; i++) {
    double s = x[i];
    for (int k = 0; k < i; k++) s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
}

/* Backward pass over the linearized plan: kff, K. 0 on success, -1 if Q_uu + mu is not positive. */
static int backward(tl_mpc *c) {
  const int nq = c->nq, nv = c->nv, nu = c->nu, nx = c->nx, N = c->N;
  error_of(c, c->Xq + (size_t)N * nq, c->Xu + (size_t)N * nv, c->e);
  for (int i = 0; i < nx; i++) c->Vx[i] = c->Wf[i] * c->e[i];
  memset(c->Vxx, 0, (size_t)nx * nx * sizeof(double));
  for (int i = 0; i < nx; i++) c->Vxx[i * nx + i] = c->Wf[i];
  for (int k = N - 1; k >= 0; k--) {
    const double *A = c->A + (size_t)k * nx * nx, *B = c->B + (size_t)k * nx * nu, *Uk = c->U + (size_t)k * nu;
    error_of(c, c->Xq + (size_t)k * nq, c->Xu + (size_t)k * nv, c->e);
    /* Qx = W e + A^T Vx; Qu = r U + B^T Vx */
    for (int i = 0; i < nx; i++) {
      double s = c->W[i] * c->e[i];
      for (int r = 0; r < nx; r++) s += A[r * nx + i] * c->Vx[r];
      c->Qx[i] = s;
    }
    for (int j = 0; j < nu; j++) {
      double s = c->p.r_tau * Uk[j];
      for (int r = 0; r < nx; r++) s += B[r * nu + j] * c->Vx[r];
      c->Qu[j] = s;
    }
    /* AV = A^T Vxx (nx x nx), BV = B^T Vxx (nu x nx) */
    memset(c->AV, 0, (size_t)nx * nx * sizeof(double));
    memset(c->BV, 0, (size_t)nu * nx * sizeof(double));
    for (int r = 0; r < nx; r++) {
      const double *vr = c->Vxx + (size_t)r * nx;
      for (int i = 0; i < nx; i++) {
        double a = A[r * nx + i];
        if (a == 0) continue;
        double *o = c->AV + (size_t)i * nx;
        for (int t = 0; t < nx; t++) o[t] += a * vr[t];
      }
      for (int j = 0; j < nu; j++) {
        double b = B[r * nu + j];
        if (b == 0) continue;
        double *o = c->BV + (size_t)j * nx;
        for (int t = 0; t < nx; t++) o[t] += b * vr[t];
      }
    }
    /* Qxx = W + AV A, Quu = r + BV B, Qux = BV A */
    for (int i = 0; i < nx; i++) {
      double *o = c->Qxx + (size_t)i * nx;
      memset(o, 0, (size_t)nx * sizeof(double));
      const double *av = c->AV + (size_t)i * nx;
      for (int r = 0; r < nx; r++) {
        double a = av[r];
        if (a == 0) continue;
        const double *Ar = A + (size_t)r * nx;
        for (int t = 0; t < nx; t++) o[t] += a * Ar[t];
      }
      o[i] += c->W[i];
    }
    for (int j = 0; j < nu; j++) {
      double *ou = c->Qux + (size_t)j * nx, *oq = c->Quu + (size_t)j * nu;
      memset(ou, 0, (size_t)nx * sizeof(double));
      memset(oq, 0, (size_t)nu * sizeof(double));
      const double *bv = c->BV + (size_t)j * nx;
      for (int r = 0; r < nx; r++) {
        double a = bv[r];
        if (a == 0) continue;
        const double *Ar = A + (size_t)r * nx, *Br = B + (size_t)r * nu;
        for (int t = 0; t < nx; t++) ou[t] += a * Ar[t];
        for (int t = 0; t < nu; t++) oq[t] += a * Br[t];
      }
      oq[j] += c->p.r_tau;
    }
    for (int j = 0; j < nu; j++) c->Quu[j * nu + j] += c->mu;
    if (chol(c->Quu, c->L, nu)) return -1;
    for (int j = 0; j < nu; j++) c->Quu[j * nu + j] -= c->mu;
    double *kk = c->kff + (size_t)k * nu, *Kk = c->K + (size_t)k * nu * nx;
    for (int j = 0; j < nu; j++) kk[j] = -c->Qu[j];
    chol_solve(c->L, nu, kk);
    double *col = c->tmp; /* [nu] */
    for (int i = 0; i < nx; i++) {
      for (int j = 0; j < nu; j++) col[j] = -c->Qux[(size_t)j * nx + i];
      chol_solve(c->L, nu, col);
      for (int j = 0; j < nu; j++) Kk[(size_t)j * nx + i] = col[j];
    }
    /* Vx = Qx + K^T Quu k + K^T Qu + Qux^T k; Vxx = Qxx + K^T Quu K + K^T Qux + Qux^T K */
    double *Qk = c->tmp; /* Quu k [nu] */
    for (int j = 0; j < nu; j++) {
      double s = 0;
      for (int t = 0; t < nu; t++) s += c->Quu[j * nu + t] * kk[t];
      Qk[j] = s;
    }
    for (int i = 0; i < nx; i++) {
      double s = c->Qx[i];
      for (int j = 0; j < nu; j++)
        s += Kk[(size_t)j * nx + i] * (Qk[j] + c->Qu[j]) + c->Qux[(size_t)j * nx + i] * kk[j];
      c->Vx[i] = s;
    }
    /* QK = Quu K + Qux (nu x nx) into BV; Vxx = Qxx + K^T QK + Qux^T K */
    for (int j = 0; j < nu; j++) {
      double *o = c->BV + (size_t)j * nx;
      memcpy(o, c->Qux + (size_t)j * nx, (size_t)nx * sizeof(double));
      for (int t = 0; t < nu; t++) {
        double q = c->Quu[j * nu + t];
        const double *Kt = Kk + (size_t)t * nx;
        for (int i = 0; i < nx; i++) o[i] += q * Kt[i];
      }
    }
    memcpy(c->Vxx, c->Qxx, (size_t)nx * nx * sizeof(double));
    for (int j = 0; j < nu; j++) {
      const double *Kj = Kk + (size_t)j * nx, *QKj = c->BV + (size_t)j * nx, *Quxj = c->Qux + (size_t)j * nx;
      for (int i = 0; i < nx; i++) {
        double *o = c->Vxx + (size_t)i * nx;
        double a = Kj[i], b = Quxj[i];
        for (int t = 0; t < nx; t++) o[t] += a * QKj[t] + b * Kj[t];
      }
    }
    for (int i = 0; i < nx; i++)
      for (int t = 0; t < i; t++) {
        double s = 0.5 * (c->Vxx[i * nx + t] + c->Vxx[t * nx + i]);
        c->Vxx[i * nx + t] = c->Vxx[t * nx + i] = s;
      }
  }
  return 0;
}

tl_status tl_mpc_update(tl_mpc *c, const double *q, const double *u, double *tau, tl_error *err) {
  const int nq = c->nq, nv = c->nv, nu = c->nu, nx = c->nx, N = c->N;
  /* warm start: the previous plan shifted by one knot (its last knot repeated) */
  memmove(c->Xq, c->Xq + nq, (size_t)N * nq * sizeof(double));
  memmove(c->Xu, c->Xu + nv, (size_t)N * nv * sizeof(double));
  memmove(c->U, c->U + nu, (size_t)(N - 1) * nu * sizeof(double));
  memmove(c->K, c->K + (size_t)nu * nx, (size_t)(N - 1) * nu * nx * sizeof(double));
  double J = rollout(c, q, u, 0.0, 1);
  if (!isfinite(J)) { /* the gains diverged: the shifted torques alone */
    memset(c->K, 0, (size_t)N * nu * nx * sizeof(double));
    J = rollout(c, q, u, 0.0, 0);
  }
  if (!isfinite(J)) return fail(err, TL_ERR_DIVERGED, "tl_mpc: the plan's rollout diverged");
  accept(c, J);
  for (int it = 0; it < c->p.iterations; it++) {
    tl_status st = linearize(c, err);
    if (st) return st;
    int ok = 0;
    for (int tries = 0; tries < 4 && !ok; tries++) {
      if (backward(c) == 0) ok = 1;
      else c->mu = fmin(c->mu * 10.0, 1e6);
    }
    if (!ok) break;
    static const double alphas[] = {1.0, 0.5, 0.25};
    int improved = 0;
    for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++) {
      double Jn = rollout(c, q, u, alphas[a], 1);
      if (Jn < c->cost) {
        accept(c, Jn);
        improved = 1;
        break;
      }
    }
    c->mu = improved ? fmax(c->mu * 0.5, 1e-6) : fmin(c->mu * 10.0, 1e6);
  }
  memset(tau, 0, (size_t)nv * sizeof(double));
  memcpy(tau + 6, c->U, (size_t)nu * sizeof(double));
  return TL_OK;
}

double tl_mpc_cost(const tl_mpc *c) { return c->cost; }
int tl_mpc_fallbacks(const tl_mpc *c) { return c->fallbacks; }

/* ---------------- the controller ---------------- */

tl_status tl_mpc_params_set(tl_mpc_params *p, const char *key, double v, tl_error *err) {
  if (!p || !key) return fail(err, TL_ERR_ARGUMENT, "mpc: NULL parameter");
  if (!isfinite(v)) return fail(err, TL_ERR_ARGUMENT, "mpc: a parameter must be a finite number");
  struct {
    const char *k;
    double *x;
  } d[] = {{"dt", &p->dt},         {"kp", &p->kp},         {"kd", &p->kd},         {"mu_ground", &p->mu_ground},
           {"w_xy", &p->w_xy},     {"w_z", &p->w_z},       {"w_rp", &p->w_rp},     {"w_yaw", &p->w_yaw},
           {"w_joint", &p->w_joint}, {"w_vlin", &p->w_vlin}, {"w_vang", &p->w_vang}, {"w_vjoint", &p->w_vjoint},
           {"r_tau", &p->r_tau},   {"terminal", &p->terminal}};
  if (strcmp(key, "horizon") == 0 || strcmp(key, "iterations") == 0) {
    int hz = key[0] == 'h';
    if (v != floor(v) || v < (hz ? 2 : 1) || v > (hz ? 200 : 20))
      return fail(err, TL_ERR_ARGUMENT, hz ? "mpc: horizon must be an integer in 2 .. 200 knots"
                                           : "mpc: iterations must be an integer in 1 .. 20");
    *(hz ? &p->horizon : &p->iterations) = (int)v;
    return TL_OK;
  }
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    if (strcmp(key, d[i].k) == 0) {
      if (v < 0 || (strcmp(key, "dt") == 0 && !(v > 0)))
        return fail(err, TL_ERR_ARGUMENT, "mpc: dt must be > 0 and the gains and weights >= 0");
      *d[i].x = v;
      return TL_OK;
    }
  char msg[200];
  snprintf(msg, sizeof msg,
           "mpc: unknown parameter '%.40s' (height, horizon, dt, kp, kd, iterations, mu_ground, w_xy, w_z, w_rp, "
           "w_yaw, w_joint, w_vlin, w_vang, w_vjoint, r_tau, terminal)",
           key);
  return fail(err, TL_ERR_ARGUMENT, msg);
}

void tl_mpc_controller_free(tl_mpc_controller *c) {
  if (!c) return;
  tl_mpc_free(c->mpc);
  free(c->q), free(c->u), free(c->tau), free(c->q_ref);
  memset(c, 0, sizeof *c);
}

tl_status tl_mpc_controller_init(tl_mpc_controller *c, tl_system *sys, const tl_mpc_params *p, double height,
                                 tl_error *err) {
  if (!c || !sys) return fail(err, TL_ERR_ARGUMENT, "mpc: NULL argument");
  memset(c, 0, sizeof *c);
  const tl_model *m = tl_system_model(sys);
  tl_mpc_params pp;
  tl_mpc_params_default(&pp);
  if (p) pp = *p;
  c->sys = sys, c->nq = tl_model_nq(m), c->nv = tl_model_nv(m), c->period = pp.dt, c->params = pp;
  if (tl_model_joint_type(m, 0) != TL_JOINT_FLOATING) return fail(err, TL_ERR_ARGUMENT, "mpc: needs a floating base");
  c->q = calloc((size_t)c->nq, sizeof(double)), c->u = calloc((size_t)c->nv, sizeof(double));
  c->tau = calloc((size_t)c->nv, sizeof(double)), c->q_ref = calloc((size_t)c->nq, sizeof(double));
  if (!c->q || !c->u || !c->tau || !c->q_ref) {
    tl_mpc_controller_free(c);
    return fail(err, TL_ERR_MEMORY, "mpc: out of memory");
  }
  tl_standing_options so;
  tl_standing_options_default(&so);
  if (height > 0) so.height = height;
  else so.height_fraction = 0.58;
  tl_standing_result sr;
  tl_status st;
  if ((st = tl_find_standing_pose(m, &so, c->q_ref, c->nq, &sr, err)) ||
      (st = tl_system_get_state(sys, c->q, c->nq, c->u, c->nv, err))) {
    tl_mpc_controller_free(c);
    return st;
  }
  c->height = sr.height;
  c->q_ref[0] = c->q[0], c->q_ref[1] = c->q[1]; /* stand where it is */
  double *kp = c->tau, *kd = c->u; /* scratch here */
  for (int k = 0; k < c->nv; k++) kp[k] = k < 6 ? 0.0 : pp.kp;
  for (int k = 0; k < c->nv; k++) kd[k] = k < 6 ? 0.0 : pp.kd;
  if ((st = tl_system_set_pd_gains(sys, kp, kd, c->nv, err)) ||
      (st = tl_system_set_pd_targets(sys, c->q_ref, c->nq, NULL, c->nv, err)) ||
      (st = tl_mpc_create(m, &pp, c->q_ref, &c->mpc, err))) {
    tl_mpc_controller_free(c);
    return st;
  }
  memset(c->tau, 0, (size_t)c->nv * sizeof(double));
  memset(c->u, 0, (size_t)c->nv * sizeof(double));
  return TL_OK;
}

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

tl_status tl_mpc_controller_update(tl_mpc_controller *c, double time, tl_error *err) {
  if (!c || !c->mpc) return fail(err, TL_ERR_ARGUMENT, "mpc: controller not initialised");
  if (c->started && time < c->next - 1e-9) return TL_OK;
  if (!c->started) c->started = 1, c->next = time;
  c->next += c->period;
  tl_status st = tl_system_get_state(c->sys, c->q, c->nq, c->u, c->nv, err);
  double t0 = cpu_now();
  if (st == TL_OK) st = tl_mpc_update(c->mpc, c->q, c->u, c->tau, err);
  double dt = cpu_now() - t0;
  c->cpu_sum += dt, c->cpu_max = fmax(c->cpu_max, dt), c->nsolve++;
  return st == TL_OK ? tl_system_set_generalized_force(c->sys, c->tau, c->nv, err) : st;
}
