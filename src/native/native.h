/* The native engine as the world sees it (src/native/native.c): its
 * tl_world_engine table. Everything else of the native engine is internal
 * to src/native and src/contact (native/native_internal.h). */
#ifndef TALUS_NATIVE_H
#define TALUS_NATIVE_H

#include "world/world_engine.h"

/* The native engine's table (world/world_engine.h); a static object. */
const tl_world_engine *tl_native_world_engine(void);

#endif
