/* Public analytic derivatives of a system's dynamics (talus/system.h):
 * inverse and forward dynamics with respect to q (tangent space), u, tau,
 * and the frame placement with respect to q. The recursion is in
 * src/dynamics/derivatives.c (Carpentier & Mansard, RSS 2018). */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "world/world_internal.h"

static tl_status check_in(const tl_system *s, const double *x, int nv, const char *what, tl_error *err) {
  if (!x) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s must not be NULL", what);
  if (nv != s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s has length %d, expected nv = %d", what, nv,
                        s->m->nv);
  for (int i = 0; i < nv; i++)
    if (!isfinite(x[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s[%d] is %g: expected a finite number", what,
                          i, x[i]);
  return TL_OK;
}

static tl_status check_out(const double *x, const char *what, tl_error *err) {
  if (!x) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s (nv x nv) must not be NULL", what);
  return TL_OK;
}

tl_status tl_system_inverse_dynamics_derivatives(tl_system *s, const double *du, double *dtau_dq,
                                                 double *dtau_du, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_in(s, du, nv, "du", err)) || (st = check_out(dtau_dq, "dtau_dq", err)) ||
      (st = check_out(dtau_du, "dtau_du", err)))
    return st;
  tl_system_update_kinematics(s);
  tl_dyn_rnea_derivatives(&s->d, s->world->opt.gravity, du, dtau_dq, dtau_du);
  return TL_OK;
}

/* M (CRBA, unless the cache holds it), its L^T D L factor (unless LD already
 * factors exactly this M), h = RNEA(q, u, 0), Minv (nv x nv) = M^-1
 * (tl_dyn_inverse) and du = Minv (tau - h) into d->drv_tau + nv
 * (Featherstone 2008, Tables 6.2, 6.3, 5.1): Minv is an output anyway, so an
 * RNEA plus this dense product cost less than a second articulated-body
 * pass (or the factor's tree solve). du equals ABA's to rounding. h goes to
 * d->drv_tau. The cache (dyn_valid) is left as it was. *ran_h = 1 when this
 * call ran h's RNEA (then d->cacc, d->cfrc hold its du = 0 pass, which the
 * derivative pass extends: tl_dyn_rnea_derivatives_path). */
static tl_status accel_and_factor(tl_system *s, const double *tau, double *Minv, int *ran_h, tl_error *err) {
  tl_sysdata *d = &s->d;
  const int nv = s->m->nv;
  double *h = d->drv_tau, *du = d->drv_tau + nv;
  *ran_h = !s->dyn_valid;
  if (s->dyn_valid) {
    memcpy(h, d->h, (size_t)nv * sizeof(double));
  } else {
    tl_dyn_crba(d);
    tl_dyn_rnea(d, s->world->opt.gravity, NULL, 1, h);
  }
  if (!tl_dyn_factor_of_M(d) && tl_dyn_factor(d, NULL))
    return tl_error_set(err, TL_ERR_INVALID, s->m->source, 0, NULL,
                        "the mass matrix of '%s' is not positive definite", s->m->name);
  tl_dyn_inverse(d, Minv);
  if (nv <= TL_DRV_SMALL_NV) {
    double f[TL_DRV_SMALL_NV];
    for (int k = 0; k < nv; k++) f[k] = tau[k] - h[k];
    for (int i = 0; i < nv; i++) {
      double a = 0.0;
      for (int k = 0; k < nv; k++) a += Minv[i * nv + k] * f[k];
      du[i] = a;
    }
  } else { /* du = -Minv (h - tau): whole rows of Minv in registers, cheaper than the tree solve here */
    double *f = d->vtmp;
    for (int k = 0; k < nv; k++) f[k] = h[k] - tau[k];
    tl_dyn_neg_inverse_mul_vec(d, Minv, f, du);
  }
  return TL_OK;
}

tl_status tl_system_forward_dynamics_derivatives(tl_system *s, const double *tau, double *ddu_dq,
                                                 double *ddu_du, double *ddu_dtau, int nv,
                                                 tl_error *err) {
  tl_status st;
  if ((st = check_in(s, tau, nv, "tau", err)) || (st = check_out(ddu_dq, "ddu_dq", err)) ||
      (st = check_out(ddu_du, "ddu_du", err)) || (st = check_out(ddu_dtau, "ddu_dtau", err)))
    return st;
  tl_sysdata *d = &s->d;
  double *du = d->drv_tau + nv;
  tl_system_update_kinematics(s);
  int ran_h;
  if ((st = accel_and_factor(s, tau, ddu_dtau, &ran_h, err))) return st;
  tl_dyn_rnea_derivatives_path(d, s->world->opt.gravity, du, ddu_dq, ddu_du, ran_h);
  /* -M^-1 dtau/dq, -M^-1 dtau/du with the M^-1 just returned; a floating base's translations and its
   * linear velocity change no torque: columns 0..2 of dtau/dq and dtau/du are exactly 0
   * (tl_dyn_rnea_derivatives) */
  const int c0 = s->m->jnt_type[0] == TL_JOINT_FLOATING ? 3 : 0;
  tl_dyn_neg_inverse_mul(d, ddu_dtau, ddu_dq, c0, ddu_du, c0);
  return TL_OK;
}

tl_status tl_system_frame_placement_derivatives(tl_system *s, int frame, double *dp_dq, double *dR_dq, int nv,
                                                tl_error *err) {
  return tl_system_frame_jacobian(s, frame, dp_dq, dR_dq, nv, err);
}

/* ---------------- with the passive and external forces of the step ---------------- */

/* The record of the external forces' q dependence, if it still describes ext
 * (no step has cleared ext since the last add_external_*). */
static const double *ext_record(const tl_system *s) {
  size_t nv = (size_t)s->m->nv;
  return nv > 0 && memcmp(s->ext, s->ext_ref, nv * sizeof(double)) == 0 ? s->ext_w : NULL;
}

tl_status tl_system_passive_force(tl_system *s, double *tau_p, int nv, tl_error *err) {
  if (!tau_p) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "tau_p", "tau_p must not be NULL");
  if (nv != s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "tau_p", "tau_p has length %d, expected nv = %d", nv,
                        s->m->nv);
  tl_system_update_kinematics(s);
  tl_dyn_passive_force(&s->d, s->ext, tau_p);
  return TL_OK;
}

tl_status tl_system_passive_force_derivatives(tl_system *s, double *dtp_dq, double *dtp_du, int nv,
                                              tl_error *err) {
  tl_status st;
  if ((st = check_out(dtp_dq, "dtp_dq", err)) || (st = check_out(dtp_du, "dtp_du", err))) return st;
  if (nv != s->m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nv", "the matrices are nv x nv with nv = %d, not %d",
                        s->m->nv, nv);
  tl_system_update_kinematics(s);
  memset(dtp_dq, 0, (size_t)nv * nv * sizeof(double));
  memset(dtp_du, 0, (size_t)nv * nv * sizeof(double));
  tl_dyn_passive_derivatives(&s->d, ext_record(s), 1.0, dtp_dq, dtp_du);
  return TL_OK;
}

tl_status tl_system_inverse_dynamics_passive_derivatives(tl_system *s, const double *du, double *dtau_dq,
                                                         double *dtau_du, int nv, tl_error *err) {
  tl_status st = tl_system_inverse_dynamics_derivatives(s, du, dtau_dq, dtau_du, nv, err);
  if (st) return st;
  tl_dyn_passive_derivatives(&s->d, ext_record(s), -1.0, dtau_dq, dtau_du);
  return TL_OK;
}

tl_status tl_system_forward_dynamics_passive_derivatives(tl_system *s, const double *tau, double *ddu_dq,
                                                         double *ddu_du, double *ddu_dtau, int nv,
                                                         tl_error *err) {
  tl_status st;
  if ((st = check_in(s, tau, nv, "tau", err)) || (st = check_out(ddu_dq, "ddu_dq", err)) ||
      (st = check_out(ddu_du, "ddu_du", err)) || (st = check_out(ddu_dtau, "ddu_dtau", err)))
    return st;
  tl_sysdata *d = &s->d;
  double *du = d->drv_tau + nv, *tt = s->passive_tmp;
  tl_system_update_kinematics(s);
  tl_dyn_passive_force(d, s->ext, tt);
  for (int i = 0; i < nv; i++) tt[i] += tau[i];
  int ran_h;
  if ((st = accel_and_factor(s, tt, ddu_dtau, &ran_h, err))) return st;
  tl_dyn_rnea_derivatives_path(d, s->world->opt.gravity, du, ddu_dq, ddu_du, ran_h);
  const double *rec = ext_record(s);
  tl_dyn_passive_derivatives(d, rec, -1.0, ddu_dq, ddu_du);
  /* columns 0..2 of a floating base stay exactly 0 in dtau/dq (tl_dyn_passive_derivatives writes none) and
   * in dtau/du unless its linear DOFs are damped */
  const tl_model *m = s->m;
  const int c0 = m->jnt_type[0] == TL_JOINT_FLOATING ? 3 : 0;
  int cu = c0;
  for (int k = 0; k < c0; k++)
    if (m->dof_damping[k] != 0) cu = 0;
  tl_dyn_neg_inverse_mul(d, ddu_dtau, ddu_dq, c0, ddu_du, cu);
  return TL_OK;
}
