/* talus_bench: timing of calls by batches (see bench_timing.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_timing.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double run_batch(const timed *t, long n) {
  double t0 = now_s();
  for (long i = 0; i < n; ++i) t->fn(t->ctx);
  return now_s() - t0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Calls per batch so that a batch of t->fn takes about batch_s; 0 if a call
 * failed. *calls counts the calls made. */
static long calibrate(const timed *t, double batch_s, char *why, size_t len, long *calls) {
  t->clear(t->ctx);
  t->reset(t->ctx);
  t->fn(t->ctx); /* warm up, and find out whether the call works at all */
  ++*calls;
  if (t->failed(t->ctx, why, len)) return 0;
  long n = 1;
  t->reset(t->ctx);
  double s = run_batch(t, n);
  *calls += n;
  while (s < 0.25 * batch_s && n < (1L << 26)) {
    n *= 2;
    t->reset(t->ctx);
    s = run_batch(t, n);
    *calls += n;
  }
  if (t->failed(t->ctx, why, len)) return 0;
  if (s > 0) n = (long)ceil((double)n * batch_s / s);
  return n < 1 ? 1 : n;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void time_queries(const timed *t, int nt, int batches, double batch_s, double *us,
                  char (*failed)[TIMED_WHY], long *calls) {
  long n[MAX_TIMED], made[MAX_TIMED];
  static double per[MAX_TIMED][256];
  if (batches > 256) batches = 256;
  if (nt > MAX_TIMED) nt = MAX_TIMED;
  for (int k = 0; k < nt; ++k) {
    us[k] = NAN;
    n[k] = made[k] = 0;
    if (!t[k].fn) continue;
    n[k] = calibrate(&t[k], batch_s, failed[k], TIMED_WHY, &made[k]);
  }
  for (int b = 0; b < batches; ++b)
    for (int k = 0; k < nt; ++k) {
      if (n[k] == 0) continue;
      t[k].reset(t[k].ctx);
      t[k].clear(t[k].ctx);
      per[k][b] = run_batch(&t[k], n[k]) / (double)n[k];
      made[k] += n[k];
      if (t[k].failed(t[k].ctx, failed[k], TIMED_WHY)) n[k] = 0; /* e.g. a step diverged */
    }
  for (int k = 0; k < nt; ++k) {
    if (n[k] > 0) us[k] = 1e6 * median(per[k], batches);
    if (calls) calls[k] = made[k];
  }
}

void timed_no_reset(void *ctx) { (void)ctx; }
