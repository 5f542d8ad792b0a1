/* Internal: how a tl_world reaches its engine (src/engine/).
 *
 *   engine_scene.c     tl_engine_model_view, tl_engine_scene_of_world
 *   engine_registry.c  tl_engine_find: the native table or a plugin (dlopen), search path, ABI check
 *   engine_native.c    the native engine's table (tl_engine_native)
 *   engine_link.c      a world bound to a plugin: build, state and control exchange, the step
 *
 * A world on the native engine has world->engine == NULL and runs the code
 * of src/world/ unchanged; the public functions a plugin must serve start
 * with one branch on world->engine (tl_world_integrate1/2, tl_world_ncontact,
 * tl_world_contact, tl_world_solver_stats, tl_world_set_solver, tl_world_free). */
#ifndef TALUS_ENGINE_INTERNAL_H
#define TALUS_ENGINE_INTERNAL_H

#include "talus/engine_plugin.h"
#include "talus/world.h"

typedef struct tl_engine_link tl_engine_link;

/* Dispatch targets of the world's hooks (world->engine != NULL). */
tl_status tl_engine_link_integrate1(tl_world *w, tl_error *err);
tl_status tl_engine_link_integrate2(tl_world *w, tl_error *err);
int tl_engine_link_ncontact(const tl_world *w);
tl_status tl_engine_link_contact(const tl_world *w, int k, tl_contact_info *out, tl_error *err);
tl_status tl_engine_link_solver_stats(const tl_world *w, tl_solver_stats *out, tl_error *err);
/* TL_OK if the world's engine offers `solver`, else TL_ERR_UNSUPPORTED. */
tl_status tl_engine_link_check_solver(const tl_world *w, tl_solver solver, tl_error *err);
/* TL_OK if the world's engine has `feature` (a tl_engine_feature bit), else
 * TL_ERR_UNSUPPORTED naming it. */
tl_status tl_engine_link_check_feature(const tl_world *w, unsigned feature, tl_error *err);
void tl_engine_link_free(tl_engine_link *link);

/* Split "NAME[:OPTIONS]": NAME into name (cap bytes); returns the options
 * ("" if none) or NULL (after filling err) for a malformed name. */
const char *tl_engine_split_name(const char *engine, char *name, size_t cap, tl_error *err);

#endif
