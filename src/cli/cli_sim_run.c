/* `talus simulate`: the stepping loop (integrate1, controller, integrate2)
 * and its statistics. Nothing here allocates. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_sim.h"

static void mark_link(cli_sim *s, int system, int geom) {
  if (system != s->sys_index || geom < 0 || geom >= s->ngeom) return;
  s->link_flag[s->geom_link[geom]] = 1;
}

/* Contacts found by the last integrate1: count, depth (talus/metrics.h), links touched. */
static void observe_contacts(cli_sim *s) {
  tl_contact_measure cm;
  tl_measure_contacts(s->world, NULL, 0, &cm);
  if (cm.max_depth > s->stats.max_penetration) s->stats.max_penetration = cm.max_depth;
  /* half a step of slack: the step starting at 0.1 s counts */
  if (tl_world_time(s->world) - s->sim0 >= CLI_SIM_PENETRATION_SETTLE_S - 0.5 * s->dt &&
      cm.max_depth > s->stats.max_penetration_settled)
    s->stats.max_penetration_settled = cm.max_depth;
  memset(s->link_flag, 0, (size_t)s->nlink);
  for (int k = 0; k < cm.ncontact; ++k) {
    tl_contact_info c;
    if (tl_world_contact(s->world, k, &c, NULL) != TL_OK) continue;
    mark_link(s, c.system, c.geom);
    mark_link(s, c.other_system, c.other_geom);
  }
  for (int l = 0; l < s->nlink; ++l) s->link_steps[l] += s->link_flag[l];
  s->stats.contact_sum += cm.ncontact;
  s->stats.observed += 1;
}

static void observe_height(cli_sim *s, double z) {
  if (z < s->stats.hmin) s->stats.hmin = z;
  if (z > s->stats.hmax) s->stats.hmax = z;
}

/* Velocity of body 0's origin (world) and its tilt (the larger of roll and
 * pitch, of the Z-Y-X solution where that is smaller: talus/metrics.h),
 * accumulated over the window. */
static void observe_base_motion(cli_sim *s) {
  tl_base_measure b;
  if (!s->sys || tl_measure_base(s->sys, &b, NULL) != TL_OK) return;
  for (int i = 0; i < 3; ++i) s->stats.vsum[i] += b.vel[i];
  double rp = b.roll_pitch_max;
  if (rp > s->stats.max_roll_pitch || !isfinite(rp)) s->stats.max_roll_pitch = rp;
  s->stats.window_steps += 1;
}

/* Largest distance of a scalar joint coordinate (revolute, prismatic,
 * universal, planar) outside its position limits, over the run. */
static void observe_limits(cli_sim *s) {
  if (!s->sys || tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, NULL) != TL_OK) return;
  double v = tl_measure_limit_violation(s->sys, s->q);
  if (v > s->stats.max_limit_violation) s->stats.max_limit_violation = v;
}

/* z of body 0 (m); NAN if it cannot be read. */
static double base_height(cli_sim *s) {
  double pos[3], R[9];
  if (!s->sys || tl_system_body_pose(s->sys, 0, pos, R, NULL) != TL_OK) return NAN;
  return pos[2];
}

/* Statistics of the solve just done; largest residuals over the run. */
static void observe_solver(cli_sim *s) {
  tl_solver_stats *ss = &s->stats.solver;
  if (tl_world_solver_stats(s->world, ss, NULL) != TL_OK) return;
  if (ss->signorini > s->stats.max_signorini || !isfinite(ss->signorini))
    s->stats.max_signorini = ss->signorini;
  if (ss->cone > s->stats.max_cone || !isfinite(ss->cone)) s->stats.max_cone = ss->cone;
}

/* A world file: 1 if every system's state is finite. */
static int scene_finite(cli_sim *s) {
  for (int i = 0; i < s->scene.nsystem; ++i) {
    double pos[3], R[9];
    tl_system *sys = s->scene.systems[i].system;
    if (tl_system_body_pose(sys, 0, pos, R, NULL) != TL_OK) return 0;
    for (int k = 0; k < 3; ++k)
      if (!isfinite(pos[k])) return 0;
  }
  return 1;
}

/* After a step: every system's state finite and within CLI_SIM_DIVERGE_LIMIT, else
 * TL_ERR_DIVERGED naming the system and the first entry beyond it. No allocation. */
static tl_status check_state(cli_sim *s, tl_error *err) {
  for (int i = 0; i < tl_world_nsystem(s->world); ++i) {
    tl_system *sys = tl_world_system(s->world, i);
    int vel = 0, idx = 0;
    double v = 0;
    if (!sys || !tl_system_find_nonfinite(sys, CLI_SIM_DIVERGE_LIMIT, &vel, &idx, &v)) continue;
    char what[200];
    tl_system_state_entry_name(sys, vel, idx, what, sizeof what);
    s->stats.diverged_beyond = 1;
    return tl_error_set(err, TL_ERR_DIVERGED, NULL, 0, NULL,
                        "system %d ('%s'): %s = %g, beyond %g: the state diverged", i,
                        tl_model_name(tl_system_model(sys)), what, v, CLI_SIM_DIVERGE_LIMIT);
  }
  return TL_OK;
}

/* One step; the state at its start (after integrate1) is observed. */
static tl_status step_once(cli_sim *s, int in_window, tl_error *err) {
  tl_status st = tl_world_integrate1(s->world, err);
  if (st != TL_OK) return st;
  observe_contacts(s);
  observe_limits(s);
  if (in_window) {
    observe_height(s, base_height(s));
    observe_base_motion(s);
  }
  st = cli_ctrl_update(s, in_window, err);
  if (st == TL_OK) st = cli_scene_ctrl_update(s, err);
  if (st == TL_OK && s->live) st = cli_rec_perturb(s, err); /* the live view's pushes */
  if (st == TL_OK) st = tl_world_integrate2(s->world, err);
  if (st == TL_OK) observe_solver(s);
  if (st == TL_OK) st = check_state(s, err); /* before a frame of it is recorded */
  if (st == TL_OK) st = cli_rec_step(s, err);
  return st;
}

static tl_status step_loop(cli_sim *s, tl_error *err) {
  /* an endless run (`talus view`, stopped by Ctrl-C) has its statistics over every step */
  long long window = s->nsteps == LLONG_MAX ? 0 : (long long)ceil(CLI_SIM_SETTLE_FRACTION * (double)s->nsteps);
  cli_progress bar;
  cli_progress_begin(&bar);
  if (s->opt->view) bar.enabled = 0; /* the live view's address stays readable */
  tl_status st = TL_OK;
  double t0 = cli_now();
  s->wall0 = t0;
  s->sim0 = tl_world_time(s->world);
  for (long long k = 0; k < s->nsteps && !cli_rec_interrupted(); ++k) {
    if (s->live && cli_rec_control(s, &k) != 0) break; /* pause, step, reset ... from the browser */
    st = step_once(s, k >= window, err);
    if (st != TL_OK) break;
    s->stats.steps += 1;
    cli_progress_update(&bar, k + 1, s->nsteps, tl_world_time(s->world));
  }
  s->stats.wall_time = cli_now() - t0;
  cli_progress_end(&bar);
  return st;
}

/* Final state, final height (also counted in min / max), simulated time. */
static int finish(cli_sim *s) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  s->stats.sim_time = tl_world_time(s->world);
  s->stats.hfinal = s->stats.diverged_beyond ? NAN : base_height(s); /* NAN: reported as null */
  if (!s->sys) {
    s->stats.hmin = s->stats.hmax = NAN; /* no robot: reported as null */
    if (!scene_finite(s)) s->stats.nan_detected = 1;
    return CLI_EXIT_OK;
  }
  observe_height(s, s->stats.hfinal);
  /* beyond the limit: s->q keeps the state at the start of the diverging step (observe_limits) */
  if (!s->stats.diverged_beyond && tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK) {
    cli_errorf("final state: %s", err.message);
    return CLI_EXIT_FAIL;
  }
  for (int i = 0; i < s->nq; ++i)
    if (!isfinite(s->q[i])) s->stats.nan_detected = 1;
  if (!isfinite(s->stats.hfinal)) s->stats.nan_detected = 1;
  if (!scene_finite(s)) s->stats.nan_detected = 1;
  return CLI_EXIT_OK;
}

int cli_sim_run(cli_sim *s) {
  tl_error err;
  memset(&err, 0, sizeof(err));
  s->stats.hmin = INFINITY;
  s->stats.hmax = -INFINITY;
  tl_status st = step_loop(s, &err);
  if (st == TL_ERR_DIVERGED) {
    s->stats.nan_detected = 1;
    s->stats.diverged = 1;
    s->stats.diverged_step = s->stats.steps + 1;
    s->stats.diverged_time = s->stats.diverged_beyond ? tl_world_time(s->world) - s->dt : tl_world_time(s->world);
    snprintf(s->stats.diverged_what, sizeof s->stats.diverged_what, "%s",
             err.message[0] ? err.message : "the state became non-finite");
    cli_errorf("diverged at step %lld (t = %.6g s): %s", s->stats.diverged_step, s->stats.diverged_time,
               s->stats.diverged_what);
  } else if (st != TL_OK) {
    cli_errorf("step %lld: %s", s->stats.steps + 1,
               err.message[0] ? err.message : tl_status_name(st));
    return CLI_EXIT_FAIL;
  }
  int rc = finish(s);
  if (rc != CLI_EXIT_OK) return rc;
  return s->stats.nan_detected ? CLI_EXIT_DIVERGED : CLI_EXIT_OK;
}
