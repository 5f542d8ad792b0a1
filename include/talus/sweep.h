/* Talus dynamics-randomization sweeps: thousands of randomized runs of one
 * robot and controller, on the threads of one machine or on the ranks of
 * an MPI job, reproducible and resumable (docs/sweeps.md).
 *
 * A sweep is a robot (URDF or world file), a controller
 * (controllers/controller.h), a duration and a list of randomized
 * parameters, each with a distribution. Sample i draws its values from its
 * own counter-based random stream, Philox4x64-10 keyed by (seed, i)
 * (talus/rng.h), each parameter from its own block range of that stream
 * (counter word 2 = the parameter's position + 1), builds a fresh world,
 * randomizes it, runs the controller and measures the outcome
 * (talus/metrics.h). Nothing else enters a sample: its parameters and
 * outcome are the same whatever the number of threads or processes, or the
 * order in which samples run.
 *
 * Life cycle: tl_sweep_create (its tl_sweep_options); settings (tl_sweep_set, or a sweep file with
 * tl_sweep_load_file); tl_sweep_prepare loads the robot, checks every
 * parameter against it (names, links, joints, valid ranges of every
 * distribution) and builds one nominal sample's world and controller, so a
 * bad sweep is refused before any sample runs; then tl_sweep_run (threads)
 * or tl_sweep_run_mpi (OpenMPI, in the talus_sweep_mpi library). Outputs:
 * one CSV row per sample in sample order, a summary JSON.
 *
 * Settings (keys of tl_sweep_set; the command line's --KEY options and the
 * sweep file's attributes):
 *   robot        URDF or world file (<talus_world>, talus/scene.h)
 *   controller   NAME[:KEY=VALUE,...] (default "stand"; controllers/controller.h);
 *                with a world file its first <system> gets it instead of the file's
 *   duration     s per sample (> 0, default 5)
 *   dt           time step, s (> 0; default 1e-3, a world file's own when not set)
 *   samples      number of samples (>= 1; default 100, or the grid's size
 *                when every parameter is a grid)
 *   seed         unsigned 64-bit integer (default 0)
 *   param        NAME=DIST, repeatable (a NAME given again replaces the first)
 *   fall_height  base z (m, world) below which the robot has fallen
 *                (default: half its initial height)
 *   fall_tilt    |roll| or |pitch| (rad) above which it has fallen (default 1)
 *   base         auto | floating | fixed (URDF)
 *   q            the initial joint coordinates (or all nq), comma-separated (URDF)
 *   var          NAME=VALUE, a URDF template variable (repeatable)
 *   kp, kd       the controller's main gains (as talus simulate --kp / --kd)
 *   ground_friction  the ground's friction coefficient (URDF; default 0.8)
 *   terrain_size, terrain_spacing  terrain_roughness's square heightmap:
 *                side (m, default 20) and grid spacing (m, default 0.1)
 *   worst        samples listed as the worst in the summary (default 10)
 *   out, summary, plot, threads  outputs and threads (not part of the sweep's
 *                identity; read back with tl_sweep_get)
 * Parameters (names, units, valid values and the meaning of @TARGET are in
 * docs/sweeps.md): mass_scale, base_mass_add, com_offset (x, y, z; or
 * com_offset_x / _y / _z), inertia_scale, friction, restitution,
 * motor_strength, kp_scale, kd_scale, joint_damping, rotor_inertia_scale,
 * push, terrain_roughness; mass_scale@LINK, inertia_scale@LINK,
 * com_offset@LINK, motor_strength@JOINT, joint_damping@JOINT,
 * rotor_inertia_scale@JOINT. Distributions: a number (constant),
 * uniform:LO:HI, normal:MEAN:STD, loguniform:LO:HI, choice:A,B,C,
 * grid:LO:HI:N (every parameter a grid: the full factorial).
 *
 * Errors name the setting or parameter (tl_error.element) and, for a sweep
 * file, its path and line. */
#ifndef TALUS_SWEEP_H
#define TALUS_SWEEP_H

#include <stdint.h>

#include "talus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_sweep tl_sweep;

/* The settings above as a struct (tl_sweep_options_default: the defaults).
 * A field left at its default is not set at all, so a sweep made from the
 * struct is the sweep made from the same settings as text (same hash). */
typedef struct tl_sweep_options {
  const char *robot;      /* URDF or world file (default NULL: set it later with tl_sweep_set) */
  const char *controller; /* NAME[:KEY=VALUE,...] (default NULL: "stand", or a world file's own) */
  double duration;        /* s per sample, > 0 (default 5) */
  double dt;              /* time step, s, > 0 (default NAN: 1e-3, or a world file's own) */
  long samples;           /* >= 1 (default 0: 100, or the grid's size when every parameter is a grid) */
  uint64_t seed;          /* (default 0) */
  const char *const *params; /* nparam "NAME=DIST" texts, as the param setting (default NULL) */
  int nparam;             /* >= 0 (default 0) */
  double fall_height;     /* m, world z (default NAN: half the initial height) */
  double fall_tilt;       /* rad, > 0 (default 1) */
  tl_base_type base;      /* URDF base (default TL_BASE_AUTO) */
  double kp, kd;          /* the controller's main gains (default NAN: the controller's own) */
  double ground_friction; /* > 0 (default 0.8) */
  double terrain_size;    /* m, > 0 (default 20) */
  double terrain_spacing; /* m, > 0 (default 0.1) */
  int worst;              /* samples listed as the worst in the summary, >= 0 (default 10) */
} tl_sweep_options;

tl_sweep_options tl_sweep_options_default(void);

/* A sweep with the settings of opt (NULL: the defaults above; the settings
 * q and var, and the outputs, are set with tl_sweep_set). Each field not at
 * its default is set as tl_sweep_set would set its text (numbers written
 * with 17 significant digits, read back exactly): TL_ERR_ARGUMENT naming the
 * key for a bad value, TL_ERR_MEMORY. Nothing is left on failure. */
tl_status tl_sweep_create(const tl_sweep_options *opt, tl_sweep **out, tl_error *err);
void tl_sweep_free(tl_sweep *sw);

/* Set one setting (key as above, value as text). Values are checked here
 * as far as they can be without the robot (numbers, ranges, distribution
 * syntax and the valid range of each parameter); names of links and joints
 * in tl_sweep_prepare. TL_ERR_ARGUMENT naming the key; TL_ERR_INVALID once
 * prepared (a prepared sweep is frozen). */
tl_status tl_sweep_set(tl_sweep *sw, const char *key, const char *value, tl_error *err);
/* The text of a setting as set (NULL if it was not): "robot", "out",
 * "summary", "plot", "threads", ... */
const char *tl_sweep_get(const tl_sweep *sw, const char *key);

/* 1 if the file's root element is <talus_sweep>, 0 if not, -1 if unreadable. */
int tl_sweep_is_file(const char *path);
/* Read a sweep file (docs/sweeps.md): its settings are set as by
 * tl_sweep_set, paths relative to the file's folder. Errors name the file,
 * the line and the element or attribute. */
tl_status tl_sweep_load_file(tl_sweep *sw, const char *path, tl_error *err);

/* Load the robot and check everything against it; builds and frees one
 * nominal world with its controller. Idempotent. */
tl_status tl_sweep_prepare(tl_sweep *sw, tl_error *err);

/* After tl_sweep_prepare: */
long tl_sweep_nsample(const tl_sweep *sw);
uint64_t tl_sweep_seed(const tl_sweep *sw);
/* FNV-1a hash of everything that decides the samples (robot file bytes,
 * controller, duration, dt, seed, parameters, fall criteria, ...; not the
 * number of samples, the outputs or the threads). Written in every CSV row;
 * --resume refuses rows of another sweep. */
uint64_t tl_sweep_hash(const tl_sweep *sw);
/* The CSV columns: sample, seed, spec, the parameter columns, status, the
 * outcome columns, message. */
int tl_sweep_ncolumn(const tl_sweep *sw);
const char *tl_sweep_column(const tl_sweep *sw, int i);
/* The parameter columns (a parameter may fill several: com_offset gives
 * _x, _y, _z; push gives push, push_time, push_angle). */
int tl_sweep_nparam_column(const tl_sweep *sw);
const char *tl_sweep_param_column(const tl_sweep *sw, int i);
/* The values of sample `sample` (0 <= sample < nsample): n =
 * tl_sweep_nparam_column doubles. TL_ERR_ARGUMENT for a bad index or n. */
tl_status tl_sweep_sample_values(const tl_sweep *sw, long sample, double *values, int n, tl_error *err);

/* ---- outcomes ---- */

typedef enum tl_sweep_status {
  TL_SWEEP_OK = 0,       /* ran the whole duration without falling */
  TL_SWEEP_FELL = 1,     /* the base went below fall_height or tilted past fall_tilt */
  TL_SWEEP_DIVERGED = 2, /* TL_ERR_DIVERGED, or |q| or |u| above 1e10 (MuJoCo's mjMAXVAL) */
  TL_SWEEP_ERROR = 3     /* anything else (a parameter value out of range, a refused
                            setter, a controller error): see the message */
} tl_sweep_status;
const char *tl_sweep_status_name(tl_sweep_status s); /* "ok", "fell", "diverged", "error" */

/* Outcome columns (docs/sweeps.md has the exact definitions): */
enum {
  TL_SWEEP_TIME_TO_FALL,       /* s; NAN unless fell */
  TL_SWEEP_MEAN_SPEED,         /* m/s, forward speed of the base, mean over the window */
  TL_SWEEP_DISTANCE,           /* m, horizontal distance of the base from start to end */
  TL_SWEEP_TRACKING_ERROR,     /* osc: m; impedance: rad; mean over the window; else NAN */
  TL_SWEEP_CONTACT_FORCE_MEAN, /* N, total normal force on the robot, mean over the window */
  TL_SWEEP_CONTACT_FORCE_MAX,  /* N, its largest value over the window */
  TL_SWEEP_COST_OF_TRANSPORT,  /* actuator energy / (m g d) over the window; NAN if d < 1 cm */
  TL_SWEEP_MAX_PENETRATION,    /* m, deepest contact over the run */
  TL_SWEEP_FOOT_SLIP,          /* m/s, mean horizontal speed of loaded contact points, window */
  TL_SWEEP_MAX_ROLL_PITCH,     /* rad, largest |roll| or |pitch| of the base over the run */
  TL_SWEEP_NOUTCOME
};
const char *tl_sweep_outcome_name(int i);

/* One sample's row. */
typedef struct tl_sweep_result {
  long sample;
  tl_sweep_status status;
  const double *params;                /* tl_sweep_nparam_column values */
  double outcome[TL_SWEEP_NOUTCOME];
  const char *message;                 /* "" unless error / diverged */
} tl_sweep_result;

/* Run one sample in the calling thread (thread-safe: samples share nothing
 * but the prepared, read-only sweep). params: nparam_column doubles filled
 * with the values; the result's message lives in `message` (cap bytes).
 * Failures of the sample are its status, not an error: the return is
 * TL_ERR_ARGUMENT only for bad arguments. */
tl_status tl_sweep_run_sample(const tl_sweep *sw, long sample, double *params, int nparam, char *message,
                              int cap, tl_sweep_result *out, tl_error *err);

/* ---- a whole sweep ---- */

typedef struct tl_sweep_results tl_sweep_results;

/* Progress of a run (tl_sweep_run_options.progress). */
typedef struct tl_sweep_progress {
  long done;        /* samples with a row (resumed ones included) */
  long total;       /* samples of the sweep */
  long resumed;     /* rows read back by resume */
  long failed;      /* rows whose status is not ok */
  double elapsed;   /* s since the run started */
  double rate;      /* samples run per second (resumed ones not counted) */
  double eta;       /* s left at that rate (NAN before the first sample) */
  int workers;      /* threads (all ranks) running samples */
} tl_sweep_progress;

typedef struct tl_sweep_run_options {
  int nthread;         /* threads running samples (per MPI rank), >= 0; 0 (default): the CPUs
                          this process may use */
  const char *csv;     /* the CSV (default NULL: the "out" setting; none if neither) */
  int resume;          /* 1: keep the CSV's rows of this sweep, run only the missing samples
                          (default 0: run every sample, the CSV written afresh) */
  /* called by the calling thread about 4 times a second and once at the end
     (default NULL: none) */
  void (*progress)(void *ctx, const tl_sweep_progress *p);
  /* polled by the calling thread about 10 times a second: nonzero stops the
     run (running samples are abandoned, finished ones kept; default NULL: never) */
  int (*interrupted)(void *ctx);
  void *ctx;           /* passed to progress and interrupted (default NULL) */
} tl_sweep_run_options;

/* The defaults above, by value (every field zero / NULL). */
tl_sweep_run_options tl_sweep_run_options_default(void);

/* Run the samples without a row on nthread threads (a fixed pool, samples
 * handed out one at a time in increasing order to whichever thread is
 * free). Each finished sample's row is appended to the CSV at once with one
 * write(2), so a run killed at any moment leaves a valid CSV of whole rows;
 * when the run ends (or is interrupted) the CSV is rewritten in sample order
 * (a new file renamed over it). Resume reads the CSV back: its header must
 * be this sweep's and every row's spec hash this sweep's (TL_ERR_INVALID
 * otherwise, naming the file and line); a trailing partial line is dropped.
 * The result is bit-identical to an uninterrupted run. opt NULL: the
 * defaults. *out (may be NULL)
 * receives every row (tl_sweep_results_free). Errors: TL_ERR_INVALID (not
 * prepared, a CSV of another sweep), TL_ERR_IO (the CSV cannot be written,
 * naming it), TL_ERR_MEMORY. */
tl_status tl_sweep_run(tl_sweep *sw, const tl_sweep_run_options *opt, tl_sweep_results **out, tl_error *err);

/* Distributed run under mpirun (talus_sweep_mpi library, built when CMake
 * finds MPI). Rank 0 hands out sample indices on request (a rank whose
 * threads run dry asks for more: dynamic load balancing), gathers the rows
 * and alone writes the CSV (as tl_sweep_run; the file is byte-identical to
 * a one-process run) and returns the results; other ranks return *out NULL.
 * Every rank must have prepared the same sweep (the hash is compared:
 * TL_ERR_INVALID otherwise). tl_sweep_mpi_init first (MPI_Init_thread,
 * MPI_THREAD_FUNNELED); tl_sweep_mpi_finalize at the end. */
tl_status tl_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, tl_error *err);
/* 1 on every rank iff ok is 1 on every rank (collective). */
int tl_sweep_mpi_agree(int ok);
tl_status tl_sweep_run_mpi(tl_sweep *sw, const tl_sweep_run_options *opt, tl_sweep_results **out, tl_error *err);
void tl_sweep_mpi_finalize(void);
/* 1 if this process was started by mpirun / mpiexec (OpenMPI, MPICH or
 * PMIx variables in the environment). Available without MPI. */
int tl_sweep_mpi_launched(void);

long tl_sweep_results_count(const tl_sweep_results *r); /* rows, in sample order */
const tl_sweep_result *tl_sweep_results_row(const tl_sweep_results *r, long i);
int tl_sweep_results_complete(const tl_sweep_results *r); /* 1: every sample has a row */
long tl_sweep_results_ran(const tl_sweep_results *r);     /* rows run by this call (not resumed) */
void tl_sweep_results_free(tl_sweep_results *r);

/* Write the summary JSON (docs/sweeps.md): counts per status, success rate
 * (status ok) with its Wilson 95 % interval, per parameter column its range,
 * mean and Pearson correlation with success (point-biserial; null when
 * either is constant), the outcomes' mean, min and max over ok samples, and
 * the `worst` worst samples (errors and divergences, then falls by time to
 * fall, then ok samples by largest tilt; ties by index). Deterministic for
 * the same rows. TL_ERR_IO naming the file. */
tl_status tl_sweep_write_summary(const tl_sweep *sw, const tl_sweep_results *r, const char *path, tl_error *err);

/* Wilson score interval for k successes in n trials at z (1.959963984540054
 * for 95 %): Wilson, "Probable inference, the law of succession, and
 * statistical inference", JASA 22, 1927. n = 0: [0, 1]. */
void tl_sweep_wilson(long k, long n, double z, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
