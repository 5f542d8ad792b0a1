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
 * All arrays are owned by the model and allocated once by tl_model_alloc(). */
#ifndef TALUS_MODEL_MODEL_H
#define TALUS_MODEL_MODEL_H

#include "talus/types.h"

#define TL_NAME_MAX 128

typedef char tl_name[TL_NAME_MAX];

typedef struct tl_model {
  tl_name name;                /* URDF robot name */
  char source[512];            /* file the model came from, or "<string>" */
  tl_base_type base;           /* TL_BASE_FLOATING or TL_BASE_FIXED (never AUTO) */
  int nbody, nq, nv, nframe, ngeom;

  /* ---- bodies (and the movable joint that carries each) : [nbody] ---- */
  tl_name *body_name;          /* URDF link name of the body */
  tl_name *joint_name;         /* URDF joint name ("ROOT" for the base) */
  int *parent;                 /* parent body, -1 for the base */
  tl_joint_type *jnt_type;
  int *jnt_line;               /* URDF line of the joint (the base: of the root link) */
  int *q_adr, *v_adr;          /* first index into q / u */
  int *jnt_nq, *jnt_nv;
  double *jnt_pos;             /* [nbody*3] joint frame origin in the parent body frame (m) */
  double *jnt_rot;             /* [nbody*9] joint frame orientation in the parent body frame, row-major */
  double *jnt_axis;            /* [nbody*3] unit axis in the joint frame */
  double *jnt_axis2;           /* [nbody*3] universal joints: second axis in the child frame;
                                  planar joints: the first in-plane axis t1 (joint frame) */
  double *body_mass;           /* [nbody] kg, after merging fixed children */
  double *body_com;            /* [nbody*3] COM in the body frame (m) */
  double *body_inertia;        /* [nbody*9] inertia about the COM, body frame axes (kg m^2) */
  double *jnt_spring_quat;     /* [nbody*4] spring rest orientation of spherical joints (w x y z) */

  /* ---- degrees of freedom : [nv] ---- */
  int *dof_body;               /* body whose joint owns the DOF */
  int *dof_parent;             /* previous DOF on the path to the root, -1 if none (LTDL) */
  double *dof_rotor_inertia;   /* reflected rotor inertia added to diag(M) */
  double *dof_damping;         /* viscous joint damping (N m s/rad, N s/m) */
  double *dof_friction;        /* Coulomb joint friction (N m, N) */
  double *dof_stiffness;       /* joint spring stiffness (N m/rad, N/m) */
  double *dof_spring_mount;    /* spring rest position (1-DOF and universal joints, per DOF) */
  double *dof_lower, *dof_upper; /* position limits, +-INFINITY if none */
  double *dof_effort;          /* actuation limit, INFINITY if none */
  double *dof_velocity;        /* velocity limit, INFINITY if none */
  int *dof_mimic;              /* URDF <mimic>: DOF this one follows, -1 if none */
  double *dof_mimic_mult;      /* q_this = mult * q_followed + offset */
  double *dof_mimic_offset;

  double *q0;                  /* [nq] reference configuration: zeros, identity quaternions,
                                  floating base at the origin */

  /* ---- frames : [nframe] (one per URDF joint, fixed ones included, + user frames) ---- */
  tl_name *frame_name;
  int *frame_body;             /* body the frame is rigidly attached to */
  double *frame_pos;           /* [nframe*3] frame origin in the body frame */
  double *frame_rot;           /* [nframe*9] frame orientation in the body frame */
  tl_joint_type *frame_jnt_type; /* type of the joint the frame is named after */
  tl_name *frame_link;         /* URDF child link of that joint */

  /* ---- collision geoms : [ngeom] ---- */
  tl_name *geom_name;          /* collision name, or "LINK/i" when unnamed */
  tl_name *geom_link;          /* URDF link it was declared on */
  int *geom_body;
  tl_geom_type *geom_type;
  double *geom_size;           /* [ngeom*3] see tl_geom_type */
  double *geom_pos;            /* [ngeom*3] in the body frame */
  double *geom_rot;            /* [ngeom*9] in the body frame */
  double *geom_friction;       /* Coulomb coefficient, default 0.8 (used when no material pair is set) */
  char (*geom_mesh)[512];      /* mesh URI as written (mesh geoms) */
  tl_name *geom_material;      /* material name ("" = the world's default material) */
  unsigned *geom_group;        /* ODE-style collision category bits, default 1 */
  unsigned *geom_mask;         /* categories this geom collides with, default all */
  int *geom_hull;              /* index of the geom's convex hull, -1 if none */

  /* ---- convex hulls of collision meshes (pools, see tl_model_add_hull) ---- */
  int nhull;
  int *hull_vert_adr, *hull_nvert, *hull_face_adr, *hull_nface; /* [nhull] */
  int nhull_vert, nhull_face;
  double *hull_vert;           /* [nhull_vert*3] in the geom frame, scale applied */
  int *hull_face;              /* [nhull_face*3] triangles */

  /* ---- URDF links (kept so that inertial parameters can be changed and the
   * merged bodies recomputed, RaiSim's updateMassInfo) : [nlink] ---- */
  int nlink;
  tl_name *link_name;
  int *link_body;              /* body the link is merged into */
  double *link_pos;            /* [nlink*3] link frame in the body frame */
  double *link_rot;            /* [nlink*9] */
  double *link_mass;           /* kg */
  double *link_com;            /* [nlink*3] COM in the link frame */
  double *link_inertia;        /* [nlink*9] inertia about the COM, link frame axes */

  double total_mass;
  int nwarning;
  char warnings[16][256];

  /* ---- URDF content that physics does not use, kept for queries and for
   * export (urdf/urdf_query.c, urdf/urdf_export.c) ---- */
  int *link_parent;            /* [nlink] parent link in the URDF tree, -1 for the root link */
  double *jnt_calibration;     /* [nbody*2] <calibration rising falling>, NAN when absent */
  double *jnt_safety;          /* [nbody*4] <safety_controller> soft_lower_limit, soft_upper_limit,
                                  k_position, k_velocity; all NAN when absent */
  double *geom_restitution;    /* [ngeom] link-level <contact> values, NAN when not given */
  double *geom_contact_stiffness; /* [ngeom] */
  double *geom_contact_damping;   /* [ngeom] */
  char (*geom_mesh_file)[512]; /* [ngeom] resolved mesh path, "" if none */
  int nvisual;                 /* <visual> elements : [nvisual] */
  tl_name *visual_name;        /* name attribute, "" if none */
  tl_name *visual_link;        /* URDF link it was declared on */
  int *visual_body;
  tl_geom_type *visual_type;
  double *visual_size;         /* [nvisual*3] as geom_size */
  double *visual_pos;          /* [nvisual*3] in the body frame */
  double *visual_rot;          /* [nvisual*9] in the body frame */
  char (*visual_mesh)[512];    /* mesh URI as written */
  char (*visual_mesh_file)[512]; /* resolved mesh path, "" if none or not found */
  tl_name *visual_material;    /* material name, "" if none */
  double *visual_rgba;         /* [nvisual*4] colour (inline, else the robot-level material's), NAN if none */
  char (*visual_texture)[512]; /* texture file name, "" if none */
  int nmaterial;               /* robot-level <material> elements : [nmaterial] */
  tl_name *material_name;
  double *material_rgba;       /* [nmaterial*4], NAN if no colour */
  char (*material_texture)[512];
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
/* Deep copy (for per-system mutable parameters). NULL on allocation failure. */
tl_model *tl_model_copy(const tl_model *m);
/* q (nq) = the default configuration (tl_model_default_q, no checks). */
void tl_model_default_q_fill(const tl_model *m, double *q);
void tl_model_free(tl_model *m);
/* Append a frame (user frame, rigidly attached to `body` at pos / rot in the
 * body frame). Returns its index, or -1 on allocation failure (the model is
 * then unchanged). */
int tl_model_add_frame(tl_model *m, const char *name, int body, const double pos[3], const double rot[9]);

#endif
