/* `talus simulate`: text and JSON reports. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sim.h"

typedef struct link_share {
  const char *name;
  double fraction; /* of the observed steps with this link in contact */
} link_share;

static int by_name(const void *a, const void *b) {
  return strcmp(((const link_share *)a)->name, ((const link_share *)b)->name);
}

/* Links that were in contact at least once, sorted by name (*out: free()). */
static int contact_shares(const cli_sim *s, link_share **out) {
  link_share *v = malloc(((size_t)s->nlink + 1) * sizeof(link_share));
  if (!v) return -1;
  int n = 0;
  double steps = s->stats.observed > 0 ? (double)s->stats.observed : 1.0;
  for (int l = 0; l < s->nlink; ++l) {
    if (s->link_steps[l] == 0) continue;
    v[n].name = s->link_name[l];
    v[n].fraction = (double)s->link_steps[l] / steps;
    ++n;
  }
  qsort(v, (size_t)n, sizeof(link_share), by_name);
  *out = v;
  return n;
}

static double ratio(double a, double b) { return b > 0.0 ? a / b : 0.0; }

static double mean_contacts(const cli_sim *s) {
  return ratio(s->stats.contact_sum, (double)s->stats.observed);
}

static const char *controller_name(const cli_sim *s) { return cli_sim_controller_name(s); }

/* URDF of the report's robot (a world file: its first <system>'s). */
static const char *robot_urdf(const cli_sim *s) {
  if (!s->opt->world) return s->opt->urdf;
  int k = s->scene.first_articulated;
  return k >= 0 ? s->scene.systems[k].urdf : NULL;
}

/* Mean velocity of body 0's origin over the window (m/s, world). */
static void velocity_mean(const cli_sim *s, double v[3]) {
  double n = (double)s->stats.window_steps;
  for (int i = 0; i < 3; ++i) v[i] = n > 0 ? s->stats.vsum[i] / n : 0.0;
}

/* ---------------------------------------------------------------- JSON */

static int add_height(cJSON *root, const cli_sim_stats *st) {
  cJSON *h = cJSON_AddObjectToObject(root, "base_height");
  if (!h) return -1;
  /* non-finite values (only after a divergence) print as null */
  int ok = cJSON_AddNumberToObject(h, "min", st->hmin) != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "max", st->hmax) != NULL;
  ok = ok && cJSON_AddNumberToObject(h, "final", st->hfinal) != NULL;
  return ok ? 0 : -1;
}

/* "diverged": null, or {step, time_s, message} (final_gc is then the last finite state). */
static int add_diverged(cJSON *root, const cli_sim_stats *st) {
  if (!st->diverged) return cJSON_AddNullToObject(root, "diverged") ? 0 : -1;
  cJSON *d = cJSON_AddObjectToObject(root, "diverged");
  int ok = d != NULL;
  ok = ok && cJSON_AddNumberToObject(d, "step", (double)st->diverged_step) != NULL;
  ok = ok && cJSON_AddNumberToObject(d, "time_s", st->diverged_time) != NULL;
  ok = ok && cli_json_add_string(d, "message", st->diverged_what) == 0;
  return ok ? 0 : -1;
}

static int add_contact_links(cJSON *root, const cli_sim *s) {
  cJSON *obj = cJSON_AddObjectToObject(root, "contact_links");
  link_share *v = NULL;
  int n = obj ? contact_shares(s, &v) : -1;
  int ok = n >= 0;
  for (int k = 0; ok && k < n; ++k)
    ok = cJSON_AddNumberToObject(obj, v[k].name, v[k].fraction) != NULL;
  free(v);
  return ok ? 0 : -1;
}

static int add_run(cJSON *root, const cli_sim *s) {
  const cli_sim_stats *st = &s->stats;
  int ok = cJSON_AddNumberToObject(root, "dt", s->dt) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "steps", (double)st->steps) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "sim_time_s", st->sim_time) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "wall_time_s", st->wall_time) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "steps_per_second",
                                     ratio((double)st->steps, st->wall_time)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "realtime_factor",
                                     ratio(st->sim_time, st->wall_time)) != NULL;
  ok = ok && cli_json_add_string(root, "controller", controller_name(s)) == 0;
  ok = ok && cli_json_add_string(root, "engine", tl_world_engine_name(s->world)) == 0;
  ok = ok && cli_json_add_string(root, "engine_notes", tl_world_engine_notes(s->world)) == 0;
  return ok ? 0 : -1;
}

static cJSON *sim_json(const cli_sim *s) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  /* robot keys: the URDF, or a world file's first <system> (null if none) */
  const tl_model *m = s->model;
  int ok = cli_json_add_string(root, "robot", m ? tl_model_name(m) : NULL) == 0;
  ok = ok && cli_json_add_string(root, "urdf", robot_urdf(s)) == 0;
  ok = ok && cli_json_add_string(root, "world", s->opt->world ? s->opt->urdf : NULL) == 0;
  ok = ok && cli_json_add_string(root, "base", m ? cli_base_name(tl_model_base(m)) : NULL) == 0;
  ok = ok && cli_json_add_number(root, "dof", m ? s->nv : NAN) == 0;
  ok = ok && cli_json_add_number(root, "gc_dim", m ? s->nq : NAN) == 0;
  ok = ok && add_run(root, s) == 0;
  ok = ok && add_height(root, &s->stats) == 0;
  ok = ok && cJSON_AddNumberToObject(root, "max_penetration_m", s->stats.max_penetration) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "max_penetration_settled_m", s->stats.max_penetration_settled) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "mean_contacts", mean_contacts(s)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "max_limit_violation", s->stats.max_limit_violation) != NULL;
  ok = ok && add_contact_links(root, s) == 0;
  double vmean[3];
  velocity_mean(s, vmean);
  if (m) {
    ok = ok && cli_json_add_numbers(root, "base_velocity_mean", vmean, 3) == 0;
    ok = ok && cJSON_AddNumberToObject(root, "max_roll_pitch_rad", s->stats.max_roll_pitch) != NULL;
  } else {
    ok = ok && cJSON_AddNullToObject(root, "base_velocity_mean") != NULL;
    ok = ok && cJSON_AddNullToObject(root, "max_roll_pitch_rad") != NULL;
  }
  if (s->opt->ctrl.kind == TL_CONTROLLER_OSC) {
    /* the controlled frame (default: the end effector, tl_controller_default_ee_frame) */
    ok = ok && cli_json_add_string(root, "osc_frame", s->ctrl.active ? tl_model_frame_name(s->model, s->ctrl.osc.frame)
                                                                     : NULL) == 0;
    cJSON *t = cJSON_AddObjectToObject(root, "tracking_error_m");
    ok = ok && t != NULL;
    double mean = ratio(s->stats.track_sum, (double)s->stats.window_steps);
    ok = ok && cJSON_AddNumberToObject(t, "mean", mean) != NULL;
    ok = ok && cJSON_AddNumberToObject(t, "max", s->stats.track_max) != NULL;
  }
  if (m) ok = ok && cli_json_add_numbers(root, "final_gc", s->q, s->nq) == 0;
  else ok = ok && cJSON_AddNullToObject(root, "final_gc") != NULL;
  ok = ok && cJSON_AddBoolToObject(root, "nan_detected", s->stats.nan_detected) != NULL;
  ok = ok && add_diverged(root, &s->stats) == 0;
  ok = ok && cli_sim_add_objects(root, s) == 0;
  ok = ok && cli_sim_add_solver(root, s) == 0;
  if (!ok) cJSON_Delete(root);
  return ok ? root : NULL;
}

int cli_sim_print_json(const cli_sim *s) { return cli_json_print_and_free(sim_json(s)); }

/* ---------------------------------------------------------------- text */

static void print_header(const cli_sim *s) {
  if (s->opt->world) printf("world          %s\n", s->opt->urdf);
  if (!s->model) {
    printf("robot          none (the world has no <system>)\n");
    return;
  }
  printf("robot          %s (%s base, dof %d, gc_dim %d)\n", tl_model_name(s->model),
         cli_base_name(tl_model_base(s->model)), s->nv, s->nq);
  printf("urdf           %s\n", robot_urdf(s));
  if (s->opt->world)
    printf("controller     %s\n", controller_name(s));
  else
    cli_ctrl_print(s);
}

static void print_run(const cli_sim *s) {
  const cli_sim_stats *st = &s->stats;
  printf("steps          %lld x %g s = %.6g s simulated\n", st->steps, s->dt, st->sim_time);
  printf("wall time      %.6g s (%.6g steps/s, %.4g x real time)\n", st->wall_time,
         ratio((double)st->steps, st->wall_time), ratio(st->sim_time, st->wall_time));
  printf("engine         %s\n", tl_world_engine_name(s->world));
  const char *notes = tl_world_engine_notes(s->world);
  for (const char *p = notes; p && *p;) { /* one line per note */
    const char *nl = strchr(p, '\n');
    int len = nl ? (int)(nl - p) : (int)strlen(p);
    printf("  note: %.*s\n", len, p);
    p = nl ? nl + 1 : NULL;
  }
  if (!s->model) {
    printf("penetration    max %.6g m\n", st->max_penetration);
    printf("contacts       %.4g per step on average\n", mean_contacts(s));
    return;
  }
  printf("base height    min %.6g  max %.6g  (last 80%%)  final %.6g m\n", st->hmin, st->hmax,
         st->hfinal);
  double vmean[3];
  velocity_mean(s, vmean);
  printf("base velocity  mean [%.4g, %.4g, %.4g] m/s  (last 80%%)\n", vmean[0], vmean[1], vmean[2]);
  printf("roll / pitch   max %.4g rad  (last 80%%)\n", st->max_roll_pitch);
  if (s->opt->ctrl.kind == TL_CONTROLLER_OSC)
    printf("tracking error mean %.4g  max %.4g m  (last 80%%)\n",
           ratio(st->track_sum, (double)st->window_steps), st->track_max);
  printf("penetration    max %.6g m\n", st->max_penetration);
  printf("joint limits   max violation %.6g (rad or m, whole run)\n", st->max_limit_violation);
  printf("contacts       %.4g per step on average\n", mean_contacts(s));
}

static void print_links(const cli_sim *s) {
  link_share *v = NULL;
  int n = contact_shares(s, &v);
  for (int k = 0; k < n; ++k)
    printf("  %-24s %5.1f%% of steps\n", v[k].name, 100.0 * v[k].fraction);
  free(v);
}

static void print_final(const cli_sim *s) {
  if (!s->model) {
    printf("nan detected   %s\n", s->stats.nan_detected ? "YES" : "no");
    if (s->stats.diverged)
      printf("diverged       at step %lld (t = %.6g s): %s\n", s->stats.diverged_step, s->stats.diverged_time,
             s->stats.diverged_what);
    return;
  }
  printf(s->stats.diverged ? "last finite q  [" : "final q        [");
  for (int i = 0; i < s->nq; ++i) printf(i ? ", %.6g" : "%.6g", s->q[i]);
  printf("]\n");
  printf("nan detected   %s\n", s->stats.nan_detected ? "YES" : "no");
  if (s->stats.diverged)
    printf("diverged       at step %lld (t = %.6g s): %s\n", s->stats.diverged_step, s->stats.diverged_time,
           s->stats.diverged_what);
}

int cli_sim_print_text(const cli_sim *s) {
  print_header(s);
  print_run(s);
  print_links(s);
  print_final(s);
  cli_sim_print_objects(s);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
