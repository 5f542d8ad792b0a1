/* Mesh URIs of a parsed URDF: resolution, reading (assimp) and convex hulls
 * of collision meshes (qhull).
 *
 * URIs:
 *  - package://NAME/REST (also package:///NAME/REST, seen in Talos' files)
 *    and Gazebo's model://NAME/REST are searched, in this order:
 *      1. in each folder R of TALUS_PACKAGE_PATH, then ROS_PACKAGE_PATH
 *         (colon-separated), then the URDF's folder and each of its parents:
 *         R/NAME/REST, and R/REST when R itself is named NAME;
 *      2. a package that is nowhere on disk under its own name (a robot
 *         folder copied out of its ROS package, e.g. example-robot-data's
 *         `robots/panda_description/` now `panda/`): in the URDF's folder and
 *         each of its parents A, A/S for each tail S of NAME/REST, longest
 *         first, keeping at least two path components (one if REST has one);
 *  - file:///ABS/PATH (with %XX escapes) and absolute paths: as written;
 *    file://REL and relative paths: from the URDF's folder;
 *  - http://, https://, ftp:// and any other scheme: refused (Talus reads
 *    local files only).
 * Only regular files count: a FIFO or a device (/dev/zero) is never opened.
 *
 * Mesh files are read by tl_mesh_read (below, urdf/urdf_mesh.h: one assimp
 * import, one set of unit and up-axis rules, which the recorder's visual
 * meshes use too). Collision meshes (.stl, .obj, .dae) are read so, scaled
 * by <mesh scale>, and replaced by their convex hull computed with qhull
 * (Barber, Dobkin and
 * Huhdanpaa, "The Quickhull algorithm for convex hulls", ACM TOMS 22(4),
 * 1996), reentrant libqhull_r, option Qt (triangulated output); a flat point
 * set is retried with QJ (joggled input). Hull vertices are the original
 * (scaled) mesh vertices; triangles are oriented counter-clockwise seen from
 * outside; zero-area triangles are dropped. A file used by several geoms is
 * read once per load. Visual meshes are only resolved: a missing one is a
 * warning. */
#define _XOPEN_SOURCE 700

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <libqhull_r/qhull_ra.h>

#include "base/error.h"
#include "urdf/urdf_doc.h"
#include "urdf/urdf_mesh.h"

typedef struct mesh_cache_entry {
  char path[TL_URDF_PATH_MAX];
  int n;
  double *pts; /* [n*3] unscaled */
} mesh_cache_entry;

typedef struct mesh_ctx {
  tl_urdf_doc *doc;
  char base[PATH_MAX];  /* absolute (when it exists) folder of the URDF */
  tl_error *err;
  mesh_cache_entry *cache;
  int ncache, capcache;
} mesh_ctx;

/* ------------------------------------------------------------------------ */
/* paths                                                                     */

static int is_regular_file(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

/* dst = a "/" b; 0 if it does not fit. */
static int join(char *dst, size_t cap, const char *a, const char *b) {
  size_t na = strlen(a);
  while (na > 1 && a[na - 1] == '/') na--;
  int n = snprintf(dst, cap, "%.*s%s%s", (int)na, a, (na == 1 && a[0] == '/') ? "" : "/", b);
  return n > 0 && (size_t)n < cap;
}

/* Copy the canonical form of the existing file p (no "..", no links) to out. */
static int set_found(char *out, size_t cap, const char *p) {
  char canon[PATH_MAX];
  const char *q = realpath(p, canon) ? canon : p;
  if (strlen(q) >= cap) return 0;
  memcpy(out, q, strlen(q) + 1);
  return 1;
}

/* Try root/rel: on success copy it to out and return 1. */
static int try_path(char *out, size_t cap, const char *root, const char *rel) {
  char p[PATH_MAX];
  if (!join(p, sizeof(p), root, rel) || !is_regular_file(p)) return 0;
  return set_found(out, cap, p);
}

/* Last component of a folder path ("" for "/"). */
static const char *base_name(const char *dir, size_t len, size_t *blen) {
  while (len > 1 && dir[len - 1] == '/') len--;
  size_t s = len;
  while (s > 0 && dir[s - 1] != '/') s--;
  *blen = len - s;
  return dir + s;
}

/* Parent of folder `dir` into `dir` (in place); 0 when dir is "/" or has no parent. */
static int parent_dir(char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
  char *slash = strrchr(dir, '/');
  if (!slash || (slash == dir && dir[1] == '\0')) return 0;
  if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  return 1;
}

/* R/NAME/REST, or R/REST when R is named NAME. */
static int try_root(char *out, size_t cap, const char *root, const char *name, const char *rest) {
  char rel[PATH_MAX];
  size_t blen;
  const char *b = base_name(root, strlen(root), &blen);
  if (join(rel, sizeof(rel), name, rest) && try_path(out, cap, root, rel)) return 1;
  return blen == strlen(name) && strncmp(b, name, blen) == 0 && try_path(out, cap, root, rest);
}

/* Every folder of a colon-separated environment variable. */
static int try_env(char *out, size_t cap, const char *var, const char *name, const char *rest) {
  const char *v = getenv(var);
  if (!v) return 0;
  while (*v) {
    const char *end = strchr(v, ':');
    size_t n = end ? (size_t)(end - v) : strlen(v);
    char root[PATH_MAX];
    if (n > 0 && n < sizeof(root)) {
      memcpy(root, v, n);
      root[n] = '\0';
      if (try_root(out, cap, root, name, rest)) return 1;
    }
    if (!end) break;
    v = end + 1;
  }
  return 0;
}

/* Number of '/'-separated components of s. */
static int ncomponents(const char *s) {
  int n = *s ? 1 : 0;
  for (; *s; s++)
    if (*s == '/' && s[1]) n++;
  return n;
}

/* package://NAME/REST: see the file comment for the search order. */
static int find_package(const mesh_ctx *c, char *out, size_t cap, const char *name, const char *rest) {
  char dir[PATH_MAX];
  if (try_env(out, cap, "TALUS_PACKAGE_PATH", name, rest)) return 1;
  if (try_env(out, cap, "ROS_PACKAGE_PATH", name, rest)) return 1;
  snprintf(dir, sizeof(dir), "%s", c->base);
  do {
    if (try_root(out, cap, dir, name, rest)) return 1;
  } while (parent_dir(dir));
  char full[PATH_MAX];
  if (!join(full, sizeof(full), name, rest)) return 0;
  int keep = ncomponents(rest) >= 2 ? 2 : 1;
  snprintf(dir, sizeof(dir), "%s", c->base);
  do {
    const char *tail = full;
    while (tail && ncomponents(tail) >= keep) {
      if (try_path(out, cap, dir, tail)) return 1;
      tail = strchr(tail, '/');
      if (tail) tail++;
    }
  } while (parent_dir(dir));
  return 0;
}

/* Decode %XX escapes of a file:// URI in place. */
static void percent_decode(char *s) {
  char *w = s;
  for (const char *r = s; *r; r++) {
    if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
      char hex[3] = {r[1], r[2], 0};
      *w++ = (char)strtol(hex, NULL, 16);
      r += 2;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

typedef enum uri_result { URI_FOUND, URI_MISSING, URI_NETWORK, URI_BAD } uri_result;

/* Resolve uri into out. On URI_BAD / URI_NETWORK, why says what is wrong. */
static uri_result resolve(const mesh_ctx *c, const char *uri, char *out, size_t cap, char *why,
                          size_t whycap) {
  out[0] = '\0';
  const char *sep = strstr(uri, "://");
  const char *colon = strchr(uri, ':');
  if (sep && colon == sep) {
    size_t slen = (size_t)(sep - uri);
    const char *body = sep + 3;
    if ((slen == 7 && strncasecmp(uri, "package", 7) == 0) ||
        (slen == 5 && strncasecmp(uri, "model", 5) == 0)) {
      while (*body == '/') body++;
      const char *slash = strchr(body, '/');
      if (!slash || slash == body || slash[1] == '\0') {
        snprintf(why, whycap, "expected %.*s://PACKAGE/PATH with a package name and a path in it",
                 (int)slen, uri);
        return URI_BAD;
      }
      char name[TL_URDF_NAME_MAX];
      size_t nlen = (size_t)(slash - body);
      if (nlen >= sizeof(name) || strcmp(slash + 1, "..") == 0 || strncmp(body, "..", nlen) == 0) {
        snprintf(why, whycap, "the package name is %s", nlen >= sizeof(name) ? "too long" : "'..'");
        return URI_BAD;
      }
      memcpy(name, body, nlen);
      name[nlen] = '\0';
      return find_package(c, out, cap, name, slash + 1) ? URI_FOUND : URI_MISSING;
    }
    if (slen == 4 && strncasecmp(uri, "file", 4) == 0) {
      char path[PATH_MAX];
      snprintf(path, sizeof(path), "%s", body);
      percent_decode(path);
      if (path[0] == '\0') {
        snprintf(why, whycap, "expected file:///PATH");
        return URI_BAD;
      }
      if (path[0] == '/') return is_regular_file(path) && set_found(out, cap, path) ? URI_FOUND : URI_MISSING;
      return try_path(out, cap, c->base, path) ? URI_FOUND : URI_MISSING;
    }
    int network = (slen == 4 && strncasecmp(uri, "http", 4) == 0) ||
                  (slen == 5 && strncasecmp(uri, "https", 5) == 0) ||
                  (slen == 3 && strncasecmp(uri, "ftp", 3) == 0);
    snprintf(why, whycap, network ? "network URIs are refused: Talus reads local files only"
                                  : "unknown URI scheme '%.*s': expected package://, file:// or a path",
             (int)(slen > 20 ? 20 : slen), uri);
    return network ? URI_NETWORK : URI_BAD;
  }
  if (uri[0] == '/') return is_regular_file(uri) && set_found(out, cap, uri) ? URI_FOUND : URI_MISSING;
  return try_path(out, cap, c->base, uri) ? URI_FOUND : URI_MISSING;
}

/* ------------------------------------------------------------------------ */
/* reading                                                                   */

static int has_extension(const char *path, const char *ext) {
  size_t n = strlen(path), m = strlen(ext);
  return n > m && strcasecmp(path + n - m, ext) == 0;
}

/* Fill c->err about geom g of link l (the <mesh> line) and return status. */
static tl_status mesh_fail(mesh_ctx *c, tl_status status, const tl_urdf_geom *g, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tl_status mesh_fail(mesh_ctx *c, tl_status status, const tl_urdf_geom *g, const char *fmt, ...) {
  char text[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  return tl_error_set(c->err, status, c->doc->path, g->shape_line ? g->shape_line : g->line, "mesh",
                      "%s", text);
}

/* ------------------------------------------------------------------------ */
/* the one mesh reader (urdf/urdf_mesh.h)                                    */

void tl_mesh_free(tl_mesh *m) {
  if (!m) return;
  for (int i = 0; i < m->npart; i++) {
    free(m->part[i].vert);
    free(m->part[i].tri);
  }
  free(m->part);
  memset(m, 0, sizeof(*m));
}

/* The diffuse colour of a mesh's material (rgba[3] = -1 when none). */
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

/* The triangles of one aiMesh into p (faces that are not triangles are skipped). */
static int read_part(const struct aiScene *sc, const struct aiMesh *mesh, tl_mesh_part *p) {
  int ntri = 0;
  for (unsigned f = 0; f < mesh->mNumFaces; f++) ntri += mesh->mFaces[f].mNumIndices == 3;
  p->nvert = (int)mesh->mNumVertices;
  p->vert = malloc((size_t)(p->nvert > 0 ? p->nvert : 1) * 3 * sizeof(double));
  p->tri = malloc((size_t)(ntri > 0 ? ntri : 1) * 3 * sizeof(uint32_t));
  if (!p->vert || !p->tri) return -1;
  for (int v = 0; v < p->nvert; v++) {
    p->vert[3 * v] = mesh->mVertices[v].x;
    p->vert[3 * v + 1] = mesh->mVertices[v].y;
    p->vert[3 * v + 2] = mesh->mVertices[v].z;
  }
  for (unsigned f = 0; f < mesh->mNumFaces; f++) {
    const struct aiFace *face = &mesh->mFaces[f];
    if (face->mNumIndices != 3) continue;
    uint32_t *t = p->tri + 3 * p->ntri++;
    for (int k = 0; k < 3; k++) t[k] = face->mIndices[k];
  }
  part_colour(sc, mesh, p->rgba);
  return 0;
}

tl_mesh_result tl_mesh_read(const char *path, tl_mesh *out, char *why, size_t whylen) {
  char dummy[8];
  if (!why || whylen == 0) why = dummy, whylen = sizeof dummy;
  memset(out, 0, sizeof(*out));
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "it is not a regular file");
    return TL_MESH_UNREADABLE;
  }
  if ((long long)st.st_size > TL_MESH_MAX_BYTES) {
    snprintf(why, whylen, "it is larger than %lld MB", TL_MESH_MAX_BYTES >> 20);
    return TL_MESH_TOO_LARGE;
  }
  struct aiPropertyStore *props = aiCreatePropertyStore();
  if (!props) {
    snprintf(why, whylen, "out of memory");
    return TL_MESH_NO_MEMORY;
  }
  aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
  aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const struct aiScene *sc = aiImportFileExWithProperties(
      path,
      aiProcess_Triangulate | aiProcess_PreTransformVertices | aiProcess_JoinIdenticalVertices |
          aiProcess_SortByPType,
      NULL, props);
  aiReleasePropertyStore(props);
  if (!sc) {
    snprintf(why, whylen, "assimp: %s", aiGetErrorString());
    return TL_MESH_UNREADABLE;
  }
  long long total = 0;
  int ntrimesh = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; i++) {
    total += sc->mMeshes[i]->mNumVertices;
    ntrimesh += (sc->mMeshes[i]->mPrimitiveTypes & aiPrimitiveType_TRIANGLE) != 0;
  }
  tl_mesh_result r = TL_MESH_OK;
  if (total > TL_MESH_MAX_VERTS) {
    snprintf(why, whylen, "it has %lld vertices, more than %d", total, TL_MESH_MAX_VERTS);
    r = TL_MESH_TOO_LARGE;
  } else if (ntrimesh == 0) {
    snprintf(why, whylen, "it has no triangles");
    r = TL_MESH_EMPTY;
  } else if (!(out->part = calloc((size_t)ntrimesh, sizeof(tl_mesh_part)))) {
    r = TL_MESH_NO_MEMORY;
  }
  for (unsigned i = 0; r == TL_MESH_OK && i < sc->mNumMeshes; i++) {
    if (!(sc->mMeshes[i]->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;
    tl_mesh_part *p = &out->part[out->npart++];
    if (read_part(sc, sc->mMeshes[i], p) != 0) r = TL_MESH_NO_MEMORY;
    out->nvert += p->nvert;
  }
  aiReleaseImport(sc);
  if (r == TL_MESH_NO_MEMORY) snprintf(why, whylen, "out of memory");
  if (r != TL_MESH_OK) tl_mesh_free(out);
  return r;
}

/* Vertices of every triangle mesh of the file (tl_mesh_read), cached per
 * load. *out points into the cache. */
static tl_status read_points(mesh_ctx *c, const tl_urdf_link *l, const tl_urdf_geom *g,
                             const double **out, int *n) {
  for (int i = 0; i < c->ncache; i++)
    if (strcmp(c->cache[i].path, g->mesh_file) == 0) {
      *out = c->cache[i].pts;
      *n = c->cache[i].n;
      return TL_OK;
    }
  if (!has_extension(g->mesh_file, ".stl") && !has_extension(g->mesh_file, ".obj") &&
      !has_extension(g->mesh_file, ".dae"))
    return mesh_fail(c, TL_ERR_UNSUPPORTED, g, "collision mesh '%s' of link '%s': unsupported "
                     "format: expected an .stl, .obj or .dae file", g->mesh_uri, l->name);
  tl_mesh mesh;
  char why[600];
  tl_mesh_result r = tl_mesh_read(g->mesh_file, &mesh, why, sizeof why);
  if (r == TL_MESH_NO_MEMORY)
    return mesh_fail(c, TL_ERR_MEMORY, g, "out of memory reading collision mesh '%s'", g->mesh_uri);
  if (r != TL_MESH_OK)
    return mesh_fail(c, r == TL_MESH_UNREADABLE ? TL_ERR_PARSE : r == TL_MESH_TOO_LARGE ? TL_ERR_IO : TL_ERR_INVALID,
                     g, "collision mesh '%s' of link '%s' (%s) cannot be read: %s", g->mesh_uri, l->name,
                     g->mesh_file, why);
  double *pts = malloc((size_t)(mesh.nvert > 0 ? mesh.nvert : 1) * 3 * sizeof(double));
  if (c->ncache == c->capcache) {
    int cap = c->capcache ? 2 * c->capcache : 8;
    mesh_cache_entry *bigger = realloc(c->cache, (size_t)cap * sizeof(*bigger));
    if (bigger) c->cache = bigger, c->capcache = cap;
  }
  if (!pts || c->ncache == c->capcache) {
    free(pts);
    tl_mesh_free(&mesh);
    return mesh_fail(c, TL_ERR_MEMORY, g, "out of memory reading collision mesh '%s'", g->mesh_uri);
  }
  int k = 0;
  for (int i = 0; i < mesh.npart; i++) {
    memcpy(pts + 3 * k, mesh.part[i].vert, (size_t)mesh.part[i].nvert * 3 * sizeof(double));
    k += mesh.part[i].nvert;
  }
  tl_mesh_free(&mesh);
  mesh_cache_entry *e = &c->cache[c->ncache++];
  snprintf(e->path, sizeof(e->path), "%s", g->mesh_file);
  e->n = k;
  e->pts = pts;
  *out = pts;
  *n = k;
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* convex hull                                                               */

/* Run qhull with `options` on n points; on success fill g's hull. Returns 0,
 * 1 when qhull failed (message in msg), -1 when out of memory. */
static int run_qhull(double *pts, int n, const char *options, tl_urdf_geom *g, char *msg, size_t msgcap) {
  char *buf = NULL;
  size_t buflen = 0;
  FILE *errfile = open_memstream(&buf, &buflen);
  qhT *qh = calloc(1, sizeof(qhT));
  if (!errfile || !qh) {
    if (errfile) fclose(errfile);
    free(buf);
    free(qh);
    return -1;
  }
  char cmd[64];
  snprintf(cmd, sizeof(cmd), "qhull %s", options);
  qh_zero(qh, errfile);
  int exitcode = qh_new_qhull(qh, 3, n, pts, False, cmd, NULL, errfile);
  int result = 0;
  if (exitcode) {
    fflush(errfile);
    size_t len = buf ? strcspn(buf, "\n") : 0;
    snprintf(msg, msgcap, "%.*s", (int)(len > 200 ? 200 : len), buf ? buf : "");
    result = 1;
  } else {
    int *map = malloc((size_t)n * sizeof(int));
    int nface = qh->num_facets, nvert = 0, nf = 0;
    double *vert = malloc((size_t)(qh->num_vertices > 0 ? qh->num_vertices : 1) * 3 * sizeof(double));
    int *face = malloc((size_t)(nface > 0 ? nface : 1) * 3 * sizeof(int));
    if (!map || !vert || !face) {
      result = -1;
    } else {
      for (int i = 0; i < n; i++) map[i] = -1;
      facetT *facet;
      vertexT *vertex, **vertexp;
      FORALLfacets {
        int ids[3], k = 0;
        FOREACHvertex_(facet->vertices) {
          if (k < 3) ids[k] = qh_pointid(qh, vertex->point);
          k++;
        }
        if (k != 3 || nf >= nface) continue;
        int ok = 1;
        for (int i = 0; i < 3; i++) ok = ok && ids[i] >= 0 && ids[i] < n;
        if (!ok) continue;
        const double *a = pts + 3 * ids[0], *b = pts + 3 * ids[1], *cc = pts + 3 * ids[2];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double v[3] = {cc[0] - a[0], cc[1] - a[1], cc[2] - a[2]};
        double nrm[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        double area = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
        double scale = fmax(u[0] * u[0] + u[1] * u[1] + u[2] * u[2], v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (!(area > 1e-12 * scale)) continue; /* zero-area triangle of the triangulation */
        if (nrm[0] * facet->normal[0] + nrm[1] * facet->normal[1] + nrm[2] * facet->normal[2] < 0) {
          int t = ids[1];
          ids[1] = ids[2];
          ids[2] = t;
        }
        for (int i = 0; i < 3; i++) {
          if (map[ids[i]] < 0) {
            map[ids[i]] = nvert;
            memcpy(vert + 3 * nvert, pts + 3 * ids[i], 3 * sizeof(double));
            nvert++;
          }
          face[3 * nf + i] = map[ids[i]];
        }
        nf++;
      }
      if (nf < 4) {
        snprintf(msg, msgcap, "the hull has %d triangles", nf);
        result = 1;
      } else {
        g->hull_vert = vert;
        g->hull_face = face;
        g->hull_nvert = nvert;
        g->hull_nface = nf;
        vert = NULL;
        face = NULL;
      }
    }
    free(map);
    free(vert);
    free(face);
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong, totlong;
  qh_memfreeshort(qh, &curlong, &totlong);
  fclose(errfile);
  free(buf);
  free(qh);
  return result;
}

/* Read collision mesh g of link l and compute its hull. */
static tl_status collision_hull(mesh_ctx *c, const tl_urdf_link *l, tl_urdf_geom *g) {
  const double *raw = NULL;
  int n = 0;
  tl_status st = read_points(c, l, g, &raw, &n);
  if (st) return st;
  if (n < 4)
    return mesh_fail(c, TL_ERR_INVALID, g, "collision mesh '%s' of link '%s' has %d vertices: "
                     "expected at least 4 for a convex hull", g->mesh_uri, l->name, n);
  double *pts = malloc((size_t)n * 3 * sizeof(double));
  if (!pts) return mesh_fail(c, TL_ERR_MEMORY, g, "out of memory for collision mesh '%s'", g->mesh_uri);
  for (int i = 0; i < 3 * n; i++) pts[i] = raw[i] * g->size[i % 3];
  char msg[256] = "";
  int r = run_qhull(pts, n, "Qt", g, msg, sizeof(msg));
  if (r == 1) r = run_qhull(pts, n, "QJ", g, msg, sizeof(msg));
  free(pts);
  if (r < 0) return mesh_fail(c, TL_ERR_MEMORY, g, "out of memory for the hull of '%s'", g->mesh_uri);
  if (r > 0)
    return mesh_fail(c, TL_ERR_INVALID, g, "collision mesh '%s' of link '%s' (%s, %d vertices) has "
                     "no convex hull (all points on a line or a point?): qhull: %s", g->mesh_uri,
                     l->name, g->mesh_file, n, msg);
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* driver                                                                    */

static void mesh_warn(tl_urdf_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mesh_warn(tl_urdf_doc *doc, const char *fmt, ...) {
  int n = doc->nwarning++;
  if (n >= (int)(sizeof(doc->warnings) / sizeof(doc->warnings[0]))) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(doc->warnings[n], sizeof(doc->warnings[n]), fmt, ap);
  va_end(ap);
}

/* Resolve geom g (collision or visual) of link l. */
static tl_status resolve_geom(mesh_ctx *c, const tl_urdf_link *l, tl_urdf_geom *g, int collision) {
  char why[160] = "";
  const char *what = collision ? "collision" : "visual";
  uri_result r = resolve(c, g->mesh_uri, g->mesh_file, sizeof(g->mesh_file), why, sizeof(why));
  if (r == URI_NETWORK || r == URI_BAD)
    return mesh_fail(c, r == URI_NETWORK ? TL_ERR_UNSUPPORTED : TL_ERR_INVALID, g,
                     "%s mesh URI '%s' of link '%s': %s", what, g->mesh_uri, l->name, why);
  if (r == URI_FOUND) return TL_OK;
  if (collision)
    return mesh_fail(c, TL_ERR_IO, g, "collision mesh '%s' of link '%s' not found (searched from "
                     "'%s' up, TALUS_PACKAGE_PATH and ROS_PACKAGE_PATH): a collision mesh is required",
                     g->mesh_uri, l->name, c->base);
  mesh_warn(c->doc, "line %d: link '%s': visual mesh '%.120s' not found", g->shape_line, l->name,
            g->mesh_uri);
  return TL_OK;
}

tl_status tl_urdf_load_meshes(tl_urdf_doc *doc, const char *base_dir, tl_error *err) {
  mesh_ctx c;
  memset(&c, 0, sizeof(c));
  c.doc = doc;
  c.err = err;
  if (!base_dir || !base_dir[0]) base_dir = ".";
  if (!realpath(base_dir, c.base)) snprintf(c.base, sizeof(c.base), "%s", base_dir);
  tl_status st = TL_OK;
  for (int i = 0; i < doc->nlink && !st; i++) {
    tl_urdf_link *l = &doc->links[i];
    for (int k = 0; k < l->ngeom && !st; k++)
      if (l->geoms[k].type == TL_GEOM_MESH) {
        st = resolve_geom(&c, l, &l->geoms[k], 1);
        if (!st) st = collision_hull(&c, l, &l->geoms[k]);
      }
    for (int k = 0; k < l->nvisual && !st; k++)
      if (l->visuals[k].geom.type == TL_GEOM_MESH) st = resolve_geom(&c, l, &l->visuals[k].geom, 0);
  }
  for (int i = 0; i < c.ncache; i++) free(c.cache[i].pts);
  free(c.cache);
  return st;
}
