/* Internal: the contacts of the native engine's world (contact_gen.c): the
 * contact point of a step (tl_wcontact) with its frame, material, target and
 * warm-start impulse, and the step's collision call. */
#ifndef TALUS_CONTACT_GEN_H
#define TALUS_CONTACT_GEN_H

#include "talus/world.h"

/* A contact point between geom a (always of a system) and geom b (a system's or static). */
typedef struct tl_wcontact {
  int sa, ba, ga;       /* system, body, geom of a */
  int sb, bb, gb;       /* of b; sb = -1: static geom gb */
  double pos[3];        /* midpoint between the surfaces (world) */
  double frame[9];      /* rows t1, t2, n; n from b into a */
  double depth;         /* > 0 penetration, < 0 gap */
  double mu, restitution, threshold, vtarget, cfm, erp;
  double lambda[3];     /* impulse on a in the contact frame (N s) of the solve; -lambda on b */
  double impact[3];     /* restitution impulse of the impact pass (same frame), 0 if none */
  double vn_pre;        /* normal velocity at detection (m/s) */
} tl_wcontact;

/* The step's contacts into w->contacts (the last step's kept in w->prev
 * for warm starting): broadphase (tl_world_broadphase), narrowphase of each
 * candidate pair, contact points (contact_gen.c). */
void tl_world_collide(tl_world *w);

#endif
