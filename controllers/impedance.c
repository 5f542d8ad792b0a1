/* Talus `impedance` controller (see impedance.h): joint-space impedance
 * (Hogan 1985) with gravity compensation (Takegaki and Arimoto 1981).
 * Public API only; allocation in init only. */
#include "impedance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors in Talus' form, "<element>: text" (tl_error_set). */
#define imp_error(err, status, element, ...) tl_error_set(err, status, NULL, 0, element, __VA_ARGS__)

static int all_finite(const double *v, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static int is_flag(double v) { return v == 0.0 || v == 1.0; }

tl_impedance_params tl_impedance_default_params(void) {
  tl_impedance_params p;
  memset(&p, 0, sizeof(p));
  p.k = 100.0;
  p.d = 10.0;
  p.zeta = 0.7;
  p.gravity = 1;
  p.coriolis = 0;
  p.implicit = 0;
  return p;
}

tl_status tl_impedance_params_set(tl_impedance_params *p, const char *key, double value,
                                  tl_error *err) {
  if (!p || !key) return imp_error(err, TL_ERR_ARGUMENT, "params", "NULL argument");
  if (strcmp(key, "k") == 0 || strcmp(key, "d") == 0 || strcmp(key, "zeta") == 0) {
    if (!(isfinite(value) && value >= 0.0))
      return imp_error(err, TL_ERR_ARGUMENT, key, "must be finite and >= 0 (got %g)", value);
    if (key[0] == 'k') p->k = value;
    else if (key[0] == 'd') p->d = value;
    else p->zeta = value;
    return TL_OK;
  }
  int *flag = strcmp(key, "gravity") == 0    ? &p->gravity
              : strcmp(key, "coriolis") == 0 ? &p->coriolis
              : strcmp(key, "implicit") == 0 ? &p->implicit
                                             : NULL;
  if (!flag)
    return imp_error(err, TL_ERR_ARGUMENT, key,
                     "unknown parameter (k, d, zeta, gravity, coriolis, implicit)");
  if (!is_flag(value)) return imp_error(err, TL_ERR_ARGUMENT, key, "must be 0 or 1 (got %g)", value);
  *flag = (int)value;
  return TL_OK;
}

static tl_status apply_gains(tl_impedance_controller *c, tl_error *err) {
  if (c->p.implicit) return tl_system_set_pd_gains(c->sys, c->K, c->D, c->nv, err);
  return tl_system_set_pd_gains(c->sys, c->zero_gains, c->zero_gains, c->nv, err);
}

static tl_status impedance_setup(tl_impedance_controller *c, const double *q_d, tl_error *err) {
  size_t nq = (size_t)c->nq + 1, nv = (size_t)c->nv + 1;
  c->K = calloc(nv, sizeof(double));
  c->D = calloc(nv, sizeof(double));
  c->q_d = calloc(nq, sizeof(double));
  c->u_d = calloc(nv, sizeof(double));
  c->q = calloc(nq, sizeof(double));
  c->u = calloc(nv, sizeof(double));
  c->tau = calloc(nv, sizeof(double));
  c->h = calloc(nv, sizeof(double));
  c->hc = calloc(nv, sizeof(double));
  c->e = calloc(nv, sizeof(double));
  c->zero_gains = calloc(nv, sizeof(double));
  c->M = calloc((size_t)c->nv * (size_t)c->nv + 1, sizeof(double));
  if (!c->M || !c->K || !c->D || !c->q_d || !c->u_d || !c->q || !c->u || !c->tau || !c->h || !c->hc ||
      !c->e || !c->zero_gains)
    return imp_error(err, TL_ERR_MEMORY, "ctrl", "out of memory");
  for (int k = c->nbase; k < c->nv; ++k) {
    c->K[k] = c->p.k;
    c->D[k] = c->p.d;
  }
  tl_status st = tl_system_get_state(c->sys, c->q, c->nq, c->u, c->nv, err);
  if (st != TL_OK) return st;
  memcpy(c->q_d, q_d ? q_d : c->q, (size_t)c->nq * sizeof(double));
  if (c->p.zeta > 0.0) return tl_impedance_damping_for(c, c->p.zeta, err); /* applies the gains */
  if ((st = apply_gains(c, err)) != TL_OK) return st;
  if (c->p.implicit &&
      (st = tl_system_set_pd_targets(c->sys, c->q_d, c->nq, c->u_d, c->nv, err)) != TL_OK)
    return st;
  return TL_OK;
}

tl_status tl_impedance_init(tl_impedance_controller *ctrl, tl_system *sys,
                            const tl_impedance_params *params, const double *q_d, int nq,
                            tl_error *err) {
  if (!ctrl) return imp_error(err, TL_ERR_ARGUMENT, "ctrl", "NULL controller");
  memset(ctrl, 0, sizeof(*ctrl));
  if (!sys) return imp_error(err, TL_ERR_ARGUMENT, "sys", "NULL system");
  tl_impedance_params p = params ? *params : tl_impedance_default_params();
  if (!(isfinite(p.k) && p.k >= 0.0)) return imp_error(err, TL_ERR_ARGUMENT, "k", "must be finite and >= 0");
  if (!(isfinite(p.d) && p.d >= 0.0)) return imp_error(err, TL_ERR_ARGUMENT, "d", "must be finite and >= 0");
  p.gravity = p.gravity != 0;
  p.coriolis = p.coriolis != 0;
  p.implicit = p.implicit != 0;
  if (q_d && nq != tl_system_nq(sys))
    return imp_error(err, TL_ERR_ARGUMENT, "q_d", "has length %d, the system's nq is %d", nq,
                     tl_system_nq(sys));
  if (q_d && !all_finite(q_d, nq))
    return imp_error(err, TL_ERR_ARGUMENT, "q_d", "contains NaN or Inf");
  const tl_model *m = tl_system_model(sys);
  ctrl->sys = sys;
  ctrl->p = p;
  ctrl->nq = tl_system_nq(sys);
  ctrl->nv = tl_system_nv(sys);
  ctrl->nbase = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING ? 6 : 0;
  tl_status st = impedance_setup(ctrl, q_d, err);
  if (st != TL_OK) tl_impedance_free(ctrl);
  return st;
}

tl_status tl_impedance_set_gains(tl_impedance_controller *ctrl, const double *K, const double *D,
                                 int nv, tl_error *err) {
  if (!ctrl || !ctrl->sys) return imp_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!K || !D || nv != ctrl->nv)
    return imp_error(err, TL_ERR_ARGUMENT, "K", "NULL or length %d differs from nv %d", nv,
                     ctrl->nv);
  for (int k = 0; k < nv; ++k)
    if (!(isfinite(K[k]) && K[k] >= 0.0 && isfinite(D[k]) && D[k] >= 0.0))
      return imp_error(err, TL_ERR_ARGUMENT, "K", "gains of DOF %d must be finite and >= 0", k);
  for (int k = ctrl->nbase; k < nv; ++k) {
    ctrl->K[k] = K[k];
    ctrl->D[k] = D[k];
  }
  return apply_gains(ctrl, err);
}

tl_status tl_impedance_set_target(tl_impedance_controller *ctrl, const double *q_d, int nq,
                                  const double *u_d, int nv, tl_error *err) {
  if (!ctrl || !ctrl->sys) return imp_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!q_d || nq != ctrl->nq)
    return imp_error(err, TL_ERR_ARGUMENT, "q_d", "NULL or length %d differs from nq %d", nq,
                     ctrl->nq);
  if (u_d && nv != ctrl->nv)
    return imp_error(err, TL_ERR_ARGUMENT, "u_d", "length %d differs from nv %d", nv, ctrl->nv);
  if (!all_finite(q_d, nq) || (u_d && !all_finite(u_d, nv)))
    return imp_error(err, TL_ERR_ARGUMENT, "q_d", "contains NaN or Inf");
  memcpy(ctrl->q_d, q_d, (size_t)nq * sizeof(double));
  if (u_d) memcpy(ctrl->u_d, u_d, (size_t)nv * sizeof(double));
  else memset(ctrl->u_d, 0, (size_t)ctrl->nv * sizeof(double));
  return TL_OK;
}

/* K (q_d (-) q) + D (u_d - u) into tau (actuated DOFs). The position error
 * is the model's q difference (tl_model_difference): q_d - q for scalar
 * coordinates, log(q_d q^-1) for a ball joint. */
static tl_status pd_law(tl_impedance_controller *c, tl_error *err) {
  const tl_model *m = tl_system_model(c->sys);
  tl_status st = tl_model_difference(m, c->q, c->q_d, c->nq, c->e, c->nv, err);
  if (st != TL_OK) return st;
  for (int b = 0; b < tl_model_nbody(m); ++b) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t == TL_JOINT_FIXED || t == TL_JOINT_FLOATING) continue;
    int va = tl_model_joint_u_index(m, b), n = tl_joint_nv(t);
    for (int k = va; k < va + n; ++k) c->tau[k] += c->K[k] * c->e[k] + c->D[k] * (c->u_d[k] - c->u[k]);
  }
  return TL_OK;
}

tl_status tl_impedance_update(tl_impedance_controller *ctrl, tl_error *err) {
  if (!ctrl || !ctrl->sys) return imp_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  tl_impedance_controller *c = ctrl;
  tl_status st = tl_system_get_state(c->sys, c->q, c->nq, c->u, c->nv, err);
  if (st != TL_OK) return st;
  memset(c->tau, 0, (size_t)c->nv * sizeof(double));
  if (c->p.gravity || c->p.coriolis) {
    if ((st = tl_system_nonlinear_term(c->sys, c->h, c->nv, err)) != TL_OK) return st;
    if (c->p.coriolis) {
      memcpy(c->tau, c->h, (size_t)c->nv * sizeof(double));
      if (!c->p.gravity) { /* Coriolis only: h with gravity 0 */
        static const double zero_g[3] = {0.0, 0.0, 0.0};
        if ((st = tl_system_nonlinear_term_gravity(c->sys, zero_g, c->tau, c->nv, err)) != TL_OK)
          return st;
      }
    } else { /* gravity only: h - h(gravity 0) */
      static const double zero_g[3] = {0.0, 0.0, 0.0};
      if ((st = tl_system_nonlinear_term_gravity(c->sys, zero_g, c->hc, c->nv, err)) != TL_OK)
        return st;
      for (int k = 0; k < c->nv; ++k) c->tau[k] = c->h[k] - c->hc[k];
    }
  }
  if (c->p.implicit) {
    st = tl_system_set_pd_targets(c->sys, c->q_d, c->nq, c->u_d, c->nv, err);
    if (st != TL_OK) return st;
  } else if ((st = pd_law(c, err)) != TL_OK) {
    return st;
  }
  for (int k = 0; k < c->nbase; ++k) c->tau[k] = 0.0;
  return tl_system_set_generalized_force(c->sys, c->tau, c->nv, err);
}

tl_status tl_impedance_damping_for(tl_impedance_controller *ctrl, double zeta, tl_error *err) {
  if (!ctrl || !ctrl->sys) return imp_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!(isfinite(zeta) && zeta >= 0.0))
    return imp_error(err, TL_ERR_ARGUMENT, "zeta", "must be finite and >= 0");
  int nv = ctrl->nv;
  tl_status st = tl_system_mass_matrix(ctrl->sys, ctrl->M, nv, err);
  if (st != TL_OK) return st;
  for (int k = ctrl->nbase; k < nv; ++k)
    ctrl->D[k] = 2.0 * zeta * sqrt(ctrl->K[k] * ctrl->M[(size_t)k * nv + k]);
  if (ctrl->p.implicit &&
      (st = tl_system_set_pd_targets(ctrl->sys, ctrl->q_d, ctrl->nq, ctrl->u_d, nv, err)) != TL_OK)
    return st;
  return apply_gains(ctrl, err);
}

void tl_impedance_free(tl_impedance_controller *ctrl) {
  if (!ctrl) return;
  free(ctrl->K);
  free(ctrl->D);
  free(ctrl->q_d);
  free(ctrl->u_d);
  free(ctrl->q);
  free(ctrl->u);
  free(ctrl->tau);
  free(ctrl->h);
  free(ctrl->hc);
  free(ctrl->e);
  free(ctrl->zero_gains);
  free(ctrl->M);
  memset(ctrl, 0, sizeof(*ctrl));
}
