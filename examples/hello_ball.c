/* hello_ball: the smallest Talus program.
 *
 * A ball (radius 0.1 m, 1 kg) is dropped from 1 m onto the ground and we
 * print its height every 0.1 s, as in ODE's first tutorial. It shows the
 * four things every Talus program does:
 *   1. describe a robot (here a URDF written inline; usually a .urdf file),
 *   2. make a world (time step, gravity, ground) and add the robot to it,
 *   3. set its state q (generalized coordinates) and u (velocities),
 *   4. step the world.
 *
 * Build: with the project (cmake --build build), then run ./build/hello_ball.
 */
#include <stdio.h>
#include <string.h>

#include <talus/talus.h>

/* A URDF robot with a single link and no joints: its root link gets a
 * floating joint (6 DOF), so the ball can fall and roll. The inertia is that
 * of a solid sphere, 2/5 m r^2. */
static const char ball_urdf[] =
    "<robot name='ball'>"
    "  <link name='ball'>"
    "    <inertial>"
    "      <mass value='1'/>"
    "      <inertia ixx='0.004' iyy='0.004' izz='0.004' ixy='0' ixz='0' iyz='0'/>"
    "    </inertial>"
    "    <collision><geometry><sphere radius='0.1'/></geometry></collision>"
    "  </link>"
    "</robot>";

int main(void) {
  tl_error err; /* every call that can fail fills this with a readable message */

  /* 1. The model: a compiled, read-only description of the robot. */
  tl_model *model = NULL;
  if (tl_model_load_urdf_string(ball_urdf, strlen(ball_urdf), "ball.urdf", NULL, &model, &err) !=
      TL_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }

  /* 2. The world: dt = 1 ms and gravity -9.81 z by default; a ground plane
   * z = 0 with friction coefficient 0.8. The world copies the model into a
   * "system" (the robot instance with its own state), so the model can go. */
  tl_world *world = NULL;
  tl_system *ball = NULL;
  if (tl_world_create(&world, &err) != TL_OK || tl_world_add_ground(world, 0.0, 0.8, &err) != TL_OK ||
      tl_world_add_system(world, model, &ball, &err) != TL_OK) {
    fprintf(stderr, "%s\n", err.message);
    tl_world_free(world);
    tl_model_free(model);
    return 1;
  }
  tl_model_free(model);

  /* 3. The state. A floating body has q = [x y z qw qx qy qz] (position and
   * orientation quaternion) and u = [vx vy vz wx wy wz] (world frame). */
  double q[7] = {0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0}; /* centre 1 m up, upright */
  double u[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};      /* at rest */
  if (tl_system_set_state(ball, q, 7, u, 6, &err) != TL_OK) {
    fprintf(stderr, "%s\n", err.message);
    tl_world_free(world);
    return 1;
  }

  /* 4. Step for 1.5 s. tl_world_step = integrate1 (kinematics, contacts, M, h)
   * + integrate2 (forces, contact impulses, integration). The ball lands at
   * about t = sqrt(2 * 0.9 / 9.81) = 0.43 s and stays on the ground (contacts
   * are inelastic by default): its height settles at the radius, 0.1 m. */
  printf("  t (s)   height (m)\n");
  for (int step = 0; step <= 1500; ++step) {
    if (step % 100 == 0) {
      tl_system_get_state(ball, q, 7, u, 6, NULL);
      printf("  %4.1f    %.4f\n", tl_world_time(world), q[2]);
    }
    if (tl_world_step(world, &err) != TL_OK) {
      fprintf(stderr, "%s\n", err.message);
      tl_world_free(world);
      return 1;
    }
  }

  tl_world_free(world); /* frees the systems too */
  return 0;
}
