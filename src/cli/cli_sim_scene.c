/* `talus simulate WORLD.xml`: the controllers of a world file's systems, and
 * the parts of the reports every run has: the final pose of each object and
 * system (`objects`) and the contact solver's statistics (`solver`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sim.h"

/* ------------------------------------------------------------ controllers */

int cli_scene_ctrl_setup(cli_sim *s) {
  int n = s->scene.nsystem;
  s->scene_ctrl = calloc((size_t)n + 1, sizeof(tl_stand_controller));
  if (!s->scene_ctrl) {
    cli_errorf("out of memory");
    return CLI_EXIT_FAIL;
  }
  for (int i = 0; i < n; ++i) {
    const tl_scene_system *e = &s->scene.systems[i];
    if (e->controller != TL_SCENE_CONTROLLER_STAND) continue;
    tl_error err;
    memset(&err, 0, sizeof(err));
    /* hold the system's PD targets: the state the world file gave (the loader's targets), or
     * after --load-state what the snapshot's run was holding */
    int nq = tl_system_nq(e->system);
    double *target = malloc(((size_t)nq + 1) * sizeof(double));
    tl_status st = target ? tl_system_get_pd_targets(e->system, target, nq, NULL, 0, &err) : TL_ERR_MEMORY;
    if (st == TL_OK) st = tl_stand_init(&s->scene_ctrl[i], e->system, target, nq, e->kp, e->kd, &err);
    free(target);
    if (st != TL_OK) {
      cli_errorf("%s: system '%s' (line %d): stand controller: %s", s->opt->urdf, e->name, e->line,
                 err.message[0] ? err.message : tl_status_name(err.status));
      return CLI_EXIT_FAIL;
    }
  }
  return CLI_EXIT_OK;
}

tl_status cli_scene_ctrl_update(cli_sim *s, tl_error *err) {
  if (!s->scene_ctrl) return TL_OK;
  for (int i = 0; i < s->scene.nsystem; ++i) {
    if (s->scene.systems[i].controller != TL_SCENE_CONTROLLER_STAND) continue;
    tl_status st = tl_stand_update(&s->scene_ctrl[i], err);
    if (st != TL_OK) return st;
  }
  return TL_OK;
}

void cli_scene_free(cli_sim *s) {
  if (s->scene_ctrl)
    for (int i = 0; i < s->scene.nsystem; ++i) tl_stand_free(&s->scene_ctrl[i]);
  free(s->scene_ctrl);
  s->scene_ctrl = NULL;
  tl_scene_info_free(&s->scene);
}

static const char *scene_ctrl_name(tl_scene_controller c) {
  return c == TL_SCENE_CONTROLLER_STAND ? "stand" : "none";
}

const char *cli_sim_controller_name(const cli_sim *s) {
  if (!s->opt->world) return cli_ctrl_name(s->opt->ctrl.kind);
  int k = s->scene.first_articulated;
  return k >= 0 ? scene_ctrl_name(s->scene.systems[k].controller) : NULL;
}

/* ------------------------------------------------------------ poses */

/* Unit quaternion (w x y z) of a rotation matrix (row-major), w >= 0.
 * Shepperd's method: Shepperd, "Quaternion from rotation matrix", J. Guidance
 * and Control 1(3), 1978. */
static void quat_from_R(const double R[9], double q[4]) {
  double t = R[0] + R[4] + R[8];
  if (t > 0) {
    double r = sqrt(1 + t), f = 0.5 / r;
    q[0] = 0.5 * r, q[1] = (R[7] - R[5]) * f, q[2] = (R[2] - R[6]) * f, q[3] = (R[3] - R[1]) * f;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double r = sqrt(1 + R[0] - R[4] - R[8]), f = 0.5 / r;
    q[0] = (R[7] - R[5]) * f, q[1] = 0.5 * r, q[2] = (R[1] + R[3]) * f, q[3] = (R[2] + R[6]) * f;
  } else if (R[4] >= R[8]) {
    double r = sqrt(1 - R[0] + R[4] - R[8]), f = 0.5 / r;
    q[0] = (R[2] - R[6]) * f, q[1] = (R[1] + R[3]) * f, q[2] = 0.5 * r, q[3] = (R[5] + R[7]) * f;
  } else {
    double r = sqrt(1 - R[0] - R[4] + R[8]), f = 0.5 / r;
    q[0] = (R[3] - R[1]) * f, q[1] = (R[2] + R[6]) * f, q[2] = (R[5] + R[7]) * f, q[3] = 0.5 * r;
  }
  if (q[0] < 0)
    for (int i = 0; i < 4; ++i) q[i] = -q[i];
}

/* World pose of body 0 of sys: position and quaternion (w x y z). */
static void base_pose(tl_system *sys, double pos[3], double quat[4]) {
  double R[9];
  if (tl_system_body_pose(sys, 0, pos, R, NULL) != TL_OK) {
    for (int i = 0; i < 3; ++i) pos[i] = NAN;
    for (int i = 0; i < 4; ++i) quat[i] = NAN;
    return;
  }
  quat_from_R(R, quat);
}

typedef struct cli_object {
  const char *name, *kind, *controller;
  int index;
  tl_system *sys;
} cli_object;

/* Object k of the report (a world file's entries, or the URDF run's robot). */
static int object_count(const cli_sim *s) { return s->opt->world ? s->scene.nsystem : 1; }

static cli_object object_at(const cli_sim *s, int k) {
  cli_object o;
  if (!s->opt->world) {
    o.name = tl_model_name(s->model);
    o.kind = "system";
    o.controller = cli_ctrl_name(s->opt->ctrl.kind);
    o.index = s->sys_index;
    o.sys = s->sys;
    return o;
  }
  const tl_scene_system *e = &s->scene.systems[k];
  o.name = e->name;
  o.kind = e->is_object ? "object" : "system";
  o.controller = e->is_object ? NULL : scene_ctrl_name(e->controller);
  o.index = e->index;
  o.sys = e->system;
  return o;
}

int cli_sim_add_objects(cJSON *root, const cli_sim *s) {
  cJSON *arr = cJSON_AddArrayToObject(root, "objects");
  if (!arr) return -1;
  for (int k = 0; k < object_count(s); ++k) {
    cli_object o = object_at(s, k);
    cJSON *item = cJSON_CreateObject();
    if (!item || !cJSON_AddItemToArray(arr, item)) {
      cJSON_Delete(item);
      return -1;
    }
    double pos[3], quat[4];
    base_pose(o.sys, pos, quat);
    int ok = cli_json_add_string(item, "name", o.name) == 0;
    ok = ok && cli_json_add_string(item, "kind", o.kind) == 0;
    ok = ok && cJSON_AddNumberToObject(item, "index", o.index) != NULL;
    ok = ok && cli_json_add_string(item, "controller", o.controller) == 0;
    ok = ok && cli_json_add_numbers(item, "position", pos, 3) == 0;
    ok = ok && cli_json_add_numbers(item, "quaternion", quat, 4) == 0;
    if (!ok) return -1;
  }
  return 0;
}

int cli_sim_add_solver(cJSON *root, const cli_sim *s) {
  const cli_sim_stats *st = &s->stats;
  const tl_solver_stats *ss = &st->solver;
  tl_solver_stats probe;
  if (tl_world_solver_stats(s->world, &probe, NULL) != TL_OK) /* an engine without statistics */
    return cJSON_AddNullToObject(root, "solver") ? 0 : -1;
  cJSON *o = cJSON_AddObjectToObject(root, "solver");
  int ok = o != NULL;
  ok = ok && cJSON_AddNumberToObject(o, "iterations", ss->iterations) != NULL;
  ok = ok && cJSON_AddNumberToObject(o, "nrow", ss->nrow) != NULL;
  ok = ok && cJSON_AddNumberToObject(o, "ncontact", ss->ncontact) != NULL;
  ok = ok && cJSON_AddBoolToObject(o, "converged", ss->converged) != NULL;
  ok = ok && cli_json_add_number(o, "signorini", ss->signorini) == 0;
  ok = ok && cli_json_add_number(o, "cone", ss->cone) == 0;
  ok = ok && cli_json_add_number(o, "dissipation", ss->dissipation) == 0;
  ok = ok && cli_json_add_number(o, "max_signorini", st->max_signorini) == 0;
  ok = ok && cli_json_add_number(o, "max_cone", st->max_cone) == 0;
  return ok ? 0 : -1;
}

void cli_sim_print_objects(const cli_sim *s) {
  const tl_solver_stats *ss = &s->stats.solver;
  tl_solver_stats probe;
  if (tl_world_solver_stats(s->world, &probe, NULL) != TL_OK)
    printf("solver         no statistics from engine %s\n", tl_world_engine_name(s->world));
  else
    printf("solver         last step: %d iterations%s, %d rows, %d contacts; residuals signorini "
         "%.3g, cone %.3g, dissipation %.3g\n",
         ss->iterations, ss->converged ? "" : " (not converged)", ss->nrow, ss->ncontact,
         ss->signorini, ss->cone, ss->dissipation);
  if (tl_world_solver_stats(s->world, &probe, NULL) == TL_OK)
    printf("               max over the run: signorini %.3g, cone %.3g\n", s->stats.max_signorini,
           s->stats.max_cone);
  if (!s->opt->world) return;
  printf("objects        final base position (m) and quaternion (w x y z)\n");
  for (int k = 0; k < object_count(s); ++k) {
    cli_object o = object_at(s, k);
    double pos[3], quat[4];
    base_pose(o.sys, pos, quat);
    printf("  %-20s %-6s [%.6g, %.6g, %.6g]  [%.6g, %.6g, %.6g, %.6g]\n", o.name, o.kind, pos[0],
           pos[1], pos[2], quat[0], quat[1], quat[2], quat[3]);
  }
}
