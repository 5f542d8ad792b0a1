/* Internal: the native engine's arena, the list of its arrays. Every array
 * of struct tl_native (native_internal.h) and every system's step scratch
 * (TL_SYSTEM_SCRATCH, world/world_internal.h) lies in one block, allocated
 * when the world's objects or its solver change (native.c: attach,
 * objects_changed, set_solver), never while stepping; like the arena of
 * MuJoCo's mjData (mj_makeData sizes one buffer) or Box2D v3's
 * b2ArenaAllocator. native_workspace.c lays the arrays out from the
 * capacities in the order of this list, each at a 64-byte boundary, and
 * sets the pointers into the block.
 *
 * One line per array: X(name, element type, element count), the count an
 * expression of the capacities of `n` (const tl_native *). Adding a
 * workspace array is a pointer field in struct tl_native and one line here;
 * its capacity grows in the sizing functions (broadphase.c
 * tl_world_size_geoms, constraint_rows.c tl_world_size_constraints,
 * native.c), which set the capacity fields and then call
 * tl_native_workspace_fit. Contents survive a re-plan (each array's first
 * min(old, new) elements are copied); new elements are zero. */
#ifndef TALUS_NATIVE_WORKSPACE_H
#define TALUS_NATIVE_WORKSPACE_H

#include <stddef.h>

#define TL_NATIVE_WORKSPACE(X)                                                         \
  /* geom list (broadphase.c) */                                                       \
  X(geomrefs, tl_geom_ref, n->cap_geomref)                                             \
  X(shapes, tl_shape, n->cap_geomref)                                                  \
  X(geom_active, unsigned char, n->cap_geomref)                                        \
  X(geom_act0, unsigned char, n->cap_geomref)                                          \
  /* broadphase units: systems, bodies, geoms, units (broadphase.c) */                 \
  X(sys_active, unsigned char, n->cap_usys)                                            \
  X(body_adr, int, n->cap_usys)                                                        \
  X(sys_geom, int, n->cap_usys)                                                        \
  X(body_welded, unsigned char, n->cap_ubody)                                          \
  X(body_geom_adr, int, n->cap_ubody)                                                  \
  X(bsphere, double, 4 * (size_t)n->cap_ubody)                                         \
  X(bbox, double, 6 * (size_t)n->cap_ubody)                                            \
  X(gradius, double, n->cap_ugeom)                                                     \
  X(body_geoms, int, n->cap_ugeom)                                                     \
  X(unit_box, double, 6 * (size_t)n->cap_uunit)                                        \
  X(unit_order, int, n->cap_uunit)                                                     \
  /* contacts and candidate pairs (contact_gen.c, broadphase.c) */                     \
  X(contacts, tl_wcontact, n->alloc_contact)                                           \
  X(prev, tl_wcontact, n->alloc_contact)                                               \
  X(cpairs, tl_cand_pair, n->alloc_contact)                                            \
  /* constraint rows and their pools (constraint_rows.c) */                            \
  X(blocks, tl_block, n->alloc_block)                                                  \
  X(pool, double, n->pool_cap)                                                         \
  X(ipool, int, n->ipool_cap)                                                          \
  X(eqgroups, tl_eqgroup, n->cap_eqgroup)                                              \
  X(eq_pool, double, n->eq_cap)                                                        \
  /* dense Delassus matrix and direct solve (solver_direct.c) */                       \
  X(dA, double, (size_t)n->dense_cap * (size_t)n->dense_cap)                           \
  X(db, double, n->dense_cap)                                                          \
  X(dx, double, n->dense_cap)                                                          \
  X(dM, double, (size_t)n->dense_cap * (size_t)n->dense_cap)                           \
  X(dr, double, 3 * (size_t)n->dense_cap)                                              \
  X(dy, double, 3 * (size_t)n->dense_cap)                                              \
  X(dW, double, n->dW_cap)                                                             \
  X(dfree, int, n->dense_cap)                                                          \
  X(dstat, unsigned char, n->dense_cap)                                                \
  X(dstat_prev, unsigned char, n->dense_cap)                                           \
  /* Dantzig's LCP (solver_direct.c; lcp_mem holds lcp, contact/lcp.h) */             \
  X(lcp_A, double, (size_t)n->lcp_cap * (size_t)n->lcp_cap)                            \
  X(lcp_b, double, n->lcp_cap)                                                         \
  X(lcp_lo, double, n->lcp_cap)                                                        \
  X(lcp_hi, double, n->lcp_cap)                                                        \
  X(lcp_mu, double, n->lcp_cap)                                                        \
  X(lcp_x, double, n->lcp_cap)                                                         \
  X(lcp_findex, int, n->lcp_cap)                                                       \
  X(lcp_row_block, int, n->lcp_cap)                                                    \
  X(lcp_mem, unsigned char, n->lcp_cap ? tl_lcp_work_bytes(n->lcp_cap) : 0)            \
  /* loop constraints (constraint_loop.c): rows of the step, warm starts */            \
  X(loop_rows, tl_loop_row, n->cap_loop_row)                                           \
  X(loop_lambda, double, TL_CGEOM_ROWS * (size_t)n->cap_loop)                          \
  /* every system's TL_SYSTEM_SCRATCH, system after system (native_workspace.c) */    \
  X(sys_scratch, unsigned char, n->sys_cap)

/* Indices of the arrays in the list (tl_native.ws_len). */
enum {
#define TL_NATIVE_WORKSPACE_INDEX(name, type, count) TL_NWS_##name,
  TL_NATIVE_WORKSPACE(TL_NATIVE_WORKSPACE_INDEX)
#undef TL_NATIVE_WORKSPACE_INDEX
  TL_NWS_COUNT
};

/* Alignment of every array in the arena (a cache line). */
#define TL_NATIVE_ALIGN 64

#endif
