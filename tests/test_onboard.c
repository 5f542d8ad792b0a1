/* Guards: src/tasks/onboard.c (talus/onboard.h, tl_vecenv_warning of talus/vecenv.h).
 * Robot onboarding, from C (issue 25 §5):
 *   - tl_support_margin: a 0.4 x 0.2 m rectangle's inside distances (0.1 m at the centre, 0.05 m at
 *     (0.15, 0)), outside distances (0.1 m beyond an edge, hypot to a corner), collinear and single
 *     points (no inside: minus the distance), no points (-inf);
 *   - tl_find_standing_pose on robots/talus_small_quadruped: residual < 1e-4 m, each foot (its foot
 *     link's frame) within 1 cm of under its thigh joint and one foot radius (0.02 m) above the
 *     ground, at the given height; joint limits kept; COM margin > 0.05 m; a bad foot name is
 *     TL_ERR_ARGUMENT naming it;
 *   - the urdf task's warnings (tl_vecenv_warning / _kind): none at the small quadruped's default
 *     pose, "cannot_stand" with the COM 0.2-0.35 m outside when only the hind feet touch, none from
 *     the found pose; "fixed_base" for the floating talus_base_arm and none with base=fixed; the
 *     URDF load warnings of talus_missing_visuals as kind "urdf".
 * Usage: test_onboard ROBOTS_DIR. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "talus/onboard.h"
#include "talus/talus.h"
#include "talus/task.h"
#include "test_util.h"

static char robots[1024];

static void test_margin(void) {
  const double rect[] = {-0.2, -0.1, 0.2, -0.1, 0.2, 0.1, -0.2, 0.1, 0.0, 0.0};
  double p[2] = {0, 0};
  TL_CHECK_NEAR(tl_support_margin(rect, 5, p), 0.1, 1e-12, "centre of a 0.4 x 0.2 rectangle");
  p[0] = 0.15;
  TL_CHECK_NEAR(tl_support_margin(rect, 4, p), 0.05, 1e-12, "(0.15, 0) in the rectangle");
  p[0] = 0.3;
  TL_CHECK_NEAR(tl_support_margin(rect, 4, p), -0.1, 1e-12, "(0.3, 0) outside");
  p[0] = 0.3, p[1] = 0.2;
  TL_CHECK_NEAR(tl_support_margin(rect, 4, p), -hypot(0.1, 0.1), 1e-12, "(0.3, 0.2) past a corner");
  const double line[] = {0, 0, 1, 0, 0.5, 0};
  p[0] = 0.5, p[1] = 0;
  TL_CHECK(tl_support_margin(line, 3, p) == 0, "collinear points have no inside: 0 on the segment");
  p[1] = 0.2;
  TL_CHECK_NEAR(tl_support_margin(line, 3, p), -0.2, 1e-12, "0.2 m off a segment");
  TL_CHECK_NEAR(tl_support_margin(line, 1, p), -hypot(0.5, 0.2), 1e-12, "one point");
  TL_CHECK(tl_support_margin(line, 0, p) == -INFINITY, "no point");
}

static void test_standing_pose(void) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/talus_small_quadruped/talus_small_quadruped.urdf", robots);
  tl_model *m = NULL;
  tl_error err;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "load: %s", err.message)) return;
  int nq = tl_model_nq(m);
  double q[64];
  tl_standing_options o;
  tl_standing_options_default(&o);
  o.height = 0.25;
  tl_standing_result r;
  TL_CHECK(tl_find_standing_pose(m, &o, q, nq, &r, &err) == TL_OK, "find: %s", err.message);
  TL_CHECK(r.residual < 1e-4 && r.nfeet == 4 && r.height == 0.25, "residual %g m, %d feet", r.residual, r.nfeet);
  TL_CHECK(r.com_margin > 0.05, "COM margin %g m", r.com_margin);
  tl_world *w = NULL;
  tl_system *sys = NULL;
  tl_world_create(&w, NULL);
  tl_world_add_system(w, m, &sys, NULL);
  tl_system_set_state(sys, q, nq, NULL, 0, NULL);
  static const char *const legs[4] = {"FL", "FR", "RL", "RR"};
  for (int l = 0; l < 4; l++) {
    char foot[32], hip[32];
    snprintf(foot, sizeof(foot), "%s_foot_fixed", legs[l]);
    snprintf(hip, sizeof(hip), "%s_thigh_joint", legs[l]);
    int fi = -1, hi = -1;
    double pf[3], ph[3], R[9];
    tl_system_frame_index(sys, foot, &fi, NULL);
    tl_system_frame_index(sys, hip, &hi, NULL);
    tl_system_frame_pose(sys, fi, pf, R, NULL);
    tl_system_frame_pose(sys, hi, ph, R, NULL);
    TL_CHECK(hypot(pf[0] - ph[0], pf[1] - ph[1]) < 0.01, "%s foot (%g, %g) under the hip (%g, %g)", legs[l], pf[0],
             pf[1], ph[0], ph[1]);
    TL_CHECK(fabs(pf[2] - 0.02) < 1e-3, "%s foot centre at z %g, expected its radius 0.02 m", legs[l], pf[2]);
  }
  for (int b = 1; b < tl_model_nbody(m); b++) {
    double lo, hi;
    tl_model_dof_limits(m, tl_model_joint_u_index(m, b), &lo, &hi, NULL);
    double x = q[tl_model_joint_q_index(m, b)];
    TL_CHECK(x >= lo && x <= hi, "joint %s at %g outside [%g, %g]", tl_model_joint_name(m, b), x, lo, hi);
  }
  const char *bad[] = {"no_such_foot"};
  o.feet = bad;
  o.nfeet = 1;
  TL_CHECK(tl_find_standing_pose(m, &o, q, nq, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "no_such_foot"),
           "a bad foot name is refused naming it: %s", err.message);
  tl_world_free(w);
  tl_model_free(m);
}

/* Create a 1-env urdf task and return the count of warnings of `kind` (-1 if creation failed). */
static int warnings_of(const char *urdf, const char *base, const char *pose, const char *kind, char *text,
                       size_t cap) {
  tl_task_option opt[3] = {{"urdf", urdf}, {"base", base}, {"default_joint_pos", pose}};
  tl_vecenv_options vo = tl_vecenv_options_default();
  vo.task = "urdf";
  vo.nthread = 1;
  vo.task_opts = opt;
  vo.ntask_opt = pose ? 3 : 2;
  tl_vecenv *v = NULL;
  tl_error err;
  if (!TL_CHECK(tl_vecenv_create(&vo, &v, &err) == TL_OK, "create %s: %s", urdf, err.message)) return -1;
  int n = 0;
  for (int i = 0; i < tl_vecenv_nwarning(v); i++)
    if (!strcmp(tl_vecenv_warning_kind(v, i), kind)) {
      if (text && !n) snprintf(text, cap, "%s", tl_vecenv_warning(v, i));
      n++;
    }
  TL_CHECK(tl_vecenv_warning(v, tl_vecenv_nwarning(v)) == NULL && tl_vecenv_warning(v, -1) == NULL,
           "out-of-range warning index: NULL");
  tl_vecenv_free(v);
  return n;
}

static void test_task_warnings(void) {
  char quad[1200], arm[1200], cart[1200], text[1024] = "";
  snprintf(quad, sizeof(quad), "%s/talus_small_quadruped/talus_small_quadruped.urdf", robots);
  snprintf(arm, sizeof(arm), "%s/talus_base_arm/talus_base_arm.urdf", robots);
  snprintf(cart, sizeof(cart), "%s/talus_missing_visuals/talus_missing_visuals.urdf", robots);
  TL_CHECK(warnings_of(quad, "auto", NULL, "cannot_stand", NULL, 0) == 0, "the default pose stands");
  TL_CHECK(warnings_of(quad, "auto", "0,0.6,-2.6,0,0.6,-2.6,0,0.6,-0.9,0,0.6,-0.9", "cannot_stand", text,
                       sizeof(text)) == 1,
           "front knees folded: cannot stand");
  const char *by = strstr(text, " by ");
  double margin = by ? atof(by + 4) : 0;
  TL_CHECK(margin > 0.2 && margin < 0.35 && strstr(text, "default_joint_pos"), "margin %g m in: %s", margin, text);
  /* the found pose, as text */
  tl_model *m = NULL;
  double q[64];
  char pose[512] = "";
  if (tl_model_load_urdf(quad, NULL, &m, NULL) == TL_OK &&
      tl_find_standing_pose(m, NULL, q, tl_model_nq(m), NULL, NULL) == TL_OK)
    for (int i = 7; i < tl_model_nq(m); i++)
      snprintf(pose + strlen(pose), sizeof(pose) - strlen(pose), "%s%.17g", i > 7 ? "," : "", q[i]);
  tl_model_free(m);
  TL_CHECK(warnings_of(quad, "auto", pose, "cannot_stand", NULL, 0) == 0, "no warning from the found pose");
  TL_CHECK(warnings_of(quad, "auto", pose, "ground_contact", NULL, 0) == 0, "no ground contact from the found pose");
  TL_CHECK(warnings_of(arm, "auto", NULL, "fixed_base", text, sizeof(text)) == 1 && strstr(text, "base=fixed"),
           "floating arm: %s", text);
  TL_CHECK(warnings_of(arm, "fixed", NULL, "fixed_base", NULL, 0) == 0, "arm with base=fixed: no warning");
  TL_CHECK(warnings_of(cart, "auto", NULL, "urdf", text, sizeof(text)) >= 3 && strstr(text, "not found"),
           "missing visual meshes as kind urdf: %s", text);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_onboard ROBOTS_DIR\n");
    return 2;
  }
  snprintf(robots, sizeof(robots), "%s", argv[1]);
  test_margin();
  test_standing_pose();
  test_task_warnings();
  return tl_test_finish();
}
