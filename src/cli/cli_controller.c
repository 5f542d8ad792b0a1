/* `talus simulate --controller NAME[:key=value,...]`: the controllers of
 * controllers/ built by name (controllers/controller.h), their per-step
 * update and report line. Only setup allocates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sim.h"

const char *cli_ctrl_name(tl_controller_kind c) { return tl_controller_kind_name(c); }

int cli_ctrl_parse(const char *text, cli_sim_options *o) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_controller_spec_parse(text, &o->ctrl, &err) != TL_OK) {
    cli_errorf("option --controller: %s", err.message);
    return -1;
  }
  return 0;
}

tl_base_type cli_ctrl_base(const cli_sim_options *o) { return tl_controller_base(&o->ctrl, o->base); }

int cli_ctrl_setup(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  tl_controller_spec spec = o->ctrl;
  spec.kp_given = o->kp_given;
  spec.kd_given = o->kd_given;
  spec.kp = o->kp;
  spec.kd = o->kd;
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_controller_init(&s->ctrl, &spec, s->sys, s->q, s->nq, &err) == TL_OK) return CLI_EXIT_OK;
  if (strcmp(err.element, "controller") == 0) { /* a bad parameter */
    cli_errorf("option --controller %s", err.message);
    return CLI_EXIT_USAGE;
  }
  cli_errorf("%s", err.message[0] ? err.message : tl_status_name(err.status));
  return CLI_EXIT_FAIL;
}

tl_status cli_ctrl_update(cli_sim *s, int in_window, tl_error *err) {
  tl_status st = tl_controller_update(&s->ctrl, tl_world_time(s->world), err);
  if (st == TL_OK && in_window && s->ctrl.active && s->ctrl.kind == TL_CONTROLLER_OSC) {
    double e = tl_controller_tracking_error(&s->ctrl);
    s->stats.track_sum += e;
    if (e > s->stats.track_max) s->stats.track_max = e;
  }
  return st;
}

void cli_ctrl_free(cli_sim *s) { tl_controller_free(&s->ctrl); }

void cli_ctrl_print(const cli_sim *s) {
  const tl_controller *c = &s->ctrl;
  switch (s->opt->ctrl.kind) {
  case TL_CONTROLLER_NONE: printf("controller     none\n"); return;
  case TL_CONTROLLER_STAND:
    printf("controller     stand (kp %g N m/rad, kd %g N m s/rad)\n", c->stand.kp_value,
           c->stand.kd_value);
    return;
  case TL_CONTROLLER_TROT:
    printf("controller     trot (speed %g m/s, period %g s, step height %g m, kp %g, kd %g; "
           "foot depth %.4g m)\n",
           c->trot.p.speed, c->trot.p.period, c->trot.p.step_height, c->trot.p.kp, c->trot.p.kd,
           c->trot.depth);
    return;
  case TL_CONTROLLER_IMPEDANCE:
    if (c->imp.p.zeta > 0)
      printf("controller     impedance (k %g, damping ratio %g, gravity compensation %s, %s)\n",
             c->imp.p.k, c->imp.p.zeta, c->imp.p.gravity ? "on" : "off",
             c->imp.p.implicit ? "implicit" : "explicit");
    else
      printf("controller     impedance (k %g, d %g, gravity compensation %s, %s)\n", c->imp.p.k,
             c->imp.p.d, c->imp.p.gravity ? "on" : "off", c->imp.p.implicit ? "implicit" : "explicit");
    return;
  case TL_CONTROLLER_MPC:
    printf("controller     mpc (iLQR, horizon %d x %g s, base height %.4g m; joint PD kp %g, kd %g)\n",
           c->mpc.params.horizon, c->mpc.params.dt, c->mpc.height, c->mpc.params.kp, c->mpc.params.kd);
    return;
  case TL_CONTROLLER_OSC:
    printf("controller     osc (frame %s, circle radius %g m, period %g s; kp %g, kd %g)\n",
           tl_model_frame_name(s->model, c->osc.frame), c->circle.radius, c->circle.period,
           c->osc.p.kp, c->osc.p.kd);
    return;
  }
}
