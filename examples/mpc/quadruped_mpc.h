/* quadruped_mpc: a receding-horizon iLQR (Tassa, Erez, Todorov, IROS 2012)
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
 * qmpc_create. */
#ifndef TALUS_EXAMPLES_QUADRUPED_MPC_H
#define TALUS_EXAMPLES_QUADRUPED_MPC_H

#include <talus/talus.h>

typedef struct qmpc_params {
  int horizon;         /* knots N (default 30) */
  double dt;           /* the plan's time step, s (default 0.01) */
  double kp, kd;       /* the joint PD of the plant and of the plan (N m/rad, N m s/rad) */
  double mu_ground;    /* friction coefficient of the model's ground (default 0.8) */
  /* weights on e = (q (-) q_ref, u): base position xy, height z, roll/pitch, yaw, joints,
   * base linear velocity, base angular velocity, joint velocities; torque r; terminal factor */
  double w_xy, w_z, w_rp, w_yaw, w_joint, w_vlin, w_vang, w_vjoint, r_tau, terminal;
  int iterations;      /* iLQR iterations per control step (default 1) */
} qmpc_params;

void qmpc_params_default(qmpc_params *p);

typedef struct qmpc qmpc;

/* The MPC for `model` (a floating base) with the reference configuration
 * q_ref (nq: base pose and the nominal joint posture, also the PD targets).
 * Allocates everything it will use. */
tl_status qmpc_create(const tl_model *model, const qmpc_params *p, const double *q_ref, qmpc **out,
                      tl_error *err);
void qmpc_free(qmpc *c);
/* One control step from the measured state (q: nq, u: nv): shifts the plan,
 * runs the iterations, writes the feed-forward torque to apply now into tau
 * (nv: zeros on the base, the first knot's torque on the joints). */
tl_status qmpc_update(qmpc *c, const double *q, const double *u, double *tau, tl_error *err);
/* Cost of the current plan, and the number of derivative calls that fell back to finite differences. */
double qmpc_cost(const qmpc *c);
int qmpc_fallbacks(const qmpc *c);

#endif
