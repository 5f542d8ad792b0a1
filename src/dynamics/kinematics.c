/* Forward kinematics, motion subspaces and body velocities, in world axes
 * about the world origin (Featherstone, Rigid Body Dynamics Algorithms, 2008,
 * sec. 4.3 and 2.9), plus the system data lifetime. */
#include <stdlib.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "dynamics/joint_space.h"
#include "math/tl_math.h"

int tl_sysdata_init(tl_sysdata *d, const tl_model *m) {
  memset(d, 0, sizeof(*d));
  d->m = m;
  size_t nb = (size_t)m->nbody, nv = (size_t)m->nv, nq = (size_t)m->nq;
  double **arr[] = {&d->q, &d->u, &d->xpos, &d->xrot, &d->xjpos, &d->xjrot, &d->xcom,
                    &d->cinert, &d->cdof, &d->cvel, &d->cdof_dot, &d->crb, &d->M, &d->h,
                    &d->LD, &d->cacc, &d->cfrc, &d->abaI, &d->abap, &d->abaU, &d->abaDinv,
                    &d->abau, &d->drv_I, &d->drv_vec, &d->drv_tau, &d->drv_mat};
  size_t len[] = {nq, nv, 3 * nb, 9 * nb, 3 * nb, 9 * nb, 3 * nb, 10 * nb, 6 * nv, 6 * nb,
                  6 * nv, 10 * nb, nv * nv, nv, nv * nv, 6 * nb, 6 * nb, 36 * nb, 6 * nb,
                  6 * nv, 36 * nb, nv, 38 * nb, 48 * nv, 2 * nv, 2 * nv * nv};
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
                   d->abaI, d->abap, d->abaU, d->abaDinv, d->abau, d->drv_I,
                   d->drv_vec, d->drv_tau, d->drv_mat};
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

/* Pose, subspaces (rotations about the world axes through the base origin p
 * for u[3..5], translations for u[0..2]), their time derivatives and the
 * velocity of a floating base (body 0, DOFs 0..5). */
static void floating_base(tl_sysdata *d) {
  const double *q = d->q, *u = d->u;
  double *S = d->cdof, *Sd = d->cdof_dot, *V = d->cvel;
  double px = q[0], py = q[1], pz = q[2];
  tl_v3_set(d->xpos, px, py, pz);
  tl_quat_to_m3(d->xrot, q + 3);
  memset(S, 0, 36 * sizeof(double));
  memset(Sd, 0, 36 * sizeof(double));
  for (int k = 0; k < 3; k++) {
    S[6 * k + 3 + k] = 1.0;      /* (0, e_k) */
    S[6 * (k + 3) + k] = 1.0;    /* (e_k, p x e_k) */
  }
  /* p x e_k: (0, pz, -py), (-pz, 0, px), (py, -px, 0) */
  S[22] = pz; S[23] = -py;
  S[27] = -pz; S[29] = px;
  S[33] = py; S[34] = -px;
  /* d/dt of the w-columns: the reference point p moves with v: (0, v x e_k) */
  Sd[22] = u[2]; Sd[23] = -u[1];
  Sd[27] = -u[2]; Sd[29] = u[0];
  Sd[33] = u[1]; Sd[34] = -u[0];
  /* V = (w, v + p x w) */
  double w[3] = {u[3], u[4], u[5]}, pw[3];
  tl_v3_cross(pw, d->xpos, w);
  V[0] = w[0]; V[1] = w[1]; V[2] = w[2];
  V[3] = u[0] + pw[0]; V[4] = u[1] + pw[1]; V[5] = u[2] + pw[2];
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
  if (nv == 1) { /* revolute, prismatic: cdof_dot = vp x S, vb = vp + S u */
    const double *S = d->cdof + 6 * v0;
    double u = d->u[v0], v[6], t[6];
    for (int i = 0; i < 6; i++) v[i] = vp[i];
    tl_sp_cross_motion(t, v, S);
    memcpy(d->cdof_dot + 6 * v0, t, sizeof(t));
    for (int i = 0; i < 6; i++) vb[i] = v[i] + S[i] * u;
    return;
  }
  /* Axes fixed in the parent move with it (spherical); in the serial joints
   * (universal, planar) each axis moves with the intermediate frame after the
   * joint's previous DOFs. */
  int serial = m->jnt_type[b] == TL_JOINT_UNIVERSAL || m->jnt_type[b] == TL_JOINT_PLANAR;
  memcpy(vb, vp, 6 * sizeof(double));
  for (int k = 0; k < nv; k++) {
    const double *S = d->cdof + 6 * (v0 + k);
    tl_sp_cross_motion(d->cdof_dot + 6 * (v0 + k), serial ? vb : vp, S);
    for (int i = 0; i < 6; i++) vb[i] += S[i] * d->u[v0 + k];
  }
}

/* xcom and cinert of every body from its pose, TL_LANES bodies at a time
 * (independent: tl_lanes): c = R com + x, Ic = R I R^T
 * (tl_lanes_rotate_sym), and the inertia about the world origin
 * (tl_lanes_spi_from_body_sym). */
static void body_inertias(tl_sysdata *d) {
  static const int sym[6] = {0, 1, 2, 4, 5, 8}; /* upper triangle of a 3x3 */
  const tl_model *m = d->m;
  const int nb = m->nbody;
  const double *xrot = d->xrot, *xpos = d->xpos, *com = m->body_com, *inert = m->body_inertia;
  double *restrict xcom = d->xcom, *restrict cinert = d->cinert;
  for (int b = 0; b < nb; b += TL_LANES) {
    int e = TL_LANES > 1 && b + 1 < nb ? b + 1 : b; /* the second lane (b again at the end) */
    tl_lanes R[9], A[6], cb[3], c[3], Ic[6], I[10], mass = tl_lanes_set(m->body_mass[b], m->body_mass[e]);
    for (int i = 0; i < 9; i++) R[i] = tl_lanes_set(xrot[9 * b + i], xrot[9 * e + i]);
    for (int i = 0; i < 6; i++) A[i] = tl_lanes_set(inert[9 * b + sym[i]], inert[9 * e + sym[i]]);
    for (int i = 0; i < 3; i++) cb[i] = tl_lanes_set(com[3 * b + i], com[3 * e + i]);
    for (int i = 0; i < 3; i++)
      c[i] = R[3 * i] * cb[0] + R[3 * i + 1] * cb[1] + R[3 * i + 2] * cb[2] +
             tl_lanes_set(xpos[3 * b + i], xpos[3 * e + i]);
    tl_lanes_rotate_sym(Ic, R, A);
    tl_lanes_spi_from_body_sym(I, mass, c, Ic);
    for (int i = 0; i < 3; i++) {
      xcom[3 * b + i] = tl_lanes_get(c[i], 0);
      xcom[3 * e + i] = tl_lanes_get(c[i], TL_LANES - 1);
    }
    for (int i = 0; i < 10; i++) {
      cinert[10 * b + i] = tl_lanes_get(I[i], 0);
      cinert[10 * e + i] = tl_lanes_get(I[i], TL_LANES - 1);
    }
  }
}

/* Pose, subspace, velocity and cdof_dot of a body b > 0 whose joint is
 * revolute about the coordinate axis sg e_i of its joint frame (sg = +-1, the
 * usual URDF axis), in one pass: the joint frame (jr, jp), the body rotation
 * R = jr Rot(e_i, sg q) (tl_m3_mul_rot_axis: two columns of jr mixed), the
 * subspace S = (a, jp x a) with a = sg jr e_i, and the velocity and cdof_dot
 * as joint_velocity. Inline with a constant i, so every index is fixed. */
static inline __attribute__((always_inline)) void revolute_axis_body(tl_sysdata *d, int b, int i) {
  const tl_model *m = d->m;
  int p = m->parent[b], v = m->v_adr[b];
  /* the libm call first: it clobbers every vector register */
  double q = d->q[m->q_adr[b]], co = cos(q), si = sin(q);
  const double *Rp = d->xrot + 9 * p, *xp = d->xpos + 3 * p, *vp = d->cvel + 6 * p;
  double *restrict jr = d->xjrot + 9 * b, *restrict jp = d->xjpos + 3 * b;
  double *restrict R = d->xrot + 9 * b, *restrict x = d->xpos + 3 * b;
  double *restrict S = d->cdof + 6 * v, *restrict Sd = d->cdof_dot + 6 * v;
  double *restrict V = d->cvel + 6 * b;
  double sg = m->jnt_axis[3 * b + i], u = d->u[v], t[3];
  si *= sg;
  tl_m3_mul(jr, Rp, m->jnt_rot + 9 * b);
  tl_m3_mulv(t, Rp, m->jnt_pos + 3 * b);
  tl_v3_add(jp, t, xp);
  tl_v3_copy(x, jp);
  tl_m3_mul_rot_axis(R, jr, i, co, si);
  tl_v3_set(S, sg * jr[i], sg * jr[3 + i], sg * jr[6 + i]);
  tl_v3_cross(S + 3, jp, S);
  tl_sp_cross_motion(Sd, vp, S);
  for (int k = 0; k < 6; k++) V[k] = vp[k] + S[k] * u;
}

void tl_dyn_kinematics(tl_sysdata *d) {
  const tl_model *m = d->m;
  for (int b = 0; b < m->nbody; b++) {
    if (b == 0) {
      memset(d->xjpos, 0, 3 * sizeof(double));
      tl_m3_identity(d->xjrot);
      if (m->jnt_type[0] == TL_JOINT_FLOATING) {
        floating_base(d);
      } else { /* welded to the world at the base placement (identity unless set) */
        memset(d->cvel, 0, 6 * sizeof(double));
        tl_v3_copy(d->xpos, m->jnt_pos);
        tl_m3_copy(d->xrot, m->jnt_rot);
      }
    } else {
      if (m->jnt_type[b] == TL_JOINT_REVOLUTE) {
        int i = tl_v3_coord_axis(m->jnt_axis + 3 * b);
        if (i >= 0) {
          switch (i) { /* constant axis index in each copy */
            case 0: revolute_axis_body(d, b, 0); break;
            case 1: revolute_axis_body(d, b, 1); break;
            default: revolute_axis_body(d, b, 2); break;
          }
          continue;
        }
      }
      int p = m->parent[b];
      double t[3];
      tl_m3_mul(d->xjrot + 9 * b, d->xrot + 9 * p, m->jnt_rot + 9 * b);
      tl_m3_mulv(t, d->xrot + 9 * p, m->jnt_pos + 3 * b);
      tl_v3_add(d->xjpos + 3 * b, d->xpos + 3 * p, t);
      joint_transform(d, b);
      joint_velocity(d, b);
    }
  }
  body_inertias(d);
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
  for (int b = 0; b < m->nbody; b++)
    tl_js_integrate(m->jnt_type[b], m->jnt_nv[b], q + m->q_adr[b], u + m->v_adr[b], dt);
}
