/* Talus URDF loader (libxml2), with RaiSim's extensions: <capsule radius
 * length|height>, and rotor_inertia, spring_mount, stiffness on
 * <joint><dynamics>; link-level <contact> blocks (lateral_friction,
 * restitution, stiffness, damping); RaiSim's templates (`@@Name` variables,
 * `{expression}` arithmetic). Also read: <visual>, <material>, <mimic>,
 * <calibration>, <safety_controller> (queries in talus/model.h).
 * <transmission>, <gazebo> and unknown elements are skipped (listed with
 * `verbose`). Planar joints are refused (TL_ERR_UNSUPPORTED).
 *
 * Meshes: package://NAME/... (also package:///NAME/...), file:// and
 * relative paths are resolved from the URDF's folder and its parents,
 * TALUS_PACKAGE_PATH and ROS_PACKAGE_PATH (colon-separated); collision meshes
 * (STL, OBJ, DAE, read with assimp, `scale` applied) become their convex hull
 * (qhull). A missing collision mesh is an error, a missing visual mesh a
 * warning; network URIs are refused. */
#ifndef TALUS_URDF_H
#define TALUS_URDF_H

#include <stdio.h>

#include "talus/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_load_options {
  tl_base_type base; /* TL_BASE_AUTO (default): fixed iff the root link is "world" joined by a fixed joint */
  int verbose;       /* print skipped elements and warnings to stderr */
  /* Template variables (RaiSim's templated URDF): every `@@Name` of the text
   * is replaced by var_values[i] where var_names[i] is "Name", and every
   * `{expression}` (numbers, variables, + - * /, parentheses, unary minus)
   * by its value. Default: none (a `@@Name` in the file is then an error
   * naming it and its line). */
  const char *const *var_names;
  const double *var_values;
  int nvar;
  /* Folder that relative mesh paths start from and package:// search starts
   * at. NULL (default): the URDF file's folder; for text, the current
   * directory. Useful to load an exported model (tl_model_export_urdf)
   * written away from the original file. */
  const char *mesh_dir;
  /* 1: do not resolve or read mesh files (no convex hulls: mesh geoms then
   * take part in no collision), for kinematics-only use. Default 0. */
  int no_meshes;
} tl_load_options;

/* Default options (TL_BASE_AUTO, quiet). */
tl_load_options tl_load_options_default(void);

/* Load and compile a URDF file into a model.
 * path: file system path. opt: NULL for defaults. *out: set to a new model on
 * success, NULL on failure. Errors: TL_ERR_IO (unreadable file),
 * TL_ERR_PARSE (malformed XML or numbers), TL_ERR_INVALID (impossible robot:
 * cycles, unknown links, negative mass, ...), each with file and line. */
tl_status tl_model_load_urdf(const char *path, const tl_load_options *opt, tl_model **out,
                             tl_error *err);

/* Same for URDF text in memory; `name` is used as the file name in errors
 * (NULL: "<string>"). */
tl_status tl_model_load_urdf_string(const char *text, size_t len, const char *name,
                                    const tl_load_options *opt, tl_model **out, tl_error *err);

/* One call for both (RaiSim's addArticulatedSystem): text whose first
 * character after white space and an optional UTF-8 byte order mark is '<'
 * is URDF text (as tl_model_load_urdf_string with name NULL), anything else
 * a path (as tl_model_load_urdf). */
tl_status tl_model_load_urdf_any(const char *path_or_text, const tl_load_options *opt,
                                 tl_model **out, tl_error *err);

/* Write `model` as URDF to the file `path` (replaced; removed again when
 * writing fails). Every URDF link is written with its own inertial, every
 * joint (fixed ones included) with its origin, axis, limits, dynamics,
 * mimic, calibration and safety controller; collision geoms with their name,
 * link-level <contact> values; visuals and materials; mesh URIs as they were
 * written in the original file. Loading the export with the same base type
 * (and `mesh_dir` = the original file's folder when the export lies
 * elsewhere and meshes use relative or package:// paths) gives the same
 * model: bodies, joints, frames, inertias, geoms, limits, dynamics, mimics,
 * to the last bit or nearly (rpy angles are recomputed from rotation
 * matrices, < 1e-15 relative). User frames (tl_system_add_frame) are not
 * written. A fixed-base model whose root link is not "world" is written
 * with that root; load it with base = TL_BASE_FIXED. Errors: TL_ERR_IO. */
tl_status tl_model_export_urdf(const tl_model *model, const char *path, tl_error *err);
/* The same into an open stream (not closed). */
tl_status tl_model_export_urdf_file(const tl_model *model, FILE *f, tl_error *err);

#ifdef __cplusplus
}
#endif
#endif
