/* Guards: src/model/model.c (tl_model_default_q), src/native/step.c and src/contact/constraint_rows.c (PD
 * targets clamped, velocity-limit rows), src/scene/scene_load.c (limits from world files). */
/* Joint limits respected from the first step (issue 11). Public API only.
 *
 *   default  - tl_model_default_q: every limited scalar coordinate (revolute,
 *              prismatic, universal, planar) is 0 clamped into
 *              [lower + 0.05 r, upper - 0.05 r] (r = upper - lower), unlimited
 *              ones stay 0, quaternions identity; a <mimic> follower takes
 *              mult * leader + offset of its clamped leader; a system added to a
 *              world starts there; tl_model_default_q refuses a wrong length.
 *              Robots: robots/talus_small_quadruped (calf [-2.8, -0.9] ->
 *              -0.995) and a URDF string with prismatic, revolute, universal
 *              and mimic joints.
 *   pd       - a PD target outside the position limits is used at the nearer
 *              limit: a hinge with limits [-0.5, 0.5] and target 2.0 (kp 1000,
 *              kd 10, no gravity) comes to rest on the limit with an applied PD
 *              force below 1e-6 N m (the unclamped target would apply
 *              kp * 1.5 = 1500 N m against the limit row); the same hinge with
 *              the target at 0.3 comes to rest at 0.3.
 *   velocity - URDF <limit velocity="1">: a hinge driven by a constant 50 N m
 *              (no position limits): with tl_world_set_velocity_limits on, |u|
 *              <= 1 + 1e-9 at every step and it reaches 1 within 0.1 s, in
 *              both directions; off (the default), it passes 5 rad/s. A world
 *              file with <solver velocity_limits="true"> turns it on, and a bad
 *              value is refused naming the attribute. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/scene.h"
#include "talus/talus.h"
#include "test_util.h"

#define MARGIN TL_DEFAULT_Q_MARGIN

static tl_model *load(const char *path_or_text, tl_base_type base) {
  tl_load_options o = tl_load_options_default();
  o.base = base;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf_any(path_or_text, &o, &m, &err) == TL_OK, "load: %s", err.message))
    return NULL;
  return m;
}

/* The expected default of one scalar coordinate with limits [lo, hi]. */
static double expected_default(double lo, double hi) {
  if (!(isfinite(lo) && isfinite(hi) && lo < hi)) return 0.0;
  return fmin(fmax(0.0, lo + MARGIN * (hi - lo)), hi - MARGIN * (hi - lo));
}

/* Check every scalar coordinate of q against the rule, except mimic followers. */
static void check_rule(const tl_model *m, const double *q, const char *label) {
  for (int b = 1; b < tl_model_nbody(m); b++) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t == TL_JOINT_SPHERICAL || t == TL_JOINT_FLOATING) continue;
    for (int i = 0; i < tl_joint_nv(t); i++) {
      int k = tl_model_joint_u_index(m, b) + i, qi = tl_model_joint_q_index(m, b) + i;
      double lo, hi;
      tl_model_dof_limits(m, k, &lo, &hi, NULL);
      int followed = -1;
      tl_model_dof_mimic(m, k, &followed, NULL, NULL, NULL);
      if (followed >= 0) continue;
      double want = expected_default(lo, hi);
      TL_CHECK(q[qi] == want, "%s: joint %s coordinate %d: default %.17g, want %.17g (limits [%g, %g])",
               label, tl_model_joint_name(m, b), i, q[qi], want, lo, hi);
      if (isfinite(lo) && isfinite(hi))
        TL_CHECK(q[qi] > lo && q[qi] < hi, "%s: joint %s: default %g not strictly inside [%g, %g]", label,
                 tl_model_joint_name(m, b), q[qi], lo, hi);
    }
  }
}

/* The default q of m, the state of a fresh system equal to it, bit for bit. */
static void check_model(tl_model *m, const char *label, double *q) {
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_model_default_q(m, q, nq, &err) == TL_OK, "%s: default_q: %s", label, err.message);
  check_rule(m, q, label);
  tl_world *w = NULL;
  tl_system *s = NULL;
  double *q1 = calloc((size_t)nq, sizeof(double)), *u1 = calloc((size_t)nv + 1, sizeof(double));
  if (tl_world_create(&w, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK &&
      tl_system_get_state(s, q1, nq, u1, nv, &err) == TL_OK)
    TL_CHECK(memcmp(q, q1, (size_t)nq * sizeof(double)) == 0, "%s: a new system does not start at the default q",
             label);
  else
    TL_CHECK(0, "%s: world: %s", label, err.message);
  TL_CHECK(tl_model_default_q(m, q, nq + 1, &err) == TL_ERR_ARGUMENT && strstr(err.message, "length"),
           "%s: a wrong length is not refused: %s", label, err.message);
  free(q1);
  free(u1);
  tl_world_free(w);
}

/* prismatic [0.1, 0.3] (0 -> 0.11), revolute [-1, 1] (0 stays), a mimic
 * follower 2 * leader + 0.1 of a leader [0.5, 1.5] (-> 0.55, follower 1.2), a
 * universal joint with a <limit> (each DOF checked against the model's limits
 * by check_rule). */
static const char joints_urdf[] =
    "<robot name='limits'>"
    " <link name='base'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='slide' type='prismatic'><parent link='base'/><child link='a'/><axis xyz='1 0 0'/>"
    "  <limit lower='0.1' upper='0.3' effort='10' velocity='1'/></joint>"
    " <link name='a'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='hinge' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
    "  <limit lower='-1' upper='1' effort='10' velocity='1'/></joint>"
    " <link name='b'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='leader' type='revolute'><parent link='b'/><child link='c'/><axis xyz='0 1 0'/>"
    "  <limit lower='0.5' upper='1.5' effort='10' velocity='1'/></joint>"
    " <link name='c'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='follower' type='revolute'><parent link='c'/><child link='d'/><axis xyz='0 1 0'/>"
    "  <limit lower='-3' upper='3' effort='10' velocity='1'/><mimic joint='leader' multiplier='2' offset='0.1'/></joint>"
    " <link name='d'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='uj' type='universal'><parent link='d'/><child link='e'/><axis xyz='1 0 0'/><axis2 xyz='0 1 0'/>"
    "  <limit lower='0.2' upper='1.2' effort='10' velocity='1'/></joint>"
    " <link name='e'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

static void check_default(const char *robots) {
  char path[4096];
  double q[64];
  snprintf(path, sizeof path, "%s/talus_small_quadruped/talus_small_quadruped.urdf", robots);
  tl_model *m = load(path, TL_BASE_AUTO);
  if (m) {
    check_model(m, "talus_small_quadruped", q);
    int calf = tl_model_body_index(m, "FL_calf");
    if (TL_CHECK(calf > 0, "no link FL_calf"))
      TL_CHECK(fabs(q[tl_model_joint_q_index(m, calf)] - (-0.995)) < 1e-15, "FL calf default %.17g, want -0.995",
               q[tl_model_joint_q_index(m, calf)]);
    TL_CHECK(q[3] == 1 && q[4] == 0 && q[5] == 0 && q[6] == 0, "base quaternion not identity");
    printf("talus_small_quadruped: calf default %.6g rad (limits [-2.8, -0.9])\n", q[tl_model_joint_q_index(m, calf)]);
    tl_model_free(m);
  }
  m = load(joints_urdf, TL_BASE_FIXED);
  if (!m) return;
  check_model(m, "joints", q);
  int bl = tl_model_body_index(m, "c"), bf = tl_model_body_index(m, "d"), bs = tl_model_body_index(m, "a");
  double lead = q[tl_model_joint_q_index(m, bl)], fol = q[tl_model_joint_q_index(m, bf)];
  TL_CHECK(lead == 0.55, "mimic leader default %.17g, want 0.55", lead);
  TL_CHECK(fol == 2 * lead + 0.1, "mimic follower default %.17g, want 2 * %.17g + 0.1", fol, lead);
  TL_CHECK(fabs(q[tl_model_joint_q_index(m, bs)] - 0.11) < 1e-15, "prismatic default %.17g, want 0.11",
           q[tl_model_joint_q_index(m, bs)]);
  printf("joints: prismatic %.6g, leader %.6g, follower %.6g\n", q[tl_model_joint_q_index(m, bs)], lead, fol);
  tl_model_free(m);
}

/* ---------------------------------------------------------------- pd */

static const char hinge_urdf[] =
    "<robot name='hinge'><link name='base'/>"
    " <joint name='hinge' type='revolute'><parent link='base'/><child link='arm'/><axis xyz='0 0 1'/>"
    "  <limit lower='-0.5' upper='0.5' effort='1e6' velocity='%s'/></joint>"
    " <link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>"
    "  <inertia ixx='0.01' iyy='0.05' izz='0.05' ixy='0' ixz='0' iyz='0'/></inertial></link></robot>";

/* A world with one hinge (no gravity); velocity: the URDF's velocity limit. */
static tl_world *hinge_world(const char *velocity, tl_system **s) {
  char text[1024];
  snprintf(text, sizeof text, hinge_urdf, velocity);
  tl_model *m = load(text, TL_BASE_FIXED);
  tl_world *w = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  const double g[3] = {0, 0, 0};
  int ok = m && tl_world_create(&w, &err) == TL_OK && tl_world_set_gravity(w, g, &err) == TL_OK &&
           tl_world_add_system(w, m, s, &err) == TL_OK;
  tl_model_free(m);
  if (!TL_CHECK(ok, "hinge world: %s", err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* Hold target qt with kp 1000, kd 10 for 2 s; final q and applied force. */
static void hold(double qt, double *q_end, double *tau_end) {
  tl_system *s = NULL;
  tl_world *w = hinge_world("10", &s);
  if (!w) return;
  double kp = 1000, kd = 10, zero = 0, u = 0;
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_system_set_pd_gains(s, &kp, &kd, 1, &err) == TL_OK &&
           tl_system_set_pd_targets(s, &qt, 1, &zero, 1, &err) == TL_OK;
  for (int k = 0; ok && k < 2000; k++) ok = tl_world_step(w, &err) == TL_OK;
  ok = ok && tl_system_get_state(s, q_end, 1, &u, 1, &err) == TL_OK &&
       tl_system_applied_generalized_force(s, tau_end, 1, &err) == TL_OK;
  TL_CHECK(ok, "hold %g: %s", qt, err.message);
  tl_world_free(w);
}

static void check_pd(void) {
  double q = NAN, tau = NAN;
  hold(2.0, &q, &tau);
  printf("target 2.0 beyond the limit 0.5: q %.9f, applied PD force %.3g N m\n", q, tau);
  TL_CHECK(fabs(q - 0.5) < 1e-3, "target beyond the limit: q %.9f, want the limit 0.5", q);
  TL_CHECK(fabs(tau) < 1e-6, "target beyond the limit: the PD still pushes %.6g N m into it", tau);
  hold(0.3, &q, &tau);
  printf("target 0.3 inside the limits: q %.9f, applied %.3g N m\n", q, tau);
  TL_CHECK(fabs(q - 0.3) < 1e-6 && fabs(tau) < 1e-3, "target 0.3: q %.9f, tau %.3g", q, tau);
}

/* ---------------------------------------------------------- velocity */

/* 0.5 s under a constant torque tau with velocity limits on or off; largest
 * |u| and the time at which |u| first reached 0.999. */
static double drive(double tau, int enforce, double *t_reach) {
  tl_system *s = NULL;
  tl_world *w = hinge_world("1", &s);
  if (!w) return NAN;
  tl_error err;
  memset(&err, 0, sizeof err);
  double q, u, umax = 0;
  *t_reach = INFINITY;
  int ok = tl_system_set_joint_limits(s, 0, -INFINITY, INFINITY, INFINITY, &err) == TL_OK &&
           tl_world_set_velocity_limits(w, enforce, &err) == TL_OK &&
           tl_system_set_generalized_force(s, &tau, 1, &err) == TL_OK;
  for (int k = 0; ok && k < 500; k++) {
    ok = tl_world_step(w, &err) == TL_OK && tl_system_get_state(s, &q, 1, &u, 1, &err) == TL_OK;
    if (fabs(u) > umax) umax = fabs(u);
    if (fabs(u) >= 0.999 && !isfinite(*t_reach)) *t_reach = tl_world_time(w);
  }
  TL_CHECK(ok, "drive: %s", err.message);
  tl_world_free(w);
  return umax;
}

static void check_world_file(void) {
  char path[] = "/tmp/talus_test_limits_XXXXXX";
  int fd = mkstemp(path);
  if (!TL_CHECK(fd >= 0, "mkstemp")) return;
  const char *good = "<talus_world><solver velocity_limits='true' compliance='0'/></talus_world>";
  const char *bad = "<talus_world><solver velocity_limits='maybe'/></talus_world>";
  for (int pass = 0; pass < 2; pass++) {
    FILE *f = fopen(path, "w");
    fputs(pass ? bad : good, f);
    fclose(f);
    tl_world *w = NULL;
    tl_scene_info info;
    memset(&info, 0, sizeof info);
    tl_error err;
    memset(&err, 0, sizeof err);
    tl_status st = tl_scene_load(path, &w, &info, &err);
    if (pass == 0)
      TL_CHECK(st == TL_OK && tl_world_velocity_limits(w) == 1, "velocity_limits='true': %s", err.message);
    else
      TL_CHECK(st != TL_OK && strstr(err.message, "velocity_limits") && err.line == 1,
               "velocity_limits='maybe' not refused with the attribute's name and line: %s", err.message);
    if (st == TL_OK) tl_scene_info_free(&info);
    tl_world_free(w);
  }
  unlink(path);
}

static void check_velocity(void) {
  double t_on, t_off, t_neg;
  double on = drive(50, 1, &t_on), neg = drive(-50, 1, &t_neg), off = drive(50, 0, &t_off);
  printf("velocity limit 1 rad/s, 50 N m: enforced max |u| %.12f (reached at %.3f s), negative torque %.12f, "
         "not enforced %.3f rad/s\n", on, t_on, neg, off);
  TL_CHECK(on <= 1 + 1e-9 && neg <= 1 + 1e-9, "enforced: max |u| %.12g / %.12g > 1", on, neg);
  TL_CHECK(t_on < 0.1 && t_neg < 0.1, "enforced: |u| reached 1 at %g / %g s, want < 0.1", t_on, t_neg);
  TL_CHECK(off > 5, "not enforced (the default): max |u| %g, want > 5", off);
  check_world_file();
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_limits default ROBOTS_DIR | pd | velocity\n");
    return 2;
  }
  if (strcmp(argv[1], "default") == 0 && argc >= 3) check_default(argv[2]);
  else if (strcmp(argv[1], "pd") == 0) check_pd();
  else if (strcmp(argv[1], "velocity") == 0) check_velocity();
  else {
    fprintf(stderr, "unknown mode '%s'\n", argv[1]);
    return 2;
  }
  return tl_test_finish();
}
