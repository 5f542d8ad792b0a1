/* Guards: src/scene/scene_load.c, src/world/world.c, src/contact/broadphase.c (objects, material pairs
 * and static geoms added in linear time and memory). */
/* World construction scales linearly (issue 21 §2, "Quadratic loading"):
 * world files of n and 2n objects, of n and 2n material pairs and of n and
 * 2n static geoms are generated and loaded (tl_scene_load) in the same run.
 *
 * Deterministic measures (link-time wrappers of malloc, calloc, realloc and
 * strcmp, -Wl,--wrap, count the calls made by the statically linked engine):
 *   - bytes requested from the allocator while loading: each added object
 *     used to reallocate the world's geom, contact and constraint arrays to
 *     their new exact size (O(n) bytes per object, O(n^2) in all); with
 *     geometric growth it is O(n): 2n objects (or static geoms) must request
 *     < 2.6 times the bytes of n;
 *   - string comparisons while loading material pairs and objects: each new
 *     pair was searched for by a scan of the world's table, each object's
 *     name by a scan of the loader's (O(n) strcmp each); the hash indexes
 *     need O(1): 2n must cost < 2.6 times the comparisons of n.
 * Timing (CPU time, best of 3 loads each, same run): time(2n) / time(n) < 3 for both
 * kinds (the quadratic loader measured 4.4 for pairs, 4.7 for objects).
 * The loaded worlds are checked too: every object is in the world and every
 * pair resolves to its own values (tl_world_set_material_pair_erp_cfm finds
 * each), so counts cannot drop by skipping work.
 * Usage: test_load_scaling  (no arguments; writes its files under /tmp) */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "talus/scene.h"
#include "talus/world.h"
#include "test_util.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
int __real_strcmp(const char *a, const char *b);

static unsigned long long bytes_requested, strcmp_calls;

void *__wrap_malloc(size_t n) {
  bytes_requested += n;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s) {
  bytes_requested += n * s;
  return __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n) {
  bytes_requested += n;
  return __real_realloc(p, n);
}
int __wrap_strcmp(const char *a, const char *b) {
  strcmp_calls++;
  return __real_strcmp(a, b);
}

static char dir[64];

/* A world file of n boxes (kind 0), of n material pairs and one ball (kind 1), or of n static
 * boxes and one ball (kind 2). */
static void write_world(const char *path, int kind, int n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f, "<?xml version=\"1.0\"?>\n<talus_world name=\"scaling\">\n  <ground height=\"0\"/>\n");
  for (int i = 0; i < n; i++) {
    if (kind == 0)
      fprintf(f, "  <object type=\"box\" size=\"0.2 0.2 0.2\" mass=\"1\" pos=\"%g %g 0.1\" material=\"wood\"/>\n",
              0.5 * (i % 100), 0.5 * (i / 100));
    else if (kind == 1)
      fprintf(f, "  <material_pair a=\"m%d\" b=\"n%d\" friction=\"%g\"/>\n", i, i % 97, 0.5 + 1e-6 * i);
    else
      fprintf(f, "  <static type=\"box\" size=\"0.2 0.2 0.2\" pos=\"%g %g 0.1\"/>\n", 0.5 * (i % 100), 0.5 * (i / 100));
  }
  if (kind >= 1) fprintf(f, "  <object type=\"sphere\" size=\"0.1\" mass=\"1\" pos=\"0 0 0.1\" material=\"m1\"/>\n");
  fprintf(f, "</talus_world>\n");
  fclose(f);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* CPU time: other processes on the machine do not count */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct measure {
  unsigned long long bytes, cmps;
  double seconds; /* best of the loads */
} measure;

/* Load the file reps times; check the world it builds; the counts of the first load. */
static measure load(int kind, int n, int reps) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s%d.xml", dir, kind == 2 ? "statics" : kind ? "pairs" : "objects", n);
  write_world(path, kind, n);
  measure m = {0, 0, 1e30};
  for (int r = 0; r < reps; r++) {
    tl_world *w = NULL;
    tl_error err;
    unsigned long long b0 = bytes_requested, c0 = strcmp_calls;
    double t0 = now();
    tl_status st = tl_scene_load(path, &w, NULL, &err);
    double t = now() - t0;
    if (r == 0) m.bytes = bytes_requested - b0, m.cmps = strcmp_calls - c0;
    if (t < m.seconds) m.seconds = t;
    if (!TL_CHECK(st == TL_OK, "%s: %s", path, err.message)) return m;
    if (r == 0 && kind == 0)
      TL_CHECK(tl_world_nsystem(w) == n, "%s: %d systems, expected %d", path, tl_world_nsystem(w), n);
    if (r == 0 && kind == 2) /* the ground and the n boxes */
      TL_CHECK(tl_world_nstatic(w) == n + 1, "%s: %d static geoms, expected %d", path, tl_world_nstatic(w), n + 1);
    if (r == 0 && kind == 1) { /* every pair is found, in either order, and no other */
      int found = 0;
      for (int i = 0; i < n; i++) {
        char a[32], b[32];
        snprintf(a, sizeof a, "m%d", i);
        snprintf(b, sizeof b, "n%d", i % 97);
        found += tl_world_set_material_pair_erp_cfm(w, i % 2 ? a : b, i % 2 ? b : a, 0.2, 0, &err) == TL_OK;
      }
      TL_CHECK(found == n, "%s: %d of %d material pairs found", path, found, n);
      TL_CHECK(tl_world_set_material_pair_erp_cfm(w, "m1", "n2", 0.2, 0, &err) != TL_OK,
               "%s: a pair that is not in the file is found", path);
    }
    tl_world_free(w);
  }
  unlink(path);
  return m;
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/talus_scaling_XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  /* deterministic: allocator bytes (objects) and string comparisons (pairs) */
  measure o1 = load(0, 500, 1), o2 = load(0, 1000, 1);
  double rb = (double)o2.bytes / (double)o1.bytes, rc;
  printf("objects 500 / 1000: %llu / %llu bytes requested while loading (ratio %.2f)\n", o1.bytes, o2.bytes, rb);
  TL_CHECK(rb < 2.6, "loading 2n objects requests %.2f times the bytes of n (quadratic reallocation)", rb);
  rc = (double)o2.cmps / (double)o1.cmps;
  printf("objects 500 / 1000: %llu / %llu string comparisons while loading (ratio %.2f)\n", o1.cmps, o2.cmps, rc);
  TL_CHECK(rc < 2.6, "loading 2n objects makes %.2f times the comparisons of n (a name search by scan)", rc);
  measure s1 = load(2, 1000, 1), s2 = load(2, 2000, 1);
  rb = (double)s2.bytes / (double)s1.bytes;
  printf("static geoms 1000 / 2000: %llu / %llu bytes requested while loading (ratio %.2f)\n", s1.bytes, s2.bytes, rb);
  TL_CHECK(rb < 2.6, "loading 2n static geoms requests %.2f times the bytes of n (quadratic reallocation)", rb);
  measure p1 = load(1, 4000, 1), p2 = load(1, 8000, 1);
  rc = (double)p2.cmps / (double)p1.cmps;
  printf("pairs 4000 / 8000: %llu / %llu string comparisons while loading (ratio %.2f)\n", p1.cmps, p2.cmps, rc);
  TL_CHECK(rc < 2.6, "loading 2n material pairs makes %.2f times the comparisons of n (linear search)", rc);
  /* timing, best of 3, same run */
  measure t1 = load(0, 1500, 3), t2 = load(0, 3000, 3);
  double rt = t2.seconds / t1.seconds;
  printf("objects 1500 / 3000: %.3f / %.3f s (ratio %.2f)\n", t1.seconds, t2.seconds, rt);
  TL_CHECK(rt < 3, "loading 2n objects takes %.2f times as long as n", rt);
  measure q1 = load(1, 16000, 3), q2 = load(1, 32000, 3);
  rt = q2.seconds / q1.seconds;
  printf("pairs 16000 / 32000: %.3f / %.3f s (ratio %.2f)\n", q1.seconds, q2.seconds, rt);
  TL_CHECK(rt < 3, "loading 2n material pairs takes %.2f times as long as n", rt);
  rmdir(dir);
  return tl_test_finish();
}
