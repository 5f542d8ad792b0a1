/* Guards: src/tasks/vecenv.c, src/tasks/cartpole.c, src/tasks/legged.c, src/tasks/randomize.c,
 * src/tasks/options.c (talus/task.h). */
/* Reinforcement-learning tasks and vectorized environments (talus/task.h).
 *
 * cartpole (the shared URDF; SKIPPED without it):
 *   - the pole falls from theta0 = 0.01 rad with the growth rate of the linearized cart-pole,
 *     theta(t) = theta0 cosh(lambda t), lambda^2 = m g l / (I + m l^2 - m^2 l^2 / (M + m)),
 *     to 0.5 % over 0.3 s (so the observation's signs and units are the simulated state's);
 *   - a force a * force_scale on the cart at rest, upright, gives the cart acceleration
 *     F (I + m l^2) / ((M + m)(I + m l^2) - m^2 l^2) (1 ms step, 1 %);
 *   - a zero force ends every episode by the angle limit before the time limit, with reward 1
 *     per step, and final_obs beyond the limit.
 * anymal-locomotion (shared ANYmal C; SKIPPED without it):
 *   - reset: gravity (0, 0, -1) in the base frame, joint offsets within joint_noise, command in
 *     its range, the robot's lowest geom drop_height above the ground;
 *   - the reward is the sum of the terms clipped at 0, and the tracking terms equal dt w exp(-|e|^2 / 0.25)
 *     computed from the returned observation;
 *   - bit-identical observations, rewards and flags with 1, 2 and 3 threads over 150 steps of
 *     random actions with every randomization on;
 *   - a NaN action ends only that env (terminated, flag, final_obs = its last observation), the
 *     other envs' trajectories are bit-identical to a run without it;
 *   - a base turned on its side terminates (tilt), a short episode truncates at its length;
 *   - randomized values stay in their ranges and mass_scale 2 doubles the total mass;
 *   - reset, step and the randomization never allocate (malloc wrapped).
 * urdf (robots/): talus_quadruped (floating) and the double pendulum (fixed base) shapes.
 * options: an unknown key lists the task's keys; a bad value names it; a missing robot names
 * the places searched.
 *
 * Usage: test_tasks ROBOTS_DIR SHARED_ROBOTS_DIR ($TALUS_SHARED/robots overrides). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/task.h"
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
static char shared[1024];

/* Buffers for one vecenv's step outputs. */
typedef struct bufs {
  int nenv, no, na;
  float *obs, *final_obs, *reward;
  unsigned char *terminated, *truncated, *flags;
  double *ret, *act;
  int *len;
  tl_vecenv_result out;
} bufs;

static void bufs_init(bufs *b, const tl_vecenv *v) {
  b->nenv = tl_vecenv_nenv(v);
  b->no = tl_vecenv_obs_dim(v);
  b->na = tl_vecenv_act_dim(v);
  size_t n = (size_t)b->nenv;
  b->obs = calloc(n * b->no, sizeof(float));
  b->final_obs = calloc(n * b->no, sizeof(float));
  b->reward = calloc(n, sizeof(float));
  b->terminated = calloc(n, 1);
  b->truncated = calloc(n, 1);
  b->flags = calloc(n, 1);
  b->ret = calloc(n, sizeof(double));
  b->len = calloc(n, sizeof(int));
  b->act = calloc(n * b->na, sizeof(double));
  b->out = (tl_vecenv_result){b->obs, b->reward, b->terminated, b->truncated, b->final_obs, b->flags, b->ret, b->len};
}

static void bufs_free(bufs *b) {
  free(b->obs), free(b->final_obs), free(b->reward), free(b->terminated), free(b->truncated), free(b->flags);
  free(b->ret), free(b->len), free(b->act);
}

static int step(tl_vecenv *v, bufs *b) {
  return TL_CHECK(tl_vecenv_step(v, b->act, b->nenv * b->na, &b->out, &err) == TL_OK, "step: %s", err.message);
}

/* tl_vecenv_create with the fields of tl_vecenv_options given in order. */
static tl_status vcreate(const char *task, const tl_task_option *o, int nopt, int nenv, int nthread, uint64_t seed,
                         tl_vecenv **v, tl_error *e) {
  tl_vecenv_options opt = tl_vecenv_options_default();
  opt.task = task;
  opt.task_opts = o;
  opt.ntask_opt = nopt;
  opt.nenv = nenv;
  opt.nthread = nthread;
  opt.seed = seed;
  return tl_vecenv_create(&opt, v, e);
}

static tl_vecenv *make(const char *task, const tl_task_option *opt, int nopt, int nenv, int nthread, uint64_t seed) {
  tl_task_option all[32];
  if (nopt > 0) memcpy(all, opt, (size_t)nopt * sizeof(*opt));
  all[nopt++] = (tl_task_option){"robots_dir", shared};
  tl_vecenv *v = NULL;
  TL_CHECK(vcreate(task, all, nopt, nenv, nthread, seed, &v, &err) == TL_OK, "%s: %s", task, err.message);
  return v;
}

/* ---------------- cartpole ---------------- */

/* Cart M = 1 kg, pole m = 10 kg, COM l = 0.5 m above the hinge, I = 1 kg m^2 about the COM. */
#define CP_M 1.0
#define CP_m 10.0
#define CP_l 0.5
#define CP_I 1.0

static void set_cartpole(tl_vecenv *v, int env, double x, double th) {
  double q[2] = {x, th}, u[2] = {0, 0};
  TL_CHECK(tl_system_set_state(tl_batch_system(tl_vecenv_batch(v), env, 0), q, 2, u, 2, &err) == TL_OK, "set: %s",
           err.message);
}

static void test_cartpole(void) {
  tl_task_option o[] = {{"dt", "0.001"}, {"decimation", "10"}};
  tl_vecenv *v = make("cartpole", o, 2, 2, 1, 3);
  if (!v) return;
  bufs b;
  bufs_init(&b, v);
  TL_CHECK(b.no == 4 && b.na == 1 && tl_vecenv_max_episode_steps(v) == 500, "cartpole dims %d %d %d", b.no, b.na,
           tl_vecenv_max_episode_steps(v));
  /* free fall of the pole */
  double lambda = sqrt(CP_m * 9.81 * CP_l / (CP_I + CP_m * CP_l * CP_l - CP_m * CP_m * CP_l * CP_l / (CP_M + CP_m)));
  set_cartpole(v, 0, 0.0, 0.01);
  set_cartpole(v, 1, 0.0, 0.0);
  b.act[1] = 0.5; /* env 1: a force of 50 N from rest */
  double worst = 0;
  for (int k = 1; k <= 30; k++) {
    if (!step(v, &b)) break;
    double t = 0.01 * k, th = b.obs[2], ref = 0.01 * cosh(lambda * t);
    worst = fmax(worst, fabs(th - ref) / ref);
    if (k == 1) {
      double a = 50.0 * (CP_I + CP_m * CP_l * CP_l) /
                 ((CP_M + CP_m) * (CP_I + CP_m * CP_l * CP_l) - CP_m * CP_m * CP_l * CP_l);
      /* semi-implicit Euler: x_n = a dt^2 n (n + 1) / 2 after n steps of dt from rest */
      double x = b.obs[4], ref_x = a * 1e-6 * 10 * 11 / 2;
      TL_CHECK(fabs(x - ref_x) < 0.01 * ref_x, "cart under 50 N: x(0.01 s) = %.6g m, a dt^2 n (n + 1) / 2 = %.6g m", x,
               ref_x);
      TL_CHECK(b.obs[4 + 2] < 0, "the pole should lean back (theta < 0) when the cart accelerates forwards: %g",
               b.obs[6]);
      b.act[1] = 0;
    }
  }
  TL_CHECK(worst < 5e-3, "pole fall: worst relative error against theta0 cosh(lambda t), lambda = %.4f: %.2e", lambda,
           worst);
  bufs_free(&b);
  tl_vecenv_free(v);

  /* zero force: every episode ends by the angle limit, reward 1 per step */
  v = make("cartpole", NULL, 0, 8, 2, 11);
  if (!v) return;
  bufs_init(&b, v);
  int ended = 0, ok = 1;
  for (int s = 0; s < 200 && ok; s++) {
    ok = step(v, &b);
    for (int e = 0; e < 8; e++) {
      ok &= TL_CHECK(b.reward[e] == 1.0f && !b.truncated[e], "env %d step %d: reward %g truncated %d", e, s,
                     b.reward[e], b.truncated[e]);
      if (!b.terminated[e]) continue;
      ended++;
      ok &= TL_CHECK(fabsf(b.final_obs[e * 4 + 2]) > 0.2094f || fabsf(b.final_obs[e * 4]) > 2.4f,
                     "env %d ended inside the limits: theta %g", e, b.final_obs[e * 4 + 2]);
      ok &= TL_CHECK(b.ret[e] == b.len[e] && b.len[e] > 5 && b.len[e] < 200, "env %d: return %g length %d", e, b.ret[e],
                     b.len[e]);
      ok &= TL_CHECK(fabsf(b.obs[e * 4 + 2]) <= 0.05f, "env %d: not reset (theta %g)", e, b.obs[e * 4 + 2]);
    }
  }
  TL_CHECK(ended >= 8, "only %d episodes ended in 200 steps of zero force", ended);
  bufs_free(&b);
  tl_vecenv_free(v);
}

/* ---------------- anymal ---------------- */

static void random_actions(bufs *b, tl_rng *rng, double scale) {
  for (int i = 0; i < b->nenv * b->na; i++) b->act[i] = scale * tl_rng_normal(rng);
}

static void test_anymal_reset_and_reward(void) {
  tl_task_option o[] = {{"command_vx", "0.5,0.5"}, {"command_vy", "-0.3"}, {"command_yaw", "0.2"}};
  tl_vecenv *v = make("anymal-locomotion", o, 3, 3, 1, 5);
  if (!v) return;
  bufs b;
  bufs_init(&b, v);
  TL_CHECK(b.no == 48 && b.na == 12, "anymal dims %d %d", b.no, b.na);
  TL_CHECK(tl_vecenv_reset(v, NULL, b.obs, 3 * 48, &err) == TL_OK, "reset: %s", err.message);
  tl_batch *batch = tl_vecenv_batch(v);
  for (int e = 0; e < 3; e++) {
    const float *ob = b.obs + e * 48;
    tl_system *sys = tl_batch_system(batch, e, 0);
    double lowest = INFINITY;
    for (int g = 0; g < tl_model_ngeom(tl_system_model(sys)); g++) {
      double lo[3], hi[3];
      if (tl_system_geom_aabb(sys, g, lo, hi, NULL) == TL_OK) lowest = fmin(lowest, lo[2]);
    }
    TL_CHECK(fabs(lowest - 0.02) < 1e-9, "env %d: lowest geom %.6f m above the ground, expected 0.02", e, lowest);
    TL_CHECK(fabsf(ob[6]) < 1e-6f && fabsf(ob[7]) < 1e-6f && fabsf(ob[8] + 1) < 1e-6f, "env %d: gravity (%g %g %g)",
             e, ob[6], ob[7], ob[8]);
    TL_CHECK(fabsf(ob[9] - 1.0f) < 1e-6f && fabsf(ob[10] + 0.6f) < 1e-6f && fabsf(ob[11] - 0.05f) < 1e-6f,
             "env %d: command obs (%g %g %g), expected (1, -0.6, 0.05)", e, ob[9], ob[10], ob[11]);
    for (int j = 0; j < 12; j++)
      TL_CHECK(fabsf(ob[12 + j]) <= 0.1f + 1e-6f && ob[36 + j] == 0, "env %d joint %d: offset %g, action %g", e, j,
               ob[12 + j], ob[36 + j]);
  }
  tl_rng rng;
  tl_rng_init(&rng, 1, 0);
  double dt = tl_vecenv_control_dt(v);
  for (int s = 0; s < 40; s++) {
    random_actions(&b, &rng, 0.3);
    if (!step(v, &b)) break;
    const double *terms = tl_vecenv_terms(v);
    int nt = tl_vecenv_nterm(v);
    for (int e = 0; e < 3; e++) {
      if (b.terminated[e] || b.truncated[e]) continue;
      double sum = 0;
      for (int k = 0; k < nt; k++) sum += terms[e * nt + k];
      double clipped = sum < 0 ? 0 : sum; /* only_positive_rewards (default) */
      TL_CHECK(fabs(clipped - b.reward[e]) <= 1e-6 * (1 + fabs(sum)), "env %d: reward %g, terms sum to %g", e, b.reward[e],
               sum);
      const float *ob = b.obs + e * 48;
      double ex = 0.5 - ob[0] / 2.0, ey = -0.3 - ob[1] / 2.0, ez = 0.2 - ob[5] / 0.25;
      double lin = dt * exp(-(ex * ex + ey * ey) / 0.25), ang = dt * 0.5 * exp(-ez * ez / 0.25);
      TL_CHECK(fabs(terms[e * nt + 0] - lin) < 1e-6 && fabs(terms[e * nt + 1] - ang) < 1e-6,
               "env %d: tracking terms %g %g, from the observation %g %g", e, terms[e * nt], terms[e * nt + 1], lin, ang);
      for (int j = 0; j < 12; j++)
        TL_CHECK(ob[36 + j] == (float)fmin(fmax(b.act[e * 12 + j], -5), 5), "env %d: previous action %d in obs %g vs %g",
                 e, j, ob[36 + j], b.act[e * 12 + j]);
    }
  }
  bufs_free(&b);
  tl_vecenv_free(v);
}

static const tl_task_option rand_opts[] = {{"mass_scale", "0.8,1.2"}, {"added_base_mass", "-2,3"},
                                           {"com_offset", "-0.05,0.05"}, {"friction", "0.4,1.2"},
                                           {"motor_strength", "0.9,1.1"}, {"kp_scale", "0.9,1.1"},
                                           {"kd_scale", "0.8,1.2"}, {"push_velocity", "0.5"},
                                           {"push_interval", "0.5"}};

static void test_anymal_threads(void) {
  enum { NENV = 5, NSTEP = 150 };
  float *ref = NULL;
  for (int t = 1; t <= 3; t++) {
    tl_vecenv *v = make("anymal-locomotion", rand_opts, 9, NENV, t, 77);
    if (!v) return;
    bufs b;
    bufs_init(&b, v);
    size_t per = (size_t)NENV * (48 + 48 + 3);
    float *trace = calloc(per * NSTEP, sizeof(float));
    tl_rng rng;
    tl_rng_init(&rng, 2, 0);
    int ends = 0;
    for (int s = 0; s < NSTEP; s++) {
      random_actions(&b, &rng, 1.0);
      if (!step(v, &b)) break;
      float *row = trace + per * s;
      memcpy(row, b.obs, NENV * 48 * sizeof(float));
      memcpy(row + NENV * 48, b.final_obs, NENV * 48 * sizeof(float));
      for (int e = 0; e < NENV; e++) {
        row[NENV * 96 + 3 * e] = b.reward[e];
        row[NENV * 96 + 3 * e + 1] = b.terminated[e];
        row[NENV * 96 + 3 * e + 2] = b.truncated[e];
        ends += b.terminated[e];
      }
    }
    const double *p = tl_vecenv_params(v);
    for (int e = 0; e < NENV; e++) {
      const double *pe = p + e * tl_vecenv_nparam(v);
      TL_CHECK(pe[0] >= 0.8 && pe[0] <= 1.2 && pe[1] >= -2 && pe[1] <= 3 && fabs(pe[2]) <= 0.05 && pe[5] >= 0.4 &&
                   pe[5] <= 1.2 && pe[6] >= 0.9 && pe[6] <= 1.1 && pe[8] >= 0.8 && pe[8] <= 1.2,
               "env %d: randomized values out of range", e);
    }
    if (t == 1) {
      ref = trace;
      printf("anymal, every randomization on, random actions: %d terminations in %d x %d steps\n", ends, NENV, NSTEP);
    } else {
      TL_CHECK(memcmp(ref, trace, per * NSTEP * sizeof(float)) == 0, "%d threads: outputs differ from 1 thread", t);
      free(trace);
    }
    bufs_free(&b);
    tl_vecenv_free(v);
  }
  free(ref);
}

static void test_anymal_nonfinite(void) {
  enum { NENV = 3, NSTEP = 30 };
  float trace[2][NSTEP][NENV * 48];
  for (int run = 0; run < 2; run++) {
    tl_vecenv *v = make("anymal-locomotion", NULL, 0, NENV, 2, 8);
    if (!v) return;
    bufs b;
    bufs_init(&b, v);
    tl_rng rng;
    tl_rng_init(&rng, 3, 0);
    float last[48];
    for (int s = 0; s < NSTEP; s++) {
      random_actions(&b, &rng, 0.5);
      memcpy(last, b.obs + 48, sizeof(last));
      if (run == 1 && s == 10) b.act[12 + 4] = s % 2 ? INFINITY : NAN;
      if (!step(v, &b)) break;
      memcpy(trace[run][s], b.obs, sizeof(trace[run][s]));
      if (run == 1 && s == 10) {
        TL_CHECK(b.terminated[1] && (b.flags[1] & TL_VECENV_NONFINITE_ACTION) && b.reward[1] == 0,
                 "NaN action: terminated %d flags %d reward %g", b.terminated[1], b.flags[1], b.reward[1]);
        TL_CHECK(memcmp(b.final_obs + 48, last, sizeof(last)) == 0, "final_obs is not the last observation");
        TL_CHECK(!b.flags[0] && !b.flags[2], "flags on the other envs: %d %d", b.flags[0], b.flags[2]);
      }
    }
    bufs_free(&b);
    tl_vecenv_free(v);
  }
  int same = 1;
  for (int s = 0; s < NSTEP; s++) {
    same &= memcmp(trace[0][s], trace[1][s], 48 * sizeof(float)) == 0;
    same &= memcmp(trace[0][s] + 96, trace[1][s] + 96, 48 * sizeof(float)) == 0;
  }
  TL_CHECK(same, "a NaN action in env 1 changed envs 0 or 2");
}

static void test_anymal_termination(void) {
  tl_task_option o[] = {{"episode_length_s", "0.1"}, {"mass_scale", "2"}, {"added_base_mass", "1.5"}};
  tl_vecenv *v = make("anymal-locomotion", o, 3, 2, 1, 1);
  if (!v) return;
  bufs b;
  bufs_init(&b, v);
  tl_system *sys = tl_batch_system(tl_vecenv_batch(v), 1, 0);
  double total = tl_model_total_mass(tl_system_model(sys));
  /* ANYmal C's second 'hatch' link (0.142 kg) has a singular inertia that the run-time setter refuses,
     so it keeps its mass; every other link is doubled, 1.5 kg added to the base */
  double expect = 2 * (52.13483 - 0.142) + 0.142 + 1.5;
  TL_CHECK(fabs(total - expect) < 1e-3, "mass_scale 2 + 1.5 kg: total mass %.4f kg, expected %.4f", total, expect);
  /* env 0 on its side, 0.5 m up */
  double q[19], u[18] = {0};
  tl_system *s0 = tl_batch_system(tl_vecenv_batch(v), 0, 0);
  tl_system_get_state(s0, q, 19, u, 18, NULL);
  q[2] = 0.5;
  q[3] = cos(0.75), q[4] = sin(0.75), q[5] = q[6] = 0; /* 1.5 rad about x */
  tl_system_set_state(s0, q, 19, u, 18, NULL);
  if (step(v, &b)) {
    TL_CHECK(b.terminated[0] && !b.truncated[0] && b.len[0] == 1, "tilted base: terminated %d truncated %d", b.terminated[0],
             b.truncated[0]);
    TL_CHECK(fabsf(b.final_obs[7]) > 0.9f, "tilted base: projected gravity y %g", b.final_obs[7]);
    TL_CHECK(!b.terminated[1] && !b.truncated[1], "env 1 ended after one step");
  }
  for (int s = 1; s < 5; s++) step(v, &b);
  TL_CHECK(b.truncated[1] && !b.terminated[1] && b.len[1] == 5, "episode of 0.1 s: truncated %d at length %d",
           b.truncated[1], b.len[1]);
  bufs_free(&b);
  tl_vecenv_free(v);
}

static void test_anymal_no_alloc(void) {
  tl_vecenv *v = make("anymal-locomotion", rand_opts, 9, 4, 2, 3);
  if (!v) return;
  bufs b;
  bufs_init(&b, v);
  tl_rng rng;
  tl_rng_init(&rng, 4, 0);
  uint64_t seed = 5;
  __atomic_store_n(&nalloc, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  int ok = 1;
  for (int s = 0; s < 200 && ok; s++) {
    random_actions(&b, &rng, 2.0);
    ok = tl_vecenv_step(v, b.act, 48, &b.out, &err) == TL_OK;
  }
  ok = ok && tl_vecenv_reset(v, &seed, b.obs, 4 * 48, &err) == TL_OK;
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  TL_CHECK(ok, "steps: %s", err.message);
  TL_CHECK(nalloc == 0, "%d allocations in 200 vecenv steps and a reset", nalloc);
  bufs_free(&b);
  tl_vecenv_free(v);
}

/* ---------------- urdf ---------------- */

static void test_urdf(const char *robots) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_task_option o[] = {{"urdf", path}};
  tl_vecenv *v = NULL;
  if (TL_CHECK(vcreate("urdf", o, 1, 2, 1, 0, &v, &err) == TL_OK, "urdf quadruped: %s", err.message)) {
    bufs b;
    bufs_init(&b, v);
    TL_CHECK(b.no == 48 && b.na == 12, "quadruped dims %d %d", b.no, b.na);
    int ended = 0;
    for (int s = 0; s < 100; s++) {
      step(v, &b);
      ended += b.terminated[0] + b.terminated[1];
    }
    float z = b.obs[8];
    TL_CHECK(ended == 0 && z < -0.99f, "standing with zero actions: %d terminations, gravity z %g", ended, z);
    TL_CHECK(b.obs[9] == 0 && b.obs[10] == 0 && b.obs[11] == 0, "urdf task: nonzero command");
    bufs_free(&b);
    tl_vecenv_free(v);
  }
  snprintf(path, sizeof(path), "%s/double_pendulum/double_pendulum.urdf", robots);
  o[0].value = path;
  if (TL_CHECK(vcreate("urdf", o, 1, 2, 1, 0, &v, &err) == TL_OK, "urdf pendulum: %s", err.message)) {
    TL_CHECK(tl_vecenv_obs_dim(v) == 18 && tl_vecenv_act_dim(v) == 2, "pendulum dims %d %d", tl_vecenv_obs_dim(v),
             tl_vecenv_act_dim(v));
    tl_vecenv_free(v);
  }
}

static void test_options(void) {
  tl_vecenv *v = (tl_vecenv *)&err;
  tl_task_option o[] = {{"robots_dir", shared}, {"mass_scal", "1"}};
  tl_status st = vcreate("cartpole", o, 2, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && v == NULL && strstr(err.message, "'mass_scal'") && strstr(err.message, "mass_scale"),
           "unknown option: status %d, '%s'", st, err.message);
  o[1] = (tl_task_option){"force_scale", "lots"};
  st = vcreate("cartpole", o, 2, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "force_scale=lots"), "bad value: '%s'", err.message);
  o[1] = (tl_task_option){"mass_scale", "1.2,0.8"};
  st = vcreate("cartpole", o, 2, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "LO <= HI"), "reversed range: '%s'", err.message);
  o[1] = (tl_task_option){"friction", "0.5,1"};
  st = vcreate("cartpole", o, 2, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "'friction'"), "cartpole has no friction: '%s'", err.message);
  st = vcreate("walker", NULL, 0, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "walker"), "unknown task: '%s'", err.message);
  st = vcreate("urdf", NULL, 0, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_ARGUMENT && strstr(err.message, "urdf=PATH"), "urdf without a path: '%s'", err.message);
  tl_task_option none[] = {{"robots_dir", "/nonexistent/robots"}};
  unsetenv("TALUS_SHARED_ROBOTS");
  st = vcreate("cartpole", none, 1, 1, 1, 0, &v, &err);
  TL_CHECK(st == TL_ERR_IO && strstr(err.message, "/nonexistent/robots/cartpole/cartpole.urdf"),
           "missing robot: '%s'", err.message);
  TL_CHECK(tl_task_count() == 3 && !strcmp(tl_task_name(1), "anymal-locomotion") && tl_task_name(3) == NULL,
           "task list");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_tasks ROBOTS_DIR SHARED_ROBOTS_DIR\n");
    return 2;
  }
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0]) snprintf(shared, sizeof(shared), "%s/robots", env);
  else snprintf(shared, sizeof(shared), "%s", argv[2]);
  test_urdf(argv[1]);
  test_options();
  char probe[1200];
  snprintf(probe, sizeof(probe), "%s/anymal_c/urdf/anymal.urdf", shared);
  if (access(probe, R_OK) != 0) {
    tl_test_skip("cartpole and anymal-locomotion: the shared robots are not at %s", shared);
    int rc = tl_test_finish();
    return rc ? rc : TL_TEST_SKIP_CODE;
  }
  test_cartpole();
  test_anymal_reset_and_reward();
  test_anymal_threads();
  test_anymal_nonfinite();
  test_anymal_termination();
  test_anymal_no_alloc();
  return tl_test_finish();
}
