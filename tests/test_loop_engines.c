/* Loop constraints on the engine plugins (issue 23 §1: "the ODE plugin maps loops to ODE joints
 * between bodies; the MuJoCo plugin to connect / weld equalities; say which types each supports,
 * TL_ERR_UNSUPPORTED otherwise").
 *
 * Guards: include/talus/engine_plugin.h (ABI 3: tl_engine_constraint in the scene,
 * tl_engine_caps.constraints), src/engine/engine_scene.c (the scene's constraints),
 * src/engine/engine_link.c (types refused when added or when a world switches engine),
 * plugins/ode/ode_engine.c (build_constraints), plugins/mujoco/mj_build.c (connect / weld
 * equalities, eq_data).
 *
 *   - ODE: robots/four_bar/four_bar_loop.urdf (its hinge <loop_joint>) follows the native
 *     engine's crank within 0.01 rad over 0.3 s with the pin closed to 1e-3 m; the five-bar
 *     quadruped of robots/worlds/fivebar_stand.xml, switched to ODE, stands (base > 0.24 m
 *     after 1 s); a weld of a box to a pendulum's tip under dWorldStep follows the native
 *     engine within 2e-3; a distance range (rope) is refused at the step with
 *     TL_ERR_UNSUPPORTED naming it; `talus compare` runs the four-bar on talus and ode;
 *   - MuJoCo: the four-bar within 0.05 rad (soft equalities), the weld within 2e-3; a
 *     distance constraint is refused when added (TL_ERR_UNSUPPORTED, nothing added), and a
 *     world holding one cannot switch to MuJoCo (it stays on talus);
 *   - the test plugin "optcount", which maps no type: a URDF with a <loop_joint> is refused by
 *     tl_world_add_system naming the URDF line, and the world keeps no system and no constraint.
 * Exit 77 when the ODE plugin is not built; the MuJoCo part is skipped (counted) without it.
 *
 * Usage: test_loop_engines SOURCE_DIR TALUS_BINARY [OPTIONS_PLUGIN_DIR] */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/engine.h"
#include "talus/talus.h"
#include "test_util.h"

static tl_world *four_bar(const char *engine, tl_system **s) {
  tl_model *m = NULL;
  tl_error err;
  tl_world *w = NULL;
  if (!TL_CHECK(tl_model_load_urdf("robots/four_bar/four_bar_loop.urdf", NULL, &m, &err) == TL_OK, "%s",
                err.message))
    return NULL;
  tl_world_create_with_engine(&w, engine, &err);
  tl_status st = w ? tl_world_add_system(w, m, s, &err) : TL_ERR_ARGUMENT;
  tl_model_free(m);
  if (!TL_CHECK(st == TL_OK, "four-bar on %s: %s", engine, err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* Crank angle after n steps (q[0]) and the pin's error. */
static void run_four_bar(const char *engine, int n, double *crank, double *gap) {
  tl_system *s = NULL;
  tl_world *w = four_bar(engine, &s);
  *crank = NAN, *gap = NAN;
  if (!w) return;
  tl_error err;
  tl_status st = TL_OK;
  for (int k = 0; k < n && !st; k++) st = tl_world_step(w, &err);
  TL_CHECK(st == TL_OK, "%s steps: %s", engine, err.message);
  double q[3];
  tl_system_get_state(s, q, 3, NULL, 0, &err);
  tl_constraint_info ci;
  tl_world_constraint(w, 0, &ci, &err);
  *crank = q[0], *gap = ci.position_error;
  tl_world_free(w);
}

static const char *weld_world =
    "<talus_world>\n"
    "  <system name=\"arm\" urdf=\"%s/robots/double_pendulum/double_pendulum.urdf\" q=\"0.4 0.3\"/>\n"
    "  <object name=\"box\" type=\"box\" size=\"0.1 0.2 0.3\" mass=\"2\" pos=\"0.3 0 -0.6\"/>\n"
    "  <constraint type=\"weld\" system=\"arm\" body1=\"link2\" point1=\"0 0 -0.5\" rpy1=\"0.3 0.2 0.1\"\n"
    "              system2=\"box\" body2=\"box\" point2=\"0.05 -0.02 0.1\"/>\n"
    "</talus_world>\n";

/* The weld world projected onto its constraint on the native engine, then (engine != NULL)
 * switched to `engine` with solver `solver`, stepped 300 times: joint angles and box position. */
static int run_weld(const char *path, const char *engine, tl_solver solver, double out[5]) {
  tl_world *w = NULL;
  tl_error err;
  if (!TL_CHECK(tl_scene_load(path, &w, NULL, &err) == TL_OK, "weld world: %s", err.message)) return -1;
  tl_status st = tl_world_project_constraints(w, 1e-12, 50, &err);
  if (!st && engine) st = tl_world_set_engine(w, engine, &err);
  if (!st && engine) st = tl_world_set_solver(w, solver, &err);
  for (int k = 0; k < 300 && !st; k++) st = tl_world_step(w, &err);
  int ok = TL_CHECK(st == TL_OK, "weld world on %s: %s", engine ? engine : "talus", err.message);
  double qa[2], qb[7];
  tl_system_get_state(tl_world_system(w, 0), qa, 2, NULL, 0, &err);
  tl_system_get_state(tl_world_system(w, 1), qb, 7, NULL, 0, &err);
  out[0] = qa[0], out[1] = qa[1], out[2] = qb[0], out[3] = qb[1], out[4] = qb[2];
  tl_world_free(w);
  return ok ? 0 : -1;
}

static double max_diff(const double *a, const double *b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_loop_engines SOURCE_DIR TALUS_BINARY\n");
    return 2;
  }
  if (chdir(argv[1]) != 0) {
    perror(argv[1]);
    return 2;
  }
  if (argc > 3) setenv("TALUS_PLUGIN_PATH", argv[3], 1); /* the test plugin "optcount" (options_engine.c) */
  const tl_engine_api *ode = NULL, *mj = NULL;
  tl_error err;
  if (tl_engine_find("ode", &ode, &err) != TL_OK) {
    printf("SKIPPED: the ODE plugin is not built (%s)\n", err.message);
    return TL_TEST_SKIP_CODE;
  }
  tl_engine_caps caps;
  tl_engine_capabilities(ode, &caps);
  TL_CHECK((caps.features & TL_ENGINE_CONSTRAINTS) && caps.constraints == 0xfu, "ODE maps all four types (%#x)",
           caps.constraints);

  /* ---- ODE ---- */
  double c0, g0, c1, g1;
  run_four_bar("talus", 300, &c0, &g0);
  run_four_bar("ode", 300, &c1, &g1);
  printf("four-bar after 0.3 s: crank talus %.6f (gap %.1e m), ode %.6f (gap %.1e m)\n", c0, g0, c1, g1);
  TL_CHECK(fabs(c0 - c1) < 0.01 && fabs(c0) > 0.3, "ODE's crank follows the native one (%g vs %g rad)", c1, c0);
  TL_CHECK(g1 < 1e-3, "ODE keeps the pin closed to 1e-3 m (%g)", g1);

  tl_world *w = NULL;
  tl_scene_info info;
  if (TL_CHECK(tl_scene_load("robots/worlds/fivebar_stand.xml", &w, &info, &err) == TL_OK, "%s", err.message)) {
    tl_status st = tl_world_set_engine(w, "ode", &err);
    for (int k = 0; k < 1000 && !st; k++) st = tl_world_step(w, &err);
    double q[64];
    tl_system_get_state(tl_world_system(w, 0), q, tl_system_nq(tl_world_system(w, 0)), NULL, 0, &err);
    TL_CHECK(st == TL_OK && q[2] > 0.24, "the five-bar quadruped stands on ODE (base %g m): %s", q[2],
             st ? err.message : "ok");
    tl_scene_info_free(&info);
    tl_world_free(w);
  }

  char path[256], text[2048];
  snprintf(path, sizeof path, "/tmp/talus_loop_weld_%d.xml", (int)getpid());
  char cwd[1024];
  if (!getcwd(cwd, sizeof cwd)) return 2;
  snprintf(text, sizeof text, weld_world, cwd);
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f);
  double ref[5], got[5];
  if (run_weld(path, NULL, TL_SOLVER_PER_CONTACT, ref) == 0 && run_weld(path, "ode", TL_SOLVER_DANTZIG, got) == 0)
    TL_CHECK(max_diff(ref, got, 5) < 2e-3, "ODE's weld (dWorldStep) follows the native one (%g)", max_diff(ref, got, 5));

  tl_system *s = NULL;
  w = four_bar("ode", &s);
  if (w) {
    tl_constraint_def d = tl_constraint_def_default();
    d.type = TL_CONSTRAINT_DISTANCE;
    d.body1 = "crank_link";
    d.point2[2] = 1;
    d.min = 0.1, d.max = 2;
    TL_CHECK(tl_world_add_constraint(w, &d, NULL, &err) == TL_OK, "a rope is declared on ODE: %s", err.message);
    tl_status st = tl_world_step(w, &err);
    TL_CHECK(st == TL_ERR_UNSUPPORTED && strstr(err.message, "ODE has no distance range"),
             "ODE refuses the rope at the step: %s", err.message);
    tl_world_free(w);
  }

  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s compare robots/four_bar/four_bar_loop.urdf --engines talus,ode --duration 0.5 2>&1",
           argv[2]);
  FILE *p = popen(cmd, "r");
  char line[4096];
  int rows = 0, failed = 0;
  while (p && fgets(line, sizeof line, p)) {
    if (!strncmp(line, "talus ", 6) || !strncmp(line, "ode ", 4)) rows++;
    if (strstr(line, "error:")) failed = 1, fputs(line, stdout);
  }
  int rc = p ? pclose(p) : -1;
  TL_CHECK(rc == 0 && rows == 2 && !failed, "talus compare runs the closed four-bar on talus and ode (rc %d, %d rows)",
           rc, rows);

  /* ---- MuJoCo ---- */
  if (tl_engine_find("mujoco", &mj, &err) != TL_OK) {
    tl_test_skip("the MuJoCo plugin is not built: %s", err.message);
  } else {
    tl_engine_capabilities(mj, &caps);
    TL_CHECK(caps.constraints == 0x7u, "MuJoCo maps ball, hinge, weld (%#x)", caps.constraints);
    run_four_bar("mujoco", 300, &c1, &g1);
    printf("four-bar after 0.3 s on MuJoCo: crank %.6f (gap %.1e m)\n", c1, g1);
    TL_CHECK(fabs(c0 - c1) < 0.05 && g1 < 0.02, "MuJoCo's crank follows (%g vs %g rad, gap %g m)", c1, c0, g1);
    if (run_weld(path, "mujoco", TL_SOLVER_PER_CONTACT, got) == 0)
      TL_CHECK(max_diff(ref, got, 5) < 2e-3, "MuJoCo's weld follows the native one (%g)", max_diff(ref, got, 5));
    w = four_bar("mujoco", &s);
    if (w) {
      tl_constraint_def d = tl_constraint_def_default();
      d.type = TL_CONSTRAINT_DISTANCE;
      d.body1 = "crank_link";
      tl_status st = tl_world_add_constraint(w, &d, NULL, &err);
      TL_CHECK(st == TL_ERR_UNSUPPORTED && strstr(err.message, "does not map distance constraints") &&
                   tl_world_nconstraint(w) == 1,
               "MuJoCo refuses a distance constraint when it is added, nothing added: %s", err.message);
      tl_world_free(w);
    }
    w = four_bar("talus", &s);
    if (w) {
      tl_constraint_def d = tl_constraint_def_default();
      d.type = TL_CONSTRAINT_DISTANCE;
      d.body1 = "crank_link";
      TL_CHECK(tl_world_add_constraint(w, &d, NULL, &err) == TL_OK, "distance on talus: %s", err.message);
      tl_status st = tl_world_set_engine(w, "mujoco", &err);
      TL_CHECK(st == TL_ERR_UNSUPPORTED && !strcmp(tl_world_engine_name(w), "talus"),
               "a world with a distance constraint stays on talus: %s", err.message);
      TL_CHECK(tl_world_step(w, &err) == TL_OK, "and steps there: %s", err.message);
      tl_world_free(w);
    }
  }
  /* ---- an engine that maps no constraint type: a URDF with a <loop_joint> leaves nothing behind ---- */
  const tl_engine_api *opt = NULL;
  if (argc > 3 && tl_engine_find("optcount", &opt, &err) == TL_OK) {
    tl_model *m = NULL;
    w = NULL;
    tl_world_create_with_engine(&w, "optcount", &err);
    tl_model_load_urdf("robots/four_bar/four_bar_loop.urdf", NULL, &m, &err);
    tl_status st = w && m ? tl_world_add_system(w, m, NULL, &err) : TL_ERR_ARGUMENT;
    TL_CHECK(st == TL_ERR_UNSUPPORTED && strstr(err.message, "four_bar_loop.urdf:67: <loop_joint>: loop_joint 'pin_B'") &&
                 strstr(err.message, "does not map hinge constraints"),
             "the loop_joint is refused naming its line: %s", err.message);
    TL_CHECK(w && tl_world_nsystem(w) == 0 && tl_world_nconstraint(w) == 0, "its system is taken out again");
    tl_model_free(m);
    tl_world_free(w);
  } else {
    tl_test_skip("the test plugin optcount is not available");
  }
  remove(path);
  return tl_test_finish();
}
