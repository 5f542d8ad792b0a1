/* batch_stand: a program built against an installed Talus (see CMakeLists.txt).
 *
 * Loads a floating-base URDF, makes a batch of 4 worlds (ground plane, 1 ms steps) on 2 threads,
 * starts every robot 2 cm above its standing height with the implicit PD holding its default
 * configuration (kp 300, kd 10 on every joint; with USE_STAND_CONTROLLER through
 * controllers/stand.h instead), steps 1 s and prints each base height. Exit status 0 when every
 * base stays between 0.1 and 2 m. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <talus/talus.h>
#ifdef USE_STAND_CONTROLLER
#include "stand.h"
#endif

#define NENV 4

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s URDF\n", argv[0]);
    return 2;
  }
  tl_error err;
  tl_batch_options opt = tl_batch_options_default();
  opt.nthread = 2;
  opt.base = TL_BASE_FLOATING;
  tl_batch *b = NULL;
  if (tl_batch_create_file(argv[1], NENV, &opt, &b, &err)) {
    fprintf(stderr, "error: %s\n", err.message);
    return 1;
  }
  int nq = tl_batch_nq(b), nv = tl_batch_nv(b);
  double *q = calloc((size_t)NENV * nq, sizeof(double)), *kp = calloc((size_t)NENV * nv, sizeof(double));
  double *kd = calloc((size_t)NENV * nv, sizeof(double));
  tl_batch_get_state(b, q, NENV * nq, NULL, 0, &err);
  for (int e = 0; e < NENV; e++) {
    q[e * nq + 2] = 0.6; /* then lowered onto the ground by the first steps */
    for (int k = 6; k < nv; k++) kp[e * nv + k] = 300, kd[e * nv + k] = 10;
  }
  int ok = tl_batch_set_state(b, q, NENV * nq, NULL, 0, &err) == TL_OK;
#ifdef USE_STAND_CONTROLLER
  for (int e = 0; e < NENV && ok; e++) {
    tl_stand_controller stand;
    ok = tl_stand_init(&stand, tl_batch_system(b, e, 0), NULL, 0, 300, 10, &err) == TL_OK;
    tl_stand_free(&stand); /* the system keeps the gains and targets */
  }
#else
  ok = ok && tl_batch_set_pd_gains(b, kp, kd, NENV * nv, &err) == TL_OK &&
       tl_batch_set_pd_targets(b, q, NENV * nq, NULL, 0, &err) == TL_OK;
#endif
  ok = ok && tl_batch_step(b, 1000, &err) == TL_OK;
  if (!ok) fprintf(stderr, "error: %s\n", err.message);
  const double *state = tl_batch_q(b);
  for (int e = 0; e < NENV && ok; e++) {
    double z = state[e * nq + 2];
    printf("env %d: base height %.4f m\n", e, z);
    ok = z > 0.1 && z < 2.0;
  }
  free(q), free(kp), free(kd);
  tl_batch_free(b);
  return ok ? 0 : 1;
}
