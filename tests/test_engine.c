/* Guards: src/engine/engine_registry.c, engine_link.c, engine_native.c, engine_scene.c (the engine
 * interface), plugins/ode/ode_engine.c, plugins/mujoco/ (mujoco_engine.c, mj_build.c),
 * plugins/common/tlp_util.c. */
/* The engine interface (include/talus/engine.h): the native engine and the
 * ODE and MuJoCo plugins behind the same public API.
 *
 * Usage: test_engine MODE ENGINES ROBOTS_DIR [SHARED_DIR | FAKE_PLUGIN_DIR]
 *   SHARED_DIR: the shared folder (robots/ inside; $TALUS_SHARED overrides)
 *   ENGINES: the engines built, ','-separated ("talus,ode,mujoco"); the
 *   plugins among them must load.
 * Modes:
 *   plugins      every plugin of ENGINES loads (ABI, name, version, capabilities),
 *                tl_engine_list names it; a missing plugin gives TL_ERR_UNSUPPORTED
 *                with the engines found and the folders searched; a plugin of
 *                another ABI (FAKE_PLUGIN_DIR, through TALUS_PLUGIN_PATH) is refused
 *                naming both versions; malformed names are TL_ERR_ARGUMENT; a world
 *                switches engines and back, keeping its state
 *   pendulum     robots/pendulum from 0.5 rad: the period (zero crossings over
 *                3 periods) of every engine within 1e-3 (relative) of Talus's (ODE
 *                with dWorldStep, see test_pendulum); with a PD (kp 20, kd 0.5) toward
 *                0.2 rad, ODE's soft motor row (the exact implicit PD) follows Talus's
 *                trajectory within 1e-3 rad
 *   freefall     robots/box dropped from 0.5 m: before the impact z(t) equals the
 *                semi-implicit Euler solution z0 - g dt^2 n (n + 1) / 2 to 1e-9 on
 *                every engine; after 1 s it rests at its half height 0.1 m within
 *                1e-3 on every engine; its contacts carry m g (1e-3, mean of the
 *                last 0.2 s)
 *   state        a floating chain with revolute, prismatic, spherical and universal
 *                joints at a random state, zero gravity, no gains: one step of
 *                1e-9 s gives back q to 1e-8 and u to 1e-6 on every engine (the
 *                plugins' coordinate maps); an external force and torque on a free
 *                box change its momentum by F dt and its angular momentum by
 *                T dt (1e-9) on every engine
 *   stand        SHARED ANYmal C standing 5 s with the stand controller on each engine:
 *                base height band over the last 4 s under 2 cm, mean within 3 cm of
 *                Talus's, |roll|, |pitch| < 0.05 rad, four feet in contact carrying m g
 *                within 5 %% (exit 77 when the corpus is absent)
 *   trot         talus_quadruped and (SHARED) ANYmal C trotting at 0.5 m/s for 6 s on
 *                each engine: forward more than 1.5 m, base above half its start
 *                height, |roll|, |pitch| < 0.3 rad
 *   unsupported  ODE: the per-contact solver, a mimic joint, RK4, base PD gains, joint
 *                velocity limits; MuJoCo: restitution, the Dantzig solver, joint velocity
 *                limits: TL_ERR_UNSUPPORTED naming the
 *                feature, the world left usable on its engine
 *   native       the native engine's table (tl_engine_native) steps talus_quadruped
 *                bit-identically to the public API
 *   terrain      a heightmap z = 0.1 x + 0.05 y (21 x 21 samples over [-1, 1]^2) and the
 *                ball (r 0.1 m) 2 mm into it at five places: every engine finds a
 *                contact of depth 2 mm (1e-4) with the plane's normal (1e-2), so
 *                the plugins' heightfields lie as Talus's (not flipped or shifted)
 *   threads      4 threads at once, each building worlds on every engine and dropping
 *                the box for 300 steps (registry, dlopen, ODE's per-thread data,
 *                MuJoCo's XML loader): every thread ends bit-identical to a run on
 *                the main thread
 *   compare      TALUS_BIN (argument 4): `talus compare talus_quadruped --controller
 *                trot --duration 3 --json` gives one row per engine, each trotting
 *                forward, on its feet, with its version; a missing engine gets a row
 *                with the documented error and exit status 1; `talus simulate
 *                --engine E --json` names the engine */
#define _POSIX_C_SOURCE 200809L
#include <sys/wait.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "stand.h"
#include "talus/talus.h"
#include "test_util.h"
#include "trot.h"

#define G 9.81
#define MAX_ENGINES 4

static char engines[MAX_ENGINES][32];
static const char *argv_engines;
static int nengine;
static const char *robots_dir;

static int has_engine(const char *name) {
  for (int i = 0; i < nengine; ++i)
    if (!strcmp(engines[i], name)) return 1;
  return 0;
}

static tl_model *load(const char *path, tl_base_type base) {
  tl_load_options o = tl_load_options_default();
  o.base = base;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf(path, &o, &m, &err) == TL_OK, "load %s: %s", path, err.message)) return NULL;
  return m;
}

static tl_model *load_text(const char *text, tl_base_type base) {
  tl_load_options o = tl_load_options_default();
  o.base = base;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf_string(text, strlen(text), "inline", &o, &m, &err) == TL_OK, "load: %s", err.message))
    return NULL;
  return m;
}

static void robot_path(char *out, size_t len, const char *dir, const char *rel) { snprintf(out, len, "%s/%s", dir, rel); }

/* A world on `engine` with `model` (and optionally the ground); NULL after a failed check. */
static tl_world *world_with(const char *engine, const tl_model *m, int ground, tl_system **sys) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  if (!TL_CHECK(tl_world_create_with_engine(&w, engine, &err) == TL_OK, "%s: create: %s", engine, err.message))
    return NULL;
  if (ground && !TL_CHECK(tl_world_add_ground(w, 0, 0.8, &err) == TL_OK, "%s: ground: %s", engine, err.message)) {
    tl_world_free(w);
    return NULL;
  }
  if (!TL_CHECK(tl_world_add_system(w, m, sys, &err) == TL_OK, "%s: add: %s", engine, err.message)) {
    tl_world_free(w);
    return NULL;
  }
  return w;
}

/* ------------------------------------------------------------ plugins */

static void test_plugins(const char *fake_dir) {
  tl_error err;
  char list[1024];
  int n = tl_engine_list(list, sizeof list);
  TL_CHECK(n >= nengine && strncmp(list, "talus", 5) == 0, "tl_engine_list: %d engines '%s'", n, list);
  for (int i = 0; i < nengine; ++i) {
    const tl_engine_api *api = NULL;
    memset(&err, 0, sizeof err);
    if (!TL_CHECK(tl_engine_find(engines[i], &api, &err) == TL_OK && api, "%s: %s", engines[i], err.message)) continue;
    TL_CHECK(strcmp(api->name, engines[i]) == 0, "%s: the table calls itself '%s'", engines[i], api->name);
    TL_CHECK(api->abi_version == TL_ENGINE_ABI_VERSION && api->api_size == sizeof(tl_engine_api), "%s: ABI", engines[i]);
    TL_CHECK(api->version && api->version[0] && api->description && strlen(api->description) > 40, "%s: version/doc", engines[i]);
    TL_CHECK(strstr(list, engines[i]) != NULL, "%s not in the list '%s'", engines[i], list);
    tl_engine_caps caps;
    memset(&caps, 0, sizeof caps);
    api->capabilities(&caps);
    TL_CHECK(caps.solvers & (1u << caps.default_solver), "%s: its default solver is not among its solvers", engines[i]);
    TL_CHECK((caps.joints & (1u << TL_JOINT_REVOLUTE)) && (caps.joints & (1u << TL_JOINT_FLOATING)),
             "%s: revolute and floating joints", engines[i]);
    const tl_engine_api *again = NULL;
    TL_CHECK(tl_engine_find(engines[i], &again, NULL) == TL_OK && again == api, "%s: loaded once", engines[i]);
  }
  /* a missing plugin: the documented error */
  memset(&err, 0, sizeof err);
  const tl_engine_api *api = (const tl_engine_api *)&err;
  tl_status st = tl_engine_find("nosuchengine", &api, &err);
  TL_CHECK(st == TL_ERR_UNSUPPORTED && api == NULL, "missing plugin: status %d", (int)st);
  TL_CHECK(strstr(err.message, "talus-engine-nosuchengine.so") && strstr(err.message, "engines found: talus") &&
               strstr(err.message, "folders searched:") && strstr(err.message, "TALUS_PLUGIN_PATH"),
           "missing plugin message: %s", err.message);
  for (int i = 0; i < nengine; ++i)
    TL_CHECK(strstr(err.message, engines[i]) != NULL, "the message does not list '%s': %s", engines[i], err.message);
  tl_world *w = NULL;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_world_create_with_engine(&w, "nosuchengine", &err) == TL_ERR_UNSUPPORTED && w == NULL,
           "a world on a missing engine: %s", err.message);
  /* malformed names */
  const char *bad[] = {"", "ODE", "o de", "../ode", "a:b:c:d:e:f:g:h:i:j:k:l:m:n:o:p:q:r:s:t:u:v:w:x:y:z:0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    memset(&err, 0, sizeof err);
    if (tl_world_create(&w, NULL) != TL_OK) continue;
    st = tl_world_set_engine(w, bad[k], &err);
    TL_CHECK(st == TL_ERR_ARGUMENT, "engine name '%.20s': status %d (%s)", bad[k], (int)st, err.message);
    TL_CHECK(strcmp(tl_world_engine_name(w), "talus") == 0, "the world kept its engine");
    tl_world_free(w);
  }
  /* a plugin of another ABI, found through TALUS_PLUGIN_PATH */
  if (fake_dir) {
    setenv("TALUS_PLUGIN_PATH", fake_dir, 1);
    memset(&err, 0, sizeof err);
    st = tl_engine_find("fake", &api, &err);
    TL_CHECK(st == TL_ERR_UNSUPPORTED && strstr(err.message, "ABI version 999") && strstr(err.message, fake_dir),
             "mismatched plugin: %s", err.message);
    char path[2048];
    tl_engine_search_path(path, sizeof path);
    TL_CHECK(strncmp(path, fake_dir, strlen(fake_dir)) == 0, "TALUS_PLUGIN_PATH first: %s", path);
    unsetenv("TALUS_PLUGIN_PATH");
  }
  /* switching engines keeps the state */
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "pendulum/pendulum.urdf");
  tl_model *m = load(p, TL_BASE_AUTO);
  for (int i = 1; m && i < nengine; ++i) {
    tl_system *s = NULL;
    tl_world *x = world_with("talus", m, 0, &s);
    if (!x) continue;
    double q = 0.5, u = 0, q1, u1;
    tl_system_set_state(s, &q, 1, &u, 1, NULL);
    memset(&err, 0, sizeof err);
    TL_CHECK(tl_world_set_engine(x, engines[i], &err) == TL_OK, "switch to %s: %s", engines[i], err.message);
    TL_CHECK(strcmp(tl_world_engine_name(x), engines[i]) == 0, "engine name %s", tl_world_engine_name(x));
    for (int k = 0; k < 100; ++k) tl_world_step(x, NULL);
    tl_system_get_state(s, &q1, 1, &u1, 1, NULL);
    TL_CHECK(tl_world_set_engine(x, "talus", &err) == TL_OK, "back to talus: %s", err.message);
    double q2, u2;
    tl_system_get_state(s, &q2, 1, &u2, 1, NULL);
    TL_CHECK(q2 == q1 && u2 == u1 && q1 < 0.5 && q1 > 0.3, "%s: state kept across the switch (%g %g)", engines[i], q1, q2);
    TL_CHECK_NEAR(tl_world_time(x), 0.1, 1e-12, "time");
    tl_world_free(x);
  }
  tl_model_free(m);
}

/* ------------------------------------------------------------ pendulum */

/* Period from the upward zero crossings of q (linear interpolation). */
static double pendulum_period(const char *engine, const tl_model *m, double kp, double kd, double target,
                              double *traj, int nsteps) {
  tl_system *s = NULL;
  tl_world *w = world_with(engine, m, 0, &s);
  if (!w) return NAN;
  if (!strncmp(engine, "ode", 3)) /* ODE's exact solver (see test_pendulum) */
    TL_CHECK(tl_world_set_solver(w, TL_SOLVER_DANTZIG, NULL) == TL_OK, "ode: dWorldStep");
  double q = 0.5, u = 0, qprev = q, t_first = NAN, t_last = NAN;
  int crossings = 0;
  tl_system_set_state(s, &q, 1, &u, 1, NULL);
  if (kp > 0 || kd > 0) {
    double zero = 0;
    tl_system_set_pd_gains(s, &kp, &kd, 1, NULL);
    tl_system_set_pd_targets(s, &target, 1, &zero, 1, NULL);
  }
  tl_error err;
  memset(&err, 0, sizeof err);
  for (int k = 0; k < nsteps; ++k) {
    if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "%s: step: %s", engine, err.message)) break;
    tl_system_get_state(s, &q, 1, &u, 1, NULL);
    if (traj) traj[k] = q;
    if (qprev < 0 && q >= 0) {
      double t = tl_world_time(w) - 1e-3 * q / (q - qprev);
      if (crossings == 0) t_first = t;
      t_last = t;
      crossings++;
    }
    qprev = q;
  }
  tl_world_free(w);
  return crossings >= 2 ? (t_last - t_first) / (crossings - 1) : NAN;
}

static void test_pendulum(void) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "pendulum/pendulum.urdf");
  tl_model *m = load(p, TL_BASE_AUTO);
  if (!m) return;
  double T0 = pendulum_period("talus", m, 0, 0, 0, NULL, 5000);
  TL_CHECK(T0 > 1.4 && T0 < 1.5, "talus period %g s", T0);
  printf("pendulum period: talus %.6f s\n", T0);
  for (int i = 1; i < nengine; ++i) {
    double T = pendulum_period(engines[i], m, 0, 0, 0, NULL, 5000);
    printf("pendulum period: %s %.6f s (relative difference %.2e)\n", engines[i], T, fabs(T - T0) / T0);
    TL_CHECK(fabs(T - T0) <= 1e-3 * T0, "%s: period %.6f s, talus %.6f s", engines[i], T, T0);
  }
  if (has_engine("ode")) {
    /* ODE runs this pendulum with dWorldStep, its exact (Dantzig) solver: the rod is a point
     * mass (inertia 4e-5 kg m^2 about its COM, 0.5 m from the hinge), an inertia ratio at which
     * QuickStep's 20 SOR sweeps leave the hinge constraint unconverged (period 2.5e-3 long;
     * 200 sweeps: 1.7e-4) */
    /* the PD emulated by ODE's soft motor row: the exact implicit PD */
    enum { N = 1000 };
    double a[N], b[N], worst = 0;
    pendulum_period("talus", m, 20, 0.5, 0.2, a, N);
    pendulum_period("ode", m, 20, 0.5, 0.2, b, N);
    for (int k = 0; k < N; ++k) worst = fmax(worst, fabs(a[k] - b[k]));
    printf("PD pendulum: max |q_ode - q_talus| over 1 s = %.2e rad (q at 1 s: %.4f, %.4f)\n", worst, a[N - 1], b[N - 1]);
    TL_CHECK(worst < 1e-3, "ODE's PD pendulum leaves Talus's by %g rad", worst);
    /* the PD pulls toward 0.2 rad against gravity: equilibrium 20 (0.2 - q) = m g l sin q, q = 0.1607 rad */
    double mean = 0;
    for (int k = N / 2; k < N; ++k) mean += a[k] / (N - N / 2);
    TL_CHECK(fabs(mean - 0.1607) < 0.05, "the PD holds the pendulum near 0.161 rad (mean %g over 0.5-1 s)", mean);
  }
  tl_model_free(m);
}

/* ------------------------------------------------------------ free fall */

static void test_freefall(void) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "box/box.urdf");
  tl_model *m = load(p, TL_BASE_FLOATING);
  if (!m) return;
  double rest[MAX_ENGINES];
  double mass = tl_model_total_mass(m);
  for (int i = 0; i < nengine; ++i) {
    const char *e = engines[i];
    tl_system *s = NULL;
    tl_world *w = world_with(e, m, 1, &s);
    rest[i] = NAN;
    if (!w) continue;
    double q[7] = {0, 0, 0.5, 1, 0, 0, 0}, u[6] = {0};
    tl_system_set_state(s, q, 7, u, 6, NULL);
    double worst = 0, dt = 1e-3, fz = 0;
    tl_error err;
    memset(&err, 0, sizeof err);
    for (int k = 1; k <= 1000; ++k) {
      if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "%s: %s", e, err.message)) break;
      tl_system_get_state(s, q, 7, u, 6, NULL);
      if (k <= 250) { /* the box (0.2 m high) is still above the ground: z > 0.1 + 0.005 margin */
        double z = 0.5 - G * dt * dt * k * (k + 1) / 2.0;
        worst = fmax(worst, fabs(q[2] - z));
      }
      for (int c = 0; k > 800 && c < tl_world_ncontact(w); ++c) { /* mean over the last 200 steps */
        tl_contact_info ci;
        tl_world_contact(w, c, &ci, NULL);
        fz += ci.impulse[2] / dt / 200.0;
      }
    }
    rest[i] = q[2];
    printf("free fall: %s: max |z - z_euler| %.2e m before the impact, rest height %.6f m, contacts carry "
           "%.4f N on average over the last 0.2 s (m g %.4f N)\n", e, worst, q[2], fz, mass * G);
    TL_CHECK(worst < 1e-9, "%s: free fall leaves the Euler solution by %g m", e, worst);
    TL_CHECK_NEAR(q[2], 0.1, 1e-3, e);
    TL_CHECK(fabs(fz - mass * G) < 1e-3 * mass * G, "%s: contacts carry %g N, m g = %g N", e, fz, mass * G);
    tl_world_free(w);
  }
  for (int i = 1; i < nengine; ++i)
    TL_CHECK(fabs(rest[i] - rest[0]) < 1e-3, "%s rests at %g, talus at %g", engines[i], rest[i], rest[0]);
  tl_model_free(m);
}

/* ------------------------------------------------------------ state maps */

static const char chain_urdf[] =
    "<robot name='chain'>"
    " <link name='base'><inertial><mass value='3'/><inertia ixx='0.1' iyy='0.12' izz='0.09' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='rev' type='revolute'><parent link='base'/><child link='l1'/><origin xyz='0.1 0 0' rpy='0.2 0 0'/>"
    "  <axis xyz='0 1 0'/><limit lower='-3' upper='3' effort='100' velocity='10'/></joint>"
    " <link name='l1'><inertial><origin xyz='0 0 -0.1'/><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.005' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='pri' type='prismatic'><parent link='l1'/><child link='l2'/><origin xyz='0 0 -0.2' rpy='0 0.3 0'/>"
    "  <axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='100' velocity='10'/></joint>"
    " <link name='l2'><inertial><origin xyz='0.02 0 0'/><mass value='0.8'/><inertia ixx='0.004' iyy='0.005' izz='0.003' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='ball' type='spherical'><parent link='l2'/><child link='l3'/><origin xyz='0 0.05 -0.1' rpy='0 0 0.4'/></joint>"
    " <link name='l3'><inertial><origin xyz='0 0 -0.1'/><mass value='0.6'/><inertia ixx='0.003' iyy='0.004' izz='0.002' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='uni' type='universal'><parent link='l3'/><child link='l4'/><origin xyz='0 0 -0.2' rpy='0.1 0 0'/>"
    "  <axis xyz='1 0 0'/><axis2 xyz='0 1 0'/></joint>"
    " <link name='l4'><inertial><origin xyz='0 0 -0.08'/><mass value='0.5'/><inertia ixx='0.002' iyy='0.002' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

static double urand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffffff) / (double)0xffffff * 2 - 1;
}

static void test_state(void) {
  tl_model *m = load_text(chain_urdf, TL_BASE_FLOATING);
  if (!m) return;
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double q[32], u[32], q1[32], u1[32];
  unsigned seed = 7;
  for (int trial = 0; trial < 5; ++trial) {
    for (int i = 0; i < nq; ++i) q[i] = 0.6 * urand(&seed);
    for (int i = 0; i < nv; ++i) u[i] = urand(&seed);
    q[3] = 1; /* base quaternion: normalised by set_state */
    for (int b = 0; b < tl_model_nbody(m); ++b)
      if (tl_model_joint_type(m, b) == TL_JOINT_SPHERICAL) q[tl_model_joint_q_index(m, b)] = 1;
    for (int i = 0; i < nengine; ++i) {
      tl_system *s = NULL;
      tl_world *w = world_with(engines[i], m, 0, &s);
      if (!w) continue;
      double g0[3] = {0, 0, 0};
      tl_error err;
      memset(&err, 0, sizeof err);
      tl_world_set_gravity(w, g0, NULL);
      tl_world_set_timestep(w, 1e-9, NULL);
      tl_system_set_state(s, q, nq, u, nv, NULL);
      double qs[32], us[32];
      tl_system_get_state(s, qs, nq, us, nv, NULL); /* normalised */
      TL_CHECK(tl_world_step(w, &err) == TL_OK, "%s: %s", engines[i], err.message);
      tl_system_get_state(s, q1, nq, u1, nv, NULL);
      double dq = 0, du = 0;
      for (int k = 0; k < nq; ++k) dq = fmax(dq, fabs(q1[k] - qs[k]));
      for (int k = 0; k < nv; ++k) du = fmax(du, fabs(u1[k] - us[k]));
      if (trial == 0) printf("state map: %s: |dq| %.2e, |du| %.2e after one step of 1e-9 s\n", engines[i], dq, du);
      TL_CHECK(dq < 1e-8 && du < 1e-6, "%s trial %d: the state comes back with |dq| %g, |du| %g", engines[i], trial, dq, du);
      tl_world_free(w);
    }
  }
  tl_model_free(m);
  /* external force and torque on a free box: exact momentum changes */
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "box/box.urdf");
  m = load(p, TL_BASE_FLOATING);
  if (!m) return;
  double mass = tl_model_total_mass(m);
  for (int i = 0; i < nengine; ++i) {
    tl_system *s = NULL;
    tl_world *w = world_with(engines[i], m, 0, &s);
    if (!w) continue;
    double g0[3] = {0, 0, 0}, qb[7] = {1, 2, 3, 1, 0, 0, 0}, ub[6] = {0};
    tl_world_set_gravity(w, g0, NULL);
    tl_system_set_state(s, qb, 7, ub, 6, NULL);
    double f[3] = {3, -2, 5}, t[3] = {0.5, 0.2, -0.4}, com[3], L0[3], L1[3], p1[3];
    tl_system_com(s, com, NULL);
    tl_system_add_external_force(s, 0, f, NULL, NULL);
    tl_system_add_external_torque(s, 0, t, NULL);
    tl_system_angular_momentum(s, com, L0, NULL);
    tl_world_step(w, NULL);
    tl_system_linear_momentum(s, p1, NULL);
    tl_system_angular_momentum(s, com, L1, NULL);
    double e = 0;
    for (int k = 0; k < 3; ++k) e = fmax(e, fmax(fabs(p1[k] - f[k] * 1e-3), fabs(L1[k] - L0[k] - t[k] * 1e-3)));
    TL_CHECK(e < 1e-9, "%s: external force / torque: momentum off by %g", engines[i], e);
    tl_world_step(w, NULL); /* external forces last one step */
    double p2[3];
    tl_system_linear_momentum(s, p2, NULL);
    TL_CHECK(fabs(p2[0] - p1[0]) < 1e-12, "%s: the external force lasted more than one step", engines[i]);
    (void)mass;
    tl_world_free(w);
  }
  tl_model_free(m);
}

/* ------------------------------------------------------------ ANYmal standing */

static void quat_rp(const double *q, double *roll, double *pitch) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  *roll = atan2(2 * (y * z + w * x), 1 - 2 * (x * x + y * y));
  *pitch = -asin(fmax(-1.0, fmin(1.0, 2 * (x * z - w * y))));
}

/* Lift the floating base so that its lowest primitive geom is 1 cm above z = 0. */
static void place(tl_system *s, const tl_model *m, double *q, double *u) {
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  tl_model_default_q(m, q, nq, NULL);
  memset(u, 0, (size_t)nv * sizeof(double));
  tl_system_set_state(s, q, nq, u, nv, NULL);
  double minz = INFINITY;
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    double lo[3], hi[3];
    if (tl_system_geom_aabb(s, g, lo, hi, NULL) == TL_OK) minz = fmin(minz, lo[2]);
  }
  q[2] += 0.01 - minz;
  tl_system_set_state(s, q, nq, u, nv, NULL);
}

static void test_stand(const char *shared) {
  char p[1024];
  if (!shared) {
    tl_test_skip("stand: no shared robots folder");
    return;
  }
  robot_path(p, sizeof p, shared, "robots/anymal_c/urdf/anymal.urdf");
  FILE *f = fopen(p, "r");
  if (!f) {
    tl_test_skip("stand: %s is absent", p);
    return;
  }
  fclose(f);
  tl_model *m = load(p, TL_BASE_FLOATING);
  if (!m) return;
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  double mean0 = NAN, weight = tl_model_total_mass(m) * G;
  for (int i = 0; i < nengine && q && u; ++i) {
    const char *e = engines[i];
    tl_system *s = NULL;
    tl_world *w = world_with(e, m, 1, &s);
    if (!w) continue;
    place(s, m, q, u);
    tl_stand_controller c;
    tl_error err;
    memset(&err, 0, sizeof err);
    if (!TL_CHECK(tl_stand_init(&c, s, NULL, 0, TL_STAND_DEFAULT_KP, TL_STAND_DEFAULT_KD, &err) == TL_OK, "%s: %s", e, err.message)) {
      tl_world_free(w);
      continue;
    }
    double hmin = INFINITY, hmax = -INFINITY, hsum = 0, rp = 0, fz = 0;
    int n = 0, feet = 0;
    for (int k = 0; k < 5000; ++k) {
      tl_status st = tl_world_integrate1(w, &err);
      if (!st) st = tl_stand_update(&c, &err);
      if (!st) st = tl_world_integrate2(w, &err);
      if (!TL_CHECK(st == TL_OK, "%s: step %d: %s", e, k, err.message)) break;
      tl_system_get_state(s, q, nq, u, nv, NULL);
      if (k >= 1000) {
        double r, pi;
        quat_rp(q + 3, &r, &pi);
        rp = fmax(rp, fmax(fabs(r), fabs(pi)));
        hmin = fmin(hmin, q[2]), hmax = fmax(hmax, q[2]), hsum += q[2], n++;
      }
    }
    unsigned foot_mask = 0;
    for (int k = 0; k < tl_world_ncontact(w); ++k) {
      tl_contact_info ci;
      tl_world_contact(w, k, &ci, NULL);
      double pn = (ci.impulse[0] * ci.normal[0] + ci.impulse[1] * ci.normal[1] + ci.impulse[2] * ci.normal[2]) / 1e-3;
      fz += pn;
      const char *link = tl_model_geom_link(m, ci.geom);
      if (pn > 0 && link && strstr(link, "FOOT")) foot_mask |= 1u << (ci.body % 32);
    }
    for (unsigned b = foot_mask; b; b &= b - 1) feet++;
    double mean = hsum / n;
    printf("stand: ANYmal C on %s: base height mean %.4f m, band %.4f m, max |roll|,|pitch| %.4f rad, %d feet "
           "carry %.1f N (m g %.1f N)\n", e, mean, hmax - hmin, rp, feet, fz, weight);
    TL_CHECK(hmax - hmin < 0.02, "%s: base height band %g m", e, hmax - hmin);
    TL_CHECK(rp < 0.05, "%s: roll / pitch %g rad", e, rp);
    TL_CHECK(feet == 4, "%s: %d feet in contact", e, feet);
    TL_CHECK(fabs(fz - weight) < 0.05 * weight, "%s: contacts carry %g N, m g %g N", e, fz, weight);
    if (i == 0) mean0 = mean;
    else TL_CHECK(fabs(mean - mean0) < 0.03, "%s: mean height %g, talus %g", e, mean, mean0);
    tl_stand_free(&c);
    tl_world_free(w);
  }
  free(q);
  free(u);
  tl_model_free(m);
}

/* ------------------------------------------------------------ trot */

static void trot_robot(const char *path, const char *label) {
  tl_model *m = load(path, TL_BASE_FLOATING);
  if (!m) return;
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  for (int i = 0; i < nengine && q && u; ++i) {
    const char *e = engines[i];
    tl_system *s = NULL;
    tl_world *w = world_with(e, m, 1, &s);
    if (!w) continue;
    place(s, m, q, u);
    double x0 = q[0], z0 = q[2], rp = 0, zmin = INFINITY;
    tl_trot_controller c;
    tl_trot_params par = tl_trot_default_params();
    par.speed = 0.5;
    tl_error err;
    memset(&err, 0, sizeof err);
    if (!TL_CHECK(tl_trot_init(&c, s, &par, &err) == TL_OK, "%s %s: %s", label, e, err.message)) {
      tl_world_free(w);
      continue;
    }
    for (int k = 0; k < 6000; ++k) {
      tl_status st = tl_world_integrate1(w, &err);
      if (!st) st = tl_trot_update(&c, tl_world_time(w), &err);
      if (!st) st = tl_world_integrate2(w, &err);
      if (!TL_CHECK(st == TL_OK, "%s %s: step %d: %s", label, e, k, err.message)) break;
      tl_system_get_state(s, q, nq, u, nv, NULL);
      double r, pi;
      quat_rp(q + 3, &r, &pi);
      rp = fmax(rp, fmax(fabs(r), fabs(pi)));
      zmin = fmin(zmin, q[2]);
    }
    printf("trot: %s on %s: %.3f m forward in 6 s, lowest base %.3f m (start %.3f), max |roll|,|pitch| %.3f rad\n",
           label, e, q[0] - x0, zmin, z0, rp);
    TL_CHECK(q[0] - x0 > 1.5, "%s on %s: only %g m forward", label, e, q[0] - x0);
    TL_CHECK(zmin > 0.5 * z0, "%s on %s: fell (base at %g m)", label, e, zmin);
    TL_CHECK(rp < 0.3, "%s on %s: tilted %g rad", label, e, rp);
    tl_trot_free(&c);
    tl_world_free(w);
  }
  free(q);
  free(u);
  tl_model_free(m);
}

static void test_trot(const char *shared) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "talus_quadruped/talus_quadruped.urdf");
  trot_robot(p, "talus_quadruped");
  if (!shared) {
    tl_test_skip("trot: no shared robots folder (ANYmal C)");
    return;
  }
  robot_path(p, sizeof p, shared, "robots/anymal_c/urdf/anymal.urdf");
  FILE *f = fopen(p, "r");
  if (!f) {
    tl_test_skip("trot: %s is absent", p);
    return;
  }
  fclose(f);
  trot_robot(p, "ANYmal C");
}

/* ------------------------------------------------------------ points */

/* A 2 kg slab whose only collision geometry is four point contacts (collision spheres of
 * radius 0, Drake's idiom for Atlas's and Valkyrie's feet) 2 cm below its origin at its
 * corners. */
static const char points_urdf[] =
    "<robot name='slab'><link name='slab'>\n"
    " <inertial><mass value='2'/><inertia ixx='0.0045' iyy='0.0171' izz='0.0208' ixy='0' ixz='0' iyz='0'/>"
    "</inertial>\n"
    " <visual><geometry><box size='0.3 0.1 0.04'/></geometry></visual>\n"
    " <collision><origin xyz='0.15 0.05 -0.02'/><geometry><sphere radius='0'/></geometry></collision>\n"
    " <collision><origin xyz='0.15 -0.05 -0.02'/><geometry><sphere radius='0'/></geometry></collision>\n"
    " <collision><origin xyz='-0.15 0.05 -0.02'/><geometry><sphere radius='0'/></geometry></collision>\n"
    " <collision><origin xyz='-0.15 -0.05 -0.02'/><geometry><sphere radius='0.0'/></geometry></collision>\n"
    "</link></robot>";

/* Drop the slab from 1 cm onto `ground` (0 plane, 1 static box, 2 heightmap) of `engine`: after 1 s
 * it rests on its four points (origin 2 cm up: within 0.2 mm natively, 1 mm with an engine's
 * 0.1 mm point sphere and soft contacts), level and still, carried by four contacts whose normal
 * impulses sum to m g dt. */
static void points_rest(const char *engine, const tl_model *m, int ground) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_world_create_with_engine(&w, engine, &err) == TL_OK, "%s: create: %s", engine, err.message))
    return;
  static const char *const what[3] = {"plane", "static box", "heightmap"};
  double heights[25] = {0}, size[3] = {1, 1, 0.2}, pos[3] = {0, 0, -0.1};
  tl_status st = ground == 0   ? tl_world_add_ground(w, 0, 0.8, &err)
                 : ground == 1 ? tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, NULL, NULL, NULL, &err)
                               : tl_world_add_heightmap(w, 5, 5, -1, -1, 0.5, 0.5, heights, 25, NULL, NULL, &err);
  if (TL_CHECK(st == TL_OK, "%s / %s: %s", engine, what[ground], err.message) &&
      TL_CHECK(tl_world_add_system(w, m, &s, &err) == TL_OK, "%s: add: %s", engine, err.message)) {
    double q[7] = {0, 0, 0.03, 1, 0, 0, 0}, u[6] = {0};
    tl_system_set_state(s, q, 7, u, 6, NULL);
    int ok = 1;
    for (int k = 0; k < 1000 && ok; k++) ok = tl_world_step(w, &err) == TL_OK;
    TL_CHECK(ok, "%s / %s: steps: %s", engine, what[ground], err.message);
    tl_system_get_state(s, q, 7, u, 6, NULL);
    double tol = strcmp(engine, "talus") ? 1e-3 : 2e-4, speed = 0;
    for (int i = 0; i < 6; i++) speed = fmax(speed, fabs(u[i]));
    TL_CHECK(fabs(q[2] - 0.02) < tol, "%s / %s: rests on its points, origin at z = %.6f (expected 0.02)", engine,
             what[ground], q[2]);
    TL_CHECK(fabs(q[4]) < 1e-3 && fabs(q[5]) < 1e-3 && speed < 1e-2, "%s / %s: level and still (qx %g, qy %g, |u| %g)",
             engine, what[ground], q[4], q[5], speed);
    int nc = tl_world_ncontact(w);
    double fz = 0;
    for (int k = 0; k < nc; k++) {
      tl_contact_info ci;
      if (tl_world_contact(w, k, &ci, NULL) == TL_OK) fz += fabs(ci.impulse[2]);
    }
    double mg_dt = 2 * 9.81 * 1e-3;
    TL_CHECK(nc == 4 && fabs(fz - mg_dt) < 0.02 * mg_dt, "%s / %s: %d contacts carrying %g N s (m g dt = %g)", engine,
             what[ground], nc, fz, mg_dt);
  }
  tl_world_free(w);
}

static void test_points(void) {
  tl_model *m = load_text(points_urdf, TL_BASE_FLOATING);
  if (!m) return;
  TL_CHECK(tl_model_ngeom(m) == 4, "four point contacts, %d geoms", tl_model_ngeom(m));
  for (int ground = 0; ground < 3; ground++) points_rest("talus", m, ground);
  for (int i = 0; i < nengine; i++)
    if (strcmp(engines[i], "talus")) points_rest(engines[i], m, 0);
  tl_model_free(m);
}

/* ------------------------------------------------------------ ode_internal */

/* A state that ODE cannot integrate (a box spun by a 1e300 N m torque: its quaternion no longer
 * normalizes, ODE's dxNormalize4 assertion, which aborted the process and `talus compare` with
 * it on Unitree's Dex5 hand): the step fails with TL_ERR_DIVERGED and ODE's message, the world
 * stays stopped, frees cleanly, and a new ODE world in the same process runs. */
static void test_ode_internal(void) {
  if (!has_engine("ode")) {
    tl_test_skip("ode_internal: no ODE plugin");
    return;
  }
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "box/box.urdf");
  tl_model *box = load(p, TL_BASE_FLOATING);
  if (!box) return;
  tl_system *s = NULL;
  tl_world *w = world_with("ode", box, 0, &s);
  if (w) {
    double tau[6] = {0, 0, 0, 1e300, 0, 0};
    tl_error err;
    tl_status st = TL_OK;
    int k = 0;
    for (; k < 10 && st == TL_OK; k++) {
      TL_CHECK(tl_system_set_generalized_force(s, tau, 6, NULL) == TL_OK, "the torque is accepted");
      memset(&err, 0, sizeof err);
      st = tl_world_step(w, &err);
    }
    TL_CHECK(st == TL_ERR_DIVERGED && strstr(err.message, "ODE stopped at an internal error") &&
                 strstr(err.message, "dxNormalize4"),
             "the step fails naming ODE's assertion (status %d after %d steps: %s)", (int)st, k, err.message);
    memset(&err, 0, sizeof err);
    TL_CHECK(tl_world_step(w, &err) == TL_ERR_DIVERGED && strstr(err.message, "internal error"),
             "the world stays stopped: %s", err.message);
    tl_world_free(w);
  }
  w = world_with("ode", box, 1, &s);
  if (w) {
    int ok = 1;
    for (int k = 0; k < 300 && ok; k++) ok = tl_world_step(w, NULL) == TL_OK;
    double q[7], u[6];
    tl_system_get_state(s, q, 7, u, 6, NULL);
    TL_CHECK(ok && fabs(q[2] - 0.1) < 5e-3, "a new ODE world runs: the box rests at z = %g", q[2]);
    tl_world_free(w);
  }
  tl_model_free(box);
}

/* ------------------------------------------------------------ unsupported */

static const char mimic_urdf[] =
    "<robot name='mimic'>"
    " <link name='base'/>"
    " <joint name='a' type='revolute'><parent link='base'/><child link='l1'/><axis xyz='0 0 1'/>"
    "  <limit lower='-1' upper='1' effort='10' velocity='1'/></joint>"
    " <link name='l1'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    " <joint name='b' type='revolute'><parent link='l1'/><child link='l2'/><origin xyz='0.1 0 0'/><axis xyz='0 0 1'/>"
    "  <limit lower='-1' upper='1' effort='10' velocity='1'/><mimic joint='a' multiplier='2'/></joint>"
    " <link name='l2'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "</robot>";

/* The step (or the call) fails with TL_ERR_UNSUPPORTED naming `what`; the world keeps its engine. */
static void expect_unsupported(tl_world *w, tl_status st, const tl_error *err, const char *engine, const char *what) {
  TL_CHECK(st == TL_ERR_UNSUPPORTED, "%s / %s: status %d (%s)", engine, what, (int)st, err->message);
  TL_CHECK(strstr(err->message, what) != NULL, "%s: the message does not name '%s': %s", engine, what, err->message);
  TL_CHECK(strcmp(tl_world_engine_name(w), engine) == 0, "%s: the world left its engine", engine);
}

static void test_unsupported(void) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "box/box.urdf");
  tl_model *box = load(p, TL_BASE_FLOATING), *mim = load_text(mimic_urdf, TL_BASE_FIXED);
  if (!box || !mim) goto done;
  tl_error err;
  tl_system *s = NULL;
  tl_world *w;
  if (has_engine("ode")) {
    w = world_with("ode", box, 1, &s);
    if (w) {
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_set_solver(w, TL_SOLVER_PER_CONTACT, &err), &err, "ode", "per-contact");
      TL_CHECK(tl_world_set_solver(w, TL_SOLVER_DANTZIG, NULL) == TL_OK, "ode: Dantzig (dWorldStep)");
      int ok = 1;
      for (int k = 0; k < 600 && ok; ++k) ok = tl_world_step(w, NULL) == TL_OK;
      TL_CHECK(ok, "ode: Dantzig steps");
      double q[7], u[6];
      tl_system_get_state(s, q, 7, u, 6, NULL);
      TL_CHECK_NEAR(q[2], 0.1, 1e-3, "ode: the box rests under dWorldStep");
      double kp[6] = {10, 0, 0, 0, 0, 0}, kd[6] = {0};
      tl_system_set_pd_gains(s, kp, kd, 6, NULL);
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_step(w, &err), &err, "ode", "floating base");
      kp[0] = 0;
      tl_system_set_pd_gains(s, kp, kd, 6, NULL);
      tl_system_set_integrator(s, TL_INTEGRATOR_RK4, NULL);
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_step(w, &err), &err, "ode", "RK4");
      tl_system_set_integrator(s, TL_INTEGRATOR_EULER, NULL);
      TL_CHECK(tl_world_step(w, NULL) == TL_OK, "ode: usable again");
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_set_velocity_limits(w, 1, &err), &err, "ode", "joint velocity limits");
      unsigned char snap[64];
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_snapshot_save(w, snap, sizeof snap, NULL, &err), &err, "ode", "snapshots");
      TL_CHECK(tl_world_velocity_limits(w) == 0 && tl_world_step(w, NULL) == TL_OK, "ode: velocity limits stay off");
      tl_world_free(w);
    }
    w = NULL;
    memset(&err, 0, sizeof err);
    if (tl_world_create(&w, NULL) == TL_OK && tl_world_add_system(w, mim, &s, NULL) == TL_OK) {
      expect_unsupported(w, tl_world_set_engine(w, "ode", &err), &err, "talus", "mimic");
    }
    tl_world_free(w);
  }
  if (has_engine("mujoco")) {
    w = world_with("mujoco", box, 1, &s);
    if (w) {
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_set_solver(w, TL_SOLVER_DANTZIG, &err), &err, "mujoco", "Dantzig");
      tl_world_set_default_material(w, 0.8, 0.5, 0.01, NULL);
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_step(w, &err), &err, "mujoco", "restitution");
      memset(&err, 0, sizeof err);
      expect_unsupported(w, tl_world_set_velocity_limits(w, 1, &err), &err, "mujoco", "joint velocity limits");
      tl_world_set_default_material(w, 0.8, 0.0, 0.01, NULL);
      TL_CHECK(tl_world_step(w, NULL) == TL_OK, "mujoco: usable again");
      memset(&err, 0, sizeof err);
      TL_CHECK(tl_world_set_engine(w, "mujoco:cone=round", &err) == TL_ERR_ARGUMENT && strstr(err.message, "cone"),
               "mujoco: a bad option: %s", err.message);
      TL_CHECK(strcmp(tl_world_engine_name(w), "mujoco") == 0, "kept 'mujoco' after a bad option");
      tl_world_free(w);
    }
  }
done:
  tl_model_free(box);
  tl_model_free(mim);
}

/* ------------------------------------------------------------ native table */

static void test_native(void) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "talus_quadruped/talus_quadruped.urdf");
  tl_model *m = load(p, TL_BASE_FLOATING);
  if (!m) return;
  int nq = tl_model_nq(m), nv = tl_model_nv(m);
  double *q = calloc((size_t)(2 * nq + 6 * nv), sizeof(double));
  double *u = q + nq, *qa = u + nv, *ua = qa + nq, *kp = ua + nv, *kd = kp + nv, *zero = kd + nv;
  tl_system *s = NULL;
  tl_world *w = world_with("talus", m, 1, &s);
  if (!w || !q) goto done;
  place(s, m, q, u);
  for (int k = 6; k < nv; ++k) kp[k] = 300, kd[k] = 10;
  tl_system_set_pd_gains(s, kp, kd, nv, NULL);
  tl_system_set_pd_targets(s, q, nq, zero, nv, NULL);
  tl_engine_scene scene;
  tl_error err;
  memset(&err, 0, sizeof err);
  const tl_engine_api *api = tl_engine_native();
  tl_engine_world *ew = NULL;
  TL_CHECK(tl_engine_scene_of_world(w, &scene, &err) == TL_OK, "scene: %s", err.message);
  TL_CHECK(api->create(&scene, &ew, &err) == TL_OK, "native create: %s", err.message);
  tl_engine_scene_free(&scene);
  if (!ew) goto done;
  api->set_state(ew, 0, q, u, NULL);
  api->set_pd_gains(ew, 0, kp, kd, NULL);
  api->set_pd_targets(ew, 0, q, zero, NULL);
  int same = 1;
  for (int k = 0; k < 500 && same; ++k) {
    tl_world_step(w, NULL);
    api->integrate1(ew, NULL);
    api->integrate2(ew, NULL);
    tl_system_get_state(s, q, nq, u, nv, NULL);
    api->get_state(ew, 0, qa, ua, NULL);
    same = memcmp(q, qa, (size_t)nq * sizeof(double)) == 0 && memcmp(u, ua, (size_t)nv * sizeof(double)) == 0;
  }
  TL_CHECK(same, "the native table leaves the public API's trajectory");
  TL_CHECK(api->ncontact(ew) == tl_world_ncontact(w), "contacts: %d vs %d", api->ncontact(ew), tl_world_ncontact(w));
  api->destroy(ew);
done:
  tl_world_free(w);
  free(q);
  tl_model_free(m);
}

/* ------------------------------------------------------------ terrain */

static void test_terrain(void) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "ball/ball.urdf");
  tl_model *m = load(p, TL_BASE_FLOATING);
  if (!m) return;
  enum { NX = 21, NY = 21 };
  const double a = 0.1, b = 0.05, x0 = -1, y0 = -1, d = 0.1, r = 0.1, pen = 0.002;
  double h[NX * NY];
  for (int iy = 0; iy < NY; ++iy)
    for (int ix = 0; ix < NX; ++ix) h[iy * NX + ix] = a * (x0 + ix * d) + b * (y0 + iy * d);
  double nn = sqrt(1 + a * a + b * b), n[3] = {-a / nn, -b / nn, 1 / nn};
  const double at[5][2] = {{0.3, -0.4}, {-0.55, 0.62}, {0.71, 0.33}, {-0.2, -0.8}, {0.05, 0.0}};
  for (int i = 0; i < nengine; ++i) {
    tl_error err;
    memset(&err, 0, sizeof err);
    tl_world *w = NULL;
    tl_system *s = NULL;
    if (!TL_CHECK(tl_world_create_with_engine(&w, engines[i], &err) == TL_OK, "%s: %s", engines[i], err.message)) continue;
    int ok = tl_world_add_heightmap(w, NX, NY, x0, y0, d, d, h, NX * NY, NULL, NULL, &err) == TL_OK &&
             tl_world_add_system(w, m, &s, &err) == TL_OK;
    if (!TL_CHECK(ok, "%s: %s", engines[i], err.message)) {
      tl_world_free(w);
      continue;
    }
    double worst_depth = 0, worst_normal = 0;
    for (int k = 0; k < 5; ++k) {
      double x = at[k][0], y = at[k][1], zs = a * x + b * y;
      /* the centre at distance r - pen from the plane, along its normal */
      double q[7] = {x + n[0] * (r - pen), y + n[1] * (r - pen), zs + n[2] * (r - pen), 1, 0, 0, 0}, u[6] = {0};
      tl_system_set_state(s, q, 7, u, 6, NULL);
      if (!TL_CHECK(tl_world_integrate1(w, &err) == TL_OK, "%s: %s", engines[i], err.message)) break;
      int nc = tl_world_ncontact(w);
      double depth = -1, nd = 0;
      for (int c = 0; c < nc; ++c) {
        tl_contact_info ci;
        tl_world_contact(w, c, &ci, NULL);
        if (ci.depth > depth) depth = ci.depth, nd = fabs(ci.normal[0] - n[0]) + fabs(ci.normal[1] - n[1]) + fabs(ci.normal[2] - n[2]);
      }
      if (!TL_CHECK(nc > 0, "%s: no contact at (%g, %g)", engines[i], x, y)) continue;
      worst_depth = fmax(worst_depth, fabs(depth - pen));
      worst_normal = fmax(worst_normal, nd);
    }
    printf("terrain: %s: depth error %.2e m, normal error %.2e over 5 points\n", engines[i], worst_depth, worst_normal);
    /* normal 1e-2: MuJoCo collides a sphere with an hfield prism by its general convex routine
     * (MPR), 6e-3 off here; a flipped or shifted map would be centimetres off in depth */
    TL_CHECK(worst_depth < 1e-4 && worst_normal < 1e-2, "%s: the heightmap lies elsewhere (depth %g, normal %g)",
             engines[i], worst_depth, worst_normal);
    tl_world_free(w);
  }
  tl_model_free(m);
}

/* ------------------------------------------------------------ threads */

typedef struct drop_job {
  const tl_model *m;
  double z[MAX_ENGINES];
} drop_job;

static void *drop_all(void *arg) {
  drop_job *j = arg;
  for (int i = 0; i < nengine; ++i) {
    j->z[i] = NAN;
    tl_world *w = NULL;
    tl_system *s = NULL;
    if (tl_world_create_with_engine(&w, engines[i], NULL) != TL_OK) continue;
    if (tl_world_add_ground(w, 0, 0.8, NULL) == TL_OK && tl_world_add_system(w, j->m, &s, NULL) == TL_OK) {
      double q[7] = {0.1, 0.2, 0.4, 0.9, 0.1, 0.3, 0.2}, u[6] = {0.3, 0, 0, 1, 2, 0};
      tl_system_set_state(s, q, 7, u, 6, NULL);
      int ok = 1;
      for (int k = 0; k < 300 && ok; ++k) ok = tl_world_step(w, NULL) == TL_OK;
      tl_system_get_state(s, q, 7, u, 6, NULL);
      if (ok) j->z[i] = q[2] + q[0] + q[4];
    }
    tl_world_free(w);
  }
  return NULL;
}

static void test_threads(void) {
  char p[1024];
  robot_path(p, sizeof p, robots_dir, "box/box.urdf");
  tl_model *m = load(p, TL_BASE_FLOATING);
  if (!m) return;
  drop_job ref = {m, {0}}, jobs[4];
  drop_all(&ref);
  pthread_t th[4];
  for (int t = 0; t < 4; ++t) {
    jobs[t].m = m;
    TL_CHECK(pthread_create(&th[t], NULL, drop_all, &jobs[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < 4; ++t) pthread_join(th[t], NULL);
  for (int i = 0; i < nengine; ++i) {
    TL_CHECK(isfinite(ref.z[i]), "%s: the reference run failed", engines[i]);
    for (int t = 0; t < 4; ++t)
      TL_CHECK(jobs[t].z[i] == ref.z[i], "%s: thread %d ends at %.17g, the main thread at %.17g", engines[i], t,
               jobs[t].z[i], ref.z[i]);
  }
  printf("threads: 4 threads x %d engines, each bit-identical to the main thread\n", nengine);
  tl_model_free(m);
}

/* ------------------------------------------------------------ the command line */

static char *run_capture(const char *cmd, int *status) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t r = fread(buf + n, 1, cap - n - 1, p);
    n += r;
    if (r == 0) break;
    if (n + 1 >= cap) {
      char *g = realloc(buf, cap *= 2);
      if (!g) free(buf);
      buf = g;
    }
  }
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (buf) buf[n] = '\0';
  return buf;
}

static double jnum(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static void test_compare(const char *talus) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' compare '%s/talus_quadruped/talus_quadruped.urdf' --controller trot:speed=0.5 "
           "--duration 3 --json --engines %s,nosuchengine 2>/dev/null", talus, robots_dir, argv_engines);
  int status = -1;
  char *out = run_capture(cmd, &status);
  cJSON *root = out ? cJSON_Parse(out) : NULL;
  TL_CHECK(root != NULL, "compare --json: not JSON: %.200s", out ? out : "(nothing)");
  TL_CHECK(status == 1, "compare with a missing engine: exit status %d, expected 1", status);
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "engines");
  TL_CHECK(cJSON_GetArraySize(arr) == nengine + 1, "%d rows for %d engines", cJSON_GetArraySize(arr), nengine + 1);
  for (int i = 0; i < cJSON_GetArraySize(arr); ++i) {
    const cJSON *e = cJSON_GetArrayItem(arr, i);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "engine");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(e, "error");
    const cJSON *fell = cJSON_GetObjectItemCaseSensitive(e, "fell");
    const char *n = cJSON_IsString(name) ? name->valuestring : "?";
    if (i == nengine) {
      TL_CHECK(!strcmp(n, "nosuchengine") && cJSON_IsString(error) && strstr(error->valuestring, "engines found"),
               "the missing engine's row: %s", cJSON_IsString(error) ? error->valuestring : "(no error)");
      continue;
    }
    TL_CHECK(!strcmp(n, engines[i]), "row %d is '%s', expected '%s'", i, n, engines[i]);
    TL_CHECK(cJSON_IsNull(error), "%s: error in its row", n);
    TL_CHECK(cJSON_IsFalse(fell), "%s: fell", n);
    double d = jnum(e, "distance"), h = jnum(e, "height_mean"), f = jnum(e, "force"), wgt = jnum(e, "weight");
    printf("compare: %s: %.3f m in 3 s, height %.3f m, mean contact force %.1f N (m g %.1f N), %.0f steps/s\n", n, d,
           h, f, wgt, jnum(e, "steps_per_second"));
    TL_CHECK(d > 0.5 && h > 0.45 && fabs(f - wgt) < 0.1 * wgt, "%s: distance %g, height %g, force %g", n, d, h, f);
  }
  cJSON_Delete(root);
  free(out);
  for (int i = 0; i < nengine; ++i) {
    snprintf(cmd, sizeof cmd, "'%s' simulate --engine %s --duration 0.1 --json 2>/dev/null", talus, engines[i]);
    out = run_capture(cmd, &status);
    root = out ? cJSON_Parse(out) : NULL;
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(root, "engine");
    TL_CHECK(status == 0 && cJSON_IsString(en) && !strcmp(en->valuestring, engines[i]), "simulate --engine %s: status %d",
             engines[i], status);
    cJSON_Delete(root);
    free(out);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_engine MODE ENGINES ROBOTS_DIR [SHARED_DIR | FAKE_PLUGIN_DIR]\n");
    return 2;
  }
  const char *mode = argv[1];
  argv_engines = argv[2];
  for (const char *p = argv[2]; p && *p && nengine < MAX_ENGINES;) {
    const char *c = strchr(p, ',');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    snprintf(engines[nengine++], sizeof engines[0], "%.*s", (int)n, p);
    p = c ? c + 1 : NULL;
  }
  robots_dir = argv[3];
  const char *extra = argc > 4 ? argv[4] : NULL;
  if (!strcmp(mode, "plugins")) test_plugins(extra);
  else if (!strcmp(mode, "pendulum")) test_pendulum();
  else if (!strcmp(mode, "freefall")) test_freefall();
  else if (!strcmp(mode, "state")) test_state();
  else if (!strcmp(mode, "stand")) test_stand(tl_test_shared_dir(argc, argv, 4));
  else if (!strcmp(mode, "trot")) test_trot(tl_test_shared_dir(argc, argv, 4));
  else if (!strcmp(mode, "unsupported")) test_unsupported();
  else if (!strcmp(mode, "ode_internal")) test_ode_internal();
  else if (!strcmp(mode, "points")) test_points();
  else if (!strcmp(mode, "native")) test_native();
  else if (!strcmp(mode, "terrain")) test_terrain();
  else if (!strcmp(mode, "threads")) test_threads();
  else if (!strcmp(mode, "compare") && extra) test_compare(extra);
  else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  int rc = tl_test_finish();
  if (rc == 0 && tl_test_totals()->skipped > 0 && tl_test_totals()->passed == 0) return TL_TEST_SKIP_CODE;
  return rc;
}
