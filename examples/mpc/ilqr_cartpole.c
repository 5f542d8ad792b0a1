/* ilqr_cartpole: swing the cartpole up with iLQR on Talus's analytic step
 * derivatives, then hold it upright in closed loop (issue 24 §5 (a)).
 *
 * Written against the public API only (talus/talus.h). The robot is the
 * shared cartpole (../shared/robots/cartpole/cartpole.urdf), welded to the
 * world: q = (cart position x [m] along world x, pole angle th [rad] about
 * world y), u = their rates. th = 0 is upright (the pole's centre of mass
 * 0.5 m above the pivot), th = pi hangs down. Cart 1 kg, pole 10 kg.
 *
 * Only the cart is actuated: a horizontal force F [N], |F| <= F_MAX = 50 N,
 * applied as the generalized force tau = (F, 0) (tl_system_set_generalized_force;
 * no PD). dt = 1 ms (the world's default), one control per step.
 *
 * 1. Plan: iLQR (Tassa, Erez, Todorov, "Synthesis and stabilization of
 *    complex behaviors through online trajectory optimization", IROS 2012)
 *    over the whole T = 3 s (3000 steps) from hanging at rest. Dynamics:
 *    the simulator's own step; its linearization A = dx+/dx, B = dx+/dtau
 *    (4 x 4 and 4 x 2, only B's cart column used) from
 *    tl_world_step_derivatives(TL_DERIV_ANALYTIC). The force limit by
 *    squashing: F = F_MAX tanh(w), w the decision variable (Tassa, Mansard,
 *    Todorov, "Control-limited DDP", ICRA 2014, discuss this option).
 *    Cost per step, dt [c_th (1 - cos th) + c_x x^2/2 + c_v v^2/2 +
 *    c_w om^2/2 + r F^2/2 + r_w w^2/2] (1 - cos th: wrap-safe; Gauss-Newton
 *    Hessians: 1 - cos th = |(sin th, 1 - cos th)|^2 / 2 gives c_th, and
 *    r F^2/2 gives r (dF/dw)^2, so Q_uu stays positive), terminal
 *    e^T P e / 2 with e = (x, wrap(th), v, om) and P the infinite-horizon
 *    LQR cost of the upright balance (Riccati iteration on A, B at
 *    upright). Levenberg-Marquardt regularization mu on V_xx in the
 *    backward pass (mu up x10 when Q_uu <= 0 or the line search fails,
 *    down /2 on success), backtracking line search on alpha in
 *    {1, 1/2, ..., 1/2^9}, accept when the cost decreases.
 * 2. Track: a new world from the same start, F = F_MAX tanh(w_k + K_k (x - x_k))
 *    with the iLQR feedback gains K_k for t < T, then the LQR
 *    F = clamp(-K_lqr e, +-F_MAX) to the end of a 4 s run.
 *    With --mpc: re-solve at 50 Hz from the measured state instead (one
 *    warm-started iLQR iteration over the rest of T, then over a receding
 *    1 s; see mpc_resolve), tracking the latest plan with its gains between
 *    re-solves; prints the CPU time per control step.
 *
 * Prints the time from which the pole stays within 0.1 rad of upright, the
 * final angle error, the largest |F| and the solve time (thread CPU time).
 * Exit 0 when the pole is within 0.1 rad of upright before t = 3 s and
 * stays there to 4 s with |F| <= F_MAX; 1 otherwise; 77 when the shared
 * robot corpus is absent.
 *
 * Usage: ./build/ilqr_cartpole [--mpc] [--kick W] [URDF]
 *   --kick W: add W rad/s to the pole's rate at t = 1 s (a disturbance the
 *   plan does not know; the exit code then still asks for upright before 3 s)
 *   ILQR_TRACE=1 prints each iteration's cost.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <talus/talus.h>

#ifndef TALUS_SOURCE_DIR
#define TALUS_SOURCE_DIR "."
#endif

#define PI 3.14159265358979323846
#define F_MAX 50.0   /* N, the cart force bound */
#define T_PLAN 3.0   /* s, iLQR horizon */
#define T_RUN 4.0    /* s, closed-loop run */
#define NX 4         /* x = (x, th, v, om) */
#define MAXN 3000    /* steps of the horizon at dt = 1 ms */
#define MAX_ITER 300
#define PERIOD0 1.7  /* s, initial guess w = W0 sin(2 pi t / PERIOD0): about the hanging pole's period */
#define W0 0.8

/* Cost weights (per second of the running cost). */
static const double C_TH = 20.0, C_X = 0.1, C_V = 0.05, C_W = 0.5, R_F = 1e-3, R_W = 1e-3;

static int fail_at(const tl_error *err, int line) {
  fprintf(stderr, "error (ilqr_cartpole.c:%d): %s\n", line, err->message);
  return 1;
}
#define fail(err) fail_at(err, __LINE__)

static double now_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double wrap(double a) { return atan2(sin(a), cos(a)); }

/* The planner's state: a world, its cartpole, a snapshot of the start. */
typedef struct {
  tl_world *world;
  tl_system *sys;
  tl_step_derivatives *ws;
  unsigned char snap[1 << 14];
  size_t snap_len;
  int n;     /* steps */
  double dt; /* s */
  double P[NX * NX], Klqr[NX];
} planner;

static tl_status get_x(tl_system *sys, double x[NX], tl_error *err) {
  return tl_system_get_state(sys, x, 2, x + 2, 2, err);
}

static tl_status apply_force(tl_system *sys, double F, tl_error *err) {
  double tau[2] = {F, 0.0}; /* only the cart is actuated */
  return tl_system_set_generalized_force(sys, tau, 2, err);
}

static double running_cost(const double *x, double w, double dt) {
  double F = F_MAX * tanh(w);
  return dt * (C_TH * (1.0 - cos(x[1])) + 0.5 * (C_X * x[0] * x[0] + C_V * x[2] * x[2] + C_W * x[3] * x[3]) +
               0.5 * (R_F * F * F + R_W * w * w));
}

static double terminal_cost(const planner *pl, const double *x) {
  double e[NX] = {x[0], wrap(x[1]), x[2], x[3]}, c = 0.0;
  for (int i = 0; i < NX; ++i)
    for (int j = 0; j < NX; ++j) c += 0.5 * e[i] * pl->P[i * NX + j] * e[j];
  return c;
}

/* Roll out from the start: w_k = wbar_k + alpha kff_k + K_k (x_k - xbar_k)
 * (K NULL: open loop on w). Writes xs (n+1 states) and ws_out (n controls);
 * returns the cost, or INFINITY when a step failed. */
static double rollout(planner *pl, const double *xbar, const double *wbar, const double *kff, const double *K,
                      double alpha, double *xs, double *w_out, tl_error *err) {
  if (tl_world_snapshot_restore(pl->world, pl->snap, pl->snap_len, err) != TL_OK) return INFINITY;
  double cost = 0.0;
  for (int k = 0; k < pl->n; ++k) {
    double *x = xs + k * NX;
    if (get_x(pl->sys, x, err) != TL_OK) return INFINITY;
    double w = wbar[k];
    if (kff) w += alpha * kff[k];
    if (K) {
      for (int i = 0; i < NX; ++i) w += K[k * NX + i] * (x[i] - xbar[k * NX + i]);
    }
    w_out[k] = w;
    cost += running_cost(x, w, pl->dt);
    if (apply_force(pl->sys, F_MAX * tanh(w), err) != TL_OK || tl_world_step(pl->world, err) != TL_OK)
      return INFINITY;
  }
  if (get_x(pl->sys, xs + pl->n * NX, err) != TL_OK) return INFINITY;
  return cost + terminal_cost(pl, xs + pl->n * NX);
}

/* A (4x4) and the cart column of B (4) of each step along (xs, w): the
 * analytic step derivatives at every state with its force applied. */
static int linearize(planner *pl, const double *w, double *As, double *Bs, int *nfallback, tl_error *err) {
  if (tl_world_snapshot_restore(pl->world, pl->snap, pl->snap_len, err) != TL_OK) return 1;
  double B[NX * 2];
  for (int k = 0; k < pl->n; ++k) {
    tl_deriv_mode used;
    if (apply_force(pl->sys, F_MAX * tanh(w[k]), err) != TL_OK ||
        tl_world_step_derivatives(pl->world, pl->ws, TL_DERIV_ANALYTIC, As + k * NX * NX, B, 2, &used, err) != TL_OK ||
        tl_world_step(pl->world, err) != TL_OK)
      return 1;
    if (used != TL_DERIV_ANALYTIC) ++*nfallback;
    for (int i = 0; i < NX; ++i) Bs[k * NX + i] = B[i * 2 + 0];
  }
  return 0;
}

/* Infinite-horizon discrete LQR at upright (x = 0, F = 0): iterate the
 * Riccati recursion with the running cost's Hessian (state: the quadratic
 * weights, th: C_TH since 1 - cos th ~ th^2/2; force: R_F) until P settles. */
static int lqr_upright(planner *pl, tl_error *err) {
  double A[NX * NX], B2[NX * 2], B[NX], q0[4] = {0}, u0[2] = {0};
  if (tl_system_set_state(pl->sys, q0, 2, u0, 2, err) != TL_OK || apply_force(pl->sys, 0.0, err) != TL_OK ||
      tl_world_step_derivatives(pl->world, pl->ws, TL_DERIV_ANALYTIC, A, B2, 2, NULL, err) != TL_OK)
    return 1;
  for (int i = 0; i < NX; ++i) B[i] = B2[i * 2];
  const double dt = pl->dt, Q[NX] = {dt * C_X, dt * C_TH, dt * C_V, dt * C_W}, R = dt * R_F;
  double P[NX * NX] = {0};
  for (int i = 0; i < NX; ++i) P[i * NX + i] = Q[i];
  for (int it = 0; it < 200000; ++it) {
    double PB[NX], PA[NX * NX], s = R, K[NX], Pn[NX * NX], diff = 0.0;
    for (int i = 0; i < NX; ++i) {
      PB[i] = 0.0;
      for (int j = 0; j < NX; ++j) PB[i] += P[i * NX + j] * B[j];
      s += B[i] * PB[i];
    }
    for (int i = 0; i < NX; ++i)
      for (int j = 0; j < NX; ++j) {
        PA[i * NX + j] = 0.0;
        for (int l = 0; l < NX; ++l) PA[i * NX + j] += P[i * NX + l] * A[l * NX + j];
      }
    for (int j = 0; j < NX; ++j) { /* K = (R + B'PB)^-1 B'PA */
      K[j] = 0.0;
      for (int i = 0; i < NX; ++i) K[j] += PB[i] * A[i * NX + j];
      K[j] /= s;
    }
    for (int i = 0; i < NX; ++i)
      for (int j = 0; j < NX; ++j) {
        double v = (i == j ? Q[i] : 0.0) - s * K[i] * K[j];
        for (int l = 0; l < NX; ++l) v += A[l * NX + i] * PA[l * NX + j];
        Pn[i * NX + j] = v;
      }
    for (int i = 0; i < NX; ++i) /* symmetrize: the recursion drifts off and diverges otherwise */
      for (int j = 0; j < NX; ++j) {
        double v = 0.5 * (Pn[i * NX + j] + Pn[j * NX + i]);
        diff = fmax(diff, fabs(v - P[i * NX + j]) / fmax(1.0, fabs(v)));
        Pn[i * NX + j] = v;
      }
    memcpy(P, Pn, sizeof P);
    memcpy(pl->Klqr, K, sizeof K);
    if (diff < 1e-11) break;
  }
  memcpy(pl->P, P, sizeof P);
  return 0;
}

static double As_[MAXN * NX * NX], Bs_[MAXN * NX], xs_[(MAXN + 1) * NX], xn_[(MAXN + 1) * NX], w_[MAXN],
    wn_[MAXN], kff_[MAXN], K_[MAXN * NX];

/* Backward pass with V_xx + mu I in Q_ux, Q_uu (Tassa 2012, eq. 10).
 * Returns 0, or 1 when Q_uu <= 0 somewhere (increase mu). *dV: expected
 * reduction terms (sum kff Q_u, sum kff^2 Q_uu / 2). */
static int backward(const planner *pl, double mu, double dV[2]) {
  const int n = pl->n;
  const double dt = pl->dt;
  double Vx[NX], Vxx[NX * NX];
  const double *xT = xs_ + n * NX;
  double e[NX] = {xT[0], wrap(xT[1]), xT[2], xT[3]};
  for (int i = 0; i < NX; ++i) {
    Vx[i] = 0.0;
    for (int j = 0; j < NX; ++j) {
      Vx[i] += pl->P[i * NX + j] * e[j];
      Vxx[i * NX + j] = pl->P[i * NX + j];
    }
  }
  dV[0] = dV[1] = 0.0;
  for (int k = n - 1; k >= 0; --k) {
    const double *x = xs_ + k * NX, *A = As_ + k * NX * NX, *Bf = Bs_ + k * NX;
    double th = tanh(w_[k]), dF = F_MAX * (1.0 - th * th), F = F_MAX * th;
    double fu[NX]; /* dx+/dw */
    for (int i = 0; i < NX; ++i) fu[i] = Bf[i] * dF;
    double lx[NX] = {dt * C_X * x[0], dt * C_TH * sin(x[1]), dt * C_V * x[2], dt * C_W * x[3]};
    /* Gauss-Newton: 1 - cos th = |r|^2 / 2 with r = (sin th, 1 - cos th), dr/dth = (cos th, sin th),
     * so the Hessian J^T J = 1 (the exact one, cos th, is negative below the horizontal) */
    double lxx[NX] = {dt * C_X, dt * C_TH, dt * C_V, dt * C_W};
    double lu = dt * (R_F * F * dF + R_W * w_[k]), luu = dt * (R_F * dF * dF + R_W); /* Gauss-Newton */
    double Qx[NX], Qu = lu, Quu = luu, Qux[NX], Qxx[NX * NX], VA[NX * NX], Vfu[NX], Vrfu[NX];
    for (int i = 0; i < NX; ++i) {
      Vfu[i] = 0.0;
      for (int j = 0; j < NX; ++j) Vfu[i] += Vxx[i * NX + j] * fu[j];
      Vrfu[i] = Vfu[i] + mu * fu[i];
      Qu += fu[i] * Vx[i];
      Quu += fu[i] * Vrfu[i];
    }
    for (int i = 0; i < NX; ++i)
      for (int j = 0; j < NX; ++j) {
        VA[i * NX + j] = 0.0;
        for (int l = 0; l < NX; ++l) VA[i * NX + j] += Vxx[i * NX + l] * A[l * NX + j];
      }
    for (int j = 0; j < NX; ++j) { /* Q_x = l_x + A' V_x; regularized Q_ux = fu' (V_xx + mu I) A */
      Qx[j] = lx[j];
      Qux[j] = 0.0;
      for (int i = 0; i < NX; ++i) {
        Qx[j] += A[i * NX + j] * Vx[i];
        Qux[j] += Vrfu[i] * A[i * NX + j];
      }
    }
    for (int i = 0; i < NX; ++i)
      for (int j = 0; j < NX; ++j) {
        double v = (i == j ? lxx[i] : 0.0);
        for (int l = 0; l < NX; ++l) v += A[l * NX + i] * VA[l * NX + j];
        Qxx[i * NX + j] = v;
      }
    if (!(Quu > 0.0)) return 1;
    double kk = -Qu / Quu, K[NX];
    for (int j = 0; j < NX; ++j) K[j] = -Qux[j] / Quu;
    kff_[k] = kk;
    memcpy(K_ + k * NX, K, sizeof K);
    dV[0] += kk * Qu;
    dV[1] += 0.5 * kk * kk * Quu;
    /* V = Q with u = kk + K dx (unregularized Q_ux for the value: Tassa eq. 11) */
    double Quxu[NX];
    for (int j = 0; j < NX; ++j) {
      double s = 0.0;
      for (int i = 0; i < NX; ++i) s += Vfu[i] * A[i * NX + j];
      Quxu[j] = s;
    }
    double Quu0 = luu;
    for (int i = 0; i < NX; ++i) Quu0 += fu[i] * Vfu[i];
    for (int i = 0; i < NX; ++i) {
      Vx[i] = Qx[i] + K[i] * Quu0 * kk + K[i] * Qu + Quxu[i] * kk;
      for (int j = 0; j < NX; ++j)
        Vxx[i * NX + j] = Qxx[i * NX + j] + K[i] * Quu0 * K[j] + K[i] * Quxu[j] + Quxu[i] * K[j];
    }
    for (int i = 0; i < NX; ++i) /* symmetrize */
      for (int j = 0; j < i; ++j) Vxx[i * NX + j] = Vxx[j * NX + i] = 0.5 * (Vxx[i * NX + j] + Vxx[j * NX + i]);
  }
  return 0;
}

/* iLQR iterations on pl (its snapshot is the start) from the trajectory in
 * xs_, w_ (cost *cost): linearize, backward pass (mu raised until Q_uu > 0),
 * line search; stops after max_iter, on a relative improvement below 1e-7,
 * or when mu passes 1e10. Returns the iterations done, or -1 on an error. */
static int optimize(planner *pl, int max_iter, double *cost, double *mu, int *nfallback, int *nlin, tl_error *err) {
  int iter;
  for (iter = 0; iter < max_iter; ++iter) {
    if (linearize(pl, w_, As_, Bs_, nfallback, err)) return -1;
    ++*nlin;
    double dV[2];
    while (backward(pl, *mu, dV)) {
      *mu = fmax(*mu * 10.0, 1e-6);
      if (*mu > 1e10) break;
    }
    if (*mu > 1e10) break;
    int accepted = 0;
    double alpha = 1.0, newcost = *cost;
    for (int ls = 0; ls < 10; ++ls, alpha *= 0.5) {
      newcost = rollout(pl, xs_, w_, kff_, K_, alpha, xn_, wn_, err);
      double expected = -(alpha * dV[0] + alpha * alpha * dV[1]);
      if (isfinite(newcost) && newcost < *cost && (expected <= 0.0 || (*cost - newcost) / expected > 1e-4)) {
        accepted = 1;
        break;
      }
    }
    if (accepted) {
      double improvement = (*cost - newcost) / *cost;
      memcpy(xs_, xn_, sizeof(double) * (pl->n + 1) * NX);
      memcpy(w_, wn_, sizeof(double) * pl->n);
      *cost = newcost;
      *mu = fmax(*mu * 0.5, 1e-9);
      if (getenv("ILQR_TRACE")) fprintf(stderr, "it %d cost %.5f alpha %g mu %.1e\n", iter, *cost, alpha, *mu);
      if (improvement < 1e-7) break;
    } else {
      *mu = fmax(*mu * 10.0, 1e-6);
      if (*mu > 1e10) break;
    }
  }
  return iter;
}

/* ---- MPC (--mpc): re-solve every MPC_EVERY steps from the measured state
 * over a horizon shrinking to T (the offline plan's end), then receding
 * MPC_H steps, MPC_ITER iLQR iterations warm-started from the previous
 * solution (the offline plan at first). (A 1 s receding horizon from the
 * start wandered: the upright LQR's terminal cost says nothing about a
 * swing-up, and the pole was up only at 3.5 s.) The global plan
 * (Wg_, Xg_, Kg_, indexed by the run's step) beyond the offline horizon is
 * the LQR in w (F ~ F_MAX w near 0): w = -K_lqr e / F_MAX about upright. */
#define MPC_EVERY 20 /* steps: 50 Hz at dt = 1 ms */
#define MPC_H 1000   /* steps: 1 s */
#define MPC_ITER 1
#define MAXG (2 * MAXN)
static double Wg_[MAXG + MPC_H], Xg_[(MAXG + MPC_H + 1) * NX], Kg_[(MAXG + MPC_H) * NX];

static void mpc_init(const planner *pl, int nrun) {
  int total = nrun + MPC_H;
  for (int k = 0; k < total && k < MAXG + MPC_H; ++k) {
    if (k < pl->n) {
      Wg_[k] = w_[k];
      memcpy(Xg_ + k * NX, xs_ + k * NX, sizeof(double) * NX);
      memcpy(Kg_ + k * NX, K_ + k * NX, sizeof(double) * NX);
    } else {
      Wg_[k] = 0.0;
      for (int i = 0; i < NX; ++i) {
        Xg_[k * NX + i] = 0.0;
        Kg_[k * NX + i] = -pl->Klqr[i] / F_MAX;
      }
    }
  }
}

static int mpc_resolve(planner *pl, int k0, const double x0[NX], double *mu, tl_error *err) {
  const int n_full = pl->n;
  const int H = k0 + MPC_H > n_full ? MPC_H : n_full - k0; /* shrinking to T, then receding */
  pl->n = H;
  double q[2] = {x0[0], x0[1]}, u[2] = {x0[2], x0[3]};
  if (tl_system_set_state(pl->sys, q, 2, u, 2, err) != TL_OK ||
      tl_world_snapshot_save(pl->world, pl->snap, sizeof pl->snap, &pl->snap_len, err) != TL_OK)
    return 1;
  /* warm start: the global plan with its gains from the measured state */
  double cost = 0.0;
  for (int j = 0; j < H; ++j) {
    double *x = xs_ + j * NX, d[NX];
    if (get_x(pl->sys, x, err) != TL_OK) return 1;
    double w = Wg_[k0 + j];
    for (int i = 0; i < NX; ++i) d[i] = x[i] - Xg_[(k0 + j) * NX + i];
    d[1] = wrap(d[1]);
    for (int i = 0; i < NX; ++i) w += Kg_[(k0 + j) * NX + i] * d[i];
    w_[j] = w;
    cost += running_cost(x, w, pl->dt);
    if (apply_force(pl->sys, F_MAX * tanh(w), err) != TL_OK || tl_world_step(pl->world, err) != TL_OK) return 1;
  }
  if (get_x(pl->sys, xs_ + H * NX, err) != TL_OK) return 1;
  cost += terminal_cost(pl, xs_ + H * NX);
  int nfb = 0, nlin = 0;
  if (optimize(pl, MPC_ITER, &cost, mu, &nfb, &nlin, err) < 0) return 1;
  if (nlin > 0 && *mu < 1e10) { /* the gains of the last backward pass belong to the trajectory it started from */
    for (int j = 0; j < H; ++j) {
      Wg_[k0 + j] = w_[j];
      memcpy(Xg_ + (k0 + j) * NX, xs_ + j * NX, sizeof(double) * NX);
      memcpy(Kg_ + (k0 + j) * NX, K_ + j * NX, sizeof(double) * NX);
    }
  }
  pl->n = n_full;
  return 0;
}

int main(int argc, char **argv) {
  const char *urdf = TALUS_SOURCE_DIR "/../shared/robots/cartpole/cartpole.urdf";
  int mpc = 0;
  double kick = 0.0;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--mpc")) {
      mpc = 1;
    } else if (!strcmp(argv[a], "--kick") && a + 1 < argc) {
      char *end;
      kick = strtod(argv[++a], &end);
      if (*end || !isfinite(kick)) {
        fprintf(stderr, "error: --kick wants a number (rad/s), got '%s'\n", argv[a]);
        return 2;
      }
    } else
      urdf = argv[a];
  }
  FILE *probe = fopen(urdf, "r");
  if (!probe) {
    printf("%s is absent (the shared robot corpus is not beside the repository): skipped\n", urdf);
    return 77;
  }
  fclose(probe);

  tl_error err;
  tl_load_options opt = tl_load_options_default();
  opt.base = TL_BASE_FIXED; /* the slide bar is welded to the world */
  tl_model *model = NULL;
  if (tl_model_load_urdf(urdf, &opt, &model, &err) != TL_OK) return fail(&err);
  planner pl = {0};
  if (tl_world_create(&pl.world, &err) != TL_OK || tl_world_add_system(pl.world, model, &pl.sys, &err) != TL_OK)
    return fail(&err);
  if (tl_system_nq(pl.sys) != 2 || tl_system_nv(pl.sys) != 2) {
    fprintf(stderr, "error: expected a cart and a pole (nq = nv = 2), %s has nq %d nv %d\n", urdf,
            tl_system_nq(pl.sys), tl_system_nv(pl.sys));
    return 1;
  }
  if (tl_step_derivatives_create(pl.world, &pl.ws, &err) != TL_OK) return fail(&err);
  pl.dt = tl_world_timestep(pl.world);
  pl.n = (int)lround(T_PLAN / pl.dt);
  if (pl.n > MAXN) {
    fprintf(stderr, "error: dt %g s gives more than %d steps\n", pl.dt, MAXN);
    return 1;
  }

  double t0 = now_cpu();
  if (lqr_upright(&pl, &err)) return fail(&err);
  /* The start: hanging down at rest. */
  const double q_start[2] = {0.0, PI}, u_start[2] = {0.0, 0.0};
  if (tl_system_set_state(pl.sys, q_start, 2, u_start, 2, &err) != TL_OK ||
      tl_world_snapshot_save(pl.world, pl.snap, sizeof pl.snap, &pl.snap_len, &err) != TL_OK)
    return fail(&err);

  /* Initial guess: a small push-pull at about the pendulum's period, which
   * breaks the symmetry of the hanging equilibrium (zero gradient there). */
  for (int k = 0; k < pl.n; ++k) w_[k] = W0 * sin(2.0 * PI * k * pl.dt / PERIOD0);
  double cost = rollout(&pl, NULL, w_, NULL, NULL, 0.0, xs_, w_, &err);
  if (!isfinite(cost)) return fail(&err);
  double mu = 1e-6;
  int nfallback = 0, nlin = 0;
  int iter = optimize(&pl, MAX_ITER, &cost, &mu, &nfallback, &nlin, &err);
  if (iter < 0) return fail(&err);
  double solve = now_cpu() - t0;
  const double *xT = xs_ + pl.n * NX;
  printf("iLQR: %d iterations (%d linearizations of %d steps, %d fell back to finite differences), cost %.4f,\n"
         "      planned end state x %.3f m, angle error %.2e rad; solve %.3f s CPU (%.1f ms per iteration)\n",
         iter, nlin, pl.n, nfallback, cost, xT[0], fabs(wrap(xT[1])), solve, 1e3 * solve / (nlin ? nlin : 1));

  /* Closed loop in a fresh world: the iLQR gains for t < T, then the LQR. */
  tl_world *world = NULL;
  tl_system *sys = NULL;
  if (tl_world_create(&world, &err) != TL_OK || tl_world_add_system(world, model, &sys, &err) != TL_OK ||
      tl_system_set_state(sys, q_start, 2, u_start, 2, &err) != TL_OK)
    return fail(&err);
  tl_model_free(model);
  int nrun = (int)lround(T_RUN / tl_world_timestep(world));
  double mpc_mu = 1e-6, mpc_sum = 0.0, mpc_max = 0.0;
  int mpc_count = 0;
  if (mpc) mpc_init(&pl, nrun);
  double t_settle = -1.0, maxF = 0.0, x[NX];
  for (int k = 0; k <= nrun; ++k) {
    if (kick != 0.0 && k == (int)lround(1.0 / tl_world_timestep(world))) { /* the disturbance at t = 1 s */
      double q[2], u[2];
      if (tl_system_get_state(sys, q, 2, u, 2, &err) != TL_OK) return fail(&err);
      u[1] += kick;
      if (tl_system_set_state(sys, q, 2, u, 2, &err) != TL_OK) return fail(&err);
    }
    if (get_x(sys, x, &err) != TL_OK) return fail(&err);
    double t = k * tl_world_timestep(world), err_th = fabs(wrap(x[1]));
    if (err_th < 0.1) {
      if (t_settle < 0.0) t_settle = t;
    } else {
      t_settle = -1.0;
    }
    if (k % 250 == 0)
      printf("  t %4.2f s  cart %6.3f m  angle from upright %6.3f rad\n", t, x[0], wrap(x[1]));
    if (k == nrun) break;
    double F;
    if (mpc) {
      if (k % MPC_EVERY == 0 && k > 0) { /* re-solve from the measured state */
        double c0 = now_cpu();
        if (mpc_resolve(&pl, k, x, &mpc_mu, &err)) return fail(&err);
        double c = now_cpu() - c0;
        mpc_sum += c;
        mpc_max = fmax(mpc_max, c);
        ++mpc_count;
      }
      double w = Wg_[k], d[NX];
      for (int i = 0; i < NX; ++i) d[i] = x[i] - Xg_[k * NX + i];
      d[1] = wrap(d[1]);
      for (int i = 0; i < NX; ++i) w += Kg_[k * NX + i] * d[i];
      F = F_MAX * tanh(w);
    } else if (k < pl.n) {
      double w = w_[k];
      for (int i = 0; i < NX; ++i) w += K_[k * NX + i] * (x[i] - xs_[k * NX + i]);
      F = F_MAX * tanh(w);
    } else {
      double e[NX] = {x[0], wrap(x[1]), x[2], x[3]};
      F = 0.0;
      for (int i = 0; i < NX; ++i) F -= pl.Klqr[i] * e[i];
      F = fmax(-F_MAX, fmin(F_MAX, F));
    }
    double tau[2];
    if (apply_force(sys, F, &err) != TL_OK || tl_world_step(world, &err) != TL_OK ||
        tl_system_applied_generalized_force(sys, tau, 2, &err) != TL_OK)
      return fail(&err);
    maxF = fmax(maxF, fabs(tau[0]));
  }
  double final_err = fabs(wrap(x[1]));
  printf("upright (within 0.1 rad, staying) from t = %.3f s; final angle error %.2e rad; max |F| %.2f N "
         "(bound %.0f N); iLQR solve %.3f s CPU\n",
         t_settle, final_err, maxF, F_MAX, solve);
  if (mpc)
    printf("MPC: %d re-solves at %.0f Hz (horizon to %.0f s, then %.1f s receding; %d iLQR iteration each, warm "
           "start): %.2f ms CPU per control step on average, %.2f ms at most\n",
           mpc_count, 1.0 / (MPC_EVERY * pl.dt), T_PLAN, MPC_H * pl.dt, MPC_ITER, 1e3 * mpc_sum / (mpc_count ? mpc_count : 1),
           1e3 * mpc_max);
  int ok = t_settle >= 0.0 && t_settle < T_PLAN && maxF <= F_MAX + 1e-9;
  printf("%s\n", ok ? "PASS" : "FAIL: not upright within 0.1 rad before 3 s and to the end, or |F| over the bound");

  tl_step_derivatives_free(pl.ws);
  tl_world_free(pl.world);
  tl_world_free(world);
  return ok ? 0 : 1;
}
