/* talus_bench: live heap bytes of the code linked into talus_bench
 * (bench_mem.c).
 *
 * talus_bench is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=free: every call to these functions from the objects linked
 * statically into it (libtalus, the bench sources) goes through bench_mem.c, which
 * keeps the requested size of each live block in a hash table. Calls made
 * inside shared libraries (libxml2, assimp, qhull, OpenBLAS, MuJoCo) are not
 * seen; memory such a library allocates and Talus keeps would be missed (the
 * loader copies what it keeps into its own blocks). A free of a block not
 * seen allocated is passed on and not counted. */
#ifndef TALUS_BENCH_MEM_H
#define TALUS_BENCH_MEM_H

#include <stddef.h>

/* Bytes requested by the live blocks allocated through the wrappers. */
size_t bench_mem_live(void);
/* 1 while the table has tracked every block (0 once it overflowed: the
 * figures are then unreliable). */
int bench_mem_ok(void);

#endif
