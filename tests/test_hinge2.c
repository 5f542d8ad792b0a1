/* Guards: urdf/urdf_parse.c and urdf/urdf_compile.c (the hinge2 joint, issue 23 §2), robots/hinge2_car.
 * The hinge2 URDF extension (ODE's hinge-2), one mode each:
 *   parse       robots/hinge2_car: nq / nv / bodies (12 DOF rigid, 14 with <suspension>), the
 *               compiled joint names (NAME steering, NAME_wheel, NAME_suspension) and types, the
 *               massless intermediate bodies, frames (one per URDF joint, NAME on the child link's
 *               body), the steering limits on the steering DOF only;
 *   kinematics  a car with a tilted steering axis (kingpin) and a wheel axis not perpendicular to
 *               it, with suspension: M, h, point and frame Jacobians equal to 1e-12 those of the
 *               hand-built chain prismatic + revolute + continuous through massless links, and the
 *               child link's world pose equal to the closed form
 *               base * origin * Trans(a1 s) * Rot(a1, steer) * Rot(a2, wheel) to 1e-12;
 *   derivatives forward-dynamics derivatives (q, u, tau) against central finite differences
 *               (relative 1e-6) at a random state of that car;
 *   suspension  a wheel of mass m on a fixed post, suspension stiffness k, no damping, no gravity:
 *               the oscillation's angular frequency within 1 % of sqrt(k / m) (10 periods);
 *               with damping c the amplitude decays as exp(-c t / (2 m)) (within 5 %);
 *   limit       a steering torque of +-20 N m against <limit lower=-0.5 upper=0.5>: the steering
 *               angle reaches the limit and never passes it by more than 2 mrad;
 *   ode         the ODE plugin's dJointHinge2 (exit 77 when the plugin is absent): on the sprung car
 *               standing still, each front suspension's sag equals the native engine's within 2 %
 *               (ODE's suspension ERP / CFM from stiffness and damping); the steering PD holds its
 *               target (signs of ODE's axis-1 motor); a +-20 N m steering torque stops at the
 *               steering limit (ODE's stops) within 2 mrad; on MuJoCo (when present) the sag
 *               equals the native engine's within 2 % too;
 *   record      a recording of the sprung car (tl_recorder, HTML): every compiled joint listed by
 *               name (front_left_suspension prismatic, front_left, front_left_wheel revolute) and
 *               frames taken while it drives;
 *   bad         missing <axis2>, zero <axis> / <axis2>, <axis2> parallel to <axis>, negative or
 *               missing suspension stiffness, negative damping, <mimic> on a hinge2, a joint named
 *               like a compiled one: refused with FILE:LINE naming the element's line.
 * Usage: test_hinge2 MODE ROBOTS_DIR. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/talus.h"

static int failures = 0;
#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      failures++;                                         \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);         \
      printf(__VA_ARGS__);                                \
      printf("\n");                                       \
    }                                                     \
  } while (0)

static void die(const tl_error *e) {
  printf("FAIL: %s\n", e->message);
  exit(1);
}

static int joint_body(const tl_model *m, const char *name) {
  for (int b = 0; b < tl_model_nbody(m); b++)
    if (strcmp(tl_model_joint_name(m, b), name) == 0) return b;
  return -1;
}

static tl_model *load_file(const char *dir, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/hinge2_car/%s", dir, file);
  tl_model *m = NULL;
  tl_error e;
  if (tl_model_load_urdf(path, NULL, &m, &e)) die(&e);
  return m;
}

static tl_model *load_text(const char *text, tl_base_type base) {
  tl_load_options o = tl_load_options_default();
  o.base = base;
  tl_model *m = NULL;
  tl_error e;
  if (tl_model_load_urdf_string(text, strlen(text), "test.urdf", &o, &m, &e)) die(&e);
  return m;
}

static tl_model *load_text(const char *text, tl_base_type base);
static tl_system *make_system(tl_world **w, tl_model *m);
static void random_state(int nq, int nv, double *q, double *u, unsigned seed);
static double maxdiff(const double *a, const double *b, int n);

/* ------------------------------------------------------------------ parse */

static void check_car(const char *dir, const char *file, int susp) {
  tl_model *m = load_file(dir, file);
  int n = susp ? 3 : 2;
  CHECK(tl_model_nv(m) == 6 + 2 * n + 2 && tl_model_nq(m) == 7 + 2 * n + 2, "%s: nq %d nv %d", file,
        tl_model_nq(m), tl_model_nv(m));
  CHECK(tl_model_nbody(m) == 1 + 2 * n + 2, "%s: %d bodies", file, tl_model_nbody(m));
  CHECK(tl_model_nframe(m) == 5, "%s: %d frames, expected ROOT and one per URDF joint", file, tl_model_nframe(m));
  const char *sides[2] = {"front_left", "front_right"}, *wheels[2] = {"fl_wheel", "fr_wheel"};
  for (int s = 0; s < 2; s++) {
    char name[64];
    int bs = joint_body(m, sides[s]);
    snprintf(name, sizeof name, "%s_wheel", sides[s]);
    int bw = joint_body(m, name);
    snprintf(name, sizeof name, "%s_suspension", sides[s]);
    int bz = joint_body(m, name);
    CHECK(bs > 0 && bw > 0, "%s: no joints %s / %s_wheel", file, sides[s], sides[s]);
    CHECK((bz > 0) == susp, "%s: joint %s_suspension %s", file, sides[s], bz > 0 ? "present" : "absent");
    if (bs <= 0 || bw <= 0) continue;
    CHECK(tl_model_joint_type(m, bs) == TL_JOINT_REVOLUTE && tl_model_joint_type(m, bw) == TL_JOINT_REVOLUTE,
          "%s: steering / wheel types", file);
    CHECK(tl_model_body_parent(m, bw) == bs, "%s: the wheel's parent is the steering body", file);
    CHECK(strcmp(tl_model_body_name(m, bw), wheels[s]) == 0, "%s: wheel body '%s'", file, tl_model_body_name(m, bw));
    CHECK(tl_model_body_mass(m, bs) == 0 && fabs(tl_model_body_mass(m, bw) - 1.0) < 1e-15,
          "%s: masses %g %g", file, tl_model_body_mass(m, bs), tl_model_body_mass(m, bw));
    if (susp) {
      CHECK(tl_model_joint_type(m, bz) == TL_JOINT_PRISMATIC && tl_model_body_parent(m, bs) == bz &&
                tl_model_body_parent(m, bz) == 0 && tl_model_body_mass(m, bz) == 0,
            "%s: suspension body", file);
    } else {
      CHECK(tl_model_body_parent(m, bs) == 0, "%s: steering body on the chassis", file);
    }
    double lo, hi;
    tl_model_dof_limits(m, tl_model_joint_u_index(m, bs), &lo, &hi, NULL);
    CHECK(lo == -0.6 && hi == 0.6, "%s: steering limits %g %g", file, lo, hi);
    tl_model_dof_limits(m, tl_model_joint_u_index(m, bw), &lo, &hi, NULL);
    CHECK(isinf(lo) && isinf(hi), "%s: wheel limits %g %g", file, lo, hi);
    int f = tl_model_frame_index(m, sides[s]);
    CHECK(f > 0 && tl_model_frame_body(m, f) == bw && strcmp(tl_model_frame_link(m, f), wheels[s]) == 0,
          "%s: frame %s", file, sides[s]);
    CHECK(tl_model_body_index(m, wheels[s]) == bw, "%s: link %s", file, wheels[s]);
  }
  CHECK(fabs(tl_model_total_mass(m) - 24.0) < 1e-12, "%s: total mass %g", file, tl_model_total_mass(m));
  /* export: written back as hinge2 joints, reloaded to the same model (names, M at a state) */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  tl_error e;
  if (!f || tl_model_export_urdf_file(m, f, &e)) die(&e);
  fclose(f);
  int nh2 = 0;
  for (const char *t = text; (t = strstr(t, "type=\"hinge2\"")); t++) nh2++;
  CHECK(nh2 == 2 && (strstr(text, "<suspension") != NULL) == susp, "%s: export has %d hinge2 joints", file, nh2);
  tl_model *r = load_text(text, TL_BASE_FLOATING);
  free(text);
  CHECK(tl_model_nbody(r) == tl_model_nbody(m) && tl_model_nv(r) == tl_model_nv(m), "%s: export reloaded", file);
  if (tl_model_nbody(r) == tl_model_nbody(m)) {
    for (int b = 0; b < tl_model_nbody(m); b++)
      CHECK(!strcmp(tl_model_joint_name(r, b), tl_model_joint_name(m, b)) &&
                !strcmp(tl_model_body_name(r, b), tl_model_body_name(m, b)),
            "%s: body %d after export: %s / %s", file, b, tl_model_joint_name(r, b), tl_model_body_name(r, b));
    tl_world *w1, *w2;
    tl_system *s1 = make_system(&w1, m), *s2 = make_system(&w2, r);
    int nq = tl_model_nq(m), nv = tl_model_nv(m);
    double q[32], u[32], M1[32 * 32], M2[32 * 32], lo1, hi1, lo2, hi2;
    random_state(nq, nv, q, u, 3u);
    tl_system_set_state(s1, q, nq, u, nv, NULL), tl_system_set_state(s2, q, nq, u, nv, NULL);
    tl_system_mass_matrix(s1, M1, nv, NULL), tl_system_mass_matrix(s2, M2, nv, NULL);
    CHECK(maxdiff(M1, M2, nv * nv) < 1e-12, "%s: M after export differs by %g", file, maxdiff(M1, M2, nv * nv));
    for (int k = 0; k < nv; k++) {
      tl_model_dof_limits(m, k, &lo1, &hi1, NULL), tl_model_dof_limits(r, k, &lo2, &hi2, NULL);
      CHECK(lo1 == lo2 && hi1 == hi2, "%s: DOF %d limits after export", file, k);
    }
    tl_world_free(w1), tl_world_free(w2);
  }
  tl_model_free(r);
  tl_model_free(m);
}

static void test_parse(const char *dir) {
  check_car(dir, "hinge2_car.urdf", 0);
  check_car(dir, "hinge2_car_suspension.urdf", 1);
}

/* -------------------------------------------------------- kinematics (and derivatives) */

/* A floating chassis with one hinge2 wheel (tilted kingpin a1, wheel axis a2
 * not perpendicular to it, <suspension>), and a plain second wheel. %s: the
 * front joint(s). */
static const char *car_fmt =
    "<robot name=\"h2\">\n"
    "<link name=\"chassis\"><inertial><origin xyz=\"0.05 0.01 -0.02\"/><mass value=\"5\"/>"
    "<inertia ixx=\"0.2\" ixy=\"0.01\" ixz=\"0\" iyy=\"0.4\" iyz=\"0.02\" izz=\"0.5\"/></inertial></link>\n"
    "<link name=\"wheel\"><inertial><origin xyz=\"0.01 0.02 0.005\" rpy=\"0.1 0.2 0.3\"/><mass value=\"1.3\"/>"
    "<inertia ixx=\"0.004\" ixy=\"0.0002\" ixz=\"0.0001\" iyy=\"0.007\" iyz=\"0\" izz=\"0.005\"/></inertial></link>\n"
    "<link name=\"rear\"><inertial><mass value=\"0.8\"/>"
    "<inertia ixx=\"0.002\" ixy=\"0\" ixz=\"0\" iyy=\"0.003\" iyz=\"0\" izz=\"0.002\"/></inertial></link>\n"
    "%s"
    "<joint name=\"rj\" type=\"continuous\"><parent link=\"chassis\"/><child link=\"rear\"/>"
    "<origin xyz=\"-0.4 0.3 -0.05\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "</robot>\n";
#define ORIGIN "<origin xyz=\"0.4 0.3 -0.05\" rpy=\"0.05 -0.1 0.2\"/>"
#define A1 "0.1 -0.25 1"
#define A2 "0.15 1 0.2"
static const char *h2_joint =
    "<joint name=\"fj\" type=\"hinge2\"><parent link=\"chassis\"/><child link=\"wheel\"/>" ORIGIN
    "<axis xyz=\"" A1 "\"/><axis2 xyz=\"" A2 "\"/><limit lower=\"-0.7\" upper=\"0.7\"/>"
    "<suspension stiffness=\"3000\" damping=\"40\"/></joint>\n";
static const char *chain_joints =
    "<link name=\"s\"/><link name=\"st\"/>\n"
    "<joint name=\"fj_suspension\" type=\"prismatic\"><parent link=\"chassis\"/><child link=\"s\"/>" ORIGIN
    "<axis xyz=\"" A1 "\"/></joint>\n"
    "<joint name=\"fj\" type=\"revolute\"><parent link=\"s\"/><child link=\"st\"/><axis xyz=\"" A1 "\"/>"
    "<limit lower=\"-0.7\" upper=\"0.7\"/></joint>\n"
    "<joint name=\"fj_wheel\" type=\"continuous\"><parent link=\"st\"/><child link=\"wheel\"/>"
    "<axis xyz=\"" A2 "\"/></joint>\n";

static tl_model *car_model(int chain) {
  char text[8192];
  snprintf(text, sizeof text, car_fmt, chain ? chain_joints : h2_joint);
  return load_text(text, TL_BASE_FLOATING);
}

static void random_state(int nq, int nv, double *q, double *u, unsigned seed) {
  srand(seed);
  for (int i = 0; i < nq; i++) q[i] = 2.0 * rand() / RAND_MAX - 1.0;
  double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
  for (int i = 3; i < 7; i++) q[i] /= n;
  for (int i = 0; i < nv; i++) u[i] = 4.0 * rand() / RAND_MAX - 2.0;
}

static tl_system *make_system(tl_world **w, tl_model *m) {
  tl_system *s = NULL;
  tl_error e;
  if (tl_world_create(w, &e) || tl_world_add_system(*w, m, &s, &e)) die(&e);
  return s;
}

static void rot_axis(double R[9], const double a[3], double t) { /* Rodrigues */
  double c = cos(t), s = sin(t), v = 1 - c;
  R[0] = c + a[0] * a[0] * v, R[1] = a[0] * a[1] * v - a[2] * s, R[2] = a[0] * a[2] * v + a[1] * s;
  R[3] = a[1] * a[0] * v + a[2] * s, R[4] = c + a[1] * a[1] * v, R[5] = a[1] * a[2] * v - a[0] * s;
  R[6] = a[2] * a[0] * v - a[1] * s, R[7] = a[2] * a[1] * v + a[0] * s, R[8] = c + a[2] * a[2] * v;
}
static void mul3(double C[9], const double A[9], const double B[9]) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, T, sizeof T);
}
static void mulv(double y[3], const double A[9], const double x[3]) {
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
  memcpy(y, t, sizeof t);
}
static void unit(double a[3], double x, double y, double z) {
  double n = sqrt(x * x + y * y + z * z);
  a[0] = x / n, a[1] = y / n, a[2] = z / n;
}
static void rpy(double R[9], double r, double p, double y) { /* URDF: Rz(y) Ry(p) Rx(r) */
  double X[9], Y[9], Z[9], ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
  rot_axis(X, ex, r), rot_axis(Y, ey, p), rot_axis(Z, ez, y);
  mul3(R, Z, Y);
  mul3(R, R, X);
}

static double maxdiff(const double *a, const double *b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

static void test_kinematics(void) {
  tl_model *mh = car_model(0), *mc = car_model(1);
  int nq = tl_model_nq(mh), nv = tl_model_nv(mh);
  CHECK(nq == 11 && nv == 10 && tl_model_nq(mc) == nq && tl_model_nv(mc) == nv, "sizes %d %d", nq, nv);
  for (int b = 0; b < tl_model_nbody(mh); b++)
    CHECK(strcmp(tl_model_joint_name(mh, b), tl_model_joint_name(mc, b)) == 0 &&
              tl_model_joint_type(mh, b) == tl_model_joint_type(mc, b),
          "body %d: joint %s vs %s", b, tl_model_joint_name(mh, b), tl_model_joint_name(mc, b));
  tl_world *wh, *wc;
  tl_system *sh = make_system(&wh, mh), *sc = make_system(&wc, mc);
  tl_error e;
  double *q = calloc((size_t)nq, 8), *u = calloc((size_t)nv, 8), *A = calloc((size_t)(nv * nv), 8),
         *B = calloc((size_t)(nv * nv), 8), *Jh = calloc((size_t)(6 * nv), 8), *Jc = calloc((size_t)(6 * nv), 8);
  double a1[3], a2[3], Ro[9], po[3] = {0.4, 0.3, -0.05};
  unit(a1, 0.1, -0.25, 1), unit(a2, 0.15, 1, 0.2);
  rpy(Ro, 0.05, -0.1, 0.2);
  int bw = joint_body(mh, "fj_wheel"), fw = tl_model_frame_index(mh, "fj");
  CHECK(bw == 3 && fw > 0 && tl_model_frame_body(mh, fw) == bw, "wheel body %d frame %d", bw, fw);
  double worst = 0, worst_pose = 0;
  for (int trial = 0; trial < 20; trial++) {
    random_state(nq, nv, q, u, 100u + (unsigned)trial);
    if (tl_system_set_state(sh, q, nq, u, nv, &e) || tl_system_set_state(sc, q, nq, u, nv, &e)) die(&e);
    tl_system_mass_matrix(sh, A, nv, NULL), tl_system_mass_matrix(sc, B, nv, NULL);
    worst = fmax(worst, maxdiff(A, B, nv * nv));
    tl_system_nonlinear_term(sh, A, nv, NULL), tl_system_nonlinear_term(sc, B, nv, NULL);
    worst = fmax(worst, maxdiff(A, B, nv));
    double pt[3] = {0.3, -0.2, 0.1};
    tl_system_point_jacobian(sh, bw, pt, Jh, Jh + 3 * nv, nv, NULL);
    tl_system_point_jacobian(sc, bw, pt, Jc, Jc + 3 * nv, nv, NULL);
    worst = fmax(worst, maxdiff(Jh, Jc, 6 * nv));
    int fc = tl_model_frame_index(mc, "fj_wheel");
    tl_system_frame_jacobian(sh, fw, Jh, Jh + 3 * nv, nv, NULL);
    tl_system_frame_jacobian(sc, fc, Jc, Jc + 3 * nv, nv, NULL);
    worst = fmax(worst, maxdiff(Jh, Jc, 6 * nv));
    /* closed form of the child link's pose */
    double Rb[9], pb[3], R[9], p[3], T[9], x[3], Rf[9], pf[3];
    double qw = q[3], qx = q[4], qy = q[5], qz = q[6];
    double Rq[9] = {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy),
                    2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx),
                    2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)};
    memcpy(Rb, Rq, sizeof Rb), memcpy(pb, q, sizeof pb);
    mul3(R, Rb, Ro);
    mulv(p, Rb, po);
    for (int i = 0; i < 3; i++) p[i] += pb[i];
    mulv(x, R, a1);
    for (int i = 0; i < 3; i++) p[i] += q[7] * x[i]; /* suspension along a1 */
    rot_axis(T, a1, q[8]), mul3(R, R, T);
    rot_axis(T, a2, q[9]), mul3(R, R, T);
    if (tl_system_frame_pose(sh, fw, pf, Rf, &e)) die(&e);
    worst_pose = fmax(worst_pose, fmax(maxdiff(pf, p, 3), maxdiff(Rf, R, 9)));
  }
  printf("kinematics: hinge2 vs hand-built chain max |diff| %.3g (M, h, Jacobians); pose vs closed form %.3g\n",
         worst, worst_pose);
  CHECK(worst <= 1e-12, "hinge2 vs chain: %g", worst);
  CHECK(worst_pose <= 1e-12, "pose vs closed form: %g", worst_pose);
  free(q), free(u), free(A), free(B), free(Jh), free(Jc);
  tl_world_free(wh), tl_world_free(wc);
  tl_model_free(mh), tl_model_free(mc);
}

static void test_derivatives(void) {
  tl_model *m = car_model(0);
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  tl_world *w;
  tl_system *s = make_system(&w, m);
  tl_error e;
  double *q = calloc((size_t)nq, 8), *u = calloc((size_t)nv, 8), *tau = calloc((size_t)nv, 8),
         *qp = calloc((size_t)nq, 8), *dq = calloc((size_t)nv, 8), *ap = calloc((size_t)nv, 8),
         *am = calloc((size_t)nv, 8), *Dq = calloc((size_t)(nv * nv), 8), *Du = calloc((size_t)(nv * nv), 8),
         *Dt = calloc((size_t)(nv * nv), 8), *up = calloc((size_t)nv, 8);
  random_state(nq, nv, q, u, 7u);
  for (int i = 0; i < nv; i++) tau[i] = sin(1.0 + i);
  if (tl_system_set_state(s, q, nq, u, nv, &e) || tl_system_forward_dynamics_derivatives(s, tau, Dq, Du, Dt, nv, &e))
    die(&e);
  double h = 1e-6, worst = 0, scale = 1e-3;
  for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fmax(fabs(Dq[i]), fmax(fabs(Du[i]), fabs(Dt[i]))));
  for (int j = 0; j < nv; j++) {
    for (int which = 0; which < 3; which++) {
      for (int sg = -1; sg <= 1; sg += 2) {
        memcpy(up, u, (size_t)nv * 8);
        memset(dq, 0, (size_t)nv * 8);
        memcpy(qp, q, (size_t)nq * 8);
        double *t = calloc((size_t)nv, 8);
        memcpy(t, tau, (size_t)nv * 8);
        if (which == 0) dq[j] = sg * h, tl_model_integrate(m, q, nq, dq, nv, qp, NULL);
        if (which == 1) up[j] += sg * h;
        if (which == 2) t[j] += sg * h;
        if (tl_system_set_state(s, qp, nq, up, nv, &e) || tl_system_forward_dynamics(s, t, sg > 0 ? ap : am, nv, &e))
          die(&e);
        free(t);
      }
      const double *D = which == 0 ? Dq : which == 1 ? Du : Dt;
      for (int i = 0; i < nv; i++) worst = fmax(worst, fabs((ap[i] - am[i]) / (2 * h) - D[i * nv + j]) / scale);
    }
  }
  printf("derivatives: forward dynamics d/dq, d/du, d/dtau vs central differences: max relative error %.3g\n", worst);
  CHECK(worst < 1e-6, "forward dynamics derivatives vs finite differences: %g", worst);
  free(q), free(u), free(tau), free(qp), free(dq), free(ap), free(am), free(Dq), free(Du), free(Dt), free(up);
  tl_world_free(w);
  tl_model_free(m);
}

/* ------------------------------------------------------------ suspension */

static const char *post_fmt =
    "<robot name=\"post\">\n"
    "<link name=\"world\"/>\n"
    "<link name=\"wheel\"><inertial><mass value=\"%g\"/>"
    "<inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"
    "<joint name=\"hub\" type=\"hinge2\"><parent link=\"world\"/><child link=\"wheel\"/>\n"
    "<origin xyz=\"0 0 1\"/><axis xyz=\"0 0 1\"/><axis2 xyz=\"0 1 0\"/>\n"
    "<limit lower=\"-0.5\" upper=\"0.5\"/>\n"
    "<suspension stiffness=\"%g\" damping=\"%g\"/>\n"
    "</joint>\n"
    "</robot>\n";

static tl_system *post_system(tl_world **w, double mass, double k, double c, double dt, tl_model **out) {
  char text[4096];
  snprintf(text, sizeof text, post_fmt, mass, k, c);
  tl_model *m = load_text(text, TL_BASE_FIXED);
  tl_system *s = make_system(w, m);
  tl_error e;
  double g[3] = {0, 0, 0};
  if (tl_world_set_gravity(*w, g, &e) || tl_world_set_timestep(*w, dt, &e)) die(&e);
  *out = m;
  return s;
}

static void test_suspension(void) {
  const double mass = 2.0, k = 1000.0, dt = 1e-4;
  tl_world *w;
  tl_model *m;
  tl_system *s = post_system(&w, mass, k, 0.0, dt, &m);
  tl_error e;
  CHECK(tl_model_nv(m) == 3 && strcmp(tl_model_joint_name(m, 1), "hub_suspension") == 0, "post model");
  double q[3] = {0.01, 0.2, 0.0}, u[3] = {0, 0, 3.0}; /* steered, the wheel spinning */
  if (tl_system_set_state(s, q, 3, u, 3, &e)) die(&e);
  double prev = q[0], tprev = 0, first = NAN, last = NAN;
  int ncross = 0;
  for (int i = 0; i < 40000 && ncross < 11; i++) {
    if (tl_world_step(w, &e)) die(&e);
    tl_system_get_state(s, q, 3, u, 3, NULL);
    double t = tl_world_time(w);
    if (prev < 0 && q[0] >= 0) { /* upward zero crossing, interpolated */
      double tc = tprev + (t - tprev) * (-prev) / (q[0] - prev);
      if (ncross == 0) first = tc;
      last = tc;
      ncross++;
    }
    prev = q[0], tprev = t;
  }
  double omega = 6.283185307179586 * (ncross - 1) / (last - first), expect = sqrt(k / mass);
  printf("suspension: omega %.5f rad/s over %d periods, sqrt(k/m) %.5f (%+.3f %%)\n", omega, ncross - 1, expect,
         100 * (omega / expect - 1));
  CHECK(ncross == 11 && fabs(omega / expect - 1) < 0.01, "suspension frequency %g vs %g", omega, expect);
  tl_world_free(w);
  tl_model_free(m);

  /* damping: envelope exp(-c t / (2 m)); peaks of q over the first cycles */
  const double c = 8.0;
  s = post_system(&w, mass, k, c, dt, &m);
  double q2[3] = {0.01, 0, 0}, u2[3] = {0, 0, 0};
  if (tl_system_set_state(s, q2, 3, u2, 3, &e)) die(&e);
  double p0 = NAN, t0 = 0, p1 = NAN, t1 = 0, qm1 = 0.01, qm2 = 0.01;
  int npeak = 0;
  for (int i = 0; i < 40000 && npeak < 6; i++) {
    if (tl_world_step(w, &e)) die(&e);
    tl_system_get_state(s, q2, 3, u2, 3, NULL);
    if (qm1 > qm2 && qm1 >= q2[0] && qm1 > 0) { /* a maximum at the previous step */
      if (npeak == 0) p0 = qm1, t0 = tl_world_time(w) - dt;
      p1 = qm1, t1 = tl_world_time(w) - dt;
      npeak++;
    }
    qm2 = qm1, qm1 = q2[0];
  }
  double rate = log(p0 / p1) / (t1 - t0), expect_rate = c / (2 * mass);
  printf("suspension damping: decay rate %.4f 1/s over %d peaks, c / (2 m) %.4f\n", rate, npeak, expect_rate);
  CHECK(npeak == 6 && fabs(rate / expect_rate - 1) < 0.05, "decay rate %g vs %g", rate, expect_rate);
  tl_world_free(w);
  tl_model_free(m);
}

/* ---------------------------------------------------------------- limit */

static void test_limit(void) {
  for (int side = -1; side <= 1; side += 2) {
    tl_world *w;
    tl_model *m;
    tl_system *s = post_system(&w, 2.0, 1000.0, 50.0, 1e-3, &m);
    tl_error e;
    double tau[3] = {0, 20.0 * side, 0}, q[3], u[3], worst = 0;
    if (tl_system_set_generalized_force(s, tau, 3, &e)) die(&e);
    for (int i = 0; i < 2000; i++) {
      if (tl_world_step(w, &e)) die(&e);
      tl_system_get_state(s, q, 3, u, 3, NULL);
      worst = fmax(worst, side * q[1] - 0.5);
    }
    printf("limit: steering torque %+g N m: final %.6f rad, largest excursion past the limit %.3g rad\n",
           tau[1], q[1], worst);
    CHECK(worst < 2e-3 && fabs(q[1] - 0.5 * side) < 2e-3, "steering limit side %d: final %g, past by %g", side,
          q[1], worst);
    tl_world_free(w);
    tl_model_free(m);
  }
}

/* ------------------------------------------------------------------ ode */

/* The car of `file` on `engine` for `steps` steps with steering PD gains kp
 * to `target` on front_left (or a steering torque `torque`), into q. Returns
 * 77 when the engine cannot be created. */
static int run_car(const char *dir, const char *file, const char *engine, double target, double kp, double torque,
                   int steps, double *q, const tl_model **mout, tl_world **wout) {
  tl_model *m = load_file(dir, file);
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_error e;
  if (tl_world_create_with_engine(&w, engine, &e)) {
    printf("%s engine unavailable (%s): skipped\n", engine, e.message);
    tl_model_free(m);
    return 77;
  }
  if (tl_world_add_ground(w, 0, 0.8, &e) || tl_world_add_system(w, m, &s, &e)) die(&e);
  const tl_model *sm = tl_system_model(s);
  int nq = tl_model_nq(sm), nv = tl_model_nv(sm), b = joint_body(sm, "front_left");
  double *u = calloc((size_t)nv, 8), *kpv = calloc((size_t)nv, 8), *kdv = calloc((size_t)nv, 8),
         *qt = calloc((size_t)nq, 8), *tau = calloc((size_t)nv, 8);
  tl_system_get_state(s, q, nq, u, nv, NULL);
  q[2] = 0.171;
  if (tl_system_set_state(s, q, nq, u, nv, &e)) die(&e);
  tl_system_get_pd_targets(s, qt, nq, NULL, nv, NULL);
  kpv[tl_model_joint_u_index(sm, b)] = kp, kdv[tl_model_joint_u_index(sm, b)] = kp > 0 ? 20 : 0;
  qt[tl_model_joint_q_index(sm, b)] = target;
  tau[tl_model_joint_u_index(sm, b)] = torque;
  if (tl_system_set_pd_gains(s, kpv, kdv, nv, &e) || tl_system_set_pd_targets(s, qt, nq, NULL, nv, &e) ||
      tl_system_set_generalized_force(s, tau, nv, &e))
    die(&e);
  for (int i = 0; i < steps; i++)
    if (tl_world_step(w, &e)) die(&e);
  tl_system_get_state(s, q, nq, u, nv, NULL);
  free(u), free(kpv), free(kdv), free(qt), free(tau);
  *mout = sm, *wout = w;
  tl_model_free(m);
  return 0;
}

static int test_ode(const char *dir) {
  double qa[32], qb[32];
  const tl_model *ma, *mb;
  tl_world *wa, *wb;
  /* sag of the sprung front axle */
  if (run_car(dir, "hinge2_car_suspension.urdf", "talus", 0, 0, 0, 2000, qa, &ma, &wa)) return 77;
  if (run_car(dir, "hinge2_car_suspension.urdf", "ode", 0, 0, 0, 2000, qb, &mb, &wb)) {
    tl_world_free(wa);
    return 77;
  }
  for (int side = 0; side < 2; side++) {
    int k = tl_model_joint_q_index(ma, joint_body(ma, side ? "front_right_suspension" : "front_left_suspension"));
    printf("ode: %s suspension sag talus %.6f m, ode %.6f m\n", side ? "right" : "left", qa[k], qb[k]);
    CHECK(qa[k] > 0.005 && fabs(qb[k] / qa[k] - 1) < 0.02, "sag talus %g ode %g", qa[k], qb[k]);
  }
  tl_world_free(wb);
  /* MuJoCo (its plugin builds the compiled chain: a slide and two hinges in massless bodies) */
  if (run_car(dir, "hinge2_car_suspension.urdf", "mujoco", 0, 0, 0, 2000, qb, &mb, &wb) == 0) {
    for (int side = 0; side < 2; side++) {
      int k = tl_model_joint_q_index(ma, joint_body(ma, side ? "front_right_suspension" : "front_left_suspension"));
      printf("mujoco: %s suspension sag talus %.6f m, mujoco %.6f m\n", side ? "right" : "left", qa[k], qb[k]);
      CHECK(fabs(qb[k] / qa[k] - 1) < 0.02, "sag talus %g mujoco %g", qa[k], qb[k]);
    }
    tl_world_free(wb);
  }
  tl_world_free(wa);
  /* steering PD and limits */
  for (int c = 0; c < 3; c++) {
    double target = 0.3, kp = c == 0 ? 500 : 0, torque = c == 1 ? 20 : c == 2 ? -20 : 0;
    if (run_car(dir, "hinge2_car.urdf", "ode", target, kp, torque, 1000, qb, &mb, &wb)) return 77;
    double st = qb[tl_model_joint_q_index(mb, joint_body(mb, "front_left"))];
    double want = c == 0 ? target : c == 1 ? 0.6 : -0.6;
    printf("ode: steering %s: %.6f rad (expected %.6f)\n", c == 0 ? "PD to 0.3" : c == 1 ? "torque +20" : "torque -20",
           st, want);
    CHECK(fabs(st - want) < 2e-3, "ode steering case %d: %g vs %g", c, st, want);
    tl_world_free(wb);
  }
  return 0;
}

/* ---------------------------------------------------------------- record */

static void test_record(const char *dir) {
  tl_model *m = load_file(dir, "hinge2_car_suspension.urdf");
  tl_world *w;
  tl_system *s = make_system(&w, m);
  tl_error e;
  tl_recorder *rec = NULL;
  if (tl_world_add_ground(w, 0, 0.8, &e)) die(&e);
  int nq = tl_model_nq(m), nv = tl_model_nv(m), nframe = 1, taken;
  double q[32], u[32], kp[32] = {0}, kd[32] = {0}, ut[32] = {0};
  tl_system_get_state(s, q, nq, u, nv, NULL);
  q[2] = 0.171;
  kd[tl_model_joint_u_index(m, joint_body(m, "rear_left"))] = kd[tl_model_joint_u_index(m, joint_body(m, "rear_right"))] = 20;
  ut[tl_model_joint_u_index(m, joint_body(m, "rear_left"))] = ut[tl_model_joint_u_index(m, joint_body(m, "rear_right"))] = 4;
  if (tl_system_set_state(s, q, nq, u, nv, &e) || tl_system_set_pd_gains(s, kp, kd, nv, &e) ||
      tl_system_set_pd_targets(s, q, nq, ut, nv, &e) || tl_recorder_create(w, NULL, &rec, &e))
    die(&e);
  for (int i = 0; i < 500; i++) {
    if (tl_world_step(w, &e) || tl_recorder_update(rec, &taken, &e)) die(&e);
    nframe += taken;
  }
  char path[] = "/tmp/test_hinge2_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || tl_recorder_write_html(rec, path, &e)) die(&e);
  FILE *f = fopen(path, "rb");
  static char page[1 << 22];
  size_t n = f ? fread(page, 1, sizeof page - 1, f) : 0;
  page[n] = 0;
  if (f) fclose(f);
  remove(path);
  const char *want[3] = {"\"name\":\"front_left_suspension\",\"type\":\"prismatic\"",
                         "\"name\":\"front_left\",\"type\":\"revolute\"",
                         "\"name\":\"front_left_wheel\",\"type\":\"revolute\""};
  for (int i = 0; i < 3; i++) CHECK(strstr(page, want[i]) != NULL, "recording lacks %s", want[i]);
  tl_system_get_state(s, q, nq, u, nv, NULL);
  printf("record: %d frames, %zu bytes; the car moved %.3f m\n", nframe, n, q[0]);
  CHECK(nframe >= 10 && q[0] > 0.1, "frames %d, x %g", nframe, q[0]);
  tl_recorder_free(rec);
  tl_world_free(w);
  tl_model_free(m);
}

/* ------------------------------------------------------------------ bad */

static void test_bad(void) {
  static const struct {
    const char *joint; /* joint content from line 6 on, the <joint> opening on line 4 */
    int line;          /* expected line */
    const char *text;  /* expected in the message */
  } cases[] = {
      {"<axis xyz=\"0 0 1\"/>\n", 4, "has no <axis2>"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 0 0\"/>\n", 7, "0 0 0"},
      {"<axis xyz=\"0 0 0\"/>\n<axis2 xyz=\"0 1 0\"/>\n", 6, "0 0 0"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 0 -2\"/>\n", 7, "parallel"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 1 0\"/>\n<suspension stiffness=\"-5\"/>\n", 8, "stiffness"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 1 0\"/>\n<suspension damping=\"5\"/>\n", 8, "stiffness"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 1 0\"/>\n<suspension stiffness=\"5\" damping=\"-1\"/>\n", 8, "damping"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 1 0\"/>\n<suspension stiffness=\"nan\"/>\n", 8, "stiffness"},
      {"<axis xyz=\"0 0 1\"/>\n<axis2 xyz=\"0 1 0\"/>\n<mimic joint=\"other\"/>\n", 8, "mimic"},
  };
  const char *head =
      "<robot name=\"bad\">\n"
      "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n"
      "<link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n"
      "<joint name=\"h\" type=\"hinge2\">\n"
      "<parent link=\"a\"/><child link=\"b\"/>\n";
  const char *tail =
      "</joint>\n"
      "<link name=\"c\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n"
      "<joint name=\"other\" type=\"revolute\"><parent link=\"b\"/><child link=\"c\"/></joint>\n"
      "</robot>\n";
  char text[4096], want[64];
  for (size_t i = 0; i <= sizeof(cases) / sizeof(cases[0]); i++) {
    int line;
    const char *needle;
    if (i < sizeof(cases) / sizeof(cases[0])) {
      snprintf(text, sizeof text, "%s%s%s", head, cases[i].joint, tail);
      line = cases[i].line, needle = cases[i].text;
    } else { /* a joint named like a compiled one */
      snprintf(text, sizeof text, "%s<axis xyz=\"0 0 1\"/><axis2 xyz=\"0 1 0\"/>\n%s", head, tail);
      char *o = strstr(text, "name=\"other\"") + 6;
      memcpy(o, "h_wxx", 5); /* a joint named "h_wxx": no clash; then "h_wheel" */
      memmove(o + 7, o + 5, strlen(o + 5) + 1);
      memcpy(o, "h_wheel", 7);
      line = 4, needle = "h_wheel";
    }
    tl_model *m = NULL;
    tl_error e;
    memset(&e, 0, sizeof e);
    tl_status st = tl_model_load_urdf_string(text, strlen(text), "bad.urdf", NULL, &m, &e);
    snprintf(want, sizeof want, "bad.urdf:%d:", line);
    printf("bad %zu: %s\n", i, e.message);
    CHECK(st != TL_OK && m == NULL && e.line == line && strstr(e.message, want) && strstr(e.message, needle),
          "case %zu: status %d line %d (expected %d) message '%s'", i, (int)st, e.line, line, e.message);
    tl_model_free(m);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("usage: test_hinge2 parse|kinematics|derivatives|suspension|limit|ode|record|bad ROBOTS_DIR\n");
    return 2;
  }
  const char *mode = argv[1];
  if (!strcmp(mode, "parse")) test_parse(argv[2]);
  else if (!strcmp(mode, "kinematics")) test_kinematics();
  else if (!strcmp(mode, "derivatives")) test_derivatives();
  else if (!strcmp(mode, "suspension")) test_suspension();
  else if (!strcmp(mode, "limit")) test_limit();
  else if (!strcmp(mode, "bad")) test_bad();
  else if (!strcmp(mode, "record")) test_record(argv[2]);
  else if (!strcmp(mode, "ode")) {
    if (test_ode(argv[2]) == 77) return 77;
  }
  else {
    printf("unknown mode %s\n", mode);
    return 2;
  }
  printf("%s: %d failure(s)\n", mode, failures);
  return failures ? 1 : 0;
}
