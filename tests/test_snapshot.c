/* Guards: src/world/snapshot.c (tl_world_snapshot_save / _restore: the whole state, bit for bit). */
/* Snapshots (issue 11): tl_world_snapshot_save / tl_world_snapshot_restore restore the
 * whole simulation state bit for bit.
 *
 *   trot   ANYmal C (../shared; robots/talus_quadruped when absent, said so)
 *          trotting at 0.5 m/s with the trot controller on flat ground, 1000
 *          steps; a snapshot after step 300; the original run goes on to
 *          1000, recording every q and u and the controller's commands (PD
 *          gains, targets, feedforward force). The snapshot is restored (a)
 *          into the same world and (b) into a fresh world built the same way,
 *          and the recorded commands replayed: every q and u of steps 301 to
 *          1000 equals the original bit for bit. (The controller's own memory
 *          is not the world's state: the commands are replayed, not
 *          recomputed.)
 *   pile   robots/worlds/boxes_and_balls.xml (stacked boxes, dropped balls,
 *          one bouncing) and a pile of 40 boxes dropped on each other, 1000
 *          steps, snapshot after 300, restored into the same world and a fresh
 *          one: every q bit for bit; also through a file
 *          (tl_world_snapshot_save_file / tl_world_snapshot_restore_file).
 *   pd     robots/talus_small_quadruped standing with PD gains and targets set
 *          once before the snapshot: restored into a fresh world whose PD
 *          gains are zero, it replays without any command bit for bit (the
 *          snapshot carries the gains and targets).
 *   errors a snapshot of another model (the quadruped's into a pendulum world,
 *          a box world's into a ball world) is refused with TL_ERR_INVALID
 *          naming the model, and the world's state is unchanged byte for
 *          byte; so are a truncated buffer, another version, a wrong byte
 *          order mark, a NaN in q, a buffer too small for get_state, a
 *          missing file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "talus/scene.h"
#include "talus/talus.h"
#include "test_util.h"
#include "trot.h"

#define NSTEP 1000
#define SNAP_AT 300

static tl_error err;

static void *snapshot(const tl_world *w, size_t *n) {
  *n = tl_world_snapshot_size(w);
  void *buf = malloc(*n);
  size_t written = 0;
  if (!TL_CHECK(buf && tl_world_snapshot_save(w, buf, *n, &written, &err) == TL_OK && written == *n, "get_state: %s",
                err.message)) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* ---------------------------------------------------------------- trot */

typedef struct trot_world {
  tl_model *m;
  tl_world *w;
  tl_system *s;
  int nq, nv;
} trot_world;

static int trot_world_build(trot_world *t, const char *urdf) {
  memset(t, 0, sizeof *t);
  double q[64] = {0}, u[64] = {0};
  int ok = tl_model_load_urdf(urdf, NULL, &t->m, &err) == TL_OK && tl_world_create(&t->w, &err) == TL_OK &&
           tl_world_add_ground(t->w, 0.0, 0.8, &err) == TL_OK && tl_world_add_system(t->w, t->m, &t->s, &err) == TL_OK;
  if (ok) {
    t->nq = tl_system_nq(t->s), t->nv = tl_system_nv(t->s);
    double minz = INFINITY;
    ok = tl_model_default_q(t->m, q, t->nq, &err) == TL_OK && tl_system_set_state(t->s, q, t->nq, u, t->nv, &err) == TL_OK;
    for (int g = 0; ok && g < tl_model_ngeom(t->m); ++g) {
      double lo[3], hi[3];
      if (tl_system_geom_aabb(t->s, g, lo, hi, NULL) == TL_OK && lo[2] < minz) minz = lo[2];
    }
    q[2] += 0.01 - minz;
    ok = ok && tl_system_set_state(t->s, q, t->nq, u, t->nv, &err) == TL_OK;
  }
  return TL_CHECK(ok, "trot world %s: %s", urdf, err.message);
}

static void trot_world_free(trot_world *t) {
  tl_world_free(t->w);
  tl_model_free(t->m);
}

/* Commands of one controller tick. */
typedef struct command {
  double kp[64], kd[64], qt[64], ut[64], tau[64];
} command;

static int apply(tl_system *s, const command *c, int nq, int nv) {
  return tl_system_set_pd_gains(s, c->kp, c->kd, nv, &err) == TL_OK &&
         tl_system_set_pd_targets(s, c->qt, nq, c->ut, nv, &err) == TL_OK &&
         tl_system_set_generalized_force(s, c->tau, nv, &err) == TL_OK;
}

/* Replay steps SNAP_AT..NSTEP-1 with the recorded commands; count the steps
 * whose q or u differ from the recorded ones. */
static int replay(trot_world *t, const command *cmd, const double *qs, const double *us) {
  double q[64], u[64];
  int differ = 0;
  for (int k = SNAP_AT; k < NSTEP; k++) {
    if (!(tl_world_integrate1(t->w, &err) == TL_OK && apply(t->s, &cmd[k - SNAP_AT], t->nq, t->nv) &&
          tl_world_integrate2(t->w, &err) == TL_OK && tl_system_get_state(t->s, q, t->nq, u, t->nv, &err) == TL_OK))
      return TL_CHECK(0, "replay step %d: %s", k, err.message), -1;
    differ += memcmp(q, qs + (size_t)(k - SNAP_AT) * 64, (size_t)t->nq * sizeof(double)) != 0 ||
              memcmp(u, us + (size_t)(k - SNAP_AT) * 64, (size_t)t->nv * sizeof(double)) != 0;
  }
  return differ;
}

static void check_trot(const char *robots, const char *shared) {
  char urdf[4096];
  snprintf(urdf, sizeof urdf, "%s/anymal_c/urdf/anymal.urdf", shared);
  if (access(urdf, R_OK) != 0) {
    printf("ANYmal C absent (%s): trotting robots/talus_quadruped instead\n", urdf);
    snprintf(urdf, sizeof urdf, "%s/talus_quadruped/talus_quadruped.urdf", robots);
  }
  trot_world t;
  if (!trot_world_build(&t, urdf)) return;
  tl_trot_controller c;
  memset(&c, 0, sizeof c);
  tl_trot_params p = tl_trot_default_params();
  p.speed = 0.5;
  int ok = tl_trot_init(&c, t.s, &p, &err) == TL_OK;
  command *cmd = calloc(NSTEP - SNAP_AT, sizeof *cmd);
  double *qs = calloc((NSTEP - SNAP_AT) * 64, sizeof(double)), *us = calloc((NSTEP - SNAP_AT) * 64, sizeof(double));
  void *snap = NULL;
  size_t nsnap = 0;
  for (int k = 0; ok && k < NSTEP; k++) {
    if (k == SNAP_AT) snap = snapshot(t.w, &nsnap);
    ok = tl_world_integrate1(t.w, &err) == TL_OK && tl_trot_update(&c, tl_world_time(t.w), &err) == TL_OK;
    if (ok && k >= SNAP_AT) {
      command *x = &cmd[k - SNAP_AT];
      memcpy(x->kp, c.kp, (size_t)t.nv * sizeof(double));
      memcpy(x->kd, c.kd, (size_t)t.nv * sizeof(double));
      memcpy(x->qt, c.q_target, (size_t)t.nq * sizeof(double));
      memcpy(x->ut, c.u_target, (size_t)t.nv * sizeof(double));
      memcpy(x->tau, c.tau, (size_t)t.nv * sizeof(double));
    }
    ok = ok && tl_world_integrate2(t.w, &err) == TL_OK;
    if (ok && k >= SNAP_AT)
      ok = tl_system_get_state(t.s, qs + (size_t)(k - SNAP_AT) * 64, t.nq, us + (size_t)(k - SNAP_AT) * 64, t.nv,
                               &err) == TL_OK;
  }
  tl_trot_free(&c);
  if (TL_CHECK(ok && snap, "trot run: %s", err.message)) {
    printf("trot: base at x = %.4f m after %d steps, snapshot of %zu bytes at step %d (%d contacts)\n", qs[(NSTEP - SNAP_AT - 1) * 64],
           NSTEP, nsnap, SNAP_AT, tl_world_ncontact(t.w));
    TL_CHECK(qs[(NSTEP - SNAP_AT - 1) * 64] > qs[0] + 0.01, "trot: the robot did not walk (x %.4f -> %.4f)", qs[0],
             qs[(NSTEP - SNAP_AT - 1) * 64]);
    int d = tl_world_snapshot_restore(t.w, snap, nsnap, &err) == TL_OK ? replay(&t, cmd, qs, us) : -1;
    printf("trot: restored into the same world, %d of %d replayed steps differ\n", d, NSTEP - SNAP_AT);
    TL_CHECK(d == 0, "trot, same world: %d steps differ (%s)", d, err.message);
    trot_world f;
    if (trot_world_build(&f, urdf)) {
      d = tl_world_snapshot_restore(f.w, snap, nsnap, &err) == TL_OK ? replay(&f, cmd, qs, us) : -1;
      printf("trot: restored into a fresh world, %d of %d replayed steps differ\n", d, NSTEP - SNAP_AT);
      TL_CHECK(d == 0, "trot, fresh world: %d steps differ (%s)", d, err.message);
      trot_world_free(&f);
    }
  }
  free(snap);
  free(cmd);
  free(qs);
  free(us);
  trot_world_free(&t);
}

/* ---------------------------------------------------------------- pile */

typedef struct scene {
  tl_world *w;
  tl_scene_info info;
} scene;

static int scene_load(scene *s, const char *path) {
  memset(s, 0, sizeof *s);
  return TL_CHECK(tl_scene_load(path, &s->w, &s->info, &err) == TL_OK, "%s: %s", path, err.message);
}

static void scene_free(scene *s) {
  tl_scene_info_free(&s->info);
  tl_world_free(s->w);
}

/* Step from the current state to step NSTEP, appending every system's q
 * (7 per object/system, only the first 7 coordinates) to out. */
static int run_scene(scene *s, int from, double *out) {
  for (int k = from; k < NSTEP; k++) {
    if (tl_world_step(s->w, &err) != TL_OK) return TL_CHECK(0, "step %d: %s", k, err.message);
    for (int i = 0; i < s->info.nsystem; i++) {
      tl_system *sys = s->info.systems[i].system;
      double q[64], u[64];
      tl_system_get_state(sys, q, tl_system_nq(sys), u, tl_system_nv(sys), NULL);
      memcpy(out + ((size_t)(k - from) * (size_t)s->info.nsystem + (size_t)i) * 7, q, 7 * sizeof(double));
    }
  }
  return 1;
}

static void check_scene(const char *path, const char *label) {
  scene s;
  if (!scene_load(&s, path)) return;
  size_t per = (size_t)s.info.nsystem * 7, nsnap = 0;
  double *orig = calloc((size_t)NSTEP * per, sizeof(double)), *again = calloc((size_t)NSTEP * per, sizeof(double));
  int ok = 1;
  for (int k = 0; ok && k < SNAP_AT; k++) ok = tl_world_step(s.w, &err) == TL_OK;
  void *snap = ok ? snapshot(s.w, &nsnap) : NULL;
  ok = ok && snap && run_scene(&s, SNAP_AT, orig);
  size_t bytes = (size_t)(NSTEP - SNAP_AT) * per * sizeof(double);
  if (ok && TL_CHECK(tl_world_snapshot_restore(s.w, snap, nsnap, &err) == TL_OK, "%s: set_state: %s", label, err.message)) {
    run_scene(&s, SNAP_AT, again);
    TL_CHECK(memcmp(orig, again, bytes) == 0, "%s: same world: the replay differs", label);
  }
  scene f;
  if (ok && scene_load(&f, path)) {
    memset(again, 0, bytes);
    if (TL_CHECK(tl_world_snapshot_restore(f.w, snap, nsnap, &err) == TL_OK, "%s: fresh set_state: %s", label, err.message)) {
      run_scene(&f, SNAP_AT, again);
      TL_CHECK(memcmp(orig, again, bytes) == 0, "%s: fresh world: the replay differs", label);
    }
    scene_free(&f);
  }
  char file[] = "/tmp/talus_test_snapshot_XXXXXX";
  int fd = mkstemp(file);
  if (ok && fd >= 0 && scene_load(&f, path)) {
    close(fd);
    memset(again, 0, bytes);
    int io = tl_world_snapshot_restore(s.w, snap, nsnap, &err) == TL_OK && tl_world_snapshot_save_file(s.w, file, &err) == TL_OK &&
             tl_world_snapshot_restore_file(f.w, file, &err) == TL_OK;
    if (TL_CHECK(io, "%s: file round trip: %s", label, err.message)) {
      run_scene(&f, SNAP_AT, again);
      TL_CHECK(memcmp(orig, again, bytes) == 0, "%s: through a file: the replay differs", label);
    }
    scene_free(&f);
  }
  unlink(file);
  printf("%s: %d objects, snapshot of %zu bytes at step %d (%d contacts); replays compared bit for bit over %d steps\n",
         label, s.info.nsystem, nsnap, SNAP_AT, tl_world_ncontact(s.w), NSTEP - SNAP_AT);
  free(snap);
  free(orig);
  free(again);
  scene_free(&s);
}

static void check_pile(const char *robots) {
  char path[4096];
  snprintf(path, sizeof path, "%s/worlds/boxes_and_balls.xml", robots);
  check_scene(path, "boxes_and_balls");
  char file[] = "/tmp/talus_test_snapshot_pile_XXXXXX";
  int fd = mkstemp(file);
  if (!TL_CHECK(fd >= 0, "mkstemp")) return;
  FILE *f = fdopen(fd, "w");
  fputs("<talus_world><ground/>", f);
  for (int i = 0; i < 40; i++)
    fprintf(f, "<object type='box' size='0.2 0.15 0.1' mass='1' pos='%.3f %.3f %.3f' rpy='%.2f %.2f %.2f'/>",
            0.05 * ((i * 7) % 5) - 0.1, 0.05 * ((i * 3) % 4) - 0.08, 0.1 + 0.13 * i, 0.1 * (i % 3), 0.2 * (i % 2), 0.3 * i);
  fputs("</talus_world>", f);
  fclose(f);
  check_scene(file, "pile of 40 boxes");
  unlink(file);
}

/* ------------------------------------------------------------------ pd */

static void check_pd(const char *robots) {
  char urdf[4096];
  snprintf(urdf, sizeof urdf, "%s/talus_small_quadruped/talus_small_quadruped.urdf", robots);
  trot_world a, b;
  if (!trot_world_build(&a, urdf) || !trot_world_build(&b, urdf)) return;
  double kp[64], kd[64], q[64], u[64], qa[64], ua[64];
  for (int k = 0; k < a.nv; k++) kp[k] = k < 6 ? 0 : 80, kd[k] = k < 6 ? 0 : 2;
  tl_model_default_q(a.m, q, a.nq, NULL);
  memset(u, 0, sizeof u);
  int ok = tl_system_set_pd_gains(a.s, kp, kd, a.nv, &err) == TL_OK &&
           tl_system_set_pd_targets(a.s, q, a.nq, u, a.nv, &err) == TL_OK;
  for (int k = 0; ok && k < SNAP_AT; k++) ok = tl_world_step(a.w, &err) == TL_OK;
  size_t n = 0;
  void *snap = ok ? snapshot(a.w, &n) : NULL;
  for (int k = SNAP_AT; ok && k < NSTEP; k++) ok = tl_world_step(a.w, &err) == TL_OK;
  ok = ok && snap && tl_system_get_state(a.s, qa, a.nq, ua, a.nv, &err) == TL_OK;
  ok = ok && tl_world_snapshot_restore(b.w, snap, n, &err) == TL_OK;
  for (int k = SNAP_AT; ok && k < NSTEP; k++) ok = tl_world_step(b.w, &err) == TL_OK;
  ok = ok && tl_system_get_state(b.s, q, b.nq, u, b.nv, &err) == TL_OK;
  if (TL_CHECK(ok, "pd: %s", err.message)) {
    printf("pd: standing quadruped, base height %.6f m; restored into a world with zero gains: final state %s\n", qa[2],
           memcmp(q, qa, (size_t)a.nq * sizeof(double)) == 0 && memcmp(u, ua, (size_t)a.nv * sizeof(double)) == 0
               ? "identical"
               : "DIFFERENT");
    TL_CHECK(qa[2] > 0.2, "pd: the quadruped fell (base %.4f m)", qa[2]);
    TL_CHECK(memcmp(q, qa, (size_t)a.nq * sizeof(double)) == 0 && memcmp(u, ua, (size_t)a.nv * sizeof(double)) == 0,
             "pd: the snapshot did not carry the PD gains and targets");
  }
  free(snap);
  trot_world_free(&a);
  trot_world_free(&b);
}

/* -------------------------------------------------------------- errors */

/* set_state must fail with `status`, the message must contain `needle`, and
 * the world's state must be unchanged byte for byte. */
static void refused(tl_world *w, const void *buf, size_t n, tl_status status, const char *needle, const char *label) {
  size_t n0;
  void *before = snapshot(w, &n0);
  memset(&err, 0, sizeof err);
  tl_status st = tl_world_snapshot_restore(w, buf, n, &err);
  printf("%s: %s\n", label, err.message);
  TL_CHECK(st == status && strstr(err.message, needle), "%s: status %d, message '%s' (want %d, '%s')", label, (int)st,
           err.message, (int)status, needle);
  size_t n1;
  void *after = snapshot(w, &n1);
  TL_CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0, "%s: the world changed", label);
  free(before);
  free(after);
}

static void check_errors(const char *robots) {
  char urdf[4096], pend[4096];
  snprintf(urdf, sizeof urdf, "%s/talus_small_quadruped/talus_small_quadruped.urdf", robots);
  snprintf(pend, sizeof pend, "%s/pendulum/pendulum.urdf", robots);
  trot_world a, b;
  if (!trot_world_build(&a, urdf) || !trot_world_build(&b, pend)) return;
  for (int k = 0; k < 50; k++) tl_world_step(a.w, NULL), tl_world_step(b.w, NULL);
  size_t n;
  unsigned char *snap = snapshot(a.w, &n);
  if (!snap) return;
  refused(b.w, snap, n, TL_ERR_INVALID, "another world or model", "quadruped snapshot into a pendulum world");
  refused(a.w, snap, n - 1, TL_ERR_INVALID, "bytes", "truncated by one byte");
  unsigned char *c = malloc(n);
  memcpy(c, snap, n);
  c[8] = 1; /* version 1 held the broadphase order, which is no longer state */
  refused(a.w, c, n, TL_ERR_INVALID, "version", "version 1");
  memcpy(c, snap, n);
  c[12] ^= 0xff;
  refused(a.w, c, n, TL_ERR_INVALID, "byte order", "byte order mark");
  memcpy(c, snap, n);
  c[0] = 'X';
  refused(a.w, c, n, TL_ERR_INVALID, "not a Talus snapshot", "bad magic");
  memcpy(c, snap, n);
  double nan = NAN;
  memcpy(c + n - 8 * (size_t)(12 * a.nv + 2 * a.nq) + 8 * 2, &nan, 8); /* q[2] of the last system */
  refused(a.w, c, n, TL_ERR_INVALID, "not finite", "NaN in q");
  free(c);
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_world_snapshot_save(a.w, snap, n - 1, NULL, &err) == TL_ERR_ARGUMENT && strstr(err.message, "needs"),
           "get_state into a short buffer: %s", err.message);
  TL_CHECK(tl_world_snapshot_restore_file(a.w, "/nonexistent/talus.state", &err) == TL_ERR_IO &&
               strstr(err.message, "/nonexistent/talus.state"),
           "load_state of a missing file: %s", err.message);
  free(snap);
  trot_world_free(&a);
  trot_world_free(&b);
  /* the same counts (one object, the ground), another geom: the fingerprint tells */
  const char *xml[2] = {"<talus_world><ground/><object type='box' size='0.2 0.2 0.2' mass='1' pos='0 0 1'/></talus_world>",
                        "<talus_world><ground/><object type='sphere' size='0.1' mass='1' pos='0 0 1'/></talus_world>"};
  scene sc[2];
  char file[] = "/tmp/talus_test_snapshot_obj_XXXXXX";
  for (int i = 0; i < 2; i++) {
    int fd = mkstemp(file);
    FILE *f = fdopen(fd, "w");
    fputs(xml[i], f);
    fclose(f);
    int ok = scene_load(&sc[i], file);
    unlink(file);
    strcpy(file, "/tmp/talus_test_snapshot_obj_XXXXXX");
    if (!ok) return;
  }
  unsigned char *box = snapshot(sc[0].w, &n);
  if (box) refused(sc[1].w, box, n, TL_ERR_INVALID, "another model", "box object snapshot into a ball world");
  free(box);
  scene_free(&sc[0]);
  scene_free(&sc[1]);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_snapshot trot|pile|pd|errors ROBOTS_DIR [SHARED_ROBOTS_DIR]\n");
    return 2;
  }
  const char *mode = argv[1], *robots = argv[2], *shared = argc > 3 ? argv[3] : "../shared/robots";
  if (strcmp(mode, "trot") == 0) check_trot(robots, shared);
  else if (strcmp(mode, "pile") == 0) check_pile(robots);
  else if (strcmp(mode, "pd") == 0) check_pd(robots);
  else if (strcmp(mode, "errors") == 0) check_errors(robots);
  else return fprintf(stderr, "unknown mode %s\n", mode), 2;
  return tl_test_finish();
}
