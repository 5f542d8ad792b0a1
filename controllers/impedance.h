/* Talus `impedance` controller: joint-space impedance with gravity
 * compensation, for arms (fixed base) and for the joints of any robot.
 *
 *   tau = K (q_d - q) + D (u_d - u) + g(q)        [+ Coriolis, optional]
 *
 * Sources: N. Hogan, "Impedance control: an approach to manipulation",
 * ASME J. Dyn. Sys. Meas. Control 107, 1985 (parts I-III), in its joint-space
 * form with gravity compensation (P. Tomei, "A simple PD controller for
 * robots with elastic joints", IEEE TAC 36(10), 1991; M. Takegaki and
 * S. Arimoto, "A new feedback method for dynamic control of manipulators",
 * 1981: PD plus exact gravity compensation makes q_d globally asymptotically
 * stable). g(q) is the gravity part of the nonlinear term, computed as
 * h(q, u) - h(q, u; gravity 0) (two recursive Newton-Euler passes,
 * Featherstone 2008, Table 5.1), so no gravity vector has to be passed in.
 *
 * Position error: q_d - q for revolute, prismatic and universal DOFs; for a
 * spherical joint the rotation vector log(q_d q^-1) in the parent joint
 * frame (the frame of its angular velocity). A floating base is not actuated
 * (its 6 DOFs get no force).
 *
 * Two ways of applying it:
 * - explicit (default): the whole tau is computed here from the state at the
 *   start of the step and applied with tl_system_set_generalized_force. Like
 *   any explicit PD it is stable only while the time step resolves the
 *   closed-loop dynamics of each joint: roughly D_i dt < M_ii and
 *   K_i dt^2 < M_ii (M_ii: the joint's inertia, rotor included); light distal
 *   links with large D violate it first (tl_impedance_damping_for gives D for
 *   a damping ratio).
 * - implicit: K and D go to the engine's stable PD (tl_system_set_pd_gains /
 *   _targets: the same law evaluated at the end of the step, Tan, Liu, Turk
 *   2011), and only g(q) is applied as generalized force. Stable at any
 *   gains; the response matches the explicit law when the latter is stable.
 *
 * Call tl_impedance_update every tick between tl_world_integrate1 and
 * tl_world_integrate2. Memory is allocated in tl_impedance_init only.
 * Written against the public API only. */
#ifndef TALUS_CONTROLLERS_IMPEDANCE_H
#define TALUS_CONTROLLERS_IMPEDANCE_H

#include "talus/talus.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_impedance_params {
  double k;       /* stiffness on every actuated DOF, N m/rad or N/m [100] */
  double d;       /* damping on every actuated DOF, N m s/rad or N s/m, used
                     when zeta is 0 [10] */
  double zeta;    /* > 0: damping ratio; the damping of DOF i is then
                     2 zeta sqrt(k M_ii) at the initial configuration
                     (tl_impedance_damping_for), which keeps the explicit
                     law stable on light distal links [0.7] */
  int gravity;    /* 1: add the gravity compensation g(q) [1] */
  int coriolis;   /* 1: also compensate Coriolis and centrifugal forces,
                     i.e. add the full h(q, u) [0] */
  int implicit;   /* 1: K and D through the engine's stable PD [0] */
} tl_impedance_params;

typedef struct tl_impedance_controller {
  tl_system *sys;      /* controlled system (not owned) */
  tl_impedance_params p;
  int nq, nv;
  int nbase;           /* 6 for a floating base (not actuated), else 0 */
  double *K, *D;       /* nv per-DOF gains (0 on the base DOFs) */
  double *q_d;         /* nq desired configuration */
  double *u_d;         /* nv desired velocity */
  double *q, *u;       /* nq / nv measured state */
  double *tau;         /* nv last generalized force applied */
  double *h, *hc;      /* nv scratch: h and h without gravity */
  double *e;           /* nv scratch: q_d (-) q (tl_model_difference) */
  double *zero_gains;  /* nv zeros */
  double *M;           /* nv x nv scratch (tl_impedance_damping_for) */
} tl_impedance_controller;

/* Defaults (brackets above). */
tl_impedance_params tl_impedance_default_params(void);

/* Set one parameter by name: "k", "d", "zeta", "gravity", "coriolis",
 * "implicit" (the last three 0 or 1). TL_ERR_ARGUMENT for an unknown name or bad value. */
tl_status tl_impedance_params_set(tl_impedance_params *p, const char *key, double value,
                                  tl_error *err);

/* Initialise for `sys`: stiffness p->k on every actuated DOF, damping p->d
 * (or from p->zeta and the current mass matrix when zeta > 0), desired
 * configuration q_d (nq entries; NULL = the current q), desired velocity 0.
 * In explicit mode the system's PD gains are set to 0 (the controller owns
 * the actuation); in implicit mode to K, D. params NULL = defaults.
 * Errors: TL_ERR_ARGUMENT (NULL, wrong nq, non-finite values, negative
 * gains), TL_ERR_MEMORY. On failure ctrl is zeroed. */
tl_status tl_impedance_init(tl_impedance_controller *ctrl, tl_system *sys,
                            const tl_impedance_params *params, const double *q_d, int nq,
                            tl_error *err);

/* Per-DOF gains (nv entries each, >= 0; base DOFs are ignored). No allocation. */
tl_status tl_impedance_set_gains(tl_impedance_controller *ctrl, const double *K, const double *D,
                                 int nv, tl_error *err);

/* Desired state: q_d (nq, rad / m, quaternions for spherical joints) and
 * u_d (nv, rad/s / m/s; NULL = zeros). No allocation. */
tl_status tl_impedance_set_target(tl_impedance_controller *ctrl, const double *q_d, int nq,
                                  const double *u_d, int nv, tl_error *err);

/* Per-tick update between tl_world_integrate1 and tl_world_integrate2:
 * computes tau (ctrl->tau) and applies it. No allocation. */
tl_status tl_impedance_update(tl_impedance_controller *ctrl, tl_error *err);

/* Damping giving damping ratio zeta to each actuated DOF at the current
 * configuration: D_i = 2 zeta sqrt(K_i M_ii) (M from the current state;
 * diagonal approximation of the joint's inertia). Writes ctrl->D and
 * applies the gains. No allocation (computes M: not free, call it rarely). */
tl_status tl_impedance_damping_for(tl_impedance_controller *ctrl, double zeta, tl_error *err);

/* Free the arrays and zero ctrl. The system keeps its last force and gains.
 * NULL and a zeroed controller are allowed. */
void tl_impedance_free(tl_impedance_controller *ctrl);

#ifdef __cplusplus
}
#endif
#endif
