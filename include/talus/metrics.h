/* Talus run metrics: per-step measures of what a robot does, shared by
 * `talus simulate`, `talus compare` and sweeps (talus/sweep.h), so that a
 * quantity with one name is measured one way everywhere.
 *
 * Each function reads the current state through the public API (works on
 * every engine), never allocates, and is a pure function of that state (and
 * of the last step's contacts and impulses), so the caller decides when in
 * the step it measures: between tl_world_integrate1 and
 * tl_world_integrate2 the kinematics are already current (cheapest);
 * contact impulses and the applied actuator force are those of the last
 * tl_world_integrate2. Units SI, world frame. */
#ifndef TALUS_METRICS_H
#define TALUS_METRICS_H

#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Body 0 (the base) of a system. */
typedef struct tl_base_measure {
  double pos[3];        /* origin of body 0, world (m) */
  double R[9];          /* its rotation, world from body (row-major) */
  double vel[3];        /* world linear velocity of that origin (m/s) */
  double roll, pitch;   /* Z-Y-X Euler angles of R (rad): roll = atan2(R21, R22),
                           pitch = asin(-R20) (argument clamped to [-1, 1]) */
  double roll_pitch_max; /* the tilt: max(|roll|, |pitch|) of whichever of the two Z-Y-X
                           solutions of R, (roll, pitch) or (roll -+ pi, +-pi - pitch), has
                           it smaller, i.e. min(max(|r|, |p|), max(pi - |r|, pi - |p|)) (rad,
                           [0, pi]): a base lying on its back is pi/2 whichever solution
                           atan2 picks near pitch = +-pi/2, upside down is pi */
  double forward_speed; /* vel along the heading, the horizontal projection of body
                           0's x axis (m/s); 0 when that axis is vertical */
} tl_base_measure;

/* Measure body 0 of sys. TL_ERR_ARGUMENT for a NULL argument, or the error
 * of the pose / velocity query. */
tl_status tl_measure_base(tl_system *sys, tl_base_measure *out, tl_error *err);

/* The contacts of the last step, as seen by system `sys` (may be NULL: only
 * the world-wide fields are filled). */
typedef struct tl_contact_measure {
  int ncontact;        /* contacts in the world */
  double max_depth;    /* largest penetration depth over every contact of the world (m, >= 0) */
  int nsys;            /* contacts involving sys (on either side) */
  double normal_force; /* sum over those of impulse . normal / dt (N) */
  double slip_sum;     /* sum of the horizontal speed (m/s, hypot of the world x and y
                          velocity of the contact point moving with sys's body) over
                          those with a positive normal force ... */
  int nslip;           /* ... and how many there were (foot slip = slip_sum / nslip) */
} tl_contact_measure;

/* Measure the contacts found by the last tl_world_integrate1 with the
 * impulses of the last tl_world_integrate2 (dt: the world's time step).
 * slip: 1 to compute slip_sum / nslip (a point-velocity query per loaded
 * contact), 0 to leave them 0. Failed queries are skipped. */
void tl_measure_contacts(tl_world *world, tl_system *sys, int slip, tl_contact_measure *out);

/* Largest distance of a scalar joint coordinate (revolute, prismatic,
 * universal, planar) of sys outside its position limits, for the
 * configuration q (nq values, as tl_system_get_state gives); 0 inside. */
double tl_measure_limit_violation(const tl_system *sys, const double *q);

/* Mechanical power of the actuators, sum over the DOFs except a floating
 * base's six of |tau_i u_i| (W), with tau the applied generalized force of
 * the last step (tl_system_applied_generalized_force) and u the current
 * velocity: tau and u are caller scratch of nv values (filled here).
 * 0 when a query fails. Cost of transport = (its time integral) / (m g d). */
double tl_measure_actuator_power(tl_system *sys, double *tau, double *u, int nv);

/* Lowest point of sys in its current state (m, world z): the lowest corner
 * of the world bounding boxes of its sphere, box, capsule and cylinder
 * collision geoms (tl_system_geom_aabb). Returns how many geoms were used;
 * 0 when it has none of these (e.g. only meshes), and then *z is the
 * lowest body origin instead (INFINITY if there is no body). Used to drop a
 * robot onto the ground a given height above it. */
int tl_measure_lowest_z(tl_system *sys, double *z);

#ifdef __cplusplus
}
#endif
#endif
