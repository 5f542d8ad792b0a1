/* Guards: src/batch/batch.c, src/batch/pool.c (batched worlds, dynamic scheduling, threads bit for
 * bit), src/batch/rng.c (Philox streams). */
/* Batched worlds (talus/batch.h) and the counter-based random streams (talus/rng.h).
 *
 * - rng: Philox4x64-10 against known answers (NumPy 1.24's numpy.random.Philox with the same
 *   key, an independent implementation of Random123's generator), the carry of the 256-bit
 *   counter, the moments of uniform and normal draws (5 sigma) and the independence of
 *   neighbouring streams (correlation of 10^5 pairs within 5 sigma of 0).
 * - determinism: a batch of 7 talus_quadruped worlds, each env started from its own random
 *   perturbation of the default pose (drawn from its stream) with PD targets, stepped 300
 *   times with 1, 2, 3 and 7 threads: the state mirrors are bit-identical, and equal to the
 *   same worlds stepped one by one without a batch.
 * - parallel_for: every env visited exactly once, by one of the pool's threads.
 * - setters: wrong lengths, a NaN (named by env and index) and a zero quaternion are refused
 *   with nothing changed; a failing build function names its env and leaves nothing behind.
 * - stepping, the setters and parallel_for never allocate (malloc/calloc/realloc wrapped at
 *   link time, counted from every thread).
 *
 * Usage: test_batch ROBOTS_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/batch.h"
#include "talus/talus.h"
#include "test_util.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
static int counting, nalloc;
void *__wrap_malloc(size_t n) {
  if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_fetch_add(&nalloc, 1, __ATOMIC_RELAXED);
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s) {
  if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_fetch_add(&nalloc, 1, __ATOMIC_RELAXED);
  return __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n) {
  if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_fetch_add(&nalloc, 1, __ATOMIC_RELAXED);
  return __real_realloc(p, n);
}

static tl_error err;

/* ---------------- rng ---------------- */

static void test_rng_known_answers(void) {
  /* numpy.random.Philox(key=[k0, k1]).random_raw(6): the first block comes from counter 1 */
  static const struct {
    uint64_t key[2];
    uint64_t out[6];
  } kat[3] = {
      {{0, 0},
       {0x02f4ba6408e4d89bull, 0x3dd62b0b9ca8c5b2ull, 0x1c8667a55d902e79ull, 0x907d7a052fd5b4dcull,
        0x809bf322883987c3ull, 0x471128b9e807f7ddull}},
      {{12345, 7},
       {0x0a6effe13fb51d09ull, 0x550d7ff1e9b79c89ull, 0x5b961d1c4db72c59ull, 0x5881711dc14b2d09ull,
        0x561828786974a38aull, 0x5d11a5a3d1ab059aull}},
      {{0xffffffffffffffffull, 3},
       {0x6adac50770c76732ull, 0x700c072d4467a0f2ull, 0x4e9642bcf0ea6866ull, 0x2929a72063164ea4ull,
        0xc0aa6cf09e4270eeull, 0xb98e8654e133291cull}},
  };
  for (int k = 0; k < 3; k++) {
    tl_rng r;
    tl_rng_init(&r, kat[k].key[0], kat[k].key[1]);
    for (int i = 0; i < 6; i++) {
      uint64_t x = tl_rng_next(&r);
      TL_CHECK(x == kat[k].out[i], "philox key (%llu, %llu) word %d: %016llx, NumPy %016llx",
               (unsigned long long)kat[k].key[0], (unsigned long long)kat[k].key[1], i, (unsigned long long)x,
               (unsigned long long)kat[k].out[i]);
    }
  }
  /* Random123's published answer for counter 0, key 0 */
  uint64_t zero_ctr[4] = {0, 0, 0, 0}, zero_key[2] = {0, 0}, out[4];
  tl_rng_philox4x64(zero_ctr, zero_key, out);
  TL_CHECK(out[0] == 0x16554d9eca36314cull && out[3] == 0x7e68b68aec7ba23bull, "philox(0, 0) = %016llx ... %016llx",
           (unsigned long long)out[0], (unsigned long long)out[3]);
  /* carry: counter (2^64 - 1, 0, 0, 0) steps to (0, 1, 0, 0); NumPy's words for that block */
  tl_rng r;
  tl_rng_init(&r, 1, 2);
  r.counter[0] = 0xffffffffffffffffull;
  uint64_t expect[4] = {0x93baf02a9b6e1e64ull, 0xc291f37088c2bdefull, 0xb1363d2ce37f4eaeull, 0xf20b54a1cecf0a14ull};
  for (int i = 0; i < 4; i++) {
    uint64_t x = tl_rng_next(&r);
    TL_CHECK(x == expect[i], "counter carry word %d: %016llx, NumPy %016llx", i, (unsigned long long)x,
             (unsigned long long)expect[i]);
  }
  TL_CHECK(r.counter[0] == 0 && r.counter[1] == 1, "counter after the carry: (%llu, %llu)",
           (unsigned long long)r.counter[0], (unsigned long long)r.counter[1]);
}

static void test_rng_moments(void) {
  enum { N = 1000000 };
  tl_rng r;
  tl_rng_init(&r, 42, 0);
  double s = 0, s2 = 0, lo = 1, hi = 0;
  for (int i = 0; i < N; i++) {
    double x = tl_rng_uniform(&r);
    s += x;
    s2 += x * x;
    lo = fmin(lo, x);
    hi = fmax(hi, x);
  }
  double mean = s / N, var = s2 / N - mean * mean;
  TL_CHECK(lo >= 0 && hi < 1, "uniform outside [0, 1): [%g, %g]", lo, hi);
  TL_CHECK(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / N), "uniform mean %.6f", mean);
  TL_CHECK(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 180 / N), "uniform variance %.6f (1/12 = %.6f)", var, 1.0 / 12);
  s = s2 = 0;
  double s4 = 0;
  for (int i = 0; i < N; i++) {
    double x = tl_rng_normal(&r);
    s += x;
    s2 += x * x;
    s4 += x * x * x * x;
  }
  mean = s / N;
  var = s2 / N - mean * mean;
  TL_CHECK(fabs(mean) < 5 / sqrt((double)N), "normal mean %.5f", mean);
  TL_CHECK(fabs(var - 1) < 5 * sqrt(2.0 / N), "normal variance %.5f", var);
  TL_CHECK(fabs(s4 / N - 3) < 5 * sqrt(96.0 / N), "normal fourth moment %.4f (3)", s4 / N);
  /* neighbouring streams of one seed: uncorrelated */
  tl_rng a, b;
  tl_rng_init(&a, 7, 0);
  tl_rng_init(&b, 7, 1);
  double sab = 0;
  enum { M = 100000 };
  for (int i = 0; i < M; i++) sab += (tl_rng_uniform(&a) - 0.5) * (tl_rng_uniform(&b) - 0.5);
  double corr = sab / M * 12;
  TL_CHECK(fabs(corr) < 5 / sqrt((double)M), "streams 0 and 1 of seed 7: correlation %.5f", corr);
  /* range edge: lo == hi gives lo */
  TL_CHECK(tl_rng_range(&a, 2.5, 2.5) == 2.5, "range [2.5, 2.5] is not 2.5");
}

/* ---------------- batches ---------------- */

enum { NENV = 7, NSTEP = 300 };

typedef struct scene_ctx {
  tl_model *model;
} scene_ctx;

static tl_status build_world(void *vctx, int env, tl_world **out, tl_error *e) {
  (void)env;
  scene_ctx *c = vctx;
  tl_world *w = NULL;
  tl_status st = tl_world_create(&w, e);
  if (!st) st = tl_world_add_ground(w, 0.0, 0.8, e);
  if (!st) st = tl_world_add_system(w, c->model, NULL, e);
  if (st) {
    tl_world_free(w);
    return st;
  }
  *out = w;
  return TL_OK;
}

/* Each env's start: the default pose, joints perturbed by U(-0.2, 0.2) from the env's stream,
 * base 0.6 m up with a random horizontal velocity; PD targets = the default pose. */
static void initial_state(const tl_model *m, tl_rng *rng, double *q, double *u, double *qt) {
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  tl_model_default_q(m, q, nq, NULL);
  memcpy(qt, q, (size_t)nq * sizeof(double));
  for (int i = 7; i < nq; i++) q[i] += tl_rng_range(rng, -0.2, 0.2);
  q[2] = 0.6;
  memset(u, 0, (size_t)nv * sizeof(double));
  u[0] = tl_rng_range(rng, -0.5, 0.5);
  u[1] = tl_rng_range(rng, -0.5, 0.5);
}

static tl_batch *make_batch(tl_model *m, int nthread, uint64_t seed) {
  scene_ctx c = {m};
  tl_batch_options o = tl_batch_options_default();
  o.nthread = nthread;
  o.seed = seed;
  tl_batch *b = NULL;
  if (!TL_CHECK(tl_batch_create(NENV, &o, build_world, &c, &b, &err) == TL_OK, "create (%d threads): %s", nthread,
                err.message))
    return NULL;
  int nq = tl_batch_nq(b), nv = tl_batch_nv(b);
  double *q = calloc((size_t)NENV * nq, sizeof(double)), *u = calloc((size_t)NENV * nv, sizeof(double));
  double *qt = calloc((size_t)NENV * nq, sizeof(double)), *kp = calloc((size_t)NENV * nv, sizeof(double));
  double *kd = calloc((size_t)NENV * nv, sizeof(double));
  for (int e = 0; e < NENV; e++) {
    initial_state(m, tl_batch_rng(b, e), q + e * nq, u + e * nv, qt + e * nq);
    for (int k = 6; k < nv; k++) {
      kp[e * nv + k] = 300;
      kd[e * nv + k] = 10;
    }
  }
  int ok = tl_batch_set_state(b, q, NENV * nq, u, NENV * nv, &err) == TL_OK &&
           tl_batch_set_pd_gains(b, kp, kd, NENV * nv, &err) == TL_OK &&
           tl_batch_set_pd_targets(b, qt, NENV * nq, NULL, 0, &err) == TL_OK;
  TL_CHECK(ok, "setters: %s", err.message);
  free(q), free(u), free(qt), free(kp), free(kd);
  return b;
}

static void test_determinism(tl_model *m) {
  const int threads[4] = {1, 2, 3, 7};
  double *ref_q = NULL, *ref_u = NULL;
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  for (int t = 0; t < 4; t++) {
    tl_batch *b = make_batch(m, threads[t], 99);
    if (!b) return;
    TL_CHECK(tl_batch_nthread(b) == threads[t], "nthread %d, asked %d", tl_batch_nthread(b), threads[t]);
    TL_CHECK(tl_batch_step(b, NSTEP, &err) == TL_OK, "step: %s", err.message);
    const double *q = tl_batch_q(b), *u = tl_batch_u(b);
    if (t == 0) {
      ref_q = malloc((size_t)NENV * nq * sizeof(double));
      ref_u = malloc((size_t)NENV * nv * sizeof(double));
      memcpy(ref_q, q, (size_t)NENV * nq * sizeof(double));
      memcpy(ref_u, u, (size_t)NENV * nv * sizeof(double));
      /* the envs really differ and really moved: base heights after 0.3 s */
      double zmin = INFINITY, zmax = -INFINITY;
      for (int e = 0; e < NENV; e++) zmin = fmin(zmin, q[e * nq + 2]), zmax = fmax(zmax, q[e * nq + 2]);
      TL_CHECK(zmax - zmin > 1e-4 && zmax < 0.59, "base heights after %d steps: [%g, %g]", NSTEP, zmin, zmax);
    } else {
      TL_CHECK(memcmp(ref_q, q, (size_t)NENV * nq * sizeof(double)) == 0 &&
                   memcmp(ref_u, u, (size_t)NENV * nv * sizeof(double)) == 0,
               "%d threads: state differs from 1 thread", threads[t]);
    }
    tl_batch_free(b);
  }
  /* the same worlds stepped one by one, outside any batch, with the same streams */
  for (int e = 0; e < NENV; e++) {
    tl_world *w = NULL;
    tl_system *s = NULL;
    tl_rng rng;
    tl_rng_init(&rng, 99, (uint64_t)e);
    double q[64], u[64], qt[64], kp[64] = {0}, kd[64] = {0}, zeros[64] = {0};
    initial_state(m, &rng, q, u, qt);
    for (int k = 6; k < nv; k++) kp[k] = 300, kd[k] = 10;
    int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0.0, 0.8, &err) == TL_OK &&
             tl_world_add_system(w, m, &s, &err) == TL_OK && tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK &&
             tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK &&
             tl_system_set_pd_targets(s, qt, nq, zeros, nv, &err) == TL_OK;
    for (int i = 0; i < NSTEP && ok; i++) ok = tl_world_step(w, &err) == TL_OK;
    ok = ok && tl_system_get_state(s, q, nq, u, nv, &err) == TL_OK;
    TL_CHECK(ok && memcmp(q, ref_q + e * nq, (size_t)nq * sizeof(double)) == 0 &&
                 memcmp(u, ref_u + e * nv, (size_t)nv * sizeof(double)) == 0,
             "env %d: the batch differs from the same world stepped alone %s", e, ok ? "" : err.message);
    tl_world_free(w);
  }
  free(ref_q);
  free(ref_u);
}

typedef struct visit_ctx {
  tl_batch *b;
  int count[NENV], thread[NENV];
} visit_ctx;

static void visit(void *vctx, int env, int thread) {
  visit_ctx *c = vctx;
  c->count[env]++;
  c->thread[env] = thread;
}

static void test_partition(tl_model *m) {
  tl_batch *b = make_batch(m, 3, 1);
  if (!b) return;
  visit_ctx c;
  memset(&c, 0, sizeof(c));
  c.b = b;
  for (int rep = 0; rep < 2; rep++) tl_batch_parallel_for(b, visit, &c); /* the counter restarts per call */
  for (int e = 0; e < NENV; e++)
    TL_CHECK(c.count[e] == 2 && c.thread[e] >= 0 && c.thread[e] < 3,
             "env %d: visited %d times (2 expected), last by thread %d", e, c.count[e], c.thread[e]);
  tl_batch_free(b);
}

static void test_setters(tl_model *m) {
  tl_batch *b = make_batch(m, 2, 5);
  if (!b) return;
  int nq = tl_batch_nq(b), nv = tl_batch_nv(b);
  size_t bytes = (size_t)NENV * nq * sizeof(double);
  double *before = malloc(bytes), *q = malloc(bytes);
  memcpy(before, tl_batch_q(b), bytes);
  memcpy(q, before, bytes);
  for (int i = 0; i < NENV * nq; i++) q[i] += 0.01; /* a change that would be visible */
  TL_CHECK(tl_batch_set_state(b, q, NENV * nq - 1, NULL, 0, &err) == TL_ERR_ARGUMENT &&
               strstr(err.message, "expected") != NULL,
           "a short q was not refused: %s", err.message);
  q[3 * nq + 9] = NAN;
  tl_status st = tl_batch_set_state(b, q, NENV * nq, NULL, 0, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "q[3, 9]") != NULL, "NaN in env 3: status %d, '%s'", st,
           err.message);
  q[3 * nq + 9] = 0;
  for (int k = 3; k < 7; k++) q[5 * nq + k] = 0;
  st = tl_batch_set_state(b, q, NENV * nq, NULL, 0, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "q[5, 3:7]") != NULL, "zero quaternion: status %d, '%s'", st,
           err.message);
  TL_CHECK(memcmp(before, tl_batch_q(b), bytes) == 0, "a refused set_state changed the state");
  double *kp = calloc((size_t)NENV * nv, sizeof(double));
  kp[2 * nv + 7] = -1;
  st = tl_batch_set_pd_gains(b, kp, kp, NENV * nv, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "kp[2, 7]") != NULL, "negative gain: '%s'", err.message);
  TL_CHECK(tl_batch_step(b, -1, &err) == TL_ERR_ARGUMENT, "nstep -1 accepted");
  TL_CHECK(tl_batch_system(b, NENV, 0) == NULL && tl_batch_world(b, -1) == NULL && tl_batch_rng(b, NENV) == NULL,
           "bad indices give non-NULL");

  /* nothing allocates after creation: step, setters, parallel_for */
  for (int i = 0; i < NENV * nq; i++) q[i] = before[i];
  memset(kp, 0, (size_t)NENV * nv * sizeof(double));
  visit_ctx c;
  memset(&c, 0, sizeof(c));
  __atomic_store_n(&nalloc, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  int ok = tl_batch_step(b, 50, &err) == TL_OK && tl_batch_set_state(b, q, NENV * nq, NULL, 0, &err) == TL_OK &&
           tl_batch_set_pd_targets(b, q, NENV * nq, NULL, 0, &err) == TL_OK &&
           tl_batch_set_generalized_force(b, kp, NENV * nv, &err) == TL_OK &&
           tl_batch_step(b, 50, &err) == TL_OK;
  tl_batch_parallel_for(b, visit, &c);
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  TL_CHECK(ok, "step / setters: %s", err.message);
  TL_CHECK(nalloc == 0, "%d allocations while stepping and setting a batch", nalloc);
  printf("batch of %d envs, 2 threads: %d allocations in 100 steps and 3 setters\n", NENV, nalloc);
  free(before), free(q), free(kp);
  tl_batch_free(b);
}

static tl_status build_failing(void *vctx, int env, tl_world **out, tl_error *e) {
  if (env == 2) return tl_error_set(e, TL_ERR_INVALID, "scene.xml", 12, "system", "broken on purpose");
  return build_world(vctx, env, out, e);
}

static void test_create_errors(tl_model *m) {
  scene_ctx c = {m};
  tl_batch *b = (tl_batch *)&c;
  tl_status st = tl_batch_create(4, NULL, build_failing, &c, &b, &err);
  TL_CHECK(st == TL_ERR_INVALID && b == NULL && err.line == 12 && strcmp(err.file, "scene.xml") == 0 &&
               strncmp(err.message, "env 2: scene.xml:12:", 20) == 0,
           "failing build: status %d, out %p, '%s'", st, (void *)b, err.message);
  TL_CHECK(tl_batch_create(0, NULL, build_world, &c, &b, &err) == TL_ERR_ARGUMENT, "nenv 0 accepted");
  tl_batch_options o = tl_batch_options_default();
  o.nthread = -1;
  TL_CHECK(tl_batch_create(2, &o, build_world, &c, &b, &err) == TL_ERR_ARGUMENT, "nthread -1 accepted");
  /* nthread 0: the CPUs, at most nenv */
  o.nthread = 0;
  TL_CHECK(tl_batch_create(1, &o, build_world, &c, &b, &err) == TL_OK && tl_batch_nthread(b) == 1,
           "nthread 0 with 1 env: %d threads", b ? tl_batch_nthread(b) : -1);
  tl_batch_free(b);
  TL_CHECK(tl_batch_cpu_count() >= 1, "cpu count %d", tl_batch_cpu_count());
  /* from a file: URDF (ground and dt from the options) and a bad path */
  TL_CHECK(tl_batch_create_file("/nonexistent/robot.urdf", 2, NULL, &b, &err) == TL_ERR_IO && b == NULL,
           "missing file: status %d", err.status);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_batch ROBOTS_DIR\n");
    return 2;
  }
  test_rng_known_answers();
  test_rng_moments();
  char path[1024];
  snprintf(path, sizeof(path), "%s/talus_quadruped/talus_quadruped.urdf", argv[1]);
  tl_model *m = NULL;
  if (TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "load: %s", err.message)) {
    test_determinism(m);
    test_partition(m);
    test_setters(m);
    test_create_errors(m);
  }
  tl_model_free(m);
  return tl_test_finish();
}
