/* `talus simulate [URDF | WORLD.xml] [options]`: argument parsing and the command. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_sim.h"

/* The default robot, in Talus's data folder (cli_data_file). */
#define SIM_DEFAULT_URDF "robots/talus_quadruped/talus_quadruped.urdf"
#define SIM_DEFAULT_DURATION 5.0
#define SIM_DEFAULT_DT 0.001

static void sim_defaults(cli_sim_options *o) {
  memset(o, 0, sizeof(*o));
  o->urdf = NULL;
  o->duration = SIM_DEFAULT_DURATION;
  o->dt = SIM_DEFAULT_DT;
  o->ctrl = tl_controller_spec_default();
  o->base = TL_BASE_AUTO;
  o->kp = TL_STAND_DEFAULT_KP;
  o->kd = TL_STAND_DEFAULT_KD;
  o->port = CLI_VIEW_DEFAULT_PORT;
  o->history = TL_VIEWER_DEFAULT_HISTORY;
  o->pace = -1;
}

static int parse_gain(const char *opt, const char *text, double *out) {
  if (cli_parse_double(opt, text, out) != 0) return -1;
  if (*out < 0.0) {
    cli_errorf("option %s: must be >= 0 (got %s)", opt, text);
    return -1;
  }
  return 0;
}

/* Exactly three finite numbers "X,Y,Z" into out[3]; 0 or -1 (after a message naming the option). */
static int parse_vec3(const char *opt, const char *text, double out[3]) {
  double *v = NULL;
  int n = 0;
  if (cli_parse_double_list(opt, text, &v, &n) != 0) return -1;
  if (n != 3) {
    cli_errorf("option %s: expected 3 numbers X,Y,Z separated by commas, got %d ('%s')", opt, n, text);
    free(v);
    return -1;
  }
  memcpy(out, v, 3 * sizeof(double));
  free(v);
  return 0;
}

/* --base-pos, --base-rpy, --clearance. Returns 1 if argv[*i] was one (*bad set on a bad value). */
static int parse_pose(int argc, char **argv, int *i, cli_sim_options *o, int *bad) {
  const char *v = NULL;
  int r;
  if ((r = cli_option_value(argc, argv, i, "--base-pos", &v)) != 0) {
    *bad = r < 0 || parse_vec3("--base-pos", v, o->base_pos) != 0;
    o->base_pos_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--base-rpy", &v)) != 0) {
    *bad = r < 0 || parse_vec3("--base-rpy", v, o->base_rpy) != 0;
    o->base_rpy_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--clearance", &v)) != 0) {
    *bad = r < 0 || cli_parse_double("--clearance", v, &o->clearance) != 0;
    if (!*bad && !(o->clearance >= 0)) {
      cli_errorf("option --clearance: must be >= 0 m (got %s)", v);
      *bad = 1;
    }
    o->clearance_given = 1;
  } else {
    return 0;
  }
  return 1;
}

/* Options that take a value. Returns 1 if argv[*i] was one (0 ok / -1 bad in *bad). */
static int parse_valued(int argc, char **argv, int *i, cli_sim_options *o, int *bad) {
  const char *v = NULL;
  int r;
  if ((r = cli_option_value(argc, argv, i, "--duration", &v)) != 0) {
    *bad = r < 0 || cli_parse_double("--duration", v, &o->duration) != 0;
    o->duration_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--dt", &v)) != 0) {
    *bad = r < 0 || cli_parse_double("--dt", v, &o->dt) != 0;
    o->dt_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--controller", &v)) != 0) {
    *bad = r < 0 || cli_ctrl_parse(v, o) != 0;
    o->ctrl_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--kp", &v)) != 0) {
    *bad = r < 0 || parse_gain("--kp", v, &o->kp) != 0;
    o->kp_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--kd", &v)) != 0) {
    *bad = r < 0 || parse_gain("--kd", v, &o->kd) != 0;
    o->kd_given = 1;
  } else if ((r = cli_option_value(argc, argv, i, "--save-state", &v)) != 0) {
    *bad = r < 0;
    o->save_state = v;
  } else if ((r = cli_option_value(argc, argv, i, "--load-state", &v)) != 0) {
    *bad = r < 0;
    o->load_state = v;
  } else if ((r = cli_option_value(argc, argv, i, "--engine", &v)) != 0) {
    *bad = r < 0;
    o->engine = v;
  } else if ((r = cli_option_value(argc, argv, i, "--q", &v)) != 0) {
    free(o->q);
    o->q = NULL;
    *bad = r < 0 || cli_parse_double_list("--q", v, &o->q, &o->nq_given) != 0;
  } else if (!parse_pose(argc, argv, i, o, bad) && !cli_rec_option(argc, argv, i, o, bad)) {
    return 0;
  }
  return 1;
}

/* Flags without a value. Returns 1 if argv[i] was one. */
static int parse_flag(const char *arg, cli_sim_options *o) {
  if (strcmp(arg, "--json") == 0) {
    o->json = 1;
  } else if (!cli_model_flag(arg, &o->base, &o->verbose)) {
    return 0;
  }
  return 1;
}

static int check_ranges(const cli_sim_options *o) {
  tl_error err; /* the library's one rule per quantity (talus/limits.h) */
  memset(&err, 0, sizeof err);
  long long steps = 0;
  if (tl_limits_check_timestep(o->dt, &err) != TL_OK) {
    cli_errorf("option --dt: %s", err.message);
    return -1;
  }
  if (isinf(o->duration) && o->duration > 0 && o->view_cmd) return 0; /* `talus view`: until Ctrl-C */
  if (tl_limits_steps_for_duration(o->duration, o->dt, &steps, &err) != TL_OK) {
    cli_errorf("option --duration: %s", err.message);
    return -1;
  }
  return 0;
}

/* A world file (root <talus_world>) sets the robots, their base, initial
 * state and controllers itself: the options for a single URDF do not apply. */
static int check_world(cli_sim_options *o) {
  o->world = tl_scene_is_world_file(o->urdf) == 1;
  if (!o->world) return -1;
  const char *opt = o->ctrl_given ? "--controller" : o->kp_given ? "--kp" : o->kd_given ? "--kd"
                    : o->q ? "--q" : o->base == TL_BASE_FIXED ? "--fixed-base"
                    : o->base_pos_given ? "--base-pos" : o->base_rpy_given ? "--base-rpy"
                    : o->clearance_given ? "--clearance"
                    : o->base == TL_BASE_FLOATING ? "--floating-base" : NULL;
  if (!opt) return -1;
  cli_errorf("simulate: option %s does not apply to a world file ('%s'): its <system> elements "
             "give the base, its pose (pos, rpy / quat, clearance), initial state and controller", opt, o->urdf);
  return CLI_EXIT_USAGE;
}

/* Parse the arguments of `simulate`; returns -1 to continue, else an exit code. */
static int parse_sim_args(int argc, char **argv, cli_sim_options *o) {
  const char *command = o->view_cmd ? "view" : "simulate";
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    int bad = 0;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(o->view_cmd ? cli_usage_view : cli_usage_simulate, stdout);
      return CLI_EXIT_OK;
    }
    if (parse_valued(argc, argv, &i, o, &bad)) {
      if (bad) return CLI_EXIT_USAGE;
    } else if (parse_flag(arg, o)) {
      continue;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return cli_unknown_option(command, arg);
    } else if (o->urdf) {
      cli_errorf("%s: more than one URDF given ('%s' and '%s')", command, o->urdf, arg);
      return CLI_EXIT_USAGE;
    } else {
      o->urdf = arg;
    }
  }
  if (!o->urdf) {
    static char default_urdf[4096];
    if (cli_data_file(SIM_DEFAULT_URDF, default_urdf, sizeof default_urdf) != 0) return CLI_EXIT_FAIL;
    o->urdf = default_urdf;
  }
  if (o->view_cmd) {
    o->view = 1;
    if (o->pose && o->duration_given) {
      cli_errorf("view: --pose shows the initial state: --duration does not apply");
      return CLI_EXIT_USAGE;
    }
    if (o->pose) o->duration = 0;
    else if (!o->duration_given) o->duration = INFINITY;
  }
  if (check_ranges(o) != 0) return CLI_EXIT_USAGE;
  return check_world(o);
}

/* --save-state: the file must be writable before the simulation starts (its
 * folder takes a new file, or it is a writable device or FIFO). */
static int check_save_path(const char *path) {
  if (!path) return 0;
  tl_error err; /* the output rules of every file Talus writes (base/file.h): nothing created here */
  memset(&err, 0, sizeof err);
  if (tl_recorder_check_path(path, "--save-state", &err) == TL_OK) return 0;
  cli_errorf("%s", err.message);
  return -1;
}

/* --load-state before the run, --save-state after it. */
static int sim_state_file(cli_sim *s, int save) {
  const char *path = save ? s->opt->save_state : s->opt->load_state;
  if (!path) return CLI_EXIT_OK;
  tl_error err;
  memset(&err, 0, sizeof(err));
  tl_status st = save ? tl_world_snapshot_save_file(s->world, path, &err) : tl_world_snapshot_restore_file(s->world, path, &err);
  if (st == TL_OK) return CLI_EXIT_OK;
  cli_errorf("%s: %s", save ? "--save-state" : "--load-state", err.message);
  return CLI_EXIT_FAIL;
}

int cli_sim_parse(int argc, char **argv, cli_sim_options *o) {
  sim_defaults(o);
  return parse_sim_args(argc, argv, o);
}

static int sim_report(const cli_sim *s, int run_rc) {
  if (s->opt->pose && !s->opt->json) return run_rc; /* `talus view --pose`: nothing was simulated */
  int rc = s->opt->json ? cli_sim_print_json(s) : cli_sim_print_text(s);
  if (rc != CLI_EXIT_OK) return rc;
  return run_rc;
}

/* Run the simulation, then write the recording files (also after a divergence: that is when
 * one wants to see it) and the report. */
static int sim_main(cli_sim *s) {
  int rc = cli_rec_setup(s);
  if (rc != CLI_EXIT_OK) return rc;
  rc = cli_sim_run(s);
  if (rc == CLI_EXIT_OK) rc = sim_state_file(s, 1); /* --save-state */
  if (rc != CLI_EXIT_OK && rc != CLI_EXIT_DIVERGED) return rc;
  int rec_rc = cli_rec_finish(s);
  if (s->opt->pose) cli_rec_hold(s); /* `talus view --pose`: serve the state until Ctrl-C */
  rc = sim_report(s, rc);
  return rc == CLI_EXIT_OK ? rec_rc : rc;
}

static int sim_command(int argc, char **argv, int view) {
  cli_sim_options o;
  sim_defaults(&o);
  o.view_cmd = view;
  int rc = parse_sim_args(argc, argv, &o); /* -1: go on, else the exit code (0 after --help) */
  if (rc < 0) rc = cli_rec_check(&o);       /* output paths first: a bad one never costs a run */
  else if (rc == CLI_EXIT_OK) rc = -1;
  if (rc != CLI_EXIT_OK) {
    free(o.q);
    return rc < 0 ? CLI_EXIT_OK : rc;
  }
  if (check_save_path(o.save_state) != 0) {
    free(o.q);
    return CLI_EXIT_FAIL;
  }
  cli_sim s;
  rc = cli_sim_setup(&s, &o);
  if (rc == CLI_EXIT_OK) rc = sim_state_file(&s, 0); /* --load-state: before frame 0 is taken */
  if (rc == CLI_EXIT_OK) rc = cli_sim_controllers(&s); /* from the final initial state */
  if (rc == CLI_EXIT_OK) rc = sim_main(&s);
  cli_rec_free(&s);
  cli_sim_free(&s);
  free(o.q);
  return rc;
}

int cli_simulate(int argc, char **argv) { return sim_command(argc, argv, 0); }

int cli_view(int argc, char **argv) { return sim_command(argc, argv, 1); }
