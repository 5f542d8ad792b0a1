/* Guards: urdf/urdf_mesh.c (collision hulls, COLLADA up axes), src/record/record_mesh.c (visual
 * meshes as the recorder draws them). */
/* Collision meshes sit where their visuals are (issue 21: the COLLADA
 * collision meshes of a Z_UP file were turned 90 degrees about x, because
 * the hulls' reader let assimp convert the file to Y-up while the viewer's
 * did not).
 *
 * For every URDF under ../shared/robots and robots/ (recursively), each link
 * with collision meshes: the bounding box, in the link frame, of every
 * collision hull as the engine uses it (tl_urdf_load_meshes: the hull qhull
 * made of the mesh, the <collision> origin applied) is compared with the box
 * of the visual mesh as the recorder draws it (tl_rec_mesh_read, no
 * decimation, the <visual> origin and scale applied):
 *   - same file (and scale) for collision and visual: the boxes agree within
 *     1 mm on every side (a hull's extreme vertices are mesh vertices: only
 *     the viewer's float32 rounding separates them);
 *   - different files (STL collision meshes beside COLLADA or OBJ visuals:
 *     Panda, UR5, iiwa, Talos): the union of the link's hull boxes and the
 *     union of its visual mesh boxes agree within 1 cm on every side (the
 *     collision meshes are coarser copies of the parts: 5.6 mm at most in
 *     the corpus, Panda's link 5; the largest difference is printed). These
 *     pairs test the up-axis rule against files that have no up axis: the
 *     Panda's and UR5's COLLADA visuals are Z_UP, their STL collision meshes
 *     are in the link frame;
 *   - and a check that trusts neither the viewer nor the up-axis rule: the
 *     centre of mass of each link of the shared corpus with COLLADA
 *     collision meshes (its <inertial> origin) lies inside the union of its
 *     hull boxes grown by 1 cm (HyQ's hip assemblies have theirs 17 cm along
 *     the link's z:
 *     outside the box of a hull turned about x). Links with STL collision
 *     meshes are not held to it: UR5's wrists give a placeholder centre of
 *     mass at the link origin, 5 cm outside their parts.
 * Usage: test_mesh_frames SHARED_DIR [ROBOTS_DIR] ($TALUS_SHARED replaces
 * SHARED_DIR). Exit 77 when SHARED_DIR/robots is absent. */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "math/tl_math.h"
#include "record/record_internal.h"
#include "tests/test_util.h"
#include "urdf/urdf_doc.h"

#define SAME_TOL 1e-3
#define OTHER_TOL 0.01
#define COM_TOL 0.01

typedef struct box {
  double lo[3], hi[3];
} box;

static void box_empty(box *b) {
  for (int k = 0; k < 3; k++) b->lo[k] = INFINITY, b->hi[k] = -INFINITY;
}

static int box_ok(const box *b) { return b->lo[0] <= b->hi[0]; }

static void box_add(box *b, const double p[3]) {
  for (int k = 0; k < 3; k++) b->lo[k] = fmin(b->lo[k], p[k]), b->hi[k] = fmax(b->hi[k], p[k]);
}

static void box_union(box *b, const box *c) {
  if (!box_ok(c)) return;
  box_add(b, c->lo);
  box_add(b, c->hi);
}

/* Largest distance between corresponding sides of two boxes. */
static double box_diff(const box *a, const box *b) {
  double d = 0;
  for (int k = 0; k < 3; k++) d = fmax(d, fmax(fabs(a->lo[k] - b->lo[k]), fabs(a->hi[k] - b->hi[k])));
  return d;
}

/* URDF origin: R = Rz(yaw) Ry(pitch) Rx(roll) (row-major), t = xyz. */
static void pose_of(const tl_urdf_pose *o, double R[9]) {
  double cr = cos(o->rpy[0]), sr = sin(o->rpy[0]), cp = cos(o->rpy[1]), sp = sin(o->rpy[1]);
  double cy = cos(o->rpy[2]), sy = sin(o->rpy[2]);
  double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                 sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                 -sp,     cp * sr,                cp * cr};
  memcpy(R, M, sizeof M);
}

/* Box in the link frame of points x (geom frame) under origin o. */
static void add_points(box *b, const tl_urdf_pose *o, const double *x, int n) {
  double R[9], p[3];
  pose_of(o, R);
  for (int i = 0; i < n; i++) {
    tl_m3_mulv(p, R, x + 3 * i);
    tl_v3_add(p, p, o->xyz);
    box_add(b, p);
  }
}

/* The visual mesh as the recorder reads it, in the link frame; 0 when it cannot be read. */
static int visual_box(const tl_urdf_visual *v, box *b) {
  tl_rec_mesh m;
  char why[512];
  box_empty(b);
  if (tl_rec_mesh_read(v->geom.mesh_file, v->geom.size, INT32_MAX, &m, why, sizeof why) != 0) {
    printf("  visual mesh %s cannot be read: %s\n", v->geom.mesh_file, why);
    return 0;
  }
  for (int i = 0; i < m.npart; i++) {
    const tl_rec_mesh_part *p = &m.part[i];
    double *x = malloc((size_t)(p->nvert > 0 ? p->nvert : 1) * 3 * sizeof(double));
    if (!x) break;
    for (int k = 0; k < 3 * p->nvert; k++) x[k] = p->vert[k];
    add_points(b, &v->geom.origin, x, p->nvert);
    free(x);
  }
  tl_rec_mesh_free(&m);
  return box_ok(b);
}

static int same_file(const tl_urdf_geom *c, const tl_urdf_geom *v) {
  return strcmp(c->mesh_file, v->mesh_file) == 0 && memcmp(c->size, v->size, sizeof c->size) == 0;
}

static struct {
  int robots, links, same_pairs, other_links, coms;
  double worst_same, worst_other, worst_com;
  char worst_same_at[512], worst_other_at[512];
} stats;

static void check_robot(const char *path, int in_shared) {
  tl_urdf_doc doc;
  tl_error err;
  if (tl_urdf_parse_file(path, &doc, &err) != TL_OK) {
    TL_CHECK(0, "%s: %s", path, err.message);
    return;
  }
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (!TL_CHECK(tl_urdf_load_meshes(&doc, slash ? dir : ".", &err) == TL_OK, "%s: %s", path, err.message)) {
    tl_urdf_doc_free(&doc);
    return;
  }
  int counted = 0;
  for (int li = 0; li < doc.nlink; li++) {
    const tl_urdf_link *l = &doc.links[li];
    box hulls, visuals;
    box_empty(&hulls);
    box_empty(&visuals);
    int nhull = 0, nvis = 0, unmatched = 0;
    for (int g = 0; g < l->ngeom; g++) {
      const tl_urdf_geom *c = &l->geoms[g];
      if (c->type != TL_GEOM_MESH) continue;
      box hb;
      box_empty(&hb);
      add_points(&hb, &c->origin, c->hull_vert, c->hull_nvert);
      box_union(&hulls, &hb);
      nhull++;
      int matched = 0;
      for (int v = 0; v < l->nvisual; v++) {
        const tl_urdf_visual *vi = &l->visuals[v];
        box vb;
        if (vi->geom.type != TL_GEOM_MESH || !vi->geom.mesh_file[0] || !same_file(c, &vi->geom) ||
            !visual_box(vi, &vb))
          continue;
        matched = 1;
        double d = box_diff(&hb, &vb);
        stats.same_pairs++;
        if (d > stats.worst_same) {
          stats.worst_same = d;
          snprintf(stats.worst_same_at, sizeof stats.worst_same_at, "%s link %s", path, l->name);
        }
        TL_CHECK(d <= SAME_TOL,
                 "%s: link '%s': collision hull of %s (line %d) and its visual (line %d) differ by %.4f m: hull "
                 "[%.4f %.4f %.4f]-[%.4f %.4f %.4f], visual [%.4f %.4f %.4f]-[%.4f %.4f %.4f]",
                 path, l->name, c->mesh_uri, c->line, vi->geom.line, d, hb.lo[0], hb.lo[1], hb.lo[2], hb.hi[0],
                 hb.hi[1], hb.hi[2], vb.lo[0], vb.lo[1], vb.lo[2], vb.hi[0], vb.hi[1], vb.hi[2]);
      }
      unmatched += !matched;
    }
    if (nhull == 0) continue;
    counted++;
    stats.links++;
    if (unmatched) { /* collision files of their own: the link's boxes */
      for (int v = 0; v < l->nvisual; v++) {
        const tl_urdf_visual *vi = &l->visuals[v];
        box vb;
        if (vi->geom.type == TL_GEOM_MESH && vi->geom.mesh_file[0] && visual_box(vi, &vb)) {
          box_union(&visuals, &vb);
          nvis++;
        }
      }
      if (nvis > 0) {
        double d = box_diff(&hulls, &visuals);
        stats.other_links++;
        if (d > stats.worst_other) {
          stats.worst_other = d;
          snprintf(stats.worst_other_at, sizeof stats.worst_other_at, "%s link %s", path, l->name);
        }
        TL_CHECK(d <= OTHER_TOL,
                 "%s: link '%s': its collision hulls and its visual meshes (other files) differ by %.4f m: "
                 "hulls [%.4f %.4f %.4f]-[%.4f %.4f %.4f], visuals [%.4f %.4f %.4f]-[%.4f %.4f %.4f]",
                 path, l->name, d, hulls.lo[0], hulls.lo[1], hulls.lo[2], hulls.hi[0], hulls.hi[1], hulls.hi[2],
                 visuals.lo[0], visuals.lo[1], visuals.lo[2], visuals.hi[0], visuals.hi[1], visuals.hi[2]);
      }
    }
    int dae = 0;
    for (int g = 0; g < l->ngeom; g++) {
      size_t n = strlen(l->geoms[g].mesh_file);
      dae |= l->geoms[g].type == TL_GEOM_MESH && n > 4 && strcasecmp(l->geoms[g].mesh_file + n - 4, ".dae") == 0;
    }
    if (dae && in_shared && l->has_inertial && l->mass > 0) {
      const double *com = l->inertial_origin.xyz;
      double out = 0;
      for (int k = 0; k < 3; k++) out = fmax(out, fmax(hulls.lo[k] - com[k], com[k] - hulls.hi[k]));
      stats.coms++;
      stats.worst_com = fmax(stats.worst_com, out);
      TL_CHECK(out <= COM_TOL,
               "%s: link '%s': its centre of mass (%.4f %.4f %.4f) is %.4f m outside its collision hulls' box "
               "[%.4f %.4f %.4f]-[%.4f %.4f %.4f]",
               path, l->name, com[0], com[1], com[2], out, hulls.lo[0], hulls.lo[1], hulls.lo[2], hulls.hi[0],
               hulls.hi[1], hulls.hi[2]);
    }
  }
  if (counted) {
    stats.robots++;
    printf("%s: %d links with collision meshes\n", path, counted);
  }
  tl_urdf_doc_free(&doc);
}

/* Every *.urdf under a folder, sorted. */
static char **found;
static int nfound, capfound;

static int collect(const char *p, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb, (void)ftw;
  size_t n = strlen(p);
  if (type != FTW_F || n < 5 || strcmp(p + n - 5, ".urdf") != 0) return 0;
  if (nfound == capfound) {
    capfound = capfound ? 2 * capfound : 32;
    char **bigger = realloc(found, (size_t)capfound * sizeof(char *));
    if (!bigger) return 1;
    found = bigger;
  }
  found[nfound] = strdup(p);
  return found[nfound++] ? 0 : 1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  const char *shared = tl_test_shared_dir(argc, argv, 1);
  char robots[PATH_MAX];
  snprintf(robots, sizeof robots, "%s/robots", shared ? shared : "");
  struct stat st;
  if (!shared || stat(robots, &st) != 0 || !S_ISDIR(st.st_mode)) {
    printf("SKIPPED: the shared robot corpus (%s) is absent: collision meshes against visuals not tested\n",
           shared ? robots : "no folder given");
    return TL_TEST_SKIP_CODE;
  }
  stats.worst_same = stats.worst_other = -1;
  nftw(robots, collect, 16, FTW_PHYS);
  int nshared = nfound;
  if (argc > 2) nftw(argv[2], collect, 16, FTW_PHYS);
  qsort(found, (size_t)nshared, sizeof(char *), cmp_str);
  qsort(found + nshared, (size_t)(nfound - nshared), sizeof(char *), cmp_str);
  for (int i = 0; i < nfound; i++) check_robot(found[i], i < nshared);
  printf("%d URDF files (%d in the shared corpus), %d robots with collision meshes, %d links: %d same-file "
         "hull/visual pairs (largest difference %.2e m, %s), %d links with collision files of their own "
         "(largest difference %.4f m, %s); centres of mass at most %.4f m outside their link's hulls (%d links with COLLADA hulls)\n",
         nfound, nshared, stats.robots, stats.links, stats.same_pairs, stats.worst_same, stats.worst_same_at,
         stats.other_links, stats.worst_other, stats.worst_other_at, stats.worst_com, stats.coms);
  TL_CHECK(stats.same_pairs > 0 && stats.other_links > 0 && stats.coms > 0, "nothing compared");
  for (int i = 0; i < nfound; i++) free(found[i]);
  free(found);
  return tl_test_finish();
}
