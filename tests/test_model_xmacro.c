/* The model's one list of arrays and its public queries (issue 22).
 *
 * Guards: src/model/model_xmacro.h (TL_MODEL_ARRAYS) and what is generated
 * from it in src/model/model.c (tl_model_copy, tl_model_add_frame,
 * tl_model_add_hull's resize) and src/engine/engine_scene.c
 * (tl_engine_model_view); the tl_status convention of the model queries that
 * can fail (include/talus/model.h: tl_model_dof_limits, tl_model_geom,
 * tl_model_geom_contact, tl_model_geom_mesh, tl_model_geom_hull,
 * tl_model_visual, tl_model_material, tl_model_dof_mimic,
 * tl_model_joint_calibration, tl_model_joint_safety_controller).
 *
 * Robot: robots/talus_dae_arm (the project's own; mesh geoms with hulls,
 * visuals, robot-level materials), so every size of the list is non-zero. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "talus/engine_plugin.h"
#include "talus/urdf.h"
#include "test_util.h"

/* Every array of b equals a's, element for element, in its own memory. */
static void check_copy(const tl_model *a, const tl_model *b, const char *what) {
#define CHECK_ARRAY(type, name, count, width, use)                                                       \
  {                                                                                                      \
    size_t bytes = sizeof(type) * (size_t)(width) * (size_t)a->count;                                    \
    TL_CHECK(a->count == b->count && (bytes == 0 || (a->name != b->name && memcmp(a->name, b->name, bytes) == 0)), \
             "%s: array %s (%s = %d) copied exactly", what, #name, #count, a->count);                   \
  }
  TL_MODEL_ARRAYS(CHECK_ARRAY)
#undef CHECK_ARRAY
}

static void check_error(tl_status st, const tl_error *err, const char *what, const char *msg) {
  TL_CHECK(st == TL_ERR_ARGUMENT && err->status == TL_ERR_ARGUMENT && strstr(err->message, msg) != NULL,
           "%s: status %d, message \"%s\" (expected TL_ERR_ARGUMENT with \"%s\")", what, st, err->message, msg);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : "robots";
  char path[1024];
  snprintf(path, sizeof(path), "%s/talus_dae_arm/talus_dae_arm.urdf", root);
  tl_error err = {0};
  tl_model *m = NULL;
  if (tl_model_load_urdf(path, NULL, &m, &err) != TL_OK) {
    printf("cannot load %s: %s\n", path, err.message);
    return 1;
  }
  TL_CHECK(m->nhull > 0 && m->nvisual > 0 && m->nmaterial > 0 && m->nlink > 0 && m->ngeom > 0,
           "the robot exercises every count: nhull %d nvisual %d nmaterial %d", m->nhull, m->nvisual,
           m->nmaterial);

  /* ---- copy: every array of the list, deep ---- */
  tl_model *c = tl_model_copy(m);
  TL_CHECK(c != NULL, "copy");
  check_copy(m, c, "tl_model_copy");
  TL_CHECK(strcmp(c->name, m->name) == 0 && c->total_mass == m->total_mass && c->nwarning == m->nwarning,
           "copy keeps the scalars");

  /* ---- add_frame resizes every [nframe] array, keeping the old rows ---- */
  double pos[3] = {0.1, 0.2, 0.3}, rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int f = tl_model_add_frame(c, "tool", m->nbody - 1, pos, rot);
  TL_CHECK(f == m->nframe && c->nframe == m->nframe + 1, "add_frame appends frame %d", f);
  TL_CHECK(memcmp(c->frame_pos, m->frame_pos, 3 * sizeof(double) * (size_t)m->nframe) == 0 &&
               memcmp(c->frame_name, m->frame_name, sizeof(tl_name) * (size_t)m->nframe) == 0,
           "add_frame keeps the old frames");
  TL_CHECK(strcmp(c->frame_name[f], "tool") == 0 && c->frame_body[f] == m->nbody - 1 && c->frame_pos[3 * f + 2] == 0.3 &&
               c->frame_jnt_type[f] == TL_JOINT_FIXED && strcmp(c->frame_link[f], m->body_name[m->nbody - 1]) == 0,
           "add_frame fills the new row");
  tl_model *c2 = tl_model_copy(c);
  check_copy(c, c2, "copy after add_frame");
  tl_model_free(c2);

  /* ---- add_hull grows the pools, keeping the old hulls ---- */
  double v[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  int tri[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  int nh = c->nhull, nvert = c->nhull_vert;
  TL_CHECK(tl_model_add_hull(c, 0, 4, v, 4, tri) == 0 && c->nhull == nh + 1 && c->nhull_vert == nvert + 4 &&
               c->geom_hull[0] == nh && c->hull_vert_adr[nh] == nvert && c->hull_vert[3 * nvert + 3] == 1.0,
           "add_hull appends hull %d", nh);
  TL_CHECK(memcmp(c->hull_vert, m->hull_vert, 3 * sizeof(double) * (size_t)m->nhull_vert) == 0 &&
               memcmp(c->hull_face, m->hull_face, 3 * sizeof(int) * (size_t)m->nhull_face) == 0,
           "add_hull keeps the old pools");
  tl_model_free(c);

  /* ---- the engine view shows the model's own arrays ---- */
  tl_engine_model o;
  TL_CHECK(tl_engine_model_view(m, &o, &err) == TL_OK, "view");
  TL_CHECK(o.nbody == m->nbody && o.nhull == m->nhull && o.dof_lower == m->dof_lower && o.hull_vert == m->hull_vert &&
               o.hull_face == m->hull_face && (const void *)o.geom_material == (const void *)m->geom_material &&
               (const void *)o.body_name == (const void *)m->body_name && o.jnt_spring_quat == m->jnt_spring_quat &&
               o.dof_mimic_offset == m->dof_mimic_offset && o.geom_mask == m->geom_mask,
           "tl_engine_model_view: the model's arrays, as is");

  /* ---- queries that can fail: tl_status, the index and the count named ---- */
  double lo = 7, hi = 7;
  TL_CHECK(tl_model_dof_limits(m, 0, &lo, &hi, &err) == TL_OK && lo == m->dof_lower[0] && hi == m->dof_upper[0],
           "dof_limits of dof 0");
  lo = 7;
  char msg[256];
  snprintf(msg, sizeof(msg), "dof index %d out of range: the model '%s' has %d", m->nv, m->name, m->nv);
  check_error(tl_model_dof_limits(m, m->nv, &lo, NULL, &err), &err, "dof_limits(nv)", msg);
  TL_CHECK(lo == 7, "dof_limits writes nothing on failure");
  check_error(tl_model_dof_limits(NULL, 0, &lo, NULL, &err), &err, "dof_limits(NULL)", "model must not be NULL");
  tl_geom_type type;
  int body = -5;
  check_error(tl_model_geom(m, -1, &type, &body, NULL, NULL, NULL, &err), &err, "geom(-1)", "geom index -1");
  TL_CHECK(body == -5, "geom writes nothing on failure");
  TL_CHECK(tl_model_geom(m, 0, &type, &body, NULL, NULL, NULL, &err) == TL_OK && body == m->geom_body[0], "geom 0");
  double mu = 0;
  check_error(tl_model_geom_contact(m, m->ngeom, &mu, NULL, NULL, NULL, &err), &err, "geom_contact(ngeom)",
              "out of range");
  int mesh = -1, plain = -1;
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_type[g] == TL_GEOM_MESH && m->geom_hull[g] >= 0 && mesh < 0) mesh = g;
    if (m->geom_type[g] != TL_GEOM_MESH && plain < 0) plain = g;
  }
  const char *uri = NULL;
  int nv = 0, nf = 0;
  const double *vert = NULL;
  const int *face = NULL;
  if (mesh >= 0) {
    TL_CHECK(tl_model_geom_mesh(m, mesh, &uri, NULL, &err) == TL_OK && uri && uri[0], "geom_mesh of mesh geom %d",
             mesh);
    TL_CHECK(tl_model_geom_hull(m, mesh, &nv, &vert, &nf, &face, &err) == TL_OK && nv >= 4 && nf >= 4 && vert && face,
             "geom_hull of mesh geom %d", mesh);
  } else {
    TL_CHECK(0, "the robot has a mesh geom with a hull");
  }
  if (plain >= 0) {
    check_error(tl_model_geom_mesh(m, plain, &uri, NULL, &err), &err, "geom_mesh(primitive)", "not a mesh");
    check_error(tl_model_geom_hull(m, plain, &nv, &vert, &nf, &face, &err), &err, "geom_hull(primitive)",
                "has no convex hull");
  }
  tl_visual_info vi;
  TL_CHECK(tl_model_visual(m, 0, &vi, &err) == TL_OK && vi.body == m->visual_body[0], "visual 0");
  check_error(tl_model_visual(m, m->nvisual, &vi, &err), &err, "visual(nvisual)", "visual index");
  check_error(tl_model_visual(m, 0, NULL, &err), &err, "visual(out NULL)", "out must not be NULL");
  const char *name = NULL;
  double rgba[4];
  TL_CHECK(tl_model_material(m, 0, &name, rgba, NULL, &err) == TL_OK && strcmp(name, m->material_name[0]) == 0,
           "material 0");
  check_error(tl_model_material(m, -2, &name, rgba, NULL, &err), &err, "material(-2)", "material index -2");
  int followed = 5;
  TL_CHECK(tl_model_dof_mimic(m, 0, &followed, NULL, NULL, &err) == TL_OK && followed == m->dof_mimic[0],
           "dof_mimic of dof 0");
  check_error(tl_model_dof_mimic(m, m->nv, NULL, NULL, NULL, &err), &err, "dof_mimic(nv)", "dof index");
  check_error(tl_model_joint_calibration(m, m->nbody, NULL, NULL, &err), &err, "joint_calibration(nbody)",
              "body index");
  check_error(tl_model_joint_safety_controller(m, -1, NULL, NULL, NULL, NULL, &err), &err,
              "joint_safety_controller(-1)", "body index -1");

  tl_model_free(m);
  return tl_test_finish();
}
