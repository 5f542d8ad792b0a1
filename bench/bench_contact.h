/* talus_bench: a step with contacts (bench_contact.c). Each floating-base
 * legged robot of the corpus whose feet are identified (contact_spec_of)
 * stands on a ground plane with its PD, is left to settle, and then its
 * steps are timed in Talus and in the peer (MuJoCo) alike. */
#ifndef TALUS_BENCH_CONTACT_H
#define TALUS_BENCH_CONTACT_H

#include <stddef.h>

#include "bench_timing.h"

#define CONTACT_SETTLE_STEPS 1000 /* 1 s at dt 1 ms before timing */
#define CONTACT_GROUND_MU 0.8     /* ground plane friction (as `talus simulate`) */
#define CONTACT_DROP 0.01         /* lowest geom point this high above the ground at the start (m) */
#define CONTACT_Z_TOL 0.005       /* base heights of the two engines this close: same stance (m) */
#define CONTACT_LIMIT_MARGIN 0.1  /* start joints at least this far inside their limits (rad, m) */
#define CONTACT_NPEER 3           /* peers: MuJoCo with its defaults, MuJoCo against slip (bench_peer.h),
                                     ODE through Talus's engine interface (CONTACT_ODE) */
#define CONTACT_ODE 2             /* index of the ODE peer */

/* A robot of the contact step: its benchmark label, PD gains on every
 * non-base DOF (target: its reference configuration, at rest), the base
 * orientation (w, x, y, z) that stands it up, and how its feet are told
 * (link names containing `feet`, case-insensitive). */
typedef struct contact_spec {
  const char *label;
  double kp, kd;
  double quat[4];
  const char *feet;
  const char *why; /* where the gains come from */
} contact_spec;

/* The spec of a benchmark robot label, NULL when it is not in the contact step. */
const contact_spec *contact_spec_of(const char *label);
/* The robots of the corpus left out of the contact step, and why (one paragraph). */
extern const char contact_left_out[];

/* The peer in one of its settings. */
typedef struct contact_peer_result {
  int attempted;                /* 1: this peer was tried in this run */
  int built;                    /* 1: the peer was built and stepped */
  double us;                    /* microseconds per step (NAN: none) */
  char failed[TIMED_WHY];
  double z;                     /* base height after the timed steps (m) */
  long steps;                   /* steps simulated in all, settling included */
  int ncontact, nactive;        /* contacts after the last step: all, with a positive normal force */
  size_t model_bytes, data_bytes;
  char error[600], note[600];
  double xcheck_max;            /* its dynamics cross-checked against Talus at the start state */
} contact_peer_result;

/* Derivatives of the step (issue 24 section 4), for the robots of
 * step_deriv_robot: at the contact step's settled state (after its timing),
 * Talus's tl_world_step_derivatives in TL_DERIV_ANALYTIC mode (the mode a
 * user calls; with contacts it falls back to centred differences: `used`)
 * and in TL_DERIV_FD_CENTRED mode (eps 1e-6), and the peer's finite
 * differences of its step (MuJoCo's mjd_transitionFD, centred and forward,
 * eps 1e-6) on the peer of its default settings, batches interleaved. */
typedef struct step_deriv_result {
  int attempted;                /* 1: this robot is in the step_derivatives table */
  char error[600];              /* Talus could not be set up: no figures */
  int nv, ncontact;             /* the world's nv; contacts of the state differentiated */
  int used;                     /* tl_deriv_mode the analytic mode used (fell back: FD) */
  double us, fd_us;             /* Talus: TL_DERIV_ANALYTIC, TL_DERIV_FD_CENTRED (NAN: none) */
  char failed[2][TIMED_WHY];
  int peer_attempted, peer_built, peer_nu;
  double peer_us, peer_fwd_us;  /* mjd_transitionFD centred, forward */
  char peer_failed[2][TIMED_WHY];
  char peer_error[600];
} step_deriv_result;

/* 1 when the robot of this label is in the step_derivatives table: ANYmal C
 * and the DeepMimic humanoid (issue 24), and the project's talus_quadruped
 * (always present: the test suite's run). */
int step_deriv_robot(const char *label);

typedef struct contact_result {
  const contact_spec *spec;
  char error[600];              /* Talus could not be set up: no figures */
  double us;                    /* microseconds per step (NAN: none) */
  char failed[TIMED_WHY];
  int nclamped;                 /* joints moved inside their limits for the start */
  double z0;                    /* base height at the start (m) */
  double z;                     /* base height after the timed steps (m) */
  long steps;                   /* steps simulated in all, settling included */
  int ncontact, nactive;        /* Talus contacts after the last step: all (speculative ones
                                   within the margin included), with a positive normal impulse */
  int nfoot;                    /* of the active ones, on a foot link */
  size_t model_bytes, world_bytes, world_bytes_end; /* Talus: tl_model; world + ground + system,
                                                       after creation and at the end */
  contact_peer_result peer[CONTACT_NPEER]; /* settings 1 and 2 of bench_peer_state.contact */
  step_deriv_result deriv;
} contact_result;

/* Run the contact step of the robot of URDF `path` (spec: contact_spec_of
 * its label) into r. use_peer: also in the peer (when built in). */
void bench_contact_robot(const char *path, const contact_spec *spec, contact_result *r,
                         int batches, double batch_s, int use_peer);
/* What the ODE peer simulates (one paragraph; its engine's description and notes, from the
 * first ODE world built, or why there is none). */
const char *bench_contact_ode_doc(void);

/* A many-contact scene of bench_scene.h, timed like the robots: Talus settles
 * it; the peer starts from Talus's settled poses and steps SCENE_PEER_SETTLE
 * steps (its soft contacts take the load; the pile stays the same) before
 * both are timed. */
#define SCENE_PEER_SETTLE 200
typedef struct scene_peer_result {
  int built;
  double us;
  char failed[TIMED_WHY];
  int ncontact, nactive;
  double drift;                 /* largest distance a box moved while timed (m) */
  char error[600];
} scene_peer_result;

typedef struct scene_result {
  const char *name, *doc;
  int nbox, settle_steps;
  char error[600];
  double us;
  char failed[TIMED_WHY];
  int ncontact, nactive;
  double drift;
  int sweeps, converged;        /* the last solve */
  double signorini;
  scene_peer_result peer[CONTACT_NPEER];
} scene_result;

/* Time scene `name` (bench_scene.h) in Talus and, with use_peer, the peer. */
void bench_contact_scene(const char *name, scene_result *r, int batches, double batch_s, int use_peer);

/* The Talus world of the contact step of `spec` (URDF `path`), settled for
 * CONTACT_SETTLE_STEPS steps (talus_prof). Returns 0, or -1 and err. */
#include "talus/talus.h"
int bench_contact_world(const char *path, const contact_spec *spec, tl_world **out, tl_error *err);

#endif
