/* Recursive Newton-Euler inverse dynamics (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, Table 5.1), in world axes about the world origin.
 * Gravity enters as a fictitious base acceleration -g (sec. 5.3).
 *
 * A floating base's DOFs (0..5: translations (0, e_j), rotations
 * (e_j, p x e_j) about the base origin p, see kinematics.c) are handled in
 * closed form: their subspace terms sum to (dw, dv + p x dw) and their
 * cdof_dot terms to (0, v x w); the generalized force of a translation is a
 * component of the root force f and of a rotation one of its moment about p,
 * n + f x p. */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

/* a += s x (6-vector) */
static inline void sp_axpy(double a[6], const double x[6], double s) {
  for (int i = 0; i < 6; i++) a[i] += x[i] * s;
}

void tl_dyn_accelerations(tl_sysdata *d, const double *g, const double *du, int u_on) {
  const tl_model *m = d->m;
  const double *u = d->u, *cdof = d->cdof, *cdof_dot = d->cdof_dot;
  double *restrict cacc = d->cacc;
  double a[6] = {0, 0, 0, 0, 0, 0};
  if (g) tl_v3_scale(a + 3, g, -1.0);
  if (m->jnt_type[0] == TL_JOINT_FLOATING) {
    if (u_on) { /* sum_j cdof_dot_j u_j = (0, v x w) */
      double vw[3];
      tl_v3_cross(vw, u, u + 3);
      tl_v3_add(a + 3, a + 3, vw);
    }
    if (du) { /* sum_j cdof_j du_j = (dw, dv + p x dw) */
      double pdw[3];
      tl_v3_cross(pdw, d->xpos, du + 3);
      tl_v3_add(a, a, du + 3);
      for (int i = 0; i < 3; i++) a[3 + i] += du[i] + pdw[i];
    }
  } else {
    for (int k = 0; k < m->jnt_nv[0]; k++) {
      if (u_on) sp_axpy(a, cdof_dot + 6 * k, u[k]);
      if (du) sp_axpy(a, cdof + 6 * k, du[k]);
    }
  }
  memcpy(cacc, a, sizeof(a));
  for (int b = 1; b < m->nbody; b++) {
    int v0 = m->v_adr[b], nj = m->jnt_nv[b];
    const double *ap = cacc + 6 * m->parent[b];
    double *ab = cacc + 6 * b;
    if (nj == 1 && u_on && !du) { /* h's case, 1-DOF joint: straight from the parent */
      const double *Sd = cdof_dot + 6 * v0;
      double uk = u[v0];
      for (int i = 0; i < 6; i++) ab[i] = ap[i] + Sd[i] * uk;
      continue;
    }
    memcpy(a, ap, sizeof(a));
    for (int k = v0; k < v0 + nj; k++) {
      if (u_on) sp_axpy(a, cdof_dot + 6 * k, u[k]);
      if (du) sp_axpy(a, cdof + 6 * k, du[k]);
    }
    memcpy(ab, a, sizeof(a));
  }
}

/* cfrc[b] = I_b a_b (+ v_b x* I_b v_b when u_on) for every body from b0,
 * TL_LANES bodies at a time (independent: tl_lanes). */
static void body_forces(tl_sysdata *d, int u_on, int b0) {
  const int nb = d->m->nbody;
  const double *cinert = d->cinert, *cacc = d->cacc, *cvel = d->cvel;
  double *restrict cfrc = d->cfrc;
  for (int b = b0; b < nb; b += TL_LANES) {
    int c = TL_LANES > 1 && b + 1 < nb ? b + 1 : b; /* the second lane (b again at the end) */
    tl_lanes I[10], a[6], v[6], f[6];
    tl_lanes_load(I, cinert + 10 * b, cinert + 10 * c, 10);
    tl_lanes_load(a, cacc + 6 * b, cacc + 6 * c, 6);
    tl_lanes_spi_mulv(f, I, a);
    if (u_on) {
      tl_lanes Iv[6], t[6];
      tl_lanes_load(v, cvel + 6 * b, cvel + 6 * c, 6);
      tl_lanes_spi_mulv(Iv, I, v);
      tl_lanes_cross_force(t, v, Iv);
      for (int i = 0; i < 6; i++) f[i] = f[i] + t[i];
    }
    tl_lanes_store(cfrc + 6 * b, cfrc + 6 * c, f, 6); /* c == b: the first lane's value twice */
  }
}

void tl_dyn_rnea(tl_sysdata *d, const double g[3], const double *du, int u_on, double *tau) {
  const tl_model *m = d->m;
  double *restrict cfrc = d->cfrc;
  /* a fixed base's root has no DOF: no torque reads its force, which is not formed (cfrc[0] is left
   * as it was) */
  const int b0 = tl_dyn_first_moving_body(m);
  tl_dyn_accelerations(d, g, du, u_on);
  body_forces(d, u_on, b0);
  for (int b = m->nbody - 1; b > 0; b--) {
    const double *f = cfrc + 6 * b;
    if (tau)
      for (int k = m->v_adr[b]; k < m->v_adr[b] + m->jnt_nv[b]; k++) tau[k] = tl_sp_dot(d->cdof + 6 * k, f);
    if (m->parent[b] >= b0) tl_lanes_add_even(cfrc + 6 * m->parent[b], f, 6);
  }
  if (!tau) return;
  const double *f = cfrc;
  if (m->jnt_type[0] == TL_JOINT_FLOATING) { /* f, then n + f x p */
    double fp[3];
    tl_v3_cross(fp, f + 3, d->xpos);
    tau[0] = f[3]; tau[1] = f[4]; tau[2] = f[5];
    tau[3] = f[0] + fp[0]; tau[4] = f[1] + fp[1]; tau[5] = f[2] + fp[2];
  } else {
    for (int k = 0; k < m->jnt_nv[0]; k++) tau[k] = tl_sp_dot(d->cdof + 6 * k, f);
  }
}

void tl_dyn_point_bias(tl_sysdata *d, int b, const double p[3], double acc[3], double alpha[3]) {
  tl_dyn_accelerations(d, NULL, NULL, 1);
  const double *a = d->cacc + 6 * b, *w = d->cvel + 6 * b;
  double vp[3], t[3];
  tl_dyn_point_velocity(d, b, p, vp);
  /* classical acceleration of a body-fixed point from the spatial one:
   * a_p = a_O + alpha x p + w x v_p (Featherstone 2008, eq. 2.47) */
  tl_v3_cross(acc, a, p);
  tl_v3_add(acc, acc, a + 3);
  tl_v3_cross(t, w, vp);
  tl_v3_add(acc, acc, t);
  if (alpha) tl_v3_copy(alpha, a);
}
