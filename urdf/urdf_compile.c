/* Compile a parsed URDF (tl_urdf_doc) into a tl_model.
 *
 * - Base type: TL_BASE_AUTO means fixed iff the root link is named "world"
 *   and every joint leaving it is fixed; a floating request on such a file
 *   drops the "world" link and floats its single child.
 * - Bodies are created depth-first from the root link, children in the order
 *   their joints appear in the file; body i is the child of movable joint i.
 * - Fixed links are merged into their movable ancestor: mass and first
 *   moment add, and rotational inertias add about the body origin (parallel
 *   axis theorem), which is exact; the COM inertia is recovered at the end.
 * - Every joint, fixed ones included, keeps a frame named after it; the base
 *   has the frame "ROOT". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "model/model.h"
#include "urdf/urdf_compile.h"

typedef struct link_info {
  int body;        /* body the link belongs to, -1 if not reached */
  double pos[3];   /* link frame in the body frame */
  double rot[9];
} link_info;

typedef struct build_ctx {
  const tl_urdf_doc *doc;
  tl_model *m;
  link_info *links;
  int *child_start, *child_list; /* CSR list of joints leaving each link, file order */
  double *first_moment;          /* [nbody*3] sum m c in the body frame */
  double *inertia_o;             /* [nbody*9] inertia about the body origin */
  int root_link;
  int skip_joint;                /* joint dropped with the "world" link, or -1 */
  int nbody, nframe, ngeom, nq, nv;
} build_ctx;

static void pose_to_rt(const tl_urdf_pose *p, double pos[3], double rot[9]) {
  tl_v3_copy(pos, p->xyz);
  tl_m3_from_rpy(rot, p->rpy);
}

/* child pose = parent pose * local pose */
static void compose(double pos[3], double rot[9], const double ppos[3], const double prot[9],
                    const double lpos[3], const double lrot[9]) {
  double t[3];
  tl_m3_mulv(t, prot, lpos);
  tl_v3_add(pos, ppos, t);
  tl_m3_mul(rot, prot, lrot);
}

static int build_children(build_ctx *c) {
  const tl_urdf_doc *d = c->doc;
  c->child_start = calloc((size_t)d->nlink + 1, sizeof(int));
  c->child_list = calloc((size_t)d->njoint + 1, sizeof(int));
  if (!c->child_start || !c->child_list) return -1;
  for (int j = 0; j < d->njoint; j++) c->child_start[d->joints[j].parent_link + 1]++;
  for (int l = 0; l < d->nlink; l++) c->child_start[l + 1] += c->child_start[l];
  int *fill = calloc((size_t)d->nlink, sizeof(int));
  if (!fill) return -1;
  for (int j = 0; j < d->njoint; j++) {
    int p = d->joints[j].parent_link;
    c->child_list[c->child_start[p] + fill[p]++] = j;
  }
  free(fill);
  return 0;
}

/* Decide the base type and the root link. */
static tl_status choose_base(build_ctx *c, tl_base_type want, tl_base_type *base, tl_error *err) {
  const tl_urdf_doc *d = c->doc;
  int root = d->root_link;
  const tl_urdf_link *rl = &d->links[root];
  int nchild = c->child_start[root + 1] - c->child_start[root];
  int world_fixed = strcmp(rl->name, "world") == 0 && nchild > 0;
  for (int k = c->child_start[root]; world_fixed && k < c->child_start[root + 1]; k++)
    if (d->joints[c->child_list[k]].type != TL_JOINT_FIXED) world_fixed = 0;
  c->root_link = root;
  c->skip_joint = -1;
  *base = want == TL_BASE_AUTO ? (world_fixed ? TL_BASE_FIXED : TL_BASE_FLOATING) : want;
  if (*base == TL_BASE_FLOATING && strcmp(rl->name, "world") == 0) {
    if (nchild != 1 || rl->has_inertial)
      return tl_error_set(err, TL_ERR_INVALID, d->path, rl->line, "link",
                          "a floating base was requested but the root link 'world' has %d child "
                          "joints: expected exactly one, whose child becomes the floating base",
                          nchild);
    c->skip_joint = c->child_list[c->child_start[root]];
    c->root_link = d->joints[c->skip_joint].child_link;
  }
  return TL_OK;
}

/* First pass: count bodies, frames, geoms, q and u; refuse joints that cannot
 * be simulated in this tree (a floating joint below the root). */
static tl_status count_link(build_ctx *c, int link, tl_error *err) {
  const tl_urdf_doc *d = c->doc;
  c->ngeom += d->links[link].ngeom;
  for (int k = c->child_start[link]; k < c->child_start[link + 1]; k++) {
    const tl_urdf_joint *j = &d->joints[c->child_list[k]];
    if (c->child_list[k] == c->skip_joint) continue;
    if (j->type == TL_JOINT_FLOATING)
      return tl_error_set(err, TL_ERR_UNSUPPORTED, d->path, j->line, "joint",
                          "joint '%s' is floating but is not attached to the root link: only the "
                          "base can float (load it as a separate system)", j->name);
    c->nframe++;
    if (j->type != TL_JOINT_FIXED) {
      c->nbody++;
      c->nq += tl_joint_nq(j->type);
      c->nv += tl_joint_nv(j->type);
    }
    tl_status s = count_link(c, j->child_link, err);
    if (s) return s;
  }
  return TL_OK;
}

/* Add a link's inertia and geoms to its body. */
static void merge_link(build_ctx *c, int link) {
  const tl_urdf_link *l = &c->doc->links[link];
  const link_info *li = &c->links[link];
  tl_model *m = c->m;
  int b = li->body;
  if (l->has_inertial && l->mass > 0) {
    double ipos[3], irot[9], com[3], rot[9], Ic[9], Ib[9];
    pose_to_rt(&l->inertial_origin, ipos, irot);
    compose(com, rot, li->pos, li->rot, ipos, irot);
    const double *in = l->inertia;
    double I[9] = {in[0], in[1], in[2], in[1], in[3], in[4], in[2], in[4], in[5]};
    tl_m3_rotate_tensor(Ic, rot, I);
    double cc = tl_v3_dot(com, com);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++)
        Ib[3 * i + k] = Ic[3 * i + k] + l->mass * ((i == k ? cc : 0.0) - com[i] * com[k]);
    m->body_mass[b] += l->mass;
    tl_v3_addscl(c->first_moment + 3 * b, com, l->mass);
    for (int i = 0; i < 9; i++) c->inertia_o[9 * b + i] += Ib[i];
  }
  for (int g = 0; g < l->ngeom; g++) {
    const tl_urdf_geom *ug = &l->geoms[g];
    int k = c->ngeom++;
    double gpos[3], grot[9];
    pose_to_rt(&ug->origin, gpos, grot);
    compose(m->geom_pos + 3 * k, m->geom_rot + 9 * k, li->pos, li->rot, gpos, grot);
    m->geom_body[k] = b;
    m->geom_type[k] = ug->type;
    memcpy(m->geom_size + 3 * k, ug->size, sizeof(ug->size));
    m->geom_friction[k] = 0.8;
    snprintf(m->geom_link[k], TL_NAME_MAX, "%s", l->name);
    if (ug->name[0])
      snprintf(m->geom_name[k], TL_NAME_MAX, "%s", ug->name);
    else if (l->ngeom == 1)
      snprintf(m->geom_name[k], TL_NAME_MAX, "%s", l->name);
    else
      snprintf(m->geom_name[k], TL_NAME_MAX, "%.100s/%d", l->name, g);
    snprintf(m->geom_mesh[k], sizeof(m->geom_mesh[k]), "%s", ug->mesh_uri);
  }
}

static void add_frame(build_ctx *c, const char *name, int body, const double pos[3],
                      const double rot[9], tl_joint_type type, const char *link) {
  tl_model *m = c->m;
  int f = c->nframe++;
  snprintf(m->frame_name[f], TL_NAME_MAX, "%s", name);
  snprintf(m->frame_link[f], TL_NAME_MAX, "%s", link);
  m->frame_body[f] = body;
  tl_v3_copy(m->frame_pos + 3 * f, pos);
  tl_m3_copy(m->frame_rot + 9 * f, rot);
  m->frame_jnt_type[f] = type;
}

/* Create the body carried by movable joint j, child of link `parent_link`. */
static int add_body(build_ctx *c, const tl_urdf_joint *j, int parent_link) {
  tl_model *m = c->m;
  const link_info *pl = &c->links[parent_link];
  int b = c->nbody++;
  double opos[3], orot[9];
  pose_to_rt(&j->origin, opos, orot);
  compose(m->jnt_pos + 3 * b, m->jnt_rot + 9 * b, pl->pos, pl->rot, opos, orot);
  m->parent[b] = pl->body;
  m->jnt_type[b] = j->type;
  m->jnt_line[b] = j->line;
  snprintf(m->joint_name[b], TL_NAME_MAX, "%s", j->name);
  snprintf(m->body_name[b], TL_NAME_MAX, "%s", c->doc->links[j->child_link].name);
  tl_v3_copy(m->jnt_axis + 3 * b, j->axis);
  tl_v3_copy(m->jnt_axis2 + 3 * b, j->axis2);
  m->q_adr[b] = c->nq;
  m->v_adr[b] = c->nv;
  m->jnt_nq[b] = tl_joint_nq(j->type);
  m->jnt_nv[b] = tl_joint_nv(j->type);
  if (j->type == TL_JOINT_SPHERICAL) m->q0[c->nq] = 1.0;
  for (int k = 0; k < m->jnt_nv[b]; k++) {
    int v = c->nv + k;
    m->dof_body[v] = b;
    m->dof_parent[v] = k > 0 ? v - 1 : -1; /* first DOF: set by fix_dof_parents() */
    int onedof = m->jnt_nv[b] == 1;
    m->dof_rotor_inertia[v] = j->rotor_inertia;
    m->dof_damping[v] = j->damping;
    m->dof_friction[v] = j->friction;
    m->dof_stiffness[v] = j->stiffness;
    m->dof_spring_mount[v] = onedof ? j->spring_mount : 0.0;
    m->dof_lower[v] = onedof ? j->lower : -INFINITY;
    m->dof_upper[v] = onedof ? j->upper : INFINITY;
    m->dof_effort[v] = j->effort;
    m->dof_velocity[v] = j->velocity;
  }
  c->nq += m->jnt_nq[b];
  c->nv += m->jnt_nv[b];
  return b;
}

/* dof_parent of each joint's first DOF: the last DOF of the nearest ancestor
 * body that has one (-1 at the root). */
static void fix_dof_parents(tl_model *m) {
  for (int b = 1; b < m->nbody; b++) {
    int v = m->v_adr[b];
    if (m->jnt_nv[b] == 0) continue;
    int p = m->parent[b];
    while (p >= 0 && m->jnt_nv[p] == 0) p = m->parent[p];
    m->dof_parent[v] = p >= 0 ? m->v_adr[p] + m->jnt_nv[p] - 1 : -1;
  }
}

static void walk_link(build_ctx *c, int link) {
  const tl_urdf_doc *d = c->doc;
  merge_link(c, link);
  for (int k = c->child_start[link]; k < c->child_start[link + 1]; k++) {
    int jn = c->child_list[k];
    if (jn == c->skip_joint) continue;
    const tl_urdf_joint *j = &d->joints[jn];
    link_info *cl = &c->links[j->child_link];
    const link_info *pl = &c->links[link];
    if (j->type == TL_JOINT_FIXED) {
      double opos[3], orot[9];
      pose_to_rt(&j->origin, opos, orot);
      cl->body = pl->body;
      compose(cl->pos, cl->rot, pl->pos, pl->rot, opos, orot);
    } else {
      cl->body = add_body(c, j, link);
      tl_v3_set(cl->pos, 0, 0, 0);
      tl_m3_identity(cl->rot);
    }
    add_frame(c, j->name, cl->body, cl->pos, cl->rot, j->type, d->links[j->child_link].name);
    walk_link(c, j->child_link);
  }
}

/* COM and COM inertia of each body from the accumulated moments. */
static void finish_inertia(build_ctx *c) {
  tl_model *m = c->m;
  m->total_mass = 0;
  for (int b = 0; b < m->nbody; b++) {
    double mass = m->body_mass[b], *com = m->body_com + 3 * b, *Ic = m->body_inertia + 9 * b;
    m->total_mass += mass;
    if (mass <= 0) continue;
    tl_v3_scale(com, c->first_moment + 3 * b, 1.0 / mass);
    double cc = tl_v3_dot(com, com);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++)
        Ic[3 * i + k] = c->inertia_o[9 * b + 3 * i + k] - mass * ((i == k ? cc : 0.0) - com[i] * com[k]);
  }
}

/* Every movable body must carry mass in its subtree, or M is singular. */
static tl_status check_masses(build_ctx *c, tl_error *err) {
  tl_model *m = c->m;
  double *sub = calloc((size_t)m->nbody, sizeof(double));
  if (!sub) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int b = m->nbody - 1; b >= 0; b--) {
    sub[b] += m->body_mass[b];
    if (b > 0) sub[m->parent[b]] += sub[b];
  }
  tl_status s = TL_OK;
  for (int b = 0; b < m->nbody && !s; b++) {
    if (m->jnt_nv[b] > 0 && sub[b] <= 0)
      s = tl_error_set(err, TL_ERR_INVALID, c->doc->path, m->jnt_line[b], "joint",
                       "joint '%s' moves link '%s', but neither that link nor anything attached "
                       "below it has mass: the mass matrix would be singular (give the link an "
                       "<inertial>)", m->joint_name[b], m->body_name[b]);
  }
  free(sub);
  return s;
}

static void init_root(build_ctx *c, tl_base_type base) {
  tl_model *m = c->m;
  const tl_urdf_link *rl = &c->doc->links[c->root_link];
  int floating = base == TL_BASE_FLOATING;
  m->base = base;
  m->parent[0] = -1;
  m->jnt_type[0] = floating ? TL_JOINT_FLOATING : TL_JOINT_FIXED;
  m->jnt_nq[0] = floating ? 7 : 0;
  m->jnt_nv[0] = floating ? 6 : 0;
  tl_m3_identity(m->jnt_rot);
  snprintf(m->joint_name[0], TL_NAME_MAX, "ROOT");
  snprintf(m->body_name[0], TL_NAME_MAX, "%s", rl->name);
  if (floating) m->q0[3] = 1.0;
  for (int v = 0; v < m->jnt_nv[0]; v++) {
    m->dof_body[v] = 0;
    m->dof_parent[v] = v - 1;
    m->dof_lower[v] = -INFINITY;
    m->dof_upper[v] = INFINITY;
    m->dof_effort[v] = INFINITY;
    m->dof_velocity[v] = INFINITY;
  }
  c->nbody = 1;
  c->nq = m->jnt_nq[0];
  c->nv = m->jnt_nv[0];
  c->ngeom = 0;
  c->nframe = 0;
  link_info *li = &c->links[c->root_link];
  li->body = 0;
  tl_m3_identity(li->rot);
  add_frame(c, "ROOT", 0, li->pos, li->rot, m->jnt_type[0], rl->name);
}

static void free_ctx(build_ctx *c) {
  free(c->links);
  free(c->child_start);
  free(c->child_list);
  free(c->first_moment);
  free(c->inertia_o);
}

tl_status tl_urdf_compile(const tl_urdf_doc *doc, tl_base_type want, tl_model **out, tl_error *err) {
  build_ctx c = {.doc = doc};
  *out = NULL;
  tl_base_type base;
  c.links = calloc((size_t)doc->nlink, sizeof(link_info));
  if (!c.links || build_children(&c)) {
    free_ctx(&c);
    return tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory");
  }
  tl_status s = choose_base(&c, want, &base, err);
  if (!s) {
    c.nbody = 1;
    c.nframe = 1;
    c.nq = base == TL_BASE_FLOATING ? 7 : 0;
    c.nv = base == TL_BASE_FLOATING ? 6 : 0;
    s = count_link(&c, c.root_link, err);
  }
  if (!s) {
    c.m = tl_model_alloc(c.nbody, c.nq, c.nv, c.nframe, c.ngeom);
    c.first_moment = calloc((size_t)c.nbody * 3, sizeof(double));
    c.inertia_o = calloc((size_t)c.nbody * 9, sizeof(double));
    if (!c.m || !c.first_moment || !c.inertia_o)
      s = tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory");
  }
  if (!s) {
    for (int l = 0; l < doc->nlink; l++) c.links[l].body = -1;
    init_root(&c, base);
    walk_link(&c, c.root_link);
    fix_dof_parents(c.m);
    finish_inertia(&c);
    s = check_masses(&c, err);
  }
  if (!s && base == TL_BASE_FLOATING && c.m->total_mass <= 0)
    s = tl_error_set(err, TL_ERR_INVALID, doc->path, doc->links[c.root_link].line, "link",
                     "the robot has no mass at all: a floating base needs mass");
  if (!s) {
    tl_model *m = c.m;
    snprintf(m->name, TL_NAME_MAX, "%s", doc->robot_name);
    snprintf(m->source, sizeof(m->source), "%s", doc->path);
    m->nwarning = doc->nwarning;
    memcpy(m->warnings, doc->warnings, sizeof(m->warnings));
    *out = m;
  } else {
    tl_model_free(c.m);
  }
  free_ctx(&c);
  return s;
}
