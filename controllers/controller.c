/* Controllers by name (controller.h): parsing "NAME[:KEY=VALUE,...]",
 * building the controller of controllers/ it names, its per-step update.
 * Only tl_controller_init allocates (through the controllers' init). */
#include "controller.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/limits.h"

/* osc circle defaults (m, s) */
#define CTRL_OSC_RADIUS 0.1
#define CTRL_OSC_PERIOD 4.0
#define CTRL_OSC_RAMP 0.5

static const char *const kind_names[] = {"stand", "none", "trot", "impedance", "osc", "mpc"};
#define NKIND ((int)(sizeof(kind_names) / sizeof(kind_names[0])))

/* Fill err (if any) and return status; element "controller" marks a bad parameter. */
static tl_status fail(tl_error *err, tl_status status, const char *element, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tl_status fail(tl_error *err, tl_status status, const char *element, const char *fmt, ...) {
  if (!err) return status;
  memset(err, 0, sizeof(*err));
  err->status = status;
  if (element) snprintf(err->element, sizeof err->element, "%s", element);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return status;
}

const char *tl_controller_kind_name(tl_controller_kind kind) {
  return ((int)kind >= 0 && (int)kind < NKIND) ? kind_names[kind] : "?";
}

tl_controller_spec tl_controller_spec_default(void) {
  tl_controller_spec s;
  memset(&s, 0, sizeof s);
  s.kind = TL_CONTROLLER_STAND;
  s.kp = TL_STAND_DEFAULT_KP;
  s.kd = TL_STAND_DEFAULT_KD;
  s.kp_scale = s.kd_scale = 1.0;
  return s;
}

/* ------------------------------------------------------------ parsing */

static int find_kind(const char *name, size_t len, tl_controller_kind *out) {
  for (int k = 0; k < NKIND; ++k)
    if (strlen(kind_names[k]) == len && strncmp(name, kind_names[k], len) == 0) {
      *out = (tl_controller_kind)k;
      return 0;
    }
  return -1;
}

/* One "key=value" item of length len. */
static tl_status parse_item(const char *item, size_t len, tl_controller_spec *s, tl_error *err) {
  const char *eq = memchr(item, '=', len);
  if (!eq || eq == item || eq == item + len - 1)
    return fail(err, TL_ERR_ARGUMENT, "controller", "'%.*s' is not key=value", (int)len, item);
  size_t klen = (size_t)(eq - item), vlen = len - klen - 1;
  if (s->nparam >= TL_CONTROLLER_MAX_PARAMS)
    return fail(err, TL_ERR_ARGUMENT, "controller", "more than %d parameters", TL_CONTROLLER_MAX_PARAMS);
  tl_controller_param *p = &s->param[s->nparam];
  if (klen >= sizeof(p->key) || vlen >= sizeof(p->value))
    return fail(err, TL_ERR_ARGUMENT, "controller", "parameter '%.*s' is too long", (int)len, item);
  memcpy(p->key, item, klen);
  p->key[klen] = '\0';
  memcpy(p->value, eq + 1, vlen);
  p->value[vlen] = '\0';
  s->nparam++;
  return TL_OK;
}

tl_status tl_controller_spec_parse(const char *text, tl_controller_spec *spec, tl_error *err) {
  if (!text || !spec) return fail(err, TL_ERR_ARGUMENT, "controller", "text and spec must not be NULL");
  tl_controller_spec s = *spec;
  const char *colon = strchr(text, ':');
  size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
  if (find_kind(text, nlen, &s.kind) != 0)
    return fail(err, TL_ERR_ARGUMENT, "controller",
                "unknown controller '%.*s' (stand, trot, impedance, osc, mpc or none)", (int)nlen, text);
  s.nparam = 0;
  if (colon) {
    const char *p = colon + 1;
    if (!*p) return fail(err, TL_ERR_ARGUMENT, "controller", "nothing after ':' in '%s'", text);
    while (*p) {
      const char *comma = strchr(p, ',');
      size_t len = comma ? (size_t)(comma - p) : strlen(p);
      tl_status st = parse_item(p, len, &s, err);
      if (st != TL_OK) return st;
      p += len + (comma ? 1 : 0);
      if (comma && !*p) return fail(err, TL_ERR_ARGUMENT, "controller", "trailing ',' in '%s'", text);
    }
  }
  if (s.kind == TL_CONTROLLER_NONE && s.nparam > 0)
    return fail(err, TL_ERR_ARGUMENT, "controller", "'none' takes no parameters");
  *spec = s;
  return TL_OK;
}

tl_base_type tl_controller_base(const tl_controller_spec *spec, tl_base_type requested) {
  if (requested == TL_BASE_AUTO && (spec->kind == TL_CONTROLLER_OSC || spec->kind == TL_CONTROLLER_IMPEDANCE))
    return TL_BASE_FIXED;
  return requested;
}

void tl_controller_spec_format(const tl_controller_spec *spec, char *buf, size_t cap) {
  if (!cap) return;
  int n = snprintf(buf, cap, "%s", tl_controller_kind_name(spec->kind));
  for (int i = 0; i < spec->nparam && n >= 0 && (size_t)n < cap; ++i)
    n += snprintf(buf + n, cap - (size_t)n, "%s%s=%s", i ? "," : ":", spec->param[i].key, spec->param[i].value);
}

/* ------------------------------------------------------------ setup */

static tl_status bad_value(tl_error *err, const char *ctrl, const tl_controller_param *p) {
  return fail(err, TL_ERR_ARGUMENT, "controller", "%s: parameter %s: '%s' is not a finite number", ctrl, p->key,
              p->value);
}

/* Decimal only: the command line's and the files' one number parser (talus/limits.h). */
static int number(const tl_controller_param *p, double *v) {
  return tl_limits_parse_number(p->value, v) == 0 && isfinite(*v) ? 0 : -1;
}

static tl_status init_error(tl_error *err, const char *ctrl, tl_status st) {
  if (!err) return st;
  char msg[sizeof err->message];
  snprintf(msg, sizeof msg, "%s", err->message[0] ? err->message : "failed");
  snprintf(err->message, sizeof err->message, "%s controller: %.1000s", ctrl, msg);
  err->status = st;
  return st;
}

typedef tl_status (*param_setter)(void *params, const char *key, double value, tl_error *err);

static tl_status set_trot(void *p, const char *k, double v, tl_error *e) { return tl_trot_params_set(p, k, v, e); }
static tl_status set_imp(void *p, const char *k, double v, tl_error *e) { return tl_impedance_params_set(p, k, v, e); }
static tl_status set_osc(void *p, const char *k, double v, tl_error *e) { return tl_osc_params_set(p, k, v, e); }

/* Apply every key=value except those in `skip` (NULL-terminated). */
static tl_status apply_params(const tl_controller_spec *s, const char *ctrl, param_setter set, void *params,
                              const char *const *skip, tl_error *err) {
  for (int i = 0; i < s->nparam; ++i) {
    const tl_controller_param *p = &s->param[i];
    int skipped = 0;
    for (int k = 0; skip && skip[k]; ++k) skipped |= strcmp(skip[k], p->key) == 0;
    if (skipped) continue;
    double v;
    if (number(p, &v) != 0) return bad_value(err, ctrl, p);
    tl_error e;
    memset(&e, 0, sizeof e);
    if (set(params, p->key, v, &e) != TL_OK)
      return fail(err, TL_ERR_ARGUMENT, "controller", "%s: %.900s", ctrl, e.message);
  }
  return TL_OK;
}

static tl_status init_stand(tl_controller *c, const tl_controller_spec *s, tl_system *sys, const double *q, int nq,
                            tl_error *err) {
  double kp = s->kp, kd = s->kd;
  for (int i = 0; i < s->nparam; ++i) {
    const tl_controller_param *p = &s->param[i];
    double v;
    if (number(p, &v) != 0) return bad_value(err, "stand", p);
    if (strcmp(p->key, "kp") == 0) kp = v;
    else if (strcmp(p->key, "kd") == 0) kd = v;
    else return fail(err, TL_ERR_ARGUMENT, "controller", "stand: unknown parameter '%s' (kp, kd)", p->key);
  }
  tl_status st = tl_stand_init(&c->stand, sys, q, nq, kp * s->kp_scale, kd * s->kd_scale, err);
  return st == TL_OK ? st : init_error(err, "stand", st);
}

/* trot's feet=LF/RF/LH/RH: the four foot frames (or link names), '/'-separated, into names
 * (4 strings of buf, a copy of the value); the first error is returned. */
static tl_status trot_feet(const tl_controller_param *p, char buf[sizeof p->value], const char *names[4],
                           tl_error *err) {
  snprintf(buf, sizeof p->value, "%s", p->value);
  char *at = buf;
  for (int i = 0; i < 4; ++i) {
    char *slash = strchr(at, '/');
    if ((i < 3) != (slash != NULL) || (slash && slash == at) || (!slash && !*at))
      return fail(err, TL_ERR_ARGUMENT, "controller", "trot: feet '%s': expected four frame or link names "
                  "LF/RF/LH/RH separated by '/'", p->value);
    if (slash) *slash = '\0';
    names[i] = at;
    at = slash ? slash + 1 : at + strlen(at);
  }
  return TL_OK;
}

static tl_status init_trot(tl_controller *c, const tl_controller_spec *s, tl_system *sys, tl_error *err) {
  tl_trot_params p = tl_trot_default_params();
  if (s->kp_given) p.kp = s->kp;
  if (s->kd_given) p.kd = s->kd;
  static const char *const trot_own_keys[] = {"feet", NULL};
  char feet[sizeof s->param[0].value];
  for (int i = 0; i < s->nparam; ++i)
    if (strcmp(s->param[i].key, "feet") == 0 && trot_feet(&s->param[i], feet, p.foot_frames, err) != TL_OK)
      return err ? err->status : TL_ERR_ARGUMENT;
  tl_status st = apply_params(s, "trot", set_trot, &p, trot_own_keys, err);
  if (st != TL_OK) return st;
  p.kp *= s->kp_scale;
  p.kd *= s->kd_scale;
  st = tl_trot_init(&c->trot, sys, &p, err);
  return st == TL_OK ? st : init_error(err, "trot", st);
}

static tl_status init_impedance(tl_controller *c, const tl_controller_spec *s, tl_system *sys, const double *q,
                                int nq, tl_error *err) {
  tl_impedance_params p = tl_impedance_default_params();
  if (s->kp_given) p.k = s->kp;
  if (s->kd_given) {
    p.d = s->kd;
    p.zeta = 0.0;
  }
  tl_status st = apply_params(s, "impedance", set_imp, &p, NULL, err);
  if (st != TL_OK) return st;
  p.k *= s->kp_scale;
  p.d *= s->kd_scale;
  p.zeta *= s->kd_scale;
  st = tl_impedance_init(&c->imp, sys, &p, q, nq, err);
  return st == TL_OK ? st : init_error(err, "impedance", st);
}

/* 1 if `text` contains `word`, ignoring case. */
static int has_word(const char *text, const char *word) {
  size_t n = strlen(word);
  for (; text && *text; ++text) {
    size_t k = 0;
    while (k < n && text[k] && tolower((unsigned char)text[k]) == word[k]) ++k;
    if (k == n) return 1;
  }
  return 0;
}

/* A gripper's finger: its link or joint is named finger, thumb, knuckle or gripper. */
static int is_finger(const tl_model *m, int body) {
  static const char *const words[] = {"finger", "thumb", "knuckle", "gripper", NULL};
  for (int k = 0; words[k]; ++k)
    if (has_word(tl_model_body_name(m, body), words[k]) || has_word(tl_model_joint_name(m, body), words[k]))
      return 1;
  return 0;
}

/* Default end effector: the last frame on the end of the longest chain that is not a finger:
 * among the bodies none of whose ancestors (nor itself) is a finger, the one with the most
 * movable joints above it (the later one, depth-first, on a tie); then the last frame on that
 * body (a tool or flange frame of a link merged into it comes last). A serial arm: its last link;
 * an arm with a gripper (panda): the hand, not a finger. */
int tl_controller_default_ee_frame(const tl_model *m) {
  int nb = tl_model_nbody(m), best = nb - 1, best_depth = -1;
  for (int b = 0; b < nb; ++b) {
    int depth = 0, finger = 0;
    for (int a = b; a >= 0; a = tl_model_body_parent(m, a)) {
      finger |= is_finger(m, a);
      depth++;
    }
    if (!finger && depth >= best_depth) best = b, best_depth = depth;
  }
  int f = -1;
  for (int k = 0; k < tl_model_nframe(m); ++k)
    if (tl_model_frame_body(m, k) == best) f = k;
  return f >= 0 ? f : tl_model_nframe(m) - 1;
}

/* osc-only keys: circle and frame. */
static const char *const osc_own_keys[] = {"radius", "period", "ramp", "frame", "normal_x", "normal_y", "normal_z",
                                           NULL};

typedef struct osc_circle_params {
  int frame;
  double radius, period, ramp, normal[3];
} osc_circle_params;

static tl_status osc_circle_params_read(const tl_controller_spec *s, const tl_model *m, osc_circle_params *o,
                                        tl_error *err) {
  for (int i = 0; i < s->nparam; ++i) {
    const tl_controller_param *p = &s->param[i];
    double v = 0;
    if (strcmp(p->key, "frame") == 0) {
      o->frame = tl_model_frame_index(m, p->value);
      if (o->frame < 0 && number(p, &v) == 0 && v == floor(v) && v >= 0 && v < tl_model_nframe(m)) o->frame = (int)v;
      if (o->frame < 0 || o->frame >= tl_model_nframe(m))
        return fail(err, TL_ERR_ARGUMENT, "controller", "osc: frame '%s' is neither a frame or link name nor an index in [0, %d)",
                    p->value, tl_model_nframe(m));
      continue;
    }
    int known = 0;
    for (int k = 0; osc_own_keys[k]; ++k) known |= strcmp(osc_own_keys[k], p->key) == 0;
    if (!known) continue;
    if (number(p, &v) != 0) return bad_value(err, "osc", p);
    if (strcmp(p->key, "radius") == 0) o->radius = v;
    else if (strcmp(p->key, "period") == 0) o->period = v;
    else if (strcmp(p->key, "ramp") == 0) o->ramp = v;
    else o->normal[p->key[7] - 'x'] = v;
  }
  return TL_OK;
}

static tl_status init_osc(tl_controller *c, const tl_controller_spec *s, tl_system *sys, tl_error *err) {
  tl_osc_params p = tl_osc_default_params();
  if (s->kp_given) p.kp = s->kp;
  if (s->kd_given) p.kd = s->kd;
  tl_status st = apply_params(s, "osc", set_osc, &p, osc_own_keys, err);
  if (st != TL_OK) return st;
  p.kp *= s->kp_scale, p.kp_ori *= s->kp_scale, p.kp_null *= s->kp_scale;
  p.kd *= s->kd_scale, p.kd_ori *= s->kd_scale, p.kd_null *= s->kd_scale;
  const tl_model *m = tl_system_model(sys);
  osc_circle_params o = {tl_controller_default_ee_frame(m), CTRL_OSC_RADIUS, CTRL_OSC_PERIOD, CTRL_OSC_RAMP, {1.0, 0.0, 0.0}};
  if ((st = osc_circle_params_read(s, m, &o, err)) != TL_OK) return st;
  if ((st = tl_osc_init(&c->osc, sys, o.frame, &p, err)) != TL_OK) return init_error(err, "osc", st);
  tl_error e;
  memset(&e, 0, sizeof e);
  if (tl_osc_circle_make(&c->circle, c->osc.x_d, o.normal, NULL, o.radius, o.period, o.ramp, &e) != TL_OK) {
    tl_osc_free(&c->osc);
    return fail(err, TL_ERR_ARGUMENT, "controller", "osc: %.1000s", e.message);
  }
  return TL_OK;
}

static tl_status set_mpc(void *p, const char *k, double v, tl_error *e) { return tl_mpc_params_set(p, k, v, e); }

/* mpc: height and the keys of tl_mpc_params_set; --kp / --kd and the gain scales act on the joint PD. */
static tl_status init_mpc(tl_controller *c, const tl_controller_spec *s, tl_system *sys, tl_error *err) {
  tl_mpc_params p;
  tl_mpc_params_default(&p);
  if (s->kp_given) p.kp = s->kp;
  if (s->kd_given) p.kd = s->kd;
  double height = 0;
  for (int i = 0; i < s->nparam; ++i)
    if (strcmp(s->param[i].key, "height") == 0 && (number(&s->param[i], &height) != 0 || !(height >= 0)))
      return fail(err, TL_ERR_ARGUMENT, "controller", "mpc: parameter height: '%s' is not a number >= 0",
                  s->param[i].value);
  static const char *const skip[] = {"height", NULL};
  tl_status st = apply_params(s, "mpc", set_mpc, &p, skip, err);
  if (st != TL_OK) return st;
  p.kp *= s->kp_scale, p.kd *= s->kd_scale;
  st = tl_mpc_controller_init(&c->mpc, sys, &p, height, err);
  return st == TL_OK ? st : init_error(err, "mpc", st);
}

tl_status tl_controller_init(tl_controller *c, const tl_controller_spec *spec, tl_system *sys, const double *q,
                             int nq, tl_error *err) {
  if (!c || !spec || !sys) return fail(err, TL_ERR_ARGUMENT, "controller", "c, spec and sys must not be NULL");
  memset(c, 0, sizeof(*c));
  c->kind = spec->kind;
  if (!(isfinite(spec->kp_scale) && spec->kp_scale >= 0 && isfinite(spec->kd_scale) && spec->kd_scale >= 0))
    return fail(err, TL_ERR_ARGUMENT, "controller", "gain scales must be finite and >= 0 (kp %g, kd %g)",
                spec->kp_scale, spec->kd_scale);
  tl_status st = TL_OK;
  switch (spec->kind) {
  case TL_CONTROLLER_NONE: return TL_OK;
  case TL_CONTROLLER_STAND: st = init_stand(c, spec, sys, q, q ? nq : 0, err); break;
  case TL_CONTROLLER_TROT: st = init_trot(c, spec, sys, err); break;
  case TL_CONTROLLER_IMPEDANCE: st = init_impedance(c, spec, sys, q, q ? nq : 0, err); break;
  case TL_CONTROLLER_OSC: st = init_osc(c, spec, sys, err); break;
  case TL_CONTROLLER_MPC: st = init_mpc(c, spec, sys, err); break;
  default: st = fail(err, TL_ERR_ARGUMENT, "controller", "unknown controller kind %d", (int)spec->kind);
  }
  if (st != TL_OK) {
    memset(c, 0, sizeof(*c));
    return st;
  }
  c->active = 1;
  c->gain_scale = 1.0;
  memcpy(c->center0, c->circle.center, sizeof c->center0);
  return TL_OK;
}

/* ------------------------------------------------------------ stepping */

static tl_status osc_step(tl_controller *c, double t, tl_error *err) {
  if (!c->started) {
    c->started = 1;
    c->t0 = t;
  }
  double x[3], v[3], a[3];
  tl_osc_circle_eval(&c->circle, t - c->t0, x, v, a);
  tl_status st = tl_osc_set_position_target(&c->osc, x, v, a, err);
  return st == TL_OK ? tl_osc_update(&c->osc, err) : st;
}

tl_status tl_controller_update(tl_controller *c, double time, tl_error *err) {
  if (!c->active) return TL_OK;
  switch (c->kind) {
  case TL_CONTROLLER_STAND: return tl_stand_update(&c->stand, err);
  case TL_CONTROLLER_TROT: return tl_trot_update(&c->trot, time, err);
  case TL_CONTROLLER_IMPEDANCE: return tl_impedance_update(&c->imp, err);
  case TL_CONTROLLER_OSC: return osc_step(c, time, err);
  case TL_CONTROLLER_MPC: return tl_mpc_controller_update(&c->mpc, time, err);
  case TL_CONTROLLER_NONE: break;
  }
  return TL_OK;
}

double tl_controller_tracking_error(const tl_controller *c) {
  if (!c->active) return NAN;
  if (c->kind == TL_CONTROLLER_OSC) return c->osc.pos_error;
  if (c->kind != TL_CONTROLLER_IMPEDANCE) return NAN;
  const tl_impedance_controller *m = &c->imp;
  double s = 0;
  for (int i = m->nbase ? 7 : 0; i < m->nq; ++i) s += (m->q[i] - m->q_d[i]) * (m->q[i] - m->q_d[i]);
  return sqrt(s);
}

void tl_controller_free(tl_controller *c) {
  if (!c) return;
  if (c->active) switch (c->kind) {
    case TL_CONTROLLER_STAND: tl_stand_free(&c->stand); break;
    case TL_CONTROLLER_TROT: tl_trot_free(&c->trot); break;
    case TL_CONTROLLER_IMPEDANCE: tl_impedance_free(&c->imp); break;
    case TL_CONTROLLER_OSC: tl_osc_free(&c->osc); break;
    case TL_CONTROLLER_MPC: tl_mpc_controller_free(&c->mpc); break;
    case TL_CONTROLLER_NONE: break;
    }
  memset(c, 0, sizeof(*c));
}
