/* Guards: urdf/urdf_load.c, urdf/urdf_compile.c, urdf/urdf_mesh.c, urdf/urdf_query.c,
 * urdf/urdf_export.c, urdf/urdf_template.c. */
/* Talus tests: URDF loading beyond the parser (talus/urdf.h, urdf/).
 *
 * 1. The shared robot corpus: every URDF loads (base as README.md says); DOF,
 *    joint types and total mass equal README.md / PROVENANCE.md; the link tree
 *    equals the one check_urdf printed (TREES file, generated once with
 *    liburdfdom-tools, so this test does not need it); every collision mesh
 *    has a convex hull (outward, every vertex behind every face); the export
 *    (tl_model_export_urdf) loads back into the same model, every array
 *    compared to 1e-12.
 * 2. Features on inline text: mimic joints (and their errors), calibration,
 *    safety controllers, visuals and materials, link-level <contact>, planar
 *    joints refused, massless links, skipped elements.
 * 3. Meshes: package:// (two and three slashes), TALUS_PACKAGE_PATH,
 *    file://, relative paths, scale, hull of a generated STL cube; missing
 *    collision mesh (error), missing visual mesh (warning), network URI,
 *    bad package URI, unsupported format.
 * 4. Templates (@@Name, {expression}) and tl_model_load_urdf_any.
 *
 * Usage: test_urdf_load ROBOTS_DIR TREES_FILE
 *   With TALUS_SHARED set, $TALUS_SHARED/robots replaces ROBOTS_DIR.
 * Exit: 0 when no check failed. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "talus/urdf.h"
#include "test_util.h"

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static tl_model *load_text(const char *text, const tl_load_options *opt, tl_error *err) {
  tl_model *m = NULL;
  memset(err, 0, sizeof(*err));
  tl_model_load_urdf_string(text, strlen(text), "inline.urdf", opt, &m, err);
  return m;
}

/* Load text and expect failure with status, message text and line. */
static void expect_error(const char *what, const char *text, const tl_load_options *opt, tl_status status,
                         int line, const char *msg) {
  tl_error err;
  tl_model *m = load_text(text, opt, &err);
  TL_CHECK(m == NULL && err.status == status, "%s: status %d (%s), expected %d: %s", what, err.status,
           tl_status_name(err.status), status, err.message);
  TL_CHECK(strstr(err.message, msg) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err.message, msg);
  TL_CHECK(line < 0 || err.line == line, "%s: line %d, expected %d (%s)", what, err.line, line, err.message);
  tl_model_free(m);
}

/* ------------------------------------------------------------------------ */
/* model comparison (round trip)                                             */

static int cmp_failed;

static void cmp_d(const char *what, const char *field, const double *a, const double *b, long n) {
  for (long i = 0; i < n; i++) {
    double x = a[i], y = b[i];
    if ((isnan(x) && isnan(y)) || x == y) continue;
    if (fabs(x - y) <= 1e-12 * fmax(1, fabs(x))) continue;
    TL_CHECK(0, "%s: %s[%ld] = %.17g after the round trip, %.17g before", what, field, i, y, x);
    cmp_failed = 1;
    return;
  }
}

static void cmp_bytes(const char *what, const char *field, const void *a, const void *b, size_t n) {
  if (memcmp(a, b, n) == 0) return;
  TL_CHECK(0, "%s: %s differs after the round trip", what, field);
  cmp_failed = 1;
}

/* Every array of the model (src/model/model.h) except source positions
 * (jnt_line) and load warnings: they describe the source file (a
 * placeholder <limit> of zeros is exported as no limit and reloads without
 * its warning), not the model. */
static void compare_models(const char *what, const tl_model *a, const tl_model *b) {
#define SZ(n) ((long)(n))
#define D(f, n) cmp_d(what, #f, a->f, b->f, SZ(n))
#define B(f, n) cmp_bytes(what, #f, a->f, b->f, sizeof(*a->f) * (size_t)(n))
  cmp_failed = 0;
  int same = a->nbody == b->nbody && a->nq == b->nq && a->nv == b->nv && a->nframe == b->nframe &&
             a->ngeom == b->ngeom && a->nlink == b->nlink && a->nhull == b->nhull &&
             a->nhull_vert == b->nhull_vert && a->nhull_face == b->nhull_face &&
             a->nvisual == b->nvisual && a->nmaterial == b->nmaterial && a->base == b->base &&
             strcmp(a->name, b->name) == 0;
  if (!TL_CHECK(same, "%s: sizes differ after the round trip (nbody %d/%d nv %d/%d nframe %d/%d ngeom %d/%d "
                "nlink %d/%d nhull %d/%d nvisual %d/%d nmaterial %d/%d nwarning %d/%d)", what, a->nbody,
                b->nbody, a->nv, b->nv, a->nframe, b->nframe, a->ngeom, b->ngeom, a->nlink, b->nlink,
                a->nhull, b->nhull, a->nvisual, b->nvisual, a->nmaterial, b->nmaterial, a->nwarning,
                b->nwarning))
    return;
  int nb = a->nbody, nv = a->nv, nf = a->nframe, ng = a->ngeom, nl = a->nlink, nvis = a->nvisual;
  B(body_name, nb); B(joint_name, nb); B(parent, nb); B(jnt_type, nb); B(q_adr, nb); B(v_adr, nb);
  B(jnt_nq, nb); B(jnt_nv, nb); D(jnt_pos, 3 * nb); D(jnt_rot, 9 * nb); D(jnt_axis, 3 * nb);
  D(jnt_axis2, 3 * nb); D(body_mass, nb); D(body_com, 3 * nb); D(body_inertia, 9 * nb);
  B(dof_body, nv); B(dof_parent, nv); D(dof_rotor_inertia, nv); D(dof_damping, nv); D(dof_friction, nv);
  D(dof_stiffness, nv); D(dof_spring_mount, nv); D(dof_lower, nv); D(dof_upper, nv); D(dof_effort, nv);
  D(dof_velocity, nv); B(dof_mimic, nv); D(dof_mimic_mult, nv); D(dof_mimic_offset, nv); D(q0, a->nq);
  B(frame_name, nf); B(frame_body, nf); D(frame_pos, 3 * nf); D(frame_rot, 9 * nf);
  B(frame_jnt_type, nf); B(frame_link, nf);
  B(geom_name, ng); B(geom_link, ng); B(geom_body, ng); B(geom_type, ng); D(geom_size, 3 * ng);
  D(geom_pos, 3 * ng); D(geom_rot, 9 * ng); D(geom_friction, ng); B(geom_mesh, ng); B(geom_material, ng);
  B(geom_group, ng); B(geom_mask, ng); B(geom_hull, ng);
  B(hull_vert_adr, a->nhull); B(hull_nvert, a->nhull); B(hull_face_adr, a->nhull); B(hull_nface, a->nhull);
  D(hull_vert, 3 * a->nhull_vert); B(hull_face, 3 * a->nhull_face);
  B(link_name, nl); B(link_body, nl); D(link_pos, 3 * nl); D(link_rot, 9 * nl); D(link_mass, nl);
  D(link_com, 3 * nl); D(link_inertia, 9 * nl);
  cmp_d(what, "total_mass", &a->total_mass, &b->total_mass, 1);
  B(link_parent, nl); D(jnt_calibration, 2 * nb); D(jnt_safety, 4 * nb); D(geom_restitution, ng);
  D(geom_contact_stiffness, ng); D(geom_contact_damping, ng); B(geom_mesh_file, ng);
  B(visual_name, nvis); B(visual_link, nvis); B(visual_body, nvis); B(visual_type, nvis);
  D(visual_size, 3 * nvis); D(visual_pos, 3 * nvis); D(visual_rot, 9 * nvis); B(visual_mesh, nvis);
  B(visual_mesh_file, nvis); B(visual_material, nvis); D(visual_rgba, 4 * nvis); B(visual_texture, nvis);
  B(material_name, a->nmaterial); D(material_rgba, 4 * a->nmaterial); B(material_texture, a->nmaterial);
#undef D
#undef B
#undef SZ
}

/* Export m, load the export back (same base, meshes from the original
 * folder) and compare. */
static void round_trip(const char *what, const tl_model *m, const char *mesh_dir) {
  char path[] = "/tmp/talus_roundtrip_XXXXXX";
  int fd = mkstemp(path);
  if (!TL_CHECK(fd >= 0, "%s: cannot create a temporary file", what)) return;
  close(fd);
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = tl_model_export_urdf(m, path, &err);
  if (TL_CHECK(st == TL_OK, "%s: export: %s", what, err.message)) {
    tl_load_options o = tl_load_options_default();
    o.base = m->base;
    o.mesh_dir = mesh_dir;
    tl_model *back = NULL;
    st = tl_model_load_urdf(path, &o, &back, &err);
    if (TL_CHECK(st == TL_OK, "%s: loading the export: %s", what, err.message)) {
      compare_models(what, m, back);
      TL_CHECK(!cmp_failed, "%s: round trip identical (every model array to 1e-12)", what);
      /* a second export of the reloaded model is the same text up to the header comment */
      tl_model_free(back);
    }
  }
  remove(path);
}

/* ------------------------------------------------------------------------ */
/* 1. corpus                                                                 */

typedef struct robot_row {
  const char *file;
  int fixed;                                        /* README: fixed base */
  int dof;                                          /* joint DOF */
  int nrevolute, nprismatic, nspherical;            /* movable joints (continuous counted as revolute) */
  int nmimic;
  double mass;
} robot_row;

static const robot_row rows[] = {
    {"anymal_c/urdf/anymal.urdf", 0, 12, 12, 0, 0, 0, 52.1349},
    {"anymal_c/urdf/anymal_c_nolimit.urdf", 0, 12, 12, 0, 0, 0, 41.7092},
    {"cartpole/cartpole.urdf", 1, 2, 1, 1, 0, 0, 11.0},
    {"deepmimic_humanoid/humanoid.urdf", 0, 28, 4, 0, 8, 0, 45.0001},
    {"double_pendulum/urdf/double_pendulum.urdf", 1, 2, 2, 0, 0, 0, 0.7010},
    {"double_pendulum/urdf/double_pendulum_continuous.urdf", 1, 2, 2, 0, 0, 0, 0.7010},
    {"double_pendulum/urdf/double_pendulum_simple.urdf", 1, 2, 2, 0, 0, 0, 0.6000},
    {"husky/husky.urdf", 0, 4, 4, 0, 0, 0, 44.0030},
    {"hyq/robots/hyq_no_sensors.urdf", 0, 12, 12, 0, 0, 0, 86.7740},
    {"kuka_iiwa/model.urdf", 1, 7, 7, 0, 0, 0, 17.5000},
    {"panda/urdf/panda.urdf", 1, 9, 7, 2, 0, 1, 17.4519},
    {"solo12/robots/solo12.urdf", 0, 12, 12, 0, 0, 0, 2.5000},
    {"talos/robots/talos_full_v2.urdf", 0, 44, 44, 0, 0, 12, 93.3357},
    {"talos/robots/talos_reduced.urdf", 0, 32, 32, 0, 0, 0, 90.2722},
    {"ur5/urdf/ur5_robot.urdf", 1, 6, 6, 0, 0, 0, 20.9939},
};
#define NROW ((int)(sizeof(rows) / sizeof(rows[0])))

/* Hull of geom g: every vertex on or behind every face plane, faces non-degenerate. */
static int hull_ok(const tl_model *m, int g, char *why, size_t cap) {
  int nv, nf;
  const double *v;
  const int *f;
  if (tl_model_geom_hull(m, g, &nv, &v, &nf, &f, NULL) != 0) return snprintf(why, cap, "no hull"), 0;
  if (nv < 4 || nf < 4) return snprintf(why, cap, "%d vertices %d faces", nv, nf), 0;
  double ext = 0;
  for (int i = 0; i < 3 * nv; i++) ext = fmax(ext, fabs(v[i]));
  for (int k = 0; k < nf; k++) {
    const double *a = v + 3 * f[3 * k], *b = v + 3 * f[3 * k + 1], *c = v + 3 * f[3 * k + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len > 0)) return snprintf(why, cap, "face %d has zero area", k), 0;
    for (int i = 0; i < nv; i++) {
      const double *p = v + 3 * i;
      double d = ((p[0] - a[0]) * n[0] + (p[1] - a[1]) * n[1] + (p[2] - a[2]) * n[2]) / len;
      if (d > 1e-9 * fmax(ext, 1e-3)) return snprintf(why, cap, "vertex %d is %g in front of face %d", i, d, k), 0;
    }
  }
  return 1;
}

/* Sorted "parent>child" pairs of the model's link tree, space separated. */
static int pair_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void model_tree(const tl_model *m, char *out, size_t cap) {
  char **pairs = calloc((size_t)m->nlink + 1, sizeof(char *));
  int n = 0;
  for (int l = 1; l < m->nlink && pairs; l++) {
    pairs[n] = malloc(2 * TL_NAME_MAX + 2);
    if (!pairs[n]) break;
    snprintf(pairs[n++], 2 * TL_NAME_MAX + 2, "%s>%s", m->link_name[m->link_parent[l]], m->link_name[l]);
  }
  if (pairs) qsort(pairs, (size_t)n, sizeof(char *), pair_cmp);
  size_t len = (size_t)snprintf(out, cap, "%s|", m->link_name[0]);
  for (int i = 0; i < n; i++) {
    if (len < cap) len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", pairs[i]);
    free(pairs[i]);
  }
  free(pairs);
}

/* Line of TREES for `rel`: "ROOT|PAIRS" into out, or 0 when check_urdf rejected it. */
static int expected_tree(const char *trees, const char *rel, char *out, size_t cap) {
  FILE *f = fopen(trees, "r");
  if (!f) return 0;
  static char line[1 << 16];
  int found = 0;
  while (!found && fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\r\n")] = 0;
    char *bar = strchr(line, '|');
    if (line[0] == '#' || !bar) continue;
    *bar = 0;
    if (strcmp(line, rel) == 0) found = 1, snprintf(out, cap, "%s", bar + 1);
  }
  fclose(f);
  return found;
}

static void check_corpus_file(const char *dir, const char *rel, const char *trees, int *ntree) {
  char path[2048], mesh_dir[2048];
  if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >= (int)sizeof(path)) return;
  memcpy(mesh_dir, path, sizeof(path));
  *strrchr(mesh_dir, '/') = 0;
  const robot_row *row = NULL;
  for (int i = 0; i < NROW; i++)
    if (strcmp(rows[i].file, rel) == 0) row = &rows[i];
  tl_load_options o = tl_load_options_default();
  if (row && row->fixed) o.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (!TL_CHECK(tl_model_load_urdf(path, &o, &m, &err) == TL_OK, "%s: %s", rel, err.message)) return;
  if (row) {
    int nrev = 0, npri = 0, nsph = 0, nmimic = 0;
    for (int b = 1; b < m->nbody; b++) {
      nrev += m->jnt_type[b] == TL_JOINT_REVOLUTE;
      npri += m->jnt_type[b] == TL_JOINT_PRISMATIC;
      nsph += m->jnt_type[b] == TL_JOINT_SPHERICAL;
    }
    for (int k = 0; k < m->nv; k++) {
      int followed = -1;
      nmimic += tl_model_dof_mimic(m, k, &followed, NULL, NULL, NULL) == TL_OK && followed >= 0;
    }
    int floating = m->base == TL_BASE_FLOATING;
    TL_CHECK(m->nv == row->dof + 6 * floating && floating == !row->fixed, "%s: nv %d, README %d (+6 floating)",
             rel, m->nv, row->dof);
    TL_CHECK(nrev == row->nrevolute && npri == row->nprismatic && nsph == row->nspherical,
             "%s: revolute %d prismatic %d spherical %d", rel, nrev, npri, nsph);
    TL_CHECK(nmimic == row->nmimic, "%s: %d mimic DOFs, expected %d", rel, nmimic, row->nmimic);
    TL_CHECK_NEAR(m->total_mass, row->mass, 5.1e-5, rel);
  }
  int nmesh = 0, nhull = 0;
  char why[160];
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_type[g] != TL_GEOM_MESH) continue;
    nmesh++;
    if (TL_CHECK(hull_ok(m, g, why, sizeof(why)), "%s: geom %s: hull: %s", rel, m->geom_name[g], why)) nhull++;
  }
  if (nmesh) printf("  %-52s %d collision meshes, %d convex hulls\n", rel, nmesh, nhull);
  if (has_suffix(rel, "solo12.urdf")) { /* <contact><lateral_friction 1.0/><restitution 0.5/> on base_link */
    int g = -1;
    for (int i = 0; i < m->ngeom && g < 0; i++)
      if (strcmp(m->geom_link[i], "base_link") == 0) g = i;
    double mu = 0, e = 0, k = 0;
    TL_CHECK(g >= 0 && tl_model_geom_contact(m, g, &mu, &e, &k, NULL, NULL) == 0 && mu == 1.0 && e == 0.5 && isnan(k) &&
                 strcmp(tl_model_geom_material(m, g), "base_link") == 0,
             "%s: base_link contact friction %g restitution %g", rel, mu, e);
  }
  if (has_suffix(rel, "hyq_no_sensors.urdf")) { /* lf_foot: lateral_friction 1, stiffness 30000, damping 1000 */
    int g = -1;
    for (int i = 0; i < m->ngeom && g < 0; i++)
      if (strcmp(m->geom_link[i], "lf_foot") == 0) g = i;
    double mu = 0, k = 0, c = 0;
    TL_CHECK(g >= 0 && tl_model_geom_contact(m, g, &mu, NULL, &k, &c, NULL) == 0 && mu == 1 && k == 30000 && c == 1000,
             "%s: lf_foot contact %g %g %g", rel, mu, k, c);
    double sl, su, kp, kv;
    int b = tl_model_body_index(m, "lf_hipassembly");
    TL_CHECK(b > 0 && tl_model_joint_safety_controller(m, b, &sl, &su, &kp, &kv, NULL) == TL_OK && kp == 50 && kv == 10,
             "%s: lf_haa safety controller", rel);
  }
  if (has_suffix(rel, "panda.urdf")) {
    int b = tl_model_body_index(m, "panda_rightfinger"), f = -2;
    double mult = 0;
    TL_CHECK(b > 0 && tl_model_dof_mimic(m, m->v_adr[b], &f, &mult, NULL, NULL) == TL_OK &&
                 f == m->v_adr[tl_model_body_index(m, "panda_leftfinger")] && mult == 1,
             "%s: panda_finger_joint2 mimics panda_finger_joint1", rel);
  }
  static char want[1 << 16], got[1 << 16];
  if (expected_tree(trees, rel, want, sizeof(want))) {
    (*ntree)++;
    model_tree(m, got, sizeof(got));
    TL_CHECK(strcmp(want, got) == 0, "%s: link tree differs from check_urdf's:\n  want %.300s\n  got  %.300s", rel,
             want, got);
  }
  round_trip(rel, m, mesh_dir);
  tl_model_free(m);
}

static void walk(const char *dir, const char *rel, const char *trees, int *nfile, int *ntree) {
  char path[4096];
  snprintf(path, sizeof(path), "%.2000s%s%.1024s", dir, rel[0] ? "/" : "", rel);
  DIR *d = opendir(path);
  if (!d) return;
  char names[256][256];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;)
    if (e->d_name[0] != '.') snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
  for (int i = 0; i < n; i++) {
    char sub[1024], full[4096];
    struct stat s;
    if (snprintf(sub, sizeof(sub), "%s%s%.255s", rel, rel[0] ? "/" : "", names[i]) >= (int)sizeof(sub) ||
        snprintf(full, sizeof(full), "%.2000s/%s", dir, sub) >= (int)sizeof(full))
      continue;
    if (stat(full, &s) != 0) continue;
    if (S_ISDIR(s.st_mode))
      walk(dir, sub, trees, nfile, ntree);
    else if (has_suffix(names[i], ".urdf"))
      (*nfile)++, check_corpus_file(dir, sub, trees, ntree);
  }
}

static void test_corpus(const char *dir, const char *trees) {
  struct stat s;
  if (stat(dir, &s) != 0) {
    tl_test_skip("%s not found (shared robot corpus)", dir);
    return;
  }
  int nfile = 0, ntree = 0;
  walk(dir, "", trees, &nfile, &ntree);
  printf("corpus: %d URDF files loaded and exported; %d link trees compared with check_urdf's\n", nfile, ntree);
  TL_CHECK(nfile >= NROW && ntree >= 13, "corpus: %d files, %d trees", nfile, ntree);
}

/* ------------------------------------------------------------------------ */
/* 2. features on inline text                                                */

#define INERTIAL "<inertial><mass value=\"1\"/><inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.1\" iyz=\"0\" izz=\"0.1\"/></inertial>"

static const char k_arm[] =
    "<robot name=\"arm\">\n"                                                                         /* 1 */
    "  <material name=\"red\"><color rgba=\"1 0 0 1\"/></material>\n"                              /* 2 */
    "  <material name=\"wood\"><texture filename=\"wood.png\"/></material>\n"                       /* 3 */
    "  <link name=\"world\"/>\n"                                                                     /* 4 */
    "  <link name=\"base\">" INERTIAL "\n"                                                           /* 5 */
    "    <visual name=\"v0\"><origin xyz=\"0 0 0.5\"/><geometry><box size=\"1 2 3\"/></geometry>"
    "<material name=\"red\"/></visual>\n"                                                            /* 6 */
    "    <visual><geometry><sphere radius=\"0.2\"/></geometry><material name=\"blue\">"
    "<color rgba=\"0 0 1 0.5\"/></material></visual>\n"                                             /* 7 */
    "    <collision name=\"foot\"><geometry><sphere radius=\"0.1\"/></geometry></collision>\n"      /* 8 */
    "    <collision><geometry><box size=\"0.1 0.1 0.1\"/></geometry></collision>\n"                 /* 9 */
    "    <contact><lateral_friction value=\"0.6\"/><restitution value=\"0.25\"/>"
    "<stiffness value=\"3e4\"/><damping value=\"1000\"/><rolling_friction value=\"0\"/></contact>\n"
    "    <self_filter/>\n"                                                                           /* 11 */
    "  </link>\n"
    "  <link name=\"l1\">" INERTIAL "<collision><geometry><cylinder radius=\"0.1\" length=\"1\"/>"
    "</geometry></collision></link>\n"                                                               /* 13 */
    "  <link name=\"l2\">" INERTIAL "</link>\n"                                                      /* 14 */
    "  <link name=\"l3\">" INERTIAL "</link>\n"                                                      /* 15 */
    "  <link name=\"tip\"/>\n"                                                                       /* 16 */
    "  <joint name=\"fix\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/></joint>\n"
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"l1\"/>\n"         /* 18 */
    "    <axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"5\" velocity=\"2\"/>\n"
    "    <calibration rising=\"0.1\"/><safety_controller soft_lower_limit=\"-0.9\" soft_upper_limit=\"0.9\""
    " k_position=\"10\" k_velocity=\"2\"/>\n"                                                        /* 20 */
    "  </joint>\n"
    "  <joint name=\"j2\" type=\"continuous\"><parent link=\"l1\"/><child link=\"l2\"/>\n"          /* 22 */
    "    <mimic joint=\"j1\" multiplier=\"-2\" offset=\"0.5\"/></joint>\n"                          /* 23 */
    "  <joint name=\"j3\" type=\"prismatic\"><parent link=\"base\"/><child link=\"l3\"/>\n"
    "    <limit lower=\"0\" upper=\"0.2\"/><mimic joint=\"j2\"/></joint>\n"                          /* 25 */
    "  <joint name=\"tipj\" type=\"fixed\"><parent link=\"l3\"/><child link=\"tip\"/>"
    "<mimic joint=\"j1\"/><calibration falling=\"1\"/></joint>\n"                                   /* 26 */
    "  <transmission name=\"t1\"><type>x</type></transmission>\n"
    "  <gazebo reference=\"base\"><mu1>0.5</mu1></gazebo>\n"
    "</robot>\n";

static void test_features(void) {
  tl_error err;
  tl_model *m = load_text(k_arm, NULL, &err);
  if (!TL_CHECK(m != NULL, "arm: %s", err.message)) return;
  TL_CHECK(m->base == TL_BASE_FIXED && m->nbody == 4 && m->nv == 3, "arm: nbody %d nv %d", m->nbody, m->nv);
  int f;
  double mult, off;
  TL_CHECK(tl_model_dof_mimic(m, 0, &f, &mult, &off, NULL) == TL_OK && f == -1 && mult == 1 && off == 0, "j1 mimics none");
  TL_CHECK(tl_model_dof_mimic(m, 1, &f, &mult, &off, NULL) == TL_OK && f == 0 && mult == -2 && off == 0.5,
           "j2 mimics j1: %d %g %g", f, mult, off);
  TL_CHECK(tl_model_dof_mimic(m, 2, &f, &mult, &off, NULL) == TL_OK && f == 1 && mult == 1 && off == 0,
           "j3 mimics j2 (defaults 1, 0)");
  TL_CHECK(tl_model_dof_mimic(m, 3, NULL, NULL, NULL, &err) == TL_ERR_ARGUMENT && strstr(err.message, "dof index 3"),
           "bad DOF index: %s", err.message);
  TL_CHECK(m->q0[1] == 0.5 && m->q0[2] == 0.5, "q0 satisfies the mimics: %g %g", m->q0[1], m->q0[2]);
  double r, fl, sl, su, kp, kv;
  TL_CHECK(tl_model_joint_calibration(m, 1, &r, &fl, NULL) == TL_OK && r == 0.1 && isnan(fl), "j1 calibration");
  TL_CHECK(tl_model_joint_calibration(m, 2, &r, &fl, NULL) == TL_OK && isnan(r) && isnan(fl), "j2 no calibration");
  TL_CHECK(tl_model_joint_safety_controller(m, 1, &sl, &su, &kp, &kv, NULL) == TL_OK && sl == -0.9 && su == 0.9 &&
               kp == 10 && kv == 2,
           "j1 safety controller");
  TL_CHECK(tl_model_joint_safety_controller(m, 3, &sl, NULL, NULL, &kv, NULL) == TL_OK && isnan(sl) && isnan(kv), "j3 none");
  /* contact block: both geoms of base */
  double mu, e, k, c;
  TL_CHECK(m->ngeom == 3, "3 geoms");
  TL_CHECK(tl_model_geom_contact(m, 0, &mu, &e, &k, &c, NULL) == 0 && mu == 0.6 && e == 0.25 && k == 3e4 && c == 1000,
           "base geom 0 contact %g %g %g %g", mu, e, k, c);
  TL_CHECK(tl_model_geom_contact(m, 1, &mu, &e, NULL, NULL, NULL) == 0 && mu == 0.6 && e == 0.25, "base geom 1");
  TL_CHECK(strcmp(tl_model_geom_material(m, 0), "base") == 0 && strcmp(tl_model_geom_name(m, 0), "foot") == 0 &&
               strcmp(tl_model_geom_name(m, 1), "base/1") == 0,
           "material named after the link, collision names");
  TL_CHECK(tl_model_geom_contact(m, 2, &mu, &e, &k, &c, NULL) == 0 && mu == 0.8 && isnan(e) && isnan(k) &&
               tl_model_geom_material(m, 2)[0] == 0,
           "l1 geom: default friction, no contact values");
  /* visuals and materials */
  tl_visual_info v;
  TL_CHECK(tl_model_nvisual(m) == 2 && tl_model_nmaterial(m) == 2, "2 visuals, 2 materials");
  TL_CHECK(tl_model_visual(m, 0, &v, NULL) == 0 && strcmp(v.name, "v0") == 0 && v.type == TL_GEOM_BOX &&
               v.size[1] == 2 && v.pos[2] == 0.5 && strcmp(v.material, "red") == 0 && v.rgba[0] == 1 &&
               v.rgba[2] == 0 && strcmp(v.link, "base") == 0 && v.body == 0,
           "visual 0 (colour from the robot-level material)");
  TL_CHECK(tl_model_visual(m, 1, &v, NULL) == 0 && v.type == TL_GEOM_SPHERE && strcmp(v.material, "blue") == 0 &&
               v.rgba[2] == 1 && v.rgba[3] == 0.5,
           "visual 1 (inline colour)");
  const char *name, *tex;
  double rgba[4];
  TL_CHECK(tl_model_material(m, 1, &name, rgba, &tex, NULL) == 0 && strcmp(name, "wood") == 0 &&
               strcmp(tex, "wood.png") == 0 && isnan(rgba[0]),
           "material wood (texture, no colour)");
  round_trip("inline arm", m, NULL);
  tl_model_free(m);

  /* a model that did not come from a file: a primitive */
  double size[3] = {0.1, 0.2, 0.3};
  tl_model *box = NULL;
  if (TL_CHECK(tl_model_create_primitive(TL_GEOM_BOX, size, 2.0, "crate & co", &box, &err) == TL_OK, "primitive"))
    round_trip("primitive box", box, NULL);
  tl_model_free(box);
  /* hostile XML that must load without touching the network or the file system */
  m = load_text("<?xml version=\"1.0\"?>\n<!DOCTYPE robot SYSTEM \"http://example.com/robot.dtd\">\n"
                "<robot xmlns:xi=\"http://www.w3.org/2001/XInclude\"><xi:include href=\"/etc/passwd\"/>"
                "<link name=\"a\">" INERTIAL "</link></robot>", NULL, &err);
  TL_CHECK(m && m->nlink == 1, "external DTD and XInclude are ignored: %s", m ? "" : err.message);
  tl_model_free(m);
  /* a chain of 20000 links, each following the next through <mimic>: no recursion, no quadratic pass */
  enum { NCHAIN = 20000 };
  size_t cap = (size_t)NCHAIN * 400, len = 0;
  char *big = malloc(cap);
  if (big) {
    len += (size_t)snprintf(big + len, cap - len, "<robot name=\"chain\">\n");
    for (int i = 0; i < NCHAIN; i++)
      len += (size_t)snprintf(big + len, cap - len, "<link name=\"l%d\">" INERTIAL "</link>\n", i);
    for (int i = 1; i < NCHAIN; i++) {
      char mimic[64] = "";
      if (i + 1 < NCHAIN) snprintf(mimic, sizeof(mimic), "<mimic joint=\"j%d\" offset=\"0.001\"/>", i + 1);
      len += (size_t)snprintf(big + len, cap - len, "<joint name=\"j%d\" type=\"prismatic\"><parent link=\"l%d\"/>"
                              "<child link=\"l%d\"/>%s</joint>\n", i, i - 1, i, mimic);
    }
    snprintf(big + len, cap - len, "</robot>\n");
  }
  m = big ? load_text(big, NULL, &err) : NULL;
  TL_CHECK(m && m->nbody == NCHAIN && m->nv == NCHAIN + 5, "chain of %d links: %s", NCHAIN, m ? "" : err.message);
  if (m) TL_CHECK_NEAR(m->q0[7], 0.001 * (NCHAIN - 2), 1e-9, "q0 of the first joint of a mimic chain");
  tl_model_free(m);
  free(big);
  /* verbose output lists skipped elements (goes to stderr; only must not fail) */
  tl_load_options o = tl_load_options_default();
  o.verbose = 1;
  m = load_text(k_arm, &o, &err);
  TL_CHECK(m != NULL, "verbose load");
  tl_model_free(m);
}

static void test_feature_errors(void) {
  const char *two = "<robot><link name=\"a\">" INERTIAL "</link><link name=\"b\">" INERTIAL "</link>\n"
                    "<link name=\"c\">" INERTIAL "</link>\n";
  char text[2048];
  snprintf(text, sizeof(text), "%s<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
           "<mimic joint=\"nope\"/></joint></robot>", two);
  expect_error("mimic unknown", text, NULL, TL_ERR_INVALID, 4, "joint 'j' mimics joint 'nope', which is not defined");
  snprintf(text, sizeof(text), "%s<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
           "<mimic joint=\"j\"/></joint></robot>", two);
  expect_error("mimic self", text, NULL, TL_ERR_INVALID, 4, "joint 'j' mimics itself");
  snprintf(text, sizeof(text), "%s<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
           "<mimic joint=\"k\"/></joint>\n<joint name=\"k\" type=\"revolute\"><parent link=\"b\"/>"
           "<child link=\"c\"/><mimic joint=\"j\"/></joint></robot>", two);
  expect_error("mimic cycle", text, NULL, TL_ERR_INVALID, 4, "chain of <mimic> elements comes back");
  snprintf(text, sizeof(text), "%s<joint name=\"j\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
           "</joint>\n<joint name=\"k\" type=\"revolute\"><parent link=\"b\"/><child link=\"c\"/>"
           "<mimic joint=\"j\"/></joint></robot>", two);
  expect_error("mimic fixed", text, NULL, TL_ERR_INVALID, 5, "joint 'k' mimics joint 'j' (line 3), which is fixed");
  snprintf(text, sizeof(text), "%s<joint name=\"j\" type=\"spherical\"><parent link=\"a\"/><child link=\"b\"/>\n"
           "</joint>\n<joint name=\"k\" type=\"revolute\"><parent link=\"b\"/><child link=\"c\"/>"
           "<mimic joint=\"j\"/></joint></robot>", two);
  expect_error("mimic spherical", text, NULL, TL_ERR_INVALID, 5, "which is spherical");
  { /* a planar joint loads: 3 coordinates, in-plane axes perpendicular to its normal */
    tl_model *pm = NULL;
    tl_error perr;
    const char *planar = "<robot><link name=\"a\">" INERTIAL "</link><link name=\"b\">" INERTIAL "</link>"
                         "<joint name=\"j\" type=\"planar\"><parent link=\"a\"/><child link=\"b\"/>"
                         "<axis xyz=\"0 0 1\"/></joint></robot>";
    tl_load_options po = tl_load_options_default();
    po.base = TL_BASE_FIXED;
    int ok = tl_model_load_urdf_string(planar, strlen(planar), "planar.urdf", &po, &pm, &perr) == TL_OK;
    TL_CHECK(ok && tl_model_nq(pm) == 3 && tl_model_nv(pm) == 3 && tl_model_joint_type(pm, 1) == TL_JOINT_PLANAR,
             "planar joint: %s", ok ? "wrong dimensions or type" : perr.message);
    double n[3] = {0, 0, 1}, t1[3], t2[3];
    tl_model_planar_axes(n, t1, t2);
    TL_CHECK(fabs(t1[2]) < 1e-15 && fabs(t2[2]) < 1e-15 && fabs(t1[0] * t2[0] + t1[1] * t2[1]) < 1e-15,
             "planar axes not in the plane or not orthogonal");
    tl_model_free(pm);
  }
  expect_error("massless body", "<robot><link name=\"a\">" INERTIAL "</link><link name=\"b\"/>\n"
               "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/></joint></robot>",
               NULL, TL_ERR_INVALID, 2, "joint 'j' moves link 'b', but neither that link nor anything attached below it has mass");
  /* a kinematics-only description (no <inertial> anywhere: 88 of 376 URDFs of a public dataset,
   * ROS-Industrial arms) is named as such, at the root link's line */
  expect_error("no mass at all", "<robot name=\"arm\"><link name=\"a\"/><link name=\"b\"/>\n"
               "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/></joint></robot>",
               NULL, TL_ERR_INVALID, 1, "robot 'arm' has no mass: none of its 2 links has an <inertial>");
  expect_error("safety without k_velocity", "<robot><link name=\"a\">" INERTIAL "</link><link name=\"b\">" INERTIAL
               "</link>\n<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
               "<safety_controller k_position=\"1\"/></joint></robot>",
               NULL, TL_ERR_INVALID, 2, "attribute 'k_velocity' of <safety_controller> in joint 'j' is missing");
  expect_error("colour out of range", "<robot>\n<material name=\"m\"><color rgba=\"1 0 2 1\"/></material>"
               "<link name=\"a\"/></robot>", NULL, TL_ERR_INVALID, 2, "expected four values in [0, 1]");
  expect_error("contact negative", "<robot><link name=\"a\">\n<contact><restitution value=\"-1\"/></contact>"
               "</link></robot>", NULL, TL_ERR_INVALID, 2, "attribute 'value' of <restitution> in link 'a' is -1");
}

/* ------------------------------------------------------------------------ */
/* 3. meshes                                                                 */

static char tmpdir[256];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* An ASCII STL of the unit cube [0,1]^3 (12 triangles) at path. */
static void write_cube(const char *path) {
  static const int tri[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                 {2, 3, 7}, {2, 7, 6}, {1, 2, 6}, {1, 6, 5}, {0, 4, 7}, {0, 7, 3}};
  static const double p[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                 {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "solid cube\n");
  for (int t = 0; t < 12; t++) {
    fprintf(f, " facet normal 0 0 0\n  outer loop\n");
    for (int k = 0; k < 3; k++) fprintf(f, "   vertex %g %g %g\n", p[tri[t][k]][0], p[tri[t][k]][1], p[tri[t][k]][2]);
    fprintf(f, "  endloop\n endfacet\n");
  }
  fprintf(f, "endsolid cube\n");
  fclose(f);
}

static const char *mesh_robot(char *buf, size_t cap, const char *collision_uri, const char *visual_uri,
                              const char *scale) {
  snprintf(buf, cap, "<robot name=\"m\"><link name=\"a\">" INERTIAL "\n"
           "<visual><geometry><mesh filename=\"%s\"/></geometry></visual>\n"
           "<collision><geometry>\n<mesh filename=\"%s\" scale=\"%s\"/></geometry></collision></link></robot>",
           visual_uri, collision_uri, scale);
  return buf;
}

static void test_meshes(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/talus_mesh_XXXXXX");
  if (!TL_CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp")) return;
  char p[512], p2[512], text[4096], robot_dir[512], urdf[600];
  /* tmp/pkgs/mypkg/meshes/cube.stl; tmp/robot/urdf/r.urdf; tmp/robot/meshes/cube.stl */
  snprintf(p, sizeof(p), "%s/pkgs", tmpdir); mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/pkgs/mypkg", tmpdir); mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/pkgs/mypkg/meshes", tmpdir); mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/pkgs/mypkg/meshes/cube.stl", tmpdir); write_cube(p);
  snprintf(p2, sizeof(p2), "%s/pkgs/mypkg/meshes/cube.ply", tmpdir); write_file(p2, "ply\n");
  snprintf(robot_dir, sizeof(robot_dir), "%s/robot", tmpdir); mkdir(robot_dir, 0700);
  snprintf(p, sizeof(p), "%s/robot/urdf", tmpdir); mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/robot/meshes", tmpdir); mkdir(p, 0700);
  snprintf(p, sizeof(p), "%s/robot/meshes/cube.stl", tmpdir); write_cube(p);
  snprintf(urdf, sizeof(urdf), "%s/robot/urdf/r.urdf", tmpdir);

  tl_error err;
  tl_model *m;
  int nv, nf;
  const double *vert;
  const int *face;
  /* relative to the URDF's folder, scale applied; visual missing -> warning */
  write_file(urdf, mesh_robot(text, sizeof(text), "../meshes/cube.stl", "../meshes/none.dae", "2 1 -1"));
  memset(&err, 0, sizeof(err));
  m = NULL;
  tl_model_load_urdf(urdf, NULL, &m, &err);
  if (TL_CHECK(m != NULL, "relative mesh: %s", err.message)) {
    TL_CHECK(tl_model_geom_hull(m, 0, &nv, &vert, &nf, &face, NULL) == 0 && nv == 8 && nf == 12,
             "cube hull: %d vertices %d faces", nv, nf);
    double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
    for (int i = 0; i < 3 * nv; i++) lo[i % 3] = fmin(lo[i % 3], vert[i]), hi[i % 3] = fmax(hi[i % 3], vert[i]);
    TL_CHECK(lo[0] == 0 && hi[0] == 2 && lo[1] == 0 && hi[1] == 1 && lo[2] == -1 && hi[2] == 0,
             "scale 2 1 -1 applied: x %g..%g z %g..%g", lo[0], hi[0], lo[2], hi[2]);
    char why[128];
    TL_CHECK(hull_ok(m, 0, why, sizeof(why)), "mirrored cube hull outward: %s", why);
    TL_CHECK(m->nwarning == 1 && strstr(m->warnings[0], "visual mesh '../meshes/none.dae' not found"),
             "missing visual mesh is a warning: %d \"%s\"", m->nwarning, m->warnings[0]);
    const char *uri = NULL, *file = NULL;
    int rc = tl_model_geom_mesh(m, 0, &uri, &file, NULL);
    TL_CHECK(rc == 0 && strcmp(uri, "../meshes/cube.stl") == 0 && has_suffix(file, "/robot/meshes/cube.stl"),
             "resolved file: rc %d uri %s file %s", rc, uri ? uri : "-", file ? file : "-");
    tl_model_free(m);
  }
  /* package:// through TALUS_PACKAGE_PATH, two and three slashes; file:// */
  snprintf(p, sizeof(p), "/nonexistent:%s/pkgs", tmpdir);
  setenv("TALUS_PACKAGE_PATH", p, 1);
  static const char *const uris[] = {"package://mypkg/meshes/cube.stl", "package:///mypkg/meshes/cube.stl",
                                     "package://robot/meshes/cube.stl", "package://other_name/meshes/cube.stl"};
  for (int i = 0; i < 4; i++) {
    write_file(urdf, mesh_robot(text, sizeof(text), uris[i], uris[i], "1 1 1"));
    m = NULL;
    tl_model_load_urdf(urdf, NULL, &m, &err);
    TL_CHECK(m && m->nhull == 1 && m->nwarning == 0, "%s: %s", uris[i], m ? "no hull / warning" : err.message);
    tl_model_free(m);
  }
  snprintf(p, sizeof(p), "file://%s/pkgs/mypkg/meshes/cube.stl", tmpdir);
  write_file(urdf, mesh_robot(text, sizeof(text), p, p, "1 1 1"));
  m = NULL;
  tl_model_load_urdf(urdf, NULL, &m, &err);
  TL_CHECK(m && m->nhull == 1, "file:// URI: %s", m ? "" : err.message);
  tl_model_free(m);
  /* text input: paths from the current directory, or mesh_dir */
  tl_load_options o = tl_load_options_default();
  char mesh_dir[512];
  snprintf(mesh_dir, sizeof(mesh_dir), "%s/robot/urdf", tmpdir);
  o.mesh_dir = mesh_dir;
  m = load_text(mesh_robot(text, sizeof(text), "../meshes/cube.stl", "../meshes/cube.stl", "1 1 1"), &o, &err);
  TL_CHECK(m && m->nhull == 1, "mesh_dir: %s", m ? "" : err.message);
  tl_model_free(m);
  /* errors */
  expect_error("missing collision mesh", mesh_robot(text, sizeof(text), "package://mypkg/none.stl", "x.stl", "1 1 1"),
               &o, TL_ERR_IO, 4, "collision mesh 'package://mypkg/none.stl' of link 'a' not found");
  expect_error("network URI", mesh_robot(text, sizeof(text), "https://example.com/a.stl", "x.stl", "1 1 1"), &o,
               TL_ERR_UNSUPPORTED, 4, "network URIs are refused");
  expect_error("network visual", mesh_robot(text, sizeof(text), "../meshes/cube.stl", "http://x/y.dae", "1 1 1"),
               &o, TL_ERR_UNSUPPORTED, 2, "visual mesh URI 'http://x/y.dae' of link 'a': network URIs are refused");
  expect_error("bad package", mesh_robot(text, sizeof(text), "package://mypkg", "x.stl", "1 1 1"), &o,
               TL_ERR_INVALID, 4, "expected package://PACKAGE/PATH");
  snprintf(p, sizeof(p), "package://mypkg/meshes/cube.ply");
  expect_error("format", mesh_robot(text, sizeof(text), p, "x.stl", "1 1 1"), &o, TL_ERR_UNSUPPORTED, 4,
               "unsupported format");
  expect_error("scheme", mesh_robot(text, sizeof(text), "s3://bucket/a.stl", "x.stl", "1 1 1"), &o,
               TL_ERR_INVALID, 4, "unknown URI scheme 's3'");
  expect_error("device", mesh_robot(text, sizeof(text), "file:///dev/zero", "x.stl", "1 1 1"), &o, TL_ERR_IO, 4,
               "not found");
  unsetenv("TALUS_PACKAGE_PATH");
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  TL_CHECK(system(cmd) == 0, "cleanup %s", tmpdir);
}

/* ------------------------------------------------------------------------ */
/* 4. templates and load_any                                                 */

static void test_templates(void) {
  static const char tpl[] =
      "<robot name=\"t\">\n"                                                                /* 1 */
      "  <!-- comments keep @@anything and {1/0} -->\n"                                     /* 2 */
      "  <link name=\"a\"><inertial><mass value=\"@@mass\"/>\n"                             /* 3 */
      "    <inertia ixx=\"{@@mass * (@@r*@@r) * 2 / 5}\" ixy=\"0\" ixz=\"0\" iyy=\"{-(-0.1)}\" iyz=\"0\""
      " izz=\"{ .1e0 }\"/></inertial>\n"                                                    /* 4 */
      "    <collision name=\"{not an expression}\"><geometry><sphere radius=\"@@r\"/></geometry></collision>\n"
      "  </link>\n"
      "</robot>\n";
  const char *names[] = {"mass", "r"};
  double values[] = {2.5, 0.1};
  tl_load_options o = tl_load_options_default();
  o.var_names = names;
  o.var_values = values;
  o.nvar = 2;
  tl_error err;
  tl_model *m = load_text(tpl, &o, &err);
  if (TL_CHECK(m != NULL, "template: %s", err.message)) {
    TL_CHECK(m->total_mass == 2.5 && m->geom_size[0] == 0.1, "@@mass, @@r");
    TL_CHECK_NEAR(m->link_inertia[0], 2.5 * 0.01 * 2 / 5, 1e-15, "{expression} with variables");
    TL_CHECK(m->link_inertia[4] == 0.1 && m->link_inertia[8] == 0.1, "unary minus, exponent");
    TL_CHECK(strcmp(m->geom_name[0], "{not an expression}") == 0, "braces around text kept");
    tl_model_free(m);
  }
  o.nvar = 1;
  expect_error("undefined variable", tpl, &o, TL_ERR_INVALID, 4, "template variable '@@r' is not defined");
  expect_error("no variables", tpl, NULL, TL_ERR_INVALID, 3, "template variable '@@mass' is not defined");
  o.nvar = 2;
  expect_error("division by zero", "<robot>\n<link name=\"{1/(2-2)}\"/></robot>", &o, TL_ERR_INVALID, 2,
               "divides by zero");
  expect_error("unfinished", "<robot>\n\n<link name=\"{1 +}\"/></robot>", &o, TL_ERR_PARSE, 3, "template expression");
  expect_error("bad @@", "<robot><link name=\"@@1\"/></robot>", &o, TL_ERR_PARSE, 1, "'@@' is not followed");
  const char *bad[] = {"1x"};
  o.var_names = bad;
  o.nvar = 1;
  expect_error("bad name", "<robot/>", &o, TL_ERR_ARGUMENT, 0, "template variable 0 is named '1x'");

  /* load_any: text vs path */
  tl_model *t = NULL;
  TL_CHECK(tl_model_load_urdf_any("\xEF\xBB\xBF \n <robot><link name=\"a\">" INERTIAL "</link></robot>", NULL, &t, &err) == TL_OK &&
               t && strcmp(t->source, "<string>") == 0,
           "load_any: text after BOM and white space: %s", err.message);
  tl_model_free(t);
  t = NULL;
  TL_CHECK(tl_model_load_urdf_any("/nonexistent/robot.urdf", NULL, &t, &err) == TL_ERR_IO && !t &&
               strstr(err.message, "/nonexistent/robot.urdf"),
           "load_any: a path: %s", err.message);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ROBOTS_DIR TREES_FILE\n", argv[0]);
    return 2;
  }
  char robots[1024];
  const char *env = getenv("TALUS_SHARED");
  snprintf(robots, sizeof(robots), env && env[0] ? "%s/robots" : "%s", env && env[0] ? env : argv[1]);
  test_features();
  test_feature_errors();
  test_meshes();
  test_templates();
  test_corpus(robots, argv[2]);
  return tl_test_finish();
}
