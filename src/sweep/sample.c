/* One sweep sample: its parameter values from its own random stream, its
 * world (built fresh from the prepared sweep), the randomization of the
 * robot, the run and its outcome (talus/metrics.h). Nothing here depends on
 * anything but (sweep, sample index), so a sample gives the same row on any
 * thread, process or machine of the same architecture. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "talus/limits.h"
#include "sweep/sweep_internal.h"

#define SW_TWO_PI 6.283185307179586
#define SW_ROBOT_MATERIAL "talus_sweep_robot"

/* ------------------------------------------------------------ values */

/* Parameter P's stream of sample `sample`: key (seed, sample), counter word 2
 * = slot + 1, so each parameter draws from its own block range (NumPy:
 * Philox(key=[seed, sample], counter=[0, 0, slot + 1, 0]) gives the same words). */
static void param_rng(const tl_sweep *sw, long sample, const sw_param *P, tl_rng *r) {
  tl_rng_init(r, sw->seed, (uint64_t)sample);
  r->counter[2] = (uint64_t)P->slot + 1;
}

static double draw_one(const sw_dist *d, tl_rng *r, long cell, int stride) {
  switch (d->kind) {
  case SW_DIST_CONST: return d->a;
  case SW_DIST_UNIFORM: return tl_rng_range(r, d->a, d->b);
  case SW_DIST_NORMAL: return d->a + d->b * tl_rng_normal(r);
  case SW_DIST_LOGUNIFORM: {
    double u = tl_rng_uniform(r);
    return d->a == d->b ? d->a : exp(log(d->a) + (log(d->b) - log(d->a)) * u);
  }
  case SW_DIST_CHOICE: {
    int i = (int)(tl_rng_uniform(r) * d->n);
    return d->choice[i < d->n ? i : d->n - 1];
  }
  case SW_DIST_GRID: {
    long i = (cell / stride) % d->n;
    if (d->n == 1) return d->a;
    return i == d->n - 1 ? d->b : d->a + (d->b - d->a) * (double)i / (double)(d->n - 1);
  }
  }
  return NAN;
}

void sw_draw(const tl_sweep *sw, long sample, double *values) {
  long cell = sample % sw->grid_size;
  for (int p = 0; p < sw->nparam; ++p) {
    const sw_param *P = &sw->param[p];
    tl_rng r;
    param_rng(sw, sample, P, &r);
    double *v = values + P->col;
    int n = P->kind == SW_P_PUSH ? 1 : P->ncol;
    for (int c = 0; c < n; ++c) v[c] = draw_one(&P->dist, &r, cell, P->grid_stride);
    if (P->kind == SW_P_PUSH) {
      v[1] = sw->duration * (SW_PUSH_LO + (SW_PUSH_HI - SW_PUSH_LO) * tl_rng_uniform(&r));
      v[2] = SW_TWO_PI * tl_rng_uniform(&r);
    }
  }
}

tl_status tl_sweep_sample_values(const tl_sweep *sw, long sample, double *values, int n, tl_error *err) {
  if (!sw || !sw->prepared) return sw_error(err, TL_ERR_INVALID, NULL, 0, "sw", "the sweep is not prepared");
  if (sample < 0 || sample >= sw->samples)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "sample", "sample %ld is not in [0, %ld)", sample, sw->samples);
  if (!values || n != sw->nparam_column)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "values", "values: %d doubles expected", sw->nparam_column);
  sw_draw(sw, sample, values);
  return TL_OK;
}

/* The value of the first parameter of kind `kind` (its first column), or `dflt`. */
static double value_of(const tl_sweep *sw, const double *values, sw_param_kind kind, double dflt) {
  if (!values) return dflt;
  for (int p = 0; p < sw->nparam; ++p)
    if (sw->param[p].kind == kind) return values[sw->param[p].col];
  return dflt;
}

/* The product of the values of every parameter of kind `kind` (1 if none). */
static double product_of(const tl_sweep *sw, const double *values, sw_param_kind kind) {
  double s = 1.0;
  for (int p = 0; values && p < sw->nparam; ++p)
    if (sw->param[p].kind == kind) s *= values[sw->param[p].col];
  return s;
}

/* ------------------------------------------------------------ the world */

static tl_status terrain(const tl_sweep *sw, const double *values, long sample, sw_world *w, tl_error *err) {
  for (int p = 0; values && p < sw->nparam; ++p) {
    const sw_param *P = &sw->param[p];
    if (P->kind != SW_P_TERRAIN) continue;
    double amp = values[P->col];
    if (!(amp > 0)) return TL_OK;
    int nx = 0; /* the one grid rule (talus/limits.h): no wrap through an int */
    tl_status gs = tl_limits_grid_points(sw->terrain_size, sw->terrain_spacing, SW_MAX_TERRAIN_POINTS,
                                  "terrain_size / terrain_spacing", &nx, err);
    if (gs != TL_OK) return gs;
    w->heights = malloc((size_t)nx * (size_t)nx * sizeof(double));
    if (!w->heights) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    tl_rng r;
    param_rng(sw, sample, P, &r);
    draw_one(&P->dist, &r, 0, 1); /* the amplitude's own draw, then the heights */
    for (long i = 0; i < (long)nx * nx; ++i) w->heights[i] = amp * tl_rng_uniform(&r);
    double x0 = -0.5 * sw->terrain_size;
    tl_status st = tl_world_set_default_material(w->world, sw->ground_friction, 0.0, 0.01, err);
    if (st == TL_OK)
      st = tl_world_add_heightmap(w->world, nx, nx, x0, x0, sw->terrain_spacing, sw->terrain_spacing, w->heights,
                                  nx * nx, "ground", NULL, err);
    return st;
  }
  return TL_OK;
}

/* Initial q: the default configuration with sw->q over the joint coordinates (or all). */
static tl_status initial_q(const tl_sweep *sw, const tl_model *m, double *q, int nq, tl_error *err) {
  tl_status st = tl_model_default_q(m, q, nq, err);
  if (st != TL_OK || !sw->q) return st;
  int njoint = sw->floating ? nq - 7 : nq;
  if (sw->nq_given == nq) memcpy(q, sw->q, (size_t)nq * sizeof(double));
  else if (sw->nq_given == njoint) memcpy(q + (nq - njoint), sw->q, (size_t)njoint * sizeof(double));
  else
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "q", "q: got %d values, the model needs %d (joint coordinates) or %d (all)",
                        sw->nq_given, njoint, nq);
  return TL_OK;
}

/* A URDF run: ground (and terrain), the robot dropped onto it as talus simulate drops it. */
static tl_status build_urdf(const tl_sweep *sw, const double *values, long sample, sw_world *w, double *q,
                            tl_error *err) {
  tl_status st = tl_world_create(&w->world, err);
  if (st == TL_OK) st = tl_world_set_timestep(w->world, sw->dt, err);
  if (st == TL_OK) st = tl_world_add_ground(w->world, 0.0, sw->ground_friction, err);
  if (st == TL_OK) st = terrain(sw, values, sample, w, err);
  if (st == TL_OK) st = tl_world_add_system(w->world, sw->model, &w->sys, err);
  if (st != TL_OK) return st;
  int nq = tl_system_nq(w->sys), nv = tl_system_nv(w->sys);
  double *u = calloc((size_t)nv + 1, sizeof(double));
  if (!u) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  st = initial_q(sw, sw->model, q, nq, err);
  if (st == TL_OK) st = tl_system_set_state(w->sys, q, nq, u, nv, err);
  if (st == TL_OK && sw->floating) {
    double minz, top = w->heights ? value_of(sw, values, SW_P_TERRAIN, 0.0) : 0.0;
    if (tl_measure_lowest_z(w->sys, &minz) > 0 || isfinite(minz)) {
      q[2] += top + SW_DROP_HEIGHT - minz;
      st = tl_system_set_state(w->sys, q, nq, u, nv, err);
    }
  }
  if (st == TL_OK) st = tl_system_get_state(w->sys, q, nq, NULL, 0, err);
  free(u);
  return st;
}

/* friction / restitution: one material for the robot, paired with every static material. */
static tl_status contact_material(const tl_sweep *sw, const double *values, sw_world *w, tl_error *err) {
  if (!sw->contact_material) return TL_OK;
  double mu = value_of(sw, values, SW_P_FRICTION, sw->ground_friction);
  double e = value_of(sw, values, SW_P_RESTITUTION, 0.0);
  tl_status st = TL_OK;
  const tl_model *m = tl_system_model(w->sys);
  for (int g = 0; g < tl_model_ngeom(m) && st == TL_OK; ++g) st = tl_system_set_geom_material(w->sys, g, SW_ROBOT_MATERIAL, err);
  for (int i = 0; i < tl_world_nstatic(w->world) && st == TL_OK; ++i) {
    const char *mat = NULL;
    if (tl_world_static_geom(w->world, i, NULL, NULL, NULL, NULL, &mat, NULL, NULL) != TL_OK || !mat) continue;
    st = tl_world_set_material_pair(w->world, mat, SW_ROBOT_MATERIAL, mu, e, 0.01, err);
  }
  return st;
}

static tl_status scene_controllers(const tl_sweep *sw, const double *values, sw_world *w, tl_error *err) {
  int n = w->scene.nsystem;
  w->scene_stand = calloc((size_t)n + 1, sizeof(tl_stand_controller));
  if (!w->scene_stand) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  for (int i = 0; i < n; ++i) {
    const tl_scene_system *e = &w->scene.systems[i];
    int robot = i == w->scene.first_articulated;
    if (e->controller != TL_SCENE_CONTROLLER_STAND || (robot && sw->ctrl_given)) continue;
    double kp = e->kp, kd = e->kd;
    if (robot) kp *= product_of(sw, values, SW_P_KP_SCALE), kd *= product_of(sw, values, SW_P_KD_SCALE);
    tl_status st = tl_stand_init(&w->scene_stand[i], e->system, NULL, 0, kp, kd, err);
    if (st != TL_OK) return st;
  }
  return TL_OK;
}

/* The robot's inertials, effort limits, damping and rotor inertia from the values. */
static tl_status randomize(const tl_sweep *sw, const double *values, sw_world *w, tl_error *err) {
  tl_status st = TL_OK;
  int nl = sw->links.n, nv = sw->nv;
  double *buf = calloc((size_t)(5 * nl + 3 * nv + 1), sizeof(double));
  if (!buf) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  double *ms = buf, *is = ms + nl, *off = is + nl, *strength = off + 3 * nl, *rotor = strength + nv, *damp = rotor + nv;
  double added = 0;
  for (int i = 0; i < nl; ++i) ms[i] = is[i] = 1.0;
  for (int d = 0; d < nv; ++d) strength[d] = rotor[d] = 1.0, damp[d] = NAN;
  for (int p = 0; p < sw->nparam; ++p) {
    const sw_param *P = &sw->param[p];
    const double *v = values + P->col;
    int l0 = P->link >= 0 ? P->link : 0, l1 = P->link >= 0 ? P->link + 1 : nl;
    switch (P->kind) {
    case SW_P_MASS_SCALE: for (int i = l0; i < l1; ++i) ms[i] *= v[0]; break;
    case SW_P_INERTIA_SCALE: for (int i = l0; i < l1; ++i) is[i] *= v[0]; break;
    case SW_P_BASE_MASS_ADD: added += v[0]; break;
    case SW_P_COM_OFFSET: {
      int link = P->link >= 0 ? P->link : sw->links.base;
      for (int k = 0; k < 3; ++k)
        if (P->axis < 0 || P->axis == k) off[3 * link + k] += v[P->axis < 0 ? k : 0];
      break;
    }
    case SW_P_MOTOR_STRENGTH: for (int d = P->dof_lo; d < P->dof_hi; ++d) strength[d] *= v[0]; break;
    case SW_P_ROTOR_INERTIA_SCALE: for (int d = P->dof_lo; d < P->dof_hi; ++d) rotor[d] *= v[0]; break;
    case SW_P_JOINT_DAMPING: for (int d = P->dof_lo; d < P->dof_hi; ++d) damp[d] = v[0]; break;
    default: break;
    }
  }
  if (sw->inertial) st = tl_rand_apply_links(&sw->links, w->sys, ms, is, off, added, err);
  for (int d = 0; d < nv && st == TL_OK; ++d) {
    if (strength[d] != 1.0 && isfinite(sw->effort[d]))
      st = tl_system_set_joint_limits(w->sys, d, sw->lower[d], sw->upper[d], sw->effort[d] * strength[d], err);
    if (st == TL_OK && rotor[d] != 1.0) st = tl_system_set_rotor_inertia(w->sys, d, sw->rotor[d] * rotor[d], err);
    if (st == TL_OK && !isnan(damp[d])) st = tl_system_set_joint_damping(w->sys, d, damp[d], err);
  }
  free(buf);
  return st;
}

tl_status sw_build(const tl_sweep *sw, const double *values, long sample, sw_world *w, tl_error *err) {
  memset(w, 0, sizeof(*w));
  tl_status st = TL_OK;
  int nq = sw->model ? tl_model_nq(sw->model) : 0;
  double *q = NULL;
  if (sw->world_file) {
    /* world files: q is read from the system once the file is loaded */
    st = tl_scene_load(sw->robot, &w->world, &w->scene, err);
    if (st == TL_OK && sw->dt_given) st = tl_world_set_timestep(w->world, sw->dt, err);
    if (st == TL_OK && w->scene.first_articulated < 0)
      st = sw_error(err, TL_ERR_INVALID, sw->robot, 0, "system", "the world file has no <system> to sweep");
    if (st == TL_OK) {
      w->sys = w->scene.systems[w->scene.first_articulated].system;
      nq = tl_system_nq(w->sys);
      q = calloc((size_t)nq + 1, sizeof(double));
      st = q ? tl_system_get_state(w->sys, q, nq, NULL, 0, err) : sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
    }
  } else {
    q = calloc((size_t)nq + 1, sizeof(double));
    st = q ? build_urdf(sw, values, sample, w, q, err) : sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  if (st == TL_OK) st = contact_material(sw, values, w, err);
  if (st == TL_OK && sw->world_file) st = scene_controllers(sw, values, w, err);
  if (st == TL_OK && (!sw->world_file || sw->ctrl_given)) {
    tl_controller_spec spec = sw->ctrl;
    spec.kp_scale = product_of(sw, values, SW_P_KP_SCALE);
    spec.kd_scale = product_of(sw, values, SW_P_KD_SCALE);
    st = tl_controller_init(&w->ctrl, &spec, w->sys, q, nq, err);
  }
  if (st == TL_OK && values) st = randomize(sw, values, w, err);
  free(q);
  if (st != TL_OK) sw_world_free(w);
  return st;
}

void sw_world_free(sw_world *w) {
  tl_controller_free(&w->ctrl);
  if (w->scene_stand)
    for (int i = 0; i < w->scene.nsystem; ++i) tl_stand_free(&w->scene_stand[i]);
  free(w->scene_stand);
  tl_scene_info_free(&w->scene);
  tl_world_free(w->world);
  free(w->heights);
  memset(w, 0, sizeof(*w));
}

/* ------------------------------------------------------------ the run */

typedef struct sw_acc {
  long long nw;            /* steps in the window */
  double speed_sum, track_sum, force_sum, force_max, slip_sum, energy, max_rp, max_depth;
  long long ntrack, nslip;
  double p_start[3], p_window[3], p_end[3];
  int window_started;
} sw_acc;

static int state_sane(tl_system *sys, double *q, int nq, double *u, int nv) {
  if (tl_system_get_state(sys, q, nq, u, nv, NULL) != TL_OK) return 0;
  for (int i = 0; i < nq; ++i)
    if (!(fabs(q[i]) <= SW_MAXVAL)) return 0;
  for (int i = 0; i < nv; ++i)
    if (!(fabs(u[i]) <= SW_MAXVAL)) return 0;
  return 1;
}

static tl_status controllers_update(sw_world *w, tl_error *err) {
  tl_status st = tl_controller_update(&w->ctrl, tl_world_time(w->world), err);
  for (int i = 0; st == TL_OK && w->scene_stand && i < w->scene.nsystem; ++i)
    if (w->scene_stand[i].sys) st = tl_stand_update(&w->scene_stand[i], err);
  return st;
}

static void set_message(sw_record *rec, const char *text) {
  size_t n = strlen(text), cap = sizeof rec->message;
  if (n >= cap) n = cap - 1; /* cut long engine messages */
  memcpy(rec->message, text, n);
  rec->message[n] = '\0';
  for (char *p = rec->message; *p; ++p)
    if (*p == '\n' || *p == '\r') *p = ' ';
}

/* Step the built world for the duration; fill rec's status and outcomes. */
static void simulate(const tl_sweep *sw, sw_world *w, sw_record *rec, atomic_int *stop) {
  tl_system *sys = w->sys;
  int nq = tl_system_nq(sys), nv = tl_system_nv(sys);
  double dt = tl_world_timestep(w->world);
  long long nsteps = 0;
  tl_error serr;
  memset(&serr, 0, sizeof serr);
  if (tl_limits_steps_for_duration(sw->duration, dt, &nsteps, &serr) != TL_OK) { /* a world file's own dt */
    rec->status = TL_SWEEP_ERROR;
    set_message(rec, serr.message);
    return;
  }
  long long kw = (long long)ceil(SW_SETTLE_FRACTION * (double)nsteps);
  double *scratch = calloc(2 * (size_t)(nq + nv) + 2, sizeof(double));
  if (!scratch) {
    rec->status = TL_SWEEP_ERROR;
    set_message(rec, "out of memory");
    return;
  }
  double *q = scratch, *u = q + nq, *tau = u + nv, *uu = tau + nv;
  /* push: force impulse / dt on the base's COM during one step */
  long long kpush = -1;
  double fpush[3] = {0, 0, 0};
  for (int p = 0; p < sw->nparam; ++p)
    if (sw->param[p].kind == SW_P_PUSH) {
      const double *v = rec->params + sw->param[p].col;
      kpush = (long long)floor(v[1] / dt);
      fpush[0] = v[0] / dt * cos(v[2]);
      fpush[1] = v[0] / dt * sin(v[2]);
    }
  double g[3];
  tl_world_gravity(w->world, g);
  double weight = tl_model_total_mass(tl_system_model(sys)) * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  sw_acc a;
  memset(&a, 0, sizeof a);
  double fall_h = NAN;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = TL_OK;
  rec->status = TL_SWEEP_OK;
  tl_base_measure bm;
  for (long long k = 0; k < nsteps; ++k) {
    if ((k & 255) == 0 && stop && atomic_load(stop)) {
      rec->status = SW_INTERRUPTED;
      break;
    }
    if ((st = tl_world_integrate1(w->world, &err)) != TL_OK) break;
    if ((st = tl_measure_base(sys, &bm, &err)) != TL_OK) break;
    if (k == 0) {
      memcpy(a.p_start, bm.pos, sizeof a.p_start);
      fall_h = isnan(sw->fall_height) ? 0.5 * bm.pos[2] : sw->fall_height;
    }
    double rp = bm.roll_pitch_max; /* the tilt, pi/2 for a base on its back (not pi near pitch +-pi/2) */
    if (rp > a.max_rp) a.max_rp = rp;
    memcpy(a.p_end, bm.pos, sizeof a.p_end);
    if (sw->floating && (bm.pos[2] < fall_h || rp > sw->fall_tilt)) {
      rec->status = TL_SWEEP_FELL;
      rec->outcome[TL_SWEEP_TIME_TO_FALL] = tl_world_time(w->world);
      snprintf(rec->message, sizeof rec->message, "%s at t = %.6g s (base height %.4g m, roll %.3g, pitch %.3g rad)",
               bm.pos[2] < fall_h ? "base below fall_height" : "tilted past fall_tilt", tl_world_time(w->world),
               bm.pos[2], bm.roll, bm.pitch);
      break;
    }
    int in_window = k >= kw;
    if (in_window && !a.window_started) {
      a.window_started = 1;
      memcpy(a.p_window, bm.pos, sizeof a.p_window);
    }
    if (in_window) a.speed_sum += bm.forward_speed, a.nw++;
    if ((st = controllers_update(w, &err)) != TL_OK) break;
    double track = tl_controller_tracking_error(&w->ctrl);
    if (in_window && isfinite(track)) a.track_sum += track, a.ntrack++;
    if (k == kpush && (st = tl_system_add_external_force(sys, 0, fpush, NULL, &err)) != TL_OK) break;
    if ((st = tl_world_integrate2(w->world, &err)) != TL_OK) break;
    tl_contact_measure cm;
    tl_measure_contacts(w->world, sys, in_window, &cm);
    if (cm.max_depth > a.max_depth) a.max_depth = cm.max_depth;
    if (in_window) {
      a.force_sum += cm.normal_force;
      if (cm.normal_force > a.force_max) a.force_max = cm.normal_force;
      a.slip_sum += cm.slip_sum;
      a.nslip += cm.nslip;
      a.energy += tl_measure_actuator_power(sys, tau, uu, nv) * dt;
    }
    if (!state_sane(sys, q, nq, u, nv)) {
      rec->status = TL_SWEEP_DIVERGED;
      snprintf(rec->message, sizeof rec->message, "|q| or |u| above %g at t = %.6g s", SW_MAXVAL, tl_world_time(w->world));
      break;
    }
  }
  if (st != TL_OK) {
    rec->status = st == TL_ERR_DIVERGED ? TL_SWEEP_DIVERGED : TL_SWEEP_ERROR;
    set_message(rec, err.message[0] ? err.message : tl_status_name(st));
  } else if (rec->status == TL_SWEEP_OK && tl_measure_base(sys, &bm, NULL) == TL_OK) {
    memcpy(a.p_end, bm.pos, sizeof a.p_end); /* the state after the last step */
  }
  double *o = rec->outcome;
  o[TL_SWEEP_MEAN_SPEED] = a.nw ? a.speed_sum / (double)a.nw : NAN;
  o[TL_SWEEP_DISTANCE] = hypot(a.p_end[0] - a.p_start[0], a.p_end[1] - a.p_start[1]);
  o[TL_SWEEP_TRACKING_ERROR] = a.ntrack ? a.track_sum / (double)a.ntrack : NAN;
  o[TL_SWEEP_CONTACT_FORCE_MEAN] = a.nw ? a.force_sum / (double)a.nw : NAN;
  o[TL_SWEEP_CONTACT_FORCE_MAX] = a.nw ? a.force_max : NAN;
  double dw = hypot(a.p_end[0] - a.p_window[0], a.p_end[1] - a.p_window[1]);
  o[TL_SWEEP_COST_OF_TRANSPORT] = a.window_started && dw >= 0.01 && weight > 0 ? a.energy / (weight * dw) : NAN;
  o[TL_SWEEP_MAX_PENETRATION] = a.max_depth;
  o[TL_SWEEP_FOOT_SLIP] = a.nslip ? a.slip_sum / (double)a.nslip : NAN;
  o[TL_SWEEP_MAX_ROLL_PITCH] = a.max_rp;
  free(scratch);
}

/* Run rec->sample into rec (params, status, outcomes, message). stop may be NULL. */
void sw_run_record(const tl_sweep *sw, sw_record *rec, atomic_int *stop) {
  for (int i = 0; i < TL_SWEEP_NOUTCOME; ++i) rec->outcome[i] = NAN;
  rec->message[0] = '\0';
  sw_draw(sw, rec->sample, rec->params);
  if (sw_check_values(sw, rec->params, rec->message, sizeof rec->message) != 0) {
    rec->status = TL_SWEEP_ERROR;
    return;
  }
  sw_world w;
  tl_error err;
  memset(&err, 0, sizeof err);
  tl_status st = sw_build(sw, rec->params, rec->sample, &w, &err);
  if (st != TL_OK) {
    rec->status = st == TL_ERR_DIVERGED ? TL_SWEEP_DIVERGED : TL_SWEEP_ERROR;
    set_message(rec, err.message[0] ? err.message : tl_status_name(st));
    return;
  }
  simulate(sw, &w, rec, stop);
  sw_world_free(&w);
}

tl_status tl_sweep_run_sample(const tl_sweep *sw, long sample, double *params, int nparam, char *message, int cap,
                              tl_sweep_result *out, tl_error *err) {
  if (!sw || !sw->prepared) return sw_error(err, TL_ERR_INVALID, NULL, 0, "sw", "the sweep is not prepared");
  if (sample < 0 || sample >= sw->samples)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "sample", "sample %ld is not in [0, %ld)", sample, sw->samples);
  if (!params || nparam != sw->nparam_column || !out || !message || cap < 1)
    return sw_error(err, TL_ERR_ARGUMENT, NULL, 0, "params", "params (%d doubles), message and out are needed",
                        sw->nparam_column);
  sw_record *rec = sw_record_new(sw, sample);
  if (!rec) return sw_error(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  sw_run_record(sw, rec, NULL);
  memcpy(params, rec->params, (size_t)nparam * sizeof(double));
  snprintf(message, (size_t)cap, "%s", rec->message);
  out->sample = sample;
  out->status = (tl_sweep_status)rec->status;
  out->params = params;
  memcpy(out->outcome, rec->outcome, sizeof out->outcome);
  out->message = message;
  free(rec);
  return TL_OK;
}
