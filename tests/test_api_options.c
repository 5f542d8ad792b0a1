/* One way to configure anything (issue 22, section 3): guards
 *   include/talus/world.h, src/world/snapshot.c   byte snapshots under their own names
 *       (tl_world_snapshot_size / _save / _restore); the names before issue 22
 *       (tl_world_state_size / get_state / set_state) are thin functions giving the
 *       same bytes and the same trajectory after a restore;
 *   include/talus/engine.h, src/engine/engine_options.c   tl_engine_options: the text
 *       "NAME:KEY=VALUE,..." parsed into the struct and written back unchanged, errors
 *       naming the setting, a world created from the struct on the engine it names;
 *   include/talus/task.h, src/tasks/vecenv.c   tl_vecenv_options: the defaults, errors
 *       naming the field;
 *   include/talus/record.h, include/talus/sweep.h   tl_recorder_options_default and
 *       tl_sweep_run_options_default by value (and the deprecated fill function equal);
 *   include/talus/sweep.h, src/sweep/spec.c   tl_sweep_options: a sweep made from the struct is
 *       the sweep made from the same settings as text (same hash, same sample values), a bad
 *       field refused naming its key;
 *   include/talus/limits.h, rng.h, system.h, record.h   the renamed functions reachable
 *       through their deprecated names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

static tl_error err;

/* A box dropped on the ground: contacts, so a snapshot holds warm-start impulses too. */
static tl_world *box_world(tl_system **sys) {
  tl_world *w = NULL;
  tl_model *m = NULL;
  const double size[3] = {0.2, 0.3, 0.1};
  if (tl_world_create(&w, &err) || tl_world_add_ground(w, 0.0, 0.8, &err) ||
      tl_model_create_primitive(TL_GEOM_BOX, size, 2.0, "box", &m, &err) || tl_world_add_system(w, m, sys, &err)) {
    printf("box world: %s\n", err.message);
    exit(1);
  }
  tl_model_free(m);
  double q[7] = {0, 0, 0.3, 0.96, 0.2, 0.1, 0.15}, u[6] = {0.5, 0, 0, 0, 1.0, 0};
  double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
  for (int i = 3; i < 7; i++) q[i] /= n;
  if (tl_system_set_state(*sys, q, 7, u, 6, &err)) printf("set_state: %s\n", err.message);
  return w;
}

static void steps(tl_world *w, int n) {
  for (int i = 0; i < n; i++)
    if (tl_world_step(w, &err)) printf("step: %s\n", err.message);
}

static void test_snapshot_names(void) {
  tl_system *s;
  tl_world *w = box_world(&s);
  steps(w, 200);
  size_t n = tl_world_snapshot_size(w);
  TL_CHECK(n > 0 && n == tl_world_state_size(w), "snapshot size %zu, old name %zu", n, tl_world_state_size(w));
  TL_CHECK(tl_world_ncontact(w) > 0, "the box rests on the ground: %d contacts", tl_world_ncontact(w));
  char *a = malloc(n), *b = malloc(n);
  size_t na = 0, nb = 0;
  TL_CHECK(tl_world_snapshot_save(w, a, n, &na, &err) == TL_OK && tl_world_get_state(w, b, n, &nb, &err) == TL_OK,
           "save: %s", err.message);
  TL_CHECK(na == n && nb == n && memcmp(a, b, n) == 0, "the old name writes the same %zu bytes", n);
  steps(w, 100);
  double q1[7], u1[6], q2[7], u2[6];
  tl_system_get_state(s, q1, 7, u1, 6, &err);
  TL_CHECK(tl_world_set_state(w, b, n, &err) == TL_OK, "restore (old name): %s", err.message);
  steps(w, 100);
  tl_system_get_state(s, q2, 7, u2, 6, &err);
  TL_CHECK(memcmp(q1, q2, sizeof q1) == 0 && memcmp(u1, u2, sizeof u1) == 0,
           "restored with the old name, 100 steps replay bit for bit (z %.17g vs %.17g)", q1[2], q2[2]);
  TL_CHECK(tl_world_snapshot_restore(w, a, n - 1, &err) == TL_ERR_INVALID, "a truncated snapshot is refused");
  free(a);
  free(b);
  tl_world_free(w);
}

static void test_engine_options(void) {
  tl_engine_options d = tl_engine_options_default();
  TL_CHECK(!strcmp(d.name, "talus") && d.nopt == 0 && d.opts == NULL, "engine defaults: the native engine");
  const char *text = "mujoco:cone=elliptic,impratio=100";
  tl_engine_option pairs[4];
  char buf[128], out[128];
  tl_engine_options o;
  TL_CHECK(tl_engine_options_parse(text, &o, pairs, 4, buf, sizeof buf, &err) == TL_OK, "parse: %s", err.message);
  TL_CHECK(!strcmp(o.name, "mujoco") && o.nopt == 2 && !strcmp(o.opts[0].key, "cone") &&
               !strcmp(o.opts[0].value, "elliptic") && !strcmp(o.opts[1].key, "impratio") &&
               !strcmp(o.opts[1].value, "100"),
           "parsed name %s, %d settings", o.name, o.nopt);
  TL_CHECK(tl_engine_options_format(&o, out, sizeof out, &err) == TL_OK && !strcmp(out, text),
           "written back: '%s'", out);
  TL_CHECK(tl_engine_options_format(NULL, out, sizeof out, &err) == TL_OK && !strcmp(out, "talus"), "NULL: '%s'", out);
  TL_CHECK(tl_engine_options_parse("ode:erp", &o, pairs, 4, buf, sizeof buf, &err) == TL_ERR_ARGUMENT &&
               strstr(err.message, "'erp'") && strstr(err.message, "KEY=VALUE"),
           "a setting without '=' is named: '%s'", err.message);
  TL_CHECK(tl_engine_options_parse("ode:a=1,b=2", &o, pairs, 1, buf, sizeof buf, &err) == TL_ERR_ARGUMENT &&
               strstr(err.message, "'b=2'"),
           "too many settings: '%s'", err.message);
  TL_CHECK(tl_engine_options_parse("Mu Joco", &o, pairs, 4, buf, sizeof buf, &err) == TL_ERR_ARGUMENT,
           "a malformed name is refused");
  tl_engine_option bad = {"co ne", "x"};
  tl_engine_options ob = {"mujoco", &bad, 1};
  TL_CHECK(tl_engine_options_format(&ob, out, sizeof out, &err) == TL_ERR_ARGUMENT && strstr(err.message, "'co ne'"),
           "a bad key is named: '%s'", err.message);
  tl_engine_option comma = {"cone", "a,b"};
  ob.opts = &comma;
  TL_CHECK(tl_engine_options_format(&ob, out, sizeof out, &err) == TL_ERR_ARGUMENT && !strcmp(err.element, "cone"),
           "a value with ',' names its key: '%s'", err.message);
  tl_engine_option ok = {"cone", "elliptic"};
  ob.opts = &ok;
  TL_CHECK(tl_engine_options_format(&ob, out, 10, &err) == TL_ERR_ARGUMENT && out[0] == '\0',
           "too long for the buffer: '%s'", err.message);
  /* a world from the struct: the native engine by default, an unknown plugin refused as by its text */
  tl_world *w = NULL;
  TL_CHECK(tl_engine_create_world(NULL, &w, &err) == TL_OK && w && !strcmp(tl_world_engine_name(w), "talus"),
           "default world on engine %s", w ? tl_world_engine_name(w) : "(none)");
  tl_engine_options none = {"nosuchengine", NULL, 0};
  TL_CHECK(tl_engine_attach_world(w, &none, &err) == TL_ERR_UNSUPPORTED && strstr(err.message, "nosuchengine") &&
               !strcmp(tl_world_engine_name(w), "talus"),
           "an unknown engine is refused and the world keeps its engine: '%s'", err.message);
  tl_world_free(w);
  tl_world *w2 = NULL;
  TL_CHECK(tl_engine_create_world(&none, &w2, &err) == TL_ERR_UNSUPPORTED && w2 == NULL, "no world on a missing engine");
}

static void test_vecenv_options(void) {
  tl_vecenv_options o = tl_vecenv_options_default();
  TL_CHECK(!strcmp(o.task, "cartpole") && o.nenv == 1 && o.nthread == 0 && o.seed == 0 && o.task_opts == NULL &&
               o.ntask_opt == 0,
           "vecenv defaults");
  tl_vecenv *v = (tl_vecenv *)&err;
  o.nenv = 0;
  TL_CHECK(tl_vecenv_create(&o, &v, &err) == TL_ERR_ARGUMENT && v == NULL && !strcmp(err.element, "num_envs"),
           "nenv 0 names num_envs: '%s'", err.message);
  o = tl_vecenv_options_default();
  o.nthread = -1;
  TL_CHECK(tl_vecenv_create(&o, &v, &err) == TL_ERR_ARGUMENT && !strcmp(err.element, "num_threads"),
           "nthread -1: '%s'", err.message);
  o = tl_vecenv_options_default();
  o.ntask_opt = 2;
  TL_CHECK(tl_vecenv_create(&o, &v, &err) == TL_ERR_ARGUMENT && !strcmp(err.element, "opts"),
           "options without an array: '%s'", err.message);
  o = tl_vecenv_options_default();
  o.task = "walker";
  TL_CHECK(tl_vecenv_create(&o, &v, &err) == TL_ERR_ARGUMENT && strstr(err.message, "walker"),
           "unknown task: '%s'", err.message);
}

static void test_other_defaults(void) {
  tl_recorder_options r = tl_recorder_options_default(), old;
  memset(&old, 0x5a, sizeof old);
  tl_record_options_default(&old);
  TL_CHECK(r.fps == 60 && r.every == 0 && r.main_system == -1 && r.max_mesh_triangles == 60000 &&
               r.reserve_frames == 0 && r.keep_frames == 1 && r.title == NULL,
           "recorder defaults");
  TL_CHECK(old.fps == r.fps && old.every == r.every && old.main_system == r.main_system &&
               old.max_mesh_triangles == r.max_mesh_triangles && old.reserve_frames == r.reserve_frames &&
               old.keep_frames == r.keep_frames && old.title == r.title,
           "the deprecated fill function gives the same defaults");
  tl_sweep_run_options s = tl_sweep_run_options_default();
  TL_CHECK(s.nthread == 0 && s.csv == NULL && s.resume == 0 && !s.progress && !s.interrupted && !s.ctx,
           "sweep run defaults");
  tl_batch_options b = tl_batch_options_default();
  TL_CHECK(b.nthread == 0 && b.seed == 0 && b.dt == 1e-3 && b.ground == 1 && b.ground_friction == 0.8 &&
               b.base == TL_BASE_AUTO,
           "batch defaults");
  /* renamed functions answer through their deprecated names */
  double x = 0;
  TL_CHECK(tl_parse_number("0.25", &x) == tl_limits_parse_number("0.25", &x) && x == 0.25, "parse_number alias");
  TL_CHECK(tl_record_have_viewer() == tl_recorder_have_viewer(), "have_viewer alias");
  uint64_t c[4] = {1, 2, 3, 4}, k[2] = {5, 6}, o1[4], o2[4];
  tl_philox4x64(c, k, o1);
  tl_rng_philox4x64(c, k, o2);
  TL_CHECK(memcmp(o1, o2, sizeof o1) == 0, "philox alias");
}

static void test_sweep_options(const char *robots) {
  char path[1024];
  snprintf(path, sizeof path, "%s/pendulum/pendulum.urdf", robots);
  static const char *const params[] = {"friction=uniform:0.2:1", "mass_scale=normal:1:0.05"};
  tl_sweep_options o = tl_sweep_options_default();
  o.robot = path;
  o.controller = "none";
  o.duration = 0.7;
  o.dt = 2e-3;
  o.samples = 5;
  o.seed = 11;
  o.params = params;
  o.nparam = 2;
  o.fall_tilt = 0.4;
  o.worst = 3;
  tl_sweep *a = NULL, *b = NULL;
  TL_CHECK(tl_sweep_create(&o, &a, &err) == TL_OK && tl_sweep_prepare(a, &err) == TL_OK, "struct: %s", err.message);
  const char *kv[] = {"robot", path, "controller", "none", "duration", "0.7", "dt", "0.002", "samples", "5",
                      "seed", "11", "param", params[0], "param", params[1], "fall_tilt", "0.4", "worst", "3", NULL};
  TL_CHECK(tl_sweep_create(NULL, &b, &err) == TL_OK, "create: %s", err.message);
  for (int i = 0; b && kv[i]; i += 2) TL_CHECK(tl_sweep_set(b, kv[i], kv[i + 1], &err) == TL_OK, "%s: %s", kv[i], err.message);
  TL_CHECK(b && tl_sweep_prepare(b, &err) == TL_OK, "text: %s", err.message);
  if (a && b) {
    TL_CHECK(tl_sweep_hash(a) == tl_sweep_hash(b) && tl_sweep_nsample(a) == 5 && tl_sweep_seed(a) == 11,
             "struct and text: the same sweep (hash %llx vs %llx)", (unsigned long long)tl_sweep_hash(a),
             (unsigned long long)tl_sweep_hash(b));
    double va[2], vb[2];
    TL_CHECK(tl_sweep_sample_values(a, 4, va, 2, &err) == TL_OK && tl_sweep_sample_values(b, 4, vb, 2, &err) == TL_OK &&
                 memcmp(va, vb, sizeof va) == 0,
             "sample 4's values agree");
  }
  tl_sweep_free(a);
  tl_sweep_free(b);
  tl_sweep *c = (tl_sweep *)&err;
  o = tl_sweep_options_default();
  o.duration = -1;
  TL_CHECK(tl_sweep_create(&o, &c, &err) == TL_ERR_ARGUMENT && c == NULL && strstr(err.message, "duration"),
           "a bad duration is named: '%s'", err.message);
  o = tl_sweep_options_default();
  const char *bad[] = {"friction=uniform:1:0"};
  o.params = bad;
  o.nparam = 1;
  TL_CHECK(tl_sweep_create(&o, &c, &err) == TL_ERR_ARGUMENT && c == NULL && strstr(err.message, "friction"),
           "a bad parameter is named: '%s'", err.message);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: test_api_options ROBOTS_DIR\n");
    return 2;
  }
  test_snapshot_names();
  test_engine_options();
  test_vecenv_options();
  test_other_defaults();
  test_sweep_options(argv[1]);
  return tl_test_finish();
}
