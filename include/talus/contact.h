/* Talus contacts: what the collision detection found and what the solver did. */
#ifndef TALUS_CONTACT_H
#define TALUS_CONTACT_H

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One contact point between a geom of a system (side a) and another geom
 * (side b): a geom of another or the same system, or a static world geom
 * (ground, heightmap, obstacle). */
typedef struct tl_contact_info {
  int system;        /* index of the system in its world (order of tl_world_add_system) */
  int body;          /* body of that system */
  int geom;          /* model geom index */
  int other_system;  /* -1 for static world geometry */
  int other_body;    /* -1 for static world geometry */
  int other_geom;    /* model geom index, or static geom index (order of addition) */
  double pos[3];     /* contact point, midway between the two surfaces, world frame (m) */
  double normal[3];  /* unit normal pointing from the other object into the system's geom */
  double mu;         /* friction coefficient of the pair */
  double depth;      /* penetration depth (m), > 0 when penetrating; < 0: the gap of a
                        speculative contact closer than the world's contact margin */
  double impulse[3]; /* impulse applied to the system's body over the last step, world frame (N s);
                        the other object receives the opposite */
} tl_contact_info;

#ifdef __cplusplus
}
#endif
#endif
