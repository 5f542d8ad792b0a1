/* talus_bench: the interface between bench.c and a peer engine timed in the
 * same run (bench/peer_mujoco.c, compiled in when CMake finds MuJoCo and
 * TALUS_BENCH_MUJOCO is defined).
 *
 * A peer builds its own model of a compiled Talus model (through the public
 * API only), is put at the benchmark's random state (given in Talus's
 * coordinates, mapped by the peer to its own), checks its dynamics against
 * Talus's at that state, then offers one timed function per column. */
#ifndef TALUS_BENCH_PEER_H
#define TALUS_BENCH_PEER_H

#include <stddef.h>

#include "talus/talus.h"

/* The benchmark's columns (C_CRBA is derived: FK+CRBA+h minus FK). */
enum { C_FK, C_FK_CRBA, C_CRBA, C_RNEA, C_ABA, C_MINV, C_JAC, C_STEP, NCOL };

/* The quantities compared by the cross-check, each as
 * max |peer - talus| / max |talus| over the entries, in the peer's coordinates. */
enum {
  X_POSE,   /* world position and rotation matrix of every body */
  X_MJOINT, /* joint-space block of M (rows and columns of the non-base DOFs) */
  X_M,      /* the whole M */
  X_H,      /* nonlinear term h (peer: bias force) */
  X_RNEA,   /* M du + h for the benchmark's du */
  X_FD,     /* M^-1 (tau - h) for the benchmark's tau */
  X_JAC,    /* translational and rotational Jacobian of the timed frame */
  NCHECK
};

/* The benchmark state, in Talus's coordinates (q: nq, u, du, tau: nv), the
 * PD gains of the step column (on every non-base DOF, target: q at rest) and
 * the frame of the frame-Jacobian column. contact: 0 for the query columns
 * (no geoms, contacts disabled); 1 for the contact step (bench_contact.c):
 * the model's collision geoms, a ground plane z = 0 of friction ground_mu,
 * contacts on, the peer's default contact settings; 2: the same with the
 * peer's settings against slip (MuJoCo: elliptic cone, impratio 100);
 * floating-base models only. */
typedef struct bench_peer_state {
  const double *q, *u, *du, *tau;
  double kp, kd;
  int jac_frame;
  int contact;
  double ground_mu;
} bench_peer_state;

typedef struct bench_peer bench_peer;

/* Name and version of the peer, e.g. "MuJoCo 2.2.2". */
const char *bench_peer_name(void);
/* What the peer's timed function of column `col` calls (NULL: none). */
const char *bench_peer_column_doc(int col);
/* How the peer's model is built and what the step simulates (one paragraph). */
const char *bench_peer_model_doc(void);

/* Build the peer's model of `model` and put it at state `s`. Returns 0, or
 * -1 with the reason in why. A note on what had to be adapted (or "") is
 * left in note. */
int bench_peer_create(const tl_model *model, const bench_peer_state *s, bench_peer **out,
                      char *note, size_t note_len, char *why, size_t why_len);
void bench_peer_free(bench_peer *p);

/* Compare the peer with `sys` (a system of the same model, at the same
 * state s as the peer); rel[k] receives the relative difference of quantity
 * k (NAN when there is nothing to compare). Returns 0, or -1 and why. */
int bench_peer_crosscheck(bench_peer *p, tl_system *sys, double rel[NCHECK], char *why,
                          size_t len);

/* Timing hooks (ctx is the bench_peer): the timed call of column col (NULL
 * if the peer has none); reset puts the peer back at the state and warms its
 * caches; clear forgets failures; failed reports a failure since clear
 * (e.g. the step diverged) as 1 with the reason in why. */
typedef void (*bench_peer_fn)(void *ctx);
bench_peer_fn bench_peer_query(int col);
void bench_peer_reset(void *ctx);
void bench_peer_clear(void *ctx);
int bench_peer_failed(void *ctx, char *why, size_t len);

/* Memory of the peer's model and data in bytes, as the peer itself
 * accounts for them; detail: how (one line). */
void bench_peer_memory(const bench_peer *p, size_t *model_bytes, size_t *data_bytes, char *detail,
                       size_t len);
/* How the peer's memory figures are obtained (one paragraph). */
const char *bench_peer_memory_doc(void);

/* Contact step (a peer created with contact = 1): one step (ctx: the
 * bench_peer; failures through bench_peer_failed); the contacts of the
 * last step, all and those with a positive normal force; the base height
 * (z of the floating base's origin). */
void bench_peer_step(void *ctx);
void bench_peer_contacts(const bench_peer *p, int *n, int *active);
double bench_peer_base_height(const bench_peer *p);
/* What the peer's contact step simulates with settings `variant` (the
 * contact value of bench_peer_state: 1 or 2; solver, cone, contact model;
 * one paragraph, read from the first such model built). */
const char *bench_peer_contact_doc(int variant);

/* Derivatives of the step (a contact-step peer, bench_contact.c): prepare
 * allocates the matrices (0, or -1 and why); then the timed calls of the
 * peer's finite-difference transition Jacobians at its current state
 * (MuJoCo: mjd_transitionFD, centred or forward, eps BENCH_DERIV_EPS), which
 * leave the state as it was; nu: its control inputs (columns of its B). */
#define BENCH_DERIV_EPS 1e-6
int bench_peer_deriv_prepare(bench_peer *p, char *why, size_t len);
void bench_peer_deriv_centred(void *ctx);
void bench_peer_deriv_forward(void *ctx);
int bench_peer_deriv_nu(const bench_peer *p);
const char *bench_peer_deriv_doc(void);

/* Box scenes (bench_scene.h): the peer's model of scene s (variant 1: its
 * defaults, 2: its settings against slip, as for the contact step) at the
 * start poses; stepped with bench_peer_step, its contacts read with
 * bench_peer_contacts. Returns 0, or -1 and why. */
struct bench_scene;
int bench_peer_scene_create(const struct bench_scene *s, int variant, bench_peer **out, char *why,
                            size_t why_len);
/* Positions of the scene's free bodies (nq numbers), and the largest
 * distance a free body's origin moved from the positions qpos0. */
int bench_peer_scene_nq(const bench_peer *p);
void bench_peer_scene_qpos(const bench_peer *p, double *qpos);
double bench_peer_scene_drift(const bench_peer *p, const double *qpos0);

#endif
