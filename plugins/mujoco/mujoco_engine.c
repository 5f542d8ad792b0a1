/* talus-engine-mujoco: MuJoCo 2.2 (Debian libmujoco-dev) behind Talus's
 * engine interface (talus/engine.h).
 *
 * The model is built by the project's one MuJoCo model builder
 * (mj_build.h: bodies, joints, exact inertials, armature, damping, friction
 * loss, springs, limits, mimic equalities, collision geoms, static geometry,
 * heightmaps as hfields, one explicit contact pair per pair Talus would
 * collide with the pair's Talus friction), the one talus_bench
 * cross-checks against Talus's dynamics to 1e-9. On top of it:
 * - the PD: kp by the position-type actuator of each DOF (gain 1, bias
 *   -kp q; ctrl = kp q_target + kd u_target + tau_ff, with q_target taken
 *   into the limits as Talus does; ball joints: three actuators with unit
 *   gears on the rotation vector, ctrl chosen so that the actuator torque is
 *   Talus's kp log(q_t q^-1) + kd u_t + tau_ff mapped to the child frame),
 *   explicit (the error at the start of the step); kd added to the joint
 *   damping, which MuJoCo's Euler integrator treats implicitly (M + dt D),
 *   as Talus treats kd (M + dt Kd + dt^2 Kp). The effort limit is the
 *   actuator's forcerange: it bounds kp e + kd u_t + tau_ff, not the
 *   damping -kd u (noted); with kd in the actuator bias instead (explicit)
 *   MuJoCo diverges on light robots at these gains;
 * - external forces and feedforward on the floating base: qfrc_applied
 *   (T^T f, see tlmj_add_force);
 * - contacts: MuJoCo's soft contacts (default solref / solimp, no
 *   speculative margin); Talus's ERP / CFM and contact compliance have no
 *   MuJoCo counterpart and are not used (noted); restitution is not
 *   supported (TL_ERR_UNSUPPORTED); contact forces from mj_contactForce;
 * - solver: TL_SOLVER_PER_CONTACT (Talus's default, each contact on the exact
 *   cone) -> MuJoCo's Newton solver with the elliptic cone, its closest
 *   counterpart; TL_SOLVER_PGS (friction pyramid) -> MuJoCo's PGS with the
 *   pyramidal cone; TL_SOLVER_DANTZIG: TL_ERR_UNSUPPORTED. Engine options
 *   override: cone=pyramidal|elliptic, solver=newton|pgs|cg, impratio=X,
 *   iterations=N (e.g. "mujoco:cone=pyramidal" is MuJoCo's own default,
 *   "mujoco:impratio=100" what Menagerie's quadrupeds use against slip);
 * - the step: integrate1 = mj_step1 (kinematics, collision, M, bias),
 *   integrate2 = ctrl and qfrc_applied, then mj_step2 (actuation, constraint
 *   solve, Euler). A MuJoCo warning that resets the state (bad qacc) is
 *   reported as TL_ERR_DIVERGED. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "math/tl_math.h"
#include "mj_build.h"
#include "talus/engine_plugin.h"
#include "tlp_util.h"

#define NOTES_LEN 2048

typedef struct mj_sys {
  tl_engine_model m;
  double *kp, *kd, *qt, *ut, *tau, *ext, *applied; /* nv, nv, nq, nv, nv, nv, nv */
  double *q, *u;
  double *f;             /* [nv] scratch: the generalized force of this step */
} mj_sys;

struct tl_engine_world {
  mjModel *m;
  mjData *d;
  tlmj_map map;
  tl_engine_scene scene;
  tl_engine_system *systems;
  int nsys;
  mj_sys *sys;
  double *damping0;      /* [m->nv] the model's joint damping (kd is added to it) */
  tl_contact_info *contacts;
  int *contact_id;       /* MuJoCo contact of each, its side */
  int *contact_flip;
  int ncontact, cap_contact;
  int stepped1;
  int warn0;
  char notes[NOTES_LEN];
};

static char last_warning[512];
static void on_warning(const char *msg) { snprintf(last_warning, sizeof(last_warning), "%s", msg); }

/* One line more in the world's notes (tl_engine_notes). */
#define note(e, ...) tlp_note((e)->notes, sizeof((e)->notes), __VA_ARGS__)

static void mj_caps(tl_engine_caps *c) {
  c->joints = (1u << TL_JOINT_FIXED) | (1u << TL_JOINT_FLOATING) | (1u << TL_JOINT_REVOLUTE) |
              (1u << TL_JOINT_PRISMATIC) | (1u << TL_JOINT_SPHERICAL) | (1u << TL_JOINT_UNIVERSAL);
  c->geoms = (1u << TL_GEOM_SPHERE) | (1u << TL_GEOM_BOX) | (1u << TL_GEOM_CAPSULE) | (1u << TL_GEOM_CYLINDER) |
             (1u << TL_GEOM_MESH) | (1u << TL_GEOM_PLANE) | (1u << TL_GEOM_HEIGHTMAP);
  c->solvers = (1u << TL_SOLVER_PER_CONTACT) | (1u << TL_SOLVER_PGS);
  c->default_solver = TL_SOLVER_PER_CONTACT;
  c->features = TL_ENGINE_ROTOR_INERTIA | TL_ENGINE_JOINT_DAMPING | TL_ENGINE_JOINT_FRICTION |
                TL_ENGINE_JOINT_SPRING | TL_ENGINE_JOINT_LIMITS | TL_ENGINE_EFFORT_LIMITS | TL_ENGINE_MIMIC |
                TL_ENGINE_SELF_COLLISION | TL_ENGINE_SOLVER_STATS | TL_ENGINE_CONSTRAINTS;
  c->constraints = (1u << TL_CONSTRAINT_BALL) | (1u << TL_CONSTRAINT_HINGE) | (1u << TL_CONSTRAINT_WELD);
}

static void mj_destroy(tl_engine_world *e) {
  if (!e) return;
  if (e->d) mj_deleteData(e->d);
  if (e->m) mj_deleteModel(e->m);
  tlmj_map_free(&e->map);
  for (int i = 0; i < e->nsys; i++) free(e->sys[i].kp);
  free(e->sys);
  free(e->systems);
  free(e->damping0);
  free(e->contacts);
  free(e->contact_id);
  free(e);
}

static tl_status check_scene(const tl_engine_scene *s, tl_error *err) {
  if (s->options.solver == TL_SOLVER_DANTZIG)
    return tl_engine_error(err, TL_ERR_UNSUPPORTED, "solver",
                           "MuJoCo has no Dantzig solver: use TL_SOLVER_PER_CONTACT (MuJoCo's Newton with the "
                           "elliptic cone) or TL_SOLVER_PGS (MuJoCo's PGS, pyramidal cone)");
  if (s->options.default_restitution > 0)
    return tl_engine_error(err, TL_ERR_UNSUPPORTED, "restitution",
                           "MuJoCo does not support %s (the world's default restitution is %g)",
                           tlp_feature_name(TL_ENGINE_RESTITUTION), s->options.default_restitution);
  for (int i = 0; i < s->npair; i++)
    if (s->pairs[i].restitution > 0)
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "restitution",
                             "MuJoCo does not support %s (material pair '%s' / '%s' has %g)",
                             tlp_feature_name(TL_ENGINE_RESTITUTION), s->pairs[i].a, s->pairs[i].b,
                             s->pairs[i].restitution);
  for (int i = 0; i < s->nsystem; i++)
    if (s->systems[i].integrator != TL_INTEGRATOR_EULER)
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "integrator", "system %d ('%s'): MuJoCo does not support %s",
                             i, s->systems[i].model.name, tlp_feature_name(TL_ENGINE_RK4));
  return TL_OK;
}

static const char *const known_options[] = {"cone", "solver", "impratio", "iterations", NULL};

static tl_status read_options(const tl_engine_scene *s, tlmj_options *o, char *cone, char *solver, tl_error *err) {
  char val[64];
  long n;
  int r;
  tl_status st = tlp_check_options("mujoco", s->engine_options, known_options, err);
  if (st) return st;
  strcpy(cone, s->options.solver == TL_SOLVER_PGS ? "pyramidal" : "elliptic");
  strcpy(solver, s->options.solver == TL_SOLVER_PGS ? "PGS" : "Newton");
  if (tlp_option(s->engine_options, "cone", val, sizeof(val))) {
    if (strcmp(val, "pyramidal") && strcmp(val, "elliptic"))
      return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "mujoco: cone=%s: expected pyramidal or elliptic", val);
    strcpy(cone, val);
  }
  if (tlp_option(s->engine_options, "solver", val, sizeof(val))) {
    const char *names[] = {"newton", "Newton", "pgs", "PGS", "cg", "CG"};
    int k = -1;
    for (int i = 0; i < 6; i++)
      if (!strcmp(val, names[i])) k = i;
    if (k < 0) return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "mujoco: solver=%s: expected newton, pgs or cg", val);
    strcpy(solver, names[k | 1]);
  }
  o->cone = cone, o->solver = solver;
  if ((r = tlp_option_double(s->engine_options, "impratio", &o->impratio, val, sizeof(val))) < 0 ||
      (r && (!(o->impratio >= 1) || !isfinite(o->impratio))))
    return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "mujoco: impratio=%s: expected a number >= 1", val);
  if ((r = tlp_option_long(s->engine_options, "iterations", 1, 100000, &n, val, sizeof(val))) < 0)
    return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "mujoco: iterations=%s: expected 1 to 100000", val);
  if (r) o->iterations = (int)n;
  return TL_OK;
}

static tl_status mj_create(const tl_engine_scene *scene, tl_engine_world **out, tl_error *err) {
  *out = NULL;
  tl_status st = check_scene(scene, err);
  tlmj_options o;
  memset(&o, 0, sizeof(o));
  o.contacts = 1;
  o.site_sys = -1;
  char cone[32], solver[32];
  if (!st) st = read_options(scene, &o, cone, solver, err);
  if (st) return st;
  if (!mju_user_warning) mju_user_warning = on_warning; /* not into MUJOCO_LOG.TXT */
  tl_engine_world *e = calloc(1, sizeof(*e));
  if (!e) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  e->scene = *scene;
  e->systems = calloc((size_t)scene->nsystem + 1, sizeof(*e->systems));
  e->sys = calloc((size_t)scene->nsystem + 1, sizeof(*e->sys));
  if (!e->systems || !e->sys) {
    mj_destroy(e);
    return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  }
  memcpy(e->systems, scene->systems, (size_t)scene->nsystem * sizeof(*e->systems));
  e->scene.systems = e->systems;
  char why[1024] = "";
  if (tlmj_build(scene, &o, &e->m, &e->map, why, sizeof(why)) != 0) {
    mj_destroy(e);
    return tl_engine_error(err, strstr(why, "no MuJoCo counterpart") || strstr(why, "planar") ? TL_ERR_UNSUPPORTED : TL_ERR_INVALID,
                           "engine", "mujoco: %s", why);
  }
  e->scene.statics = NULL, e->scene.heightmaps = NULL, e->scene.pairs = NULL; /* used by the builder only */
  e->d = mj_makeData(e->m);
  e->damping0 = malloc((size_t)(e->m->nv + 1) * sizeof(double));
  if (!e->d || !e->damping0) {
    mj_destroy(e);
    return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  }
  memcpy(e->damping0, e->m->dof_damping, (size_t)e->m->nv * sizeof(double));
  for (int i = 0; i < scene->nsystem; i++) {
    mj_sys *s = &e->sys[i];
    s->m = scene->systems[i].model;
    int nv = s->m.nv, nq = s->m.nq;
    s->kp = calloc((size_t)(8 * nv + 2 * nq) + 1, sizeof(double));
    if (!s->kp) {
      mj_destroy(e);
      return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
    }
    s->kd = s->kp + nv, s->ut = s->kd + nv, s->tau = s->ut + nv, s->ext = s->tau + nv, s->applied = s->ext + nv;
    s->u = s->applied + nv, s->f = s->u + nv, s->qt = s->f + nv, s->q = s->qt + nq;
    e->nsys = i + 1;
  }
  if (e->map.npatched) note(e, "%d massless bodies (or A + B < C): exact inertial written into mjModel after compiling a placeholder", e->map.npatched);
  note(e, "PD: kp by position actuators (explicit), kd as joint damping (implicit in MuJoCo's Euler); "
          "the effort limit bounds kp e + kd u_t + tau_ff, not the damping");
  note(e, "contacts: MuJoCo's soft contacts (solref %g %g, solimp %g %g %g, no speculative margin), %s cone, "
          "%s solver%s; Talus's contact ERP / CFM and relative compliance are not used",
       e->m->ngeom ? e->m->geom_solref[0] : 0.02, e->m->ngeom ? e->m->geom_solref[1] : 1.0,
       e->m->ngeom ? e->m->geom_solimp[0] : 0.9, e->m->ngeom ? e->m->geom_solimp[1] : 0.95,
       e->m->ngeom ? e->m->geom_solimp[2] : 0.001, cone, solver,
       o.impratio > 0 ? ", impratio from the options" : "");
  if (scene->nconstraint)
    note(e, "loop constraints: ball as <connect>, hinge as two <connect> %g m apart on its axis, weld as <weld>: "
            "MuJoCo's soft equalities (default solref / solimp; the constraints' erp / cfm are not used), whose "
            "error is not projected away; no distance constraint; force and torque not read back "
            "(tl_world_constraint reports 0)", 0.1);
  e->warn0 = e->d->warning[mjWARN_BADQACC].number;
  *out = e;
  return TL_OK;
}

static tl_status check_sys(const tl_engine_world *e, int i, tl_error *err) { return tlp_check_system(i, e->nsys, err); }

static tl_status mj_set_state(tl_engine_world *e, int i, const double *q, const double *u, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  mj_sys *s = &e->sys[i];
  memcpy(s->q, q, (size_t)s->m.nq * sizeof(double));
  memcpy(s->u, u, (size_t)s->m.nv * sizeof(double));
  tlmj_to_mujoco(e->m, &e->map, i, &s->m, q, u, e->d->qpos, e->d->qvel);
  e->stepped1 = 0;
  return TL_OK;
}

static tl_status mj_get_state(const tl_engine_world *e, int i, double *q, double *u, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  const mj_sys *s = &e->sys[i];
  memcpy(q, s->q, (size_t)s->m.nq * sizeof(double));
  memcpy(u, s->u, (size_t)s->m.nv * sizeof(double));
  return TL_OK;
}

/* MuJoCo DOF of Talus DOF v of system i. */
static int mj_dof(const tl_engine_world *e, int i, int v) {
  const tl_engine_model *m = &e->sys[i].m;
  int b = m->dof_body[v], k = v - m->v_adr[b];
  if (m->jnt_type[b] == TL_JOINT_UNIVERSAL) return e->m->jnt_dofadr[e->map.sys[i].joint[2 * b + k]];
  return e->m->jnt_dofadr[e->map.sys[i].joint[2 * b]] + k;
}

static tl_status mj_gains(tl_engine_world *e, int i, const double *kp, const double *kd, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  mj_sys *s = &e->sys[i];
  const tl_engine_model *m = &s->m;
  for (int v = 0; v < m->nv; v++) {
    int a = e->map.sys[i].act[v];
    if (a < 0) {
      if (kp[v] != 0 || kd[v] != 0)
        return tl_engine_error(err, TL_ERR_UNSUPPORTED, "kp", "system %d ('%s'): MuJoCo engine does not support %s (DOF %d)",
                               i, m->name, tlp_feature_name(TL_ENGINE_BASE_PD), v);
      continue;
    }
    e->m->actuator_biasprm[a * mjNBIAS + 1] = -kp[v];
    int dof = mj_dof(e, i, v);
    e->m->dof_damping[dof] = e->damping0[dof] + kd[v];
  }
  memcpy(s->kp, kp, (size_t)m->nv * sizeof(double));
  memcpy(s->kd, kd, (size_t)m->nv * sizeof(double));
  return TL_OK;
}

static tl_status mj_targets(tl_engine_world *e, int i, const double *qt, const double *ut, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(e->sys[i].qt, qt, (size_t)e->sys[i].m.nq * sizeof(double));
  memcpy(e->sys[i].ut, ut, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

static tl_status mj_force(tl_engine_world *e, int i, const double *tau, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(e->sys[i].tau, tau, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

static tl_status mj_ext(tl_engine_world *e, int i, const double *f, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(e->sys[i].ext, f, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

/* The contacts MuJoCo found in mj_step1, in Talus's terms. */
static tl_status read_contacts(tl_engine_world *e, tl_error *err) {
  const mjData *d = e->d;
  if (d->ncon > e->cap_contact) {
    int cap = d->ncon + 16;
    tl_contact_info *c = realloc(e->contacts, (size_t)cap * sizeof(*c));
    if (c) e->contacts = c;
    int *id = realloc(e->contact_id, (size_t)(2 * cap) * sizeof(int));
    if (id) e->contact_id = id;
    if (!c || !id) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory for contacts");
    e->cap_contact = cap;
  }
  e->contact_flip = e->contact_id + e->cap_contact;
  e->ncontact = 0;
  for (int k = 0; k < d->ncon; k++) {
    const mjContact *c = &d->contact[k];
    if (c->exclude) continue;
    int g1 = c->geom1, g2 = c->geom2;
    int s1 = e->map.geom_sys[g1], s2 = e->map.geom_sys[g2];
    /* the system side: the geom of the lower system index (a static geom is -1: never first) */
    int flip = s1 < 0 || (s2 >= 0 && s2 < s1);
    int ga = flip ? g2 : g1, gb = flip ? g1 : g2;
    tl_contact_info *ci = &e->contacts[e->ncontact];
    memset(ci, 0, sizeof(*ci));
    ci->system = e->map.geom_sys[ga], ci->body = e->map.geom_body[ga], ci->geom = e->map.geom_index[ga];
    ci->other_system = e->map.geom_sys[gb], ci->other_body = e->map.geom_body[gb], ci->other_geom = e->map.geom_index[gb];
    for (int i = 0; i < 3; i++) { /* MuJoCo's normal points from geom1 to geom2 */
      ci->pos[i] = c->pos[i];
      ci->normal[i] = flip ? c->frame[i] : -c->frame[i];
    }
    ci->depth = -c->dist;
    ci->mu = c->friction[0];
    e->contact_id[e->ncontact] = k;
    e->contact_flip[e->ncontact] = flip;
    e->ncontact++;
  }
  return TL_OK;
}

static int diverged(tl_engine_world *e) { return e->d->warning[mjWARN_BADQACC].number != e->warn0; }

static tl_status mj_integrate1(tl_engine_world *e, tl_error *err) {
  mj_step1(e->m, e->d);
  if (diverged(e)) {
    e->warn0 = e->d->warning[mjWARN_BADQACC].number;
    return tl_engine_error(err, TL_ERR_DIVERGED, NULL, "MuJoCo: %s", last_warning[0] ? last_warning : "bad qacc");
  }
  e->stepped1 = 1;
  return read_contacts(e, err);
}

/* ctrl and qfrc_applied of one system for this step (at the state of its start). */
static void apply_control(tl_engine_world *e, int i) {
  mj_sys *s = &e->sys[i];
  const tl_engine_model *m = &s->m;
  mjData *d = e->d;
  for (int b = 0; b < m->nbody; b++) {
    tl_joint_type t = m->jnt_type[b];
    int n = m->jnt_nv[b], v0 = m->v_adr[b];
    if (n == 0 || t == TL_JOINT_FLOATING) continue;
    double err_pd[6];
    tlp_pd_error(m, b, s->q, s->qt, err_pd);
    if (t == TL_JOINT_SPHERICAL) {
      double tq[3], R[9], tc[3], len[3];
      const double *qb = s->q + m->q_adr[b];
      for (int k = 0; k < 3; k++) {
        int v = v0 + k;
        double eff = m->dof_effort[v];
        tq[k] = s->kp[v] * err_pd[k] + s->kd[v] * s->ut[v] + tlp_clamp_effort(s->tau[v], eff);
      }
      tl_quat_to_m3(R, qb);
      tl_m3_tmulv(tc, R, tq);
      mju_quat2Vel(len, qb, 1.0);
      for (int k = 0; k < 3; k++) d->ctrl[e->map.sys[i].act[v0 + k]] = tc[k] + s->kp[v0 + k] * len[k];
      continue;
    }
    for (int k = 0; k < n; k++) {
      int v = v0 + k;
      double eff = m->dof_effort[v], q = s->q[m->q_adr[b] + k];
      d->ctrl[e->map.sys[i].act[v]] = s->kp[v] * (err_pd[k] + q) + s->kd[v] * s->ut[v] + tlp_clamp_effort(s->tau[v], eff);
    }
  }
  memcpy(s->f, s->ext, (size_t)m->nv * sizeof(double));
  if (m->jnt_type[0] == TL_JOINT_FLOATING) /* feedforward on the base: a generalized force too */
    for (int k = 0; k < 6; k++) s->f[k] += s->tau[k], s->applied[k] = s->tau[k];
  tlmj_add_force(e->m, &e->map, i, m, d->qpos, s->f, d->qfrc_applied);
}

static tl_status mj_integrate2(tl_engine_world *e, tl_error *err) {
  if (!e->stepped1) {
    tl_status st = mj_integrate1(e, err);
    if (st) return st;
  }
  mju_zero(e->d->qfrc_applied, e->m->nv);
  for (int i = 0; i < e->nsys; i++) apply_control(e, i);
  mj_step2(e->m, e->d);
  e->stepped1 = 0;
  if (diverged(e)) {
    e->warn0 = e->d->warning[mjWARN_BADQACC].number;
    return tl_engine_error(err, TL_ERR_DIVERGED, NULL, "MuJoCo: %s", last_warning[0] ? last_warning : "bad qacc");
  }
  for (int i = 0; i < e->nsys; i++) {
    mj_sys *s = &e->sys[i];
    const tl_engine_model *m = &s->m;
    tlmj_from_mujoco(e->m, &e->map, i, m, e->d->qpos, e->d->qvel, s->q, s->u);
    for (int b = 0; b < m->nbody; b++) {
      tl_joint_type t = m->jnt_type[b];
      if (t == TL_JOINT_FLOATING || m->jnt_nv[b] == 0) continue;
      int v0 = m->v_adr[b];
      if (t == TL_JOINT_SPHERICAL) { /* actuator torque back to the parent frame, minus the damping */
        double tc[3], tp[3], R[9];
        for (int k = 0; k < 3; k++) tc[k] = e->d->actuator_force[e->map.sys[i].act[v0 + k]];
        tl_quat_to_m3(R, s->q + m->q_adr[b]);
        tl_m3_mulv(tp, R, tc);
        for (int k = 0; k < 3; k++) s->applied[v0 + k] = tp[k] - s->kd[v0 + k] * s->u[v0 + k];
        continue;
      }
      for (int k = 0; k < m->jnt_nv[b]; k++) {
        int v = v0 + k;
        s->applied[v] = e->d->actuator_force[e->map.sys[i].act[v]] - s->kd[v] * s->u[v];
      }
    }
  }
  for (int k = 0; k < e->ncontact; k++) { /* MuJoCo's force on geom2, in the contact frame */
    mjtNum f[6], w[3];
    mj_contactForce(e->m, e->d, e->contact_id[k], f);
    const mjtNum *fr = e->d->contact[e->contact_id[k]].frame;
    for (int i = 0; i < 3; i++) w[i] = fr[i] * f[0] + fr[3 + i] * f[1] + fr[6 + i] * f[2];
    double sgn = e->contact_flip[k] ? 1.0 : -1.0; /* the system's geom is geom2 when flipped */
    for (int i = 0; i < 3; i++) e->contacts[k].impulse[i] = sgn * w[i] * e->m->opt.timestep;
  }
  return TL_OK;
}

static int mj_ncontact(const tl_engine_world *e) { return e->ncontact; }

static tl_status mj_contact(const tl_engine_world *e, int k, tl_contact_info *out, tl_error *err) {
  if (k < 0 || k >= e->ncontact) return tl_engine_error(err, TL_ERR_ARGUMENT, "k", "contact %d out of range", k);
  *out = e->contacts[k];
  return TL_OK;
}

static tl_status mj_applied(const tl_engine_world *e, int i, double *tau, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(tau, e->sys[i].applied, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

static tl_status mj_stats(const tl_engine_world *e, tl_solver_stats *out, tl_error *err) {
  (void)err;
  memset(out, 0, sizeof(*out));
  out->iterations = e->d->solver_iter;
  out->nrow = e->d->nefc;
  out->ncontact = e->ncontact;
  out->nblock = e->d->ncon;
  int it = e->d->solver_iter > 0 ? e->d->solver_iter - 1 : 0;
  out->converged = e->d->solver_iter < e->m->opt.iterations;
  out->last_change = it < mjNSOLVER ? e->d->solver[it].improvement : NAN;
  out->signorini = out->cone = out->dissipation = NAN; /* MuJoCo's soft contacts have no such residuals */
  return TL_OK;
}

static const char *mj_notes(const tl_engine_world *e) { return e->notes; }

static char mj_engine_version[64];

static const tl_engine_api mj_api = {
    TL_ENGINE_ABI_VERSION,
    sizeof(tl_engine_api),
    "mujoco",
    mj_engine_version,
    "MuJoCo in generalized coordinates, its model generated from the compiled Talus model by the "
    "project's one builder (plugins/mujoco/mj_build.h, cross-checked by talus_bench): same bodies, "
    "joints, exact inertials, rotor inertia as armature, damping, friction loss, springs, limits, "
    "mimic equalities, loop constraints as connect / weld equalities, geoms (hulls as meshes, heightmaps as hfields), one contact pair per pair Talus "
    "would collide with its friction; the PD as position actuators (kp, explicit) plus joint damping "
    "(kd, implicit in Euler); MuJoCo's soft contacts; TL_SOLVER_PER_CONTACT -> Newton with the "
    "elliptic cone (default), TL_SOLVER_PGS -> PGS with the pyramidal cone; options cone=, solver=, "
    "impratio=, iterations=",
    mj_caps,
    mj_create,
    mj_destroy,
    mj_set_state,
    mj_get_state,
    mj_gains,
    mj_targets,
    mj_force,
    mj_ext,
    mj_integrate1,
    mj_integrate2,
    mj_ncontact,
    mj_contact,
    mj_applied,
    mj_stats,
    mj_notes,
};

__attribute__((visibility("default"))) const tl_engine_api *tl_engine_plugin_entry(int host_abi_version) {
  (void)host_abi_version;
  if (!mj_engine_version[0]) snprintf(mj_engine_version, sizeof(mj_engine_version), "MuJoCo %s", mj_versionString());
  return &mj_api;
}
