/* Internal: world and system structs. */
#ifndef TALUS_WORLD_INTERNAL_H
#define TALUS_WORLD_INTERNAL_H

#include "contact/contact.h"
#include "dynamics/dynamics.h"
#include "talus/world.h"

struct tl_system {
  tl_model *m;          /* own copy of the model (mutable parameters) */
  tl_sysdata d;         /* state and caches */
  tl_world *world;
  int index;            /* position in the world */
  int kin_valid;        /* d's kinematics match q, u */
  int dyn_valid;        /* M and h match q, u and the world's gravity */

  /* control: implicit PD + feedforward */
  double *kp, *kd;      /* [nv] */
  double *q_target;     /* [nq] */
  double *u_target;     /* [nv] */
  double *tau_ff;       /* [nv] */

  tl_integrator integrator;
  double *rk;           /* RK4 scratch: q0 [nq], u0 [nv], 4 accelerations and 4 velocities [8 nv] */

  /* step scratch [nv] */
  double *force, *diag, *u_prev, *q_prev;

  /* contacts, allocated for the most this system's geoms can produce */
  int ncontact, max_contact;
  tl_contact *contacts;
  double *J;            /* [3 max_contact x nv] contact Jacobian, rows t1 t2 n per contact */
  double *MinvJT;       /* [3 max_contact x nv] row r = M_eff^-1 J_r^T */
  double *G;            /* [3mc x 3mc] Delassus matrix */
  double *b, *v, *lambda, *mu; /* [3mc], [3mc], [3mc], [mc] */
  tl_solve_stats stats;
};

struct tl_world {
  double dt, time;
  double gravity[3];
  int has_ground;
  double ground_height, ground_mu;
  int nsystem, cap_system;
  tl_system **systems;
  double contact_margin; /* m: speculative contacts closer than this are solved */
  double erp;            /* fraction of penetration beyond `slop` removed per step */
  double slop;           /* m: penetration tolerated without correction */
  double max_recovery_speed; /* m/s: cap of the penetration-recovery velocity */
  int solver_max_iter;
  double solver_tol;     /* N s */
};

/* Bring d's kinematics / M and h up to date with the state (lazy caches). */
void tl_system_update_kinematics(tl_system *sys);
void tl_system_update_dynamics(tl_system *sys);
/* diag = dt (Kd + D) + dt^2 (Kp + K): what the implicit PD, joint damping D
 * and joint stiffness K add to the diagonal of M (nv). */
void tl_system_implicit_diagonal(const tl_system *sys, double dt, double *diag);
tl_system *tl_system_create(tl_world *w, const tl_model *model, int index);
void tl_system_destroy(tl_system *sys);

#endif
