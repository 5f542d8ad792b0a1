/* Philox4x64-10 counter-based random numbers (include/talus/rng.h).
 *
 * Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC 2011: ten rounds of a multiply-hi/lo Feistel-like network on four
 * 64-bit words, the key bumped by the Weyl constants between rounds. The
 * multipliers and Weyl constants are the paper's (Random123's
 * PHILOX_M4x64_0/1, PHILOX_W64_0/1). The 64 x 64 -> 128 bit product is
 * formed from 32-bit halves so it needs no compiler extension. */
#include "talus/rng.h"

#include <math.h>

#define PHILOX_M0 0xD2E7470EE14C6C93ull
#define PHILOX_M1 0xCA5A826395121157ull
#define PHILOX_W0 0x9E3779B97F4A7C15ull /* golden ratio */
#define PHILOX_W1 0xBB67AE8584CAA73Bull /* sqrt(3) - 1 */

/* hi:lo = a * b (128-bit product of two 64-bit words). */
static uint64_t mulhilo(uint64_t a, uint64_t b, uint64_t *hi) {
  uint64_t a0 = a & 0xFFFFFFFFull, a1 = a >> 32, b0 = b & 0xFFFFFFFFull, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFull) + (p10 & 0xFFFFFFFFull);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  return a * b;
}

void tl_rng_philox4x64(const uint64_t counter[4], const uint64_t key[2], uint64_t out[4]) {
  uint64_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint64_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    uint64_t hi0, hi1;
    uint64_t lo0 = mulhilo(PHILOX_M0, c0, &hi0);
    uint64_t lo1 = mulhilo(PHILOX_M1, c2, &hi1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

void tl_rng_init(tl_rng *r, uint64_t seed, uint64_t stream) {
  r->key[0] = seed;
  r->key[1] = stream;
  for (int i = 0; i < 4; i++) r->counter[i] = r->block[i] = 0;
  r->pos = 4;
}

uint64_t tl_rng_next(tl_rng *r) {
  if (r->pos >= 4) {
    /* next counter value (256-bit increment), then its block */
    for (int i = 0; i < 4 && ++r->counter[i] == 0; i++) {
    }
    tl_rng_philox4x64(r->counter, r->key, r->block);
    r->pos = 0;
  }
  return r->block[r->pos++];
}

double tl_rng_uniform(tl_rng *r) { return (double)(tl_rng_next(r) >> 11) * 0x1.0p-53; }

double tl_rng_range(tl_rng *r, double lo, double hi) {
  double x = tl_rng_uniform(r);
  return lo == hi ? lo : lo + (hi - lo) * x;
}

double tl_rng_normal(tl_rng *r) {
  double u1 = 1.0 - tl_rng_uniform(r); /* (0, 1]: log is finite */
  double u2 = tl_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
