/* Guards: src/contact/constraint_rows.c, solver_gs.c, solver_direct.c (contact rows, per-contact / PGS / Dantzig / direct solves,
 * restitution pass, deferred contacts), src/contact/cone.c, src/contact/lcp_dantzig.c,
 * src/contact/broadphase.c (filters), src/contact/narrowphase.c. */
/* Talus contact physics (issue 5, "Done when"), through the public API only.
 *
 * Every check is a physics assertion with its measured figure printed.
 * Usage: test_contact [GROUP...]; GROUP is one of
 *   incline      box (0.2 m cube, 1 kg) on the ground plane under gravity tilted
 *                by 20 deg, g = 9.81 (sin 20, 0, -cos 20):
 *                - mu 0.5 sticks: displacement < 1e-6 m over 1 s after 0.5 s settling;
 *                - mu 0.2 slides with a = g (sin - mu cos) within 1 %;
 *                - mu 0.5, pushed in the tangent plane at 45 deg to the slope (and 30,
 *                  60, 90, 135 deg) by an external force at the COM re-applied every step:
 *                  exact cone (TL_SOLVER_PER_CONTACT): the velocity points along the
 *                  net tangential driving force F_t = m g sin20 x + P within 1e-6 rad
 *                  while it slides (0.1-0.5 s after the push starts; the onset,
 *                  10-100 ms, is printed) and |a| = (|F_t| - mu N) / m within 1 %
 *                  (P = 5 N; at 135 deg |F_t| < mu N and it must stay stuck: COM
 *                  displacement < 1e-6 m over the 0.5 s push);
 *                - the same with TL_SOLVER_PGS (friction pyramid on the contact frame's
 *                  x/y tangents): the direction deviates, > 1e-3 rad at 30 deg (printed
 *                  for every angle): the comparison the issue asks to demonstrate.
 *   restitution  sphere (r 0.1, 1 kg) dropped with its bottom at 1 m; material pair
 *                ("ball", "ground") with restitution 0.8: rebound apex 0.64 m within 2 %;
 *                restitution 0: it stays down, |vz| < 1e-6 m/s from 0.5 s after the
 *                impact to 1 s after it (the last 0.5 s of the run: no jitter).
 *   stack        10 boxes (0.1 m cubes, 1 kg) placed exactly touching on the ground,
 *                10 s at dt 1 ms, default solver: every box within 1 mm of its start.
 *   pile         6x6x6 = 216 spheres (r 0.05, 0.5 kg) dropped from a grid 1 cm apart
 *                (plus a deterministic +-3 mm jitter) into four static box walls;
 *                3 s at dt 1 ms; max contact depth over the last 0.5 s < 1 mm;
 *                steps/s printed.
 *   random       200 seeded random scenes (2-5 boxes, spheres, capsules in random poses,
 *                each resting on the ground or an earlier body with bounding boxes
 *                overlapping by 0-1 cm; kept when they have >= 3 contacts and depths
 *                <= 2 cm; random linear and angular velocities), one step, per-contact
 *                solver with max_iter 10000, tol 1e-14: solver stats cone <= 1e-9,
 *                signorini <= 1e-8 on every scene (worst printed), >= 99% reaching the
 *                impulse tolerance (Gauss-Seidel with NNCG, see solver_gs.c);
 *                30 planar scenes (1-3 bodies stacked, velocities in x-z, rotation
 *                about y only, every contact sliding along x: boxes on the ground, a
 *                box on a box, spheres, capsules lying along x) where the pyramid and
 *                the cone coincide: Dantzig's post-step velocities equal the
 *                per-contact solver's within 1e-6.
 *   filters      the collision step's cached filter data follows every change: a
 *                sphere (r 0.1) resting on the ground and a second one resting on
 *                it (separate systems) touch at 2 contacts, 1 after the upper
 *                sphere's filter stops it colliding with the lower one, 0 with the
 *                lower one switched to RK4 (it leaves contacts), 1 after a snapshot
 *                taken before that is restored (Euler again; the filters stay), 2
 *                with the filters reset, 0 after the lower sphere's filter drops
 *                every other geom's group.
 *   pgs          the world's PGS (TL_SOLVER_PGS, the engine's one PGS; it replaced the
 *                raw-LCP PGS of test_lcp in issue 22) on the random scenes: impulses
 *                inside the friction pyramid, complementarity (signorini <= 1e-8) on
 *                the converged solves, >= 95% converged; on the planar scenes its
 *                velocities equal Dantzig's within 1e-6 (see pgs_problems).
 * No argument: every group. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "talus/talus.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define G 9.81

/* ------------------------------------------------------------ helpers */

static tl_error err;

static tl_world *new_world(double dt, const double *gravity) {
  tl_world *w = NULL;
  memset(&err, 0, sizeof err);
  if (tl_world_create(&w, &err) != TL_OK || tl_world_set_timestep(w, dt, &err) != TL_OK ||
      (gravity && tl_world_set_gravity(w, gravity, &err) != TL_OK)) {
    printf("world setup failed: %s\n", err.message);
    exit(1);
  }
  return w;
}

/* A primitive body added to w at position pos, orientation quat (w x y z, NULL:
 * identity), velocity v / angular velocity om (NULL: zero). */
static tl_system *add_body(tl_world *w, tl_geom_type type, const double size[3], double mass,
                           const double pos[3], const double quat[4], const double v[3],
                           const double om[3]) {
  tl_model *m = NULL;
  tl_system *s = NULL;
  if (tl_model_create_primitive(type, size, mass, NULL, &m, &err) != TL_OK ||
      tl_world_add_system(w, m, &s, &err) != TL_OK) {
    printf("body setup failed: %s\n", err.message);
    exit(1);
  }
  tl_model_free(m);
  double q[7] = {pos[0], pos[1], pos[2], 1, 0, 0, 0}, u[6] = {0, 0, 0, 0, 0, 0};
  if (quat) memcpy(q + 3, quat, 4 * sizeof(double));
  if (v) memcpy(u, v, 3 * sizeof(double));
  if (om) memcpy(u + 3, om, 3 * sizeof(double));
  if (tl_system_set_state(s, q, 7, u, 6, &err) != TL_OK) {
    printf("set_state failed: %s\n", err.message);
    exit(1);
  }
  return s;
}

static void get_qu(const tl_system *s, double q[7], double u[6]) {
  tl_system_get_state(s, q, 7, u, 6, NULL);
}

static int step(tl_world *w) {
  if (tl_world_step(w, &err) != TL_OK) {
    printf("step failed at t = %g s: %s\n", tl_world_time(w), err.message);
    return 0;
  }
  return 1;
}

static double max_depth(const tl_world *w) {
  double d = -INFINITY;
  for (int k = 0; k < tl_world_ncontact(w); k++) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) == TL_OK) d = fmax(d, c.depth);
  }
  return d;
}

/* Deterministic generator (splitmix64), uniform in [a, b). */
static uint64_t rng_state;
static double urand(double a, double b) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return a + (b - a) * (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static void random_quat(double q[4]) {
  double n = 0;
  do {
    for (int i = 0; i < 4; i++) q[i] = urand(-1, 1);
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 0.1 || n > 1);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

/* ------------------------------------------------------------ incline */

#define INC_ANGLE (20.0 * PI / 180.0)
#define BOX 0.2

static tl_world *incline_world(double mu, tl_solver solver, tl_system **s) {
  double g[3] = {G * sin(INC_ANGLE), 0, -G * cos(INC_ANGLE)};
  tl_world *w = new_world(1e-3, g);
  if (tl_world_add_ground(w, 0, mu, &err) != TL_OK || tl_world_set_solver(w, solver, &err) != TL_OK) {
    printf("incline setup failed: %s\n", err.message);
    exit(1);
  }
  double size[3] = {BOX, BOX, BOX}, pos[3] = {0, 0, BOX / 2};
  *s = add_body(w, TL_GEOM_BOX, size, 1.0, pos, NULL, NULL, NULL);
  return w;
}

static void incline_stick_slide(void) {
  /* mu = 0.5 > tan 20 = 0.364: sticks */
  tl_system *s;
  tl_world *w = incline_world(0.5, TL_SOLVER_PER_CONTACT, &s);
  double q[7], u[6], q0[7], maxdisp = 0, maxv = 0;
  int ok = 1;
  for (int i = 0; i < 500 && ok; i++) ok = step(w);
  get_qu(s, q0, u);
  for (int i = 0; i < 1000 && ok; i++) {
    ok = step(w);
    get_qu(s, q, u);
    maxdisp = fmax(maxdisp, sqrt(pow(q[0] - q0[0], 2) + pow(q[1] - q0[1], 2) + pow(q[2] - q0[2], 2)));
    maxv = fmax(maxv, hypot(u[0], u[1]));
  }
  printf("incline 20 deg, mu 0.5: displacement over 1 s after 0.5 s settling %.3e m (max tangential "
         "speed %.3e m/s; x moved %.3e m during settling)\n",
         maxdisp, maxv, q0[0]);
  TL_CHECK(ok, "incline mu 0.5: stepping failed");
  TL_CHECK(maxdisp < 1e-6, "incline mu 0.5: box should stick, moved %.3e m in 1 s", maxdisp);
  tl_world_free(w);

  /* mu = 0.2 < tan 20: slides with a = g (sin - mu cos) */
  w = incline_world(0.2, TL_SOLVER_PER_CONTACT, &s);
  double a_exp = G * (sin(INC_ANGLE) - 0.2 * cos(INC_ANGLE)), v1 = 0, v2 = 0, maxvy = 0;
  ok = 1;
  for (int i = 1; i <= 1000 && ok; i++) {
    ok = step(w);
    get_qu(s, q, u);
    if (i == 200) v1 = u[0];
    if (i == 1000) v2 = u[0];
    maxvy = fmax(maxvy, fabs(u[1]));
  }
  double a = (v2 - v1) / 0.8;
  printf("incline 20 deg, mu 0.2: acceleration %.6f m/s^2 (expected g(sin - mu cos) = %.6f, rel err "
         "%.2e), max |vy| %.2e m/s\n",
         a, a_exp, fabs(a - a_exp) / a_exp, maxvy);
  TL_CHECK(ok, "incline mu 0.2: stepping failed");
  TL_CHECK(fabs(a - a_exp) <= 0.01 * a_exp, "incline mu 0.2: acceleration %.6f vs %.6f (> 1%%)", a, a_exp);
  tl_world_free(w);
}

/* What a push at `deg` degrees to the slope (x) in the tangent plane did. */
typedef struct push_result {
  int ok;
  double a_exp;      /* (|F_t| - mu N) / m; <= 0: the cone says it sticks */
  double a_meas;     /* |v(0.5 s) - v(0.1 s)| / 0.4 s */
  double onset_err;  /* max direction error of the velocity against F_t over 10-100 ms (rad) */
  double steady_err; /* the same over 0.1-0.5 s */
  double final_err;  /* at 0.5 s */
  double disp;       /* max distance of the COM from where the push started (m) */
} push_result;

static push_result incline_push(tl_solver solver, double deg) {
  const double mu = 0.5, P = 5.0, m = 1.0;
  push_result r;
  memset(&r, 0, sizeof r);
  tl_system *s;
  tl_world *w = incline_world(mu, solver, &s);
  int ok = 1;
  for (int i = 0; i < 300 && ok; i++) ok = step(w); /* settle: sticks */
  double th = deg * PI / 180.0, f[3] = {P * cos(th), P * sin(th), 0};
  double Ft[2] = {m * G * sin(INC_ANGLE) + f[0], f[1]}, N = m * G * cos(INC_ANGLE);
  double Ftn = hypot(Ft[0], Ft[1]), dir = atan2(Ft[1], Ft[0]);
  r.a_exp = (Ftn - mu * N) / m;
  double q[7], u[6], q0[7], va[2] = {0, 0}, vb[2] = {0, 0};
  get_qu(s, q0, u);
  const int nstep = 500, ia = 100;
  for (int i = 1; i <= nstep && ok; i++) {
    ok = tl_system_add_external_force(s, 0, f, NULL, &err) == TL_OK && step(w);
    get_qu(s, q, u);
    r.disp = fmax(r.disp, sqrt(pow(q[0] - q0[0], 2) + pow(q[1] - q0[1], 2) + pow(q[2] - q0[2], 2)));
    double e = fabs(remainder(atan2(u[1], u[0]) - dir, 2 * PI));
    if (i >= 10 && i <= ia) r.onset_err = fmax(r.onset_err, e); /* the box starts from rest */
    if (i > ia) r.steady_err = fmax(r.steady_err, e);
    if (i == ia) va[0] = u[0], va[1] = u[1];
    if (i == nstep) vb[0] = u[0], vb[1] = u[1];
  }
  r.a_meas = hypot(vb[0] - va[0], vb[1] - va[1]) / ((nstep - ia) * 1e-3);
  r.final_err = fabs(remainder(atan2(vb[1], vb[0]) - dir, 2 * PI));
  r.ok = ok;
  if (!ok) printf("incline push %g deg: %s\n", deg, err.message);
  tl_world_free(w);
  return r;
}

static void incline_diagonal(void) {
  /* P = 5 N, mu = 0.5: |F_t| > mu N at 30, 45, 60, 90 deg; at 135 deg |F_t| =
   * 3.54 N < mu N = 4.61 N: the cone says the box must stay stuck. */
  static const double angles[] = {45, 30, 60, 90, 135};
  enum { NA = 5 };
  double cone_err[NA], pyr_err[NA];
  for (int k = 0; k < NA; k++) {
    push_result r = incline_push(TL_SOLVER_PER_CONTACT, angles[k]);
    cone_err[k] = r.steady_err;
    TL_CHECK(r.ok, "push %g deg (cone): stepping failed", angles[k]);
    if (r.a_exp <= 0) {
      printf("incline push %5.1f deg, exact cone: |F_t| < mu N, COM displacement over the 0.5 s push "
             "%.3e m (must stick)\n",
             angles[k], r.disp);
      TL_CHECK(r.disp < 1e-6, "push %g deg (cone): |F_t| < mu N but the box moved %.3e m", angles[k],
               r.disp);
      continue;
    }
    printf("incline push %5.1f deg, exact cone: velocity direction error %.3e rad over 0.1-0.5 s "
           "(%.3e rad over the onset, 10-100 ms), |a| %.6f m/s^2 vs (|F_t| - mu N)/m = %.6f (rel "
           "err %.2e)\n",
           angles[k], r.steady_err, r.onset_err, r.a_meas, r.a_exp, fabs(r.a_meas - r.a_exp) / r.a_exp);
    TL_CHECK(r.steady_err <= 1e-6, "push %g deg (cone): velocity direction off the net force by %.3e rad",
             angles[k], r.steady_err);
    TL_CHECK(fabs(r.a_meas - r.a_exp) <= 0.01 * r.a_exp, "push %g deg (cone): |a| %.6f vs %.6f (> 1%%)",
             angles[k], r.a_meas, r.a_exp);
  }
  for (int k = 0; k < NA; k++) {
    push_result r = incline_push(TL_SOLVER_PGS, angles[k]);
    pyr_err[k] = r.final_err;
    TL_CHECK(r.ok, "push %g deg (PGS): stepping failed", angles[k]);
    if (r.a_exp <= 0) {
      printf("incline push %5.1f deg, PGS pyramid: |F_t| < mu N, COM displacement %.3e m\n", angles[k],
             r.disp);
      continue;
    }
    printf("incline push %5.1f deg, PGS pyramid: velocity direction error %.3e rad (%.2f deg) at "
           "0.5 s, |a| %.6f m/s^2 vs cone %.6f\n",
           angles[k], r.final_err, r.final_err * 180 / PI, r.a_meas, r.a_exp);
  }
  TL_CHECK(pyr_err[1] > 1e-3,
           "the friction pyramid should deviate from the net force at 30 deg, deviation %.3e rad",
           pyr_err[1]);
  TL_CHECK(pyr_err[1] > 1e3 * cone_err[1], "pyramid (%.3e rad) vs cone (%.3e rad) at 30 deg",
           pyr_err[1], cone_err[1]);
}

/* -------------------------------------------------------- restitution */

#define BALL_R 0.1

static void drop_ball(double e, double *rebound, double *vz_late, double *vz_last, double *t_impact,
                      int *ok_out) {
  tl_world *w = new_world(1e-3, NULL);
  double size[3] = {BALL_R, 0, 0}, pos[3] = {0, 0, 1.0 + BALL_R};
  int ok = tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_world_set_material_pair(w, "ball", "ground", 0.8, e, 0.01, &err) == TL_OK;
  tl_system *s = add_body(w, TL_GEOM_SPHERE, size, 1.0, pos, NULL, NULL, NULL);
  ok = ok && tl_system_set_geom_material(s, 0, "ball", &err) == TL_OK;
  double q[7], u[6], zmax = -INFINITY;
  int phase = 0; /* 0 falling, 1 rising after the bounce, 2 past the apex */
  *t_impact = -1;
  *vz_late = *vz_last = 0;
  for (int i = 0; ok && i < 5000; i++) {
    ok = step(w);
    get_qu(s, q, u);
    double t = tl_world_time(w);
    if (*t_impact < 0 && tl_world_ncontact(w) > 0) {
      tl_contact_info c;
      if (tl_world_contact(w, 0, &c, NULL) == TL_OK && c.impulse[2] > 0) *t_impact = t;
    }
    if (e > 0) {
      if (phase == 0 && *t_impact >= 0 && u[2] > 0) phase = 1;
      if (phase == 1) {
        zmax = fmax(zmax, q[2]);
        if (u[2] < 0) break;
      }
    } else if (*t_impact >= 0) {
      if (t > *t_impact + 0.5 + 1e-9) *vz_late = fmax(*vz_late, fabs(u[2]));
      if (t > *t_impact + 1.0 + 1e-9) break;
    }
  }
  *vz_last = fabs(u[2]);
  *rebound = zmax - BALL_R;
  *ok_out = ok;
  if (!ok) printf("drop ball e = %g: %s\n", e, err.message);
  tl_world_free(w);
}

static void restitution(void) {
  double h, vz_late, vz_last, ti;
  int ok;
  drop_ball(0.8, &h, &vz_late, &vz_last, &ti, &ok);
  printf("restitution 0.8, dropped from 1 m: impact at %.3f s, rebound apex %.5f m (expected "
         "0.64, rel err %.2e)\n",
         ti, h, fabs(h - 0.64) / 0.64);
  TL_CHECK(ok && ti > 0, "restitution 0.8: stepping failed or no impact");
  TL_CHECK(fabs(h - 0.64) <= 0.02 * 0.64, "restitution 0.8: rebound %.5f m vs 0.64 (> 2%%)", h);

  drop_ball(0.0, &h, &vz_late, &vz_last, &ti, &ok);
  printf("restitution 0, dropped from 1 m: impact at %.3f s, max |vz| from impact + 0.5 s to "
         "impact + 1 s %.3e m/s (final %.3e)\n",
         ti, vz_late, vz_last);
  TL_CHECK(ok && ti > 0, "restitution 0: stepping failed or no impact");
  TL_CHECK(vz_late < 1e-6, "restitution 0: |vz| reached %.3e m/s over the last 0.5 s (jitter)", vz_late);
}

/* -------------------------------------------------------------- stack */

static void stack(void) {
  enum { NB = 10 };
  const double a = 0.1;
  tl_world *w = new_world(1e-3, NULL);
  if (tl_world_add_ground(w, 0, 0.8, &err) != TL_OK) exit(1);
  tl_system *s[NB];
  double p0[NB][3];
  for (int i = 0; i < NB; i++) {
    double size[3] = {a, a, a}, pos[3] = {0, 0, a / 2 + a * i};
    s[i] = add_body(w, TL_GEOM_BOX, size, 1.0, pos, NULL, NULL, NULL);
    memcpy(p0[i], pos, sizeof pos);
  }
  int ok = 1, worst = -1;
  double drift = 0, depth = 0;
  clock_t c0 = clock();
  for (int it = 0; it < 10000 && ok; it++) {
    ok = step(w);
    depth = fmax(depth, max_depth(w));
    for (int i = 0; i < NB; i++) {
      double q[7], u[6];
      get_qu(s[i], q, u);
      double d = sqrt(pow(q[0] - p0[i][0], 2) + pow(q[1] - p0[i][1], 2) + pow(q[2] - p0[i][2], 2));
      if (d > drift) drift = d, worst = i;
    }
  }
  double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
  tl_solver_stats st;
  tl_world_solver_stats(w, &st, NULL);
  printf("stack of 10 boxes, 10 s: max drift %.3e m (box %d), max contact depth %.3e m, last solve "
         "%d sweeps (converged %d), %.0f steps/s\n",
         drift, worst, depth, st.iterations, st.converged, 10000 / secs);
  TL_CHECK(ok, "stack: stepping failed");
  TL_CHECK(drift < 1e-3, "stack: box %d drifted %.3e m", worst, drift);
  tl_world_free(w);
}

/* --------------------------------------------------------------- pile */

static void pile(void) {
  enum { N = 6 };
  const double r = 0.05, sp = 0.11, half = 0.35; /* inner half-width of the walls */
  tl_world *w = new_world(1e-3, NULL);
  int ok = tl_world_add_ground(w, 0, 0.8, &err) == TL_OK;
  for (int k = 0; k < 4 && ok; k++) { /* walls 0.1 m thick, 1 m high */
    double size[3], pos[3] = {0, 0, 0.5};
    if (k < 2) {
      size[0] = 0.1, size[1] = 2 * half + 0.2, size[2] = 1.0;
      pos[0] = (k ? 1 : -1) * (half + 0.05);
    } else {
      size[0] = 2 * half + 0.2, size[1] = 0.1, size[2] = 1.0;
      pos[1] = (k == 3 ? 1 : -1) * (half + 0.05);
    }
    ok = tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, NULL, NULL, NULL, &err) == TL_OK;
  }
  if (!ok) {
    TL_CHECK(0, "pile setup: %s", err.message);
    tl_world_free(w);
    return;
  }
  rng_state = 12345;
  tl_system *s[N * N * N];
  int n = 0;
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        double size[3] = {r, 0, 0};
        double pos[3] = {(i - 2.5) * sp + urand(-0.003, 0.003), (j - 2.5) * sp + urand(-0.003, 0.003),
                         r + 0.01 + k * sp};
        s[n++] = add_body(w, TL_GEOM_SPHERE, size, 0.5, pos, NULL, NULL, NULL);
      }
  const int nstep = 3000;
  double depth_last = -INFINITY, depth_all = -INFINITY, vmax_end = 0;
  int ncontact = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int it = 1; it <= nstep && ok; it++) {
    ok = step(w);
    double d = max_depth(w);
    depth_all = fmax(depth_all, d);
    if (it > nstep - 500) depth_last = fmax(depth_last, d);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  ncontact = tl_world_ncontact(w);
  double zmin = INFINITY, zmax = -INFINITY, rmax = 0;
  for (int i = 0; i < n; i++) {
    double q[7], u[6];
    get_qu(s[i], q, u);
    vmax_end = fmax(vmax_end, sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
    zmin = fmin(zmin, q[2]);
    zmax = fmax(zmax, q[2]);
    rmax = fmax(rmax, fmax(fabs(q[0]), fabs(q[1])));
  }
  tl_solver_stats st;
  tl_world_solver_stats(w, &st, NULL);
  printf("pile of 216 spheres, 3 s at dt 1 ms: max contact depth over the last 0.5 s %.3e m (over "
         "the run %.3e m), %d contacts, max speed at the end %.3e m/s, centres z in [%.4f, %.4f] m, "
         "max |x|,|y| %.4f m, last solve %d sweeps (converged %d); %.0f steps/s (%.1f s)\n",
         depth_last, depth_all, ncontact, vmax_end, zmin, zmax, rmax, st.iterations, st.converged,
         nstep / secs, secs);
  TL_CHECK(ok, "pile: stepping failed");
  TL_CHECK(depth_last < 1e-3, "pile: penetration %.3e m over the last 0.5 s", depth_last);
  TL_CHECK(zmin > r - 1e-3 && rmax < half - r + 1e-3, "pile: a sphere left the container (z %.4f, |xy| %.4f)",
           zmin, rmax);
  tl_world_free(w);
}

/* ------------------------------------------------------------- random */

/* A random shape: box (edges 0.08-0.3 m), sphere (r 0.04-0.15) or capsule
 * (r 0.03-0.08, length 0.05-0.25). */
static tl_geom_type random_shape(double size[3]) {
  int kind = (int)urand(0, 2.999);
  size[0] = size[1] = size[2] = 0;
  if (kind == 0) {
    for (int k = 0; k < 3; k++) size[k] = urand(0.08, 0.3);
    return TL_GEOM_BOX;
  }
  if (kind == 1) {
    size[0] = urand(0.04, 0.15);
    return TL_GEOM_SPHERE;
  }
  size[0] = urand(0.03, 0.08);
  size[1] = urand(0.05, 0.25);
  return TL_GEOM_CAPSULE;
}

static int scene_max_iter = 10000; /* sweeps allowed in the random scenes */

static tl_world *scene_world(tl_solver solver) {
  tl_world *w = new_world(1e-3, NULL);
  double mu = urand(0.2, 1.0);
  if (tl_world_add_ground(w, 0, mu, &err) != TL_OK || tl_world_set_solver(w, solver, &err) != TL_OK ||
      tl_world_set_solver_params(w, scene_max_iter, 1e-14, 1, &err) != TL_OK) {
    printf("random scene: %s\n", err.message);
    exit(1);
  }
  return w;
}

/* Shift body s vertically so that the bottom of its geom's bounding box is at z. */
static void place_bottom(tl_system *s, double z) {
  double lo[3], hi[3], q[7], u[6];
  tl_system_geom_aabb(s, 0, lo, hi, NULL);
  get_qu(s, q, u);
  q[2] += z - lo[2];
  tl_system_set_state(s, q, 7, u, 6, NULL);
}

/* A random 3D scene: 2-5 bodies in random orientations with random linear
 * (+-1 m/s) and angular (+-3 rad/s) velocities, each resting on the ground or
 * on an earlier body (bounding boxes overlapping by 0-1 cm, centres within
 * 5 cm horizontally), i.e. slightly interpenetrating. */
static tl_world *random_scene(uint64_t seed, tl_solver solver, int *nbody, tl_system **sys) {
  rng_state = seed * 7919 + 17;
  tl_world *w = scene_world(solver);
  int nb = 2 + (int)urand(0, 3.999);
  for (int i = 0; i < nb; i++) {
    double size[3], quat[4], v[3], om[3], pos[3] = {0, 0, 1};
    tl_geom_type type = random_shape(size);
    random_quat(quat);
    for (int k = 0; k < 3; k++) v[k] = urand(-1, 1), om[k] = urand(-3, 3);
    int on = i == 0 ? -1 : (int)urand(-1, i - 0.001); /* -1: the ground */
    double base = 0;
    if (on >= 0) {
      double lo[3], hi[3], q[7], u[6];
      tl_system_geom_aabb(sys[on], 0, lo, hi, NULL);
      get_qu(sys[on], q, u);
      pos[0] = q[0] + urand(-0.05, 0.05);
      pos[1] = q[1] + urand(-0.05, 0.05);
      base = hi[2];
    } else {
      pos[0] = urand(-0.3, 0.3);
      pos[1] = urand(-0.3, 0.3);
    }
    sys[i] = add_body(w, type, size, urand(0.3, 3.0), pos, quat, v, om);
    place_bottom(sys[i], base - urand(0, 0.01));
  }
  *nbody = nb;
  return w;
}

/* A planar scene (x-z plane): 1-3 bodies (0.5-2 kg) stacked on the ground,
 * shapes symmetric about y = 0 (boxes with a tilt about y only, spheres,
 * capsules lying along x), overlapping their support by 0-0.5 mm, velocities
 * in x-z (vz 0 to -0.05 m/s) and rotation about y only. Neighbours move along
 * x in opposite directions at 0.5-1 m/s and the normal impulses are small
 * (no deep penetration, slow approach), so every contact slides through the
 * step: the friction is unique and along x (the contact frames' second
 * tangent), where the pyramid and the cone coincide. (With sticking contacts
 * the split of the impulses is not unique: internal friction along y, which a
 * Gauss-Seidel sweep can lock in, costs cone capacity but not pyramid capacity.) */
static tl_world *planar_scene(uint64_t seed, tl_solver solver, int *nbody, tl_system **sys) {
  rng_state = seed * 104729 + 3;
  tl_world *w = scene_world(solver);
  int nb = 1 + (int)urand(0, 2.999);
  double top = 0, dir = urand(0, 1) < 0.5 ? -1 : 1;
  for (int i = 0; i < nb; i++) {
    double size[3], quat[4] = {1, 0, 0, 0}, v[3], om[3] = {0, 0, 0}, pos[3];
    tl_geom_type type = random_shape(size);
    double tilt = type == TL_GEOM_BOX && i > 0 ? urand(-0.02, 0.02) : 0;
    double ang = (type == TL_GEOM_CAPSULE ? PI / 2 : 0) + tilt; /* about y */
    quat[0] = cos(ang / 2), quat[2] = sin(ang / 2);
    pos[0] = urand(-0.01, 0.01), pos[1] = 0, pos[2] = 1;
    v[0] = dir * urand(0.5, 1.0), v[1] = 0, v[2] = urand(-0.05, 0);
    dir = -dir;
    om[1] = type == TL_GEOM_BOX ? urand(-0.2, 0.2) : 0;
    sys[i] = add_body(w, type, size, urand(0.5, 2.0), pos, quat, v, om);
    place_bottom(sys[i], top - urand(0, 0.0005));
    double lo[3], hi[3];
    tl_system_geom_aabb(sys[i], 0, lo, hi, NULL);
    top = hi[2];
  }
  *nbody = nb;
  return w;
}

enum { NRANDOM = 200 }; /* random 3D contact problems */

static void random_problems(void) {
  double worst_cone = 0, worst_sig = 0, worst_dis = 0;
  int worst_cone_seed = -1, worst_sig_seed = -1, nscene = 0, total_contacts = 0, nconv = 0, maxit = 0;
  tl_system *sys[8];
  for (uint64_t seed = 1; nscene < NRANDOM && seed < 20000; seed++) {
    int nb;
    tl_world *w = random_scene(seed, TL_SOLVER_PER_CONTACT, &nb, sys);
    if (tl_world_integrate1(w, &err) != TL_OK) {
      TL_CHECK(0, "random scene %d: integrate1: %s", (int)seed, err.message);
      tl_world_free(w);
      continue;
    }
    int nc = tl_world_ncontact(w);
    double dmax = max_depth(w);
    /* keep scenes with at least 3 contacts, penetrating by at most 2 cm */
    if (nc < 3 || dmax > 0.02 || dmax <= 0) {
      tl_world_free(w);
      continue;
    }
    int ok = tl_world_integrate2(w, &err) == TL_OK;
    tl_solver_stats st;
    ok = ok && tl_world_solver_stats(w, &st, &err) == TL_OK;
    if (!TL_CHECK(ok, "random scene %d: %s", (int)seed, err.message)) {
      tl_world_free(w);
      continue;
    }
    nscene++;
    total_contacts += nc;
    nconv += st.converged;
    maxit = st.iterations > maxit ? st.iterations : maxit;
    if (st.cone > worst_cone) worst_cone = st.cone, worst_cone_seed = (int)seed;
    if (st.signorini > worst_sig) worst_sig = st.signorini, worst_sig_seed = (int)seed;
    worst_dis = fmax(worst_dis, st.dissipation);
    TL_CHECK(st.cone <= 1e-9, "random scene %d (%d bodies, %d contacts): cone residual %.3e", (int)seed,
             nb, nc, st.cone);
    /* Impulses are not always unique where velocities are: two sticking
     * contacts of one edge can trade opposite friction impulses that change
     * the velocities only through the normal compliance. Such a scene may
     * drift along that valley at ~1e-8 N s per sweep without reaching the
     * 1e-14 impulse tolerance, while its residuals meet the bounds above.
     * Reported, and allowed on at most 1% of the scenes. */
    if (!st.converged)
      printf("random scene %d (%d bodies, %d contacts): impulses still moving by %.3e N s per sweep after %d "
             "sweeps (signorini %.3e)\n", (int)seed, nb, nc, st.last_change, st.iterations, st.signorini);
    TL_CHECK(st.signorini <= 1e-8, "random scene %d (%d bodies, %d contacts): signorini residual %.3e", (int)seed,
             nb, nc, st.signorini);
    tl_world_free(w);
  }
  printf("random contact problems, per-contact solver (10000 sweeps, tol 1e-14): %d scenes, %d "
         "contacts, worst cone residual %.3e (scene %d), worst signorini %.3e (scene %d), worst "
         "dissipation %.3e, %d/%d converged, max sweeps %d\n",
         nscene, total_contacts, worst_cone, worst_cone_seed, worst_sig, worst_sig_seed, worst_dis,
         nconv, nscene, maxit);
  TL_CHECK(nconv * 100 >= nscene * 99, "only %d of %d random scenes reached the impulse tolerance", nconv, nscene);
  TL_CHECK(nscene == NRANDOM, "only %d random scenes with contacts were generated", nscene);

  /* Cut short (1-5 sweeps, as a real-time budget does), the solve must still
   * return impulses inside every friction cone: the last sweep's, never an
   * extrapolated iterate. */
  double worst_short = 0;
  int nshort = 0;
  for (uint64_t seed = 1; nshort < 50 && seed < 20000; seed++) {
    int nb;
    scene_max_iter = 1 + (int)(seed % 5);
    tl_world *w = random_scene(seed, TL_SOLVER_PER_CONTACT, &nb, sys);
    int ok = tl_world_integrate1(w, &err) == TL_OK;
    double dmax = max_depth(w);
    if (!ok || tl_world_ncontact(w) < 3 || dmax > 0.02 || dmax <= 0) {
      tl_world_free(w);
      continue;
    }
    tl_solver_stats st;
    ok = tl_world_integrate2(w, &err) == TL_OK && tl_world_solver_stats(w, &st, &err) == TL_OK;
    if (TL_CHECK(ok, "random scene %d, %d sweeps: %s", (int)seed, scene_max_iter, err.message)) {
      nshort++;
      worst_short = fmax(worst_short, st.cone);
      TL_CHECK(st.cone <= 1e-9, "random scene %d cut at %d sweeps: cone residual %.3e", (int)seed, scene_max_iter,
               st.cone);
    }
    tl_world_free(w);
  }
  scene_max_iter = 10000;
  printf("random problems cut at 1-5 sweeps: %d scenes, worst cone residual %.3e\n", nshort, worst_short);

  /* Dantzig against per-contact on planar problems */
  double worst_dv = 0;
  int worst_seed = -1, nplanar = 0, planar_contacts = 0, ndantzig_conv = 0;
  for (uint64_t seed = 1; nplanar < 30 && seed < 5000; seed++) {
    int nb1, nb2;
    tl_system *s1[8], *s2[8];
    tl_world *w1 = planar_scene(seed, TL_SOLVER_PER_CONTACT, &nb1, s1);
    tl_world *w2 = planar_scene(seed, TL_SOLVER_DANTZIG, &nb2, s2);
    int ok = tl_world_integrate1(w1, &err) == TL_OK && tl_world_integrate1(w2, &err) == TL_OK;
    int nc = tl_world_ncontact(w1);
    if (!ok || nc < 2 || nc != tl_world_ncontact(w2)) {
      TL_CHECK(ok, "planar scene %d: integrate1: %s", (int)seed, err.message);
      tl_world_free(w1);
      tl_world_free(w2);
      continue;
    }
    ok = tl_world_integrate2(w1, &err) == TL_OK && tl_world_integrate2(w2, &err) == TL_OK;
    tl_solver_stats st1, st2;
    tl_world_solver_stats(w1, &st1, NULL);
    tl_world_solver_stats(w2, &st2, NULL);
    double dv = 0, lt_y = 0;
    for (int i = 0; i < nb1; i++) {
      double q1[7], u1[6], q2[7], u2[6];
      get_qu(s1[i], q1, u1);
      get_qu(s2[i], q2, u2);
      for (int k = 0; k < 6; k++) dv = fmax(dv, fabs(u1[k] - u2[k]));
    }
    for (int k = 0; k < nc; k++) { /* friction out of the x-z plane in the cone solution */
      tl_contact_info c;
      tl_world_contact(w1, k, &c, NULL);
      lt_y = fmax(lt_y, fabs(c.impulse[1]));
    }
    nplanar++;
    planar_contacts += nc;
    ndantzig_conv += st2.converged;
    if (dv > worst_dv) worst_dv = dv, worst_seed = (int)seed;
    TL_CHECK(ok, "planar scene %d: integrate2: %s", (int)seed, err.message);
    TL_CHECK(dv <= 1e-6,
             "planar scene %d (%d bodies, %d contacts): Dantzig and per-contact velocities differ by "
             "%.3e (Dantzig converged %d, %d pivots; per-contact %d sweeps, |impulse_y| %.2e)",
             (int)seed, nb1, nc, dv, st2.converged, st2.iterations, st1.iterations, lt_y);
    tl_world_free(w1);
    tl_world_free(w2);
  }
  printf("planar problems (pyramid = cone): %d scenes, %d contacts, Dantzig vs per-contact max "
         "|du| %.3e (scene %d), Dantzig converged in %d/%d\n",
         nplanar, planar_contacts, worst_dv, worst_seed, ndantzig_conv, nplanar);
  TL_CHECK(nplanar == 30, "only %d planar scenes with contacts were generated", nplanar);
}

/* --------------------------------------------------------------- pgs */

/* The contact frame's tangents of normal n as the engine builds them
 * (contact/contact_gen.c, contact_frame): t1 = n x a / |n x a| with
 * a = x, or y when |n_x| > 0.8; t2 = n x t1. */
static void tangents(const double n[3], double t1[3], double t2[3]) {
  double a[3] = {1, 0, 0};
  if (fabs(n[0]) > 0.8) a[0] = 0, a[1] = 1;
  t1[0] = n[1] * a[2] - n[2] * a[1], t1[1] = n[2] * a[0] - n[0] * a[2], t1[2] = n[0] * a[1] - n[1] * a[0];
  double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int k = 0; k < 3; k++) t1[k] /= l;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
}

/* The world's PGS (TL_SOLVER_PGS: projected SOR with the friction pyramid,
 * contact/solver_gs.c), the engine's one PGS, on the scenes above (sor 1,
 * up to 10000 sweeps, tol 1e-14):
 *  - the 200 random 3D scenes: every contact impulse inside its friction
 *    pyramid (lambda_n >= 0, |lambda_t1|, |lambda_t2| <= mu lambda_n in the
 *    engine's contact frame, 1e-9 relative), and on the converged solves
 *    complementarity (solver stats signorini <= 1e-8); at least 95% converge
 *    (the pyramid's friction bounds follow the normal impulses, so projected
 *    sweeps have no convergence guarantee where impulses are not unique);
 *  - the 30 planar scenes, where the pyramid and the cone coincide: PGS's
 *    post-step velocities equal Dantzig's (the same boxed LCP) within 1e-6. */
static void pgs_problems(void) {
  double worst_pyr = 0, worst_sig = 0;
  int nscene = 0, nconv = 0, maxit = 0, ncontact = 0;
  tl_system *sys[8];
  for (uint64_t seed = 1; nscene < NRANDOM && seed < 20000; seed++) {
    int nb;
    tl_world *w = random_scene(seed, TL_SOLVER_PGS, &nb, sys);
    int ok = tl_world_integrate1(w, &err) == TL_OK;
    int nc = tl_world_ncontact(w);
    double dmax = max_depth(w);
    if (!ok || nc < 3 || dmax > 0.02 || dmax <= 0) {
      TL_CHECK(ok, "pgs scene %d: integrate1: %s", (int)seed, err.message);
      tl_world_free(w);
      continue;
    }
    tl_solver_stats st;
    ok = tl_world_integrate2(w, &err) == TL_OK && tl_world_solver_stats(w, &st, &err) == TL_OK;
    if (!TL_CHECK(ok, "pgs scene %d: %s", (int)seed, err.message)) {
      tl_world_free(w);
      continue;
    }
    nscene++;
    ncontact += nc;
    nconv += st.converged;
    maxit = st.iterations > maxit ? st.iterations : maxit;
    for (int k = 0; k < nc; k++) {
      tl_contact_info c;
      tl_world_contact(w, k, &c, NULL);
      double t1[3], t2[3], ln = 0, l1 = 0, l2 = 0;
      tangents(c.normal, t1, t2);
      for (int i = 0; i < 3; i++) ln += c.impulse[i] * c.normal[i], l1 += c.impulse[i] * t1[i], l2 += c.impulse[i] * t2[i];
      double over = fmax(-ln, fmax(fabs(l1), fabs(l2)) - c.mu * ln) / fmax(ln, 1e-12);
      worst_pyr = fmax(worst_pyr, over);
      TL_CHECK(over <= 1e-9, "pgs scene %d contact %d: impulse (t1 %.6e, t2 %.6e, n %.6e) outside the pyramid mu %.3f",
               (int)seed, k, l1, l2, ln, c.mu);
    }
    if (st.converged) {
      worst_sig = fmax(worst_sig, st.signorini);
      TL_CHECK(st.signorini <= 1e-8, "pgs scene %d (%d bodies, %d contacts): signorini residual %.3e", (int)seed, nb,
               nc, st.signorini);
    }
    tl_world_free(w);
  }
  printf("random contact problems, PGS (10000 sweeps, tol 1e-14): %d scenes, %d contacts, worst pyramid "
         "violation %.3e, worst signorini of the converged %.3e, %d/%d converged, max sweeps %d\n",
         nscene, ncontact, worst_pyr, worst_sig, nconv, nscene, maxit);
  TL_CHECK(nscene == NRANDOM, "only %d random scenes with contacts were generated", nscene);
  TL_CHECK(nconv * 100 >= nscene * 95, "PGS: only %d of %d random scenes converged (190 when written)", nconv, nscene);

  double worst_dv = 0;
  int nplanar = 0, worst_seed = -1;
  for (uint64_t seed = 1; nplanar < 30 && seed < 5000; seed++) {
    int nb1, nb2;
    tl_system *s1[8], *s2[8];
    tl_world *w1 = planar_scene(seed, TL_SOLVER_PGS, &nb1, s1);
    tl_world *w2 = planar_scene(seed, TL_SOLVER_DANTZIG, &nb2, s2);
    int ok = tl_world_integrate1(w1, &err) == TL_OK && tl_world_integrate1(w2, &err) == TL_OK;
    int nc = tl_world_ncontact(w1);
    if (!ok || nc < 2 || nc != tl_world_ncontact(w2)) {
      TL_CHECK(ok, "pgs planar scene %d: integrate1: %s", (int)seed, err.message);
      tl_world_free(w1);
      tl_world_free(w2);
      continue;
    }
    ok = tl_world_integrate2(w1, &err) == TL_OK && tl_world_integrate2(w2, &err) == TL_OK;
    tl_solver_stats st1;
    tl_world_solver_stats(w1, &st1, NULL);
    double dv = 0;
    for (int i = 0; i < nb1; i++) {
      double q1[7], u1[6], q2[7], u2[6];
      get_qu(s1[i], q1, u1);
      get_qu(s2[i], q2, u2);
      for (int k = 0; k < 6; k++) dv = fmax(dv, fabs(u1[k] - u2[k]));
    }
    nplanar++;
    if (dv > worst_dv) worst_dv = dv, worst_seed = (int)seed;
    TL_CHECK(ok, "pgs planar scene %d: integrate2: %s", (int)seed, err.message);
    TL_CHECK(dv <= 1e-6, "pgs planar scene %d (%d bodies, %d contacts): PGS and Dantzig velocities differ by %.3e "
             "(PGS converged %d in %d sweeps)", (int)seed, nb1, nc, dv, st1.converged, st1.iterations);
    tl_world_free(w1);
    tl_world_free(w2);
  }
  printf("planar problems (pyramid = cone): %d scenes, PGS vs Dantzig max |du| %.3e (scene %d)\n", nplanar, worst_dv,
         worst_seed);
  TL_CHECK(nplanar == 30, "only %d planar scenes with contacts were generated", nplanar);
}

/* --------------------------------------------------------------- main */

/* --------------------------------------------------------------- deferred */

/* A box A slides at 3 m/s into a box B that stands 0.3 mm from a wall,
 * 1 mm behind it (boxes 10 cm, 1 kg, friction 0 so that only the normal
 * impulses act). In the first step B's contact with the wall is speculative
 * and B does not move at its free velocity, so the solve defers it
 * (tl_solver_stats.deferred); A's contact (which may close its 1 mm gap at
 * 1 m/s within the step) pushes B at about 1 m/s, which would take it
 * 0.7 mm into the wall, so the check after the solve must bring the wall
 * contact back and solve again (deferred_retry). Then nothing may pass
 * through the wall, and the momentum toward it is absorbed (restitution 0):
 * neither box moves toward the wall at the end, and neither bounces off it
 * faster than the penetration recovery pushes (1 cm/s). */
static void deferred(void) {
  tl_world *w = new_world(1e-3, NULL);
  double wall[3] = {0.1, 1.0, 1.0}, wpos[3] = {0.2, 0, 0.5};
  if (tl_world_add_ground(w, 0, 0.0, &err) != TL_OK ||
      tl_world_add_static_geom(w, TL_GEOM_BOX, wall, wpos, NULL, NULL, NULL, &err) != TL_OK ||
      tl_world_set_default_material(w, 0.0, 0.0, 0.01, &err) != TL_OK) {
    TL_CHECK(0, "deferred setup: %s", err.message);
    tl_world_free(w);
    return;
  }
  const double a = 0.1, face = 0.15; /* the wall's face toward the boxes */
  double size[3] = {a, a, a}, pb[3] = {face - a / 2 - 0.0003, 0, a / 2}, pa[3] = {pb[0] - a - 0.001, 0, a / 2};
  double va[3] = {3.0, 0, 0};
  tl_system *box_b = add_body(w, TL_GEOM_BOX, size, 1.0, pb, NULL, NULL, NULL);
  tl_system *box_a = add_body(w, TL_GEOM_BOX, size, 1.0, pa, NULL, va, NULL);
  int retry = 0, retry_first = 0, ok = 1;
  double worst = 0;
  for (int it = 0; it < 300 && ok; it++) {
    ok = step(w);
    tl_solver_stats st;
    tl_world_solver_stats(w, &st, NULL);
    if (it == 0) retry_first = st.deferred_retry;
    retry |= st.deferred_retry;
    double q[7], u[6];
    get_qu(box_b, q, u);
    worst = fmax(worst, q[0] + a / 2 - face); /* B's overlap with the wall */
  }
  double qa[7], ua[6], qb[7], ub[6];
  get_qu(box_a, qa, ua);
  get_qu(box_b, qb, ub);
  printf("deferred contacts: the first step solved again with its deferred contacts: %s; B's largest overlap with "
         "the wall %.3e m, final speeds A %.3e B %.3e m/s\n", retry_first ? "yes" : "no", worst, ua[0], ub[0]);
  TL_CHECK(ok, "deferred: stepping failed");
  TL_CHECK(retry_first, "deferred: the pushed wall contact did not make the first solve run again");
  TL_CHECK(worst < 1e-4, "deferred: B entered the wall by %.3e m", worst);
  TL_CHECK(ua[0] < 1e-9 && ub[0] < 1e-9, "deferred: boxes move toward the wall, %.3e and %.3e m/s", ua[0], ub[0]);
  TL_CHECK(ua[0] > -1e-2 && ub[0] > -1e-2, "deferred: boxes bounce off, %.3e and %.3e m/s", ua[0], ub[0]);
  tl_world_free(w);
}

/* ----------------------------------------------------------------- direct */

/* A box resting on the ground (4 corners, redundant friction rows) and a
 * 2 x 2 x 2 cube of boxes: the direct solve of the dense problem (every
 * contact sticking) is taken and the solve converges at once, with the
 * Signorini residual at rounding level; the resting box keeps its place. */
static void direct(void) {
  tl_world *w = new_world(1e-3, NULL);
  if (tl_world_add_ground(w, 0, 0.8, &err) != TL_OK) exit(1);
  double size[3] = {0.2, 0.3, 0.1}, pos[3] = {0, 0, 0.05};
  tl_system *box = add_body(w, TL_GEOM_BOX, size, 2.0, pos, NULL, NULL, NULL);
  int ok = 1, direct_steps = 0, worst_sweeps = 0;
  double worst_sig = 0;
  for (int it = 0; it < 2000 && ok; it++) {
    ok = step(w);
    tl_solver_stats st;
    tl_world_solver_stats(w, &st, NULL);
    if (it >= 100) {
      direct_steps += st.direct > 0;
      worst_sweeps = st.iterations > worst_sweeps ? st.iterations : worst_sweeps;
      worst_sig = fmax(worst_sig, st.signorini);
    }
  }
  double q[7], u[6];
  get_qu(box, q, u);
  printf("direct solves: resting box, %d of 1900 steps solved directly, at most %d sweeps, Signorini %.3e, "
         "drift %.3e m\n", direct_steps, worst_sweeps, worst_sig, sqrt(q[0] * q[0] + q[1] * q[1]));
  TL_CHECK(ok, "direct: stepping failed");
  TL_CHECK(direct_steps == 1900, "direct: only %d of 1900 resting steps took the direct solve", direct_steps);
  TL_CHECK(worst_sweeps <= 1, "direct: up to %d sweeps at rest", worst_sweeps);
  TL_CHECK(worst_sig < 1e-12, "direct: Signorini residual %.3e", worst_sig);
  TL_CHECK(sqrt(q[0] * q[0] + q[1] * q[1]) < 1e-9, "direct: the resting box slid");
  tl_world_free(w);
}

/* ---------------------------------------------------------------- filters */

static int contacts_after_step(tl_world *w) {
  return step(w) ? tl_world_ncontact(w) : -1;
}

static void filters(void) {
  tl_world *w = new_world(1e-3, NULL);
  if (tl_world_add_ground(w, 0, 0.8, &err) != TL_OK) exit(1);
  double r[3] = {0.1, 0, 0}, p0[3] = {0, 0, 0.1}, p1[3] = {0, 0, 0.3};
  tl_system *lo = add_body(w, TL_GEOM_SPHERE, r, 1.0, p0, NULL, NULL, NULL);
  tl_system *hi = add_body(w, TL_GEOM_SPHERE, r, 1.0, p1, NULL, NULL, NULL);
  size_t cap = tl_world_snapshot_size(w) + 4096, size = 0;
  unsigned char *snap = malloc(cap);
  int n0 = contacts_after_step(w), ok = snap && tl_world_snapshot_save(w, snap, cap, &size, &err) == TL_OK;
  tl_system_set_collision_filter(hi, 0, 2u, 1u, NULL); /* hi: group 2, sees group 1 (the ground); lo is group 1 */
  tl_system_set_collision_filter(lo, 0, 1u, 1u, NULL); /* lo sees group 1 only: not hi */
  int n1 = contacts_after_step(w);
  tl_system_set_integrator(lo, TL_INTEGRATOR_RK4, NULL);
  int n2 = contacts_after_step(w);
  ok = ok && tl_world_snapshot_restore(w, snap, size, &err) == TL_OK; /* Euler again, the filters as they are */
  int n3 = contacts_after_step(w);
  tl_system_set_collision_filter(hi, 0, 1u, ~0u, NULL);
  tl_system_set_collision_filter(lo, 0, 1u, ~0u, NULL);
  int n4 = contacts_after_step(w);
  tl_system_set_collision_filter(lo, 0, 4u, 4u, NULL); /* lo: neither the ground (group 1) nor hi */
  int n5 = contacts_after_step(w);
  printf("filters: contacts %d (both), %d (upper filtered from lower), %d (lower RK4), %d (restored), %d (filters "
         "reset), %d (lower filtered from all)\n", n0, n1, n2, n3, n4, n5);
  TL_CHECK(ok, "filters: snapshot failed: %s", err.message);
  TL_CHECK(n0 == 2 && n1 == 1 && n2 == 0 && n3 == 1 && n4 == 2 && n5 == 0,
           "filters: contacts %d %d %d %d %d %d, expected 2 1 0 1 2 0", n0, n1, n2, n3, n4, n5);
  free(snap);
  tl_world_free(w);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } groups[] = {{"incline", incline_stick_slide}, {"incline", incline_diagonal},
                {"restitution", restitution},      {"stack", stack},
                {"pile", pile},                    {"random", random_problems},
                {"deferred", deferred},            {"direct", direct},
                {"filters", filters},              {"pgs", pgs_problems}};
  const int ng = (int)(sizeof groups / sizeof groups[0]);
  for (int a = 1; a < argc; a++) {
    int found = 0;
    for (int g = 0; g < ng; g++) found |= !strcmp(argv[a], groups[g].name);
    if (!found) {
      fprintf(stderr, "usage: %s [incline|restitution|stack|pile|random|deferred|direct|filters|pgs]...\n", argv[0]);
      return 2;
    }
  }
  for (int g = 0; g < ng; g++) {
    int run = argc < 2;
    for (int a = 1; a < argc; a++) run |= !strcmp(argv[a], groups[g].name);
    if (run) groups[g].fn();
  }
  return tl_test_finish();
}
