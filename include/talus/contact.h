/* Talus contacts: what the collision detection found and what the solver did. */
#ifndef TALUS_CONTACT_H
#define TALUS_CONTACT_H

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One contact point between a geom of a system and the ground (or another geom). */
typedef struct tl_contact_info {
  int system;        /* index of the system in its world (order of tl_world_add_system) */
  int body;          /* body of that system */
  int geom;          /* model geom index */
  int other_system;  /* -1 for the ground / static world geometry */
  int other_body, other_geom;
  double pos[3];     /* contact point on the ground surface, world frame (m) */
  double normal[3];  /* unit normal pointing from the other object into the system's geom */
  double depth;      /* penetration depth (m), > 0 when penetrating; < 0: the gap of a
                        speculative contact closer than the world's contact margin */
  double impulse[3]; /* impulse applied to the system's body over the last step, world frame (N s) */
} tl_contact_info;

#ifdef __cplusplus
}
#endif
#endif
