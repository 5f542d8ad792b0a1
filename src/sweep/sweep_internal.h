/* Internal: the parts of a sweep (include/talus/sweep.h) shared by
 *   spec.c      settings, parameters, distributions, columns, hash
 *   spec_file.c sweep files (<talus_sweep>, libxml2)
 *   prepare.c   robot loading and checks against it
 *   sample.c    drawing a sample's values, building and running its world
 *   table.c     rows: records, CSV format / parse, resume, final write
 *   run.c       the threaded run (tl_pool + two tl_queue)
 *   summary.c   summary JSON
 *   mpi.c       the MPI run (talus_sweep_mpi) */
#ifndef TALUS_SWEEP_INTERNAL_H
#define TALUS_SWEEP_INTERNAL_H

/* Terrain grid points per side at most (tl_limits_grid_points). */
#define SW_MAX_TERRAIN_POINTS 20001

#include <stdatomic.h>
#include <stdint.h>

#include "controller.h"
#include "talus/sweep.h"
#include "talus/talus.h"
#include "tasks/task_internal.h"

#define SW_NAME_LEN 160
#define SW_MESSAGE_LEN 256
#define SW_MAX_PARAMS 64
#define SW_MAX_VARS 32
#define SW_MAX_CHOICES 64
/* |q| or |u| above this is a divergence (MuJoCo's mjMAXVAL) */
#define SW_MAXVAL 1e10
/* the measuring window starts after this fraction of the duration (as talus simulate) */
#define SW_SETTLE_FRACTION 0.2
/* a push happens at a time uniform in [PUSH_LO, PUSH_HI] x duration */
#define SW_PUSH_LO 0.2
#define SW_PUSH_HI 0.8
/* the robot starts with its lowest geom this high above the ground (m, as talus simulate) */
#define SW_DROP_HEIGHT 0.01
/* internal status of a sample abandoned because the run was interrupted (never written) */
#define SW_INTERRUPTED 99

typedef enum sw_dist_kind {
  SW_DIST_CONST,
  SW_DIST_UNIFORM,
  SW_DIST_NORMAL,
  SW_DIST_LOGUNIFORM,
  SW_DIST_CHOICE,
  SW_DIST_GRID
} sw_dist_kind;

typedef struct sw_dist {
  sw_dist_kind kind;
  double a, b;                    /* const: a; uniform / loguniform / grid: [a, b]; normal: mean a, std b */
  int n;                          /* grid: points; choice: number of choices */
  double choice[SW_MAX_CHOICES];
  char text[128];                 /* as given */
} sw_dist;

typedef enum sw_param_kind {
  SW_P_MASS_SCALE,
  SW_P_BASE_MASS_ADD,
  SW_P_COM_OFFSET,
  SW_P_INERTIA_SCALE,
  SW_P_FRICTION,
  SW_P_RESTITUTION,
  SW_P_MOTOR_STRENGTH,
  SW_P_KP_SCALE,
  SW_P_KD_SCALE,
  SW_P_JOINT_DAMPING,
  SW_P_ROTOR_INERTIA_SCALE,
  SW_P_PUSH,
  SW_P_TERRAIN,
  SW_P_NKIND
} sw_param_kind;

/* Valid values of a parameter kind: lo < x (open) or lo <= x, x <= hi. */
typedef struct sw_param_info {
  const char *name;
  const char *unit;
  double lo, hi;
  int lo_open;
  int target;         /* 0: no @ form, 1: @LINK, 2: @JOINT */
} sw_param_info;
extern const sw_param_info sw_param_infos[SW_P_NKIND];

typedef struct sw_param {
  char name[SW_NAME_LEN]; /* as given, e.g. "mass_scale@LF_SHANK" */
  sw_param_kind kind;
  int axis;               /* com_offset: -1 all three, else 0..2 */
  char target[128];       /* after '@' ("" for the whole robot) */
  sw_dist dist;
  int ncol, col;          /* its columns among the parameter columns */
  int slot;               /* its block range of the sample's stream (position in the list) */
  int grid_stride;        /* grid: the mixed-radix stride of its index */
  /* resolved by tl_sweep_prepare */
  int link;               /* @LINK: index into sw->links, else -1 */
  int dof_lo, dof_hi;     /* @JOINT: its DOFs [lo, hi), else every DOF except a floating base's */
} sw_param;

struct tl_sweep {
  /* settings */
  char *robot;
  tl_controller_spec ctrl;
  int ctrl_given;
  double duration, dt;
  int dt_given;
  long samples;
  int samples_given;
  uint64_t seed;
  int nparam;
  sw_param param[SW_MAX_PARAMS];
  double fall_height, fall_tilt; /* fall_height NAN: half the initial height */
  tl_base_type base;
  double *q;
  int nq_given;
  int nvar;
  char *var_name[SW_MAX_VARS];
  double var_value[SW_MAX_VARS];
  double ground_friction, terrain_size, terrain_spacing;
  int worst;
  char *text[8];          /* out, summary, plot, threads, robot as given, ... (tl_sweep_get) */
  /* prepared */
  int prepared;
  int world_file;         /* robot is a <talus_world> */
  tl_model *model;        /* URDF runs: the loaded model (copied into every sample's world) */
  tl_rand_links links;    /* links with their nominal inertials (from the probe world) */
  int nv, nq, floating;
  double *effort, *lower, *upper, *rotor; /* nominal per-DOF values [nv] */
  int contact_material;   /* friction or restitution randomized: the robot gets one material */
  int inertial;           /* a mass / inertia / COM parameter is present */
  long grid_size;         /* product of the grid sizes (1 without grids) */
  int all_grid;
  int ncolumn, nparam_column;
  char (*column)[SW_NAME_LEN];
  uint64_t hash;
  uint64_t files_hash;         /* FNV-1a of every file the nominal build read, in order (prepare.c) */
};

/* spec.c */
/* tl_error_set without the "<element>: " prefix (the sweep's messages name
 * the setting or parameter themselves); "FILE:LINE: " when file is given. */
tl_status sw_error(tl_error *err, tl_status status, const char *file, int line, const char *element,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
const char *sw_text(const tl_sweep *sw, const char *key);
/* Columns and grid strides from the parameter list (after every set). */
tl_status sw_layout(tl_sweep *sw, tl_error *err);
/* Hash of the settings that decide the samples (robot file bytes included). */
tl_status sw_compute_hash(tl_sweep *sw, tl_error *err);

/* sample.c */
/* Draw sample `sample`'s parameter values (nparam_column doubles). */
void sw_draw(const tl_sweep *sw, long sample, double *values);
/* Check drawn values against the valid ranges (values of a normal can fall
 * outside): 0, or -1 with a message. */
int sw_check_values(const tl_sweep *sw, const double *values, char *msg, int cap);
/* Build the world of a sample with values (NULL: nominal), its controller;
 * used by tl_sweep_prepare (probe) and every sample. */
typedef struct sw_world {
  tl_world *world;
  tl_system *sys;            /* the robot */
  tl_scene_info scene;       /* world files */
  tl_stand_controller *scene_stand; /* world files: the other systems' stand controllers */
  tl_controller ctrl;
  double *heights;           /* terrain */
} sw_world;
tl_status sw_build(const tl_sweep *sw, const double *values, long sample, sw_world *w, tl_error *err);
void sw_world_free(sw_world *w);

/* FNV-1a, 64 bits, of n bytes continuing from h (spec.c). */
uint64_t sw_fnv(uint64_t h, const void *data, size_t n);

/* table.c: rows */
typedef struct sw_record {
  long sample;
  int status;               /* tl_sweep_status or SW_INTERRUPTED */
  double outcome[TL_SWEEP_NOUTCOME];
  char message[SW_MESSAGE_LEN];
  double params[];          /* nparam_column */
} sw_record;
sw_record *sw_record_new(const tl_sweep *sw, long sample);
/* sample.c: run rec->sample into rec; stop (may be NULL) set: abandon (status SW_INTERRUPTED). */
void sw_run_record(const tl_sweep *sw, sw_record *rec, atomic_int *stop);

struct tl_sweep_results {
  const tl_sweep *sw;
  long n;                   /* samples */
  sw_record **row;          /* [n], NULL: missing */
  long count, resumed, ran, failed;
  tl_sweep_result *view;    /* [count] built by sw_results_finish */
  long nview;
  /* the CSV */
  char *csv;                /* path or NULL */
  int fd;                   /* append descriptor while running, -1 */
  int stream;               /* csv is a device or FIFO: written once, at the end */
};
tl_status sw_results_open(const tl_sweep *sw, const char *csv, int resume, tl_sweep_results **out, tl_error *err);
/* Store a finished row (takes ownership) and append it to the CSV. */
tl_status sw_results_add(tl_sweep_results *r, sw_record *rec, tl_error *err);
/* Rewrite the CSV in sample order (new file renamed over the old); build the row views. */
tl_status sw_results_finish(tl_sweep_results *r, tl_error *err);
/* Format a record as one CSV line (with '\n') into buf; its length, or -1 if cap is too small. */
int sw_format_row(const tl_sweep *sw, const sw_record *rec, char *buf, int cap);
/* Parse one CSV line (without '\n') into rec (nparam_column params); 0 or -1 with msg. */
int sw_parse_row(const tl_sweep *sw, const char *line, sw_record *rec, char *msg, int cap);
/* Bytes a row can take. */
int sw_row_cap(const tl_sweep *sw);

/* run.c: the threaded run, shared with mpi.c. Thread 0 of a tl_pool (the
 * caller) coordinates: it hands records to the workers through `todo`,
 * collects them from `done`, stores them (rank 0) or sends them on (other
 * ranks), polls for interruption and reports progress; threads 1 .. nworker
 * run samples. */
typedef struct sw_run sw_run;
struct sw_run {
  const tl_sweep *sw;
  const tl_sweep_run_options *opt;
  int nworker, workers_total;  /* this process's sample threads; all ranks' */
  struct tl_pool *pool;
  struct tl_queue *todo, *done;
  atomic_int stop;             /* set: running samples abandon */
  int limit, in_flight;        /* records handed out and not collected, at most limit */
  int stopping;                /* no new work is handed out */
  tl_sweep_results *res;       /* rank 0 / one process: the rows */
  long *pending;               /* samples without a row, increasing */
  long npending, next;
  double t0, last_progress, last_poll;
  tl_status status;            /* first fatal error (writing the CSV) */
  tl_error *err;
  void (*coordinate)(sw_run *R);
  void *ext;                   /* mpi.c's state */
};
double sw_now(void);
/* Pool and queues for nworker sample threads; R->coordinate runs on thread 0. */
tl_status sw_run_init(sw_run *R, const tl_sweep *sw, const tl_sweep_run_options *opt, int nworker, tl_error *err);
void sw_run_free(sw_run *R);
/* Run the pool until the coordinator returns and the workers have left. */
void sw_run_execute(sw_run *R);
/* Hand sample `sample` to a worker (never blocks while in_flight < limit). */
void sw_run_dispatch(sw_run *R, long sample);
/* A finished record, waiting at most timeout_s; NULL if none. */
sw_record *sw_run_collect(sw_run *R, double timeout_s);
/* Rank 0: keep a finished record (interrupted ones are dropped) and append its row. */
void sw_run_store(sw_run *R, sw_record *rec);
/* Poll the interrupt callback (stopping everything when it fires) and report progress. */
void sw_run_poll(sw_run *R, int final);
/* Stop handing out work and abandon the running samples. */
void sw_run_stop(sw_run *R);
/* Rank 0: open the results (resume) and list the pending samples. */
tl_status sw_run_open_results(sw_run *R, tl_error *err);
/* Rank 0: rewrite the CSV in order, hand the results out (or free them). */
tl_status sw_run_close_results(sw_run *R, tl_sweep_results **out, tl_error *err);

#endif
