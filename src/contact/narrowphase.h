/* Internal: narrowphase collision between two geometries in world poses.
 *
 * Conventions for every pair function:
 *  - the normal points from geom b into geom a (push a along +normal to separate);
 *  - depth > 0 is penetration, depth < 0 a gap; points are reported when
 *    depth > -margin (speculative contacts), so a solver can stop approach
 *    before penetration;
 *  - pos is the midpoint between the two surfaces along the normal:
 *    point on a = pos - normal * depth / 2, point on b = pos + normal * depth / 2;
 *  - faces and edges in contact give a manifold of several points (box on
 *    plane: 4; capsule lying on a box: 2; cylinder on its cap: 4), at most
 *    TL_MAX_PAIR_CONTACTS;
 *  - everything is deterministic and allocation free. */
#ifndef TALUS_NARROWPHASE_H
#define TALUS_NARROWPHASE_H

#include "talus/types.h"

#define TL_MAX_PAIR_CONTACTS 8

/* A convex hull (collision mesh after convex hull), vertices in the geom frame. */
typedef struct tl_hull {
  int nvert;
  const double *vert;   /* [nvert*3] */
  int nface;
  const int *face;      /* [nface*3] triangles, counter-clockwise seen from outside; indices
                           validated where the hull is made (tl_model_add_hull) */
  double center[3];     /* centre and half extents of the vertices' box, geom frame */
  double half[3];       /* (tl_hull_bounds), for the broadphase */
  /* vertex graph (tl_hull_graph; NULL: none, the scans visit every vertex):
   * the neighbours of vertex v are adj[adj_adr[v] .. adj_adr[v + 1]) */
  const int *adj_adr, *adj;
  int *walk;            /* [nvert + 2] scratch of the graph walks: visit stamps, the
                           stamp counter, the last deepest vertex (a start only:
                           results never depend on it) */
} tl_hull;

/* Fill h->center and h->half from its vertices (once, when h is made). */
void tl_hull_bounds(tl_hull *h);
/* Build h's vertex graph from its triangles (allocates adj_adr, adj, walk;
 * freed by tl_hull_graph_free). Returns 0, or -1 out of memory (h keeps no graph). */
int tl_hull_graph(tl_hull *h);
void tl_hull_graph_free(tl_hull *h);

/* A heightmap terrain: heights[iy * nx + ix] (m) at
 * (x0 + ix * dx, y0 + iy * dy), in the geom frame (z up); bilinear-free:
 * each cell is two triangles split along the (ix, iy)-(ix+1, iy+1) diagonal. */
typedef struct tl_heightmap {
  int nx, ny;
  double x0, y0, dx, dy;
  const double *heights;
} tl_heightmap;

typedef struct tl_shape {
  tl_geom_type type;    /* TL_GEOM_* ; TL_GEOM_PLANE: the plane z = 0 of the shape frame (normal +z) */
  double size[3];       /* see tl_geom_type in talus/types.h */
  double pos[3];        /* world position of the geom frame */
  double rot[9];        /* world orientation of the geom frame, row-major */
  const tl_hull *hull;           /* TL_GEOM_MESH */
  const tl_heightmap *heightmap; /* TL_GEOM_HEIGHTMAP */
} tl_shape;

typedef struct tl_contact_point {
  double pos[3];
  double normal[3];     /* unit, from b into a */
  double depth;
} tl_contact_point;

/* Collide two shapes. Writes at most TL_MAX_PAIR_CONTACTS points to out and
 * returns how many. Returns 0 for pairs that cannot touch (plane-plane,
 * heightmap-heightmap, heightmap-plane). Any order of types is accepted:
 * the function swaps internally and flips normals so that they still point
 * from b into a. */
int tl_collide(const tl_shape *a, const tl_shape *b, double margin, tl_contact_point *out);

/* World axis-aligned bounding box of a shape, grown by margin (for the
 * broadphase). Planes get an infinite box. */
void tl_shape_aabb(const tl_shape *s, double margin, double lo[3], double hi[3]);

#endif
