/* Internal: the broadphase of the native engine's world (broadphase.c):
 * the geom list every collision geom of the world is in (tl_geom_ref), the
 * step's candidate pairs (tl_cand_pair), and the calls that keep them. The
 * arrays live in the native engine's arena (struct tl_native,
 * native/native_internal.h; laid out by native/native_workspace.c). */
#ifndef TALUS_BROADPHASE_H
#define TALUS_BROADPHASE_H

#include "contact/narrowphase.h"
#include "talus/world.h"

/* A collision geom as the broadphase sees it. */
typedef struct tl_geom_ref {
  int system;           /* -1: static */
  int body;             /* body of that system (-1 static) */
  int geom;             /* model geom index, or static geom index */
  double box[6];        /* AABB grown by the margin (lo, hi), when computed this step
                           (broadphase.c, geom_box) */
} tl_geom_ref;

/* A candidate pair of the broadphase: geomref indices (a < b) and its height. */
typedef struct tl_cand_pair {
  double height;
  int a, b;
} tl_cand_pair;

/* After objects were added (never while stepping), in two phases around the
 * one allocation of the native arena (native.c, native_objects_changed):
 * tl_world_size_geoms sets the capacities of the contacts, the geom list and
 * the broadphase arrays (geometric growth) for the world's objects, and
 * tl_world_rebuild_geoms then brings the geom list and the broadphase arrays
 * up to date in the arena: when only systems were added since the last call
 * it appends theirs (O(their geoms)), else it rebuilds everything (O(all
 * geoms)). */
void tl_world_size_geoms(tl_world *w);
void tl_world_rebuild_geoms(tl_world *w);
/* The shape of a geom reference in its current pose. */
void tl_world_geom_shape(const tl_world *w, const tl_geom_ref *g, tl_shape *out);

/* The step's candidate geom pairs into w->cpairs (w->npair_c), in an order
 * that depends on the state alone (broadphase.c, sort_pairs); poses and
 * boxes the active geoms it meets. */
void tl_world_broadphase(tl_world *w);

#endif
