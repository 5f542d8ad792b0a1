/* The native engine's step: the pipeline of integrate1, integrate2 and RK4,
 * and nothing else (the objects it steps, their setters and getters are in
 * src/world/; the contact rows and solvers it calls are the contact layer's).
 * Read top to bottom, the stages run in this order:
 *
 * integrate1 (tl_native_integrate1), the state is not changed:
 *  1. dynamics of every system, tl_system_update_dynamics: forward kinematics,
 *     the joint-space mass matrix M (CRBA) and the bias force h (RNEA)
 *     (Featherstone, Rigid Body Dynamics Algorithms, 2008, ch. 4, 5, 6).
 *  2. collision, tl_world_collide: broadphase, narrowphase, contact points,
 *     frames, friction, restitution targets.
 * integrate2 (tl_native_integrate2), semi-implicit Euler on the manifold:
 *  3. per system: M and h brought up to date (the state may have been set
 *     after integrate1), q and u saved for restore(), the PD and spring
 *     errors of the start-of-step q, joint_errors.
 *  4. the active set of saturating PDs, at most 4 passes, each:
 *     a. free velocities, free_step: Euler systems free_velocity ->
 *        control_forces (feed-forward, implicit PD, damping, springs,
 *        external forces) - h, u_free = u + dt M_eff^-1 f with
 *        M_eff = M + dt D + dt^2 K (implicit PD and passive elements: Tan,
 *        Liu, Turk, "Stable proportional-derivative controllers", IEEE CG&A
 *        2011), factored tree-sparse (tl_dyn_factor / tl_dyn_solve); on the
 *        first pass predict_saturation guesses which PDs hit their effort
 *        limit. RK4 systems take their whole contact-free step here,
 *        rk4_step: classical RK4 with Runge-Kutta-Munthe-Kaas stages for the
 *        quaternion joints (rk_accel: ABA; rkmk_tangent: dexp^-1).
 *     b. constraint rows, tl_world_build_constraints: contacts, joint
 *        limits, joint friction, effort-limited PDs, mimic joints, loop
 *        constraints.
 *     c. constraint solve, tl_world_solve_constraints: per-contact cone /
 *        PGS / Dantzig, then the restitution impact pass; u <- u+.
 *     d. applied_forces: the actuator force actually applied over the step.
 *     e. verify_saturation: a PD still beyond its limit joins the active
 *        set and the pass is repeated.
 *  5. positions, q+ = q (+) dt u+ (tl_dyn_integrate_q) for Euler systems;
 *     loop constraints projected back onto C(q) = 0 (tl_loop_project,
 *     post-stabilization: contact/constraint_loop.c);
 *     caches invalidated, external forces cleared (they last one step).
 *  6. divergence check, state_finite: a non-finite state restores every
 *     system to the start of the step (restore) and names the entry.
 *  7. time += dt.
 * A failure at 4 (M_eff or an articulated inertia not positive definite)
 * restores the same way. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "dynamics/joint_space.h"
#include "math/tl_math.h"
#include "native/step.h"
#include "native/native_internal.h"

/* ---------------- integrate1 ---------------- */

tl_status tl_native_integrate1(tl_world *w, tl_error *err) {
  (void)err; /* integrate1 of the native engine cannot fail */
  for (int i = 0; i < w->nsystem; i++) tl_system_update_dynamics(w->systems[i]);
  tl_world_collide(w);
  return TL_OK;
}

/* ---------------- integrate2 ---------------- */

/* PD error of body b's joint. A scalar target outside the joint's position
 * limits is taken at the nearer limit, so the PD never pushes into a limit
 * it cannot pass (the limit row and the PD would otherwise fight). */
void tl_system_pd_error(const tl_system *s, int b, double *e) {
  const tl_model *m = s->m;
  const double *q = s->d.q + m->q_adr[b], *qt = s->q_target + m->q_adr[b];
  tl_joint_type t = m->jnt_type[b];
  int n = m->jnt_nv[b];
  tl_js_error(t, n, q, qt, e);
  if (t == TL_JOINT_SPHERICAL || t == TL_JOINT_FLOATING) return;
  for (int k = 0, v = m->v_adr[b]; k < n; k++, v++) {
    if (qt[k] < m->dof_lower[v]) e[k] = m->dof_lower[v] - q[k];
    else if (qt[k] > m->dof_upper[v]) e[k] = m->dof_upper[v] - q[k];
  }
}

/* Deflection of body b's joint spring from its rest position (spring_mount). */
static void spring_error(const tl_system *s, int b, double *e) {
  const tl_model *m = s->m;
  if (m->jnt_type[b] == TL_JOINT_FLOATING) { /* no spring on the base */
    memset(e, 0, 6 * sizeof(double));
    return;
  }
  const double *mount = m->jnt_type[b] == TL_JOINT_SPHERICAL ? m->jnt_spring_quat + 4 * b
                                                             : m->dof_spring_mount + m->v_adr[b];
  tl_js_error(m->jnt_type[b], m->jnt_nv[b], s->d.q + m->q_adr[b], mount, e);
}

/* The feed-forward force x (finite: its setter checks) within the effort
 * limit +-eff (eff >= 0, possibly infinite): fmax(-eff, fmin(eff, x))
 * without the two libm calls. */
static inline double clamp_effort(double x, double eff) { return x > eff ? eff : x < -eff ? -eff : x; }

/* Generalized force of control, passive elements and external forces, with
 * the terms that the implicit integration moves into M_eff when
 * implicit_dt > 0: tau_ff + Kp (e - dt u) + Kd (u_t - u) - D u
 * - K (q - q_mount + dt u) + ext. PD terms of effort-limited DOFs are left
 * to their constraint rows (Euler) or clamped here (RK4, implicit_dt = 0).
 * tau_ff is clamped to the effort limit. h is not included. */
static void control_forces(const tl_system *s, const double *u, double implicit_dt, double *f) {
  const tl_model *m = s->m;
  const double dt = implicit_dt;
  for (int b = 0; b < m->nbody; b++) {
    double ebuf[6], esbuf[6];
    int v0 = m->v_adr[b];
    const double *e = s->pd_e + v0, *es = s->spring_e + v0;
    if (dt == 0) { /* RK4: q changes between the stages */
      tl_system_pd_error(s, b, ebuf);
      spring_error(s, b, esbuf);
      e = ebuf, es = esbuf;
    }
    for (int k = 0; k < m->jnt_nv[b]; k++) {
      int v = v0 + k;
      double eff = m->dof_effort[v], act = clamp_effort(s->tau_ff[v], eff);
      double spring = m->dof_stiffness[v] * (es[k] - dt * u[v]);
      double pd = s->kp[v] * (e[k] - dt * u[v]) + s->kd[v] * (s->u_target[v] - u[v]);
      if (dt == 0) /* explicit (RK4): saturate */
        act = fmax(-eff, fmin(eff, act + pd));
      else if (tl_system_pd_implicit(s, v))
        act += pd;
      f[v] = act - m->dof_damping[v] * u[v] + spring + s->ext[v];
    }
  }
}

/* Derivative of the state for RK4: du = ABA(q, u, tau(q, u)) into a. */
static int rk_accel(tl_world *w, tl_system *s, double *a) {
  tl_dyn_kinematics(&s->d);
  control_forces(s, s->d.u, 0.0, s->force);
  return tl_dyn_aba(&s->d, w->opt.gravity, s->force, a);
}

/* Tangent velocity of quaternion joints at the stage rotation theta:
 * k = dexp^-1_theta(w) = w - 1/2 theta x w + 1/12 theta x (theta x w) + O(theta^4),
 * enough for fourth order (Munthe-Kaas, "High order Runge-Kutta methods on
 * manifolds", 1999). Other coordinates: k = u. */
static void rkmk_tangent(const tl_model *m, const double *theta, const double *u, double *k) {
  memcpy(k, u, (size_t)m->nv * sizeof(double));
  for (int b = 0; b < m->nbody; b++) {
    int off = tl_js_quat_offset(m->jnt_type[b]);
    if (off < 0) continue;
    int v = m->v_adr[b] + off;
    double t1[3], t2[3];
    tl_v3_cross(t1, theta + v, u + v);
    tl_v3_cross(t2, theta + v, t1);
    for (int i = 0; i < 3; i++) k[v + i] = u[v + i] - 0.5 * t1[i] + t2[i] / 12.0;
  }
}

/* Classical RK4 on the configuration manifold, Runge-Kutta-Munthe-Kaas for
 * the quaternion joints: stage configurations are q0 (+) c dt k_(i-1), with
 * k_i the stage velocity mapped through dexp^-1, and
 * q+ = q0 (+) dt/6 (k1 + 2 k2 + 2 k3 + k4), u+ = u0 + dt/6 (a1 + 2 a2 + 2 a3 + a4).
 * Forces are explicit; contacts are not part of this scheme. */
static int rk4_step(tl_world *w, tl_system *s) {
  const tl_model *m = s->m;
  int nv = m->nv, nq = m->nq;
  double dt = w->opt.dt, *q0 = s->rk, *u0 = q0 + nq, *a = u0 + nv, *k = a + 4 * nv, *theta = s->Jtmp;
  static const double c[4] = {0.0, 0.5, 0.5, 1.0}, wgt[4] = {1.0, 2.0, 2.0, 1.0};
  memcpy(q0, s->d.q, (size_t)nq * sizeof(double));
  memcpy(u0, s->d.u, (size_t)nv * sizeof(double));
  for (int i = 0; i < 4; i++) {
    double *ki = k + i * nv;
    memcpy(s->d.q, q0, (size_t)nq * sizeof(double));
    for (int j = 0; j < nv; j++) {
      theta[j] = i ? c[i] * dt * k[(i - 1) * nv + j] : 0.0;
      s->d.u[j] = i ? u0[j] + c[i] * dt * a[(i - 1) * nv + j] : u0[j];
    }
    if (i) tl_dyn_integrate_q(m, s->d.q, theta, 1.0);
    if (rk_accel(w, s, a + i * nv)) return -1;
    rkmk_tangent(m, theta, s->d.u, s->diag);
    memcpy(ki, s->diag, (size_t)nv * sizeof(double));
  }
  memcpy(s->d.q, q0, (size_t)nq * sizeof(double));
  for (int j = 0; j < nv; j++) {
    double dk = 0, du = 0;
    for (int i = 0; i < 4; i++) {
      dk += wgt[i] * k[i * nv + j];
      du += wgt[i] * a[i * nv + j];
    }
    theta[j] = dt * dk / 6.0;
    s->d.u[j] = u0[j] + dt * du / 6.0;
  }
  tl_dyn_integrate_q(m, s->d.q, theta, 1.0);
  return 0;
}

/* Free velocity of a semi-implicit Euler step: u += dt M_eff^-1 (f - h);
 * leaves the factorization of M_eff in d.LD for the constraint rows. */
static tl_status free_velocity(tl_world *w, tl_system *s, tl_error *err) {
  const tl_model *m = s->m;
  int nv = m->nv;
  double dt = w->opt.dt;
  control_forces(s, s->d.u, dt, s->force);
  for (int k = 0; k < nv; k++) s->force[k] -= s->d.h[k];
  tl_system_implicit_diagonal(s, dt, s->diag);
  if (tl_dyn_factor(&s->d, s->diag))
    return tl_error_set(err, TL_ERR_DIVERGED, m->source, 0, NULL,
                        "system %d ('%s'): the effective mass matrix is not positive definite at t = %g s",
                        s->index, m->name, w->time);
  tl_dyn_solve(&s->d, s->force); /* force <- M_eff^-1 f */
  for (int k = 0; k < nv; k++) s->d.u[k] += dt * s->force[k];
  memcpy(s->u_free, s->d.u, (size_t)nv * sizeof(double));
  return TL_OK;
}

/* Actuator force actually applied over the step: tau_ff (clamped) plus the
 * implicit PD evaluated at the end-of-step velocity, or the impulse of the
 * effort-limited PD row / dt. */
static void applied_forces(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    const tl_model *m = s->m;
    for (int b = 0; b < m->nbody; b++) {
      double ebuf[6];
      const double *e = s->pd_e + m->v_adr[b];
      if (s->integrator == TL_INTEGRATOR_RK4) { /* its q is already the end of the step's */
        tl_system_pd_error(s, b, ebuf);
        e = ebuf;
      }
      for (int k = 0; k < m->jnt_nv[b]; k++) {
        int v = m->v_adr[b] + k;
        double eff = m->dof_effort[v], u = s->d.u[v];
        double pd = s->kp[v] * (e[k] - w->opt.dt * u) + s->kd[v] * (s->u_target[v] - u);
        s->tau_applied[v] = clamp_effort(s->tau_ff[v], eff) + (tl_system_pd_implicit(s, v) ? pd : 0.0);
      }
    }
  }
  for (int i = 0; i < nat->nblock; i++) {
    const tl_block *b = &nat->blocks[i];
    if (b->kind == TL_ROW_BOX && b->dof >= 0 && !tl_system_pd_implicit(w->systems[b->sa], b->dof) &&
        (w->systems[b->sa]->kp[b->dof] > 0 || w->systems[b->sa]->kd[b->dof] > 0) && b->R > 0)
      w->systems[b->sa]->tau_applied[b->dof] += b->lambda[0] / w->opt.dt;
  }
}

static int state_finite(const tl_system *s) {
  for (int i = 0; i < s->m->nq; i++)
    if (!isfinite(s->d.q[i])) return 0;
  for (int i = 0; i < s->m->nv; i++)
    if (!isfinite(s->d.u[i])) return 0;
  return 1;
}

static void restore(tl_world *w) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    memcpy(s->d.q, s->q_prev, (size_t)s->m->nq * sizeof(double));
    memcpy(s->d.u, s->u_prev, (size_t)s->m->nv * sizeof(double));
    s->kin_valid = s->dyn_valid = 0;
  }
}

/* The PD and spring errors of every joint at the start-of-step q, kept in
 * s->pd_e and s->spring_e for the whole of integrate2 (q changes only at its
 * end; RK4 systems recompute theirs at each stage). A joint with no gain (no
 * stiffness) gets zeros: they only ever multiply that gain (a floating base
 * without a PD pays no quaternion logarithm). */
static void joint_errors(tl_system *s) {
  const tl_model *m = s->m;
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], n = m->jnt_nv[b], gain = 0, stiff = 0;
    for (int k = 0; k < n; k++) gain |= s->kp[v0 + k] != 0, stiff |= m->dof_stiffness[v0 + k] != 0;
    if (gain)
      tl_system_pd_error(s, b, s->pd_e + v0);
    else
      memset(s->pd_e + v0, 0, (size_t)n * sizeof(double));
    if (stiff)
      spring_error(s, b, s->spring_e + v0);
    else
      memset(s->spring_e + v0, 0, (size_t)n * sizeof(double));
  }
}

/* Active set of saturating PDs, first guess: DOFs whose implicit PD force at
 * the free velocity would exceed the effort limit. Returns 1 if it changed. */
static int predict_saturation(tl_world *w, tl_system *s) {
  const tl_model *m = s->m;
  int changed = 0;
  for (int b = 0; b < m->nbody; b++) {
    if (m->jnt_type[b] == TL_JOINT_FLOATING || m->jnt_nv[b] == 0) continue;
    const double *e = s->pd_e + m->v_adr[b];
    for (int k = 0; k < m->jnt_nv[b]; k++) {
      int v = m->v_adr[b] + k;
      double eff = m->dof_effort[v], u = s->u_free[v];
      if (!isfinite(eff) || s->pd_row[v] || (s->kp[v] == 0 && s->kd[v] == 0)) continue;
      double tau = clamp_effort(s->tau_ff[v], eff) + s->kp[v] * (e[k] - w->opt.dt * u) + s->kd[v] * (s->u_target[v] - u);
      if (fabs(tau) > eff) s->pd_row[v] = changed = 1;
    }
  }
  return changed;
}

/* After the solve: implicit PDs that still exceed their limit join the active set. */
static int verify_saturation(tl_world *w) {
  int changed = 0;
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    for (int v = 0; v < s->m->nv; v++) {
      double eff = s->m->dof_effort[v];
      if (!s->pd_row[v] && isfinite(eff) && s->m->jnt_type[s->m->dof_body[v]] != TL_JOINT_FLOATING &&
          fabs(s->tau_applied[v]) > eff * (1 + 1e-12))
        s->pd_row[v] = changed = 1;
    }
  }
  return changed;
}

/* Free velocities of every system (RK4 systems take their whole step). */
static tl_status free_step(tl_world *w, int first_pass, tl_error *err) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    memcpy(s->d.u, s->u_prev, (size_t)s->m->nv * sizeof(double));
    if (s->integrator == TL_INTEGRATOR_RK4) {
      if (!first_pass) continue;
      memcpy(s->d.q, s->q_prev, (size_t)s->m->nq * sizeof(double));
      if (rk4_step(w, s))
        return tl_error_set(err, TL_ERR_DIVERGED, s->m->source, 0, NULL,
                            "system %d ('%s'): an articulated inertia is not positive definite at t = %g s",
                            i, s->m->name, w->time);
      continue;
    }
    tl_status st = free_velocity(w, s, err);
    while (!st && first_pass && predict_saturation(w, s)) {
      memcpy(s->d.u, s->u_prev, (size_t)s->m->nv * sizeof(double));
      st = free_velocity(w, s, err);
    }
    if (st) return st;
  }
  return TL_OK;
}

tl_status tl_native_integrate2(tl_world *w, tl_error *err) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    tl_system_update_dynamics(s);
    memcpy(s->q_prev, s->d.q, (size_t)s->m->nq * sizeof(double));
    memcpy(s->u_prev, s->d.u, (size_t)s->m->nv * sizeof(double));
    memset(s->pd_row, 0, (size_t)s->m->nv);
    joint_errors(s);
  }
  tl_status st = TL_OK;
  for (int pass = 0; pass < 4 && !st; pass++) {
    st = free_step(w, pass == 0, err);
    if (st) break;
    tl_world_build_constraints(w);
    tl_world_solve_constraints(w);
    applied_forces(w);
    if (!verify_saturation(w)) break;
  }
  if (st) {
    restore(w);
    return st;
  }
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    if (s->integrator == TL_INTEGRATOR_EULER) tl_dyn_integrate_q(s->m, s->d.q, s->d.u, w->opt.dt);
  }
  if (w->nconstraint) tl_loop_project(w); /* loop constraints: post-step projection (contact/constraint_loop.c) */
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    s->kin_valid = s->dyn_valid = 0;
    memset(s->ext, 0, (size_t)s->m->nv * sizeof(double)); /* external forces last one step */
    if (!state_finite(s) && !st) {
      int vel = 0, idx = 0;
      char what[160] = "the state";
      if (tl_system_find_nonfinite(s, INFINITY, &vel, &idx, NULL))
        tl_system_state_entry_name(s, vel, idx, what, sizeof what);
      st = tl_error_set(err, TL_ERR_DIVERGED, s->m->source, 0, NULL,
                        "system %d ('%s') diverged at t = %g s: %s became non-finite; every "
                        "system was restored to the start of the step", i, s->m->name, w->time, what);
    }
  }
  if (st) {
    restore(w);
    return st;
  }
  w->time += w->opt.dt;
  return TL_OK;
}
