/* Internal: the engine layer (src/engine/): engines other than the native
 * one, and the native one behind the plugin interface.
 *
 *   engine_scene.c     tl_engine_model_view, tl_engine_scene_of_world
 *   engine_registry.c  tl_engine_find: the native table or a plugin (dlopen), search path, ABI check
 *   engine_native.c    the native engine's tl_engine_api (tl_engine_native), built on the public API
 *   engine_link.c      a world bound to a plugin: the plugin link's world engine table
 *                      (world/world_engine.h), tl_world_set_engine
 *
 * Dependencies run one way: the engine layer builds on the world's facade
 * (world/world_internal.h: the description, tl_world_use_engine) and never
 * on the native engine's internals (src/native, the contact layer's
 * workspace headers); the native engine knows nothing of this layer (the
 * test `layering` checks both). A world on the native engine has
 * w->engine == tl_native_world_engine(); tl_world_set_engine swaps in the
 * link's table, whose operations find the link in w->engine_data. */
#ifndef TALUS_ENGINE_INTERNAL_H
#define TALUS_ENGINE_INTERNAL_H

#include "talus/engine_plugin.h"
#include "talus/world.h"

/* Split "NAME[:OPTIONS]": NAME into name (cap bytes); returns the options
 * ("" if none) or NULL (after filling err) for a malformed name. */
const char *tl_engine_split_name(const char *engine, char *name, size_t cap, tl_error *err);

#endif
