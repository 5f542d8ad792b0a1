/* talus_bench: a step with contacts (see bench_contact.h).
 *
 * Per robot: the model is loaded with a floating base; the base gets the
 * spec's orientation and is lifted so that its lowest collision geom point
 * (primitives: their world AABB; meshes: their convex hull's vertices) is
 * CONTACT_DROP above the ground plane z = 0 (friction CONTACT_GROUND_MU);
 * every other DOF holds the reference configuration (joints whose limits
 * leave out 0 moved inside them, clamp_into_limits) with the implicit PD
 * (the spec's kp, kd; velocity target 0). Talus: tl_world_add_ground and the
 * world's default solver (the per-contact exact Coulomb cone). The peer
 * (MuJoCo) gets the same model with collision geoms and a plane (see
 * peer_mujoco.c) at the same start state, twice: with MuJoCo's default
 * contact settings, and with those MuJoCo Menagerie's quadrupeds use
 * against slip (elliptic cone, impratio 100; with the defaults, the feet of a standing
 * quadruped creep outwards and its base sinks by several mm per second). Both engines step
 * CONTACT_SETTLE_STEPS times on their own, then their steps are timed
 * (bench_timing.c, batches interleaved) while the simulation goes on,
 * never reset; an engine that made fewer steps than another while timed
 * then catches up, untimed, so that all have simulated the same time.
 * Reported: microseconds per step, the contacts after the last step, and
 * the base height at that time in every engine: within CONTACT_Z_TOL of
 * each other, the engines stand alike. */
#define _POSIX_C_SOURCE 200809L

#include "bench_contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "talus/talus.h"

#include "bench_mem.h"
#include "bench_peer.h"
#include "bench_scene.h"

#ifdef TALUS_BENCH_MUJOCO
#define HAVE_PEER 1
#else
#define HAVE_PEER 0
#endif

#define QUARTER_TURN_C 0.70710678118654752440 /* cos 45 deg = sin 45 deg */

static const contact_spec specs[] = {
    {"anymal_c/anymal", 300, 10, {1, 0, 0, 0}, "FOOT",
     "kp 300, kd 10: the stand controller's defaults, sized for ANYmal (controllers/stand.h)"},
    {"hyq", 300, 10, {1, 0, 0, 0}, "foot", "kp 300, kd 10, as for ANYmal (an ANYmal-size robot)"},
    {"solo12", 3, 0.1, {1, 0, 0, 0}, "FOOT", "kp 3, kd 0.1: tests/test_contact_robots.c, solo12"},
    {"talus_quadruped", 300, 10, {1, 0, 0, 0}, "FOOT",
     "kp 300, kd 10: the stand controller's defaults (`talus simulate`)"},
    {"deepmimic_humanoid", 2000, 100, {QUARTER_TURN_C, QUARTER_TURN_C, 0, 0}, "ankle",
     "kp 2000, kd 100 and the base turned +90 deg about x (Y-up model): "
     "tests/test_humanoid_stand.c"},
};

const char contact_left_out[] =
    "anymal_c/anymal_c_nolimit (the same ANYmal without joint limits), talos (biped with mesh "
    "soles; no gains known to make it stand: the test suite only runs it in free flight), husky "
    "(wheels, no feet) and the fixed-base robots";

const contact_spec *contact_spec_of(const char *label) {
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; ++k)
    if (strcmp(specs[k].label, label) == 0) return &specs[k];
  return NULL;
}

/* ------------------------------------------------------------ Talus */

typedef struct talus_stepper {
  tl_world *world;
  tl_status st;
  tl_error err;
} talus_stepper;

static void t_step(void *ctx) {
  talus_stepper *c = ctx;
  tl_status st = tl_world_step(c->world, &c->err);
  if (st != TL_OK && c->st == TL_OK) c->st = st;
}

static void t_clear(void *ctx) {
  talus_stepper *c = ctx;
  c->st = TL_OK;
  memset(&c->err, 0, sizeof c->err);
}

static int t_failed(void *ctx, char *why, size_t len) {
  talus_stepper *c = ctx;
  if (c->st == TL_OK) return 0;
  snprintf(why, len, "%.290s", c->err.message[0] ? c->err.message : tl_status_name(c->st));
  return 1;
}

/* Lowest z of the collision geoms (primitives: world AABB; meshes: hull
 * vertices); INFINITY when there is none. */
/* Time the engines go[0..ngo) (those that settled; idx: their slots in us,
 * why and calls, which may be NULL) by interleaved batches. */
static void time_settled(const timed *go, const int *idx, int ngo, int batches, double batch_s, double *us,
                         char (*why)[TIMED_WHY], long *calls) {
  char gofail[1 + CONTACT_NPEER][TIMED_WHY];
  memset(gofail, 0, sizeof gofail);
  double gous[1 + CONTACT_NPEER];
  long gocalls[1 + CONTACT_NPEER];
  time_queries(go, ngo, batches, batch_s, gous, gofail, gocalls);
  for (int i = 0; i < ngo; ++i) {
    us[idx[i]] = gous[i];
    if (calls) calls[idx[i]] = gocalls[i];
    memcpy(why[idx[i]], gofail[i], TIMED_WHY);
  }
}

static double lowest_point(tl_system *sys, const tl_model *m) {
  double minz = INFINITY;
  for (int g = 0; g < tl_model_ngeom(m); ++g) {
    tl_geom_type type;
    int body, nvert, nface;
    double size[3], pos[3], R[9], lo[3], hi[3], gp[3], gR[9];
    const double *v;
    const int *f;
    if (tl_model_geom(m, g, &type, &body, size, pos, R, NULL) != 0) continue;
    if (type != TL_GEOM_MESH) {
      if (tl_system_geom_aabb(sys, g, lo, hi, NULL) == TL_OK) minz = fmin(minz, lo[2]);
      continue;
    }
    if (tl_model_geom_hull(m, g, &nvert, &v, &nface, &f, NULL) != 0 ||
        tl_system_geom_pose(sys, g, gp, gR, NULL) != TL_OK)
      continue;
    for (int i = 0; i < nvert; ++i)
      minz = fmin(minz, gp[2] + gR[6] * v[3 * i] + gR[7] * v[3 * i + 1] + gR[8] * v[3 * i + 2]);
  }
  return minz;
}

static int has_tag(const char *s, const char *tag) {
  if (!s) return 0;
  size_t n = strlen(tag);
  for (; *s; ++s)
    if (strncasecmp(s, tag, n) == 0) return 1;
  return 0;
}

/* Contacts of the last step: all, with a positive normal impulse, and of
 * those, the ones on a foot link. */
static void talus_contacts(const tl_world *w, const tl_model *m, const char *feet,
                           contact_result *r) {
  r->ncontact = tl_world_ncontact(w);
  r->nactive = r->nfoot = 0;
  for (int k = 0; k < r->ncontact; ++k) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) != TL_OK) continue;
    double pn = c.impulse[0] * c.normal[0] + c.impulse[1] * c.normal[1] + c.impulse[2] * c.normal[2];
    if (!(pn > 0)) continue;
    ++r->nactive;
    if (m) r->nfoot += has_tag(tl_model_geom_link(m, c.geom), feet);
  }
}

/* Every 1-DOF joint of q outside its limits (the reference configuration:
 * HyQ's knees, whose limits leave out 0) moved CONTACT_LIMIT_MARGIN inside
 * them; returns how many were moved. */
static int clamp_into_limits(const tl_model *m, double *q) {
  int n = 0;
  for (int b = 0; b < tl_model_nbody(m); ++b) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC) continue;
    double lo = -INFINITY, hi = INFINITY, *x = q + tl_model_joint_q_index(m, b);
    tl_model_dof_limits(m, tl_model_joint_u_index(m, b), &lo, &hi, NULL);
    if (!(hi - lo > 2 * CONTACT_LIMIT_MARGIN) || (*x >= lo && *x <= hi)) continue;
    *x = *x < lo ? lo + CONTACT_LIMIT_MARGIN : hi - CONTACT_LIMIT_MARGIN;
    ++n;
  }
  return n;
}

/* Contacts of a world after its last step: all, and with a positive normal impulse. */
static void count_contacts(const tl_world *w, int *n, int *active) {
  *n = tl_world_ncontact(w);
  *active = 0;
  for (int k = 0; k < *n; ++k) {
    tl_contact_info c;
    if (tl_world_contact(w, k, &c, NULL) != TL_OK) continue;
    *active += c.impulse[0] * c.normal[0] + c.impulse[1] * c.normal[1] + c.impulse[2] * c.normal[2] > 0;
  }
}

static char ode_doc[1600];

const char *bench_contact_ode_doc(void) {
  return ode_doc[0] ? ode_doc : "no ODE world was built in this run";
}

/* The ODE peer: the same robot, state, gains and ground in a world on the ODE engine plugin
 * (talus-engine-ode, through include/talus/engine.h): a Talus world whose step ODE serves, so
 * its time includes the interface's per-step exchange of state and control. */
static tl_system *ode_world(const tl_model *model, const double *q, const double *u, const double *kp,
                            const double *kd, const double *zero, talus_stepper *os, char *error,
                            size_t len) {
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_system *sys = NULL;
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  tl_status st = tl_world_create_with_engine(&os->world, "ode", &err);
  if (st == TL_OK) st = tl_world_add_ground(os->world, 0.0, CONTACT_GROUND_MU, &err);
  if (st == TL_OK) st = tl_world_add_system(os->world, model, &sys, &err);
  if (st == TL_OK) st = tl_system_set_state(sys, q, nq, u, nv, &err);
  if (st == TL_OK) st = tl_system_set_pd_gains(sys, kp, kd, nv, &err);
  if (st == TL_OK) st = tl_system_set_pd_targets(sys, q, nq, zero, nv, &err);
  if (st == TL_OK) st = tl_world_integrate1(os->world, &err); /* builds the ODE world: errors now */
  if (st != TL_OK) {
    snprintf(error, len, "%.590s", err.message[0] ? err.message : tl_status_name(st));
    tl_world_free(os->world);
    os->world = NULL;
    return NULL;
  }
  if (!ode_doc[0]) {
    const tl_engine_api *api = NULL;
    tl_engine_find("ode", &api, NULL);
    snprintf(ode_doc, sizeof ode_doc, "%s through Talus's engine interface (plugin talus-engine-ode: %s; "
             "its notes for this scene: %s); the PD's kp, kd as in the step column",
             api ? tl_engine_version(api) : "ODE", api ? tl_engine_description(api) : "", tl_world_engine_notes(os->world));
    for (char *c = ode_doc; *c; ++c)
      if (*c == '\n') *c = ';';
  }
  return sys;
}

/* ------------------------------------------------------ step derivatives */

int step_deriv_robot(const char *label) {
  return strcmp(label, "anymal_c/anymal") == 0 || strcmp(label, "deepmimic_humanoid") == 0 ||
         strcmp(label, "talus_quadruped") == 0;
}

typedef struct talus_deriv {
  tl_world *world;
  tl_step_derivatives *ws;
  tl_deriv_mode mode;
  double *A, *B;
  int nv;
  tl_status st;
  tl_error err;
} talus_deriv;

static void td_call(void *ctx) {
  talus_deriv *c = ctx;
  tl_status st = tl_world_step_derivatives(c->world, c->ws, c->mode, c->A, c->B, c->nv, NULL, &c->err);
  if (st != TL_OK && c->st == TL_OK) c->st = st;
}

static void td_clear(void *ctx) {
  talus_deriv *c = ctx;
  c->st = TL_OK;
  memset(&c->err, 0, sizeof c->err);
}

static int td_failed(void *ctx, char *why, size_t len) {
  talus_deriv *c = ctx;
  if (c->st == TL_OK) return 0;
  snprintf(why, len, "%.290s", c->err.message[0] ? c->err.message : tl_status_name(c->st));
  return 1;
}

/* Time the step derivatives of the settled world (and of the peer, NULL if
 * none) into d; the world and the peer are left at their state. */
static void time_step_derivatives(tl_world *world, void *peer, step_deriv_result *d, int batches,
                                  double batch_s) {
  d->attempted = 1;
  d->us = d->fd_us = d->peer_us = d->peer_fwd_us = NAN;
  tl_error err;
  memset(&err, 0, sizeof err);
  talus_deriv td[2];
  memset(td, 0, sizeof td);
  tl_step_derivatives *ws = NULL;
  double *buf = NULL;
  tl_status st = tl_step_derivatives_create(world, &ws, &err);
  int nv = st == TL_OK ? tl_step_derivatives_nv(ws) : 0;
  if (st == TL_OK) st = tl_step_derivatives_set_eps(ws, BENCH_DERIV_EPS, &err);
  if (st == TL_OK && !(buf = calloc(6 * (size_t)nv * (size_t)nv + 1, sizeof(double))))
    st = tl_error_set(&err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  tl_deriv_mode used = TL_DERIV_ANALYTIC;
  if (st == TL_OK) /* which mode the analytic call uses here (and a first check that it works) */
    st = tl_world_step_derivatives(world, ws, TL_DERIV_ANALYTIC, buf, buf + 4 * nv * nv, nv, &used, &err);
  if (st != TL_OK) {
    snprintf(d->error, sizeof d->error, "%.590s", err.message[0] ? err.message : tl_status_name(st));
    tl_step_derivatives_free(ws);
    free(buf);
    return;
  }
  d->nv = nv;
  d->used = (int)used;
  d->ncontact = tl_world_ncontact(world);
  timed t[4];
  int nt = 2;
  for (int k = 0; k < 2; ++k) {
    td[k] = (talus_deriv){world, ws, k ? TL_DERIV_FD_CENTRED : TL_DERIV_ANALYTIC, buf,
                          buf + 4 * nv * nv, nv, TL_OK, {0}};
    t[k] = (timed){&td[k], td_call, timed_no_reset, td_clear, td_failed};
  }
#if HAVE_PEER
  if (peer) {
    d->peer_attempted = 1;
    if (bench_peer_deriv_prepare(peer, d->peer_error, sizeof d->peer_error) == 0) {
      d->peer_built = 1;
      d->peer_nu = bench_peer_deriv_nu(peer);
      t[nt++] = (timed){peer, bench_peer_deriv_centred, timed_no_reset, bench_peer_clear, bench_peer_failed};
      t[nt++] = (timed){peer, bench_peer_deriv_forward, timed_no_reset, bench_peer_clear, bench_peer_failed};
    }
  }
#else
  (void)peer;
#endif
  double us[4];
  char why[4][TIMED_WHY];
  memset(why, 0, sizeof why);
  time_queries(t, nt, batches, batch_s, us, why, NULL);
  d->us = us[0];
  d->fd_us = us[1];
  memcpy(d->failed, why, sizeof d->failed);
  if (nt == 4) {
    d->peer_us = us[2];
    d->peer_fwd_us = us[3];
    memcpy(d->peer_failed, why + 2, sizeof d->peer_failed);
  }
  tl_step_derivatives_free(ws);
  free(buf);
}

/* ------------------------------------------------------------ per robot */

/* The Talus world of the contact step of `spec` (not yet settled): model,
 * world with ground and system, and the start state q (nq) with zero
 * velocities and gains after it (zero: nv zeros). r receives the model and
 * world bytes, the start height and the joints moved into their limits.
 * Returns 0, or -1 with the reason in err (what was built is freed). */
static int contact_setup(const char *path, const contact_spec *spec, contact_result *r,
                         tl_model **model_out, tl_world **world_out, tl_system **sys_out,
                         double **q_out, tl_error *err) {
  tl_model *model = NULL;
  tl_world *world = NULL;
  tl_system *sys = NULL;
  double *q = NULL;
  tl_load_options opt = tl_load_options_default();
  opt.base = TL_BASE_FLOATING;
  *model_out = NULL;
  *world_out = NULL;
  *q_out = NULL;
  size_t live0 = bench_mem_live();
  if (tl_model_load_urdf(path, &opt, &model, err) != TL_OK) return -1;
  r->model_bytes = bench_mem_live() - live0;
  live0 = bench_mem_live();
  tl_status st = tl_world_create(&world, err);
  if (st == TL_OK) st = tl_world_add_ground(world, 0.0, CONTACT_GROUND_MU, err);
  if (st == TL_OK) st = tl_world_add_system(world, model, &sys, err);
  r->world_bytes = bench_mem_live() - live0;
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  q = calloc((size_t)nq + 4 * (size_t)nv + 1, sizeof(double));
  double *u = q ? q + nq : NULL, *kp = u ? u + nv : NULL, *kd = kp ? kp + nv : NULL;
  double *zero = kd ? kd + nv : NULL;
  if (st == TL_OK && !q) st = tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  if (st == TL_OK) st = tl_model_reference_q(model, q, nq, err);
  if (st == TL_OK) {
    memcpy(q + 3, spec->quat, 4 * sizeof(double));
    r->nclamped = clamp_into_limits(model, q);
    st = tl_system_set_state(sys, q, nq, u, nv, err);
  }
  if (st == TL_OK) {
    double minz = lowest_point(sys, model);
    if (!isfinite(minz)) st = tl_error_set(err, TL_ERR_INVALID, NULL, 0, NULL, "no collision geom to stand on");
    q[2] += CONTACT_DROP - minz;
    r->z0 = q[2];
    if (st == TL_OK) st = tl_system_set_state(sys, q, nq, u, nv, err);
  }
  if (st == TL_OK) {
    for (int k = 6; k < nv; ++k) kp[k] = spec->kp, kd[k] = spec->kd; /* not the base DOFs */
    st = tl_system_set_pd_gains(sys, kp, kd, nv, err);
  }
  if (st == TL_OK) st = tl_system_set_pd_targets(sys, q, nq, zero, nv, err);
  if (st != TL_OK) {
    tl_world_free(world);
    tl_model_free(model);
    free(q);
    return -1;
  }
  *model_out = model;
  *world_out = world;
  *sys_out = sys;
  *q_out = q;
  return 0;
}

int bench_contact_world(const char *path, const contact_spec *spec, tl_world **out, tl_error *err) {
  contact_result r;
  tl_model *model;
  tl_system *sys;
  double *q;
  memset(&r, 0, sizeof r);
  if (contact_setup(path, spec, &r, &model, out, &sys, &q, err)) return -1;
  tl_model_free(model);
  free(q);
  for (int i = 0; i < CONTACT_SETTLE_STEPS; ++i)
    if (tl_world_step(*out, err) != TL_OK) {
      tl_world_free(*out);
      *out = NULL;
      return -1;
    }
  return 0;
}

void bench_contact_robot(const char *path, const contact_spec *spec, contact_result *r,
                         int batches, double batch_s, int use_peer) {
  memset(r, 0, sizeof(*r));
  r->spec = spec;
  r->us = r->z = r->z0 = NAN;
  for (int k = 0; k < CONTACT_NPEER; ++k) r->peer[k].us = r->peer[k].z = r->peer[k].xcheck_max = NAN;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_model *model = NULL;
  talus_stepper ts;
  memset(&ts, 0, sizeof ts);
  tl_system *sys = NULL;
  double *q = NULL;
  if (contact_setup(path, spec, r, &model, &ts.world, &sys, &q, &err) != 0) {
    snprintf(r->error, sizeof r->error, "setup: %.500s", err.message[0] ? err.message : "failed");
    return;
  }

  /* t[0]: Talus; then the peers (owner: their index in r->peer) */
  timed t[1 + CONTACT_NPEER];
  int owner[1 + CONTACT_NPEER], nt = 1;
  t[0] = (timed){&ts, t_step, timed_no_reset, t_clear, t_failed};
  owner[0] = -1;
  talus_stepper os;
  memset(&os, 0, sizeof os);
  tl_system *ode_sys = NULL;
  /* contact_setup's layout: q [nq], then u, kp, kd and zero [nv each] */
  int nqm = tl_model_nq(model), nvm = tl_model_nv(model);
  double *u = q + nqm, *kp = u + nvm, *kd = kp + nvm, *zero = kd + nvm;
  if (use_peer) {
    contact_peer_result *pr = &r->peer[CONTACT_ODE];
    pr->attempted = 1;
    ode_sys = ode_world(model, q, u, kp, kd, zero, &os, pr->error, sizeof pr->error);
    if (ode_sys) {
      pr->built = 1;
      owner[nt] = CONTACT_ODE;
      t[nt++] = (timed){&os, t_step, timed_no_reset, t_clear, t_failed};
    }
  }
#if HAVE_PEER
  bench_peer *peer[CONTACT_NPEER] = {NULL};
  for (int k = 0; k < CONTACT_ODE && use_peer; ++k) {
    contact_peer_result *pr = &r->peer[k];
    pr->attempted = 1;
    bench_peer_state s = {q, zero, zero, zero, spec->kp, spec->kd, 0, k + 1, CONTACT_GROUND_MU};
    double rel[NCHECK];
    if (bench_peer_create(model, &s, &peer[k], pr->note, sizeof pr->note, pr->error,
                          sizeof pr->error) != 0 ||
        bench_peer_crosscheck(peer[k], sys, rel, pr->error, sizeof pr->error) != 0)
      continue;
    pr->xcheck_max = 0;
    for (int c = 0; c < NCHECK; ++c)
      if (!isnan(rel[c])) pr->xcheck_max = fmax(pr->xcheck_max, rel[c]);
    char detail[300];
    bench_peer_memory(peer[k], &pr->model_bytes, &pr->data_bytes, detail, sizeof detail);
    pr->built = 1;
    owner[nt] = k;
    t[nt++] = (timed){peer[k], bench_peer_step, timed_no_reset, bench_peer_clear, bench_peer_failed};
  }
#endif

  /* settle: every engine from the start state on its own; then time those that did not fail */
  char why[1 + CONTACT_NPEER][TIMED_WHY];
  memset(why, 0, sizeof why);
  double us[1 + CONTACT_NPEER];
  long calls[1 + CONTACT_NPEER];
  timed go[1 + CONTACT_NPEER];
  int idx[1 + CONTACT_NPEER], ngo = 0;
  for (int k = 0; k < nt; ++k) {
    us[k] = NAN;
    calls[k] = 0;
    t[k].clear(t[k].ctx);
    for (int i = 0; i < CONTACT_SETTLE_STEPS; ++i) t[k].fn(t[k].ctx);
    if (!t[k].failed(t[k].ctx, why[k], TIMED_WHY)) idx[ngo] = k, go[ngo++] = t[k];
  }
  time_settled(go, idx, ngo, batches, batch_s, us, why, calls);
  /* the same simulated time in every engine before comparing base heights: those that made
   * fewer steps while being timed catch up (not timed) */
  long most = 0;
  for (int i = 0; i < ngo; ++i) most = calls[idx[i]] > most ? calls[idx[i]] : most;
  for (int i = 0; i < ngo; ++i) {
    int k = idx[i];
    if (!isfinite(us[k])) continue; /* failed while timed */
    for (; calls[k] < most; ++calls[k]) t[k].fn(t[k].ctx);
    if (t[k].failed(t[k].ctx, why[k], TIMED_WHY)) us[k] = NAN;
  }
  r->us = us[0];
  r->steps = CONTACT_SETTLE_STEPS + calls[0];
  memcpy(r->failed, why[0], TIMED_WHY);
  double pos[3], R[9];
  if (tl_system_body_pose(sys, 0, pos, R, NULL) == TL_OK) r->z = pos[2];
  talus_contacts(ts.world, model, spec->feet, r);
  for (int i = 1; i < nt; ++i) {
    int k = owner[i];
    contact_peer_result *pr = &r->peer[k];
    pr->us = us[i];
    pr->steps = CONTACT_SETTLE_STEPS + calls[i];
    memcpy(pr->failed, why[i], TIMED_WHY);
    if (k == CONTACT_ODE) {
      if (tl_system_body_pose(ode_sys, 0, pos, R, NULL) == TL_OK) pr->z = pos[2];
      count_contacts(os.world, &pr->ncontact, &pr->nactive);
      continue;
    }
#if HAVE_PEER
    pr->z = bench_peer_base_height(peer[k]);
    bench_peer_contacts(peer[k], &pr->ncontact, &pr->nactive);
#endif
  }
  if (step_deriv_robot(spec->label)) {
    void *dpeer = NULL;
    step_deriv_result *d = &r->deriv;
    d->us = d->fd_us = d->peer_us = d->peer_fwd_us = NAN;
    d->peer_attempted = use_peer && HAVE_PEER;
#if HAVE_PEER
    if (r->peer[0].built && isfinite(r->peer[0].us)) dpeer = peer[0];
    else if (use_peer) snprintf(r->deriv.peer_error, sizeof r->deriv.peer_error, "%s",
                                r->peer[0].error[0] ? r->peer[0].error : "the peer's contact step failed");
#endif
    if (isfinite(r->us))
      time_step_derivatives(ts.world, dpeer, &r->deriv, batches, batch_s);
    else
      snprintf(r->deriv.error, sizeof r->deriv.error, "the contact step failed: no settled state");
    d->attempted = 1;
  }
#if HAVE_PEER
  for (int k = 0; k < CONTACT_ODE; ++k) bench_peer_free(peer[k]);
#endif
  tl_world_free(os.world);

  if (ts.world) { /* what the world holds at the end: the bytes its free returns */
    size_t before = bench_mem_live();
    tl_world_free(ts.world);
    r->world_bytes_end = before - bench_mem_live();
  }
  free(q);
  tl_model_free(model);
}

/* ------------------------------------------------------------ box scenes */

/* Largest distance a box moved from the positions p0 (3 per box). */
static double talus_drift(tl_system *const *sys, int n, const double *p0) {
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double q[7];
    tl_system_get_state(sys[i], q, 7, NULL, 0, NULL);
    worst = fmax(worst, sqrt(pow(q[0] - p0[3 * i], 2) + pow(q[1] - p0[3 * i + 1], 2) +
                             pow(q[2] - p0[3 * i + 2], 2)));
  }
  return worst;
}

void bench_contact_scene(const char *name, scene_result *r, int batches, double batch_s, int use_peer) {
  static bench_scene s;
  static tl_system *sys[SCENE_MAX_BOXES];
  static double p0[3 * SCENE_MAX_BOXES];
  memset(r, 0, sizeof(*r));
  r->us = r->drift = NAN;
  for (int k = 0; k < CONTACT_NPEER; ++k) r->peer[k].us = r->peer[k].drift = NAN;
  const bench_scene_spec *spec = bench_scene_of(name);
  r->name = name;
  if (!spec) {
    snprintf(r->error, sizeof r->error, "no scene %s", name);
    return;
  }
  spec->build(&s);
  r->doc = s.doc;
  r->nbox = s.nbox;
  r->settle_steps = s.settle_steps;
  tl_error err;
  memset(&err, 0, sizeof err);
  talus_stepper ts;
  memset(&ts, 0, sizeof ts);
  if (bench_scene_talus(&s, &ts.world, sys, &err) != 0) {
    snprintf(r->error, sizeof r->error, "setup: %.500s", err.message);
    return;
  }
  timed t[1 + CONTACT_NPEER];
  int owner[1 + CONTACT_NPEER], nt = 1;
  t[0] = (timed){&ts, t_step, timed_no_reset, t_clear, t_failed};
  owner[0] = -1;
  char why[1 + CONTACT_NPEER][TIMED_WHY];
  memset(why, 0, sizeof why);
  double us[1 + CONTACT_NPEER];
  timed go[1 + CONTACT_NPEER];
  int idx[1 + CONTACT_NPEER], ngo = 0;
  /* Talus settles the scene; the peer starts from Talus's settled poses (the same pile) and
   * steps SCENE_PEER_SETTLE steps to let its soft contacts take the load */
  t[0].clear(t[0].ctx);
  for (int i = 0; i < s.settle_steps; ++i) t[0].fn(t[0].ctx);
  us[0] = NAN;
  if (!t[0].failed(t[0].ctx, why[0], TIMED_WHY)) idx[ngo] = 0, go[ngo++] = t[0];
  for (int i = 0; i < s.nbox; ++i) {
    double q[7];
    tl_system_get_state(sys[i], q, 7, NULL, 0, NULL);
    memcpy(p0 + 3 * i, q, 3 * sizeof(double));
    memcpy(s.box[i].pos, q, 3 * sizeof(double));
    memcpy(s.box[i].quat, q + 3, 4 * sizeof(double));
  }
#if HAVE_PEER
  bench_peer *peer[CONTACT_NPEER] = {NULL};
  double *qpos0[CONTACT_NPEER] = {NULL};
  for (int k = 0; k < CONTACT_NPEER && use_peer; ++k) {
    scene_peer_result *pr = &r->peer[k];
    if (bench_peer_scene_create(&s, k + 1, &peer[k], pr->error, sizeof pr->error) != 0) continue;
    qpos0[k] = calloc((size_t)bench_peer_scene_nq(peer[k]) + 1, sizeof(double));
    pr->built = qpos0[k] != NULL;
    if (!pr->built) continue;
    owner[nt] = k;
    timed *tk = &t[nt];
    *tk = (timed){peer[k], bench_peer_step, timed_no_reset, bench_peer_clear, bench_peer_failed};
    us[nt] = NAN;
    tk->clear(tk->ctx);
    for (int i = 0; i < SCENE_PEER_SETTLE; ++i) tk->fn(tk->ctx);
    bench_peer_scene_qpos(peer[k], qpos0[k]);
    if (!tk->failed(tk->ctx, why[nt], TIMED_WHY)) idx[ngo] = nt, go[ngo++] = *tk;
    nt++;
  }
#else
  (void)use_peer;
  (void)owner;
  (void)nt;
#endif
  time_settled(go, idx, ngo, batches, batch_s, us, why, NULL);
  r->us = us[0];
  memcpy(r->failed, why[0], TIMED_WHY);
  r->drift = talus_drift(sys, s.nbox, p0);
  contact_result cr;
  talus_contacts(ts.world, NULL, NULL, &cr);
  r->ncontact = cr.ncontact;
  r->nactive = cr.nactive;
  tl_solver_stats st;
  tl_world_solver_stats(ts.world, &st, NULL);
  r->sweeps = st.iterations;
  r->converged = st.converged;
  r->signorini = st.signorini;
#if HAVE_PEER
  for (int i = 1; i < nt; ++i) {
    int k = owner[i];
    scene_peer_result *pr = &r->peer[k];
    pr->us = us[i];
    memcpy(pr->failed, why[i], TIMED_WHY);
    pr->drift = bench_peer_scene_drift(peer[k], qpos0[k]);
    bench_peer_contacts(peer[k], &pr->ncontact, &pr->nactive);
  }
  for (int k = 0; k < CONTACT_NPEER; ++k) {
    bench_peer_free(peer[k]);
    free(qpos0[k]);
  }
#endif
  tl_world_free(ts.world);
}
