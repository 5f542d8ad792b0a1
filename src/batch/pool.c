/* Fork-join thread pool (pool.h): one mutex, a "start" condition signalled
 * with a job generation number, a "done" condition with a pending count. */
#define _POSIX_C_SOURCE 200809L

#include "batch/pool.h"

#include <pthread.h>
#include <stdlib.h>

struct tl_pool {
  int n;                 /* threads, the caller included */
  int started;           /* pthreads running */
  pthread_t *threads;    /* [n - 1] */
  pthread_mutex_t mu;
  pthread_cond_t start, done;
  unsigned long generation; /* bumped for every job */
  int pending;           /* worker threads still running the current job */
  int quit;
  tl_pool_fn fn;
  void *ctx;
};

typedef struct worker_arg {
  tl_pool *pool;
  int index;
} worker_arg;

static void *worker(void *arg) {
  tl_pool *p = ((worker_arg *)arg)->pool;
  int t = ((worker_arg *)arg)->index;
  free(arg);
  pthread_mutex_lock(&p->mu);
  unsigned long seen = 0; /* generation 0 = no job yet, even if one was posted before we got here */
  for (;;) {
    while (p->generation == seen && !p->quit) pthread_cond_wait(&p->start, &p->mu);
    if (p->quit) break;
    seen = p->generation;
    tl_pool_fn fn = p->fn;
    void *ctx = p->ctx;
    pthread_mutex_unlock(&p->mu);
    fn(ctx, t);
    pthread_mutex_lock(&p->mu);
    if (--p->pending == 0) pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

tl_pool *tl_pool_create(int n) {
  if (n < 1) return NULL;
  tl_pool *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->n = n;
  p->threads = calloc((size_t)n, sizeof(pthread_t));
  if (!p->threads || pthread_mutex_init(&p->mu, NULL)) {
    free(p->threads);
    free(p);
    return NULL;
  }
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  for (int t = 1; t < n; t++) {
    worker_arg *a = malloc(sizeof(*a));
    if (!a) break;
    a->pool = p;
    a->index = t;
    if (pthread_create(&p->threads[t - 1], NULL, worker, a)) {
      free(a);
      break;
    }
    p->started++;
  }
  if (p->started != n - 1) {
    tl_pool_free(p);
    return NULL;
  }
  return p;
}

void tl_pool_run(tl_pool *p, tl_pool_fn fn, void *ctx) {
  if (p->n > 1) {
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->pending = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
  }
  fn(ctx, 0);
  if (p->n > 1) {
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
}

void tl_pool_free(tl_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->quit = 1;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->mu);
  for (int t = 0; t < p->started; t++) pthread_join(p->threads[t], NULL);
  pthread_cond_destroy(&p->start);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p);
}
