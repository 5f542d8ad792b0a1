/* Talus world: gravity, time step, objects, the two-phase step.
 *
 * Step (DESIGN.md): tl_world_integrate1 updates kinematics and collision
 * geometry, detects contacts and computes M, h and the contact Jacobians of
 * every system; between the phases every kinematic and dynamic quantity of
 * the current state can be read; tl_world_integrate2 applies control, solves
 * the contacts (per-contact exact Coulomb cone, Hwangbo, Lee and Hutter, RA-L
 * 2018), integrates u and then q (semi-implicit Euler, quaternions through
 * the exponential map). tl_world_step does both. Stepping never allocates. */
#ifndef TALUS_WORLD_H
#define TALUS_WORLD_H

#include "talus/contact.h"
#include "talus/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_world tl_world;

/* Create an empty world: dt = 1e-3 s, gravity (0, 0, -9.81), no ground. */
tl_status tl_world_create(tl_world **out, tl_error *err);
void tl_world_free(tl_world *world);

/* Time step in seconds, finite and > 0. */
tl_status tl_world_set_timestep(tl_world *world, double dt, tl_error *err);
double tl_world_timestep(const tl_world *world);
tl_status tl_world_set_gravity(tl_world *world, const double gravity[3], tl_error *err);
double tl_world_time(const tl_world *world); /* simulated time, s */

/* Add the horizontal ground plane z = height with friction coefficient mu (>= 0). */
tl_status tl_world_add_ground(tl_world *world, double height, double mu, tl_error *err);

/* Add an articulated system built from `model` (copied: the model may be
 * freed afterwards). The state starts at the model's reference configuration
 * with zero velocity. *out is owned by the world. */
tl_status tl_world_add_system(tl_world *world, const tl_model *model, tl_system **out,
                              tl_error *err);

/* The two phases and the whole step. TL_ERR_DIVERGED if a state became
 * non-finite (the state is then left as it was before the step). */
tl_status tl_world_integrate1(tl_world *world, tl_error *err);
tl_status tl_world_integrate2(tl_world *world, tl_error *err);
tl_status tl_world_step(tl_world *world, tl_error *err);

/* Contacts found by the last integrate1 (impulses from the last integrate2). */
int tl_world_ncontact(const tl_world *world);
tl_status tl_world_contact(const tl_world *world, int k, tl_contact_info *out, tl_error *err);

#ifdef __cplusplus
}
#endif
#endif
