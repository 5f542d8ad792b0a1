/* Guards: controllers/controller_params.c, controllers/controller.c (tunable parameters),
 * src/record/record_control.c, src/record/record_live.c (tl_viewer_set_params, tl_viewer_poll). */
/* Issue 26: the controllers' tunable parameters (controllers/controller.h, tl_controller_params /
 * tl_controller_set_param) and the live view's C control surface (talus/record.h:
 * tl_viewer_set_params' checks, tl_viewer_poll without events). The protocol end to end:
 * tests/test_live_control.py. Usage: test_live_params ROBOTS_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "talus/talus.h"
#include "test_util.h"

static const char *robots;

static tl_model *load(const char *rel, tl_base_type base) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", robots, rel);
  tl_load_options o = tl_load_options_default();
  o.base = base;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_model_load_urdf(path, &o, &m, &err) != TL_OK) {
    printf("cannot load %s: %s\n", path, err.message);
    exit(1);
  }
  return m;
}

static tl_world *world_of(const tl_model *m, tl_system **sys) {
  tl_world *w = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  double q[64];
  int nq = tl_model_nq(m);
  if (tl_world_create(&w, &err) || tl_world_add_ground(w, 0.0, 0.8, &err) || tl_world_add_system(w, m, sys, &err) ||
      tl_model_default_q(m, q, nq, &err) || tl_system_set_state(*sys, q, nq, NULL, 0, &err)) {
    printf("world: %s\n", err.message);
    exit(1);
  }
  return w;
}

static const tl_controller_tunable *find(const tl_controller_tunable *t, int n, const char *name) {
  for (int i = 0; i < n; ++i)
    if (strcmp(t[i].name, name) == 0) return &t[i];
  return NULL;
}

/* A refused value leaves the listed value as it was, with TL_ERR_ARGUMENT on element "controller". */
static void check_refused(tl_controller *c, const char *name, double value) {
  tl_controller_tunable t[64];
  int n = tl_controller_params(c, t, 64);
  const tl_controller_tunable *p = find(t, n, name);
  double before = p ? p->value : NAN;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_controller_set_param(c, name, value, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strcmp(err.element, "controller") == 0, "%s = %g refused (%s: %s)", name, value,
           tl_status_name(st), err.message);
  n = tl_controller_params(c, t, 64);
  p = find(t, n, name);
  TL_CHECK(!p || p->value == before, "%s unchanged after a refused value", name);
}

static tl_controller make(tl_controller_kind kind, tl_system *sys) {
  tl_controller c;
  memset(&c, 0, sizeof c);
  tl_controller_spec spec = tl_controller_spec_default();
  spec.kind = kind;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_controller_init(&c, &spec, sys, NULL, 0, &err) != TL_OK) {
    printf("controller %s: %s\n", tl_controller_kind_name(kind), err.message);
    exit(1);
  }
  return c;
}

static void check_stand(void) {
  tl_model *m = load("talus_quadruped/talus_quadruped.urdf", TL_BASE_AUTO);
  tl_system *sys;
  tl_world *w = world_of(m, &sys);
  tl_controller c = make(TL_CONTROLLER_STAND, sys);
  tl_controller_tunable t[64];
  int n = tl_controller_params(&c, t, 64);
  TL_CHECK(n == 13 && strcmp(t[0].name, "gain_scale") == 0 && t[0].value == 1.0,
           "stand: gain_scale and 12 joint targets (%d)", n);
  TL_CHECK(tl_controller_params(&c, NULL, 0) == n && tl_controller_params(&c, t, 3) == n,
           "the count is returned whatever the room");
  double kp0 = c.stand.kp[6], kd0 = c.stand.kd[6];
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_controller_set_param(&c, "gain_scale", 2.5, &err) == TL_OK, "gain_scale 2.5: %s", err.message);
  TL_CHECK_NEAR(c.stand.kp[6], 2.5 * kp0, 1e-12 * kp0, "stand kp x 2.5");
  TL_CHECK_NEAR(c.stand.kd[6], 2.5 * kd0, 1e-12 * kd0, "stand kd x 2.5");
  TL_CHECK(c.stand.kp[0] == 0.0, "the base DOFs keep no gain");
  TL_CHECK(tl_controller_set_param(&c, "gain_scale", 1.0, &err) == TL_OK, "gain_scale back to 1");
  TL_CHECK_NEAR(c.stand.kp[6], kp0, 1e-12 * kp0, "stand kp back");
  const tl_controller_tunable *hfe = find(t, n, "target:LF_HFE");
  if (TL_CHECK(hfe != NULL, "target:LF_HFE listed")) {
    double v = hfe->min + 0.25 * (hfe->max - hfe->min);
    TL_CHECK(strcmp(hfe->unit, "rad") == 0, "a revolute target is in rad");
    TL_CHECK(tl_controller_set_param(&c, "target:LF_HFE", v, &err) == TL_OK, "target: %s", err.message);
    double qt[64];
    tl_system_get_pd_targets(sys, qt, tl_system_nq(sys), NULL, 0, NULL);
    int qi = tl_model_joint_q_index(m, tl_model_body_index(m, "LF_THIGH"));
    TL_CHECK(qt[qi] == v, "the system's PD target of LF_HFE is %g (%g)", v, qt[qi]);
    check_refused(&c, "target:LF_HFE", hfe->max + 0.1);
  }
  check_refused(&c, "gain_scale", 0.0);
  check_refused(&c, "gain_scale", 5.0);
  check_refused(&c, "gain_scale", NAN);
  check_refused(&c, "gain_scale", INFINITY);
  check_refused(&c, "no_such", 1.0);
  check_refused(&c, "target:", 0.0);
  check_refused(&c, "target:NOPE", 0.0);
  tl_controller_free(&c);
  tl_world_free(w);
  tl_model_free(m);
}

static void check_trot(void) {
  tl_model *m = load("talus_quadruped/talus_quadruped.urdf", TL_BASE_AUTO);
  tl_system *sys;
  tl_world *w = world_of(m, &sys);
  tl_controller c = make(TL_CONTROLLER_TROT, sys);
  tl_controller_tunable t[16];
  int n = tl_controller_params(&c, t, 16);
  TL_CHECK(n == 4 && find(t, n, "speed") && find(t, n, "lateral") && find(t, n, "yaw_rate") && find(t, n, "gain_scale"),
           "trot: speed, lateral, yaw_rate, gain_scale (%d)", n);
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_controller_set_param(&c, "speed", 0.8, &err) == TL_OK && c.trot.p.speed == 0.8, "speed 0.8");
  TL_CHECK(tl_controller_set_param(&c, "lateral", -0.2, &err) == TL_OK && c.trot.lateral_cmd == -0.2, "lateral");
  TL_CHECK(tl_controller_set_param(&c, "yaw_rate", 0.5, &err) == TL_OK && c.trot.yaw_rate_cmd == 0.5 &&
               c.trot.lateral_cmd == -0.2,
           "yaw_rate keeps lateral");
  double kp0 = c.trot.p.kp;
  TL_CHECK(tl_controller_set_param(&c, "gain_scale", 0.5, &err) == TL_OK && c.trot.p.kp == 0.5 * kp0 &&
               c.trot.kp[6] == 0.5 * kp0,
           "trot gain_scale 0.5: kp %g", c.trot.kp[6]);
  check_refused(&c, "speed", 2.0);
  check_refused(&c, "lateral", 0.6);
  check_refused(&c, "yaw_rate", -1.5);
  TL_CHECK(tl_trot_set_command(&c.trot, 1.5, 0, &err) == TL_ERR_ARGUMENT, "tl_trot_set_command: |lateral| > 1 refused");
  TL_CHECK(tl_trot_set_command(&c.trot, 0, NAN, &err) == TL_ERR_ARGUMENT, "tl_trot_set_command: NaN refused");
  tl_controller_free(&c);
  tl_world_free(w);
  tl_model_free(m);
}

static void check_arm(void) {
  tl_model *m = load("talus_base_arm/talus_base_arm.urdf", TL_BASE_FIXED);
  tl_system *sys;
  tl_world *w = world_of(m, &sys);
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_controller c = make(TL_CONTROLLER_IMPEDANCE, sys);
  tl_controller_tunable t[64];
  int n = tl_controller_params(&c, t, 64);
  int nb = c.imp.nbase;
  double K0 = c.imp.K[nb], D0 = c.imp.D[nb];
  TL_CHECK(n >= 2 && strcmp(t[0].name, "gain_scale") == 0 && strncmp(t[1].name, "target:", 7) == 0,
           "impedance: gain_scale and joint targets (%d)", n);
  TL_CHECK(tl_controller_set_param(&c, "gain_scale", 3.0, &err) == TL_OK, "impedance gain_scale: %s", err.message);
  TL_CHECK_NEAR(c.imp.K[nb], 3 * K0, 1e-12 * K0, "impedance K x 3");
  TL_CHECK_NEAR(c.imp.D[nb], 3 * D0, 1e-12 * (D0 + 1e-300), "impedance D x 3");
  if (n >= 2) {
    double v = 0.5 * (t[1].min + t[1].max);
    TL_CHECK(tl_controller_set_param(&c, t[1].name, v, &err) == TL_OK, "impedance target: %s", err.message);
    int found = 0;
    for (int i = 0; i < c.imp.nq; ++i) found |= c.imp.q_d[i] == v;
    TL_CHECK(found, "the impedance's desired configuration holds %g", v);
  }
  tl_controller_free(&c);

  c = make(TL_CONTROLLER_OSC, sys);
  n = tl_controller_params(&c, t, 64);
  TL_CHECK(n == 4 && find(t, n, "center_x") && find(t, n, "radius"), "osc: centre and radius (%d)", n);
  double cx = c.circle.center[0], cz = c.circle.center[2];
  TL_CHECK(tl_controller_set_param(&c, "center_x", cx + 0.2, &err) == TL_OK && c.circle.center[0] == cx + 0.2 &&
               c.circle.center[2] == cz,
           "osc center_x moved by 0.2 m");
  TL_CHECK(tl_controller_set_param(&c, "radius", 0.05, &err) == TL_OK && c.circle.radius == 0.05, "osc radius");
  check_refused(&c, "center_z", cz + 0.6);
  check_refused(&c, "radius", -0.01);
  check_refused(&c, "gain_scale", 1.0); /* osc has none */
  tl_controller_free(&c);
  tl_controller none;
  memset(&none, 0, sizeof none);
  TL_CHECK(tl_controller_params(&none, t, 64) == 0, "an inactive controller has no parameters");
  TL_CHECK(tl_controller_set_param(&none, "gain_scale", 1, &err) == TL_ERR_ARGUMENT, "nor sets one");
  tl_world_free(w);
  tl_model_free(m);
}

static void check_viewer(void) {
  tl_model *m = load("box/box.urdf", TL_BASE_AUTO);
  tl_system *sys;
  tl_world *w = world_of(m, &sys);
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_viewer_event ev;
  TL_CHECK(tl_viewer_poll(NULL, &ev) == 0, "poll(NULL): no event");
  tl_recorder_options o;
  o = tl_recorder_options_default();
  o.keep_frames = 0;
  tl_recorder *rec = NULL;
  tl_viewer *v = NULL;
  if (tl_recorder_create(w, &o, &rec, &err) != TL_OK) {
    printf("recorder: %s\n", err.message);
    exit(1);
  }
  if (tl_viewer_create(rec, NULL, 0, &v, &err) != TL_OK) {
    tl_test_skip("no live view in this build (%s): tl_viewer_set_params not checked", err.message);
  } else {
    TL_CHECK(tl_viewer_poll(v, &ev) == 0, "no event before any browser");
    tl_viewer_param p[2];
    memset(p, 0, sizeof p);
    snprintf(p[0].name, sizeof p[0].name, "kp");
    snprintf(p[0].unit, sizeof p[0].unit, "N m/rad");
    p[0].min = 0, p[0].max = 100, p[0].value = 50;
    p[1] = p[0];
    TL_CHECK(tl_viewer_set_params(v, p, 1, &err) == TL_OK, "one parameter: %s", err.message);
    TL_CHECK(tl_viewer_set_params(v, p, 2, &err) == TL_ERR_ARGUMENT && strstr(err.message, "twice"),
             "a name declared twice refused (%s)", err.message);
    p[1].name[0] = '\0';
    TL_CHECK(tl_viewer_set_params(v, p, 2, &err) == TL_ERR_ARGUMENT, "an empty name refused");
    snprintf(p[1].name, sizeof p[1].name, "kd");
    p[1].min = 1, p[1].max = 1, p[1].value = 1;
    TL_CHECK(tl_viewer_set_params(v, p, 2, &err) == TL_ERR_ARGUMENT, "an empty range refused");
    p[1].max = 2, p[1].value = 3;
    TL_CHECK(tl_viewer_set_params(v, p, 2, &err) == TL_ERR_ARGUMENT, "a value outside its range refused");
    p[1].value = 1.5, p[1].max = INFINITY;
    TL_CHECK(tl_viewer_set_params(v, p, 2, &err) == TL_ERR_ARGUMENT, "an infinite range refused");
    TL_CHECK(tl_viewer_set_params(v, p, 65, &err) == TL_ERR_ARGUMENT, "65 parameters refused");
    TL_CHECK(tl_viewer_set_params(v, NULL, 0, &err) == TL_OK, "no parameters");
    TL_CHECK(tl_viewer_ndropped(v) == 0, "nothing dropped");
    tl_viewer_status st;
    memset(&st, 0, sizeof st);
    st.time = 1.5, st.paused = 1;
    tl_viewer_set_status(v, &st);
    tl_viewer_free(v);
  }
  TL_CHECK(tl_viewer_set_params(NULL, NULL, 0, &err) == TL_ERR_ARGUMENT, "set_params(NULL viewer) refused");
  tl_recorder_free(rec);
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    printf("usage: test_live_params ROBOTS_DIR\n");
    return 2;
  }
  robots = argv[1];
  check_stand();
  check_trot();
  check_arm();
  check_viewer();
  return tl_test_finish();
}
