/* talus_bench: one robot's query columns (bench_robot in bench.h). The robot
 * is loaded (its model's bytes counted), put in a world at the seeded random
 * state with the implicit PD, and each column's call is timed through
 * bench_timing.c; with the peer built in, the peer is built from the same
 * model, cross-checked at the same state, and timed beside Talus, the
 * batches of both interleaved. Then the world's and the model's bytes are
 * checked against what their free returns. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_mem.h"
#include "bench_timing.h"

typedef struct bench_ctx {
  tl_world *world;
  tl_system *sys;
  const tl_model *model;
  int nq, nv, last_body, last_frame; /* last_frame: the frame of the Jacobian column */
  double *q, *u, *du, *tau, *out, *M, *Jp, *Jr;
  double *D1, *D2, *D3;    /* nv x nv: the derivative columns' matrices */
  double *qp, *up, *vp, *o1, *o2; /* finite differences: q (nq), u, tangent, two outputs (nv) */
  tl_status st; /* first failure of a timed call */
  tl_error err;
} bench_ctx;

static void keep_status(bench_ctx *c, tl_status st) {
  if (st != TL_OK && c->st == TL_OK) c->st = st;
}

static void q_fk(void *ctx) {
  bench_ctx *c = ctx;
  double pos[3], R[9];
  keep_status(c, tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, &c->err));
  keep_status(c, tl_system_body_pose(c->sys, c->last_body, pos, R, &c->err));
}
static void q_fk_crba(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, &c->err));
  keep_status(c, tl_system_mass_matrix(c->sys, c->M, c->nv, &c->err));
}
static void q_rnea(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_inverse_dynamics(c->sys, c->du, c->out, c->nv, &c->err));
}
static void q_aba(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_forward_dynamics(c->sys, c->tau, c->out, c->nv, &c->err));
}
static void q_minv(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_inverse_mass_matrix(c->sys, c->M, c->nv, &c->err));
}
static void q_jac(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_frame_jacobian(c->sys, c->last_frame, c->Jp, c->Jr, c->nv, &c->err));
}
static void q_step(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_world_step(c->world, &c->err));
}

static void q_rnea_d(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_inverse_dynamics_derivatives(c->sys, c->du, c->D1, c->D2, c->nv, &c->err));
}
static void q_aba_d(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_forward_dynamics_derivatives(c->sys, c->tau, c->D1, c->D2, c->D3, c->nv,
                                                        &c->err));
}

/* Column j of D (nv x nv, row-major) = (o1 - o2) / (2 eps). */
static void fd_column(bench_ctx *c, double *D, int j) {
  for (int i = 0; i < c->nv; ++i) D[i * c->nv + j] = (c->o1[i] - c->o2[i]) / (2 * BENCH_DERIV_EPS);
}

/* One evaluation of RNEA (aba 0) or ABA (aba 1) at (q, u) into out. */
static void fd_eval(bench_ctx *c, int aba, const double *q, const double *u, const double *tau,
                    double *out) {
  keep_status(c, tl_system_set_state(c->sys, q, c->nq, u, c->nv, &c->err));
  if (aba)
    keep_status(c, tl_system_forward_dynamics(c->sys, tau, out, c->nv, &c->err));
  else
    keep_status(c, tl_system_inverse_dynamics(c->sys, c->du, out, c->nv, &c->err));
}

/* Centred finite differences of RNEA (aba 0: d tau/dq, d tau/du at du) or
 * ABA (aba 1: d du/dq, d du/du, d du/dtau at tau), the same matrices as the
 * analytic columns: q perturbed along each tangent direction by
 * tl_model_integrate, u and tau entry by entry; the state is set back at the
 * end. 4 nv evaluations (RNEA), 6 nv (ABA), each of the first 4 nv with its
 * tl_system_set_state (new kinematics). */
static void fd_derivs(bench_ctx *c, int aba) {
  int nv = c->nv;
  memset(c->vp, 0, (size_t)nv * sizeof(double));
  for (int j = 0; j < nv; ++j) {
    c->vp[j] = BENCH_DERIV_EPS;
    keep_status(c, tl_model_integrate(c->model, c->q, c->nq, c->vp, nv, c->qp, &c->err));
    fd_eval(c, aba, c->qp, c->u, c->tau, c->o1);
    c->vp[j] = -BENCH_DERIV_EPS;
    keep_status(c, tl_model_integrate(c->model, c->q, c->nq, c->vp, nv, c->qp, &c->err));
    fd_eval(c, aba, c->qp, c->u, c->tau, c->o2);
    c->vp[j] = 0;
    fd_column(c, c->D1, j);
  }
  memcpy(c->up, c->u, (size_t)nv * sizeof(double));
  for (int j = 0; j < nv; ++j) {
    c->up[j] = c->u[j] + BENCH_DERIV_EPS;
    fd_eval(c, aba, c->q, c->up, c->tau, c->o1);
    c->up[j] = c->u[j] - BENCH_DERIV_EPS;
    fd_eval(c, aba, c->q, c->up, c->tau, c->o2);
    c->up[j] = c->u[j];
    fd_column(c, c->D2, j);
  }
  keep_status(c, tl_system_set_state(c->sys, c->q, c->nq, c->u, nv, &c->err));
  if (!aba) return;
  memcpy(c->vp, c->tau, (size_t)nv * sizeof(double)); /* vp: the perturbed tau */
  for (int j = 0; j < nv; ++j) {
    c->vp[j] = c->tau[j] + BENCH_DERIV_EPS;
    keep_status(c, tl_system_forward_dynamics(c->sys, c->vp, c->o1, nv, &c->err));
    c->vp[j] = c->tau[j] - BENCH_DERIV_EPS;
    keep_status(c, tl_system_forward_dynamics(c->sys, c->vp, c->o2, nv, &c->err));
    c->vp[j] = c->tau[j];
    fd_column(c, c->D3, j);
  }
}
static void q_rnea_fd(void *ctx) { fd_derivs(ctx, 0); }

static void q_aba_fd(void *ctx) { fd_derivs(ctx, 1); }

/* Put the system back at the random state and warm the caches a query relies on. */
static void reset_state(void *ctx) {
  bench_ctx *c = ctx;
  double pos[3], R[9];
  tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, NULL);
  tl_system_body_pose(c->sys, 0, pos, R, NULL); /* kinematics */
  tl_system_mass_matrix(c->sys, c->M, c->nv, NULL); /* M and h */
}

static void talus_clear(void *ctx) {
  bench_ctx *c = ctx;
  c->st = TL_OK;
  memset(&c->err, 0, sizeof c->err);
}

/* max |fd - analytic| / max |analytic| over the matrices of RNEA (aba 0) or
 * ABA (aba 1) at the benchmark state: the two columns compute the same thing. */
static double fd_agreement(bench_ctx *c, int aba) {
  size_t n2 = (size_t)c->nv * (size_t)c->nv, nm = aba ? 3 : 2;
  double *an = malloc(3 * n2 * sizeof(double) + 1);
  if (!an) return NAN;
  reset_state(c);
  talus_clear(c);
  if (aba)
    q_aba_d(c);
  else
    q_rnea_d(c);
  memcpy(an, c->D1, 3 * n2 * sizeof(double)); /* D1, D2, D3 are contiguous */
  fd_derivs(c, aba);
  double num = 0, den = 0;
  for (size_t i = 0; i < nm * n2; ++i) {
    num = fmax(num, fabs(c->D1[i] - an[i]));
    den = fmax(den, fabs(an[i]));
  }
  free(an);
  reset_state(c);
  return c->st == TL_OK && den > 0 ? num / den : NAN;
}

static int talus_failed(void *ctx, char *why, size_t len) {
  bench_ctx *c = ctx;
  if (c->st == TL_OK) return 0;
  snprintf(why, len, "%.290s", c->err.message[0] ? c->err.message : tl_status_name(c->st));
  return 1;
}

static int setup(bench_ctx *c, const tl_model *model, size_t *world_bytes, char *why, size_t len) {
  memset(c, 0, sizeof(*c));
  tl_error err;
  memset(&err, 0, sizeof err);
  c->nq = tl_model_nq(model);
  c->nv = tl_model_nv(model);
  c->last_body = tl_model_nbody(model) - 1;
  c->last_frame = tl_model_nframe(model) - 1; /* replaced by deepest_frame() once built */
  size_t nv = (size_t)c->nv, nq = (size_t)c->nq;
  c->model = model;
  double *buf = calloc(nq + 4 * nv + nv * nv + 6 * nv + 3 * nv * nv + nq + 4 * nv + 1,
                       sizeof(double));
  if (!buf) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  c->q = buf;
  c->u = c->q + nq;
  c->du = c->u + nv;
  c->tau = c->du + nv;
  c->out = c->tau + nv;
  c->M = c->out + nv;
  c->Jp = c->M + nv * nv;
  c->Jr = c->Jp + 3 * nv;
  c->D1 = c->Jr + 3 * nv;
  c->D2 = c->D1 + nv * nv;
  c->D3 = c->D2 + nv * nv;
  c->qp = c->D3 + nv * nv;
  c->up = c->qp + nq;
  c->vp = c->up + nv;
  c->o1 = c->vp + nv;
  c->o2 = c->o1 + nv;
  bench_rng_seed(BENCH_SEED);
  bench_random_state(model, c->q, c->u);
  for (size_t k = 0; k < nv; ++k) {
    c->du[k] = bench_rng_normal();
    c->tau[k] = bench_rng_normal();
  }
  double *kp = calloc(2 * nv + 1, sizeof(double)), *kd = kp ? kp + nv : NULL;
  tl_status st = kp ? TL_OK : TL_ERR_MEMORY;
  size_t live0 = bench_mem_live();
  if (st == TL_OK) st = tl_world_create(&c->world, &err);
  if (st == TL_OK) st = tl_world_add_system(c->world, model, &c->sys, &err);
  *world_bytes = bench_mem_live() - live0;
  if (st == TL_OK) st = tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, &err);
  if (st == TL_OK) {
    for (int b = 0; b < tl_model_nbody(model); ++b) {
      if (tl_model_joint_type(model, b) == TL_JOINT_FLOATING) continue;
      int iu = tl_model_joint_u_index(model, b);
      for (int k = 0; k < tl_joint_nv(tl_model_joint_type(model, b)); ++k) {
        kp[iu + k] = BENCH_KP;
        kd[iu + k] = BENCH_KD;
      }
    }
    st = tl_system_set_pd_gains(c->sys, kp, kd, c->nv, &err);
  }
  /* hold the random configuration at rest: u_target = 0 (c->out is still zero) */
  if (st == TL_OK) st = tl_system_set_pd_targets(c->sys, c->q, c->nq, c->out, c->nv, &err);
  free(kp);
  if (st != TL_OK) {
    snprintf(why, len, "%s", err.message[0] ? err.message : tl_status_name(st));
    return -1;
  }
  return 0;
}

/* The last frame among those on a body with the most ancestor DOFs (the
 * frame Jacobian of a frame fixed to the base would be trivially cheap). */
static int deepest_frame(const tl_model *model, tl_system *sys, int *dofs) {
  int best = tl_model_nframe(model) - 1, most = -1;
  for (int f = 0; f < tl_model_nframe(model); ++f) {
    int n = tl_system_sparse_jacobian_size(sys, tl_model_frame_body(model, f));
    if (n >= most) {
      most = n;
      best = f;
    }
  }
  *dofs = most;
  return best;
}

/* Free the world; returns the bytes its free returned (what it held). */
static size_t teardown(bench_ctx *c) {
  size_t live0 = bench_mem_live();
  tl_world_free(c->world);
  size_t held = live0 - bench_mem_live();
  free(c->q);
  memset(c, 0, sizeof(*c));
  return held;
}

#if HAVE_PEER
/* Build the peer for this robot, cross-check it against Talus at the
 * benchmark state, and fill the peer's timing entries. 0 on success. */
static int peer_setup(const tl_model *model, bench_ctx *c, robot_result *r, bench_peer **peer,
                      timed *t) {
  bench_peer_state s = {c->q, c->u, c->du, c->tau, BENCH_KP, BENCH_KD, c->last_frame, 0, 0.0};
  if (bench_peer_create(model, &s, peer, r->peer_note, sizeof r->peer_note, r->peer_error,
                        sizeof r->peer_error) != 0)
    return -1;
  bench_peer_memory(*peer, &r->peer_model_bytes, &r->peer_data_bytes, r->peer_mem_detail,
                    sizeof r->peer_mem_detail);
  if (bench_peer_crosscheck(*peer, c->sys, r->xcheck, r->peer_error, sizeof r->peer_error) != 0)
    return -1;
  r->xcheck_max = 0;
  for (int k = 0; k < NCHECK; ++k)
    if (!isnan(r->xcheck[k])) r->xcheck_max = fmax(r->xcheck_max, r->xcheck[k]);
  for (int k = 0; k < NCOL; ++k)
    t[k] = (timed){*peer, bench_peer_query(k), bench_peer_reset, bench_peer_clear,
                   bench_peer_failed};
  return 0;
}
#endif

void bench_robot(const robot_entry *e, robot_result *r, int batches, double batch_s,
                 int use_peer) {
  memset(r, 0, sizeof(*r));
  r->e = e;
  for (int k = 0; k < NCOL; ++k) r->us[k] = r->peer_us[k] = NAN;
  for (int k = 0; k < ND; ++k) r->d_us[k] = NAN;
  r->d_check[0] = r->d_check[1] = NAN;
  for (int k = 0; k < NCHECK; ++k) r->xcheck[k] = NAN;
  r->xcheck_max = NAN;
  tl_load_options opt = tl_load_options_default();
  opt.base = e->base;
  tl_model *model = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  size_t live0 = bench_mem_live();
  if (tl_model_load_urdf(e->path, &opt, &model, &err) != TL_OK) {
    snprintf(r->error, sizeof r->error, "load failed: %s",
             err.message[0] ? err.message : tl_status_name(err.status));
    return;
  }
  r->model_bytes = bench_mem_live() - live0;
  r->nq = tl_model_nq(model);
  r->nv = tl_model_nv(model);
  r->nbody = tl_model_nbody(model);
  r->nframe = tl_model_nframe(model);
  bench_ctx c;
  if (setup(&c, model, &r->world_bytes, r->error, sizeof r->error) != 0) {
    teardown(&c);
    tl_model_free(model);
    return;
  }
  c.last_frame = deepest_frame(model, c.sys, &r->frame_dofs);
  snprintf(r->frame, sizeof r->frame, "%s", tl_model_frame_name(model, c.last_frame));
  static void (*const fns[NCOL])(void *) = {q_fk,  q_fk_crba, NULL,  q_rnea,
                                            q_aba, q_minv,    q_jac, q_step};
  timed t[MAX_TIMED];
  int nt = NCOL;
  for (int k = 0; k < NCOL; ++k) t[k] = (timed){&c, fns[k], reset_state, talus_clear, talus_failed};
  double us[MAX_TIMED];
  static char failed[MAX_TIMED][TIMED_WHY];
  memset(failed, 0, sizeof failed);
#if HAVE_PEER
  bench_peer *peer = NULL;
  if (use_peer) {
    if (peer_setup(model, &c, r, &peer, t + NCOL) == 0) {
      r->peer = 1;
      nt = 2 * NCOL;
    } else {
      r->xcheck_max = NAN;
    }
  }
#else
  (void)use_peer;
#endif
  /* the derivative columns (Talus only) after the others: t[nt .. nt + ND) */
  static void (*const dfns[ND])(void *) = {q_rnea_d, q_aba_d, q_rnea_fd, q_aba_fd};
  int d0 = nt;
  for (int k = 0; k < ND; ++k) t[nt++] = (timed){&c, dfns[k], reset_state, talus_clear, talus_failed};
  r->d_check[0] = fd_agreement(&c, 0);
  r->d_check[1] = fd_agreement(&c, 1);
  time_queries(t, nt, batches, batch_s, us, failed, NULL);
  for (int k = 0; k < ND; ++k) {
    r->d_us[k] = us[d0 + k];
    memcpy(r->d_failed[k], failed[d0 + k], sizeof r->d_failed[k]);
  }
  for (int k = 0; k < NCOL; ++k) {
    r->us[k] = us[k];
    memcpy(r->failed[k], failed[k], sizeof r->failed[k]);
    if (r->peer) {
      r->peer_us[k] = us[NCOL + k];
      memcpy(r->peer_failed[k], failed[NCOL + k], sizeof r->peer_failed[k]);
    }
  }
  r->us[C_CRBA] = r->us[C_FK_CRBA] - r->us[C_FK];
  if (r->peer) r->peer_us[C_CRBA] = r->peer_us[C_FK_CRBA] - r->peer_us[C_FK];
#if HAVE_PEER
  bench_peer_free(peer);
#endif
  r->world_bytes_end = teardown(&c);
  live0 = bench_mem_live();
  tl_model_free(model);
  r->model_bytes_end = live0 - bench_mem_live();
}
