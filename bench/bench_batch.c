/* talus_bench --batch: N independent worlds stepped by T threads through the
 * public batched API (talus/batch.h), the way vectorized environments step
 * them (issue 14, "batched worlds over cores").
 *
 * Scenes: ANYmal C (SHARED_ROBOTS_DIR/anymal_c/urdf/anymal.urdf) on a ground
 * plane, dropped onto it at its default configuration, with the stand
 * controller ("standing") or the trot controller at 0.5 m/s ("trotting"),
 * both from controllers/controller.h; dt 1 ms. Each environment runs
 * integrate1, its controller's update and integrate2 per step inside
 * tl_batch_parallel_for (thread t always steps the same contiguous block of
 * environments).
 *
 * For each scene and N (1, 2, 4, ..., 256) two batches are built, one with
 * T = 1 thread and one with T = 2, warmed up by the same 2000 steps (2 s: the
 * robot has settled from its drop, the trot is periodic), then timed by turns
 * (every world steps --steps times with T = 1, then with T = 2, repeated
 * --reps times: all N see the same simulated window; the fastest repeat is
 * kept, so a burst of load from other programs hits both alike). Reported:
 * environment steps per second, per thread, the scaling T = 2 / T = 1, the CPU
 * time per environment step (process CPU clock: the cost of a step whatever
 * else runs on the machine), the heap bytes per world (live bytes the batch,
 * its worlds and controllers hold, bench_mem.c, divided by N) and whether the
 * two batches end in bit-identical states (FNV-1a hash of every q and u). The
 * live heap is also compared before and after the timed steps: stepping must
 * not allocate. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../src/base/json_number.h" /* the bit-exact number (libtalus) */
#include "bench.h"
#include "bench_mem.h"
#include "controller.h"
#include "talus/batch.h"
#include "talus/metrics.h"
#include "talus/model.h"
#include "talus/system.h"
#include "talus/urdf.h"
#include "talus/world.h"

#define BB_MAX_N 9       /* N = 1, 2, 4, ..., 256 */
#define BB_WARMUP 2000   /* steps before timing (2 s: the drop has settled, the gait is periodic) */
#define BB_DROP 0.01     /* m above the ground at the start, as talus simulate */

typedef struct bb_scene {
  const char *name;
  const char *controller; /* controllers/controller.h text form */
} bb_scene;

static const bb_scene bb_scenes[] = {{"standing", "stand"}, {"trotting", "trot:speed=0.5"}};
#define BB_NSCENE ((int)(sizeof bb_scenes / sizeof bb_scenes[0]))

typedef struct bb_env {
  tl_batch *batch;
  tl_controller *ctrl; /* one per environment */
  tl_status *status;   /* per environment, of the last run */
  int nstep;           /* steps of the current run */
  size_t live_batch;   /* live heap bytes once the batch was built, before the controllers */
} bb_env;

typedef struct bb_row {
  const char *scene;
  int n, nstep, nthread2;   /* nthread2: threads the T = 2 batch really has (min(2, N)) */
  double rate[2];           /* environment steps per second, T = 1 and 2 */
  double cpu_us[2];         /* process CPU µs per environment step */
  double bytes_per_world;   /* the batch's share: world, system, solver buffers, state mirror */
  double ctrl_bytes;        /* the controller's, per world */
  double rss_per_world;     /* resident memory per world (/proc/self/statm), after the warm-up */
  long long step_alloc;     /* live heap change over the timed steps, bytes */
  int identical;            /* T = 1 and T = 2 ended in the same state */
  char error[1100];
} bb_row;

static double bb_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One environment's steps: integrate1, controller, integrate2. Stops at the
 * first error (the environment's status keeps it). */
static void bb_job(void *ctx, int env, int thread) {
  (void)thread;
  bb_env *e = ctx;
  tl_world *w = tl_batch_world(e->batch, env);
  tl_status st = TL_OK;
  for (int k = 0; k < e->nstep && st == TL_OK; ++k) {
    st = tl_world_integrate1(w, NULL);
    if (st == TL_OK) st = tl_controller_update(&e->ctrl[env], tl_world_time(w), NULL);
    if (st == TL_OK) st = tl_world_integrate2(w, NULL);
  }
  e->status[env] = st;
}

static int bb_run(bb_env *e, int nstep, char *why, size_t len) {
  e->nstep = nstep;
  tl_batch_parallel_for(e->batch, bb_job, e);
  int n = tl_batch_nenv(e->batch);
  for (int i = 0; i < n; ++i)
    if (e->status[i] != TL_OK) {
      snprintf(why, len, "env %d stopped with status %d", i, (int)e->status[i]);
      return -1;
    }
  return 0;
}

static void bb_free(bb_env *e) {
  if (e->ctrl)
    for (int i = 0; i < tl_batch_nenv(e->batch); ++i) tl_controller_free(&e->ctrl[i]);
  free(e->ctrl);
  free(e->status);
  tl_batch_free(e->batch);
  memset(e, 0, sizeof(*e));
}

/* A batch of n worlds of `model` on `nthread` threads, every robot dropped
 * onto the ground at its default configuration, with the scene's controller. */
static int bb_build(bb_env *e, const tl_model *model, const bb_scene *sc, int n, int nthread, char *why,
                    size_t len) {
  memset(e, 0, sizeof(*e));
  tl_error err = {0};
  tl_batch_options o = tl_batch_options_default();
  o.nthread = nthread;
  o.seed = 1;
  tl_controller_spec spec = tl_controller_spec_default();
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  tl_status st = q && u ? tl_batch_create_model(model, n, &o, &e->batch, &err) : TL_ERR_MEMORY;
  e->live_batch = bench_mem_live();
  if (st == TL_OK) st = tl_controller_spec_parse(sc->controller, &spec, &err);
  if (st == TL_OK) {
    e->ctrl = calloc((size_t)n, sizeof(tl_controller));
    e->status = calloc((size_t)n, sizeof(tl_status));
    if (!e->ctrl || !e->status) st = TL_ERR_MEMORY;
  }
  if (st == TL_OK) st = tl_model_default_q(model, q, nq, &err);
  for (int i = 0; i < n && st == TL_OK; ++i) {
    tl_system *sys = tl_batch_system(e->batch, i, 0);
    st = tl_system_set_state(sys, q, nq, u, nv, &err);
    double minz;
    if (st == TL_OK && i == 0 && tl_model_base(model) == TL_BASE_FLOATING && tl_measure_lowest_z(sys, &minz) == 0 &&
        isfinite(minz)) {
      q[2] += BB_DROP - minz;
      st = tl_system_set_state(sys, q, nq, u, nv, &err);
    }
    if (st == TL_OK) st = tl_controller_init(&e->ctrl[i], &spec, sys, q, nq, &err);
  }
  if (st == TL_OK) tl_batch_sync(e->batch);
  free(q);
  free(u);
  if (st != TL_OK) {
    snprintf(why, len, "%s", err.message[0] ? err.message : "out of memory");
    bb_free(e);
    return -1;
  }
  return 0;
}

/* Resident set size of the process, bytes (0 if unknown). */
static double bb_rss(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  fclose(f);
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static uint64_t bb_hash(const tl_batch *b) {
  uint64_t h = 1469598103934665603ull;
  const double *arr[2] = {tl_batch_q(b), tl_batch_u(b)};
  size_t cnt[2] = {(size_t)tl_batch_nenv(b) * (size_t)tl_batch_nq(b), (size_t)tl_batch_nenv(b) * (size_t)tl_batch_nv(b)};
  for (int k = 0; k < 2; ++k) {
    const unsigned char *p = (const unsigned char *)arr[k];
    for (size_t i = 0; i < cnt[k] * sizeof(double); ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  return h;
}

/* Time one row: scene sc, n worlds, `reps` turns of nstep steps for T = 1 and T = 2. */
static void bb_row_run(const tl_model *model, const bb_scene *sc, int n, int target, int reps, bb_row *r) {
  memset(r, 0, sizeof(*r));
  r->scene = sc->name;
  r->n = n;
  r->nstep = target;
  bb_env env[2];
  size_t live0 = bench_mem_live();
  malloc_trim(0); /* the earlier rows' freed memory back to the system, so it is not reused unseen */
  double rss0 = bb_rss();
  if (bb_build(&env[0], model, sc, n, 1, r->error, sizeof r->error) != 0) return;
  r->bytes_per_world = (double)(env[0].live_batch - live0) / n;
  r->ctrl_bytes = (double)(bench_mem_live() - env[0].live_batch) / n;
  if (bb_build(&env[1], model, sc, n, 2, r->error, sizeof r->error) != 0) {
    bb_free(&env[0]);
    return;
  }
  r->nthread2 = tl_batch_nthread(env[1].batch);
  double best[2] = {INFINITY, INFINITY}, cpu[2] = {INFINITY, INFINITY};
  int ok = 1;
  for (int t = 0; t < 2 && ok; ++t) ok = bb_run(&env[t], BB_WARMUP, r->error, sizeof r->error) == 0;
  size_t live1 = bench_mem_live();
  r->rss_per_world = (bb_rss() - rss0) / (2.0 * n); /* two batches */
  for (int rep = 0; rep < reps && ok; ++rep)
    for (int t = 0; t < 2 && ok; ++t) {
      double c0 = bb_clock(CLOCK_PROCESS_CPUTIME_ID), w0 = bb_clock(CLOCK_MONOTONIC);
      ok = bb_run(&env[t], r->nstep, r->error, sizeof r->error) == 0;
      double wall = bb_clock(CLOCK_MONOTONIC) - w0, c = bb_clock(CLOCK_PROCESS_CPUTIME_ID) - c0;
      if (wall < best[t]) best[t] = wall;
      if (c < cpu[t]) cpu[t] = c;
    }
  r->step_alloc = (long long)bench_mem_live() - (long long)live1;
  if (ok) {
    double steps = (double)n * r->nstep;
    for (int t = 0; t < 2; ++t) r->rate[t] = steps / best[t], r->cpu_us[t] = 1e6 * cpu[t] / steps;
    r->identical = bb_hash(env[0].batch) == bb_hash(env[1].batch);
  }
  bb_free(&env[0]);
  bb_free(&env[1]);
}

static void bb_print_table(const char *robot, const bb_row *rows, int nrow, int reps, int target) {
  double load[3] = {NAN, NAN, NAN};
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = NAN;
    fclose(f);
  }
  printf("batched worlds: %s, dt 1 ms, tl_batch + tl_batch_parallel_for, %d steps per world per run (after %d),\n"
         "best of %d runs by turns; %d CPUs, load average %.2f %.2f %.2f before the run\n",
         robot, target, BB_WARMUP, reps, tl_batch_cpu_count(), load[0], load[1], load[2]);
  printf("%-9s %4s %6s %13s %13s %12s %8s %11s %11s %12s %11s %10s %9s %9s\n", "scene", "N", "steps", "T=1 steps/s",
         "T=2 steps/s", "T=2 /thread", "scaling", "T=1 CPU us", "T=2 CPU us", "world bytes", "ctrl bytes", "RSS/world", "step-mem",
         "same T1/T2");
  for (int i = 0; i < nrow; ++i) {
    const bb_row *r = &rows[i];
    if (r->error[0]) {
      printf("%-9s %4d  failed: %s\n", r->scene, r->n, r->error);
      continue;
    }
    printf("%-9s %4d %6d %13.0f %13.0f %12.0f %8.2f %11.2f %11.2f %12.0f %11.0f %10.0f %9lld %9s\n", r->scene, r->n, r->nstep,
           r->rate[0], r->rate[1], r->rate[1] / r->nthread2, r->rate[1] / r->rate[0], r->cpu_us[0], r->cpu_us[1],
           r->bytes_per_world, r->ctrl_bytes, r->rss_per_world, r->step_alloc, r->identical ? "yes" : "NO");
  }
  printf("scaling = T=2 steps/s / T=1 steps/s (target >= 1.8 at N >= 2; N = 1 has one thread);"
         " CPU us = process CPU time per environment step;\n"
         "world bytes = live heap bytes per world of the batch (world, system, solver and collision buffers, its\n"
         "share of the state mirror); ctrl bytes = the controller's per world (trot: it keeps a kinematic copy of\n"
         "the robot in a world of its own); RSS/world = resident memory the two batches added, per world (pages\n"
         "never touched, e.g. solver room for contacts that never occur, are not resident); step-mem = change of live heap bytes over"
         " the timed steps (0: stepping allocates nothing)\n");
}

/* Add item to o under key; on failure item is freed and *ok cleared. */
static void bb_put(cJSON *o, const char *key, cJSON *item, int *ok) {
  if (!item || !o || !cJSON_AddItemToObject(o, key, item)) {
    cJSON_Delete(item);
    *ok = 0;
  }
}

/* An array of two numbers (tl_json_number each: bit-exact, non-finite -> null). */
static cJSON *bb_pair(double a, double b) {
  cJSON *arr = cJSON_CreateArray();
  const double v[2] = {a, b};
  for (int k = 0; k < 2 && arr; ++k) {
    cJSON *x = tl_json_number(v[k]);
    if (!x || !cJSON_AddItemToArray(arr, x)) {
      cJSON_Delete(x);
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  return arr;
}

/* The JSON report (cJSON; numbers by tl_json_number, src/base/json_number.h:
 * they read back exactly, a NaN or Inf scaling is null; byte counts rounded
 * to whole bytes). 0, or 1 after a message on stderr. */
static int bb_print_json(const char *robot, const bb_row *rows, int nrow, int reps, int target) {
  int ok = 1;
  cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
  bb_put(root, "benchmark", cJSON_CreateString("batched_worlds"), &ok);
  bb_put(root, "robot", cJSON_CreateString(robot), &ok);
  bb_put(root, "dt", tl_json_number(0.001), &ok);
  bb_put(root, "reps", tl_json_number(reps), &ok);
  bb_put(root, "steps_per_world", tl_json_number(target), &ok);
  bb_put(root, "cpus", tl_json_number(tl_batch_cpu_count()), &ok);
  bb_put(root, "rows", arr, &ok);
  for (int i = 0; i < nrow && ok; ++i) {
    const bb_row *r = &rows[i];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
      cJSON_Delete(o);
      ok = 0;
      break;
    }
    bb_put(o, "scene", cJSON_CreateString(r->scene), &ok);
    bb_put(o, "n", tl_json_number(r->n), &ok);
    bb_put(o, "steps", tl_json_number(r->nstep), &ok);
    if (r->error[0]) {
      bb_put(o, "error", cJSON_CreateString(r->error), &ok);
      continue;
    }
    bb_put(o, "steps_per_s", bb_pair(r->rate[0], r->rate[1]), &ok);
    bb_put(o, "threads", bb_pair(1, r->nthread2), &ok);
    bb_put(o, "scaling", tl_json_number(r->rate[1] / r->rate[0]), &ok);
    bb_put(o, "cpu_us_per_step", bb_pair(r->cpu_us[0], r->cpu_us[1]), &ok);
    bb_put(o, "bytes_per_world", tl_json_number(nearbyint(r->bytes_per_world)), &ok);
    bb_put(o, "controller_bytes_per_world", tl_json_number(nearbyint(r->ctrl_bytes)), &ok);
    bb_put(o, "rss_per_world", tl_json_number(nearbyint(r->rss_per_world)), &ok);
    bb_put(o, "step_alloc_bytes", tl_json_number((double)r->step_alloc), &ok);
    bb_put(o, "identical", cJSON_CreateBool(r->identical), &ok);
  }
  char *text = ok ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!text) {
    fprintf(stderr, "talus_bench --batch: out of memory while writing the JSON report\n");
    return 1;
  }
  ok = fputs(text, stdout) >= 0 && fputc('\n', stdout) != EOF;
  cJSON_free(text);
  if (fflush(stdout) != 0 || !ok) {
    fprintf(stderr, "talus_bench --batch: could not write the JSON report to stdout\n");
    return 1;
  }
  return 0;
}

static const char *bb_usage =
    "Usage: talus_bench --batch [SHARED_ROBOTS_DIR] [--robot URDF] [--max-n N] [--steps S] [--reps R] [--json]\n"
    "N independent worlds (ANYmal C standing and trotting; N = 1, 2, 4, ... up to --max-n, default 256)\n"
    "stepped by T = 1 and T = 2 threads through tl_batch: steps per second, per thread, the scaling,\n"
    "CPU time per step, heap bytes per world, and whether both thread counts give the same states.\n"
    "  --robot URDF  another floating-base robot instead of ANYmal C\n"
    "  --steps S     steps of every world per timed run (default 500, a trot period and more)\n"
    "  --reps R      timed runs per thread count, best kept (default 3)\n"
    "  --json        print JSON instead of the table\n";

int bench_batch_main(int argc, char **argv, const char *shared_dir) {
  const char *dir = shared_dir, *robot = NULL;
  int max_n = 256, target = 500, reps = 3, json = 0;
  for (int i = 2; i < argc; ++i) { /* argv[1] is --batch */
    const char *a = argv[i];
    long lo = 1, hi = 1, v = 0;
    if (strcmp(a, "--json") == 0) {
      json = 1;
      continue;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(bb_usage, stdout);
      return 0;
    } else if (strcmp(a, "--robot") == 0 && i + 1 < argc) {
      robot = argv[++i];
      continue;
    } else if (a[0] != '-') {
      dir = a;
      continue;
    }
    int *out = NULL;
    if (strcmp(a, "--max-n") == 0) out = &max_n, lo = 1, hi = 4096;
    else if (strcmp(a, "--steps") == 0) out = &target, lo = 10, hi = 1000000;
    else if (strcmp(a, "--reps") == 0) out = &reps, lo = 1, hi = 100;
    char *end = NULL;
    if (out && i + 1 < argc) {
      errno = 0;
      v = strtol(argv[++i], &end, 10);
    }
    if (!out || !end || *end || errno || v < lo || v > hi) {
      fprintf(stderr, "talus_bench --batch: %s '%s'%s\n%s", out ? "bad value for" : "unknown option", a,
              out ? " (an integer in range)" : "", bb_usage);
      return 2;
    }
    *out = (int)v;
  }
  char path[4096];
  if (robot) {
    snprintf(path, sizeof path, "%s", robot);
  } else {
    snprintf(path, sizeof path, "%s/anymal_c/urdf/anymal.urdf", dir);
    struct stat sb;
    if (stat(path, &sb) != 0) {
      fprintf(stderr,
              "talus_bench --batch: ANYmal C is not at %s (the shared robots are absent):"
              " timing robots/talus_quadruped instead\n",
              path);
      snprintf(path, sizeof path, "%s", TALUS_ROBOTS_DIR "/talus_quadruped/talus_quadruped.urdf");
    }
  }
  tl_error err = {0};
  tl_model *model = NULL;
  if (tl_model_load_urdf(path, NULL, &model, &err) != TL_OK) {
    fprintf(stderr, "talus_bench --batch: %s\n", err.message);
    return 1;
  }
  if (tl_model_base(model) != TL_BASE_FLOATING) {
    fprintf(stderr, "talus_bench --batch: %s has a fixed base: the scenes need a floating-base legged robot\n", path);
    tl_model_free(model);
    return 1;
  }
  static bb_row rows[BB_NSCENE * BB_MAX_N + BB_NSCENE];
  int nrow = 0, failed = 0;
  for (int s = 0; s < BB_NSCENE; ++s)
    for (int n = 1; n <= max_n && nrow < (int)(sizeof rows / sizeof rows[0]); n *= 2) {
      if (isatty(2)) fprintf(stderr, "\r%-9s N = %-4d ", bb_scenes[s].name, n);
      bb_row_run(model, &bb_scenes[s], n, target, reps, &rows[nrow]);
      failed |= rows[nrow].error[0] != 0 || !rows[nrow].identical || rows[nrow].step_alloc != 0;
      ++nrow;
    }
  if (isatty(2)) fprintf(stderr, "\r%30s\r", "");
  int written = 0;
  if (json)
    written = bb_print_json(path, rows, nrow, reps, target);
  else
    bb_print_table(path, rows, nrow, reps, target);
  tl_model_free(model);
  return failed || written ? 1 : 0;
}
