/* Talus `stand` controller: hold a joint configuration with the system's
 * implicit (stable) PD controller.
 *
 * Sources: RaiSim's PD target interface (ArticulatedSystem::setPdGains /
 * setPdTarget: per-DOF gains, position targets in coordinate dimension,
 * velocity targets in velocity dimension); the gains are applied by the
 * engine as a stable PD controller (Tan, Liu, Turk, "Stable
 * proportional-derivative controllers", IEEE CG&A 31(4), 2011): the torque
 * uses the end-of-step q and u, so the gains enter the effective mass
 * M + dt Kd + dt^2 Kp (see tl_system_set_pd_gains in talus/system.h).
 *
 * The controller sets gains kp / kd on every DOF except the 6 DOFs of a
 * floating base (u indices 0..5, gains 0), position targets q_target (nq)
 * and velocity targets 0 (nv). Written against the public API only.
 * Memory is allocated in tl_stand_init only; tl_stand_update and
 * tl_stand_set_target never allocate. */
#ifndef TALUS_CONTROLLERS_STAND_H
#define TALUS_CONTROLLERS_STAND_H

#include "talus/talus.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default proportional gain, N m/rad (N/m for prismatic DOFs).
 * Sized for a 30-50 kg quadruped (ANYmal C: 52 kg; talus_quadruped: 45 kg;
 * 0.285 m thighs, 0.33 m shanks): a stance leg carries about m g / 4 =
 * 100-125 N; with the foot under the hip, the knee torque is that force times
 * the knee's horizontal offset from the foot (0.15-0.3 m), 20-35 N m, so
 * kp = 300 N m/rad lets a knee sag by 0.07-0.12 rad (4-7 deg) under the body
 * weight: firm enough to stand, well inside the drives' 80 N m effort. */
#define TL_STAND_DEFAULT_KP 300.0
/* Default derivative gain, N m s/rad (N s/m for prismatic DOFs).
 * The inertia a stance joint sees (its share of the body, about 12 kg at
 * 0.3 m, plus the reflected rotor inertia) is roughly I = 1 kg m^2, so
 * kd = 10 gives a damping ratio kd / (2 sqrt(kp I)) of about 0.3 at
 * omega_n = 17 rad/s; the swing links alone (I ~ 0.05-0.1 kg m^2 with the
 * rotor) are over-damped, which the implicit PD keeps stable at any dt. */
#define TL_STAND_DEFAULT_KD 10.0

typedef struct tl_stand_controller {
  tl_system *sys;   /* the controlled system (not owned) */
  int nq, nv;       /* its coordinate / velocity dimensions */
  int nbase_dof;    /* 6 for a floating base (DOFs without gains), else 0 */
  double kp_value;  /* gain on every non-base DOF */
  double kd_value;
  double *kp;       /* nv per-DOF gains (base DOFs 0) */
  double *kd;       /* nv */
  double *q_target; /* nq position targets */
  double *u_target; /* nv velocity targets (zeros) */
} tl_stand_controller;

/* Initialise `ctrl` for system `sys` and apply gains and targets to it.
 * q_target: nq entries (rad / m, quaternions for floating and spherical
 *   joints), or NULL to hold the system's current q. nq: length of q_target,
 *   must equal tl_system_nq(sys) when q_target is non-NULL (ignored otherwise).
 * kp: proportional gain (N m/rad or N/m), finite and >= 0.
 * kd: derivative gain (N m s/rad or N s/m), finite and >= 0.
 * Gains go on every DOF except the 6 floating-base DOFs (u indices 0..5),
 * which get 0. Velocity targets are 0.
 * Errors: TL_ERR_ARGUMENT (NULL pointers, wrong nq, NaN/Inf or negative
 * gains, non-finite target), TL_ERR_MEMORY; errors of the system setters are
 * passed on. On failure ctrl is left zeroed (nothing to free). */
tl_status tl_stand_init(tl_stand_controller *ctrl, tl_system *sys, const double *q_target,
                        int nq, double kp, double kd, tl_error *err);

/* Replace the held configuration (nq entries) and apply it. No allocation. */
tl_status tl_stand_set_target(tl_stand_controller *ctrl, const double *q_target, int nq,
                              tl_error *err);

/* Per-step hook, call between tl_world_integrate1 and tl_world_integrate2.
 * Re-applies the position and velocity targets (the system keeps them
 * between steps, so this only matters if something else changed them).
 * No allocation. */
tl_status tl_stand_update(tl_stand_controller *ctrl, tl_error *err);

/* Free the controller's arrays and zero it. The system keeps its last gains
 * and targets. NULL and a zeroed controller are allowed. */
void tl_stand_free(tl_stand_controller *ctrl);

#ifdef __cplusplus
}
#endif
#endif
