/* The native engine's step pipeline (step.c): integrate1, integrate2 and
 * the RK4 integrator, stage by stage as step.c's opening comment lists them.
 * Internal: the public entry points are tl_world_integrate1 / integrate2 /
 * tl_world_step (world.c), which reach these through the native engine's
 * table (native.c). */
#ifndef TALUS_NATIVE_STEP_H
#define TALUS_NATIVE_STEP_H

#include "native/native_internal.h"

/* First phase of a step: kinematics, M and h of every system, collision
 * detection (stages 1-2). Never fails: TL_OK. Allocates nothing. */
tl_status tl_native_integrate1(tl_world *w, tl_error *err);

/* Second phase: forces, free velocities, constraint solve, q+ = q (+) dt u+
 * (stages 3-7). TL_ERR_DIVERGED (every system restored to the start of the
 * step, the message naming the system and the entry) when an effective mass
 * matrix or articulated inertia is not positive definite or the state turns
 * non-finite. Allocates nothing. */
tl_status tl_native_integrate2(tl_world *w, tl_error *err);

/* PD position error of body b's joint (velocity dimension, jnt_nv[b]
 * doubles into e): q_target - q, a scalar target outside the position
 * limits taken at the nearer limit; the rotation vector log(q_target q^-1)
 * for a spherical joint (parent joint frame); for the floating base the
 * position difference and rotation vector in the world frame. */
void tl_system_pd_error(const tl_system *sys, int b, double *e);

/* Joint reaction wrenches of system s over the last step (joint_wrench.c):
 * the engine table's joint_wrenches (world/world_engine.h). Uses
 * s->wrench_ws beyond its first 6 nbody doubles; allocates nothing. */
tl_status tl_native_joint_wrenches(tl_world *w, tl_system *s, int frame, double *out, tl_error *err);

#endif
