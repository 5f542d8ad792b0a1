/* tl_vecenv: the vectorized environment over a task class (include/talus/task.h).
 *
 * A step runs, for every environment on the batch's threads (static
 * partition): check the action row (a NaN or Inf ends the episode without
 * touching the simulation), clip it to the bounds, the task's control step
 * (observation, reward terms, failure), the time limit, and the automatic
 * reset of an ended episode (its last observation goes to final_obs). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tasks/task_internal.h"

static const tl_task_class *const classes[] = {&tl_task_cartpole, &tl_task_anymal, &tl_task_urdf};
#define NCLASS ((int)(sizeof(classes) / sizeof(classes[0])))

int tl_task_count(void) { return NCLASS; }
const char *tl_task_name(int i) { return i >= 0 && i < NCLASS ? classes[i]->name : NULL; }
const char *tl_task_summary(int i) { return i >= 0 && i < NCLASS ? classes[i]->summary : NULL; }

tl_status tl_vecenv_alloc(tl_vecenv *v, tl_error *err) {
  size_t n = (size_t)v->nenv, no = (size_t)v->obs_dim, na = (size_t)v->act_dim, nt = (size_t)v->nterm;
  v->act_low = calloc(na, sizeof(double));
  v->act_high = calloc(na, sizeof(double));
  v->obs_low = calloc(no, sizeof(double));
  v->obs_high = calloc(no, sizeof(double));
  v->obs_names = calloc(no, sizeof(*v->obs_names));
  v->act_names = calloc(na, sizeof(*v->act_names));
  v->term_names = calloc(nt + 1, sizeof(*v->term_names));
  v->params = calloc(n * TL_RAND_NPARAM, sizeof(double));
  v->terms = calloc(n * nt + 1, sizeof(double));
  v->obs = calloc(n * no, sizeof(double));
  v->action = calloc(n * na, sizeof(double));
  v->slot = calloc(n, sizeof(tl_env_slot));
  if (!v->act_low || !v->act_high || !v->obs_low || !v->obs_high || !v->obs_names || !v->act_names ||
      !v->term_names || !v->params || !v->terms || !v->obs || !v->action || !v->slot)
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (size_t i = 0; i < no; i++) {
    v->obs_low[i] = -INFINITY;
    v->obs_high[i] = INFINITY;
  }
  return TL_OK;
}

void tl_vecenv_free(tl_vecenv *v) {
  if (!v) return;
  if (v->cls && v->cls->free) v->cls->free(v);
  tl_batch_free(v->batch);
  void *arr[] = {v->act_low, v->act_high, v->obs_low, v->obs_high, v->obs_names, v->act_names, v->term_names,
                 v->params, v->terms, v->obs, v->action, v->slot};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  free(v);
}

tl_vecenv_options tl_vecenv_options_default(void) {
  tl_vecenv_options o;
  memset(&o, 0, sizeof o);
  o.task = "cartpole";
  o.nenv = 1;
  return o;
}

tl_status tl_vecenv_create(const tl_vecenv_options *opt, tl_vecenv **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  const tl_vecenv_options def = tl_vecenv_options_default();
  if (!opt) opt = &def;
  const char *task = opt->task;
  const tl_task_option *opts = opt->task_opts;
  int nopt = opt->ntask_opt, nenv = opt->nenv, nthread = opt->nthread;
  uint64_t seed = opt->seed;
  const tl_task_class *cls = NULL;
  for (int i = 0; i < NCLASS && task; i++)
    if (strcmp(classes[i]->name, task) == 0) cls = classes[i];
  if (!cls)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "task", "unknown task '%s' (tasks: cartpole, anymal-locomotion, urdf)",
                        task ? task : "(null)");
  if (nenv < 1) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "num_envs", "num_envs is %d: expected >= 1", nenv);
  if (nthread < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "num_threads", "num_threads is %d: expected >= 1 (or 0: all CPUs)", nthread);
  if (nopt < 0 || (nopt > 0 && !opts))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "opts", "%d options but no array", nopt);
  if (nopt > TL_TASK_MAX_KEYS)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "opts", "%d options: at most %d", nopt, TL_TASK_MAX_KEYS);
  tl_vecenv *v = calloc(1, sizeof(*v));
  if (!v) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  v->cls = cls;
  v->nenv = nenv;
  tl_opts o;
  memset(&o, 0, sizeof(o));
  o.task = cls->name;
  o.opt = opts;
  o.nopt = nopt;
  tl_status st = cls->init(v, &o, nenv, nthread, seed, err);
  if (!st && (long long)nenv * (v->obs_dim > v->act_dim ? v->obs_dim : v->act_dim) > INT_MAX)
    st = tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "num_envs",
                      "%d envs x %d observations do not fit the batched arrays' int length", nenv, v->obs_dim);
  if (!st) st = tl_opts_finish(&o, err);
  if (!st) st = tl_vecenv_reset(v, NULL, NULL, 0, err);
  if (st) {
    tl_vecenv_free(v);
    return st;
  }
  *out = v;
  return TL_OK;
}

const char *tl_vecenv_task(const tl_vecenv *v) { return v->cls->name; }
int tl_vecenv_nenv(const tl_vecenv *v) { return v->nenv; }
int tl_vecenv_obs_dim(const tl_vecenv *v) { return v->obs_dim; }
int tl_vecenv_act_dim(const tl_vecenv *v) { return v->act_dim; }
int tl_vecenv_max_episode_steps(const tl_vecenv *v) { return v->max_steps; }
double tl_vecenv_control_dt(const tl_vecenv *v) { return v->control_dt; }
tl_batch *tl_vecenv_batch(tl_vecenv *v) { return v->batch; }
const char *tl_vecenv_robot(const tl_vecenv *v) { return v->robot; }
int tl_vecenv_nwarning(const tl_vecenv *v) { return v->nwarning; }
const char *tl_vecenv_warning(const tl_vecenv *v, int i) { return i >= 0 && i < v->nwarning ? v->warnings[i] : NULL; }
const char *tl_vecenv_warning_kind(const tl_vecenv *v, int i) {
  return i >= 0 && i < v->nwarning ? v->warning_kinds[i] : NULL;
}

void tl_vecenv_action_bounds(const tl_vecenv *v, double *low, double *high) {
  if (low) memcpy(low, v->act_low, (size_t)v->act_dim * sizeof(double));
  if (high) memcpy(high, v->act_high, (size_t)v->act_dim * sizeof(double));
}

void tl_vecenv_obs_bounds(const tl_vecenv *v, double *low, double *high) {
  if (low) memcpy(low, v->obs_low, (size_t)v->obs_dim * sizeof(double));
  if (high) memcpy(high, v->obs_high, (size_t)v->obs_dim * sizeof(double));
}

const char *tl_vecenv_obs_name(const tl_vecenv *v, int i) { return i >= 0 && i < v->obs_dim ? v->obs_names[i] : NULL; }
const char *tl_vecenv_act_name(const tl_vecenv *v, int i) { return i >= 0 && i < v->act_dim ? v->act_names[i] : NULL; }
int tl_vecenv_nparam(const tl_vecenv *v) { (void)v; return TL_RAND_NPARAM; }
const char *tl_vecenv_param_name(const tl_vecenv *v, int i) {
  (void)v;
  return i >= 0 && i < TL_RAND_NPARAM ? tl_rand_param_names[i] : NULL;
}
const double *tl_vecenv_params(const tl_vecenv *v) { return v->params; }
int tl_vecenv_nterm(const tl_vecenv *v) { return v->nterm; }
const char *tl_vecenv_term_name(const tl_vecenv *v, int i) { return i >= 0 && i < v->nterm ? v->term_names[i] : NULL; }
const double *tl_vecenv_terms(const tl_vecenv *v) { return v->terms; }

/* ---------------- reset ---------------- */

static void reset_env(tl_vecenv *v, int e) {
  v->cls->reset(v, e, v->obs + (size_t)e * v->obs_dim, v->params + (size_t)e * TL_RAND_NPARAM);
  v->slot[e].steps = 0;
  v->slot[e].ret = 0;
  tl_batch_sync_env(v->batch, e);
}

static void reset_job(void *vv, int e, int t) {
  (void)t;
  reset_env(vv, e);
}

static void to_float(float *dst, const double *src, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = (float)src[i];
}

static tl_status check_obs(const tl_vecenv *v, const float *obs, int n, tl_error *err) {
  if (obs && (long)n != (long)v->nenv * v->obs_dim)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "obs", "obs has %d values, expected %d envs x %d", n, v->nenv,
                        v->obs_dim);
  return TL_OK;
}

static void reset_all(tl_vecenv *v, float *obs) {
  tl_batch_parallel_for(v->batch, reset_job, v);
  memset(v->terms, 0, (size_t)v->nenv * v->nterm * sizeof(double));
  if (obs) to_float(obs, v->obs, (size_t)v->nenv * v->obs_dim);
}

tl_status tl_vecenv_reset(tl_vecenv *v, const uint64_t *seed, float *obs, int n, tl_error *err) {
  tl_status st = check_obs(v, obs, n, err);
  if (st) return st;
  if (seed) tl_batch_seed(v->batch, *seed);
  reset_all(v, obs);
  return TL_OK;
}

tl_status tl_vecenv_reset_seeds(tl_vecenv *v, const uint64_t *seeds, const unsigned char *reseed, float *obs, int n,
                                tl_error *err) {
  if (!seeds) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "seeds", "seeds must not be NULL");
  tl_status st = check_obs(v, obs, n, err);
  if (st) return st;
  /* stream 0 of env e's own seed: the stream env 0 of a one-environment tl_vecenv gets from
   * tl_vecenv_reset with that seed (tl_batch_seed gives env i the stream (seed, i)) */
  for (int e = 0; e < v->nenv; e++)
    if (!reseed || reseed[e]) tl_rng_init(tl_batch_rng(v->batch, e), seeds[e], 0);
  reset_all(v, obs);
  return TL_OK;
}

/* ---------------- step ---------------- */

static void step_job(void *vv, int e, int t) {
  (void)t;
  tl_vecenv *v = vv;
  const tl_vecenv_result *out = v->job_out;
  size_t no = (size_t)v->obs_dim, na = (size_t)v->act_dim;
  const double *a = v->job_actions + e * na;
  double *act = v->action + e * na, *obs = v->obs + e * no, *terms = v->terms + (size_t)e * v->nterm;
  int finite = 1;
  for (size_t i = 0; i < na; i++) {
    finite &= isfinite(a[i]) != 0;
    act[i] = a[i] < v->act_low[i] ? v->act_low[i] : a[i] > v->act_high[i] ? v->act_high[i] : a[i];
  }
  unsigned char flags = 0;
  int terminated = 1;
  double reward = 0;
  if (finite) {
    tl_status status = TL_OK;
    terminated = v->cls->step(v, e, act, obs, terms, &status);
    for (int k = 0; k < v->nterm; k++) reward += terms[k];
    if (v->positive_reward && reward < 0) reward = 0;
    if (status) {
      flags |= TL_VECENV_DIVERGED;
      terminated = 1;
    }
  } else {
    flags |= TL_VECENV_NONFINITE_ACTION;
    memset(terms, 0, (size_t)v->nterm * sizeof(double));
  }
  tl_env_slot *s = &v->slot[e];
  s->steps++;
  s->ret += reward;
  int truncated = !terminated && s->steps >= v->max_steps;
  out->reward[e] = (float)reward;
  out->terminated[e] = (unsigned char)terminated;
  out->truncated[e] = (unsigned char)truncated;
  if (out->flags) out->flags[e] = flags;
  if (terminated || truncated) {
    if (out->final_obs) to_float(out->final_obs + e * no, obs, no);
    if (out->episode_return) out->episode_return[e] = s->ret;
    if (out->episode_length) out->episode_length[e] = s->steps;
    reset_env(v, e);
  } else {
    tl_batch_sync_env(v->batch, e);
  }
  to_float(out->obs + e * no, obs, no);
}

tl_status tl_vecenv_step(tl_vecenv *v, const double *actions, int n, const tl_vecenv_result *out, tl_error *err) {
  if (!actions || (long)n != (long)v->nenv * v->act_dim)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "actions", "actions has %d values, expected %d envs x %d",
                        actions ? n : 0, v->nenv, v->act_dim);
  if (!out || !out->obs || !out->reward || !out->terminated || !out->truncated)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "obs, reward, terminated and truncated are required");
  v->job_actions = actions;
  v->job_out = out;
  tl_batch_parallel_for(v->batch, step_job, v);
  v->job_actions = NULL;
  v->job_out = NULL;
  return TL_OK;
}
