/* tl_world: objects, and the two-phase step (DESIGN.md, "The step").
 *
 * integrate1: kinematics, M and h (CRBA, RNEA), ground collision, contact
 *             frames and Jacobians.
 * integrate2: implicit PD / damping / springs in the effective mass
 *             M_eff = M + dt D + dt^2 K, the contact solve on the Delassus
 *             matrix G = J M_eff^-1 J^T with the exact Coulomb cone (Hwangbo,
 *             Lee, Hutter, RA-L 2018), u+ = u + M_eff^-1 (dt f + J^T lambda),
 *             q+ = q (+) dt u+ (semi-implicit Euler on the manifold). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "world/world_internal.h"

tl_status tl_world_create(tl_world **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  tl_world *w = calloc(1, sizeof(*w));
  *out = NULL;
  if (!w) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  w->dt = 1e-3;
  tl_v3_set(w->gravity, 0, 0, -9.81);
  w->contact_margin = 5e-3;
  w->erp = 0.2;
  w->slop = 1e-4;
  w->max_recovery_speed = 1.0;
  w->solver_max_iter = 200;
  w->solver_tol = 1e-12;
  *out = w;
  return TL_OK;
}

void tl_world_free(tl_world *w) {
  if (!w) return;
  for (int i = 0; i < w->nsystem; i++) tl_system_destroy(w->systems[i]);
  free(w->systems);
  free(w);
}

tl_status tl_world_set_timestep(tl_world *w, double dt, tl_error *err) {
  if (!(dt > 0) || !isfinite(dt))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "dt", "time step %g s: expected a finite number > 0", dt);
  w->dt = dt;
  return TL_OK;
}

double tl_world_timestep(const tl_world *w) { return w->dt; }
double tl_world_time(const tl_world *w) { return w->time; }

tl_status tl_world_set_gravity(tl_world *w, const double g[3], tl_error *err) {
  if (!g || !tl_v3_isfinite(g))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "gravity", "gravity must be 3 finite numbers");
  tl_v3_copy(w->gravity, g);
  for (int i = 0; i < w->nsystem; i++) w->systems[i]->dyn_valid = 0;
  return TL_OK;
}

tl_status tl_world_add_ground(tl_world *w, double height, double mu, tl_error *err) {
  if (!isfinite(height) || !isfinite(mu) || mu < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "ground",
                        "ground height %g m and friction %g: expected finite numbers, friction >= 0",
                        height, mu);
  w->has_ground = 1;
  w->ground_height = height;
  w->ground_mu = mu;
  return TL_OK;
}

tl_status tl_world_add_system(tl_world *w, const tl_model *model, tl_system **out, tl_error *err) {
  if (!model) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if (w->nsystem == w->cap_system) {
    int cap = w->cap_system ? 2 * w->cap_system : 4;
    tl_system **grown = realloc(w->systems, (size_t)cap * sizeof(*grown));
    if (!grown) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    w->systems = grown;
    w->cap_system = cap;
  }
  tl_system *s = tl_system_create(w, model, w->nsystem);
  if (!s) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory creating system '%s'", model->name);
  tl_system_update_dynamics(s);
  int bad = tl_dyn_factor(&s->d, NULL);
  if (bad) {
    int b = model->dof_body[bad - 1];
    tl_status st = tl_error_set(err, TL_ERR_INVALID, model->source, model->jnt_line[b], "joint",
                                "the mass matrix of '%s' is singular at the reference configuration "
                                "(DOF %d, joint '%s' of link '%s'): a body of this %s-base robot has "
                                "too little mass or inertia to move it (load it with a fixed base or "
                                "give its links mass)", model->name, bad - 1, model->joint_name[b],
                                model->body_name[b], model->base == TL_BASE_FLOATING ? "floating" : "fixed");
    tl_system_destroy(s);
    return st;
  }
  w->systems[w->nsystem++] = s;
  if (out) *out = s;
  return TL_OK;
}

/* ---------------- integrate1 ---------------- */

/* Contact Jacobian rows (t1, t2, n) of contact k: only ancestor DOFs. */
static void contact_jacobian(tl_system *s, int k) {
  const tl_model *m = s->m;
  const tl_contact *c = &s->contacts[k];
  int nv = m->nv, b = c->body;
  double *J = s->J + 3 * (size_t)k * (size_t)nv;
  memset(J, 0, 3 * (size_t)nv * sizeof(double));
  while (b > 0 && m->jnt_nv[b] == 0) b = m->parent[b];
  for (int j = m->jnt_nv[b] ? m->v_adr[b] + m->jnt_nv[b] - 1 : -1; j >= 0; j = m->dof_parent[j]) {
    const double *S = s->d.cdof + 6 * j;
    double lin[3];
    tl_v3_cross(lin, S, c->pos);
    tl_v3_add(lin, lin, S + 3);
    for (int r = 0; r < 3; r++) J[r * nv + j] = tl_v3_dot(c->frame + 3 * r, lin);
  }
}

static void detect_contacts(tl_world *w, tl_system *s) {
  const tl_model *m = s->m;
  s->ncontact = 0;
  if (!w->has_ground || s->integrator == TL_INTEGRATOR_RK4) return;
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_body[g] == 0 && m->base == TL_BASE_FIXED) continue; /* welded to the world */
    int n = tl_collide_plane(m, &s->d, g, w->ground_height, w->contact_margin, s->contacts + s->ncontact);
    for (int i = 0; i < n; i++) {
      tl_contact *c = &s->contacts[s->ncontact + i];
      c->mu = sqrt(m->geom_friction[g] * w->ground_mu);
      double phi = -c->depth;
      c->vtarget = phi > 0 ? -phi / w->dt
                           : fmin(w->erp * fmax(c->depth - w->slop, 0.0) / w->dt, w->max_recovery_speed);
      contact_jacobian(s, s->ncontact + i);
    }
    s->ncontact += n;
  }
}

tl_status tl_world_integrate1(tl_world *w, tl_error *err) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    tl_system_update_dynamics(s);
    detect_contacts(w, s);
  }
  return TL_OK;
}

/* ---------------- integrate2 ---------------- */

/* Position error of the PD target for the DOFs of body b (velocity dimension). */
static void pd_position_error(const tl_system *s, int b, double *e) {
  const tl_model *m = s->m;
  const double *q = s->d.q + m->q_adr[b], *qt = s->q_target + m->q_adr[b];
  if (m->jnt_type[b] == TL_JOINT_SPHERICAL) {
    /* rotation from q to q_target in the parent joint frame: log(qt * q^-1) */
    double qi[4] = {q[0], -q[1], -q[2], -q[3]}, dq[4];
    tl_quat_mul(dq, qt, qi);
    tl_quat_log(e, dq);
  } else if (m->jnt_type[b] == TL_JOINT_FLOATING) {
    memset(e, 0, 6 * sizeof(double)); /* base gains are zero */
  } else {
    for (int k = 0; k < m->jnt_nv[b]; k++) e[k] = qt[k] - q[k];
  }
}

/* Generalized force of control and passive elements, with the terms the
 * implicit integration moves to the left-hand side when `implicit_dt` > 0:
 * tau_ff - h + Kp (e - dt u) + Kd (u_t - u) - D u - K (q - q_mount + dt u).
 * With implicit_dt = 0 the same forces, explicit (RK4). h is not included. */
static void control_forces(const tl_system *s, const double *u, double implicit_dt, double *f) {
  const tl_model *m = s->m;
  const double dt = implicit_dt;
  for (int b = 0; b < m->nbody; b++) {
    double e[6];
    int v0 = m->v_adr[b];
    pd_position_error(s, b, e);
    for (int k = 0; k < m->jnt_nv[b]; k++) {
      int v = v0 + k;
      double spring = 0;
      if (m->jnt_nv[b] == 1 && m->dof_stiffness[v] > 0)
        spring = -m->dof_stiffness[v] * (s->d.q[m->q_adr[b]] - m->dof_spring_mount[v] + dt * u[v]);
      f[v] = s->tau_ff[v] + s->kp[v] * (e[k] - dt * u[v]) + s->kd[v] * (s->u_target[v] - u[v]) -
             m->dof_damping[v] * u[v] + spring;
    }
  }
}

/* Contact impulses on top of u_free (in s->d.u); adds M_eff^-1 J^T lambda. */
static void solve_contacts(tl_world *w, tl_system *s) {
  int nc = s->ncontact, nv = s->m->nv, n = 3 * nc;
  if (nc == 0) return;
  for (int r = 0; r < n; r++) {
    double *x = s->MinvJT + (size_t)r * (size_t)nv;
    memcpy(x, s->J + (size_t)r * (size_t)nv, (size_t)nv * sizeof(double));
    tl_dyn_solve(&s->d, x);
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, nv, 1.0, s->J, nv, s->MinvJT, nv,
              0.0, s->G, n);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, n, nv, 1.0, s->J, nv, s->d.u, 1, 0.0, s->b, 1);
  for (int k = 0; k < nc; k++) {
    s->b[3 * k + 2] -= s->contacts[k].vtarget;
    s->mu[k] = s->contacts[k].mu;
  }
  memset(s->lambda, 0, (size_t)n * sizeof(double));
  tl_cone_solve(nc, s->G, s->b, s->mu, s->lambda, s->v, w->solver_max_iter, w->solver_tol, &s->stats);
  cblas_dgemv(CblasRowMajor, CblasTrans, n, nv, 1.0, s->MinvJT, nv, s->lambda, 1, 1.0, s->d.u, 1);
  for (int k = 0; k < nc; k++) memcpy(s->contacts[k].lambda, s->lambda + 3 * k, 3 * sizeof(double));
}

static int state_finite(const tl_system *s) {
  for (int i = 0; i < s->m->nq; i++)
    if (!isfinite(s->d.q[i])) return 0;
  for (int i = 0; i < s->m->nv; i++)
    if (!isfinite(s->d.u[i])) return 0;
  return 1;
}

/* Derivative of the state for RK4: du = ABA(q, u, tau(q, u)) into a. */
static int rk_accel(tl_world *w, tl_system *s, double *a) {
  tl_dyn_kinematics(&s->d);
  control_forces(s, s->d.u, 0.0, s->force);
  return tl_dyn_aba(&s->d, w->gravity, s->force, a);
}

/* Classical RK4 on the configuration manifold: stage configurations are
 * q0 (+) c dt v_i, and q+ = q0 (+) dt/6 (v1 + 2 v2 + 2 v3 + v4), with the
 * tangent increments of quaternion joints composed through the exponential
 * map (tl_dyn_integrate_q). Contacts are not part of this scheme. */
static int rk4_step(tl_world *w, tl_system *s) {
  const tl_model *m = s->m;
  int nv = m->nv, nq = m->nq;
  double dt = w->dt, *q0 = s->rk, *u0 = q0 + nq, *a = u0 + nv, *v = a + 4 * nv;
  static const double c[4] = {0.0, 0.5, 0.5, 1.0}, wgt[4] = {1.0, 2.0, 2.0, 1.0};
  memcpy(q0, s->d.q, (size_t)nq * sizeof(double));
  memcpy(u0, s->d.u, (size_t)nv * sizeof(double));
  for (int i = 0; i < 4; i++) {
    double *vi = v + i * nv, *ai = a + i * nv;
    for (int k = 0; k < nv; k++) vi[k] = i ? u0[k] + c[i] * dt * a[(i - 1) * nv + k] : u0[k];
    memcpy(s->d.q, q0, (size_t)nq * sizeof(double));
    if (i) tl_dyn_integrate_q(m, s->d.q, v + (i - 1) * nv, c[i] * dt);
    memcpy(s->d.u, vi, (size_t)nv * sizeof(double));
    if (rk_accel(w, s, ai)) return -1;
  }
  memcpy(s->d.q, q0, (size_t)nq * sizeof(double));
  for (int k = 0; k < nv; k++) {
    double dv = 0, du = 0;
    for (int i = 0; i < 4; i++) {
      dv += wgt[i] * v[i * nv + k];
      du += wgt[i] * a[i * nv + k];
    }
    s->force[k] = dv / 6.0; /* mean tangent velocity */
    s->d.u[k] = u0[k] + dt * du / 6.0;
  }
  tl_dyn_integrate_q(m, s->d.q, s->force, dt);
  return 0;
}

static tl_status euler_step(tl_world *w, tl_system *s, tl_error *err);

static tl_status step_system(tl_world *w, tl_system *s, tl_error *err) {
  const tl_model *m = s->m;
  int nv = m->nv;
  tl_system_update_dynamics(s);
  memcpy(s->q_prev, s->d.q, (size_t)m->nq * sizeof(double));
  memcpy(s->u_prev, s->d.u, (size_t)nv * sizeof(double));
  if (s->integrator == TL_INTEGRATOR_RK4) {
    if (rk4_step(w, s))
      return tl_error_set(err, TL_ERR_DIVERGED, m->source, 0, NULL,
                          "system %d ('%s'): an articulated inertia is not positive definite at t = %g s",
                          s->index, m->name, w->time);
  } else {
    tl_status st = euler_step(w, s, err);
    if (st) return st;
  }
  s->kin_valid = s->dyn_valid = 0;
  if (!state_finite(s)) {
    memcpy(s->d.q, s->q_prev, (size_t)m->nq * sizeof(double));
    memcpy(s->d.u, s->u_prev, (size_t)nv * sizeof(double));
    return tl_error_set(err, TL_ERR_DIVERGED, m->source, 0, NULL,
                        "system %d ('%s') diverged at t = %g s: the state became non-finite; it was "
                        "restored to the start of the step", s->index, m->name, w->time);
  }
  return TL_OK;
}

/* Semi-implicit Euler with implicit PD, damping and springs, and contacts. */
static tl_status euler_step(tl_world *w, tl_system *s, tl_error *err) {
  const tl_model *m = s->m;
  int nv = m->nv;
  double dt = w->dt;
  control_forces(s, s->d.u, dt, s->force);
  for (int k = 0; k < nv; k++) s->force[k] -= s->d.h[k];
  tl_system_implicit_diagonal(s, dt, s->diag);
  if (tl_dyn_factor(&s->d, s->diag))
    return tl_error_set(err, TL_ERR_DIVERGED, m->source, 0, NULL,
                        "system %d ('%s'): the effective mass matrix is not positive definite at t = %g s",
                        s->index, m->name, w->time);
  tl_dyn_solve(&s->d, s->force); /* force <- M_eff^-1 f */
  for (int k = 0; k < nv; k++) s->d.u[k] += dt * s->force[k];
  solve_contacts(w, s);
  tl_dyn_integrate_q(m, s->d.q, s->d.u, dt);
  return TL_OK;
}

tl_status tl_world_integrate2(tl_world *w, tl_error *err) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_status st = step_system(w, w->systems[i], err);
    if (st) return st;
  }
  w->time += w->dt;
  return TL_OK;
}

tl_status tl_world_step(tl_world *w, tl_error *err) {
  tl_status st = tl_world_integrate1(w, err);
  return st ? st : tl_world_integrate2(w, err);
}

/* ---------------- contacts ---------------- */

int tl_world_ncontact(const tl_world *w) {
  int n = 0;
  for (int i = 0; i < w->nsystem; i++) n += w->systems[i]->ncontact;
  return n;
}

tl_status tl_world_contact(const tl_world *w, int k, tl_contact_info *out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  for (int i = 0; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    if (k >= s->ncontact) {
      k -= s->ncontact;
      continue;
    }
    if (k < 0) break;
    const tl_contact *c = &s->contacts[k];
    memset(out, 0, sizeof(*out));
    out->system = i;
    out->body = c->body;
    out->geom = c->geom;
    out->other_system = out->other_body = out->other_geom = -1;
    tl_v3_copy(out->pos, c->ground);
    tl_v3_copy(out->normal, c->frame + 6);
    out->depth = c->depth;
    for (int r = 0; r < 3; r++) tl_v3_addscl(out->impulse, c->frame + 3 * r, c->lambda[r]);
    return TL_OK;
  }
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "k", "contact index out of range");
}
