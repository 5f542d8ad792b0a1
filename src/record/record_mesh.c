/* Visual meshes for the viewer: read by the one mesh reader of Talus
 * (tl_mesh_read, urdf/urdf_mesh.h: the same assimp import, units and
 * up-axis rules as the collision hulls, so a visual and the hull of the same
 * file sit in the same place), one part per material colour, <mesh scale>
 * applied, decimated by vertex clustering when large. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record_internal.h"
#include "urdf/urdf_mesh.h"

void tl_rec_mesh_free(tl_rec_mesh *m) {
  if (!m) return;
  for (int i = 0; i < m->npart; ++i) {
    free(m->part[i].vert);
    free(m->part[i].tri);
  }
  free(m->part);
  memset(m, 0, sizeof(*m));
}

/* A part of the file into a viewer part: float vertices scaled by s. */
static int read_part(const tl_mesh_part *m, const double s[3], tl_rec_mesh_part *p) {
  p->nvert = m->nvert;
  p->vert = malloc((size_t)(p->nvert > 0 ? p->nvert : 1) * 3 * sizeof(float));
  p->tri = malloc((size_t)(m->ntri > 0 ? m->ntri : 1) * 3 * sizeof(uint32_t));
  if (!p->vert || !p->tri) return -1;
  for (int v = 0; v < 3 * p->nvert; ++v) p->vert[v] = (float)(m->vert[v] * s[v % 3]);
  /* a negative scale mirrors the mesh: flip the winding to keep faces outward */
  int flip = s[0] * s[1] * s[2] < 0;
  p->ntri = m->ntri;
  for (int t = 0; t < m->ntri; ++t) {
    p->tri[3 * t] = m->tri[3 * t];
    p->tri[3 * t + 1] = m->tri[3 * t + (flip ? 2 : 1)];
    p->tri[3 * t + 2] = m->tri[3 * t + (flip ? 1 : 2)];
  }
  memcpy(p->rgba, m->rgba, sizeof(p->rgba));
  return 0;
}

int tl_rec_mesh_read(const char *file, const double scale[3], int max_tri, tl_rec_mesh *out, char *why,
                     size_t whylen) {
  memset(out, 0, sizeof(*out));
  tl_mesh mesh;
  if (tl_mesh_read(file, &mesh, why, whylen) != TL_MESH_OK) return -1;
  out->part = calloc((size_t)mesh.npart, sizeof(tl_rec_mesh_part));
  int ok = out->part != NULL;
  for (int i = 0; ok && i < mesh.npart; ++i) ok = read_part(&mesh.part[i], scale, &out->part[out->npart++]) == 0;
  tl_mesh_free(&mesh);
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
