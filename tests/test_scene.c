/* Guards: src/scene/scene_load.c, src/scene/scene_xml.c, src/scene/scene_place.c (world files),
 * src/cli/cli_sim_scene.c (`talus simulate WORLD.xml`). */
/* World files (include/talus/scene.h, docs/world_format.md).
 *
 *   - The example worlds in robots/worlds/ load, step 2 s at their dt
 *     (tl_world_step; the loader's stand PD holds the robots) without error:
 *       two_quadrupeds: each base height range over the last 1.5 s < 0.02 m,
 *         above 0.2 m, only FOOT geoms touch anything, and only the ground;
 *       rough_terrain: the same on the heightmap (contacts with it only);
 *       boxes_and_balls: every box of the stack stays within 1 mm of its start
 *         at every step; every ball ends at rest (|v| < 1e-3 m/s) with its
 *         centre within 1 mm of its radius; the rubber ball (pair rubber /
 *         ground, restitution 0.5, dropped 0.9 m) rebounds to 0.1 + 0.25 * 0.9
 *         m within 2 %, the one without a pair (restitution 0) never rises
 *         1 mm after its fall is stopped.
 *   - A world written here exercises every attribute: inline heightmap and
 *     `clearance` over it and over a static box (exact heights), quat, vel
 *     and angvel, default names, q of a fixed-base system, the solver.
 *   - Malformed files in tests/world_bad/ (expected.txt): each gives exactly
 *     the expected file, line and message, leaves *world NULL and info empty.
 *   - tl_scene_is_world_file; NULL arguments.
 *   - The example of docs/world_format.md loads and steps.
 *   - The CLI: `talus simulate robots/worlds/two_quadrupeds.xml --duration 1
 *     --json` exits 0 with `objects` (both robots, final pose) and `solver`;
 *     a world without a <system> reports null robot keys; a bad world exits 1
 *     naming file and line; --controller with a world exits 2.
 *
 * Usage: test_scene SOURCE_DIR TALUS_BINARY (runs in SOURCE_DIR). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "talus/talus.h"
#include "test_util.h"

#define WORLDS "robots/worlds"
#define BAD "tests/world_bad"

static const char *talus_bin;

static tl_world *load(const char *path, tl_scene_info *info) {
  tl_world *w = NULL;
  tl_error err;
  tl_status st = tl_scene_load(path, &w, info, &err);
  TL_CHECK(st == TL_OK && w, "%s: load failed: %s", path, err.message);
  return st == TL_OK ? w : NULL;
}

static const tl_scene_system *entry(const tl_scene_info *info, const char *name) {
  for (int i = 0; i < info->nsystem; i++)
    if (!strcmp(info->systems[i].name, name)) return &info->systems[i];
  TL_CHECK(0, "no system named '%s'", name);
  return NULL;
}

static void base_pos(tl_system *s, double p[3]) {
  double R[9];
  tl_system_body_pose(s, 0, p, R, NULL);
}

/* ------------------------------------------------------------ robots */

/* Step 2 s; robots standing, only feet touching, only static geometry touched. */
static void check_standing(const char *file, int expect_systems) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", WORLDS, file);
  tl_scene_info info;
  tl_world *w = load(path, &info);
  if (!w) return;
  TL_CHECK(info.nsystem == expect_systems && info.narticulated == expect_systems &&
               info.first_articulated == 0,
           "%s: %d systems (%d articulated, first %d)", file, info.nsystem, info.narticulated,
           info.first_articulated);
  double zmin[8], zmax[8], dt = tl_world_timestep(w), max_depth = 0;
  for (int i = 0; i < 8; i++) zmin[i] = INFINITY, zmax[i] = -INFINITY;
  int n = (int)lround(2.0 / dt), bad_contacts = 0, min_contacts = 1 << 30;
  char bad[256] = "";
  tl_error err;
  for (int k = 0; k < n; k++) {
    if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "%s: step %d: %s", file, k, err.message)) break;
    int nc = tl_world_ncontact(w);
    if ((k + 1) * dt > 0.5 + 0.5 * dt) {
      if (nc < min_contacts) min_contacts = nc;
      for (int i = 0; i < info.nsystem && i < 8; i++) {
        double p[3];
        base_pos(info.systems[i].system, p);
        zmin[i] = fmin(zmin[i], p[2]);
        zmax[i] = fmax(zmax[i], p[2]);
      }
    }
    for (int c = 0; c < nc; c++) {
      tl_contact_info ci;
      if (tl_world_contact(w, c, &ci, NULL) != TL_OK) continue;
      max_depth = fmax(max_depth, ci.depth);
      const char *link =
          tl_model_geom_link(tl_system_model(info.systems[ci.system].system), ci.geom);
      if (!link || !strstr(link, "FOOT") || ci.other_system != -1) {
        if (!bad_contacts)
          snprintf(bad, sizeof bad, "system %d link %s with system %d (t = %g s)", ci.system,
                   link ? link : "?", ci.other_system, (k + 1) * dt);
        bad_contacts++;
      }
    }
  }
  for (int i = 0; i < info.nsystem && i < 8; i++) {
    const tl_scene_system *e = &info.systems[i];
    printf("%s: %s base z in [%.6f, %.6f] m over the last 1.5 s (range %.2e)\n", file, e->name,
           zmin[i], zmax[i], zmax[i] - zmin[i]);
    TL_CHECK(zmax[i] - zmin[i] < 0.02, "%s: %s base height range %.4g m", file, e->name,
             zmax[i] - zmin[i]);
    TL_CHECK(zmin[i] > 0.2, "%s: %s sank to %.4g m", file, e->name, zmin[i]);
    TL_CHECK(e->controller == TL_SCENE_CONTROLLER_STAND && e->kp == TL_SCENE_DEFAULT_KP &&
                 e->kd == TL_SCENE_DEFAULT_KD && !e->is_object && e->urdf,
             "%s: %s: controller %d kp %g kd %g", file, e->name, e->controller, e->kp, e->kd);
  }
  printf("%s: max penetration %.2e m, at least %d contacts per step after 0.5 s, %d bad contacts\n",
         file, max_depth, min_contacts, bad_contacts);
  TL_CHECK(bad_contacts == 0, "%s: %d contacts not between a FOOT and static geometry, first: %s",
           file, bad_contacts, bad);
  TL_CHECK(min_contacts >= 4 * expect_systems, "%s: only %d contacts at some step", file,
           min_contacts);
  TL_CHECK(max_depth < 0.005, "%s: penetration %.4g m", file, max_depth);
  tl_scene_info_free(&info);
  tl_world_free(w);
}

static void check_two_quadrupeds(void) {
  check_standing("two_quadrupeds.xml", 2);
  /* the robots keep their places 1.5 m apart, the right one turned by pi */
  tl_scene_info info;
  tl_world *w = load(WORLDS "/two_quadrupeds.xml", &info);
  if (!w) return;
  const tl_scene_system *l = entry(&info, "left"), *r = entry(&info, "right");
  if (l && r) {
    double pl[3], pr[3], q[19], u[18];
    base_pos(l->system, pl);
    base_pos(r->system, pr);
    TL_CHECK_NEAR(pl[1] - pr[1], 1.5, 1e-12, "two_quadrupeds: distance");
    TL_CHECK_NEAR(pl[2], pr[2], 1e-12, "two_quadrupeds: same start height");
    tl_system_get_state(r->system, q, 19, u, 18, NULL);
    TL_CHECK(fabs(fabs(q[6]) - 1) < 1e-12, "two_quadrupeds: right yaw quaternion z %g", q[6]);
  }
  tl_scene_info_free(&info);
  tl_world_free(w);
}

/* ------------------------------------------------------------ boxes and balls */

static void check_boxes_and_balls(void) {
  tl_scene_info info;
  tl_world *w = load(WORLDS "/boxes_and_balls.xml", &info);
  if (!w) return;
  int n = info.nsystem;
  TL_CHECK(n == 8 && info.narticulated == 0 && info.first_articulated == -1,
           "boxes_and_balls: %d systems, %d articulated", n, info.narticulated);
  double p0[8][3], drift[8] = {0}, rebound[8] = {0};
  int falling[8] = {0}, touched[8] = {0};
  for (int i = 0; i < n && i < 8; i++) {
    TL_CHECK(info.systems[i].is_object && !info.systems[i].urdf &&
                 info.systems[i].controller == TL_SCENE_CONTROLLER_NONE,
             "boxes_and_balls: entry %d is not a plain object", i);
    base_pos(info.systems[i].system, p0[i]);
  }
  const double r = 0.1, dt = tl_world_timestep(w);
  tl_error err;
  for (int k = 0; k < (int)lround(2.0 / dt); k++) {
    if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "boxes_and_balls: step %d: %s", k, err.message))
      break;
    for (int i = 0; i < n && i < 8; i++) {
      double p[3], q[7], u[6];
      base_pos(info.systems[i].system, p);
      tl_system_get_state(info.systems[i].system, q, 7, u, 6, NULL);
      drift[i] = fmax(drift[i], sqrt(pow(p[0] - p0[i][0], 2) + pow(p[1] - p0[i][1], 2) +
                                     pow(p[2] - p0[i][2], 2)));
      /* touched down: the fall (vz < -0.5 m/s) has been stopped */
      if (u[2] < -0.5) falling[i] = 1;
      if (falling[i] && u[2] > -1e-3) touched[i] = 1;
      if (touched[i]) rebound[i] = fmax(rebound[i], p[2]);
    }
  }
  for (int i = 0; i < n && i < 8; i++) {
    const tl_scene_system *e = &info.systems[i];
    double p[3], q[7], u[6];
    base_pos(e->system, p);
    tl_system_get_state(e->system, q, 7, u, 6, NULL);
    double speed = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    if (!strncmp(e->name, "box", 3)) {
      printf("boxes_and_balls: %s max drift %.3e m\n", e->name, drift[i]);
      TL_CHECK(drift[i] < 1e-3, "boxes_and_balls: %s drifted %.4g m", e->name, drift[i]);
    } else {
      printf("boxes_and_balls: %s final z %.6f m, speed %.2e m/s, highest after touching down %.4f "
             "m\n",
             e->name, p[2], speed, rebound[i]);
      TL_CHECK(fabs(p[2] - r) < 1e-3, "boxes_and_balls: %s ends at z %.6g, radius %g", e->name,
               p[2], r);
      TL_CHECK(speed < 1e-3, "boxes_and_balls: %s still moves at %.3g m/s", e->name, speed);
      if (!strcmp(e->name, "ball_rubber"))
        TL_CHECK(fabs(rebound[i] - 0.325) < 0.02 * 0.225,
                 "boxes_and_balls: rubber ball rebounded to %.4g m, expected 0.325", rebound[i]);
      if (!strcmp(e->name, "ball_dropped"))
        TL_CHECK(rebound[i] < r + 1e-3, "boxes_and_balls: ball without restitution rose to %.4g m",
                 rebound[i]);
    }
  }
  tl_scene_info_free(&info);
  tl_world_free(w);
}

/* ------------------------------------------------------------ every attribute */

static const char feature_world[] =
    "<?xml version=\"1.0\"?>\n"
    "<talus_world name=\"features\">\n"
    "  <object name=\"ball\" type=\"sphere\" size=\"0.1\" mass=\"2\" pos=\"0.05 0.05 5\" "
    "clearance=\"0.02\"\n"
    "          vel=\"1 0 0\" angvel=\"0 0 2\" material=\"rubber\" friction=\"0.4\"/>\n"
    "  <object type=\"box\" size=\"0.2 0.4 0.1\" mass=\"1\" pos=\"3 0 9\" quat=\"2 0 0 2\" "
    "clearance=\"0\"/>\n"
    "  <system urdf=\"PENDULUM\" base=\"fixed\" q=\"0.5\" u=\"-1\" integrator=\"rk4\"/>\n"
    "  <system name=\"dog\" urdf=\"QUADRUPED\" pos=\"-3 0 1\" rpy=\"0 0 1.5707963267948966\"\n"
    "          q=\"0 0.4 -0.8 0 0.4 -0.8 0 -0.4 0.8 0 -0.4 0.8\" controller=\"stand\" kp=\"200\"\n"
    "          self_collision=\"true\"/>\n"
    "  <gravity xyz=\"0 0 -9.81\"/>\n"
    "  <timestep value=\"0.002\"/>\n"
    "  <solver type=\"pgs\" max_iter=\"50\" tol=\"1e-9\" sor=\"1.2\" erp=\"0.1\" cfm=\"1e-8\"/>\n"
    "  <default_material friction=\"0.7\" restitution=\"0\" threshold=\"0.02\"/>\n"
    "  <material_pair a=\"rubber\" b=\"terrain\" friction=\"1.0\"/>\n"
    "  <heightmap nx=\"3\" ny=\"3\" x0=\"-0.5\" y0=\"-0.5\" dx=\"0.5\" dy=\"0.5\" "
    "material=\"terrain\"\n"
    "             heights=\"0 0 0  0 0.03 0.01  0 0 0\"/>\n"
    "  <static type=\"box\" size=\"1 1 0.5\" pos=\"3 0 0.25\" friction=\"0.3\"/>\n"
    "  <static type=\"plane\" pos=\"0 0 -1\"/>\n"
    "  <ground height=\"-0.5\"/>\n"
    "</talus_world>\n";

/* Replace the first `key` in text by `value` (into out). */
static void substitute(char *out, size_t cap, const char *text, const char *key,
                       const char *value) {
  const char *at = strstr(text, key);
  if (!at) {
    snprintf(out, cap, "%s", text);
    return;
  }
  snprintf(out, cap, "%.*s%s%s", (int)(at - text), text, value, at + strlen(key));
}

static void check_features(const char *tmpdir, const char *srcdir) {
  char a[8192], b[8192], path[1024], urdf[1024];
  snprintf(urdf, sizeof urdf, "%s/robots/pendulum/pendulum.urdf", srcdir);
  substitute(a, sizeof a, feature_world, "PENDULUM", urdf);
  snprintf(urdf, sizeof urdf, "%s/robots/talus_quadruped/talus_quadruped.urdf", srcdir);
  substitute(b, sizeof b, a, "QUADRUPED", urdf);
  snprintf(path, sizeof path, "%s/features.xml", tmpdir);
  FILE *f = fopen(path, "w");
  if (!TL_CHECK(f != NULL, "cannot write %s", path)) return;
  fputs(b, f);
  fclose(f);
  TL_CHECK(tl_scene_is_world_file(path) == 1, "features.xml is not recognised as a world file");
  tl_scene_info info;
  tl_world *w = load(path, &info);
  if (!w) return;
  TL_CHECK(!strcmp(info.name, "features"), "world name '%s'", info.name);
  TL_CHECK(info.nsystem == 4 && info.narticulated == 2 && info.first_articulated == 2 &&
               info.nstatic == 4,
           "features: %d systems, %d articulated, first %d, %d static", info.nsystem,
           info.narticulated, info.first_articulated, info.nstatic);
  TL_CHECK_NEAR(tl_world_timestep(w), 0.002, 0, "features: dt");
  double g[3];
  tl_world_gravity(w, g);
  TL_CHECK_NEAR(g[2], -9.81, 0, "features: gravity");
  /* ball: clearance over the heightmap, whose highest point under it is 0.03 m at (0, 0) */
  const tl_scene_system *ball = entry(&info, "ball");
  if (ball) {
    double q[7], u[6];
    tl_system_get_state(ball->system, q, 7, u, 6, NULL);
    TL_CHECK_NEAR(q[2], 0.03 + 0.1 + 0.02, 1e-12, "ball placed by clearance over the heightmap");
    TL_CHECK_NEAR(q[0], 0.05, 0, "ball x");
    TL_CHECK(u[0] == 1 && u[1] == 0 && u[2] == 0 && u[3] == 0 && u[4] == 0 && u[5] == 2,
             "ball u = [%g %g %g %g %g %g]", u[0], u[1], u[2], u[3], u[4], u[5]);
    TL_CHECK(ball->is_object && ball->index == 0 && ball->line == 3,
             "ball: object %d index %d line %d", ball->is_object, ball->index, ball->line);
    TL_CHECK(!strcmp(tl_model_geom_material(tl_system_model(ball->system), 0), "rubber"),
             "ball material '%s'", tl_model_geom_material(tl_system_model(ball->system), 0));
  }
  /* the unnamed box: default name, quaternion normalised, on the static box (top 0.5 m) */
  const tl_scene_system *box = entry(&info, "box1");
  if (box) {
    double q[7], u[6];
    tl_system_get_state(box->system, q, 7, u, 6, NULL);
    TL_CHECK_NEAR(q[3], sqrt(0.5), 1e-15, "box quaternion w");
    TL_CHECK_NEAR(q[6], sqrt(0.5), 1e-15, "box quaternion z");
    TL_CHECK_NEAR(q[2], 0.5 + 0.05, 1e-12, "box placed by clearance 0 on the static box");
  }
  /* the pendulum: fixed base, named after its URDF robot, q and u set */
  const tl_scene_system *pend = &info.systems[2];
  {
    double q[1], u[1];
    TL_CHECK(tl_system_nq(pend->system) == 1, "pendulum nq %d", tl_system_nq(pend->system));
    tl_system_get_state(pend->system, q, 1, u, 1, NULL);
    TL_CHECK(q[0] == 0.5 && u[0] == -1, "pendulum q %g u %g", q[0], u[0]);
    TL_CHECK(!strcmp(pend->name, tl_model_name(tl_system_model(pend->system))),
             "pendulum name '%s'", pend->name);
    TL_CHECK(tl_system_integrator(pend->system) == TL_INTEGRATOR_RK4, "pendulum integrator");
    TL_CHECK(pend->controller == TL_SCENE_CONTROLLER_NONE && pend->kp == 0, "pendulum controller");
  }
  const tl_scene_system *dog = entry(&info, "dog");
  if (dog) {
    double q[19], u[18];
    tl_system_get_state(dog->system, q, 19, u, 18, NULL);
    TL_CHECK(q[0] == -3 && q[1] == 0 && q[2] == 1, "dog base at [%g %g %g]", q[0], q[1], q[2]);
    TL_CHECK_NEAR(q[3], sqrt(0.5), 1e-15, "dog yaw quaternion w");
    TL_CHECK_NEAR(q[6], sqrt(0.5), 1e-15, "dog yaw quaternion z");
    TL_CHECK(q[8] == 0.4 && q[9] == -0.8 && q[18] == 0.8, "dog joints %g %g %g", q[8], q[9], q[18]);
    TL_CHECK(dog->controller == TL_SCENE_CONTROLLER_STAND && dog->kp == 200 && dog->kd == 10,
             "dog: controller %d kp %g kd %g", dog->controller, dog->kp, dog->kd);
  }
  tl_error err;
  int ok = 1;
  for (int k = 0; k < 50 && ok; k++)
    ok = TL_CHECK(tl_world_step(w, &err) == TL_OK, "features: step %d: %s", k, err.message);
  tl_solver_stats ss;
  TL_CHECK(tl_world_solver_stats(w, &ss, NULL) == TL_OK && ss.iterations <= 50,
           "features: solver stats (iterations %d)", ss.iterations);
  tl_scene_info_free(&info);
  tl_world_free(w);
  /* info may be NULL */
  w = NULL;
  TL_CHECK(tl_scene_load(path, &w, NULL, &err) == TL_OK && w, "features: load without info: %s",
           err.message);
  tl_world_free(w);
  remove(path);
}

/* The example of docs/world_format.md loads and steps 0.5 s. */
static void check_doc_example(const char *tmpdir, const char *srcdir) {
  FILE *f = fopen("docs/world_format.md", "r");
  if (!TL_CHECK(f != NULL, "cannot open docs/world_format.md")) return;
  static char doc[1 << 16], xml[1 << 14], text[1 << 14];
  size_t n = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[n] = '\0';
  const char *ex = strstr(doc, "## Example");
  const char *start = ex ? strstr(ex, "```xml\n") : NULL;
  const char *end = start ? strstr(start + 7, "```") : NULL;
  if (!TL_CHECK(start && end, "docs/world_format.md: no ```xml block after '## Example'")) return;
  snprintf(xml, sizeof xml, "%.*s", (int)(end - start - 7), start + 7);
  char urdf[1024], path[1024];
  snprintf(urdf, sizeof urdf, "%s/robots/talus_quadruped/", srcdir);
  substitute(text, sizeof text, xml, "../talus_quadruped/", urdf);
  snprintf(path, sizeof path, "%s/example.xml", tmpdir);
  f = fopen(path, "w");
  if (!TL_CHECK(f != NULL, "cannot write %s", path)) return;
  fputs(text, f);
  fclose(f);
  tl_scene_info info;
  tl_world *w = load(path, &info);
  remove(path);
  if (!w) return;
  TL_CHECK(info.nsystem == 3 && info.nstatic == 3, "doc example: %d systems, %d static",
           info.nsystem, info.nstatic);
  const tl_scene_system *crate = entry(&info, "crate");
  if (crate) {
    double p[3];
    base_pos(crate->system, p);
    TL_CHECK_NEAR(p[2], 0.2 + 0.15, 1e-12, "doc example: crate on the static box (clearance 0)");
  }
  tl_error err;
  int ok = 1;
  for (int k = 0; k < 500 && ok; k++)
    ok = TL_CHECK(tl_world_step(w, &err) == TL_OK, "doc example: step %d: %s", k, err.message);
  tl_scene_info_free(&info);
  tl_world_free(w);
}

/* ------------------------------------------------------------ malformed files */

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && !strcmp(s + n - m, tail);
}

static void check_bad_files(void) {
  FILE *f = fopen(BAD "/expected.txt", "r");
  if (!TL_CHECK(f != NULL, "cannot open " BAD "/expected.txt")) return;
  char line[2048], listed[4096] = "|";
  int nfile = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    char *fields[8] = {NULL};
    int nf = 0;
    for (char *t = line, *bar; nf < 8; t = bar + 1) {
      fields[nf++] = t;
      if (!(bar = strchr(t, '|'))) break;
      *bar = '\0';
    }
    if (!TL_CHECK(nf >= 3, "expected.txt: bad line '%s'", line)) continue;
    char *world = fields[0], *about = strchr(world, '>');
    if (about)
      *about++ = '\0';
    else
      about = world;
    int want_line = atoi(fields[1]);
    char path[3000];
    snprintf(path, sizeof path, "%s/%s", BAD, world);
    strncat(listed, world, sizeof listed - strlen(listed) - 2);
    strcat(listed, "|");
    tl_world *w = (tl_world *)&nfile; /* must be overwritten with NULL */
    tl_scene_info info;
    memset(&info, 0xab, sizeof info);
    tl_error err;
    tl_status st = tl_scene_load(path, &w, &info, &err);
    nfile++;
    printf("%s: %s\n", world, err.message);
    TL_CHECK(st != TL_OK && err.status == st, "%s: status %d (err.status %d)", world, st,
             err.status);
    TL_CHECK(w == NULL, "%s: *world is not NULL after a failure", world);
    TL_CHECK(info.nsystem == 0 && info.systems == NULL && info.name == NULL, "%s: info not empty",
             world);
    TL_CHECK(err.line == want_line, "%s: line %d, expected %d", world, err.line, want_line);
    TL_CHECK(ends_with(err.file, about), "%s: error file '%s', expected %s", world, err.file,
             about);
    TL_CHECK(strstr(err.message, about) != NULL, "%s: message does not name %s", world, about);
    char prefix[600];
    if (want_line > 0)
      snprintf(prefix, sizeof prefix, "%s:%d: ", err.file, want_line);
    else
      snprintf(prefix, sizeof prefix, "%s: ", err.file);
    TL_CHECK(!strncmp(err.message, prefix, strlen(prefix)), "%s: message does not start with '%s'",
             world, prefix);
    for (int k = 2; k < nf; k++)
      TL_CHECK(strstr(err.message, fields[k]) != NULL, "%s: message lacks '%s'", world, fields[k]);
  }
  fclose(f);
  TL_CHECK(nfile >= 10, "only %d malformed files", nfile);
  /* every .xml file of the folder is listed */
  DIR *d = opendir(BAD);
  if (!TL_CHECK(d != NULL, "cannot list " BAD)) return;
  for (struct dirent *e; (e = readdir(d));) {
    char key[300];
    if (!ends_with(e->d_name, ".xml")) continue;
    snprintf(key, sizeof key, "|%s|", e->d_name);
    TL_CHECK(strstr(listed, key) != NULL, "%s/%s is not in expected.txt", BAD, e->d_name);
  }
  closedir(d);
}

static void check_api(void) {
  tl_world *w = NULL;
  tl_error err;
  TL_CHECK(tl_scene_load(NULL, &w, NULL, &err) == TL_ERR_ARGUMENT && !w, "NULL path accepted");
  TL_CHECK(tl_scene_load(WORLDS "/two_quadrupeds.xml", NULL, NULL, &err) == TL_ERR_ARGUMENT,
           "NULL world accepted");
  TL_CHECK(tl_scene_load("no/such/world.xml", &w, NULL, &err) == TL_ERR_IO && !w &&
               strstr(err.message, "no/such/world.xml"),
           "missing file: %s", err.message);
  TL_CHECK(tl_scene_load(WORLDS "/boxes_and_balls.xml", &w, NULL, NULL) == TL_OK && w, "err NULL");
  tl_world_free(w);
  tl_scene_info_free(NULL);
  static const char *const worlds[] = {"two_quadrupeds.xml", "boxes_and_balls.xml",
                                       "rough_terrain.xml"};
  for (int i = 0; i < 3; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", WORLDS, worlds[i]);
    TL_CHECK(tl_scene_is_world_file(path) == 1, "%s: not recognised as a world file", path);
  }
  TL_CHECK(tl_scene_is_world_file("robots/talus_quadruped/talus_quadruped.urdf") == 0,
           "URDF taken for a world");
  TL_CHECK(tl_scene_is_world_file(BAD "/wrong_root.xml") == 0, "wrong_root.xml taken for a world");
  TL_CHECK(tl_scene_is_world_file("no/such/file.xml") == -1, "missing file");
}

/* ------------------------------------------------------------ CLI */

typedef struct run_result {
  int exit_code;
  char *out, *err;
} run_result;

static char *slurp(FILE *f) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += r;
    if (cap - n < 4096) buf = realloc(buf, cap *= 2);
  }
  if (!buf) exit(2);
  buf[n] = '\0';
  return buf;
}

static run_result run(const char *args) {
  char err_path[] = "/tmp/talus_test_scene_XXXXXX", cmd[4096];
  int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s'", talus_bin, args, err_path);
  run_result r = {-1, NULL, NULL};
  FILE *p = popen(cmd, "r");
  r.out = p ? slurp(p) : calloc(1, 1);
  int st = p ? pclose(p) : -1;
  if (st != -1 && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  FILE *e = fopen(err_path, "r");
  r.err = e ? slurp(e) : calloc(1, 1);
  if (e) fclose(e);
  remove(err_path);
  return r;
}

static double jnum(const cJSON *o, const char *k) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

static void check_cli(void) {
  const char *args = "simulate robots/worlds/two_quadrupeds.xml --duration 1 --json";
  run_result r = run(args);
  printf("cli: talus %s -> exit %d\n", args, r.exit_code);
  TL_CHECK(r.exit_code == 0, "cli: exit %d, stderr: %s", r.exit_code, r.err);
  cJSON *j = cJSON_Parse(r.out);
  if (TL_CHECK(j != NULL, "cli: stdout is not JSON: %.300s", r.out)) {
    const cJSON *objects = cJSON_GetObjectItemCaseSensitive(j, "objects");
    const cJSON *solver = cJSON_GetObjectItemCaseSensitive(j, "solver");
    TL_CHECK(cJSON_IsArray(objects) && cJSON_GetArraySize(objects) == 2,
             "cli: objects is not an array of 2");
    static const char *const names[] = {"left", "right"};
    for (int i = 0; cJSON_IsArray(objects) && i < cJSON_GetArraySize(objects) && i < 2; i++) {
      const cJSON *o = cJSON_GetArrayItem(objects, i);
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
      const cJSON *pos = cJSON_GetObjectItemCaseSensitive(o, "position");
      const cJSON *quat = cJSON_GetObjectItemCaseSensitive(o, "quaternion");
      TL_CHECK(cJSON_IsString(name) && !strcmp(name->valuestring, names[i]),
               "cli: objects[%d].name", i);
      TL_CHECK(cJSON_IsArray(pos) && cJSON_GetArraySize(pos) == 3 && cJSON_IsArray(quat) &&
                   cJSON_GetArraySize(quat) == 4,
               "cli: objects[%d] position / quaternion", i);
      if (cJSON_IsArray(pos) && cJSON_GetArraySize(pos) == 3) {
        double y = cJSON_GetArrayItem(pos, 1)->valuedouble,
               z = cJSON_GetArrayItem(pos, 2)->valuedouble;
        TL_CHECK(fabs(fabs(y) - 0.75) < 0.01 && z > 0.4 && z < 0.6, "cli: objects[%d] at y %g z %g",
                 i, y, z);
      }
      double qn = 0;
      for (int k = 0; cJSON_IsArray(quat) && k < cJSON_GetArraySize(quat); k++)
        qn += pow(cJSON_GetArrayItem(quat, k)->valuedouble, 2);
      TL_CHECK(fabs(qn - 1) < 1e-9, "cli: objects[%d] quaternion norm^2 %g", i, qn);
    }
    static const char *const keys[] = {"iterations", "nrow",        "ncontact",      "signorini",
                                       "cone",       "dissipation", "max_signorini", "max_cone"};
    TL_CHECK(cJSON_IsObject(solver), "cli: no solver object");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      TL_CHECK(isfinite(jnum(solver, keys[k])), "cli: solver.%s is not a number", keys[k]);
    TL_CHECK(jnum(solver, "ncontact") == 8 && jnum(solver, "nrow") == 24,
             "cli: solver ncontact %g nrow %g (8 feet)", jnum(solver, "ncontact"),
             jnum(solver, "nrow"));
    TL_CHECK(jnum(solver, "max_signorini") >= jnum(solver, "signorini") &&
                 jnum(solver, "max_cone") >= jnum(solver, "cone"),
             "cli: solver maxima below the last values");
    const cJSON *robot = cJSON_GetObjectItemCaseSensitive(j, "robot");
    TL_CHECK(cJSON_IsString(robot) && !strcmp(robot->valuestring, "talus_quadruped"), "cli: robot");
    TL_CHECK(jnum(j, "steps") == 1000 && jnum(j, "gc_dim") == 19 && jnum(j, "dof") == 18,
             "cli: steps %g gc_dim %g dof %g", jnum(j, "steps"), jnum(j, "gc_dim"), jnum(j, "dof"));
    TL_CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "nan_detected")),
             "cli: nan_detected");
    const cJSON *bh = cJSON_GetObjectItemCaseSensitive(j, "base_height");
    TL_CHECK(jnum(bh, "max") - jnum(bh, "min") < 0.02, "cli: base height range");
    const cJSON *ctrl = cJSON_GetObjectItemCaseSensitive(j, "controller");
    TL_CHECK(cJSON_IsString(ctrl) && !strcmp(ctrl->valuestring, "stand"), "cli: controller");
  }
  cJSON_Delete(j);
  free(r.out), free(r.err);

  /* no articulated system: robot keys null, every object reported */
  r = run("simulate robots/worlds/boxes_and_balls.xml --duration 0.05 --json");
  TL_CHECK(r.exit_code == 0, "cli boxes_and_balls: exit %d: %s", r.exit_code, r.err);
  j = cJSON_Parse(r.out);
  if (TL_CHECK(j != NULL, "cli boxes_and_balls: not JSON")) {
    TL_CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "robot")) &&
                 cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_gc")) &&
                 cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "controller")),
             "cli boxes_and_balls: robot keys are not null");
    TL_CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "objects")) == 8,
             "cli boxes_and_balls: objects");
    TL_CHECK(jnum(j, "steps") == 50, "cli boxes_and_balls: steps %g", jnum(j, "steps"));
  }
  cJSON_Delete(j);
  free(r.out), free(r.err);

  r = run("simulate tests/world_bad/negative_mass.xml --duration 0.01");
  TL_CHECK(r.exit_code == 1 && strstr(r.err, "negative_mass.xml:5: <object>: mass -1"),
           "cli bad world: exit %d, stderr: %s", r.exit_code, r.err);
  free(r.out), free(r.err);
  r = run("simulate robots/worlds/two_quadrupeds.xml --controller trot --duration 0.01");
  TL_CHECK(r.exit_code == 2 && strstr(r.err, "--controller"),
           "cli world + --controller: exit %d, %s", r.exit_code, r.err);
  free(r.out), free(r.err);
  r = run("simulate robots/worlds/rough_terrain.xml --duration 0.02");
  TL_CHECK(r.exit_code == 0 && strstr(r.out, "quadruped") && strstr(r.out, "solver"),
           "cli text report: exit %d, %s", r.exit_code, r.err);
  free(r.out), free(r.err);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SOURCE_DIR TALUS_BINARY\n", argv[0]);
    return 2;
  }
  char tmpdir[] = "/tmp/talus_test_scene_dir_XXXXXX";
  if (!mkdtemp(tmpdir) || chdir(argv[1]) != 0) {
    fprintf(stderr, "cannot set up in %s\n", argv[1]);
    return 2;
  }
  talus_bin = argv[2];
  check_api();
  check_bad_files();
  check_features(tmpdir, argv[1]);
  check_doc_example(tmpdir, argv[1]);
  check_boxes_and_balls();
  check_two_quadrupeds();
  check_standing("rough_terrain.xml", 1);
  check_cli();
  rmdir(tmpdir);
  return tl_test_finish();
}
