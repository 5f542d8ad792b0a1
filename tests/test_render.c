/* Guards: src/record/render.c (the offscreen software rasterizer, include/talus/render.h). */
/* Talus offscreen rendering (tl_renderer), on worlds of primitive objects:
 * (a) a sphere (system 0, the camera target, followed) on a ground plane:
 *     the image centre shows the sphere's colour (system 0's palette colour
 *     orange: red > green > blue, shaded), the top-left corner the sky
 *     (blue > red), the bottom rows the ground checkerboard (grey: r, g, b
 *     within 40 of each other, two tile shades present);
 * (b) depth test: a second sphere (palette blue) put between the camera and
 *     the first covers the centre (blue > red); moved behind it, the first
 *     shows again: the nearer surface wins whatever the drawing order;
 * (c) the camera follows the base: the sphere moved 5 m along x is still at
 *     the centre, and the image is the same up to the ground pattern;
 * (d) near-plane clipping: a box enclosing the camera (the camera inside it)
 *     draws without crashing and fills the image with its inner faces;
 * (e) the same state gives the same bytes (deterministic);
 * (h) static geoms: a static box (grey-blue) between the camera and the
 *     sphere covers the centre;
 * (g) tl_renderer_set_world: a renderer moved to another world of the same
 *     make (two spheres elsewhere) draws exactly what a renderer built on it
 *     draws; a world of another make (one system) is refused, unchanged;
 * (f) errors: bad width / height / fovy / distance, a wrong buffer size,
 *     NULL world, each with TL_ERR_ARGUMENT and a message naming the value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"

static int failures = 0;
#define CHECK(c, ...)                                  \
  do {                                                 \
    if (!(c)) {                                        \
      failures++;                                      \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);      \
      printf(__VA_ARGS__);                             \
      printf("\n");                                    \
    }                                                  \
  } while (0)

#define W 160
#define H 120

/* Place s's base at pos (identity rotation); the test stops when it is refused. */
static void place(tl_system *s, const double pos[3]) {
  static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  tl_error err;
  if (tl_system_set_base_pose(s, pos, I, &err)) {
    printf("set_base_pose: %s\n", err.message);
    exit(1);
  }
}

static tl_system *add_sphere(tl_world *w, double r, const double pos[3]) {
  tl_model *m = NULL;
  tl_error err;
  double size[3] = {r, 0, 0};
  if (tl_model_create_primitive(TL_GEOM_SPHERE, size, 1.0, "ball", &m, &err)) {
    printf("model: %s\n", err.message);
    exit(1);
  }
  tl_system *s = NULL;
  if (tl_world_add_system(w, m, &s, &err)) {
    printf("add: %s\n", err.message);
    exit(1);
  }
  tl_model_free(m);
  place(s, pos);
  return s;
}

static const unsigned char *px(const unsigned char *img, int x, int y) { return img + 3 * (y * W + x); }

static tl_renderer *renderer(tl_world *w, double distance) {
  tl_render_options o;
  tl_render_options_default(&o);
  o.width = W, o.height = H, o.distance = distance;
  tl_renderer *r = NULL;
  tl_error err;
  if (tl_renderer_create(w, &o, &r, &err)) {
    printf("renderer: %s\n", err.message);
    exit(1);
  }
  return r;
}

static void draw(tl_renderer *r, unsigned char *img) {
  tl_error err;
  if (tl_renderer_draw(r, img, 3 * W * H, &err)) {
    printf("draw: %s\n", err.message);
    exit(1);
  }
}

int main(void) {
  static unsigned char img[3 * W * H], img2[3 * W * H];
  tl_error err;
  tl_world *w = NULL;
  if (tl_world_create(&w, &err) || tl_world_add_ground(w, 0, 0.8, &err)) {
    printf("world: %s\n", err.message);
    return 1;
  }
  double p0[3] = {0, 0, 0.5}, far[3] = {0, 0, -50};
  tl_system *a = add_sphere(w, 0.5, p0);
  tl_system *b = add_sphere(w, 0.3, far); /* out of sight below the ground for now */
  tl_renderer *r = renderer(w, 3.0);
  CHECK(tl_renderer_ntriangle(r) > 2 * 48 * 48, "triangles %ld", tl_renderer_ntriangle(r));

  /* (a) */
  draw(r, img);
  const unsigned char *c = px(img, W / 2, H / 2), *sky = px(img, 2, 2);
  CHECK(c[0] > c[1] && c[1] > c[2] && c[0] > 80, "centre (%d %d %d): expected the orange sphere", c[0], c[1], c[2]);
  CHECK(sky[2] > sky[0] + 40, "corner (%d %d %d): expected the sky", sky[0], sky[1], sky[2]);
  int shades[256] = {0}, grey = 1;
  for (int x = 0; x < W; x++) {
    const unsigned char *g = px(img, x, H - 2);
    grey &= abs(g[0] - g[1]) < 40 && abs(g[1] - g[2]) < 40;
    shades[g[1]]++;
  }
  int nshade = 0;
  for (int i = 0; i < 256; i++) nshade += shades[i] > 3;
  CHECK(grey && nshade >= 2, "bottom row: grey %d, %d shades (expected the checkerboard)", grey, nshade);
  memcpy(img2, img, sizeof img);
  draw(r, img);
  CHECK(memcmp(img, img2, sizeof img) == 0, "(e) the same state drew different images");

  /* (b) the camera is at distance 3 along (cos 20 cos -60, cos 20 sin -60, sin 20) from the target */
  double d[3] = {0.9397 * 0.5, 0.9397 * -0.8660, 0.3420};
  double front[3] = {p0[0] + 1.5 * d[0], p0[1] + 1.5 * d[1], p0[2] + 1.5 * d[2]};
  double behind[3] = {p0[0] - 1.5 * d[0], p0[1] - 1.5 * d[1], p0[2] - 1.5 * d[2]};
  place(b, front);
  draw(r, img);
  c = px(img, W / 2, H / 2);
  CHECK(c[2] > c[0], "centre (%d %d %d): expected the blue sphere in front", c[0], c[1], c[2]);
  place(b, behind);
  draw(r, img);
  c = px(img, W / 2, H / 2);
  CHECK(c[0] > c[2], "centre (%d %d %d): expected the orange sphere in front of the blue one", c[0], c[1], c[2]);

  /* (c) */
  place(b, far);
  draw(r, img2);
  double moved[3] = {5, 0, 0.5};
  place(a, moved);
  draw(r, img);
  c = px(img, W / 2, H / 2);
  const unsigned char *c2 = px(img2, W / 2, H / 2);
  CHECK(memcmp(c, c2, 3) == 0, "followed: centre (%d %d %d) vs (%d %d %d)", c[0], c[1], c[2], c2[0], c2[1], c2[2]);
  long same = 0;
  for (int i = 0; i < 3 * W * H; i++) same += img[i] == img2[i];
  CHECK(same > 3L * W * H / 2, "followed: only %ld of %d bytes equal", same, 3 * W * H);
  tl_renderer_free(r);

  /* (d) a 10 m box around the camera (which is 1 m from the target) */
  tl_world *w2 = NULL;
  tl_world_create(&w2, NULL);
  double size[3] = {10, 10, 10}, zero[3] = {0, 0, 0};
  tl_model *m = NULL;
  tl_model_create_primitive(TL_GEOM_BOX, size, 1.0, "room", &m, NULL);
  tl_system *room = NULL;
  tl_world_add_system(w2, m, &room, NULL);
  tl_model_free(m);
  place(room, zero);
  r = renderer(w2, 1.0);
  draw(r, img);
  long orange = 0;
  for (int i = 0; i < W * H; i++) orange += img[3 * i] > img[3 * i + 2];
  CHECK(orange == (long)W * H, "inside the box: %ld of %d pixels show it", orange, W * H);
  tl_renderer_free(r);

  /* (g) */
  tl_world *w3 = NULL;
  tl_world_create(&w3, NULL);
  tl_world_add_ground(w3, 0, 0.8, NULL);
  double q1[3] = {1, 2, 0.5}, q2[3] = {1.5, 1.5, 0.6};
  add_sphere(w3, 0.5, q1);
  add_sphere(w3, 0.3, q2);
  tl_renderer *ra = renderer(w, 3.0), *rb = renderer(w3, 3.0);
  CHECK(tl_renderer_set_world(ra, w3, &err) == TL_OK, "set_world: %s", err.message);
  draw(ra, img);
  draw(rb, img2);
  CHECK(memcmp(img, img2, sizeof img) == 0, "(g) a moved renderer draws another image than a new one");
  CHECK(tl_renderer_set_world(ra, w2, &err) == TL_ERR_ARGUMENT && strstr(err.message, "1 systems, the renderer's 2"),
        "set_world of another make: %s", err.message);
  draw(ra, img);
  CHECK(memcmp(img, img2, sizeof img) == 0, "(g) a refused set_world changed the renderer");
  tl_renderer_free(ra);
  tl_renderer_free(rb);
  tl_world_free(w3);

  /* (h) */
  tl_world *w4 = NULL;
  tl_world_create(&w4, NULL);
  tl_world_add_ground(w4, 0, 0.8, NULL);
  add_sphere(w4, 0.5, p0);
  double bsize[3] = {0.4, 0.4, 0.4};
  if (tl_world_add_static_geom(w4, TL_GEOM_BOX, bsize, front, NULL, NULL, NULL, &err)) {
    printf("static box: %s\n", err.message);
    return 1;
  }
  r = renderer(w4, 3.0);
  draw(r, img);
  c = px(img, W / 2, H / 2);
  CHECK(c[2] >= c[0] && c[0] > 40, "centre (%d %d %d): expected the grey-blue static box", c[0], c[1], c[2]);
  tl_renderer_free(r);
  tl_world_free(w4);

  /* (f) */
  tl_render_options o;
  tl_render_options_default(&o);
  o.width = 0;
  CHECK(tl_renderer_create(w, &o, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "0 x 240"), "width 0: %s",
        err.message);
  tl_render_options_default(&o);
  o.fovy_deg = 180;
  CHECK(tl_renderer_create(w, &o, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "fovy_deg is 180"), "fovy: %s",
        err.message);
  tl_render_options_default(&o);
  o.distance = -1;
  CHECK(tl_renderer_create(w, &o, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "distance is -1"), "distance: %s",
        err.message);
  CHECK(tl_renderer_create(NULL, NULL, &r, &err) == TL_ERR_ARGUMENT && strstr(err.message, "world"), "world: %s",
        err.message);
  r = renderer(w, 0);
  CHECK(tl_renderer_draw(r, img, 100, &err) == TL_ERR_ARGUMENT && strstr(err.message, "160 x 120 x 3 = 57600"),
        "buffer: %s", err.message);
  tl_renderer_free(r);
  tl_world_free(w);
  tl_world_free(w2);
  if (failures) printf("%d failures\n", failures);
  else printf("render: all checks passed\n");
  return failures ? 1 : 0;
}
