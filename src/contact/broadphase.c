/* The broadphase of a world: the geom list, a broadphase in three levels,
 * ODE-style category/collide bitfield filtering and ignore lists, giving the
 * step's candidate geom pairs (tl_world_broadphase). contact_gen.c turns them
 * into contacts through the narrowphase (contact/narrowphase.h).
 *
 * Broadphase: units are the static geoms and the systems. A system's box is
 * the union of its bodies' boxes, each the box of a sphere fixed in the body
 * that holds all its geoms (computed once, when objects are added). Units
 * are swept and pruned on x (Baraff's thesis, 1992; the order is kept
 * between steps and re-sorted by insertion, near O(n) for coherent motion);
 * within an overlapping pair of units, bodies are tested first and only the
 * geoms of overlapping bodies get a pose and a box: a robot standing on the
 * ground poses its feet, not its 60 other geoms. The candidate geom pairs
 * are then sorted by geom index before the narrowphase, so the order of the
 * contacts (and so of the Gauss-Seidel sweeps) depends on the state alone,
 * never on the history of the sweep order. What depends on the filters and
 * the objects alone (which geoms may collide at all, the static geoms' shapes
 * and boxes) is kept between steps and recomputed after
 * tl_world_filters_changed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math/tl_math.h"
#include "native/native_internal.h"

/* ---------------- the geom list ---------------- */

/* Radius about its own origin of a sphere holding geom g of system s. */
static double geom_radius(const tl_system *s, int g) {
  const double *sz = s->m->geom_size + 3 * g;
  switch (s->m->geom_type[g]) {
    case TL_GEOM_SPHERE: return sz[0];
    case TL_GEOM_BOX: return 0.5 * sqrt(sz[0] * sz[0] + sz[1] * sz[1] + sz[2] * sz[2]);
    case TL_GEOM_CAPSULE: return sz[0] + 0.5 * sz[1];
    case TL_GEOM_CYLINDER: return sqrt(sz[0] * sz[0] + 0.25 * sz[1] * sz[1]);
    case TL_GEOM_MESH: {
      int h = s->m->geom_hull[g];
      double r = 0;
      if (h < 0) return 0;
      const tl_hull *hl = &s->hulls[h];
      for (int v = 0; v < hl->nvert; v++) r = fmax(r, tl_v3_norm(hl->vert + 3 * v));
      return r;
    }
    default: return INFINITY;
  }
}

/* Capacity for need entries when cap are allocated: need, or 1.5 cap when that is more
 * (geometric growth: n additions cost O(n) copies in all, and at most half again the memory). */
static int grown_cap(int need, int cap) { return need > cap + cap / 2 ? need : cap + cap / 2; }

/* Where the update of the geom list starts (tl_world_rebuild_geoms): *from,
 * the first system whose geoms are appended (0: all), *sfrom, the first
 * static geom appended while there is no system (0: all). */
static void geoms_from(const tl_world *w, int *from, int *sfrom) {
  const tl_native *nat = tl_native_of(w);
  const int valid = nat->geoms_valid;
  *from = valid && nat->geoms_nstatic == w->nstatic && nat->geoms_nsystem <= w->nsystem ? nat->geoms_nsystem : 0;
  *sfrom = valid && w->nsystem == 0 && nat->geoms_nsystem == 0 && nat->geoms_nstatic <= w->nstatic ? nat->geoms_nstatic : 0;
}

void tl_world_size_geoms(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int from, sfrom;
  geoms_from(w, &from, &sfrom);
  int n = from ? nat->ngeomref : w->nstatic;
  for (int i = from; i < w->nsystem; i++) n += w->systems[i]->m->ngeom;
  int cap_contact = 16 * n + 64;
  if (cap_contact > nat->cap_contact) {
    if (cap_contact > nat->alloc_contact) nat->alloc_contact = grown_cap(cap_contact, nat->alloc_contact);
    nat->cap_contact = cap_contact;
    nat->ncontact = nat->nprev = 0;
  }
  if (n > nat->cap_geomref) nat->cap_geomref = grown_cap(n, nat->cap_geomref);
  /* the broadphase's units (rebuild_units): systems, bodies, geoms (n of them), units */
  int nu = w->nstatic + w->nsystem, nb = from ? nat->body_adr[from] : 0;
  for (int i = from; i < w->nsystem; i++) nb += w->systems[i]->m->nbody;
  if (w->nsystem + 1 > nat->cap_usys) nat->cap_usys = grown_cap(w->nsystem + 1, nat->cap_usys);
  if (nb + 1 > nat->cap_ubody) nat->cap_ubody = grown_cap(nb + 1, nat->cap_ubody);
  if (n + 1 > nat->cap_ugeom) nat->cap_ugeom = grown_cap(n + 1, nat->cap_ugeom);
  if (nu + 1 > nat->cap_uunit) nat->cap_uunit = grown_cap(nu + 1, nat->cap_uunit);
}

/* Per unit (static geom, then system) and per body of every system: the
 * arrays of the broadphase, and each body's sphere (centre in the body frame,
 * radius; -1: no geom) around its geoms, for systems [from, nsystem): the
 * entries of systems before `from` are kept (from > 0 only when the static
 * geoms and those systems are unchanged since the last call); units from
 * ufrom on are appended to unit_order (the units before it unchanged). The
 * arrays are sized (tl_world_size_geoms). */
static void rebuild_units(tl_world *w, int from, int ufrom) {
  tl_native *nat = tl_native_of(w);
  int nu = w->nstatic + w->nsystem, nb0 = from ? nat->body_adr[from] : 0;
  /* unit_order: a permutation of the units kept between steps (speed only): the new units go last */
  for (int u = ufrom; u < nu; u++) nat->unit_order[u] = u;
  int adr = nb0, gadr = from ? nat->sys_geom[from] : w->nstatic, ng = from ? nat->body_geom_adr[nb0] : 0;
  for (int i = from; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    const tl_model *m = s->m;
    nat->body_adr[i] = adr;
    nat->sys_geom[i] = gadr;
    gadr += m->ngeom;
    for (int b = 0; b < m->nbody; b++) {
      double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, *sp = nat->bsphere + 4 * (adr + b);
      int any = 0, r = b;
      while (r > 0 && m->jnt_nv[r] == 0) r = m->parent[r]; /* welded: fixed joints up to a fixed base */
      nat->body_welded[adr + b] = m->jnt_nv[r] == 0;
      nat->body_geom_adr[adr + b] = ng;
      for (int g = 0; g < m->ngeom; g++)
        if (m->geom_body[g] == b) {
          nat->gradius[nat->sys_geom[i] + g] = geom_radius(s, g);
          nat->body_geoms[ng++] = nat->sys_geom[i] + g;
        }
      for (int g = 0; g < m->ngeom; g++) {
        if (m->geom_body[g] != b) continue;
        double r = geom_radius(s, g);
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], m->geom_pos[3 * g + k] - r), hi[k] = fmax(hi[k], m->geom_pos[3 * g + k] + r);
        any = 1;
      }
      sp[3] = -1;
      if (!any) continue;
      for (int k = 0; k < 3; k++) sp[k] = 0.5 * (lo[k] + hi[k]);
      double rad = 0;
      for (int g = 0; g < m->ngeom; g++) {
        if (m->geom_body[g] != b) continue;
        double d[3];
        tl_v3_sub(d, m->geom_pos + 3 * g, sp);
        rad = fmax(rad, tl_v3_norm(d) + geom_radius(s, g));
      }
      sp[3] = rad;
    }
    adr += m->nbody;
  }
  nat->body_adr[w->nsystem] = adr;
  nat->body_geom_adr[adr] = ng;
  nat->sys_geom[w->nsystem] = gadr;
}

/* The geom list and the broadphase arrays after objects were added (not while
 * stepping; world_internal.h), in arrays sized by tl_world_size_geoms. Appends
 * the geoms of the systems added since the last call when the static geoms are
 * unchanged, and the static geoms added while there is no system (a world
 * file's order: static geometry first), else rebuilds the whole list. */
void tl_world_rebuild_geoms(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  int from, sfrom;
  geoms_from(w, &from, &sfrom);
  int k = from ? nat->ngeomref : sfrom;
  if (!from)
    for (int i = sfrom; i < w->nstatic; i++) nat->geomrefs[k++] = (tl_geom_ref){.system = -1, .body = -1, .geom = i};
  for (int i = from; i < w->nsystem; i++) {
    const tl_model *m = w->systems[i]->m;
    for (int g = 0; g < m->ngeom; g++)
      nat->geomrefs[k++] = (tl_geom_ref){.system = i, .body = m->geom_body[g], .geom = g};
  }
  nat->ngeomref = k;
  w->filters_stale = 1;
  rebuild_units(w, from, from ? w->nstatic + from : sfrom);
  nat->geoms_nstatic = w->nstatic;
  nat->geoms_nsystem = w->nsystem;
  nat->geoms_valid = 1;
}

/* Shape of model geom k of system sys on a body at (x, R) (world position and
 * rotation, row-major; tl_geom_pose_at). */
static void system_shape(const tl_system *sys, int k, const double x[3], const double R[9], tl_shape *out) {
  const tl_model *m = sys->m;
  const int h = m->geom_hull[k];
  out->type = m->geom_type[k];
  memcpy(out->size, m->geom_size + 3 * k, 3 * sizeof(double));
  tl_geom_pose_at(m, k, x, R, out->pos, out->rot);
  out->hull = h >= 0 ? &sys->hulls[h] : NULL;
  out->heightmap = NULL;
}

void tl_world_geom_shape(const tl_world *w, const tl_geom_ref *g, tl_shape *out) {
  if (g->system < 0) {
    const tl_static_geom *s = &w->statics[g->geom];
    out->type = s->type;
    out->hull = NULL;
    out->heightmap = NULL;
    memcpy(out->size, s->size, sizeof(s->size));
    memcpy(out->pos, s->pos, sizeof(s->pos));
    memcpy(out->rot, s->rot, sizeof(s->rot));
    if (s->heightmap >= 0) out->heightmap = &w->heightmaps[s->heightmap];
    return;
  }
  const tl_system *sys = w->systems[g->system];
  const int b = g->body;
  system_shape(sys, g->geom, sys->d.xpos + 3 * b, sys->d.xrot + 9 * b, out);
}

/* ---------------- filtering ---------------- */

static unsigned geom_group(const tl_world *w, const tl_geom_ref *g) {
  return g->system < 0 ? w->statics[g->geom].group : w->systems[g->system]->m->geom_group[g->geom];
}

static unsigned geom_mask(const tl_world *w, const tl_geom_ref *g) {
  return g->system < 0 ? w->statics[g->geom].mask : w->systems[g->system]->m->geom_mask[g->geom];
}

/* A body that cannot move: the welded base of a fixed-base system (body_welded). */
static int welded(const tl_native *nat, int s, int b) {
  return s < 0 || nat->body_welded[nat->body_adr[s] + b];
}

static int ignored(const tl_world *w, int sa, int ba, int sb, int bb) {
  for (int i = 0; i < w->ignore_n; i++) {
    const int *p = w->ignore + 4 * i;
    if ((p[0] == sa && p[1] == ba && p[2] == sb && p[3] == bb) ||
        (p[0] == sb && p[1] == bb && p[2] == sa && p[3] == ba))
      return 1;
  }
  return 0;
}

static inline int may_collide(const tl_world *w, const tl_native *nat, const tl_geom_ref *a, const tl_geom_ref *b) {
  if (a->system < 0 && b->system < 0) return 0;
  if (welded(nat, a->system, a->body) && welded(nat, b->system, b->body)) return 0;
  for (int k = 0; k < 2; k++) {
    const tl_geom_ref *g = k ? b : a;
    if (g->system >= 0 && w->systems[g->system]->integrator == TL_INTEGRATOR_RK4) return 0;
  }
  if (a->system == b->system) {
    const tl_system *s = w->systems[a->system];
    if (a->body == b->body || !s->self_collision) return 0;
    if (s->m->parent[a->body] == b->body || s->m->parent[b->body] == a->body) return 0;
  }
  if (!(geom_group(w, a) & geom_mask(w, b)) || !(geom_group(w, b) & geom_mask(w, a))) return 0;
  return !ignored(w, a->system, a->body, b->system, b->body);
}

/* ---------------- broadphase ---------------- */

/* Group and mask bits that some geom of a set offers (OR over the set). */
typedef struct filter_bits {
  unsigned group, mask;
} filter_bits;

/* Geoms that could collide with some other geom, from the filters alone (no
 * poses): a system geom (Euler-integrated system) is active when a static
 * geom, a geom of another such system, or (self-collision on) another geom of
 * its own system passes the group / mask test against it, tested against the
 * OR of each set's bits (conservative: never leaves out a geom that can
 * collide; the pair tests of may_collide still decide). A static geom is
 * active when some system geom is. Inactive geoms get no pose and no AABB and
 * stay out of the sweep: a robot alone in free flight costs the broadphase
 * nothing. O(geoms), once after the filters change (refresh_filters). */
static void activity(tl_world *w, unsigned char *act) {
  tl_native *nat = tl_native_of(w);
  filter_bits st = {0, 0}, sys = {0, 0};
  int nsys = 0;
  for (int i = 0; i < w->nstatic; i++) st.group |= w->statics[i].group, st.mask |= w->statics[i].mask;
  for (int i = 0; i < w->nsystem; i++) {
    const tl_system *s = w->systems[i];
    if (s->integrator == TL_INTEGRATOR_RK4 || s->m->ngeom == 0) continue;
    nsys++;
    for (int g = 0; g < s->m->ngeom; g++) sys.group |= s->m->geom_group[g], sys.mask |= s->m->geom_mask[g];
  }
  int any = 0;
  for (int i = 0; i < nat->ngeomref; i++) {
    const tl_geom_ref *r = &nat->geomrefs[i];
    act[i] = 0;
    if (r->system < 0) continue;
    const tl_system *s = w->systems[r->system];
    if (s->integrator == TL_INTEGRATOR_RK4) continue;
    unsigned g = s->m->geom_group[r->geom], m = s->m->geom_mask[r->geom];
    int a = (g & st.mask) && (st.group & m) && !welded(tl_native_of(w), r->system, r->body);
    a = a || (nsys > 1 && (g & sys.mask) && (sys.group & m));
    a = a || s->self_collision;
    act[i] = (unsigned char)a;
    any |= a;
  }
  for (int i = 0; i < nat->ngeomref; i++)
    if (nat->geomrefs[i].system < 0) act[i] = (unsigned char)any;
}


/* The collision data that depends on the filters and the objects alone, not
 * on the state (after tl_world_filters_changed): geom_act0 (activity), the
 * systems' sys_active, and the shapes, boxes and unit boxes of the static
 * geoms, which never move (active ones start every step at 2 in geom_act0:
 * posed). */
static void refresh_filters(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  activity(w, nat->geom_act0);
  for (int si = 0; si < w->nsystem; si++) {
    int any = 0;
    for (int g = nat->sys_geom[si]; g < nat->sys_geom[si + 1]; g++) any |= nat->geom_act0[g];
    nat->sys_active[si] = (unsigned char)any;
  }
  for (int i = 0; i < w->nstatic; i++) {
    tl_geom_ref *g = &nat->geomrefs[i];
    double *u = nat->unit_box + 6 * i;
    tl_world_geom_shape(w, g, &nat->shapes[i]);
    tl_shape_aabb(&nat->shapes[i], w->opt.contact_margin, g->box, g->box + 3);
    if (nat->geom_act0[i]) {
      nat->geom_act0[i] = 2;
      memcpy(u, g->box, 6 * sizeof(double));
    } else {
      u[0] = INFINITY;
    }
  }
  w->filters_stale = 0;
}

/* Boxes as lo[3], hi[3]; z first: with gravity along -z (the usual), the axis
 * that separates most (bodies above the ground, boxes in a stack). */
static int box_overlap(const double *a, const double *b) {
  if (a[2] > b[5] || b[2] > a[5]) return 0;
  return !(a[0] > b[3] || b[0] > a[3] || a[1] > b[4] || b[1] > a[4]);
}

/* Pose and box of geomref i, once per step (geom_active 1 -> 2). */
static const double *geom_box(tl_world *w, tl_native *nat, int i) {
  tl_geom_ref *g = &nat->geomrefs[i];
  if (nat->geom_active[i] == 1) {
    tl_world_geom_shape(w, g, &nat->shapes[i]);
    tl_shape_aabb(&nat->shapes[i], w->opt.contact_margin, g->box, g->box + 3);
    nat->geom_active[i] = 2;
  }
  return g->box;
}

/* geom_box of system geomref i of system s on a body at (x, R). */
static const double *geom_box_at(const tl_world *w, tl_native *nat, const tl_system *s, int i, const double x[3],
                                 const double R[9]) {
  tl_geom_ref *g = &nat->geomrefs[i];
  if (nat->geom_active[i] == 1) {
    system_shape(s, g->geom, x, R, &nat->shapes[i]);
    tl_shape_aabb(&nat->shapes[i], w->opt.contact_margin, g->box, g->box + 3);
    nat->geom_active[i] = 2;
  }
  return g->box;
}

/* Boxes of the bodies and systems (units after the statics, whose boxes are
 * set by refresh_filters) with active geoms; inactive units get lo[0] = +inf. */
static void unit_boxes(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  const double margin = w->opt.contact_margin;
  for (int si = 0; si < w->nsystem; si++) {
    const tl_system *s = w->systems[si];
    double *u = nat->unit_box + 6 * (w->nstatic + si);
    for (int k = 0; k < 3; k++) u[k] = INFINITY, u[3 + k] = -INFINITY;
    if (!nat->sys_active[si]) continue;
    for (int b = 0; b < s->m->nbody; b++) {
      const double *sp = nat->bsphere + 4 * (nat->body_adr[si] + b);
      double *bb = nat->bbox + 6 * (nat->body_adr[si] + b), c[3];
      if (sp[3] < 0) continue;
      tl_m3_mulv(c, s->d.xrot + 9 * b, sp);
      tl_v3_add(c, c, s->d.xpos + 3 * b);
      for (int k = 0; k < 3; k++) {
        bb[k] = c[k] - sp[3] - margin;
        bb[3 + k] = c[k] + sp[3] + margin;
        if (bb[k] < u[k]) u[k] = bb[k]; /* not fmin: a libm call each */
        if (bb[3 + k] > u[3 + k]) u[3 + k] = bb[3 + k];
      }
    }
  }
}

/* A candidate geom pair (geomref indices, the smaller first) and its height
 * along -gravity: the centre of its system geoms' boxes. */
static inline void push_pair(tl_native *nat, int a, int b) {
  if (nat->npair_c >= nat->cap_contact) return;
  tl_cand_pair *p = &nat->cpairs[nat->npair_c++];
  p->a = a < b ? a : b;
  p->b = a < b ? b : a;
  double c[3] = {0, 0, 0}, n = 0;
  for (int k = 0; k < 2; k++) {
    int i = k ? p->b : p->a;
    if (nat->geomrefs[i].system < 0) continue;
    const double *x = nat->geomrefs[i].box;
    for (int d = 0; d < 3; d++) c[d] += 0.5 * (x[d] + x[3 + d]);
    n += 1;
  }
  p->height = n > 0 ? tl_v3_dot(c, nat->up) / n : 0.0;
}

/* 1 if the box of the sphere around geomref g (of model m, on a body at
 * (x, R)) overlaps box `other`; geoms already posed use their own box. */
static inline int sphere_overlap(const tl_world *w, const tl_native *nat, const tl_model *m, int g, const double x[3],
                                 const double R[9], const double *other) {
  if (nat->geom_active[g] == 2) return box_overlap(nat->geomrefs[g].box, other);
  double c[3], box[6], r = nat->gradius[g] + w->opt.contact_margin;
  tl_m3_mulv(c, R, m->geom_pos + 3 * nat->geomrefs[g].geom);
  tl_v3_add(c, c, x);
  for (int i = 0; i < 3; i++) box[i] = c[i] - r, box[3 + i] = c[i] + r;
  return box_overlap(box, other);
}

/* Pairs of active geoms of system si on bodies overlapping unit box
 * `other` against geom j (a static geom), or, with j < 0, against every
 * active geom of system sj on a body overlapping theirs (sj == si: the
 * system against itself, distinct bodies). Bodies are tested before geoms. */
static void unit_pairs(tl_world *w, int si, int j, int sj) {
  tl_native *nat = tl_native_of(w);
  const double *other = nat->unit_box + 6 * (j >= 0 ? j : w->nstatic + sj);
  const tl_system *s = w->systems[si];
  const int b0 = nat->body_adr[si];
  for (int ba = b0; ba < nat->body_adr[si + 1]; ba++) {
    const double *boxa = nat->bbox + 6 * ba;
    if (nat->bsphere[4 * ba + 3] < 0 || !box_overlap(boxa, other)) continue;
    const double *xa = s->d.xpos + 3 * (ba - b0), *Ra = s->d.xrot + 9 * (ba - b0);
    for (int ia = nat->body_geom_adr[ba]; ia < nat->body_geom_adr[ba + 1]; ia++) {
      const int ga = nat->body_geoms[ia];
      if (!nat->geom_active[ga] || !sphere_overlap(w, nat, s->m, ga, xa, Ra, other)) continue;
      if (j >= 0) {
        if (box_overlap(geom_box_at(w, nat, s, ga, xa, Ra), nat->geomrefs[j].box) &&
            may_collide(w, nat, &nat->geomrefs[ga], &nat->geomrefs[j]))
          push_pair(nat, ga, j);
        continue;
      }
      for (int bb = sj == si ? ba + 1 : nat->body_adr[sj]; bb < nat->body_adr[sj + 1]; bb++) {
        if (nat->bsphere[4 * bb + 3] < 0 || !box_overlap(boxa, nat->bbox + 6 * bb)) continue;
        for (int ib = nat->body_geom_adr[bb]; ib < nat->body_geom_adr[bb + 1]; ib++) {
          const int gb = nat->body_geoms[ib];
          if (nat->geom_active[gb] && box_overlap(geom_box_at(w, nat, s, ga, xa, Ra), geom_box(w, nat, gb)) &&
              may_collide(w, nat, &nat->geomrefs[ga], &nat->geomrefs[gb]))
            push_pair(nat, ga, gb);
        }
      }
    }
  }
}

/* Highest first, then by geom index. */
static int cmp_pair(const void *pa, const void *pb) {
  const tl_cand_pair *x = pa, *y = pb;
  if (x->height != y->height) return x->height < y->height ? 1 : -1;
  return x->a != y->a ? (x->a > y->a) - (x->a < y->a) : (x->b > y->b) - (x->b < y->b);
}

#define PAIR_INSERTION_MAX 24 /* fewer candidate pairs: insertion sort, else qsort */

/* The candidate pairs in the order of cmp_pair, a total order (no two pairs
 * have the same geoms), so any sort gives the same sequence: insertion sort
 * for a few pairs (a robot's feet on the ground; qsort's merge sort costs
 * ~100 instructions a pair there), qsort for many. */
static void sort_pairs(tl_cand_pair *p, int n) {
  if (n > PAIR_INSERTION_MAX) {
    qsort(p, (size_t)n, sizeof(*p), cmp_pair);
    return;
  }
  for (int i = 1; i < n; i++) {
    tl_cand_pair v = p[i];
    int j = i - 1;
    while (j >= 0 && cmp_pair(&p[j], &v) > 0) {
      p[j + 1] = p[j];
      j--;
    }
    p[j + 1] = v;
  }
}

/* The candidate geom pairs of this step, highest first (along -gravity;
 * ties by geom index): the contacts, and so the Gauss-Seidel sweeps, go from
 * the top of a stack down, so that one sweep carries the weight of every box
 * down to the ground (the order of shock propagation, Guendelman, Bridson,
 * Fedkiw 2003); a stack of 16 boxes converges in 5 sweeps instead of 15 in
 * index order. The order depends on the state alone. */
void tl_world_broadphase(tl_world *w) {
  tl_native *nat = tl_native_of(w);
  if (w->filters_stale) refresh_filters(w);
  if (nat->ngeomref) memcpy(nat->geom_active, nat->geom_act0, (size_t)nat->ngeomref); /* NULL when no geom: no memcpy */
  nat->npair_c = 0;
  double g = tl_v3_norm(w->opt.gravity);
  if (g > 0)
    tl_v3_scale(nat->up, w->opt.gravity, -1.0 / g);
  else
    tl_v3_set(nat->up, 0, 0, 1);
  unit_boxes(w);
  const int nu = w->nstatic + w->nsystem;
  int *o = nat->unit_order;
  for (int i = 1; i < nu; i++) { /* insertion sort on lo.x: nearly sorted from the last step */
    int v = o[i], j = i - 1;
    double key = nat->unit_box[6 * v];
    while (j >= 0 && nat->unit_box[6 * o[j]] > key) {
      o[j + 1] = o[j];
      j--;
    }
    o[j + 1] = v;
  }
  for (int i = 0; i < nu; i++) {
    const int a = o[i];
    const double *ua = nat->unit_box + 6 * a;
    if (ua[0] == INFINITY) break; /* inactive units sort last */
    if (a >= w->nstatic && w->systems[a - w->nstatic]->self_collision) unit_pairs(w, a - w->nstatic, -1, a - w->nstatic);
    for (int k = i + 1; k < nu; k++) {
      const int b = o[k];
      const double *ub = nat->unit_box + 6 * b;
      if (ub[0] > ua[3]) break;
      if (!box_overlap(ua, ub) || (a < w->nstatic && b < w->nstatic)) continue;
      if (a < w->nstatic)
        unit_pairs(w, b - w->nstatic, a, -1);
      else if (b < w->nstatic)
        unit_pairs(w, a - w->nstatic, b, -1);
      else
        unit_pairs(w, a - w->nstatic, -1, b - w->nstatic);
    }
  }
  sort_pairs(nat->cpairs, nat->npair_c);
}
