/* Internal: the engine's short inner loops (dot products and axpys of a few
 * to a few dozen doubles) on two-lane vectors, with a FIXED operation order.
 *
 * Lane 0 sums the even indices and lane 1 the odd ones, a tail element goes
 * to lane 0, and the lanes are added last: exactly the order of the scalar
 * loop with two interleaved partial sums (s0 += x[2j] y[2j], s1 += x[2j+1]
 * y[2j+1]; s0 + s1), so the result is the same bit for bit on every CPU and
 * with or without the vector type. The axpys update each entry on its own,
 * as the scalar loop does. The vector type is GCC's / Clang's generic vector
 * extension (16 bytes: SSE2 on x86-64, NEON on AArch64, both baseline):
 * tl_math.h's tl_lanes, never a CPU-specific instruction set; multiplies
 * and adds stay separate operations (no contraction into FMA: the build uses
 * none of -march, -mfma or -ffast-math). Where tl_lanes is a plain double
 * (no vector extension, or TL_NO_VECTOR_EXT) these are the scalar loops.
 * Loads and stores go through memcpy (unaligned, no aliasing assumptions),
 * which the compilers turn into single vector moves. */
#ifndef TALUS_VEC2_H
#define TALUS_VEC2_H

#include <string.h>

#include "math/tl_math.h"

#if TL_LANES == 2
#define TL_VEC2 1
typedef tl_lanes tl_v2;
static inline tl_v2 tl_v2_load(const double *p) {
  tl_v2 v;
  memcpy(&v, p, sizeof(v));
  return v;
}
static inline void tl_v2_store(double *p, tl_v2 v) { memcpy(p, &v, sizeof(v)); }
#endif

/* sum_j x[j] y[j], j in [0, n): even j in one partial sum, odd j in the
 * other, the last (odd n) into the even one, then even + odd. */
static inline double tl_v2_dot(const double *x, const double *y, int n) {
  int j = 0;
#ifdef TL_VEC2
  tl_v2 s = {0.0, 0.0};
  for (; j + 1 < n; j += 2) s += tl_v2_load(x + j) * tl_v2_load(y + j);
  double s0 = s[0], s1 = s[1];
#else
  double s0 = 0, s1 = 0;
  for (; j + 1 < n; j += 2) {
    s0 += x[j] * y[j];
    s1 += x[j + 1] * y[j + 1];
  }
#endif
  if (j < n) s0 += x[j] * y[j];
  return s0 + s1;
}

/* y[j] -= a x[j] for j in [0, n), in pairs from j = 0 (callers align the
 * pairs where a later pass reloads them). */
static inline void tl_v2_axmy(double *y, const double *x, double a, int n) {
  int j = 0;
#ifdef TL_VEC2
  const tl_v2 av = {a, a};
  for (; j + 1 < n; j += 2) tl_v2_store(y + j, tl_v2_load(y + j) - av * tl_v2_load(x + j));
#else
  for (; j + 1 < n; j += 2) {
    y[j] -= a * x[j];
    y[j + 1] -= a * x[j + 1];
  }
#endif
  if (j < n) y[j] -= a * x[j];
}

/* y[j] = (y[j] - a x[j]) - b z[j] for j in [0, n): two axpys fused into one
 * pass over y, in the order of two successive tl_v2_axmy calls (the same
 * result bit for bit). */
static inline void tl_v2_axmy2(double *y, const double *x, double a, const double *z, double b, int n) {
  int j = 0;
#ifdef TL_VEC2
  const tl_v2 av = {a, a}, bv = {b, b};
  for (; j + 1 < n; j += 2)
    tl_v2_store(y + j, (tl_v2_load(y + j) - av * tl_v2_load(x + j)) - bv * tl_v2_load(z + j));
#else
  for (; j + 1 < n; j += 2) {
    y[j] = (y[j] - a * x[j]) - b * z[j];
    y[j + 1] = (y[j + 1] - a * x[j + 1]) - b * z[j + 1];
  }
#endif
  if (j < n) y[j] = (y[j] - a * x[j]) - b * z[j];
}

#endif
