/* Internal: the raw content of a URDF file, as parsed by libxml2, before it is
 * compiled into a tl_model (urdf/urdf_compile.c). Every element keeps the
 * line it came from so later stages can report errors against the file.
 *
 * The parser (urdf/urdf_parse.c) guarantees on success:
 *  - link and joint names are unique and non-empty;
 *  - every joint's parent and child name an existing link (parent_link /
 *    child_link are indices into links[]), no link is the child of two joints,
 *    there is exactly one root link (a link that is no joint's child), and the
 *    link graph is a tree (no cycles);
 *  - all numbers are finite; masses >= 0; inertia matrices symmetric positive
 *    semi-definite (a singular inertia with mass > 0 is accepted with a
 *    warning: ANYmal C, HyQ and Talos ship them); geometry sizes > 0, except
 *    mesh scale factors, which are non-zero and may be negative (mirrored
 *    meshes, Talos); axes normalised (a zero axis is an error on revolute,
 *    prismatic, universal and hinge2 joints; on other types it is ignored and the
 *    default (1 0 0) kept: Talos has fixed joints with axis 0 0 0);
 *  - joints[] and links[] are in file order;
 *  - every <mimic> names an existing joint other than its own (mimic_joint
 *    is its index), and colours are in [0, 1].
 * Meshes are not touched by the parser: urdf/urdf_mesh.c resolves the URIs
 * and fills the hull fields of collision geoms afterwards.
 * Not part of the public API. */
#ifndef TALUS_URDF_DOC_H
#define TALUS_URDF_DOC_H

#include "talus/types.h"

#define TL_URDF_NAME_MAX 128
#define TL_URDF_PATH_MAX 512

typedef struct tl_urdf_pose {
  double xyz[3];
  double rpy[3]; /* URDF fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll) */
} tl_urdf_pose;

typedef struct tl_urdf_geom {
  int line;                       /* line of the <collision> (or <visual>) element */
  int shape_line;                 /* line of the shape element (<mesh>, <box>, ...) */
  char name[TL_URDF_NAME_MAX];    /* optional name attribute, "" if none */
  tl_urdf_pose origin;            /* in the link frame */
  tl_geom_type type;
  /* sphere: [r]; box: [x y z]; capsule/cylinder: [radius, length];
   * mesh: scale [sx sy sz] (default 1 1 1) */
  double size[3];
  char mesh_uri[TL_URDF_PATH_MAX]; /* filename attribute of <mesh>, as written */
  /* filled by tl_urdf_load_meshes (urdf_mesh.c), not by the parser: */
  char mesh_file[TL_URDF_PATH_MAX]; /* resolved path, "" if not resolved */
  int hull_nvert, hull_nface;     /* convex hull (collision meshes), geom frame, scale applied */
  double *hull_vert;              /* [hull_nvert*3] */
  int *hull_face;                 /* [hull_nface*3] triangles, outward counter-clockwise */
} tl_urdf_geom;

/* <material name><color rgba/><texture filename/></material>, at robot level
 * or inside a <visual>. */
typedef struct tl_urdf_material {
  int line;
  char name[TL_URDF_NAME_MAX];    /* "" if unnamed (inline only) */
  int has_color;
  double rgba[4];                 /* each in [0, 1] */
  char texture[TL_URDF_PATH_MAX]; /* texture filename, "" if none */
} tl_urdf_material;

/* <visual name><origin/><geometry/><material/></visual>: not used by physics. */
typedef struct tl_urdf_visual {
  tl_urdf_geom geom;              /* line, name, origin, shape (no hull) */
  int has_material;
  tl_urdf_material material;      /* as written inside the visual (colour may come from a
                                     robot-level material of the same name: see the compiler) */
} tl_urdf_visual;

typedef struct tl_urdf_link {
  int line;
  char name[TL_URDF_NAME_MAX];
  int has_inertial;
  tl_urdf_pose inertial_origin;   /* COM frame in the link frame */
  double mass;                    /* kg */
  double inertia[6];              /* ixx ixy ixz iyy iyz izz, about the COM, in the inertial_origin frame */
  int triangle_violation;         /* 1 if principal moments break A + B >= C (warning only) */
  int ngeom;
  tl_urdf_geom *geoms;            /* collision geometries, file order */
  int nvisual;
  tl_urdf_visual *visuals;        /* visual geometries, file order */
  /* link-level <contact> (PyBullet / RaiSim): NAN when not given */
  int contact_line;               /* 0 if the link has no <contact> */
  double contact_friction;        /* <lateral_friction value> */
  double contact_restitution;     /* <restitution value> */
  double contact_stiffness;       /* <stiffness value> */
  double contact_damping;         /* <damping value> */
} tl_urdf_link;

typedef struct tl_urdf_joint {
  int line;
  char name[TL_URDF_NAME_MAX];
  tl_joint_type type;             /* revolute and continuous both map to TL_JOINT_REVOLUTE */
  int continuous;                 /* 1 if written as "continuous" */
  int hinge2;                     /* 1 if written as "hinge2" (ODE's hinge-2, a Talus extension):
                                     type is TL_JOINT_REVOLUTE, axis the steering axis (joint
                                     frame), axis2 the wheel axis (child frame at zero steering),
                                     lower / upper the steering limits; compiled into a chain of
                                     2 or 3 one-DOF joints (urdf_compile.c) */
  int suspension_line;            /* hinge2: line of <suspension>, 0 if none (rigid) */
  double suspension_stiffness;    /* hinge2 <suspension stiffness> along axis, N/m (>= 0) */
  double suspension_damping;      /* hinge2 <suspension damping>, N s/m (>= 0, default 0) */
  int parent_link;                /* index into links[] */
  int child_link;                 /* index into links[] */
  tl_urdf_pose origin;            /* child link frame in the parent link frame at q = 0 */
  double axis[3];                 /* unit axis in the joint frame, default (1 0 0) */
  double axis2[3];                /* universal and hinge2 joints: second axis in the child frame */
  int has_limit;
  double lower, upper;            /* position limits (rad or m); +-INFINITY when absent or continuous */
  double effort;                  /* N or N m; INFINITY when absent */
  double velocity;                /* rad/s or m/s; INFINITY when absent */
  double damping;                 /* <dynamics damping>, N m s/rad or N s/m, default 0 */
  double friction;                /* <dynamics friction>, N m or N, default 0 */
  double rotor_inertia;           /* RaiSim <dynamics rotor_inertia>, kg m^2 (or kg), default 0 */
  double stiffness;               /* RaiSim <dynamics stiffness>, default 0 */
  double spring_mount[4];         /* RaiSim <dynamics spring_mount>: spring rest position; one
                                     number for 1-DOF joints, two (angles) for universal joints,
                                     a quaternion w x y z for spherical joints (default identity) */
  int mimic_line;                 /* line of <mimic>, 0 if none */
  int mimic_joint;                /* index into joints[] of the followed joint, -1 if none */
  double mimic_mult, mimic_offset;/* q = mult * q_followed + offset (defaults 1, 0) */
  double calibration[2];          /* <calibration rising falling>, NAN when absent */
  int has_safety;                 /* 1 if <safety_controller> is present */
  double safety[4];               /* soft_lower_limit, soft_upper_limit, k_position, k_velocity;
                                     absent soft limits and k_position: 0 (URDF specification);
                                     k_velocity is required */
} tl_urdf_joint;

/* <loop_joint name type><link1 link xyz rpy/><link2 link xyz rpy/><axis xyz/></loop_joint>
 * (a Talus extension, RaiSim-style: other parsers skip it): a loop-closure
 * constraint between two links of the robot (talus/constraint.h), added to
 * the world with the system. The parser guarantees: a unique non-empty name
 * (among loop joints), a known type, both links present, defined and
 * different, finite numbers, a nonzero axis (hinge; normalised). */
typedef struct tl_urdf_loop {
  int line;
  char name[TL_URDF_NAME_MAX];
  int type;                       /* tl_constraint_type: ball, hinge or weld */
  int link[2];                    /* indices into links[] */
  char link_name[2][TL_URDF_NAME_MAX]; /* <link1 link>, <link2 link> as written */
  int link_line[2];               /* lines of <link1>, <link2> */
  tl_urdf_pose frame[2];          /* frame on each link, in its link frame */
  double axis[3];                 /* hinge: unit axis in link1's frame, default (0 0 1) */
} tl_urdf_loop;

typedef struct tl_urdf_doc {
  char path[TL_URDF_PATH_MAX];    /* file name for error messages ("<string>" for text input) */
  char robot_name[TL_URDF_NAME_MAX];
  int nlink;
  tl_urdf_link *links;
  int njoint;
  tl_urdf_joint *joints;
  int root_link;                  /* index of the unique root link */
  int nwarning;
  char warnings[16][256];         /* first warnings (e.g. triangle inequality), for verbose output */
  int nmaterial;
  tl_urdf_material *materials;    /* robot-level <material> elements, file order */
  int nloop;
  tl_urdf_loop *loops;            /* <loop_joint> elements, file order */
  int nskipped;                   /* elements read past (<transmission>, <gazebo>, unknown ones) */
  char skipped[32][128];          /* the first of them, "line N: <name> ...", for verbose output */
} tl_urdf_doc;

/* Parse a URDF file (path) into *doc. On failure returns non-zero, fills err
 * (message "FILE:LINE: <element>: what is wrong, what was expected") and
 * leaves *doc zeroed with nothing allocated. */
tl_status tl_urdf_parse_file(const char *path, tl_urdf_doc *doc, tl_error *err);
/* Same for URDF text in memory; `name` is used as the file name in errors. */
tl_status tl_urdf_parse_string(const char *text, size_t len, const char *name,
                               tl_urdf_doc *doc, tl_error *err);
/* Resolve every mesh URI of doc (urdf/urdf_mesh.c) and compute the convex
 * hull of every collision mesh (assimp reads STL, OBJ and DAE; qhull).
 * base_dir: the folder relative paths start from and package:// search
 * starts at (see urdf_mesh.c). A collision mesh that cannot be found or read
 * is an error naming the file, line and URI; a missing visual mesh is a
 * warning; network URIs are refused. */
tl_status tl_urdf_load_meshes(tl_urdf_doc *doc, const char *base_dir, tl_error *err);

/* Free everything a successful parse allocated and zero *doc. Safe on a zeroed doc. */
void tl_urdf_doc_free(tl_urdf_doc *doc);

#endif
