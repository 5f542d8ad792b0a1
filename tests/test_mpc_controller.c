/* Guards: controllers/mpc.c (the MPC and its controller wrapper), controllers/controller.c ("mpc" by name). */
/* The MPC controller by name, as `talus simulate --controller mpc` builds it
 * (tl_controller_spec_parse + tl_controller_init + tl_controller_update every
 * step between integrate1 and integrate2), on the default quadruped started
 * in its default configuration (straight legs, feet on the ground, 1 ms
 * steps):
 *   - it settles at the requested base height (mpc:height=0.45) within 1 cm
 *     and level within 1 deg by t = 1.5 s, and holds it within 1 cm / 2 deg
 *     under a 50 N lateral push (1.5 to 2.5 s) at the base's COM;
 *   - it re-plans every 10 ms of simulated time (250 re-plans over 2.5 s);
 *   - its update allocates nothing (malloc wrapped);
 *   - bad parameters are refused naming them (horizon=1, an unknown key,
 *     dt=0, height=-1) with element "controller";
 *   - on a fixed-base robot it is refused (needs a floating base).
 * Usage: test_mpc_controller ROBOTS_DIR */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "controller.h"
#include "talus/talus.h"
#include "test_alloc.h"
#include "test_util.h"

static tl_status make(const char *urdf, tl_base_type base, tl_world **w, tl_system **s, tl_model **m) {
  tl_load_options lo = tl_load_options_default();
  lo.base = base;
  tl_status st;
  if ((st = tl_model_load_urdf(urdf, &lo, m, NULL)) || (st = tl_world_create(w, NULL)) ||
      (st = tl_world_add_ground(*w, 0.0, 0.8, NULL)) || (st = tl_world_add_system(*w, *m, s, NULL)))
    return st;
  return TL_OK;
}

static tl_status init_by_name(const char *text, tl_system *s, tl_controller *c, tl_error *err) {
  tl_controller_spec spec = tl_controller_spec_default();
  tl_status st = tl_controller_spec_parse(text, &spec, err);
  return st ? st : tl_controller_init(c, &spec, s, NULL, 0, err);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  char urdf[4096];
  snprintf(urdf, sizeof urdf, "%s/talus_quadruped/talus_quadruped.urdf", argv[1]);
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_model *m = NULL;
  if (!TL_CHECK(make(urdf, TL_BASE_FLOATING, &w, &s, &m) == TL_OK, "load %s", urdf)) return tl_test_finish();
  const int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double q[32], u[32];
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_controller c;
  if (!TL_CHECK(init_by_name("mpc:height=0.45", s, &c, &err) == TL_OK, "mpc init: %s", err.message))
    return tl_test_finish();
  double herr_settled = 0, ang_settled = 0, herr_push = 0, ang_push = 0;
  int allocs = 0;
  for (int i = 0; i < 2500; i++) {
    double t = tl_world_time(w);
    if (t >= 1.5 && t < 2.5) {
      double f[3] = {0, 50, 0};
      tl_system_add_external_force(s, 0, f, NULL, NULL);
    }
    tl_world_integrate1(w, NULL);
    nalloc = 0, counting = 1;
    tl_status st = tl_controller_update(&c, t, &err);
    counting = 0;
    allocs += nalloc;
    if (!TL_CHECK(st == TL_OK, "update at t = %g: %s", t, err.message)) break;
    tl_world_integrate2(w, NULL);
    tl_system_get_state(s, q, nq, u, nv, NULL);
    double he = fabs(q[2] - 0.45), ang = 2.0 * acos(fmin(1.0, fabs(q[3]))) * 57.29577951308232;
    t = tl_world_time(w);
    if (t >= 1.0 && t < 1.5) herr_settled = fmax(herr_settled, he), ang_settled = fmax(ang_settled, ang);
    if (t >= 1.5) herr_push = fmax(herr_push, he), ang_push = fmax(ang_push, ang);
  }
  printf("settled (1 to 1.5 s): height error %.4f m, orientation %.3f deg; push 50 N (1.5 to 2.5 s): %.4f m, %.3f deg; "
         "%d re-plans, mean %.3f ms thread CPU\n",
         herr_settled, ang_settled, herr_push, ang_push, c.mpc.nsolve, 1e3 * c.mpc.cpu_sum / c.mpc.nsolve);
  TL_CHECK(herr_settled < 0.01 && ang_settled < 1.0, "not settled at 0.45 m level: %.4f m, %.3f deg", herr_settled,
           ang_settled);
  TL_CHECK(herr_push < 0.01 && ang_push < 2.0, "push not held: %.4f m, %.3f deg", herr_push, ang_push);
  TL_CHECK(c.mpc.nsolve == 250, "%d re-plans over 2.5 s at 10 ms, expected 250", c.mpc.nsolve);
  TL_CHECK(allocs == 0, "%d allocations in tl_controller_update", allocs);
  tl_controller_free(&c);

  /* bad parameters, refused by name */
  const char *bad[][2] = {{"mpc:horizon=1", "horizon"}, {"mpc:foo=1", "foo"}, {"mpc:dt=0", "dt"},
                          {"mpc:height=-1", "height"}};
  for (int i = 0; i < 4; i++) {
    memset(&err, 0, sizeof err);
    tl_status st = init_by_name(bad[i][0], s, &c, &err);
    TL_CHECK(st == TL_ERR_ARGUMENT && strcmp(err.element, "controller") == 0 && strstr(err.message, bad[i][1]),
             "%s: expected a refusal naming %s, got %s: %s", bad[i][0], bad[i][1], tl_status_name(st), err.message);
  }
  tl_world_free(w);
  tl_model_free(m);

  /* a fixed base: refused */
  w = NULL, s = NULL, m = NULL;
  if (TL_CHECK(make(urdf, TL_BASE_FIXED, &w, &s, &m) == TL_OK, "load fixed")) {
    memset(&err, 0, sizeof err);
    TL_CHECK(init_by_name("mpc", s, &c, &err) != TL_OK && strstr(err.message, "floating"),
             "a fixed base was not refused: %s", err.message);
  }
  tl_world_free(w);
  tl_model_free(m);
  return tl_test_finish();
}
