/* Guards: controllers/trot.c (trotting on flat ground), src/native/step.c and
 * src/contact/constraint_rows.c (the step with contacts). */
/* The trot controller (controllers/trot.h) on flat ground.
 *
 * A quadruped starts at its reference configuration (q = 0 joints, identity
 * base), its lowest primitive collision geom 1 cm above the ground z = 0
 * (mu 0.8), dt = 1e-3 s, and trots forward at 0.5 m/s for 20 s with the
 * default parameters (0.5 s on four feet, 1 s speed ramp). Asserted:
 *   - every step succeeds (no divergence);
 *   - the foot search found the 4 feet, one per quadrant;
 *   - it never falls: every contact is on one of the four foot bodies, and
 *     from t = 2 s on the base height stays within +-15 % of the nominal
 *     standing height (controller's foot depth + foot radius);
 *   - |roll| and |pitch| of the base < 0.3 rad at every step;
 *   - mean forward speed (base x displacement over t = 4..20 s) within 20 %
 *     of the command, and mean sideways speed < 0.1 m/s.
 * The figures are printed. The step loop runs after init with no further
 * controller allocation (tl_trot_update never allocates).
 *
 * Usage: test_trot talus ROBOTS_DIR          robots/talus_quadruped
 *        test_trot anymal SHARED_ROBOTS_DIR  ANYmal C of the shared corpus
 *   ($TALUS_SHARED/robots overrides SHARED_ROBOTS_DIR); exit 77 (skipped)
 *   when the shared corpus is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"
#include "trot.h"

#define DT 1e-3
#define T_END 20.0
#define SPEED 0.5
#define T_HEIGHT_FROM 2.0 /* s: height band checked from here on */
#define T_SPEED_FROM 4.0  /* s: mean speed measured from here on */

static void quat_rp(const double q[4], double *roll, double *pitch) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double r20 = 2 * (x * z - w * y), r21 = 2 * (y * z + w * x), r22 = 1 - 2 * (x * x + y * y);
  *roll = atan2(r21, r22);
  *pitch = -asin(fmax(-1.0, fmin(1.0, r20)));
}

/* Lift the base so that the lowest primitive geom is 1 cm above z = 0. */
static int place(tl_system *s, double *q, int nq, double *u, int nv) {
  const tl_model *m = tl_system_model(s);
  double minz = INFINITY;
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    double lo[3], hi[3];
    if (tl_system_geom_aabb(s, g, lo, hi, NULL) == TL_OK && lo[2] < minz) minz = lo[2];
  }
  if (!isfinite(minz)) return -1;
  q[2] += 0.01 - minz;
  return tl_system_set_state(s, q, nq, u, nv, NULL) == TL_OK ? 0 : -1;
}

static int is_foot_body(const tl_trot_controller *c, int body) {
  for (int l = 0; l < 4; ++l)
    if (c->leg[l].body == body) return 1;
  return 0;
}

static void trot(const char *path, const char *label) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_trot_controller c;
  memset(&c, 0, sizeof c);
  tl_error err;
  memset(&err, 0, sizeof err);
  double *q = NULL, *u = NULL;
  int ok = tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK &&
           tl_world_add_ground(w, 0.0, 0.8, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "%s: setup failed: %s", label, err.message)) goto done;
  int nq = tl_system_nq(s), nv = tl_system_nv(s);
  q = calloc((size_t)nq, sizeof(double));
  u = calloc((size_t)nv, sizeof(double));
  if (!TL_CHECK(q && u, "%s: out of memory", label)) goto done;
  ok = tl_model_reference_q(m, q, nq, &err) == TL_OK &&
       tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK && place(s, q, nq, u, nv) == 0;
  if (!TL_CHECK(ok, "%s: initial placement failed: %s", label, err.message)) goto done;

  tl_trot_params p = tl_trot_default_params();
  p.speed = SPEED;
  if (!TL_CHECK(tl_trot_init(&c, s, &p, &err) == TL_OK, "%s: tl_trot_init: %s", label, err.message))
    goto done;
  static const char *const leg_names[4] = {"LF", "RF", "LH", "RH"};
  for (int l = 0; l < 4; ++l) {
    TL_CHECK((c.leg[l].start[0] > 0) == (l == TL_TROT_LF || l == TL_TROT_RF) &&
                 (c.leg[l].start[1] > 0) == (l == TL_TROT_LF || l == TL_TROT_LH),
             "%s: foot %s (body '%s') at (%.3f, %.3f) is in the wrong quadrant", label,
             leg_names[l], tl_model_body_name(m, c.leg[l].body), c.leg[l].start[0],
             c.leg[l].start[1]);
  }
  double h_nom = c.depth + c.leg[0].radius;

  long long nsteps = llround(T_END / DT);
  double hmin = INFINITY, hmax = -INFINITY, rp_max = 0.0, x0 = NAN, y0 = NAN, t0 = NAN;
  int bad_contact = 0, step_fail = 0;
  char bad_link[128] = "";
  for (long long k = 0; k < nsteps; ++k) {
    if (tl_world_integrate1(w, &err) != TL_OK || tl_trot_update(&c, tl_world_time(w), &err) != TL_OK ||
        tl_world_integrate2(w, &err) != TL_OK) {
      step_fail = 1;
      break;
    }
    double t = tl_world_time(w);
    tl_system_get_state(s, q, nq, u, nv, NULL);
    double roll, pitch;
    quat_rp(q + 3, &roll, &pitch);
    rp_max = fmax(rp_max, fmax(fabs(roll), fabs(pitch)));
    if (t >= T_HEIGHT_FROM) {
      hmin = fmin(hmin, q[2]);
      hmax = fmax(hmax, q[2]);
    }
    if (t >= T_SPEED_FROM && isnan(t0)) {
      t0 = t;
      x0 = q[0];
      y0 = q[1];
    }
    for (int j = 0; j < tl_world_ncontact(w); ++j) {
      tl_contact_info ci;
      if (tl_world_contact(w, j, &ci, NULL) != TL_OK) continue;
      if (ci.system == tl_system_index(s) && !is_foot_body(&c, ci.body) && !bad_contact) {
        bad_contact = 1;
        snprintf(bad_link, sizeof bad_link, "%s at t = %.3f s", tl_model_body_name(m, ci.body), t);
      }
    }
  }
  if (!TL_CHECK(!step_fail, "%s: a step failed at t = %.3f s: %s", label, tl_world_time(w), err.message))
    goto done;
  double T = tl_world_time(w) - t0;
  double vx = (q[0] - x0) / T, vy = (q[1] - y0) / T;
  printf("%s: base height [%.4f, %.4f] m (nominal %.4f), max |roll|,|pitch| %.4f rad, mean "
         "velocity (%.4f, %.4f) m/s over %.1f s\n",
         label, hmin, hmax, h_nom, rp_max, vx, vy, T);
  TL_CHECK(!bad_contact, "%s: a non-foot body touched the ground: %s", label, bad_link);
  TL_CHECK(hmin > 0.85 * h_nom && hmax < 1.15 * h_nom,
           "%s: base height [%.4f, %.4f] m outside +-15%% of %.4f m", label, hmin, hmax, h_nom);
  TL_CHECK(rp_max < 0.3, "%s: max |roll| or |pitch| %.4f rad >= 0.3", label, rp_max);
  TL_CHECK(fabs(vx - SPEED) <= 0.2 * SPEED, "%s: mean forward speed %.4f m/s not within 20%% of %.2f",
           label, vx, SPEED);
  TL_CHECK(fabs(vy) < 0.1, "%s: mean sideways speed %.4f m/s", label, vy);
done:
  tl_trot_free(&c);
  free(q);
  free(u);
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_trot talus ROBOTS_DIR | anymal SHARED_ROBOTS_DIR\n");
    return 2;
  }
  char path[4096];
  if (strcmp(argv[1], "talus") == 0) {
    snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", argv[2]);
    trot(path, "talus_quadruped");
    return tl_test_finish();
  }
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0]) snprintf(path, sizeof path, "%s/robots/anymal_c/urdf/anymal.urdf", env);
  else snprintf(path, sizeof path, "%s/anymal_c/urdf/anymal.urdf", argv[2]);
  FILE *f = fopen(path, "r");
  if (!f) {
    tl_test_skip("ANYmal C not found at %s (shared robot corpus absent)", path);
    tl_test_finish();
    return TL_TEST_SKIP_CODE;
  }
  fclose(f);
  trot(path, "anymal_c");
  return tl_test_finish();
}
