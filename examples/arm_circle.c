/* arm_circle: a 7-DOF arm draws a circle with operational-space control.
 *
 * The KUKA iiwa (fixed base) starts from a bent pose; its last link's frame
 * follows a 10 cm circle in the vertical y-z plane, one turn every 4 s,
 * with the `osc` controller of controllers/osc.h (Khatib 1987: task force
 * F = Lambda (a_des - dJ/dt u), tau = J^T F + h + null-space posture
 * torque). Every 0.5 s it prints the desired and actual positions and the
 * tracking error; at the end, the largest error after the first second.
 *
 * Usage: ./build/arm_circle [URDF]   (default: the iiwa of the shared robot
 * corpus, ../shared/robots/kuka_iiwa/model.urdf beside the repository)
 */
#include <math.h>
#include <stdio.h>

#include <talus/talus.h>

#include "osc.h"

#ifndef TALUS_SOURCE_DIR
#define TALUS_SOURCE_DIR "."
#endif

static int fail(const tl_error *err) {
  fprintf(stderr, "error: %s\n", err->message);
  return 1;
}

int main(int argc, char **argv) {
  const char *urdf =
      argc > 1 ? argv[1] : TALUS_SOURCE_DIR "/../shared/robots/kuka_iiwa/model.urdf";

  /* The iiwa URDF has no `world` link, so it would float by default: weld its
   * root link to the world. */
  tl_load_options opt = tl_load_options_default();
  opt.base = TL_BASE_FIXED;
  tl_error err;
  tl_model *model = NULL;
  if (tl_model_load_urdf(urdf, &opt, &model, &err) != TL_OK) return fail(&err);

  /* No ground: the arm is mounted in the air (its meshes would not collide
   * with a plane anyway). dt = 1 ms (the default). */
  tl_world *world = NULL;
  tl_system *arm = NULL;
  if (tl_world_create(&world, &err) != TL_OK || tl_world_add_system(world, model, &arm, &err) != TL_OK)
    return fail(&err);
  tl_model_free(model);
  int nq = tl_system_nq(arm), nv = tl_system_nv(arm);
  if (nq != 7 || nv != 7) {
    fprintf(stderr, "error: expected a 7-DOF arm, %s has %d DOF\n", urdf, nv);
    return 1;
  }

  /* A bent pose, away from the straight-up singularity of q = 0. */
  double q[7] = {0.0, 0.6, 0.0, -1.4, 0.0, 0.9, 0.0}, u[7] = {0};
  if (tl_system_set_state(arm, q, nq, u, nv, &err) != TL_OK) return fail(&err);

  /* The controller: position of the last frame (the last link's frame), the
   * posture q held in the null space. The iiwa's joints have viscous damping
   * 0.5 N m s/rad (URDF <dynamics damping>); telling the controller removes
   * the small lag it causes. */
  tl_osc_params p = tl_osc_default_params();
  p.damping = 0.5;
  int ee = tl_model_nframe(tl_system_model(arm)) - 1;
  tl_osc_controller osc;
  if (tl_osc_init(&osc, arm, ee, &p, &err) != TL_OK) return fail(&err);

  /* The circle: through the start point, in the plane with normal x (the
   * y-z plane), radius 0.1 m, period 4 s, the speed ramping up over 0.5 s. */
  tl_osc_circle circle;
  const double normal[3] = {1.0, 0.0, 0.0};
  if (tl_osc_circle_make(&circle, osc.x_d, normal, NULL, 0.1, 4.0, 0.5, &err) != TL_OK)
    return fail(&err);

  printf("frame '%s', circle centre (%.3f, %.3f, %.3f) m\n",
         tl_model_frame_name(tl_system_model(arm), ee), circle.center[0], circle.center[1],
         circle.center[2]);
  printf("  t (s)   desired (m)                actual (m)                 error (mm)\n");
  double worst = 0.0;
  for (int step = 0; step <= 8000; ++step) {
    double t = tl_world_time(world), x[3], v[3], a[3];
    if (tl_world_integrate1(world, &err) != TL_OK) return fail(&err);
    tl_osc_circle_eval(&circle, t, x, v, a); /* where the frame should be now */
    if (tl_osc_set_position_target(&osc, x, v, a, &err) != TL_OK) return fail(&err);
    if (tl_osc_update(&osc, &err) != TL_OK) return fail(&err); /* sets the joint torques */
    if (t >= 1.0 && osc.pos_error > worst) worst = osc.pos_error;
    if (step % 500 == 0)
      printf("  %4.1f   (%.3f, %.3f, %.3f)    (%.3f, %.3f, %.3f)    %.3f\n", t, x[0], x[1], x[2],
             osc.x[0], osc.x[1], osc.x[2], 1e3 * osc.pos_error);
    if (tl_world_integrate2(world, &err) != TL_OK) return fail(&err);
  }
  printf("largest tracking error after 1 s: %.3f mm\n", 1e3 * worst);

  tl_osc_free(&osc);
  tl_world_free(world);
  return 0;
}
