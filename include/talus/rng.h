/* Talus random numbers: a counter-based generator, one independent stream per
 * (seed, stream) pair.
 *
 * Philox4x64-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as
 * easy as 1, 2, 3", SC 2011; the Random123 library): the 64-bit output
 * words are the bijection of a 256-bit counter under a 128-bit key. Here
 * key = (seed, stream), so every (seed, stream) pair is its own sequence
 * with no state shared between streams: a batch of environments gives env i
 * the stream i, and what env i draws never depends on how many threads step
 * the batch or in which order. The sequence of a stream is exactly NumPy's
 * `numpy.random.Philox(key=[seed, stream])` (counter starting at 0, each
 * block of four words taken from the next counter value), so a Python user
 * can reproduce it.
 *
 * The generator is a plain struct: no allocation, copyable, thread-safe as
 * long as each thread uses its own struct. */
#ifndef TALUS_RNG_H
#define TALUS_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_rng {
  uint64_t key[2];     /* (seed, stream) */
  uint64_t counter[4]; /* the counter of the last block */
  uint64_t block[4];   /* its four output words */
  int pos;             /* next word of block to hand out (4: block used up) */
} tl_rng;

/* The Philox4x64-10 bijection: out = philox(counter, key). */
void tl_rng_philox4x64(const uint64_t counter[4], const uint64_t key[2], uint64_t out[4]);

/* Start stream `stream` of seed `seed` (counter 0, no words drawn). */
void tl_rng_init(tl_rng *r, uint64_t seed, uint64_t stream);
/* Next 64 random bits. */
uint64_t tl_rng_next(tl_rng *r);
/* Uniform double in [0, 1): the top 53 bits of one word times 2^-53. */
double tl_rng_uniform(tl_rng *r);
/* Uniform double in [lo, hi) (lo when lo == hi). */
double tl_rng_range(tl_rng *r, double lo, double hi);
/* Standard normal by the Box-Muller transform (Box and Muller, 1958) from
 * two uniforms; one value per call (no cached second value, so the number
 * of words drawn per call is always 2). */
double tl_rng_normal(tl_rng *r);

/* Deprecated: the name before issue 22 (one prefix per header: tl_rng_*). */
#define tl_philox4x64 tl_rng_philox4x64

#ifdef __cplusplus
}
#endif
#endif
