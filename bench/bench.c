/* talus_bench: microseconds per call of the main kinematic and dynamic
 * queries of the public API, for every robot of the shared corpus and the
 * project's own quadruped, and the same for a peer engine (MuJoCo) measured
 * in the same run, on the same robots, at the same state.
 *
 *   talus_bench [SHARED_ROBOTS_DIR] [--reps N] [--batch-ms X] [--no-peer] [--json]
 *
 * SHARED_ROBOTS_DIR (default: the shared/robots folder beside the source
 * tree) is searched recursively for *.urdf; robots/talus_quadruped is added.
 * Base per robot folder (how the source projects use them): fixed for panda,
 * ur5, kuka_iiwa, double_pendulum and cartpole, floating otherwise.
 *
 * Each robot is put at one seeded random state (base in [-1,1]^2 x [0.5,1.5],
 * uniform orientation, joints uniform within their limits or in [-1, 1],
 * ball joints uniform quaternions, u ~ N(0, 1)). Each query is timed
 * (clock_gettime(CLOCK_MONOTONIC)) in N batches (default 15) of calls, each
 * batch sized to take about X ms (default 2); the figure is the median over
 * batches of the batch mean. What each column includes is printed in the
 * header: the public API caches kinematics and M/h after tl_system_set_state
 * and computes them lazily, so a query's cost depends on what is cached.
 *
 * Peer (house rule: speed targets are ratios against a peer measured in the
 * same run). When CMake finds MuJoCo (libmujoco-dev), bench/peer_mujoco.c is
 * built in (TALUS_BENCH_MUJOCO): for each robot it generates a MuJoCo model
 * from the compiled Talus model (same bodies, joints, inertials, rotor
 * inertia as armature; see peer_mujoco.c), maps the random state into
 * MuJoCo's coordinates, and before any timing cross-checks the two engines
 * at that state: body poses, M (joint block and whole), h, RNEA, forward
 * dynamics and the frame Jacobian, each as max |mujoco - talus| / max |talus|.
 * A robot whose largest difference exceeds 1e-9 is flagged MISMATCH: its
 * ratios compare different models and mean nothing. Then both engines are
 * timed with the same batch/median method, their batches interleaved (batch
 * b of every Talus and every MuJoCo query, then batch b + 1), so that a load
 * change on the machine hits both alike. Each column's MuJoCo counterpart is
 * printed in the header (MuJoCo has no ABA: its forward dynamics is CRBA +
 * sparse L^T D L + RNEA for the bias + solve; in its step, kp is a position
 * actuator, explicit, and kd joint damping, implicit in its Euler
 * integrator, where Talus's PD is implicit in both).
 *
 * Reading the ratio: ratio = MuJoCo us / Talus us for the same column, robot
 * and state; > 1 means Talus is faster, < 1 that MuJoCo is. Without MuJoCo the
 * output says that no peer was measured and has no ratios.
 *
 * Memory (house rule: memory targets too are ratios against the peer). Per
 * robot, the bytes Talus allocates for the model (tl_model_load_urdf) and
 * for a world holding that one system (tl_world_create +
 * tl_world_add_system): malloc, calloc, realloc and free are wrapped at link
 * time (bench_mem.c keeps the requested size of every live block), and the
 * bytes returned by tl_model_free / tl_world_free at the end are checked
 * against them. MuJoCo allocates inside its shared library, which the
 * wrappers do not see: its figures are its own size fields (mjModel: struct
 * + nbuffer; mjData: struct + nbuffer + nstack mjtNums). ratio = MuJoCo bytes
 * / Talus bytes.
 *
 * Contact step (bench_contact.c): the floating-base legged robots with
 * identified feet stand on a ground plane with their PD, settle for 1 s,
 * then their steps are timed in Talus (exact-cone solver) and in MuJoCo with
 * its default contact settings and with its settings against slip; the
 * contacts and the base heights of the engines are printed as a check that
 * they simulate the same standing robot. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "talus/talus.h"

#include "bench_contact.h"
#include "bench_mem.h"
#include "bench_peer.h"
#include "bench_scene.h"
#include "bench_timing.h"

#ifndef TALUS_SHARED_ROBOTS_DIR
#define TALUS_SHARED_ROBOTS_DIR "../shared/robots"
#endif
#ifndef TALUS_ROBOTS_DIR
#define TALUS_ROBOTS_DIR "robots"
#endif

#define MAX_ROBOTS 64
#define XCHECK_TOL 1e-9 /* largest cross-check difference for comparable timings */

#ifdef TALUS_BENCH_MUJOCO
#define HAVE_PEER 1
#else
#define HAVE_PEER 0
#endif

/* ------------------------------------------------------------- columns */

/* C_FK ... NCOL: bench_peer.h */

static const char *const col_key[NCOL] = {"fk",  "fk_crba_h", "crba_h", "rnea",
                                          "aba", "minv",      "frame_jacobian", "step"};
static const char *const col_head[NCOL] = {"FK", "FK+CRBA+h", "CRBA+h", "RNEA",
                                           "ABA", "M^-1", "frameJ", "step"};
static const char *const col_doc[NCOL] = {
    "tl_system_set_state + tl_system_body_pose(last body): argument checks, copy of q and u, "
    "quaternion normalisation, then the whole lazy kinematics pass (body and joint frames, "
    "COM, world inertias, motion subspaces, body velocities, their time derivatives)",
    "tl_system_set_state + tl_system_mass_matrix: the FK column plus CRBA and the RNEA for h "
    "(the engine computes M and h together) and the nv x nv copy of M",
    "FK+CRBA+h minus FK (derived, not measured on its own)",
    "tl_system_inverse_dynamics(du) with kinematics cached: one RNEA pass with du, "
    "plus rotor inertia",
    "tl_system_forward_dynamics(tau) with kinematics cached: one ABA pass",
    "tl_system_inverse_mass_matrix with M cached: tree-sparse L^T D L factorisation of M "
    "and nv solves for the nv x nv inverse",
    "tl_system_frame_jacobian with kinematics cached: dense 3 x nv Jp and Jr of the last "
    "frame of a deepest body (most ancestor DOFs: column jdof)",
    "tl_world_step, dt 1 ms, no ground or static geometry (no contacts), implicit PD on the "
    "joint DOFs (kp 300, kd 10) holding the random configuration: integrate1 (kinematics, M, "
    "h, factorisation of M + dt Kd + dt^2 Kp) and integrate2 (PD, any non-contact "
    "constraints the engine enforces, integration of u and q); the state is reset to the "
    "random one between batches"};

/* ----------------------------------------------------------- robots */

typedef struct robot_entry {
  char path[1024];
  char label[128];
  char folder[128]; /* top folder under the robots directory */
  tl_base_type base;
} robot_entry;

typedef struct robot_list {
  robot_entry r[MAX_ROBOTS];
  int n;
} robot_list;

static int has_suffix(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void add_robot(robot_list *l, const char *path, const char *folder) {
  if (l->n >= MAX_ROBOTS) return;
  robot_entry *e = &l->r[l->n++];
  memset(e, 0, sizeof(*e));
  snprintf(e->path, sizeof e->path, "%s", path);
  snprintf(e->folder, sizeof e->folder, "%s", folder);
}

/* Every *.urdf under dir (recursively); `folder`: the top folder, NULL at the top. */
static void find_urdfs(robot_list *l, const char *dir, const char *folder) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (ent->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (is_dir(path))
      find_urdfs(l, path, folder ? folder : ent->d_name);
    else if (has_suffix(ent->d_name, ".urdf") && folder)
      add_robot(l, path, folder);
  }
  closedir(d);
}

static int by_path(const void *a, const void *b) {
  return strcmp(((const robot_entry *)a)->path, ((const robot_entry *)b)->path);
}

/* Label: the folder, or folder/stem when the folder holds several URDFs; base from the table. */
static void finish_list(robot_list *l) {
  static const char *const fixed[] = {"panda", "ur5", "kuka_iiwa", "double_pendulum", "cartpole"};
  for (int i = 0; i < l->n; ++i) {
    robot_entry *e = &l->r[i];
    int same = 0;
    for (int j = 0; j < l->n; ++j) same += strcmp(l->r[j].folder, e->folder) == 0;
    const char *slash = strrchr(e->path, '/');
    const char *stem = slash ? slash + 1 : e->path;
    char folder[64], name[64], label[sizeof e->label];
    snprintf(folder, sizeof folder, "%.63s", e->folder);
    snprintf(name, sizeof name, "%.*s", (int)(strlen(stem) - 5), stem); /* without .urdf */
    if (same > 1)
      snprintf(label, sizeof label, "%s/%s", folder, name);
    else
      snprintf(label, sizeof label, "%s", folder);
    memcpy(e->label, label, sizeof label);
    e->base = TL_BASE_FLOATING;
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; ++k)
      if (strncmp(e->folder, fixed[k], strlen(fixed[k])) == 0) e->base = TL_BASE_FIXED;
  }
}

/* ------------------------------------------------------------ timing */

typedef struct bench_ctx {
  tl_world *world;
  tl_system *sys;
  int nq, nv, last_body, last_frame; /* last_frame: the frame of the Jacobian column */
  double *q, *u, *du, *tau, *out, *M, *Jp, *Jr;
  tl_status st; /* first failure of a timed call */
  tl_error err;
} bench_ctx;

static void keep_status(bench_ctx *c, tl_status st) {
  if (st != TL_OK && c->st == TL_OK) c->st = st;
}

static void q_fk(void *ctx) {
  bench_ctx *c = ctx;
  double pos[3], R[9];
  keep_status(c, tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, &c->err));
  keep_status(c, tl_system_body_pose(c->sys, c->last_body, pos, R, &c->err));
}
static void q_fk_crba(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, &c->err));
  keep_status(c, tl_system_mass_matrix(c->sys, c->M, c->nv, &c->err));
}
static void q_rnea(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_inverse_dynamics(c->sys, c->du, c->out, c->nv, &c->err));
}
static void q_aba(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_forward_dynamics(c->sys, c->tau, c->out, c->nv, &c->err));
}
static void q_minv(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_inverse_mass_matrix(c->sys, c->M, c->nv, &c->err));
}
static void q_jac(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_system_frame_jacobian(c->sys, c->last_frame, c->Jp, c->Jr, c->nv, &c->err));
}
static void q_step(void *ctx) {
  bench_ctx *c = ctx;
  keep_status(c, tl_world_step(c->world, &c->err));
}

/* Put the system back at the random state and warm the caches a query relies on. */
static void reset_state(void *ctx) {
  bench_ctx *c = ctx;
  double pos[3], R[9];
  tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, NULL);
  tl_system_body_pose(c->sys, 0, pos, R, NULL); /* kinematics */
  tl_system_mass_matrix(c->sys, c->M, c->nv, NULL); /* M and h */
}

static void talus_clear(void *ctx) {
  bench_ctx *c = ctx;
  c->st = TL_OK;
  memset(&c->err, 0, sizeof c->err);
}

static int talus_failed(void *ctx, char *why, size_t len) {
  bench_ctx *c = ctx;
  if (c->st == TL_OK) return 0;
  snprintf(why, len, "%.290s", c->err.message[0] ? c->err.message : tl_status_name(c->st));
  return 1;
}

/* ------------------------------------------------------------ per robot */

typedef struct robot_result {
  const robot_entry *e;
  int nq, nv, nbody, nframe;
  char frame[128]; /* the frame of the frame-Jacobian column */
  int frame_dofs;  /* its ancestor DOFs (non-zero Jacobian columns) */
  double us[NCOL];
  char error[1100]; /* load / setup failure, empty if none */
  char failed[NCOL][300];
  /* the peer (MuJoCo), when built in */
  int peer;                    /* 1: the peer was built and timed for this robot */
  double peer_us[NCOL];
  char peer_failed[NCOL][300];
  char peer_error[1100];       /* why the peer could not be set up, empty if none */
  char peer_note[600];         /* what had to be adapted, empty if nothing */
  double xcheck[NCHECK];       /* cross-check: relative differences (bench_peer.h) */
  double xcheck_max;           /* their largest (NAN: not checked) */
  /* memory (bench_mem.h): live bytes Talus allocated for the model (at load;
   * _end: what tl_model_free returned) and for the world with this system
   * (tl_world_create + tl_world_add_system; _end: what tl_world_free
   * returned after the timing); the peer's model and data (its own fields) */
  size_t model_bytes, model_bytes_end, world_bytes, world_bytes_end;
  size_t peer_model_bytes, peer_data_bytes;
  char peer_mem_detail[300];
  /* the contact step, for the robots of contact_spec_of */
  int has_contact;
  contact_result contact;
} robot_result;

static int setup(bench_ctx *c, const tl_model *model, size_t *world_bytes, char *why, size_t len) {
  memset(c, 0, sizeof(*c));
  tl_error err;
  memset(&err, 0, sizeof err);
  c->nq = tl_model_nq(model);
  c->nv = tl_model_nv(model);
  c->last_body = tl_model_nbody(model) - 1;
  c->last_frame = tl_model_nframe(model) - 1; /* replaced by deepest_frame() once built */
  size_t nv = (size_t)c->nv, nq = (size_t)c->nq;
  double *buf = calloc(nq + 4 * nv + nv * nv + 6 * nv + 1, sizeof(double));
  if (!buf) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  c->q = buf;
  c->u = c->q + nq;
  c->du = c->u + nv;
  c->tau = c->du + nv;
  c->out = c->tau + nv;
  c->M = c->out + nv;
  c->Jp = c->M + nv * nv;
  c->Jr = c->Jp + 3 * nv;
  bench_rng_seed(BENCH_SEED);
  bench_random_state(model, c->q, c->u);
  for (size_t k = 0; k < nv; ++k) {
    c->du[k] = bench_rng_normal();
    c->tau[k] = bench_rng_normal();
  }
  double *kp = calloc(2 * nv + 1, sizeof(double)), *kd = kp ? kp + nv : NULL;
  tl_status st = kp ? TL_OK : TL_ERR_MEMORY;
  size_t live0 = bench_mem_live();
  if (st == TL_OK) st = tl_world_create(&c->world, &err);
  if (st == TL_OK) st = tl_world_add_system(c->world, model, &c->sys, &err);
  *world_bytes = bench_mem_live() - live0;
  if (st == TL_OK) st = tl_system_set_state(c->sys, c->q, c->nq, c->u, c->nv, &err);
  if (st == TL_OK) {
    for (int b = 0; b < tl_model_nbody(model); ++b) {
      if (tl_model_joint_type(model, b) == TL_JOINT_FLOATING) continue;
      int iu = tl_model_joint_u_index(model, b);
      for (int k = 0; k < tl_joint_nv(tl_model_joint_type(model, b)); ++k) {
        kp[iu + k] = BENCH_KP;
        kd[iu + k] = BENCH_KD;
      }
    }
    st = tl_system_set_pd_gains(c->sys, kp, kd, c->nv, &err);
  }
  /* hold the random configuration at rest: u_target = 0 (c->out is still zero) */
  if (st == TL_OK) st = tl_system_set_pd_targets(c->sys, c->q, c->nq, c->out, c->nv, &err);
  free(kp);
  if (st != TL_OK) {
    snprintf(why, len, "%s", err.message[0] ? err.message : tl_status_name(st));
    return -1;
  }
  return 0;
}

/* The last frame among those on a body with the most ancestor DOFs (the
 * frame Jacobian of a frame fixed to the base would be trivially cheap). */
static int deepest_frame(const tl_model *model, tl_system *sys, int *dofs) {
  int best = tl_model_nframe(model) - 1, most = -1;
  for (int f = 0; f < tl_model_nframe(model); ++f) {
    int n = tl_system_sparse_jacobian_size(sys, tl_model_frame_body(model, f));
    if (n >= most) {
      most = n;
      best = f;
    }
  }
  *dofs = most;
  return best;
}

/* Free the world; returns the bytes its free returned (what it held). */
static size_t teardown(bench_ctx *c) {
  size_t live0 = bench_mem_live();
  tl_world_free(c->world);
  size_t held = live0 - bench_mem_live();
  free(c->q);
  memset(c, 0, sizeof(*c));
  return held;
}

static double ratio(double peer_us, double talus_us) {
  return isfinite(peer_us) && isfinite(talus_us) && talus_us > 0 ? peer_us / talus_us : NAN;
}

#if HAVE_PEER
/* Build the peer for this robot, cross-check it against Talus at the
 * benchmark state, and fill the peer's timing entries. 0 on success. */
static int peer_setup(const tl_model *model, bench_ctx *c, robot_result *r, bench_peer **peer,
                      timed *t) {
  bench_peer_state s = {c->q, c->u, c->du, c->tau, BENCH_KP, BENCH_KD, c->last_frame, 0, 0.0};
  if (bench_peer_create(model, &s, peer, r->peer_note, sizeof r->peer_note, r->peer_error,
                        sizeof r->peer_error) != 0)
    return -1;
  bench_peer_memory(*peer, &r->peer_model_bytes, &r->peer_data_bytes, r->peer_mem_detail,
                    sizeof r->peer_mem_detail);
  if (bench_peer_crosscheck(*peer, c->sys, r->xcheck, r->peer_error, sizeof r->peer_error) != 0)
    return -1;
  r->xcheck_max = 0;
  for (int k = 0; k < NCHECK; ++k)
    if (!isnan(r->xcheck[k])) r->xcheck_max = fmax(r->xcheck_max, r->xcheck[k]);
  for (int k = 0; k < NCOL; ++k)
    t[k] = (timed){*peer, bench_peer_query(k), bench_peer_reset, bench_peer_clear,
                   bench_peer_failed};
  return 0;
}
#endif

static void bench_robot(const robot_entry *e, robot_result *r, int batches, double batch_s,
                        int use_peer) {
  memset(r, 0, sizeof(*r));
  r->e = e;
  for (int k = 0; k < NCOL; ++k) r->us[k] = r->peer_us[k] = NAN;
  for (int k = 0; k < NCHECK; ++k) r->xcheck[k] = NAN;
  r->xcheck_max = NAN;
  tl_load_options opt = tl_load_options_default();
  opt.base = e->base;
  tl_model *model = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  size_t live0 = bench_mem_live();
  if (tl_model_load_urdf(e->path, &opt, &model, &err) != TL_OK) {
    snprintf(r->error, sizeof r->error, "load failed: %s",
             err.message[0] ? err.message : tl_status_name(err.status));
    return;
  }
  r->model_bytes = bench_mem_live() - live0;
  r->nq = tl_model_nq(model);
  r->nv = tl_model_nv(model);
  r->nbody = tl_model_nbody(model);
  r->nframe = tl_model_nframe(model);
  bench_ctx c;
  if (setup(&c, model, &r->world_bytes, r->error, sizeof r->error) != 0) {
    teardown(&c);
    tl_model_free(model);
    return;
  }
  c.last_frame = deepest_frame(model, c.sys, &r->frame_dofs);
  snprintf(r->frame, sizeof r->frame, "%s", tl_model_frame_name(model, c.last_frame));
  static void (*const fns[NCOL])(void *) = {q_fk,  q_fk_crba, NULL,  q_rnea,
                                            q_aba, q_minv,    q_jac, q_step};
  timed t[MAX_TIMED];
  int nt = NCOL;
  for (int k = 0; k < NCOL; ++k) t[k] = (timed){&c, fns[k], reset_state, talus_clear, talus_failed};
  double us[MAX_TIMED];
  static char failed[MAX_TIMED][TIMED_WHY];
  memset(failed, 0, sizeof failed);
#if HAVE_PEER
  bench_peer *peer = NULL;
  if (use_peer) {
    if (peer_setup(model, &c, r, &peer, t + NCOL) == 0) {
      r->peer = 1;
      nt = 2 * NCOL;
    } else {
      r->xcheck_max = NAN;
    }
  }
#else
  (void)use_peer;
#endif
  time_queries(t, nt, batches, batch_s, us, failed, NULL);
  for (int k = 0; k < NCOL; ++k) {
    r->us[k] = us[k];
    memcpy(r->failed[k], failed[k], sizeof r->failed[k]);
    if (r->peer) {
      r->peer_us[k] = us[NCOL + k];
      memcpy(r->peer_failed[k], failed[NCOL + k], sizeof r->peer_failed[k]);
    }
  }
  r->us[C_CRBA] = r->us[C_FK_CRBA] - r->us[C_FK];
  if (r->peer) r->peer_us[C_CRBA] = r->peer_us[C_FK_CRBA] - r->peer_us[C_FK];
#if HAVE_PEER
  bench_peer_free(peer);
#endif
  r->world_bytes_end = teardown(&c);
  live0 = bench_mem_live();
  tl_model_free(model);
  r->model_bytes_end = live0 - bench_mem_live();
}

/* ------------------------------------------------------------- output */

/* The 1-minute load average and the number of online CPUs, for the header
 * (timings of a loaded machine are noisy); load < 0 if unknown. */
static void machine_load(double *load, long *ncpu) {
  *load = -1.0;
  *ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  if (fscanf(f, "%lf", load) != 1) *load = -1.0;
  fclose(f);
}

static const char *const xcheck_key[NCHECK] = {"pose", "mass_matrix_joints", "mass_matrix",
                                                "h", "rnea", "forward_dynamics",
                                                "frame_jacobian"};
static const char *const xcheck_head[NCHECK] = {"pose", "M(joints)", "M", "h", "RNEA", "FD", "J"};

/* Why there is no peer in this run (NULL: there is one). */
static const char *no_peer_reason(int use_peer) {
  if (!HAVE_PEER)
    return "talus_bench was built without MuJoCo (install libmujoco-dev, e.g. with "
           "scripts/setup.sh, and configure again)";
  if (!use_peer) return "--no-peer was given";
  return NULL;
}

static const char *peer_label(void) {
#if HAVE_PEER
  return bench_peer_name();
#else
  return "none";
#endif
}

static const char *peer_col_doc(int k) {
#if HAVE_PEER
  return bench_peer_column_doc(k);
#else
  (void)k;
  return NULL;
#endif
}

static const char *peer_model_doc(void) {
#if HAVE_PEER
  return bench_peer_model_doc();
#else
  return NULL;
#endif
}

static const char *peer_mem_doc(void) {
#if HAVE_PEER
  return bench_peer_memory_doc();
#else
  return NULL;
#endif
}

static const char *peer_contact_doc(int variant) {
#if HAVE_PEER
  return bench_peer_contact_doc(variant);
#else
  (void)variant;
  return NULL;
#endif
}

static void print_row(int wl, const char *label, const char *base, const char *nv,
                      const char *jdof, const char *engine, const double *v, int is_ratio) {
  printf("%-*s %-8s %3s %4s %-6s", wl, label, base, nv, jdof, engine);
  for (int k = 0; k < NCOL; ++k) {
    int w = k == C_FK_CRBA ? 10 : 8;
    if (isnan(v[k]))
      printf(" %*s", w, "n/a");
    else
      printf(" %*.*f", w, is_ratio ? 2 : 3, v[k]);
  }
  putchar('\n');
}

static void print_crosscheck(const robot_result *res, int n, int wl);
static void print_memory(const robot_result *res, int n, int wl, const char *no_peer);
static void print_contact(const robot_result *res, int n, int wl, const char *no_peer);
static void print_scenes(const scene_result *sc, int nsc, const char *no_peer);

/* The many-contact scenes of the run (bench_scene.h), filled by main. */
static scene_result scene_res[8];
static int nscene_res;

static void print_table(const robot_result *res, int n, int batches, double batch_ms,
                        int use_peer) {
  int wl = 5;
  for (int i = 0; i < n; ++i)
    if ((int)strlen(res[i].e->label) > wl) wl = (int)strlen(res[i].e->label);
  double load;
  long ncpu;
  machine_load(&load, &ncpu);
  const char *no_peer = no_peer_reason(use_peer);
  printf("# talus_bench: microseconds per call, median over %d batches of the batch mean "
         "(each batch ~%g ms), one seeded random state per robot, talus " TALUS_VERSION "\n",
         batches, batch_ms);
  printf("# machine: %ld CPUs online, load average %.2f at the end of the run (a loaded "
         "machine makes the figures noisy)\n", ncpu, load);
  if (no_peer) {
    printf("# peer: NONE MEASURED: %s; Talus figures only, no ratios\n", no_peer);
  } else {
    printf("# peer: %s, measured in this run on the same robots at the same state, its batches "
           "interleaved with Talus's\n", peer_label());
    printf("# ratio = %s us / Talus us, per robot and column: > 1 means Talus is faster, < 1 "
           "that the peer is\n", peer_label());
    printf("# peer model: %s\n", peer_model_doc());
  }
  for (int k = 0; k < NCOL; ++k) {
    printf("# %-9s %s%s\n", col_head[k], no_peer ? "" : "talus:  ", col_doc[k]);
    if (!no_peer) printf("# %-9s mujoco: %s\n", "", peer_col_doc(k));
  }
  printf("# jdof      ancestor DOFs of that frame (non-zero columns of its Jacobian)\n");
  printf("%-*s %-8s %3s %4s %-6s", wl, "robot", "base", "nv", "jdof", "engine");
  for (int k = 0; k < NCOL; ++k) printf(" %*s", k == C_FK_CRBA ? 10 : 8, col_head[k]);
  putchar('\n');
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    const char *base = r->e->base == TL_BASE_FIXED ? "fixed" : "floating";
    if (r->error[0]) {
      printf("%-*s %-8s   -  %s\n", wl, r->e->label, base, r->error);
      continue;
    }
    char nv[16], jd[16];
    snprintf(nv, sizeof nv, "%d", r->nv);
    snprintf(jd, sizeof jd, "%d", r->frame_dofs);
    print_row(wl, r->e->label, base, nv, jd, "talus", r->us, 0);
    if (!no_peer) {
      double rat[NCOL];
      for (int k = 0; k < NCOL; ++k) rat[k] = ratio(r->peer_us[k], r->us[k]);
      print_row(wl, "", "", "", "", "mujoco", r->peer_us, 0);
      print_row(wl, "", "", "", "", "ratio", rat, 1);
    }
    for (int k = 0; k < NCOL; ++k)
      if (r->failed[k][0])
        printf("#   %s: talus %s failed: %s\n", r->e->label, col_head[k], r->failed[k]);
    for (int k = 0; k < NCOL; ++k)
      if (r->peer_failed[k][0])
        printf("#   %s: mujoco %s failed: %s\n", r->e->label, col_head[k], r->peer_failed[k]);
    if (r->peer_error[0]) printf("#   %s: mujoco: no figures: %s\n", r->e->label, r->peer_error);
    if (r->peer_note[0]) printf("#   %s: mujoco model: %s\n", r->e->label, r->peer_note);
    if (r->peer && !(r->xcheck_max <= XCHECK_TOL))
      printf("#   %s: CROSS-CHECK MISMATCH (largest relative difference %.3g > %g): the "
             "engines disagree, so these ratios mean nothing\n",
             r->e->label, r->xcheck_max, XCHECK_TOL);
  }
  if (!no_peer) print_crosscheck(res, n, wl);
  print_memory(res, n, wl, no_peer);
  print_contact(res, n, wl, no_peer);
  print_scenes(scene_res, nscene_res, no_peer);
}

static void print_crosscheck(const robot_result *res, int n, int wl) {
  printf("\n# cross-check, done before timing at the benchmark state: max |mujoco - talus| / "
         "max |talus| per quantity (MuJoCo's coordinates); above %g the ratios are not "
         "comparable\n", XCHECK_TOL);
  printf("# pose: every body's world position and rotation; M(joints): the block of the "
         "non-base DOFs; M: all of it (base mapped); h: bias force; RNEA: M du + h; FD: "
         "M^-1 (tau - h); J: the frame Jacobian of the frameJ column\n");
  printf("%-*s", wl, "robot");
  for (int k = 0; k < NCHECK; ++k) printf(" %9s", xcheck_head[k]);
  printf(" %9s  %s\n", "max", "verdict");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    printf("%-*s", wl, r->e->label);
    if (!r->peer) {
      printf(" not checked: %s\n", r->error[0] ? "Talus could not load it" : "no peer model");
      continue;
    }
    for (int k = 0; k < NCHECK; ++k) {
      if (isnan(r->xcheck[k]))
        printf(" %9s", "-");
      else
        printf(" %9.2e", r->xcheck[k]);
    }
    printf(" %9.2e  %s\n", r->xcheck_max, r->xcheck_max <= XCHECK_TOL ? "ok" : "MISMATCH");
  }
}

/* ------------------------------------------------------- memory, contacts */

static const char talus_mem_doc[] =
    "live heap bytes of the blocks Talus allocated (malloc, calloc and realloc wrapped at link "
    "time, -Wl,--wrap, with the requested size of every live block kept; bench/bench_mem.c): "
    "model = what tl_model_load_urdf leaves allocated (the compiled tl_model, its names, "
    "frames, geoms, convex hulls and URDF extras); world = what tl_world_create + "
    "tl_world_add_system allocate (the world with its solver and collision buffers, the "
    "system's own copy of the model's mutable parameters, its state, caches and "
    "factorisation)";

static double bytes_ratio(size_t peer, size_t talus) {
  return peer > 0 && talus > 0 ? (double)peer / (double)talus : NAN;
}

static void print_bytes(size_t v, int w) {
  if (v == 0)
    printf(" %*s", w, "n/a");
  else
    printf(" %*zu", w, v);
}

static void print_ratio(double v, int w) {
  if (isnan(v))
    printf(" %*s", w, "n/a");
  else
    printf(" %*.2f", w, v);
}

static void print_memory(const robot_result *res, int n, int wl, const char *no_peer) {
  printf("\n# memory: bytes allocated for one robot, measured at load / creation (before any "
         "query or step)\n# talus:  %s\n", talus_mem_doc);
  if (no_peer) {
    printf("# peer: none measured (%s)\n", no_peer);
  } else {
    printf("# mujoco: %s\n", peer_mem_doc());
    printf("# the MuJoCo model here is the one of the query columns: no collision geoms (the "
           "Talus model keeps its geoms and hulls; the contact step below compares models that "
           "both have them); ratio = MuJoCo bytes / Talus bytes: > 1 means Talus uses less\n");
  }
  if (!bench_mem_ok())
    printf("# WARNING: the allocation table overflowed: the Talus figures are unreliable\n");
  printf("%-*s %12s", wl, "robot", "talus_model");
  if (!no_peer) printf(" %12s %6s", "mujoco_model", "ratio");
  printf(" %12s", "talus_world");
  if (!no_peer) printf(" %12s %6s  %s", "mujoco_data", "ratio", "mujoco sizes");
  putchar('\n');
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    printf("%-*s", wl, r->e->label);
    if (r->error[0] && r->model_bytes == 0) {
      printf(" not measured: %s\n", r->error);
      continue;
    }
    print_bytes(r->model_bytes, 12);
    if (!no_peer) {
      print_bytes(r->peer_model_bytes, 12);
      print_ratio(bytes_ratio(r->peer_model_bytes, r->model_bytes), 6);
    }
    print_bytes(r->world_bytes, 12);
    if (!no_peer) {
      print_bytes(r->peer_data_bytes, 12);
      print_ratio(bytes_ratio(r->peer_data_bytes, r->world_bytes), 6);
      printf("  %s", r->peer_mem_detail[0] ? r->peer_mem_detail : "-");
    }
    putchar('\n');
  }
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    if (r->model_bytes_end != r->model_bytes && !r->error[0])
      printf("#   %s: tl_model_free returned %zu bytes, %zu were allocated by the load\n",
             r->e->label, r->model_bytes_end, r->model_bytes);
    if (r->world_bytes_end != r->world_bytes && !r->error[0])
      printf("#   %s: the world held %zu bytes after the timed queries, %zu after creation\n",
             r->e->label, r->world_bytes_end, r->world_bytes);
  }
}

/* |z_mujoco - z_talus| within CONTACT_Z_TOL, both finite and above half the start height */
static const char *contact_verdict(const contact_result *c, const contact_peer_result *p) {
  if (!isfinite(c->z) || !isfinite(p->z)) return "no comparison";
  if (c->z < 0.5 * c->z0 || p->z < 0.5 * c->z0) return "FELL";
  return fabs(p->z - c->z) <= CONTACT_Z_TOL ? "ok" : "DIFFERENT STANCE";
}

static const char *const contact_engine[CONTACT_NPEER] = {"mujoco", "mj-ell", "ode"};
static const char *const contact_engine_key[CONTACT_NPEER] = {"mujoco", "mujoco_elliptic", "ode"};

static void contact_row(int wl, const char *label, const char *kp, const char *kd,
                        const char *engine, double us, int ncon, int nact, double z, size_t mb,
                        size_t wb) {
  printf("%-*s %6s %5s %-6s", wl, label, kp, kd, engine);
  if (isnan(us))
    printf(" %9s", "n/a");
  else
    printf(" %9.3f", us);
  printf(" %8d %6d", ncon, nact);
  if (isnan(z))
    printf(" %9s", "n/a");
  else
    printf(" %9.5f", z);
  print_bytes(mb, 12);
  print_bytes(wb, 12);
  putchar('\n');
}

static void contact_ratio_row(int wl, double step, double model, double world, double dz_mm,
                              const char *verdict) {
  printf("%-*s %6s %5s %-6s", wl, "", "", "", "ratio");
  print_ratio(step, 9);
  printf(" %8s %6s %9s", "", "", "");
  print_ratio(model, 12);
  print_ratio(world, 12);
  if (isnan(dz_mm))
    printf("  base_z: no comparison\n");
  else
    printf("  base_z differs by %.2f mm: %s\n", dz_mm, verdict);
}

static void print_contact(const robot_result *res, int n, int wl, const char *no_peer) {
  printf("\n# contact step: microseconds per step of a floating-base legged robot standing on "
         "the ground plane z = 0 (friction %g), started at rest at its reference configuration "
         "(joints whose limits leave out 0 moved %g inside them) with its lowest geom %g m "
         "above the ground, every joint held there by the implicit PD (kp, kd; velocity target "
         "0); %d steps to settle, then the steps are timed (median of batch means, the "
         "engines' batches interleaved) while the robot goes on standing (never reset)\n",
         CONTACT_GROUND_MU, CONTACT_LIMIT_MARGIN, CONTACT_DROP, CONTACT_SETTLE_STEPS);
  printf("# talus:  tl_world_step, dt 1 ms, tl_world_add_ground, the world's default solver: "
         "every contact solved on the exact Coulomb cone (Gauss-Seidel over contacts with "
         "NNCG acceleration, warm-started), rigid contacts, speculative within the 5 mm "
         "margin, no self-collision; the implicit PD as in the step column\n");
  if (no_peer) {
    printf("# peer: none measured (%s)\n", no_peer);
  } else {
    printf("# mujoco: %s; PD as in its step column (kp by position actuators, kd as joint "
           "damping)\n", peer_contact_doc(1));
    printf("# mj-ell: %s. With MuJoCo's defaults a standing quadruped's feet creep outwards (soft "
           "friction) and its base sinks by a few mm per second (ANYmal C: 3 to 5), so its "
           "base_z drifts away from Talus's; mj-ell hardly creeps\n", peer_contact_doc(2));
    printf("# ode: %s\n", bench_contact_ode_doc());
    printf("# the contact models differ (Talus: rigid, exact cone; MuJoCo: soft, pyramidal by "
           "default; ODE: maximal coordinates, contacts at penetration, friction pyramid); which "
           "is more exact is not the point: ratio = peer us / Talus us for the same robot "
           "standing on the same ground, > 1 means Talus is faster; ODE's model and world bytes "
           "are inside libode and not measured\n");
  }
  printf("# contacts: after the last step, all (Talus: speculative ones within the margin "
         "included; MuJoCo: those it passes to its solver); active: with a positive normal "
         "impulse / force. base_z: height of the base origin after the timed steps, an engine "
         "that made fewer while timed catching up untimed, so that all have simulated the same "
         "time (m); the engines within %g m of each other: the same stance (ok)\n# model / "
         "world bytes: "
         "as in the memory table, here with the collision geoms in both engines and the "
         "ground (Talus world: + tl_world_add_ground; MuJoCo: its model and mjData)\n",
         CONTACT_Z_TOL);
  printf("# left out: %s\n", contact_left_out);
  printf("%-*s %6s %5s %-6s %9s %8s %6s %9s %12s %12s\n", wl, "robot", "kp", "kd", "engine",
         "step_us", "contacts", "active", "base_z", "model_bytes", "world_bytes");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    if (!r->has_contact) continue;
    const contact_result *c = &r->contact;
    char kp[16], kd[16];
    snprintf(kp, sizeof kp, "%g", c->spec->kp);
    snprintf(kd, sizeof kd, "%g", c->spec->kd);
    if (c->error[0]) {
      printf("%-*s %6s %5s   talus: %s\n", wl, r->e->label, kp, kd, c->error);
      continue;
    }
    contact_row(wl, r->e->label, kp, kd, "talus", c->us, c->ncontact, c->nactive, c->z,
                c->model_bytes, c->world_bytes);
    for (int k = 0; k < CONTACT_NPEER; ++k) {
      const contact_peer_result *p = &c->peer[k];
      if (!p->attempted) continue;
      if (!p->built) {
        printf("%-*s %6s %5s %-6s no figures: %s\n", wl, "", "", "", contact_engine[k], p->error);
        continue;
      }
      contact_row(wl, "", "", "", contact_engine[k], p->us, p->ncontact, p->nactive, p->z,
                  p->model_bytes, p->data_bytes);
      contact_ratio_row(wl, ratio(p->us, c->us), bytes_ratio(p->model_bytes, c->model_bytes),
                        bytes_ratio(p->data_bytes, c->world_bytes), 1e3 * fabs(p->z - c->z),
                        contact_verdict(c, p));
    }
    printf("#   %s: %s; start base height %.5f m%s; talus: %d of %d active contacts on feet; "
           "%ld steps simulated (talus)",
           r->e->label, c->spec->why, c->z0,
           c->nclamped ? ", joints moved inside their limits" : "", c->nfoot, c->nactive,
           c->steps);
    for (int k = 0; k < CONTACT_NPEER; ++k)
      if (c->peer[k].built && c->peer[k].steps != c->steps)
        printf(", %ld (%s)", c->peer[k].steps, contact_engine[k]);
    putchar('\n');
    if (c->failed[0]) printf("#   %s: talus step failed: %s\n", r->e->label, c->failed);
    for (int k = 0; k < CONTACT_NPEER; ++k) {
      const contact_peer_result *p = &c->peer[k];
      if (p->failed[0])
        printf("#   %s: %s step failed: %s\n", r->e->label, contact_engine[k], p->failed);
      if (p->note[0]) printf("#   %s: %s model: %s\n", r->e->label, contact_engine[k], p->note);
      if (p->built && k != CONTACT_ODE && !(p->xcheck_max <= XCHECK_TOL))
        printf("#   %s: %s: CROSS-CHECK MISMATCH of the dynamics at the start state (%.3g)\n",
               r->e->label, contact_engine[k], p->xcheck_max);
    }
    if (c->world_bytes_end != c->world_bytes)
      printf("#   %s: the Talus world held %zu bytes after stepping, %zu after creation\n",
             r->e->label, c->world_bytes_end, c->world_bytes);
  }
}

static void scene_row(const char *label, const char *engine, double us, int ncon, int nact,
                      double drift) {
  printf("%-10s %-6s", label, engine);
  if (isnan(us))
    printf(" %10s", "n/a");
  else
    printf(" %10.1f", us);
  printf(" %8d %6d", ncon, nact);
  if (isnan(drift))
    printf(" %9s", "n/a");
  else
    printf(" %9.2e", drift);
}

static void print_scenes(const scene_result *sc, int nsc, const char *no_peer) {
  if (nsc == 0) return;
  printf("\n# contact step, many-contact scenes: microseconds per step of free boxes on the ground "
         "plane (friction %g on every pair, dt 1 ms): Talus settles the scene for its settling "
         "steps; the peer starts from Talus's settled poses (the same pile, at rest) and steps %d "
         "steps on its own before being timed (its soft contacts take the load); then both are "
         "timed as above (batches interleaved, never reset)\n",
         CONTACT_GROUND_MU, SCENE_PEER_SETTLE);
  for (int i = 0; i < nsc; ++i)
    printf("# %s: %s; %d settling steps\n", sc[i].name, sc[i].doc ? sc[i].doc : "", sc[i].settle_steps);
  printf("# talus: tl_world_step with the world's defaults (the exact-cone solver, 5 mm speculative "
         "margin); mujoco / mj-ell: the same boxes (mass, MuJoCo's box inertia) and static walls "
         "as MuJoCo geoms, condim 3, its defaults / elliptic cone with impratio 100\n"
         "# contacts, active: after the last step (as above); drift: largest distance a box "
         "moved while timed (m), a pile at rest moves little; talus: sweeps, converged and "
         "Signorini residual of the last solve\n");
  printf("%-10s %-6s %10s %8s %6s %9s\n", "scene", "engine", "step_us", "contacts", "active", "drift_m");
  for (int i = 0; i < nsc; ++i) {
    const scene_result *r = &sc[i];
    if (r->error[0]) {
      printf("%-10s talus: %s\n", r->name, r->error);
      continue;
    }
    scene_row(r->name, "talus", r->us, r->ncontact, r->nactive, r->drift);
    printf("  last solve: %d sweeps, converged %d, Signorini %.1e\n", r->sweeps, r->converged,
           r->signorini);
    for (int k = 0; k < CONTACT_NPEER && !no_peer; ++k) {
      const scene_peer_result *p = &r->peer[k];
      if (!p->built) {
        printf("%-10s %-6s no figures: %s\n", "", contact_engine[k], p->error);
        continue;
      }
      scene_row("", contact_engine[k], p->us, p->ncontact, p->nactive, p->drift);
      putchar('\n');
      printf("%-10s %-6s", "", "ratio");
      print_ratio(ratio(p->us, r->us), 10);
      putchar('\n');
      if (p->failed[0]) printf("#   %s: %s step failed: %s\n", r->name, contact_engine[k], p->failed);
    }
    if (r->failed[0]) printf("#   %s: talus step failed: %s\n", r->name, r->failed);
  }
}

static void json_string(const char *s);
static void json_number(double v);

/* A byte count (0: not measured -> null). */
static void json_bytes(size_t v) {
  if (v == 0)
    fputs("null", stdout);
  else
    printf("%zu", v);
}

static void json_memory(const robot_result *r, const char *no_peer) {
  fputs(", \"memory\": {\"model_bytes\": ", stdout);
  json_bytes(r->model_bytes);
  fputs(", \"world_bytes\": ", stdout);
  json_bytes(r->world_bytes);
  fputs(", \"model_bytes_freed\": ", stdout);
  json_bytes(r->model_bytes_end);
  fputs(", \"world_bytes_freed\": ", stdout);
  json_bytes(r->world_bytes_end);
  if (!no_peer) {
    fputs(", \"peer_model_bytes\": ", stdout);
    json_bytes(r->peer_model_bytes);
    fputs(", \"peer_data_bytes\": ", stdout);
    json_bytes(r->peer_data_bytes);
    fputs(", \"model_ratio\": ", stdout);
    json_number(bytes_ratio(r->peer_model_bytes, r->model_bytes));
    fputs(", \"data_ratio\": ", stdout);
    json_number(bytes_ratio(r->peer_data_bytes, r->world_bytes));
    fputs(", \"peer_detail\": ", stdout);
    json_string(r->peer_mem_detail);
  }
  printf(", \"tracking_ok\": %s}", bench_mem_ok() ? "true" : "false");
}

static void json_contact(const contact_result *c, const char *no_peer) {
  printf(", \"contact_step\": {\"kp\": %g, \"kd\": %g, \"gains\": ", c->spec->kp, c->spec->kd);
  json_string(c->spec->why);
  if (c->error[0]) {
    fputs(", \"error\": ", stdout);
    json_string(c->error);
    putchar('}');
    return;
  }
  fputs(", \"us\": ", stdout);
  json_number(c->us);
  printf(", \"contacts\": %d, \"active\": %d, \"active_on_feet\": %d, \"base_z\": ",
         c->ncontact, c->nactive, c->nfoot);
  json_number(c->z);
  fputs(", \"start_z\": ", stdout);
  json_number(c->z0);
  printf(", \"joints_moved_into_limits\": %d, \"steps\": %ld, \"model_bytes\": ", c->nclamped,
         c->steps);
  json_bytes(c->model_bytes);
  fputs(", \"world_bytes\": ", stdout);
  json_bytes(c->world_bytes);
  fputs(", \"world_bytes_freed\": ", stdout);
  json_bytes(c->world_bytes_end);
  if (c->failed[0]) {
    fputs(", \"error_step\": ", stdout);
    json_string(c->failed);
  }
  if (!no_peer) {
    fputs(", \"peers\": {", stdout);
    for (int k = 0, first = 1; k < CONTACT_NPEER; ++k) {
      const contact_peer_result *p = &c->peer[k];
      if (!p->attempted) continue;
      printf("%s\"%s\": {\"built\": %s", first ? "" : ", ", contact_engine_key[k],
             p->built ? "true" : "false");
      first = 0;
      if (p->built) {
        fputs(", \"us\": ", stdout);
        json_number(p->us);
        fputs(", \"ratio\": ", stdout);
        json_number(ratio(p->us, c->us));
        printf(", \"contacts\": %d, \"active\": %d, \"base_z\": ", p->ncontact, p->nactive);
        json_number(p->z);
        fputs(", \"base_z_difference_m\": ", stdout);
        json_number(fabs(p->z - c->z));
        printf(", \"stance_ok\": %s, \"steps\": %ld, \"model_bytes\": ",
               strcmp(contact_verdict(c, p), "ok") == 0 ? "true" : "false", p->steps);
        json_bytes(p->model_bytes);
        fputs(", \"data_bytes\": ", stdout);
        json_bytes(p->data_bytes);
        fputs(", \"model_ratio\": ", stdout);
        json_number(bytes_ratio(p->model_bytes, c->model_bytes));
        fputs(", \"data_ratio\": ", stdout);
        json_number(bytes_ratio(p->data_bytes, c->world_bytes));
        fputs(", \"crosscheck_max\": ", stdout);
        json_number(p->xcheck_max);
      }
      if (p->failed[0]) {
        fputs(", \"error_step\": ", stdout);
        json_string(p->failed);
      }
      if (p->error[0]) {
        fputs(", \"error\": ", stdout);
        json_string(p->error);
      }
      if (p->note[0]) {
        fputs(", \"note\": ", stdout);
        json_string(p->note);
      }
      putchar('}');
    }
    putchar('}');
  }
  putchar('}');
}

/* JSON string with the few escapes our texts can need. */
static void json_string(const char *s) {
  putchar('"');
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\')
      printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      printf("\\u%04x", (unsigned char)*s);
    else
      putchar(*s);
  }
  putchar('"');
}

static void json_number(double v) {
  if (isfinite(v))
    printf("%.6g", v);
  else
    fputs("null", stdout);
}

static void print_json(const robot_result *res, int n, int batches, double batch_ms,
                       int use_peer) {
  const char *no_peer = no_peer_reason(use_peer);
  printf("{\n  \"generator\": \"talus_bench (talus " TALUS_VERSION ")\",\n");
  printf("  \"units\": \"microseconds per call\",\n");
  printf("  \"statistic\": \"median over batches of the batch mean\",\n");
  double load;
  long ncpu;
  machine_load(&load, &ncpu);
  printf("  \"batches\": %d,\n  \"batch_ms\": %g,\n  \"seed\": %u,\n", batches, batch_ms,
         BENCH_SEED);
  printf("  \"cpus_online\": %ld,\n  \"load_average_1min\": ", ncpu);
  json_number(load);
  printf(",\n  \"peer\": ");
  if (no_peer) {
    char note[400];
    snprintf(note, sizeof note, "no peer measured: %s; Talus figures only, no ratios", no_peer);
    fputs("null,\n  \"peer_note\": ", stdout);
    json_string(note);
  } else {
    json_string(peer_label());
    printf(",\n  \"ratio\": ");
    json_string("<column>_ratio = <column>_peer_us / <column>_us (peer time / Talus time, same "
                "run, robot and state): > 1 means Talus is faster");
    printf(",\n  \"peer_model\": ");
    json_string(peer_model_doc());
    printf(",\n  \"crosscheck\": ");
    json_string("max |peer - talus| / max |talus| per quantity at the benchmark state, in the "
                "peer's coordinates; crosscheck_ok is false above the tolerance, and then the "
                "ratios are not comparable");
    printf(",\n  \"crosscheck_tolerance\": %g", XCHECK_TOL);
  }
  printf(",\n  \"columns\": {");
  for (int k = 0; k < NCOL; ++k) {
    printf("%s\n    ", k ? "," : "");
    json_string(col_key[k]);
    fputs(": ", stdout);
    json_string(col_doc[k]);
  }
  printf("\n  }");
  if (!no_peer) {
    printf(",\n  \"peer_columns\": {");
    for (int k = 0; k < NCOL; ++k) {
      printf("%s\n    ", k ? "," : "");
      json_string(col_key[k]);
      fputs(": ", stdout);
      json_string(peer_col_doc(k));
    }
    printf("\n  }");
  }
  printf(",\n  \"memory\": ");
  json_string("bytes allocated for one robot at load / creation; talus: <talus_doc>; peer: "
              "<peer_doc>; <x>_ratio = peer bytes / Talus bytes (> 1: Talus uses less)");
  printf(",\n  \"memory_talus_doc\": ");
  json_string(talus_mem_doc);
  if (!no_peer) {
    printf(",\n  \"memory_peer_doc\": ");
    json_string(peer_mem_doc());
  }
  printf(",\n  \"contact_step\": {\"dt\": 0.001, \"ground_friction\": %g, \"drop_m\": %g, "
         "\"settle_steps\": %d, \"base_height_tolerance_m\": %g, \"left_out\": ",
         CONTACT_GROUND_MU, CONTACT_DROP, CONTACT_SETTLE_STEPS, CONTACT_Z_TOL);
  json_string(contact_left_out);
  fputs(", \"talus\": ", stdout);
  json_string("tl_world_step with tl_world_add_ground and the world's default solver (exact "
              "Coulomb cone per contact, speculative contacts within a 5 mm margin), implicit PD "
              "(kp, kd) holding the reference configuration; timed after settle_steps steps while "
              "the robot goes on standing");
  if (!no_peer) {
    printf(", \"peers\": {\"%s\": ", contact_engine_key[0]);
    json_string(peer_contact_doc(1));
    printf(", \"%s\": ", contact_engine_key[1]);
    json_string(peer_contact_doc(2));
    printf(", \"%s\": ", contact_engine_key[CONTACT_ODE]);
    json_string(bench_contact_ode_doc());
    putchar('}');
  }
  fputs(", \"keys\": ", stdout);
  json_string("us: microseconds per step (Talus; peers.<name>.us: the peer in those "
              "settings); ratio = peer us / Talus us; contacts, active: contacts after the last "
              "step, all and with a positive normal impulse; base_z: base height after the "
              "timed steps (m); stance_ok: Talus and that peer within base_height_tolerance_m "
              "and above half the start height");
  printf("}");
  printf(",\n  \"robots\": [");
  for (int i = 0; i < n; ++i) {
    const robot_result *r = &res[i];
    printf("%s\n    {\"robot\": ", i ? "," : "");
    json_string(r->e->label);
    fputs(", \"urdf\": ", stdout);
    json_string(r->e->path);
    printf(", \"base\": \"%s\"", r->e->base == TL_BASE_FIXED ? "fixed" : "floating");
    if (r->error[0]) {
      fputs(", \"error\": ", stdout);
      json_string(r->error);
      putchar('}');
      continue;
    }
    printf(", \"nq\": %d, \"nv\": %d, \"nbody\": %d, \"nframe\": %d, \"jacobian_frame\": ", r->nq,
           r->nv, r->nbody, r->nframe);
    json_string(r->frame);
    printf(", \"jacobian_frame_dofs\": %d", r->frame_dofs);
    for (int k = 0; k < NCOL; ++k) {
      printf(", \"%s_us\": ", col_key[k]);
      json_number(r->us[k]);
    }
    for (int k = 0; k < NCOL; ++k) {
      if (!r->failed[k][0]) continue;
      printf(", \"%s_error\": ", col_key[k]);
      json_string(r->failed[k]);
    }
    if (!no_peer) {
      for (int k = 0; k < NCOL; ++k) {
        printf(", \"%s_peer_us\": ", col_key[k]);
        json_number(r->peer_us[k]);
      }
      for (int k = 0; k < NCOL; ++k) {
        printf(", \"%s_ratio\": ", col_key[k]);
        json_number(ratio(r->peer_us[k], r->us[k]));
      }
      for (int k = 0; k < NCOL; ++k) {
        if (!r->peer_failed[k][0]) continue;
        printf(", \"%s_peer_error\": ", col_key[k]);
        json_string(r->peer_failed[k]);
      }
      if (r->peer_error[0]) {
        fputs(", \"peer_error\": ", stdout);
        json_string(r->peer_error);
      }
      if (r->peer_note[0]) {
        fputs(", \"peer_note\": ", stdout);
        json_string(r->peer_note);
      }
      if (r->peer) {
        fputs(", \"crosscheck\": {", stdout);
        for (int k = 0; k < NCHECK; ++k) {
          printf("%s\"%s\": ", k ? ", " : "", xcheck_key[k]);
          json_number(r->xcheck[k]);
        }
        fputs(", \"max\": ", stdout);
        json_number(r->xcheck_max);
        printf("}, \"crosscheck_ok\": %s", r->xcheck_max <= XCHECK_TOL ? "true" : "false");
      }
    }
    json_memory(r, no_peer);
    if (r->has_contact) json_contact(&r->contact, no_peer);
    putchar('}');
  }
  printf("\n  ],\n  \"scenes\": [");
  for (int i = 0; i < nscene_res; ++i) {
    const scene_result *r = &scene_res[i];
    printf("%s\n    {\"scene\": ", i ? "," : "");
    json_string(r->name);
    if (r->error[0]) {
      fputs(", \"error\": ", stdout);
      json_string(r->error);
      putchar('}');
      continue;
    }
    fputs(", \"doc\": ", stdout);
    json_string(r->doc);
    printf(", \"boxes\": %d, \"settle_steps\": %d, \"us\": ", r->nbox, r->settle_steps);
    json_number(r->us);
    printf(", \"contacts\": %d, \"active\": %d, \"drift_m\": ", r->ncontact, r->nactive);
    json_number(r->drift);
    printf(", \"sweeps\": %d, \"converged\": %s, \"signorini\": ", r->sweeps,
           r->converged ? "true" : "false");
    json_number(r->signorini);
    if (r->failed[0]) {
      fputs(", \"error_step\": ", stdout);
      json_string(r->failed);
    }
    if (!no_peer) {
      fputs(", \"peers\": {", stdout);
      for (int k = 0; k < CONTACT_NPEER; ++k) {
        const scene_peer_result *p = &r->peer[k];
        printf("%s\"%s\": {\"built\": %s", k ? ", " : "", contact_engine_key[k],
               p->built ? "true" : "false");
        if (p->built) {
          fputs(", \"us\": ", stdout);
          json_number(p->us);
          fputs(", \"ratio\": ", stdout);
          json_number(ratio(p->us, r->us));
          printf(", \"contacts\": %d, \"active\": %d, \"drift_m\": ", p->ncontact, p->nactive);
          json_number(p->drift);
        }
        if (p->error[0]) {
          fputs(", \"error\": ", stdout);
          json_string(p->error);
        }
        putchar('}');
      }
      putchar('}');
    }
    putchar('}');
  }
  printf("\n  ]\n}\n");
}

/* --------------------------------------------------------------- main */

static const char usage[] =
    "Usage: talus_bench [SHARED_ROBOTS_DIR] [--reps N] [--batch-ms X] [--no-peer] [--only TEXT] [--no-scenes] [--json]\n"
    "\n"
    "Time the main queries of the Talus public API on every URDF under\n"
    "SHARED_ROBOTS_DIR (default " TALUS_SHARED_ROBOTS_DIR ")\n"
    "and on robots/talus_quadruped; print microseconds per call. Then the memory\n"
    "of each robot's model and world (bytes), and a step with contacts: the\n"
    "floating-base legged robots standing on a ground plane with their PD.\n"
    "When built with MuJoCo, measure its equivalents in the same run, on the same\n"
    "robots at the same state (after checking that both engines agree there) and\n"
    "print the ratios MuJoCo / Talus (> 1: Talus faster, or smaller).\n"
    "Also run as `talus bench [ARGS...]`.\n"
    "`talus_bench --batch [--help]` times batched worlds over threads instead\n"
    "(bench/bench_batch.c).\n"
    "\n"
    "  --reps N       batches per query (default 15); the median batch mean is reported\n"
    "  --batch-ms X   target duration of a batch in ms (default 2)\n"
    "  --no-peer      time Talus only\n"
    "  --only TEXT    only the robots and scenes whose label contains TEXT\n"
    "  --no-scenes    leave out the many-contact scenes (pile100, stack4x4)\n"
    "  --json         print JSON instead of the table\n";

int bench_batch_main(int argc, char **argv, const char *shared_dir); /* bench_batch.c */

int main(int argc, char **argv) {
  const char *dir = TALUS_SHARED_ROBOTS_DIR;
  if (argc > 1 && strcmp(argv[1], "--batch") == 0) return bench_batch_main(argc, argv, dir);
  int batches = 15, json = 0, use_peer = HAVE_PEER;
  const char *only = NULL;
  int scenes = 1;
  double batch_ms = 2.0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--no-peer") == 0) {
      use_peer = 0;
    } else if (strcmp(a, "--no-scenes") == 0) {
      scenes = 0;
    } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
      char *end = NULL;
      long v = strtol(argv[++i], &end, 10);
      if (!end || *end || v < 1 || v > 256) {
        fprintf(stderr, "talus_bench: --reps wants an integer in [1, 256], got '%s'\n", argv[i]);
        return 2;
      }
      batches = (int)v;
    } else if (strcmp(a, "--batch-ms") == 0 && i + 1 < argc) {
      char *end = NULL;
      double v = strtod(argv[++i], &end);
      if (!end || *end || !(v > 0) || !(v <= 10000)) {
        fprintf(stderr, "talus_bench: --batch-ms wants a number in (0, 10000], got '%s'\n",
                argv[i]);
        return 2;
      }
      batch_ms = v;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "talus_bench: unknown option '%s'\n%s", a, usage);
      return 2;
    } else {
      dir = a;
    }
  }

  static robot_list list;
  if (!is_dir(dir))
    fprintf(stderr, "talus_bench: %s is not a folder: only the project's own robot is timed\n",
            dir);
  else
    find_urdfs(&list, dir, NULL);
  qsort(list.r, (size_t)list.n, sizeof(robot_entry), by_path);
  add_robot(&list, TALUS_ROBOTS_DIR "/talus_quadruped/talus_quadruped.urdf", "talus_quadruped");
  finish_list(&list);
  if (only) { /* keep the robots whose label contains `only` */
    int k = 0;
    for (int i = 0; i < list.n; ++i)
      if (strstr(list.r[i].label, only)) list.r[k++] = list.r[i];
    list.n = k;
  }

  static robot_result res[MAX_ROBOTS];
  for (int i = 0; i < list.n; ++i) {
    if (isatty(2)) fprintf(stderr, "\rtiming %d/%d %-60s", i + 1, list.n, list.r[i].label);
    bench_robot(&list.r[i], &res[i], batches, 1e-3 * batch_ms, use_peer);
    const contact_spec *spec = contact_spec_of(list.r[i].label);
    if (spec && list.r[i].base == TL_BASE_FLOATING) {
      if (isatty(2)) fprintf(stderr, "\rcontact step %d/%d %-54s", i + 1, list.n, list.r[i].label);
      res[i].has_contact = 1;
      bench_contact_robot(list.r[i].path, spec, &res[i].contact, batches, 1e-3 * batch_ms,
                          use_peer);
    }
  }
  for (const bench_scene_spec *sc = bench_scenes; sc->name; ++sc) {
    if (!scenes || (only && !strstr(sc->name, only))) continue;
    if (isatty(2)) fprintf(stderr, "\rcontact step, scene %-60s", sc->name);
    bench_contact_scene(sc->name, &scene_res[nscene_res++], batches, 1e-3 * batch_ms, use_peer);
  }
  if (isatty(2)) fprintf(stderr, "\r%80s\r", "");
  if (json)
    print_json(res, list.n, batches, batch_ms, use_peer);
  else
    print_table(res, list.n, batches, batch_ms, use_peer);
  return 0;
}
