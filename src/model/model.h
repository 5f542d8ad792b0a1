/* Internal: the compiled robot description (MuJoCo's mjModel idea).
 *
 * Indexing (DESIGN.md): body i is the child of movable joint i; body 0 is the
 * base, whose joint is TL_JOINT_FLOATING or TL_JOINT_FIXED (welded to the world
 * at the identity pose). Bodies are in depth-first order from the root link,
 * children in the order their joints appear in the URDF, so parent[i] < i.
 * Fixed links are merged into their movable ancestor: their inertia is added
 * exactly (parallel-axis theorem), their collision geoms are re-expressed in the
 * ancestor's body frame, and their joint keeps a frame.
 *
 * A body's frame is its parent joint's frame after the joint transform (the
 * URDF child-link frame). COM and inertia are stored in the body frame.
 * All arrays are owned by the model and allocated once by tl_model_alloc();
 * their list, with sizes and units, is TL_MODEL_ARRAYS in model_xmacro.h. */
#ifndef TALUS_MODEL_MODEL_H
#define TALUS_MODEL_MODEL_H

#include "model/model_xmacro.h"
#include "talus/types.h"

#define TL_NAME_MAX 128

typedef char tl_name[TL_NAME_MAX];

typedef char tl_path[512]; /* a file path or URI */

typedef struct tl_model {
  tl_name name;                /* URDF robot name */
  char source[512];            /* file the model came from, or "<string>" */
  tl_base_type base;           /* TL_BASE_FLOATING or TL_BASE_FIXED (never AUTO) */
  /* sizes: the row counts of the arrays (model_xmacro.h) */
  int nbody;                   /* bodies == movable joints, the root joint included */
  int nq, nv;                  /* generalized coordinates, velocities (DOFs) */
  int nframe, ngeom;           /* frames, collision geoms */
  int nhull, nhull_vert, nhull_face; /* convex hulls and their vertex / triangle pools */
  int nlink;                   /* URDF links */
  int nvisual, nmaterial;      /* URDF <visual> and robot-level <material> elements */
  int nloop;                   /* URDF <loop_joint> elements (loop constraints) */

  double total_mass;
  int nwarning;
  char warnings[16][256];

  /* every array, [count * width] elements of type, one line each in model_xmacro.h */
#define TL_MX_FIELD(type, name, count, width, use) type *name;
  TL_MODEL_ARRAYS(TL_MX_FIELD)
#undef TL_MX_FIELD
} tl_model;

/* Allocate every array for the given sizes, zero-initialised. Returns NULL on
 * allocation failure. */
tl_model *tl_model_alloc(int nbody, int nq, int nv, int nframe, int ngeom, int nlink);
/* Recompute body_mass, body_com, body_inertia and total_mass from the link
 * inertials (exact: first moments and inertias about the body origin add). */
void tl_model_merge_links(tl_model *m);
/* Attach a convex hull (vertices in the geom frame, triangles) to geom g.
 * Returns 0, or -1 for fewer than 4 vertices or faces, a face index out of
 * range, or allocation failure (the model is then unchanged). */
int tl_model_add_hull(tl_model *m, int g, int nvert, const double *vert, int nface, const int *face);
/* Resize the visual and material arrays to nvisual / nmaterial entries
 * (new entries zeroed). Returns 0, or -1 on allocation failure (the model is
 * then unchanged). */
int tl_model_set_extra_counts(tl_model *m, int nvisual, int nmaterial);
/* Resize the loop arrays to nloop entries (new entries zeroed). Returns 0,
 * or -1 on allocation failure (the model is then unchanged). */
int tl_model_set_nloop(tl_model *m, int nloop);
/* Deep copy (for per-system mutable parameters). NULL on allocation failure. */
tl_model *tl_model_copy(const tl_model *m);
/* q (nq) = the default configuration (tl_model_default_q, no checks). */
void tl_model_default_q_fill(const tl_model *m, double *q);
void tl_model_free(tl_model *m);
/* Append a frame (user frame, rigidly attached to `body` at pos / rot in the
 * body frame). Returns its index, or -1 on allocation failure (the model is
 * then unchanged). */
int tl_model_add_frame(tl_model *m, const char *name, int body, const double pos[3], const double rot[9]);

/* TL_ERR_ARGUMENT for an index i of kind `what` ("geom", "dof", ...) outside
 * [0, n), naming the model and the count (or for a NULL model). */
tl_status tl_model_index_error(const tl_model *m, const char *what, int i, int n, tl_error *err);

#endif
