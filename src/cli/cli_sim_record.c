/* `talus simulate --record / --csv / --plot / --view` and `talus view`: the
 * recorder (talus/record.h) fed after every step, the live view, real-time
 * pacing, Ctrl-C, and writing the files at the end. Output paths are checked
 * before anything is loaded, so a bad path never costs a simulation. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli_sim.h"
#include "../base/file.h" /* tl_out_is_stream: the library's output rules */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

int cli_rec_interrupted(void) { return interrupted != 0; }

static int parse_port(const char *text, int *port) {
  double v;
  if (cli_parse_double("--port", text, &v) != 0) return -1;
  if (v != floor(v) || v < 0 || v > 65535) {
    cli_errorf("option --port: expected an integer 0 .. 65535 (0: any free port), got %s", text);
    return -1;
  }
  *port = (int)v;
  return 0;
}

int cli_rec_option(int argc, char **argv, int *i, cli_sim_options *o, int *bad) {
  const char *v = NULL, *arg = argv[*i];
  int r;
  if ((r = cli_option_value(argc, argv, i, "--record", &v)) != 0) {
    *bad = r < 0;
    o->record = v;
  } else if ((r = cli_option_value(argc, argv, i, "--csv", &v)) != 0) {
    *bad = r < 0;
    o->csv = v;
  } else if ((r = cli_option_value(argc, argv, i, "--plot", &v)) != 0) {
    *bad = r < 0;
    o->plot = v;
  } else if ((r = cli_option_value(argc, argv, i, "--plot-system", &v)) != 0) {
    *bad = r < 0;
    o->plot_system = v;
  } else if ((r = cli_option_value(argc, argv, i, "--fps", &v)) != 0) {
    *bad = r < 0 || cli_parse_double("--fps", v, &o->fps) != 0;
    if (!*bad && !(o->fps > 0)) {
      cli_errorf("option --fps: must be > 0 (got %s)", v);
      *bad = 1;
    }
  } else if ((r = cli_option_value(argc, argv, i, "--port", &v)) != 0) {
    *bad = r < 0 || parse_port(v, &o->port) != 0;
  } else if ((r = cli_option_value(argc, argv, i, "--bind", &v)) != 0) {
    *bad = r < 0;
    o->bind = v;
  } else if ((r = cli_option_value(argc, argv, i, "--history", &v)) != 0) {
    *bad = r < 0 || cli_parse_double("--history", v, &o->history) != 0;
    if (!*bad && !(o->history >= 0 && o->history <= 3600)) {
      cli_errorf("option --history: seconds of the live view's history, 0 .. 3600 (got %s)", v);
      *bad = 1;
    }
  } else if (strcmp(arg, "--shared-control") == 0) {
    o->shared_control = 1;
  } else if (strcmp(arg, "--view") == 0) {
    o->view = 1;
  } else if (strcmp(arg, "--realtime") == 0) {
    o->pace = 1;
  } else if (strcmp(arg, "--fast") == 0) {
    o->pace = 0;
  } else if (strcmp(arg, "--pose") == 0 && o->view_cmd) {
    o->pose = 1;
  } else {
    return 0;
  }
  return 1;
}

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), m = strlen(ext);
  return n > m && strcasecmp(path + n - m, ext) == 0;
}

static int check_path(const char *path, const char *opt) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_recorder_check_path(path, opt, &err) == TL_OK) return CLI_EXIT_OK;
  cli_errorf("%s", err.message);
  return CLI_EXIT_FAIL;
}

int cli_rec_check(const cli_sim_options *o) {
  if (o->record && !has_ext(o->record, ".html") && !has_ext(o->record, ".htm")) {
    cli_errorf("option --record: '%s' should end in .html (it is one self-contained web page)", o->record);
    return CLI_EXIT_USAGE;
  }
  if (o->csv && !has_ext(o->csv, ".csv") && !tl_out_is_stream(o->csv)) {
    cli_errorf("option --csv: '%s' should end in .csv", o->csv);
    return CLI_EXIT_USAGE;
  }
  if (o->plot && !has_ext(o->plot, ".png") && !has_ext(o->plot, ".svg") && !has_ext(o->plot, ".pdf")) {
    cli_errorf("option --plot: '%s' should end in .png, .svg or .pdf", o->plot);
    return CLI_EXIT_USAGE;
  }
  if ((o->record || o->view) && !tl_recorder_have_viewer()) {
    cli_errorf("%s needs the web viewer, and this talus was built without it (web/node_modules was missing "
               "when CMake ran): run scripts/setup.sh (or `npm ci` in web/), then CMake again",
               o->record ? "--record" : "the live view");
    return CLI_EXIT_FAIL;
  }
  int rc = CLI_EXIT_OK;
  if (o->record) rc = check_path(o->record, "--record");
  if (rc == CLI_EXIT_OK && o->csv) rc = check_path(o->csv, "--csv");
  if (rc == CLI_EXIT_OK && o->plot) rc = check_path(o->plot, "--plot");
  if (rc == CLI_EXIT_OK && o->plot) rc = cli_plot_check(o->plot);
  return rc;
}

static int rec_error(const char *what, const tl_error *err) {
  cli_errorf("%s: %s", what, err->message[0] ? err->message : tl_status_name(err->status));
  return CLI_EXIT_FAIL;
}

/* --plot-system NAME|INDEX: a world file's system name, a robot name or an index into the
 * world's systems; -1 after an error message. */
static int plot_system(const cli_sim *s, const char *text) {
  int n = tl_world_nsystem(s->world);
  for (int i = 0; i < s->scene.nsystem; ++i)
    if (s->scene.systems[i].name && strcmp(s->scene.systems[i].name, text) == 0) return s->scene.systems[i].index;
  for (int i = 0; i < n; ++i) {
    const char *name = tl_model_name(tl_system_model(tl_world_system(s->world, i)));
    if (name && strcmp(name, text) == 0) return i;
  }
  char *end = NULL;
  long k = strtol(text, &end, 10);
  if (end != text && *end == '\0' && k >= 0 && k < n) return (int)k;
  cli_errorf("option --plot-system: no system named '%s' (and not an index 0 .. %d)", text, n - 1);
  return -1;
}

static void sleep_s(double t) {
  if (!(t > 0)) return;
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !interrupted) {
  }
}

/* ------------------------------------------------------------ the live view's controls */

/* Forces pushing at once at most (drags and kicks). */
#define CLI_LIVE_MAX_PUSH 16
/* Status to the server at least this often while running (s of wall time). */
#define CLI_LIVE_STATUS_PERIOD 0.02

typedef struct cli_push {
  int system, body, id;
  double point_body[3]; /* m, body frame */
  double force[3];      /* N, world */
  long long left;       /* steps still to push */
} cli_push;

struct cli_live {
  int paused;
  long long budget;     /* steps still to take while paused (step messages) */
  double speed;         /* real-time factor; 0: as fast as possible */
  long long steps;      /* steps since the initial state */
  unsigned char *snap;  /* the initial state (tl_world_snapshot_save), NULL if unavailable */
  size_t snap_len;
  cli_push push[CLI_LIVE_MAX_PUSH];
  int npush;
  /* states saved from the page (snapshot messages), oldest first */
  unsigned char *saved[TL_VIEWER_MAX_SNAPSHOTS];
  size_t saved_len[TL_VIEWER_MAX_SNAPSHOTS];
  double saved_time[TL_VIEWER_MAX_SNAPSHOTS];
  long long saved_steps[TL_VIEWER_MAX_SNAPSHOTS];
  int nsaved;
  double status_wall, rtf_wall, rtf_sim, rtf;
};

static void live_rebase(cli_sim *s) {
  s->wall0 = cli_now();
  s->sim0 = tl_world_time(s->world);
}

static void live_status(cli_sim *s, double now) {
  struct cli_live *L = s->live;
  tl_viewer_status st;
  memset(&st, 0, sizeof st);
  st.time = tl_world_time(s->world);
  st.steps = L->steps;
  st.paused = L->paused && L->budget == 0;
  st.speed = L->speed;
  if (now - L->rtf_wall >= 0.5) {
    L->rtf = (st.time - L->rtf_sim) / (now - L->rtf_wall);
    L->rtf_wall = now, L->rtf_sim = st.time;
  }
  st.rtf = L->rtf;
  st.solver = s->stats.solver;
  st.nsnapshot = L->nsaved;
  memcpy(st.snapshot_time, L->saved_time, (size_t)L->nsaved * sizeof(double));
  tl_viewer_set_status(s->viewer, &st);
  L->status_wall = now;
}

/* The URDF run's controller parameters to the page. */
static void live_params(cli_sim *s) {
  tl_controller_tunable t[64];
  tl_viewer_param p[64];
  int n = tl_controller_params(&s->ctrl, t, 64);
  if (n > 64) n = 64;
  for (int i = 0; i < n; ++i) {
    memset(&p[i], 0, sizeof p[i]);
    memcpy(p[i].name, t[i].name, sizeof p[i].name);
    memcpy(p[i].unit, t[i].unit, sizeof p[i].unit);
    p[i].min = t[i].min, p[i].max = t[i].max, p[i].value = t[i].value;
  }
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_viewer_set_params(s->viewer, p, n, &err) != TL_OK) cli_errorf("warning: live view: %s", err.message);
}

static int live_setup(cli_sim *s) {
  struct cli_live *L = calloc(1, sizeof *L);
  if (!L) {
    cli_errorf("out of memory");
    return CLI_EXIT_FAIL;
  }
  s->live = L;
  L->speed = s->pace ? 1.0 : 0.0;
  L->rtf = NAN;
  L->rtf_wall = cli_now();
  L->rtf_sim = tl_world_time(s->world);
  tl_viewer_set_shared_control(s->viewer, s->opt->shared_control);
  /* the initial state, for reset (a plugin engine has no snapshots: reset is then refused) */
  size_t n = tl_world_snapshot_size(s->world);
  L->snap = n ? malloc(n) : NULL;
  if (L->snap && tl_world_snapshot_save(s->world, L->snap, n, &L->snap_len, NULL) != TL_OK) {
    free(L->snap);
    L->snap = NULL;
  }
  live_params(s);
  live_status(s, cli_now());
  return CLI_EXIT_OK;
}

static void live_warn(const char *what, const tl_error *err) {
  cli_errorf("warning: live view: %s: %s", what, err->message[0] ? err->message : tl_status_name(err->status));
}

/* Back to the initial state: the world, the controller (rebuilt from it), the recorder's schedule. */
static void live_reset(cli_sim *s, long long *k) {
  struct cli_live *L = s->live;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!L->snap) {
    cli_errorf("warning: live view: reset: this engine has no snapshots");
    return;
  }
  if (tl_world_snapshot_restore(s->world, L->snap, L->snap_len, &err) != TL_OK) return live_warn("reset", &err);
  if (s->ctrl.active && s->sys) { /* rebuilt from the initial state: its parameters too */
    tl_controller_free(&s->ctrl);
    if (tl_system_get_state(s->sys, s->q, s->nq, s->u, s->nv, &err) != TL_OK) return live_warn("reset", &err);
    if (cli_ctrl_setup(s) != CLI_EXIT_OK) return;
    live_params(s);
  }
  L->npush = 0;
  L->budget = 0;
  L->steps = 0;
  *k = 0;
  if (tl_recorder_rewind(s->rec, &err) != TL_OK) return live_warn("reset", &err);
  tl_viewer_publish(s->viewer, s->rec);
  live_rebase(s);
}

/* Save the current state (the oldest saved one goes when TL_VIEWER_MAX_SNAPSHOTS are kept). */
static void live_snapshot(cli_sim *s) {
  struct cli_live *L = s->live;
  tl_error err;
  memset(&err, 0, sizeof err);
  size_t n = tl_world_snapshot_size(s->world), len = 0;
  unsigned char *buf = n ? malloc(n) : NULL;
  if (!buf || tl_world_snapshot_save(s->world, buf, n, &len, &err) != TL_OK) {
    free(buf);
    if (!err.message[0]) snprintf(err.message, sizeof err.message, "out of memory");
    return live_warn("snapshot", &err);
  }
  if (L->nsaved == TL_VIEWER_MAX_SNAPSHOTS) {
    free(L->saved[0]);
    int m = TL_VIEWER_MAX_SNAPSHOTS - 1;
    memmove(L->saved, L->saved + 1, (size_t)m * sizeof L->saved[0]);
    memmove(L->saved_len, L->saved_len + 1, (size_t)m * sizeof L->saved_len[0]);
    memmove(L->saved_time, L->saved_time + 1, (size_t)m * sizeof L->saved_time[0]);
    memmove(L->saved_steps, L->saved_steps + 1, (size_t)m * sizeof L->saved_steps[0]);
    L->nsaved = m;
  }
  L->saved[L->nsaved] = buf;
  L->saved_len[L->nsaved] = len;
  L->saved_time[L->nsaved] = tl_world_time(s->world);
  L->saved_steps[L->nsaved++] = L->steps;
}

/* Back to saved state i: the world and the frame schedule; the controller keeps its parameters. */
static void live_restore(cli_sim *s, long long i, long long *k) {
  struct cli_live *L = s->live;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (i < 0 || i >= L->nsaved) {
    cli_errorf("warning: live view: restore: no saved state %lld", i);
    return;
  }
  if (tl_world_snapshot_restore(s->world, L->saved[i], L->saved_len[i], &err) != TL_OK) return live_warn("restore", &err);
  L->npush = 0;
  L->budget = 0;
  L->steps = L->saved_steps[i];
  *k = L->steps < s->nsteps ? L->steps : *k; /* a finite run goes on to its planned end from there */
  if (tl_recorder_rewind(s->rec, &err) != TL_OK) return live_warn("restore", &err);
  tl_viewer_publish(s->viewer, s->rec);
  live_rebase(s);
}

static void live_force(cli_sim *s, const tl_viewer_event *ev) {
  struct cli_live *L = s->live;
  tl_system *sys = tl_world_system(s->world, ev->system);
  double pos[3], R[9];
  tl_error err;
  memset(&err, 0, sizeof err);
  if (!sys || tl_system_body_pose(sys, ev->body, pos, R, &err) != TL_OK) return live_warn("force", &err);
  int slot = L->npush;
  for (int i = 0; i < L->npush && ev->id > 0; ++i)
    if (L->push[i].id == ev->id && L->push[i].system == ev->system) slot = i; /* a drag moves on */
  if (slot == CLI_LIVE_MAX_PUSH) { /* full: the oldest ends */
    memmove(L->push, L->push + 1, (CLI_LIVE_MAX_PUSH - 1) * sizeof L->push[0]);
    slot = CLI_LIVE_MAX_PUSH - 1;
  } else if (slot == L->npush) {
    L->npush++;
  }
  cli_push *p = &L->push[slot];
  p->system = ev->system, p->body = ev->body, p->id = ev->id;
  double d[3] = {ev->point[0] - pos[0], ev->point[1] - pos[1], ev->point[2] - pos[2]};
  for (int i = 0; i < 3; ++i) { /* R^T d: the point in the body frame */
    p->point_body[i] = R[i] * d[0] + R[3 + i] * d[1] + R[6 + i] * d[2];
    p->force[i] = ev->force[i];
  }
  long long n = llround(ev->duration / s->dt);
  p->left = n < 1 ? 1 : n;
}

/* A frame of the current state to the page now (the schedule of frames unchanged). */
static void live_show_now(cli_sim *s) {
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_recorder_time(s->rec) == tl_world_time(s->world)) return; /* already shown */
  if (tl_recorder_capture(s->rec, &err) != TL_OK) return live_warn("frame", &err);
  tl_viewer_publish(s->viewer, s->rec);
}

static void live_event(cli_sim *s, const tl_viewer_event *ev, long long *k) {
  struct cli_live *L = s->live;
  tl_error err;
  memset(&err, 0, sizeof err);
  switch (ev->type) {
  case TL_VIEWER_EVENT_PAUSE:
    L->paused = 1, L->budget = 0;
    live_show_now(s); /* the page shows where it stopped */
    break;
  case TL_VIEWER_EVENT_RUN: L->paused = 0, L->budget = 0, live_rebase(s); break;
  case TL_VIEWER_EVENT_STEP: L->paused = 1, L->budget += ev->n; break;
  case TL_VIEWER_EVENT_SPEED: L->speed = ev->factor, live_rebase(s); break;
  case TL_VIEWER_EVENT_RESET: live_reset(s, k); break;
  case TL_VIEWER_EVENT_SNAPSHOT: live_snapshot(s); break;
  case TL_VIEWER_EVENT_RESTORE: live_restore(s, ev->n, k); break;
  case TL_VIEWER_EVENT_FORCE: live_force(s, ev); break;
  case TL_VIEWER_EVENT_PARAM:
    if (tl_controller_set_param(&s->ctrl, ev->name, ev->value, &err) != TL_OK) live_warn("param", &err);
    break;
  }
}

int cli_rec_control(cli_sim *s, long long *k) {
  struct cli_live *L = s->live;
  for (;;) {
    tl_viewer_event ev;
    int any = 0;
    while (tl_viewer_poll(s->viewer, &ev)) live_event(s, &ev, k), any = 1;
    if (interrupted) return 1;
    if (!L->paused) return 0;
    if (L->budget > 0) {
      L->budget--;
      return 0;
    }
    double now = cli_now();
    if (any || now - L->status_wall >= CLI_LIVE_STATUS_PERIOD) live_status(s, now);
    sleep_s(0.005);
    live_rebase(s); /* paused time is not made up for */
  }
}

tl_status cli_rec_perturb(cli_sim *s, tl_error *err) {
  struct cli_live *L = s->live;
  int kept = 0;
  for (int i = 0; i < L->npush; ++i) {
    cli_push *p = &L->push[i];
    tl_status st = tl_system_add_external_force_body_point(tl_world_system(s->world, p->system), p->body, p->force,
                                                           p->point_body, err);
    if (st != TL_OK) return st;
    if (--p->left > 0) L->push[kept++] = *p;
  }
  L->npush = kept;
  return TL_OK;
}

static int start_viewer(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_viewer_create(s->rec, o->bind, o->port, &s->viewer, &err) != TL_OK) return rec_error("live view", &err);
  if (tl_viewer_set_history(s->viewer, o->history, &err) != TL_OK) return rec_error("live view", &err);
  if (o->bind && !o->pose)
    cli_errorf("warning: --bind %s: every machine that reaches this address can watch the simulation, and "
               "the first browser to send a control can pause, push and retune it", o->bind);
  if (!o->pose && live_setup(s) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  fprintf(stderr, "talus: live view at http://%s:%d/ (%s; Ctrl-C stops)\n", o->bind ? o->bind : "127.0.0.1",
          tl_viewer_port(s->viewer), o->pose ? "the initial state" : s->pace ? "real time" : "as fast as possible");
  fflush(stderr);
  return CLI_EXIT_OK;
}

/* Ctrl-C (or SIGTERM) ends the stepping loop early; the files are still written and the report
 * printed. Only while recording or serving: otherwise the signal ends talus as usual. */
static void catch_interrupt(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int cli_rec_setup(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  s->pace = o->pace < 0 ? o->view : o->pace;
  if (!o->record && !o->csv && !o->plot && !o->view) return CLI_EXIT_OK;
  tl_recorder_options ro;
  ro = tl_recorder_options_default();
  ro.fps = o->fps > 0 ? o->fps : CLI_RECORD_DEFAULT_FPS;
  ro.keep_frames = o->record || o->csv || o->plot;
  ro.main_system = s->sys_index >= 0 ? s->sys_index : -1;
  if (o->plot_system && (ro.main_system = plot_system(s, o->plot_system)) < 0) return CLI_EXIT_USAGE;
  /* a world file's name, else the robot's (the recorder's default) */
  if (o->world) ro.title = s->scene.name && s->scene.name[0] ? s->scene.name : o->urdf;
  if (ro.keep_frames && isfinite(o->duration))
    ro.reserve_frames = (long long)ceil(fmin(o->duration, 1e6) * ro.fps) + 2;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_recorder_create(s->world, &ro, &s->rec, &err) != TL_OK) return rec_error("recorder", &err);
  for (int i = 0; i < tl_recorder_nwarning(s->rec); ++i)
    if (o->verbose || strstr(tl_recorder_warning(s->rec, i), "left out"))
      cli_errorf("warning: %s", tl_recorder_warning(s->rec, i));
  catch_interrupt();
  return o->view ? start_viewer(s) : CLI_EXIT_OK;
}

tl_status cli_rec_step(cli_sim *s, tl_error *err) {
  if (s->rec) {
    int taken = 0;
    tl_status st = tl_recorder_update(s->rec, &taken, err);
    if (st != TL_OK) return st;
    if (taken && s->viewer) tl_viewer_publish(s->viewer, s->rec);
  }
  double speed = s->pace ? 1.0 : 0.0;
  if (s->live) {
    struct cli_live *L = s->live;
    L->steps++;
    speed = L->paused ? 0.0 : L->speed; /* steps asked for while paused: at once */
    double now = cli_now();
    if (L->paused && L->budget == 0) live_show_now(s); /* the last of the steps asked for: shown */
    if (now - L->status_wall >= CLI_LIVE_STATUS_PERIOD || (L->paused && L->budget == 0)) live_status(s, now);
  }
  if (speed > 0) {
    double ahead = (tl_world_time(s->world) - s->sim0) / speed - (cli_now() - s->wall0);
    if (ahead > 0.002) sleep_s(ahead);
  }
  return TL_OK;
}

void cli_rec_hold(cli_sim *s) {
  if (!s->viewer) return;
  while (!interrupted) sleep_s(0.1);
}

int cli_rec_finish(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  if (!s->rec) return CLI_EXIT_OK;
  tl_error err;
  memset(&err, 0, sizeof err);
  /* the final state too, unless the last step already took a frame of it, or the run diverged
   * beyond CLI_SIM_DIVERGE_LIMIT (the state now is past the last finite one) */
  if (!s->stats.diverged_beyond && tl_recorder_time(s->rec) < tl_world_time(s->world) &&
      tl_recorder_capture(s->rec, &err) != TL_OK)
    return rec_error("recorder", &err);
  /* the plotted system (--plot-system, default the first): its name titles the plot */
  int main = tl_recorder_main_system(s->rec);
  const tl_model *pm = main >= 0 ? tl_system_model(tl_world_system(s->world, main)) : NULL;
  char title[900];
  const char *name = pm ? tl_model_name(pm) : s->model ? tl_model_name(s->model) : o->urdf;
  snprintf(title, sizeof title, "%s", name);
  if (s->stats.diverged) { /* the files end at the last finite state: marked as such */
    char mark[1300];
    snprintf(mark, sizeof mark, "diverged at step %lld, t = %.6g s: %s", s->stats.diverged_step,
             s->stats.diverged_time, s->stats.diverged_what);
    if (tl_recorder_mark_diverged(s->rec, mark, &err) != TL_OK) return rec_error("recorder", &err);
    snprintf(title, sizeof title, "%s - DIVERGED at step %lld, t = %.6g s", name, s->stats.diverged_step,
             s->stats.diverged_time);
  }
  int rc = CLI_EXIT_OK;
  if (o->record && tl_recorder_write_html(s->rec, o->record, &err) != TL_OK) rc = rec_error("--record", &err);
  if (o->csv && tl_recorder_write_csv(s->rec, o->csv, &err) != TL_OK) rc = rec_error("--csv", &err);
  if (o->plot && cli_plot_write(s->rec, o->plot, title, pm && tl_model_base(pm) == TL_BASE_FIXED) != CLI_EXIT_OK)
    rc = CLI_EXIT_FAIL;
  if (rc == CLI_EXIT_OK && (o->record || o->csv || o->plot) && !o->json)
    fprintf(stderr, "talus: recorded %lld frame%s%s%s%s%s%s%s%s\n", tl_recorder_nframe(s->rec),
            tl_recorder_nframe(s->rec) == 1 ? "" : "s", s->stats.diverged ? " (up to the last finite state, marked diverged)" : "",
            o->record ? " -> " : "", o->record ? o->record : "", o->csv ? " -> " : "", o->csv ? o->csv : "",
            o->plot ? " -> " : "", o->plot ? o->plot : "");
  return rc;
}

void cli_rec_free(cli_sim *s) {
  if (s->live) {
    free(s->live->snap);
    for (int i = 0; i < s->live->nsaved; ++i) free(s->live->saved[i]);
  }
  free(s->live);
  s->live = NULL;
  tl_viewer_free(s->viewer);
  s->viewer = NULL;
  tl_recorder_free(s->rec);
  s->rec = NULL;
}
