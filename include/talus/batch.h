/* Talus batched worlds: N independent worlds stepped on a fixed thread pool.
 *
 * A tl_batch owns `nenv` worlds (environments) and a pool of `nthread`
 * threads (the calling thread is thread 0, so nthread = 1 starts no thread).
 * Work over the environments is split statically: thread t always handles
 * the contiguous environments [t nenv / nthread, (t + 1) nenv / nthread).
 * Each environment also owns a random stream (talus/rng.h) keyed by
 * (seed, environment index). Since the worlds share nothing and every
 * environment's random numbers come from its own stream, every result is
 * bit-identical whatever the number of threads (the design of EnvPool and
 * raisimGymTorch's C++ vectorized environments, with determinism added).
 *
 * Batched state: every environment has the same layout, the q (and u) of its
 * systems in world order concatenated, nq (nv) entries per environment, so a
 * batched array is row-major (nenv x nq). The batch keeps a mirror of that
 * state (tl_batch_q / tl_batch_u) refreshed after every step and setter, so a
 * reader (e.g. Python's NumPy views) needs no copy.
 *
 * Memory: everything is allocated by tl_batch_create*; stepping, the setters
 * and tl_batch_parallel_for never allocate. Functions taking a batch are not
 * themselves thread-safe: call them from one thread at a time. */
#ifndef TALUS_BATCH_H
#define TALUS_BATCH_H

#include <stdint.h>

#include "talus/rng.h"
#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_batch tl_batch;

typedef struct tl_batch_options {
  int nthread;            /* threads; 0 (default): the CPUs this process may run on
                             (sched_getaffinity), at most nenv */
  uint64_t seed;          /* seed of the per-environment random streams (default 0) */
  /* tl_batch_create_model / a URDF in tl_batch_create_file only: */
  double dt;              /* time step, s (default 1e-3) */
  int ground;             /* 1 (default): a ground plane z = 0 */
  double ground_friction; /* its friction coefficient (default 0.8) */
  tl_base_type base;      /* URDF base type (default TL_BASE_AUTO) */
} tl_batch_options;

/* The defaults above, by value. Every tl_batch_create* takes opt NULL for them. */
tl_batch_options tl_batch_options_default(void);

/* Number of CPUs this process may run on (>= 1). */
int tl_batch_cpu_count(void);

/* Build environment `env`'s world into *world (the batch takes ownership);
 * return TL_OK or an error. Called once per environment, in order, from the
 * thread that calls tl_batch_create. */
typedef tl_status (*tl_batch_build_fn)(void *ctx, int env, tl_world **world, tl_error *err);

/* A batch of nenv (>= 1) worlds built by `build`. Every world must have the
 * same systems (same nq and nv in the same order): TL_ERR_INVALID otherwise.
 * Errors: TL_ERR_ARGUMENT (nenv < 1, nthread < 0, NULL build or out),
 * TL_ERR_MEMORY, TL_ERR_INVALID (a thread could not be started), and the
 * error of `build`, its message prefixed by "env I: ". Nothing is left on
 * failure (*out NULL). */
tl_status tl_batch_create(int nenv, const tl_batch_options *opt, tl_batch_build_fn build, void *ctx,
                          tl_batch **out, tl_error *err);
/* nenv worlds, each with one copy of `model` (tl_world_add_system: starts at
 * tl_model_default_q) and, if opt->ground, a ground plane; opt->dt. */
tl_status tl_batch_create_model(const tl_model *model, int nenv, const tl_batch_options *opt,
                                tl_batch **out, tl_error *err);
/* From a file: a world file (talus/scene.h; its own dt, ground and systems;
 * opt->dt, ground and base are ignored) loaded once per environment, or a
 * URDF loaded once (base opt->base) and used as in tl_batch_create_model. */
tl_status tl_batch_create_file(const char *path, int nenv, const tl_batch_options *opt,
                               tl_batch **out, tl_error *err);
void tl_batch_free(tl_batch *b);

int tl_batch_nenv(const tl_batch *b);
int tl_batch_nthread(const tl_batch *b);
int tl_batch_nsystem(const tl_batch *b); /* systems per world */
int tl_batch_nq(const tl_batch *b);      /* coordinates per environment (all systems) */
int tl_batch_nv(const tl_batch *b);      /* velocities per environment (all systems) */
uint64_t tl_batch_seed_value(const tl_batch *b);

/* Environment env's world, system `system` of it (world order), its random
 * stream. NULL for a bad index. Changes made to a world or system directly
 * show in tl_batch_q / _u after the next tl_batch_step or tl_batch_sync. */
tl_world *tl_batch_world(tl_batch *b, int env);
tl_system *tl_batch_system(tl_batch *b, int env, int system);
tl_rng *tl_batch_rng(tl_batch *b, int env);
/* Restart every environment's stream: env i gets stream (seed, i). */
void tl_batch_seed(tl_batch *b, uint64_t seed);

/* The state mirror: nenv x nq coordinates and nenv x nv velocities
 * (row-major), valid while the batch lives. */
const double *tl_batch_q(const tl_batch *b);
const double *tl_batch_u(const tl_batch *b);
/* Copy every world's state into the mirror (after direct changes); _env: one
 * environment's (safe to call for different environments from different threads). */
void tl_batch_sync(tl_batch *b);
void tl_batch_sync_env(tl_batch *b, int env);

/* Batched setters, n = nenv x (nq or nv) values row-major. All values are
 * checked (finite; for set_state every quaternion non-zero) before any
 * environment is changed: on an error nothing changes and the message names
 * the environment and the index. u, u_target may be NULL (zeros). Lengths
 * are int, as in talus/system.h (nenv x nq must fit in an int). */
tl_status tl_batch_set_state(tl_batch *b, const double *q, int nq, const double *u, int nv,
                             tl_error *err);
tl_status tl_batch_get_state(const tl_batch *b, double *q, int nq, double *u, int nv,
                             tl_error *err);
tl_status tl_batch_set_pd_gains(tl_batch *b, const double *kp, const double *kd, int nv,
                                tl_error *err);
tl_status tl_batch_set_pd_targets(tl_batch *b, const double *q_target, int nq,
                                  const double *u_target, int nv, tl_error *err);
tl_status tl_batch_set_generalized_force(tl_batch *b, const double *tau, int nv, tl_error *err);

/* Step every world nstep (>= 0) times (tl_world_step), on the pool. A world
 * whose step fails (TL_ERR_DIVERGED) stops there, its state as before that
 * step (tl_world_step's guarantee); the others finish. Returns the error of
 * the lowest-numbered failing environment ("env I: ...") or TL_OK;
 * tl_batch_env_status tells which failed. */
tl_status tl_batch_step(tl_batch *b, int nstep, tl_error *err);
/* Status of env's last tl_batch_step (TL_OK or the error that stopped it). */
tl_status tl_batch_env_status(const tl_batch *b, int env);

/* Run fn(ctx, env, thread) once for every environment on the pool, and
 * return when all are done. Each thread takes the next environment nobody has
 * taken yet (dynamic scheduling: environments of different cost keep every
 * thread busy), so which thread runs env depends on timing: fn must touch
 * only environment env's data (and thread t's scratch), and its result must
 * not depend on t. Never allocates. */
typedef void (*tl_batch_fn)(void *ctx, int env, int thread);
void tl_batch_parallel_for(tl_batch *b, tl_batch_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
