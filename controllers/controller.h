/* Talus controllers by name: build any controller of controllers/ from a
 * text such as "trot:speed=0.5,kp=100" and run it, the same way for
 * `talus simulate`, `talus compare` and sweeps (talus/sweep.h).
 *
 * Names and their parameters (docs in each controller's header):
 *   stand      kp, kd (stand.h): hold the initial configuration with the implicit PD;
 *   trot       every key of tl_trot_params_set (trot.h);
 *   impedance  every key of tl_impedance_params_set (impedance.h), holding the
 *              initial configuration;
 *   osc        every key of tl_osc_params_set (osc.h), plus the circle the
 *              controlled frame follows: radius (m, 0.1), period (s, 4), ramp
 *              (s, 0.5), normal_x / normal_y / normal_z (the circle's plane
 *              normal, (1, 0, 0)) and frame (a frame or link name, or an index;
 *              default: the end effector, tl_controller_default_ee_frame);
 *   mpc        height (m; default 0.58 of the leg length) and every key of
 *              tl_mpc_params_set (mpc.h): receding-horizon iLQR on the analytic
 *              step derivatives holding a legged robot standing;
 *   none       no parameters; nothing is controlled.
 * Values are numbers in C syntax (osc's frame may be a name).
 *
 * Memory: tl_controller_init allocates (through the controllers' own init);
 * tl_controller_update never allocates. Written against the public API only. */
#ifndef TALUS_CONTROLLERS_CONTROLLER_H
#define TALUS_CONTROLLERS_CONTROLLER_H

#include <stddef.h>

#include "impedance.h"
#include "mpc.h"
#include "osc.h"
#include "stand.h"
#include "trot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tl_controller_kind {
  TL_CONTROLLER_STAND = 0,
  TL_CONTROLLER_NONE = 1,
  TL_CONTROLLER_TROT = 2,
  TL_CONTROLLER_IMPEDANCE = 3,
  TL_CONTROLLER_OSC = 4,
  TL_CONTROLLER_MPC = 5
} tl_controller_kind;

#define TL_CONTROLLER_MAX_PARAMS 24

typedef struct tl_controller_param {
  char key[32];
  char value[256]; /* long enough for four link names (trot feet=) */
} tl_controller_param;

/* A controller and its parameters, kept as text until it is built. */
typedef struct tl_controller_spec {
  tl_controller_kind kind;
  int nparam;
  tl_controller_param param[TL_CONTROLLER_MAX_PARAMS];
  /* Gain overrides (talus simulate --kp / --kd): the controller's main
   * proportional / derivative gain (stand: kp, kd; trot: kp, kd; impedance: k,
   * and d with zeta 0; osc: kp, kd) when given (kp_given / kd_given), before
   * the key=value parameters. stand uses kp / kd as its defaults. */
  int kp_given, kd_given;
  double kp, kd;
  /* Scales applied after everything else (sweeps' kp_scale / kd_scale,
   * default 1): stand kp, kd; trot kp, kd; impedance k and d (or zeta when
   * zeta > 0, which scales the damping it gives by the same factor); osc
   * kp, kp_ori, kp_null and kd, kd_ori, kd_null. */
  double kp_scale, kd_scale;
} tl_controller_spec;

/* stand, no parameters, kp / kd = TL_STAND_DEFAULT_KP / _KD (not given), scales 1. */
tl_controller_spec tl_controller_spec_default(void);

/* Parse "NAME[:KEY=VALUE,...]" into spec->kind and spec->param (the
 * overrides and scales are kept). Errors (TL_ERR_ARGUMENT, element
 * "controller"): unknown name (the message lists them), an item that is not
 * KEY=VALUE, nothing after ':', a trailing ',', too many or too long
 * parameters, parameters for "none". Values are checked by tl_controller_init. */
tl_status tl_controller_spec_parse(const char *text, tl_controller_spec *spec, tl_error *err);

/* "stand", "none", "trot", "impedance", "osc", "mpc" ("?" otherwise). */
const char *tl_controller_kind_name(tl_controller_kind kind);

/* The base a controller loads its robot with: impedance and osc control
 * fixed-base arms, so TL_BASE_AUTO becomes TL_BASE_FIXED for them. */
tl_base_type tl_controller_base(const tl_controller_spec *spec, tl_base_type requested);

/* Write the text form "NAME[:KEY=VALUE,...]" into buf (cap bytes, truncated). */
void tl_controller_spec_format(const tl_controller_spec *spec, char *buf, size_t cap);

/* A running controller (one of the controllers, by kind). */
typedef struct tl_controller {
  tl_controller_kind kind;
  int active;             /* 1 after a successful init (none: 0) */
  tl_stand_controller stand;
  tl_trot_controller trot;
  tl_impedance_controller imp;
  tl_osc_controller osc;
  tl_mpc_controller mpc;
  tl_osc_circle circle;   /* osc: the target trajectory */
  double t0;              /* osc: time of the first update, s */
  int started;
  double gain_scale;      /* the "gain_scale" parameter (tl_controller_set_param), 1 after init */
  double center0[3];      /* osc: the circle's centre at init (world, m) */
} tl_controller;

/* Build the controller of spec for sys in its current state; q (nq values)
 * is the configuration stand and impedance hold (NULL: the current one).
 * Errors: TL_ERR_ARGUMENT with element "controller" for a bad parameter
 * (unknown key, a value that is not a finite number or out of range, an
 * unknown osc frame), the controller's own init error otherwise (its message
 * prefixed by "NAME controller: "). On failure c is zeroed. */
tl_status tl_controller_init(tl_controller *c, const tl_controller_spec *spec, tl_system *sys,
                             const double *q, int nq, tl_error *err);

/* osc's default frame: the end effector, the last frame on the end of the longest chain
 * of bodies that is not a finger (a link or joint named finger, thumb, knuckle or gripper;
 * depth = movable joints from the root, the later body depth-first on a tie): a serial arm's
 * last link, a gripper arm's hand. -1 for a model without frames. */
int tl_controller_default_ee_frame(const tl_model *model);

/* Per-step update between tl_world_integrate1 and tl_world_integrate2;
 * time: tl_world_time (s). No allocation. TL_OK for none. */
tl_status tl_controller_update(tl_controller *c, double time, tl_error *err);

/* Tracking error of the last update: osc, the distance of the controlled
 * frame from its target (m); impedance, the norm of the joint position
 * error |q - q_d| over the actuated coordinates (rad or m); NAN for the
 * others. */
double tl_controller_tracking_error(const tl_controller *c);

/* ---- tunable parameters (the live view's sliders, talus/record.h) ----
 * A running controller lists the parameters that may change while it runs:
 *   stand      gain_scale (kp and kd times this, 0.05 .. 4), and target:JOINT
 *              (rad or m) for each revolute / prismatic joint: its PD target,
 *              within the joint's limits (unlimited: -pi .. pi rad, -1 .. 1 m);
 *   trot       speed (the forward command, m/s, -1 .. 1.5; ramped as at the
 *              start), lateral (m/s, -0.5 .. 0.5, + left) and yaw_rate (rad/s,
 *              -1 .. 1, + counter-clockwise): tl_trot_set_command; gain_scale
 *              (joint kp and kd);
 *   impedance  gain_scale (K and D), target:JOINT as stand;
 *   osc        center_x / center_y / center_z (the circle's centre, world m,
 *              the start value +- 0.5 m), radius (m, 0 .. 0.3);
 *   none       nothing. */
typedef struct tl_controller_tunable {
  char name[48];   /* e.g. "gain_scale", "target:LF_HFE" */
  char unit[16];   /* "", "rad", "m", "m/s" */
  double min, max; /* the range set_param accepts */
  double value;    /* the current value */
} tl_controller_tunable;

/* Write up to max tunables into out (out may be NULL when max is 0); returns how many the
 * controller has (may exceed max: call again with more room). No allocation. */
int tl_controller_params(const tl_controller *c, tl_controller_tunable *out, int max);
/* Set one tunable by name. TL_ERR_ARGUMENT (element "controller") for an unknown name or a value
 * that is not finite or outside the range tl_controller_params gives; the controller's own
 * errors otherwise. Takes effect at the next tl_controller_update. No allocation. */
tl_status tl_controller_set_param(tl_controller *c, const char *name, double value, tl_error *err);

/* Free and zero c. NULL and a zeroed controller are allowed. */
void tl_controller_free(tl_controller *c);

#ifdef __cplusplus
}
#endif
#endif
