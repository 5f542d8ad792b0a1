/* L^T D L factorization of the joint-space mass matrix exploiting
 * branch-induced sparsity, and the matching solve (Featherstone, Rigid Body
 * Dynamics Algorithms, 2008, Tables 6.3 and 6.4; Featherstone, "Efficient
 * factorization of the joint-space inertia matrix for branched kinematic
 * trees", IJRR 2005). Only entries (k, i) with i an ancestor DOF of k are
 * touched, so the cost is O(n d^2) for tree depth d instead of O(n^3). */
#include <string.h>

#include "dynamics/dynamics.h"

int tl_dyn_factor(tl_sysdata *d, const double *add) {
  const tl_model *m = d->m;
  const int n = m->nv, *lambda = m->dof_parent;
  double *H = d->LD;
  memcpy(H, d->M, (size_t)n * (size_t)n * sizeof(double));
  if (add)
    for (int k = 0; k < n; k++) H[k * n + k] += add[k];
  for (int k = n - 1; k >= 0; k--) {
    double dkk = H[k * n + k];
    if (!(dkk > 0)) return k + 1;
    for (int i = lambda[k]; i >= 0; i = lambda[i]) {
      double a = H[k * n + i] / dkk;
      for (int j = i; j >= 0; j = lambda[j]) H[i * n + j] -= a * H[k * n + j];
      H[k * n + i] = a;
    }
  }
  return 0;
}

void tl_dyn_solve(const tl_sysdata *d, double *x) {
  const tl_model *m = d->m;
  const int n = m->nv, *lambda = m->dof_parent;
  const double *L = d->LD;
  for (int k = n - 1; k >= 0; k--)
    for (int i = lambda[k]; i >= 0; i = lambda[i]) x[i] -= L[k * n + i] * x[k];
  for (int k = 0; k < n; k++) x[k] /= L[k * n + k];
  for (int k = 0; k < n; k++)
    for (int i = lambda[k]; i >= 0; i = lambda[i]) x[k] -= L[k * n + i] * x[i];
}
