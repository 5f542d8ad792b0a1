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

/* out = (R^T f, R^T (n_O - p x f)): the spatial force (n_O, f) about the world origin moved to the
 * point p and the axes R (world from frame). */
static void to_frame(const double F[6], const double p[3], const double R[9], double out[6]) {
  double np[3], t[3];
  tl_v3_cross(t, p, F + 3);
  tl_v3_sub(np, F, t);
  for (int i = 0; i < 3; i++) {
    out[i] = R[i] * F[3] + R[3 + i] * F[4] + R[6 + i] * F[5];
    out[3 + i] = R[i] * np[0] + R[3 + i] * np[1] + R[6 + i] * np[2];
  }
}

/* World pose of frame f at the kinematics k. */
static void frame_pose(const tl_sysdata *k, const tl_model *m, int f, double p[3], double R[9]) {
  int b = m->frame_body[f];
  tl_m3_mulv(p, k->xrot + 9 * b, m->frame_pos + 3 * f);
  tl_v3_add(p, p, k->xpos + 3 * b);
  tl_m3_mul(R, k->xrot + 9 * b, m->frame_rot + 9 * f);
}

/* Index of the URDF link named `name`, or -1. */
static int link_index(const tl_model *m, const char *name) {
  for (int l = 0; l < m->nlink; l++)
    if (strcmp(m->link_name[l], name) == 0) return l;
  return -1;
}

/* The child link of frame f's joint (-1 if none is known). */
static int frame_link(const tl_model *m, int f) { return link_index(m, m->frame_link[f]); }

/* 1 if link l (-1: none) is the first link of its body (the child of its movable joint, or the root). */
static int body_root_link(const tl_model *m, int l) {
  return l < 0 || m->link_parent[l] < 0 || m->link_body[m->link_parent[l]] != m->link_body[l];
}

/* 1 if link l is link L or lies beyond it in L's body. */
static int beyond(const tl_model *m, int l, int L) {
  for (int b = m->link_body[L]; l >= 0 && m->link_body[l] == b; l = m->link_parent[l])
    if (l == L) return 1;
  return 0;
}

/* The wrench across fixed joint frame f inside body b (its child link L not b's first): what the
 * links of b from L on weigh and accelerate (each link's inertia at b's motion), what they pass to
 * the child bodies hanging from them (their joints' wrenches: k->cfrc after the children pass),
 * less the contact forces on their geoms.
 * External forces of tl_system_add_external_* and loop constraints act on a body without saying
 * on which of its links: with any on b, TL_ERR_UNSUPPORTED. */
static tl_status fixed_frame(tl_world *w, tl_system *s, const tl_sysdata *k, int f, double out[6], tl_error *err) {
  const tl_model *m = s->m;
  const int nb = m->nbody, L = frame_link(m, f), b = m->link_body[L];
  int lost = 0;
  const double *ext = tl_system_wrench_last_external(s, &lost);
  int acted = 0;
  for (int i = 0; ext && i < 6; i++) acted |= ext[6 * b + i] != 0;
  for (int c = 0; c < w->nconstraint; c++)
    for (int side = 0; side < 2; side++)
      acted |= w->constraints[c].sys[side] == s->index && w->constraints[c].body[side] == b;
  if (acted)
    return tl_error_set(err, TL_ERR_UNSUPPORTED, m->source, 0, "frame wrench",
                        "system %d ('%s'): external forces or loop constraints acted on body '%s' in the last step: "
                        "which of its links they acted on is not kept, so the wrench across fixed joint '%s' "
                        "inside it cannot be told", s->index, m->name, m->body_name[b], m->frame_name[f]);
  double F[6] = {0, 0, 0, 0, 0, 0};
  const double *a = k->cacc + 6 * b, *v = k->cvel + 6 * b, *xr = k->xrot + 9 * b, *xp = k->xpos + 3 * b;
  for (int l = 0; l < m->nlink; l++) { /* the links beyond L: I a + v x* I v at the body's motion */
    if (m->link_body[l] != b || !beyond(m, l, L) || !(m->link_mass[l] > 0)) continue;
    double c[3], R[9], Ic[9], t[3], Isp[10], Ia[6], Iv[6], vIv[6];
    tl_m3_mulv(t, m->link_rot + 9 * l, m->link_com + 3 * l);
    tl_v3_add(t, t, m->link_pos + 3 * l);
    tl_m3_mulv(c, xr, t);
    tl_v3_add(c, c, xp);
    tl_m3_mul(R, xr, m->link_rot + 9 * l);
    tl_m3_rotate_tensor(Ic, R, m->link_inertia + 9 * l);
    tl_spi_from_body(Isp, m->link_mass[l], c, Ic);
    tl_spi_mulv(Ia, Isp, a);
    tl_spi_mulv(Iv, Isp, v);
    tl_sp_cross_force(vIv, v, Iv);
    for (int i = 0; i < 6; i++) F[i] += Ia[i] + vIv[i];
  }
  for (int c = b + 1; c < nb; c++) { /* child bodies hanging from those links */
    if (m->parent[c] != b) continue;
    int rl = -1;
    for (int l = 0; l < m->nlink && rl < 0; l++)
      if (m->link_body[l] == c && body_root_link(m, l)) rl = l;
    if (rl >= 0 && m->link_parent[rl] >= 0 && beyond(m, m->link_parent[rl], L))
      for (int i = 0; i < 6; i++) F[i] += k->cfrc[6 * c + i];
  }
  const tl_native *nat = tl_native_of(w);
  for (int c = 0; c < nat->ncontact; c++) { /* contacts on the geoms of those links */
    const tl_wcontact *ct = &nat->contacts[c];
    double G[3] = {0, 0, 0};
    for (int r = 0; r < 3; r++) tl_v3_addscl(G, ct->frame + 3 * r, (ct->lambda[r] + ct->impact[r]) / w->opt.dt);
    if (ct->sa == s->index && ct->ba == b && beyond(m, link_index(m, m->geom_link[ct->ga]), L))
      sub_point_force(F, G, ct->pos, NULL, 1.0);
    if (ct->sb == s->index && ct->bb == b && beyond(m, link_index(m, m->geom_link[ct->gb]), L))
      sub_point_force(F, G, ct->pos, NULL, -1.0);
  }
  double p[3], R[9];
  frame_pose(k, m, f, p, R);
  to_frame(F, p, R, out);
  return TL_OK;
}

tl_status tl_native_joint_wrenches(tl_world *w, tl_system *s, int frame, double *out, tl_error *err) {
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
  if (frame >= 0 && !body_root_link(m, frame_link(m, frame))) /* a fixed joint's frame inside its body */
    return fixed_frame(w, s, &k, frame, out, err);
  if (frame >= 0) { /* a movable (or the root) joint's frame: its body's wrench, in the frame */
    int b = m->frame_body[frame];
    double p[3], R[9];
    frame_pose(&k, m, frame, p, R);
    to_frame(k.cfrc + 6 * b, p, R, out);
    return TL_OK;
  }
  for (int b = 0; b < nb; b++) to_frame(k.cfrc + 6 * b, k.xpos + 3 * b, k.xrot + 9 * b, out + 6 * b);
  return TL_OK;
}
