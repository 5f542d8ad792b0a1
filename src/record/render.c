/* tl_renderer: the offscreen software rasterizer (include/talus/render.h).
 *
 * Creation turns the world's geometry into triangle lists, one item per
 * shape, its vertices in the frame of the body that carries it (static
 * geoms: the world frame): the systems' visuals as the recorder's scene has
 * them (record_scene.c: visual meshes read by tl_rec_mesh_read, a missing or
 * unreadable mesh replaced by its link's collision geoms, a system without
 * visuals drawn with its collision geoms), primitives tessellated as surfaces
 * of revolution or boxes. A draw: sky, then the checkerboard of each ground
 * plane around the camera target, then every item transformed to the camera,
 * clipped at the near plane (Sutherland-Hodgman against one plane), flat
 * Lambert-shaded and filled by edge functions with a 1/z depth test. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "record/record_internal.h"
#include "talus/model.h"
#include "talus/render.h"
#include "talus/system.h"

#define GROUND_TILES 24    /* tiles each side of the target: (2 N)^2 tiles */
#define GROUND_TILE 0.5    /* m */
#define NEAR 0.02          /* m, near clipping plane */
#define RD_PI 3.14159265358979323846
#define BIG_SHAPE 4.0      /* m: shapes larger than this do not set the automatic camera distance */
#define PT 6               /* floats per point record: camera x, y, z, then screen x, y, 1/z (z >= NEAR) */
#define LATHE_SLICES 16
#define LATHE_STACKS 8

typedef struct rd_item {
  int sys, body;   /* body `body` of system `sys`; sys -1: static, vertices in the world frame */
  long v0, nv;     /* vertices r->vert[3 v0 .. 3 (v0 + nv)) */
  long t0, nt;     /* triangles r->tri[3 t0 ..), indices local to the item's vertices */
  float rgb[3];    /* 0..1 */
} rd_item;

struct tl_renderer {
  tl_world *world;
  tl_render_options opt;
  rd_item *item;
  int nitem, capitem;
  float *vert;
  long nvert, capvert;
  uint32_t *tri;
  long ntri, captri;
  long max_item_vert;
  float *cam;      /* [PT max(max_item_vert, ground grid points)] point records (draw's scratch) */
  float *zbuf;     /* [width * height] 1/z of the nearest surface so far (0: none) */
  int nplane;
  double (*plane)[12]; /* ground planes: pos[3], R[9] */
  double distance;     /* m, camera distance used */
};

/* ------------------------------------------------------------ building */

static int grow(void **p, long *cap, long need, size_t elem) {
  if (need <= *cap) return 0;
  long c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *g = realloc(*p, (size_t)c * elem);
  if (!g) return -1;
  *p = g;
  *cap = c;
  return 0;
}

/* Append an item: nv vertices (body frame, float x3) and nt triangles. */
static int add_item(tl_renderer *r, int sys, int body, const float *v, long nv, const uint32_t *tri, long nt,
                    const double rgb[3]) {
  long capitem = r->capitem;
  if (grow((void **)&r->item, &capitem, r->nitem + 1, sizeof(rd_item)) ||
      grow((void **)&r->vert, &r->capvert, r->nvert + nv, 3 * sizeof(float)) ||
      grow((void **)&r->tri, &r->captri, r->ntri + nt, 3 * sizeof(uint32_t)))
    return -1;
  r->capitem = (int)capitem;
  rd_item *it = &r->item[r->nitem++];
  it->sys = sys, it->body = body, it->v0 = r->nvert, it->nv = nv, it->t0 = r->ntri, it->nt = nt;
  for (int k = 0; k < 3; k++) it->rgb[k] = (float)fmin(fmax(rgb[k], 0.0), 1.0);
  memcpy(r->vert + 3 * r->nvert, v, (size_t)nv * 3 * sizeof(float));
  memcpy(r->tri + 3 * r->ntri, tri, (size_t)nt * 3 * sizeof(uint32_t));
  r->nvert += nv;
  r->ntri += nt;
  if (nv > r->max_item_vert) r->max_item_vert = nv;
  return 0;
}

/* x' = pos + R x (R row-major) */
static void pose_apply(const double pos[3], const double R[9], const double x[3], float out[3]) {
  for (int i = 0; i < 3; i++) out[i] = (float)(pos[i] + R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2]);
}

/* A surface of revolution about local z through rings (radius, z), `slices`
 * around: quads between consecutive rings, as an item at pose (pos, R). */
static int add_lathe(tl_renderer *r, int sys, int body, const double (*ring)[2], int nring, const double pos[3],
                     const double R[9], const double rgb[3]) {
  int S = LATHE_SLICES;
  long nv = (long)nring * S, nt = 2L * (nring - 1) * S;
  float *v = malloc((size_t)nv * 3 * sizeof(float));
  uint32_t *t = malloc((size_t)nt * 3 * sizeof(uint32_t));
  int st = -1;
  if (v && t) {
    for (int i = 0; i < nring; i++)
      for (int j = 0; j < S; j++) {
        double a = 2 * RD_PI * j / S, x[3] = {ring[i][0] * cos(a), ring[i][0] * sin(a), ring[i][1]};
        pose_apply(pos, R, x, v + 3 * ((long)i * S + j));
      }
    long k = 0;
    for (int i = 0; i + 1 < nring; i++)
      for (int j = 0; j < S; j++) {
        uint32_t a = (uint32_t)(i * S + j), b = (uint32_t)(i * S + (j + 1) % S), c = a + (uint32_t)S,
                 d = b + (uint32_t)S;
        uint32_t q[6] = {a, c, b, b, c, d};
        memcpy(t + 6 * k++, q, sizeof(q));
      }
    st = add_item(r, sys, body, v, nv, t, nt, rgb);
  }
  free(v);
  free(t);
  return st;
}

/* Sphere, capsule, cylinder or box of size (tl_geom_type's) at pose (pos, R). */
static int add_primitive(tl_renderer *r, int sys, int body, tl_geom_type type, const double size[3],
                         const double pos[3], const double R[9], const double rgb[3]) {
  double ring[2 * LATHE_STACKS + 2][2];
  int n = 0;
  if (type == TL_GEOM_SPHERE || type == TL_GEOM_CAPSULE) {
    double rad = size[0], half = type == TL_GEOM_CAPSULE ? 0.5 * size[1] : 0.0;
    for (int i = 0; i <= LATHE_STACKS; i++) { /* top half (+half), then bottom half (-half) */
      double th = 0.5 * RD_PI * i / LATHE_STACKS;
      ring[n][0] = rad * sin(th), ring[n][1] = half + rad * cos(th), n++;
    }
    for (int i = 0; i <= LATHE_STACKS; i++) {
      double th = 0.5 * RD_PI + 0.5 * RD_PI * i / LATHE_STACKS;
      ring[n][0] = rad * sin(th), ring[n][1] = -half + rad * cos(th), n++;
    }
    return add_lathe(r, sys, body, (const double(*)[2])ring, n, pos, R, rgb);
  }
  if (type == TL_GEOM_CYLINDER) {
    double rad = size[0], h = 0.5 * size[1];
    double cyl[4][2] = {{0, h}, {rad, h}, {rad, -h}, {0, -h}};
    return add_lathe(r, sys, body, (const double(*)[2])cyl, 4, pos, R, rgb);
  }
  if (type == TL_GEOM_BOX) {
    float v[24];
    for (int i = 0; i < 8; i++) {
      double x[3] = {(i & 1 ? 0.5 : -0.5) * size[0], (i & 2 ? 0.5 : -0.5) * size[1], (i & 4 ? 0.5 : -0.5) * size[2]};
      pose_apply(pos, R, x, v + 3 * i);
    }
    static const uint32_t t[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                                   2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
    return add_item(r, sys, body, v, 8, t, 12, rgb);
  }
  return 0; /* planes and heightmaps are not carried by bodies */
}

/* Collision geom g of system s's model (mesh geoms as their convex hull). */
static int add_geom(tl_renderer *r, int s, const tl_model *m, int g, const double rgb[3]) {
  tl_geom_type type;
  int body;
  double size[3], pos[3], R[9];
  if (tl_model_geom(m, g, &type, &body, size, pos, R, NULL) != TL_OK) return 0;
  if (type != TL_GEOM_MESH) return add_primitive(r, s, body, type, size, pos, R, rgb);
  int nv, nf;
  const double *vert;
  const int *face;
  if (tl_model_geom_hull(m, g, &nv, &vert, &nf, &face, NULL) != TL_OK || nv < 3 || nf < 1) return 0;
  float *v = malloc((size_t)nv * 3 * sizeof(float));
  uint32_t *t = malloc((size_t)nf * 3 * sizeof(uint32_t));
  int st = -1;
  if (v && t) {
    for (int i = 0; i < nv; i++) pose_apply(pos, R, vert + 3 * i, v + 3 * i);
    for (int i = 0; i < 3 * nf; i++) t[i] = (uint32_t)face[i];
    st = add_item(r, s, body, v, nv, t, nf, rgb);
  }
  free(v);
  free(t);
  return st;
}

static int on_link(const tl_model *m, int g, const char *link) {
  const char *l = tl_model_geom_link(m, g);
  return l && link && strcmp(l, link) == 0;
}

/* A visual mesh file as items (one per part), or 1 when it cannot be read. */
static int add_mesh_visual(tl_renderer *r, int s, const tl_visual_info *v, const double *rgb) {
  tl_rec_mesh mesh;
  char why[256];
  if (tl_rec_mesh_read(v->mesh_file, v->size, r->opt.max_mesh_triangles, &mesh, why, sizeof why) != 0)
    return strcmp(why, "out of memory") == 0 ? -1 : 1;
  int st = 0;
  for (int i = 0; !st && i < mesh.npart; i++) {
    tl_rec_mesh_part *p = &mesh.part[i];
    for (int k = 0; k < p->nvert; k++) {
      double x[3] = {p->vert[3 * k], p->vert[3 * k + 1], p->vert[3 * k + 2]};
      pose_apply(v->pos, v->R, x, p->vert + 3 * k);
    }
    double grey[3] = {0.6, 0.6, 0.62}, col[3];
    const double *c = rgb ? rgb : p->rgba[3] >= 0 ? p->rgba : grey;
    memcpy(col, c, sizeof(col));
    st = add_item(r, s, v->body, p->vert, p->nvert, p->tri, p->ntri, col);
  }
  tl_rec_mesh_free(&mesh);
  return st;
}

static int add_system(tl_renderer *r, int s) {
  const tl_model *m = tl_system_model(tl_world_system(r->world, s));
  static const double palette[6][3] = {{0.85, 0.45, 0.2}, {0.25, 0.5, 0.85}, {0.3, 0.7, 0.35},
                                       {0.8, 0.7, 0.2},   {0.6, 0.35, 0.7}, {0.2, 0.7, 0.7}};
  int nvis = tl_model_nvisual(m), ngeom = tl_model_ngeom(m);
  unsigned char *used = calloc((size_t)(ngeom > 0 ? ngeom : 1), 1); /* collision geoms drawn already */
  if (!used) return -1;
  int st = 0;
  for (int i = 0; !st && i < nvis; i++) {
    tl_visual_info v;
    if (tl_model_visual(m, i, &v, NULL) != TL_OK) continue;
    double grey[3] = {0.6, 0.6, 0.62};
    const double *rgb = isfinite(v.rgba[0]) && isfinite(v.rgba[3]) ? v.rgba : NULL;
    int missing = 0;
    if (v.type == TL_GEOM_MESH) {
      missing = !v.mesh_file || !v.mesh_file[0];
      if (!missing) {
        int k = add_mesh_visual(r, s, &v, rgb);
        if (k < 0) st = -1;
        missing = k == 1;
      }
    } else {
      st = add_primitive(r, s, v.body, v.type, v.size, v.pos, v.R, rgb ? rgb : grey);
    }
    for (int g = 0; missing && !st && g < ngeom; g++) /* the link's collision geoms stand in */
      if (!used[g] && on_link(m, g, v.link)) {
        used[g] = 1;
        st = add_geom(r, s, m, g, rgb ? rgb : grey);
      }
  }
  for (int g = 0; nvis == 0 && !st && g < ngeom; g++) st = add_geom(r, s, m, g, palette[s % 6]);
  free(used);
  return st;
}

static int add_statics(tl_renderer *r) {
  int n = tl_world_nstatic(r->world);
  for (int i = 0; i < n; i++) {
    tl_geom_type type;
    double size[3], pos[3], R[9];
    int hm = -1;
    if (tl_world_static_geom(r->world, i, &type, size, pos, R, NULL, &hm, NULL)) continue;
    if (type == TL_GEOM_PLANE) {
      double (*g)[12] = realloc(r->plane, (size_t)(r->nplane + 1) * sizeof(*g));
      if (!g) return -1;
      r->plane = g;
      memcpy(g[r->nplane], pos, 3 * sizeof(double));
      memcpy(g[r->nplane] + 3, R, 9 * sizeof(double));
      r->nplane++;
    } else if (type == TL_GEOM_HEIGHTMAP) {
      int nx, ny;
      double x0, y0, dx, dy;
      const double *h;
      if (tl_world_heightmap(r->world, hm, &nx, &ny, &x0, &y0, &dx, &dy, &h, NULL) || nx < 2 || ny < 2) continue;
      long nv = (long)nx * ny, nt = 2L * (nx - 1) * (ny - 1);
      float *v = malloc((size_t)nv * 3 * sizeof(float));
      uint32_t *t = malloc((size_t)nt * 3 * sizeof(uint32_t));
      int st = -1;
      if (v && t) {
        for (int iy = 0; iy < ny; iy++)
          for (int ix = 0; ix < nx; ix++) {
            double x[3] = {x0 + ix * dx, y0 + iy * dy, h[(long)iy * nx + ix]};
            pose_apply(pos, R, x, v + 3 * ((long)iy * nx + ix));
          }
        long k = 0;
        for (int iy = 0; iy + 1 < ny; iy++)
          for (int ix = 0; ix + 1 < nx; ix++) {
            uint32_t a = (uint32_t)(iy * nx + ix), b = a + 1, c = a + (uint32_t)nx, d = c + 1;
            uint32_t q[6] = {a, b, c, b, d, c};
            memcpy(t + 6 * k++, q, sizeof(q));
          }
        double rgb[3] = {0.55, 0.6, 0.5};
        st = add_item(r, -1, 0, v, nv, t, nt, rgb);
      }
      free(v);
      free(t);
      if (st) return -1;
    } else {
      double rgb[3] = {0.55, 0.55, 0.6};
      if (add_primitive(r, -1, 0, type, size, pos, R, rgb)) return -1;
    }
  }
  return 0;
}

void tl_render_options_default(tl_render_options *opt) {
  memset(opt, 0, sizeof(*opt));
  opt->width = 320;
  opt->height = 240;
  opt->fovy_deg = 45;
  opt->distance = 0;
  opt->azimuth_deg = -60;
  opt->elevation_deg = 20;
  opt->follow = 1;
  opt->max_mesh_triangles = 4000;
}

/* World pose of item it (static: identity). */
static void item_pose(tl_renderer *r, const rd_item *it, double p[3], double R[9]) {
  static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memset(p, 0, 3 * sizeof(double));
  memcpy(R, I, sizeof(I));
  if (it->sys >= 0 && tl_system_body_pose(tl_world_system(r->world, it->sys), it->body, p, R, NULL) != TL_OK) {
    memset(p, 0, 3 * sizeof(double));
    memcpy(R, I, sizeof(I));
  }
}

static void target_of(tl_renderer *r, double t[3]) {
  memcpy(t, r->opt.target, 3 * sizeof(double));
  double R[9];
  if (r->opt.follow && tl_world_nsystem(r->world) > 0)
    if (tl_system_body_pose(tl_world_system(r->world, 0), 0, t, R, NULL) != TL_OK) memset(t, 0, 3 * sizeof(double));
}

tl_status tl_renderer_create(tl_world *world, const tl_render_options *opt, tl_renderer **out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  *out = NULL;
  if (!world) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "world must not be NULL");
  tl_render_options o;
  if (opt) o = *opt;
  else tl_render_options_default(&o);
  if (o.width < 1 || o.width > 8192 || o.height < 1 || o.height > 8192)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "size", "image %d x %d: width and height must be in 1 .. 8192",
                        o.width, o.height);
  if (!(o.fovy_deg > 0 && o.fovy_deg < 170))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "fovy_deg", "fovy_deg is %g: expected (0, 170)", o.fovy_deg);
  if (!(o.distance >= 0) || !isfinite(o.distance))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "distance", "distance is %g: expected >= 0 (0: automatic)",
                        o.distance);
  if (!isfinite(o.azimuth_deg) || !isfinite(o.elevation_deg) || !(fabs(o.elevation_deg) < 90))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "elevation_deg",
                        "azimuth %g, elevation %g: expected finite angles, |elevation| < 90", o.azimuth_deg,
                        o.elevation_deg);
  if (o.max_mesh_triangles < 4)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "max_mesh_triangles", "max_mesh_triangles is %d: expected >= 4",
                        o.max_mesh_triangles);
  tl_renderer *r = calloc(1, sizeof(*r));
  if (!r) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  r->world = world;
  r->opt = o;
  int st = 0;
  for (int s = 0; !st && s < tl_world_nsystem(world); s++) st = add_system(r, s);
  if (!st) st = add_statics(r);
  long grid = (2L * GROUND_TILES + 1) * (2L * GROUND_TILES + 1);
  long scratch = r->max_item_vert > grid ? r->max_item_vert : grid;
  if (!st) {
    r->cam = malloc((size_t)scratch * PT * sizeof(float));
    r->zbuf = malloc((size_t)o.width * o.height * sizeof(float));
    st = !r->cam || !r->zbuf;
  }
  if (st) {
    tl_renderer_free(r);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  /* the automatic distance: the size of system 0 around its base at creation */
  double t[3], radius = 0;
  target_of(r, t);
  for (int i = 0; i < r->nitem; i++) {
    const rd_item *it = &r->item[i];
    if (it->sys != 0) continue;
    double p[3], R[9], lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, rad = 0;
    item_pose(r, it, p, R);
    for (long k = it->v0; k < it->v0 + it->nv; k++) {
      double x[3] = {r->vert[3 * k], r->vert[3 * k + 1], r->vert[3 * k + 2]};
      float w[3];
      pose_apply(p, R, x, w);
      double d = sqrt((w[0] - t[0]) * (w[0] - t[0]) + (w[1] - t[1]) * (w[1] - t[1]) + (w[2] - t[2]) * (w[2] - t[2]));
      rad = fmax(rad, d);
      for (int a = 0; a < 3; a++) lo[a] = fmin(lo[a], w[a]), hi[a] = fmax(hi[a], w[a]);
    }
    /* a shape over BIG_SHAPE across (a rail, a platform) is scenery: it does not set the distance */
    if (hi[0] - lo[0] < BIG_SHAPE && hi[1] - lo[1] < BIG_SHAPE && hi[2] - lo[2] < BIG_SHAPE) radius = fmax(radius, rad);
  }
  r->distance = o.distance > 0 ? o.distance : fmax(1.0, 2.8 * radius);
  *out = r;
  return TL_OK;
}

void tl_renderer_free(tl_renderer *r) {
  if (!r) return;
  free(r->item);
  free(r->vert);
  free(r->tri);
  free(r->cam);
  free(r->zbuf);
  free(r->plane);
  free(r);
}

tl_status tl_renderer_set_world(tl_renderer *r, tl_world *world, tl_error *err) {
  if (!world) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "world must not be NULL");
  int n = tl_world_nsystem(r->world);
  if (tl_world_nsystem(world) != n)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "the world has %d systems, the renderer's %d",
                        tl_world_nsystem(world), n);
  for (int s = 0; s < n; s++) {
    int a = tl_model_nbody(tl_system_model(tl_world_system(world, s)));
    int b = tl_model_nbody(tl_system_model(tl_world_system(r->world, s)));
    if (a != b)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "world", "system %d has %d bodies, the renderer's %d", s, a,
                          b);
  }
  r->world = world;
  return TL_OK;
}

long tl_renderer_ntriangle(const tl_renderer *r) {
  return r->ntri + 2L * r->nplane * (2L * GROUND_TILES) * (2L * GROUND_TILES);
}

/* ------------------------------------------------------------ drawing */

typedef struct rd_view {
  double V[9], eye[3]; /* camera rows: right, down, forward; cam = V (x - eye) */
  float light[3];      /* unit direction to the light, camera frame */
  float f, cx, cy;     /* focal length (px), principal point */
  int w, h;
  unsigned char *rgb;
  float *zbuf;
} rd_view;

/* Fill the screen-space triangle (x, y, 1/z) per vertex with colour c (pixel centres inside or on
 * an edge, nearer than what is there). */
static void raster(const rd_view *v, const float *p0, const float *p1, const float *p2, const unsigned char c[3]) {
  float area = (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p1[1] - p0[1]) * (p2[0] - p0[0]);
  if (!(fabsf(area) > 1e-9f)) return;
  if (area < 0) {
    const float *t = p1;
    p1 = p2, p2 = t;
    area = -area;
  }
  float minx = fminf(p0[0], fminf(p1[0], p2[0])), maxx = fmaxf(p0[0], fmaxf(p1[0], p2[0]));
  float miny = fminf(p0[1], fminf(p1[1], p2[1])), maxy = fmaxf(p0[1], fmaxf(p1[1], p2[1]));
  /* the pixels whose centres x + 0.5 lie in the bounding box */
  float fx0 = fmaxf(ceilf(minx - 0.5f), 0.0f), fx1 = fminf(floorf(maxx - 0.5f), (float)(v->w - 1));
  float fy0 = fmaxf(ceilf(miny - 0.5f), 0.0f), fy1 = fminf(floorf(maxy - 0.5f), (float)(v->h - 1));
  if (fx0 > fx1 || fy0 > fy1) return;
  int x0 = (int)fx0, x1 = (int)fx1, y0 = (int)fy0, y1 = (int)fy1;
  /* edge functions e_i(x, y) = a_i x + b_i y + c_i, weight of vertex i (opposite edge) */
  const float *P[3] = {p0, p1, p2};
  float a[3], b[3], cc[3];
  for (int i = 0; i < 3; i++) {
    const float *s = P[(i + 1) % 3], *e = P[(i + 2) % 3];
    a[i] = -(e[1] - s[1]);
    b[i] = e[0] - s[0];
    cc[i] = -(a[i] * s[0] + b[i] * s[1]);
  }
  float inv = 1.0f / area;
  float za = (a[0] * p0[2] + a[1] * p1[2] + a[2] * p2[2]) * inv;
  float zb = (b[0] * p0[2] + b[1] * p1[2] + b[2] * p2[2]) * inv;
  float zc = (cc[0] * p0[2] + cc[1] * p1[2] + cc[2] * p2[2]) * inv;
  if (x1 - x0 < 8) { /* narrow: test every pixel of the box */
    for (int y = y0; y <= y1; y++) {
      float py = (float)y + 0.5f, px = (float)x0 + 0.5f;
      float e0 = a[0] * px + b[0] * py + cc[0], e1 = a[1] * px + b[1] * py + cc[1], e2 = a[2] * px + b[2] * py + cc[2];
      float z = za * px + zb * py + zc;
      float *zrow = v->zbuf + (long)y * v->w;
      unsigned char *row = v->rgb + 3L * y * v->w;
      for (int x = x0; x <= x1; x++) {
        if (e0 >= 0 && e1 >= 0 && e2 >= 0 && z > zrow[x]) {
          zrow[x] = z;
          row[3 * x] = c[0], row[3 * x + 1] = c[1], row[3 * x + 2] = c[2];
        }
        e0 += a[0], e1 += a[1], e2 += a[2], z += za;
      }
    }
    return;
  }
  /* wide: per row, the span of pixel centres where every e_i >= 0, from e_i's root along x */
  float ia[3];
  for (int i = 0; i < 3; i++) ia[i] = a[i] != 0 ? 1.0f / a[i] : 0.0f;
  for (int y = y0; y <= y1; y++) {
    float py = (float)y + 0.5f, lo = (float)x0, hi = (float)x1;
    int empty = 0;
    for (int i = 0; i < 3; i++) {
      float rest = b[i] * py + cc[i];
      if (a[i] > 0) lo = fmaxf(lo, ceilf(-rest * ia[i] - 0.5f));
      else if (a[i] < 0) hi = fminf(hi, floorf(-rest * ia[i] - 0.5f));
      else empty |= rest < 0;
    }
    if (empty || lo > hi) continue;
    int xl = (int)lo, xr = (int)hi;
    /* the root is rounded: trim a pixel at either end whose centre is outside after all */
    float pl = (float)xl + 0.5f, pr = (float)xr + 0.5f;
    for (int i = 0; i < 3 && xl <= xr; i++) {
      if (a[i] * pl + b[i] * py + cc[i] < 0) xl++, pl += 1.0f;
      if (a[i] * pr + b[i] * py + cc[i] < 0) xr--, pr -= 1.0f;
    }
    float z = za * ((float)xl + 0.5f) + zb * py + zc;
    float *zrow = v->zbuf + (long)y * v->w;
    unsigned char *row = v->rgb + 3L * y * v->w;
    for (int x = xl; x <= xr; x++, z += za)
      if (z > zrow[x]) {
        zrow[x] = z;
        row[3 * x] = c[0], row[3 * x + 1] = c[1], row[3 * x + 2] = c[2];
      }
  }
}

/* A camera-space point (x, y, z) to the screen (x, y, 1/z) (z >= NEAR). */
static void project(const rd_view *v, const float *c, float out[3]) {
  float iz = 1.0f / c[2];
  out[0] = v->cx + v->f * c[0] * iz;
  out[1] = v->cy + v->f * c[1] * iz;
  out[2] = iz;
}

static void point(const rd_view *v, float *p) {
  if (p[2] >= NEAR) project(v, p, p + 3);
}

/* Does the screen triangle cover a pixel centre's bounding box on the image with a non-zero area?
 * (Most triangles of a detailed mesh are smaller than a pixel and end here, before shading.) */
static int visible(const rd_view *v, const float *p0, const float *p1, const float *p2) {
  float minx = fminf(p0[0], fminf(p1[0], p2[0])), maxx = fmaxf(p0[0], fmaxf(p1[0], p2[0]));
  float miny = fminf(p0[1], fminf(p1[1], p2[1])), maxy = fmaxf(p0[1], fmaxf(p1[1], p2[1]));
  if (fmaxf(ceilf(minx - 0.5f), 0.0f) > fminf(floorf(maxx - 0.5f), (float)(v->w - 1))) return 0;
  if (fmaxf(ceilf(miny - 0.5f), 0.0f) > fminf(floorf(maxy - 0.5f), (float)(v->h - 1))) return 0;
  float area = (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p1[1] - p0[1]) * (p2[0] - p0[0]);
  return fabsf(area) > 1e-9f;
}

/* One triangle of point records: near-plane clip, flat Lambert shade, fill. */
static void triangle(const rd_view *v, const float *a, const float *b, const float *c, const float rgb[3]) {
  const float *in[3] = {a, b, c};
  int behind = (a[2] < NEAR) + (b[2] < NEAR) + (c[2] < NEAR);
  if (behind == 3) return;
  if (behind == 0 && !visible(v, a + 3, b + 3, c + 3)) return;
  float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
  float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (!(len > 0)) return;
  if (n[0] * a[0] + n[1] * a[1] + n[2] * a[2] > 0) len = -len; /* the side facing the camera */
  float d = (n[0] * v->light[0] + n[1] * v->light[1] + n[2] * v->light[2]) / len;
  float shade = 0.35f + 0.65f * (d > 0 ? d : 0);
  unsigned char col[3];
  for (int k = 0; k < 3; k++) col[k] = (unsigned char)(255.0f * fminf(rgb[k] * shade, 1.0f) + 0.5f);
  if (behind == 0) {
    raster(v, a + 3, b + 3, c + 3, col);
    return;
  }
  float poly[4][3];
  int np = 0;
  { /* Sutherland-Hodgman against z >= NEAR */
    for (int i = 0; i < 3; i++) {
      const float *p = in[i], *q = in[(i + 1) % 3];
      int pin = p[2] >= NEAR, qin = q[2] >= NEAR;
      if (pin) memcpy(poly[np++], p, sizeof(poly[0]));
      if (pin != qin) {
        float t = (NEAR - p[2]) / (q[2] - p[2]);
        for (int k = 0; k < 3; k++) poly[np][k] = p[k] + t * (q[k] - p[k]);
        poly[np++][2] = NEAR;
      }
    }
  }
  float s[4][3];
  for (int i = 0; i < np; i++) project(v, poly[i], s[i]);
  for (int i = 1; i + 1 < np; i++) raster(v, s[0], s[i], s[i + 1], col);
}

/* cam = V (x - eye) for world x */
static void to_cam(const rd_view *v, const double x[3], float out[3]) {
  double d[3] = {x[0] - v->eye[0], x[1] - v->eye[1], x[2] - v->eye[2]};
  for (int i = 0; i < 3; i++) out[i] = (float)(v->V[3 * i] * d[0] + v->V[3 * i + 1] * d[1] + v->V[3 * i + 2] * d[2]);
}

static void draw_ground(tl_renderer *r, const rd_view *v, const double *plane, const double target[3]) {
  const double *pos = plane, *R = plane + 3;
  /* the target in the plane's frame, snapped to the tile grid */
  double d[3] = {target[0] - pos[0], target[1] - pos[1], target[2] - pos[2]};
  double lx = R[0] * d[0] + R[3] * d[1] + R[6] * d[2], ly = R[1] * d[0] + R[4] * d[1] + R[7] * d[2];
  long ix0 = (long)floor(lx / GROUND_TILE) - GROUND_TILES, iy0 = (long)floor(ly / GROUND_TILE) - GROUND_TILES;
  int n = 2 * GROUND_TILES + 1;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double x[3] = {(ix0 + i) * GROUND_TILE, (iy0 + j) * GROUND_TILE, 0}, w[3];
      for (int k = 0; k < 3; k++) w[k] = pos[k] + R[3 * k] * x[0] + R[3 * k + 1] * x[1] + R[3 * k + 2] * x[2];
      float *pt = r->cam + (long)PT * (j * n + i);
      to_cam(v, w, pt);
      point(v, pt);
    }
  static const float light_tile[3] = {0.78f, 0.78f, 0.76f}, dark_tile[3] = {0.55f, 0.56f, 0.58f};
  for (int j = 0; j + 1 < n; j++)
    for (int i = 0; i + 1 < n; i++) {
      const float *a = r->cam + (long)PT * (j * n + i), *b = a + PT, *c = a + (long)PT * n, *e = c + PT;
      const float *col = ((ix0 + i + iy0 + j) & 1) ? dark_tile : light_tile;
      triangle(v, a, b, c, col);
      triangle(v, b, e, c, col);
    }
}

tl_status tl_renderer_draw(tl_renderer *r, unsigned char *rgb, int n, tl_error *err) {
  long need = 3L * r->opt.width * r->opt.height;
  if (!rgb || (long)n != need)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rgb", "image buffer of %d bytes, expected %d x %d x 3 = %ld",
                        rgb ? n : 0, r->opt.width, r->opt.height, need);
  rd_view v;
  v.w = r->opt.width, v.h = r->opt.height, v.rgb = rgb, v.zbuf = r->zbuf;
  double t[3];
  target_of(r, t);
  double az = r->opt.azimuth_deg * RD_PI / 180, el = r->opt.elevation_deg * RD_PI / 180;
  double back[3] = {cos(el) * cos(az), cos(el) * sin(az), sin(el)}; /* target -> eye */
  for (int k = 0; k < 3; k++) v.eye[k] = t[k] + r->distance * back[k];
  double f[3] = {-back[0], -back[1], -back[2]};
  double right[3] = {f[1], -f[0], 0}; /* f x z_up */
  double rl = sqrt(right[0] * right[0] + right[1] * right[1]);
  right[0] /= rl, right[1] /= rl;
  double down[3] = {f[1] * right[2] - f[2] * right[1], f[2] * right[0] - f[0] * right[2],
                    f[0] * right[1] - f[1] * right[0]};
  for (int k = 0; k < 3; k++) v.V[k] = right[k], v.V[3 + k] = down[k], v.V[6 + k] = f[k];
  double L[3] = {0.35, 0.25, 0.9}, ll = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
  for (int i = 0; i < 3; i++)
    v.light[i] = (float)((v.V[3 * i] * L[0] + v.V[3 * i + 1] * L[1] + v.V[3 * i + 2] * L[2]) / ll);
  v.f = (float)(0.5 * v.h / tan(0.5 * r->opt.fovy_deg * RD_PI / 180));
  v.cx = 0.5f * (float)v.w, v.cy = 0.5f * (float)v.h;
  /* sky: a vertical gradient */
  for (int y = 0; y < v.h; y++) {
    float s = (float)y / (float)(v.h > 1 ? v.h - 1 : 1);
    unsigned char c[3] = {(unsigned char)(150 + 70 * s), (unsigned char)(185 + 45 * s), (unsigned char)(225 + 20 * s)};
    unsigned char *row = rgb + 3L * y * v.w;
    for (int x = 0; x < v.w; x++) row[3 * x] = c[0], row[3 * x + 1] = c[1], row[3 * x + 2] = c[2];
  }
  memset(r->zbuf, 0, (size_t)v.w * v.h * sizeof(float));
  for (int i = 0; i < r->nplane; i++) draw_ground(r, &v, r->plane[i], t);
  for (int i = 0; i < r->nitem; i++) {
    const rd_item *it = &r->item[i];
    double p[3], R[9], M[9], tc[3];
    item_pose(r, it, p, R);
    /* cam = V (R x + p - eye) = (V R) x + V (p - eye) */
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        M[3 * a + b] = v.V[3 * a] * R[b] + v.V[3 * a + 1] * R[3 + b] + v.V[3 * a + 2] * R[6 + b];
    double d[3] = {p[0] - v.eye[0], p[1] - v.eye[1], p[2] - v.eye[2]};
    for (int a = 0; a < 3; a++) tc[a] = v.V[3 * a] * d[0] + v.V[3 * a + 1] * d[1] + v.V[3 * a + 2] * d[2];
    float Mf[9], tf[3] = {(float)tc[0], (float)tc[1], (float)tc[2]};
    for (int k = 0; k < 9; k++) Mf[k] = (float)M[k];
    const float *x = r->vert + 3 * it->v0;
    for (long k = 0; k < it->nv; k++, x += 3) {
      float *pt = r->cam + PT * k;
      for (int a = 0; a < 3; a++) pt[a] = Mf[3 * a] * x[0] + Mf[3 * a + 1] * x[1] + Mf[3 * a + 2] * x[2] + tf[a];
      point(&v, pt);
    }
    const uint32_t *tri = r->tri + 3 * it->t0;
    for (long k = 0; k < it->nt; k++, tri += 3) {
      if (tri[0] >= it->nv || tri[1] >= it->nv || tri[2] >= it->nv) continue;
      triangle(&v, r->cam + PT * tri[0], r->cam + PT * tri[1], r->cam + PT * tri[2], it->rgb);
    }
  }
  return TL_OK;
}
