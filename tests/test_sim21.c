/* Guards: src/cli/cli_sim_setup.c, src/cli/cli_sim_run.c, src/cli/cli_sim_scene.c (base placement,
 * --load-state, diverged runs), src/scene/scene_place.c. */
/* Issue 21 (simulate): `talus simulate` and world files place fixed and
 * floating bases, controllers start from a loaded snapshot, a diverged run
 * leaves its files, run as a separate process (popen) like test_cli.
 *
 *   place      --fixed-base without a pose: the lowest collision geometry
 *              1 cm above the ground (talus_quadruped; SHARED talos, whose
 *              mesh legs were 0.35 m+ under the ground and diverged);
 *              --base-pos / --base-rpy put a fixed and a floating base
 *              exactly there; --clearance; bad values refused naming the
 *              option; the options refused for a world file.
 *   world      world files: pos / rpy on a fixed-base system weld it there,
 *              clearance on a fixed base, a bad pos refused with its line.
 *   load       a snapshot saved from a crouched stand is held by the stand
 *              controller after --load-state (it was built from the
 *              default q before the snapshot was restored, and pulled the
 *              legs straight); a mid-trot snapshot keeps trotting forward.
 *   diverged   a diverging run writes --csv, --plot and --record up to the
 *              last finite state, marked as diverged, and the reports name
 *              the step and the first non-finite quantity.
 *
 * Usage: test_sim21 MODE TALUS_BINARY SOURCE_DIR [SHARED_DIR] */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "test_util.h"

static const char *talus_bin, *src_dir, *shared_dir;
static char tmp_dir[] = "/tmp/talus_test_sim21_XXXXXX";

typedef struct run_result {
  int exit_code;
  char *out, *err;
} run_result;

static char *slurp(FILE *f) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) exit(2);
  for (;;) {
    if (n + 4096 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) exit(2);
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  buf[n] = '\0';
  return buf;
}

/* `talus ARGS` (printf format, already shell-quoted). */
static run_result run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static run_result run(const char *fmt, ...) {
  char args[6000], cmd[16384], errp[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(errp, sizeof errp, "%s/stderr.txt", tmp_dir);
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>'%s'", src_dir, talus_bin, args, errp);
  run_result r = {-1, NULL, NULL};
  FILE *p = popen(cmd, "r");
  if (!p) exit(2);
  r.out = slurp(p);
  int st = pclose(p);
  if (st != -1 && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  FILE *e = fopen(errp, "r");
  r.err = e ? slurp(e) : calloc(1, 1);
  if (e) fclose(e);
  printf("talus %s -> exit %d\n", args, r.exit_code);
  return r;
}

static void run_free(run_result *r) {
  free(r->out);
  free(r->err);
}

static const cJSON *jget(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static double jnum(const cJSON *o, const char *k) {
  const cJSON *it = jget(o, k);
  return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}
static double jat(const cJSON *a, int i) {
  const cJSON *it = cJSON_GetArrayItem(a, i);
  return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

/* Run and parse the JSON report; NULL (after a failed check) if it is not one. */
static cJSON *run_json(int want_exit, run_result *r) {
  if (!TL_CHECK(r->exit_code == want_exit, "exit %d, want %d; stderr: %.600s", r->exit_code, want_exit, r->err))
    return NULL;
  cJSON *j = cJSON_Parse(r->out);
  TL_CHECK(j != NULL, "stdout is not JSON: %.300s", r->out);
  return j;
}

/* The report's objects[0] position and quaternion. */
static void object_pose(const cJSON *j, double pos[3], double quat[4]) {
  const cJSON *o = cJSON_GetArrayItem(jget(j, "objects"), 0);
  for (int i = 0; i < 3; i++) pos[i] = jat(jget(o, "position"), i);
  for (int i = 0; i < 4; i++) quat[i] = jat(jget(o, "quaternion"), i);
}

#define QUAD "robots/talus_quadruped/talus_quadruped.urdf"

/* The lowest point of the robot placed by --fixed-base: 1 cm above the ground. talus_quadruped's
 * lowest geoms are its foot spheres: base z = 0.01 + (base origin - foot bottom). Measured from
 * the floating drop, which places the same lowest point at 0.01 m. */
static void check_place_fixed_default(void) {
  run_result a = run("simulate " QUAD " --duration 0 --json");
  run_result b = run("simulate " QUAD " --fixed-base --duration 0.5 --json");
  cJSON *ja = run_json(0, &a), *jb = run_json(0, &b);
  if (ja && jb) {
    double pa[3], pb[3], q[4];
    object_pose(ja, pa, q);
    object_pose(jb, pb, q);
    TL_CHECK(!cJSON_IsTrue(jget(jb, "nan_detected")), "fixed quadruped diverged");
    TL_CHECK(pb[2] > 0.3, "fixed base welded at z = %g: buried (it was 0 before)", pb[2]);
    TL_CHECK_NEAR(pb[2], pa[2], 1e-12, "fixed base z == floating drop z (same lowest point)");
    TL_CHECK(jnum(jb, "max_penetration_m") < 1e-3, "fixed quadruped penetrates %g m", jnum(jb, "max_penetration_m"));
  }
  cJSON_Delete(ja);
  cJSON_Delete(jb);
  run_free(&a);
  run_free(&b);
}

/* Exactly where asked: fixed and floating, position and yaw. */
static void check_place_given(void) {
  const double c = cos(0.25), s = sin(0.25); /* yaw 0.5 rad: quaternion (cos 0.25, 0, 0, sin 0.25) */
  const char *bases[2] = {"--fixed-base --controller none", "--floating-base"};
  for (int k = 0; k < 2; k++) {
    run_result r = run("simulate " QUAD " %s --base-pos 1,-2,3 --base-rpy 0,0,0.5 --duration 0 --json", bases[k]);
    cJSON *j = run_json(0, &r);
    if (j) {
      double p[3], q[4];
      object_pose(j, p, q);
      TL_CHECK_NEAR(p[0], 1, 1e-12, "base x");
      TL_CHECK_NEAR(p[1], -2, 1e-12, "base y");
      TL_CHECK_NEAR(p[2], 3, 1e-12, "base z");
      TL_CHECK_NEAR(q[0], c, 1e-12, "quaternion w");
      TL_CHECK_NEAR(q[3], s, 1e-12, "quaternion z");
      TL_CHECK(fabs(q[1]) < 1e-12 && fabs(q[2]) < 1e-12, "quaternion x y %g %g", q[1], q[2]);
    }
    cJSON_Delete(j);
    run_free(&r);
  }
  /* fixed, held 0.5 s in the air: stays exactly there; --clearance 0.2: lowest point 0.2 m up */
  run_result a = run("simulate " QUAD " --fixed-base --base-pos 0.5,0,2 --duration 0.5 --json");
  run_result b = run("simulate " QUAD " --fixed-base --clearance 0.2 --duration 0 --json");
  run_result d = run("simulate " QUAD " --fixed-base --duration 0 --json");
  cJSON *ja = run_json(0, &a), *jb = run_json(0, &b), *jd = run_json(0, &d);
  if (ja && jb && jd) {
    double p[3], q[4], pd[3];
    object_pose(ja, p, q);
    TL_CHECK(p[0] == 0.5 && p[1] == 0 && p[2] == 2, "fixed base moved to (%g %g %g)", p[0], p[1], p[2]);
    object_pose(jb, p, q);
    object_pose(jd, pd, q);
    TL_CHECK_NEAR(p[2] - pd[2], 0.19, 1e-12, "--clearance 0.2 vs the 0.01 default");
  }
  cJSON_Delete(ja);
  cJSON_Delete(jb);
  cJSON_Delete(jd);
  run_free(&a);
  run_free(&b);
  run_free(&d);
}

static void check_refused(const char *args, int want, const char *must) {
  run_result r = run("simulate %s", args);
  TL_CHECK(r.exit_code == want, "exit %d, want %d", r.exit_code, want);
  TL_CHECK(strstr(r.err, must) != NULL, "stderr does not name '%s': %s", must, r.err);
  run_free(&r);
}

static void check_place_bad(void) {
  check_refused(QUAD " --base-pos 1,2 --duration 0", 2, "--base-pos: expected 3 numbers");
  check_refused(QUAD " --base-rpy 0,x,0 --duration 0", 2, "--base-rpy: item 2 ('x') is not a finite decimal number");
  check_refused(QUAD " --base-pos 1,2,nan --duration 0", 2, "--base-pos");
  check_refused(QUAD " --clearance -1 --duration 0", 2, "--clearance: must be >= 0");
  check_refused("robots/worlds/boxes_and_balls.xml --base-pos 0,0,1 --duration 0", 2,
                "option --base-pos does not apply to a world file");
  check_refused(QUAD " --q 0,0,0.5,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 --base-pos 0,0,1 --duration 0", 2,
                "--base-pos and --base-rpy must not be given too");
}

/* SHARED talos: a fixed-base humanoid whose legs were under the ground (penetration 1.09 m,
 * diverged at step 1) is held above it and does not diverge. */
static void check_place_humanoid(void) {
  char urdf[4096];
  snprintf(urdf, sizeof urdf, "%s/robots/talos/robots/talos_full_v2.urdf", shared_dir ? shared_dir : "");
  if (!shared_dir || access(urdf, R_OK) != 0) {
    tl_test_skip("the shared corpus (%s) is absent: the fixed-base humanoid case", urdf);
    return;
  }
  run_result r = run("simulate '%s' --fixed-base --duration 1 --json", urdf);
  cJSON *j = run_json(0, &r);
  if (j) {
    TL_CHECK(cJSON_IsFalse(jget(j, "nan_detected")), "fixed talos diverged");
    TL_CHECK(jnum(j, "max_penetration_m") < 0.001, "fixed talos penetrates %g m", jnum(j, "max_penetration_m"));
    TL_CHECK(jnum(jget(j, "base_height"), "final") > 1.0, "fixed talos welded at z = %g",
             jnum(jget(j, "base_height"), "final"));
  }
  cJSON_Delete(j);
  run_free(&r);
}

/* ------------------------------------------------------------ world files */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) exit(2);
  fputs(text, f);
  fclose(f);
}

static void check_world(void) {
  char w1[4200], w2[4200], w3[4200], text[2000];
  snprintf(w1, sizeof w1, "%s/fixed_pose.xml", tmp_dir);
  snprintf(w2, sizeof w2, "%s/fixed_clearance.xml", tmp_dir);
  snprintf(w3, sizeof w3, "%s/fixed_bad.xml", tmp_dir);
  snprintf(text, sizeof text,
           "<talus_world>\n  <ground/>\n  <system urdf=\"%s/" QUAD "\" base=\"fixed\"\n"
           "          pos=\"1 2 3\" rpy=\"0 0 0.5\" controller=\"stand\"/>\n</talus_world>\n", src_dir);
  write_file(w1, text);
  snprintf(text, sizeof text,
           "<talus_world>\n  <ground/>\n  <static type=\"box\" size=\"4 4 0.2\" pos=\"0 0 0.1\"/>\n"
           "  <system urdf=\"%s/" QUAD "\" base=\"fixed\" pos=\"0 0 5\" clearance=\"0.05\"/>\n</talus_world>\n",
           src_dir);
  write_file(w2, text);
  snprintf(text, sizeof text,
           "<talus_world>\n  <ground/>\n\n  <system urdf=\"%s/" QUAD "\" base=\"fixed\" rpy=\"0 0\"/>\n</talus_world>\n",
           src_dir);
  write_file(w3, text);
  run_result a = run("simulate '%s' --duration 0.5 --json", w1);
  run_result b = run("simulate '%s' --duration 0 --json", w2);
  run_result d = run("simulate " QUAD " --fixed-base --clearance 0.25 --duration 0 --json");
  cJSON *ja = run_json(0, &a), *jb = run_json(0, &b), *jd = run_json(0, &d);
  if (ja && jb && jd) {
    double p[3], q[4], pd[3];
    object_pose(ja, p, q);
    TL_CHECK(p[0] == 1 && p[1] == 2 && p[2] == 3, "world: fixed base at (%g %g %g), want (1 2 3)", p[0], p[1], p[2]);
    TL_CHECK_NEAR(q[0], cos(0.25), 1e-12, "world: fixed base quaternion w");
    TL_CHECK_NEAR(q[3], sin(0.25), 1e-12, "world: fixed base quaternion z");
    TL_CHECK(cJSON_IsFalse(jget(ja, "nan_detected")), "world: fixed base run diverged");
    object_pose(jb, p, q);
    object_pose(jd, pd, q);
    /* on the 0.2 m box with clearance 0.05: the same height as 0.25 above the ground */
    TL_CHECK_NEAR(p[2], pd[2], 1e-12, "world: fixed base clearance 0.05 over a 0.2 m box");
  }
  cJSON_Delete(ja);
  cJSON_Delete(jb);
  cJSON_Delete(jd);
  run_free(&a);
  run_free(&b);
  run_free(&d);
  run_result r = run("simulate '%s' --duration 0", w3);
  TL_CHECK(r.exit_code == 1, "bad rpy: exit %d", r.exit_code);
  TL_CHECK(strstr(r.err, "fixed_bad.xml:4: <system>: attribute rpy=\"0 0\": expected 3 numbers") != NULL,
           "bad rpy: message without file and line: %s", r.err);
  run_free(&r);
}

/* ------------------------------------------------------------ load */

#define CROUCH "0,0.4,-0.8,0,0.4,-0.8,0,-0.4,0.8,0,-0.4,0.8"

static void check_load(void) {
  char snap[4200], snap2[4200];
  snprintf(snap, sizeof snap, "%s/crouch.bin", tmp_dir);
  snprintf(snap2, sizeof snap2, "%s/trot.bin", tmp_dir);
  /* stand holds what it is started from: after --load-state, the snapshot's crouch */
  run_result a = run("simulate " QUAD " --q " CROUCH " --duration 1 --save-state '%s' --json", snap);
  run_result b = run("simulate " QUAD " --load-state '%s' --duration 1 --json", snap);
  cJSON *ja = run_json(0, &a), *jb = run_json(0, &b);
  if (ja && jb) {
    const cJSON *ga = jget(ja, "final_gc"), *gb = jget(jb, "final_gc");
    double worst = 0;
    for (int i = 7; i < 19; i++) worst = fmax(worst, fabs(jat(ga, i) - jat(gb, i)));
    /* the stand sags a little more under the load (0.058 rad); before, the legs went straight (0.8 rad) */
    TL_CHECK(worst < 0.1, "stand after --load-state: joints moved %.3g rad from the snapshot's (pulled to the "
             "default q the controller was built from)", worst);
  }
  cJSON_Delete(ja);
  cJSON_Delete(jb);
  run_free(&a);
  run_free(&b);
  /* mid-trot snapshot: trotting goes on forward */
  run_result c = run("simulate " QUAD " --controller trot --duration 2 --save-state '%s' --json", snap2);
  run_result d = run("simulate " QUAD " --controller trot --load-state '%s' --duration 3 --json", snap2);
  cJSON *jc = run_json(0, &c), *jd = run_json(0, &d);
  if (jc && jd) {
    double x0 = jat(jget(jc, "final_gc"), 0), x1 = jat(jget(jd, "final_gc"), 0);
    TL_CHECK(x1 - x0 > 0.8, "trot after --load-state: base x %g -> %g (want > +0.8 m in 3 s)", x0, x1);
    TL_CHECK(jnum(jget(jd, "base_height"), "min") > 0.4, "trot after --load-state fell (base z min %g)",
             jnum(jget(jd, "base_height"), "min"));
  }
  cJSON_Delete(jc);
  cJSON_Delete(jd);
  run_free(&c);
  run_free(&d);
}

/* ------------------------------------------------------------ diverged */

static const char *SLIDER_URDF =
    "<robot name=\"slider\">\n"
    "  <link name=\"base\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" "
    "ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <link name=\"block\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" "
    "ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"lift\" type=\"prismatic\"><parent link=\"base\"/><child link=\"block\"/><axis xyz=\"0 0 1\"/>\n"
    "    <limit lower=\"-1e30\" upper=\"1e30\" effort=\"1e30\" velocity=\"1e30\"/></joint>\n"
    "</robot>\n";

/* 1 if the file exists and is not empty. */
static int nonempty(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && st.st_size > 0;
}

/* A slider thrown up at 9.6e9 m/s under a gravity of 1e11 m/s^2 pointing up: its velocity passes
 * 1e10 (CLI_SIM_DIVERGE_LIMIT) in step 5. Before, the run went on (or stopped later at a
 * non-finite state) and nothing said where it went wrong. */
static void check_diverged_limit(void) {
  char urdf[4200], world[4200], csv[4200], png[4200], html[4200], text[1000];
  snprintf(urdf, sizeof urdf, "%s/slider.urdf", tmp_dir);
  snprintf(world, sizeof world, "%s/slider.xml", tmp_dir);
  snprintf(csv, sizeof csv, "%s/slider.csv", tmp_dir);
  snprintf(png, sizeof png, "%s/slider.png", tmp_dir);
  snprintf(html, sizeof html, "%s/slider.html", tmp_dir);
  write_file(urdf, SLIDER_URDF);
  snprintf(text, sizeof text,
           "<talus_world>\n  <gravity xyz=\"0 0 1e11\"/>\n"
           "  <system name=\"slider\" urdf=\"slider.urdf\" base=\"fixed\" u=\"9.6e9\"/>\n</talus_world>\n");
  write_file(world, text);
  run_result r = run("simulate '%s' --duration 1 --fps 1000 --csv '%s' --json", world, csv);
  cJSON *j = run_json(3, &r); /* CLI_EXIT_DIVERGED */
  const char *want = "u[0] (joint lift velocity) = 1.01e+10, beyond 1e+10";
  if (j) {
    const cJSON *d = jget(j, "diverged");
    TL_CHECK(cJSON_IsObject(d), "JSON has no diverged object");
    TL_CHECK(jnum(d, "step") == 5, "diverged.step %g, want 5", jnum(d, "step"));
    TL_CHECK_NEAR(jnum(d, "time_s"), 0.004, 1e-12, "diverged.time_s");
    const cJSON *msg = jget(d, "message");
    TL_CHECK(cJSON_IsString(msg) && strstr(msg->valuestring, want), "diverged.message does not name %s", want);
    TL_CHECK(cJSON_IsTrue(jget(j, "nan_detected")), "nan_detected not true");
    double q = jat(jget(j, "final_gc"), 0);
    TL_CHECK(q == 3.94e7, "final_gc %.17g: want the last state within the limit, 3.94e7", q);
  }
  TL_CHECK(strstr(r.err, "diverged at step 5 (t = 0.004 s)") && strstr(r.err, want), "stderr: %s", r.err);
  cJSON_Delete(j);
  run_free(&r);
  char *c = tl_test_read_text(csv, NULL);
  if (TL_CHECK(c != NULL, "--csv %s not written", csv)) {
    int rows = 0;
    for (char *p = c; *p; ++p) rows += *p == '\n';
    TL_CHECK(rows == 7, "CSV has %d lines: want header + frames t = 0 .. 0.004 + the mark", rows);
    TL_CHECK(strstr(c, "\n0.00400000019,") != NULL, "CSV does not end at t = 0.004: %s", c);
    TL_CHECK(strstr(c, "\n# diverged: diverged at step 5, t = 0.004 s:") && strstr(c, want),
             "CSV not marked diverged: %s", c);
  }
  free(c);
  /* the text report, a plot and a recording (when this build / machine can make them) */
  r = run("simulate '%s' --duration 1 --fps 1000 --plot '%s' --record '%s'", world, png, html);
  if (strstr(r.err, "matplotlib") || strstr(r.err, "without the web viewer")) {
    tl_test_skip("--plot / --record unavailable here: %s", r.err);
  } else {
    TL_CHECK(r.exit_code == 3, "exit %d", r.exit_code);
    TL_CHECK(strstr(r.out, "diverged       at step 5 (t = 0.004 s): ") && strstr(r.out, want),
             "text report: %s", r.out);
    TL_CHECK(strstr(r.out, "last finite q  [3.94e+07]") != NULL, "text report q: %s", r.out);
    TL_CHECK(nonempty(png), "--plot not written");
    char *h = tl_test_read_text(html, NULL);
    TL_CHECK(h && strstr(h, "\"diverged\":\"diverged at step 5, t = 0.004 s: system 0 ('slider'): u[0] (joint "
                           "lift velocity) = 1.01e+10, beyond 1e+10"),
             "--record not marked diverged");
    free(h);
  }
  run_free(&r);
}

/* SHARED talos welded with its legs in the ground: the solve goes non-finite in step 1 (the
 * world's TL_ERR_DIVERGED, state restored): the message names the first non-finite quantity. */
static void check_diverged_world(void) {
  char urdf[4096], csv[4200];
  snprintf(urdf, sizeof urdf, "%s/robots/talos/robots/talos_full_v2.urdf", shared_dir ? shared_dir : "");
  snprintf(csv, sizeof csv, "%s/talos.csv", tmp_dir);
  if (!shared_dir || access(urdf, R_OK) != 0) {
    tl_test_skip("the shared corpus (%s) is absent: the world's divergence case", urdf);
    return;
  }
  run_result r = run("simulate '%s' --fixed-base --base-pos 0,0,0 --duration 0.1 --csv '%s' --json", urdf, csv);
  cJSON *j = run_json(3, &r);
  if (j) {
    const cJSON *msg = jget(jget(j, "diverged"), "message");
    TL_CHECK(cJSON_IsString(msg) && strstr(msg->valuestring, "u[0] (joint torso_1_joint velocity) became non-finite"),
             "diverged.message does not name the quantity: %s", cJSON_IsString(msg) ? msg->valuestring : "-");
  }
  cJSON_Delete(j);
  run_free(&r);
  char *c = tl_test_read_text(csv, NULL);
  TL_CHECK(c && strstr(c, "\n# diverged: diverged at step 1, t = 0 s:"), "talos CSV missing or not marked");
  free(c);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_sim21 MODE TALUS_BINARY SOURCE_DIR [SHARED_DIR]\n");
    return 2;
  }
  const char *mode = argv[1];
  talus_bin = argv[2];
  src_dir = argv[3];
  shared_dir = tl_test_shared_dir(argc, argv, 4);
  if (!mkdtemp(tmp_dir)) return 2;
  if (strcmp(mode, "place") == 0) {
    check_place_fixed_default();
    check_place_given();
    check_place_bad();
    check_place_humanoid();
  } else if (strcmp(mode, "world") == 0) {
    check_world();
  } else if (strcmp(mode, "load") == 0) {
    check_load();
  } else if (strcmp(mode, "diverged") == 0) {
    check_diverged_limit();
    check_diverged_world();
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  if (system(cmd) != 0) printf("note: could not remove %s\n", tmp_dir);
  return tl_test_finish();
}
