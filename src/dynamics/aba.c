/* Articulated-body algorithm (Featherstone, Rigid Body Dynamics Algorithms,
 * 2008, Table 7.1), in world axes about the world origin: no coordinate
 * transforms between bodies, and multi-DOF joints (floating base, spherical,
 * universal, planar) handled with their nj x nj joint-space inertia D through
 * its Cholesky factor. Rotor inertia adds to the diagonal of D, exactly as it
 * adds to the diagonal of M.
 *
 * Implementation notes (same algorithm, fewer operations than the textbook
 * form): the articulated inertia handed to the parent,
 *   Ia = IA - U D^-1 U^T,   pa = pA + Ia c + U D^-1 u,
 * is added to the parent directly (no Ia/pa temporaries) with
 * Ia c = IA c - U D^-1 (U^T c); U = IA S and IA c share one pass over IA's
 * rows (IA is symmetric, so IA x = sum_r x[r] IA[r][:]); the velocity-product
 * acceleration c of each body is computed once, in the backward pass, and
 * reused by the forward pass; 1-DOF joints take a scalar path; the 6x6
 * kernels run on pairs of doubles; and a welded (fixed) base, whose
 * articulated inertia nothing needs, is skipped. */
#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

/* A[6x6] (row-major) = the spatial inertia Isp [m, h, I_O] about the world
 * origin: [[I_O, [h]x], [[h]x^T, m 1]] (Featherstone 2008, eq. 2.63). */
static void spi_to_mat(double *restrict A, const double *restrict Isp) {
  const double m = Isp[0], hx = Isp[1], hy = Isp[2], hz = Isp[3];
  A[0] = Isp[4], A[1] = Isp[5], A[2] = Isp[6], A[3] = 0, A[4] = -hz, A[5] = hy;
  A[6] = Isp[5], A[7] = Isp[7], A[8] = Isp[8], A[9] = hz, A[10] = 0, A[11] = -hx;
  A[12] = Isp[6], A[13] = Isp[8], A[14] = Isp[9], A[15] = -hy, A[16] = hx, A[17] = 0;
  A[18] = 0, A[19] = hz, A[20] = -hy, A[21] = m, A[22] = 0, A[23] = 0;
  A[24] = -hz, A[25] = 0, A[26] = hx, A[27] = 0, A[28] = m, A[29] = 0;
  A[30] = hy, A[31] = -hx, A[32] = 0, A[33] = 0, A[34] = 0, A[35] = m;
}

#if defined(__GNUC__) && !defined(TL_NO_VECTOR_EXT)
/* Two doubles in one SSE2/NEON register (GCC and Clang vector extension;
 * define TL_NO_VECTOR_EXT for the plain loops below, which compute the same
 * sums in the same order). */
typedef double v2d __attribute__((vector_size(16)));
/* p[0..2) as a vector (unaligned load). */
static inline v2d v2_ld(const double *p) {
  v2d v;
  memcpy(&v, p, sizeof v);
  return v;
}
/* p[0..2) = v (unaligned store). */
static inline void v2_st(double *p, v2d v) { memcpy(p, &v, sizeof v); }

/* U = A s and Ac = A c (6-vectors) for a symmetric 6x6 A (row-major), in
 * one pass over A's rows: A x = sum_r x[r] A[r][:] by symmetry. The
 * articulated-inertia products of Featherstone 2008, Table 7.1. */
static inline void sym6_mulv2(double *restrict U, double *restrict Ac, const double *restrict A,
                              const double *restrict s, const double *restrict c) {
  v2d u0 = {0, 0}, u1 = u0, u2 = u0, a0 = u0, a1 = u0, a2 = u0;
  for (int r = 0; r < 6; r++) {
    const v2d x0 = v2_ld(A + 6 * r), x1 = v2_ld(A + 6 * r + 2), x2 = v2_ld(A + 6 * r + 4);
    const v2d sr = {s[r], s[r]}, cr = {c[r], c[r]};
    u0 += sr * x0, u1 += sr * x1, u2 += sr * x2;
    a0 += cr * x0, a1 += cr * x1, a2 += cr * x2;
  }
  v2_st(U, u0), v2_st(U + 2, u1), v2_st(U + 4, u2);
  v2_st(Ac, a0), v2_st(Ac + 2, a1), v2_st(Ac + 4, a2);
}

/* U = A s (6-vector) for a symmetric 6x6 A (row-major), as sym6_mulv2. */
static inline void sym6_mulv(double *restrict U, const double *restrict A, const double *restrict s) {
  v2d u0 = {0, 0}, u1 = u0, u2 = u0;
  for (int r = 0; r < 6; r++) {
    const v2d sr = {s[r], s[r]};
    u0 += sr * v2_ld(A + 6 * r), u1 += sr * v2_ld(A + 6 * r + 2), u2 += sr * v2_ld(A + 6 * r + 4);
  }
  v2_st(U, u0), v2_st(U + 2, u1), v2_st(U + 4, u2);
}

/* P += A - u v^T (P, A: 6x6 row-major; u, v: 6-vectors): the articulated
 * inertia IA - U D^-1 U^T a joint hands its parent (Featherstone 2008,
 * Table 7.1), with v = U / D. */
static inline void rank1_add(double *restrict P, const double *restrict A, const double *restrict u,
                             const double *restrict v) {
  const v2d v0 = v2_ld(v), v1 = v2_ld(v + 2), v2 = v2_ld(v + 4);
  for (int r = 0; r < 6; r++) {
    const v2d ur = {u[r], u[r]};
    double *Pr = P + 6 * r;
    const double *Ar = A + 6 * r;
    v2_st(Pr, v2_ld(Pr) + (v2_ld(Ar) - ur * v0));
    v2_st(Pr + 2, v2_ld(Pr + 2) + (v2_ld(Ar + 2) - ur * v1));
    v2_st(Pr + 4, v2_ld(Pr + 4) + (v2_ld(Ar + 4) - ur * v2));
  }
}
#else
/* U = A s and Ac = A c (6-vectors) for a symmetric 6x6 A (row-major), in
 * one pass over A's rows: A x = sum_r x[r] A[r][:] by symmetry. The
 * articulated-inertia products of Featherstone 2008, Table 7.1. */
static inline void sym6_mulv2(double *restrict U, double *restrict Ac, const double *restrict A,
                              const double *restrict s, const double *restrict c) {
  for (int i = 0; i < 6; i++) U[i] = Ac[i] = 0;
  for (int r = 0; r < 6; r++) {
    const double *Ar = A + 6 * r;
    for (int i = 0; i < 6; i++) {
      U[i] += s[r] * Ar[i];
      Ac[i] += c[r] * Ar[i];
    }
  }
}

/* U = A s (6-vector) for a symmetric 6x6 A (row-major), as sym6_mulv2. */
static inline void sym6_mulv(double *restrict U, const double *restrict A, const double *restrict s) {
  for (int i = 0; i < 6; i++) U[i] = 0;
  for (int r = 0; r < 6; r++)
    for (int i = 0; i < 6; i++) U[i] += s[r] * A[6 * r + i];
}

/* P += A - u v^T (P, A: 6x6 row-major; u, v: 6-vectors): the articulated
 * inertia IA - U D^-1 U^T a joint hands its parent (Featherstone 2008,
 * Table 7.1), with v = U / D. */
static inline void rank1_add(double *restrict P, const double *restrict A, const double *restrict u,
                             const double *restrict v) {
  for (int r = 0; r < 6; r++)
    for (int i = 0; i < 6; i++) P[6 * r + i] += A[6 * r + i] - u[r] * v[i];
}
#endif

/* Backward pass (Featherstone 2008, Table 7.1) of body b whose joint has
 * nj >= 2 DOFs (floating base, spherical, universal, planar): U_k = IA S_k
 * (abaU, 6 per DOF), D = S^T U + rotor inertia (nj x nj, kg m^2 / kg) and
 * its Cholesky factor C (lower, nj x nj in abaDinv), u = tau - S^T pA
 * (abau, N / N m); with a parent to feed (IAp: 6x6, pAp: 6, not NULL),
 * V = U C^-T and z = C^-1 u give U D^-1 U^T = V V^T and U D^-1 u = V z, so
 * IAp += IA - V V^T and pAp += pA + IA c - V V^T c + V z for the body's
 * velocity-product acceleration c (6). Returns -1 if D is not positive
 * definite. */
static int backward_multi(tl_sysdata *d, int b, const double *tau, const double *c, double *IAp,
                          double *pAp) {
  const tl_model *m = d->m;
  const int v0 = m->v_adr[b], nj = m->jnt_nv[b];
  const double *IA = d->abaI + 36 * b, *pA = d->abap + 6 * b, *S = d->cdof + 6 * v0;
  double *U = d->abaU + 6 * v0, *u = d->abau + v0, *C = d->abaDinv + 36 * b;
  for (int k = 0; k < nj; k++) {
    sym6_mulv(U + 6 * k, IA, S + 6 * k);
    u[k] = tau[v0 + k] - tl_sp_dot(S + 6 * k, pA);
  }
  for (int j = 0; j < nj; j++) { /* Cholesky D = C C^T, D[i][j] = S_i . U_j */
    double s = tl_sp_dot(S + 6 * j, U + 6 * j) + m->dof_rotor_inertia[v0 + j];
    for (int k = 0; k < j; k++) s -= C[j * nj + k] * C[j * nj + k];
    if (!(s > 0)) return -1;
    C[j * nj + j] = sqrt(s);
    for (int i = j + 1; i < nj; i++) {
      double t = tl_sp_dot(S + 6 * i, U + 6 * j);
      for (int k = 0; k < j; k++) t -= C[i * nj + k] * C[j * nj + k];
      C[i * nj + j] = t / C[j * nj + j];
    }
  }
  if (!IAp) return 0;
  double V[36], z[6], Ac[6], w[6];
  sym6_mulv(Ac, IA, c);
  for (int k = 0; k < nj; k++) { /* V_k = (U_k - sum_{l<k} C[k][l] V_l) / C[k][k], z likewise */
    double *Vk = V + 6 * k, zk = u[k];
    for (int i = 0; i < 6; i++) Vk[i] = U[6 * k + i];
    for (int l = 0; l < k; l++) {
      for (int i = 0; i < 6; i++) Vk[i] -= C[k * nj + l] * V[6 * l + i];
      zk -= C[k * nj + l] * z[l];
    }
    double ik = 1.0 / C[k * nj + k];
    for (int i = 0; i < 6; i++) Vk[i] *= ik;
    z[k] = zk * ik;
  }
  /* pa = pA + IA c + sum_k V_k (z_k - V_k . c) */
  for (int i = 0; i < 6; i++) w[i] = pA[i] + Ac[i];
  for (int k = 0; k < nj; k++) {
    double f = z[k] - tl_sp_dot(V + 6 * k, c);
    for (int i = 0; i < 6; i++) w[i] += V[6 * k + i] * f;
  }
  for (int i = 0; i < 6; i++) pAp[i] += w[i];
  /* IAp += IA - sum_k V_k V_k^T */
  for (int r = 0; r < 6; r++) {
    double row[6];
    for (int i = 0; i < 6; i++) row[i] = IA[6 * r + i];
    for (int k = 0; k < nj; k++) {
      const double vr = V[6 * k + r];
      for (int i = 0; i < 6; i++) row[i] -= vr * V[6 * k + i];
    }
    for (int i = 0; i < 6; i++) IAp[6 * r + i] += row[i];
  }
  return 0;
}

int tl_dyn_aba(tl_sysdata *d, const double g[3], const double *tau, double *du) {
  const tl_model *m = d->m;
  const int nb = m->nbody, *parent = m->parent;
  /* a welded base (no DOF) needs no articulated inertia: start at body 1 */
  const int b0 = m->jnt_nv[0] == 0 ? 1 : 0;
  /* IA = I, pA = v x* I v (bias force of the body's own velocity) */
  for (int b = b0; b < nb; b++) {
    const double *v = d->cvel + 6 * b, *Isp = d->cinert + TL_SPI_SIZE * b;
    double Iv[6];
    spi_to_mat(d->abaI + 36 * b, Isp);
    tl_spi_mulv(Iv, Isp, v);
    tl_sp_cross_force(d->abap + 6 * b, v, Iv);
  }
  /* backward pass, leaves first */
  for (int b = nb - 1; b >= b0; b--) {
    const int v0 = m->v_adr[b], nj = m->jnt_nv[b], p = parent[b];
    const double *IA = d->abaI + 36 * b, *pA = d->abap + 6 * b;
    double *IAp = p >= b0 ? d->abaI + 36 * p : NULL, *pAp = p >= b0 ? d->abap + 6 * p : NULL;
    /* c = sum_k cdof_dot_k u_k, kept in cacc for the forward pass */
    double *c = d->cacc + 6 * b;
    const double *Sd = d->cdof_dot + 6 * v0, *uj = d->u + v0;
    for (int i = 0; i < 6; i++) c[i] = nj ? Sd[i] * uj[0] : 0.0;
    for (int k = 1; k < nj; k++)
      for (int i = 0; i < 6; i++) c[i] += Sd[6 * k + i] * uj[k];
    if (nj == 1) {
      const double *S = d->cdof + 6 * v0;
      double *U = d->abaU + 6 * v0, Ac[6], Ud[6];
      sym6_mulv2(U, Ac, IA, S, c);
      double D = tl_sp_dot(S, U) + m->dof_rotor_inertia[v0];
      if (!(D > 0)) return -1;
      const double dinv = 1.0 / D, u = tau[v0] - tl_sp_dot(S, pA);
      d->abaDinv[36 * b] = dinv;
      d->abau[v0] = u;
      if (!IAp) continue;
      /* pa = pA + IA c + U dinv (u - U . c); IAp += IA - U dinv U^T */
      const double f = (u - tl_sp_dot(U, c)) * dinv;
      for (int i = 0; i < 6; i++) {
        Ud[i] = U[i] * dinv;
        pAp[i] += pA[i] + Ac[i] + U[i] * f;
      }
      rank1_add(IAp, IA, U, Ud);
    } else if (nj > 1) {
      if (backward_multi(d, b, tau, c, IAp, pAp)) return -1;
    } else if (IAp) { /* no DOF: the whole inertia rides on the parent (c = 0) */
      for (int i = 0; i < 36; i++) IAp[i] += IA[i];
      for (int i = 0; i < 6; i++) pAp[i] += pA[i];
    }
  }
  /* forward pass, root first: a = a_parent + c + S du, du = D^-1 (u - U^T (a_parent + c)) */
  double *a0 = d->cacc; /* welded base: fictitious acceleration -g (Featherstone 2008, sec. 5.3) */
  if (b0 == 1) {
    a0[0] = a0[1] = a0[2] = 0;
    tl_v3_scale(a0 + 3, g, -1.0);
  }
  for (int b = b0; b < nb; b++) {
    const int v0 = m->v_adr[b], nj = m->jnt_nv[b];
    double *a = d->cacc + 6 * b; /* holds c */
    if (b == 0) {
      a[3] -= g[0], a[4] -= g[1], a[5] -= g[2];
    } else {
      const double *ap = d->cacc + 6 * parent[b];
      for (int i = 0; i < 6; i++) a[i] += ap[i];
    }
    const double *S = d->cdof + 6 * v0, *U = d->abaU + 6 * v0;
    if (nj == 1) {
      double x = (d->abau[v0] - tl_sp_dot(U, a)) * d->abaDinv[36 * b];
      du[v0] = x;
      for (int i = 0; i < 6; i++) a[i] += S[i] * x;
    } else if (nj > 1) {
      const double *C = d->abaDinv + 36 * b;
      double y[6];
      for (int k = 0; k < nj; k++) { /* y = C^-1 (u - U^T a) */
        double t = d->abau[v0 + k] - tl_sp_dot(U + 6 * k, a);
        for (int l = 0; l < k; l++) t -= C[k * nj + l] * y[l];
        y[k] = t / C[k * nj + k];
      }
      for (int k = nj - 1; k >= 0; k--) { /* du = C^-T y */
        double t = y[k];
        for (int l = k + 1; l < nj; l++) t -= C[l * nj + k] * du[v0 + l];
        du[v0 + k] = t / C[k * nj + k];
      }
      for (int k = 0; k < nj; k++)
        for (int i = 0; i < 6; i++) a[i] += S[6 * k + i] * du[v0 + k];
    }
  }
  return 0;
}
