/* tl_model: allocation, deep copy and the public read-only queries. */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "talus/model.h"

/* Every array of the model (TL_MODEL_ARRAYS, model_xmacro.h) with its size in
 * bytes, so that alloc, copy, resize and free walk one table. */
typedef struct field {
  void **ptr;
  size_t size;
} field;

#define TL_MX_COUNT(type, name, count, width, use) +1
enum { NFIELD = 0 TL_MODEL_ARRAYS(TL_MX_COUNT) };
#undef TL_MX_COUNT

static int model_fields(tl_model *m, field *f) {
  int k = 0;
#define TL_MX_ENTRY(type, name, count, width, use) \
  f[k++] = (field){(void **)&m->name, sizeof(type) * (size_t)(width) * (size_t)m->count};
  TL_MODEL_ARRAYS(TL_MX_ENTRY)
#undef TL_MX_ENTRY
  return k;
}

void tl_model_free(tl_model *m) {
  if (!m) return;
  field f[NFIELD];
  int n = model_fields(m, f);
  for (int i = 0; i < n; i++) free(*f[i].ptr);
  free(m);
}

tl_model *tl_model_alloc(int nbody, int nq, int nv, int nframe, int ngeom, int nlink) {
  tl_model *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  m->nbody = nbody; m->nq = nq; m->nv = nv; m->nframe = nframe; m->ngeom = ngeom; m->nlink = nlink;
  field f[NFIELD];
  int n = model_fields(m, f);
  for (int i = 0; i < n; i++) {
    *f[i].ptr = calloc(1, f[i].size ? f[i].size : 1);
    if (!*f[i].ptr) {
      tl_model_free(m);
      return NULL;
    }
  }
  for (int b = 0; b < nbody; b++) m->jnt_spring_quat[4 * b] = 1.0;
  for (int k = 0; k < nv; k++) {
    m->dof_mimic[k] = -1;
    m->dof_mimic_mult[k] = 1.0;
  }
  for (int g = 0; g < ngeom; g++) {
    m->geom_group[g] = 1u;
    m->geom_mask[g] = ~0u;
    m->geom_hull[g] = -1;
    m->geom_friction[g] = 0.8;
    m->geom_restitution[g] = m->geom_contact_stiffness[g] = m->geom_contact_damping[g] = NAN;
  }
  for (int l = 0; l < nlink; l++) m->link_parent[l] = l - 1;
  for (int b = 0; b < 2 * nbody; b++) m->jnt_calibration[b] = NAN;
  for (int b = 0; b < 4 * nbody; b++) m->jnt_safety[b] = NAN;
  return m;
}

tl_model *tl_model_copy(const tl_model *src) {
  tl_model *m = malloc(sizeof(*m));
  if (!m) return NULL;
  *m = *src; /* the scalars and sizes; the arrays are replaced below */
  field fd[NFIELD], fs[NFIELD];
  int n = model_fields(m, fd);
  model_fields((tl_model *)src, fs);
  for (int i = 0; i < n; i++) *fd[i].ptr = NULL;
  for (int i = 0; i < n; i++) {
    if (!(*fd[i].ptr = calloc(1, fd[i].size ? fd[i].size : 1))) {
      tl_model_free(m);
      return NULL;
    }
    if (fd[i].size) memcpy(*fd[i].ptr, *fs[i].ptr, fd[i].size);
  }
  return m;
}

/* ---------------- merging link inertials into bodies ---------------- */

void tl_model_merge_links(tl_model *m) {
  for (int b = 0; b < m->nbody; b++) {
    m->body_mass[b] = 0;
    memset(m->body_com + 3 * b, 0, 3 * sizeof(double));
    memset(m->body_inertia + 9 * b, 0, 9 * sizeof(double));
  }
  /* accumulate mass, first moment (in body_com) and inertia about the body origin */
  for (int l = 0; l < m->nlink; l++) {
    double mass = m->link_mass[l];
    if (!(mass > 0)) continue;
    int b = m->link_body[l];
    const double *R = m->link_rot + 9 * l;
    double c[3], Ic[9];
    tl_m3_mulv(c, R, m->link_com + 3 * l);
    tl_v3_add(c, c, m->link_pos + 3 * l);
    tl_m3_rotate_tensor(Ic, R, m->link_inertia + 9 * l);
    double cc = tl_v3_dot(c, c), *Ib = m->body_inertia + 9 * b;
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) Ib[3 * i + k] += Ic[3 * i + k] + mass * ((i == k ? cc : 0.0) - c[i] * c[k]);
    m->body_mass[b] += mass;
    tl_v3_addscl(m->body_com + 3 * b, c, mass);
  }
  /* COM, and the inertia back about the COM */
  m->total_mass = 0;
  for (int b = 0; b < m->nbody; b++) {
    double mass = m->body_mass[b], *c = m->body_com + 3 * b, *I = m->body_inertia + 9 * b;
    m->total_mass += mass;
    if (!(mass > 0)) continue;
    tl_v3_scale(c, c, 1.0 / mass);
    double cc = tl_v3_dot(c, c);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) I[3 * i + k] -= mass * ((i == k ? cc : 0.0) - c[i] * c[k]);
  }
}

/* ---------------- public queries ---------------- */

static int body_ok(const tl_model *m, int i) { return m && i >= 0 && i < m->nbody; }

const char *tl_model_name(const tl_model *m) { return m->name; }
const char *tl_model_source(const tl_model *m) { return m->source; }
tl_base_type tl_model_base(const tl_model *m) { return m->base; }
int tl_model_nq(const tl_model *m) { return m->nq; }
int tl_model_nv(const tl_model *m) { return m->nv; }
int tl_model_nbody(const tl_model *m) { return m->nbody; }
int tl_model_nframe(const tl_model *m) { return m->nframe; }
int tl_model_ngeom(const tl_model *m) { return m->ngeom; }
double tl_model_total_mass(const tl_model *m) { return m->total_mass; }

const char *tl_model_body_name(const tl_model *m, int i) { return body_ok(m, i) ? m->body_name[i] : NULL; }
const char *tl_model_joint_name(const tl_model *m, int i) { return body_ok(m, i) ? m->joint_name[i] : NULL; }
tl_joint_type tl_model_joint_type(const tl_model *m, int i) {
  return body_ok(m, i) ? m->jnt_type[i] : TL_JOINT_FIXED;
}
int tl_model_body_parent(const tl_model *m, int i) { return body_ok(m, i) ? m->parent[i] : -1; }
int tl_model_joint_q_index(const tl_model *m, int i) { return body_ok(m, i) ? m->q_adr[i] : -1; }
int tl_model_joint_u_index(const tl_model *m, int i) { return body_ok(m, i) ? m->v_adr[i] : -1; }
double tl_model_body_mass(const tl_model *m, int i) { return body_ok(m, i) ? m->body_mass[i] : NAN; }

tl_status tl_model_index_error(const tl_model *m, const char *what, int i, int n, tl_error *err) {
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s index %d out of range: the model '%s' has %d",
                      what, i, m->name, n);
}

tl_status tl_model_dof_limits(const tl_model *m, int k, double *lower, double *upper, tl_error *err) {
  if (!m || k < 0 || k >= m->nv) return tl_model_index_error(m, "dof", k, m ? m->nv : 0, err);
  if (lower) *lower = m->dof_lower[k];
  if (upper) *upper = m->dof_upper[k];
  return TL_OK;
}

static int frame_ok(const tl_model *m, int i) { return m && i >= 0 && i < m->nframe; }
const char *tl_model_frame_name(const tl_model *m, int i) { return frame_ok(m, i) ? m->frame_name[i] : NULL; }
int tl_model_frame_body(const tl_model *m, int i) { return frame_ok(m, i) ? m->frame_body[i] : -1; }
tl_joint_type tl_model_frame_joint_type(const tl_model *m, int i) {
  return frame_ok(m, i) ? m->frame_jnt_type[i] : TL_JOINT_FIXED;
}
const char *tl_model_frame_link(const tl_model *m, int i) { return frame_ok(m, i) ? m->frame_link[i] : NULL; }
int tl_model_frame_index(const tl_model *m, const char *name) {
  if (!m || !name) return -1;
  for (int i = 0; i < m->nframe; i++)
    if (strcmp(m->frame_name[i], name) == 0) return i;
  for (int i = 0; i < m->nframe; i++) /* a URDF link: the frame of the joint whose child it is */
    if (strcmp(m->frame_link[i], name) == 0) return i;
  return -1;
}
int tl_model_body_index(const tl_model *m, const char *link) {
  if (!m || !link) return -1;
  for (int i = 0; i < m->nbody; i++)
    if (strcmp(m->body_name[i], link) == 0) return i;
  for (int i = 0; i < m->nframe; i++) /* a merged fixed link: its frame names the link */
    if (strcmp(m->frame_link[i], link) == 0) return m->frame_body[i];
  return -1;
}

static int geom_ok(const tl_model *m, int i) { return m && i >= 0 && i < m->ngeom; }
tl_status tl_model_geom(const tl_model *m, int g, tl_geom_type *type, int *body, double size[3],
                        double pos[3], double R[9], tl_error *err) {
  if (!geom_ok(m, g)) return tl_model_index_error(m, "geom", g, m ? m->ngeom : 0, err);
  if (type) *type = m->geom_type[g];
  if (body) *body = m->geom_body[g];
  if (size) memcpy(size, m->geom_size + 3 * g, 3 * sizeof(double));
  if (pos) memcpy(pos, m->geom_pos + 3 * g, 3 * sizeof(double));
  if (R) memcpy(R, m->geom_rot + 9 * g, 9 * sizeof(double));
  return TL_OK;
}
const char *tl_model_geom_name(const tl_model *m, int g) { return geom_ok(m, g) ? m->geom_name[g] : NULL; }
const char *tl_model_geom_link(const tl_model *m, int g) { return geom_ok(m, g) ? m->geom_link[g] : NULL; }

tl_status tl_model_reference_q(const tl_model *m, double *q, int nq, tl_error *err) {
  if (!m || !q) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "q", "q must not be NULL");
  if (nq != m->nq)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "q",
                        "q has length %d, the model '%s' has nq = %d", nq, m->name, m->nq);
  memcpy(q, m->q0, (size_t)nq * sizeof(double));
  return TL_OK;
}

/* Scalar DOF k's limits as [lo, hi] (widened to +-inf when not finite with lo <= hi), shrunk by
 * the default-q margin when `margin` (a locked DOF, lo = hi, has none). */
static void dof_range(const tl_model *m, int k, int margin, double *lo, double *hi) {
  double a = m->dof_lower[k], b = m->dof_upper[k];
  if (!(isfinite(a) && isfinite(b) && a <= b)) {
    *lo = -INFINITY, *hi = INFINITY;
    return;
  }
  double g = margin ? TL_DEFAULT_Q_MARGIN * (b - a) : 0;
  *lo = a + g, *hi = b - g;
}

/* A mimic leader k is placed where its followers are inside their limits too, when its range
 * allows it: the leader's range intersected with each direct follower's range mapped back
 * through q_f = mult q_k + offset, with the margins, else without them (Robotiq's 2F-85: leader
 * [0, 0.725], followers [0, 0.8757] at multiplier -1 leave only 0); q0 clamped into that. When
 * even that is empty, the leader keeps its own clamp. */
static void place_mimic_leader(const tl_model *m, int k, double *q) {
  for (int margin = 1; margin >= 0; margin--) {
    double lo, hi, flo, fhi;
    dof_range(m, k, margin, &lo, &hi);
    int any = 0;
    for (int f = 0; f < m->nv; f++) {
      if (m->dof_mimic[f] != k || m->dof_mimic_mult[f] == 0) continue;
      any = 1;
      dof_range(m, f, margin, &flo, &fhi);
      double a = (flo - m->dof_mimic_offset[f]) / m->dof_mimic_mult[f];
      double b = (fhi - m->dof_mimic_offset[f]) / m->dof_mimic_mult[f];
      if (a > b) { double t = a; a = b; b = t; }
      if (a > lo) lo = a;
      if (b < hi) hi = b;
    }
    if (!any) return;
    if (lo <= hi) {
      double *qk = q + m->q_adr[m->dof_body[k]], v = m->q0[m->q_adr[m->dof_body[k]]];
      *qk = v < lo ? lo : v > hi ? hi : v;
      return;
    }
  }
}

void tl_model_default_q_fill(const tl_model *m, double *q) {
  memcpy(q, m->q0, (size_t)m->nq * sizeof(double));
  for (int b = 1; b < m->nbody; b++) {
    tl_joint_type t = m->jnt_type[b];
    if (t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC && t != TL_JOINT_UNIVERSAL && t != TL_JOINT_PLANAR)
      continue; /* scalar coordinates only: q index = q_adr + (dof - v_adr) */
    for (int i = 0; i < m->jnt_nv[b]; i++) {
      int k = m->v_adr[b] + i;
      double lo = m->dof_lower[k], hi = m->dof_upper[k], *qi = q + m->q_adr[b] + i;
      if (!(isfinite(lo) && isfinite(hi) && lo <= hi)) continue;
      /* lo = hi: a DOF locked by its limits (Unitree's BrainCo fingertips, lower = upper = 1
       * rad) starts where it is locked */
      double margin = TL_DEFAULT_Q_MARGIN * (hi - lo);
      if (*qi < lo + margin) *qi = lo + margin;
      if (*qi > hi - margin) *qi = hi - margin;
    }
  }
  for (int k = 0; k < m->nv; k++) { /* 1-DOF leaders of <mimic> followers (compile_mimics) */
    int b = m->dof_body[k];
    if (m->jnt_nv[b] == 1 && (m->jnt_type[b] == TL_JOINT_REVOLUTE || m->jnt_type[b] == TL_JOINT_PRISMATIC))
      place_mimic_leader(m, k, q);
  }
  /* mimic followers after their (possibly clamped) leaders; chains are finite and acyclic
   * (urdf_parse.c), so at most nv passes */
  for (int pass = 0; pass < m->nv; pass++) {
    int changed = 0;
    for (int k = 0; k < m->nv; k++) {
      int f = m->dof_mimic[k];
      if (f < 0) continue;
      double v = m->dof_mimic_mult[k] * q[m->q_adr[m->dof_body[f]]] + m->dof_mimic_offset[k];
      double *qk = q + m->q_adr[m->dof_body[k]];
      if (*qk != v) *qk = v, changed = 1;
    }
    if (!changed) break;
  }
}

tl_status tl_model_default_q(const tl_model *m, double *q, int nq, tl_error *err) {
  if (!m || !q) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "q", "q must not be NULL");
  if (nq != m->nq)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "q",
                        "q has length %d, the model '%s' has nq = %d", nq, m->name, m->nq);
  tl_model_default_q_fill(m, q);
  return TL_OK;
}

int tl_model_nwarning(const tl_model *m) { return m->nwarning; }
const char *tl_model_warning(const tl_model *m, int i) {
  int kept = m->nwarning < 16 ? m->nwarning : 16;
  return (i >= 0 && i < kept) ? m->warnings[i] : NULL;
}

/* ---------------- joint and geom type tables ---------------- */
int tl_joint_nq(tl_joint_type t) {
  static const int nq[] = {0, 7, 1, 1, 4, 2, 3};
  return (t >= 0 && t <= TL_JOINT_PLANAR) ? nq[t] : 0;
}
int tl_joint_nv(tl_joint_type t) {
  static const int nv[] = {0, 6, 1, 1, 3, 2, 3};
  return (t >= 0 && t <= TL_JOINT_PLANAR) ? nv[t] : 0;
}
const char *tl_joint_type_name(tl_joint_type t) {
  static const char *names[] = {"fixed", "floating", "revolute", "prismatic", "spherical", "universal", "planar"};
  return (t >= 0 && t <= TL_JOINT_PLANAR) ? names[t] : "unknown";
}
const char *tl_geom_type_name(tl_geom_type t) {
  static const char *names[] = {"sphere", "box", "capsule", "cylinder", "mesh", "plane", "heightmap"};
  return (t >= 0 && t <= TL_GEOM_HEIGHTMAP) ? names[t] : "unknown";
}

/* Give every array the size it has with the sizes of `t` (a copy of *m with
 * some counts changed): arrays whose size changes are reallocated, their
 * first min(old, new) bytes kept and the rest zeroed; then m takes t's
 * counts. Returns 0, or -1 on allocation failure with *m unchanged. */
static int model_resize(tl_model *m, const tl_model *t) {
  field before[NFIELD], after[NFIELD];
  int n = model_fields(m, before);
  model_fields((tl_model *)t, after);
  void *fresh[NFIELD] = {0};
  for (int i = 0; i < n; i++) {
    if (after[i].size == before[i].size) continue;
    if (!(fresh[i] = calloc(1, after[i].size ? after[i].size : 1))) {
      for (int k = 0; k < i; k++) free(fresh[k]);
      return -1; /* nothing changed */
    }
  }
  for (int i = 0; i < n; i++) {
    if (!fresh[i]) continue;
    size_t keep = before[i].size < after[i].size ? before[i].size : after[i].size;
    memcpy(fresh[i], *before[i].ptr, keep);
    free(*before[i].ptr);
    *before[i].ptr = fresh[i];
  }
  m->nbody = t->nbody, m->nq = t->nq, m->nv = t->nv, m->nframe = t->nframe, m->ngeom = t->ngeom;
  m->nhull = t->nhull, m->nhull_vert = t->nhull_vert, m->nhull_face = t->nhull_face;
  m->nlink = t->nlink, m->nvisual = t->nvisual, m->nmaterial = t->nmaterial;
  m->nloop = t->nloop;
  return 0;
}

/* ---------------- convex hulls ---------------- */

int tl_model_add_hull(tl_model *m, int g, int nvert, const double *vert, int nface, const int *face) {
  if (nvert < 4 || nface < 4) return -1; /* a hull encloses a volume */
  for (int i = 0; i < 3 * nface; i++)
    if (face[i] < 0 || face[i] >= nvert) return -1;
  int h = m->nhull, v0 = m->nhull_vert, f0 = m->nhull_face;
  tl_model t = *m;
  t.nhull = h + 1, t.nhull_vert = v0 + nvert, t.nhull_face = f0 + nface;
  if (model_resize(m, &t)) return -1; /* the model is unchanged */
  m->hull_vert_adr[h] = v0;
  m->hull_nvert[h] = nvert;
  m->hull_face_adr[h] = f0;
  m->hull_nface[h] = nface;
  memcpy(m->hull_vert + 3 * v0, vert, 3 * (size_t)nvert * sizeof(double));
  memcpy(m->hull_face + 3 * f0, face, 3 * (size_t)nface * sizeof(int));
  m->geom_hull[g] = h;
  return 0;
}

/* ---------------- user frames ---------------- */

int tl_model_add_frame(tl_model *m, const char *name, int body, const double pos[3], const double rot[9]) {
  int f = m->nframe;
  tl_model t = *m;
  t.nframe = f + 1;
  if (model_resize(m, &t)) return -1; /* the model is unchanged */
  snprintf(m->frame_name[f], TL_NAME_MAX, "%s", name);
  snprintf(m->frame_link[f], TL_NAME_MAX, "%s", m->body_name[body]);
  m->frame_body[f] = body;
  memcpy(m->frame_pos + 3 * f, pos, 3 * sizeof(double));
  memcpy(m->frame_rot + 9 * f, rot, 9 * sizeof(double));
  m->frame_jnt_type[f] = TL_JOINT_FIXED;
  return f;
}

/* ---------------- counts set after allocation (URDF visuals and materials) ---------------- */

int tl_model_set_extra_counts(tl_model *m, int nvisual, int nmaterial) {
  tl_model t = *m;
  t.nvisual = nvisual;
  t.nmaterial = nmaterial;
  return model_resize(m, &t);
}

int tl_model_set_nloop(tl_model *m, int nloop) {
  tl_model t = *m;
  t.nloop = nloop;
  return model_resize(m, &t);
}

/* ---------------- planar joints ---------------- */

void tl_model_planar_axes(const double n[3], double t1[3], double t2[3]) {
  double a[3] = {1, 0, 0}, u[3];
  if (fabs(n[0]) > 0.9) tl_v3_set(a, 0, 1, 0);
  tl_v3_cross(u, n, a); /* perpendicular to n, deterministic */
  tl_v3_normalize(u);
  if (t1) tl_v3_copy(t1, u);
  if (t2) tl_v3_cross(t2, n, u);
}
