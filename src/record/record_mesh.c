/* Visual meshes for the viewer: read with assimp, one part per material
 * colour, decimated by vertex clustering when large.
 *
 * COLLADA: assimp turns Z_UP / X_UP files to Y_UP through the root node's
 * transform; ROS tools (RViz skips that root transform) and URDF authors
 * expect the file's own axes, so the up-direction conversion is switched off
 * (AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION); the <unit> scale is kept. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "record/record_internal.h"

/* Largest visual mesh read (vertices over all its meshes). */
#define TL_REC_MESH_MAX_VERTS 20000000

void tl_rec_mesh_free(tl_rec_mesh *m) {
  if (!m) return;
  for (int i = 0; i < m->npart; ++i) {
    free(m->part[i].vert);
    free(m->part[i].tri);
  }
  free(m->part);
  memset(m, 0, sizeof(*m));
}

static void part_colour(const struct aiScene *sc, const struct aiMesh *mesh, double rgba[4]) {
  rgba[0] = rgba[1] = rgba[2] = 0.7, rgba[3] = -1;
  if (mesh->mMaterialIndex >= sc->mNumMaterials) return;
  const struct aiMaterial *mat = sc->mMaterials[mesh->mMaterialIndex];
  struct aiColor4D c;
  if (aiGetMaterialColor(mat, AI_MATKEY_COLOR_DIFFUSE, &c) != aiReturn_SUCCESS) return;
  float opacity = 1;
  if (aiGetMaterialFloatArray(mat, AI_MATKEY_OPACITY, &opacity, NULL) != aiReturn_SUCCESS) opacity = 1;
  rgba[0] = c.r, rgba[1] = c.g, rgba[2] = c.b;
  rgba[3] = fmin(c.a, opacity);
  if (!(rgba[3] > 0.05)) rgba[3] = 1; /* an exporter's 0 alpha would hide the part */
}

/* Triangles of one aiMesh into a part (faces that are not triangles are skipped). */
static int read_part(const struct aiScene *sc, const struct aiMesh *mesh, const double s[3], tl_rec_mesh_part *p) {
  int ntri = 0;
  for (unsigned f = 0; f < mesh->mNumFaces; ++f) ntri += mesh->mFaces[f].mNumIndices == 3;
  p->nvert = (int)mesh->mNumVertices;
  p->vert = malloc((size_t)(p->nvert > 0 ? p->nvert : 1) * 3 * sizeof(float));
  p->tri = malloc((size_t)(ntri > 0 ? ntri : 1) * 3 * sizeof(uint32_t));
  if (!p->vert || !p->tri) return -1;
  for (int v = 0; v < p->nvert; ++v) {
    p->vert[3 * v] = (float)(mesh->mVertices[v].x * s[0]);
    p->vert[3 * v + 1] = (float)(mesh->mVertices[v].y * s[1]);
    p->vert[3 * v + 2] = (float)(mesh->mVertices[v].z * s[2]);
  }
  /* a negative scale mirrors the mesh: flip the winding to keep faces outward */
  int flip = s[0] * s[1] * s[2] < 0;
  for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
    const struct aiFace *face = &mesh->mFaces[f];
    if (face->mNumIndices != 3) continue;
    uint32_t *t = p->tri + 3 * p->ntri++;
    t[0] = face->mIndices[0];
    t[1] = face->mIndices[flip ? 2 : 1];
    t[2] = face->mIndices[flip ? 1 : 2];
  }
  part_colour(sc, mesh, p->rgba);
  return 0;
}

static const struct aiScene *import(const char *file) {
  struct aiPropertyStore *props = aiCreatePropertyStore();
  if (!props) return NULL;
  aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
  /* drop points and lines, so only triangle meshes remain */
  aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const struct aiScene *sc = aiImportFileExWithProperties(
      file,
      aiProcess_Triangulate | aiProcess_PreTransformVertices | aiProcess_JoinIdenticalVertices |
          aiProcess_SortByPType,
      NULL, props);
  aiReleasePropertyStore(props);
  return sc;
}

int tl_rec_mesh_read(const char *file, const double scale[3], int max_tri, tl_rec_mesh *out, char *why,
                     size_t whylen) {
  memset(out, 0, sizeof(*out));
  const struct aiScene *sc = import(file);
  if (!sc) {
    snprintf(why, whylen, "assimp cannot read it: %s", aiGetErrorString());
    return -1;
  }
  long long nvert = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) nvert += sc->mMeshes[i]->mNumVertices;
  if (nvert > TL_REC_MESH_MAX_VERTS || sc->mNumMeshes == 0) {
    snprintf(why, whylen, nvert ? "it has %lld vertices, more than %d" : "it has no triangles", nvert,
             TL_REC_MESH_MAX_VERTS);
    aiReleaseImport(sc);
    return -1;
  }
  out->part = calloc(sc->mNumMeshes, sizeof(tl_rec_mesh_part));
  int ok = out->part != NULL;
  for (unsigned i = 0; ok && i < sc->mNumMeshes; ++i) {
    if (!(sc->mMeshes[i]->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;
    ok = read_part(sc, sc->mMeshes[i], scale, &out->part[out->npart++]) == 0;
  }
  aiReleaseImport(sc);
  long long ntri = 0;
  for (int i = 0; ok && i < out->npart; ++i) ntri += out->part[i].ntri;
  if (ok && ntri > max_tri) {
    out->decimated_from = (int)ntri;
    /* each part keeps its share of the budget */
    for (int i = 0; ok && i < out->npart; ++i) {
      int budget = (int)((double)max_tri * out->part[i].ntri / (double)ntri);
      ok = tl_rec_mesh_decimate(&out->part[i], budget > 4 ? budget : 4) == 0;
    }
  }
  if (!ok) {
    tl_rec_mesh_free(out);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* vertex clustering                                                         */

typedef struct cell_map {
  size_t cap;           /* power of two */
  long long *key;       /* packed cell coordinates, -1: empty slot */
  int *id;
} cell_map;

static size_t hash_key(long long k) {
  unsigned long long x = (unsigned long long)k;
  x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33;
  return (size_t)x;
}

/* Cluster id of each vertex for cell size h; returns the number of clusters or -1. */
static int cluster(const tl_rec_mesh_part *p, const float lo[3], double h, cell_map *m, int *vid) {
  for (size_t i = 0; i < m->cap; ++i) m->key[i] = -1;
  int n = 0;
  for (int v = 0; v < p->nvert; ++v) {
    long long c[3];
    for (int k = 0; k < 3; ++k) c[k] = (long long)floor((p->vert[3 * v + k] - lo[k]) / h);
    long long key = (c[0] & 0x1fffff) | ((c[1] & 0x1fffff) << 21) | ((c[2] & 0x1fffff) << 42);
    size_t s = hash_key(key) & (m->cap - 1);
    while (m->key[s] != -1 && m->key[s] != key) s = (s + 1) & (m->cap - 1);
    if (m->key[s] == -1) m->key[s] = key, m->id[s] = n++;
    vid[v] = m->id[s];
  }
  return n;
}

/* Triangles that survive clustering vid (its three corners in distinct cells). */
static int surviving(const tl_rec_mesh_part *p, const int *vid) {
  int n = 0;
  for (int t = 0; t < p->ntri; ++t) {
    int a = vid[p->tri[3 * t]], b = vid[p->tri[3 * t + 1]], c = vid[p->tri[3 * t + 2]];
    n += a != b && b != c && a != c;
  }
  return n;
}

/* Replace p by its clustering vid (nc clusters): mean vertex per cluster, surviving triangles. */
static int apply_clusters(tl_rec_mesh_part *p, const int *vid, int nc) {
  float *vert = calloc((size_t)nc * 3, sizeof(float));
  int *count = calloc((size_t)nc, sizeof(int));
  if (!vert || !count) {
    free(vert);
    free(count);
    return -1;
  }
  for (int v = 0; v < p->nvert; ++v) {
    for (int k = 0; k < 3; ++k) vert[3 * vid[v] + k] += p->vert[3 * v + k];
    count[vid[v]]++;
  }
  for (int c = 0; c < nc; ++c)
    for (int k = 0; k < 3; ++k) vert[3 * c + k] /= (float)(count[c] ? count[c] : 1);
  int n = 0;
  for (int t = 0; t < p->ntri; ++t) {
    int a = vid[p->tri[3 * t]], b = vid[p->tri[3 * t + 1]], c = vid[p->tri[3 * t + 2]];
    if (a == b || b == c || a == c) continue;
    p->tri[3 * n] = (uint32_t)a, p->tri[3 * n + 1] = (uint32_t)b, p->tri[3 * n + 2] = (uint32_t)c;
    ++n;
  }
  free(count);
  free(p->vert);
  p->vert = vert;
  p->nvert = nc;
  p->ntri = n;
  return 0;
}

int tl_rec_mesh_decimate(tl_rec_mesh_part *p, int max_tri) {
  if (p->ntri <= max_tri || p->nvert == 0) return 0;
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int v = 0; v < p->nvert; ++v)
    for (int k = 0; k < 3; ++k) lo[k] = fminf(lo[k], p->vert[3 * v + k]), hi[k] = fmaxf(hi[k], p->vert[3 * v + k]);
  double diag = 0;
  for (int k = 0; k < 3; ++k) diag += (double)(hi[k] - lo[k]) * (hi[k] - lo[k]);
  diag = sqrt(diag);
  if (!(diag > 0)) return 0;
  cell_map m = {0};
  m.cap = 16;
  while (m.cap < 2 * (size_t)p->nvert) m.cap *= 2;
  m.key = malloc(m.cap * sizeof(long long));
  m.id = malloc(m.cap * sizeof(int));
  int *vid = malloc((size_t)p->nvert * sizeof(int));
  int rc = -1;
  if (m.key && m.id && vid) {
    /* a surface of about diag^2 area in cells of size h keeps ~2 (diag / h)^2 triangles: start
       a quarter below that size and grow the cells until the budget is met */
    double h = 0.25 * diag * sqrt(2.0 / max_tri);
    int nc = 0;
    for (int it = 0; it < 60; ++it, h *= 1.15) {
      nc = cluster(p, lo, h, &m, vid);
      if (surviving(p, vid) <= max_tri) break;
    }
    rc = apply_clusters(p, vid, nc);
  }
  free(m.key);
  free(m.id);
  free(vid);
  return rc;
}
