/* libFuzzer harness of the snapshot loader (tl_world_snapshot_restore,
 * src/world/snapshot.c): every input is a snapshot restored into one world,
 * robots/worlds/two_quadrupeds.xml (two articulated quadrupeds with PD gains
 * standing on the ground: contacts with impulses, PD gains and targets,
 * warm-start impulses) stepped STEPS steps.
 * Invariant (talus/world.h): "everything is checked before anything
 * changes": when the snapshot is refused, the world's own snapshot before
 * and after the call are byte-identical. An accepted snapshot is stepped
 * once; then the original state is restored (which must succeed), so every
 * input starts from the same world.
 * Seeds: snapshots of this world after 0, 1, 20, 100 and 150 steps, written by
 * the harness itself when TALUS_FUZZ_WRITE_SEEDS=DIR is set (scripts/fuzz.sh
 * and the replay test do it; the program then exits). */
#include "fuzz_util.h"

#include "talus/scene.h"
#include "talus/world.h"

#define STEPS 100

static tl_world *world;
static unsigned char *orig, *before, *after;
static size_t orig_len, cap;

static tl_world *build(void) {
  tl_world *w = NULL;
  tl_error err;
  tl_status st = tl_scene_load(TALUS_SOURCE_DIR "/robots/worlds/two_quadrupeds.xml", &w, NULL, &err);
  FUZZ_ASSERT(!st, "cannot load the snapshot harness's world: %s", err.message);
  return w;
}

static size_t snapshot(tl_world *w, unsigned char *buf) {
  size_t n = 0;
  tl_error err;
  FUZZ_ASSERT(tl_world_snapshot_size(w) <= cap, "snapshot of %zu bytes > %zu", tl_world_snapshot_size(w), cap);
  FUZZ_ASSERT(!tl_world_snapshot_save(w, buf, cap, &n, &err), "get_state: %s", err.message);
  return n;
}

static void step(tl_world *w, int n) {
  tl_error err;
  for (int i = 0; i < n; i++) FUZZ_ASSERT(!tl_world_step(w, &err), "step: %s", err.message);
}

static void write_seeds(const char *dir) {
  static const int at[] = {0, 1, 20, 100, 150};
  tl_world *w = build();
  int done = 0;
  for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
    step(w, at[k] - done);
    done = at[k];
    size_t n = snapshot(w, before);
    char path[4200];
    snprintf(path, sizeof path, "%s/two_quadrupeds_%03d.bin", dir, at[k]);
    fuzz_write(path, before, n);
  }
  tl_world_free(w);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  cap = 1 << 22;
  orig = malloc(cap), before = malloc(cap), after = malloc(cap);
  FUZZ_ASSERT(orig && before && after, "out of memory");
  const char *seeds = getenv("TALUS_FUZZ_WRITE_SEEDS");
  if (seeds && *seeds) {
    write_seeds(seeds);
    exit(0);
  }
  world = build();
  step(world, STEPS);
  FUZZ_ASSERT(tl_world_ncontact(world) > 0, "the snapshot harness's world has no contact after %d steps", STEPS);
  orig_len = snapshot(world, orig);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tl_error err;
  size_t nb = snapshot(world, before);
  tl_status st = tl_world_snapshot_restore(world, data, size, &err);
  if (st) {
    size_t na = snapshot(world, after);
    FUZZ_ASSERT(na == nb && memcmp(before, after, nb) == 0,
                "a refused snapshot (%s) changed the world: %zu bytes before, %zu after", err.message, nb, na);
    FUZZ_ASSERT(err.message[0] != '\0', "a refused snapshot without a message (status %d)", (int)st);
    return 0;
  }
  tl_world_step(world, &err); /* anything finite may be stepped; divergence is an answer */
  st = tl_world_snapshot_restore(world, orig, orig_len, &err);
  FUZZ_ASSERT(!st, "the original snapshot is refused after a fuzzed one: %s", err.message);
  return 0;
}
