/* Loop constraints declared in world files and URDFs (issue 23 §1, §4).
 *
 * Guards: src/scene/scene_load.c (<constraint>), urdf/urdf_parse.c and
 * urdf/urdf_compile.c (<loop_joint>), urdf/urdf_query.c (tl_model_nloop,
 * tl_model_loop), urdf/urdf_export.c (loop_joint written back), src/model/model_xmacro.h (the loop_* arrays, copied with
 * the model), src/world/world.c (tl_world_add_system adds a model's loops,
 * nothing half-built), src/cli/cli_info.c (talus info lists loops),
 * robots/talus_fivebar + robots/worlds/fivebar_stand.xml,
 * robots/four_bar/four_bar_loop.urdf.
 *
 *   - every malformed <constraint> of tests/world_bad_constraint/ (expected.txt)
 *     fails with its file, line and message, *world NULL and info empty;
 *   - every malformed <loop_joint> fails with its URDF line and message; a good
 *     one is kept in the model and survives tl_model_export_urdf bit for bit;
 *   - four_bar_loop.urdf: one hinge loop in the model (and in its copy), listed
 *     by `talus info` (text and JSON); added to a world with its system, closed
 *     at q = 0, named after the loop; a second copy of the robot gets its own;
 *   - fivebar_stand.xml: four ball constraints, in every env of a batch built from
 *     the file too (src/batch: tl_batch_create_file); `talus simulate` for 2 s keeps
 *     the base near its nominal height (> 0.24 m, nominal 0.2503 m) and every
 *     foot closed (< 1e-9 m), while the same world without the constraints
 *     collapses onto the knees (base < 0.08 m), as Minitaur does in the issue.
 *
 * Usage: test_loop_decl SOURCE_DIR TALUS_BINARY (runs in SOURCE_DIR). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <cjson/cJSON.h>

#include "talus/batch.h"
#include "talus/talus.h"
#include "test_util.h"

static const char *talus_bin;

/* ------------------------------------------------------------ world files */

static void bad_worlds(void) {
  const char *dir = "tests/world_bad_constraint";
  char path[512];
  snprintf(path, sizeof path, "%s/expected.txt", dir);
  FILE *f = fopen(path, "r");
  if (!TL_CHECK(f != NULL, "cannot open %s", path)) return;
  char line[2048];
  int n = 0;
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
    if (!TL_CHECK(nf >= 3, "expected.txt: bad line")) continue;
    char world[2600];
    snprintf(world, sizeof world, "%s/%s", dir, fields[0]);
    tl_world *w = (tl_world *)&n;
    tl_scene_info info;
    memset(&info, 0xab, sizeof info);
    tl_error err;
    tl_status st = tl_scene_load(world, &w, &info, &err);
    n++;
    printf("%s: %s\n", fields[0], err.message);
    TL_CHECK(st != TL_OK && err.status == st, "%s: fails (status %d)", fields[0], st);
    TL_CHECK(w == NULL && info.nsystem == 0 && info.systems == NULL, "%s: nothing left built", fields[0]);
    TL_CHECK(err.line == atoi(fields[1]), "%s: line %d, expected %s", fields[0], err.line, fields[1]);
    TL_CHECK(strcmp(err.file, world) == 0, "%s: file '%s'", fields[0], err.file);
    char prefix[2800];
    snprintf(prefix, sizeof prefix, "%s:%s: ", world, fields[1]);
    TL_CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0, "%s: message starts with '%s'", fields[0], prefix);
    for (int k = 2; k < nf; k++)
      TL_CHECK(strstr(err.message, fields[k]) != NULL, "%s: message contains '%s'", fields[0], fields[k]);
  }
  fclose(f);
  TL_CHECK(n >= 19, "%d malformed worlds checked", n);
}

/* ------------------------------------------------------------ URDF loop joints */

/* A two-link chain base -> a -> b and base -> c (c fixed-merged child d of c), then `loop`. */
static tl_status load_loop(const char *loop, tl_model **m, tl_error *err) {
  char text[4096];
  snprintf(text, sizeof text,
           "<robot name=\"chain\">\n"                                                                 /* 1 */
           "  <link name=\"base\"/>\n"                                                                /* 2 */
           "  <link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" "
           "iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"                               /* 3 */
           "  <link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" "
           "iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"                               /* 4 */
           "  <link name=\"c\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" "
           "iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"                               /* 5 */
           "  <link name=\"d\"/>\n"                                                                   /* 6 */
           "  <joint name=\"ja\" type=\"continuous\"><parent link=\"base\"/><child link=\"a\"/>"
           "<axis xyz=\"0 1 0\"/></joint>\n"                                                          /* 7 */
           "  <joint name=\"jb\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
           "<origin xyz=\"0.5 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"                                 /* 8 */
           "  <joint name=\"jc\" type=\"continuous\"><parent link=\"base\"/><child link=\"c\"/>"
           "<origin xyz=\"1 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"                                   /* 9 */
           "  <joint name=\"jd\" type=\"fixed\"><parent link=\"c\"/><child link=\"d\"/>"
           "<origin xyz=\"0 0 0.1\"/></joint>\n"                                                      /* 10 */
           "%s\n"                                                                                     /* 11.. */
           "</robot>\n",
           loop);
  tl_load_options opt = tl_load_options_default();
  opt.base = TL_BASE_FIXED;
  return tl_model_load_urdf_string(text, strlen(text), "chain.urdf", &opt, m, err);
}

static void bad_loop(const char *what, const char *loop, int line, const char *text) {
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = load_loop(loop, &m, &err);
  printf("%s: %s\n", what, err.message);
  TL_CHECK(st != TL_OK && m == NULL, "%s: refused", what);
  TL_CHECK(err.line == line, "%s: line %d, expected %d", what, err.line, line);
  TL_CHECK(strstr(err.message, "chain.urdf:") == err.message, "%s: the message names the file", what);
  TL_CHECK(strstr(err.message, text) != NULL, "%s: message contains '%s'", what, text);
  tl_model_free(m);
}

static void urdf_loops(void) {
  const char *l1 = "<link1 link=\"b\" xyz=\"0.5 0 0\"/>", *l2 = "<link2 link=\"c\" xyz=\"0 0 0.5\"/>";
  char buf[1024];
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\">\n    <link1 link=\"q\"/>\n    %s\n  </loop_joint>", l2);
  bad_loop("unknown link", buf, 11, "<loop_joint>: <link1 link=\"q\"> (line 12) of loop_joint 'x' is not defined");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\"><link1 link=\"b\"/><link2 link=\"b\"/></loop_joint>");
  bad_loop("same link", buf, 11, "loop_joint 'x' joins link 'b' to itself");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"weld\"><link1 link=\"c\"/><link2 link=\"d\"/></loop_joint>");
  bad_loop("same body (merged link)", buf, 11, "<loop_joint>: loop_joint 'x' joins links 'c' and 'd', which fixed joints merge into one body");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\">%s</loop_joint>", l1);
  bad_loop("missing link2", buf, 11, "<loop_joint>: <loop_joint> 'x' has no <link2>");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"slider\">%s%s</loop_joint>", l1, l2);
  bad_loop("unknown type", buf, 11, "loop_joint 'x' has unknown type \"slider\": expected ball, hinge or weld");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\">\n    <link1 link=\"b\" xyz=\"0 nan 0\"/>%s</loop_joint>", l2);
  bad_loop("non-finite number", buf, 12, "<link1>: attribute 'xyz' of <link1> in loop 'x' is \"0 nan 0\": expected finite numbers");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"hinge\">%s%s\n  <axis xyz=\"0 0 0\"/></loop_joint>", l1, l2);
  bad_loop("zero axis", buf, 12, "<axis>: <axis> of loop_joint 'x' is zero");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\">%s%s\n  <axis xyz=\"0 1 0\"/></loop_joint>", l1, l2);
  bad_loop("axis on a ball", buf, 12, "only a hinge has an axis");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\">%s%s</loop_joint>\n  <loop_joint name=\"x\" type=\"ball\">%s%s</loop_joint>",
           l1, l2, l1, l2);
  bad_loop("duplicate name", buf, 12, "loop_joint name 'x' is used twice (first at line 11)");
  snprintf(buf, sizeof buf, "  <loop_joint type=\"ball\">%s%s</loop_joint>", l1, l2);
  bad_loop("missing name", buf, 11, "attribute 'name' of <loop_joint> is missing");
  snprintf(buf, sizeof buf, "  <loop_joint name=\"x\" type=\"ball\">%s%s<limit/></loop_joint>", l1, l2);
  bad_loop("unknown child", buf, 11, "unexpected element <limit> in loop_joint 'x'");

  /* a good one: kept in the model */
  snprintf(buf, sizeof buf, "  <loop_joint name=\"pin\" type=\"hinge\">%s<link2 link=\"d\" xyz=\"0 0 0.4\" rpy=\"0.1 0 0\"/>"
           "<axis xyz=\"0 2 0\"/></loop_joint>", l1);
  tl_model *m = NULL;
  tl_error err;
  if (!TL_CHECK(load_loop(buf, &m, &err) == TL_OK, "good loop loads: %s", err.message)) return;
  tl_loop_info li;
  TL_CHECK(tl_model_nloop(m) == 1 && tl_model_loop(m, 0, &li, &err) == TL_OK, "one loop");
  TL_CHECK(!strcmp(li.name, "pin") && li.type == TL_CONSTRAINT_HINGE && !strcmp(li.link1, "b") &&
               !strcmp(li.link2, "d") && li.line == 11 && li.nrow == 5,
           "loop fields: %s type %d %s %s line %d rows %d", li.name, li.type, li.link1, li.link2, li.line, li.nrow);
  TL_CHECK(li.pos1[0] == 0.5 && li.pos2[2] == 0.4 && li.rpy2[0] == 0.1 && li.axis[1] == 1.0 && li.axis[0] == 0,
           "loop frames and the normalised axis");
  TL_CHECK(tl_model_loop(m, 1, &li, &err) == TL_ERR_ARGUMENT, "index 1 refused");
  /* exported back to URDF (tl_model_export_urdf) and loaded again: the same loop */
  char path[64];
  snprintf(path, sizeof path, "/tmp/talus_loop_export_%d.urdf", (int)getpid());
  tl_model *back = NULL;
  tl_load_options opt = tl_load_options_default();
  opt.base = TL_BASE_FIXED;
  if (TL_CHECK(tl_model_export_urdf(m, path, &err) == TL_OK && tl_model_load_urdf(path, &opt, &back, &err) == TL_OK,
               "export and reload: %s", err.message)) {
    tl_loop_info lb;
    TL_CHECK(tl_model_nloop(back) == 1 && tl_model_loop(back, 0, &lb, &err) == TL_OK && !strcmp(lb.name, li.name) &&
                 lb.type == li.type && !strcmp(lb.link1, li.link1) && !strcmp(lb.link2, li.link2) &&
                 !memcmp(lb.pos1, li.pos1, sizeof li.pos1) && !memcmp(lb.rpy1, li.rpy1, sizeof li.rpy1) &&
                 !memcmp(lb.pos2, li.pos2, sizeof li.pos2) && !memcmp(lb.rpy2, li.rpy2, sizeof li.rpy2) &&
                 !memcmp(lb.axis, li.axis, sizeof li.axis),
             "the exported loop reads back bit for bit");
  }
  tl_model_free(back);
  remove(path);
  tl_model_free(m);
}

/* ------------------------------------------------------------ four-bar */

static char *run(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", talus_bin, args);
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 20, n = 0;
  char *out = malloc(cap);
  size_t k;
  while (out && (k = fread(out + n, 1, cap - 1 - n, p)) > 0) n += k;
  if (out) out[n] = '\0';
  pclose(p);
  return out;
}

static void four_bar(void) {
  const char *path = "robots/four_bar/four_bar_loop.urdf";
  char *out = run("info robots/four_bar/four_bar_loop.urdf");
  TL_CHECK(out && strstr(out, "loop joints (1; 5 constraint rows; nv - rows = -2") &&
               strstr(out, "    0  pin_B  hinge  coupler_link  rocker_link      5"),
           "talus info lists the loop:\n%s", out ? out : "");
  free(out);
  out = run("info robots/four_bar/four_bar_loop.urdf --json");
  cJSON *j = out ? cJSON_Parse(out) : NULL;
  cJSON *loops = cJSON_GetObjectItem(j, "loops"), *l0 = cJSON_GetArrayItem(loops, 0);
  TL_CHECK(cJSON_GetArraySize(loops) == 1 && l0 &&
               !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(l0, "type")), "hinge") &&
               cJSON_GetNumberValue(cJSON_GetObjectItem(l0, "rows")) == 5 &&
               cJSON_GetNumberValue(cJSON_GetObjectItem(j, "loop_rows")) == 5,
           "talus info --json lists the loop");
  cJSON_Delete(j);
  free(out);

  tl_model *m = NULL;
  tl_error err;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "%s: %s", path, err.message)) return;
  tl_world *w = NULL;
  tl_world_create(&w, &err);
  tl_system *s = NULL, *s2 = NULL;
  tl_status st = tl_world_add_system(w, m, &s, &err);
  if (st == TL_ERR_UNSUPPORTED) { /* an engine without constraints: nothing half-built */
    TL_CHECK(strstr(err.message, "four_bar_loop.urdf:67: <loop_joint>: loop_joint 'pin_B'") != NULL,
             "refusal names the loop_joint's line: %s", err.message);
    TL_CHECK(tl_world_nsystem(w) == 0 && tl_world_nconstraint(w) == 0, "the system is taken out again");
    tl_test_skip("the native engine does not solve loop constraints: the four-bar world is not stepped");
  } else if (TL_CHECK(st == TL_OK, "four-bar added: %s", err.message)) {
    TL_CHECK(tl_world_nconstraint(w) == 1 && tl_world_constraint_index(w, "pin_B") == 0, "its loop is a constraint");
    tl_constraint_info ci;
    TL_CHECK(tl_world_constraint(w, 0, &ci, &err) == TL_OK && ci.type == TL_CONSTRAINT_HINGE && ci.nrow == 5 &&
                 ci.system1 == 0 && ci.system2 == 0,
             "constraint 0: hinge, 5 rows, system 0 with itself");
    TL_CHECK(ci.position_error < 1e-12 && ci.angle_error < 1e-12, "closed at q = 0: %g m, %g rad", ci.position_error,
             ci.angle_error);
    TL_CHECK(tl_world_add_system(w, m, &s2, &err) == TL_OK && tl_world_nconstraint(w) == 2 &&
                 tl_world_constraint_index(w, "pin_B_1") == 1,
             "a second four-bar gets its own loop, pin_B_1 (%s)", err.message);
    tl_constraint_info c1;
    TL_CHECK(tl_world_constraint(w, 1, &c1, &err) == TL_OK && c1.system1 == 1 && c1.system2 == 1, "of system 1");
    /* the crank turns under gravity; the pin stays closed */
    for (int k = 0; k < 1000 && st == TL_OK; k++) st = tl_world_step(w, &err);
    TL_CHECK(st == TL_OK, "1 s of steps: %s", err.message);
    tl_world_constraint(w, 0, &ci, &err);
    double q[3];
    tl_system_get_state(s, q, 3, NULL, 0, &err);
    TL_CHECK(ci.position_error < 1e-9 && ci.angle_error < 1e-9 && fabs(q[0]) > 0.01,
             "after 1 s: crank moved %g rad, pin error %g m, %g rad", q[0], ci.position_error, ci.angle_error);
  }
  tl_world_free(w);
  tl_model_free(m);
}

/* ------------------------------------------------------------ five-bar quadruped */

/* base_height.final of `talus simulate WORLD --duration 2 --json`; -1 on failure. */
static double simulate_height(const char *world) {
  char args[1024];
  snprintf(args, sizeof args, "simulate %s --duration 2 --json", world);
  char *out = run(args);
  const char *brace = out ? strchr(out, '{') : NULL;
  cJSON *j = brace ? cJSON_Parse(brace) : NULL;
  double h = -1;
  cJSON *bh = cJSON_GetObjectItem(j, "base_height");
  if (bh) h = cJSON_GetNumberValue(cJSON_GetObjectItem(bh, "final"));
  if (!j) printf("%s\n", out ? out : "(no output)");
  cJSON_Delete(j);
  free(out);
  return h;
}

static void fivebar(void) {
  const char *path = "robots/worlds/fivebar_stand.xml";
  tl_world *w = NULL;
  tl_scene_info info;
  tl_error err;
  tl_status st = tl_scene_load(path, &w, &info, &err);
  if (st == TL_ERR_UNSUPPORTED) {
    TL_CHECK(strstr(err.message, "fivebar_stand.xml:19: <constraint>:") != NULL, "refused at the first constraint: %s",
             err.message);
    tl_test_skip("the native engine does not solve loop constraints: the five-bar stand is not run");
    return;
  }
  if (!TL_CHECK(st == TL_OK, "%s: %s", path, err.message)) return;
  TL_CHECK(info.nconstraint == 4 && tl_world_nconstraint(w) == 4 &&
               tl_world_constraint_index(w, "foot_back_right") == 3,
           "four constraints (%d)", info.nconstraint);
  for (int k = 0; k < 2000 && st == TL_OK; k++) st = tl_world_step(w, &err);
  TL_CHECK(st == TL_OK, "2 s: %s", err.message);
  for (int k = 0; k < 4; k++) {
    tl_constraint_info ci;
    tl_world_constraint(w, k, &ci, &err);
    TL_CHECK(ci.type == TL_CONSTRAINT_BALL && ci.nrow == 3 && ci.position_error < 1e-9,
             "%s: foot closed after 2 s (%g m)", ci.name, ci.position_error);
    TL_CHECK(ci.force[2] != 0, "%s: carries a load (force z %g N)", ci.name, ci.force[2]);
  }
  tl_scene_info_free(&info);
  tl_world_free(w);

  /* a batch built from the world file: every env gets the constraints and keeps them closed */
  tl_batch *b = NULL;
  tl_batch_options bo = tl_batch_options_default();
  bo.nthread = 2;
  if (TL_CHECK(tl_batch_create_file(path, 3, &bo, &b, &err) == TL_OK, "batch of 3: %s", err.message)) {
    TL_CHECK(tl_batch_step(b, 300, &err) == TL_OK, "batch steps: %s", err.message);
    for (int e = 0; e < 3; e++) {
      tl_world *we = tl_batch_world(b, e);
      double worst = 0;
      for (int k = 0; k < tl_world_nconstraint(we); k++) {
        tl_constraint_info ci;
        tl_world_constraint(we, k, &ci, &err);
        worst = fmax(worst, ci.position_error);
      }
      TL_CHECK(tl_world_nconstraint(we) == 4 && worst < 1e-9, "env %d: 4 constraints, closed (%g m)", e, worst);
    }
  }
  tl_batch_free(b);

  double closed = simulate_height(path);
  /* the same world without its <constraint> elements */
  size_t len;
  char *text = tl_test_read_text(path, &len);
  if (!TL_CHECK(text != NULL, "read %s", path)) return;
  char open_path[256], cwd[1024];
  snprintf(open_path, sizeof open_path, "/tmp/talus_fivebar_open_%d.xml", (int)getpid());
  if (!TL_CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd")) return;
  FILE *f = fopen(open_path, "w");
  if (!TL_CHECK(f != NULL, "write %s", open_path)) {
    free(text);
    return;
  }
  int removed = 0;
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    static int inside = 0;
    const char *t = line + strspn(line, " ");
    if (!strncmp(t, "<constraint ", 12)) inside = 1, removed++;
    char *urdf = strstr(line, "urdf=\"../");
    if (!inside && urdf) /* the URDF path from the source tree */
      fprintf(f, "%.*surdf=\"%s/robots/%s\n", (int)(urdf - line), line, cwd, urdf + 9);
    else if (!inside)
      fprintf(f, "%s\n", line);
    if (inside && strstr(line, "/>")) inside = 0;
  }
  fclose(f);
  free(text);
  TL_CHECK(removed == 4, "four constraints removed (%d)", removed);
  double open = simulate_height(open_path);
  remove(open_path);
  printf("five-bar base height after 2 s: closed %.6f m, open %.6f m (nominal 0.2503 m)\n", closed, open);
  TL_CHECK(closed > 0.24 && closed < 0.2503, "closed: stands near nominal (%g m)", closed);
  TL_CHECK(open > 0 && open < 0.08, "open: collapses onto the knees (%g m)", open);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_loop_decl SOURCE_DIR TALUS_BINARY\n");
    return 2;
  }
  if (chdir(argv[1]) != 0) {
    perror(argv[1]);
    return 2;
  }
  talus_bin = argv[2];
  bad_worlds();
  urdf_loops();
  four_bar();
  fivebar();
  return tl_test_finish();
}
