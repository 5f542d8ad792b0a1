/* The MuJoCo model of a Talus scene (see mj_build.h). */
#define _POSIX_C_SOURCE 200809L

#include "mj_build.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/tl_math.h"
#include "tlp_util.h"

#define MJB_XML "talus_scene.xml"
#define MJB_HULL "talus_hull_%d_%d"
#define MJB_HFIELD "talus_hfield_%d"
#define MJB_SITE "talus_site"

/* ------------------------------------------------------------ small math */

/* Eigen-decomposition of the symmetric 3x3 A = V diag(d) V^T by cyclic
 * Jacobi rotations (Golub and Van Loan, Matrix Computations, 8.5); V is a
 * rotation (det +1). */
static void sym3_eig(const double *A, double d[3], double V[9]) {
  double a[9];
  memcpy(a, A, sizeof a);
  for (int k = 0; k < 9; ++k) V[k] = k % 4 == 0;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = fabs(a[1]) + fabs(a[2]) + fabs(a[5]);
    double diag = fabs(a[0]) + fabs(a[4]) + fabs(a[8]);
    if (off == 0 || off < 1e-18 * diag) break;
    for (int p = 0; p < 2; ++p)
      for (int r = p + 1; r < 3; ++r) {
        double apr = a[3 * p + r];
        if (apr == 0) continue;
        double theta = (a[3 * r + r] - a[3 * p + p]) / (2 * apr);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) {
          double akp = a[3 * k + p], akr = a[3 * k + r];
          a[3 * k + p] = c * akp - s * akr;
          a[3 * k + r] = s * akp + c * akr;
        }
        for (int k = 0; k < 3; ++k) {
          double apk = a[3 * p + k], ark = a[3 * r + k];
          a[3 * p + k] = c * apk - s * ark;
          a[3 * r + k] = s * apk + c * ark;
        }
        for (int k = 0; k < 3; ++k) {
          double vkp = V[3 * k + p], vkr = V[3 * k + r];
          V[3 * k + p] = c * vkp - s * vkr;
          V[3 * k + r] = s * vkp + c * vkr;
        }
      }
  }
  for (int k = 0; k < 3; ++k) d[k] = a[4 * k];
  double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
               V[2] * (V[3] * V[7] - V[4] * V[6]);
  if (det < 0)
    for (int k = 0; k < 3; ++k) V[3 * k + 2] = -V[3 * k + 2];
}

/* ------------------------------------------------------------ MJCF text */

static void put_escaped(FILE *f, const char *s) {
  for (; *s; ++s) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if ((unsigned char)*s < 0x20)
          fprintf(f, "&#x%X;", (unsigned)(unsigned char)*s);
        else
          fputc(*s, f);
    }
  }
}

void tlmj_put_num(FILE *f, const char *name, double v) { fprintf(f, " %s=\"%.17g\"", name, v); }

void tlmj_put_vec(FILE *f, const char *name, const double *v, int n) {
  fprintf(f, " %s=\"", name);
  for (int k = 0; k < n; ++k) fprintf(f, "%s%.17g", k ? " " : "", v[k] == 0 ? 0.0 : v[k]);
  fputc('"', f);
}

/* Unique MuJoCo names: "s<sys>:" prefix keeps two copies of one robot apart. */
static void put_name(FILE *f, const char *attr, int sys, const char *name, const char *suffix) {
  fprintf(f, " %s=\"s%d:", attr, sys);
  put_escaped(f, name);
  if (suffix) put_escaped(f, suffix);
  fputc('"', f);
}

static void put_quat(FILE *f, const double R[9]) {
  double q[4];
  tl_quat_from_m3(q, R);
  tlmj_put_vec(f, "quat", q, 4);
}

/* Would MuJoCo's compiler accept this inertial as it is? */
static int inertial_ok(double mass, const double d[3]) {
  const double tiny = 1e-14; /* well above mjMINVAL (1e-15) */
  return mass > tiny && d[0] > tiny && d[1] > tiny && d[2] > tiny && d[0] + d[1] >= d[2] &&
         d[1] + d[2] >= d[0] && d[0] + d[2] >= d[1];
}

typedef struct builder {
  const tl_engine_scene *s;
  const tlmj_options *o;
  FILE *f;
  int patched_cap;
  unsigned char **patched;  /* [nsys][nbody] */
} builder;

static void put_joint(builder *B, int si, int b, int k) {
  FILE *f = B->f;
  const tl_engine_model *m = &B->s->systems[si].model;
  tl_joint_type t = m->jnt_type[b];
  fputs("<joint", f);
  put_name(f, "name", si, m->joint_name[b], k ? ":axis2" : NULL);
  if (t == TL_JOINT_FLOATING) {
    fputs(" type=\"free\"/>\n", f);
    return;
  }
  fprintf(f, " type=\"%s\" pos=\"0 0 0\"", t == TL_JOINT_SPHERICAL ? "ball" : t == TL_JOINT_PRISMATIC ? "slide" : "hinge");
  int v = m->v_adr[b] + k;
  if (t != TL_JOINT_SPHERICAL) {
    tlmj_put_vec(f, "axis", k ? m->jnt_axis2 + 3 * b : m->jnt_axis + 3 * b, 3);
    double lo = m->dof_lower[v], hi = m->dof_upper[v];
    if ((isfinite(lo) || isfinite(hi)) && hi > lo) {
      double r[2] = {isfinite(lo) ? lo : -1e10, isfinite(hi) ? hi : 1e10};
      fputs(" limited=\"true\"", f);
      tlmj_put_vec(f, "range", r, 2);
    } else {
      fputs(" limited=\"false\"", f);
    }
  } else {
    fputs(" limited=\"false\"", f);
  }
  if (m->dof_rotor_inertia[v] != 0) tlmj_put_num(f, "armature", m->dof_rotor_inertia[v]);
  tlmj_put_num(f, "damping", m->dof_damping[v]);
  if (m->dof_friction[v] != 0) tlmj_put_num(f, "frictionloss", m->dof_friction[v]);
  if (m->dof_stiffness[v] != 0) {
    tlmj_put_num(f, "stiffness", m->dof_stiffness[v]);
    if (t != TL_JOINT_SPHERICAL) tlmj_put_num(f, "springref", m->dof_spring_mount[v]);
  }
  fputs("/>\n", f);
}

static void put_geoms(builder *B, int si, int b, int depth) {
  FILE *f = B->f;
  const tl_engine_model *m = &B->s->systems[si].model;
  for (int g = 0; g < m->ngeom; ++g) {
    if (m->geom_body[g] != b) continue;
    const double *size = m->geom_size + 3 * g;
    double hs[3];
    fprintf(f, "%*s<geom name=\"s%d:g%d\"", 2 * depth, "", si, g); /* Talus geom names need not be unique */
    double r0 = tlp_sphere_radius(size[0]);
    switch (m->geom_type[g]) {
      case TL_GEOM_SPHERE: fputs(" type=\"sphere\"", f), tlmj_put_vec(f, "size", &r0, 1); break;
      case TL_GEOM_BOX:
        for (int k = 0; k < 3; ++k) hs[k] = 0.5 * size[k];
        fputs(" type=\"box\"", f), tlmj_put_vec(f, "size", hs, 3);
        break;
      case TL_GEOM_CAPSULE:
      case TL_GEOM_CYLINDER:
        hs[0] = size[0], hs[1] = 0.5 * size[1];
        fprintf(f, " type=\"%s\"", m->geom_type[g] == TL_GEOM_CAPSULE ? "capsule" : "cylinder");
        tlmj_put_vec(f, "size", hs, 2);
        break;
      default: /* a mesh with a hull (checked before) */
        fprintf(f, " type=\"mesh\" mesh=\"" MJB_HULL "\"", si, g);
        break;
    }
    tlmj_put_vec(f, "pos", m->geom_pos + 3 * g, 3);
    put_quat(f, m->geom_rot + 9 * g);
    fputs(" contype=\"0\" conaffinity=\"0\" condim=\"3\"/>\n", f);
  }
}

static void put_body(builder *B, int si, int b, int depth) {
  FILE *f = B->f;
  const tl_engine_model *m = &B->s->systems[si].model;
  tl_joint_type t = m->jnt_type[b];
  fprintf(f, "%*s<body", 2 * depth, "");
  put_name(f, "name", si, m->body_name[b], NULL);
  if (t == TL_JOINT_FLOATING) {
    fputs(" pos=\"0 0 0\" quat=\"1 0 0 0\"", f);
  } else {
    tlmj_put_vec(f, "pos", m->jnt_pos + 3 * b, 3);
    put_quat(f, m->jnt_rot + 9 * b);
  }
  fputs(">\n", f);
  if (t != TL_JOINT_FIXED)
    for (int k = 0; k < (t == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
      fprintf(f, "%*s", 2 * depth + 2, "");
      put_joint(B, si, b, k);
    }
  double d[3], V[9], iq[4];
  sym3_eig(m->body_inertia + 9 * b, d, V);
  tl_quat_from_m3(iq, V);
  int welded = b == 0 && t == TL_JOINT_FIXED; /* a fixed base does not move: no inertial needed */
  if (welded && !inertial_ok(m->body_mass[b], d)) goto children;
  fprintf(f, "%*s<inertial", 2 * depth + 2, "");
  if (inertial_ok(m->body_mass[b], d)) {
    tlmj_put_vec(f, "pos", m->body_com + 3 * b, 3);
    tlmj_put_vec(f, "quat", iq, 4);
    tlmj_put_num(f, "mass", m->body_mass[b]);
    tlmj_put_vec(f, "diaginertia", d, 3);
  } else { /* placeholder; the exact values go into mjModel after compilation */
    fputs(" pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"", f);
    B->patched[si][b] = 1;
  }
  fputs("/>\n", f);
children:
  if (B->o->site_sys == si && B->o->site_body == b) {
    fprintf(f, "%*s<site name=\"" MJB_SITE "\"", 2 * depth + 2, "");
    tlmj_put_vec(f, "pos", B->o->site_pos, 3);
    fputs("/>\n", f);
  }
  if (B->o->contacts) put_geoms(B, si, b, depth + 1);
  for (int c = b + 1; c < m->nbody; ++c)
    if (m->parent[c] == b) put_body(B, si, c, depth + 1);
  fprintf(f, "%*s</body>\n", 2 * depth, "");
}

static void put_assets(builder *B) {
  FILE *f = B->f;
  const tl_engine_scene *s = B->s;
  int any = 0;
  for (int si = 0; si < s->nsystem && B->o->contacts; ++si) {
    const tl_engine_model *m = &s->systems[si].model;
    for (int g = 0; g < m->ngeom; ++g) {
      int h = m->geom_hull[g];
      if (m->geom_type[g] != TL_GEOM_MESH || h < 0) continue;
      if (!any) fputs("  <asset>\n", f);
      any = 1;
      fprintf(f, "    <mesh name=\"" MJB_HULL "\"", si, g);
      tlmj_put_vec(f, "vertex", m->hull_vert + 3 * m->hull_vert_adr[h], 3 * m->hull_nvert[h]);
      fputs("/>\n", f);
    }
  }
  for (int i = 0; i < s->nstatic && B->o->contacts; ++i) {
    const tl_engine_static *st = &s->statics[i];
    if (st->heightmap < 0) continue;
    const tl_engine_heightmap *h = &s->heightmaps[st->heightmap];
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < h->nx * h->ny; ++k) lo = fmin(lo, h->heights[k]), hi = fmax(hi, h->heights[k]);
    double size[4] = {0.5 * (h->nx - 1) * h->dx, 0.5 * (h->ny - 1) * h->dy, fmax(hi - lo, 1e-6), 1.0};
    if (!any) fputs("  <asset>\n", f);
    any = 1;
    fprintf(f, "    <hfield name=\"" MJB_HFIELD "\" nrow=\"%d\" ncol=\"%d\"", i, h->ny, h->nx);
    tlmj_put_vec(f, "size", size, 4);
    fputs("/>\n", f);
  }
  if (any) fputs("  </asset>\n", f);
}

static void put_statics(builder *B) {
  FILE *f = B->f;
  const tl_engine_scene *s = B->s;
  for (int i = 0; i < s->nstatic; ++i) {
    const tl_engine_static *st = &s->statics[i];
    double hs[3];
    fprintf(f, "    <geom name=\"static%d\"", i);
    if (st->heightmap >= 0) {
      const tl_engine_heightmap *h = &s->heightmaps[st->heightmap];
      double lo = INFINITY;
      for (int k = 0; k < h->nx * h->ny; ++k) lo = fmin(lo, h->heights[k]);
      double pos[3] = {h->x0 + 0.5 * (h->nx - 1) * h->dx, h->y0 + 0.5 * (h->ny - 1) * h->dy, lo};
      fprintf(f, " type=\"hfield\" hfield=\"" MJB_HFIELD "\"", i);
      tlmj_put_vec(f, "pos", pos, 3);
    } else {
      switch (st->type) {
        case TL_GEOM_PLANE: fputs(" type=\"plane\" size=\"0 0 1\"", f); break;
        case TL_GEOM_SPHERE: fputs(" type=\"sphere\"", f), tlmj_put_vec(f, "size", st->size, 1); break;
        case TL_GEOM_BOX:
          for (int k = 0; k < 3; ++k) hs[k] = 0.5 * st->size[k];
          fputs(" type=\"box\"", f), tlmj_put_vec(f, "size", hs, 3);
          break;
        default:
          hs[0] = st->size[0], hs[1] = 0.5 * st->size[1];
          fprintf(f, " type=\"%s\"", st->type == TL_GEOM_CAPSULE ? "capsule" : "cylinder");
          tlmj_put_vec(f, "size", hs, 2);
          break;
      }
      tlmj_put_vec(f, "pos", st->pos, 3);
      put_quat(f, st->R);
    }
    fputs(" contype=\"0\" conaffinity=\"0\" condim=\"3\"/>\n", f);
  }
}

/* A Talus geom seen for pairing: system (-1 static), body, geom / static index, filter, material. */
typedef struct pgeom {
  int sys, body, index;
  unsigned group, mask;
  const char *material;
  double friction;
} pgeom;

static void put_pair_name(FILE *f, const char *attr, const pgeom *g, const tl_engine_scene *s) {
  if (g->sys < 0) {
    fprintf(f, " %s=\"static%d\"", attr, g->index);
    return;
  }
  (void)s;
  fprintf(f, " %s=\"s%d:g%d\"", attr, g->sys, g->index);
}

static int collect_geoms(const tl_engine_scene *s, pgeom **out) {
  int n = s->nstatic;
  for (int i = 0; i < s->nsystem; ++i) n += s->systems[i].model.ngeom;
  pgeom *g = calloc((size_t)n + 1, sizeof(*g));
  if (!g) return -1;
  int k = 0;
  for (int i = 0; i < s->nsystem; ++i) {
    const tl_engine_model *m = &s->systems[i].model;
    for (int j = 0; j < m->ngeom; ++j)
      g[k++] = (pgeom){i, m->geom_body[j], j, m->geom_group[j], m->geom_mask[j], m->geom_material[j], m->geom_friction[j]};
  }
  for (int i = 0; i < s->nstatic; ++i) {
    const tl_engine_static *st = &s->statics[i];
    g[k++] = (pgeom){-1, -1, i, st->group, st->mask, st->material, st->friction};
  }
  *out = g;
  return n;
}

static void put_pairs(builder *B) {
  FILE *f = B->f;
  const tl_engine_scene *s = B->s;
  pgeom *g = NULL;
  int n = collect_geoms(s, &g);
  if (n < 0) return;
  int any = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const pgeom *a = &g[i], *b = &g[j];
      if (a->sys < 0) continue; /* statics are last: a static a means b static too */
      if (!tlp_may_collide(s, a->sys, a->body, a->group, a->mask, b->sys, b->body, b->group, b->mask)) continue;
      double mu, e, thr, erp, cfm;
      tlp_pair_material(s, a->material, b->material, a->friction, b->friction, &mu, &e, &thr, &erp, &cfm);
      if (!any) fputs("  <contact>\n", f);
      any = 1;
      fputs("    <pair", f);
      put_pair_name(f, "geom1", a, s);
      put_pair_name(f, "geom2", b, s);
      double fr[5] = {mu, mu, 0.005, 0.0001, 0.0001};
      fputs(" condim=\"3\"", f);
      tlmj_put_vec(f, "friction", fr, 5);
      fputs("/>\n", f);
    }
  if (any) fputs("  </contact>\n", f);
  free(g);
}

static void put_actuators(builder *B) {
  FILE *f = B->f;
  const tl_engine_scene *s = B->s;
  fputs("  <actuator>\n", f);
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *m = &s->systems[si].model;
    for (int b = 0; b < m->nbody; ++b) {
      tl_joint_type t = m->jnt_type[b];
      if (t == TL_JOINT_FLOATING || t == TL_JOINT_FIXED) continue;
      int n = t == TL_JOINT_UNIVERSAL ? 2 : t == TL_JOINT_SPHERICAL ? 3 : 1;
      for (int k = 0; k < n; ++k) {
        int v = m->v_adr[b] + k;
        fputs("    <general", f);
        put_name(f, "joint", si, m->joint_name[b], t == TL_JOINT_UNIVERSAL && k == 1 ? ":axis2" : NULL);
        if (t == TL_JOINT_SPHERICAL) {
          double gear[3] = {k == 0, k == 1, k == 2};
          tlmj_put_vec(f, "gear", gear, 3);
        }
        fputs(" gainprm=\"1\" biastype=\"affine\" biasprm=\"0 0 0\" ctrllimited=\"false\"", f);
        double eff = m->dof_effort[v];
        if (isfinite(eff)) {
          double r[2] = {-eff, eff};
          fputs(" forcelimited=\"true\"", f);
          tlmj_put_vec(f, "forcerange", r, 2);
        } else {
          fputs(" forcelimited=\"false\"", f);
        }
        fputs("/>\n", f);
      }
    }
  }
  fputs("  </actuator>\n", f);
}

static void put_equalities(builder *B) {
  FILE *f = B->f;
  const tl_engine_scene *s = B->s;
  int any = 0;
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *m = &s->systems[si].model;
    for (int k = 0; k < m->nv; ++k) {
      int leader = m->dof_mimic[k];
      if (leader < 0) continue;
      int bf = m->dof_body[k], bl = m->dof_body[leader];
      if (!any) fputs("  <equality>\n", f);
      any = 1;
      fputs("    <joint", f);
      put_name(f, "joint1", si, m->joint_name[bf], NULL);
      put_name(f, "joint2", si, m->joint_name[bl], NULL);
      double poly[5] = {m->dof_mimic_offset[k], m->dof_mimic_mult[k], 0, 0, 0};
      tlmj_put_vec(f, "polycoef", poly, 5);
      fputs("/>\n", f);
    }
  }
  /* loop constraints (talus/constraint.h): ball -> <connect>, hinge -> two <connect> on its axis, weld ->
   * <weld>; their points and relative pose are written into eq_data after compiling (patch_model) */
  for (int k = 0; k < s->nconstraint; ++k) {
    const tl_engine_constraint *c = &s->constraints[k];
    if (c->type == TL_CONSTRAINT_DISTANCE) continue; /* refused before (tlmj_build) */
    if (!any) fputs("  <equality>\n", f);
    any = 1;
    for (int h = 0; h < (c->type == TL_CONSTRAINT_HINGE ? 2 : 1); ++h) {
      fprintf(f, "    <%s name=\"c%d%s\"", c->type == TL_CONSTRAINT_WELD ? "weld" : "connect", k, h ? ":axis" : "");
      put_name(f, "body1", c->sys[0], s->systems[c->sys[0]].model.body_name[c->body[0]], NULL);
      if (c->sys[1] >= 0)
        put_name(f, "body2", c->sys[1], s->systems[c->sys[1]].model.body_name[c->body[1]], NULL);
      else
        fputs(" body2=\"world\"", f);
      fputs(c->type == TL_CONSTRAINT_WELD ? "/>\n" : " anchor=\"0 0 0\"/>\n", f);
    }
  }
  if (any) fputs("  </equality>\n", f);
}

/* Length of the second connect of a hinge along its axis, m. */
#define MJB_HINGE_ARM 0.1

/* eq_data of the loop constraints (MuJoCo 2.2, engine_core_constraint.c):
 * connect: [anchor in body1's frame, anchor in body2's frame]; weld:
 * [point in body2's frame, point in body1's frame, relpose quaternion with
 * q2 = q1 relpose at rest, torquescale]. Frames are body frames (xpos, xmat),
 * as Talus's. */
static void patch_constraints(const tl_engine_scene *s, mjModel *m) {
  for (int k = 0; k < s->nconstraint; ++k) {
    const tl_engine_constraint *c = &s->constraints[k];
    for (int h = 0; h < (c->type == TL_CONSTRAINT_HINGE ? 2 : 1); ++h) {
      char name[32];
      snprintf(name, sizeof(name), "c%d%s", k, h ? ":axis" : "");
      int id = mj_name2id(m, mjOBJ_EQUALITY, name);
      if (id < 0) continue;
      mjtNum *d = m->eq_data + mjNEQDATA * id;
      if (c->type == TL_CONSTRAINT_WELD) {
        double Rrel[9], q[4];
        tl_m3_mult(Rrel, c->rot[0], c->rot[1]); /* r1 r2^T: R2 = R1 Rrel when the frames coincide */
        tl_quat_from_m3(q, Rrel);
        for (int i = 0; i < 3; ++i) d[i] = c->pos[1][i], d[3 + i] = c->pos[0][i];
        for (int i = 0; i < 4; ++i) d[6 + i] = q[i];
        d[10] = 1;
        continue;
      }
      for (int i = 0; i < 3; ++i) {
        d[i] = c->pos[0][i] + (h ? MJB_HINGE_ARM * c->axis[0][i] : 0);
        d[3 + i] = c->pos[1][i] + (h ? MJB_HINGE_ARM * c->axis[1][i] : 0);
      }
    }
  }
}

static char *write_mjcf(builder *B) {
  const tl_engine_scene *s = B->s;
  const tlmj_options *o = B->o;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  B->f = f;
  fputs("<mujoco model=\"talus\">\n  <compiler angle=\"radian\" inertiafromgeom=\"false\" fusestatic=\"false\" "
        "balanceinertia=\"false\" boundmass=\"0\" boundinertia=\"0\"/>\n  <option",
        f);
  tlmj_put_num(f, "timestep", s->options.dt);
  tlmj_put_vec(f, "gravity", s->options.gravity, 3);
  fputs(" integrator=\"Euler\"", f);
  if (o->cone) fprintf(f, " cone=\"%s\"", o->cone);
  if (o->solver) fprintf(f, " solver=\"%s\"", o->solver);
  if (o->impratio > 0) tlmj_put_num(f, "impratio", o->impratio);
  if (o->iterations > 0) fprintf(f, " iterations=\"%d\"", o->iterations);
  fputs(">\n", f);
  if (!o->contacts) fputs("    <flag contact=\"disable\"/>\n", f);
  fputs("  </option>\n", f);
  put_assets(B);
  fputs("  <worldbody>\n", f);
  if (o->contacts) put_statics(B);
  for (int si = 0; si < s->nsystem; ++si) put_body(B, si, 0, 2);
  fputs("  </worldbody>\n", f);
  if (o->contacts) put_pairs(B);
  put_actuators(B);
  put_equalities(B);
  fputs("</mujoco>\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* MuJoCo 2.2's XML loader keeps global parser state: one load at a time (worlds may be built
 * on several threads, e.g. batched environments). */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

mjModel *tlmj_load_xml(const char *text, char *why, size_t len) {
  mjVFS *vfs = malloc(sizeof(mjVFS));
  if (!vfs) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  mj_defaultVFS(vfs);
  int size = (int)strlen(text);
  mjModel *m = NULL;
  if (mj_makeEmptyFileVFS(vfs, MJB_XML, size) != 0) {
    snprintf(why, len, "MuJoCo VFS: cannot make the model file");
  } else {
    int i = mj_findFileVFS(vfs, MJB_XML);
    memcpy(vfs->filedata[i], text, (size_t)size);
    char err[1000] = "";
    pthread_mutex_lock(&load_lock);
    m = mj_loadXML(MJB_XML, vfs, err, sizeof err);
    pthread_mutex_unlock(&load_lock);
    if (!m) {
      for (char *c = err; *c; ++c)
        if (*c == '\n') *c = ' ';
      snprintf(why, len, "MuJoCo refused the generated MJCF: %.900s", err);
    }
  }
  mj_deleteVFS(vfs);
  free(vfs);
  return m;
}

/* ------------------------------------------------------------ map */

void tlmj_map_free(tlmj_map *map) {
  if (!map) return;
  for (int i = 0; i < map->nsys && map->sys; ++i) {
    free(map->sys[i].body);
    free(map->sys[i].joint);
    free(map->sys[i].act);
  }
  free(map->sys);
  free(map->geom_sys);
  memset(map, 0, sizeof(*map));
}

static int id_of(const mjModel *m, int type, int sys, const char *name, const char *suffix) {
  char full[400];
  snprintf(full, sizeof(full), "s%d:%s%s", sys, name, suffix ? suffix : "");
  return mj_name2id(m, type, full);
}

static int fill_map(const tl_engine_scene *s, const mjModel *m, tlmj_map *map, char *why, size_t len) {
  map->nsys = s->nsystem;
  map->sys = calloc((size_t)s->nsystem + 1, sizeof(*map->sys));
  map->ngeom = m->ngeom;
  map->geom_sys = malloc((size_t)(3 * m->ngeom + 1) * sizeof(int));
  if (!map->sys || !map->geom_sys) goto oom;
  map->geom_body = map->geom_sys + m->ngeom;
  map->geom_index = map->geom_body + m->ngeom;
  for (int g = 0; g < m->ngeom; ++g) map->geom_sys[g] = -2, map->geom_body[g] = -1, map->geom_index[g] = -1;
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *tm = &s->systems[si].model;
    tlmj_sys_map *sm = &map->sys[si];
    sm->body = malloc((size_t)tm->nbody * sizeof(int));
    sm->joint = malloc((size_t)(2 * tm->nbody) * sizeof(int));
    sm->act = malloc((size_t)(tm->nv + 1) * sizeof(int));
    if (!sm->body || !sm->joint || !sm->act) goto oom;
    for (int b = 0; b < tm->nbody; ++b) {
      sm->body[b] = id_of(m, mjOBJ_BODY, si, tm->body_name[b], NULL);
      sm->joint[2 * b] = sm->joint[2 * b + 1] = -1;
      if (sm->body[b] < 0) {
        snprintf(why, len, "no MuJoCo body for '%s'", tm->body_name[b]);
        return -1;
      }
      tl_joint_type t = tm->jnt_type[b];
      if (t == TL_JOINT_FIXED) continue;
      for (int k = 0; k < (t == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
        int j = id_of(m, mjOBJ_JOINT, si, tm->joint_name[b], k ? ":axis2" : NULL);
        static const int want[] = {[TL_JOINT_FLOATING] = mjJNT_FREE, [TL_JOINT_REVOLUTE] = mjJNT_HINGE,
                                   [TL_JOINT_PRISMATIC] = mjJNT_SLIDE, [TL_JOINT_SPHERICAL] = mjJNT_BALL,
                                   [TL_JOINT_UNIVERSAL] = mjJNT_HINGE};
        if (j < 0 || m->jnt_type[j] != want[t] || m->jnt_bodyid[j] != sm->body[b]) {
          snprintf(why, len, "no MuJoCo joint of the right type for '%s' on body '%s'", tm->joint_name[b], tm->body_name[b]);
          return -1;
        }
        sm->joint[2 * b + k] = j;
      }
    }
    for (int v = 0; v < tm->nv; ++v) sm->act[v] = -1;
  }
  /* actuators in the order put_actuators wrote them */
  int a = 0;
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *tm = &s->systems[si].model;
    for (int b = 0; b < tm->nbody; ++b) {
      tl_joint_type t = tm->jnt_type[b];
      if (t == TL_JOINT_FLOATING || t == TL_JOINT_FIXED) continue;
      for (int k = 0; k < tm->jnt_nv[b]; ++k) map->sys[si].act[tm->v_adr[b] + k] = a++;
    }
  }
  if (a != m->nu) {
    snprintf(why, len, "%d MuJoCo actuators, expected %d", m->nu, a);
    return -1;
  }
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *tm = &s->systems[si].model;
    for (int g = 0; g < tm->ngeom; ++g) {
      char gname[32];
      snprintf(gname, sizeof(gname), "g%d", g);
      int id = id_of(m, mjOBJ_GEOM, si, gname, NULL);
      if (id >= 0) map->geom_sys[id] = si, map->geom_body[id] = tm->geom_body[g], map->geom_index[id] = g;
    }
  }
  for (int i = 0; i < s->nstatic; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "static%d", i);
    int id = mj_name2id(m, mjOBJ_GEOM, name);
    if (id >= 0) map->geom_sys[id] = -1, map->geom_index[id] = i;
  }
  map->site = mj_name2id(m, mjOBJ_SITE, MJB_SITE);
  return 0;
oom:
  snprintf(why, len, "out of memory");
  return -1;
}

/* Exact inertials over the placeholders, elevation data, spring mounts of ball joints. */
static void patch_model(builder *B, mjModel *m, tlmj_map *map) {
  const tl_engine_scene *s = B->s;
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *tm = &s->systems[si].model;
    for (int b = 0; b < tm->nbody; ++b) {
      int id = map->sys[si].body[b];
      if (B->patched[si][b]) {
        double d[3], V[9], *iq = m->body_iquat + 4 * id;
        sym3_eig(tm->body_inertia + 9 * b, d, V);
        m->body_mass[id] = tm->body_mass[b];
        memcpy(m->body_ipos + 3 * id, tm->body_com + 3 * b, 3 * sizeof(double));
        tl_quat_from_m3(iq, V);
        memcpy(m->body_inertia + 3 * id, d, 3 * sizeof(double));
        const double *c = tm->body_com + 3 * b;
        m->body_sameframe[id] = c[0] == 0 && c[1] == 0 && c[2] == 0 && iq[0] == 1 && iq[1] == 0 && iq[2] == 0 && iq[3] == 0;
        map->npatched++;
      }
      if (tm->jnt_type[b] == TL_JOINT_SPHERICAL && tm->dof_stiffness[tm->v_adr[b]] != 0)
        memcpy(m->qpos_spring + m->jnt_qposadr[map->sys[si].joint[2 * b]], tm->jnt_spring_quat + 4 * b, 4 * sizeof(double));
    }
  }
  for (int i = 0; i < s->nstatic && B->o->contacts; ++i) {
    const tl_engine_static *st = &s->statics[i];
    if (st->heightmap < 0) continue;
    const tl_engine_heightmap *h = &s->heightmaps[st->heightmap];
    char name[64];
    snprintf(name, sizeof(name), MJB_HFIELD, i);
    int id = mj_name2id(m, mjOBJ_HFIELD, name);
    if (id < 0) continue;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < h->nx * h->ny; ++k) lo = fmin(lo, h->heights[k]), hi = fmax(hi, h->heights[k]);
    double range = fmax(hi - lo, 1e-6);
    float *data = m->hfield_data + m->hfield_adr[id];
    for (int r = 0; r < h->ny; ++r) /* MuJoCo's row r lies at y = (2 r / (nrow - 1) - 1) size_y */
      for (int c = 0; c < h->nx; ++c) data[r * h->nx + c] = (float)((h->heights[r * h->nx + c] - lo) / range);
  }
}

int tlmj_build(const tl_engine_scene *s, const tlmj_options *o, mjModel **out, tlmj_map *map, char *why,
               size_t why_len) {
  *out = NULL;
  memset(map, 0, sizeof(*map));
  builder B = {s, o, NULL, 0, NULL};
  for (int si = 0; si < s->nsystem; ++si) {
    const tl_engine_model *tm = &s->systems[si].model;
    for (int b = 0; b < tm->nbody; ++b)
      if (tm->jnt_type[b] == TL_JOINT_PLANAR) {
        snprintf(why, why_len, "system %d ('%s'), joint '%s': MuJoCo has no planar joint here", si, tm->name,
                 tm->joint_name[b]);
        return -1;
      }
    for (int g = 0; g < tm->ngeom && o->contacts; ++g)
      if (tm->geom_type[g] == TL_GEOM_MESH ? tm->geom_hull[g] < 0 || tm->hull_nvert[tm->geom_hull[g]] < 4
                                           : tm->geom_type[g] > TL_GEOM_MESH) {
        snprintf(why, why_len, "system %d ('%s'), geom '%s': a %s geom%s has no MuJoCo counterpart here", si,
                 tm->name, tm->geom_name[g], tlp_geom_name(tm->geom_type[g]),
                 tm->geom_type[g] == TL_GEOM_MESH ? " without a convex hull" : " on a body");
        return -1;
      }
  }
  for (int k = 0; k < s->nconstraint; ++k)
    if (s->constraints[k].type == TL_CONSTRAINT_DISTANCE) {
      snprintf(why, why_len, "constraint '%s': MuJoCo 2.2 has no distance equality", s->constraints[k].name);
      return -1;
    }
  B.patched = calloc((size_t)s->nsystem + 1, sizeof(unsigned char *));
  int ok = B.patched != NULL;
  for (int si = 0; si < s->nsystem && ok; ++si)
    ok = (B.patched[si] = calloc((size_t)s->systems[si].model.nbody + 1, 1)) != NULL;
  char *text = ok ? write_mjcf(&B) : NULL;
  mjModel *m = text ? tlmj_load_xml(text, why, why_len) : NULL;
  if (!text) snprintf(why, why_len, "out of memory writing the MJCF");
  int rc = -1;
  if (m && fill_map(s, m, map, why, why_len) == 0) {
    patch_model(&B, m, map);
    patch_constraints(s, m);
    mjData *d = mj_makeData(m);
    if (d) {
      mj_setConst(m, d);
      mj_deleteData(d);
      rc = 0;
    } else {
      snprintf(why, why_len, "mj_makeData failed");
    }
  }
  free(text);
  for (int si = 0; si < s->nsystem && B.patched; ++si) free(B.patched[si]);
  free(B.patched);
  if (rc) {
    if (m) mj_deleteModel(m);
    tlmj_map_free(map);
    return -1;
  }
  *out = m;
  return 0;
}

/* ------------------------------------------------------------ coordinates */

void tlmj_to_mujoco(const mjModel *m, const tlmj_map *map, int sys, const tl_engine_model *tm,
                    const double *q, const double *u, double *qpos, double *qvel) {
  const tlmj_sys_map *sm = &map->sys[sys];
  for (int b = 0; b < tm->nbody; ++b) {
    tl_joint_type t = tm->jnt_type[b];
    if (t == TL_JOINT_FIXED) continue;
    const double *qb = q + tm->q_adr[b], *ub = u ? u + tm->v_adr[b] : NULL;
    for (int k = 0; k < (t == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
      int j = sm->joint[2 * b + k], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
      double R[9];
      switch (t) {
        case TL_JOINT_FLOATING:
          memcpy(qpos + qa, qb, 7 * sizeof(double));
          if (ub) {
            tl_quat_to_m3(R, qb + 3);
            memcpy(qvel + da, ub, 3 * sizeof(double));
            tl_m3_tmulv(qvel + da + 3, R, ub + 3); /* body-frame angular velocity */
          }
          break;
        case TL_JOINT_SPHERICAL:
          memcpy(qpos + qa, qb, 4 * sizeof(double));
          if (ub) {
            tl_quat_to_m3(R, qb);
            tl_m3_tmulv(qvel + da, R, ub); /* child-frame angular velocity */
          }
          break;
        default:
          qpos[qa] = qb[k];
          if (ub) qvel[da] = ub[k];
      }
    }
  }
}

void tlmj_from_mujoco(const mjModel *m, const tlmj_map *map, int sys, const tl_engine_model *tm,
                      const double *qpos, const double *qvel, double *q, double *u) {
  const tlmj_sys_map *sm = &map->sys[sys];
  for (int b = 0; b < tm->nbody; ++b) {
    tl_joint_type t = tm->jnt_type[b];
    if (t == TL_JOINT_FIXED) continue;
    double *qb = q + tm->q_adr[b], *ub = u + tm->v_adr[b];
    for (int k = 0; k < (t == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
      int j = sm->joint[2 * b + k], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
      double R[9];
      switch (t) {
        case TL_JOINT_FLOATING:
          memcpy(qb, qpos + qa, 7 * sizeof(double));
          tl_quat_normalize(qb + 3);
          tl_quat_to_m3(R, qb + 3);
          memcpy(ub, qvel + da, 3 * sizeof(double));
          tl_m3_mulv(ub + 3, R, qvel + da + 3);
          break;
        case TL_JOINT_SPHERICAL:
          memcpy(qb, qpos + qa, 4 * sizeof(double));
          tl_quat_normalize(qb);
          tl_quat_to_m3(R, qb);
          tl_m3_mulv(ub, R, qvel + da);
          break;
        default:
          qb[k] = qpos[qa];
          ub[k] = qvel[da];
      }
    }
  }
}

void tlmj_add_force(const mjModel *m, const tlmj_map *map, int sys, const tl_engine_model *tm,
                    const double *qpos, const double *f, double *qfrc) {
  const tlmj_sys_map *sm = &map->sys[sys];
  for (int b = 0; b < tm->nbody; ++b) {
    tl_joint_type t = tm->jnt_type[b];
    if (t == TL_JOINT_FIXED) continue;
    const double *fb = f + tm->v_adr[b];
    for (int k = 0; k < (t == TL_JOINT_UNIVERSAL ? 2 : 1); ++k) {
      int j = sm->joint[2 * b + k], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
      double R[9], x[3];
      switch (t) {
        case TL_JOINT_FLOATING:
          tl_quat_to_m3(R, qpos + qa + 3);
          for (int i = 0; i < 3; ++i) qfrc[da + i] += fb[i];
          tl_m3_tmulv(x, R, fb + 3);
          for (int i = 0; i < 3; ++i) qfrc[da + 3 + i] += x[i];
          break;
        case TL_JOINT_SPHERICAL:
          tl_quat_to_m3(R, qpos + qa);
          tl_m3_tmulv(x, R, fb);
          for (int i = 0; i < 3; ++i) qfrc[da + i] += x[i];
          break;
        default:
          qfrc[da] += fb[k];
      }
    }
  }
}
