/* talus_bench: the worlds the benchmark steps, shared by talus_bench and
 * talus_prof (bench/prof.c, the same scenes for profilers).
 *
 *  - the seeded random state of the query columns (bench_random_state) and
 *    the contact-free step's world (bench_free_world_create);
 *  - many-contact scenes of free boxes (bench_scene_*): `pile100`, 100
 *    boxes dropped into a bin and settled into a pile, and `stack4x4`, a
 *    wall of 4 columns of 4 boxes standing on the ground. Each scene is a
 *    list of boxes (free bodies) and static boxes, so a peer engine can
 *    build the same scene (bench_peer_scene_create). */
#ifndef TALUS_BENCH_SCENE_H
#define TALUS_BENCH_SCENE_H

#include <stdint.h>

#include "talus/talus.h"

/* ------------------------------------------------------------ random state */

void bench_rng_seed(uint64_t seed);
double bench_rng_uniform(double lo, double hi);
double bench_rng_normal(void);
/* Seeded random state of a robot (base in [-1,1]^2 x [0.5,1.5], uniform
 * orientation, joints uniform within their limits or in [-1, 1], ball joints
 * uniform quaternions, u ~ N(0, 1), mimic joints on their relation), drawn
 * from the stream of bench_rng_seed. */
void bench_random_state(const tl_model *m, double *q, double *u);

#define BENCH_SEED 20240601u
#define BENCH_KP 300.0 /* stand-like PD gains on the joint DOFs (N m/rad, N m s/rad) */
#define BENCH_KD 10.0

/* The contact-free step's world of one robot: no ground, the system at the
 * seeded random state (the first draw of BENCH_SEED), implicit PD (BENCH_KP,
 * BENCH_KD) on the joint DOFs holding that configuration at rest. */
typedef struct bench_free_world {
  tl_model *model;
  tl_world *world;
  tl_system *sys;
  double *q, *u; /* the random state */
} bench_free_world;
int bench_free_world_create(const char *urdf, int fixed_base, bench_free_world *out, tl_error *err);
void bench_free_world_free(bench_free_world *fw);

/* ------------------------------------------------------------ box scenes */

#define SCENE_MAX_BOXES 128
#define SCENE_MAX_STATIC 8

typedef struct scene_box {
  double size[3]; /* full edge lengths (m) */
  double pos[3];  /* centre (m) */
  double quat[4]; /* orientation (w, x, y, z) */
} scene_box;

typedef struct bench_scene {
  const char *name;
  const char *doc;          /* one sentence: what it is */
  int nbox, nstatic;
  double box_mass;          /* kg, every box */
  double mu;                /* friction of every pair (ground, walls, boxes) */
  scene_box box[SCENE_MAX_BOXES];     /* free boxes at the start */
  scene_box stat[SCENE_MAX_STATIC];   /* static boxes (walls) */
  int settle_steps;         /* steps before timing, dt 1 ms */
} bench_scene;

typedef struct bench_scene_spec {
  const char *name;
  void (*build)(bench_scene *s);
} bench_scene_spec;

/* The scenes, NULL-terminated by name. */
extern const bench_scene_spec bench_scenes[];
const bench_scene_spec *bench_scene_of(const char *name);
/* Talus's world of scene s: ground plane z = 0, the static boxes, the free
 * boxes at their start poses, the world's defaults otherwise; not settled.
 * sys (may be NULL): receives the box systems (s->nbox). */
int bench_scene_talus(const bench_scene *s, tl_world **out, tl_system **sys, tl_error *err);
/* Build scene `spec`, create its Talus world and step its settling steps. */
int bench_scene_world(const bench_scene_spec *spec, tl_world **out, tl_error *err);

#endif
