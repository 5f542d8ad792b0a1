/* Internal template of src/dynamics/solve_rows.c: the register-blocked row
 * kernels and the solve of tl_dyn_solve_rows_neg for one vector width.
 * Included once per width, with
 *   SR_VT    the vector type (GCC/Clang vector extension) or double,
 *   SR_NL    its lanes (1, 2 or 4),
 *   SR_ATTR  a function attribute (a target("...") for a wider instruction
 *            set than the build's baseline, or nothing),
 *   SR_SPLAT(c)     an SR_VT with c in every lane,
 *   SR_CF_ALIGN     the alignment of the coefficient vectors in the scratch
 *                   (the natural one where whole-vector memory operands
 *                   need it, SSE2; 8 where unaligned ones are free, VEX),
 *   SR(x)    the name of x in this instantiation;
 * all of which it undefines at its end.
 * Every column is updated on its own, in the same order in every width
 * (first the scaling, one product, then the terms j = 0, 1, ... each a
 * product and a subtraction, never fused): the widths give the same bits. */

/* The coefficient vectors in the scratch. */
typedef SR_VT SR(cfv) __attribute__((aligned(SR_CF_ALIGN)));

/* The coefficient j in every lane: the ready vector of this width, or (the
 * 2-column tail kernels of the 4-lane variant) its first lane, splat. */
#define SR_COEF_VEC(cf, j) ((cf)[j])
#define SR_SPLAT2(c) tl_lanes_set((c), (c))
#define SR_COEF_HALF(cf, j) SR_SPLAT2(((const double *)((cf) + (j)))[0])

/* Columns [c0, c0 + W) of row x: x <- sx x - sum over the rows X + off[j]
 * (j < nr) of the coefficients cf[j] times them, the sums in W / NL
 * accumulators of type VT and x written once. */
#define SR_PULL(NAME, VT, NL, W, SCALED, COEF, SPLAT)                                                   \
  static inline SR_ATTR void NAME(double *restrict x, const double *restrict X,                         \
                                  const size_t *restrict off, const SR(cfv) *restrict cf, int nr, int c0, \
                                  double sx) {                                                          \
    VT acc[(W) / (NL)], y;                                                                              \
    const VT sv = SPLAT(sx);                                                                            \
    (void)sv;                                                                                           \
    for (int t = 0; t < (W) / (NL); t++) {                                                              \
      memcpy(&y, x + c0 + (NL) * t, sizeof y);                                                          \
      acc[t] = SCALED ? sv * y : y;                                                                     \
    }                                                                                                   \
    int j = 0;                                                                                          \
    for (; j + 2 <= nr; j += 2) {                                                                       \
      const double *restrict r0 = X + off[j] + c0, *restrict r1 = X + off[j + 1] + c0;                  \
      const VT f0 = COEF(cf, j), f1 = COEF(cf, j + 1);                                                  \
      for (int t = 0; t < (W) / (NL); t++) memcpy(&y, r0 + (NL) * t, sizeof y), acc[t] -= f0 * y;       \
      for (int t = 0; t < (W) / (NL); t++) memcpy(&y, r1 + (NL) * t, sizeof y), acc[t] -= f1 * y;       \
    }                                                                                                   \
    if (j < nr) {                                                                                       \
      const double *restrict r0 = X + off[j] + c0;                                                      \
      const VT f0 = COEF(cf, j);                                                                        \
      for (int t = 0; t < (W) / (NL); t++) memcpy(&y, r0 + (NL) * t, sizeof y), acc[t] -= f0 * y;       \
    }                                                                                                   \
    for (int t = 0; t < (W) / (NL); t++) memcpy(x + c0 + (NL) * t, &acc[t], sizeof acc[t]);            \
  }

SR_PULL(SR(pull8), SR_VT, SR_NL, 8 * SR_NL, 0, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull4), SR_VT, SR_NL, 4 * SR_NL, 0, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull2), SR_VT, SR_NL, 2 * SR_NL, 0, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull1), SR_VT, SR_NL, SR_NL, 0, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull8s), SR_VT, SR_NL, 8 * SR_NL, 1, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull4s), SR_VT, SR_NL, 4 * SR_NL, 1, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull2s), SR_VT, SR_NL, 2 * SR_NL, 1, SR_COEF_VEC, SR_SPLAT)
SR_PULL(SR(pull1s), SR_VT, SR_NL, SR_NL, 1, SR_COEF_VEC, SR_SPLAT)
#if SR_NL == 4 && TL_LANES == 2 /* the last two columns on the baseline's 2-lane vectors */
SR_PULL(SR(pullh), tl_lanes, 2, 2, 0, SR_COEF_HALF, SR_SPLAT2)
SR_PULL(SR(pullhs), tl_lanes, 2, 2, 1, SR_COEF_HALF, SR_SPLAT2)
#define SR_HALF 1
#endif
#undef SR_PULL
#undef SR_COEF_VEC
#undef SR_COEF_HALF
#undef SR_SPLAT2

/* Row x (columns [c0, c1)) <- sx x - sum_j cf[j] rows[j] (sx only when
 * scaled): blocks of 8 SR_NL columns, then one each of 4, 2, 1 SR_NL as the
 * width left needs, then single columns. */
static inline SR_ATTR void SR(pull_row)(double *restrict x, const double *X, const size_t *off,
                                        const SR(cfv) *cf, int nr, int c0, int c1, int scaled, double sx) {
  int c = c0;
  if (scaled) {
    for (; c + 8 * SR_NL <= c1; c += 8 * SR_NL) SR(pull8s)(x, X, off, cf, nr, c, sx);
    if (c + 4 * SR_NL <= c1) SR(pull4s)(x, X, off, cf, nr, c, sx), c += 4 * SR_NL;
    if (c + 2 * SR_NL <= c1) SR(pull2s)(x, X, off, cf, nr, c, sx), c += 2 * SR_NL;
    if (c + SR_NL <= c1) SR(pull1s)(x, X, off, cf, nr, c, sx), c += SR_NL;
#ifdef SR_HALF
    if (c + 2 <= c1) SR(pullhs)(x, X, off, cf, nr, c, sx), c += 2;
#endif
  } else {
    for (; c + 8 * SR_NL <= c1; c += 8 * SR_NL) SR(pull8)(x, X, off, cf, nr, c, sx);
    if (c + 4 * SR_NL <= c1) SR(pull4)(x, X, off, cf, nr, c, sx), c += 4 * SR_NL;
    if (c + 2 * SR_NL <= c1) SR(pull2)(x, X, off, cf, nr, c, sx), c += 2 * SR_NL;
    if (c + SR_NL <= c1) SR(pull1)(x, X, off, cf, nr, c, sx), c += SR_NL;
#ifdef SR_HALF
    if (c + 2 <= c1) SR(pullh)(x, X, off, cf, nr, c, sx), c += 2;
#endif
  }
  for (; c < c1; c++) {
    double a = scaled ? sx * x[c] : x[c];
    for (int j = 0; j < nr; j++) a -= ((const double *)(cf + j))[0] * X[off[j] + c];
    x[c] = a;
  }
}
#undef SR_HALF

/* X <- -(L^T D L)^-1 X, Y <- -(L^T D L)^-1 Y: the two passes described at
 * tl_dyn_solve_rows_neg_from (solve_rows.c), from column cx of X.
 * scratch: nv coefficient vectors and nv row offsets. */
static SR_ATTR void SR(solve)(const tl_sysdata *d, double *X, int cx, double *Y, void *scratch) {
  const tl_model *m = d->m;
  const int n = m->nv, *end = d->dof_end, *anc_adr = d->dof_anc_adr, *anc_all = d->dof_anc;
  const double *L = d->LD;
  SR(cfv) *cf = scratch;           /* [nv] coefficients, one in every lane */
  size_t *off = (size_t *)(cf + n); /* [nv] row offsets (row index times nv) */
  const size_t sn = (size_t)n;
  for (int i = n - 2; i >= 0; i--) {
    const int e = end[i], nr = e - i - 1;
    if (nr <= 0) continue;
    for (int j = 0; j < nr; j++) cf[j] = SR_SPLAT(L[(size_t)i * n + i + 1 + j]), off[j] = (size_t)(i + 1 + j) * sn;
    SR(pull_row)(X + (size_t)i * n, X, off, cf, nr, cx, e, 0, 1.0);
    if (Y) SR(pull_row)(Y + (size_t)i * n, Y, off, cf, nr, 0, e, 0, 1.0);
  }
  for (int k = 0; k < n; k++) {
    const int a0 = anc_adr[k], nr = anc_adr[k + 1] - a0;
    const double s = -d->LDinv[k];
    if (nr <= 0) { /* no ancestor: only the scaling, on the non-zero columns */
      double *restrict xk = X + (size_t)k * n;
      for (int c = cx; c < end[k]; c++) xk[c] *= s;
      if (Y) {
        double *restrict yk = Y + (size_t)k * n;
        for (int c = 0; c < end[k]; c++) yk[c] *= s;
      }
      continue;
    }
    const int *anc = anc_all + a0;
    for (int j = 0; j < nr; j++) cf[j] = SR_SPLAT(L[(size_t)k * n + anc[j]]), off[j] = (size_t)anc[j] * sn;
    SR(pull_row)(X + (size_t)k * n, X, off, cf, nr, cx, n, 1, s);
    if (Y) SR(pull_row)(Y + (size_t)k * n, Y, off, cf, nr, 0, n, 1, s);
  }
}

#undef SR_VT
#undef SR_NL
#undef SR_ATTR
#undef SR_SPLAT
#undef SR_CF_ALIGN
#undef SR
