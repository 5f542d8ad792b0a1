/* tl_sweep_run: samples on a fixed thread pool with a dynamic queue
 * (src/batch/pool.h, src/batch/queue.h). The calling thread coordinates:
 * samples are handed out one at a time in increasing order to whichever
 * worker is free, finished rows are stored and appended to the CSV at once,
 * and the CSV is rewritten in sample order at the end. The threads decide
 * only when a sample runs, never what it gives. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "batch/pool.h"
#include "batch/queue.h"
#include "sweep/sweep_internal.h"

#define SW_PROGRESS_PERIOD 0.25 /* s between progress reports */
#define SW_POLL_PERIOD 0.1      /* s between interrupt polls */

int tl_sweep_mpi_launched(void) {
  /* OpenMPI's mpirun, PMIx launchers, MPICH / Hydra and Intel MPI set these in every rank */
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS", NULL};
  for (int i = 0; vars[i]; ++i) {
    const char *v = getenv(vars[i]);
    if (v && v[0]) return 1;
  }
  return 0;
}

double sw_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void worker(sw_run *R) {
  void *item = NULL;
  while (tl_queue_pop(R->todo, &item, -1) == 1) {
    sw_record *rec = item;
    if (atomic_load(&R->stop)) rec->status = SW_INTERRUPTED;
    else sw_run_record(R->sw, rec, &R->stop);
    tl_queue_push(R->done, rec);
  }
}

static void thread_main(void *ctx, int thread) {
  sw_run *R = ctx;
  if (thread == 0) {
    R->coordinate(R);
    tl_queue_close(R->todo); /* the workers leave once it is empty */
  } else {
    worker(R);
  }
}

tl_status sw_run_init(sw_run *R, const tl_sweep *sw, const tl_sweep_run_options *opt, int nworker, tl_error *err) {
  memset(R, 0, sizeof(*R));
  R->sw = sw;
  R->opt = opt;
  R->nworker = nworker < 1 ? 1 : nworker;
  R->workers_total = R->nworker;
  /* one record queued per worker beyond the one it runs hides the hand-over latency */
  R->limit = 2 * R->nworker;
  atomic_init(&R->stop, 0);
  R->err = err;
  R->t0 = R->last_poll = sw_now();
  R->last_progress = R->t0 - 1.0;
  R->pool = tl_pool_create(R->nworker + 1);
  R->todo = tl_queue_create(R->limit);
  R->done = tl_queue_create(R->limit + 1);
  if (!R->pool || !R->todo || !R->done) {
    sw_run_free(R);
    return sw_error(err, TL_ERR_MEMORY, NULL, 0, "threads", "cannot start %d threads", R->nworker);
  }
  return TL_OK;
}

void sw_run_free(sw_run *R) {
  tl_pool_free(R->pool);
  tl_queue_free(R->todo);
  tl_queue_free(R->done);
  free(R->pending);
  R->pool = NULL;
  R->todo = R->done = NULL;
  R->pending = NULL;
}

void sw_run_execute(sw_run *R) { tl_pool_run(R->pool, thread_main, R); }

void sw_run_dispatch(sw_run *R, long sample) {
  sw_record *rec = sw_record_new(R->sw, sample);
  if (!rec) {
    if (R->status == TL_OK) R->status = sw_error(R->err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    sw_run_stop(R);
    return;
  }
  tl_queue_push(R->todo, rec);
  R->in_flight++;
}

sw_record *sw_run_collect(sw_run *R, double timeout_s) {
  void *item = NULL;
  if (R->in_flight == 0 || tl_queue_pop(R->done, &item, timeout_s) != 1) return NULL;
  R->in_flight--;
  return item;
}

void sw_run_stop(sw_run *R) {
  R->stopping = 1;
  atomic_store(&R->stop, 1);
}

void sw_run_store(sw_run *R, sw_record *rec) {
  if (rec->status == SW_INTERRUPTED) {
    free(rec);
    return;
  }
  tl_error e;
  memset(&e, 0, sizeof e);
  if (sw_results_add(R->res, rec, &e) != TL_OK && R->status == TL_OK) {
    R->status = e.status;
    if (R->err) *R->err = e;
    sw_run_stop(R);
  }
}

void sw_run_poll(sw_run *R, int final) {
  double now = sw_now();
  if (!final && now - R->last_poll >= SW_POLL_PERIOD) {
    R->last_poll = now;
    if (!R->stopping && R->opt->interrupted && R->opt->interrupted(R->opt->ctx)) sw_run_stop(R);
  }
  if (!R->opt->progress || !R->res || (!final && now - R->last_progress < SW_PROGRESS_PERIOD)) return;
  R->last_progress = now;
  tl_sweep_progress p;
  memset(&p, 0, sizeof p);
  p.done = R->res->count;
  p.total = R->res->n;
  p.resumed = R->res->resumed;
  p.failed = R->res->failed;
  p.elapsed = now - R->t0;
  p.rate = p.elapsed > 0 ? (double)R->res->ran / p.elapsed : 0.0;
  p.eta = p.rate > 0 ? (double)(p.total - p.done) / p.rate : NAN;
  p.workers = R->workers_total;
  R->opt->progress(R->opt->ctx, &p);
}

tl_status sw_run_open_results(sw_run *R, tl_error *err) {
  const tl_sweep *sw = R->sw;
  const char *csv = R->opt->csv ? R->opt->csv : sw_text(sw, "out");
  tl_status st = sw_results_open(sw, csv, R->opt->resume, &R->res, err);
  if (st != TL_OK) return st;
  R->npending = R->res->n - R->res->count;
  R->pending = malloc(((size_t)R->npending + 1) * sizeof(long));
  if (!R->pending) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  long k = 0;
  for (long i = 0; i < R->res->n; ++i)
    if (!R->res->row[i]) R->pending[k++] = i;
  R->next = 0;
  return TL_OK;
}

tl_status sw_run_close_results(sw_run *R, tl_sweep_results **out, tl_error *err) {
  tl_error e;
  memset(&e, 0, sizeof e);
  tl_status st = sw_results_finish(R->res, &e);
  if (st != TL_OK && R->status == TL_OK) {
    R->status = st;
    if (err) *err = e;
  }
  sw_run_poll(R, 1);
  if (out && R->status == TL_OK) *out = R->res;
  else tl_sweep_results_free(R->res);
  R->res = NULL;
  return R->status;
}

/* One process: hand out the pending samples, store what comes back. */
static void local_coordinate(sw_run *R) {
  for (;;) {
    while (!R->stopping && R->next < R->npending && R->in_flight < R->limit) sw_run_dispatch(R, R->pending[R->next++]);
    if (R->in_flight == 0) break;
    sw_record *rec = sw_run_collect(R, SW_POLL_PERIOD);
    if (rec) sw_run_store(R, rec);
    sw_run_poll(R, 0);
  }
}

tl_sweep_run_options tl_sweep_run_options_default(void) {
  tl_sweep_run_options o;
  memset(&o, 0, sizeof o);
  return o;
}

tl_status tl_sweep_run(tl_sweep *sw, const tl_sweep_run_options *opt_in, tl_sweep_results **out, tl_error *err) {
  if (out) *out = NULL;
  if (!sw || !sw->prepared)
    return sw_error(err, TL_ERR_INVALID, NULL, 0, "sw", "the sweep is not prepared (tl_sweep_prepare)");
  tl_sweep_run_options opt = opt_in ? *opt_in : tl_sweep_run_options_default();
  if (opt.nthread < 0) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "threads", "threads must be >= 0");
  sw_run R;
  int nworker = opt.nthread > 0 ? opt.nthread : tl_batch_cpu_count();
  tl_status st = sw_run_init(&R, sw, &opt, nworker, err);
  if (st != TL_OK) return st;
  R.coordinate = local_coordinate;
  st = sw_run_open_results(&R, err);
  if (st != TL_OK) {
    tl_sweep_results_free(R.res);
    sw_run_free(&R);
    return st;
  }
  sw_run_execute(&R);
  st = sw_run_close_results(&R, out, err);
  sw_run_free(&R);
  return st;
}
