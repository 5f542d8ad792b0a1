/* Guards: src/record/record_scene.c (collision geometry drawn for a missing visual mesh),
 * src/record/record_mesh.c. */
/* Visuals of a recording when a visual mesh is missing (issue 21 §5): a link
 * whose visual mesh is missing or cannot be read is drawn with its collision
 * geometry, and the warning names the file. tests/missing_visual_mesh.urdf
 * (see its comment) through tl_recorder_create; the scene's "visuals" hold,
 * per link:
 *   - base (mesh missing, coloured): its two collision geoms, a box and a
 *     hull, each with the type, size and pose of its "collisions" entry, in
 *     the visual's colour; the hull as a mesh visual whose one part is a
 *     mesh of the hull's vertices (6, the octahedron);
 *   - lid (two meshes missing, merged into base's body): its cylinder once;
 *   - arm (a box visual that exists): that box only, not its sphere;
 *   - tag (a mesh that exists but cannot be read): its capsule, grey;
 *   - ghost (mesh missing, no collision geometry): nothing;
 * no visual is an empty mesh (a mesh without parts), and the warnings name
 * every missing or unreadable file with its link. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "record/record_internal.h"
#include "talus/talus.h"
#include "tests/test_util.h"

/* Entries of array `arr` (visuals or collisions) whose "link" is `link`, at most max into out. */
static int of_link(const cJSON *arr, const char *link, const cJSON **out, int max) {
  int n = 0;
  const cJSON *o;
  cJSON_ArrayForEach(o, arr) {
    const cJSON *l = cJSON_GetObjectItem(o, "link");
    if (cJSON_IsString(l) && strcmp(l->valuestring, link) == 0) {
      if (n < max) out[n] = o;
      n++;
    }
  }
  return n;
}

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItem(o, key);
  return cJSON_IsString(x) ? x->valuestring : "";
}

/* Two number arrays equal (same length, same values). */
static int same_nums(const cJSON *a, const cJSON *b) {
  if (!cJSON_IsArray(a) || !cJSON_IsArray(b) || cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return 0;
  for (int i = 0; i < cJSON_GetArraySize(a); i++)
    if (cJSON_GetArrayItem(a, i)->valuedouble != cJSON_GetArrayItem(b, i)->valuedouble) return 0;
  return 1;
}

/* The visual v draws collision entry c: same type, size, pose, body. */
static int draws(const cJSON *v, const cJSON *c) {
  return strcmp(str_of(v, "type"), str_of(c, "type")) == 0 &&
         same_nums(cJSON_GetObjectItem(v, "size"), cJSON_GetObjectItem(c, "size")) &&
         same_nums(cJSON_GetObjectItem(v, "pos"), cJSON_GetObjectItem(c, "pos")) &&
         same_nums(cJSON_GetObjectItem(v, "quat"), cJSON_GetObjectItem(c, "quat")) &&
         cJSON_GetObjectItem(v, "body")->valuedouble == cJSON_GetObjectItem(c, "body")->valuedouble;
}

static int colour_is(const cJSON *v, double r, double g, double b) {
  const cJSON *c = cJSON_GetObjectItem(v, "color");
  return cJSON_IsArray(c) && cJSON_GetArraySize(c) == 4 && fabs(cJSON_GetArrayItem(c, 0)->valuedouble - r) < 1e-12 &&
         fabs(cJSON_GetArrayItem(c, 1)->valuedouble - g) < 1e-12 &&
         fabs(cJSON_GetArrayItem(c, 2)->valuedouble - b) < 1e-12;
}

/* A warning containing all of the given strings. */
static int warned(const tl_recorder *rec, const char *a, const char *b, const char *c) {
  for (int i = 0; i < tl_recorder_nwarning(rec); i++) {
    const char *w = tl_recorder_warning(rec, i);
    if (strstr(w, a) && strstr(w, b) && (!c || strstr(w, c))) return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: test_record_visuals TESTS_DIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/missing_visual_mesh.urdf", argv[1]);
  tl_error err;
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_recorder *rec = NULL;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK, "%s: %s", path, err.message))
    return tl_test_finish();
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK && tl_recorder_create(w, NULL, &rec, &err) == TL_OK;
  cJSON *scene = ok ? cJSON_ParseWithLength(rec->scene, rec->scene_len) : NULL;
  if (TL_CHECK(ok, "world / recorder: %s", err.message) && TL_CHECK(scene != NULL, "the scene is not JSON")) {
    const cJSON *vis = cJSON_GetObjectItem(scene, "visuals"), *col = cJSON_GetObjectItem(scene, "collisions");
    const cJSON *meshes = cJSON_GetObjectItem(scene, "meshes");
    const cJSON *v[8], *c[8];
    for (int i = 0; i < tl_recorder_nwarning(rec); i++) printf("warning: %s\n", tl_recorder_warning(rec, i));

    /* base: box and hull, in the visual's colour */
    int nv = of_link(vis, "base", v, 8), nc = of_link(col, "base", c, 8);
    if (TL_CHECK(nv == 2 && nc == 2, "base: %d visuals for %d collision geoms, expected 2 and 2", nv, nc)) {
      for (int i = 0; i < 2; i++) {
        TL_CHECK(draws(v[i], c[i]), "base: visual %d (%s) does not draw collision geom %d (%s)", i, str_of(v[i], "type"),
                 i, str_of(c[i], "type"));
        TL_CHECK(colour_is(v[i], 0.2, 0.4, 0.6), "base: visual %d not in the visual's colour", i);
      }
      const cJSON *parts = cJSON_GetObjectItem(v[1], "parts");
      const cJSON *part = cJSON_IsArray(parts) && cJSON_GetArraySize(parts) == 1 ? cJSON_GetArrayItem(parts, 0) : NULL;
      const cJSON *k = part ? cJSON_GetObjectItem(part, "mesh") : NULL;
      const cJSON *mesh = k ? cJSON_GetArrayItem(meshes, k->valueint) : NULL;
      const cJSON *kc = cJSON_GetObjectItem(c[1], "mesh");
      const cJSON *hull = kc ? cJSON_GetArrayItem(meshes, kc->valueint) : NULL;
      TL_CHECK(strcmp(str_of(v[1], "type"), "mesh") == 0 && mesh && hull &&
                   cJSON_GetObjectItem(mesh, "nvert")->valueint == 6 &&
                   strcmp(str_of(mesh, "positions"), str_of(hull, "positions")) == 0,
               "base: the hull is not drawn as a mesh visual of the hull's 6 vertices");
    }
    /* lid: its cylinder, once */
    nv = of_link(vis, "lid", v, 8), nc = of_link(col, "lid", c, 8);
    TL_CHECK(nv == 1 && nc == 1 && draws(v[0], c[0]) && strcmp(str_of(v[0], "type"), "cylinder") == 0,
             "lid: %d visuals, expected its cylinder once", nv);
    /* arm: the box visual, not the sphere */
    nv = of_link(vis, "arm", v, 8);
    TL_CHECK(nv == 1 && strcmp(str_of(v[0], "type"), "box") == 0, "arm: %d visuals, expected its box visual only", nv);
    /* tag: its capsule, grey */
    nv = of_link(vis, "tag", v, 8), nc = of_link(col, "tag", c, 8);
    TL_CHECK(nv == 1 && nc == 1 && draws(v[0], c[0]) && strcmp(str_of(v[0], "type"), "capsule") == 0 &&
                 colour_is(v[0], 0.72, 0.72, 0.72),
             "tag: %d visuals, expected its capsule in grey", nv);
    /* ghost: nothing */
    nv = of_link(vis, "ghost", v, 8);
    TL_CHECK(nv == 0, "ghost: %d visuals, expected none", nv);
    /* no empty mesh visual */
    int empty = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, vis) {
      const cJSON *parts = cJSON_GetObjectItem(o, "parts");
      empty += strcmp(str_of(o, "type"), "mesh") == 0 && (!cJSON_IsArray(parts) || cJSON_GetArraySize(parts) == 0);
    }
    TL_CHECK(empty == 0, "%d mesh visuals without parts (drawn as nothing)", empty);
    /* the warnings name the files */
    TL_CHECK(warned(rec, "meshes/no_such_part.stl", "'base'", "collision geometry"),
             "no warning names base's missing meshes/no_such_part.stl");
    TL_CHECK(warned(rec, "meshes/also_missing.dae", "'lid'", "collision geometry"),
             "no warning names lid's missing meshes/also_missing.dae");
    TL_CHECK(warned(rec, "garbage.stl", "'tag'", "cannot be read"), "no warning names tag's unreadable garbage.stl");
    TL_CHECK(warned(rec, "meshes/ghost.stl", "'ghost'", "no collision geometry"),
             "no warning names ghost's missing meshes/ghost.stl");
  }
  cJSON_Delete(scene);
  tl_recorder_free(rec);
  tl_world_free(w);
  tl_model_free(m);
  return tl_test_finish();
}
