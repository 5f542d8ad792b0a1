/* Joint-space operations of one joint (src/dynamics/joint_space.h) and the
 * places that call them: the public tl_model_integrate / tl_model_difference
 * (src/dynamics/derivatives.c) and the joint impedance controller's position
 * error (controllers/impedance.c, through tl_model_difference).
 *
 * Asserts, for the floating base, a ball, a revolute, a prismatic and a
 * universal joint:
 *  - where the quaternion sits in the joint's q (3 after the base position,
 *    0 for a ball, none otherwise);
 *  - q0 (+) v then (-) q0 gives v back (1e-12), and the PD error
 *    tl_js_error(q0, q0 (+) v) is the same v: the step's PD error is the
 *    inverse of its position update;
 *  - a rotation by theta about a unit axis a is the rotation vector theta a
 *    (Sola et al., "A micro Lie theory", 2018, eq. 10);
 *  - normalization makes a quaternion unit and leaves the base position;
 *  - tl_model_difference agrees with the header joint by joint;
 *  - the impedance controller pulls a ball joint towards a target rotated
 *    by theta about a with the torque K theta a (no gravity, D = 0). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dynamics/joint_space.h"
#include "impedance.h"
#include "talus/talus.h"
#include "test_util.h"

static void axis_angle_quat(double q[4], const double a[3], double th) {
  q[0] = cos(0.5 * th);
  for (int i = 0; i < 3; i++) q[1 + i] = sin(0.5 * th) * a[i];
}

static void test_offsets(void) {
  TL_CHECK(tl_js_quat_offset(TL_JOINT_FLOATING) == 3, "floating base: quaternion at q[3]");
  TL_CHECK(tl_js_quat_offset(TL_JOINT_SPHERICAL) == 0, "ball: quaternion at q[0]");
  TL_CHECK(tl_js_quat_offset(TL_JOINT_REVOLUTE) < 0, "revolute: no quaternion");
  TL_CHECK(tl_js_quat_offset(TL_JOINT_PRISMATIC) < 0, "prismatic: no quaternion");
  TL_CHECK(tl_js_quat_offset(TL_JOINT_UNIVERSAL) < 0, "universal: no quaternion");
  TL_CHECK(tl_js_quat_offset(TL_JOINT_FIXED) < 0, "fixed: no quaternion");
}

static void test_round_trip(void) {
  static const struct {
    tl_joint_type t;
    int nq, nv;
    double q0[7], v[6];
  } cases[] = {
      {TL_JOINT_FLOATING, 7, 6, {0.1, -0.2, 0.3, 0.8, 0.2, -0.4, 0.4}, {0.3, -0.2, 0.1, 0.4, -0.7, 0.5}},
      {TL_JOINT_SPHERICAL, 4, 3, {0.7, -0.3, 0.5, 0.4}, {-0.6, 0.2, 0.9}},
      {TL_JOINT_REVOLUTE, 1, 1, {0.4}, {-1.3}},
      {TL_JOINT_PRISMATIC, 1, 1, {-0.05}, {0.02}},
      {TL_JOINT_UNIVERSAL, 2, 2, {0.5, -0.3}, {0.25, 0.75}},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    double q0[7], q1[7], back[6], e[6];
    memcpy(q0, cases[c].q0, sizeof q0);
    tl_js_normalize(cases[c].t, q0);
    memcpy(q1, q0, sizeof q1);
    tl_js_integrate(cases[c].t, cases[c].nv, q1, cases[c].v, 1.0);
    tl_js_difference(cases[c].t, cases[c].nv, q0, q1, back);
    tl_js_error(cases[c].t, cases[c].nv, q0, q1, e);
    for (int k = 0; k < cases[c].nv; k++) {
      char what[64];
      snprintf(what, sizeof what, "joint type %d: ((q0 (+) v) (-) q0)[%d]", (int)cases[c].t, k);
      TL_CHECK_NEAR(back[k], cases[c].v[k], 1e-12, what);
      snprintf(what, sizeof what, "joint type %d: PD error to q0 (+) v, [%d]", (int)cases[c].t, k);
      TL_CHECK_NEAR(e[k], cases[c].v[k], 1e-12, what);
    }
  }
}

static void test_rotation_vector(void) {
  const double a[3] = {0.48, -0.6, 0.64}, th = 0.7, id[4] = {1, 0, 0, 0};
  double q[4], e[3], d[3];
  axis_angle_quat(q, a, th);
  tl_js_error(TL_JOINT_SPHERICAL, 3, id, q, e);
  tl_js_difference(TL_JOINT_SPHERICAL, 3, id, q, d);
  for (int i = 0; i < 3; i++) {
    TL_CHECK_NEAR(e[i], th * a[i], 1e-15, "PD error of a rotation theta about a = theta a");
    TL_CHECK_NEAR(d[i], th * a[i], 1e-15, "difference of a rotation theta about a = theta a");
  }
  /* q and -q are one rotation: the error takes the short way either way */
  double qn[4] = {-q[0], -q[1], -q[2], -q[3]};
  tl_js_error(TL_JOINT_SPHERICAL, 3, id, qn, e);
  for (int i = 0; i < 3; i++) TL_CHECK_NEAR(e[i], th * a[i], 1e-15, "error to -q = error to q");
}

static void test_normalize(void) {
  double q[7] = {1.5, -2.0, 0.25, 2.0, 0.0, -1.0, 2.0};
  tl_js_normalize(TL_JOINT_FLOATING, q);
  TL_CHECK(q[0] == 1.5 && q[1] == -2.0 && q[2] == 0.25, "base position untouched");
  TL_CHECK_NEAR(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6], 1.0, 1e-15, "unit base quaternion");
  TL_CHECK_NEAR(q[3], 2.0 / 3.0, 1e-15, "direction kept");
  double r = 0.3;
  tl_js_normalize(TL_JOINT_REVOLUTE, &r);
  TL_CHECK(r == 0.3, "a revolute angle is not a quaternion");
}

/* A fixed base and one 1 kg link on a ball joint. */
static const char *const ball_arm =
    "<robot name=\"ball_arm\">\n"
    "  <link name=\"world\"/>\n"
    "  <joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/></joint>\n"
    "  <link name=\"base\"/>\n"
    "  <joint name=\"ball\" type=\"spherical\"><parent link=\"base\"/><child link=\"arm\"/>\n"
    "    <origin xyz=\"0 0 0\" rpy=\"0.3 0 0\"/></joint>\n"
    "  <link name=\"arm\">\n"
    "    <inertial><origin xyz=\"0 0 -0.2\"/><mass value=\"1\"/>\n"
    "      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.004\"/></inertial>\n"
    "  </link>\n"
    "</robot>\n";

static void test_model_and_impedance(void) {
  tl_error err;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_status st = tl_model_load_urdf_string(ball_arm, strlen(ball_arm), "test_joint_space", NULL, &m, &err);
  if (!TL_CHECK(st == TL_OK, "load: %s", err.message)) return;
  st = tl_world_create(&w, &err);
  if (!st) st = tl_world_add_system(w, m, &s, &err);
  if (!TL_CHECK(st == TL_OK && tl_system_nq(s) == 4 && tl_system_nv(s) == 3, "world: %s", err.message)) {
    tl_world_free(w);
    tl_model_free(m);
    return;
  }
  const double a[3] = {0.0, 0.6, 0.8}, th = 0.5, id[4] = {1, 0, 0, 0};
  double qd[4], v[3], e[3];
  axis_angle_quat(qd, a, th);

  /* the public difference is the header's, joint by joint */
  st = tl_model_difference(m, id, qd, 4, v, 3, &err);
  tl_js_difference(TL_JOINT_SPHERICAL, 3, id, qd, e);
  TL_CHECK(st == TL_OK && memcmp(v, e, sizeof v) == 0, "tl_model_difference == tl_js_difference bit for bit");

  double g0[3] = {0, 0, 0};
  tl_world_set_gravity(w, g0, &err);
  tl_system_set_state(s, id, 4, NULL, 0, &err);
  tl_impedance_params p = tl_impedance_default_params();
  p.k = 40.0, p.d = 0.0, p.zeta = 0.0, p.gravity = 0, p.coriolis = 0, p.implicit = 0;
  tl_impedance_controller c;
  st = tl_impedance_init(&c, s, &p, qd, 4, &err);
  if (TL_CHECK(st == TL_OK, "impedance init: %s", err.message)) {
    st = tl_impedance_update(&c, &err);
    if (TL_CHECK(st == TL_OK, "impedance update: %s", err.message))
      for (int i = 0; i < 3; i++)
        TL_CHECK_NEAR(c.tau[i], p.k * th * a[i], 1e-12, "impedance torque on a ball joint = K theta a");
    tl_impedance_free(&c);
  }
  tl_world_free(w);
  tl_model_free(m);
}

int main(void) {
  test_offsets();
  test_round_trip();
  test_rotation_vector();
  test_normalize();
  test_model_and_impedance();
  return tl_test_finish();
}
