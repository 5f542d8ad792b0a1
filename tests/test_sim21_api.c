/* Guards: src/world/system_query.c (frames by link name, contact wrenches), src/world/system.c
 * (NULL as zero), controllers/osc.c (default end-effector frame). */
/* Issue 21 (simulate), section 5, in C: the controller developer's paper cuts.
 *
 *   frames     a URDF link name finds the frame of the joint whose child it is
 *              (tl_model_frame_index, tl_system_frame_index); an unknown name is
 *              TL_ERR_ARGUMENT naming it.
 *   nullzero   NULL means zero for optional vectors: tl_system_set_state's u,
 *              tl_system_set_pd_targets' u_target, tl_system_set_generalized_force.
 *   wrench     tl_system_body_contact_wrench / tl_system_frame_contact_wrench:
 *              a box resting on the ground carries its weight (m g, 0.1 %), its
 *              contact torque about its centre of mass is ~0, moving the point
 *              by d changes the torque by -d x F; a standing quadruped's bodies
 *              carry its weight (1 %), all of it on its four feet.
 *   osc        osc's default frame is the end effector: an arm with a
 *              two-finger gripper (written here) controls its hand, not a
 *              finger; the report names it.
 *
 * Usage: test_sim21_api MODE ROBOTS_DIR */
#define _DEFAULT_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A world with the ground and one system of `m` at q (u zero). */
static tl_world *world_with(const tl_model *m, tl_system **sys, const double *q) {
  tl_world *w = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_world_create(&w, &err) || tl_world_add_ground(w, 0.0, 0.8, &err) || tl_world_add_system(w, m, sys, &err) ||
      tl_system_set_state(*sys, q, tl_system_nq(*sys), NULL, 0, &err)) {
    printf("world: %s\n", err.message);
    exit(1);
  }
  return w;
}

#define QUAD "talus_quadruped/talus_quadruped.urdf"

static void check_frames(void) {
  tl_model *m = load(QUAD, TL_BASE_AUTO);
  int by_joint = tl_model_frame_index(m, "LF_shank_to_foot"), by_link = tl_model_frame_index(m, "LF_FOOT");
  TL_CHECK(by_joint >= 0 && by_link == by_joint, "link LF_FOOT -> frame %d, joint LF_shank_to_foot -> %d", by_link,
           by_joint);
  TL_CHECK(tl_model_frame_index(m, "LF_SHANK") == tl_model_frame_index(m, "LF_KFE"), "link LF_SHANK != joint LF_KFE");
  double q[19];
  tl_model_default_q(m, q, 19, NULL);
  q[2] = 0.6;
  tl_system *s;
  tl_world *w = world_with(m, &s, q);
  tl_error err;
  memset(&err, 0, sizeof err);
  int f = -2;
  TL_CHECK(tl_system_frame_index(s, "RH_FOOT", &f, &err) == TL_OK && f == tl_model_frame_index(m, "RH_shank_to_foot"),
           "tl_system_frame_index(RH_FOOT) = %d", f);
  tl_status st = tl_system_frame_index(s, "RH_TOE", &f, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && f == -1 && strstr(err.message, "no frame or link named 'RH_TOE'"),
           "unknown frame: status %d, message '%s'", st, err.message);
  tl_world_free(w);
  tl_model_free(m);
}

static void check_nullzero(void) {
  tl_model *m = load(QUAD, TL_BASE_AUTO);
  double q[19], u[18], ut[18], tau[18];
  tl_model_default_q(m, q, 19, NULL);
  q[2] = 0.6;
  tl_system *s;
  tl_world *w = world_with(m, &s, q);
  tl_error err;
  memset(&err, 0, sizeof err);
  for (int i = 0; i < 18; i++) u[i] = 0.5;
  tl_system_set_state(s, q, 19, u, 18, NULL);
  TL_CHECK(tl_system_set_state(s, q, 19, NULL, 0, &err) == TL_OK, "set_state(u NULL): %s", err.message);
  tl_system_get_state(s, NULL, 0, u, 18, NULL);
  double un = 0;
  for (int i = 0; i < 18; i++) un += fabs(u[i]);
  TL_CHECK(un == 0, "set_state(u NULL) left |u| = %g", un);
  tl_system_set_pd_targets(s, q, 19, u, 18, NULL);
  for (int i = 0; i < 18; i++) ut[i] = 1.0;
  tl_system_set_pd_targets(s, q, 19, ut, 18, NULL);
  TL_CHECK(tl_system_set_pd_targets(s, q, 19, NULL, 0, &err) == TL_OK, "set_pd_targets(u NULL): %s", err.message);
  tl_system_get_pd_targets(s, NULL, 0, ut, 18, NULL);
  un = 0;
  for (int i = 0; i < 18; i++) un += fabs(ut[i]);
  TL_CHECK(un == 0, "set_pd_targets(u_target NULL) left |u_target| = %g", un);
  /* feedforward: set, then NULL; with zero gains the applied force is then zero */
  for (int i = 0; i < 18; i++) tau[i] = 3.0;
  tl_system_set_generalized_force(s, tau, 18, NULL);
  TL_CHECK(tl_system_set_generalized_force(s, NULL, 0, &err) == TL_OK, "set_generalized_force(NULL): %s", err.message);
  tl_world_step(w, NULL);
  tl_system_applied_generalized_force(s, tau, 18, NULL);
  un = 0;
  for (int i = 0; i < 18; i++) un += fabs(tau[i]);
  TL_CHECK(un == 0, "set_generalized_force(NULL): applied |tau| = %g", un);
  /* a non-NULL vector of the wrong length is still refused */
  TL_CHECK(tl_system_set_pd_targets(s, q, 19, ut, 17, &err) == TL_ERR_ARGUMENT, "u_target of length 17 accepted");
  tl_world_free(w);
  tl_model_free(m);
}

static void cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

static void check_wrench_box(void) {
  tl_model *m = load("box/box.urdf", TL_BASE_AUTO);
  double q[7] = {0, 0, 0.3, 1, 0, 0, 0};
  tl_system *s;
  tl_world *w = world_with(m, &s, q);
  for (int k = 0; k < 2000; k++) tl_world_step(w, NULL);
  double g = 9.81, weight = tl_model_total_mass(m) * g, f[3], t[3], com[3], fc[3], tc[3], p1[3], R[9];
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_system_body_contact_wrench(s, 0, NULL, f, t, &err) == TL_OK, "wrench: %s", err.message);
  TL_CHECK_NEAR(f[2], weight, 1e-3 * weight, "box: contact force z = m g");
  TL_CHECK(hypot(f[0], f[1]) < 1e-6 * weight, "box: horizontal contact force %g %g", f[0], f[1]);
  tl_system_com(s, com, NULL);
  tl_system_body_contact_wrench(s, 0, com, fc, tc, NULL);
  TL_CHECK(sqrt(tc[0] * tc[0] + tc[1] * tc[1] + tc[2] * tc[2]) < 1e-4 * weight,
           "box: contact torque about the COM %g %g %g (at rest: ~0)", tc[0], tc[1], tc[2]);
  /* t(p2) = t(p1) + (p1 - p2) x F */
  tl_system_body_pose(s, 0, p1, R, NULL);
  double p2[3] = {p1[0] + 0.3, p1[1] - 0.2, p1[2] + 0.1}, d[3], dxf[3], f2[3], t2[3];
  for (int i = 0; i < 3; i++) d[i] = p1[i] - p2[i];
  cross(d, f, dxf);
  tl_system_body_contact_wrench(s, 0, p2, f2, t2, NULL);
  for (int i = 0; i < 3; i++) TL_CHECK_NEAR(t2[i], t[i] + dxf[i], 1e-9 * weight, "box: torque moved to p2");
  /* per frame: about the frame origin */
  double ff[3], tf[3], pf[3], tp[3];
  TL_CHECK(tl_system_frame_contact_wrench(s, 0, ff, tf, &err) == TL_OK, "frame wrench: %s", err.message);
  tl_system_frame_pose(s, 0, pf, NULL, NULL);
  tl_system_body_contact_wrench(s, tl_model_frame_body(m, 0), pf, NULL, tp, NULL);
  TL_CHECK(memcmp(tf, tp, sizeof tf) == 0 && memcmp(ff, f, sizeof ff) == 0, "frame wrench != body wrench at the frame");
  TL_CHECK(tl_system_body_contact_wrench(s, 5, NULL, f, t, &err) == TL_ERR_ARGUMENT, "body 5 of a box accepted");
  tl_world_free(w);
  tl_model_free(m);
}

static void check_wrench_quadruped(void) {
  tl_model *m = load(QUAD, TL_BASE_AUTO);
  double q[19], kp[18] = {0}, kd[18] = {0};
  tl_model_default_q(m, q, 19, NULL);
  q[2] = 0.6;
  tl_system *s;
  tl_world *w = world_with(m, &s, q);
  for (int i = 6; i < 18; i++) kp[i] = 300, kd[i] = 10;
  tl_system_set_pd_gains(s, kp, kd, 18, NULL);
  tl_system_set_pd_targets(s, q, 19, NULL, 0, NULL);
  for (int k = 0; k < 1500; k++) tl_world_step(w, NULL);
  double total[3] = {0, 0, 0}, feet[3] = {0, 0, 0}, f[3], t[3];
  for (int b = 0; b < tl_model_nbody(m); b++) {
    tl_system_body_contact_wrench(s, b, NULL, f, t, NULL);
    for (int i = 0; i < 3; i++) total[i] += f[i];
  }
  const char *names[4] = {"LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"};
  for (int k = 0; k < 4; k++) {
    int fr = -1;
    tl_system_frame_index(s, names[k], &fr, NULL);
    TL_CHECK(tl_system_frame_contact_wrench(s, fr, f, t, NULL) == TL_OK, "foot %s", names[k]);
    for (int i = 0; i < 3; i++) feet[i] += f[i];
  }
  double weight = tl_model_total_mass(m) * 9.81;
  TL_CHECK_NEAR(total[2], weight, 0.01 * weight, "quadruped: sum of body contact forces z = m g");
  TL_CHECK_NEAR(feet[2], total[2], 1e-9 * weight, "quadruped: all of it on the feet");
  printf("quadruped standing: contact force %.6g N (weight %.6g N), feet %.6g N\n", total[2], weight, feet[2]);
  tl_world_free(w);
  tl_model_free(m);
}

/* An arm of three links and a hand with two prismatic fingers; the fingers come last depth-first. */
static const char *GRIPPER_ARM =
    "<robot name=\"gripper_arm\">\n"
    "  <link name=\"world\"/>\n"
    "  <link name=\"base\"><inertial><mass value=\"2\"/><inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" "
    "ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"fix\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/></joint>\n"
    "%s"
    "</robot>\n";

static void link_joint(char *buf, size_t n, const char *parent, const char *child, const char *type, const char *xyz,
                       const char *axis) {
  size_t len = strlen(buf);
  snprintf(buf + len, n - len,
           "  <link name=\"%s\"><inertial><mass value=\"0.5\"/><inertia ixx=\"0.005\" iyy=\"0.005\" izz=\"0.005\" "
           "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
           "  <joint name=\"%s_joint\" type=\"%s\"><parent link=\"%s\"/><child link=\"%s\"/><origin xyz=\"%s\"/>"
           "<axis xyz=\"%s\"/><limit lower=\"-0.04\" upper=\"2\" effort=\"100\" velocity=\"5\"/></joint>\n",
           child, child, type, parent, child, xyz, axis);
}

static void check_osc_default(const char *talus_bin) {
  char body[6000] = "", text[8000], path[] = "/tmp/talus_test_sim21_arm_XXXXXX.urdf";
  link_joint(body, sizeof body, "base", "link1", "revolute", "0 0 0.3", "0 0 1");
  link_joint(body, sizeof body, "link1", "link2", "revolute", "0 0 0.3", "0 1 0");
  link_joint(body, sizeof body, "link2", "hand", "revolute", "0 0 0.3", "0 1 0");
  link_joint(body, sizeof body, "hand", "left_finger", "prismatic", "0 0.02 0.05", "0 1 0");
  link_joint(body, sizeof body, "hand", "right_finger", "prismatic", "0 -0.02 0.05", "0 -1 0");
  snprintf(text, sizeof text, GRIPPER_ARM, body);
  int fd = mkstemps(path, 5);
  if (!TL_CHECK(fd >= 0, "mkstemps")) return;
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  tl_load_options o = tl_load_options_default();
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf(path, &o, &m, &err) == TL_OK, "gripper arm: %s", err.message)) return;
  int fr = tl_controller_default_ee_frame(m);
  const char *name = tl_model_frame_name(m, fr);
  TL_CHECK(name && strcmp(name, "hand_joint") == 0, "osc default frame '%s', want the hand's (hand_joint), not a finger",
           name ? name : "?");
  tl_model_free(m);
  /* a serial arm without fingers keeps its last link (the double pendulum: joint2) */
  m = load("double_pendulum/double_pendulum.urdf", TL_BASE_FIXED);
  fr = tl_controller_default_ee_frame(m);
  TL_CHECK(fr == tl_model_nframe(m) - 1, "double pendulum: default frame %d", fr);
  tl_model_free(m);
  /* printed: text report and --json osc_frame */
  if (talus_bin) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "'%s' simulate '%s' --controller osc --duration 0.2 --json", talus_bin, path);
    FILE *p = popen(cmd, "r");
    char out[20000] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    if (p) pclose(p);
    TL_CHECK(strstr(out, "\"osc_frame\":\t\"hand_joint\"") != NULL, "--json has no osc_frame hand_joint: %.400s", out);
  }
  unlink(path);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_sim21_api MODE ROBOTS_DIR [TALUS_BINARY]\n");
    return 2;
  }
  robots = argv[2];
  const char *mode = argv[1];
  if (strcmp(mode, "frames") == 0) {
    check_frames();
  } else if (strcmp(mode, "nullzero") == 0) {
    check_nullzero();
  } else if (strcmp(mode, "wrench") == 0) {
    check_wrench_box();
    check_wrench_quadruped();
  } else if (strcmp(mode, "osc") == 0) {
    check_osc_default(argc > 3 ? argv[3] : NULL);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  return tl_test_finish();
}
