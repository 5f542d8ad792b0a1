/* Talus world files: scenes with several robots and objects (docs/world_format.md).
 *
 * A world file is XML with the root <talus_world>: gravity, time step, the
 * contact solver and its parameters, materials and material pairs, a ground
 * plane, heightmaps, static primitives, dynamic primitives (single rigid
 * objects) and articulated systems loaded from URDF with their base pose,
 * initial q and u and a controller, and loop constraints between their bodies
 * (<constraint>, talus/constraint.h). tl_scene_load builds a tl_world from it.
 *
 * The XML is read with libxml2 as the URDF loader reads it: from memory,
 * no network (XML_PARSE_NONET), no entity substitution, no external entity
 * or DTD loading (a DOCTYPE is refused), libxml2's default size limits.
 * Every error names the file, the line and the element (tl_error.file,
 * .line, .element; message "FILE:LINE: <element>: ..."); on failure nothing
 * is left built (*world is NULL and *info empty). */
#ifndef TALUS_SCENE_H
#define TALUS_SCENE_H

#include "talus/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Gains of controller="stand" when kp / kd are not given (the values of
 * controllers/stand.h: TL_STAND_DEFAULT_KP / _KD). */
#define TL_SCENE_DEFAULT_KP 300.0
#define TL_SCENE_DEFAULT_KD 10.0

/* Controller named by a <system>. TL_SCENE_CONTROLLER_STAND: the loader
 * already sets PD gains kp / kd on every DOF except the 6 of a floating base
 * and PD targets = the initial configuration (velocity targets 0), so the
 * world holds the initial pose with no further code; an application may also
 * attach controllers/stand.h (tl_stand_init with q_target NULL: the same
 * gains and targets). */
typedef enum tl_scene_controller {
  TL_SCENE_CONTROLLER_NONE = 0,
  TL_SCENE_CONTROLLER_STAND = 1
} tl_scene_controller;

/* One <object> or <system> of the file, in world order. */
typedef struct tl_scene_system {
  char *name;    /* unique name (the name attribute or a default, see the docs) */
  int index;     /* tl_system_index of `system` */
  int is_object; /* 1: <object> (one rigid body), 0: <system> (URDF) */
  int line;      /* line of its element in the world file */
  char *urdf;    /* <system>: the URDF path as resolved; NULL for an object */
  tl_scene_controller controller;
  double kp, kd;     /* stand gains (N m/rad, N m s/rad); 0 for controller none */
  tl_system *system; /* owned by the world */
} tl_scene_system;

typedef struct tl_scene_info {
  int nsystem;
  tl_scene_system *systems; /* nsystem entries (malloc) */
  int narticulated;         /* how many are <system> */
  int first_articulated;    /* index into systems of the first <system>, -1 if none */
  int nstatic;              /* static world geoms added (ground, heightmaps, <static>) */
  char *name;               /* name attribute of <talus_world>, "" if none */
  int nconstraint;          /* <constraint> elements added (tl_world_nconstraint also counts the
                               <loop_joint> loops of the systems' URDFs) */
} tl_scene_info;

/* Load the world file `path` into a new world (*world, free with
 * tl_world_free) and describe its systems in *info (may be NULL; free with
 * tl_scene_info_free). Relative paths in the file (urdf, heightmap file)
 * start at the world file's folder. Errors: TL_ERR_IO (unreadable world,
 * URDF or heightmap file), TL_ERR_PARSE (malformed XML or numbers),
 * TL_ERR_INVALID (unknown elements or attributes, impossible values), and
 * the status of a failing URDF load or engine call, each naming the world
 * file, line and element. */
tl_status tl_scene_load(const char *path, tl_world **world, tl_scene_info *info, tl_error *err);

/* Free what tl_scene_load put in *info and empty it (nsystem 0, pointers NULL,
 * first_articulated -1). NULL is allowed. */
void tl_scene_info_free(tl_scene_info *info);

/* 1 if the file's root element is <talus_world> (read from the start of the
 * file only, not validated), 0 if it is something else, -1 if the file
 * cannot be read. */
int tl_scene_is_world_file(const char *path);

#ifdef __cplusplus
}
#endif
#endif
