/* Public queries of the URDF content a tl_model keeps beyond the dynamics:
 * mimics, calibration, safety controllers, contact properties, meshes and
 * hulls, visuals and materials, loop joints (talus/model.h). */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "talus/model.h"

tl_status tl_model_dof_mimic(const tl_model *m, int k, int *followed, double *mult, double *offset,
                             tl_error *err) {
  if (!m || k < 0 || k >= m->nv) return tl_model_index_error(m, "dof", k, m ? m->nv : 0, err);
  if (followed) *followed = m->dof_mimic[k];
  if (mult) *mult = m->dof_mimic[k] >= 0 ? m->dof_mimic_mult[k] : 1.0;
  if (offset) *offset = m->dof_mimic[k] >= 0 ? m->dof_mimic_offset[k] : 0.0;
  return TL_OK;
}

tl_status tl_model_joint_calibration(const tl_model *m, int b, double *rising, double *falling, tl_error *err) {
  if (!m || b < 0 || b >= m->nbody) return tl_model_index_error(m, "body", b, m ? m->nbody : 0, err);
  const double *c = m->jnt_calibration + 2 * b;
  if (rising) *rising = c[0];
  if (falling) *falling = c[1];
  return TL_OK;
}

tl_status tl_model_joint_safety_controller(const tl_model *m, int b, double *soft_lower, double *soft_upper,
                                           double *k_position, double *k_velocity, tl_error *err) {
  if (!m || b < 0 || b >= m->nbody) return tl_model_index_error(m, "body", b, m ? m->nbody : 0, err);
  const double *s = m->jnt_safety + 4 * b;
  if (soft_lower) *soft_lower = s[0];
  if (soft_upper) *soft_upper = s[1];
  if (k_position) *k_position = s[2];
  if (k_velocity) *k_velocity = s[3];
  return TL_OK;
}

static int geom_ok(const tl_model *m, int g) { return m && g >= 0 && g < m->ngeom; }

tl_status tl_model_geom_contact(const tl_model *m, int g, double *friction, double *restitution,
                                double *stiffness, double *damping, tl_error *err) {
  if (!geom_ok(m, g)) return tl_model_index_error(m, "geom", g, m ? m->ngeom : 0, err);
  if (friction) *friction = m->geom_friction[g];
  if (restitution) *restitution = m->geom_restitution[g];
  if (stiffness) *stiffness = m->geom_contact_stiffness[g];
  if (damping) *damping = m->geom_contact_damping[g];
  return TL_OK;
}

const char *tl_model_geom_material(const tl_model *m, int g) {
  return geom_ok(m, g) ? m->geom_material[g] : NULL;
}

tl_status tl_model_geom_mesh(const tl_model *m, int g, const char **uri, const char **file, tl_error *err) {
  if (!geom_ok(m, g)) return tl_model_index_error(m, "geom", g, m ? m->ngeom : 0, err);
  if (m->geom_type[g] != TL_GEOM_MESH)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, m->geom_name[g], "geom %d ('%s') of the model '%s' is a %s, not a mesh",
                        g, m->geom_name[g], m->name, tl_geom_type_name(m->geom_type[g]));
  if (uri) *uri = m->geom_mesh[g];
  if (file) *file = m->geom_mesh_file[g];
  return TL_OK;
}

tl_status tl_model_geom_hull(const tl_model *m, int g, int *nvert, const double **vert, int *nface,
                             const int **face, tl_error *err) {
  if (!geom_ok(m, g)) return tl_model_index_error(m, "geom", g, m ? m->ngeom : 0, err);
  if (m->geom_hull[g] < 0 || m->geom_hull[g] >= m->nhull)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, m->geom_name[g], "geom %d ('%s') of the model '%s' has no convex hull",
                        g, m->geom_name[g], m->name);
  int h = m->geom_hull[g];
  if (nvert) *nvert = m->hull_nvert[h];
  if (vert) *vert = m->hull_vert + 3 * m->hull_vert_adr[h];
  if (nface) *nface = m->hull_nface[h];
  if (face) *face = m->hull_face + 3 * m->hull_face_adr[h];
  return TL_OK;
}

int tl_model_nvisual(const tl_model *m) { return m ? m->nvisual : 0; }

tl_status tl_model_visual(const tl_model *m, int i, tl_visual_info *out, tl_error *err) {
  if (!m || i < 0 || i >= m->nvisual) return tl_model_index_error(m, "visual", i, m ? m->nvisual : 0, err);
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  out->name = m->visual_name[i];
  out->link = m->visual_link[i];
  out->body = m->visual_body[i];
  out->type = m->visual_type[i];
  memcpy(out->size, m->visual_size + 3 * i, sizeof(out->size));
  memcpy(out->pos, m->visual_pos + 3 * i, sizeof(out->pos));
  memcpy(out->R, m->visual_rot + 9 * i, sizeof(out->R));
  out->mesh = m->visual_mesh[i];
  out->mesh_file = m->visual_mesh_file[i];
  out->material = m->visual_material[i];
  memcpy(out->rgba, m->visual_rgba + 4 * i, sizeof(out->rgba));
  out->texture = m->visual_texture[i];
  return TL_OK;
}

int tl_model_nmaterial(const tl_model *m) { return m ? m->nmaterial : 0; }

tl_status tl_model_material(const tl_model *m, int i, const char **name, double rgba[4], const char **texture,
                            tl_error *err) {
  if (!m || i < 0 || i >= m->nmaterial) return tl_model_index_error(m, "material", i, m ? m->nmaterial : 0, err);
  if (name) *name = m->material_name[i];
  if (rgba) memcpy(rgba, m->material_rgba + 4 * i, 4 * sizeof(double));
  if (texture) *texture = m->material_texture[i];
  return TL_OK;
}

int tl_model_nloop(const tl_model *m) { return m ? m->nloop : 0; }

tl_status tl_model_loop(const tl_model *m, int i, tl_loop_info *out, tl_error *err) {
  if (!m || i < 0 || i >= m->nloop) return tl_model_index_error(m, "loop", i, m ? m->nloop : 0, err);
  if (!out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "out", "out must not be NULL");
  static const int nrow[] = {3, 5, 6};
  out->name = m->loop_name[i];
  out->type = m->loop_type[i];
  out->line = m->loop_line[i];
  out->link1 = m->loop_link1[i];
  out->link2 = m->loop_link2[i];
  memcpy(out->pos1, m->loop_pos1 + 3 * i, sizeof(out->pos1));
  memcpy(out->rpy1, m->loop_rpy1 + 3 * i, sizeof(out->rpy1));
  memcpy(out->pos2, m->loop_pos2 + 3 * i, sizeof(out->pos2));
  memcpy(out->rpy2, m->loop_rpy2 + 3 * i, sizeof(out->rpy2));
  memcpy(out->axis, m->loop_axis + 3 * i, sizeof(out->axis));
  out->nrow = m->loop_type[i] >= 0 && m->loop_type[i] <= 2 ? nrow[m->loop_type[i]] : 0;
  return TL_OK;
}
