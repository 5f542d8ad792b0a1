/* `talus compare URDF|WORLD.xml --engines talus,ode,mujoco [options]`:
 * sim-to-sim comparison. The scene, start state and controller are set up
 * exactly as `talus simulate` sets them up (cli_sim_setup), once per engine
 * (talus/engine.h); each run is measured the same way on body 0 of the
 * robot, and the engines are printed side by side, optionally with their
 * time series (--csv) and a plot of them (--plot, matplotlib). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_sim.h"
#include "../base/file.h" /* the library's output rules (libtalus) */

#define CMP_MAX_ENGINES 8
#define CMP_SAMPLE_S 0.01      /* time series: one sample per 10 ms */
#define CMP_FELL_TILT 1.0      /* rad */
#define CMP_DEFAULT_ENGINES "talus,ode,mujoco"

typedef struct cmp_sample {
  double t, x, y, z, speed, roll, pitch, force, slip;
} cmp_sample;

typedef struct cmp_result {
  char engine[128];
  char version[96];
  char notes[2048];
  char error[1100];
  int ran;                 /* the run started */
  long long steps;
  double height_mean, height_band, speed, distance, roll_pitch, slip, force, weight, energy, sps;
  int fell, diverged;
  cmp_sample *ser;
  int nser, capser;
} cmp_result;

typedef struct cmp_options {
  const char *engines;
  const char *plot, *csv;
  int json;
} cmp_options;

/* ------------------------------------------------------------ one engine */

typedef struct cmp_acc {
  double hsum, hmin, hmax, vsum, rp, slip_sum, force_sum, energy;
  long long n, nslip;
} cmp_acc;

static int push_sample(cmp_result *r, const cmp_sample *s) {
  if (r->nser == r->capser) {
    int cap = r->capser ? 2 * r->capser : 1024;
    cmp_sample *g = realloc(r->ser, (size_t)cap * sizeof(*g));
    if (!g) return -1;
    r->ser = g;
    r->capser = cap;
  }
  r->ser[r->nser++] = *s;
  return 0;
}

static void set_error(cmp_result *r, const char *what, const tl_error *err, tl_status st) {
  snprintf(r->error, sizeof r->error, "%s: %.1000s", what, err->message[0] ? err->message : tl_status_name(st));
}

/* Run the scene on engine r->engine and fill r. */
static void run_engine(const cli_sim_options *base, cmp_result *r) {
  cli_sim_options o = *base;
  o.engine = r->engine;
  const tl_engine_api *api = NULL;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_engine_find(r->engine, &api, &err);
  if (st != TL_OK) {
    set_error(r, "engine", &err, st);
    return;
  }
  snprintf(r->version, sizeof r->version, "%s", tl_engine_version(api));
  cli_sim s;
  int rc = cli_sim_setup(&s, &o);
  if (rc == CLI_EXIT_OK) rc = cli_sim_controllers(&s);
  if (rc != CLI_EXIT_OK) {
    snprintf(r->error, sizeof r->error, "setup failed (the message is on stderr)");
    cli_sim_free(&s);
    return;
  }
  if (!s.sys) {
    snprintf(r->error, sizeof r->error, "the world has no <system> to compare");
    cli_sim_free(&s);
    return;
  }
  r->ran = 1;
  double g[3], pos[3], R[9], p0[3];
  tl_world_gravity(s.world, g);
  r->weight = tl_model_total_mass(s.model) * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  tl_system_body_pose(s.sys, 0, p0, R, NULL);
  double z0 = p0[2], dt = s.dt;
  long long window = (long long)ceil(CLI_SIM_SETTLE_FRACTION * (double)s.nsteps);
  long long every = llround(CMP_SAMPLE_S / dt) > 0 ? llround(CMP_SAMPLE_S / dt) : 1;
  cmp_acc a = {0, INFINITY, -INFINITY, 0, 0, 0, 0, 0, 0, 0};
  double *tau = calloc((size_t)s.nv + 1, sizeof(double)), *u = calloc((size_t)s.nv + 1, sizeof(double));
  if (!tau || !u) {
    snprintf(r->error, sizeof r->error, "out of memory");
    goto done;
  }
  double fsum = 0, ssum = 0; /* force and slip summed since the last sample (its mean is stored) */
  long long fcount = 0, scount = 0;
  double t0 = cli_now();
  for (long long k = 0; k < s.nsteps; ++k) {
    int in_window = k >= window;
    st = tl_world_integrate1(s.world, &err);
    if (st == TL_OK) st = cli_ctrl_update(&s, in_window, &err);
    if (st == TL_OK) st = cli_scene_ctrl_update(&s, &err);
    if (st == TL_OK) st = tl_world_integrate2(s.world, &err);
    if (st != TL_OK) {
      set_error(r, "step", &err, st);
      r->diverged = st == TL_ERR_DIVERGED;
      break;
    }
    r->steps++;
    /* the contacts of the step just taken on the robot, its base, its actuators (talus/metrics.h) */
    tl_contact_measure cm;
    tl_measure_contacts(s.world, s.sys, 1, &cm);
    double force = cm.normal_force, slip = cm.slip_sum;
    long long nslip = cm.nslip;
    tl_base_measure bm;
    if (tl_measure_base(s.sys, &bm, NULL) != TL_OK) {
      for (int i = 0; i < 3; ++i) bm.pos[i] = NAN;
      bm.roll = bm.pitch = bm.roll_pitch_max = bm.forward_speed = NAN;
    }
    memcpy(pos, bm.pos, sizeof pos);
    double roll = bm.roll, pitch = bm.pitch, rp = bm.roll_pitch_max, speed = bm.forward_speed;
    a.energy += tl_measure_actuator_power(s.sys, tau, u, s.nv) * dt;
    if (in_window) {
      a.hsum += pos[2], a.hmin = fmin(a.hmin, pos[2]), a.hmax = fmax(a.hmax, pos[2]);
      a.vsum += speed;
      a.rp = fmax(a.rp, rp);
      a.force_sum += force;
      a.slip_sum += slip, a.nslip += nslip;
      a.n++;
    }
    if (!isfinite(pos[2]) || pos[2] < 0.5 * z0 || fabs(roll) > CMP_FELL_TILT || fabs(pitch) > CMP_FELL_TILT) r->fell = 1;
    fsum += force, fcount++, ssum += slip, scount += nslip;
    if (k % every == every - 1 || k == s.nsteps - 1) {
      cmp_sample smp = {tl_world_time(s.world), pos[0], pos[1], pos[2], speed, roll, pitch, fsum / (double)fcount,
                        scount ? ssum / (double)scount : 0.0};
      fsum = ssum = 0, fcount = scount = 0;
      if (push_sample(r, &smp)) {
        snprintf(r->error, sizeof r->error, "out of memory");
        break;
      }
    }
  }
  double wall = cli_now() - t0;
  r->sps = wall > 0 ? (double)r->steps / wall : NAN;
  r->fell |= r->diverged;
  double n = (double)a.n;
  r->height_mean = a.n ? a.hsum / n : NAN;
  r->height_band = a.n ? a.hmax - a.hmin : NAN;
  r->speed = a.n ? a.vsum / n : NAN;
  r->roll_pitch = a.n ? a.rp : NAN;
  r->force = a.n ? a.force_sum / n : NAN;
  r->slip = a.nslip ? a.slip_sum / (double)a.nslip : 0.0;
  r->energy = a.energy;
  tl_system_body_pose(s.sys, 0, pos, R, NULL);
  r->distance = hypot(pos[0] - p0[0], pos[1] - p0[1]);
  snprintf(r->notes, sizeof r->notes, "%s", tl_world_engine_notes(s.world));
done:
  free(tau);
  free(u);
  cli_sim_free(&s);
}

/* ------------------------------------------------------------ output */

static void print_num(double v, int w, int prec) {
  if (isnan(v))
    printf(" %*s", w, "n/a");
  else
    printf(" %*.*f", w, prec, v);
}

static void print_table(const cli_sim_options *o, const cmp_result *r, int n) {
  printf("compare        %s\n", o->urdf);
  if (o->world) {
    printf("controller     the world file's");
  } else {
    printf("controller     %s", cli_ctrl_name(o->ctrl.kind));
    for (int i = 0; i < o->ctrl.nparam; ++i) printf("%s%s=%s", i ? "," : ":", o->ctrl.param[i].key, o->ctrl.param[i].value);
  }
  printf(", %g s at dt %g s; statistics over the last %.0f%% of the run\n", o->duration, o->dt,
         100 * (1 - CLI_SIM_SETTLE_FRACTION));
  printf("%-22s %8s %8s %8s %8s %8s %8s %9s %9s %10s %4s\n", "engine", "height", "band", "speed", "distance",
         "roll_pit", "slip", "force", "energy", "steps/s", "fell");
  printf("%-22s %8s %8s %8s %8s %8s %8s %9s %9s %10s %4s\n", "", "m", "m", "m/s", "m", "rad", "m/s", "N", "J", "", "");
  for (int i = 0; i < n; ++i) {
    const cmp_result *x = &r[i];
    printf("%-22.22s", x->engine);
    if (!x->ran) {
      printf(" error: %s\n", x->error);
      continue;
    }
    print_num(x->height_mean, 8, 4);
    print_num(x->height_band, 8, 4);
    print_num(x->speed, 8, 3);
    print_num(x->distance, 8, 3);
    print_num(x->roll_pitch, 8, 3);
    print_num(x->slip, 8, 4);
    print_num(x->force, 9, 1);
    print_num(x->energy, 9, 1);
    print_num(x->sps, 10, 0);
    printf(" %4s\n", x->fell ? "YES" : "no");
  }
  for (int i = 0; i < n; ++i) {
    const cmp_result *x = &r[i];
    if (!x->ran) continue;
    printf("# %s: %s; weight m g = %.1f N; %lld steps", x->engine, x->version, x->weight, x->steps);
    if (x->error[0]) printf("; stopped: %s", x->error);
    putchar('\n');
    for (const char *p = x->notes; *p;) {
      const char *nl = strchr(p, '\n');
      int len = nl ? (int)(nl - p) : (int)strlen(p);
      printf("#   note: %.*s\n", len, p);
      p = nl ? nl + 1 : p + len;
    }
  }
}

static int print_json(const cli_sim_options *o, const cmp_result *r, int n) {
  cJSON *root = cJSON_CreateObject();
  int ok = root != NULL;
  ok = ok && cli_json_add_string(root, "scene", o->urdf) == 0;
  ok = ok && cli_json_add_string(root, "controller", o->world ? "world file" : cli_ctrl_name(o->ctrl.kind)) == 0;
  ok = ok && cli_json_add_number(root, "duration", o->duration) == 0;
  ok = ok && cli_json_add_number(root, "dt", o->dt) == 0;
  cJSON *arr = ok ? cJSON_AddArrayToObject(root, "engines") : NULL;
  ok = ok && arr;
  for (int i = 0; i < n && ok; ++i) {
    const cmp_result *x = &r[i];
    cJSON *e = cJSON_CreateObject();
    ok = e && cJSON_AddItemToArray(arr, e);
    ok = ok && cli_json_add_string(e, "engine", x->engine) == 0;
    ok = ok && cli_json_add_string(e, "version", x->version[0] ? x->version : NULL) == 0;
    ok = ok && cli_json_add_string(e, "error", x->error[0] ? x->error : NULL) == 0;
    ok = ok && cli_json_add_string(e, "notes", x->ran ? x->notes : NULL) == 0;
    double v[] = {x->height_mean, x->height_band, x->speed, x->distance, x->roll_pitch, x->slip, x->force,
                  x->weight, x->energy, x->sps, (double)x->steps};
    const char *k[] = {"height_mean", "height_band", "speed", "distance", "roll_pitch_max", "slip", "force",
                       "weight", "energy", "steps_per_second", "steps"};
    for (size_t j = 0; j < sizeof(v) / sizeof(v[0]) && ok; ++j) ok = cli_json_add_number(e, k[j], x->ran ? v[j] : NAN) == 0;
    ok = ok && (x->ran ? cJSON_AddBoolToObject(e, "fell", x->fell) : cJSON_AddNullToObject(e, "fell")) != NULL;
  }
  if (!ok) {
    cJSON_Delete(root);
    cli_errorf("out of memory");
    return CLI_EXIT_FAIL;
  }
  return cli_json_print_and_free(root);
}

static int write_csv(const char *path, const cmp_result *r, int n) {
  tl_out o;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = tl_out_open(&o, path, "the CSV file", &err);
  if (st == TL_OK) {
    int ok = fputs("engine,t,x,y,z,speed,roll,pitch,force,slip\n", o.f) >= 0;
    for (int i = 0; i < n && ok; ++i)
      for (int k = 0; k < r[i].nser && ok; ++k) {
        const cmp_sample *s = &r[i].ser[k];
        ok = fprintf(o.f, "%s,%.6g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r[i].engine, s->t, s->x, s->y, s->z,
                     s->speed, s->roll, s->pitch, s->force, s->slip) >= 0;
      }
    st = tl_out_commit(&o, ok, &err);
  }
  if (st != TL_OK) {
    cli_errorf("compare: %s", err.message);
    return -1;
  }
  return 0;
}

/* matplotlib, in the Python of $TALUS_PYTHON or /usr/bin/python3 (Debian's, with matplotlib). */
static const char plot_script[] =
    "import csv, sys\n"
    "import matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\n"
    "rows = list(csv.DictReader(open(sys.argv[1])))\n"
    "engines = list(dict.fromkeys(r['engine'] for r in rows))\n"
    "fig, ax = plt.subplots(4, 1, sharex=True, figsize=(9, 10))\n"
    "for e in engines:\n"
    "    rs = [r for r in rows if r['engine'] == e]\n"
    "    t = [float(r['t']) for r in rs]\n"
    "    col = lambda k: [float(r[k]) for r in rs]\n"
    "    line, = ax[0].plot(t, col('z'), label=e)\n"
    "    ax[1].plot(t, col('speed'), color=line.get_color())\n"
    "    ax[2].plot(t, col('roll'), color=line.get_color(), label=e + ' roll')\n"
    "    ax[2].plot(t, col('pitch'), '--', color=line.get_color(), label=e + ' pitch')\n"
    "    ax[3].plot(t, col('force'), color=line.get_color())\n"
    "for a, y in zip(ax, ['base height (m)', 'forward speed (m/s)', 'roll, pitch (rad)', 'normal contact force (N)']):\n"
    "    a.set_ylabel(y)\n"
    "    a.grid(True, alpha=0.3)\n"
    "ax[0].legend()\n"
    "ax[2].legend(fontsize='small', ncol=2)\n"
    "ax[3].set_xlabel('t (s)')\n"
    "fig.suptitle(sys.argv[3])\n"
    "fig.tight_layout()\n"
    "fig.savefig(sys.argv[2], dpi=110)\n";

static int draw_plot(const char *csv, const char *out, const char *title) {
  const char *py = getenv("TALUS_PYTHON");
  if (!py || !*py) py = "/usr/bin/python3";
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    cli_errorf("compare: --plot: cannot start %s: %s", py, strerror(errno));
    return -1;
  }
  if (pid == 0) {
    char *argv[] = {(char *)py, "-c", (char *)plot_script, (char *)csv, (char *)out, (char *)title, NULL};
    execv(py, argv);
    fprintf(stderr, "talus: compare: --plot: cannot run %s: %s\n", py, strerror(errno));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    cli_errorf("compare: --plot: %s could not draw '%s' (it needs matplotlib; set TALUS_PYTHON to a Python "
               "that has it)", py, out);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ the command */

/* Take --engines, --plot, --csv, --json out of argv (kept for simulate's parser). */
static int take_options(int *argc, char **argv, cmp_options *c) {
  int j = 1;
  for (int i = 1; i < *argc; ++i) {
    const char *v = NULL;
    int r;
    if ((r = cli_option_value(*argc, argv, &i, "--engines", &v)) != 0) {
      if (r < 0) return -1;
      c->engines = v;
    } else if ((r = cli_option_value(*argc, argv, &i, "--plot", &v)) != 0) {
      if (r < 0) return -1;
      c->plot = v;
    } else if ((r = cli_option_value(*argc, argv, &i, "--csv", &v)) != 0) {
      if (r < 0) return -1;
      c->csv = v;
    } else if (strcmp(argv[i], "--json") == 0) {
      c->json = 1;
    } else if (strcmp(argv[i], "--engine") == 0 || strncmp(argv[i], "--engine=", 9) == 0) {
      cli_errorf("compare: use --engines E1,E2,... (--engine is simulate's)");
      return -1;
    } else {
      argv[j++] = argv[i];
    }
  }
  argv[j] = NULL;
  *argc = j;
  return 0;
}

static int split_engines(const char *list, cmp_result *r, int *n) {
  *n = 0;
  for (const char *p = list; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= sizeof r[0].engine || *n >= CMP_MAX_ENGINES) {
      cli_errorf("option --engines: '%s': expected 1 to %d names of 1 to %zu characters, ','-separated",
                 list, CMP_MAX_ENGINES, sizeof r[0].engine - 1);
      return -1;
    }
    memcpy(r[*n].engine, p, len);
    r[*n].engine[len] = '\0';
    (*n)++;
    p = comma ? comma + 1 : NULL;
  }
  return *n > 0 ? 0 : -1;
}

int cli_compare(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(cli_usage_compare, stdout);
      return CLI_EXIT_OK;
    }
  cmp_options c = {CMP_DEFAULT_ENGINES, NULL, NULL, 0};
  if (take_options(&argc, argv, &c) != 0) return CLI_EXIT_USAGE;
  if (argc < 2) {
    cli_errorf("compare: a URDF or world file is required (talus compare --help)");
    return CLI_EXIT_USAGE;
  }
  cli_sim_options o;
  int rc = cli_sim_parse(argc, argv, &o);
  if (rc >= 0) {
    free(o.q);
    return rc;
  }
  static cmp_result res[CMP_MAX_ENGINES];
  memset(res, 0, sizeof res);
  int n = 0;
  if (split_engines(c.engines, res, &n) != 0) {
    free(o.q);
    return CLI_EXIT_USAGE;
  }
  o.json = 1; /* nothing of simulate's own report */
  for (int i = 0; i < n; ++i) run_engine(&o, &res[i]);
  rc = CLI_EXIT_OK;
  if (c.json) {
    if (print_json(&o, res, n) != CLI_EXIT_OK) rc = CLI_EXIT_FAIL;
  } else {
    print_table(&o, res, n);
  }
  for (int i = 0; i < n; ++i)
    if (!res[i].ran || res[i].error[0]) rc = CLI_EXIT_FAIL;
  if (c.csv && write_csv(c.csv, res, n) != 0) rc = CLI_EXIT_FAIL;
  if (c.plot) {
    char tmp[] = "/tmp/talus_compare_XXXXXX";
    const char *csv = c.csv;
    int fd = -1;
    if (!csv) {
      fd = mkstemp(tmp);
      if (fd >= 0) close(fd);
      csv = fd >= 0 && write_csv(tmp, res, n) == 0 ? tmp : NULL;
    }
    char title[600];
    snprintf(title, sizeof title, "%s, %s", o.urdf, o.world ? "the world file's controllers" : cli_ctrl_name(o.ctrl.kind));
    if (!csv || draw_plot(csv, c.plot, title) != 0) rc = CLI_EXIT_FAIL;
    if (fd >= 0) remove(tmp);
  }
  for (int i = 0; i < n; ++i) free(res[i].ser);
  free(o.q);
  return rc;
}
