/* Internal: the one list of tl_model's arrays (the X-macro idea of MuJoCo's
 * mjxmacro.h).
 *
 * Each entry X(type, name, count, width, use) declares one array of the model:
 *   type   element type (tl_name and tl_path are fixed-size strings)
 *   name   the field of tl_model (and of tl_engine_model when exported)
 *   count  the tl_model size field giving its number of rows (nbody, nv, nq,
 *          nframe, ngeom, nlink, nhull, nhull_vert, nhull_face, nvisual,
 *          nmaterial, nloop)
 *   width  elements per row, so the array holds count * width elements
 *   use    one token saying who else sees it:
 *            NONE       the model only (its own code, urdf/, the CLI...)
 *            VIEW       exported as is in the engine model view
 *                       (tl_engine_model, talus/engine.h: the field of the
 *                       same name there)
 *            VIEW_HASH  exported, and hashed in the fingerprint a world with
 *                       a plugin engine rebuilds on (engine_link.c): every
 *                       array a public setter (tl_system_set_*) can change
 *            HASH       hashed only
 * From this list come: the tl_model fields (model.h), allocation, deep copy,
 * resizing and free (model.c), the engine model view (engine_scene.c) and
 * the fingerprint (engine_link.c). Adding a model array is one line here (a
 * VIEW array also needs its field in tl_engine_model; the compiler checks
 * that it exists and has the same element size). Default values other than
 * zero are set in tl_model_alloc.
 *
 * The order of the entries is the order of the struct fields and of the
 * fingerprint's hashing; it changes no result. */
#ifndef TALUS_MODEL_MODEL_XMACRO_H
#define TALUS_MODEL_MODEL_XMACRO_H

#define TL_MODEL_ARRAYS(X)                                                                          \
  /* ---- bodies and the movable joint that carries each : [nbody] ---- */                          \
  X(tl_name, body_name, nbody, 1, VIEW)               /* URDF link name of the body */              \
  X(tl_name, joint_name, nbody, 1, VIEW)              /* URDF joint name ("ROOT" for the base) */   \
  X(int, parent, nbody, 1, VIEW)                      /* parent body, -1 for the base */            \
  X(tl_joint_type, jnt_type, nbody, 1, VIEW)                                                        \
  X(int, jnt_line, nbody, 1, NONE)                    /* URDF line of the joint (base: root link) */ \
  X(int, q_adr, nbody, 1, VIEW)                       /* first index into q */                      \
  X(int, v_adr, nbody, 1, VIEW)                       /* first index into u */                      \
  X(int, jnt_nq, nbody, 1, VIEW)                                                                    \
  X(int, jnt_nv, nbody, 1, VIEW)                                                                    \
  X(double, jnt_pos, nbody, 3, VIEW_HASH)   /* joint frame origin in the parent body frame (m) */   \
  X(double, jnt_rot, nbody, 9, VIEW_HASH)   /* joint frame orientation in the parent body frame */  \
  X(double, jnt_axis, nbody, 3, VIEW_HASH)  /* unit axis in the joint frame */                      \
  X(double, jnt_axis2, nbody, 3, VIEW_HASH) /* universal: second axis in the child frame;           \
                                               planar: the first in-plane axis t1 (joint frame) */  \
  X(double, body_mass, nbody, 1, VIEW_HASH)       /* kg, after merging fixed children */            \
  X(double, body_com, nbody, 3, VIEW_HASH)        /* COM in the body frame (m) */                   \
  X(double, body_inertia, nbody, 9, VIEW_HASH)    /* about the COM, body frame axes (kg m^2) */     \
  X(double, jnt_spring_quat, nbody, 4, VIEW_HASH) /* spherical spring rest orientation (w x y z) */ \
  X(double, jnt_calibration, nbody, 2, NONE)      /* <calibration rising falling>, NAN if absent */ \
  X(double, jnt_safety, nbody, 4, NONE) /* <safety_controller> soft_lower_limit, soft_upper_limit,  \
                                           k_position, k_velocity; all NAN when absent */           \
  /* ---- degrees of freedom : [nv] ---- */                                                         \
  X(int, dof_body, nv, 1, VIEW)                  /* body whose joint owns the DOF */                \
  X(int, dof_parent, nv, 1, NONE)                /* previous DOF towards the root, -1 (LTDL) */     \
  X(double, dof_rotor_inertia, nv, 1, VIEW_HASH) /* reflected rotor inertia added to diag(M) */     \
  X(double, dof_damping, nv, 1, VIEW_HASH)       /* viscous damping (N m s/rad, N s/m) */           \
  X(double, dof_friction, nv, 1, VIEW_HASH)      /* Coulomb joint friction (N m, N) */              \
  X(double, dof_stiffness, nv, 1, VIEW_HASH)     /* joint spring stiffness (N m/rad, N/m) */        \
  X(double, dof_spring_mount, nv, 1, VIEW_HASH)  /* spring rest position (1-DOF, universal) */      \
  X(double, dof_lower, nv, 1, VIEW_HASH)         /* position limits, +-INFINITY if none */          \
  X(double, dof_upper, nv, 1, VIEW_HASH)                                                            \
  X(double, dof_effort, nv, 1, VIEW_HASH)        /* actuation limit, INFINITY if none */            \
  X(double, dof_velocity, nv, 1, VIEW_HASH)      /* velocity limit, INFINITY if none */             \
  X(int, dof_mimic, nv, 1, VIEW)                 /* URDF <mimic>: DOF followed, -1 if none */       \
  X(double, dof_mimic_mult, nv, 1, VIEW)         /* q_this = mult * q_followed + offset */          \
  X(double, dof_mimic_offset, nv, 1, VIEW)                                                          \
  /* ---- configuration : [nq] ---- */                                                              \
  X(double, q0, nq, 1, NONE) /* reference configuration: zeros, identity quaternions, base at 0 */  \
  /* ---- frames : [nframe] (one per URDF joint, fixed ones included, + user frames) ---- */        \
  X(tl_name, frame_name, nframe, 1, NONE)                                                           \
  X(int, frame_body, nframe, 1, NONE)                 /* body the frame is rigidly attached to */   \
  X(double, frame_pos, nframe, 3, NONE)               /* frame origin in the body frame */          \
  X(double, frame_rot, nframe, 9, NONE)               /* frame orientation in the body frame */     \
  X(tl_joint_type, frame_jnt_type, nframe, 1, NONE)   /* type of the joint it is named after */     \
  X(tl_name, frame_link, nframe, 1, NONE)             /* URDF child link of that joint */           \
  /* ---- collision geoms : [ngeom] ---- */                                                         \
  X(tl_name, geom_name, ngeom, 1, VIEW)               /* collision name, or "LINK/i" if unnamed */  \
  X(tl_name, geom_link, ngeom, 1, NONE)               /* URDF link it was declared on */            \
  X(int, geom_body, ngeom, 1, VIEW)                                                                 \
  X(tl_geom_type, geom_type, ngeom, 1, VIEW)                                                        \
  X(double, geom_size, ngeom, 3, VIEW)                /* see tl_geom_type */                        \
  X(double, geom_pos, ngeom, 3, VIEW)                 /* in the body frame */                       \
  X(double, geom_rot, ngeom, 9, VIEW)                 /* in the body frame */                       \
  X(double, geom_friction, ngeom, 1, VIEW_HASH)       /* Coulomb coefficient, default 0.8 */        \
  X(tl_path, geom_mesh, ngeom, 1, NONE)               /* mesh URI as written (mesh geoms) */        \
  X(tl_path, geom_mesh_file, ngeom, 1, NONE)          /* resolved mesh path, "" if none */          \
  X(tl_name, geom_material, ngeom, 1, VIEW_HASH)      /* material ("" = the world's default) */     \
  X(unsigned, geom_group, ngeom, 1, VIEW_HASH)        /* collision category bits, default 1 */      \
  X(unsigned, geom_mask, ngeom, 1, VIEW_HASH)         /* categories it collides with, default all */ \
  X(int, geom_hull, ngeom, 1, VIEW)                   /* its convex hull, -1 if none */             \
  X(double, geom_restitution, ngeom, 1, NONE)         /* link <contact> values, NAN if not given */ \
  X(double, geom_contact_stiffness, ngeom, 1, NONE)                                                 \
  X(double, geom_contact_damping, ngeom, 1, NONE)                                                   \
  /* ---- convex hulls of collision meshes (pools, see tl_model_add_hull) ---- */                   \
  X(int, hull_vert_adr, nhull, 1, VIEW)               /* first vertex of the hull in hull_vert */   \
  X(int, hull_nvert, nhull, 1, VIEW)                                                                \
  X(int, hull_face_adr, nhull, 1, VIEW)               /* first triangle of the hull in hull_face */ \
  X(int, hull_nface, nhull, 1, VIEW)                                                                \
  X(double, hull_vert, nhull_vert, 3, VIEW)           /* in the geom frame, scale applied */        \
  X(int, hull_face, nhull_face, 3, VIEW)              /* triangles */                               \
  /* ---- URDF links (kept so that inertials can be changed and the merged bodies                   \
   * recomputed, RaiSim's updateMassInfo) : [nlink] ---- */                                         \
  X(tl_name, link_name, nlink, 1, NONE)                                                             \
  X(int, link_body, nlink, 1, NONE)                   /* body the link is merged into */            \
  X(int, link_parent, nlink, 1, NONE)                 /* parent link, -1 for the root link */       \
  X(double, link_pos, nlink, 3, NONE)                 /* link frame in the body frame */            \
  X(double, link_rot, nlink, 9, NONE)                                                               \
  X(double, link_mass, nlink, 1, NONE)                /* kg */                                      \
  X(double, link_com, nlink, 3, NONE)                 /* COM in the link frame */                   \
  X(double, link_inertia, nlink, 9, NONE)             /* about the COM, link frame axes */          \
  /* ---- <visual> elements (not used by physics) : [nvisual] ---- */                               \
  X(tl_name, visual_name, nvisual, 1, NONE)           /* name attribute, "" if none */              \
  X(tl_name, visual_link, nvisual, 1, NONE)           /* URDF link it was declared on */            \
  X(int, visual_body, nvisual, 1, NONE)                                                             \
  X(tl_geom_type, visual_type, nvisual, 1, NONE)                                                    \
  X(double, visual_size, nvisual, 3, NONE)            /* as geom_size */                            \
  X(double, visual_pos, nvisual, 3, NONE)             /* in the body frame */                       \
  X(double, visual_rot, nvisual, 9, NONE)             /* in the body frame */                       \
  X(tl_path, visual_mesh, nvisual, 1, NONE)           /* mesh URI as written */                     \
  X(tl_path, visual_mesh_file, nvisual, 1, NONE)      /* resolved mesh path, "" if not found */     \
  X(tl_name, visual_material, nvisual, 1, NONE)       /* material name, "" if none */               \
  X(double, visual_rgba, nvisual, 4, NONE)  /* own colour, else the material's; NAN if none */      \
  X(tl_path, visual_texture, nvisual, 1, NONE)        /* texture file name, "" if none */           \
  /* ---- robot-level <material> elements : [nmaterial] ---- */                                     \
  X(tl_name, material_name, nmaterial, 1, NONE)                                                     \
  X(double, material_rgba, nmaterial, 4, NONE)        /* NAN if no colour */                        \
  X(tl_path, material_texture, nmaterial, 1, NONE)                                                 \
  /* ---- URDF <loop_joint> loop closures (Talus extension), added to the world as                  \
   * constraints with the system (talus/constraint.h) : [nloop] ---- */                             \
  X(tl_name, loop_name, nloop, 1, NONE)                                                             \
  X(int, loop_type, nloop, 1, NONE)                   /* tl_constraint_type: ball, hinge, weld */   \
  X(int, loop_line, nloop, 1, NONE)                   /* URDF line of the <loop_joint> */           \
  X(tl_name, loop_link1, nloop, 1, NONE)              /* URDF link names of the two sides */        \
  X(tl_name, loop_link2, nloop, 1, NONE)                                                            \
  X(double, loop_pos1, nloop, 3, NONE)                /* frame 1 origin in link1's frame (m) */     \
  X(double, loop_rpy1, nloop, 3, NONE)                /* frame 1 roll, pitch, yaw (rad) */          \
  X(double, loop_pos2, nloop, 3, NONE)                /* frame 2 origin in link2's frame (m) */     \
  X(double, loop_rpy2, nloop, 3, NONE)                                                              \
  X(double, loop_axis, nloop, 3, NONE)                /* hinge: unit axis in link1's frame */

/* Expand `code` only for the arrays of one use (token pasting on `use`). */
#define TL_MX_IF_VIEW_NONE(code)
#define TL_MX_IF_VIEW_VIEW(code) code
#define TL_MX_IF_VIEW_HASH(code)
#define TL_MX_IF_VIEW_VIEW_HASH(code) code
#define TL_MX_IF_HASH_NONE(code)
#define TL_MX_IF_HASH_VIEW(code)
#define TL_MX_IF_HASH_HASH(code) code
#define TL_MX_IF_HASH_VIEW_HASH(code) code

#endif
