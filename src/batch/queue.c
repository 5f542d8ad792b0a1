/* Blocking FIFO of pointers (queue.h): a ring buffer under one mutex. */
#define _POSIX_C_SOURCE 200809L

#include "batch/queue.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct tl_queue {
  pthread_mutex_t mu;
  pthread_cond_t not_empty, not_full;
  void **ring;
  int capacity, head, count, closed;
};

tl_queue *tl_queue_create(int capacity) {
  if (capacity < 1) return NULL;
  tl_queue *q = calloc(1, sizeof(*q));
  if (!q) return NULL;
  q->ring = calloc((size_t)capacity, sizeof(void *));
  if (!q->ring || pthread_mutex_init(&q->mu, NULL)) {
    free(q->ring);
    free(q);
    return NULL;
  }
  pthread_cond_init(&q->not_empty, NULL);
  pthread_cond_init(&q->not_full, NULL);
  q->capacity = capacity;
  return q;
}

void tl_queue_free(tl_queue *q) {
  if (!q) return;
  pthread_cond_destroy(&q->not_empty);
  pthread_cond_destroy(&q->not_full);
  pthread_mutex_destroy(&q->mu);
  free(q->ring);
  free(q);
}

int tl_queue_push(tl_queue *q, void *item) {
  pthread_mutex_lock(&q->mu);
  while (q->count == q->capacity && !q->closed) pthread_cond_wait(&q->not_full, &q->mu);
  int rc = -1;
  if (!q->closed) {
    q->ring[(q->head + q->count) % q->capacity] = item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    rc = 0;
  }
  pthread_mutex_unlock(&q->mu);
  return rc;
}

int tl_queue_pop(tl_queue *q, void **item, double timeout_s) {
  struct timespec until;
  if (timeout_s >= 0) {
    clock_gettime(CLOCK_REALTIME, &until);
    double whole = floor(timeout_s);
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((timeout_s - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000L;
    }
  }
  pthread_mutex_lock(&q->mu);
  int rc = 0;
  while (q->count == 0 && !q->closed) {
    if (timeout_s < 0) {
      pthread_cond_wait(&q->not_empty, &q->mu);
    } else if (pthread_cond_timedwait(&q->not_empty, &q->mu, &until) != 0) {
      break; /* timed out */
    }
  }
  if (q->count > 0) {
    *item = q->ring[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    pthread_cond_signal(&q->not_full);
    rc = 1;
  } else if (q->closed) {
    rc = -1;
  }
  pthread_mutex_unlock(&q->mu);
  return rc;
}

void tl_queue_close(tl_queue *q) {
  pthread_mutex_lock(&q->mu);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_cond_broadcast(&q->not_full);
  pthread_mutex_unlock(&q->mu);
}
