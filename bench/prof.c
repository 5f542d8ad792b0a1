/* talus_prof: one benchmark scene stepped N times and nothing else, for
 * profilers (`perf record`, `valgrind --tool=callgrind`, whose instruction
 * counts repeat exactly where wall-clock timings on a shared machine do
 * not). The scenes are those of talus_bench:
 *
 *   talus_prof free URDF [--fixed] [N]     the contact-free step column: the
 *        seeded random state of talus_bench (bench_scene.c), implicit PD,
 *        state reset every 500 steps
 *   talus_prof contact LABEL URDF [N]      the contact step of a robot of
 *        bench_contact.c (LABEL as in talus_bench, e.g. anymal_c/anymal),
 *        after its 1000 settling steps (not counted)
 *   talus_prof scene NAME [N]              a many-contact scene of
 *        bench_scene.c (pile100, stack4x4), after its settling steps
 *   talus_prof vecenv SCENARIO NENV [N]    N control steps of
 *        VecEnv("anymal-locomotion") with NENV envs on one thread after 400
 *        settling steps, as bench/vecenv_bench.py's scenarios: "standing"
 *        (zero actions, no reset noise, no time limit) or "walking" (the task's
 *        defaults with a seeded trot-like action sequence, the C twin of
 *        walking_actions there: feet lift off, land and slip, robots fall
 *        and are reset); prints env steps/s and resets per 1000 env steps
 *
 * Prints the wall time per step, the last solve's statistics and the bytes
 * of the world's per-step workspace (tl_world_workspace_bytes). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "talus/talus.h"

#include "bench_contact.h"
#include "bench_scene.h"

#define PROF_PI 3.14159265358979323846

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* FNV-1a hash of the world's snapshot: equal hashes, the same trajectory bit
 * for bit (the snapshot holds everything that influences the next step). */
static unsigned long long state_hash(const tl_world *w) {
  size_t n = tl_world_snapshot_size(w), got = 0;
  unsigned char *buf = malloc(n ? n : 1);
  unsigned long long h = 1469598103934665603ull;
  if (buf && tl_world_snapshot_save(w, buf, n, &got, NULL) == TL_OK)
    for (size_t i = 0; i < got; i++) h = (h ^ buf[i]) * 1099511628211ull;
  free(buf);
  return h;
}

static int run(tl_world *w, long n, tl_system *reset_sys, const double *q, const double *u) {
  tl_error err;
  double t0 = now();
  long sweeps = 0, worst = 0, trace = getenv("TALUS_PROF_TRACE") ? atol(getenv("TALUS_PROF_TRACE")) : 0;
  for (long i = 0; i < n; ++i) {
    if (reset_sys && i % 500 == 0)
      tl_system_set_state(reset_sys, q, tl_system_nq(reset_sys), u, tl_system_nv(reset_sys), NULL);
    if (tl_world_step(w, &err) != TL_OK) {
      fprintf(stderr, "step %ld failed: %s\n", i, err.message);
      return 1;
    }
    tl_solver_stats st;
    tl_world_solver_stats(w, &st, NULL);
    sweeps += st.iterations;
    if (trace > 0 && i % trace == 0)
      printf("step %ld: %d contacts, %d blocks, %d sweeps, converged %d, change %.2e\n", i, st.ncontact,
             st.nblock, st.iterations, st.converged, st.last_change);
    if (st.iterations > worst) worst = st.iterations;
  }
  double t1 = now();
  tl_solver_stats st;
  tl_world_solver_stats(w, &st, NULL);
  printf("state hash %016llx\n", state_hash(w));
  printf("%ld steps, %.3f us/step; last solve: %d contacts, %d blocks, %d rows, %d sweeps "
         "(mean %.2f, max %ld), converged %d, signorini %.2e, cone %.2e, dissipation %.2e, direct %d, "
         "deferred %d (retry %d)\n",
         n, 1e6 * (t1 - t0) / (double)n, st.ncontact, st.nblock, st.nrow, st.iterations,
         (double)sweeps / (double)n, worst, st.converged, st.signorini, st.cone, st.dissipation, st.direct,
         st.deferred, st.deferred_retry);
  return 0;
}

/* The bytes of the world's per-step workspace (printed after run, outside its loop). */
static void print_workspace(const tl_world *w) {
  printf("workspace %zu bytes (the native engine's arena, tl_world_workspace_bytes)\n", tl_world_workspace_bytes(w));
}

/* Trot-like actions of env e at control step k (12 values, LF RF LH RH x
 * HAA HFE KFE, action units: the task adds 0.5 rad times these to the
 * stance): diagonal pairs in antiphase at 25 control steps per cycle, the
 * env's own phase and amplitude, N(0, 0.15) noise from the env's stream. */
static void walking_action(tl_rng *r, double phase0, double amp, long k, double *a) {
  static const double pair[4] = {0.0, PROF_PI, PROF_PI, 0.0};
  static const double hfe_sign[4] = {1, 1, -1, -1}, kfe_sign[4] = {-1, -1, 1, 1}; /* signs of the stance */
  for (int l = 0; l < 4; l++) {
    double phi = 2 * PROF_PI * (double)(k % 25) / 25.0 + phase0 + pair[l];
    double swing = sin(phi) > 0 ? sin(phi) : 0.0;
    a[3 * l] = 0.15 * cos(phi) * amp + 0.15 * tl_rng_normal(r);
    a[3 * l + 1] = 0.5 * sin(phi) * amp * hfe_sign[l] + 0.15 * tl_rng_normal(r);
    a[3 * l + 2] = swing * amp * kfe_sign[l] + 0.15 * tl_rng_normal(r);
  }
}

static int run_vecenv(const char *scenario, int nenv, long n) {
  int walking = !strcmp(scenario, "walking");
  if (!walking && strcmp(scenario, "standing")) {
    fprintf(stderr, "vecenv scenario must be standing or walking\n");
    return 2;
  }
  static const tl_task_option standing[] = {{"joint_noise", "0"}, {"base_vel_noise", "0"}, {"episode_length_s", "1e6"}};
  tl_vecenv_options o = tl_vecenv_options_default();
  o.task = "anymal-locomotion", o.nenv = nenv, o.nthread = 1;
  if (!walking) o.task_opts = standing, o.ntask_opt = 3;
  tl_vecenv *v;
  tl_error err;
  if (tl_vecenv_create(&o, &v, &err)) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  int od = tl_vecenv_obs_dim(v), ad = tl_vecenv_act_dim(v);
  size_t nb = (size_t)nenv;
  float *f = calloc(nb * (size_t)(3 * od + 2), sizeof(float));
  unsigned char *flags = calloc(nb * 3, 1);
  double *ret = calloc(nb * (size_t)(ad + 3), sizeof(double));
  int *len = calloc(nb, sizeof(int));
  if (!f || !flags || !ret || !len) return 1;
  double *act = ret + nb, *phase = act + nb * (size_t)ad, *amp = phase + nb;
  tl_vecenv_result res = {f, f + nb * (size_t)od, flags, flags + nb, f + nb * (size_t)(od + 1), flags + 2 * nb, ret, len};
  tl_rng r;
  tl_rng_init(&r, 25, 0);
  for (int e = 0; e < nenv; e++) phase[e] = tl_rng_range(&r, 0, 2 * PROF_PI), amp[e] = tl_rng_range(&r, 0.6, 1.4);
  long resets = 0;
  double t0 = 0;
  for (long k = -400; k < n; k++) {
    if (k == 0) resets = 0, t0 = now();
    for (int e = 0; e < nenv; e++) {
      double *a = act + (size_t)e * (size_t)ad;
      if (walking) walking_action(&r, phase[e], amp[e], k + 400, a);
      else memset(a, 0, (size_t)ad * sizeof(double));
    }
    if (tl_vecenv_step(v, act, nenv * ad, &res, &err)) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    for (int e = 0; e < nenv; e++) resets += res.terminated[e] || res.truncated[e];
  }
  double dt = now() - t0;
  printf("vecenv %s: %d envs, %ld control steps, %.0f env steps/s (%.2f us per env step), %.2f resets per 1000 env "
         "steps\n", scenario, nenv, n, (double)(n * nenv) / dt, 1e6 * dt / (double)(n * nenv),
         1000.0 * (double)resets / (double)(n * nenv));
  tl_vecenv_free(v);
  free(f), free(flags), free(ret), free(len);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: talus_prof free URDF [--fixed] [N] | contact LABEL URDF [N] | scene NAME [N] | "
            "vecenv standing|walking NENV [N]\n");
    return 2;
  }
  tl_error err;
  if (!strcmp(argv[1], "free")) {
    int fixed = argc > 3 && !strcmp(argv[3], "--fixed");
    long n = argc > 3 + fixed ? atol(argv[3 + fixed]) : 20000;
    bench_free_world fw;
    if (bench_free_world_create(argv[2], fixed, &fw, &err) != 0) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    int rc = run(fw.world, n, fw.sys, fw.q, fw.u);
    bench_free_world_free(&fw);
    return rc;
  }
  if (!strcmp(argv[1], "contact") && argc >= 4) {
    const contact_spec *spec = contact_spec_of(argv[2]);
    if (!spec) {
      fprintf(stderr, "no contact spec for %s\n", argv[2]);
      return 1;
    }
    long n = argc > 4 ? atol(argv[4]) : 20000;
    tl_world *w;
    if (bench_contact_world(argv[3], spec, &w, &err) != 0) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    int rc = run(w, n, NULL, NULL, NULL);
    print_workspace(w);
    tl_world_free(w);
    return rc;
  }
  if (!strcmp(argv[1], "scene")) {
    long n = argc > 3 ? atol(argv[3]) : 2000;
    const bench_scene_spec *sc = bench_scene_of(argv[2]);
    if (!sc) {
      fprintf(stderr, "no scene %s\n", argv[2]);
      return 1;
    }
    tl_world *w;
    if (bench_scene_world(sc, &w, &err) != 0) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    int rc = run(w, n, NULL, NULL, NULL);
    print_workspace(w);
    tl_world_free(w);
    return rc;
  }
  if (!strcmp(argv[1], "vecenv") && argc >= 4) return run_vecenv(argv[2], atoi(argv[3]), argc > 4 ? atol(argv[4]) : 1000);
  fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
