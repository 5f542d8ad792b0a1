/* The constraint rows of a step and their Delassus blocks.
 *
 * Every constraint is a block of 1 or 3 rows (tl_block, contact/constraint.h)
 * with a Jacobian part in one or two systems. Built here, once per step
 * (tl_world_build_constraints): contacts (3 rows t1 t2 n, Coulomb cone),
 * joint position limits (lambda >= 0), Coulomb joint friction and
 * effort-limited PD (boxed rows with compliance), URDF velocity limits
 * (unilateral), mimic joints (equality rows, one group per system). Each
 * part's J is kept on its support, the DOFs on the root paths of its
 * nonzeros, and Y = L^-T J^T is computed from the system's tree-sparse
 * factorization M_eff = L^T D L (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, sec. 6.5 and Table 6.4), so the diagonal Delassus block
 * G = J M_eff^-1 J^T = Y^T D^-1 Y of a block costs O(|support|); the
 * off-diagonal blocks are formed only where a solver needs them
 * (solver_internal.h, delassus_block). Speculative contacts that cannot push
 * at the free velocity are deferred behind the others (defer_contacts). Also
 * here: the capacities of the rows, pools and dense matrices, set when
 * objects are added (tl_world_size_constraints), from which the native
 * arena is laid out (native/native_workspace.c; stepping never allocates).
 * The solvers: solver_gs.c (Gauss-Seidel: per-contact cone, PGS pyramid,
 * NNCG), solver_direct.c (dense assembly, direct solve, Dantzig),
 * impact.c (restitution), constraint_solve.c (the solve of a step). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/solver_internal.h"
#include "math/tl_vec2.h"
#include "math/tl_math.h"

/* ---------------- capacity ---------------- */

/* Most rows solved on the dense Delassus matrix (solver_direct.c); larger
 * problems are swept in the tree-sparse velocity form. 64 holds a robot's
 * contacts and joint rows (a standing humanoid on box feet: 28); the two
 * dense matrices then cost a world 64 kB. */
#define TL_DENSE_MAX_ROWS 64

/* The dense arrays for n rows and the D^-1 Y rows of nvmax DOFs: capacities
 * set exactly (not grown geometrically) when either grows. */
static void size_dense(tl_world *w, int n, int nvmax) {
  tl_native *nat = tl_native_of(w);
  size_t nw = 2 * (size_t)n * (size_t)nvmax;
  if (n <= nat->dense_cap && nw <= nat->dW_cap) return;
  nat->dW_cap = nw;
  nat->dense_cap = n;
}

/* Per DOF: two position limits, friction, PD, velocity limit, mimic. */
static int max_joint_blocks(const tl_system *s) { return 6 * s->m->nv; }

/* DOFs on the longest root path of system s (its tree depth in DOFs). */
static int tree_depth(const tl_system *s) {
  int depth = 0;
  for (int k = 0; k < s->m->nv; k++) {
    int d = s->d.dof_anc_adr[k + 1] - s->d.dof_anc_adr[k] + 1;
    if (d > depth) depth = d;
  }
  return depth;
}

/* Add the per-system terms of the reservation of systems [rc_nsystem, nsystem) to the totals (all of
 * them again when a system was taken out since: tl_world_add_system's failure path), so adding n
 * systems one by one costs O(n) in all. */
static void account_systems(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  if (nat->rc_nsystem > w->nsystem) {
    nat->rc_nsystem = nat->rc_joint_blocks = nat->rc_spmax = nat->rc_nvmax = 0;
    nat->rc_pool = nat->rc_ipool = nat->rc_eq = 0;
  }
  for (int i = nat->rc_nsystem; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    int nv = s->m->nv, sp = 2 * tree_depth(s) < nv ? 2 * tree_depth(s) : nv;
    if (sp > nat->rc_spmax) nat->rc_spmax = sp; /* a contact part's support: at most two root paths */
    if (nv > nat->rc_nvmax) nat->rc_nvmax = nv;
    nat->rc_joint_blocks += max_joint_blocks(s);
    nat->rc_pool += (size_t)max_joint_blocks(s) * (size_t)nv * 2; /* J and Y, 1 row */
    nat->rc_ipool += (size_t)max_joint_blocks(s) * (size_t)nv;
    size_t n = 0;
    for (int k = 0; k < nv; k++) n += s->m->dof_mimic[k] >= 0;
    nat->rc_eq += n * n + n;
  }
  nat->rc_nsystem = w->nsystem;
}

/* Capacity for need entries when cap are reserved: need, or 1.5 cap when that is more (geometric
 * growth: adding n objects one by one costs O(n) copies in all, and at most half again the memory). */
static size_t grown_size(size_t need, size_t cap) { return need > cap + cap / 2 ? need : cap + cap / 2; }

int tl_world_size_constraints(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  account_systems(w);
  const int spmax = nat->rc_spmax;
  int nblock = nat->cap_contact + nat->rc_joint_blocks;
  size_t pool = nat->rc_pool, ipool = nat->rc_ipool, eq = nat->rc_eq, loop_rows = 0;
  pool += (size_t)nat->cap_contact * 2 * 3 * 2 * (size_t)spmax; /* 2 parts, 3 rows, J and Y */
  ipool += (size_t)nat->cap_contact * 2 * (size_t)spmax;
  if (tl_loop_reserve(w, &nblock, &pool, &ipool, &eq, &loop_rows)) return -1; /* loop constraints (constraint_loop.c) */
  int ngroup = w->nsystem + w->nconstraint; /* a mimic group per system, one per component of the loops */
  if (ngroup > nat->cap_eqgroup) nat->cap_eqgroup = (int)grown_size((size_t)ngroup, (size_t)nat->cap_eqgroup);
  if (eq > nat->eq_cap) nat->eq_cap = grown_size(eq, nat->eq_cap);
  /* cap_block is the solve's limit (defer_contacts): exactly what the objects need; alloc_block,
     what the arena holds, grows geometrically */
  if (nblock > nat->cap_block) {
    if (nblock > nat->alloc_block) nat->alloc_block = (int)grown_size((size_t)nblock, (size_t)nat->alloc_block);
    nat->cap_block = nblock;
  }
  if (pool > nat->pool_cap) nat->pool_cap = grown_size(pool, nat->pool_cap);
  if (ipool > nat->ipool_cap) nat->ipool_cap = grown_size(ipool, nat->ipool_cap);
  size_t rows = 3 * (size_t)nat->cap_contact + (size_t)nat->rc_joint_blocks + loop_rows;
  size_dense(w, rows < TL_DENSE_MAX_ROWS ? (int)rows : TL_DENSE_MAX_ROWS, nat->rc_nvmax);
  return 0;
}

/* ---------------- building blocks ---------------- */

static tl_block *new_block(tl_world *w, tl_row_kind kind, int nrow, int sa, int sb) {
  tl_native *nat = tl_native_of(w);
  tl_block *b = &nat->blocks[nat->nblock++];
  memset(b, 0, sizeof(*b));
  b->kind = kind;
  b->nrow = nrow;
  b->sa = sa;
  b->sb = sb;
  b->contact = b->dof = b->slot = b->group = b->loop = -1;
  b->lo = -INFINITY;
  b->hi = INFINITY;
  return b;
}

/* Last DOF on the path from body `body` to the root (-1: welded to the world). */
static int body_leaf_dof(const tl_model *m, int body) {
  while (body > 0 && m->jnt_nv[body] == 0) body = m->parent[body];
  return m->jnt_nv[body] ? m->v_adr[body] + m->jnt_nv[body] - 1 : -1;
}

/* The support of part `part` of block b: the union of the root paths of DOFs
 * ka and kb (-1: none), in descending order (the merge of two descending
 * chains: DOFs are numbered depth first, parents before children), appended
 * to the int pool. Allocates the part's J and Y (zeroed). */
static void add_support(tl_world *w, tl_block *b, int part, int ka, int kb) {
  tl_native *nat = tl_native_of(w);
  const int *parent = w->systems[part ? b->sb : b->sa]->m->dof_parent;
  int *sup = nat->ipool + nat->ipool_used, n = 0;
  while (ka >= 0 || kb >= 0) {
    int k = ka > kb ? ka : kb;
    sup[n++] = k;
    if (k == ka) ka = parent[ka];
    if (k == kb) kb = parent[kb];
  }
  b->sup[part] = (int)nat->ipool_used;
  b->nsup[part] = n;
  nat->ipool_used += (size_t)n;
  b->adr[part] = (int)nat->pool_used;
  nat->pool_used += 2 * (size_t)n * (size_t)b->nrow;
  memset(nat->pool + b->adr[part], 0, 2 * (size_t)n * (size_t)b->nrow * sizeof(double));
}

void tl_block_add_support(tl_world *w, tl_block *b, int part, int ka, int kb) { add_support(w, b, part, ka, kb); }

/* J rows of a point p fixed to a body whose last DOF is `leaf`, added to part
 * `part` of contact block b: sign * frame rows . (w x p + v) of each cdof on
 * the body's root path (a sub-chain of the support, both descending). */
static void point_rows(tl_world *w, tl_block *b, int part, int leaf, const tl_wcontact *c, double sign) {
  tl_native *nat = tl_native_of(w);
  const tl_system *s = w->systems[part ? b->sb : b->sa];
  const int *sup = nat->ipool + b->sup[part];
  double *J = nat->pool + b->adr[part];
  for (int k = leaf, i = 0; k >= 0; k = s->m->dof_parent[k]) {
    while (sup[i] != k) i++;
    const double *S = s->d.cdof + 6 * k;
    double lin[3];
    tl_v3_cross(lin, S, c->pos);
    tl_v3_add(lin, lin, S + 3);
    for (int r = 0; r < 3; r++) J[3 * i + r] += sign * tl_v3_dot(c->frame + 3 * r, lin);
  }
}

static void contact_blocks(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  for (int i = 0; i < nat->ncontact; i++) {
    tl_wcontact *c = &nat->contacts[i];
    int sb = c->sb >= 0 && c->sb != c->sa ? c->sb : -1;
    tl_block *b = new_block(w, TL_ROW_CONTACT, 3, c->sa, sb);
    b->contact = i;
    b->mu = c->mu;
    b->R = c->cfm;
    b->target[2] = c->vtarget;
    memcpy(b->lambda, c->lambda, sizeof(b->lambda));
    const tl_model *ma = w->systems[c->sa]->m;
    int la = body_leaf_dof(ma, c->ba);
    int self = c->sb >= 0 && sb < 0; /* self-collision: both bodies in part 0 */
    int lb = self ? body_leaf_dof(ma, c->bb) : -1;
    add_support(w, b, 0, la, lb);
    point_rows(w, b, 0, la, c, 1.0);
    if (self) point_rows(w, b, 0, lb, c, -1.0);
    if (sb >= 0) {
      int l = body_leaf_dof(w->systems[sb]->m, c->bb);
      add_support(w, b, 1, l, -1);
      point_rows(w, b, 1, l, c, -1.0);
    }
  }
}

/* A 1-row block on DOF k, J = sign e_k (plus, for mimic rows, the leader's
 * entry set by the caller: support = the paths of k and `other`); slot (0
 * lower limit, 1 upper limit, 2 friction, 3 PD, 4 velocity limit, -1 none)
 * selects the warm-start impulse kept from the last step. */
static tl_block *dof_block(tl_world *w, int si, tl_row_kind kind, int k, double sign, int slot, int other) {
  tl_native *nat = tl_native_of(w);
  tl_block *b = new_block(w, kind, 1, si, -1);
  b->dof = k;
  b->slot = slot;
  add_support(w, b, 0, k, other);
  nat->pool[b->adr[0]] = sign; /* k is the first (largest) DOF of its own path... */
  if (other > k) { /* ...unless the other path starts higher */
    nat->pool[b->adr[0]] = 0;
    for (int i = 0; i < b->nsup[0]; i++)
      if (nat->ipool[b->sup[0] + i] == k) nat->pool[b->adr[0] + i] = sign;
  }
  if (slot >= 0) b->lambda[0] = w->systems[si]->lambda_joint[TL_JOINT_SLOTS * k + slot];
  return b;
}

/* Joint-limit rows of DOF k when q is within the limit margin, or would
 * reach the limit within the step at its current (free) velocity u. */
static void limit_blocks(tl_world *w, int si, int k, double q, double u) {
  const tl_model *m = w->systems[si]->m;
  double dt = w->opt.dt;
  for (int side = 0; side < 2; side++) {
    double bound = side ? m->dof_upper[k] : m->dof_lower[k];
    if (!isfinite(bound)) continue;
    double gap = side ? bound - q : q - bound, approach = side ? u : -u;
    if (gap >= w->opt.limit_margin && gap - approach * dt >= w->opt.limit_margin) continue;
    tl_block *b = dof_block(w, si, TL_ROW_LIMIT, k, side ? -1.0 : 1.0, side, -1);
    b->lo = 0;
    b->target[0] = gap > 0 ? -gap / dt : fmin(w->opt.erp * (-gap) / dt, w->opt.max_recovery_speed);
  }
}

/* Velocity limit of DOF k (URDF <limit velocity>, when the world enforces
 * them): |u_k+| <= vmax as one unilateral row on the side the free velocity
 * u points to (u >= -vmax, or -u >= -vmax), lambda >= 0. Every limited DOF
 * gets its row, also below the limit, because contact and limit impulses of
 * the same solve can push a joint past it. The warm-start slot keeps the
 * impulse signed by its side, so a row whose side flipped starts at 0. */
static void velocity_limit_block(tl_world *w, int si, int k, double u) {
  double vmax = w->systems[si]->m->dof_velocity[k], side = u >= 0 ? -1.0 : 1.0;
  if (!isfinite(vmax)) return;
  tl_block *b = dof_block(w, si, TL_ROW_LIMIT, k, side, 4, -1);
  b->lambda[0] = fmax(0.0, side * b->lambda[0]);
  b->lo = 0;
  b->target[0] = -vmax;
}

/* Effort-limited PD of DOF k as a boxed row with compliance: the PD impulse
 * lambda = dt (Kp (e - dt u+) + Kd (u_t - u+)) rewritten as
 * u+ + R lambda = v*, R = 1 / (dt (dt Kp + Kd)), v* = (Kp e + Kd u_t) / (dt Kp + Kd),
 * with |tau_ff + lambda / dt| <= effort. */
static void pd_block(tl_world *w, int si, int k, double e) {
  const tl_system *s = w->systems[si];
  double dt = w->opt.dt, kp = s->kp[k], kd = s->kd[k], eff = s->m->dof_effort[k];
  double c = dt * kp + kd, ff = fmax(-eff, fmin(eff, s->tau_ff[k]));
  tl_block *b = dof_block(w, si, TL_ROW_BOX, k, 1.0, 3, -1);
  b->R = 1.0 / (dt * c);
  b->target[0] = (kp * e + kd * s->u_target[k]) / c;
  b->lo = (-eff - ff) * dt;
  b->hi = (eff - ff) * dt;
}

/* Mimic relations of the 1-DOF joints of system si: equality rows
 * q_k - mult q_j - offset = 0 (ERP-corrected), made consecutive blocks and
 * registered as one equality group. */
static void mimic_blocks(tl_world *w, int si) {
  tl_native *nat = tl_native_of(w);
  const tl_system *s = w->systems[si];
  const tl_model *m = s->m;
  tl_eqgroup *g = &nat->eqgroups[nat->neqgroup];
  g->first = nat->nblock;
  g->n = 0;
  g->factored = 0;
  g->loop = 0;
  for (int k = 0; k < m->nv; k++) {
    int j = m->dof_mimic[k], body = m->dof_body[k];
    if (j < 0 || m->jnt_nv[body] != 1) continue;
    tl_block *b = dof_block(w, si, TL_ROW_EQUALITY, k, 1.0, -1, j);
    for (int i = 0; i < b->nsup[0]; i++)
      if (nat->ipool[b->sup[0] + i] == j) nat->pool[b->adr[0] + i] -= m->dof_mimic_mult[k];
    int qj = m->q_adr[m->dof_body[j]];
    double err = s->d.q[m->q_adr[body]] - m->dof_mimic_mult[k] * s->d.q[qj] - m->dof_mimic_offset[k];
    b->target[0] = -w->opt.erp * err / w->opt.dt;
    b->group = nat->neqgroup;
    g->n++;
  }
  if (g->n > 0) nat->neqgroup++;
}

/* Rows of the joints of system si: position limits and mimic relations of
 * 1-DOF joints; Coulomb friction and effort-limited PD of every joint DOF. */
static void joint_blocks(tl_world *w, int si) {
  const tl_system *s = w->systems[si];
  const tl_model *m = s->m;
  for (int body = 0; body < m->nbody; body++) {
    if (m->jnt_nv[body] == 0 || m->jnt_type[body] == TL_JOINT_FLOATING) continue;
    const double *e = s->pd_e + m->v_adr[body]; /* integrate2's (world.c, joint_errors) */
    for (int i = 0; i < m->jnt_nv[body]; i++) {
      int k = m->v_adr[body] + i;
      if (m->jnt_nv[body] == 1) limit_blocks(w, si, k, s->d.q[m->q_adr[body]], s->d.u[k]);
      if (m->dof_friction[k] > 0) {
        tl_block *b = dof_block(w, si, TL_ROW_BOX, k, 1.0, 2, -1);
        b->lo = -m->dof_friction[k] * w->opt.dt;
        b->hi = m->dof_friction[k] * w->opt.dt;
      }
      if (!tl_system_pd_implicit(s, k) && (s->kp[k] > 0 || s->kd[k] > 0)) pd_block(w, si, k, e[i]);
      if (w->opt.velocity_limits) velocity_limit_block(w, si, k, s->d.u[k]);
    }
  }
  mimic_blocks(w, si);
}

/* Y = L^-T J^T of one part on its support (L from the system's factorization
 * of M_eff, tl_dyn_factor): with DOFs in descending order, once y[c] is final
 * it is pushed into every ancestor i of c, y[i] -= L[c][i] y[c]
 * (Featherstone 2008, Table 6.4, first sweep, restricted to the support; the
 * ancestors of a support DOF are in the support). A support that is one root
 * path (a contact on one body, a joint row) has the ancestors of its k-th DOF
 * in its entries k + 1, k + 2, ...; others (self-collision, mimic: two paths)
 * find them through a map from DOF to entry (scratch dof_tmp).
 * Adds Y^T D^-1 Y to G. */
static void part_delassus(tl_world *w, tl_block *b, int part) {
  tl_native *nat = tl_native_of(w);
  const tl_system *s = w->systems[part ? b->sb : b->sa];
  const int nv = s->m->nv, ns = b->nsup[part], nr = b->nrow, *sup = nat->ipool + b->sup[part];
  const double *L = s->d.LD, *Dinv = s->d.LDinv;
  const int *parent = s->m->dof_parent;
  double *J = nat->pool + b->adr[part], *Y = J + (size_t)ns * (size_t)nr;
  int chain = 1;
  for (int k = 0; k + 1 < ns && chain; k++) chain = parent[sup[k]] == sup[k + 1];
  memcpy(Y, J, (size_t)ns * (size_t)nr * sizeof(double));
  b->chain[part] = (unsigned char)chain;
  if (chain && nr == 3) {
    for (int k = 0; k < ns; k++) {
      const double *restrict Lc = L + (size_t)sup[k] * (size_t)nv;
      double *restrict Yj = Y + 3 * (k + 1);
      const double y2 = Y[3 * k + 2];
#ifdef TL_VEC2
      const tl_v2 y01 = tl_v2_load(Y + 3 * k);
      for (int j = k + 1; j < ns; j++, Yj += 3) {
        const double l = Lc[sup[j]];
        const tl_v2 lv = {l, l};
        tl_v2_store(Yj, tl_v2_load(Yj) - lv * y01);
        Yj[2] -= l * y2;
      }
#else
      const double y0 = Y[3 * k], y1 = Y[3 * k + 1];
      for (int j = k + 1; j < ns; j++, Yj += 3) {
        const double l = Lc[sup[j]];
        Yj[0] -= l * y0;
        Yj[1] -= l * y1;
        Yj[2] -= l * y2;
      }
#endif
    }
  } else if (chain) {
    for (int k = 0; k < ns; k++) {
      const double *Lc = L + (size_t)sup[k] * (size_t)nv, y0 = Y[k];
      for (int j = k + 1; j < ns; j++) Y[j] -= Lc[sup[j]] * y0;
    }
  } else {
    const int *anc = s->d.dof_anc, *anc_adr = s->d.dof_anc_adr;
    int *pos = s->d.dof_tmp; /* [nv] scratch: a support DOF's entry */
    for (int k = 0; k < ns; k++) pos[sup[k]] = k;
    for (int k = 0; k < ns; k++) {
      const int c = sup[k];
      const double *Lc = L + (size_t)c * (size_t)nv, *yk = Y + k * nr;
      if (nr == 1)
        for (int a = anc_adr[c]; a < anc_adr[c + 1]; a++) Y[pos[anc[a]]] -= Lc[anc[a]] * yk[0];
      else
        for (int a = anc_adr[c]; a < anc_adr[c + 1]; a++) {
          double *yj = Y + pos[anc[a]] * nr, l = Lc[anc[a]];
          for (int r = 0; r < nr; r++) yj[r] -= l * yk[r];
        }
    }
  }
  if (nr == 3) {
    double g00 = 0, g01 = 0, g02 = 0, g11 = 0, g12 = 0, g22 = 0;
    for (int k = 0; k < ns; k++) {
      const double di = Dinv[sup[k]], y0 = Y[3 * k], y1 = Y[3 * k + 1], y2 = Y[3 * k + 2];
      const double w0 = di * y0, w1 = di * y1, w2 = di * y2;
      g00 += w0 * y0, g01 += w0 * y1, g02 += w0 * y2;
      g11 += w1 * y1, g12 += w1 * y2, g22 += w2 * y2;
    }
    b->G[0] += g00, b->G[1] += g01, b->G[2] += g02;
    b->G[3] += g01, b->G[4] += g11, b->G[5] += g12;
    b->G[6] += g02, b->G[7] += g12, b->G[8] += g22;
  } else {
    double g = 0;
    for (int k = 0; k < ns; k++) g += Dinv[sup[k]] * Y[k] * Y[k];
    b->G[0] += g;
  }
}

/* The Delassus block of b and the relative compliance of contact normals. */
static void finish_block(tl_world *w, tl_block *b) {
  b->finished = 1;
  memset(b->G, 0, sizeof(b->G));
  part_delassus(w, b, 0);
  if (b->sb >= 0) part_delassus(w, b, 1);
  /* relative compliance of contact normals: keeps the problem strictly
   * monotone, so redundant contact sets (a box face: 4 points) converge in few
   * Gauss-Seidel sweeps and infeasible recovery targets (a body deep inside
   * another) give bounded impulses instead of diverging ones. Contacts that
   * take a restitution impulse drop it again (solve_impacts). */
  if (b->kind == TL_ROW_CONTACT) b->R += w->opt.contact_compliance * b->G[8];
}

/* 1 if contact block b cannot push in this step unless the solve says so: a
 * speculative contact (a gap, no penetration) with no impulse to warm-start
 * from, no restitution, whose free velocity does not close its gap within
 * the step (J_n u_free >= -gap / dt, its target). */
static int deferrable(const tl_world *w, const tl_block *b) {
  tl_native *nat = tl_native_of(w);
  if (b->kind != TL_ROW_CONTACT) return 0;
  const tl_wcontact *c = &nat->contacts[b->contact];
  if (!(c->depth < 0) || c->restitution > 0 || b->lambda[0] != 0 || b->lambda[1] != 0 || b->lambda[2] != 0)
    return 0;
  double vn = 0;
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *J = nat->pool + b->adr[part], *u = w->systems[si]->u_free;
    const int *sup = nat->ipool + b->sup[part];
    for (int k = 0; k < b->nsup[part]; k++) vn += J[3 * k + 2] * u[sup[k]];
  }
  return vn >= b->target[2];
}

/* Speculative contacts that cannot push at the free velocity (deferrable)
 * are moved, in order, behind every other block (nat->nblock_solve: the
 * others); the solve leaves them out and checks them at its solution
 * (deferred_hold), solving again with them when one would push after all.
 * The solution is the same: at it their impulse is 0 either way. A robot's
 * rounded feet give one pressing contact and three speculative ones each,
 * a stack of boxes standing 2 mm apart a speculative manifold between every
 * two columns: these only cost rows. */
static void defer_contacts(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int n = nat->nblock, k = 0, nd = 0;
  nat->nblock_solve = n;
  for (int i = 0; i < n; i++) nd += nat->blocks[i].finished = deferrable(w, &nat->blocks[i]); /* a flag until finish_block */
  if (nd == 0) return;
  tl_block *moved = nat->blocks + n; /* scratch beyond the blocks: capacity is checked below */
  if (n + nd > nat->cap_block) {
    for (int i = 0; i < n; i++) nat->blocks[i].finished = 0;
    return;
  }
  for (int i = 0, j = 0; i < n; i++) { /* stable partition */
    const int d = nat->blocks[i].finished;
    nat->blocks[i].finished = 0;
    if (d)
      moved[j++] = nat->blocks[i];
    else
      nat->blocks[k++] = nat->blocks[i];
  }
  for (int j = 0; j < nd; j++) nat->blocks[k + j] = moved[j];
  for (int g = 0; g < nat->neqgroup; g++) nat->eqgroups[g].first -= nd; /* behind the contacts they were */
  nat->nblock_solve = k;
}

/* finish_block for the solve's deferred contacts (constraint_solve.c); the
 * build calls finish_block itself, which the compiler may inline there. */
void tl_block_finish(tl_world *w, tl_block *b) { finish_block(w, b); }

void tl_world_build_constraints(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  nat->nblock = 0;
  nat->pool_used = 0;
  nat->ipool_used = 0;
  nat->neqgroup = 0;
  contact_blocks(w);
  for (int i = 0; i < w->nsystem; i++)
    if (w->systems[i]->integrator == TL_INTEGRATOR_EULER) joint_blocks(w, i);
  if (w->nconstraint) tl_loop_blocks(w);
  defer_contacts(w);
  for (int i = 0; i < nat->nblock_solve; i++) finish_block(w, &nat->blocks[i]); /* the deferred: when needed */
  if (w->nconstraint) tl_loop_drop_rows(w);
}

