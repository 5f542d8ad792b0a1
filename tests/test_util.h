/* Talus tests: a tiny header-only harness shared by every test program.
 *
 *   TL_CHECK(cond, fmt, ...)          count a check; on failure print file:line and the message
 *   TL_CHECK_NEAR(a, b, tol, what)    count a check that |a - b| <= tol (NaN fails)
 *   tl_test_skip(fmt, ...)            print "SKIPPED: ..." and count a skip
 *   tl_test_finish()                  print "N passed, N failed[, N skipped]" as the last
 *                                     line; return the exit code (0 iff nothing failed)
 *   tl_test_shared_dir(argc, argv, i) the shared folder: $TALUS_SHARED if set, else argv[i]
 *
 * One test program == one translation unit, so the counters live in a
 * function-local static. TL_TEST_SKIP_CODE is the exit code a test returns
 * when it could not run at all (ctest: talus_test(... SKIP_77), SKIP_RETURN_CODE 77). */
#ifndef TALUS_TEST_UTIL_H
#define TALUS_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define TL_TEST_SKIP_CODE 77

#if defined(__GNUC__)
#define TL_TEST_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define TL_TEST_PRINTF_(f, a)
#endif

typedef struct tl_test_counts {
  int passed, failed, skipped;
} tl_test_counts;

static inline tl_test_counts *tl_test_totals(void) {
  static tl_test_counts counts;
  return &counts;
}

static inline int tl_test_check_(int ok, const char *file, int line, const char *fmt, ...)
    TL_TEST_PRINTF_(4, 5);
static inline int tl_test_check_(int ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    tl_test_totals()->passed++;
    return 1;
  }
  tl_test_totals()->failed++;
  va_list ap;
  va_start(ap, fmt);
  printf("%s:%d: FAILED: ", file, line);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return 0;
}

/* TL_CHECK(cond, fmt, ...): the message is a printf format plus arguments.
 * Evaluates to 1 if the check passed, 0 otherwise. */
#define TL_CHECK(cond, ...) tl_test_check_((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* |a - b| <= tol, with a NaN on either side failing. */
#define TL_CHECK_NEAR(a, b, tol, what)                                                        \
  do {                                                                                        \
    double tl_a_ = (a), tl_b_ = (b), tl_t_ = (tol);                                           \
    TL_CHECK(fabs(tl_a_ - tl_b_) <= tl_t_, "%s: %.17g vs %.17g (|diff| %.3g > tol %.3g)",     \
             (what), tl_a_, tl_b_, fabs(tl_a_ - tl_b_), tl_t_);                               \
  } while (0)

static inline void tl_test_skip(const char *fmt, ...) TL_TEST_PRINTF_(1, 2);
static inline void tl_test_skip(const char *fmt, ...) {
  tl_test_totals()->skipped++;
  va_list ap;
  va_start(ap, fmt);
  printf("SKIPPED: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/* Print the summary as the last line and return the exit code. */
static inline int tl_test_finish(void) {
  const tl_test_counts *c = tl_test_totals();
  if (c->skipped > 0)
    printf("%d passed, %d failed, %d skipped\n", c->passed, c->failed, c->skipped);
  else
    printf("%d passed, %d failed\n", c->passed, c->failed);
  fflush(stdout);
  return c->failed == 0 ? 0 : 1;
}

/* The whole file at path, NUL-terminated (malloc'd; the caller frees), its
 * length in *len when len is not NULL; NULL if it cannot be read. */
static inline char *tl_test_read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    }
    if (buf) buf[n] = '\0';
  }
  fclose(f);
  if (buf && len) *len = (size_t)n;
  return buf;
}

/* The shared folder (robots/, reference/): $TALUS_SHARED when set and not
 * empty, else argv[i] when given, else NULL. */
static inline const char *tl_test_shared_dir(int argc, char **argv, int i) {
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0]) return env;
  return (i >= 0 && i < argc) ? argv[i] : NULL;
}

#endif
