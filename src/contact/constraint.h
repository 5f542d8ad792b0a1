/* Internal: the constraint rows of the native engine's step and their
 * solve: the row blocks (tl_block), equality groups (tl_eqgroup) and the
 * calls the step makes. Files: constraint_rows.c (rows, Delassus blocks,
 * capacity), solver_gs.c (Gauss-Seidel: per-contact cone, PGS, NNCG),
 * solver_direct.c (dense assembly, direct solve, Dantzig), impact.c
 * (restitution), constraint_solve.c (the solve of a step); their shared
 * helpers are in contact/solver_internal.h. */
#ifndef TALUS_CONSTRAINT_H
#define TALUS_CONSTRAINT_H

#include "talus/world.h"

/* Most rows the dense Dantzig solver takes (A is rows x rows doubles); larger
 * problems fall back to PGS for that step (stats.converged = 0). */
#define TL_DANTZIG_MAX_ROWS 1200

/* Kinds of constraint blocks. */
typedef enum tl_row_kind {
  TL_ROW_CONTACT = 0,   /* 3 rows t1 t2 n, Coulomb cone */
  TL_ROW_LIMIT = 1,     /* 1 row, lambda >= 0 */
  TL_ROW_BOX = 2,       /* 1 row, lo <= lambda <= hi (joint friction, effort-limited PD) */
  TL_ROW_EQUALITY = 3   /* 1 row, free (mimic, loop constraints) */
} tl_row_kind;

/* One constraint block (1 or 3 rows) on one or two systems (parts 0 and 1).
 * The Delassus operator is kept in the tree-sparse form of the systems'
 * factorizations M_eff = L^T D L (Featherstone 2008, sec. 6.5): a row J of
 * part p touches only the DOFs on the root paths of its nonzeros, an
 * ancestor-closed set S (the support: a foot's contact, the foot's leg and
 * the base), and so does Y = L^-T J^T. Then
 *   J M_eff^-1 J'^T = Y^T D^-1 Y'  (a sum over the common support),
 *   J u = J u_base + Y^T z  with  z = D^-1 L^-T J^T lambda summed over blocks,
 *   u = u_base + L^-1 z     at the end of the solve,
 * so a Gauss-Seidel update of a block costs O(|S|), not O(nv) (solver_gs.c).
 * Per part: the support (DOF indices, descending: children before parents) in
 * the world's int pool at sup[p], and at pool[adr[p]] the arrays J and Y,
 * each |S| x nrow (entry (k, r) at k * nrow + r). */
typedef struct tl_block {
  tl_row_kind kind;
  int nrow;
  int sa, sb;           /* systems of parts 0 and 1 (sb = -1 if none) */
  int nsup[2], sup[2];  /* support size and offset into ipool, per part */
  unsigned char chain[2]; /* 1: the part's support is one root path (set by part_delassus) */
  int adr[2];           /* pool offset of J (then Y) per part */
  int row;              /* first row in the dense Delassus matrix (dense solves) */
  int finished;         /* 1: Y, G and the compliance are computed (finish_block) */
  int wrow[2];          /* dense solves: offset of the part's rows of D^-1 Y over nv in dW */
  double v0[3];         /* J u_base: row velocities at the base velocity (free velocity) */
  double target[3];     /* desired row velocity (the solve drives J u+ + R lambda toward it) */
  double lo, hi;        /* bounds of scalar rows */
  double R;             /* regularization (compliance) of scalar rows and contact normals */
  double mu;            /* contact friction */
  double G[9];          /* diagonal block of the Delassus matrix (nrow x nrow) */
  double lambda[3];
  double dl[3];         /* change of lambda in the last Gauss-Seidel sweep */
  double p[3];          /* conjugate direction (NNCG) */
  int group;            /* equality rows: index into the world's eqgroups, else -1 */
  int contact;          /* index into contacts, or -1 */
  int dof;              /* joint rows: the DOF, or -1 */
  int slot;             /* joint rows: warm-start slot (see dof_block, constraint_rows.c), or -1 */
  int loop;             /* loop-constraint rows: index into the world's loop_rows, else -1 */
} tl_block;

/* One row of a loop constraint (talus/constraint.h) in this step's blocks
 * (contact/constraint_loop.c): its constraint, warm-start slot and world
 * direction (a force on body 1 at frame 1's origin, or a moment if ang). */
typedef struct tl_loop_row {
  int con, slot, ang;
  double dir[3];
} tl_loop_row;

/* The equality (mimic) rows of one system, consecutive blocks first ..
 * first + n - 1, solved together exactly in each sweep of the per-contact
 * solver: their Delassus matrix (n x n) is Cholesky-factored once per step. */
typedef struct tl_eqgroup {
  int first, n;
  size_t adr;           /* offset of the factor (n x n, column-major) in eq_pool; rhs after it */
  int factored;         /* 0: not positive definite (dependent rows): solved row by row */
  int loop;             /* 1: the loop constraints' rows (constraint_loop.c): factored by the
                           semidefinite Cholesky (redundant rows dropped) and solved for the
                           minimum-norm impulses; after the rhs: n drop flags (n doubles' room),
                           the matrix before factoring (n x n), Cm (n x n), S (n x n), n scratch
                           (tl_dense_psd_minnorm_prepare) */
  int ndrop;            /* loop group: rows dropped as redundant */
} tl_eqgroup;

/* The capacities of the blocks, pools and dense matrices (and, through
 * tl_loop_reserve, the loop rows) for the world's current objects
 * (constraint_rows.c; not while stepping), from which the native arena is
 * laid out (native_objects_changed, native.c). -1: out of memory (the loop
 * projection's scratch). */
int tl_world_size_constraints(tl_world *w);
/* Rows of the step: contacts, then each Euler system's joint rows
 * (constraint_rows.c). */
void tl_world_build_constraints(tl_world *w);
/* Impact pass and solve of the rows; the systems' u become the constrained
 * velocities (constraint_solve.c). */
void tl_world_solve_constraints(tl_world *w);
/* The support of part `part` (0, 1) of block b (b->nrow set): the union of
 * the root paths of DOFs ka and kb (-1: none), descending, appended to the
 * int pool, and the part's J and Y (|S| x nrow each) taken from the pool,
 * zeroed (constraint_rows.c; the contact rows use it inline, the loop rows
 * of constraint_loop.c through this). */
void tl_block_add_support(tl_world *w, tl_block *b, int part, int ka, int kb);
/* Loop constraints (constraint_loop.c). Adds what the world's constraints
 * need to the reservation's totals (blocks, pool, int pool, equality pool,
 * dense rows) and sets the capacities of the loop rows and warm starts (in
 * the native arena) and reserves the projection's scratch; -1: out of
 * memory. */
int tl_loop_reserve(tl_world *w, int *nblock, size_t *pool, size_t *ipool, size_t *eq, size_t *rows);
/* The rows of every loop constraint, appended to the step's blocks:
 * the equality rows of each component (constraints sharing a system) as
 * one equality group, then the one-sided distance rows. */
void tl_loop_blocks(tl_world *w);
/* After finish_block: rows whose Delassus diagonal vanishes against their
 * constraint's largest (a planar linkage's out-of-plane row) are fixed at 0. */
void tl_loop_drop_rows(tl_world *w);
/* After the solve: warm starts kept, each constraint's wrench written. */
void tl_loop_after_solve(tl_world *w);
/* After the positions' update: the post-step projection of the exact
 * constraints (world/constraint_project.h). */
void tl_loop_project(tl_world *w);
/* Free the projection's scratch (native detach). */
void tl_loop_free(tl_world *w);

#endif
