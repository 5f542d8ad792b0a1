/* Internal: a blocking first-in first-out queue of pointers between
 * threads, for work items pushed by a coordinator (tl_batch's environments
 * are taken from a shared counter instead).
 *
 * Sweeps (src/sweep/) run samples of very different lengths (a robot that
 * falls early ends early): a coordinator thread pushes work items as threads
 * become free, the worker threads pop them and hand finished items back
 * through a second queue. Used with tl_pool (pool.h): the pool runs the coordinator
 * as thread 0 and the workers as threads 1 .. n-1.
 *
 * One mutex and two condition variables (not empty / not full); nothing
 * spins, since the machines this runs on are often shared. The capacity is
 * fixed at creation; push and pop never allocate. Which thread gets which
 * item depends on timing: results must never depend on it (each sweep
 * sample only depends on its own index). */
#ifndef TALUS_BATCH_QUEUE_H
#define TALUS_BATCH_QUEUE_H

typedef struct tl_queue tl_queue;

/* A queue holding at most capacity (>= 1) items. NULL if out of memory. */
tl_queue *tl_queue_create(int capacity);
void tl_queue_free(tl_queue *q);

/* Append item (not NULL), waiting while the queue is full. Returns 0, or
 * -1 if the queue is closed (the item was not added). */
int tl_queue_push(tl_queue *q, void *item);
/* Take the oldest item into *item, waiting while the queue is empty and
 * open; timeout_s < 0: wait as long as needed, else at most that many
 * seconds. Returns 1 with an item, 0 after the timeout, -1 when the queue is
 * closed and empty. */
int tl_queue_pop(tl_queue *q, void **item, double timeout_s);
/* Close: pushes fail from now on, pops return what is left and then -1;
 * every waiting thread wakes up. */
void tl_queue_close(tl_queue *q);

#endif
