/* Composite rigid body algorithm (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, Table 6.2), in world axes about the world origin: the
 * composite inertia of a subtree is the plain sum of its bodies' inertias,
 * and M[k][l] = cdof_l . (Ic_body(k) cdof_k) for every ancestor DOF l of k.
 *
 * A floating base's DOFs (0..5: translations (0, e_j), rotations
 * (e_j, p x e_j) about the base origin p, see kinematics.c) are not dotted:
 * for a force F = (n, f) about the world origin, cdof_j . F = f_j for a
 * translation and (n + f x p)_j for a rotation (the moment about p), so the
 * base entries of row k are read from F_k, and the base's own 6x6 block is
 * the root's composite inertia expressed at p (base_block). */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

/* M[0..5][0..5] of a floating base from the composite inertia of the whole
 * tree Ic = (m, h, I_O) about the world origin and the base origin p:
 * translation-translation m 1; rotation j - translation i: ([h - m p]x)_ji;
 * rotation-rotation: the rotational inertia about p,
 * I_p = I_O + p g^T + g p^T - 2 (g . p) 1 with g = h - m p / 2
 * (the parallel-axis shift I_p = I_c + m [c - p]x [c - p]x^T written from I_O). */
static void base_block(double *restrict M, int nv, const double Ic[10], const double p[3]) {
  double m = Ic[0], px = p[0], py = p[1], pz = p[2];
  double hx = Ic[1] - m * px, hy = Ic[2] - m * py, hz = Ic[3] - m * pz;   /* h - m p */
  double hm = 0.5 * m;
  double gx = Ic[1] - hm * px, gy = Ic[2] - hm * py, gz = Ic[3] - hm * pz; /* h - m p / 2 */
  double gp2 = 2.0 * (gx * px + gy * py + gz * pz);
  double B[6][6] = {
      {m, 0, 0, 0, hz, -hy},
      {0, m, 0, -hz, 0, hx},
      {0, 0, m, hy, -hx, 0},
      {0, -hz, hy, Ic[4] + 2.0 * px * gx - gp2, Ic[5] + (px * gy + gx * py), Ic[6] + (px * gz + gx * pz)},
      {hz, 0, -hx, 0, Ic[7] + 2.0 * py * gy - gp2, Ic[8] + (py * gz + gy * pz)},
      {-hy, hx, 0, 0, 0, Ic[9] + 2.0 * pz * gz - gp2}};
  B[4][3] = B[3][4];
  B[5][3] = B[3][5];
  B[5][4] = B[4][5];
  for (int i = 0; i < 6; i++) memcpy(M + i * nv, B[i], sizeof(B[i]));
}

void tl_dyn_crba(tl_sysdata *d) {
  const tl_model *m = d->m;
  int nv = m->nv;
  double *restrict M = d->M;
  const double *cdof = d->cdof;
  memcpy(d->crb, d->cinert, (size_t)m->nbody * TL_SPI_SIZE * sizeof(double));
  for (int b = m->nbody - 1; b > 0; b--)
    tl_lanes_add_even(d->crb + TL_SPI_SIZE * m->parent[b], d->crb + TL_SPI_SIZE * b, TL_SPI_SIZE);
  d->M_stamp++;
  /* only the entries of ancestor pairs are written; the others are zero from
   * tl_sysdata_init (calloc) and stay so: the tree does not change */
  int k0 = 0;
  if (m->jnt_type[0] == TL_JOINT_FLOATING) {
    base_block(M, nv, d->crb, d->xpos);
    k0 = 6;
  }
  const double *p = d->xpos;
  for (int k = k0; k < nv; k++) {
    double F[6];
    tl_spi_mulv(F, d->crb + TL_SPI_SIZE * m->dof_body[k], cdof + 6 * k);
    int l = k;
    for (; l >= k0; l = m->dof_parent[l]) {
      double v = tl_sp_dot(cdof + 6 * l, F);
      M[k * nv + l] = v;
      M[l * nv + k] = v;
    }
    if (l == 5) { /* the floating base's DOFs 0..5 (k0 = 6): f, then n + f x p */
      double fp[3], *row = M + k * nv;
      tl_v3_cross(fp, F + 3, p);
      row[0] = F[3]; row[1] = F[4]; row[2] = F[5];
      row[3] = F[0] + fp[0]; row[4] = F[1] + fp[1]; row[5] = F[2] + fp[2];
      for (int j = 0; j < 6; j++) M[j * nv + k] = row[j];
    }
  }
  for (int k = 0; k < nv; k++) M[k * nv + k] += m->dof_rotor_inertia[k];
}
