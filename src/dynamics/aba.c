/* Articulated-body algorithm (Featherstone, Rigid Body Dynamics Algorithms,
 * 2008, Table 7.1), in world axes about the world origin: no coordinate
 * transforms between bodies, and multi-DOF joints (floating base, spherical,
 * universal) handled with their nj x nj joint-space inertia D. Rotor inertia
 * adds to the diagonal of D, exactly as it adds to the diagonal of M. */
#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

/* 6x6 matrix of a packed rigid-body inertia: [[I_O, [h]x], [[h]x^T, m 1]]. */
static void spi_to_mat(double A[36], const double Isp[10]) {
  const double *h = Isp + 1;
  double I[9] = {Isp[4], Isp[5], Isp[6], Isp[5], Isp[7], Isp[8], Isp[6], Isp[8], Isp[9]}, H[9];
  tl_m3_skew(H, h);
  memset(A, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      A[6 * i + j] = I[3 * i + j];
      A[6 * i + j + 3] = H[3 * i + j];
      A[6 * (i + 3) + j] = H[3 * j + i];
    }
  A[21] = A[28] = A[35] = Isp[0];
}

static void mat6_mulv(double r[6], const double A[36], const double v[6]) {
  for (int i = 0; i < 6; i++) r[i] = tl_sp_dot(A + 6 * i, v);
}

/* Invert the symmetric positive-definite n x n matrix D (n <= 6) by Cholesky. */
static int spd_inverse(int n, const double *D, double *Dinv) {
  double L[36] = {0}, Linv[36] = {0};
  for (int j = 0; j < n; j++) {
    double s = D[j * n + j];
    for (int k = 0; k < j; k++) s -= L[j * 6 + k] * L[j * 6 + k];
    if (!(s > 0)) return -1;
    L[j * 6 + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = D[i * n + j];
      for (int k = 0; k < j; k++) t -= L[i * 6 + k] * L[j * 6 + k];
      L[i * 6 + j] = t / L[j * 6 + j];
    }
  }
  for (int j = 0; j < n; j++) { /* Linv = L^-1, lower triangular */
    Linv[j * 6 + j] = 1.0 / L[j * 6 + j];
    for (int i = j + 1; i < n; i++) {
      double t = 0;
      for (int k = j; k < i; k++) t -= L[i * 6 + k] * Linv[k * 6 + j];
      Linv[i * 6 + j] = t / L[i * 6 + i];
    }
  }
  for (int i = 0; i < n; i++) /* Dinv = Linv^T Linv */
    for (int j = 0; j < n; j++) {
      double t = 0;
      for (int k = i > j ? i : j; k < n; k++) t += Linv[k * 6 + i] * Linv[k * 6 + j];
      Dinv[i * n + j] = t;
    }
  return 0;
}

/* Backward pass for body b: U, D^-1, u; then hand the articulated inertia
 * and bias force on to the parent. */
static int aba_backward(tl_sysdata *d, int b, const double *tau) {
  const tl_model *m = d->m;
  int v0 = m->v_adr[b], nj = m->jnt_nv[b];
  double *IA = d->abaI + 36 * b, *pA = d->abap + 6 * b, *Dinv = d->abaDinv + 36 * b;
  double D[36], c[6] = {0}, Ia[36], pa[6], t[6];
  for (int k = 0; k < nj; k++) mat6_mulv(d->abaU + 6 * (v0 + k), IA, d->cdof + 6 * (v0 + k));
  for (int i = 0; i < nj; i++) {
    for (int j = 0; j < nj; j++) D[i * nj + j] = tl_sp_dot(d->cdof + 6 * (v0 + i), d->abaU + 6 * (v0 + j));
    D[i * nj + i] += m->dof_rotor_inertia[v0 + i];
    d->abau[v0 + i] = tau[v0 + i] - tl_sp_dot(d->cdof + 6 * (v0 + i), pA);
  }
  if (nj && spd_inverse(nj, D, Dinv)) return -1;
  if (b == 0) return 0;
  /* Ia = IA - U D^-1 U^T ; pa = pA + Ia c + U D^-1 u, c = velocity-product acceleration */
  for (int k = 0; k < nj; k++)
    for (int i = 0; i < 6; i++) c[i] += d->cdof_dot[6 * (v0 + k) + i] * d->u[v0 + k];
  memcpy(Ia, IA, sizeof(Ia));
  memcpy(pa, pA, sizeof(pa));
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nj; j++) {
      const double *Ui = d->abaU + 6 * (v0 + i), *Uj = d->abaU + 6 * (v0 + j);
      double w = Dinv[i * nj + j];
      for (int r = 0; r < 6; r++)
        for (int s = 0; s < 6; s++) Ia[6 * r + s] -= Ui[r] * w * Uj[s];
      for (int r = 0; r < 6; r++) pa[r] += Ui[r] * w * d->abau[v0 + j];
    }
  mat6_mulv(t, Ia, c);
  double *IAp = d->abaI + 36 * m->parent[b], *pAp = d->abap + 6 * m->parent[b];
  for (int i = 0; i < 36; i++) IAp[i] += Ia[i];
  for (int i = 0; i < 6; i++) pAp[i] += pa[i] + t[i];
  return 0;
}

int tl_dyn_aba(tl_sysdata *d, const double g[3], const double *tau, double *du) {
  const tl_model *m = d->m;
  for (int b = 0; b < m->nbody; b++) { /* IA = I, pA = v x* I v */
    double Iv[6];
    const double *v = d->cvel + 6 * b;
    spi_to_mat(d->abaI + 36 * b, d->cinert + TL_SPI_SIZE * b);
    tl_spi_mulv(Iv, d->cinert + TL_SPI_SIZE * b, v);
    tl_sp_cross_force(d->abap + 6 * b, v, Iv);
  }
  for (int b = m->nbody - 1; b >= 0; b--)
    if (aba_backward(d, b, tau)) return -1;
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], nj = m->jnt_nv[b];
    double *a = d->cacc + 6 * b, ua[6];
    if (b == 0) {
      memset(a, 0, 6 * sizeof(double));
      tl_v3_scale(a + 3, g, -1.0);
    } else {
      memcpy(a, d->cacc + 6 * m->parent[b], 6 * sizeof(double));
    }
    for (int k = 0; k < nj; k++)
      for (int i = 0; i < 6; i++) a[i] += d->cdof_dot[6 * (v0 + k) + i] * d->u[v0 + k];
    for (int k = 0; k < nj; k++) ua[k] = d->abau[v0 + k] - tl_sp_dot(d->abaU + 6 * (v0 + k), a);
    for (int k = 0; k < nj; k++) {
      double s = 0;
      for (int j = 0; j < nj; j++) s += d->abaDinv[36 * b + k * nj + j] * ua[j];
      du[v0 + k] = s;
    }
    for (int k = 0; k < nj; k++)
      for (int i = 0; i < 6; i++) a[i] += d->cdof[6 * (v0 + k) + i] * du[v0 + k];
  }
  return 0;
}
