/* Guards: controllers/impedance.c (joint impedance, gravity compensation, parameters). */
/* The joint impedance controller (controllers/impedance.h) on fixed-base arms.
 *
 * Per arm, dt = 1e-3 s, no ground, each run from rest:
 *   - hold: the arm starts at the pose q* under gravity with q_d = q*; with
 *     gravity compensation the error stays < 1e-3 rad for 2 s (it is exact:
 *     the compensation cancels gravity at q*); without it the arm sags by
 *     more than 1e-3 rad (so the check is not empty);
 *   - step: q_d jumps by 0.2 rad on every joint at t = 0; the error falls
 *     below 1e-3 rad within 2.5 s and stays there, the overshoot is < 30 %
 *     of the step, and the arm is at rest at the end (|u| < 1e-2 rad/s);
 *   - the same step with the engine's implicit PD (params.implicit = 1);
 *   - tl_impedance_params_set refuses unknown keys and bad values.
 * Default gains: k = 100 N m/rad and damping ratio 0.7 (D from diag(M)).
 * Arms: robots/double_pendulum (always) and the KUKA iiwa of the shared
 * corpus (skipped, exit 77, when it is absent).
 *
 * Usage: test_impedance pendulum ROBOTS_DIR | iiwa SHARED_ROBOTS_DIR
 *   ($TALUS_SHARED/robots overrides SHARED_ROBOTS_DIR). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impedance.h"
#include "talus/talus.h"
#include "test_util.h"

#define DT 1e-3
#define STEP 0.2
#define MAXDOF 16

typedef struct result {
  int ok;
  double hold_err;    /* largest |q - q_d| over the run (hold) */
  double settle_time; /* last time the error was >= 1e-3 rad (step), s */
  double overshoot;   /* largest overshoot past the target along the step, rad */
  double final_err, final_speed;
} result;

/* Run `T` s from rest at q_star with q_d = q_star + offset (every DOF). */
static result run(tl_model *m, const char *label, const double *q_star, double offset,
                  const tl_impedance_params *p, double T) {
  result r = {0, 0, 0, 0, 0, 0};
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_impedance_controller c;
  memset(&c, 0, sizeof c);
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, DT, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  int nq = ok ? tl_system_nq(s) : 0, nv = ok ? tl_system_nv(s) : 0;
  double q[MAXDOF], u[MAXDOF] = {0}, qd[MAXDOF];
  ok = ok && nq == nv && nv <= MAXDOF;
  for (int i = 0; ok && i < nq; ++i) qd[i] = q_star[i] + offset;
  ok = ok && tl_system_set_state(s, q_star, nq, u, nv, &err) == TL_OK &&
       tl_impedance_init(&c, s, p, qd, nq, &err) == TL_OK;
  if (!TL_CHECK(ok, "%s: setup failed: %s", label, err.message)) goto done;
  long long n = llround(T / DT);
  for (long long k = 0; k < n; ++k) {
    if (tl_world_integrate1(w, &err) != TL_OK || tl_impedance_update(&c, &err) != TL_OK ||
        tl_world_integrate2(w, &err) != TL_OK) {
      TL_CHECK(0, "%s: step %lld failed: %s", label, k, err.message);
      goto done;
    }
    tl_system_get_state(s, q, nq, u, nv, NULL);
    double e = 0, spd = 0;
    for (int i = 0; i < nq; ++i) {
      e = fmax(e, fabs(q[i] - qd[i]));
      spd = fmax(spd, fabs(u[i]));
      if (offset != 0.0) r.overshoot = fmax(r.overshoot, (q[i] - qd[i]) / offset);
    }
    r.hold_err = fmax(r.hold_err, e);
    if (e >= 1e-3) r.settle_time = tl_world_time(w);
    r.final_err = e;
    r.final_speed = spd;
  }
  r.overshoot *= fabs(offset);
  r.ok = 1;
done:
  tl_impedance_free(&c);
  tl_world_free(w);
  return r;
}

static void check_arm(tl_model *m, const char *label, const double *q_star) {
  tl_impedance_params p = tl_impedance_default_params();
  result r = run(m, label, q_star, 0.0, &p, 2.0);
  printf("%s: hold under gravity, compensated: max error %.3e rad\n", label, r.hold_err);
  TL_CHECK(r.ok && r.hold_err < 1e-3, "%s: hold error %.3g rad >= 1e-3", label, r.hold_err);

  tl_impedance_params pg = p;
  pg.gravity = 0;
  result rg = run(m, label, q_star, 0.0, &pg, 2.0);
  printf("%s: hold under gravity, not compensated: max error %.3e rad\n", label, rg.hold_err);
  TL_CHECK(rg.ok && rg.hold_err > 1e-3, "%s: without compensation the arm should sag (%.3g rad)",
           label, rg.hold_err);

  for (int implicit = 0; implicit <= 1; ++implicit) {
    tl_impedance_params ps = p;
    ps.implicit = implicit;
    const char *mode = implicit ? "implicit" : "explicit";
    result rs = run(m, label, q_star, STEP, &ps, 3.0);
    printf("%s: %.1f rad step (%s): settled to 1e-3 rad at %.3f s, overshoot %.3e rad, final error "
           "%.2e rad, final speed %.2e rad/s\n",
           label, STEP, mode, rs.settle_time, rs.overshoot, rs.final_err, rs.final_speed);
    TL_CHECK(rs.ok && rs.settle_time < 2.5, "%s (%s): still off by >= 1e-3 rad at %.3f s", label, mode,
             rs.settle_time);
    TL_CHECK(rs.ok && rs.overshoot < 0.3 * STEP, "%s (%s): overshoot %.3g rad", label, mode,
             rs.overshoot);
    TL_CHECK(rs.ok && rs.final_speed < 1e-2, "%s (%s): still moving at %.3g rad/s", label, mode,
             rs.final_speed);
  }
}

static void check_params(void) {
  tl_impedance_params p = tl_impedance_default_params();
  TL_CHECK(tl_impedance_params_set(&p, "k", 250, NULL) == TL_OK && p.k == 250, "params: k");
  TL_CHECK(tl_impedance_params_set(&p, "implicit", 1, NULL) == TL_OK && p.implicit == 1,
           "params: implicit");
  TL_CHECK(tl_impedance_params_set(&p, "k", -1, NULL) == TL_ERR_ARGUMENT, "params: k < 0 refused");
  TL_CHECK(tl_impedance_params_set(&p, "gravity", 0.5, NULL) == TL_ERR_ARGUMENT,
           "params: gravity 0.5 refused");
  TL_CHECK(tl_impedance_params_set(&p, "stiffness", 1, NULL) == TL_ERR_ARGUMENT,
           "params: unknown key refused");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_impedance pendulum ROBOTS_DIR | iiwa SHARED_ROBOTS_DIR\n");
    return 2;
  }
  char path[4096];
  tl_error err;
  tl_model *m = NULL;
  if (strcmp(argv[1], "pendulum") == 0) {
    check_params();
    snprintf(path, sizeof path, "%s/double_pendulum/double_pendulum.urdf", argv[2]);
    if (TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "%s", err.message)) {
      const double q_star[2] = {0.8, -0.5}; /* both links well away from hanging straight */
      check_arm(m, "double_pendulum", q_star);
    }
    tl_model_free(m);
    return tl_test_finish();
  }
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0]) snprintf(path, sizeof path, "%s/robots/kuka_iiwa/model.urdf", env);
  else snprintf(path, sizeof path, "%s/kuka_iiwa/model.urdf", argv[2]);
  FILE *f = fopen(path, "r");
  if (!f) {
    tl_test_skip("KUKA iiwa not found at %s (shared robot corpus absent)", path);
    tl_test_finish();
    return TL_TEST_SKIP_CODE;
  }
  fclose(f);
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FIXED;
  if (TL_CHECK(tl_model_load_urdf(path, &o, &m, &err) == TL_OK, "%s", err.message)) {
    const double q_star[7] = {0.2, 0.6, -0.3, -1.4, 0.4, 0.9, 0.1};
    check_arm(m, "iiwa", q_star);
  }
  tl_model_free(m);
  return tl_test_finish();
}
