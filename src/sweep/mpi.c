/* Distributed sweeps over MPI (OpenMPI or any MPI-3 library): rank 0 hands
 * out sample indices on request and gathers the rows, every rank runs
 * samples on its own threads (run.c). MPI only decides which rank runs which
 * sample: a sample's row depends on (sweep, index) alone, and rank 0 writes
 * the CSV exactly as a one-process run does.
 *
 * Protocol (MPI_COMM_WORLD, rank r > 0 with rank 0):
 *   r -> 0  REQUEST  int: how many samples r can take now
 *   0 -> r  WORK     long[k]: sample indices; k = 0: nothing left
 *   r -> 0  RESULT   a finished row (MPI_Pack: sample, status, outcomes,
 *                    parameter values, message)
 *   0 -> r  STOP     the run was interrupted on rank 0: abandon running samples
 *   r -> 0  DONE     r has sent its last row
 * A rank asks again as soon as its threads run low (dynamic load balancing:
 * a fast rank simply asks more often). Only the main thread of each rank
 * calls MPI (MPI_THREAD_FUNNELED); idle coordinators wait on their result
 * queue for a couple of milliseconds between polls instead of spinning. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "sweep/sweep_internal.h"

enum { TAG_REQUEST = 1, TAG_WORK = 2, TAG_RESULT = 3, TAG_STOP = 4, TAG_DONE = 5 };
#define SW_MPI_STOP_GRACE 3.0 /* s rank 0 waits for the other ranks' last rows after a stop */
#define SW_MPI_IDLE_WAIT 0.002 /* s: an idle coordinator waits this long on its queue between polls */

static int mpi_rank, mpi_size, mpi_inited;

tl_status tl_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, tl_error *err) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return sw_error(err, TL_ERR_UNSUPPORTED, NULL, 0, "mpi", "MPI_Init_thread failed");
  mpi_inited = 1;
  if (provided < MPI_THREAD_FUNNELED)
    return sw_error(err, TL_ERR_UNSUPPORTED, NULL, 0, "mpi", "the MPI library gives no MPI_THREAD_FUNNELED support");
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  if (rank) *rank = mpi_rank;
  if (size) *size = mpi_size;
  return TL_OK;
}

int tl_sweep_mpi_agree(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

void tl_sweep_mpi_finalize(void) {
  int done = 0;
  if (mpi_inited && MPI_Finalized(&done) == MPI_SUCCESS && !done) MPI_Finalize();
}

/* ------------------------------------------------------------ rows on the wire */

static int packed_size(const tl_sweep *sw) {
  int a = 0, b = 0, c = 0;
  MPI_Pack_size(1, MPI_LONG, MPI_COMM_WORLD, &a);
  MPI_Pack_size(2 + TL_SWEEP_NOUTCOME + sw->nparam_column, MPI_DOUBLE, MPI_COMM_WORLD, &b);
  MPI_Pack_size(SW_MESSAGE_LEN, MPI_CHAR, MPI_COMM_WORLD, &c);
  return a + b + c;
}

static void send_record(const tl_sweep *sw, const sw_record *rec, char *buf, int cap) {
  int pos = 0;
  double head[2] = {(double)rec->status, 0.0};
  MPI_Pack(&rec->sample, 1, MPI_LONG, buf, cap, &pos, MPI_COMM_WORLD);
  MPI_Pack(head, 2, MPI_DOUBLE, buf, cap, &pos, MPI_COMM_WORLD);
  MPI_Pack(rec->outcome, TL_SWEEP_NOUTCOME, MPI_DOUBLE, buf, cap, &pos, MPI_COMM_WORLD);
  MPI_Pack(rec->params, sw->nparam_column, MPI_DOUBLE, buf, cap, &pos, MPI_COMM_WORLD);
  MPI_Pack(rec->message, SW_MESSAGE_LEN, MPI_CHAR, buf, cap, &pos, MPI_COMM_WORLD);
  MPI_Send(buf, pos, MPI_PACKED, 0, TAG_RESULT, MPI_COMM_WORLD);
}

static sw_record *recv_record(const tl_sweep *sw, int source, char *buf, int cap) {
  MPI_Status status;
  MPI_Recv(buf, cap, MPI_PACKED, source, TAG_RESULT, MPI_COMM_WORLD, &status);
  sw_record *rec = sw_record_new(sw, 0);
  if (!rec) return NULL;
  int pos = 0;
  double head[2];
  MPI_Unpack(buf, cap, &pos, &rec->sample, 1, MPI_LONG, MPI_COMM_WORLD);
  MPI_Unpack(buf, cap, &pos, head, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Unpack(buf, cap, &pos, rec->outcome, TL_SWEEP_NOUTCOME, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Unpack(buf, cap, &pos, rec->params, sw->nparam_column, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Unpack(buf, cap, &pos, rec->message, SW_MESSAGE_LEN, MPI_CHAR, MPI_COMM_WORLD);
  rec->message[SW_MESSAGE_LEN - 1] = '\0';
  rec->status = (int)head[0];
  return rec;
}

/* ------------------------------------------------------------ rank 0 */

typedef struct mpi_state {
  char *buf;       /* packed rows */
  int cap;
  long *work;      /* indices sent in one WORK message */
  int active;      /* ranks that have not said DONE */
  int stop_sent;
  double stop_time; /* when the stop was sent */
} mpi_state;

/* Answer one message from another rank. Returns 1 if there was one. */
static int serve_one(sw_run *R, mpi_state *M) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return 0;
  int src = status.MPI_SOURCE;
  if (status.MPI_TAG == TAG_REQUEST) {
    int want = 0;
    MPI_Recv(&want, 1, MPI_INT, src, TAG_REQUEST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int k = 0;
    while (!R->stopping && k < want && k < R->limit && R->next < R->npending) M->work[k++] = R->pending[R->next++];
    MPI_Send(M->work, k, MPI_LONG, src, TAG_WORK, MPI_COMM_WORLD);
  } else if (status.MPI_TAG == TAG_RESULT) {
    sw_record *rec = recv_record(R->sw, src, M->buf, M->cap);
    if (rec) sw_run_store(R, rec);
  } else if (status.MPI_TAG == TAG_DONE) {
    MPI_Recv(NULL, 0, MPI_INT, src, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    M->active--;
  } else { /* not expected on rank 0: drop it */
    MPI_Recv(M->buf, M->cap, MPI_BYTE, src, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return 1;
}

static void rank0_coordinate(sw_run *R) {
  mpi_state *M = R->ext;
  for (;;) {
    int busy = 0;
    while (!R->stopping && R->next < R->npending && R->in_flight < R->limit) {
      sw_run_dispatch(R, R->pending[R->next++]);
      busy = 1;
    }
    sw_record *rec;
    while ((rec = sw_run_collect(R, 0.0)) != NULL) sw_run_store(R, rec), busy = 1;
    while (serve_one(R, M)) busy = 1;
    if (R->stopping && !M->stop_sent) {
      for (int r = 1; r < mpi_size; ++r) MPI_Send(NULL, 0, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD);
      M->stop_sent = 1;
      M->stop_time = sw_now();
    }
    if (R->in_flight == 0 && M->active == 0) break;
    /* interrupted: a rank that does not answer within the grace time may be dead (a killed rank, a
       lost node); keep what has arrived */
    if (M->stop_sent && R->in_flight == 0 && sw_now() - M->stop_time > SW_MPI_STOP_GRACE) break;
    if (!busy && (rec = sw_run_collect(R, SW_MPI_IDLE_WAIT)) != NULL) sw_run_store(R, rec);
    else if (!busy && R->in_flight == 0) {
      struct timespec ts = {0, (long)(SW_MPI_IDLE_WAIT * 1e9)};
      nanosleep(&ts, NULL);
    }
    sw_run_poll(R, 0);
  }
}

/* ------------------------------------------------------------ other ranks */

static void worker_coordinate(sw_run *R) {
  mpi_state *M = R->ext;
  int requested = 0, no_more = 0;
  for (;;) {
    int busy = 0;
    if (!no_more && !requested && !R->stopping && R->in_flight < R->limit) {
      int want = R->limit - R->in_flight;
      MPI_Send(&want, 1, MPI_INT, 0, TAG_REQUEST, MPI_COMM_WORLD);
      requested = 1;
    }
    sw_record *rec;
    while ((rec = sw_run_collect(R, 0.0)) != NULL) {
      if (rec->status != SW_INTERRUPTED) send_record(R->sw, rec, M->buf, M->cap);
      free(rec);
      busy = 1;
    }
    int flag = 0;
    MPI_Status status;
    while (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), flag) {
      busy = 1;
      if (status.MPI_TAG == TAG_WORK) {
        int k = 0;
        MPI_Get_count(&status, MPI_LONG, &k);
        MPI_Recv(M->work, R->limit, MPI_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        requested = 0;
        if (k == 0) no_more = 1;
        for (int i = 0; i < k && !R->stopping; ++i) sw_run_dispatch(R, M->work[i]);
      } else if (status.MPI_TAG == TAG_STOP) {
        MPI_Recv(NULL, 0, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sw_run_stop(R);
        no_more = 1;
      } else {
        MPI_Recv(M->buf, M->cap, MPI_BYTE, 0, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    if ((no_more || R->stopping) && !requested && R->in_flight == 0) break;
    if (!busy && R->in_flight > 0) {
      if ((rec = sw_run_collect(R, SW_MPI_IDLE_WAIT)) != NULL) {
        if (rec->status != SW_INTERRUPTED) send_record(R->sw, rec, M->buf, M->cap);
        free(rec);
      }
    } else if (!busy) {
      struct timespec ts = {0, (long)(SW_MPI_IDLE_WAIT * 1e9)};
      nanosleep(&ts, NULL);
    }
    sw_run_poll(R, 0);
  }
  MPI_Send(NULL, 0, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
}

/* ------------------------------------------------------------ the run */

tl_status tl_sweep_run_mpi(tl_sweep *sw, const tl_sweep_run_options *opt_in, tl_sweep_results **out, tl_error *err) {
  if (out) *out = NULL;
  if (!mpi_inited) return sw_error(err, TL_ERR_INVALID, NULL, 0, "mpi", "tl_sweep_mpi_init was not called");
  tl_sweep_run_options opt = opt_in ? *opt_in : tl_sweep_run_options_default();
  /* every rank must run the same prepared sweep */
  unsigned long long hash = sw && sw->prepared ? (unsigned long long)sw->hash : 0, root = hash;
  MPI_Bcast(&root, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (!tl_sweep_mpi_agree(sw && sw->prepared && hash == root))
    return sw_error(err, TL_ERR_INVALID, NULL, 0, "mpi", "the ranks did not all prepare the same sweep (rank %d: spec "
                    "%016llx, rank 0: %016llx)", mpi_rank, hash, root);
  sw_run R;
  int nworker = opt.nthread > 0 ? opt.nthread : 1;
  tl_status st = sw_run_init(&R, sw, &opt, nworker, err);
  int ok = tl_sweep_mpi_agree(st == TL_OK);
  if (!ok) {
    if (st == TL_OK) sw_run_free(&R);
    return st != TL_OK ? st : sw_error(err, TL_ERR_INVALID, NULL, 0, "mpi", "another rank could not start its threads");
  }
  MPI_Allreduce(&R.nworker, &R.workers_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (mpi_rank == 0) st = sw_run_open_results(&R, err);
  ok = tl_sweep_mpi_agree(st == TL_OK);
  if (!ok) {
    tl_sweep_results_free(R.res);
    sw_run_free(&R);
    return st != TL_OK ? st : sw_error(err, TL_ERR_INVALID, NULL, 0, "mpi", "rank 0 could not open the results");
  }
  mpi_state M;
  memset(&M, 0, sizeof M);
  M.cap = packed_size(sw);
  M.buf = malloc((size_t)M.cap + 64);
  M.work = malloc(((size_t)R.limit + 1) * sizeof(long));
  M.active = mpi_size - 1;
  if (!M.buf || !M.work) {
    free(M.buf), free(M.work);
    MPI_Abort(MPI_COMM_WORLD, 1); /* cannot keep the protocol without them */
  }
  R.ext = &M;
  R.coordinate = mpi_rank == 0 ? rank0_coordinate : worker_coordinate;
  sw_run_execute(&R);
  if (mpi_rank == 0) st = sw_run_close_results(&R, out, err);
  free(M.buf);
  free(M.work);
  sw_run_free(&R);
  return st;
}
