/* Guards: controllers/stand.c (quadrupeds standing), src/native/step.c and src/contact/constraint_rows.c
 * (the step with contacts). */
/* Talus quadrupeds standing on the ground with the stand controller.
 *
 * robots/talus_quadruped/talus_quadruped.urdf and, when the shared corpus is
 * there, shared/robots/anymal_c/urdf/anymal.urdf: floating base at the
 * reference configuration (q = 0 joints, identity base), lifted so that the
 * lowest collision geom (tl_system_geom_aabb over every primitive geom) is
 * 1 cm above the ground z = 0 (mu 0.8); the stand controller
 * (controllers/stand.h, default gains kp 300, kd 10) holds the initial
 * joint configuration; 5 s at dt = 1e-3 s (integrate1, tl_stand_update,
 * integrate2). Asserted:
 *   - every step succeeds;
 *   - base height max - min over the last 4 s < 0.02 m;
 *   - |roll| and |pitch| of the base < 0.05 rad at every step;
 *   - max penetration (contact depth) < 0.005 m at every step;
 *   - every contact is on a geom whose URDF link name contains "FOOT";
 *   - four feet carry the robot at the end: total normal impulse per step
 *     within 2 % of m g dt;
 *   - horizontal drift of the base origin < 0.01 m.
 *
 * Usage: test_stand ROBOTS_DIR [SHARED_ROBOTS_DIR]
 *   ($TALUS_SHARED/robots overrides SHARED_ROBOTS_DIR). A missing ANYmal C
 *   is reported as SKIPPED and counted as a skip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stand.h"
#include "talus/talus.h"
#include "test_util.h"

#define DT 1e-3
#define T_END 5.0
#define G 9.81

static void quat_rp(const double q[4], double *roll, double *pitch) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double r20 = 2 * (x * z - w * y), r21 = 2 * (y * z + w * x), r22 = 1 - 2 * (x * x + y * y);
  *roll = atan2(r21, r22);
  *pitch = -asin(fmax(-1.0, fmin(1.0, r20)));
}

static void stand(const char *path, const char *label) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_stand_controller ctrl;
  memset(&ctrl, 0, sizeof ctrl);
  tl_error err;
  memset(&err, 0, sizeof err);
  double *q = NULL, *u = NULL;
  int ok = tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "%s: setup failed: %s", label, err.message)) goto done;
  if (!TL_CHECK(tl_model_joint_type(m, 0) == TL_JOINT_FLOATING, "%s: not a floating base", label))
    goto done;
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  q = calloc((size_t)nq, sizeof(double));
  u = calloc((size_t)nv, sizeof(double));
  if (!q || !u) exit(2);

  /* Place the lowest primitive geom 1 cm above the ground. */
  tl_system_get_state(s, q, nq, u, nv, NULL);
  double minz = INFINITY;
  int nprim = 0;
  for (int g = 0; g < tl_model_ngeom(m); g++) {
    double lo[3], hi[3];
    if (tl_system_geom_aabb(s, g, lo, hi, NULL) != TL_OK) continue; /* meshes */
    minz = fmin(minz, lo[2]);
    nprim++;
  }
  if (!TL_CHECK(nprim > 0, "%s: no primitive collision geom", label)) goto done;
  q[2] += 0.01 - minz;
  if (!TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK, "%s: set_state: %s", label,
                err.message))
    goto done;
  if (!TL_CHECK(tl_stand_init(&ctrl, s, NULL, 0, TL_STAND_DEFAULT_KP, TL_STAND_DEFAULT_KD, &err) ==
                    TL_OK,
                "%s: tl_stand_init: %s", label, err.message))
    goto done;
  const double x0 = q[0], y0 = q[1], z0 = q[2], mass = tl_model_total_mass(m);

  int nsteps = (int)lround(T_END / DT), bad_contacts = 0;
  double zmin = INFINITY, zmax = -INFINITY, max_rp = 0, max_depth = 0, total_n = 0;
  char bad_link[128] = "";
  for (int i = 0; i < nsteps; i++) {
    if (tl_world_integrate1(w, &err) != TL_OK || tl_stand_update(&ctrl, &err) != TL_OK ||
        tl_world_integrate2(w, &err) != TL_OK) {
      TL_CHECK(0, "%s: step %d (t = %g s) failed: %s", label, i, tl_world_time(w), err.message);
      goto done;
    }
    tl_system_get_state(s, q, nq, u, nv, NULL);
    double t = (i + 1) * DT, roll, pitch;
    if (t > T_END - 4.0 + 0.5 * DT) {
      zmin = fmin(zmin, q[2]);
      zmax = fmax(zmax, q[2]);
    }
    quat_rp(q + 3, &roll, &pitch);
    max_rp = fmax(max_rp, fmax(fabs(roll), fabs(pitch)));
    total_n = 0;
    for (int k = 0; k < tl_world_ncontact(w); k++) {
      tl_contact_info c;
      if (tl_world_contact(w, k, &c, NULL) != TL_OK) continue;
      max_depth = fmax(max_depth, c.depth);
      total_n += c.impulse[2];
      const char *link = tl_model_geom_link(m, c.geom);
      if (!link || !strstr(link, "FOOT")) {
        if (!bad_contacts) snprintf(bad_link, sizeof bad_link, "%s (t = %g s)", link ? link : "?", t);
        bad_contacts++;
      }
    }
  }
  double drift = hypot(q[0] - x0, q[1] - y0), load = total_n / (mass * G * DT);
  printf("%s: %.2f kg, start z %.4f m, base z in [%.6f, %.6f] m over the last 4 s (range %.2e), max "
         "|roll|,|pitch| %.2e rad, max penetration %.2e m, drift %.2e m, final load %.4f m g, "
         "%d non-foot contacts\n",
         label, mass, z0, zmin, zmax, zmax - zmin, max_rp, max_depth, drift, load, bad_contacts);
  TL_CHECK(zmax - zmin < 0.02, "%s: base height range %.4g m over the last 4 s", label, zmax - zmin);
  TL_CHECK(zmin > 0.2, "%s: base sank to %.4g m", label, zmin);
  TL_CHECK(max_rp < 0.05, "%s: roll/pitch reached %.4g rad", label, max_rp);
  TL_CHECK(max_depth < 0.005, "%s: penetration %.4g m", label, max_depth);
  TL_CHECK(bad_contacts == 0, "%s: %d contacts on non-foot geoms, first on link %s", label,
           bad_contacts, bad_link);
  TL_CHECK(fabs(load - 1) < 0.02, "%s: feet carry %.4f m g at the end", label, load);
  TL_CHECK(drift < 0.01, "%s: base drifted %.4g m horizontally", label, drift);
done:
  tl_stand_free(&ctrl);
  free(q);
  free(u);
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ROBOTS_DIR [SHARED_ROBOTS_DIR]\n", argv[0]);
    return 2;
  }
  char path[4608];
  snprintf(path, sizeof path, "%.4000s/talus_quadruped/talus_quadruped.urdf", argv[1]);
  stand(path, "talus_quadruped");

  char shared[4096] = "";
  const char *env = getenv("TALUS_SHARED");
  if (env && env[0])
    snprintf(shared, sizeof shared, "%s/robots", env);
  else if (argc >= 3)
    snprintf(shared, sizeof shared, "%s", argv[2]);
  snprintf(path, sizeof path, "%s/anymal_c/urdf/anymal.urdf", shared);
  FILE *f = shared[0] ? fopen(path, "r") : NULL;
  if (!f) {
    tl_test_skip("ANYmal C not found at '%s' (shared robot corpus absent): not tested",
                 shared[0] ? path : "(no shared folder given)");
  } else {
    fclose(f);
    stand(path, "anymal_c");
  }
  return tl_test_finish();
}
