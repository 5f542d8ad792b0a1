/* Guards: controllers/osc.c (operational-space control, tl_osc_circle, null-space posture). */
/* The operational-space controller (controllers/osc.h) following a circle.
 *
 * A fixed-base arm starts at rest in a bent pose; the controlled frame
 * follows a 10 cm circle through its start point (tl_osc_circle: period 4 s,
 * 0.5 s smooth speed ramp), dt = 1e-3 s, no ground, 9 s. Asserted:
 *   - every step succeeds;
 *   - position tracking error < 5 mm at every step after a 1 s transient
 *     (and the frame really moves: it visits points 2 r apart);
 *   - the circle helper: position on the circle, velocity and acceleration
 *     equal to finite differences of the position;
 *   - the null-space posture torque does not disturb the task (iiwa, 7 DOF:
 *     with a posture far from the start the error stays < 5 mm);
 *   - with orientation control (6-D task) and the URDF's joint damping
 *     compensated, also the orientation error < 0.01 rad (iiwa).
 * Robots: "arm3", a 3-DOF spatial arm written inline (always run), and the
 * KUKA iiwa of the shared corpus, last link frame (skipped, exit 77, when the
 * corpus is absent).
 *
 * Usage: test_osc arm3 | iiwa SHARED_ROBOTS_DIR   ($TALUS_SHARED/robots
 *   overrides SHARED_ROBOTS_DIR). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osc.h"
#include "talus/talus.h"
#include "test_util.h"

#define DT 1e-3
#define T_END 9.0
#define T_TRANSIENT 1.0
#define RADIUS 0.1
#define PERIOD 4.0

/* A 3-DOF arm: yaw at the base, two pitch joints, 0.4 m links, an `ee`
 * frame at the tip (fixed joint ee_joint). */
static const char arm3_urdf[] =
    "<robot name='arm3'>"
    "<link name='world'/>"
    "<joint name='mount' type='fixed'><parent link='world'/><child link='base'/></joint>"
    "<link name='base'/>"
    "<joint name='yaw' type='revolute'><parent link='base'/><child link='l1'/>"
    " <origin xyz='0 0 0.3'/><axis xyz='0 0 1'/><limit lower='-3' upper='3' effort='100' velocity='10'/></joint>"
    "<link name='l1'><inertial><origin xyz='0 0 0'/><mass value='2'/>"
    " <inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='shoulder' type='revolute'><parent link='l1'/><child link='l2'/>"
    " <axis xyz='0 1 0'/><limit lower='-3' upper='3' effort='100' velocity='10'/></joint>"
    "<link name='l2'><inertial><origin xyz='0 0 0.2'/><mass value='1.5'/>"
    " <inertia ixx='0.02' iyy='0.02' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='elbow' type='revolute'><parent link='l2'/><child link='l3'/>"
    " <origin xyz='0 0 0.4'/><axis xyz='0 1 0'/><limit lower='-3' upper='3' effort='100' velocity='10'/></joint>"
    "<link name='l3'><inertial><origin xyz='0 0 0.2'/><mass value='1'/>"
    " <inertia ixx='0.0134' iyy='0.0134' izz='0.0005' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='ee_joint' type='fixed'><parent link='l3'/><child link='ee'/><origin xyz='0 0 0.4'/></joint>"
    "<link name='ee'/>"
    "</robot>";

typedef struct run_result {
  double max_err;  /* after the transient, m */
  double max_ori;  /* after the transient, rad */
  double span;     /* largest distance between visited points, m */
  int ok;
} run_result;

/* Simulate one circle. q0 (nq) start; posture (nq) or NULL (= start). */
static run_result run(tl_model *m, const char *label, const char *frame_name, const double *q0,
                      const double *posture, const tl_osc_params *p, const double normal[3]) {
  run_result r = {0, 0, 0, 0};
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_osc_controller c;
  memset(&c, 0, sizeof c);
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, DT, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  int nq = ok ? tl_system_nq(s) : 0, nv = ok ? tl_system_nv(s) : 0;
  double u[16] = {0};
  ok = ok && nv <= 16 && tl_system_set_state(s, q0, nq, u, nv, &err) == TL_OK;
  int frame = ok ? tl_model_frame_index(m, frame_name) : -1;
  ok = ok && frame >= 0 && tl_osc_init(&c, s, frame, p, &err) == TL_OK;
  ok = ok && (!posture || tl_osc_set_posture(&c, posture, nq, &err) == TL_OK);
  tl_osc_circle circle;
  ok = ok && tl_osc_circle_make(&circle, c.x_d, normal, NULL, RADIUS, PERIOD, 0.5, &err) == TL_OK;
  if (!TL_CHECK(ok, "%s: setup failed: %s", label, err.message)) goto done;
  double start[3] = {c.x_d[0], c.x_d[1], c.x_d[2]};
  long long n = llround(T_END / DT);
  for (long long k = 0; k < n; ++k) {
    double t = tl_world_time(w), x[3], v[3], a[3];
    tl_osc_circle_eval(&circle, t, x, v, a);
    if (tl_world_integrate1(w, &err) != TL_OK || tl_osc_set_position_target(&c, x, v, a, &err) != TL_OK ||
        tl_osc_update(&c, &err) != TL_OK || tl_world_integrate2(w, &err) != TL_OK) {
      TL_CHECK(0, "%s: step %lld failed: %s", label, k, err.message);
      goto done;
    }
    if (t >= T_TRANSIENT) {
      r.max_err = fmax(r.max_err, c.pos_error);
      r.max_ori = fmax(r.max_ori, c.ori_error);
    }
    double d = sqrt((c.x[0] - start[0]) * (c.x[0] - start[0]) + (c.x[1] - start[1]) * (c.x[1] - start[1]) +
                    (c.x[2] - start[2]) * (c.x[2] - start[2]));
    r.span = fmax(r.span, d);
  }
  r.ok = 1;
done:
  tl_osc_free(&c);
  tl_world_free(w);
  return r;
}

static void check_circle_helper(void) {
  tl_osc_circle c;
  tl_error err;
  const double start[3] = {0.5, 0.2, 0.7}, normal[3] = {0, 0, 2};
  TL_CHECK(tl_osc_circle_make(&c, start, normal, NULL, 0.1, 2.0, 0.5, &err) == TL_OK, "circle: %s",
           err.message);
  double x[3], v[3], a[3];
  tl_osc_circle_eval(&c, 0.0, x, v, a);
  for (int i = 0; i < 3; ++i) TL_CHECK_NEAR(x[i], start[i], 1e-12, "circle: x(0) = start");
  const double ts[4] = {0.1, 0.37, 0.8, 3.3}, e = 1e-6;
  for (int k = 0; k < 4; ++k) {
    double t = ts[k], xp[3], xm[3], vp[3], vm[3];
    tl_osc_circle_eval(&c, t, x, v, a);
    tl_osc_circle_eval(&c, t + e, xp, vp, NULL);
    tl_osc_circle_eval(&c, t - e, xm, vm, NULL);
    double r2 = 0;
    for (int i = 0; i < 3; ++i) {
      r2 += (x[i] - c.center[i]) * (x[i] - c.center[i]);
      TL_CHECK_NEAR(v[i], (xp[i] - xm[i]) / (2 * e), 1e-6, "circle: v = dx/dt");
      TL_CHECK_NEAR(a[i], (vp[i] - vm[i]) / (2 * e), 1e-5, "circle: a = dv/dt");
    }
    TL_CHECK_NEAR(sqrt(r2), 0.1, 1e-12, "circle: |x - centre| = radius");
    TL_CHECK_NEAR(x[2], 0.7, 1e-12, "circle: stays in its plane");
  }
  TL_CHECK(tl_osc_circle_make(&c, start, (double[3]){0, 0, 0}, NULL, 0.1, 2.0, 0.5, NULL) ==
               TL_ERR_ARGUMENT,
           "circle: a zero normal is refused");
  TL_CHECK(tl_osc_circle_make(&c, start, normal, NULL, 0.1, 0.0, 0.5, NULL) == TL_ERR_ARGUMENT,
           "circle: period 0 is refused");
}

static void arm3(void) {
  tl_model *m = NULL;
  tl_error err;
  if (!TL_CHECK(tl_model_load_urdf_string(arm3_urdf, strlen(arm3_urdf), "arm3.urdf", NULL, &m, &err) ==
                    TL_OK,
                "arm3: %s", err.message))
    return;
  TL_CHECK(tl_model_base(m) == TL_BASE_FIXED && tl_model_nv(m) == 3, "arm3: fixed base, 3 DOF");
  const double q0[3] = {0.3, 0.5, 1.2};
  tl_osc_params p = tl_osc_default_params();
  const double normal[3] = {1, 0, 0};
  run_result r = run(m, "arm3", "ee_joint", q0, NULL, &p, normal);
  printf("arm3: max position error after %.0f s: %.3f mm (frame moved %.3f m)\n", T_TRANSIENT,
         1e3 * r.max_err, r.span);
  TL_CHECK(r.ok && r.max_err < 5e-3, "arm3: tracking error %.3g m >= 5 mm", r.max_err);
  TL_CHECK(r.span > 1.9 * RADIUS, "arm3: the frame moved only %.3f m", r.span);
  /* refused: a floating base */
  tl_model *fm = NULL;
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FLOATING;
  if (tl_model_load_urdf_string(arm3_urdf, strlen(arm3_urdf), "arm3.urdf", &o, &fm, NULL) == TL_OK) {
    tl_world *w = NULL;
    tl_system *s = NULL;
    tl_osc_controller c;
    if (tl_world_create(&w, NULL) == TL_OK && tl_world_add_system(w, fm, &s, NULL) == TL_OK)
      TL_CHECK(tl_osc_init(&c, s, 0, NULL, NULL) == TL_ERR_ARGUMENT, "osc refuses a floating base");
    tl_world_free(w);
    tl_model_free(fm);
  }
  tl_model_free(m);
}

static void iiwa(const char *path) {
  tl_model *m = NULL;
  tl_error err;
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FIXED;
  if (!TL_CHECK(tl_model_load_urdf(path, &o, &m, &err) == TL_OK, "iiwa: %s", err.message)) return;
  const char *ee = tl_model_frame_name(m, tl_model_nframe(m) - 1); /* the last link's frame */
  const double q0[7] = {0.0, 0.6, 0.0, -1.4, 0.0, 0.9, 0.0};
  const double far[7] = {0.8, 0.2, -0.8, -1.0, 0.8, 0.4, 1.0};
  const double normal[3] = {1, 0, 0};
  tl_osc_params p = tl_osc_default_params();
  run_result r = run(m, "iiwa", ee, q0, NULL, &p, normal);
  printf("iiwa (%s): max position error after %.0f s: %.3f mm (frame moved %.3f m)\n", ee,
         T_TRANSIENT, 1e3 * r.max_err, r.span);
  TL_CHECK(r.ok && r.max_err < 5e-3, "iiwa: tracking error %.3g m >= 5 mm", r.max_err);
  TL_CHECK(r.span > 1.9 * RADIUS, "iiwa: the frame moved only %.3f m", r.span);

  r = run(m, "iiwa posture", ee, q0, far, &p, normal);
  printf("iiwa, posture far from the start: max position error %.3f mm\n", 1e3 * r.max_err);
  TL_CHECK(r.ok && r.max_err < 5e-3, "iiwa posture: tracking error %.3g m >= 5 mm", r.max_err);

  p.orientation = 1;
  p.damping = 0.5; /* the iiwa URDF's <dynamics damping> */
  const double normal_z[3] = {0, 0, 1};
  r = run(m, "iiwa 6-D", ee, q0, NULL, &p, normal_z);
  printf("iiwa, position and orientation (horizontal circle): max errors %.3f mm, %.2e rad\n",
         1e3 * r.max_err, r.max_ori);
  TL_CHECK(r.ok && r.max_err < 5e-3, "iiwa 6-D: tracking error %.3g m >= 5 mm", r.max_err);
  TL_CHECK(r.ok && r.max_ori < 1e-2, "iiwa 6-D: orientation error %.3g rad >= 0.01", r.max_ori);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_osc arm3 | iiwa SHARED_ROBOTS_DIR\n");
    return 2;
  }
  if (strcmp(argv[1], "arm3") == 0) {
    check_circle_helper();
    arm3();
    return tl_test_finish();
  }
  char path[4096];
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0]) snprintf(path, sizeof path, "%s/robots/kuka_iiwa/model.urdf", env);
  else snprintf(path, sizeof path, "%s/kuka_iiwa/model.urdf", argc > 2 ? argv[2] : ".");
  FILE *f = fopen(path, "r");
  if (!f) {
    tl_test_skip("KUKA iiwa not found at %s (shared robot corpus absent)", path);
    tl_test_finish();
    return TL_TEST_SKIP_CODE;
  }
  fclose(f);
  iiwa(path);
  return tl_test_finish();
}
