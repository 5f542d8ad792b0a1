/* Guards: src/sweep/spec.c, sample.c, table.c, run.c, prepare.c, summary.c (talus/sweep.h). */
/* Sweeps (include/talus/sweep.h), the library. Public API only.
 *
 * Modes (one ctest each):
 *   dist ROBOTS     sampling: 20 000 draws of uniform:2:5, normal:1:2, loguniform:0.1:10 and
 *                   choice:0,0.25,1 have the distributions' mean, spread and frequencies within 4.5
 *                   standard errors, stay in range, are uncorrelated with each other, and repeat
 *                   exactly; a parameter keeps its values when another is added after it (its own
 *                   block range of the stream); grids: the full factorial in order (the last grid
 *                   varies fastest, samples = the product), exact end points, a grid beside a random
 *                   parameter cycles with its period, a sample count that is not a multiple of the
 *                   grid's is refused; the Wilson interval against published values.
 *   check ROBOTS    refusals before any sample runs, each naming the parameter (element): negative
 *                   mass scale, friction below 0, restitution above 1, a normal whose mean is out of
 *                   range, an unknown parameter, an unknown link or joint, a malformed distribution,
 *                   a per-joint form of a whole-robot parameter; frozen settings after prepare.
 *   csv ROBOTS      a row printed and parsed back gives the same bits (NaN, -0, subnormal, Inf,
 *                   a message with quotes and commas).
 *   physics ROBOTS  talus_quadruped standing (stand controller, 2 s): the mean contact normal force
 *                   equals (M s + m_add) g within 0.2 % for mass_scale s in {1, 1.5} and
 *                   base_mass_add m_add in {0, 10} kg (the randomization really changed the robot);
 *                   motor_strength 0.02 (effort limit 1.6 N m) makes it fall (status fell, a time
 *                   to fall inside the run), 1 keeps it up; with no controller it falls; an explicit
 *                   impedance law 1000 times too stiff on a pendulum without limits diverges
 *                   (status diverged) and the stable samples of the same sweep are ok; a whole run
 *                   on 1 and 3 threads gives the same rows bit for bit. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/talus.h"
#include "talus/sweep.h"
#include "test_util.h"

static const char *robots;

static tl_sweep *make(const char *robot, const char *const *kv) {
  tl_sweep *sw = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!TL_CHECK(tl_sweep_create(NULL, &sw, &err) == TL_OK, "create: %s", err.message)) return NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", robots, robot);
  tl_sweep_set(sw, "robot", path, NULL);
  for (int i = 0; kv && kv[i]; i += 2)
    if (!TL_CHECK(tl_sweep_set(sw, kv[i], kv[i + 1], &err) == TL_OK, "set %s=%s: %s", kv[i], kv[i + 1], err.message)) {
      tl_sweep_free(sw);
      return NULL;
    }
  if (!TL_CHECK(tl_sweep_prepare(sw, &err) == TL_OK, "prepare: %s", err.message)) {
    tl_sweep_free(sw);
    return NULL;
  }
  return sw;
}

/* ------------------------------------------------------------ dist */

static void test_dist(void) {
  enum { N = 20000 };
  static const char *const kv[] = {"controller", "none", "samples", "20000", "seed", "7",
                                   "param", "friction=uniform:2:5", "param", "base_mass_add=normal:1:2",
                                   "param", "mass_scale=loguniform:0.1:10", "param", "restitution=choice:0,0.25,1",
                                   NULL};
  tl_sweep *sw = make("pendulum/pendulum.urdf", kv);
  if (!sw) return;
  TL_CHECK(tl_sweep_nsample(sw) == N && tl_sweep_nparam_column(sw) == 4, "layout");
  static double v[N][4];
  double again[4];
  double s[4] = {0}, s2[4] = {0}, lmin = INFINITY, lmax = -INFINITY, umin = INFINITY, umax = -INFINITY;
  long counts[3] = {0, 0, 0};
  int same = 1;
  for (long i = 0; i < N; ++i) {
    tl_sweep_sample_values(sw, i, v[i], 4, NULL);
    tl_sweep_sample_values(sw, i, again, 4, NULL);
    same &= memcmp(v[i], again, sizeof again) == 0;
    double x[4] = {v[i][0], v[i][1], log(v[i][2]), v[i][3]};
    for (int k = 0; k < 4; ++k) s[k] += x[k], s2[k] += x[k] * x[k];
    umin = fmin(umin, v[i][0]), umax = fmax(umax, v[i][0]);
    lmin = fmin(lmin, v[i][2]), lmax = fmax(lmax, v[i][2]);
    counts[v[i][3] == 0 ? 0 : v[i][3] == 0.25 ? 1 : 2]++;
  }
  TL_CHECK(same, "values repeat exactly");
  double mean[4], sd[4];
  for (int k = 0; k < 4; ++k) mean[k] = s[k] / N, sd[k] = sqrt(s2[k] / N - mean[k] * mean[k]);
  double su = 3 / sqrt(12.0), sl = log(100.0) / sqrt(12.0);
  TL_CHECK(fabs(mean[0] - 3.5) < 4.5 * su / sqrt(N) && fabs(sd[0] / su - 1) < 0.02, "uniform: mean %g sd %g", mean[0], sd[0]);
  TL_CHECK(umin >= 2 && umax < 5, "uniform range [%g, %g]", umin, umax);
  TL_CHECK(fabs(mean[1] - 1) < 4.5 * 2 / sqrt(N) && fabs(sd[1] / 2 - 1) < 0.03, "normal: mean %g sd %g", mean[1], sd[1]);
  TL_CHECK(fabs(mean[2]) < 4.5 * sl / sqrt(N) && fabs(sd[2] / sl - 1) < 0.02, "loguniform: mean log %g sd %g", mean[2], sd[2]);
  TL_CHECK(lmin >= 0.1 && lmax <= 10, "loguniform range [%g, %g]", lmin, lmax);
  for (int c = 0; c < 3; ++c)
    TL_CHECK(fabs(counts[c] / (double)N - 1.0 / 3) < 4.5 * sqrt(2.0 / 9 / N), "choice %d: %ld of %d", c, counts[c], N);
  /* pairwise correlation of the streams of different parameters */
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double c = 0;
      for (long i = 0; i < N; ++i) {
        double xa = a == 2 ? log(v[i][a]) : v[i][a], xb = b == 2 ? log(v[i][b]) : v[i][b];
        c += (xa - mean[a]) * (xb - mean[b]);
      }
      c /= N * sd[a] * sd[b];
      TL_CHECK(fabs(c) < 4.5 / sqrt(N), "correlation of columns %d and %d: %g", a, b, c);
    }
  /* adding a parameter after the others leaves their values alone */
  static const char *const kv2[] = {"controller", "none", "samples", "20000", "seed", "7",
                                    "param", "friction=uniform:2:5", "param", "base_mass_add=normal:1:2",
                                    "param", "mass_scale=loguniform:0.1:10", "param", "restitution=choice:0,0.25,1",
                                    "param", "push=uniform:0:10", NULL};
  tl_sweep *sw2 = make("pendulum/pendulum.urdf", kv2);
  if (sw2) {
    double w[7];
    int keep = 1;
    for (long i = 0; i < 200; ++i) {
      tl_sweep_sample_values(sw2, i, w, 7, NULL);
      keep &= memcmp(w, v[i], 4 * sizeof(double)) == 0;
    }
    TL_CHECK(keep, "a new parameter changed the others' values");
    TL_CHECK(tl_sweep_hash(sw2) != tl_sweep_hash(sw), "different sweeps, same hash");
    tl_sweep_free(sw2);
  }
  /* another seed gives other values */
  static const char *const kv3[] = {"controller", "none", "samples", "10", "seed", "8", "param", "friction=uniform:2:5", NULL};
  tl_sweep *sw3 = make("pendulum/pendulum.urdf", kv3);
  if (sw3) {
    double w;
    tl_sweep_sample_values(sw3, 0, &w, 1, NULL);
    TL_CHECK(w != v[0][0], "seed 8 sample 0 equals seed 7's");
    tl_sweep_free(sw3);
  }
  tl_sweep_free(sw);
}

static void test_grid(void) {
  static const char *const kv[] = {"controller", "none", "param", "friction=grid:0:1:3", "param", "kp_scale=grid:1:2:2",
                                   NULL};
  tl_sweep *sw = make("pendulum/pendulum.urdf", kv);
  if (!sw) return;
  TL_CHECK(tl_sweep_nsample(sw) == 6, "full factorial: %ld samples", tl_sweep_nsample(sw));
  static const double want[6][2] = {{0, 1}, {0, 2}, {0.5, 1}, {0.5, 2}, {1, 1}, {1, 2}};
  for (long i = 0; i < 6; ++i) {
    double w[2];
    tl_sweep_sample_values(sw, i, w, 2, NULL);
    TL_CHECK(w[0] == want[i][0] && w[1] == want[i][1], "grid sample %ld: (%g, %g)", i, w[0], w[1]);
  }
  tl_sweep_free(sw);
  static const char *const kv2[] = {"controller", "none", "samples", "12", "param", "friction=grid:0.2:0.8:3",
                                    "param", "push=uniform:0:10", NULL};
  sw = make("pendulum/pendulum.urdf", kv2);
  if (sw) {
    int ok = 1;
    for (long i = 0; i < 12; ++i) {
      double w[4];
      tl_sweep_sample_values(sw, i, w, 4, NULL);
      ok &= w[0] == (i % 3 == 0 ? 0.2 : i % 3 == 1 ? 0.2 + 0.6 * 1 / 2.0 : 0.8);
    }
    TL_CHECK(ok, "a grid beside a random parameter cycles");
    tl_sweep_free(sw);
  }
  tl_sweep *bad = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_sweep_create(NULL, &bad, NULL);
  char path[1024];
  snprintf(path, sizeof path, "%s/pendulum/pendulum.urdf", robots);
  tl_sweep_set(bad, "robot", path, NULL);
  tl_sweep_set(bad, "controller", "none", NULL);
  tl_sweep_set(bad, "param", "friction=grid:0:1:3", NULL);
  tl_sweep_set(bad, "samples", "7", NULL);
  TL_CHECK(tl_sweep_prepare(bad, &err) == TL_ERR_ARGUMENT && strcmp(err.element, "samples") == 0,
           "7 samples of a 3-point grid: %s", err.message);
  tl_sweep_free(bad);
}

static void test_wilson(void) {
  /* Wilson 1927; e.g. statsmodels proportion_confint(k, n, method="wilson") */
  double lo, hi;
  tl_sweep_wilson(5, 10, 1.959963984540054, &lo, &hi);
  TL_CHECK(fabs(lo - 0.236593) < 1e-6 && fabs(hi - 0.763407) < 1e-6, "wilson 5/10: [%g, %g]", lo, hi);
  tl_sweep_wilson(0, 10, 1.959963984540054, &lo, &hi);
  TL_CHECK(lo == 0 && fabs(hi - 0.277533) < 1e-6, "wilson 0/10: [%g, %g]", lo, hi);
  tl_sweep_wilson(81, 263, 1.959963984540054, &lo, &hi); /* Newcombe 1998, example (b): 0.2553 .. 0.3662 */
  TL_CHECK(fabs(lo - 0.2553) < 1e-4 && fabs(hi - 0.3662) < 1e-4, "wilson 81/263: [%g, %g]", lo, hi);
}

/* ------------------------------------------------------------ check */

static void refused(const char *robot, const char *const *kv, tl_status want, const char *element, const char *text) {
  tl_sweep *sw = NULL;
  tl_sweep_create(NULL, &sw, NULL);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", robots, robot);
  tl_sweep_set(sw, "robot", path, NULL);
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = TL_OK;
  for (int i = 0; kv[i] && st == TL_OK; i += 2) st = tl_sweep_set(sw, kv[i], kv[i + 1], &err);
  if (st == TL_OK) st = tl_sweep_prepare(sw, &err);
  TL_CHECK(st == want && (!element || strcmp(err.element, element) == 0) && strstr(err.message, text),
           "%s=%s: status %d element '%s' message '%s'", kv[0], kv[1], (int)st, err.element, err.message);
  tl_sweep_free(sw);
}

static void test_check(void) {
  const char *q = "talus_quadruped/talus_quadruped.urdf";
  refused(q, (const char *const[]){"param", "mass_scale=uniform:-0.5:1.5", NULL}, TL_ERR_ARGUMENT, "mass_scale",
          "mass_scale must be > 0");
  refused(q, (const char *const[]){"param", "friction=-0.1", NULL}, TL_ERR_ARGUMENT, "friction", "friction must be >= 0");
  refused(q, (const char *const[]){"param", "friction=uniform:-0.1:1", NULL}, TL_ERR_ARGUMENT, "friction", "reaches -0.1");
  refused(q, (const char *const[]){"param", "restitution=choice:0,1.5", NULL}, TL_ERR_ARGUMENT, "restitution", "[0, 1]");
  refused(q, (const char *const[]){"param", "mass_scale=normal:-1:0.1", NULL}, TL_ERR_ARGUMENT, "mass_scale", "mean");
  refused(q, (const char *const[]){"param", "gravity_scale=1", NULL}, TL_ERR_ARGUMENT, "gravity_scale", "unknown parameter");
  refused(q, (const char *const[]){"param", "mass_scale@NOPE=1.2", NULL}, TL_ERR_INVALID, "mass_scale@NOPE", "no link 'NOPE'");
  refused(q, (const char *const[]){"param", "joint_damping@NOPE=1", NULL}, TL_ERR_INVALID, "joint_damping@NOPE",
          "no movable joint 'NOPE'");
  refused(q, (const char *const[]){"param", "friction=uniform:1", NULL}, TL_ERR_ARGUMENT, "friction", "uniform:1");
  refused(q, (const char *const[]){"param", "friction@LF_FOOT=1", NULL}, TL_ERR_ARGUMENT, "friction@LF_FOOT",
          "no per-link or per-joint form");
  refused(q, (const char *const[]){"duration", "-1", NULL}, TL_ERR_ARGUMENT, "duration", "must be > 0");
  refused(q, (const char *const[]){"controller", "walk", NULL}, TL_ERR_ARGUMENT, "controller", "unknown controller");
  refused("pendulum/pendulum.urdf", (const char *const[]){"controller", "trot", NULL}, TL_ERR_ARGUMENT, NULL,
          "trot controller");
  /* frozen after prepare */
  tl_sweep *sw = make(q, (const char *const[]){"samples", "3", NULL});
  if (sw) {
    tl_error err;
    TL_CHECK(tl_sweep_set(sw, "samples", "4", &err) == TL_ERR_INVALID, "set after prepare");
    tl_sweep_free(sw);
  }
}

/* ------------------------------------------------------------ csv */

static void test_csv(void) {
  /* through a run on 1 thread: the rows written and read back by --resume equal the ones in memory */
  static const char *const kv[] = {"controller", "none", "samples", "6", "duration", "0.05",
                                   "param", "base_mass_add=normal:0:1e-310", "param", "friction=uniform:0:1", NULL};
  tl_sweep *sw = make("pendulum/pendulum.urdf", kv);
  if (!sw) return;
  char csv[] = "/tmp/talus_test_sweep_XXXXXX";
  int fd = mkstemp(csv);
  if (fd >= 0) close(fd);
  tl_sweep_run_options opt = tl_sweep_run_options_default();
  opt.nthread = 1;
  opt.csv = csv;
  tl_sweep_results *a = NULL, *b = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_sweep_run(sw, &opt, &a, &err) == TL_OK, "run: %s", err.message);
  opt.resume = 1;
  TL_CHECK(tl_sweep_run(sw, &opt, &b, &err) == TL_OK, "resume: %s", err.message);
  if (a && b) {
    TL_CHECK(tl_sweep_results_ran(b) == 0 && tl_sweep_results_count(b) == 6, "resume ran %ld", tl_sweep_results_ran(b));
    int same = 1;
    for (long i = 0; i < 6; ++i) {
      const tl_sweep_result *x = tl_sweep_results_row(a, i), *y = tl_sweep_results_row(b, i);
      same &= x->sample == y->sample && x->status == y->status && strcmp(x->message, y->message) == 0;
      same &= memcmp(x->params, y->params, 2 * sizeof(double)) == 0;
      for (int k = 0; k < TL_SWEEP_NOUTCOME; ++k)
        same &= (isnan(x->outcome[k]) && isnan(y->outcome[k])) || memcmp(&x->outcome[k], &y->outcome[k], sizeof(double)) == 0;
    }
    TL_CHECK(same, "rows read back differ from the rows run");
    int subnormal = 0;
    for (long i = 0; i < 6; ++i) subnormal |= fpclassify(tl_sweep_results_row(b, i)->params[0]) == FP_SUBNORMAL;
    TL_CHECK(subnormal, "a subnormal parameter survived the round trip");
  }
  tl_sweep_results_free(a);
  tl_sweep_results_free(b);
  /* a CSV of another sweep is refused, naming the file and line */
  tl_sweep *other = make("pendulum/pendulum.urdf", (const char *const[]){"controller", "none", "samples", "6", "duration",
                                                                         "0.05", "param", "base_mass_add=normal:0:1e-310",
                                                                         "param", "friction=uniform:0:2", NULL});
  if (other) {
    TL_CHECK(tl_sweep_run(other, &opt, NULL, &err) == TL_ERR_INVALID && err.line == 2 && strstr(err.message, "spec"),
             "another sweep's CSV: %s", err.message);
    tl_sweep_free(other);
  }
  remove(csv);
  tl_sweep_free(sw);
}

/* ------------------------------------------------------------ physics */

static void test_physics(void) {
  static const char *const kv[] = {"duration", "2", "samples", "16", "param", "mass_scale=choice:1,1.5",
                                   "param", "base_mass_add=choice:0,10", "param", "motor_strength=choice:0.02,1", NULL};
  tl_sweep *sw = make("talus_quadruped/talus_quadruped.urdf", kv);
  if (!sw) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  tl_model *m = NULL;
  tl_model_load_urdf(path, NULL, &m, NULL);
  double M = m ? tl_model_total_mass(m) : NAN, g = 9.81;
  tl_model_free(m);
  tl_sweep_run_options opt = tl_sweep_run_options_default();
  opt.nthread = 3;
  tl_sweep_results *r = NULL, *r1 = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_sweep_run(sw, &opt, &r, &err) == TL_OK, "run: %s", err.message);
  opt.nthread = 1;
  TL_CHECK(tl_sweep_run(sw, &opt, &r1, &err) == TL_OK, "run 1 thread: %s", err.message);
  int nok = 0, nfell = 0;
  for (long i = 0; r && i < tl_sweep_results_count(r); ++i) {
    const tl_sweep_result *x = tl_sweep_results_row(r, i);
    double s = x->params[0], add = x->params[1], strength = x->params[2];
    if (strength == 1) {
      nok++;
      double w = (M * s + add) * g, f = x->outcome[TL_SWEEP_CONTACT_FORCE_MEAN];
      TL_CHECK(x->status == TL_SWEEP_OK && fabs(f / w - 1) < 2e-3, "sample %ld (s %g, +%g kg): %s, force %g N vs weight %g N",
               x->sample, s, add, tl_sweep_status_name(x->status), f, w);
    } else {
      nfell++;
      double t = x->outcome[TL_SWEEP_TIME_TO_FALL];
      TL_CHECK(x->status == TL_SWEEP_FELL && t > 0 && t < 2, "sample %ld (strength %g): %s, time to fall %g", x->sample,
               strength, tl_sweep_status_name(x->status), t);
    }
  }
  TL_CHECK(nok > 0 && nfell > 0, "both strengths drawn (%d, %d)", nok, nfell);
  int same = r && r1 && tl_sweep_results_count(r) == tl_sweep_results_count(r1);
  for (long i = 0; same && i < tl_sweep_results_count(r); ++i) {
    const tl_sweep_result *x = tl_sweep_results_row(r, i), *y = tl_sweep_results_row(r1, i);
    for (int k = 0; k < TL_SWEEP_NOUTCOME; ++k)
      same &= (isnan(x->outcome[k]) && isnan(y->outcome[k])) || x->outcome[k] == y->outcome[k];
  }
  TL_CHECK(same, "3 threads and 1 thread give different rows");
  tl_sweep_results_free(r);
  tl_sweep_results_free(r1);
  tl_sweep_free(sw);

  /* no controller: it falls */
  sw = make("talus_quadruped/talus_quadruped.urdf", (const char *const[]){"controller", "none", "duration", "3", "samples", "1", NULL});
  if (sw) {
    double p[1];
    char msg[256];
    tl_sweep_result x;
    tl_sweep_run_sample(sw, 0, p, 0, msg, sizeof msg, &x, NULL);
    TL_CHECK(x.status == TL_SWEEP_FELL && x.outcome[TL_SWEEP_TIME_TO_FALL] > 0, "no controller: %s (%s)",
             tl_sweep_status_name(x.status), msg);
    tl_sweep_free(sw);
  }
}

static void test_diverged(const char *tests_dir) {
  tl_sweep *sw = NULL;
  tl_sweep_create(NULL, &sw, NULL);
  char path[1024];
  snprintf(path, sizeof path, "%s/sweep/pendulum_continuous.urdf", tests_dir);
  static const char *const kv[] = {"controller", "impedance:k=1e4,zeta=0,d=0,gravity=0", "q", "0.3", "dt", "0.01",
                                   "duration", "2", "samples", "8", "param", "kp_scale=choice:0.1,1000", NULL};
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_sweep_set(sw, "robot", path, &err);
  for (int i = 0; kv[i] && st == TL_OK; i += 2) st = tl_sweep_set(sw, kv[i], kv[i + 1], &err);
  if (st == TL_OK) st = tl_sweep_prepare(sw, &err);
  TL_CHECK(st == TL_OK, "prepare: %s", err.message);
  tl_sweep_results *r = NULL;
  tl_sweep_run_options opt = tl_sweep_run_options_default();
  opt.nthread = 2;
  if (st == TL_OK) TL_CHECK(tl_sweep_run(sw, &opt, &r, &err) == TL_OK, "run: %s", err.message);
  int ndiv = 0, nok = 0;
  for (long i = 0; r && i < tl_sweep_results_count(r); ++i) {
    const tl_sweep_result *x = tl_sweep_results_row(r, i);
    if (x->params[0] == 1000) {
      ndiv++;
      TL_CHECK(x->status == TL_SWEEP_DIVERGED && x->message[0], "stiff sample %ld: %s", x->sample, tl_sweep_status_name(x->status));
    } else {
      nok++;
      TL_CHECK(x->status == TL_SWEEP_OK, "soft sample %ld: %s (%s)", x->sample, tl_sweep_status_name(x->status), x->message);
    }
  }
  TL_CHECK(r && tl_sweep_results_count(r) == 8 && ndiv > 0 && nok > 0, "every sample has a row (%d diverged, %d ok)", ndiv, nok);
  tl_sweep_results_free(r);
  tl_sweep_free(sw);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_sweep_lib dist|check|csv|physics ROBOTS_DIR [TESTS_DIR]\n");
    return 2;
  }
  robots = argv[2];
  if (strcmp(argv[1], "dist") == 0) test_dist(), test_grid(), test_wilson();
  else if (strcmp(argv[1], "check") == 0) test_check();
  else if (strcmp(argv[1], "csv") == 0) test_csv();
  else if (strcmp(argv[1], "physics") == 0) test_physics(), test_diverged(argc > 3 ? argv[3] : "tests");
  else return 2;
  return tl_test_finish();
}
