/* Internal: the world and system structs of the native engine. The collision
 * geoms, contacts and constraint rows they hold are declared with the code
 * that builds them: contact/broadphase.h (geom list, candidate pairs),
 * contact/contact_gen.h (contacts), contact/constraint.h (row blocks and
 * their solve). */
#ifndef TALUS_WORLD_INTERNAL_H
#define TALUS_WORLD_INTERNAL_H

#include "contact/broadphase.h"
#include "contact/constraint.h"
#include "contact/contact.h"
#include "contact/contact_gen.h"
#include "contact/lcp.h"
#include "contact/narrowphase.h"
#include "dynamics/dynamics.h"
#include "talus/world.h"

struct tl_system {
  tl_model *m;          /* own copy of the model (mutable parameters) */
  tl_sysdata d;         /* state and caches */
  tl_world *world;
  int index;            /* position in the world */
  int kin_valid;        /* d's kinematics match q, u */
  int dyn_valid;        /* M and h match q, u and the world's gravity */
  int self_collision;   /* collide geoms of different bodies of this system */
  int in_solve;         /* a constraint block of the current solve touches this system */
  tl_integrator integrator;

  /* control: implicit PD + feedforward */
  double *kp, *kd;      /* [nv] */
  double *q_target;     /* [nq] */
  double *u_target;     /* [nv] */
  double *tau_ff;       /* [nv] */
  double *tau_applied;  /* [nv] actuator force of the last step: tau_ff + PD, N or N m */
  double *ext;          /* [nv] generalized force of external forces for the next step */

  /* step scratch */
  double *force, *diag, *u_prev, *q_prev; /* [nv], [nv], [nv], [nq] */
  double *u_free;       /* [nv] velocity before constraint impulses */
  double *rk;           /* RK4 scratch: q0 [nq], u0 [nv], 4 accelerations and 4 velocities [8 nv] */
  double *Jtmp;         /* [3*nv] scratch Jacobian */
  double *gen_change;   /* [nv] J^T dlambda of the current Gauss-Seidel sweep (N s, N m s) */
  double *z;            /* [nv] L^-T J^T lambda of the constraint impulses of the solve (tl_block) */
  double *pd_e, *spring_e; /* [nv] PD and spring errors of the step (src/native/step.c, joint_errors) */
  tl_hull *hulls;       /* [m->nhull] views of the model's hull pools */
  unsigned char *pd_row; /* [nv] 1: this step the PD of the DOF is a boxed row (it saturates) */
  double *lambda_joint;  /* [TL_JOINT_SLOTS nv] last impulses of joint rows (lower limit,
                            upper limit, friction, PD, velocity limit signed by its side) for
                            warm starting */
};

/* Warm-start slots per DOF of tl_system.lambda_joint. */
#define TL_JOINT_SLOTS 5

/* A geom of the world that is not part of a system (ground, terrain, obstacles). */
typedef struct tl_static_geom {
  tl_geom_type type;
  double size[3], pos[3], rot[9];
  char material[128];
  double friction;      /* Coulomb coefficient used without a material pair */
  unsigned group, mask;
  int heightmap;        /* index into the world's heightmaps, or -1 */
} tl_static_geom;

typedef struct tl_material_pair {
  char a[128], b[128];
  double mu, restitution, threshold;
  double erp, cfm;      /* NAN: the world's */
} tl_material_pair;

struct tl_world {
  tl_world_options opt; /* every setting (talus/world.h): tl_world_set_options and the
                           single setters write it, nothing else (src/world/world_options.c) */
  double time;
  int nsystem, cap_system;
  tl_system **systems;

  /* static geometry */
  int nstatic, cap_static;
  tl_static_geom *statics;
  int nheightmap, cap_heightmap;
  tl_heightmap *heightmaps; /* heights owned by the world */

  /* materials (the default material: opt) */
  int npair, cap_pair;
  tl_material_pair *pairs;
  int *pair_slot;       /* [pair_slots] open-addressing index of pairs by unordered name pair
                           (world.c, tl_world_find_pair): a pair's index, -1 empty */
  int pair_slots;       /* a power of two >= 2 npair, or 0 */

  /* collision: broadphase over every geom, contacts */
  int ngeomref, cap_geomref;
  tl_geom_ref *geomrefs;
  tl_shape *shapes;     /* [cap_geomref] each geomref's shape in its pose of this step (active ones) */
  unsigned char *geom_active; /* [cap_geomref] the geomref may collide this step: 1, and 2 once
                                 its shape and box are computed (broadphase.c) */
  unsigned char *geom_act0;   /* [cap_geomref] geom_active at the start of a step, from the filters
                                 alone; active static geoms are 2: their shapes and boxes are
                                 computed with it (broadphase.c, refresh_filters) */
  unsigned char *sys_active;  /* [nsystem] some geom of the system is active (geom_act0) */
  unsigned char *body_welded; /* [bodies] 1: the body cannot move (welded to a fixed base) */
  int filters_stale;    /* 1: geom_act0, sys_active and the static shapes must be recomputed before
                           the next collision step (tl_world_filters_changed) */
  /* broadphase (broadphase.c): units are the static geoms, then the systems */
  int *body_adr;        /* [nsystem + 1] first body of each system in bsphere / bbox */
  int *sys_geom;        /* [nsystem + 1] first geomref of each system */
  double *bsphere;      /* [bodies * 4] sphere around a body's geoms: centre (body frame), radius (-1: none) */
  double *bbox;         /* [bodies * 6] this step's box of each body (lo, hi) */
  int *body_geom_adr, *body_geoms; /* geomrefs of body k: body_geoms[body_geom_adr[k] .. [k + 1]) */
  double *gradius;      /* [ngeomref] radius of a sphere about each system geom's origin holding it */
  double *unit_box;     /* [units * 6] this step's box of each unit; lo.x = +inf: inactive */
  int *unit_order;      /* [units] sorted by lo.x, kept between steps (speed only) */
  tl_cand_pair *cpairs; /* [cap_contact] candidate geom pairs of the step, sorted */
  int npair_c;
  double up[3];         /* -gravity, unit */
  int ncontact, cap_contact, nprev; /* cap_contact: contacts (and candidate pairs) kept per step, 16 geoms + 64 */
  int alloc_contact;    /* contacts, prev and cpairs are allocated for this many (>= cap_contact; geometric growth) */
  /* what the geom list and the broadphase arrays cover (broadphase.c): statics and systems, valid 0/1;
     adding a system after them appends its geoms, anything else rebuilds */
  int geoms_nstatic, geoms_nsystem, geoms_valid;
  int cap_usys, cap_ubody, cap_ugeom, cap_uunit; /* capacities of the broadphase arrays (entries + 1) */
  int prev_cursor;      /* collision: where the last pair's contacts ended in prev */
  tl_wcontact *contacts, *prev; /* prev: last step's, for warm starting */
  int ignore_n, ignore_cap;
  int *ignore;          /* pairs (system, body, system, body) never collided */

  /* constraint solve (solver, parameters, ERP / CFM, margins: opt) */
  int nblock, cap_block; /* cap_block: blocks a solve may use (contacts + 6 per DOF; defer_contacts' limit) */
  int alloc_block;      /* blocks allocated (>= cap_block; geometric growth) */
  /* per-system terms of the reservation summed over systems [0, rc_nsystem) (contact/constraint_rows.c) */
  int rc_nsystem, rc_joint_blocks, rc_spmax, rc_nvmax;
  size_t rc_pool, rc_ipool, rc_eq;
  tl_block *blocks;
  int nblock_solve;     /* blocks the solve starts with; the rest are deferred contacts */
  size_t pool_used, pool_cap;
  double *pool;         /* J and Y of every block part (tl_block) */
  size_t ipool_used, ipool_cap;
  int *ipool;           /* supports of every block part */
  int neqgroup, cap_eqgroup;
  tl_eqgroup *eqgroups;
  size_t eq_used, eq_cap;
  double *eq_pool;      /* factors and right-hand sides of the equality groups */
  /* dense solve (contact/solver_direct.c): the Delassus matrix of up to dense_cap rows */
  int dense;            /* 1 while the current solve works on the dense matrix */
  int dense_cap, dense_n, dense_nf; /* capacity, rows, free rows of the last direct solve */
  double *dA;           /* [dense_cap^2] G + the normal / scalar compliance on its diagonal */
  double *db;           /* [dense_cap] row velocities at the start of the solve */
  double *dx;           /* [dense_cap] impulses (mirror of the blocks' lambda) */
  double *dM;           /* [dense_cap^2] factor of the free rows' matrix (direct solves) */
  double *dr, *dy;      /* [3 dense_cap] right-hand side, compliance, 1 / diag(L) of a direct solve; [3 dense_cap] solution and scratch */
  double *dW;           /* [dW_cap] D^-1 Y of each block part as dense rows (assembly) */
  size_t dW_cap;
  int *dfree;           /* [dense_cap] rows of a direct solve */
  unsigned char *dstat, *dstat_prev; /* [dense_cap] row status of the last direct solve */
  tl_lcp_work *lcp;     /* Dantzig scratch */
  int lcp_cap;
  double *lcp_A, *lcp_b, *lcp_lo, *lcp_hi, *lcp_mu, *lcp_x;
  int *lcp_findex, *lcp_row_block;
  tl_solver_stats stats;

  struct tl_engine_link *engine; /* NULL: the native engine; else the plugin serving this world
                                    (src/engine/engine_link.c) */
};

/* Bring d's kinematics / M and h up to date with the state (lazy caches). */
void tl_system_update_kinematics(tl_system *sys);
void tl_system_update_dynamics(tl_system *sys);
/* diag = dt (Kd + D) + dt^2 (Kp + K): what the implicit PD (DOFs without an
 * effort limit), joint damping D and joint stiffness K add to diag(M) (nv). */
void tl_system_implicit_diagonal(const tl_system *sys, double dt, double *diag);
/* 1 if DOF k's PD gains go into M_eff, 0 if this step the PD is a boxed
 * constraint row because it saturates at the effort limit (active set,
 * decided in tl_world_integrate2). */
static inline int tl_system_pd_implicit(const tl_system *sys, int k) { return !sys->pd_row[k]; }
tl_system *tl_system_create(tl_world *w, const tl_model *model, int index);
void tl_system_destroy(tl_system *sys);

/* Largest |q_i| a state may hold (m or rad): 1e9, far beyond any robot, far
 * below where sums of squares overflow. */
#define TL_Q_MAX 1e9

/* The one check of a configuration q (model m's nq coordinates), shared by
 * tl_system_set_state / set_pd_targets, snapshots and world files: every
 * coordinate finite and within +-TL_Q_MAX, each quaternion block (floating
 * base, spherical joint) non-zero with a finite norm. q: nq doubles, read
 * with memcpy (a snapshot's bytes need not be aligned); nothing allocated. `what` names the array
 * in the message ("q", "q_target"); `status` is returned (TL_ERR_ARGUMENT for
 * setters, TL_ERR_INVALID for snapshots). */
tl_status tl_system_check_q(const tl_model *m, const void *q, const char *what, tl_status status, tl_error *err);

/* TL_OK if every coordinate of a revolute, prismatic or universal joint in q
 * lies within its URDF position limits (1e-9 of the range for rounding);
 * else TL_ERR_INVALID naming q's index, the joint and its limits. Checked
 * where a file states an initial q (world files); the setters leave limits
 * to the simulation (a state beyond a limit is pushed back). */
tl_status tl_system_check_q_limits(const tl_model *m, const double *q, tl_error *err);

/* Bytes of the largest snapshot the world can write with its current
 * objects (a full contact buffer; snapshot.c). */
size_t tl_world_state_size_max(const tl_world *w);

/* Index into w->pairs of the material pair {a, b} (either order), -1 if
 * none: a hash lookup (world.c), O(1) expected. */
int tl_world_find_pair(const tl_world *w, const char *a, const char *b);

#endif
