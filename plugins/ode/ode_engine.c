/* talus-engine-ode: the Open Dynamics Engine (Debian libode-dev 0.16, double
 * precision) behind Talus's engine interface (talus/engine.h).
 *
 * The scene in ODE's maximal coordinates (Smith, ODE 0.16 user guide):
 * - bodies: one dBody per Talus body (fixed links are already merged into
 *   their movable ancestor by the Talus model) at its COM, oriented as the
 *   Talus body frame, with its mass and inertia about the COM; a fixed base
 *   is no dBody: its children's joints attach to the static world (body 0),
 *   which welds it exactly, and its geoms are static;
 * - joints: revolute -> dHinge, prismatic -> dSlider, spherical -> dBall,
 *   universal -> dUniversal (its two axes must be perpendicular), floating
 *   root -> no joint; each created with the bodies at the zero configuration
 *   so that ODE's angles and positions equal Talus's q; attached (child,
 *   parent) so that ODE's rates are Talus's u; position limits of 1-DOF
 *   joints -> dParamLoStop / HiStop with StopERP = the world's ERP and
 *   StopCFM = its CFM (x dt, see below); planar joints and <mimic> are not
 *   supported (TL_ERR_UNSUPPORTED);
 * - rotor inertia of a revolute joint is APPROXIMATED (said in the notes):
 *   I_r a a^T is added to the child body's inertia about its COM, which adds
 *   I_r to the joint's own diagonal entry of M, as the reflected inertia of a
 *   geared motor does, but also I_r (a . a_j)(a . a_k) to the entries of the
 *   ancestor DOFs j, k whose rotation turns the child about a (a geared motor
 *   does not add those). Rotor inertia on other joints: TL_ERR_UNSUPPORTED;
 * - the implicit PD (tl_system_set_pd_gains / _targets) is emulated EXACTLY
 *   by the joint's motor row made soft with CFM (ODE manual, "joint error
 *   and the error reduction parameter" / "soft constraint and constraint
 *   force mixing": a row J v+ = c - CFM lambda with CFM = 1 / (dt kp + kd)
 *   and c = (kp e + kd u_t + tau_ff) / (dt kp + kd) gives lambda = kp (e -
 *   dt u+) + kd (u_t - u+) + tau_ff, Talus's stable PD evaluated at the end
 *   of the step, with e the position error at its start), bounded by
 *   dParamFMax = the effort limit (as Talus bounds PD + feedforward); ball
 *   joints through a dAMotor with the three axes of the parent joint frame;
 *   joint motors rather than an ERP/CFM spring on a stop because a stop row
 *   is one-sided and its target is the stop position, while the motor row is
 *   two-sided, bounded by the effort limit and takes any target velocity;
 * - passive joint damping D and springs K (hinge, universal, ball): a second
 *   soft motor row (dAMotor, CFM = 1 / (dt K + D), target K e_s / (dt K + D),
 *   unbounded), so that the effort limit bounds only the actuator as in
 *   Talus; Coulomb joint friction: a third, hard motor row (target 0,
 *   dParamFMax = the friction); sliders take damping and springs into their
 *   PD motor row (then bounded with it by the effort limit: noted) and refuse
 *   joint friction;
 * - feedforward without gains, external forces: equal and opposite wrenches
 *   on the joint's two bodies (the floating base: a force at its origin and a
 *   torque), whose virtual work is the generalized force's;
 * - geoms: sphere, box, capsule, cylinder (ODE's capsule and cylinder lie
 *   along z with the length of the straight part, like Talus's), convex
 *   hulls of meshes as dTriMesh of the hull's triangles, static planes,
 *   static primitives at their pose, heightmaps as dHeightfield (ODE's
 *   local y up: turned to world z, rows flipped);
 * - contacts: dSpaceCollide (hash space) with Talus's filters (group / mask,
 *   ignore list, self-collision off unless asked, never a body and its
 *   parent, nothing between welded bodies), up to 8 points per geom pair; a
 *   contact joint per point with the pair's friction by ODE's friction
 *   pyramid (dContactApprox1: each of two tangent directions bounded by
 *   mu times the normal force), restitution as dContactBounce with the
 *   pair's threshold as bounce_vel, soft_erp = the pair's (else the world's)
 *   ERP and soft_cfm = its CFM x dt (Talus's CFM is per N s of impulse,
 *   ODE's per N of force); dWorldSetContactMaxCorrectingVel = Talus's
 *   max_recovery_speed, surface layer 0. Talus's speculative margin and
 *   relative contact compliance have no ODE counterpart (ODE creates contacts
 *   at penetration): noted;
 * - solver: TL_SOLVER_PGS -> dWorldQuickStep (SOR-PGS; ODE's own 20 sweeps
 *   and over-relaxation 1.3 unless the engine options iterations=N, sor=W
 *   say: Talus's solver_max_iter is a cap its solvers stop early under,
 *   QuickStep always runs every sweep; the default), TL_SOLVER_DANTZIG ->
 *   dWorldStep (Dantzig's LCP); the per-contact exact-cone solver:
 *   TL_ERR_UNSUPPORTED;
 * - state: set by placing every dBody (tlp_fk), read back from the bodies'
 *   relative poses and velocities (tlp_joint_state); contact impulses from
 *   dJointFeedback (force on the system's body x dt); the applied actuator
 *   force from the motor law at the end-of-step velocity (clamped to the
 *   effort limit), exact while the joint is not at a stop.
 * - determinism: QuickStep reorders its rows at random with ODE's process-wide
 *   generator; each world keeps its own generator state and steps under a
 *   plugin-wide lock, so its trajectory is the same whatever other worlds or
 *   threads do (ODE worlds on several threads step one at a time).
 * - hinge2 (URDF type="hinge2", compiled by Talus into [a massless prismatic
 *   suspension along axis 1,] a massless revolute steering body about axis 1
 *   and the wheel's revolute about axis 2, all at one point): recognised by
 *   that shape (hinge2_role) and built as ONE dJointHinge2 between the
 *   chassis (ODE body 1, axis 1) and the wheel (body 2, axis 2), no dBody for
 *   the massless bodies; the steering PD / limits on ODE's axis 1, the wheel
 *   PD on axis 2; the suspension's stiffness K and damping D as ODE's
 *   suspension ERP = dt K / (dt K + D) and CFM = 1 / (dt K + D) (ODE manual,
 *   "How do I make a spring?"); without a suspension, rigid (the world's ERP
 *   and CFM). Its axes must be perpendicular, its chassis a dBody (not a
 *   welded base), no damping, springs,
 *   friction, rotor inertia or position limits on the steering and wheel
 *   DOFs beyond the steering limits (TL_ERR_UNSUPPORTED otherwise); a PD on
 *   the suspension DOF joins ODE's suspension spring (K + kp, D + kd), so
 *   its targets must be 0. The
 *   massless bodies' poses are read back from the chassis and the wheel.
 * Unsupported (TL_ERR_UNSUPPORTED): planar joints, mimic joints, the RK4
 * integrator, PD gains on the floating base, massless bodies (other than a
 * hinge2's), rotor inertia off revolute joints, joint friction on sliders,
 * the per-contact solver. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ode/ode.h>

#include "math/tl_math.h"
#include "talus/engine_plugin.h"
#include "tlp_util.h"

#define MAX_POINTS 8   /* contact points per geom pair */
#define NOTES_LEN 2048

/* What a dGeom is in the scene. */
typedef struct geom_info {
  int sys, body, geom;  /* sys -1: static geom `geom` (body -1) */
  unsigned group, mask;
  const char *material;
  double friction;
} geom_info;

typedef struct contact_rec {
  tl_contact_info info;
  dJointFeedback fb;
} contact_rec;

typedef struct ode_sys {
  tl_engine_model m;
  dBodyID *body;        /* [nbody], NULL for a welded base */
  dJointID *joint;      /* [nbody] hinge / slider / ball / universal / hinge2 (all bodies of its chain) */
  int *h2;              /* [nbody] hinge2 role: 0 none, 1 suspension, 2 steering, 3 wheel (hinge2_role) */
  int *h2wheel;         /* [nbody] roles 1-3: the chain's wheel body */
  int *h2root;          /* [nbody] roles 1-3: the body above the chain (ODE's body 1) */
  dJointID *amotor;     /* [nbody] ball joints: the PD motor */
  dJointID *passive;    /* [nbody] damping / spring motor, or NULL */
  dJointID *fric;       /* [nbody] Coulomb friction motor, or NULL */
  double *kp, *kd, *qt, *ut, *tau, *ext, *applied; /* nv, nv, nq, nv, nv, nv, nv */
  double *q, *u;        /* the state as last set or read */
  double *cm, *vstar;   /* [nv] motor law of the last step: c_m = dt kp + kd (+ passive on sliders), target */
  double *pnum;         /* [nv] sliders: the spring's K e_s in the motor row */
  double *xpos, *xrot, *w, *v; /* FK scratch [nbody * 3, 9, 3, 3] */
} ode_sys;

struct tl_engine_world {
  dWorldID world;
  dSpaceID space;
  dJointGroupID group;
  tl_engine_scene scene; /* own copies of the arrays (strings still the world's) */
  tl_engine_system *systems;
  tl_engine_static *statics;
  tl_engine_material_pair *pairs;
  int nsys;
  ode_sys *sys;
  int ngeominfo;
  geom_info *ginfo;
  dTriMeshDataID *tridata;
  dTriIndex **tri_idx;
  double **tri_vert;
  int ntri;
  dHeightfieldDataID *hfdata;
  double **hfheights;
  int nhf;
  contact_rec *contacts;
  int ncontact, cap_contact;
  int contacts_fresh;   /* contact joints of the last integrate1 still to be stepped */
  char notes[NOTES_LEN];
  tl_error cb_err;      /* failure inside the collision callback */
  char broken[256];     /* ODE's internal error that stopped this world ("" while it runs) */
  unsigned long seed;   /* this world's state of ODE's random generator (see ode_integrate2) */
};

/* ------------------------------------------------------------ small helpers */

static pthread_once_t ode_once = PTHREAD_ONCE_INIT;
/* QuickStep reorders its constraint rows at random with ODE's one process-wide generator
 * (dRandInt, not thread-safe): each world keeps its own generator state and steps under this
 * lock, so a world's trajectory depends neither on other worlds nor on threads. */
static pthread_mutex_t step_lock = PTHREAD_MUTEX_INITIALIZER;

/* ODE reports a failed internal assertion (dDebug: e.g. a body quaternion that no longer
 * normalizes once the state has diverged, seen on Unitree's Dex5 hand) or a fatal error
 * (dError) through handlers that must not return; its default ones abort the process, which
 * took `talus compare` and a sweep down with the peer. While one of a world's ODE calls runs
 * (ode_guarded), the handlers jump back to it: the call fails with ODE's message and the world
 * is marked broken, so no later call touches its state. Outside such a call, ODE's behaviour
 * (print and abort) is kept. */
static _Thread_local jmp_buf *ode_jump;
static _Thread_local char ode_jump_msg[200];
static void ode_fatal(int num, const char *msg, va_list ap) {
  vsnprintf(ode_jump_msg, sizeof(ode_jump_msg), msg, ap);
  if (ode_jump) longjmp(*ode_jump, 1);
  fprintf(stderr, "ODE INTERNAL ERROR %d: %s\n", num, ode_jump_msg);
  abort();
}

static void ode_init(void) {
  dInitODE2(0);
  dSetErrorHandler(ode_fatal);
  dSetDebugHandler(ode_fatal);
}

/* The error of a world stopped by an ODE internal error. */
static tl_status ode_broken_error(const tl_engine_world *e, tl_error *err) {
  return tl_engine_error(err, TL_ERR_DIVERGED, NULL, "ODE stopped at an internal error: %s", e->broken);
}

static void to_ode_R(dMatrix3 out, const double R[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) out[4 * i + j] = R[3 * i + j];
    out[4 * i + 3] = 0;
  }
}

static void from_ode_R(double R[9], const dReal *in) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = in[4 * i + j];
}

/* One line more in the world's notes (tl_engine_notes). */
#define note(e, ...) tlp_note((e)->notes, sizeof((e)->notes), __VA_ARGS__)

static const char *jname(const tl_engine_model *m, int b) { return m->joint_name[b]; }

/* ------------------------------------------------------------ capabilities */

static void ode_caps(tl_engine_caps *c) {
  c->joints = (1u << TL_JOINT_FIXED) | (1u << TL_JOINT_FLOATING) | (1u << TL_JOINT_REVOLUTE) |
              (1u << TL_JOINT_PRISMATIC) | (1u << TL_JOINT_SPHERICAL) | (1u << TL_JOINT_UNIVERSAL);
  c->geoms = (1u << TL_GEOM_SPHERE) | (1u << TL_GEOM_BOX) | (1u << TL_GEOM_CAPSULE) | (1u << TL_GEOM_CYLINDER) |
             (1u << TL_GEOM_MESH) | (1u << TL_GEOM_PLANE) | (1u << TL_GEOM_HEIGHTMAP);
  c->solvers = (1u << TL_SOLVER_PGS) | (1u << TL_SOLVER_DANTZIG);
  c->default_solver = TL_SOLVER_PGS;
  c->features = TL_ENGINE_ROTOR_INERTIA | TL_ENGINE_JOINT_DAMPING | TL_ENGINE_JOINT_FRICTION |
                TL_ENGINE_JOINT_SPRING | TL_ENGINE_JOINT_LIMITS | TL_ENGINE_EFFORT_LIMITS |
                TL_ENGINE_RESTITUTION | TL_ENGINE_SELF_COLLISION | TL_ENGINE_CONTACT_ERP_CFM | TL_ENGINE_CONSTRAINTS;
  c->constraints = (1u << TL_CONSTRAINT_BALL) | (1u << TL_CONSTRAINT_HINGE) | (1u << TL_CONSTRAINT_WELD) |
                   (1u << TL_CONSTRAINT_DISTANCE);
}

/* ------------------------------------------------------------ destroy */

static void sys_free(ode_sys *s) {
  free(s->body);
  free(s->joint);
  free(s->h2);
  free(s->amotor);
  free(s->passive);
  free(s->fric);
  free(s->kp);
  free(s->q);
  free(s->xpos);
}

static void ode_destroy(tl_engine_world *e) {
  if (!e) return;
  if (e->group) dJointGroupDestroy(e->group);
  if (e->space) dSpaceDestroy(e->space); /* destroys its geoms (cleanup on) */
  if (e->world) dWorldDestroy(e->world); /* and the bodies and joints */
  for (int i = 0; i < e->ntri; i++) {
    if (e->tridata[i]) dGeomTriMeshDataDestroy(e->tridata[i]);
    free(e->tri_idx[i]);
    free(e->tri_vert[i]);
  }
  for (int i = 0; i < e->nhf; i++) {
    if (e->hfdata[i]) dGeomHeightfieldDataDestroy(e->hfdata[i]);
    free(e->hfheights[i]);
  }
  free(e->tridata);
  free(e->tri_idx);
  free(e->tri_vert);
  free(e->hfdata);
  free(e->hfheights);
  for (int i = 0; i < e->nsys; i++) sys_free(&e->sys[i]);
  free(e->sys);
  free(e->systems);
  free(e->statics);
  free(e->pairs);
  free(e->ginfo);
  free(e->contacts);
  free(e);
}

/* ------------------------------------------------------------ hinge2 chains */

static int is_identity_frame(const tl_engine_model *m, int b) {
  static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double *p = m->jnt_pos + 3 * b, *R = m->jnt_rot + 9 * b;
  if (p[0] != 0 || p[1] != 0 || p[2] != 0) return 0;
  for (int k = 0; k < 9; k++)
    if (R[k] != I[k]) return 0;
  return 1;
}

/* 1 if body b is massless, carries no geom and has exactly one child, c. */
static int massless_link(const tl_engine_model *m, int b, int c) {
  if (b <= 0 || m->body_mass[b] != 0) return 0;
  for (int k = 1; k < m->nbody; k++)
    if (m->parent[k] == b && k != c) return 0;
  for (int g = 0; g < m->ngeom; g++)
    if (m->geom_body[g] == b) return 0;
  return 1;
}

/* Number of bodies of the hinge2 chain whose wheel is body w (2: steering
 * and wheel, 3: with the suspension), 0 if w is no such wheel: w revolute
 * with mass, at the origin of its parent st; st revolute, massless, with w
 * its only child; optionally st at the origin of a massless prismatic parent
 * along st's axis (the shape urdf_compile.c's add_hinge2 builds). */
static int hinge2_chain(const tl_engine_model *m, int w) {
  if (w <= 0 || m->jnt_type[w] != TL_JOINT_REVOLUTE || !(m->body_mass[w] > 0) || !is_identity_frame(m, w)) return 0;
  int st = m->parent[w];
  if (st <= 0 || m->jnt_type[st] != TL_JOINT_REVOLUTE || !massless_link(m, st, w)) return 0;
  int sp = m->parent[st];
  const double *a = m->jnt_axis + 3 * st, *b = m->jnt_axis + 3 * sp;
  if (sp > 0 && m->jnt_type[sp] == TL_JOINT_PRISMATIC && is_identity_frame(m, st) && massless_link(m, sp, st) &&
      a[0] == b[0] && a[1] == b[1] && a[2] == b[2])
    return 3;
  return 2;
}

/* Role of body b in a hinge2 chain: 0 none, 1 suspension, 2 steering, 3 wheel. */
static int hinge2_role(const tl_engine_model *m, int b) {
  if (hinge2_chain(m, b)) return 3;
  for (int w = b + 1; w < m->nbody; w++) {
    int n = hinge2_chain(m, w);
    if (n && m->parent[w] == b) return 2;
    if (n == 3 && m->parent[m->parent[w]] == b) return 1;
  }
  return 0;
}

/* What ODE's hinge2 cannot do, for body b of a chain (role r). */
static tl_status check_hinge2(const tl_engine_model *m, int i, int b, int r, tl_error *err) {
  int v = m->v_adr[b], w = b;
  while (hinge2_role(m, w) != 3) w++;
  int st = m->parent[w], first = hinge2_chain(m, w) == 3 ? m->parent[st] : st, root = m->parent[first];
  const char *what = NULL;
  if (m->dof_rotor_inertia[v] != 0 || m->dof_friction[v] != 0) what = "rotor inertia or joint friction";
  if (r != 1 && (m->dof_damping[v] != 0 || m->dof_stiffness[v] != 0)) what = "joint damping or a spring";
  if (r != 2 && (isfinite(m->dof_lower[v]) || isfinite(m->dof_upper[v]))) what = "position limits";
  if (r == 1 && m->dof_spring_mount[v] != 0) what = "a suspension rest position other than 0";
  if (r == 1 && m->dof_stiffness[v] == 0 && m->dof_damping[v] == 0) what = "a suspension without stiffness or damping";
  if (r == 3 && fabs(tl_v3_dot(m->jnt_axis + 3 * w, m->jnt_axis + 3 * m->parent[w])) > 1e-9)
    what = "axes that are not perpendicular";
  if (r == 3 && root == 0 && m->jnt_type[0] == TL_JOINT_FIXED) what = "a welded base as its chassis";
  if (!what) return TL_OK;
  return tl_engine_error(err, TL_ERR_UNSUPPORTED, "joint",
                         "system %d ('%s'), joint '%s' (part of a hinge2): the ODE plugin's dJointHinge2 does "
                         "not support %s", i, m->name, jname(m, b), what);
}

/* ------------------------------------------------------------ checks */

static tl_status check_scene(const tl_engine_scene *s, tl_error *err) {
  if (s->options.solver == TL_SOLVER_PER_CONTACT)
    return tl_engine_error(err, TL_ERR_UNSUPPORTED, "solver",
                           "ODE has no per-contact exact-cone solver: use TL_SOLVER_PGS (dWorldQuickStep) "
                           "or TL_SOLVER_DANTZIG (dWorldStep)");
  for (int i = 0; i < s->nsystem; i++) {
    const tl_engine_system *x = &s->systems[i];
    const tl_engine_model *m = &x->model;
    if (x->integrator != TL_INTEGRATOR_EULER)
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "integrator",
                             "system %d ('%s'): ODE does not support %s", i, m->name,
                             tlp_feature_name(TL_ENGINE_RK4));
    for (int b = 0; b < m->nbody; b++) {
      tl_joint_type t = m->jnt_type[b];
      int welded_base = b == 0 && t == TL_JOINT_FIXED;
      if (t == TL_JOINT_PLANAR)
        return tl_engine_error(err, TL_ERR_UNSUPPORTED, "joint",
                               "system %d ('%s'), joint '%s': ODE has no planar joint", i, m->name, jname(m, b));
      int h2 = hinge2_role(m, b);
      if (h2) {
        tl_status st = check_hinge2(m, i, b, h2, err);
        if (st) return st;
      }
      if (!welded_base && h2 != 1 && h2 != 2 && !(m->body_mass[b] > 0))
        return tl_engine_error(err, TL_ERR_UNSUPPORTED, "body",
                               "system %d ('%s'), body '%s': ODE needs a positive mass on every moving body "
                               "(this one has %g kg)", i, m->name, m->body_name[b], m->body_mass[b]);
      if (t == TL_JOINT_UNIVERSAL) {
        const double *a1 = m->jnt_axis + 3 * b, *a2 = m->jnt_axis2 + 3 * b;
        if (fabs(tl_v3_dot(a1, a2)) > 1e-9)
          return tl_engine_error(err, TL_ERR_UNSUPPORTED, "joint",
                                 "system %d ('%s'), universal joint '%s': ODE's universal joint needs "
                                 "perpendicular axes", i, m->name, jname(m, b));
      }
      for (int k = 0; k < m->jnt_nv[b]; k++) {
        int v = m->v_adr[b] + k;
        if (m->dof_mimic[v] >= 0)
          return tl_engine_error(err, TL_ERR_UNSUPPORTED, "mimic",
                                 "system %d ('%s'), joint '%s': ODE does not support %s", i, m->name,
                                 jname(m, b), tlp_feature_name(TL_ENGINE_MIMIC));
        if (m->dof_rotor_inertia[v] != 0 && t != TL_JOINT_REVOLUTE)
          return tl_engine_error(err, TL_ERR_UNSUPPORTED, "rotor_inertia",
                                 "system %d ('%s'), %s joint '%s': ODE does not support %s off revolute "
                                 "joints", i, m->name, tlp_joint_name(t),
                                 jname(m, b), tlp_feature_name(TL_ENGINE_ROTOR_INERTIA));
        if (m->dof_friction[v] != 0 && t == TL_JOINT_PRISMATIC)
          return tl_engine_error(err, TL_ERR_UNSUPPORTED, "friction",
                                 "system %d ('%s'), prismatic joint '%s': the ODE plugin does not support "
                                 "%s on sliders", i, m->name, jname(m, b),
                                 tlp_feature_name(TL_ENGINE_JOINT_FRICTION));
      }
    }
  }
  return TL_OK;
}

/* ------------------------------------------------------------ build */

static int grow_geominfo(tl_engine_world *e, int n) {
  geom_info *g = realloc(e->ginfo, (size_t)n * sizeof(*g));
  if (!g) return -1;
  e->ginfo = g;
  return 0;
}

/* A dGeom of a Talus primitive or hull. NULL for a geom ODE cannot build. */
static dGeomID make_shape(tl_engine_world *e, tl_geom_type type, const double *size, const tl_engine_model *m,
                          int g) {
  switch (type) {
    case TL_GEOM_SPHERE: return dCreateSphere(e->space, tlp_sphere_radius(size[0]));
    case TL_GEOM_BOX: return dCreateBox(e->space, size[0], size[1], size[2]);
    case TL_GEOM_CAPSULE: return dCreateCapsule(e->space, size[0], size[1]);
    case TL_GEOM_CYLINDER: return dCreateCylinder(e->space, size[0], size[1]);
    case TL_GEOM_MESH: {
      int h = m ? m->geom_hull[g] : -1;
      if (h < 0) return NULL;
      int nvert = m->hull_nvert[h], nface = m->hull_nface[h];
      double *vert = malloc((size_t)nvert * 3 * sizeof(double));
      dTriIndex *idx = malloc((size_t)nface * 3 * sizeof(dTriIndex));
      dTriMeshDataID *td = realloc(e->tridata, (size_t)(e->ntri + 1) * sizeof(*td));
      if (td) e->tridata = td;
      dTriIndex **ti = realloc(e->tri_idx, (size_t)(e->ntri + 1) * sizeof(*ti));
      if (ti) e->tri_idx = ti;
      double **tv = realloc(e->tri_vert, (size_t)(e->ntri + 1) * sizeof(*tv));
      if (tv) e->tri_vert = tv;
      if (!vert || !idx || !td || !ti || !tv) {
        free(vert);
        free(idx);
        return NULL;
      }
      memcpy(vert, m->hull_vert + 3 * m->hull_vert_adr[h], (size_t)nvert * 3 * sizeof(double));
      const int *f = m->hull_face + 3 * m->hull_face_adr[h];
      for (int k = 0; k < 3 * nface; k++) idx[k] = (dTriIndex)f[k];
      dTriMeshDataID data = dGeomTriMeshDataCreate();
      dGeomTriMeshDataBuildDouble(data, vert, 3 * sizeof(double), nvert, idx, 3 * nface, 3 * sizeof(dTriIndex));
      e->tridata[e->ntri] = data, e->tri_idx[e->ntri] = idx, e->tri_vert[e->ntri] = vert;
      e->ntri++;
      return dCreateTriMesh(e->space, data, NULL, NULL, NULL);
    }
    default: return NULL;
  }
}

static tl_status build_statics(tl_engine_world *e, tl_error *err) {
  const tl_engine_scene *s = &e->scene;
  for (int i = 0; i < s->nstatic; i++) {
    const tl_engine_static *st = &s->statics[i];
    dGeomID g = NULL;
    if (st->type == TL_GEOM_PLANE) {
      double n[3] = {st->R[2], st->R[5], st->R[8]}; /* z axis of its frame */
      g = dCreatePlane(e->space, n[0], n[1], n[2], tl_v3_dot(n, st->pos));
    } else if (st->heightmap >= 0) {
      const tl_engine_heightmap *h = &s->heightmaps[st->heightmap];
      double *rows = malloc((size_t)h->nx * (size_t)h->ny * sizeof(double));
      dHeightfieldDataID *hd = realloc(e->hfdata, (size_t)(e->nhf + 1) * sizeof(*hd));
      if (hd) e->hfdata = hd;
      double **hh = realloc(e->hfheights, (size_t)(e->nhf + 1) * sizeof(*hh));
      if (hh) e->hfheights = hh;
      if (!rows || !hd || !hh) {
        free(rows);
        return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
      }
      /* ODE: sample (i, j) at local (i dx - W/2, height, j dy - D/2), local y up; turned so
       * that local x = world x, local y = world z, local z = -world y: row j is world row
       * ny - 1 - j */
      double lo = INFINITY, hi = -INFINITY;
      for (int j = 0; j < h->ny; j++)
        for (int ix = 0; ix < h->nx; ix++) {
          double z = h->heights[(size_t)(h->ny - 1 - j) * h->nx + ix];
          rows[(size_t)j * h->nx + ix] = z;
          lo = fmin(lo, z), hi = fmax(hi, z);
        }
      double W = (h->nx - 1) * h->dx, D = (h->ny - 1) * h->dy;
      dHeightfieldDataID data = dGeomHeightfieldDataCreate();
      dGeomHeightfieldDataBuildDouble(data, rows, 0, W, D, h->nx, h->ny, 1.0, 0.0, 1.0, 0);
      dGeomHeightfieldDataSetBounds(data, lo, hi);
      e->hfdata[e->nhf] = data, e->hfheights[e->nhf] = rows, e->nhf++;
      g = dCreateHeightfield(e->space, data, 1);
      const double R[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}; /* columns: local x, y, z in world */
      dMatrix3 Ro;
      to_ode_R(Ro, R);
      dGeomSetRotation(g, Ro);
      dGeomSetPosition(g, h->x0 + 0.5 * W, h->y0 + 0.5 * D, 0);
    } else {
      g = make_shape(e, st->type, st->size, NULL, -1);
      if (g) {
        dMatrix3 Ro;
        to_ode_R(Ro, st->R);
        dGeomSetPosition(g, st->pos[0], st->pos[1], st->pos[2]);
        dGeomSetRotation(g, Ro);
      }
    }
    if (!g)
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "static", "static geom %d: ODE cannot build a %s here", i,
                             tlp_geom_name(st->type));
    if (grow_geominfo(e, e->ngeominfo + 1)) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
    e->ginfo[e->ngeominfo] = (geom_info){-1, -1, i, st->group, st->mask, st->material, st->friction};
    dGeomSetData(g, (void *)(intptr_t)(e->ngeominfo + 1));
    e->ngeominfo++;
  }
  return TL_OK;
}

static tl_status alloc_sys(ode_sys *s) {
  int nb = s->m.nbody, nv = s->m.nv, nq = s->m.nq;
  s->body = calloc((size_t)nb, sizeof(dBodyID));
  s->joint = calloc((size_t)nb, sizeof(dJointID));
  s->amotor = calloc((size_t)nb, sizeof(dJointID));
  s->passive = calloc((size_t)nb, sizeof(dJointID));
  s->fric = calloc((size_t)nb, sizeof(dJointID));
  s->h2 = calloc((size_t)(3 * nb), sizeof(int));
  s->kp = calloc((size_t)(10 * nv + nq) + 1, sizeof(double));
  s->q = calloc((size_t)(nq + nv) + 1, sizeof(double));
  s->xpos = calloc((size_t)nb * 18 + 1, sizeof(double));
  if (!s->body || !s->joint || !s->amotor || !s->passive || !s->fric || !s->kp || !s->q || !s->xpos || !s->h2)
    return TL_ERR_MEMORY;
  s->h2wheel = s->h2 + nb, s->h2root = s->h2wheel + nb;
  for (int b = 0; b < nb; b++) {
    s->h2[b] = hinge2_role(&s->m, b);
    if (s->h2[b] != 3) continue;
    int st = s->m.parent[b], first = hinge2_chain(&s->m, b) == 3 ? s->m.parent[st] : st;
    for (int k = first; k <= b; k = k == b ? b + 1 : k == st ? b : st)
      s->h2wheel[k] = b, s->h2root[k] = s->m.parent[first];
  }
  s->kd = s->kp + nv, s->ut = s->kd + nv, s->tau = s->ut + nv, s->ext = s->tau + nv;
  s->applied = s->ext + nv, s->cm = s->applied + nv, s->vstar = s->cm + nv, s->pnum = s->vstar + nv;
  s->qt = s->pnum + nv;
  s->u = s->q + nq;
  s->xrot = s->xpos + 3 * nb, s->w = s->xrot + 9 * nb, s->v = s->w + 3 * nb;
  return TL_OK;
}

/* Zero configuration: joint transforms the identity, base at its pose. */
static void zero_q(const tl_engine_model *m, double *q) {
  memset(q, 0, (size_t)m->nq * sizeof(double));
  for (int b = 0; b < m->nbody; b++) {
    if (m->jnt_type[b] == TL_JOINT_FLOATING) q[m->q_adr[b] + 3] = 1;
    if (m->jnt_type[b] == TL_JOINT_SPHERICAL) q[m->q_adr[b]] = 1;
  }
}

/* A motor joint on body b with n angular axes (world, at the zero configuration),
 * each fixed to the parent (rel 2) or the child (rel 1). */
static dJointID make_amotor(tl_engine_world *e, dBodyID child, dBodyID parent, int n, const double *axes,
                            const int *rel) {
  dJointID j = dJointCreateAMotor(e->world, 0);
  dJointAttach(j, child, parent);
  dJointSetAMotorMode(j, dAMotorUser);
  dJointSetAMotorNumAxes(j, n);
  for (int k = 0; k < n; k++)
    dJointSetAMotorAxis(j, k, parent || rel[k] == 1 ? rel[k] : 0, axes[3 * k], axes[3 * k + 1], axes[3 * k + 2]);
  return j;
}

static const int param_group[3] = {0, dParamGroup, 2 * dParamGroup};

/* The dJointHinge2 of the chain whose wheel is body w, at the zero
 * configuration (s->xpos, s->xrot): body 1 the chassis (steering axis),
 * body 2 the wheel (wheel axis), anchor at the wheel's origin. */
static void build_hinge2(tl_engine_world *e, ode_sys *s, int w) {
  const tl_engine_model *m = &s->m;
  int st = m->parent[w], sp = s->h2[m->parent[st]] == 1 ? m->parent[st] : -1;
  const double *p = s->xpos + 3 * w, *R = s->xrot + 9 * w;
  dReal a1[dSA__MAX], a2[dSA__MAX];
  double t[3];
  tl_m3_mulv(t, R, m->jnt_axis + 3 * st); /* at zero the wheel frame is the joint frame */
  a1[0] = t[0], a1[1] = t[1], a1[2] = t[2];
  tl_m3_mulv(t, R, m->jnt_axis + 3 * w);
  a2[0] = t[0], a2[1] = t[1], a2[2] = t[2];
  dJointID j = dJointCreateHinge2(e->world, 0);
  dJointAttach(j, s->body[s->h2root[w]], s->body[w]);
  dJointSetHinge2Anchor(j, p[0], p[1], p[2]);
  dJointSetHinge2Axes(j, a1, a2);
  int vs = m->v_adr[st];
  if (isfinite(m->dof_lower[vs]) || isfinite(m->dof_upper[vs])) { /* ODE's angle1 is minus Talus's steering */
    dJointSetHinge2Param(j, dParamLoStop, isfinite(m->dof_upper[vs]) ? -m->dof_upper[vs] : -dInfinity);
    dJointSetHinge2Param(j, dParamHiStop, isfinite(m->dof_lower[vs]) ? -m->dof_lower[vs] : dInfinity);
    dJointSetHinge2Param(j, dParamStopERP, e->scene.options.erp);
    dJointSetHinge2Param(j, dParamStopCFM, fmax(e->scene.options.cfm * e->scene.options.dt, 1e-10));
  }
  double dt = e->scene.options.dt, erp = e->scene.options.erp, cfm = fmax(e->scene.options.cfm * dt, 1e-10);
  if (sp >= 0) {
    double K = m->dof_stiffness[m->v_adr[sp]], D = m->dof_damping[m->v_adr[sp]];
    erp = dt * K / (dt * K + D), cfm = 1.0 / (dt * K + D);
  }
  dJointSetHinge2Param(j, dParamSuspensionERP, erp);
  dJointSetHinge2Param(j, dParamSuspensionCFM, cfm);
  s->joint[w] = s->joint[st] = j;
  if (sp >= 0) s->joint[sp] = j;
}

static tl_status build_system(tl_engine_world *e, int si, tl_error *err) {
  ode_sys *s = &e->sys[si];
  const tl_engine_model *m = &s->m;
  if (alloc_sys(s)) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  zero_q(m, s->q);
  tlp_fk(m, s->q, NULL, s->xpos, s->xrot, NULL, NULL);
  int nrotor = 0;
  for (int b = 0; b < m->nbody; b++) {
    if (b == 0 && m->jnt_type[0] == TL_JOINT_FIXED) continue; /* welded: the static world */
    if (s->h2[b] == 1 || s->h2[b] == 2) continue;              /* massless: inside the dJointHinge2 */
    dBodyID body = dBodyCreate(e->world);
    s->body[b] = body;
    double I[9], c[3];
    memcpy(I, m->body_inertia + 9 * b, sizeof(I));
    if (m->jnt_type[b] == TL_JOINT_REVOLUTE && m->dof_rotor_inertia[m->v_adr[b]] != 0) {
      const double *a = m->jnt_axis + 3 * b; /* in the body frame too: the rotation is about it */
      double r = m->dof_rotor_inertia[m->v_adr[b]];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) I[3 * i + j] += r * a[i] * a[j];
      nrotor++;
    }
    dMass mass;
    dMassSetParameters(&mass, m->body_mass[b], 0, 0, 0, I[0], I[4], I[8], I[1], I[2], I[5]);
    if (!dMassCheck(&mass))
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "inertia",
                             "system %d ('%s'), body '%s': ODE refuses its mass and inertia (not positive "
                             "definite or breaking the triangle inequality)", si, m->name, m->body_name[b]);
    dBodySetMass(body, &mass);
    tl_m3_mulv(c, s->xrot + 9 * b, m->body_com + 3 * b);
    tl_v3_add(c, c, s->xpos + 3 * b);
    dBodySetPosition(body, c[0], c[1], c[2]);
    dMatrix3 Ro;
    to_ode_R(Ro, s->xrot + 9 * b);
    dBodySetRotation(body, Ro);
  }
  if (nrotor)
    note(e, "system %d ('%s'): rotor inertia of %d revolute joints approximated by I_r a a^T added to the "
            "child body's inertia (exact on the joint's own diagonal entry of M, but also couples the "
            "ancestor DOFs that turn the child about a)", si, m->name, nrotor);
  /* joints at the zero configuration */
  int slider_passive = 0, nhinge2 = 0;
  for (int b = 1; b < m->nbody; b++) {
    tl_joint_type t = m->jnt_type[b];
    if (t == TL_JOINT_FIXED || s->h2[b] == 1 || s->h2[b] == 2) continue;
    if (s->h2[b] == 3) {
      build_hinge2(e, s, b);
      nhinge2++;
      continue;
    }
    int par = m->parent[b];
    dBodyID child = s->body[b], parent = s->body[par];
    double jp[3], jR[9], a[3], a2[3], tmp[3];
    tl_m3_mulv(tmp, s->xrot + 9 * par, m->jnt_pos + 3 * b);
    tl_v3_add(jp, s->xpos + 3 * par, tmp);
    tl_m3_mul(jR, s->xrot + 9 * par, m->jnt_rot + 9 * b);
    tl_m3_mulv(a, jR, m->jnt_axis + 3 * b);
    tl_m3_mulv(a2, jR, m->jnt_axis2 + 3 * b);
    int v0 = m->v_adr[b];
    dJointID j = NULL;
    switch (t) {
      case TL_JOINT_REVOLUTE:
        j = dJointCreateHinge(e->world, 0);
        dJointAttach(j, child, parent);
        dJointSetHingeAnchor(j, jp[0], jp[1], jp[2]);
        dJointSetHingeAxis(j, a[0], a[1], a[2]);
        break;
      case TL_JOINT_PRISMATIC:
        j = dJointCreateSlider(e->world, 0);
        dJointAttach(j, child, parent);
        dJointSetSliderAxis(j, a[0], a[1], a[2]);
        if (m->dof_stiffness[v0] != 0 || m->dof_damping[v0] != 0) slider_passive++;
        break;
      case TL_JOINT_SPHERICAL: {
        j = dJointCreateBall(e->world, 0);
        dJointAttach(j, child, parent);
        dJointSetBallAnchor(j, jp[0], jp[1], jp[2]);
        double axes[9] = {jR[0], jR[3], jR[6], jR[1], jR[4], jR[7], jR[2], jR[5], jR[8]};
        int rel[3] = {2, 2, 2};
        s->amotor[b] = make_amotor(e, child, parent, 3, axes, rel);
        break;
      }
      case TL_JOINT_UNIVERSAL: /* ODE axis1 on body1 = the child: Talus's axis2; axis2 on the parent: Talus's axis */
        j = dJointCreateUniversal(e->world, 0);
        dJointAttach(j, child, parent);
        dJointSetUniversalAnchor(j, jp[0], jp[1], jp[2]);
        dJointSetUniversalAxis1(j, a2[0], a2[1], a2[2]);
        dJointSetUniversalAxis2(j, a[0], a[1], a[2]);
        break;
      default:
        break;
    }
    s->joint[b] = j;
    /* stops of 1-DOF joints */
    if ((t == TL_JOINT_REVOLUTE || t == TL_JOINT_PRISMATIC) && (isfinite(m->dof_lower[v0]) || isfinite(m->dof_upper[v0]))) {
      void (*set)(dJointID, int, dReal) = t == TL_JOINT_REVOLUTE ? dJointSetHingeParam : dJointSetSliderParam;
      set(j, dParamLoStop, isfinite(m->dof_lower[v0]) ? m->dof_lower[v0] : -dInfinity);
      set(j, dParamHiStop, isfinite(m->dof_upper[v0]) ? m->dof_upper[v0] : dInfinity);
      set(j, dParamStopERP, e->scene.options.erp);
      set(j, dParamStopCFM, fmax(e->scene.options.cfm * e->scene.options.dt, 1e-10));
    }
    /* passive rows (damping, spring) and friction rows of rotational joints */
    if (t == TL_JOINT_REVOLUTE || t == TL_JOINT_UNIVERSAL || t == TL_JOINT_SPHERICAL) {
      int n = m->jnt_nv[b], passive = 0, fric = 0;
      for (int k = 0; k < n; k++) {
        passive |= m->dof_stiffness[v0 + k] != 0 || m->dof_damping[v0 + k] != 0;
        fric |= m->dof_friction[v0 + k] != 0;
      }
      double axes[9];
      int rel[3] = {2, 2, 2};
      if (t == TL_JOINT_REVOLUTE) memcpy(axes, a, sizeof(a));
      if (t == TL_JOINT_UNIVERSAL) memcpy(axes, a, sizeof(a)), memcpy(axes + 3, a2, sizeof(a2)), rel[1] = 1;
      if (t == TL_JOINT_SPHERICAL)
        for (int k = 0; k < 3; k++) axes[3 * k] = jR[k], axes[3 * k + 1] = jR[3 + k], axes[3 * k + 2] = jR[6 + k];
      if (passive) s->passive[b] = make_amotor(e, child, parent, n, axes, rel);
      if (fric) {
        s->fric[b] = make_amotor(e, child, parent, n, axes, rel);
        for (int k = 0; k < n; k++) {
          dJointSetAMotorParam(s->fric[b], dParamVel + param_group[k], 0);
          dJointSetAMotorParam(s->fric[b], dParamFMax + param_group[k], m->dof_friction[v0 + k]);
        }
      }
    }
  }
  if (nhinge2)
    note(e, "system %d ('%s'): %d hinge2 joints as dJointHinge2 (suspension stiffness and damping as its "
            "suspension ERP / CFM)", si, m->name, nhinge2);
  if (slider_passive)
    note(e, "system %d ('%s'): damping and springs of %d prismatic joints are in their PD motor row, "
            "which the effort limit bounds together", si, m->name, slider_passive);
  /* geoms */
  for (int g = 0; g < m->ngeom; g++) {
    int b = m->geom_body[g];
    dGeomID geom = make_shape(e, m->geom_type[g], m->geom_size + 3 * g, m, g);
    if (!geom)
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "geom",
                             "system %d ('%s'), geom '%s': ODE cannot build a %s geom%s", si, m->name,
                             m->geom_name[g], tlp_geom_name(m->geom_type[g]),
                             m->geom_type[g] == TL_GEOM_MESH ? " without a convex hull" : " on a body");
    const double *gp = m->geom_pos + 3 * g, *gR = m->geom_rot + 9 * g;
    if (s->body[b]) { /* offset from the COM frame (oriented as the body frame) */
      double off[3];
      tl_v3_sub(off, gp, m->body_com + 3 * b);
      dGeomSetBody(geom, s->body[b]);
      dGeomSetOffsetPosition(geom, off[0], off[1], off[2]);
      dMatrix3 Ro;
      to_ode_R(Ro, gR);
      dGeomSetOffsetRotation(geom, Ro);
    } else { /* welded base: static at its world pose */
      double p[3], R[9];
      tl_m3_mulv(p, s->xrot + 9 * b, gp);
      tl_v3_add(p, p, s->xpos + 3 * b);
      tl_m3_mul(R, s->xrot + 9 * b, gR);
      dMatrix3 Ro;
      to_ode_R(Ro, R);
      dGeomSetPosition(geom, p[0], p[1], p[2]);
      dGeomSetRotation(geom, Ro);
    }
    if (grow_geominfo(e, e->ngeominfo + 1)) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
    e->ginfo[e->ngeominfo] = (geom_info){si, b, g, m->geom_group[g], m->geom_mask[g], m->geom_material[g], m->geom_friction[g]};
    dGeomSetData(geom, (void *)(intptr_t)(e->ngeominfo + 1));
    e->ngeominfo++;
  }
  return TL_OK;
}

static const char *const known_options[] = {"iterations", "sor", NULL};

/* ODE's own QuickStep defaults (20 sweeps, over-relaxation 1.3) unless the options say: Talus's
 * solver_max_iter is a cap its solvers stop early under, QuickStep always runs every sweep. */
static tl_status read_options(const tl_engine_scene *s, int *iterations, double *sor, tl_error *err) {
  char val[64];
  long n;
  int r;
  *iterations = 20, *sor = 1.3;
  tl_status st = tlp_check_options("ode", s->engine_options, known_options, err);
  if (st) return st;
  if ((r = tlp_option_long(s->engine_options, "iterations", 1, 100000, &n, val, sizeof(val))) < 0)
    return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "ode: iterations=%s: expected 1 to 100000", val);
  if (r) *iterations = (int)n;
  if ((r = tlp_option_double(s->engine_options, "sor", sor, val, sizeof(val))) < 0 || (r && !(*sor > 0 && *sor < 2)))
    return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "ode: sor=%s: expected 0 < sor < 2", val);
  return TL_OK;
}

/* ------------------------------------------------------------ loop constraints */

/* A constraint's side: its ODE body (NULL: static, the world or a welded
 * base) and its body frame's pose (ODE's body sits at the COM). -1: a massless
 * hinge2 body, which ODE does not have. */
typedef struct side {
  dBodyID body;
  double x[3], R[9], com[3];
  double p[3], Rf[9]; /* the constraint frame in the world */
} side;

static int side_of(tl_engine_world *e, const tl_engine_constraint *c, int k, side *out) {
  memset(out, 0, sizeof(*out));
  tl_m3_identity(out->R);
  if (c->sys[k] >= 0) {
    ode_sys *s = &e->sys[c->sys[k]];
    int b = c->body[k];
    if (s->h2[b] == 1 || s->h2[b] == 2) return -1;
    out->body = s->body[b];
    if (out->body) {
      const dReal *cp = dBodyGetPosition(out->body), *Ro = dBodyGetRotation(out->body);
      from_ode_R(out->R, Ro);
      tl_v3_copy(out->com, s->m.body_com + 3 * b);
      double rc[3];
      tl_m3_mulv(rc, out->R, out->com);
      for (int i = 0; i < 3; i++) out->x[i] = cp[i] - rc[i];
    } else { /* the welded base */
      tl_v3_copy(out->x, s->m.jnt_pos);
      tl_m3_copy(out->R, s->m.jnt_rot);
    }
  }
  double t[3];
  tl_m3_mulv(t, out->R, c->pos[k]);
  tl_v3_add(out->p, out->x, t);
  tl_m3_mul(out->Rf, out->R, c->rot[k]);
  return 0;
}

/* Put side a's body where its constraint frame coincides with side b's (the
 * pose in which ODE's hinge and fixed joints record their reference). */
static void place_coincident(side *a, const side *b, const double rot_a[9], const double pos_a[3]) {
  double R[9], t[3], c[3];
  tl_m3_mult(R, b->Rf, rot_a); /* R rot_a = Rf_b */
  tl_m3_mulv(t, R, pos_a);
  double x[3] = {b->p[0] - t[0], b->p[1] - t[1], b->p[2] - t[2]};
  tl_m3_mulv(c, R, a->com);
  tl_v3_add(c, c, x);
  dMatrix3 Ro;
  to_ode_R(Ro, R);
  dBodySetPosition(a->body, c[0], c[1], c[2]);
  dBodySetRotation(a->body, Ro);
}

static void restore_side(const side *a) {
  double c[3];
  tl_m3_mulv(c, a->R, a->com);
  tl_v3_add(c, c, a->x);
  dMatrix3 Ro;
  to_ode_R(Ro, a->R);
  dBodySetPosition(a->body, c[0], c[1], c[2]);
  dBodySetRotation(a->body, Ro);
}

/* Each constraint as an ODE joint between the two bodies: ball -> dJointBall,
 * hinge -> dJointHinge and weld -> dJointFixed (anchors, axis and reference
 * recorded with the first body placed where the two frames coincide, then
 * put back: ODE keeps them in each body's frame), a rigid distance ->
 * dJointDBall (anchors set where they are); a distance range (rope) is refused. ERP / CFM: the
 * constraint's own when it asks for softness, else the world's. */
static tl_status build_constraints(tl_engine_world *e, const tl_engine_scene *sc, tl_error *err) {
  static const char *const names[] = {"ball", "hinge", "weld", "distance"};
  int count[4] = {0, 0, 0, 0};
  for (int k = 0; k < sc->nconstraint; k++) {
    const tl_engine_constraint *c = &sc->constraints[k];
    side a, b;
    if (side_of(e, c, 0, &a) || side_of(e, c, 1, &b))
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "constraint", "constraint '%s': a massless body of a hinge2 "
                             "chain has no ODE body to attach it to", c->name);
    int swap = !a.body; /* ODE's first body must be a dynamic one */
    if (swap && !b.body)
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "constraint", "constraint '%s' joins two static bodies",
                             c->name);
    if (c->type == TL_CONSTRAINT_DISTANCE && !(c->lo == c->hi && isfinite(c->lo)))
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "constraint", "constraint '%s': ODE has no distance range "
                             "(min / max, a rope): only a rigid distance (dJointDBall)", c->name);
    side *s1 = swap ? &b : &a, *s2 = swap ? &a : &b;
    const int i1 = swap ? 1 : 0, i2 = swap ? 0 : 1;
    dJointID j = NULL;
    switch (c->type) {
      case TL_CONSTRAINT_DISTANCE:
        j = dJointCreateDBall(e->world, 0);
        dJointAttach(j, s1->body, s2->body);
        dJointSetDBallAnchor1(j, s1->p[0], s1->p[1], s1->p[2]);
        dJointSetDBallAnchor2(j, s2->p[0], s2->p[1], s2->p[2]);
        dJointSetDBallDistance(j, c->lo);
        break;
      default: { /* ball, hinge, weld: the anchors and reference recorded with the frames coincident */
        place_coincident(s1, s2, c->rot[i1], c->pos[i1]);
        if (c->type == TL_CONSTRAINT_BALL) {
          j = dJointCreateBall(e->world, 0);
          dJointAttach(j, s1->body, s2->body);
          dJointSetBallAnchor(j, s2->p[0], s2->p[1], s2->p[2]);
        } else if (c->type == TL_CONSTRAINT_HINGE) {
          double ax[3];
          tl_m3_mulv(ax, s2->R, c->axis[i2]);
          j = dJointCreateHinge(e->world, 0);
          dJointAttach(j, s1->body, s2->body);
          dJointSetHingeAnchor(j, s2->p[0], s2->p[1], s2->p[2]);
          dJointSetHingeAxis(j, ax[0], ax[1], ax[2]);
        } else {
          j = dJointCreateFixed(e->world, 0);
          dJointAttach(j, s1->body, s2->body);
          dJointSetFixed(j);
        }
        restore_side(s1);
      }
    }
    if (c->erp > 0 || c->cfm > 0) {
      double erp = c->erp > 0 ? c->erp : e->scene.options.erp, cfm = fmax(c->cfm, 1e-10);
      switch (c->type) {
        case TL_CONSTRAINT_BALL: dJointSetBallParam(j, dParamERP, erp), dJointSetBallParam(j, dParamCFM, cfm); break;
        case TL_CONSTRAINT_HINGE: dJointSetHingeParam(j, dParamERP, erp), dJointSetHingeParam(j, dParamCFM, cfm); break;
        case TL_CONSTRAINT_WELD: dJointSetFixedParam(j, dParamERP, erp), dJointSetFixedParam(j, dParamCFM, cfm); break;
        default: dJointSetDBallParam(j, dParamERP, erp), dJointSetDBallParam(j, dParamCFM, cfm); break;
      }
    }
    count[c->type & 3]++;
  }
  if (sc->nconstraint)
    note(e, "loop constraints: %d ball (dJointBall), %d hinge (dJointHinge), %d weld (dJointFixed), %d distance "
            "(dJointDBall) joints between the bodies; their position error is corrected by ODE's ERP (%g) each "
            "step, not projected (drift stays of the order of ERP's correction), and their force and torque are "
            "not read back (tl_world_constraint reports 0)", count[0], count[1], count[2], count[3],
         e->scene.options.erp);
  (void)names;
  return TL_OK;
}

/* ------------------------------------------------------------ create */

static tl_status ode_create(const tl_engine_scene *scene, tl_engine_world **out, tl_error *err) {
  *out = NULL;
  int iterations;
  double sor;
  tl_status st = read_options(scene, &iterations, &sor, err);
  if (!st) st = check_scene(scene, err);
  if (st) return st;
  pthread_once(&ode_once, ode_init);
  dAllocateODEDataForThread(dAllocateMaskAll);
  tl_engine_world *e = calloc(1, sizeof(*e));
  if (!e) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  e->scene = *scene;
  e->systems = calloc((size_t)scene->nsystem + 1, sizeof(*e->systems));
  e->statics = calloc((size_t)scene->nstatic + 1, sizeof(*e->statics));
  e->pairs = calloc((size_t)scene->npair + 1, sizeof(*e->pairs));
  e->sys = calloc((size_t)scene->nsystem + 1, sizeof(*e->sys));
  if (!e->systems || !e->statics || !e->pairs || !e->sys) {
    ode_destroy(e);
    return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  }
  memcpy(e->systems, scene->systems, (size_t)scene->nsystem * sizeof(*e->systems));
  memcpy(e->statics, scene->statics, (size_t)scene->nstatic * sizeof(*e->statics));
  memcpy(e->pairs, scene->pairs, (size_t)scene->npair * sizeof(*e->pairs));
  e->scene.systems = e->systems, e->scene.statics = e->statics, e->scene.pairs = e->pairs;
  e->scene.heightmaps = NULL; /* used while building only */
  e->world = dWorldCreate();
  e->space = dHashSpaceCreate(0);
  e->group = dJointGroupCreate(0);
  dWorldSetGravity(e->world, scene->options.gravity[0], scene->options.gravity[1], scene->options.gravity[2]);
  dWorldSetERP(e->world, scene->options.erp);
  dWorldSetCFM(e->world, fmax(scene->options.cfm * scene->options.dt, 1e-10));
  dWorldSetContactMaxCorrectingVel(e->world, scene->options.max_recovery_speed);
  dWorldSetContactSurfaceLayer(e->world, 0);
  dWorldSetQuickStepNumIterations(e->world, iterations);
  dWorldSetQuickStepW(e->world, sor);
  dWorldSetAutoDisableFlag(e->world, 0);
  const tl_engine_heightmap *hm = scene->heightmaps;
  e->scene.heightmaps = hm;
  st = build_statics(e, err);
  e->scene.heightmaps = NULL;
  for (int i = 0; i < scene->nsystem && !st; i++) {
    e->sys[i].m = scene->systems[i].model;
    e->nsys = i + 1;
    st = build_system(e, i, err);
  }
  if (!st) st = build_constraints(e, scene, err);
  if (st) {
    ode_destroy(e);
    return st;
  }
  note(e, "contacts: ODE's friction pyramid (dContactApprox1), created at penetration (Talus's %g m "
          "speculative margin and relative contact compliance %g are not used), soft_erp %g, soft_cfm = "
          "CFM x dt; solver %s", scene->options.contact_margin, scene->options.contact_compliance, scene->options.erp,
       scene->options.solver == TL_SOLVER_DANTZIG ? "dWorldStep (Dantzig LCP)" : "dWorldQuickStep (SOR-PGS)");
  if (scene->options.solver != TL_SOLVER_DANTZIG)
    note(e, "QuickStep: %d sweeps, over-relaxation %g (ODE's defaults unless the options iterations= / sor= "
            "say; the world's solver_max_iter and sor are Talus's)", iterations, sor);
  *out = e;
  return TL_OK;
}

/* ------------------------------------------------------------ state */

static tl_status check_sys(const tl_engine_world *e, int i, tl_error *err) { return tlp_check_system(i, e->nsys, err); }

static tl_status ode_set_state(tl_engine_world *e, int i, const double *q, const double *u, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  ode_sys *s = &e->sys[i];
  const tl_engine_model *m = &s->m;
  memcpy(s->q, q, (size_t)m->nq * sizeof(double));
  memcpy(s->u, u, (size_t)m->nv * sizeof(double));
  tlp_fk(m, q, u, s->xpos, s->xrot, s->w, s->v);
  for (int b = 0; b < m->nbody; b++) {
    if (!s->body[b]) continue;
    const double *R = s->xrot + 9 * b, *w = s->w + 3 * b;
    double rc[3], c[3], vc[3], t[3];
    tl_m3_mulv(rc, R, m->body_com + 3 * b);
    tl_v3_add(c, s->xpos + 3 * b, rc);
    tl_v3_cross(t, w, rc);
    tl_v3_add(vc, s->v + 3 * b, t);
    dMatrix3 Ro;
    to_ode_R(Ro, R);
    dBodySetPosition(s->body[b], c[0], c[1], c[2]);
    dBodySetRotation(s->body[b], Ro);
    dBodySetLinearVel(s->body[b], vc[0], vc[1], vc[2]);
    dBodySetAngularVel(s->body[b], w[0], w[1], w[2]);
  }
  e->contacts_fresh = 0; /* contacts of the old state are void */
  return TL_OK;
}

/* Read every body's pose and velocity (origin of the body frame) into the FK scratch. */
static void read_hinge2(ode_sys *s, int w);

static void read_bodies(ode_sys *s) {
  const tl_engine_model *m = &s->m;
  for (int b = 0; b < m->nbody; b++) {
    if (s->h2[b] == 1 || s->h2[b] == 2) continue; /* after the wheel: read_hinge2 */
    if (!s->body[b]) { /* the welded base */
      memcpy(s->xpos, m->jnt_pos, 3 * sizeof(double));
      memcpy(s->xrot, m->jnt_rot, 9 * sizeof(double));
      memset(s->w, 0, 3 * sizeof(double));
      memset(s->v, 0, 3 * sizeof(double));
      continue;
    }
    const dReal *c = dBodyGetPosition(s->body[b]), *R = dBodyGetRotation(s->body[b]);
    const dReal *vc = dBodyGetLinearVel(s->body[b]), *w = dBodyGetAngularVel(s->body[b]);
    double *xr = s->xrot + 9 * b, rc[3], t[3];
    from_ode_R(xr, R);
    tl_m3_mulv(rc, xr, m->body_com + 3 * b);
    for (int k = 0; k < 3; k++) s->xpos[3 * b + k] = c[k] - rc[k], s->w[3 * b + k] = w[k];
    tl_v3_cross(t, s->w + 3 * b, rc);
    for (int k = 0; k < 3; k++) s->v[3 * b + k] = vc[k] - t[k];
  }
  for (int b = 0; b < m->nbody; b++)
    if (s->h2[b] == 3) read_hinge2(s, b);
}

/* Poses and velocities of the massless bodies of the hinge2 chain of wheel
 * w from its chassis and the wheel (read_bodies): suspension q_s = (x_w -
 * x_j) . a1 and its rate from the wheel origin's velocity relative to the
 * chassis; steering from R_rel = R_j^T R_w = Rot(a1, s) Rot(a2, w) (a1 _|_
 * a2: R_rel a2 = a2 cos s + (a1 x a2) sin s) and its rate w_rel . a1. The
 * wheel's own coordinates then follow from tlp_joint_state as any hinge. */
static void read_hinge2(ode_sys *s, int w) {
  const tl_engine_model *m = &s->m;
  int st = m->parent[w], sp = s->h2[m->parent[st]] == 1 ? m->parent[st] : -1, r = s->h2root[w];
  int first = sp >= 0 ? sp : st;
  const double *pr = s->xpos + 3 * r, *Rr = s->xrot + 9 * r, *wr = s->w + 3 * r, *vr = s->v + 3 * r;
  const double *a1 = m->jnt_axis + 3 * st, *a2 = m->jnt_axis + 3 * w;
  double jp[3], jR[9], t[3], a1w[3], d[3], vat[3], dv[3], Rrel[9], n[3], x[3], R1[9], wrel[3];
  tl_m3_mulv(t, Rr, m->jnt_pos + 3 * first);
  tl_v3_add(jp, pr, t);
  tl_m3_mul(jR, Rr, m->jnt_rot + 9 * first);
  tl_m3_mulv(a1w, jR, a1);
  tl_v3_sub(d, s->xpos + 3 * w, jp);
  double qs = sp >= 0 ? tl_v3_dot(d, a1w) : 0.0;
  tl_v3_sub(d, s->xpos + 3 * w, pr);
  tl_v3_cross(t, wr, d);
  tl_v3_add(vat, vr, t);
  tl_v3_sub(dv, s->v + 3 * w, vat);
  double us = sp >= 0 ? tl_v3_dot(dv, a1w) : 0.0;
  tl_m3_tmul(Rrel, jR, s->xrot + 9 * w);
  tl_v3_cross(n, a1, a2);
  tl_m3_mulv(x, Rrel, a2);
  double qst = atan2(tl_v3_dot(x, n), tl_v3_dot(x, a2));
  tl_v3_sub(wrel, s->w + 3 * w, wr);
  double ust = tl_v3_dot(wrel, a1w);
  /* the chain's common origin and its velocity (on the steering axis) */
  double o[3], vo[3];
  tl_v3_copy(o, jp);
  tl_v3_addscl(o, a1w, qs);
  tl_v3_sub(d, o, pr);
  tl_v3_cross(t, wr, d);
  tl_v3_add(vo, vr, t);
  tl_v3_addscl(vo, a1w, us);
  if (sp >= 0) {
    tl_v3_copy(s->xpos + 3 * sp, o);
    tl_m3_copy(s->xrot + 9 * sp, jR);
    tl_v3_copy(s->w + 3 * sp, wr);
    tl_v3_copy(s->v + 3 * sp, vo);
  }
  tl_m3_axis_angle(R1, a1, qst);
  tl_v3_copy(s->xpos + 3 * st, o);
  tl_m3_mul(s->xrot + 9 * st, jR, R1);
  tl_v3_copy(s->w + 3 * st, wr);
  tl_v3_addscl(s->w + 3 * st, a1w, ust);
  tl_v3_copy(s->v + 3 * st, vo);
}

static void pull_state(ode_sys *s) {
  const tl_engine_model *m = &s->m;
  read_bodies(s);
  for (int b = 0; b < m->nbody; b++) {
    int p = b > 0 ? m->parent[b] : 0;
    tlp_joint_state(m, b, s->xpos + 3 * p, s->xrot + 9 * p, s->w + 3 * p, s->v + 3 * p, s->xpos + 3 * b,
                    s->xrot + 9 * b, s->w + 3 * b, s->v + 3 * b, s->q + m->q_adr[b], s->q + m->q_adr[b],
                    s->u + m->v_adr[b]);
  }
}

static tl_status ode_get_state(const tl_engine_world *e, int i, double *q, double *u, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  const ode_sys *s = &e->sys[i];
  memcpy(q, s->q, (size_t)s->m.nq * sizeof(double));
  memcpy(u, s->u, (size_t)s->m.nv * sizeof(double));
  return TL_OK;
}

/* ------------------------------------------------------------ control */

/* A PD on a hinge2's suspension DOF is folded into ODE's suspension spring,
 * which rests at 0: its targets must be 0. */
static tl_status check_suspension_pd(const ode_sys *s, int i, const double *kp, const double *kd, const double *qt,
                                     const double *ut, tl_error *err) {
  const tl_engine_model *m = &s->m;
  for (int v = 0; v < m->nv; v++) {
    int b = m->dof_body[v];
    if (s->h2[b] == 1 && (kp[v] != 0 || kd[v] != 0) && (qt[m->q_adr[b]] != 0 || ut[v] != 0))
      return tl_engine_error(err, TL_ERR_UNSUPPORTED, "q_target",
                             "system %d ('%s'), joint '%s': a PD on a hinge2's suspension becomes ODE's suspension "
                             "spring, which rests at 0: targets other than 0 are not supported (DOF %d)", i, m->name,
                             jname(m, b), v);
  }
  return TL_OK;
}

static tl_status ode_gains(tl_engine_world *e, int i, const double *kp, const double *kd, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  ode_sys *s = &e->sys[i];
  const tl_engine_model *m = &s->m;
  if (m->jnt_type[0] == TL_JOINT_FLOATING)
    for (int k = 0; k < 6; k++)
      if (kp[k] != 0 || kd[k] != 0)
        return tl_engine_error(err, TL_ERR_UNSUPPORTED, "kp", "system %d ('%s'): ODE does not support %s (DOF %d)",
                               i, m->name, tlp_feature_name(TL_ENGINE_BASE_PD), k);
  st = check_suspension_pd(s, i, kp, kd, s->qt, s->ut, err);
  if (st) return st;
  memcpy(s->kp, kp, (size_t)m->nv * sizeof(double));
  memcpy(s->kd, kd, (size_t)m->nv * sizeof(double));
  return TL_OK;
}

static tl_status ode_targets(tl_engine_world *e, int i, const double *qt, const double *ut, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  ode_sys *s = &e->sys[i];
  st = check_suspension_pd(s, i, s->kp, s->kd, qt, ut, err);
  if (st) return st;
  memcpy(s->qt, qt, (size_t)s->m.nq * sizeof(double));
  memcpy(s->ut, ut, (size_t)s->m.nv * sizeof(double));
  return TL_OK;
}

static tl_status ode_force(tl_engine_world *e, int i, const double *tau, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(e->sys[i].tau, tau, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

static tl_status ode_ext(tl_engine_world *e, int i, const double *f, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(e->sys[i].ext, f, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

/* Equal and opposite wrenches realising the generalized force f (nv) of one joint. */
static void apply_joint_force(ode_sys *s, int b, const double *f) {
  const tl_engine_model *m = &s->m;
  dBodyID child = s->body[b], parent = b > 0 ? s->body[m->parent[b]] : NULL;
  if (s->h2[b]) /* a hinge2's DOF: between the wheel and the chassis */
    child = s->body[s->h2wheel[b]], parent = s->body[s->h2root[b]];
  tl_joint_type t = m->jnt_type[b];
  if (t == TL_JOINT_FLOATING) {
    const double *p = s->xpos;
    dBodyAddForceAtPos(child, f[0], f[1], f[2], p[0], p[1], p[2]);
    dBodyAddTorque(child, f[3], f[4], f[5]);
    return;
  }
  int par = m->parent[b];
  double jR[9], a[3], tq[3] = {0, 0, 0};
  tl_m3_mul(jR, s->xrot + 9 * par, m->jnt_rot + 9 * b);
  if (t == TL_JOINT_PRISMATIC) {
    tl_m3_mulv(a, jR, m->jnt_axis + 3 * b);
    const dReal *c = dBodyGetPosition(child);
    dBodyAddForce(child, f[0] * a[0], f[0] * a[1], f[0] * a[2]);
    if (parent) dBodyAddForceAtPos(parent, -f[0] * a[0], -f[0] * a[1], -f[0] * a[2], c[0], c[1], c[2]);
    return;
  }
  if (t == TL_JOINT_REVOLUTE) {
    tl_m3_mulv(a, jR, m->jnt_axis + 3 * b);
    tl_v3_scale(tq, a, f[0]);
  } else if (t == TL_JOINT_SPHERICAL) {
    tl_m3_mulv(tq, jR, f);
  } else if (t == TL_JOINT_UNIVERSAL) {
    double R1[9], a2[3], a2w[3];
    tl_m3_axis_angle(R1, m->jnt_axis + 3 * b, s->q[m->q_adr[b]]);
    tl_m3_mulv(a2, R1, m->jnt_axis2 + 3 * b);
    tl_m3_mulv(a2w, jR, a2);
    tl_m3_mulv(a, jR, m->jnt_axis + 3 * b);
    tl_v3_scale(tq, a, f[0]);
    tl_v3_addscl(tq, a2w, f[1]);
  } else {
    return;
  }
  dBodyAddTorque(child, tq[0], tq[1], tq[2]);
  if (parent) dBodyAddTorque(parent, -tq[0], -tq[1], -tq[2]);
}

/* The motor of DOF k of body b's joint (type t): ODE's hinge2 rows measure
 * body 1 (the chassis) against body 2 (the wheel), so their velocity is
 * minus Talus's u. */
static void set_motor(dJointID j, tl_joint_type t, int k, double vel, double fmax, double cfm, int h2) {
  if (h2 == 2 || h2 == 3) {
    int g = h2 == 3 ? dParamGroup : 0;
    dJointSetHinge2Param(j, dParamVel + g, -vel);
    dJointSetHinge2Param(j, dParamFMax + g, fmax);
    dJointSetHinge2Param(j, dParamCFM + g, cfm);
  } else if (t == TL_JOINT_REVOLUTE) {
    dJointSetHingeParam(j, dParamVel, vel);
    dJointSetHingeParam(j, dParamFMax, fmax);
    dJointSetHingeParam(j, dParamCFM, cfm);
  } else if (t == TL_JOINT_PRISMATIC) {
    dJointSetSliderParam(j, dParamVel, vel);
    dJointSetSliderParam(j, dParamFMax, fmax);
    dJointSetSliderParam(j, dParamCFM, cfm);
  } else if (t == TL_JOINT_UNIVERSAL) { /* ODE's axis1 is Talus's second */
    int g = k == 0 ? dParamGroup : 0;
    dJointSetUniversalParam(j, dParamVel + g, vel);
    dJointSetUniversalParam(j, dParamFMax + g, fmax);
    dJointSetUniversalParam(j, dParamCFM + g, cfm);
  } else { /* an amotor */
    dJointSetAMotorParam(j, dParamVel + param_group[k], vel);
    dJointSetAMotorParam(j, dParamFMax + param_group[k], fmax);
    dJointSetAMotorParam(j, dParamCFM + param_group[k], cfm);
  }
}

/* Motors and forces of one system for the coming step. */
static void apply_control(tl_engine_world *e, ode_sys *s) {
  const tl_engine_model *m = &s->m;
  double dt = e->scene.options.dt;
  tlp_fk(m, s->q, NULL, s->xpos, s->xrot, NULL, NULL);
  for (int b = 0; b < m->nbody; b++) {
    tl_joint_type t = m->jnt_type[b];
    int v0 = m->v_adr[b], n = m->jnt_nv[b];
    if (n == 0) continue;
    double e_pd[6], e_sp[6], free_f[6] = {0};
    tlp_pd_error(m, b, s->q, s->qt, e_pd);
    tlp_spring_error(m, b, s->q, e_sp);
    int any_free = 0;
    for (int k = 0; k < n; k++) {
      int v = v0 + k;
      double eff = m->dof_effort[v], tff = tlp_clamp_effort(s->tau[v], eff);
      free_f[k] = s->ext[v];
      double K = m->dof_stiffness[v], D = m->dof_damping[v];
      if (s->h2[b] == 1) { /* a hinge2's suspension: spring K + kp and damper D + kd to 0 in ODE's own row */
        double Kt = K + s->kp[v], Dt = D + s->kd[v];
        dJointSetHinge2Param(s->joint[b], dParamSuspensionERP, dt * Kt / (dt * Kt + Dt));
        dJointSetHinge2Param(s->joint[b], dParamSuspensionCFM, 1.0 / (dt * Kt + Dt));
        s->cm[v] = s->vstar[v] = s->pnum[v] = 0;
        free_f[k] += tff;
        any_free |= free_f[k] != 0;
        continue;
      }
      int slider = t == TL_JOINT_PRISMATIC;
      double cm = dt * s->kp[v] + s->kd[v] + (slider ? dt * K + D : 0.0);
      double num = s->kp[v] * e_pd[k] + s->kd[v] * s->ut[v] + (slider ? K * e_sp[k] : 0.0);
      s->cm[v] = cm;
      s->pnum[v] = slider ? K * e_sp[k] : 0.0;
      if (t == TL_JOINT_FLOATING) {
        free_f[k] += tff;
        s->vstar[v] = 0;
      } else if (cm > 0) {
        s->vstar[v] = (num + tff) / cm;
        dJointID j = t == TL_JOINT_SPHERICAL ? s->amotor[b] : s->joint[b];
        set_motor(j, t, k, s->vstar[v], isfinite(eff) ? eff : dInfinity, 1.0 / cm, s->h2[b]);
      } else {
        s->vstar[v] = 0;
        free_f[k] += tff;
        dJointID j = t == TL_JOINT_SPHERICAL ? s->amotor[b] : s->joint[b];
        if (s->h2[b] != 1) set_motor(j, t, k, 0, 0, 0, s->h2[b]);
      }
      if (s->passive[b]) {
        double cp = dt * K + D;
        set_motor(s->passive[b], TL_JOINT_SPHERICAL, k, cp > 0 ? K * e_sp[k] / cp : 0, cp > 0 ? dInfinity : 0,
                  cp > 0 ? 1.0 / cp : 0, 0);
      }
      any_free |= free_f[k] != 0;
    }
    if (any_free && (s->body[b] || s->h2[b])) apply_joint_force(s, b, free_f);
  }
}

/* ------------------------------------------------------------ collision */

static const geom_info *info_of(const tl_engine_world *e, dGeomID g) {
  intptr_t k = (intptr_t)dGeomGetData(g);
  return k > 0 && k <= e->ngeominfo ? &e->ginfo[k - 1] : NULL;
}

static dBodyID body_of(const tl_engine_world *e, const geom_info *gi) {
  return gi->sys >= 0 ? e->sys[gi->sys].body[gi->body] : NULL;
}

static void near_callback(void *data, dGeomID o1, dGeomID o2) {
  tl_engine_world *e = data;
  const geom_info *a = info_of(e, o1), *b = info_of(e, o2);
  if (!a || !b) return;
  if (a->sys < 0 || (b->sys >= 0 && b->sys < a->sys)) { /* the system geom (lower system) first */
    const geom_info *t = a;
    a = b, b = t;
    dGeomID tg = o1;
    o1 = o2, o2 = tg;
  }
  if (!tlp_may_collide(&e->scene, a->sys, a->body, a->group, a->mask, b->sys, b->body, b->group, b->mask)) return;
  dBodyID ba = body_of(e, a), bb = body_of(e, b);
  if (!ba && bb) { /* the side with a body first: ODE's feedback f1 is on it */
    const geom_info *t = a;
    a = b, b = t;
    dGeomID tg = o1;
    o1 = o2, o2 = tg;
    dBodyID tb = ba;
    ba = bb, bb = tb;
  }
  if (!ba) return; /* two bodies that cannot move */
  dContactGeom pts[MAX_POINTS];
  int n = dCollide(o1, o2, MAX_POINTS, pts, sizeof(dContactGeom));
  if (n <= 0) return;
  if (e->ncontact + n > e->cap_contact) { /* grow; integrate1 then collides again (feedback pointers moved) */
    int cap = 2 * e->cap_contact + n + 16;
    contact_rec *c = realloc(e->contacts, (size_t)cap * sizeof(*c));
    if (!c) {
      tl_engine_error(&e->cb_err, TL_ERR_MEMORY, NULL, "out of memory for contacts");
      return;
    }
    e->contacts = c;
    e->cap_contact = cap;
  }
  double mu, rest, thr, erp, cfm;
  tlp_pair_material(&e->scene, a->material, b->material, a->friction, b->friction, &mu, &rest, &thr, &erp, &cfm);
  for (int k = 0; k < n; k++) {
    dContact c;
    memset(&c, 0, sizeof(c));
    c.surface.mode = dContactApprox1 | dContactSoftERP | dContactSoftCFM | (rest > 0 ? dContactBounce : 0);
    c.surface.mu = mu;
    c.surface.bounce = rest;
    c.surface.bounce_vel = thr;
    c.surface.soft_erp = erp;
    c.surface.soft_cfm = fmax(cfm * e->scene.options.dt, 1e-10);
    c.geom = pts[k];
    contact_rec *r = &e->contacts[e->ncontact++];
    memset(r, 0, sizeof(*r));
    tl_contact_info *ci = &r->info;
    ci->system = a->sys, ci->body = a->body, ci->geom = a->geom;
    ci->other_system = b->sys, ci->other_body = b->sys >= 0 ? b->body : -1, ci->other_geom = b->geom;
    for (int i = 0; i < 3; i++) ci->pos[i] = pts[k].pos[i], ci->normal[i] = pts[k].normal[i];
    ci->depth = pts[k].depth;
    ci->mu = mu;
    dJointID j = dJointCreateContact(e->world, e->group, &c);
    dJointAttach(j, ba, bb);
    dJointSetFeedback(j, &r->fb);
  }
}

typedef enum { ODE_COLLIDE, ODE_STEP_DANTZIG, ODE_STEP_QUICK } ode_call;

/* dSpaceCollide, dWorldStep or dWorldQuickStep with ODE's internal errors caught (ode_fatal):
 * 1 if it returned (*ok the step's result), 0 if ODE stopped in it (e->broken then holds the
 * message). */
static int ode_guarded(tl_engine_world *e, ode_call call, int *ok) {
  jmp_buf jb;
  ode_jump = &jb;
  if (setjmp(jb)) {
    ode_jump = NULL;
    snprintf(e->broken, sizeof(e->broken), "%s", ode_jump_msg[0] ? ode_jump_msg : "(no message)");
    return 0;
  }
  if (call == ODE_COLLIDE)
    dSpaceCollide(e->space, e, near_callback);
  else if (call == ODE_STEP_DANTZIG)
    *ok = dWorldStep(e->world, e->scene.options.dt);
  else
    *ok = dWorldQuickStep(e->world, e->scene.options.dt);
  ode_jump = NULL;
  return 1;
}

static tl_status ode_integrate1(tl_engine_world *e, tl_error *err) {
  if (e->broken[0]) return ode_broken_error(e, err);
  dAllocateODEDataForThread(dAllocateMaskAll);
  dJointGroupEmpty(e->group);
  e->ncontact = 0;
  memset(&e->cb_err, 0, sizeof(e->cb_err));
  /* contact records must not move while joints point at their feedback: reserve first */
  if (e->cap_contact < 64) {
    contact_rec *c = realloc(e->contacts, 64 * sizeof(*c));
    if (!c) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
    e->contacts = c, e->cap_contact = 64;
  }
  for (;;) {
    int cap = e->cap_contact, ok = 1;
    if (!ode_guarded(e, ODE_COLLIDE, &ok)) return ode_broken_error(e, err);
    if (e->cb_err.status) {
      *err = e->cb_err;
      return e->cb_err.status;
    }
    if (e->cap_contact == cap) break;
    /* grown inside the callback: the feedback pointers of earlier joints moved; redo */
    dJointGroupEmpty(e->group);
    e->ncontact = 0;
  }
  e->contacts_fresh = 1;
  return TL_OK;
}

static tl_status ode_integrate2(tl_engine_world *e, tl_error *err) {
  if (e->broken[0]) return ode_broken_error(e, err);
  if (!e->contacts_fresh) {
    tl_status st = ode_integrate1(e, err);
    if (st) return st;
  }
  for (int i = 0; i < e->nsys; i++) apply_control(e, &e->sys[i]);
  pthread_mutex_lock(&step_lock);
  dRandSetSeed(e->seed);
  int ok = 0,
      returned = ode_guarded(e, e->scene.options.solver == TL_SOLVER_DANTZIG ? ODE_STEP_DANTZIG : ODE_STEP_QUICK, &ok);
  e->seed = dRandGetSeed();
  pthread_mutex_unlock(&step_lock);
  e->contacts_fresh = 0;
  if (!returned) return ode_broken_error(e, err);
  if (!ok) return tl_engine_error(err, TL_ERR_MEMORY, NULL, "ODE's step failed (out of memory)");
  for (int i = 0; i < e->nsys; i++) {
    ode_sys *s = &e->sys[i];
    const tl_engine_model *m = &s->m;
    pull_state(s);
    for (int v = 0; v < m->nv; v++) { /* the actuator: the motor law at the end-of-step velocity */
      double eff = m->dof_effort[v], tff = tlp_clamp_effort(s->tau[v], eff);
      if (s->h2[m->dof_body[v]] == 1) { /* the PD part of ODE's suspension row, at the end-of-step state */
        s->applied[v] = tff - s->kp[v] * s->q[m->q_adr[m->dof_body[v]]] - s->kd[v] * s->u[v];
        continue;
      }
      if (m->jnt_type[m->dof_body[v]] == TL_JOINT_FLOATING || !(s->cm[v] > 0)) {
        s->applied[v] = tff;
        continue;
      }
      double lam = tlp_clamp_effort(s->cm[v] * (s->vstar[v] - s->u[v]), eff);
      if (m->jnt_type[m->dof_body[v]] == TL_JOINT_PRISMATIC) /* the row also carries the passive terms */
        lam -= s->pnum[v] - (e->scene.options.dt * m->dof_stiffness[v] + m->dof_damping[v]) * s->u[v];
      s->applied[v] = lam;
    }
  }
  for (int k = 0; k < e->ncontact; k++) {
    contact_rec *r = &e->contacts[k];
    const dReal *f = r->fb.f1; /* on ODE's body 1: the contact's system side */
    for (int i = 0; i < 3; i++) r->info.impulse[i] = f[i] * e->scene.options.dt;
  }
  return TL_OK;
}

/* ------------------------------------------------------------ read-back */

static int ode_ncontact(const tl_engine_world *e) { return e->ncontact; }

static tl_status ode_contact(const tl_engine_world *e, int k, tl_contact_info *out, tl_error *err) {
  if (k < 0 || k >= e->ncontact) return tl_engine_error(err, TL_ERR_ARGUMENT, "k", "contact %d out of range", k);
  *out = e->contacts[k].info;
  return TL_OK;
}

static tl_status ode_applied(const tl_engine_world *e, int i, double *tau, tl_error *err) {
  tl_status st = check_sys(e, i, err);
  if (st) return st;
  memcpy(tau, e->sys[i].applied, (size_t)e->sys[i].m.nv * sizeof(double));
  return TL_OK;
}

static const char *ode_notes(const tl_engine_world *e) { return e->notes; }

/* ------------------------------------------------------------ the table */

static char ode_version[64];

static const tl_engine_api ode_api = {
    TL_ENGINE_ABI_VERSION,
    sizeof(tl_engine_api),
    "ode",
    ode_version,
    "ODE in maximal coordinates: a dBody per Talus body at its COM, hinge / slider / ball / universal "
    "joints built at the zero configuration, limits as stops, a fixed base welded to the static world; "
    "the implicit PD as the joint motors made soft by CFM = 1 / (dt kp + kd) (exact Tan-Liu-Turk "
    "stable PD, bounded by the effort limit), damping and springs as a second soft motor row, Coulomb "
    "joint friction as a hard one; revolute rotor inertia approximated in the child's inertia; geoms "
    "incl. convex hulls as trimeshes and heightmaps as heightfields; contacts with ODE's friction "
    "pyramid, the pair's restitution as bounce, the world's ERP / CFM; solvers: TL_SOLVER_PGS -> "
    "dWorldQuickStep (default), TL_SOLVER_DANTZIG -> dWorldStep; loop constraints as ODE joints between "
    "the bodies (ball -> dJointBall, hinge -> dJointHinge, weld -> dJointFixed, rigid distance -> dJointDBall; "
    "no distance range), corrected by ERP",
    ode_caps,
    ode_create,
    ode_destroy,
    ode_set_state,
    ode_get_state,
    ode_gains,
    ode_targets,
    ode_force,
    ode_ext,
    ode_integrate1,
    ode_integrate2,
    ode_ncontact,
    ode_contact,
    ode_applied,
    NULL,
    ode_notes,
};

__attribute__((visibility("default"))) const tl_engine_api *tl_engine_plugin_entry(int host_abi_version) {
  (void)host_abi_version;
  if (!ode_version[0]) {
    char cfg[256] = "";
    const char *c = dGetConfiguration();
    snprintf(cfg, sizeof(cfg), "%s", c ? c : "");
    snprintf(ode_version, sizeof(ode_version), "ODE 0.16 (%s precision)",
             strstr(cfg, "double_precision") ? "double" : "single");
  }
  return &ode_api;
}
