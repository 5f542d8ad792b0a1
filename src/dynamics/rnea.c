/* Recursive Newton-Euler inverse dynamics (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, Table 5.1), in world axes about the world origin.
 * Gravity enters as a fictitious base acceleration -g (sec. 5.3). */
#include <string.h>

#include "dynamics/dynamics.h"
#include "math/tl_math.h"

void tl_dyn_accelerations(tl_sysdata *d, const double *g, const double *du, int u_on) {
  const tl_model *m = d->m;
  for (int b = 0; b < m->nbody; b++) {
    double *a = d->cacc + 6 * b;
    if (b == 0) {
      memset(a, 0, 6 * sizeof(double));
      if (g) tl_v3_scale(a + 3, g, -1.0);
    } else {
      memcpy(a, d->cacc + 6 * m->parent[b], 6 * sizeof(double));
    }
    for (int k = m->v_adr[b]; k < m->v_adr[b] + m->jnt_nv[b]; k++)
      for (int i = 0; i < 6; i++)
        a[i] += (du ? d->cdof[6 * k + i] * du[k] : 0.0) + (u_on ? d->cdof_dot[6 * k + i] * d->u[k] : 0.0);
  }
}

void tl_dyn_rnea(tl_sysdata *d, const double g[3], const double *du, int u_on, double *tau) {
  const tl_model *m = d->m;
  tl_dyn_accelerations(d, g, du, u_on);
  for (int b = 0; b < m->nbody; b++) {
    double *f = d->cfrc + 6 * b, Iv[6], t[6];
    const double *v = d->cvel + 6 * b, *Isp = d->cinert + TL_SPI_SIZE * b;
    tl_spi_mulv(f, Isp, d->cacc + 6 * b);
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
