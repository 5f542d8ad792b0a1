/* talus_bench: the worlds the benchmark steps (see bench_scene.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCENE_PI 3.14159265358979323846

/* ------------------------------------------------------- random state */

static uint64_t rng_state;

void bench_rng_seed(uint64_t seed) { rng_state = seed; }

static uint64_t rng_next(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double bench_rng_uniform(double lo, double hi) {
  return lo + (hi - lo) * ((double)(rng_next() >> 11) * 0x1.0p-53);
}

double bench_rng_normal(void) { /* Box-Muller */
  double a = bench_rng_uniform(1e-300, 1.0), b = bench_rng_uniform(0.0, 2.0 * SCENE_PI);
  return sqrt(-2.0 * log(a)) * cos(b);
}

static void rng_quaternion(double *q) { /* uniform on SO(3): normalised Gaussian 4-vector */
  double n = 0.0;
  do {
    n = 0.0;
    for (int k = 0; k < 4; ++k) {
      q[k] = bench_rng_normal();
      n += q[k] * q[k];
    }
  } while (n < 1e-12);
  n = sqrt(n);
  for (int k = 0; k < 4; ++k) q[k] /= n;
}

static double rng_joint(const tl_model *m, int dof) {
  double lo = -INFINITY, hi = INFINITY;
  tl_model_dof_limits(m, dof, &lo, &hi, NULL);
  if (!isfinite(lo) || !isfinite(hi) || !(hi > lo)) {
    lo = -1.0;
    hi = 1.0;
  }
  return bench_rng_uniform(lo, hi);
}

void bench_random_state(const tl_model *m, double *q, double *u) {
  for (int b = 0; b < tl_model_nbody(m); ++b) {
    int iq = tl_model_joint_q_index(m, b), iu = tl_model_joint_u_index(m, b);
    switch (tl_model_joint_type(m, b)) {
      case TL_JOINT_FLOATING:
        q[iq] = bench_rng_uniform(-1, 1);
        q[iq + 1] = bench_rng_uniform(-1, 1);
        q[iq + 2] = bench_rng_uniform(0.5, 1.5);
        rng_quaternion(q + iq + 3);
        break;
      case TL_JOINT_SPHERICAL: rng_quaternion(q + iq); break;
      case TL_JOINT_UNIVERSAL:
        q[iq] = rng_joint(m, iu);
        q[iq + 1] = rng_joint(m, iu + 1);
        break;
      case TL_JOINT_REVOLUTE:
      case TL_JOINT_PRISMATIC: q[iq] = rng_joint(m, iu); break;
      default: break;
    }
  }
  for (int k = 0; k < tl_model_nv(m); ++k) u[k] = bench_rng_normal();
  /* a state the robot can be in: mimic joints on their relation (the world
   * enforces it; off it, every step would start with a large correction) */
  for (int b = 0; b < tl_model_nbody(m); ++b) {
    int iu = tl_model_joint_u_index(m, b), j = -1, jb = -1;
    double mult, offset;
    tl_joint_type t = tl_model_joint_type(m, b);
    if ((t != TL_JOINT_REVOLUTE && t != TL_JOINT_PRISMATIC) || tl_model_dof_mimic(m, iu, &j, &mult, &offset, NULL) != TL_OK ||
        j < 0)
      continue;
    for (int c = 0; c < tl_model_nbody(m); ++c)
      if (tl_model_joint_u_index(m, c) == j) jb = c;
    if (jb < 0) continue;
    q[tl_model_joint_q_index(m, b)] = mult * q[tl_model_joint_q_index(m, jb)] + offset;
    u[iu] = mult * u[j];
  }
}

/* ------------------------------------------------ contact-free world */

void bench_free_world_free(bench_free_world *fw) {
  tl_world_free(fw->world);
  tl_model_free(fw->model);
  free(fw->q);
  memset(fw, 0, sizeof(*fw));
}

int bench_free_world_create(const char *urdf, int fixed_base, bench_free_world *fw, tl_error *err) {
  memset(fw, 0, sizeof(*fw));
  tl_load_options opt = tl_load_options_default();
  opt.base = fixed_base ? TL_BASE_FIXED : TL_BASE_FLOATING;
  if (tl_model_load_urdf(urdf, &opt, &fw->model, err) != TL_OK) return -1;
  int nq = tl_model_nq(fw->model), nv = tl_model_nv(fw->model);
  fw->q = calloc((size_t)nq + 4 * (size_t)nv + 1, sizeof(double));
  if (!fw->q) return -1;
  fw->u = fw->q + nq;
  double *kp = fw->u + nv, *kd = kp + nv, *zero = kd + nv;
  bench_rng_seed(BENCH_SEED);
  bench_random_state(fw->model, fw->q, fw->u);
  tl_status st = tl_world_create(&fw->world, err);
  if (!st) st = tl_world_add_system(fw->world, fw->model, &fw->sys, err);
  if (!st) st = tl_system_set_state(fw->sys, fw->q, nq, fw->u, nv, err);
  for (int b = 0; b < tl_model_nbody(fw->model); ++b) {
    if (tl_model_joint_type(fw->model, b) == TL_JOINT_FLOATING) continue;
    int iu = tl_model_joint_u_index(fw->model, b);
    for (int k = 0; k < tl_joint_nv(tl_model_joint_type(fw->model, b)); ++k) {
      kp[iu + k] = BENCH_KP;
      kd[iu + k] = BENCH_KD;
    }
  }
  if (!st) st = tl_system_set_pd_gains(fw->sys, kp, kd, nv, err);
  if (!st) st = tl_system_set_pd_targets(fw->sys, fw->q, nq, zero, nv, err);
  if (st) {
    bench_free_world_free(fw);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ box scenes */

static void quat_from_euler(double q[4], double roll, double pitch, double yaw) { /* z y x */
  double cr = cos(roll / 2), sr = sin(roll / 2), cp = cos(pitch / 2), sp = sin(pitch / 2);
  double cy = cos(yaw / 2), sy = sin(yaw / 2);
  q[0] = cr * cp * cy + sr * sp * sy;
  q[1] = sr * cp * cy - cr * sp * sy;
  q[2] = cr * sp * cy + sr * cp * sy;
  q[3] = cr * cp * sy - sr * sp * cy;
}

static void put_box(scene_box *b, double a, double x, double y, double z, const double *quat) {
  b->size[0] = b->size[1] = b->size[2] = a;
  b->pos[0] = x;
  b->pos[1] = y;
  b->pos[2] = z;
  if (quat)
    memcpy(b->quat, quat, sizeof(b->quat));
  else
    b->quat[0] = 1, b->quat[1] = b->quat[2] = b->quat[3] = 0;
}

/* 100 boxes of 10 cm, 1 kg, in a 5 x 5 x 4 grid 13 cm apart with random
 * yaw, roll and pitch (seeded), dropped into a bin 0.7 m square with walls
 * 0.5 m high, left to settle for 2 s into a pile about three boxes deep. */
static void build_pile100(bench_scene *s) {
  memset(s, 0, sizeof(*s));
  s->name = "pile100";
  s->doc = "100 boxes of 10 cm and 1 kg dropped at random orientations into a 0.7 m square bin, "
           "settled for 2 s into a pile (timed at rest)";
  s->box_mass = 1.0;
  s->mu = 0.8;
  s->settle_steps = 2000;
  const double a = 0.1, half = 0.35, wall = 0.1, hw = 0.25;
  for (int k = 0; k < 4; k++) { /* walls */
    scene_box *w = &s->stat[s->nstatic++];
    put_box(w, 0, 0, 0, hw, NULL);
    if (k < 2) {
      w->size[0] = wall, w->size[1] = 2 * half + 2 * wall, w->size[2] = 2 * hw;
      w->pos[0] = (k ? 1 : -1) * (half + wall / 2);
    } else {
      w->size[0] = 2 * half + 2 * wall, w->size[1] = wall, w->size[2] = 2 * hw;
      w->pos[1] = (k == 3 ? 1 : -1) * (half + wall / 2);
    }
  }
  bench_rng_seed(777);
  for (int l = 0; l < 4; l++)
    for (int j = 0; j < 5; j++)
      for (int i = 0; i < 5; i++) {
        double q[4];
        quat_from_euler(q, bench_rng_uniform(-0.4, 0.4), bench_rng_uniform(-0.4, 0.4),
                        bench_rng_uniform(-SCENE_PI, SCENE_PI));
        put_box(&s->box[s->nbox++], a, (i - 2) * 0.13 + bench_rng_uniform(-0.01, 0.01),
                (j - 2) * 0.13 + bench_rng_uniform(-0.01, 0.01), 0.1 + 0.15 * l, q);
      }
}

/* 16 boxes of 10 cm, 1 kg: 4 columns 2 mm apart, each 4 boxes high, placed
 * touching (each box on the one below, the lowest on the ground), settled
 * for 0.5 s (timed at rest). Neighbouring columns are within Talus's
 * speculative contact margin (5 mm), so their side faces make contacts that
 * never push. */
static void build_stack4x4(bench_scene *s) {
  memset(s, 0, sizeof(*s));
  s->name = "stack4x4";
  s->doc = "16 boxes of 10 cm and 1 kg in 4 columns 2 mm apart, 4 boxes high, standing on the "
           "ground (timed at rest)";
  s->box_mass = 1.0;
  s->mu = 0.8;
  s->settle_steps = 500;
  const double a = 0.1, gap = 0.002;
  for (int l = 0; l < 4; l++)
    for (int i = 0; i < 4; i++) put_box(&s->box[s->nbox++], a, (i - 1.5) * (a + gap), 0, a / 2 + a * l, NULL);
}

const bench_scene_spec bench_scenes[] = {{"pile100", build_pile100}, {"stack4x4", build_stack4x4}, {NULL, NULL}};

const bench_scene_spec *bench_scene_of(const char *name) {
  for (const bench_scene_spec *s = bench_scenes; s->name; s++)
    if (!strcmp(s->name, name)) return s;
  return NULL;
}

int bench_scene_talus(const bench_scene *s, tl_world **out, tl_system **sys_out, tl_error *err) {
  tl_world *w = NULL;
  *out = NULL;
  tl_status st = tl_world_create(&w, err);
  if (!st) st = tl_world_add_ground(w, 0.0, s->mu, err);
  for (int i = 0; i < s->nstatic && !st; i++) {
    double R[9];
    const double *q = s->stat[i].quat;
    R[0] = 1 - 2 * (q[2] * q[2] + q[3] * q[3]), R[1] = 2 * (q[1] * q[2] - q[0] * q[3]),
    R[2] = 2 * (q[1] * q[3] + q[0] * q[2]);
    R[3] = 2 * (q[1] * q[2] + q[0] * q[3]), R[4] = 1 - 2 * (q[1] * q[1] + q[3] * q[3]),
    R[5] = 2 * (q[2] * q[3] - q[0] * q[1]);
    R[6] = 2 * (q[1] * q[3] - q[0] * q[2]), R[7] = 2 * (q[2] * q[3] + q[0] * q[1]),
    R[8] = 1 - 2 * (q[1] * q[1] + q[2] * q[2]);
    int idx;
    st = tl_world_add_static_geom(w, TL_GEOM_BOX, s->stat[i].size, s->stat[i].pos, R, NULL, &idx, err);
  }
  if (!st) st = tl_world_set_default_material(w, s->mu, 0.0, 0.01, err);
  for (int i = 0; i < s->nbox && !st; i++) {
    tl_model *m = NULL;
    tl_system *sys = NULL;
    st = tl_model_create_primitive(TL_GEOM_BOX, s->box[i].size, s->box_mass, NULL, &m, err);
    if (!st) st = tl_world_add_system(w, m, &sys, err);
    tl_model_free(m);
    double q[7], u[6] = {0, 0, 0, 0, 0, 0};
    memcpy(q, s->box[i].pos, 3 * sizeof(double));
    memcpy(q + 3, s->box[i].quat, 4 * sizeof(double));
    if (!st) st = tl_system_set_state(sys, q, 7, u, 6, err);
    if (!st && sys_out) sys_out[i] = sys;
  }
  if (st) {
    tl_world_free(w);
    return -1;
  }
  *out = w;
  return 0;
}

int bench_scene_world(const bench_scene_spec *spec, tl_world **out, tl_error *err) {
  static bench_scene s; /* large: not on the stack */
  spec->build(&s);
  if (bench_scene_talus(&s, out, NULL, err)) return -1;
  for (int i = 0; i < s.settle_steps; i++)
    if (tl_world_step(*out, err) != TL_OK) {
      tl_world_free(*out);
      *out = NULL;
      return -1;
    }
  return 0;
}
