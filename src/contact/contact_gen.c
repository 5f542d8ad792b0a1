/* Contact generation of a world's step (tl_world_collide): the broadphase's
 * candidate pairs (broadphase.c) through the narrowphase (contact/narrowphase.h)
 * become contact points (tl_wcontact) with a tangent frame, the pair's
 * material (friction, restitution, ERP / CFM: the material pair table, else
 * the slipperier geom's friction), the normal velocity at detection, the
 * target normal velocity of the solve (a speculative gap kept from closing,
 * else penetration removed at rate erp / dt, ODE's ERP), and an impulse to
 * warm-start from: the last step's contacts of the same pair, matched within
 * 1 cm, closest first, each old impulse given to one new point in its frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math/tl_math.h"
#include "native/native_internal.h"

/* ---------------- materials ---------------- */

static const char *geom_material(const tl_world *w, const tl_geom_ref *g) {
  return g->system < 0 ? w->statics[g->geom].material : w->systems[g->system]->m->geom_material[g->geom];
}

static double geom_friction(const tl_world *w, const tl_geom_ref *g) {
  return g->system < 0 ? w->statics[g->geom].friction : w->systems[g->system]->m->geom_friction[g->geom];
}

/* Friction, restitution and restitution threshold of a pair: the material
 * pair table when both have named materials listed there; otherwise the
 * smaller of the geoms' friction coefficients (the slipperier surface
 * decides) and the world default restitution. */
static void pair_material(const tl_world *w, const tl_geom_ref *a, const tl_geom_ref *b, double *mu,
                          double *e, double *thr, double *erp, double *cfm) {
  *erp = w->opt.erp;
  *cfm = w->opt.cfm;
  /* a pair of names is in the table at most once (tl_world_set_material_pair), so the scan of a short
     table and the hash lookup of a long one find the same entry */
  int k = -1;
  if (w->npair > 0 && w->npair <= 4) {
    const char *ma = geom_material(w, a), *mb = geom_material(w, b);
    for (int i = 0; i < w->npair && k < 0; i++) {
      const tl_material_pair *p = &w->pairs[i];
      if ((!strcmp(p->a, ma) && !strcmp(p->b, mb)) || (!strcmp(p->a, mb) && !strcmp(p->b, ma))) k = i;
    }
  } else if (w->npair > 4) {
    k = tl_world_find_pair(w, geom_material(w, a), geom_material(w, b));
  }
  if (k >= 0) {
    const tl_material_pair *p = &w->pairs[k];
    *mu = p->mu;
    *e = p->restitution;
    *thr = p->threshold;
    if (!isnan(p->erp)) *erp = p->erp;
    if (!isnan(p->cfm)) *cfm = p->cfm;
    return;
  }
  double fa = geom_friction(w, a), fb = geom_friction(w, b);
  *mu = fa < fb ? fa : fb; /* fmin of non-NaN values (the friction setters refuse NaN), inlined */
  *e = w->opt.default_restitution;
  *thr = w->opt.default_threshold;
}

/* ---------------- contacts ---------------- */

/* Orthonormal tangents t1, t2 completing the normal n (rows of frame). */
static void contact_frame(double frame[9], const double n[3]) {
  double t1[3], t2[3], a[3] = {1, 0, 0};
  if (fabs(n[0]) > 0.8) tl_v3_set(a, 0, 1, 0);
  tl_v3_cross(t1, n, a);
  tl_v3_normalize(t1);
  tl_v3_cross(t2, n, t1);
  memcpy(frame, t1, sizeof(t1));
  memcpy(frame + 3, t2, sizeof(t2));
  memcpy(frame + 6, n, 3 * sizeof(double));
}

/* Relative normal velocity of a with respect to b at the contact point. */
static double normal_velocity(const tl_world *w, const tl_wcontact *c) {
  double va[3] = {0, 0, 0}, vb[3] = {0, 0, 0};
  tl_dyn_point_velocity(&w->systems[c->sa]->d, c->ba, c->pos, va);
  if (c->sb >= 0) tl_dyn_point_velocity(&w->systems[c->sb]->d, c->bb, c->pos, vb);
  tl_v3_sub(va, va, vb);
  return tl_v3_dot(va, c->frame + 6);
}

/* Target normal velocity of the solve: stop a speculative gap from closing,
 * else remove the penetration beyond `slop` at rate erp / dt (capped).
 * Restitution is not a target: impacts are resolved before the solve by the
 * impact pass (impact.c, tl_solver_impacts). */
static double target_velocity(const tl_world *w, const tl_wcontact *c) {
  double gap = -c->depth, dt = w->opt.dt;
  if (gap > 0) return -gap / dt;
  /* fmin(erp * fmax(depth - slop, 0) / dt, max_recovery_speed) as comparisons, which
   * inline (the libm calls do not without -ffast-math): the same value, NaN included */
  double over = c->depth - w->opt.slop, v;
  over = over > 0.0 ? over : 0.0;
  v = c->erp * over / dt;
  return v < w->opt.max_recovery_speed ? v : w->opt.max_recovery_speed;
}

static int same_pair(const tl_wcontact *p, const tl_geom_ref *a, const tl_geom_ref *b) {
  return p->sa == a->system && p->ga == a->geom && p->sb == b->system && p->gb == b->geom;
}

/* The last step's contacts of the pair (a, b): each pair is collided once
 * per step and its points are added together, so they are one run of prev,
 * [*lo, *hi). Looked for where the last pair's run ended first (the pairs
 * come in nearly the same order every step), then from the start. */
static void prev_run(tl_world *w, const tl_geom_ref *a, const tl_geom_ref *b, int *lo, int *hi) {
  tl_native *nat = tl_native_of(w);
  int i = nat->prev_cursor < nat->nprev && same_pair(&nat->prev[nat->prev_cursor], a, b) ? nat->prev_cursor : 0;
  while (i < nat->nprev && !same_pair(&nat->prev[i], a, b)) i++;
  *lo = i;
  while (i < nat->nprev && same_pair(&nat->prev[i], a, b)) i++;
  *hi = i;
  if (i > *lo) nat->prev_cursor = i;
}

/* Old contact p's impulse re-expressed in new contact c's frame, as c's. */
static void give_impulse(tl_wcontact *c, const tl_wcontact *p) {
  double f[3] = {0, 0, 0};
  for (int r = 0; r < 3; r++) tl_v3_addscl(f, p->frame + 3 * r, p->lambda[r]);
  for (int r = 0; r < 3; r++) c->lambda[r] = tl_v3_dot(c->frame + 3 * r, f);
}

/* Warm start of the new contacts c[0..n) of a pair from the last step's
 * contacts of the pair, prev[lo..hi): each old contact gives its impulse (in
 * the new contact's frame) to at most one new contact within 1 cm, the
 * closest pairs first (ties by order). A point that moved a little and its
 * new neighbour then do not both inherit the same impulse: doubled, it
 * would start the solve with twice the load on that foot. */
static void warm_start(const tl_world *w, tl_wcontact *c, int n, int lo, int hi) {
  tl_native *nat = tl_native_of(w);
  double d2[TL_MAX_PAIR_CONTACTS][TL_MAX_PAIR_CONTACTS];
  unsigned used_new = 0, used_old = 0;
  if (hi - lo > TL_MAX_PAIR_CONTACTS) hi = lo + TL_MAX_PAIR_CONTACTS;
  if (n == 1) { /* one new contact (a sphere's): the first closest old one within 1 cm, as below */
    int bj = -1;
    double best = 1e-4;
    memset(c->lambda, 0, sizeof(c->lambda));
    for (int j = lo; j < hi; j++) {
      double d[3], e;
      tl_v3_sub(d, nat->prev[j].pos, c->pos);
      e = tl_v3_dot(d, d);
      if (e < best) best = e, bj = j;
    }
    if (bj >= 0) give_impulse(c, &nat->prev[bj]);
    return;
  }
  for (int i = 0; i < n; i++) {
    memset(c[i].lambda, 0, sizeof(c[i].lambda));
    for (int j = lo; j < hi; j++) {
      double d[3];
      tl_v3_sub(d, nat->prev[j].pos, c[i].pos);
      d2[i][j - lo] = tl_v3_dot(d, d);
    }
  }
  for (;;) {
    int bi = -1, bj = -1;
    double best = 1e-4; /* m^2: 1 cm */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < hi - lo; j++)
        if (!(used_new >> i & 1) && !(used_old >> j & 1) && d2[i][j] < best) best = d2[i][j], bi = i, bj = j;
    if (bi < 0) break;
    used_new |= 1u << bi;
    used_old |= 1u << bj;
    give_impulse(&c[bi], &nat->prev[lo + bj]);
  }
}

static void add_contacts(tl_world *w, const tl_geom_ref *a, const tl_geom_ref *b,
                         const tl_contact_point *pts, int n) {
  tl_native *nat = tl_native_of(w);
  double mu, e, thr, erp, cfm;
  int lo, hi;
  pair_material(w, a, b, &mu, &e, &thr, &erp, &cfm);
  prev_run(w, a, b, &lo, &hi);
  tl_wcontact *first = &nat->contacts[nat->ncontact];
  int added = 0;
  for (int i = 0; i < n && nat->ncontact < nat->cap_contact; i++, added++) {
    tl_wcontact *c = &nat->contacts[nat->ncontact++];
    memset(c->impact, 0, sizeof(c->impact)); /* every other field is set here or in warm_start */
    c->sa = a->system; c->ba = a->body; c->ga = a->geom;
    c->sb = b->system; c->bb = b->body; c->gb = b->geom;
    memcpy(c->pos, pts[i].pos, sizeof(c->pos));
    contact_frame(c->frame, pts[i].normal);
    c->depth = pts[i].depth;
    c->mu = mu;
    c->restitution = e;
    c->threshold = thr;
    c->cfm = cfm;
    c->erp = erp;
    c->vn_pre = normal_velocity(w, c);
    c->vtarget = target_velocity(w, c);
  }
  warm_start(w, first, added, lo, hi);
}

/* Contacts of the geomrefs ia and ib (their shapes are this step's). */
static void collide_pair(tl_world *w, int ia, int ib) {
  tl_native *nat = tl_native_of(w);
  if (nat->geomrefs[ia].system < 0) { /* contact side a is always a system's geom */
    int t = ia;
    ia = ib;
    ib = t;
  }
  const tl_geom_ref *a = &nat->geomrefs[ia], *b = &nat->geomrefs[ib];
  const tl_shape *sa = &nat->shapes[ia], *sb = &nat->shapes[ib];
  if ((sa->type == TL_GEOM_MESH && !sa->hull) || (sb->type == TL_GEOM_MESH && !sb->hull)) return;
  tl_contact_point pts[TL_MAX_PAIR_CONTACTS];
  int n = tl_collide(sa, sb, w->opt.contact_margin, pts);
  if (n > 0) add_contacts(w, a, b, pts, n);
}

void tl_world_collide(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  /* keep last step's contacts for warm starting */
  tl_wcontact *t = nat->prev;
  nat->prev = nat->contacts;
  nat->contacts = t;
  nat->nprev = nat->ncontact;
  nat->ncontact = 0;
  nat->prev_cursor = 0;
  tl_world_broadphase(w);
  for (int i = 0; i < nat->npair_c; i++) collide_pair(w, nat->cpairs[i].a, nat->cpairs[i].b);
}
