/* Talus offscreen rendering: an RGB image of a world, headless, in software.
 *
 * A tl_renderer draws one world (its systems' visual geometry, the ground as a
 * checkerboard and the other static geoms) into a caller's width x height x 3
 * uint8 buffer (row-major, top row first, RGB) with a small z-buffered
 * triangle rasterizer of the library's own (no display, no OpenGL, no
 * threads): every shape becomes triangles once at creation (visual meshes
 * read by the recorder's mesh reader, src/record/record_mesh.c, decimated to
 * at most max_mesh_triangles each; spheres, boxes, capsules and cylinders
 * tessellated; a link whose visual mesh cannot be read, or a system without
 * visuals, is drawn with its collision geometry, as the recorder's scene
 * does), then each draw transforms them by the current body poses, clips them
 * at the near plane and fills them flat-shaded (Lambert: ambient plus the
 * diffuse term of one directional light, two-sided) with a per-pixel depth
 * test on 1/z (Foley, van Dam et al., "Computer Graphics: Principles and
 * Practice", 2nd ed., ch. 15.4 and 16.2; the edge-function rasterizer of
 * Pineda, "A parallel algorithm for polygon rasterization", SIGGRAPH 1988).
 *
 * Camera: a pinhole with vertical field of view fovy_deg, looking at a target
 * from `distance` m at azimuth / elevation (degrees; azimuth about world z
 * from +x, elevation above the horizontal). By default the target follows
 * body 0 of system 0 (the base) and the distance is set from the robot's size
 * at creation (2.8 x its bounding radius about the base, at least 1 m;
 * shapes over 4 m across, such as a cart-pole's rail, are left out of it).
 *
 * Memory: tl_renderer_create allocates everything; tl_renderer_draw never
 * allocates. Not thread-safe per renderer; several renderers may draw at
 * once. The world must outlive the renderer and keep its systems. */
#ifndef TALUS_RENDER_H
#define TALUS_RENDER_H

#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_renderer tl_renderer;

typedef struct tl_render_options {
  int width, height;        /* pixels (1 .. 8192); default 320 x 240 */
  double fovy_deg;          /* vertical field of view (default 45) */
  double distance;          /* m from the target; 0 (default): from the robot's size */
  double azimuth_deg;       /* default -60: in front of the robot, to its right */
  double elevation_deg;     /* default 20 */
  int follow;               /* 1 (default): the target is body 0 of system 0; 0: target[] */
  double target[3];         /* m, world (when follow is 0) */
  int max_mesh_triangles;   /* per visual mesh (default 4000; >= 4) */
} tl_render_options;

/* The defaults above. */
void tl_render_options_default(tl_render_options *opt);

/* Build the renderer of `world` (NULL opt: defaults). Errors: TL_ERR_ARGUMENT
 * (NULL world or out, width or height outside 1 .. 8192, fovy outside
 * (0, 170), negative distance, max_mesh_triangles < 4), TL_ERR_MEMORY.
 * Unreadable visual meshes are drawn as their link's collision geometry. */
tl_status tl_renderer_create(tl_world *world, const tl_render_options *opt, tl_renderer **out, tl_error *err);
void tl_renderer_free(tl_renderer *r);

/* Draw another world of the same make from now on: the same number of
 * systems, each with the same model structure (bodies), e.g. another
 * environment of a tl_batch or tl_vecenv, whose geometry is identical (the
 * triangles built at creation are reused; the camera distance is kept).
 * Errors: TL_ERR_ARGUMENT (NULL world, a different number of systems or of
 * bodies in a system, naming it); the renderer is unchanged then. */
tl_status tl_renderer_set_world(tl_renderer *r, tl_world *world, tl_error *err);

/* Draw the world's current state into rgb (width x height x 3 uint8, n =
 * its size in bytes). Errors: TL_ERR_ARGUMENT (NULL rgb, wrong n). */
tl_status tl_renderer_draw(tl_renderer *r, unsigned char *rgb, int n, tl_error *err);

/* Triangles drawn per image at most (shapes plus ground tiles). */
long tl_renderer_ntriangle(const tl_renderer *r);

#ifdef __cplusplus
}
#endif
#endif
