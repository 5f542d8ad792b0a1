/* Composite rigid body algorithm (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, Table 6.2), in world axes about the world origin: the
 * composite inertia of a subtree is the plain sum of its bodies' inertias,
 * and M[k][l] = cdof_l . (Ic_body(k) cdof_k) for every ancestor DOF l of k. */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

void tl_dyn_crba(tl_sysdata *d) {
  const tl_model *m = d->m;
  int nv = m->nv;
  memcpy(d->crb, d->cinert, (size_t)m->nbody * TL_SPI_SIZE * sizeof(double));
  for (int b = m->nbody - 1; b > 0; b--)
    tl_spi_add(d->crb + TL_SPI_SIZE * m->parent[b], d->crb + TL_SPI_SIZE * b);
  d->M_stamp++;
  /* only the entries of ancestor pairs are written; the others are zero from
   * tl_sysdata_init (calloc) and stay so: the tree does not change */
  for (int k = 0; k < nv; k++) {
    double F[6];
    tl_spi_mulv(F, d->crb + TL_SPI_SIZE * m->dof_body[k], d->cdof + 6 * k);
    for (int l = k; l >= 0; l = m->dof_parent[l]) {
      double v = tl_sp_dot(d->cdof + 6 * l, F);
      d->M[k * nv + l] = v;
      d->M[l * nv + k] = v;
    }
    d->M[k * nv + k] += m->dof_rotor_inertia[k];
  }
}
