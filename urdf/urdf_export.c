/* Export a tl_model back to URDF (talus/urdf.h, tl_model_export_urdf).
 *
 * The model keeps the URDF links (link_*: pose in the body frame, own
 * inertial, parent link) and one frame per joint, frame i being the frame of
 * the joint whose child is link i (urdf_compile.c). So the export writes the
 * original tree: every link with its own inertial (COM, inertia in the link
 * frame), every joint with its origin relative to its parent link (the
 * inverse of the parent link's pose in the body frame times the child's),
 * and reloading it compiles the same bodies, merged inertias, frames and
 * geoms. Numbers are written with 17 significant digits (exact for the
 * values that are stored as written); rotations as roll-pitch-yaw recovered
 * from the matrices (R = Rz(yaw) Ry(pitch) Rx(roll)), which is exact to a few
 * ulps. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "math/tl_math.h"
#include "model/model.h"
#include "talus/urdf.h"

/* ---- writing helpers ---- */

/* XML-escaped string. */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if ((unsigned char)*s < 0x20) /* tab, newline, carriage return: kept through attribute normalisation */
          fprintf(f, "&#x%X;", (unsigned)(unsigned char)*s);
        else
          fputc(*s, f);
    }
  }
}

static void put_attr(FILE *f, const char *name, const char *value) {
  fprintf(f, " %s=\"", name);
  put_escaped(f, value);
  fputc('"', f);
}

static void put_num(FILE *f, const char *name, double v) { fprintf(f, " %s=\"%.17g\"", name, v); }

static void put_vec(FILE *f, const char *name, const double *v, int n) {
  fprintf(f, " %s=\"", name);
  for (int i = 0; i < n; i++) fprintf(f, "%s%.17g", i ? " " : "", v[i] == 0 ? 0.0 : v[i]);
  fputc('"', f);
}

/* Roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll). */
static void rpy_of(const double R[9], double rpy[3]) {
  double cp = sqrt(R[0] * R[0] + R[3] * R[3]);
  rpy[1] = atan2(-R[6], cp);
  if (cp > 1e-12) {
    rpy[0] = atan2(R[7], R[8]);
    rpy[2] = atan2(R[3], R[0]);
  } else { /* gimbal lock: only roll - yaw (or roll + yaw) is defined; take yaw = 0 */
    rpy[2] = 0;
    rpy[0] = atan2(-R[5], R[4]);
  }
}

/* <origin> of pose (pos, R) relative to the frame (ppos, pR): inv(P) * X. */
static void put_origin(FILE *f, const char *indent, const double ppos[3], const double pR[9],
                       const double pos[3], const double R[9]) {
  double d[3], xyz[3], rel[9], rpy[3];
  tl_v3_sub(d, pos, ppos);
  tl_m3_tmulv(xyz, pR, d);
  tl_m3_tmul(rel, pR, R);
  rpy_of(rel, rpy);
  fprintf(f, "%s<origin", indent);
  put_vec(f, "xyz", xyz, 3);
  put_vec(f, "rpy", rpy, 3);
  fputs("/>\n", f);
}

/* <geometry> of a shape. */
static void put_geometry(FILE *f, const char *indent, tl_geom_type type, const double *size,
                         const char *mesh) {
  fprintf(f, "%s<geometry>", indent);
  switch (type) {
    case TL_GEOM_SPHERE: fputs("<sphere", f); put_num(f, "radius", size[0]); break;
    case TL_GEOM_BOX: fputs("<box", f); put_vec(f, "size", size, 3); break;
    case TL_GEOM_CYLINDER:
      fputs("<cylinder", f); put_num(f, "radius", size[0]); put_num(f, "length", size[1]);
      break;
    case TL_GEOM_CAPSULE:
      fputs("<capsule", f); put_num(f, "radius", size[0]); put_num(f, "length", size[1]);
      break;
    default:
      fputs("<mesh", f); put_attr(f, "filename", mesh); put_vec(f, "scale", size, 3);
      break;
  }
  fputs("/></geometry>\n", f);
}

/* Robot-level materials sorted by name, for lookups by name. */
typedef struct named {
  const char *name;
  int index;
} named;

static int named_cmp(const void *a, const void *b) { return strcmp(((const named *)a)->name, ((const named *)b)->name); }
static int named_key_cmp(const void *key, const void *e) { return strcmp((const char *)key, ((const named *)e)->name); }

/* Robot-level material named `name`, or -1. */
static int material_index(const tl_model *m, const named *sorted, const char *name) {
  if (!name[0] || m->nmaterial == 0) return -1;
  const named *hit = bsearch(name, sorted, (size_t)m->nmaterial, sizeof(*sorted), named_key_cmp);
  return hit ? hit->index : -1;
}

static int same_rgba(const double *a, const double *b) {
  for (int k = 0; k < 4; k++)
    if (!(a[k] == b[k] || (isnan(a[k]) && isnan(b[k])))) return 0;
  return 1;
}

/* ---- links ---- */

static void put_visual(FILE *f, const tl_model *m, const named *mats, int v, int l) {
  fputs("    <visual", f);
  if (m->visual_name[v][0]) put_attr(f, "name", m->visual_name[v]);
  fputs(">\n", f);
  put_origin(f, "      ", m->link_pos + 3 * l, m->link_rot + 9 * l, m->visual_pos + 3 * v, m->visual_rot + 9 * v);
  put_geometry(f, "      ", m->visual_type[v], m->visual_size + 3 * v, m->visual_mesh[v]);
  const double *rgba = m->visual_rgba + 4 * v;
  const char *name = m->visual_material[v], *tex = m->visual_texture[v];
  int gi = material_index(m, mats, name);
  int own_color = !isnan(rgba[0]) && (gi < 0 || !same_rgba(rgba, m->material_rgba + 4 * gi));
  int own_texture = tex[0] && (gi < 0 || strcmp(tex, m->material_texture[gi]) != 0);
  if (name[0] || own_color || own_texture) {
    fputs("      <material", f);
    put_attr(f, "name", name);
    fputs(">", f);
    if (own_color) {
      fputs("<color", f);
      put_vec(f, "rgba", rgba, 4);
      fputs("/>", f);
    }
    if (own_texture) {
      fputs("<texture", f);
      put_attr(f, "filename", tex);
      fputs("/>", f);
    }
    fputs("</material>\n", f);
  }
  fputs("    </visual>\n", f);
}

/* Geoms and visuals are stored link by link in link order (urdf_compile.c):
 * the export walks them with cursors, so it is linear in the model size. */
typedef struct cursors {
  int geom, visual;
  const named *mats; /* materials sorted by name */
} cursors;

static void put_link(FILE *f, const tl_model *m, int l, cursors *cur) {
  const char *name = m->link_name[l];
  fputs("  <link", f);
  put_attr(f, "name", name);
  fputs(">\n", f);
  if (m->link_mass[l] > 0) {
    const double *I = m->link_inertia + 9 * l;
    fputs("    <inertial>\n      <origin", f);
    put_vec(f, "xyz", m->link_com + 3 * l, 3);
    fputs(" rpy=\"0 0 0\"/>\n      <mass", f);
    put_num(f, "value", m->link_mass[l]);
    fputs("/>\n      <inertia", f);
    put_num(f, "ixx", I[0]); put_num(f, "ixy", I[1]); put_num(f, "ixz", I[2]);
    put_num(f, "iyy", I[4]); put_num(f, "iyz", I[5]); put_num(f, "izz", I[8]);
    fputs("/>\n    </inertial>\n", f);
  }
  for (; cur->visual < m->nvisual && strcmp(m->visual_link[cur->visual], name) == 0; cur->visual++)
    put_visual(f, m, cur->mats, cur->visual, l);
  int contact = -1;
  for (; cur->geom < m->ngeom && strcmp(m->geom_link[cur->geom], name) == 0; cur->geom++) {
    int g = cur->geom;
    fputs("    <collision", f);
    put_attr(f, "name", m->geom_name[g]);
    fputs(">\n", f);
    put_origin(f, "      ", m->link_pos + 3 * l, m->link_rot + 9 * l, m->geom_pos + 3 * g, m->geom_rot + 9 * g);
    put_geometry(f, "      ", m->geom_type[g], m->geom_size + 3 * g, m->geom_mesh[g]);
    fputs("    </collision>\n", f);
    if (contact < 0 && strcmp(m->geom_material[g], name) == 0) contact = g;
  }
  if (contact >= 0) { /* the link had a <contact> block (urdf_compile.c names the material after the link) */
    int g = contact;
    fputs("    <contact>\n", f);
    fprintf(f, "      <lateral_friction value=\"%.17g\"/>\n", m->geom_friction[g]);
    if (!isnan(m->geom_restitution[g]))
      fprintf(f, "      <restitution value=\"%.17g\"/>\n", m->geom_restitution[g]);
    if (!isnan(m->geom_contact_stiffness[g]))
      fprintf(f, "      <stiffness value=\"%.17g\"/>\n", m->geom_contact_stiffness[g]);
    if (!isnan(m->geom_contact_damping[g]))
      fprintf(f, "      <damping value=\"%.17g\"/>\n", m->geom_contact_damping[g]);
    fputs("    </contact>\n", f);
  }
  fputs("  </link>\n", f);
}

/* ---- joints ---- */

/* Body whose first link is link l (the body its movable joint carries), or -1. */
static int body_of_link(const tl_model *m, int l) {
  int b = m->link_body[l];
  return strcmp(m->body_name[b], m->link_name[l]) == 0 ? b : -1;
}

static const char *joint_type_word(const tl_model *m, int b) {
  switch (m->jnt_type[b]) {
    case TL_JOINT_REVOLUTE: {
      int k = m->v_adr[b];
      return isinf(m->dof_lower[k]) && isinf(m->dof_upper[k]) ? "continuous" : "revolute";
    }
    case TL_JOINT_PRISMATIC: return "prismatic";
    case TL_JOINT_SPHERICAL: return "spherical";
    case TL_JOINT_UNIVERSAL: return "universal";
    case TL_JOINT_PLANAR: return "planar";
    case TL_JOINT_FLOATING: return "floating";
    default: return "fixed";
  }
}

/* Limits, dynamics, mimic, calibration and safety controller of body b's joint. */
static void put_joint_params(FILE *f, const tl_model *m, int b) {
  int k = m->v_adr[b], one = m->jnt_nv[b] == 1;
  double lo = one ? m->dof_lower[k] : -INFINITY, hi = one ? m->dof_upper[k] : INFINITY;
  double eff = m->dof_effort[k], vel = m->dof_velocity[k];
  if (isfinite(lo) || isfinite(hi) || isfinite(eff) || isfinite(vel)) {
    fputs("    <limit", f);
    if (isfinite(lo)) put_num(f, "lower", lo);
    if (isfinite(hi)) put_num(f, "upper", hi);
    if (isfinite(eff)) put_num(f, "effort", eff);
    if (isfinite(vel)) put_num(f, "velocity", vel);
    fputs("/>\n", f);
  }
  double damping = m->dof_damping[k], friction = m->dof_friction[k], rotor = m->dof_rotor_inertia[k];
  double stiffness = m->dof_stiffness[k], mount[4] = {0, 0, 0, 0};
  int nmount = m->jnt_type[b] == TL_JOINT_SPHERICAL ? 4 : m->jnt_nv[b], has_mount = 0;
  for (int i = 0; i < nmount; i++) {
    mount[i] = nmount == 4 ? m->jnt_spring_quat[4 * b + i] : m->dof_spring_mount[k + i];
    has_mount |= mount[i] != (nmount == 4 && i == 0 ? 1.0 : 0.0);
  }
  if (damping != 0 || friction != 0 || rotor != 0 || stiffness != 0 || has_mount) {
    fputs("    <dynamics", f);
    if (damping != 0) put_num(f, "damping", damping);
    if (friction != 0) put_num(f, "friction", friction);
    if (rotor != 0) put_num(f, "rotor_inertia", rotor);
    if (stiffness != 0) put_num(f, "stiffness", stiffness);
    if (has_mount) put_vec(f, "spring_mount", mount, nmount);
    fputs("/>\n", f);
  }
  if (one && m->dof_mimic[k] >= 0) {
    fputs("    <mimic", f);
    put_attr(f, "joint", m->joint_name[m->dof_body[m->dof_mimic[k]]]);
    put_num(f, "multiplier", m->dof_mimic_mult[k]);
    put_num(f, "offset", m->dof_mimic_offset[k]);
    fputs("/>\n", f);
  }
  const double *cal = m->jnt_calibration + 2 * b, *saf = m->jnt_safety + 4 * b;
  if (!isnan(cal[0]) || !isnan(cal[1])) {
    fputs("    <calibration", f);
    if (!isnan(cal[0])) put_num(f, "rising", cal[0]);
    if (!isnan(cal[1])) put_num(f, "falling", cal[1]);
    fputs("/>\n", f);
  }
  if (!isnan(saf[3])) {
    fputs("    <safety_controller", f);
    put_num(f, "soft_lower_limit", saf[0]);
    put_num(f, "soft_upper_limit", saf[1]);
    put_num(f, "k_position", saf[2]);
    put_num(f, "k_velocity", saf[3]);
    fputs("/>\n", f);
  }
}

/* A hinge2 joint (urdf_compile.c's add_hinge2) is the only movable URDF
 * joint whose child link's body is carried by a joint of another name
 * (NAME_wheel): written back as one <joint type="hinge2"> with the first
 * chain body's origin, the steering axis and limits, the wheel axis, and
 * <suspension> from the suspension DOF. */
static void put_hinge2(FILE *f, const tl_model *m, int l, int b) {
  int p = m->link_parent[l], st = m->parent[b], sp = m->parent[st], first = st;
  char name[TL_NAME_MAX + 16];
  snprintf(name, sizeof name, "%s_suspension", m->frame_name[l]);
  if (sp > 0 && strcmp(m->joint_name[sp], name) == 0) first = sp;
  put_origin(f, "    ", m->link_pos + 3 * p, m->link_rot + 9 * p, m->jnt_pos + 3 * first, m->jnt_rot + 9 * first);
  fputs("    <axis", f);
  put_vec(f, "xyz", m->jnt_axis + 3 * st, 3);
  fputs("/>\n    <axis2", f);
  put_vec(f, "xyz", m->jnt_axis + 3 * b, 3);
  fputs("/>\n", f);
  put_joint_params(f, m, st);
  if (first == sp) {
    fputs("    <suspension", f);
    put_num(f, "stiffness", m->dof_stiffness[m->v_adr[sp]]);
    put_num(f, "damping", m->dof_damping[m->v_adr[sp]]);
    fputs("/>\n", f);
  }
}

static void put_joint(FILE *f, const tl_model *m, int l) {
  int p = m->link_parent[l], b = body_of_link(m, l);
  int movable = m->frame_jnt_type[l] != TL_JOINT_FIXED && b > 0;
  int hinge2 = movable && strcmp(m->joint_name[b], m->frame_name[l]) != 0 && m->parent[b] > 0 &&
               strcmp(m->joint_name[m->parent[b]], m->frame_name[l]) == 0;
  fputs("  <joint", f);
  put_attr(f, "name", m->frame_name[l]);
  put_attr(f, "type", hinge2 ? "hinge2" : movable ? joint_type_word(m, b) : "fixed");
  if (hinge2) {
    fputs(">\n    <parent", f);
    put_attr(f, "link", m->link_name[p]);
    fputs("/>\n    <child", f);
    put_attr(f, "link", m->link_name[l]);
    fputs("/>\n", f);
    put_hinge2(f, m, l, b);
    fputs("  </joint>\n", f);
    return;
  }
  fputs(">\n    <parent", f);
  put_attr(f, "link", m->link_name[p]);
  fputs("/>\n    <child", f);
  put_attr(f, "link", m->link_name[l]);
  fputs("/>\n", f);
  const double *ppos = m->link_pos + 3 * p, *prot = m->link_rot + 9 * p;
  if (movable) {
    put_origin(f, "    ", ppos, prot, m->jnt_pos + 3 * b, m->jnt_rot + 9 * b);
    fputs("    <axis", f);
    put_vec(f, "xyz", m->jnt_axis + 3 * b, 3);
    fputs("/>\n", f);
    if (m->jnt_type[b] == TL_JOINT_UNIVERSAL) {
      fputs("    <axis2", f);
      put_vec(f, "xyz", m->jnt_axis2 + 3 * b, 3);
      fputs("/>\n", f);
    }
    put_joint_params(f, m, b);
  } else {
    put_origin(f, "    ", ppos, prot, m->link_pos + 3 * l, m->link_rot + 9 * l);
  }
  fputs("  </joint>\n", f);
}

/* ---- public ---- */

/* The model must come from the URDF compiler: frame i names the joint whose
 * child is link i, and every link's parent comes before it. */
static int exportable(const tl_model *m) {
  if (m->nlink < 1 || m->nframe < m->nlink || m->link_parent[0] != -1) return 0;
  for (int l = 0; l < m->nlink; l++)
    if (!m->link_name[l][0]) return 0;
  for (int l = 1; l < m->nlink; l++)
    if (m->link_parent[l] < 0 || m->link_parent[l] >= l || strcmp(m->frame_link[l], m->link_name[l]) != 0)
      return 0;
  return 1;
}

/* A <loop_joint> (Talus extension) as read: links, frames, hinge axis. */
static void put_loop(FILE *f, const tl_model *m, int i) {
  static const char *const types[] = {"ball", "hinge", "weld"};
  int t = m->loop_type[i];
  fputs("  <loop_joint", f);
  put_attr(f, "name", m->loop_name[i]);
  put_attr(f, "type", t >= 0 && t <= 2 ? types[t] : "ball");
  fputs(">\n    <link1", f);
  put_attr(f, "link", m->loop_link1[i]);
  put_vec(f, "xyz", m->loop_pos1 + 3 * i, 3);
  put_vec(f, "rpy", m->loop_rpy1 + 3 * i, 3);
  fputs("/>\n    <link2", f);
  put_attr(f, "link", m->loop_link2[i]);
  put_vec(f, "xyz", m->loop_pos2 + 3 * i, 3);
  put_vec(f, "rpy", m->loop_rpy2 + 3 * i, 3);
  fputs("/>\n", f);
  if (t == 1) {
    fputs("    <axis", f);
    put_vec(f, "xyz", m->loop_axis + 3 * i, 3);
    fputs("/>\n", f);
  }
  fputs("  </loop_joint>\n", f);
}

tl_status tl_model_export_urdf_file(const tl_model *m, FILE *f, tl_error *err) {
  if (!m || !f) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, m ? "f" : "model", "%s must not be NULL",
                                    m ? "the stream" : "model");
  if (!exportable(m))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model '%s' does not keep its URDF link "
                        "tree (it was not loaded from a URDF): nothing to export", m->name);
  fputs("<?xml version=\"1.0\"?>\n<!-- written by Talus (tl_model_export_urdf) from ", f);
  for (const char *s = m->source; *s; s++) /* "--" may not occur in a comment */
    fputc(*s == '-' && s[1] == '-' ? '_' : *s, f);
  fprintf(f, "; base: %s -->\n<robot", m->base == TL_BASE_FIXED ? "fixed" : "floating");
  put_attr(f, "name", m->name);
  fputs(">\n", f);
  for (int i = 0; i < m->nmaterial; i++) {
    fputs("  <material", f);
    put_attr(f, "name", m->material_name[i]);
    fputs(">", f);
    if (!isnan(m->material_rgba[4 * i])) {
      fputs("<color", f);
      put_vec(f, "rgba", m->material_rgba + 4 * i, 4);
      fputs("/>", f);
    }
    if (m->material_texture[i][0]) {
      fputs("<texture", f);
      put_attr(f, "filename", m->material_texture[i]);
      fputs("/>", f);
    }
    fputs("</material>\n", f);
  }
  named *mats = malloc((size_t)(m->nmaterial > 0 ? m->nmaterial : 1) * sizeof(*mats));
  if (!mats) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int i = 0; i < m->nmaterial; i++) mats[i] = (named){m->material_name[i], i};
  qsort(mats, (size_t)m->nmaterial, sizeof(*mats), named_cmp);
  cursors cur = {0, 0, mats};
  for (int l = 0; l < m->nlink; l++) put_link(f, m, l, &cur);
  free(mats);
  if (cur.geom != m->ngeom || cur.visual != m->nvisual)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model '%s': geoms or visuals are not "
                        "stored link by link (%d of %d geoms, %d of %d visuals written)", m->name,
                        cur.geom, m->ngeom, cur.visual, m->nvisual);
  for (int l = 1; l < m->nlink; l++) put_joint(f, m, l);
  for (int i = 0; i < m->nloop; i++) put_loop(f, m, i);
  fputs("</robot>\n", f);
  if (fflush(f) != 0 || ferror(f))
    return tl_error_set(err, TL_ERR_IO, NULL, 0, NULL, "cannot write the URDF: %s", strerror(errno));
  return TL_OK;
}

tl_status tl_model_export_urdf(const tl_model *m, const char *path, tl_error *err) {
  if (!path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "path must not be NULL");
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  tl_out o; /* the output rules of base/file.h: no device, FIFO or symlink replaced, nothing removed */
  tl_status s = tl_out_open(&o, path, "the URDF file", err);
  if (s) return s;
  s = tl_model_export_urdf_file(m, o.f, err);
  tl_error e;
  memset(&e, 0, sizeof e);
  tl_status c = tl_out_commit(&o, s == TL_OK, &e);
  if (!s && c) {
    s = c;
    if (err) *err = e;
  }
  return s;
}
