/* Talus vectorized environments: nenv copies of one task (talus/task.h)
 * stepped on a tl_batch (talus/batch.h); see talus/task.h for the tasks,
 * auto-reset and memory rules. Declared in talus/task.h before issue 22. */
#ifndef TALUS_VECENV_H
#define TALUS_VECENV_H

#include <stdint.h>

#include "talus/batch.h"
#include "talus/task.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_vecenv tl_vecenv;

/* Flags per environment in tl_vecenv_result.flags. */
#define TL_VECENV_NONFINITE_ACTION 1 /* the action had a NaN or Inf: the episode was ended */
#define TL_VECENV_DIVERGED 2         /* the simulation diverged: the episode was ended */

/* How to create a tl_vecenv (tl_vecenv_options_default gives the defaults
 * below). The task's own settings stay key=value text (task_opts, checked
 * against the task's keys: docs/tasks.md), so one struct serves every task. */
typedef struct tl_vecenv_options {
  const char *task;                /* task name (tl_task_name): "cartpole" (default),
                                      "anymal-locomotion", "urdf" */
  int nenv;                        /* environments, >= 1 (default 1) */
  int nthread;                     /* threads of the batch, >= 0; 0 (default): the CPUs this
                                      process may run on (tl_batch_cpu_count), at most nenv */
  uint64_t seed;                   /* seed of the per-environment random streams: environment i
                                      draws from stream (seed, i) (default 0) */
  const tl_task_option *task_opts; /* ntask_opt key=value settings of the task (default NULL) */
  int ntask_opt;                   /* >= 0, at most 64 (default 0) */
} tl_vecenv_options;

tl_vecenv_options tl_vecenv_options_default(void);

/* Create opt->nenv environments of opt->task on opt->nthread threads,
 * random streams seeded with opt->seed, then reset them all. opt NULL: the
 * defaults. Errors: TL_ERR_ARGUMENT naming the field or key (unknown task,
 * unknown task option, bad value, nenv < 1, nthread < 0, ntask_opt out of
 * range or task_opts NULL with ntask_opt > 0), the error of loading the robot
 * (TL_ERR_IO naming the places searched when the default robot is not
 * found), TL_ERR_MEMORY. Nothing is left on failure (*out NULL). */
tl_status tl_vecenv_create(const tl_vecenv_options *opt, tl_vecenv **out, tl_error *err);
void tl_vecenv_free(tl_vecenv *v);

const char *tl_vecenv_task(const tl_vecenv *v);
int tl_vecenv_nenv(const tl_vecenv *v);
int tl_vecenv_obs_dim(const tl_vecenv *v);
int tl_vecenv_act_dim(const tl_vecenv *v);
int tl_vecenv_max_episode_steps(const tl_vecenv *v); /* control steps before truncation */
double tl_vecenv_control_dt(const tl_vecenv *v);      /* s per control step */
/* The URDF file the task loaded. */
const char *tl_vecenv_robot(const tl_vecenv *v);
/* Bounds of one environment's action and observation (act_dim / obs_dim
 * values; +-INFINITY where unbounded). Actions are clipped to them. */
void tl_vecenv_action_bounds(const tl_vecenv *v, double *low, double *high);
void tl_vecenv_obs_bounds(const tl_vecenv *v, double *low, double *high);
/* Name of observation entry i / action entry i ("base_lin_vel_x", "LF_HAA", ...). */
const char *tl_vecenv_obs_name(const tl_vecenv *v, int i);
const char *tl_vecenv_act_name(const tl_vecenv *v, int i);

/* Randomized parameters: nparam names ("mass_scale", "com_offset_x", ...)
 * and their values for each environment's current episode (nenv x nparam,
 * row-major; the nominal value where that randomization is off). */
int tl_vecenv_nparam(const tl_vecenv *v);
const char *tl_vecenv_param_name(const tl_vecenv *v, int i);
const double *tl_vecenv_params(const tl_vecenv *v);
/* Reward terms: nterm names and each environment's weighted term of the
 * last step (nenv x nterm; they sum to the reward, except where a task
 * clips the sum at zero: anymal-locomotion and urdf by default). */
int tl_vecenv_nterm(const tl_vecenv *v);
const char *tl_vecenv_term_name(const tl_vecenv *v, int i);
const double *tl_vecenv_terms(const tl_vecenv *v);

/* Reset every environment (new episodes). seed: NULL continues each
 * environment's random stream; else every stream restarts from
 * (*seed, environment index). obs: nenv x obs_dim (n values). */
tl_status tl_vecenv_reset(tl_vecenv *v, const uint64_t *seed, float *obs, int n, tl_error *err);
/* Reset every environment with one seed per environment (Gymnasium's
 * SyncVectorEnv.reset(seed=[...])). seeds: nenv values; env e's stream
 * restarts from (seeds[e], 0), i.e. keyed by its own seed alone, so env e
 * then behaves exactly like the one environment of a 1-env tl_vecenv of the
 * same task and options reset with seed seeds[e]. reseed: NULL (every
 * environment) or nenv flags; where reseed[e] is 0 env e continues its
 * stream. obs: nenv x obs_dim (n values) or NULL. tl_batch_seed_value is
 * left as it was. Errors: TL_ERR_ARGUMENT (NULL seeds, wrong n). */
tl_status tl_vecenv_reset_seeds(tl_vecenv *v, const uint64_t *seeds, const unsigned char *reseed, float *obs, int n,
                                tl_error *err);

/* Outputs of one step; arrays of nenv (obs, final_obs: nenv x obs_dim). */
typedef struct tl_vecenv_result {
  float *obs;                /* observation after the step (after the reset for ended episodes) */
  float *reward;
  unsigned char *terminated; /* 1: the task's failure condition or a bad action */
  unsigned char *truncated;  /* 1: the time limit (and not terminated) */
  float *final_obs;          /* rows of ended environments: their last observation (others untouched) */
  unsigned char *flags;      /* TL_VECENV_* bits */
  double *episode_return;    /* rows of ended environments: the episode's undiscounted return */
  int *episode_length;       /* rows of ended environments: its length in control steps */
} tl_vecenv_result;

/* One control step of every environment. actions: nenv x act_dim (n
 * values), any finite value (clipped to the bounds); a row with a NaN or
 * Inf ends that environment's episode (terminated, reward 0, flag
 * TL_VECENV_NONFINITE_ACTION) and never reaches the simulation. Errors:
 * TL_ERR_ARGUMENT (NULL or wrong lengths). */
tl_status tl_vecenv_step(tl_vecenv *v, const double *actions, int n, const tl_vecenv_result *out,
                         tl_error *err);

/* Warnings gathered at creation, in order: the robot's URDF load warnings
 * (kind "urdf": tl_model_warning, e.g. a visual mesh not found), and the
 * "urdf" task's onboarding checks, each text saying the option that fixes
 * it (docs/tasks.md, "Onboarding a robot"): "fixed_base" (a floating robot
 * that looks like an arm: base=fixed), "ground_contact" (a non-foot body, the
 * base first, touches the ground at the reset pose), "cannot_stand" (the
 * COM's ground projection is not inside the support polygon of the feet
 * touching the ground at the default pose: default_joint_pos=..., e.g. from
 * talus.find_standing_pose). At most 24 are kept. Index out of range: NULL. */
int tl_vecenv_nwarning(const tl_vecenv *v);
const char *tl_vecenv_warning(const tl_vecenv *v, int i);
const char *tl_vecenv_warning_kind(const tl_vecenv *v, int i);

/* The batch underneath (its worlds, systems and random streams). */
tl_batch *tl_vecenv_batch(tl_vecenv *v);

#ifdef __cplusplus
}
#endif
#endif
