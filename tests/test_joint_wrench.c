/* Guards: src/native/joint_wrench.c, src/world/system_wrench.c (tl_system_joint_wrench / _wrenches: joint reaction wrenches of the last step). */
/* Joint reaction wrenches (issue 23 §3), against physics and an independent
 * computation:
 *
 *   chain    a fixed-base chain of 4 revolute links (URDF text) hanging at
 *            rest at its bottom equilibrium, COMs off the joint axes'
 *            plane: each joint carries the weight of the links below it
 *            (force = mass below * g, upward) and its moment about the joint
 *            origin from the COMs' offsets, the root joint the whole weight
 *            (the base's support reaction), to 1e-9 after 1 and 200 steps, with
 *            the Euler and the RK4 integrator.
 *   arm      KUKA iiwa (SHARED/robots/kuka_iiwa/model.urdf) at 5 random
 *            states with random PD gains, targets, feed-forward and an
 *            external force: every joint's wrench equals an independent
 *            Newton-Euler sum over the subtree (COM accelerations from the
 *            public Jacobians and dJ/dt u at the step's start state, du =
 *            (u+ - u)/dt) within 1e-9, and its projection on the joint axis
 *            equals the applied generalized force (tl_system_applied_
 *            generalized_force, PD at u+ and feed-forward) minus the rotor's
 *            inertia torque within 1e-9.
 *   flight   ANYmal C (SHARED/robots/anymal_c) in flight, 5 random states
 *            with PD and feed-forward: every joint equals the independent sum
 *            within 1e-9, the floating root joint's wrench is 0 (1e-9 of the
 *            weight).
 *   stand    ANYmal C standing on the ground (PD at its default pose, 1.5 s):
 *            every joint equals the independent sum with the contact forces
 *            of tl_world_contact within 1e-9 of the weight; the root wrench is
 *            0; the four hips carry the base's weight: the sum of the hip
 *            joints' forces (world, what the base exerts on the legs) equals
 *            minus the contact forces less the legs' weight (1e-3 of m g), and
 *            the contacts carry m g (1 %); across the fixed joints
 *            (tl_system_frame_wrench) the feet pass the contact forces less
 *            their weight and base_to_base_inertia the inertia link's weight
 *            (1e-3 m g).
 *   errors   before the first step and after set_state: TL_ERR_INVALID; a bad
 *            joint index or length: TL_ERR_ARGUMENT; external forces added
 *            after the step leave the last step's wrenches as they were; after
 *            restoring a snapshot holding external forces: TL_ERR_UNSUPPORTED;
 *            a horizontal pendulum with a 5 N lift has its rigid-body joint
 *            force; a loop constraint's wrench of the last step (tl_constraint
 *            force, torque, set by hand) changes joint 1 by exactly -(F, r x F + T).
 *   limit    a horizontal pendulum resting on its upper limit: force m g, and the
 *            limit's torque -0.3 m g about the axis (1e-6 m g).
 *   fixed    tl_system_frame_wrench across a fixed joint inside a merged body
 *            (a pendulum carrying a fixed link from which a second pendulum
 *            hangs, at rest): the weight beyond it and its moment in the
 *            frame's axes (1e-9); a movable joint's frame equals its joint's
 *            wrench, a user frame the body's joint wrench moved to it; an
 *            external force on the body: TL_ERR_UNSUPPORTED.
 *   hinge2   the project's sprung hinge-2 car (ROBOTS/hinge2_car, compiled into
 *            massless suspension and steering bodies) in flight at random
 *            states: as the arm, against the independent sum (1e-9).
 *   plugin   on the ODE engine (when built): TL_ERR_UNSUPPORTED naming it.
 * Exit 77 when SHARED is absent (the chain and errors parts need nothing). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "world/world_internal.h"
#include "talus/talus.h"
#include "test_util.h"

#define DT 1e-3
static tl_error err;
static const double G = 9.81;

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;
static double urand(double lo, double hi) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static int is_desc(const tl_model *m, int b, int i) { /* b in the subtree of i */
  for (; b >= 0; b = tl_model_body_parent(m, b))
    if (b == i) return 1;
  return 0;
}

/* An external force for the independent sum: force F (world) at point p on body b. */
typedef struct { int b; double F[3], p[3]; } pforce;

/* Independent Newton-Euler sum for every joint at the system's current state
 * (the step's start) with acceleration du: out[6 i] = (f, n) of joint i in its
 * body frame, from f = sum_b m_b (a_cb - g) - F_ext and
 * n = sum_b [I_b alpha_b + w_b x I_b w_b + (c_b - p_i) x m_b (a_cb - g)] - moments of F_ext,
 * a_cb and alpha_b from the public point Jacobians and bias accelerations. */
static void independent(tl_system *s, const double *du, const pforce *ext, int next, double *out) {
  const tl_model *m = tl_system_model(s);
  int nb = tl_model_nbody(m), nv = tl_model_nv(m);
  double *Jp = malloc(3 * (size_t)nv * sizeof(double)), *Jr = malloc(3 * (size_t)nv * sizeof(double));
  double *F = calloc(6 * (size_t)nb, sizeof(double)), *C = calloc(3 * (size_t)nb, sizeof(double));
  double *N = calloc(3 * (size_t)nb, sizeof(double));
  if (!Jp || !Jr || !F || !C || !N) exit(2);
  for (int b = 0; b < nb; b++) {
    double pos[3], R[9], c[3], acc[3], alpha[3], v[3], w[3];
    tl_system_body_pose(s, b, pos, R, NULL);
    for (int i = 0; i < 3; i++)
      c[i] = pos[i] + R[3 * i] * m->body_com[3 * b] + R[3 * i + 1] * m->body_com[3 * b + 1] + R[3 * i + 2] * m->body_com[3 * b + 2];
    tl_system_point_jacobian(s, b, c, Jp, Jr, nv, NULL);
    tl_system_point_bias_acceleration(s, b, c, acc, alpha, NULL);
    tl_system_point_velocity(s, b, c, v, w, NULL);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) acc[i] += Jp[i * nv + k] * du[k], alpha[i] += Jr[i * nv + k] * du[k];
    double mb = tl_model_body_mass(m, b), Iw[9], T[9], Iw_w[3], Ia[3];
    const double *Ib = m->body_inertia + 9 * b;
    for (int i = 0; i < 3; i++) /* T = R Ib, Iw = T R^T */
      for (int j = 0; j < 3; j++) T[3 * i + j] = R[3 * i] * Ib[j] + R[3 * i + 1] * Ib[3 + j] + R[3 * i + 2] * Ib[6 + j];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Iw[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    for (int i = 0; i < 3; i++) {
      Iw_w[i] = Iw[3 * i] * w[0] + Iw[3 * i + 1] * w[1] + Iw[3 * i + 2] * w[2];
      Ia[i] = Iw[3 * i] * alpha[0] + Iw[3 * i + 1] * alpha[1] + Iw[3 * i + 2] * alpha[2];
    }
    double gyro[3] = {w[1] * Iw_w[2] - w[2] * Iw_w[1], w[2] * Iw_w[0] - w[0] * Iw_w[2], w[0] * Iw_w[1] - w[1] * Iw_w[0]};
    for (int i = 0; i < 3; i++) {
      F[3 * b + i] = mb * (acc[i] + (i == 2 ? G : 0.0));
      N[3 * b + i] = Ia[i] + gyro[i];
      C[3 * b + i] = c[i];
    }
  }
  for (int j = 0; j < nb; j++) {
    double pj[3], Rj[9], f[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    tl_system_body_pose(s, j, pj, Rj, NULL);
    for (int b = 0; b < nb; b++) {
      if (!is_desc(m, b, j)) continue;
      double r[3] = {C[3 * b] - pj[0], C[3 * b + 1] - pj[1], C[3 * b + 2] - pj[2]}, *Fb = F + 3 * b;
      f[0] += Fb[0], f[1] += Fb[1], f[2] += Fb[2];
      n[0] += N[3 * b] + r[1] * Fb[2] - r[2] * Fb[1];
      n[1] += N[3 * b + 1] + r[2] * Fb[0] - r[0] * Fb[2];
      n[2] += N[3 * b + 2] + r[0] * Fb[1] - r[1] * Fb[0];
    }
    for (int e = 0; e < next; e++) {
      if (!is_desc(m, ext[e].b, j)) continue;
      const double *Fe = ext[e].F;
      double r[3] = {ext[e].p[0] - pj[0], ext[e].p[1] - pj[1], ext[e].p[2] - pj[2]};
      f[0] -= Fe[0], f[1] -= Fe[1], f[2] -= Fe[2];
      n[0] -= r[1] * Fe[2] - r[2] * Fe[1];
      n[1] -= r[2] * Fe[0] - r[0] * Fe[2];
      n[2] -= r[0] * Fe[1] - r[1] * Fe[0];
    }
    for (int i = 0; i < 3; i++) {
      out[6 * j + i] = Rj[i] * f[0] + Rj[3 + i] * f[1] + Rj[6 + i] * f[2];
      out[6 * j + 3 + i] = Rj[i] * n[0] + Rj[3 + i] * n[1] + Rj[6 + i] * n[2];
    }
  }
  free(Jp), free(Jr), free(F), free(C), free(N);
}

/* ---------------- chain ---------------- */

static const char *CHAIN =
    "<robot name='chain'><link name='base'><inertial><mass value='2'/><origin xyz='0.05 0 0.1'/>"
    "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "%s</robot>";

static void chain(int rk4) {
  /* link k: mass 1 + 0.5 k, COM (0, 0.1 (k + 1), -0.2) in its frame; joint k + 1 at (0, 0.05, -0.4) */
  char links[8192] = "", buf[16384];
  const int n = 4;
  for (int k = 0; k < n; k++) {
    char one[1024];
    snprintf(one, sizeof one,
             "<link name='l%d'><inertial><mass value='%g'/><origin xyz='0 %g -0.2'/>"
             "<inertia ixx='0.02' iyy='0.03' izz='0.01' ixy='0.001' ixz='0' iyz='0'/></inertial></link>"
             "<joint name='j%d' type='revolute'><parent link='%s'/><child link='l%d'/>"
             "<origin xyz='0 %g %g'/><axis xyz='0 1 0'/><limit lower='-3' upper='3' effort='100' velocity='10'/></joint>",
             k, 1 + 0.5 * k, 0.1 * (k + 1), k, k ? (char[8]){'l', (char)('0' + k - 1), 0} : "base", k,
             k ? 0.05 : 0.0, k ? -0.4 : 0.0);
    strcat(links, one);
  }
  snprintf(buf, sizeof buf, CHAIN, links);
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  int ok = tl_model_load_urdf_string(buf, strlen(buf), "chain", &lo, &m, &err) == TL_OK &&
           tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, DT, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (rk4) ok = tl_system_set_integrator(s, TL_INTEGRATOR_RK4, &err) == TL_OK;
  if (!TL_CHECK(ok, "chain: setup: %s", err.message)) goto done;
  TL_CHECK(tl_model_nbody(m) == n + 1, "chain: %d bodies", tl_model_nbody(m));
  /* world COMs at q = 0 and the joint origins */
  double jz[5], jy[5], cz[5], cy[5], cx[5], mass[5];
  jz[0] = 0, jy[0] = 0, cx[0] = 0.05, cy[0] = 0, cz[0] = 0.1, mass[0] = 2;
  for (int k = 0; k < n; k++) {
    int b = k + 1;
    jy[b] = jy[b - 1] + (k ? 0.05 : 0.0), jz[b] = jz[b - 1] + (k ? -0.4 : 0.0);
    cx[b] = 0, cy[b] = jy[b] + 0.1 * (k + 1), cz[b] = jz[b] - 0.2, mass[b] = 1 + 0.5 * k;
  }
  for (int steps = 1; steps <= 200; steps += 199) {
    for (int i = 0; i < steps; i++) ok = ok && tl_world_step(w, &err) == TL_OK;
    if (!TL_CHECK(ok, "chain: step: %s", err.message)) goto done;
    double out[30];
    ok = tl_system_joint_wrenches(s, out, 6 * (n + 1), &err) == TL_OK;
    if (!TL_CHECK(ok, "chain: joint_wrenches: %s", err.message)) goto done;
    for (int j = 0; j <= n; j++) {
      double f[3] = {0, 0, 0}, nn[3] = {0, 0, 0}; /* the parent holds the links below against gravity */
      for (int b = j; b <= n; b++) {
        double r[3] = {cx[b], cy[b] - jy[j], cz[b] - jz[j]}, Fg[3] = {0, 0, -mass[b] * G};
        f[2] -= Fg[2];
        nn[0] -= r[1] * Fg[2] - r[2] * Fg[1];
        nn[1] -= r[2] * Fg[0] - r[0] * Fg[2];
        nn[2] -= r[0] * Fg[1] - r[1] * Fg[0];
      }
      double f1[3], n1[3];
      tl_system_joint_wrench(s, j, f1, n1, NULL);
      printf("chain (%s), %d steps, joint %d: f (%.12f %.12f %.12f) N, n (%.12f %.12f %.12f) N m; expected f_z %.12f, n_x %.12f, n_y %.12f\n",
             rk4 ? "RK4" : "Euler", steps, j, out[6 * j], out[6 * j + 1], out[6 * j + 2], out[6 * j + 3], out[6 * j + 4], out[6 * j + 5], f[2],
             nn[0], nn[1]);
      for (int i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "chain joint %d f[%d]", j, i);
        TL_CHECK_NEAR(out[6 * j + i], f[i], 1e-9, what);
        snprintf(what, sizeof what, "chain joint %d n[%d]", j, i);
        TL_CHECK_NEAR(out[6 * j + 3 + i], nn[i], 1e-9, what);
        TL_CHECK(f1[i] == out[6 * j + i] && n1[i] == out[6 * j + 3 + i], "chain joint %d: single and all differ", j);
      }
    }
  }
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* ---------------- random states against the independent sum ---------------- */

/* Step once from (q0, u0), then compare the wrenches with the independent
 * sum at (q0, u0); contacts of the step are external forces too. Returns the
 * largest difference scaled by `scale`. */
static double compare_step(tl_world *w, tl_system *s, const double *q0, const double *u0, const pforce *ext0, int next0,
                           double *root_norm, double *proj_err, double *got_out) {
  const tl_model *m = tl_system_model(s);
  int nb = tl_model_nbody(m), nv = tl_model_nv(m), nq = tl_model_nq(m);
  double *got = malloc(6 * (size_t)nb * sizeof(double)), *want = malloc(6 * (size_t)nb * sizeof(double));
  double *u1 = malloc((size_t)nv * sizeof(double)), *q1 = malloc((size_t)nq * sizeof(double)), *du = malloc((size_t)nv * sizeof(double));
  double *tau = malloc((size_t)nv * sizeof(double));
  pforce ext[64];
  int next = next0;
  if (next0) memcpy(ext, ext0, (size_t)next0 * sizeof(pforce));
  if (!got || !want || !u1 || !q1 || !du || !tau) exit(2);
  tl_system_set_state(s, q0, nq, u0, nv, NULL);
  for (int e = 0; e < next0; e++) tl_system_add_external_force(s, ext0[e].b, ext0[e].F, ext0[e].p, NULL);
  int ok = tl_world_step(w, &err) == TL_OK && tl_system_joint_wrenches(s, got, 6 * nb, &err) == TL_OK;
  if (!TL_CHECK(ok, "step / joint_wrenches: %s", err.message)) return INFINITY;
  tl_system_get_state(s, q1, nq, u1, nv, NULL);
  tl_system_applied_generalized_force(s, tau, nv, NULL);
  for (int c = 0; c < tl_world_ncontact(w) && next < 64; c++) {
    tl_contact_info ci;
    tl_world_contact(w, c, &ci, NULL);
    for (int side = 0; side < 2; side++) {
      int sys = side ? ci.other_system : ci.system, b = side ? ci.other_body : ci.body;
      if (sys != tl_system_index(s)) continue;
      pforce pf = {b, {0, 0, 0}, {ci.pos[0], ci.pos[1], ci.pos[2]}};
      for (int i = 0; i < 3; i++) pf.F[i] = (side ? -1 : 1) * ci.impulse[i] / DT;
      ext[next++] = pf;
    }
  }
  for (int k = 0; k < nv; k++) du[k] = (u1[k] - u0[k]) / DT;
  tl_system_set_state(s, q0, nq, u0, nv, NULL); /* the step's start, for the independent sum */
  independent(s, du, ext, next, want);
  double d = 0;
  for (int i = 0; i < 6 * nb; i++) d = fmax(d, fabs(got[i] - want[i]));
  *root_norm = 0;
  for (int i = 0; i < 6; i++) *root_norm = fmax(*root_norm, fabs(got[i]));
  /* projection on revolute axes (in the joint / body frame) = applied force - rotor inertia du */
  *proj_err = 0;
  for (int b = 1; b < nb; b++) {
    if (tl_model_joint_type(m, b) != TL_JOINT_REVOLUTE) continue;
    int v = tl_model_joint_u_index(m, b);
    const double *a = m->jnt_axis + 3 * b;
    double p = a[0] * got[6 * b + 3] + a[1] * got[6 * b + 4] + a[2] * got[6 * b + 5];
    double expect = tau[v] - m->dof_rotor_inertia[v] * du[v] - m->dof_damping[v] * u1[v];
    *proj_err = fmax(*proj_err, fabs(p - expect));
  }
  tl_system_set_state(s, q1, nq, u1, nv, NULL);
  if (got_out) memcpy(got_out, got, 6 * (size_t)nb * sizeof(double));
  free(got), free(want), free(u1), free(q1), free(du), free(tau);
  return d;
}

/* Random PD gains, targets within the limits, feed-forward. */
static void random_control(tl_system *s, double kp_max, double ff_max) {
  const tl_model *m = tl_system_model(s);
  int nv = tl_model_nv(m), nq = tl_model_nq(m), base = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING ? 6 : 0;
  double *kp = calloc((size_t)nv, sizeof(double)), *kd = calloc((size_t)nv, sizeof(double));
  double *qt = calloc((size_t)nq, sizeof(double)), *ff = calloc((size_t)nv, sizeof(double));
  if (!kp || !kd || !qt || !ff) exit(2);
  tl_system_get_pd_targets(s, qt, nq, NULL, 0, NULL);
  for (int k = base; k < nv; k++) {
    kp[k] = urand(0, kp_max), kd[k] = urand(0, kp_max / 30), ff[k] = urand(-ff_max, ff_max);
    int qi = k + (nq - nv);
    double lo = m->dof_lower[k], hi = m->dof_upper[k];
    qt[qi] = isfinite(lo) && isfinite(hi) ? urand(lo, hi) : urand(-1, 1);
  }
  tl_system_set_pd_gains(s, kp, kd, nv, NULL);
  tl_system_set_pd_targets(s, qt, nq, NULL, 0, NULL);
  tl_system_set_generalized_force(s, ff, nv, NULL);
  free(kp), free(kd), free(qt), free(ff);
}

/* Random joint state inside the limits (0.1 rad margin), velocities within +-vmax. */
static void random_state(const tl_model *m, double *q, double *u, double vmax) {
  int nv = tl_model_nv(m), nq = tl_model_nq(m), base = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING ? 6 : 0;
  for (int k = 0; k < nv; k++) u[k] = urand(-vmax, vmax);
  for (int k = base; k < nv; k++) {
    int qi = k + (nq - nv);
    double lo = m->dof_lower[k], hi = m->dof_upper[k];
    q[qi] = isfinite(lo) && isfinite(hi) && hi - lo > 0.3 ? urand(lo + 0.1, hi - 0.1) : urand(-1, 1);
  }
  if (base) {
    double a = urand(-0.5, 0.5), b = urand(-0.5, 0.5), c = urand(-0.5, 0.5), nrm = sqrt(1 + a * a + b * b + c * c);
    q[0] = urand(-1, 1), q[1] = urand(-1, 1), q[2] = 5 + urand(0, 1);
    q[3] = 1 / nrm, q[4] = a / nrm, q[5] = b / nrm, q[6] = c / nrm;
  }
}

static double total_mass(const tl_model *m) {
  double t = 0;
  for (int b = 0; b < tl_model_nbody(m); b++) t += tl_model_body_mass(m, b);
  return t;
}

static void random_states(const char *label, const char *path, int with_ext, tl_base_type base) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_load_options lo = tl_load_options_default();
  lo.base = base;
  int ok = tl_model_load_urdf(path, &lo, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "%s: setup: %s", label, err.message)) goto done;
  int nq = tl_model_nq(m), nv = tl_model_nv(m), nb = tl_model_nbody(m);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  if (!q || !u) exit(2);
  double mg = total_mass(m) * G;
  for (int trial = 0; trial < 5; trial++) {
    tl_system_get_state(s, q, nq, u, nv, NULL);
    random_state(m, q, u, 1.0);
    random_control(s, 200, 10);
    pforce ext[1] = {{nb - 1, {urand(-20, 20), urand(-20, 20), urand(-20, 20)}, {0, 0, 0}}};
    if (with_ext) { /* at a point near the last body */
      double pos[3], R[9];
      tl_system_set_state(s, q, nq, u, nv, NULL);
      tl_system_body_pose(s, nb - 1, pos, R, NULL);
      for (int i = 0; i < 3; i++) ext[0].p[i] = pos[i] + urand(-0.1, 0.1);
    }
    double root, proj, d = compare_step(w, s, q, u, ext, with_ext, &root, &proj, NULL);
    int floating = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING;
    printf("%s, trial %d: max |wrench - independent| %.3e, root joint |w| %.3e (%s), max |axis . n - (tau - "
           "rotor du)| %.3e, m g %.1f N\n", label, trial, d, root, floating ? "floating: 0" : "fixed: support", proj, mg);
    TL_CHECK(d < 1e-9, "%s trial %d: wrenches differ from the independent Newton-Euler sum by %.3e", label, trial, d);
    TL_CHECK(proj < 1e-9, "%s trial %d: axis projection differs from the applied force by %.3e", label, trial, proj);
    if (floating) TL_CHECK(root < 1e-9 * mg, "%s trial %d: floating root wrench %.3e", label, trial, root);
  }
  free(q), free(u);
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* ---------------- standing quadruped ---------------- */

static void stand(const char *path) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  int ok = tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "stand: setup: %s", err.message)) goto done;
  int nq = tl_model_nq(m), nv = tl_model_nv(m), nb = tl_model_nbody(m);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  double *kp = calloc((size_t)nv, sizeof(double)), *kd = calloc((size_t)nv, sizeof(double));
  if (!q || !u || !kp || !kd) exit(2);
  tl_system_get_state(s, q, nq, u, nv, NULL);
  double lo[3], hi[3];
  tl_system_collision_aabb(s, lo, hi);
  q[2] += 0.005 - lo[2];
  for (int k = 6; k < nv; k++) kp[k] = 300, kd[k] = 10;
  ok = tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK && tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK;
  for (int i = 0; ok && i < 1500; i++) ok = tl_world_step(w, &err) == TL_OK;
  if (!TL_CHECK(ok, "stand: %s", err.message)) goto done2;
  double mg = total_mass(m) * G, root, proj;
  tl_system_get_state(s, q, nq, u, nv, NULL);
  double Fc[3] = {0, 0, 0}, hips[3] = {0, 0, 0}, legs = 0, all[6 * 64];
  if (!TL_CHECK(nb <= 64, "stand: %d bodies", nb)) goto done2;
  double d = compare_step(w, s, q, u, NULL, 0, &root, &proj, all);
  /* fixed joints: the feet (leaves) and the base's inertia link hung on the massless base link */
  static const char *fnames[5] = {"LF_shank_fixed_LF_FOOT", "RF_shank_fixed_RF_FOOT", "LH_shank_fixed_LH_FOOT",
                                  "RH_shank_fixed_RH_FOOT", "base_to_base_inertia"};
  double fw[5][6];
  int fidx[5];
  for (int i = 0; i < 5; i++) {
    ok = tl_system_frame_index(s, fnames[i], &fidx[i], &err) == TL_OK &&
         tl_system_frame_wrench(s, fidx[i], fw[i], fw[i] + 3, &err) == TL_OK;
    if (!TL_CHECK(ok, "stand: frame %s: %s", fnames[i], err.message)) goto done2;
  }
  tl_system_set_state(s, q, nq, u, nv, NULL); /* the step's start: the joint frames' poses */
  double feet[3] = {0, 0, 0}, bi[3] = {0, 0, 0}, mfeet = 0, mbi = 0;
  for (int i = 0; i < 5; i++) {
    double p[3], R[9];
    tl_system_frame_pose(s, fidx[i], p, R, NULL);
    for (int r = 0; r < 3; r++) (i < 4 ? feet : bi)[r] += R[3 * r] * fw[i][0] + R[3 * r + 1] * fw[i][1] + R[3 * r + 2] * fw[i][2];
    const char *link = tl_model_frame_link(m, fidx[i]);
    for (int l = 0; l < m->nlink; l++)
      if (!strcmp(m->link_name[l], link)) *(i < 4 ? &mfeet : &mbi) += m->link_mass[l];
  }
  /* contact forces (world) and the hips: the children of the base */
  int nc = tl_world_ncontact(w), nhip = 0;
  for (int c = 0; c < nc; c++) {
    tl_contact_info ci;
    tl_world_contact(w, c, &ci, NULL);
    for (int i = 0; i < 3; i++) Fc[i] += ci.impulse[i] / DT;
  }
  for (int b = 1; b < nb; b++) {
    if (tl_model_body_parent(m, b) != 0) {
      legs += tl_model_body_mass(m, b) * G;
      continue;
    }
    legs += tl_model_body_mass(m, b) * G;
    double pos[3], R[9], *f = all + 6 * b;
    tl_system_body_pose(s, b, pos, R, NULL);
    for (int i = 0; i < 3; i++) hips[i] += R[3 * i] * f[0] + R[3 * i + 1] * f[1] + R[3 * i + 2] * f[2];
    nhip++;
  }
  /* the base pushes each leg down with the leg's contact forces less its weight: the hips' forces
     (what the base exerts on the legs) sum to -(contacts - legs' weight) */
  printf("stand: %d contacts carry (%.3f %.3f %.3f) N = %.5f m g; %d hips carry (%.3f %.3f %.3f) N, contacts - "
         "legs' weight (%.3f %.3f %.3f) N; root |w| %.3e; max |wrench - independent| %.3e, axis projection %.3e\n",
         nc, Fc[0], Fc[1], Fc[2], Fc[2] / mg, nhip, hips[0], hips[1], hips[2], Fc[0], Fc[1], Fc[2] - legs, root, d, proj);
  printf("stand: the 4 foot joints (fixed) carry (%.3f %.3f %.3f) N, the feet's weight less the contacts (%.3f %.3f "
         "%.3f) N; base_to_base_inertia carries (%.3f %.3f %.3f) N, its link's weight %.3f N\n", feet[0], feet[1], feet[2],
         -Fc[0], -Fc[1], mfeet * G - Fc[2], bi[0], bi[1], bi[2], mbi * G);
  TL_CHECK(fabs(feet[0] + Fc[0]) < 1e-3 * mg && fabs(feet[1] + Fc[1]) < 1e-3 * mg &&
           fabs(feet[2] - (mfeet * G - Fc[2])) < 1e-3 * mg, "stand: the foot joints carry (%.4f %.4f %.4f) N", feet[0],
           feet[1], feet[2]);
  TL_CHECK(mbi > 0 && fabs(bi[0]) < 1e-3 * mg && fabs(bi[1]) < 1e-3 * mg && fabs(bi[2] - mbi * G) < 1e-3 * mg,
           "stand: base_to_base_inertia carries (%.4f %.4f %.4f) N, the link weighs %.4f N", bi[0], bi[1], bi[2], mbi * G);
  TL_CHECK(nhip == 4, "stand: %d children of the base", nhip);
  TL_CHECK(fabs(Fc[2] / mg - 1) < 0.01, "stand: contacts carry %.5f m g", Fc[2] / mg);
  TL_CHECK(fabs(hips[2] + (Fc[2] - legs)) < 1e-3 * mg && fabs(hips[0] + Fc[0]) < 1e-3 * mg && fabs(hips[1] + Fc[1]) < 1e-3 * mg,
           "stand: the hips carry (%.4f %.4f %.4f) N, minus the contacts less the legs' weight (%.4f %.4f %.4f) N", hips[0],
           hips[1], hips[2], -Fc[0], -Fc[1], -(Fc[2] - legs));
  TL_CHECK(root < 1e-9 * mg, "stand: floating root wrench %.3e", root);
  TL_CHECK(d < 1e-9 * mg, "stand: wrenches differ from the independent sum by %.3e", d);
  TL_CHECK(proj < 1e-9 * mg, "stand: axis projection differs from the applied force by %.3e", proj);
done2:
  free(q), free(u), free(kp), free(kd);
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* ---------------- errors and the external-force slots ---------------- */

static void errors(void) {
  static const char *P =
      "<robot name='p'><link name='base'/><link name='a'><inertial><mass value='1'/><origin xyz='0.3 0 0'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j' type='continuous'><parent link='base'/><child link='a'/><axis xyz='0 1 0'/></joint></robot>";
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  int ok = tl_model_load_urdf_string(P, strlen(P), "p", &lo, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "errors: setup: %s", err.message)) goto done;
  double f[3], n[3], all[12];
  tl_status st = tl_system_joint_wrench(s, 1, f, n, &err);
  TL_CHECK(st == TL_ERR_INVALID, "before the first step: status %d (%s)", st, err.message);
  printf("before the first step: %s\n", err.message);
  TL_CHECK(tl_world_step(w, &err) == TL_OK, "step: %s", err.message);
  TL_CHECK(tl_system_joint_wrench(s, 2, f, n, &err) == TL_ERR_ARGUMENT, "joint 2 of 2 accepted");
  TL_CHECK(tl_system_joint_wrench(s, -1, f, n, &err) == TL_ERR_ARGUMENT, "joint -1 accepted");
  TL_CHECK(tl_system_joint_wrenches(s, all, 11, &err) == TL_ERR_ARGUMENT, "length 11 accepted");
  /* an external force at the body's COM, then one for the next step added before asking */
  double F[3] = {0, 0, 5}, p[3] = {0.3, 0, 0}, F2[3] = {100, 0, 0};
  TL_CHECK(tl_system_add_external_force(s, 1, F, p, &err) == TL_OK, "add force: %s", err.message);
  TL_CHECK(tl_world_step(w, &err) == TL_OK, "step: %s", err.message);
  ok = tl_system_joint_wrenches(s, all, 12, &err) == TL_OK;
  TL_CHECK(ok, "after the step: %s", err.message);
  double before[12];
  memcpy(before, all, sizeof all);
  /* the pendulum starts horizontal: joint 1 carries weight - 5 N less the falling link's inertia; the base
     reaction's force is the joint's */
  printf("pendulum with a 5 N lift: joint 1 f (%.6f %.6f %.6f) n (%.6f %.6f %.6f)\n", all[6], all[7], all[8], all[9],
         all[10], all[11]);
  TL_CHECK(fabs(hypot(all[0], all[2]) - hypot(all[6], all[8])) < 1e-12 && fabs(all[1] - all[7]) < 1e-12,
           "base and joint force differ (massless base)");
  /* horizontal link, pivot at the origin, COM at 0.3: a = (g - 5/m) r / (r^2 + I/m) (I about COM 0.01):
     the joint force along z is m g - 5 - m a_com */
  double acom = (G - 5.0) * 0.3 * 0.3 / (0.09 + 0.01), fz = 1 * G - 5 - 1 * acom;
  TL_CHECK(fabs(all[8] - fz) < 0.05, "pendulum joint force %.6f N, rigid-body value %.6f N", all[8], fz);
  TL_CHECK(tl_system_add_external_force(s, 1, F2, p, &err) == TL_OK, "add force: %s", err.message);
  ok = tl_system_joint_wrenches(s, all, 12, &err) == TL_OK;
  TL_CHECK(ok && memcmp(all, before, sizeof all) == 0, "a force added for the next step changed the last step's wrenches");
  /* the next step sees the 100 N force only */
  TL_CHECK(tl_world_step(w, &err) == TL_OK, "step: %s", err.message);
  double q[1], u[1];
  /* after set_state */
  tl_system_get_state(s, q, 1, u, 1, NULL);
  q[0] += 0.1;
  tl_system_set_state(s, q, 1, u, 1, NULL);
  st = tl_system_joint_wrenches(s, all, 12, &err);
  TL_CHECK(st == TL_ERR_INVALID, "after set_state: status %d", st);
  printf("after set_state: %s\n", err.message);
  /* a snapshot holding an external force: restored, the next step's wrenches cannot tell its point */
  TL_CHECK(tl_system_add_external_force(s, 1, F, p, &err) == TL_OK, "add: %s", err.message);
  size_t size = tl_world_snapshot_size(w), wr = 0;
  unsigned char *snap = malloc(size);
  ok = snap && tl_world_snapshot_save(w, snap, size, &wr, &err) == TL_OK &&
       tl_world_snapshot_restore(w, snap, wr, &err) == TL_OK && tl_world_step(w, &err) == TL_OK;
  TL_CHECK(ok, "snapshot: %s", err.message);
  st = tl_system_joint_wrenches(s, all, 12, &err);
  TL_CHECK(st == TL_ERR_UNSUPPORTED, "after a restored external force: status %d", st);
  printf("after a restored external force: %s\n", err.message);
  TL_CHECK(tl_world_step(w, &err) == TL_OK && tl_system_joint_wrenches(s, all, 12, &err) == TL_OK,
           "the step after: %s", err.message);
  free(snap);
  /* a loop constraint's wrench of the last step (what the loop solve leaves in tl_constraint's force and
     torque; put there by hand: the native step does not solve loops yet) enters joint 1 and the root as
     an external wrench on body 1 at frame 1's origin: joint 1 changes by -(F, r x F + T) */
  double Fl[3] = {1, 2, 3}, Tl[3] = {0.5, -0.25, 0.125}, pl[3] = {0.2, 0.1, -0.1}, pos[3], R[9];
  memcpy(before, all, sizeof all);
  tl_constraint lc;
  memset(&lc, 0, sizeof lc);
  lc.type = TL_CONSTRAINT_BALL;
  lc.sys[0] = 0, lc.body[0] = 1, lc.sys[1] = lc.body[1] = -1;
  memcpy(lc.pos[0], pl, sizeof pl);
  memcpy(lc.force, Fl, sizeof Fl), memcpy(lc.torque, Tl, sizeof Tl);
  tl_world *wi = w;
  wi->constraints = &lc, wi->nconstraint = 1;
  ok = tl_system_joint_wrenches(s, all, 12, &err) == TL_OK;
  wi->constraints = NULL, wi->nconstraint = 0;
  double qs[1], us[1];
  tl_system_get_state(s, qs, 1, us, 1, NULL);
  tl_system_set_state(s, s->q_prev, 1, s->u_prev, 1, NULL); /* the step's start pose of body 1 */
  tl_system_body_pose(s, 1, pos, R, NULL);
  double o[3];
  for (int i = 0; i < 3; i++) o[i] = pos[i] + R[3 * i] * pl[0] + R[3 * i + 1] * pl[1] + R[3 * i + 2] * pl[2];
  tl_system_set_state(s, qs, 1, us, 1, NULL);
  double r[3] = {o[0] - pos[0], o[1] - pos[1], o[2] - pos[2]};
  double mom[3] = {r[1] * Fl[2] - r[2] * Fl[1] + Tl[0], r[2] * Fl[0] - r[0] * Fl[2] + Tl[1], r[0] * Fl[1] - r[1] * Fl[0] + Tl[2]}, dmax = 0;
  for (int i = 0; i < 3; i++) {
    double fb = R[i] * Fl[0] + R[3 + i] * Fl[1] + R[6 + i] * Fl[2], nb = R[i] * mom[0] + R[3 + i] * mom[1] + R[6 + i] * mom[2];
    dmax = fmax(dmax, fabs(all[6 + i] - before[6 + i] + fb));
    dmax = fmax(dmax, fabs(all[9 + i] - before[9 + i] + nb));
  }
  TL_CHECK(ok && dmax < 1e-12, "loop constraint: joint 1 changed by other than -(F, r x F + T): %.3e (%s)", dmax,
           ok ? "" : err.message);
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* R_y(t) x. */
static void roty(double r[3], double t, const double x[3]) {
  r[0] = cos(t) * x[0] + sin(t) * x[2], r[1] = x[1], r[2] = -sin(t) * x[0] + cos(t) * x[2];
}

/* Fixed joints inside a merged body: a pendulum 'a' (about x) carries, through the fixed joint
 * 'tip_joint' (pitched 0.3 rad), a link 'tip' from which a second pendulum 'c' hangs; all COMs in
 * the x-z plane, so it hangs at rest. The wrench across tip_joint is the weight of tip and c and
 * its moment about the frame's origin, in the frame's axes (1e-9); a movable joint's frame gives
 * its joint's wrench; a user frame the wrench of its body's joint moved to it; an external force
 * on the body: TL_ERR_UNSUPPORTED. */
static void fixed_frames(void) {
  static const char *P =
      "<robot name='f'><link name='base'/>"
      "<link name='a'><inertial><mass value='2'/><origin xyz='0.1 0 -0.3'/>"
      "<inertia ixx='0.02' iyy='0.02' izz='0.01' ixy='0' ixz='0.001' iyz='0'/></inertial></link>"
      "<link name='tip'><inertial><mass value='0.5'/><origin xyz='0.02 0 -0.05'/>"
      "<inertia ixx='0.001' iyy='0.002' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<link name='c'><inertial><mass value='1'/><origin xyz='0.03 0 -0.2'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j' type='continuous'><parent link='base'/><child link='a'/><axis xyz='1 0 0'/></joint>"
      "<joint name='tip_joint' type='fixed'><parent link='a'/><child link='tip'/><origin xyz='0.05 0 -0.6' rpy='0 0.3 0'/></joint>"
      "<joint name='jc' type='continuous'><parent link='tip'/><child link='c'/><origin xyz='0 0 -0.1'/><axis xyz='1 0 0'/></joint>"
      "</robot>";
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  int ok = tl_model_load_urdf_string(P, strlen(P), "f", &lo, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  for (int i = 0; ok && i < 50; i++) ok = tl_world_step(w, &err) == TL_OK;
  if (!TL_CHECK(ok, "fixed frames: %s", err.message)) goto done;
  int ftip = -1, fj = -1, fuser = -1;
  ok = tl_system_frame_index(s, "tip_joint", &ftip, &err) == TL_OK && tl_system_frame_index(s, "j", &fj, &err) == TL_OK;
  if (!TL_CHECK(ok, "frames: %s", err.message)) goto done;
  /* the weights below the fixed joint: tip and c, at q = 0 */
  const double t = 0.3, pF[3] = {0.05, 0, -0.6}, ctip_l[3] = {0.02, 0, -0.05}, oc_l[3] = {0, 0, -0.1}, cc_l[3] = {0.03, 0, -0.2};
  double ctip[3], oc[3], cc[3], r1[3];
  roty(r1, t, ctip_l);
  for (int i = 0; i < 3; i++) ctip[i] = pF[i] + r1[i];
  roty(r1, t, oc_l);
  for (int i = 0; i < 3; i++) oc[i] = pF[i] + r1[i];
  roty(r1, t, cc_l);
  for (int i = 0; i < 3; i++) cc[i] = oc[i] + r1[i];
  const double mt = 0.5, mc = 1.0;
  double fw[3] = {0, 0, (mt + mc) * G}, nw[3] = {0, 0, 0};
  const double *cs[2] = {ctip, cc}, ms[2] = {mt, mc};
  for (int k = 0; k < 2; k++) { /* n = -sum r x (m g), g = (0, 0, -G): (-r_y m G... ) */
    double r[3] = {cs[k][0] - pF[0], cs[k][1] - pF[1], cs[k][2] - pF[2]}, Fg[3] = {0, 0, -ms[k] * G};
    nw[0] -= r[1] * Fg[2] - r[2] * Fg[1];
    nw[1] -= r[2] * Fg[0] - r[0] * Fg[2];
    nw[2] -= r[0] * Fg[1] - r[1] * Fg[0];
  }
  double fe[3], ne[3], mt3[3] = {0, 0, 0}; /* into the frame's axes: R_y(0.3)^T = R_y(-0.3) */
  roty(fe, -t, fw);
  roty(ne, -t, nw);
  double f[3], n[3];
  ok = tl_system_frame_wrench(s, ftip, f, n, &err) == TL_OK;
  if (TL_CHECK(ok, "frame wrench: %s", err.message)) {
    printf("across fixed joint tip_joint: f (%.12f %.12f %.12f) N, n (%.12f %.12f %.12f) N m; expected f (%.12f %.12f "
           "%.12f), n (%.12f %.12f %.12f)\n", f[0], f[1], f[2], n[0], n[1], n[2], fe[0], fe[1], fe[2], ne[0], ne[1], ne[2]);
    for (int i = 0; i < 3; i++) {
      TL_CHECK_NEAR(f[i], fe[i], 1e-9, "tip_joint force");
      TL_CHECK_NEAR(n[i], ne[i], 1e-9, "tip_joint moment");
    }
  }
  (void)mt3;
  double all[18];
  ok = tl_system_frame_wrench(s, fj, f, n, &err) == TL_OK && tl_system_joint_wrenches(s, all, 18, &err) == TL_OK;
  if (TL_CHECK(ok, "frame j: %s", err.message))
    for (int i = 0; i < 3; i++)
      TL_CHECK(fabs(f[i] - all[6 + i]) < 1e-12 && fabs(n[i] - all[9 + i]) < 1e-12, "frame j differs from joint 1's wrench");
  /* a user frame on body 1 at (0, 0.2, -0.1): joint 1's wrench moved there */
  double up[3] = {0, 0.2, -0.1};
  ok = tl_system_add_frame(s, "user", 1, up, NULL, &fuser, &err) == TL_OK && tl_system_frame_wrench(s, fuser, f, n, &err) == TL_OK;
  if (TL_CHECK(ok, "user frame: %s", err.message)) {
    const double *F = all + 6, *N = all + 9; /* joint 1 at the origin, world axes at q = 0 */
    double nu[3] = {N[0] - (up[1] * F[2] - up[2] * F[1]), N[1] - (up[2] * F[0] - up[0] * F[2]), N[2] - (up[0] * F[1] - up[1] * F[0])};
    for (int i = 0; i < 3; i++) TL_CHECK(fabs(f[i] - F[i]) < 1e-9 && fabs(n[i] - nu[i]) < 1e-9, "user frame: moved wrench");
  }
  /* an external force on body 1: which link it acted on is not known */
  double Fx[3] = {1, 0, 0};
  ok = tl_system_add_external_force(s, 1, Fx, NULL, &err) == TL_OK && tl_world_step(w, &err) == TL_OK;
  tl_status st = tl_system_frame_wrench(s, ftip, f, n, &err);
  TL_CHECK(ok && st == TL_ERR_UNSUPPORTED, "an external force on the body: status %d", st);
  printf("with an external force on the body: %s\n", err.message);
  TL_CHECK(tl_system_frame_wrench(s, fj, f, n, &err) == TL_OK, "the joint's frame still answers: %s", err.message);
  TL_CHECK(tl_system_frame_wrench(s, 99, f, n, &err) == TL_ERR_ARGUMENT, "frame 99 accepted");
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* A horizontal pendulum resting against its upper limit (gravity turns it toward +q): the limit
 * row carries the whole gravity torque, so the wrench about the axis is the limit's part. */
static void limit_rest(void) {
  static const char *P =
      "<robot name='p'><link name='base'/><link name='a'><inertial><mass value='2'/><origin xyz='0.3 0 0'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j' type='revolute'><parent link='base'/><child link='a'/><axis xyz='0 1 0'/>"
      "<limit lower='-1' upper='0' effort='100' velocity='10'/></joint></robot>";
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  int ok = tl_model_load_urdf_string(P, strlen(P), "p", &lo, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  for (int i = 0; ok && i < 500; i++) ok = tl_world_step(w, &err) == TL_OK;
  double out[12], q[1], u[1];
  ok = ok && tl_system_joint_wrenches(s, out, 12, &err) == TL_OK;
  if (TL_CHECK(ok, "limit: %s", err.message)) {
    tl_system_get_state(s, q, 1, u, 1, NULL);
    double mg = 2 * G;
    printf("pendulum on its upper limit (q %.3e rad): joint f (%.9f %.9f %.9f) N, n (%.9f %.9f %.9f) N m; m g %.4f N, "
           "its torque %.6f N m\n", q[0], out[6], out[7], out[8], out[9], out[10], out[11], mg, 0.3 * mg);
    TL_CHECK(fabs(out[8] - mg) < 1e-6 * mg && fabs(out[6]) < 1e-6 * mg, "limit: joint force (%g, %g)", out[6], out[8]);
    TL_CHECK(fabs(out[10] + 0.3 * mg) < 1e-6 * mg, "limit: the axis moment %.9f, the limit holds %.9f", out[10], -0.3 * mg);
  }
  tl_world_free(w);
  tl_model_free(m);
}

/* On a plugin engine (ODE, when built): TL_ERR_UNSUPPORTED naming the engine. */
static void plugin(void) {
  const tl_engine_api *ode = NULL;
  if (tl_engine_find("ode", &ode, NULL) != TL_OK) {
    printf("the ODE plugin is not built: its refusal is not checked\n");
    return;
  }
  static const char *P =
      "<robot name='p'><link name='base'/><link name='a'><inertial><mass value='1'/><origin xyz='0.3 0 0'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j' type='continuous'><parent link='base'/><child link='a'/><axis xyz='0 1 0'/></joint></robot>";
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  int ok = tl_model_load_urdf_string(P, strlen(P), "p", &lo, &m, &err) == TL_OK &&
           tl_world_create_with_engine(&w, "ode", &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK &&
           tl_world_step(w, &err) == TL_OK;
  if (TL_CHECK(ok, "ode: setup: %s", err.message)) {
    double f[3], n[3];
    tl_status st = tl_system_joint_wrench(s, 1, f, n, &err);
    TL_CHECK(st == TL_ERR_UNSUPPORTED && strstr(err.message, "ode"), "ode: status %d (%s)", st, err.message);
    printf("on ode: %s\n", err.message);
  }
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  const char *shared = tl_test_shared_dir(argc, argv, 1);
  chain(0);
  chain(1);
  errors();
  limit_rest();
  fixed_frames();
  plugin();
  if (argc > 2) { /* the project's own robots: the sprung hinge-2 car (massless compiled bodies) in flight */
    char car[4096];
    snprintf(car, sizeof car, "%s/hinge2_car/hinge2_car_suspension.urdf", argv[2]);
    random_states("hinge2 car in flight", car, 0, TL_BASE_AUTO);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/kuka_iiwa/model.urdf", shared ? shared : "");
  FILE *f = shared ? fopen(path, "r") : NULL;
  if (!f) {
    printf("the shared robot corpus (%s) is absent: the arm, flight and stand parts need it\n", path);
    tl_test_finish();
    return TL_TEST_SKIP_CODE;
  }
  fclose(f);
  random_states("iiwa", path, 1, TL_BASE_FIXED);
  snprintf(path, sizeof path, "%s/anymal_c/urdf/anymal.urdf", shared);
  random_states("anymal_c in flight", path, 0, TL_BASE_AUTO);
  stand(path);
  return tl_test_finish();
}
