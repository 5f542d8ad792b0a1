/* The native engine's joint reaction wrenches (the engine table's
 * joint_wrenches, tl_system_joint_wrench in talus/system.h): what each joint
 * transmitted over the last step, from that step's own quantities, computed
 * on request only (the step does nothing for it).
 *
 * The semi-implicit step (step.c) moved the system from (q_prev, u_prev) to
 * u+ with  M(q_prev) (u+ - u_prev)/dt + h(q_prev, u_prev) = tau + J^T F / dt,
 * where tau holds the actuators (PD at u+, saturated or not), springs,
 * damping, joint friction, limit and mimic rows, and J^T F the contact
 * impulses, the external forces and the loop constraints. So the recursive
 * Newton-Euler backward pass (Featherstone, Rigid Body Dynamics Algorithms,
 * 2008, Table 5.1) at the step's start state with du = (u+ - u_prev)/dt,
 *   f_b = I_b a_b + v_b x* I_b v_b - f_ext,b + sum over the children c of f_c,
 * with gravity as the fictitious base acceleration -g (sec. 5.3) and f_ext,b
 * the contact forces (impulse / dt at their points, as tl_world_contact
 * reports them), the user's external forces of that step and the loop
 * constraints' wrenches on body b, gives the force
 * f_b the parent exerts on body b through its joint, consistent with the
 * step to rounding: S_b^T f_b = tau_b - (rotor inertia) du_b. The spatial
 * algebra is dynamics/'s (world axes about the world origin); each f_b is
 * then moved to the joint frame on the child side (the body frame at
 * q_prev): force R^T f, moment R^T (n_O - p x f).
 *
 * Loop constraints (issue 23 §1, talus/constraint.h) enter as external
 * forces: each tl_constraint's force and torque (world, the engine's output
 * of the last step: impulse / dt, on body 1 about frame 1's origin) act on
 * body 1 at frame 1's origin placed at the step's start pose, the opposite
 * wrench on body 2 about the same point (for a loop across two systems,
 * about body 2's frame 2 origin, which coincides with frame 1's for ball,
 * hinge and weld and lies on the force's line for distance). The loop solve only has to keep
 * those two fields; nothing else is needed here. Its post-step position
 * projection moves q off q_prev (+) dt u+ by the drift it removes, so the
 * check that q was not set since the step is relaxed to 1e-6 (m or rad,
 * relative above 1) for a system that a loop constraint touches. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "native/native_internal.h"
#include "native/step.h"

/* f -= sign (p x F + T, F): the force F at the world point p plus the moment T (NULL: none). */
static void sub_point_force(double f[6], const double F[3], const double p[3], const double *T, double sign) {
  double t[3];
  tl_v3_cross(t, p, F);
  for (int i = 0; i < 3; i++) f[i] -= sign * (t[i] + (T ? T[i] : 0.0)), f[3 + i] -= sign * F[i];
}

/* 1 if a loop constraint of the world acts on system si. */
static int in_loop(const tl_world *w, int si) {
  for (int c = 0; c < w->nconstraint; c++)
    if (w->constraints[c].sys[0] == si || w->constraints[c].sys[1] == si) return 1;
  return 0;
}

/* q equals the integrator's q_prev (+) dt u+: bit for bit, or within 1e-6 (relative above 1) when
 * a loop's projection may have moved it. */
static int q_consistent(const tl_model *m, const double *q, const double *qchk, int loose) {
  if (!loose) return memcmp(qchk, q, (size_t)m->nq * sizeof(double)) == 0;
  for (int i = 0; i < m->nq; i++)
    if (!(fabs(q[i] - qchk[i]) <= 1e-6 * fmax(1.0, fabs(q[i])))) return 0;
  return 1;
}

tl_status tl_native_joint_wrenches(tl_world *w, tl_system *s, double *out, tl_error *err) {
  const tl_model *m = s->m;
  const int nb = m->nbody, nv = m->nv, nq = m->nq;
  const double dt = w->opt.dt;
  if (!(w->time > 0))
    return tl_error_set(err, TL_ERR_INVALID, m->source, 0, "joint wrench",
                        "system %d ('%s'): no step yet: joint wrenches are those of the last step", s->index, m->name);
  double *ws = s->wrench_ws + 6 * (size_t)nb; /* the head is tl_system_joint_wrench's */
  double *qchk = ws, *du = qchk + nq;
  tl_sysdata k = s->d; /* the system's data with the kinematic arrays of the step's start */
  double *p = du + nv;
  k.xpos = p, p += 3 * nb;
  k.xrot = p, p += 9 * nb;
  k.xjpos = p, p += 3 * nb;
  k.xjrot = p, p += 9 * nb;
  k.xcom = p, p += 3 * nb;
  k.cinert = p, p += 10 * nb;
  k.cvel = p, p += 6 * nb;
  k.cacc = p, p += 6 * nb;
  k.cfrc = p, p += 6 * nb;
  k.cdof = p, p += 6 * nv;
  k.cdof_dot = p;
  if (s->integrator == TL_INTEGRATOR_EULER) { /* q = q_prev (+) dt u+ bit for bit, or q was set since */
    memcpy(qchk, s->q_prev, (size_t)nq * sizeof(double));
    tl_dyn_integrate_q(m, qchk, s->d.u, dt);
    if (!q_consistent(m, s->d.q, qchk, in_loop(w, s->index)))
      return tl_error_set(err, TL_ERR_INVALID, m->source, 0, "joint wrench",
                          "system %d ('%s'): its state or the time step changed since the last step: joint "
                          "wrenches are those of the last step, ask right after it", s->index, m->name);
  }
  int lost = 0;
  const double *ext = tl_system_wrench_last_external(s, &lost);
  if (lost)
    return tl_error_set(err, TL_ERR_UNSUPPORTED, m->source, 0, "joint wrench",
                        "system %d ('%s'): the last step's external forces were set as one generalized force "
                        "(a snapshot restore or an engine adapter), without the points they act at",
                        s->index, m->name);
  for (int i = 0; i < nv; i++) du[i] = (s->d.u[i] - s->u_prev[i]) / dt;
  k.q = s->q_prev;
  k.u = s->u_prev;
  tl_dyn_kinematics(&k);
  tl_dyn_accelerations(&k, w->opt.gravity, du, 1);
  for (int b = 0; b < nb; b++) { /* I a + v x* I v - f_ext */
    double *f = k.cfrc + 6 * b, Iv[6], t[6];
    const double *v = k.cvel + 6 * b;
    tl_spi_mulv(f, k.cinert + 10 * b, k.cacc + 6 * b);
    tl_spi_mulv(Iv, k.cinert + 10 * b, v);
    tl_sp_cross_force(t, v, Iv);
    for (int i = 0; i < 6; i++) f[i] += t[i] - (ext ? ext[6 * b + i] : 0.0);
  }
  const tl_native *nat = tl_native_of(w);
  for (int c = 0; c < nat->ncontact; c++) { /* contact forces: impulse / dt at the contact point */
    const tl_wcontact *ct = &nat->contacts[c];
    if (ct->sa != s->index && ct->sb != s->index) continue;
    double F[3] = {0, 0, 0};
    for (int r = 0; r < 3; r++) tl_v3_addscl(F, ct->frame + 3 * r, (ct->lambda[r] + ct->impact[r]) / dt);
    if (ct->sa == s->index) sub_point_force(k.cfrc + 6 * ct->ba, F, ct->pos, NULL, 1.0);
    if (ct->sb == s->index) sub_point_force(k.cfrc + 6 * ct->bb, F, ct->pos, NULL, -1.0);
  }
  for (int c = 0; c < w->nconstraint; c++) { /* loop constraints: (F, T) on body 1 about frame 1's origin */
    const tl_constraint *lc = &w->constraints[c];
    int side = lc->sys[0] == s->index ? 0 : lc->sys[1] == s->index ? 1 : -1;
    if (side < 0) continue;
    double o[3]; /* frame 1's origin at the step's start; across systems, body 2's own frame 2 origin, */
    tl_m3_mulv(o, k.xrot + 9 * lc->body[side], lc->pos[side]); /* the same point for ball, hinge and */
    tl_v3_add(o, o, k.xpos + 3 * lc->body[side]);              /* weld, on the force's line for distance */
    if (lc->sys[0] == s->index) sub_point_force(k.cfrc + 6 * lc->body[0], lc->force, o, lc->torque, 1.0);
    if (lc->sys[1] == s->index) sub_point_force(k.cfrc + 6 * lc->body[1], lc->force, o, lc->torque, -1.0);
  }
  for (int b = nb - 1; b > 0; b--) /* children into their parents */
    for (int i = 0; i < 6; i++) k.cfrc[6 * m->parent[b] + i] += k.cfrc[6 * b + i];
  for (int b = 0; b < nb; b++) { /* to the child's joint frame: the body frame at q_prev */
    const double *f = k.cfrc + 6 * b, *R = k.xrot + 9 * b;
    double np[3], t[3];
    tl_v3_cross(t, k.xpos + 3 * b, f + 3);
    tl_v3_sub(np, f, t);
    for (int i = 0; i < 3; i++) {
      out[6 * b + i] = R[i] * f[3] + R[3 + i] * f[4] + R[6 + i] * f[5];
      out[6 * b + 3 + i] = R[i] * np[0] + R[3 + i] * np[1] + R[6 + i] * np[2];
    }
  }
  return TL_OK;
}
