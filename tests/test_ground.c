/* Guards: src/contact/collide_plane.c (primitives on the ground), src/contact/cone.c (Coulomb
 * cone), src/contact/constraint_rows.c (contact rows), src/native/step.c (the step). */
/* Talus ground contact: resting, impact, contact counts, Coulomb friction.
 *
 * World: ground plane z = 0 (tl_world_add_ground(w, 0, 0.8); the geoms'
 * default friction is 0.8 too; without a material pair the contact takes the
 * smaller of the two, mu = 0.8),
 * gravity 9.81, dt = 1e-3 s.
 * (a) robots/ball/ball.urdf (sphere r = 0.1 m, 1 kg, tilted by an arbitrary
 *     rotation) dropped from z = 0.5 m: after 2 s its centre rests at
 *     0.1 m within 1e-3 m, penetration below 1e-3 m during the whole run
 *     (impact at 2.8 m/s included), vertical speed below 1e-6 m/s; over a
 *     further 10 s it moves less than 1e-6 m in x, y and z; at rest the
 *     normal impulse per step is m g dt within 1e-6 relative; no bounce:
 *     after the first contact impulse the centre never rises more than
 *     1e-4 m above its resting height.
 * (b) box (0.2 m cube), capsule lying on its side (base rotated 90 deg about
 *     x), cylinder upright and lying, each dropped from 2 cm above its
 *     resting height: after 2 s at the analytic height (half size / radius)
 *     within 1e-3 m, at rest (speed < 1e-6; the upright cylinder 1e-3, a known engine
 *     issue, see main), orientation unchanged (< 1e-6
 *     rad), with the expected number of contacts (box 4, capsule lying 2,
 *     cylinder upright 4, lying 2), each touching (|depth| < 1e-3 m), and
 *     the normal impulses adding up to m g dt within 1e-6 relative (mean
 *     per step over the last 0.5 s).
 * (c) friction: the box resting on the ground with initial velocity 1 m/s
 *     along x: deceleration over the first 0.05 s is mu g within 1 %, it
 *     stops (speed < 1e-6 m/s after 0.5 s), after a sliding distance within
 *     1 % of the discrete-time prediction (v_{k+1} = v_k - mu g dt,
 *     x += dt v_{k+1}: 0.0632 m, v0^2 / (2 mu g) = 0.0637 m in continuous
 *     time), and while it slides every contact impulse lies ON the cone
 *     (|impulse_t| = mu impulse_n within 1e-6: maximal dissipation). With
 *     ground friction 0 (tl_world_add_ground(w, 0, 0)) it keeps sliding at
 *     1 m/s (1e-9) for 1 s, x = 1 m after 1 s (1e-6), the other velocity
 *     components below 1e-4.
 * (d) every contact impulse of every step above lies inside the friction
 *     cone: |impulse_t| <= mu impulse_n (1 + 1e-9), impulse_n >= 0 (both up
 *     to a rounding allowance of 1e-14 |impulse| for the frame rotation);
 *     the normals are +z, the contact points midway between the ground and
 *     the geom (z = -depth / 2) and the pair's mu (tl_contact_info.mu) is
 *     the expected one (0.8, or 0 on the frictionless ground).
 *
 * Usage: test_ground ROBOTS_DIR */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

#define G 9.81
#define DT 1e-3
#define MU 0.8
#define PI 3.14159265358979323846

/* ---------------------------------------------------------- cone checks */

typedef struct cone_stats {
  long ncontacts;          /* contacts checked */
  double worst_ratio;      /* max |t| / (mu n) over contacts with n > 0 */
  double worst_neg_n;      /* most negative n / |impulse| */
  double worst_normal;     /* max |normal - (0,0,1)| */
  double worst_pos_z;      /* max |contact pos z + depth / 2| */
  double worst_mu;         /* max |contact mu - expected| */
  int violations;
  char first[256];
} cone_stats;
static cone_stats cone;

/* Check every contact of the last step; returns the total normal impulse
 * and, in *max_depth, the largest penetration; *nslide counts contacts on
 * the cone boundary, *nstick those with |t| == 0 (only in `mu_tag`). */
static double scan_contacts(tl_world *w, double mu, double *max_depth, double *slide_dev,
                            int *ntouch) {
  int nc = tl_world_ncontact(w);
  double total_n = 0;
  for (int k = 0; k < nc; k++) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) != TL_OK) {
      cone.violations++;
      snprintf(cone.first, sizeof cone.first, "tl_world_contact(%d) failed", k);
      continue;
    }
    double n = c.impulse[0] * c.normal[0] + c.impulse[1] * c.normal[1] + c.impulse[2] * c.normal[2];
    double t[3], tn, mag;
    for (int i = 0; i < 3; i++) t[i] = c.impulse[i] - n * c.normal[i];
    tn = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    mag = sqrt(c.impulse[0] * c.impulse[0] + c.impulse[1] * c.impulse[1] + c.impulse[2] * c.impulse[2]);
    double round = 1e-14 * mag;
    cone.ncontacts++;
    if (n > 0 && c.mu > 0) cone.worst_ratio = fmax(cone.worst_ratio, tn / (c.mu * n));
    if (mag > 0) cone.worst_neg_n = fmin(cone.worst_neg_n, n / mag);
    double dn = sqrt(c.normal[0] * c.normal[0] + c.normal[1] * c.normal[1] +
                     (c.normal[2] - 1) * (c.normal[2] - 1));
    cone.worst_normal = fmax(cone.worst_normal, dn);
    /* the point is midway between the surfaces: the ground z = 0 and the geom's
     * deepest point at z = -depth */
    double dz = fabs(c.pos[2] + 0.5 * c.depth);
    cone.worst_pos_z = fmax(cone.worst_pos_z, dz);
    cone.worst_mu = fmax(cone.worst_mu, fabs(c.mu - mu));
    if (!(n >= -round) || !(tn <= c.mu * n * (1 + 1e-9) + round) || !(dn < 1e-12) ||
        !(dz < 1e-12) || !(fabs(c.mu - mu) < 1e-12)) {
      if (!cone.violations)
        snprintf(cone.first, sizeof cone.first,
                 "t = %g s, contact %d: impulse_n %.17g, |impulse_t| %.17g, mu %g (expected %g), "
                 "normal (%g %g %g), pos z %g, depth %g",
                 tl_world_time(w), k, n, tn, c.mu, mu, c.normal[0], c.normal[1], c.normal[2],
                 c.pos[2], c.depth);
      cone.violations++;
    }
    total_n += n;
    if (max_depth) *max_depth = fmax(*max_depth, c.depth);
    if (slide_dev && n > 0) *slide_dev = fmax(*slide_dev, fabs(tn - mu * n) / (mu * n));
    if (ntouch && fabs(c.depth) < 1e-3) ++*ntouch;
  }
  return total_n;
}

/* ------------------------------------------------------------- helpers */

typedef struct scene {
  tl_model *m;
  tl_world *w;
  tl_system *s;
  double mu;
} scene;

static int scene_open(scene *sc, const char *dir, const char *rel, double ground_mu) {
  memset(sc, 0, sizeof *sc);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_model_load_urdf(path, NULL, &sc->m, &err) == TL_OK &&
           tl_world_create(&sc->w, &err) == TL_OK && tl_world_set_timestep(sc->w, DT, &err) == TL_OK &&
           tl_world_add_ground(sc->w, 0, ground_mu, &err) == TL_OK &&
           tl_world_add_system(sc->w, sc->m, &sc->s, &err) == TL_OK;
  ok = ok && tl_model_nq(sc->m) == 7 && tl_model_nv(sc->m) == 6;
  /* no material pair set: the smaller of the geom's (default 0.8) and the ground's */
  sc->mu = fmin(0.8, ground_mu);
  return TL_CHECK(ok, "%s: setup failed: %s", rel, err.message[0] ? err.message : "not a floating body");
}
static void scene_close(scene *sc) {
  tl_world_free(sc->w);
  tl_model_free(sc->m);
}
static int set_state(scene *sc, const double q[7], const double u[6]) {
  tl_error err;
  memset(&err, 0, sizeof err);
  return TL_CHECK(tl_system_set_state(sc->s, q, 7, u, 6, &err) == TL_OK, "set_state: %s", err.message);
}
static void get_state(scene *sc, double q[7], double u[6]) {
  tl_system_get_state(sc->s, q, 7, u, 6, NULL);
}
static int step(scene *sc, const char *what) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_world_step(sc->w, &err) == TL_OK) return 1;
  TL_CHECK(0, "%s: step at t = %g s failed: %s", what, tl_world_time(sc->w), err.message);
  return 0;
}
static double vnorm(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * v[i];
  return sqrt(s);
}
/* Rotation angle between two unit quaternions. */
static double quat_angle(const double a[4], const double b[4]) {
  double d = fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  return 2.0 * acos(fmin(1.0, d));
}

/* ------------------------------------------------------------------ (a) */

static void ball_drop(const char *dir) {
  scene sc;
  if (!scene_open(&sc, dir, "ball/ball.urdf", MU)) {
    scene_close(&sc);
    return;
  }
  const double r = 0.1, m = 1.0;
  /* an arbitrary orientation: the sphere must not care */
  double qn = sqrt(0.9 * 0.9 + 0.2 * 0.2 + 0.3 * 0.3 + 0.1 * 0.1);
  double q[7] = {0, 0, 0.5, 0.9 / qn, 0.2 / qn, -0.3 / qn, 0.1 / qn}, u[6] = {0};
  set_state(&sc, q, u);
  double max_depth = -INFINITY, z_after_contact_max = -INFINITY, t_contact = -1;
  int ok = 1;
  for (int i = 0; i < 2000 && ok; i++) {
    ok = step(&sc, "ball");
    double n = scan_contacts(sc.w, sc.mu, &max_depth, NULL, NULL);
    get_state(&sc, q, u);
    if (n > 0 && t_contact < 0) t_contact = tl_world_time(sc.w);
    if (t_contact >= 0) z_after_contact_max = fmax(z_after_contact_max, q[2]);
  }
  double q2[7], u2[6];
  get_state(&sc, q2, u2);
  double z_rest = q2[2];
  double t_free = sqrt(2 * 0.4 / G);
  printf("ball: first contact impulse at t = %.3f s (free fall %.3f s), resting centre z = %.12f m "
         "(error %.2e), vz %.2e m/s, max penetration %.2e m, max rise after contact %.2e m\n",
         t_contact, t_free, z_rest, z_rest - r, u2[2], fmax(max_depth, 0), z_after_contact_max - z_rest);
  TL_CHECK(ok, "ball: stepping failed");
  TL_CHECK(fabs(t_contact - t_free) < 0.01, "ball: first contact at %.4f s, free fall predicts %.4f s",
           t_contact, t_free);
  TL_CHECK_NEAR(z_rest, r, 1e-3, "ball resting centre height (m)");
  TL_CHECK(max_depth < 1e-3, "ball: penetration %.3g m >= 1e-3 m", max_depth);
  TL_CHECK(fabs(u2[2]) < 1e-6, "ball: vertical speed %.3g m/s at rest", u2[2]);
  TL_CHECK(z_after_contact_max - z_rest <= 1e-4, "ball bounced: rose %.3g m above the resting height",
           z_after_contact_max - z_rest);

  /* 10 s more: no drift, normal impulse m g dt per step. */
  double worst_imp = 0, worst_v = 0;
  int bad_count = 0;
  for (int i = 0; i < 10000 && ok; i++) {
    ok = step(&sc, "ball at rest");
    int ntouch = 0;
    double n = scan_contacts(sc.w, sc.mu, &max_depth, NULL, &ntouch);
    worst_imp = fmax(worst_imp, fabs(n - m * G * DT) / (m * G * DT));
    if (tl_world_ncontact(sc.w) != 1) bad_count++;
    get_state(&sc, q, u);
    worst_v = fmax(worst_v, vnorm(u, 6));
  }
  double dx = q[0] - q2[0], dy = q[1] - q2[1], dz = q[2] - q2[2];
  printf("ball: over 10 s at rest: drift (%.2e, %.2e, %.2e) m, max speed %.2e, worst normal impulse "
         "error %.2e (relative to m g dt)\n",
         dx, dy, dz, worst_v, worst_imp);
  TL_CHECK(fabs(dx) < 1e-6 && fabs(dy) < 1e-6 && fabs(dz) < 1e-6,
           "ball drifted (%.3g, %.3g, %.3g) m in 10 s at rest", dx, dy, dz);
  TL_CHECK(worst_imp < 1e-6, "ball: normal impulse per step differs from m g dt by %.3g relative",
           worst_imp);
  TL_CHECK(bad_count == 0, "ball: %d steps at rest without exactly one contact", bad_count);
  TL_CHECK(max_depth < 1e-3, "ball: penetration %.3g m", max_depth);
  scene_close(&sc);
}

/* ------------------------------------------------------------------ (b) */

/* rest_speed: the largest |u| accepted after 2 s (see the upright cylinder in main). */
static void shape_rest(const char *dir, const char *rel, const char *label, const double quat[4],
                       double rest_z, int want_contacts, double rest_speed) {
  scene sc;
  if (!scene_open(&sc, dir, rel, MU)) {
    scene_close(&sc);
    return;
  }
  double q[7] = {0.0, 0.0, rest_z + 0.02, quat[0], quat[1], quat[2], quat[3]}, u[6] = {0}, q0[7];
  memcpy(q0, q, sizeof q);
  set_state(&sc, q, u);
  double m = tl_model_total_mass(sc.m), max_depth = -INFINITY, n = 0, nlast = 0;
  int ok = 1, ntouch = 0;
  for (int i = 0; i < 2000 && ok; i++) {
    ok = step(&sc, label);
    ntouch = 0;
    nlast = scan_contacts(sc.w, sc.mu, &max_depth, NULL, &ntouch);
    if (i >= 1500) n += nlast / 500; /* mean normal impulse per step over the last 0.5 s */
  }
  get_state(&sc, q, u);
  int nc = tl_world_ncontact(sc.w);
  double tilt = quat_angle(q + 3, q0 + 3), speed = vnorm(u, 6);
  printf("%-17s rest z %.9f m (analytic %.3f, error %.2e), %d contacts (%d touching), speed %.1e, "
         "tilt %.1e rad, mean sum impulse_n / (m g dt) - 1 = %.1e, horizontal drift %.1e m\n",
         label, q[2], rest_z, q[2] - rest_z, nc, ntouch, speed, tilt, n / (m * G * DT) - 1,
         hypot(q[0], q[1]));
  TL_CHECK(ok, "%s: stepping failed", label);
  TL_CHECK_NEAR(q[2], rest_z, 1e-3, label);
  TL_CHECK(max_depth < 1e-3, "%s: penetration %.3g m", label, max_depth);
  TL_CHECK(speed < rest_speed, "%s: not at rest after 2 s: |u| = %.3g (tolerance %.0e)", label, speed,
           rest_speed);
  TL_CHECK(tilt < 1e-6, "%s: orientation changed by %.3g rad", label, tilt);
  TL_CHECK(hypot(q[0], q[1]) < 1e-6, "%s: slid or rolled %.3g m", label, hypot(q[0], q[1]));
  TL_CHECK(nc == want_contacts && ntouch == want_contacts, "%s: %d contacts (%d touching), want %d",
           label, nc, ntouch, want_contacts);
  TL_CHECK(fabs(n / (m * G * DT) - 1) < 1e-6,
           "%s: mean total normal impulse per step %.10g (last step %.10g), m g dt = %.10g", label, n,
           nlast, m * G * DT);
  scene_close(&sc);
}

/* ------------------------------------------------------------------ (c) */

static void friction_slide(const char *dir) {
  scene sc;
  if (!scene_open(&sc, dir, "box/box.urdf", MU)) {
    scene_close(&sc);
    return;
  }
  const double a = MU * G, v0 = 1.0;
  double q[7] = {0, 0, 0.1, 1, 0, 0, 0}, u[6] = {v0, 0, 0, 0, 0, 0};
  set_state(&sc, q, u);
  double slide_dev = 0, max_depth = -INFINITY, v05 = NAN;
  int ok = 1, nsliding_steps = 0;
  double vpred = v0, xpred = 0; /* discrete-time prediction */
  for (int i = 1; i <= 500 && ok; i++) {
    ok = step(&sc, "box sliding");
    get_state(&sc, q, u);
    if (vpred > 0) { /* still sliding at the start of this step: contacts on the cone */
      double dev = 0;
      if (vpred - a * DT > 0) {
        scan_contacts(sc.w, sc.mu, &max_depth, &dev, NULL);
        slide_dev = fmax(slide_dev, dev);
        nsliding_steps++;
      } else {
        scan_contacts(sc.w, sc.mu, &max_depth, NULL, NULL);
      }
    } else {
      scan_contacts(sc.w, sc.mu, &max_depth, NULL, NULL);
    }
    vpred = fmax(vpred - a * DT, 0.0);
    xpred += DT * vpred;
    if (i == 50) v05 = u[0];
  }
  double decel = (v0 - v05) / 0.05;
  printf("friction: after 0.05 s v = %.9f m/s, deceleration %.6f m/s^2 (mu g = %.6f, error %.2e); "
         "stopped at x = %.6f m (discrete prediction %.6f, continuous %.6f), final speed %.1e; "
         "sliding contacts: max | |impulse_t| / (mu impulse_n) - 1 | = %.1e over %d steps\n",
         v05, decel, a, decel / a - 1, q[0], xpred, v0 * v0 / (2 * a), vnorm(u, 6), slide_dev,
         nsliding_steps);
  TL_CHECK(ok, "friction: stepping failed");
  TL_CHECK(fabs(decel - a) / a < 0.01, "friction: deceleration %.6f m/s^2, mu g = %.6f", decel, a);
  TL_CHECK(vnorm(u, 6) < 1e-6, "friction: the box did not stop: |u| = %.3g", vnorm(u, 6));
  TL_CHECK(fabs(q[0] - xpred) / xpred < 0.01, "friction: slid %.6f m, prediction %.6f m", q[0],
           xpred);
  TL_CHECK(fabs(q[1]) < 1e-6, "friction: sideways drift %.3g m", q[1]);
  TL_CHECK(nsliding_steps > 100 && slide_dev < 1e-6,
           "friction: sliding contact impulses not on the cone: worst deviation %.3g (%d steps)",
           slide_dev, nsliding_steps);
  TL_CHECK(max_depth < 1e-3, "friction: penetration %.3g m", max_depth);
  scene_close(&sc);

  /* Frictionless ground: keeps sliding. */
  if (!scene_open(&sc, dir, "box/box.urdf", 0.0)) {
    scene_close(&sc);
    return;
  }
  q[0] = 0;
  q[1] = 0;
  q[2] = 0.1;
  q[3] = 1;
  q[4] = q[5] = q[6] = 0;
  memset(u, 0, sizeof u);
  u[0] = v0;
  set_state(&sc, q, u);
  double worst_dv = 0, worst_other = 0;
  ok = 1;
  for (int i = 0; i < 1000 && ok; i++) {
    ok = step(&sc, "box on ice");
    scan_contacts(sc.w, sc.mu, NULL, NULL, NULL);
    get_state(&sc, q, u);
    worst_dv = fmax(worst_dv, fabs(u[0] - v0));
    worst_other = fmax(worst_other, vnorm(u + 1, 5));
  }
  printf("frictionless: after 1 s x = %.12f m, max |vx - 1| = %.2e m/s, max |other velocities| = %.2e\n",
         q[0], worst_dv, worst_other);
  TL_CHECK(ok, "frictionless: stepping failed");
  TL_CHECK(worst_dv < 1e-9, "frictionless: vx changed by %.3g m/s", worst_dv);
  /* The other components only see the settling of the normal contact (the
   * solver's relative normal compliance lets the first step sink by about
   * 1e-3 g dt^2; vz ~ 1e-5 m/s): nothing near the 1 m/s of the slide. */
  TL_CHECK(worst_other < 1e-4, "frictionless: other velocities up to %.3g", worst_other);
  TL_CHECK_NEAR(q[0], 1.0, 1e-6, "frictionless: distance after 1 s (m)");
  TL_CHECK_NEAR(q[2], 0.1, 1e-6, "frictionless: height (m)");
  scene_close(&sc);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ROBOTS_DIR\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  cone.worst_neg_n = 0;
  ball_drop(dir);

  const double c = sqrt(0.5);
  const double upright[4] = {1, 0, 0, 0}, lying[4] = {c, c, 0, 0};
  shape_rest(dir, "box/box.urdf", "box", upright, 0.1, 4, 1e-6);
  shape_rest(dir, "capsule/capsule.urdf", "capsule lying", lying, 0.05, 2, 1e-6);
  /* KNOWN ENGINE ISSUE (reported): with the default per-contact solver (and
   * with PGS), an upright cylinder on its 4 rim contacts keeps rocking in a
   * limit cycle that never decays (|w| ~ 5e-5 rad/s, tilt ~ 1e-7 rad,
   * horizontal wander ~ 1e-8 m; the Dantzig solver comes to rest exactly).
   * Until that is fixed the upright cylinder's speed is only held to 1e-3
   * (position rest: height, tilt < 1e-6 rad and drift < 1e-6 m are still
   * checked, and the mean load m g dt). */
  shape_rest(dir, "cylinder/cylinder.urdf", "cylinder upright", upright, 0.15, 4, 1e-3);
  shape_rest(dir, "cylinder/cylinder.urdf", "cylinder lying", lying, 0.05, 2, 1e-6);

  friction_slide(dir);

  printf("cone: %ld contact impulses checked, max |impulse_t| / (mu impulse_n) = %.12f, most negative "
         "impulse_n / |impulse| = %.1e, max normal deviation %.1e, max |contact z + depth/2| %.1e, max |mu - expected| %.1e\n",
         cone.ncontacts, cone.worst_ratio, cone.worst_neg_n, cone.worst_normal, cone.worst_pos_z,
         cone.worst_mu);
  TL_CHECK(cone.ncontacts > 10000, "cone: only %ld contacts seen", cone.ncontacts);
  TL_CHECK(cone.violations == 0, "cone: %d contact impulses outside the friction cone / bad frames; "
           "first: %s", cone.violations, cone.first);
  return tl_test_finish();
}
