/* Guards: src/native/step.c, src/contact/constraint_rows.c, src/contact/broadphase.c (stepping never
 * allocates, every solver), controllers/stand.c. */
/* Stepping never allocates (DESIGN.md): malloc, calloc and realloc are
 * wrapped at link time (-Wl,--wrap) and counted while worlds with robots,
 * contacts, heightmap terrain, effort-limited PD, joint limits and each of
 * the three solvers step. Allocation at creation is allowed and not counted.
 * --wrap sees every call made by Talus and the controllers (static
 * libraries), not calls made inside shared libraries; the Dantzig solver uses
 * LAPACKE's _work routines, which take memory from the caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stand.h"
#include "talus/talus.h"
#include "test_util.h"

#include "test_alloc.h"

static tl_error err;

/* Step n times with counting on; returns the allocations seen. */
static int count_steps(tl_world *w, int n) {
  nalloc = 0;
  counting = 1;
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = tl_world_step(w, &err) == TL_OK;
  counting = 0;
  TL_CHECK(ok, "stepping failed: %s", err.message);
  return nalloc;
}

static void scene(const char *robots, tl_solver solver, const char *label) {
  tl_world *w = NULL;
  tl_model *m = NULL;
  tl_system *s = NULL;
  char path[1024];
  snprintf(path, sizeof(path), "%s/talus_quadruped/talus_quadruped.urdf", robots);
  int ok = tl_world_create(&w, &err) == TL_OK && tl_model_load_urdf(path, NULL, &m, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK && tl_world_set_solver(w, solver, &err) == TL_OK;
  enum { N = 20 };
  double h[N * N];
  for (int i = 0; i < N * N; i++) h[i] = 0.01 * ((i * 7919) % 13) / 13.0;
  ok = ok && tl_world_add_heightmap(w, N, N, -1.0, -1.0, 0.1, 0.1, h, N * N, NULL, NULL, &err) == TL_OK;
  double size[3] = {0.3, 0.3, 0.3}, pos[3] = {1.5, 0, 0.15};
  ok = ok && tl_world_add_static_geom(w, TL_GEOM_BOX, size, pos, NULL, NULL, NULL, &err) == TL_OK;
  tl_model *ball = NULL;
  tl_system *bs = NULL;
  double r[3] = {0.1, 0, 0};
  ok = ok && tl_model_create_primitive(TL_GEOM_SPHERE, r, 1.0, "ball", &ball, &err) == TL_OK &&
       tl_world_add_system(w, ball, &bs, &err) == TL_OK;
  int nq = ok ? tl_system_nq(s) : 0, nv = ok ? tl_system_nv(s) : 0;
  double q[64], u[64] = {0};
  ok = ok && tl_model_reference_q(m, q, nq, &err) == TL_OK;
  if (ok) q[2] = 0.56;
  ok = ok && tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK;
  double bq[7] = {1.5, 0, 0.5, 1, 0, 0, 0}, bu[6] = {0};
  ok = ok && tl_system_set_state(bs, bq, 7, bu, 6, &err) == TL_OK;
  tl_stand_controller stand;
  memset(&stand, 0, sizeof(stand));
  /* stiff gains saturate the 80 N m effort limits while landing: boxed PD rows */
  ok = ok && tl_stand_init(&stand, s, NULL, nq, 3000, 30, &err) == TL_OK;
  TL_CHECK(ok, "%s: setup: %s", label, err.message);
  if (ok) {
    count_steps(w, 20); /* warm-up: the BLAS/LAPACK libraries initialise on first use */
    int n = count_steps(w, 1500);
    printf("%s: %d allocations in 1500 steps (%d contacts at the end)\n", label, n, tl_world_ncontact(w));
    TL_CHECK(n == 0, "%s: %d allocations while stepping", label, n);
    /* snapshots: get and set into a caller's buffer allocate nothing */
    static unsigned char buf[1 << 16];
    size_t len = 0;
    nalloc = 0;
    counting = 1;
    int snap_ok = tl_world_snapshot_save(w, buf, sizeof buf, &len, &err) == TL_OK &&
                  tl_world_snapshot_restore(w, buf, len, &err) == TL_OK;
    counting = 0;
    TL_CHECK(snap_ok && nalloc == 0, "%s: snapshot get/set: %s, %d allocations", label, err.message, nalloc);
  }
  tl_stand_free(&stand);
  tl_world_free(w);
  tl_model_free(m);
  tl_model_free(ball);
}

int main(int argc, char **argv) {
  const char *robots = argc > 1 ? argv[1] : "robots";
  scene(robots, TL_SOLVER_PER_CONTACT, "per-contact solver");
  scene(robots, TL_SOLVER_PGS, "PGS");
  scene(robots, TL_SOLVER_DANTZIG, "Dantzig");
  return tl_test_finish();
}
