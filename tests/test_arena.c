/* Guards: src/native/native_workspace.[ch], src/native/native.c (attach, objects_changed, set_solver),
 * src/contact/broadphase.c (tl_world_size_geoms), src/contact/constraint_rows.c
 * (tl_world_size_constraints), src/world/system.c (state vs scratch), src/world/snapshot.c and
 * src/native/native_snapshot.c (state only). */
/* The native engine's per-step memory comes from one arena (issue 22 s4):
 *
 *   pile    36 boxes dropped into a bin (4 walls, ground; 6 for Dantzig,
 *           whose dense pivoting is slow on hundreds of rows): 1000 steps with
 *           each solver (per-contact, PGS, Dantzig) allocate nothing
 *           (malloc, calloc and realloc wrapped at link time, tests/test_alloc.h)
 *           while contacts are made and broken; selecting the Dantzig solver
 *           re-plans the arena with exactly one allocation, and selecting it
 *           again allocates nothing; the arena's bytes are printed.
 *   anymal  ANYmal C (../shared) dropped on the ground with its joints held
 *           by PD: the same for its 1000 steps per solver. Skips (77)
 *           without ../shared.
 *   snapshot the snapshot holds state, never workspace: the pile's snapshot
 *           is byte for byte the same before and after its arena grows by
 *           the Dantzig scratch (tens of MB) and back on PGS; restored into a
 *           twin world whose arena is another size (built without that
 *           growth), both continue 500 steps bit for bit alike (their
 *           snapshots compared byte for byte), and each world's snapshot size
 *           is the same whatever its arena.
 *   memory  adding a system (robots/talus_quadruped) to a pile with each of
 *           its allocations failing in turn (the arena's among them): every
 *           attempt returns TL_ERR_MEMORY and leaves the world's snapshot as
 *           it was, and once added the world steps bit for bit like a twin's
 *           that never failed.
 *   plugin  on the ODE plugin (skips (77) without it) the arena is 0 bytes
 *           and the effective inverse mass matrix, which used a system's
 *           step scratch, is the native engine's bit for bit; back on talus
 *           the arena is laid out again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "talus/engine.h"
#include "talus/talus.h"
#include "test_util.h"

#include "test_alloc.h"

static tl_error err;

static const tl_solver solvers[] = {TL_SOLVER_PER_CONTACT, TL_SOLVER_PGS, TL_SOLVER_DANTZIG};
static const char *const solver_names[] = {"per-contact", "PGS", "Dantzig"};

/* ---------------------------------------------------------------- scenes */

/* A bin (ground, 4 walls 0.6 m square) and nbox boxes of 10 cm, 1 kg, in
 * layers of 3 x 3, 13 cm apart, tilted differently, dropped from up to
 * nbox / 9 * 0.15 m. NULL (a failed check) on error. */
static tl_world *pile_world(int nbox) {
  tl_world *w = NULL;
  tl_model *box = NULL;
  double size[3] = {0.1, 0.1, 0.1};
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_model_create_primitive(TL_GEOM_BOX, size, 1.0, "box", &box, &err) == TL_OK;
  for (int k = 0; ok && k < 4; k++) {
    double ws[3] = {k < 2 ? 0.1 : 0.8, k < 2 ? 0.8 : 0.1, 0.5}, pos[3] = {0, 0, 0.25};
    pos[k < 2 ? 0 : 1] = (k % 2 ? 1 : -1) * 0.35;
    ok = tl_world_add_static_geom(w, TL_GEOM_BOX, ws, pos, NULL, NULL, NULL, &err) == TL_OK;
  }
  for (int i = 0; ok && i < nbox; i++) {
    tl_system *s = NULL;
    double a = 0.37 * i, c = 0.5 * (1 + (i % 3)) * 0.2;
    double q[7] = {0.13 * (i % 3 - 1) + 0.01 * (i % 2), 0.13 * ((i / 3) % 3 - 1), 0.08 + 0.15 * (i / 9), 1, 0, 0, 0};
    q[3] = cos(c), q[4] = sin(c) * cos(a), q[5] = sin(c) * sin(a); /* tilt about a horizontal axis */
    double u[6] = {0};
    ok = tl_world_add_system(w, box, &s, &err) == TL_OK && tl_system_set_state(s, q, 7, u, 6, &err) == TL_OK;
  }
  tl_model_free(box);
  if (!TL_CHECK(ok, "pile of %d boxes: %s", nbox, err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* ANYmal C 0.6 m above the ground, joints held at the default pose by PD. */
static tl_world *anymal_world(const char *shared, int solver) {
  (void)solver;
  char path[4096];
  snprintf(path, sizeof path, "%s/robots/anymal_c/urdf/anymal.urdf", shared);
  tl_world *w = NULL;
  tl_model *m = NULL;
  tl_system *s = NULL;
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  int nq = ok ? tl_system_nq(s) : 0, nv = ok ? tl_system_nv(s) : 0;
  double q[64], u[64] = {0}, kp[64], kd[64];
  ok = ok && nq <= 64 && nv <= 64 && tl_model_default_q(m, q, nq, &err) == TL_OK;
  if (ok) q[2] = 0.6;
  for (int k = 0; k < nv && k < 64; k++) kp[k] = k < 6 ? 0 : 80, kd[k] = k < 6 ? 0 : 2;
  ok = ok && tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK &&
       tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK && tl_system_set_pd_targets(s, q, nq, NULL, nv, &err) == TL_OK;
  tl_model_free(m);
  if (!TL_CHECK(ok, "anymal: %s", err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* ---------------------------------------------------------------- no allocation */

/* Step n times with allocations counted; returns them (-1: a step failed). */
static int count_steps(tl_world *w, int n) {
  nalloc = 0;
  counting = 1;
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = tl_world_step(w, &err) == TL_OK;
  counting = 0;
  return TL_CHECK(ok, "stepping failed: %s", err.message) ? nalloc : -1;
}

/* 1000 steps of the scene built by make(arg, solver) with each solver: no allocation, contacts made. */
static void check_no_alloc(const char *label, tl_world *(*make)(const char *, int), const char *arg) {
  for (int k = 0; k < 3; k++) {
    tl_world *w = make(arg, k);
    if (!w) return;
    size_t before = tl_world_workspace_bytes(w);
    TL_CHECK(tl_world_set_solver(w, solvers[k], &err) == TL_OK, "%s: set solver: %s", label, err.message);
    int most = 0, n = 0;
    for (int part = 0; part < 10 && n >= 0; part++) { /* 1000 steps, the contacts watched every 100 */
      int got = count_steps(w, 100);
      n = got < 0 ? -1 : n + got;
      if (tl_world_ncontact(w) > most) most = tl_world_ncontact(w);
    }
    printf("%s, %s: %d allocations in 1000 steps, up to %d contacts, %d at the end; arena %zu bytes "
           "(%zu before the solver was set)\n",
           label, solver_names[k], n, most, tl_world_ncontact(w), tl_world_workspace_bytes(w), before);
    TL_CHECK(n == 0, "%s, %s: %d allocations while stepping", label, solver_names[k], n);
    TL_CHECK(tl_world_ncontact(w) > 0 && most >= 4, "%s, %s: the scene made no contacts (%d, at most %d)", label,
             solver_names[k], tl_world_ncontact(w), most);
    TL_CHECK(tl_world_workspace_bytes(w) > 0, "%s: no arena reported", label);
    tl_world_free(w);
  }
}

/* 36 boxes, 6 for Dantzig (its dense pivoting costs 0.3 s a step on the 36 boxes' 480 rows). */
static tl_world *make_pile(const char *arg, int solver) {
  (void)arg;
  return pile_world(solvers[solver] == TL_SOLVER_DANTZIG ? 6 : 36);
}

/* Selecting Dantzig re-plans the arena in one allocation; again, in none. */
static void check_one_block(void) {
  tl_world *w = pile_world(36);
  if (!w) return;
  size_t before = tl_world_workspace_bytes(w);
  nalloc = 0;
  counting = 1;
  int ok = tl_world_set_solver(w, TL_SOLVER_DANTZIG, &err) == TL_OK;
  counting = 0;
  int first = nalloc;
  nalloc = 0;
  counting = 1;
  ok = ok && tl_world_set_solver(w, TL_SOLVER_PGS, &err) == TL_OK &&
       tl_world_set_solver(w, TL_SOLVER_DANTZIG, &err) == TL_OK;
  counting = 0;
  size_t after = tl_world_workspace_bytes(w);
  printf("pile: selecting Dantzig: %d allocation(s), arena %zu -> %zu bytes; again: %d\n", first, before, after,
         nalloc);
  TL_CHECK(ok, "set solver: %s", err.message);
  TL_CHECK(first == 1, "the Dantzig scratch took %d allocations, not one block", first);
  TL_CHECK(nalloc == 0, "selecting Dantzig again allocated %d times", nalloc);
  /* 1200 rows: A and the factor L, 1200^2 doubles each */
  TL_CHECK(after >= before + 2 * 1200 * 1200 * sizeof(double), "arena %zu -> %zu bytes", before, after);
  tl_world_free(w);
}

/* ---------------------------------------------------------------- snapshot */

static unsigned char *snapshot(const tl_world *w, size_t *n) {
  *n = tl_world_snapshot_size(w);
  unsigned char *buf = malloc(*n ? *n : 1);
  size_t got = 0;
  if (!TL_CHECK(buf && tl_world_snapshot_save(w, buf, *n, &got, &err) == TL_OK && got == *n, "snapshot: %s",
                err.message)) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int steps(tl_world *w, int n) {
  for (int i = 0; i < n; i++)
    if (tl_world_step(w, &err) != TL_OK) return TL_CHECK(0, "step %d: %s", i, err.message);
  return 1;
}

static void check_snapshot(void) {
  tl_world *a = pile_world(36), *b = pile_world(36);
  if (!a || !b) {
    tl_world_free(a);
    tl_world_free(b);
    return;
  }
  int ok = TL_CHECK(tl_world_set_solver(a, TL_SOLVER_PGS, &err) == TL_OK &&
                    tl_world_set_solver(b, TL_SOLVER_PGS, &err) == TL_OK, "set solver: %s", err.message);
  ok = ok && steps(a, 300);
  size_t n0 = 0, n1 = 0, nb = 0, na = 0;
  unsigned char *s0 = ok ? snapshot(a, &n0) : NULL;
  size_t arena0 = tl_world_workspace_bytes(a);
  /* the arena grows by the Dantzig scratch, the solver goes back to PGS: the state is unchanged */
  ok = ok && s0 && TL_CHECK(tl_world_set_solver(a, TL_SOLVER_DANTZIG, &err) == TL_OK &&
                                tl_world_set_solver(a, TL_SOLVER_PGS, &err) == TL_OK, "%s", err.message);
  unsigned char *s1 = ok ? snapshot(a, &n1) : NULL;
  size_t arena1 = tl_world_workspace_bytes(a), arenab = tl_world_workspace_bytes(b);
  if (ok && s1) {
    printf("snapshot: %zu bytes with an arena of %zu bytes, %zu bytes with %zu; %d contacts\n", n0, arena0, n1,
           arena1, tl_world_ncontact(a));
    TL_CHECK(arena1 > arena0 + 20000000, "the arena did not grow (%zu -> %zu)", arena0, arena1);
    TL_CHECK(n0 == n1 && memcmp(s0, s1, n0) == 0, "the snapshot changed with the arena (%zu -> %zu bytes)", n0, n1);
    TL_CHECK(tl_world_ncontact(a) > 0, "no contacts at the snapshot");
  }
  /* into b (its arena without the Dantzig scratch), both continue */
  ok = ok && s1 && TL_CHECK(tl_world_snapshot_restore(b, s1, n1, &err) == TL_OK, "restore: %s", err.message);
  ok = ok && TL_CHECK(tl_world_snapshot_size(b) == n1, "restored snapshot size %zu, saved %zu",
                      tl_world_snapshot_size(b), n1);
  ok = ok && steps(a, 500) && steps(b, 500);
  unsigned char *ea = ok ? snapshot(a, &na) : NULL, *eb = ok ? snapshot(b, &nb) : NULL;
  if (ea && eb) {
    int same = na == nb && memcmp(ea, eb, na) == 0;
    printf("snapshot: restored into a world with an arena of %zu bytes (the saver's: %zu): after 500 steps the "
           "snapshots are %s (%zu bytes, %d contacts)\n",
           arenab, arena1, same ? "identical" : "DIFFERENT", na, tl_world_ncontact(a));
    TL_CHECK(arenab != arena1, "the twin's arena is the same size");
    TL_CHECK(same, "the continuation depends on the arena");
  }
  free(s0);
  free(s1);
  free(ea);
  free(eb);
  tl_world_free(a);
  tl_world_free(b);
}

/* ---------------------------------------------------------------- out of memory */

/* Add the quadruped at x = 1.2 m beside the bin; fail_at as set. */
static tl_status add_quadruped(tl_world *w, const tl_model *m) {
  tl_system *s = NULL;
  double q[64], u[64] = {0};
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  tl_model_default_q(m, q, nq, NULL);
  q[0] = 1.2, q[2] = 0.6;
  tl_status st = tl_world_add_system(w, m, &s, &err);
  int was = counting;
  counting = 0;
  if (!st) st = tl_system_set_state(s, q, nq, u, nv, &err);
  counting = was;
  return st;
}

/* Adding a system whose arena cannot be allocated (nor anything else it needs) fails with
 * TL_ERR_MEMORY and leaves the world as it was: its snapshot the same, and, once the system is added,
 * its steps the same as a twin's that never failed. */
static void check_out_of_memory(const char *robots) {
  char path[4096];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_model *m = NULL;
  tl_world *a = pile_world(6), *b = pile_world(6);
  int ok = a && b && TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "%s: %s", path, err.message);
  ok = ok && steps(a, 100) && steps(b, 100);
  size_t n0 = 0, n1 = 0, na = 0, nb = 0, bytes0 = ok ? tl_world_workspace_bytes(a) : 0;
  unsigned char *s0 = ok ? snapshot(a, &n0) : NULL;
  int failures = 0, added = 0;
  for (int k = 1; s0 && k < 1000 && !added; k++) {
    nalloc = 0, fail_at = k, counting = 1;
    tl_status st = add_quadruped(a, m);
    counting = 0, fail_at = 0;
    if (st == TL_OK) {
      added = 1;
      break;
    }
    failures++;
    unsigned char *s1 = snapshot(a, &n1);
    if (!TL_CHECK(st == TL_ERR_MEMORY && tl_world_nsystem(a) == 6 && s1 && n1 == n0 && !memcmp(s0, s1, n0),
                  "allocation %d failing: status %d (%s), %d systems, the world %s", k, (int)st, err.message,
                  tl_world_nsystem(a), s1 && n1 == n0 && !memcmp(s0, s1, n0) ? "unchanged" : "CHANGED"))
      ok = 0;
    free(s1);
  }
  size_t bytes1 = tl_world_workspace_bytes(a);
  ok = ok && TL_CHECK(added, "the quadruped was never added") &&
       TL_CHECK(add_quadruped(b, m) == TL_OK, "twin: %s", err.message);
  ok = ok && steps(a, 300) && steps(b, 300);
  unsigned char *ea = ok ? snapshot(a, &na) : NULL, *eb = ok ? snapshot(b, &nb) : NULL;
  if (ea && eb) {
    int same = na == nb && !memcmp(ea, eb, na);
    printf("out of memory: each of the %d allocations of adding a quadruped failed in turn (arena %zu -> %zu "
           "bytes once added): TL_ERR_MEMORY, the world unchanged; 300 steps later it equals a twin's: %s\n",
           failures, bytes0, bytes1, same ? "identical" : "DIFFERENT");
    TL_CHECK(bytes1 > bytes0, "adding the quadruped did not grow the arena (%zu bytes)", bytes0);
    TL_CHECK(tl_world_workspace_bytes(b) == bytes1, "the twin's arena differs (%zu, %zu bytes)",
             tl_world_workspace_bytes(b), bytes1);
    TL_CHECK(same, "the failed additions changed the world's steps");
  }
  free(s0);
  free(ea);
  free(eb);
  tl_model_free(m);
  tl_world_free(a);
  tl_world_free(b);
}

/* ---------------------------------------------------------------- on a plugin */

/* The systems' step scratch is the native engine's: on a plugin world (ODE) it is absent, and the
 * queries that used it (the effective inverse mass matrix) answer without it, the same as on the
 * native engine bit for bit; the arena is 0 bytes there and is laid out again back on talus. */
static int check_plugin(const char *robots) {
  const tl_engine_api *ode = NULL;
  if (tl_engine_find("ode", &ode, NULL) != TL_OK) {
    printf("SKIPPED: the ODE plugin is not built\n");
    return TL_TEST_SKIP_CODE;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_model *m = NULL;
  tl_world *w = pile_world(2);
  int ok = w && TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "%s: %s", path, err.message) &&
           TL_CHECK(add_quadruped(w, m) == TL_OK, "add: %s", err.message);
  tl_system *s = ok ? tl_world_system(w, 2) : NULL;
  int nv = s ? tl_system_nv(s) : 0;
  double kp[64], kd[64], Mn[64 * 64], Mo[64 * 64];
  for (int k = 0; k < nv; k++) kp[k] = k < 6 ? 0 : 100, kd[k] = k < 6 ? 0 : 3;
  ok = ok && nv <= 64 && tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK && steps(w, 20) &&
       TL_CHECK(tl_system_effective_inverse_mass_matrix(s, Mn, nv, &err) == TL_OK, "native: %s", err.message);
  size_t native_bytes = ok ? tl_world_workspace_bytes(w) : 0;
  ok = ok && TL_CHECK(tl_world_set_engine(w, "ode", &err) == TL_OK, "to ode: %s", err.message) &&
       TL_CHECK(tl_system_effective_inverse_mass_matrix(s, Mo, nv, &err) == TL_OK, "ode: %s", err.message);
  size_t ode_bytes = ok ? tl_world_workspace_bytes(w) : 1;
  ok = ok && steps(w, 10) && TL_CHECK(tl_world_set_engine(w, "talus", &err) == TL_OK, "back: %s", err.message) &&
       steps(w, 10);
  size_t back_bytes = ok ? tl_world_workspace_bytes(w) : 0;
  if (ok) {
    int same = !memcmp(Mn, Mo, (size_t)nv * (size_t)nv * sizeof(double));
    printf("plugin: arena %zu bytes on talus, %zu on ode, %zu back on talus; M_eff^-1 on ode %s the native one\n",
           native_bytes, ode_bytes, back_bytes, same ? "equals" : "DIFFERS FROM");
    TL_CHECK(same, "the effective inverse mass matrix changed with the engine");
    TL_CHECK(native_bytes > 0 && ode_bytes == 0 && back_bytes == native_bytes, "arena bytes %zu, %zu, %zu",
             native_bytes, ode_bytes, back_bytes);
  }
  tl_model_free(m);
  tl_world_free(w);
  return tl_test_finish();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "pile";
  if (!strcmp(mode, "pile")) {
    check_no_alloc("pile of boxes", make_pile, NULL);
    check_one_block();
  } else if (!strcmp(mode, "anymal")) {
    const char *shared = tl_test_shared_dir(argc, argv, 2);
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/robots/anymal_c/urdf/anymal.urdf", shared ? shared : "");
    if (!shared || stat(path, &sb) != 0) {
      printf("SKIPPED: %s is absent (the shared robots)\n", path);
      return TL_TEST_SKIP_CODE;
    }
    check_no_alloc("ANYmal C", anymal_world, shared);
  } else if (!strcmp(mode, "snapshot")) {
    check_snapshot();
  } else if (!strcmp(mode, "plugin")) {
    return check_plugin(argc > 3 ? argv[3] : "robots");
  } else if (!strcmp(mode, "memory")) {
    check_out_of_memory(argc > 3 ? argv[3] : "robots");
  } else {
    printf("unknown mode '%s'\n", mode);
    return 2;
  }
  return tl_test_finish();
}
