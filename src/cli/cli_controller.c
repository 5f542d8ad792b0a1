/* `talus simulate --controller NAME[:key=value,...]`: parsing, setup and the
 * per-step update of the controllers in controllers/ (stand, trot,
 * impedance, osc; none). Only setup allocates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sim.h"

/* osc circle defaults (m, s) */
#define CLI_OSC_RADIUS 0.1
#define CLI_OSC_PERIOD 4.0
#define CLI_OSC_RAMP 0.5

static const char *const ctrl_names[] = {"stand", "none", "trot", "impedance", "osc"};

const char *cli_ctrl_name(cli_controller c) {
  return (c >= 0 && c < (int)(sizeof(ctrl_names) / sizeof(ctrl_names[0]))) ? ctrl_names[c] : "?";
}

/* ------------------------------------------------------------ parsing */

static int find_name(const char *name, size_t len, cli_controller *out) {
  for (size_t k = 0; k < sizeof(ctrl_names) / sizeof(ctrl_names[0]); ++k)
    if (strlen(ctrl_names[k]) == len && strncmp(name, ctrl_names[k], len) == 0) {
      *out = (cli_controller)k;
      return 0;
    }
  return -1;
}

/* One "key=value" item of length len. */
static int parse_item(const char *item, size_t len, cli_sim_options *o) {
  const char *eq = memchr(item, '=', len);
  if (!eq || eq == item || eq == item + len - 1) {
    cli_errorf("option --controller: '%.*s' is not key=value", (int)len, item);
    return -1;
  }
  size_t klen = (size_t)(eq - item), vlen = len - klen - 1;
  if (o->nctrl_param >= CLI_CTRL_MAX_PARAMS) {
    cli_errorf("option --controller: more than %d parameters", CLI_CTRL_MAX_PARAMS);
    return -1;
  }
  cli_ctrl_param *p = &o->ctrl_param[o->nctrl_param];
  if (klen >= sizeof(p->key) || vlen >= sizeof(p->value)) {
    cli_errorf("option --controller: parameter '%.*s' is too long", (int)len, item);
    return -1;
  }
  memcpy(p->key, item, klen);
  p->key[klen] = '\0';
  memcpy(p->value, eq + 1, vlen);
  p->value[vlen] = '\0';
  o->nctrl_param++;
  return 0;
}

int cli_ctrl_parse(const char *text, cli_sim_options *o) {
  const char *colon = strchr(text, ':');
  size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
  if (find_name(text, nlen, &o->controller) != 0) {
    cli_errorf("option --controller: unknown controller '%.*s' (stand, trot, impedance, osc or "
               "none)",
               (int)nlen, text);
    return -1;
  }
  o->nctrl_param = 0;
  if (!colon) return 0;
  const char *p = colon + 1;
  if (!*p) {
    cli_errorf("option --controller: nothing after ':' in '%s'", text);
    return -1;
  }
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (parse_item(p, len, o) != 0) return -1;
    p += len + (comma ? 1 : 0);
    if (comma && !*p) {
      cli_errorf("option --controller: trailing ',' in '%s'", text);
      return -1;
    }
  }
  if (o->controller == CLI_CTRL_NONE && o->nctrl_param > 0) {
    cli_errorf("option --controller: 'none' takes no parameters");
    return -1;
  }
  return 0;
}

tl_base_type cli_ctrl_base(const cli_sim_options *o) {
  if (o->base == TL_BASE_AUTO && (o->controller == CLI_CTRL_OSC || o->controller == CLI_CTRL_IMPEDANCE))
    return TL_BASE_FIXED;
  return o->base;
}

/* ------------------------------------------------------------ setup */

static int ctrl_error(const char *what, const tl_error *err) {
  cli_errorf("%s controller: %s", what, err->message[0] ? err->message : tl_status_name(err->status));
  return CLI_EXIT_FAIL;
}

static int bad_value(const char *ctrl, const cli_ctrl_param *p) {
  cli_errorf("option --controller %s: parameter %s: '%s' is not a finite number", ctrl, p->key,
             p->value);
  return CLI_EXIT_USAGE;
}

static int number(const cli_ctrl_param *p, double *v) {
  char *end = NULL;
  *v = strtod(p->value, &end);
  return (end && *end == '\0' && end != p->value && isfinite(*v)) ? 0 : -1;
}

typedef tl_status (*param_setter)(void *params, const char *key, double value, tl_error *err);

static tl_status set_trot(void *p, const char *k, double v, tl_error *e) {
  return tl_trot_params_set(p, k, v, e);
}
static tl_status set_imp(void *p, const char *k, double v, tl_error *e) {
  return tl_impedance_params_set(p, k, v, e);
}
static tl_status set_osc(void *p, const char *k, double v, tl_error *e) {
  return tl_osc_params_set(p, k, v, e);
}

/* Apply every key=value except those in `skip` (NULL-terminated). */
static int apply_params(const cli_sim_options *o, const char *ctrl, param_setter set, void *params,
                        const char *const *skip) {
  for (int i = 0; i < o->nctrl_param; ++i) {
    const cli_ctrl_param *p = &o->ctrl_param[i];
    int skipped = 0;
    for (int k = 0; skip && skip[k]; ++k)
      if (strcmp(skip[k], p->key) == 0) skipped = 1;
    if (skipped) continue;
    double v;
    if (number(p, &v) != 0) return bad_value(ctrl, p);
    tl_error err;
    memset(&err, 0, sizeof(err));
    if (set(params, p->key, v, &err) != TL_OK) {
      cli_errorf("option --controller %s: %s", ctrl, err.message);
      return CLI_EXIT_USAGE;
    }
  }
  return CLI_EXIT_OK;
}

static int setup_stand(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  double kp = o->kp, kd = o->kd;
  for (int i = 0; i < o->nctrl_param; ++i) {
    const cli_ctrl_param *p = &o->ctrl_param[i];
    double v;
    if (number(p, &v) != 0) return bad_value("stand", p);
    if (strcmp(p->key, "kp") == 0) kp = v;
    else if (strcmp(p->key, "kd") == 0) kd = v;
    else {
      cli_errorf("option --controller stand: unknown parameter '%s' (kp, kd)", p->key);
      return CLI_EXIT_USAGE;
    }
  }
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_stand_init(&s->ctrl.stand, s->sys, s->q, s->nq, kp, kd, &err) != TL_OK)
    return ctrl_error("stand", &err);
  return CLI_EXIT_OK;
}

static int setup_trot(cli_sim *s) {
  tl_trot_params p = tl_trot_default_params();
  if (s->opt->kp_given) p.kp = s->opt->kp;
  if (s->opt->kd_given) p.kd = s->opt->kd;
  int rc = apply_params(s->opt, "trot", set_trot, &p, NULL);
  if (rc != CLI_EXIT_OK) return rc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_trot_init(&s->ctrl.trot, s->sys, &p, &err) != TL_OK) return ctrl_error("trot", &err);
  return CLI_EXIT_OK;
}

static int setup_impedance(cli_sim *s) {
  tl_impedance_params p = tl_impedance_default_params();
  if (s->opt->kp_given) p.k = s->opt->kp;
  if (s->opt->kd_given) {
    p.d = s->opt->kd;
    p.zeta = 0.0;
  }
  int rc = apply_params(s->opt, "impedance", set_imp, &p, NULL);
  if (rc != CLI_EXIT_OK) return rc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_impedance_init(&s->ctrl.imp, s->sys, &p, s->q, s->nq, &err) != TL_OK)
    return ctrl_error("impedance", &err);
  return CLI_EXIT_OK;
}

/* Default end effector: the last frame on the last body (a leaf in the
 * depth-first order), i.e. the last link's frame of a serial arm. */
static int default_ee_frame(const tl_model *m) {
  int last_body = tl_model_nbody(m) - 1, f = -1;
  for (int k = 0; k < tl_model_nframe(m); ++k)
    if (tl_model_frame_body(m, k) == last_body) f = k;
  return f >= 0 ? f : tl_model_nframe(m) - 1;
}

/* osc-only keys: circle and frame. */
static const char *const osc_own_keys[] = {"radius", "period", "ramp", "frame", "normal_x",
                                           "normal_y", "normal_z", NULL};

static int osc_circle_params(cli_sim *s, int *frame, double *radius, double *period, double *ramp,
                             double normal[3]) {
  const cli_sim_options *o = s->opt;
  for (int i = 0; i < o->nctrl_param; ++i) {
    const cli_ctrl_param *p = &o->ctrl_param[i];
    double v = 0;
    if (strcmp(p->key, "frame") == 0) {
      *frame = tl_model_frame_index(s->model, p->value);
      if (*frame < 0 && number(p, &v) == 0 && v == floor(v)) *frame = (int)v;
      if (*frame < 0 || *frame >= tl_model_nframe(s->model)) {
        cli_errorf("option --controller osc: frame '%s' is neither a frame name nor an index in "
                   "[0, %d)",
                   p->value, tl_model_nframe(s->model));
        return CLI_EXIT_USAGE;
      }
      continue;
    }
    int known = 0;
    for (int k = 0; osc_own_keys[k]; ++k) known |= strcmp(osc_own_keys[k], p->key) == 0;
    if (!known) continue;
    if (number(p, &v) != 0) return bad_value("osc", p);
    if (strcmp(p->key, "radius") == 0) *radius = v;
    else if (strcmp(p->key, "period") == 0) *period = v;
    else if (strcmp(p->key, "ramp") == 0) *ramp = v;
    else normal[p->key[7] - 'x'] = v;
  }
  return CLI_EXIT_OK;
}

static int setup_osc(cli_sim *s) {
  tl_osc_params p = tl_osc_default_params();
  if (s->opt->kp_given) p.kp = s->opt->kp;
  if (s->opt->kd_given) p.kd = s->opt->kd;
  int rc = apply_params(s->opt, "osc", set_osc, &p, osc_own_keys);
  if (rc != CLI_EXIT_OK) return rc;
  int frame = default_ee_frame(s->model);
  double radius = CLI_OSC_RADIUS, period = CLI_OSC_PERIOD, ramp = CLI_OSC_RAMP;
  double normal[3] = {1.0, 0.0, 0.0};
  if ((rc = osc_circle_params(s, &frame, &radius, &period, &ramp, normal)) != CLI_EXIT_OK) return rc;
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_osc_init(&s->ctrl.osc, s->sys, frame, &p, &err) != TL_OK) return ctrl_error("osc", &err);
  if (tl_osc_circle_make(&s->ctrl.circle, s->ctrl.osc.x_d, normal, NULL, radius, period, ramp,
                         &err) != TL_OK) {
    cli_errorf("option --controller osc: %s", err.message);
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

int cli_ctrl_setup(cli_sim *s) {
  int rc = CLI_EXIT_OK;
  switch (s->opt->controller) {
  case CLI_CTRL_NONE: return CLI_EXIT_OK;
  case CLI_CTRL_STAND: rc = setup_stand(s); break;
  case CLI_CTRL_TROT: rc = setup_trot(s); break;
  case CLI_CTRL_IMPEDANCE: rc = setup_impedance(s); break;
  case CLI_CTRL_OSC: rc = setup_osc(s); break;
  }
  if (rc == CLI_EXIT_OK) s->has_ctrl = 1;
  return rc;
}

/* ------------------------------------------------------------ stepping */

static tl_status osc_step(cli_sim *s, int in_window, tl_error *err) {
  cli_ctrl_state *c = &s->ctrl;
  double t = tl_world_time(s->world);
  if (!c->started) {
    c->started = 1;
    c->t0 = t;
  }
  double x[3], v[3], a[3];
  tl_osc_circle_eval(&c->circle, t - c->t0, x, v, a);
  tl_status st = tl_osc_set_position_target(&c->osc, x, v, a, err);
  if (st == TL_OK) st = tl_osc_update(&c->osc, err);
  if (st == TL_OK && in_window) {
    s->stats.track_sum += c->osc.pos_error;
    if (c->osc.pos_error > s->stats.track_max) s->stats.track_max = c->osc.pos_error;
  }
  return st;
}

tl_status cli_ctrl_update(cli_sim *s, int in_window, tl_error *err) {
  if (!s->has_ctrl) return TL_OK;
  switch (s->opt->controller) {
  case CLI_CTRL_STAND: return tl_stand_update(&s->ctrl.stand, err);
  case CLI_CTRL_TROT: return tl_trot_update(&s->ctrl.trot, tl_world_time(s->world), err);
  case CLI_CTRL_IMPEDANCE: return tl_impedance_update(&s->ctrl.imp, err);
  case CLI_CTRL_OSC: return osc_step(s, in_window, err);
  case CLI_CTRL_NONE: break;
  }
  return TL_OK;
}

void cli_ctrl_free(cli_sim *s) {
  if (!s->has_ctrl) return;
  switch (s->opt->controller) {
  case CLI_CTRL_STAND: tl_stand_free(&s->ctrl.stand); break;
  case CLI_CTRL_TROT: tl_trot_free(&s->ctrl.trot); break;
  case CLI_CTRL_IMPEDANCE: tl_impedance_free(&s->ctrl.imp); break;
  case CLI_CTRL_OSC: tl_osc_free(&s->ctrl.osc); break;
  case CLI_CTRL_NONE: break;
  }
  s->has_ctrl = 0;
}

void cli_ctrl_print(const cli_sim *s) {
  const cli_ctrl_state *c = &s->ctrl;
  switch (s->opt->controller) {
  case CLI_CTRL_NONE: printf("controller     none\n"); return;
  case CLI_CTRL_STAND:
    printf("controller     stand (kp %g N m/rad, kd %g N m s/rad)\n", c->stand.kp_value,
           c->stand.kd_value);
    return;
  case CLI_CTRL_TROT:
    printf("controller     trot (speed %g m/s, period %g s, step height %g m, kp %g, kd %g; "
           "foot depth %.4g m)\n",
           c->trot.p.speed, c->trot.p.period, c->trot.p.step_height, c->trot.p.kp, c->trot.p.kd,
           c->trot.depth);
    return;
  case CLI_CTRL_IMPEDANCE:
    if (c->imp.p.zeta > 0)
      printf("controller     impedance (k %g, damping ratio %g, gravity compensation %s, %s)\n",
             c->imp.p.k, c->imp.p.zeta, c->imp.p.gravity ? "on" : "off",
             c->imp.p.implicit ? "implicit" : "explicit");
    else
      printf("controller     impedance (k %g, d %g, gravity compensation %s, %s)\n", c->imp.p.k,
             c->imp.p.d, c->imp.p.gravity ? "on" : "off", c->imp.p.implicit ? "implicit" : "explicit");
    return;
  case CLI_CTRL_OSC:
    printf("controller     osc (frame %s, circle radius %g m, period %g s; kp %g, kd %g)\n",
           tl_model_frame_name(s->model, c->osc.frame), c->circle.radius, c->circle.period,
           c->osc.p.kp, c->osc.p.kd);
    return;
  }
}
