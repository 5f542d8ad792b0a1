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
 *   has the frame "ROOT". Frame i and link i of the model are the same URDF
 *   link (the frame is the one of the joint whose child it is).
 * - hinge2 (ODE's hinge-2, a URDF extension): a chain of 1-DOF joints joined
 *   by massless bodies, [prismatic suspension along axis,] revolute steering
 *   about axis, revolute wheel about axis2 (add_hinge2); the URDF joint's
 *   frame is the child link's, on the wheel body.
 * - <mimic>: the DOF of a 1-DOF joint follows the DOF of another 1-DOF joint
 *   (q = mult q_followed + offset, an equality constraint of the world); a
 *   mimic on a fixed joint has nothing to constrain and is skipped; the
 *   reference configuration q0 satisfies the mimic relations.
 * - A link-level <contact> sets the friction (lateral_friction), restitution,
 *   stiffness and damping of the link's collision geoms and names their
 *   material after the link, so a world material pair can refer to it.
 * - Visuals keep their pose in the body frame and their colour (inline, else
 *   the robot-level material of the same name). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "model/model.h"
#include "talus/model.h"
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
  int root_link;
  int skip_joint;                /* joint dropped with the "world" link, or -1 */
  int nbody, nframe, ngeom, nq, nv, nlink, nvisual;
  int *joint_body;               /* [njoint] body of each movable joint, -1 otherwise */
  const tl_urdf_material **mat_sorted; /* [nmaterial] robot-level materials sorted by name */
  int *link_index;               /* [nlink of doc] model link index, -1 if not reached */
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

/* Depth-first walk of the link tree from `root` without recursion (a chain
 * of links may be as long as the file): pre(link) for every link, then
 * edge(joint) for each of its child joints in file order before the child's
 * own pre(). Stops at the first non-zero return. The stack holds one entry
 * per tree level, at most nlink. */
typedef int (*visit_link_fn)(build_ctx *c, int link, int parent_link, void *arg);
typedef int (*visit_joint_fn)(build_ctx *c, int joint, int parent_link, void *arg);

static int walk_tree(build_ctx *c, int root, visit_link_fn pre, visit_joint_fn edge, void *arg) {
  int n = c->doc->nlink;
  int *stack = malloc((size_t)n * sizeof(int)), *next = malloc((size_t)n * sizeof(int));
  if (!stack || !next) {
    free(stack);
    free(next);
    return -2;
  }
  int sp = 0, r = pre(c, root, -1, arg);
  if (!r) stack[sp] = root, next[sp++] = c->child_start[root];
  while (!r && sp > 0) {
    int link = stack[sp - 1];
    if (next[sp - 1] >= c->child_start[link + 1]) {
      sp--;
      continue;
    }
    int jn = c->child_list[next[sp - 1]++];
    if (jn == c->skip_joint) continue;
    int child = c->doc->joints[jn].child_link;
    r = edge(c, jn, link, arg);
    if (!r) r = pre(c, child, link, arg);
    if (!r && sp < n) stack[sp] = child, next[sp++] = c->child_start[child];
  }
  free(stack);
  free(next);
  return r;
}

/* First pass: count bodies, frames, geoms, q and u; refuse joints that cannot
 * be simulated in this tree (a floating joint below the root). */
static int count_link(build_ctx *c, int link, int parent_link, void *arg) {
  (void)parent_link, (void)arg;
  c->ngeom += c->doc->links[link].ngeom;
  c->nvisual += c->doc->links[link].nvisual;
  c->nlink++;
  return 0;
}

static int count_joint(build_ctx *c, int jn, int parent_link, void *arg) {
  const tl_urdf_joint *j = &c->doc->joints[jn];
  (void)parent_link;
  if (j->type == TL_JOINT_FLOATING) {
    tl_error_set(arg, TL_ERR_UNSUPPORTED, c->doc->path, j->line, "joint",
                 "joint '%s' is floating but is not attached to the root link: only the base can "
                 "float (load it as a separate system)", j->name);
    return -1;
  }
  c->nframe++;
  for (int k = 0; j->hinge2 && k < c->doc->njoint; k++) { /* the chain's joint names are free */
    const char *o = c->doc->joints[k].name;
    size_t n = strlen(j->name);
    if (strncmp(o, j->name, n) != 0 || (strcmp(o + n, "_wheel") != 0 && strcmp(o + n, "_suspension") != 0))
      continue;
    tl_error_set(arg, TL_ERR_INVALID, c->doc->path, j->line, "joint",
                 "hinge2 joint '%s' compiles into joints '%s', '%s_wheel' and '%s_suspension', but the "
                 "file has another joint named '%s' (line %d): expected unique names", j->name, j->name,
                 j->name, j->name, o, c->doc->joints[k].line);
    return -1;
  }
  if (j->hinge2) { /* suspension (optional), steering, wheel: see add_hinge2 */
    int n = j->suspension_line ? 3 : 2;
    c->nbody += n, c->nq += n, c->nv += n;
  } else if (j->type != TL_JOINT_FIXED) {
    c->nbody++;
    c->nq += tl_joint_nq(j->type);
    c->nv += tl_joint_nv(j->type);
  }
  return 0;
}

/* Colour and texture of a visual: its own, else those of the robot-level
 * material of the same name. */
static int material_cmp(const void *a, const void *b) {
  return strcmp((*(const tl_urdf_material *const *)a)->name, (*(const tl_urdf_material *const *)b)->name);
}

static int material_key_cmp(const void *key, const void *elem) {
  return strcmp((const char *)key, (*(const tl_urdf_material *const *)elem)->name);
}

static void visual_material(const build_ctx *c, const tl_urdf_visual *v, double rgba[4], char *texture,
                            size_t cap) {
  const tl_urdf_material *own = &v->material, *global = NULL;
  if (v->has_material && own->name[0] && c->doc->nmaterial > 0) {
    const tl_urdf_material *const *hit = bsearch(own->name, c->mat_sorted, (size_t)c->doc->nmaterial,
                                                 sizeof(*c->mat_sorted), material_key_cmp);
    global = hit ? *hit : NULL;
  }
  const tl_urdf_material *col = own->has_color ? own : (global && global->has_color) ? global : NULL;
  for (int k = 0; k < 4; k++) rgba[k] = col ? col->rgba[k] : NAN;
  snprintf(texture, cap, "%s", own->texture[0] ? own->texture : global ? global->texture : "");
}

/* Add link l's visuals to its body. */
static void add_visuals(build_ctx *c, const tl_urdf_link *l, const link_info *li) {
  tl_model *m = c->m;
  for (int i = 0; i < l->nvisual; i++) {
    const tl_urdf_visual *v = &l->visuals[i];
    int k = c->nvisual++;
    double pos[3], rot[9];
    pose_to_rt(&v->geom.origin, pos, rot);
    compose(m->visual_pos + 3 * k, m->visual_rot + 9 * k, li->pos, li->rot, pos, rot);
    m->visual_body[k] = li->body;
    m->visual_type[k] = v->geom.type;
    memcpy(m->visual_size + 3 * k, v->geom.size, sizeof(v->geom.size));
    snprintf(m->visual_name[k], TL_NAME_MAX, "%s", v->geom.name);
    snprintf(m->visual_link[k], TL_NAME_MAX, "%s", l->name);
    snprintf(m->visual_mesh[k], sizeof(m->visual_mesh[k]), "%s", v->geom.mesh_uri);
    snprintf(m->visual_mesh_file[k], sizeof(m->visual_mesh_file[k]), "%s", v->geom.mesh_file);
    snprintf(m->visual_material[k], TL_NAME_MAX, "%s", v->has_material ? v->material.name : "");
    visual_material(c, v, m->visual_rgba + 4 * k, m->visual_texture[k], sizeof(m->visual_texture[k]));
  }
}

/* Record a link's inertial (merged into its body by tl_model_merge_links)
 * and add its geoms and visuals to its body. Returns -1 when a hull could
 * not be stored (out of memory). */
static int merge_link(build_ctx *c, int link, int parent_link) {
  const tl_urdf_link *l = &c->doc->links[link];
  const link_info *li = &c->links[link];
  tl_model *m = c->m;
  int b = li->body, k = c->nlink++;
  c->link_index[link] = k;
  m->link_parent[k] = parent_link >= 0 ? c->link_index[parent_link] : -1;
  snprintf(m->link_name[k], TL_NAME_MAX, "%s", l->name);
  m->link_body[k] = b;
  tl_v3_copy(m->link_pos + 3 * k, li->pos);
  tl_m3_copy(m->link_rot + 9 * k, li->rot);
  if (l->has_inertial && l->mass > 0) {
    double ipos[3], irot[9];
    pose_to_rt(&l->inertial_origin, ipos, irot);
    const double *in = l->inertia;
    double I[9] = {in[0], in[1], in[2], in[1], in[3], in[4], in[2], in[4], in[5]};
    m->link_mass[k] = l->mass;
    tl_v3_copy(m->link_com + 3 * k, ipos);
    tl_m3_rotate_tensor(m->link_inertia + 9 * k, irot, I);
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
    snprintf(m->geom_mesh_file[k], sizeof(m->geom_mesh_file[k]), "%s", ug->mesh_file);
    if (l->contact_line) {
      if (!isnan(l->contact_friction)) m->geom_friction[k] = l->contact_friction;
      m->geom_restitution[k] = l->contact_restitution;
      m->geom_contact_stiffness[k] = l->contact_stiffness;
      m->geom_contact_damping[k] = l->contact_damping;
      snprintf(m->geom_material[k], TL_NAME_MAX, "%s", l->name);
    }
    if (ug->hull_nvert > 0 &&
        tl_model_add_hull(m, k, ug->hull_nvert, ug->hull_vert, ug->hull_nface, ug->hull_face) != 0)
      return -1;
  }
  add_visuals(c, l, li);
  return 0;
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
  if (j->type == TL_JOINT_PLANAR) tl_model_planar_axes(j->axis, m->jnt_axis2 + 3 * b, NULL);
  if (j->type == TL_JOINT_SPHERICAL) { /* spring rest orientation; identity without <dynamics> */
    const double *qm = j->spring_mount;
    if (qm[0] != 0 || qm[1] != 0 || qm[2] != 0 || qm[3] != 0) memcpy(m->jnt_spring_quat + 4 * b, qm, 4 * sizeof(double));
  }
  m->q_adr[b] = c->nq;
  m->v_adr[b] = c->nv;
  m->jnt_nq[b] = tl_joint_nq(j->type);
  m->jnt_nv[b] = tl_joint_nv(j->type);
  m->jnt_calibration[2 * b] = j->calibration[0];
  m->jnt_calibration[2 * b + 1] = j->calibration[1];
  if (j->has_safety) memcpy(m->jnt_safety + 4 * b, j->safety, sizeof(j->safety));
  c->joint_body[j - c->doc->joints] = b;
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
    m->dof_spring_mount[v] = j->type == TL_JOINT_SPHERICAL ? 0.0 : j->spring_mount[k];
    m->dof_lower[v] = onedof ? j->lower : -INFINITY;
    m->dof_upper[v] = onedof ? j->upper : INFINITY;
    m->dof_effort[v] = j->effort;
    m->dof_velocity[v] = j->velocity;
  }
  c->nq += m->jnt_nq[b];
  c->nv += m->jnt_nv[b];
  return b;
}

/* One body of a hinge2 chain: a 1-DOF joint (revolute or prismatic about
 * `axis`) at pos, rot in the frame of body `parent`, named `jname`, carrying
 * body `bname`, with its DOF's parameters zero / unlimited (the caller sets
 * those it has). */
static int add_chain_body(build_ctx *c, const tl_urdf_joint *j, int parent, const double pos[3],
                          const double rot[9], tl_joint_type type, const double axis[3], const char *jname,
                          const char *bname) {
  tl_model *m = c->m;
  int b = c->nbody++, v = c->nv;
  tl_v3_copy(m->jnt_pos + 3 * b, pos);
  tl_m3_copy(m->jnt_rot + 9 * b, rot);
  m->parent[b] = parent;
  m->jnt_type[b] = type;
  m->jnt_line[b] = j->line;
  snprintf(m->joint_name[b], TL_NAME_MAX, "%s", jname);
  snprintf(m->body_name[b], TL_NAME_MAX, "%s", bname);
  tl_v3_copy(m->jnt_axis + 3 * b, axis);
  m->q_adr[b] = c->nq;
  m->v_adr[b] = v;
  m->jnt_nq[b] = m->jnt_nv[b] = 1;
  m->dof_body[v] = b;
  m->dof_parent[v] = -1; /* set by fix_dof_parents() */
  m->dof_lower[v] = -INFINITY;
  m->dof_upper[v] = INFINITY;
  m->dof_effort[v] = INFINITY;
  m->dof_velocity[v] = INFINITY;
  c->nq++;
  c->nv++;
  return b;
}

/* A hinge2 joint (ODE's hinge-2, urdf_doc.h) compiled into a chain of 1-DOF
 * joints joined at one point by massless bodies (zero mass and inertia, no
 * geoms): [suspension: prismatic along axis, joint "NAME_suspension", body
 * "NAME/suspension", the <suspension> stiffness and damping as its spring
 * (rest at 0) and damping], then steering: revolute about axis (joint NAME,
 * body "NAME/steering", the <limit> and <dynamics>), then the wheel: revolute
 * about axis2 (joint "NAME_wheel", the child link's body, <dynamics> damping,
 * friction and rotor inertia, effort and velocity limits, no position
 * limits). At zero coordinates every body frame is the child link's frame.
 * Returns the wheel body. */
static int add_hinge2(build_ctx *c, const tl_urdf_joint *j, int parent_link) {
  tl_model *m = c->m;
  const link_info *pl = &c->links[parent_link];
  double pos[3], rot[9], opos[3], orot[9], zero[3] = {0, 0, 0}, eye[9];
  char name[TL_NAME_MAX], bname[TL_NAME_MAX];
  tl_m3_identity(eye);
  pose_to_rt(&j->origin, opos, orot);
  compose(pos, rot, pl->pos, pl->rot, opos, orot);
  int parent = pl->body;
  if (j->suspension_line) {
    snprintf(name, sizeof name, "%.100s_suspension", j->name);
    snprintf(bname, sizeof bname, "%.100s/suspension", j->name);
    parent = add_chain_body(c, j, parent, pos, rot, TL_JOINT_PRISMATIC, j->axis, name, bname);
    int v = m->v_adr[parent];
    m->dof_stiffness[v] = j->suspension_stiffness;
    m->dof_damping[v] = j->suspension_damping;
    tl_v3_copy(pos, zero);
    tl_m3_copy(rot, eye);
  }
  snprintf(bname, sizeof bname, "%.100s/steering", j->name);
  int bs = add_chain_body(c, j, parent, pos, rot, TL_JOINT_REVOLUTE, j->axis, j->name, bname);
  snprintf(name, sizeof name, "%.100s_wheel", j->name);
  int bw = add_chain_body(c, j, bs, zero, eye, TL_JOINT_REVOLUTE, j->axis2, name,
                          c->doc->links[j->child_link].name);
  int vs = m->v_adr[bs], vw = m->v_adr[bw];
  m->dof_lower[vs] = j->lower;
  m->dof_upper[vs] = j->upper;
  m->dof_stiffness[vs] = j->stiffness;
  m->dof_spring_mount[vs] = j->spring_mount[0];
  m->jnt_calibration[2 * bs] = j->calibration[0];
  m->jnt_calibration[2 * bs + 1] = j->calibration[1];
  if (j->has_safety) memcpy(m->jnt_safety + 4 * bs, j->safety, sizeof(j->safety));
  for (int v = vs; v <= vw; v += vw - vs) {
    m->dof_rotor_inertia[v] = j->rotor_inertia;
    m->dof_damping[v] = j->damping;
    m->dof_friction[v] = j->friction;
    m->dof_effort[v] = j->effort;
    m->dof_velocity[v] = j->velocity;
  }
  c->joint_body[j - c->doc->joints] = bw;
  return bw;
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

/* Second pass (walk_tree callbacks): a link's inertial, geoms and visuals;
 * a joint's body (movable) or the child link's pose in its body (fixed), and
 * its frame. */
static int walk_link(build_ctx *c, int link, int parent_link, void *arg) {
  (void)arg;
  return merge_link(c, link, parent_link);
}

static int walk_joint(build_ctx *c, int jn, int link, void *arg) {
  const tl_urdf_doc *d = c->doc;
  const tl_urdf_joint *j = &d->joints[jn];
  link_info *cl = &c->links[j->child_link];
  const link_info *pl = &c->links[link];
  (void)arg;
  if (j->type == TL_JOINT_FIXED) {
    double opos[3], orot[9];
    pose_to_rt(&j->origin, opos, orot);
    cl->body = pl->body;
    compose(cl->pos, cl->rot, pl->pos, pl->rot, opos, orot);
  } else {
    cl->body = j->hinge2 ? add_hinge2(c, j, link) : add_body(c, j, link);
    tl_v3_set(cl->pos, 0, 0, 0);
    tl_m3_identity(cl->rot);
  }
  add_frame(c, j->name, cl->body, cl->pos, cl->rot, j->type, d->links[j->child_link].name);
  return 0;
}

/* <mimic>: DOF of the mimicking joint follows the DOF of the followed one.
 * Both must be 1-DOF joints of the compiled tree; a mimic on a fixed joint
 * is skipped (nothing moves). */
static tl_status compile_mimics(build_ctx *c, tl_error *err) {
  const tl_urdf_doc *d = c->doc;
  tl_model *m = c->m;
  for (int i = 0; i < d->njoint; i++) {
    const tl_urdf_joint *j = &d->joints[i];
    int b = c->joint_body[i];
    if (!j->mimic_line || b < 0) continue; /* fixed, or not in the compiled tree */
    const tl_urdf_joint *f = &d->joints[j->mimic_joint];
    int fb = c->joint_body[j->mimic_joint];
    if (m->jnt_nv[b] != 1)
      return tl_error_set(err, TL_ERR_UNSUPPORTED, d->path, j->mimic_line, "mimic",
                          "joint '%s' is %s: <mimic> is supported on revolute, continuous and "
                          "prismatic joints only", j->name, tl_joint_type_name(j->type));
    if (fb < 0 || m->jnt_nv[fb] != 1 || f->hinge2)
      return tl_error_set(err, TL_ERR_INVALID, d->path, j->mimic_line, "mimic",
                          "joint '%s' mimics joint '%s' (line %d), which is %s: expected a revolute, "
                          "continuous or prismatic joint to follow", j->name, f->name, f->line,
                          fb < 0 && f->type != TL_JOINT_FIXED ? "not part of the compiled tree"
                          : f->hinge2                          ? "hinge2"
                                                               : tl_joint_type_name(f->type));
    int k = m->v_adr[b], kf = m->v_adr[fb];
    m->dof_mimic[k] = kf;
    m->dof_mimic_mult[k] = j->mimic_mult;
    m->dof_mimic_offset[k] = j->mimic_offset;
  }
  /* q0 satisfies the relations: set each DOF after the one it follows (chains are finite, see
   * urdf_parse.c); done[] makes it O(nv) */
  char *done = calloc((size_t)(m->nv > 0 ? m->nv : 1), 1);
  int *chain = malloc((size_t)(m->nv > 0 ? m->nv : 1) * sizeof(int));
  if (!done || !chain) {
    free(done);
    free(chain);
    return tl_error_set(err, TL_ERR_MEMORY, d->path, 0, NULL, "out of memory");
  }
  for (int k = 0; k < m->nv; k++) {
    int n = 0, e = k;
    while (e >= 0 && !done[e] && m->dof_mimic[e] >= 0 && n < m->nv) chain[n++] = e, e = m->dof_mimic[e];
    while (n > 0) {
      int c = chain[--n];
      m->q0[m->q_adr[m->dof_body[c]]] =
          m->dof_mimic_mult[c] * m->q0[m->q_adr[m->dof_body[m->dof_mimic[c]]]] + m->dof_mimic_offset[c];
      done[c] = 1;
    }
    done[k] = 1;
  }
  free(done);
  free(chain);
  return TL_OK;
}

static void add_warning(tl_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(tl_model *m, const char *fmt, ...) {
  if (m->nwarning < 16) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->warnings[m->nwarning], sizeof(m->warnings[0]), fmt, ap);
    va_end(ap);
  }
  m->nwarning++;
}

/* CAD exporters (e.g. SolidWorks to URDF) write <limit lower="0" upper="0"
 * effort="0" velocity="0"/> for "not specified". Taken literally that locks
 * the joint and removes its actuator; take zeros as unspecified, and say so. */
static void placeholder_limits(const tl_urdf_doc *doc, tl_model *m) {
  for (int b = 1; b < m->nbody; b++) {
    if (m->jnt_nv[b] == 0) continue;
    int v = m->v_adr[b], pos = m->jnt_nv[b] == 1 && m->dof_lower[v] == 0 && m->dof_upper[v] == 0;
    int eff = !(m->dof_effort[v] > 0), vel = !(m->dof_velocity[v] > 0);
    if (!pos && !eff && !vel) continue;
    for (int k = v; k < v + m->jnt_nv[b]; k++) {
      if (pos) m->dof_lower[k] = -INFINITY, m->dof_upper[k] = INFINITY;
      if (eff) m->dof_effort[k] = INFINITY;
      if (vel) m->dof_velocity[k] = INFINITY;
    }
    add_warning(m, "%s:%d: joint '%s': <limit>%s%s%s taken as unspecified (exporters write zeros for that)",
                doc->path, m->jnt_line[b], m->joint_name[b], pos ? " lower = upper = 0" : "",
                eff ? " effort 0" : "", vel ? " velocity 0" : "");
  }
}

/* Volume of a collision geometry (m^3): the primitive's, or the convex hull's
 * (divergence theorem over its outward triangles); 0 for an unread mesh. */
static double geom_volume(const tl_urdf_geom *g) {
  const double *s = g->size;
  switch (g->type) {
  case TL_GEOM_BOX: return s[0] * s[1] * s[2];
  case TL_GEOM_SPHERE: return 4.0 / 3.0 * TL_PI * s[0] * s[0] * s[0];
  case TL_GEOM_CYLINDER: return TL_PI * s[0] * s[0] * s[1];
  case TL_GEOM_CAPSULE: return TL_PI * s[0] * s[0] * s[1] + 4.0 / 3.0 * TL_PI * s[0] * s[0] * s[0];
  default: break;
  }
  double v = 0;
  for (int f = 0; f < g->hull_nface; f++) {
    const double *a = g->hull_vert + 3 * g->hull_face[3 * f], *b = g->hull_vert + 3 * g->hull_face[3 * f + 1],
                 *c = g->hull_vert + 3 * g->hull_face[3 * f + 2];
    v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
  }
  return fabs(v) / 6.0;
}

/* A link whose mass in its collision geometry is denser than any material
 * (TL_DENSITY_WARN kg/m^3, 44 times osmium's 22,590) has a wrong mass: CAD
 * exports writing grams as kilograms (a Barrett hand's 56-tonne finger), or a
 * mesh in the wrong unit. Said, not refused: the file is the user's. The
 * volume is the sum over the link's geoms (overlaps count twice), so the
 * estimate errs low. Geometry under TL_DENSITY_MIN_VOLUME (1 cm^3) is a
 * placeholder, not the body (PR2's base_footprint: 1 kg in a 1 mm box), and
 * not judged. */
#define TL_DENSITY_WARN 1e6
#define TL_DENSITY_MIN_VOLUME 1e-6
static void implausible_densities(const tl_urdf_doc *doc, tl_model *m) {
  for (int l = 0; l < doc->nlink; l++) {
    const tl_urdf_link *lk = &doc->links[l];
    if (!(lk->mass > 0) || lk->ngeom == 0) continue;
    double vol = 0;
    for (int g = 0; g < lk->ngeom; g++) vol += geom_volume(&lk->geoms[g]);
    if (!(vol >= TL_DENSITY_MIN_VOLUME) || lk->mass / vol <= TL_DENSITY_WARN) continue;
    add_warning(m, "%s:%d: link '%s': mass %g kg in %g m^3 of collision geometry is %.3g kg/m^3, denser "
                "than any material (osmium: 22590): a mass in grams, or a mesh in the wrong unit?",
                doc->path, lk->line, lk->name, lk->mass, vol, lk->mass / vol);
  }
}

/* Every movable body must carry mass in its subtree, or M is singular. */
static tl_status check_masses(build_ctx *c, tl_error *err) {
  tl_model *m = c->m;
  double *sub = calloc(m->nbody > 0 ? (size_t)m->nbody : 1, sizeof(double));
  if (!sub) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int b = m->nbody - 1; b >= 0; b--) {
    sub[b] += m->body_mass[b];
    if (b > 0) sub[m->parent[b]] += sub[b];
  }
  tl_status s = TL_OK;
  int moving = 0;
  for (int b = 0; b < m->nbody; b++) moving |= m->jnt_nv[b] > 0;
  if (moving && sub[0] <= 0) /* a kinematics-only description (88 of 376 URDFs of a public dataset) */
    s = tl_error_set(err, TL_ERR_INVALID, c->doc->path, c->doc->links[c->root_link].line, "link",
                     "robot '%s' has no mass: none of its %d link%s has an <inertial> with a mass > 0, so "
                     "its motion is undefined (a kinematics-only description, as written for motion "
                     "planning or display, or PyBullet's mass 0 for a static object: give the links "
                     "<inertial> elements, or load a static object with a fixed base)", c->doc->robot_name,
                     c->doc->nlink, c->doc->nlink == 1 ? "" : "s");
  for (int b = 0; b < m->nbody && !s; b++) {
    if (m->jnt_nv[b] > 0 && sub[b] <= 0)
      s = tl_error_set(err, TL_ERR_INVALID, c->doc->path, m->jnt_line[b], b == 0 ? "link" : "joint",
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
  m->jnt_line[0] = rl->line; /* the base's errors name the root link's line */
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
  c->nlink = 0;
  link_info *li = &c->links[c->root_link];
  li->body = 0;
  tl_m3_identity(li->rot);
  add_frame(c, "ROOT", 0, li->pos, li->rot, m->jnt_type[0], rl->name);
}

static void free_ctx(build_ctx *c) {
  free((void *)c->mat_sorted);
  free(c->joint_body);
  free(c->link_index);
  free(c->links);
  free(c->child_start);
  free(c->child_list);
}

/* The <loop_joint> elements into the model's loop arrays (talus/constraint.h:
 * tl_world_add_system adds them to the world as constraints). The parser
 * resolved the links; here a loop whose two links were merged into one body
 * by fixed joints is refused (a body cannot be constrained to itself). */
static tl_status compile_loops(const tl_urdf_doc *doc, tl_model *m, tl_error *err) {
  if (doc->nloop == 0) return TL_OK;
  if (tl_model_set_nloop(m, doc->nloop)) return tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory");
  for (int i = 0; i < doc->nloop; i++) {
    const tl_urdf_loop *l = &doc->loops[i];
    int body[2] = {-1, -1};
    for (int e = 0; e < 2; e++)
      for (int k = 0; k < m->nlink; k++)
        if (!strcmp(m->link_name[k], l->link_name[e])) body[e] = m->link_body[k];
    if (body[0] >= 0 && body[0] == body[1])
      return tl_error_set(err, TL_ERR_INVALID, doc->path, l->line, "loop_joint",
                          "loop_joint '%s' joins links '%s' and '%s', which fixed joints merge into one body "
                          "('%s'): expected links on two different bodies", l->name, l->link_name[0],
                          l->link_name[1], m->body_name[body[0]]);
    snprintf(m->loop_name[i], TL_NAME_MAX, "%s", l->name);
    snprintf(m->loop_link1[i], TL_NAME_MAX, "%s", l->link_name[0]);
    snprintf(m->loop_link2[i], TL_NAME_MAX, "%s", l->link_name[1]);
    m->loop_type[i] = l->type;
    m->loop_line[i] = l->line;
    memcpy(m->loop_pos1 + 3 * i, l->frame[0].xyz, 3 * sizeof(double));
    memcpy(m->loop_rpy1 + 3 * i, l->frame[0].rpy, 3 * sizeof(double));
    memcpy(m->loop_pos2 + 3 * i, l->frame[1].xyz, 3 * sizeof(double));
    memcpy(m->loop_rpy2 + 3 * i, l->frame[1].rpy, 3 * sizeof(double));
    memcpy(m->loop_axis + 3 * i, l->axis, 3 * sizeof(double));
  }
  return TL_OK;
}

tl_status tl_urdf_compile(const tl_urdf_doc *doc, tl_base_type want, tl_model **out, tl_error *err) {
  build_ctx c = {.doc = doc};
  *out = NULL;
  tl_base_type base;
  c.links = calloc((size_t)doc->nlink, sizeof(link_info));
  c.joint_body = malloc((size_t)(doc->njoint > 0 ? doc->njoint : 1) * sizeof(int));
  c.link_index = malloc((size_t)doc->nlink * sizeof(int));
  c.mat_sorted = malloc((size_t)(doc->nmaterial > 0 ? doc->nmaterial : 1) * sizeof(*c.mat_sorted));
  for (int i = 0; c.mat_sorted && i < doc->nmaterial; i++) c.mat_sorted[i] = &doc->materials[i];
  if (c.mat_sorted) qsort((void *)c.mat_sorted, (size_t)doc->nmaterial, sizeof(*c.mat_sorted), material_cmp);
  for (int j = 0; c.joint_body && j < doc->njoint; j++) c.joint_body[j] = -1;
  for (int l = 0; c.link_index && l < doc->nlink; l++) c.link_index[l] = -1;
  if (!c.links || !c.joint_body || !c.link_index || !c.mat_sorted || build_children(&c)) {
    free_ctx(&c);
    return tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory");
  }
  tl_status s = choose_base(&c, want, &base, err);
  if (!s) {
    c.nbody = 1;
    c.nframe = 1;
    c.nq = base == TL_BASE_FLOATING ? 7 : 0;
    c.nv = base == TL_BASE_FLOATING ? 6 : 0;
    c.nlink = 0;
    int r = walk_tree(&c, c.root_link, count_link, count_joint, err);
    if (r == -2) s = tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory");
    if (r == -1) s = err ? err->status : TL_ERR_UNSUPPORTED;
  }
  if (!s) {
    c.m = tl_model_alloc(c.nbody, c.nq, c.nv, c.nframe, c.ngeom, c.nlink);
    if (!c.m || tl_model_set_extra_counts(c.m, c.nvisual, doc->nmaterial))
      s = tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory");
  }
  if (!s) {
    for (int l = 0; l < doc->nlink; l++) c.links[l].body = -1;
    init_root(&c, base);
    c.nvisual = 0;
    if (walk_tree(&c, c.root_link, walk_link, walk_joint, NULL))
      s = tl_error_set(err, TL_ERR_MEMORY, doc->path, 0, NULL, "out of memory for convex hulls");
  }
  if (!s) {
    fix_dof_parents(c.m);
    tl_model_merge_links(c.m);
    s = check_masses(&c, err);
  }
  if (!s) s = compile_mimics(&c, err);
  if (!s) {
    for (int i = 0; i < doc->nmaterial; i++) {
      const tl_urdf_material *mt = &doc->materials[i];
      snprintf(c.m->material_name[i], TL_NAME_MAX, "%s", mt->name);
      for (int k = 0; k < 4; k++) c.m->material_rgba[4 * i + k] = mt->has_color ? mt->rgba[k] : NAN;
      snprintf(c.m->material_texture[i], sizeof(c.m->material_texture[i]), "%s", mt->texture);
    }
  }
  if (!s) s = compile_loops(doc, c.m, err);
  if (!s && base == TL_BASE_FLOATING && c.m->total_mass <= 0)
    s = tl_error_set(err, TL_ERR_INVALID, doc->path, doc->links[c.root_link].line, "link",
                     "the robot has no mass at all: a floating base needs mass");
  if (!s) {
    tl_model *m = c.m;
    snprintf(m->name, TL_NAME_MAX, "%s", doc->robot_name);
    snprintf(m->source, sizeof(m->source), "%s", doc->path);
    m->nwarning = doc->nwarning;
    memcpy(m->warnings, doc->warnings, sizeof(m->warnings));
    placeholder_limits(doc, m);
    implausible_densities(doc, m);
    *out = m;
  } else {
    tl_model_free(c.m);
  }
  free_ctx(&c);
  return s;
}
