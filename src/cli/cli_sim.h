/* `talus simulate`: state shared by its parts (internal to src/cli/).
 *   cli_simulate.c    argument parsing, the command
 *   cli_sim_setup.c   model, world, initial state, controller
 *   cli_sim_run.c     the stepping loop and its statistics
 *   cli_sim_report.c  text and JSON reports
 *   cli_progress.c    progress bar on stderr */
#ifndef TALUS_CLI_SIM_H
#define TALUS_CLI_SIM_H

#include "cli.h"
#include "stand.h"

typedef enum cli_controller { CLI_CTRL_STAND = 0, CLI_CTRL_NONE = 1 } cli_controller;

/* Height of the lowest collision geom above the ground at the start (m). */
#define CLI_SIM_DROP_HEIGHT 0.01
/* Ground plane z = 0 with this friction coefficient. */
#define CLI_SIM_GROUND_MU 0.8
/* base_height min / max are taken over the last (1 - this) of the steps. */
#define CLI_SIM_SETTLE_FRACTION 0.2

typedef struct cli_sim_options {
  const char *urdf;
  double duration; /* s, >= 0 */
  double dt;       /* s, > 0 */
  cli_controller controller;
  tl_base_type base;
  double *q;       /* --q values (owned) or NULL */
  int nq_given;
  double kp, kd;
  int json;
  int verbose;
} cli_sim_options;

/* Statistics gathered while stepping. */
typedef struct cli_sim_stats {
  long long steps;        /* completed steps (integrate1 + integrate2) */
  long long observed;     /* steps whose contacts were recorded */
  double sim_time;        /* s */
  double wall_time;       /* s, stepping loop only */
  double hmin, hmax, hfinal; /* z of body 0 (m) */
  double max_penetration; /* m */
  double contact_sum;     /* sum over observed steps of the number of contacts */
  int nan_detected;
} cli_sim_stats;

typedef struct cli_sim {
  const cli_sim_options *opt;
  tl_model *model;
  tl_world *world;
  tl_system *sys;         /* owned by world */
  int sys_index;          /* index of sys in the world (tl_contact_info.system) */
  int nq, nv, ngeom;
  int has_ctrl;
  tl_stand_controller ctrl;
  long long nsteps;       /* planned steps */
  double *q, *u;          /* nq / nv scratch; final state after the run */
  /* links in contact: geom -> link id, per-link name, step count, per-step flag */
  int nlink;
  int *geom_link;
  const char **link_name;
  long long *link_steps;
  unsigned char *link_flag;
  cli_sim_stats stats;
} cli_sim;

/* cli_sim_setup.c: build everything; returns CLI_EXIT_* (prints errors). */
int cli_sim_setup(cli_sim *s, const cli_sim_options *opt);
void cli_sim_free(cli_sim *s);

/* cli_sim_run.c: run the loop; CLI_EXIT_OK, CLI_EXIT_DIVERGED or CLI_EXIT_FAIL. */
int cli_sim_run(cli_sim *s);

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
