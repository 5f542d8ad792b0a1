/* Talus `stand` controller (see stand.h): RaiSim-style PD targets on the
 * engine's stable PD (Tan, Liu, Turk 2011). Public API only. */
#include "stand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors in Talus' form, "<element>: text" (tl_error_set). */
#define stand_error(err, status, element, ...) tl_error_set(err, status, NULL, 0, element, __VA_ARGS__)

static int gain_ok(double g) { return isfinite(g) && g >= 0.0; }

static int all_finite(const double *v, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* Number of leading DOFs that belong to a floating base (6) or 0. */
static int base_dof_count(const tl_model *model) {
  if (tl_model_base(model) == TL_BASE_FLOATING &&
      tl_model_joint_type(model, 0) == TL_JOINT_FLOATING)
    return 6;
  return 0;
}

static tl_status stand_alloc(tl_stand_controller *c, tl_error *err) {
  size_t nq = (size_t)c->nq, nv = (size_t)c->nv;
  /* +1: a zero-DOF system still gets valid pointers */
  c->kp = calloc(nv + 1, sizeof(double));
  c->kd = calloc(nv + 1, sizeof(double));
  c->u_target = calloc(nv + 1, sizeof(double));
  c->q_target = calloc(nq + 1, sizeof(double));
  if (!c->kp || !c->kd || !c->u_target || !c->q_target)
    return stand_error(err, TL_ERR_MEMORY, "ctrl", "out of memory");
  return TL_OK;
}

static void fill_gains(tl_stand_controller *c) {
  for (int k = 0; k < c->nv; ++k) {
    int base = k < c->nbase_dof;
    c->kp[k] = base ? 0.0 : c->kp_value;
    c->kd[k] = base ? 0.0 : c->kd_value;
  }
}

static tl_status stand_setup(tl_stand_controller *c, const double *q_target, int nq,
                             tl_error *err) {
  tl_status st = stand_alloc(c, err);
  if (st != TL_OK) return st;
  if (q_target) {
    memcpy(c->q_target, q_target, (size_t)nq * sizeof(double));
  } else {
    st = tl_system_get_state(c->sys, c->q_target, c->nq, c->u_target, c->nv, err);
    if (st != TL_OK) return st;
    memset(c->u_target, 0, (size_t)c->nv * sizeof(double));
  }
  fill_gains(c);
  st = tl_system_set_pd_gains(c->sys, c->kp, c->kd, c->nv, err);
  if (st != TL_OK) return st;
  return tl_stand_update(c, err);
}

tl_status tl_stand_init(tl_stand_controller *ctrl, tl_system *sys, const double *q_target,
                        int nq, double kp, double kd, tl_error *err) {
  if (!ctrl) return stand_error(err, TL_ERR_ARGUMENT, "ctrl", "NULL controller");
  memset(ctrl, 0, sizeof(*ctrl));
  if (!sys) return stand_error(err, TL_ERR_ARGUMENT, "sys", "NULL system");
  if (!gain_ok(kp)) return stand_error(err, TL_ERR_ARGUMENT, "kp", "must be finite and >= 0");
  if (!gain_ok(kd)) return stand_error(err, TL_ERR_ARGUMENT, "kd", "must be finite and >= 0");
  int sys_nq = tl_system_nq(sys);
  if (q_target && nq != sys_nq)
    return stand_error(err, TL_ERR_ARGUMENT, "q_target", "length differs from the system's nq");
  if (q_target && !all_finite(q_target, nq))
    return stand_error(err, TL_ERR_ARGUMENT, "q_target", "contains NaN or Inf");
  ctrl->sys = sys;
  ctrl->nq = sys_nq;
  ctrl->nv = tl_system_nv(sys);
  ctrl->nbase_dof = base_dof_count(tl_system_model(sys));
  ctrl->kp_value = kp;
  ctrl->kd_value = kd;
  tl_status st = stand_setup(ctrl, q_target, nq, err);
  if (st != TL_OK) tl_stand_free(ctrl);
  return st;
}

tl_status tl_stand_set_target(tl_stand_controller *ctrl, const double *q_target, int nq,
                              tl_error *err) {
  if (!ctrl || !ctrl->sys) return stand_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  if (!q_target || nq != ctrl->nq)
    return stand_error(err, TL_ERR_ARGUMENT, "q_target", "NULL or length differs from nq");
  if (!all_finite(q_target, nq))
    return stand_error(err, TL_ERR_ARGUMENT, "q_target", "contains NaN or Inf");
  memcpy(ctrl->q_target, q_target, (size_t)nq * sizeof(double));
  return tl_stand_update(ctrl, err);
}

tl_status tl_stand_update(tl_stand_controller *ctrl, tl_error *err) {
  if (!ctrl || !ctrl->sys) return stand_error(err, TL_ERR_ARGUMENT, "ctrl", "not initialised");
  return tl_system_set_pd_targets(ctrl->sys, ctrl->q_target, ctrl->nq, ctrl->u_target, ctrl->nv,
                                  err);
}

void tl_stand_free(tl_stand_controller *ctrl) {
  if (!ctrl) return;
  free(ctrl->kp);
  free(ctrl->kd);
  free(ctrl->q_target);
  free(ctrl->u_target);
  memset(ctrl, 0, sizeof(*ctrl));
}
