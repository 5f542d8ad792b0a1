/* Internal template of src/dynamics/inverse_mul.c: the kernels of
 * tl_dyn_neg_inverse_mul for one vector width. Included once per width, with
 *   SR_VT    the vector type (GCC/Clang vector extension) or double,
 *   SR_NL    its lanes (1, 2 or 4),
 *   SR_ATTR  a function attribute (a target("...") for a wider instruction
 *            set than the build's baseline, or nothing),
 *   SR_SPLAT(c)  an SR_VT with c in every lane,
 *   SR(x)    the name of x in this instantiation;
 * all of which it undefines at its end.
 * Every entry is its own sum, in the same order in every width (from 0,
 * then each term a product and a subtraction, never fused): the widths give
 * the same bits. */

/* Unaligned vectors for loads and stores. */
typedef SR_VT SR(uv) __attribute__((aligned(8)));

/* NV vectors of z <- -sum over the rows k in anc[0..na) and then [k0, k1)
 * of X[k n] A[k n] (X: a column of the matrix, row stride n; A: M^-1 from
 * the first column of the block, row stride n), vector t < NV - 1 at
 * column t SR_NL, the last at dl, the sums from 0 in NV accumulators, each
 * term a product and a subtraction (the same in every width, so a column's
 * value does not depend on the block or the width that computes it: the
 * last vector may overlap the one before). */
#define SR_COLS(NV)                                                                                          \
  static inline SR_ATTR void SR(cols##NV)(double *restrict z, const double *restrict A,                      \
                                          const double *restrict X, const int *restrict anc, int na, int k0,  \
                                          int k1, size_t n, size_t dl) {                                     \
    SR_VT acc[NV];                                                                                           \
    for (int t = 0; t < NV; t++) acc[t] = SR_SPLAT(0.0);                                                     \
    for (int j = 0; j < na; j++) {                                                                           \
      const size_t o = (size_t)anc[j] * n;                                                                   \
      const SR_VT f = SR_SPLAT(X[o]);                                                                        \
      const double *restrict r = A + o;                                                                      \
      for (int t = 0; t < NV - 1; t++) acc[t] -= f * *(const SR(uv) *)(r + SR_NL * t);                      \
      acc[NV - 1] -= f * *(const SR(uv) *)(r + dl);                                                          \
    }                                                                                                        \
    const double *restrict r = A + (size_t)k0 * n, *restrict x = X + (size_t)k0 * n;                         \
    for (int k = k0; k < k1; k++, r += n, x += n) {                                                          \
      const SR_VT f = SR_SPLAT(*x);                                                                          \
      for (int t = 0; t < NV - 1; t++) acc[t] -= f * *(const SR(uv) *)(r + SR_NL * t);                      \
      acc[NV - 1] -= f * *(const SR(uv) *)(r + dl);                                                          \
    }                                                                                                        \
    for (int t = 0; t < NV - 1; t++) *(SR(uv) *)(z + SR_NL * t) = acc[t];                                   \
    *(SR(uv) *)(z + dl) = acc[NV - 1];                                                                       \
  }
SR_COLS(1)
SR_COLS(2)
SR_COLS(3)
SR_COLS(4)
SR_COLS(5)
SR_COLS(6)
SR_COLS(7)
SR_COLS(8)
#undef SR_COLS

/* Z^T <- -(A X)^T for A = M^-1 (dense, symmetric, n >= SR_NL) and X with
 * the pattern of tl_dyn_solve_rows_neg (column c non-zero only on the
 * ancestors of c and its subtree [c, dof_end[c])): row c of zt (length n)
 * is minus the sum of X[k][c] A[k] over that pattern, for the columns
 * [cx, n) of X (rows [0, cx) of zt are left alone). Each row in blocks of
 * up to 8 vectors; the last vector of the last block ends at n (it may
 * overlap the one before). */
static SR_ATTR void SR(inverse_cols)(const tl_sysdata *d, const double *A, const double *X, int cx, double *zt) {
  const int n = d->m->nv, *end = d->dof_end, *anc_adr = d->dof_anc_adr, *anc_all = d->dof_anc;
  const int nvec = (n + SR_NL - 1) / SR_NL;
  const size_t sn = (size_t)n;
  for (int v0 = 0; v0 < nvec; v0 += 8) {
    const int nb = nvec - v0 < 8 ? nvec - v0 : 8;
    const size_t c0 = (size_t)SR_NL * v0, dl = (v0 + nb == nvec ? sn - SR_NL : c0 + SR_NL * (nb - 1)) - c0;
    const double *Ab = A + c0;
    for (int c = cx; c < n; c++) {
      const int *anc = anc_all + anc_adr[c], na = anc_adr[c + 1] - anc_adr[c], e = end[c];
      double *z = zt + (size_t)c * sn + c0;
      const double *Xc = X + c;
      switch (nb) {
        case 1: SR(cols1)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        case 2: SR(cols2)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        case 3: SR(cols3)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        case 4: SR(cols4)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        case 5: SR(cols5)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        case 6: SR(cols6)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        case 7: SR(cols7)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
        default: SR(cols8)(z, Ab, Xc, anc, na, c, e, sn, dl); break;
      }
    }
  }
}

/* Y <- Z^T (n x n, row-major): SR_NL x SR_NL blocks transposed in
 * registers (vector shuffles: moves, no arithmetic), the rest one by one. */
static SR_ATTR void SR(transpose)(double *restrict Y, const double *restrict Z, int n) {
  const size_t sn = (size_t)n;
  int nb = 0; /* rows and columns [0, nb) go by blocks */
#if SR_NL == 4
  typedef long long sr_m4 __attribute__((vector_size(32)));
  nb = n - n % 4;
  for (int c0 = 0; c0 < nb; c0 += 4)
    for (int i0 = 0; i0 < nb; i0 += 4) {
      SR_VT a0, a1, a2, a3;
      memcpy(&a0, Z + (size_t)c0 * sn + i0, sizeof a0);
      memcpy(&a1, Z + (size_t)(c0 + 1) * sn + i0, sizeof a1);
      memcpy(&a2, Z + (size_t)(c0 + 2) * sn + i0, sizeof a2);
      memcpy(&a3, Z + (size_t)(c0 + 3) * sn + i0, sizeof a3);
      const SR_VT t0 = __builtin_shuffle(a0, a1, (sr_m4){0, 4, 2, 6}),
                  t1 = __builtin_shuffle(a0, a1, (sr_m4){1, 5, 3, 7}),
                  t2 = __builtin_shuffle(a2, a3, (sr_m4){0, 4, 2, 6}),
                  t3 = __builtin_shuffle(a2, a3, (sr_m4){1, 5, 3, 7});
      const SR_VT y0 = __builtin_shuffle(t0, t2, (sr_m4){0, 1, 4, 5}),
                  y1 = __builtin_shuffle(t1, t3, (sr_m4){0, 1, 4, 5}),
                  y2 = __builtin_shuffle(t0, t2, (sr_m4){2, 3, 6, 7}),
                  y3 = __builtin_shuffle(t1, t3, (sr_m4){2, 3, 6, 7});
      memcpy(Y + (size_t)i0 * sn + c0, &y0, sizeof y0);
      memcpy(Y + (size_t)(i0 + 1) * sn + c0, &y1, sizeof y1);
      memcpy(Y + (size_t)(i0 + 2) * sn + c0, &y2, sizeof y2);
      memcpy(Y + (size_t)(i0 + 3) * sn + c0, &y3, sizeof y3);
    }
#elif SR_NL == 2
  typedef long long sr_m2 __attribute__((vector_size(16)));
  nb = n - n % 2;
  for (int c0 = 0; c0 < nb; c0 += 2)
    for (int i0 = 0; i0 < nb; i0 += 2) {
      SR_VT a0, a1;
      memcpy(&a0, Z + (size_t)c0 * sn + i0, sizeof a0);
      memcpy(&a1, Z + (size_t)(c0 + 1) * sn + i0, sizeof a1);
      const SR_VT y0 = __builtin_shuffle(a0, a1, (sr_m2){0, 2}), y1 = __builtin_shuffle(a0, a1, (sr_m2){1, 3});
      memcpy(Y + (size_t)i0 * sn + c0, &y0, sizeof y0);
      memcpy(Y + (size_t)(i0 + 1) * sn + c0, &y1, sizeof y1);
    }
#endif
  for (int i = 0; i < n; i++)
    for (int c = i < nb ? nb : 0; c < n; c++) Y[(size_t)i * sn + c] = Z[(size_t)c * sn + i];
}

#undef SR_VT
#undef SR_NL
#undef SR_ATTR
#undef SR_SPLAT
#undef SR
