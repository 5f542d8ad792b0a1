/* libFuzzer harness of the engine option strings ("NAME[:KEY=VALUE,...]",
 * talus/world.h): every input (up to its first NUL) is an engine string.
 *   1. The plugins' option parser (plugins/common/tlp_util.c, compiled into
 *      this program) on the part after ':': tlp_unknown_option against the
 *      MuJoCo and ODE keys, tlp_option for each key (the value must be a
 *      NUL-terminated prefix-free copy within the given capacity).
 *   2. tl_world_set_engine on a fresh world (robots/worlds/boxes_and_balls.xml):
 *      the name check, the plugin search (TALUS_PLUGIN_PATH = this build's
 *      plugins/), the plugin's own reading of the options and its world
 *      build; an accepted engine is stepped once. A refusal must come with a
 *      message and leave the world on its engine.
 *   3. The controller strings of the same shape ("NAME[:KEY=VALUE,...]",
 *      tl_controller_spec_parse: talus simulate --controller, sweeps).
 * Seeds: tests/fuzz/seeds/engine_options/. */
#include "fuzz_util.h"

#include "controller.h"
#include "talus/scene.h"
#include "talus/world.h"
#include "tlp_util.h"

#ifndef TALUS_FUZZ_PLUGIN_DIR
#error "compile with -DTALUS_FUZZ_PLUGIN_DIR=\"...\""
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  setenv("TALUS_PLUGIN_PATH", TALUS_FUZZ_PLUGIN_DIR, 1);
  return 0;
}

static void options(const char *opt) {
  static const char *const mujoco[] = {"cone", "solver", "impratio", "iterations", NULL};
  static const char *const ode[] = {"iterations", "sor", NULL};
  const char *const *lists[] = {mujoco, ode};
  char bad[64], val[16];
  for (int l = 0; l < 2; l++) {
    memset(bad, 'x', sizeof bad);
    if (tlp_unknown_option(opt, lists[l], bad, sizeof bad))
      FUZZ_ASSERT(memchr(bad, '\0', sizeof bad) != NULL, "tlp_unknown_option: unterminated key");
    for (int k = 0; lists[l][k]; k++) {
      memset(val, 'x', sizeof val);
      if (tlp_option(opt, lists[l][k], val, sizeof val)) {
        FUZZ_ASSERT(memchr(val, '\0', sizeof val) != NULL, "tlp_option: unterminated value");
        FUZZ_ASSERT(strchr(val, ',') == NULL, "tlp_option: value '%s' runs into the next option", val);
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  FUZZ_ASSERT(text, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';
  const char *colon = strchr(text, ':');
  options(colon ? colon + 1 : "");

  tl_world *w = NULL;
  tl_error err;
  FUZZ_ASSERT(!tl_scene_load(TALUS_SOURCE_DIR "/robots/worlds/boxes_and_balls.xml", &w, NULL, &err),
              "cannot load the harness's world: %s", err.message);
  tl_status st = tl_world_set_engine(w, text, &err);
  if (st) {
    FUZZ_ASSERT(err.message[0] != '\0', "a refused engine without a message (status %d)", (int)st);
    FUZZ_ASSERT(!strcmp(tl_world_engine_name(w), "talus"), "a refused engine '%s' left the world on '%s'", text,
                tl_world_engine_name(w));
  } else {
    tl_world_step(w, &err);
  }
  tl_world_free(w);

  tl_controller_spec spec = tl_controller_spec_default();
  st = tl_controller_spec_parse(text, &spec, &err);
  if (st) FUZZ_ASSERT(err.message[0] != '\0', "a refused controller without a message (status %d)", (int)st);
  free(text);
  return 0;
}
