/* talus_bench peer: MuJoCo (the Debian package libmujoco-dev, 2.2.2),
 * measured in the same run as Talus, on the same robots, at the same state.
 *
 * The MuJoCo model is generated from the compiled Talus model, not from the
 * URDF (MuJoCo 2.2's URDF import would weld the base, stumble on meshes it
 * cannot read and fuse static bodies on its own terms), by the project's one
 * MuJoCo model builder, plugins/mujoco/mj_build.h, which the MuJoCo engine
 * plugin uses too; its header documents every mapping (bodies at the joint
 * frames, hinge / slide / ball / two hinges for a universal joint / free
 * joint, the model's exact merged inertials, rotor inertia as armature,
 * damping, friction loss, springs, limits, mimic equalities, effort limits
 * as actuator forceranges). Here, on top of it:
 * - the step's PD: kp by the position-type general actuator of each
 *   non-base DOF (gain 1, affine bias -kp q written into actuator_biasprm,
 *   ctrl = kp times the target configuration; ball joints: three actuators
 *   with unit gears on the components of the rotation vector), explicit; kd
 *   added to the joint damping, which MuJoCo's Euler integrator treats
 *   implicitly (M + dt D), as Talus treats kd (M + dt Kd + dt^2 Kp). With kd
 *   in the actuator bias instead (explicit), MuJoCo's step diverges on light
 *   robots (solo12) at these gains. Query columns: no collision geoms,
 *   contacts disabled;
 * - the contact step (bench_peer_state.contact 1 or 2): the builder's
 *   collision geoms (MuJoCo primitives; a mesh as a mesh asset of the
 *   vertices of Talus's convex hull) and a ground plane z = 0, one explicit
 *   contact pair per robot geom and the ground (as Talus without
 *   self-collision) with the pair's Talus friction coefficient (the smaller
 *   of geom and ground), condim 3. Setting 1 keeps MuJoCo's other contact
 *   defaults; setting 2 has an elliptic cone and impratio 100.
 *
 * Coordinates: MuJoCo's free joint has qpos = position, quaternion (w x y z)
 * like Talus, but qvel = world linear velocity of the body origin and
 * BODY-frame angular velocity; a ball joint's qvel is the angular velocity
 * in the child (body) frame, Talus's in the parent joint frame. So
 * u_talus = T u_mujoco with T = I except a rotation block R (base, ball) per
 * such joint; T is orthogonal and dT/dt u = 0 (R' w_child = R [w_child]x
 * w_child = 0), so forces and accelerations map alike: x_mujoco = T^T
 * x_talus, M_mujoco = T^T M_talus T, J_mujoco = J_talus T. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "bench_peer.h"
#include "mj_build.h"
#include "bench_scene.h"

#define PEER_GROUND "talus_ground"

/* ------------------------------------------------------ small math */

static void m3_tmulv(double *y, const double *A, const double *x) { /* y = A^T x */
  double t[3];
  for (int i = 0; i < 3; ++i) t[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
  memcpy(y, t, sizeof t);
}

/* Rotation matrix (row-major) of the unit quaternion q = (w, x, y, z). */
static void quat_to_mat(double *R, const double *q) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* ----------------------------------------------------------- model */

/* One Talus body as MuJoCo sees it. */
typedef struct peer_body {
  int mj_body, mj_joint[2];      /* MuJoCo ids (joint[1]: universal's second hinge) */
} peer_body;

struct bench_peer {
  const tl_model *model;
  bench_peer_state s;
  int nbody, base_floating, nv;
  peer_body *body;
  mjModel *m;
  mjData *d;
  tlmj_map map;
  int site;
  double *qpos, *qvel, *ctrl, *du, *tau; /* the state in MuJoCo's coordinates */
  double *out, *tmp, *Md, *eye, *jacp, *jacr;
  double *T; /* u_talus = T u_mujoco at the state, nv x nv (row: Talus DOF, column: MuJoCo DOF) */
  double *dA, *dB; /* mjd_transitionFD's A and B (bench_peer_deriv_prepare) */
  int warn0[mjNWARNING];
};

static char peer_warning[512];

static void on_warning(const char *msg) { snprintf(peer_warning, sizeof peer_warning, "%s", msg); }

const char *bench_peer_name(void) {
  static char name[64];
  snprintf(name, sizeof name, "MuJoCo %s", mj_versionString());
  return name;
}

static const char *const peer_col_doc[NCOL] = {
    "copy of qpos and qvel into mjData + mj_kinematics + mj_comPos + mj_comVel (body and "
    "joint frames, COM, cinert, cdof, cvel, cdof_dot: the quantities of Talus's kinematics "
    "pass)",
    "the FK column + mj_crb (composite rigid body algorithm into the sparse qM, armature on "
    "its diagonal) + mj_rne(flg_acc=0) (the bias force qfrc_bias = h) + mj_fullM (dense nv x "
    "nv copy of M)",
    "FK+CRBA+h minus FK (derived)",
    "mj_rne(flg_acc=1) with qacc = du and kinematics cached, + armature * du (mj_rne leaves "
    "armature out)",
    "MuJoCo has no ABA: forward dynamics the way mj_forward computes it once kinematics are "
    "known: mj_crb + mj_factorM (sparse L^T D L) + mj_rne(flg_acc=0) + mj_solveM(tau - bias)",
    "mj_factorM of the cached qM + mj_solveM on the nv columns of the identity",
    "mj_jacSite at a site placed at that frame (dense 3 x nv jacp and jacr)",
    "mj_step, dt 1 ms, Euler integrator (semi-implicit), contacts disabled (mjDSBL_CONTACT, "
    "no geoms); PD: kp 300 by position actuators (explicit), kd 10 added to the joint damping "
    "(implicit in Euler: factorisation of M + dt D, Talus's M + dt Kd); joint limits, friction "
    "loss, damping, springs, armature, effort limits (forcerange) and mimic equalities as in "
    "Talus's model; the state is reset to the random one between batches"};

const char *bench_peer_column_doc(int col) {
  return col >= 0 && col < NCOL ? peer_col_doc[col] : NULL;
}

const char *bench_peer_model_doc(void) {
  return "the MuJoCo model is generated (MJCF, in memory) from the compiled Talus model "
         "by plugins/mujoco/mj_build.c, the builder the MuJoCo engine plugin uses too: same "
         "bodies (fixed links merged), joint placements and axes, exact inertials, rotor inertia "
         "as armature, free joint for a floating base, ball joints for spherical ones; the state "
         "mapped (free joint: body-frame angular velocity; ball: child-frame angular velocity)";
}

/* The zero configuration: joint coordinates 0, identity quaternions, base at
 * the origin. Every joint transform is the identity there (unlike
 * tl_model_reference_q, which satisfies <mimic> offsets). */
static void zero_q(const tl_model *model, double *q) {
  memset(q, 0, sizeof(double) * (size_t)tl_model_nq(model));
  for (int b = 0; b < tl_model_nbody(model); ++b) {
    tl_joint_type type = tl_model_joint_type(model, b);
    int iq = tl_model_joint_q_index(model, b);
    if (type == TL_JOINT_FLOATING) q[iq + 3] = 1;
    if (type == TL_JOINT_SPHERICAL) q[iq] = 1;
  }
}
/* Where frame f sits in its body: the body and the position in the body
 * frame, from Talus's poses at the zero configuration. */
static int frame_site(const tl_model *model, int f, int *body, double pos[3], char *why, size_t len) {
  tl_world *w = NULL;
  tl_system *sys = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  int nq = tl_model_nq(model), nv = tl_model_nv(model);
  double *q0 = calloc((size_t)nq + (size_t)nv + 1, sizeof(double));
  double bp[3], bR[9], fp[3], fR[9], dp[3];
  *body = tl_model_frame_body(model, f);
  if (q0) zero_q(model, q0);
  int bad = !q0 || tl_world_create(&w, &err) || tl_world_add_system(w, model, &sys, &err) ||
            tl_system_set_state(sys, q0, nq, q0 + nq, nv, &err) ||
            tl_system_body_pose(sys, *body, bp, bR, &err) || tl_system_frame_pose(sys, f, fp, fR, &err);
  if (!bad) {
    for (int k = 0; k < 3; ++k) dp[k] = fp[k] - bp[k];
    m3_tmulv(pos, bR, dp);
  } else {
    snprintf(why, len, "Jacobian frame: %s", q0 ? err.message : "out of memory");
  }
  tl_world_free(w);
  free(q0);
  return bad ? -1 : 0;
}

/* The state of p->s in MuJoCo's coordinates, and T (u_talus = T u_mujoco). */
static void map_state(bench_peer *p) {
  const tl_model *model = p->model;
  const mjModel *m = p->m;
  int nv = p->nv;
  memset(p->T, 0, sizeof(double) * (size_t)nv * (size_t)nv);
  for (int a = 0; a < m->nu; ++a) p->ctrl[a] = 0;
  for (int b = 0; b < p->nbody; ++b) {
    tl_joint_type type = tl_model_joint_type(model, b);
    if (type == TL_JOINT_FIXED) continue;
    const double *q = p->s.q + tl_model_joint_q_index(model, b);
    int iu = tl_model_joint_u_index(model, b);
    for (int k = 0; k < (type == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
      int j = p->body[b].mj_joint[k], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
      double R[9];
      switch (type) {
        case TL_JOINT_FLOATING:
          memcpy(p->qpos + qa, q, 7 * sizeof(double));
          quat_to_mat(R, q + 3);
          for (int r = 0; r < 3; ++r) p->T[(size_t)(iu + r) * nv + da + r] = 1;
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) p->T[(size_t)(iu + 3 + r) * nv + da + 3 + c] = R[3 * r + c];
          break;
        case TL_JOINT_SPHERICAL:
          memcpy(p->qpos + qa, q, 4 * sizeof(double));
          quat_to_mat(R, q);
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) p->T[(size_t)(iu + r) * nv + da + c] = R[3 * r + c];
          break;
        default:
          p->qpos[qa] = q[k];
          p->T[(size_t)(iu + k) * nv + da] = 1;
      }
    }
  }
  /* velocities, accelerations, forces: x_mujoco = T^T x_talus */
  for (int c = 0; c < nv; ++c) {
    double v = 0, a = 0, t = 0;
    for (int r = 0; r < nv; ++r) {
      double Trc = p->T[(size_t)r * nv + c];
      v += Trc * p->s.u[r], a += Trc * p->s.du[r], t += Trc * p->s.tau[r];
    }
    p->qvel[c] = v, p->du[c] = a, p->tau[c] = t;
  }
  /* PD targets: the configuration, at rest (force = ctrl - kp q with ctrl = kp q_target) */
  for (int a = 0; a < m->nu; ++a) {
    int j = m->actuator_trnid[2 * a], qa = m->jnt_qposadr[j];
    if (m->jnt_type[j] == mjJNT_BALL) {
      double rv[3];
      mju_quat2Vel(rv, p->qpos + qa, 1.0);
      p->ctrl[a] = p->s.kp * (rv[0] * m->actuator_gear[6 * a] + rv[1] * m->actuator_gear[6 * a + 1] +
                              rv[2] * m->actuator_gear[6 * a + 2]);
    } else {
      p->ctrl[a] = p->s.kp * p->qpos[qa];
    }
  }
}
void bench_peer_free(bench_peer *p) {
  if (!p) return;
  if (p->d) mj_deleteData(p->d);
  if (p->m) mj_deleteModel(p->m);
  tlmj_map_free(&p->map);
  free(p->dA);
  free(p->body);
  free(p->qpos);
  free(p);
}

static char contact_doc[2][1200];

/* What the contact step's MuJoCo model leaves at MuJoCo's defaults, read from the compiled model. */
static void contact_doc_from(const mjModel *m, int variant) {
  char *doc = contact_doc[variant == 2];
  if (doc[0]) return;
  static const char *const solver[] = {"PGS", "CG", "Newton"};
  static const char *const cone[] = {"pyramidal", "elliptic"};
  int s = m->opt.solver, c = m->opt.cone, g = m->ngeom > 0 ? 0 : -1;
  if (variant == 2) {
    snprintf(doc, sizeof contact_doc[1],
             "the same model with %s cone and impratio %g (stiffer friction: what MuJoCo "
             "Menagerie's quadruped models use against slip), "
             "%s solver as before", c >= 0 && c < 2 ? cone[c] : "?", m->opt.impratio,
             s >= 0 && s < 3 ? solver[s] : "?");
    return;
  }
  snprintf(doc, sizeof contact_doc[0],
           "mj_step, dt 1 ms, Euler integrator; the model of the step column plus the Talus "
           "model's collision geoms (sphere, box, capsule, cylinder as MuJoCo primitives; a mesh "
           "as the vertices of Talus's convex hull, which MuJoCo hulls again) and a plane z = 0; "
           "only robot-ground pairs collide (explicit contact pairs; Talus has no self-collision by "
           "default), condim 3 with the pair's Talus friction coefficient; MuJoCo's defaults "
           "otherwise: %s cone, %s solver (%d iterations, tolerance %g), impratio %g, soft "
           "contacts with solref %g %g, solimp %g %g %g, margin %g (no speculative contacts), "
           "njmax %d, nconmax %d",
           c >= 0 && c < 2 ? cone[c] : "?", s >= 0 && s < 3 ? solver[s] : "?", m->opt.iterations,
           m->opt.tolerance, m->opt.impratio, g < 0 ? 0 : m->geom_solref[0],
           g < 0 ? 0 : m->geom_solref[1], g < 0 ? 0 : m->geom_solimp[0],
           g < 0 ? 0 : m->geom_solimp[1], g < 0 ? 0 : m->geom_solimp[2],
           g < 0 ? 0 : m->geom_margin[0], m->njmax, m->nconmax);
}

const char *bench_peer_contact_doc(int variant) {
  const char *doc = contact_doc[variant == 2];
  return doc[0] ? doc
                : "mj_step with the Talus model's collision geoms and a ground plane (no such "
                  "MuJoCo model was built in this run)";
}
int bench_peer_create(const tl_model *model, const bench_peer_state *s, bench_peer **out,
                      char *note, size_t note_len, char *why, size_t why_len) {
  *out = NULL;
  if (note_len) note[0] = 0;
  mju_user_warning = on_warning; /* keep MuJoCo's warnings out of MUJOCO_LOG.TXT */
  bench_peer *p = calloc(1, sizeof(*p));
  if (!p) {
    snprintf(why, why_len, "out of memory");
    return -1;
  }
  p->model = model;
  p->s = *s;
  p->nbody = tl_model_nbody(model);
  p->nv = tl_model_nv(model);
  p->base_floating = tl_model_joint_type(model, 0) == TL_JOINT_FLOATING;
  p->body = calloc((size_t)p->nbody, sizeof(peer_body));
  if (!p->body) {
    snprintf(why, why_len, "out of memory");
    goto fail;
  }
  if (s->contact && !p->base_floating) {
    snprintf(why, why_len, "the contact step is for floating-base robots");
    goto fail;
  }

  /* the scene: this one system (and, for the contact step, the ground plane) */
  tl_engine_system sys;
  memset(&sys, 0, sizeof sys);
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_engine_model_view(model, &sys.model, &err) != TL_OK) {
    snprintf(why, why_len, "%s", err.message);
    goto fail;
  }
  sys.source = model;
  tl_engine_static ground = {TL_GEOM_PLANE, {0, 0, 0}, {0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, "ground",
                             s->ground_mu, 1u, ~0u, -1};
  tl_engine_scene scene;
  memset(&scene, 0, sizeof scene);
  scene.options.dt = 0.001;
  scene.options.gravity[2] = -9.81;
  scene.options.default_mu = s->ground_mu;
  scene.options.default_threshold = 0.01;
  scene.nsystem = 1;
  scene.systems = &sys;
  scene.nstatic = s->contact ? 1 : 0;
  scene.statics = &ground;
  scene.engine_options = "";
  tlmj_options opt;
  memset(&opt, 0, sizeof opt);
  opt.contacts = s->contact != 0;
  if (s->contact == 2) { /* against slip: an elliptic cone with a large impratio (stiffer friction),
                          * as MuJoCo Menagerie's quadruped models have */
    opt.cone = "elliptic";
    opt.impratio = 100;
  }
  opt.site_sys = 0;
  if (frame_site(model, s->jac_frame, &opt.site_body, opt.site_pos, why, why_len)) goto fail;
  if (tlmj_build(&scene, &opt, &p->m, &p->map, why, why_len) != 0) goto fail;
  p->d = mj_makeData(p->m);
  if (!p->d) {
    snprintf(why, why_len, "mj_makeData failed");
    goto fail;
  }
  mjModel *m = p->m;
  if (m->nv != p->nv || m->nq != tl_model_nq(model)) {
    snprintf(why, why_len, "MuJoCo model has nq %d, nv %d; Talus %d, %d", m->nq, m->nv,
             tl_model_nq(model), p->nv);
    goto fail;
  }
  for (int b = 0; b < p->nbody; ++b) {
    p->body[b].mj_body = p->map.sys[0].body[b];
    p->body[b].mj_joint[0] = p->map.sys[0].joint[2 * b];
    p->body[b].mj_joint[1] = p->map.sys[0].joint[2 * b + 1];
  }
  /* the step's PD: kp in every actuator's bias, kd on the joint damping of the non-base DOFs */
  for (int a = 0; a < m->nu; ++a) m->actuator_biasprm[a * mjNBIAS + 1] = -s->kp;
  for (int k = 0; k < m->nv; ++k)
    if (m->jnt_type[m->dof_jntid[k]] != mjJNT_FREE) m->dof_damping[k] += s->kd;
  if (p->map.npatched)
    snprintf(note, note_len, "%d massless (or A + B < C) bodies: exact inertial written into mjModel "
             "after compiling a placeholder", p->map.npatched);
  if (p->s.contact) contact_doc_from(m, p->s.contact);
  p->site = p->map.site;
  if (p->site < 0) {
    snprintf(why, why_len, "no Jacobian site");
    goto fail;
  }

  size_t nq = (size_t)m->nq, nv = (size_t)m->nv, nu = (size_t)m->nu;
  p->qpos = calloc(nq + 2 * nu + 12 * nv + 3 * nv * nv + 1, sizeof(double));
  if (!p->qpos) {
    snprintf(why, why_len, "out of memory");
    goto fail;
  }
  p->qvel = p->qpos + nq;
  p->ctrl = p->qvel + nv;
  p->du = p->ctrl + 2 * nu;
  p->tau = p->du + nv;
  p->out = p->tau + nv;
  p->tmp = p->out + nv;
  p->jacp = p->tmp + nv;
  p->jacr = p->jacp + 3 * nv;
  p->Md = p->jacr + 3 * nv;
  p->eye = p->Md + nv * nv;
  p->T = p->eye + nv * nv;
  for (size_t k = 0; k < nv; ++k) p->eye[k * nv + k] = 1;
  map_state(p);
  bench_peer_reset(p);
  *out = p;
  return 0;
fail:
  bench_peer_free(p);
  return -1;
}

/* ------------------------------------------------------ cross-check */

/* max |a - b| / max |b| over n entries (NAN for n == 0). */
static double rel_diff(const double *a, const double *b, int n) {
  if (n <= 0) return NAN;
  double num = 0, den = 0;
  for (int k = 0; k < n; ++k) {
    num = fmax(num, fabs(a[k] - b[k]));
    den = fmax(den, fabs(b[k]));
  }
  return den > 0 ? num / den : (num > 0 ? INFINITY : 0);
}

int bench_peer_crosscheck(bench_peer *p, tl_system *sys, double rel[NCHECK], char *why,
                          size_t len) {
  const tl_model *model = p->model;
  const mjModel *m = p->m;
  mjData *d = p->d;
  int nv = p->nv, nb = p->nbody;
  size_t nv2 = (size_t)nv * (size_t)nv;
  for (int k = 0; k < NCHECK; ++k) rel[k] = NAN;
  double *buf = calloc(4 * nv2 + 24 * (size_t)nv + 24 * (size_t)nb + 1, sizeof(double));
  if (!buf) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  double *Mt = buf, *Mx = Mt + nv2, *Mm = Mx + nv2, *W = Mm + nv2; /* W: Mt T */
  double *h = W + nv2, *tau = h + nv, *acc = tau + nv, *x = acc + nv, *y = x + nv;
  double *Jt = y + nv, *Jx = Jt + 6 * (size_t)nv, *Jm = Jx + 6 * (size_t)nv;
  double *pt = Jm + 6 * (size_t)nv, *pm = pt + 12 * (size_t)nb;
  tl_error err;
  memset(&err, 0, sizeof err);
  int rc = -1;
  /* Talus at the state */
  if (tl_system_set_state(sys, p->s.q, tl_model_nq(model), p->s.u, nv, &err) ||
      tl_system_mass_matrix(sys, Mt, nv, &err) || tl_system_nonlinear_term(sys, h, nv, &err) ||
      tl_system_inverse_dynamics(sys, p->s.du, tau, nv, &err) ||
      tl_system_forward_dynamics(sys, p->s.tau, acc, nv, &err) ||
      tl_system_frame_jacobian(sys, p->s.jac_frame, Jt, Jt + 3 * (size_t)nv, nv, &err)) {
    snprintf(why, len, "Talus: %s", err.message);
    goto done;
  }
  int npose = 0;
  for (int b = 0; b < nb; ++b) {
    if (b == 0 && !p->base_floating) continue;
    if (tl_system_body_pose(sys, b, pt + 12 * npose, pt + 12 * npose + 3, &err)) {
      snprintf(why, len, "Talus: %s", err.message);
      goto done;
    }
    ++npose;
  }
  /* MuJoCo at the same state */
  bench_peer_reset(p);
  npose = 0;
  for (int b = 0; b < nb; ++b) {
    if (b == 0 && !p->base_floating) continue;
    int id = p->body[b].mj_body;
    memcpy(pm + 12 * npose, d->xpos + 3 * id, 3 * sizeof(double));
    memcpy(pm + 12 * npose + 3, d->xmat + 9 * id, 9 * sizeof(double));
    ++npose;
  }
  rel[X_POSE] = rel_diff(pm, pt, 12 * npose);
  /* M: T^T Mt T */
  for (int i = 0; i < nv; ++i) /* W = Mt T */
    for (int j = 0; j < nv; ++j) {
      double s = 0;
      for (int k = 0; k < nv; ++k) s += Mt[(size_t)i * nv + k] * p->T[(size_t)k * nv + j];
      W[(size_t)i * nv + j] = s;
    }
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) {
      double s = 0;
      for (int k = 0; k < nv; ++k) s += p->T[(size_t)k * nv + i] * W[(size_t)k * nv + j];
      Mx[(size_t)i * nv + j] = s;
    }
  mj_fullM(m, Mm, d->qM);
  rel[X_M] = rel_diff(Mm, Mx, nv * nv);
  { /* the joint-space block: rows and columns of the DOFs of joints other than the free joint */
    double num = 0, den = 0;
    int nj = 0;
    for (int i = 0; i < nv; ++i) {
      if (m->jnt_type[m->dof_jntid[i]] == mjJNT_FREE) continue;
      ++nj;
      for (int j = 0; j < nv; ++j) {
        if (m->jnt_type[m->dof_jntid[j]] == mjJNT_FREE) continue;
        num = fmax(num, fabs(Mm[(size_t)i * nv + j] - Mx[(size_t)i * nv + j]));
        den = fmax(den, fabs(Mx[(size_t)i * nv + j]));
      }
    }
    rel[X_MJOINT] = nj == 0 ? NAN : den > 0 ? num / den : (num > 0 ? INFINITY : 0);
  }
  /* h: T^T h */
  for (int c = 0; c < nv; ++c) {
    double s = 0;
    for (int r = 0; r < nv; ++r) s += p->T[(size_t)r * nv + c] * h[r];
    x[c] = s;
  }
  rel[X_H] = rel_diff(d->qfrc_bias, x, nv);
  /* RNEA: mj_rne with qacc = du, + armature du */
  mju_copy(d->qacc, p->du, nv);
  mj_rne(m, d, 1, y);
  for (int k = 0; k < nv; ++k) y[k] += m->dof_armature[k] * p->du[k];
  for (int c = 0; c < nv; ++c) {
    double s = 0;
    for (int r = 0; r < nv; ++r) s += p->T[(size_t)r * nv + c] * tau[r];
    x[c] = s;
  }
  rel[X_RNEA] = rel_diff(y, x, nv);
  /* forward dynamics: M^-1 (tau - bias) */
  mj_factorM(m, d);
  mju_sub(y, p->tau, d->qfrc_bias, nv);
  mj_solveM(m, d, y, y, 1);
  for (int c = 0; c < nv; ++c) {
    double s = 0;
    for (int r = 0; r < nv; ++r) s += p->T[(size_t)r * nv + c] * acc[r];
    x[c] = s;
  }
  rel[X_FD] = rel_diff(y, x, nv);
  /* Jacobians: Jt T */
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < nv; ++j) {
      double s = 0;
      for (int k = 0; k < nv; ++k) s += Jt[(size_t)i * nv + k] * p->T[(size_t)k * nv + j];
      Jx[(size_t)i * nv + j] = s;
    }
  mj_jacSite(m, d, Jm, Jm + 3 * (size_t)nv, p->site);
  rel[X_JAC] = rel_diff(Jm, Jx, 6 * nv);
  rc = 0;
done:
  bench_peer_reset(p);
  free(buf);
  return rc;
}

/* ----------------------------------------------------------- timing */

void bench_peer_reset(void *ctx) {
  bench_peer *p = ctx;
  mjData *d = p->d;
  const mjModel *m = p->m;
  d->time = 0;
  mju_copy(d->qpos, p->qpos, m->nq);
  mju_copy(d->qvel, p->qvel, m->nv);
  mju_copy(d->ctrl, p->ctrl, m->nu);
  mju_zero(d->qfrc_applied, m->nv);
  mj_forward(m, d); /* warm every cache, as Talus's reset does */
}

void bench_peer_clear(void *ctx) {
  bench_peer *p = ctx;
  for (int k = 0; k < mjNWARNING; ++k) p->warn0[k] = p->d->warning[k].number;
  peer_warning[0] = 0;
}

int bench_peer_failed(void *ctx, char *why, size_t len) {
  bench_peer *p = ctx;
  static const int bad[] = {mjWARN_INERTIA, mjWARN_CNSTRFULL, mjWARN_BADQPOS, mjWARN_BADQVEL,
                            mjWARN_BADQACC, mjWARN_BADCTRL};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k)
    if (p->d->warning[bad[k]].number != p->warn0[bad[k]]) {
      snprintf(why, len, "MuJoCo warning %d: %s", bad[k],
               peer_warning[0] ? peer_warning : "(no message)");
      return 1;
    }
  return 0;
}

static void p_fk(void *ctx) {
  bench_peer *p = ctx;
  mju_copy(p->d->qpos, p->qpos, p->m->nq);
  mju_copy(p->d->qvel, p->qvel, p->m->nv);
  mj_kinematics(p->m, p->d);
  mj_comPos(p->m, p->d);
  mj_comVel(p->m, p->d);
}

static void p_fk_crba(void *ctx) {
  bench_peer *p = ctx;
  p_fk(ctx);
  mj_crb(p->m, p->d);
  mj_rne(p->m, p->d, 0, p->d->qfrc_bias);
  mj_fullM(p->m, p->Md, p->d->qM);
}

static void p_rnea(void *ctx) {
  bench_peer *p = ctx;
  const mjModel *m = p->m;
  mju_copy(p->d->qacc, p->du, m->nv);
  mj_rne(m, p->d, 1, p->out);
  for (int k = 0; k < m->nv; ++k) p->out[k] += m->dof_armature[k] * p->du[k];
}

static void p_fd(void *ctx) {
  bench_peer *p = ctx;
  const mjModel *m = p->m;
  mj_crb(m, p->d);
  mj_factorM(m, p->d);
  mj_rne(m, p->d, 0, p->d->qfrc_bias);
  mju_sub(p->tmp, p->tau, p->d->qfrc_bias, m->nv);
  mj_solveM(m, p->d, p->out, p->tmp, 1);
}

static void p_minv(void *ctx) {
  bench_peer *p = ctx;
  mj_factorM(p->m, p->d);
  mj_solveM(p->m, p->d, p->Md, p->eye, p->m->nv);
}

static void p_jac(void *ctx) {
  bench_peer *p = ctx;
  mj_jacSite(p->m, p->d, p->jacp, p->jacr, p->site);
}

static void p_step(void *ctx) {
  bench_peer *p = ctx;
  mj_step(p->m, p->d);
}

bench_peer_fn bench_peer_query(int col) {
  switch (col) {
    case C_FK: return p_fk;
    case C_FK_CRBA: return p_fk_crba;
    case C_RNEA: return p_rnea;
    case C_ABA: return p_fd;
    case C_MINV: return p_minv;
    case C_JAC: return p_jac;
    case C_STEP: return p_step;
    default: return NULL;
  }
}

/* ----------------------------------------------------------- memory */

void bench_peer_memory(const bench_peer *p, size_t *model_bytes, size_t *data_bytes, char *detail,
                       size_t len) {
  const mjModel *m = p->m;
  const mjData *d = p->d;
  *model_bytes = sizeof(mjModel) + (size_t)m->nbuffer;
  *data_bytes = sizeof(mjData) + (size_t)d->nbuffer + (size_t)d->nstack * sizeof(mjtNum);
  snprintf(detail, len, "mjModel %zu + buffer %d; mjData %zu + buffer %d + stack %d x %zu (njmax %d, "
           "nconmax %d)",
           sizeof(mjModel), m->nbuffer, sizeof(mjData), d->nbuffer, d->nstack, sizeof(mjtNum),
           m->njmax, m->nconmax);
}

const char *bench_peer_memory_doc(void) {
  return "from MuJoCo's own size fields (its allocations inside libmujoco are not seen by the "
         "malloc wrappers): model = sizeof(mjModel) + mjModel.nbuffer; data = sizeof(mjData) + "
         "mjData.nbuffer + mjData.nstack * sizeof(mjtNum), the buffer and stack mj_makeData "
         "allocates (2.2: the buffer holds every mjData array, the constraint arrays sized for "
         "njmax rows and nconmax contacts, the model's defaults)";
}

/* ----------------------------------------------------------- contact step */

void bench_peer_step(void *ctx) { p_step(ctx); }

/* ------------------------------------------------ step derivatives */

int bench_peer_deriv_prepare(bench_peer *p, char *why, size_t len) {
  const mjModel *m = p->m;
  size_t nx = 2 * (size_t)m->nv + (size_t)m->na;
  free(p->dA);
  p->dA = calloc(nx * nx + nx * (size_t)m->nu + 1, sizeof(double));
  if (!p->dA) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  p->dB = p->dA + nx * nx;
  return 0;
}

void bench_peer_deriv_centred(void *ctx) {
  bench_peer *p = ctx;
  mjd_transitionFD(p->m, p->d, BENCH_DERIV_EPS, 1, p->dA, p->dB, NULL, NULL);
}

void bench_peer_deriv_forward(void *ctx) {
  bench_peer *p = ctx;
  mjd_transitionFD(p->m, p->d, BENCH_DERIV_EPS, 0, p->dA, p->dB, NULL, NULL);
}

int bench_peer_deriv_nu(const bench_peer *p) { return p->m->nu; }

const char *bench_peer_deriv_doc(void) {
  return "mjd_transitionFD(m, d, eps 1e-6, flg_centered, A, B, NULL, NULL) on the contact step's "
         "MuJoCo model (its default contact settings) at its settled state: A = d x+/d x "
         "((2 nv + na) x (2 nv + na)), B = d x+/d ctrl ((2 nv + na) x nu, nu: the position "
         "actuators of the PD), by whole steps (mj_stepSkip) from saved state and warm start; "
         "centred: 2 (2 nv + na) + 2 nu + 1 steps, forward: half the perturbed steps";
}

void bench_peer_contacts(const bench_peer *p, int *n, int *active) {
  const mjModel *m = p->m;
  const mjData *d = p->d;
  *n = *active = 0;
  for (int i = 0; i < d->ncon; ++i) {
    if (d->contact[i].exclude != 0) continue;
    mjtNum f[6];
    ++*n;
    mj_contactForce(m, d, i, f);
    *active += f[0] > 0;
  }
}

double bench_peer_base_height(const bench_peer *p) {
  int j = p->body[0].mj_joint[0];
  return j < 0 ? NAN : p->d->qpos[p->m->jnt_qposadr[j] + 2];
}

/* ----------------------------------------------------------- box scenes */

/* MJCF of a box scene: a plane, the static boxes in the world body, one
 * body with a free joint and a box geom (mass s->box_mass, MuJoCo's inertia
 * of the box) per free box; friction s->mu on every geom (MuJoCo takes the
 * larger of a pair's: s->mu), condim 3; variant 2: elliptic cone, impratio 100. */
static char *write_scene_mjcf(const bench_scene *s, int variant) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  double fr[3] = {s->mu, 0.005, 0.0001};
  fprintf(f, "<mujoco model=\"%s\">\n  <option timestep=\"0.001\" gravity=\"0 0 -9.81\" "
          "integrator=\"Euler\"%s/>\n  <size njmax=\"%d\" nconmax=\"%d\"/>\n  <worldbody>\n",
          s->name, variant == 2 ? " cone=\"elliptic\" impratio=\"100\"" : "",
          64 * (s->nbox + s->nstatic), 16 * (s->nbox + s->nstatic));
  fputs("    <geom name=\"" PEER_GROUND "\" type=\"plane\" size=\"0 0 1\" condim=\"3\"", f);
  tlmj_put_vec(f, "friction", fr, 3);
  fputs("/>\n", f);
  for (int i = 0; i < s->nstatic + s->nbox; ++i) {
    const scene_box *b = i < s->nstatic ? &s->stat[i] : &s->box[i - s->nstatic];
    double hs[3] = {0.5 * b->size[0], 0.5 * b->size[1], 0.5 * b->size[2]};
    if (i >= s->nstatic) {
      fputs("    <body", f);
      tlmj_put_vec(f, "pos", b->pos, 3);
      tlmj_put_vec(f, "quat", b->quat, 4);
      fputs("><freejoint/><geom type=\"box\" condim=\"3\"", f);
      tlmj_put_num(f, "mass", s->box_mass);
    } else {
      fputs("    <geom type=\"box\" condim=\"3\"", f);
      tlmj_put_vec(f, "pos", b->pos, 3);
      tlmj_put_vec(f, "quat", b->quat, 4);
    }
    tlmj_put_vec(f, "size", hs, 3);
    tlmj_put_vec(f, "friction", fr, 3);
    fputs(i >= s->nstatic ? "/></body>\n" : "/>\n", f);
  }
  fputs("  </worldbody>\n</mujoco>\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

int bench_peer_scene_create(const bench_scene *s, int variant, bench_peer **out, char *why,
                            size_t why_len) {
  *out = NULL;
  mju_user_warning = on_warning;
  bench_peer *p = calloc(1, sizeof(*p));
  char *text = write_scene_mjcf(s, variant);
  if (!p || !text) {
    free(p);
    free(text);
    snprintf(why, why_len, "out of memory");
    return -1;
  }
  p->m = tlmj_load_xml(text, why, why_len);
  free(text);
  if (p->m) p->d = mj_makeData(p->m);
  if (!p->m || !p->d) {
    if (p->m && !p->d) snprintf(why, why_len, "mj_makeData failed");
    bench_peer_free(p);
    return -1;
  }
  mj_forward(p->m, p->d);
  *out = p;
  return 0;
}

double bench_peer_scene_drift(const bench_peer *p, const double *qpos0) {
  const mjModel *m = p->m;
  double worst = 0;
  for (int j = 0; j < m->njnt; ++j) {
    const double *a = p->d->qpos + m->jnt_qposadr[j], *b = qpos0 + m->jnt_qposadr[j];
    worst = fmax(worst, sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                             (a[2] - b[2]) * (a[2] - b[2])));
  }
  return worst;
}

int bench_peer_scene_nq(const bench_peer *p) { return p->m->nq; }
void bench_peer_scene_qpos(const bench_peer *p, double *qpos) { mju_copy(qpos, p->d->qpos, p->m->nq); }
