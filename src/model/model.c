/* tl_model: allocation, deep copy and the public read-only queries. */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "talus/model.h"

/* Every array of the model with its element size and count, so that alloc,
 * copy and free walk one table instead of repeating the field list. */
typedef struct field {
  void **ptr;
  size_t size;
} field;

enum { NFIELD = 48 };

static int model_fields(tl_model *m, field *f) {
  int nb = m->nbody, nv = m->nv, nq = m->nq, nf = m->nframe, ng = m->ngeom, k = 0;
#define F(p, elem, count) f[k++] = (field){(void **)&m->p, (size_t)(elem) * (size_t)(count)}
  F(body_name, sizeof(tl_name), nb); F(joint_name, sizeof(tl_name), nb);
  F(parent, sizeof(int), nb); F(jnt_type, sizeof(tl_joint_type), nb); F(jnt_line, sizeof(int), nb);
  F(q_adr, sizeof(int), nb); F(v_adr, sizeof(int), nb); F(jnt_nq, sizeof(int), nb);
  F(jnt_nv, sizeof(int), nb); F(jnt_pos, 3 * sizeof(double), nb); F(jnt_rot, 9 * sizeof(double), nb);
  F(jnt_axis, 3 * sizeof(double), nb); F(jnt_axis2, 3 * sizeof(double), nb);
  F(body_mass, sizeof(double), nb); F(body_com, 3 * sizeof(double), nb);
  F(body_inertia, 9 * sizeof(double), nb);
  F(dof_body, sizeof(int), nv); F(dof_parent, sizeof(int), nv);
  F(dof_rotor_inertia, sizeof(double), nv); F(dof_damping, sizeof(double), nv);
  F(dof_friction, sizeof(double), nv); F(dof_stiffness, sizeof(double), nv);
  F(dof_spring_mount, sizeof(double), nv); F(dof_lower, sizeof(double), nv);
  F(dof_upper, sizeof(double), nv); F(dof_effort, sizeof(double), nv);
  F(dof_velocity, sizeof(double), nv); F(q0, sizeof(double), nq);
  F(frame_name, sizeof(tl_name), nf); F(frame_body, sizeof(int), nf);
  F(frame_pos, 3 * sizeof(double), nf); F(frame_rot, 9 * sizeof(double), nf);
  F(frame_jnt_type, sizeof(tl_joint_type), nf); F(frame_link, sizeof(tl_name), nf);
  F(geom_name, sizeof(tl_name), ng); F(geom_link, sizeof(tl_name), ng);
  F(geom_body, sizeof(int), ng); F(geom_type, sizeof(tl_geom_type), ng);
  F(geom_size, 3 * sizeof(double), ng); F(geom_pos, 3 * sizeof(double), ng);
  F(geom_rot, 9 * sizeof(double), ng); F(geom_friction, sizeof(double), ng);
  F(geom_mesh, 512, ng);
#undef F
  return k;
}

void tl_model_free(tl_model *m) {
  if (!m) return;
  field f[NFIELD];
  int n = model_fields(m, f);
  for (int i = 0; i < n; i++) free(*f[i].ptr);
  free(m);
}

tl_model *tl_model_alloc(int nbody, int nq, int nv, int nframe, int ngeom) {
  tl_model *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  m->nbody = nbody; m->nq = nq; m->nv = nv; m->nframe = nframe; m->ngeom = ngeom;
  field f[NFIELD];
  int n = model_fields(m, f);
  for (int i = 0; i < n; i++) {
    *f[i].ptr = calloc(1, f[i].size ? f[i].size : 1);
    if (!*f[i].ptr) {
      tl_model_free(m);
      return NULL;
    }
  }
  return m;
}

tl_model *tl_model_copy(const tl_model *src) {
  tl_model *m = tl_model_alloc(src->nbody, src->nq, src->nv, src->nframe, src->ngeom);
  if (!m) return NULL;
  field fd[NFIELD], fs[NFIELD];
  int n = model_fields(m, fd);
  model_fields((tl_model *)src, fs);
  /* copy the scalars, then restore our own array pointers and fill them */
  void *ptrs[NFIELD];
  for (int i = 0; i < n; i++) ptrs[i] = *fd[i].ptr;
  memcpy(m, src, sizeof(*m));
  for (int i = 0; i < n; i++) {
    *fd[i].ptr = ptrs[i];
    if (fd[i].size) memcpy(ptrs[i], *fs[i].ptr, fd[i].size);
  }
  return m;
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

int tl_model_dof_limits(const tl_model *m, int k, double *lower, double *upper) {
  if (!m || k < 0 || k >= m->nv) return -1;
  if (lower) *lower = m->dof_lower[k];
  if (upper) *upper = m->dof_upper[k];
  return 0;
}

static int frame_ok(const tl_model *m, int i) { return m && i >= 0 && i < m->nframe; }
const char *tl_model_frame_name(const tl_model *m, int i) { return frame_ok(m, i) ? m->frame_name[i] : NULL; }
int tl_model_frame_body(const tl_model *m, int i) { return frame_ok(m, i) ? m->frame_body[i] : -1; }
tl_joint_type tl_model_frame_joint_type(const tl_model *m, int i) {
  return frame_ok(m, i) ? m->frame_jnt_type[i] : TL_JOINT_FIXED;
}
int tl_model_frame_index(const tl_model *m, const char *name) {
  if (!m || !name) return -1;
  for (int i = 0; i < m->nframe; i++)
    if (strcmp(m->frame_name[i], name) == 0) return i;
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
int tl_model_geom(const tl_model *m, int g, tl_geom_type *type, int *body, double size[3],
                  double pos[3], double R[9]) {
  if (!geom_ok(m, g)) return -1;
  if (type) *type = m->geom_type[g];
  if (body) *body = m->geom_body[g];
  if (size) memcpy(size, m->geom_size + 3 * g, 3 * sizeof(double));
  if (pos) memcpy(pos, m->geom_pos + 3 * g, 3 * sizeof(double));
  if (R) memcpy(R, m->geom_rot + 9 * g, 9 * sizeof(double));
  return 0;
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

int tl_model_nwarning(const tl_model *m) { return m->nwarning; }
const char *tl_model_warning(const tl_model *m, int i) {
  int kept = m->nwarning < 16 ? m->nwarning : 16;
  return (i >= 0 && i < kept) ? m->warnings[i] : NULL;
}

/* ---------------- joint and geom type tables ---------------- */
int tl_joint_nq(tl_joint_type t) {
  static const int nq[] = {0, 7, 1, 1, 4, 2};
  return (t >= 0 && t <= TL_JOINT_UNIVERSAL) ? nq[t] : 0;
}
int tl_joint_nv(tl_joint_type t) {
  static const int nv[] = {0, 6, 1, 1, 3, 2};
  return (t >= 0 && t <= TL_JOINT_UNIVERSAL) ? nv[t] : 0;
}
const char *tl_joint_type_name(tl_joint_type t) {
  static const char *names[] = {"fixed", "floating", "revolute", "prismatic", "spherical", "universal"};
  return (t >= 0 && t <= TL_JOINT_UNIVERSAL) ? names[t] : "unknown";
}
const char *tl_geom_type_name(tl_geom_type t) {
  static const char *names[] = {"sphere", "box", "capsule", "cylinder", "mesh", "plane"};
  return (t >= 0 && t <= TL_GEOM_PLANE) ? names[t] : "unknown";
}

/* ---------------- user frames ---------------- */

static int grow(void **p, size_t elem, int n) {
  void *q = realloc(*p, elem * (size_t)n);
  if (!q) return -1;
  *p = q;
  return 0;
}

int tl_model_add_frame(tl_model *m, const char *name, int body, const double pos[3], const double rot[9]) {
  int n = m->nframe + 1;
  if (grow((void **)&m->frame_name, sizeof(tl_name), n) || grow((void **)&m->frame_link, sizeof(tl_name), n) ||
      grow((void **)&m->frame_body, sizeof(int), n) || grow((void **)&m->frame_pos, 3 * sizeof(double), n) ||
      grow((void **)&m->frame_rot, 9 * sizeof(double), n) ||
      grow((void **)&m->frame_jnt_type, sizeof(tl_joint_type), n))
    return -1; /* arrays that did grow keep nframe valid entries: nothing is half-built */
  int f = m->nframe;
  snprintf(m->frame_name[f], TL_NAME_MAX, "%s", name);
  snprintf(m->frame_link[f], TL_NAME_MAX, "%s", m->body_name[body]);
  m->frame_body[f] = body;
  memcpy(m->frame_pos + 3 * f, pos, 3 * sizeof(double));
  memcpy(m->frame_rot + 9 * f, rot, 9 * sizeof(double));
  m->frame_jnt_type[f] = TL_JOINT_FIXED;
  m->nframe = n;
  return f;
}
