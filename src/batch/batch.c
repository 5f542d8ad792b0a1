/* tl_batch: N worlds on a fixed thread pool, each thread taking the next environment
 * (include/talus/batch.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */

#include "talus/batch.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "batch/pool.h"
#include "dynamics/joint_space.h"
#include "talus/scene.h"
#include "talus/urdf.h"

struct tl_batch {
  int nenv, nthread, nsystem, nq, nv;
  uint64_t seed;
  tl_world **worlds;    /* [nenv] */
  tl_system **systems;  /* [nenv * nsystem] */
  int *sys_q, *sys_v;   /* [nsystem + 1]: offsets of each system in an environment's q and u */
  int nquat, *quat;     /* offsets of the quaternions in an environment's q */
  tl_rng *rng;          /* [nenv] */
  double *q, *u;        /* state mirror [nenv * nq], [nenv * nv] */
  double *zeros;        /* [nv]: velocity targets / velocities when the caller gives none */
  tl_status *status;    /* [nenv]: result of the last step */
  tl_error *errors;     /* [nenv] */
  int nstep;            /* of the running step job */
  tl_pool *pool;
};

tl_batch_options tl_batch_options_default(void) {
  tl_batch_options o;
  memset(&o, 0, sizeof(o));
  o.dt = 1e-3;
  o.ground = 1;
  o.ground_friction = 0.8;
  o.base = TL_BASE_AUTO;
  return o;
}

int tl_batch_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* *err = inner with "PREFIX: " before its message (file, line and element kept). */
static tl_status prefix_error(tl_error *err, const tl_error *inner, const char *prefix) {
  tl_status st = tl_error_set(err, inner->status, NULL, 0, NULL, "%s: %.1000s", prefix, inner->message);
  if (err) {
    memcpy(err->file, inner->file, sizeof(err->file));
    memcpy(err->element, inner->element, sizeof(err->element));
    err->line = inner->line;
  }
  return st;
}

/* ---------------- creation ---------------- */

/* Layout of one environment from world 0: systems, offsets, quaternions. */
static tl_status take_layout(tl_batch *b, tl_error *err) {
  tl_world *w = b->worlds[0];
  b->nsystem = tl_world_nsystem(w);
  if (b->nsystem < 1)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "world", "env 0: the world has no system to batch");
  b->sys_q = calloc((size_t)b->nsystem + 1, sizeof(int));
  b->sys_v = calloc((size_t)b->nsystem + 1, sizeof(int));
  if (!b->sys_q || !b->sys_v) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  int nquat = 0;
  for (int s = 0; s < b->nsystem; s++) {
    tl_system *sys = tl_world_system(w, s);
    b->sys_q[s + 1] = b->sys_q[s] + tl_system_nq(sys);
    b->sys_v[s + 1] = b->sys_v[s] + tl_system_nv(sys);
    const tl_model *m = tl_system_model(sys);
    for (int j = 0; j < tl_model_nbody(m); j++) {
      nquat += tl_js_quat_offset(tl_model_joint_type(m, j)) >= 0;
    }
  }
  b->nq = b->sys_q[b->nsystem];
  b->nv = b->sys_v[b->nsystem];
  if ((long long)b->nenv * (b->nq > b->nv ? b->nq : b->nv) > INT_MAX)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nenv",
                        "%d envs x %d coordinates do not fit the batched arrays' int length", b->nenv, b->nq);
  b->quat = calloc((size_t)nquat + 1, sizeof(int));
  if (!b->quat) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int s = 0; s < b->nsystem; s++) {
    const tl_model *m = tl_system_model(tl_world_system(w, s));
    for (int j = 0; j < tl_model_nbody(m); j++) {
      int off = tl_js_quat_offset(tl_model_joint_type(m, j));
      if (off >= 0) b->quat[b->nquat++] = b->sys_q[s] + tl_model_joint_q_index(m, j) + off;
    }
  }
  return TL_OK;
}

/* Environment env's world has the layout of world 0. */
static tl_status check_layout(tl_batch *b, int env, tl_error *err) {
  tl_world *w = b->worlds[env];
  if (tl_world_nsystem(w) != b->nsystem)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "world", "env %d: %d systems, env 0 has %d", env,
                        tl_world_nsystem(w), b->nsystem);
  for (int s = 0; s < b->nsystem; s++) {
    tl_system *sys = tl_world_system(w, s);
    if (tl_system_nq(sys) != b->sys_q[s + 1] - b->sys_q[s] || tl_system_nv(sys) != b->sys_v[s + 1] - b->sys_v[s])
      return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "world",
                          "env %d: system %d has nq %d, nv %d, env 0's has nq %d, nv %d", env, s,
                          tl_system_nq(sys), tl_system_nv(sys), b->sys_q[s + 1] - b->sys_q[s],
                          b->sys_v[s + 1] - b->sys_v[s]);
    b->systems[(size_t)env * b->nsystem + s] = sys;
  }
  return TL_OK;
}

static tl_status alloc_arrays(tl_batch *b, tl_error *err) {
  size_t n = (size_t)b->nenv;
  b->systems = calloc(n * (size_t)b->nsystem, sizeof(tl_system *));
  b->rng = calloc(n, sizeof(tl_rng));
  b->q = calloc(n * (size_t)b->nq + 1, sizeof(double));
  b->u = calloc(n * (size_t)b->nv + 1, sizeof(double));
  b->zeros = calloc((size_t)b->nv + 1, sizeof(double));
  b->status = calloc(n, sizeof(tl_status));
  b->errors = calloc(n, sizeof(tl_error));
  if (!b->systems || !b->rng || !b->q || !b->u || !b->zeros || !b->status || !b->errors)
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  return TL_OK;
}

tl_status tl_batch_create(int nenv, const tl_batch_options *opt, tl_batch_build_fn build, void *ctx,
                          tl_batch **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  tl_batch_options o = opt ? *opt : tl_batch_options_default();
  if (nenv < 1) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nenv", "nenv is %d: expected >= 1", nenv);
  if (o.nthread < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nthread", "nthread is %d: expected >= 0 (0: all CPUs)", o.nthread);
  if (!build) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "build", "build must not be NULL");
  tl_batch *b = calloc(1, sizeof(*b));
  if (!b) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  b->nenv = nenv;
  b->nthread = o.nthread ? o.nthread : tl_batch_cpu_count();
  if (b->nthread > nenv) b->nthread = nenv;
  b->seed = o.seed;
  tl_status st = TL_OK;
  b->worlds = calloc((size_t)nenv, sizeof(tl_world *));
  if (!b->worlds) st = tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int e = 0; e < nenv && !st; e++) {
    tl_error e_err;
    memset(&e_err, 0, sizeof(e_err));
    st = build(ctx, e, &b->worlds[e], &e_err);
    if (!st && !b->worlds[e])
      st = tl_error_set(&e_err, TL_ERR_INVALID, NULL, 0, "build", "the build function returned no world");
    if (st) {
      char prefix[32];
      snprintf(prefix, sizeof(prefix), "env %d", e);
      prefix_error(err, &e_err, prefix);
      break;
    }
    if (e == 0 && ((st = take_layout(b, err)) || (st = alloc_arrays(b, err)))) break;
    st = check_layout(b, e, err);
  }
  if (!st && !(b->pool = tl_pool_create(b->nthread)))
    st = tl_error_set(err, TL_ERR_INVALID, NULL, 0, "nthread", "could not start %d threads", b->nthread - 1);
  if (st) {
    tl_batch_free(b);
    return st;
  }
  tl_batch_seed(b, b->seed);
  tl_batch_sync(b);
  *out = b;
  return TL_OK;
}

void tl_batch_free(tl_batch *b) {
  if (!b) return;
  tl_pool_free(b->pool);
  for (int e = 0; b->worlds && e < b->nenv; e++) tl_world_free(b->worlds[e]);
  void *arr[] = {b->worlds, b->systems, b->sys_q, b->sys_v, b->quat, b->rng, b->q, b->u, b->zeros, b->status, b->errors};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  free(b);
}

typedef struct model_ctx {
  const tl_model *model;
  const tl_batch_options *opt;
} model_ctx;

static tl_status build_model_world(void *vctx, int env, tl_world **out, tl_error *err) {
  (void)env;
  model_ctx *c = vctx;
  tl_world *w = NULL;
  tl_status st = tl_world_create(&w, err);
  if (!st) st = tl_world_set_timestep(w, c->opt->dt, err);
  if (!st && c->opt->ground) st = tl_world_add_ground(w, 0.0, c->opt->ground_friction, err);
  if (!st) st = tl_world_add_system(w, c->model, NULL, err);
  if (st) {
    tl_world_free(w);
    return st;
  }
  *out = w;
  return TL_OK;
}

tl_status tl_batch_create_model(const tl_model *model, int nenv, const tl_batch_options *opt,
                                tl_batch **out, tl_error *err) {
  if (out) *out = NULL;
  if (!model) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  tl_batch_options o = opt ? *opt : tl_batch_options_default();
  model_ctx c = {model, &o};
  return tl_batch_create(nenv, &o, build_model_world, &c, out, err);
}

static tl_status build_scene_world(void *vctx, int env, tl_world **out, tl_error *err) {
  (void)env;
  return tl_scene_load((const char *)vctx, out, NULL, err);
}

tl_status tl_batch_create_file(const char *path, int nenv, const tl_batch_options *opt,
                               tl_batch **out, tl_error *err) {
  if (out) *out = NULL;
  if (!path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "path must not be NULL");
  int is_world = tl_scene_is_world_file(path);
  if (is_world < 0) return tl_error_set(err, TL_ERR_IO, path, 0, NULL, "cannot read the file");
  tl_batch_options o = opt ? *opt : tl_batch_options_default();
  if (is_world) return tl_batch_create(nenv, &o, build_scene_world, (void *)path, out, err);
  tl_load_options lo = tl_load_options_default();
  lo.base = o.base;
  tl_model *model = NULL;
  tl_status st = tl_model_load_urdf(path, &lo, &model, err);
  if (st) return st;
  st = tl_batch_create_model(model, nenv, &o, out, err);
  tl_model_free(model);
  return st;
}

/* ---------------- queries ---------------- */

int tl_batch_nenv(const tl_batch *b) { return b->nenv; }
int tl_batch_nthread(const tl_batch *b) { return b->nthread; }
int tl_batch_nsystem(const tl_batch *b) { return b->nsystem; }
int tl_batch_nq(const tl_batch *b) { return b->nq; }
int tl_batch_nv(const tl_batch *b) { return b->nv; }
uint64_t tl_batch_seed_value(const tl_batch *b) { return b->seed; }

tl_world *tl_batch_world(tl_batch *b, int env) {
  return env >= 0 && env < b->nenv ? b->worlds[env] : NULL;
}

tl_system *tl_batch_system(tl_batch *b, int env, int system) {
  if (env < 0 || env >= b->nenv || system < 0 || system >= b->nsystem) return NULL;
  return b->systems[(size_t)env * b->nsystem + system];
}

tl_rng *tl_batch_rng(tl_batch *b, int env) { return env >= 0 && env < b->nenv ? &b->rng[env] : NULL; }

void tl_batch_seed(tl_batch *b, uint64_t seed) {
  b->seed = seed;
  for (int e = 0; e < b->nenv; e++) tl_rng_init(&b->rng[e], seed, (uint64_t)e);
}

const double *tl_batch_q(const tl_batch *b) { return b->q; }
const double *tl_batch_u(const tl_batch *b) { return b->u; }

static void sync_env(tl_batch *b, int e) {
  for (int s = 0; s < b->nsystem; s++) {
    tl_system *sys = b->systems[(size_t)e * b->nsystem + s];
    int nq = b->sys_q[s + 1] - b->sys_q[s], nv = b->sys_v[s + 1] - b->sys_v[s];
    tl_system_get_state(sys, b->q + (size_t)e * b->nq + b->sys_q[s], nq, b->u + (size_t)e * b->nv + b->sys_v[s],
                        nv, NULL);
  }
}

void tl_batch_sync_env(tl_batch *b, int env) {
  if (env >= 0 && env < b->nenv) sync_env(b, env);
}

void tl_batch_sync(tl_batch *b) {
  for (int e = 0; e < b->nenv; e++) sync_env(b, e);
}

/* ---------------- the pool ---------------- */

typedef struct pfor_job {
  tl_batch *b;
  tl_batch_fn fn;
  void *ctx;
  atomic_int next; /* the next environment nobody has taken */
} pfor_job;

/* Each thread takes the next untaken environment until none is left: environments of a training
 * batch differ in cost (a robot sliding or falling needs more solver sweeps than one standing), so a
 * static split leaves a thread idle at the end. Which thread runs an environment depends on timing;
 * its result does not (fn touches only that environment's data). */
static void pfor_thread(void *vjob, int t) {
  pfor_job *job = vjob;
  for (int e; (e = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed)) < job->b->nenv;)
    job->fn(job->ctx, e, t);
}

void tl_batch_parallel_for(tl_batch *b, tl_batch_fn fn, void *ctx) {
  pfor_job job = {b, fn, ctx, 0};
  tl_pool_run(b->pool, pfor_thread, &job);
}

static void step_env(void *vb, int e, int t) {
  (void)t;
  tl_batch *b = vb;
  tl_world *w = b->worlds[e];
  b->status[e] = TL_OK;
  for (int k = 0; k < b->nstep; k++) {
    b->status[e] = tl_world_step(w, &b->errors[e]);
    if (b->status[e]) break;
  }
  sync_env(b, e);
}

/* The lowest-numbered failed environment's error, or TL_OK. */
static tl_status first_error(const tl_batch *b, tl_error *err) {
  for (int e = 0; e < b->nenv; e++) {
    if (!b->status[e]) continue;
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "env %d", e);
    return prefix_error(err, &b->errors[e], prefix);
  }
  return TL_OK;
}

tl_status tl_batch_step(tl_batch *b, int nstep, tl_error *err) {
  if (nstep < 0) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nstep", "nstep is %d: expected >= 0", nstep);
  b->nstep = nstep;
  tl_batch_parallel_for(b, step_env, b);
  return first_error(b, err);
}

tl_status tl_batch_env_status(const tl_batch *b, int env) {
  return env >= 0 && env < b->nenv ? b->status[env] : TL_ERR_ARGUMENT;
}

/* ---------------- batched setters ---------------- */

/* p has nenv x width values (NULL allowed if allow_null). */
static tl_status check_len(const tl_batch *b, tl_error *err, const char *name, const void *p, int n, int width,
                           int allow_null) {
  if (!p && allow_null) return TL_OK;
  if (!p) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, name, "%s must not be NULL", name);
  long expected = (long)b->nenv * width;
  if ((long)n != expected)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, name, "%s has %d values, expected %ld (%d envs x %d)", name, n,
                        expected, b->nenv, width);
  return TL_OK;
}

/* Every value finite (and >= 0 if nonneg); the error names env and index. */
static tl_status check_values(tl_error *err, const char *name, const double *x, int nenv, int width, int nonneg) {
  if (!x) return TL_OK;
  for (int e = 0; e < nenv; e++)
    for (int i = 0; i < width; i++) {
      double v = x[(size_t)e * width + i];
      if (!isfinite(v) || (nonneg && v < 0))
        return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, name, "%s[%d, %d] is %g: expected a finite number%s", name,
                            e, i, v, nonneg ? " >= 0" : "");
    }
  return TL_OK;
}

static tl_status check_quats(const tl_batch *b, tl_error *err, const char *name, const double *q) {
  for (int e = 0; e < b->nenv; e++)
    for (int k = 0; k < b->nquat; k++) {
      const double *x = q + (size_t)e * b->nq + b->quat[k];
      if (!(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3] > 1e-20))
        return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, name, "%s[%d, %d:%d] is a zero quaternion", name, e,
                            b->quat[k], b->quat[k] + 4);
    }
  return TL_OK;
}

/* Per-system setter after the checks: cannot fail (a failure is a bug, reported). */
static tl_status apply_error(tl_error *err, int e, int s, const tl_error *inner) {
  char prefix[48];
  snprintf(prefix, sizeof(prefix), "env %d, system %d", e, s);
  return prefix_error(err, inner, prefix);
}

tl_status tl_batch_set_state(tl_batch *b, const double *q, int nq, const double *u, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_len(b, err, "q", q, nq, b->nq, 0)) || (st = check_len(b, err, "u", u, nv, b->nv, 1)) ||
      (st = check_values(err, "q", q, b->nenv, b->nq, 0)) || (st = check_values(err, "u", u, b->nenv, b->nv, 0)) ||
      (st = check_quats(b, err, "q", q)))
    return st;
  for (int e = 0; e < b->nenv; e++) {
    for (int s = 0; s < b->nsystem; s++) {
      tl_system *sys = b->systems[(size_t)e * b->nsystem + s];
      int snq = b->sys_q[s + 1] - b->sys_q[s], snv = b->sys_v[s + 1] - b->sys_v[s];
      const double *qs = q + (size_t)e * b->nq + b->sys_q[s];
      const double *us = u ? u + (size_t)e * b->nv + b->sys_v[s] : b->zeros;
      tl_error inner;
      if (tl_system_set_state(sys, qs, snq, us, snv, &inner)) return apply_error(err, e, s, &inner);
    }
    sync_env(b, e);
  }
  return TL_OK;
}

tl_status tl_batch_get_state(const tl_batch *b, double *q, int nq, double *u, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_len(b, err, "q", q, nq, b->nq, 1)) || (st = check_len(b, err, "u", u, nv, b->nv, 1)))
    return st;
  if (q) memcpy(q, b->q, (size_t)b->nenv * b->nq * sizeof(double));
  if (u) memcpy(u, b->u, (size_t)b->nenv * b->nv * sizeof(double));
  return TL_OK;
}

tl_status tl_batch_set_pd_gains(tl_batch *b, const double *kp, const double *kd, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_len(b, err, "kp", kp, nv, b->nv, 0)) || (st = check_len(b, err, "kd", kd, nv, b->nv, 0)) ||
      (st = check_values(err, "kp", kp, b->nenv, b->nv, 1)) || (st = check_values(err, "kd", kd, b->nenv, b->nv, 1)))
    return st;
  for (int e = 0; e < b->nenv; e++)
    for (int s = 0; s < b->nsystem; s++) {
      size_t off = (size_t)e * b->nv + b->sys_v[s];
      tl_error inner;
      if (tl_system_set_pd_gains(b->systems[(size_t)e * b->nsystem + s], kp + off, kd + off,
                                 b->sys_v[s + 1] - b->sys_v[s], &inner))
        return apply_error(err, e, s, &inner);
    }
  return TL_OK;
}

tl_status tl_batch_set_pd_targets(tl_batch *b, const double *q_target, int nq, const double *u_target, int nv,
                                  tl_error *err) {
  tl_status st;
  if ((st = check_len(b, err, "q_target", q_target, nq, b->nq, 0)) ||
      (st = check_len(b, err, "u_target", u_target, nv, b->nv, 1)) ||
      (st = check_values(err, "q_target", q_target, b->nenv, b->nq, 0)) ||
      (st = check_values(err, "u_target", u_target, b->nenv, b->nv, 0)) || (st = check_quats(b, err, "q_target", q_target)))
    return st;
  for (int e = 0; e < b->nenv; e++)
    for (int s = 0; s < b->nsystem; s++) {
      const double *ut = u_target ? u_target + (size_t)e * b->nv + b->sys_v[s] : b->zeros;
      const double *qt = q_target + (size_t)e * b->nq + b->sys_q[s];
      tl_error inner;
      if (tl_system_set_pd_targets(b->systems[(size_t)e * b->nsystem + s], qt, b->sys_q[s + 1] - b->sys_q[s], ut,
                                   b->sys_v[s + 1] - b->sys_v[s], &inner))
        return apply_error(err, e, s, &inner);
    }
  return TL_OK;
}

tl_status tl_batch_set_generalized_force(tl_batch *b, const double *tau, int nv, tl_error *err) {
  tl_status st;
  if ((st = check_len(b, err, "tau", tau, nv, b->nv, 0)) ||
      (st = check_values(err, "tau", tau, b->nenv, b->nv, 0)))
    return st;
  for (int e = 0; e < b->nenv; e++)
    for (int s = 0; s < b->nsystem; s++) {
      tl_error inner;
      if (tl_system_set_generalized_force(b->systems[(size_t)e * b->nsystem + s], tau + (size_t)e * b->nv + b->sys_v[s],
                                          b->sys_v[s + 1] - b->sys_v[s], &inner))
        return apply_error(err, e, s, &inner);
    }
  return TL_OK;
}
