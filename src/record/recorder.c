/* The recorder: options, creation, frames (talus/record.h).
 * A frame reads the world through the public API only: body poses, centres
 * of mass, energies, the main system's state and applied forces, contacts. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "math/tl_math.h"
#include "record/record_internal.h"

#define TL_REC_DEFAULT_FPS 60.0
#define TL_REC_DEFAULT_MAX_TRI 60000
#define TL_REC_CONTACTS_PER_FRAME 16

tl_recorder_options tl_recorder_options_default(void) {
  tl_recorder_options o;
  memset(&o, 0, sizeof(o));
  o.fps = TL_REC_DEFAULT_FPS;
  o.every = 0;
  o.main_system = -1;
  o.max_mesh_triangles = TL_REC_DEFAULT_MAX_TRI;
  o.reserve_frames = 0;
  o.keep_frames = 1;
  o.title = NULL;
  return o;
}

void tl_record_options_default(tl_recorder_options *opt) {
  if (opt) *opt = tl_recorder_options_default();
}

void tl_rec_warn(tl_recorder *rec, const char *fmt, ...) {
  if (rec->nwarn >= TL_REC_MAX_WARNINGS) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char *s = strdup(buf);
  if (s) rec->warn[rec->nwarn++] = s;
}

static tl_status check_options(const tl_world *world, const tl_recorder_options *o, tl_error *err) {
  if (!(o->fps >= 0) || !isfinite(o->fps))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "fps", "fps is %g: expected a finite number >= 0", o->fps);
  if (o->every < 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "every", "every is %d: expected >= 0", o->every);
  int n = tl_world_nsystem(world);
  if (o->main_system < -1 || o->main_system >= n)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "main_system",
                        "main_system is %d: the world has %d systems (-1: the first with joints)",
                        o->main_system, n);
  if (o->max_mesh_triangles < 4)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "max_mesh_triangles",
                        "max_mesh_triangles is %d: expected at least 4", o->max_mesh_triangles);
  if (o->reserve_frames < 0 || o->reserve_frames > (1LL << 40))
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "reserve_frames",
                        "reserve_frames is %lld: expected 0 .. 2^40", o->reserve_frames);
  return TL_OK;
}

/* Coordinates and DOFs of a system's root joint (floating: 7 / 6, fixed: 0 / 0). */
static void base_dims(const tl_model *m, int *nq, int *nv) {
  tl_joint_type t = tl_model_joint_type(m, 0);
  *nq = tl_joint_nq(t);
  *nv = tl_joint_nv(t);
}

/* The first system with joints beyond its base, else system 0, else -1. */
static int pick_main(tl_world *w) {
  int n = tl_world_nsystem(w);
  for (int i = 0; i < n; ++i) {
    const tl_model *m = tl_system_model(tl_world_system(w, i));
    int bq, bv;
    base_dims(m, &bq, &bv);
    if (tl_model_nv(m) > bv) return i;
  }
  return n > 0 ? 0 : -1;
}

/* Offsets of every part of a frame: time, poses, centres of mass, energies, then the plotted
 * series of each system in world order (base velocity, joint coordinates, joint forces, body
 * contact forces), so that the plots can follow any system; the main system's series are also
 * the layout's base_vel .. body_fn (a world of one system keeps the layout it always had). */
static void layout(tl_recorder *r) {
  tl_rec_layout *L = &r->L;
  memset(L, 0, sizeof(*L));
  int nbody = r->body0[r->nsys];
  int k = 0;
  L->time = k++;
  L->poses = k, k += 7 * nbody;
  L->com = k, k += 3 * r->nsys;
  L->energy = k, k += 2;
  for (int s = 0; s < r->nsys; ++s) {
    const tl_model *m = tl_system_model(tl_world_system(r->world, s));
    tl_rec_sys_plot *P = &r->plot[s];
    base_dims(m, &P->q0, &P->v0);
    P->njq = tl_model_nq(m) - P->q0;
    P->njv = tl_model_nv(m) - P->v0;
    P->nbm = tl_model_nbody(m);
    P->base_vel = k, k += 3;
    P->joint_q = k, k += P->njq;
    P->joint_tau = k, k += P->njv;
    P->body_fn = k, k += P->nbm;
  }
  L->base_vel = L->joint_q = L->joint_tau = L->body_fn = -1;
  if (r->main >= 0) {
    const tl_rec_sys_plot *P = &r->plot[r->main];
    r->q0 = P->q0, r->v0 = P->v0;
    L->njq = P->njq, L->njv = P->njv, L->nbm = P->nbm;
    L->base_vel = P->base_vel, L->joint_q = P->joint_q, L->joint_tau = P->joint_tau, L->body_fn = P->body_fn;
  }
  L->floats = k;
}

/* Grow the frame buffers for one more frame with `nc` contacts. */
static int reserve(tl_recorder *r, long long frames, long long contacts) {
  int F = r->L.floats;
  if (frames > r->cap_frame) {
    long long cap = r->cap_frame ? r->cap_frame : 64;
    while (cap < frames) cap *= 2;
    float *f = realloc(r->frames, (size_t)cap * (size_t)F * sizeof(float));
    if (!f) return -1;
    r->frames = f;
    uint32_t *cs = realloc(r->cstart, (size_t)(cap + 1) * sizeof(uint32_t));
    if (!cs) return -1;
    r->cstart = cs;
    r->cap_frame = cap;
  }
  if (contacts > r->cap_contact) {
    if (contacts > (long long)UINT32_MAX) return -1;
    long long cap = r->cap_contact ? r->cap_contact : 256;
    while (cap < contacts) cap *= 2;
    float *c = realloc(r->contacts, (size_t)cap * TL_REC_CONTACT_FLOATS * sizeof(float));
    if (!c) return -1;
    r->contacts = c;
    r->cap_contact = cap;
  }
  return 0;
}

static tl_status check_world(const tl_recorder *r, tl_error *err) {
  if (tl_world_nsystem(r->world) != r->nsys || tl_world_nstatic(r->world) != r->nstatic)
    return tl_error_set(err, TL_ERR_INVALID, NULL, 0, "world",
                        "the world changed since the recorder was created (%d systems and %d static geoms "
                        "then, %d and %d now): create a new recorder",
                        r->nsys, r->nstatic, tl_world_nsystem(r->world), tl_world_nstatic(r->world));
  return TL_OK;
}

static void put_pose(float *f, const double pos[3], const double R[9]) {
  double q[4];
  tl_quat_from_m3(q, R);
  f[0] = (float)pos[0], f[1] = (float)pos[1], f[2] = (float)pos[2];
  f[3] = (float)q[1], f[4] = (float)q[2], f[5] = (float)q[3], f[6] = (float)q[0];
}

static void frame_bodies(tl_recorder *r, float *f) {
  double ke = 0, pe = 0;
  for (int s = 0; s < r->nsys; ++s) {
    tl_system *sys = tl_world_system(r->world, s);
    int nb = r->body0[s + 1] - r->body0[s];
    for (int b = 0; b < nb; ++b) {
      double pos[3], R[9];
      if (tl_system_body_pose(sys, b, pos, R, NULL) != TL_OK) pos[0] = pos[1] = pos[2] = NAN, tl_m3_identity(R);
      put_pose(f + r->L.poses + 7 * (r->body0[s] + b), pos, R);
    }
    double com[3] = {NAN, NAN, NAN};
    tl_system_com(sys, com, NULL);
    for (int i = 0; i < 3; ++i) f[r->L.com + 3 * s + i] = (float)com[i];
    ke += tl_system_kinetic_energy(sys);
    pe += tl_system_potential_energy(sys);
  }
  f[r->L.energy] = (float)ke;
  f[r->L.energy + 1] = (float)pe;
}

/* The plotted series of every system (base velocity, joint coordinates and forces; the body
 * contact forces are summed by frame_contacts). */
static void frame_plots(tl_recorder *r, float *f) {
  for (int s = 0; s < r->nsys; ++s) {
    tl_system *sys = tl_world_system(r->world, s);
    const tl_rec_sys_plot *P = &r->plot[s];
    int nq = tl_system_nq(sys), nv = tl_system_nv(sys);
    double pos[3], R[9], v[3] = {NAN, NAN, NAN};
    if (tl_system_body_pose(sys, 0, pos, R, NULL) == TL_OK) tl_system_point_velocity(sys, 0, pos, v, NULL, NULL);
    for (int i = 0; i < 3; ++i) f[P->base_vel + i] = (float)v[i];
    if (tl_system_get_state(sys, r->q, nq, r->u, nv, NULL) != TL_OK)
      for (int i = 0; i < nq; ++i) r->q[i] = NAN;
    if (tl_system_applied_generalized_force(sys, r->tau, nv, NULL) != TL_OK)
      for (int i = 0; i < nv; ++i) r->tau[i] = NAN;
    for (int i = 0; i < P->njq; ++i) f[P->joint_q + i] = (float)r->q[P->q0 + i];
    for (int i = 0; i < P->njv; ++i) f[P->joint_tau + i] = (float)r->tau[P->v0 + i];
    for (int i = 0; i < P->nbm; ++i) f[P->body_fn + i] = 0.0f;
  }
}

/* Add fn to the contact normal force of body b of system s (a static geom: s < 0). */
static void add_body_fn(const tl_recorder *r, float *f, int s, int b, double fn) {
  if (s < 0 || s >= r->nsys || b < 0 || b >= r->plot[s].nbm) return;
  f[r->plot[s].body_fn + b] += (float)fn;
}

/* Contacts of the last step into the contact buffer (room reserved). */
static void frame_contacts(tl_recorder *r, float *f, int n) {
  double dt = tl_world_timestep(r->world);
  float *out = r->contacts + r->ncontact * TL_REC_CONTACT_FLOATS;
  int kept = 0;
  for (int k = 0; k < n; ++k) {
    tl_contact_info c;
    if (tl_world_contact(r->world, k, &c, NULL) != TL_OK) continue;
    double force[3], fn = 0;
    for (int i = 0; i < 3; ++i) force[i] = c.impulse[i] / dt, fn += force[i] * c.normal[i];
    for (int i = 0; i < 3; ++i) {
      out[i] = (float)c.pos[i];
      out[3 + i] = (float)c.normal[i];
      out[6 + i] = (float)force[i];
    }
    out += TL_REC_CONTACT_FLOATS;
    ++kept;
    add_body_fn(r, f, c.system, c.body, fn);
    add_body_fn(r, f, c.other_system, c.other_body, fn);
  }
  r->ncontact += kept;
}

tl_status tl_recorder_capture(tl_recorder *r, tl_error *err) {
  if (!r) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rec", "rec must not be NULL");
  tl_status st = check_world(r, err);
  if (st) return st;
  if (!r->opt.keep_frames) r->nframe = 0, r->ncontact = 0;
  int n = tl_world_ncontact(r->world);
  if (reserve(r, r->nframe + 1, r->ncontact + n) != 0)
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory recording frame %lld", r->nframe);
  float *f = r->frames + r->nframe * r->L.floats;
  r->last_time = tl_world_time(r->world);
  f[r->L.time] = (float)r->last_time;
  frame_bodies(r, f);
  frame_plots(r, f);
  r->cstart[r->nframe] = (uint32_t)r->ncontact;
  frame_contacts(r, f, n);
  r->cstart[r->nframe + 1] = (uint32_t)r->ncontact;
  r->nframe++;
  r->taken++;
  return TL_OK;
}

/* Is a frame due at this update? Advances the schedule. */
static int due(tl_recorder *r) {
  r->nupdate++;
  if (r->opt.every > 0) return r->nupdate % r->opt.every == 0;
  if (r->opt.fps <= 0) return 1;
  double period = 1.0 / r->opt.fps;
  /* half a time step of slack: a frame at 1/60 s is taken by the step ending nearest to it */
  double ref = tl_world_time(r->world) + 0.5 * tl_world_timestep(r->world);
  if (ref < r->next_time) return 0;
  /* the first multiple of the period after ref, in one step (a loop adding a period smaller
   * than ref's last bit, e.g. fps 1e19, would never end); past it by a period at least */
  r->next_time = (floor(ref / period) + 1.0) * period;
  if (!(r->next_time > ref)) r->next_time = ref + period;
  return 1;
}

tl_status tl_recorder_update(tl_recorder *r, int *taken, tl_error *err) {
  if (taken) *taken = 0;
  if (!r) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rec", "rec must not be NULL");
  tl_status st = check_world(r, err);
  if (st) return st;
  if (!due(r)) return TL_OK;
  st = tl_recorder_capture(r, err);
  if (st == TL_OK && taken) *taken = 1;
  return st;
}

static tl_status create_fail(tl_recorder *r, tl_status st, tl_error *err) {
  tl_recorder_free(r);
  if (st == TL_ERR_MEMORY && err && !err->message[0])
    tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory creating the recorder");
  return st;
}

static tl_status alloc_parts(tl_recorder *r, const tl_recorder_options *o) {
  r->body0 = calloc((size_t)r->nsys + 1, sizeof(int));
  if (!r->body0) return TL_ERR_MEMORY;
  for (int s = 0; s < r->nsys; ++s)
    r->body0[s + 1] = r->body0[s] + tl_model_nbody(tl_system_model(tl_world_system(r->world, s)));
  r->main = o->main_system >= 0 ? o->main_system : pick_main(r->world);
  r->plot = calloc((size_t)r->nsys + 1, sizeof(*r->plot));
  if (!r->plot) return TL_ERR_MEMORY;
  layout(r);
  int nq = 0, nv = 0;
  for (int s = 0; s < r->nsys; ++s) {
    tl_system *sys = tl_world_system(r->world, s);
    if (tl_system_nq(sys) > nq) nq = tl_system_nq(sys);
    if (tl_system_nv(sys) > nv) nv = tl_system_nv(sys);
  }
  r->q = calloc((size_t)nq + 1, sizeof(double));
  r->u = calloc((size_t)nv + 1, sizeof(double));
  r->tau = calloc((size_t)nv + 1, sizeof(double));
  if (!r->q || !r->u || !r->tau) return TL_ERR_MEMORY;
  const char *title = o->title;
  if (!title) title = r->main >= 0 ? tl_model_name(tl_system_model(tl_world_system(r->world, r->main))) : "world";
  r->title = strdup(title ? title : "");
  if (!r->title) return TL_ERR_MEMORY;
  long long frames = o->keep_frames ? o->reserve_frames : 1;
  if (frames > 0 && reserve(r, frames, frames * TL_REC_CONTACTS_PER_FRAME) != 0) return TL_ERR_MEMORY;
  return TL_OK;
}

tl_status tl_recorder_create(tl_world *world, const tl_recorder_options *opt, tl_recorder **out, tl_error *err) {
  if (out) *out = NULL;
  if (!world || !out)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, world ? "out" : "world", "%s must not be NULL",
                        world ? "out" : "world");
  tl_recorder_options o;
  if (opt) o = *opt;
  else o = tl_recorder_options_default();
  tl_status st = check_options(world, &o, err);
  if (st) return st;
  tl_recorder *r = calloc(1, sizeof(*r));
  if (!r) return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory creating the recorder");
  r->world = world;
  r->opt = o;
  r->opt.title = NULL;
  r->nsys = tl_world_nsystem(world);
  r->nstatic = tl_world_nstatic(world);
  if ((st = alloc_parts(r, &o)) != TL_OK) return create_fail(r, st, err);
  if ((st = tl_rec_build_scene(r, err)) != TL_OK) return create_fail(r, st, err);
  r->next_time = tl_world_time(world);
  due(r); /* the schedule starts at the current time: frame 0 is taken now */
  r->nupdate = 0;
  if ((st = tl_recorder_capture(r, err)) != TL_OK) return create_fail(r, st, err);
  *out = r;
  return TL_OK;
}

void tl_recorder_free(tl_recorder *r) {
  if (!r) return;
  free(r->body0);
  free(r->plot);
  free(r->q);
  free(r->u);
  free(r->tau);
  free(r->title);
  free(r->scene);
  free(r->frames);
  free(r->cstart);
  free(r->contacts);
  for (int i = 0; i < r->nwarn; ++i) free(r->warn[i]);
  free(r->diverged);
  free(r);
}

tl_status tl_recorder_mark_diverged(tl_recorder *r, const char *message, tl_error *err) {
  if (!r) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "rec", "rec must not be NULL");
  char *copy = NULL;
  if (message && !(copy = strdup(message[0] ? message : "diverged")))
    return tl_error_set(err, TL_ERR_MEMORY, NULL, 0, NULL, "out of memory");
  free(r->diverged);
  r->diverged = copy;
  return TL_OK;
}

const char *tl_recorder_diverged(const tl_recorder *r) { return r ? r->diverged : NULL; }

int tl_rec_push_name(cJSON *arr, const char *name, const char *suffix) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s%s", name ? name : "", suffix ? suffix : "");
  cJSON *x = cJSON_CreateString(buf);
  if (!x || !cJSON_AddItemToArray(arr, x)) {
    cJSON_Delete(x);
    return -1;
  }
  return 0;
}

int tl_rec_series_names(const tl_model *m, cJSON *q_names, cJSON *tau_names, cJSON *body_names) {
  /* a suffix per coordinate of a multi-coordinate joint, by tl_joint_type */
  static const char *const suffix_q[7][4] = {
      {""}, {""}, {""}, {""}, {".w", ".x", ".y", ".z"}, {".1", ".2"}, {".x", ".y", ".th"}};
  static const char *const suffix_v[7][3] = {
      {""}, {""}, {""}, {""}, {".x", ".y", ".z"}, {".1", ".2"}, {".x", ".y", ".th"}};
  for (int b = 0; b < tl_model_nbody(m); ++b) {
    tl_joint_type t = tl_model_joint_type(m, b);
    const char *name = tl_model_joint_name(m, b);
    if (b > 0 && (int)t >= 0 && (int)t < 7) {
      for (int k = 0; k < tl_joint_nq(t); ++k)
        if (tl_rec_push_name(q_names, name, suffix_q[t][k])) return -1;
      for (int k = 0; k < tl_joint_nv(t); ++k)
        if (tl_rec_push_name(tau_names, name, suffix_v[t][k])) return -1;
    }
    if (tl_rec_push_name(body_names, tl_model_body_name(m, b), NULL)) return -1;
  }
  return 0;
}

static int add_int(cJSON *o, const char *key, int v) { return cJSON_AddNumberToObject(o, key, v) ? 0 : -1; }

static int plot_system(const tl_recorder *r, int s, cJSON *o) {
  const tl_model *m = tl_system_model(tl_world_system(r->world, s));
  const tl_rec_sys_plot *P = &r->plot[s];
  if (add_int(o, "system", s) || add_int(o, "base_vel", P->base_vel) || add_int(o, "joint_q", P->joint_q) ||
      add_int(o, "joint_tau", P->joint_tau) || add_int(o, "body_fn", P->body_fn) || add_int(o, "njq", P->njq) ||
      add_int(o, "njv", P->njv) || add_int(o, "nbm", P->nbm))
    return -1;
  cJSON *pq = cJSON_AddArrayToObject(o, "joint_q_names");
  cJSON *pt = cJSON_AddArrayToObject(o, "joint_tau_names");
  cJSON *pb = cJSON_AddArrayToObject(o, "body_names");
  if (!pq || !pt || !pb) return -1;
  return tl_rec_series_names(m, pq, pt, pb);
}

int tl_rec_add_plot_systems(const tl_recorder *r, cJSON *root) {
  cJSON *arr = cJSON_AddArrayToObject(root, "plot_systems");
  if (!arr) return -1;
  for (int s = 0; s < r->nsys; ++s) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
      cJSON_Delete(o);
      return -1;
    }
    if (plot_system(r, s, o)) return -1;
  }
  return 0;
}

long long tl_recorder_nframe(const tl_recorder *r) { return r ? r->nframe : 0; }
long long tl_recorder_frames_taken(const tl_recorder *r) { return r ? r->taken : 0; }
double tl_recorder_time(const tl_recorder *r) { return r && r->taken > 0 ? r->last_time : NAN; }
int tl_recorder_main_system(const tl_recorder *r) { return r ? r->main : -1; }
int tl_recorder_nwarning(const tl_recorder *r) { return r ? r->nwarn : 0; }
const char *tl_recorder_warning(const tl_recorder *r, int i) {
  return r && i >= 0 && i < r->nwarn ? r->warn[i] : NULL;
}

const float *tl_rec_latest(const tl_recorder *r, const float **contacts, int *ncontact) {
  if (!r || r->nframe == 0) {
    if (contacts) *contacts = NULL;
    if (ncontact) *ncontact = 0;
    return NULL;
  }
  long long k = r->nframe - 1;
  if (contacts) *contacts = r->contacts + (size_t)r->cstart[k] * TL_REC_CONTACT_FLOATS;
  if (ncontact) *ncontact = (int)(r->cstart[k + 1] - r->cstart[k]);
  return r->frames + k * r->L.floats;
}
