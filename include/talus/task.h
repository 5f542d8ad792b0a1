/* Talus reinforcement-learning tasks and vectorized environments.
 *
 * A tl_vecenv steps `nenv` copies of one task on a tl_batch (talus/batch.h):
 * the observation, reward, termination, reset and domain randomization of
 * every environment are computed in C on the batch's threads, so one
 * tl_vecenv_step call advances all environments by one control step without
 * returning to the caller per environment (the design of EnvPool and
 * raisimGymTorch). Results are bit-identical for the same seed whatever the
 * number of threads: each environment draws from its own random stream
 * (talus/rng.h, key (seed, environment index)).
 *
 * Tasks (layouts, weights and defaults in docs/tasks.md):
 *   "cartpole"          balance the shared cartpole URDF from a near-upright state;
 *   "anymal-locomotion" ANYmal C follows a random base velocity command on flat ground
 *                       (legged_gym / raisimGymTorch style);
 *   "urdf"              any URDF (urdf=PATH), floating or fixed base: stand in the
 *                       default pose, with the observation scheme of the locomotion task.
 *
 * Options are key=value strings (tl_task_option); numbers in C syntax,
 * ranges and vectors comma-separated ("0.8,1.2"). An unknown key or a bad
 * value is refused with an error naming it and listing the task's keys.
 *
 * Auto-reset: an environment whose episode ends (terminated: the task's
 * failure condition, or a non-finite action; truncated: the time limit) is
 * reset inside the same tl_vecenv_step; its returned observation is the
 * first of the new episode, and the last observation of the ended episode is
 * in final_obs (Gymnasium's vector-env convention, "final_observation").
 *
 * Memory: tl_vecenv_create allocates everything; reset and step never
 * allocate. */
#ifndef TALUS_TASK_H
#define TALUS_TASK_H

#include <stdint.h>

#include "talus/batch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_vecenv tl_vecenv;

typedef struct tl_task_option {
  const char *key;
  const char *value;
} tl_task_option;

/* Tasks: count, name and one-line summary of task i (NULL for a bad index). */
int tl_task_count(void);
const char *tl_task_name(int i);
const char *tl_task_summary(int i);

/* Flags per environment in tl_vecenv_result.flags. */
#define TL_VECENV_NONFINITE_ACTION 1 /* the action had a NaN or Inf: the episode was ended */
#define TL_VECENV_DIVERGED 2         /* the simulation diverged: the episode was ended */

/* Create `nenv` environments of `task` on `nthread` threads (0: all CPUs),
 * random streams seeded with `seed`, then reset them all. Errors:
 * TL_ERR_ARGUMENT (unknown task, unknown option, bad value, nenv < 1), the
 * error of loading the robot (TL_ERR_IO naming the places searched when the
 * default robot is not found), TL_ERR_MEMORY. */
tl_status tl_vecenv_create(const char *task, const tl_task_option *opts, int nopt, int nenv, int nthread,
                           uint64_t seed, tl_vecenv **out, tl_error *err);
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
tl_status tl_vecenv_reset(tl_vecenv *v, const uint64_t *seed, float *obs, long n, tl_error *err);
/* Reset every environment with one seed per environment (Gymnasium's
 * SyncVectorEnv.reset(seed=[...])). seeds: nenv values; env e's stream
 * restarts from (seeds[e], 0), i.e. keyed by its own seed alone, so env e
 * then behaves exactly like the one environment of a 1-env tl_vecenv of the
 * same task and options reset with seed seeds[e]. reseed: NULL (every
 * environment) or nenv flags; where reseed[e] is 0 env e continues its
 * stream. obs: nenv x obs_dim (n values) or NULL. tl_batch_seed_value is
 * left as it was. Errors: TL_ERR_ARGUMENT (NULL seeds, wrong n). */
tl_status tl_vecenv_reset_seeds(tl_vecenv *v, const uint64_t *seeds, const unsigned char *reseed, float *obs, long n,
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
tl_status tl_vecenv_step(tl_vecenv *v, const double *actions, long n, const tl_vecenv_result *out,
                         tl_error *err);

/* The batch underneath (its worlds, systems and random streams). */
tl_batch *tl_vecenv_batch(tl_vecenv *v);

#ifdef __cplusplus
}
#endif
#endif
