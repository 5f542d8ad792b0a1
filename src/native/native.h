/* The native engine as the world sees it (src/native/native.c): its
 * tl_world_engine table and the size of a world with its workspace. Everything else of the native engine is internal
 * to src/native and src/contact (native/native_internal.h). */
#ifndef TALUS_NATIVE_H
#define TALUS_NATIVE_H

#include <stddef.h>

#include "world/world_engine.h"

/* The native engine's table (world/world_engine.h); a static object. */
const tl_world_engine *tl_native_world_engine(void);

/* Bytes tl_world_create allocates (zeroed) for a world: struct tl_world and,
 * behind it in the same block, the native engine's workspace (struct
 * tl_native, reached at a constant offset: native_internal.h, tl_native_of). */
size_t tl_native_world_size(void);

#endif
