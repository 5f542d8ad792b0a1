/* Engine registry: the native table, or a plugin loaded with dlopen by name
 * (talus-engine-NAME.so) from TALUS_PLUGIN_PATH and the folders next to the
 * file that contains Talus (talus/engine.h). Loaded plugins are kept for the
 * life of the process (never dlclose'd: a world may still use them, and
 * unloading code that registered with its engine's runtime is not safe). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/engine_internal.h"

#define MAX_LOADED 16
#define MAX_DIRS 32
#define DIR_LEN 1024

typedef struct loaded_engine {
  char name[64];
  char path[DIR_LEN + 64];
  const tl_engine_api *api;
} loaded_engine;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_engine loaded[MAX_LOADED];
static int nloaded;

const char *tl_engine_split_name(const char *engine, char *name, size_t cap, tl_error *err) {
  if (!engine || !*engine) {
    tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine", "engine name must not be NULL or empty");
    return NULL;
  }
  const char *colon = strchr(engine, ':');
  size_t n = colon ? (size_t)(colon - engine) : strlen(engine);
  if (n == 0 || n >= cap || n >= 48) {
    tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine", "engine name '%s': expected NAME or NAME:OPTIONS, NAME of 1 to 47 characters", engine);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    char c = engine[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "engine",
                   "engine name '%.*s': only lower-case letters, digits, '_' and '-'", (int)n, engine);
      return NULL;
    }
  }
  memcpy(name, engine, n);
  name[n] = '\0';
  return colon ? colon + 1 : engine + n; /* into engine: the options or its terminating NUL */
}

/* out = a b c (any may be ""); -1 if it does not fit in cap bytes. */
static int join3(char *out, size_t cap, const char *a, const char *b, const char *c) {
  size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
  if (la + lb + lc + 1 > cap) return -1;
  memcpy(out, a, la);
  memcpy(out + la, b, lb);
  memcpy(out + la + lb, c, lc + 1);
  return 0;
}

/* The folders to search, in order: TALUS_PLUGIN_PATH, then next to the file
 * (program or shared library) that contains this code. */
static int search_dirs(char dirs[MAX_DIRS][DIR_LEN]) {
  int n = 0;
  const char *env = getenv("TALUS_PLUGIN_PATH");
  while (env && *env && n < MAX_DIRS) {
    const char *colon = strchr(env, ':');
    size_t len = colon ? (size_t)(colon - env) : strlen(env);
    if (len > 0 && len < DIR_LEN) {
      memcpy(dirs[n], env, len);
      dirs[n++][len] = '\0';
    }
    env = colon ? colon + 1 : NULL;
  }
  Dl_info info;
  if (dladdr((void *)&tl_engine_find, &info) && info.dli_fname && info.dli_fname[0]) {
    char self[PATH_MAX];
    if (!realpath(info.dli_fname, self) && join3(self, sizeof(self), info.dli_fname, "", "") != 0) return n;
    char *dir = dirname(self);
    /* a program in bin/ or the build tree; the Python extension in <build>/python/talus/ or in
     * <prefix>/lib/pythonX.Y/site-packages/talus/ (plugins in <prefix>/lib/talus/plugins/) */
    static const char *const rel[] = {"", "/plugins", "/../plugins", "/../lib/talus/plugins", "/../../plugins",
                                      "/../../../talus/plugins"};
    for (size_t k = 0; k < sizeof(rel) / sizeof(rel[0]) && n < MAX_DIRS; k++) {
      char path[DIR_LEN], real[PATH_MAX];
      if (join3(path, sizeof(path), dir, rel[k], "") != 0) continue;
      if (!realpath(path, real) && join3(real, sizeof(real), path, "", "") != 0) continue; /* listed even if absent */
      int dup = 0;
      for (int i = 0; i < n; i++) dup |= strcmp(dirs[i], real) == 0;
      if (!dup && join3(dirs[n], DIR_LEN, real, "", "") == 0) n++;
    }
  }
  return n;
}

void tl_engine_search_path(char *buf, size_t len) {
  char dirs[MAX_DIRS][DIR_LEN];
  int n = search_dirs(dirs);
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (int i = 0; i < n; i++) tl_str_append(buf, len, &used, "%s%s", i ? ":" : "", dirs[i]);
}

/* Names of the plugins present in the search folders, ", "-separated after "talus". */
static int list_names(char *buf, size_t len) {
  char dirs[MAX_DIRS][DIR_LEN];
  int n = search_dirs(dirs), count = 1;
  size_t used = 0, pre = strlen(TL_ENGINE_PLUGIN_PREFIX), suf = strlen(TL_ENGINE_PLUGIN_SUFFIX);
  if (len) buf[0] = '\0';
  tl_str_append(buf, len, &used, "talus");
  char seen[MAX_LOADED * 4][64];
  int nseen = 0;
  for (int i = 0; i < n; i++) {
    DIR *d = opendir(dirs[i]);
    if (!d) continue;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      size_t l = strlen(e->d_name);
      if (l <= pre + suf || strncmp(e->d_name, TL_ENGINE_PLUGIN_PREFIX, pre) != 0 ||
          strcmp(e->d_name + l - suf, TL_ENGINE_PLUGIN_SUFFIX) != 0 || l - pre - suf >= 64)
        continue;
      char name[64];
      memcpy(name, e->d_name + pre, l - pre - suf);
      name[l - pre - suf] = '\0';
      int dup = 0;
      for (int k = 0; k < nseen; k++) dup |= strcmp(seen[k], name) == 0;
      if (dup || nseen >= (int)(sizeof(seen) / sizeof(seen[0]))) continue;
      snprintf(seen[nseen++], 64, "%s", name);
      tl_str_append(buf, len, &used, ", %s", name);
      count++;
    }
    closedir(d);
  }
  return count;
}

int tl_engine_list(char *buf, size_t len) { return list_names(buf, len); }

/* Load plugin `name` from the first folder where it loads with the right
 * ABI; the reasons of the folders where it did not are appended to why. */
static const tl_engine_api *load_plugin(const char *name, char *why, size_t why_len, char *path_out) {
  char dirs[MAX_DIRS][DIR_LEN];
  int n = search_dirs(dirs);
  size_t used = strlen(why);
  for (int i = 0; i < n; i++) {
    char path[DIR_LEN + 64], file[128];
    if (join3(file, sizeof(file), "/" TL_ENGINE_PLUGIN_PREFIX, name, TL_ENGINE_PLUGIN_SUFFIX) != 0 ||
        join3(path, sizeof(path), dirs[i], file, "") != 0 || access(path, F_OK) != 0)
      continue;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      tl_str_append(why, why_len, &used, "%s cannot be loaded (%s); ", path, e ? e : "dlopen failed");
      continue;
    }
    tl_engine_plugin_entry_fn entry = NULL;
    *(void **)&entry = dlsym(h, TL_ENGINE_PLUGIN_ENTRY);
    const tl_engine_api *api = entry ? entry(TL_ENGINE_ABI_VERSION) : NULL;
    if (!api) {
      tl_str_append(why, why_len, &used, "%s has no %s or it returned NULL; ", path, TL_ENGINE_PLUGIN_ENTRY);
    } else if (api->abi_version != TL_ENGINE_ABI_VERSION || api->api_size != sizeof(tl_engine_api)) {
      tl_str_append(why, why_len, &used,
                    "%s was built for engine ABI version %d (table of %zu bytes), this Talus has "
                    "version %d (%zu bytes): rebuild the plugin; ",
                    path, api->abi_version, api->api_size, TL_ENGINE_ABI_VERSION, sizeof(tl_engine_api));
    } else if (!api->name || strcmp(api->name, name) != 0) {
      tl_str_append(why, why_len, &used, "%s calls itself '%s', not '%s'; ", path, api->name ? api->name : "(null)", name);
    } else {
      memcpy(path_out, path, strlen(path) + 1);
      return api; /* kept loaded for the life of the process */
    }
    dlclose(h);
  }
  return NULL;
}

tl_status tl_engine_find(const char *engine, const tl_engine_api **out, tl_error *err) {
  char name[64];
  if (out) *out = NULL;
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  if (!tl_engine_split_name(engine, name, sizeof(name), err)) return TL_ERR_ARGUMENT;
  if (strcmp(name, "talus") == 0) {
    *out = tl_engine_native();
    return TL_OK;
  }
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; i < nloaded; i++)
    if (strcmp(loaded[i].name, name) == 0) {
      *out = loaded[i].api;
      pthread_mutex_unlock(&registry_lock);
      return TL_OK;
    }
  char why[2048] = "", path[DIR_LEN + 64] = "";
  const tl_engine_api *api = nloaded < MAX_LOADED ? load_plugin(name, why, sizeof(why), path) : NULL;
  if (api) {
    loaded_engine *l = &loaded[nloaded++];
    snprintf(l->name, sizeof(l->name), "%s", name);
    join3(l->path, sizeof(l->path), path, "", "");
    l->api = api;
    *out = api;
  }
  pthread_mutex_unlock(&registry_lock);
  if (api) return TL_OK;
  char found[1024], dirs[MAX_DIRS * 64];
  list_names(found, sizeof(found));
  tl_engine_search_path(dirs, sizeof(dirs));
  for (char *c = dirs; *c; c++)
    if (*c == ':') *c = ',';
  if (nloaded >= MAX_LOADED && !why[0]) snprintf(why, sizeof(why), "more than %d plugins loaded; ", MAX_LOADED);
  return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "engine",
                      "engine '%s': %sno usable plugin " TL_ENGINE_PLUGIN_PREFIX "%s" TL_ENGINE_PLUGIN_SUFFIX
                      " (engines found: %s; folders searched: %s; set TALUS_PLUGIN_PATH to add folders)",
                      name, why, name, found, dirs);
}

/* ---------------- the user-facing view of a table (talus/engine.h) ---------------- */

const char *tl_engine_name(const tl_engine_api *api) { return api && api->name ? api->name : ""; }
const char *tl_engine_version(const tl_engine_api *api) { return api && api->version ? api->version : ""; }
const char *tl_engine_description(const tl_engine_api *api) {
  return api && api->description ? api->description : "";
}
void tl_engine_capabilities(const tl_engine_api *api, tl_engine_caps *caps) {
  if (!caps) return;
  memset(caps, 0, sizeof *caps);
  if (api && api->capabilities) api->capabilities(caps);
}
