/* Guards: src/native/step.c (the step), src/contact/solver_gs.c and solver_direct.c (per-contact, Dantzig and PGS
 * solves), src/contact/lcp_dantzig.c, src/math/tl_dense.c (fixed-order kernels: no OpenBLAS kernel
 * or thread count may change a bit), controllers/trot.c. */
/* Bit-identical trajectories across OpenBLAS kernels, BLAS thread counts and
 * runs (issue 11).
 *
 * A child run (test_determinism --child ROBOTS_DIR SHARED_ROBOTS_DIR) steps
 * three scenes and prints one FNV-1a 64-bit hash of the bytes of every q and
 * u after every step of each:
 *   - ANYmal C trotting at 0.5 m/s for 5 s with the default per-contact
 *     solver (robots/talus_quadruped instead when the shared corpus is
 *     absent, said so on stdout);
 *   - robots/worlds/boxes_and_balls.xml for 2 s with the Dantzig solver
 *     (pivoting, Cholesky updates, the friction outer loop);
 *   - the same world for 2 s with the PGS solver.
 * The parent runs the child five times: the CPU's default OpenBLAS kernel
 * with OPENBLAS_NUM_THREADS 1 and 2, a forced other kernel (Sandybridge,
 * or Nehalem when the default is Sandybridge; x86-64 only) with 1 and 2
 * threads, and the first configuration once more; every hash must be equal.
 * The solvers use no BLAS (math/tl_dense.h), so a difference means a
 * CPU-dependent summation order came back into the step. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "talus/scene.h"
#include "talus/talus.h"
#include "test_util.h"
#include "trot.h"

#define DT 1e-3

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t hash_state(uint64_t h, const tl_system *s, double *q, double *u) {
  int nq = tl_system_nq(s), nv = tl_system_nv(s);
  if (tl_system_get_state(s, q, nq, u, nv, NULL) != TL_OK) return 0;
  h = fnv1a(h, q, (size_t)nq * sizeof(double));
  return fnv1a(h, u, (size_t)nv * sizeof(double));
}

/* Trot for 5 s; returns the hash, 0 on any failure (printed). */
static uint64_t run_trot(const char *urdf) {
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  tl_trot_controller c;
  memset(&c, 0, sizeof c);
  tl_error err;
  memset(&err, 0, sizeof err);
  double q[64] = {0}, u[64] = {0};
  uint64_t h = 0xcbf29ce484222325ull;
  int ok = tl_model_load_urdf(urdf, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
           tl_world_set_timestep(w, DT, &err) == TL_OK && tl_world_add_ground(w, 0.0, 0.8, &err) == TL_OK &&
           tl_world_add_system(w, m, &s, &err) == TL_OK && tl_system_nq(s) <= 64;
  if (ok) {
    int nq = tl_system_nq(s), nv = tl_system_nv(s);
    ok = tl_model_reference_q(m, q, nq, &err) == TL_OK && tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK;
    double minz = INFINITY;
    for (int g = 0; ok && g < tl_model_ngeom(m); ++g) {
      double lo[3], hi[3];
      if (tl_system_geom_aabb(s, g, lo, hi, NULL) == TL_OK && lo[2] < minz) minz = lo[2];
    }
    q[2] += 0.01 - minz;
    ok = ok && isfinite(minz) && tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK;
  }
  tl_trot_params p = tl_trot_default_params();
  p.speed = 0.5;
  ok = ok && tl_trot_init(&c, s, &p, &err) == TL_OK;
  for (int k = 0; ok && k < 5000; k++) {
    ok = tl_world_integrate1(w, &err) == TL_OK && tl_trot_update(&c, tl_world_time(w), &err) == TL_OK &&
         tl_world_integrate2(w, &err) == TL_OK;
    h = hash_state(h, s, q, u);
  }
  if (ok) printf("trot: base at (%.6f, %.6f, %.6f) after 5 s\n", q[0], q[1], q[2]);
  else printf("trot %s failed: %s\n", urdf, err.message);
  tl_trot_free(&c);
  tl_world_free(w);
  tl_model_free(m);
  return ok ? h : 0;
}

/* The world file for 2 s with the given solver. */
static uint64_t run_world(const char *path, tl_solver solver) {
  tl_world *w = NULL;
  tl_scene_info info;
  memset(&info, 0, sizeof info);
  tl_error err;
  memset(&err, 0, sizeof err);
  double q[64], u[64];
  uint64_t h = 0xcbf29ce484222325ull;
  int ok = tl_scene_load(path, &w, &info, &err) == TL_OK && tl_world_set_solver(w, solver, &err) == TL_OK;
  for (int k = 0; ok && k < 2000; k++) {
    ok = tl_world_step(w, &err) == TL_OK;
    for (int i = 0; ok && i < info.nsystem; i++) h = hash_state(h, info.systems[i].system, q, u);
  }
  if (!ok) printf("world %s solver %d failed: %s\n", path, (int)solver, err.message);
  tl_scene_info_free(&info);
  tl_world_free(w);
  return ok ? h : 0;
}

static int child(const char *robots, const char *shared) {
  char urdf[4096], world[4096];
  snprintf(urdf, sizeof urdf, "%s/anymal_c/urdf/anymal.urdf", shared);
  if (access(urdf, R_OK) != 0) {
    printf("ANYmal C absent (%s): trotting robots/talus_quadruped instead\n", urdf);
    snprintf(urdf, sizeof urdf, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  }
  snprintf(world, sizeof world, "%s/worlds/boxes_and_balls.xml", robots);
  uint64_t a = run_trot(urdf), b = run_world(world, TL_SOLVER_DANTZIG), c = run_world(world, TL_SOLVER_PGS);
  printf("HASH %016llx %016llx %016llx\n", (unsigned long long)a, (unsigned long long)b,
         (unsigned long long)c);
  return a && b && c ? 0 : 1;
}

/* The core type OpenBLAS picks on this CPU ("" if it does not say). */
static void default_core(const char *self, char *core, size_t n) {
  core[0] = 0;
  char cmd[4400], line[512];
  snprintf(cmd, sizeof cmd, "OPENBLAS_VERBOSE=2 '%s' --probe 2>&1", self);
  FILE *f = popen(cmd, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "Core: ", 6) == 0) {
      line[strcspn(line, "\r\n")] = 0;
      snprintf(core, n, "%.40s", line + 6);
    }
  pclose(f);
}

/* Run the child under the given environment; its HASH line into out. */
static int run_child(const char *self, const char *env, const char *robots, const char *shared,
                     char *out, size_t n) {
  char cmd[12800], line[512];
  snprintf(cmd, sizeof cmd, "env %s '%s' --child '%s' '%s'", env, self, robots, shared);
  FILE *f = popen(cmd, "r");
  out[0] = 0;
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "HASH ", 5) == 0) snprintf(out, n, "%.100s", line + 5);
    else printf("  %s", line);
  }
  out[strcspn(out, "\n")] = 0;
  return pclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--probe") == 0) { /* a BLAS call makes OpenBLAS say its core */
    double x[2] = {1, 2};
    return cblas_ddot(2, x, 1, x, 1) == 5.0 ? 0 : 1;
  }
  if (argc >= 4 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3]);
  if (argc < 3) {
    fprintf(stderr, "usage: test_determinism ROBOTS_DIR SHARED_ROBOTS_DIR\n");
    return 2;
  }
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (!TL_CHECK(len > 0, "cannot resolve /proc/self/exe")) return tl_test_finish();
  self[len] = 0;
  char core[64], other[64];
  default_core(self, core, sizeof core);
  snprintf(other, sizeof other, "%s", strcmp(core, "Sandybridge") == 0 ? "Nehalem" : "Sandybridge");
#if defined(__x86_64__)
  int force = 1;
#else
  int force = 0; /* kernel names are per architecture */
#endif
  printf("OpenBLAS default core: %s; forced: %s\n", core[0] ? core : "(not reported)",
         force ? other : "(none, not x86-64)");
  char envs[5][128];
  snprintf(envs[0], sizeof envs[0], "OPENBLAS_NUM_THREADS=1");
  snprintf(envs[1], sizeof envs[1], "OPENBLAS_NUM_THREADS=2");
  snprintf(envs[2], sizeof envs[2], "OPENBLAS_CORETYPE=%s OPENBLAS_NUM_THREADS=1", force ? other : "");
  snprintf(envs[3], sizeof envs[3], "OPENBLAS_CORETYPE=%s OPENBLAS_NUM_THREADS=2", force ? other : "");
  snprintf(envs[4], sizeof envs[4], "OPENBLAS_NUM_THREADS=1");
  char hashes[5][128];
  for (int i = 0; i < 5; i++) {
    int rc = run_child(self, envs[i], argv[1], argv[2], hashes[i], sizeof hashes[i]);
    printf("%-50s %s\n", envs[i], hashes[i]);
    TL_CHECK(rc == 0 && hashes[i][0], "child run under %s failed", envs[i]);
    if (i > 0)
      TL_CHECK(strcmp(hashes[i], hashes[0]) == 0, "trajectory hashes differ: %s gives %s, %s gives %s",
               envs[0], hashes[0], envs[i], hashes[i]);
  }
  return tl_test_finish();
}
