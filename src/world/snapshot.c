/* World snapshots: the whole state that influences the next step, as a
 * versioned byte buffer (talus/world.h, tl_world_snapshot_save).
 *
 * Layout (version 2; every number in the byte order of the machine that
 * wrote it, which the header's order mark records; doubles IEEE-754):
 *   header   char magic[8] "TLSTATE", u32 version, u32 order mark 0x01020304,
 *            u64 total size, f64 time, u32 nsystem, u32 ncontact, u32 ngeom
 *   contacts ncontact x { i32 sa, ba, ga, sb, bb, gb; f64 pos[3], frame[9],
 *            depth, mu, restitution, threshold, vtarget, cfm, erp, lambda[3],
 *            impact[3], vn_pre, 3 reserved } (the last step's contacts: the
 *            next step warm-starts from their impulses), then for a world
 *            with loop constraints nconstraint x { f64 lambda[6], force[3],
 *            torque[3] } (their warm starts and last wrench). This is the engine's
 *            section: written, checked and applied by the engine's snapshot
 *            hooks (world/world_engine.h; the native engine's in
 *            src/native/native_snapshot.c), so this file reaches no engine
 *            workspace; an engine without hooks (a plugin) has no snapshot.
 *   systems  nsystem x { u64 fingerprint; i32 nq, nv, integrator, 0;
 *            f64 q[nq], u[nv], kp[nv], kd[nv], q_target[nq], u_target[nv],
 *            tau_ff[nv], ext[nv], tau_applied[nv],
 *            lambda_joint[TL_JOINT_SLOTS nv] }
 * The fingerprint hashes each system's structure (joint types, tree, names,
 * geoms), not its parameters: a snapshot restores into a world built the
 * same way, also after its masses or gains were randomized.
 * Version 1 also held the broadphase's sweep order (i32 [ngeom] after the
 * header), which decided the order of the contacts; since the broadphase
 * sorts its pairs by the state alone (contact/broadphase.c), nothing of it is state. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "world/world_internal.h"

#define SNAP_MAGIC "TLSTATE"
#define SNAP_VERSION 2u
#define SNAP_ORDER 0x01020304u
#define SNAP_HEADER (8 + 4 + 4 + 8 + 8 + 4 * 3)

/* ---------------- fingerprint ---------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t fingerprint(const tl_model *m) {
  uint64_t h = 0xcbf29ce484222325ull;
  int dims[4] = {m->nq, m->nv, m->nbody, m->ngeom};
  h = fnv(h, dims, sizeof dims);
  for (int b = 0; b < m->nbody; b++) {
    int t[2] = {(int)m->jnt_type[b], m->parent[b]};
    h = fnv(h, t, sizeof t);
    h = fnv(h, m->body_name[b], strlen(m->body_name[b]));
    h = fnv(h, m->joint_name[b], strlen(m->joint_name[b]));
  }
  for (int g = 0; g < m->ngeom; g++) {
    int t[2] = {(int)m->geom_type[g], m->geom_body[g]};
    h = fnv(h, t, sizeof t);
  }
  return h;
}

/* ---------------- sizes ---------------- */

static size_t system_bytes(const tl_system *s) {
  size_t nq = (size_t)s->m->nq, nv = (size_t)s->m->nv;
  return 8 + 4 * 4 + 8 * (2 * nq + (7 + TL_JOINT_SLOTS) * nv);
}

/* A world whose engine has no snapshot hooks has no snapshot (tl_world_snapshot_save refuses it):
 * its size is that of the header and the systems. */
size_t tl_world_snapshot_size(const tl_world *w) {
  if (!w) return 0;
  const tl_world_snapshot_hooks *h = w->engine->snapshot;
  size_t n = SNAP_HEADER + (h ? h->bytes(w) : 0);
  for (int i = 0; i < w->nsystem; i++) n += system_bytes(w->systems[i]);
  return n;
}

size_t tl_world_state_size_max(const tl_world *w) {
  const tl_world_snapshot_hooks *h = w->engine->snapshot;
  size_t n = SNAP_HEADER + (h ? h->bytes_max(w) : 0);
  for (int i = 0; i < w->nsystem; i++) n += system_bytes(w->systems[i]);
  return n;
}

/* ---------------- writing ---------------- */

typedef struct wbuf {
  unsigned char *p;
} wbuf;

static void put(wbuf *b, const void *src, size_t n) {
  memcpy(b->p, src, n);
  b->p += n;
}
static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(wbuf *b, int v) {
  int32_t x = v;
  put(b, &x, 4);
}
static void put_f64s(wbuf *b, const double *v, size_t n) { put(b, v, n * sizeof(double)); }

static void put_system(wbuf *b, const tl_system *s) {
  size_t nq = (size_t)s->m->nq, nv = (size_t)s->m->nv;
  uint64_t fp = fingerprint(s->m);
  put(b, &fp, 8);
  put_i32(b, s->m->nq);
  put_i32(b, s->m->nv);
  put_i32(b, (int)s->integrator);
  put_i32(b, 0);
  put_f64s(b, s->d.q, nq);
  put_f64s(b, s->d.u, nv);
  put_f64s(b, s->kp, nv);
  put_f64s(b, s->kd, nv);
  put_f64s(b, s->q_target, nq);
  put_f64s(b, s->u_target, nv);
  put_f64s(b, s->tau_ff, nv);
  put_f64s(b, s->ext, nv);
  put_f64s(b, s->tau_applied, nv);
  put_f64s(b, s->lambda_joint, TL_JOINT_SLOTS * nv);
}

/* A plugin engine keeps solver state (warm starts, its own contacts) the
 * snapshot cannot hold, so a restore would not replay bit for bit: refused. */
static tl_status plugin_refused(const tl_world *w, tl_error *err) {
  return tl_error_set(err, TL_ERR_UNSUPPORTED, NULL, 0, "engine",
                      "snapshots hold the native engine's state; this world runs on engine '%s' (set q and u "
                      "with tl_system_set_state instead)", tl_world_engine_name(w));
}

tl_status tl_world_snapshot_save(const tl_world *w, void *buf, size_t size, size_t *written, tl_error *err) {
  if (written) *written = 0;
  if (!w || !buf) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "buf", "world and buffer must not be NULL");
  const tl_world_snapshot_hooks *h = w->engine->snapshot;
  if (!h) return plugin_refused(w, err);
  size_t need = tl_world_snapshot_size(w);
  if (size < need)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "size",
                        "snapshot buffer of %zu bytes, the world's state needs %zu (tl_world_snapshot_size)", size, need);
  wbuf b = {buf};
  put(&b, SNAP_MAGIC, 8);
  put_u32(&b, SNAP_VERSION);
  put_u32(&b, SNAP_ORDER);
  uint64_t total = need;
  put(&b, &total, 8);
  put_f64s(&b, &w->time, 1);
  put_u32(&b, (uint32_t)w->nsystem);
  put_u32(&b, (uint32_t)h->count(w));
  put_u32(&b, (uint32_t)h->ngeom(w));
  h->put(w, &b.p);
  for (int i = 0; i < w->nsystem; i++) put_system(&b, w->systems[i]);
  if (written) *written = need;
  return TL_OK;
}

/* ---------------- reading (check everything, then apply) ---------------- */

typedef struct rbuf {
  const unsigned char *p, *end;
} rbuf;

static int get(rbuf *b, void *dst, size_t n) {
  if ((size_t)(b->end - b->p) < n) return -1;
  memcpy(dst, b->p, n);
  b->p += n;
  return 0;
}

static int get_i32(rbuf *b, int *v) {
  int32_t x;
  if (get(b, &x, 4)) return -1;
  *v = x;
  return 0;
}

/* A pointer to n doubles in the buffer (copied out later), all finite. */
static const unsigned char *get_f64s(rbuf *b, size_t n, int *finite) {
  if ((size_t)(b->end - b->p) < n * sizeof(double)) return NULL;
  const unsigned char *at = b->p;
  for (size_t i = 0; i < n; i++) {
    double x;
    memcpy(&x, at + i * sizeof(double), sizeof x);
    if (!isfinite(x)) *finite = 0;
  }
  b->p += n * sizeof(double);
  return at;
}

static tl_status bad(tl_error *err, const char *what) {
  return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "%s", what);
}

/* Check one system's record against system s by the setters' rules
 * (tl_system_set_state, set_pd_gains, set_pd_targets). */
static tl_status check_system(const tl_system *s, int i, rbuf *b, tl_error *err) {
  uint64_t fp;
  int nq, nv, integ, pad, finite = 1;
  if (get(b, &fp, 8) || get_i32(b, &nq) || get_i32(b, &nv) || get_i32(b, &integ) || get_i32(b, &pad))
    return bad(err, "truncated system record");
  if (fp != fingerprint(s->m) || nq != s->m->nq || nv != s->m->nv)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot",
                        "system %d: the snapshot was taken of another model (nq %d, nv %d, structure "
                        "%016llx) than '%s' (nq %d, nv %d, structure %016llx)",
                        i, nq, nv, (unsigned long long)fp, s->m->name, s->m->nq, s->m->nv,
                        (unsigned long long)fingerprint(s->m));
  if (integ != TL_INTEGRATOR_EULER && integ != TL_INTEGRATOR_RK4)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "system %d: unknown integrator %d", i, integ);
  size_t n = 2 * (size_t)nq + (7 + TL_JOINT_SLOTS) * (size_t)nv;
  const unsigned char *at = get_f64s(b, n, &finite);
  if (!at) return bad(err, "truncated system record");
  if (!finite)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "system %d: a state value is not finite", i);
  /* q u kp kd q_target ... in the buffer (read with memcpy: it need not be aligned); nothing allocated */
  const unsigned char *q = at, *kp = at + ((size_t)nq + (size_t)nv) * 8, *kd = kp + (size_t)nv * 8,
                      *qt = kd + (size_t)nv * 8;
  tl_error e;
  memset(&e, 0, sizeof e);
  tl_status st = TL_OK;
  if (tl_system_check_q(s->m, q, "q", TL_ERR_INVALID, &e) || tl_system_check_q(s->m, qt, "q_target", TL_ERR_INVALID, &e))
    st = tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "system %d ('%s'): %s", i, s->m->name, e.message);
  for (int k = 0; k < nv && !st; k++) {
    double p, d;
    memcpy(&p, kp + (size_t)k * 8, 8);
    memcpy(&d, kd + (size_t)k * 8, 8);
    if (p < 0 || d < 0)
      st = tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "system %d ('%s'): %s of DOF %d is %g: gains must be >= 0",
                        i, s->m->name, p < 0 ? "kp" : "kd", k, p < 0 ? p : d);
  }
  return st;
}

static void take(rbuf *b, double *dst, size_t n) {
  memcpy(dst, b->p, n * sizeof(double));
  b->p += n * sizeof(double);
}

static void apply_system(rbuf *b, tl_system *s) {
  size_t nq = (size_t)s->m->nq, nv = (size_t)s->m->nv;
  int skip, integ = TL_INTEGRATOR_EULER;
  b->p += 8;
  get_i32(b, &skip);
  get_i32(b, &skip);
  get_i32(b, &integ);
  get_i32(b, &skip);
  s->integrator = (tl_integrator)integ;
  tl_world_filters_changed(s->world);
  take(b, s->d.q, nq);
  take(b, s->d.u, nv);
  take(b, s->kp, nv);
  take(b, s->kd, nv);
  take(b, s->q_target, nq);
  take(b, s->u_target, nv);
  take(b, s->tau_ff, nv);
  take(b, s->ext, nv);
  tl_system_wrench_ext_replaced(s); /* the restored forces come without their points */
  take(b, s->tau_applied, nv);
  take(b, s->lambda_joint, TL_JOINT_SLOTS * nv);
  s->kin_valid = s->dyn_valid = 0;
}

tl_status tl_world_snapshot_restore(tl_world *w, const void *buf, size_t size, tl_error *err) {
  if (!w || !buf) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "buf", "world and buffer must not be NULL");
  const tl_world_snapshot_hooks *h = w->engine->snapshot;
  if (!h) return plugin_refused(w, err);
  rbuf b = {buf, (const unsigned char *)buf + size};
  char magic[8];
  uint32_t version = 0, order = 0, ns = 0, nc = 0, ng = 0;
  uint64_t total = 0;
  double time = 0;
  if (get(&b, magic, 8) || memcmp(magic, SNAP_MAGIC, 8) != 0)
    return bad(err, "not a Talus snapshot (no TLSTATE header)");
  if (get(&b, &version, 4) || version != SNAP_VERSION)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "snapshot version %u, this Talus reads version %u",
                        version, SNAP_VERSION);
  if (get(&b, &order, 4) || order != SNAP_ORDER)
    return bad(err, "snapshot written on a machine of the other byte order");
  if (get(&b, &total, 8) || total != size)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "snapshot of %zu bytes, its header says %llu",
                        size, (unsigned long long)total);
  if (get(&b, &time, 8) || get(&b, &ns, 4) || get(&b, &nc, 4) || get(&b, &ng, 4)) return bad(err, "truncated header");
  if (!isfinite(time) || time < 0)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "time %g s: expected a finite number >= 0", time);
  if (ns != (uint32_t)w->nsystem || ng != (uint32_t)h->ngeom(w))
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot",
                        "the snapshot comes from another world or model: it has %u systems and %u geoms, this "
                        "world %d and %d", ns, ng, w->nsystem, h->ngeom(w));
  if (nc > (uint32_t)h->capacity(w))
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "%u contacts, this world holds at most %d", nc,
                        h->capacity(w));
  const unsigned char *body = b.p;
  tl_status st = h->check(w, &b.p, b.end, (int)nc, err); /* the engine section */
  const unsigned char *systems = b.p;
  for (int i = 0; i < w->nsystem && !st; i++) st = check_system(w->systems[i], i, &b, err);
  if (!st && b.p != b.end) st = bad(err, "trailing bytes after the last system");
  if (st) return st;
  /* everything checked: apply */
  w->time = time;
  h->apply(w, body, (int)nc);
  b.p = systems;
  for (int i = 0; i < w->nsystem; i++) apply_system(&b, w->systems[i]);
  return TL_OK;
}

/* ---------------- files ---------------- */

tl_status tl_world_snapshot_save_file(const tl_world *w, const char *path, tl_error *err) {
  if (!w || !path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "world and path must not be NULL");
  size_t n = tl_world_snapshot_size(w);
  void *buf = malloc(n);
  if (!buf) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  tl_status st = tl_world_snapshot_save(w, buf, n, NULL, err);
  if (!st) st = tl_write_file(path, buf, n, "the snapshot file", err);
  free(buf);
  return st;
}

/* The largest snapshot any world can hold: a header, the contact records of
 * the largest contact buffer and the systems' records. Reads are bounded by
 * the size of the world the snapshot is loaded into (the file's size is known
 * before anything is read, so /dev/zero or a huge file is refused at once). */
tl_status tl_world_snapshot_restore_file(tl_world *w, const char *path, tl_error *err) {
  if (!w || !path) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "path", "world and path must not be NULL");
  size_t most = tl_world_state_size_max(w);
  char *buf = NULL;
  size_t n = 0;
  tl_error e;
  memset(&e, 0, sizeof e);
  tl_status st = tl_read_file(path, most, &buf, &n, &e);
  if (st) {
    if (err) *err = e;
    if (st == TL_ERR_IO && strstr(e.message, "larger than"))
      return tl_error_set(err, TL_ERR_INVALID, path, 0, NULL,
                          "the snapshot file is larger than any snapshot of this world can be (%zu bytes)", most);
    return st;
  }
  st = tl_world_snapshot_restore(w, buf, n, &e);
  free(buf);
  if (st) return tl_error_set(err, st, path, 0, NULL, "%s", e.message);
  return TL_OK;
}

/* ---------------- deprecated names (before issue 22) ---------------- */

size_t tl_world_state_size(const tl_world *w) { return tl_world_snapshot_size(w); }
tl_status tl_world_get_state(const tl_world *w, void *buf, size_t size, size_t *written, tl_error *err) {
  return tl_world_snapshot_save(w, buf, size, written, err);
}
tl_status tl_world_set_state(tl_world *w, const void *buf, size_t size, tl_error *err) {
  return tl_world_snapshot_restore(w, buf, size, err);
}
tl_status tl_world_save_state(const tl_world *w, const char *path, tl_error *err) {
  return tl_world_snapshot_save_file(w, path, err);
}
tl_status tl_world_load_state(tl_world *w, const char *path, tl_error *err) {
  return tl_world_snapshot_restore_file(w, path, err);
}
