/* Guards: src/dynamics/derivatives.c (tl_dyn_passive_force, tl_dyn_passive_derivatives),
 * src/world/system_derivatives.c (the passive calls), src/world/system.c (the record of external forces). */
/* Issue 24 §2: the analytic inverse / forward dynamics derivatives with the
 * step's passive and external forces: rotor inertia, joint springs
 * (stiffness, spring_mount; a ball joint's mount quaternion), joint damping,
 * gravity and world-frame external forces (a force at a body point, a force
 * at a COM, a pure torque), against central finite differences.
 *
 * For four generated trees with every joint type (floating and welded
 * bases: spherical, universal, revolute, planar, prismatic, continuous), the
 * project quadruped and humanoid, the hinge-2 car with its suspension
 * (robots/hinge2_car) and every URDF of the shared corpus, at
 * NSTATE seeded random states, with rotor inertia, damping and
 * springs set on every joint DOF through the parameter setters and four
 * external forces added (about 50 N at points of the last two bodies, 35 N
 * at the COM of a middle body, 5 N m on body 1):
 *   tp_q, tp_u   tl_system_passive_force_derivatives
 *   id_q, id_u   tl_system_inverse_dynamics_passive_derivatives
 *   fd_q, fd_u, fd_tau  tl_system_forward_dynamics_passive_derivatives
 * against central differences of tl_system_passive_force,
 * tl_system_inverse_dynamics - tau_p and tl_system_forward_dynamics(tau +
 * tau_p), the external forces added again at every perturbed state (the
 * point fixed to the body, the force fixed in the world), q perturbed
 * through tl_model_integrate, one Richardson extrapolation (h = 1e-3):
 * relative error to the largest entry below 1e-6. Also: the external
 * forces' q dependence is not negligible (the derivatives without them
 * differ by more than 1e-3 relative on every robot with a force on a moving
 * body), a step clears the record with ext (the derivative then equals the
 * force-free one), no allocation in the calls.
 * Usage: test_passive_derivatives ROBOTS_DIR SHARED_ROBOTS_DIR; 77 when the shared corpus is absent. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "talus/talus.h"
#include "test_alloc.h"
#include "test_util.h"

#define NSTATE 3
#define TOL 1e-6
#define FD_H 1e-3

typedef struct rng {
  uint64_t s;
} rng;
static double rng_uniform(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double rng_normal(rng *r) {
  double u1 = rng_uniform(r), u2 = rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static void rng_quat(rng *r, double q[4]) {
  double n;
  do {
    for (int i = 0; i < 4; i++) q[i] = rng_normal(r);
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 1e-3);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

/* the external forces of the test, added at the system's current state */
typedef struct forces {
  int b1, b2, b3, b4;
  double f1[3], p1[3], f2[3], t3[3], f4[3], p4[3];
} forces;

static void add_forces(tl_system *s, const forces *F) {
  tl_system_clear_external_forces(s);
  if (!F) return;
  TL_CHECK(tl_system_add_external_force_body_point(s, F->b1, F->f1, F->p1, NULL) == TL_OK, "add force 1");
  TL_CHECK(tl_system_add_external_force(s, F->b2, F->f2, NULL, NULL) == TL_OK, "add force 2");
  TL_CHECK(tl_system_add_external_torque(s, F->b3, F->t3, NULL) == TL_OK, "add torque 3");
  TL_CHECK(tl_system_add_external_force_body_point(s, F->b4, F->f4, F->p4, NULL) == TL_OK, "add force 4");
}

enum { F_TP, F_ID, F_FD };
/* out = the function `which` at (q, u): tau_p; RNEA(du) - tau_p; ABA(tau + tau_p) */
static void eval(tl_system *s, const forces *F, const double *q, const double *u, const double *du,
                 const double *tau, int which, double *out, double *tmp, int nq, int nv) {
  tl_system_set_state(s, q, nq, u, nv, NULL);
  add_forces(s, F);
  tl_system_passive_force(s, tmp, nv, NULL);
  if (which == F_TP) {
    memcpy(out, tmp, (size_t)nv * sizeof(double));
  } else if (which == F_ID) {
    tl_system_inverse_dynamics(s, du, out, nv, NULL);
    for (int i = 0; i < nv; i++) out[i] -= tmp[i];
  } else {
    for (int i = 0; i < nv; i++) tmp[i] += tau[i];
    tl_system_forward_dynamics(s, tmp, out, nv, NULL);
  }
}

/* Central differences with one Richardson step: column j of D (nv x nv) in q
 * (wrt = 0, tangent) or u (wrt = 1) or tau (wrt = 2). */
static void fd(const tl_model *m, tl_system *s, const forces *F, const double *q, const double *u, const double *du,
               const double *tau, int which, int wrt, double *D) {
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *e = calloc((size_t)nv, sizeof(double)), *qp = malloc((size_t)nq * sizeof(double)),
         *up = malloc((size_t)nv * sizeof(double)), *tp = malloc((size_t)nv * sizeof(double)),
         *a = malloc((size_t)nv * sizeof(double)), *b = malloc((size_t)nv * sizeof(double)),
         *tmp = malloc((size_t)nv * sizeof(double)), *d1 = malloc((size_t)nv * sizeof(double));
  for (int j = 0; j < nv; j++) {
    for (int pass = 0; pass < 2; pass++) {
      double h = pass ? FD_H / 2 : FD_H;
      for (int sg = 0; sg < 2; sg++) {
        double hs = sg ? -h : h;
        memcpy(qp, q, (size_t)nq * sizeof(double));
        memcpy(up, u, (size_t)nv * sizeof(double));
        memcpy(tp, tau, (size_t)nv * sizeof(double));
        if (wrt == 0) {
          e[j] = hs;
          tl_model_integrate(m, q, nq, e, nv, qp, NULL);
          e[j] = 0;
        } else if (wrt == 1) {
          up[j] += hs;
        } else {
          tp[j] += hs;
        }
        eval(s, F, qp, up, du, tp, which, sg ? b : a, tmp, nq, nv);
      }
      for (int i = 0; i < nv; i++) {
        double dd = (a[i] - b[i]) / (2 * h);
        if (!pass)
          d1[i] = dd;
        else
          D[(size_t)i * nv + j] = (4 * dd - d1[i]) / 3;
      }
    }
  }
  free(e), free(qp), free(up), free(tp), free(a), free(b), free(tmp), free(d1);
}

static double rel_err(const double *A, const double *D, int n2, double floor_) {
  double mx = floor_, e = 0;
  for (int i = 0; i < n2; i++) mx = fmax(mx, fabs(D[i]));
  for (int i = 0; i < n2; i++) e = fmax(e, fabs(A[i] - D[i]));
  return isnan(e) ? INFINITY : e / mx;
}

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* µs per call (thread CPU, best of 5 runs of 2000 calls) of the plain and the passive derivatives at the
 * last state, forces added (printed only: the machine is shared). */
static void speed(tl_system *s, int nv, const double *du, const double *tau, double **A, const char *label) {
  double best[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  for (int run = 0; run < 5; run++)
    for (int f = 0; f < 4; f++) {
      double t0 = cpu_now();
      for (int i = 0; i < 2000; i++) {
        if (f == 0) tl_system_inverse_dynamics_derivatives(s, du, A[2], A[3], nv, NULL);
        if (f == 1) tl_system_inverse_dynamics_passive_derivatives(s, du, A[2], A[3], nv, NULL);
        if (f == 2) tl_system_forward_dynamics_derivatives(s, tau, A[4], A[5], A[6], nv, NULL);
        if (f == 3) tl_system_forward_dynamics_passive_derivatives(s, tau, A[4], A[5], A[6], nv, NULL);
      }
      best[f] = fmin(best[f], (cpu_now() - t0) / 2000 * 1e6);
    }
  printf("%s speed (us per call, thread CPU, best of 5): inverse %.2f, inverse passive %.2f; forward %.2f, forward "
         "passive %.2f\n",
         label, best[0], best[1], best[2], best[3]);
}

static double worst[7];
static const char *const names[7] = {"tp_q", "tp_u", "id_q", "id_u", "fd_q", "fd_u", "fd_tau"};

static void run_model(tl_model *m, const char *label) {
  tl_world *w = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_world_create(&w, NULL) == TL_OK && tl_world_add_system(w, m, &s, NULL) == TL_OK, "%s: world",
                label)) {
    tl_world_free(w);
    return;
  }
  const int nq = tl_model_nq(m), nv = tl_model_nv(m), nb = tl_model_nbody(m);
  const size_t n2 = (size_t)nv * nv;
  double *q = malloc((size_t)nq * sizeof(double)), *u = malloc((size_t)nv * sizeof(double)),
         *du = malloc((size_t)nv * sizeof(double)), *tau = malloc((size_t)nv * sizeof(double));
  double *A[7], *D[7], *N0 = malloc(n2 * sizeof(double)), *N1 = malloc(n2 * sizeof(double));
  for (int c = 0; c < 7; c++) A[c] = malloc(n2 * sizeof(double)), D[c] = malloc(n2 * sizeof(double));
  double e[7] = {0};
  int moving_force = 0;
  double ext_effect = INFINITY;
  for (int st = 0; st < NSTATE; st++) {
    rng r = {0xfeed0000ull + 977ull * (uint64_t)st + (uint64_t)nv * 131ull + (uint64_t)nb};
    /* passive parameters through the setters */
    for (int b = 0; b < nb; b++) {
      tl_joint_type ty = tl_model_joint_type(m, b);
      int v0 = tl_model_joint_u_index(m, b);
      for (int k = 0; k < tl_joint_nv(ty); k++) {
        int v = v0 + k;
        TL_CHECK(tl_system_set_joint_damping(s, v, 0.5 + 2 * rng_uniform(&r), NULL) == TL_OK, "%s: damping", label);
        if (ty == TL_JOINT_FLOATING) continue;
        TL_CHECK(tl_system_set_rotor_inertia(s, v, 0.01 + 0.1 * rng_uniform(&r), NULL) == TL_OK, "%s: rotor", label);
        TL_CHECK(tl_system_set_joint_spring(s, v, 5 + 50 * rng_uniform(&r), rng_uniform(&r) - 0.5, NULL) == TL_OK,
                 "%s: spring", label);
      }
      if (ty == TL_JOINT_SPHERICAL) {
        double qm[4];
        rng_quat(&r, qm);
        TL_CHECK(tl_system_set_spherical_spring_mount(s, b, qm, NULL) == TL_OK, "%s: ball mount", label);
      }
    }
    /* random state */
    tl_model_reference_q(m, q, nq, NULL);
    for (int b = 0; b < nb; b++) {
      tl_joint_type ty = tl_model_joint_type(m, b);
      int qi = tl_model_joint_q_index(m, b), ui = tl_model_joint_u_index(m, b);
      if (ty == TL_JOINT_FLOATING) {
        for (int k = 0; k < 3; k++) q[qi + k] = 2 * rng_uniform(&r) - 1;
        rng_quat(&r, q + qi + 3);
      } else if (ty == TL_JOINT_SPHERICAL) {
        rng_quat(&r, q + qi);
      } else if (ty != TL_JOINT_FIXED) {
        for (int k = 0; k < tl_joint_nv(ty); k++) {
          double lo = -INFINITY, hi = INFINITY;
          tl_model_dof_limits(m, ui + k, &lo, &hi, NULL);
          if (!isfinite(lo) || !isfinite(hi) || !(hi > lo)) lo = -1, hi = 1;
          q[qi + k] = lo + (hi - lo) * rng_uniform(&r);
        }
      }
    }
    for (int i = 0; i < nv; i++) u[i] = rng_normal(&r), du[i] = rng_normal(&r), tau[i] = 5 * rng_normal(&r);
    forces F = {.b1 = nb - 1, .b2 = nb / 2, .b3 = nb > 1 ? 1 : 0, .b4 = nb > 2 ? nb - 2 : 0};
    for (int i = 0; i < 3; i++) {
      F.f1[i] = 30 * rng_normal(&r), F.p1[i] = 0.2 * rng_normal(&r);
      F.f2[i] = 20 * rng_normal(&r), F.t3[i] = 3 * rng_normal(&r);
      F.f4[i] = 20 * rng_normal(&r), F.p4[i] = 0.2 * rng_normal(&r);
    }
    /* analytic, at the base state */
    tl_system_set_state(s, q, nq, u, nv, NULL);
    add_forces(s, &F);
    nalloc = 0, counting = 1;
    int ok = tl_system_passive_force_derivatives(s, A[0], A[1], nv, NULL) == TL_OK &&
             tl_system_inverse_dynamics_passive_derivatives(s, du, A[2], A[3], nv, NULL) == TL_OK &&
             tl_system_forward_dynamics_passive_derivatives(s, tau, A[4], A[5], A[6], nv, NULL) == TL_OK;
    counting = 0;
    if (!TL_CHECK(ok, "%s: a passive derivative call failed", label)) break;
    TL_CHECK(nalloc == 0, "%s: %d allocations in the passive derivative calls", label, nalloc);
    /* finite differences */
    fd(m, s, &F, q, u, du, tau, F_TP, 0, D[0]);
    fd(m, s, &F, q, u, du, tau, F_TP, 1, D[1]);
    fd(m, s, &F, q, u, du, tau, F_ID, 0, D[2]);
    fd(m, s, &F, q, u, du, tau, F_ID, 1, D[3]);
    fd(m, s, &F, q, u, du, tau, F_FD, 0, D[4]);
    fd(m, s, &F, q, u, du, tau, F_FD, 1, D[5]);
    fd(m, s, &F, q, u, du, tau, F_FD, 2, D[6]);
    for (int c = 0; c < 7; c++) e[c] = fmax(e[c], rel_err(A[c], D[c], (int)n2, 1e-9));
    /* the forces' q dependence matters: without the record (forces treated as constant) the
     * passive q derivative differs from the finite differences */
    tl_system_set_state(s, q, nq, u, nv, NULL);
    add_forces(s, NULL);
    tl_system_passive_force_derivatives(s, N0, N1, nv, NULL);
    if (nv > 0 && tl_model_joint_type(m, F.b1) != TL_JOINT_FIXED) {
      moving_force = 1;
      ext_effect = fmin(ext_effect, rel_err(N0, D[0], (int)n2, 1e-9));
    }
    /* a step clears ext and with it the record: the derivative is then the force-free one */
    tl_system_set_state(s, q, nq, u, nv, NULL);
    add_forces(s, &F);
    tl_world_step(w, NULL);
    tl_system_passive_force_derivatives(s, A[0], A[1], nv, NULL);
    add_forces(s, NULL);
    tl_system_passive_force_derivatives(s, N0, N1, nv, NULL);
    TL_CHECK(memcmp(A[0], N0, n2 * sizeof(double)) == 0, "%s: after a step the cleared forces still count", label);
    if (st == NSTATE - 1 && (strstr(label, "anymal.urdf") || strstr(label, "talos_full"))) {
      tl_system_set_state(s, q, nq, u, nv, NULL);
      add_forces(s, &F);
      speed(s, nv, du, tau, A, label);
    }
  }
  printf("%-44s nv %2d", label, nv);
  for (int c = 0; c < 7; c++) {
    printf(" %s %.1e", names[c], e[c]);
    worst[c] = fmax(worst[c], e[c]);
    TL_CHECK(e[c] < TOL, "%s: %s relative error %.3g >= %g", label, names[c], e[c], TOL);
  }
  if (moving_force) {
    printf(" (forces' q dependence: %.1e)", ext_effect);
    TL_CHECK(ext_effect > 1e-3, "%s: the external forces' q dependence is negligible (%.3g): not tested", label,
             ext_effect);
  }
  printf("\n");
  fflush(stdout);
  for (int c = 0; c < 7; c++) free(A[c]), free(D[c]);
  free(q), free(u), free(du), free(tau), free(N0), free(N1);
  tl_world_free(w);
}


/* A tree with every joint type (as tests/test_derivatives.c): base (floating or welded) -> spherical ->
 * universal -> revolute, base -> planar -> prismatic, spherical -> continuous; origins, axes and inertias
 * from the seed. */
static void run_generated(int variant) {
  rng r = {0x9a55e000ull + (uint64_t)variant};
  char buf[16384];
  size_t len = 0;
  const char *types[] = {"spherical", "universal", "revolute", "planar", "prismatic", "continuous"};
  const int parent[] = {0, 1, 2, 0, 4, 1};
  len += (size_t)snprintf(buf + len, sizeof buf - len, "<?xml version=\"1.0\"?>\n<robot name=\"gen%d\">\n", variant);
  if (variant % 2)
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "<link name=\"world\"/><joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/>"
                            "<child link=\"l0\"/><origin xyz=\"0.1 -0.2 0.3\" rpy=\"0.3 0.2 0.1\"/></joint>\n");
  for (int i = 0; i < 7; i++) {
    double mass = 0.5 + 2 * rng_uniform(&r), a = 0.01 + 0.05 * rng_uniform(&r), b = 0.01 + 0.05 * rng_uniform(&r),
           c = 0.01 + 0.05 * rng_uniform(&r);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "<link name=\"l%d\"><inertial><origin xyz=\"%.6f %.6f %.6f\" rpy=\"%.6f %.6f %.6f\"/>"
                            "<mass value=\"%.6f\"/><inertia ixx=\"%.6f\" ixy=\"0\" ixz=\"0\" iyy=\"%.6f\" iyz=\"0\" "
                            "izz=\"%.6f\"/></inertial></link>\n",
                            i, 0.2 * rng_normal(&r), 0.2 * rng_normal(&r), 0.2 * rng_normal(&r), rng_normal(&r),
                            rng_normal(&r), rng_normal(&r), mass, b + c, a + c, a + b);
  }
  for (int i = 1; i < 7; i++) {
    double ax[3], ax2[3];
    for (int k = 0; k < 3; k++) ax[k] = rng_normal(&r), ax2[k] = rng_normal(&r);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "<joint name=\"j%d\" type=\"%s\"><parent link=\"l%d\"/><child link=\"l%d\"/>"
                            "<origin xyz=\"%.6f %.6f %.6f\" rpy=\"%.6f %.6f %.6f\"/><axis xyz=\"%.6f %.6f %.6f\"/>"
                            "<axis2 xyz=\"%.6f %.6f %.6f\"/>"
                            "<limit lower=\"-2\" upper=\"2\" effort=\"100\" velocity=\"10\"/></joint>\n",
                            i, types[i - 1], parent[i - 1], i, 0.3 * rng_normal(&r), 0.3 * rng_normal(&r),
                            0.3 * rng_normal(&r), rng_normal(&r), rng_normal(&r), rng_normal(&r), ax[0], ax[1], ax[2],
                            ax2[0], ax2[1], ax2[2]);
  }
  len += (size_t)snprintf(buf + len, sizeof buf - len, "</robot>\n");
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  char label[64];
  snprintf(label, sizeof label, "generated_%s_%d", variant % 2 ? "fixed" : "floating", variant);
  if (!TL_CHECK(tl_model_load_urdf_string(buf, len, label, NULL, &m, &err) == TL_OK, "%s: %s", label, err.message))
    return;
  run_model(m, label);
  tl_model_free(m);
}

static void run_path(const char *dir, const char *rel, int fixed) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  tl_load_options opt = tl_load_options_default();
  if (fixed) opt.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_model_load_urdf(path, &opt, &m, &err);
  if (st == TL_ERR_UNSUPPORTED) {
    tl_test_skip("%s: %s", rel, err.message);
    return;
  }
  if (!TL_CHECK(st == TL_OK && m, "%s: load failed: %s", rel, err.message)) return;
  run_model(m, rel);
  tl_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ROBOTS_DIR SHARED_ROBOTS_DIR\n", argv[0]);
    return 2;
  }
  for (int v = 0; v < 4; v++) run_generated(v);
  run_path(argv[1], "talus_quadruped/talus_quadruped.urdf", 0);
  run_path(argv[1], "talus_humanoid/talus_humanoid.urdf", 0);
  run_path(argv[1], "hinge2_car/hinge2_car_suspension.urdf", 0); /* hinge-2 steering, sprung suspension */
  const char *shared = tl_test_shared_dir(argc, argv, 2);
  char probe[4096];
  snprintf(probe, sizeof probe, "%s/anymal_c/urdf/anymal.urdf", shared ? shared : "");
  FILE *f = shared ? fopen(probe, "r") : NULL;
  if (!f) {
    printf("the shared robot corpus (%s) is absent: skipping its robots\n", shared ? shared : "(none)");
    tl_test_finish();
    return TL_TEST_SKIP_CODE;
  }
  fclose(f);
  const struct {
    const char *rel;
    int fixed;
  } robots[] = {{"anymal_c/urdf/anymal.urdf", 0},
                {"anymal_c/urdf/anymal_c_nolimit.urdf", 0},
                {"cartpole/cartpole.urdf", 1},
                {"deepmimic_humanoid/humanoid.urdf", 0},
                {"double_pendulum/urdf/double_pendulum.urdf", 1},
                {"double_pendulum/urdf/double_pendulum_continuous.urdf", 1},
                {"double_pendulum/urdf/double_pendulum_simple.urdf", 1},
                {"husky/husky.urdf", 0},
                {"hyq/robots/hyq_no_sensors.urdf", 0},
                {"kuka_iiwa/model.urdf", 1},
                {"panda/urdf/panda.urdf", 1},
                {"solo12/robots/solo12.urdf", 0},
                {"talos/robots/talos_full_v2.urdf", 0},
                {"talos/robots/talos_reduced.urdf", 0},
                {"ur5/urdf/ur5_robot.urdf", 1}};
  for (size_t i = 0; i < sizeof robots / sizeof robots[0]; i++) run_path(shared, robots[i].rel, robots[i].fixed);
  printf("worst:");
  for (int c = 0; c < 7; c++) printf(" %s %.1e", names[c], worst[c]);
  printf("\n");
  return tl_test_finish();
}
