/* talus_bench: live heap bytes through link-time wrappers of malloc,
 * calloc, realloc and free (see bench_mem.h).
 *
 * Each live block is a (pointer, requested size) entry of an open-address
 * hash table with linear probing; removal shifts the following entries of
 * the probe run back (Knuth, TAOCP vol. 3, 6.4, Algorithm R), so the table
 * never fills with tombstones. The table is a static array: the wrappers
 * never allocate themselves. talus_bench is single-threaded. */
#include "bench_mem.h"

#include <stdint.h>
#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

#define MEM_BITS 18
#define MEM_SLOTS ((size_t)1 << MEM_BITS)
#define MEM_MASK (MEM_SLOTS - 1)
#define MEM_MAX_FILL (MEM_SLOTS / 4 * 3)

typedef struct mem_slot {
  void *p; /* NULL: empty */
  size_t n;
} mem_slot;

static mem_slot table[MEM_SLOTS];
static size_t nlive, live_bytes;
static int overflow;

static size_t slot_of(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return (size_t)x & MEM_MASK;
}

static void add(void *p, size_t n) {
  if (!p) return;
  if (nlive >= MEM_MAX_FILL) {
    overflow = 1;
    return;
  }
  size_t i = slot_of(p);
  while (table[i].p && table[i].p != p) i = (i + 1) & MEM_MASK;
  if (table[i].p == p) { /* already known (cannot happen for a live block) */
    live_bytes -= table[i].n;
  } else {
    ++nlive;
  }
  table[i].p = p;
  table[i].n = n;
  live_bytes += n;
}

static void remove_block(void *p) {
  if (!p) return;
  size_t i = slot_of(p);
  while (table[i].p && table[i].p != p) i = (i + 1) & MEM_MASK;
  if (!table[i].p) return; /* not allocated through the wrappers */
  live_bytes -= table[i].n;
  --nlive;
  /* Algorithm R: move back the entries whose home slot is not in (i, j] */
  size_t j = i;
  for (;;) {
    table[i].p = NULL;
    size_t k;
    do {
      j = (j + 1) & MEM_MASK;
      if (!table[j].p) return;
      k = slot_of(table[j].p);
    } while (i <= j ? (i < k && k <= j) : (i < k || k <= j));
    table[i] = table[j];
    i = j;
  }
}

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

void *__wrap_malloc(size_t n) {
  void *p = __real_malloc(n);
  add(p, n);
  return p;
}

void *__wrap_calloc(size_t n, size_t s) {
  void *p = __real_calloc(n, s);
  add(p, n * s); /* calloc refused an overflowing product: p is NULL then */
  return p;
}

void *__wrap_realloc(void *p, size_t n) {
  void *r = __real_realloc(p, n);
  if (r) {
    remove_block(p);
    add(r, n);
  } else if (p && n == 0) { /* glibc: realloc(p, 0) frees p */
    remove_block(p);
  }
  return r;
}

void __wrap_free(void *p) {
  remove_block(p);
  __real_free(p);
}

size_t bench_mem_live(void) { return live_bytes; }

int bench_mem_ok(void) { return !overflow; }
