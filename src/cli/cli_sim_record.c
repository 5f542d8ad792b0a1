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
  if (tl_record_check_path(path, opt, &err) == TL_OK) return CLI_EXIT_OK;
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
  if ((o->record || o->view) && !tl_record_have_viewer()) {
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

static int start_viewer(cli_sim *s) {
  const cli_sim_options *o = s->opt;
  tl_error err;
  memset(&err, 0, sizeof err);
  if (tl_viewer_create(s->rec, o->bind, o->port, &s->viewer, &err) != TL_OK) return rec_error("live view", &err);
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
  tl_record_options ro;
  tl_record_options_default(&ro);
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

static void sleep_s(double t) {
  if (!(t > 0)) return;
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !interrupted) {
  }
}

tl_status cli_rec_step(cli_sim *s, tl_error *err) {
  if (s->rec) {
    int taken = 0;
    tl_status st = tl_recorder_update(s->rec, &taken, err);
    if (st != TL_OK) return st;
    if (taken && s->viewer) tl_viewer_publish(s->viewer, s->rec);
  }
  if (s->pace) {
    double ahead = (tl_world_time(s->world) - s->sim0) - (cli_now() - s->wall0);
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
  tl_viewer_free(s->viewer);
  s->viewer = NULL;
  tl_recorder_free(s->rec);
  s->rec = NULL;
}
