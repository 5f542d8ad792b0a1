/* `talus simulate`: model, world, initial state and controller; or a world file. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sim.h"

static int engine_error(const char *what, const tl_error *err) {
  if (err->message[0] && err->file[0]) /* the message begins with its file (and line) */
    cli_errorf("%s", err->message);
  else if (err->message[0])
    cli_errorf("%s: %s", what, err->message);
  else
    cli_errorf("%s: %s", what, tl_status_name(err->status));
  return CLI_EXIT_FAIL;
}

static int is_floating(const cli_sim *s) {
  return tl_model_base(s->model) == TL_BASE_FLOATING &&
         tl_model_joint_type(s->model, 0) == TL_JOINT_FLOATING;
}

static int build_world(cli_sim *s) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  if ((s->opt->engine ? tl_world_create_with_engine(&s->world, s->opt->engine, &err)
                      : tl_world_create(&s->world, &err)) != TL_OK)
    return engine_error(s->opt->engine ? "--engine" : "world", &err);
  if (tl_world_set_timestep(s->world, s->opt->dt, &err) != TL_OK)
    return engine_error("--dt", &err);
  s->dt = tl_world_timestep(s->world);
  if (tl_world_add_ground(s->world, 0.0, CLI_SIM_GROUND_MU, &err) != TL_OK)
    return engine_error("ground", &err);
  if (tl_world_add_system(s->world, s->model, &s->sys, &err) != TL_OK)
    return engine_error(s->opt->urdf, &err);
  s->sys_index = 0; /* the only system of this world */
  s->nq = tl_system_nq(s->sys);
  s->nv = tl_system_nv(s->sys);
  s->ngeom = tl_model_ngeom(s->model);
  return CLI_EXIT_OK;
}

/* Id of link `name` in the link table, added if new. */
static int link_id(cli_sim *s, const char *name) {
  for (int k = 0; k < s->nlink; ++k)
    if (strcmp(s->link_name[k], name) == 0) return k;
  s->link_name[s->nlink] = name;
  return s->nlink++;
}

static int build_link_table(cli_sim *s) {
  size_t n = (size_t)s->ngeom + 1;
  s->geom_link = calloc(n, sizeof(int));
  s->link_name = calloc(n, sizeof(const char *));
  s->link_steps = calloc(n, sizeof(long long));
  s->link_flag = calloc(n, 1);
  if (!s->geom_link || !s->link_name || !s->link_steps || !s->link_flag) return -1;
  for (int g = 0; g < s->ngeom; ++g) {
    const char *name = tl_model_geom_link(s->model, g);
    if (!name || !name[0]) {
      tl_geom_type type;
      int body = -1;
      double size[3], pos[3], R[9];
      tl_model_geom(s->model, g, &type, &body, size, pos, R, NULL);
      name = tl_model_body_name(s->model, body);
    }
    s->geom_link[g] = link_id(s, name ? name : "?");
  }
  return 0;
}

/* Default q (inside the joint limits, tl_model_default_q) with the --q values written over the
 * joint coordinates. */
static int initial_q(cli_sim *s) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_model_default_q(s->model, s->q, s->nq, &err) != TL_OK)
    return engine_error("default configuration", &err);
  const cli_sim_options *o = s->opt;
  if (!o->q) return CLI_EXIT_OK;
  int njoint = is_floating(s) ? s->nq - 7 : s->nq;
  if (o->nq_given == s->nq) {
    memcpy(s->q, o->q, (size_t)s->nq * sizeof(double));
  } else if (o->nq_given == njoint) {
    memcpy(s->q + (s->nq - njoint), o->q, (size_t)njoint * sizeof(double));
  } else {
    cli_errorf("option --q: got %d values, the model needs %d (joint coordinates) or %d (all)",
               o->nq_given, njoint, s->nq);
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

static int set_state(cli_sim *s, const char *what) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  memset(s->u, 0, (size_t)s->nv * sizeof(double));
  if (tl_system_set_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK)
    return engine_error(what, &err);
  /* read back: quaternions normalised by the system */
  if (tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK)
    return engine_error(what, &err);
  return CLI_EXIT_OK;
}

/* Lowest point of the robot (m): the bottom of its collision geometry (mesh hulls included,
 * tl_system_collision_aabb), else, after a warning, its lowest body origin (tl_measure_lowest_z).
 * 0, or -1 when there is nothing to place (no body). */
static int lowest_z(cli_sim *s, double clearance, double *minz) {
  double lo[3], hi[3];
  if (tl_system_collision_aabb(s->sys, lo, hi) > 0) {
    *minz = lo[2];
    return 0;
  }
  tl_measure_lowest_z(s->sys, minz);
  if (!isfinite(*minz)) return -1;
  cli_errorf("warning: no collision geometry; placing the lowest body origin %.3g m above the ground instead",
             clearance);
  return 0;
}

/* Floating base: shift the base so that the lowest collision geom is `clearance` above z = 0. */
static int place_base(cli_sim *s, double clearance) {
  double minz;
  if (lowest_z(s, clearance, &minz) != 0) return CLI_EXIT_OK;
  s->q[2] += clearance - minz;
  return set_state(s, "initial base placement");
}

/* R = Rz(y) Ry(p) Rx(r) (URDF rpy), row-major. */
static void rpy_matrix(const double rpy[3], double R[9]) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp, R[1] = cy * sp * sr - sy * cr, R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp, R[4] = sy * sp * sr + cy * cr, R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp, R[7] = cp * sr, R[8] = cp * cr;
}

/* 1 if the URDF itself welds the base to the world (its root link is `world`): it says where the
 * robot stands, so a fixed base without a pose stays there. */
static int welded_by_urdf(const cli_sim *s) { return tl_model_body_index(s->model, "world") >= 0; }

/* --base-pos / --base-rpy / --clearance on a floating base: the pose goes into q; then, unless a
 * position was given without --clearance, the robot is dropped `clearance` above the ground. */
static int place_floating(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  double clearance = o->clearance_given ? o->clearance : CLI_SIM_DROP_HEIGHT;
  if (o->base_pos_given || o->base_rpy_given) {
    tl_error err;
    memset(&err, 0, sizeof(err));
    double pos[3] = {s->q[0], s->q[1], s->q[2]}, R[9];
    if (o->base_pos_given) memcpy(pos, o->base_pos, sizeof(pos));
    if (o->base_rpy_given) rpy_matrix(o->base_rpy, R);
    else tl_system_body_pose(s->sys, 0, NULL, R, NULL);
    if (tl_system_set_base_pose(s->sys, pos, R, &err) != TL_OK) return engine_error("--base-pos / --base-rpy", &err);
    if (tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK)
      return engine_error("initial state", &err);
  }
  if (o->base_pos_given && !o->clearance_given) return CLI_EXIT_OK;
  return place_base(s, clearance);
}

/* A fixed base: welded at --base-pos / --base-rpy when given. Without a position it is placed like
 * a dropped floating base (lowest collision geom `clearance` above the ground), unless the URDF
 * welds it to `world` itself; --clearance always places it. */
static int place_fixed(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  /* a root joint that is neither floating nor fixed (e.g. planar) keeps the URDF's placement */
  int fixed = tl_model_base(s->model) == TL_BASE_FIXED;
  int drop = o->clearance_given || (fixed && !o->base_pos_given && !welded_by_urdf(s));
  if (!drop && !o->base_pos_given && !o->base_rpy_given) return CLI_EXIT_OK; /* bit-identical to before */
  double pos[3] = {0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (o->base_pos_given) memcpy(pos, o->base_pos, sizeof(pos));
  if (o->base_rpy_given) rpy_matrix(o->base_rpy, R);
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_system_set_base_pose(s->sys, pos, R, &err) != TL_OK) return engine_error("--base-pos / --base-rpy", &err);
  if (!drop) return CLI_EXIT_OK;
  double clearance = o->clearance_given ? o->clearance : CLI_SIM_DROP_HEIGHT, minz;
  if (lowest_z(s, clearance, &minz) != 0) return CLI_EXIT_OK;
  pos[2] += clearance - minz;
  if (tl_system_set_base_pose(s->sys, pos, R, &err) != TL_OK) return engine_error("fixed base placement", &err);
  return CLI_EXIT_OK;
}

static int setup_state(cli_sim *s) {
  s->q = calloc((size_t)s->nq + 1, sizeof(double));
  s->u = calloc((size_t)s->nv + 1, sizeof(double));
  if (!s->q || !s->u || build_link_table(s) != 0) {
    cli_errorf("out of memory");
    return CLI_EXIT_FAIL;
  }
  const cli_sim_options *o = s->opt;
  if (is_floating(s) && o->nq_given == s->nq && o->q && (o->base_pos_given || o->base_rpy_given)) {
    cli_errorf("option --q gives all %d coordinates (the base pose included): --base-pos and --base-rpy "
               "must not be given too", s->nq);
    return CLI_EXIT_USAGE;
  }
  int rc = initial_q(s);
  if (rc == CLI_EXIT_OK) rc = set_state(s, "initial state");
  if (rc == CLI_EXIT_OK) rc = is_floating(s) ? place_floating(s) : place_fixed(s);
  return rc;
}

/* A world file (talus/scene.h): the world as the file builds it (with --dt
 * replacing its time step); the report's robot is its first <system>. */
static int setup_world_file(cli_sim *s) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  if (tl_scene_load(s->opt->urdf, &s->world, &s->scene, &err) != TL_OK) {
    cli_errorf("%s", err.message[0] ? err.message : tl_status_name(err.status));
    return CLI_EXIT_FAIL;
  }
  if (s->opt->dt_given && tl_world_set_timestep(s->world, s->opt->dt, &err) != TL_OK)
    return engine_error("--dt", &err);
  if (s->opt->engine && tl_world_set_engine(s->world, s->opt->engine, &err) != TL_OK)
    return engine_error("--engine", &err);
  s->dt = tl_world_timestep(s->world);
  s->sys_index = -1;
  if (s->scene.first_articulated >= 0) {
    s->sys = s->scene.systems[s->scene.first_articulated].system;
    s->sys_index = tl_system_index(s->sys);
    s->model = tl_system_model(s->sys);
    s->nq = tl_system_nq(s->sys);
    s->nv = tl_system_nv(s->sys);
    s->ngeom = tl_model_ngeom(s->model);
  }
  s->q = calloc((size_t)s->nq + 1, sizeof(double));
  s->u = calloc((size_t)s->nv + 1, sizeof(double));
  if (!s->q || !s->u || build_link_table(s) != 0) {
    cli_errorf("out of memory");
    return CLI_EXIT_FAIL;
  }
  if (s->sys && tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK)
    return engine_error("initial state", &err);
  return CLI_EXIT_OK;
}

int cli_sim_setup(cli_sim *s, const cli_sim_options *opt) {
  memset(s, 0, sizeof(*s));
  s->opt = opt;
  s->dt = opt->dt;
  int rc;
  if (opt->world) {
    rc = setup_world_file(s);
  } else {
    s->loaded = cli_load_model(opt->urdf, cli_ctrl_base(opt), opt->verbose);
    if (!s->loaded) return CLI_EXIT_FAIL;
    s->model = s->loaded;
    /* a mass no material can have makes every figure of the run absurd: always said */
    for (int i = 0; i < tl_model_nwarning(s->model); ++i)
      if (tl_model_warning(s->model, i) && strstr(tl_model_warning(s->model, i), "denser than any material"))
        cli_errorf("warning: %s", tl_model_warning(s->model, i));
    rc = build_world(s);
    if (rc == CLI_EXIT_OK) rc = setup_state(s);
  }
  s->nsteps = LLONG_MAX;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (rc == CLI_EXIT_OK && !isinf(opt->duration) && tl_limits_steps_for_duration(opt->duration, s->dt, &s->nsteps, &err) != TL_OK)
    rc = engine_error(opt->world && !opt->dt_given ? "the world file's <timestep> with --duration" : "--duration", &err);
  return rc;
}

int cli_sim_controllers(cli_sim *s) {
  if (s->sys) { /* the state as it is now (after --load-state): what the controllers start from */
    tl_error err;
    memset(&err, 0, sizeof(err));
    if (tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK)
      return engine_error("initial state", &err);
    /* stand after a snapshot holds what the snapshot's run was holding (its PD targets), so
     * 1 s + snapshot + 1 s is the 2 s run */
    if (!s->opt->world && s->opt->load_state && s->opt->ctrl.kind == TL_CONTROLLER_STAND &&
        tl_system_get_pd_targets(s->sys, s->q, s->nq, NULL, 0, &err) != TL_OK)
      return engine_error("--load-state", &err);
  }
  return s->opt->world ? cli_scene_ctrl_setup(s) : cli_ctrl_setup(s);
}

void cli_sim_free(cli_sim *s) {
  cli_ctrl_free(s);
  cli_scene_free(s);
  tl_world_free(s->world);
  tl_model_free(s->loaded);
  free(s->q);
  free(s->u);
  free(s->geom_link);
  free(s->link_name);
  free(s->link_steps);
  free(s->link_flag);
  memset(s, 0, sizeof(*s));
}
