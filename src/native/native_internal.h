/* Internal: the native engine's workspace and state (struct tl_native),
 * what the native step keeps between and within steps beyond the world's
 * description (src/world/world_internal.h): the geom list and broadphase
 * arrays, the contacts (this step's and the last, for warm starting), the
 * constraint blocks and their pools, the equality groups, the dense and
 * Dantzig solve arrays, the solver statistics and the capacities of them
 * all. It lies behind struct tl_world in the world's allocation; the code
 * of src/native and src/contact reaches it as tl_native_of(w) (below),
 * loaded once per function: tl_native *nat = tl_native_of(w); nat->X.
 *
 * Every array below (but the loop projection's scratch, cproj, which
 * world/constraint_project.c allocates itself when constraints are added),
 * and every system's step scratch (TL_SYSTEM_SCRATCH,
 * world/world_internal.h), lies in one block, the arena (ws_block), listed
 * once in native_workspace.h and laid out from the capacities by
 * native_workspace.c when the native engine takes the world (attach), its
 * objects change (objects_changed) or the Dantzig solver is selected
 * (set_solver); never while stepping. Detach frees the block and zeroes the
 * struct. What the struct holds between steps as state (the last contacts
 * prev / contacts and the loop rows' loop_lambda, for warm starting) is saved
 * by native_snapshot.c; the rest is workspace. The types are declared with the code that builds them:
 * contact/broadphase.h (geom list, candidate pairs), contact/contact_gen.h
 * (contacts), contact/constraint.h (row blocks and their solve),
 * contact/lcp.h (Dantzig scratch). */
#ifndef TALUS_NATIVE_INTERNAL_H
#define TALUS_NATIVE_INTERNAL_H

#include <stdint.h>

#include "contact/broadphase.h"
#include "contact/constraint.h"
#include "contact/contact.h"
#include "contact/contact_gen.h"
#include "contact/lcp.h"
#include "contact/narrowphase.h"
#include "native/native.h"
#include "native/native_workspace.h"
#include "world/constraint_project.h"
#include "world/world_internal.h"

typedef struct tl_native tl_native;

struct tl_native {
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
  int alloc_contact;    /* contacts, prev and cpairs are laid out for this many (>= cap_contact; geometric growth) */
  /* what the geom list and the broadphase arrays cover (broadphase.c): statics and systems, valid 0/1;
     adding a system after them appends its geoms, anything else rebuilds */
  int geoms_nstatic, geoms_nsystem, geoms_valid;
  int cap_usys, cap_ubody, cap_ugeom, cap_uunit; /* capacities of the broadphase arrays (entries + 1) */
  int prev_cursor;      /* collision: where the last pair's contacts ended in prev */
  tl_wcontact *contacts, *prev; /* prev: last step's, for warm starting */

  /* constraint solve */
  int nblock, cap_block; /* cap_block: blocks a solve may use (contacts + 6 per DOF; defer_contacts' limit) */
  int alloc_block;      /* blocks laid out (>= cap_block; geometric growth) */
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
  unsigned char *lcp_mem; /* [tl_lcp_work_bytes(lcp_cap)] where lcp lies */
  tl_solver_stats stats;
  /* loop constraints (contact/constraint_loop.c): this step's rows, warm starts, projection scratch */
  int nloop_row, cap_loop_row;
  tl_loop_row *loop_rows; /* [cap_loop_row] */
  int cap_loop;         /* constraints loop_lambda holds */
  double *loop_lambda;  /* [TL_CGEOM_ROWS cap_loop] last impulses of each constraint's row slots */
  tl_cproj cproj;       /* the post-step projection's scratch (its own allocations, constraint_project.c) */

  /* every system's step scratch (TL_SYSTEM_SCRATCH), system after system (native_workspace.c) */
  unsigned char *sys_scratch; /* [sys_cap] */
  size_t sys_cap;       /* bytes reserved (geometric growth) */
  size_t sys_used;      /* bytes of the systems [0, sys_placed) */
  int sys_placed;       /* systems whose scratch is placed (their pointers set, zeroed once) */
  /* the arena: one block holding every array above but cproj's (native_workspace.h) */
  void *ws_block;       /* as allocated (calloc); the arrays start at the next 64-byte boundary */
  size_t ws_bytes;      /* bytes of the layout */
  size_t ws_len[TL_NWS_COUNT]; /* elements of each array in the layout */
};

/* Lay the arena out for the capacities in tl_native_of(w) (set by the sizing
 * functions: tl_world_size_geoms, tl_world_size_constraints,
 * tl_native_size_systems, the Dantzig rows): when a capacity changed, one new
 * block (calloc) into which each array's first min(old, new) elements are
 * copied, the old block freed; then every system's scratch pointers set and
 * the scratch of systems placed for the first time zeroed. Never called
 * while stepping. -1: out of memory, the old block and pointers kept (the
 * caller restores the capacities). native_workspace.c. */
int tl_native_workspace_fit(tl_world *w);
/* Free the arena, set the systems' scratch pointers to NULL. */
void tl_native_workspace_free(tl_world *w);
/* sys_cap for every system's scratch (geometric growth). */
void tl_native_size_systems(tl_world *w);

/* Where the workspace lies behind struct tl_world in the world's block
 * (tl_native_world_size): sizeof(tl_world) rounded up to tl_native's
 * alignment. */
#define TL_NATIVE_OFFSET \
  ((sizeof(tl_world) + _Alignof(tl_native) - 1) / _Alignof(tl_native) * _Alignof(tl_native))

/* The native workspace of world w: w's address plus a constant, so the step's
 * hot loops load no pointer to reach it (with a pointer field, w->native->X,
 * callgrind counted 0.2 % more instructions per step: a second base register
 * live beside w). Valid for every world (tl_world_create allocates the block);
 * its arrays (the arena) exist while the native engine serves the world. */
static inline tl_native *tl_native_of(const tl_world *w) {
  return (tl_native *)(void *)((char *)(uintptr_t)w + TL_NATIVE_OFFSET);
}

/* The snapshot's engine section of the native engine (native_snapshot.c):
 * the last step's contacts. */
extern const tl_world_snapshot_hooks tl_native_snapshot_hooks;

#endif
