/* Task "cartpole": balance the pole of the shared cartpole URDF
 * (../shared/robots/cartpole/cartpole.urdf: a 1 kg cart on a prismatic rail,
 * a 10 kg pole with its COM 0.5 m above a continuous hinge), in the
 * formulation of the classic control benchmark (Barto, Sutton, Anderson,
 * "Neuronlike adaptive elements that can solve difficult learning control
 * problems", IEEE SMC 13(5), 1983; Gymnasium's CartPole-v1 thresholds and
 * episode length) with a continuous force.
 *
 * Observation (4): cart position x (m), cart velocity (m/s), pole angle
 * theta (rad, 0 upright, positive tilting toward +x), pole angular velocity
 * (rad/s). Action (1): force on the cart = clip(a, -1, 1) * force_scale
 * (N, default 100: the cart and pole weigh 11 kg, ten times Gymnasium's
 * 1.1 kg and its 10 N) times the episode's motor strength, held for
 * `decimation` physics steps of `dt` (defaults 4 x 5 ms = 20 ms, Gymnasium's
 * control period). Reward: 1 per control step (term "alive"), the failing
 * step included. Terminated: |x| > 2.4 m or |theta| > 12 deg. Truncated:
 * 500 control steps (the maximum return is 500). Reset: x, theta and their
 * rates uniform in [-0.05, 0.05]. Randomization: mass_scale,
 * motor_strength, push_velocity (cart velocity kick, m/s) every
 * push_interval s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tasks/task_internal.h"

typedef struct cartpole {
  tl_model *model;
  double dt, force_scale, x_limit, theta_limit, init_noise;
  int decimation, push_steps;
  tl_rand_ranges rand;
  tl_rand_links links;
  int randomize_inertia;
  int *push_countdown; /* [nenv] control steps to the next push */
} cartpole;

static tl_status build(void *ctx, int env, tl_world **out, tl_error *err) {
  (void)env;
  cartpole *c = ctx;
  tl_world *w = NULL;
  tl_status st = tl_world_create(&w, err);
  if (!st) st = tl_world_set_timestep(w, c->dt, err);
  if (!st) st = tl_world_add_system(w, c->model, NULL, err);
  if (st) {
    tl_world_free(w);
    return st;
  }
  *out = w;
  return TL_OK;
}

static tl_status read_options(cartpole *c, tl_opts *o, int *max_steps, tl_error *err) {
  tl_status st;
  c->dt = 0.005;
  c->decimation = 4;
  c->force_scale = 100.0;
  c->x_limit = 2.4;
  c->theta_limit = 12.0 * 3.14159265358979323846 / 180.0;
  c->init_noise = 0.05;
  *max_steps = 500;
  if ((st = tl_opts_double(o, "dt", 1e-5, 0.1, &c->dt, err)) ||
      (st = tl_opts_int(o, "decimation", 1, 1000, &c->decimation, err)) ||
      (st = tl_opts_double(o, "force_scale", 0, 1e6, &c->force_scale, err)) ||
      (st = tl_opts_double(o, "x_limit", 0, 1e3, &c->x_limit, err)) ||
      (st = tl_opts_double(o, "theta_limit", 0, 3.2, &c->theta_limit, err)) ||
      (st = tl_opts_double(o, "init_noise", 0, 1, &c->init_noise, err)) ||
      (st = tl_opts_int(o, "max_episode_steps", 1, 100000000, max_steps, err)))
    return st;
  unsigned allowed = (1u << TL_RAND_MASS_SCALE) | (1u << TL_RAND_MOTOR_STRENGTH);
  return tl_rand_options(o, allowed, 1, 0.8, &c->rand, err);
}

static tl_status init(tl_vecenv *v, tl_opts *o, int nenv, int nthread, uint64_t seed, tl_error *err) {
  cartpole *c = calloc(1, sizeof(*c));
  if (!c) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  v->task = c;
  char path[1024];
  tl_status st;
  if ((st = read_options(c, o, &v->max_steps, err)) ||
      (st = tl_task_robot_path(o, "cartpole/cartpole.urdf", path, sizeof(path), err)))
    return st;
  snprintf(v->robot, sizeof(v->robot), "%s", path);
  tl_load_options lo = tl_load_options_default();
  lo.base = TL_BASE_FIXED;
  if ((st = tl_model_load_urdf(path, &lo, &c->model, err))) return st;
  if (tl_model_nq(c->model) != 2 || tl_model_nv(c->model) != 2 ||
      tl_model_joint_type(c->model, 1) != TL_JOINT_PRISMATIC || tl_model_joint_type(c->model, 2) != TL_JOINT_REVOLUTE)
    return tl_error_set(err, TL_ERR_INVALID, path, 0, "robot",
                        "cartpole: expected a fixed-base cart on a prismatic joint carrying a pole on a revolute "
                        "joint (nq = nv = 2)");
  tl_batch_options bo = tl_batch_options_default();
  bo.nthread = nthread;
  bo.seed = seed;
  if ((st = tl_batch_create(nenv, &bo, build, c, &v->batch, err))) return st;
  c->randomize_inertia = tl_rand_active(&c->rand, TL_RAND_MASS_SCALE);
  if (c->randomize_inertia && (st = tl_rand_links_init(&c->links, tl_batch_system(v->batch, 0, 0), err))) return st;
  c->push_countdown = calloc((size_t)nenv, sizeof(int));
  if (!c->push_countdown) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  v->control_dt = c->dt * c->decimation;
  c->push_steps = (int)fmax(1.0, round(c->rand.push_interval / v->control_dt));
  v->obs_dim = 4;
  v->act_dim = 1;
  v->nterm = 1;
  if ((st = tl_vecenv_alloc(v, err))) return st;
  v->act_low[0] = -1;
  v->act_high[0] = 1;
  const char *names[4] = {"cart_position", "cart_velocity", "pole_angle", "pole_angular_velocity"};
  for (int i = 0; i < 4; i++) snprintf(v->obs_names[i], TL_TASK_NAME_LEN, "%s", names[i]);
  v->obs_low[0] = -2 * c->x_limit;
  v->obs_high[0] = 2 * c->x_limit;
  v->obs_low[2] = -2 * c->theta_limit;
  v->obs_high[2] = 2 * c->theta_limit;
  snprintf(v->act_names[0], TL_TASK_NAME_LEN, "cart_force");
  snprintf(v->term_names[0], TL_TASK_NAME_LEN, "alive");
  /* check the inertia randomization once at both ends of its range */
  for (int k = 0; k < 2 && c->randomize_inertia; k++) {
    double p[TL_RAND_NPARAM] = {0};
    p[TL_RAND_MASS_SCALE] = c->rand.mass_scale[k];
    if ((st = tl_rand_apply_inertia(&c->links, tl_batch_system(v->batch, 0, 0), p, err))) return st;
  }
  return TL_OK;
}

static void observe(tl_system *sys, double *obs) {
  double q[2], u[2];
  tl_system_get_state(sys, q, 2, u, 2, NULL);
  obs[0] = q[0];
  obs[1] = u[0];
  obs[2] = q[1];
  obs[3] = u[1];
}

static void reset(tl_vecenv *v, int e, double *obs, double *params) {
  cartpole *c = v->task;
  tl_system *sys = tl_batch_system(v->batch, e, 0);
  tl_rng *rng = tl_batch_rng(v->batch, e);
  tl_rand_sample(&c->rand, rng, params);
  if (c->randomize_inertia) tl_rand_apply_inertia(&c->links, sys, params, NULL);
  double q[2], u[2];
  for (int i = 0; i < 2; i++) q[i] = tl_rng_range(rng, -c->init_noise, c->init_noise);
  for (int i = 0; i < 2; i++) u[i] = tl_rng_range(rng, -c->init_noise, c->init_noise);
  tl_system_set_state(sys, q, 2, u, 2, NULL);
  double zero[2] = {0, 0};
  tl_system_set_generalized_force(sys, zero, 2, NULL);
  c->push_countdown[e] = c->push_steps;
  observe(sys, obs);
}

static int step(tl_vecenv *v, int e, const double *action, double *obs, double *terms, tl_status *status) {
  cartpole *c = v->task;
  tl_system *sys = tl_batch_system(v->batch, e, 0);
  tl_world *w = tl_batch_world(v->batch, e);
  const double *params = v->params + (size_t)e * TL_RAND_NPARAM;
  double tau[2] = {action[0] * c->force_scale * params[TL_RAND_MOTOR_STRENGTH], 0};
  tl_system_set_generalized_force(sys, tau, 2, NULL);
  if (c->rand.push_velocity > 0 && --c->push_countdown[e] <= 0) {
    c->push_countdown[e] = c->push_steps;
    double q[2], u[2];
    tl_system_get_state(sys, q, 2, u, 2, NULL);
    u[0] += tl_rng_range(tl_batch_rng(v->batch, e), -c->rand.push_velocity, c->rand.push_velocity);
    tl_system_set_state(sys, q, 2, u, 2, NULL);
  }
  for (int k = 0; k < c->decimation && !*status; k++) *status = tl_world_step(w, NULL);
  observe(sys, obs);
  terms[0] = 1.0;
  return fabs(obs[0]) > c->x_limit || fabs(obs[2]) > c->theta_limit;
}

static void task_free(tl_vecenv *v) {
  cartpole *c = v->task;
  if (!c) return;
  tl_model_free(c->model);
  tl_rand_links_free(&c->links);
  free(c->push_countdown);
  free(c);
  v->task = NULL;
}

const tl_task_class tl_task_cartpole = {
    "cartpole", "balance the shared cartpole URDF from a near-upright state (continuous force)", init, reset, step,
    task_free};
