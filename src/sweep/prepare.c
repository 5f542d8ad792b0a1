/* tl_sweep_prepare: load the robot, check every parameter against it and
 * build one nominal world with its controller, so that a bad sweep is
 * refused before any sample runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "talus/engine_plugin.h"
#include "talus/limits.h"
#include "sweep/sweep_internal.h"

static tl_status load_urdf(tl_sweep *sw, tl_error *err) {
  tl_load_options o = tl_load_options_default();
  o.base = tl_controller_base(&sw->ctrl, sw->base);
  const char *names[SW_MAX_VARS];
  for (int i = 0; i < sw->nvar; ++i) names[i] = sw->var_name[i];
  o.var_names = names;
  o.var_values = sw->var_value;
  o.nvar = sw->nvar;
  return tl_model_load_urdf(sw->robot, &o, &sw->model, err);
}

/* The list of names for an error message. */
static void list_links(const tl_sweep *sw, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < sw->links.n && n + 40 < cap; ++i) tl_str_append(buf, cap, &n, "%s%s", i ? ", " : "", sw->links.name[i]);
}

static void list_joints(const tl_model *m, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int b = 0, k = 0; b < tl_model_nbody(m) && n + 40 < cap; ++b) {
    tl_joint_type t = tl_model_joint_type(m, b);
    if (t == TL_JOINT_FLOATING || tl_joint_nv(t) == 0) continue;
    tl_str_append(buf, cap, &n, "%s%s", k++ ? ", " : "", tl_model_joint_name(m, b));
  }
}

/* Links, joints and DOF ranges of every parameter. */
static tl_status resolve(tl_sweep *sw, tl_system *sys, tl_error *err) {
  const tl_model *m = tl_system_model(sys);
  for (int p = 0; p < sw->nparam; ++p) {
    sw_param *P = &sw->param[p];
    const sw_param_info *pi = &sw_param_infos[P->kind];
    P->link = -1;
    P->dof_lo = sw->floating ? 6 : 0;
    P->dof_hi = sw->nv;
    if (!P->target[0]) continue;
    char names[700];
    if (pi->target == 1) {
      for (int i = 0; i < sw->links.n; ++i)
        if (strcmp(sw->links.name[i], P->target) == 0) P->link = i;
      if (P->link >= 0) continue;
      list_links(sw, names, sizeof names);
      return sw_error(err, TL_ERR_INVALID, NULL, 0, P->name, "parameter %s: robot '%s' has no link '%s' with an "
                          "inertial (links: %s)", P->name, tl_model_name(m), P->target, names);
    }
    int found = 0;
    for (int b = 0; b < tl_model_nbody(m) && !found; ++b) {
      tl_joint_type t = tl_model_joint_type(m, b);
      if (t == TL_JOINT_FLOATING || tl_joint_nv(t) == 0 || strcmp(tl_model_joint_name(m, b), P->target) != 0) continue;
      P->dof_lo = tl_model_joint_u_index(m, b);
      P->dof_hi = P->dof_lo + tl_joint_nv(t);
      found = 1;
    }
    if (found) continue;
    list_joints(m, names, sizeof names);
    return sw_error(err, TL_ERR_INVALID, NULL, 0, P->name, "parameter %s: robot '%s' has no movable joint '%s' "
                        "(joints: %s)", P->name, tl_model_name(m), P->target, names);
  }
  return TL_OK;
}

/* Nominal per-DOF values of the robot (talus/engine.h's plain view of its model). */
static tl_status nominal_dofs(tl_sweep *sw, tl_system *sys, tl_error *err) {
  tl_engine_model v;
  tl_status st = tl_engine_model_view(tl_system_model(sys), &v, err);
  if (st != TL_OK) return st;
  size_t n = (size_t)v.nv + 1;
  sw->effort = calloc(n, sizeof(double));
  sw->lower = calloc(n, sizeof(double));
  sw->upper = calloc(n, sizeof(double));
  sw->rotor = calloc(n, sizeof(double));
  if (!sw->effort || !sw->lower || !sw->upper || !sw->rotor)
    return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int d = 0; d < v.nv; ++d) {
    sw->effort[d] = v.dof_effort[d];
    sw->lower[d] = v.dof_lower[d];
    sw->upper[d] = v.dof_upper[d];
    sw->rotor[d] = v.dof_rotor_inertia[d];
  }
  return TL_OK;
}

static int has_kind(const tl_sweep *sw, sw_param_kind a, sw_param_kind b) {
  for (int p = 0; p < sw->nparam; ++p)
    if (sw->param[p].kind == a || sw->param[p].kind == b) return 1;
  return 0;
}

static tl_status check_settings(tl_sweep *sw, tl_error *err) {
  if (!sw->robot || !sw->robot[0])
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "robot", "robot: no URDF or world file given");
  int wf = tl_scene_is_world_file(sw->robot);
  if (wf < 0) return sw_error(err, TL_ERR_IO, NULL, 0, "robot", "robot: cannot read '%s'", sw->robot);
  sw->world_file = wf;
  if (wf) {
    const char *opt = sw->q ? "q" : sw->base != TL_BASE_AUTO ? "base" : sw->nvar ? "var" : NULL;
    if (opt)
      return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, opt, "%s does not apply to a world file ('%s'): its <system> "
                          "elements give the base and the initial state", opt, sw->robot);
    for (int p = 0; p < sw->nparam; ++p)
      if (sw->param[p].kind == SW_P_TERRAIN)
        return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, sw->param[p].name, "parameter %s: needs a URDF robot (a world "
                            "file brings its own terrain)", sw->param[p].name);
  }
  if (sw->all_grid) {
    if (!sw->samples_given) sw->samples = sw->grid_size;
    else if (sw->samples % sw->grid_size != 0)
      return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "samples", "samples: %ld is not a multiple of the grid's %ld "
                          "points (every parameter is a grid: leave samples out for the full factorial)", sw->samples,
                          sw->grid_size);
  }
  long long steps = 0; /* the library's one rule per quantity (talus/limits.h) */
  tl_status st = tl_limits_steps_for_duration(sw->duration, sw->dt, &steps, err);
  for (int p = 0; p < sw->nparam && st == TL_OK; ++p) {
    int nx = 0;
    if (sw->param[p].kind == SW_P_TERRAIN)
      st = tl_limits_grid_points(sw->terrain_size, sw->terrain_spacing, SW_MAX_TERRAIN_POINTS, "terrain_size / terrain_spacing",
                          &nx, err);
  }
  return st;
}

/* tl_read_file's hook: the bytes of each file read, with its length, into *ctx. */
static void hash_read(void *ctx, const char *path, const void *data, size_t len) {
  (void)path; /* the contents decide, not where the files lie */
  uint64_t *h = ctx, n = len;
  *h = sw_fnv(*h, &n, sizeof n);
  *h = sw_fnv(*h, data, len);
}

/* The collision meshes of every system of the nominal world (read by assimp, not tl_read_file). */
static tl_status hash_meshes(tl_sweep *sw, tl_world *world, tl_error *err) {
  for (int i = 0; i < tl_world_nsystem(world); ++i) {
    const tl_model *m = tl_system_model(tl_world_system(world, i));
    for (int g = 0; g < tl_model_ngeom(m); ++g) {
      const char *file = NULL;
      if (tl_model_geom_mesh(m, g, NULL, &file, NULL) != 0 || !file || !file[0]) continue;
      char *bytes = NULL;
      size_t len = 0;
      tl_status st = tl_read_file(file, (size_t)1 << 31, &bytes, &len, err);
      if (st != TL_OK) return st;
      hash_read(&sw->files_hash, file, bytes, len);
      free(bytes);
    }
  }
  return TL_OK;
}

tl_status tl_sweep_prepare(tl_sweep *sw, tl_error *err) {
  if (!sw) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "sw", "sw must not be NULL");
  if (sw->prepared) return TL_OK;
  /* what a failed earlier call may have left */
  tl_model_free(sw->model);
  sw->model = NULL;
  tl_rand_links_free(&sw->links);
  free(sw->effort), free(sw->lower), free(sw->upper), free(sw->rotor);
  sw->effort = sw->lower = sw->upper = sw->rotor = NULL;
  tl_status st = check_settings(sw, err);
  /* every file read from here to the nominal world goes into the spec hash (--resume trusts it) */
  sw->files_hash = 0xcbf29ce484222325ull;
  tl_read_hook_set(hash_read, &sw->files_hash);
  if (st == TL_OK && !sw->world_file) st = load_urdf(sw, err);
  if (st == TL_OK && sw->model)
    sw->floating = tl_model_joint_type(sw->model, 0) == TL_JOINT_FLOATING;
  if (st != TL_OK) {
    tl_read_hook_set(NULL, NULL);
    return st;
  }
  /* one nominal world: the robot, the initial state, the controller */
  sw_world w;
  tl_error e;
  memset(&e, 0, sizeof e);
  st = sw_build(sw, NULL, 0, &w, &e);
  tl_read_hook_set(NULL, NULL);
  if (st != TL_OK) {
    if (err) *err = e;
    return st;
  }
  st = hash_meshes(sw, w.world, err);
  if (st == TL_OK) st = sw_compute_hash(sw, err);
  if (st != TL_OK) {
    sw_world_free(&w);
    return st;
  }
  sw->nq = tl_system_nq(w.sys);
  sw->nv = tl_system_nv(w.sys);
  sw->floating = tl_model_joint_type(tl_system_model(w.sys), 0) == TL_JOINT_FLOATING;
  sw->inertial = has_kind(sw, SW_P_MASS_SCALE, SW_P_INERTIA_SCALE) || has_kind(sw, SW_P_COM_OFFSET, SW_P_BASE_MASS_ADD);
  sw->contact_material = has_kind(sw, SW_P_FRICTION, SW_P_RESTITUTION);
  if (sw->inertial) st = tl_rand_links_init(&sw->links, w.sys, err);
  if (st == TL_OK) st = nominal_dofs(sw, w.sys, err);
  if (st == TL_OK) st = resolve(sw, w.sys, err);
  sw_world_free(&w);
  if (st != TL_OK) return st;
  sw->prepared = 1;
  return TL_OK;
}
