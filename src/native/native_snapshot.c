/* The native engine's section of a world snapshot (world/world_engine.h,
 * tl_world_snapshot_hooks; the layout in src/world/snapshot.c's opening
 * comment): the last step's contacts, from which the next step warm-starts,
 * ncontact x { i32 sa, ba, ga, sb, bb, gb; f64 pos[3], frame[9], depth, mu,
 * restitution, threshold, vtarget, cfm, erp, lambda[3], impact[3], vn_pre,
 * 3 reserved }, then, when the world has loop constraints (talus/constraint.h),
 * nconstraint x { f64 lambda[6] (the warm-start impulses of the constraint's
 * row slots, N s or N m s), force[3], torque[3] (its last wrench) } (no bytes
 * without constraints: such snapshots are as before). Moved here from
 * snapshot.c (put_contact, check_contacts and its checks, apply_contact) so
 * that the snapshot reaches the workspace through the engine table only. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "native/native_internal.h"

#define SNAP_CONTACT (6 * 4 + 29 * 8)
#define SNAP_LOOP ((TL_CGEOM_ROWS + 6) * 8)

/* ---------------- writing ---------------- */

static void put(unsigned char **p, const void *src, size_t n) {
  memcpy(*p, src, n);
  *p += n;
}

static void put_i32(unsigned char **p, int v) {
  int32_t x = v;
  put(p, &x, 4);
}

static void put_contact(unsigned char **p, const tl_wcontact *c) {
  int ids[6] = {c->sa, c->ba, c->ga, c->sb, c->bb, c->gb};
  for (int i = 0; i < 6; i++) put_i32(p, ids[i]);
  double f[29];
  memcpy(f, c->pos, 3 * sizeof(double));
  memcpy(f + 3, c->frame, 9 * sizeof(double));
  double s[7] = {c->depth, c->mu, c->restitution, c->threshold, c->vtarget, c->cfm, c->erp};
  memcpy(f + 12, s, sizeof s);
  memcpy(f + 19, c->lambda, 3 * sizeof(double));
  memcpy(f + 22, c->impact, 3 * sizeof(double));
  f[25] = c->vn_pre;
  f[26] = f[27] = f[28] = 0; /* reserved */
  put(p, f, 29 * sizeof(double));
}

static void snap_put(const tl_world *w, unsigned char **p) {
  for (int i = 0; i < tl_native_of(w)->ncontact; i++) put_contact(p, &tl_native_of(w)->contacts[i]);
  for (int k = 0; k < w->nconstraint; k++) { /* loop constraints: warm starts and wrench */
    put(p, tl_native_of(w)->loop_lambda + (size_t)k * TL_CGEOM_ROWS, TL_CGEOM_ROWS * sizeof(double));
    put(p, w->constraints[k].force, 3 * sizeof(double));
    put(p, w->constraints[k].torque, 3 * sizeof(double));
  }
}

static size_t snap_bytes(const tl_world *w) {
  return SNAP_CONTACT * (size_t)tl_native_of(w)->ncontact + SNAP_LOOP * (size_t)w->nconstraint;
}

static size_t snap_bytes_max(const tl_world *w) {
  return SNAP_CONTACT * (size_t)(tl_native_of(w)->cap_contact > 0 ? tl_native_of(w)->cap_contact : 0) +
         SNAP_LOOP * (size_t)w->nconstraint;
}

static int snap_count(const tl_world *w) { return tl_native_of(w)->ncontact; }
static int snap_ngeom(const tl_world *w) { return tl_native_of(w)->ngeomref; }
static int snap_capacity(const tl_world *w) { return tl_native_of(w)->cap_contact; }

/* ---------------- reading (check everything, then apply) ---------------- */

static int get_i32(const unsigned char **p, const unsigned char *end, int *v) {
  int32_t x;
  if ((size_t)(end - *p) < 4) return -1;
  memcpy(&x, *p, 4);
  *p += 4;
  *v = x;
  return 0;
}

static int geom_ok(const tl_world *w, int s, int b, int g) {
  if (s < 0) return b == -1 && g >= 0 && g < w->nstatic;
  if (s >= w->nsystem) return 0;
  const tl_model *m = w->systems[s]->m;
  return b >= 0 && b < m->nbody && g >= 0 && g < m->ngeom;
}

/* A contact record's numbers by the setters' rules: a finite position,
 * an orthonormal right-handed frame, friction >= 0, 0 <= restitution <= 1,
 * threshold >= 0, 0 <= erp <= 1, cfm >= 0 (tl_world_set_default_material,
 * tl_world_set_erp_cfm). NULL if it obeys them, else what is wrong. */
static const char *contact_numbers_bad(const double *f) {
  for (int i = 0; i < 26; i++)
    if (!isfinite(f[i])) return "a number is not finite";
  const double *F = f + 3;
  double dev = 0;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double d = F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a == b);
      dev = fmax(dev, fabs(d));
    }
  if (!(dev <= 1e-6)) return "its frame is not orthonormal";
  double det = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) + F[2] * (F[3] * F[7] - F[4] * F[6]);
  if (!(det > 0)) return "its frame is not right-handed";
  if (!(f[13] >= 0)) return "its friction is negative";
  if (!(f[14] >= 0 && f[14] <= 1)) return "its restitution is outside [0, 1]";
  if (!(f[15] >= 0)) return "its restitution threshold is negative";
  if (!(f[17] >= 0)) return "its cfm is negative";
  if (!(f[18] >= 0 && f[18] <= 1)) return "its erp is outside [0, 1]";
  return NULL;
}

/* 1 if the contact records at a and b name the same geoms at the same point (a duplicate). */
static int same_contact(const unsigned char *a, const unsigned char *b) {
  if (memcmp(a, b, 6 * 4) != 0) return 0;
  double pa[3], pb[3];
  memcpy(pa, a + 24, sizeof pa);
  memcpy(pb, b + 24, sizeof pb);
  return pa[0] == pb[0] && pa[1] == pb[1] && pa[2] == pb[2];
}

/* Check the contacts' records: indices in range, numbers by the setters' rules, no record twice
 * (pairwise over the buffer: a restore allocates nothing, and contacts are few). */
static tl_status snap_check(const tl_world *w, const unsigned char **p, const unsigned char *end, int n,
                            tl_error *err) {
  const unsigned char *first = *p;
  for (int i = 0; i < n; i++) {
    int id[6];
    for (int k = 0; k < 6; k++)
      if (get_i32(p, end, &id[k]))
        return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "%s", "truncated contact records");
    if ((size_t)(end - *p) < 29 * sizeof(double))
      return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "%s", "truncated contact records");
    double f[29];
    memcpy(f, *p, sizeof f);
    *p += sizeof f;
    if (!geom_ok(w, id[0], id[1], id[2]) || id[0] < 0 || !geom_ok(w, id[3], id[4], id[5]))
      return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot",
                          "contact %d names a geom this world does not have: the snapshot comes from another world", i);
    const char *why = contact_numbers_bad(f);
    if (why) return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "contact %d: %s", i, why);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (same_contact(first + (size_t)i * SNAP_CONTACT, first + (size_t)j * SNAP_CONTACT))
        return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot",
                            "contacts %d and %d are the same contact recorded twice (the same geoms at the same "
                            "point)", j, i);
  if ((size_t)(end - *p) < SNAP_LOOP * (size_t)w->nconstraint)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "%s", "truncated loop-constraint records");
  for (int k = 0; k < w->nconstraint; k++) {
    double f[TL_CGEOM_ROWS + 6];
    memcpy(f, *p, sizeof f);
    *p += sizeof f;
    for (int i = 0; i < TL_CGEOM_ROWS + 6; i++)
      if (!isfinite(f[i]))
        return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "snapshot", "loop constraint %d ('%s'): a number is not finite",
                            k, w->constraints[k].name);
  }
  return TL_OK;
}

static void apply_contact(const unsigned char **p, tl_wcontact *c) {
  int id[6];
  for (int k = 0; k < 6; k++) {
    int32_t x;
    memcpy(&x, *p, 4);
    *p += 4;
    id[k] = x;
  }
  double f[29];
  memcpy(f, *p, sizeof f);
  *p += sizeof f;
  memset(c, 0, sizeof *c);
  c->sa = id[0], c->ba = id[1], c->ga = id[2], c->sb = id[3], c->bb = id[4], c->gb = id[5];
  memcpy(c->pos, f, 3 * sizeof(double));
  memcpy(c->frame, f + 3, 9 * sizeof(double));
  c->depth = f[12], c->mu = f[13], c->restitution = f[14], c->threshold = f[15];
  c->vtarget = f[16], c->cfm = f[17], c->erp = f[18];
  memcpy(c->lambda, f + 19, 3 * sizeof(double));
  memcpy(c->impact, f + 22, 3 * sizeof(double));
  c->vn_pre = f[25];
}

/* n checked records (n <= cap_contact) become the last step's contacts; no
 * previous contacts are kept (the next step warm-starts from these). */
static void snap_apply(tl_world *w, const unsigned char *p, int n) {
  tl_native *nat = tl_native_of(w);
  nat->ncontact = n;
  for (int i = 0; i < n; i++) apply_contact(&p, &nat->contacts[i]);
  nat->nprev = 0;
  for (int k = 0; k < w->nconstraint; k++) {
    memcpy(nat->loop_lambda + (size_t)k * TL_CGEOM_ROWS, p, TL_CGEOM_ROWS * sizeof(double));
    p += TL_CGEOM_ROWS * sizeof(double);
    memcpy(w->constraints[k].force, p, 3 * sizeof(double));
    p += 3 * sizeof(double);
    memcpy(w->constraints[k].torque, p, 3 * sizeof(double));
    p += 3 * sizeof(double);
  }
}

const tl_world_snapshot_hooks tl_native_snapshot_hooks = {
    .bytes = snap_bytes,
    .bytes_max = snap_bytes_max,
    .count = snap_count,
    .ngeom = snap_ngeom,
    .capacity = snap_capacity,
    .put = snap_put,
    .check = snap_check,
    .apply = snap_apply,
};
