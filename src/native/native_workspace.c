/* The native engine's arena: every workspace array of struct tl_native and
 * every system's step scratch in one block (the list: native_workspace.h,
 * TL_SYSTEM_SCRATCH in world/world_internal.h), laid out from the
 * capacities, each array at a 64-byte boundary, when the world's objects or
 * its solver change; stepping never allocates, by construction: the step's
 * code has no allocation call, and every array it touches is a pointer into
 * this block. As the arena of MuJoCo's mjData (mj_makeData sizes one buffer
 * from the model's sizes) and Box2D v3's b2ArenaAllocator.
 *
 * Capacities grow as they always have (geometrically, in the sizing
 * functions of broadphase.c, constraint_rows.c, native.c and below); a
 * growth re-plans the whole block once: a new block, each array's old
 * contents copied to its new place, the old block freed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native/native_internal.h"

static size_t align_up(size_t x) { return (x + TL_NATIVE_ALIGN - 1) / TL_NATIVE_ALIGN * TL_NATIVE_ALIGN; }

/* Bytes of system s's step scratch: its TL_SYSTEM_SCRATCH arrays, each 64-byte aligned. */
static size_t system_scratch_bytes(const tl_system *s) {
  const size_t nv = (size_t)s->m->nv, nq = (size_t)s->m->nq;
  size_t bytes = 0;
#define SCRATCH_BYTES(name, type, count) bytes += align_up((count) * sizeof(type));
  TL_SYSTEM_SCRATCH(SCRATCH_BYTES)
#undef SCRATCH_BYTES
  (void)nq;
  return bytes;
}

/* Capacity for need bytes when cap are reserved: need, or 1.5 cap when that is more. */
static size_t grown_size(size_t need, size_t cap) { return need > cap + cap / 2 ? need : cap + cap / 2; }

void tl_native_size_systems(tl_world *w) {
  tl_native *n = tl_native_of(w);
  if (n->sys_placed > w->nsystem) { /* systems were taken out (tl_world_add_system's failure path) */
    n->sys_placed = w->nsystem;
    n->sys_used = 0;
    for (int i = 0; i < w->nsystem; i++) n->sys_used += system_scratch_bytes(w->systems[i]);
  }
  size_t used = n->sys_used;
  for (int i = n->sys_placed; i < w->nsystem; i++) used += system_scratch_bytes(w->systems[i]);
  if (used > n->sys_cap) n->sys_cap = grown_size(used, n->sys_cap);
}

/* Every system's scratch pointers into sys_scratch, system after system;
 * the systems placed for the first time get zeroed scratch. */
static void place_systems(tl_world *w) {
  tl_native *n = tl_native_of(w);
  size_t off = 0;
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    const size_t nv = (size_t)s->m->nv, nq = (size_t)s->m->nq, start = off;
#define SCRATCH_PLACE(name, type, count) \
  s->name = (type *)(void *)(n->sys_scratch + off), off += align_up((count) * sizeof(type));
    TL_SYSTEM_SCRATCH(SCRATCH_PLACE)
#undef SCRATCH_PLACE
    (void)nq;
    if (i >= n->sys_placed) memset(n->sys_scratch + start, 0, off - start);
  }
  n->sys_placed = w->nsystem;
  n->sys_used = off;
}

int tl_native_workspace_fit(tl_world *w) {
  tl_native *n = tl_native_of(w);
  size_t len[TL_NWS_COUNT], off[TL_NWS_COUNT], total = 0;
  int k = 0, same = n->ws_block != NULL;
#define PLAN(name, type, count) \
  len[k] = (count), off[k] = total, total += align_up(len[k] * sizeof(type)), same &= len[k] == n->ws_len[k], k++;
  TL_NATIVE_WORKSPACE(PLAN)
#undef PLAN
  if (!same) {
    void *block = calloc(1, total + TL_NATIVE_ALIGN);
    if (!block) return -1;
    unsigned char *base = (unsigned char *)block + (TL_NATIVE_ALIGN - (uintptr_t)block % TL_NATIVE_ALIGN) % TL_NATIVE_ALIGN;
    k = 0;
#define MOVE(name, type, count)                                                                  \
  {                                                                                              \
    type *p = (type *)(void *)(base + off[k]);                                                   \
    size_t keep = len[k] < n->ws_len[k] ? len[k] : n->ws_len[k];                                 \
    if (keep) memcpy(p, n->name, keep * sizeof(type));                                           \
    n->name = p;                                                                                 \
    n->ws_len[k] = len[k];                                                                       \
    k++;                                                                                         \
  }
    TL_NATIVE_WORKSPACE(MOVE)
#undef MOVE
    free(n->ws_block);
    n->ws_block = block;
    n->ws_bytes = total;
    /* the Dantzig scratch holds pointers into itself: laid out anew (it keeps nothing between solves) */
    n->lcp = n->lcp_cap ? tl_lcp_work_place(n->lcp_mem, n->lcp_cap) : NULL;
  }
  place_systems(w);
  return 0;
}

void tl_native_workspace_free(tl_world *w) {
  tl_native *n = tl_native_of(w);
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
#define SCRATCH_NULL(name, type, count) s->name = NULL;
    TL_SYSTEM_SCRATCH(SCRATCH_NULL)
#undef SCRATCH_NULL
  }
  free(n->ws_block);
  n->ws_block = NULL;
}
