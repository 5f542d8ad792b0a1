/* Guards: src/contact/constraint_rows.c (joint-limit and mimic rows), src/contact/collide_hfield.c,
 * src/contact/collide_convex.c (hulls on terrain and ground), controllers/stand.c. */
/* Talus constraints and robots in contact (issue 5, "Done when"), public API only.
 *
 * Usage: test_contact_robots GROUP [SHARED_DIR]   ($TALUS_SHARED overrides SHARED_DIR)
 *   limits   URDF-string pendulum (fixed base, revolute about y, 1 kg at 0.5 m,
 *            limits [-0.5, 0.5] rad) released from rest at +0.4 rad with gravity
 *            driving it into the upper limit (and mirrored at -0.4 into the lower
 *            limit), 5 s at dt 1 ms: q never passes the limit by more than
 *            1e-3 rad, and at the end it rests at the limit (|q - limit| < 1e-3,
 *            |u| < 1e-6 rad/s).
 *            Mimic pair: two pendulums on one fixed base, j2 with
 *            <mimic joint="j1" multiplier="-0.5" offset="0.1"/>, released from
 *            q1 = 0.3 (q2 = -0.05 on the relation), swinging under gravity 3 s:
 *            |q2 - (-0.5 q1 + 0.1)| < 1e-4 at every step (SKIPPED with a message
 *            if the loader does not report the mimic).
 *   anymal   ANYmal C (SHARED/robots/anymal_c/urdf/anymal.urdf; exit 77 if absent),
 *            implicit PD kp 300, kd 10 holding q = 0 (controllers/stand.h), 3 s at
 *            dt 1 ms, lowest geom released 1 cm above the support:
 *            (a) on heightmap terrain (61 x 61, 5 cm spacing, deterministic sum of
 *                sines, |h| <= 2.5 cm), (b) on a static box 1 x 1 x 0.2 m (on the
 *                ground). Each: every step succeeds, base height range over the
 *                last 2.5 s < 0.03 m, base above 0.3 m over the support, every
 *                contact on a geom of a link named *FOOT*; on the box every contact
 *                is with the box; penetration (max contact depth over the run, the
 *                landing included) < 1 mm; the feet carry m g at the end (5 %).
 *   solo12   solo12 (SHARED/robots/solo12/robots/solo12.urdf, STL collision meshes;
 *            exit 77 if absent, SKIPPED if a mesh geom has no convex hull), PD kp 3,
 *            kd 0.1 holding q = 0, flat ground, 3 s: every step succeeds and the
 *            base origin stays above 0.1 m (it does not fall through), penetration
 *            < 1 mm, the contacts carry m g at the end (5 %).
 *   talos    Talos (SHARED/robots/talos/robots/talos_full_v2.urdf; exit 77 if
 *            absent) in free flight, PD kp 300, kd 10 holding its reference pose,
 *            1 s, its >= 6 mimic joints started 0.05 rad off their relation: >= 40
 *            joint rows (Coulomb friction, limits, mimic), every solve converged
 *            within 100 sweeps, mimic relations within 1e-4 rad at the end, joints
 *            within 0.05 rad of the target after 0.1 s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stand.h"
#include "talus/talus.h"
#include "test_util.h"

#define DT 1e-3
#define PI 3.14159265358979323846

static tl_error err;

/* ------------------------------------------------------------ limits */

static const char *pendulum_urdf =
    "<robot name='limited'>"
    " <link name='world'/>"
    " <joint name='fix' type='fixed'><parent link='world'/><child link='base'/></joint>"
    " <link name='base'><inertial><mass value='1'/>"
    "  <inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='j' type='revolute'><parent link='base'/><child link='arm'/>"
    "  <axis xyz='0 1 0'/><limit lower='-0.5' upper='0.5' effort='100' velocity='10'/>"
    "  <dynamics friction='%g'/></joint>"
    " <link name='arm'><inertial><origin xyz='%g 0 0'/><mass value='1'/>"
    "  <inertia ixx='0.001' iyy='0.001' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

/* Arm along sign * x: rotation about +y by q moves +x towards -z, so gravity
 * drives q towards sign * infinity, into the limit sign * 0.5. With Coulomb
 * friction (N m, below the gravity torque) the DOF has two rows with the same
 * Jacobian at the limit: the solve must still end within a few sweeps. */
static void limit_hold(double sign, double friction) {
  char text[2048];
  snprintf(text, sizeof text, pendulum_urdf, friction, 0.5 * sign);
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  int ok = tl_model_load_urdf_string(text, strlen(text), "pendulum", NULL, &m, &err) == TL_OK &&
           tl_world_create(&w, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "limit pendulum setup: %s", err.message)) goto done;
  if (!TL_CHECK(tl_system_nq(s) == 1 && tl_system_nv(s) == 1, "limit pendulum: nq %d nv %d (fixed base "
                "expected)", tl_system_nq(s), tl_system_nv(s)))
    goto done;
  double lim = 0.5 * sign, q = 0.4 * sign, u = 0, over = -INFINITY, umax_end = 0, t_hit = -1;
  int sweeps_end = 0, unconverged = 0;
  ok = tl_system_set_state(s, &q, 1, &u, 1, &err) == TL_OK;
  for (int i = 1; i <= 5000 && ok; i++) {
    tl_solver_stats st;
    ok = tl_world_step(w, &err) == TL_OK && tl_system_get_state(s, &q, 1, &u, 1, &err) == TL_OK &&
         tl_world_solver_stats(w, &st, &err) == TL_OK;
    over = fmax(over, sign * (q - lim)); /* > 0: beyond the limit */
    if (t_hit < 0 && sign * (q - lim) > -1e-3) t_hit = i * DT;
    unconverged += !st.converged;
    if (i > 4000) umax_end = fmax(umax_end, fabs(u)), sweeps_end = st.iterations > sweeps_end ? st.iterations : sweeps_end;
  }
  printf("joint limit %+.1f rad (friction %g N m), released at %+.1f: reaches it at %.3f s, max violation %.3e rad, "
         "final q %.9f (|q - limit| %.3e), max |u| over the last 1 s %.3e rad/s, %d sweeps at most, %d "
         "solves unconverged\n",
         lim, friction, 0.4 * sign, t_hit, over, q, fabs(q - lim), umax_end, sweeps_end, unconverged);
  TL_CHECK(unconverged == 0, "limit %+.1f: %d solves did not converge", lim, unconverged);
  TL_CHECK(sweeps_end <= 10, "limit %+.1f: %d sweeps at rest", lim, sweeps_end);
  TL_CHECK(ok, "limit pendulum: step failed: %s", err.message);
  TL_CHECK(over < 1e-3, "limit %+.1f: violated by %.3e rad", lim, over);
  TL_CHECK(fabs(q - lim) < 1e-3, "limit %+.1f: rests at %.6f, not at the limit", lim, q);
  TL_CHECK(umax_end < 1e-6, "limit %+.1f: still moving, |u| %.3e rad/s over the last 1 s", lim, umax_end);
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* ------------------------------------------------------------- talos */

/* Talos (44 joints with URDF Coulomb friction, limits, mimic grippers) in
 * free flight, PD kp 300, kd 10 holding its reference pose, 1 s at dt 1 ms:
 * limit, friction and mimic rows of the same DOFs are redundant (same or
 * dependent Jacobians), so impulses can trade between them without changing
 * the motion. Every solve must still converge within the 100-sweep default,
 * and the PD must hold the pose. */
static void talos(const char *path) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  int ok = tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "talos: setup failed: %s", err.message)) goto done;
  int nq = tl_system_nq(s), nv = tl_system_nv(s), nrow_max = 0, unconverged = 0, maxit = 0;
  double q[128], q0[128], u[128] = {0}, kp[128] = {0}, kd[128] = {0}, sweeps = 0, dev = 0;
  if (!TL_CHECK(nq <= 128 && nv <= 128, "talos: nq %d nv %d", nq, nv)) goto done;
  for (int k = 6; k < nv; k++) kp[k] = 300, kd[k] = 10;
  ok = tl_model_reference_q(tl_system_model(s), q0, nq, &err) == TL_OK;
  /* start with every mimic joint 0.05 rad off its relation: the first
   * solves must pull them back (an equality group, solved exactly) */
  const tl_model *tm = tl_system_model(s);
  double qs[128];
  memcpy(qs, q0, sizeof(double) * (size_t)nq);
  int nmimic = 0, first_sweeps = 0;
  for (int b = 0; b < tl_model_nbody(tm) && ok; b++) {
    int iu = tl_model_joint_u_index(tm, b);
    int followed = -1;
    if (tl_model_joint_type(tm, b) == TL_JOINT_REVOLUTE && tl_model_dof_mimic(tm, iu, &followed, NULL, NULL, NULL) == TL_OK &&
        followed >= 0) {
      qs[tl_model_joint_q_index(tm, b)] += 0.05;
      nmimic++;
    }
  }
  ok = ok && tl_system_set_state(s, qs, nq, u, nv, &err) == TL_OK &&
       tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK &&
       tl_system_set_pd_targets(s, q0, nq, u, nv, &err) == TL_OK;
  const int nstep = 1000;
  for (int i = 0; i < nstep && ok; i++) {
    tl_solver_stats st;
    ok = tl_world_step(w, &err) == TL_OK && tl_world_solver_stats(w, &st, &err) == TL_OK &&
         tl_system_get_state(s, q, nq, u, nv, &err) == TL_OK;
    unconverged += !st.converged;
    if (i == 0) first_sweeps = st.iterations;
    sweeps += st.iterations;
    maxit = st.iterations > maxit ? st.iterations : maxit;
    nrow_max = st.nrow > nrow_max ? st.nrow : nrow_max;
    if (i >= 100)
      for (int k = 7; k < nq; k++) dev = fmax(dev, fabs(q[k] - q0[k]));
  }
  double mim = 0; /* largest mimic relation error at the end */
  for (int b = 0; b < tl_model_nbody(tm); b++) {
    int iu = tl_model_joint_u_index(tm, b), j = -1;
    double mult, off;
    if (tl_model_joint_type(tm, b) != TL_JOINT_REVOLUTE || tl_model_dof_mimic(tm, iu, &j, &mult, &off, NULL) != TL_OK ||
        j < 0)
      continue;
    for (int c = 0; c < tl_model_nbody(tm); c++)
      if (tl_model_joint_u_index(tm, c) == j)
        mim = fmax(mim, fabs(q[tl_model_joint_q_index(tm, b)] - mult * q[tl_model_joint_q_index(tm, c)] - off));
  }
  printf("talos in free flight, 1 s, %d mimic joints started 0.05 rad off their relation: up to %d joint "
         "rows, first solve %d sweeps, %.1f sweeps per solve on average, %d at most, %d of %d solves "
         "unconverged, mimic error at the end %.3e rad, max joint deviation from the PD target after 0.1 s "
         "%.3e rad\n",
         nmimic, nrow_max, first_sweeps, sweeps / nstep, maxit, unconverged, nstep, mim, dev);
  TL_CHECK(nmimic >= 6, "talos: only %d mimic joints", nmimic);
  TL_CHECK(mim < 1e-4, "talos: mimic relation off by %.3e rad at the end", mim);
  TL_CHECK(ok, "talos: step failed: %s", err.message);
  TL_CHECK(nrow_max >= 40, "talos: only %d joint rows (friction rows expected)", nrow_max);
  TL_CHECK(unconverged == 0, "talos: %d of %d solves did not converge in 100 sweeps", unconverged, nstep);
  TL_CHECK(dev < 0.05, "talos: joints left their PD targets by %.3e rad", dev);
done:
  tl_world_free(w);
  tl_model_free(m);
}

static const char *mimic_urdf =
    "<robot name='mimic'>"
    " <link name='world'/>"
    " <joint name='fix' type='fixed'><parent link='world'/><child link='base'/></joint>"
    " <link name='base'><inertial><mass value='1'/>"
    "  <inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='j1' type='revolute'><parent link='base'/><child link='a1'/>"
    "  <origin xyz='0 0.2 0'/><axis xyz='0 1 0'/>"
    "  <limit lower='-3' upper='3' effort='100' velocity='10'/></joint>"
    " <link name='a1'><inertial><origin xyz='0.4 0 0'/><mass value='1'/>"
    "  <inertia ixx='0.001' iyy='0.001' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='j2' type='revolute'><parent link='base'/><child link='a2'/>"
    "  <origin xyz='0 -0.2 0'/><axis xyz='0 1 0'/>"
    "  <limit lower='-3' upper='3' effort='100' velocity='10'/>"
    "  <mimic joint='j1' multiplier='-0.5' offset='0.1'/></joint>"
    " <link name='a2'><inertial><origin xyz='0.3 0 0'/><mass value='0.5'/>"
    "  <inertia ixx='0.001' iyy='0.001' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

static void mimic_pair(void) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_model_load_urdf_string(mimic_urdf, strlen(mimic_urdf), "mimic", NULL, &m, &err) ==
                    TL_OK,
                "mimic URDF: %s", err.message))
    return;
  int followed = -1;
  double mult = 0, offset = 0;
  int b1 = tl_model_body_index(m, "a1"), b2 = tl_model_body_index(m, "a2");
  int d1 = tl_model_joint_u_index(m, b1), d2 = tl_model_joint_u_index(m, b2);
  if (tl_model_dof_mimic(m, d2, &followed, &mult, &offset, NULL) != TL_OK || followed < 0) {
    tl_test_skip("mimic: the URDF loader does not report <mimic> on j2 (tl_model_dof_mimic: none): "
                 "mimic pair not tested");
    tl_model_free(m);
    return;
  }
  TL_CHECK(followed == d1 && mult == -0.5 && offset == 0.1,
           "mimic: tl_model_dof_mimic gives follow %d (expected %d), mult %g, offset %g", followed, d1,
           mult, offset);
  int ok = tl_world_create(&w, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "mimic setup: %s", err.message)) goto done;
  double q[2], u[2] = {0, 0}, worst = 0, q1min = INFINITY, q1max = -INFINITY;
  q[d1] = 0.3;
  q[d2] = -0.5 * 0.3 + 0.1;
  ok = tl_system_set_state(s, q, 2, u, 2, &err) == TL_OK;
  for (int i = 0; i < 3000 && ok; i++) {
    ok = tl_world_step(w, &err) == TL_OK && tl_system_get_state(s, q, 2, u, 2, &err) == TL_OK;
    worst = fmax(worst, fabs(q[d2] - (-0.5 * q[d1] + 0.1)));
    q1min = fmin(q1min, q[d1]);
    q1max = fmax(q1max, q[d1]);
  }
  printf("mimic q2 = -0.5 q1 + 0.1: 3 s swinging, q1 in [%.4f, %.4f] rad, max |q2 - (-0.5 q1 + 0.1)| "
         "%.3e rad\n",
         q1min, q1max, worst);
  TL_CHECK(ok, "mimic: step failed: %s", err.message);
  TL_CHECK(q1max - q1min > 0.1, "mimic: the pair did not swing (q1 range %.3g)", q1max - q1min);
  TL_CHECK(worst < 1e-4, "mimic relation violated by %.3e rad", worst);
done:
  tl_world_free(w);
  tl_model_free(m);
}

/* ------------------------------------------------------------ robots */

static double terrain(double x, double y) {
  return 0.025 * (0.6 * sin(2 * PI * x / 0.45 + 0.3) * cos(2 * PI * y / 0.6) +
                  0.4 * sin(2 * PI * (x + y) / 0.35));
}

static int file_exists(const char *path) {
  FILE *f = fopen(path, "r");
  if (f) fclose(f);
  return f != NULL;
}

/* Lowest point of every collision geom (primitives: exact AABB; meshes: hull
 * vertices); returns INFINITY if none; *nhull_missing counts mesh geoms
 * without a hull. */
static double lowest_point(tl_system *s, int *nhull_missing) {
  const tl_model *m = tl_system_model(s);
  double minz = INFINITY;
  *nhull_missing = 0;
  for (int g = 0; g < tl_model_ngeom(m); g++) {
    tl_geom_type type;
    int body;
    double size[3], p[3], R[9];
    tl_model_geom(m, g, &type, &body, size, p, R, NULL);
    if (type != TL_GEOM_MESH) {
      double lo[3], hi[3];
      if (tl_system_geom_aabb(s, g, lo, hi, NULL) == TL_OK) minz = fmin(minz, lo[2]);
      continue;
    }
    int nv, nf;
    const double *v;
    const int *f;
    if (tl_model_geom_hull(m, g, &nv, &v, &nf, &f, NULL) != 0) {
      ++*nhull_missing;
      continue;
    }
    double gp[3], gR[9];
    tl_system_geom_pose(s, g, gp, gR, NULL);
    for (int i = 0; i < nv; i++)
      minz = fmin(minz, gp[2] + gR[6] * v[3 * i] + gR[7] * v[3 * i + 1] + gR[8] * v[3 * i + 2]);
  }
  return minz;
}

typedef struct run_result {
  int ok, steps;
  double zmin, zmax;           /* base height over the measured window */
  double zmin_all;             /* over the whole run */
  double max_depth;
  int bad_link, bad_other;     /* contacts on non-foot links / with an unexpected object */
  char first_bad[160];
  int ncontact_end;
  double load;                 /* total normal impulse at the end / (m g dt) */
} run_result;

/* Run a robot standing for t_end s; contacts must be on links containing
 * foot_tag (NULL: any) and with static geom `support` (-1: any). */
static run_result stand_run(tl_world *w, tl_system *s, tl_stand_controller *ctrl, double t_end,
                            double window, const char *foot_tag, int support) {
  run_result r;
  memset(&r, 0, sizeof r);
  r.zmin = r.zmin_all = INFINITY;
  r.zmax = -INFINITY;
  r.ok = 1;
  const tl_model *m = tl_system_model(s);
  int nq = tl_system_nq(s), nv = tl_system_nv(s), nstep = (int)lround(t_end / DT);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  if (!q || !u) exit(2);
  for (int i = 1; i <= nstep; i++) {
    if (tl_world_integrate1(w, &err) != TL_OK || tl_stand_update(ctrl, &err) != TL_OK ||
        tl_world_integrate2(w, &err) != TL_OK) {
      r.ok = 0;
      printf("step %d failed: %s\n", i, err.message);
      break;
    }
    r.steps = i;
    tl_system_get_state(s, q, nq, u, nv, NULL);
    int finite = 1;
    for (int k = 0; k < nq; k++) finite &= isfinite(q[k]);
    if (!finite) {
      r.ok = 0;
      printf("non-finite state at step %d\n", i);
      break;
    }
    r.zmin_all = fmin(r.zmin_all, q[2]);
    if (i * DT > t_end - window + 0.5 * DT) {
      r.zmin = fmin(r.zmin, q[2]);
      r.zmax = fmax(r.zmax, q[2]);
    }
    double total_n = 0;
    int nc = tl_world_ncontact(w);
    for (int k = 0; k < nc; k++) {
      tl_contact_info c;
      if (tl_world_contact(w, k, &c, NULL) != TL_OK) continue;
      r.max_depth = fmax(r.max_depth, c.depth);
      total_n += c.impulse[2];
      const char *link = tl_model_geom_link(m, c.geom);
      int bad_l = foot_tag && (!link || !strstr(link, foot_tag));
      int bad_o = support >= 0 && c.depth > 0 && (c.other_system != -1 || c.other_geom != support);
      if ((bad_l || bad_o) && !r.bad_link && !r.bad_other)
        snprintf(r.first_bad, sizeof r.first_bad, "t = %.3f s, link %s, other system %d geom %d",
                 i * DT, link ? link : "?", c.other_system, c.other_geom);
      r.bad_link += bad_l;
      r.bad_other += bad_o;
    }
    r.ncontact_end = nc;
    r.load = total_n / (tl_model_total_mass(m) * 9.81 * DT);
  }
  free(q);
  free(u);
  return r;
}

/* ANYmal C on (a) terrain, (b) a box. */
static void anymal(const char *path, int on_box) {
  const char *label = on_box ? "ANYmal C on a 1 x 1 x 0.2 m box" : "ANYmal C on heightmap terrain";
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_stand_controller ctrl;
  memset(&ctrl, 0, sizeof ctrl);
  int ok = tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK;
  int support = -1;
  double top = 0; /* highest support point under the robot */
  if (ok && on_box) {
    double size[3] = {1, 1, 0.2}, pos[3] = {0, 0, 0.1};
    ok = tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
         tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, NULL, NULL, &support, &err) == TL_OK;
    top = 0.2;
  } else if (ok) {
    enum { NX = 61, NY = 61 };
    static double h[NX * NY];
    const double x0 = -1.5, y0 = -1.5, d = 0.05;
    double hmin = INFINITY;
    for (int iy = 0; iy < NY; iy++)
      for (int ix = 0; ix < NX; ix++) {
        h[iy * NX + ix] = terrain(x0 + ix * d, y0 + iy * d);
        top = fmax(top, h[iy * NX + ix]);
        hmin = fmin(hmin, h[iy * NX + ix]);
      }
    printf("terrain: 61 x 61 heights, 5 cm spacing, from %.4f to %.4f m\n", hmin, top);
    ok = tl_world_add_heightmap(w, NX, NY, x0, y0, d, d, h, NX * NY, NULL, &support, &err) == TL_OK;
  }
  ok = ok && tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "%s: setup failed: %s", label, err.message)) goto done;
  int nq = tl_model_nq(m), nv = tl_model_nv(m), nmiss;
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  if (!q || !u) exit(2);
  tl_system_get_state(s, q, nq, u, nv, NULL);
  q[2] += top + 0.01 - lowest_point(s, &nmiss);
  ok = tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK &&
       tl_stand_init(&ctrl, s, NULL, 0, 300.0, 10.0, &err) == TL_OK;
  double z0 = q[2];
  free(q);
  free(u);
  if (!TL_CHECK(ok, "%s: set_state / stand: %s", label, err.message)) goto done;
  run_result r = stand_run(w, s, &ctrl, 3.0, 2.5, "FOOT", on_box ? support : -1);
  printf("%s: start z %.4f m, base z over the last 2.5 s in [%.4f, %.4f] m (band %.2e m), lowest "
         "%.4f m, max penetration %.2e m, %d contacts at the end carrying %.4f m g, %d non-foot "
         "contacts, %d contacts with something other than the support%s%s\n",
         label, z0, r.zmin, r.zmax, r.zmax - r.zmin, r.zmin_all, r.max_depth, r.ncontact_end, r.load,
         r.bad_link, r.bad_other, r.first_bad[0] ? "; first: " : "", r.first_bad);
  TL_CHECK(r.ok, "%s: diverged or a step failed after %d steps", label, r.steps);
  TL_CHECK(r.zmax - r.zmin < 0.03, "%s: base height band %.4f m over the last 2.5 s", label, r.zmax - r.zmin);
  TL_CHECK(r.zmin_all > top + 0.3, "%s: base sank to %.4f m (support top %.3f m)", label, r.zmin_all, top);
  TL_CHECK(r.max_depth < 1e-3, "%s: a foot penetrated %.3e m (released 1 cm above the support)", label,
           r.max_depth);
  TL_CHECK(r.bad_link == 0, "%s: %d contacts on non-foot links (%s)", label, r.bad_link, r.first_bad);
  TL_CHECK(r.bad_other == 0, "%s: %d contacts with something other than the box (%s)", label,
           r.bad_other, r.first_bad);
  TL_CHECK(r.ncontact_end >= 4 && fabs(r.load - 1) < 0.05, "%s: %d contacts carry %.4f m g at the end",
           label, r.ncontact_end, r.load);
done:
  tl_stand_free(&ctrl);
  tl_world_free(w);
  tl_model_free(m);
}

static void solo12(const char *path) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_stand_controller ctrl;
  memset(&ctrl, 0, sizeof ctrl);
  int ok = tl_model_load_urdf(path, NULL, &m, &err) == TL_OK;
  if (!TL_CHECK(ok, "solo12: load failed: %s", err.message)) return;
  int nmesh = 0, nhull = 0;
  for (int g = 0; g < tl_model_ngeom(m); g++) {
    tl_geom_type type;
    int body, nv, nf;
    double size[3], p[3], R[9];
    const double *v;
    const int *f;
    tl_model_geom(m, g, &type, &body, size, p, R, NULL);
    if (type != TL_GEOM_MESH) continue;
    nmesh++;
    if (tl_model_geom_hull(m, g, &nv, &v, &nf, &f, NULL) == 0 && nv >= 4) nhull++;
  }
  printf("solo12: %d geoms, %d meshes, %d with a convex hull, %.3f kg\n", tl_model_ngeom(m), nmesh,
         nhull, tl_model_total_mass(m));
  if (nmesh == 0 || nhull < nmesh) {
    tl_test_skip("solo12: %d of %d collision meshes have no convex hull (the loader's hulls are "
                 "missing): mesh geoms cannot collide, standing not tested",
                 nmesh - nhull, nmesh);
    tl_model_free(m);
    return;
  }
  ok = tl_world_create(&w, &err) == TL_OK && tl_world_set_timestep(w, DT, &err) == TL_OK &&
       tl_world_add_ground(w, 0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK;
  if (!TL_CHECK(ok, "solo12: setup failed: %s", err.message)) goto done;
  int nq = tl_model_nq(m), nv = tl_model_nv(m), nmiss;
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  if (!q || !u) exit(2);
  tl_system_get_state(s, q, nq, u, nv, NULL);
  q[2] += 0.01 - lowest_point(s, &nmiss);
  ok = tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK &&
       tl_stand_init(&ctrl, s, NULL, 0, 3.0, 0.1, &err) == TL_OK;
  double z0 = q[2];
  free(q);
  free(u);
  if (!TL_CHECK(ok, "solo12: set_state / stand: %s", err.message)) goto done;
  run_result r = stand_run(w, s, &ctrl, 3.0, 2.5, NULL, -1);
  /* which links touch at the end */
  char links[512] = "";
  for (int k = 0; k < tl_world_ncontact(w); k++) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) != TL_OK) continue;
    const char *l = tl_model_geom_link(m, c.geom);
    if (l && !strstr(links, l) && strlen(links) + strlen(l) + 2 < sizeof links) {
      strcat(links, " ");
      strcat(links, l);
    }
  }
  printf("solo12 on flat ground (kp 3, kd 0.1): start z %.4f m, base z over the last 2.5 s in "
         "[%.4f, %.4f] m, lowest %.4f m, max penetration %.2e m, %d contacts at the end (links:%s) "
         "carrying %.4f m g\n",
         z0, r.zmin, r.zmax, r.zmin_all, r.max_depth, r.ncontact_end, links, r.load);
  TL_CHECK(r.ok, "solo12: diverged or a step failed after %d steps", r.steps);
  TL_CHECK(r.zmin_all > 0.1, "solo12: base fell to %.4f m", r.zmin_all);
  TL_CHECK(r.max_depth < 1e-3, "solo12: penetration %.3e m", r.max_depth);
  TL_CHECK(r.ncontact_end > 0 && fabs(r.load - 1) < 0.05, "solo12: %d contacts carry %.4f m g at the end",
           r.ncontact_end, r.load);
done:
  tl_stand_free(&ctrl);
  tl_world_free(w);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s limits|anymal|solo12|talos [SHARED_DIR]\n", argv[0]);
    return 2;
  }
  const char *group = argv[1];
  if (!strcmp(group, "limits")) {
    limit_hold(1, 0);
    limit_hold(-1, 0);
    limit_hold(1, 0.5);
    limit_hold(-1, 0.5);
    mimic_pair();
    return tl_test_finish();
  }
  if (strcmp(group, "anymal") && strcmp(group, "solo12") && strcmp(group, "talos")) {
    fprintf(stderr, "unknown group '%s'\n", group);
    return 2;
  }
  const char *shared = tl_test_shared_dir(argc, argv, 2);
  char path[4096];
  snprintf(path, sizeof path, "%s/robots/%s", shared ? shared : "",
           !strcmp(group, "anymal")  ? "anymal_c/urdf/anymal.urdf"
           : !strcmp(group, "talos") ? "talos/robots/talos_full_v2.urdf"
                                     : "solo12/robots/solo12.urdf");
  if (!shared || !file_exists(path)) {
    printf("SKIPPED: %s not found (shared robot corpus absent)\n", path);
    return TL_TEST_SKIP_CODE;
  }
  if (!strcmp(group, "anymal")) {
    anymal(path, 0);
    anymal(path, 1);
  } else if (!strcmp(group, "talos")) {
    talos(path);
  } else {
    solo12(path);
  }
  return tl_test_finish();
}
