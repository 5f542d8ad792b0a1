/* The summary JSON of a sweep: counts, success rate with its Wilson
 * interval, per-parameter correlation with success, outcome statistics,
 * the worst samples. Computed from the rows in sample order only, so the
 * same rows always give the same bytes. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/file.h"
#include "sweep/sweep_internal.h"

#define SW_Z95 1.959963984540054

void tl_sweep_wilson(long k, long n, double z, double *lo, double *hi) {
  if (n <= 0) {
    *lo = 0.0, *hi = 1.0;
    return;
  }
  double p = (double)k / (double)n, z2 = z * z, nn = (double)n;
  double denom = 1.0 + z2 / nn, centre = (p + z2 / (2.0 * nn)) / denom;
  double half = z * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
  *lo = fmax(0.0, centre - half);
  *hi = fmin(1.0, centre + half);
}

/* A number that prints so that it reads back exactly; NAN / Inf: null. */
static cJSON *num(double v) {
  if (!isfinite(v)) return cJSON_CreateNull();
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", v);
  return cJSON_CreateRaw(buf);
}

static int add_num(cJSON *o, const char *key, double v) {
  cJSON *n = num(v);
  return n && cJSON_AddItemToObject(o, key, n) ? 0 : -1;
}

/* Pearson correlation of x and y over the rows where x is finite; NAN if either is constant. */
static double correlation(const double *x, const double *y, long n) {
  double mx = 0, my = 0;
  long m = 0;
  for (long i = 0; i < n; ++i)
    if (isfinite(x[i])) mx += x[i], my += y[i], m++;
  if (m < 2) return NAN;
  mx /= (double)m, my /= (double)m;
  double sxy = 0, sxx = 0, syy = 0;
  for (long i = 0; i < n; ++i) {
    if (!isfinite(x[i])) continue;
    double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy, sxx += dx * dx, syy += dy * dy;
  }
  return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* The worst first: errors and divergences, then falls by time to fall, then ok by largest tilt. */
static int worst_rank(const tl_sweep_result *r) {
  return r->status == TL_SWEEP_ERROR || r->status == TL_SWEEP_DIVERGED ? 0 : r->status == TL_SWEEP_FELL ? 1 : 2;
}

static int worst_cmp(const void *pa, const void *pb) {
  const tl_sweep_result *a = *(const tl_sweep_result *const *)pa, *b = *(const tl_sweep_result *const *)pb;
  int ra = worst_rank(a), rb = worst_rank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  double ka = 0, kb = 0;
  if (ra == 1) ka = a->outcome[TL_SWEEP_TIME_TO_FALL], kb = b->outcome[TL_SWEEP_TIME_TO_FALL];
  if (ra == 2) ka = -a->outcome[TL_SWEEP_MAX_ROLL_PITCH], kb = -b->outcome[TL_SWEEP_MAX_ROLL_PITCH];
  if (isnan(ka)) ka = INFINITY;
  if (isnan(kb)) kb = INFINITY;
  if (ka != kb) return ka < kb ? -1 : 1;
  return a->sample < b->sample ? -1 : a->sample > b->sample;
}

static const char *dist_of_column(const tl_sweep *sw, int c) {
  for (int p = 0; p < sw->nparam; ++p)
    if (c >= sw->param[p].col && c < sw->param[p].col + sw->param[p].ncol) {
      if (sw->param[p].kind == SW_P_PUSH && c > sw->param[p].col) return c == sw->param[p].col + 1 ? "push time" : "push angle";
      return sw->param[p].dist.text;
    }
  return "";
}

static int add_parameters(cJSON *root, const tl_sweep *sw, const tl_sweep_results *r, const double *y, double *x) {
  cJSON *arr = cJSON_AddArrayToObject(root, "parameters");
  if (!arr) return -1;
  long n = tl_sweep_results_count(r);
  for (int c = 0; c < sw->nparam_column; ++c) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    long m = 0;
    for (long i = 0; i < n; ++i) {
      x[i] = tl_sweep_results_row(r, i)->params[c];
      if (!isfinite(x[i])) continue;
      lo = fmin(lo, x[i]), hi = fmax(hi, x[i]), sum += x[i], m++;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) return -1;
    int ok = cJSON_AddStringToObject(o, "column", sw->column[3 + c]) != NULL;
    ok = ok && cJSON_AddStringToObject(o, "distribution", dist_of_column(sw, c)) != NULL;
    ok = ok && add_num(o, "min", m ? lo : NAN) == 0 && add_num(o, "max", m ? hi : NAN) == 0;
    ok = ok && add_num(o, "mean", m ? sum / (double)m : NAN) == 0;
    ok = ok && add_num(o, "correlation_with_success", correlation(x, y, n)) == 0;
    if (!ok) return -1;
  }
  return 0;
}

static int add_outcomes(cJSON *root, const tl_sweep_results *r) {
  cJSON *o = cJSON_AddObjectToObject(root, "outcomes_of_ok_samples");
  if (!o) return -1;
  long n = tl_sweep_results_count(r);
  for (int k = 0; k < TL_SWEEP_NOUTCOME; ++k) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    long m = 0;
    for (long i = 0; i < n; ++i) {
      const tl_sweep_result *row = tl_sweep_results_row(r, i);
      double v = row->outcome[k];
      if (row->status != TL_SWEEP_OK || !isfinite(v)) continue;
      lo = fmin(lo, v), hi = fmax(hi, v), sum += v, m++;
    }
    cJSON *s = cJSON_AddObjectToObject(o, tl_sweep_outcome_name(k));
    if (!s || !cJSON_AddNumberToObject(s, "n", (double)m)) return -1;
    if (add_num(s, "mean", m ? sum / (double)m : NAN) || add_num(s, "min", m ? lo : NAN) || add_num(s, "max", m ? hi : NAN))
      return -1;
  }
  return 0;
}

static int add_worst(cJSON *root, const tl_sweep *sw, const tl_sweep_results *r) {
  long n = tl_sweep_results_count(r);
  const tl_sweep_result **order = malloc(((size_t)n + 1) * sizeof(*order));
  cJSON *arr = cJSON_AddArrayToObject(root, "worst");
  if (!order || !arr) {
    free(order);
    return -1;
  }
  for (long i = 0; i < n; ++i) order[i] = tl_sweep_results_row(r, i);
  qsort(order, (size_t)n, sizeof(*order), worst_cmp);
  int ok = 1;
  for (long i = 0; i < n && i < sw->worst && ok; ++i) {
    const tl_sweep_result *w = order[i];
    cJSON *o = cJSON_CreateObject();
    ok = o && cJSON_AddItemToArray(arr, o);
    ok = ok && cJSON_AddNumberToObject(o, "sample", (double)w->sample) != NULL;
    ok = ok && cJSON_AddStringToObject(o, "status", tl_sweep_status_name(w->status)) != NULL;
    ok = ok && add_num(o, "time_to_fall", w->outcome[TL_SWEEP_TIME_TO_FALL]) == 0;
    ok = ok && add_num(o, "max_roll_pitch", w->outcome[TL_SWEEP_MAX_ROLL_PITCH]) == 0;
    cJSON *p = ok ? cJSON_AddObjectToObject(o, "params") : NULL;
    ok = ok && p;
    for (int c = 0; c < sw->nparam_column && ok; ++c) ok = add_num(p, sw->column[3 + c], w->params[c]) == 0;
    ok = ok && cJSON_AddStringToObject(o, "message", w->message) != NULL;
  }
  free(order);
  return ok ? 0 : -1;
}

static cJSON *build(const tl_sweep *sw, const tl_sweep_results *r) {
  long n = tl_sweep_results_count(r), counts[4] = {0, 0, 0, 0};
  double *y = calloc((size_t)n + 1, sizeof(double)), *x = calloc((size_t)n + 1, sizeof(double));
  cJSON *root = cJSON_CreateObject();
  int ok = root && y && x;
  for (long i = 0; ok && i < n; ++i) {
    const tl_sweep_result *row = tl_sweep_results_row(r, i);
    counts[row->status]++;
    y[i] = row->status == TL_SWEEP_OK;
  }
  char ctrl[2048], spec[20];
  if (ok) tl_controller_spec_format(&sw->ctrl, ctrl, sizeof ctrl);
  snprintf(spec, sizeof spec, "%016llx", (unsigned long long)sw->hash);
  ok = ok && cJSON_AddStringToObject(root, "robot", sw->robot) != NULL;
  ok = ok && cJSON_AddStringToObject(root, "controller", sw->world_file && !sw->ctrl_given ? "the world file's" : ctrl) != NULL;
  ok = ok && add_num(root, "duration", sw->duration) == 0 && add_num(root, "dt", sw->dt) == 0;
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)sw->seed);
  ok = ok && cJSON_AddItemToObject(root, "seed", cJSON_CreateRaw(seed));
  ok = ok && cJSON_AddStringToObject(root, "spec", spec) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "samples", (double)sw->samples) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "completed", (double)n) != NULL;
  cJSON *st = ok ? cJSON_AddObjectToObject(root, "status") : NULL;
  ok = ok && st;
  for (int s = 0; s < 4 && ok; ++s) ok = cJSON_AddNumberToObject(st, tl_sweep_status_name((tl_sweep_status)s), (double)counts[s]) != NULL;
  cJSON *succ = ok ? cJSON_AddObjectToObject(root, "success") : NULL;
  ok = ok && succ && cJSON_AddStringToObject(succ, "definition", "status ok") != NULL;
  ok = ok && cJSON_AddNumberToObject(succ, "successes", (double)counts[TL_SWEEP_OK]) != NULL;
  ok = ok && add_num(succ, "rate", n ? (double)counts[TL_SWEEP_OK] / (double)n : NAN) == 0;
  double lo, hi;
  tl_sweep_wilson(counts[TL_SWEEP_OK], n, SW_Z95, &lo, &hi);
  cJSON *w = ok ? cJSON_AddArrayToObject(succ, "wilson95") : NULL;
  ok = ok && w && cJSON_AddItemToArray(w, num(lo)) && cJSON_AddItemToArray(w, num(hi));
  ok = ok && add_parameters(root, sw, r, y, x) == 0;
  ok = ok && add_outcomes(root, r) == 0;
  ok = ok && add_worst(root, sw, r) == 0;
  free(x);
  free(y);
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

tl_status tl_sweep_write_summary(const tl_sweep *sw, const tl_sweep_results *r, const char *path, tl_error *err) {
  if (!sw || !r || !path) return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "path", "sw, r and path must not be NULL");
  cJSON *root = build(sw, r);
  char *text = root ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!text) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  tl_out o;
  tl_status st = tl_out_open(&o, path, "the sweep summary", err);
  if (st == TL_OK) st = tl_out_commit(&o, fputs(text, o.f) >= 0 && fputc('\n', o.f) != EOF, err);
  free(text);
  return st;
}
