/* Allocation counting for the tests that assert "no allocation" (test_no_alloc, test_record,
 * test_derivatives, test_step_derivatives): malloc, calloc and realloc wrapped at link time
 * (-Wl,--wrap=..., tests/CMakeLists.txt). Set `counting` to 1 around the calls under test;
 * `nalloc` counts the allocations made meanwhile; with `fail_at` > 0 the fail_at-th of them returns
 * NULL. Include in exactly one file of a test program. */
#ifndef TALUS_TEST_ALLOC_H
#define TALUS_TEST_ALLOC_H

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
static int counting, nalloc;
/* > 0: the fail_at-th allocation counted returns NULL (out-of-memory paths; tests/test_arena.c) */
static int fail_at;
#define TALUS_TEST_ALLOC_FAIL_ (counting && fail_at > 0 && nalloc == fail_at)
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) {
  nalloc += counting;
  return TALUS_TEST_ALLOC_FAIL_ ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s) {
  nalloc += counting;
  return TALUS_TEST_ALLOC_FAIL_ ? NULL : __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n) {
  nalloc += counting;
  return TALUS_TEST_ALLOC_FAIL_ ? NULL : __real_realloc(p, n);
}

#endif
