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

static const char *controller_name(const cli_sim *s) {
  return s->opt->controller == CLI_CTRL_STAND ? "stand" : "none";
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
  int ok = cJSON_AddNumberToObject(root, "dt", s->opt->dt) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "steps", (double)st->steps) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "sim_time_s", st->sim_time) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "wall_time_s", st->wall_time) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "steps_per_second",
                                     ratio((double)st->steps, st->wall_time)) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "realtime_factor",
                                     ratio(st->sim_time, st->wall_time)) != NULL;
  ok = ok && cli_json_add_string(root, "controller", controller_name(s)) == 0;
  return ok ? 0 : -1;
}

static cJSON *sim_json(const cli_sim *s) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  int ok = cli_json_add_string(root, "robot", tl_model_name(s->model)) == 0;
  ok = ok && cli_json_add_string(root, "urdf", s->opt->urdf) == 0;
  ok = ok && cli_json_add_string(root, "base", cli_base_name(tl_model_base(s->model))) == 0;
  ok = ok && cJSON_AddNumberToObject(root, "dof", s->nv) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "gc_dim", s->nq) != NULL;
  ok = ok && add_run(root, s) == 0;
  ok = ok && add_height(root, &s->stats) == 0;
  ok = ok && cJSON_AddNumberToObject(root, "max_penetration_m", s->stats.max_penetration) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "mean_contacts", mean_contacts(s)) != NULL;
  ok = ok && add_contact_links(root, s) == 0;
  ok = ok && cli_json_add_numbers(root, "final_gc", s->q, s->nq) == 0;
  ok = ok && cJSON_AddBoolToObject(root, "nan_detected", s->stats.nan_detected) != NULL;
  if (!ok) cJSON_Delete(root);
  return ok ? root : NULL;
}

int cli_sim_print_json(const cli_sim *s) { return cli_json_print_and_free(sim_json(s)); }

/* ---------------------------------------------------------------- text */

static void print_header(const cli_sim *s) {
  printf("robot          %s (%s base, dof %d, gc_dim %d)\n", tl_model_name(s->model),
         cli_base_name(tl_model_base(s->model)), s->nv, s->nq);
  printf("urdf           %s\n", s->opt->urdf);
  if (s->opt->controller == CLI_CTRL_STAND)
    printf("controller     stand (kp %g N m/rad, kd %g N m s/rad)\n", s->opt->kp, s->opt->kd);
  else
    printf("controller     none\n");
}

static void print_run(const cli_sim *s) {
  const cli_sim_stats *st = &s->stats;
  printf("steps          %lld x %g s = %.6g s simulated\n", st->steps, s->opt->dt, st->sim_time);
  printf("wall time      %.6g s (%.6g steps/s, %.4g x real time)\n", st->wall_time,
         ratio((double)st->steps, st->wall_time), ratio(st->sim_time, st->wall_time));
  printf("base height    min %.6g  max %.6g  (last 80%%)  final %.6g m\n", st->hmin, st->hmax,
         st->hfinal);
  printf("penetration    max %.6g m\n", st->max_penetration);
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
  printf("final q        [");
  for (int i = 0; i < s->nq; ++i) printf(i ? ", %.6g" : "%.6g", s->q[i]);
  printf("]\n");
  printf("nan detected   %s\n", s->stats.nan_detected ? "YES" : "no");
}

int cli_sim_print_text(const cli_sim *s) {
  print_header(s);
  print_run(s);
  print_links(s);
  print_final(s);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
