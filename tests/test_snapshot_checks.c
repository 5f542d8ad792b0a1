/* Guards: src/world/snapshot.c (a snapshot checked by the setters' rules before anything is
 * applied). */
/* Issue 21 §2: a snapshot obeys the rules of the setters, checked before
 * anything is applied.
 *
 * robots/talus_small_quadruped (floating base) stands on the ground for 200
 * steps (so the snapshot holds contacts) with PD gains set. Its snapshot is
 * corrupted one field at a time: a negative kp and kd, an all-zero base
 * quaternion, q = 1e308, a negative and a NaN time, a negative friction,
 * restitution, erp and cfm in a contact record, a contact frame scaled by 2
 * (not orthonormal), a contact recorded twice. Each is refused with
 * TL_ERR_INVALID and a message naming what is wrong (a NaN time: a message
 * about time, not system counts), and the world's state is byte-identical to
 * what it was (check-then-apply). The uncorrupted snapshot is accepted.
 * The setters refuse the same values: tl_system_set_state with q = 1e308. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/talus.h"
#include "test_util.h"

#define HEADER 44
#define CONTACT 256
#define SYSTEM_HEAD 24

static tl_error err;

static void put_f64(unsigned char *buf, size_t at, double v) { memcpy(buf + at, &v, sizeof v); }

typedef struct corruption {
  const char *name, *expect;
  size_t at; /* byte offset of the double to overwrite; 0: special */
  double value;
  int special; /* 1: zero the base quaternion, 2: scale contact 0's frame, 3: contact 1 := contact 0 */
} corruption;

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_snapshot_checks ROBOTS_DIR\n");
    return 2;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/talus_small_quadruped/talus_small_quadruped.urdf", argv[1]);
  tl_model *m = NULL;
  tl_world *w = NULL;
  tl_system *s = NULL;
  if (!TL_CHECK(tl_model_load_urdf(path, NULL, &m, &err) == TL_OK && tl_world_create(&w, &err) == TL_OK &&
                    tl_world_add_ground(w, 0.0, 0.8, &err) == TL_OK && tl_world_add_system(w, m, &s, &err) == TL_OK,
                "build: %s", err.message))
    return tl_test_finish();
  int nq = tl_system_nq(s), nv = tl_system_nv(s);
  double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
  double *kp = calloc((size_t)nv, sizeof(double)), *kd = calloc((size_t)nv, sizeof(double));
  tl_model_default_q(m, q, nq, &err);
  q[2] = 0.35;
  for (int k = 6; k < nv; ++k) kp[k] = 40, kd[k] = 1;
  TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_OK && tl_system_set_pd_gains(s, kp, kd, nv, &err) == TL_OK &&
               tl_system_set_pd_targets(s, q, nq, u, nv, &err) == TL_OK,
           "state: %s", err.message);
  for (int i = 0; i < 200; ++i) tl_world_step(w, NULL);
  size_t n = tl_world_snapshot_size(w);
  unsigned char *before = malloc(n), *snap = malloc(n), *bad = malloc(n), *after = malloc(n);
  TL_CHECK(tl_world_snapshot_save(w, snap, n, NULL, &err) == TL_OK, "get_state: %s", err.message);
  uint32_t ncontact;
  memcpy(&ncontact, snap + 36, 4);
  if (!TL_CHECK(ncontact >= 2, "the standing quadruped has >= 2 contacts in its snapshot (%u)", ncontact))
    return tl_test_finish();
  /* the world moves on, so a wrongly applied snapshot would show */
  for (int i = 0; i < 10; ++i) tl_world_step(w, NULL);
  TL_CHECK(tl_world_snapshot_save(w, before, n, NULL, &err) == TL_OK, "get_state: %s", err.message);

  size_t c0 = HEADER, c1 = HEADER + CONTACT, f0 = c0 + 24; /* contact 0's doubles */
  size_t sys = HEADER + (size_t)ncontact * CONTACT + SYSTEM_HEAD;
  size_t sq = sys, skp = sys + 8 * (size_t)(nq + nv), skd = skp + 8 * (size_t)nv;
  const corruption cases[] = {
      {"negative kp", "kp of DOF", skp + 8 * 7, -40, 0},
      {"negative kd", "kd of DOF", skd + 8 * 6, -1, 0},
      {"q = 1e308", "q[8]", sq + 8 * 8, 1e308, 0},
      {"all-zero base quaternion", "quaternion", 0, 0, 1},
      {"negative time", "time", 24, -1, 0},
      {"NaN time", "time", 24, NAN, 0},
      {"negative friction", "friction", f0 + 8 * 13, -0.5, 0},
      {"negative restitution", "restitution", f0 + 8 * 14, -0.1, 0},
      {"negative cfm", "cfm", f0 + 8 * 17, -1e-6, 0},
      {"negative erp", "erp", f0 + 8 * 18, -0.2, 0},
      {"frame scaled by 2", "orthonormal", 0, 0, 2},
      {"a contact recorded twice", "twice", 0, 0, 3},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const corruption *c = &cases[k];
    memcpy(bad, snap, n);
    if (c->special == 1) {
      for (int i = 3; i < 7; ++i) put_f64(bad, sq + 8 * (size_t)i, 0);
    } else if (c->special == 2) {
      for (int i = 3; i < 12; ++i) {
        double v;
        memcpy(&v, bad + f0 + 8 * (size_t)i, 8);
        put_f64(bad, f0 + 8 * (size_t)i, 2 * v);
      }
    } else if (c->special == 3) {
      memcpy(bad + c1, bad + c0, CONTACT);
    } else {
      put_f64(bad, c->at, c->value);
    }
    memset(&err, 0, sizeof err);
    tl_status st = tl_world_snapshot_restore(w, bad, n, &err);
    TL_CHECK(st == TL_ERR_INVALID && strstr(err.message, c->expect) != NULL,
             "%s: refused naming '%s' (status %d: %s)", c->name, c->expect, (int)st, err.message);
    if (!strcmp(c->name, "NaN time"))
      TL_CHECK(strstr(err.message, "systems") == NULL, "NaN time: the message is not about system counts (%s)",
               err.message);
    TL_CHECK(tl_world_snapshot_save(w, after, n, NULL, &err) == TL_OK && memcmp(before, after, n) == 0,
             "%s: the world's state is byte-identical after the refusal", c->name);
  }
  TL_CHECK(tl_world_snapshot_restore(w, snap, n, &err) == TL_OK, "the uncorrupted snapshot is accepted: %s", err.message);
  TL_CHECK(tl_world_snapshot_save(w, after, n, NULL, &err) == TL_OK && memcmp(snap, after, n) == 0,
           "the uncorrupted snapshot is restored byte for byte");
  /* the setter refuses what the snapshot refuses */
  q[8] = 1e308;
  memset(&err, 0, sizeof err);
  TL_CHECK(tl_system_set_state(s, q, nq, u, nv, &err) == TL_ERR_ARGUMENT && strstr(err.message, "q[8]"),
           "tl_system_set_state refuses q[8] = 1e308 (%s)", err.message);
  free(before), free(snap), free(bad), free(after), free(q), free(u), free(kp), free(kd);
  tl_world_free(w);
  tl_model_free(m);
  return tl_test_finish();
}
