/* Talus reinforcement-learning tasks and vectorized environments: the tasks
 * (tl_task_*) here, the vectorized environments (tl_vecenv_*) in
 * talus/vecenv.h, which this header includes (they were declared here before
 * issue 22).
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
 * Creation takes a tl_vecenv_options (task, number of environments and
 * threads, seed); the task's settings are key=value strings (tl_task_option); numbers in C syntax,
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

#ifdef __cplusplus
extern "C" {
#endif

/* One KEY=VALUE setting of a task (docs/tasks.md lists each task's keys). */
typedef struct tl_task_option {
  const char *key;
  const char *value;
} tl_task_option;

/* Tasks: count, name and one-line summary of task i (NULL for a bad index). */
int tl_task_count(void);
const char *tl_task_name(int i);
const char *tl_task_summary(int i);

#ifdef __cplusplus
}
#endif

#include "talus/vecenv.h"
#endif
