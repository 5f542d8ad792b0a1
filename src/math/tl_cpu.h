/* Internal: which vector width the few kernels with a wider-instruction-set
 * variant may use on this CPU.
 *
 * Such kernels (the products with M^-1 of the ABA derivatives, src/dynamics/
 * inverse_mul.c) do the same lane-wise arithmetic in every width: each lane
 * is one independent sum in a fixed order, products and subtractions stay
 * separate operations (the build's C11 mode contracts nothing into FMA), so
 * a 4-lane AVX variant returns the same bits as the 2-lane SSE2 / NEON
 * baseline and as the scalar TL_NO_VECTOR_EXT build. Only the speed depends
 * on the CPU. */
#ifndef TALUS_CPU_H
#define TALUS_CPU_H

#if defined(__GNUC__) && !defined(TL_NO_VECTOR_EXT) && (defined(__x86_64__) || defined(__i386__))
#define TL_CPU_X86_AVX 1 /* an AVX variant is compiled (function attribute target("avx")) */
#endif

/* Lanes of the widest variant the running CPU and the limit allow: 4 when
 * the CPU and the OS support AVX (x86-64) and the limit is at least 4, else
 * the baseline (2 lanes, or 1 without vector extensions). */
int tl_cpu_lanes(void);

/* Tests: cap the lanes tl_cpu_lanes returns (0: no cap). Not thread-safe
 * against running kernels; set it before the calls it should affect. */
void tl_cpu_set_lanes_limit(int lanes);

#endif
