/* mpc: a receding-horizon iLQR (Tassa, Erez, Todorov, IROS 2012)
 * for a floating-base legged robot standing on the ground, on Talus's
 * analytic step derivatives with contacts (tl_world_step_derivatives,
 * TL_DERIV_ANALYTIC). Written against the public API only (talus/talus.h).
 *
 * Model: a world of its own (the plan's model) holding one copy of the
 * robot on a ground plane, stepped with the plan's time step (the control
 * period by default), with the same implicit PD (gains, targets: the
 * nominal posture) as the plant. State x = (q, u) (tangent space of
 * tl_model_integrate for q: 2 nv entries), control = the feed-forward torques
 * of the actuated DOFs (the joints, nv - 6; N m), added to the PD inside the
 * step (so B is the step's dx+/dtau restricted to the joint columns).
 * Cost per knot 1/2 e^T W e + 1/2 r |tau - tau_nom|^2 with
 * e = (q (-) q_ref, u) (tl_model_difference; Gauss-Newton: de/dx = 1),
 * terminal 1/2 e^T W_f e. One iteration per control step, warm-started from
 * the previous plan shifted by one knot: roll out the shifted controls from
 * the measured state, linearize every knot, backward pass (Levenberg-
 * Marquardt mu on Q_uu, Cholesky), forward line search alpha in {1, 1/2, 1/4}
 * (with the feedback gains), keep the lowest cost. Nothing allocates after
 * tl_mpc_create. */
#ifndef TALUS_CONTROLLERS_MPC_H
#define TALUS_CONTROLLERS_MPC_H

#include <talus/talus.h>

typedef struct tl_mpc_params {
  int horizon;         /* knots N (default 30) */
  double dt;           /* the plan's time step, s (default 0.01) */
  double kp, kd;       /* the joint PD of the plant and of the plan (N m/rad, N m s/rad) */
  double mu_ground;    /* friction coefficient of the model's ground (default 0.8) */
  /* weights on e = (q (-) q_ref, u): base position xy, height z, roll/pitch, yaw, joints,
   * base linear velocity, base angular velocity, joint velocities; torque r; terminal factor */
  double w_xy, w_z, w_rp, w_yaw, w_joint, w_vlin, w_vang, w_vjoint, r_tau, terminal;
  int iterations;      /* iLQR iterations per control step (default 1) */
} tl_mpc_params;

void tl_mpc_params_default(tl_mpc_params *p);

typedef struct tl_mpc tl_mpc;

/* The MPC for `model` (a floating base) with the reference configuration
 * q_ref (nq: base pose and the nominal joint posture, also the PD targets).
 * Allocates everything it will use. */
tl_status tl_mpc_create(const tl_model *model, const tl_mpc_params *p, const double *q_ref, tl_mpc **out,
                      tl_error *err);
void tl_mpc_free(tl_mpc *c);
/* One control step from the measured state (q: nq, u: nv): shifts the plan,
 * runs the iterations, writes the feed-forward torque to apply now into tau
 * (nv: zeros on the base, the first knot's torque on the joints). */
tl_status tl_mpc_update(tl_mpc *c, const double *q, const double *u, double *tau, tl_error *err);
/* Cost of the current plan, and the number of derivative calls that fell back to finite differences. */
double tl_mpc_cost(const tl_mpc *c);
int tl_mpc_fallbacks(const tl_mpc *c);


/* ---- as a controller of controllers/ (`talus simulate --controller mpc`) ----
 * Holds a floating-base legged robot standing at a base height: the
 * reference is tl_find_standing_pose at `height` (m; <= 0: 0.58 of the mean
 * leg length, 0.456 m for robots/talus_quadruped), base level at the
 * system's current x, y. init sets the plant's joint PD (p->kp, p->kd) with
 * the standing posture as targets and builds the MPC; update re-plans every
 * p->dt of simulated time (the first call at once) from the system's state
 * and sets the feed-forward torque (tl_system_set_generalized_force) held
 * until the next re-plan. Allocation only in init. */
typedef struct tl_mpc_controller {
  tl_mpc *mpc;
  tl_mpc_params params;
  tl_system *sys;
  int nq, nv, started;
  double *q, *u, *tau, *q_ref;
  double period, next, height;
  double cpu_sum, cpu_max; /* thread CPU time of the re-plans, s */
  int nsolve;
} tl_mpc_controller;

tl_status tl_mpc_controller_init(tl_mpc_controller *c, tl_system *sys, const tl_mpc_params *p, double height,
                                 tl_error *err);
/* Called every step (between integrate1 and integrate2, or before a step);
 * time: tl_world_time (s). */
tl_status tl_mpc_controller_update(tl_mpc_controller *c, double time, tl_error *err);
void tl_mpc_controller_free(tl_mpc_controller *c);
/* Set one parameter of p by name (horizon, dt, kp, kd, iterations, mu_ground, w_xy, w_z, w_rp, w_yaw,
 * w_joint, w_vlin, w_vang, w_vjoint, r_tau, terminal): TL_ERR_ARGUMENT for an unknown key or a value out
 * of range (horizon 2 .. 200 knots, dt > 0, the others >= 0; iterations 1 .. 20). */
tl_status tl_mpc_params_set(tl_mpc_params *p, const char *key, double value, tl_error *err);

#endif
