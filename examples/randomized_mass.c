/* randomized_mass: dynamics randomization, the way a reinforcement-learning
 * environment does it between episodes.
 *
 * The default quadruped (robots/talus_quadruped) stands on the ground with
 * the `stand` controller (the engine's implicit PD, controllers/stand.h).
 * Before each of 5 episodes we draw a random factor in [0.8, 1.2] from a
 * seeded generator (same numbers on every run) and scale the base link's
 * mass by it with tl_system_set_link_inertial; the rotational inertia is
 * scaled too (a denser trunk of the same shape), the COM stays. That one
 * call also recomputes everything that depends on the mass (merged body
 * inertias, total mass, M and h: RaiSim's updateMassInfo), so there is
 * nothing else to call. Then we reset the state, stand for 2 s and print
 * where the base settles: a heavier trunk squeezes the PD-held knees a bit
 * further, so the base sits lower.
 *
 * The same system is reused for every episode: changing a parameter never
 * allocates, so this is cheap enough to do every episode of a training run.
 *
 * Build: with the project; run ./build/randomized_mass [URDF] [SEED].
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talus/talus.h>

#include "stand.h"

#ifndef TALUS_ROBOTS_DIR
#define TALUS_ROBOTS_DIR "robots"
#endif

#define EPISODES 5
#define DT 1e-3        /* s */
#define EPISODE_T 2.0  /* s of standing per episode */
#define BASE_LINK "base"

/* A tiny seeded generator (xorshift64*), so the example prints the same
 * numbers everywhere; uniform in [0, 1). */
static double uniform01(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double)((*s * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

static int fail(const tl_error *err) {
  fprintf(stderr, "error: %s\n", err->message);
  return 1;
}

int main(int argc, char **argv) {
  const char *urdf = argc > 1 ? argv[1] : TALUS_ROBOTS_DIR "/talus_quadruped/talus_quadruped.urdf";
  uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 42;
  uint64_t rng = seed * 2654435761u + 0x9E3779B97F4A7C15ull; /* never 0 */
  tl_error err;

  /* The world: ground z = 0 (mu 0.8), dt 1 ms; the robot added once. */
  tl_model *model = NULL;
  tl_world *world = NULL;
  tl_system *robot = NULL;
  if (tl_model_load_urdf(urdf, NULL, &model, &err) != TL_OK) return fail(&err);
  if (tl_world_create(&world, &err) != TL_OK || tl_world_set_timestep(world, DT, &err) != TL_OK ||
      tl_world_add_ground(world, 0.0, 0.8, &err) != TL_OK ||
      tl_world_add_system(world, model, &robot, &err) != TL_OK) {
    tl_model_free(model);
    tl_world_free(world);
    return fail(&err);
  }
  tl_model_free(model); /* the system has its own copy of every parameter */
  const tl_model *m = tl_system_model(robot);
  int nq = tl_system_nq(robot), nv = tl_system_nv(robot);
  double *q0 = calloc((size_t)nq, sizeof(double)), *q = calloc((size_t)nq, sizeof(double));
  double *u0 = calloc((size_t)nv, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  tl_stand_controller stand;
  memset(&stand, 0, sizeof stand);
  int rc = 1;
  if (!q0 || !q || !u0 || !u) {
    fprintf(stderr, "error: out of memory\n");
    goto done;
  }

  /* The nominal inertial parameters of the base link, kept to scale from. */
  double mass0, com0[3], inertia0[9];
  if (tl_system_link_inertial(robot, BASE_LINK, &mass0, com0, inertia0, &err) != TL_OK) {
    fail(&err);
    goto done;
  }

  /* The initial state of every episode: the reference configuration (this
   * robot's standing pose), lowered until its lowest collision geom is 1 cm
   * above the ground, at rest. */
  if (tl_model_reference_q(m, q0, nq, &err) != TL_OK || tl_system_set_state(robot, q0, nq, u0, nv, &err) != TL_OK) {
    fail(&err);
    goto done;
  }
  double lowest = 1e300;
  for (int g = 0; g < tl_model_ngeom(m); g++) {
    double lo[3], hi[3];
    if (tl_system_geom_aabb(robot, g, lo, hi, NULL) == TL_OK && lo[2] < lowest) lowest = lo[2];
  }
  q0[2] += 0.01 - lowest;

  /* The stand controller holds the initial joint angles (gains on the 12 leg
   * joints, none on the floating base). Gains and targets stay in the system
   * across episodes. */
  if (tl_system_set_state(robot, q0, nq, u0, nv, &err) != TL_OK ||
      tl_stand_init(&stand, robot, q0, nq, TL_STAND_DEFAULT_KP, TL_STAND_DEFAULT_KD, &err) != TL_OK) {
    fail(&err);
    goto done;
  }

  printf("randomized base mass, seed %llu: nominal base link mass %.3f kg, start height %.4f m\n",
         (unsigned long long)seed, mass0, q0[2]);
  printf("  episode  factor  base mass (kg)  total mass (kg)  settled base height (m)  base speed (m/s)\n");
  for (int ep = 0; ep < EPISODES; ep++) {
    /* 1. randomize: mass and inertia times f, COM unchanged */
    double f = 0.8 + 0.4 * uniform01(&rng), inertia[9];
    for (int i = 0; i < 9; i++) inertia[i] = f * inertia0[i];
    if (tl_system_set_link_inertial(robot, BASE_LINK, f * mass0, com0, inertia, &err) != TL_OK) {
      fail(&err);
      goto done;
    }
    /* 2. reset: same initial state every episode */
    if (tl_system_set_state(robot, q0, nq, u0, nv, &err) != TL_OK) {
      fail(&err);
      goto done;
    }
    /* 3. roll out: stand for EPISODE_T seconds */
    int steps = (int)(EPISODE_T / DT + 0.5);
    for (int k = 0; k < steps; k++) {
      if (tl_world_integrate1(world, &err) != TL_OK || tl_stand_update(&stand, &err) != TL_OK ||
          tl_world_integrate2(world, &err) != TL_OK) {
        fail(&err);
        goto done;
      }
    }
    /* 4. observe: the base height q[2] once it has settled */
    tl_system_get_state(robot, q, nq, u, nv, NULL);
    double speed = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    printf("  %7d  %6.4f  %14.3f  %15.3f  %23.4f  %16.1e\n", ep + 1, f, f * mass0, tl_model_total_mass(m), q[2],
           speed);
  }
  rc = 0;

done:
  tl_stand_free(&stand);
  free(q0);
  free(q);
  free(u0);
  free(u);
  tl_world_free(world);
  return rc;
}
