/* Talus `osc` controller: operational-space control of one frame of a
 * fixed-base robot (an arm's end effector), position and optionally
 * orientation, with a null-space posture task.
 *
 * Source: O. Khatib, "A unified approach for motion and force control of
 * robot manipulators: the operational space formulation", IEEE J. Robotics
 * and Automation 3(1), 1987. With J the task Jacobian (3 x nv, or 6 x nv
 * with orientation), M the mass matrix and h the nonlinear term:
 *
 *   Lambda = (J M^-1 J^T)^-1                       task-space inertia
 *   a_des  = a_d + Kp (x_d - x) + Kd (v_d - v)     desired task acceleration
 *   F      = Lambda (a_des - dJ/dt u)              task force
 *   Jbar   = M^-1 J^T Lambda                       dynamically consistent inverse
 *   tau    = J^T F + h + N^T tau_0,  N^T = I - J^T Jbar^T,
 *   tau_0  = kp_null (q_0 - q) - kd_null u         posture torque
 *
 * so that the task acceleration is exactly a_des (J M^-1 N^T = 0) and the
 * posture torque acts only in the null space of the task. Orientation error:
 * the rotation vector log(R_d R^T) (world). Near singularities
 * J M^-1 J^T + eps I is inverted (eps = params.singular_damping). The
 * engine's viscous joint damping is compensated only when given
 * (params.damping: the public API has no getter for it); otherwise the
 * feedback absorbs it, which on light wrists (damping / inertia of tens of
 * 1/s) slows the orientation task down.
 *
 * The torque is applied with tl_system_set_generalized_force (the system's
 * PD gains are set to 0). It is explicit: Kp dt^2 and Kd dt must be small
 * (defaults: 400 1/s^2 and 40 1/s, fine at dt <= 2 ms).
 *
 * Also here: tl_osc_circle, a circle trajectory (position, velocity and
 * acceleration) with a smooth start, used by `talus simulate --controller
 * osc` and examples/arm_circle.c.
 *
 * Memory is allocated in tl_osc_init only; tl_osc_update never allocates.
 * Written against the public API only. */
#ifndef TALUS_CONTROLLERS_OSC_H
#define TALUS_CONTROLLERS_OSC_H

#include "talus/talus.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_osc_params {
  double kp;          /* position stiffness, 1/s^2 (acceleration per m) [400] */
  double kd;          /* position damping, 1/s [40] */
  int orientation;    /* 1: also control the frame's orientation (6-D task) [0] */
  double kp_ori;      /* orientation stiffness, 1/s^2 [400] */
  double kd_ori;      /* orientation damping, 1/s [40] */
  double kp_null;     /* posture stiffness, N m/rad [20] */
  double kd_null;     /* posture damping, N m s/rad [2] */
  double singular_damping; /* eps added to J M^-1 J^T, (m/s^2 / N) [1e-6] */
  double damping;     /* viscous joint damping to compensate, N m s/rad: adds
                         damping u to tau (set it to the URDF's <dynamics
                         damping>, e.g. 0.5 for the iiwa) [0] */
} tl_osc_params;

typedef struct tl_osc_controller {
  tl_system *sys;     /* controlled system (not owned) */
  tl_osc_params p;
  int nq, nv, m;      /* m = 3 (position) or 6 (position and orientation) */
  int frame, body;    /* controlled frame and its body */
  double x_d[3], v_d[3], a_d[3]; /* desired position (m), velocity, acceleration (world) */
  double R_d[9], w_d[3], al_d[3]; /* desired orientation, angular velocity, acceleration */
  double x[3], R[9];  /* measured frame pose at the last update */
  double pos_error;   /* |x_d - x| at the last update, m */
  double ori_error;   /* |log(R_d R^T)| at the last update, rad */
  double *q0;         /* nq posture */
  double *q, *u;      /* nq / nv state */
  double *M, *Minv;   /* nv x nv */
  double *J;          /* m x nv task Jacobian (rows: linear, then angular) */
  double *JMinv;      /* m x nv: J M^-1 */
  double *Lambda;     /* m x m */
  double *Jbar;       /* nv x m: M^-1 J^T Lambda */
  double *h;          /* nv */
  double *tau0;       /* nv posture torque, then N^T tau0 */
  double *tau;        /* nv torque applied at the last update */
  double *Jr;         /* 3 x nv scratch */
} tl_osc_controller;

/* Defaults (brackets above). */
tl_osc_params tl_osc_default_params(void);

/* Set one parameter by name ("kp", "kd", "orientation" (0/1), "kp_ori",
 * "kd_ori", "kp_null", "kd_null", "singular_damping", "damping").
 * TL_ERR_ARGUMENT for an unknown name or a bad value. */
tl_status tl_osc_params_set(tl_osc_params *p, const char *key, double value, tl_error *err);

/* Initialise for the fixed-base system `sys` controlling frame `frame`
 * (tl_model_frame_index). The target is the frame's current pose at rest,
 * the posture q_0 the current q. params NULL = defaults. Sets the PD gains
 * of the system to 0. Errors: TL_ERR_ARGUMENT (NULL, floating base, bad
 * frame or parameter), TL_ERR_MEMORY. On failure ctrl is zeroed. */
tl_status tl_osc_init(tl_osc_controller *ctrl, tl_system *sys, int frame,
                      const tl_osc_params *params, tl_error *err);

/* Desired position x (m), velocity v (m/s) and acceleration a (m/s^2) of
 * the frame origin, world frame; v and a may be NULL (zero). */
tl_status tl_osc_set_position_target(tl_osc_controller *ctrl, const double x[3],
                                     const double v[3], const double a[3], tl_error *err);
/* Desired orientation R (world from frame, row-major), angular velocity w
 * (rad/s) and acceleration al (rad/s^2), world; w, al may be NULL (zero).
 * Used when params.orientation is 1. */
tl_status tl_osc_set_orientation_target(tl_osc_controller *ctrl, const double R[9],
                                        const double w[3], const double al[3], tl_error *err);
/* Posture q_0 (nq) of the null-space task. */
tl_status tl_osc_set_posture(tl_osc_controller *ctrl, const double *q0, int nq, tl_error *err);

/* Per-tick update between tl_world_integrate1 and tl_world_integrate2:
 * computes and applies tau (ctrl->tau); updates pos_error / ori_error
 * (errors of the state the torque was computed from). No allocation. */
tl_status tl_osc_update(tl_osc_controller *ctrl, tl_error *err);

/* Free the arrays and zero ctrl. NULL and a zeroed controller are allowed. */
void tl_osc_free(tl_osc_controller *ctrl);

/* ---- circle trajectory ---- */
typedef struct tl_osc_circle {
  double center[3];  /* m, world */
  double u[3], v[3]; /* orthonormal in-plane axes: x(t) = c + r (cos th u + sin th v) */
  double radius;     /* m */
  double period;     /* s, one turn at full speed */
  double ramp;       /* s: the angular rate ramps smoothly from 0 over this time */
  double phase0;     /* rad, angle at t = 0 */
} tl_osc_circle;

/* A circle through the start point `start` (m, world) in the plane with
 * unit normal `normal` (e.g. {1, 0, 0}: the y-z plane), the centre `radius`
 * away from start along -u, where u is the projection of `toward` (may be
 * NULL: world z, or x if normal is along z) on the plane. Errors:
 * TL_ERR_ARGUMENT for non-finite input, radius < 0, period <= 0, ramp < 0
 * or a zero normal. */
tl_status tl_osc_circle_make(tl_osc_circle *c, const double start[3], const double normal[3],
                             const double toward[3], double radius, double period, double ramp,
                             tl_error *err);
/* Position (m), velocity (m/s) and acceleration (m/s^2) at time t >= 0 (s,
 * from the start); any output may be NULL. theta(t) = phase0 + w (t - ramp/2)
 * after the ramp, with the rate rising as a smoothstep during it. */
void tl_osc_circle_eval(const tl_osc_circle *c, double t, double x[3], double v[3], double a[3]);

#ifdef __cplusplus
}
#endif
#endif
