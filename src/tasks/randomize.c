/* Domain randomization shared by the tasks: option ranges, per-episode
 * sampling from an environment's random stream, and the inertial changes
 * through the public run-time setters (tl_system_set_link_inertial), which
 * recompute the merged body inertias (RaiSim's updateMassInfo).
 *
 * The parameters follow legged_gym's domain randomization (Rudin, Hoeller,
 * Reist, Hutter, "Learning to walk in minutes using massively parallel deep
 * reinforcement learning", CoRL 2021: friction, added base mass, pushes)
 * and raisimGymTorch's (link mass scaling, COM offsets, motor strength). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tasks/task_internal.h"

const char *const tl_rand_param_names[TL_RAND_NPARAM] = {
    "mass_scale", "added_base_mass", "com_offset_x", "com_offset_y", "com_offset_z",
    "friction",   "motor_strength",  "kp_scale",     "kd_scale"};

tl_status tl_rand_options(tl_opts *o, unsigned allowed, int push, double default_friction, tl_rand_ranges *r,
                          tl_error *err) {
  memset(r, 0, sizeof(*r));
  r->mass_scale[0] = r->mass_scale[1] = 1.0;
  r->friction[0] = r->friction[1] = default_friction;
  r->motor_strength[0] = r->motor_strength[1] = 1.0;
  r->kp_scale[0] = r->kp_scale[1] = r->kd_scale[0] = r->kd_scale[1] = 1.0;
  r->push_interval = 15.0;
  tl_status st = TL_OK;
  if (!st && (allowed & (1u << TL_RAND_MASS_SCALE))) st = tl_opts_range(o, "mass_scale", 0.01, 100, r->mass_scale, err);
  if (!st && (allowed & (1u << TL_RAND_ADDED_BASE_MASS)))
    st = tl_opts_range(o, "added_base_mass", -1e6, 1e6, r->added_base_mass, err);
  if (!st && (allowed & (1u << TL_RAND_COM_X))) st = tl_opts_range(o, "com_offset", -10, 10, r->com_offset, err);
  if (!st && (allowed & (1u << TL_RAND_FRICTION))) st = tl_opts_range(o, "friction", 0, 100, r->friction, err);
  if (!st && (allowed & (1u << TL_RAND_MOTOR_STRENGTH)))
    st = tl_opts_range(o, "motor_strength", 0, 100, r->motor_strength, err);
  if (!st && (allowed & (1u << TL_RAND_KP_SCALE))) st = tl_opts_range(o, "kp_scale", 0, 100, r->kp_scale, err);
  if (!st && (allowed & (1u << TL_RAND_KD_SCALE))) st = tl_opts_range(o, "kd_scale", 0, 100, r->kd_scale, err);
  if (!st && push) st = tl_opts_double(o, "push_velocity", 0, 100, &r->push_velocity, err);
  if (!st && push) st = tl_opts_double(o, "push_interval", 1e-3, 1e9, &r->push_interval, err);
  return st;
}

int tl_rand_active(const tl_rand_ranges *r, int param) {
  const double *range = NULL;
  double nominal = 0;
  switch (param) {
  case TL_RAND_MASS_SCALE: range = r->mass_scale; nominal = 1; break;
  case TL_RAND_ADDED_BASE_MASS: range = r->added_base_mass; break;
  case TL_RAND_COM_X: case TL_RAND_COM_Y: case TL_RAND_COM_Z: range = r->com_offset; break;
  case TL_RAND_FRICTION: return r->friction[0] != r->friction[1];
  case TL_RAND_MOTOR_STRENGTH: range = r->motor_strength; nominal = 1; break;
  case TL_RAND_KP_SCALE: range = r->kp_scale; nominal = 1; break;
  case TL_RAND_KD_SCALE: range = r->kd_scale; nominal = 1; break;
  default: return 0;
  }
  return range[0] != nominal || range[1] != nominal;
}

void tl_rand_sample(const tl_rand_ranges *r, tl_rng *rng, double v[TL_RAND_NPARAM]) {
  v[TL_RAND_MASS_SCALE] = tl_rng_range(rng, r->mass_scale[0], r->mass_scale[1]);
  v[TL_RAND_ADDED_BASE_MASS] = tl_rng_range(rng, r->added_base_mass[0], r->added_base_mass[1]);
  v[TL_RAND_COM_X] = tl_rng_range(rng, r->com_offset[0], r->com_offset[1]);
  v[TL_RAND_COM_Y] = tl_rng_range(rng, r->com_offset[0], r->com_offset[1]);
  v[TL_RAND_COM_Z] = tl_rng_range(rng, r->com_offset[0], r->com_offset[1]);
  v[TL_RAND_FRICTION] = tl_rng_range(rng, r->friction[0], r->friction[1]);
  v[TL_RAND_MOTOR_STRENGTH] = tl_rng_range(rng, r->motor_strength[0], r->motor_strength[1]);
  v[TL_RAND_KP_SCALE] = tl_rng_range(rng, r->kp_scale[0], r->kp_scale[1]);
  v[TL_RAND_KD_SCALE] = tl_rng_range(rng, r->kd_scale[0], r->kd_scale[1]);
}

/* ---------------- link inertials ---------------- */

void tl_rand_links_free(tl_rand_links *l) {
  free(l->name);
  free(l->mass);
  free(l->com);
  free(l->inertia);
  memset(l, 0, sizeof(*l));
}

static int has_name(const tl_rand_links *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->name[i], name) == 0) return 1;
  return 0;
}

tl_status tl_rand_links_init(tl_rand_links *l, tl_system *sys, tl_error *err) {
  memset(l, 0, sizeof(*l));
  const tl_model *m = tl_system_model(sys);
  int nf = tl_model_nframe(m), cap = nf + 1;
  l->name = calloc((size_t)cap, sizeof(*l->name));
  l->mass = calloc((size_t)cap, sizeof(double));
  l->com = calloc(3 * (size_t)cap, sizeof(double));
  l->inertia = calloc(9 * (size_t)cap, sizeof(double));
  if (!l->name || !l->mass || !l->com || !l->inertia) {
    tl_rand_links_free(l);
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  }
  /* the root link, then the child link of every joint frame */
  l->base = -1;
  for (int f = -1; f < nf; f++) {
    const char *name = f < 0 ? tl_model_body_name(m, 0) : tl_model_frame_link(m, f);
    if (!name || !name[0] || strlen(name) >= sizeof(l->name[0]) || has_name(l, name)) continue;
    int i = l->n;
    if (tl_system_link_inertial(sys, name, &l->mass[i], l->com + 3 * i, l->inertia + 9 * i, NULL)) continue;
    /* a link the setter refuses even at its nominal values (e.g. a singular inertia with a
       positive mass, accepted with a warning by the loader) keeps its values: not randomized */
    if (tl_system_set_link_inertial(sys, name, l->mass[i], l->com + 3 * i, l->inertia + 9 * i, NULL)) continue;
    snprintf(l->name[i], sizeof(l->name[i]), "%s", name);
    l->n++;
    int body = f < 0 ? 0 : tl_model_frame_body(m, f);
    if (body == 0 && (l->base < 0 || l->mass[i] > l->mass[l->base])) l->base = i;
  }
  if (l->base < 0) {
    tl_rand_links_free(l);
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "link", "'%s': no link of the base body found",
                        tl_model_name(m));
  }
  return TL_OK;
}

/* Link i of l: mass times ms, inertia times ms * is, COM moved by off (NULL: none), add kg at the
 * (moved) COM (base link only). */
static tl_status apply_link(const tl_rand_links *l, tl_system *sys, int i, double ms, double is, const double *off,
                            double add, tl_error *err) {
  double mass = l->mass[i] * ms, com[3], I[9];
  memcpy(com, l->com + 3 * i, sizeof(com));
  for (int k = 0; k < 9; k++) I[k] = l->inertia[9 * i + k] * ms * is;
  if (off)
    for (int k = 0; k < 3; k++) com[k] += off[k];
  if (i == l->base) {
    /* the added mass sits at the (offset) COM: a point mass there adds no rotational inertia */
    mass += add;
    if (!(mass > 0)) mass = l->mass[i] * ms; /* never remove more than the link has */
  } else if (l->mass[i] == 0) {
    return TL_OK;
  }
  return tl_system_set_link_inertial(sys, l->name[i], mass, com, I, err);
}

tl_status tl_rand_apply_inertia(const tl_rand_links *l, tl_system *sys, const double v[TL_RAND_NPARAM],
                                tl_error *err) {
  for (int i = 0; i < l->n; i++) {
    tl_status st = apply_link(l, sys, i, v[TL_RAND_MASS_SCALE], 1.0, i == l->base ? v + TL_RAND_COM_X : NULL,
                              v[TL_RAND_ADDED_BASE_MASS], err);
    if (st) return st;
  }
  return TL_OK;
}

tl_status tl_rand_apply_links(const tl_rand_links *l, tl_system *sys, const double *mass_scale,
                              const double *inertia_scale, const double *com_offset, double added_base_mass,
                              tl_error *err) {
  for (int i = 0; i < l->n; i++) {
    double add = added_base_mass;
    if (i == l->base && !(l->mass[i] * mass_scale[i] + add > 0))
      return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "base_mass_add",
                          "link '%s' would weigh %g kg (%g kg scaled, %+g kg added): it must stay > 0", l->name[i],
                          l->mass[i] * mass_scale[i] + add, l->mass[i] * mass_scale[i], add);
    tl_status st = apply_link(l, sys, i, mass_scale[i], inertia_scale[i], com_offset + 3 * i, add, err);
    if (st) return st;
  }
  return TL_OK;
}
