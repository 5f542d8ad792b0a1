/* Vector width of the kernels with a wider-instruction-set variant (tl_cpu.h). */
#include "math/tl_cpu.h"

#include "math/tl_math.h"

static int lanes_limit; /* 0: none */

void tl_cpu_set_lanes_limit(int lanes) { lanes_limit = lanes > 0 ? lanes : 0; }

int tl_cpu_lanes(void) {
  int lanes = TL_LANES;
#ifdef TL_CPU_X86_AVX
  /* libgcc / compiler-rt fill the CPU model before main (a constructor);
   * "avx" also checks that the OS saves the AVX registers (XCR0). */
  if (__builtin_cpu_supports("avx")) lanes = 4;
#endif
  if (lanes_limit && lanes > lanes_limit) lanes = lanes_limit < TL_LANES ? TL_LANES : lanes_limit;
  return lanes;
}
