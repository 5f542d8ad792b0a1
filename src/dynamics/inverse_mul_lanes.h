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

/* NV vectors of z <- -(sum over the rows k in anc[0..na) of X[k xa] A[k n],
 * then over [k0, k1) of X[k xs] A[k n]) (X: coefficients; A: the rows
 * summed, from the first column of the block, row stride n), vector t < NV - 1 at
 * column t SR_NL, the last at dl, the sums from 0 in NV accumulators, each
 * term a product and a subtraction (the same in every width, so a column's
 * value does not depend on the block or the width that computes it: the
 * last vector may overlap the one before). */
#define SR_COLS(NV)                                                                                           \
  static inline SR_ATTR void SR(cols##NV)(double *restrict z, const double *restrict A,                       \
                                          const double *restrict X, const int *restrict anc, int na, int k0,  \
                                          int k1, size_t n, size_t xa, size_t xs, size_t dl) {                \
    SR_VT acc[NV];                                                                                            \
    for (int t = 0; t < NV; t++) acc[t] = SR_SPLAT(0.0);                                                      \
    for (int j = 0; j < na; j++) {                                                                            \
      const SR_VT f = SR_SPLAT(X[(size_t)anc[j] * xa]);                                                       \
      const double *restrict r = A + (size_t)anc[j] * n;                                                      \
      for (int t = 0; t < NV - 1; t++) acc[t] -= f * *(const SR(uv) *)(r + SR_NL * t);                        \
      acc[NV - 1] -= f * *(const SR(uv) *)(r + dl);                                                           \
    }                                                                                                         \
    const double *restrict r = A + (size_t)k0 * n, *restrict x = X + (size_t)k0 * xs;                         \
    for (int k = k0; k < k1; k++, r += n, x += xs) {                                                          \
      const SR_VT f = SR_SPLAT(*x);                                                                           \
      for (int t = 0; t < NV - 1; t++) acc[t] -= f * *(const SR(uv) *)(r + SR_NL * t);                        \
      acc[NV - 1] -= f * *(const SR(uv) *)(r + dl);                                                           \
    }                                                                                                         \
    for (int t = 0; t < NV - 1; t++) *(SR(uv) *)(z + SR_NL * t) = acc[t];                                     \
    *(SR(uv) *)(z + dl) = acc[NV - 1];                                                                        \
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

/* The same for NV = 9 to 13 vectors with named accumulators (an array of
 * more than eight vectors is past GCC's limit for keeping an aggregate in
 * registers; 13 accumulators, the coefficient and a product fill 15 of the
 * 16 vector registers of x86-64). */
#define SR_T(i, p) \
  if (nvk > i) a##i -= f * *(const SR(uv) *)(i == nvk - 1 ? (p) + dl : (p) + (size_t)i * SR_NL);
#define SR_TERMS(p) SR_T(0, p) SR_T(1, p) SR_T(2, p) SR_T(3, p) SR_T(4, p) SR_T(5, p) SR_T(6, p) SR_T(7, p) \
  SR_T(8, p) SR_T(9, p) SR_T(10, p) SR_T(11, p) SR_T(12, p)
#define SR_S(i) \
  if (nvk > i) *(SR(uv) *)(i == nvk - 1 ? z + dl : z + (size_t)i * SR_NL) = a##i;
#define SR_COLS_BIG(NV)                                                                                         \
  static inline SR_ATTR void SR(cols##NV)(double *restrict z, const double *restrict A,                         \
                                          const double *restrict X, const int *restrict anc, int na, int k0,    \
                                          int k1, size_t n, size_t xa, size_t xs, size_t dl) {                  \
    enum { nvk = NV };                                                                                          \
    SR_VT a0 = SR_SPLAT(0.0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,  \
          a10 = a0, a11 = a0, a12 = a0;                                                                         \
    for (int j = 0; j < na; j++) {                                                                              \
      const SR_VT f = SR_SPLAT(X[(size_t)anc[j] * xa]);                                                         \
      const double *restrict r = A + (size_t)anc[j] * n;                                                        \
      SR_TERMS(r)                                                                                               \
    }                                                                                                           \
    const double *restrict r = A + (size_t)k0 * n, *restrict x = X + (size_t)k0 * xs;                           \
    for (int k = k0; k < k1; k++, r += n, x += xs) {                                                            \
      const SR_VT f = SR_SPLAT(*x);                                                                             \
      SR_TERMS(r)                                                                                               \
    }                                                                                                           \
    SR_S(0) SR_S(1) SR_S(2) SR_S(3) SR_S(4) SR_S(5) SR_S(6) SR_S(7) SR_S(8) SR_S(9) SR_S(10) SR_S(11) SR_S(12) \
    (void)a9, (void)a10, (void)a11, (void)a12;                                                                  \
  }
SR_COLS_BIG(9)
SR_COLS_BIG(10)
SR_COLS_BIG(11)
SR_COLS_BIG(12)
SR_COLS_BIG(13)
#undef SR_COLS_BIG
#undef SR_S
#undef SR_TERMS
#undef SR_T

/* z[cb, ce) <- -(sum over k in anc[0..na) of X[k xa] A[k], then over k in
 * [k0, k1) of X[k xs] A[k]) for the rows A[k] = A + k n, with nvec =
 * ceil((ce - cb) / SR_NL) >= 1 vectors: one block of 9 to 13 vectors, or
 * blocks of up to 8, the last vector of the last block ending at ce (it
 * may overlap the one before). Inlined into a caller that passes nvec as a
 * constant up to 13, it is one kernel. */
__attribute__((always_inline)) static inline SR_ATTR void SR(rowsum)(double *restrict z, const double *restrict A,
                                                                     const double *restrict X, size_t xa, size_t xs,
                                                                     const int *restrict anc, int na, int k0,
                                                                     int k1, int n, int cb, int ce, int nvec) {
  const size_t sn = (size_t)n;
  if (nvec >= 9 && nvec <= 13) { /* one block */
    const size_t dl = (size_t)(ce - cb) - SR_NL;
    switch (nvec) {
      case 9: SR(cols9)(z + cb, A + cb, X, anc, na, k0, k1, sn, xa, xs, dl); return;
      case 10: SR(cols10)(z + cb, A + cb, X, anc, na, k0, k1, sn, xa, xs, dl); return;
      case 11: SR(cols11)(z + cb, A + cb, X, anc, na, k0, k1, sn, xa, xs, dl); return;
      case 12: SR(cols12)(z + cb, A + cb, X, anc, na, k0, k1, sn, xa, xs, dl); return;
      default: SR(cols13)(z + cb, A + cb, X, anc, na, k0, k1, sn, xa, xs, dl); return;
    }
  }
  for (int v0 = 0; v0 < nvec; v0 += 8) {
    const int nb = nvec - v0 < 8 ? nvec - v0 : 8;
    const size_t c0 = (size_t)cb + (size_t)SR_NL * v0,
                 dl = (v0 + nb == nvec ? (size_t)ce - SR_NL : c0 + SR_NL * (nb - 1)) - c0;
    switch (nb) {
      case 1: SR(cols1)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      case 2: SR(cols2)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      case 3: SR(cols3)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      case 4: SR(cols4)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      case 5: SR(cols5)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      case 6: SR(cols6)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      case 7: SR(cols7)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
      default: SR(cols8)(z + c0, A + c0, X, anc, na, k0, k1, sn, xa, xs, dl); break;
    }
  }
}

/* rowsum on the columns [cb, ce) (z elsewhere left alone; a range
 * narrower than a vector is widened to one, within [0, n), n >= SR_NL). */
static inline SR_ATTR void SR(rowsum_range)(double *restrict z, const double *restrict A, const double *restrict X,
                                            size_t xa, size_t xs, const int *restrict anc, int na, int k0, int k1,
                                            int n, int cb, int ce) {
  if (ce - cb < SR_NL) {
    if (ce >= SR_NL)
      cb = ce - SR_NL;
    else
      cb = 0, ce = SR_NL;
  }
  SR(rowsum)(z, A, X, xa, xs, anc, na, k0, k1, n, cb, ce, (ce - cb + SR_NL - 1) / SR_NL);
}

/* Calls F(..., nv) with nv = the vectors per row, a constant for rows of up
 * to 13 vectors (one register block: every F inlines to one kernel). */
#define SR_BY_NVEC(F, nvec, ...)                     \
  switch (nvec) {                                    \
    case 1: F(__VA_ARGS__, 1); break;                \
    case 2: F(__VA_ARGS__, 2); break;                \
    case 3: F(__VA_ARGS__, 3); break;                \
    case 4: F(__VA_ARGS__, 4); break;                \
    case 5: F(__VA_ARGS__, 5); break;                \
    case 6: F(__VA_ARGS__, 6); break;                \
    case 7: F(__VA_ARGS__, 7); break;                \
    case 8: F(__VA_ARGS__, 8); break;                \
    case 9: F(__VA_ARGS__, 9); break;                \
    case 10: F(__VA_ARGS__, 10); break;              \
    case 11: F(__VA_ARGS__, 11); break;              \
    case 12: F(__VA_ARGS__, 12); break;              \
    case 13: F(__VA_ARGS__, 13); break;              \
    default: F(__VA_ARGS__, nvec); break;            \
  }

/* Z^T <- -(A X)^T for A = M^-1 (dense, symmetric, n >= SR_NL) and X with
 * the pattern of tl_dyn_neg_inverse_mul (column c non-zero only on the
 * ancestors of c and its subtree [c, dof_end[c])): row c of zt (length n)
 * is minus the sum of X[k][c] A[k] over that pattern, for the columns
 * [cx, n) of X (rows [0, cx) of zt are left alone). */
__attribute__((always_inline)) static inline SR_ATTR void SR(inverse_cols_nv)(const tl_sysdata *d, const double *A,
                                                                              const double *X, int cx, double *zt,
                                                                              int nvec) {
  const int n = d->m->nv, *end = d->dof_end, *anc_adr = d->dof_anc_adr, *anc_all = d->dof_anc;
  for (int c = cx; c < n; c++)
    SR(rowsum)(zt + (size_t)c * n, A, X + c, (size_t)n, (size_t)n, anc_all + anc_adr[c], anc_adr[c + 1] - anc_adr[c],
               c, end[c], n, 0, n, nvec);
}
static SR_ATTR void SR(inverse_cols)(const tl_sysdata *d, const double *A, const double *X, int cx, double *zt) {
  const int nvec = (d->m->nv + SR_NL - 1) / SR_NL;
  SR_BY_NVEC(SR(inverse_cols_nv), nvec, d, A, X, cx, zt)
}

/* y <- -A x for A = M^-1 (dense, symmetric, n >= SR_NL): the sum of the
 * rows A[k] times x[k], k = 0, 1, ... */
static SR_ATTR void SR(neg_mul_vec)(const double *A, const double *x, double *y, int n) {
  SR(rowsum)(y, A, x, 1, 1, NULL, 0, 0, n, n, 0, n, (n + SR_NL - 1) / SR_NL);
}

/* The SR_NL x SR_NL block at Y (row stride ys) <- the transpose of the one
 * at Z (row stride zs): vector shuffles (moves, no arithmetic). */
static inline SR_ATTR void SR(tblock)(double *restrict Y, size_t ys, const double *restrict Z, size_t zs) {
#if SR_NL == 4
  const SR_VT a0 = *(const SR(uv) *)Z, a1 = *(const SR(uv) *)(Z + zs), a2 = *(const SR(uv) *)(Z + 2 * zs),
              a3 = *(const SR(uv) *)(Z + 3 * zs);
  const SR_VT t0 = TL_SHUF(a0, a1, 0, 4, 2, 6), t1 = TL_SHUF(a0, a1, 1, 5, 3, 7),
              t2 = TL_SHUF(a2, a3, 0, 4, 2, 6), t3 = TL_SHUF(a2, a3, 1, 5, 3, 7);
  *(SR(uv) *)Y = TL_SHUF(t0, t2, 0, 1, 4, 5);
  *(SR(uv) *)(Y + ys) = TL_SHUF(t1, t3, 0, 1, 4, 5);
  *(SR(uv) *)(Y + 2 * ys) = TL_SHUF(t0, t2, 2, 3, 6, 7);
  *(SR(uv) *)(Y + 3 * ys) = TL_SHUF(t1, t3, 2, 3, 6, 7);
#elif SR_NL == 2
  const SR_VT a0 = *(const SR(uv) *)Z, a1 = *(const SR(uv) *)(Z + zs);
  *(SR(uv) *)Y = TL_SHUF(a0, a1, 0, 2);
  *(SR(uv) *)(Y + ys) = TL_SHUF(a0, a1, 1, 3);
#else
  (void)ys, (void)zs;
  *Y = *Z;
#endif
}

#if SR_NL == 4
/* The 2 x 2 block at Y (row stride ys) <- the transpose of the one at Z
 * (row stride zs): two-lane shuffles, for the edges of rows of n = 4 m + 2
 * or 4 m + 3. */
typedef tl_lanes SR(u2) __attribute__((aligned(8)));
static inline SR_ATTR void SR(t2)(double *restrict Y, size_t ys, const double *restrict Z, size_t zs) {
  const tl_lanes a0 = *(const SR(u2) *)Z, a1 = *(const SR(u2) *)(Z + zs);
  *(SR(u2) *)Y = TL_SHUF(a0, a1, 0, 2);
  *(SR(u2) *)(Y + ys) = TL_SHUF(a0, a1, 1, 3);
}
#endif

/* Y <- Z^T (n x n, row-major): by blocks, two more rows and columns by 2 x 2
 * blocks where the 4-lane blocks leave two or three, the rest one by one. */
static SR_ATTR void SR(transpose)(double *restrict Y, const double *restrict Z, int n) {
  const size_t sn = (size_t)n;
  const int nb = n - n % SR_NL; /* rows and columns [0, nb) go by blocks */
  for (int c0 = 0; c0 < nb; c0 += SR_NL)
    for (int i0 = 0; i0 < nb; i0 += SR_NL) SR(tblock)(Y + (size_t)i0 * sn + c0, sn, Z + (size_t)c0 * sn + i0, sn);
  int e0 = nb; /* rows and columns [0, e0) done */
#if SR_NL == 4
  if (n - nb >= 2) {
    const size_t b = (size_t)nb;
    for (size_t i0 = 0; i0 < b; i0 += 2) {
      SR(t2)(Y + i0 * sn + b, sn, Z + b * sn + i0, sn);
      SR(t2)(Y + b * sn + i0, sn, Z + i0 * sn + b, sn);
    }
    SR(t2)(Y + b * sn + b, sn, Z + b * sn + b, sn);
    e0 = nb + 2;
  }
#endif
  for (int i = 0; i < n; i++)
    for (int c = i < e0 ? e0 : 0; c < n; c++) Y[(size_t)i * sn + c] = Z[(size_t)c * sn + i];
}

/* X's strictly upper triangle <- its strictly lower one (n x n): the blocks
 * above the diagonal blocks by tblock (and 2 x 2 blocks on two more columns,
 * as transpose), the rest one by one. */
static SR_ATTR void SR(mirror_lower)(double *X, int n) {
  const size_t sn = (size_t)n;
  const int nb = n - n % SR_NL;
  for (int i0 = 0; i0 < nb; i0 += SR_NL) {
    for (int j0 = i0 + SR_NL; j0 < nb; j0 += SR_NL) SR(tblock)(X + (size_t)i0 * sn + j0, sn, X + (size_t)j0 * sn + i0, sn);
    double *xd = X + (size_t)i0 * sn + i0; /* within the diagonal block */
    for (int a = 1; a < SR_NL; a++)
      for (int b = 0; b < a; b++) xd[(size_t)b * sn + a] = xd[(size_t)a * sn + b];
  }
  int e0 = nb; /* columns [0, e0) done */
#if SR_NL == 4
  if (n - nb >= 2) {
    const size_t b = (size_t)nb;
    for (size_t i0 = 0; i0 < b; i0 += 2) SR(t2)(X + i0 * sn + b, sn, X + b * sn + i0, sn);
    X[b * sn + b + 1] = X[(b + 1) * sn + b];
    e0 = nb + 2;
  }
#endif
  for (int i = 0; i < n; i++) /* the columns [e0, n) */
    for (int j = i + 1 > e0 ? i + 1 : e0; j < n; j++) X[(size_t)i * sn + j] = X[(size_t)j * sn + i];
}

/* X <- A^-1 = L^-1 D^-1 L^-T for the factor A = L^T D L of tl_dyn_factor
 * (d->LD, d->LDinv), n >= SR_NL, with Y and Yd (n x n each) as scratch:
 * Y = L^-T row by row from the last, Y[k] = e_k - sum over the descendants
 * i of k of L[i][k] Y[i] on the columns [k, dof_end[k]) (L[i][k] is row k of
 * LD's upper triangle; Y[i] vanishes outside i's subtree, so Y[k] outside
 * k's: Y is cleared first); the coefficients Yd[k] = -(Y[k] / D[k]) row by
 * row on the same columns; then the lower triangle of row j of A^-1 = sum
 * over k in the ancestors of j and j of (Y[k][j] / D[k]) Y[k] (as minus the
 * sum with the coefficients Yd[k][j], read down column j of Yd) on the
 * columns [0, j], and the strictly upper triangle mirrored from the lower
 * (A^-1 symmetric bit for bit). The rows' sums in registers; multiply-adds about
 * sum_k (descendants(k) + 1) (subtree(k) + 1) / 2 + sum_j (depth(j) + 1)
 * (j + 1) / 2, the zeros of a row's vectors included. */
static SR_ATTR void SR(inverse_full)(const tl_sysdata *d, double *X, double *Y, double *Yd) {
  const int n = d->m->nv, *end = d->dof_end, *anc_adr = d->dof_anc_adr, *anc_all = d->dof_anc;
  const size_t sn = (size_t)n;
  const double *dinv = d->LDinv;
  memset(Y, 0, sn * sn * sizeof(double));
  for (int k = n - 1; k >= 0; k--) {
    double *yk = Y + (size_t)k * sn;
    if (end[k] > k + 1) SR(rowsum_range)(yk, Y, d->LD + (size_t)k * sn, 0, 1, NULL, 0, k + 1, end[k], n, k, end[k]);
    yk[k] = 1.0; /* the sum is exactly 0 there: every Y[i] (i > k) vanishes at column k */
  }
  /* Yd[k] = -(Y[k] D^-1[k]) on k's subtree columns [k, dof_end[k]) */
  for (int k = 0; k < n; k++) {
    const double *yk = Y + (size_t)k * sn;
    double *ydk = Yd + (size_t)k * sn;
    const double s = dinv[k];
    for (int i = k; i < end[k]; i++) ydk[i] = -(yk[i] * s);
  }
  for (int j = 0; j < n; j++) /* row j: the coefficients Yd[k][j], k in anc(j) and j */
    SR(rowsum_range)(X + (size_t)j * sn, Y, Yd + j, sn, sn, anc_all + anc_adr[j], anc_adr[j + 1] - anc_adr[j], j,
                     j + 1, n, 0, j + 1);
  SR(mirror_lower)(X, n);
}

#undef SR_BY_NVEC
#undef SR_VT
#undef SR_NL
#undef SR_ATTR
#undef SR_SPLAT
#undef SR
