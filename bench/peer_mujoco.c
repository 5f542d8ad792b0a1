/* talus_bench peer: MuJoCo (the Debian package libmujoco-dev, 2.2.2),
 * measured in the same run as Talus, on the same robots, at the same state.
 *
 * The MuJoCo model is generated from the compiled Talus model, not from the
 * URDF: MuJoCo 2.2's URDF import would weld the base, stumble on meshes it
 * cannot read and fuse static bodies on its own terms. Everything comes
 * from Talus's public API:
 * - bodies: one MJCF body per Talus body (fixed links are already merged,
 *   as MuJoCo's fusestatic would do), placed by the body poses at the zero
 *   configuration (where every joint transform is the identity);
 * - joints: revolute -> hinge, prismatic -> slide, spherical -> ball,
 *   universal -> two hinges in one body (axis, then axis2), floating root ->
 *   free joint; axes from the Jacobian columns at the zero configuration;
 *   position limits from tl_model_dof_limits;
 * - inertials: every URDF link's inertial (tl_system_link_inertial) moved
 *   into its body's frame and summed exactly (parallel axis theorem), then
 *   diagonalised (Jacobi) into MJCF's pos / quat / diaginertia. MuJoCo
 *   refuses bodies that are massless or break A + B >= C; those get a
 *   placeholder in the MJCF and their exact values written into mjModel
 *   after compilation (then mj_setConst);
 * - per-joint parameters without a getter (rotor inertia -> armature,
 *   damping, Coulomb friction -> frictionloss, stiffness and spring mount ->
 *   stiffness and springref, effort limit -> actuator forcerange) are read
 *   back from Talus's own URDF export (tl_model_export_urdf_file), whose
 *   layout Talus fixes; <mimic> -> a joint equality (polycoef offset, mult);
 * - the step's PD: kp by one position-type general actuator per non-base
 *   DOF (gain kp, affine bias -kp q, ctrl = the target configuration; hinge
 *   and slide: q; ball: the components of its rotation vector, the length
 *   of a ball-joint actuator with unit gear), explicit; kd added to the
 *   joint damping, which MuJoCo's Euler integrator treats implicitly
 *   (M + dt D), as Talus treats kd (M + dt Kd + dt^2 Kp). With kd in the
 *   actuator bias instead (explicit), MuJoCo's step diverges on light robots
 *   (solo12) at these gains. No collision geoms, contacts disabled;
 * - the contact step (bench_peer_state.contact 1 or 2) adds the model's
 *   collision geoms to their bodies (sphere, box, capsule, cylinder with
 *   MuJoCo's half-length sizes; a mesh as a mesh asset of the vertices of
 *   Talus's convex hull) and a plane z = 0; contype 1 / conaffinity 0 on the
 *   robot, 0 / 1 on the plane: only robot-ground pairs, as Talus without
 *   self-collision; the friction of each robot geom is the pair's Talus
 *   coefficient (the smaller of geom and ground), the plane's 0 (MuJoCo
 *   takes the larger of the two); condim 3. Setting 1 keeps MuJoCo's other
 *   contact defaults; setting 2 has an elliptic cone and impratio 100.
 *
 * Coordinates: MuJoCo's free joint has qpos = position, quaternion (w x y z)
 * like Talus, but qvel = world linear velocity of the body origin and
 * BODY-frame angular velocity; a ball joint's qvel is the angular velocity
 * in the child (body) frame, Talus's in the parent joint frame. So
 * u_talus = T u_mujoco with T = I except a rotation block R (base, ball) per
 * such joint; T is orthogonal and dT/dt u = 0 (R' w_child = R [w_child]x
 * w_child = 0), so forces and accelerations map alike: x_mujoco = T^T
 * x_talus, M_mujoco = T^T M_talus T, J_mujoco = J_talus T. Joints are matched
 * by name. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "bench_peer.h"
#include "bench_scene.h"

#define PEER_SITE "talus_bench_jacobian_frame"
#define PEER_XML "talus_bench_peer.xml"
#define PEER_HULL "talus_hull_"
#define PEER_GROUND "talus_ground"

/* ------------------------------------------------------ small math */

static void m3_mul(double *C, const double *A, const double *B) { /* C = A B */
  double T[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, T, sizeof T);
}

static void m3_tmul(double *C, const double *A, const double *B) { /* C = A^T B */
  double T[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      T[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
  memcpy(C, T, sizeof T);
}

static void m3_mulv(double *y, const double *A, const double *x) { /* y = A x */
  double t[3];
  for (int i = 0; i < 3; ++i) t[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
  memcpy(y, t, sizeof t);
}

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

/* Unit quaternion (w, x, y, z) of a rotation matrix, by its largest component. */
static void mat_to_quat(double *q, const double *R) {
  double tr = R[0] + R[4] + R[8], s;
  if (tr > 0) {
    s = 2 * sqrt(1 + tr);
    q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
  } else {
    s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; ++k) q[k] /= n;
}

/* Eigen-decomposition of the symmetric 3x3 A = V diag(d) V^T by cyclic
 * Jacobi rotations (Golub and Van Loan, Matrix Computations, 8.5); V is a
 * rotation (det +1). */
static void sym3_eig(const double *A, double d[3], double V[9]) {
  double a[9];
  memcpy(a, A, sizeof a);
  for (int k = 0; k < 9; ++k) V[k] = k % 4 == 0;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = fabs(a[1]) + fabs(a[2]) + fabs(a[5]);
    double diag = fabs(a[0]) + fabs(a[4]) + fabs(a[8]);
    if (off == 0 || off < 1e-18 * diag) break;
    for (int p = 0; p < 2; ++p)
      for (int r = p + 1; r < 3; ++r) {
        double apr = a[3 * p + r];
        if (apr == 0) continue;
        double theta = (a[3 * r + r] - a[3 * p + p]) / (2 * apr);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) { /* a = a G (columns p, r) */
          double akp = a[3 * k + p], akr = a[3 * k + r];
          a[3 * k + p] = c * akp - s * akr;
          a[3 * k + r] = s * akp + c * akr;
        }
        for (int k = 0; k < 3; ++k) { /* a = G^T a (rows p, r) */
          double apk = a[3 * p + k], ark = a[3 * r + k];
          a[3 * p + k] = c * apk - s * ark;
          a[3 * r + k] = s * apk + c * ark;
        }
        for (int k = 0; k < 3; ++k) { /* V = V G */
          double vkp = V[3 * k + p], vkr = V[3 * k + r];
          V[3 * k + p] = c * vkp - s * vkr;
          V[3 * k + r] = s * vkp + c * vkr;
        }
      }
  }
  for (int k = 0; k < 3; ++k) d[k] = a[4 * k];
  double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
               V[2] * (V[3] * V[7] - V[4] * V[6]);
  if (det < 0)
    for (int k = 0; k < 3; ++k) V[3 * k + 2] = -V[3 * k + 2];
}

/* ------------------------------------------------ joint parameters */

/* What the public API has no getter for, per movable joint. */
typedef struct joint_params {
  double damping, friction, rotor, stiffness, mount[4], effort;
} joint_params;

/* XML-escaped s, as Talus's URDF export writes attribute values. */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; ++s) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if ((unsigned char)*s < 0x20)
          fprintf(f, "&#x%X;", (unsigned)(unsigned char)*s);
        else
          fputc(*s, f);
    }
  }
}

/* Attribute `name` of the element starting at elem and ending before end:
 * up to n numbers into v; returns how many were read (0: absent). */
static int attr_numbers(const char *elem, const char *end, const char *name, double *v, int n) {
  char key[64];
  snprintf(key, sizeof key, " %s=\"", name);
  const char *a = strstr(elem, key);
  if (!a || a >= end) return 0;
  a += strlen(key);
  int k = 0;
  while (k < n) {
    char *stop = NULL;
    double x = strtod(a, &stop);
    if (stop == a) break;
    v[k++] = x;
    a = stop;
  }
  return k;
}

/* Defaults of a joint with no <dynamics> / <limit effort>. */
static joint_params joint_params_default(void) {
  joint_params jp = {0, 0, 0, 0, {1, 0, 0, 0}, INFINITY};
  return jp;
}

/* Read body b's joint parameters from the export text (Talus's own
 * layout: `<joint name=".." type="..">` ... `</joint>`, one <limit> and one
 * <dynamics> element). spherical: the spring mount is a quaternion. */
static joint_params parse_joint(const char *urdf, const char *name, int spherical) {
  joint_params jp = joint_params_default();
  if (!spherical) jp.mount[0] = 0;
  if (!urdf) return jp;
  char *key = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&key, &len);
  if (!f) return jp;
  fputs("<joint name=\"", f);
  put_escaped(f, name);
  fputs("\" type=\"", f);
  fclose(f);
  const char *j = strstr(urdf, key);
  free(key);
  if (!j) return jp;
  const char *end = strstr(j, "</joint>");
  if (!end) return jp;
  const char *lim = strstr(j, "<limit");
  if (lim && lim < end) {
    const char *e = strstr(lim, "/>");
    double eff;
    if (e && attr_numbers(lim, e, "effort", &eff, 1) == 1) jp.effort = eff;
  }
  const char *dyn = strstr(j, "<dynamics");
  if (dyn && dyn < end) {
    const char *e = strstr(dyn, "/>");
    if (e) {
      attr_numbers(dyn, e, "damping", &jp.damping, 1);
      attr_numbers(dyn, e, "friction", &jp.friction, 1);
      attr_numbers(dyn, e, "rotor_inertia", &jp.rotor, 1);
      attr_numbers(dyn, e, "stiffness", &jp.stiffness, 1);
      attr_numbers(dyn, e, "spring_mount", jp.mount, spherical ? 4 : 2);
    }
  }
  return jp;
}

/* ----------------------------------------------------------- model */

/* One Talus body as MuJoCo sees it. */
typedef struct peer_body {
  double pos[3], R[9];           /* placement in the parent body (world for a fixed base's children) */
  double mass, com[3], I[9];     /* inertial in the body frame (I about the COM, body axes) */
  double axis[2][3];             /* joint axes in the body frame */
  joint_params jp;
  int mj_body, mj_joint[2];      /* MuJoCo ids (joint[1]: universal's second hinge) */
  int patched;                   /* exact inertial written after compilation */
} peer_body;

struct bench_peer {
  const tl_model *model;
  bench_peer_state s;
  int nbody, base_floating, nv;
  peer_body *body;
  mjModel *m;
  mjData *d;
  int site;
  double *qpos, *qvel, *ctrl, *du, *tau; /* the state in MuJoCo's coordinates */
  double *out, *tmp, *Md, *eye, *jacp, *jacr;
  double *T; /* u_talus = T u_mujoco at the state, nv x nv (row: Talus DOF, column: MuJoCo DOF) */
  int ngeom, nskipped_geom; /* contact step: robot geoms written, geoms without a MuJoCo counterpart */
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
         "through Talus's public API: same bodies (fixed links merged), joint placements and "
         "axes, exact inertials, rotor inertia as armature, free joint for a floating base, "
         "ball joints for spherical ones; joints are matched by name and the state mapped "
         "(free joint: body-frame angular velocity; ball: child-frame angular velocity)";
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

/* Talus's values at the zero configuration: placements, axes, inertials. */
static int describe_bodies(bench_peer *p, char *why, size_t len) {
  const tl_model *model = p->model;
  int nb = p->nbody, nq = tl_model_nq(model), nv = tl_model_nv(model);
  tl_world *world = NULL;
  tl_system *sys = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  double *q = calloc((size_t)nq + 1, sizeof(double)), *u = calloc((size_t)nv + 1, sizeof(double));
  double *J = calloc(6 * (size_t)nv + 1, sizeof(double));
  double *wpos = calloc(3 * (size_t)nb, sizeof(double)), *wR = calloc(9 * (size_t)nb, sizeof(double));
  int rc = -1;
  if (!q || !u || !J || !wpos || !wR) {
    snprintf(why, len, "out of memory");
    goto done;
  }
  zero_q(model, q);
  if (tl_world_create(&world, &err) ||
      tl_world_add_system(world, model, &sys, &err) ||
      tl_system_set_state(sys, q, nq, u, nv, &err)) {
    snprintf(why, len, "Talus zero configuration: %s", err.message);
    goto done;
  }
  for (int b = 0; b < nb; ++b)
    if (tl_system_body_pose(sys, b, wpos + 3 * b, wR + 9 * b, &err)) {
      snprintf(why, len, "body pose: %s", err.message);
      goto done;
    }
  for (int b = 0; b < nb; ++b) {
    peer_body *pb = &p->body[b];
    int par = tl_model_body_parent(model, b);
    if (par < 0 || (par == 0 && !p->base_floating)) { /* placed in the world */
      memcpy(pb->pos, wpos + 3 * b, sizeof pb->pos);
      memcpy(pb->R, wR + 9 * b, sizeof pb->R);
    } else {
      double dp[3] = {wpos[3 * b] - wpos[3 * par], wpos[3 * b + 1] - wpos[3 * par + 1],
                      wpos[3 * b + 2] - wpos[3 * par + 2]};
      m3_tmulv(pb->pos, wR + 9 * par, dp);
      m3_tmul(pb->R, wR + 9 * par, wR + 9 * b);
    }
    /* joint axes: the body's own Jacobian columns, in the body frame */
    tl_joint_type type = tl_model_joint_type(model, b);
    if (type == TL_JOINT_REVOLUTE || type == TL_JOINT_PRISMATIC || type == TL_JOINT_UNIVERSAL) {
      if (tl_system_point_jacobian(sys, b, wpos + 3 * b, J, J + 3 * (size_t)nv, nv, &err)) {
        snprintf(why, len, "Jacobian: %s", err.message);
        goto done;
      }
      const double *Jx = type == TL_JOINT_PRISMATIC ? J : J + 3 * (size_t)nv;
      int iu = tl_model_joint_u_index(model, b);
      for (int k = 0; k < (type == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
        double a[3] = {Jx[iu + k], Jx[nv + iu + k], Jx[2 * nv + iu + k]};
        m3_tmulv(pb->axis[k], wR + 9 * b, a);
      }
    }
  }
  /* inertials: every URDF link (the child link of each frame's joint, and the root link) */
  for (int f = -1; f < tl_model_nframe(model); ++f) {
    const char *link = f < 0 ? tl_model_body_name(model, 0) : tl_model_frame_link(model, f);
    if (!link) continue;
    int seen = 0;
    for (int g = -1; g < f && !seen; ++g)
      seen = strcmp(g < 0 ? tl_model_body_name(model, 0) : tl_model_frame_link(model, g), link) == 0;
    if (seen) continue;
    int b = tl_model_body_index(model, link);
    if (b < 0) {
      snprintf(why, len, "link '%s' belongs to no body", link);
      goto done;
    }
    double lpos[3], lR[9], mass, com[3], I[9];
    if ((f < 0 ? tl_system_body_pose(sys, 0, lpos, lR, &err)
               : tl_system_frame_pose(sys, f, lpos, lR, &err)) ||
        tl_system_link_inertial(sys, link, &mass, com, I, &err)) {
      snprintf(why, len, "link '%s': %s", link, err.message);
      goto done;
    }
    if (mass == 0) continue;
    /* link frame in the body frame, then the link's inertial in body axes */
    double dp[3] = {lpos[0] - wpos[3 * b], lpos[1] - wpos[3 * b + 1], lpos[2] - wpos[3 * b + 2]};
    double pl[3], Rl[9], c[3], Ib[9];
    m3_tmulv(pl, wR + 9 * b, dp);
    m3_tmul(Rl, wR + 9 * b, lR);
    m3_mulv(c, Rl, com);
    for (int k = 0; k < 3; ++k) c[k] += pl[k];
    m3_mul(Ib, Rl, I);
    double RlT[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) RlT[3 * i + j] = Rl[3 * j + i];
    m3_mul(Ib, Ib, RlT);
    /* add (mass, c, Ib) to the body's (M, C, IC): new COM, parallel axis theorem */
    peer_body *pb = &p->body[b];
    double M0 = pb->mass, M1 = M0 + mass, C1[3];
    for (int k = 0; k < 3; ++k) C1[k] = (M0 * pb->com[k] + mass * c[k]) / M1;
    double d0[3], d1[3];
    for (int k = 0; k < 3; ++k) d0[k] = pb->com[k] - C1[k], d1[k] = c[k] - C1[k];
    double n0 = d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2];
    double n1 = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        pb->I[3 * i + j] += Ib[3 * i + j] + M0 * ((i == j) * n0 - d0[i] * d0[j]) +
                            mass * ((i == j) * n1 - d1[i] * d1[j]);
    pb->mass = M1;
    memcpy(pb->com, C1, sizeof C1);
  }
  for (int b = 0; b < nb; ++b) {
    double want = tl_model_body_mass(model, b), got = p->body[b].mass;
    if (fabs(want - got) > 1e-12 * fmax(1.0, want)) {
      snprintf(why, len, "body '%s': its links' masses add up to %.17g kg, the model says %.17g",
               tl_model_body_name(model, b), got, want);
      goto done;
    }
  }
  rc = 0;
done:
  tl_world_free(world);
  free(q), free(u), free(J), free(wpos), free(wR);
  return rc;
}

static void put_num(FILE *f, const char *name, double v) { fprintf(f, " %s=\"%.17g\"", name, v); }

static void put_vec(FILE *f, const char *name, const double *v, int n) {
  fprintf(f, " %s=\"", name);
  for (int k = 0; k < n; ++k) fprintf(f, "%s%.17g", k ? " " : "", v[k] == 0 ? 0.0 : v[k]);
  fputc('"', f);
}

static void put_name(FILE *f, const char *attr, const char *name, const char *suffix) {
  fprintf(f, " %s=\"", attr);
  put_escaped(f, name);
  if (suffix) put_escaped(f, suffix);
  fputc('"', f);
}

/* Would MuJoCo's compiler accept this inertial as it is? */
static int inertial_ok(double mass, const double d[3]) {
  const double tiny = 1e-14; /* well above mjMINVAL (1e-15) */
  return mass > tiny && d[0] > tiny && d[1] > tiny && d[2] > tiny && d[0] + d[1] >= d[2] &&
         d[1] + d[2] >= d[0] && d[0] + d[2] >= d[1];
}

static void put_joint(FILE *f, const bench_peer *p, int b, int k) {
  const tl_model *model = p->model;
  const peer_body *pb = &p->body[b];
  tl_joint_type type = tl_model_joint_type(model, b);
  const char *name = tl_model_joint_name(model, b);
  fputs("<joint", f);
  put_name(f, "name", name, k ? ":axis2" : NULL);
  if (type == TL_JOINT_FLOATING) {
    fputs(" type=\"free\"/>\n", f);
    return;
  }
  fprintf(f, " type=\"%s\" pos=\"0 0 0\"",
          type == TL_JOINT_SPHERICAL ? "ball" : type == TL_JOINT_PRISMATIC ? "slide" : "hinge");
  if (type != TL_JOINT_SPHERICAL) {
    put_vec(f, "axis", pb->axis[k], 3);
    double lo = -INFINITY, hi = INFINITY;
    tl_model_dof_limits(model, tl_model_joint_u_index(model, b) + k, &lo, &hi);
    if (isfinite(lo) && isfinite(hi) && hi > lo) {
      fputs(" limited=\"true\"", f);
      double r[2] = {lo, hi};
      put_vec(f, "range", r, 2);
    } else {
      fputs(" limited=\"false\"", f);
    }
  } else {
    fputs(" limited=\"false\"", f);
  }
  const joint_params *jp = &pb->jp;
  if (jp->rotor != 0) put_num(f, "armature", jp->rotor);
  /* the PD's kd as joint damping, which the Euler integrator treats implicitly (M + dt D) */
  put_num(f, "damping", jp->damping + p->s.kd);
  if (jp->friction != 0) put_num(f, "frictionloss", jp->friction);
  if (jp->stiffness != 0) {
    put_num(f, "stiffness", jp->stiffness);
    if (type != TL_JOINT_SPHERICAL) put_num(f, "springref", jp->mount[k]);
  }
  fputs("/>\n", f);
}

/* Contact step: the collision geoms of body b, in the body frame (Talus's
 * body frame is the MJCF body's frame). MuJoCo sizes are half lengths;
 * a mesh geom is the Talus convex hull (asset PEER_HULL<geom>, written by
 * put_hulls). Robot geoms collide with the ground only: contype 1,
 * conaffinity 0 here, 0 / 1 on the plane. */
static void put_geoms(FILE *f, bench_peer *p, int b, int depth) {
  const tl_model *model = p->model;
  for (int g = 0; g < tl_model_ngeom(model); ++g) {
    tl_geom_type type;
    int body, nvert, nface;
    double size[3], pos[3], R[9], quat[4], mu = 0.8, rest, stiff, damp, hs[3];
    const double *vert;
    const int *face;
    if (tl_model_geom(model, g, &type, &body, size, pos, R) != 0 || body != b) continue;
    tl_model_geom_contact(model, g, &mu, &rest, &stiff, &damp);
    fprintf(f, "%*s<geom", 2 * depth, "");
    switch (type) {
      case TL_GEOM_SPHERE: fputs(" type=\"sphere\"", f), put_vec(f, "size", size, 1); break;
      case TL_GEOM_BOX:
        for (int k = 0; k < 3; ++k) hs[k] = 0.5 * size[k];
        fputs(" type=\"box\"", f), put_vec(f, "size", hs, 3);
        break;
      case TL_GEOM_CAPSULE:
      case TL_GEOM_CYLINDER:
        hs[0] = size[0], hs[1] = 0.5 * size[1];
        fprintf(f, " type=\"%s\"", type == TL_GEOM_CAPSULE ? "capsule" : "cylinder");
        put_vec(f, "size", hs, 2);
        break;
      case TL_GEOM_MESH:
        if (tl_model_geom_hull(model, g, &nvert, &vert, &nface, &face) != 0 || nvert < 4) {
          fputs(" type=\"sphere\" size=\"0.001\" contype=\"0\" conaffinity=\"0\"/>\n", f);
          ++p->nskipped_geom;
          continue;
        }
        fprintf(f, " type=\"mesh\" mesh=\"" PEER_HULL "%d\"", g);
        break;
      default: /* no other geom type on a robot */
        fputs(" type=\"sphere\" size=\"0.001\" contype=\"0\" conaffinity=\"0\"/>\n", f);
        ++p->nskipped_geom;
        continue;
    }
    put_vec(f, "pos", pos, 3);
    mat_to_quat(quat, R);
    put_vec(f, "quat", quat, 4);
    /* sliding: the pair's coefficient as Talus combines it (the smaller of the two geoms');
     * MuJoCo takes the larger, and the plane has 0 */
    double fr[3] = {fmin(mu, p->s.ground_mu), 0.005, 0.0001};
    put_vec(f, "friction", fr, 3);
    fputs(" condim=\"3\" contype=\"1\" conaffinity=\"0\"/>\n", f);
    ++p->ngeom;
  }
}

/* Contact step: one mesh asset per mesh geom with a hull (its vertices in
 * the geom frame; MuJoCo computes its own hull of them). */
static void put_hulls(FILE *f, const bench_peer *p) {
  const tl_model *model = p->model;
  int any = 0;
  for (int g = 0; g < tl_model_ngeom(model); ++g) {
    tl_geom_type type;
    int body, nvert, nface;
    double size[3], pos[3], R[9];
    const double *vert;
    const int *face;
    if (tl_model_geom(model, g, &type, &body, size, pos, R) != 0 || type != TL_GEOM_MESH ||
        tl_model_geom_hull(model, g, &nvert, &vert, &nface, &face) != 0 || nvert < 4)
      continue;
    if (!any) fputs("  <asset>\n", f);
    any = 1;
    fprintf(f, "    <mesh name=\"" PEER_HULL "%d\"", g);
    put_vec(f, "vertex", vert, 3 * nvert);
    fputs("/>\n", f);
  }
  if (any) fputs("  </asset>\n", f);
}

static void put_body(FILE *f, bench_peer *p, int b, int depth) {
  const tl_model *model = p->model;
  peer_body *pb = &p->body[b];
  double quat[4], d[3], V[9], iq[4];
  fprintf(f, "%*s<body", 2 * depth, "");
  put_name(f, "name", tl_model_body_name(model, b), NULL);
  put_vec(f, "pos", pb->pos, 3);
  mat_to_quat(quat, pb->R);
  put_vec(f, "quat", quat, 4);
  fputs(">\n", f);
  tl_joint_type type = tl_model_joint_type(model, b);
  for (int k = 0; k < (type == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
    fprintf(f, "%*s", 2 * depth + 2, "");
    put_joint(f, p, b, k);
  }
  sym3_eig(pb->I, d, V);
  mat_to_quat(iq, V);
  fprintf(f, "%*s<inertial", 2 * depth + 2, "");
  if (inertial_ok(pb->mass, d)) {
    put_vec(f, "pos", pb->com, 3);
    put_vec(f, "quat", iq, 4);
    put_num(f, "mass", pb->mass);
    put_vec(f, "diaginertia", d, 3);
  } else { /* placeholder; the exact values go into mjModel after compilation */
    fputs(" pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"", f);
    pb->patched = 1;
  }
  fputs("/>\n", f);
  if (tl_model_frame_body(model, p->s.jac_frame) == b) {
    fprintf(f, "%*s<site name=\"" PEER_SITE "\"/>\n", 2 * depth + 2, ""); /* placed after compiling */
  }
  if (p->s.contact) put_geoms(f, p, b, depth + 1);
  for (int c = b + 1; c < p->nbody; ++c)
    if (tl_model_body_parent(model, c) == b) put_body(f, p, c, depth + 1);
  fprintf(f, "%*s</body>\n", 2 * depth, "");
}

/* The Talus body whose joint carries DOF k (-1: none). */
static int dof_body(const tl_model *model, int k) {
  for (int b = 0; b < tl_model_nbody(model); ++b) {
    int iu = tl_model_joint_u_index(model, b), n = tl_joint_nv(tl_model_joint_type(model, b));
    if (k >= iu && k < iu + n) return b;
  }
  return -1;
}

static char *write_mjcf(bench_peer *p) {
  const tl_model *model = p->model;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fputs("<mujoco", f);
  put_name(f, "model", tl_model_name(model), NULL);
  fputs(">\n  <compiler angle=\"radian\" inertiafromgeom=\"false\" fusestatic=\"false\" "
        "balanceinertia=\"false\" boundmass=\"0\" boundinertia=\"0\"/>\n"
        "  <option timestep=\"0.001\" gravity=\"0 0 -9.81\" integrator=\"Euler\"",
        f);
  /* the contact step's second MuJoCo configuration, against slip: an elliptic cone with a
   * large impratio (stiffer friction), as MuJoCo Menagerie's quadruped models have */
  if (p->s.contact == 2) fputs(" cone=\"elliptic\" impratio=\"100\"", f);
  fputs(">\n", f);
  if (!p->s.contact) fputs("    <flag contact=\"disable\"/>\n", f);
  fputs("  </option>\n", f);
  if (p->s.contact) put_hulls(f, p);
  fputs("  <worldbody>\n", f);
  if (p->s.contact) { /* the ground: plane z = 0 (size 0: infinite) */
    fputs("    <geom name=\"" PEER_GROUND "\" type=\"plane\" size=\"0 0 1\" friction=\"0 0 0\""
          " condim=\"3\" contype=\"0\" conaffinity=\"1\"/>\n", f);
  }
  if (p->base_floating) {
    put_body(f, p, 0, 2);
  } else {
    if (tl_model_frame_body(model, p->s.jac_frame) == 0)
      fputs("    <site name=\"" PEER_SITE "\"/>\n", f);
    for (int c = 1; c < p->nbody; ++c)
      if (tl_model_body_parent(model, c) == 0) put_body(f, p, c, 2);
  }
  fputs("  </worldbody>\n  <actuator>\n", f);
  for (int b = 0; b < p->nbody; ++b) {
    tl_joint_type type = tl_model_joint_type(model, b);
    if (type == TL_JOINT_FLOATING || type == TL_JOINT_FIXED) continue;
    int n = type == TL_JOINT_UNIVERSAL ? 2 : type == TL_JOINT_SPHERICAL ? 3 : 1;
    for (int k = 0; k < n; ++k) {
      fputs("    <general", f);
      put_name(f, "joint", tl_model_joint_name(model, b),
               type == TL_JOINT_UNIVERSAL && k == 1 ? ":axis2" : NULL);
      if (type == TL_JOINT_SPHERICAL) {
        double g[3] = {k == 0, k == 1, k == 2};
        put_vec(f, "gear", g, 3);
      }
      put_num(f, "gainprm", p->s.kp);
      double bias[3] = {0, -p->s.kp, 0}; /* kd: joint damping */
      fputs(" biastype=\"affine\"", f);
      put_vec(f, "biasprm", bias, 3);
      fputs(" ctrllimited=\"false\"", f);
      double eff = p->body[b].jp.effort;
      if (isfinite(eff)) {
        double r[2] = {-eff, eff};
        fputs(" forcelimited=\"true\"", f);
        put_vec(f, "forcerange", r, 2);
      } else {
        fputs(" forcelimited=\"false\"", f);
      }
      fputs("/>\n", f);
    }
  }
  fputs("  </actuator>\n  <equality>\n", f);
  for (int k = 0; k < tl_model_nv(model); ++k) {
    int leader = -1;
    double mult = 1, offset = 0;
    if (tl_model_dof_mimic(model, k, &leader, &mult, &offset) != 1) continue;
    int bf = dof_body(model, k), bl = dof_body(model, leader);
    if (bf < 0 || bl < 0) continue;
    fputs("    <joint", f);
    put_name(f, "joint1", tl_model_joint_name(model, bf), NULL);
    put_name(f, "joint2", tl_model_joint_name(model, bl), NULL);
    double poly[5] = {offset, mult, 0, 0, 0};
    put_vec(f, "polycoef", poly, 5);
    fputs("/>\n", f);
  }
  fputs("  </equality>\n</mujoco>\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

static mjModel *load_mjcf(const char *text, char *why, size_t len) {
  mjVFS *vfs = malloc(sizeof(mjVFS));
  if (!vfs) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  mj_defaultVFS(vfs);
  int size = (int)strlen(text);
  mjModel *m = NULL;
  if (mj_makeEmptyFileVFS(vfs, PEER_XML, size) != 0) {
    snprintf(why, len, "MuJoCo VFS: cannot make the model file");
  } else {
    int i = mj_findFileVFS(vfs, PEER_XML);
    memcpy(vfs->filedata[i], text, (size_t)size);
    char err[1000] = "";
    m = mj_loadXML(PEER_XML, vfs, err, sizeof err);
    if (!m) {
      for (char *c = err; *c; ++c)
        if (*c == '\n') *c = ' ';
      snprintf(why, len, "MuJoCo refused the generated MJCF: %.900s", err);
    }
  }
  mj_deleteVFS(vfs);
  free(vfs);
  return m;
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
  /* PD targets: the configuration, at rest */
  for (int a = 0; a < m->nu; ++a) {
    int j = m->actuator_trnid[2 * a], qa = m->jnt_qposadr[j];
    if (m->jnt_type[j] == mjJNT_BALL) {
      double rv[3];
      mju_quat2Vel(rv, p->qpos + qa, 1.0);
      p->ctrl[a] = rv[0] * m->actuator_gear[6 * a] + rv[1] * m->actuator_gear[6 * a + 1] +
                   rv[2] * m->actuator_gear[6 * a + 2];
    } else {
      p->ctrl[a] = p->qpos[qa];
    }
  }
}

void bench_peer_free(bench_peer *p) {
  if (!p) return;
  if (p->d) mj_deleteData(p->d);
  if (p->m) mj_deleteModel(p->m);
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
           "only robot-ground pairs collide (contype/conaffinity; Talus has no self-collision by "
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
  char *urdf = NULL, *mjcf = NULL;
  size_t urdf_len = 0;
  if (!p->body) {
    snprintf(why, why_len, "out of memory");
    goto fail;
  }
  for (int b = 0; b < p->nbody; ++b)
    for (int k = 0; k < 2; ++k) p->body[b].mj_joint[k] = -1;
  if (s->contact && !p->base_floating) {
    snprintf(why, why_len, "the contact step is for floating-base robots");
    goto fail;
  }
  for (int b = 0; b < p->nbody; ++b)
    if (tl_model_joint_type(model, b) == TL_JOINT_PLANAR) {
      snprintf(why, why_len, "planar joint '%s': no MuJoCo counterpart here",
               tl_model_joint_name(model, b));
      goto fail;
    }
  if (describe_bodies(p, why, why_len)) goto fail;

  /* joint parameters without a getter, from Talus's own URDF export */
  FILE *f = open_memstream(&urdf, &urdf_len);
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!f || tl_model_export_urdf_file(model, f, &err) != TL_OK) {
    if (f) fclose(f);
    free(urdf);
    urdf = NULL;
    snprintf(note, note_len, "no URDF export (%s): no armature, damping, friction loss, springs "
             "or effort limits in the MuJoCo model", err.message);
  } else {
    fclose(f);
  }
  for (int b = 0; b < p->nbody; ++b)
    p->body[b].jp = parse_joint(urdf, tl_model_joint_name(model, b),
                                tl_model_joint_type(model, b) == TL_JOINT_SPHERICAL);

  mjcf = write_mjcf(p);
  if (!mjcf) {
    snprintf(why, why_len, "cannot write the MJCF");
    goto fail;
  }
  p->m = load_mjcf(mjcf, why, why_len);
  if (!p->m) goto fail;
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

  /* match bodies and joints by name; write the exact inertials */
  int npatched = 0;
  for (int b = 0; b < p->nbody; ++b) {
    peer_body *pb = &p->body[b];
    tl_joint_type type = tl_model_joint_type(model, b);
    if (b == 0 && !p->base_floating) continue;
    pb->mj_body = mj_name2id(m, mjOBJ_BODY, tl_model_body_name(model, b));
    if (pb->mj_body < 0) {
      snprintf(why, why_len, "no MuJoCo body '%s'", tl_model_body_name(model, b));
      goto fail;
    }
    for (int k = 0; k < (type == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
      char name[300];
      snprintf(name, sizeof name, "%s%s", tl_model_joint_name(model, b), k ? ":axis2" : "");
      int j = mj_name2id(m, mjOBJ_JOINT, name);
      static const int want[] = {[TL_JOINT_FLOATING] = mjJNT_FREE,   [TL_JOINT_REVOLUTE] = mjJNT_HINGE,
                                 [TL_JOINT_PRISMATIC] = mjJNT_SLIDE, [TL_JOINT_SPHERICAL] = mjJNT_BALL,
                                 [TL_JOINT_UNIVERSAL] = mjJNT_HINGE};
      if (j < 0 || m->jnt_type[j] != want[type] || m->jnt_bodyid[j] != pb->mj_body) {
        snprintf(why, why_len, "no MuJoCo joint '%.200s' of the right type on body '%s'", name,
                 tl_model_body_name(model, b));
        goto fail;
      }
      pb->mj_joint[k] = j;
    }
    if (pb->patched) { /* the exact inertial over the placeholder */
      double d[3], V[9], *iq = m->body_iquat + 4 * pb->mj_body;
      int id = pb->mj_body;
      sym3_eig(pb->I, d, V);
      m->body_mass[id] = pb->mass;
      memcpy(m->body_ipos + 3 * id, pb->com, 3 * sizeof(double));
      mat_to_quat(iq, V);
      memcpy(m->body_inertia + 3 * id, d, 3 * sizeof(double));
      /* the compiler marked the placeholder's inertial frame as the body frame */
      m->body_sameframe[id] = pb->com[0] == 0 && pb->com[1] == 0 && pb->com[2] == 0 &&
                              iq[0] == 1 && iq[1] == 0 && iq[2] == 0 && iq[3] == 0;
      ++npatched;
    }
    if (type == TL_JOINT_SPHERICAL && pb->jp.stiffness != 0)
      memcpy(m->qpos_spring + m->jnt_qposadr[pb->mj_joint[0]], pb->jp.mount, 4 * sizeof(double));
  }
  mj_setConst(m, p->d);
  if (npatched)
    snprintf(note + strlen(note), note_len - strlen(note),
             "%s%d massless (or A + B < C) bodies: exact inertial written into mjModel after "
             "compiling a placeholder",
             note[0] ? "; " : "", npatched);

  if (p->s.contact && p->nskipped_geom)
    snprintf(note + strlen(note), note_len - strlen(note),
             "%s%d collision geoms without a MuJoCo counterpart (mesh without a hull) left out",
             note[0] ? "; " : "", p->nskipped_geom);
  if (p->s.contact) contact_doc_from(m, p->s.contact);

  p->site = mj_name2id(m, mjOBJ_SITE, PEER_SITE);
  if (p->site < 0) {
    snprintf(why, why_len, "no Jacobian site");
    goto fail;
  }
  { /* place the site at the frame (its position in its body, at the zero configuration) */
    int fb = tl_model_frame_body(model, s->jac_frame);
    tl_world *w = NULL;
    tl_system *sys = NULL;
    int nq = tl_model_nq(model);
    double *q0 = calloc((size_t)nq + (size_t)p->nv + 1, sizeof(double));
    double bp[3], bR[9], fp[3], fR[9], dp[3];
    if (q0) zero_q(model, q0);
    int bad = !q0 || tl_world_create(&w, &err) ||
              tl_world_add_system(w, model, &sys, &err) ||
              tl_system_set_state(sys, q0, nq, q0 + nq, p->nv, &err) ||
              tl_system_body_pose(sys, fb, bp, bR, &err) ||
              tl_system_frame_pose(sys, s->jac_frame, fp, fR, &err);
    if (!bad) {
      for (int k = 0; k < 3; ++k) dp[k] = fp[k] - bp[k];
      double *sp = m->site_pos + 3 * p->site;
      if (fb == 0 && !p->base_floating)
        memcpy(sp, fp, sizeof fp);
      else
        m3_tmulv(sp, bR, dp);
      /* compiled at the body origin, the site was marked as sharing the body frame */
      m->site_sameframe[p->site] = sp[0] == 0 && sp[1] == 0 && sp[2] == 0;
    }
    tl_world_free(w);
    free(q0);
    if (bad) {
      snprintf(why, why_len, "Jacobian frame: %s", err.message);
      goto fail;
    }
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
  free(urdf);
  free(mjcf);
  *out = p;
  return 0;
fail:
  free(urdf);
  free(mjcf);
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
  put_vec(f, "friction", fr, 3);
  fputs("/>\n", f);
  for (int i = 0; i < s->nstatic + s->nbox; ++i) {
    const scene_box *b = i < s->nstatic ? &s->stat[i] : &s->box[i - s->nstatic];
    double hs[3] = {0.5 * b->size[0], 0.5 * b->size[1], 0.5 * b->size[2]};
    if (i >= s->nstatic) {
      fputs("    <body", f);
      put_vec(f, "pos", b->pos, 3);
      put_vec(f, "quat", b->quat, 4);
      fputs("><freejoint/><geom type=\"box\" condim=\"3\"", f);
      put_num(f, "mass", s->box_mass);
    } else {
      fputs("    <geom type=\"box\" condim=\"3\"", f);
      put_vec(f, "pos", b->pos, 3);
      put_vec(f, "quat", b->quat, 4);
    }
    put_vec(f, "size", hs, 3);
    put_vec(f, "friction", fr, 3);
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
  p->m = load_mjcf(text, why, why_len);
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
