/* talus_bench: timing of calls by batches (bench_timing.c), shared by the
 * query columns (bench.c) and the contact step (bench_contact.c).
 *
 * A query is timed in batches of calls, each batch sized to take about
 * batch_s seconds (clock_gettime(CLOCK_MONOTONIC)); its figure is the
 * median over batches of the batch mean. The batches of several queries
 * (of both engines) are interleaved: batch b of every query, then b + 1,
 * so that a load change on the machine hits every query alike. */
#ifndef TALUS_BENCH_TIMING_H
#define TALUS_BENCH_TIMING_H

#include <stddef.h>

/* One timed query of one engine: the call, how to put the engine back at
 * the benchmark state, and how to learn whether a call failed. */
typedef struct timed {
  void *ctx;
  void (*fn)(void *ctx);    /* NULL: not timed */
  void (*reset)(void *ctx); /* back to the state, caches warm */
  void (*clear)(void *ctx); /* forget failures */
  int (*failed)(void *ctx, char *why, size_t len);
} timed;

#define MAX_TIMED 24
#define TIMED_WHY 300

/* Time the queries t[k] (fn NULL: skipped; at most MAX_TIMED) into us[k]:
 * microseconds per call, the median over `batches` (at most 256) batches of
 * the batch mean; NaN, and the reason in failed[k], when a call failed.
 * calls[k] (may be NULL) receives the number of calls made in all, the
 * calibration's included. */
void time_queries(const timed *t, int nt, int batches, double batch_s, double *us,
                  char (*failed)[TIMED_WHY], long *calls);

/* A reset that does nothing (a query that goes on from where it stopped). */
void timed_no_reset(void *ctx);

#endif
