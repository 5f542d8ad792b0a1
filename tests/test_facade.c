/* Guards: src/world/world.c (tl_world_use_engine: the world's engine table swapped, a refused
 * switch rolled back), src/native/native.c (the native workspace attached and detached),
 * src/native/native_snapshot.c (the snapshot's contact section through the engine table),
 * src/engine/engine_link.c (the plugin link's table, tl_world_set_engine).
 *
 * The world is a facade over its engine (issue 22 §1):
 *  1. a refused engine switch (ODE lacks joint velocity limits; the link's attach refuses it)
 *     leaves the world on the native engine with its workspace untouched: its contacts and warm
 *     starts carry on, and the next steps are bit for bit those of a twin world never asked to
 *     switch (a switch that detached the old engine first would lose the warm starts);
 *  2. on a plugin the snapshot is refused (the link has no snapshot hooks); back on the native
 *     engine a fresh workspace serves (no contacts yet), and a snapshot taken then restores bit
 *     for bit: the next 10 steps replay exactly.
 * Usage: test_facade ROBOTS_DIR. Skipped (77) without the ODE plugin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

#define NQ 7
#define NV 6

static tl_world *box_world(const tl_model *m, tl_system **s) {
  tl_world *w = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_world_create(&w, &err) == TL_OK, "create: %s", err.message)) return NULL;
  /* tilted, one edge in the ground: contacts from the first step */
  double q[NQ] = {0.01, -0.02, 0.09, cos(0.1), sin(0.1), 0, 0}, u[NV] = {0.2, 0, 0, 0, 0.5, 0};
  if (!TL_CHECK(tl_world_add_ground(w, 0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, s, &err) == TL_OK &&
                    tl_system_set_state(*s, q, NQ, u, NV, &err) == TL_OK &&
                    tl_world_set_velocity_limits(w, 1, &err) == TL_OK,
                "world: %s", err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

static void steps(tl_world *w, int n) {
  for (int i = 0; i < n; i++) {
    tl_error err;
    memset(&err, 0, sizeof err);
    if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "step: %s", err.message)) return;
  }
}

/* q and u of s into x (NQ + NV). */
static void state(const tl_system *s, double *x) { tl_system_get_state(s, x, NQ, x + NQ, NV, NULL); }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_facade ROBOTS_DIR\n");
    return 2;
  }
  const tl_engine_api *ode = NULL;
  if (tl_engine_find("ode", &ode, NULL) != TL_OK) {
    printf("SKIPPED: the ODE plugin is not built (it refuses joint velocity limits, which this test uses)\n");
    return TL_TEST_SKIP_CODE;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/box/box.urdf", argv[1]);
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FLOATING;
  if (!TL_CHECK(tl_model_load_urdf(path, &lo, &m, &err) == TL_OK, "load %s: %s", path, err.message)) return tl_test_finish();
  tl_system *sa = NULL, *sb = NULL;
  tl_world *a = box_world(m, &sa), *b = box_world(m, &sb);
  if (a && b) {
    /* 1. refused switch: still native, workspace and warm starts kept */
    steps(a, 200);
    steps(b, 200);
    int nc = tl_world_ncontact(a);
    TL_CHECK(nc > 0 && nc == tl_world_ncontact(b), "resting box: %d and %d contacts", nc, tl_world_ncontact(b));
    size_t size = tl_world_snapshot_size(a);
    memset(&err, 0, sizeof err);
    tl_status st = tl_world_set_engine(a, "ode", &err);
    TL_CHECK(st == TL_ERR_UNSUPPORTED && strstr(err.message, "velocity"), "ode with velocity limits: status %d (%s)",
             (int)st, err.message);
    TL_CHECK(!strcmp(tl_world_engine_name(a), "talus"), "engine after the refused switch: %s", tl_world_engine_name(a));
    TL_CHECK(tl_world_ncontact(a) == nc && tl_world_snapshot_size(a) == size,
             "refused switch: %d contacts (had %d), snapshot %zu bytes (had %zu)", tl_world_ncontact(a), nc,
             tl_world_snapshot_size(a), size);
    steps(a, 50);
    steps(b, 50);
    double xa[NQ + NV], xb[NQ + NV];
    state(sa, xa);
    state(sb, xb);
    TL_CHECK(!memcmp(xa, xb, sizeof xa), "after a refused switch the steps match the twin's bit for bit "
             "(z %.17g vs %.17g)", xa[2], xb[2]);

    /* 2. to a plugin and back */
    tl_world_set_velocity_limits(a, 0, NULL);
    memset(&err, 0, sizeof err);
    TL_CHECK(tl_world_set_engine(a, "ode", &err) == TL_OK, "to ode: %s", err.message);
    steps(a, 20);
    unsigned char small[64];
    memset(&err, 0, sizeof err);
    TL_CHECK(tl_world_snapshot_save(a, small, sizeof small, NULL, &err) == TL_ERR_UNSUPPORTED,
             "snapshot on ode refused: %s", err.message);
    memset(&err, 0, sizeof err);
    TL_CHECK(tl_world_set_engine(a, "talus", &err) == TL_OK, "back to talus: %s", err.message);
    TL_CHECK(!strcmp(tl_world_engine_name(a), "talus") && tl_world_ncontact(a) == 0,
             "back on talus: engine %s, %d contacts (a fresh workspace has none)", tl_world_engine_name(a),
             tl_world_ncontact(a));
    steps(a, 30);
    size_t n = tl_world_snapshot_size(a);
    unsigned char *snap = malloc(n);
    memset(&err, 0, sizeof err);
    if (TL_CHECK(snap && tl_world_snapshot_save(a, snap, n, NULL, &err) == TL_OK, "snapshot: %s", err.message)) {
      int c0 = tl_world_ncontact(a);
      steps(a, 10);
      state(sa, xa);
      memset(&err, 0, sizeof err);
      TL_CHECK(tl_world_snapshot_restore(a, snap, n, &err) == TL_OK && tl_world_ncontact(a) == c0,
               "restore: %s (%d contacts, saved %d)", err.message, tl_world_ncontact(a), c0);
      steps(a, 10);
      state(sa, xb);
      TL_CHECK(c0 > 0 && !memcmp(xa, xb, sizeof xa), "the restored native world replays bit for bit (%d contacts; "
               "z %.17g vs %.17g)", c0, xa[2], xb[2]);
    }
    free(snap);
  }
  tl_world_free(a);
  tl_world_free(b);
  tl_model_free(m);
  return tl_test_finish();
}
