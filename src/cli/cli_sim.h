/* `talus simulate`: state shared by its parts (internal to src/cli/).
 *   cli_simulate.c    argument parsing, the command
 *   cli_sim_setup.c   model, world, initial state, controller
 *   cli_sim_run.c     the stepping loop and its statistics
 *   cli_sim_report.c  text and JSON reports
 *   cli_sim_scene.c   world files (talus/scene.h): their controllers, the
 *                     per-object poses and the solver statistics of the reports
 *   cli_progress.c    progress bar on stderr
 *   cli_sim_record.c  --record, --csv, --plot, --view and `talus view` (talus/record.h)
 *   cli_plot.c        --plot: the time series drawn by matplotlib (src/cli/talus_plot.py) */
#ifndef TALUS_CLI_SIM_H
#define TALUS_CLI_SIM_H

#include "cli.h"
#include "controller.h"

/* Height of the lowest collision geom above the ground at the start (m). */
#define CLI_SIM_DROP_HEIGHT 0.01
/* Ground plane z = 0 with this friction coefficient. */
#define CLI_SIM_GROUND_MU 0.8
/* A run has diverged when a state entry is non-finite (the world's TL_ERR_DIVERGED) or, checked
 * after every step, larger in magnitude than this (MuJoCo's mjMAXVAL, as sweeps'
 * TL_SWEEP_DIVERGED): the run stops there, its files are written up to the last state within it. */
#define CLI_SIM_DIVERGE_LIMIT 1e10
/* base_height min / max are taken over the last (1 - this) of the steps. */
#define CLI_SIM_SETTLE_FRACTION 0.2
/* max_penetration_settled_m leaves out the first this many seconds of simulated time
 * (the drop and the first impact). */
#define CLI_SIM_PENETRATION_SETTLE_S 0.1

typedef struct cli_sim_options {
  const char *urdf; /* the URDF or world file argument */
  int world;        /* 1: `urdf` is a world file (root <talus_world>) */
  int dt_given, ctrl_given; /* --dt / --controller on the command line */
  double duration; /* s, >= 0 */
  double dt;       /* s, > 0 */
  tl_controller_spec ctrl;  /* --controller NAME[:key=value,...] (controllers/controller.h) */
  int kp_given, kd_given; /* --kp / --kd on the command line */
  tl_base_type base;
  double *q;       /* --q values (owned) or NULL */
  int nq_given;
  double kp, kd;
  int json;
  int verbose;
  const char *save_state; /* --save-state FILE: snapshot at the end (tl_world_snapshot_save_file), or NULL */
  const char *load_state; /* --load-state FILE: snapshot restored before the first step, or NULL */
  const char *engine; /* --engine NAME[:OPTIONS] (talus/engine.h), NULL: the native engine */
  /* recordings, plots and the live view (cli_sim_record.c) */
  const char *record;  /* --record FILE.html */
  const char *csv;     /* --csv FILE.csv */
  const char *plot;    /* --plot FILE.png|svg|pdf */
  const char *plot_system; /* --plot-system NAME|INDEX: the system the plots follow, or NULL */
  double fps;          /* --fps: frames per second of simulated time recorded */
  int view;            /* --view, or `talus view` */
  int view_cmd;        /* the command is `talus view` */
  int pose;            /* view --pose: show the initial state, no stepping */
  int port;            /* --port (0: any free port) */
  const char *bind;    /* --bind ADDRESS (default 127.0.0.1) */
  int pace;            /* -1: default (real time with a live view), 0: --fast, 1: --realtime */
  int shared_control;  /* --shared-control: every browser may control the live view */
  double history;      /* --history S: seconds of frames a new browser gets first and /recording.html holds */
  int duration_given;
  /* --base-pos X,Y,Z (m, world) and --base-rpy R,P,Y (rad, URDF convention R = Rz(Y) Ry(P) Rx(R)):
   * the initial pose of the base, floating or fixed; --clearance C (m, >= 0): the lowest collision
   * geom C above the ground (replaces the z of --base-pos) */
  double base_pos[3], base_rpy[3], clearance;
  int base_pos_given, base_rpy_given, clearance_given;
} cli_sim_options;

/* Default --port of the live view, and --fps. */
#define CLI_VIEW_DEFAULT_PORT 7070
#define CLI_RECORD_DEFAULT_FPS 60.0

/* Statistics gathered while stepping. */
typedef struct cli_sim_stats {
  long long steps;        /* completed steps (integrate1 + integrate2) */
  long long observed;     /* steps whose contacts were recorded */
  double sim_time;        /* s */
  double wall_time;       /* s, stepping loop only */
  double hmin, hmax, hfinal; /* z of body 0 (m) */
  double max_penetration; /* m */
  double max_penetration_settled; /* m, after the first CLI_SIM_PENETRATION_SETTLE_S of the run */
  double max_limit_violation; /* largest distance of a joint coordinate outside its limits (rad, m) */
  double contact_sum;     /* sum over observed steps of the number of contacts */
  int nan_detected;
  /* a divergence: the step that diverged (1-based), the simulated time at its start, what
   * (the first non-finite quantity, named), and whether the state was left beyond the limit
   * (the CLI's check; the world restores the last finite state itself) */
  int diverged, diverged_beyond;
  long long diverged_step;
  double diverged_time;
  char diverged_what[1100]; /* holds a whole tl_error message */
  /* over the last 80% of the steps (like hmin / hmax): */
  long long window_steps;
  double vsum[3];         /* sum of the world velocity of body 0's origin (m/s) */
  double max_roll_pitch;  /* largest |roll| or |pitch| of body 0 (rad, Z-Y-X angles) */
  double track_sum, track_max; /* osc: end-effector position error (m) */
  tl_solver_stats solver; /* of the last step */
  double max_signorini, max_cone; /* largest solver residuals over the run */
} cli_sim_stats;

typedef struct cli_sim {
  const cli_sim_options *opt;
  const tl_model *model;  /* model of sys; NULL for a world without a <system> */
  tl_model *loaded;       /* the URDF loaded by a URDF run (owned), else NULL */
  tl_world *world;
  /* the robot the report is about: the URDF, or a world's first <system>
   * (NULL if it has none; then nq = nv = ngeom = 0 and sys_index = -1) */
  tl_system *sys;         /* owned by world */
  int sys_index;          /* index of sys in the world (tl_contact_info.system) */
  double dt;              /* time step of the world, s */
  tl_scene_info scene;    /* world file: its objects and systems */
  tl_stand_controller *scene_ctrl; /* world file: one per scene entry (zeroed if unused) */
  int nq, nv, ngeom;
  tl_controller ctrl;     /* the URDF run's controller (controllers/controller.h) */
  long long nsteps;       /* planned steps */
  double *q, *u;          /* nq / nv scratch; final state after the run */
  /* links in contact: geom -> link id, per-link name, step count, per-step flag */
  int nlink;
  int *geom_link;
  const char **link_name;
  long long *link_steps;
  unsigned char *link_flag;
  cli_sim_stats stats;
  /* recording and live view (cli_sim_record.c) */
  tl_recorder *rec;
  tl_viewer *viewer;
  int pace;               /* 1: keep simulated time at most wall time */
  double wall0, sim0;     /* wall clock and simulated time when stepping started (or pacing last changed) */
  struct cli_live *live;  /* the live view's controls (cli_sim_record.c), NULL without --view */
} cli_sim;

/* cli_simulate.c: the options of `simulate` (argv[0] is the command name) into *o
 * (defaults first; o->q is allocated). Returns -1 to go on, else an exit code
 * (a usage error was printed, or --help). */
int cli_sim_parse(int argc, char **argv, cli_sim_options *o);

/* cli_controller.c: the controllers of `simulate` (controllers/controller.h). */
/* Parse "NAME[:key=value,...]" into o->ctrl; 0 or -1 (after printing an error). */
int cli_ctrl_parse(const char *text, cli_sim_options *o);
/* Load options the controller needs (osc and impedance: fixed base unless
 * --floating-base was given). */
tl_base_type cli_ctrl_base(const cli_sim_options *o);
/* Build the controller for s->sys in its initial state; CLI_EXIT_*. */
int cli_ctrl_setup(cli_sim *s);
/* Per-step hook between integrate1 and integrate2; no allocation. */
tl_status cli_ctrl_update(cli_sim *s, int in_window, tl_error *err);
void cli_ctrl_free(cli_sim *s);
const char *cli_ctrl_name(tl_controller_kind c);
/* One line describing the controller and its parameters (text report). */
void cli_ctrl_print(const cli_sim *s);

/* cli_sim_setup.c: build the world and the initial state (no controller yet); returns CLI_EXIT_*
 * (prints errors). */
int cli_sim_setup(cli_sim *s, const cli_sim_options *opt);
/* Then, once the state is final (after --load-state): the controllers, built from that state. */
int cli_sim_controllers(cli_sim *s);
void cli_sim_free(cli_sim *s);

/* cli_sim_scene.c: world files. */
/* Attach controllers/stand to every <system controller="stand">; CLI_EXIT_*. */
int cli_scene_ctrl_setup(cli_sim *s);
/* Per-step hook of those controllers; no allocation. */
tl_status cli_scene_ctrl_update(cli_sim *s, tl_error *err);
void cli_scene_free(cli_sim *s);
/* Name of the controller of the report's robot ("stand", ...); NULL if no robot. */
const char *cli_sim_controller_name(const cli_sim *s);
/* JSON members `objects` [{name, kind, index, position, quaternion}] and
 * `solver` {...}; 0 or -1 (no memory). */
int cli_sim_add_objects(cJSON *root, const cli_sim *s);
int cli_sim_add_solver(cJSON *root, const cli_sim *s);
/* Text report lines: objects and solver. */
void cli_sim_print_objects(const cli_sim *s);

/* cli_sim_run.c: run the loop; CLI_EXIT_OK, CLI_EXIT_DIVERGED or CLI_EXIT_FAIL. */
int cli_sim_run(cli_sim *s);

/* cli_sim_record.c */
/* Options of recordings, plots and the live view: 1 if argv[*i] was one (*bad set on a bad value). */
int cli_rec_option(int argc, char **argv, int *i, cli_sim_options *o, int *bad);
/* Before anything is loaded: the output paths can be written, --plot's Python has matplotlib.
 * CLI_EXIT_OK or an exit code (after a message). */
int cli_rec_check(const cli_sim_options *o);
/* After cli_sim_setup: the recorder and the live view when asked for; CLI_EXIT_*. */
int cli_rec_setup(cli_sim *s);
/* After each step: a frame when due, published to the live view; real-time pacing. */
tl_status cli_rec_step(cli_sim *s, tl_error *err);
/* Before each step of a live view: the browser's events (pause, run, step, speed, reset, force,
 * param); waits while paused. *k (steps of the planned run done) restarts at 0 on a reset.
 * 0: take the step; 1: stop (Ctrl-C). */
int cli_rec_control(cli_sim *s, long long *k);
/* Between the controllers and integrate2: the browser's pushes (external forces). No allocation. */
tl_status cli_rec_perturb(cli_sim *s, tl_error *err);
/* 1 once SIGINT (Ctrl-C) or SIGTERM was received while recording or serving the live view. */
int cli_rec_interrupted(void);
/* `talus view --pose`: serve the initial state until Ctrl-C. */
void cli_rec_hold(cli_sim *s);
/* After the run: write --record, --csv, --plot; CLI_EXIT_*. */
int cli_rec_finish(cli_sim *s);
void cli_rec_free(cli_sim *s);

/* cli_plot.c: draw the recorder's time series into `path` (png, svg, pdf) with matplotlib. */
int cli_plot_check(const char *path);
/* fixed_base: the plotted system has a fixed base (no base height and velocity panels). */
int cli_plot_write(const tl_recorder *rec, const char *path, const char *title, int fixed_base);
/* Write `script` (len bytes) as NAME into a temporary folder and run it with the plotting
 * interpreter and args (at most 13); args[out] (out >= 0) is the figure's path: the script draws
 * into the temporary folder and the figure is then written there by the output rules of
 * base/file.h. CLI_EXIT_OK or CLI_EXIT_FAIL after a message. */
int cli_plot_run_script(const unsigned char *script, size_t len, const char *name, char *const args[], int nargs,
                        int out);

/* cli_sim_report.c */
int cli_sim_print_json(const cli_sim *s);
int cli_sim_print_text(const cli_sim *s);

/* cli_progress.c: progress bar on stderr, only when stderr is a terminal. */
typedef struct cli_progress {
  int enabled;
  double last;   /* time of the last redraw, s (monotonic clock) */
  int drawn;
} cli_progress;
void cli_progress_begin(cli_progress *p);
void cli_progress_update(cli_progress *p, long long done, long long total, double sim_time);
void cli_progress_end(cli_progress *p);
/* Monotonic clock, s. */
double cli_now(void);

#endif
