/* Internal: a fixed pool of threads that runs one function on every thread
 * and waits for all of them (fork-join), for src/batch/.
 *
 * The calling thread is thread 0; threads 1 .. n-1 are pthreads started by
 * tl_pool_create and parked on a condition variable between jobs (no
 * spinning: the machines this runs on are often shared). */
#ifndef TALUS_BATCH_POOL_H
#define TALUS_BATCH_POOL_H

typedef struct tl_pool tl_pool;
typedef void (*tl_pool_fn)(void *ctx, int thread);

/* A pool of n >= 1 threads (n - 1 started here). NULL on failure (no
 * memory, or a thread could not be started; nothing is left running). */
tl_pool *tl_pool_create(int n);
/* Run fn(ctx, t) once on every thread t = 0 .. n-1 (t = 0 on the caller)
 * and return when all have returned. Not reentrant. */
void tl_pool_run(tl_pool *p, tl_pool_fn fn, void *ctx);
/* Stop and join the threads. NULL is allowed. */
void tl_pool_free(tl_pool *p);

#endif
