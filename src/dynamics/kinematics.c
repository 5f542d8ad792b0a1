/* Forward kinematics, motion subspaces and body velocities, in world axes
 * about the world origin (Featherstone, Rigid Body Dynamics Algorithms, 2008,
 * sec. 4.3 and 2.9), plus the system data lifetime. */
#include <stdlib.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

int tl_sysdata_init(tl_sysdata *d, const tl_model *m) {
  memset(d, 0, sizeof(*d));
  d->m = m;
  size_t nb = (size_t)m->nbody, nv = (size_t)m->nv, nq = (size_t)m->nq;
  double **arr[] = {&d->q, &d->u, &d->xpos, &d->xrot, &d->xjpos, &d->xjrot, &d->xcom,
                    &d->cinert, &d->cdof, &d->cvel, &d->cdof_dot, &d->crb, &d->M, &d->h,
                    &d->LD, &d->cacc, &d->cfrc, &d->abaI, &d->abap, &d->abaU, &d->abaDinv,
                    &d->abau};
  size_t len[] = {nq, nv, 3 * nb, 9 * nb, 3 * nb, 9 * nb, 3 * nb, 10 * nb, 6 * nv, 6 * nb,
                  6 * nv, 10 * nb, nv * nv, nv, nv * nv, 6 * nb, 6 * nb, 36 * nb, 6 * nb,
                  6 * nv, 36 * nb, nv};
  for (size_t i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
    *arr[i] = calloc(len[i] ? len[i] : 1, sizeof(double));
    if (!*arr[i]) {
      tl_sysdata_free(d);
      return -1;
    }
  }
  d->dof_end = malloc((nv ? nv : 1) * sizeof(int));
  d->dof_tmp = malloc((nv ? nv : 1) * sizeof(int));
  d->dof_anc_adr = malloc((nv + 1) * sizeof(int));
  size_t nanc = 0;
  for (int k = 0; k < m->nv; k++)
    for (int i = m->dof_parent[k]; i >= 0; i = m->dof_parent[i]) nanc++;
  d->dof_anc = malloc((nanc ? nanc : 1) * sizeof(int));
  d->vtmp = calloc(nv ? nv : 1, sizeof(double));
  d->LDinv = calloc(nv ? nv : 1, sizeof(double));
  if (!d->dof_end || !d->dof_tmp || !d->vtmp || !d->LDinv || !d->dof_anc_adr || !d->dof_anc) {
    tl_sysdata_free(d);
    return -1;
  }
  d->dof_anc_adr[0] = 0;
  for (int k = 0; k < m->nv; k++) {
    int a = d->dof_anc_adr[k];
    for (int i = m->dof_parent[k]; i >= 0; i = m->dof_parent[i]) d->dof_anc[a++] = i;
    d->dof_anc_adr[k + 1] = a;
  }
  /* subtree ends (dof_parent[k] < k: children after their parent) */
  for (int k = 0; k < m->nv; k++) d->dof_end[k] = k + 1;
  for (int k = m->nv - 1; k >= 0; k--) {
    int p = m->dof_parent[k];
    if (p >= 0 && d->dof_end[k] > d->dof_end[p]) d->dof_end[p] = d->dof_end[k];
  }
  tl_model_default_q_fill(m, d->q);
  return 0;
}

void tl_sysdata_free(tl_sysdata *d) {
  double *arr[] = {d->q, d->u, d->xpos, d->xrot, d->xjpos, d->xjrot, d->xcom, d->cinert,
                   d->cdof, d->cvel, d->cdof_dot, d->crb, d->M, d->h, d->LD, d->cacc, d->cfrc,
                   d->abaI, d->abap, d->abaU, d->abaDinv, d->abau};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  free(d->dof_end);
  free(d->dof_tmp);
  free(d->dof_anc_adr);
  free(d->dof_anc);
  free(d->vtmp);
  free(d->LDinv);
  memset(d, 0, sizeof(*d));
}

/* Motion subspace of a rotation about the world axis a through world point p. */
static void cdof_rotation(double S[6], const double a[3], const double p[3]) {
  tl_v3_copy(S, a);
  tl_v3_cross(S + 3, p, a);
}

static void floating_base(tl_sysdata *d) {
  const double *q = d->q, *u = d->u;
  tl_v3_copy(d->xpos, q);
  tl_quat_to_m3(d->xrot, q + 3);
  for (int k = 0; k < 3; k++) {
    double e[3] = {0, 0, 0};
    e[k] = 1.0;
    double *Sv = d->cdof + 6 * k, *Sw = d->cdof + 6 * (k + 3);
    memset(Sv, 0, 3 * sizeof(double));
    tl_v3_copy(Sv + 3, e);
    cdof_rotation(Sw, e, d->xpos);
    /* d/dt of the w-columns: the reference point p moves with v: (0, v x e) */
    double *Sdv = d->cdof_dot + 6 * k, *Sdw = d->cdof_dot + 6 * (k + 3);
    memset(Sdv, 0, 6 * sizeof(double));
    memset(Sdw, 0, 3 * sizeof(double));
    tl_v3_cross(Sdw + 3, u, e);
  }
}

/* Pose and subspace of a movable joint b whose joint frame is set. */
static void joint_transform(tl_sysdata *d, int b) {
  const tl_model *m = d->m;
  const double *q = d->q + m->q_adr[b], *jr = d->xjrot + 9 * b, *jp = d->xjpos + 3 * b;
  const double *axis = m->jnt_axis + 3 * b;
  double *R = d->xrot + 9 * b, *p = d->xpos + 3 * b, *S = d->cdof + 6 * m->v_adr[b];
  double a[3], Rj[9];
  tl_v3_copy(p, jp);
  switch (m->jnt_type[b]) {
    case TL_JOINT_REVOLUTE:
      tl_m3_axis_angle(Rj, axis, q[0]);
      tl_m3_mul(R, jr, Rj);
      tl_m3_mulv(a, jr, axis);
      cdof_rotation(S, a, jp);
      break;
    case TL_JOINT_PRISMATIC:
      tl_m3_copy(R, jr);
      tl_m3_mulv(a, jr, axis);
      tl_v3_addscl(p, a, q[0]);
      memset(S, 0, 3 * sizeof(double));
      tl_v3_copy(S + 3, a);
      break;
    case TL_JOINT_SPHERICAL:
      tl_quat_to_m3(Rj, q);
      tl_m3_mul(R, jr, Rj);
      for (int k = 0; k < 3; k++) {
        tl_v3_set(a, jr[k], jr[3 + k], jr[6 + k]); /* column k of the joint frame */
        cdof_rotation(S + 6 * k, a, jp);
      }
      break;
    case TL_JOINT_UNIVERSAL: {
      double R1[9], R2[9], a2[3];
      tl_m3_axis_angle(R1, axis, q[0]);
      tl_m3_axis_angle(R2, m->jnt_axis2 + 3 * b, q[1]);
      tl_m3_mul(Rj, R1, R2);
      tl_m3_mul(R, jr, Rj);
      tl_m3_mulv(a, jr, axis);
      cdof_rotation(S, a, jp);
      tl_m3_mulv(a2, R1, m->jnt_axis2 + 3 * b);
      tl_m3_mulv(a, jr, a2);
      cdof_rotation(S + 6, a, jp);
      break;
    }
    case TL_JOINT_PLANAR: { /* slide along t1, t2, then turn about the normal n */
      double n[3], t1[3], t2[3];
      tl_m3_mulv(n, jr, axis);
      tl_m3_mulv(t1, jr, m->jnt_axis2 + 3 * b);
      tl_v3_cross(t2, n, t1);
      tl_v3_addscl(p, t1, q[0]);
      tl_v3_addscl(p, t2, q[1]);
      tl_m3_axis_angle(Rj, axis, q[2]);
      tl_m3_mul(R, jr, Rj);
      memset(S, 0, 3 * sizeof(double));
      tl_v3_copy(S + 3, t1);
      memset(S + 6, 0, 3 * sizeof(double));
      tl_v3_copy(S + 9, t2);
      cdof_rotation(S + 12, n, p);
      break;
    }
    default:
      tl_m3_copy(R, jr);
      break;
  }
}

/* cvel and cdof_dot of a non-root body from its parent's velocity. */
static void joint_velocity(tl_sysdata *d, int b) {
  const tl_model *m = d->m;
  int v0 = m->v_adr[b], nv = m->jnt_nv[b];
  const double *vp = d->cvel + 6 * m->parent[b];
  double *vb = d->cvel + 6 * b;
  /* Axes fixed in the parent move with it (revolute, prismatic, spherical);
   * in the serial joints (universal, planar) each axis moves with the
   * intermediate frame after the joint's previous DOFs. */
  int serial = m->jnt_type[b] == TL_JOINT_UNIVERSAL || m->jnt_type[b] == TL_JOINT_PLANAR;
  memcpy(vb, vp, 6 * sizeof(double));
  for (int k = 0; k < nv; k++) {
    const double *S = d->cdof + 6 * (v0 + k);
    tl_sp_cross_motion(d->cdof_dot + 6 * (v0 + k), serial ? vb : vp, S);
    for (int i = 0; i < 6; i++) vb[i] += S[i] * d->u[v0 + k];
  }
}

static void body_inertia(tl_sysdata *d, int b) {
  const tl_model *m = d->m;
  const double *R = d->xrot + 9 * b;
  double *c = d->xcom + 3 * b, Ic[9];
  tl_m3_mulv(c, R, m->body_com + 3 * b);
  tl_v3_add(c, c, d->xpos + 3 * b);
  tl_m3_rotate_tensor(Ic, R, m->body_inertia + 9 * b);
  tl_spi_from_body(d->cinert + 10 * b, m->body_mass[b], c, Ic);
}

void tl_dyn_kinematics(tl_sysdata *d) {
  const tl_model *m = d->m;
  for (int b = 0; b < m->nbody; b++) {
    if (b == 0) {
      memset(d->xjpos, 0, 3 * sizeof(double));
      tl_m3_identity(d->xjrot);
      memset(d->cvel, 0, 6 * sizeof(double));
      if (m->jnt_type[0] == TL_JOINT_FLOATING) {
        floating_base(d);
        for (int k = 0; k < 6; k++)
          for (int i = 0; i < 6; i++) d->cvel[i] += d->cdof[6 * k + i] * d->u[k];
      } else { /* welded to the world at the base placement (identity unless set) */
        tl_v3_copy(d->xpos, m->jnt_pos);
        tl_m3_copy(d->xrot, m->jnt_rot);
      }
    } else {
      int p = m->parent[b];
      double t[3];
      tl_m3_mul(d->xjrot + 9 * b, d->xrot + 9 * p, m->jnt_rot + 9 * b);
      tl_m3_mulv(t, d->xrot + 9 * p, m->jnt_pos + 3 * b);
      tl_v3_add(d->xjpos + 3 * b, d->xpos + 3 * p, t);
      joint_transform(d, b);
      joint_velocity(d, b);
    }
    body_inertia(d, b);
  }
}

void tl_dyn_point_jacobian(const tl_sysdata *d, int b, const double p[3], double *Jp, double *Jr) {
  const tl_model *m = d->m;
  int nv = m->nv;
  while (b > 0 && m->jnt_nv[b] == 0) b = m->parent[b];
  int k = m->jnt_nv[b] ? m->v_adr[b] + m->jnt_nv[b] - 1 : -1;
  for (; k >= 0; k = m->dof_parent[k]) {
    const double *S = d->cdof + 6 * k;
    double lin[3];
    tl_v3_cross(lin, S, p); /* v_p = v_O + w x p */
    tl_v3_add(lin, lin, S + 3);
    for (int i = 0; i < 3; i++) {
      if (Jp) Jp[i * nv + k] = lin[i];
      if (Jr) Jr[i * nv + k] = S[i];
    }
  }
}

void tl_dyn_point_velocity(const tl_sysdata *d, int b, const double p[3], double v[3]) {
  const double *V = d->cvel + 6 * b;
  tl_v3_cross(v, V, p);
  tl_v3_add(v, v, V + 3);
}

void tl_dyn_integrate_q(const tl_model *m, double *q, const double *u, double dt) {
  for (int b = 0; b < m->nbody; b++) {
    double *qb = q + m->q_adr[b], dq[4], w[3];
    const double *ub = u + m->v_adr[b];
    switch (m->jnt_type[b]) {
      case TL_JOINT_FLOATING:
        tl_v3_addscl(qb, ub, dt);
        tl_v3_scale(w, ub + 3, dt);
        tl_quat_exp(dq, w);
        tl_quat_mul(qb + 3, dq, qb + 3); /* world-frame angular velocity: left */
        tl_quat_normalize(qb + 3);
        break;
      case TL_JOINT_SPHERICAL:
        tl_v3_scale(w, ub, dt);
        tl_quat_exp(dq, w);
        tl_quat_mul(qb, dq, qb); /* parent-joint-frame angular velocity: left */
        tl_quat_normalize(qb);
        break;
      case TL_JOINT_FIXED:
        break;
      default:
        for (int k = 0; k < m->jnt_nv[b]; k++) qb[k] += dt * ub[k];
        break;
    }
  }
}
