/* Guards: src/native/step.c (the step's energy behaviour), src/dynamics/crba.c,
 * src/dynamics/rnea.c. */
/* Talus pendulums: energy behaviour of the step and the analytic period.
 *
 * (1) robots/pendulum/pendulum.urdf: a fixed-base pendulum, m = 1 kg at
 *     l = 0.5 m below a hinge about y, inertia about the hinge
 *     I = m l^2 + 4e-5 = 0.25004 kg m^2 (URDF header). No ground, no
 *     controller, released at rest from theta0 = 0.3 rad, dt = 1e-4 s,
 *     10 s with tl_world_step.
 *     - Semi-implicit (symplectic) Euler does not conserve energy exactly,
 *       but the error stays bounded: max |E - E0| / (m g l) < 1e-3 and no
 *       secular drift (the mean energy of the last second within 1e-4 m g l
 *       of that of the first; an explicit Euler step would gain about
 *       (omega dt)^2 per step, 2 % over these 10 s).
 *     - The period measured from the zero crossings of the angle equals the
 *       exact large-amplitude period T = 4 sqrt(I / (m g l)) K(sin(theta0/2))
 *       (K: complete elliptic integral of the first kind, computed with the
 *       arithmetic-geometric mean, K(k) = pi / (2 AGM(1, sqrt(1 - k^2))))
 *       within 0.1 %; the amplitude stays theta0 within 0.1 %.
 *     - Before stepping: h(q, 0) = m g l sin(theta) (the gravity torque).
 * (2) robots/double_pendulum/double_pendulum.urdf (two uniform 1 kg, 0.5 m
 *     rods), released at rest from (1.0, -0.5) rad, 5 s at dt = 1e-4 s: the
 *     energy stays within 1e-3 |E_rest| of E0 (E_rest = -g sum m_i d_i, the
 *     analogue of the single pendulum's m g l; about 1.4e-3 of the swing
 *     energy E0 - E_rest, the first-order error dt * omega of the method).
 *
 * Usage: test_pendulum ROBOTS_DIR */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

#define G 9.81
#define PI 3.14159265358979323846

static double agm(double a, double b) {
  for (int i = 0; i < 60 && fabs(a - b) > 1e-16 * a; i++) {
    double an = 0.5 * (a + b), bn = sqrt(a * b);
    a = an;
    b = bn;
  }
  return 0.5 * (a + b);
}
/* Complete elliptic integral of the first kind, modulus k. */
static double ellip_k(double k) { return PI / (2.0 * agm(1.0, sqrt(1.0 - k * k))); }

static tl_model *load(const char *dir, const char *rel) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_model_load_urdf(path, NULL, &m, &err);
  TL_CHECK(st == TL_OK && m, "loading %s: %s", path, err.message);
  return st == TL_OK ? m : NULL;
}

static double energy(tl_system *s) {
  return tl_system_kinetic_energy(s) + tl_system_potential_energy(s);
}

static void single_pendulum(const char *dir) {
  tl_model *m = load(dir, "pendulum/pendulum.urdf");
  if (!m) return;
  const double mass = 1.0, l = 0.5, I = 0.25 + 4e-5, theta0 = 0.3, dt = 1e-4, T_end = 10.0;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, dt, &err) == TL_OK &&
                    tl_world_add_system(w, m, &s, &err) == TL_OK,
                "pendulum world: %s", err.message)) {
    tl_world_free(w);
    tl_model_free(m);
    return;
  }
  TL_CHECK(tl_model_nq(m) == 1 && tl_model_nv(m) == 1, "pendulum: nq %d nv %d, want 1 1",
           tl_model_nq(m), tl_model_nv(m));
  TL_CHECK_NEAR(tl_model_total_mass(m), mass, 1e-12, "pendulum total mass");

  double q = theta0, u = 0, h;
  tl_system_set_state(s, &q, 1, &u, 1, &err);
  /* Gravity torque about +y: a positive angle moves the mass to -x, gravity pulls it back. */
  TL_CHECK(tl_system_nonlinear_term(s, &h, 1, &err) == TL_OK, "h: %s", err.message);
  TL_CHECK_NEAR(h, mass * G * l * sin(theta0), 1e-12, "pendulum h(q, 0) = m g l sin(theta0)");

  const double E0 = energy(s), mgl = mass * G * l;
  /* The rest state (theta = 0) has PE = -m g l; E0 = -m g l cos(theta0). */
  TL_CHECK_NEAR(E0, -mgl * cos(theta0), 1e-12, "pendulum initial energy -m g l cos(theta0)");

  int nsteps = (int)lround(T_end / dt);
  double max_dE = 0, prev = theta0, tprev = 0;
  double first_up = -1, last_up = -1; /* upward (negative -> positive) zero crossings */
  int nup = 0;
  double amp_max = 0, amp_min = INFINITY, cur_peak = 0;
  double e_first = 0, e_last = 0;
  int n_first = 0, n_last = 0, ok = 1;
  for (int i = 1; i <= nsteps && ok; i++) {
    if (tl_world_step(w, &err) != TL_OK) {
      ok = TL_CHECK(0, "pendulum step %d: %s", i, err.message);
      break;
    }
    tl_system_get_state(s, &q, 1, &u, 1, NULL);
    double t = i * dt, E = energy(s);
    max_dE = fmax(max_dE, fabs(E - E0));
    if (t <= 1.0) e_first += E, n_first++;
    if (t > T_end - 1.0) e_last += E, n_last++;
    if (prev < 0 && q >= 0) {
      double tc = tprev + dt * (-prev) / (q - prev); /* linear interpolation */
      if (nup == 0) first_up = tc;
      last_up = tc;
      nup++;
    }
    /* amplitude: extreme of |theta| between sign changes */
    if ((prev < 0) != (q < 0)) {
      if (cur_peak > 0) {
        amp_max = fmax(amp_max, cur_peak);
        amp_min = fmin(amp_min, cur_peak);
      }
      cur_peak = 0;
    }
    cur_peak = fmax(cur_peak, fabs(q));
    prev = q;
    tprev = t;
  }
  double T_exact = 4.0 * sqrt(I / mgl) * ellip_k(sin(0.5 * theta0));
  double T_small = 2.0 * PI * sqrt(I / mgl);
  double T_meas = nup >= 2 ? (last_up - first_up) / (nup - 1) : NAN;
  printf("pendulum: theta0 %.2f rad, dt %g s, %g s: max |E - E0| / (m g l) = %.3e\n", theta0, dt,
         T_end, max_dE / mgl);
  printf("pendulum: period measured %.9f s over %d periods, exact %.9f s (small-angle %.6f s), "
         "relative error %.3e\n",
         T_meas, nup - 1, T_exact, T_small, (T_meas - T_exact) / T_exact);
  printf("pendulum: amplitude between %.9f and %.9f rad (theta0 %.2f)\n", amp_min, amp_max, theta0);
  TL_CHECK(max_dE / mgl < 1e-3, "pendulum: max |E - E0| / (m g l) = %.3g >= 1e-3", max_dE / mgl);
  double drift = fabs(e_last / n_last - e_first / n_first) / mgl;
  printf("pendulum: mean energy, last second vs first: %.3e (m g l)\n", drift);
  TL_CHECK(drift < 1e-4, "pendulum: secular energy drift %.3g (m g l) over %g s", drift, T_end);
  TL_CHECK(nup >= 6, "pendulum: only %d upward zero crossings in %g s", nup, T_end);
  TL_CHECK(fabs(T_meas - T_exact) / T_exact < 1e-3,
           "pendulum: period %.9f s vs exact %.9f s (relative %.3g >= 1e-3)", T_meas, T_exact,
           (T_meas - T_exact) / T_exact);
  /* The small-angle period is 0.56 % shorter at 0.3 rad: the test tells the two apart. */
  TL_CHECK(fabs(T_meas - T_small) / T_small > 3e-3,
           "pendulum: period %.9f s is the small-angle one %.9f s, not the large-amplitude one",
           T_meas, T_small);
  TL_CHECK(fabs(amp_max - theta0) / theta0 < 1e-3 && fabs(amp_min - theta0) / theta0 < 1e-3,
           "pendulum: amplitude in [%.6f, %.6f], want %.2f within 0.1 %%", amp_min, amp_max, theta0);
  tl_world_free(w);
  tl_model_free(m);
}

static void double_pendulum(const char *dir) {
  tl_model *m = load(dir, "double_pendulum/double_pendulum.urdf");
  if (!m) return;
  const double dt = 1e-4, T_end = 5.0;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, dt, &err) == TL_OK &&
                    tl_world_add_system(w, m, &s, &err) == TL_OK,
                "double pendulum world: %s", err.message) ||
      !TL_CHECK(tl_model_nq(m) == 2 && tl_model_nv(m) == 2, "double pendulum: nq %d nv %d",
                tl_model_nq(m), tl_model_nv(m))) {
    tl_world_free(w);
    tl_model_free(m);
    return;
  }
  double q[2] = {0, 0}, u[2] = {0, 0};
  tl_system_set_state(s, q, 2, u, 2, &err);
  const double E_rest = energy(s);
  /* Rest: rod COMs at -0.25 and -0.75 m: PE = -9.81 (0.25 + 0.75). */
  TL_CHECK_NEAR(E_rest, -G * 1.0, 1e-12, "double pendulum rest energy");
  q[0] = 1.0;
  q[1] = -0.5;
  tl_system_set_state(s, q, 2, u, 2, &err);
  const double E0 = energy(s);
  /* COM heights: -0.25 cos q1, -0.5 cos q1 - 0.25 cos(q1 + q2). */
  double pe = G * (-0.25 * cos(q[0]) - 0.5 * cos(q[0]) - 0.25 * cos(q[0] + q[1]));
  TL_CHECK_NEAR(E0, pe, 1e-12, "double pendulum initial potential energy (hand formula)");
  const double swing = E0 - E_rest;
  int nsteps = (int)lround(T_end / dt), ok = 1;
  double max_dE = 0, max_q1 = 0, e_first = 0, e_last = 0;
  int n_first = 0, n_last = 0;
  for (int i = 1; i <= nsteps && ok; i++) {
    if (tl_world_step(w, &err) != TL_OK) {
      ok = TL_CHECK(0, "double pendulum step %d: %s", i, err.message);
      break;
    }
    double E = energy(s);
    max_dE = fmax(max_dE, fabs(E - E0));
    if (i * dt <= 1.0) e_first += E, n_first++;
    if (i * dt > T_end - 1.0) e_last += E, n_last++;
    tl_system_get_state(s, q, 2, u, 2, NULL);
    max_q1 = fmax(max_q1, fabs(q[0]));
  }
  /* Normalised like the single pendulum: by |E_rest| = g sum m_i d_i (d_i: COM depth at rest),
   * which is m g l for the single pendulum. */
  const double scale = fabs(E_rest);
  double drift = fabs(e_last / n_last - e_first / n_first) / scale;
  printf("double pendulum: from (1.0, -0.5) rad, dt %g s, %g s: max |E - E0| = %.3e J = %.3e |E_rest| "
         "(%.3e of the swing energy %.4f J); mean energy last second vs first %.3e |E_rest|\n",
         dt, T_end, max_dE, max_dE / scale, max_dE / swing, swing, drift);
  TL_CHECK(ok && max_dE / scale < 1e-3, "double pendulum: max |E - E0| / |E_rest| = %.3g >= 1e-3",
           max_dE / scale);
  /* It really moved: the first joint swung through its initial angle and back. */
  TL_CHECK(max_q1 >= 0.99, "double pendulum: max |q1| %.3f, expected about 1", max_q1);
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ROBOTS_DIR\n", argv[0]);
    return 2;
  }
  single_pendulum(argv[1]);
  double_pendulum(argv[1]);
  return tl_test_finish();
}
