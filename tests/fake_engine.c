/* Guards: src/engine/engine_registry.c (a plugin of another ABI refused, both versions named); a
 * fixture of test_engine.c, mode plugins. */
/* A plugin built for another engine ABI (tests/test_engine.c, mode plugins):
 * the registry must refuse it and say which versions differ. Its table has
 * nothing but the fields the check reads. */
#include <string.h>

#include "talus/engine_plugin.h"

static tl_engine_api fake_api;

__attribute__((visibility("default"))) const tl_engine_api *tl_engine_plugin_entry(int host_abi_version) {
  (void)host_abi_version;
  memset(&fake_api, 0, sizeof(fake_api));
  fake_api.abi_version = 999;
  fake_api.api_size = sizeof(tl_engine_api);
  fake_api.name = "fake";
  fake_api.version = "fake 0";
  fake_api.description = "a plugin of another ABI";
  return &fake_api;
}
