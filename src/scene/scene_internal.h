/* Internal to src/scene/: the world-file loader (include/talus/scene.h).
 *   scene_xml.c    file reading, hardened libxml2 parse, element lines, errors,
 *                  attribute readers (numbers, vectors, names, poses)
 *   scene_load.c   the elements and the world they build
 *   scene_place.c  static geometry bookkeeping and `clearance` placement
 * Written against the public API (include/talus/) only. */
#ifndef TALUS_SCENE_INTERNAL_H
#define TALUS_SCENE_INTERNAL_H

#include <libxml/tree.h>

#include "talus/scene.h"

/* Largest world, URDF-independent input accepted (bytes): world file, heightmap CSV. */
#define SC_MAX_FILE_BYTES ((size_t)256 << 20)
/* Largest heightmap (points). */
#define SC_MAX_HEIGHTMAP_POINTS (1 << 24)

/* A static geom as added, for `clearance` (scene_place.c). */
typedef struct sc_static {
  tl_geom_type type;        /* box, sphere, capsule, cylinder, plane or heightmap */
  double lo[3], hi[3];      /* world AABB (primitives) */
  double pos[3], normal[3]; /* plane: a point and the unit normal */
  int nx, ny;               /* heightmap grid */
  double x0, y0, dx, dy;
  double *heights; /* heightmap, owned */
} sc_static;

typedef struct sc_parser {
  const char *path; /* the world file as given */
  char dir[4096];   /* its folder ("" = current), with a trailing '/' when not empty */
  tl_error *err;
  tl_world *world;
  tl_scene_info *info; /* never NULL inside the loader */
  int ninfo_cap;
  int *name_slot;      /* [name_slots] hash index of info->systems by name (scene_load.c), -1 empty */
  int name_slots;      /* a power of two >= 2 nsystem, or 0 */
  sc_static *statics;
  int nstatic, cap_static;
  int has_ground;
  double ground_height;
} sc_parser;

/* ---- scene_xml.c ---- */
/* Fill p->err for `node` (NULL: the whole file, line 0) and return status. */
tl_status sc_fail(sc_parser *p, tl_status status, const xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same at an explicit file / line / element. */
tl_status sc_fail_at(sc_parser *p, tl_status status, const char *file, int line,
                     const char *element, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Line on which the element's start tag begins. */
int sc_line(const xmlNode *node);
/* Read a whole file (at most SC_MAX_FILE_BYTES) into a NUL-terminated buffer. */
tl_status sc_read_file(const char *path, char **out, size_t *len, tl_error *err);
/* Parse buf (the world file) into a libxml2 document; errors name p->path. */
tl_status sc_parse_xml(sc_parser *p, const char *buf, size_t len, xmlDocPtr *out);
/* 1 if node is an element named `name` (no namespace). */
int sc_is(const xmlNode *node, const char *name);
/* Attribute text or NULL when absent. */
const char *sc_attr(const xmlNode *node, const char *name);
/* Refuse attributes not in `allowed` (NULL-terminated) and namespaced ones. */
tl_status sc_check_attrs(sc_parser *p, const xmlNode *node, const char *const *allowed);
/* Refuse child elements and non-blank text (every element of a world file is empty). */
tl_status sc_check_empty(sc_parser *p, const xmlNode *node);
/* A required attribute: its text (error when absent or empty). */
tl_status sc_require(sc_parser *p, const xmlNode *node, const char *name, const char **out);
/* Number attribute: *out = default when absent (required: error when absent).
 * Finite; the whole text must be one decimal number. */
tl_status sc_number(sc_parser *p, const xmlNode *node, const char *name, int required, double def,
                    double *out);
/* Integer attribute (decimal), in [lo, hi]. */
tl_status sc_integer(sc_parser *p, const xmlNode *node, const char *name, int required, int def,
                     int lo, int hi, int *out);
/* Exactly n numbers separated by white space; absent: out untouched, *given 0. */
tl_status sc_vector(sc_parser *p, const xmlNode *node, const char *name, int n, double *out,
                    int *given);
/* Any count of numbers (white space separated) into a new array (*out, free()). */
tl_status sc_number_list(sc_parser *p, const xmlNode *node, const char *name, double **out, int *n);
/* Boolean attribute: true/false/1/0. */
tl_status sc_boolean(sc_parser *p, const xmlNode *node, const char *name, int def, int *out);
/* Enumerated attribute: index of the text in `names` (NULL-terminated), def when absent. */
tl_status sc_choice(sc_parser *p, const xmlNode *node, const char *name, const char *const *names,
                    int def, int *out);
/* Orientation from rpy="r p y" (URDF: R = Rz(y) Ry(p) Rx(r)) or quat="w x y z"
 * (normalised; not both): quaternion (w x y z) and row-major R. Identity when
 * neither is given; *given says whether one was. */
tl_status sc_orientation(sc_parser *p, const xmlNode *node, double quat[4], double R[9],
                         int *given);
/* Path attribute resolved against the world file's folder (new string, free()). */
tl_status sc_path(sc_parser *p, const xmlNode *node, const char *name, char **out);
/* Parse a heightmap CSV (numbers separated by commas and/or white space,
 * '#' comments to the end of the line); errors name `path` and its line. */
tl_status sc_read_heights_csv(sc_parser *p, const char *path, double **out, int *n);

/* ---- scene_place.c ---- */
/* Record a static geom for clearance placement (copies heights). */
tl_status sc_static_add_primitive(sc_parser *p, tl_geom_type type, const double size[3],
                                  const double pos[3], const double R[9]);
tl_status sc_static_add_heightmap(sc_parser *p, int nx, int ny, double x0, double y0, double dx,
                                  double dy, const double *heights);
void sc_statics_free(sc_parser *p);
/* Shift the base of `sys` vertically (a floating base: q[2]; a fixed base: the pose at which it
 * is welded, tl_system_set_base_pose) so that its lowest collision geometry (mesh hulls included,
 * tl_system_collision_aabb) is `clearance` above the highest static surface under it. */
tl_status sc_place_clearance(sc_parser *p, const xmlNode *node, tl_system *sys, double clearance);

#endif
