/* Internal: the task interface behind tl_vecenv (include/talus/task.h),
 * option parsing, robot lookup and domain randomization shared by tasks. */
#ifndef TALUS_TASKS_INTERNAL_H
#define TALUS_TASKS_INTERNAL_H

#include "talus/task.h"
#include "talus/urdf.h"

#define TL_TASK_MAX_KEYS 64
#define TL_TASK_NAME_LEN 48
#define TL_VECENV_MAX_WARNINGS 24

/* ---------------- options ---------------- */

/* The key=value options of one tl_vecenv_create call. Getters mark a key as
 * used and record it as known; tl_opts_finish refuses keys nobody asked for. */
typedef struct tl_opts {
  const char *task;
  const tl_task_option *opt;
  int nopt;
  unsigned char used[TL_TASK_MAX_KEYS];
  const char *known[TL_TASK_MAX_KEYS];
  int nknown;
} tl_opts;

/* Each getter leaves *out at the default when the key is absent (returns
 * TL_OK) and returns TL_ERR_ARGUMENT naming the key and value when it is
 * malformed or out of [lo, hi]. */
tl_status tl_opts_double(tl_opts *o, const char *key, double lo, double hi, double *out, tl_error *err);
tl_status tl_opts_int(tl_opts *o, const char *key, int lo, int hi, int *out, tl_error *err);
/* n comma-separated numbers; n == 0: any count up to cap, *count receives it. */
tl_status tl_opts_vector(tl_opts *o, const char *key, int n, int cap, double *out, int *count, tl_error *err);
/* A range "lo,hi" (lo <= hi) or a single number (lo = hi), each within [min, max]. */
tl_status tl_opts_range(tl_opts *o, const char *key, double min, double max, double out[2], tl_error *err);
tl_status tl_opts_string(tl_opts *o, const char *key, const char **out, tl_error *err);
/* TL_ERR_ARGUMENT naming the first key no getter asked for, with the known keys. */
tl_status tl_opts_finish(tl_opts *o, tl_error *err);

/* The task's robot: option `urdf` if given; else `rel` (e.g.
 * "cartpole/cartpole.urdf") under $TALUS_SHARED_ROBOTS, then under option
 * `robots_dir`. TL_ERR_IO naming every place searched when none exists. */
tl_status tl_task_robot_path(tl_opts *o, const char *rel, char *out, size_t cap, tl_error *err);

/* ---------------- domain randomization ---------------- */

/* Ranges (lo == hi: fixed at that value). */
typedef struct tl_rand_ranges {
  double mass_scale[2];      /* every link's mass and inertia times s (1) */
  double added_base_mass[2]; /* kg added at the base link's COM (0) */
  double com_offset[2];      /* m, each axis of the base link's COM (0) */
  double friction[2];        /* robot-ground friction coefficient (task default) */
  double motor_strength[2];  /* actuator output times s (1) */
  double kp_scale[2], kd_scale[2]; /* PD gains times s (1) */
  double push_velocity;      /* m/s: base velocity kick, each horizontal axis U(-p, p) (0: off) */
  double push_interval;      /* s between kicks */
} tl_rand_ranges;

/* Values for one episode, in the order of tl_rand_param_names. */
enum {
  TL_RAND_MASS_SCALE,
  TL_RAND_ADDED_BASE_MASS,
  TL_RAND_COM_X,
  TL_RAND_COM_Y,
  TL_RAND_COM_Z,
  TL_RAND_FRICTION,
  TL_RAND_MOTOR_STRENGTH,
  TL_RAND_KP_SCALE,
  TL_RAND_KD_SCALE,
  TL_RAND_NPARAM
};
extern const char *const tl_rand_param_names[TL_RAND_NPARAM];

/* Which randomizations a task supports (bit i: parameter i; push separately). */
#define TL_RAND_ALL ((1u << TL_RAND_NPARAM) - 1u)

/* Read the randomization options the task supports (`allowed` bits, `push`),
 * with the task's default friction. */
tl_status tl_rand_options(tl_opts *o, unsigned allowed, int push, double default_friction, tl_rand_ranges *r,
                          tl_error *err);
/* 1 if any range of the given parameter is not a single nominal value. */
int tl_rand_active(const tl_rand_ranges *r, int param);
/* Draw one episode's values (always the same number of draws, so a stream's
 * use does not depend on which ranges are set). */
void tl_rand_sample(const tl_rand_ranges *r, tl_rng *rng, double values[TL_RAND_NPARAM]);

/* The URDF links of a model with their nominal inertials, for mass and COM
 * randomization of each system copy. A link the run-time setter refuses at
 * its nominal values (a singular inertia with a positive mass, loaded with a
 * warning) is left out: it keeps its values. */
typedef struct tl_rand_links {
  int n;
  char (*name)[128];
  double *mass, *com, *inertia; /* [n], [3 n], [9 n] */
  int base;                     /* the heaviest link of body 0 (where mass is added, COM moved) */
} tl_rand_links;

tl_status tl_rand_links_init(tl_rand_links *l, tl_system *sys, tl_error *err);
void tl_rand_links_free(tl_rand_links *l);
/* Set sys's link inertials from the nominal ones and values (mass scale,
 * added base mass at the base link's COM, COM offset of the base link);
 * massless links other than the base are left alone. Tasks call it only
 * when one of these randomizations is on. */
tl_status tl_rand_apply_inertia(const tl_rand_links *l, tl_system *sys, const double values[TL_RAND_NPARAM],
                                tl_error *err);
/* Per-link form (sweeps, src/sweep/): link i's mass times mass_scale[i], its
 * inertia times mass_scale[i] * inertia_scale[i], its COM moved by
 * com_offset[3 i .. 3 i + 2] (m, link frame), and added_base_mass kg at the
 * base link's (moved) COM; massless links other than the base are left
 * alone. Arrays of l->n (3 l->n) values. TL_ERR_INVALID (element
 * "base_mass_add") if the base link would not keep a positive mass; the
 * setter's error otherwise (the links before it are already changed). */
tl_status tl_rand_apply_links(const tl_rand_links *l, tl_system *sys, const double *mass_scale,
                              const double *inertia_scale, const double *com_offset, double added_base_mass,
                              tl_error *err);

/* ---------------- tasks ---------------- */

/* Per-environment bookkeeping of tl_vecenv. */
typedef struct tl_env_slot {
  int steps;          /* control steps in this episode */
  double ret;         /* undiscounted return so far */
} tl_env_slot;

struct tl_vecenv;

typedef struct tl_task_class {
  const char *name;
  const char *summary;
  /* Parse options, load the robot, build v->batch (tl_batch_create), set
   * dims, bounds, names, nterm / term names, max steps, control dt. */
  tl_status (*init)(struct tl_vecenv *v, tl_opts *o, int nenv, int nthread, uint64_t seed, tl_error *err);
  /* New episode of env: randomize, set the state, write the observation
   * (obs_dim doubles) and the episode's parameter values (TL_RAND_NPARAM). */
  void (*reset)(struct tl_vecenv *v, int env, double *obs, double *params);
  /* One control step with a finite, clipped action: write the observation,
   * the weighted reward terms (nterm) and return 1 if the episode failed
   * (terminated). *status: TL_OK, or the simulation's error (the episode then
   * ends as terminated with TL_VECENV_DIVERGED). */
  int (*step)(struct tl_vecenv *v, int env, const double *action, double *obs, double *terms, tl_status *status);
  void (*free)(struct tl_vecenv *v);
} tl_task_class;

struct tl_vecenv {
  const tl_task_class *cls;
  void *task;          /* the task's own data */
  tl_batch *batch;
  int nenv, obs_dim, act_dim, nterm, max_steps;
  double control_dt;
  int positive_reward; /* 1: reward = max(0, sum of terms) (legged_gym's only_positive_rewards) */
  char robot[1024];    /* the URDF the task loaded */
  double *act_low, *act_high, *obs_low, *obs_high; /* [act_dim], [obs_dim] */
  char (*obs_names)[TL_TASK_NAME_LEN];
  char (*act_names)[TL_TASK_NAME_LEN];
  char (*term_names)[TL_TASK_NAME_LEN];
  double *params;      /* [nenv * TL_RAND_NPARAM] */
  double *terms;       /* [nenv * nterm] */
  double *obs;         /* [nenv * obs_dim]: the current observation of each environment */
  double *action;      /* [nenv * act_dim]: clipped action scratch */
  tl_env_slot *slot;   /* [nenv] */
  /* creation warnings (tl_vecenv_warning): URDF load warnings, the urdf task's onboarding checks */
  int nwarning;
  char warnings[TL_VECENV_MAX_WARNINGS][768];
  char warning_kinds[TL_VECENV_MAX_WARNINGS][24];
  /* the running step job */
  const double *job_actions;
  const tl_vecenv_result *job_out;
};

/* Append a creation warning of kind `kind` (tl_vecenv_warning_kind); past
 * TL_VECENV_MAX_WARNINGS they are dropped. */
void tl_vecenv_add_warning(struct tl_vecenv *v, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Foot of leaf body b (src/tasks/onboard.c): its collision geom whose centre (a mesh: the centre of
 * its hull's bounding box) is farthest from the body origin. Returns that geom, or -1 when b has no
 * collision geom; p (body frame, m) receives the centre and *r its radius (a sphere, capsule or
 * cylinder: the radius; a box or mesh: half its smallest extent). */
int tl_task_foot_geom(const tl_model *m, int b, double p[3], double *r);

/* The urdf task's onboarding checks (src/tasks/onboard.c) of `model` on
 * system `sys` (env 0, before the first reset): for a floating base: "fixed_base" when the robot looks like
 * an arm (at most one chain below the root; the other checks are then
 * skipped), and with a ground, at the nominal reset pose q0 (nq values; no
 * noise, lowest collision point on the ground): "ground_contact" when a
 * collision point of a non-foot body (not a leaf body) is within 1 cm of the
 * lowest point, "cannot_stand" when the COM's ground projection is not
 * strictly inside the convex hull of the foot points within 1 cm of the
 * lowest point (tl_support_margin <= 0). Leaves sys in pose q0 (the caller
 * resets). Errors: TL_ERR_MEMORY, the system's errors. */
tl_status tl_onboard_check(struct tl_vecenv *v, const tl_model *model, tl_system *sys, const double *q0, int nq,
                           double drop_height, int ground, tl_error *err);
/* The model's load warnings as creation warnings of kind "urdf". */
void tl_vecenv_add_model_warnings(struct tl_vecenv *v, const tl_model *model);

/* Allocate the dims-dependent arrays of v once init has set the dims. */
tl_status tl_vecenv_alloc(struct tl_vecenv *v, tl_error *err);

extern const tl_task_class tl_task_cartpole;
extern const tl_task_class tl_task_anymal;
extern const tl_task_class tl_task_urdf;

#endif
