/* Constraint rows of a step and their solve.
 *
 * Every constraint is a block of 1 or 3 rows with a Jacobian part in one or
 * two systems (J, and M_eff^-1 J^T computed from each system's tree-sparse
 * factorization). Blocks: contacts (3 rows, Coulomb cone), joint position
 * limits (lambda >= 0), Coulomb joint friction and effort-limited PD (boxed),
 * mimic joints (equality). The solvers work in velocity form (ODE's
 * QuickStep layout): each system's u is updated in place by
 * u += M_eff^-1 J^T dlambda, so the Delassus matrix G = J M_eff^-1 J^T is
 * never formed except its diagonal blocks (and, for Dantzig, densely).
 *  - TL_SOLVER_PER_CONTACT: Gauss-Seidel over blocks, each contact solved
 *    exactly on the cone (Hwangbo, Lee, Hutter, RA-L 2018), the mimic rows of
 *    a system together by a Cholesky solve (block Gauss-Seidel), accelerated
 *    by NNCG (see solve_gauss_seidel).
 *  - TL_SOLVER_PGS: projected Gauss-Seidel with over-relaxation, friction
 *    pyramid (Erleben, "Velocity-based shock propagation", 2007; ODE QuickStep).
 *  - TL_SOLVER_DANTZIG: the boxed LCP of all rows, Dantzig's pivoting method
 *    (contact/lcp.h), friction pyramid via findex (ODE dWorldStep). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math/tl_dense.h"
#include "math/tl_vec2.h"
#include "math/tl_math.h"
#include "world/world_internal.h"

/* ---------------- capacity ---------------- */

/* Most rows solved on the dense Delassus matrix (dense_solve); larger
 * problems are swept in the tree-sparse velocity form. 64 holds a robot's
 * contacts and joint rows (a standing humanoid on box feet: 28); the two
 * dense matrices then cost a world 64 kB. */
#define TL_DENSE_MAX_ROWS 64

void tl_world_free_dense(tl_world *w) {
  void *arr[] = {w->dA, w->db, w->dx, w->dM, w->dr, w->dy, w->dW, w->dfree, w->dstat, w->dstat_prev};
  for (size_t i = 0; i < sizeof(arr) / sizeof(arr[0]); i++) free(arr[i]);
  w->dA = w->db = w->dx = w->dM = w->dr = w->dy = w->dW = NULL;
  w->dW_cap = 0;
  w->dfree = NULL;
  w->dstat = w->dstat_prev = NULL;
  w->dense_cap = 0;
}

static int reserve_dense(tl_world *w, int n, int nvmax) {
  size_t nw = 2 * (size_t)n * (size_t)nvmax;
  if (n <= w->dense_cap && nw <= w->dW_cap) return 0;
  tl_world_free_dense(w);
  size_t n2 = (size_t)n * (size_t)n;
  w->dW = malloc((nw ? nw : 1) * sizeof(double));
  w->dW_cap = nw;
  w->dA = malloc(n2 * sizeof(double));
  w->dM = malloc(n2 * sizeof(double));
  w->db = malloc((size_t)n * sizeof(double));
  w->dx = malloc((size_t)n * sizeof(double));
  w->dr = malloc(3 * (size_t)n * sizeof(double));
  w->dy = malloc(3 * (size_t)n * sizeof(double));
  w->dfree = malloc((size_t)n * sizeof(int));
  w->dstat = malloc((size_t)n);
  w->dstat_prev = malloc((size_t)n);
  if (!w->dW || !w->dA || !w->dM || !w->db || !w->dx || !w->dr || !w->dy || !w->dfree || !w->dstat || !w->dstat_prev) {
    tl_world_free_dense(w);
    return -1;
  }
  w->dense_cap = n;
  return 0;
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
  if (w->rc_nsystem > w->nsystem) {
    w->rc_nsystem = w->rc_joint_blocks = w->rc_spmax = w->rc_nvmax = 0;
    w->rc_pool = w->rc_ipool = w->rc_eq = 0;
  }
  for (int i = w->rc_nsystem; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    int nv = s->m->nv, sp = 2 * tree_depth(s) < nv ? 2 * tree_depth(s) : nv;
    if (sp > w->rc_spmax) w->rc_spmax = sp; /* a contact part's support: at most two root paths */
    if (nv > w->rc_nvmax) w->rc_nvmax = nv;
    w->rc_joint_blocks += max_joint_blocks(s);
    w->rc_pool += (size_t)max_joint_blocks(s) * (size_t)nv * 2; /* J and Y, 1 row */
    w->rc_ipool += (size_t)max_joint_blocks(s) * (size_t)nv;
    size_t n = 0;
    for (int k = 0; k < nv; k++) n += s->m->dof_mimic[k] >= 0;
    w->rc_eq += n * n + n;
  }
  w->rc_nsystem = w->nsystem;
}

/* Capacity for need entries when cap are allocated: need, or 1.5 cap when that is more (geometric
 * growth: adding n objects one by one costs O(n) copies in all, and at most half again the memory). */
static size_t grown_size(size_t need, size_t cap) { return need > cap + cap / 2 ? need : cap + cap / 2; }

int tl_world_reserve_constraints(tl_world *w) {
  account_systems(w);
  const int spmax = w->rc_spmax;
  int nblock = w->cap_contact + w->rc_joint_blocks;
  size_t pool = w->rc_pool, ipool = w->rc_ipool, eq = w->rc_eq;
  pool += (size_t)w->cap_contact * 2 * 3 * 2 * (size_t)spmax; /* 2 parts, 3 rows, J and Y */
  ipool += (size_t)w->cap_contact * 2 * (size_t)spmax;
  if (w->nsystem > w->cap_eqgroup) {
    int c = (int)grown_size((size_t)w->nsystem, (size_t)w->cap_eqgroup);
    tl_eqgroup *g = realloc(w->eqgroups, (size_t)c * sizeof(*g));
    if (!g) return -1;
    w->eqgroups = g;
    w->cap_eqgroup = c;
  }
  if (eq > w->eq_cap) {
    size_t c = grown_size(eq, w->eq_cap);
    double *p = realloc(w->eq_pool, c * sizeof(double));
    if (!p) return -1;
    w->eq_pool = p;
    w->eq_cap = c;
  }
  /* cap_block is the solve's limit (defer_contacts): exactly what the objects need, as before the
     allocation grew geometrically; alloc_block is what is allocated */
  if (nblock > w->cap_block) {
    if (nblock > w->alloc_block) {
      int c = (int)grown_size((size_t)nblock, (size_t)w->alloc_block);
      tl_block *b = realloc(w->blocks, (size_t)c * sizeof(*b));
      if (!b) return -1;
      w->blocks = b;
      w->alloc_block = c;
    }
    w->cap_block = nblock;
  }
  if (pool > w->pool_cap) {
    size_t c = grown_size(pool, w->pool_cap);
    double *p = realloc(w->pool, (c ? c : 1) * sizeof(double));
    if (!p) return -1;
    w->pool = p;
    w->pool_cap = c;
  }
  if (ipool > w->ipool_cap) {
    size_t c = grown_size(ipool, w->ipool_cap);
    int *p = realloc(w->ipool, (c ? c : 1) * sizeof(int));
    if (!p) return -1;
    w->ipool = p;
    w->ipool_cap = c;
  }
  size_t rows = 3 * (size_t)w->cap_contact + (size_t)w->rc_joint_blocks;
  return reserve_dense(w, rows < TL_DENSE_MAX_ROWS ? (int)rows : TL_DENSE_MAX_ROWS, w->rc_nvmax);
}

/* ---------------- building blocks ---------------- */

static tl_block *new_block(tl_world *w, tl_row_kind kind, int nrow, int sa, int sb) {
  tl_block *b = &w->blocks[w->nblock++];
  memset(b, 0, sizeof(*b));
  b->kind = kind;
  b->nrow = nrow;
  b->sa = sa;
  b->sb = sb;
  b->contact = b->dof = b->slot = b->group = -1;
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
  const int *parent = w->systems[part ? b->sb : b->sa]->m->dof_parent;
  int *sup = w->ipool + w->ipool_used, n = 0;
  while (ka >= 0 || kb >= 0) {
    int k = ka > kb ? ka : kb;
    sup[n++] = k;
    if (k == ka) ka = parent[ka];
    if (k == kb) kb = parent[kb];
  }
  b->sup[part] = (int)w->ipool_used;
  b->nsup[part] = n;
  w->ipool_used += (size_t)n;
  b->adr[part] = (int)w->pool_used;
  w->pool_used += 2 * (size_t)n * (size_t)b->nrow;
  memset(w->pool + b->adr[part], 0, 2 * (size_t)n * (size_t)b->nrow * sizeof(double));
}

/* J rows of a point p fixed to a body whose last DOF is `leaf`, added to part
 * `part` of contact block b: sign * frame rows . (w x p + v) of each cdof on
 * the body's root path (a sub-chain of the support, both descending). */
static void point_rows(tl_world *w, tl_block *b, int part, int leaf, const tl_wcontact *c, double sign) {
  const tl_system *s = w->systems[part ? b->sb : b->sa];
  const int *sup = w->ipool + b->sup[part];
  double *J = w->pool + b->adr[part];
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
  for (int i = 0; i < w->ncontact; i++) {
    tl_wcontact *c = &w->contacts[i];
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
  tl_block *b = new_block(w, kind, 1, si, -1);
  b->dof = k;
  b->slot = slot;
  add_support(w, b, 0, k, other);
  w->pool[b->adr[0]] = sign; /* k is the first (largest) DOF of its own path... */
  if (other > k) { /* ...unless the other path starts higher */
    w->pool[b->adr[0]] = 0;
    for (int i = 0; i < b->nsup[0]; i++)
      if (w->ipool[b->sup[0] + i] == k) w->pool[b->adr[0] + i] = sign;
  }
  if (slot >= 0) b->lambda[0] = w->systems[si]->lambda_joint[TL_JOINT_SLOTS * k + slot];
  return b;
}

/* Joint-limit rows of DOF k when q is within the limit margin, or would
 * reach the limit within the step at its current (free) velocity u. */
static void limit_blocks(tl_world *w, int si, int k, double q, double u) {
  const tl_model *m = w->systems[si]->m;
  double dt = w->dt;
  for (int side = 0; side < 2; side++) {
    double bound = side ? m->dof_upper[k] : m->dof_lower[k];
    if (!isfinite(bound)) continue;
    double gap = side ? bound - q : q - bound, approach = side ? u : -u;
    if (gap >= w->limit_margin && gap - approach * dt >= w->limit_margin) continue;
    tl_block *b = dof_block(w, si, TL_ROW_LIMIT, k, side ? -1.0 : 1.0, side, -1);
    b->lo = 0;
    b->target[0] = gap > 0 ? -gap / dt : fmin(w->erp * (-gap) / dt, w->max_recovery_speed);
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
  double dt = w->dt, kp = s->kp[k], kd = s->kd[k], eff = s->m->dof_effort[k];
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
  const tl_system *s = w->systems[si];
  const tl_model *m = s->m;
  tl_eqgroup *g = &w->eqgroups[w->neqgroup];
  g->first = w->nblock;
  g->n = 0;
  g->factored = 0;
  for (int k = 0; k < m->nv; k++) {
    int j = m->dof_mimic[k], body = m->dof_body[k];
    if (j < 0 || m->jnt_nv[body] != 1) continue;
    tl_block *b = dof_block(w, si, TL_ROW_EQUALITY, k, 1.0, -1, j);
    for (int i = 0; i < b->nsup[0]; i++)
      if (w->ipool[b->sup[0] + i] == j) w->pool[b->adr[0] + i] -= m->dof_mimic_mult[k];
    int qj = m->q_adr[m->dof_body[j]];
    double err = s->d.q[m->q_adr[body]] - m->dof_mimic_mult[k] * s->d.q[qj] - m->dof_mimic_offset[k];
    b->target[0] = -w->erp * err / w->dt;
    b->group = w->neqgroup;
    g->n++;
  }
  if (g->n > 0) w->neqgroup++;
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
        b->lo = -m->dof_friction[k] * w->dt;
        b->hi = m->dof_friction[k] * w->dt;
      }
      if (!tl_system_pd_implicit(s, k) && (s->kp[k] > 0 || s->kd[k] > 0)) pd_block(w, si, k, e[i]);
      if (w->velocity_limits) velocity_limit_block(w, si, k, s->d.u[k]);
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
  const tl_system *s = w->systems[part ? b->sb : b->sa];
  const int nv = s->m->nv, ns = b->nsup[part], nr = b->nrow, *sup = w->ipool + b->sup[part];
  const double *L = s->d.LD, *Dinv = s->d.LDinv;
  const int *parent = s->m->dof_parent;
  double *J = w->pool + b->adr[part], *Y = J + (size_t)ns * (size_t)nr;
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
  if (b->kind == TL_ROW_CONTACT) b->R += w->contact_compliance * b->G[8];
}

static double delassus(const tl_world *w, const tl_block *a, int ra, const tl_block *b, int rb);

/* In-place Cholesky factor A = L L^T of a small symmetric positive
 * definite n x n matrix (column-major, lower triangle read and written).
 * Returns 0 if A is not (numerically) positive definite. Kept in the core
 * rather than LAPACK's dpotrf: called for a dozen rows per step, where a
 * library call (and OpenBLAS waking its threads) costs more than the work. */
static int cholesky_factor(double *A, int n) {
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= A[k * n + j] * A[k * n + j];
    if (!(d > 1e-14 * fabs(A[j * n + j])) || !(d > 0)) return 0;
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double x = A[j * n + i];
      for (int k = 0; k < j; k++) x -= A[k * n + i] * A[k * n + j];
      A[j * n + i] = x / d;
    }
  }
  return 1;
}

/* Solve L L^T x = r in place (r becomes x), L from cholesky_factor. */
static void cholesky_solve(const double *L, int n, double *r) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) r[i] -= L[k * n + i] * r[k];
    r[i] /= L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int k = i + 1; k < n; k++) r[i] -= L[i * n + k] * r[k];
    r[i] /= L[i * n + i];
  }
}

/* Cholesky factor of each equality group's Delassus matrix (from the dense
 * matrix when the solve has one). */
static void factor_eqgroups(tl_world *w) {
  w->eq_used = 0;
  for (int i = 0; i < w->neqgroup; i++) {
    tl_eqgroup *g = &w->eqgroups[i];
    int n = g->n;
    double *A = w->eq_pool + w->eq_used;
    g->adr = w->eq_used;
    w->eq_used += (size_t)n * (size_t)n + (size_t)n;
    for (int c = 0; c < n; c++)
      for (int r = c; r < n; r++) {
        const tl_block *a = &w->blocks[g->first + r], *b = &w->blocks[g->first + c];
        A[c * n + r] = r == c ? a->G[0] + a->R
                              : w->dense ? w->dA[(size_t)a->row * (size_t)w->dense_n + b->row]
                                         : delassus(w, a, 0, b, 0);
      }
    g->factored = cholesky_factor(A, n);
  }
}

/* 1 if contact block b cannot push in this step unless the solve says so: a
 * speculative contact (a gap, no penetration) with no impulse to warm-start
 * from, no restitution, whose free velocity does not close its gap within
 * the step (J_n u_free >= -gap / dt, its target). */
static int deferrable(const tl_world *w, const tl_block *b) {
  if (b->kind != TL_ROW_CONTACT) return 0;
  const tl_wcontact *c = &w->contacts[b->contact];
  if (!(c->depth < 0) || c->restitution > 0 || b->lambda[0] != 0 || b->lambda[1] != 0 || b->lambda[2] != 0)
    return 0;
  double vn = 0;
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *J = w->pool + b->adr[part], *u = w->systems[si]->u_free;
    const int *sup = w->ipool + b->sup[part];
    for (int k = 0; k < b->nsup[part]; k++) vn += J[3 * k + 2] * u[sup[k]];
  }
  return vn >= b->target[2];
}

/* Speculative contacts that cannot push at the free velocity (deferrable)
 * are moved, in order, behind every other block (w->nblock_solve: the
 * others); the solve leaves them out and checks them at its solution
 * (deferred_hold), solving again with them when one would push after all.
 * The solution is the same: at it their impulse is 0 either way. A robot's
 * rounded feet give one pressing contact and three speculative ones each,
 * a stack of boxes standing 2 mm apart a speculative manifold between every
 * two columns: these only cost rows. */
static void defer_contacts(tl_world *w) {
  int n = w->nblock, k = 0, nd = 0;
  w->nblock_solve = n;
  for (int i = 0; i < n; i++) nd += w->blocks[i].finished = deferrable(w, &w->blocks[i]); /* a flag until finish_block */
  if (nd == 0) return;
  tl_block *moved = w->blocks + n; /* scratch beyond the blocks: capacity is checked below */
  if (n + nd > w->cap_block) {
    for (int i = 0; i < n; i++) w->blocks[i].finished = 0;
    return;
  }
  for (int i = 0, j = 0; i < n; i++) { /* stable partition */
    const int d = w->blocks[i].finished;
    w->blocks[i].finished = 0;
    if (d)
      moved[j++] = w->blocks[i];
    else
      w->blocks[k++] = w->blocks[i];
  }
  for (int j = 0; j < nd; j++) w->blocks[k + j] = moved[j];
  for (int g = 0; g < w->neqgroup; g++) w->eqgroups[g].first -= nd; /* behind the contacts they were */
  w->nblock_solve = k;
}

void tl_world_build_constraints(tl_world *w) {
  w->nblock = 0;
  w->pool_used = 0;
  w->ipool_used = 0;
  w->neqgroup = 0;
  contact_blocks(w);
  for (int i = 0; i < w->nsystem; i++)
    if (w->systems[i]->integrator == TL_INTEGRATOR_EULER) joint_blocks(w, i);
  defer_contacts(w);
  for (int i = 0; i < w->nblock_solve; i++) finish_block(w, &w->blocks[i]); /* the deferred: when needed */
}

/* ---------------- velocity-form helpers ---------------- */

/* Row velocities of block b at the current impulses: v = J u_base + Y^T z
 * over each part's support (see tl_block); in a dense solve, db + A dx. */
static void block_velocity(const tl_world *w, const tl_block *b, double *v) {
  if (w->dense) { /* v = b + A lambda on the dense matrix */
    for (int r = 0; r < b->nrow; r++)
      v[r] = w->db[b->row + r] + tl_dense_dot(w->dense_n, w->dA + (size_t)(b->row + r) * (size_t)w->dense_n, w->dx);
    return;
  }
  for (int r = 0; r < b->nrow; r++) v[r] = b->v0[r];
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *z = w->systems[si]->z, *Y = w->pool + b->adr[part] + (size_t)b->nsup[part] * (size_t)b->nrow;
    const int *sup = w->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      double v0 = 0, v1 = 0, v2 = 0;
      for (int k = 0; k < ns; k++) {
        const double zk = z[sup[k]];
        v0 += Y[3 * k] * zk;
        v1 += Y[3 * k + 1] * zk;
        v2 += Y[3 * k + 2] * zk;
      }
      v[0] += v0, v[1] += v1, v[2] += v2;
    } else {
      double v0 = 0;
      for (int k = 0; k < ns; k++) v0 += Y[k] * z[sup[k]];
      v[0] += v0;
    }
  }
}

/* Impulse dl on block b: z += D^-1 Y dl on each part's support (the velocity
 * change M_eff^-1 J^T dl = L^-1 (D^-1 Y dl), L^-1 applied once at the end);
 * in a dense solve, the impulses dx += dl. */
static void apply_impulse(tl_world *w, const tl_block *b, const double *dl) {
  if (w->dense) {
    for (int r = 0; r < b->nrow; r++) w->dx[b->row + r] += dl[r];
    return;
  }
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    tl_system *s = w->systems[si];
    double *z = s->z;
    const double *Dinv = s->d.LDinv, *Y = w->pool + b->adr[part] + (size_t)b->nsup[part] * (size_t)b->nrow;
    const int *sup = w->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      const double d0 = dl[0], d1 = dl[1], d2 = dl[2];
      for (int k = 0; k < ns; k++) z[sup[k]] += Dinv[sup[k]] * (Y[3 * k] * d0 + Y[3 * k + 1] * d1 + Y[3 * k + 2] * d2);
    } else {
      for (int k = 0; k < ns; k++) z[sup[k]] += Dinv[sup[k]] * (Y[k] * dl[0]);
    }
  }
}

/* gen_change += J^T dl for each system of block b (N s, N m s). */
static void add_generalized(tl_world *w, const tl_block *b, const double *dl) {
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    double *g = w->systems[si]->gen_change;
    const double *J = w->pool + b->adr[part];
    const int *sup = w->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      const double d0 = dl[0], d1 = dl[1], d2 = dl[2];
      for (int k = 0; k < ns; k++) g[sup[k]] += J[3 * k] * d0 + J[3 * k + 1] * d1 + J[3 * k + 2] * d2;
    } else {
      for (int k = 0; k < ns; k++) g[sup[k]] += J[k] * dl[0];
    }
  }
}

/* Row velocities J u of block b at the systems' current u (after the solve). */
static void block_velocity_u(const tl_world *w, const tl_block *b, double *v) {
  for (int r = 0; r < b->nrow; r++) v[r] = 0;
  for (int part = 0; part < 2; part++) {
    int si = part ? b->sb : b->sa;
    if (si < 0) continue;
    const double *u = w->systems[si]->d.u, *J = w->pool + b->adr[part];
    const int *sup = w->ipool + b->sup[part], ns = b->nsup[part];
    if (b->nrow == 3) {
      double v0 = 0, v1 = 0, v2 = 0;
      for (int k = 0; k < ns; k++) {
        const double x = u[sup[k]];
        v0 += J[3 * k] * x, v1 += J[3 * k + 1] * x, v2 += J[3 * k + 2] * x;
      }
      v[0] += v0, v[1] += v1, v[2] += v2;
    } else {
      for (int k = 0; k < ns; k++) v[0] += J[k] * u[sup[k]];
    }
  }
}

/* v0 = J u of every block for each system's velocity `prev` (1: the start of
 * the step, u_prev; 0: the free velocity u_free). */
static void set_base(tl_world *w, int prev) {
  for (int i = 0; i < w->nblock; i++) {
    tl_block *b = &w->blocks[i];
    for (int r = 0; r < b->nrow; r++) b->v0[r] = 0;
    for (int part = 0; part < 2; part++) {
      int si = part ? b->sb : b->sa;
      if (si < 0) continue;
      const tl_system *s = w->systems[si];
      const double *u = prev ? s->u_prev : s->u_free, *J = w->pool + b->adr[part];
      const int *sup = w->ipool + b->sup[part], ns = b->nsup[part];
      if (b->nrow == 3) {
        double v0 = 0, v1 = 0, v2 = 0;
        for (int k = 0; k < ns; k++) {
          const double x = u[sup[k]];
          v0 += J[3 * k] * x, v1 += J[3 * k + 1] * x, v2 += J[3 * k + 2] * x;
        }
        b->v0[0] += v0, b->v0[1] += v1, b->v0[2] += v2;
      } else {
        for (int k = 0; k < ns; k++) b->v0[0] += J[k] * u[sup[k]];
      }
    }
  }
}
/* Delassus block between blocks a and b (a->nrow x b->nrow, row-major into
 * out): Y_a^T D^-1 Y_b over the common support of each system they share (a
 * merge of the two descending supports). */
static void delassus_block(const tl_world *w, const tl_block *a, const tl_block *b, double *out) {
  const int na = a->nrow, nb = b->nrow;
  for (int i = 0; i < na * nb; i++) out[i] = 0;
  for (int pa = 0; pa < 2; pa++) {
    int sa = pa ? a->sb : a->sa;
    if (sa < 0) continue;
    for (int pb = 0; pb < 2; pb++) {
      int sb = pb ? b->sb : b->sa;
      if (sb != sa) continue;
      const double *Dinv = w->systems[sa]->d.LDinv;
      const int *ia = w->ipool + a->sup[pa], *ib = w->ipool + b->sup[pb], ma = a->nsup[pa], mb = b->nsup[pb];
      const double *Ya = w->pool + a->adr[pa] + (size_t)ma * (size_t)na;
      const double *Yb = w->pool + b->adr[pb] + (size_t)mb * (size_t)nb;
      for (int i = 0, j = 0; i < ma && j < mb;) {
        if (ia[i] > ib[j]) {
          i++;
        } else if (ia[i] < ib[j]) {
          j++;
        } else {
          const double *ya = Ya + i * na, *yb = Yb + j * nb, di = Dinv[ia[i]];
          for (int r = 0; r < na; r++)
            for (int c = 0; c < nb; c++) out[r * nb + c] += ya[r] * di * yb[c];
          i++, j++;
        }
      }
    }
  }
}

/* 1 if blocks a and b share a system (a nonzero off-diagonal Delassus block is possible). */
static int share_system(const tl_block *a, const tl_block *b) {
  return a->sa == b->sa || a->sa == b->sb || (a->sb >= 0 && (a->sb == b->sa || a->sb == b->sb));
}

/* One entry of the Delassus matrix between row ra of block a and row rb of block b. */
static double delassus(const tl_world *w, const tl_block *a, int ra, const tl_block *b, int rb) {
  double G[9];
  if (!share_system(a, b)) return 0.0;
  delassus_block(w, a, b, G);
  return G[ra * b->nrow + rb];
}

/* ---------------- dense solve ---------------- */

/* 1 when at least half of the pairs of blocks share a system (their
 * Delassus block may be nonzero): a robot's contacts and joint rows all do,
 * and then the dense matrix and its direct solves pay. A stack of free boxes
 * couples each contact to a few neighbours only; there the tree-sparse
 * sweeps are cheaper than assembling and factoring a mostly-zero matrix. */
static int dense_pays(const tl_world *w) {
  long shared = 0, pairs = (long)w->nblock * (w->nblock - 1) / 2;
  for (int i = 0; i < w->nblock; i++)
    for (int j = i + 1; j < w->nblock; j++) shared += share_system(&w->blocks[i], &w->blocks[j]);
  return 2 * shared >= pairs;
}

/* Number the rows of the blocks (tl_block.row); returns how many. */
static int number_rows(tl_world *w) {
  int n = 0;
  for (int i = 0; i < w->nblock; i++) {
    w->blocks[i].row = n;
    n += w->blocks[i].nrow;
  }
  return n;
}

/* The dense Delassus matrix A of the blocks (full, symmetric; the
 * compliance R stays in the blocks) and the row velocities db at the
 * current z (the start of the solve). The
 * off-diagonal blocks use the tree sparsity: only blocks sharing a system,
 * each over their common support. */
static void dense_assemble(tl_world *w) {
  const int n = w->dense_n;
  double *A = w->dA;
  /* W = D^-1 Y of every block part, scattered over its system's nv (entry (dof, r) at dof * nrow + r) */
  size_t used = 0;
  for (int i = 0; i < w->nblock; i++) {
    tl_block *b = &w->blocks[i];
    for (int p = 0; p < 2; p++) {
      int si = p ? b->sb : b->sa;
      if (si < 0) continue;
      const tl_system *s = w->systems[si];
      const int nv = s->m->nv, ns = b->nsup[p], nr = b->nrow, *sup = w->ipool + b->sup[p];
      const double *Y = w->pool + b->adr[p] + (size_t)ns * (size_t)nr, *Dinv = s->d.LDinv;
      double *W = w->dW + used;
      b->wrow[p] = (int)used;
      used += (size_t)nr * (size_t)nv;
      memset(W, 0, (size_t)nr * (size_t)nv * sizeof(double));
      if (nr == 3)
        for (int k = 0; k < ns; k++) {
          const double di = Dinv[sup[k]];
          double *x = W + 3 * sup[k];
          x[0] = di * Y[3 * k], x[1] = di * Y[3 * k + 1], x[2] = di * Y[3 * k + 2];
        }
      else
        for (int k = 0; k < ns; k++) W[sup[k]] = Dinv[sup[k]] * Y[k];
    }
  }
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *a = &w->blocks[i];
    if (w->stats.impacts) /* db = J u_free + Y^T z; z is zero unless impacts came first (the +0.0: as the sum would) */
      block_velocity(w, a, w->db + a->row);
    else
      for (int r = 0; r < a->nrow; r++) w->db[a->row + r] = a->v0[r] + 0.0;
    if (a->nrow == 3)
      for (int r = 0; r < 3; r++) memcpy(A + (size_t)(a->row + r) * (size_t)n + a->row, a->G + 3 * r, 3 * sizeof(double));
    else
      A[(size_t)a->row * (size_t)n + a->row] = a->G[0];
    for (int j = i + 1; j < w->nblock; j++) {
      const tl_block *b = &w->blocks[j];
      double G[9] = {0};
      for (int pa = 0; pa < 2; pa++) { /* G = Y_a^T W_b over a's support, per shared system */
        int sa = pa ? a->sb : a->sa;
        if (sa < 0) continue;
        for (int pb = 0; pb < 2; pb++) {
          if ((pb ? b->sb : b->sa) != sa) continue;
          int ns = a->nsup[pa], k0 = 0;
          const int *sup = w->ipool + a->sup[pa];
          const double *Ya = w->pool + a->adr[pa] + (size_t)ns * (size_t)a->nrow, *Wb = w->dW + b->wrow[pb];
          if (a->chain[pa] && b->chain[pb]) { /* two root paths share a suffix: W_b is zero before it */
            const int *supb = w->ipool + b->sup[pb];
            int t = 0;
            const int tmax = ns < b->nsup[pb] ? ns : b->nsup[pb];
            const int *ea = sup + ns - 1, *eb = supb + b->nsup[pb] - 1;
            while (t < tmax && ea[-t] == eb[-t]) t++;
            k0 = ns - t;
          }
          if (a->nrow == 1 && b->nrow == 1) {
            double g = 0;
            for (int k = k0; k < ns; k++) g += Ya[k] * Wb[sup[k]];
            G[0] += g;
          } else if (a->nrow == 3 && b->nrow == 3) {
            for (int k = k0; k < ns; k++) {
              const double *x = Wb + 3 * sup[k], *y = Ya + 3 * k;
              for (int r = 0; r < 3; r++) {
                G[3 * r] += y[r] * x[0];
                G[3 * r + 1] += y[r] * x[1];
                G[3 * r + 2] += y[r] * x[2];
              }
            }
          } else if (a->nrow == 3) { /* and b->nrow == 1 */
            double g0 = 0, g1 = 0, g2 = 0;
            for (int k = k0; k < ns; k++) {
              const double x = Wb[sup[k]];
              g0 += Ya[3 * k] * x, g1 += Ya[3 * k + 1] * x, g2 += Ya[3 * k + 2] * x;
            }
            G[0] += g0, G[1] += g1, G[2] += g2;
          } else { /* a->nrow == 1, b->nrow == 3 */
            double g0 = 0, g1 = 0, g2 = 0;
            for (int k = k0; k < ns; k++) {
              const double y = Ya[k], *x = Wb + 3 * sup[k];
              g0 += y * x[0], g1 += y * x[1], g2 += y * x[2];
            }
            G[0] += g0, G[1] += g1, G[2] += g2;
          }
        }
      }
      if (a->nrow == 3 && b->nrow == 3)
        for (int r = 0; r < 3; r++) {
          double *Ar = A + (size_t)(a->row + r) * (size_t)n + b->row, *Ac = A + (size_t)(b->row + r) * (size_t)n + a->row;
          Ar[0] = G[3 * r], Ar[1] = G[3 * r + 1], Ar[2] = G[3 * r + 2];
          Ac[0] = G[r], Ac[1] = G[3 + r], Ac[2] = G[6 + r];
        }
      else
        for (int r = 0; r < a->nrow; r++)
          for (int c = 0; c < b->nrow; c++) {
            A[(size_t)(a->row + r) * (size_t)n + b->row + c] = G[r * b->nrow + c];
            A[(size_t)(b->row + c) * (size_t)n + a->row + r] = G[r * b->nrow + c];
          }
    }
  }
  memset(w->dx, 0, (size_t)n * sizeof(double));
}

/* Status of the rows for a direct solve, from the current impulses: 1 free
 * (a contact pressing, lambda_n > 0: all three rows, as if sticking; a scalar
 * row strictly inside its bounds), 0 held at its value (a contact that does
 * not press, lambda = 0; a scalar row at a bound). */
static void direct_status(tl_world *w, unsigned char *st) {
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *b = &w->blocks[i];
    if (b->kind == TL_ROW_CONTACT) {
      memset(st + b->row, b->lambda[2] > 0, 3);
    } else {
      st[b->row] = b->lambda[0] > b->lo && b->lambda[0] < b->hi;
    }
  }
}

/* Relative regularization of the free rows' matrix when it may be singular:
 * two or more pressing contacts on one body (the corners of a box face:
 * their tangential rows outnumber the in-plane motions of the body) make it
 * so; epsilon picks the smallest-norm impulses among the equal solutions,
 * and two steps of iterative refinement against the unregularized matrix
 * remove what epsilon costs in the row velocities. Otherwise (a robot's
 * point feet) it is factored as it is, and regularized only if a pivot
 * comes out below TL_DIRECT_PIVOT of its diagonal entry. */
#define TL_DIRECT_EPS 1e-11
#define TL_DIRECT_PIVOT 1e-9

/* 1 if two free contact blocks (status st) touch the same body. */
static int shared_body(const tl_world *w, const unsigned char *st) {
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *a = &w->blocks[i];
    if (a->kind != TL_ROW_CONTACT || !st[a->row]) continue;
    const tl_wcontact *ca = &w->contacts[a->contact];
    for (int j = i + 1; j < w->nblock; j++) {
      const tl_block *b = &w->blocks[j];
      if (b->kind != TL_ROW_CONTACT || !st[b->row]) continue;
      const tl_wcontact *cb = &w->contacts[b->contact];
      if ((ca->sa == cb->sa && ca->ba == cb->ba) || (ca->sb >= 0 && ca->sb == cb->sb && ca->bb == cb->bb) ||
          (ca->sa == cb->sb && ca->ba == cb->bb) || (ca->sb >= 0 && ca->sb == cb->sa && ca->bb == cb->ba))
        return 1;
    }
  }
  return 0;
}

/* Pivot of column k of chol_inline: L_kk = sqrt(M_kk), inv[k] = 1 / L_kk,
 * the column below it scaled by inv[k] and copied into row k's upper part.
 * Returns 0 if the pivot is not positive. */
static inline int chol_pivot(double *M, double *restrict inv, int n, int k) {
  double *Mk = M + (size_t)k * (size_t)n;
  const double d = Mk[k];
  if (!(d > 0)) return 0;
  Mk[k] = sqrt(d);
  const double s = inv[k] = 1.0 / Mk[k];
  for (int i = k + 1; i < n; i++) Mk[i] = M[(size_t)i * (size_t)n + k] *= s;
  return 1;
}

/* In-place Cholesky M = L L^T of the n x n lower triangle (row-major, row i
 * at M + i n) in its right-looking (outer-product) form, Golub and Van Loan,
 * Alg. 4.2.2: column k is scaled by 1 / L_kk, then the trailing lower
 * triangle loses the outer product of that column. The updates of one k are
 * independent of each other, so the only chain of dependent operations is
 * one sqrt, one division and one multiply-add per column (the left-looking
 * form chains every entry of a row through its dot products), which is what
 * a few dozen rows cost. Columns go in pairs: column k + 1 takes column k's
 * update first, then the trailing triangle loses both outer products in one
 * pass (each entry in the order of two single updates: the result is that of
 * the one-column form bit for bit, with half the loads and stores). Column
 * k of L is also kept in row k's upper part, so every update reads
 * contiguous rows. inv [n] receives 1 / L_ii. Returns 0 if a pivot is not
 * positive. */
static int chol_inline(double *M, double *restrict inv, int n) {
  for (int k = 0; k < n; k += 2) {
    if (!chol_pivot(M, inv, n, k)) return 0;
    if (k + 1 == n) break;
    const double *Mk = M + (size_t)k * (size_t)n, *Mk1 = Mk + n;
    for (int i = k + 1; i < n; i++) M[(size_t)i * (size_t)n + k + 1] -= Mk[i] * Mk[k + 1];
    if (!chol_pivot(M, inv, n, k + 1)) return 0;
    for (int i = k + 2; i < n; i++)
      tl_v2_axmy2(M + (size_t)i * (size_t)n + k + 2, Mk + k + 2, Mk[i], Mk1 + k + 2, Mk1[i], i - k - 1);
  }
  return 1;
}

/* Solve L L^T x = e in place, L and inv = 1 / diag(L) from chol_inline:
 * both substitutions by columns (forward: column k of L, kept as row k's
 * upper part; backward: row i of L = column i of L^T), so each step's
 * updates are independent axpys, two columns per pass as in chol_inline. */
static void chol_solve_inline(const double *L, const double *restrict inv, int n, double *restrict e) {
  int k = 0;
  for (; k + 1 < n; k += 2) {
    const double *Lk = L + (size_t)k * (size_t)n, *Lk1 = Lk + n;
    const double x0 = e[k] *= inv[k];
    e[k + 1] -= Lk[k + 1] * x0;
    const double x1 = e[k + 1] *= inv[k + 1];
    tl_v2_axmy2(e + k + 2, Lk + k + 2, x0, Lk1 + k + 2, x1, n - k - 2);
  }
  if (k < n) e[k] *= inv[k];
  int i = n - 1;
  for (; i >= 1; i -= 2) {
    const double *Li = L + (size_t)i * (size_t)n, *Li1 = Li - n;
    const double x1 = e[i] *= inv[i];
    e[i - 1] -= Li[i - 1] * x1;
    const double x0 = e[i - 1] *= inv[i - 1];
    tl_v2_axmy2(e, Li, x1, Li1, x0, i - 1);
  }
  if (i == 0) e[0] *= inv[0];
}

/* Factor M = A_FF + R_F (+ eps diag A_FF) into w->dM; 0 if not positive definite. */
static int direct_factor(tl_world *w, const int *F, const double *Rf, int nf, double eps) {
  const int n = w->dense_n;
  double *M = w->dM;
  for (int a = 0; a < nf; a++) {
    const double *Aa = w->dA + (size_t)F[a] * (size_t)n;
    if (nf == n) /* every row free: F is the identity */
      for (int c = 0; c <= a; c++) M[a * nf + c] = Aa[c];
    else
      for (int c = 0; c <= a; c++) M[a * nf + c] = Aa[F[c]];
    M[a * nf + a] = M[a * nf + a] * (1.0 + eps) + Rf[a];
  }
  if (!chol_inline(M, w->dr + 2 * w->dense_cap, nf)) return 0;
  if (eps > 0) return 1;
  for (int a = 0; a < nf; a++) { /* pivot test: L_aa^2 against the diagonal entry */
    const double d = w->dA[(size_t)F[a] * (size_t)n + F[a]] + Rf[a];
    if (!(M[a * nf + a] * M[a * nf + a] > TL_DIRECT_PIVOT * d)) return 0;
  }
  return 1;
}

/* One direct solve of the rows marked free in st, the others held at the
 * values h: (A_FF + R_F) y_F = target_F - db_F - A_FH h_H (R: the
 * compliance of contact normals and scalar rows); y_H = h_H. y: [2n], its
 * second half scratch. Returns 0 if the free rows' matrix is not positive
 * definite. */
static int direct_linear(tl_world *w, const unsigned char *st, const double *h, double *y) {
  const int n = w->dense_n;
  int *F = w->dfree, nf = 0;
  double *M = w->dM, *r = w->dr, *Rf = w->dr + w->dense_cap, *e = y + n;
  w->dense_nf = 0;
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *b = &w->blocks[i];
    for (int k = 0; k < b->nrow; k++)
      if (st[b->row + k]) {
        F[nf] = b->row + k;
        Rf[nf] = b->kind != TL_ROW_CONTACT || k == 2 ? b->R : 0.0;
        r[nf++] = b->target[k] - w->db[b->row + k];
      }
  }
  for (int j = 0; j < n; j++) y[j] = st[j] ? 0.0 : h[j];
  for (int a = 0; a < nf && nf < n; a++) /* minus A_FH h_H: y is zero on the free rows (none held: no term) */
    r[a] -= tl_dense_dot(n, w->dA + (size_t)F[a] * (size_t)n, y);
  w->dense_nf = nf;
  int refine = shared_body(w, st);
  if (refine || !direct_factor(w, F, Rf, nf, 0.0)) {
    refine = 1;
    if (!direct_factor(w, F, Rf, nf, TL_DIRECT_EPS)) return 0;
  }
  for (int a = 0; a < nf; a++) e[a] = r[a];
  for (int pass = 0;; pass++) { /* the solve, then (regularized) two refinements */
    chol_solve_inline(M, w->dr + 2 * w->dense_cap, nf, e);
    for (int a = 0; a < nf; a++) y[F[a]] += e[a];
    if (!refine || pass == 2) break;
    for (int a = 0; a < nf; a++) { /* residual of (A_FF + R_F) y_F = r */
      const double *Aa = w->dA + (size_t)F[a] * (size_t)n;
      double s = r[a] - Rf[a] * y[F[a]];
      for (int c = 0; c < nf; c++) s -= Aa[F[c]] * y[F[c]];
      e[a] = s;
    }
  }
  return 1;
}

/* Largest residual of the free rows of the last direct_linear, in impulse:
 * |target - v - R lambda| / (G_aa + R_a) for the solution y: the change a
 * Gauss-Seidel update of that row alone would make. */
static double direct_residual(const tl_world *w, const double *y) {
  const int n = w->dense_n, nf = w->dense_nf, *F = w->dfree;
  const double *r = w->dr, *Rf = w->dr + w->dense_cap;
  double worst = 0;
  for (int a = 0; a < nf; a++) {
    const double *Aa = w->dA + (size_t)F[a] * (size_t)n;
    double s = r[a] - Rf[a] * y[F[a]];
    if (nf == n) /* every row free: a contiguous dot */
      s -= tl_v2_dot(Aa, y, n);
    else
      for (int c = 0; c < nf; c++) s -= Aa[F[c]] * y[F[c]];
    const double res = fabs(s) / (Aa[F[a]] + Rf[a]);
    if (res > worst) worst = res;
  }
  return worst;
}

/* Direct solve of the stick / open / bound pattern in w->dstat (an active-set
 * method: Murty's principal pivoting restricted to these statuses, Cottle,
 * Pang, Stone, The Linear Complementarity Problem, 1992, sec. 4.2): solve
 * the free rows exactly with the others held, then move rows whose solution
 * breaks a sign condition (a pressing contact pulling, a held contact
 * penetrating, a scalar row beyond a bound or pushing against the side it
 * rests on) to the other set and solve again, at most 8 times. A pressing
 * contact whose impulse leaves the friction cone slides: that is left to the
 * Gauss-Seidel sweeps (returns 0). On success the impulses of the blocks
 * become the solution (returns 1): the exact solution of the problem when
 * no contact slides; 2 when, besides, no free row is off its equation by
 * more than the tolerance makes an impulse of: the solve is converged
 * without a sweep (every sign condition was checked on the way). */
static int direct_solve(tl_world *w) {
  const int n = w->dense_n;
  unsigned char *st = w->dstat;
  double *y = w->dy, *h = w->dy + 2 * n; /* candidate impulses (+ scratch), held values */
  memcpy(h, w->dx, (size_t)n * sizeof(double)); /* held rows: scalar rows at their bound, */
  for (int i = 0; i < w->nblock; i++)               /* contacts that do not press at zero */
    if (w->blocks[i].kind == TL_ROW_CONTACT && !st[w->blocks[i].row]) memset(h + w->blocks[i].row, 0, 3 * sizeof(double));
  for (int round = 0; round < 8; round++) {
    if (!direct_linear(w, st, h, y)) return 0;
    int changed = 0;
    for (int i = 0; i < w->nblock; i++) {
      const tl_block *b = &w->blocks[i];
      const int r0 = b->row;
      double v = 0;
      if (b->kind == TL_ROW_CONTACT) {
        if (st[r0]) {
          double ln = y[r0 + 2], lt = sqrt(y[r0] * y[r0] + y[r0 + 1] * y[r0 + 1]);
          if (ln < 0) { /* pulls: let it open */
            memset(st + r0, 0, 3);
            y[r0] = y[r0 + 1] = y[r0 + 2] = 0;
            changed = 1;
          } else if (lt > b->mu * ln) {
            return 0; /* slides */
          }
        } else {
          v = w->db[r0 + 2] + tl_dense_dot(n, w->dA + (size_t)(r0 + 2) * (size_t)n, y);
          if (v < b->target[2] - w->solver_tol * b->G[8]) { /* penetrates: let it press */
            memset(st + r0, 1, 3);
            changed = 1;
          }
        }
        continue;
      }
      double x = y[r0];
      if (st[r0]) {
        if (x < b->lo || x > b->hi) {
          st[r0] = 0;
          y[r0] = x < b->lo ? b->lo : b->hi;
          changed = 1;
        }
      } else {
        v = w->db[r0] + tl_dense_dot(n, w->dA + (size_t)r0 * (size_t)n, y) + b->R * x - b->target[0];
        double tol = w->solver_tol * (b->G[0] + b->R);
        if ((x <= b->lo && v < -tol) || (x >= b->hi && v > tol)) {
          st[r0] = 1;
          changed = 1;
        }
      }
    }
    if (changed) {
      for (int j = 0; j < n; j++) /* held rows keep their (possibly clamped) values */
        if (!st[j]) h[j] = y[j];
      continue;
    }
    for (int i = 0; i < w->nblock; i++) {
      tl_block *b = &w->blocks[i];
      for (int k = 0; k < b->nrow; k++) b->lambda[k] = y[b->row + k];
    }
    memcpy(w->dx, y, (size_t)n * sizeof(double));
    return direct_residual(w, y) <= w->solver_tol ? 2 : 1;
  }
  return 0;
}

/* New impulse of a scalar row for row velocity v (without the row's own change). */
static double scalar_update(const tl_block *b, double v, double l) {
  double g = b->G[0] + b->R;
  double nl = g > 0 ? l - (v + b->R * l - b->target[0]) / g : l;
  return fmax(b->lo, fmin(b->hi, nl));
}

/* Exact cone update of a contact block for current row velocities v. */
static void cone_update(const tl_block *b, const double v[3], double nl[3]) {
  double G[9], bb[3];
  memcpy(G, b->G, sizeof(G));
  G[8] += b->R;
  for (int r = 0; r < 3; r++)
    bb[r] = v[r] - (b->G[3 * r] * b->lambda[0] + b->G[3 * r + 1] * b->lambda[1] + b->G[3 * r + 2] * b->lambda[2]);
  bb[2] -= b->target[2];
  memcpy(nl, b->lambda, 3 * sizeof(double));
  tl_cone_contact_solve(G, bb, b->mu, nl);
}

/* Pyramid update (PGS): normal first, then each tangent boxed by mu lambda_n. */
static void pyramid_update(const tl_block *b, const double v[3], double sor, double nl[3]) {
  double l[3] = {b->lambda[0], b->lambda[1], b->lambda[2]}, vv[3] = {v[0], v[1], v[2]};
  static const int order[3] = {2, 0, 1};
  for (int i = 0; i < 3; i++) {
    int r = order[i];
    double g = b->G[4 * r] + (r == 2 ? b->R : 0.0);
    double res = vv[r] + (r == 2 ? b->R * l[2] - b->target[2] : 0.0);
    double x = g > 0 ? l[r] - sor * res / g : l[r];
    x = r == 2 ? fmax(0.0, x) : fmax(-b->mu * l[2], fmin(b->mu * l[2], x));
    double dx = x - l[r];
    for (int c = 0; c < 3; c++) vv[c] += b->G[3 * c + r] * dx;
    l[r] = x;
  }
  memcpy(nl, l, sizeof(l));
}

/* Exact update of an equality group: all its rows at once, G dl = v* - J u
 * with the group's Cholesky factor (the rows are unbounded). Returns the
 * largest impulse change. */
static double eqgroup_update(tl_world *w, const tl_eqgroup *g) {
  double *L = w->eq_pool + g->adr, *r = L + (size_t)g->n * (size_t)g->n, change = 0;
  for (int i = 0; i < g->n; i++) {
    const tl_block *b = &w->blocks[g->first + i];
    double v;
    block_velocity(w, b, &v);
    r[i] = b->target[0] - v - b->R * b->lambda[0];
  }
  cholesky_solve(L, g->n, r);
  for (int i = 0; i < g->n; i++) {
    tl_block *b = &w->blocks[g->first + i];
    b->dl[0] = r[i];
    b->lambda[0] += r[i];
    change = fmax(change, fabs(r[i]));
    apply_impulse(w, b, b->dl);
    add_generalized(w, b, b->dl);
  }
  return change;
}

/* One Gauss-Seidel sweep over the blocks. Returns the largest impulse change
 * and in *gen the largest change of a system's generalized impulse J^T lambda. */
static double gauss_seidel_sweep(tl_world *w, int pyramid, double *gen) {
  double change = 0;
  for (int i = 0; i < w->nsystem; i++)
    memset(w->systems[i]->gen_change, 0, (size_t)w->systems[i]->m->nv * sizeof(double));
  for (int n = 0; n < w->nblock; n++) {
    tl_block *b = &w->blocks[n];
    if (!pyramid && b->group >= 0 && w->eqgroups[b->group].factored) {
      change = fmax(change, eqgroup_update(w, &w->eqgroups[b->group]));
      n += w->eqgroups[b->group].n - 1;
      continue;
    }
    double v[3], nl[3] = {0, 0, 0}, dl[3];
    block_velocity(w, b, v);
    if (b->kind == TL_ROW_CONTACT) {
      if (pyramid)
        pyramid_update(b, v, w->sor, nl);
      else
        cone_update(b, v, nl);
    } else {
      double sor = pyramid ? w->sor : 1.0, x = scalar_update(b, v[0], b->lambda[0]);
      nl[0] = fmax(b->lo, fmin(b->hi, b->lambda[0] + sor * (x - b->lambda[0])));
    }
    for (int r = 0; r < b->nrow; r++) {
      dl[r] = nl[r] - b->lambda[r];
      b->dl[r] = dl[r];
      change = fmax(change, fabs(dl[r]));
      b->lambda[r] = nl[r];
    }
    apply_impulse(w, b, dl);
    add_generalized(w, b, dl);
  }
  *gen = 0;
  for (int i = 0; i < w->nsystem; i++)
    for (int k = 0; k < w->systems[i]->m->nv; k++) *gen = fmax(*gen, fabs(w->systems[i]->gen_change[k]));
  return change;
}

/* Squared norm of the last sweep's impulse change. */
static double sweep_norm2(const tl_world *w) {
  double g = 0;
  for (int n = 0; n < w->nblock; n++)
    for (int r = 0; r < w->blocks[n].nrow; r++) g += w->blocks[n].dl[r] * w->blocks[n].dl[r];
  return g;
}

/* Gauss-Seidel sweeps. The per-contact solver's are accelerated by
 * nonsmooth nonlinear conjugate gradients (NNCG: Silcowitz, Niebe, Erleben,
 * "A nonsmooth nonlinear conjugate gradient method for interactive contact
 * force problems", The Visual Computer 26, 2010): the sweep's change is taken
 * as the negative gradient, and lambda moves on by beta p with the
 * Fletcher-Reeves beta, restarting when beta > 1. Sweeps alone stall where
 * the Delassus matrix is nearly singular (two sticking contacts of one edge
 * can trade opposite friction impulses that cost only the normal
 * compliance); the conjugate direction crosses such a valley in a few steps.
 * The next sweep projects lambda back on its cone or box. PGS keeps plain
 * (over-relaxed) sweeps, as ODE's QuickStep.
 * The solve stops after a sweep in which no impulse, or no system's
 * generalized impulse J^T lambda, changed by more than the tolerance. The
 * second test matters where rows are redundant (a joint limit and the
 * friction of the same DOF, a mimic pair at its limits, four corners of a
 * box face): impulses are then not unique, only the motion is, and the
 * sweeps can trade impulse between such rows at no cost (J^T d = 0 exactly
 * when G d = 0, G = J M^-1 J^T) for ever. */
static void solve_gauss_seidel(tl_world *w, int pyramid) {
  int it = 0, converged = 0, tried = 0;
  double change = 0, gprev = 0;
  for (int n = 0; n < w->nblock; n++) memset(w->blocks[n].p, 0, sizeof(w->blocks[n].p));
  for (it = 0; it < w->solver_max_iter && !converged; it++) {
    double gen;
    /* dense per-contact solves: a direct solve of the current pattern before
     * the first sweep and after sweeps 1, 3, 7, 15, ..., when the pattern
     * changed since the last try (direct_solve); the sweep that follows is
     * the convergence test, as for any iterate */
    if (w->dense && !pyramid && ((it + 1) & it) == 0) {
      direct_status(w, w->dstat);
      if (!tried || memcmp(w->dstat, w->dstat_prev, (size_t)w->dense_n)) {
        memcpy(w->dstat_prev, w->dstat, (size_t)w->dense_n);
        tried = 1;
        int d = direct_solve(w);
        if (d) {
          w->stats.direct++;
          gprev = 0;
          for (int n = 0; n < w->nblock; n++) memset(w->blocks[n].p, 0, sizeof(w->blocks[n].p));
        }
        if (d == 2) { /* exact: converged without a sweep */
          change = 0;
          converged = 1;
          break;
        }
      }
    }
    change = gauss_seidel_sweep(w, pyramid, &gen);
    converged = change <= w->solver_tol || gen <= w->solver_tol;
    if (converged) continue;
    /* PGS stays ODE's QuickStep (plain SOR sweeps); and the result is always
     * a sweep's, inside every cone and box: no extrapolation after the last */
    if (pyramid || it + 1 == w->solver_max_iter) continue;
    double g = sweep_norm2(w), beta = gprev > 0 ? g / gprev : 0.0;
    gprev = g;
    for (int n = 0; n < w->nblock; n++) {
      tl_block *b = &w->blocks[n];
      if (beta > 1.0) { /* restart */
        memcpy(b->p, b->dl, sizeof(b->p));
        continue;
      }
      double step[3] = {0, 0, 0};
      for (int r = 0; r < b->nrow; r++) {
        step[r] = beta * b->p[r];
        b->lambda[r] += step[r];
        b->p[r] = step[r] + b->dl[r];
      }
      apply_impulse(w, b, step);
    }
  }
  w->stats.iterations = it;
  w->stats.last_change = change;
  w->stats.converged = converged;
}

/* ---------------- Dantzig ---------------- */

static int dantzig_rows(const tl_world *w) {
  int n = 0;
  for (int i = 0; i < w->nblock; i++) n += w->blocks[i].nrow;
  return n;
}

static void solve_dantzig(tl_world *w) {
  int n = dantzig_rows(w);
  if (n > w->lcp_cap || !w->lcp) { /* beyond the dense capacity: fall back to PGS */
    solve_gauss_seidel(w, 1);
    w->stats.converged = 0;
    return;
  }
  int r = 0;
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *b = &w->blocks[i];
    double v[3];
    block_velocity(w, b, v); /* u is the free velocity: nothing applied yet */
    for (int k = 0; k < b->nrow; k++, r++) {
      w->lcp_row_block[r] = i;
      w->lcp_b[r] = v[k] - b->target[k];
      w->lcp_findex[r] = -1;
      w->lcp_mu[r] = 0;
      if (b->kind == TL_ROW_CONTACT) {
        w->lcp_lo[r] = k == 2 ? 0.0 : -INFINITY;
        w->lcp_hi[r] = INFINITY;
        if (k < 2) {
          w->lcp_findex[r] = r + (2 - k);
          w->lcp_mu[r] = b->mu;
        }
      } else {
        w->lcp_lo[r] = b->lo;
        w->lcp_hi[r] = b->hi;
      }
    }
  }
  number_rows(w);
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *a = &w->blocks[i];
    for (int j = 0; j < w->nblock; j++) {
      const tl_block *b = &w->blocks[j];
      double G[9];
      if (i == j)
        memcpy(G, a->G, sizeof(G));
      else if (share_system(a, b))
        delassus_block(w, a, b, G);
      else
        memset(G, 0, sizeof(G));
      for (int ka = 0; ka < a->nrow; ka++)
        for (int kb = 0; kb < b->nrow; kb++) w->lcp_A[(size_t)(a->row + ka) * n + b->row + kb] = G[ka * b->nrow + kb];
    }
    for (int ka = 0; ka < a->nrow; ka++)
      w->lcp_A[(size_t)(a->row + ka) * n + a->row + ka] += (a->kind != TL_ROW_CONTACT || ka == 2) ? a->R : 0.0;
  }
  tl_lcp_stats st;
  memset(w->lcp_x, 0, (size_t)n * sizeof(double));
  int fail = tl_lcp_dantzig(w->lcp, n, w->lcp_A, w->lcp_b, w->lcp_lo, w->lcp_hi, w->lcp_findex, w->lcp_mu,
                            w->lcp_x, &st);
  for (int i = 0, ri = 0; i < w->nblock; i++) {
    tl_block *b = &w->blocks[i];
    double dl[3];
    for (int k = 0; k < b->nrow; k++, ri++) {
      dl[k] = w->lcp_x[ri];
      b->lambda[k] = w->lcp_x[ri];
    }
    apply_impulse(w, b, dl);
  }
  w->stats.iterations = st.pivots;
  w->stats.last_change = st.residual;
  w->stats.converged = !fail;
  if (fail) { /* over-constrained friction: finish with PGS from Dantzig's best iterate */
    int pivots = st.pivots;
    solve_gauss_seidel(w, 1);
    w->stats.iterations += pivots;
  }
}

/* ---------------- statistics and the solve ---------------- */

static void contact_residuals(tl_world *w) {
  double sig = 0, cone = 0, dis = 0;
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *b = &w->blocks[i];
    if (b->kind != TL_ROW_CONTACT) continue;
    double v[3];
    block_velocity_u(w, b, v);
    const double *l = b->lambda;
    double vn = v[2] + b->R * l[2] - b->target[2], lt = sqrt(l[0] * l[0] + l[1] * l[1]), vt = sqrt(v[0] * v[0] + v[1] * v[1]);
    sig = fmax(sig, fabs(fmin(l[2], vn)));
    cone = fmax(cone, lt - b->mu * l[2]);
    dis = fmax(dis, vt * fmax(b->mu * l[2] - lt, 0.0) + (lt * vt + l[0] * v[0] + l[1] * v[1]));
  }
  w->stats.signorini = sig;
  w->stats.cone = fmax(cone, 0.0);
  w->stats.dissipation = dis;
}

/* ---------------- impact pass (restitution) ---------------- */

/* Impulse of one impact on contact block b at the current velocities: if
 * the contact approaches faster than its restitution threshold and touches
 * within the step (gap <= -v_n dt), the impulse lambda (exact cone, Delassus
 * block G without compliance) after which v_n = -e v_n and the tangential
 * velocity is stopped or slides; returns 1 and applies it, else 0. */
static int impact_pulse(tl_world *w, tl_block *b) {
  tl_wcontact *c = &w->contacts[b->contact];
  double v[3], bb[3], l[3] = {0, 0, 0};
  block_velocity(w, b, v);
  double gap = -c->depth;
  if (!(v[2] < -c->threshold) || (gap > 0 && -v[2] * w->dt < gap)) return 0;
  memcpy(bb, v, sizeof(bb));
  bb[2] += c->restitution * v[2];
  tl_cone_contact_solve(b->G, bb, b->mu, l);
  if (!(l[2] > 0)) return 0;
  apply_impulse(w, b, l);
  for (int r = 0; r < 3; r++) c->impact[r] += l[r];
  return 1;
}

/* Restitution as a pass of its own before the solve, on the velocities at
 * the start of the step (Guendelman, Bridson, Fedkiw, "Nonconvex rigid bodies
 * with stacking", SIGGRAPH 2003: collisions, then contact): sweeps over the
 * contacts with restitution > 0 apply an impulse to each one that approaches
 * (impact_pulse, Newton's law on its current approach velocity), until a
 * sweep applies none. One such impulse with e = 1 and no friction keeps the
 * kinetic energy exactly (dT = lambda (v_n + G lambda / 2) = 0), so any
 * sequence of them does: an impact travels through a chain of bodies one
 * contact after the other, as in Newton's cradle, instead of being shared
 * among simultaneous contacts. The impulses use the exact Delassus block, so
 * they do not depend on the contact compliance. The step's forces are added
 * after the pass (u = u_start + impulses + (u_free - u_start)), and each
 * contact that took an impulse keeps its normal velocity after the pass as
 * the lower bound of its target in the solve, which absorbs what the forces
 * of the step (gravity) would change of it: as if the impact ended the step,
 * so that with semi-implicit Euler a bouncing body keeps its energy (the
 * integrator's invariant E - dt g . v / 2 holds across the bounce). At most
 * 10 x max_iter sweeps; what is left then is solved inelastically. */
static void solve_impacts(tl_world *w) {
  int any = 0;
  for (int i = 0; i < w->ncontact; i++) { /* integrate2 may solve a step more than once */
    memset(w->contacts[i].impact, 0, sizeof(w->contacts[i].impact));
    any |= w->contacts[i].restitution > 0;
  }
  if (!any) return;
  set_base(w, 1); /* the velocities at the start of the step */
  int sweeps = 0, applied = 1;
  while (applied && sweeps < 10 * w->solver_max_iter) {
    applied = 0;
    for (int i = 0; i < w->nblock; i++) {
      tl_block *b = &w->blocks[i];
      if (b->kind != TL_ROW_CONTACT || !(w->contacts[b->contact].restitution > 0)) continue;
      if (impact_pulse(w, b)) applied = 1, w->stats.impacts++;
    }
    sweeps++;
  }
  w->stats.impact_sweeps = sweeps;
  for (int i = 0; i < w->nblock && w->stats.impacts > 0; i++) {
    tl_block *b = &w->blocks[i];
    const double *imp = b->kind == TL_ROW_CONTACT ? w->contacts[b->contact].impact : NULL;
    if (!imp || (imp[0] == 0 && imp[1] == 0 && imp[2] == 0)) continue;
    double v[3];
    block_velocity(w, b, v);
    b->target[2] = fmax(b->target[2], v[2]);
    b->R = w->contacts[b->contact].cfm; /* rigid while it ends the impact: no relative compliance */
  }
  /* the forces of the step come after the impacts: the base becomes the free
   * velocity, the impact impulses stay in z */
}

/* u = u_free + L^-1 z for every system with constraint rows (tl_block). */
static void finish_velocities(tl_world *w) {
  for (int i = 0; i < w->nsystem; i++) {
    tl_system *s = w->systems[i];
    if (!s->in_solve) continue;
    tl_dyn_solve_lower(&s->d, s->z);
    for (int k = 0; k < s->m->nv; k++) s->d.u[k] = s->u_free[k] + s->z[k];
  }
}

/* The solver of the world on blocks [0, nblock), from z = 0 plus the impact
 * impulses, warm-started from the blocks' lambda; leaves the impulses in z. */
static void run_solver(tl_world *w) {
  if (w->solver == TL_SOLVER_DANTZIG) {
    solve_dantzig(w);
    return;
  }
  int n = number_rows(w);
  if (n <= w->dense_cap && dense_pays(w)) { /* small coupled problems: on the dense Delassus matrix */
    w->dense_n = n;
    dense_assemble(w); /* db from the velocity form */
    w->dense = 1;
  }
  for (int i = 0; i < w->nblock; i++) { /* warm start: last step's impulses, clamped */
    tl_block *b = &w->blocks[i];
    if (b->nrow == 1) b->lambda[0] = fmax(b->lo, fmin(b->hi, b->lambda[0]));
    apply_impulse(w, b, b->lambda);
  }
  factor_eqgroups(w);
  solve_gauss_seidel(w, w->solver == TL_SOLVER_PGS);
  if (w->dense) { /* the impulses into z */
    w->dense = 0;
    for (int i = 0; i < w->nblock; i++) apply_impulse(w, &w->blocks[i], w->blocks[i].lambda);
  }
}

/* 1 if every deferred contact (blocks [first, nblock)) is satisfied with no
 * impulse at the solution (u after the solve): its normal velocity does not
 * fall below its target by more than the solve's tolerance makes an impulse
 * of (then its lambda = 0 is the complementary solution, and leaving it out
 * changed nothing). Their Delassus blocks are computed only here, and only
 * for one that falls below its target at all. */
static int deferred_hold(tl_world *w, int first) {
  for (int i = first; i < w->nblock; i++) {
    tl_block *b = &w->blocks[i];
    double v[3];
    block_velocity_u(w, b, v);
    if (!(b->target[2] - v[2] > 0)) continue;
    if (!b->finished) finish_block(w, b);
    if (b->target[2] - v[2] > w->solver_tol * (b->G[8] + b->R)) return 0;
  }
  return 1;
}

void tl_world_solve_constraints(tl_world *w) {
  memset(&w->stats, 0, sizeof(w->stats));
  w->stats.nblock = w->nblock;
  w->stats.ncontact = w->ncontact;
  for (int i = 0; i < w->nblock; i++) w->stats.nrow += w->blocks[i].nrow;
  if (w->nblock == 0) {
    w->stats.converged = 1;
    return;
  }
  for (int i = 0; i < w->nsystem; i++) w->systems[i]->in_solve = 0;
  for (int i = 0; i < w->nblock; i++) {
    w->systems[w->blocks[i].sa]->in_solve = 1;
    if (w->blocks[i].sb >= 0) w->systems[w->blocks[i].sb]->in_solve = 1;
  }
  for (int i = 0; i < w->nsystem; i++)
    if (w->systems[i]->in_solve) memset(w->systems[i]->z, 0, (size_t)w->systems[i]->m->nv * sizeof(double));
  solve_impacts(w);
  set_base(w, 0);
  const int nall = w->nblock;
  int nsolve = w->stats.impacts ? nall : w->nblock_solve, sweeps = 0;
  for (;;) {
    w->nblock = nsolve; /* the deferred contacts (the last blocks) sit out */
    run_solver(w);
    sweeps += w->stats.iterations;
    w->nblock = nall;
    finish_velocities(w);
    if (nsolve == nall || deferred_hold(w, nsolve)) break;
    for (int i = nsolve; i < nall; i++) /* one of them pushes after all: solve again with every block */
      if (!w->blocks[i].finished) finish_block(w, &w->blocks[i]);
    for (int i = 0; i < w->nsystem; i++)
      if (w->systems[i]->in_solve) memset(w->systems[i]->z, 0, (size_t)w->systems[i]->m->nv * sizeof(double));
    nsolve = nall;
    w->stats.deferred_retry = 1;
  }
  w->stats.iterations = sweeps;
  w->stats.deferred = nall - nsolve;
  contact_residuals(w);
  for (int i = 0; i < w->nsystem; i++)
    memset(w->systems[i]->lambda_joint, 0, TL_JOINT_SLOTS * (size_t)w->systems[i]->m->nv * sizeof(double));
  for (int i = 0; i < w->nblock; i++) {
    const tl_block *b = &w->blocks[i];
    if (b->contact >= 0) memcpy(w->contacts[b->contact].lambda, b->lambda, sizeof(b->lambda));
    if (b->slot >= 0) /* the velocity limit's impulse signed by its side (its J entry) */
      w->systems[b->sa]->lambda_joint[TL_JOINT_SLOTS * b->dof + b->slot] =
          b->slot == 4 ? w->pool[b->adr[0]] * b->lambda[0] : b->lambda[0];
  }
}
