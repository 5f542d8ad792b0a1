/* Shared helpers of the engine plugins (see tlp_util.h). */
#include "tlp_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/joint_space.h"
#include "math/tl_math.h"

void tlp_fk(const tl_engine_model *m, const double *q, const double *u, double *xpos, double *xrot,
            double *w, double *v) {
  for (int b = 0; b < m->nbody; b++) {
    double *p = xpos + 3 * b, *R = xrot + 9 * b;
    const double *qb = q + m->q_adr[b], *ub = u ? u + m->v_adr[b] : NULL;
    double *wb = u && w ? w + 3 * b : NULL, *vb = u && v ? v + 3 * b : NULL;
    if (b == 0) {
      if (m->jnt_type[0] == TL_JOINT_FLOATING) {
        tl_v3_copy(p, qb);
        tl_quat_to_m3(R, qb + 3);
        if (wb) tl_v3_copy(wb, ub + 3);
        if (vb) tl_v3_copy(vb, ub);
      } else {
        tl_v3_copy(p, m->jnt_pos);
        tl_m3_copy(R, m->jnt_rot);
        if (wb) tl_v3_set(wb, 0, 0, 0);
        if (vb) tl_v3_set(vb, 0, 0, 0);
      }
      continue;
    }
    int par = m->parent[b];
    const double *pp = xpos + 3 * par, *pR = xrot + 9 * par;
    double jp[3], jR[9], Rj[9], t[3];
    tl_m3_mulv(t, pR, m->jnt_pos + 3 * b);
    tl_v3_add(jp, pp, t);
    tl_m3_mul(jR, pR, m->jnt_rot + 9 * b);
    const double *axis = m->jnt_axis + 3 * b, *axis2 = m->jnt_axis2 + 3 * b;
    double wrel[3] = {0, 0, 0}, vrel[3] = {0, 0, 0}, a[3];
    tl_v3_copy(p, jp);
    switch (m->jnt_type[b]) {
      case TL_JOINT_REVOLUTE:
        tl_m3_axis_angle(Rj, axis, qb[0]);
        tl_m3_mul(R, jR, Rj);
        if (ub) tl_m3_mulv(a, jR, axis), tl_v3_scale(wrel, a, ub[0]);
        break;
      case TL_JOINT_PRISMATIC:
        tl_m3_copy(R, jR);
        tl_m3_mulv(a, jR, axis);
        tl_v3_addscl(p, a, qb[0]);
        if (ub) tl_v3_scale(vrel, a, ub[0]);
        break;
      case TL_JOINT_SPHERICAL:
        tl_quat_to_m3(Rj, qb);
        tl_m3_mul(R, jR, Rj);
        if (ub) tl_m3_mulv(wrel, jR, ub);
        break;
      case TL_JOINT_UNIVERSAL: {
        double R1[9], R2[9], a2[3], a2w[3];
        tl_m3_axis_angle(R1, axis, qb[0]);
        tl_m3_axis_angle(R2, axis2, qb[1]);
        tl_m3_mul(Rj, R1, R2);
        tl_m3_mul(R, jR, Rj);
        if (ub) {
          tl_m3_mulv(a, jR, axis);
          tl_m3_mulv(a2, R1, axis2);
          tl_m3_mulv(a2w, jR, a2);
          tl_v3_scale(wrel, a, ub[0]);
          tl_v3_addscl(wrel, a2w, ub[1]);
        }
        break;
      }
      default: /* fixed (merged) and planar (refused by the plugins) */
        tl_m3_copy(R, jR);
        break;
    }
    if (wb) { /* w = w_p + w_rel; v_origin = v_p + w_p x (p - p_p) + v_rel (rotations act at the joint origin = p) */
      const double *pw = w + 3 * par, *pv = v + 3 * par;
      double d[3], c[3];
      tl_v3_add(wb, pw, wrel);
      tl_v3_sub(d, p, pp);
      tl_v3_cross(c, pw, d);
      tl_v3_add(vb, pv, c);
      tl_v3_add(vb, vb, vrel);
    }
  }
}

#define TLP_TWO_PI 6.283185307179586476925

/* x moved by a multiple of 2 pi to the nearest of ref. */
static double unwrap(double x, double ref) { return x + TLP_TWO_PI * round((ref - x) / TLP_TWO_PI); }

void tlp_joint_state(const tl_engine_model *m, int b, const double pp[3], const double pR[9],
                     const double pw[3], const double pv[3], const double cp[3], const double cR[9],
                     const double cw[3], const double cv[3], const double *q_prev, double *q, double *u) {
  tl_joint_type type = m->jnt_type[b];
  if (type == TL_JOINT_FLOATING) {
    tl_v3_copy(q, cp);
    tl_quat_from_m3(q + 3, cR);
    if (q_prev && q[3] * q_prev[3] + q[4] * q_prev[4] + q[5] * q_prev[5] + q[6] * q_prev[6] < 0)
      for (int k = 3; k < 7; k++) q[k] = -q[k]; /* keep the sign of the previous quaternion */
    tl_v3_copy(u, cv);
    tl_v3_copy(u + 3, cw);
    return;
  }
  if (type == TL_JOINT_FIXED || b == 0) return;
  double jR[9], jp[3], t[3], Rrel[9], wrel[3], wj[3];
  tl_m3_mulv(t, pR, m->jnt_pos + 3 * b);
  tl_v3_add(jp, pp, t);
  tl_m3_mul(jR, pR, m->jnt_rot + 9 * b);
  tl_m3_tmul(Rrel, jR, cR); /* joint frame -> child */
  tl_v3_sub(wrel, cw, pw);
  tl_m3_tmulv(wj, jR, wrel); /* relative angular velocity in the joint frame */
  const double *axis = m->jnt_axis + 3 * b, *axis2 = m->jnt_axis2 + 3 * b;
  switch (type) {
    case TL_JOINT_REVOLUTE: {
      double qr[4];
      tl_quat_from_m3(qr, Rrel);
      double s = qr[1] * axis[0] + qr[2] * axis[1] + qr[3] * axis[2];
      q[0] = 2 * atan2(s, qr[0]);
      if (q_prev) q[0] = unwrap(q[0], q_prev[0]);
      u[0] = tl_v3_dot(wj, axis);
      break;
    }
    case TL_JOINT_PRISMATIC: {
      double a[3], d[3], vp_at[3], c[3], dv[3];
      tl_m3_mulv(a, jR, axis);
      tl_v3_sub(d, cp, jp);
      q[0] = tl_v3_dot(d, a);
      /* parent's velocity at the child's origin */
      tl_v3_sub(d, cp, pp);
      tl_v3_cross(c, pw, d);
      tl_v3_add(vp_at, pv, c);
      tl_v3_sub(dv, cv, vp_at);
      u[0] = tl_v3_dot(dv, a);
      break;
    }
    case TL_JOINT_SPHERICAL:
      tl_quat_from_m3(q, Rrel);
      if (q_prev && q[0] * q_prev[0] + q[1] * q_prev[1] + q[2] * q_prev[2] + q[3] * q_prev[3] < 0)
        for (int k = 0; k < 4; k++) q[k] = -q[k];
      tl_v3_copy(u, wj);
      break;
    case TL_JOINT_UNIVERSAL: {
      /* Rrel = Rot(a1, q0) Rot(a2, q1), a1 _|_ a2: Rrel a2 = Rot(a1, q0) a2 and
       * Rrel^T a1 = Rot(a2, -q1) a1 */
      double n[3], x[3], y[3], R1[9], a2r[3];
      tl_v3_cross(n, axis, axis2);
      tl_m3_mulv(x, Rrel, axis2);
      tl_m3_tmulv(y, Rrel, axis);
      q[0] = atan2(tl_v3_dot(x, n), tl_v3_dot(x, axis2));
      q[1] = atan2(tl_v3_dot(y, n), tl_v3_dot(y, axis));
      if (q_prev) q[0] = unwrap(q[0], q_prev[0]), q[1] = unwrap(q[1], q_prev[1]);
      tl_m3_axis_angle(R1, axis, q[0]);
      tl_m3_mulv(a2r, R1, axis2);
      u[0] = tl_v3_dot(wj, axis);
      u[1] = tl_v3_dot(wj, a2r);
      break;
    }
    default:
      break;
  }
}

void tlp_pd_error(const tl_engine_model *m, int b, const double *q, const double *q_target, double *e) {
  const double *qb = q + m->q_adr[b], *qt = q_target + m->q_adr[b];
  tl_js_error(m->jnt_type[b], m->jnt_nv[b], qb, qt, e);
  if (m->jnt_type[b] == TL_JOINT_SPHERICAL || m->jnt_type[b] == TL_JOINT_FLOATING) return;
  for (int k = 0, v = m->v_adr[b]; k < m->jnt_nv[b]; k++, v++) {
    if (qt[k] < m->dof_lower[v]) e[k] = m->dof_lower[v] - qb[k];
    else if (qt[k] > m->dof_upper[v]) e[k] = m->dof_upper[v] - qb[k];
  }
}

void tlp_spring_error(const tl_engine_model *m, int b, const double *q, double *e) {
  if (m->jnt_type[b] == TL_JOINT_FLOATING) {
    memset(e, 0, 6 * sizeof(double));
    return;
  }
  const double *mount = m->jnt_type[b] == TL_JOINT_SPHERICAL ? m->jnt_spring_quat + 4 * b
                                                             : m->dof_spring_mount + m->v_adr[b];
  tl_js_error(m->jnt_type[b], m->jnt_nv[b], q + m->q_adr[b], mount, e);
}

const char *tlp_joint_name(tl_joint_type t) {
  static const char *const n[] = {"fixed", "floating", "revolute", "prismatic", "spherical", "universal", "planar"};
  return t >= 0 && t < (int)(sizeof(n) / sizeof(n[0])) ? n[t] : "?";
}

const char *tlp_geom_name(tl_geom_type t) {
  static const char *const n[] = {"sphere", "box", "capsule", "cylinder", "mesh", "plane", "heightmap"};
  return t >= 0 && t < (int)(sizeof(n) / sizeof(n[0])) ? n[t] : "?";
}

const char *tlp_feature_name(unsigned feature) {
  static const char *const n[] = {"rotor inertia", "joint damping", "Coulomb joint friction", "joint springs",
                                  "joint position limits", "effort limits", "mimic joints", "restitution",
                                  "self-collision", "the RK4 integrator", "PD gains on the floating base",
                                  "solver statistics", "contact ERP / CFM"};
  for (unsigned k = 0; k < sizeof(n) / sizeof(n[0]); k++)
    if (feature == 1u << k) return n[k];
  return "?";
}

int tlp_option(const char *options, const char *key, char *val, size_t cap) {
  size_t kl = strlen(key);
  for (const char *p = options; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
      size_t vl = len - kl - 1;
      if (vl >= cap) vl = cap - 1;
      memcpy(val, p + kl + 1, vl);
      val[vl] = '\0';
      return 1;
    }
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

int tlp_unknown_option(const char *options, const char *const *known, char *bad, size_t cap) {
  for (const char *p = options; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    size_t kl = eq ? (size_t)(eq - p) : len;
    int ok = eq != NULL && eq + 1 < p + len;
    int found = 0;
    for (int k = 0; ok && known[k] && !found; k++) found = strlen(known[k]) == kl && strncmp(known[k], p, kl) == 0;
    if (!found) {
      size_t n = len < cap - 1 ? len : cap - 1;
      memcpy(bad, p, n);
      bad[n] = '\0';
      return 1;
    }
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

tl_status tlp_check_options(const char *engine, const char *options, const char *const *known, tl_error *err) {
  char bad[128], list[256] = "";
  if (!tlp_unknown_option(options, known, bad, sizeof(bad))) return TL_OK;
  for (int k = 0; known[k]; k++) {
    size_t n = strlen(list);
    snprintf(list + n, sizeof(list) - n, "%s%s", k ? ", " : "", known[k]);
  }
  return tl_engine_error(err, TL_ERR_ARGUMENT, "engine", "%s: unknown option '%s' (%s)", engine, bad, list);
}

int tlp_option_long(const char *options, const char *key, long lo, long hi, long *out, char *val, size_t cap) {
  if (!tlp_option(options, key, val, cap)) return 0;
  char *end;
  long n = strtol(val, &end, 10);
  if (*end || n < lo || n > hi) return -1;
  *out = n;
  return 1;
}

int tlp_option_double(const char *options, const char *key, double *out, char *val, size_t cap) {
  if (!tlp_option(options, key, val, cap)) return 0;
  char *end;
  double x = strtod(val, &end);
  if (*end) return -1;
  *out = x;
  return 1;
}

void tlp_note(char *notes, size_t cap, const char *fmt, ...) {
  size_t n = strlen(notes);
  if (n + 2 >= cap) return;
  if (n) notes[n++] = '\n', notes[n] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(notes + n, cap - n, fmt, ap);
  va_end(ap);
}

tl_status tlp_check_system(int i, int nsys, tl_error *err) {
  if (i < 0 || i >= nsys) return tl_engine_error(err, TL_ERR_ARGUMENT, "sys", "system %d out of range [0, %d)", i, nsys);
  return TL_OK;
}

void tlp_pair_material(const tl_engine_scene *s, const char *ma, const char *mb, double fa, double fb,
                       double *mu, double *restitution, double *threshold, double *erp, double *cfm) {
  *erp = s->options.erp;
  *cfm = s->options.cfm;
  for (int i = 0; i < s->npair; i++) {
    const tl_engine_material_pair *p = &s->pairs[i];
    if ((!strcmp(p->a, ma) && !strcmp(p->b, mb)) || (!strcmp(p->a, mb) && !strcmp(p->b, ma))) {
      *mu = p->mu;
      *restitution = p->restitution;
      *threshold = p->threshold;
      if (!isnan(p->erp)) *erp = p->erp;
      if (!isnan(p->cfm)) *cfm = p->cfm;
      return;
    }
  }
  *mu = fmin(fa, fb);
  *restitution = s->options.default_restitution;
  *threshold = s->options.default_threshold;
}

static int ignored(const tl_engine_scene *s, int sa, int ba, int sb, int bb) {
  for (int i = 0; i < s->nignore; i++) {
    const int *e = s->ignore + 4 * i;
    int a_match = e[0] == sa && (sa < 0 || e[1] == ba), b_match = e[2] == sb && (sb < 0 || e[3] == bb);
    int a_swap = e[0] == sb && (sb < 0 || e[1] == bb), b_swap = e[2] == sa && (sa < 0 || e[3] == ba);
    if ((a_match && b_match) || (a_swap && b_swap)) return 1;
  }
  return 0;
}

/* A body that cannot move: static geometry, a fixed base and what is welded to it. */
static int welded(const tl_engine_scene *s, int sys, int b) {
  if (sys < 0) return 1;
  const tl_engine_model *m = &s->systems[sys].model;
  while (b > 0 && m->jnt_nv[b] == 0) b = m->parent[b];
  return m->jnt_nv[b] == 0;
}

int tlp_may_collide(const tl_engine_scene *s, int sa, int ba, unsigned ga, unsigned maska, int sb, int bb,
                    unsigned gb, unsigned maskb) {
  if (welded(s, sa, ba) && welded(s, sb, bb)) return 0;
  if (sa >= 0 && sa == sb) {
    const tl_engine_system *x = &s->systems[sa];
    if (ba == bb || !x->self_collision) return 0;
    if (x->model.parent[ba] == bb || x->model.parent[bb] == ba) return 0;
  }
  if (!(ga & maskb) || !(gb & maska)) return 0;
  return !ignored(s, sa, ba, sb, sb < 0 ? -1 : bb);
}
