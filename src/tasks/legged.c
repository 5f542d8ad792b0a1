/* Tasks "anymal-locomotion" and "urdf": a robot on flat ground driven by
 * joint position targets through the engine's implicit PD, in the style of
 * the legged-robot reinforcement-learning literature (legged_gym: Rudin,
 * Hoeller, Reist, Hutter, "Learning to walk in minutes using massively
 * parallel deep reinforcement learning", CoRL 2021; raisimGymTorch's ANYmal
 * environment; Hwangbo et al., "Learning agile and dynamic motor skills for
 * legged robots", Science Robotics 2019).
 *
 * Observation (12 + 3 na; na = actuated scalar DOFs, the joints after a
 * floating base or all DOFs of a fixed base), legged_gym's layout and scales:
 *   base linear velocity in the base frame * 2 (3), base angular velocity in
 *   the base frame * 0.25 (3), gravity direction in the base frame (3, unit),
 *   command (vx, vy: * 2; yaw rate: * 0.25) (3), joint positions minus the
 *   default pose (na), joint velocities * 0.05 (na), previous (clipped)
 *   action (na). A fixed base has zero base velocities and the gravity
 *   direction of its weld pose.
 * Action (na): clipped to [-clip_actions, clip_actions]; PD position targets
 *   default_pos + action_scale * a held for `decimation` physics steps (the
 *   implicit PD is evaluated every physics step; targets outside the joint
 *   limits are used at the limit by the engine).
 * Reward: control_dt * sum of weighted terms (legged_gym's convention; the
 *   weights are options reward_<term>), clipped at 0 from below
 *   (legged_gym's only_positive_rewards, option only_positive_rewards=1: with
 *   penalties only, ending an episode early would pay): tracking_lin_vel exp(-|cmd_xy -
 *   v_xy|^2 / 0.25), tracking_ang_vel exp(-(cmd_yaw - w_z)^2 / 0.25),
 *   lin_vel_z v_z^2, ang_vel_xy |w_xy|^2, orientation |g_xy|^2 (tilt),
 *   torques |tau|^2 (actuated DOFs, last physics step), dof_acc |(qd -
 *   qd_prev) / control_dt|^2, action_rate |a - a_prev|^2, pose |q_j -
 *   default|^2.
 * Terminated (floating base): a contact of the base body with positive normal
 *   impulse, or a tilt (angle between base z and world z) above max_tilt.
 * Truncated: episode_length_s.
 *
 * "anymal-locomotion": ANYmal C (anymal_c/urdf/anymal.urdf of the shared
 * robots unless urdf=PATH), commands uniform in command_vx, command_vy,
 * command_yaw ([-1, 1] each) resampled every command_resample_s; default
 * pose legged_gym's ANYmal C stance when the joints have ANYmal's names, else
 * tl_model_default_q. "urdf": any URDF given by urdf=PATH, commands zero (a
 * standing task), default pose tl_model_default_q, and a pose term. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "talus/onboard.h"
#include "tasks/task_internal.h"

enum {
  T_LIN_VEL,
  T_ANG_VEL,
  T_LIN_VEL_Z,
  T_ANG_VEL_XY,
  T_ORIENTATION,
  T_TORQUES,
  T_DOF_ACC,
  T_ACTION_RATE,
  T_POSE,
  T_FEET_AIR_TIME,
  T_COLLISION,
  NTERM
};
static const char *const term_names[NTERM] = {"tracking_lin_vel", "tracking_ang_vel", "lin_vel_z",
                                              "ang_vel_xy",       "orientation",      "torques",
                                              "dof_acc",          "action_rate",      "pose",
                                              "feet_air_time",    "collision"};
static const char *const weight_keys[NTERM] = {
    "reward_tracking_lin_vel", "reward_tracking_ang_vel", "reward_lin_vel_z",   "reward_ang_vel_xy", "reward_orientation",
    "reward_torques",          "reward_dof_acc",          "reward_action_rate", "reward_pose",
    "reward_feet_air_time",    "reward_collision"};
/* Weights: legged_gym's ANYmal C flat-ground values (anymal_c_flat_config.py: orientation -5,
 * torques -2.5e-5, feet_air_time 2; the base LeggedRobotCfg for the others: collision -1), pose 0
 * for locomotion. The standing task (urdf) rewards no steps and penalizes no knee contacts. */
static const double locomotion_weights[NTERM] = {1.0, 0.5, -2.0, -0.05, -5.0, -2.5e-5, -2.5e-7, -0.01, 0.0, 2.0, -1.0};
static const double standing_weights[NTERM] = {1.0, 0.5, -2.0, -0.05, -5.0, -2.5e-5, -2.5e-7, -0.01, -1.0, 0.0, 0.0};

#define ROBOT_MATERIAL "talus_task_robot"
#define TRACKING_SIGMA 0.25
#define FOOT_CONTACT_FORCE 1.0  /* N: a foot is in contact above this normal force (legged_gym) */
#define COLLISION_FORCE 0.1     /* N: a non-foot link collides above this normal force (legged_gym) */
#define AIR_TIME_TARGET 0.5     /* s: steps longer than this earn feet_air_time (legged_gym) */
#define AIR_TIME_MIN_COMMAND 0.1 /* m/s: below this |command_xy| no air-time reward (legged_gym) */

typedef struct legged {
  int locomotion;
  tl_model *model;
  int floating, nq, nv, na;
  int *dof, *qi;          /* [na]: u and q index of each actuated DOF */
  double *lower, *upper;  /* [na] position limits */
  double *default_pos;    /* [na] */
  double *q0;             /* [nq]: default configuration, base at the origin */
  double dt, kp, kd, action_scale, clip, tilt, friction;
  int decimation, cmd_steps, push_steps;
  int ground;             /* a ground plane (default: floating base only) */
  int solver_iter;        /* contact solver: most Gauss-Seidel sweeps per step, */
  double solver_tol;      /* and the impulse tolerance (N s) (tl_world_set_solver_params) */
  double cmd[3][2], cmd_resample_s;
  double cmd_zero_below;  /* m/s: a sampled |command_xy| below this is set to zero (standing) */
  int nfoot;              /* feet: the leaf bodies with a collision geom */
  int *foot_geom;         /* [nfoot]: the foot's collision geom (tl_task_foot_geom) */
  double w[NTERM];
  double joint_noise, base_vel_noise, drop_height;
  tl_rand_ranges rand;
  tl_rand_links links;
  int rand_inertia, rand_friction;
  /* per environment */
  double *prev_action, *prev_vel; /* [nenv * na] */
  double *command;                /* [nenv * 3] */
  int *cmd_countdown, *push_countdown;
  double *qbuf, *ubuf, *vbuf;     /* [nenv * nq], [nenv * nv], [nenv * nv] scratch */
  double *kpbuf, *kdbuf;          /* [nenv * nv] */
  double *air_time;               /* [nenv * nfoot]: s since the foot left the ground */
  unsigned char *last_contact;    /* [nenv * nfoot]: foot contact at the previous control step */
  unsigned char *contact;         /* [nenv * nfoot]: foot contact at this control step */
} legged;

/* ---------------- setup ---------------- */

static tl_status build(void *ctx, int env, tl_world **out, tl_error *err) {
  (void)env;
  legged *L = ctx;
  tl_world *w = NULL;
  tl_system *sys = NULL;
  tl_status st = tl_world_create(&w, err);
  if (!st) st = tl_world_set_timestep(w, L->dt, err);
  if (!st) st = tl_world_set_solver_params(w, L->solver_iter, L->solver_tol, 1.0, err);
  if (!st && L->ground) st = tl_world_add_ground(w, 0.0, L->friction, err);
  if (!st) st = tl_world_add_system(w, L->model, &sys, err);
  /* one material for the whole robot, so the robot-ground friction is one pair entry */
  for (int g = 0; !st && g < tl_model_ngeom(L->model); g++) st = tl_system_set_geom_material(sys, g, ROBOT_MATERIAL, err);
  if (!st) st = tl_world_set_material_pair(w, "ground", ROBOT_MATERIAL, L->friction, 0.0, 0.01, err);
  if (st) {
    tl_world_free(w);
    return st;
  }
  *out = w;
  return TL_OK;
}

/* legged_gym's ANYmal C default joint angles (anymal_c_rough_config.py), by joint name. */
static int anymal_stance(const legged *L, double *pos) {
  static const char *const legs[4] = {"LF", "LH", "RF", "RH"};
  int found = 0;
  for (int j = 0; j < L->na; j++) {
    int body = -1;
    for (int b = 0; b < tl_model_nbody(L->model); b++)
      if (tl_model_joint_u_index(L->model, b) == L->dof[j]) body = b;
    const char *name = body >= 0 ? tl_model_joint_name(L->model, body) : "";
    pos[j] = 0;
    for (int l = 0; l < 4; l++) {
      char haa[16], hfe[16], kfe[16];
      snprintf(haa, sizeof(haa), "%s_HAA", legs[l]);
      snprintf(hfe, sizeof(hfe), "%s_HFE", legs[l]);
      snprintf(kfe, sizeof(kfe), "%s_KFE", legs[l]);
      int front = legs[l][1] == 'F';
      if (!strcmp(name, haa)) found++;
      if (!strcmp(name, hfe)) pos[j] = front ? 0.4 : -0.4, found++;
      if (!strcmp(name, kfe)) pos[j] = front ? -0.8 : 0.8, found++;
    }
  }
  return found == 12 && L->na == 12;
}

/* Feet: every leaf body's foot geom (a leaf without a collision geom has no foot). */
static tl_status find_feet(legged *L, tl_error *err) {
  int nleaf = tl_model_leaf_bodies(L->model, NULL, 0);
  int *leaf = calloc((size_t)nleaf + 1, sizeof(int));
  L->foot_geom = calloc((size_t)nleaf + 1, sizeof(int));
  if (!leaf || !L->foot_geom) {
    free(leaf);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  tl_model_leaf_bodies(L->model, leaf, nleaf);
  for (int i = 0; i < nleaf; i++) {
    double p[3], r;
    int g = tl_task_foot_geom(L->model, leaf[i], p, &r);
    if (g >= 0) L->foot_geom[L->nfoot++] = g;
  }
  free(leaf);
  return TL_OK;
}

static tl_status read_model(legged *L, tl_opts *o, char *path, size_t cap, tl_error *err) {
  const char *base = NULL;
  tl_status st;
  if ((st = tl_task_robot_path(o, L->locomotion ? "anymal_c/urdf/anymal.urdf" : NULL, path, cap, err)) ||
      (st = tl_opts_string(o, "base", &base, err)))
    return st;
  tl_load_options lo = tl_load_options_default();
  if (base && !strcmp(base, "fixed")) lo.base = TL_BASE_FIXED;
  else if (base && !strcmp(base, "floating")) lo.base = TL_BASE_FLOATING;
  else if (base && strcmp(base, "auto"))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "base", "option base=%s: expected fixed, floating or auto", base);
  if ((st = tl_model_load_urdf(path, &lo, &L->model, err))) return st;
  const tl_model *m = L->model;
  L->floating = tl_model_joint_type(m, 0) == TL_JOINT_FLOATING;
  L->nq = tl_model_nq(m);
  L->nv = tl_model_nv(m);
  for (int b = 1; b < tl_model_nbody(m); b++) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC && t != TL_JOINT_UNIVERSAL)
      return tl_error_set(err, TL_ERR_UNSUPPORTED, path, 0, "joint",
                          "joint '%s' is %s: the task drives scalar joints (revolute, prismatic, universal) "
                          "with one PD target each", tl_model_joint_name(m, b), tl_joint_type_name(t));
  }
  L->na = L->nv - (L->floating ? 6 : 0);
  if (L->na < 1) return tl_error_set(err, TL_ERR_INVALID, path, 0, "robot", "'%s' has no joint to actuate", tl_model_name(m));
  return find_feet(L, err);
}

static tl_status alloc_task(legged *L, int nenv, tl_error *err) {
  size_t n = (size_t)nenv, na = (size_t)L->na;
  L->dof = calloc(na, sizeof(int));
  L->qi = calloc(na, sizeof(int));
  L->lower = calloc(na, sizeof(double));
  L->upper = calloc(na, sizeof(double));
  L->default_pos = calloc(na, sizeof(double));
  L->q0 = calloc((size_t)L->nq, sizeof(double));
  L->prev_action = calloc(n * na, sizeof(double));
  L->prev_vel = calloc(n * na, sizeof(double));
  L->command = calloc(n * 3, sizeof(double));
  L->cmd_countdown = calloc(n, sizeof(int));
  L->push_countdown = calloc(n, sizeof(int));
  L->qbuf = calloc(n * L->nq, sizeof(double));
  L->ubuf = calloc(n * L->nv, sizeof(double));
  L->vbuf = calloc(n * L->nv, sizeof(double));
  L->kpbuf = calloc(n * L->nv, sizeof(double));
  L->kdbuf = calloc(n * L->nv, sizeof(double));
  L->air_time = calloc(n * (size_t)L->nfoot + 1, sizeof(double));
  L->last_contact = calloc(n * (size_t)L->nfoot + 1, 1);
  L->contact = calloc(n * (size_t)L->nfoot + 1, 1);
  if (!L->air_time || !L->last_contact || !L->contact ||
      !L->dof || !L->qi || !L->lower || !L->upper || !L->default_pos || !L->q0 || !L->prev_action || !L->prev_vel ||
      !L->command || !L->cmd_countdown || !L->push_countdown || !L->qbuf || !L->ubuf || !L->vbuf || !L->kpbuf || !L->kdbuf)
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  return TL_OK;
}

/* The actuated DOFs, their limits and the default pose. */
static tl_status setup_dofs(legged *L, tl_opts *o, tl_error *err) {
  const tl_model *m = L->model;
  int j = 0;
  for (int b = 1; b < tl_model_nbody(m); b++) {
    int nv = tl_joint_nv(tl_model_joint_type(m, b));
    for (int k = 0; k < nv; k++, j++) {
      L->dof[j] = tl_model_joint_u_index(m, b) + k;
      L->qi[j] = tl_model_joint_q_index(m, b) + k;
      tl_model_dof_limits(m, L->dof[j], &L->lower[j], &L->upper[j], NULL);
    }
  }
  tl_status st = tl_model_default_q(m, L->q0, L->nq, err);
  if (st) return st;
  for (j = 0; j < L->na; j++) L->default_pos[j] = L->q0[L->qi[j]];
  if (L->locomotion && !anymal_stance(L, L->default_pos))
    for (j = 0; j < L->na; j++) L->default_pos[j] = L->q0[L->qi[j]];
  if ((st = tl_opts_vector(o, "default_joint_pos", L->na, L->na, L->default_pos, NULL, err))) return st;
  for (j = 0; j < L->na; j++) L->q0[L->qi[j]] = L->default_pos[j];
  return TL_OK;
}

static tl_status read_options(legged *L, tl_opts *o, tl_vecenv *v, tl_error *err) {
  tl_status st;
  double episode_s = L->locomotion ? 20.0 : 10.0;
  L->dt = 0.005;
  L->decimation = 4;
  L->kp = L->locomotion ? 80.0 : 300.0;
  L->kd = L->locomotion ? 2.0 : 10.0;
  L->action_scale = 0.5;
  L->clip = 5.0;
  L->tilt = 1.0;
  L->friction = 1.0;
  L->joint_noise = 0.1;
  L->base_vel_noise = L->locomotion ? 0.5 : 0.1;
  L->drop_height = 0.02;
  L->ground = L->floating;
  L->solver_iter = 100; /* the world's defaults */
  L->solver_tol = 1e-10;
  L->cmd_resample_s = 10.0;
  L->cmd_zero_below = L->locomotion ? 0.2 : 0.0;
  for (int k = 0; k < 3; k++) {
    L->cmd[k][0] = L->locomotion ? -1.0 : 0.0;
    L->cmd[k][1] = L->locomotion ? 1.0 : 0.0;
  }
  memcpy(L->w, L->locomotion ? locomotion_weights : standing_weights, sizeof(L->w));
  if ((st = tl_opts_double(o, "dt", 1e-5, 0.1, &L->dt, err)) ||
      (st = tl_opts_int(o, "decimation", 1, 1000, &L->decimation, err)) ||
      (st = tl_opts_double(o, "kp", 0, 1e9, &L->kp, err)) || (st = tl_opts_double(o, "kd", 0, 1e9, &L->kd, err)) ||
      (st = tl_opts_double(o, "action_scale", 0, 1e3, &L->action_scale, err)) ||
      (st = tl_opts_double(o, "clip_actions", 1e-6, 1e6, &L->clip, err)) ||
      (st = tl_opts_double(o, "max_tilt", 0, 3.1416, &L->tilt, err)) ||
      (st = tl_opts_double(o, "joint_noise", 0, 10, &L->joint_noise, err)) ||
      (st = tl_opts_double(o, "base_vel_noise", 0, 100, &L->base_vel_noise, err)) ||
      (st = tl_opts_double(o, "drop_height", 0, 10, &L->drop_height, err)) ||
      (st = tl_opts_double(o, "episode_length_s", 1e-3, 1e7, &episode_s, err)) ||
      (st = tl_opts_double(o, "command_resample_s", 1e-3, 1e9, &L->cmd_resample_s, err)) ||
      (st = tl_opts_double(o, "command_zero_below", 0, 100, &L->cmd_zero_below, err)) ||
      (st = tl_opts_range(o, "command_vx", -100, 100, L->cmd[0], err)) ||
      (st = tl_opts_range(o, "command_vy", -100, 100, L->cmd[1], err)) ||
      (st = tl_opts_range(o, "command_yaw", -100, 100, L->cmd[2], err)))
    return st;
  for (int k = 0; k < NTERM; k++)
    if ((st = tl_opts_double(o, weight_keys[k], -1e9, 1e9, &L->w[k], err))) return st;
  if ((st = tl_opts_int(o, "ground", 0, 1, &L->ground, err)) ||
      (st = tl_opts_int(o, "solver_max_iter", 1, 100000, &L->solver_iter, err)) ||
      (st = tl_opts_double(o, "solver_tol", 0, 1, &L->solver_tol, err)))
    return st;
  v->positive_reward = 1;
  if ((st = tl_opts_int(o, "only_positive_rewards", 0, 1, &v->positive_reward, err))) return st;
  if ((st = tl_rand_options(o, TL_RAND_ALL, 1, L->friction, &L->rand, err))) return st;
  L->friction = L->rand.friction[0];
  v->control_dt = L->dt * L->decimation;
  v->max_steps = (int)fmax(1.0, round(episode_s / v->control_dt));
  L->cmd_steps = (int)fmax(1.0, round(L->cmd_resample_s / v->control_dt));
  L->push_steps = (int)fmax(1.0, round(L->rand.push_interval / v->control_dt));
  return TL_OK;
}

static void dof_name(const tl_model *m, int dof, char *out, size_t cap) {
  for (int b = 0; b < tl_model_nbody(m); b++) {
    int u0 = tl_model_joint_u_index(m, b), n = tl_joint_nv(tl_model_joint_type(m, b));
    if (dof < u0 || dof >= u0 + n) continue;
    if (n == 1) snprintf(out, cap, "%.40s", tl_model_joint_name(m, b));
    else snprintf(out, cap, "%.38s_%c", tl_model_joint_name(m, b), (char)('0' + (dof - u0) % 10));
    return;
  }
  snprintf(out, cap, "dof%d", dof);
}

static void set_names(legged *L, tl_vecenv *v) {
  static const char *const base_names[12] = {"base_lin_vel_x", "base_lin_vel_y", "base_lin_vel_z", "base_ang_vel_x",
                                             "base_ang_vel_y", "base_ang_vel_z", "projected_gravity_x",
                                             "projected_gravity_y", "projected_gravity_z", "command_vx", "command_vy",
                                             "command_yaw"};
  for (int i = 0; i < 12; i++) snprintf(v->obs_names[i], TL_TASK_NAME_LEN, "%s", base_names[i]);
  for (int j = 0; j < L->na; j++) {
    char name[TL_TASK_NAME_LEN];
    dof_name(L->model, L->dof[j], name, sizeof(name));
    snprintf(v->obs_names[12 + j], TL_TASK_NAME_LEN, "pos_%.40s", name);
    snprintf(v->obs_names[12 + L->na + j], TL_TASK_NAME_LEN, "vel_%.40s", name);
    snprintf(v->obs_names[12 + 2 * L->na + j], TL_TASK_NAME_LEN, "action_%.40s", name);
    snprintf(v->act_names[j], TL_TASK_NAME_LEN, "%s", name);
    v->act_low[j] = -L->clip;
    v->act_high[j] = L->clip;
  }
  for (int k = 0; k < NTERM; k++) snprintf(v->term_names[k], TL_TASK_NAME_LEN, "%s", term_names[k]);
}

/* Apply both ends of every randomized range once to env 0, so a value that the engine
 * refuses is reported at creation, never in a reset. */
static tl_status check_randomization(legged *L, tl_vecenv *v, tl_error *err) {
  if (!L->rand_inertia) return TL_OK;
  tl_system *sys = tl_batch_system(v->batch, 0, 0);
  for (int k = 0; k < 8; k++) {
    double p[TL_RAND_NPARAM] = {0};
    p[TL_RAND_MASS_SCALE] = L->rand.mass_scale[k & 1];
    p[TL_RAND_ADDED_BASE_MASS] = L->rand.added_base_mass[(k >> 1) & 1];
    for (int a = 0; a < 3; a++) p[TL_RAND_COM_X + a] = L->rand.com_offset[(k >> 2) & 1];
    tl_status st = tl_rand_apply_inertia(&L->links, sys, p, err);
    if (st) return st;
  }
  return TL_OK;
}

static tl_status init_common(tl_vecenv *v, tl_opts *o, int nenv, int nthread, uint64_t seed, int locomotion,
                             tl_error *err) {
  legged *L = calloc(1, sizeof(*L));
  if (!L) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  v->task = L;
  L->locomotion = locomotion;
  tl_status st;
  if ((st = read_model(L, o, v->robot, sizeof(v->robot), err)) || (st = alloc_task(L, nenv, err)) || (st = setup_dofs(L, o, err)) ||
      (st = read_options(L, o, v, err)))
    return st;
  tl_batch_options bo = tl_batch_options_default();
  bo.nthread = nthread;
  bo.seed = seed;
  if ((st = tl_batch_create(nenv, &bo, build, L, &v->batch, err))) return st;
  L->rand_inertia = tl_rand_active(&L->rand, TL_RAND_MASS_SCALE) || tl_rand_active(&L->rand, TL_RAND_ADDED_BASE_MASS) ||
                    tl_rand_active(&L->rand, TL_RAND_COM_X);
  L->rand_friction = tl_rand_active(&L->rand, TL_RAND_FRICTION);
  if (L->rand_inertia && (st = tl_rand_links_init(&L->links, tl_batch_system(v->batch, 0, 0), err))) return st;
  v->obs_dim = 12 + 3 * L->na;
  v->act_dim = L->na;
  v->nterm = NTERM;
  if ((st = tl_vecenv_alloc(v, err))) return st;
  set_names(L, v);
  return check_randomization(L, v, err);
}

static tl_status init_anymal(tl_vecenv *v, tl_opts *o, int nenv, int nthread, uint64_t seed, tl_error *err) {
  return init_common(v, o, nenv, nthread, seed, 1, err);
}

static tl_status init_urdf(tl_vecenv *v, tl_opts *o, int nenv, int nthread, uint64_t seed, tl_error *err) {
  tl_status st = init_common(v, o, nenv, nthread, seed, 0, err);
  if (st) return st;
  legged *L = v->task;
  tl_vecenv_add_model_warnings(v, L->model);
  return tl_onboard_check(v, L->model, tl_batch_system(v->batch, 0, 0), L->q0, L->nq, L->drop_height, L->ground, err);
}

/* ---------------- observation ---------------- */

/* World from base rotation of the current state (identity for a fixed base). */
static void base_rotation(const legged *L, const double *q, double R[9]) {
  if (L->floating) tl_quat_to_m3(R, q + 3);
  else tl_m3_identity(R);
}

static void observe(const legged *L, int e, const double *q, const double *u, double *obs) {
  double R[9], v[3] = {0, 0, 0}, w[3] = {0, 0, 0}, down[3] = {0, 0, -1}, g[3];
  base_rotation(L, q, R);
  if (L->floating) {
    tl_m3_tmulv(v, R, u);
    tl_m3_tmulv(w, R, u + 3);
  }
  tl_m3_tmulv(g, R, down);
  const double *cmd = L->command + 3 * (size_t)e;
  for (int k = 0; k < 3; k++) {
    obs[k] = 2.0 * v[k];
    obs[3 + k] = 0.25 * w[k];
    obs[6 + k] = g[k];
  }
  obs[9] = 2.0 * cmd[0];
  obs[10] = 2.0 * cmd[1];
  obs[11] = 0.25 * cmd[2];
  const double *prev = L->prev_action + (size_t)e * L->na;
  for (int j = 0; j < L->na; j++) {
    obs[12 + j] = q[L->qi[j]] - L->default_pos[j];
    obs[12 + L->na + j] = 0.05 * u[L->dof[j]];
    obs[12 + 2 * L->na + j] = prev[j];
  }
}

/* ---------------- reset ---------------- */

/* Uniform in the command ranges; a planar command slower than cmd_zero_below becomes zero, so a
 * share of the episodes trains standing still (legged_gym's _resample_commands). */
static void sample_command(const legged *L, tl_rng *rng, double *cmd) {
  for (int k = 0; k < 3; k++) cmd[k] = tl_rng_range(rng, L->cmd[k][0], L->cmd[k][1]);
  if (hypot(cmd[0], cmd[1]) < L->cmd_zero_below) cmd[0] = cmd[1] = 0.0;
}

/* Lowest point of the robot's primitive collision geoms (mesh geoms: their body origin). */
static double lowest_z(const legged *L, tl_system *sys) {
  double z = INFINITY;
  for (int g = 0; g < tl_model_ngeom(L->model); g++) {
    double lo[3], hi[3], pos[3], R[9];
    if (tl_system_geom_aabb(sys, g, lo, hi, NULL) == TL_OK) z = fmin(z, lo[2]);
    else if (tl_system_geom_pose(sys, g, pos, R, NULL) == TL_OK) z = fmin(z, pos[2]);
  }
  return z;
}

static void apply_gains(const legged *L, tl_system *sys, int e, const double *params) {
  double *kp = L->kpbuf + (size_t)e * L->nv, *kd = L->kdbuf + (size_t)e * L->nv;
  memset(kp, 0, (size_t)L->nv * sizeof(double));
  memset(kd, 0, (size_t)L->nv * sizeof(double));
  double s = params[TL_RAND_MOTOR_STRENGTH];
  for (int j = 0; j < L->na; j++) {
    kp[L->dof[j]] = L->kp * s * params[TL_RAND_KP_SCALE];
    kd[L->dof[j]] = L->kd * s * params[TL_RAND_KD_SCALE];
  }
  tl_system_set_pd_gains(sys, kp, kd, L->nv, NULL);
}

static void reset(tl_vecenv *v, int e, double *obs, double *params) {
  legged *L = v->task;
  tl_system *sys = tl_batch_system(v->batch, e, 0);
  tl_world *world = tl_batch_world(v->batch, e);
  tl_rng *rng = tl_batch_rng(v->batch, e);
  double *q = L->qbuf + (size_t)e * L->nq, *u = L->ubuf + (size_t)e * L->nv;
  tl_rand_sample(&L->rand, rng, params);
  if (L->rand_inertia) tl_rand_apply_inertia(&L->links, sys, params, NULL);
  if (L->rand_friction) tl_world_set_material_pair(world, "ground", ROBOT_MATERIAL, params[TL_RAND_FRICTION], 0.0, 0.01, NULL);
  apply_gains(L, sys, e, params);
  memcpy(q, L->q0, (size_t)L->nq * sizeof(double));
  memset(u, 0, (size_t)L->nv * sizeof(double));
  for (int j = 0; j < L->na; j++) {
    double x = L->default_pos[j] + tl_rng_range(rng, -L->joint_noise, L->joint_noise);
    q[L->qi[j]] = fmin(fmax(x, L->lower[j]), L->upper[j]);
  }
  for (int k = 0; k < 6 && L->floating; k++) u[k] = tl_rng_range(rng, -L->base_vel_noise, L->base_vel_noise);
  tl_system_set_state(sys, q, L->nq, u, L->nv, NULL);
  if (L->floating) { /* lowest geom drop_height above the ground */
    q[2] += L->drop_height - lowest_z(L, sys);
    tl_system_set_state(sys, q, L->nq, u, L->nv, NULL);
  }
  double *zeros = L->vbuf + (size_t)e * L->nv;
  memset(zeros, 0, (size_t)L->nv * sizeof(double));
  tl_system_set_pd_targets(sys, L->q0, L->nq, zeros, L->nv, NULL);
  memset(L->prev_action + (size_t)e * L->na, 0, (size_t)L->na * sizeof(double));
  memset(L->air_time + (size_t)e * L->nfoot, 0, (size_t)L->nfoot * sizeof(double));
  memset(L->last_contact + (size_t)e * L->nfoot, 0, (size_t)L->nfoot);
  for (int j = 0; j < L->na; j++) L->prev_vel[(size_t)e * L->na + j] = u[L->dof[j]];
  sample_command(L, rng, L->command + 3 * (size_t)e);
  L->cmd_countdown[e] = L->cmd_steps;
  L->push_countdown[e] = L->push_steps;
  observe(L, e, q, u, obs);
}

/* ---------------- step ---------------- */

/* 1 if the base body touches anything with a positive normal impulse. */
static int base_contact(tl_world *w) {
  for (int k = 0; k < tl_world_ncontact(w); k++) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL)) continue;
    int base = (c.system == 0 && c.body == 0) || (c.other_system == 0 && c.other_body == 0);
    if (base && tl_v3_dot(c.impulse, c.normal) != 0 && (c.impulse[0] != 0 || c.impulse[1] != 0 || c.impulse[2] != 0))
      return 1;
  }
  return 0;
}

static int is_foot_geom(const legged *L, int g) {
  for (int f = 0; f < L->nfoot; f++)
    if (L->foot_geom[f] == g) return 1;
  return 0;
}

/* Contacts of the last physics step: which feet press on something with more than
 * FOOT_CONTACT_FORCE (contact[nfoot]), and how many other bodies than the base and the feet' own
 * foot geoms press with more than COLLISION_FORCE (legged_gym's penalised contacts: thighs,
 * shanks, knees). */
static int scan_contacts(const legged *L, tl_world *w, unsigned char *contact) {
  double dt = tl_world_timestep(w);
  int ncollide = 0, seen[16], nseen = 0;
  memset(contact, 0, (size_t)L->nfoot);
  for (int k = 0; k < tl_world_ncontact(w); k++) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) || c.system != 0) continue;
    double fn = tl_v3_dot(c.impulse, c.normal) / dt;
    int foot = -1;
    for (int f = 0; f < L->nfoot; f++)
      if (L->foot_geom[f] == c.geom) foot = f;
    if (foot >= 0) {
      if (fn > FOOT_CONTACT_FORCE) contact[foot] = 1;
      continue;
    }
    if (c.body == 0 || !(fn > COLLISION_FORCE)) continue;
    int dup = 0; /* count each body once: seen[] holds the first 16, later ones are compared to the list */
    for (int i = 0; i < nseen; i++) dup |= seen[i] == c.body;
    for (int j = 0; j < k && !dup && nseen == 16; j++) {
      tl_contact_info d;
      dup = !tl_world_contact(w, j, &d, NULL) && d.system == 0 && d.body == c.body &&
            tl_v3_dot(d.impulse, d.normal) / dt > COLLISION_FORCE && !is_foot_geom(L, d.geom);
    }
    if (dup) continue;
    if (nseen < 16) seen[nseen++] = c.body;
    ncollide++;
  }
  return ncollide;
}

/* legged_gym's _reward_feet_air_time: at each foot's first contact after a swing, its air time
 * minus AIR_TIME_TARGET (s); contacts filtered over two control steps; zero for a standing command. */
static double feet_air_time(const legged *L, int e, double control_dt) {
  double *air = L->air_time + (size_t)e * L->nfoot, r = 0;
  unsigned char *last = L->last_contact + (size_t)e * L->nfoot, *now = L->contact + (size_t)e * L->nfoot;
  for (int f = 0; f < L->nfoot; f++) {
    int filt = now[f] || last[f];
    int first = air[f] > 0 && filt;
    last[f] = now[f];
    air[f] += control_dt;
    if (first) r += air[f] - AIR_TIME_TARGET;
    if (filt) air[f] = 0;
  }
  const double *cmd = L->command + 3 * (size_t)e;
  return hypot(cmd[0], cmd[1]) > AIR_TIME_MIN_COMMAND ? r : 0.0;
}

static void push(legged *L, tl_vecenv *v, int e, tl_system *sys, double *q, double *u) {
  if (!(L->rand.push_velocity > 0) || !L->floating || --L->push_countdown[e] > 0) return;
  L->push_countdown[e] = L->push_steps;
  tl_rng *rng = tl_batch_rng(v->batch, e);
  tl_system_get_state(sys, q, L->nq, u, L->nv, NULL);
  u[0] += tl_rng_range(rng, -L->rand.push_velocity, L->rand.push_velocity);
  u[1] += tl_rng_range(rng, -L->rand.push_velocity, L->rand.push_velocity);
  tl_system_set_state(sys, q, L->nq, u, L->nv, NULL);
}

static void reward_terms(const legged *L, int e, tl_system *sys, const double *q, const double *u, const double *a,
                         double dt, int ncollide, double *terms) {
  double R[9], v[3] = {0, 0, 0}, w[3] = {0, 0, 0}, down[3] = {0, 0, -1}, g[3];
  base_rotation(L, q, R);
  if (L->floating) {
    tl_m3_tmulv(v, R, u);
    tl_m3_tmulv(w, R, u + 3);
  }
  tl_m3_tmulv(g, R, down);
  const double *cmd = L->command + 3 * (size_t)e;
  const double *prev_a = L->prev_action + (size_t)e * L->na, *prev_v = L->prev_vel + (size_t)e * L->na;
  double *tau = L->vbuf + (size_t)e * L->nv;
  tl_system_applied_generalized_force(sys, tau, L->nv, NULL);
  double r[NTERM] = {0};
  double ex = cmd[0] - v[0], ey = cmd[1] - v[1], ez = cmd[2] - w[2];
  r[T_LIN_VEL] = exp(-(ex * ex + ey * ey) / TRACKING_SIGMA);
  r[T_ANG_VEL] = exp(-(ez * ez) / TRACKING_SIGMA);
  r[T_LIN_VEL_Z] = v[2] * v[2];
  r[T_ANG_VEL_XY] = w[0] * w[0] + w[1] * w[1];
  r[T_ORIENTATION] = g[0] * g[0] + g[1] * g[1];
  for (int j = 0; j < L->na; j++) {
    double t = tau[L->dof[j]], acc = (u[L->dof[j]] - prev_v[j]) / dt, da = a[j] - prev_a[j];
    double dp = q[L->qi[j]] - L->default_pos[j];
    r[T_TORQUES] += t * t;
    r[T_DOF_ACC] += acc * acc;
    r[T_ACTION_RATE] += da * da;
    r[T_POSE] += dp * dp;
  }
  r[T_FEET_AIR_TIME] = L->nfoot ? feet_air_time(L, e, dt) : 0.0;
  r[T_COLLISION] = ncollide;
  for (int k = 0; k < NTERM; k++) terms[k] = dt * L->w[k] * r[k];
}

static int step(tl_vecenv *v, int e, const double *a, double *obs, double *terms, tl_status *status) {
  legged *L = v->task;
  tl_system *sys = tl_batch_system(v->batch, e, 0);
  tl_world *world = tl_batch_world(v->batch, e);
  double *q = L->qbuf + (size_t)e * L->nq, *u = L->ubuf + (size_t)e * L->nv;
  /* PD targets: the default configuration with the joints offset by the action */
  memcpy(q, L->q0, (size_t)L->nq * sizeof(double));
  for (int j = 0; j < L->na; j++) q[L->qi[j]] = L->default_pos[j] + L->action_scale * a[j];
  double *zeros = L->vbuf + (size_t)e * L->nv;
  memset(zeros, 0, (size_t)L->nv * sizeof(double));
  tl_system_set_pd_targets(sys, q, L->nq, zeros, L->nv, NULL);
  push(L, v, e, sys, q, u);
  int touched = 0;
  for (int k = 0; k < L->decimation && !*status; k++) {
    *status = tl_world_step(world, NULL);
    if (L->floating && !*status) touched |= base_contact(world);
  }
  int ncollide = scan_contacts(L, world, L->contact + (size_t)e * L->nfoot);
  tl_system_get_state(sys, q, L->nq, u, L->nv, NULL);
  reward_terms(L, e, sys, q, u, a, v->control_dt, ncollide, terms);
  double *prev_a = L->prev_action + (size_t)e * L->na, *prev_v = L->prev_vel + (size_t)e * L->na;
  memcpy(prev_a, a, (size_t)L->na * sizeof(double));
  for (int j = 0; j < L->na; j++) prev_v[j] = u[L->dof[j]];
  if (--L->cmd_countdown[e] <= 0) {
    sample_command(L, tl_batch_rng(v->batch, e), L->command + 3 * (size_t)e);
    L->cmd_countdown[e] = L->cmd_steps;
  }
  observe(L, e, q, u, obs);
  if (!L->floating) return 0;
  /* tilt: the angle between the base z axis and world z, from the projected gravity */
  double cos_tilt = -obs[8];
  return touched || cos_tilt < cos(L->tilt);
}

static void task_free(tl_vecenv *v) {
  legged *L = v->task;
  if (!L) return;
  tl_model_free(L->model);
  tl_rand_links_free(&L->links);
  void *arr[] = {L->dof, L->qi, L->lower, L->upper, L->default_pos, L->q0, L->prev_action, L->prev_vel, L->command,
                 L->cmd_countdown, L->push_countdown, L->qbuf, L->ubuf, L->vbuf, L->kpbuf, L->kdbuf,
                 L->foot_geom, L->air_time, L->last_contact, L->contact};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  free(L);
  v->task = NULL;
}

const tl_task_class tl_task_anymal = {
    "anymal-locomotion", "ANYmal C follows a random base velocity command on flat ground (legged_gym style)",
    init_anymal, reset, step, task_free};

const tl_task_class tl_task_urdf = {
    "urdf", "any URDF (urdf=PATH), floating or fixed base, stands in its default pose", init_urdf, reset, step,
    task_free};
