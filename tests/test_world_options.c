/* Guards: src/world/world_options.c (tl_world_options_default, tl_world_options_check),
 * src/world/world.c (tl_world_create_with_options, tl_world_set_options / get_options, the single
 * setters as wrappers, apply_options), src/engine/engine_scene.c and engine_link.c (the options
 * embedded in tl_engine_scene, the fingerprint over their bytes). */
/* tl_world_options (talus/world.h): one struct for every world setting.
 *
 * Usage: test_world_options [OPTIONS_PLUGIN_DIR]
 *   defaults     tl_world_options_default() holds the settings tl_world_create gave before the
 *                struct existed (dt 1e-3, gravity (0, 0, -9.81), per-contact solver, 100 sweeps,
 *                tol 1e-10, sor 1, erp 0.2, cfm 0, compliance 3e-3, margin 5e-3, slop 0,
 *                recovery 1 m/s, limit margin 0.02, velocity limits off, mu 0.8, e 0,
 *                threshold 0.01) and a new world's options are those bytes; the getters agree
 *   check        every field out of range (and NaN) is refused by tl_world_create_with_options
 *                and tl_world_set_options with TL_ERR_ARGUMENT naming the field (err.element);
 *                no world is made, a world's options stay byte for byte as they were
 *   roundtrip    options with every field changed: set then get gives the same bytes
 *   wrappers     the single setters and tl_world_set_options give the same options bytes and
 *                the same trajectory (a box dropped on the ground, bit for bit)
 *   effects      options-only settings act at once: a contact margin of 0.1 m gives a
 *                speculative contact to a box 5 cm above the ground (none at the default
 *                5 mm), and a new gravity changes the nonlinear term h at once (M, h stale)
 *   native       the native engine's table built from the scene of a world with every option
 *                changed steps a pendulum that hits its velocity limit like the world, bit for bit
 *   file         a world file's <solver> sets the margins (contact_margin, slop,
 *                max_recovery_speed, limit_margin) as well; a negative one is refused at its line
 *   plugin       (OPTIONS_PLUGIN_DIR: tests/options_engine.c built as the plugin "optcount")
 *                a world on a plugin engine: every field changed alone through
 *                tl_world_set_options rebuilds the plugin's world at the next step, and the
 *                plugin's scene holds the world's options byte for byte; setting the same
 *                options again rebuilds nothing */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/talus.h"
#include "test_util.h"

static const char *box_urdf =
    "<robot name='box'><link name='b'><inertial><mass value='2'/>"
    "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>"
    "<collision><geometry><box size='0.2 0.2 0.2'/></geometry></collision></link></robot>";

static tl_model *box_model(void) {
  tl_load_options o = tl_load_options_default();
  o.base = TL_BASE_FLOATING;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_model_load_urdf_string(box_urdf, strlen(box_urdf), "inline", &o, &m, &err) == TL_OK, "box: %s",
           err.message);
  return m;
}

static int same(const tl_world_options *a, const tl_world_options *b) { return memcmp(a, b, sizeof *a) == 0; }

static tl_world_options options_of(const tl_world *w) {
  tl_world_options o;
  memset(&o, 0xa5, sizeof o);
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_world_get_options(w, &o, &err) == TL_OK, "get_options: %s", err.message);
  return o;
}

static void test_defaults(void) {
  tl_world_options d = tl_world_options_default();
  TL_CHECK(d.dt == 1e-3 && d.gravity[0] == 0 && d.gravity[1] == 0 && d.gravity[2] == -9.81, "dt, gravity");
  TL_CHECK(d.solver == TL_SOLVER_PER_CONTACT && d.solver_max_iter == 100 && d.solver_tol == 1e-10 && d.sor == 1.0,
           "solver %d, %d sweeps, tol %g, sor %g", (int)d.solver, d.solver_max_iter, d.solver_tol, d.sor);
  TL_CHECK(d.erp == 0.2 && d.cfm == 0 && d.contact_compliance == 3e-3, "erp %g cfm %g compliance %g", d.erp, d.cfm,
           d.contact_compliance);
  TL_CHECK(d.contact_margin == 5e-3 && d.slop == 0 && d.max_recovery_speed == 1.0 && d.limit_margin == 0.02,
           "margins %g %g %g %g", d.contact_margin, d.slop, d.max_recovery_speed, d.limit_margin);
  TL_CHECK(d.velocity_limits == 0 && d.reserved == 0, "velocity limits %d", d.velocity_limits);
  TL_CHECK(d.default_mu == 0.8 && d.default_restitution == 0 && d.default_threshold == 0.01, "material %g %g %g",
           d.default_mu, d.default_restitution, d.default_threshold);
  tl_world_options d2 = tl_world_options_default();
  TL_CHECK(same(&d, &d2), "two defaults have the same bytes");

  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL, *w2 = NULL;
  TL_CHECK(tl_world_create(&w, &err) == TL_OK, "create: %s", err.message);
  TL_CHECK(tl_world_create_with_options(&w2, NULL, &err) == TL_OK, "create_with_options(NULL): %s", err.message);
  if (!w || !w2) return;
  tl_world_options a = options_of(w), b = options_of(w2);
  TL_CHECK(same(&a, &d) && same(&b, &d), "a new world's options are the defaults");
  double g[3];
  tl_world_gravity(w, g);
  TL_CHECK(tl_world_timestep(w) == d.dt && g[2] == d.gravity[2] && tl_world_velocity_limits(w) == 0, "getters");
  TL_CHECK(tl_world_get_options(w, NULL, &err) == TL_ERR_ARGUMENT, "get_options(NULL) refused");
  tl_world_free(w);
  tl_world_free(w2);
}

/* One bad value of one field. */
typedef struct bad_case {
  const char *field;
  void (*set)(tl_world_options *o, double v);
  double v;
} bad_case;

#define SETTER(f) \
  static void set_##f(tl_world_options *o, double v) { o->f = v; }
SETTER(dt)
SETTER(solver_tol)
SETTER(sor)
SETTER(erp)
SETTER(cfm)
SETTER(contact_compliance)
SETTER(contact_margin)
SETTER(slop)
SETTER(max_recovery_speed)
SETTER(limit_margin)
SETTER(default_mu)
SETTER(default_restitution)
SETTER(default_threshold)
static void set_gravity_y(tl_world_options *o, double v) { o->gravity[1] = v; }
static void set_solver(tl_world_options *o, double v) { o->solver = (tl_solver)(int)v; }
static void set_solver_max_iter(tl_world_options *o, double v) { o->solver_max_iter = (int)v; }
static void set_velocity_limits(tl_world_options *o, double v) { o->velocity_limits = (int)v; }
static void set_reserved(tl_world_options *o, double v) { o->reserved = (int)v; }

static void test_check(void) {
  const bad_case cases[] = {
      {"dt", set_dt, 0},           {"dt", set_dt, 2},        {"dt", set_dt, NAN},
      {"gravity", set_gravity_y, INFINITY},                  {"gravity", set_gravity_y, NAN},
      {"solver_tol", set_solver_tol, -1},                    {"solver_tol", set_solver_tol, NAN},
      {"sor", set_sor, 0},         {"sor", set_sor, 2},      {"erp", set_erp, -0.1},
      {"erp", set_erp, 1.5},       {"cfm", set_cfm, -1},     {"cfm", set_cfm, INFINITY},
      {"contact_compliance", set_contact_compliance, 1.5},   {"contact_margin", set_contact_margin, -1e-3},
      {"contact_margin", set_contact_margin, NAN},           {"slop", set_slop, -1},
      {"max_recovery_speed", set_max_recovery_speed, -1},    {"max_recovery_speed", set_max_recovery_speed, NAN},
      {"limit_margin", set_limit_margin, INFINITY},          {"default_mu", set_default_mu, -0.5},
      {"default_restitution", set_default_restitution, 1.1}, {"default_threshold", set_default_threshold, -1},
      {"solver", set_solver, 3},   {"solver", set_solver, -1},
      {"solver_max_iter", set_solver_max_iter, 0},           {"velocity_limits", set_velocity_limits, 2},
      {"reserved", set_reserved, 1}};
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  TL_CHECK(tl_world_create(&w, &err) == TL_OK, "create: %s", err.message);
  if (!w) return;
  tl_world_options before = options_of(w);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bad_case *c = &cases[i];
    tl_world_options o = tl_world_options_default();
    c->set(&o, c->v);
    tl_world *x = (tl_world *)&err; /* must become NULL */
    memset(&err, 0, sizeof err);
    tl_status st = tl_world_create_with_options(&x, &o, &err);
    TL_CHECK(st == TL_ERR_ARGUMENT && x == NULL && strcmp(err.element, c->field) == 0 && strstr(err.message, c->field),
             "create_with_options, %s = %g: status %d, element '%s', message '%s'", c->field, c->v, (int)st,
             err.element, err.message);
    memset(&err, 0, sizeof err);
    st = tl_world_set_options(w, &o, &err);
    tl_world_options after = options_of(w);
    TL_CHECK(st == TL_ERR_ARGUMENT && strcmp(err.element, c->field) == 0 && same(&before, &after),
             "set_options, %s = %g: status %d, element '%s', options unchanged %d", c->field, c->v, (int)st,
             err.element, same(&before, &after));
  }
  TL_CHECK(tl_world_set_options(w, NULL, &err) == TL_ERR_ARGUMENT, "set_options(NULL) refused");
  TL_CHECK(tl_world_options_check(NULL, &err) == TL_ERR_ARGUMENT, "check(NULL) refused");
  tl_world_options inf = tl_world_options_default();
  inf.max_recovery_speed = INFINITY; /* no cap: allowed */
  TL_CHECK(tl_world_options_check(&inf, &err) == TL_OK, "max_recovery_speed +inf allowed: %s", err.message);
  tl_world_free(w);
}

/* Options with every field away from its default (and valid). */
static tl_world_options changed_options(void) {
  tl_world_options o = tl_world_options_default();
  o.dt = 2e-3;
  o.gravity[0] = 0.5, o.gravity[1] = -0.25, o.gravity[2] = -9.0;
  o.solver_tol = 1e-8;
  o.sor = 1.3;
  o.erp = 0.4;
  o.cfm = 1e-6;
  o.contact_compliance = 1e-2;
  o.contact_margin = 1e-2;
  o.slop = 1e-4;
  o.max_recovery_speed = 0.5;
  o.limit_margin = 0.05;
  o.default_mu = 0.6;
  o.default_restitution = 0.3;
  o.default_threshold = 0.2;
  o.solver = TL_SOLVER_PGS;
  o.solver_max_iter = 40;
  o.velocity_limits = 1;
  return o;
}

/* The struct as slots: its doubles (8 bytes each, first), then its ints (4 bytes each) but the
 * last, `reserved`; found from the layout, so a field added to tl_world_options is a new slot. */
#define NDOUBLE ((int)(offsetof(tl_world_options, solver) / sizeof(double)))
#define NSLOT (NDOUBLE + (int)((sizeof(tl_world_options) - offsetof(tl_world_options, solver)) / sizeof(int)) - 1)
static size_t slot_at(int k) {
  return k < NDOUBLE ? (size_t)k * sizeof(double) : offsetof(tl_world_options, solver) + (size_t)(k - NDOUBLE) * sizeof(int);
}
static size_t slot_len(int k) { return k < NDOUBLE ? sizeof(double) : sizeof(int); }

static void test_roundtrip(void) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  TL_CHECK(tl_world_create(&w, &err) == TL_OK, "create: %s", err.message);
  if (!w) return;
  tl_world_options o = changed_options(), d = tl_world_options_default();
  const unsigned char *po = (const unsigned char *)&o, *pd = (const unsigned char *)&d;
  int differ = 0; /* every 8-byte double and 4-byte int of the struct changed, reserved aside */
  for (int k = 0; k < NSLOT; k++) differ += memcmp(po + slot_at(k), pd + slot_at(k), slot_len(k)) != 0;
  TL_CHECK(differ == NSLOT, "the changed options differ in every field (%d of %d)", differ, NSLOT);
  TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK, "set_options: %s", err.message);
  tl_world_options back = options_of(w);
  TL_CHECK(same(&o, &back), "set then get: the same bytes");
  double g[3];
  tl_world_gravity(w, g);
  TL_CHECK(tl_world_timestep(w) == 2e-3 && g[0] == 0.5 && tl_world_velocity_limits(w) == 1, "the getters see them");
  tl_world *w2 = NULL;
  TL_CHECK(tl_world_create_with_options(&w2, &o, &err) == TL_OK, "create_with_options: %s", err.message);
  if (w2) {
    back = options_of(w2);
    TL_CHECK(same(&o, &back), "create_with_options keeps them");
    tl_world_free(w2);
  }
  o.solver = TL_SOLVER_DANTZIG; /* needs its scratch: set_options reserves it */
  TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK && options_of(w).solver == TL_SOLVER_DANTZIG, "Dantzig: %s",
           err.message);
  tl_world_free(w);
}

/* A box 0.3 m above the ground on world w, 1500 steps; final q (7) and u (6). */
static void drop_box(tl_world *w, const tl_model *m, double q[7], double u[6]) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_system *s = NULL;
  TL_CHECK(tl_world_add_ground(w, 0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK, "scene: %s",
           err.message);
  if (!s) return;
  double q0[7] = {0.05, -0.02, 0.3, 0.9800665778, 0.0998334166, 0, 0}, u0[6] = {0.4, 0, 0, 0, 0, 2.0};
  TL_CHECK(tl_system_set_state(s, q0, 7, u0, 6, &err) == TL_OK, "state: %s", err.message);
  for (int i = 0; i < 1500; i++)
    if (!TL_CHECK(tl_world_step(w, &err) == TL_OK, "step %d: %s", i, err.message)) return;
  tl_system_get_state(s, q, 7, u, 6, &err);
}

static void test_wrappers(const tl_model *m) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world_options o = changed_options();
  o.velocity_limits = 0; /* the box has no joint */
  tl_world *a = NULL, *b = NULL;
  TL_CHECK(tl_world_create(&a, &err) == TL_OK && tl_world_create(&b, &err) == TL_OK, "create: %s", err.message);
  if (!a || !b) return;
  /* a: the single setters; the options-only fields through the struct */
  tl_world_options margins = options_of(a);
  margins.contact_margin = o.contact_margin, margins.slop = o.slop;
  margins.max_recovery_speed = o.max_recovery_speed, margins.limit_margin = o.limit_margin;
  tl_status st = tl_world_set_options(a, &margins, &err);
  if (!st) st = tl_world_set_timestep(a, o.dt, &err);
  if (!st) st = tl_world_set_gravity(a, o.gravity, &err);
  if (!st) st = tl_world_set_solver(a, o.solver, &err);
  if (!st) st = tl_world_set_solver_params(a, o.solver_max_iter, o.solver_tol, o.sor, &err);
  if (!st) st = tl_world_set_erp_cfm(a, o.erp, o.cfm, &err);
  if (!st) st = tl_world_set_contact_compliance(a, o.contact_compliance, &err);
  if (!st) st = tl_world_set_velocity_limits(a, o.velocity_limits, &err);
  if (!st) st = tl_world_set_default_material(a, o.default_mu, o.default_restitution, o.default_threshold, &err);
  TL_CHECK(st == TL_OK, "setters: %s", err.message);
  /* b: the struct at once */
  TL_CHECK(tl_world_set_options(b, &o, &err) == TL_OK, "set_options: %s", err.message);
  tl_world_options oa = options_of(a), ob = options_of(b);
  TL_CHECK(same(&oa, &ob) && same(&ob, &o), "setters and set_options give the same bytes");
  /* a wrapper's refusal leaves the options as they were */
  TL_CHECK(tl_world_set_erp_cfm(a, 2.0, 0, &err) == TL_ERR_ARGUMENT && strcmp(err.element, "erp") == 0,
           "set_erp_cfm(2) refused naming erp");
  oa = options_of(a);
  TL_CHECK(same(&oa, &o), "a refused setter changes nothing");
  double qa[7] = {0}, ua[6] = {0}, qb[7] = {1}, ub[6] = {1};
  drop_box(a, m, qa, ua);
  drop_box(b, m, qb, ub);
  TL_CHECK(memcmp(qa, qb, sizeof qa) == 0 && memcmp(ua, ub, sizeof ua) == 0,
           "the same trajectory bit for bit (z %.17g vs %.17g)", qa[2], qb[2]);
  TL_CHECK(qa[2] > 0.09 && qa[2] < 0.11, "the box rests on the ground (z %g)", qa[2]);
  tl_world_free(a);
  tl_world_free(b);
}

static void test_effects(const tl_model *m) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  tl_system *s = NULL;
  TL_CHECK(tl_world_create(&w, &err) == TL_OK && tl_world_add_ground(w, 0, 0.8, &err) == TL_OK &&
               tl_world_add_system(w, m, &s, &err) == TL_OK,
           "scene: %s", err.message);
  if (!s) return;
  double q0[7] = {0, 0, 0.15, 1, 0, 0, 0}, u0[6] = {0}; /* bottom face 5 cm above the ground */
  tl_system_set_state(s, q0, 7, u0, 6, &err);
  TL_CHECK(tl_world_integrate1(w, &err) == TL_OK && tl_world_ncontact(w) == 0, "default margin: %d contacts",
           tl_world_ncontact(w));
  tl_world_integrate2(w, &err);
  tl_world_options o = options_of(w);
  o.contact_margin = 0.1;
  TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK, "margin 0.1: %s", err.message);
  tl_system_set_state(s, q0, 7, u0, 6, &err);
  TL_CHECK(tl_world_integrate1(w, &err) == TL_OK && tl_world_ncontact(w) == 4,
           "margin 0.1 m: 4 speculative contacts under the box, got %d", tl_world_ncontact(w));
  tl_world_integrate2(w, &err);

  double h0[6], h1[6];
  tl_system_set_state(s, q0, 7, u0, 6, &err);
  TL_CHECK(tl_system_nonlinear_term(s, h0, 6, &err) == TL_OK, "h: %s", err.message);
  o.gravity[2] = -3.0;
  TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK, "gravity: %s", err.message);
  TL_CHECK(tl_system_nonlinear_term(s, h1, 6, &err) == TL_OK, "h: %s", err.message);
  TL_CHECK(fabs(h0[2] - 2 * 9.81) < 1e-12 && fabs(h1[2] - 2 * 3.0) < 1e-12, "h_z = m g: %g then %g", h0[2], h1[2]);
  tl_world_free(w);
}

static const char *pendulum_urdf =
    "<robot name='p'><link name='base'/><link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>"
    "<inertia ixx='0.001' iyy='0.02' izz='0.02' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='hinge' type='revolute'><parent link='base'/><child link='arm'/><axis xyz='0 1 0'/>"
    "<limit lower='-1' upper='1' effort='100' velocity='1.5'/></joint></robot>";

/* The native engine's table (tl_engine_native) built from the scene of a world with every option
 * changed (velocity limits and the margins included) steps like the world bit for bit: the scene
 * carries every setting, not the seven setters' worth it used to (velocity limits, contact margin,
 * slop, recovery speed and limit margin were dropped). The pendulum starts at rest horizontal: it
 * swings faster than its velocity limit (1.5 rad/s) and into its joint limit (1 rad). */
static void test_native_table(void) {
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  tl_model *m = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_model_load_urdf_string(pendulum_urdf, strlen(pendulum_urdf), "inline", &lo, &m, &err) == TL_OK,
                "pendulum: %s", err.message))
    return;
  tl_world_options o = changed_options();
  o.solver = TL_SOLVER_PER_CONTACT;
  tl_world *w = NULL;
  tl_system *s = NULL;
  TL_CHECK(tl_world_create_with_options(&w, &o, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK,
           "world: %s", err.message);
  tl_engine_scene scene;
  tl_engine_world *ew = NULL;
  const tl_engine_api *api = tl_engine_native();
  if (s && TL_CHECK(tl_engine_scene_of_world(w, &scene, &err) == TL_OK, "scene: %s", err.message)) {
    TL_CHECK(memcmp(&scene.options, &o, sizeof o) == 0, "the scene holds the world's options byte for byte");
    TL_CHECK(api->create(&scene, &ew, &err) == TL_OK, "native create: %s", err.message);
    tl_engine_scene_free(&scene);
  }
  if (ew) {
    double q[1] = {0}, u[1] = {0}, qa[1], ua[1], umax = 0;
    tl_system_set_state(s, q, 1, u, 1, &err);
    api->set_state(ew, 0, q, u, &err);
    int same = 1;
    for (int k = 0; k < 400 && same; k++) {
      tl_world_step(w, &err);
      api->integrate1(ew, &err);
      api->integrate2(ew, &err);
      tl_system_get_state(s, q, 1, u, 1, &err);
      api->get_state(ew, 0, qa, ua, &err);
      same = memcmp(q, qa, sizeof q) == 0 && memcmp(u, ua, sizeof u) == 0;
      umax = fmax(umax, fabs(u[0]));
    }
    TL_CHECK(same, "the native table steps like the world bit for bit (q %.17g vs %.17g)", q[0], qa[0]);
    TL_CHECK(umax <= 1.5 + 1e-9 && umax > 1.4, "the velocity limit holds: max |u| %.12g rad/s", umax);
    api->destroy(ew);
  }
  tl_world_free(w);
  tl_model_free(m);
}

/* A world file's <solver> sets the options-only fields too (contact_margin, slop, max_recovery_speed,
 * limit_margin); a negative one is refused naming the file, line and attribute; without them the
 * defaults stay. */
static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

static void test_world_file(void) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/talus_world_options_%d.xml", (int)getpid());
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  const char *good = "<talus_world>\n  <solver type=\"pgs\" erp=\"0.3\" contact_margin=\"0.02\" slop=\"0.001\"\n"
                     "          max_recovery_speed=\"0.5\" limit_margin=\"0.03\"/>\n</talus_world>\n";
  if (!TL_CHECK(write_file(path, good) == 0, "write %s", path)) return;
  if (TL_CHECK(tl_scene_load(path, &w, NULL, &err) == TL_OK, "load: %s", err.message)) {
    tl_world_options o = options_of(w), want = tl_world_options_default();
    want.solver = TL_SOLVER_PGS, want.erp = 0.3;
    want.contact_margin = 0.02, want.slop = 0.001, want.max_recovery_speed = 0.5, want.limit_margin = 0.03;
    TL_CHECK(same(&o, &want), "the file's settings, the rest the defaults (margin %g, slop %g, recovery %g, "
             "limit margin %g)", o.contact_margin, o.slop, o.max_recovery_speed, o.limit_margin);
    tl_world_free(w);
    w = NULL;
  }
  const char *bad = "<talus_world>\n  <solver slop=\"-0.01\"/>\n</talus_world>\n";
  if (TL_CHECK(write_file(path, bad) == 0, "write %s", path)) {
    tl_status st = tl_scene_load(path, &w, NULL, &err);
    TL_CHECK(st != TL_OK && w == NULL && err.line == 2 && strstr(err.message, "slop") && strstr(err.file, path),
             "slop -0.01 refused at %s:%d: %s", err.file, err.line, err.message);
    tl_world_free(w);
  }
  remove(path);
}

/* The options' bytes as the plugin writes them (two hex digits each). */
static void hex_of(const tl_world_options *o, char *out) {
  const unsigned char *b = (const unsigned char *)o;
  for (size_t i = 0; i < sizeof *o; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Step w once; the plugin's create count and whether its scene held w's options. */
static int step_and_read(tl_world *w, int *ncreate) {
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_world_step(w, &err) == TL_OK, "step: %s", err.message);
  char seen[512] = "", want[2 * sizeof(tl_world_options) + 1];
  *ncreate = -1;
  const char *notes = tl_world_engine_notes(w);
  TL_CHECK(sscanf(notes, "create %d options %511s", ncreate, seen) == 2, "notes: '%s'", notes);
  tl_world_options o = options_of(w);
  hex_of(&o, want);
  return strcmp(seen, want) == 0;
}

static void test_plugin(const char *dir, const tl_model *m) {
  setenv("TALUS_PLUGIN_PATH", dir, 1);
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_world *w = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_world_create_with_engine(&w, "optcount", &err) == TL_OK, "engine optcount from %s: %s", dir,
                err.message))
    return;
  TL_CHECK(tl_world_add_ground(w, 0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK, "scene: %s",
           err.message);
  int n0 = 0, n = 0;
  TL_CHECK(step_and_read(w, &n0), "the plugin's scene holds the world's options byte for byte");
  TL_CHECK(step_and_read(w, &n) && n == n0, "a step without a change rebuilds nothing (%d, %d)", n0, n);
  const tl_world_options changed = changed_options();
  for (int k = 0; k < NSLOT; k++) { /* every field alone */
    tl_world_options o = options_of(w);
    memcpy((char *)&o + slot_at(k), (const char *)&changed + slot_at(k), slot_len(k));
    TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK, "field %d: set_options: %s", k, err.message);
    int before = n;
    int held = step_and_read(w, &n);
    TL_CHECK(n == before + 1 && held, "field %d (offset %zu) changed alone: the plugin's world rebuilt (%d -> %d) "
             "from a scene holding the new options (%d)", k, slot_at(k), before, n, held);
  }
  tl_world_options o = options_of(w);
  int before = n;
  TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK && step_and_read(w, &n) && n == before,
           "the same options again: no rebuild (%d -> %d)", before, n);
  TL_CHECK(tl_world_set_erp_cfm(w, 0.7, 0, &err) == TL_OK && step_and_read(w, &n) && n == before + 1,
           "a single setter (erp): rebuilt (%d -> %d)", before, n);
  before = n;
  o = options_of(w);
  o.gravity[2] = o.gravity[2] == -9.0 ? -9.5 : -9.0;
  TL_CHECK(tl_world_set_options(w, &o, &err) == TL_OK && step_and_read(w, &n) && n == before + 1,
           "gravity through the struct: rebuilt (%d -> %d)", before, n);
  tl_world_free(w);
}

int main(int argc, char **argv) {
  test_defaults();
  test_check();
  test_roundtrip();
  tl_model *m = box_model();
  if (m) {
    test_wrappers(m);
    test_effects(m);
    if (argc > 1) test_plugin(argv[1], m);
  }
  test_native_table();
  test_world_file();
  tl_model_free(m);
  return tl_test_finish();
}
