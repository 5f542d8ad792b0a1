/* Internal: the one reader of mesh files (urdf/urdf_mesh.c). Collision hulls
 * (tl_urdf_load_meshes, the same file) and the recorder's visual meshes
 * (src/record/record_mesh.c) both read their files through tl_mesh_read, so
 * physics and pictures cannot place a mesh differently.
 *
 * One assimp import with one set of rules:
 *  - post-processing: aiProcess_Triangulate | aiProcess_PreTransformVertices
 *    (every node transform applied: the vertices are in the file's root
 *    frame) | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType, with
 *    points and lines removed (AI_CONFIG_PP_SBP_REMOVE): only triangle meshes
 *    remain;
 *  - units: the file's own (COLLADA <unit meter="...">, applied by assimp;
 *    STL and OBJ have none and are taken as metres, as URDF does);
 *  - up axis: COLLADA <up_axis> is NOT converted
 *    (AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION): a Z_UP file's geometry
 *    stays in the file's axes, as RViz (its mesh loader skips the Y-up root
 *    transform assimp adds) and Gazebo place it in the URDF link frame, and
 *    as the STL/OBJ collision meshes of the same robots sit (the Panda and UR5
 *    of the shared corpus: Z_UP COLLADA visuals, STL collisions, same boxes;
 *    tests/test_mesh_frames.c). Letting assimp turn Z_UP into Y_UP rotated
 *    every such mesh by 90 degrees about x (issue 21: HyQ's collision hulls).
 *  - limits: files larger than TL_MESH_MAX_BYTES or with more than
 *    TL_MESH_MAX_VERTS vertices are refused before (size) or right after
 *    (vertices) the import.
 * <mesh scale> is not applied here: each caller scales (the hull in double
 * precision, the viewer's float vertices). */
#ifndef TALUS_URDF_MESH_H
#define TALUS_URDF_MESH_H

#include <stddef.h>
#include <stdint.h>

/* Largest mesh file read (bytes) and largest vertex count kept. */
#define TL_MESH_MAX_BYTES ((long long)512 << 20)
#define TL_MESH_MAX_VERTS 20000000

/* One triangle mesh of the file (its node transforms applied). */
typedef struct tl_mesh_part {
  int nvert, ntri;
  double *vert;   /* [nvert * 3] vertices (m), the file's root frame, unit applied, no <mesh scale> */
  uint32_t *tri;  /* [ntri * 3] vertex indices, in the file's winding */
  double rgba[4]; /* its material's diffuse colour, alpha min(alpha, opacity) (an alpha of 0.05 or
                     less, an exporter's default that would hide the part, reads as 1); rgba[3] < 0:
                     the material gives no colour */
} tl_mesh_part;

typedef struct tl_mesh {
  int npart;
  tl_mesh_part *part;
  long long nvert; /* sum of the parts' nvert */
} tl_mesh;

/* Results of tl_mesh_read. */
typedef enum tl_mesh_result {
  TL_MESH_OK = 0,
  TL_MESH_UNREADABLE, /* assimp cannot read the file (or it is not a regular file) */
  TL_MESH_TOO_LARGE,  /* more than TL_MESH_MAX_BYTES bytes or TL_MESH_MAX_VERTS vertices */
  TL_MESH_EMPTY,      /* no triangle in it */
  TL_MESH_NO_MEMORY
} tl_mesh_result;

/* Read mesh file `path` (any format assimp reads; Talus uses STL, OBJ and
 * COLLADA) into *out under the rules above. On anything but TL_MESH_OK,
 * *out is empty and `why` (when not NULL) says what is wrong in a phrase
 * that completes "... cannot be read: " (e.g. "assimp: <its message>",
 * "it has 25000000 vertices, more than 20000000"). */
tl_mesh_result tl_mesh_read(const char *path, tl_mesh *out, char *why, size_t whylen);
/* Free what tl_mesh_read allocated; *m is left empty. NULL is accepted. */
void tl_mesh_free(tl_mesh *m);

#endif
