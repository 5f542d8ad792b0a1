/* Guards: controllers/stand.c on spherical joints, src/native/step.c and src/contact/constraint_rows.c
 * (the step with contacts), src/contact/collide_plane.c. */
/* The DeepMimic humanoid (shared/robots/deepmimic_humanoid/humanoid.urdf:
 * 45 kg, 8 spherical + 4 revolute joints, floating base, primitive geoms,
 * Y-up, about 4x human size: hip to knee 1.69 m, knee to ankle 1.64 m)
 * standing on the ground with the stand controller.
 *
 * Setup: the base quaternion (cos 45deg, sin 45deg, 0, 0) turns the model's
 * +y (up) into Talus's +z; every joint at its reference (identity
 * quaternions, 0 rad); the base is lifted so that the lowest collision geom
 * (tl_system_geom_aabb) is 1 cm above the ground z = 0 (mu 0.8). The stand
 * controller (controllers/stand.h) holds this configuration with kp = 2000
 * N m/rad, kd = 100 N m s/rad: tipping the 45 kg body about the ankles
 * with its COM h ~ 3.4 m up costs m g h = 1.5e3 N m/rad of gravity
 * stiffness, so each joint needs kp of that order to stay straight; kd = 100
 * damps the upper body (composite inertia ~ 1e2 kg m^2 about the hips, a
 * damping ratio kd / (2 sqrt(kp I)) ~ 0.1-0.2, plus the implicit damping of
 * the stable PD). Measured: kp 1500 / 2000 / 3000 stand (max tilt 0.034 /
 * 0.015 / 0.007 rad); kp 1000 (kd 50) leans back slowly (the COM is only
 * 0.15 m in front of the heel edge) and falls onto its heels (tilt 0.42 rad
 * at 5 s); the default kp 300 collapses (wrists on the ground at 4.4 s).
 * 5 s at dt = 1e-3 s (integrate1, tl_stand_update, integrate2). Asserted:
 *   - every step succeeds;
 *   - the base (pelvis, URDF links base + root) height stays within 0.05 m
 *     of its settled value (the value at t = 1 s) over the last 4 s;
 *   - the base tilt from vertical (angle between its +y axis and world +z)
 *     stays below 0.2 rad at every step;
 *   - every contact (including speculative ones within the contact margin)
 *     is on a foot geom: URDF links right_ankle / left_ankle;
 *   - both feet touch the ground at the end, and the normal impulses of the
 *     last step carry the weight: sum within 5 % of m g dt.
 *
 * Usage: test_humanoid_stand SHARED_DIR ($TALUS_SHARED overrides it). A
 * missing humanoid prints SKIPPED and exits 77. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stand.h"
#include "talus/talus.h"
#include "test_util.h"

#define DT 1e-3
#define T_END 5.0
#define T_SETTLE 1.0
#define KP 2000.0
#define KD 100.0
#define QUARTER_PI 0.78539816339744830962

static int is_foot(const char *link) {
  return link && (strcmp(link, "right_ankle") == 0 || strcmp(link, "left_ankle") == 0);
}

int main(int argc, char **argv) {
  const char *shared = tl_test_shared_dir(argc, argv, 1);
  char path[2048];
  snprintf(path, sizeof(path), "%s/robots/deepmimic_humanoid/humanoid.urdf", shared ? shared : "../shared");
  FILE *f = fopen(path, "rb");
  if (!f) {
    tl_test_skip("%s not found", path);
    tl_test_finish();
    return TL_TEST_SKIP_CODE;
  }
  fclose(f);

  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_stand_controller ctrl;
  memset(&ctrl, 0, sizeof(ctrl));
  int ok = TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "load %s: %s", path, err.message) &&
           TL_CHECK(tl_world_create(&w, &err) == TL_OK, "world: %s", err.message) &&
           TL_CHECK(tl_world_set_timestep(w, DT, &err) == TL_OK, "dt: %s", err.message) &&
           TL_CHECK(tl_world_add_ground(w, 0, 0.8, &err) == TL_OK, "ground: %s", err.message) &&
           TL_CHECK(tl_world_add_system(w, m, &s, &err) == TL_OK, "add: %s", err.message);
  if (!ok) goto done;
  const tl_model *sm = tl_system_model(s);
  int nq = tl_system_nq(s), nv = tl_system_nv(s), ngeom = tl_model_ngeom(sm);
  double mass = tl_model_total_mass(sm);
  if (!TL_CHECK(tl_model_joint_type(sm, 0) == TL_JOINT_FLOATING && nq == 43 && nv == 34,
                "humanoid: expected a floating base, nq 43, nv 34 (got %d, %d)", nq, nv))
    goto done;
  printf("humanoid: %d bodies, nq %d, nv %d, %d geoms, %.4f kg\n", tl_model_nbody(sm), nq, nv, ngeom, mass);

  /* stand it up (model +y -> world +z) and put the lowest geom 1 cm above the ground */
  double q[64], u[64];
  memset(u, 0, sizeof(u));
  tl_model_reference_q(sm, q, nq, &err);
  q[3] = cos(QUARTER_PI), q[4] = sin(QUARTER_PI), q[5] = q[6] = 0;
  tl_system_set_state(s, q, nq, u, nv, &err);
  double minz = INFINITY;
  int lowest = -1;
  for (int g = 0; g < ngeom; g++) {
    double lo[3], hi[3];
    if (tl_system_geom_aabb(s, g, lo, hi, NULL) != TL_OK) continue;
    if (lo[2] < minz) minz = lo[2], lowest = g;
  }
  if (!TL_CHECK(lowest >= 0, "no primitive geom")) goto done;
  q[2] += 0.01 - minz;
  TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK, "set_state: %s", err.message);
  printf("lowest geom '%s' on link '%s'; base origin lifted to z = %.4f m\n", tl_model_geom_name(sm, lowest),
         tl_model_geom_link(sm, lowest), q[2]);
  TL_CHECK(is_foot(tl_model_geom_link(sm, lowest)), "the lowest geom is not a foot");
  if (!TL_CHECK(tl_stand_init(&ctrl, s, NULL, 0, KP, KD, &err) == TL_OK, "stand: %s", err.message)) goto done;

  int nsteps = (int)lround(T_END / DT), nsettle = (int)lround(T_SETTLE / DT), bad_contact = 0;
  double settled = NAN, dev = 0, tilt_max = 0, hmin = INFINITY, hmax = -INFINITY, depth_max = 0;
  int feet_at_end[2] = {0, 0};
  double fn_end = 0;
  for (int i = 1; i <= nsteps; i++) {
    if (!TL_CHECK(tl_world_integrate1(w, &err) == TL_OK, "integrate1 at step %d: %s", i, err.message)) break;
    if (!TL_CHECK(tl_stand_update(&ctrl, &err) == TL_OK, "stand update: %s", err.message)) break;
    if (!TL_CHECK(tl_world_integrate2(w, &err) == TL_OK, "integrate2 at step %d: %s", i, err.message)) break;
    /* contacts of this step (found by integrate1, impulses from integrate2) */
    int nc = tl_world_ncontact(w);
    if (i == nsteps) fn_end = 0;
    for (int k = 0; k < nc; k++) {
      tl_contact_info ci;
      tl_world_contact(w, k, &ci, &err);
      const char *link = tl_model_geom_link(sm, ci.geom);
      depth_max = fmax(depth_max, ci.depth);
      if (!is_foot(link) && bad_contact++ < 5)
        TL_CHECK(0, "t = %.3f s: contact on geom '%s' of link '%s' (depth %.4f m)", i * DT,
                 tl_model_geom_name(sm, ci.geom), link, ci.depth);
      if (i == nsteps) {
        if (link && strcmp(link, "right_ankle") == 0) feet_at_end[0] = 1;
        if (link && strcmp(link, "left_ankle") == 0) feet_at_end[1] = 1;
        fn_end += ci.impulse[0] * ci.normal[0] + ci.impulse[1] * ci.normal[1] + ci.impulse[2] * ci.normal[2];
      }
    }
    double p[3], R[9];
    tl_system_body_pose(s, 0, p, R, &err);
    double tilt = acos(fmax(-1.0, fmin(1.0, R[7]))); /* model +y (column 1) against world +z */
    tilt_max = fmax(tilt_max, tilt);
    if (i == nsettle) settled = p[2];
    if (i >= nsettle) {
      dev = fmax(dev, fabs(p[2] - settled));
      hmin = fmin(hmin, p[2]), hmax = fmax(hmax, p[2]);
    }
    if (i % 1000 == 0) {
      double com[3];
      tl_system_com(s, com, &err);
      printf("t = %.1f s: base z = %.4f m, tilt %.4f rad, COM (%.3f, %.3f, %.3f), %d contacts\n", i * DT, p[2], tilt,
             com[0], com[1], com[2], nc);
    }
  }
  printf("measured: base height settled %.4f m (t = 1 s), range [%.4f, %.4f] over the last 4 s, max |dev| %.2e m "
         "(tol 0.05); max tilt %.4f rad (tol 0.2); max contact depth %.2e m; non-foot contacts %d; "
         "normal impulse of the last step %.5f N s vs m g dt %.5f N s\n",
         settled, hmin, hmax, dev, tilt_max, depth_max, bad_contact, fn_end, mass * 9.81 * DT);
  TL_CHECK(dev <= 0.05, "base height moved %.4f m > 0.05 m from its settled value", dev);
  TL_CHECK(tilt_max < 0.2, "base tilt %.4f rad >= 0.2", tilt_max);
  TL_CHECK(bad_contact == 0, "%d contacts on links other than the feet", bad_contact);
  TL_CHECK(feet_at_end[0] && feet_at_end[1], "feet in contact at the end: right %d left %d", feet_at_end[0],
           feet_at_end[1]);
  TL_CHECK(fabs(fn_end - mass * 9.81 * DT) <= 0.05 * mass * 9.81 * DT,
           "normal impulse of the last step %.5f N s, expected m g dt = %.5f N s within 5 %%", fn_end,
           mass * 9.81 * DT);

done:
  tl_stand_free(&ctrl);
  tl_world_free(w);
  tl_model_free(m);
  return tl_test_finish();
}
