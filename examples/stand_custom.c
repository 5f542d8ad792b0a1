/* stand_custom: write your own controller between the two halves of a step.
 *
 * The default quadruped (robots/talus_quadruped) stands on the ground with a
 * joint controller written here, not the engine's built-in PD:
 *
 *   tau = Kp (q0 - q) - Kd u          a PD on every leg joint, with gains
 *                                     scaled by the joint's inertia M_ii
 *       + h_legs                      gravity and Coriolis of the legs
 *       - sum_feet J_foot^T f_foot    each foot pushes the ground with a
 *                                     quarter of the robot's weight
 *
 * It reads, between tl_world_integrate1 and tl_world_integrate2, the mass
 * matrix M, the nonlinear term h (tau = M du/dt + h), the feet's frames and
 * their Jacobians, and applies tau with tl_system_set_generalized_force.
 * integrate1 has already computed kinematics, contacts, M and h for the
 * current state, so these reads cost nothing extra; integrate2 then uses the
 * force to step. The robot starts with its feet exactly on the ground, and
 * since the feedforward is exact (the ground forces of a symmetric robot
 * standing still are m g / 4 at each foot), it holds q0 to machine
 * precision. Drop it from 1 cm instead (DROP below) and a small error stays:
 * the landing leaves internal forces between the feet, locked in by
 * friction, which only the PD resists.
 *
 * Build: with the project; run ./build/stand_custom [URDF].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talus/talus.h>

#ifndef TALUS_ROBOTS_DIR
#define TALUS_ROBOTS_DIR "robots"
#endif

/* Closed-loop natural frequency and damping ratio of each joint: with
 * Kp = M_ii w^2 and Kd = 2 zeta w M_ii every joint responds alike, and the
 * explicit (start-of-step) PD stays stable because w dt = 0.03 << 1. */
#define OMEGA 30.0 /* rad/s */
#define ZETA 1.0
/* Gap between the feet and the ground at the start, m. */
#define DROP 0.0

static const char *const foot_frames[4] = {"LF_shank_to_foot", "RF_shank_to_foot",
                                           "LH_shank_to_foot", "RH_shank_to_foot"};

static int fail(const tl_error *err) {
  fprintf(stderr, "error: %s\n", err->message);
  return 1;
}

int main(int argc, char **argv) {
  const char *urdf = argc > 1 ? argv[1] : TALUS_ROBOTS_DIR "/talus_quadruped/talus_quadruped.urdf";
  tl_error err;
  tl_model *model = NULL;
  if (tl_model_load_urdf(urdf, NULL, &model, &err) != TL_OK) return fail(&err);

  tl_world *world = NULL;
  tl_system *robot = NULL;
  if (tl_world_create(&world, &err) != TL_OK || tl_world_add_ground(world, 0.0, 0.8, &err) != TL_OK ||
      tl_world_add_system(world, model, &robot, &err) != TL_OK)
    return fail(&err);
  double mass = tl_model_total_mass(model);
  tl_model_free(model);
  model = NULL;
  const tl_model *m = tl_system_model(robot); /* the system's own copy */

  /* Sizes: q has nq = 7 + 12 entries (base position, base quaternion, 12
   * joint angles), u and every generalized force nv = 6 + 12. */
  int nq = tl_system_nq(robot), nv = tl_system_nv(robot);

  /* The feet: frames named after the fixed joints shank -> foot. */
  int foot[4], foot_body[4];
  for (int i = 0; i < 4; ++i) {
    foot[i] = tl_model_frame_index(m, foot_frames[i]);
    if (foot[i] < 0) {
      fprintf(stderr, "error: %s has no frame '%s'\n", urdf, foot_frames[i]);
      return 1;
    }
    foot_body[i] = tl_model_frame_body(m, foot[i]);
  }

  /* All memory up front: a control loop should never allocate. */
  double *q = calloc((size_t)nq, sizeof(double)), *q0 = calloc((size_t)nq, sizeof(double));
  double *u = calloc((size_t)nv, sizeof(double)), *h = calloc((size_t)nv, sizeof(double));
  double *tau = calloc((size_t)nv, sizeof(double)), *Jp = calloc(3 * (size_t)nv, sizeof(double));
  double *M = calloc((size_t)nv * (size_t)nv, sizeof(double));
  if (!q || !q0 || !u || !h || !tau || !Jp || !M) {
    fprintf(stderr, "error: out of memory\n");
    return 1;
  }

  /* Initial state: the reference configuration (q = 0 is this robot's
   * standing pose), lowered so the feet (spheres of radius 3 cm around the
   * foot frames) are DROP above the ground. q0 is the pose the controller
   * holds. */
  if (tl_model_reference_q(m, q, nq, &err) != TL_OK) return fail(&err);
  if (tl_system_set_state(robot, q, nq, u, nv, &err) != TL_OK) return fail(&err);
  double lowest = INFINITY;
  for (int i = 0; i < 4; ++i) {
    double p[3], R[9];
    tl_system_frame_pose(robot, foot[i], p, R, NULL);
    if (p[2] < lowest) lowest = p[2];
  }
  q[2] += 0.03 + DROP - lowest;
  if (tl_system_set_state(robot, q, nq, u, nv, &err) != TL_OK) return fail(&err);
  memcpy(q0, q, (size_t)nq * sizeof(double));

  printf("  t (s)  base z (m)  LF foot z (m)  max |q - q0| (rad)\n");
  for (int step = 0; step <= 3000; ++step) {
    /* ---- first half: kinematics, contacts, M and h of the current state */
    if (tl_world_integrate1(world, &err) != TL_OK) return fail(&err);

    /* ---- our controller, reading the current state */
    tl_system_get_state(robot, q, nq, u, nv, NULL);
    tl_system_mass_matrix(robot, M, nv, NULL);   /* nv x nv, row-major */
    tl_system_nonlinear_term(robot, h, nv, NULL); /* nv */
    for (int k = 0; k < 6; ++k) tau[k] = 0.0;    /* the floating base has no motor */
    for (int k = 6; k < nv; ++k) {
      double Mkk = M[k * nv + k];
      int qk = k + 1; /* joint coordinates follow the 7 base coordinates */
      tau[k] = Mkk * OMEGA * OMEGA * (q0[qk] - q[qk]) - 2.0 * ZETA * OMEGA * Mkk * u[k] + h[k];
    }
    /* weight: the ground pushes each foot up with m g / 4; the joints must
     * produce -J^T f for that (J: 3 x nv Jacobian of the foot point) */
    double f[3] = {0.0, 0.0, mass * 9.81 / 4.0};
    for (int i = 0; i < 4; ++i) {
      double p[3], R[9];
      tl_system_frame_pose(robot, foot[i], p, R, NULL);
      tl_system_point_jacobian(robot, foot_body[i], p, Jp, NULL, nv, NULL);
      for (int k = 6; k < nv; ++k) tau[k] -= Jp[k] * f[0] + Jp[nv + k] * f[1] + Jp[2 * nv + k] * f[2];
    }
    if (tl_system_set_generalized_force(robot, tau, nv, &err) != TL_OK) return fail(&err);

    if (step % 250 == 0) {
      double p[3], R[9], worst = 0.0;
      tl_system_frame_pose(robot, foot[0], p, R, NULL);
      for (int k = 7; k < nq; ++k) worst = fmax(worst, fabs(q[k] - q0[k]));
      printf("  %4.2f   %.4f      %.4f         %.2e\n", tl_world_time(world), q[2], p[2], worst);
    }

    /* ---- second half: apply tau, solve contacts, integrate */
    if (tl_world_integrate2(world, &err) != TL_OK) return fail(&err);
  }

  free(q);
  free(q0);
  free(u);
  free(h);
  free(tau);
  free(Jp);
  free(M);
  tl_world_free(world);
  return 0;
}
