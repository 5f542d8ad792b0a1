/* Guards: src/native/step.c (implicit PD, effort limits, external forces in the step),
 * src/world/system.c (PD gains and targets, springs), src/world/system_params.c (run-time mass
 * changes). */
/* Control (issue 6): the implicit PD with effort limits, joint springs,
 * run-time mass changes, external forces. Public API only.
 *
 * Modes (one ctest each):
 *   pd SHARED_ROBOTS_DIR   the KUKA iiwa (fixed base, no ground, gravity on, dt = 10 ms) at
 *                          q* = 0.3 rad on every joint:
 *                          - the implicit PD (Kp = 1e5, Kd = 1e3, tl_system_set_pd_gains) holds q*
 *                            for 5 s with max |q - q*| < 1e-3 rad, with the URDF's own limits and
 *                            with every limit removed;
 *                          - the same gains applied explicitly (tau = Kp (q* - q) - Kd u through
 *                            tl_system_set_generalized_force each step, engine gains zero, no
 *                            limits) diverge within the 5 s (|q| > 10 or TL_ERR_DIVERGED);
 *                          - the applied force (tl_system_applied_generalized_force) is the one the
 *                            step used: M (u+ - u) / dt + h + D u+ == tau to 1e-8 N m;
 *                          - effort limits 20 N m on joint 2 and 8 N m on joint 4 at a pose where
 *                            they need 44 and 13.5 N m (at q = 0.3 joint 4 carries ~0 and no pose
 *                            asks more than ~15 N m of it): |tau| <= effort (1 + 1e-9) at every
 *                            step, both saturate, the arm sags (> 0.05 rad on a limited joint), and
 *                            joint 1 (vertical axis, never saturated) still holds (< 1e-3 rad).
 *   spring                 - a revolute pendulum, no gravity, <dynamics stiffness spring_mount>:
 *                            frequency from zero crossings about the mount over 10 s is sqrt(k / I)
 *                            within 0.5 % at dt = 1e-4, and at dt = 1e-3 it stays stable (bounded,
 *                            frequency within 0.5 %); a stiff spring (k = 3e7, omega dt = 10) stays
 *                            bounded at dt = 1e-3;
 *                          - a spherical joint with an isotropic body at the joint: same frequency
 *                            check, and the spring pulls back toward the (identity) mount;
 *                          - a universal joint: the spring pulls both angles back toward their
 *                            mounts (URDF mount 0, and an API mount via tl_system_set_joint_spring).
 *   mass SHARED_ROBOTS_DIR ANYmal C: the trunk (URDF link base_inertia, merged into the base body)
 *                          mass x 1.2 through tl_system_set_link_inertial (variant A: com and
 *                          inertia kept; variant B: inertia x 1.2 too) gives the same M and h as
 *                          loading the URDF text with that link edited, at 3 random states,
 *                          relative 1e-12; setting the original values back restores them;
 *                          invalid values (negative / NaN / Inf mass, NaN com, non-PD or
 *                          non-symmetric inertia, unknown link) are refused and leave M, h and the
 *                          link's parameters unchanged bit for bit.
 *   external               a floating 4-body chain (revolute, spherical, fixed tool frame), no
 *                          gravity, moving: one step with a force F at a body's COM changes the
 *                          linear momentum by F dt and the angular momentum about the COM by
 *                          (c_b - c) x F dt, compared with the same step without the force (both
 *                          measured at the start configuration, so the comparison is exact to
 *                          rounding); a force at a world point r: (r - c) x F dt; at a named frame
 *                          (tl_model_frame_index + tl_system_frame_pose); a pure torque: T dt;
 *                          forces are cleared after the step (the next step matches a step without
 *                          force bit for bit) and by tl_system_clear_external_forces. A free box
 *                          at rest gets p = F dt exactly after the step.
 *
 * Missing shared robots: SKIPPED, exit 77 ($TALUS_SHARED/robots overrides SHARED_ROBOTS_DIR). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

#define MAXV 32
#define PI 3.14159265358979323846

static tl_error err_; /* scratch error for setup calls */

/* Path of a shared robot, or NULL (after counting a skip) when it is absent. */
static const char *shared_path(char *buf, size_t n, const char *dir, const char *rel) {
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0]) snprintf(buf, n, "%s/robots/%s", env, rel);
  else snprintf(buf, n, "%s/%s", dir ? dir : "../shared/robots", rel);
  FILE *f = fopen(buf, "r");
  if (!f) {
    tl_test_skip("%s not found (shared robot corpus absent)", buf);
    return NULL;
  }
  fclose(f);
  return buf;
}

static double vmax_abs(const double *a, int n) {
  double r = 0;
  for (int i = 0; i < n; i++) r = fmax(r, fabs(a[i]));
  return r;
}

/* ======================================================================= */
/* 1. implicit PD, explicit PD, effort limits on the iiwa                   */
/* ======================================================================= */

#define IIWA_KP 1e5
#define IIWA_KD 1e3
#define IIWA_DT 0.01
#define IIWA_T 5.0
#define IIWA_Q 0.3

typedef struct pd_run {
  int ok;              /* every step succeeded (or the divergence was detected) */
  int diverged;        /* |q| > 10 or TL_ERR_DIVERGED */
  double t_diverged;   /* s */
  double max_err[MAXV];  /* per DOF, over the run */
  double final_err[MAXV];
  double max_tau[MAXV];  /* largest |applied tau| per DOF */
  double worst_ratio;  /* max over limited DOFs and steps of |tau| / effort */
  double residual;     /* max |M (u+ - u) / dt + h + D u+ - tau_applied| over steps away from position limits */
  int nresidual;       /* steps that entered `residual` */
} pd_run;

#define IIWA_DAMPING 0.5 /* the URDF's <dynamics damping>, set again through the API */

/* limits: 0 = the URDF's, 1 = none (position and effort), 2 = URDF position limits and
 * `effort` (nv entries, INFINITY = none). explicit_pd: the PD computed here from the
 * start-of-step state and applied as a feedforward force. */
static pd_run iiwa_run(const tl_model *m, const double *pose, int explicit_pd, int limits, const double *effort) {
  pd_run r;
  memset(&r, 0, sizeof r);
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, IIWA_DT, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  int nv = ok ? tl_system_nv(s) : 0;
  double q[MAXV], u[MAXV] = {0}, qt[MAXV], kp[MAXV], kd[MAXV], zero[MAXV] = {0}, tau[MAXV];
  double eff[MAXV], lower[MAXV], upper[MAXV], M[MAXV * MAXV], h[MAXV], uprev[MAXV];
  ok = ok && nv == tl_system_nq(s) && nv <= MAXV;
  for (int i = 0; ok && i < nv; i++) {
    qt[i] = q[i] = pose[i];
    kp[i] = explicit_pd ? 0 : IIWA_KP;
    kd[i] = explicit_pd ? 0 : IIWA_KD;
    double lo, hi;
    tl_model_dof_limits(m, i, &lo, &hi, NULL);
    eff[i] = INFINITY;
    lower[i] = limits == 1 ? -INFINITY : lo;
    upper[i] = limits == 1 ? INFINITY : hi;
    ok = ok && tl_system_set_joint_damping(s, i, IIWA_DAMPING, &err) == TL_OK;
    if (limits == 1) ok = ok && tl_system_set_joint_limits(s, i, -INFINITY, INFINITY, INFINITY, &err) == TL_OK;
    if (limits == 2) {
      eff[i] = effort[i];
      ok = ok && tl_system_set_joint_limits(s, i, lo, hi, effort[i], &err) == TL_OK;
    }
  }
  ok = ok && tl_system_set_state(s, q, nv, u, nv, &err) == TL_OK &&
       tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK &&
       tl_system_set_pd_targets(s, qt, nv, zero, nv, &err) == TL_OK;
  if (!TL_CHECK(ok, "iiwa setup failed: %s", err.message)) goto done;
  int n = (int)lround(IIWA_T / IIWA_DT);
  for (int k = 0; k < n; k++) {
    tl_status st = tl_world_integrate1(w, &err);
    int away = 1; /* no joint-limit row can act in this step */
    if (st == TL_OK) {
      tl_system_get_state(s, q, nv, uprev, nv, NULL);
      tl_system_mass_matrix(s, M, nv, NULL);
      tl_system_nonlinear_term(s, h, nv, NULL);
      for (int i = 0; i < nv; i++) away = away && q[i] - lower[i] > 0.05 && upper[i] - q[i] > 0.05;
    }
    if (st == TL_OK && explicit_pd) {
      tl_system_get_state(s, q, nv, u, nv, NULL);
      for (int i = 0; i < nv; i++) tau[i] = IIWA_KP * (qt[i] - q[i]) + IIWA_KD * (0.0 - u[i]);
      st = tl_system_set_generalized_force(s, tau, nv, &err);
    }
    if (st == TL_OK) st = tl_world_integrate2(w, &err);
    if (st == TL_ERR_DIVERGED) {
      r.diverged = 1;
      r.t_diverged = (k + 1) * IIWA_DT;
      break;
    }
    if (st != TL_OK) {
      /* a non-finite feedforward force is refused: that is divergence too */
      if (explicit_pd) {
        r.diverged = 1;
        r.t_diverged = (k + 1) * IIWA_DT;
        break;
      }
      TL_CHECK(0, "iiwa step %d failed: %s", k, err.message);
      goto done;
    }
    tl_system_get_state(s, q, nv, u, nv, NULL);
    tl_system_applied_generalized_force(s, tau, nv, NULL);
    for (int i = 0; i < nv; i++) {
      double e = fabs(q[i] - qt[i]);
      r.max_err[i] = fmax(r.max_err[i], e);
      r.final_err[i] = e;
      r.max_tau[i] = fmax(r.max_tau[i], fabs(tau[i]));
      if (isfinite(eff[i])) r.worst_ratio = fmax(r.worst_ratio, fabs(tau[i]) / eff[i]);
    }
    /* the reported force is the one the integrator used: M (u+ - u) / dt + h + D u+ = tau */
    for (int i = 0; away && !explicit_pd && i < nv; i++) {
      double lhs = h[i] + IIWA_DAMPING * u[i];
      for (int j = 0; j < nv; j++) lhs += M[i * nv + j] * (u[j] - uprev[j]) / IIWA_DT;
      r.residual = fmax(r.residual, fabs(lhs - tau[i]));
    }
    r.nresidual += away && !explicit_pd;
    if (vmax_abs(q, nv) > 10 || !isfinite(vmax_abs(q, nv))) {
      r.diverged = 1;
      r.t_diverged = (k + 1) * IIWA_DT;
      break;
    }
  }
  r.ok = 1;
done:
  tl_world_free(w);
  return r;
}

/* Gravity torques of the iiwa at pose q (7) into g. */
static int iiwa_gravity(const tl_model *m, const double *q, double *g) {
  tl_world *w = NULL;
  tl_system *s = NULL;
  double u[7] = {0};
  int ok = tl_world_create(&w, &err_) == TL_OK && tl_world_add_system(w, m, &s, &err_) == TL_OK &&
           tl_system_set_state(s, q, 7, u, 7, &err_) == TL_OK && tl_system_nonlinear_term(s, g, 7, &err_) == TL_OK;
  tl_world_free(w);
  return TL_CHECK(ok, "iiwa gravity: %s", err_.message);
}

static void check_pd(const char *dir) {
  char path[4096];
  if (!shared_path(path, sizeof path, dir, "kuka_iiwa/model.urdf")) return;
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_error err;
  if (!TL_CHECK(tl_model_load_urdf(path, &o, &m, &err) == TL_OK, "iiwa: %s", err.message)) return;
  int nv = tl_model_nv(m);
  if (!TL_CHECK(nv == 7 && tl_model_nq(m) == 7, "iiwa: nq %d nv %d, expected 7", tl_model_nq(m), nv))
    goto done;

  double pose[7], g[7];
  for (int i = 0; i < 7; i++) pose[i] = IIWA_Q;
  if (iiwa_gravity(m, pose, g)) {
    printf("iiwa gravity torque at q = %.1f:", IIWA_Q);
    for (int i = 0; i < 7; i++) printf(" %.3f", g[i]);
    printf(" N m\n");
  }

  /* implicit PD, URDF limits (effort 300 N m: the PD runs through its constraint rows) */
  pd_run a = iiwa_run(m, pose, 0, 0, NULL);
  /* implicit PD, no limits at all */
  pd_run b = iiwa_run(m, pose, 0, 1, NULL);
  /* explicit PD, no limits */
  pd_run c = iiwa_run(m, pose, 1, 1, NULL);
  /* explicit PD with the URDF's limits (informative: the 300 N m clip and the position limits) */
  pd_run c2 = iiwa_run(m, pose, 1, 0, NULL);
  double ea = vmax_abs(a.max_err, 7), eb = vmax_abs(b.max_err, 7);
  printf("implicit PD, URDF limits: max |q - q*| over 5 s = %.3e rad (final %.3e), max |tau| = %.2f N m\n",
         ea, vmax_abs(a.final_err, 7), vmax_abs(a.max_tau, 7));
  printf("implicit PD, no limits:   max |q - q*| over 5 s = %.3e rad (final %.3e)\n", eb,
         vmax_abs(b.final_err, 7));
  printf("  applied force == M du/dt + h + D u+: max residual %.2e N m (URDF limits, %d steps), %.2e N m (no limits)\n",
         a.residual, a.nresidual, b.residual);
  TL_CHECK(a.nresidual > 0 && a.residual < 1e-8 && b.residual < 1e-8, "applied force inconsistent with the step: %.3g, %.3g",
           a.residual, b.residual);
  printf("explicit PD, no limits:   %s at t = %.2f s (step %d)\n", c.diverged ? "diverged" : "did NOT diverge",
         c.t_diverged, (int)lround(c.t_diverged / IIWA_DT));
  if (c2.diverged)
    printf("explicit PD, URDF limits: diverged at t = %.2f s (|q| > 10 despite the position limits)\n", c2.t_diverged);
  else
    printf("explicit PD, URDF limits: bounded, max |q - q*| = %.3e rad, max |tau| = %.1f N m\n",
           vmax_abs(c2.max_err, 7), vmax_abs(c2.max_tau, 7));
  TL_CHECK(a.ok && !a.diverged && ea < 1e-3, "implicit PD (URDF limits) does not hold: %.3e rad", ea);
  TL_CHECK(b.ok && !b.diverged && eb < 1e-3, "implicit PD (no limits) does not hold: %.3e rad", eb);
  TL_CHECK(c.ok && c.diverged && c.t_diverged <= IIWA_T, "explicit PD with Kp 1e5, Kd 1e3 at dt 10 ms did not diverge");

  /* Effort limits. At q = 0.3 joint 4 carries almost nothing and no pose asks more than ~15 N m
   * of it (the forearm is light), so the limited pose bends the shoulder and elbow: joint 2 needs
   * ~44 N m and joint 4 ~13.5 N m; limits 20 and 8 N m. */
  const double P[7] = {0.3, 0.9, 0.3, -1.0, 0.3, 0.3, 0.3};
  double effort[7] = {INFINITY, 20.0, INFINITY, 8.0, INFINITY, INFINITY, INFINITY};
  if (iiwa_gravity(m, P, g))
    printf("iiwa gravity torque at the limited pose: joint 2 %.3f, joint 4 %.3f N m (limits 20, 8)\n", g[1], g[3]);
  TL_CHECK(fabs(g[1]) > effort[1] && fabs(g[3]) > effort[3],
           "joints 2 and 4 need %.2f and %.2f N m: not above their limits", g[1], g[3]);
  pd_run h = iiwa_run(m, P, 0, 1, NULL);
  printf("implicit PD at the limited pose without limits: max |q - q*| = %.3e rad, |tau| joint 2, 4 = %.2f, %.2f N m\n",
         vmax_abs(h.max_err, 7), h.max_tau[1], h.max_tau[3]);
  TL_CHECK(h.ok && !h.diverged && vmax_abs(h.max_err, 7) < 1e-3, "the pose is not held without limits");
  pd_run d = iiwa_run(m, P, 0, 2, effort);
  printf("with limits: max |tau| = %.15g, %.15g N m (max |tau| / effort = 1 %+.2e); sag max |q - q*| = %.3f, %.3f rad "
         "(final %.3f, %.3f)\n  unsaturated joints max |q - q*|:",
         d.max_tau[1], d.max_tau[3], d.worst_ratio - 1, d.max_err[1], d.max_err[3], d.final_err[1], d.final_err[3]);
  for (int i = 0; i < 7; i++)
    if (i != 1 && i != 3) printf(" j%d %.3e", i + 1, d.max_err[i]);
  printf(" rad\n  applied force == M du/dt + h + D u+ over %d steps away from position limits: max residual %.2e N m\n",
         d.nresidual, d.residual);
  TL_CHECK(d.nresidual > 0 && d.residual < 1e-8, "effort-limited: applied force inconsistent with the step: %.3g", d.residual);
  TL_CHECK(d.ok && !d.diverged, "effort-limited run failed or diverged");
  TL_CHECK(d.worst_ratio <= 1 + 1e-9, "applied torque exceeds the effort limit: |tau| / effort = %.17g",
           d.worst_ratio);
  TL_CHECK(d.max_tau[1] >= effort[1] * (1 - 1e-9) && d.max_tau[3] >= effort[3] * (1 - 1e-9),
           "a limited joint never saturated: %.6g, %.6g N m", d.max_tau[1], d.max_tau[3]);
  TL_CHECK(fmax(d.max_err[1], d.max_err[3]) > 0.05, "the arm held with the limits: sag %.3e, %.3e rad",
           d.max_err[1], d.max_err[3]);
  /* joint 1: vertical axis, no gravity load; it holds against the reaction of the sagging arm */
  TL_CHECK(d.max_err[0] < 1e-3, "joint 1 (not saturated) did not hold: %.3e rad", d.max_err[0]);
done:
  tl_model_free(m);
}

/* ======================================================================= */
/* 2. springs                                                               */
/* ======================================================================= */

#define SPRING_K 30.0
#define SPRING_MOUNT 0.2
/* arm: mass 1 kg, COM 0.5 m from the hinge, izz 0.05 about the COM: I = 0.05 + 0.25 = 0.3 */
#define SPRING_I 0.3

static const char hinge_urdf[] =
    "<robot name='spring_pendulum'>"
    " <link name='base'/>"
    " <joint name='hinge' type='continuous'>"
    "  <parent link='base'/><child link='arm'/><axis xyz='0 0 1'/>"
    "  <dynamics damping='0' stiffness='30' spring_mount='0.2'/>"
    " </joint>"
    " <link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>"
    "  <inertia ixx='0.01' iyy='0.05' izz='0.05' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

/* isotropic body (I = 0.3 about every axis through the joint), COM at the joint */
static const char ball_urdf[] =
    "<robot name='spring_ball'>"
    " <link name='base'/>"
    " <joint name='ball' type='spherical'>"
    "  <parent link='base'/><child link='body'/>"
    "  <dynamics damping='0' stiffness='30'/>"
    " </joint>"
    " <link name='body'><inertial><mass value='2'/>"
    "  <inertia ixx='0.3' iyy='0.3' izz='0.3' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

static const char universal_urdf[] =
    "<robot name='spring_universal'>"
    " <link name='base'/>"
    " <joint name='uj' type='universal'>"
    "  <parent link='base'/><child link='body'/><axis xyz='1 0 0'/><axis2 xyz='0 1 0'/>"
    "  <dynamics damping='0' stiffness='30'/>"
    " </joint>"
    " <link name='body'><inertial><origin xyz='0 0 -0.2'/><mass value='1'/>"
    "  <inertia ixx='0.02' iyy='0.03' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

static tl_model *load_text(const char *text, const char *name) {
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf_string(text, strlen(text), name, &o, &m, &err) == TL_OK, "%s: %s", name,
                err.message))
    return NULL;
  return m;
}

static tl_world *nogravity_world(double dt) {
  tl_world *w = NULL;
  const double zero[3] = {0, 0, 0};
  if (tl_world_create(&w, &err_) != TL_OK) return NULL;
  tl_world_set_timestep(w, dt, NULL);
  tl_world_set_gravity(w, zero, NULL);
  return w;
}

/* Period from the upward zero crossings of x(t) (linear interpolation), and
 * the amplitude at the start and over the last period. */
typedef struct osc {
  int ncross;
  double period, amp0, amp_end, max_abs;
} osc;

typedef struct crossing_state {
  double prev, t_first, t_last;
  int n;
} crossing_state;

static void crossing_add(crossing_state *c, double t, double dt, double x) {
  if (c->prev < 0 && x >= 0) {
    double tc = t - dt + dt * (-c->prev) / (x - c->prev);
    if (c->n == 0) c->t_first = tc;
    c->t_last = tc;
    c->n++;
  }
  c->prev = x;
}

/* Hinge spring at time step dt: returns the measured angular frequency. */
static double hinge_frequency(double dt, osc *o) {
  memset(o, 0, sizeof *o);
  tl_model *m = load_text(hinge_urdf, "spring_pendulum.urdf");
  tl_world *w = nogravity_world(dt);
  tl_system *s = NULL;
  double omega = NAN;
  if (!m || !w || tl_world_add_system(w, m, &s, &err_) != TL_OK) goto done;
  double q = 0.0, u = 0.0, M = 0;
  tl_system_set_state(s, &q, 1, &u, 1, NULL);
  tl_system_mass_matrix(s, &M, 1, NULL);
  TL_CHECK_NEAR(M, SPRING_I, 1e-14, "hinge: inertia about the joint");
  crossing_state c = {q - SPRING_MOUNT, 0, 0, 0};
  o->amp0 = fabs(q - SPRING_MOUNT);
  long n = lround(10.0 / dt);
  double T = 2 * PI / sqrt(SPRING_K / SPRING_I);
  for (long k = 0; k < n; k++) {
    if (tl_world_step(w, &err_) != TL_OK) {
      TL_CHECK(0, "hinge dt %g: step failed: %s", dt, err_.message);
      goto done;
    }
    tl_system_get_state(s, &q, 1, &u, 1, NULL);
    double t = (k + 1) * dt, x = q - SPRING_MOUNT;
    crossing_add(&c, t, dt, x);
    o->max_abs = fmax(o->max_abs, fabs(x));
    if (t > 10.0 - T) o->amp_end = fmax(o->amp_end, fabs(x));
  }
  o->ncross = c.n;
  if (c.n >= 2) {
    o->period = (c.t_last - c.t_first) / (c.n - 1);
    omega = 2 * PI / o->period;
  }
done:
  tl_world_free(w);
  tl_model_free(m);
  return omega;
}

static void quat_axis_angle(double q[4], const double axis[3], double angle) {
  double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  q[0] = cos(angle / 2);
  for (int i = 0; i < 3; i++) q[i + 1] = sin(angle / 2) * axis[i] / n;
}

static void check_spring(void) {
  const double omega0 = sqrt(SPRING_K / SPRING_I);
  osc o4, o3;
  double w4 = hinge_frequency(1e-4, &o4);
  double w3 = hinge_frequency(1e-3, &o3);
  printf("hinge spring: sqrt(k/I) = %.9f rad/s\n", omega0);
  printf("  dt 1e-4: omega %.9f (error %+.3e), %d crossings, amplitude %.4f -> %.4f over 10 s\n", w4,
         (w4 - omega0) / omega0, o4.ncross, o4.amp0, o4.amp_end);
  printf("  dt 1e-3: omega %.9f (error %+.3e), %d crossings, amplitude %.4f -> %.4f over 10 s\n", w3,
         (w3 - omega0) / omega0, o3.ncross, o3.amp0, o3.amp_end);
  TL_CHECK(o4.ncross >= 10 && fabs(w4 - omega0) / omega0 < 5e-3, "hinge dt 1e-4: omega %.9g vs %.9g", w4, omega0);
  TL_CHECK(o3.ncross >= 10 && fabs(w3 - omega0) / omega0 < 5e-3, "hinge dt 1e-3: omega %.9g vs %.9g", w3, omega0);
  TL_CHECK(o4.max_abs <= o4.amp0 * (1 + 1e-9) && o3.max_abs <= o3.amp0 * (1 + 1e-9),
           "implicit spring gained energy: max |q - mount| %.6g, %.6g vs %.6g", o4.max_abs, o3.max_abs, o4.amp0);
  TL_CHECK(o4.amp_end > 0.5 * o4.amp0, "hinge dt 1e-4: amplitude decayed to %.4g", o4.amp_end);

  /* a stiff spring, k = 3e7 N m/rad (omega dt = 10 at dt = 1e-3, where an explicit spring would
   * blow up): the implicit spring stays bounded and settles toward the mount */
  {
    tl_model *m = load_text(hinge_urdf, "spring_pendulum.urdf");
    tl_world *w = nogravity_world(1e-3);
    tl_system *s = NULL;
    if (m && w && TL_CHECK(tl_world_add_system(w, m, &s, &err_) == TL_OK &&
                               tl_system_set_joint_spring(s, 0, 3e7, SPRING_MOUNT, &err_) == TL_OK,
                           "stiff hinge: %s", err_.message)) {
      double q = 0, u = 0, mx = 0;
      tl_system_set_state(s, &q, 1, &u, 1, NULL);
      int ok = 1;
      for (int k = 0; k < 1000 && ok; k++) {
        ok = tl_world_step(w, &err_) == TL_OK;
        tl_system_get_state(s, &q, 1, &u, 1, NULL);
        mx = fmax(mx, fabs(q - SPRING_MOUNT));
      }
      printf("stiff hinge spring k = 3e7 at dt 1e-3: max |q - mount| %.4g (start 0.2), after 1 s %.3g\n", mx,
             fabs(q - SPRING_MOUNT));
      TL_CHECK(ok && mx <= 0.2 * (1 + 1e-9) && fabs(q - SPRING_MOUNT) < 1e-3, "stiff implicit spring: max %.3g, final %.3g",
               mx, fabs(q - SPRING_MOUNT));
    }
    tl_world_free(w);
    tl_model_free(m);
  }

  /* spherical joint: rotation of 0.2 rad about a skew axis; isotropic inertia,
   * so the motion stays on that axis: theta'' = -k/I theta. */
  {
    tl_model *m = load_text(ball_urdf, "spring_ball.urdf");
    const double dt = 1e-4;
    tl_world *w = nogravity_world(dt);
    tl_system *s = NULL;
    if (m && w && TL_CHECK(tl_world_add_system(w, m, &s, &err_) == TL_OK, "ball: %s", err_.message)) {
      const double axis[3] = {1, 2, -0.5};
      double q[4], u[3] = {0, 0, 0};
      quat_axis_angle(q, axis, 0.2);
      tl_system_set_state(s, q, 4, u, 3, NULL);
      tl_world_step(w, NULL);
      tl_system_get_state(s, q, 4, u, 3, NULL);
      double dot = u[0] * axis[0] + u[1] * axis[1] + u[2] * axis[2];
      double nu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), na = sqrt(1 + 4 + 0.25);
      printf("ball spring: after one step u = (%.4g %.4g %.4g), cos(u, -axis) = %.9f\n", u[0], u[1], u[2],
             -dot / (nu * na));
      TL_CHECK(dot < 0 && -dot / (nu * na) > 1 - 1e-9, "ball spring does not pull back toward the mount");
      /* signed angle about the axis: 2 atan2(q_vec . axis_hat, qw) */
      crossing_state c = {0.2, 0, 0, 0};
      double min_angle = 1, max_angle = 0, off_axis = 0;
      long n = lround(10.0 / dt);
      for (long k = 1; k < n; k++) {
        if (tl_world_step(w, &err_) != TL_OK) {
          TL_CHECK(0, "ball step: %s", err_.message);
          break;
        }
        tl_system_get_state(s, q, 4, u, 3, NULL);
        double proj = (q[1] * axis[0] + q[2] * axis[1] + q[3] * axis[2]) / na;
        double ang = 2 * atan2(proj, q[0]);
        double vx = q[1] - proj * axis[0] / na, vy = q[2] - proj * axis[1] / na, vz = q[3] - proj * axis[2] / na;
        off_axis = fmax(off_axis, sqrt(vx * vx + vy * vy + vz * vz));
        min_angle = fmin(min_angle, ang);
        max_angle = fmax(max_angle, ang);
        crossing_add(&c, (k + 1) * dt, dt, ang);
      }
      double om = c.n >= 2 ? 2 * PI * (c.n - 1) / (c.t_last - c.t_first) : NAN;
      printf("ball spring: omega %.9f vs %.9f (error %+.3e), angle range [%.4f, %.4f], off-axis drift %.2e\n", om,
             omega0, (om - omega0) / omega0, min_angle, max_angle, off_axis);
      TL_CHECK(c.n >= 10 && fabs(om - omega0) / omega0 < 5e-3, "ball spring: omega %.9g vs %.9g", om, omega0);
      TL_CHECK(min_angle < -0.15 && max_angle <= 0.2 + 1e-9, "ball spring: angle range [%.4g, %.4g]", min_angle,
               max_angle);
    }
    tl_world_free(w);
    tl_model_free(m);
  }

  /* universal joint: the spring pulls each angle toward its mount */
  {
    tl_model *m = load_text(universal_urdf, "spring_universal.urdf");
    const double dt = 1e-3;
    tl_world *w = nogravity_world(dt);
    tl_system *s = NULL;
    if (m && w && TL_CHECK(tl_world_add_system(w, m, &s, &err_) == TL_OK, "universal: %s", err_.message)) {
      double q[2] = {0.2, -0.15}, u[2] = {0, 0};
      tl_system_set_state(s, q, 2, u, 2, NULL);
      tl_world_step(w, NULL);
      tl_system_get_state(s, q, 2, u, 2, NULL);
      printf("universal spring (mount 0): q (0.2, -0.15) -> u after one step (%.4g, %.4g)\n", u[0], u[1]);
      TL_CHECK(u[0] < 0 && u[1] > 0, "universal spring does not pull back: u = (%g, %g)", u[0], u[1]);
      /* both angles reach the other side of the mount within 2 s */
      double mn0 = 1, mx1 = -1;
      for (int k = 0; k < 2000; k++) {
        tl_world_step(w, NULL);
        tl_system_get_state(s, q, 2, u, 2, NULL);
        mn0 = fmin(mn0, q[0]);
        mx1 = fmax(mx1, q[1]);
      }
      TL_CHECK(mn0 < 0 && mx1 > 0, "universal spring: angles never crossed the mount (%g, %g)", mn0, mx1);
      /* API mount: 0.1 and -0.3 rad; starting at the mount nothing moves, starting at 0 it is pulled
       * toward the mount */
      TL_CHECK(tl_system_set_joint_spring(s, 0, 30, 0.1, &err_) == TL_OK &&
                   tl_system_set_joint_spring(s, 1, 30, -0.3, &err_) == TL_OK,
               "universal set_joint_spring: %s", err_.message);
      q[0] = 0.1, q[1] = -0.3, u[0] = u[1] = 0;
      tl_system_set_state(s, q, 2, u, 2, NULL);
      tl_world_step(w, NULL);
      tl_system_get_state(s, q, 2, u, 2, NULL);
      TL_CHECK(fabs(u[0]) < 1e-12 && fabs(u[1]) < 1e-12, "universal at its API mount moves: u = (%g, %g)", u[0],
               u[1]);
      q[0] = q[1] = u[0] = u[1] = 0;
      tl_system_set_state(s, q, 2, u, 2, NULL);
      tl_world_step(w, NULL);
      tl_system_get_state(s, q, 2, u, 2, NULL);
      printf("universal spring (API mounts 0.1, -0.3): from q = 0, u after one step (%.4g, %.4g)\n", u[0], u[1]);
      TL_CHECK(u[0] > 0 && u[1] < 0, "universal spring with API mount pulls the wrong way: u = (%g, %g)", u[0],
               u[1]);
    }
    tl_world_free(w);
    tl_model_free(m);
  }
}

/* ======================================================================= */
/* 3. run-time mass change on ANYmal C                                       */
/* ======================================================================= */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* xorshift64*, uniform in [0, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

/* Replace text [a, b) of src by rep; returns a new string. */
static char *splice(const char *src, size_t a, size_t b, const char *rep) {
  size_t n = strlen(src), r = strlen(rep);
  char *out = malloc(n - (b - a) + r + 1);
  memcpy(out, src, a);
  memcpy(out + a, rep, r);
  memcpy(out + a + r, src + b, n - b + 1);
  return out;
}

/* Copy of the URDF text with link `link`'s <mass value> and <inertia ...> replaced. */
static char *edit_inertial(const char *text, const char *link, double mass, const double I[9]) {
  char key[256];
  snprintf(key, sizeof key, "<link name=\"%s\">", link);
  const char *l = strstr(text, key);
  if (!l) return NULL;
  const char *ms = strstr(l, "<mass"), *me = ms ? strstr(ms, "/>") : NULL;
  const char *is = strstr(l, "<inertia "), *ie = is ? strstr(is, "/>") : NULL;
  const char *end = strstr(l, "</link>");
  if (!ms || !me || !is || !ie || ie > end || me > end) return NULL;
  char rep[512];
  snprintf(rep, sizeof rep, "<mass value=\"%.17g\"", mass);
  char *t1 = splice(text, (size_t)(ms - text), (size_t)(me - text), rep);
  snprintf(rep, sizeof rep, "<inertia ixx=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" iyy=\"%.17g\" iyz=\"%.17g\" izz=\"%.17g\"",
           I[0], I[1], I[2], I[4], I[5], I[8]);
  /* offsets of <inertia in t1: shift by the length change of the mass element */
  long shift = (long)strlen(t1) - (long)strlen(text);
  size_t a = (size_t)(is - text + shift), b = (size_t)(ie - text + shift);
  char *t2 = splice(t1, a, b, rep);
  free(t1);
  return t2;
}

typedef struct dyn_snapshot {
  double M[MAXV * MAXV], h[MAXV];
} dyn_snapshot;

static void snapshot(tl_system *s, dyn_snapshot *d) {
  int nv = tl_system_nv(s);
  tl_system_mass_matrix(s, d->M, nv, NULL);
  tl_system_nonlinear_term(s, d->h, nv, NULL);
}

static double rel_diff(const double *a, const double *b, int n) {
  double dm = 0, sc = 0;
  for (int i = 0; i < n; i++) dm = fmax(dm, fabs(a[i] - b[i])), sc = fmax(sc, fabs(b[i]));
  return sc > 0 ? dm / sc : dm;
}

static void random_state(int nq, int nv, double *q, double *u) {
  q[0] = urand() - 0.5, q[1] = urand() - 0.5, q[2] = 0.5 + urand();
  double qn = 0;
  for (int i = 3; i < 7; i++) q[i] = 2 * urand() - 1, qn += q[i] * q[i];
  for (int i = 3; i < 7; i++) q[i] /= sqrt(qn);
  for (int i = 7; i < nq; i++) q[i] = 2 * urand() - 1;
  for (int i = 0; i < nv; i++) u[i] = 2 * urand() - 1;
}

static void check_mass(const char *dir) {
  char path[4096];
  if (!shared_path(path, sizeof path, dir, "anymal_c/urdf/anymal.urdf")) return;
  char mesh_dir[4096];
  snprintf(mesh_dir, sizeof mesh_dir, "%s", path);
  char *slash = strrchr(mesh_dir, '/');
  if (slash) *slash = 0;
  size_t len = 0;
  char *text = tl_test_read_text(path, &len);
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL, *ref = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  const char *link = "base_inertia";
  if (!TL_CHECK(text != NULL, "cannot read %s", path)) return;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
                    tl_world_add_system(w, m, &s, &err) == TL_OK,
                "anymal: %s", err.message))
    goto done;
  int nq = tl_system_nq(s), nv = tl_system_nv(s);
  if (!TL_CHECK(nv <= MAXV, "anymal nv %d", nv)) goto done;
  double mass0, com0[3], I0[9];
  if (!TL_CHECK(tl_system_link_inertial(s, link, &mass0, com0, I0, &err) == TL_OK, "%s: %s", link, err.message))
    goto done;
  int trunk_body = tl_model_body_index(tl_system_model(s), link);
  printf("anymal: link %s (body %d, merged into '%s'): mass %.6g kg of total %.6g kg, com (%.4g %.4g %.4g)\n", link,
         trunk_body, tl_model_body_name(tl_system_model(s), trunk_body), mass0, tl_model_total_mass(m), com0[0],
         com0[1], com0[2]);
  TL_CHECK(trunk_body == 0 && mass0 > 5, "trunk link %s: body %d, mass %g", link, trunk_body, mass0);

  double states_q[3][MAXV], states_u[3][MAXV];
  for (int k = 0; k < 3; k++) random_state(nq, nv, states_q[k], states_u[k]);
  dyn_snapshot orig[3];
  for (int k = 0; k < 3; k++) {
    tl_system_set_state(s, states_q[k], nq, states_u[k], nv, NULL);
    snapshot(s, &orig[k]);
  }

  for (int variant = 0; variant < 2; variant++) {
    double mass1 = 1.2 * mass0, I1[9];
    for (int i = 0; i < 9; i++) I1[i] = variant ? 1.2 * I0[i] : I0[i];
    char *edited = edit_inertial(text, link, mass1, I1);
    tl_model *me = NULL;
    tl_world *we = NULL;
    tl_load_options o = tl_load_options_default();
    o.mesh_dir = mesh_dir;
    int ok = TL_CHECK(edited != NULL, "cannot edit %s in %s", link, path) &&
             TL_CHECK(tl_model_load_urdf_string(edited, strlen(edited), "anymal_edited.urdf", &o, &me, &err) == TL_OK &&
                          tl_world_create(&we, &err) == TL_OK && tl_world_add_system(we, me, &ref, &err) == TL_OK,
                      "edited anymal: %s", err.message) &&
             TL_CHECK(tl_system_set_link_inertial(s, link, mass1, com0, I1, &err) == TL_OK,
                      "set_link_inertial: %s", err.message);
    if (ok) {
      double dM = 0, dh = 0, dmass = fabs(tl_model_total_mass(tl_system_model(s)) - tl_model_total_mass(me));
      for (int k = 0; k < 3; k++) {
        dyn_snapshot a, b;
        tl_system_set_state(s, states_q[k], nq, states_u[k], nv, NULL);
        tl_system_set_state(ref, states_q[k], nq, states_u[k], nv, NULL);
        snapshot(s, &a);
        snapshot(ref, &b);
        dM = fmax(dM, rel_diff(a.M, b.M, nv * nv));
        dh = fmax(dh, rel_diff(a.h, b.h, nv));
        if (k == 0) {
          double dM0 = rel_diff(a.M, orig[k].M, nv * nv);
          printf("  variant %s: M changed by %.3g (relative) from the original\n", variant ? "B" : "A", dM0);
          TL_CHECK(dM0 > 1e-3, "the mass change did not change M (%.3g)", dM0);
        }
      }
      printf("anymal trunk mass x1.2%s: vs edited URDF at 3 random states: max rel |dM| = %.3e, |dh| = %.3e, "
             "|d total mass| = %.3e kg (total %.6g kg)\n",
             variant ? " and inertia x1.2" : " (com, inertia kept)", dM, dh, dmass, tl_model_total_mass(me));
      TL_CHECK(dM <= 1e-12 && dh <= 1e-12, "variant %d: M rel %.3g, h rel %.3g", variant, dM, dh);
      TL_CHECK(dmass <= 1e-12 * tl_model_total_mass(me), "variant %d: total mass differs by %.3g", variant, dmass);
    }
    /* back to the original */
    TL_CHECK(tl_system_set_link_inertial(s, link, mass0, com0, I0, &err) == TL_OK, "restore: %s", err.message);
    free(edited);
    tl_world_free(we);
    tl_model_free(me);
    ref = NULL;
  }
  {
    double d = 0;
    for (int k = 0; k < 3; k++) {
      dyn_snapshot a;
      tl_system_set_state(s, states_q[k], nq, states_u[k], nv, NULL);
      snapshot(s, &a);
      d = fmax(d, fmax(rel_diff(a.M, orig[k].M, nv * nv), rel_diff(a.h, orig[k].h, nv)));
    }
    printf("anymal: original values set back: M, h differ from the loaded model by %.3e (relative)\n", d);
    TL_CHECK(d <= 1e-12, "restoring the trunk inertial leaves M/h off by %.3g", d);
  }

  /* invalid values: refused, nothing changed */
  {
    tl_system_set_state(s, states_q[0], nq, states_u[0], nv, NULL);
    dyn_snapshot before, after;
    snapshot(s, &before);
    double nan_com[3] = {com0[0], NAN, com0[2]};
    double notpd[9] = {0.1, 0, 0, 0, -0.05, 0, 0, 0, 0.1};
    double notpd2[9] = {0.1, 0.2, 0, 0.2, 0.1, 0, 0, 0, 0.1}; /* eigenvalue -0.1 */
    double nonsym[9];
    memcpy(nonsym, I0, sizeof nonsym);
    nonsym[1] += 0.01;
    double nan_I[9];
    memcpy(nan_I, I0, sizeof nan_I);
    nan_I[4] = NAN;
    struct {
      const char *what, *link;
      double mass;
      const double *com, *I;
    } bad[] = {
        {"negative mass", link, -1.0, com0, I0},
        {"NaN mass", link, NAN, com0, I0},
        {"infinite mass", link, INFINITY, com0, I0},
        {"NaN com", link, mass0, nan_com, I0},
        {"negative inertia diagonal", link, mass0, com0, notpd},
        {"indefinite inertia", link, mass0, com0, notpd2},
        {"non-symmetric inertia", link, mass0, com0, nonsym},
        {"NaN inertia", link, mass0, com0, nan_I},
        {"unknown link", "no_such_link", mass0, com0, I0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      memset(&err, 0, sizeof err);
      tl_status st = tl_system_set_link_inertial(s, bad[i].link, bad[i].mass, bad[i].com, bad[i].I, &err);
      snapshot(s, &after);
      double m1, c1[3], I1[9];
      tl_system_link_inertial(s, link, &m1, c1, I1, NULL);
      int same = memcmp(before.M, after.M, sizeof(double) * (size_t)(nv * nv)) == 0 &&
                 memcmp(before.h, after.h, sizeof(double) * (size_t)nv) == 0 && m1 == mass0 &&
                 memcmp(c1, com0, sizeof c1) == 0 && memcmp(I1, I0, sizeof I1) == 0;
      printf("  %-26s -> %s: %s\n", bad[i].what, tl_status_name(st), st ? err.message : "(accepted)");
      TL_CHECK(st != TL_OK, "%s accepted", bad[i].what);
      TL_CHECK(same, "%s: M, h or the link's parameters changed after a refused call", bad[i].what);
      if (st == TL_OK) tl_system_set_link_inertial(s, link, mass0, com0, I0, NULL);
    }
  }
done:
  free(text);
  tl_world_free(w);
  tl_model_free(m);
}

/* ======================================================================= */
/* 4. external forces                                                       */
/* ======================================================================= */

static const char chain_urdf[] =
    "<robot name='chain'>"
    " <link name='torso'><inertial><origin xyz='0.05 -0.02 0.01'/><mass value='3'/>"
    "  <inertia ixx='0.05' iyy='0.06' izz='0.07' ixy='0.001' ixz='-0.002' iyz='0.003'/></inertial></link>"
    " <joint name='j1' type='continuous'><parent link='torso'/><child link='l1'/>"
    "  <origin xyz='0.2 0 0' rpy='0.1 0 0.2'/><axis xyz='0 1 0'/></joint>"
    " <link name='l1'><inertial><origin xyz='0.1 0 0'/><mass value='1'/>"
    "  <inertia ixx='0.002' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='j2' type='spherical'><parent link='l1'/><child link='l2'/><origin xyz='0.2 0 0'/></joint>"
    " <link name='l2'><inertial><origin xyz='0.08 0.01 0'/><mass value='0.7'/>"
    "  <inertia ixx='0.001' iyy='0.006' izz='0.006' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='j3' type='continuous'><parent link='torso'/><child link='l3'/>"
    "  <origin xyz='-0.1 0.1 0'/><axis xyz='1 0 0'/></joint>"
    " <link name='l3'><inertial><origin xyz='0 0.1 0'/><mass value='0.5'/>"
    "  <inertia ixx='0.002' iyy='0.0005' izz='0.002' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='tool' type='fixed'><parent link='l2'/><child link='tip'/>"
    "  <origin xyz='0.15 0.03 -0.02' rpy='0.1 0.2 0.3'/></joint>"
    " <link name='tip'/>"
    "</robot>";

#define EXT_DT 1e-3

typedef struct ext_ctx {
  tl_world *w;
  tl_system *s;
  int nq, nv;
  double q0[MAXV], u0[MAXV];
  double q1[MAXV], u1[MAXV]; /* the step without any force */
} ext_ctx;

static int step_from(ext_ctx *c, const double *q, const double *u, double *q1, double *u1) {
  tl_system_set_state(c->s, q, c->nq, u, c->nv, NULL);
  if (tl_world_step(c->w, &err_) != TL_OK) return 0;
  tl_system_get_state(c->s, q1, c->nq, u1, c->nv, NULL);
  return 1;
}

/* Momenta (linear; angular about the system COM at q0) of velocity u at q0. */
static void momenta_at_q0(ext_ctx *c, const double *u, double p[3], double L[3]) {
  double com[3];
  tl_system_set_state(c->s, c->q0, c->nq, u, c->nv, NULL);
  tl_system_com(c->s, com, NULL);
  tl_system_linear_momentum(c->s, p, NULL);
  tl_system_angular_momentum(c->s, com, L, NULL);
}

static void cross(double r[3], const double a[3], const double b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

static int bitwise_same(const double *a, const double *b, int n) { return memcmp(a, b, sizeof(double) * (size_t)n) == 0; }

/* After a step from (q0, u0) that ended in (q1f, u1f): compare momenta with the force-free step. */
static void check_momentum_change(ext_ctx *c, const char *what, const double *u1f, const double dp_exp[3],
                                  const double dL_exp[3]) {
  double pf[3], Lf[3], p0[3], L0[3];
  momenta_at_q0(c, u1f, pf, Lf);
  momenta_at_q0(c, c->u1, p0, L0);
  double ep = 0, eL = 0, sp = 0, sL = 0;
  for (int i = 0; i < 3; i++) {
    ep = fmax(ep, fabs(pf[i] - p0[i] - dp_exp[i]));
    eL = fmax(eL, fabs(Lf[i] - L0[i] - dL_exp[i]));
    sp = fmax(sp, fabs(dp_exp[i]));
    sL = fmax(sL, fabs(dL_exp[i]));
  }
  printf("  %-30s |dp - expected| = %.2e (|dp| %.3g), |dL - expected| = %.2e (|dL| %.3g)\n", what, ep, sp, eL, sL);
  TL_CHECK(ep <= 1e-12 * fmax(sp, 1e-3) && eL <= 1e-12 * fmax(sL, 1e-3), "%s: momentum change off by %.3g / %.3g",
           what, ep, eL);
}

static void check_external(void) {
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  ext_ctx c;
  memset(&c, 0, sizeof c);
  if (!TL_CHECK(tl_model_load_urdf_string(chain_urdf, strlen(chain_urdf), "chain.urdf", NULL, &m, &err) == TL_OK,
                "chain: %s", err.message))
    return;
  c.w = nogravity_world(EXT_DT);
  if (!TL_CHECK(c.w && tl_world_add_system(c.w, m, &c.s, &err) == TL_OK, "chain world: %s", err.message)) goto done;
  c.nq = tl_system_nq(c.s), c.nv = tl_system_nv(c.s);
  const tl_model *sm = tl_system_model(c.s);
  TL_CHECK(c.nv == 6 + 1 + 3 + 1 && c.nq == 7 + 1 + 4 + 1, "chain: nq %d nv %d", c.nq, c.nv);
  /* a moving, tumbling state */
  {
    double axis[3] = {0.3, -1, 0.4}, qb[4], qs[4], axis2[3] = {1, 1, 1};
    quat_axis_angle(qb, axis, 0.7);
    quat_axis_angle(qs, axis2, 0.5);
    double q[] = {0.1, -0.2, 0.3, qb[0], qb[1], qb[2], qb[3], 0.4, qs[0], qs[1], qs[2], qs[3], -0.6};
    double u[] = {0.3, -0.1, 0.2, 0.5, -0.7, 0.9, 1.1, -0.4, 0.8, 0.3, -1.3};
    memcpy(c.q0, q, sizeof q);
    memcpy(c.u0, u, sizeof u);
  }
  if (!TL_CHECK(step_from(&c, c.q0, c.u0, c.q1, c.u1), "chain step: %s", err_.message)) goto done;
  double q1f[MAXV], u1f[MAXV], com[3];
  const double F[3] = {3.0, -2.0, 5.0}, T[3] = {-0.4, 0.9, 0.25};
  const double dp_F[3] = {F[0] * EXT_DT, F[1] * EXT_DT, F[2] * EXT_DT}, zero3[3] = {0, 0, 0};
  printf("external forces on a floating chain, dt = %g s, F = (3, -2, 5) N:\n", EXT_DT);

  /* the system COM at q0 */
  tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
  tl_system_com(c.s, com, NULL);

  /* (a) force at the COM of each body */
  for (int b = 0; b < tl_model_nbody(sm); b++) {
    double pos[3], R[9], lc[3], mass, I[9], cb[3], r[3], dL[3];
    tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
    tl_system_body_pose(c.s, b, pos, R, NULL);
    tl_system_link_inertial(c.s, tl_model_body_name(sm, b), &mass, lc, I, NULL);
    for (int i = 0; i < 3; i++) cb[i] = pos[i] + R[3 * i] * lc[0] + R[3 * i + 1] * lc[1] + R[3 * i + 2] * lc[2];
    for (int i = 0; i < 3; i++) r[i] = cb[i] - com[i];
    cross(dL, r, F);
    for (int i = 0; i < 3; i++) dL[i] *= EXT_DT;
    if (!TL_CHECK(tl_system_add_external_force(c.s, b, F, NULL, &err) == TL_OK, "add force: %s", err.message)) continue;
    if (!TL_CHECK(tl_world_step(c.w, &err) == TL_OK, "step: %s", err.message)) continue;
    tl_system_get_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
    char what[64];
    snprintf(what, sizeof what, "force at COM of body %d (%s)", b, tl_model_body_name(sm, b));
    check_momentum_change(&c, what, u1f, dp_F, dL);
    /* the next step is force-free: same as a step from (q1f, u1f) without any force */
    double q2[MAXV], u2[MAXV], q2r[MAXV], u2r[MAXV];
    tl_system_set_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
    tl_world_step(c.w, NULL); /* no force was added since the last step */
    tl_system_get_state(c.s, q2, c.nq, u2, c.nv, NULL);
    step_from(&c, q1f, u1f, q2r, u2r);
    TL_CHECK(bitwise_same(q2, q2r, c.nq) && bitwise_same(u2, u2r, c.nv),
             "body %d: the force was still applied in the next step", b);
  }

  /* (b) force at a world point on body 2 (l2), away from its COM */
  {
    double pos[3], R[9], r[3], dL[3];
    tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
    tl_system_body_pose(c.s, 2, pos, R, NULL);
    double pt[3] = {pos[0] + 0.05, pos[1] - 0.12, pos[2] + 0.3};
    for (int i = 0; i < 3; i++) r[i] = pt[i] - com[i];
    cross(dL, r, F);
    for (int i = 0; i < 3; i++) dL[i] *= EXT_DT;
    tl_system_add_external_force(c.s, 2, F, pt, NULL);
    tl_world_step(c.w, NULL);
    tl_system_get_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
    check_momentum_change(&c, "force at a world point (l2)", u1f, dp_F, dL);
  }

  /* (c) force at the named frame "tool" (fixed joint l2 -> tip) */
  {
    int fr = tl_model_frame_index(sm, "tool");
    if (TL_CHECK(fr >= 0, "frame 'tool' not found")) {
      int b = tl_model_frame_body(sm, fr);
      double pos[3], R[9], r[3], dL[3];
      tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
      tl_system_frame_pose(c.s, fr, pos, R, NULL);
      for (int i = 0; i < 3; i++) r[i] = pos[i] - com[i];
      cross(dL, r, F);
      for (int i = 0; i < 3; i++) dL[i] *= EXT_DT;
      TL_CHECK(b == 2, "frame 'tool' on body %d, expected 2", b);
      tl_system_add_external_force(c.s, b, F, pos, NULL);
      tl_world_step(c.w, NULL);
      tl_system_get_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
      check_momentum_change(&c, "force at frame 'tool'", u1f, dp_F, dL);
    }
  }

  /* (d) pure torque on body 3 */
  {
    double dL[3] = {T[0] * EXT_DT, T[1] * EXT_DT, T[2] * EXT_DT};
    tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
    TL_CHECK(tl_system_add_external_torque(c.s, 3, T, &err) == TL_OK, "add torque: %s", err.message);
    tl_world_step(c.w, NULL);
    tl_system_get_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
    check_momentum_change(&c, "torque on body 3 (l3)", u1f, zero3, dL);
  }

  /* (e) cleared by tl_system_clear_external_forces: the step is the force-free one, bit for bit */
  {
    tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
    tl_system_add_external_force(c.s, 1, F, NULL, NULL);
    tl_system_add_external_torque(c.s, 0, T, NULL);
    tl_system_clear_external_forces(c.s);
    tl_world_step(c.w, NULL);
    tl_system_get_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
    TL_CHECK(bitwise_same(q1f, c.q1, c.nq) && bitwise_same(u1f, c.u1, c.nv),
             "tl_system_clear_external_forces did not clear the forces");
  }

  /* (f) bad arguments refused */
  {
    const double nanf[3] = {NAN, 0, 0};
    TL_CHECK(tl_system_add_external_force(c.s, 99, F, NULL, NULL) != TL_OK, "force on body 99 accepted");
    TL_CHECK(tl_system_add_external_force(c.s, 1, nanf, NULL, NULL) != TL_OK, "NaN force accepted");
    TL_CHECK(tl_system_add_external_torque(c.s, 1, nanf, NULL) != TL_OK, "NaN torque accepted");
    tl_system_set_state(c.s, c.q0, c.nq, c.u0, c.nv, NULL);
    tl_world_step(c.w, NULL);
    tl_system_get_state(c.s, q1f, c.nq, u1f, c.nv, NULL);
    TL_CHECK(bitwise_same(q1f, c.q1, c.nq) && bitwise_same(u1f, c.u1, c.nv),
             "a refused external force changed the step");
  }

  /* (g) from rest, the absolute change measured at the end-of-step state (not exact for an
   * articulated body: p(q) depends on q, an O(dt^3) difference); informative */
  {
    double zu[MAXV] = {0}, p[3];
    tl_system_set_state(c.s, c.q0, c.nq, zu, c.nv, NULL);
    tl_system_add_external_force(c.s, 2, F, NULL, NULL);
    tl_world_step(c.w, NULL);
    tl_system_linear_momentum(c.s, p, NULL);
    printf("  from rest, force at COM of l2, p at the end of the step - F dt: (%.2e %.2e %.2e)\n", p[0] - dp_F[0],
           p[1] - dp_F[1], p[2] - dp_F[2]);
  }

  /* (h) a free box at rest: p after the step == F dt */
  {
    tl_model *box = NULL;
    tl_world *w = nogravity_world(EXT_DT);
    tl_system *s = NULL;
    const double size[3] = {0.3, 0.2, 0.1};
    if (TL_CHECK(w && tl_model_create_primitive(TL_GEOM_BOX, size, 2.5, "box", &box, &err) == TL_OK &&
                     tl_world_add_system(w, box, &s, &err) == TL_OK,
                 "box: %s", err.message)) {
      double p[3], L[3], cm[3];
      tl_system_add_external_force(s, 0, F, NULL, NULL);
      tl_world_step(w, NULL);
      tl_system_linear_momentum(s, p, NULL);
      tl_system_com(s, cm, NULL);
      tl_system_angular_momentum(s, cm, L, NULL);
      double e = fmax(fabs(p[0] - dp_F[0]), fmax(fabs(p[1] - dp_F[1]), fabs(p[2] - dp_F[2])));
      printf("  free box at rest, force at COM: |p - F dt| = %.2e, |L| = %.2e\n", e, vmax_abs(L, 3));
      TL_CHECK(e <= 1e-15 * vmax_abs(dp_F, 3) && vmax_abs(L, 3) <= 1e-18, "free box: p off by %.3g, L %.3g", e, vmax_abs(L, 3));
    }
    tl_world_free(w);
    tl_model_free(box);
  }
done:
  tl_world_free(c.w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_control pd|mass SHARED_ROBOTS_DIR | spring | external\n");
    return 2;
  }
  const char *mode = argv[1], *dir = argc > 2 ? argv[2] : NULL;
  if (strcmp(mode, "pd") == 0) check_pd(dir);
  else if (strcmp(mode, "spring") == 0) check_spring();
  else if (strcmp(mode, "mass") == 0) check_mass(dir);
  else if (strcmp(mode, "external") == 0) check_external();
  else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
  }
  int rc = tl_test_finish();
  const tl_test_counts *c = tl_test_totals();
  if (rc == 0 && c->skipped > 0 && c->passed == 0) return TL_TEST_SKIP_CODE;
  return rc;
}
