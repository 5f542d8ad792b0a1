/* hinge2_car: a car with hinge-2 front wheels drives around a circle.
 *
 * robots/hinge2_car/hinge2_car.urdf has a floating chassis, two front wheels
 * on hinge2 joints (ODE's hinge-2, a Talus URDF extension: steering about the
 * vertical axis 1, the wheel about the lateral axis 2) and two rear wheels on
 * continuous joints. Each hinge2 joint NAME compiles into the DOFs NAME
 * (steering), NAME_wheel and, with <suspension>, NAME_suspension (README.md,
 * "URDF extensions").
 *
 * The car drives at a low constant speed v with a fixed steering angle delta:
 * the implicit PD holds each steering DOF at its Ackermann angle (the inner
 * wheel atan(L / (R - t/2)), the outer atan(L / (R + t/2)), so neither front
 * wheel scrubs), the rear wheels are velocity-driven (PD with kp = 0) at
 * v (R -+ t/2) / (R r) (an electronic differential), the front wheels roll
 * freely. The kinematic bicycle model says the midpoint of the rear axle
 * then runs on a circle of radius
 *     R = L / tan(delta)       (L the wheelbase, t the rear track, r the wheel radius)
 * (Rajamani, Vehicle Dynamics and Control, 2nd ed., 2012, sec. 2.2). The
 * program fits a circle to that midpoint's path (Kasa's algebraic fit: least
 * squares of x^2 + y^2 + D x + E y + F = 0) after a 3 s start and compares.
 *
 * Usage: ./build/hinge2_car [URDF] [delta rad] [v m/s] [duration s] [engine]
 *   defaults: robots/hinge2_car/hinge2_car.urdf, 0.3 rad, 0.5 m/s, 36 s
 *   (a little over one lap), engine talus (or ode: the plugin builds each
 *   hinge2 as a dJointHinge2). Exit status 0 when the fitted radius is within
 *   5 % of L / tan(delta), 1 otherwise or on an error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talus/talus.h>

#ifndef TALUS_SOURCE_DIR
#define TALUS_SOURCE_DIR "."
#endif

static int fail(const tl_error *err) {
  fprintf(stderr, "error: %s\n", err->message);
  return 1;
}

/* Body carried by the joint named `name`, or -1. */
static int body_of_joint(const tl_model *m, const char *name) {
  for (int b = 0; b < tl_model_nbody(m); ++b)
    if (strcmp(tl_model_joint_name(m, b), name) == 0) return b;
  return -1;
}

/* Solve the 3x3 system A x = b (Gaussian elimination, partial pivoting). */
static int solve3(double A[9], double b[3], double x[3]) {
  for (int c = 0; c < 3; ++c) {
    int p = c;
    for (int r = c + 1; r < 3; ++r)
      if (fabs(A[3 * r + c]) > fabs(A[3 * p + c])) p = r;
    if (fabs(A[3 * p + c]) < 1e-300) return -1;
    for (int k = 0; k < 3; ++k) {
      double t = A[3 * c + k];
      A[3 * c + k] = A[3 * p + k], A[3 * p + k] = t;
    }
    double t = b[c];
    b[c] = b[p], b[p] = t;
    for (int r = c + 1; r < 3; ++r) {
      double f = A[3 * r + c] / A[3 * c + c];
      for (int k = c; k < 3; ++k) A[3 * r + k] -= f * A[3 * c + k];
      b[r] -= f * b[c];
    }
  }
  for (int c = 2; c >= 0; --c) {
    double s = b[c];
    for (int k = c + 1; k < 3; ++k) s -= A[3 * c + k] * x[k];
    x[c] = s / A[3 * c + c];
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *urdf = argc > 1 ? argv[1] : TALUS_SOURCE_DIR "/robots/hinge2_car/hinge2_car.urdf";
  double delta = argc > 2 ? atof(argv[2]) : 0.3, speed = argc > 3 ? atof(argv[3]) : 0.5;
  double duration = argc > 4 ? atof(argv[4]) : 36.0;
  const char *engine = argc > 5 ? argv[5] : "talus";
  if (!(fabs(delta) > 0.01 && fabs(delta) < 0.6) || !(speed > 0) || !(duration > 3.0)) {
    fprintf(stderr, "error: expected 0.01 < |delta| < 0.6 rad, v > 0 m/s, duration > 3 s\n");
    return 1;
  }

  tl_error err;
  tl_model *model = NULL;
  if (tl_model_load_urdf(urdf, NULL, &model, &err) != TL_OK) return fail(&err);
  tl_world *world = NULL;
  tl_system *car = NULL;
  if (tl_world_create_with_engine(&world, engine, &err) != TL_OK || tl_world_add_ground(world, 0.0, 0.8, &err) != TL_OK ||
      tl_world_add_system(world, model, &car, &err) != TL_OK)
    return fail(&err);
  tl_model_free(model);
  const tl_model *m = tl_system_model(car);
  int nq = tl_system_nq(car), nv = tl_system_nv(car);

  /* The DOFs: steering and wheels by joint name (a hinge2 joint NAME gives NAME and NAME_wheel). */
  const char *names[6] = {"front_left", "front_right", "front_left_wheel", "front_right_wheel", "rear_left",
                          "rear_right"};
  int body[6];
  for (int i = 0; i < 6; ++i)
    if ((body[i] = body_of_joint(m, names[i])) < 0) {
      fprintf(stderr, "error: %s has no joint '%s': expected the hinge2 car of robots/hinge2_car\n", urdf,
              names[i]);
      return 1;
    }

  /* Start at rest at the default configuration, the wheels 2 mm above the ground. */
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  double *kp = calloc((size_t)nv, sizeof(double)), *kd = calloc((size_t)nv, sizeof(double));
  double *qt = calloc((size_t)nq, sizeof(double)), *ut = calloc((size_t)nv, sizeof(double));
  if (!q || !u || !kp || !kd || !qt || !ut) return 1;
  if (tl_model_default_q(m, q, nq, &err) != TL_OK || tl_system_set_state(car, q, nq, u, nv, &err) != TL_OK)
    return fail(&err);

  /* Geometry at the start: wheelbase L (front to rear axle midpoints along
   * the chassis x axis), rear track t, wheel radius r (the rear wheel's geom). */
  double p[6][3];
  for (int i = 0; i < 6; ++i)
    if (tl_system_body_pose(car, body[i], p[i], NULL, &err) != TL_OK) return fail(&err);
  double L = 0.5 * (p[2][0] + p[3][0]) - 0.5 * (p[4][0] + p[5][0]);
  double track = hypot(p[4][0] - p[5][0], p[4][1] - p[5][1]), r = 0.0, size[3];
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    int gb;
    tl_geom_type type;
    if (tl_model_geom(m, g, &type, &gb, size, NULL, NULL, &err) != TL_OK) return fail(&err);
    if (gb == body[4]) r = size[0]; /* sphere or cylinder radius */
  }
  double lowest = p[4][2] - r;
  q[2] += 0.002 - lowest;
  if (tl_system_set_state(car, q, nq, u, nv, &err) != TL_OK) return fail(&err);

  /* Bicycle model and the Ackermann split (signed R: positive turns left). */
  double Rc = L / tan(delta);
  double steer_left = atan(L / (Rc - 0.5 * track)), steer_right = atan(L / (Rc + 0.5 * track));
  double w_left = speed * (Rc - 0.5 * track) / (Rc * r), w_right = speed * (Rc + 0.5 * track) / (Rc * r);
  printf("engine %s\n", engine);
  printf("%s: wheelbase L %.3f m, rear track %.3f m, wheel radius %.3f m\n", urdf, L, track, r);
  printf("delta %.3f rad, v %.2f m/s: bicycle model R = L / tan(delta) = %.4f m\n", delta, speed, fabs(Rc));
  printf("steering (Ackermann) left %.4f right %.4f rad; rear wheels %.3f %.3f rad/s\n", steer_left,
         steer_right, w_left, w_right);

  /* The PD: steering held (kp 2000 N m/rad, kd 50 N m s/rad), rear wheels
   * velocity-driven (kd 20 N m s/rad, the URDF's 20 N m effort limit). */
  if (tl_system_get_pd_targets(car, qt, nq, ut, nv, &err) != TL_OK) return fail(&err);
  const double target[6] = {steer_left, steer_right, 0, 0, 0, 0}, speeds[6] = {0, 0, 0, 0, w_left, w_right};
  for (int i = 0; i < 6; ++i) {
    int qi = tl_model_joint_q_index(m, body[i]), ui = tl_model_joint_u_index(m, body[i]);
    kp[ui] = i < 2 ? 2000.0 : 0.0;
    kd[ui] = i < 2 ? 50.0 : i < 4 ? 0.0 : 20.0;
    qt[qi] = target[i];
    ut[ui] = speeds[i];
  }
  if (tl_system_set_pd_gains(car, kp, kd, nv, &err) != TL_OK ||
      tl_system_set_pd_targets(car, qt, nq, ut, nv, &err) != TL_OK)
    return fail(&err);

  /* Drive; fit the circle to the rear axle midpoint after 3 s: sums of the
   * normal equations of [x y 1] (D E F)^T = -(x^2 + y^2). */
  double dt = tl_world_timestep(world), A[9] = {0}, b[3] = {0};
  long nstep = lround(duration / dt), nfit = 0;
  for (long s = 0; s < nstep; ++s) {
    if (tl_world_step(world, &err) != TL_OK) return fail(&err);
    if (tl_world_time(world) < 3.0) continue;
    double a[3], c[3];
    if (tl_system_body_pose(car, body[4], a, NULL, &err) != TL_OK ||
        tl_system_body_pose(car, body[5], c, NULL, &err) != TL_OK)
      return fail(&err);
    double x = 0.5 * (a[0] + c[0]), y = 0.5 * (a[1] + c[1]), row[3] = {x, y, 1.0}, rhs = -(x * x + y * y);
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 3; ++k) A[3 * i + k] += row[i] * row[k];
      b[i] += row[i] * rhs;
    }
    nfit++;
    if (s % 3000 == 0) printf("  t %5.1f s  rear axle midpoint (%7.3f, %7.3f) m\n", tl_world_time(world), x, y);
  }
  double sol[3];
  if (nfit < 3 || solve3(A, b, sol) != 0) {
    fprintf(stderr, "error: too few samples for a circle fit\n");
    return 1;
  }
  double cx = -0.5 * sol[0], cy = -0.5 * sol[1], radius = sqrt(cx * cx + cy * cy - sol[2]);
  double rel = radius / fabs(Rc) - 1.0;
  printf("fitted circle: centre (%.4f, %.4f) m, radius %.4f m over %ld samples\n", cx, cy, radius, nfit);
  printf("radius / (L / tan(delta)) - 1 = %+.3f %% (tolerance 5 %%)\n", 100.0 * rel);

  free(q), free(u), free(kp), free(kd), free(qt), free(ut);
  tl_world_free(world);
  return fabs(rel) <= 0.05 ? 0 : 1;
}
