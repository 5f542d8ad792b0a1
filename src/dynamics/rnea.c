/* Recursive Newton-Euler inverse dynamics (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, Table 5.1), in world axes about the world origin.
 * Gravity enters as a fictitious base acceleration -g (sec. 5.3). */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

void tl_dyn_rnea(tl_sysdata *d, const double g[3], const double *du, int u_on, double *tau) {
  const tl_model *m = d->m;
  const double *u = d->u;
  for (int b = 0; b < m->nbody; b++) {
    double *a = d->cacc + 6 * b, *f = d->cfrc + 6 * b, Iv[6], t[6];
    const double *v = d->cvel + 6 * b, *Isp = d->cinert + TL_SPI_SIZE * b;
    if (b == 0) {
      memset(a, 0, 6 * sizeof(double));
      tl_v3_scale(a + 3, g, -1.0);
    } else {
      memcpy(a, d->cacc + 6 * m->parent[b], 6 * sizeof(double));
    }
    for (int k = m->v_adr[b]; k < m->v_adr[b] + m->jnt_nv[b]; k++)
      for (int i = 0; i < 6; i++)
        a[i] += (du ? d->cdof[6 * k + i] * du[k] : 0.0) + (u_on ? d->cdof_dot[6 * k + i] * u[k] : 0.0);
    tl_spi_mulv(f, Isp, a);
    if (u_on) {
      tl_spi_mulv(Iv, Isp, v);
      tl_sp_cross_force(t, v, Iv);
      for (int i = 0; i < 6; i++) f[i] += t[i];
    }
  }
  for (int b = m->nbody - 1; b >= 0; b--) {
    const double *f = d->cfrc + 6 * b;
    for (int k = m->v_adr[b]; k < m->v_adr[b] + m->jnt_nv[b]; k++)
      tau[k] = tl_sp_dot(d->cdof + 6 * k, f);
    if (b > 0)
      for (int i = 0; i < 6; i++) d->cfrc[6 * m->parent[b] + i] += f[i];
  }
}
