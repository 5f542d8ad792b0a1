/* Guards: src/contact/constraint_loop.c, src/world/constraint_project.c,
 * src/contact/solver_gs.c (the loop equality group), src/math/tl_dense.c
 * (tl_dense_cholesky_psd), src/native/step.c (post-step projection),
 * src/native/native_snapshot.c (loop warm starts). */
/* Loop constraints (talus/constraint.h) in the native engine, issue 23.
 *
 * robots/four_bar/four_bar.urdf: a planar crank-rocker (ground d = 0.4,
 * crank a = 0.2, coupler b = 0.4, rocker c = 0.3 m, joints about y) held as
 * a tree, closed here by a `ball` (3 rows, one of them, out of the plane, is
 * zero: redundant) or a `hinge` about y (5 rows, 3 redundant) from the
 * rocker's tip to the ground pivot D. Released at rest from crank angle
 * pi/2 + 0.6 rad, no damping, dt = 1 ms:
 *  - Freudenstein: K1 cos t4 - K2 cos t2 + K3 = cos(t2 - t4) (K1 = d/a,
 *    K2 = d/c, K3 = (a^2 - b^2 + c^2 + d^2) / (2 a c)) holds along the
 *    trajectory to 1e-6 rad (its residual over |dF/dt4|);
 *  - the gap |p1 - p2| stays below 1e-9 m over 10 s;
 *  - the period equals that of an independent 1-DOF integration (the
 *    Lagrangian in the crank angle from the closed-form position analysis,
 *    RK4 at 1e-4 s) within 0.5 %;
 *  - the energy stays within 1 % of the peak kinetic energy over 5 s;
 *  - per-contact, PGS and Dantzig give the same motion (crank angle after
 *    2 s), converge, no NaN, gap < 1e-9 (redundant rows well conditioned).
 * A box hung from the world by a rigid `distance` constraint (0.5 m, at its
 * centre) swings with the period of robots/pendulum.urdf's revolute
 * pendulum (and the exact large-amplitude period) within 0.5 %, under every
 * solver; hanging at rest it reads back the force m g up. A box welded to
 * the four-bar's coupler moves with it under every solver (weld error <
 * 1e-9 m and rad; same motion). A distance range (a rope, max only) holds
 * the box at its length. tl_world_project_constraints from a perturbed pose
 * converges to a gap < 1e-12 and zero constraint velocity, and refuses an
 * unreachable constraint leaving q unchanged. Snapshot save / restore with
 * constraints replays bit for bit (state and wrench). A kuka_iiwa
 * (../shared) lifting a box welded to its flange by PD carries it: the box
 * follows the flange to 1e-6 m (skipped with 77 when ../shared is absent;
 * only that part).
 *
 * Usage: test_loops core ROBOTS_DIR        (everything but the iiwa)
 *        test_loops iiwa ROBOTS_DIR SHARED_DIR (exit 77 when SHARED_DIR lacks kuka_iiwa) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/tl_dense.h"
#include "talus/talus.h"
#include "test_alloc.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define G 9.81
#define LA 0.2
#define LB 0.4
#define LC 0.3
#define LD 0.4

static const char *robots_dir;
static int skipped_shared;

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

/* ---------------- four-bar closed form ---------------- */

/* Coupler angle t3 and rocker angle t4 (of D -> C) for crank angle t2, plane
 * (x, w = -z), branch s: C below the ground line for s = +1 at the start. */
static int fourbar_solve(double t2, double s, double *t3, double *t4) {
  double bx = LA * cos(t2), bw = LA * sin(t2), ex = LD - bx, ew = -bw, L = hypot(ex, ew);
  ex /= L, ew /= L;
  double x = (LB * LB - LC * LC + L * L) / (2 * L), h2 = LB * LB - x * x;
  if (h2 < 0) return -1;
  double h = sqrt(h2), cx = bx + x * ex - s * h * ew, cw = bw + x * ew + s * h * ex;
  *t3 = atan2(cw - bw, cx - bx);
  *t4 = atan2(cw, cx - LD);
  return 0;
}

static double wrap(double a) { return atan2(sin(a), cos(a)); }

/* Tree coordinates of the closed linkage at crank angle t2. */
static void fourbar_q(double t2, double s, double q[3]) {
  double t3, t4;
  fourbar_solve(t2, s, &t3, &t4);
  q[0] = t2;
  q[1] = wrap(t3 - t2);
  q[2] = wrap(t4 + PI - t3);
}

/* Freudenstein residual of the tree state q, as an angle of the rocker. */
static double freudenstein_err(const double *q) {
  double t2 = q[0], t4 = q[0] + q[1] + q[2] - PI;
  double K1 = LD / LA, K2 = LD / LC, K3 = (LA * LA - LB * LB + LC * LC + LD * LD) / (2 * LA * LC);
  double F = K1 * cos(t4) - K2 * cos(t2) + K3 - cos(t2 - t4), dF = -K1 * sin(t4) - sin(t2 - t4);
  return fabs(F / dF);
}

/* The 1-DOF Lagrangian of the linkage in the crank angle: centres of mass
 * and angles of the three rods (m = 1 kg each) from the closed form. */
static void fourbar_bodies(double t2, double s, double com[3][2], double ang[3]) {
  double t3, t4;
  fourbar_solve(t2, s, &t3, &t4);
  double bx = LA * cos(t2), bw = LA * sin(t2);
  com[0][0] = 0.5 * bx, com[0][1] = 0.5 * bw;
  com[1][0] = bx + 0.5 * LB * cos(t3), com[1][1] = bw + 0.5 * LB * sin(t3);
  com[2][0] = LD + 0.5 * LC * cos(t4), com[2][1] = 0.5 * LC * sin(t4);
  ang[0] = t2, ang[1] = t3, ang[2] = t4;
}

/* M(t2) and V(t2) (gravity along +w). */
static void fourbar_mv(double t, double s, double *M, double *V) {
  static const double I[3] = {LA * LA / 12, LB * LB / 12, LC * LC / 12};
  const double h = 1e-6;
  double cp[3][2], cm[3][2], c0[3][2], ap[3], am[3], a0[3];
  fourbar_bodies(t + h, s, cp, ap);
  fourbar_bodies(t - h, s, cm, am);
  fourbar_bodies(t, s, c0, a0);
  *M = 0, *V = 0;
  for (int i = 0; i < 3; i++) {
    double vx = (cp[i][0] - cm[i][0]) / (2 * h), vw = (cp[i][1] - cm[i][1]) / (2 * h), w = wrap(ap[i] - am[i]) / (2 * h);
    *M += vx * vx + vw * vw + I[i] * w * w;
    *V += -G * c0[i][1];
  }
}

static void fourbar_acc(double t, double v, double s, double *a) {
  const double h = 1e-4;
  double Mp, Vp, Mm, Vm, M, V;
  fourbar_mv(t + h, s, &Mp, &Vp);
  fourbar_mv(t - h, s, &Mm, &Vm);
  fourbar_mv(t, s, &M, &V);
  *a = -(0.5 * (Mp - Mm) / (2 * h) * v * v + (Vp - Vm) / (2 * h)) / M;
}

/* Period of the reference: time between the first two minima of t2 (the
 * velocity crossing from - to +), RK4 at dt. */
static double reference_period(double t0, double s, double dt, double tmax) {
  double t = t0, v = 0, time = 0, prev_v = 0, cross[2];
  int nc = 0;
  while (time < tmax && nc < 2) {
    double k1t = v, k1v, k2t, k2v, k3t, k3v, k4t, k4v;
    fourbar_acc(t, v, s, &k1v);
    k2t = v + 0.5 * dt * k1v;
    fourbar_acc(t + 0.5 * dt * k1t, k2t, s, &k2v);
    k3t = v + 0.5 * dt * k2v;
    fourbar_acc(t + 0.5 * dt * k2t, k3t, s, &k3v);
    k4t = v + dt * k3v;
    fourbar_acc(t + dt * k3t, k4t, s, &k4v);
    prev_v = v;
    t += dt / 6 * (k1t + 2 * k2t + 2 * k3t + k4t);
    v += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    time += dt;
    if (time > 0.01 && prev_v < 0 && v >= 0) cross[nc++] = time - dt + dt * (-prev_v) / (v - prev_v);
  }
  return nc == 2 ? cross[1] - cross[0] : NAN;
}

/* ---------------- worlds ---------------- */

static tl_error E;

static double DT = 1e-3;

static tl_world *new_world(tl_solver solver) {
  tl_world *w = NULL;
  TL_CHECK(tl_world_create(&w, &E) == TL_OK, "world: %s", E.message);
  tl_world_set_timestep(w, DT, &E);
  TL_CHECK(tl_world_set_solver(w, solver, &E) == TL_OK, "solver %d: %s", (int)solver, E.message);
  return w;
}

#define T20 (PI / 2 + 0.6)

/* A four-bar at rest at crank angle T20, closed by `type` (ball or hinge about y). */
static tl_system *add_fourbar(tl_world *w, tl_model *m, tl_constraint_type type, int *con) {
  tl_system *s = NULL;
  TL_CHECK(tl_world_add_system(w, m, &s, &E) == TL_OK, "add four_bar: %s", E.message);
  double q[3], u[3] = {0, 0, 0};
  fourbar_q(T20, 1.0, q);
  tl_system_set_state(s, q, 3, u, 3, &E);
  tl_constraint_def d = tl_constraint_def_default();
  d.type = type;
  d.system1 = tl_system_index(s);
  d.body1 = "rocker";
  d.point1[0] = LC;
  d.body2 = "ground";
  d.point2[0] = LD;
  d.axis[0] = 0, d.axis[1] = 1, d.axis[2] = 0;
  TL_CHECK(tl_world_add_constraint(w, &d, con, &E) == TL_OK, "add constraint: %s", E.message);
  return s;
}

static double gap(tl_world *w, int k, double *ang) {
  tl_constraint_info ci;
  tl_world_constraint(w, k, &ci, &E);
  if (ang) *ang = ci.angle_error;
  return ci.position_error;
}

static double energy(tl_system *s) { return tl_system_kinetic_energy(s) + tl_system_potential_energy(s); }

/* (1) the four-bar closed by `type` under the per-contact solver: 10 s at
 * dt = 1 ms (gap, Freudenstein, period), then 5 s at dt = 0.1 ms (energy:
 * semi-implicit Euler's energy error is first order in dt, 1.3 % of the peak
 * kinetic energy at 1 ms, a bounded oscillation, not a drift). */
static void fourbar_run(tl_model *m, tl_constraint_type type, const char *name) {
  for (int pass = 0; pass < 2; pass++) {
    DT = pass ? 1e-4 : 1e-3;
    const int nstep = pass ? 50000 : 10000;
    tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
    int con = -1;
    tl_system *s = add_fourbar(w, m, type, &con);
    double e0 = energy(s), emax = 0, kemax = 0, gmax = gap(w, con, NULL), fmax_err = 0, amax = 0;
    double q[3], u[3], prev_u = 0, cross[2];
    int nc = 0, ok = 1;
    for (int i = 1; i <= nstep && ok; i++) {
      ok = tl_world_step(w, &E) == TL_OK;
      TL_CHECK(ok, "%s: step %d: %s", name, i, E.message);
      tl_system_get_state(s, q, 3, u, 3, &E);
      double ang;
      gmax = fmax(gmax, gap(w, con, &ang));
      amax = fmax(amax, ang);
      fmax_err = fmax(fmax_err, freudenstein_err(q));
      double t = i * DT;
      if (t <= 5.0) {
        emax = fmax(emax, fabs(energy(s) - e0));
        kemax = fmax(kemax, tl_system_kinetic_energy(s));
      }
      if (nc < 2 && t > 0.01 && prev_u < 0 && u[0] >= 0) cross[nc++] = t - DT + DT * (-prev_u) / (u[0] - prev_u);
      prev_u = u[0];
    }
    double T = nc == 2 ? cross[1] - cross[0] : NAN, Tref = reference_period(T20, 1.0, 1e-4, 10.0);
    printf("%s, dt %g s: gap %.3g m, angle %.3g rad, Freudenstein %.3g rad, energy error %.3g of the peak kinetic "
           "energy %.4g J, period %.6f s (reference %.6f s, %.3g %%)\n", name, DT, gmax, amax, fmax_err, emax / kemax,
           kemax, T, Tref, 100 * fabs(T / Tref - 1));
    TL_CHECK(gmax < 1e-9, "%s: gap %.3g m (< 1e-9)", name, gmax);
    TL_CHECK(type != TL_CONSTRAINT_HINGE || amax < 1e-9, "%s: hinge axes %.3g rad apart (< 1e-9)", name, amax);
    TL_CHECK(fmax_err < 1e-6, "%s: Freudenstein residual %.3g rad (< 1e-6)", name, fmax_err);
    TL_CHECK(fabs(T / Tref - 1) < 5e-3, "%s: period %.6f s against the 1-DOF Lagrangian's %.6f s (0.5 %%)", name, T,
             Tref);
    if (pass)
      TL_CHECK(emax < 0.01 * kemax && kemax > 0.1, "%s: energy error %.3g J against peak kinetic energy %.3g J (1 %%)",
               name, emax, kemax);
    tl_world_free(w);
  }
  DT = 1e-3;
}

/* (2) every solver on the four-bar (ball: a zero row; hinge: three). */
static double fourbar_solvers(tl_model *m, tl_constraint_type type, const char *name) {
  static const tl_solver solvers[3] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG};
  static const char *sname[3] = {"per-contact", "PGS", "Dantzig"};
  double q_end[3][3];
  for (int k = 0; k < 3; k++) {
    tl_world *w = new_world(solvers[k]);
    int con = -1;
    tl_system *s = add_fourbar(w, m, type, &con);
    double gmax = 0, u[3];
    int finite = 1, conv = 1;
    for (int i = 0; i < 2000; i++) {
      if (tl_world_step(w, &E) != TL_OK) {
        TL_CHECK(0, "%s %s: step %d: %s", name, sname[k], i, E.message);
        break;
      }
      tl_solver_stats st;
      tl_world_solver_stats(w, &st, &E);
      conv &= st.converged;
      gmax = fmax(gmax, gap(w, con, NULL));
    }
    tl_system_get_state(s, q_end[k], 3, u, 3, &E);
    for (int i = 0; i < 3; i++) finite &= isfinite(q_end[k][i]) && isfinite(u[i]);
    printf("%s %s: crank %.15f rad after 2 s, gap %.3g m, converged %d\n", name, sname[k], q_end[k][0], gmax, conv);
    TL_CHECK(finite, "%s %s: a non-finite state", name, sname[k]);
    TL_CHECK(gmax < 1e-9, "%s %s: gap %.3g m (< 1e-9)", name, sname[k], gmax);
    TL_CHECK(k == 1 || conv, "%s %s: the solve did not converge at every step", name, sname[k]);
    tl_world_free(w);
  }
  TL_CHECK_NEAR(q_end[2][0], q_end[0][0], 1e-6, "Dantzig against per-contact: crank angle after 2 s");
  TL_CHECK_NEAR(q_end[1][0], q_end[0][0], 1e-7, "PGS against per-contact: crank angle after 2 s");
  return q_end[0][0];
}

static tl_system *add_box_pendulum(tl_world *w, tl_model *box, double th0, int *con, int rope);

/* Redundant rows that are not zero: the four-bar closed by a ball AND a
 * hinge at the same point (the ball's rows repeat the hinge's), every
 * solver: no NaN, the gap stays < 1e-9, the motion is that of one ball. */
static void fourbar_duplicate(tl_model *m, tl_model *box, double crank_ref) {
  static const tl_solver solvers[4] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG, TL_SOLVER_PER_CONTACT};
  for (int k = 0; k < 4; k++) {
    tl_world *w = new_world(solvers[k]);
    int c0, c1;
    tl_system *s = add_fourbar(w, m, TL_CONSTRAINT_BALL, &c0);
    if (k == 3) { /* three boxes resting on the ground: most pairs of blocks share no system, so the
                     per-contact solver sweeps the tree-sparse rows (the loop group's minimum-norm
                     solve) instead of solving the dense matrix directly */
      tl_world_add_ground(w, -1.0, 0.5, &E);
      for (int i = 0; i < 3; i++) {
        tl_system *b = NULL;
        tl_world_add_system(w, box, &b, &E);
        double qb[7] = {1.0 + 0.5 * i, 0, -0.9, 1, 0, 0, 0};
        tl_system_set_state(b, qb, 7, NULL, 0, &E);
      }
    }
    tl_constraint_def d = tl_constraint_def_default();
    d.type = TL_CONSTRAINT_HINGE;
    d.system1 = tl_system_index(s);
    d.body1 = "rocker";
    d.point1[0] = LC;
    d.body2 = "ground";
    d.point2[0] = LD;
    d.axis[0] = 0, d.axis[1] = 1, d.axis[2] = 0;
    TL_CHECK(tl_world_add_constraint(w, &d, &c1, &E) == TL_OK, "add the second (hinge) closure: %s", E.message);
    double gmax = 0, q[3], u[3];
    int finite = 1;
    for (int i = 0; i < 2000; i++) {
      if (tl_world_step(w, &E) != TL_OK) {
        TL_CHECK(0, "duplicate rows (solver %d): step %d: %s", (int)solvers[k], i, E.message);
        break;
      }
      gmax = fmax(gmax, fmax(gap(w, c0, NULL), gap(w, c1, NULL)));
    }
    tl_system_get_state(s, q, 3, u, 3, &E);
    for (int i = 0; i < 3; i++) finite &= isfinite(q[i]) && isfinite(u[i]);
    if (k == 3) {
      tl_solver_stats st;
      tl_world_solver_stats(w, &st, &E);
      TL_CHECK(st.direct == 0 && st.iterations > 0, "duplicate rows with boxes: the solve was direct (%d), not swept",
               st.direct);
    }
    tl_constraint_info a, b;
    tl_world_constraint(w, c0, &a, &E);
    tl_world_constraint(w, c1, &b, &E);
    printf("ball + hinge (duplicate rows, solver %d): crank %.15f rad, gap %.3g m, forces %.4g / %.4g N\n",
           (int)solvers[k], q[0], gmax, a.force[2], b.force[2]);
    TL_CHECK(finite, "duplicate rows (solver %d): a non-finite state", (int)solvers[k]);
    TL_CHECK(gmax < 1e-9, "duplicate rows (solver %d): gap %.3g m", (int)solvers[k], gmax);
    TL_CHECK_NEAR(q[0], crank_ref, solvers[k] == TL_SOLVER_PGS ? 1e-6 : 1e-8, "duplicate rows: crank after 2 s against one ball");
    TL_CHECK(fabs(a.force[2]) < 1e3 && fabs(b.force[2]) < 1e3, "duplicate rows: unbounded impulses");
    if (solvers[k] != TL_SOLVER_PGS) /* the minimum-norm impulses: the two closures share the load */
      TL_CHECK_NEAR(a.force[2], b.force[2], 1e-3 * fabs(a.force[2]), "duplicate rows: the two closures' forces");
    tl_world_free(w);
  }
}

/* Softness where asked: erp > 0 corrects that fraction of the error per step
 * instead of projecting it away; with cfm the rod is a spring, at rest
 * stretched by m g dt^2 cfm / erp. */
static void softness(tl_model *m, tl_model *box) {
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  tl_system *s = NULL;
  tl_world_add_system(w, m, &s, &E);
  double q[3], u[3] = {0, 0, 0};
  fourbar_q(T20, 1.0, q);
  q[1] += 0.05;
  tl_system_set_state(s, q, 3, u, 3, &E);
  tl_constraint_def d = tl_constraint_def_default();
  d.system1 = tl_system_index(s);
  d.body1 = "rocker";
  d.point1[0] = LC;
  d.body2 = "ground";
  d.point2[0] = LD;
  d.erp = 0.2;
  int con;
  tl_world_add_constraint(w, &d, &con, &E);
  double g0 = gap(w, con, NULL);
  tl_world_step(w, &E);
  double g1 = gap(w, con, NULL);
  for (int i = 0; i < 199; i++) tl_world_step(w, &E);
  double g200 = gap(w, con, NULL);
  printf("erp 0.2: gap %.3g -> %.3g after 1 step -> %.3g after 200\n", g0, g1, g200);
  TL_CHECK(g1 > 0.6 * g0 && g1 < 0.95 * g0, "erp 0.2: one step took the gap from %.3g to %.3g (about 0.8 of it)", g0, g1);
  TL_CHECK(g200 < 1e-3 * g0, "erp 0.2: the gap %.3g after 200 steps did not decay (Baumgarte leaves an O(dt^2) residue of the motion)", g200);
  tl_world_free(w);
  const double erp = 0.2, cfm = 1.0, dt = 1e-3;
  w = new_world(TL_SOLVER_PER_CONTACT);
  tl_world_add_system(w, box, &s, &E);
  double qb[7] = {0, 0, -0.5, 1, 0, 0, 0};
  tl_system_set_state(s, qb, 7, NULL, 0, &E);
  d = tl_constraint_def_default();
  d.type = TL_CONSTRAINT_DISTANCE;
  d.system1 = tl_system_index(s);
  d.body1 = "box";
  d.body2 = "world";
  d.distance = 0.5;
  d.erp = erp, d.cfm = cfm;
  tl_world_add_constraint(w, &d, &con, &E);
  for (int i = 0; i < 5000; i++) tl_world_step(w, &E);
  tl_system_get_state(s, qb, 7, NULL, 0, &E);
  double sag = -0.5 - qb[2], expect = G * dt * dt * cfm / erp;
  printf("erp %g cfm %g: the rod stretched by %.6g m (m g dt^2 cfm / erp = %.6g)\n", erp, cfm, sag, expect);
  TL_CHECK(fabs(sag / expect - 1) < 1e-3, "soft rod: stretched %.6g m, expected %.6g", sag, expect);
  tl_world_free(w);
}

/* Step derivatives with loop constraints: the analytic mode falls back to
 * finite differences (reported), the world is left as it was, and the
 * derivative of the next crank velocity by the crank velocity matches a
 * difference of two steps taken by hand. */
static void derivatives(tl_model *m) {
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  int con;
  tl_system *s = add_fourbar(w, m, TL_CONSTRAINT_BALL, &con);
  for (int i = 0; i < 100; i++) tl_world_step(w, &E);
  tl_step_derivatives *ws = NULL;
  TL_CHECK(tl_step_derivatives_create(w, &ws, &E) == TL_OK, "derivatives workspace: %s", E.message);
  double A[36], B[18];
  tl_deriv_mode used = TL_DERIV_ANALYTIC;
  size_t n = tl_world_snapshot_size(w);
  unsigned char *s0 = malloc(n), *s1 = malloc(n);
  tl_world_snapshot_save(w, s0, n, NULL, &E);
  tl_status st = tl_world_step_derivatives(w, ws, TL_DERIV_ANALYTIC, A, B, 3, &used, &E);
  tl_world_snapshot_save(w, s1, n, NULL, &E);
  TL_CHECK(st == TL_OK, "step derivatives: %s", E.message);
  TL_CHECK(used == TL_DERIV_FD_CENTRED, "step derivatives with loops: mode %d, expected the FD fallback", (int)used);
  TL_CHECK(!memcmp(s0, s1, n), "step derivatives changed the world");
  /* d u0+ / d u0 by hand: the constrained velocity is consistent, so perturb along the loop's motion */
  double q[3], u[3], up[3], um[3], q2[3], u2[3];
  tl_system_get_state(s, q, 3, u, 3, &E);
  const double eps = 1e-6;
  double dir[3];
  { /* the loop's velocity direction at q: the null space of its Jacobian, from two nearby closed poses */
    double qa[3], qb[3];
    fourbar_q(q[0] + 1e-7, 1.0, qa);
    fourbar_q(q[0] - 1e-7, 1.0, qb);
    for (int i = 0; i < 3; i++) dir[i] = wrap(qa[i] - qb[i]) / 2e-7;
  }
  for (int sgn = 0; sgn < 2; sgn++) {
    tl_world_snapshot_restore(w, s0, n, &E);
    for (int i = 0; i < 3; i++) u2[i] = u[i] + (sgn ? -eps : eps) * dir[i];
    tl_system_set_state(s, q, 3, u2, 3, &E);
    tl_world_step(w, &E);
    tl_system_get_state(s, q2, 3, sgn ? um : up, 3, &E);
  }
  tl_world_snapshot_restore(w, s0, n, &E);
  /* A's velocity block (rows nv.., columns nv..) applied to dir */
  double pred = 0, meas = (up[0] - um[0]) / (2 * eps);
  for (int j = 0; j < 3; j++) pred += A[(3 + 0) * 6 + 3 + j] * dir[j];
  printf("step derivatives with loops: mode FD, d u_crank+ along the loop: %.6f (A) vs %.6f (two steps)\n", pred, meas);
  TL_CHECK(fabs(pred - meas) < 1e-4 * fmax(1.0, fabs(meas)), "step derivatives with loops: %.6g vs %.6g", pred, meas);
  free(s0), free(s1);
  tl_step_derivatives_free(ws);
  tl_world_free(w);
}

/* Loops with contacts in one solve: a box sliding on the ground at 2 m/s,
 * tied by a 0.3 m rope (a distance range, max only) to the world point
 * above where it starts: the rope stops it; every solver. The box's
 * centre never gets farther than 0.3 m from the anchor (1e-9), it stays on
 * the ground (its height within 1 mm), and comes to rest. */
static void rope_and_contacts(tl_model *box) {
  static const tl_solver solvers[3] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG};
  for (int k = 0; k < 3; k++) {
    tl_world *w = new_world(solvers[k]);
    TL_CHECK(tl_world_add_ground(w, 0.0, 0.5, &E) == TL_OK, "ground: %s", E.message);
    tl_system *s = NULL;
    tl_world_add_system(w, box, &s, &E);
    double q[7] = {0, 0, 0.1, 1, 0, 0, 0}, u[6] = {2, 0, 0, 0, 0, 0};
    tl_system_set_state(s, q, 7, u, 6, &E);
    tl_constraint_def d = tl_constraint_def_default();
    d.type = TL_CONSTRAINT_DISTANCE;
    d.system1 = tl_system_index(s);
    d.body1 = "box";
    d.body2 = "world";
    d.point2[2] = 0.1;
    d.max = 0.3;
    int con;
    TL_CHECK(tl_world_add_constraint(w, &d, &con, &E) == TL_OK, "rope: %s", E.message);
    double rmax = 0, zdev = 0;
    int ok = 1;
    for (int i = 0; i < 2000 && ok; i++) {
      ok = tl_world_step(w, &E) == TL_OK;
      tl_system_get_state(s, q, 7, u, 6, &E);
      rmax = fmax(rmax, sqrt(q[0] * q[0] + q[1] * q[1] + (q[2] - 0.1) * (q[2] - 0.1)));
      zdev = fmax(zdev, fabs(q[2] - 0.1));
    }
    double speed = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    printf("rope and contacts (solver %d): farthest %.12f m, height off by %.3g m, x %.6f m, speed %.3g m/s at 2 s\n",
           (int)solvers[k], rmax, zdev, q[0], speed);
    TL_CHECK(ok, "rope and contacts (solver %d): %s", (int)solvers[k], E.message);
    TL_CHECK(rmax < 0.3 + 1e-9, "rope and contacts (solver %d): the box got %.12f m from the anchor (rope 0.3)",
             (int)solvers[k], rmax);
    TL_CHECK(rmax > 0.3 - 1e-3, "rope and contacts (solver %d): the rope never went taut (%.6f m)", (int)solvers[k], rmax);
    TL_CHECK(zdev < 1e-3, "rope and contacts (solver %d): the box left the ground by %.3g m", (int)solvers[k], zdev);
    TL_CHECK(speed < 1e-3, "rope and contacts (solver %d): still moving at %.3g m/s", (int)solvers[k], speed);
    tl_world_free(w);
  }
}

/* The semidefinite Cholesky (math/tl_dense.h) on rank-deficient matrices:
 * A = J J^T with a zero row, an exactly repeated row and a row repeated to
 * 1e-9: the zero and repeated rows are dropped, the solution of a
 * consistent system satisfies it to rounding, and stays bounded. */
static void psd_unit(void) {
  const double J[5][3] = {{1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 1}, {1, 1e-9, 0}};
  const int n = 5;
  double A[25], A0[25], y[5] = {0.3, -0.7, 1.1, 0.2, -0.4}, r[5], x[5];
  unsigned char drop[5];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A0[j * n + i] = J[i][0] * J[j][0] + J[i][1] * J[j][1] + J[i][2] * J[j][2];
  memcpy(A, A0, sizeof A);
  for (int i = 0; i < n; i++) {
    r[i] = 0;
    for (int j = 0; j < n; j++) r[i] += A0[j * n + i] * y[j];
  }
  memcpy(x, r, sizeof x);
  int nd = tl_dense_cholesky_psd(n, A, 1e-10, 1e-12 * 2.0, drop);
  tl_dense_cholesky_psd_solve(n, A, drop, x);
  double res = 0, xn = 0;
  for (int i = 0; i < n; i++) {
    double s = -r[i];
    for (int j = 0; j < n; j++) s += A0[j * n + i] * x[j];
    res = fmax(res, fabs(s));
    xn = fmax(xn, fabs(x[i]));
  }
  printf("psd Cholesky: dropped %d (%d%d%d%d%d), residual %.3g, |x| %.3g\n", nd, drop[0], drop[1], drop[2], drop[3],
         drop[4], res, xn);
  TL_CHECK(nd == 3 && !drop[0] && drop[1] && drop[2] && !drop[3] && drop[4], "psd Cholesky: dropped %d rows", nd);
  TL_CHECK(res < 1e-8, "psd Cholesky: residual %.3g of a consistent system", res);
  TL_CHECK(xn < 10, "psd Cholesky: the solution is not bounded (%.3g)", xn);
}

/* The minimum-norm solution (tl_dense_psd_minnorm_*): rows 0 and 2 equal,
 * row 1 zero, row 4 twice row 3: A^+ r splits equally between the equal
 * rows, gives the zero row nothing and row 4 twice row 3's share. */
static void minnorm_unit(void) {
  const double J[5][3] = {{1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 1}, {0, 2, 2}};
  const int n = 5;
  double A[25], A0[25], y[5] = {0.3, -0.7, 1.1, 0.2, -0.4}, r[5], x[5], Cm[25], S[25], work[5];
  unsigned char drop[5];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A0[j * n + i] = J[i][0] * J[j][0] + J[i][1] * J[j][1] + J[i][2] * J[j][2];
  memcpy(A, A0, sizeof A);
  for (int i = 0; i < n; i++) {
    r[i] = 0;
    for (int j = 0; j < n; j++) r[i] += A0[j * n + i] * y[j];
  }
  memcpy(x, r, sizeof x);
  int nd = tl_dense_cholesky_psd(n, A, 1e-10, 1e-12 * 8.0, drop);
  tl_dense_psd_minnorm_prepare(n, A0, A, drop, nd, Cm, S);
  tl_dense_psd_minnorm_solve(n, A, drop, nd, Cm, S, x, work);
  double res = 0;
  for (int i = 0; i < n; i++) {
    double s = -r[i];
    for (int j = 0; j < n; j++) s += A0[j * n + i] * x[j];
    res = fmax(res, fabs(s));
  }
  printf("minimum norm: x = %.6f %.6f %.6f %.6f %.6f, residual %.3g\n", x[0], x[1], x[2], x[3], x[4], res);
  TL_CHECK(nd == 3, "minimum norm: %d rows dropped (3)", nd);
  TL_CHECK(res < 1e-12, "minimum norm: residual %.3g", res);
  TL_CHECK_NEAR(x[0], x[2], 1e-12, "minimum norm: equal rows share");
  TL_CHECK_NEAR(x[1], 0.0, 1e-15, "minimum norm: the zero row");
  TL_CHECK_NEAR(x[4], 2 * x[3], 1e-12, "minimum norm: row 4 = 2 row 3");
}

/* Two four-bars in one world (two components of the constraints, two
 * equality groups, projected apart) move as one alone does. */
static void two_fourbars(tl_model *m, double crank_ref) {
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  int c0, c1;
  tl_system *a = add_fourbar(w, m, TL_CONSTRAINT_BALL, &c0), *b = add_fourbar(w, m, TL_CONSTRAINT_HINGE, &c1);
  double gmax = 0, qa[3], qb[3];
  for (int i = 0; i < 2000; i++) {
    tl_world_step(w, &E);
    gmax = fmax(gmax, fmax(gap(w, c0, NULL), gap(w, c1, NULL)));
  }
  tl_system_get_state(a, qa, 3, NULL, 0, &E);
  tl_system_get_state(b, qb, 3, NULL, 0, &E);
  printf("two four-bars: cranks %.15f %.15f rad, gap %.3g m\n", qa[0], qb[0], gmax);
  TL_CHECK(gmax < 1e-9, "two four-bars: gap %.3g m", gmax);
  TL_CHECK_NEAR(qa[0], crank_ref, 1e-8, "two four-bars: the first against one alone");
  TL_CHECK_NEAR(qb[0], crank_ref, 1e-8, "two four-bars: the second against one alone");
  tl_world_free(w);
}

/* Stepping with constraints allocates nothing (the reservation pass sized everything). */
static void no_alloc(tl_model *m, tl_model *box) {
  static const tl_solver solvers[3] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG};
  for (int k = 0; k < 3; k++) {
    tl_world *w = new_world(solvers[k]);
    int c0, c1;
    tl_system *s = add_fourbar(w, m, TL_CONSTRAINT_HINGE, &c0);
    (void)s;
    add_box_pendulum(w, box, 0.3, &c1, 1);
    tl_world_add_ground(w, -0.45, 0.8, &E);
    counting = 1, nalloc = 0;
    int ok = 1;
    for (int i = 0; i < 500 && ok; i++) ok = tl_world_step(w, &E) == TL_OK;
    counting = 0;
    TL_CHECK(ok, "no_alloc: %s", E.message);
    TL_CHECK(nalloc == 0, "stepping with loop constraints (solver %d) allocated %d times", (int)solvers[k], nalloc);
    tl_world_free(w);
  }
}

/* Period of a swinging system from its coordinate index `iv` of u (minima of the angle). */
static double period_of(tl_world *w, tl_system *s, int iv, int nv, double tmax) {
  double u[16], prev = 0, cross[2];
  int nc = 0;
  for (int i = 1; i * 1e-3 <= tmax && nc < 2; i++) {
    if (tl_world_step(w, &E) != TL_OK) return NAN;
    tl_system_get_state(s, NULL, 0, u, nv, &E);
    double t = i * 1e-3;
    if (t > 0.01 && prev < 0 && u[iv] >= 0) cross[nc++] = t - 1e-3 + 1e-3 * (-prev) / (u[iv] - prev);
    prev = u[iv];
  }
  return nc == 2 ? cross[1] - cross[0] : NAN;
}

/* A 1 kg box (robots/box) hung from the world origin by a rigid 0.5 m
 * distance constraint at its centre, released at rest 0.3 rad out in x-z. */
static tl_system *add_box_pendulum(tl_world *w, tl_model *box, double th0, int *con, int rope) {
  tl_system *s = NULL;
  TL_CHECK(tl_world_add_system(w, box, &s, &E) == TL_OK, "add box: %s", E.message);
  double q[7] = {0.5 * sin(th0), 0, -0.5 * cos(th0), 1, 0, 0, 0}, u[6] = {0};
  int nq = tl_system_nq(s);
  TL_CHECK(nq == 7, "box nq %d", nq);
  tl_system_set_state(s, q, 7, u, 6, &E);
  tl_constraint_def d = tl_constraint_def_default();
  d.type = TL_CONSTRAINT_DISTANCE;
  d.system1 = tl_system_index(s);
  d.body1 = "box";
  d.body2 = "world";
  if (rope) d.max = 0.5;
  else d.distance = 0.5;
  TL_CHECK(tl_world_add_constraint(w, &d, con, &E) == TL_OK, "add distance: %s", E.message);
  return s;
}

static int vel_index_x(tl_system *s) { /* the box's angular velocity about y: u[4] (floating base: v then w) */
  (void)s;
  return 4;
}

static void distance_pendulum(tl_model *box, tl_model *pend) {
  const double th0 = 0.3;
  /* the revolute pendulum of robots/pendulum */
  tl_world *wr = new_world(TL_SOLVER_PER_CONTACT);
  tl_system *sr = NULL;
  tl_world_add_system(wr, pend, &sr, &E);
  double qr[1] = {th0}, ur[1] = {0};
  tl_system_set_state(sr, qr, 1, ur, 1, &E);
  double Tr = period_of(wr, sr, 0, 1, 5.0);
  tl_world_free(wr);
  /* exact: I = m l^2 + 4e-5 about the hinge (robots/pendulum), T = 4 sqrt(I / (m g l)) K(sin(th0 / 2)) */
  double a = 1, b = sqrt(1 - pow(sin(th0 / 2), 2));
  for (int i = 0; i < 60; i++) {
    double an = 0.5 * (a + b);
    b = sqrt(a * b), a = an;
  }
  double Tpoint = 4 * sqrt(0.5 / G) * PI / (2 * a);
  static const tl_solver solvers[3] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG};
  for (int k = 0; k < 3; k++) {
    tl_world *w = new_world(solvers[k]);
    int con;
    tl_system *s = add_box_pendulum(w, box, th0, &con, 0);
    /* the box does not rotate (the constraint acts at its centre): its swing angle is that of its
       position; track the x velocity's minima instead: x = l sin(theta), extrema of theta are those of x */
    double u[6], prev = 0, cross[2], gmax = 0;
    int nc = 0;
    for (int i = 1; i <= 5000 && nc < 2; i++) {
      if (tl_world_step(w, &E) != TL_OK) break;
      tl_system_get_state(s, NULL, 0, u, 6, &E);
      gmax = fmax(gmax, gap(w, con, NULL));
      double t = i * 1e-3;
      if (t > 0.01 && prev < 0 && u[0] >= 0) cross[nc++] = t - 1e-3 + 1e-3 * (-prev) / (u[0] - prev);
      prev = u[0];
    }
    (void)vel_index_x;
    double T = nc == 2 ? cross[1] - cross[0] : NAN;
    printf("distance pendulum (solver %d): period %.6f s, revolute %.6f s, point mass exact %.6f s, gap %.3g m\n",
           (int)solvers[k], T, Tr, Tpoint, gmax);
    TL_CHECK(fabs(T / Tr - 1) < 5e-3, "distance pendulum (solver %d): period %.6f s against the revolute's %.6f s",
             (int)solvers[k], T, Tr);
    TL_CHECK(fabs(T / Tpoint - 1) < 5e-3, "distance pendulum (solver %d): period %.6f s against the exact %.6f s",
             (int)solvers[k], T, Tpoint);
    TL_CHECK(gmax < 1e-9, "distance pendulum (solver %d): length error %.3g m", (int)solvers[k], gmax);
    tl_world_free(w);
  }
  /* hanging at rest: the constraint holds the weight, force on the box m g up */
  for (int rope = 0; rope < 2; rope++) {
    tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
    int con;
    tl_system *s = add_box_pendulum(w, box, 0.0, &con, rope);
    for (int i = 0; i < 200; i++) tl_world_step(w, &E);
    tl_constraint_info ci;
    tl_world_constraint(w, con, &ci, &E);
    double q[7];
    tl_system_get_state(s, q, 7, NULL, 0, &E);
    printf("hanging box (%s): force %.9f %.9f %.9f N, z %.12f m\n", rope ? "rope" : "rod", ci.force[0], ci.force[1],
           ci.force[2], q[2]);
    TL_CHECK_NEAR(ci.force[2], G, 1e-6, rope ? "rope: force on the hanging box (m g up)" : "rod: force on the hanging box");
    TL_CHECK(fabs(ci.force[0]) < 1e-9 && fabs(ci.force[1]) < 1e-9, "hanging box: a sideways force");
    TL_CHECK_NEAR(q[2], -0.5, 1e-9, rope ? "rope: the box hangs at its length" : "rod: the box hangs at its length");
    tl_world_free(w);
  }
}

/* A box welded to the four-bar's coupler (two systems), every solver. */
static void weld_fourbar(tl_model *m, tl_model *box) {
  static const tl_solver solvers[3] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG};
  double q_end[3];
  for (int k = 0; k < 3; k++) {
    tl_world *w = new_world(solvers[k]);
    int c0, c1;
    tl_system *s = add_fourbar(w, m, TL_CONSTRAINT_BALL, &c0);
    tl_system *b = NULL;
    tl_world_add_system(w, box, &b, &E);
    tl_constraint_def d = tl_constraint_def_default();
    d.type = TL_CONSTRAINT_WELD;
    d.system1 = tl_system_index(s);
    d.body1 = "coupler";
    d.point1[0] = 0.2, d.point1[2] = -0.15;
    d.rpy1[0] = 0.3;
    d.system2 = tl_system_index(b);
    d.body2 = "box";
    TL_CHECK(tl_world_add_constraint(w, &d, &c1, &E) == TL_OK, "add weld: %s", E.message);
    TL_CHECK(tl_world_project_constraints(w, 1e-12, 50, &E) == TL_OK, "project the welded box: %s", E.message);
    double gmax = 0, amax = 0, q[3], u[3];
    for (int i = 0; i < 1000; i++) {
      if (tl_world_step(w, &E) != TL_OK) {
        TL_CHECK(0, "weld (solver %d): step %d: %s", (int)solvers[k], i, E.message);
        break;
      }
      double a;
      gmax = fmax(gmax, gap(w, c1, &a));
      amax = fmax(amax, a);
      gmax = fmax(gmax, gap(w, c0, NULL));
    }
    tl_system_get_state(s, q, 3, u, 3, &E);
    q_end[k] = q[0];
    printf("weld box on the coupler (solver %d): crank %.9f, weld gap %.3g m, angle %.3g rad\n", (int)solvers[k], q[0],
           gmax, amax);
    TL_CHECK(gmax < 1e-9 && amax < 1e-9, "weld (solver %d): gap %.3g m, angle %.3g rad (< 1e-9)", (int)solvers[k], gmax, amax);
    tl_world_free(w);
  }
  TL_CHECK_NEAR(q_end[2], q_end[0], 1e-6, "weld: Dantzig against per-contact");
  TL_CHECK_NEAR(q_end[1], q_end[0], 1e-7, "weld: PGS against per-contact");
}

/* tl_world_project_constraints: from a perturbed pose onto the loop; an unreachable one refused. */
static void projection(tl_model *m) {
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  int con;
  tl_system *s = add_fourbar(w, m, TL_CONSTRAINT_HINGE, &con);
  double q[3], u[3] = {0.5, -1.0, 2.0};
  fourbar_q(T20, 1.0, q);
  q[1] += 0.1, q[2] -= 0.07;
  tl_system_set_state(s, q, 3, u, 3, &E);
  double g0 = gap(w, con, NULL);
  TL_CHECK(tl_world_project_constraints(w, 1e-12, 20, &E) == TL_OK, "project: %s", E.message);
  double g1 = gap(w, con, NULL);
  tl_system_get_state(s, q, 3, u, 3, &E);
  /* the loop's velocity: the rocker tip's velocity must vanish */
  double v[3], p[3], pos[3], R[9];
  tl_system_body_pose(s, 3, pos, R, &E); /* the rocker (body 3): its tip (LC, 0, 0) */
  for (int i = 0; i < 3; i++) p[i] = pos[i] + R[3 * i] * LC;
  tl_system_point_velocity(s, 3, p, v, NULL, &E);
  printf("project: gap %.3g -> %.3g m, tip velocity %.3g m/s, Freudenstein %.3g rad\n", g0, g1,
         sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), freudenstein_err(q));
  TL_CHECK(g0 > 1e-2, "perturbed gap %.3g", g0);
  TL_CHECK(g1 < 1e-12, "projected gap %.3g m (< 1e-12)", g1);
  TL_CHECK(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) < 1e-12, "projected velocity violates the loop");
  TL_CHECK(freudenstein_err(q) < 1e-10, "projected pose off the closed form: %.3g rad", freudenstein_err(q));
  /* unreachable: the crank's tip 5 m from the ground pivot */
  tl_constraint_def d = tl_constraint_def_default();
  d.system1 = tl_system_index(s);
  d.body1 = "crank";
  d.point1[0] = LA;
  d.body2 = "world";
  d.point2[0] = 5.0;
  TL_CHECK(tl_world_add_constraint(w, &d, NULL, &E) == TL_OK, "add unreachable: %s", E.message);
  double qa[3], qb[3];
  tl_system_get_state(s, qa, 3, NULL, 0, &E);
  tl_status st = tl_world_project_constraints(w, 1e-12, 30, &E);
  tl_system_get_state(s, qb, 3, NULL, 0, &E);
  printf("unreachable: status %d: %s\n", (int)st, E.message);
  TL_CHECK(st == TL_ERR_INVALID, "unreachable constraint: status %d, expected TL_ERR_INVALID", (int)st);
  TL_CHECK(memcmp(qa, qb, sizeof qa) == 0, "unreachable constraint: the state changed");
  tl_world_free(w);
}

/* Snapshot save / restore with constraints: the continuation is bit for bit. */
static void snapshot(tl_model *m, tl_model *box) {
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  int con, c2;
  tl_system *s = add_fourbar(w, m, TL_CONSTRAINT_BALL, &con);
  tl_system *b = add_box_pendulum(w, box, 0.2, &c2, 1);
  for (int i = 0; i < 300; i++) tl_world_step(w, &E);
  size_t n = tl_world_snapshot_size(w);
  unsigned char *buf = malloc(n);
  TL_CHECK(tl_world_snapshot_save(w, buf, n, &n, &E) == TL_OK, "save: %s", E.message);
  double qa[3], ua[3], qb[7], ub[6], fa[3];
  for (int i = 0; i < 300; i++) tl_world_step(w, &E);
  tl_system_get_state(s, qa, 3, ua, 3, &E);
  tl_system_get_state(b, qb, 7, ub, 6, &E);
  tl_constraint_info ci;
  tl_world_constraint(w, con, &ci, &E);
  memcpy(fa, ci.force, sizeof fa);
  TL_CHECK(tl_world_snapshot_restore(w, buf, n, &E) == TL_OK, "restore: %s", E.message);
  for (int i = 0; i < 300; i++) tl_world_step(w, &E);
  double qa2[3], ua2[3], qb2[7], ub2[6];
  tl_system_get_state(s, qa2, 3, ua2, 3, &E);
  tl_system_get_state(b, qb2, 7, ub2, 6, &E);
  tl_world_constraint(w, con, &ci, &E);
  TL_CHECK(!memcmp(qa, qa2, sizeof qa) && !memcmp(ua, ua2, sizeof ua) && !memcmp(qb, qb2, sizeof qb) &&
               !memcmp(ub, ub2, sizeof ub) && !memcmp(fa, ci.force, sizeof fa),
           "snapshot with constraints: the restored world did not continue bit for bit");
  /* the restored wrench equals the saved one */
  tl_world_snapshot_restore(w, buf, n, &E);
  size_t n2 = 0;
  unsigned char *buf2 = malloc(n);
  tl_world_snapshot_save(w, buf2, n, &n2, &E);
  TL_CHECK(n2 == n && !memcmp(buf, buf2, n), "snapshot with constraints: save after restore differs");
  free(buf);
  free(buf2);
  tl_world_free(w);
}

/* A kuka_iiwa (shared corpus) lifting a box welded to its flange by PD. */
static void iiwa_weld(const char *shared, tl_model *box) {
  char path[4096];
  snprintf(path, sizeof path, "%s/robots/kuka_iiwa/model.urdf", shared ? shared : "(no shared folder)");
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("%s is absent: the kuka_iiwa weld case is skipped\n", path);
    skipped_shared = 1;
    return;
  }
  fclose(f);
  tl_model *arm = NULL;
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED; /* the arm stands on the ground */
  if (tl_model_load_urdf(path, &lo, &arm, &E) != TL_OK) {
    TL_CHECK(0, "load %s: %s", path, E.message);
    return;
  }
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  tl_system *a = NULL, *b = NULL;
  tl_world_add_system(w, arm, &a, &E);
  tl_world_add_system(w, box, &b, &E);
  int nq = tl_system_nq(a), nv = tl_system_nv(a);
  double q[32] = {0}, u[32] = {0}, kp[32], kd[32], qt[32];
  TL_CHECK(nq == 7 && nv == 7, "iiwa: nq %d nv %d (fixed base: 7)", nq, nv);
  q[1] = 0.6, q[3] = -1.2, q[5] = 0.6;
  tl_system_set_state(a, q, nq, u, nv, &E);
  double qbox[7] = {0.5, 0, 0.5, 1, 0, 0, 0}, ubox[6] = {0};
  tl_system_set_state(b, qbox, 7, ubox, 6, &E);
  tl_constraint_def d = tl_constraint_def_default();
  d.type = TL_CONSTRAINT_WELD;
  d.system1 = tl_system_index(a);
  d.body1 = "lbr_iiwa_link_7";
  d.point1[2] = 0.15;
  d.system2 = tl_system_index(b);
  d.body2 = "box";
  int con;
  TL_CHECK(tl_world_add_constraint(w, &d, &con, &E) == TL_OK, "weld to the flange: %s", E.message);
  TL_CHECK(tl_world_project_constraints(w, 1e-12, 50, &E) == TL_OK, "project the box onto the flange: %s", E.message);
  tl_system_get_state(a, q, nq, u, nv, &E);
  for (int i = 0; i < nv; i++) kp[i] = 2000, kd[i] = 50, qt[i] = q[i];
  qt[1] -= 0.5; /* the shoulder lifts the arm */
  tl_system_set_pd_gains(a, kp, kd, nv, &E);
  tl_system_set_pd_targets(a, qt, nq, NULL, 0, &E);
  double z0, qb[7], gmax = 0, amax = 0, flange[3], R[9], lp[3] = {0, 0, 0.15}, dev = 0;
  tl_system_get_state(b, qb, 7, NULL, 0, &E);
  z0 = qb[2];
  tl_constraint_info ci;
  tl_world_constraint(w, con, &ci, &E);
  for (int i = 0; i < 2000; i++) {
    if (tl_world_step(w, &E) != TL_OK) {
      TL_CHECK(0, "iiwa: step %d: %s", i, E.message);
      break;
    }
    double a2;
    gmax = fmax(gmax, gap(w, con, &a2));
    amax = fmax(amax, a2);
    tl_system_body_pose(a, ci.body1, flange, R, &E);
    double p[3] = {flange[0] + R[0] * lp[0] + R[1] * lp[1] + R[2] * lp[2], flange[1] + R[3] * lp[0] + R[4] * lp[1] + R[5] * lp[2],
                   flange[2] + R[6] * lp[0] + R[7] * lp[1] + R[8] * lp[2]};
    tl_system_get_state(b, qb, 7, NULL, 0, &E);
    dev = fmax(dev, sqrt(pow(p[0] - qb[0], 2) + pow(p[1] - qb[1], 2) + pow(p[2] - qb[2], 2)));
  }
  printf("iiwa weld: box rose %.4f m, follows the flange to %.3g m (weld gap %.3g m, angle %.3g rad)\n", qb[2] - z0, dev,
         gmax, amax);
  TL_CHECK(fabs(qb[2] - z0) > 0.05, "iiwa: the box did not move with the arm (%.4f m)", qb[2] - z0);
  TL_CHECK(dev < 1e-6, "iiwa: the box left the flange by %.3g m", dev);
  TL_CHECK(amax < 1e-6, "iiwa: the box turned against the flange by %.3g rad", amax);
  tl_world_free(w);
  tl_model_free(arm);
}

/* Bad declarations through the C API: each refused with its field named and
 * the world unchanged (no constraint added); RK4 refused both ways. */
static void bad_declarations(tl_model *m, tl_model *box) {
  tl_world *w = new_world(TL_SOLVER_PER_CONTACT);
  tl_system *s = NULL, *b = NULL;
  TL_CHECK(tl_world_add_system(w, m, &s, &E) == TL_OK, "add four_bar: %s", E.message);
  TL_CHECK(tl_world_add_system(w, box, &b, &E) == TL_OK, "add box: %s", E.message);
  struct {
    const char *what, *field;
    tl_status status;
  } cases[] = {{"unknown body1", "body1", TL_ERR_ARGUMENT},   {"unknown body2", "body2", TL_ERR_ARGUMENT},
               {"same body", "body2", TL_ERR_ARGUMENT},       {"no system 5", "system1", TL_ERR_ARGUMENT},
               {"NaN point1", "point1", TL_ERR_ARGUMENT},     {"Inf rpy2", "rpy2", TL_ERR_ARGUMENT},
               {"zero hinge axis", "axis", TL_ERR_ARGUMENT}, {"min > max", "min", TL_ERR_ARGUMENT},
               {"negative distance", "distance", TL_ERR_ARGUMENT}, {"erp 2", "erp", TL_ERR_ARGUMENT},
               {"missing body1", "body1", TL_ERR_ARGUMENT},   {"duplicate name", "name", TL_ERR_ARGUMENT}};
  tl_constraint_def ok = tl_constraint_def_default();
  ok.body1 = "rocker", ok.body2 = "ground", ok.name = "pin";
  TL_CHECK(tl_world_add_constraint(w, &ok, NULL, &E) == TL_OK, "a good declaration: %s", E.message);
  for (int k = 0; k < (int)(sizeof(cases) / sizeof(cases[0])); k++) {
    tl_constraint_def d = tl_constraint_def_default();
    d.body1 = "rocker", d.body2 = "ground";
    switch (k) {
    case 0: d.body1 = "no_such_link"; break;
    case 1: d.body2 = "no_such_link"; break;
    case 2: d.body2 = "rocker"; break;
    case 3: d.system1 = 5; break;
    case 4: d.point1[1] = NAN; break;
    case 5: d.rpy2[0] = INFINITY; break;
    case 6: d.type = TL_CONSTRAINT_HINGE, d.axis[2] = 0; break;
    case 7: d.type = TL_CONSTRAINT_DISTANCE, d.min = 0.5, d.max = 0.2; break;
    case 8: d.type = TL_CONSTRAINT_DISTANCE, d.distance = -1; break;
    case 9: d.erp = 2; break;
    case 10: d.body1 = NULL; break;
    default: d.name = "pin"; break;
    }
    tl_error e;
    memset(&e, 0, sizeof e);
    tl_status st = tl_world_add_constraint(w, &d, NULL, &e);
    TL_CHECK(st == cases[k].status && !strcmp(e.element, cases[k].field),
             "%s: status %d element '%s' (expected %d '%s'): %s", cases[k].what, (int)st, e.element,
             (int)cases[k].status, cases[k].field, e.message);
    TL_CHECK(tl_world_nconstraint(w) == 1, "%s: the world changed (%d constraints)", cases[k].what,
             tl_world_nconstraint(w));
  }
  tl_error e;
  TL_CHECK(tl_system_set_integrator(s, TL_INTEGRATOR_RK4, &e) == TL_ERR_UNSUPPORTED,
           "RK4 on a constrained system was not refused");
  TL_CHECK(tl_system_integrator(s) == TL_INTEGRATOR_EULER, "the refused RK4 changed the integrator");
  TL_CHECK(tl_system_set_integrator(b, TL_INTEGRATOR_RK4, &e) == TL_OK, "RK4 on a free box: %s", e.message);
  tl_constraint_def d = tl_constraint_def_default();
  d.system1 = tl_system_index(b), d.body1 = "box", d.body2 = "world";
  TL_CHECK(tl_world_add_constraint(w, &d, NULL, &e) == TL_ERR_UNSUPPORTED, "a constraint on an RK4 system was not refused");
  TL_CHECK(tl_world_nconstraint(w) == 1, "the refused RK4 constraint was added");
  tl_world_free(w);
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "core") && strcmp(argv[1], "iiwa"))) {
    fprintf(stderr, "usage: test_loops core|iiwa ROBOTS_DIR [SHARED_DIR]\n");
    return 2;
  }
  robots_dir = argv[2];
  memset(&E, 0, sizeof E);
  tl_model *m = load(robots_dir, "four_bar/four_bar.urdf"), *box = load(robots_dir, "box/box.urdf"),
           *pend = load(robots_dir, "pendulum/pendulum.urdf");
  if (!m || !box || !pend) return tl_test_finish();
  if (!strcmp(argv[1], "core")) {
    fourbar_run(m, TL_CONSTRAINT_BALL, "four-bar + ball");
    fourbar_run(m, TL_CONSTRAINT_HINGE, "four-bar + hinge");
    double crank = fourbar_solvers(m, TL_CONSTRAINT_BALL, "four-bar + ball");
    fourbar_solvers(m, TL_CONSTRAINT_HINGE, "four-bar + hinge");
    fourbar_duplicate(m, box, crank);
    two_fourbars(m, crank);
    distance_pendulum(box, pend);
    weld_fourbar(m, box);
    projection(m);
    snapshot(m, box);
    no_alloc(m, box);
    softness(m, box);
    derivatives(m);
    rope_and_contacts(box);
    psd_unit();
    minnorm_unit();
    bad_declarations(m, box);
  } else {
    iiwa_weld(tl_test_shared_dir(argc, argv, 3), box);
  }
  tl_model_free(m);
  tl_model_free(box);
  tl_model_free(pend);
  int rc = tl_test_finish();
  if (rc == 0 && skipped_shared) return TL_TEST_SKIP_CODE;
  return rc;
}
