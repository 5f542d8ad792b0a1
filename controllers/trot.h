/* Talus `trot` controller: a trotting gait for a quadruped with 3-DOF legs.
 *
 * Sources
 * - Gait and balance: M. H. Raibert, "Legged Robots That Balance", MIT Press,
 *   1986 (ch. 2 and 5): a phase clock, diagonal leg pairs (LF+RH / RF+LH)
 *   alternating in stance, foot placement feedback (the swing foot lands at
 *   the neutral point v T_stance / 2 ahead of its nominal place plus
 *   k_raibert (v - v_cmd)) and ground speed matching (the swing foot lands
 *   moving backwards at the stance speed).
 * - Swing trajectory: horizontally a cubic Hermite from lift-off to
 *   touch-down with the stance velocity at both ends; vertically the
 *   (1 - cos 2 pi tau) / 2 lift of the cycloid swing (Sakakibara et al., "A
 *   realization of dynamic walking by the quadruped robot TITAN VI", 1990),
 *   step_height high, zero vertical velocity at both ends.
 * - Leg inverse kinematics: damped least squares (Wampler, "Manipulator
 *   inverse kinematic solutions based on vector formulations and damped
 *   least-squares methods", IEEE SMC 16(1), 1986; Nakamura & Hanafusa 1986):
 *   dq = J^T (J J^T + lambda^2 I)^-1 (p_des - p) on the 3 x 3 positional
 *   Jacobian block of each foot point, iterated ik_iterations times per tick
 *   in the base frame on a private kinematic copy of the robot (its own
 *   tl_world, base at the origin), warm-started from the previous solution.
 * - Stance forces (virtual model control, Pratt et al., "Virtual model
 *   control: an intuitive approach for bipedal locomotion", IJRR 20(2), 2001;
 *   force distribution as in Hyon, Hale, Cheng, "Full-body compliant
 *   human-humanoid interaction", IEEE T-RO 23(5), 2007): ground forces f on
 *   the stance feet that carry weight_ff m g and the attitude moment
 *   I (att_kp e - att_kd w) about the centre of mass, by weighted least
 *   norm (horizontal components penalised, f_z >= 0, |f_xy| <= 0.6 f_z);
 *   each stance leg gets tau = h_leg - J_leg^T f.
 * - Swing legs: tau = h_leg + M_ll qdd_des (computed-torque feedforward,
 *   qdd_des from the change of the joint velocity targets).
 *   Both go in as the feedforward generalized force of the engine's
 *   implicit PD (RaiSim's setPdTarget + setGeneralizedForce; Tan, Liu,
 *   Turk, "Stable proportional-derivative controllers", IEEE CG&A 31(4), 2011).
 *
 * What it does each tick (tl_trot_update, between tl_world_integrate1 and
 * tl_world_integrate2):
 * 1. reads the base pose and velocity; yaw frame = base frame turned level;
 * 2. phase clock: for stand_time s all four feet stay down while the base
 *    moves to the nominal height; then pair LF+RH swings in the first
 *    (1 - duty) of each period and RF+LH half a period later; the speed
 *    command ramps from 0 to `speed` over ramp_time s;
 * 3. desired foot positions relative to the base origin in the yaw frame:
 *    a stance foot starts where it actually touched down and moves
 *    backwards at v_cmd + an integral correction of the speed error (x, and
 *    the sideways drift, gain k_speed), turning against a heading error
 *    (k_yaw); a swing foot follows the trajectory above;
 * 4. maps them into the base frame (with k_attitude > 0, through the
 *    measured roll and pitch scaled by k_attitude) and solves the leg IK;
 * 5. sets the joint PD targets (q from the IK, u = J^-1 of the desired foot
 *    velocity) and the feedforward generalized force (above).
 * Measured on flat ground at 0.5 m/s (dt 1 ms, defaults): talus_quadruped
 * and ANYmal C trot at 0.50 m/s mean with |roll|, |pitch| < 0.08 rad and
 * joint torques below 70 N m.
 *
 * Feet: the four leaf bodies of the kinematic tree (each must be carried by
 * exactly 3 one-DOF joints below a floating base); on each, the lowest
 * primitive collision geom of the initial pose is the foot (its centre for a
 * sphere, the bottom of its bounding box otherwise; the lowest frame of the
 * body when it has no primitive geom). Or name the four foot frames
 * (params.foot_frames). Legs are told apart by the foot position in the yaw
 * frame: ahead of / behind the feet's mean x, left / right of their mean y.
 * The nominal stance puts each foot under its leg's second joint (x), at its
 * initial y, `depth` below the base origin.
 *
 * Conventions: base x forward, y left, z up; the floating base must be the
 * root joint. Units SI. Memory is allocated in tl_trot_init only;
 * tl_trot_update never allocates. Written against the public API only. */
#ifndef TALUS_CONTROLLERS_TROT_H
#define TALUS_CONTROLLERS_TROT_H

#include "talus/talus.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TL_TROT_LF = 0, TL_TROT_RF = 1, TL_TROT_LH = 2, TL_TROT_RH = 3 };

/* Parameters (tl_trot_default_params gives the defaults in brackets). */
typedef struct tl_trot_params {
  double speed;       /* commanded forward speed along the heading, m/s [0.5] */
  double period;      /* gait period (a full cycle of both pairs), s [0.45] */
  double duty;        /* fraction of the period a foot is in stance, (0, 1) [0.5] */
  double step_height; /* swing apex above the lift-off / touch-down line, m [0.08] */
  double kp;          /* joint PD proportional gain, N m/rad [150] */
  double kd;          /* joint PD derivative gain, N m s/rad [4] */
  double depth;       /* nominal foot point depth below the base origin, m;
                         0 = automatic: the initial depth, at most 0.8 x the
                         reach of the leg's last two segments [0] */
  double stand_time;  /* s on four feet before trotting [0.5] */
  double ramp_time;   /* s to ramp the speed command from 0 to speed [1.0] */
  double k_raibert;   /* touch-down offset per unit velocity error, s [0.1] */
  double k_attitude;  /* kinematic attitude correction: the yaw-frame targets
                         are mapped into the base frame through the measured
                         roll and pitch scaled by this (0 = plain yaw frame;
                         above 1 it destabilises) [0] */
  double k_yaw;       /* heading correction: stance yaw rate per rad of heading
                         error (1/s), also the heading term of the attitude
                         moment (att_kp k_yaw) [1.0] */
  double weight_ff;   /* fraction of m g the stance legs carry as feedforward
                         force, [0, 1.5] [1.0] */
  double k_inertia;   /* scale of the swing legs' inertial feedforward
                         M_ll qdd_des, [0, 2] [1.0] */
  double k_speed;     /* integral gain of the speed feedback on the stance
                         sweep, 1/s [1.0] */
  double att_kp;      /* attitude stiffness of the stance forces, 1/s^2: the
                         moment I att_kp e, I the robot's rotational
                         inertia about its COM, e the rotation to level [36] */
  double att_kd;      /* attitude damping, 1/s: moment -I att_kd w [10] */
  int ik_iterations;  /* damped-least-squares iterations per tick, >= 1 [3] */
  double ik_damping;  /* lambda of the damped least squares, m [0.01] */
  const char *foot_frames[4]; /* frame names of the feet LF RF LH RH, or all NULL
                                 (automatic) [NULL]; read at init only */
} tl_trot_params;

/* One leg (internal state, readable for diagnostics). */
typedef struct tl_trot_leg {
  int body;             /* body carrying the foot */
  double foot_local[3]; /* foot point in that body's frame, m */
  double radius;        /* foot sphere radius (0 if not a sphere), m */
  int dof[3];           /* u indices of the leg DOFs, hip to foot */
  int qi[3];            /* q indices of the same */
  double lower[3], upper[3]; /* joint limits, rad */
  double nominal[3];    /* nominal foot position, yaw frame relative to the base origin, m */
  double start[3];      /* foot position at init (same frame), m */
  int stance;           /* 1 in stance, 0 in swing */
  double p_lo[3];       /* swing start (lift-off) target, m */
  double p_td[3];       /* current touch-down target, m */
  double p_des[3];      /* current desired position (yaw frame), m */
  double v_des[3];      /* its time derivative (yaw frame), m/s */
} tl_trot_leg;

typedef struct tl_trot_controller {
  tl_system *sys;       /* controlled system (not owned) */
  tl_trot_params p;     /* parameters (foot_frames pointers cleared after init) */
  int nq, nv;
  double mass;          /* total mass, kg */
  double depth;         /* nominal foot depth used, m */
  tl_trot_leg leg[4];   /* LF RF LH RH */
  double t0;            /* time of the first update, s */
  int started;
  double yaw_ref;       /* heading held, rad */
  double v_cmd;         /* current speed command (ramped), m/s */
  double last_time;     /* time of the previous update, s */
  double v_filt[3];     /* low-pass filtered base velocity, yaw frame, m/s */
  double v_int[2];      /* integral speed correction (x, y, yaw frame), m/s */
  double lateral_cmd;   /* sideways velocity command (yaw frame, +y left), m/s (tl_trot_set_command) */
  double yaw_rate_cmd;  /* turning command, rad/s (+ counter-clockwise seen from above) */
  double ik_residual;   /* largest foot position error before the last IK
                           iteration of the last update, m (diagnostic) */
  /* kinematic copy (base at the origin) for the IK */
  tl_world *kin_world;
  tl_system *kin;
  /* arrays (allocated at init) */
  double *q, *u;        /* measured state, nq / nv */
  double *qk, *uk;      /* kinematic copy state, nq / nv (uk zeros) */
  double *q_target, *u_target; /* nq / nv */
  double *kp, *kd;      /* nv */
  double *tau, *h;      /* nv */
  double *Jp;           /* 3 x nv dense Jacobian scratch */
  double *M;            /* nv x nv mass matrix scratch */
  double *u_target_prev; /* nv, velocity targets of the previous tick */
  int swing_prev[4];    /* leg was in swing at the previous tick */
} tl_trot_controller;

/* Defaults (see the brackets above). */
tl_trot_params tl_trot_default_params(void);

/* Set one parameter by name ("speed", "period", "duty", "step_height",
 * "kp", "kd", "depth", "stand_time", "ramp_time", "k_raibert", "k_attitude",
 * "k_yaw", "weight_ff", "k_inertia", "k_speed", "att_kp", "att_kd", "ik_iterations",
 * "ik_damping"); value in the units
 * above. TL_ERR_ARGUMENT for an unknown name or a value out of range. */
tl_status tl_trot_params_set(tl_trot_params *p, const char *key, double value, tl_error *err);

/* Initialise `ctrl` for the quadruped `sys` in its current state (call after
 * placing it). Finds the feet, the leg DOFs and the nominal stance, builds
 * the kinematic copy, sets the PD gains (0 on the 6 base DOFs) and holds the
 * current joint configuration. params: NULL = defaults.
 * Errors: TL_ERR_ARGUMENT (bad parameter, not a floating-base quadruped with
 * four 3-DOF legs, unknown foot frame), TL_ERR_MEMORY. On failure ctrl is
 * zeroed (nothing to free). */
tl_status tl_trot_init(tl_trot_controller *ctrl, tl_system *sys, const tl_trot_params *params,
                       tl_error *err);

/* Per-tick update, between tl_world_integrate1 and tl_world_integrate2.
 * time: simulated time, s (tl_world_time); the gait clock starts at the
 * first call. Sets PD targets and the feedforward generalized force.
 * No allocation. */
tl_status tl_trot_update(tl_trot_controller *ctrl, double time, tl_error *err);

/* Change the speed command (m/s, finite), effective at the next update. */
tl_status tl_trot_set_speed(tl_trot_controller *ctrl, double speed, tl_error *err);
/* The sideways and turning commands (0 after init), effective at the next update while
 * trotting: lateral (m/s, |.| <= 1, yaw frame, + left) enters the Raibert touch-down point, the
 * stance sweep and the integral speed feedback as the forward speed does; yaw_rate (rad/s,
 * |.| <= 2) turns the held heading at that rate and the stance feet sweep with it (feedforward on
 * top of the heading correction). TL_ERR_ARGUMENT for a value not finite or out of range. */
tl_status tl_trot_set_command(tl_trot_controller *ctrl, double lateral, double yaw_rate, tl_error *err);

/* Free the controller's memory (and its kinematic copy) and zero it.
 * The system keeps its last gains, targets and feedforward force. NULL and a
 * zeroed controller are allowed. */
void tl_trot_free(tl_trot_controller *ctrl);

#ifdef __cplusplus
}
#endif
#endif
