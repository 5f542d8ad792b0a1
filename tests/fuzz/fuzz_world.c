/* libFuzzer harness of the world-file loader (talus/scene.h, src/scene/):
 * every input is a world file, written to robots/worlds/in.xml of a scratch
 * tree whose robots link into the source tree (fuzz_util.h), so the
 * project's world files load as in robots/worlds and mutations of their
 * URDF and heightmap paths reach real files. A world that loads is stepped
 * once (collision and solve of what the file built) and freed; a refused
 * file must leave *world NULL.
 * Seeds: the files of robots/worlds, tests/world_bad and tests/world_bad_constraint (scripts/fuzz.sh). */
#include "fuzz_util.h"

#include "talus/scene.h"

static char path[1200];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  char root[512];
  fuzz_scratch_tree("world", root, sizeof root);
  snprintf(path, sizeof path, "%s/robots/worlds/in.xml", root);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_write(path, data, size);
  tl_world *w = (tl_world *)1;
  tl_scene_info info;
  tl_error err;
  tl_status st = tl_scene_load(path, &w, &info, &err);
  if (st) {
    FUZZ_ASSERT(w == NULL, "a refused world file left a world (%s)", err.message);
    FUZZ_ASSERT(info.nsystem == 0 && info.systems == NULL, "a refused world file left %d systems", info.nsystem);
    FUZZ_ASSERT(err.message[0] != '\0', "a refused world file without a message (status %d)", (int)st);
    return 0;
  }
  FUZZ_ASSERT(w != NULL, "a loaded world is NULL");
  tl_world_step(w, &err); /* a diverging step is an answer, not a finding */
  tl_scene_info_free(&info);
  tl_world_free(w);
  return 0;
}
